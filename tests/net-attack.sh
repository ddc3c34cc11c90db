#!/bin/bash
# Protocol rules under attack, round 2 (root, throwaway namespaces; forged
# datagrams from tests/net-guard.d/forge.py, raw sockets for spoofed
# sources): a replayed ping of an ended session opens nothing and blocks no
# one, keyed or not; forged pings far ahead or walking the window up never
# cost the client a ping; another port of the client's address never joins
# its session; -d and the idle timeout hold under traffic and junk; a stall
# with another client's ping read first splits nothing; class rows balance
# on both sides (a FIN with class bits, a late pong beyond the window, the
# reflector's own -w, one class's traffic dropped with the FIN); a client
# told BUSY counts what BUSY answered; option combinations exit 2 before
# anything is sent or run as written.  Assertions are on counts, exit codes
# and structure; where time is under test, on which process ended first.
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=tests/lib.sh
. tests/lib.sh

D=tests/net-guard.d
PF_CLASS=0x800

# books LABEL FILE [N]: the counters of session N (0) of FILE hold: sent =
# received + lost, late <= lost, no counter at 2^62 or above; with classes,
# per row sent = received + lost and late <= lost, rows adding up to the
# totals (client), or received, answered and warm-up adding up (reflector)
books() {
	py_checks "$1" '
f, n = sys.argv[1], int(sys.argv[2])
txt = open(f).read(); dec = json.JSONDecoder(); objs = []; i = 0
while True:
    while i < len(txt) and txt[i].isspace(): i += 1
    if i >= len(txt): break
    o, i = dec.raw_decode(txt, i); objs.append(o)
d = objs[n]; p = d["packets"]
big = [k for k, v in list(p.items()) + list(d.get("rejected", {}).items()) if isinstance(v, int) and v >= 1 << 62]
t("no counter impossible", not big, big)
if d["mode"] == "emit":
    t("sent = received + lost", p["sent"] == p["received"] + p["lost"], p)
    t("late <= lost", p["late"] <= p["lost"], p)
cl = d.get("classes") or []
if d["mode"] == "emit" and cl:
    for k, c in enumerate(cl):
        q = c["packets"]
        t("class %d: sent = received + lost, late <= lost" % k,
          q["sent"] == q["received"] + q["lost"] and q["late"] <= q["lost"], q)
    for key in ("sent", "received", "lost", "late", "warmup"):
        t("classes add up to the %s" % key, sum(c["packets"][key] for c in cl) == p[key],
          [c["packets"][key] for c in cl])
elif cl:
    for key, tot in (("received", p["received"]), ("answered", p["sent"]), ("warmup", p["warmup"])):
        t("reflector rows add up to the %s" % key, sum(c[key] for c in cl) == tot, (cl, p))
' "$2" "${3:-0}"
}

# udp_more NS N: more than N UDP datagrams have arrived in NS
udp_more() {
	[ "$(udp_stat "$1" InDatagrams)" -gt "$2" ]
}

# reflector_ok LABEL NAME [options]: a reflector, or a failed test
reflector_ok() {
	local label=$1
	shift
	reflector "$@" && return 0
	not_ok "$label: reflector listens"
	return 1
}

