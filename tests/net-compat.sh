#!/bin/bash
# Drop-in for the earlier rant: every command line of its two READMEs and
# both of crucible's bench-rant invocations run unchanged on a veth pair
# (interfaces, addresses, namespaces, CPUs substituted; durations and
# warm-ups shortened), with the earlier meaning; the lines bench-rant's
# post-processing reads parse from both sides' output and agree with
# --json; the earlier tool's later flags (-N -R -F -2) do what they say.
#
#   sudo bash tests/net-compat.sh        (RANT=path overrides the binary)
#
# The script re-runs itself in a private mount namespace so that it can
# mount tracefs for the README's --trace-marker lines without touching the
# host's mounts.

if [ "$(id -u)" -eq 0 ] && [ -z "${RANT_COMPAT_PRIVATE:-}" ] && command -v unshare >/dev/null; then
	RANT_COMPAT_PRIVATE=1 exec unshare -m --propagation private bash "$0" "$@"
fi

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

TRACEFS=/sys/kernel/tracing
PARSE="$(dirname "$0")/net-compat.d/benchparse.py"
MADE_INSTANCE=0
HUGE=/proc/sys/vm/nr_hugepages
HUGE_OLD=
: "${DUR:=3}"

# the python half of the checks reports like ok/not_ok (see py_checks)

compat_cleanup() {
	cleanup
	[ "$MADE_INSTANCE" = 1 ] && rmdir "$TRACEFS/instances/rant" 2>/dev/null
	[ -n "$HUGE_OLD" ] && echo "$HUGE_OLD" >"$HUGE"
}

hugepages_free() {
	sed -n 's/^HugePages_Free: *//p' /proc/meminfo
}
trap compat_cleanup EXIT

# Substitutions in the earlier READMEs' lines: the server port's namespace,
# interface and address are NS_B/VETH_B/ADDR_B, the client's NS_A/VETH_A;
# CPUs 61 and 51 are 0 and 1 (this host has two).
CPU_S=0
CPU_C=1
[ "$(nproc)" -lt 2 ] && CPU_C=0

