#!/bin/bash
# Integration tests of what rant writes: its own descriptors (closed fds 0-2),
# checked writes (/dev/full, a closed pipe, a file-size limit standing in for
# a full disk), FIFOs and devices refused, odd bytes in paths, --analyze
# against the live JSON field by field for several run shapes, the -d + 200 ms
# bound whatever the reflector does, and RANT_TEST_START after warm-up.
#
#   sudo bash tests/net-outputs.sh        (RANT=path overrides the binary)

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

# The -d bound's check allows this much on top of -d + 200 ms: start-up,
# the report, and a loaded 2-core machine (README: Tests); the runs give
# each pong 20 s (--timeout), so a client that waits for one takes longer.
: "${SLACK_MS:=5000}"
TFS=
INST="rant_o$$"

PY_PRELUDE='
import json, sys
PCT = ["50", "90", "95", "99", "99.9", "99.99", "99.999"]
def same(label, live, ana, fields=("sent", "received", "lost", "late", "warmup"), metrics=None, unknown=()):
    """metrics: the ones the log can hold (a text emit log has no server stamps);
    unknown: the stamps it has no column for, missing_stamps null in the analysis"""
    bad = []
    for k in fields:
        if live["packets"][k] != ana["packets"][k]:
            bad.append("packets.%s %s != %s" % (k, live["packets"][k], ana["packets"][k]))
    # what a log cannot know is unknown (null), never a 0 that looks measured
    for k in ("duplicate", "invalid", "interval_overruns"):
        if ana["packets"][k] is not None:
            bad.append("packets.%s is %s in the analysis, not null" % (k, ana["packets"][k]))
    for m, a in live["metrics"].items():
        if metrics is not None and m not in metrics:
            continue
        b = ana["metrics"].get(m)
        if b is None:
            bad.append("metric %s missing" % m)
            continue
        for k in ("samples", "min_ns", "max_ns", "min_seq", "max_seq", "percentiles_ns"):
            if a[k] != b[k]:
                bad.append("%s.%s %s != %s" % (m, k, a[k], b[k]))
        for k in ("avg_ns", "stddev_ns"):
            if abs(a[k] - b[k]) > 1:
                bad.append("%s.%s %s != %s" % (m, k, a[k], b[k]))
    for m in ana["metrics"]:
        if m not in live["metrics"]:
            bad.append("metric %s only in the analysis" % m)
    nulls = sorted(k for k, v in ana["missing_stamps"].items() if v is None)
    if nulls != sorted(unknown):
        bad.append("missing_stamps null for %s, not for %s" % (nulls, sorted(unknown)))
    known = lambda m: {k: v for k, v in m.items() if k not in unknown}
    if known(live["missing_stamps"]) != known(ana["missing_stamps"]):
        bad.append("missing_stamps %s != %s" % (live["missing_stamps"], ana["missing_stamps"]))
    for k in ("offset_ns", "stepped_transactions"):
        if metrics is None and live["clock"][k] != ana["clock"][k]:
            bad.append("clock.%s %s != %s" % (k, live["clock"][k], ana["clock"][k]))
    t(label + ": --analyze JSON equals the live JSON field by field", not bad, "; ".join(bad[:6]))
'

ms_now() {
	echo $(($(now_us) / 1000))
}

# next_client: the reflector SHARED_REFLECTOR has closed the sessions of
# the clients before (remit, tests/lib.sh), this one will have one more
next_client() {
	shared_settle
	SHARED_SESSIONS=$((SHARED_SESSIONS + 1))
}

# ------------------------------------------------------------ descriptors

test_fds() {
	reflector fds --port 12400 --once -q --json "$WORK/fds-r.json"
	# stderr closed: the socket would be fd 2 and carry the status lines
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --port 12400 -d 2.5 --interval 1000 --status \
		>"$WORK/fds.out" 2>&-
	EMIT_RC=$?
	expect_eq "closed fd 2: the client exits 0" "$EMIT_RC" 0
	wait_reflector
	expect_eq "closed fd 2: the reflector got no status line as a datagram (invalid 0)" \
		"$(json_get "$WORK/fds-r.json" packets.invalid 2>/dev/null)" 0
	check "closed fd 2: the report is on stdout" grep -q '^Test is complete' "$WORK/fds.out"
	# stdin closed too, with a log: the log must be the file, not the socket
	reflector fds0 --port 12401 --once -q
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --port 12401 --count 100 -q \
		-l "$WORK/fds0.log" <&- >&- 2>&-
	EMIT_RC=$?
	expect_eq "closed fds 0-2: exit 0" "$EMIT_RC" 0
	expect_eq "closed fds 0-2: the log holds its 100 rows" "$(($(wc -l <"$WORK/fds0.log") - 2))" 100
	wait_reflector
}

# ---------------------------------------------------------- checked writes

