#!/bin/bash
# Drop-in for the earlier rant (root, throwaway namespaces): what its users,
# crucible's bench-rant and the TAPRIO, pktgen and cyclictest users of the
# earlier tool run, with the earlier meaning:
#   - the earlier build line `gcc -o rant rant.c` (no -lm) builds a rant that
#     measures; `rant` with no arguments prints its usage and exits 2;
#   - every command line of the earlier rant's two READMEs and both of
#     bench-rant's invocations run unchanged on a veth pair (interfaces,
#     addresses, namespaces, CPUs substituted; durations and warm-ups
#     shortened); the lines bench-rant's post-processing reads parse from
#     both sides' output and agree with --json, with each optional flag it
#     adds;
#   - the reflector: its own -w, SIGTERM mid-session, -d with no client,
#     every earlier option accepted, -C without -t and -L without -l said
#     once, -t -C carrying on after a session with a breach; its --json is
#     JSON Lines (one object per session, with its start time, command line
#     and the warnings printed);
#   - a client nobody answers stops, whatever --count says; the
#     once-a-second status line only on a terminal or when asked;
#   - the earlier tool's later flags (-N -R -F -2, --client-no-tx-ts) do
#     what they say; the missing-stamps line names -N on the reflector;
#   - TAPRIO: --size down to 24 B measures (the pong carries what fits and
#     the report says what not), --tos in hex, one --interval over classes
#     said to be shared, the overload warning names --interval as typed;
#   - pktgen: --plot's latency-against-size chart and the size table's avg
#     are the JSON's numbers;
#   - cyclictest: --histfile, every bucket and the samples above -o, equal to
#     the JSON; -H with -b keeps the width.
#
#   sudo bash tests/net-compat.sh        (RANT=path overrides the binary)
#
# The script re-runs itself in a private mount namespace so that it can
# mount tracefs for the README's --trace-marker lines without touching the
# host's mounts.

if [ "$(id -u)" -eq 0 ] && [ -z "${RANT_COMPAT_PRIVATE:-}" ] && command -v unshare >/dev/null; then
	RANT_COMPAT_PRIVATE=1 exec unshare -m --propagation private bash "$0" "$@"
fi

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

TRACEFS=/sys/kernel/tracing
PARSE="$(dirname "$0")/net-compat.d/benchparse.py"
MADE_INSTANCE=0
HUGE=/proc/sys/vm/nr_hugepages
HUGE_OLD=
: "${DUR:=3}"

# the python half of the checks reports like ok/not_ok (see py_checks)

compat_cleanup() {
	cleanup
	[ "$MADE_INSTANCE" = 1 ] && rmdir "$TRACEFS/instances/rant" 2>/dev/null
	[ -n "$HUGE_OLD" ] && echo "$HUGE_OLD" >"$HUGE"
}

hugepages_free() {
	sed -n 's/^HugePages_Free: *//p' /proc/meminfo
}
trap compat_cleanup EXIT

# Substitutions in the earlier READMEs' lines: the server port's namespace,
# interface and address are NS_B/VETH_B/ADDR_B, the client's NS_A/VETH_A;
# CPUs 61 and 51 are 0 and 1 (this host has two).
CPU_S=0
CPU_C=1
[ "$(nproc)" -lt 2 ] && CPU_C=0