# --------------------------------------- 1. a finished session can be brought back
# A keyed client's ping, captured on the wire, sent again unmodified from its
# own address and port after the session's FIN: nothing opens, and the next
# keyed client is served, not told BUSY.  The same with a session that ended
# idle (its client killed), and with a replay arriving while another runs.
test_replay() {
	local k=$WORK/key sn n0
	head -c 32 /dev/urandom >"$k"
	chmod 600 "$k"
	reflector_ok "replay" rp --key-file "$k" --json "$WORK/rp.json" || return
	in_b python3 "$D/forge.py" sniff "$VETH_B" 12345 "$WORK/rp.cap" --count 20 --timeout 20 >/dev/null &
	sn=$!
	BG_PIDS+=("$sn")
	wait_for 30 test -e "$WORK/rp.cap"
	emit rp1 -q --count 500 --key-file "$k" --json "$WORK/rp1.json"
	expect_rc "replay: first keyed client" 0
	wait "$sn"
	wait_for 30 sessions "$WORK/rp.json" 1
	in_a python3 "$D/forge.py" replay "$WORK/rp.cap" "$ADDR_B" 12345 --index 5 --count 3 >/dev/null
	emit rp2 -q --count 300 --key-file "$k" --json "$WORK/rp2.json"
	expect_rc "replay after FIN: the next keyed client is served" 0
	expect_eq "replay after FIN: ... every ping answered" "$(jget "$WORK/rp2.json" packets.received)" 300
	check "replay after FIN: ... never told busy" not_grep -q 'is busy' "$WORK/rp2.err"
	wait_for 30 sessions "$WORK/rp.json" 2
	expect_eq "replay after FIN: no phantom session, two real ones" "$(jsess "$WORK/rp.json" 0 count)" 2
	expect_eq "replay after FIN: counted with the next session" \
		"$(jsess "$WORK/rp.json" 1 rejected.session_ended)" 3
	expect_eq "replay after FIN: no BUSY sent for it" "$(jsess "$WORK/rp.json" 1 rejected.busy_answers)" 0

	# the same replay while another keyed client runs: not foreign, no BUSY
	n0=$(udp_stat "$NS_A" InDatagrams)
	emit_bg rp3 -q --count 5000 --interval 1000 --key-file "$k" --json "$WORK/rp3.json"
	wait_for 30 udp_more "$NS_A" $((n0 + 10))	# it is answered
	in_a python3 "$D/forge.py" replay "$WORK/rp.cap" "$ADDR_B" 12345 --index 7 >/dev/null
	reap "$EMIT_PID"
	expect_eq "replay during a session: the client's exit status" "$RC" 0
	wait_for 30 sessions "$WORK/rp.json" 3
	expect_eq "replay during a session: counted as such" "$(jsess "$WORK/rp.json" 2 rejected.session_ended)" 1
	expect_eq "replay during a session: no BUSY, not foreign" \
		"$(jsess "$WORK/rp.json" 2 rejected.busy_answers)/$(jsess "$WORK/rp.json" 2 packets.foreign)" 0/0
	stop_reflector
	books "replay: second session" "$WORK/rp.json" 1
}

# An unkeyed session that ended idle (client killed): a replay of one of its
# pings opens nothing; its client, stopped longer than the idle timeout and
# going on above that seq, is served in a new session of the same id.
test_replay_idle() {
	local sid sn n0
	reflector_ok "replay idle" ri --json "$WORK/ri.json" || return
	in_b python3 "$D/forge.py" sniff "$VETH_B" 12345 "$WORK/ri.cap" --count 5 --timeout 20 >/dev/null &
	sn=$!
	BG_PIDS+=("$sn")
	wait_for 30 test -e "$WORK/ri.cap"
	emit_bg ri1 -q --count 100000 --interval 1000 --timeout 100
	wait "$sn"
	wait_for 30 grep -q 'session 0x' "$WORK/ri.err"
	sid=$(session_id ri)
	kill -STOP "$EMIT_PID"
	# idle timeout 3 s (hint 102 ms): the session ends while the client is stopped
	wait_for 30 sessions "$WORK/ri.json" 1
	expect_eq "replay idle: the stopped client's session ended idle" "$(jsess "$WORK/ri.json" 0 stop_reason)" idle
	in_a python3 "$D/forge.py" replay "$WORK/ri.cap" "$ADDR_B" 12345 --index 2 >/dev/null
	n0=$(udp_stat "$NS_A" InDatagrams)
	kill -CONT "$EMIT_PID"
	# answered again: pongs reach the client's namespace
	wait_for 30 udp_more "$NS_A" $((n0 + 10))
	kill -INT "$EMIT_PID"
	reap "$EMIT_PID"
	expect_eq "replay idle: the client went on, exit status" "$RC" 0
	wait_for 30 sessions "$WORK/ri.json" 2
	stop_reflector
	expect_eq "replay idle: the replay opened nothing (counted with the next session)" \
		"$(jsess "$WORK/ri.json" 1 rejected.session_ended)" 1
	expect_eq "replay idle: the real client went on under its id" "$(jsess "$WORK/ri.json" 1 session)" "$sid"
	check "replay idle: ... and was answered" test "$(jsess "$WORK/ri.json" 1 packets.received)" -gt 0
}

