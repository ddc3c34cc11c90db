#!/bin/bash
# shellcheck disable=SC2034 # the *_RC results are read by the suites
# Shared library of rant's integration tests (sourced, never run).
#
# Each test script sources this file, calls the helpers below and ends with
# `finish`.  Every suite speaks TAP: "ok N - name", "not ok N - name",
# "ok N - # SKIP why", comments "# ...", and the plan "1..N" at the end;
# tests/run.sh and .ci/run count those lines with tap_count.  Network tests
# run in throwaway namespaces joined by a veth pair, torn down by an EXIT
# trap; the names carry the PID so that parallel runs and leftovers never
# collide.

: "${RANT:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/rant}"
# the Python helpers import rant's wire format (build/rantwire.py, made from
# rant.c by tests/wire-gen.c: make builds it) instead of typing it again
RANT_WIRE_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/build"
export PYTHONPATH="$RANT_WIRE_DIR${PYTHONPATH:+:$PYTHONPATH}"
: "${TMPDIR:=/tmp}"

PASS=0
FAIL=0
SKIP=0
TESTNUM=0

ok() {
	TESTNUM=$((TESTNUM + 1))
	PASS=$((PASS + 1))
	echo "ok $TESTNUM - $*"
}

not_ok() {
	TESTNUM=$((TESTNUM + 1))
	FAIL=$((FAIL + 1))
	echo "not ok $TESTNUM - $*"
}

skip() {
	TESTNUM=$((TESTNUM + 1))
	SKIP=$((SKIP + 1))
	echo "ok $TESTNUM - # SKIP $*"
}

# check "name" command...: passes when the command succeeds
check() {
	local name=$1
	shift
	if "$@"; then
		ok "$name"
	else
		not_ok "$name"
		# a pattern that was (or was not) in a file: what the file holds
		case $1 in
		has | hasnt | hasf)
			echo "#   $2, looked for: $3"
			sed 's/^/#     /' "$2" 2>/dev/null | head -n 20
			;;
		esac
	fi
}

# expect_eq "name" actual expected
expect_eq() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		not_ok "$1 (got '$2', expected '$3')"
	fi
}

# finish: the TAP plan, a closing count for people, the exit status
finish() {
	echo "1..$TESTNUM"
	echo "# $PASS passed, $FAIL failed, $SKIP skipped"
	[ "$FAIL" -eq 0 ]
}

# tap_count FILE: "PASSED FAILED SKIPPED", counted from the TAP lines of FILE
# (a suite's output, or several suites' one after the other)
tap_count() {
	local p f s
	s=$(grep -cE '^ok [0-9]* ?- # SKIP' "$1")
	p=$(grep -cE '^ok\b' "$1")
	f=$(grep -cE '^not ok\b' "$1")
	echo "$((p - s)) $f $s"
}

# tap_failures FILE: each "not ok" line of FILE with the "#" lines that
# follow it (at most 12), indented, so that a summary at the end of a long
# log shows what failed and why without being counted again
tap_failures() {
	awk '/^not ok/ { n = 13 } /^not ok/ || (n > 0 && /^#/) { if (n-- > 0) print "   " $0; next } { n = 0 }' "$1"
}

# tap_plan_ok FILE: FILE's plan "1..N" is there and N is its number of tests
tap_plan_ok() {
	local p f s
	read -r p f s < <(tap_count "$1")
	grep -qx "1\.\.$((p + f + s))" "$1"
}

# now_us: the wall clock in microseconds
now_us() {
	echo "${EPOCHREALTIME//[!0-9]/}"
}