# run_bg NAME command...: a background process, output to NAME.out/.err
run_bg() {
	local name=$1
	shift
	"$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

# run_fg NAME command...: run to the end (killed after 120 s: a test never
# hangs); RC is its status
run_fg() {
	local name=$1
	shift
	timeout -k 5 120 "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	RC=$?
}

# wait_rc PID SECONDS: wait for a background process (killed if it outlives
# SECONDS: a test never hangs); WAIT_RC its status
wait_rc() {
	wait_for "$2" not_running "$1" || kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	WAIT_RC=$?
}

# stop_term PID: SIGTERM as bench-rant stops its server; WAIT_RC its status
stop_term() {
	kill -TERM "$1" 2>/dev/null
	wait_rc "$1" 30
}

listening_b() { wait_for 30 udp_listening "$NS_B" 12345; }

field() { report_field "$@"; }

trace_ready() {
	if [ ! -d "$TRACEFS/instances" ]; then
		mount -t tracefs nodev "$TRACEFS" 2>/dev/null || return 1
	fi
	if [ ! -d "$TRACEFS/instances/rant" ]; then
		mkdir "$TRACEFS/instances/rant" || return 1
		MADE_INSTANCE=1
	fi
}

snapshot_ok() {
	[ -e "$TRACEFS/instances/rant/snapshot" ]
}

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

# ------------------------------------------------------- the older README
test_older_readme() {
	local spid
	run_bg o_srv ip netns exec "$NS_B" taskset --cpu-list "$CPU_S" chrt -f 2 "$RANT" --interface "$VETH_B" --threshold 100000 --sw-timestamps
	spid=$BG_PID
	listening_b
	# timeout signals rant and its process group at once: one SIGINT each
	run_fg o_cli ip netns exec "$NS_A" timeout -k 3s --signal=SIGINT "${DUR}s" taskset -c "$CPU_C" chrt -f 2 "$RANT" --interface "$VETH_A" --address "$ADDR_B" --threshold 100000 --sw-timestamps
	if grep -q '^Stopped by: \(peer_\)\?threshold$' "$WORK/o_cli.out"; then
		# a host so loaded (the sanitizer builds beside the guest lab) that a
		# transaction took over the command's 100 ms: rant stops on it, exit
		# 3 (or timeout's 124, its SIGINT coming as rant ends)
		# shellcheck disable=SC2016 # $1 is the inner shell's
		check "older README client: a loaded host breached 100 ms: stopped by it, exit 3 or 124 (got $RC)" \
			bash -c '[[ $1 == 3 || $1 == 124 ]]' _ "$RC"
		stop_term "$spid"
		skip "older README: the timeout and SIGINT checks (the run stopped on a breach first)"
		return
	fi
	expect_eq "older README client (timeout --signal=SIGINT): timed out, so timeout says 124" "$RC" 124
	check "older README client: report printed despite two SIGINTs" has "$WORK/o_cli.out" '^Test is complete\. Duration: [0-9.]+ s$'
	check "older README client: MIN/MAX/AVG/Total Samples line" \
		has "$WORK/o_cli.out" '^MIN: [0-9]+ ns \| MAX: [0-9]+ ns \| AVG: [0-9]+ ns \| Total Samples: [0-9]+$'
	check "older README client: samples > 0" [ "$(field "$WORK/o_cli.out" samples)" -gt 0 ]
	check "older README client: stopped by the signal" has "$WORK/o_cli.out" '^Stopped by: signal$'
	wait_for 30 has "$WORK/o_srv.out" '^Stopped by: fin$'
	stop_term "$spid"
	parse_note "older README client: timeout --signal=SIGINT ${DUR}s taskset chrt rant --interface --address --threshold 100000 --sw-timestamps" \
		"$RC" "$WORK/o_cli.out"
	parse_note "older README server: taskset chrt rant --interface --threshold 100000 --sw-timestamps (SIGTERM)" \
		"$WAIT_RC" "$WORK/o_srv.out"
	expect_eq "older README server: exits 0 on SIGTERM" "$WAIT_RC" 0
	check "older README server: 'Test is complete. Duration: X s'" has "$WORK/o_srv.out" '^Test is complete\. Duration: [0-9.]+ s$'
	check "older README server: --- Response Latency Statistics ---" has "$WORK/o_srv.out" '^--- Response Latency Statistics ---$'
	expect_eq "older README server: as many samples as the client had" \
		"$(field "$WORK/o_srv.out" samples)" "$(field "$WORK/o_cli.out" received)"
	check "older README server: no usage error" hasnt "$WORK/o_srv.err" 'rant: --'
}

# the newer README's usage line: ./rant --interface <iface> [OPTIONS]; --help
test_newer_usage() {
	run_fg usage "$RANT" --help
	parse_note "newer README: ./rant --help" "$RC" "$WORK/usage.out"
	expect_eq "newer README: --help exit 0" "$RC" 0
	check "  ... lists -i, --interface and every earlier option the README shows" \
		python3 -c '
import sys
t = open(sys.argv[1]).read()
sys.exit(not all(o in t for o in ("--interface", "--address", "--threshold", "--trace-marker", "--snapshot", "--duration",
                                  "--warmup", "--sw-timestamps", "--histogram", "--log", "--overflow", "--bucket-size",
                                  "--hugepages", "--budget", "--prefer-busypoll", "--verbose", "--help")))' "$WORK/usage.out"
}

# ------------------------------------------------------- the newer README
test_newer_quick() {
	local spid
	run_bg q_srv nsenter --net="/var/run/netns/$NS_B" "$RANT" -i "$VETH_B" -q
	spid=$BG_PID
	listening_b
	run_fg q_cli nsenter --net="/var/run/netns/$NS_A" taskset -c "$CPU_C" chrt -f 22 \
		"$RANT" -i "$VETH_A" -a "$ADDR_B" --warmup 1000 --duration "$DUR" --threshold 30
	# a 30 us threshold on a shared VM: a breach (exit 3) is as valid as none
	check "newer README quick test: exit 0, or 3 on a breach (got $RC)" test "$RC" = 0 -o "$RC" = 3
	if [ "$RC" = 3 ]; then
		check "quick test: breach opening line 'Round-Trip latency (N ns) exceeds threshold (30000 ns).'" \
			has "$WORK/q_cli.out" '^Round-Trip latency \([0-9]+ ns\) exceeds threshold \(30000 ns\)\.$'
		check "quick test: '<-- where the spike is' on the dominant segment" has "$WORK/q_cli.out" '<-- where the spike is$'
	else
		check "quick test: ran the duration" has "$WORK/q_cli.out" '^Stopped by: duration$'
	fi
	check "quick test: warm-up 1000 excluded and said so" \
		has "$WORK/q_cli.out" '^Warm-up: 1000 pings excluded \(-w 1000'
	stop_term "$spid"
	parse_note "newer README quick test client: nsenter taskset chrt rant -i -a --warmup --duration --threshold 30" \
		"$RC" "$WORK/q_cli.out"
	expect_eq "quick test: reflector exits 0 on SIGTERM" "$WAIT_RC" 0
}

# the newer README's "full test with all features", both sides; -T's
# instance is "rant", the same for every run on this host: under its lock
test_newer_full() {
	host_lock tracefs-rant
	newer_full
	trace_done
}

# trace_done: the instance removed if this suite made it, the lock released
trace_done() {
	if [ "$MADE_INSTANCE" = 1 ] && rmdir "$TRACEFS/instances/rant" 2>/dev/null; then
		MADE_INSTANCE=0
	fi
	host_unlock tracefs-rant
}

newer_full() {
	local spid snap=(--snapshot) note=""
	if ! trace_ready; then
		skip "newer README full test: tracefs instance 'rant' cannot be made here"
		return
	fi
	if ! snapshot_ok; then
		# rant refuses -S where the kernel cannot snapshot (exit 2, one line):
		# check that, then run the lines without --snapshot
		run_fg f_snap nsenter --net="/var/run/netns/$NS_B" "$RANT" -i "$VETH_B" --warmup 1000 --duration 1 \
			--threshold 100 --sw-timestamps --histogram --log "$WORK/response.txt" --trace-marker --snapshot
		expect_eq "full test, --snapshot on a kernel without snapshot support: exit 2" "$RC" 2
		expect_eq "  ... one line on stderr" "$(wc -l <"$WORK/f_snap.err")" 1
		check "  ... naming CONFIG_TRACER_SNAPSHOT" grep -q CONFIG_TRACER_SNAPSHOT "$WORK/f_snap.err"
		check "  ... log not created" [ ! -e "$WORK/response.txt" ]
		snap=()
		note=" (without --snapshot: no kernel support)"
	fi
	run_bg f_srv nsenter --net="/var/run/netns/$NS_B" taskset --cpu-list "$CPU_S" chrt -f 22 \
		"$RANT" -i "$VETH_B" --warmup 1000 --duration $((DUR + 3)) --threshold 100 --sw-timestamps \
		--histogram --log "$WORK/response.txt" --trace-marker "${snap[@]}" --json "$WORK/f_srv.json"
	spid=$BG_PID
	listening_b
	run_fg f_cli nsenter --net="/var/run/netns/$NS_A" taskset -c "$CPU_C" chrt -f 22 \
		"$RANT" -i "$VETH_A" -a "$ADDR_B" --warmup 1000 --duration "$DUR" --threshold 100 --sw-timestamps \
		--histogram --log "$WORK/roundtrip.txt" --trace-marker "${snap[@]}"
	check "full test client$note: exit 0, or 3 on a breach (got $RC)" test "$RC" = 0 -o "$RC" = 3
	check "full test client: start-up line 'Trace marker enabled ...'" \
		has "$WORK/f_cli.err" '^Trace marker enabled for kernel tracing integration$'
	if [ -n "${ASAN_OPTIONS:-}" ]; then
		# an ASan build does not lock its terabytes of shadow memory
		skip "full test client: 'Memory locked in RAM' (sanitizer build: no mlockall)"
	else
		check "full test client: start-up line 'Memory locked in RAM (mlockall successful)'" \
			has "$WORK/f_cli.err" '^Memory locked in RAM \(mlockall successful\)$'
	fi
	check "full test client: Histogram Summary block" has "$WORK/f_cli.out" '^Histogram Summary:$'
	check "full test client: log header as the earlier rant's" \
		has "$WORK/roundtrip.txt" '^SEQ T1_SW T1_KSW T4_KSW T4_SW RTT$'
	wait_rc "$spid" $((DUR + 30))
	parse_note "newer README full test client$note: --warmup --duration --threshold 100 --sw-timestamps --histogram --log --trace-marker --snapshot" \
		"$RC" "$WORK/f_cli.out"
	parse_note "newer README full test server$note: the same with --log response.txt" "$WAIT_RC" "$WORK/f_srv.out"
	check "full test server$note: -d ends it by itself, exit 0 or 3 (got $WAIT_RC)" test "$WAIT_RC" = 0 -o "$WAIT_RC" = 3
	check "full test server: 'Test is complete. Duration: X s'" has "$WORK/f_srv.out" '^Test is complete\. Duration: [0-9.]+ s$'
	check "full test server: Histogram Summary block" has "$WORK/f_srv.out" '^Histogram Summary:$'
	check "full test server: 'Samples   :' line" has "$WORK/f_srv.out" '^  Samples   :  [0-9]+$'
	check "full test server: 'Minimum   :  X us (#seq)'" has "$WORK/f_srv.out" '^  Minimum   :  [0-9]+\.[0-9]{2} us \(#[0-9]+\)$'
	check "full test server: '    50th    :  N (Median)'" has "$WORK/f_srv.out" '^    50th    :  [0-9]+ \(Median\)$'
	check "full test server: '   99.999th :  N' (':' in the column of the others)" has "$WORK/f_srv.out" '^   99\.999th :  [0-9]+$'
	check "full test server: start-up line 'Trace marker enabled ...'" \
		has "$WORK/f_srv.err" '^Trace marker enabled for kernel tracing integration$'
	check "full test server: log header as the earlier rant's" \
		has "$WORK/response.txt" '^SEQ T2_KSW T2_SW T3_SW T3_KSW RESPONSE$'
	py_checks "full test server" '
import json, sys
d = json.loads(open(sys.argv[1]).readline())  # JSON Lines: the first session
w = d["warmup_excluded"]
t("warm-up: 1000 excluded on the reflector", w["total"] == 1000, w)
t("warm-up: all flagged by the client (same -w both sides)", w["flagged_by_client"] == 1000 and w["by_reflector_w"] == 0, w)
' "$WORK/f_srv.json"
}

# two_sigints PID: SIGINT, 50 ms, SIGINT; prints how many ms after the
# first the second was seen delivered: the most its handler ran after the
# first's
two_sigints() {
	local t0
	t0=$(now_us)
	kill -INT "$1"
	sleep 0.05
	kill -INT "$1"
	wait_for 30 delivered "$1" 2 >/dev/null
	echo $((($(now_us) - t0) / 1000))
}

# ------------------------------------------- reflector -w: its own warm-up
test_reflector_warmup() {
	local spid rcvd
	run_bg w_srv ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -w 500 -q --json "$WORK/w_srv.json"
	spid=$BG_PID
	listening_b
	run_fg w_cli ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" -w 300 --count 2000 -q
	expect_eq "reflector -w 500, client -w 300 --count 2000: client exit" "$RC" 0
	wait_for 30 has "$WORK/w_srv.out" '^Stopped by: fin$'
	stop_term "$spid"
	expect_eq "reflector -w: exits 0 on SIGTERM" "$WAIT_RC" 0
	check "reflector -w: the report says how many and why" \
		has "$WORK/w_srv.out" '^Warm-up: 500 pings excluded: 300 flagged by the client.s -w, 200 more by this reflector.s -w 500'
	rcvd=$(field "$WORK/w_srv.out" received)
	expect_eq "reflector -w: samples = received - 500" "$(field "$WORK/w_srv.out" samples)" "$((${rcvd:-0} - 500))"
	expect_eq "reflector -w: client samples unaffected (2000)" "$(field "$WORK/w_cli.out" samples)" 2000
	check "client -w: the report says how many and why" has "$WORK/w_cli.out" '^Warm-up: 300 pings excluded \(-w 300'
	py_checks "reflector -w json" '
import json, sys
d = json.load(open(sys.argv[1]))
w = d["warmup_excluded"]
t("total 500 = 300 by the client + 200 by -w", (w["total"], w["flagged_by_client"], w["by_reflector_w"], w["w"]) == (500, 300, 200, 500), w)
t("packets.warmup = 500", d["packets"]["warmup"] == 500)
' "$WORK/w_srv.json"
}

# ------------------------------- SIGTERM during a session; -d with no client
test_reflector_stop() {
	local spid cpid gap
	run_bg t_srv ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -q
	spid=$BG_PID
	listening_b
	run_bg t_cli ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" -d 120 -q
	cpid=$BG_PID
	# mid-session: the reflector has answered 100 pings
	udp_wait "$NS_B" OutDatagrams 100
	stop_term "$spid"
	expect_eq "SIGTERM mid-session: reflector exits 0" "$WAIT_RC" 0
	check "SIGTERM mid-session: the session's report printed" has "$WORK/t_srv.out" '^Test is complete\. Duration: [0-9.]+ s$'
	check "SIGTERM mid-session: samples > 0" [ "$(field "$WORK/t_srv.out" samples)" -gt 0 ]
	check "SIGTERM mid-session: stopped by the signal" has "$WORK/t_srv.out" '^Stopped by: signal$'
	kill -INT "$cpid" 2>/dev/null
	wait_rc "$cpid" 30
	# two SIGINTs 50 ms apart (what timeout(1) does, but never coalesced by
	# the kernel): one request to stop, so the report is printed
	run_bg t2_srv ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -q
	spid=$BG_PID
	listening_b
	run_bg t2_cli ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" -d 120 -q
	cpid=$BG_PID
	udp_wait "$NS_B" OutDatagrams 100
	gap=$(two_sigints "$cpid")
	wait_rc "$cpid" 30
	if [ "$gap" -ge 400 ]; then
		# rant's rule is half a second: a host this loaded tests the other side of it
		skip "two SIGINTs 50 ms apart: the host delivered the second $gap ms after the first"
	else
		expect_eq "two SIGINTs 50 ms apart: exit 0" "$WAIT_RC" 0
		check "two SIGINTs 50 ms apart: the report is printed" has "$WORK/t2_cli.out" '^Test is complete\. Duration: [0-9.]+ s$'
	fi
	stop_term "$spid"
	run_fg d_srv ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -d 1 -H -q
	expect_eq "reflector -d 1, no client: exits 0 by itself" "$RC" 0
	check "reflector -d, no client: still 'Test is complete. Duration: X s'" \
		has "$WORK/d_srv.out" '^Test is complete\. Duration: 1\.[0-9]+ s$'
	check "reflector -d, no client: 'Total Samples: 0'" has "$WORK/d_srv.out" 'Total Samples: 0$'
	check "reflector -d, no client: says no client came" has "$WORK/d_srv.out" '^No session: no client came$'
}

# --------------------------- every earlier option accepted on the reflector
test_reflector_options() {
	local spid
	# -t -s -H -l -T -C -L -p -B -P -v -w -d (-S: see the full test; -G: needs hugepages)
	# -t 2 s: a threshold no loaded host's response reaches (the sanitizer builds included)
	run_bg ro_srv ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -t 2000000 -C -s -H -l "$WORK/ro.log" -L 0 \
		-p 50 -B 1 -P -v -w 100 -d 30 -o 100 -b 1 --json "$WORK/ro.json"
	spid=$BG_PID
	if ! listening_b; then
		not_ok "reflector with -t -C -s -H -l -L -p -B -P -v -w -d -o -b: did not start"
		show ro_srv
		return
	fi
	run_fg ro_cli ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --count 500 -q
	expect_eq "reflector with every earlier option: client exit" "$RC" 0
	wait_for 30 has "$WORK/ro_srv.out" '^Stopped by: fin$'
	stop_term "$spid"
	expect_eq "reflector with every earlier option: exit 0" "$WAIT_RC" 0
	check "  ... no usage error" hasnt "$WORK/ro_srv.err" '^rant: --'
	expect_eq "  ... -w 100 on top of the client's 0" "$(field "$WORK/ro_srv.out" samples)" 400
	check "  ... -o 100 -b 1: the earlier rant's 1 us buckets to 100 us" \
		python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["metrics"]["response"]["histogram"]; sys.exit(not (h["bucket_ns"]==1000 and h["bound_ns"]==100000))' "$WORK/ro.json"
	check "  ... the log was written" has "$WORK/ro.log" '^SEQ T2_KSW T2_SW T3_SW T3_KSW RESPONSE$'
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

# no_tx_traced LABEL STRACE: a side traced (recvmsg, recvmmsg, setsockopt)
# that asked for no TX stamp and read none
no_tx_traced() {
	expect_eq "$1: no TX stamp read (no receive on the error queue)" "$(grep -c 'MSG_ERRQUEUE' "$2")" 0
	check "$1: SO_TIMESTAMPING without TX flags" \
		python3 -c '
import re, sys
s = open(sys.argv[1]).read()
m = re.findall(r"SO_TIMESTAMPING\w*, \[([^\]]+)\]", s)
# strace prints the flags as a number or by name; TX_HARDWARE|TX_SOFTWARE = 3
ok = m and all((int(x) & 3) == 0 if x.isdigit() else "TX_" not in x for x in m)
sys.exit(0 if ok else 1)' "$2"
}

# rx_ioctl_traced LABEL STRACE SOCKETS: a --client-no-tx-ts client traced
# (also ioctl, recvfrom) read its pongs by recvfrom, never with their control
# data, and each datagram's stamp by one SIOCGSTAMPNS, after one per socket
# (SOCKETS) at set-up that found nothing read yet (ENOENT)
rx_ioctl_traced() {
	check "$1: pongs read by recvfrom, T4 by one SIOCGSTAMPNS each, one ENOENT per socket first" \
		python3 -c '
import re, sys
s = open(sys.argv[1]).read()
rf = len(re.findall(r"recvfrom\([0-9]+, \"RANT.* = [1-9][0-9]*$", s, re.M))
io = len(re.findall(r"SIOCGSTAMPNS\w*, [^)]*\) = 0$", s, re.M))
en = len(re.findall(r"SIOCGSTAMPNS\w*, [^)]*\) = -1 ENOENT", s, re.M))
rm = len(re.findall(r"recvmsg\([0-9]+, \{[^\n]*RANT", s))
ok = rf > 0 and io == rf and en == int(sys.argv[2]) and rm == 0
print("recvfrom %d, SIOCGSTAMPNS %d (+%d ENOENT), recvmsg of pongs %d" % (rf, io, en, rm), file=sys.stderr)
sys.exit(0 if ok else 1)' "$2" "$3"
}

# --client-no-tx-ts against a -N reflector: no TX stamp asked for or read on
# either side; the client's rtt is T4 wire - T1_SW, said so everywhere, and
# every row's value is that difference of its own stamps
test_client_no_tx() {
	local spid
	run_bg nc_srv ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -N --once
	spid=$BG_PID
	listening_b
	run_fg nc_cli ip netns exec "$NS_A" "${STRACE_ENV[@]}" strace -f -qq -e trace=recvmsg,recvmmsg,setsockopt,ioctl,recvfrom \
		-o "$WORK/nc_strace" "$RANT" -i "$VETH_A" -a "$ADDR_B" --client-no-tx-ts --count 300 -w 10 \
		--json "$WORK/nc.json" -l "$WORK/nc.csv" --log-format csv
	expect_eq "--client-no-tx-ts: client exit" "$RC" 0
	wait_rc "$spid" 30
	no_tx_traced "--client-no-tx-ts" "$WORK/nc_strace"
	rx_ioctl_traced "--client-no-tx-ts" "$WORK/nc_strace" 1
	check "--client-no-tx-ts: the report says the rtt is app-send based" \
		has "$WORK/nc_cli.out" '^RTT: T4 wire - T1_SW \(app send; --client-no-tx-ts: no TX stamps\), not wire-to-wire$'
	check "--client-no-tx-ts: the decomposition row is labelled so" \
		has "$WORK/nc_cli.out" '^rtt \(T4 wire-T1_SW, no TX stamps\) +300 '
	check "--client-no-tx-ts: never called wire-to-wire ('T4-T1 wire' absent)" hasnt "$WORK/nc_cli.out" 'rtt \(T4-T1 wire\)'
	check "--client-no-tx-ts: the missing T1 and T3 stamps, each side's by request" has "$WORK/nc_cli.out" \
		"^Missing stamps: T1_KSW 300; T3_KSW 300 \\(no TX stamps, by request: this client's --client-no-tx-ts and the reflector's -N\\)$"
	py_checks "--client-no-tx-ts json and log" '
import json, sys
from decimal import Decimal
d = json.load(open(sys.argv[1])); m = d["metrics"]; p = d["packets"]
t("tx_stamps false, rtt_basis app send", d["tx_stamps"] is False and d["rtt_basis"] == "app_send_T4_wire-T1_SW",
  (d["tx_stamps"], d["rtt_basis"]))
t("rtt samples = received - warm-up = 300", m["rtt"]["samples"] == p["received"] - p["warmup"] == 300,
  (m["rtt"]["samples"], p))
t("no metric that needs the T1 wire stamp", not {"client_tx_stack", "forward", "network"} & set(m), sorted(m))
t("no unmatched TX stamps", p["unmatched_tx_stamps"] == 0, p)
r, a = m["rtt"], m["app_rtt"]
rp, ap = r["percentiles_ns"], a["percentiles_ns"]
t("rtt: min <= p50 <= p99 <= max", r["min_ns"] <= rp["50"] <= rp["99"] <= r["max_ns"], r)
t("rtt <= app rtt at min, p50, p99 and max (T4 wire before T4_SW)",
  r["min_ns"] <= a["min_ns"] and rp["50"] <= ap["50"] and rp["99"] <= ap["99"] and r["max_ns"] <= a["max_ns"],
  (r["min_ns"], a["min_ns"], rp["50"], ap["50"]))
lines = open(sys.argv[2]).read().splitlines()
t("log facts (its last line) say so", " rtt=T4_wire-T1_SW(app_send,--client-no-tx-ts) " in lines[-1], lines[-1][:160])
h = lines[0].split(",")
t("log columns: rtt_app_tx_ns, no t1 wire column", "rtt_app_tx_ns" in h and "rtt_ns" not in h and "t1_ksw" not in h, h)
ns = lambda s: int(Decimal(s) * 1000000000)
rows = [dict(zip(h, l.split(","))) for l in lines[1:-1]]
ok = [x for x in rows if x["status"] == "ok"]
t("log: 300 ok rows", len(ok) == 300, len(ok))
bad = [x["seq"] for x in ok if int(x["rtt_app_tx_ns"]) != ns(x["t4_ksw"]) - ns(x["t1_sw"])]
t("log: every row rtt = t4 wire - t1_sw", not bad, bad[:5])
' "$WORK/nc.json" "$WORK/nc.csv"
	run_fg nc_an "$RANT" --analyze "$WORK/nc.csv"
	expect_eq "--client-no-tx-ts: --analyze of its log: exit 2" "$RC" 2
	check "--client-no-tx-ts: --analyze says why, in one line" \
		grep -q '^rant: --analyze: .*nc.csv:1: a client log written with --client-no-tx-ts' "$WORK/nc_an.err"
}

# --client-no-tx-ts paced, with classes, and both (each against a -N
# reflector, traced): no TX stamp asked for or read, every ping sent
# answered and counted, its rtt sampled, the T1 wire stamp of each measured
# one missing by request, none unmatched
test_client_no_tx_modes() {
	local spid mode opts
	for mode in paced classes classes-paced; do
		case $mode in
		paced) opts=(--interval 500) ;;
		classes) opts=(--tos "0,32") ;;
		classes-paced) opts=(--tos "0,32" --interval 500) ;;
		esac
		run_bg "ncm_$mode-r" ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -N --once
		spid=$BG_PID
		listening_b
		run_fg "ncm_$mode" ip netns exec "$NS_A" "${STRACE_ENV[@]}" strace -f -qq -e trace=recvmsg,recvmmsg,setsockopt,ioctl,recvfrom \
			-o "$WORK/ncm_$mode.st" "$RANT" -i "$VETH_A" -a "$ADDR_B" --client-no-tx-ts --count 200 -w 5 \
			--timeout 3000 "${opts[@]}" --json "$WORK/ncm_$mode.json" -q
		expect_eq "--client-no-tx-ts $mode: client exit" "$RC" 0
		wait_rc "$spid" 30
		no_tx_traced "--client-no-tx-ts $mode" "$WORK/ncm_$mode.st"
		rx_ioctl_traced "--client-no-tx-ts $mode" "$WORK/ncm_$mode.st" "$([ "$mode" = paced ] && echo 1 || echo 2)"
		py_checks "--client-no-tx-ts $mode" '
