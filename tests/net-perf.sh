#!/bin/bash
# What the performance work must not lose, seen in the system calls: the
# client's pings carry no control message (its connected socket keeps its
# cached route; TX keys from the socket's counter), back-to-back the client
# reads its TX stamps right after each send (in the round trip, not in the
# turnaround between a pong and the next ping), and the reflector answers
# a session, from its second answer on, on a socket of its own, bound to
# the address pinged and connected to the client, with no peer named and
# no control data (IPv4, IPv6 and IPv6 link-local, with -i and without) --
# while every stamp still comes and every answer still reaches the client;
# where that socket cannot be had, the shared socket answers and the
# report and the JSON say why.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

need_root "net-perf"
if ! command -v strace >/dev/null; then
	skip "net-perf: strace not installed"
	finish
	exit 0
fi
ns_setup || {
	not_ok "net-perf: namespaces"
	finish
	exit 1
}
# The veths' link-local IPv6 addresses finish duplicate address detection
# a second or two after the link comes up, and the kernel announces it
# (RTM_NEWADDR); the sessions start once no address is tentative, so that
# what is traced is the steady state of a host whose addresses are up.
settled() { # NS: no IPv6 address still tentative
	[ -z "$(ip -n "$1" -6 addr show tentative 2>/dev/null)" ]
}
if ! wait_for 30 settled "$NS_A" || ! wait_for 30 settled "$NS_B"; then
	not_ok "net-perf: IPv6 addresses settle (DAD)"
fi

N=300

# traced NAME BIND(-i|none) PEER-ADDR: a reflector under strace -e sendmsg
# (and STRACE_X) and a client (sendmsg and recvmmsg, and CTRACE_X; options
# CLIENT_X) of N pings with -s; sets EMIT_RC, REFLECT_RC
STRACE_X=()
CTRACE_X=""
CLIENT_X=()
traced() {
	local name=$1 bind=$2 addr=$3 rpid port=$((25000 + RANDOM % 1000)) ropt=() copt=()
	PORT_USED=$port
	[ "$bind" = -i ] && ropt=(-i "$VETH_B") && copt=(-i "$VETH_A")
	ip netns exec "$NS_B" "${STRACE_ENV[@]}" strace -f -qq -e trace=sendmsg,sendto,bind,connect "${STRACE_X[@]}" -o "$WORK/$name-r.st" \
		"$RANT" "${ropt[@]}" --port "$port" --once -s --json "$WORK/$name-r.json" \
		>"$WORK/$name-r.out" 2>"$WORK/$name-r.err" &
	rpid=$!
	BG_PIDS+=("$rpid")
	wait_for 30 udp_listening "$NS_B" "$port"
	ip netns exec "$NS_A" "${STRACE_ENV[@]}" strace -f -qq -e trace=sendmsg,sendto,recvmmsg,recvmsg$CTRACE_X -o "$WORK/$name-c.st" \
		"$RANT" "${copt[@]}" -a "$addr" --port "$port" --count "$N" -s "${CLIENT_X[@]}" --json "$WORK/$name.json" \
		>"$WORK/$name.out" 2>"$WORK/$name.err"
	EMIT_RC=$?
	wait_for 30 not_running "$rpid"
	wait "$rpid" 2>/dev/null
	REFLECT_RC=$?
}

