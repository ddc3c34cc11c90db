#!/bin/bash
# Where does a transaction go?  rant against sockperf and the floor (plain and
# stamping every packet, tests/bench.d/floor.c), syscalls and wake-ups per
# transaction, on the same veth pair and CPUs as tests/bench.sh.  VARIANTS
# ("name=/path/to/rant ...") adds experimental rant builds (both ends).
#
# For each pairing (defaults, spin) and tool, two runs of DUR seconds:
#   1. under `strace -c -f` (client and server): syscalls per transaction
#      (strace slows everything down; the counts, not the times, matter);
#   2. untraced: voluntary context switches (sleeps, i.e. wake-ups) and CPU
#      time (utime+stime) per transaction, from /proc/PID/status and stat.
#
#   sudo DUR=3 tests/bench.d/profile.sh
#   sudo VARIANTS="exp=/tmp/rant-exp" tests/bench.d/profile.sh

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

: "${DUR:=3}"
: "${SIZE:=64}"
: "${VARIANTS:=}"
: "${FLOOR:=$(cd "$(dirname "$0")" && pwd)/floor}"
PORT=21000
declare -A BIN=([rant]=$RANT)
TOOLS=(rant sockperf floor floor-ts)
for v in $VARIANTS; do
	variant profile.sh "$v"
	BIN["rant-$VARIANT_NAME"]=$VARIANT_PATH
	TOOLS+=("rant-$VARIANT_NAME")
done

if ! is_root; then
	echo "profile.sh: must run as root" >&2
	exit 1
fi
for t in strace sockperf taskset python3; do
	command -v "$t" >/dev/null || {
		echo "profile.sh: $t not found" >&2
		exit 1
	}
done
ns_setup || exit 1