# wait_for SECONDS command...: poll the command every 50 ms until it
# succeeds, for at most SECONDS of wall time (a deadline: generous ones cost
# nothing while the test passes); a TAP comment says when it gave up
wait_for() {
	local end=$((${EPOCHREALTIME//[!0-9]/} + $1 * 1000000))
	shift
	until "$@" 2>/dev/null; do
		if [ "${EPOCHREALTIME//[!0-9]/}" -ge "$end" ]; then
			echo "# gave up waiting for: $*"
			return 1
		fi
		sleep 0.05
	done
}

# The TAP part ends here: a suite with a harness of its own (the config
# tests, the guest lab's tests/vm/guest.sh) sources this file with
# TAP_ONLY=1 and gets just the above.
[ -z "${TAP_ONLY:-}" ] || return 0

NS_A="rantA$$"
NS_B="rantB$$"
ADDR_A=10.231.0.1
ADDR_B=10.231.0.2
ADDR6_A=fd00:231::1
ADDR6_B=fd00:231::2
VETH_A="vrA$$"
VETH_B="vrB$$"
WORK=$(mktemp -d "$TMPDIR/rant-test.XXXXXX")
BG_PIDS=()

# python3 is the interpreter itself, not a version manager's shim in front
# of it (pyenv's costs half a second a call on a loaded host; the suites
# make hundreds): the same python, from $WORK/bin, first in PATH
PY_EXE=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
if [ -n "$PY_EXE" ] && [ "$(command -v python3)" != "$PY_EXE" ]; then
	mkdir -p "$WORK/bin" && ln -s "$PY_EXE" "$WORK/bin/python3" && PATH=$WORK/bin:$PATH
fi

# LeakSanitizer stops the world with ptrace, which strace already holds: a
# sanitizer build run under strace goes without its leak check (it would
# exit 1; the other cases run the same paths with it).  "${STRACE_ENV[@]}"
# before strace.
STRACE_ENV=()
[ -n "${ASAN_OPTIONS:-}" ] && STRACE_ENV=(env "ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0")

is_root() {
	[ "$(id -u)" -eq 0 ]
}

# need_root "why": skip the whole script (exit 0) when not root
need_root() {
	if ! is_root; then
		skip "$1: needs root for network namespaces"
		finish
		exit 0
	fi
}

cleanup() {
	local p
	for p in "${BG_PIDS[@]}"; do
		kill -9 "$p" 2>/dev/null
	done
	wait 2>/dev/null
	if [ -n "${TFS:-}" ]; then
		rmdir "$TFS/instances/$INST" 2>/dev/null
		umount "$TFS" 2>/dev/null
		rmdir "$TFS" 2>/dev/null
	fi
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

# Two namespaces joined by a veth pair, IPv4 and IPv6 (no DAD wait).
ns_setup() {
	ip netns add "$NS_A" && ip netns add "$NS_B" || return 1
	ip link add "$VETH_A" netns "$NS_A" type veth peer name "$VETH_B" netns "$NS_B" || return 1
	ip -n "$NS_A" addr add "$ADDR_A/24" dev "$VETH_A"
	ip -n "$NS_B" addr add "$ADDR_B/24" dev "$VETH_B"
	ip -n "$NS_A" addr add "$ADDR6_A/64" dev "$VETH_A" nodad
	ip -n "$NS_B" addr add "$ADDR6_B/64" dev "$VETH_B" nodad
	ip -n "$NS_A" link set lo up
	ip -n "$NS_B" link set lo up
	ip -n "$NS_A" link set "$VETH_A" up
	ip -n "$NS_B" link set "$VETH_B" up
	wait_for 30 link_up "$NS_A" "$VETH_A" && wait_for 30 link_up "$NS_B" "$VETH_B"
}

link_up() {
	ip -n "$1" -o link show "$2" 2>/dev/null | grep -q 'state UP'
}

in_a() { ip netns exec "$NS_A" "$@"; }
in_b() { ip netns exec "$NS_B" "$@"; }

# udp_listening NS PORT: a UDP socket is bound to PORT in NS
udp_listening() {
	ip netns exec "$1" ss -Hlun "sport = :$2" 2>/dev/null | grep -q .
}

# reflector NAME [rant options...]: start a reflector in NS_B, wait until it listens.
# Its stdout/stderr go to $WORK/NAME.out/.err; its pid is in REFLECTOR_PID.
reflector() {
	local name=$1
	shift
	ip netns exec "$NS_B" "$RANT" -i "$VETH_B" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	REFLECTOR_PID=$!
	BG_PIDS+=("$REFLECTOR_PID")
	wait_for 30 listening_or_gone "$NS_B" "$(port_of "$@")" "$REFLECTOR_PID" &&
		udp_listening "$NS_B" "$(port_of "$@")"
}

listening_or_gone() { # NS PORT PID
	udp_listening "$1" "$2" || ! kill -0 "$3" 2>/dev/null
}

# reflector_or LABEL NAME [rant options...]: reflector, and a failed test
# "LABEL: reflector listens" (status 1) when it does not
reflector_or() {
	local label=$1
	shift
	reflector "$@" && return 0
	not_ok "$label: reflector listens"
	return 1
}

port_of() { # rant options...: the UDP port they make it use
	local p=12345
	while [ $# -gt 0 ]; do
		case $1 in
		--port) p=$2 ;;
		--ptp-probe) p=319 ;;	# PTP event messages: 319 is the only port
		esac
		shift
	done
	echo "$p"
}

# emit NAME [rant options...]: run a client in NS_A against NS_B, wait for it.
# Sets EMIT_RC; output in $WORK/NAME.out/.err.
emit() {
	local name=$1
	shift
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	EMIT_RC=$?
}

# json_get FILE EXPR: a value from a JSON file (python3, present on Debian)
json_get() {
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d=d[k] if not isinstance(d,list) else d[int(k)]
print(json.dumps(d) if isinstance(d,(dict,list,bool)) or d is None else d)' "$1" "$2"
}

# report_field FILE FIELD: a number from the report's "Packets:" / MIN line
report_field() {
	case $2 in
	MIN | MAX | AVG) sed -n "s/.*$2: \([0-9-]*\) ns.*/\1/p" "$1" | head -1 ;;
	samples) sed -n 's/.*Total Samples: \([0-9]*\).*/\1/p' "$1" | head -1 ;;
	*) sed -n "s/^Packets:.* $2 \([0-9]*\).*/\1/p" "$1" | head -1 ;;
	esac
}