test_writes() {
	local rc
	reflector wr --port 12402 -q
	SHARED_REFLECTOR=wr SHARED_SESSIONS=0
	next_client
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --port 12402 --count 200 -q >/dev/full 2>"$WORK/full.err"
	rc=$?
	expect_eq "report to /dev/full: exit 1" "$rc" 1
	check "report to /dev/full: one line naming stdout and the error" \
		grep -qx 'rant: stdout: writing the report failed: No space left on device' "$WORK/full.err"
	next_client
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --port 12402 --count 200 -q --json - \
		>/dev/full 2>"$WORK/fullj.err"
	rc=$?
	expect_eq "--json - to /dev/full: exit 1" "$rc" 1
	check "--json - to /dev/full: one line naming it; the text report still went to stderr" \
		bash -c "grep -qx 'rant: --json: writing to stdout failed: No space left on device' '$WORK/fullj.err' &&
			grep -q '^Test is complete' '$WORK/fullj.err'"
	next_client
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --port 12402 --count 200 -q 2>"$WORK/pipe.err" |
		true
	rc=${PIPESTATUS[0]}
	expect_eq "report to a closed pipe: exit 1 (not killed by SIGPIPE)" "$rc" 1
	check "report to a closed pipe: one line saying so" \
		grep -qx 'rant: stdout: writing the report failed: Broken pipe' "$WORK/pipe.err"
	# a full disk, as a file-size limit: writes past 4 KiB fail with EFBIG
	# (SIGXFSZ left at its default: rant ignores it itself, test_limits)
	next_client
	fsize_client 4 12402 big
	rc=$?
	expect_eq "full disk: exit 1" "$rc" 1
	check "full disk: the log's failure names the file and the error" \
		grep -qx "rant: --log: writing $WORK/big.log failed: File too large" "$WORK/big.err"
	check "full disk: the report says the log is incomplete, never 'records kept'" \
		bash -c "grep -q '^Log: INCOMPLETE: writing $WORK/big.log failed (File too large)' '$WORK/big.out' &&
			! grep -q 'records kept' '$WORK/big.out'"
	check "full disk: the report itself was still written" grep -q '^Packets: sent 2000 ' "$WORK/big.out"
	kill "$REFLECTOR_PID" 2>/dev/null
	wait "$REFLECTOR_PID" 2>/dev/null
}

# fsize_client KIB PORT NAME: a client of 2000 pings under `ulimit -f KIB`
# (SIGXFSZ at its default), its log NAME.log, JSON NAME.json, output
# NAME.out and NAME.err; its exit status
fsize_client() {
	(
		ulimit -f "$1"
		ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --port "$2" --count 2000 -q \
			-l "$WORK/$3.log" --json "$WORK/$3.json" >"$WORK/$3.out" 2>"$WORK/$3.err"
	)
}

# Limits fail an output, never kill: RLIMIT_FSIZE with SIGXFSZ's default
# action (it kills the process unless ignored; 64 KiB: room for the JSON,
# not for 2000 log rows), and an unprivileged run at
# the usual lock limit whose outputs are allocated after measuring.
test_limits() {
	local rc lk
	(
		ulimit -f 64
		reflector lim-r --port 12409 -q -l "$WORK/lim-r.log"
		echo "$REFLECTOR_PID" >"$WORK/lim-r.pid"
	)
	REFLECTOR_PID=$(cat "$WORK/lim-r.pid")
	BG_PIDS+=("$REFLECTOR_PID")
	fsize_client 64 12409 lim
	rc=$?
	expect_eq "ulimit -f, SIGXFSZ not ignored by the caller: exit 1, not killed" "$rc" 1
	check "ulimit -f: one line names the log and EFBIG; the JSON still written whole" \
		bash -c "grep -qx 'rant: --log: writing $WORK/lim.log failed: File too large' '$WORK/lim.err' &&
			python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '$WORK/lim.json'"
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --port 12409 --count 200 -q \
		--json "$WORK/lim2.json" >/dev/null 2>"$WORK/lim2.err"
	rc=$?
	expect_eq "ulimit -f: the reflector whose log failed serves the next client (exit 0)" "$rc" 0
	# the reflector says a session's log failure when it closes the session,
	# which may be after the client has exited: wait for the second line
	wait_for 20 bash -c "[ \$(grep -c 'writing $WORK/lim-r.log failed: File too large' '$WORK/lim-r.err') -ge 2 ]"
	check "ulimit -f: the reflector is alive, its log's failure said for each session" \
		bash -c "kill -0 $REFLECTOR_PID && [ \$(grep -c 'writing $WORK/lim-r.log failed: File too large' '$WORK/lim-r.err') -ge 2 ]"
	kill "$REFLECTOR_PID" 2>/dev/null
	wait "$REFLECTOR_PID" 2>/dev/null

	# unprivileged, 8 MiB of locked memory: mlockall succeeds for the run,
	# and the plot allocated after it must still be drawn
	if ! id nobody >/dev/null 2>&1 || ! command -v setpriv >/dev/null; then
		skip "memlock: no user nobody or no setpriv"
		return
	fi
	# a directory nobody can write to ($WORK is root's alone)
	lk=$(mktemp -d "${TMPDIR:-/tmp}/rant-lk.XXXXXX")
	chmod 777 "$lk"
	reflector lk --port 12410 --once -q
	ip netns exec "$NS_A" setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		prlimit --memlock=8388608 "$RANT" -i "$VETH_A" -a "$ADDR_B" --port 12410 --count 300 \
		--cpu-latency off -v --plot "$lk/p.svg" >"$WORK/lk.out" 2>"$WORK/lk.err"
	rc=$?
	wait_reflector
	expect_eq "memlock 8 MiB, unprivileged, --plot: exit 0" "$rc" 0
	check "memlock 8 MiB: the plot drawn after the run" grep -q '</svg>' "$lk/p.svg"
	if [[ -n ${ASAN_OPTIONS:-} ]]; then
		# AddressSanitizer's shadow memory is never locked: rant skips mlockall there
		skip "memlock 8 MiB: a sanitizer build locks no memory"
	else
		check "memlock 8 MiB: memory was locked for the run" grep -q 'mlockall successful' "$WORK/lk.err"
	fi
	rm -rf "$lk"
}