# run_bg NAME command...: a background process, output to NAME.out/.err
run_bg() {
	local name=$1
	shift
	"$@" >"$WORK/$name.out" 2>"$WORK/$name.err" &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

# run_fg NAME command...: run to the end (killed after 120 s: a test never
# hangs); RC is its status
run_fg() {
	local name=$1
	shift
	timeout -k 5 120 "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	RC=$?
}

# wait_rc PID SECONDS: wait for a background process (killed if it outlives
# SECONDS: a test never hangs); WAIT_RC its status
wait_rc() {
	wait_for "$2" not_running "$1" || kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	WAIT_RC=$?
}

# stop_term PID: SIGTERM as bench-rant stops its server; WAIT_RC its status
stop_term() {
	kill -TERM "$1" 2>/dev/null
	wait_rc "$1" 30
}

listening_b() { wait_for 30 udp_listening "$NS_B" 12345; }

field() { report_field "$@"; }

trace_ready() {
	if [ ! -d "$TRACEFS/instances" ]; then
		mount -t tracefs nodev "$TRACEFS" 2>/dev/null || return 1
	fi
	if [ ! -d "$TRACEFS/instances/rant" ]; then
		mkdir "$TRACEFS/instances/rant" || return 1
		MADE_INSTANCE=1
	fi
}

snapshot_ok() {
	[ -e "$TRACEFS/instances/rant/snapshot" ]
}

# ------------------------------------------------------- the older README
test_older_readme() {
	local spid
	run_bg o_srv ip netns exec "$NS_B" taskset --cpu-list "$CPU_S" chrt -f 2 "$RANT" --interface "$VETH_B" --threshold 100000 --sw-timestamps
	spid=$BG_PID
	listening_b
	# timeout signals rant and its process group at once: one SIGINT each
	run_fg o_cli ip netns exec "$NS_A" timeout -k 3s --signal=SIGINT "${DUR}s" taskset -c "$CPU_C" chrt -f 2 "$RANT" --interface "$VETH_A" --address "$ADDR_B" --threshold 100000 --sw-timestamps
	if grep -q '^Stopped by: \(peer_\)\?threshold$' "$WORK/o_cli.out"; then
		# a host so loaded (the sanitizer builds beside the guest lab) that a
		# transaction took over the command's 100 ms: rant stops on it, exit
		# 3 (or timeout's 124, its SIGINT coming as rant ends)
		# shellcheck disable=SC2016 # $1 is the inner shell's
		check "older README client: a loaded host breached 100 ms: stopped by it, exit 3 or 124 (got $RC)" \
			bash -c '[[ $1 == 3 || $1 == 124 ]]' _ "$RC"
		stop_term "$spid"
		skip "older README: the timeout and SIGINT checks (the run stopped on a breach first)"
		return
	fi
	expect_eq "older README client (timeout --signal=SIGINT): timed out, so timeout says 124" "$RC" 124
	check "older README client: report printed despite two SIGINTs" has "$WORK/o_cli.out" '^Test is complete\. Duration: [0-9.]+ s$'
	check "older README client: MIN/MAX/AVG/Total Samples line" \
		has "$WORK/o_cli.out" '^MIN: [0-9]+ ns \| MAX: [0-9]+ ns \| AVG: [0-9]+ ns \| Total Samples: [0-9]+$'
	check "older README client: samples > 0" [ "$(field "$WORK/o_cli.out" samples)" -gt 0 ]
	check "older README client: stopped by the signal" has "$WORK/o_cli.out" '^Stopped by: signal$'
	wait_for 30 has "$WORK/o_srv.out" '^Stopped by: fin$'
	stop_term "$spid"
	parse_note "older README client: timeout --signal=SIGINT ${DUR}s taskset chrt rant --interface --address --threshold 100000 --sw-timestamps" \
		"$RC" "$WORK/o_cli.out"
	parse_note "older README server: taskset chrt rant --interface --threshold 100000 --sw-timestamps (SIGTERM)" \
		"$WAIT_RC" "$WORK/o_srv.out"
	expect_eq "older README server: exits 0 on SIGTERM" "$WAIT_RC" 0
	check "older README server: 'Test is complete. Duration: X s'" has "$WORK/o_srv.out" '^Test is complete\. Duration: [0-9.]+ s$'
	check "older README server: --- Response Latency Statistics ---" has "$WORK/o_srv.out" '^--- Response Latency Statistics ---$'
	expect_eq "older README server: as many samples as the client had" \
		"$(field "$WORK/o_srv.out" samples)" "$(field "$WORK/o_cli.out" received)"
	check "older README server: no usage error" hasnt "$WORK/o_srv.err" 'rant: --'
}

# the newer README's usage line: ./rant --interface <iface> [OPTIONS]; --help
test_newer_usage() {
	run_fg usage "$RANT" --help
	parse_note "newer README: ./rant --help" "$RC" "$WORK/usage.out"
	expect_eq "newer README: --help exit 0" "$RC" 0
	check "  ... lists -i, --interface and every earlier option the README shows" \
		python3 -c '
import sys
t = open(sys.argv[1]).read()
sys.exit(not all(o in t for o in ("--interface", "--address", "--threshold", "--trace-marker", "--snapshot", "--duration",
                                  "--warmup", "--sw-timestamps", "--histogram", "--log", "--overflow", "--bucket-size",
                                  "--hugepages", "--budget", "--prefer-busypoll", "--verbose", "--help")))' "$WORK/usage.out"
}

# ------------------------------------------------------- the newer README
test_newer_quick() {
	local spid
	run_bg q_srv nsenter --net="/var/run/netns/$NS_B" "$RANT" -i "$VETH_B" -q
	spid=$BG_PID
	listening_b
	run_fg q_cli nsenter --net="/var/run/netns/$NS_A" taskset -c "$CPU_C" chrt -f 22 \
		"$RANT" -i "$VETH_A" -a "$ADDR_B" --warmup 1000 --duration "$DUR" --threshold 30
	# a 30 us threshold on a shared VM: a breach (exit 3) is as valid as none
	check "newer README quick test: exit 0, or 3 on a breach (got $RC)" test "$RC" = 0 -o "$RC" = 3
	if [ "$RC" = 3 ]; then
		check "quick test: breach opening line 'Round-Trip latency (N ns) exceeds threshold (30000 ns).'" \
			has "$WORK/q_cli.out" '^Round-Trip latency \([0-9]+ ns\) exceeds threshold \(30000 ns\)\.$'
		check "quick test: '<-- where the spike is' on the dominant segment" has "$WORK/q_cli.out" '<-- where the spike is$'
	else
		check "quick test: ran the duration" has "$WORK/q_cli.out" '^Stopped by: duration$'
	fi
	check "quick test: warm-up 1000 excluded and said so" \
		has "$WORK/q_cli.out" '^Warm-up: 1000 pings excluded \(-w 1000'
	stop_term "$spid"
	parse_note "newer README quick test client: nsenter taskset chrt rant -i -a --warmup --duration --threshold 30" \
		"$RC" "$WORK/q_cli.out"
	expect_eq "quick test: reflector exits 0 on SIGTERM" "$WAIT_RC" 0
}

# the newer README's "full test with all features", both sides; -T's
# instance is "rant", the same for every run on this host: under its lock
test_newer_full() {
	host_lock tracefs-rant
	newer_full
	if [ "$MADE_INSTANCE" = 1 ] && rmdir "$TRACEFS/instances/rant" 2>/dev/null; then
		MADE_INSTANCE=0
	fi
	host_unlock tracefs-rant
}

newer_full() {
	local spid snap=(--snapshot) note=""
	if ! trace_ready; then
		skip "newer README full test: tracefs instance 'rant' cannot be made here"
		return
	fi
	if ! snapshot_ok; then
		# rant refuses -S where the kernel cannot snapshot (exit 2, one line):
		# check that, then run the lines without --snapshot
		run_fg f_snap nsenter --net="/var/run/netns/$NS_B" "$RANT" -i "$VETH_B" --warmup 1000 --duration 1 \
			--threshold 100 --sw-timestamps --histogram --log "$WORK/response.txt" --trace-marker --snapshot
		expect_eq "full test, --snapshot on a kernel without snapshot support: exit 2" "$RC" 2
		expect_eq "  ... one line on stderr" "$(wc -l <"$WORK/f_snap.err")" 1
		check "  ... naming CONFIG_TRACER_SNAPSHOT" grep -q CONFIG_TRACER_SNAPSHOT "$WORK/f_snap.err"
		check "  ... log not created" [ ! -e "$WORK/response.txt" ]
		snap=()
		note=" (without --snapshot: no kernel support)"
	fi
	run_bg f_srv nsenter --net="/var/run/netns/$NS_B" taskset --cpu-list "$CPU_S" chrt -f 22 \
		"$RANT" -i "$VETH_B" --warmup 1000 --duration $((DUR + 3)) --threshold 100 --sw-timestamps \
		--histogram --log "$WORK/response.txt" --trace-marker "${snap[@]}" --json "$WORK/f_srv.json"
	spid=$BG_PID
	listening_b
	run_fg f_cli nsenter --net="/var/run/netns/$NS_A" taskset -c "$CPU_C" chrt -f 22 \
		"$RANT" -i "$VETH_A" -a "$ADDR_B" --warmup 1000 --duration "$DUR" --threshold 100 --sw-timestamps \
		--histogram --log "$WORK/roundtrip.txt" --trace-marker "${snap[@]}"
	check "full test client$note: exit 0, or 3 on a breach (got $RC)" test "$RC" = 0 -o "$RC" = 3
	check "full test client: start-up line 'Trace marker enabled ...'" \
		has "$WORK/f_cli.err" '^Trace marker enabled for kernel tracing integration$'
	if [ -n "${ASAN_OPTIONS:-}" ]; then
		# an ASan build does not lock its terabytes of shadow memory
		skip "full test client: 'Memory locked in RAM' (sanitizer build: no mlockall)"
	else
		check "full test client: start-up line 'Memory locked in RAM (mlockall successful)'" \
			has "$WORK/f_cli.err" '^Memory locked in RAM \(mlockall successful\)$'
	fi
	check "full test client: Histogram Summary block" has "$WORK/f_cli.out" '^Histogram Summary:$'
	check "full test client: log header as the earlier rant's" \
		has "$WORK/roundtrip.txt" '^SEQ T1_SW T1_KSW T4_KSW T4_SW RTT$'
	wait_rc "$spid" $((DUR + 30))
	parse_note "newer README full test client$note: --warmup --duration --threshold 100 --sw-timestamps --histogram --log --trace-marker --snapshot" \
		"$RC" "$WORK/f_cli.out"
	parse_note "newer README full test server$note: the same with --log response.txt" "$WAIT_RC" "$WORK/f_srv.out"
	check "full test server$note: -d ends it by itself, exit 0 or 3 (got $WAIT_RC)" test "$WAIT_RC" = 0 -o "$WAIT_RC" = 3
	check "full test server: 'Test is complete. Duration: X s'" has "$WORK/f_srv.out" '^Test is complete\. Duration: [0-9.]+ s$'
	check "full test server: Histogram Summary block" has "$WORK/f_srv.out" '^Histogram Summary:$'
	check "full test server: 'Samples   :' line" has "$WORK/f_srv.out" '^  Samples   :  [0-9]+$'
	check "full test server: 'Minimum   :  X us (#seq)'" has "$WORK/f_srv.out" '^  Minimum   :  [0-9]+\.[0-9]{2} us \(#[0-9]+\)$'
	check "full test server: '    50th    :  N (Median)'" has "$WORK/f_srv.out" '^    50th    :  [0-9]+ \(Median\)$'
	check "full test server: '   99.999th :  N' (':' in the column of the others)" has "$WORK/f_srv.out" '^   99\.999th :  [0-9]+$'
	check "full test server: start-up line 'Trace marker enabled ...'" \
		has "$WORK/f_srv.err" '^Trace marker enabled for kernel tracing integration$'
	check "full test server: log header as the earlier rant's" \
		has "$WORK/response.txt" '^SEQ T2_KSW T2_SW T3_SW T3_KSW RESPONSE$'
	py_checks "full test server" '
import json, sys
d = json.loads(open(sys.argv[1]).readline())  # JSON Lines: the first session
w = d["warmup_excluded"]
t("warm-up: 1000 excluded on the reflector", w["total"] == 1000, w)
t("warm-up: all flagged by the client (same -w both sides)", w["flagged_by_client"] == 1000 and w["by_reflector_w"] == 0, w)
' "$WORK/f_srv.json"
}

# two_sigints PID: SIGINT, 50 ms, SIGINT; prints how many ms after the
# first the second was seen delivered: the most its handler ran after the
# first's
two_sigints() {
	local t0
	t0=$(now_us)
	kill -INT "$1"
	sleep 0.05
	kill -INT "$1"
	wait_for 30 delivered "$1" 2 >/dev/null
	echo $((($(now_us) - t0) / 1000))
}

# ------------------------------------------- reflector -w: its own warm-up
test_reflector_warmup() {
	local spid rcvd
	run_bg w_srv ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -w 500 -q --json "$WORK/w_srv.json"
	spid=$BG_PID
	listening_b
	run_fg w_cli ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" -w 300 --count 2000 -q
	expect_eq "reflector -w 500, client -w 300 --count 2000: client exit" "$RC" 0
	wait_for 30 has "$WORK/w_srv.out" '^Stopped by: fin$'
	stop_term "$spid"
	expect_eq "reflector -w: exits 0 on SIGTERM" "$WAIT_RC" 0
	check "reflector -w: the report says how many and why" \
		has "$WORK/w_srv.out" '^Warm-up: 500 pings excluded: 300 flagged by the client.s -w, 200 more by this reflector.s -w 500'
	rcvd=$(field "$WORK/w_srv.out" received)
	expect_eq "reflector -w: samples = received - 500" "$(field "$WORK/w_srv.out" samples)" "$((${rcvd:-0} - 500))"
	expect_eq "reflector -w: client samples unaffected (2000)" "$(field "$WORK/w_cli.out" samples)" 2000
	check "client -w: the report says how many and why" has "$WORK/w_cli.out" '^Warm-up: 300 pings excluded \(-w 300'
	py_checks "reflector -w json" '
import json, sys
d = json.load(open(sys.argv[1]))
w = d["warmup_excluded"]
t("total 500 = 300 by the client + 200 by -w", (w["total"], w["flagged_by_client"], w["by_reflector_w"], w["w"]) == (500, 300, 200, 500), w)
t("packets.warmup = 500", d["packets"]["warmup"] == 500)
' "$WORK/w_srv.json"
}

# ------------------------------- SIGTERM during a session; -d with no client
test_reflector_stop() {
	local spid cpid gap
	run_bg t_srv ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -q
	spid=$BG_PID
	listening_b
	run_bg t_cli ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" -d 120 -q
	cpid=$BG_PID
	# mid-session: the reflector has answered 100 pings
	udp_wait "$NS_B" OutDatagrams 100
	stop_term "$spid"
	expect_eq "SIGTERM mid-session: reflector exits 0" "$WAIT_RC" 0
	check "SIGTERM mid-session: the session's report printed" has "$WORK/t_srv.out" '^Test is complete\. Duration: [0-9.]+ s$'
	check "SIGTERM mid-session: samples > 0" [ "$(field "$WORK/t_srv.out" samples)" -gt 0 ]
	check "SIGTERM mid-session: stopped by the signal" has "$WORK/t_srv.out" '^Stopped by: signal$'
	kill -INT "$cpid" 2>/dev/null
	wait_rc "$cpid" 30
	# two SIGINTs 50 ms apart (what timeout(1) does, but never coalesced by
	# the kernel): one request to stop, so the report is printed
	run_bg t2_srv ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -q
	spid=$BG_PID
	listening_b
	run_bg t2_cli ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" -d 120 -q
	cpid=$BG_PID
	udp_wait "$NS_B" OutDatagrams 100
	gap=$(two_sigints "$cpid")
	wait_rc "$cpid" 30
	if [ "$gap" -ge 400 ]; then
		# rant's rule is half a second: a host this loaded tests the other side of it
		skip "two SIGINTs 50 ms apart: the host delivered the second $gap ms after the first"
	else
		expect_eq "two SIGINTs 50 ms apart: exit 0" "$WAIT_RC" 0
		check "two SIGINTs 50 ms apart: the report is printed" has "$WORK/t2_cli.out" '^Test is complete\. Duration: [0-9.]+ s$'
	fi
	stop_term "$spid"
	run_fg d_srv ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -d 1 -H -q
	expect_eq "reflector -d 1, no client: exits 0 by itself" "$RC" 0
	check "reflector -d, no client: still 'Test is complete. Duration: X s'" \
		has "$WORK/d_srv.out" '^Test is complete\. Duration: 1\.[0-9]+ s$'
	check "reflector -d, no client: 'Total Samples: 0'" has "$WORK/d_srv.out" 'Total Samples: 0$'
	check "reflector -d, no client: says no client came" has "$WORK/d_srv.out" '^No session: no client came$'
}

# --------------------------- every earlier option accepted on the reflector
test_reflector_options() {
	local spid
	# -t -s -H -l -T -C -L -p -B -P -v -w -d (-S: see the full test; -G: needs hugepages)
	# -t 2 s: a threshold no loaded host's response reaches (the sanitizer builds included)
	run_bg ro_srv ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -t 2000000 -C -s -H -l "$WORK/ro.log" -L 0 \
		-p 50 -B 1 -P -v -w 100 -d 30 -o 100 -b 1 --json "$WORK/ro.json"
	spid=$BG_PID
	if ! listening_b; then
		not_ok "reflector with -t -C -s -H -l -L -p -B -P -v -w -d -o -b: did not start"
		show ro_srv
		return
	fi
	run_fg ro_cli ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --count 500 -q
	expect_eq "reflector with every earlier option: client exit" "$RC" 0
	wait_for 30 has "$WORK/ro_srv.out" '^Stopped by: fin$'
	stop_term "$spid"
	expect_eq "reflector with every earlier option: exit 0" "$WAIT_RC" 0
	check "  ... no usage error" hasnt "$WORK/ro_srv.err" '^rant: --'
	expect_eq "  ... -w 100 on top of the client's 0" "$(field "$WORK/ro_srv.out" samples)" 400
	check "  ... -o 100 -b 1: the earlier rant's 1 us buckets to 100 us" \
		python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["metrics"]["response"]["histogram"]; sys.exit(not (h["bucket_ns"]==1000 and h["bound_ns"]==100000))' "$WORK/ro.json"
	check "  ... the log was written" has "$WORK/ro.log" '^SEQ T2_KSW T2_SW T3_SW T3_KSW RESPONSE$'
}

# no_tx_traced LABEL STRACE: a side traced (recvmsg, recvmmsg, setsockopt)
# that asked for no TX stamp and read none
no_tx_traced() {
	expect_eq "$1: no TX stamp read (no receive on the error queue)" "$(grep -c 'MSG_ERRQUEUE' "$2")" 0
	check "$1: SO_TIMESTAMPING without TX flags" \
		python3 -c '
import re, sys
s = open(sys.argv[1]).read()
m = re.findall(r"SO_TIMESTAMPING\w*, \[([^\]]+)\]", s)
# strace prints the flags as a number or by name; TX_HARDWARE|TX_SOFTWARE = 3
ok = m and all((int(x) & 3) == 0 if x.isdigit() else "TX_" not in x for x in m)
sys.exit(0 if ok else 1)' "$2"
}

# rx_ioctl_traced LABEL STRACE SOCKETS: a --client-no-tx-ts client traced
# (also ioctl, recvfrom) read its pongs by recvfrom, never with their control
# data, and each datagram's stamp by one SIOCGSTAMPNS, after one per socket
# (SOCKETS) at set-up that found nothing read yet (ENOENT)
rx_ioctl_traced() {
	check "$1: pongs read by recvfrom, T4 by one SIOCGSTAMPNS each, one ENOENT per socket first" \
		python3 -c '
import re, sys
s = open(sys.argv[1]).read()
rf = len(re.findall(r"recvfrom\([0-9]+, \"RANT.* = [1-9][0-9]*$", s, re.M))
io = len(re.findall(r"SIOCGSTAMPNS\w*, [^)]*\) = 0$", s, re.M))
en = len(re.findall(r"SIOCGSTAMPNS\w*, [^)]*\) = -1 ENOENT", s, re.M))
rm = len(re.findall(r"recvmsg\([0-9]+, \{[^\n]*RANT", s))
ok = rf > 0 and io == rf and en == int(sys.argv[2]) and rm == 0
print("recvfrom %d, SIOCGSTAMPNS %d (+%d ENOENT), recvmsg of pongs %d" % (rf, io, en, rm), file=sys.stderr)
sys.exit(0 if ok else 1)' "$2" "$3"
}

# --client-no-tx-ts against a -N reflector: no TX stamp asked for or read on
# either side; the client's rtt is T4 wire - T1_SW, said so everywhere, and
# every row's value is that difference of its own stamps
test_client_no_tx() {
	local spid
	run_bg nc_srv ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -N --once
	spid=$BG_PID
	listening_b
	run_fg nc_cli ip netns exec "$NS_A" "${STRACE_ENV[@]}" strace -f -qq -e trace=recvmsg,recvmmsg,setsockopt,ioctl,recvfrom \
		-o "$WORK/nc_strace" "$RANT" -i "$VETH_A" -a "$ADDR_B" --client-no-tx-ts --count 300 -w 10 \
		--json "$WORK/nc.json" -l "$WORK/nc.csv" --log-format csv
	expect_eq "--client-no-tx-ts: client exit" "$RC" 0
	wait_rc "$spid" 30
	no_tx_traced "--client-no-tx-ts" "$WORK/nc_strace"
	rx_ioctl_traced "--client-no-tx-ts" "$WORK/nc_strace" 1
	check "--client-no-tx-ts: the report says the rtt is app-send based" \
		has "$WORK/nc_cli.out" '^RTT: T4 wire - T1_SW \(app send; --client-no-tx-ts: no TX stamps\), not wire-to-wire$'
	check "--client-no-tx-ts: the decomposition row is labelled so" \
		has "$WORK/nc_cli.out" '^rtt \(T4 wire-T1_SW, no TX stamps\) +300 '
	check "--client-no-tx-ts: never called wire-to-wire ('T4-T1 wire' absent)" hasnt "$WORK/nc_cli.out" 'rtt \(T4-T1 wire\)'
	check "--client-no-tx-ts: the missing T1 and T3 stamps, each side's by request" has "$WORK/nc_cli.out" \
		"^Missing stamps: T1_KSW 300; T3_KSW 300 \\(no TX stamps, by request: this client's --client-no-tx-ts and the reflector's -N\\)$"
	py_checks "--client-no-tx-ts json and log" '
import json, sys
from decimal import Decimal
d = json.load(open(sys.argv[1])); m = d["metrics"]; p = d["packets"]
t("tx_stamps false, rtt_basis app send", d["tx_stamps"] is False and d["rtt_basis"] == "app_send_T4_wire-T1_SW",
  (d["tx_stamps"], d["rtt_basis"]))
t("rtt samples = received - warm-up = 300", m["rtt"]["samples"] == p["received"] - p["warmup"] == 300,
  (m["rtt"]["samples"], p))
t("no metric that needs the T1 wire stamp", not {"client_tx_stack", "forward", "network"} & set(m), sorted(m))
t("no unmatched TX stamps", p["unmatched_tx_stamps"] == 0, p)
r, a = m["rtt"], m["app_rtt"]
rp, ap = r["percentiles_ns"], a["percentiles_ns"]
t("rtt: min <= p50 <= p99 <= max", r["min_ns"] <= rp["50"] <= rp["99"] <= r["max_ns"], r)
t("rtt <= app rtt at min, p50, p99 and max (T4 wire before T4_SW)",
  r["min_ns"] <= a["min_ns"] and rp["50"] <= ap["50"] and rp["99"] <= ap["99"] and r["max_ns"] <= a["max_ns"],
  (r["min_ns"], a["min_ns"], rp["50"], ap["50"]))
lines = open(sys.argv[2]).read().splitlines()
t("log facts (its last line) say so", " rtt=T4_wire-T1_SW(app_send,--client-no-tx-ts) " in lines[-1], lines[-1][:160])
h = lines[0].split(",")
t("log columns: rtt_app_tx_ns, no t1 wire column", "rtt_app_tx_ns" in h and "rtt_ns" not in h and "t1_ksw" not in h, h)
ns = lambda s: int(Decimal(s) * 1000000000)
rows = [dict(zip(h, l.split(","))) for l in lines[1:-1]]
ok = [x for x in rows if x["status"] == "ok"]
t("log: 300 ok rows", len(ok) == 300, len(ok))
bad = [x["seq"] for x in ok if int(x["rtt_app_tx_ns"]) != ns(x["t4_ksw"]) - ns(x["t1_sw"])]
t("log: every row rtt = t4 wire - t1_sw", not bad, bad[:5])
' "$WORK/nc.json" "$WORK/nc.csv"
	run_fg nc_an "$RANT" --analyze "$WORK/nc.csv"
	expect_eq "--client-no-tx-ts: --analyze of its log: exit 2" "$RC" 2
	check "--client-no-tx-ts: --analyze says why, in one line" \
		grep -q '^rant: --analyze: .*nc.csv:1: a client log written with --client-no-tx-ts' "$WORK/nc_an.err"
}

# --client-no-tx-ts paced, with classes, and both (each against a -N
# reflector, traced): no TX stamp asked for or read, every ping sent
# answered and counted, its rtt sampled, the T1 wire stamp of each measured
# one missing by request, none unmatched
test_client_no_tx_modes() {
	local spid mode opts
	for mode in paced classes classes-paced; do
		case $mode in
		paced) opts=(--interval 500) ;;
		classes) opts=(--tos "0,32") ;;
		classes-paced) opts=(--tos "0,32" --interval 500) ;;
		esac
		run_bg "ncm_$mode-r" ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -N --once
		spid=$BG_PID
		listening_b
		run_fg "ncm_$mode" ip netns exec "$NS_A" "${STRACE_ENV[@]}" strace -f -qq -e trace=recvmsg,recvmmsg,setsockopt,ioctl,recvfrom \
			-o "$WORK/ncm_$mode.st" "$RANT" -i "$VETH_A" -a "$ADDR_B" --client-no-tx-ts --count 200 -w 5 \
			--timeout 3000 "${opts[@]}" --json "$WORK/ncm_$mode.json" -q
		expect_eq "--client-no-tx-ts $mode: client exit" "$RC" 0
		wait_rc "$spid" 30
		no_tx_traced "--client-no-tx-ts $mode" "$WORK/ncm_$mode.st"
		rx_ioctl_traced "--client-no-tx-ts $mode" "$WORK/ncm_$mode.st" "$([ "$mode" = paced ] && echo 1 || echo 2)"
		py_checks "--client-no-tx-ts $mode" '
