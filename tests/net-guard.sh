#!/bin/bash
# Protocol rules under attack (root, throwaway namespaces; forged datagrams
# from tests/net-guard.d/forge.py, raw sockets for spoofed sources):
# answers come from the address pinged; a session belongs to its peer (its
# id from another port, a far-ahead seq, a FIN from elsewhere, another port
# of the client's address, wrapping idle hints, a stall with another
# client's ping read first: nothing locks or splits it); a replayed ping of
# an ended session opens nothing and blocks no one, keyed or not; forged
# pings far ahead or walking the window up never cost the client a ping;
# -d and the idle timeout hold under traffic and junk; the client takes
# nothing impossible; a busy reflector says so and its refused client
# counts what BUSY answered; --key-file tags every datagram; class rows
# balance on both sides; local drops are local; option combinations exit 2
# before anything is sent or run as written.  Assertions are on counts,
# exit codes and the report's structure, never on latencies; where time is
# under test, on which process ended first.
#
#   sudo bash tests/net-guard.sh        (RANT=path overrides the binary)
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=tests/lib.sh
. tests/lib.sh

D=tests/net-guard.d
ADDR_B2=10.231.0.3
ADDR6_B2=fd00:232::3	# another prefix: the kernel's own source choice would be ADDR6_B
PF_CLASS=0x800

# consistent NAME JSON: sent = received + lost, late <= lost, and with a
# loss split out + back + local + late = lost (one check; books below
# checks a reflector's sessions and class rows, one check each)
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

# ------------------------------------------- answers come from the address pinged
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

# ------------------------------------------------- a session belongs to its peer
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