# Each output fails alone (a small tmpfs stands in for a full disk): a plot
# that cannot be written leaves the histfile written; a reflector's JSON
# Lines stream whose write failed in one session writes the next session's
# line whole, on a line of its own, and reports no failure for it.
test_fail_alone() {
	local rc fs=$WORK/full
	mkdir -p "$fs"
	if ! mount -t tmpfs -o size=64k tmpfs "$fs" 2>/dev/null; then
		skip "one output fails alone: cannot mount a tmpfs"
		return
	fi
	reflector fa-r --port 12411 --json "$fs/r.jsonl"
	SHARED_REFLECTOR=fa-r SHARED_SESSIONS=0
	# the disk full but for 2 KiB: the plot cannot be written, nor the session's JSON line
	head -c $((62 * 1024)) /dev/zero >"$fs/filler" 2>/dev/null
	next_client
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --port 12411 --count 500 -q \
		--plot "$fs/p.svg" --histfile "$WORK/fa.hist" --json "$WORK/fa.json" >"$WORK/fa.out" 2>"$WORK/fa.err"
	rc=$?
	expect_eq "full disk for the plot: exit 1" "$rc" 1
	check "full disk for the plot: its failure named; the histfile and the JSON written all the same" \
		bash -c "grep -q 'rant: --plot: writing $fs/p.svg failed: No space left on device' '$WORK/fa.err' &&
			grep -q '^# rant' '$WORK/fa.hist' && [ \$(grep -vc '^#' '$WORK/fa.hist') -gt 0 ] &&
			python3 -c 'import json,sys; json.load(open(sys.argv[1]))' '$WORK/fa.json'"
	rm -f "$fs/filler" "$fs/p.svg"
	next_client
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --port 12411 --count 300 -q >/dev/null 2>&1
	next_client
	kill -INT "$REFLECTOR_PID" 2>/dev/null
	wait "$REFLECTOR_PID" 2>/dev/null
	check "the reflector's JSON failed once: said once, for the first session only" \
		bash -c "[ \$(grep -c 'rant: --json: writing $fs/r.jsonl failed' '$WORK/fa-r.err') -eq 1 ] &&
			grep -q 'rant: --json: writing $fs/r.jsonl failed: No space left on device' '$WORK/fa-r.err'"
	check "the next session's JSON line whole, on a line of its own (the cut one before it stands alone)" \
		python3 -c '
import json, sys
lines = open(sys.argv[1]).read().split("\n")
good = [l for l in lines if l.startswith("{") and l.endswith("}")]
ok = len(good) == 1 and json.loads(good[0])["packets"]["received"] == 300
sys.exit(0 if ok else 1)' "$fs/r.jsonl"
	umount "$fs"
}

# ------------------------------------------------- FIFOs, devices, dirs

test_refused() {
	local rc opt
	reflector ref --port 12403 --once -q
	mkfifo "$WORK/fifo"
	for opt in --log --json; do
		timeout 10 ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --port 12403 --count 10 -q \
			"$opt" "$WORK/fifo" >"$WORK/fifo.out" 2>"$WORK/fifo.err"
		rc=$?
		expect_eq "$opt FIFO: exit 2 at once (no block)" "$rc" 2
		check "$opt FIFO: the message names the option and says FIFO" grep -q "^rant: $opt: .* is a FIFO" "$WORK/fifo.err"
	done
	timeout 10 ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --port 12403 --count 10 -q \
		--json /dev/null 2>"$WORK/dev.err"
	expect_eq "--json /dev/null (a device): exit 2" "$?" 2
	timeout 10 ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --port 12403 --count 10 -q \
		-l "$WORK" 2>"$WORK/dir.err"
	expect_eq "--log DIR: exit 2" "$?" 2
	check "refused outputs: nothing was sent (the reflector saw no session)" \
		bash -c "! grep -q . '$WORK/ref.out'"
	timeout 10 "$RANT" --analyze "$WORK/fifo" >/dev/null 2>"$WORK/afifo.err"
	expect_eq "--analyze FIFO: exit 2 at once (no block)" "$?" 2
	timeout 10 "$RANT" --analyze /dev/zero >/dev/null 2>"$WORK/adev.err"
	expect_eq "--analyze /dev/zero: exit 2 at once" "$?" 2
	kill "$REFLECTOR_PID" 2>/dev/null
	wait "$REFLECTOR_PID" 2>/dev/null
}

# ------------------------------------------------------ odd bytes in paths

