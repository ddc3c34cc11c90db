#!/bin/bash
# Drop-in, round 3: what the earlier rant's users, crucible's bench-rant and
# the TAPRIO, pktgen and cyclictest users of the earlier tool hit first:
#   - the earlier build line `gcc -o rant rant.c` (no -lm) builds a rant that runs;
#   - `rant` with no arguments prints its usage and exits non-zero;
#   - -C without -t and -L without -l are accepted on both sides, said once;
#   - a reflector with -t -C carries on after a session with a breach;
#   - a client nobody answers stops, whatever --count says;
#   - a reflector's --json is JSON Lines: one object per session, each with
#     its start time, command line and the warnings printed;
#   - the once-a-second status line only on a terminal or when asked;
#   - TAPRIO: --size down to 24 B measures (the pong carries what fits and
#     the report says what not), --tos in hex, one --interval over classes
#     said to be shared, the overload warning names --interval as typed;
#   - the missing-stamps line: no trailing ';', -N on the reflector named;
#   - pktgen: --plot's latency-against-size chart and the size table's avg
#     are the JSON's numbers;
#   - cyclictest: --histfile, every bucket and the samples above -o, equal to
#     the JSON; -H with -b keeps the width.
#
#   sudo bash tests/net-dropin.sh        (RANT=path overrides the binary)

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

# RANT_SRC: the source the plain build line compiles
: "${RANT_SRC:=$(cd "$(dirname "$0")/.." && pwd)/rant.c}"

# ---------------------------------------------- the earlier build line
test_plain_build() {
	local cc=${CC:-gcc}
	if ! command -v "$cc" >/dev/null; then
		skip "plain build: no $cc here"
		return
	fi
	# exactly the earlier READMEs' line, in a directory of its own
	(cd "$WORK" && cp "$RANT_SRC" rant.c && "$cc" -o rant rant.c) >"$WORK/plain.err" 2>&1
	expect_eq "gcc -o rant rant.c: builds (no -lm, no -lpthread)" "$?" 0
	sed 's/^/#   /' "$WORK/plain.err" | head -n 5
	check "  ... links no libm" not_grep -q 'libm\.so' <(ldd "$WORK/rant" 2>/dev/null)
	"$WORK/rant" --version >"$WORK/plain.out" 2>&1
	expect_eq "  ... the binary runs (--version exit 0)" "$?" 0
	check "  ... and says its version" grep -q '^rant [0-9]' "$WORK/plain.out"
	PLAIN=$WORK/rant
}

# the plain binary measures: percentiles, averages and deviations come from
# rant's own arithmetic now (loopback of a namespace of this suite)
test_plain_run() {
	local pid
	[ -x "${PLAIN:-}" ] || return
	ip netns exec "$NS_A" "$PLAIN" -i lo --once -q --json "$WORK/plain-r.json" >"$WORK/plain-r.out" 2>&1 &
	pid=$!
	BG_PIDS+=("$pid")
	wait_for 30 udp_listening "$NS_A" 12345
	ip netns exec "$NS_A" "$PLAIN" -a 127.0.0.1 --count 2000 -H -b 0.25 -q --json "$WORK/plain-e.json" \
		>"$WORK/plain-e.out" 2>&1
	expect_eq "plain build: a 2000-ping run over loopback, exit 0" "$?" 0
	wait_exit "$pid" 10
	expect_exit "plain build: its reflector (--once) exit 0" plain-r 0
	py_checks "plain build" '
d = load(sys.argv[1])["metrics"]["rtt"]
p = d["percentiles_ns"]
t("2000 samples", d["samples"] == 2000, d["samples"])
t("min <= p50 <= p99 <= max", d["min_ns"] <= p["50"] <= p["99"] <= d["max_ns"], (d["min_ns"], p, d["max_ns"]))
t("stddev > 0 and below the range", 0 < d["stddev_ns"] <= d["max_ns"] - d["min_ns"], d["stddev_ns"])
t("-b 0.25: 250 ns buckets", d["histogram"]["bucket_ns"] == 250, d["histogram"]["bucket_ns"])
' "$WORK/plain-e.json"
}