# emit_bg NAME [rant options...]: a client in NS_A in the background.  ip
# itself, not the in_a function: $! must be rant's pid (ip execs it), not a
# subshell's, for the signals the tests send.  Sets EMIT_PID.
emit_bg() {
	local name=$1
	shift
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	EMIT_PID=$!
	BG_PIDS+=("$EMIT_PID")
}

# What every suite's python checks may use: t() prints one check's verdict,
# load() reads a JSON file, rows() the data rows of a rant log (text or csv)
# as dicts keyed by column name.
PY_LIB='
import json, os, re, sys
def t(name, cond, detail=""):
    print(("ok\t" if cond else "not ok\t") + name + ("" if cond or not detail else " (" + str(detail) + ")"))
def load(p):
    return json.load(open(p, "rb"))
def rows(p):
    out, cols, csv = [], None, False
    for line in open(p):
        line = line.rstrip("\n")
        if line.startswith("#"):
            csv = True
            continue
        if not line or (cols and not csv and line.startswith("-")):
            continue
        v = line.split(",") if csv or "," in line else line.split()
        if cols is None:
            cols, csv = v, csv or "," in line
            continue
        out.append(dict(zip(cols, v)))
    return out
'

# verdicts LABEL: lines "ok<TAB>name" or "not ok<TAB>name (detail)" on
# stdin, each a test of its own; other lines become comments
verdicts() {
	local line
	while IFS= read -r line; do
		case $line in
		"ok	"*) ok "$1: ${line#ok	}" ;;
		"not ok	"*) not_ok "$1: ${line#not ok	}" ;;
		"") ;;
		*) echo "# $line" ;;
		esac
	done
}

# py_checks LABEL CODE ARGS...: run python checks (PY_LIB, then the script's
# PY_PRELUDE first) that print verdict lines (see verdicts)
py_checks() {
	local label=$1 code=$2 out rc
	shift 2
	out=$(python3 -c "$PY_LIB${PY_PRELUDE:-}$code" "$@" 2>&1)
	rc=$?
	verdicts "$label" <<<"$out"
	[ "$rc" -eq 0 ] || not_ok "$label: python checks failed to run (exit $rc)"
}

not_running() {
	! kill -0 "$1" 2>/dev/null
}

# show NAME: the output of a failed run, as TAP comments
show() {
	sed 's/^/#   /' "$WORK/$1.err" "$WORK/$1.out" 2>/dev/null | head -n 30
}

# expect_exit LABEL NAME CODE: WAIT_RC (wait_exit's) is CODE; if not, the
# output of the run NAME is shown
expect_exit() {
	expect_eq "$1" "$WAIT_RC" "$3"
	[ "$WAIT_RC" = "$3" ] || show "$2"
}

# expect_rc NAME CODE: the last emit's exit status, its output shown if wrong
expect_rc() {
	expect_eq "$1: exit status" "$EMIT_RC" "$2"
	[ "$EMIT_RC" = "$2" ] || show "$1"
}