test_paths() {
	local log json tlog
	log="$WORK/"$'we,ird\nlog \xff\xc0.csv'
	tlog="$WORK/"$'text\nlog,\xfe.log'
	json="$WORK/"$'j\xfe\n"\\\xc3\xa9.json'
	reflector paths-r --port 12404 -q
	SHARED_REFLECTOR=paths-r SHARED_SESSIONS=0
	remit paths --port 12404 --count 300 -w 5 -q -l "$log" --log-format csv --json "$json"
	expect_rc "odd paths (csv)" 0
	py_checks "odd paths" '
import os
d = sys.argv[1].encode("utf-8", "surrogateescape")
j = [f for f in os.listdir(d) if f.startswith(b"j\xfe")]
try:
    v = load(os.path.join(d, j[0]))
    ok = True
except Exception as e:
    ok, v = False, str(e)
t("JSON with non-UTF-8 bytes in its paths is valid JSON", ok, v)
if ok:
    raw = open(os.path.join(d, j[0]), "rb").read()
    want = b"we,ird\\u000alog \\u00ff\\u00c0.csv\""
    t("the log path is in the JSON text with each odd byte as \\u00XX", want in raw, raw[raw.find(b"\"file\""):][:120])
' "$WORK"
	analyze paths-a "$log"
	expect_eq "--analyze reads the csv log whose path has a newline, a comma and non-UTF-8 bytes" "$ANALYZE_RC" 0
	remit tpaths --port 12404 --count 100 -q -l "$tlog"
	analyze tpaths-a "$tlog"
	expect_eq "--analyze reads the text log whose path has a newline, a comma and non-UTF-8 bytes" "$ANALYZE_RC" 0
	kill "$REFLECTOR_PID" 2>/dev/null
	wait "$REFLECTOR_PID" 2>/dev/null
}

# ------------------------------------------------ live against --analyze

test_live_vs_analyze() {
	local pid
	# back-to-back with warm-up, csv, both sides
	reflector lv1-refl --port 12405 --once -q -l "$WORK/lv1-r.csv" --log-format csv --json "$WORK/lv1-r.json"
	emit lv1 --port 12405 --count 3000 -w 50 -q -l "$WORK/lv1-e.csv" --log-format csv --json "$WORK/lv1-e.json"
	expect_rc "live/analyze b2b" 0
	wait_reflector
	expect_eq "live/analyze b2b: the reflector exits 0" "$REFLECTOR_RC" 0
	analyze lv1-e "$WORK/lv1-e.csv" --json "$WORK/lv1-ea.json"
	analyze lv1-r "$WORK/lv1-r.csv" --json "$WORK/lv1-ra.json"
	analyze lv1-j "$WORK/lv1-e.csv" --analyze "$WORK/lv1-r.csv" --json "$WORK/lv1-ja.json"
	expect_eq "--analyze E --analyze R joins (exit 0)" "$ANALYZE_RC" 0
	py_checks "b2b -w 50" '
same("emit", load(sys.argv[1]), load(sys.argv[2]))
same("reflect", load(sys.argv[3]), load(sys.argv[4]), ("sent", "received", "lost", "late", "warmup"))
same("emit joined with reflect", load(sys.argv[1]), load(sys.argv[5]))
e, j = load(sys.argv[1]), load(sys.argv[5])
t("joined logs: loss by direction as the live run split it", j["loss_by_direction"] is not None and
  all(e["loss_by_direction"][k] == j["loss_by_direction"][k] for k in ("out", "back", "reflector_answered")),
  (e["loss_by_direction"], j["loss_by_direction"]))
t("one log: loss by direction unknown", load(sys.argv[2])["loss_by_direction"] is None)
# a csv log opens as a table with no option: the column line first, the facts last
import csv
for side, path in (("emit", sys.argv[6]), ("reflect", sys.argv[7])):
    r = list(csv.DictReader(open(path)))
    t(side + " csv log: csv.DictReader takes the column line as its keys",
      list(r[0])[:2] == ["seq", "status"] and r[0]["seq"].isdigit(), list(r[0])[:4])
    t(side + " csv log: every row but the last is a transaction, the last the # rant facts line",
      all(x["seq"].isdigit() for x in r[:-1]) and r[-1]["seq"].startswith("# rant ") and
      " records=%d " % (len(r) - 1) in r[-1]["seq"], r[-1]["seq"][:80])
' "$WORK/lv1-e.json" "$WORK/lv1-ea.json" "$WORK/lv1-r.json" "$WORK/lv1-ra.json" "$WORK/lv1-ja.json" \
		"$WORK/lv1-e.csv" "$WORK/lv1-r.csv"
	check "the report's Log: line counts the rows the file holds" \
		bash -c "grep -qx 'Log: 3050 records kept, 0 dropped (ring of 3050)' '$WORK/lv1.out' &&
			[ \$(grep -c '^[0-9]' '$WORK/lv1-e.csv') = 3050 ]"

	# interval mode, text log with warm-up: the file and the Log: line agree
	reflector lv2-refl --port 12406 --once -q -l "$WORK/lv2-r.log" --json "$WORK/lv2-r.json"
	emit lv2 --port 12406 --interval 500 -d 1 -w 20 -q -l "$WORK/lv2-e.log" --json "$WORK/lv2-e.json"
	expect_rc "live/analyze interval" 0
	wait_reflector
	analyze lv2-e "$WORK/lv2-e.log" --json "$WORK/lv2-ea.json"
	analyze lv2-r "$WORK/lv2-r.log" --json "$WORK/lv2-ra.json"
	py_checks "interval, text logs" '
# a text log holds the stamps of its own side (the app ones with -s only): whether
# the others came is not known (a pong without the T3 of the reflector is counted
# live, where the TX stamp of a loaded reflector comes too late for its next pong)
same("emit", load(sys.argv[1]), load(sys.argv[2]), ("lost", "late"), ("rtt",),
     ("T1_SW", "T2_KSW", "T2_SW", "T3_SW", "T3_KSW", "T4_SW"))
t("a text log has no warm-up rows: warm-up unknown", load(sys.argv[2])["packets"]["warmup"] is None)
same("reflect", load(sys.argv[3]), load(sys.argv[4]), ("lost", "late"), None, ("T2_SW", "T3_SW"))
' "$WORK/lv2-e.json" "$WORK/lv2-ea.json" "$WORK/lv2-r.json" "$WORK/lv2-ra.json"
	check "text log with warm-up: Log: line = rows in the file, warm-up named" \
		bash -c "n=\$((\$(wc -l <'$WORK/lv2-e.log') - 2)); grep -Eq \"^Log: \$n records kept, .*, 20 warm-up not in the text log\$\" '$WORK/lv2.out'"

	# a restarted reflector: the second one joins mid-session (a partial
	# session); the client runs until it has answered 100 pings
	reflector lv3a --port 12407 -q
	pid=$REFLECTOR_PID
	emit_bg lv3 --port 12407 --interval 1000 -d 600 -q -l "$WORK/lv3-e.csv" --log-format csv --json "$WORK/lv3-e.json"
	udp_wait "$NS_B" OutDatagrams 100
	{
		kill -9 "$pid"
		wait "$pid"
	} 2>/dev/null
	# 20 pings with nobody there
	udp_wait "$NS_A" OutDatagrams 20
	reflector lv3b --port 12407 --once -q -l "$WORK/lv3-r.csv" --log-format csv --json "$WORK/lv3-r.json"
	udp_wait "$NS_B" OutDatagrams 100
	kill -INT "$EMIT_PID"
	wait "$EMIT_PID"
	EMIT_RC=$?
	expect_rc "live/analyze restarted reflector" 0
	wait_reflector
	analyze lv3-e "$WORK/lv3-e.csv" --json "$WORK/lv3-ea.json"
	analyze lv3-r "$WORK/lv3-r.csv" --json "$WORK/lv3-ra.json"
	py_checks "restarted reflector" '
e, r = load(sys.argv[1]), load(sys.argv[3])
t("the run lost pings while no reflector ran", e["packets"]["lost"] > 0, e["packets"])
same("emit", e, load(sys.argv[2]))
same("reflect (joined mid-session)", r, load(sys.argv[4]), ("sent", "received", "lost", "late", "warmup"))
' "$WORK/lv3-e.json" "$WORK/lv3-ea.json" "$WORK/lv3-r.json" "$WORK/lv3-ra.json"
}

