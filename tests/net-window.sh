#!/bin/bash
# Integration tests of what happens inside a measured window (T1_SW..T4_SW
# on the client, T2_SW..T3_SW on the reflector): nothing but the
# measurement.  Every session's first transaction on the reflector costs
# no more than a cold cache (server processing of the first measured row
# against the session's median, over several sessions); RANT_TEST_START is
# written on each side where no window is open (the order of the marker and
# the side's own system calls in a tracefs instance: every datagram
# received before it was answered before it); the reflector's source probe
# runs outside its loop (strace: no probe call from the main thread), and a
# routing change mid-run makes it name its source again at once (pongs keep
# coming from the pinged address).
#
#   sudo bash tests/net-window.sh        (RANT=path overrides the binary)

# shellcheck disable=SC2016,SC2034 # awk programs; PY_PRELUDE is read by py_checks
# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

TFS=
INST="rant_w$$"
# sessions per check: each check takes the median over them, so that one
# preempted transaction on a loaded host cannot decide it
: "${SESSIONS:=5}"
# generous: a cold cache makes a first transaction 10-30 times the median
# here; clearing a session's memory inside it made it 500-1000 times
: "${FIRST_FACTOR:=100}"

PY_PRELUDE='
import statistics
def ns(v):
    s, f = v.split(".")
    return int(s) * 10**9 + int(f)
def sessions(path):
    """the rows of each session of a reflector csv log: each its column line,
    its rows and its "# rant" line of facts (skipped here)"""
    out, cols = [], None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("seq,"):
            out.append([])
            cols = line.split(",")
        elif line and not line.startswith("#"):
            out[-1].append(dict(zip(cols, line.split(","))))
    return out
def first_ratio(rows, seq):
    """server processing (T3_SW - T2_SW) of row seq against the median of the rows"""
    p = {int(r["seq"]): ns(r["t3_sw"]) - ns(r["t2_sw"]) for r in rows if r["t2_sw"] != "-" and r["t3_sw"] != "-"}
    med = statistics.median(p.values())
    return p[seq], med, p[seq] / max(med, 1)
'

# ------------------------------------- each session's first transaction

# SESSIONS clients, back-to-back with -w 0, against one reflector: row 0 of
# each is its session's first transaction
test_first_rows() {
	local i
	reflector_or "first rows" fr --port 12501 -s -q -l "$WORK/fr.csv" --log-format csv || return
	for ((i = 0; i < SESSIONS; i++)); do
		emit "fr$i" --port 12501 -s -q --count 300
		[ "$EMIT_RC" = 0 ] || show "fr$i"
	done
	stop_reflector
	py_checks "first rows" '
s = sessions(sys.argv[1])
t(f"{len(s)} sessions logged, 300 rows each", len(s) == int(sys.argv[2]) and all(len(r) == 300 for r in s),
  [len(r) for r in s])
ratios = []
for i, rows in enumerate(s):
    p0, med, r = first_ratio(rows, 0)
    ratios.append(r)
    print(f"session {i}: seq 0 server processing {p0} ns, median {med} ns, x{r:.1f}")
m = statistics.median(ratios)
t(f"the first transaction of a session: server processing within x{sys.argv[3]} the session median "
  f"(median over sessions x{m:.1f})", m <= float(sys.argv[3]), ratios)
' "$WORK/fr.csv" "$SESSIONS" "$FIRST_FACTOR"
}

# ------------------------------------------------- RANT_TEST_START order

TRACED_CALLS=(sys_exit_recvmsg sys_enter_recvmsg sys_enter_sendmsg sys_enter_sendto)

# trace_calls FILE VALUE: VALUE into FILE (enable, filter) of each traced call's event
trace_calls() {
	local e
	for e in "${TRACED_CALLS[@]}"; do
		echo "$2" >"$TFS/instances/$INST/events/syscalls/$e/$1" || return 1
	done
}

