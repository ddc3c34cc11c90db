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

# --analyze --trace FILE: a FIFO, a directory and tracefs's trace_pipe (a
# regular file there that waits for events) refused at once (one line, exit
# 2; a FIFO never opened for reading without a writer), no output made
trace_inputs() {
	local what path rc
	mkfifo "$WORK/trace.fifo" && mkdir -p "$WORK/trace.dir" || return
	for what in fifo dir trace_pipe; do
		path=$WORK/trace.$what
		if [[ $what == trace_pipe ]]; then
			path=/sys/kernel/tracing/trace_pipe
			[[ -e $path ]] || { skip "--trace: no $path here"; continue; }
		fi
		rm -f "$WORK/tr.json"
		timeout 10 "$RANT" --analyze "$PWD/tests/net-opts.d/txtime-etf.csv" --trace "$path" \
			--json "$WORK/tr.json" >"$WORK/tr.out" 2>"$WORK/tr.err"
		rc=$?
		if [[ $rc == 2 && $(wc -l <"$WORK/tr.err") == 1 && ! -e $WORK/tr.json ]] &&
			grep -Eq "a saved trace is read whole|cannot read" "$WORK/tr.err"; then
			ok "--trace: a $what refused at once: exit 2, one line, no JSON"
		else
			not_ok "--trace: a $what refused at once: exit 2, one line, no JSON"
			printf '#   rc %s, stderr: %s\n' "$rc" "$(cat "$WORK/tr.err")"
		fi
	done
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

# ok_rows_diff B A LOG: the count of LOG's ok rows with csv columns B and A
# (seconds.nanoseconds stamps) and the least B - A, in ns, exact (the
# seconds apart, then the ns)
ok_rows_diff() {
	awk -F, -v b="$1" -v a="$2" 'function ns(p, q,  x, y) { split(p, x, "."); split(q, y, ".")
			return (x[1] - y[1]) * 1000000000 + (x[2] - y[2]) }
		NR > 1 && $2 == "ok" && $b != "" && $a != "" { d = ns($b, $a); n++; if (n == 1 || d < m) m = d }
		END { print n, m }' "$3"
}

# --analyze of a --txtime client's csv log (tests/net-opts.d/txtime-etf.csv: 200 rows
# of the guest lab's run through etf below taprio, tests/vm/guest-tsn.sh): launch error
# (T1 - T1_LT) and time to spare (T1_LT - T1_SW) from its t1_lt column, their samples and
# minimum as the rows give them, per class too, in the JSON and the plot; a launch error
# below 0 (the etf sends up to its delta early) is no clock warning
txtime_analyze() {
	local log=$PWD/tests/net-opts.d/txtime-etf.csv want got
	(cd "$WORK" && "$RANT" --analyze "$log" --json an.json --plot an.svg >an.out 2>an.err)
	expect_eq "--analyze of a --txtime log exits 0" "$?" 0
	want=$(ok_rows_diff 4 13 "$log")
	got=$(awk '/^launch error \(T1-T1_LT\)/ { print $4, $5 }' "$WORK/an.out")
	expect_eq "--analyze: launch error's samples and min are the log's ok rows' T1 - T1_LT" "$got" "$want"
	want=$(ok_rows_diff 13 3 "$log")
	got=$(awk '/^time to spare \(T1_LT-T1_SW\)/ { print $5, $6 }' "$WORK/an.out")
	expect_eq "--analyze: time to spare's samples and min are the log's ok rows' T1_LT - T1_SW" "$got" "$want"
	expect_eq "--analyze: each class's rows have launch error and time to spare" \
		"$(grep -cE '^ +(launch er|to spare) ' "$WORK/an.out")" 6
	expect_eq "--analyze: no warning of negative samples for launch error" \
		"$(grep -c 'negative samples' "$WORK/an.out" "$WORK/an.err" | awk -F: '{ s += $2 } END { print s }')" 0
	expect_eq "--analyze: JSON has launch_error for the run and each class" \
		"$(grep -o '"launch_error": {"samples"' "$WORK/an.json" | wc -l)" 4
	# the rows whose launch time the etf dropped: their statuses, counted as lost
	want=$(awk -F, 'NR > 1 { m += $2 == "launch_missed"; i += $2 == "launch_invalid" } END { print m + 0, i + 0 }' "$log")
	expect_eq "--analyze: launch times missed and invalid are the log's launch_missed and launch_invalid rows" \
		"$(sed -n 's/^Launch time (from the log): \([0-9]*\) missed, \([0-9]*\) invalid.*/\1 \2/p' "$WORK/an.out")" "$want"
	expect_eq "--analyze: ... and JSON's launch_time" \
		"$(grep -o '"launch_time": {"missed": [0-9]*, "invalid": [0-9]*' "$WORK/an.json" | grep -o '[0-9]*' | tr '\n' ' ')" "$want "
	expect_eq "--analyze: the plot has each class's launch error and time to spare" \
		"$(grep -oE 'id="class[0-2]-(launch_error|time_to_spare)-p50"' "$WORK/an.svg" | sort -u | wc -l)" 6
}

main() {
	local n
	[ -x "$RANT" ] || { not_ok "no rant binary at $RANT (run make)"; finish; exit 1; }
	[ -x "$OPTS_TABLE" ] || { not_ok "no $OPTS_TABLE (make tests/opts-table)"; finish; exit 1; }
	make_files
	readme_is_help
	txtime_refusals
	txtime_analyze
	trace_inputs
	# one CPU: -2 names the count in its message
	(cd "$WORK" && taskset -c 0 "$OPTS_TABLE" "$CASES" "$RANT") >"$WORK/verdicts" 2>&1
	expect_eq "opts-table ran every case (exit status)" "$?" 0
	verdicts opts <"$WORK/verdicts"
	n=$(grep -cv -e '^#' -e '^[[:space:]]*$' "$CASES")
	expect_eq "a verdict for each of the $n cases" "$(grep -c 'ok	' "$WORK/verdicts")" "$n"
	finish
}

main "$@"
