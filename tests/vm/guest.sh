#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# rant's real-driver tests, run inside the QEMU guest (tests/vm/run.sh boots
# it; this script's TAP goes to the second serial port).  Three emulated
# e1000e NICs on one hub: A (client side), B (A's bond partner) and R, moved
# into the network namespace "refl" (the reflector's side).  QEMU's e1000e
# is driven by the real e1000e driver (ethtool -T, SIOCSHWTSTAMP and the
# PHC's PTP_SYS_OFFSET_EXTENDED all answer) but its model never stamps a
# packet and its PHC never advances: a NIC that claims hardware stamps and
# delivers none.
#
# Which sections run is the host's choice (tests/vm/run.sh), by group, on
# the kernel command line (rant.groups=): e1000e, the sections below, only
# under QEMU 7.2, whose e1000e the above describes (QEMU 10's runs its
# PHC); rt, config.sh on e1000e and the NVMe IRQ threads
# (tests/vm/guest-rt.sh); igb, the 82576 of QEMU 10 (tests/vm/guest-igb.sh);
# model, the lab's own model NIC (tests/vm/guest-model.sh, with
# /rant/mod/rantnic.ko); tsn, taprio and etf on a multi-queue veth pair,
# rant and isochron side by side (tests/vm/guest-tsn.sh).  rant.only=
# narrows them to the sections (or groups) it names.

# Assertions are `bash -c '...' _ ARGS` scripts (one failing is one test):
# shellcheck disable=SC2016
# shellcheck source=tests/lib.sh
TAP_ONLY=1 . /rant/tests/lib.sh

RANT=/usr/bin/rant
CONFIG=/rant/config.sh
W=/tmp/w
FLAVOR=$(sed -n 's/.*rant\.flavor=\([a-z]*\).*/\1/p' /proc/cmdline)
ONLY=$(sed -n 's/.*rant\.only=\([a-z0-9,_]*\).*/\1/p' /proc/cmdline)
GROUPS_RUN=$(sed -n 's/.*rant\.groups=\([a-z0-9,]*\).*/\1/p' /proc/cmdline)
SERIES=$(sed -n 's/.*rant\.series=\([0-9.]*\).*/\1/p' /proc/cmdline)
QEMU_VER=$(sed -n 's/.*rant\.qemu=\([0-9.]*\).*/\1/p' /proc/cmdline)
A_MAC=52:54:00:12:00:10
B_MAC=52:54:00:12:00:11
R_MAC=52:54:00:12:00:12
A_IP=10.10.0.1
R_IP=10.10.0.2
mkdir -p "$W"
echo "# guest: kernel $(uname -r) ($FLAVOR, $SERIES), QEMU $QEMU_VER, $(nproc) CPUs, groups $GROUPS_RUN"

# ---------------------------------------------------------------- helpers

# if_by_mac MAC: the interface with that address
if_by_mac() {
	local f
	for f in /sys/class/net/*/address; do
		[[ $(cat "$f") == "$1" && $f != */bond* ]] && basename "${f%/address}" && return 0
	done
	return 1
}

in_r() { ip netns exec refl "$@"; }

# udp_listening NS PORT: a UDP socket is bound to PORT in NS ("" = here)
udp_listening() {
	if [[ -n $1 ]]; then
		ip netns exec "$1" ss -Hlun "sport = :$2" | grep -q .
	else
		ss -Hlun "sport = :$2" | grep -q .
	fi
}

gone() {
	local st
	st=$(ps -o pid,stat | awk -v p="$1" '$1 == p { print $2 }')
	[[ -z $st || $st == Z* ]]
}

# hwts IFACE [NS]: "tx_type rx_filter" of the device's hardware stamping
# (SIOCGHWTSTAMP, through linuxptp's hwstamp_ctl)
hwts() {
	local out
	if [[ -n ${2:-} ]]; then
		out=$(ip netns exec "$2" hwstamp_ctl -i "$1" 2>&1)
	else
		out=$(hwstamp_ctl -i "$1" 2>&1)
	fi
	printf '%s %s' "$(sed -n 's/^tx_type //p' <<<"$out")" "$(sed -n 's/^rx_filter //p' <<<"$out")"
}