# snap PID: "voluntary_ctxt_switches utime+stime_ticks" of a live process
snap() {
	local v c
	v=$(awk '/^voluntary_ctxt_switches:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	c=$(awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null)
	[ -n "$v" ] && [ -n "$c" ] && echo "$v $c"
}

# keep_snap PID FILE: FILE holds the last snapshot of PID while it lives
keep_snap() {
	local s
	while s=$(snap "$1"); do
		echo "$s" >"$2"
		sleep 0.1
	done
}

# run TOOL PAIRING TRACE(0|1): one client/server run; files in $WORK/TOOL-PAIRING-TRACE.*
run() {
	local tool=$1 pairing=$2 trace=$3 tag="$1-$2-$3" spre=() cpre=() scmd=() ccmd=() spid cpid srv ws wc
	PORT=$((PORT + 1))
	if [ "$trace" = 1 ]; then
		spre=(strace -f -c -o "$WORK/$tag.srv.strace")
		cpre=(strace -f -c -o "$WORK/$tag.cli.strace")
	fi
	if [ "${tool%%-*}" = rant ]; then
		scmd=("${BIN[$tool]}" -i "$VETH_B" -s --port "$PORT" --once -q --json "$WORK/$tag.srv.json")
		ccmd=("${BIN[$tool]}" -i "$VETH_A" -a "$ADDR_B" -s --port "$PORT" -d "$DUR" -q
			--json "$WORK/$tag.cli.json")
		[ "$pairing" = spin ] && scmd+=(--spin) && ccmd+=(--spin)
	elif [ "${tool%%-*}" = floor ]; then
		scmd=("$FLOOR" server "$PORT")
		ccmd=("$FLOOR" client "$ADDR_B" "$PORT" "$DUR" "$SIZE")
		[ "$pairing" = spin ] && scmd+=(spin) && ccmd+=(spin)
		[ "$tool" = floor-ts ] && scmd+=(stamps) && ccmd+=(stamps)
	else
		scmd=(sockperf server -i "$ADDR_B" -p "$PORT")
		ccmd=(sockperf ping-pong -i "$ADDR_B" -p "$PORT" -t "$DUR" -m "$SIZE" --full-rtt)
		[ "$pairing" = spin ] && scmd+=(--nonblocked --timeout 0) && ccmd+=(--nonblocked --timeout 0)
	fi
	ip netns exec "$NS_B" taskset -c 1 "${spre[@]}" "${scmd[@]}" >"$WORK/$tag.srv.out" 2>&1 &
	spid=$!
	BG_PIDS+=("$spid")
	if ! wait_for 5 udp_listening "$NS_B" "$PORT"; then
		echo "profile.sh: $tag: server did not start" >&2
		return 1
	fi
	srv=$spid
	[ "$trace" = 1 ] && srv=$(pgrep -P "$spid" | head -n 1)
	keep_snap "$srv" "$WORK/$tag.srv.snap" &
	ws=$!
	ip netns exec "$NS_A" taskset -c 0 "${cpre[@]}" "${ccmd[@]}" >"$WORK/$tag.cli.out" 2>&1 &
	cpid=$!
	BG_PIDS+=("$cpid")
	keep_snap "$cpid" "$WORK/$tag.cli.snap" &
	wc=$!
	wait "$cpid"
	wait "$wc"
	[ "${tool%%-*}" != rant ] && kill -TERM "$srv"
	wait_for 5 gone "$srv" || kill -KILL "$srv" 2>/dev/null
	wait "$ws" "$spid"
}

gone() { ! kill -0 "$1"; }

for pairing in defaults spin; do
	for tool in "${TOOLS[@]}"; do
		echo "# $tool $pairing: strace run, then untraced run (${DUR}s each)" >&2
		run "$tool" "$pairing" 1
		run "$tool" "$pairing" 0
	done
done

python3 - "$WORK" "$(getconf CLK_TCK)" "${TOOLS[@]}" <<'EOF'
import json, os, re, sys
work, hz, tools = sys.argv[1], int(sys.argv[2]), sys.argv[3:]

def txns(tool, pairing, trace):
    tag = f"{tool}-{pairing}-{trace}"
    if tool.startswith("rant"):
        c = json.load(open(f"{work}/{tag}.cli.json"))
        return c["packets"]["sent"], c["packets"]["received"]
    if tool.startswith("floor"):
        m = re.search(r"^floor: samples (\d+)", open(f"{work}/{tag}.cli.out").read(), re.M)
        return int(m.group(1)), int(m.group(1))
    out = re.sub(r"\x1b\[[0-9;]*m", "", open(f"{work}/{tag}.cli.out").read())
    m = re.search(r"\[Total Run\] RunTime=[0-9.]+ sec; Warm up time=\d+ msec; SentMessages=(\d+); ReceivedMessages=(\d+)", out)
    return int(m.group(1)), int(m.group(2))

def strace_counts(path):
    # "% time seconds usecs/call calls [errors] syscall": errors are blank when none
    calls = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and re.match(r"^[0-9.]+$", f[0]) and f[-1] != "total":
            calls[f[-1]] = int(f[3])
            if len(f) == 6 and int(f[4]):
                calls[f[-1] + " (failed, EAGAIN)"] = int(f[4])
    return calls

for pairing in ("defaults", "spin"):
    print(f"\n### syscalls per transaction, {pairing} (strace -c -f, {'rant --spin / sockperf --nonblocked --timeout 0' if pairing == 'spin' else 'rant -s / sockperf'})\n")
    cols, tx = [], {}
    for tool in tools:
        sent, _ = txns(tool, pairing, 1)
        for side, name in (("cli", "client"), ("srv", "server")):
            cols.append((f"{tool} {name}", strace_counts(f"{work}/{tool}-{pairing}-1.{side}.strace"), sent))
    names = sorted({k for _, c, _ in cols for k in c}, key=lambda k: -max(c.get(k, 0) / s for _, c, s in cols))
    print("| syscall | " + " | ".join(n for n, _, _ in cols) + " |")
    print("|---|" + "--:|" * len(cols))
    print("| transactions (under strace) | " + " | ".join(f"{s}" for _, _, s in cols) + " |")
    for k in names:
        vals = [c.get(k, 0) / s for _, c, s in cols]
        if max(vals) < 0.01:
            continue
        print(f"| {k} | " + " | ".join(f"{v:.2f}" for v in vals) + " |")
    print("| **all** | " + " | ".join(f"{sum(v for k, v in c.items() if '(' not in k) / s:.2f}" for _, c, s in cols) + " |")
    print(f"\n### untraced {pairing}: wake-ups and CPU per transaction\n")
    print("| | transactions/s | client sleeps/txn | server sleeps/txn | client CPU µs/txn | server CPU µs/txn |")
    print("|---|--:|--:|--:|--:|--:|")
    for tool in tools:
        sent, recv = txns(tool, pairing, 0)
        cv, cc = map(int, open(f"{work}/{tool}-{pairing}-0.cli.snap").read().split())
        sv, sc = map(int, open(f"{work}/{tool}-{pairing}-0.srv.snap").read().split())
        dur = float(os.environ.get("DUR", "3"))
        print(f"| {tool} | {recv / dur:,.0f} | {cv / sent:.2f} | {sv / sent:.2f} | {cc / hz * 1e6 / sent:.2f} | {sc / hz * 1e6 / sent:.2f} |")
EOF
