#!/bin/bash
# -M/--pmc on a veth pair.  Where the host has no usable PMU (no
# /sys/bus/event_source/devices/cpu, as on many VMs, this project's
# among them) both sides must exit 2 with one line naming the cause and the fix,
# before a datagram is sent or a file is created or truncated.
# Where the host has a PMU, a run with -M must put the counters in the csv
# log, the report and the JSON.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

PMU=/sys/bus/event_source/devices

# The refusal: exit 2, one line, nothing sent, no file touched.
test_refused() {
	local out0 in0 log=$WORK/keep.log json=$WORK/new.json rc lines
	reflector r1 --once || { not_ok "refused: reflector did not start"; return; }
	printf 'earlier contents\n' >"$log"
	out0=$(udp_stat "$NS_A" OutDatagrams)
	in0=$(udp_stat "$NS_B" InDatagrams)
	emit e1 -M --count 100 -l "$log" --log-format csv --json "$json"
	expect_rc "emit -M without a PMU" 2
	lines=$(wc -l <"$WORK/e1.err")
	expect_eq "emit -M: one line on stderr" "$lines" 1
	check "emit -M: the line names the missing PMU" grep -q "^rant: -M: no hardware PMU on this host (no $PMU/cpu" "$WORK/e1.err"
	check "emit -M: the line names the rdpmc switch" grep -qF "$PMU/cpu/rdpmc" "$WORK/e1.err"
	check "emit -M: the line names perf_event_paranoid" grep -qF /proc/sys/kernel/perf_event_paranoid "$WORK/e1.err"
	check "emit -M: nothing on stdout" [ ! -s "$WORK/e1.out" ]
	expect_eq "emit -M: the client sent no datagram" "$(($(udp_stat "$NS_A" OutDatagrams) - out0))" 0
	expect_eq "emit -M: the reflector received no datagram" "$(($(udp_stat "$NS_B" InDatagrams) - in0))" 0
	expect_eq "emit -M: the existing log is not truncated" "$(cat "$log")" "earlier contents"
	check "emit -M: no JSON file created" [ ! -e "$json" ]
	check "emit -M: the reflector saw no session" not_grep 'session 0x' "$WORK/r1.err"
	kill -INT "$REFLECTOR_PID" 2>/dev/null
	wait_for 30 gone "$REFLECTOR_PID" || kill -9 "$REFLECTOR_PID" 2>/dev/null

	# the reflector refuses before it binds its port
	ip netns exec "$NS_B" timeout 10 "$RANT" -i "$VETH_B" -M --port 12399 --once -l "$log" \
		>"$WORK/r2.out" 2>"$WORK/r2.err"
	rc=$?
	expect_eq "reflect -M without a PMU: exit status" "$rc" 2
	expect_eq "reflect -M: one line on stderr" "$(wc -l <"$WORK/r2.err")" 1
	check "reflect -M: the line names the missing PMU" grep -q "^rant: -M: no hardware PMU" "$WORK/r2.err"
	expect_eq "reflect -M: the existing log is not truncated" "$(cat "$log")" "earlier contents"
}

# With a PMU: the counters per transaction in the csv log, report and JSON.
test_counted() {
	local n=2000
	reflector r3 --once -M -l "$WORK/r3.csv" --log-format csv || { not_ok "counted: reflector did not start"; show r3; return; }
	emit e3 -M --count "$n" -l "$WORK/e3.csv" --log-format csv --json "$WORK/e3.json"
	if [ "$EMIT_RC" = 2 ]; then
		# a PMU, but not usable here (rdpmc, paranoid, counters taken): the line must say why
		expect_eq "emit -M with an unusable PMU: one line" "$(wc -l <"$WORK/e3.err")" 1
		check "emit -M with an unusable PMU: the line names a fix" grep -qE 'rdpmc|perf_event_paranoid|nmi_watchdog|without -M' "$WORK/e3.err"
		skip "counted: the PMU here is not usable: $(cat "$WORK/e3.err")"
		return
	fi
	expect_rc "emit -M with a PMU" 0
	check "emit -M: the report has the counter table" grep -q '^--- Hardware counters per transaction (user space, send -> receive) ---' "$WORK/e3.out"
	check "emit -M: csv header has pmc_cycles" grep -q ',pmc_cycles' "$WORK/e3.csv"
	expect_eq "emit -M: JSON pmc.cycles.samples + missing = measured" \
		"$(($(json_get "$WORK/e3.json" pmc.cycles.samples) + $(json_get "$WORK/e3.json" pmc.cycles.missing)))" "$n"
	check "emit -M: JSON pmc.cycles.max >= avg > 0" python3 -c 'import json,sys
c=json.load(open(sys.argv[1]))["pmc"]["cycles"]
sys.exit(0 if c["max"] >= c["avg"] > 0 else 1)' "$WORK/e3.json"
	wait_for 30 gone "$REFLECTOR_PID"
	check "reflect -M: the report has the counter table" grep -q 'user space, receive -> send' "$WORK/r3.out"
	check "reflect -M: csv header has pmc_instructions" grep -q ',pmc_instructions' "$WORK/r3.csv"
	check "analyze: reads the counters back" bash -c "'$RANT' --analyze '$WORK/e3.csv' | grep -q 'Hardware counters'"
}

main() {
	need_root "pmc tests"
	ns_setup || { not_ok "namespaces"; finish; exit 1; }
	if [ -e "$PMU/cpu" ] || [ -e "$PMU/cpu_core" ]; then
		test_counted
	else
		test_refused
	fi
	finish
}

main "$@"
