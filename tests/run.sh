#!/bin/bash
# Run every test of `make check` and sum the counts into one closing line.
#   RANT=path-to-binary UNIT=path-to-unit-test tests/run.sh [test...]
# With arguments, only those scripts run.
#
# Every suite speaks TAP (see tests/lib.sh): its lines are streamed as it
# runs and counted with tap_count.  A suite whose plan "1..N" is missing or
# wrong, or which exits non-zero without a failing test, is broken: it gets
# a "not ok" line of its own, so that whoever counts this output's TAP lines
# (.ci/run) counts it too.
cd "$(dirname "$0")/.." || exit 2
: "${RANT:=$PWD/rant}"
: "${UNIT:=tests/unit}"
export RANT
# shellcheck source=tests/lib.sh
TAP_ONLY=1 . tests/lib.sh

passed=0
failed=0
skipped=0
broken=()

# run_one NAME command...: run a test program, stream its output, add its counts
run_one() {
	local name=$1 log rc p f s t0
	shift
	log=$(mktemp)
	t0=$SECONDS
	echo "== $name"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	read -r p f s < <(tap_count "$log")
	if ! tap_plan_ok "$log"; then
		echo "not ok - $name: no plan 1..$((p + f + s)) for its $((p + f + s)) tests (exit $rc)"
		f=$((f + 1))
	elif [ "$f" -eq 0 ] && [ "$rc" -ne 0 ]; then
		echo "not ok - $name: exit $rc with no failing test"
		f=$((f + 1))
	fi
	[ "$f" -eq 0 ] || broken+=("$name")
	echo "== $name: $p passed, $f failed, $s skipped ($((SECONDS - t0)) s)"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	rm -f "$log"
}

if [ $# -gt 0 ]; then
	scripts=("$@")
else
	scripts=(tests/style.sh tests/net-*.sh tests/config/test-config.sh)
	run_one unit "$UNIT"
fi
for t in "${scripts[@]}"; do
	[ -f "$t" ] || continue
	run_one "$t" bash "$t"
done
if [ ${#broken[@]} -gt 0 ]; then
	echo "failing: ${broken[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