# ------------------------------------------------ another port never joins
# A ping flagged as a class and three FINs with the session's id, from another
# port of the client's address (a plain UDP socket, no raw socket needed).
# They must reach the session while it runs, as in test_forged_seq: the client
# pings until it is told to stop, once pongs sent after them have come back.
test_other_port() {
	local sid n0 sent
	reflector_or "other port" op --json "$WORK/op.json" || return
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

# ------------------------------------------------------- a stall splits nothing
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
	reflector_or "$l" sf --once ${spin:+"$spin"} --json "$WORK/sf.json" || return
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

# new_key FILE: 32 random bytes, mode 600, as --key-file wants them
new_key() {
	head -c 32 /dev/urandom >"$1" && chmod 600 "$1"
}

# sniff_start NAME COUNT: forge.py captures COUNT pings to port 12345 on
# VETH_B into $WORK/NAME.cap (its pid in SNIFF_PID), ready once the file is
# there (it opens it after its bind)
sniff_start() {
	in_b python3 "$D/forge.py" sniff "$VETH_B" 12345 "$WORK/$1.cap" --count "$2" --timeout 20 >/dev/null &
	SNIFF_PID=$!
	BG_PIDS+=("$SNIFF_PID")
	wait_for 30 test -e "$WORK/$1.cap"
}

# keyed_sniffed LABEL NAME KEY: a new key in KEY, a reflector NAME keyed
# with it (its JSON in $WORK/NAME.json), and 20 of its pings captured
# (sniff_start); status 1, said, if the reflector did not start
keyed_sniffed() {
	new_key "$3"
	reflector_or "$1" "$2" --key-file "$3" --json "$WORK/$2.json" || return 1
	sniff_start "$2" 20
}

# --------------------------------------- a finished session cannot be brought back
# A keyed client's ping, captured on the wire, sent again unmodified from its
# own address and port after the session's FIN: nothing opens, and the next
# keyed client is served, not told BUSY.  The same with a session that ended
# idle (its client killed), and with a replay arriving while another runs.
test_replay() {
	local k=$WORK/rkey sn n0
	keyed_sniffed "replay" rp "$k" || return
	sn=$SNIFF_PID
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
	emit_bg rp3 -q --count 100000 --interval 1000 --key-file "$k" --json "$WORK/rp3.json"
	wait_for 30 udp_more "$NS_A" $((n0 + 10))	# it is answered
	in_a python3 "$D/forge.py" replay "$WORK/rp.cap" "$ADDR_B" 12345 --index 7 >/dev/null
	kill -INT "$EMIT_PID"	# ended after the replay, however slowly python started
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
	reflector_or "replay idle" ri --json "$WORK/ri.json" || return
	sniff_start ri 5
	sn=$SNIFF_PID
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
	keyed_sniffed "replay keep-alive" rk "$k" || return
	sn=$SNIFF_PID
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

# --------------------------------------------- forged pings cannot move the window
# From the client's own address and port (raw socket, no key): two pings far
# ahead (the second "confirming" the first) while it pings, then ten that walk
# the window up 4000 at a time, then a FIN with a seq below them.  The client
# loses nothing, and the session ends by its own FIN.  The FIN must reach the
# session while it runs (after the session's end it is the ended session's
# repeat): the client pings until it is told to stop, once pongs of pings
# sent after the forged FIN have come back; at 10 ms its seqs stay below the
# walk's 4000 for 39 s (a generous bound: on a loaded host three python
# starts took over 3 s, as long as 3000 pings at 1 ms last).
test_forged_seq() {
	local sid port n0 sent
	reflector_or "forged seq" fsr --once --json "$WORK/fsr.json" || return
	emit_bg fsc -q --count 3900 --interval 10000 --json "$WORK/fsc.json"
	wait_for 30 has_client_port "$EMIT_PID" && wait_for 30 grep -q 'session 0x' "$WORK/fsr.err"
	sid=$(session_id fsr)
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
	expect_eq "forged seq: the far jump refused, confirmed or not" "$(jsess "$WORK/fsr.json" 0 rejected.seq_ahead)" 2
	expect_eq "forged seq: the reflector answered every real ping (and the walk)" \
		"$(jsess "$WORK/fsr.json" 0 packets.received)" $((sent + 10))
	expect_eq "forged seq: no real ping called a duplicate" "$(jsess "$WORK/fsr.json" 0 packets.duplicate)" 0
	expect_eq "forged seq: the FIN below the pings refused, the session went on" \
		"$(jsess "$WORK/fsr.json" 0 rejected.fin_before_pings)/$(jsess "$WORK/fsr.json" 0 stop_reason)" 1/fin
	books "forged seq: reflector" "$WORK/fsr.json"
}

# ------------------------------------------------- deadlines under traffic
# A -d 2 reflector (blocking, and spinning) against a client that pings for
# 30 s: the reflector ends while the client still runs (the session in
# progress is finished first, for at most -d again: 4 s).  A generous bound by
# construction (wait_for's 20 s stretch under load; 10 s of margin), and no
# elapsed time is measured.
test_duration_traffic() {
	local spin
	for spin in "" --spin; do
		reflector_or "-d under traffic${spin:+ $spin}" dd -d 2 $spin --json "$WORK/dd.json" || return
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
	reflector_or "idle under junk" ij --status --json "$WORK/ij.json" || return
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

# -------------------------------------------------- the client takes nothing impossible
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

# ------------------------------------------------------------- busy
test_busy() {
	busy_second busy bz cb1 cb2 500 --count 100 || return
	expect_rc "busy: second client" 1
	expect_eq "busy: first client exit code" "$RC" 0
	expect_eq "busy: first client lost nothing" "$(jget "$WORK/cb1.json" packets.lost)" 0
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
	expect_eq "busy: one BUSY answer" "$(jsess "$WORK/bz.json" 0 rejected.busy_answers)" 1
}

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

# ------------------------------------------------------------- keys
test_keys() {
	local k=$WORK/key
	new_key "$k"
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

# --------------------------------------------------------- class books
# A FIN of no session flagged as a class, during a plain session: no row.
# The reflector's own -w in its class rows.  Late pongs beyond the window (the
# reflector stopped for 1000 pings under classes at their own cadences) booked to
# their classes.
test_class_books() {
	reflector_or "class books" cb --json "$WORK/cb.json" || return
	# a session long enough for the forged FINs however slowly python starts;
	# ended by SIGINT once they were sent
	emit_bg cbp -q --count 100000 --interval 1000 --json "$WORK/cbp.json"
	wait_for 30 grep -q 'session 0x' "$WORK/cb.err"
	in_a python3 "$D/forge.py" ping "$ADDR_B" 12345 --type 3 --session 0x4343 --flags $((PF_CLASS | 3 << 12)) \
		--count 3 >/dev/null
	kill -INT "$EMIT_PID"
	reap "$EMIT_PID"
	wait_for 30 sessions "$WORK/cb.json" 1
	expect_eq "class books: the forged FINs reached the session (foreign: another session's)" \
		"$(jsess "$WORK/cb.json" 0 packets.foreign)" 3
	expect_eq "class books: a FIN with class bits makes no class row" "$(jsess "$WORK/cb.json" 0 classes)" missing
	stop_reflector

	reflector_or "class books" cw --once -w 30 --json "$WORK/cw.json" || return
	emit cwc -q --tos 0,32,64 --count 300 --json "$WORK/cwc.json"
	expect_rc "class books: reflector -w" 0
	wait_for 30 gone "$REFLECTOR_PID"
	reap "$REFLECTOR_PID"
	expect_eq "class books: the reflector's own warm-up, 30 pings" "$(jsess "$WORK/cw.json" 0 packets.warmup)" 30
	books "class books: reflector -w 30" "$WORK/cw.json"
	books "class books: client" "$WORK/cwc.json"

	reflector_or "class books" clr --once --json "$WORK/clr.json" || return
	emit_bg clc -q --tos 32,64 --interval 1000,2000 -d 4 --timeout 50 --json "$WORK/clc.json"
	wait_for 30 grep -q 'session 0x' "$WORK/clr.err"
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
	books "class books: late pongs, reflector" "$WORK/clr.json"
}

# One class's pings dropped on the client's way out (htb + pfifo limit 0 on
# TOS 0x20, the first class): the FIN still arrives from the other class.
test_class_fin() {
	local tc="in_a tc"
	tc_drop_tos "class FIN" "$NS_A" "$VETH_A" 0x20 || return
	reflector_or "class FIN" cf --once --json "$WORK/cf.json" || return
	# --timeout 2000: the second class must lose nothing, and a loaded host
	# held pongs longer than 50 ms (12 of 200 counted lost at load 12)
	emit cfc -q --tos 32,64 --count 400 --interval 500 --timeout 2000 --json "$WORK/cfc.json"
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

# --------------------------------------------- local drops are local
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

# ---------------------------------------------------- option combinations
# Bad combinations exit 2 before anything is sent: the client's namespace
# sends no UDP datagram meanwhile (its OutDatagrams unchanged: counted
# whether or not anything listens on the other side)
test_options() {
	local k=$WORK/okey out0 rc
	new_key "$k"
	out0=$(udp_count "$NS_A" OutDatagrams)
	emit ok1 -q --size 128,64 --count 5 --key-file "$k"
	expect_rc "options: --key-file with a size list that has no room for the tag" 2
	expect_eq "options: ... one line naming it" "$(wc -l <"$WORK/ok1.err")/$(grep -c 'list has 64' "$WORK/ok1.err")" 1/1
	emit ok2 -q --tos 0,32 --interval 100,2000zz --count 5
	expect_rc "options: a list item is read whole" 2
	emit ok3 -q --priority 20 --tos 0,32 --count 5
	expect_rc "options: --priority 20 with a --tos list" 2
	emit ok4 -q --tos 0,32 --tos 64 --count 5
	expect_rc "options: a list option given twice" 2
	expect_eq "options: nothing was sent" "$(udp_count "$NS_A" OutDatagrams)" "$out0"
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
	reflector_or "options" pp --ptp-probe --port 319 --once --json "$WORK/pp.json" || return
	emit ok8 -q --ptp-probe --size 1428 --tos 0,32,64 --count 300 --json "$WORK/ok8.json"
	expect_rc "options: --ptp-probe with three classes and the advised size" 0
	check "options: ... no PTP daemon blamed" not_grep -q ptp4l "$WORK/ok8.err"
	expect_eq "options: ... every ping answered" "$(jget "$WORK/ok8.json" packets.received)" 300
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
test_other_port
test_stall_foreign
test_stall_foreign --spin	# no receive to interrupt: the datagram is the first thing it sees
test_replay
test_replay_idle
test_replay_keepalive
test_forged_seq
test_duration_traffic
test_idle_junk
test_client_rules
test_busy
test_busy_books
test_keys
test_class_books
test_class_fin
test_local_drops
test_options
finish
