#!/bin/bash
# make bench: rant against sockperf ping-pong on the same veth pair.
#
# Two namespaces joined by a veth pair (tests/lib.sh).  Every server runs on
# CPU 1 and every client on CPU 0 (taskset).  rant and sockperf runs
# alternate, ROUNDS rounds of DUR seconds each, in two pairings:
#   defaults  rant -s (blocking receive)      sockperf (epoll/recvfrom, 10 ms timeout)
#   spin      rant -s --spin on both ends     sockperf --nonblocked --timeout 0 on both ends
# Payload: SIZE bytes (rant --size, sockperf -m).  Each cell of the table is
# the median across rounds; the raw per-run numbers go to bench-results.txt
# in the work directory (printed; copied to BENCH_OUT if set).
#
#   sudo make bench                 ROUNDS=3 DUR=5 SIZE=64
#   sudo ROUNDS=1 DUR=3 tests/bench.sh
#   sudo tests/bench.d/profile.sh    syscalls, sleeps and CPU per transaction of both tools
#
# Exit 0 when every run worked, 1 otherwise (or when not root).

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${ROUNDS:=3}"
: "${DUR:=5}"
: "${SIZE:=64}"
: "${BENCH_OUT:=}"
CPU_SERVER=1
CPU_CLIENT=0

if ! is_root; then
	echo "bench.sh: must run as root (it creates network namespaces and a veth pair): sudo make bench" >&2
	exit 1
fi
for v in ROUNDS DUR SIZE; do
	if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
		echo "bench.sh: $v must be a positive whole number (got '${!v}')" >&2
		exit 1
	fi
done
if [ "$SIZE" -lt 64 ]; then
	echo "bench.sh: SIZE must be at least 64 (rant's smallest --size)" >&2
	exit 1
fi
if [ ! -x "$RANT" ]; then
	echo "bench.sh: $RANT not built: run make" >&2
	exit 1
fi
for t in taskset python3 ss; do
	if ! command -v "$t" >/dev/null; then
		echo "bench.sh: $t not found" >&2
		exit 1
	fi
done
if ! command -v sockperf >/dev/null; then
	echo "sockperf not found: apt-get install -y sockperf"
	if ! apt-get install -y sockperf >"$WORK/apt.log" 2>&1 || ! command -v sockperf >/dev/null; then
		tail -n 20 "$WORK/apt.log" >&2
		echo "bench.sh: could not install sockperf" >&2
		exit 1
	fi
fi

RESULTS=$WORK/bench-results.txt
FAILED=0
RUNS=0
PORT=20000

# proc_sample PID: "VmHWM_KiB nonvoluntary_ctxt_switches" of a live process; fails once it is gone
proc_sample() {
	awk '/^VmHWM:/ { h = $2 } /^nonvoluntary_ctxt_switches:/ { n = $2 }
		END { if (h == "") exit 1; print h, n + 0 }' "/proc/$1/status" 2>/dev/null
}

# proc_watch PID FILE: sample PID every 0.2 s while it lives; FILE keeps the peak
# RSS (VmHWM) and the last count of involuntary context switches (preemptions)
proc_watch() {
	local s
	echo "0 0" >"$2"
	while s=$(proc_sample "$1"); do
		echo "$s" >"$2"
		sleep 0.2
	done
}

# stop_within SECONDS PID: wait for PID to exit by itself, else TERM then KILL it;
# sets STOP_RC to its exit status
stop_within() {
	local i
	for ((i = 0; i < $1 * 20; i++)); do
		kill -0 "$2" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$2" 2>/dev/null; then
		kill -TERM "$2" 2>/dev/null
		for ((i = 0; i < 40; i++)); do
			kill -0 "$2" 2>/dev/null || break
			sleep 0.05
		done
		kill -KILL "$2" 2>/dev/null
	fi
	wait "$2"
	STOP_RC=$?
}

fail_run() {
	echo "FAILED: $*" >&2
	FAILED=$((FAILED + 1))
}