# A keyed client killed (no FIN), its captured pings replayed in turn every
# 0.2 s for 30 s: they are duplicates, not its client's activity, so its
# session ends on its idle timeout while they still come, and the next
# keyed client is served.
test_replay_keepalive() {
	local k=$WORK/key2 sn rp
	head -c 32 /dev/urandom >"$k"
	chmod 600 "$k"
	reflector_ok "replay keep-alive" rk --key-file "$k" --json "$WORK/rk.json" || return
	in_b python3 "$D/forge.py" sniff "$VETH_B" 12345 "$WORK/rk.cap" --count 20 --timeout 20 >/dev/null &
	sn=$!
	BG_PIDS+=("$sn")
	wait_for 30 test -e "$WORK/rk.cap"
	emit_bg rk1 -q --count 1000000 --interval 1000 --timeout 100 --key-file "$k"
	wait "$sn"
	kill -9 "$EMIT_PID"
	{ wait "$EMIT_PID"; } 2>/dev/null
	# ip itself (it execs python): $! is the sender, for kill
	ip netns exec "$NS_A" python3 "$D/forge.py" replay "$WORK/rk.cap" "$ADDR_B" 12345 --cycle \
		--count 150 --gap 0.2 >/dev/null &
	rp=$!
	BG_PIDS+=("$rp")
	check "replay keep-alive: the dead client's session ends while its pings are replayed" \
		wait_for 30 sessions "$WORK/rk.json" 1
	check "replay keep-alive: ... (the replays still come)" kill -0 "$rp"
	emit rk2 -q --count 300 --key-file "$k" --json "$WORK/rk2.json"
	expect_rc "replay keep-alive: the next keyed client is served" 0
	kill "$rp" 2>/dev/null
	wait "$rp" 2>/dev/null
	stop_reflector
	expect_eq "replay keep-alive: the first session ended idle" "$(jsess "$WORK/rk.json" 0 stop_reason)" idle
}

# --------------------------------------------- 2. forged pings cannot move the window
# From the client's own address and port (raw socket, no key): two pings far
# ahead (the second "confirming" the first) while it pings, then ten that walk
# the window up 4000 at a time, then a FIN with a seq below them.  The client
# loses nothing, and the session ends by its own FIN.  The FIN must reach the
# session while it runs (after the session's end it is the ended session's
# repeat): the client pings until it is told to stop, once pongs of pings
# sent after the forged FIN have come back; at 10 ms its seqs stay below the
# walk's 4000 for 39 s (a generous bound: on a loaded host three python
# starts took over 3 s, the whole run of the earlier 3000 pings at 1 ms).
test_forged_seq() {
	local sid port n0 sent
	reflector_ok "forged seq" fs --once --json "$WORK/fs.json" || return
	emit_bg fsc -q --count 3900 --interval 10000 --json "$WORK/fsc.json"
	wait_for 30 has_client_port "$EMIT_PID" && wait_for 30 grep -q 'session 0x' "$WORK/fs.err"
	sid=$(session_id fs)
	port=$(client_port "$EMIT_PID")
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --src "$ADDR_A:$port" --session "$sid" \
		--seq 100000 --seq-step --count 2 >/dev/null
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --src "$ADDR_A:$port" --session "$sid" \
		--seq 4000 --seq-step 4000 --count 10 >/dev/null
	# and a FIN that does not follow the pings (a real one carries the next seq)
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --src "$ADDR_A:$port" --session "$sid" \
		--type 3 --seq 5 >/dev/null
	n0=$(udp_stat "$NS_A" InDatagrams)
	check "forged seq: the client still pings after the forged FIN" \
		wait_for 30 udp_more "$NS_A" $((n0 + 20))
	kill -INT "$EMIT_PID"
	reap "$EMIT_PID"
	expect_eq "forged seq: client exit status" "$RC" 0
	sent=$(jget "$WORK/fsc.json" packets.sent)
	expect_eq "forged seq: the client lost nothing" "$(jget "$WORK/fsc.json" packets.lost)" 0
	expect_eq "forged seq: every ping answered" "$(jget "$WORK/fsc.json" packets.received)" "$sent"
	expect_eq "forged seq: the forged pings' pongs counted, never samples" "$(jget "$WORK/fsc.json" packets.invalid)" 10
	books "forged seq: client" "$WORK/fsc.json"
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
	expect_eq "forged seq: the far jump refused, confirmed or not" "$(jsess "$WORK/fs.json" 0 rejected.seq_ahead)" 2
	expect_eq "forged seq: the reflector answered every real ping (and the walk)" \
		"$(jsess "$WORK/fs.json" 0 packets.received)" $((sent + 10))
	expect_eq "forged seq: no real ping called a duplicate" "$(jsess "$WORK/fs.json" 0 packets.duplicate)" 0
	expect_eq "forged seq: the FIN below the pings refused, the session went on" \
		"$(jsess "$WORK/fs.json" 0 rejected.fin_before_pings)/$(jsess "$WORK/fs.json" 0 stop_reason)" 1/fin
	books "forged seq: reflector" "$WORK/fs.json"
}

