#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Integration tests of rant's core: emit and reflect over a veth pair between
# two throwaway namespaces (and over lo inside one), checked for counts,
# structure and consistency, never for absolute latencies (the CI VM is a
# noisy 2-core guest).
#
#   normal run, report and JSON format, client before server, server killed
#   and restarted, junk to both ends, a misbehaving fake reflector, --count
#   with --interval, IPv6, lo, exit codes, SIGINT.
#
# Needs root (namespaces) and python3 (JSON, junk, fake reflector, all in
# tests/net-core.d/).  Prints "ok N - name" per check, then "N passed, ...".
#
# Some checks are small `bash -c '...' _ ARGS` or awk programs whose $1..
# expand in the inner interpreter, hence:
# shellcheck disable=SC2016

# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HELPERS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/net-core.d
PORT=12345		# the reflector's default port, used by lib.sh's helpers

# ------------------------------------------------------------ helpers

# jv NAME KEY.PATH: a value from $WORK/NAME.json, "(missing)" when absent
jv() {
	json_get "$WORK/$1.json" "$2" 2>/dev/null || echo "(missing)"
}

# jsum NAME KEY...: the sum of top-level numbers of $WORK/NAME.json
jsum() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(sum(d[k] for k in sys.argv[2:]))' "$WORK/$1.json" "${@:2}" 2>/dev/null || echo "(missing)"
}

# jtrue NAME PYEXPR: a condition over $WORK/NAME.json, where d is the whole
# object, p its packets and m its metrics.  On failure prints the packets.
jtrue() {
	python3 - "$WORK/$1.json" "$2" <<'EOF'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
    p, m = d.get("packets", {}), d.get("metrics", {})
    r = eval(sys.argv[2])
except Exception as e:
    r, d = False, {"error": repr(e)}
if not r:
    print("# false: %s\n# packets %s duration_s %s" % (sys.argv[2], d.get("packets"), d.get("duration_s")))
sys.exit(0 if r else 1)
EOF
}

# reap_left PID: a process a test left running (after a failure) goes now, so
# that the next test's reflector can bind the port
reap_left() {
	if [ -n "$1" ] && ! gone "$1"; then
		kill -9 "$1" 2>/dev/null
	fi
	{ wait "$1"; } 2>/dev/null
	return 0
}

# emit_to NAME ADDR [opts...]: a client in NS_A against ADDR, in the foreground
emit_to() {
	local name=$1 addr=$2
	shift 2
	in_a "$RANT" -i "$VETH_A" -a "$addr" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	EMIT_RC=$?
}

# session_started NAME: the reflector whose stderr is NAME.err has a session
session_started() {
	has "$WORK/$1.err" 'session 0x[0-9a-f]+ started'
}

# fcmp "a OP b": floating point comparison
fcmp() {
	awk "BEGIN { exit !($1) }"
}

# now_ms: the wall clock in ms
now_ms() {
	echo $(($(now_us) / 1000))
}

# udp_in NS: UDP datagrams that reached NS (delivered or refused), v4 and v6
udp_in() {
	ip netns exec "$1" awk '
		$1 == "Udp:" && $2 ~ /^[0-9]+$/ { n += $2 + $3 + $4 }
		$1 == "Udp6InDatagrams" || $1 == "Udp6NoPorts" || $1 == "Udp6InErrors" { n += $2 }
		END { print n + 0 }' /proc/net/snmp /proc/net/snmp6
}

# ------------------------------------------------------------ tests