# ------------------------------------------------------ no arguments at all
test_no_args() {
	local n0
	n0=$(ip netns exec "$NS_A" ss -Hlun | wc -l)
	ip netns exec "$NS_A" timeout 10 "$RANT" >"$WORK/noarg.out" 2>"$WORK/noarg.err"
	expect_eq "rant with no arguments: exit 2" "$?" 2
	check "  ... usage on stderr" grep -q '^Usage: rant' "$WORK/noarg.err"
	check "  ... nothing on stdout" test ! -s "$WORK/noarg.out"
	expect_eq "  ... no socket left listening" "$(ip netns exec "$NS_A" ss -Hlun | wc -l)" "$n0"
}

# -------------------------------------------- -C and -L alone, both sides
test_alone_flags() {
	local spid
	reflector_or "-C -L alone" al_r -C -L 5 --once || return
	spid=$REFLECTOR_PID
	emit al_c -C -L 5 --count 300 -q
	expect_rc "-C -L 5 alone on the client" 0
	wait_exit "$spid" 10
	expect_exit "-C -L 5 alone on the reflector: exit 0" al_r 0
	for f in al_r al_c; do
		expect_eq "$f: one line says both have no effect alone" \
			"$(grep -c '^rant: --continue: no effect without --threshold; --log-threshold: no effect without --log' "$WORK/$f.err")" 1
		expect_eq "$f: and no other 'rant: --' line" "$(grep -c '^rant: --' "$WORK/$f.err")" 1
	done
	check "reflector -C -L alone: measured 300" has "$WORK/al_r.out" 'Total Samples: 300$'
}

# ------------------------------------- a reflector with -t -C goes on
test_reflector_continue() {
	local spid i
	# 1 ns: every response is a breach, in each session
	reflector_or "reflector -t -C" rc_r -t 0.001 -C -q --json "$WORK/rc_r.json" || return
	spid=$REFLECTOR_PID
	for i in 1 2; do
		emit "rc_c$i" --count 100 -q
		expect_eq "reflector -t -C: client $i exit 0 or 3 (got $EMIT_RC)" \
			"$([ "$EMIT_RC" = 0 ] || [ "$EMIT_RC" = 3 ] && echo yes)" yes
	done
	check "reflector -t -C: still running after two sessions with breaches" kill -0 "$spid"
	kill -TERM "$spid"
	wait_exit "$spid" 10
	expect_exit "reflector -t -C: SIGTERM ends it, exit 3 (breaches were counted)" rc_r 3
	py_checks "reflector -t -C json" '
objs = [json.loads(l) for l in open(sys.argv[1])]
done = [o for o in objs if o["packets"]["received"]]
t("two sessions answered, each with breaches", len(done) == 2 and all(o["threshold"]["count"] == 100 for o in done),
  [(o["packets"]["received"], o["threshold"]["count"]) for o in objs])
' "$WORK/rc_r.json"
}

# ------------------------------------------ a client nobody answers stops
test_no_reflector() {
	local t0 t1
	t0=$(date +%s%N)
	# the window is 5 s; 30 s is a bound that only a hang crosses, even on a
	# loaded host (timeout's 124 says it did)
	ip netns exec "$NS_A" timeout -k 5 30 "$RANT" -i "$VETH_A" -a "$ADDR_B" --count 1000 --port 23999 \
		--json "$WORK/nr.json" >"$WORK/nr.out" 2>"$WORK/nr.err"
	EMIT_RC=$?
	t1=$(date +%s%N)
	expect_rc "no reflector, --count 1000: ended by itself ($(((t1 - t0) / 1000000)) ms)" 1
	expect_eq "no reflector: one line names address and port" \
		"$(grep -c "^rant: no answer from $ADDR_B port 23999 for 5 s" "$WORK/nr.err")" 1
	expect_eq "no reflector: stop_reason no_answer" "$(jget "$WORK/nr.json" stop_reason)" no_answer
	check "no reflector: the report says so" has "$WORK/nr.out" '^Stopped by: no_answer$'
	check "no reflector: the JSON lists the line" python3 -c '
import json, sys
sys.exit(not any("no answer from" in w for w in json.load(open(sys.argv[1]))["warnings"]))' "$WORK/nr.json"
}

