#!/bin/bash
# Protocol rules under attack (root, throwaway namespaces): answers come from
# the address pinged, a session belongs to its peer, forged pings cannot lock
# or split a session, the client takes nothing impossible, a busy reflector
# says so, and --key-file tags every datagram.  Assertions are on counts,
# exit codes and the report's structure, never on latencies.
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=tests/lib.sh
. tests/lib.sh

D=tests/net-guard.d
ADDR_B2=10.231.0.3
ADDR6_B2=fd00:232::3	# another prefix: the kernel's own source choice would be ADDR6_B

# consistent NAME JSON: sent = received + lost, late <= lost, and with a
# loss split out + back + local + late = lost
consistent() {
	if python3 - "$2" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1])); p = d["packets"]
assert p["sent"] == p["received"] + p["lost"], p
assert p["late"] <= p["lost"], p
s = d.get("loss_by_direction")
if s:
    assert s["out"] + s["back"] + s["local"] + p["late"] == p["lost"], (s, p)
for m in d["metrics"].values():
    assert m["min_ns"] <= m["max_ns"], m
    assert abs(m["min_ns"]) < 1 << 62 and abs(m["max_ns"]) < 1 << 62, m
PY
		ok "$1: counters consistent"
	else
		not_ok "$1: counters inconsistent"
	fi
}

# --------------------------------------------------- 1. answers from the pinged address
test_second_address() {
	local fam=$1 addr=$2
	reflector "sa$fam" --once --json "$WORK/sa$fam.json" || { not_ok "second address ($fam): reflector did not start"; return; }
	# a pong a loaded host delays is still an answer: 5 s
	ip netns exec "$NS_A" "$RANT" -q -a "$addr" --count 300 --timeout 5000 --json "$WORK/ca$fam.json" \
		>"$WORK/ca$fam.out" 2>"$WORK/ca$fam.err"
	EMIT_RC=$?
	expect_rc "second address ($fam, $addr)" 0
	expect_eq "second address ($fam): every ping answered" "$(jget "$WORK/ca$fam.json" packets.received)" 300
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
	expect_eq "second address ($fam): reflector served one session" "$(jsess "$WORK/sa$fam.json" 0 count)" 1
}

# ------------------------------------------------- 2. a session belongs to its peer
test_peer_rules() {
	local sid port fp
	reflector pr --once --json "$WORK/pr.json" || { not_ok "peer: reflector did not start"; return; }
	# the session runs until the forgers are done; SIGINT ends it
	emit_bg cp -q -d 600 --interval 1000 --json "$WORK/cp.json"
	wait_for 30 has_client_port "$EMIT_PID" && wait_for 30 grep -q 'session 0x' "$WORK/pr.err"
	sid=$(session_id pr)
	port=$(client_port "$EMIT_PID")
	# the session's id from another port: not admitted
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --session "$sid" --seq 100 --count 5 >/dev/null
	# the session's id from its own address and port, far ahead: not history
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --src "$ADDR_A:$port" --session "$sid" --seq 1000000000 >/dev/null
	# a FIN of the session from elsewhere: no FIN_ACK, the session goes on
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --type 3 --session "$sid" --seq 5 >/dev/null
	fp=$?
	kill -INT "$EMIT_PID"
	reap "$EMIT_PID"
	expect_eq "peer: client exit code" "$RC" 0
	expect_eq "peer: client lost nothing to the forgeries" "$(jget "$WORK/cp.json" packets.lost)" 0
	expect_eq "peer: no ping of the client called duplicate" "$(jget "$WORK/cp.json" packets.duplicate)" 0
	consistent "peer: client" "$WORK/cp.json"
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
	expect_eq "peer: forgers ran" "$fp" 0
	expect_eq "peer: reflector rejects the id from another port (5 pings + 1 FIN)" \
		"$(jsess "$WORK/pr.json" 0 rejected.wrong_peer)" 6
	expect_eq "peer: reflector rejects the far-ahead seq" "$(jsess "$WORK/pr.json" 0 rejected.seq_ahead)" 1
	expect_eq "peer: reflector duplicate 0" "$(jsess "$WORK/pr.json" 0 packets.duplicate)" 0
	expect_eq "peer: reflector lost 0 (the forged seq is no gap)" "$(jsess "$WORK/pr.json" 0 packets.lost)" 0
	expect_eq "peer: reflector received every real ping" "$(jsess "$WORK/pr.json" 0 packets.received)" \
		"$(jget "$WORK/cp.json" packets.sent)"
	expect_eq "peer: one session" "$(jsess "$WORK/pr.json" 0 count)" 1
}