import json, sys
d = json.load(open(sys.argv[1])); p = d["packets"]; m = d["metrics"]
t("sent = received", p["sent"] == p["received"] > 0, p)
t("rtt samples = received - warm-up", m["rtt"]["samples"] == p["received"] - p["warmup"], (m["rtt"]["samples"], p))
t("T1 wire missing for every measured ping", d["missing_stamps"]["T1_KSW"] == p["sent"] - p["warmup"], (d["missing_stamps"], p))
t("no unmatched TX stamps", p["unmatched_tx_stamps"] == 0, p)
t("rtt_basis app send", d["rtt_basis"] == "app_send_T4_wire-T1_SW", d["rtt_basis"])
rows = d.get("classes") or []
t("class rows: no client tx stack (not measured), an app rtt with samples", all(
  "client_tx_stack" not in r and r["app_rtt"]["samples"] > 0 for r in rows), rows[:1])
' "$WORK/ncm_$mode.json"
		if [[ $mode == classes* ]]; then
			# shellcheck disable=SC2016 # $1 is the inner shell's
			check "--client-no-tx-ts $mode: the class table shows no tx stack row (not measured)" \
				bash -c '! grep -q "tx stack" "$1" && grep -q "app rtt T4_SW-T1_SW; ns" "$1"' _ "$WORK/ncm_$mode.out"
		fi
	done
	# no reflector: every ping draws an ICMP port unreachable (as many as
	# the kernel's ICMP rate limit lets through), a socket error that wakes
	# the classes' poll with POLLERR; it is counted, and the error queue,
	# where no TX stamp can be, is still never read
	run_fg ncm_refused ip netns exec "$NS_A" "${STRACE_ENV[@]}" strace -f -qq -e trace=recvmsg,recvmmsg,recvfrom \
		-o "$WORK/ncm_refused.st" "$RANT" -i "$VETH_A" -a "$ADDR_B" --client-no-tx-ts --count 20 \
		--interval 10000 --timeout 100 --tos "0,32" --json "$WORK/ncm_refused.json" -q
	if [ "$(json_get "$WORK/ncm_refused.json" packets.port_unreachable 2>/dev/null)" -gt 0 ] 2>/dev/null; then
		expect_eq "--client-no-tx-ts classes, port unreachable: the error queue not read" \
			"$(grep -c 'MSG_ERRQUEUE' "$WORK/ncm_refused.st")" 0
		check "--client-no-tx-ts classes, port unreachable: each read as the socket's error" \
			grep -q 'recvfrom(.*ECONNREFUSED' "$WORK/ncm_refused.st"
	else
		skip "--client-no-tx-ts classes, port unreachable: no ICMP error came (the ICMP rate limit)"
	fi
	# against a reflector that stamps: only the client's own stamps are missing, and said so
	run_bg ncm_full-r ip netns exec "$NS_B" "$RANT" -i "$VETH_B" --once
	spid=$BG_PID
	listening_b
	run_fg ncm_full ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --client-no-tx-ts --count 100 \
		--json "$WORK/ncm_full.json"
	expect_eq "--client-no-tx-ts, reflector without -N: client exit" "$RC" 0
	wait_rc "$spid" 30
	check "--client-no-tx-ts, reflector without -N: only T1 missing, the client's option named" has "$WORK/ncm_full.out" \
		'^Missing stamps: T1_KSW 100 \(no TX stamps of the pings, by request: --client-no-tx-ts\)$'
	expect_eq "--client-no-tx-ts, reflector without -N: its response measured" \
		"$(jget "$WORK/ncm_full.json" metrics.response.samples)" 100
	expect_eq "--client-no-tx-ts, reflector without -N: response_basis wire" \
		"$(jget "$WORK/ncm_full.json" response_basis)" wire_T3-T2
}