# ------------------------------------------- helpers more than one suite uses

# host_lock NAME: wait (up to 10 minutes) for the host-wide lock NAME and
# hold it until host_unlock NAME or the end of the suite.  For what every
# run of these tests on this host shares, whichever checkout it comes from:
# the tracefs instance "rant" (-T's default), the hugepage pool.  Processes
# started meanwhile inherit it: they must be gone before host_unlock.
declare -A HOST_LOCKS=()
host_lock() {
	local fd
	exec {fd}>>"/tmp/rant-tests-$1.lock" || return 1
	if ! flock -w 600 "$fd"; then
		exec {fd}>&-
		return 1
	fi
	HOST_LOCKS[$1]=$fd
}

host_unlock() {
	local fd=${HOST_LOCKS[$1]:-}
	[ -z "$fd" ] || exec {fd}>&-
	unset "HOST_LOCKS[$1]"
}

# gone PID: exited (a zombie counts: kill -0 still succeeds on those)
gone() {
	local st

	st=$(ps -o stat= -p "$1") || return 0
	[[ $st == Z* ]]
}

# delivered PID SIG: signal number SIG is no longer pending for PID (its
# handler has run), or PID is gone
delivered() {
	local k v
	while read -r k v; do
		case $k in
		SigPnd: | ShdPnd:) [ $((16#$v & (1 << ($2 - 1)))) -eq 0 ] || return 1 ;;
		esac
	done <"/proc/$1/status" 2>/dev/null
	return 0
}

# reap PID: its exit status, in RC
reap() {
	wait "$1"
	RC=$?
}

# wait_exit PID SECONDS: wait for a background process, its status in
# WAIT_RC ("timeout" if it was still running; it is then killed)
wait_exit() {
	if ! wait_for "$2" gone "$1"; then
		kill -9 "$1" 2>/dev/null
		{ wait "$1"; } 2>/dev/null
		WAIT_RC=timeout
		return 1
	fi
	{ wait "$1"; } 2>/dev/null
	WAIT_RC=$?
}

# wait_reflector: the reflector in REFLECTOR_PID ends by itself within 30 s;
# its status in REFLECTOR_RC ("timeout" if not)
wait_reflector() {
	REFLECTOR_RC=timeout
	if wait_for 30 gone "$REFLECTOR_PID"; then
		wait "$REFLECTOR_PID"
		REFLECTOR_RC=$?
	fi
}

# stop_reflector: SIGINT the reflector started last and wait for it (-9
# after 30 s); its status in RC
stop_reflector() {
	kill -INT "$REFLECTOR_PID" 2>/dev/null
	wait_for 30 gone "$REFLECTOR_PID" || kill -9 "$REFLECTOR_PID" 2>/dev/null
	reap "$REFLECTOR_PID" 2>/dev/null
}

# analyze NAME LOG... [options]: rant --analyze; ANALYZE_RC, $WORK/NAME.out/.err
analyze() {
	local name=$1
	shift
	"$RANT" --analyze "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	ANALYZE_RC=$?
}

# jget FILE KEY: a JSON value, or "missing"
jget() {
	json_get "$1" "$2" 2>/dev/null || echo missing
}

# session_id NAME: the session the reflector NAME announced on stderr
session_id() {
	sed -n 's/^rant: session \(0x[0-9a-f]*\) started.*/\1/p' "$WORK/$1.err" | head -n 1
}

# client_port PID: the local UDP port of the client PID (talking to ADDR_B)
client_port() {
	in_a ss -Hunp "dst $ADDR_B:12345" 2>/dev/null | grep "pid=$1," |
		awk '{ for (i = 1; i <= NF; i++) if ($i ~ /:[0-9]+$/) { sub(/.*:/, "", $i); print $i; exit } }'
}

has_client_port() {
	[ -n "$(client_port "$1")" ]
}

# has FILE REGEX / hasnt FILE REGEX: an extended regex matches a line of FILE
has() {
	grep -Eq -- "$2" "$1"
}

hasnt() {
	! grep -Eq -- "$2" "$1"
}

# hasf FILE TEXT: a line of FILE holds TEXT, a fixed string (a table row)
hasf() {
	grep -qF -- "$2" "$1"
}

# not_grep GREP-ARGS...: grep finds nothing
not_grep() {
	! grep -q "$@"
}

# udp_stat NS FIELD: a counter of the Udp: line of /proc/net/snmp in NS
# shellcheck disable=SC2016 # an awk program
udp_stat() {
	ip netns exec "$1" awk -v f="$2" '/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 } else { print $c[f] } }' /proc/net/snmp
}

# tc_drop_tos LABEL NS DEV TOS: DEV's egress in NS drops the datagrams of
# TOS (htb, a pfifo of limit 0 for them, a u32 filter); where tc cannot,
# a skip naming LABEL and status 1
tc_drop_tos() {
	local label=$1 ns=$2 dev=$3 tos=$4
	if ! { ip netns exec "$ns" tc qdisc add dev "$dev" root handle 1: htb default 1 &&
		ip netns exec "$ns" tc class add dev "$dev" parent 1: classid 1:1 htb rate 10gbit &&
		ip netns exec "$ns" tc class add dev "$dev" parent 1: classid 1:3 htb rate 10gbit &&
		ip netns exec "$ns" tc qdisc add dev "$dev" parent 1:3 handle 30: pfifo limit 0 &&
		ip netns exec "$ns" tc filter add dev "$dev" parent 1: protocol ip prio 1 u32 \
			match ip tos "$tos" 0xff flowid 1:3; } 2>"$WORK/tc.err"; then
		skip "$label: tc htb/pfifo/u32 not available ($(head -1 "$WORK/tc.err"))"
		ip netns exec "$ns" tc qdisc del dev "$dev" root 2>/dev/null
		return 1
	fi
}

# udp_count NS FIELD: a counter of NS's UDP, IPv4 and IPv6 together
# (InDatagrams, OutDatagrams: what was delivered to a socket, what was sent)
# shellcheck disable=SC2016 # an awk program
udp_count() {
	ip netns exec "$1" awk -v f="$2" '
		/^Udp:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 } else { n += $c[f] } }
		$1 == "Udp6" f { n += $2 }
		END { print n + 0 }' /proc/net/snmp /proc/net/snmp6
}