# launch NS CPU OUT ERR HWM command...: start a pinned process in NS whose
# VmHWM is watched; ERR "-" sends stderr to OUT.  Sets LAUNCH_PID and
# LAUNCH_WATCH (the watcher's pid).
launch() {
	local ns=$1 cpu=$2 out=$3 err=$4 hwm=$5
	shift 5
	if [ "$err" = - ]; then
		ip netns exec "$ns" taskset -c "$cpu" "$@" >"$out" 2>&1 &
	else
		ip netns exec "$ns" taskset -c "$cpu" "$@" >"$out" 2>"$err" &
	fi
	LAUNCH_PID=$!
	BG_PIDS+=("$LAUNCH_PID")
	proc_watch "$LAUNCH_PID" "$hwm" &
	LAUNCH_WATCH=$!
}

# start_server TAG OUT ERR HWM command...: launch on the server CPU and wait
# until PORT listens; if it never does, the run fails and 1 is returned
start_server() {
	local tag=$1 out=$2 err=$3 hwm=$4
	shift 4
	launch "$NS_B" "$CPU_SERVER" "$out" "$err" "$hwm" "$@"
	if ! wait_for 5 udp_listening "$NS_B" "$PORT"; then
		[ "$err" = - ] && err=$out
		fail_run "$tag: server did not start: $(tail -n 3 "$err")"
		stop_within 0 "$LAUNCH_PID"
		wait "$LAUNCH_WATCH"
		return 1
	fi
}

# rant_run PAIRING ROUND
rant_run() {
	local pairing=$1 round=$2 tag="rant-$1-r$2" extra=() rpid cpid wc wr crc rrc hc hr nc nr
	PORT=$((PORT + 1))
	RUNS=$((RUNS + 1))
	[ "$pairing" = spin ] && extra=(--spin)
	echo "# $tag: port $PORT, ${DUR}s" >&2
	start_server "$tag" "$WORK/$tag.refl.out" "$WORK/$tag.refl.err" "$WORK/$tag.refl.hwm" \
		"$RANT" -i "$VETH_B" -s --port "$PORT" "${extra[@]}" --once --json "$WORK/$tag.refl.json" || return
	rpid=$LAUNCH_PID
	wr=$LAUNCH_WATCH
	launch "$NS_A" "$CPU_CLIENT" "$WORK/$tag.out" "$WORK/$tag.err" "$WORK/$tag.hwm" \
		"$RANT" -i "$VETH_A" -a "$ADDR_B" -s --port "$PORT" --size "$SIZE" -d "$DUR" "${extra[@]}" \
		--json "$WORK/$tag.json"
	cpid=$LAUNCH_PID
	wc=$LAUNCH_WATCH
	wait "$cpid"
	crc=$?
	stop_within 5 "$rpid"
	rrc=$STOP_RC
	wait "$wc" "$wr"
	read -r hc nc <"$WORK/$tag.hwm"
	read -r hr nr <"$WORK/$tag.refl.hwm"
	if [ "$crc" -ne 0 ] || [ "$rrc" -ne 0 ]; then
		fail_run "$tag: client exit $crc, reflector exit $rrc: $(tail -n 3 "$WORK/$tag.err" "$WORK/$tag.refl.err")"
		return
	fi
	if ! python3 - "$WORK/$tag.json" "$WORK/$tag.refl.json" "$pairing" "$round" "$hc" "$hr" "$nc" "$nr" >>"$RESULTS" <<'EOF'; then
import json, sys
c = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
app = c["metrics"]["app_rtt"]
rtt = c["metrics"]["rtt"]["percentiles_ns"]
proc = r["metrics"]["server_processing"]["percentiles_ns"]
ap = app["percentiles_ns"]
if not app["samples"] or not c["duration_s"]:
    sys.exit("no samples")
print(sys.argv[3], "rant", sys.argv[4], ap["50"], ap["99"], round(app["samples"] / c["duration_s"]),
      sys.argv[5], sys.argv[6], proc["50"], proc["99"], ap["50"] - rtt["50"], ap["99"] - rtt["99"],
      c["packets"]["lost"], c["timestamps"]["wire"], sys.argv[7], sys.argv[8])
EOF
		fail_run "$tag: JSON reports unreadable or without app_rtt/server_processing"
	fi
}