# ------------------------------------------------ -N, -R, -F, -2, -N on emit
test_later_flags() {
	local spid rp
	run_bg n_srv ip netns exec "$NS_B" strace -f -qq -e trace=recvmsg,recvmmsg,setsockopt -o "$WORK/n_strace" \
		"$RANT" -i "$VETH_B" -N -l "$WORK/n.log" --json "$WORK/n.json" -H
	spid=$BG_PID
	listening_b
	run_fg n_cli ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --count 300 -q
	expect_eq "-N reflector: client exit" "$RC" 0
	wait_for 30 has "$WORK/n_srv.out" '^Stopped by: fin$'
	# rant is strace's child: signal rant itself
	rp=$(pgrep -P "$spid" | head -n 1)
	kill -TERM "${rp:-$spid}" 2>/dev/null
	wait_rc "$spid" 30
	check "-N: report says response is app-send based" \
		has "$WORK/n_srv.out" '^Response: T3_SW - T2 wire \(app send; -N: no TX stamps\), not wire-to-wire$'
	check "-N: the decomposition row is labelled so" has "$WORK/n_srv.out" '^response \(T3_SW-T2 wire, -N\)'
	check "-N: never called wire-to-wire ('T3-T2 wire' absent)" hasnt "$WORK/n_srv.out" 'response \(T3-T2 wire\)'
	check "-N: log header RESPONSE_APP_TX, no T3 wire column" has "$WORK/n.log" '^SEQ T2_KSW T3_SW RESPONSE_APP_TX$'
	check "-N: no missing-stamp counts (none asked for)" has "$WORK/n_srv.out" '^Missing stamps: none$'
	expect_eq "-N: samples = 300" "$(field "$WORK/n_srv.out" samples)" 300
	no_tx_traced "-N" "$WORK/n_strace"
	py_checks "-N json" '
import json, sys
d = json.load(open(sys.argv[1]))
t("response_basis says app send", d["response_basis"] == "app_send_T3_SW-T2_wire", d["response_basis"])
t("tx_stamps false", d["tx_stamps"] is False)
t("response samples 300", d["metrics"]["response"]["samples"] == 300)
' "$WORK/n.json"
	# without -N the same JSON says wire
	check "without -N: response_basis wire (from the full test)" \
		python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readline()); sys.exit(d["response_basis"]!="wire_T3-T2")' "$WORK/ro.json"

	test_client_no_tx
	test_client_no_tx_modes

	run_fg r_cli ip netns exec "$NS_A" "$RANT" -a "$ADDR_B" -R --count 10 --timeout 100 --json "$WORK/r.json" -q
	check "-R: wire stamps software" python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["timestamps"]["wire"]!="software")' "$WORK/r.json"
	run_fg r2 "$RANT" -R --timestamps hw -a 127.0.0.1 --count 1
	expect_eq "-R with --timestamps hw: exit 2" "$RC" 2
	run_fg t2 "$RANT" -2
	expect_eq "-2: refused, exit 2" "$RC" 2
	expect_eq "-2: one line" "$(wc -l <"$WORK/t2.err")" 1
	check "-2: says why (3 CPUs) and what instead" grep -q '3 CPUs.*run without -2' "$WORK/t2.err"

	run_bg fa_srv ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -F --json "$WORK/fa.json"
	spid=$BG_PID
	listening_b
	run_fg fa_cli ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" -N --count 300 -q
	expect_eq "-F reflector, -N client: client exit 0" "$RC" 0
	check "-N on the client: one line says it is a reflector option" \
		grep -q '^rant: --no-tx-ts: a reflector option' "$WORK/fa_cli.err"
	wait_for 30 has "$WORK/fa_srv.out" '^Stopped by: fin$'
	stop_term "$spid"
	expect_eq "-F: exits 0 on SIGTERM" "$WAIT_RC" 0
	check "-F: one line says what it is here" grep -q '^rant: --fast-path: here it is --spin with -N' "$WORK/fa_srv.err"
	check "-F: spins, no TX stamps" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["tx_stamps"] is False and d["metrics"]["response"]["samples"]==300))' "$WORK/fa.json"
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

