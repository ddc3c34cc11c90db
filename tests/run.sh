#!/bin/bash
# Run every test of `make check` and sum the counts into one closing line.
#   RANT=path-to-binary UNIT=path-to-unit-test tests/run.sh [test...]
# With arguments, only those scripts run.
#
# Every suite speaks TAP: "ok N - name", "not ok N - name", "ok N - # SKIP why",
# and a plan line "1..N".  Each suite's output is streamed as it runs; its
# counts are taken from its TAP lines, and a suite whose plan (or closing
# "N passed, N failed" line) is missing, or which exits non-zero, is broken.
cd "$(dirname "$0")/.." || exit 2
: "${RANT:=$PWD/rant}"
: "${UNIT:=tests/unit}"
export RANT

passed=0
failed=0
skipped=0
broken=()

# run_one NAME command...: run a test program, stream its output, add its counts
run_one() {
	local name=$1 log rc p f s total
	shift
	log=$(mktemp)
	echo "== $name"
	"$@" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	s=$(grep -cE '^ok [0-9]+ - # SKIP' "$log")
	p=$(($(grep -cE '^ok [0-9]+' "$log") - s))
	f=$(grep -cE '^not ok [0-9]+' "$log")
	total=$((p + f + s))
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
	if ! grep -qE "^(1\.\.$total|$((p + s)) passed, $f failed)\b" "$log"; then
		echo "!! $name: its plan or closing line does not match its $total test lines (exit $rc)"
		failed=$((failed + 1))
		broken+=("$name")
	elif [ "$f" -ne 0 ] || [ "$rc" -ne 0 ]; then
		broken+=("$name")
		[ "$f" -eq 0 ] && failed=$((failed + 1))
	fi
	rm -f "$log"
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