import json, sys
d = json.load(open(sys.argv[1])); p = d["packets"]; m = d["metrics"]
t("sent = received", p["sent"] == p["received"] > 0, p)
t("rtt samples = received - warm-up", m["rtt"]["samples"] == p["received"] - p["warmup"], (m["rtt"]["samples"], p))
t("T1 wire missing for every measured ping", d["missing_stamps"]["T1_KSW"] == p["sent"] - p["warmup"], (d["missing_stamps"], p))
t("no unmatched TX stamps", p["unmatched_tx_stamps"] == 0, p)
t("rtt_basis app send", d["rtt_basis"] == "app_send_T4_wire-T1_SW", d["rtt_basis"])
rows = d.get("classes") or []
t("class rows: no client tx stack (not measured), an app rtt with samples", all(
  "client_tx_stack" not in r and r["app_rtt"]["samples"] > 0 for r in rows), rows[:1])
' "$WORK/ncm_$mode.json"
		if [[ $mode == classes* ]]; then
			# shellcheck disable=SC2016 # $1 is the inner shell's
			check "--client-no-tx-ts $mode: the class table shows no tx stack row (not measured)" \
				bash -c '! grep -q "tx stack" "$1" && grep -q "app rtt T4_SW-T1_SW; ns" "$1"' _ "$WORK/ncm_$mode.out"
		fi
	done
	# against a reflector that stamps: only the client's own stamps are missing, and said so
	run_bg ncm_full-r ip netns exec "$NS_B" "$RANT" -i "$VETH_B" --once
	spid=$BG_PID
	listening_b
	run_fg ncm_full ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --client-no-tx-ts --count 100 \
		--json "$WORK/ncm_full.json"
	expect_eq "--client-no-tx-ts, reflector without -N: client exit" "$RC" 0
	wait_rc "$spid" 30
	check "--client-no-tx-ts, reflector without -N: only T1 missing, the client's option named" has "$WORK/ncm_full.out" \
		'^Missing stamps: T1_KSW 100 \(no TX stamps of the pings, by request: --client-no-tx-ts\)$'
	expect_eq "--client-no-tx-ts, reflector without -N: its response measured" \
		"$(jget "$WORK/ncm_full.json" metrics.response.samples)" 100
	expect_eq "--client-no-tx-ts, reflector without -N: response_basis wire" \
		"$(jget "$WORK/ncm_full.json" response_basis)" wire_T3-T2
}