# ---------------------------------------------------- bench-rant, as it runs
# server: [nsenter] [chrt -f 2] [taskset -c CPU] rant -i IF -p 50 -B 1 -P -w 10000 -H -N
# client: [nsenter] [chrt -f 2] [taskset -c CPU] rant -i IF -a IP -d 60 -p 50 -B 1 -P -w 10000 -H
# (stdout and stderr together into one file each; -d shortened, and -w
# 10000 to 1000: pings of a host loaded by other suites still outnumber it)
bench_pair() {
	local tag=$1 spid
	shift
	nsenter --net="/var/run/netns/$NS_B" chrt -f 2 taskset -c "$CPU_S" \
		"$RANT" -i "$VETH_B" -p 50 -B 1 -P -w 1000 -H -N "$@" >"$WORK/$tag-server-result.txt" 2>&1 &
	spid=$!
	BG_PIDS+=("$spid")
	listening_b
	nsenter --net="/var/run/netns/$NS_A" chrt -f 2 taskset -c "$CPU_C" \
		"$RANT" -i "$VETH_A" -a "$ADDR_B" -d "$BENCH_D" -p 50 -B 1 -P -w 1000 -H "${CLIENT_EXTRA[@]}" \
		>"$WORK/$tag-client-result.txt" 2>&1
	RC=$?
	wait_for 30 grep -q '^Stopped by: fin$' "$WORK/$tag-server-result.txt"
	stop_term "$spid"
}