udp_reaches() { # NS FIELD N
	[ "$(udp_count "$1" "$2")" -ge "$3" ]
}

# udp_wait NS FIELD N [SECONDS]: wait (30 s at most) until NS has sent
# (OutDatagrams) or received (InDatagrams) N more UDP datagrams than now:
# how a test knows that pings or pongs really went out, without sleeping
udp_wait() {
	local base
	base=$(udp_count "$1" "$2")
	wait_for "${4:-30}" udp_reaches "$1" "$2" $((base + $3))
}

# A reflector that answers one client after another (its name in
# SHARED_REFLECTOR) closes a session before it takes the next: a client
# whose last FIN never reached it (lost, or the client killed) leaves that
# to the idle timeout, and one that came meanwhile would be told BUSY.  remit NAME [options]: emit, once it has
# closed every session so far (SHARED_SESSIONS counts them).
SHARED_SESSIONS=0
remit() {
	shared_settle
	emit "$@"
	shared_count "$EMIT_RC"
}

shared_settle() {
	wait_for 30 sessions_closed "$SHARED_REFLECTOR" "$SHARED_SESSIONS"
}

shared_count() { # EXIT-STATUS of a client: 0 and 3 made a session
	case $1 in 0 | 3) SHARED_SESSIONS=$((SHARED_SESSIONS + 1)) ;; esac
}

sessions_closed() { # NAME N: reflector NAME has reported N sessions complete
	[ "$(grep -c '^Session 0x[0-9a-f]* is complete' "$WORK/$1.out")" -ge "$2" ]
}

# jsess FILE N KEY: KEY of the Nth JSON object of a reflector's --json FILE
# (one object per session); "count" = how many
jsess() {
	python3 -c 'import json,sys
t=open(sys.argv[1]).read(); d=json.JSONDecoder(); objs=[]; i=0
while True:
    while i < len(t) and t[i].isspace(): i+=1
    if i >= len(t): break
    o,i=d.raw_decode(t,i); objs.append(o)
if sys.argv[3] == "count": print(len(objs)); sys.exit(0)
o=objs[int(sys.argv[2])]
for k in sys.argv[3].split("."): o=o[k] if not isinstance(o, list) else o[int(k)]
print(json.dumps(o) if isinstance(o, (dict, list)) or o is None else o)' "$1" "$2" "$3" 2>/dev/null || echo missing
}