# ------------------------------------------------ 3. another port never joins
# A ping flagged as a class and three FINs with the session's id, from another
# port of the client's address (a plain UDP socket, no raw socket needed).
# They must reach the session while it runs, as in test_forged_seq: the client
# pings until it is told to stop, once pongs sent after them have come back.
test_other_port() {
	local sid n0 sent
	reflector_ok "other port" op --json "$WORK/op.json" || return
	emit_bg opc -q --count 3900 --interval 10000 --json "$WORK/opc.json"
	wait_for 30 grep -q 'session 0x' "$WORK/op.err"
	sid=$(session_id op)
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --from-port 40123 --session "$sid" --seq 100 \
		--flags $((PF_CLASS | 3 << 12)) >/dev/null
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --from-port 40123 --session "$sid" --type 3 \
		--count 3 >/dev/null
	n0=$(udp_stat "$NS_A" InDatagrams)
	check "other port: the client still pings after them" wait_for 30 udp_more "$NS_A" $((n0 + 20))
	kill -INT "$EMIT_PID"
	reap "$EMIT_PID"
	expect_eq "other port: client exit status" "$RC" 0
	sent=$(jget "$WORK/opc.json" packets.sent)
	expect_eq "other port: the client lost nothing" "$(jget "$WORK/opc.json" packets.lost)" 0
	wait_for 30 sessions "$WORK/op.json" 1
	stop_reflector
	expect_eq "other port: one session, not split" "$(jsess "$WORK/op.json" 0 count)" 1
	expect_eq "other port: ended by the client's own FIN" "$(jsess "$WORK/op.json" 0 stop_reason)" fin
	expect_eq "other port: the class ping and the FINs refused" "$(jsess "$WORK/op.json" 0 rejected.wrong_peer)" 4
	expect_eq "other port: no class row from it" "$(jsess "$WORK/op.json" 0 classes)" missing
	expect_eq "other port: every real ping answered" "$(jsess "$WORK/op.json" 0 packets.received)" "$sent"
}

# ------------------------------------------------- 4. deadlines under traffic
# A -d 2 reflector (blocking, and spinning) against a client that pings for
# 30 s: the reflector ends while the client still runs (the session in
# progress is finished first, for at most -d again: 4 s).  A generous bound by
# construction (wait_for's 20 s stretch under load; 10 s of margin), and no
# elapsed time is measured.
test_duration_traffic() {
	local spin
	for spin in "" --spin; do
		reflector_ok "-d under traffic${spin:+ $spin}" dd -d 2 $spin --json "$WORK/dd.json" || return
		emit_bg ddc -q -d 30 --interval 1000
		check "-d under traffic${spin:+ $spin}: the reflector ends before the client" \
			wait_for 20 gone "$REFLECTOR_PID"
		check "-d under traffic${spin:+ $spin}: ... which still pings" kill -0 "$EMIT_PID"
		reap "$REFLECTOR_PID"
		expect_eq "-d under traffic${spin:+ $spin}: stopped by its duration" \
			"$(jsess "$WORK/dd.json" 0 stop_reason)" duration
		kill -INT "$EMIT_PID" 2>/dev/null
		reap "$EMIT_PID"
	done
}