# idle hints that wrap (2 x 2^31) or are absurd: one session, never 50
test_idle_hints() {
	reflector ih --json "$WORK/ih.json" || { not_ok "idle: reflector did not start"; return; }
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --idle 2147483648 --count 50 --vary-session --gap 0.002 >/dev/null
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --idle 4294967295 --session 0x99 --count 1 >/dev/null
	wait_for 30 grep -q 'session 0x' "$WORK/ih.err"
	# the reflector has read them all
	wait_for 30 udp_drained "$REFLECTOR_PID" 12345
	stop_reflector
	expect_eq "idle: 51 junk pings made one session" "$(jsess "$WORK/ih.json" 0 count)" 1
	expect_eq "idle: the others counted as foreign" "$(jsess "$WORK/ih.json" 0 packets.foreign)" 50
	check "idle: ended by the signal, not by a wrapped idle timeout" grep -q '"stop_reason": "signal"' "$WORK/ih.json"
}

# FINs of no session, and a ping from port 0, before a session: counted with it
test_unknown_fin_port0() {
	reflector uf --once --json "$WORK/uf.json" || { not_ok "fin/port 0: reflector did not start"; return; }
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --type 3 --session 0x4242 --count 3 >/dev/null
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --src "$ADDR_A:0" --session 0x77 --count 2 >/dev/null
	emit cu -q --count 2000 --json "$WORK/cu.json"
	expect_rc "fin/port 0: client" 0
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
	expect_eq "fin/port 0: one session" "$(jsess "$WORK/uf.json" 0 count)" 1
	expect_eq "fin/port 0: FINs of no session counted" "$(jsess "$WORK/uf.json" 0 rejected.fin_unknown)" 3
	expect_eq "fin/port 0: pings from port 0 counted" "$(jsess "$WORK/uf.json" 0 rejected.source_port_0)" 2
	expect_eq "fin/port 0: no send error" "$(jsess "$WORK/uf.json" 0 packets.send_errors)" 0
	expect_eq "fin/port 0: reflector answered every ping" "$(jsess "$WORK/uf.json" 0 packets.sent)" \
		"$(jget "$WORK/cu.json" packets.sent)"
	consistent "fin/port 0: client" "$WORK/cu.json"
}

# past_us T: the wall clock (now_us) has reached T
past_us() {
	[ "$(now_us)" -ge "$1" ]
}

# next_client LABEL REFL NAME COUNT: a second client (NAME, COUNT pings,
# its exit 0 checked under LABEL) right after the first; then the reflector
# (its --json REFL) stopped once it has reported both sessions
next_client() {
	emit "$3" -q --count "$4" --json "$WORK/$3.json"
	expect_rc "$1" 0
	wait_for 30 sessions "$WORK/$2.json" 2
	stop_reflector
}

# a reflector stopped for 3.3 s (longer than the session's 3 s idle
# timeout): one session; the next session inherits nothing
test_stall_and_leak() {
	local n0 t0
	reflector st --json "$WORK/st.json" -l "$WORK/st.log" || { not_ok "stall: reflector did not start"; return; }
	emit_bg cs -q -d 600 --interval 1000 --json "$WORK/cs.json"
	wait_for 30 grep -q 'session 0x' "$WORK/st.err"
	n0=$(udp_count "$NS_A" OutDatagrams)
	t0=$(now_us)
	kill -STOP "$REFLECTOR_PID"
	# Time itself is under test: 3.3 s of wall clock, longer than the
	# session's 3 s idle timeout, shorter than the client's 5 s no-answer
	# stop.  The client's pings are no clock: behind its cadence under load
	# it skips the slots it missed, and 3500 of them took over 5 s.
	wait_for 30 past_us $((t0 + 3300000))
	check "stall: the client pinged meanwhile" udp_reaches "$NS_A" OutDatagrams $((n0 + 3))
	kill -CONT "$REFLECTOR_PID"
	# answered again, then stopped
	udp_wait "$NS_B" OutDatagrams 3600
	kill -INT "$EMIT_PID"
	reap "$EMIT_PID"
	expect_eq "stall: client exit code" "$RC" 0
	[ "$RC" = 0 ] || sed "s/^/# cs.err: /" "$WORK/cs.err"
	consistent "stall: client" "$WORK/cs.json"
	next_client "stall: second client" st cs2 500
	expect_eq "stall: two clients, two sessions (the stall split none)" "$(jsess "$WORK/st.json" 0 count)" 2
	expect_eq "stall: first session ended by its FIN" "$(jsess "$WORK/st.json" 0 stop_reason)" fin
	expect_eq "stall: first session answered every ping" "$(jsess "$WORK/st.json" 0 packets.received)" \
		"$(jget "$WORK/cs.json" packets.sent)"
	expect_eq "leak: the second session has no unmatched TX stamp" \
		"$(jsess "$WORK/st.json" 1 packets.unmatched_tx_stamps)" 0
	expect_eq "leak: the second session counts only its own pings" \
		"$(jsess "$WORK/st.json" 1 packets.received)" 500
}