# sessions FILE N: the reflector's --json FILE holds N sessions (evaluated at
# each call: for wait_for, whose arguments are expanded once)
sessions() {
	[ "$(jsess "$1" 0 count)" = "$2" ]
}

# udp_drained PID PORT: the UDP socket on PORT of process PID has read every
# datagram it was sent.  Its receive queue as /proc/net/udp counts it holds
# its error queue too (TX stamps not yet read): a duplicate of the socket
# (pidfd_getfd, root) is asked what the next datagram's length is (FIONREAD).
udp_drained() {
	python3 - "$1" "$2" <<'PY'
import ctypes, fcntl, os, struct, sys, termios
pid, port = int(sys.argv[1]), int(sys.argv[2])
inodes = set()
for f in ("udp", "udp6"):
    for line in open("/proc/%d/net/%s" % (pid, f)).read().splitlines()[1:]:
        v = line.split()
        if int(v[1].rsplit(":", 1)[1], 16) == port:
            inodes.add(v[9])
syscall = ctypes.CDLL(None, use_errno=True).syscall
pidfd, waiting = os.pidfd_open(pid), 0
for fd in os.listdir("/proc/%d/fd" % pid):
    try:
        link = os.readlink("/proc/%d/fd/%s" % (pid, fd))
    except OSError:
        continue
    if link[8:-1] in inodes and link.startswith("socket:["):
        mine = syscall(438, pidfd, int(fd), 0)      # pidfd_getfd
        if mine < 0:
            sys.exit(2)
        waiting += struct.unpack("i", fcntl.ioctl(mine, termios.FIONREAD, bytes(4)))[0]
        os.close(mine)
sys.exit(1 if waiting or not inodes else 0)
PY
}

# busy_second LABEL R C1 C2 INTERVAL [options of C2...]: reflector R
# (--once, JSON in $WORK/R.json) serves client C1 (pings INTERVAL us apart)
# while client C2 asks for a session of its own: C2 is told the reflector
# is busy.  Then C1 is stopped (SIGINT) and waited for (its status in RC,
# C2's in EMIT_RC); the reflector is left to the caller.  Fails when R
# does not start.
busy_second() {
	local label=$1 r=$2 c1=$3 c2=$4 iv=$5 first
	shift 5
	if ! reflector "$r" --once --json "$WORK/$r.json"; then
		not_ok "$label: reflector did not start"
		return 1
	fi
	emit_bg "$c1" -q -d 600 --interval "$iv" --json "$WORK/$c1.json"
	first=$EMIT_PID
	wait_for 30 grep -q 'session 0x' "$WORK/$r.err"
	emit "$c2" -q "$@" --json "$WORK/$c2.json"
	check "$label: says the reflector is busy" grep -q "reflector $ADDR_B port 12345 is busy" "$WORK/$c2.err"
	kill -INT "$first"
	reap "$first"
}

# need_setup WHO TARGET: for the scripts that are no test suite (make demo,
# make soak): as root, rant built, the namespaces up; or one line on stderr
# and exit 1
need_setup() {
	if ! is_root; then
		echo "$1: needs root (it creates network namespaces and a veth pair): sudo make $2" >&2
		exit 1
	fi
	if [ ! -x "$RANT" ]; then
		echo "$1: $RANT is not built: run make" >&2
		exit 1
	fi
	if ! ns_setup; then
		echo "$1: could not create the namespaces and the veth pair" >&2
		exit 1
	fi
}

# tracefs_instance: a tracefs of the suite's own (mounted at $WORK/tracefs,
# in TFS) with the instance INST in it, removed again by cleanup; fails
# where tracefs cannot be mounted or the instance made
tracefs_instance() {
	TFS="$WORK/tracefs"
	mkdir -p "$TFS"
	mount -t tracefs nodev "$TFS" 2>/dev/null && mkdir "$TFS/instances/$INST" 2>/dev/null
}

# variant WHO SPEC: one word of a benchmark's VARIANTS, "name=/path/to/rant",
# split into VARIANT_NAME and VARIANT_PATH; anything else exits 1 with WHO's line
variant() {
	VARIANT_NAME=${2%%=*}
	VARIANT_PATH=${2#*=}
	if [ ! -x "$VARIANT_PATH" ] || [ "$VARIANT_NAME" = "$2" ]; then
		echo "$1: VARIANTS: '$2' is not name=/path/to/executable" >&2
		exit 1
	fi
}