# A dead client (SIGKILL) and junk every 50 ms for 30 s: its session ends on
# its idle timeout (3 s) while the junk still comes, and the session's
# duration ends at its last ping: less than the idle timeout itself, since the
# client ran for about half a second (a bound with 2.5 s of margin).
test_idle_junk() {
	local junk
	# --status: its "pongs N" line says the client is answered (stderr is a file here)
	reflector_ok "idle under junk" ij --status --json "$WORK/ij.json" || return
	emit_bg ijc -q --count 1000000 --interval 1000 --timeout 100
	wait_for 30 grep -q 'session 0x' "$WORK/ij.err"
	wait_for 30 grep -q 'pongs [1-9]' "$WORK/ij.err"
	kill -9 "$EMIT_PID"
	{ wait "$EMIT_PID"; } 2>/dev/null
	ip netns exec "$NS_A" python3 "$D/forge.py" ping "$ADDR_B" 12345 --junk --count 600 --gap 0.05 \
		>/dev/null &
	junk=$!
	BG_PIDS+=("$junk")
	check "idle under junk: the session ends while the junk still comes" \
		wait_for 30 sessions "$WORK/ij.json" 1
	check "idle under junk: ... (the junk sender still runs)" kill -0 "$junk"
	expect_eq "idle under junk: stopped as idle" "$(jsess "$WORK/ij.json" 0 stop_reason)" idle
	check "idle under junk: its duration ends at the last ping" \
		python3 -c 'import sys; sys.exit(not float(sys.argv[1]) < 3.0)' "$(jsess "$WORK/ij.json" 0 duration_s)"
	kill "$junk" 2>/dev/null
	wait "$junk" 2>/dev/null
	stop_reflector
}

# ------------------------------------------------------- 5. a stall splits nothing
# As in a VM pause: the client stops, then the --once reflector (its queue
# read empty first); another client's ping waits in the reflector's queue;
# 3.5 s later (more than the idle timeout of 3 s) the reflector goes on, reads
# that ping first, then the client goes on: one session, ended by its FIN.
# Blocking, and spinning (which no SIGCONT interrupts: the ping is the first
# thing it sees, as after a VM pause).
udp_queue_empty() {
	[ "$(ip netns exec "$1" ss -Hun "sport = :$2" | awk '{ s += $2 } END { print s + 0 }')" = 0 ]
}

test_stall_foreign() {
	local spin=$1 l="stall${1:+ $1}"
	reflector_ok "$l" sf --once ${spin:+"$spin"} --json "$WORK/sf.json" || return
	emit_bg sfc -q --count 6000 --interval 1000 --timeout 100 --json "$WORK/sfc.json"
	wait_for 30 grep -q 'session 0x' "$WORK/sf.err"
	kill -STOP "$EMIT_PID"
	wait_for 30 udp_queue_empty "$NS_B" 12345
	kill -STOP "$REFLECTOR_PID"
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --session 0x5eed --count 1 >/dev/null
	sleep 3.5	# the stall under test
	kill -CONT "$REFLECTOR_PID"
	wait_for 30 udp_queue_empty "$NS_B" 12345	# it read the other client's ping
	kill -CONT "$EMIT_PID"
	reap "$EMIT_PID"
	expect_eq "$l: client exit status" "$RC" 0
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
	expect_eq "$l: one session, ended by the client's FIN" \
		"$(jsess "$WORK/sf.json" 0 count)/$(jsess "$WORK/sf.json" 0 stop_reason)" 1/fin
	expect_eq "$l: the other client's ping was foreign (told BUSY)" "$(jsess "$WORK/sf.json" 0 packets.foreign)" 1
	expect_eq "$l: the reflector got every ping the client sent" \
		"$(jsess "$WORK/sf.json" 0 packets.received)" "$(jget "$WORK/sfc.json" packets.sent)"
	books "$l: client" "$WORK/sfc.json"
}