# ------------------------------------------------- reflector JSON Lines
test_json_lines() {
	local spid i
	reflector_or "json lines" jl_r -C -q --json "$WORK/jl.json" || return
	spid=$REFLECTOR_PID
	for i in 1 2 3; do
		emit "jl_c$i" --count 50 -q --json "$WORK/jl_c$i.json"
		expect_rc "json lines: client $i" 0
	done
	kill -TERM "$spid"
	wait_exit "$spid" 10
	expect_exit "json lines: reflector exit 0" jl_r 0
	py_checks "json lines" '
lines = open(sys.argv[1]).read().splitlines()
objs = [json.loads(l) for l in lines]
t("one object per line, one line per session (3)", len(objs) == 3, len(objs))
t("json.load of each line: sessions differ", len({o["session"] for o in objs}) == 3)
t("each has started (ISO 8601 UTC)", all(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$", o["started"] or "") for o in objs),
  [o["started"] for o in objs])
t("sessions started in order", [o["started"] for o in objs] == sorted(o["started"] for o in objs))
t("each has the command line", all(o["cmdline"].endswith("-C -q --json " + sys.argv[1]) for o in objs), objs[0]["cmdline"])
t("each lists the start-up line about -C", all(any("--continue: no effect" in w for w in o["warnings"]) for o in objs),
  [o["warnings"] for o in objs])
c = json.loads(open(sys.argv[2]).read())
t("the client JSON has the same keys", all(k in c for k in ("started", "cmdline", "warnings")) and c["warnings"] == [])
t("the client JSON is one line too", open(sys.argv[2]).read().count("\n") == 1)
' "$WORK/jl.json" "$WORK/jl_c1.json"
}

# ------------------------------------- status lines: a terminal, or asked
STATUS_RE='^rant: .* samples .* rate .*/s'

# pty_run OUT command...: run a command with stdin, stdout and stderr on a
# pseudo-terminal (python's pty module), its output in OUT, status in RC
pty_run() {
	local out=$1
	shift
	python3 -c '
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
out = open(sys.argv[1], "wb")
while True:
    try:
        b = os.read(fd, 4096)
    except OSError:  # EIO: the child is gone
        break
    if not b:
        break
    out.write(b)
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))' "$out" "$@"
	RC=$?
}

test_status_lines() {
	local spid n
	reflector_or "status" st_r -q || return
	spid=$REFLECTOR_PID
	# bench-rant's way: stdout and stderr together into a file
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" -d 2.5 --interval 1000 >"$WORK/st_file.txt" 2>&1
	expect_eq "status: a run into a file: exit 0" "$?" 0
	expect_eq "status: no status line into a file by default" "$(grep -Ec "$STATUS_RE" "$WORK/st_file.txt")" 0
	check "  ... the start-up note and the report are there" has "$WORK/st_file.txt" '^Test is complete'
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" -d 2.5 --interval 1000 2>&1 | cat >"$WORK/st_pipe.txt"
	expect_eq "status: a run into a pipe: exit 0" "${PIPESTATUS[0]}" 0
	expect_eq "status: no status line into a pipe by default" "$(grep -Ec "$STATUS_RE" "$WORK/st_pipe.txt")" 0
	for opt in -v --status; do
		emit "st$opt" -d 3 --interval 1000 "$opt"
		expect_rc "status: $opt into a file" 0
		n=$(grep -Ec "$STATUS_RE" "$WORK/st$opt.err")
		check "status: $opt into a file: >= 2 lines in 3 s (got $n)" [ "$n" -ge 2 ]
		[ "$n" -ge 2 ] || show "st$opt"
	done
	pty_run "$WORK/st_pty.txt" ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" -d 3 --interval 1000
	expect_eq "status: on a terminal: exit 0" "$RC" 0
	n=$(tr -d '\r' <"$WORK/st_pty.txt" | grep -Ec "$STATUS_RE")
	check "status: on a terminal: >= 2 lines in 3 s by default (got $n)" [ "$n" -ge 2 ]
	pty_run "$WORK/st_ptyq.txt" ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" -d 1.5 --interval 1000 -q
	expect_eq "status: on a terminal with -q: none" "$(tr -d '\r' <"$WORK/st_ptyq.txt" | grep -Ec "$STATUS_RE")" 0
	kill -TERM "$spid"
	wait_exit "$spid" 10
}

