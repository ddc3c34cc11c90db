#!/bin/bash
# Run test suites side by side and sum their counts into one closing line.
#   RANT=binary UNIT=unit-test-binary JOBS=N tests/run.sh [suite...]
# Without arguments: everything `make check` runs.  A suite is a script
# (with its arguments, as one word: "tests/shellcheck.sh config"), or
# "unit" for the unit tests ($UNIT).
#
# JOBS suites run at once (default 6: most of a suite's time is spent
# waiting on packets, sessions and timeouts, not on a CPU), the longest
# (LONGEST) first.  A suite's output is shown when it ends, whole, under "== NAME",
# followed by its counts, its wall time and the CPU time it used.  Suites
# that share something of the host's (the tracefs instance "rant", the
# hugepage pool) take a lock for it themselves (tests/lib.sh: host_lock).
#
# Every suite speaks TAP (see tests/lib.sh) and is counted with tap_count.
# A suite whose plan "1..N" is missing or wrong, which exits non-zero
# without a failing test, or which outlives SUITE_TIMEOUT seconds, is
# broken: it gets a "not ok" line of its own, so that whoever counts this
# output's TAP lines (.ci/run) counts it too.
cd "$(dirname "$0")/.." || exit 2
: "${RANT:=$PWD/rant}"
: "${UNIT:=tests/unit}"
: "${JOBS:=6}"
: "${SUITE_TIMEOUT:=900}"
export RANT
# shellcheck source=tests/lib.sh
TAP_ONLY=1 . tests/lib.sh

# The longest first (by their wall time in make check: tests/README.md),
# then the rest, so that no long suite starts last and holds up the end.
# config.sh's tests in two halves of about the same time.
CONFIG_HALVES=("tests/config/test-config.sh more mlx5" "tests/config/test-config.sh usage ice carrier tuning veth")
LONGEST=("${CONFIG_HALVES[@]}" tests/net-guard.sh tests/net-compat.sh tests/shellcheck.sh tests/net-core.sh
	tests/net-plot.sh tests/net-outputs.sh tests/net-abuse.sh tests/net-classes.sh tests/net-log.sh)

passed=0
failed=0
skipped=0
broken=()
RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/rant-run.XXXXXX")
trap 'rm -rf "$RUN_DIR"' EXIT

# secs "XmY.ZZZs": seconds, as times(1) prints them
secs() {
	local m=${1%%m*} s=${1#*m}
	awk -v m="$m" -v s="${s%s}" 'BEGIN { printf "%.1f", m * 60 + s }'
}

# job K SUITE: run it (killed after SUITE_TIMEOUT s), output in K.log;
# "rc wall cpu" in K.done when it has ended
job() {
	local k=$1 t0 rc cmd u s
	read -ra cmd <<<"$2"
	[ "${cmd[0]}" = unit ] && cmd=("$UNIT") || cmd=(bash "${cmd[@]}")
	t0=$EPOCHREALTIME
	timeout -k 10 "$SUITE_TIMEOUT" "${cmd[@]}" >"$RUN_DIR/$k.log" 2>&1 </dev/null
	rc=$?
	# CPU time of this subshell's children: the suite and all it waited for
	times >"$RUN_DIR/$k.times"
	read -r u s < <(tail -n 1 "$RUN_DIR/$k.times")
	echo "$rc $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')" \
		"$(awk -v u="$(secs "$u")" -v s="$(secs "$s")" 'BEGIN { printf "%.1f", u + s }')" \
		>"$RUN_DIR/$k.tmp"
	mv "$RUN_DIR/$k.tmp" "$RUN_DIR/$k.done"
}

# report K SUITE: show a finished suite's output and add its counts
report() {
	local k=$1 name=$2 log=$RUN_DIR/$1.log rc wall cpu p f s why
	read -r rc wall cpu <"$RUN_DIR/$k.done"
	echo "== $name"
	cat "$log"
	read -r p f s < <(tap_count "$log")
	why=
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		why="still running after $SUITE_TIMEOUT s, killed"
	elif ! tap_plan_ok "$log"; then
		why="no plan 1..$((p + f + s)) for its $((p + f + s)) tests (exit $rc)"
	elif [ "$f" -eq 0 ] && [ "$rc" -ne 0 ]; then
		why="exit $rc with no failing test"
	fi
	if [ -n "$why" ]; then
		echo "not ok - $name: $why"
		f=$((f + 1))
	fi
	if [ "$f" -ne 0 ]; then
		broken+=("$name")
		{
			echo "  $name:"
			tap_failures "$log"
			[ -z "$why" ] || echo "   not ok - $name: $why"
		} >>"$RUN_DIR/failures"
	fi
	echo "== $name: $p passed, $f failed, $s skipped ($wall s, CPU $cpu s)"
	printf '%8s %8s  %s\n' "$wall" "$cpu" "$name" >>"$RUN_DIR/times"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
}

if [ $# -gt 0 ]; then
	given=("$@")
else
	given=(unit tests/style.sh tests/man.sh tests/net-opts.sh tests/bench-summary.sh tests/bench-rusage.sh "${LONGEST[@]}" tests/net-*.sh)
	# (tests/config/test-config.sh alone runs both halves in one)
fi
# the longest of them first, then the others in the order given, each once
declare -A is_given=() taken=()
for t in "${given[@]}"; do
	is_given[$t]=1
done
suites=()
for t in "${LONGEST[@]}" "${given[@]}"; do
	if [ -n "${is_given[$t]:-}" ] && [ -z "${taken[$t]:-}" ]; then
		suites+=("$t")
		taken[$t]=1
	fi
done

t0=$EPOCHREALTIME
declare -A shown=()
running=0
# collect: report every suite that has ended since the last call
collect() {
	local k
	for k in "${!suites[@]}"; do
		if [ -e "$RUN_DIR/$k.done" ] && [ -z "${shown[$k]:-}" ]; then
			report "$k" "${suites[$k]}"
			shown[$k]=1
			running=$((running - 1))
		fi
	done
}
for k in "${!suites[@]}"; do
	name=${suites[$k]}
	if [ "$name" != unit ] && [ ! -f "${name%% *}" ]; then
		continue
	fi
	while [ "$running" -ge "$JOBS" ]; do
		wait -n
		collect
	done
	echo "== started $name"
	job "$k" "$name" &
	running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
	wait -n
	collect
done
wait
collect
if [ -s "$RUN_DIR/times" ]; then
	echo "== wall and CPU seconds per suite, longest first:"
	sort -rn "$RUN_DIR/times"
	awk -v w="$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')" -v j="$JOBS" \
		'{ c += $2 } END { printf "== %d s wall, %.0f s CPU, %d suites, at most %d at once\n", w, c, NR, j }' \
		"$RUN_DIR/times"
fi
if [ ${#broken[@]} -gt 0 ]; then
	echo "failing: ${broken[*]}"
	# what failed, again at the end where a truncated log still shows it
	# (a suite's own "not ok" lines; one that broke is named above)
	cat "$RUN_DIR/failures"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
