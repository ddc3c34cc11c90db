#!/bin/bash
# Run every test of `make check` and sum the counts into one closing line.
#   RANT=path-to-binary UNIT=path-to-unit-test tests/run.sh [test...]
# With arguments, only those scripts run.
cd "$(dirname "$0")/.." || exit 2
: "${RANT:=$PWD/rant}"
: "${UNIT:=tests/unit}"
export RANT

passed=0
failed=0
skipped=0
broken=()

# run_one NAME command...: run a test program, echo its output, add its counts
run_one() {
	local name=$1 out line p f s rc
	shift
	echo "== $name"
	out=$("$@" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	if [ -z "$line" ]; then
		echo "!! $name printed no result line (exit $rc)"
		failed=$((failed + 1))
		broken+=("$name")
		return
	fi
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/')
	s=$(echo "$line" | sed -nE 's/.*, ([0-9]+) skipped.*/\1/p')
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + ${s:-0}))
	if [ "$f" -ne 0 ] || [ "$rc" -ne 0 ]; then
		broken+=("$name")
		[ "$f" -eq 0 ] && failed=$((failed + 1))
	fi
}

if [ $# -gt 0 ]; then
	scripts=("$@")
else
	scripts=(tests/net-*.sh tests/config/test-config.sh)
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