test_bench_rant() {
	: "${BENCH_D:=3}"
	CLIENT_EXTRA=()
	bench_pair exact
	parse_note "bench-rant client, default flags" "$RC" "$WORK/exact-client-result.txt"
	parse_note "bench-rant server, default flags (SIGTERM)" "$WAIT_RC" "$WORK/exact-server-result.txt"
	expect_eq "bench-rant client: exit 0 (non-zero is a failed run)" "$RC" 0
	expect_eq "bench-rant server: SIGTERM ends it with exit 0" "$WAIT_RC" 0
	check "bench-rant server: no usage error" hasnt "$WORK/exact-server-result.txt" '^rant: --'
	py_checks "bench-rant exact run" '
import json, subprocess, sys
for side, f in (("client", sys.argv[1]), ("server", sys.argv[2])):
    r = json.loads(subprocess.check_output(["python3", sys.argv[3], "parse", f]))
    t(side + ": duration", r.get("duration", 0) > 0, r)
    t(side + ": samples > 0", r.get("samples", 0) > 0, r.get("samples"))
    t(side + ": 7 percentiles", len(r["pct"]) == 7, r["pct"])
    t(side + ": min <= p50 <= p99 <= max", r["min"] <= r["pct"]["50"] * 1000 + 999 and r["pct"]["50"] <= r["pct"]["99"] and r["pct"]["99"] * 1000 <= r["max"], r)
    t(side + ": Minimum/Maximum/Average parsed", all(k in r for k in ("minimum", "maximum", "average")))
' "$WORK/exact-client-result.txt" "$WORK/exact-server-result.txt" "$PARSE"
	# the same pair with --json added on both sides: the numbers must agree
	CLIENT_EXTRA=(--json "$WORK/bc.json")
	bench_pair json --json "$WORK/bs.json"
	expect_eq "bench-rant + --json client: exit 0" "$RC" 0
	expect_eq "bench-rant + --json server: exit 0 on SIGTERM" "$WAIT_RC" 0
	py_checks "bench-rant client" 'import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")' \
		"$PARSE" check "$WORK/json-client-result.txt" "$WORK/bc.json" "round-trip:"
	py_checks "bench-rant server" 'import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")' \
		"$PARSE" check "$WORK/json-server-result.txt" "$WORK/bs.json" "response:"
	check "bench-rant server: reflector warm-up 1000 said" \
		grep -Eq '^Warm-up: 1000 pings excluded: 1000 flagged by the client' "$WORK/json-server-result.txt"
}

