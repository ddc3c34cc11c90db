#!/bin/bash
# make bench: rant, sockperf and the floor (tests/bench.d/floor.c, a bare
# ping-pong without stamps) on the same veth pair, in one run.
#
# Two namespaces joined by a veth pair (tests/lib.sh).  Every server runs on
# CPU 1 and every client on CPU 0 (taskset).  The contenders alternate within
# each of ROUNDS rounds of DUR seconds (the order rotates every round, so no
# tool always runs first; the two sides of each goal, rant and floor-ts,
# rant -N and sockperf, run back to back, in turn first), in two pairings:
#   defaults  rant -s (blocking)    sockperf (epoll/recvfrom)         floor (blocking recv)
#   spin      rant -s --spin        sockperf --nonblocked --timeout 0 floor spin
# and floor-ts, the floor stamping every packet as rant does (floor ... stamps:
# RX and TX software stamps read, no bookkeeping): rant / floor-ts is what
# rant's own work costs, floor-ts / floor what stamping costs the kernel,
# plus rant's reflector variants (-N, -F) where this rant accepts them,
# rant-NN (-N on the reflector, --client-no-tx-ts on the client) and floor-rx
# beside it (floor ... rxstamps: RX software stamps only, read as rant-NN
# reads them), and
# experimental builds named in VARIANTS ("name=/path/to/rant ...", both ends).
# rant's histograms run with -o 100 -b 0.01 (both ends): 10 ns buckets over
# the first 100 us, as many as the defaults' 0.1 us over 1 ms (the same
# memory and the same work per sample), the samples above 100 us kept
# exactly (beyond 16384 of them within 0.1 %).  A percentile below the
# bound is the top of its bucket (true <= reported < true + bucket), and
# the floor's and sockperf's medians are exact: with the default 0.1 us
# buckets rant's p50 would read up to 99 ns high (36 ns on average over 13
# spinning runs here, 0.4 % of a round trip): a bias of the reading, not
# of the path.
# Payload: SIZE bytes.  Ratios are computed per round (rant/sockperf,
# rant/floor, sockperf/floor: a busy moment hits both sides of a ratio) and
# summarised as the median with the min-max spread; a spread wider than
# SPREAD_WARN (a factor) prints a warning that the host was too busy to
# conclude.  A last table holds the hot path's goals against those ratios:
# rant within 1.05x the stamped floor's RTT and 0.95x its rate (rant-NN so
# against floor-rx), and rant -N and rant-NN (the stamps a user can switch
# off, off) ahead of sockperf (0.95x, 1.05x), in both pairings.  Raw
# per-run numbers go to bench-results.txt (copied to BENCH_OUT if set).
#
#   sudo make bench                 ROUNDS=9 DUR=2 SIZE=64
#   sudo ROUNDS=1 DUR=3 tests/bench.sh
#   sudo tests/bench.d/profile.sh    syscalls, sleeps and CPU per transaction of both tools
#
# Exit 0 when every run worked, 1 otherwise (or when not root).

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${ROUNDS:=9}"
: "${DUR:=2}"
: "${SPREAD_WARN:=1.25}"
: "${VARIANTS:=}"
: "${FLOOR:=$(cd "$(dirname "$0")" && pwd)/bench.d/floor}"
: "${RUSAGE:=$(cd "$(dirname "$0")" && pwd)/bench.d/rusage}"
: "${SIZE:=64}"
: "${BENCH_OUT:=}"
CPU_SERVER=1
CPU_CLIENT=0
# rant's percentiles to 10 ns, as the others' are exact (see above)
RANT_HIST=(-o 100 -b 0.01)

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
if [ ! -x "$RANT" ] || [ ! -x "$FLOOR" ] || [ ! -x "$RUSAGE" ]; then
	echo "bench.sh: $RANT, $FLOOR or $RUSAGE not built: run make bench" >&2
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

