#!/bin/bash
# Option parsing, case by case: sends nothing, needs no namespace and no root.
#
# tests/net-opts.d/cases holds the cases, one a line: a command line, the
# exit status it must end with and the one line that matters (the usage
# error, the note, or the configuration field it sets); its header says how
# they are read.  tests/opts-table checks each (one test a case), then
# README's option list is compared with rant --help.
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=tests/lib.sh
. tests/lib.sh

: "${OPTS_TABLE:=$PWD/tests/opts-table}"
CASES=$PWD/tests/net-opts.d/cases

# The files the cases name, in the directory they run in.
make_files() {
	printf '0123456789abcdef0123456789abcdef' >"$WORK/k600"
	chmod 600 "$WORK/k600"
	printf '0123456789abcdef0123456789abcdef' >"$WORK/k644"
	chmod 644 "$WORK/k644"
	printf '01234567' >"$WORK/kshort"
	chmod 600 "$WORK/kshort"
	# outputs spelt two ways: a directory, a file and a link to it
	mkdir -p "$WORK/sub"
	: >"$WORK/have.json"
	ln -sf have.json "$WORK/link.json"
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

# --txtime refused at the start, before a socket is opened or an output
# written: one line, exit 2, no JSON file (this host's qdiscs have no etf
# on lo; the refusals that need an etf run in the guest lab)
txtime_refusals() {
	local what out err rc
	for what in "no -i:needs -i IFACE" "-i lo:no etf qdisc on lo"; do
		rm -f "$WORK/tx.json"
		if [[ ${what%%:*} == "no -i" ]]; then
			"$RANT" -a 127.0.0.1 --txtime 100 --count 3 --json "$WORK/tx.json" >"$WORK/tx.out" 2>"$WORK/tx.err"
		else
			"$RANT" -i lo -a 127.0.0.1 --txtime 100 --count 3 --json "$WORK/tx.json" >"$WORK/tx.out" 2>"$WORK/tx.err"
		fi
		rc=$?
		out=$(cat "$WORK/tx.out") err=$(cat "$WORK/tx.err")
		if [[ $rc == 2 && -z $out && $(wc -l <"$WORK/tx.err") == 1 && $err == *"${what#*:}"* && ! -e $WORK/tx.json ]]; then
			ok "--txtime refused before anything is sent (${what%%:*}): exit 2, one line"
		else
			not_ok "--txtime refused before anything is sent (${what%%:*}): exit 2, one line"
			printf '#   rc %s, stderr: %s\n' "$rc" "$err"
		fi
	done
}

main() {
	local n
	[ -x "$RANT" ] || { not_ok "no rant binary at $RANT (run make)"; finish; exit 1; }
	[ -x "$OPTS_TABLE" ] || { not_ok "no $OPTS_TABLE (make tests/opts-table)"; finish; exit 1; }
	make_files
	readme_is_help
	txtime_refusals
	# one CPU: -2 names the count in its message
	(cd "$WORK" && taskset -c 0 "$OPTS_TABLE" "$CASES" "$RANT") >"$WORK/verdicts" 2>&1
	expect_eq "opts-table ran every case (exit status)" "$?" 0
	verdicts opts <"$WORK/verdicts"
	n=$(grep -cv -e '^#' -e '^[[:space:]]*$' "$CASES")
	expect_eq "a verdict for each of the $n cases" "$(grep -c 'ok	' "$WORK/verdicts")" "$n"
	finish
}

main "$@"
