#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The model NIC's part of tests/vm/guest.sh (sourced by it, with its
# helpers and the lab set up, when /rant/mod/rantnic.ko was built for the
# guest's kernel): tests/vm/mod/rantnic, pairs of Ethernet ports whose PHCs
# drift apart and that stamp every frame, with the true departure and
# arrival of each frame in debugfs (the module's header comment gives the
# formats).  Port MA (rn0) stays here, its peer MB (rn1) goes into netns
# refl.  Every bound below is on the error of a measurement against the
# model's truth, never on a latency.
#
# Assertions are `bash -c '...' _ ARGS` scripts (one failing is one test):
# shellcheck disable=SC2016,SC2153

MOD=/rant/mod/rantnic.ko
RN=/sys/kernel/debug/rantnic
MA_IP=10.60.0.1
MB_IP=10.60.0.2

# model_down: the module unloaded (its ports go with it)
model_down() {
	if grep -q '^rantnic ' /proc/modules; then
		rmmod rantnic
	fi
}

# model_up PARAM...: the module loaded with PARAMs; MA here and MB in refl,
# addressed and up; PHC_MA, PHC_MB their PHCs' indexes
model_up() {
	model_down
	insmod "$MOD" "$@" || return 1
	MA=$(if_by_mac 02:52:4e:00:00:00) MB=$(if_by_mac 02:52:4e:00:00:01)
	[[ -n $MA && -n $MB ]] || return 1
	ip link set "$MB" netns refl
	ip addr add "$MA_IP/24" dev "$MA"
	in_r ip addr add "$MB_IP/24" dev "$MB"
	ip link set "$MA" up
	in_r ip link set "$MB" up
	wait_for 30 link_up "$MA" && wait_for 30 link_up "$MB" refl || return 1
	PHC_MA=$(ethtool -T "$MA" | sed -n 's/^PTP Hardware Clock: *//p')
	PHC_MB=$(in_r ethtool -T "$MB" | sed -n 's/^PTP Hardware Clock: *//p')
	echo "# model: $MA (ptp$PHC_MA) - $MB (ptp$PHC_MB, in refl): $*"
	ping -c 1 -W 5 "$MB_IP" >/dev/null
}

# clock PORT FIELD: the model's truth of a port's PHC now (clocks file):
# offset_ns (PHC - CLOCK_REALTIME) or rate_ppb
clock() {
	awk -v p="$1" -v f="$2" '$1 == p { print (f == "offset_ns" ? $4 : $5) }' "$RN/clocks"
}

# estat NS IFACE COUNTER: an ethtool -S counter of the port
estat() {
	ip netns exec "${1:-init}" ethtool -S "$2" 2>/dev/null | awk -v c="$3:" '$1 == c { print $2 }'
}