# launch NS CPU OUT ERR HWM command...: start a pinned process in NS under
# rusage (tests/bench.d/rusage.c), which writes its peak RSS (KiB) and its
# involuntary context switches (preemptions) to HWM when it ends, "0 0"
# until then: nothing samples it while it runs (a sampler's forks preempt
# the pinned tools).  ERR "-" sends stderr to OUT.  HOLD=(-l 0) (pair_run's
# own, when held): the wrapper holds the CPU latency limit at 0 while the
# process runs, as rant does by default (--cpu-latency).  Sets LAUNCH_PID.
launch() {
	local ns=$1 cpu=$2 out=$3 err=$4 hwm=$5
	shift 5
	echo "0 0" >"$hwm"	# what is read if the process never starts
	if [ "$err" = - ]; then
		ip netns exec "$ns" taskset -c "$cpu" "$RUSAGE" "${HOLD[@]+"${HOLD[@]}"}" "$hwm" "$@" >"$out" 2>&1 &
	else
		ip netns exec "$ns" taskset -c "$cpu" "$RUSAGE" "${HOLD[@]+"${HOLD[@]}"}" "$hwm" "$@" >"$out" 2>"$err" &
	fi
	LAUNCH_PID=$!
	BG_PIDS+=("$LAUNCH_PID")
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
		return 1
	fi
}

# rant_run PAIRING ROUND [TOOL REFLECTOR-OPTION...]: TOOL names the row
# (rant, rant-N, rant-NN, rant-F), the options go to the reflector only;
# rant-NN's client runs --client-no-tx-ts (every stamp a user can switch
# off switched off, with -N on its reflector)
rant_run() {
	local pairing=$1 round=$2 tool=${3:-rant} tag bin extra=() rextra=() cextra=() rpid cpid crc rrc hc hr nc nr
	shift 3 2>/dev/null || shift $#
	rextra=("$@")
	[ "$tool" = rant-NN ] && cextra=(--client-no-tx-ts)
	tag="$tool-$pairing-r$round"
	PORT=$((PORT + 1))
	RUNS=$((RUNS + 1))
	[ "$pairing" = spin ] && extra=(--spin)
	extra+=("${RANT_HIST[@]}")
	echo "# $tag: port $PORT, ${DUR}s" >&2
	bin=${VARIANT_BIN[$tool]:-$RANT}
	start_server "$tag" "$WORK/$tag.refl.out" "$WORK/$tag.refl.err" "$WORK/$tag.refl.hwm" \
		"$bin" -i "$VETH_B" -s --port "$PORT" "${extra[@]}" "${rextra[@]}" --once \
		--json "$WORK/$tag.refl.json" || return
	rpid=$LAUNCH_PID
	launch "$NS_A" "$CPU_CLIENT" "$WORK/$tag.out" "$WORK/$tag.err" "$WORK/$tag.hwm" \
		"$bin" -i "$VETH_A" -a "$ADDR_B" -s --port "$PORT" --size "$SIZE" -d "$DUR" "${extra[@]}" \
		"${cextra[@]}" --json "$WORK/$tag.json"
	cpid=$LAUNCH_PID
	wait "$cpid"
	crc=$?
	stop_within 5 "$rpid"
	rrc=$STOP_RC
	read -r hc nc <"$WORK/$tag.hwm"
	read -r hr nr <"$WORK/$tag.refl.hwm"
	if [ "$crc" -ne 0 ] || [ "$rrc" -ne 0 ]; then
		fail_run "$tag: client exit $crc, reflector exit $rrc: $(tail -n 3 "$WORK/$tag.err" "$WORK/$tag.refl.err")"
		return
	fi
	if ! python3 - "$WORK/$tag.json" "$WORK/$tag.refl.json" "$pairing" "$round" "$hc" "$hr" "$nc" "$nr" "$tool" >>"$RESULTS" <<'EOF'; then
import json, sys
c = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
app = c["metrics"]["app_rtt"]
# the app's overhead on the wire rtt: none to give when the rtt starts at T1_SW (--client-no-tx-ts)
rtt = c["metrics"].get("rtt", {}).get("percentiles_ns", {"50": None, "99": None})
if c.get("rtt_basis", "wire_T4-T1") != "wire_T4-T1":
    rtt = {"50": None, "99": None}
proc = r["metrics"].get("server_processing", {}).get("percentiles_ns", {"50": "-", "99": "-"})
ap = app["percentiles_ns"]
if not app["samples"] or not c["duration_s"]:
    sys.exit("no samples")
print(sys.argv[3], sys.argv[9], sys.argv[4], ap["50"], ap["99"], round(app["samples"] / c["duration_s"]),
      sys.argv[5], sys.argv[6], proc["50"], proc["99"],
      ap["50"] - rtt["50"] if rtt["50"] is not None else "-", ap["99"] - rtt["99"] if rtt["99"] is not None else "-",
      c["packets"]["lost"], c["timestamps"]["wire"], sys.argv[7], sys.argv[8])
EOF
		fail_run "$tag: JSON reports unreadable or without app_rtt"
	fi
}