# ------------------------------------------------ -N, -R, -F, -2, -N on emit
test_later_flags() {
	local spid rp
	run_bg n_srv ip netns exec "$NS_B" strace -f -qq -e trace=recvmsg,recvmmsg,setsockopt -o "$WORK/n_strace" \
		"$RANT" -i "$VETH_B" -N -l "$WORK/n.log" --json "$WORK/n.json" -H
	spid=$BG_PID
	listening_b
	run_fg n_cli ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --count 300 -q
	expect_eq "-N reflector: client exit" "$RC" 0
	wait_for 30 has "$WORK/n_srv.out" '^Stopped by: fin$'
	# rant is strace's child: signal rant itself
	rp=$(pgrep -P "$spid" | head -n 1)
	kill -TERM "${rp:-$spid}" 2>/dev/null
	wait_rc "$spid" 30
	check "-N: report says response is app-send based" \
		has "$WORK/n_srv.out" '^Response: T3_SW - T2 wire \(app send; -N: no TX stamps\), not wire-to-wire$'
	check "-N: the decomposition row is labelled so" has "$WORK/n_srv.out" '^response \(T3_SW-T2 wire, -N\)'
	check "-N: never called wire-to-wire ('T3-T2 wire' absent)" hasnt "$WORK/n_srv.out" 'response \(T3-T2 wire\)'
	check "-N: log header RESPONSE_APP_TX, no T3 wire column" has "$WORK/n.log" '^SEQ T2_KSW T3_SW RESPONSE_APP_TX$'
	check "-N: no missing-stamp counts (none asked for)" has "$WORK/n_srv.out" '^Missing stamps: none$'
	expect_eq "-N: samples = 300" "$(field "$WORK/n_srv.out" samples)" 300
	no_tx_traced "-N" "$WORK/n_strace"
	py_checks "-N json" '
import json, sys
d = json.load(open(sys.argv[1]))
t("response_basis says app send", d["response_basis"] == "app_send_T3_SW-T2_wire", d["response_basis"])
t("tx_stamps false", d["tx_stamps"] is False)
t("response samples 300", d["metrics"]["response"]["samples"] == 300)
' "$WORK/n.json"
	# without -N the same JSON says wire
	check "without -N: response_basis wire (from the full test)" \
		python3 -c 'import json,sys; d=json.loads(open(sys.argv[1]).readline()); sys.exit(d["response_basis"]!="wire_T3-T2")' "$WORK/ro.json"

	test_client_no_tx
	test_client_no_tx_modes

	run_fg r_cli ip netns exec "$NS_A" "$RANT" -a "$ADDR_B" -R --count 10 --timeout 100 --json "$WORK/r.json" -q
	check "-R: wire stamps software" python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["timestamps"]["wire"]!="software")' "$WORK/r.json"
	run_fg r2 "$RANT" -R --timestamps hw -a 127.0.0.1 --count 1
	expect_eq "-R with --timestamps hw: exit 2" "$RC" 2
	run_fg t2 "$RANT" -2
	expect_eq "-2: refused, exit 2" "$RC" 2
	expect_eq "-2: one line" "$(wc -l <"$WORK/t2.err")" 1
	check "-2: says why (3 CPUs) and what instead" grep -q '3 CPUs.*run without -2' "$WORK/t2.err"

	run_bg fa_srv ip netns exec "$NS_B" "$RANT" -i "$VETH_B" -F --json "$WORK/fa.json"
	spid=$BG_PID
	listening_b
	run_fg fa_cli ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" -N --count 300 -q
	expect_eq "-F reflector, -N client: client exit 0" "$RC" 0
	check "-N on the client: one line says it is a reflector option" \
		grep -q '^rant: --no-tx-ts: a reflector option' "$WORK/fa_cli.err"
	wait_for 30 has "$WORK/fa_srv.out" '^Stopped by: fin$'
	stop_term "$spid"
	expect_eq "-F: exits 0 on SIGTERM" "$WAIT_RC" 0
	check "-F: one line says what it is here" grep -q '^rant: --fast-path: here it is --spin with -N' "$WORK/fa_srv.err"
	check "-F: spins, no TX stamps" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["tx_stamps"] is False and d["metrics"]["response"]["samples"]==300))' "$WORK/fa.json"
}