# traced_bg NS ALSO COMMAND...: COMMAND in NS in the background, its pid
# added to the instance's set_event_pid before it runs (ip netns exec keeps
# the pid), and each traced system call's filter set to that pid and ALSO
# (a pid, or empty).  set_event_pid alone lets another process's calls
# through: with only this shell's pid in it, a spinning rant on loopback
# had 562 of its recvmsg calls traced in a second (the kernel checks the
# pid list per CPU, updated as tasks switch and wake), and the other
# suites' spinning runs overran the ring.  A filtered-out event never
# reaches the ring (the kernel tests it in a per-CPU buffer first).
traced_bg() {
	local ns=$1 also=$2
	shift 2
	# shellcheck disable=SC2016 # $$, $0, $1, $2 and $CALLS belong to the inner shell
	CALLS="${TRACED_CALLS[*]}" sh -c 'f="common_pid == $$"
		[ -z "$1" ] || f="$f || common_pid == $1"
		for e in $CALLS; do
			echo "$f" >"$2/$e/filter" || exit 1
		done
		echo $$ >>"$0" && shift 2 && exec ip netns exec "$@"' "$TFS/instances/$INST/set_event_pid" \
		"$also" "$TFS/instances/$INST/events/syscalls" "$ns" "$@" >"$WORK/tr.$ns.out" 2>&1 &
	TRACED_PID=$!
	BG_PIDS+=("$TRACED_PID")
}

# trace_only PID: only PID's traced system calls from here on (set_event_pid and filters)
trace_only() {
	echo "$1" >"$TFS/instances/$INST/set_event_pid"
	trace_calls filter "common_pid == $1"
}