# pair_run TAG [held]: the server SERVER_CMD in NS_B and the client CLIENT_CMD in
# NS_A, as sockperf and the floor run (both on port PORT, the client DUR s);
# held: both under the CPU latency limit rant holds by default (launch).
# The client's status in PAIR_RC; peak RSS and involuntary switches of client
# and server in PAIR_HC PAIR_HS PAIR_NC PAIR_NS.  Fails if no server started.
pair_run() {
	local tag=$1 spid cpid HOLD=()
	[ "${2:-}" = held ] && HOLD=(-l 0)
	start_server "$tag" "$WORK/$tag.srv.out" - "$WORK/$tag.srv.hwm" "${SERVER_CMD[@]}" || return
	spid=$LAUNCH_PID
	launch "$NS_A" "$CPU_CLIENT" "$WORK/$tag.out" - "$WORK/$tag.hwm" "${CLIENT_CMD[@]}"
	cpid=$LAUNCH_PID
	wait "$cpid"
	PAIR_RC=$?
	# the server never ends by itself: stopped (rusage passes the TERM on), then read
	stop_within 0 "$spid"
	read -r PAIR_HC PAIR_NC <"$WORK/$tag.hwm"
	read -r PAIR_HS PAIR_NS <"$WORK/$tag.srv.hwm"
}

# sockperf_run PAIRING ROUND [sockperf-held]: sockperf as it comes, or
# (sockperf-held) under the CPU latency limit rant holds by default
sockperf_run() {
	local pairing=$1 round=$2 tool=${3:-sockperf} tag extra=()
	tag="$tool-$1-r$2"
	PORT=$((PORT + 1))
	RUNS=$((RUNS + 1))
	[ "$pairing" = spin ] && extra=(--nonblocked --timeout 0)
	echo "# $tag: port $PORT, ${DUR}s" >&2
	SERVER_CMD=(sockperf server -i "$ADDR_B" -p "$PORT" "${extra[@]}")
	CLIENT_CMD=(sockperf ping-pong -i "$ADDR_B" -p "$PORT" -t "$DUR" -m "$SIZE" --full-rtt
		"${extra[@]}")
	pair_run "$tag" "${tool#sockperf-}" || return
	if [ "$PAIR_RC" -ne 0 ]; then
		fail_run "$tag: sockperf ping-pong exit $PAIR_RC: $(tail -n 3 "$WORK/$tag.out")"
		return
	fi
	if ! python3 - "$WORK/$tag.out" "$pairing" "$round" \
		"$PAIR_HC" "$PAIR_HS" "$PAIR_NC" "$PAIR_NS" "$tool" >>"$RESULTS" <<'EOF'; then
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
print(sys.argv[2], sys.argv[8], sys.argv[3], round(pct["50.000"] * 1000), round(pct["99.000"] * 1000),
      round(int(m.group(3)) / float(m.group(1))), sys.argv[4], sys.argv[5], "-", "-", "-", "-",
      d.group(1) if d else "-", "software", sys.argv[6], sys.argv[7])
EOF
		fail_run "$tag: could not parse sockperf's output: $(tail -n 5 "$WORK/$tag.out")"
	fi
}