# stall_then_wait NAME PID SECONDS: once the background client NAME (-v:
# its status line) has samples, the reflector PID is stopped for SECONDS;
# then the client is waited for (EMIT_RC)
stall_then_wait() {
	if wait_for 10 grep -q 'samples [1-9]' "$WORK/$1.err"; then
		kill -STOP "$2"
		sleep "$3"
		kill -CONT "$2"
	fi
	wait "$EMIT_PID"
	EMIT_RC=$?
}

# Late pongs and lost pings, live against --analyze of both logs: the
# reflector stalls 0.6 s (SIGSTOP) while the client pings every ms with a
# 10 ms timeout, so the pings of the stall are answered long after their
# slot left the 256-slot window (late, beyond the window) or dropped by the
# reflector's full receive buffer (lost on the way out).
test_live_vs_analyze_late() {
	local pid
	reflector lv4 --port 12410 --once -q -l "$WORK/lv4-r.csv" --log-format csv --json "$WORK/lv4-r.json"
	pid=$REFLECTOR_PID
	emit_bg lv4 --port 12410 --interval 1000 --timeout 10 -d 2 -v -l "$WORK/lv4-e.csv" --log-format csv \
		--json "$WORK/lv4-e.json"
	stall_then_wait lv4 "$pid" 0.6
	expect_rc "live/analyze late" 0
	wait_reflector
	analyze lv4-e "$WORK/lv4-e.csv" --json "$WORK/lv4-ea.json"
	analyze lv4-j "$WORK/lv4-e.csv" --analyze "$WORK/lv4-r.csv" --json "$WORK/lv4-ja.json"
	py_checks "late beyond the window" '
e, a, j = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3])
t("the run had late pongs (%d)" % e["packets"]["late"], e["packets"]["late"] > 0, e["packets"])
same("emit", e, a)
# joined: the counts are the run'"'"'s; the reflect log may add echoed stamps the client never got
t("joined logs: the packet counts are the live run'"'"'s",
  all(e["packets"][k] == j["packets"][k] for k in ("sent", "received", "lost", "late", "warmup")), j["packets"])
# the live run splits its loss when the FIN_ACK comes by -d + 170 ms; a
# reflector still working through the backlog of the stall then (a loaded
# host, a sanitizer build) answers too late, and the client says so: the
# joined logs split it all the same
split, why = e["loss_by_direction"], e["loss_by_direction_why"]
t("joined logs: the loss split by direction", j["loss_by_direction"] is not None, j)
if split is not None:
    t("joined logs: loss by direction as the live run split it (no reason given: %r)" % why, why is None and
      all(split[k] == j["loss_by_direction"][k] for k in ("out", "back", "reflector_answered")),
      (split, j["loss_by_direction"]))
