#!/bin/bash
# Per-transaction work of each side, in instructions and system calls, the
# two numbers that stay the same on a loaded host.  rant's client and
# reflector run on the veth pair of tests/bench.sh, back-to-back and
# blocking (the spinning loop adds empty polls, which count whatever the
# host does), for D1 and for D2 seconds (-d, as tests/bench.sh runs it;
# --count would size the run's memory by its length).  Each run is measured
# once under `valgrind --tool=callgrind` (user-space instructions, both
# sides) and once under `strace -c -f` (system calls); per transaction is
# (D2 run - D1 run) / (its transactions - D1 run's), so start-up, the report
# and the exit cancel out.  Both sides keep every sample in the histogram
# (-o 100000 -b 10): under valgrind a transaction takes far over -o's default
# 1 ms, and sorting the exact store for the report would count as per-packet
# work.  Rows: rant as it is (-s, the bench's shape), the reflector with -N,
# any builds named in VARIANTS ("name=/path/to/rant ...", both ends), and
# the stamped floor (tests/bench.d/floor.c with "stamps": every packet
# stamped, no bookkeeping), the least a tool that stamps everything does.
#
#   sudo tests/bench.d/icount.sh                 D1=1 D2=4
#   sudo VARIANTS="old=/tmp/rant-old" tests/bench.d/icount.sh
#   sudo TOP=15 tests/bench.d/icount.sh          also the 15 costliest functions per side
#   sudo KEEP=/tmp/cg tests/bench.d/icount.sh    keep the callgrind files (callgrind_annotate)
#
# Exit 0 when every run worked (or valgrind or strace is missing: nothing to
# measure with), 1 otherwise.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/../lib.sh"

: "${D1:=1}"
: "${D2:=4}"
: "${TOP:=0}"
: "${VARIANTS:=}"
: "${KEEP:=}"
: "${FLOOR:=$(cd "$(dirname "$0")" && pwd)/floor}"
PORT=22000
declare -A BIN=([rant]=$RANT)
ROWS=("rant|rant|" "rant -N|rant|-N")
for v in $VARIANTS; do
	variant icount.sh "$v"
	BIN["$VARIANT_NAME"]=$VARIANT_PATH
	ROWS+=("$VARIANT_NAME|$VARIANT_NAME|")
done
if ! is_root; then
	echo "icount.sh: must run as root (network namespaces)" >&2
	exit 1
fi
for t in valgrind callgrind_annotate strace python3; do
	if ! command -v "$t" >/dev/null; then
		echo "icount.sh: $t not found: no instruction counts (apt-get install valgrind strace)"
		exit 0
	fi
done
[ -x "$FLOOR" ] && BIN[floor]=$FLOOR && ROWS+=("floor-ts|floor|")
ns_setup || exit 1
FAILED=0

# one TAG BIN HOW D REFLECTOR-OPTION...: a client of D seconds against a
# --once reflector, both under HOW (callgrind or strace); files $WORK/TAG.{cli,srv}.*
one() {
	local tag=$1 bin=$2 how=$3 d=$4 spre=() cpre=() ccmd=() spid
	shift 4
	PORT=$((PORT + 1))
	if [ "$how" = callgrind ]; then
		spre=(valgrind -q --tool=callgrind --callgrind-out-file="$WORK/$tag.srv.cg")
		cpre=(valgrind -q --tool=callgrind --callgrind-out-file="$WORK/$tag.cli.cg")
	else
		spre=(strace -f -c -o "$WORK/$tag.srv.st")
		cpre=(strace -f -c -o "$WORK/$tag.cli.st")
	fi
	if [ "$bin" = "$FLOOR" ]; then
		ip netns exec "$NS_B" "${spre[@]}" "$bin" server "$PORT" stamps >"$WORK/$tag.srv.out" 2>&1 &
	else
		ip netns exec "$NS_B" "${spre[@]}" "$bin" -i "$VETH_B" -s --port "$PORT" --once -q \
			-o 100000 -b 10 "$@" >"$WORK/$tag.srv.out" 2>&1 &
	fi
	spid=$!
	BG_PIDS+=("$spid")
	if ! wait_for 30 udp_listening "$NS_B" "$PORT"; then
		echo "icount.sh: $tag: reflector did not start: $(tail -n 2 "$WORK/$tag.srv.out")" >&2
		FAILED=$((FAILED + 1))
		return 1
	fi
	# no --json: its length (and the time to write it) depends on the samples
	if [ "$bin" = "$FLOOR" ]; then
		ccmd=("$bin" client "$ADDR_B" "$PORT" "$d" 64 stamps)
	else
		ccmd=("$bin" -i "$VETH_A" -a "$ADDR_B" -s --port "$PORT" -o 100000 -b 10 -d "$d" -q)
	fi
	if ! ip netns exec "$NS_A" "${cpre[@]}" "${ccmd[@]}" >"$WORK/$tag.cli.out" 2>&1; then
		echo "icount.sh: $tag: client failed: $(tail -n 2 "$WORK/$tag.cli.out")" >&2
		FAILED=$((FAILED + 1))
	fi
	# the floor's server never ends by itself: TERM it (under strace, the traced
	# child: strace writes its counts when it exits; valgrind writes them on TERM)
	if [ "$bin" = "$FLOOR" ] || ! wait_for 30 gone "$spid"; then
		pkill -TERM -P "$spid" 2>/dev/null
		kill -TERM "$spid" 2>/dev/null
	fi
	wait "$spid" 2>/dev/null
}