# 1. A normal run: counts on both sides agree, statistics are consistent,
#    every logged transaction decomposes as it must.
t_normal() {
	local n=3000 w=100 csv rc

	reflector_or normal t1r --once -s --json "$WORK/t1r.json" || return
	emit t1c -s -w "$w" --count "$n" --json "$WORK/t1c.json" -l "$WORK/t1c.csv" --log-format csv
	expect_eq "normal: client exits 0" "$EMIT_RC" 0
	wait_exit "$REFLECTOR_PID" 30
	expect_eq "normal: reflector --once exits 0 after the FIN" "$WAIT_RC" 0

	expect_eq "normal: client sent = count + warm-up" "$(jv t1c packets.sent)" $((n + w))
	expect_eq "normal: client received = sent" "$(jv t1c packets.received)" $((n + w))
	expect_eq "normal: client lost" "$(jv t1c packets.lost)" 0
	expect_eq "normal: client late" "$(jv t1c packets.late)" 0
	expect_eq "normal: client duplicate" "$(jv t1c packets.duplicate)" 0
	expect_eq "normal: client invalid" "$(jv t1c packets.invalid)" 0
	expect_eq "normal: client warm-up" "$(jv t1c packets.warmup)" "$w"
	expect_eq "normal: client stop reason" "$(jv t1c stop_reason)" count
	check "normal: rtt samples = received - warm-up" \
		jtrue t1c 'm["rtt"]["samples"] == p["received"] - p["warmup"]'
	check "normal: response/network/app_rtt samples = count" \
		jtrue t1c "all(m[k]['samples'] == $n for k in ('response', 'network', 'app_rtt'))"
	check "normal: min <= avg <= max, percentiles monotonic (emit)" \
		python3 "$HELPERS/rantcheck.py" stats "$WORK/t1c.json" rtt response network app_rtt
	check "normal: min <= avg <= max, percentiles monotonic (reflect)" \
		python3 "$HELPERS/rantcheck.py" stats "$WORK/t1r.json" response
	check "normal: network min <= rtt min, rtt max <= app_rtt max" \
		jtrue t1c 'm["network"]["min_ns"] <= m["rtt"]["min_ns"] and m["rtt"]["max_ns"] <= m["app_rtt"]["max_ns"]'

	expect_eq "normal: reflector received = client sent" "$(jv t1r packets.received)" $((n + w))
	expect_eq "normal: reflector sent = received" "$(jv t1r packets.sent)" $((n + w))
	expect_eq "normal: reflector warm-up" "$(jv t1r packets.warmup)" "$w"
	expect_eq "normal: reflector lost/duplicate/invalid" \
		"$(jv t1r packets.lost)/$(jv t1r packets.duplicate)/$(jv t1r packets.invalid)" 0/0/0
	expect_eq "normal: reflector response samples = count" "$(jv t1r metrics.response.samples)" "$n"
	expect_eq "normal: reflector stop reason" "$(jv t1r stop_reason)" fin
	expect_eq "normal: reflector session = client session" "$(jv t1r session)" "$(jv t1c session)"
	# the client's response metric is built from the stamps the reflector echoed
	expect_eq "normal: client's echoed response min/max = reflector's" \
		"$(jv t1c metrics.response.min_ns)/$(jv t1c metrics.response.max_ns)" \
		"$(jv t1r metrics.response.min_ns)/$(jv t1r metrics.response.max_ns)"
	expect_eq "normal: no missing stamps (emit)" \
		"$(python3 -c 'import json,sys; print(sum(json.load(open(sys.argv[1]))["missing_stamps"].values()))' "$WORK/t1c.json" 2>&1)" 0

	csv=$(python3 "$HELPERS/rantcheck.py" csv "$WORK/t1c.csv")
	rc=$?
	check "normal: csv log: rtt >= response >= 0, network = rtt - response >= 0, app rtt >= rtt" \
		test "$rc" -eq 0
	[ -n "$csv" ] && echo "# csv: ${csv//$'\n'/; }"
	expect_eq "normal: csv log rows by status" "$(echo "$csv" | tail -n 1)" "ok=$n warmup=$w lost=0 late=0"
	reap_left "$REFLECTOR_PID"
}

# 11. The report in the earlier rant's format (uses the outputs of t_normal).
t_report() {
	local c=$WORK/t1c.out r=$WORK/t1r.out

	check "report: 'Test is complete. Duration: X s'" has "$c" '^Test is complete\. Duration: [0-9]+\.[0-9]+ s$'
	check "report: round-trip statistics title" has "$c" '^--- Round-Trip Latency Statistics ---$'
	check "report: emit MIN/MAX/AVG/Total Samples line" \
		has "$c" '^MIN: [0-9]+ ns \| MAX: [0-9]+ ns \| AVG: [0-9]+ ns \| Total Samples: [0-9]+$'
	expect_eq "report: emit Total Samples = JSON samples" "$(report_field "$c" samples)" "$(jv t1c metrics.rtt.samples)"
	expect_eq "report: emit MIN = JSON min_ns" "$(report_field "$c" MIN)" "$(jv t1c metrics.rtt.min_ns)"
	expect_eq "report: emit sent = JSON" "$(report_field "$c" sent)" "$(jv t1c packets.sent)"
	check "report: packet counts line" has "$c" \
		'^Packets: sent [0-9]+ \| received [0-9]+ \| lost [0-9]+ \| late [0-9]+ \| duplicate [0-9]+ \| invalid [0-9]+ \| warm-up [0-9]+$'
	check "report: 'Stopped by: count'" has "$c" '^Stopped by: count$'
	check "report: log line is 'Log: N records kept, N dropped (ring of N)'" \
		has "$c" '^Log: [0-9]+ records kept, [0-9]+ dropped \(ring of [0-9]+\)$'
	check "report: reflector 'Session 0x... is complete'" \
		has "$r" '^Session 0x[0-9a-f]{8} is complete\. Duration: [0-9]+\.[0-9]+ s$'
	check "report: reflector response statistics title" has "$r" '^--- Response Latency Statistics ---$'
	check "report: reflector MIN/MAX/AVG/Total Samples line" \
		has "$r" '^MIN: [0-9]+ ns \| MAX: [0-9]+ ns \| AVG: [0-9]+ ns \| Total Samples: [0-9]+$'
	check "report: no round-trip title on the reflector" hasnt "$r" 'Round-Trip'
	check "report: the report is on stdout, not stderr" hasnt "$WORK/t1c.err" '^Test is complete'
}

