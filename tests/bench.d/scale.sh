#!/bin/bash
# make bench, part scale: what rant costs as runs get long.
#  - --analyze of generated logs (tests/plot-gen) of 1 M, 10 M and 30 M rows:
#    a text emit log, and a csv emit + reflect pair joined by SEQ; elapsed
#    and CPU time and peak RSS, beside one awk pass summing the rtt column of
#    the same file, run right before it (the host is shared: the ratio of
#    the two, measured side by side, is the figure to read);
#  - the locked memory (peak RSS) of a client with --count 2000000 and no
#    log, beside a -d run's (loopback, a reflector of its own);
#  - how long a large log ring (--log-records, default 30 M) takes to fault
#    in before the first packet.
# Generated logs are deleted as soon as they are measured (a 30 M-row pair
# is about 3 GB in TMPDIR).
#
#   tests/bench.d/scale.sh      SCALE_ROWS="1000000 10000000 30000000" PREFAULT_RECORDS=30000000
set -u
cd "$(dirname "$0")/../.." || exit 2
: "${SCALE_ROWS:=1000000 10000000 30000000}"
: "${PREFAULT_RECORDS:=30000000}"
: "${SCALE_PORT:=23790}"
: "${TMPDIR:=/tmp}"
: "${RANT:=$PWD/rant}"
GEN=$PWD/tests/plot-gen

if [ ! -x "$RANT" ] || [ ! -x "$GEN" ]; then
	echo "scale: needs ./rant and tests/plot-gen (make rant tests/plot-gen)" >&2
	exit 2
fi
[ -x /usr/bin/time ] || { echo "scale: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
work=$(mktemp -d "$TMPDIR/rant-scale.XXXXXX") || exit 1
refl=
trap '[ -n "$refl" ] && kill "$refl" 2>/dev/null; rm -rf "$work"' EXIT

# measure OUT CMD...: elapsed s, CPU s (user + system), peak RSS kB into OUT
measure() {
	local out=$1
	shift
	/usr/bin/time -f "%e %U %S %M" -o "$out.t" "$@" >/dev/null 2>"$out.err" || {
		echo "scale: $* failed:" >&2
		cat "$out.err" >&2
		return 1
	}
	awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$out.t" >"$out"
}

row() {
	local n=$1 kind=$2 mib=$3 a b
	read -r ae ac am <"$work/awk"
	read -r re rc rm <"$work/rant"
	a=$(awk -v x="$re" -v y="$ae" 'BEGIN { printf "%.1f", (y > 0) ? x / y : 0 }')
	b=$(awk -v x="$rc" -v y="$ac" 'BEGIN { printf "%.1f", (y > 0) ? x / y : 0 }')
	printf '%10s  %-12s %7s %8s %8s %6s %8s %8s %6s %9s\n' "$n" "$kind" "$mib" "$ae" "$re" "$a" "$ac" "$rc" "$b" \
		"$((rm / 1024))"
	: "$am"
}

echo "scale: --analyze of generated logs, beside one awk pass summing the rtt column of the same file"
printf '%10s  %-12s %7s %8s %8s %6s %8s %8s %6s %9s\n' rows log MiB "awk s" "rant s" ratio "awk cpu" \
	"rant cpu" ratio "RSS MiB"
for n in $SCALE_ROWS; do
	"$GEN" "$n" "$work/e.log" 2>/dev/null || exit 1
	mib=$(($(stat -c %s "$work/e.log") / 1048576))
	# shellcheck disable=SC2016 # awk's own $4
	measure "$work/awk" awk 'NR > 2 { s += $4 } END { print s }' "$work/e.log" || exit 1
	measure "$work/rant" "$RANT" --analyze "$work/e.log" -q || exit 1
	row "$n" "text" "$mib"
	rm -f "$work/e.log"
	"$GEN" "$n" "$work/e.csv" "$work/r.csv" 2>/dev/null || exit 1
	mib=$((($(stat -c %s "$work/e.csv") + $(stat -c %s "$work/r.csv")) / 1048576))
	# shellcheck disable=SC2016 # awk's own $5
	measure "$work/awk" awk -F, 'NR > 2 { s += $5 } END { print s }' "$work/e.csv" || exit 1
	measure "$work/rant" "$RANT" --analyze "$work/e.csv" --analyze "$work/r.csv" -q || exit 1
	row "$n" "csv joined" "$mib"
	rm -f "$work/e.csv" "$work/r.csv"
done

# a reflector on loopback for the client runs
"$RANT" --port "$SCALE_PORT" -q >"$work/refl.out" 2>&1 &
refl=$!
for _ in $(seq 50); do
	ss -Hlun "sport = :$SCALE_PORT" | grep -q . && break
	sleep 0.1
done

# client RSS: the memory is taken before the first packet; SIGINT after 1 s
client() {
	/usr/bin/time -f "%M" -o "$work/c.t" timeout -s INT 1 "$RANT" -a 127.0.0.1 --port "$SCALE_PORT" -q "$@" \
		>/dev/null 2>&1
	echo "$(($(tail -n 1 "$work/c.t") / 1024))"
}
echo "scale: client peak RSS (MiB): -d 1: $(client -d 1); --count 2000000: $(client --count 2000000);" \
	"--count 2000000 -l (ring of the run): $(client --count 2000000 -l "$work/c.log")"
rm -f "$work/c.log"

# the prefault of a large ring: a one-transaction run with it, less one without
measure "$work/p0" "$RANT" -a 127.0.0.1 --port "$SCALE_PORT" --count 1 -q -l "$work/p.log" --log-records 1000 || exit 1
measure "$work/p1" "$RANT" -a 127.0.0.1 --port "$SCALE_PORT" --count 1 -q -l "$work/p.log" \
	--log-records "$PREFAULT_RECORDS" || exit 1
read -r e0 _ _ <"$work/p0"
read -r e1 _ m1 <"$work/p1"
echo "scale: a ring of $PREFAULT_RECORDS records: $(awk -v a="$e1" -v b="$e0" 'BEGIN { printf "%.2f", a - b }') s to" \
	"fault in before the first packet ($((m1 / 1024)) MiB)"