# dgrams NAME SIDE: the traced sends of pings, pongs and FINs: sendmsg, or
# sendto where a send has no control data; not rant's one-byte loopback probe
# of the kernel's receive stamps before the run (ts_rx_live)
dgrams() { grep -E '(sendmsg|sendto)\(' "$WORK/$1-$2.st" | grep -vE 'sendto\([0-9]+, "\\0", 1, '; }
# sends NAME SIDE: how many
sends() { dgrams "$1" "$2" | grep -c .; }
with_cmsg() { dgrams "$1" "$2" | grep -c 'msg_control=\['; }
# named_sends NAME: the client's sends that name a peer or are not sendto(2)
named_sends() { dgrams "$1" c | grep -cvE 'sendto\([0-9]+, .*, NULL, 0\) = [0-9]+'; }
# named_receives NAME: the client's receives of a datagram (more than rant's
# one-byte loopback probe) that ask for the sender's address; pongs_read NAME: all of them
pongs_read() { grep -E 'recvmsg\(' "$WORK/$1-c.st" | grep -E '= [0-9]{2,}$' | grep -c .; }
named_receives() { grep -E 'recvmsg\(' "$WORK/$1-c.st" | grep -E '= [0-9]{2,}$' | grep -vc 'msg_name=NULL'; }
# read_after_send NAME: the client's sends followed at once by a read of its error queue (TX stamps)
read_after_send() {
	awk '/(sendmsg|sendto)\(/ { s = 1; next } s && /recvmmsg\(.*MSG_ERRQUEUE/ { n++ } { s = 0 } END { print n + 0 }' "$WORK/$1-c.st"
}
# own_socket NAME ADDR PORT: the session's first answer went out on the
# shared socket (naming its peer), then the reflector bound a socket of its
# own to ADDR and PORT (the address pinged), connected it to the client,
# and sent every later answer on it, naming no peer and with no control
# data (sendto(fd, ..., NULL, 0))
own_socket() {
	python3 - "$WORK/$1-r.st" "$2" "$3" <<'PY'
import re, sys
st, addr, port = sys.argv[1], sys.argv[2], sys.argv[3]
lines = open(st).read().splitlines()
fd = at = None
for i, l in enumerate(lines):
    m = re.search(r"bind\((\d+), \{sa_family=AF_INET6?, sin6?_port=htons\((\d+)\), (.*)\}", l)
    if m and m.group(2) == port and '"%s"' % addr in m.group(3):
        fd, at = m.group(1), i
if fd is None:
    sys.exit("#   no socket bound to %s port %s" % (addr, port))
conn = [l for l in lines if re.search(r"connect\(%s, " % fd, l)]
if len(conn) != 1 or " = 0" not in conn[0]:
    sys.exit("#   socket %s: connect calls %r" % (fd, conn))
def dgram(l):
    return re.search(r"(sendmsg|sendto)\(", l) and not re.search(r'sendto\(\d+, "\\0", 1, ', l)
before = [l for l in lines[:at] if dgram(l)]
after = [l for l in lines[at:] if dgram(l)]
if len(before) != 1 or re.search(r"\(%s, " % fd, before[0]):
    sys.exit("#   %d answers before the socket was made (want the first, on the shared socket)" % len(before))
bad = [l for l in after if not re.search(r"sendto\(%s, .*, NULL, 0\) = \d+" % fd, l)]
if not after or bad:
    sys.exit("#   %d of %d answers not on socket %s without a peer named: %s" % (len(bad), len(after), fd, bad[:2]))
PY
}

# every stamp came and every ping was answered
complete() {
	local name=$1
	expect_eq "$name: client exit 0" "$EMIT_RC" 0
	expect_eq "$name: reflector exit 0" "$REFLECT_RC" 0
	expect_eq "$name: every ping answered" "$(json_get "$WORK/$name.json" packets.received)" "$N"
	check "$name: no stamp missing, no TX stamp unmatched (client)" python3 - "$WORK/$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert not any(d["missing_stamps"].values()), d["missing_stamps"]
assert d["metrics"]["rtt"]["samples"] == d["packets"]["received"] - d["packets"]["warmup"], d["packets"]
PY
	check "$name: no stamp missing (reflector), its JSON says the session had its own socket" \
		python3 - "$WORK/$name-r.json" "$WORK/$name.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert not any(d["missing_stamps"].values()), d["missing_stamps"]
assert d["own_socket"] is True and d["own_socket_why"] is None, (d["own_socket"], d["own_socket_why"])
c = json.load(open(sys.argv[2]))
assert c["own_socket"] is None and c["own_socket_why"] is None, "a client's own_socket is null"
PY
}