# show NAME...: outputs of runs, as TAP comments
show() {
	local n
	for n in "$@"; do
		sed "s/^/#   $n: /" "$W/$n.err" "$W/$n.out" 2>/dev/null | head -n 25
	done
}

# t NAME SHOW command...: a check; on failure the named outputs follow
t() {
	local name=$1 sh=$2
	shift 2
	if "$@"; then
		ok "$name"
	else
		not_ok "$name"
		# shellcheck disable=SC2086 # a list of names
		[[ -n $sh ]] && show $sh
	fi
	return 0
}

# reflector NAME NS IFACE [rant options...]: a reflector in the background,
# waited for until it listens; its pid in RPID
reflector() {
	local name=$1 ns=$2 ifc=$3
	shift 3
	if [[ -n $ns ]]; then
		ip netns exec "$ns" "$RANT" -i "$ifc" "$@" >"$W/$name.out" 2>"$W/$name.err" &
	else
		"$RANT" -i "$ifc" "$@" >"$W/$name.out" 2>"$W/$name.err" &
	fi
	RPID=$!
	wait_for 60 udp_listening "$ns" "$(port_of "$@")"
}

port_of() {
	local p=12345
	while (($#)); do
		[[ $1 == --port ]] && p=$2
		shift
	done
	echo "$p"
}

# stop PID [SIGNAL]: signal it (TERM) and wait for it; its status in RC
stop() {
	kill -"${2:-TERM}" "$1" 2>/dev/null
	if ! wait_for 60 gone "$1"; then
		kill -9 "$1" 2>/dev/null
	fi
	wait "$1" 2>/dev/null
	RC=$?
}

# emit NAME NS IFACE ADDR [rant options...]: a client, waited for; RC
emit() {
	local name=$1 ns=$2 ifc=$3 addr=$4
	shift 4
	if [[ -n $ns ]]; then
		timeout 120 ip netns exec "$ns" "$RANT" -i "$ifc" -a "$addr" "$@" >"$W/$name.out" 2>"$W/$name.err"
	else
		timeout 120 "$RANT" -i "$ifc" -a "$addr" "$@" >"$W/$name.out" 2>"$W/$name.err"
	fi
	RC=$?
}

# samples NAME: "Total Samples" of a client's report
samples() {
	sed -n 's/.*Total Samples: \([0-9]*\).*/\1/p' "$W/$1.out" "$W/$1.err" 2>/dev/null | head -n 1
}

# packets NAME FIELD: a count of the report's "Packets:" line
packets() {
	sed -n "s/^Packets:.* $2 \([0-9]*\).*/\1/p" "$W/$1.out" "$W/$1.err" 2>/dev/null | head -n 1
}

# metric NAME METRIC: the samples column of the decomposition table
metric() {
	awk -v m="$2" '$1 == m && $2 ~ /^\(/ { for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+$/) { print $i; exit } }' \
		"$W/$1.out" "$W/$1.err" 2>/dev/null
}

# jnum FILE KEY: the first number a JSON key has in FILE
jnum() {
	grep -o "\"$2\": *-\?[0-9]*" "$1" 2>/dev/null | head -n 1 | sed 's/.*: *//'
}

is() {
	[[ $1 == "$2" ]]
}

# complete NAME COUNT: a client's run ended well: exit 0 (RC), COUNT sent,
# each received or lost, every received one a sample.  (Not "none lost":
# under TCG on a loaded host a pong can come later than --timeout.)
complete() {
	local sent rcv lost
	sent=$(packets "$1" sent) rcv=$(packets "$1" received) lost=$(packets "$1" lost)
	[[ $RC == 0 && $sent == "$2" && $((rcv + lost)) == "$sent" && $(samples "$1") == "$rcv" && $rcv -gt 0 ]]
}

has() {
	grep -Eq -- "$2" "$W/$1.out" "$W/$1.err" 2>/dev/null
}

# want SECTION [GROUP]: the section is to run: its group is this boot's
# and rant.only, if given, names it or its group.  GROUP defaults to
# SECTION_GROUP, the group of the section file being sourced.
SECTION_GROUP=e1000e
want() {
	local g=${2:-$SECTION_GROUP}
	[[ ,$GROUPS_RUN, == *",$g,"* ]] || return 1
	[[ -z $ONLY || ,$ONLY, == *",$1,"* || ,$ONLY, == *",$g,"* ]]
}

# --------------------------------------------------------------- the lab

A=$(if_by_mac $A_MAC)
B=$(if_by_mac $B_MAC)
R=$(if_by_mac $R_MAC)
ip netns add refl
ip link set "$R" netns refl
in_r ip link set lo up
ip addr add "$A_IP/24" dev "$A"
in_r ip addr add "$R_IP/24" dev "$R"
ip link set "$A" up
in_r ip link set "$R" up
link_up() { ip ${2:+-n "$2"} -o link show "$1" | grep -q 'state UP'; }
wait_for 60 link_up "$A" && wait_for 60 link_up "$R" refl
t "lab: e1000e links up, A reaches R (ping)" "" ping -c 1 -W 5 "$R_IP"
PHC_A=$(ethtool -T "$A" | sed -n 's/^PTP Hardware Clock: *//p')
PHC_B=$(ethtool -T "$B" | sed -n 's/^PTP Hardware Clock: *//p')
PHC_R=$(in_r ethtool -T "$R" | sed -n 's/^PTP Hardware Clock: *//p')
echo "# guest: A=$A (ptp$PHC_A) B=$B (ptp$PHC_B) R=$R (ptp$PHC_R, in refl)"

test_driver() {
	ethtool -i "$A" >"$W/drv.out" 2>&1
	ethtool -T "$A" >"$W/ts.out" 2>&1
	t "driver: $A is e1000e" drv has drv '^driver: e1000e$'
	t "driver: ethtool -T shows hardware TX and RX stamps and the ALL filter" ts \
		bash -c 'grep -q "hardware-transmit" "$1" && grep -q "hardware-receive" "$1" &&
			grep -q "^[[:space:]]*all$" "$1"' _ "$W/ts.out"
	t "driver: each NIC has its own PHC" "" bash -c '[[ -c /dev/ptp$1 && -c /dev/ptp$2 && $1 != "$2" ]]' \
		_ "$PHC_A" "$PHC_B"
	# A fact of the lab the tests below rely on: QEMU's model does not
	# advance its PHC (e1000e's SYSTIM), whatever the real time does.
	phc_ctl "/dev/ptp$PHC_A" get >"$W/phc1.out" 2>&1
	sleep 0.3
	phc_ctl "/dev/ptp$PHC_A" get >"$W/phc2.out" 2>&1
	t "lab: QEMU's e1000e PHC does not advance" "phc1 phc2" bash -c '
		a=$(sed -n "s/.*clock time is \([0-9.]*\).*/\1/p" "$1"); b=$(sed -n "s/.*clock time is \([0-9.]*\).*/\1/p" "$2")
		[[ -n $a && $a == "$b" ]]' _ "$W/phc1.out" "$W/phc2.out"
}

# Hardware stamping switched on for the run and put back as it was, on
# exit by SIGTERM and by SIGHUP; a VLAN's and a bond's real device alike.
# hw_restore LABEL NS IFACE DEV [rant options...]: DEV is the device whose
# hwtstamp config changes (IFACE itself, a VLAN's real device, a bond's
# active slave)
hw_restore() {
	local label=$1 ns=$2 ifc=$3 dev=$4 before during sig n=0
	shift 4
	# a starting point that is not the driver's default: rant must put
	# back this, not "off"
	if [[ -n $ns ]]; then ip netns exec "$ns" hwstamp_ctl -i "$dev" -t 0 -r 12 >/dev/null 2>&1
	else hwstamp_ctl -i "$dev" -t 0 -r 12 >/dev/null 2>&1; fi
	before=$(hwts "$dev" "$ns")
	for sig in TERM HUP; do
		n=$((n + 1))
		if ! reflector "hw-$label-$n" "$ns" "$ifc" --timestamps hw "$@"; then
			not_ok "$label: reflector --timestamps hw on $ifc listens"
			show "hw-$label-$n"
			stop "$RPID"
			continue
		fi
		during=$(hwts "$dev" "$ns")
		if [[ $sig == TERM ]]; then
			t "$label: --timestamps hw on $ifc switches $dev's TX stamps on and its RX filter to all ($before -> $during)" \
				"hw-$label-$n" is "$during" "1 1"
		fi
		stop "$RPID" "$sig"
		t "$label: after SIG$sig, $dev's stamping is back as it was ($before, is $(hwts "$dev" "$ns"))" \
			"hw-$label-$n" is "$(hwts "$dev" "$ns")" "$before"
	done
	if [[ -n $ns ]]; then ip netns exec "$ns" hwstamp_ctl -i "$dev" -t 0 -r 0 >/dev/null 2>&1
	else hwstamp_ctl -i "$dev" -t 0 -r 0 >/dev/null 2>&1; fi
}

test_hwtstamp() {
	t "hwtstamp: $R starts with stamping off" "" is "$(hwts "$R" refl)" "0 0"
	hw_restore hwtstamp refl "$R" "$R"
}

# The PHC: rant reads its offset from CLOCK_REALTIME through
# PTP_SYS_OFFSET_EXTENDED (the last reading, in the JSON); phc_ctl's
# readings before and after the run bracket it (the PHC stands still, so
# the offset only falls as time goes on).
test_phc() {
	local o1 o2 r
	phc_ctl "/dev/ptp$PHC_A" cmp >"$W/cmp1.out" 2>&1
	emit phc "" "$A" "$R_IP" --timestamps auto --count 100 --interval 10000 --timeout 200 --json "$W/phc.json"
	phc_ctl "/dev/ptp$PHC_A" cmp >"$W/cmp2.out" 2>&1
	o1=$(sed -n 's/.*offset from CLOCK_REALTIME is \(-\?[0-9]*\)ns.*/\1/p' "$W/cmp1.out")
	o2=$(sed -n 's/.*offset from CLOCK_REALTIME is \(-\?[0-9]*\)ns.*/\1/p' "$W/cmp2.out")
	r=$(grep -o '"phc": {[^}]*}' "$W/phc.json" 2>/dev/null | grep -o '"offset_ns": -\?[0-9]*' | sed 's/.*: //')
	echo "# phc: phc_ctl offsets $o1 / $o2 ns, rant's $r ns"
	t "phc: rant reports /dev/ptp$PHC_A's offset from CLOCK_REALTIME (JSON phc.offset_ns)" "phc cmp1" \
		bash -c '[[ -n $1 && -n $2 ]]' _ "$r" "$o1"
	# phc_ctl prints CLOCK_REALTIME - PHC; rant PHC - CLOCK_REALTIME
	t "phc: rant's offset lies between phc_ctl's readings before and after" "phc cmp1 cmp2" \
		bash -c '(( -$1 >= $2 && $2 >= -$3 ))' _ "${o1:-0}" "${r:-x}" "${o2:-0}"
	t "phc: JSON says the PHC is stopped" phc bash -c 'grep -o "\"phc\": {[^}]*}" "$1" | grep -q "\"stopped\": true"' \
		_ "$W/phc.json"
}

# The three behaviours of a NIC that claims hardware stamps and delivers
# none, and a PHC that stands still.
test_nostamps() {
	local rpid
	if ! reflector ns-r refl "$R"; then
		not_ok "no stamps: reflector listens"
		show ns-r
		return
	fi
	rpid=$RPID
	emit ns-hw "" "$A" "$R_IP" --timestamps hw --count 300 -q
	t "no stamps: --timestamps hw with no hardware stamp exits non-zero (exit $RC)" ns-hw \
		bash -c '[[ $1 != 0 && $1 != 124 ]]' _ "$RC"
	t "no stamps: --timestamps hw says so in one line naming $A" ns-hw \
		bash -c '[[ $(wc -l <"$1") == 1 ]] && grep -q -- "$2" "$1" && grep -qi "stamp" "$1"' _ "$W/ns-hw.err" "$A"
	# right after it: served, not refused BUSY while the reflector waits
	# for TX stamps that never come
	emit ns-next "" "$A" "$R_IP" --timestamps sw --count 100
	t "no stamps: the next client, started right after, is served (exit $RC)" ns-next is "$RC" 0
	t "no stamps: the next client gets its samples, no BUSY" ns-next \
		bash -c '[[ $1 -gt 0 ]] && ! grep -qi busy "$2" "$3"' _ "$(samples ns-next)" "$W/ns-next.out" "$W/ns-next.err"
	# paced, so that the run lasts long enough (> 0.1 s) to see the PHC stand still
	emit ns-auto "" "$A" "$R_IP" --timestamps auto --count 200 --interval 5000 --json "$W/ns-auto.json"
	t "no stamps: --timestamps auto measures (exit $RC, $(samples ns-auto) samples)" ns-auto complete ns-auto 200
	t "no stamps: --timestamps auto ends on kernel stamps" ns-auto \
		has ns-auto '^Timestamps: wire software'
	t "no stamps: --timestamps auto says it fell back from the NIC's stamps" ns-auto \
		bash -c 'grep -i "$2" "$1"/ns-auto.out "$1"/ns-auto.err | grep -Eqi "fall|fell|instead|kernel stamps"' _ "$W" "$A"
	t "no stamps: the PHC that stands still is named stopped" "ns-auto ns-hw" \
		bash -c 'cat "$1"/ns-auto.* "$1"/ns-hw.* | grep -i "ptp$2" | grep -qi "stopped\|not advanc\|stands still"' _ "$W" "$PHC_A"
	t "no stamps: and not sent to phc2sys, which cannot start it" "ns-auto ns-hw" \
		bash -c '! cat "$1"/ns-auto.* "$1"/ns-hw.* | grep -i "ptp$2" | grep -qi "run phc2sys"' _ "$W" "$PHC_A"
	stop "$rpid" INT
}

# 8021q: rant on A.100 reaches A's hardware stamping through the VLAN
# device, and measures over it.
test_vlan() {
	local rpid
	ip link add link "$A" name "$A.100" type vlan id 100
	in_r ip link add link "$R" name "$R.100" type vlan id 100
	ip addr add 10.20.0.1/24 dev "$A.100"
	in_r ip addr add 10.20.0.2/24 dev "$R.100"
	ip link set "$A.100" up
	in_r ip link set "$R.100" up
	wait_for 30 ping -c 1 -W 1 10.20.0.2 >/dev/null
	hw_restore vlan refl "$R.100" "$R"
	if ! reflector vl-r refl "$R.100"; then
		not_ok "vlan: reflector on $R.100 listens"
		show vl-r
		return
	fi
	rpid=$RPID
	emit vl-sw "" "$A.100" 10.20.0.2 --timestamps sw --count 200 --json "$W/vl-sw.json"
	t "vlan: --timestamps sw over $A.100: complete" vl-sw complete vl-sw 200
	t "vlan: no stamp taken for another interface's" vl-sw is "$(jnum "$W/vl-sw.json" foreign_interface_stamps)" 0
	emit vl-auto "" "$A.100" 10.20.0.2 --count 200
	t "vlan: --timestamps auto over $A.100: complete" vl-auto complete vl-auto 200
	stop "$rpid" INT
	ip link del "$A.100"
	in_r ip link del "$R.100"
}

# served LABEL IFACE ADDR: a reflector on IFACE (here) serves a client on
# R with kernel stamps, completely
served() {
	local label=$1 ifc=$2 addr=$3 rpid
	if ! reflector "$label-r" "" "$ifc"; then
		not_ok "$label: reflector on $ifc listens"
		show "$label-r"
		return
	fi
	rpid=$RPID
	emit "$label-sw" refl "$R" "$addr" --timestamps sw --count 200
	t "$label: --timestamps sw to a reflector on $ifc: complete" "$label-sw $label-r" complete "$label-sw" 200
	stop "$rpid" INT
}

# macvlan: SIOCSHWTSTAMP on a macvlan reaches its lower device from the
# initial network namespace only (drivers/net/macvlan.c): here, A's.
test_macvlan() {
	ip link add mv0 link "$A" type macvlan mode bridge
	ip addr add 10.50.0.1/24 dev mv0
	ip link set mv0 up
	in_r ip addr add 10.50.0.2/24 dev "$R"
	wait_for 30 ping -c 1 -W 1 10.50.0.2 >/dev/null
	hw_restore macvlan "" mv0 "$A"
	served macvlan mv0 10.50.0.1
	ip link del mv0
	in_r ip addr del 10.50.0.2/24 dev "$R"
}

# bonding, active-backup: SIOCSHWTSTAMP on a bond needs
# HWTSTAMP_FLAG_BONDED_PHC_INDEX (drivers/net/bonding/bond_main.c), and the
# active slave is the device whose stamps and PHC count.
test_bond() {
	ip addr flush dev "$A"
	ip link set "$A" down
	ip link set "$B" down
	ip link set bond0 type bond mode active-backup miimon 100 2>"$W/bond.err" ||
		{ ip link del bond0; ip link add bond0 type bond mode active-backup miimon 100; }
	ip link set "$A" master bond0
	ip link set "$B" master bond0
	ip link set bond0 up
	# the bond takes A as its active slave only once its link monitor has
	# seen A up (until then the request is refused, and B may have come up
	# first and become active): asked again until it is so
	wait_for 30 bash -c 'ip link set bond0 type bond active_slave "$1" 2>/dev/null
		grep -q "Currently Active Slave: $1" /proc/net/bonding/bond0' _ "$A"
	ip addr add 10.30.0.1/24 dev bond0
	in_r ip addr add 10.30.0.2/24 dev "$R"
	wait_for 60 ping -c 1 -W 1 10.30.0.2 >/dev/null
	ethtool -T bond0 >"$W/bond-ts.out" 2>&1
	t "bond: ethtool -T bond0 shows the active slave's PHC" bond-ts has bond-ts "^PTP Hardware Clock: $PHC_A\$"
	hw_restore bond "" bond0 "$A"
	t "bond: the backup slave's stamping is left alone" "" is "$(hwts "$B")" "0 0"
	# asked again until it is so, as for A: refused while the link monitor
	# has not yet seen B up (a loaded host's TCG guest is slow to)
	wait_for 30 bash -c 'ip link set bond0 type bond active_slave "$1" 2>/dev/null
		grep -q "Currently Active Slave: $1" /proc/net/bonding/bond0' _ "$B"
	hw_restore bond-b "" bond0 "$B"
	t "bond: after the switch, the old active slave's stamping is left alone" "" is "$(hwts "$A")" "0 0"
	served bond bond0 10.30.0.1
	ip link set "$B" nomaster
	ip link set "$A" nomaster
	ip link set bond0 down
	in_r ip addr del 10.30.0.2/24 dev "$R"
	ip link set "$A" up
	ip addr add "$A_IP/24" dev "$A"
}

# Kernels before 6.8 (this guest's 6.1) may use up a TX stamp key on a send
# that fails.  A failure in a session that is not the reflector's first:
# an nftables rule in the reflector's namespace drops its 21st datagram
# after the rule is made (EPERM to sendmsg), in the second session.
test_txkey() {
	local rpid
	if ! reflector tk-r refl "$R" --timestamps sw --port 12400; then
		not_ok "tx keys: reflector listens"
		show tk-r
		return
	fi
	rpid=$RPID
	emit tk-1 "" "$A" "$R_IP" --port 12400 --timestamps sw --count 100 --json "$W/tk-1.json"
	t "tx keys: first session: exit 0, every pong with its reflector stamps" tk-1 \
		bash -c '[[ $1 == 0 && $2 -gt 0 && $2 == "$3" ]]' _ "$RC" "$(samples tk-1)" "$(metric tk-1 response)"
	in_r nft -f - <<-'EOF'
	table inet rantvm {
		chain out {
			type filter hook output priority 0;
			udp sport 12400 numgen inc mod 1000000 20 counter drop
		}
	}
	EOF
	emit tk-2 "" "$A" "$R_IP" --port 12400 --timestamps sw --count 200 --timeout 200 --json "$W/tk-2.json"
	in_r nft list table inet rantvm >"$W/tk-nft.out" 2>&1
	in_r nft delete table inet rantvm
	t "tx keys: the nftables rule dropped one pong of the second session" "tk-nft tk-2" \
		bash -c 'grep -q "counter packets 1 " "$1" && [[ $2 -ge 1 ]]' _ "$W/tk-nft.out" "$(packets tk-2 lost)"
	t "tx keys: second session complete (exit $RC)" tk-2 complete tk-2 200
	# A pong carries the reflector's TX stamp of the pong before it: the
	# dropped pong takes one such stamp along.  Any other missing T3 is a
	# key gone astray (a key lost on the failed send would take every later
	# one of the session).
	t "tx keys: after the failed send, every pong carries its reflector stamps (but the dropped one's echo)" tk-2 \
		bash -c '(( $1 > 0 && $1 >= $2 - $3 ))' _ "$(metric tk-2 response)" "$(metric tk-2 rtt)" "$(packets tk-2 lost)"
	t "tx keys: reflector TX stamps missing: at most one per lost pong" tk-2 \
		bash -c '[[ -n $1 ]] && (( $1 <= $2 ))' _ "$(jnum "$W/tk-2.json" T3_KSW)" "$(packets tk-2 lost)"
	emit tk-3 "" "$A" "$R_IP" --port 12400 --timestamps sw --count 100
	t "tx keys: the session after it is complete too, every pong with its stamps" tk-3 \
		bash -c '[[ $1 == 0 && $2 -gt 0 && $2 == "$3" ]]' _ "$RC" "$(samples tk-3)" "$(metric tk-3 response)"
	stop "$rpid" INT
	t "tx keys: the reflector counted the failed send" tk-r \
		bash -c 'grep -Eqi "send.?errors?[^0-9]*1\b|failed sends?[^0-9]*1\b" "$1" "$2"' _ "$W/tk-r.out" "$W/tk-r.err"
}

for s in driver hwtstamp phc nostamps vlan macvlan bond txkey; do
	want "$s" e1000e || continue
	t0=$SECONDS
	"test_$s"
	echo "# guest: $s took $((SECONDS - t0)) s"
done
if [[ ,$GROUPS_RUN, == *,rt,* ]]; then
	SECTION_GROUP=rt
	# shellcheck source=tests/vm/guest-rt.sh
	. /rant/tests/vm/guest-rt.sh
fi
if [[ ,$GROUPS_RUN, == *,igb,* ]]; then
	SECTION_GROUP=igb
	# shellcheck source=tests/vm/guest-igb.sh
	. /rant/tests/vm/guest-igb.sh
fi
if [[ ,$GROUPS_RUN, == *,why,* ]]; then
	SECTION_GROUP=why
	# shellcheck source=tests/vm/guest-why.sh
	. /rant/tests/vm/guest-why.sh
fi
if [[ ,$GROUPS_RUN, == *,model,* && -e /rant/tests/vm/guest-model.sh && -e /rant/mod/rantnic.ko ]]; then
	SECTION_GROUP=model
	# shellcheck disable=SC1091 # not in every checkout yet
	. /rant/tests/vm/guest-model.sh
fi
if [[ ,$GROUPS_RUN, == *,tsn,* && -e /rant/tests/vm/guest-tsn.sh ]]; then
	SECTION_GROUP=tsn
	# shellcheck source=tests/vm/guest-tsn.sh
	. /rant/tests/vm/guest-tsn.sh
fi
ip netns del refl 2>/dev/null
# every output, for the host to keep (tests/vm/run.sh unpacks it)
if [[ -b /dev/nvme0n1 ]]; then
	tar -cf /dev/nvme0n1 -C /tmp w 2>/dev/null
fi
finish