else:
    t("live run: no split only for want of a FIN_ACK by its end, and it says so (%s)" % why,
      why is not None and why.startswith(("no FIN_ACK came (", "-d" + chr(39) + "s end came before a FIN")), why)
    print("live run without a FIN_ACK in time: %s" % why)
' "$WORK/lv4-e.json" "$WORK/lv4-ea.json" "$WORK/lv4-ja.json"
}

# Late pongs within the window still bring the T3 stamps they carry: the
# reflector stalls 0.1 s (SIGSTOP) while the client pings every 4 ms with a
# 10 ms timeout: the window's 256 pings span 1 s, so a stall the loaded
# host stretches several times over still ends inside it, and -d 3 leaves
# room for a status line that comes late.  The last pong before the stall
# has its T3 echoed in the next one, which is late (no room for the T3
# history at 64 bytes, and the history would ride in late pongs too).  No
# T3 of a ping answered in time is missing; the last ping's comes in the
# FIN_ACK, so with no FIN_ACK by the end (a loaded host) that one may be.
test_late_echo() {
	local pid
	reflector le-r --port 12412 --once -q
	pid=$REFLECTOR_PID
	emit_bg le --port 12412 --interval 4000 --timeout 10 -d 3 -v --json "$WORK/le.json"
	stall_then_wait le "$pid" 0.1
	expect_rc "late pongs' echoes: client" 0
	wait_reflector
	py_checks "late pongs' echoes" '
e = load(sys.argv[1])
p, miss = e["packets"], e["missing_stamps"]
t("late pongs came, fewer than the 256-slot window (%d)" % p["late"], 0 < p["late"] < 256, p)
last = 0 if e["loss_by_direction"] is not None else 1
t("no T3 of a ping answered in time missing: the late pongs brought them (%d missing, %d allowed)" %
  (miss.get("T3_KSW", -1), last), 0 <= miss.get("T3_KSW", -1) <= last, miss)
' "$WORK/le.json"
}

# No FIN_ACK: the reflector's netfilter drops every datagram longer than a
# ping (the FINs) and every 40th ping.  The live run cannot split its loss
# by direction and says why, in the report and in the JSON; --analyze of
# the client log alone says why too.
test_no_fin_ack() {
	if ! command -v nft >/dev/null || ! ip netns exec "$NS_B" nft list tables >/dev/null 2>&1; then
		skip "no FIN_ACK: nft not installed or not usable here"
		return
	fi
	reflector nf-r --port 12411 --once -q
	if ! { ip netns exec "$NS_B" nft add table inet rantfin &&
		ip netns exec "$NS_B" nft add chain inet rantfin in '{ type filter hook input priority 0; }' &&
		ip netns exec "$NS_B" nft add rule inet rantfin in udp dport 12411 udp length gt 100 counter drop &&
		ip netns exec "$NS_B" nft add rule inet rantfin in udp dport 12411 numgen inc mod 40 == 7 counter drop; }; then
		not_ok "no FIN_ACK: nft rules in the reflector's namespace"
	fi
	emit nf --port 12411 --count 400 --interval 1000 --timeout 50 -l "$WORK/nf.csv" --log-format csv \
		--json "$WORK/nf.json"
	expect_rc "no FIN_ACK: client" 0
	ip netns exec "$NS_B" nft delete table inet rantfin
	stop_reflector
	py_checks "no FIN_ACK" '
e = load(sys.argv[1])
why = e["loss_by_direction_why"] or ""
t("pings were lost (%d)" % e["packets"]["lost"], e["packets"]["lost"] >= 5, e["packets"])
t("loss_by_direction null", e["loss_by_direction"] is None, e["loss_by_direction"])
t("loss_by_direction_why: three FINs, none answered", why.startswith("no FIN_ACK came (3 FINs in "), why)
' "$WORK/nf.json"
	check "no FIN_ACK: the report says why the loss is not split" \
		grep -q "^Lost by direction: not known: no FIN_ACK came (3 FINs in [0-9]* ms)" "$WORK/nf.out"
	analyze nf-a "$WORK/nf.csv" --json "$WORK/nf-a.json"
	expect_eq "no FIN_ACK: --analyze of the client log alone says why" \
		"$(json_get "$WORK/nf-a.json" loss_by_direction_why | cut -c1-18)" "a client log alone"
}

# ----------------------------------------------------------- the -d bound