# floor_run PAIRING ROUND [floor-ts|floor-rx]: the bare ping-pong, same CPUs,
# same veth; floor-ts stamps every packet (floor ... stamps), floor-rx every
# received one (floor ... rxstamps: rant-NN's stamps).  All hold the CPU latency
# limit as rant does by default: a floor is the best any tool does under
# rant's conditions, its idle states included.
floor_run() {
	local pairing=$1 round=$2 tool=${3:-floor} tag extra=()
	tag="$tool-$1-r$2"
	PORT=$((PORT + 1))
	RUNS=$((RUNS + 1))
	[ "$pairing" = spin ] && extra=(spin)
	[ "$tool" = floor-ts ] && extra+=(stamps)
	[ "$tool" = floor-rx ] && extra+=(rxstamps)
	echo "# $tag: port $PORT, ${DUR}s" >&2
	SERVER_CMD=("$FLOOR" server "$PORT" "${extra[@]}")
	CLIENT_CMD=("$FLOOR" client "$ADDR_B" "$PORT" "$DUR" "$SIZE" "${extra[@]}")
	pair_run "$tag" held || return
	if [ "$PAIR_RC" -ne 0 ]; then
		fail_run "$tag: floor client exit $PAIR_RC: $(tail -n 3 "$WORK/$tag.out")"
		return
	fi
	if ! awk -v p="$pairing" -v t="$tool" -v r="$round" \
		-v hc="$PAIR_HC" -v hs="$PAIR_HS" -v nc="$PAIR_NC" -v ns="$PAIR_NS" '
		/^floor: / && $5 > 0 && (t == "floor" || $11 > 0) { print p, t, r, $7, $9, int($3 / $5 + 0.5), hc, hs,
			"- - - -", 0, "none", nc, ns; found = 1 }
		END { exit !found }' "$WORK/$tag.out" >>"$RESULTS"; then
		fail_run "$tag: no result line from the floor client: $(tail -n 3 "$WORK/$tag.out")"
	fi
}

# variant_ok OPTION: this rant's reflector accepts OPTION (it starts and
# listens); a refusal is printed once, with rant's reason, and not counted
# as a failed run
variant_ok() {
	local p=$((PORT + 500)) pid rc=0
	ip netns exec "$NS_B" "$RANT" -i "$VETH_B" --port "$p" -q "$1" --once >"$WORK/variant.out" 2>&1 &
	pid=$!
	BG_PIDS+=("$pid")
	if wait_for 3 udp_listening "$NS_B" "$p"; then
		kill -TERM "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		return 0
	fi
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null || rc=$?
	echo "# rant $1 not measured (reflector exit $rc): $(head -n 1 "$WORK/variant.out")"
	return 1
}

# contenders: the round-robin list of "tool reflector-options"; a unit
# "A|B" is two that always run back to back (the two sides of a goal's
# ratio: a busy moment of the host then hits both), in turn first
UNITS=("floor-ts|rant" "sockperf" "floor" "sockperf-held")

if ! ns_setup; then
	echo "bench.sh: could not create the namespaces and the veth pair" >&2
	exit 1
fi