# 8. JSON: the keys are docs/json.md's table (every key documented, every key
#    it says is always there present); --json - is pure JSON on stdout.
t_json() {
	check "json: the emit JSON has the keys of docs/json.md, and no other" python3 "$HELPERS/rantcheck.py" keys "$WORK/t1c.json" emit
	check "json: the reflect JSON has the keys of docs/json.md, and no other" python3 "$HELPERS/rantcheck.py" keys "$WORK/t1r.json" reflect
	expect_eq "json: exit_code" "$(jv t1c exit_code)" 0
	expect_eq "json: no -t: threshold.us is null" "$(jv t1c threshold.us)" null
	check "json: duration_s is a positive number" jtrue t1c 'isinstance(d["duration_s"], float) and d["duration_s"] > 0'

	reflector_or json t8r --once || return
	emit t8c -s --count 300 -t 60000000 --json -
	expect_eq "json -: client exits 0" "$EMIT_RC" 0
	cp "$WORK/t8c.out" "$WORK/t8c.json"
	check "json -: stdout parses as one JSON object" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$WORK/t8c.json"
	check "json -: the keys of docs/json.md, and no other" python3 "$HELPERS/rantcheck.py" keys "$WORK/t8c.json" emit
	check "json -: the text report went to stderr" has "$WORK/t8c.err" '^--- Round-Trip Latency Statistics ---$'
	check "json -: no report text on stdout" hasnt "$WORK/t8c.out" 'Test is complete|Latency Statistics'
	check "json -: threshold {us: 60000000, exceeded: false, percent: 0}" \
		jtrue t8c 'd["threshold"]["us"] == 60000000 and d["threshold"]["exceeded"] is False and d["threshold"]["percent"] == 0'
	expect_eq "json -: samples = count" "$(jv t8c metrics.rtt.samples)" 300
	wait_exit "$REFLECTOR_PID" 30
	reap_left "$REFLECTOR_PID"
}

# 2. The client starts before the reflector: lost until it is there, then
#    answered; -d ends the run.
t_client_first() {
	local t0 t1

	t0=$(now_ms)
	emit_bg t2c -d 4 --interval 10000 --timeout 200 --json "$WORK/t2c.json"
	# 10 pings out with nobody answering
	udp_wait "$NS_A" OutDatagrams 10
	reflector_or "client first" t2r --once --json "$WORK/t2r.json"
	wait_exit "$EMIT_PID" 60
	t1=$(now_ms)
	expect_eq "client first: client exits 0" "$WAIT_RC" 0
	check "client first: lost > 0" jtrue t2c 'p["lost"] > 0'
	check "client first: received > 0" jtrue t2c 'p["received"] > 0'
	check "client first: sent = received + lost" jtrue t2c 'p["sent"] == p["received"] + p["lost"]'
	check "client first: rtt samples = received" jtrue t2c 'm["rtt"]["samples"] == p["received"]'
	# -d is what is under test: never early; late by at most the last
	# pong's 200 ms timeout and what a loaded host's scheduler adds (10 s
	# is far more than that, and far less than a run that ignored -d)
	check "client first: duration_s in [4, 14]" jtrue t2c '4.0 <= d["duration_s"] <= 14'
	check "client first: process done within 4 + 30 s ($((t1 - t0)) ms)" test $((t1 - t0)) -lt 34000
	wait_exit "$REFLECTOR_PID" 30
	expect_eq "client first: reflector exits 0 after the FIN" "$WAIT_RC" 0
	# every pong the client got was answered; a pong still on its way when
	# -d ended the run was answered but not received (how many: the host's)
	check "client first: client received <= reflector received <= client sent" \
		jtrue t2c "p['received'] <= $(jv t2r packets.received) <= p['sent']"
	check "client first: reflector received = what its FIN_ACK said (when the client splits the loss)" \
		jtrue t2c "not d['loss_by_direction'] or d['loss_by_direction']['reflector_answered'] == $(jv t2r packets.received)"
	reap_left "$EMIT_PID"
	reap_left "$REFLECTOR_PID"
}

