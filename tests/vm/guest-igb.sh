#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The igb part of tests/vm/guest.sh (sourced by it, with its helpers and
# the lab set up), on the boots under QEMU 10: two emulated 82576 ports
# on a hub of their own, I (the client's) and J (moved into the network
# namespace "igbr", the reflector's).  QEMU's igb model stamps TX packets
# (one at a time, as the 82576 does) and gives no RX stamp to a UDP
# datagram: its receive filters are the PTP ones only, and an event
# message is all it stamps.  The Linux igb driver drives it.
#
# Assertions are `bash -c '...' _ ARGS` scripts (one failing is one test):
# shellcheck disable=SC2016,SC2153

I_MAC=52:54:00:12:01:10
J_MAC=52:54:00:12:01:11
I_IP=10.70.0.1
J_IP=10.70.0.2

in_j() { ip netns exec igbr "$@"; }

# igb_stat IFACE NAME: a counter of ethtool -S IFACE
igb_stat() {
	ethtool -S "$1" 2>/dev/null | awk -v n="$2:" '$1 == n { print $2; exit }'
}

# jkey FILE OBJECT KEY: a number KEY has inside JSON object OBJECT
jkey() {
	grep -o "\"$2\": {[^}]*}" "$1" 2>/dev/null | head -n 1 | grep -o "\"$3\": *-\?[0-9]*" | sed 's/.*: *//'
}

igb_setup() {
	I=$(if_by_mac $I_MAC)
	J=$(if_by_mac $J_MAC)
	if [[ -z $I || -z $J ]]; then
		not_ok "igb: two igb ports found ($I_MAC, $J_MAC)"
		return 1
	fi
	ip netns add igbr
	ip link set "$J" netns igbr
	in_j ip link set lo up
	ip addr add "$I_IP/24" dev "$I"
	in_j ip addr add "$J_IP/24" dev "$J"
	ip link set "$I" up
	in_j ip link set "$J" up
	wait_for 60 link_up "$I" && wait_for 60 link_up "$J" igbr
	t "igb: links up, I reaches J across the two ports (ping)" "" ping -c 1 -W 5 "$J_IP"
	PHC_I=$(ethtool -T "$I" | sed -n 's/^PTP Hardware Clock: *//p')
	echo "# guest: igb I=$I (ptp$PHC_I) J=$J (in igbr)"
}

test_igb_driver() {
	local rc now
	ethtool -i "$I" >"$W/igb-drv.out" 2>&1
	ethtool -T "$I" >"$W/igb-ts.out" 2>&1
	t "igb driver: $I is igb" igb-drv has igb-drv '^driver: igb$'
	t "igb driver: ethtool -T lists hardware-transmit, hardware-receive, hardware-raw-clock and a PHC" igb-ts \
		bash -c 'grep -q "hardware-transmit" "$1" && grep -q "hardware-receive" "$1" &&
			grep -q "hardware-raw-clock" "$1" && grep -Eq "^PTP Hardware Clock: [0-9]+$" "$1" &&
			[[ -c /dev/ptp$2 ]]' _ "$W/igb-ts.out" "$PHC_I"
	# the 82576's receive filters (drivers/net/ethernet/intel/igb/igb_ptp.c):
	# no "all", which it cannot do
	t "igb driver: its RX filters are none, ptpv1-l4-sync, ptpv1-l4-delay-req, ptpv2-event (no all)" igb-ts \
		bash -c 'f=$(sed -n "/Receive Filter Modes/,\$p" "$1" | sed 1d | awk "{ print \$1 }" | sort | tr "\n" " ")
			echo "# igb filters: $f"
			[[ $f == "none ptpv1-l4-delay-req ptpv1-l4-sync ptpv2-event " ]]' _ "$W/igb-ts.out"
	hwstamp_ctl -i "$I" -t 1 -r 12 >"$W/igb-hw12.out" 2>&1
	t "igb driver: hwstamp_ctl sets TX on and ptpv2-event, SIOCGHWTSTAMP reads it back" igb-hw12 \
		is "$(hwts "$I")" "1 12"
	# the 82576 cannot stamp every packet: ALL refused (ERANGE), or, if a
	# driver took it, narrowed to a filter it has
	hwstamp_ctl -i "$I" -t 1 -r 1 >"$W/igb-hwall.out" 2>&1
	rc=$?
	now=$(hwts "$I")
	t "igb driver: SIOCSHWTSTAMP with the rx filter ALL refused or narrowed (exit $rc, now $now)" igb-hwall \
		bash -c '[[ $1 != 0 ]] && grep -q "SIOCSHWTSTAMP failed" "$3" || [[ -n $2 && ${2#* } != 1 ]]' _ "$rc" "$now" \
		"$W/igb-hwall.out"
	hwstamp_ctl -i "$I" -t 0 -r 0 >/dev/null 2>&1
	t "igb driver: stamping off again" "" is "$(hwts "$I")" "0 0"
}