# --------------------------------------------------------- 7. class books
# A FIN of no session flagged as a class, during a plain session: no row.
# The reflector's own -w in its class rows.  Late pongs beyond the window (the
# reflector stopped for 1000 pings under classes at their own cadences) booked to
# their classes.
test_class_books() {
	reflector_ok "class books" cb --json "$WORK/cb.json" || return
	emit_bg cbp -q --count 2000 --interval 1000 --json "$WORK/cbp.json"
	wait_for 30 grep -q 'session 0x' "$WORK/cb.err"
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --type 3 --session 0x4343 --flags $((PF_CLASS | 3 << 12)) \
		--count 3 >/dev/null
	reap "$EMIT_PID"
	wait_for 30 sessions "$WORK/cb.json" 1
	expect_eq "class books: a FIN with class bits makes no class row" "$(jsess "$WORK/cb.json" 0 classes)" missing
	stop_reflector

	reflector_ok "class books" cw --once -w 30 --json "$WORK/cw.json" || return
	emit cwc -q --tos 0,32,64 --count 300 --json "$WORK/cwc.json"
	expect_rc "class books: reflector -w" 0
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
	expect_eq "class books: the reflector's own warm-up, 30 pings" "$(jsess "$WORK/cw.json" 0 packets.warmup)" 30
	books "class books: reflector -w 30" "$WORK/cw.json"
	books "class books: client" "$WORK/cwc.json"

	reflector_ok "class books" cl --once --json "$WORK/cl.json" || return
	emit_bg clc -q --tos 32,64 --interval 1000,2000 -d 4 --timeout 50 --json "$WORK/clc.json"
	wait_for 30 grep -q 'session 0x' "$WORK/cl.err"
	kill -STOP "$REFLECTOR_PID"
	# the pongs of 1000 pings sent meanwhile come after the window moved on
	udp_wait "$NS_A" OutDatagrams 1000
	kill -CONT "$REFLECTOR_PID"
	reap "$EMIT_PID"
	expect_eq "class books: late pongs, client exit status" "$RC" 0
	check "class books: pongs came late" test "$(jget "$WORK/clc.json" packets.late)" -gt 0
	books "class books: late pongs beyond the window" "$WORK/clc.json"
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
	books "class books: late pongs, reflector" "$WORK/cl.json"
}

# One class's pings dropped on the client's way out (htb + pfifo limit 0 on
# TOS 0x20, the first class): the FIN still arrives from the other class.
test_class_fin() {
	local tc="in_a tc"
	if ! { $tc qdisc add dev "$VETH_A" root handle 1: htb default 1 &&
		$tc class add dev "$VETH_A" parent 1: classid 1:1 htb rate 10gbit &&
		$tc class add dev "$VETH_A" parent 1: classid 1:3 htb rate 10gbit &&
		$tc qdisc add dev "$VETH_A" parent 1:3 handle 30: pfifo limit 0 &&
		$tc filter add dev "$VETH_A" parent 1: protocol ip prio 1 u32 match ip tos 0x20 0xff flowid 1:3; } \
		2>"$WORK/tc.err"; then
		skip "class FIN: tc htb/pfifo/u32 not available ($(head -1 "$WORK/tc.err"))"
		$tc qdisc del dev "$VETH_A" root 2>/dev/null
		return
	fi
	reflector_ok "class FIN" cf --once --json "$WORK/cf.json" || return
	emit cfc -q --tos 32,64 --count 400 --interval 500 --timeout 50 --json "$WORK/cfc.json"
	$tc qdisc del dev "$VETH_A" root
	expect_rc "class FIN" 0
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
	expect_eq "class FIN: the session ended by the FIN (not idle)" "$(jsess "$WORK/cf.json" 0 stop_reason)" fin
	expect_eq "class FIN: the first class lost all" "$(jget "$WORK/cfc.json" classes.0.packets.lost)" 200
	expect_eq "class FIN: ... the second nothing" "$(jget "$WORK/cfc.json" classes.1.packets.lost)" 0
	expect_eq "class FIN: the reflector got the second class's pings" "$(jsess "$WORK/cf.json" 0 packets.received)" 200
	books "class FIN: client" "$WORK/cfc.json"
}