# the client's last pongs never come (its reflector stopped across the
# client's -d end): the client still sends its FIN, so the reflector's
# session ends by it (not seconds later by idleness) and the next client
# is served at once, not told BUSY
test_fin_after_loss() {
	reflector fl --json "$WORK/fl.json" || { not_ok "fin after loss: reflector did not start"; return; }
	emit_bg fc -q -d 3 --interval 1000 --json "$WORK/fc.json"
	udp_wait "$NS_B" OutDatagrams 50
	kill -STOP "$REFLECTOR_PID"
	if gone "$EMIT_PID"; then
		kill -CONT "$REFLECTOR_PID"
		skip "fin after loss: the client ended before its reflector was stopped (a loaded host)"
		stop_reflector
		return
	fi
	wait_exit "$EMIT_PID" 60
	kill -CONT "$REFLECTOR_PID"
	expect_exit "fin after loss: client exit code" fc 0
	check "fin after loss: the client lost the pings of the stop" \
		[ "$(jget "$WORK/fc.json" packets.lost)" -gt 0 ]
	consistent "fin after loss: client" "$WORK/fc.json"
	next_client "fin after loss: the next client, at once" fl fl2 200
	expect_eq "fin after loss: two clients, two sessions" "$(jsess "$WORK/fl.json" 0 count)" 2
	expect_eq "fin after loss: the first session ended by its FIN" \
		"$(jsess "$WORK/fl.json" 0 stop_reason)" fin
	expect_eq "fin after loss: the second session answered all its pings" \
		"$(jsess "$WORK/fl.json" 1 packets.received)" 200
}

# -------------------------------------------------- 3. the client takes nothing impossible
# fake_start NAME MODE [forge.py options]: forge.py's reflector at ADDR_B
# port 12346, once it listens; fake_end: once it has gone by itself (2 s
# after its last datagram), else killed
fake_start() {
	local name=$1 mode=$2
	shift 2
	rm -f "$WORK/$name.ready"
	in_b python3 "$D/forge.py" reflector "$ADDR_B" 12346 "$WORK/$name.ready" "$mode" "$@" \
		>"$WORK/$name.fake" &
	FAKE_PID=$!
	BG_PIDS+=("$FAKE_PID")
	wait_for 30 test -e "$WORK/$name.ready"
}

fake_end() {
	wait_for 30 gone "$FAKE_PID" || kill "$FAKE_PID" 2>/dev/null
	wait "$FAKE_PID" 2>/dev/null
}

# fake NAME MODE [client options]: the client against forge.py's reflector
# (back-to-back runs whose counts need every pong in time give --timeout
# 10000: a python fake the host keeps waiting a second still answers
# within it; a fake in time makes it cost nothing)
fake() {
	local name=$1 mode=$2
	shift 2
	fake_start "$name" "$mode"
	emit "$name" --port 12346 -q --json "$WORK/$name.json" "$@"
	fake_end
}

# fake_read NAME MODE N [options]: a fake reflector that answers N pings,
# and a client (options added) stopped by SIGINT once it has read them, so
# that a fake the host kept waiting cannot leave answers unread (with
# --count, answers later than the last ping's --timeout came after the
# client had ended: CI counted 8 of 30).  A namespace's UDP InDatagrams
# counts a datagram when a socket reads it; the client reads its own
# loopback datagram(s) at start (ts_rx_live), so the fake holds its answers
# until it has read the first ping, after them, and the count starts then.
# The client's status in RC.
fake_read() {
	local name=$1 mode=$2 n=$3 base
	shift 3
	rm -f "$WORK/$name.go"
	fake_start "$name" "$mode" --answers "$n" --go "$WORK/$name.go"
	base=$(udp_count "$NS_B" InDatagrams)
	emit_bg "$name" --port 12346 -q --json "$WORK/$name.json" "$@"
	wait_for 30 udp_reaches "$NS_B" InDatagrams $((base + 1)) || not_ok "$name: no ping reached the fake"
	base=$(udp_count "$NS_A" InDatagrams)
	: >"$WORK/$name.go"
	wait_for 60 udp_reaches "$NS_A" InDatagrams $((base + n)) || not_ok "$name: the client did not read $n answers"
	kill -INT "$EMIT_PID"
	reap "$EMIT_PID"
	fake_end
}