# ------------------------------------------------------------------- TAPRIO
test_taprio() {
	local spid
	reflector_or "taprio" tp_r -s -q --json "$WORK/tp_r.json" || return
	spid=$REFLECTOR_PID
	emit tp24 --size 24 --count 500 -s -q --json "$WORK/tp24.json"
	expect_rc "--size 24 --count 500" 0
	check "--size 24: the report says which reflector stamps do not fit" \
		has "$WORK/tp24.out" '^Size 24 B: its pongs have no room for the reflector.s T2_KSW \(from 32 B\), T2_SW \(from 40 B\), T3_SW \(from 48 B\), T3_KSW \(from 64 B\)'
	check "--size 24: nothing counted missing for them" has "$WORK/tp24.out" '^Missing stamps: none$'
	py_checks "--size 24" '
d = load(sys.argv[1])
t("500 rtt samples", d["metrics"]["rtt"]["samples"] == 500, d["metrics"]["rtt"]["samples"])
t("size 24", d["size"] == 24)
t("pong_room: smallest 24, four stamps not carried", d["pong_room"] == {"smallest_size": 24, "not_carried": ["T2_KSW", "T2_SW", "T3_SW", "T3_KSW"]}, d["pong_room"])
t("no response metric without the server stamps", "response" not in d["metrics"])
t("sent = received + lost, nothing invalid or rejected", d["packets"]["sent"] == d["packets"]["received"] + d["packets"]["lost"] and d["packets"]["invalid"] == 0 and not any(d["rejected"].values()), d["packets"])
' "$WORK/tp24.json"
	emit tp40 --size 40 --count 300 -s -q --json "$WORK/tp40.json"
	expect_rc "--size 40" 0
	py_checks "--size 40" '
d = load(sys.argv[1])
t("T2 wire and T2_SW fit: server rx stack measured", d["metrics"]["server_rx_stack"]["samples"] == 300, list(d["metrics"]))
t("T3_SW and T3 wire do not", d["pong_room"]["not_carried"] == ["T3_SW", "T3_KSW"], d["pong_room"])
' "$WORK/tp40.json"
	emit tp12 --size 12 --count 5
	expect_rc "--size 12: refused" 2
	expect_eq "--size 12: one line naming the reason" \
		"$(grep -c "^rant: --size: '12' is out of range (24 to 65000): a datagram carries at least rant's short header" "$WORK/tp12.err")" 1
	emit tphex --tos 0x20 --count 100 -q --json "$WORK/tphex.json"
	expect_rc "--tos 0x20" 0
	expect_eq "--tos 0x20: measured" "$(jget "$WORK/tphex.json" metrics.rtt.samples)" 100
	emit tp3 --tos 0x20,0x40,0x60 --interval 1000 --count 300 --json "$WORK/tp3.json"
	expect_rc "--tos 0x20,0x40,0x60 --interval 1000" 0
	expect_eq "one --interval over 3 classes: said once at start" \
		"$(grep -c '^rant: --interval 1000 with 3 classes: they take turns, each class sends every 3000 us (1/3 of the rate); --interval 1000,1000,1000 gives each class 1000 us' "$WORK/tp3.err")" 1
	check "classes: the table prints tos 0x20" has "$WORK/tp3.out" '^0  prio - tos 0x20 '
	py_checks "--tos hex classes" '
d = load(sys.argv[1])
t("classes tos 32, 64, 96", [c["tos"] for c in d["classes"]] == [32, 64, 96], [c["tos"] for c in d["classes"]])
t("the note is in the JSON warnings", any("with 3 classes" in w for w in d["warnings"]), d["warnings"])
t("size table avg = json avg: min <= avg <= max per class", all(c["rtt"]["min_ns"] <= c["rtt"]["avg_ns"] <= c["rtt"]["max_ns"] for c in d["classes"]))
' "$WORK/tp3.json"
	# 3 classes every 1 us: more than a host sustains, so the warning comes;
	# where a host keeps up there is nothing to name (skipped).  --count
	# bounds the pings in flight: without it --timeout's second at that
	# cadence would be refused (the unit test layout_inflight)
	emit tpov --tos 0x20,0x40,0x60 --interval 1,1,1 --count 3000 -q --json "$WORK/tpov.json"
	expect_rc "--tos x3 --interval 1,1,1 --count 3000: runs" 0
	if [ "$EMIT_RC" != 0 ]; then
		:	# said above, with its output
	elif grep -q 'is faster than this host sustains' "$WORK/tpov.err"; then
		check "overload warning: names --interval as typed, and the cadence of all classes" \
			grep -q '^rant: warning: --interval 1,1,1 (all classes together: one ping every 0.333 us) is faster than this host sustains' "$WORK/tpov.err"
	else
		skip "overload warning: this host kept up with 3 classes every 1 us"
	fi
	kill -TERM "$spid"
	wait_exit "$spid" 10
	py_checks "taprio reflector" '
o = [json.loads(l) for l in open(sys.argv[1])]
s = [x for x in o if x["size"] == 24 or x["packets"]["received"] == 500]
t("the reflector measured the 24 B session whole: response 500", any(x["metrics"].get("response", {}).get("samples") == 500 for x in o),
  [x["metrics"].get("response", {}).get("samples") for x in o])
' "$WORK/tp_r.json"
}