# sockperf_run PAIRING ROUND
sockperf_run() {
	local pairing=$1 round=$2 tag="sockperf-$1-r$2" extra=() spid cpid wc ws crc hc hs nc ns
	PORT=$((PORT + 1))
	RUNS=$((RUNS + 1))
	[ "$pairing" = spin ] && extra=(--nonblocked --timeout 0)
	echo "# $tag: port $PORT, ${DUR}s" >&2
	start_server "$tag" "$WORK/$tag.srv.out" - "$WORK/$tag.srv.hwm" \
		sockperf server -i "$ADDR_B" -p "$PORT" "${extra[@]}" || return
	spid=$LAUNCH_PID
	ws=$LAUNCH_WATCH
	launch "$NS_A" "$CPU_CLIENT" "$WORK/$tag.out" - "$WORK/$tag.hwm" \
		sockperf ping-pong -i "$ADDR_B" -p "$PORT" -t "$DUR" -m "$SIZE" --full-rtt "${extra[@]}"
	cpid=$LAUNCH_PID
	wc=$LAUNCH_WATCH
	wait "$cpid"
	crc=$?
	# the server never ends by itself: its last VmHWM sample is taken just before the stop
	hs=$(proc_sample "$spid") && echo "$hs" >"$WORK/$tag.srv.hwm"
	stop_within 0 "$spid"
	wait "$wc" "$ws"
	read -r hc nc <"$WORK/$tag.hwm"
	read -r hs ns <"$WORK/$tag.srv.hwm"
	if [ "$crc" -ne 0 ]; then
		fail_run "$tag: sockperf ping-pong exit $crc: $(tail -n 3 "$WORK/$tag.out")"
		return
	fi
	if ! python3 - "$WORK/$tag.out" "$pairing" "$round" "$hc" "$hs" "$nc" "$ns" >>"$RESULTS" <<'EOF'; then
import re, sys
out = re.sub(r"\x1b\[[0-9;]*m", "", open(sys.argv[1], errors="replace").read())
# with --full-rtt sockperf 3.x reports round-trip times ("Summary: Round trip is X usec"),
# without it half of them ("Summary: Latency is X usec")
if not re.search(r"Summary: Round trip is", out):
    sys.exit("no 'Round trip' summary: not full RTT?")
pct = {m.group(1): float(m.group(2)) for m in re.finditer(r"---> percentile\s+([0-9.]+)\s*=\s*([0-9.]+)", out)}
m = re.search(r"\[Valid Duration\] RunTime=([0-9.]+) sec; SentMessages=(\d+); ReceivedMessages=(\d+)", out)
d = re.search(r"# dropped messages = (\d+)", out)
if "50.000" not in pct or "99.000" not in pct or not m or float(m.group(1)) <= 0:
    sys.exit("percentiles or message counts missing")
print(sys.argv[2], "sockperf", sys.argv[3], round(pct["50.000"] * 1000), round(pct["99.000"] * 1000),
      round(int(m.group(3)) / float(m.group(1))), sys.argv[4], sys.argv[5], "-", "-", "-", "-",
      d.group(1) if d else "-", "software", sys.argv[6], sys.argv[7])
EOF
		fail_run "$tag: could not parse sockperf's output: $(tail -n 5 "$WORK/$tag.out")"
	fi
}

if ! ns_setup; then
	echo "bench.sh: could not create the namespaces and the veth pair" >&2
	exit 1
fi

echo "# rant: $("$RANT" -V 2>&1 | head -n 1); $(sockperf --version 2>&1 | head -n 1)"
echo "# $ROUNDS round(s) x 2 pairings x 2 tools x ${DUR}s, ${SIZE}-byte payload, servers on CPU $CPU_SERVER, clients on CPU $CPU_CLIENT"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "pairing tool round rtt_p50_ns rtt_p99_ns tps rss_client_kib rss_server_kib proc_p50_ns proc_p99_ns ovh_p50_ns ovh_p99_ns lost wire preempt_client preempt_server" >"$RESULTS"
for ((round = 1; round <= ROUNDS; round++)); do
	for pairing in defaults spin; do
		rant_run "$pairing" "$round"
		sockperf_run "$pairing" "$round"
	done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "## Raw per-run numbers ($RESULTS)"
echo
column -t "$RESULTS" 2>/dev/null || cat "$RESULTS"
if [ -n "$BENCH_OUT" ]; then
	cp "$RESULTS" "$BENCH_OUT" && echo "(copied to $BENCH_OUT)"
fi
echo