# 3. The reflector is killed (-9) and restarted while the client runs; the
#    client is stopped (SIGINT) once the second one has answered a while.
t_server_restart() {
	local base

	reflector_or "server restart" t3r1 || return
	base=$(udp_count "$NS_B" OutDatagrams)
	emit_bg t3c -w 10 --interval 5000 -d 120 --timeout 100 --json "$WORK/t3c.json" -l "$WORK/t3c.csv" --log-format csv
	wait_for 30 session_started t3r1
	# the first reflector answers the warm-up and 20 pings more
	wait_for 30 udp_reaches "$NS_B" OutDatagrams $((base + 30))
	kill -9 "$REFLECTOR_PID"
	reap_left "$REFLECTOR_PID"
	# 10 pings out with nobody answering
	udp_wait "$NS_A" OutDatagrams 10
	reflector_or "server restart: second" t3r2 --once --json "$WORK/t3r2.json"
	# the second one answers 20
	udp_wait "$NS_B" OutDatagrams 20
	kill -INT "$EMIT_PID"
	wait_exit "$EMIT_PID" 30
	expect_eq "server restart: client exits 0" "$WAIT_RC" 0
	check "server restart: lost > 0" jtrue t3c 'p["lost"] > 0'
	check "server restart: received > warm-up" jtrue t3c 'p["received"] > p["warmup"]'
	check "server restart: sent = received + lost" jtrue t3c 'p["sent"] == p["received"] + p["lost"]'
	check "server restart: rtt samples = received - warm-up" \
		jtrue t3c 'm["rtt"]["samples"] == p["received"] - p["warmup"]'
	check "server restart: no sample above --timeout" jtrue t3c 'm["rtt"]["max_ns"] <= 100e6'
	check "server restart: stopped by the signal" jtrue t3c 'd["stop_reason"] == "signal"'
	check "server restart: second reflector answered" jtrue t3r2 'p["received"] > 0 and p["sent"] == p["received"]'
	wait_exit "$REFLECTOR_PID" 30
	expect_eq "server restart: second reflector exits 0 after the FIN" "$WAIT_RC" 0
	expect_eq "server restart: csv log has one row per ping" \
		"$(grep -c '^[0-9]' "$WORK/t3c.csv")" "$(jv t3c packets.sent)"
	reap_left "$EMIT_PID"
	reap_left "$REFLECTOR_PID"
}

# 3b. Loss in each direction: for a moment each side's neighbour entry for
# the other points at a MAC nobody has, so the receiving veth drops those
# frames as not for it - first the pings (lost on the way out), then the
# pongs (lost on the way back).  The FIN_ACK tells the client how many pings
# the reflector answered, from which it splits the loss.
# blackout NS DEV PEER_ADDR: until NS has sent 10 datagrams into the void
blackout() {
	local mac
	mac=$(ip -n "$1" neigh show "$3" dev "$2" | awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }')
	ip -n "$1" neigh replace "$3" lladdr 02:00:00:00:00:99 dev "$2" nud permanent
	udp_wait "$1" OutDatagrams 10
	if [ -n "$mac" ]; then
		ip -n "$1" neigh replace "$3" lladdr "$mac" dev "$2" nud reachable
	else
		ip -n "$1" neigh del "$3" dev "$2"
	fi
}

t_loss_direction() {
	reflector_or "loss by direction" t3d --once --json "$WORK/t3dr.json" || return
	emit_bg t3dc --interval 2000 -d 120 --timeout 100 --json "$WORK/t3dc.json"
	wait_for 30 session_started t3d
	# answered pings between the blackouts, and after them
	udp_wait "$NS_B" OutDatagrams 10
	blackout "$NS_A" "$VETH_A" "$ADDR_B"
	udp_wait "$NS_B" OutDatagrams 10
	blackout "$NS_B" "$VETH_B" "$ADDR_A"
	udp_wait "$NS_A" InDatagrams 10
	kill -INT "$EMIT_PID"
	wait_exit "$EMIT_PID" 30
	expect_eq "loss by direction: client exits 0" "$WAIT_RC" 0
	check "loss by direction: pings lost on the way out" jtrue t3dc 'd["loss_by_direction"]["out"] > 0'
	check "loss by direction: pongs lost on the way back" jtrue t3dc 'd["loss_by_direction"]["back"] > 0'
	check "loss by direction: out + back + late = lost" \
		jtrue t3dc 'd["loss_by_direction"]["out"] + d["loss_by_direction"]["back"] + p["late"] == p["lost"]'
	wait_exit "$REFLECTOR_PID" 30
	expect_eq "loss by direction: reflector answered what the FIN_ACK said" \
		"$(jv t3dr packets.received)" "$(jv t3dc loss_by_direction.reflector_answered)"
	check "loss by direction: in the report" has "$WORK/t3dc.out" '^Lost by direction: [1-9][0-9]* pings on the way out, [1-9][0-9]* pongs on the way back'
	reap_left "$EMIT_PID"
	reap_left "$REFLECTOR_PID"
}

