#!/bin/bash
# Option parsing, characterized: sends nothing, needs no namespace.
#
# tests/opts-golden.d/cases holds a few thousand command lines ("# NAME"
# starts a group).  tests/opts-golden runs each through opt_parse (printing
# every configuration field it set) and, when parsing ends the program (help,
# version, a usage error, --analyze of a missing log), through rant itself.
# Their stdout, stderr and exit status must equal tests/opts-golden.d/expected,
# recorded from the option code before it became one table:
#   tests/net-opts.sh --record     writes expected anew (after a deliberate change)
# One TAP line per group; a failing group shows its first differences.
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=tests/lib.sh
. tests/lib.sh

: "${OPTS_GOLDEN:=$PWD/tests/opts-golden}"
CASES=$PWD/tests/opts-golden.d/cases
EXPECTED=$PWD/tests/opts-golden.d/expected

# Files the cases name, relative to the directory they run in.
make_files() {
	printf '0123456789abcdef0123456789abcdef' >"$WORK/k600"
	chmod 600 "$WORK/k600"
	printf '0123456789abcdef0123456789abcdef' >"$WORK/k644"
	chmod 644 "$WORK/k644"
	printf '01234567' >"$WORK/kshort"
	chmod 600 "$WORK/kshort"
}

run_all() {
	# one CPU: -2 names the count in its message
	(cd "$WORK" && taskset -c 0 "$OPTS_GOLDEN" "$CASES" "$RANT")
}

# split FILE DIR: one file per "# group" in DIR, numbered in order
split_groups() {
	mkdir -p "$2"
	awk -v d="$2" '/^# /{ n++; f = sprintf("%s/%04d", d, n) } { print > f }' "$1"
}

# README's option list is `rant --help` from "Options:" to the exit status line.
readme_is_help() {
	awk '/^```$/ { if (inblk) exit; next } /^Options:$/ { inblk = 1 } inblk' README.md \
		>"$WORK/readme.opts"
	"$RANT" --help | sed -n '/^Options:$/,$p' >"$WORK/help.opts"
	if cmp -s "$WORK/readme.opts" "$WORK/help.opts" && [ -s "$WORK/help.opts" ]; then
		ok "README's option list is rant --help"
	else
		not_ok "README's option list is rant --help"
		diff "$WORK/readme.opts" "$WORK/help.opts" | head -20 | sed 's/^/#   /'
	fi
}

main() {
	[ -x "$RANT" ] || { not_ok "no rant binary at $RANT (run make)"; finish; exit 1; }
	[ -x "$OPTS_GOLDEN" ] || { not_ok "no $OPTS_GOLDEN (make tests/opts-golden)"; finish; exit 1; }
	make_files
	if [ "$1" = "--record" ]; then
		run_all >"$EXPECTED"
		echo "recorded $(grep -c '^=== ' "$EXPECTED") cases in $EXPECTED"
		exit 0
	fi
	readme_is_help
	run_all >"$WORK/got"
	expect_eq "golden: as many cases as recorded" "$(grep -c '^=== ' "$WORK/got")" \
		"$(grep -c '^=== ' "$EXPECTED")"
	split_groups "$EXPECTED" "$WORK/want.d"
	split_groups "$WORK/got" "$WORK/got.d"
	for f in "$WORK"/want.d/*; do
		g=$(head -1 "$f")
		if cmp -s "$f" "$WORK/got.d/${f##*/}"; then
			ok "golden: ${g#\# } ($(grep -c '^=== ' "$f") command lines)"
		else
			not_ok "golden: ${g#\# }: output differs from the recording"
			diff "$f" "$WORK/got.d/${f##*/}" | head -20 | sed 's/^/#   /'
		fi
	done
	finish
}

main "$@"