test_client_rules() {
	fake fa absurd --count 200 -s --timeout 10000
	expect_rc "absurd stamps" 0
	expect_eq "absurd stamps: the stamps of each pong refused" "$(jget "$WORK/fa.json" rejected.implausible_stamps)" 200
	expect_eq "absurd stamps: no response metric" "$(jget "$WORK/fa.json" metrics.response.samples)" missing
	expect_eq "absurd stamps: no server processing metric" \
		"$(jget "$WORK/fa.json" metrics.server_processing.samples)" missing
	expect_eq "absurd stamps: the round trips still measured" "$(jget "$WORK/fa.json" metrics.rtt.samples)" 200
	consistent "absurd stamps" "$WORK/fa.json"

	# pings on a cadence: one unanswered ping does not wait for the last one's timeout
	fake_read fs short 50 --size 1400 --timeout 200 --interval 20000
	expect_eq "short pongs: exit code" "$RC" 1
	expect_eq "short pongs: wrong length counted" "$(jget "$WORK/fs.json" rejected.wrong_length)" 50
	expect_eq "short pongs: no sample" "$(jget "$WORK/fs.json" packets.received)" 0

	fake fr replay --count 1000 --timeout 10000
	expect_rc "replayed pongs" 0
	expect_eq "replayed pongs: late 0" "$(jget "$WORK/fr.json" packets.late)" 0
	expect_eq "replayed pongs: each a duplicate" "$(jget "$WORK/fr.json" packets.duplicate)" \
		"$(jget "$WORK/fr.fake" forged)"
	consistent "replayed pongs" "$WORK/fr.json"

	fake ff finack --count 100 --timeout 10000
	expect_rc "unasked FIN_ACK" 0
	# the last one may arrive after the client's FIN: then it is that FIN's answer
	check "unasked FIN_ACK: rejected, each (but maybe the last)" python3 -c 'import sys; f, r = int(sys.argv[1]), int(sys.argv[2]); sys.exit(not f - 1 <= r <= f)' \
		"$(jget "$WORK/ff.fake" forged)" "$(jget "$WORK/ff.json" rejected.fin_ack_unasked)"
	# ... but the last, when it was taken as the FIN's answer: its T3 stamp
	# may complete the transaction before it (whether it is still open then
	# depends on the host)
	check "unasked FIN_ACK: no response sample from one (but maybe one from the FIN's answer)" \
		python3 -c 'import sys; f, r, n = sys.argv[1:]; sys.exit(not (n == "missing" or (r != f and n == "1")))' \
		"$(jget "$WORK/ff.fake" forged)" "$(jget "$WORK/ff.json" rejected.fin_ack_unasked)" \
		"$(jget "$WORK/ff.json" metrics.response.samples)"

	fake fb busy --count 100
	expect_rc "busy reflector" 1
	check "busy reflector: the line names it" grep -q "reflector $ADDR_B port 12346 is busy" "$WORK/fb.err"
	expect_eq "busy reflector: ended after its first ping" "$(jget "$WORK/fb.json" packets.sent)" 1

	fake fl busy_late --count 100 --timeout 10000
	expect_rc "BUSY after answers (forged)" 0
	expect_eq "BUSY after answers: refused" "$(jget "$WORK/fl.json" rejected.implausible_stamps)" 1
}

# ------------------------------------------------------------- 6. busy
test_busy() {
	busy_second busy bz cb1 cb2 500 --count 100 || return
	expect_rc "busy: second client" 1
	expect_eq "busy: first client exit code" "$RC" 0
	expect_eq "busy: first client lost nothing" "$(jget "$WORK/cb1.json" packets.lost)" 0
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
	expect_eq "busy: one BUSY answer" "$(jsess "$WORK/bz.json" 0 rejected.busy_answers)" 1
}