test_model_basic() {
	local o1 o2 r
	ethtool -i "$MA" >"$W/m-drv.out" 2>&1
	ethtool -T "$MA" >"$W/m-ts.out" 2>&1
	t "model: $MA is rantnic" m-drv has m-drv '^driver: rantnic$'
	t "model: ethtool -T claims hardware TX/RX stamps, a PHC, tx types off/on/onestep-sync, filters none/all/ptpv2-event" m-ts \
		bash -c 'for w in hardware-transmit hardware-receive hardware-raw-clock off on onestep-sync none all ptpv2-event; do
			grep -Eq "^[[:space:]]*$w( |$)" "$1" || { echo "# missing: $w"; exit 1; }; done' _ "$W/m-ts.out"
	t "model: each port has its own PHC, the one its clocks file names" m-ts \
		bash -c '[[ -c /dev/ptp$1 && -c /dev/ptp$2 && $1 != "$2" ]] &&
			awk -v a="$1" -v b="$2" "\$1 == 0 && \$3 == a { n++ } \$1 == 1 && \$3 == b { n++ } END { exit n != 2 }" "$3"' \
		_ "$PHC_MA" "$PHC_MB" "$RN/clocks"

	# SIOCSHWTSTAMP through hwstamp_ctl: any PTP filter widened to ALL
	hwstamp_ctl -i "$MA" -t 1 -r 12 >"$W/m-hw1.out" 2>&1
	t "model: hwstamp_ctl -t 1 -r 12 (ptpv2-event) set, read back as 1 1 (widened to all)" m-hw1 is "$(hwts "$MA")" "1 1"
	hwstamp_ctl -i "$MA" -t 0 -r 0 >/dev/null 2>&1

	# phc_ctl against the model's own account of its clock
	phc_ctl "/dev/ptp$PHC_MA" get >"$W/m-get.out" 2>&1
	t "model: phc_ctl get reads the PHC" m-get has m-get 'clock time is [0-9]+\.'
	phc_ctl "/dev/ptp$PHC_MA" cmp >"$W/m-cmp.out" 2>&1
	o1=$(sed -n 's/.*offset from CLOCK_REALTIME is \(-\?[0-9]*\)ns.*/\1/p' "$W/m-cmp.out")
	o2=$(clock 0 offset_ns)
	echo "# model: phc_ctl cmp $o1 ns (CLOCK_REALTIME - PHC), the model's PHC - CLOCK_REALTIME $o2 ns"
	# the PHC drifts at most 500 ppm (5 ns in 10 us); the bound is the
	# reading's window under TCG
	t "model: phc_ctl cmp agrees with the model's offset within 50 us" m-cmp \
		bash -c '[[ -n $1 && -n $2 ]] && d=$(($1 + $2)) && (( ${d#-} < 50000 ))' _ "$o1" "$o2"
	phc_ctl "/dev/ptp$PHC_MA" adj 0.25 >"$W/m-adj.out" 2>&1
	o1=$(clock 0 offset_ns)
	t "model: phc_ctl adj 0.25 steps the PHC by 0.25 s (model: $o2 -> $o1 ns)" m-adj \
		bash -c 'd=$(($2 - $1 - 250000000)); (( ${d#-} < 1000000 ))' _ "$o2" "$o1"
	phc_ctl "/dev/ptp$PHC_MA" -- adj -0.25 >"$W/m-adj2.out" 2>&1
	o2=$(clock 0 offset_ns)
	t "model: phc_ctl adj -0.25 steps it back ($o2 ns)" m-adj2 bash -c '(( ${1#-} < 1000000 ))' _ "$o2"
	phc_ctl "/dev/ptp$PHC_MA" freq 100000 >"$W/m-freq.out" 2>&1
	r=$(clock 0 rate_ppb)
	t "model: phc_ctl freq 100000 (ppb) on a +50 ppm PHC: rate 150000 ppb (is $r)" m-freq is "$r" 150000.000
	phc_ctl "/dev/ptp$PHC_MA" freq 0 >/dev/null 2>&1
	t "model: freq 0 back to its own +50 ppm" "" is "$(clock 0 rate_ppb)" 50000.000
}

# join CSV TRUTH: each measured row of a client's csv log joined with the
# model's records of its ping (the frame whose TX stamp is T1) and its pong
# (whose TX stamp is T3).  Prints "rows N joined J stampdiff S rtt E1
# network E2 lowrtt_seq Q offset_true O": S rows whose T2 or T4 is not the
# model's RX stamp of that frame; E1, E2 the largest |rant - truth| of the
# rtt and network metrics (truth: the true departures and arrivals,
# CLOCK_MONOTONIC); O the true PHC_B - PHC_A at the exchange Q of lowest
# network time, rant's "lowest-RTT exchange".
join() {
	awk -F'[ ,]' '
	function d(a, b,   x, y) { split(a, x, "."); split(b, y, "."); return (x[1] - y[1]) * 1e9 + (x[2] - y[2]) }
	function abs(v) { return v < 0 ? -v : v }
	FNR == 1 && NR != 1 { truth = 1 }
	!truth && /^#/ { next }
	!truth && $1 == "seq" { for (i = 1; i <= NF; i++) c[$i] = i; next }
	!truth { if ($2 == "ok") { n++; row[n] = $0 } next }
	/^#/ { next }
	{ dep[$10] = $8; arr[$10] = $9; rx[$10] = $11 }
	END {
		best = -1
		for (i = 1; i <= n; i++) {
			split(row[i], f, ",")
			t1 = f[c["t1_hw"]]; t2 = f[c["t2_hw"]]; t3 = f[c["t3_hw"]]; t4 = f[c["t4_hw"]]
			if (!(t1 in dep) || !(t3 in dep)) continue
			j++
			if (rx[t1] != t2 || rx[t3] != t4) s++
			rtt = arr[t3] - dep[t1]
			net = (arr[t1] - dep[t1]) + (arr[t3] - dep[t3])
			e = abs(f[c["rtt_ns"]] - rtt); if (e > e1) e1 = e
			e = abs(f[c["network_ns"]] - net); if (e > e2) e2 = e
			# rant takes the offset of the exchange of lowest network time
			if (best < 0 || f[c["network_ns"]] < best) {
				best = f[c["network_ns"]]; q = f[c["seq"]]
				# PHC_B - PHC_A when the ping arrived: T2 against T1
				# and the time it took (at +-500 ppm: under 1 ns)
				off = d(t2, t1) - (arr[t1] - dep[t1])
			}
		}
		printf "rows %d joined %d stampdiff %d rtt %d network %d lowrtt_seq %s offset_true %d\n", n, j, s, e1, e2, q, off
	}' "$1" "$2"
}