# ---------------------------------------------------- bench-rant, as it runs
# server: [nsenter] [chrt -f 2] [taskset -c CPU] rant -i IF -p 50 -B 1 -P -w 10000 -H -N
# client: [nsenter] [chrt -f 2] [taskset -c CPU] rant -i IF -a IP -d 60 -p 50 -B 1 -P -w 10000 -H
# (stdout and stderr together into one file each; -d shortened, and -w
# 10000 to 1000: pings of a host loaded by other suites still outnumber it)
bench_pair() {
	local tag=$1 spid
	shift
	nsenter --net="/var/run/netns/$NS_B" chrt -f 2 taskset -c "$CPU_S" \
		"$RANT" -i "$VETH_B" -p 50 -B 1 -P -w 1000 -H -N "$@" >"$WORK/$tag-server-result.txt" 2>&1 &
	spid=$!
	BG_PIDS+=("$spid")
	listening_b
	nsenter --net="/var/run/netns/$NS_A" chrt -f 2 taskset -c "$CPU_C" \
		"$RANT" -i "$VETH_A" -a "$ADDR_B" -d "$BENCH_D" -p 50 -B 1 -P -w 1000 -H "${CLIENT_EXTRA[@]}" \
		>"$WORK/$tag-client-result.txt" 2>&1
	RC=$?
	wait_for 30 grep -q '^Stopped by: fin$' "$WORK/$tag-server-result.txt"
	stop_term "$spid"
}