# 4a. Junk to the reflector's port and to the client's port during a run
#     (4 s long, so that a loaded host still finds the client's port in time).
t_junk() {
	local cport out

	reflector_or junk t4r --once --json "$WORK/t4r.json" || return
	emit_bg t4c -w 10 --count 4000 --interval 1000 --json "$WORK/t4c.json"
	wait_for 30 session_started t4r
	out=$(in_a python3 "$HELPERS/rantcheck.py" junk "$ADDR_B" "$PORT" \
		magic=5 short=4 version=3 type=2 random=3 foreign=2)
	expect_eq "junk: the reflector answers no junk, and the foreign session only BUSY" "$out" "replies=0 busy"
	# the client's ephemeral port, from its connected socket
	cport=$(in_a ss -Hun "dport = :$PORT" |
		awk -v peer=":$PORT" '{ for (i = 2; i <= NF; i++) if (substr($i, length($i) - length(peer) + 1) == peer) {
			n = split($(i - 1), a, ":"); print a[n]; exit } }')
	if [ -n "$cport" ]; then
		in_b python3 "$HELPERS/rantcheck.py" junk "$ADDR_A" "$cport" magic=3 short=2 random=3 >/dev/null
		in_a python3 "$HELPERS/rantcheck.py" junk 127.0.0.1 "$cport" magic=2 >/dev/null
		ok "junk: sent junk to the client's port $cport"
	else
		not_ok "junk: found the client's port"
	fi
	wait_exit "$EMIT_PID" 30
	expect_eq "junk: client exits 0" "$WAIT_RC" 0
	expect_eq "junk: client samples = count" "$(jv t4c metrics.rtt.samples)" 4000
	expect_eq "junk: client lost/invalid/duplicate" \
		"$(jv t4c packets.lost)/$(jv t4c packets.invalid)/$(jv t4c packets.duplicate)" 0/0/0
	wait_exit "$REFLECTOR_PID" 30
	expect_eq "junk: reflector exits 0" "$WAIT_RC" 0
	check "junk: reflector invalid >= 19 junk datagrams" jtrue t4r 'p["invalid"] >= 19'
	expect_eq "junk: reflector invalid = 19, foreign = 2" "$(jv t4r packets.invalid)/$(jv t4r packets.foreign)" 19/2
	check "junk: reflector counts each reason" has "$WORK/t4r.out" \
		'^Invalid: short 4; bad magic 8; bad version 3; bad type 4; from another session 2$'
	expect_eq "junk: reflector received = client sent" "$(jv t4r packets.received)" "$(jv t4c packets.sent)"
	expect_eq "junk: reflector response samples = count" "$(jv t4r metrics.response.samples)" 4000
	reap_left "$EMIT_PID"
	reap_left "$REFLECTOR_PID"
}

# 4b. A fake reflector that misbehaves on purpose: the client's counters must
#     match what it really sent, and a late pong is never a sample.
t_fake() {
	local port=23456 fpid n=60

	ip netns exec "$NS_B" python3 "$HELPERS/fake-reflector.py" "$ADDR_B" "$port" "$WORK/fake.ready" >"$WORK/fake.json" 2>"$WORK/fake.err" &
	fpid=$!
	BG_PIDS+=("$fpid")
	if ! wait_for 30 test -e "$WORK/fake.ready"; then
		not_ok "fake: fake reflector listens"
		return
	fi
	# a timeout no loaded host's pong misses: only the held one is late
	emit t4f --port "$port" --count "$n" --interval 20000 --timeout 3000 --json "$WORK/t4f.json" \
		-l "$WORK/t4f.csv" --log-format csv
	expect_eq "fake: client exits 0" "$EMIT_RC" 0
	wait_exit "$fpid" 30
	expect_eq "fake: fake reflector got the FIN and exits 0" "$WAIT_RC" 0
	echo "# fake reflector did: $(cat "$WORK/fake.json")"
	expect_eq "fake: sent" "$(jv t4f packets.sent)" "$n"
	expect_eq "fake: fake saw every ping" "$(jv fake pings)" "$n"
	expect_eq "fake: invalid = wrong session + magic + version + unsent seq" \
		"$(jv t4f packets.invalid)" "$(jv fake invalid)"
	expect_eq "fake: foreign (wrong session)" "$(jv t4f packets.foreign)" 1
	expect_eq "fake: duplicate" "$(jv t4f packets.duplicate)" "$(jv fake duplicate)"
	expect_eq "fake: late" "$(jv t4f packets.late)" "$(jv fake late)"
	expect_eq "fake: lost = late + dropped" "$(jv t4f packets.lost)" \
		"$(jsum fake late dropped)"
	check "fake: sent = received + lost" jtrue t4f 'p["sent"] == p["received"] + p["lost"]'
	check "fake: rtt samples = received (late and duplicate pongs are no samples)" \
		jtrue t4f 'm["rtt"]["samples"] == p["received"] == p["sent"] - 2'
	check "fake: no sample above --timeout" jtrue t4f 'm["rtt"]["max_ns"] <= 3000e6'
	check "fake: log: seq 18 late, seq 20 lost, seq 16 ok" \
		bash -c 'grep -q "^18,late," "$1" && grep -q "^20,lost," "$1" && grep -q "^16,ok," "$1"' _ "$WORK/t4f.csv"
	expect_eq "fake: log: ok rows = samples" "$(grep -c '^[0-9]*,ok,' "$WORK/t4f.csv")" "$(jv t4f metrics.rtt.samples)"
	reap_left "$fpid"
}