# SESSIONS clients with -w 10 and -T against one reflector with -T, both
# sides' recvmsg and sendmsg traced in the same instance as their markers
test_start_order() {
	local i ev="$TFS/instances/$INST/events/syscalls" rpid cpids=() lost
	if [ ! -d "$ev/sys_exit_recvmsg" ] || [ ! -d "$ev/sys_enter_recvmsg" ] ||
		[ ! -d "$ev/sys_enter_sendmsg" ] || [ ! -d "$ev/sys_enter_sendto" ]; then
		skip "RANT_TEST_START order: no syscall events in this kernel's tracefs"
		return
	fi
	echo mono >"$TFS/instances/$INST/trace_clock"
	# room for every event of the run (KiB per CPU); what the buffer still
	# lost is counted below (overrun, dropped events)
	echo 8192 >"$TFS/instances/$INST/buffer_size_kb" 2>/dev/null
	trace_calls enable 1
	# the pid filters on before tracing is: with none, every process's
	# system calls are traced until the reflector's pid is added, and the
	# other suites' on a loaded host overran the ring (572 events lost in
	# one .ci/run); this shell makes none of these calls
	trace_only "$BASHPID"
	echo 1 >"$TFS/instances/$INST/tracing_on"
	traced_bg "$NS_B" "" "$RANT" -i "$VETH_B" --port 12502 -s -q -T --trace-instance "$INST" \
		-l "$WORK/so.csv" --log-format csv
	rpid=$TRACED_PID
	if ! wait_for 30 udp_listening "$NS_B" 12502; then
		not_ok "RANT_TEST_START order: reflector listens"
		return
	fi
	for ((i = 0; i < SESSIONS; i++)); do
		traced_bg "$NS_A" "$rpid" "$RANT" -i "$VETH_A" -a "$ADDR_B" --port 12502 -s -q -T \
			--trace-instance "$INST" -w 10 --count 100
		cpids+=("$TRACED_PID")
		wait_exit "$TRACED_PID" 20
		# its pid may go to another process now: the reflector's alone is traced
		trace_only "$rpid"
		[ "$WAIT_RC" = 0 ] || sed 's/^/#   /' "$WORK/tr.$NS_A.out"
	done
	kill -INT "$rpid"
	wait_exit "$rpid" 10
	echo 0 >"$TFS/instances/$INST/tracing_on"
	cp "$TFS/instances/$INST/trace" "$WORK/so.trace"
	lost=$(cat "$TFS/instances/$INST"/per_cpu/cpu*/stats 2>/dev/null |
		awk '/^(overrun|dropped events):/ { n += $NF } END { print n + 0 }')
	trace_calls enable 0
	trace_calls filter 0
	# a trace that lost events (the ring overran under load) cannot show
	# the order: those checks are skipped, saying so; the log's are judged
	if [ "$lost" -gt 0 ]; then
		skip "RANT_TEST_START order: the trace lost $lost events (ring overrun under load): order not judged"
	fi
	py_checks "RANT_TEST_START order" '
import re
lost = int(sys.argv[7])
judge = t
pid_re = re.compile(r"-(\d+)\s+\[\d+\]")
# per side: its marks, and its datagrams received (a recvmsg returning a
# length) and sent (sendmsg, or sendto where a send has no control data), on
# any of its sockets (the reflector reads a session'"'"'s first ping on the
# socket every peer shares, the rest on the session'"'"'s own); not rant'"'"'s
# one-byte loopback probe of the kernel'"'"'s receive stamps before the run
ev = {}
for line in open(sys.argv[1]):
    m = pid_re.search(line)
    if not m or line.startswith("#"):
        continue
    pid = int(m.group(1))
    if "tracing_mark_write: RANT_TEST_START" in line:
        e = "mark"
    elif "sys_sendmsg(" in line or "sys_sendto(" in line:
        e = None if re.search(r"len: (0x0*)?1,", line) else "send"
    elif "sys_recvmsg -> " in line:
        # a datagram, not an EAGAIN or a timeout: a return below 2^32 (-errno is near 2^64)
        v = int(line.rsplit(" ", 1)[1], 16)
        e = "recv" if 1 < v < 1 << 32 else None
    else:
        e = None
    if e:
        ev.setdefault(pid, []).append(e)
refl, clients = int(sys.argv[2]), [int(p) for p in sys.argv[6].split()]
def before(evs):
    """per marker: datagrams received and sent before it"""
    out, r, s = [], 0, 0
    for e in evs:
        if e == "mark":
            out.append((r, s))
        r += e == "recv"
        s += e == "send"
    return out
n = int(sys.argv[3])
rm = before(ev.get(refl, []))
if lost:
    t = lambda *a, **k: None	# the trace is incomplete: nothing of it judged
t(f"reflector: one RANT_TEST_START per session ({n})", len(rm) == n, rm)
t("reflector: every ping received before RANT_TEST_START (the 10 warm-up pings and more) was answered "
  "before it (not inside T2_SW..T3_SW)",
  rm and all(r == s and r > 10 for r, s in rm), rm)
cm = [before(ev.get(p, [])) for p in clients]
t(f"client: one RANT_TEST_START in each of the {n} runs", len(cm) == n and all(len(c) == 1 for c in cm), cm)
t("client: every ping sent before RANT_TEST_START was answered before it (not inside T1_SW..T4_SW), "
  "after the 10 warm-up pings", cm and all(c and c[0] == (10, 10) for c in cm), cm)
t = judge
ratios = []
for rows in sessions(sys.argv[4]):
    first = min(int(r["seq"]) for r in rows if r["status"] == "ok")
    p0, med, r = first_ratio(rows, first)
    ratios.append(r)
    print(f"-T session: first measured row (seq {first}) server processing {p0} ns, median {med} ns, x{r:.1f}")
m = statistics.median(ratios) if ratios else float("inf")
t(f"-T: the first measured row within x{sys.argv[5]} the session median (median over sessions x{m:.1f})",
  m <= float(sys.argv[5]), ratios)
' "$WORK/so.trace" "$rpid" "$SESSIONS" "$WORK/so.csv" "$FIRST_FACTOR" "${cpids[*]}" "$lost"
}

test_start_mark_order() {
	if ! tracefs_instance; then
		skip "RANT_TEST_START order: no tracefs here"
		return
	fi
	test_start_order
}

# ------------------------------------------ the session's own socket

# port_free NS PORT: nothing listens on UDP PORT in NS
port_free() { ! udp_listening "$1" "$2"; }