# TX stamps come: a client with --timestamps hw, paced, across the two
# ports; the NIC's stamp for (nearly) every ping, for no pong.
test_igb_tx() {
	local n
	emit igb-tx "" "$I" "$J_IP" --timestamps hw --count 200 --interval 10000 --json "$W/igb-tx.json"
	n=$(jkey "$W/igb-tx.json" hw_stamps rx)
	echo "# igb tx: hw_stamps $(grep -o '"hw_stamps": {[^}]*}' "$W/igb-tx.json" 2>/dev/null); missing $(grep -o '"missing_stamps": {[^}]*}' "$W/igb-tx.json" 2>/dev/null)"
	t "igb tx: --timestamps hw: the NIC's TX stamps came (JSON hw_stamps.tx_nic > 0), no RX stamp (rx_nic 0 of $n)" igb-tx \
		bash -c '[[ $1 -gt 0 && $2 == 0 && $3 -gt 0 ]]' _ "$(jkey "$W/igb-tx.json" hw_stamps tx_nic)" \
		"$(jkey "$W/igb-tx.json" hw_stamps rx_nic)" "${n:-0}"
	# every pong lacks its T4 wire stamp; T1's is missing only where the
	# NIC skipped a send (at most a few, paced)
	t "igb tx: missing stamps: T4_HW for every pong, T1_HW for fewer than one in ten" igb-tx \
		bash -c '[[ -n $1 && -n $2 && $2 -gt 0 && $2 == $(($3 - $4)) ]] && (( $1 * 10 < $2 ))' _ \
		"$(jkey "$W/igb-tx.json" missing_stamps T1_HW)" "$(jkey "$W/igb-tx.json" missing_stamps T4_HW)" \
		"$(jkey "$W/igb-tx.json" packets received)" "$(jkey "$W/igb-tx.json" packets warmup)"
}

# The 82576 stamps no UDP datagram it receives: rant must say so (naming
# the rx filter the driver took) and, with --timestamps hw, stop with exit
# 1; with auto, measure on the kernel's stamps from the first pong on.
test_igb_rx() {
	local rtt
	emit igb-rxhw "" "$I" "$J_IP" --timestamps hw --count 200 --interval 10000
	t "igb rx: --timestamps hw without RX hardware stamps exits 1 (exit $RC)" igb-rxhw is "$RC" 1
	t "igb rx: --timestamps hw says \"no RX hardware stamps\" in one line naming the rx filter (ptpv2-event)" igb-rxhw \
		bash -c 'grep -i "no RX hardware stamps" "$1" | grep -Eqi "ptp_?v2[-_]event"' _ "$W/igb-rxhw.err"
	emit igb-rxauto "" "$I" "$J_IP" --timestamps auto --count 200 --interval 10000 --warmup 10 --json "$W/igb-rxauto.json"
	t "igb rx: --timestamps auto without RX hardware stamps exits 0 (exit $RC)" igb-rxauto is "$RC" 0
	t "igb rx: --timestamps auto says in one line: no RX hardware stamps, kernel stamps for the whole run" igb-rxauto \
		bash -c 'grep -i "no RX hardware stamps" "$1" "$2" | grep -qi "kernel stamps for the whole run"' _ \
		"$W/igb-rxauto.err" "$W/igb-rxauto.out"
	rtt=$(grep -o '"rtt": {"samples": [0-9]*' "$W/igb-rxauto.json" 2>/dev/null | sed 's/.*: //')
	t "igb rx: --timestamps auto: rtt samples ($rtt) = received - warm-up, > 0" igb-rxauto \
		bash -c '[[ -n $1 && $1 -gt 0 && $1 == $(($2 - $3)) ]]' _ "$rtt" \
		"$(jkey "$W/igb-rxauto.json" packets received)" "$(jkey "$W/igb-rxauto.json" packets warmup)"
}