# 4c. The session's counts come in a FIN_ACK that asks for another FIN
#     round (PF_MORE: T3 stamps still owed), and that round is never
#     answered: the loss is split by direction all the same, from the
#     counts that came (the client once forgot them when a later round
#     went unanswered).
t_fake_more() {
	local port=23457 fpid n=60

	ip netns exec "$NS_B" python3 "$HELPERS/fake-reflector.py" "$ADDR_B" "$port" "$WORK/fakem.ready" more \
		>"$WORK/fakem.json" 2>"$WORK/fakem.err" &
	fpid=$!
	BG_PIDS+=("$fpid")
	if ! wait_for 30 test -e "$WORK/fakem.ready"; then
		not_ok "FIN rounds: fake reflector listens"
		return
	fi
	emit t4m --port "$port" --count "$n" --interval 2000 --timeout 3000 --json "$WORK/t4m.json"
	expect_eq "FIN rounds: client exits 0" "$EMIT_RC" 0
	wait_exit "$fpid" 30
	expect_eq "FIN rounds: fake reflector exits 0" "$WAIT_RC" 0
	echo "# fake reflector did: $(cat "$WORK/fakem.json")"
	check "FIN rounds: the client asked again after PF_MORE, and that went unanswered" \
		jtrue fakem 'd["fins"] >= 2'
	expect_eq "FIN rounds: one ping unanswered, lost" "$(jv t4m packets.lost)" 1
	check "FIN rounds: loss by direction from the first round's counts: 1 out, 0 back, $((n - 1)) answered" \
		jtrue t4m 'd["loss_by_direction"] is not None and d["loss_by_direction"]["out"] == 1 and d["loss_by_direction"]["back"] == 0 and d["loss_by_direction"]["reflector_answered"] == '"$((n - 1))"' and d["loss_by_direction_why"] is None'
	reap_left "$fpid"
}

# 5. --count with --interval: exactly count pings at the cadence.
t_cadence() {
	reflector_or cadence t5r --once || return
	emit t5c --count 200 --interval 10000 --json "$WORK/t5c.json"
	expect_eq "cadence: client exits 0" "$EMIT_RC" 0
	expect_eq "cadence: sent = 200" "$(jv t5c packets.sent)" 200
	expect_eq "cadence: samples = 200" "$(jv t5c metrics.rtt.samples)" 200
	# the last of 200 pings 10 ms apart leaves 1.99 s after the first: never
	# sooner; an absolute cadence catches up after a stall, so a loaded host
	# adds little, but the bound leaves it room
	check "cadence: duration_s in [1.99, 12] for 200 x 10 ms" jtrue t5c '1.99 <= d["duration_s"] <= 12'
	expect_eq "cadence: stop reason" "$(jv t5c stop_reason)" count
	wait_exit "$REFLECTOR_PID" 30
	reap_left "$REFLECTOR_PID"
}

# 6. IPv6 between the namespaces.
t_ipv6() {
	reflector_or ipv6 t6r --once --json "$WORK/t6r.json" || return
	emit_to t6c "$ADDR6_B" -w 10 --count 1000 --json "$WORK/t6c.json"
	expect_eq "ipv6: client exits 0" "$EMIT_RC" 0
	expect_eq "ipv6: sent/received/lost" \
		"$(jv t6c packets.sent)/$(jv t6c packets.received)/$(jv t6c packets.lost)" 1010/1010/0
	expect_eq "ipv6: samples = count" "$(jv t6c metrics.rtt.samples)" 1000
	expect_eq "ipv6: address in JSON" "$(jv t6c address)" "$ADDR6_B"
	wait_exit "$REFLECTOR_PID" 30
	expect_eq "ipv6: reflector exits 0" "$WAIT_RC" 0
	expect_eq "ipv6: reflector received = client sent" "$(jv t6r packets.received)" 1010
	expect_eq "ipv6: reflector response samples = count" "$(jv t6r metrics.response.samples)" 1000
	reap_left "$REFLECTOR_PID"
}