# --------------------------------------------------------------- 9. busy
test_busy_books() {
	busy_second "busy books" bb bb1 bb2 500 --count 100 --interval 1000 || return
	expect_rc "busy books: second client" 1
	check "busy books: the refused client sent" test "$(jget "$WORK/bb2.json" packets.sent)" -ge 1
	expect_eq "busy books: what BUSY answered is lost" "$(jget "$WORK/bb2.json" packets.lost)" \
		"$(jget "$WORK/bb2.json" packets.sent)"
	books "busy books: refused client" "$WORK/bb2.json"
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
}

# ---------------------------------------------------- 6. option combinations
# nothing_sent NAME: the reflector (in NS_B) saw no datagram from this run
test_options() {
	local k=$WORK/okey in0 rc
	head -c 32 /dev/urandom >"$k"
	chmod 600 "$k"
	in0=$(udp_stat "$NS_B" InDatagrams)
	emit ok1 -q --size 128,64 --count 5 --key-file "$k"
	expect_rc "options: --key-file with a size list that has no room for the tag" 2
	expect_eq "options: ... one line naming it" "$(wc -l <"$WORK/ok1.err")/$(grep -c 'list has 64' "$WORK/ok1.err")" 1/1
	emit ok2 -q --tos 0,32 --interval 100,2000zz --count 5
	expect_rc "options: a list item is read whole" 2
	emit ok3 -q --priority 20 --tos 0,32 --count 5
	expect_rc "options: --priority 20 with a --tos list" 2
	emit ok4 -q --tos 0,32 --tos 64 --count 5
	expect_rc "options: a list option given twice" 2
	expect_eq "options: nothing was sent" "$(udp_stat "$NS_B" InDatagrams)" "$in0"
	rm -f "$WORK/fifo"
	mkfifo -m 600 "$WORK/fifo"
	timeout 10 ip netns exec "$NS_A" "$RANT" -a "$ADDR_B" -q --count 5 --key-file "$WORK/fifo" 2>"$WORK/ok5.err"
	rc=$?
	expect_eq "options: a FIFO key file, client: exit 2 at once" "$rc" 2
	timeout 10 ip netns exec "$NS_B" "$RANT" --once -q --key-file "$WORK/fifo" 2>"$WORK/ok6.err"
	rc=$?
	expect_eq "options: a FIFO key file, reflector: exit 2 at once" "$rc" 2
	check "options: ... one line" test "$(grep -c 'not a regular file' "$WORK/ok6.err")" = 1

	# --ptp-probe: the MTU advice names a size that runs; classes share port 319
	emit ok7 --ptp-probe --size 1429 --count 5
	expect_rc "options: --ptp-probe --size 1429 over the MTU" 2
	check "options: ... the advice is 1428" grep -q 'use --size 1428 or less' "$WORK/ok7.err"
	reflector_ok "options" pp --ptp-probe --port 319 --once --json "$WORK/pp.json" || return
	emit ok8 -q --ptp-probe --size 1428 --tos 0,32,64 --count 300 --json "$WORK/ok8.json"
	expect_rc "options: --ptp-probe with three classes and the advised size" 0
	check "options: ... no PTP daemon blamed" not_grep -q ptp4l "$WORK/ok8.err"
	expect_eq "options: ... every ping answered" "$(jget "$WORK/ok8.json" packets.received)" 300
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
}

need_root "net-attack"
if ! ns_setup; then
	not_ok "namespace setup"
	finish
	exit 1
fi
test_replay
test_replay_idle
test_replay_keepalive
test_forged_seq
test_other_port
test_duration_traffic
test_idle_junk
test_stall_foreign
test_stall_foreign --spin	# no receive to interrupt: the datagram is the first thing it sees
test_class_books
test_class_fin
test_busy_books
test_options
finish