# jclock FILE BLOCK KEY: a number of a block of rant's JSON ("phc", "clock")
jclock() {
	tr -d ' \n' <"$1" | grep -o "\"$2\":{[^}]*" | grep -o "\"$3\":-\?[0-9.]*" | head -n 1 | sed 's/.*://'
}

# Two ports +-50 ppm apart, a wire of 20 us +- 2 us: rant's four NIC
# stamps of each transaction are the model's, its rtt and network are the
# truth within what the PHCs' rate errors make of them (each PHC's ppm
# times the interval it measures), its offset between the clocks is the
# truth within half the jitter, its drifts within 1 ppm.
test_model_rant() {
	local rpid j rows s e1 e2 off offt ppm cppm
	echo 2000 >"$RN/jitter_ns"
	echo 1 >"$RN/truth"
	if ! reflector mr refl "$MB" --timestamps hw --port 12600; then
		not_ok "model: reflector --timestamps hw on $MB listens"
		show mr
		return
	fi
	rpid=$RPID
	emit mc "" "$MA" "$MB_IP" --port 12600 --timestamps hw --count 300 --interval 5000 \
		-l "$W/mc.csv" --log-format csv --json "$W/mc.json"
	stop "$rpid" INT
	cp "$RN/truth" "$W/mc.truth"
	echo 0 >"$RN/jitter_ns"
	t "model: rant --timestamps hw between the model's ports: complete (exit $RC)" mc complete mc 300
	t "model: every transaction has its four NIC stamps (JSON missing stamps 0)" mc \
		has mc '^Missing stamps: none'
	j=$(join "$W/mc.csv" "$W/mc.truth")
	echo "# model: join of rant's csv and the model's truth: $j"
	read -r _ rows _ _ _ s _ e1 _ e2 _ _ _ offt <<<"$j"
	t "model: every measured row's T1..T4 are the model's stamps of its ping and pong ($rows rows)" mc \
		bash -c '[[ $1 == 300 && $2 == 300 && $3 == 0 ]]' _ "$rows" "$(awk '{ print $4 }' <<<"$j")" "$s"
	t "model: rtt within 100 ppm + 2 ns of the truth (largest error $e1 ns)" mc \
		bash -c '[[ -n $1 ]] && (( $1 <= 2 + $2 / 10000 ))' _ "$e1" "$(sed -n 's/.*MAX: \([0-9]*\) ns.*/\1/p' "$W/mc.out")"
	t "model: network within 100 ppm of the rtt + 2 ns of the truth (largest error $e2 ns)" mc \
		bash -c '[[ -n $1 ]] && (( $1 <= 2 + $2 / 10000 ))' _ "$e2" "$(sed -n 's/.*MAX: \([0-9]*\) ns.*/\1/p' "$W/mc.out")"
	off=$(jclock "$W/mc.json" clock offset_ns)
	t "model: the clocks' offset at the lowest-RTT exchange within 1.1 us of the truth (rant $off, model $offt ns)" mc \
		bash -c '[[ -n $1 && -n $2 ]] && d=$(($1 - $2)) && (( ${d#-} <= 1100 ))' _ "$off" "$offt"
	ppm=$(jclock "$W/mc.json" phc drift_ppm)
	cppm=$(jclock "$W/mc.json" clock drift_ppm)
	echo "# model: rant's drifts: PHC $ppm ppm (model +50), server - client $cppm ppm (model -100)"
	t "model: rant's PHC drift against CLOCK_REALTIME within 1 ppm of the model's +50 ($ppm)" mc \
		awk -v p="$ppm" 'BEGIN { exit !(p != "" && p > 49 && p < 51) }'
	t "model: rant's server - client drift within 1 ppm of the model's -100 ($cppm)" mc \
		awk -v p="$cppm" 'BEGIN { exit !(p != "" && p > -101 && p < -99) }'
}

if want model; then
	t0=$SECONDS
	if model_up ppm=50,-50; then
		ok "model: rantnic loaded, $MA here and $MB in refl, link up"
		test_model_basic
		test_model_rant
	else
		not_ok "model: rantnic loaded, ports up"
		dmesg | tail -n 20 | sed 's/^/#   /'
	fi
	model_down
	echo "# guest: model took $((SECONDS - t0)) s"
fi