# A session is answered on a socket of its own (bound to the address pinged,
# connected to its peer): made right after the session's first answer (which
# goes out on the shared socket), by the loop's thread, once; no source
# probe (connect, getsockname on a probe socket: the shared socket's way)
# from any thread: the watch is not asked for a session about to get one.
test_session_socket() {
	local spid rp
	if ! command -v strace >/dev/null; then
		skip "session socket: strace not installed"
		return
	fi
	ip netns exec "$NS_B" strace -f -qq -e trace=sendmsg,sendto,connect,getsockname -o "$WORK/pt.strace" \
		"$RANT" -i "$VETH_B" --port 12503 -q >"$WORK/pt.out" 2>&1 &
	spid=$!
	BG_PIDS+=("$spid")
	if ! wait_for 30 udp_listening "$NS_B" 12503; then
		not_ok "session socket: reflector under strace listens"
		return
	fi
	emit pt --port 12503 -q --count 200
	expect_rc "session socket: the first client of an strace'd reflector" 0
	emit pt2 --port 12503 -q --count 200
	expect_rc "session socket: the second client" 0
	# rant is strace's child: signal rant itself (strace, signalled, detaches
	# and leaves it running: one reflector was left behind per run)
	rp=$(pgrep -P "$spid" | head -n 1)
	kill -INT "${rp:-$spid}" 2>/dev/null
	wait_exit "$spid" 10
	check "session socket: the reflector under strace ended on SIGINT (its port free)" \
		wait_for 10 port_free "$NS_B" 12503
	py_checks "session socket" '
import re
lines = open(sys.argv[1]).read().splitlines()
def dgram(l):
    # a datagram sent; not the one-byte loopback probe of the receive stamps before the run
    return re.search(r"^\d+ +(sendmsg|sendto)\(", l) and not re.search(r"sendto\(\d+, \"\\0\", 1, ", l)
sends = [l for l in lines if dgram(l)]
main = sends[0].split()[0] if sends else None
t("the answers come from one thread", sends and all(l.split()[0] == main for l in sends), sends[:1])
conn = [i for i, l in enumerate(lines) if re.search(r"^\d+ +connect\(", l)]
t("two sessions, two connects, both from the loop thread, nothing else connects",
  len(conn) == 2 and all(lines[i].split()[0] == main for i in conn), [lines[i] for i in conn])
# each session: its first answer on the shared socket, then its socket, the rest on it
at = conn + [len(lines)]
shared = [len([l for l in lines[:at[0]] if dgram(l)])]
mine = []
for k in range(len(conn)):
    fd = re.search(r"connect\((\d+),", lines[at[k]]).group(1)
    rng = [l for l in lines[at[k]:at[k + 1]] if dgram(l)]
    on = [l for l in rng if re.search(r"(sendmsg|sendto)\(%s, " % fd, l)]
    mine.append((len(on), all(re.search(r"sendto\(%s, .*, NULL, 0\)" % fd, l) for l in on)))
    shared.append(len(rng) - len(on))
# (a FIN the client sent again after its session ended is answered from the shared socket)
t("each session: its first answer on the shared socket, the other 199 and a FIN_ACK on its own, "
  "no peer named", len(shared) == 3 and shared[0] == 1 and shared[1] >= 1 and len(mine) == 2 and
  all(n >= 200 and ok for n, ok in mine), (shared, mine))
t("no source probe (getsockname) once the first session began",
  not [l for l in lines[conn[0] if conn else 0:] if "getsockname(" in l])
' "$WORK/pt.strace"
}

# status_lines FILE N: FILE holds at least N status lines (the client's, once
# a second: --status, as its stderr is a file)
status_lines() {
	[ "$(grep -c samples "$1")" -ge "$2" ]
}