# ------------------------------------------------------------- 5. keys
test_keys() {
	local k=$WORK/key
	head -c 32 /dev/urandom >"$k"
	chmod 600 "$k"
	reflector kr --once --key-file "$k" --json "$WORK/kr.json" || { not_ok "key: reflector did not start"; return; }
	# a client without the key is not answered (10 pings 100 ms apart: all
	# sent well before the client gives up after 5 s of silence)
	emit kn -q --count 10 --timeout 100 --json "$WORK/kn.json"
	expect_rc "key: client without the key" 1
	emit kc -q --count 500 --size 200 --key-file "$k" --json "$WORK/kc.json"
	expect_rc "key: client with the key" 0
	expect_eq "key: every tagged ping answered" "$(jget "$WORK/kc.json" packets.received)" 500
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
	expect_eq "key: untagged pings counted unauthenticated" "$(jsess "$WORK/kr.json" 0 rejected.unauthenticated)" 10

	fake_read ku untagged 30 --timeout 200 --interval 20000 --key-file "$k"
	expect_eq "key: untagged pongs: exit code" "$RC" 1
	expect_eq "key: untagged pongs are never samples" "$(jget "$WORK/ku.json" packets.received)" 0
	expect_eq "key: ... and counted" "$(jget "$WORK/ku.json" rejected.unauthenticated)" 30
	# a key the group can read, an empty and a short one: exit 2, one line, nothing sent
	cp "$k" "$k.644" && chmod 644 "$k.644"
	: >"$k.empty" && chmod 600 "$k.empty"
	head -c 15 /dev/urandom >"$k.short" && chmod 600 "$k.short"
	for f in 644 empty short; do
		emit kb$f -q --count 5 --key-file "$k.$f"
		expect_rc "key: $f key file" 2
		expect_eq "key: $f key file: one line" "$(wc -l <"$WORK/kb$f.err")/$(grep -c '^rant: --key-file: ' "$WORK/kb$f.err")" 1/1
	done
	fake_read kw wrongtag 30 --timeout 200 --interval 20000 --key-file "$k"
	expect_eq "key: pongs with a wrong tag are never samples" "$(jget "$WORK/kw.json" packets.received)" 0
	expect_eq "key: ... and counted" "$(jget "$WORK/kw.json" rejected.unauthenticated)" 30
}

# --------------------------------------------- 4. local drops are local
# The client stopped while 8000 big datagrams from the reflector's address
# fill its receive buffer: what the kernel drops there is the host's, never
# "lost on the way back".  (It runs until stopped: on a loaded host a 3 s
# --count had ended before the flood, and the test tested nothing.)
test_local_drops() {
	local port
	reflector ld --once --json "$WORK/ld.json" || { not_ok "local drops: reflector did not start"; return; }
	# runs until it has read the flood and had 100 pongs more, then SIGINT
	emit_bg cl -d 600 --interval 1000 --timeout 3000 --json "$WORK/cl.json"
	wait_for 30 has_client_port "$EMIT_PID" && wait_for 30 grep -q 'session 0x' "$WORK/ld.err"
	port=$(client_port "$EMIT_PID")
	kill -STOP "$EMIT_PID"
	in_b python3 "$D/forge.py" ping "$ADDR_A" "$port" --src "$ADDR_B:12345" --type 6 --size 1400 --count 8000 >/dev/null
	kill -CONT "$EMIT_PID"
	udp_wait "$NS_B" OutDatagrams 100
	kill -INT "$EMIT_PID"
	reap "$EMIT_PID"
	expect_eq "local drops: client exit code" "$RC" 0
	check "local drops: counted (SO_RXQ_OVFL)" python3 -c 'import json,sys; sys.exit(not json.load(open(sys.argv[1]))["local_receive_drops"] > 0)' "$WORK/cl.json"
	expect_eq "local drops: not network loss" "$(jget "$WORK/cl.json" loss_by_direction.back)" 0
	consistent "local drops" "$WORK/cl.json"
	check "local drops: the rate warning names the cause" grep -q 'faster than this host sustains' "$WORK/cl.err"
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
}

need_root "net-guard"
if ! ns_setup; then
	not_ok "namespace setup"
	finish
	exit 1
fi
ip -n "$NS_B" addr add "$ADDR_B2/24" dev "$VETH_B"
ip -n "$NS_B" addr add "$ADDR6_B2/64" dev "$VETH_B" nodad
ip -n "$NS_A" -6 route add fd00:232::/64 dev "$VETH_A"
test_second_address 4 "$ADDR_B2"
test_second_address 6 "$ADDR6_B2"
test_peer_rules
test_idle_hints
test_unknown_fin_port0
test_stall_and_leak
test_fin_after_loss
test_client_rules
test_busy
test_keys
test_local_drops
finish