echo "# rant: $("$RANT" -V 2>&1 | head -n 1); $(sockperf --version 2>&1 | head -n 1)"
echo "# $ROUNDS round(s) x 2 pairings x ${DUR}s, ${SIZE}-byte payload, servers on CPU $CPU_SERVER, clients on CPU $CPU_CLIENT"
echo "# rant with ${RANT_HIST[*]}: its percentiles to 10 ns below 100 us (the floor's and sockperf's are exact)"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "pairing tool round rtt_p50_ns rtt_p99_ns tps rss_client_kib rss_server_kib proc_p50_ns proc_p99_ns ovh_p50_ns ovh_p99_ns lost wire preempt_client preempt_server" >"$RESULTS"
# sockperf between the two it is compared with: back to back with each, in
# either order; rant-NN then back to back with the floor that stamps as it does
variant_ok -N && UNITS[1]="rant-N -N|sockperf|rant-NN -N|floor-rx"
variant_ok -F && UNITS+=("rant-F -F")
declare -A VARIANT_BIN=()
for v in $VARIANTS; do
	variant bench.sh "$v"
	VARIANT_BIN["rant-$VARIANT_NAME"]=$VARIANT_PATH
	UNITS+=("rant-$VARIANT_NAME")
done
echo "# contenders: ${UNITS[*]} (A|B: back to back, in turn first)"
for ((round = 1; round <= ROUNDS; round++)); do
	for pairing in defaults spin; do
		n=${#UNITS[@]}
		for ((k = 0; k < n; k++)); do
			# rotate: round r starts with unit r mod n; a pair's order alternates
			IFS='|' read -r -a members <<<"${UNITS[$(((k + round) % n))]}"
			if [ "${#members[@]}" -gt 1 ] && [ $((round % 2)) = 0 ]; then
				for ((j = 0; j < ${#members[@]} / 2; j++)); do
					m=${members[j]}
					members[j]=${members[${#members[@]} - 1 - j]}
					members[${#members[@]} - 1 - j]=$m
				done
			fi
			for m in "${members[@]}"; do
				read -r -a c <<<"$m"
				case ${c[0]} in
				sockperf | sockperf-held) sockperf_run "$pairing" "$round" "${c[0]}" ;;
				floor | floor-ts | floor-rx) floor_run "$pairing" "$round" "${c[0]}" ;;
				*) rant_run "$pairing" "$round" "${c[@]}" ;;
				esac
			done
		done
	done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

# startup_ms [rant client options...]: wall time of a one-transaction client
# run (start-up, one ping-pong, report, exit), median of 5, in ms
startup_ms() {
	local i t0 t1 v=() pid
	PORT=$((PORT + 1))
	ip netns exec "$NS_B" "$RANT" -i "$VETH_B" --port "$PORT" -q >/dev/null 2>&1 &
	pid=$!
	BG_PIDS+=("$pid")
	wait_for 5 udp_listening "$NS_B" "$PORT" || return 1
	for i in 1 2 3 4 5; do
		t0=$(date +%s%N)
		ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --port "$PORT" -q --count 1 "$@" \
			>/dev/null 2>&1 || return 1
		t1=$(date +%s%N)
		v+=($(((t1 - t0) / 1000000)))
	done
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	printf '%s\n' "${v[@]}" | sort -n | sed -n 3p
}
s0=$(startup_ms) || s0=failed
s1=$(startup_ms -l "$WORK/startup.log" --log-records 1000000) || s1=failed
STARTUP_LINE="start-up to exit of a one-transaction client run (median of 5): ${s0} ms without a log, ${s1} ms with a 1 M-record log"

echo
echo "## Raw per-run numbers ($RESULTS)"
echo
column -t "$RESULTS" 2>/dev/null || cat "$RESULTS"
if [ -n "$BENCH_OUT" ]; then
	cp "$RESULTS" "$BENCH_OUT" && echo "(copied to $BENCH_OUT)"
fi
echo

python3 "$(dirname "$0")/bench.d/summary.py" "$RESULTS" "$ROUNDS" "$DUR" "$SIZE" "$SPREAD_WARN"

echo
echo "$STARTUP_LINE"
echo
echo "bench: $((RUNS - FAILED)) of $RUNS runs worked"
[ "$FAILED" -eq 0 ] && [ "$RUNS" -gt 0 ]