# bound NAME MODE-OPTIONS SIGNAL: the reflector gets SIGNAL once it has
# answered 50 pings of -d 1: KILL (it vanishes), STOP (it stalls to the end),
# LATE (stalls 0.3 s, then answers what waited)
bound() {
	local name=$1 mode=$2 sig=$3 t0 t1 pid pongs
	reflector "$name-r" --port 12408 -q
	pid=$REFLECTOR_PID
	pongs=$(udp_count "$NS_A" InDatagrams)
	t0=$(ms_now)
	# shellcheck disable=SC2086
	emit_bg "$name" --port 12408 -d 1 --timeout 20000 -q $mode --json "$WORK/$name.json"
	wait_for 30 pongs_or_gone $((pongs + 50)) "$EMIT_PID"
	if [ "$sig" = LATE ]; then
		kill -STOP "$pid"
		sleep 0.3
		kill -CONT "$pid"
	else
		kill "-$sig" "$pid"
	fi
	wait "$EMIT_PID"
	t1=$(ms_now)
	{
		kill -9 "$pid"
		kill -CONT "$pid"
		wait "$pid"
	} 2>/dev/null
	if [ $((t1 - t0)) -le $((1000 + 200 + SLACK_MS)) ]; then
		ok "-d 1 ${mode:-back-to-back}, reflector $sig: ended in $((t1 - t0)) ms (bound 1200 + $SLACK_MS slack)"
	else
		not_ok "-d 1 ${mode:-back-to-back}, reflector $sig: took $((t1 - t0)) ms (bound 1200 + $SLACK_MS slack)"
	fi
	echo "# -d 1 ${mode:-back-to-back} reflector $sig: $((t1 - t0)) ms"
	if [ "$sig" != LATE ] && [ "$(json_get "$WORK/$name.json" packets.lost)" = 0 ]; then
		# a host so slow that -d ended before the 50th pong (the sanitizer
		# builds under load): nothing was awaited, nothing lost to split
		expect_eq "-d 1 ${mode:-back-to-back}, reflector $sig: no loss (the run ended before the signal), none to split" \
			"$(json_get "$WORK/$name.json" loss_by_direction_why)" null
	elif [ "$sig" != LATE ]; then
		# the pongs awaited (20 s each) took -d + 170 ms: no FIN could be answered
		expect_eq "-d 1 ${mode:-back-to-back}, reflector $sig: why the loss is not split" \
			"$(json_get "$WORK/$name.json" loss_by_direction_why | cut -c1-40)" \
			"-d's end came before a FIN could be answ"
	fi
}

pongs_or_gone() { # N PID: the client PID has had N pongs in NS_A, or has ended
	udp_reaches "$NS_A" InDatagrams "$1" || gone "$2"
}

test_bounds() {
	bound b2b-kill "" KILL
	bound b2b-stop "" STOP
	bound b2b-late "" LATE
	bound int-kill "--interval 1000" KILL
	bound int-stop "--interval 1000" STOP
	bound int-late "--interval 1000" LATE
}

# ------------------------------------------------------- CPU latency limit

holds_cpu_latency() { # PID: the process has the CPU latency device open
	find "/proc/$1/fd" -lname /dev/cpu_dma_latency 2>/dev/null | grep -q .
}

holds_none() { # PID
	! holds_cpu_latency "$1"
}

cpu_latency_now() { # the limit in force (the least of every holder's)
	python3 -c 'import struct; print(struct.unpack("i", open("/dev/cpu_dma_latency", "rb").read(4))[0])'
}

limit_is() { # US
	[ "$(cpu_latency_now)" = "$1" ]
}

# What --cpu-latency holds, while it runs, and what it says: by default 0,
# a limit given, off.  The limit in force is the least of all holders', so
# only "0 while ours holds 0" is certain with other tests running beside
# (that a reflector lets it go after 60 s without a session: tests/unit.c).
test_cpu_latency() {
	local pongs
	if [ ! -c /dev/cpu_dma_latency ]; then
		skip "--cpu-latency: no /dev/cpu_dma_latency on this kernel (no CONFIG_CPU_IDLE)"
		return
	fi
	reflector_or "cpu latency" cl-r --port 12411 -v --json "$WORK/cl-r.json" || return
	# it holds the limit once its socket is open (a refused socket option is said first)
	check "cpu latency: a waiting reflector holds the CPU latency device open" \
		wait_for 30 holds_cpu_latency "$REFLECTOR_PID"
	check "cpu latency: ... and asks for 0 before any client comes" wait_for 30 limit_is 0
	check "cpu latency: -v says so at start" wait_for 30 grep -q \
		'^rant: CPU latency limit 0 us held (/dev/cpu_dma_latency) from start and while sessions run; let go after 60 s without one$' "$WORK/cl-r.err"
	pongs=$(udp_count "$NS_A" InDatagrams)
	emit_bg cl-off --port 12411 -d 30 -q --cpu-latency off --json "$WORK/cl-off.json"
	wait_for 30 pongs_or_gone $((pongs + 50)) "$EMIT_PID"
	check "cpu latency: a measuring client with --cpu-latency off is running" kill -0 "$EMIT_PID"
	check "cpu latency: ... and holds nothing" holds_none "$EMIT_PID"
	expect_eq "cpu latency: the reflector's limit in force while its session runs" "$(cpu_latency_now)" 0
	kill -INT "$EMIT_PID"
	wait_for 30 gone "$EMIT_PID"
	wait "$EMIT_PID"
	expect_eq "cpu latency: off: the client exits 0 on SIGINT" "$?" 0
	expect_eq "cpu latency: off: the JSON holds no limit" "$(json_get "$WORK/cl-off.json" cpu_latency_us)" null
	expect_eq "cpu latency: off: the JSON says why" "$(json_get "$WORK/cl-off.json" cpu_latency_why)" "--cpu-latency off"
	check "cpu latency: off: nothing said on stderr" test ! -s "$WORK/cl-off.err"
	# the report says what the JSON says: a hold changes the numbers compared with other tools
	expect_eq "cpu latency: off: the report's Host line says none held, and why" \
		"$(grep '^Host: ' "$WORK/cl-off.out")" \
		"Host: CPU wake-up latency not held (--cpu-latency off): idle CPUs' wake-ups are in the numbers"
	wait_for 30 sessions "$WORK/cl-r.json" 1
	expect_eq "cpu latency: the reflector's limit stays between sessions (within 60 s)" "$(cpu_latency_now)" 0
	emit cl-25 --port 12411 --count 300 --cpu-latency 25 -v --json "$WORK/cl-25.json"
	expect_rc "cpu latency: --cpu-latency 25" 0
	expect_eq "cpu latency: 25: the JSON holds 25" "$(json_get "$WORK/cl-25.json" cpu_latency_us)" 25
	expect_eq "cpu latency: 25: no why" "$(json_get "$WORK/cl-25.json" cpu_latency_why)" null
	check "cpu latency: 25: -v says so at start" grep -q '^rant: CPU latency limit 25 us held' "$WORK/cl-25.err"
	expect_eq "cpu latency: 25: the report's Host line says 25 held, as the JSON does" \
		"$(grep '^Host: ' "$WORK/cl-25.out")" \
		"Host: CPU wake-up latency held at 25 us (/dev/cpu_dma_latency; --cpu-latency off to measure without)"
	wait_for 30 sessions "$WORK/cl-r.json" 2
	stop_reflector
	expect_eq "cpu latency: the reflector's two sessions each say 0 held" \
		"$(jsess "$WORK/cl-r.json" 0 cpu_latency_us) $(jsess "$WORK/cl-r.json" 1 cpu_latency_us)" "0 0"
	expect_eq "cpu latency: ... and each session's report says 0 held" \
		"$(grep -c '^Host: CPU wake-up latency held at 0 us (/dev/cpu_dma_latency; --cpu-latency off to measure without)$' "$WORK/cl-r.out")" 2
}