test_bench_rant() {
	: "${BENCH_D:=3}"
	CLIENT_EXTRA=()
	bench_pair exact
	parse_note "bench-rant client, default flags" "$RC" "$WORK/exact-client-result.txt"
	parse_note "bench-rant server, default flags (SIGTERM)" "$WAIT_RC" "$WORK/exact-server-result.txt"
	expect_eq "bench-rant client: exit 0 (non-zero is a failed run)" "$RC" 0
	expect_eq "bench-rant server: SIGTERM ends it with exit 0" "$WAIT_RC" 0
	check "bench-rant server: no usage error" hasnt "$WORK/exact-server-result.txt" '^rant: --'
	py_checks "bench-rant exact run" '
import json, subprocess, sys
for side, f in (("client", sys.argv[1]), ("server", sys.argv[2])):
    r = json.loads(subprocess.check_output(["python3", sys.argv[3], "parse", f]))
    t(side + ": duration", r.get("duration", 0) > 0, r)
    t(side + ": samples > 0", r.get("samples", 0) > 0, r.get("samples"))
    t(side + ": 7 percentiles", len(r["pct"]) == 7, r["pct"])
    t(side + ": min <= p50 <= p99 <= max", r["min"] <= r["pct"]["50"] * 1000 + 999 and r["pct"]["50"] <= r["pct"]["99"] and r["pct"]["99"] * 1000 <= r["max"], r)
    t(side + ": Minimum/Maximum/Average parsed", all(k in r for k in ("minimum", "maximum", "average")))
' "$WORK/exact-client-result.txt" "$WORK/exact-server-result.txt" "$PARSE"
	# the same pair with --json added on both sides: the numbers must agree
	CLIENT_EXTRA=(--json "$WORK/bc.json")
	bench_pair json --json "$WORK/bs.json"
	expect_eq "bench-rant + --json client: exit 0" "$RC" 0
	expect_eq "bench-rant + --json server: exit 0 on SIGTERM" "$WAIT_RC" 0
	py_checks "bench-rant client" 'import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")' \
		"$PARSE" check "$WORK/json-client-result.txt" "$WORK/bc.json" "round-trip:"
	py_checks "bench-rant server" 'import runpy, sys; sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name="__main__")' \
		"$PARSE" check "$WORK/json-server-result.txt" "$WORK/bs.json" "response:"
	check "bench-rant server: reflector warm-up 1000 said" \
		grep -Eq '^Warm-up: 1000 pings excluded: 1000 flagged by the client' "$WORK/json-server-result.txt"
}