# Back-to-back pings: the 82576 stamps one TX packet at a time and skips
# a send while the last one's stamp is pending (ethtool -S counts
# tx_hwtstamp_skipped).  How many it skips depends on the host; what is
# asserted is that rant's count and message agree with the driver's.
test_igb_b2b() {
	local sk0 to0 sk1 to1 miss pat
	sk0=$(igb_stat "$I" tx_hwtstamp_skipped) to0=$(igb_stat "$I" tx_hwtstamp_timeouts)
	emit igb-b2b "" "$I" "$J_IP" --timestamps hw --count 2000 --json "$W/igb-b2b.json"
	sk1=$(igb_stat "$I" tx_hwtstamp_skipped) to1=$(igb_stat "$I" tx_hwtstamp_timeouts)
	miss=$(jkey "$W/igb-b2b.json" missing_stamps T1_HW)
	echo "# igb b2b: tx_hwtstamp_skipped +$((sk1 - sk0)), tx_hwtstamp_timeouts +$((to1 - to0)), rant's T1_HW missing $miss of $(jkey "$W/igb-b2b.json" packets received)"
	t "igb b2b: ethtool -S counts tx_hwtstamp_skipped and tx_hwtstamp_timeouts" "" \
		bash -c '[[ -n $1 && -n $2 ]]' _ "$sk1" "$to1"
	# each skipped send is a ping without its T1 wire stamp (whose pong
	# came back: a lost one is not counted)
	t "igb b2b: every send the driver skipped is a missing T1_HW stamp in rant's count" igb-b2b \
		bash -c '[[ -n $1 ]] && (( $1 >= $2 - $3 ))' _ "$miss" "$((sk1 - sk0))" "$(jkey "$W/igb-b2b.json" packets lost)"
	# rant names the pattern (JSON tx_stamp_pattern.pattern, and its
	# "one TX packet at a time" line) when the share missing is large
	# enough to be one; then the driver must have skipped sends
	pat=$(grep -o '"tx_stamp_pattern": {[^}]*}' "$W/igb-b2b.json" 2>/dev/null | grep -o '"pattern": *[a-z_"]*' | sed 's/.*: *//')
	echo "# igb b2b: rant's tx_stamp_pattern.pattern: $pat"
	t "igb b2b: rant's JSON pattern (${pat:-none}) and its one-TX-packet-at-a-time line agree" igb-b2b \
		bash -c 'if [[ $1 == "\"one_at_a_time\"" ]]; then grep -q "one TX packet at a time" "$2" "$3"
			else [[ $1 == null || $1 == "\"ptp_only\"" ]] && ! grep -q "one TX packet at a time" "$2" "$3"; fi' \
		_ "$pat" "$W/igb-b2b.out" "$W/igb-b2b.err"
	t "igb b2b: rant blames skipped TX stamps only when the driver counted some (+$((sk1 - sk0)))" igb-b2b \
		bash -c '[[ $1 != "\"one_at_a_time\"" ]] || (( $2 > 0 ))' _ "$pat" "$((sk1 - sk0))"
	# and the other way: a driver that skipped one send in a hundred or
	# more left rant a share large enough to name (rant's
	# tx_stamp_pattern: a share from 1 % up to all but one)
	t "igb b2b: the driver skipped one send in a hundred or more (+$((sk1 - sk0))): rant names the pattern" igb-b2b \
		bash -c '(( $2 * 100 < $3 )) || [[ $1 == "\"one_at_a_time\"" ]]' _ "$pat" "$((sk1 - sk0))" \
		"$(jkey "$W/igb-b2b.json" packets received)"
}

if want igb_driver igb || want igb_tx igb || want igb_rx igb || want igb_b2b igb; then
	if igb_setup; then
		if ! reflector igb-r igbr "$J" --timestamps sw; then
			not_ok "igb: reflector on $J listens"
			show igb-r
		fi
		for s in igb_driver igb_tx igb_rx igb_b2b; do
			want "$s" igb || continue
			t0=$SECONDS
			"test_$s"
			echo "# guest: $s took $((SECONDS - t0)) s"
		done
		stop "$RPID" INT
	fi
	# the next section finds the lab as it was: I without its address,
	# J back here (a deleted namespace returns its devices)
	ip addr flush dev "$I" 2>/dev/null
	ip link set "$I" down 2>/dev/null
	ip netns del igbr 2>/dev/null
fi