# parse_note LABEL RC FILE: for the record, a comment with the exit status
# and what bench-rant's post-processing takes from FILE
parse_note() {
	local r
	r=$(python3 "$PARSE" parse "$3" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("duration %s, samples %s, %d percentiles, Minimum/Maximum/Average %s" % (d.get("duration", "-"),
      d.get("samples", "-"), len(d["pct"]), "yes" if all(k in d for k in ("minimum", "maximum", "average")) else "no"))' 2>/dev/null)
	echo "# ran: $1 -> exit $2; parsed: ${r:-nothing}"
}

# parses FILE: bench-rant's parser finds a duration, samples > 0, the 7
# percentiles and Minimum/Maximum/Average
parses() {
	python3 "$PARSE" parse "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(not (d.get("duration", 0) > 0 and d.get("samples", 0) > 0 and len(d["pct"]) == 7 and
              all(k in d for k in ("minimum", "maximum", "average"))))'
}

# bench_flag LABEL SERVER-FLAGS CLIENT-FLAGS [RCS]: bench-rant's pair with
# optional flags added as it adds them; the client's exit must be one of
# RCS (default 0: anything else is a failed run for crucible), the server's
# (SIGTERM) too, and both result files must parse
bench_flag() {
	local label=$1 rcs=${4:-0} tag
	BENCH_N=$((BENCH_N + 1))
	tag=opt$BENCH_N
	# shellcheck disable=SC2206 # flags as words
	CLIENT_EXTRA=($3)
	# shellcheck disable=SC2086 # flags as words
	bench_pair "$tag" $2
	parse_note "bench-rant server + $label ($2)" "$WAIT_RC" "$WORK/$tag-server-result.txt"
	parse_note "bench-rant client + $label ($3)" "$RC" "$WORK/$tag-client-result.txt"
	check "bench-rant + $label: client exit in {$rcs} (got $RC), server exit in {$rcs} (got $WAIT_RC)" \
		test "${rcs/$RC/}" != "$rcs" -a "${rcs/$WAIT_RC/}" != "$rcs"
	check "bench-rant + $label: both result files parse" parses "$WORK/$tag-client-result.txt"
	check "bench-rant + $label: ... the server's too" parses "$WORK/$tag-server-result.txt"
	LAST_TAG=$tag
}