# a route that makes the kernel answer the client from a second address,
# added three times mid-run: each time the reflector must name the pinged
# address again at once, or the client's connected socket drops the pongs
test_route_change() {
	local i lost recv
	ip -n "$NS_B" addr add 10.231.0.3/24 dev "$VETH_B"
	reflector_or "route change" rc --port 12504 --once || return
	emit_bg rc --port 12504 --interval 1000 -d 8 --status --json "$WORK/rc.json"
	for i in 1 2 3; do
		wait_for 10 status_lines "$WORK/rc.err" $((2 * i - 1))
		# Not a wait for a condition: half a second after a status line is half-way
		# between two of the once-a-second probes an in-loop design makes (they
		# follow the session's start as the client's status lines do)
		sleep 0.5
		ip -n "$NS_B" route add "$ADDR_A/32" dev "$VETH_B" src 10.231.0.3
		wait_for 10 status_lines "$WORK/rc.err" $((2 * i))
		ip -n "$NS_B" route del "$ADDR_A/32" dev "$VETH_B" src 10.231.0.3
	done
	wait_exit "$EMIT_PID" 15
	wait_reflector
	ip -n "$NS_B" addr del 10.231.0.3/24 dev "$VETH_B"
	lost=$(json_get "$WORK/rc.json" packets.lost 2>/dev/null)
	recv=$(json_get "$WORK/rc.json" packets.received 2>/dev/null)
	# at 1 ms a ping, a probe once a second loses ~500 pongs a change; the watch none or a few
	check "route change: the client ran (exit 0, over 4000 pongs)" test "$WAIT_RC" = 0 -a "${recv:-0}" -gt 4000
	check "route change: at most 150 pongs lost over 3 changes of source (lost ${lost:-?})" \
		test "${lost:-9999}" -le 150
}

# ------------------------------------------ the helper threads' file tables

# The helper threads (the status line, the source watch) keep file tables of
# their own: while a second task shares the loop's table, the kernel takes
# and drops a reference to the file in every system call of the loop
# (fdget); and a copy must not keep a socket the loop closes (a session's
# own, bound and connected, would go on taking its peer's datagrams). Seen
# in /proc while a session runs: the session's own socket is in the loop's
# table and in no helper's, and no helper holds one of the loop's UDP
# sockets (the source watch holds its netlink socket).
sock_inodes() { # PID TID: the socket inodes of one task's file table
	local f
	for f in /proc/"$1"/task/"$2"/fd/*; do
		readlink "$f" 2>/dev/null
	done | sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p' | sort -n | tr '\n' ' '
}
ss_inode() { # NS PORT: the inode of the connected UDP socket on PORT
	ip netns exec "$1" ss -Hune state established "sport = :$2" 2>/dev/null |
		sed -n 's/.* ino:\([0-9]*\).*/\1/p' | head -n 1
}
has_ss_inode() { [ -n "$(ss_inode "$1" "$2")" ]; }
udp_inodes() { # NS PORT: the inodes of every UDP socket on PORT
	ip netns exec "$1" ss -Huane "sport = :$2" 2>/dev/null | sed -n 's/.* ino:\([0-9]*\).*/\1/p' | tr '\n' ' '
}
test_own_files() {
	local rpid t ino udp mine helpers=0 holding=0
	reflector of --port 12504 --once || { not_ok "own files: reflector did not start"; return; }
	rpid=$REFLECTOR_PID
	emit_bg ofc --port 12504 -q -d 600 --interval 1000
	if ! wait_for 30 has_ss_inode "$NS_B" 12504; then
		not_ok "own files: the session's own socket (a connected UDP socket on port 12504)"
		kill -INT "$EMIT_PID" 2>/dev/null
		return
	fi
	ino=$(ss_inode "$NS_B" 12504)
	udp=$(udp_inodes "$NS_B" 12504)
	check "own files: the loop's table holds the session's own socket ($ino)" \
		grep -qw "$ino" <<<"$(sock_inodes "$rpid" "$rpid")"
	for t in /proc/"$rpid"/task/*; do
		t=${t##*/}
		[ "$t" = "$rpid" ] && continue
		helpers=$((helpers + 1))
		mine=$(sock_inodes "$rpid" "$t")
		for i in $udp; do
			grep -qw "$i" <<<"$mine" && holding=$((holding + 1))
		done
	done
	kill -INT "$EMIT_PID"
	wait_exit "$EMIT_PID" 15
	wait_reflector
	check "own files: the reflector runs its helper threads (the status line, the source watch: $helpers)" \
		test "$helpers" -ge 2
	expect_eq "own files: no helper's table holds a UDP socket of the loop's (of $udp)" "$holding" 0
}

main() {
	need_root "net-window"
	if ! ns_setup; then
		skip "net-window: cannot create namespaces"
		finish
		exit 0
	fi
	test_first_rows
	test_start_mark_order
	test_session_socket
	test_own_files
	test_route_change
	finish
}

main "$@"