for row in "${ROWS[@]}"; do
	IFS='|' read -r name bin ropt <<<"$row"
	for how in callgrind strace; do
		for d in "$D1" "$D2"; do
			echo "# $name: $how, $d s" >&2
			# shellcheck disable=SC2086 # ropt: zero or one option
			one "${name// /_}-$how-$d" "${BIN[$bin]}" "$how" "$d" $ropt
		done
	done
done

python3 - "$WORK" "$D1" "$D2" "$TOP" "${ROWS[@]}" <<'EOF'
import re, subprocess, sys
work, n1, n2, top, rows = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]

def ir(path):
    # the "summary:" (or "totals:") line of a callgrind output file
    for line in open(path):
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise SystemExit(f"no totals in {path}")

def calls(path):
    total, per = 0, {}
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and re.match(r"^[0-9.]+$", f[0]) and f[-1] != "total":
            per[f[-1]] = int(f[3])
            total += int(f[3])
    return total, per

def sent(tag):
    # the client's "Packets: sent N" line (the floor's "floor: samples N")
    m = re.search(r"^(?:Packets:\s+sent|floor: samples) (\d+)", open(f"{work}/{tag}.cli.out").read(), re.M)
    return int(m.group(1))

print(f"### Work per transaction: ({n2} s run − {n1} s run) / their difference in transactions, "
      "back-to-back, blocking, -s\n")
print("| build | client instructions | reflector instructions | client syscalls | reflector syscalls |")
print("|---|--:|--:|--:|--:|")
detail = []
for row in rows:
    name = row.split("|")[0]
    t = name.replace(" ", "_")
    try:
        d = sent(f"{t}-callgrind-{n2}") - sent(f"{t}-callgrind-{n1}")
        ds = sent(f"{t}-strace-{n2}") - sent(f"{t}-strace-{n1}")
        ic = (ir(f"{work}/{t}-callgrind-{n2}.cli.cg") - ir(f"{work}/{t}-callgrind-{n1}.cli.cg")) / d
        isv = (ir(f"{work}/{t}-callgrind-{n2}.srv.cg") - ir(f"{work}/{t}-callgrind-{n1}.srv.cg")) / d
        sc = {s: (calls(f"{work}/{t}-strace-{n2}.{s}.st"), calls(f"{work}/{t}-strace-{n1}.{s}.st"))
              for s in ("cli", "srv")}
    except (OSError, AttributeError, ValueError, ZeroDivisionError) as e:
        print(f"| {name} | failed: {e} | | | |")
        continue
    per = {s: (b[0] - a[0]) / ds for s, (b, a) in sc.items()}
    print(f"| {name} | {ic:,.0f} | {isv:,.0f} | {per['cli']:.2f} | {per['srv']:.2f} |")
    for s, (b, a) in sc.items():
        names = sorted(set(b[1]) | set(a[1]))
        v = {k: (b[1].get(k, 0) - a[1].get(k, 0)) / ds for k in names}
        detail.append(f"{name} {'client' if s == 'cli' else 'reflector'}: " +
                      ", ".join(f"{k} {x:.2f}" for k, x in sorted(v.items(), key=lambda kv: -kv[1])
                                if x >= 0.01))
print()
for line in detail:
    print(line)
def selfcost(path):
    # function -> self instructions, from callgrind_annotate's listing
    out = subprocess.run(["callgrind_annotate", "--threshold=100", "--inclusive=no", "--tree=none", "--auto=no", path],
                         capture_output=True, text=True).stdout
    per = {}
    for l in out.splitlines():
        m = re.match(r"^\s*([0-9,]+) \([^)]*\)\s+(.*?)(?: \[.*\])?$", l)
        if m:
            per[m.group(2)] = per.get(m.group(2), 0) + int(m.group(1).replace(",", ""))
    return per

if top:
    for row in rows:
        name = row.split("|")[0]
        t = name.replace(" ", "_")
        d = sent(f"{t}-callgrind-{n2}") - sent(f"{t}-callgrind-{n1}")
        for s in ("cli", "srv"):
            b, a = selfcost(f"{work}/{t}-callgrind-{n2}.{s}.cg"), selfcost(f"{work}/{t}-callgrind-{n1}.{s}.cg")
            v = sorted(((b.get(k, 0) - a.get(k, 0)) / d, k) for k in set(a) | set(b))[::-1]
            print(f"\n{name} {'client' if s == 'cli' else 'reflector'}: the {top} costliest functions, "
                  "instructions per transaction (self)\n")
            for x, k in v[:top]:
                print(f"  {x:8.1f}  {k}")
EOF
if [ -n "$KEEP" ]; then
	mkdir -p "$KEEP" && cp "$WORK"/*.cg "$KEEP"/ && echo "(callgrind files in $KEEP)"
fi
[ "$FAILED" -eq 0 ]