# bench_refused LABEL SIDE FLAGS... PATTERN: a flag this host cannot honour
# (no PMU, no snapshot support, 2 CPUs): that role exits 2 at once with one
# line saying why, as documented
bench_refused() {
	local label=$1 side=$2 pat=${*: -1} args=("${@:3:$#-3}") out=$WORK/refused-$BENCH_N.txt
	BENCH_N=$((BENCH_N + 1))
	if [ "$side" = server ]; then
		timeout -k 5 30 nsenter --net="/var/run/netns/$NS_B" chrt -f 2 taskset -c "$CPU_S" \
			"$RANT" -i "$VETH_B" -p 50 -B 1 -P -w 10000 -H -N "${args[@]}" >"$out" 2>&1
	else
		timeout -k 5 30 nsenter --net="/var/run/netns/$NS_A" chrt -f 2 taskset -c "$CPU_C" \
			"$RANT" -i "$VETH_A" -a "$ADDR_B" -d "$BENCH_D" -p 50 -B 1 -P -w 10000 -H "${args[@]}" >"$out" 2>&1
	fi
	RC=$?
	echo "# ran: bench-rant $side + $label (${args[*]}) -> exit $RC; $(head -c 200 "$out" | head -n 1)"
	expect_eq "bench-rant $side + $label: refused here, exit 2" "$RC" 2
	check "  ... one line saying why ($pat)" test "$(wc -l <"$out")" = 1 -a -n "$(grep -E "$pat" "$out")"
}

# every optional flag bench-rant adds, on the roles it adds it to
test_bench_optional() {
	: "${BENCH_D:=4}"
	BENCH_N=0
	bench_flag "-C alone" "-C" "-C"
	expect_eq "  ... -C alone: one line each side says it has no effect" \
		"$(cat "$WORK/$LAST_TAG"-*-result.txt | grep -c '^rant: --continue: no effect without --threshold (accepted')" 2
	bench_flag "-L alone" "-L 50" "-L 50"
	expect_eq "  ... -L alone: one line each side says it has no effect" \
		"$(cat "$WORK/$LAST_TAG"-*-result.txt | grep -c '^rant: --log-threshold: no effect without --log (accepted')" 2
	# a 100 ms threshold: a breach on this shared VM is rare but legitimate (3)
	bench_flag "-t 100000" "-t 100000" "-t 100000" "0 3"
	bench_flag "-t 100000 -C" "-t 100000 -C" "-t 100000 -C" "0 3"
	bench_flag "-t 100000 -L 50 -l" "-t 100000 -L 50 -l $WORK/bsrv.log" "-t 100000 -L 50 -l $WORK/bcli.log" "0 3"
	check "  ... -l: both logs written in the earlier format" \
		test -n "$(grep -l '^SEQ T2_KSW' "$WORK/bsrv.log")" -a -n "$(grep -l '^SEQ T1_KSW' "$WORK/bcli.log")"
	bench_flag "-R" "-R" "-R"
	bench_flag "-v" "-v" "-v"
	expect_eq "  ... -v: status lines asked for, so in the result files" \
		"$([ "$(grep -c 'rate .*/s' "$WORK/$LAST_TAG-client-result.txt")" -ge 1 ] && echo yes)" yes
	bench_flag "-o 200" "-o 200" "-o 200"
	bench_flag "-b 2" "-b 2" "-b 2"
	bench_flag "-F (server)" "-F" ""
	# -T and -S use the tracefs instance "rant", the same for every run on
	# this host: under its lock (another suite removing it between two
	# runs here made them exit 2)
	host_lock tracefs-rant
	if trace_ready; then
		bench_flag "-T" "-T" "-T"
	else
		skip "bench-rant -T: no tracefs instance here"
	fi
	bench_flag "all that run here" "-t 100000 -C -L 50 -T -R -v -l $WORK/ball.log -o 200 -b 2 -F" \
		"-t 100000 -C -L 50 -T -R -v -l $WORK/ball-c.log -o 200 -b 2" "0 3"
	if snapshot_ok; then
		bench_flag "-S" "-S" "-S"
	else
		bench_refused "-S" server -S CONFIG_TRACER_SNAPSHOT
		bench_refused "-S" client -S CONFIG_TRACER_SNAPSHOT
	fi
	trace_done
	bench_refused "-2" server -2 '3 CPUs'
	if [ -d /sys/bus/event_source/devices/cpu ]; then
		bench_flag "-M" "-M" "-M"
	else
		bench_refused "-M" server -M 'no hardware PMU'
		bench_refused "-M" client -M 'no hardware PMU'
	fi
	# -G: the pages reserved for the pair if this host has none free
	if [ -w "$HUGE" ] && [ "$(hugepages_free)" -lt 16 ]; then
		HUGE_OLD=$(cat "$HUGE")
		echo $((HUGE_OLD + 16)) >"$HUGE"
	fi
	if [ "$(hugepages_free)" -ge 16 ]; then
		bench_flag "-G" "-G" "-G"
	else
		bench_refused "-G" server -G 'nr_hugepages'
		bench_refused "-G" client -G 'nr_hugepages'
	fi
	if [ -n "$HUGE_OLD" ]; then
		echo "$HUGE_OLD" >"$HUGE"
		HUGE_OLD=
	fi
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

need_root "net-compat"
if ! ns_setup; then
	not_ok "namespace setup"
	finish
	exit 1
fi

test_plain_build
test_plain_run
test_no_args
test_older_readme
test_newer_usage
test_newer_quick
test_newer_full
test_reflector_warmup
test_reflector_stop
test_reflector_options
test_alone_flags
test_reflector_continue
test_no_reflector
test_json_lines
test_status_lines
test_later_flags
test_missing_line
test_bench_rant
test_bench_optional
test_taprio
test_pktgen
test_histfile
finish