# -------------------------------------- -N on the reflector, as bench-rant
test_missing_line() {
	local spid
	reflector_or "missing line" mn_r -N -q || return
	spid=$REFLECTOR_PID
	emit mn_c --count 300 -q --json "$WORK/mn_c.json"
	expect_rc "client of a -N reflector" 0
	check "missing stamps: T3 counted, no trailing ';', -N named as the reason" \
		has "$WORK/mn_c.out" '^Missing stamps: T3_KSW 300 \(the reflector runs -N: no TX stamps, by request\)$'
	expect_eq "json: reflector_tx_stamps false" "$(jget "$WORK/mn_c.json" reflector_tx_stamps)" false
	expect_eq "json: no response, so no response_basis (null)" "$(jget "$WORK/mn_c.json" response_basis)" null
	expect_eq "json: no response metric" "$(jget "$WORK/mn_c.json" metrics.response.samples)" missing
	expect_eq "json: the client's own TX stamps taken (tx_stamps)" "$(jget "$WORK/mn_c.json" tx_stamps)" true
	expect_eq "json: its rtt wire-to-wire (rtt_basis)" "$(jget "$WORK/mn_c.json" rtt_basis)" wire_T4-T1
	kill -TERM "$spid"
	wait_exit "$spid" 10
}

# ------------------------------------------------------------------- pktgen
test_pktgen() {
	local spid
	reflector_or "pktgen" pg_r -q || return
	spid=$REFLECTOR_PID
	emit pg --size 1400,96,512 --count 300 -q --json "$WORK/pg.json" --plot "$WORK/pg.svg"
	expect_rc "--size 1400,96,512 --plot" 0
	py_checks "pktgen" '
import xml.etree.ElementTree as ET
d = load(sys.argv[1])
root = ET.parse(sys.argv[2]).getroot()
ids = {e.get("id"): (e.text or "") for e in root.iter() if e.get("id")}
body = open(sys.argv[2]).read()
t("the chart is there", "Latency against size: rtt p50, p99 and avg per size" in body)
bad = []
for z in d["sizes"]:
    r, k = z["rtt"], "bysize%d" % z["size"]
    want = {"samples": str(r["samples"]), "p50": "%.3f" % (r["percentiles_ns"]["50"] / 1000), "p99": "%.3f" % (r["percentiles_ns"]["99"] / 1000)}
    for s, v in want.items():
        if ids.get(k + "-" + s) != v:
            bad.append((k, s, ids.get(k + "-" + s), v))
    if abs(float(ids.get(k + "-avg", "nan")) * 1000 - r["avg_ns"]) > 1:
        bad.append((k, "avg", ids.get(k + "-avg"), r["avg_ns"]))
t("each size: samples, p50, p99 and avg equal the JSON", len(d["sizes"]) == 3 and not bad, bad)
rows = {}
for l in open(sys.argv[3]):
    m = re.match(r"^(\d+) B +(\d+) +(\d+) +(\d+) +\S+% +(\d+) +(-?\d+) +(-?\d+) +(-?\d+) +(-?\d+) +(-?\d+) +(-?\d+) +\d+$", l)
    if m:
        rows[int(m.group(1))] = [int(x) for x in m.groups()[1:]]
bad = [z["size"] for z in d["sizes"] if z["size"] not in rows or abs(rows[z["size"]][5] - z["rtt"]["avg_ns"]) > 0.55 or rows[z["size"]][4] != z["rtt"]["min_ns"] or rows[z["size"]][9] != z["rtt"]["max_ns"]]
# (avg: the table rounds to ns, the JSON to 0.1 ns)
t("the size table has min, avg and max as the JSON", len(rows) == 3 and not bad, (rows, bad))
' "$WORK/pg.json" "$WORK/pg.svg" "$WORK/pg.out"
	kill -TERM "$spid"
	wait_exit "$spid" 10
}