# 7. lo inside NS_A (never the host's): one reflector, an IPv4 and an IPv6
#    session one after the other, then SIGTERM.
t_lo() {
	local port=$((20000 + RANDOM % 20000)) rpid addr k=0

	ip netns exec "$NS_A" "$RANT" -i lo --port "$port" -d 30 >"$WORK/t7r.out" 2>"$WORK/t7r.err" &
	rpid=$!
	BG_PIDS+=("$rpid")
	if ! wait_for 30 udp_listening "$NS_A" "$port"; then
		not_ok "lo: reflector listens on lo port $port"
		return
	fi
	for addr in 127.0.0.1 ::1; do
		k=$((k + 1))
		in_a "$RANT" -i lo -a "$addr" --port "$port" --count 500 --json "$WORK/t7c$k.json" \
			>"$WORK/t7c$k.out" 2>"$WORK/t7c$k.err"
		expect_eq "lo $addr: client exits 0" "$?" 0
		expect_eq "lo $addr: sent/received/lost" \
			"$(jv "t7c$k" packets.sent)/$(jv "t7c$k" packets.received)/$(jv "t7c$k" packets.lost)" 500/500/0
		expect_eq "lo $addr: samples" "$(jv "t7c$k" metrics.rtt.samples)" 500
	done
	wait_for 30 has "$WORK/t7r.out" '^Stopped by: fin$'
	kill -TERM "$rpid"
	wait_exit "$rpid" 30
	expect_eq "lo: reflector exits 0 on SIGTERM" "$WAIT_RC" 0
	expect_eq "lo: reflector reported two sessions" \
		"$(grep -c '^Session 0x[0-9a-f]* is complete' "$WORK/t7r.out")" 2
	expect_eq "lo: both sessions ended by FIN" "$(grep -c '^Stopped by: fin$' "$WORK/t7r.out")" 2
	expect_eq "lo: each session counted its own pings" \
		"$(grep -c '^Packets: sent 500 | received 500 | lost 0 ' "$WORK/t7r.out")" 2
	reap_left "$rpid"
}

# 9. Exit codes; an invalid invocation sends nothing and touches no file.
t_exit_codes() {
	local before after

	emit t9a --port 23999 --count 5 --timeout 100
	expect_eq "exit: no reflector at all: exit 1" "$EMIT_RC" 1
	check "exit: no reflector: stderr says no answer" has "$WORK/t9a.err" 'no answer'
	emit t9b --bogus
	expect_eq "exit: unknown option: exit 2" "$EMIT_RC" 2
	check "exit: unknown option: named on stderr" has "$WORK/t9b.err" 'bogus'
	emit t9c --count abc
	expect_eq "exit: --count abc: exit 2" "$EMIT_RC" 2
	check "exit: --count abc: one line naming --count" \
		bash -c '[ "$(wc -l <"$1")" -eq 1 ] && grep -q -- "--count" "$1"' _ "$WORK/t9c.err"
	emit t9d -w -1
	expect_eq "exit: -w -1: exit 2" "$EMIT_RC" 2
	emit t9e --once
	expect_eq "exit: --once with -a: exit 2" "$EMIT_RC" 2

	reflector_or exit t9r -d 30 || return
	before=$(udp_in "$NS_B")
	emit t9f --count 10 --json /nonexistent/dir/x.json -l "$WORK/t9f.log"
	expect_eq "exit: unwritable --json: exit 2" "$EMIT_RC" 2
	check "exit: unwritable --json: named on stderr" has "$WORK/t9f.err" '--json'
	check "exit: unwritable --json: -l file not created" test ! -e "$WORK/t9f.log"
	echo keep >"$WORK/t9g.log"
	emit t9g --count 10 -l "$WORK/t9g.log" --json /nonexistent/dir/x.json
	expect_eq "exit: unwritable --json: existing -l file not truncated" "$(cat "$WORK/t9g.log")" keep
	emit t9h --count abc -l "$WORK/t9h.log" --json "$WORK/t9h.json"
	check "exit: bad number: neither -l nor --json file created" \
		test ! -e "$WORK/t9h.log" -a ! -e "$WORK/t9h.json"
	emit t9i --count 10 --log-format xml -l "$WORK/t9i.log"
	expect_eq "exit: --log-format xml: exit 2" "$EMIT_RC" 2
	check "exit: --log-format xml: -l file not created" test ! -e "$WORK/t9i.log"
	after=$(udp_in "$NS_B")
	expect_eq "exit: no UDP datagram reached the reflector's namespace" "$after" "$before"
	check "exit: the reflector saw no session" hasnt "$WORK/t9r.err" 'session 0x'
	kill -TERM "$REFLECTOR_PID"
	wait_exit "$REFLECTOR_PID" 30
	expect_eq "exit: idle reflector exits 0 on SIGTERM" "$WAIT_RC" 0
	reap_left "$REFLECTOR_PID"
}