# ------------------------------------------------- RANT_TEST_START on both sides

test_start_mark() {
	if ! tracefs_instance; then
		skip "RANT_TEST_START: no tracefs here"
		return
	fi
	echo 1 >"$TFS/instances/$INST/tracing_on"
	# all warm-up: the measurement never starts, so neither side marks it
	reflector tm1-refl --port 12409 --once -q -T --trace-instance "$INST"
	emit tm1 --port 12409 -w 1000000 -d 0.5 -q -T --trace-instance "$INST"
	wait_reflector
	expect_eq "RANT_TEST_START: none while every ping is warm-up (neither side starts measuring)" \
		"$(grep -c 'tracing_mark_write: RANT_TEST_START' "$TFS/instances/$INST/trace")" 0
	: >"$TFS/instances/$INST/trace"
	reflector tm2-refl --port 12409 --once -q -T --trace-instance "$INST"
	emit tm2 --port 12409 -w 20 --count 100 -q -T --trace-instance "$INST"
	expect_rc "RANT_TEST_START: a client past its warm-up" 0
	wait_reflector
	expect_eq "RANT_TEST_START: one from each side once warm-up is over" \
		"$(grep -c 'tracing_mark_write: RANT_TEST_START' "$TFS/instances/$INST/trace")" 2
}

# The full test as documented: both ends with the same -d, the reflector
# started first.  Its -d ends first; the session in progress is finished (to
# the client's FIN) before it exits, so the client loses nothing at its end.
test_both_d() {
	reflector_or "both -d" bd-r --port 12413 -d 3 -q --json "$WORK/bd-r.json" || return
	sleep 1	# the client starts later, as a person starting it would
	emit bd-c --port 12413 -d 3 --interval 1000 -q --json "$WORK/bd-c.json"
	expect_rc "both -d: the client" 0
	wait_reflector
	expect_eq "both -d: the reflector exits 0" "$REFLECTOR_RC" 0
	expect_eq "both -d: the client lost none" "$(json_get "$WORK/bd-c.json" packets.lost)" 0
	expect_eq "both -d: no stamp missing" "$(grep '^Missing stamps:' "$WORK/bd-c.out")" \
		"Missing stamps: none"
	expect_eq "both -d: the FIN_ACK came: loss by direction known" \
		"$(json_get "$WORK/bd-c.json" loss_by_direction.out) $(json_get "$WORK/bd-c.json" loss_by_direction.back)" "0 0"
	expect_eq "both -d: the reflector's session ended by the client's FIN" \
		"$(jsess "$WORK/bd-r.json" 0 stop_reason)" fin
	expect_eq "both -d: ... and answered every ping" \
		"$(jsess "$WORK/bd-r.json" 0 packets.received)" "$(json_get "$WORK/bd-c.json" packets.sent)"
}

main() {
	need_root "net-outputs"
	if ! ns_setup; then
		skip "net-outputs: cannot create namespaces"
		finish
		exit 0
	fi
	test_fds
	test_writes
	test_limits
	test_fail_alone
	test_refused
	test_paths
	test_live_vs_analyze
	test_live_vs_analyze_late
	test_late_echo
	test_no_fin_ack
	test_bounds
	test_cpu_latency
	test_both_d
	test_start_mark
	finish
}

main "$@"