# --------------------------------------------------------------- cyclictest
test_histfile() {
	local spid
	reflector_or "histfile" hf_r -q --histfile "$WORK/hf_r.hist" -b 1 -o 50 || return
	spid=$REFLECTOR_PID
	emit hf -H -b 1 -o 50 --count 2000 -q --json "$WORK/hf.json" --histfile "$WORK/hf.hist"
	expect_rc "-H -b 1 -o 50 --histfile" 0
	emit hf2 --count 100 -q
	expect_rc "histfile: the reflector's second session" 0
	kill -TERM "$spid"
	wait_exit "$spid" 10
	check "-H -b 1: buckets not merged" hasnt "$WORK/hf.out" 'merged'
	py_checks "histfile" '
d = load(sys.argv[1])["metrics"]["rtt"]
h = d["histogram"]
rows = [l.split() for l in open(sys.argv[2]) if l.strip() and not l.startswith("#")]
t("every line: value and count", all(len(r) == 2 for r in rows))
vals = [(round(float(v) * 1000), int(c)) for v, c in rows]
t("every bucket from 0 to the bound, 1 us apart", [v for v, _ in vals[:50]] == list(range(0, 50000, 1000)), vals[:3])
want = {lo: c for lo, c in h["buckets"] + h["above"]}
got = {v: c for v, c in vals if c}
t("the non-empty buckets are the JSON buckets plus above", got == want, (len(got), len(want)))
t("counts add up to samples - below zero - not kept", sum(c for _, c in vals) == d["samples"] - h["below_zero"] - h["above_not_kept"])
t("units stated", "value (us" in open(sys.argv[2]).read())
t("json: above = the samples above -o", sum(c for _, c in h["above"]) + h["above_not_kept"] + h["below_zero"] == h["outside"], h)
text = open(sys.argv[3]).read()
t("reflector: a block per session, two empty lines apart", text.count("# rant ") == 2 and text.count("\n\n\n# rant ") == 1, text.count("# rant "))
' "$WORK/hf.json" "$WORK/hf.hist" "$WORK/hf_r.hist"
}

need_root "net-dropin"
if ! ns_setup; then
	not_ok "namespace setup"
	finish
	exit 1
fi

test_plain_build
test_plain_run
test_no_args
test_alone_flags
test_reflector_continue
test_no_reflector
test_json_lines
test_status_lines
test_taprio
test_missing_line
test_pktgen
test_histfile
finish