# 10. SIGINT ends a long run at once, with report, JSON and log.
t_sigint() {
	local t0 t1 rows

	reflector_or sigint t10r --once || return
	emit_bg t10c -d 120 --interval 1000 -l "$WORK/t10c.log" --json "$WORK/t10c.json"
	# let it run a while: 100 pongs
	udp_wait "$NS_B" OutDatagrams 100
	t0=$(now_ms)
	kill -INT "$EMIT_PID"
	wait_exit "$EMIT_PID" 60
	t1=$(now_ms)
	expect_eq "sigint: client exits 0" "$WAIT_RC" 0
	# "at once" against -d 120: a pong's 1 s timeout and the FIN, and room
	# for a loaded host
	check "sigint: exits within 20 s, not at -d ($((t1 - t0)) ms)" test $((t1 - t0)) -lt 20000
	check "sigint: report printed" has "$WORK/t10c.out" '^--- Round-Trip Latency Statistics ---$'
	check "sigint: 'Stopped by: signal'" has "$WORK/t10c.out" '^Stopped by: signal$'
	expect_eq "sigint: JSON stop reason" "$(jv t10c stop_reason)" signal
	check "sigint: samples > 0" jtrue t10c 'm["rtt"]["samples"] > 0'
	check "sigint: log header is 'SEQ T1_KSW T4_KSW RTT'" \
		bash -c '[ "$(head -n 1 "$1")" = "SEQ T1_KSW T4_KSW RTT" ]' _ "$WORK/t10c.log"
	check "sigint: log second line is dashes" bash -c 'sed -n 2p "$1" | grep -Eq "^-+$"' _ "$WORK/t10c.log"
	rows=$(grep -c '^[0-9]' "$WORK/t10c.log")
	expect_eq "sigint: log has one row per ping sent" "$rows" "$(jv t10c packets.sent)"
	wait_exit "$REFLECTOR_PID" 30
	expect_eq "sigint: reflector exits 0 after the FIN" "$WAIT_RC" 0
	reap_left "$EMIT_PID"
	reap_left "$REFLECTOR_PID"
}

# 12. Software wire stamps and app stamps read the same clock
#     (CLOCK_REALTIME), so their offset is stack delay and cannot drift: no
#     clock warning may claim that CLOCK_REALTIME was stepped (we step nothing).
t_clock_warnings() {
	reflector_or clock t12r --once -s --json "$WORK/t12r.json" || return
	emit t12c -s --interval 10000 -d 2 --json "$WORK/t12c.json"
	expect_eq "clock: client exits 0" "$EMIT_RC" 0
	wait_exit "$REFLECTOR_PID" 30
	expect_eq "clock: no clock warning on software stamps (emit JSON)" "$(jv t12c clock.warnings)" "[]"
	expect_eq "clock: no clock warning on software stamps (reflect JSON)" "$(jv t12r clock.warnings)" "[]"
	check "clock: no WARNING line in either report" \
		bash -c '! grep -h "^WARNING" "$1" "$2"' _ "$WORK/t12c.out" "$WORK/t12r.out"
	reap_left "$REFLECTOR_PID"
}

# 13. The client dies (-9) mid-run: the reflector ends the session on idle.
t_client_killed() {
	local t0 t1

	reflector_or "client killed" t13r --once --json "$WORK/t13r.json" || return
	emit_bg t13c -d 120 --interval 1000
	# let it run a while: 50 pongs
	udp_wait "$NS_B" OutDatagrams 50
	kill -9 "$EMIT_PID"
	reap_left "$EMIT_PID"
	t0=$(now_ms)
	wait_exit "$REFLECTOR_PID" 60
	t1=$(now_ms)
	expect_eq "client killed: reflector --once exits 0 after the idle timeout" "$WAIT_RC" 0
	# the idle timeout (3 s for this client) is under test: room for a
	# loaded host, and far less than the client's -d 120
	check "client killed: ... within 30 s ($((t1 - t0)) ms)" test $((t1 - t0)) -lt 30000
	expect_eq "client killed: stop reason" "$(jv t13r stop_reason)" idle
	check "client killed: reflector answered every ping it got" \
		jtrue t13r 'p["received"] > 0 and p["sent"] == p["received"] and m["response"]["samples"] == p["received"]'
	reap_left "$REFLECTOR_PID"
}

main() {
	need_root "net-core"
	if ! command -v python3 >/dev/null; then
		skip "net-core: python3 not found (JSON checks, junk and fake reflector)"
		finish
		exit 0
	fi
	if [ ! -x "$RANT" ]; then
		not_ok "net-core: $RANT not built (run make)"
		finish
		exit 1
	fi
	if ! ns_setup; then
		not_ok "net-core: namespaces and veth pair"
		finish
		exit 1
	fi
	t_normal
	t_report
	t_json
	t_client_first
	t_server_restart
	t_loss_direction
	t_junk
	t_fake
	t_fake_more
	t_cadence
	t_ipv6
	t_lo
	t_exit_codes
	t_sigint
	t_client_killed
	t_clock_warnings
	finish
}

main "$@"