# parse_note LABEL RC FILE: for the record, a comment with the exit status
# and what bench-rant's post-processing takes from FILE
parse_note() {
	local r
	r=$(python3 "$PARSE" parse "$3" 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print("duration %s, samples %s, %d percentiles, Minimum/Maximum/Average %s" % (d.get("duration", "-"),
      d.get("samples", "-"), len(d["pct"]), "yes" if all(k in d for k in ("minimum", "maximum", "average")) else "no"))' 2>/dev/null)
	echo "# ran: $1 -> exit $2; parsed: ${r:-nothing}"
}

# parses FILE: bench-rant's parser finds a duration, samples > 0, the 7
# percentiles and Minimum/Maximum/Average
parses() {
	python3 "$PARSE" parse "$1" | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(not (d.get("duration", 0) > 0 and d.get("samples", 0) > 0 and len(d["pct"]) == 7 and
              all(k in d for k in ("minimum", "maximum", "average"))))'
}

# bench_flag LABEL SERVER-FLAGS CLIENT-FLAGS [RCS]: bench-rant's pair with
# optional flags added as it adds them; the client's exit must be one of
# RCS (default 0: anything else is a failed run for crucible), the server's
# (SIGTERM) too, and both result files must parse
bench_flag() {
	local label=$1 rcs=${4:-0} tag
	BENCH_N=$((BENCH_N + 1))
	tag=opt$BENCH_N
	# shellcheck disable=SC2206 # flags as words
	CLIENT_EXTRA=($3)
	# shellcheck disable=SC2086 # flags as words
	bench_pair "$tag" $2
	parse_note "bench-rant server + $label ($2)" "$WAIT_RC" "$WORK/$tag-server-result.txt"
	parse_note "bench-rant client + $label ($3)" "$RC" "$WORK/$tag-client-result.txt"
	check "bench-rant + $label: client exit in {$rcs} (got $RC), server exit in {$rcs} (got $WAIT_RC)" \
		test "${rcs/$RC/}" != "$rcs" -a "${rcs/$WAIT_RC/}" != "$rcs"
	check "bench-rant + $label: both result files parse" parses "$WORK/$tag-client-result.txt"
	check "bench-rant + $label: ... the server's too" parses "$WORK/$tag-server-result.txt"
	LAST_TAG=$tag
}

# bench_refused LABEL SIDE FLAGS... PATTERN: a flag this host cannot honour
# (no PMU, no snapshot support, 2 CPUs): that role exits 2 at once with one
# line saying why, as documented
bench_refused() {
	local label=$1 side=$2 pat=${*: -1} args=("${@:3:$#-3}") out=$WORK/refused-$BENCH_N.txt
	BENCH_N=$((BENCH_N + 1))
	if [ "$side" = server ]; then
		timeout -k 5 30 nsenter --net="/var/run/netns/$NS_B" chrt -f 2 taskset -c "$CPU_S" \
			"$RANT" -i "$VETH_B" -p 50 -B 1 -P -w 10000 -H -N "${args[@]}" >"$out" 2>&1
	else
		timeout -k 5 30 nsenter --net="/var/run/netns/$NS_A" chrt -f 2 taskset -c "$CPU_C" \
			"$RANT" -i "$VETH_A" -a "$ADDR_B" -d "$BENCH_D" -p 50 -B 1 -P -w 10000 -H "${args[@]}" >"$out" 2>&1
	fi
	RC=$?
	echo "# ran: bench-rant $side + $label (${args[*]}) -> exit $RC; $(head -c 200 "$out" | head -n 1)"
	expect_eq "bench-rant $side + $label: refused here, exit 2" "$RC" 2
	check "  ... one line saying why ($pat)" test "$(wc -l <"$out")" = 1 -a -n "$(grep -E "$pat" "$out")"
}

# every optional flag bench-rant adds, on the roles it adds it to
test_bench_optional() {
	: "${BENCH_D:=4}"
	BENCH_N=0
	bench_flag "-C alone" "-C" "-C"
	expect_eq "  ... -C alone: one line each side says it has no effect" \
		"$(cat "$WORK/$LAST_TAG"-*-result.txt | grep -c '^rant: --continue: no effect without --threshold (accepted')" 2
	bench_flag "-L alone" "-L 50" "-L 50"
	expect_eq "  ... -L alone: one line each side says it has no effect" \
		"$(cat "$WORK/$LAST_TAG"-*-result.txt | grep -c '^rant: --log-threshold: no effect without --log (accepted')" 2
	# a 100 ms threshold: a breach on this shared VM is rare but legitimate (3)
	bench_flag "-t 100000" "-t 100000" "-t 100000" "0 3"
	bench_flag "-t 100000 -C" "-t 100000 -C" "-t 100000 -C" "0 3"
	bench_flag "-t 100000 -L 50 -l" "-t 100000 -L 50 -l $WORK/bsrv.log" "-t 100000 -L 50 -l $WORK/bcli.log" "0 3"
	check "  ... -l: both logs written in the earlier format" \
		test -n "$(grep -l '^SEQ T2_KSW' "$WORK/bsrv.log")" -a -n "$(grep -l '^SEQ T1_KSW' "$WORK/bcli.log")"
	if trace_ready; then
		bench_flag "-T" "-T" "-T"
	else
		skip "bench-rant -T: no tracefs instance here"
	fi
	bench_flag "-R" "-R" "-R"
	bench_flag "-v" "-v" "-v"
	expect_eq "  ... -v: status lines asked for, so in the result files" \
		"$([ "$(grep -c 'rate .*/s' "$WORK/$LAST_TAG-client-result.txt")" -ge 1 ] && echo yes)" yes
	bench_flag "-o 200" "-o 200" "-o 200"
	bench_flag "-b 2" "-b 2" "-b 2"
	bench_flag "-F (server)" "-F" ""
	bench_flag "all that run here" "-t 100000 -C -L 50 -T -R -v -l $WORK/ball.log -o 200 -b 2 -F" \
		"-t 100000 -C -L 50 -T -R -v -l $WORK/ball-c.log -o 200 -b 2" "0 3"
	if snapshot_ok; then
		bench_flag "-S" "-S" "-S"
	else
		bench_refused "-S" server -S CONFIG_TRACER_SNAPSHOT
		bench_refused "-S" client -S CONFIG_TRACER_SNAPSHOT
	fi
	bench_refused "-2" server -2 '3 CPUs'
	if [ -d /sys/bus/event_source/devices/cpu ]; then
		bench_flag "-M" "-M" "-M"
	else
		bench_refused "-M" server -M 'no hardware PMU'
		bench_refused "-M" client -M 'no hardware PMU'
	fi
	# -G: the pages reserved for the pair if this host has none free
	if [ -w "$HUGE" ] && [ "$(hugepages_free)" -lt 16 ]; then
		HUGE_OLD=$(cat "$HUGE")
		echo $((HUGE_OLD + 16)) >"$HUGE"
	fi
	if [ "$(hugepages_free)" -ge 16 ]; then
		bench_flag "-G" "-G" "-G"
	else
		bench_refused "-G" server -G 'nr_hugepages'
		bench_refused "-G" client -G 'nr_hugepages'
	fi
	if [ -n "$HUGE_OLD" ]; then
		echo "$HUGE_OLD" >"$HUGE"
		HUGE_OLD=
	fi
}

need_root "net-compat"
if ! ns_setup; then
	not_ok "namespace setup"
	finish
	exit 1
fi

test_older_readme
test_newer_usage
test_newer_quick
test_newer_full
test_reflector_warmup
test_reflector_stop
test_reflector_options
test_later_flags
test_bench_rant
test_bench_optional
finish