python3 - "$RESULTS" "$ROUNDS" "$DUR" "$SIZE" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:] if l.strip()]
rounds, dur, size = sys.argv[2:5]
cols = "pairing tool round rtt_p50_ns rtt_p99_ns tps rss_client_kib rss_server_kib proc_p50_ns proc_p99_ns ovh_p50_ns ovh_p99_ns lost wire preempt_client preempt_server".split()

def med(pairing, tool, col):
    v = [float(r[cols.index(col)]) for r in rows if r[0] == pairing and r[1] == tool and r[cols.index(col)] != "-"]
    return statistics.median(v) if v else None

def n(x):
    return "n/a" if x is None else f"{x:,.0f}"

def ratio(a, b):
    return "n/a" if a is None or not b else f"{a / b:.2f}"

head = ["2-core VM over veth"]
sep = ["---"]
for p, label in (("defaults", "defaults"), ("spin", "spinning")):
    head += [f"rant ({label})", f"sockperf ({label})", "rant/sockperf"]
    sep += ["--:"] * 3
lines = {k: [k] for k in ("median RTT, ns", "p99 RTT, ns", "transactions/s",
                          "reflector processing T3_SW−T2_SW p50 / p99, ns",
                          "app overhead app_rtt−rtt p50 / p99, ns",
                          "peak RSS (VmHWM) client / server, KiB",
                          "preemptions (involuntary context switches) client / server")}
for p in ("defaults", "spin"):
    for key, col in (("median RTT, ns", "rtt_p50_ns"), ("p99 RTT, ns", "rtt_p99_ns"), ("transactions/s", "tps")):
        a, b = med(p, "rant", col), med(p, "sockperf", col)
        lines[key] += [n(a), n(b), ratio(a, b)]
    lines["reflector processing T3_SW−T2_SW p50 / p99, ns"] += [
        f"{n(med(p, 'rant', 'proc_p50_ns'))} / {n(med(p, 'rant', 'proc_p99_ns'))}", "n/a", ""]
    lines["app overhead app_rtt−rtt p50 / p99, ns"] += [
        f"{n(med(p, 'rant', 'ovh_p50_ns'))} / {n(med(p, 'rant', 'ovh_p99_ns'))}", "n/a", ""]
    rc, rs = med(p, "rant", "rss_client_kib"), med(p, "rant", "rss_server_kib")
    sc, ss = med(p, "sockperf", "rss_client_kib"), med(p, "sockperf", "rss_server_kib")
    lines["peak RSS (VmHWM) client / server, KiB"] += [f"{n(rc)} / {n(rs)}", f"{n(sc)} / {n(ss)}",
                                                       f"{ratio(rc, sc)} / {ratio(rs, ss)}"]
    lines["preemptions (involuntary context switches) client / server"] += [
        f"{n(med(p, 'rant', 'preempt_client'))} / {n(med(p, 'rant', 'preempt_server'))}",
        f"{n(med(p, 'sockperf', 'preempt_client'))} / {n(med(p, 'sockperf', 'preempt_server'))}", ""]
print("### 2-core VM over veth\n")
print(f"{size}-byte UDP payload, one veth pair between two namespaces, servers pinned to CPU 1 and clients to CPU 0; "
      f"each cell is the median of {rounds} run(s) of {dur} s. RTTs are full round trips measured in the application "
      "(rant: app_rtt = T4_SW−T1_SW with -s; sockperf: --full-rtt percentiles, warm-up excluded). "
      "Defaults: `rant -s` vs `sockperf server` / `sockperf ping-pong --full-rtt`; spinning: `rant -s --spin` on both ends "
      "vs `sockperf --nonblocked --timeout 0` on both ends. RTT ratio < 1 and rate ratio > 1 mean rant is faster. "
      "App overhead is a difference of percentiles (app_rtt pN − rtt pN, rtt from kernel stamps), not a percentile of differences. "
      "Preemptions count how often another task took the pinned CPU from the tool: many of them mean the numbers "
      "measure a busy host, not the tool.\n")
print("| " + " | ".join(head) + " |")
print("|" + "|".join(sep) + "|")
for k, v in lines.items():
    print("| " + " | ".join(v) + " |")
EOF

echo
echo "bench: $((RUNS - FAILED)) of $RUNS runs worked"
[ "$FAILED" -eq 0 ] && [ "$RUNS" -gt 0 ]
