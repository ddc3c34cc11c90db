#!/bin/bash
# Fuzz rant's parsers with libFuzzer (clang -fsanitize=fuzzer,address,undefined).
#
#   FUZZ_SECONDS=60 tests/fuzz.sh [HARNESS...]      (make fuzz FUZZ_SECONDS=15)
#
# For each harness tests/fuzz-NAME.c (proto, cmsg, opts, log, ptp): build
# tests/fuzz-NAME, replay every input kept in tests/fuzz-regress/NAME/ (the
# crashes found so far: they must pass once the bug is fixed), then fuzz for
# FUZZ_SECONDS seconds from the seeds in tests/fuzz-corpus/NAME/.  A crash,
# timeout or leak is copied into tests/fuzz-regress/NAME/ so that it is
# replayed from then on.  One test per harness: it passes when nothing
# crashed.  Work files (grown corpus, artifacts, logs) go to tests/fuzz-out/.
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=tests/lib.sh
. tests/lib.sh

: "${FUZZ_SECONDS:=60}"
: "${FUZZ_CC:=clang}"
: "${FUZZ_CFLAGS:=-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all}"
: "${FUZZ_OUT:=tests/fuzz-out}"
# per-input limits: a parser that loops or balloons is a finding too
: "${FUZZ_TIMEOUT:=10}"
: "${FUZZ_RSS_MB:=2048}"

ALL=(proto cmsg opts log ptp)

# build NAME: compile tests/fuzz-NAME.c into tests/fuzz-NAME
build() {
	# shellcheck disable=SC2086 # FUZZ_CFLAGS is a list of flags
	"$FUZZ_CC" $FUZZ_CFLAGS -Wall -Wextra -Wno-unused-function \
		-o "tests/fuzz-$1" "tests/fuzz-$1.c" -lm -lpthread >"$FUZZ_OUT/$1/build.log" 2>&1
}

# libfuzzer_missing: print why libFuzzer cannot be used here, or nothing
libfuzzer_missing() {
	local src=$WORK/probe.c
	if ! command -v "$FUZZ_CC" >/dev/null; then
		echo "$FUZZ_CC not installed"
		return
	fi
	printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
		'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' >"$src"
	# shellcheck disable=SC2086
	if ! "$FUZZ_CC" $FUZZ_CFLAGS -o "$WORK/probe" "$src" 2>"$WORK/probe.err"; then
		echo "$FUZZ_CC cannot link -fsanitize=fuzzer ($(head -n 1 "$WORK/probe.err"); on Debian: apt-get install libclang-rt-14-dev)"
	fi
}

# summary LOG: the sanitizer's or libFuzzer's one-line verdict
summary() {
	grep -m 1 '^SUMMARY' "$1" || grep -m 1 -E 'ERROR|timeout' "$1" || echo "exit without a report (see $1)"
}

# replay NAME: run every kept regression input once; prints the failures
replay() {
	local name=$1 f bad=0
	for f in "tests/fuzz-regress/$name"/*; do
		[ -f "$f" ] || continue
		if ! "tests/fuzz-$name" -timeout="$FUZZ_TIMEOUT" -rss_limit_mb="$FUZZ_RSS_MB" "$f" \
			>"$FUZZ_OUT/$name/replay.log" 2>&1; then
			echo "#   $f: $(summary "$FUZZ_OUT/$name/replay.log")"
			bad=$((bad + 1))
		fi
	done
	return "$bad"
}

# fuzz NAME: FUZZ_SECONDS of libFuzzer; prints executions, keeps any crash
fuzz() {
	local name=$1 dir=$FUZZ_OUT/$1 rc execs a kept=()
	mkdir -p "$dir/corpus"
	rm -f "$dir"/crash-* "$dir"/timeout-* "$dir"/leak-* "$dir"/oom-* "$dir"/slow-unit-*
	"tests/fuzz-$name" -max_total_time="$FUZZ_SECONDS" -timeout="$FUZZ_TIMEOUT" \
		-rss_limit_mb="$FUZZ_RSS_MB" -print_final_stats=1 -artifact_prefix="$dir/" \
		"$dir/corpus" "tests/fuzz-corpus/$name" >"$dir/fuzz.log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$dir/fuzz.log" | tail -n 1)
	echo "# $name: ${execs:-?} executions in ${FUZZ_SECONDS} s (log: $dir/fuzz.log)"
	for a in "$dir"/crash-* "$dir"/timeout-* "$dir"/leak-* "$dir"/oom-*; do
		[ -f "$a" ] || continue
		cp "$a" "tests/fuzz-regress/$name/"
		kept+=("tests/fuzz-regress/$name/${a##*/}")
	done
	if [ "$rc" -ne 0 ] || [ ${#kept[@]} -gt 0 ]; then
		echo "#   $(summary "$dir/fuzz.log")"
		echo "#   kept as regression input: ${kept[*]:-none (see the log)}"
		return 1
	fi
	return 0
}

main() {
	local names=("$@") name why
	[ ${#names[@]} -gt 0 ] || names=("${ALL[@]}")
	case $FUZZ_SECONDS in
	'' | *[!0-9]*)
		echo "FUZZ_SECONDS must be a whole number of seconds, not '$FUZZ_SECONDS'" >&2
		exit 2
		;;
	esac
	why=$(libfuzzer_missing)
	if [ -n "$why" ]; then
		for name in "${names[@]}"; do
			skip "fuzz-$name: $why"
		done
		finish
		return
	fi
	for name in "${names[@]}"; do
		if [ ! -f "tests/fuzz-$name.c" ]; then
			not_ok "fuzz-$name: no tests/fuzz-$name.c"
			continue
		fi
		mkdir -p "$FUZZ_OUT/$name" "tests/fuzz-regress/$name"
		if ! build "$name"; then
			sed 's/^/#   /' "$FUZZ_OUT/$name/build.log" | head -n 20
			not_ok "fuzz-$name: build failed"
			continue
		fi
		# a known crash still there: fuzzing would only find it again
		if ! replay "$name"; then
			not_ok "fuzz-$name: regression inputs in tests/fuzz-regress/$name still crash"
			continue
		fi
		if [ "$FUZZ_SECONDS" -eq 0 ]; then
			ok "fuzz-$name: regression inputs pass (FUZZ_SECONDS=0: no fuzzing)"
		elif fuzz "$name"; then
			ok "fuzz-$name: no crash in $FUZZ_SECONDS s"
		else
			not_ok "fuzz-$name: crash found"
		fi
	done
	finish
}

main "$@"