# 1. -i on both ends, IPv4
traced bound -i "$ADDR_B"
complete bound
expect_eq "bound: the client's pings and FIN carry no control message" "$(with_cmsg bound c)" 0
expect_eq "bound: the client's pings and FIN go out as sendto(2) naming no peer" "$(named_sends bound)" 0
check "bound: the client read every pong ($(pongs_read bound)), asking no sender's address" \
	test "$(pongs_read bound)" -ge "$N" -a "$(named_receives bound)" -eq 0
n=$(read_after_send bound)
check "bound: back-to-back, each ping's send is followed by the read of the TX stamps ($n of $N)" test "$n" -ge "$N"
check "bound: the reflector sent every answer" test "$(sends bound r)" -ge "$N"
check "bound: the session answered on a socket of its own after its first answer, bound to $ADDR_B and connected, no peer named" \
	own_socket bound "$ADDR_B" "$PORT_USED"

# 2. the same over IPv6
traced bound6 -i "$ADDR6_B"
complete bound6
expect_eq "bound6: the client's pings and FIN carry no control message" "$(with_cmsg bound6 c)" 0
check "bound6: the session answered on a socket of its own after its first answer, bound to $ADDR6_B and connected, no peer named" \
	own_socket bound6 "$ADDR6_B" "$PORT_USED"

# 3. no -i: the same
traced unbound none "$ADDR_B"
complete unbound
check "unbound: the session answered on a socket of its own after its first answer, bound to $ADDR_B and connected, no peer named" \
	own_socket unbound "$ADDR_B" "$PORT_USED"

# 4. IPv6 link-local (fe80::...%IFACE), no -i: the session's socket needs the
# interface as its scope, in bind and in connect, or it is refused and the
# session stays on the shared socket
LL_B=$(ip -n "$NS_B" -6 -o addr show dev "$VETH_B" scope link | awk '{ sub("/.*", "", $4); print $4; exit }')
if [ -z "$LL_B" ]; then
	not_ok "link6: $VETH_B has a link-local IPv6 address"
else
	traced link6 none "$LL_B%$VETH_A"
	complete link6
	check "link6: the session answered on a socket of its own after its first answer, bound to $LL_B and connected, no peer named" \
		own_socket link6 "$LL_B" "$PORT_USED"
	check "link6: that socket's bind and connect name $VETH_B as the scope" python3 - "$WORK/link6-r.st" "$LL_B" "$VETH_B" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
b = [l for l in lines if re.search(r"bind\(\d+, .*\"%s\"" % re.escape(sys.argv[2]), l)]
fd = re.search(r"bind\((\d+),", b[-1]).group(1) if b else None
c = [l for l in lines if fd and re.search(r"connect\(%s, " % fd, l)]
scope = 'sin6_scope_id=if_nametoindex("%s")' % sys.argv[3]
assert b and c and scope in b[-1] and scope in c[0], (b, c)
PY
fi

# 5. no socket of its own to be had: strace makes the reflector's connect
# (only the session's socket connects) fail, as a kernel that refused it
# would.  The session is answered on the shared socket, every ping and
# stamp as before, and the report and the JSON say so and why.
STRACE_X=(-e inject=connect:error=ENETUNREACH)
traced refused -i "$ADDR_B"
STRACE_X=()
expect_eq "refused: client exit 0" "$EMIT_RC" 0
expect_eq "refused: reflector exit 0" "$REFLECT_RC" 0
# What came to its address between its bind and its failed connect is read
# and answered; one ping that comes in the instant between the last such
# read and the socket's close is lost with it (README): never read, so
# the client counts it lost on the way out.
check "refused: every ping the reflector read answered and the answer received; at most the one lost at the close" \
	python3 - "$WORK/refused.json" "$WORK/refused-r.json" "$N" <<'PY'
import json, sys
c, r = (json.load(open(f))["packets"] for f in sys.argv[1:3])
n = int(sys.argv[3])
assert c["sent"] == n and r["sent"] == r["received"] == c["received"], (c, r)
assert n - r["received"] <= 1 and c["lost"] == n - r["received"], (c, r)
PY
check "refused: every answer on the shared socket, naming its peer" \
	test "$(dgrams refused r | grep -c 'msg_name=')" -ge "$(json_get "$WORK/refused-r.json" packets.sent)"
check "refused: no stamp missing; the reflector's JSON says it had no socket of its own, and why" \
	python3 - "$WORK/refused.json" "$WORK/refused-r.json" <<'PY'
import json, sys
c, r = (json.load(open(f)) for f in sys.argv[1:3])
for d in (c, r):
    assert not any(d["missing_stamps"].values()), d["missing_stamps"]
assert c["metrics"]["rtt"]["samples"] == c["packets"]["received"] - c["packets"]["warmup"], c["packets"]
assert r["own_socket"] is False, r["own_socket"]
assert "bind or connect" in r["own_socket_why"] and "unreachable" in r["own_socket_why"], r["own_socket_why"]
PY
check "refused: the reflector's report says so" \
	grep -q "^Session socket: none, answered on the shared socket (bind or connect to the session's ends: Network is unreachable)" "$WORK/refused-r.out"

# 6. paced (--interval): the client sleeps until its next send, or a pong's
# deadline, on a timerfd armed at that time beside its socket, in a ppoll
# with no timeout of its own (a ppoll timeout's timer is cancelled by every
# pong that wakes it, and when it is the CPU's nearest timer that cancel
# reprograms the timer device inside the pong's receive); each ping's TX
# stamp is read right after its send, as back-to-back
CTRACE_X=",ppoll,timerfd_create,timerfd_settime"
CLIENT_X=(--interval 1000)
traced paced -i "$ADDR_B"
CTRACE_X=""
CLIENT_X=()
complete paced
check "paced: the client waits on a timerfd re-armed after each send, in ppolls with no timeout ($(grep -c 'timerfd_settime(' "$WORK/paced-c.st") arms)" \
	python3 - "$WORK/paced-c.st" "$N" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
n = int(sys.argv[2])
made = [re.search(r"timerfd_create\(CLOCK_MONOTONIC, TFD_CLOEXEC\|TFD_NONBLOCK\) = (\d+)", l) for l in lines]
made = [m.group(1) for m in made if m]
assert len(made) == 1, "timerfd_create calls: %r" % made
fd = made[0]
def arm(l):
    return re.search(r"timerfd_settime\(%s, TFD_TIMER_ABSTIME, .* = 0$" % fd, l)
sends = [i for i, l in enumerate(lines) if re.search(r"(sendmsg|sendto)\(", l) and not re.search(r'sendto\(\d+, "\\0", 1, ', l)]
polls = [l for l in lines[sends[0]:sends[n - 1]] if "ppoll(" in l]
assert polls, "no ppoll between the first and the last ping"
bad = [l for l in polls if not re.search(r"\{fd=%s, events=POLLIN\}\], 2, NULL, NULL" % fd, l)]
assert not bad, "%d of %d ppolls without the timerfd or with a timeout: %s" % (len(bad), len(polls), bad[:2])
# a send moves the time to act by: the first wait after it waits on the timer re-armed since
# (a step behind its cadence sends without waiting: no wait, no arm)
waits = unarmed = 0
for a, b in zip(sends[:n - 1], sends[1:n]):
    seg = lines[a:b]
    first = next((k for k, l in enumerate(seg) if "ppoll(" in l), None)
    if first is not None:
        waits += 1
        unarmed += not any(arm(l) for l in seg[:first])
assert waits and not unarmed, "%d of %d first waits after a send on a timer not re-armed" % (unarmed, waits)
PY
n=$(read_after_send paced)
check "paced: each ping's send is followed by the read of its TX stamp ($n of $N)" test "$n" -ge "$N"

finish
