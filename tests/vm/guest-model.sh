#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The model NIC's part of tests/vm/guest.sh (sourced by it, with its
# helpers and the lab set up, when /rant/mod/rantnic.ko was built for the
# guest's kernel): tests/vm/mod/rantnic, pairs of Ethernet ports whose PHCs
# drift apart and that stamp every frame, with the true departure and
# arrival of each frame in debugfs (the module's header comment gives the
# formats).  Port MA (rn0) stays here, its peer MB (rn1) goes into netns
# refl.  Every bound below is on the error of a measurement against the
# model's truth, never on a latency; rant's runs give each pong 10 s
# (--timeout), so that a guest starved by a loaded host makes none late.
#
# Assertions are `bash -c '...' _ ARGS` scripts (one failing is one test):
# shellcheck disable=SC2016,SC2153

MOD=/rant/mod/rantnic.ko
RN=/sys/kernel/debug/rantnic
MA_IP=10.60.0.1
MB_IP=10.60.0.2
# the frame of rant's default 64-byte datagram (Ethernet, IPv4, UDP): its
# pings and pongs in the truth, not its FIN and FIN_ACK
PLEN=106

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
	[[ -e /run/netns/refl ]] || ip netns add refl
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
	# the bound: the reading's window under TCG (the PHC's 50 ppm are
	# nothing in it)
	t "model: phc_ctl cmp agrees with the model's offset within 50 us" m-cmp \
		bash -c '[[ -n $1 && -n $2 ]] && d=$(($1 + $2)) && (( ${d#-} < 50000 ))' _ "$o1" "$o2"
	# a step: the offset moves by the step and by the PHC's own 50 ppm
	# between the two readings (the clocks file's mono_ns)
	grep '^0 ' "$RN/clocks" >"$W/m-c1.out"
	phc_ctl "/dev/ptp$PHC_MA" adj 0.25 >"$W/m-adj.out" 2>&1
	grep '^0 ' "$RN/clocks" >"$W/m-c2.out"
	phc_ctl "/dev/ptp$PHC_MA" -- adj -0.25 >"$W/m-adj2.out" 2>&1
	grep '^0 ' "$RN/clocks" >"$W/m-c3.out"
	r=$(cat "$W/m-c1.out" "$W/m-c2.out" "$W/m-c3.out" |
		awk '{ o[NR] = $4; m[NR] = $6 } END { printf "%.0f %.0f", o[2] - o[1] - 250e6 - (m[2] - m[1]) * 50e-6,
			o[3] - o[2] + 250e6 - (m[3] - m[2]) * 50e-6 }')
	t "model: phc_ctl adj 0.25, then -- adj -0.25: steps of exactly that, within 5 ns of rounding (errors $r ns)" "m-adj m-adj2" \
		bash -c 'read -r a b <<<"$1"; [[ -n $b ]] && (( ${a#-} <= 5 && ${b#-} <= 5 ))' _ "$r"
	phc_ctl "/dev/ptp$PHC_MA" freq 100000 >"$W/m-freq.out" 2>&1
	r=$(clock 0 rate_ppb)
	t "model: phc_ctl freq 100000 (ppb) on a +50 ppm PHC: rate 150000 ppb (is $r)" m-freq is "$r" 150000.000
	phc_ctl "/dev/ptp$PHC_MA" freq 0 >/dev/null 2>&1
	t "model: freq 0 back to its own +50 ppm" "" is "$(clock 0 rate_ppb)" 50000.000
}

# join CSV TRUTH: each measured row of a client's csv log that has all four
# stamps joined with the model's records of its ping (the frame whose TX
# stamp is T1) and its pong (whose TX stamp is T3).  Prints "rows N (the
# measured rows, with or without their stamps) joined J stampdiff S rtt E1
# network E2 lowrtt_seq Q offset_true O": S rows whose T2 or T4 is not the
# model's RX stamp of that frame; E1, E2 the largest |rant - truth| of the
# rtt and network metrics (truth: the true departures and arrivals,
# CLOCK_MONOTONIC); O the true PHC_B - PHC_A in the middle of the
# exchange Q of lowest network time, rant's "lowest-RTT exchange".
join() {
	awk -F'[ ,]' '
	# a - b of two seconds.nanoseconds stamps (the nanoseconds led by a 1:
	# busybox awk reads a number with a leading 0 as octal)
	function d(a, b,   x, y) { split(a, x, "."); split(b, y, "."); return (x[1] - y[1]) * 1e9 + (("1" x[2]) - ("1" y[2])) }
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
			# (a row without all four stamps has nothing to join)
			if (t1 == "" || t2 == "" || t3 == "" || t4 == "" || !(t1 in dep) || !(t3 in dep)) continue
			j++
			if (rx[t1] != t2 || rx[t3] != t4) s++
			rtt = arr[t3] - dep[t1]
			net = (arr[t1] - dep[t1]) + (arr[t3] - dep[t3])
			e = abs(f[c["rtt_ns"]] - rtt); if (e > e1) e1 = e
			e = abs(f[c["network_ns"]] - net); if (e > e2) e2 = e
			# rant takes the offset of the exchange of lowest network time
			if (best < 0 || f[c["network_ns"]] < best) {
				best = f[c["network_ns"]]; q = f[c["seq"]]
				# PHC_B - PHC_A when the ping arrived (T2 against T1
				# and the time it took) and when the pong left (T3
				# against T4 and its time), their mean: the offset
				# of the clocks in the middle of the exchange (the ppm
				# of the PHCs over 20 us: under 1 ns)
				off = (d(t2, t1) - (arr[t1] - dep[t1]) + d(t3, t4) + (arr[t3] - dep[t3])) / 2
			}
		}
		printf "rows %d joined %d stampdiff %d rtt %d network %d lowrtt_seq %s offset_true %.0f\n", n, j, s, e1, e2, q, off
	}' "$1" "$2"
}

# truth_fit CSV TRUTH: rant's server - client drift estimator run on the
# truth: the measured rows with all four stamps in order, one point per
# quarter second of their T1 (rant's FIT_WINDOW), the one of lowest
# network time (rant's network_ns), its y the true PHC_B - PHC_A in the middle
# of that exchange (as join's), a least-squares slope.  Prints "DRIFT_PPM
# MAXABS_NS": the slope, and the largest |true offset| of any exchange.
truth_fit() {
	awk -F'[ ,]' '
	function d(a, b,   x, y) { split(a, x, "."); split(b, y, "."); return (x[1] - y[1]) * 1e9 + (("1" x[2]) - ("1" y[2])) }
	function point() { X = (wx - x0) / 1e9; n++; sx += X; sy += wy; sxx += X * X; sxy += X * wy; have = 0 }
	FNR == 1 && NR != 1 { truth = 1 }
	!truth && /^#/ { next }
	!truth && $1 == "seq" { for (i = 1; i <= NF; i++) c[$i] = i; next }
	!truth { if ($2 == "ok") { r++; row[r] = $0 } next }
	/^#/ { next }
	{ dep[$10] = $8; arr[$10] = $9 }
	END {
		for (i = 1; i <= r; i++) {
			split(row[i], f, ",")
			t1 = f[c["t1_hw"]]; t2 = f[c["t2_hw"]]; t3 = f[c["t3_hw"]]; t4 = f[c["t4_hw"]]
			if (t1 == "" || t2 == "" || t3 == "" || t4 == "" || !(t1 in dep) || !(t3 in dep)) continue
			off = (d(t2, t1) - (arr[t1] - dep[t1]) + d(t3, t4) + (arr[t3] - dep[t3])) / 2
			if (off * off > m * m) m = off < 0 ? -off : off
			if (t1f == "") t1f = t1
			x = d(t1, t1f); q = f[c["network_ns"]] + 0
			if (!n && !have) x0 = x
			if (have && x - ws >= 250e6) point()
			if (!have) { ws = x; have = 1; wq = -1 }
			if (wq < 0 || q < wq) { wq = q; wx = x; wy = off }
		}
		if (have) point()
		dd = n * sxx - sx * sx
		if (n >= 3 && dd > 1e-12) printf "%.4f %.0f\n", (n * sxy - sx * sy) / dd / 1000, m
	}' "$1" "$2"
}

# jclock FILE BLOCK KEY: a number of a block of rant's JSON ("phc", "clock")
jclock() {
	tr -d ' \n' <"$1" | grep -o "\"$2\":{[^}]*" | grep -o "\"$3\":-\?[0-9.]*" | head -n 1 | sed 's/.*://'
}

# truth_count FILE AWK-CONDITION: how many records of a
# truth file meet the condition ($2 src, $3 dst, $5 proto, $7 dport,
# $12 flags)
truth_count() {
	awk "!/^#/ && ($2) { n++ } END { print n + 0 }" "$1"
}

# missing NAME STAMP: the count of a stamp's misses in rant's JSON
missing() {
	tr -d ' \n' <"$W/$1.json" | grep -o '"missing_stamps":{[^}]*' | grep -o "\"$2\":[0-9]*" | sed 's/.*://'
}

# Two ports +-50 ppm apart, a wire of 20 us: rant's four NIC stamps of
# each transaction are the model's, its rtt and network are the truth
# within what the PHCs' rate errors make of them (each PHC's ppm times the
# interval it measures: 100 ppm of the rtt bounds both), its drifts within
# 1 ppm.  Its offset between the clocks "at the lowest-RTT exchange" (rant
# takes the one of lowest network time): the model's wire has no jitter
# for the first 30 pings, then 5 us more delay and 2 us of jitter, so that
# the lowest is one of the first 30; rant's offset must be the truth's in
# the middle of that exchange within 100 ns (the wire is symmetric there:
# only the PHCs' rate errors over 20 us and rounding are left; another
# exchange's is tens of us off, the clocks 100 ppm apart).
test_model_rant() {
	local rpid epid j rows s e1 e2 off offt ppm cppm max
	echo 1 >"$RN/truth"
	if ! reflector mr refl "$MB" --timestamps hw --port 12600; then
		not_ok "model: reflector --timestamps hw on $MB listens"
		show mr
		return
	fi
	rpid=$RPID
	timeout 120 "$RANT" -i "$MA" -a "$MB_IP" --port 12600 --timestamps hw --count 300 --interval 5000 --timeout 10000 \
		-l "$W/mc.csv" --log-format csv --json "$W/mc.json" >"$W/mc.out" 2>"$W/mc.err" &
	epid=$!
	wait_for 60 bash -c '(( $(grep -c " udp [0-9]* 12600 " "$1") >= 30 ))' _ "$RN/truth"
	echo 25000 >"$RN/delay_ns"
	echo 2000 >"$RN/jitter_ns"
	wait "$epid"
	RC=$?
	stop "$rpid" INT
	cp "$RN/truth" "$W/mc.truth"
	echo 20000 >"$RN/delay_ns"
	echo 0 >"$RN/jitter_ns"
	t "model: rant --timestamps hw between the model's ports: complete (exit $RC)" mc complete mc 300
	t "model: every transaction has its four NIC stamps" mc has mc '^Missing stamps: none'
	j=$(join "$W/mc.csv" "$W/mc.truth")
	echo "# model: join of rant's csv and the model's truth: $j"
	read -r _ rows _ _ _ s _ e1 _ e2 _ _ _ offt <<<"$j"
	max=$(sed -n 's/.*MAX: \([0-9]*\) ns.*/\1/p' "$W/mc.out")
	t "model: every measured row's T1..T4 are the model's stamps of its ping and pong ($rows rows)" mc \
		bash -c '[[ $1 == 300 && $2 == 300 && $3 == 0 ]]' _ "$rows" "$(awk '{ print $4 }' <<<"$j")" "$s"
	t "model: rtt within 100 ppm of the largest rtt + 2 ns of the truth (largest error $e1 ns)" mc \
		bash -c '[[ -n $1 && -n $2 ]] && (( $1 <= 2 + $2 / 10000 ))' _ "$e1" "$max"
	t "model: network within 100 ppm of the largest rtt + 2 ns of the truth (largest error $e2 ns)" mc \
		bash -c '[[ -n $1 && -n $2 ]] && (( $1 <= 2 + $2 / 10000 ))' _ "$e2" "$max"
	off=$(jclock "$W/mc.json" clock offset_ns)
	t "model: the clocks' offset at the lowest-RTT exchange within 100 ns of the truth there (rant $off, model $offt ns)" mc \
		bash -c '[[ -n $1 && -n $2 ]] && d=$(($1 - $2)) && (( ${d#-} <= 100 ))' _ "$off" "$offt"
	ppm=$(jclock "$W/mc.json" phc drift_ppm)
	cppm=$(jclock "$W/mc.json" clock drift_ppm)
	echo "# model: rant's drifts: PHC $ppm ppm (model +50), server - client $cppm ppm (model -100)"
	t "model: rant's PHC drift against CLOCK_REALTIME within 1 ppm of the model's +50 ($ppm)" mc \
		awk -v p="$ppm" 'BEGIN { exit !(p != "" && p > 49 && p < 51) }'
	t "model: rant's server - client drift within 1 ppm of the model's -100 ($cppm)" mc \
		awk -v p="$cppm" 'BEGIN { exit !(p != "" && p > -101 && p < -99) }'
}

# A port that stamps PTP event messages only (ptp_only, as igb's 82576):
# SIOCSHWTSTAMP refuses ALL (ERANGE) and narrows a v2 filter to
# PTP_V2_EVENT; rant --timestamps hw gets no RX stamp and says so (exit
# 1), auto falls back to the kernel's stamps, --ptp-probe gets them all,
# and so does ptp4l over L2.
test_model_ptponly() {
	local rpid n r d
	echo Y >"$RN/rn0/ptp_only"
	echo Y >"$RN/rn1/ptp_only"
	ethtool -T "$MA" >"$W/po-ts.out" 2>&1
	t "model: ptp_only: ethtool -T claims ptpv2-event and not all" po-ts \
		bash -c 'grep -q "^[[:space:]]*ptpv2-event" "$1" && ! grep -q "^[[:space:]]*all$" "$1"' _ "$W/po-ts.out"
	hwstamp_ctl -i "$MA" -t 1 -r 1 >"$W/po-hw1.out" 2>&1
	t "model: ptp_only: SIOCSHWTSTAMP with ALL refused with ERANGE (hwstamp_ctl exit $?)" po-hw1 \
		has po-hw1 'out of range'
	hwstamp_ctl -i "$MA" -t 1 -r 9 >"$W/po-hw2.out" 2>&1
	t "model: ptp_only: a v2 L4 Sync filter (9) narrowed to ptpv2-event (12)" po-hw2 is "$(hwts "$MA")" "1 12"
	hwstamp_ctl -i "$MA" -t 0 -r 0 >/dev/null 2>&1
	echo 1 >"$RN/truth"
	if ! reflector po-r refl "$MB" --port 12610; then
		not_ok "model: ptp_only: reflector listens"
		show po-r
	else
		rpid=$RPID
		emit po-hw "" "$MA" "$MB_IP" --port 12610 --timestamps hw --count 100
		cp "$RN/truth" "$W/po-hw.truth"
		# (rant stops once it has judged the NIC: 64 pongs or so, not all 100)
		t "model: ptp_only: the model stamped none of rant's pings and pongs on arrival (truth)" po-hw \
			bash -c '[[ $1 == 0 && $3 -gt 0 && $2 -ge $((2 * $3)) ]]' _ \
			"$(truth_count "$W/po-hw.truth" '$5 == "udp" && $12 ~ /R/')" \
			"$(truth_count "$W/po-hw.truth" '$5 == "udp"')" "$(packets po-hw sent)"
		t "model: ptp_only: --timestamps hw exits 1 (exit $RC)" po-hw is "$RC" 1
		t "model: ptp_only: --timestamps hw says: no RX hardware stamps" po-hw has po-hw 'no RX hardware stamps'
		emit po-auto "" "$MA" "$MB_IP" --port 12610 --count 100 -w 5 --timeout 10000
		t "model: ptp_only: --timestamps auto exits 0 (exit $RC)" po-auto is "$RC" 0
		t "model: ptp_only: --timestamps auto: samples = received - warm-up ($(samples po-auto))" po-auto \
			bash -c '[[ $1 -gt 0 && $1 == $(($2 - $3)) ]]' _ "$(samples po-auto)" "$(packets po-auto received)" \
			"$(packets po-auto warm-up)"
		stop "$rpid" INT
	fi
	echo 1 >"$RN/truth"
	# --ptp-probe listens on UDP port 319 (not reflector's --port)
	ip netns exec refl "$RANT" -i "$MB" --ptp-probe --timestamps hw >"$W/pp-r.out" 2>"$W/pp-r.err" &
	rpid=$!
	if ! wait_for 60 udp_listening refl 319; then
		not_ok "model: ptp_only: reflector --ptp-probe listens"
		show pp-r
		stop "$rpid"
	else
		emit pp "" "$MA" "$MB_IP" --ptp-probe --timestamps hw --count 200 --timeout 10000 --json "$W/pp.json"
		stop "$rpid" INT
		cp "$RN/truth" "$W/pp.truth"
		t "model: ptp_only: --ptp-probe --timestamps hw: complete (exit $RC)" pp complete pp 200
		t "model: ptp_only: --ptp-probe: no stamp missing" pp has pp '^Missing stamps: none'
		n=$(truth_count "$W/pp.truth" '$7 == 319')
		r=$(truth_count "$W/pp.truth" '$7 == 319 && $12 ~ /R/')
		t "model: ptp_only: the model stamped every probe on arrival ($r of $n, both ways)" pp \
			bash -c '[[ $1 -ge 400 && $1 == "$2" ]]' _ "$r" "$n"
	fi
	# ptp4l over L2 on PTP-only ports: its filter (ptpv2-l2-event)
	# widened to ptpv2-event, its event messages stamped as they arrive
	if command -v ptp4l >/dev/null; then
		printf '[global]\nlogAnnounceInterval -2\nlogSyncInterval -3\nlogMinDelayReqInterval -3\n%s\n' \
			"tx_timestamp_timeout 200" >"$W/ptpo.cfg"
		ptp_run ptpo -2
		d=$(delays ptpo | tail -n 1)
		t "model: ptp_only: ptp4l -2 between the ports: the slave reaches SLAVE" "ptpo-s ptpo-m" has ptpo-s 'to SLAVE'
		t "model: ptp_only: ptp4l -2: path delay within 100 ns of the wire's 20000 ns ($d)" ptpo-s \
			bash -c '[[ -n $1 ]] && d=$(($1 - 20000)) && (( ${d#-} <= 100 ))' _ "$d"
	fi
	echo N >"$RN/rn0/ptp_only"
	echo N >"$RN/rn1/ptp_only"
}

# TX stamps as real NICs give them: one in flight (igb), some never, some
# late; and a link that goes down mid-run.
test_model_tx() {
	local rpid epid sk ms lo up ma mr
	if ! reflector tx-r refl "$MB" --port 12620 --timestamps hw; then
		not_ok "model: tx: reflector listens"
		show tx-r
		return
	fi
	rpid=$RPID
	# one in flight, each stamp 5 ms late: back-to-back, the next
	# pings leave before the last one's stamp came
	echo Y >"$RN/rn0/tx_one_inflight"
	echo 1 >"$RN/rn0/tx_late_every"
	echo 5000000 >"$RN/rn0/tx_late_ns"
	echo 1 >"$RN/truth"
	emit tx1 "" "$MA" "$MB_IP" --port 12620 --timestamps hw --count 300 --timeout 10000 --json "$W/tx1.json"
	cp "$RN/truth" "$W/tx1.truth"
	sk=$(truth_count "$W/tx1.truth" "\$2 == 0 && \$4 == $PLEN && \$7 == 12620 && \$12 ~ /S/")
	ms=$(missing tx1 T1_HW)
	echo "# model: one in flight: the model skipped $sk ping stamps, rant misses $ms T1"
	t "model: one TX stamp in flight: rant ends well, nothing lost (exit $RC)" tx1 \
		bash -c '[[ $1 == 0 && $2 == 300 && $3 == 300 ]]' _ "$RC" "$(packets tx1 sent)" "$(packets tx1 received)"
	t "model: one TX stamp in flight: the model skipped some ($sk) and rant misses as many T1 ($ms)" tx1 \
		bash -c '[[ $1 -gt 0 && $1 == "$2" ]]' _ "$sk" "$ms"
	t "model: one TX stamp in flight: rant names the pattern one_at_a_time" tx1 \
		bash -c 'tr -d " \n" <"$1" | grep -q "\"pattern\":\"one_at_a_time\""' _ "$W/tx1.json"
	echo N >"$RN/rn0/tx_one_inflight"

	# every 25th stamp never comes, every 10th 2 ms late
	echo 25 >"$RN/rn0/tx_drop_every"
	echo 10 >"$RN/rn0/tx_late_every"
	echo 2000000 >"$RN/rn0/tx_late_ns"
	echo 1 >"$RN/truth"
	emit tx2 "" "$MA" "$MB_IP" --port 12620 --timestamps hw --count 300 --interval 5000 --timeout 10000 \
		--json "$W/tx2.json"
	cp "$RN/truth" "$W/tx2.truth"
	sk=$(truth_count "$W/tx2.truth" "\$2 == 0 && \$4 == $PLEN && \$7 == 12620 && \$12 ~ /D/")
	ms=$(missing tx2 T1_HW)
	echo "# model: dropped $sk ping stamps, $(truth_count "$W/tx2.truth" '$2 == 0 && $7 == 12620 && $12 ~ /L/') late; rant misses $ms T1"
	t "model: lost and late TX stamps: rant ends well, nothing lost (exit $RC)" tx2 \
		bash -c '[[ $1 == 0 && $2 == 300 && $3 == 300 ]]' _ "$RC" "$(packets tx2 sent)" "$(packets tx2 received)"
	t "model: lost TX stamps: rant misses exactly those T1 ($ms, model dropped $sk), none unmatched" tx2 \
		bash -c '[[ $1 -gt 0 && $1 == "$2" ]] && ! grep -q "unmatched TX stamps [1-9]" "$3"' _ "$sk" "$ms" "$W/tx2.out"
	echo 0 >"$RN/rn0/tx_drop_every"
	echo 0 >"$RN/rn0/tx_late_every"

	# the cable out for 0.3 s mid-run
	echo 1 >"$RN/truth"
	cat /proc/net/snmp >"$W/tx3-snmp1.out"
	timeout 120 "$RANT" -i "$MA" -a "$MB_IP" --port 12620 --timestamps hw --count 600 --interval 2000 \
		--json "$W/tx3.json" -l "$W/tx3.csv" --log-format csv >"$W/tx3.out" 2>"$W/tx3.err" &
	epid=$!
	wait_for 60 bash -c '(( $(grep -c " udp [0-9]* 12620 " "$1") >= 100 ))' _ "$RN/truth"
	echo 0 >"$RN/rn0/link"
	sleep 0.3
	echo 1 >"$RN/rn0/link"
	# CLOCK_MONOTONIC (the truth's) just after the cable went back in
	up=$(awk 'NR == 1 { print $6 }' "$RN/clocks")
	wait "$epid"
	RC=$?
	cat /proc/net/snmp >"$W/tx3-snmp2.out"
	ip -s link show "$MA" >"$W/tx3-link.out"
	ethtool -S "$MA" >>"$W/tx3-link.out"
	cp "$RN/truth" "$W/tx3.truth"
	sk=$(truth_count "$W/tx3.truth" "\$2 == 0 && \$4 == $PLEN && \$7 == 12620 && \$12 !~ /X/")
	ms=$(truth_count "$W/tx3.truth" "\$2 == 1 && \$4 == $PLEN && \$6 == 12620 && \$12 !~ /X/")
	echo "# model: link flap: rant $(grep '^Packets:' "$W/tx3.out"); the model delivered $sk pings, $ms pongs"
	t "model: link flap: rant goes on and ends well (exit $RC)" tx3 is "$RC" 0
	t "model: link flap: sent = received + lost, some lost" tx3 \
		bash -c '[[ $1 == 600 && $(($2 + $3)) == 600 && $3 -gt 0 ]]' _ "$(packets tx3 sent)" \
		"$(packets tx3 received)" "$(packets tx3 lost)"
	# a pong later than rant waits is counted late and lost; one this
	# host's receive buffer dropped (a loaded host) is rant's local drop
	t "model: link flap: rant's received + late + local drops = the pongs the model delivered ($ms)" tx3 \
		bash -c '[[ $(($1 + $2 + $3)) == "$4" ]]' _ "$(packets tx3 received)" "$(packets tx3 late)" \
		"$(grep -o '"local_receive_drops": [0-9]*' "$W/tx3.json" | grep -o '[0-9]*$')" "$ms"
	# it resumes: the pongs the model delivered that left after the cable
	# went back in, and how many of them are rows of rant's log with the
	# model's stamp as T3 (a pong rant waited too long for is late, not a
	# row; a row whose T3 did not come has none to match)
	read -r ma mr < <(awk -F'[ ,]' -v up="$up" -v len=$PLEN 'FNR == 1 && NR != 1 { truth = 1 }
		!truth && $1 == "seq" { for (i = 1; i <= NF; i++) c[$i] = i; next }
		!truth && !/^#/ && $2 == "ok" { t3[$(c["t3_hw"])] = 1; next }
		truth && !/^#/ && $2 == 1 && $4 == len && $6 == 12620 && $12 !~ /X/ && $8 > up { n++; if ($10 in t3) m++ }
		END { print n + 0, m + 0 }' "$W/tx3.csv" "$W/tx3.truth")
	t "model: link flap: rant resumes: of the $ma pongs the model delivered after the cable went back in, $mr are rows with their stamp, the rest late or without T3" tx3 \
		bash -c '[[ $1 -gt 0 && $2 -gt 0 && $2 -le $1 && $(($2 + $3 + ${4:-0})) -ge $1 ]]' _ "$ma" "$mr" "$(packets tx3 late)" \
		"$(missing tx3 T3_HW)"
	# rant splits its loss by direction with the reflector's count
	lo=$(sed -n 's/^Lost by direction: \([0-9]*\) pings on the way out, \([0-9]*\) pongs.*/\1 \2/p' "$W/tx3.out")
	stop "$rpid" INT
	if [[ -z $lo ]] && (( $(grep -c '^Stopped by: idle' "$W/tx-r.out") > 0 )); then
		# a host that starved the guest for longer than the idle timeout
		# made the reflector end the session: then rant must say the
		# split is not known, and why, never a wrong one
		t "model: link flap: the reflector ended the session by idle (a starved guest), and rant says the split is unknown" tx3 \
			grep -q '^Lost by direction: not known: the reflector did not see the whole session' "$W/tx3.out"
	else
		t "model: link flap: rant's loss by direction ($lo) is the model's: $((600 - sk)) pings, $((sk - ms)) pongs" tx3 \
			is "$lo" "$((600 - sk)) $((sk - ms))"
	fi
}

# ptp4l and rant on one port that stamps one TX packet at a time (as
# igb): whichever send asks first gets the stamp.  rant names the ptp4l at
# start and in its report, misses exactly the stamps of its pings the
# model skipped, and ptp4l says "timed out while polling for tx timestamp"
# when the model skipped one of its own (each stamp 2 ms late, so that one
# is always in flight while rant sends back-to-back).
test_model_share() {
	local rpid mpid spid sk_rant sk_ptp ms
	if ! command -v ptp4l >/dev/null; then
		skip "model: share: ptp4l not in the guest"
		return
	fi
	if ! reflector sh-r refl "$MB" --port 12630 --timestamps hw; then
		not_ok "model: share: reflector listens"
		show sh-r
		return
	fi
	rpid=$RPID
	printf '[global]\nlogAnnounceInterval -2\nlogSyncInterval -3\nlogMinDelayReqInterval -4\n%s\n' \
		"tx_timestamp_timeout 10" >"$W/sh.cfg"
	ip netns exec refl ptp4l -i "$MB" -m -f "$W/sh.cfg" -2 >"$W/sh-m.out" 2>&1 &
	mpid=$!
	ptp4l -i "$MA" -s -m -f "$W/sh.cfg" -2 >"$W/sh-s.out" 2>&1 &
	spid=$!
	wait_for 30 grep -q "to SLAVE\|UNCALIBRATED" "$W/sh-s.out"
	echo Y >"$RN/rn0/tx_one_inflight"
	echo 1 >"$RN/rn0/tx_late_every"
	echo 2000000 >"$RN/rn0/tx_late_ns"
	echo 1 >"$RN/truth"
	emit sh "" "$MA" "$MB_IP" --port 12630 --timestamps hw --count 3000 --timeout 10000 --json "$W/sh.json"
	cp "$RN/truth" "$W/sh.truth"
	echo N >"$RN/rn0/tx_one_inflight"
	echo 0 >"$RN/rn0/tx_late_every"
	stop "$spid"
	stop "$mpid"
	stop "$rpid" INT
	sk_rant=$(truth_count "$W/sh.truth" "\$2 == 0 && \$4 == $PLEN && \$7 == 12630 && \$12 ~ /S/")
	sk_ptp=$(truth_count "$W/sh.truth" '$2 == 0 && $5 == "88f7" && $12 ~ /S/')
	ms=$(missing sh T1_HW)
	echo "# model: share: skipped $sk_rant of rant's stamps and $sk_ptp of ptp4l's; rant misses $ms T1"
	t "model: share: rant names the ptp4l on its port at start (pid $spid)" sh \
		grep -q "warning: ptp4l (pid $spid) runs on $MA" "$W/sh.err"
	t "model: share: rant misses exactly the T1 stamps the model skipped ($ms, $sk_rant)" sh \
		bash -c '[[ $1 -gt 0 && $1 == "$2" ]]' _ "$ms" "$sk_rant"
	t "model: share: rant's report names ptp4l as asking for the same stamp" sh \
		grep -q "ptp4l (pid $spid) on $MA" "$W/sh.out"
	t "model: share: ptp4l says it timed out for a TX stamp if and only if the model skipped one of its ($sk_ptp)" sh-s \
		bash -c 'if [[ $1 -gt 0 ]]; then grep -q "timed out while polling for tx timestamp" "$2";
			else ! grep -q "timed out while polling for tx timestamp" "$2"; fi' _ "$sk_ptp" "$W/sh-s.out"
}

# ptp_run NAME TRANSPORT: ptp4l master on MB (in refl) and slave on MA,
# over TRANSPORT (-2 or -4), NAME.cfg their configuration, until the slave
# has settled (4 s at least, 44 at most); logs
# in NAME-m.out and NAME-s.out, the model's clocks at the end (both still
# running) in NAME.clocks
ptp_run() {
	local name=$1 mpid spid
	ip netns exec refl ptp4l -i "$MB" -m -f "$W/$name.cfg" "$2" >"$W/$name-m.out" 2>&1 &
	mpid=$!
	ptp4l -i "$MA" -s -m -f "$W/$name.cfg" "$2" >"$W/$name-s.out" 2>&1 &
	spid=$!
	# until the slave's servo says it is locked and settled (a loaded
	# host's guest takes longer): then the model's truth is read
	sleep 4
	wait_for 40 settled "$name"
	cat "$RN/clocks" >"$W/$name.clocks"
	stop "$spid"
	stop "$mpid"
}

# settled NAME: the slave's last four servo lines locked (s2), each within
# 1 us of its master by its own reckoning
settled() {
	grep 'master offset' "$W/$1-s.out" | tail -n 4 | awk '/ s2 / { n++ }
		{ for (i = 1; i < NF; i++) if ($i == "offset" && $(i + 1) * $(i + 1) > 1e6) bad = 1 }
		END { exit !(n == 4 && !bad) }'
}

# delays NAME: the path delays the slave reported, one a line (per sample
# or the summaries' mean)
delays() {
	sed -n -e 's/.*path delay *\(-\?[0-9]*\).*/\1/p' -e 's/.* delay *\(-\?[0-9]*\) +\/-.*/\1/p' "$W/$1-s.out"
}

# ptp4l between the model's ports, two-step and one-step, over L2 and
# UDP: the slave gets to SLAVE, its path delay is the wire's (20 us; the
# stamps are exact and the wire symmetric: within 100 ns), and once its
# servo says it has settled its PHC is on the master's by the model's
# truth: within 2 us, and their
# rates within 1 ppm of each other (the PHCs start 100 ppm apart).
test_model_ptp() {
	local tr step name d off rate
	if ! command -v ptp4l >/dev/null; then
		skip "model: ptp4l not in the guest"
		return
	fi
	for step in 1 0; do
		for tr in 2 4; do
			name=ptp$tr-$step
			printf '[global]\nlogAnnounceInterval -2\nlogSyncInterval -3\nlogMinDelayReqInterval -3\n%s\n%s\n' \
				"tx_timestamp_timeout 200" "twoStepFlag $step" >"$W/$name.cfg"
			# one clock per port, the PHCs at +-50 ppm, and the
			# slave's a second off
			phc_ctl "/dev/ptp$PHC_MA" set freq 0 -- adj 1 >/dev/null 2>&1
			phc_ctl "/dev/ptp$PHC_MB" set freq 0 >/dev/null 2>&1
			ptp_run "$name" "-$tr"
			d=$(delays "$name" | tail -n 1)
			off=$(awk '$1 == 0 { a = $4 } $1 == 1 { b = $4 } END { print a - b }' "$W/$name.clocks")
			rate=$(awk '$1 == 0 { a = $5 } $1 == 1 { b = $5 } END { print a - b }' "$W/$name.clocks")
			echo "# model: ptp4l -$tr twoStepFlag $step: last path delay $d ns; slave - master by the model: $off ns, $rate ppb"
			name="model: ptp4l -$tr, $([[ $step == 1 ]] && echo two-step || echo one-step)"
			t "$name: the slave reaches SLAVE" "ptp$tr-$step-s ptp$tr-$step-m" has "ptp$tr-$step-s" 'to SLAVE'
			t "$name: path delay within 100 ns of the wire's 20000 ns ($d)" "ptp$tr-$step-s" \
				bash -c '[[ -n $1 ]] && d=$(($1 - 20000)) && (( ${d#-} <= 100 ))' _ "$d"
			t "$name: the slave's PHC on the master's by the model: within 2 us ($off ns), 1 ppm ($rate ppb)" \
				"ptp$tr-$step-s" awk -v o="$off" -v r="$rate" 'BEGIN { exit !(o != "" && o * o <= 4e6 && r * r <= 1e6) }'
		done
	done
	t "model: one-step: the master's port wrote Syncs itself (tx_onestep_syncs $(estat refl "$MB" tx_onestep_syncs))" \
		"ptp2-0-m ptp4-0-m" bash -c '(( $1 > 0 ))' _ "$(estat refl "$MB" tx_onestep_syncs)"
	t "model: one-step: the master never timed out on a TX stamp" "ptp2-0-m ptp4-0-m" \
		bash -c '! grep -qi "timed out" "$1" "$2"' _ "$W/ptp2-0-m.out" "$W/ptp4-0-m.out"
}

# 8021q over the model's ports: rant on rn0.100 reaches rn0's stamping
# through the VLAN device, and every measured row's T1..T4 are the
# model's stamps of its tagged ping and pong.
test_model_vlan() {
	local rpid j
	if ! ip link add link "$MA" name "$MA.100" type vlan id 100 2>"$W/mv-add.err"; then
		skip "model: vlan: no VLAN device here ($(head -n 1 "$W/mv-add.err"))"
		return
	fi
	in_r ip link add link "$MB" name "$MB.100" type vlan id 100
	ip addr add 10.61.0.1/24 dev "$MA.100"
	in_r ip addr add 10.61.0.2/24 dev "$MB.100"
	ip link set "$MA.100" up
	in_r ip link set "$MB.100" up
	wait_for 30 ping -c 1 -W 1 10.61.0.2 >/dev/null
	echo 1 >"$RN/truth"
	if reflector mv-r refl "$MB.100" --timestamps hw --port 12630; then
		rpid=$RPID
		emit mv "" "$MA.100" 10.61.0.2 --port 12630 --timestamps hw --count 200 --timeout 10000 -l "$W/mv.csv" --log-format csv
		stop "$rpid" INT
		cp "$RN/truth" "$W/mv.truth"
		t "model: vlan: --timestamps hw over $MA.100: complete (exit $RC)" mv complete mv 200
		t "model: vlan: rant names $MA's PHC and $MA as the NIC under $MA.100" mv \
			has mv "PHC /dev/ptp$PHC_MA, .*the NIC under it $MA,"
		j=$(join "$W/mv.csv" "$W/mv.truth")
		echo "# model: vlan: $j"
		t "model: vlan: every row's T1..T4 are the model's stamps of its tagged frames" mv \
			bash -c 'read -r _ r _ j _ s _ <<<"$1"; [[ $r == 200 && $j == 200 && $s == 0 ]]' _ "$j"
	else
		not_ok "model: vlan: reflector on $MB.100 listens"
		show mv-r
	fi
	ip link del "$MA.100"
	in_r ip link del "$MB.100"
}

# median CSV COLUMN: the median of a column of a client's csv log, over its
# measured rows
median() {
	# the column line is the one beginning "seq,", wherever the "# rant" line stands
	awk -F, -v k="$2" '/^seq,/ { for (i = 1; i <= NF; i++) c[$i] = i; next } !/^#/ && $2 == "ok" { print $c[k] }' "$1" |
		sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# phc2sys puts both PHCs on CLOCK_REALTIME (the model's offsets within
# 5 us after 6 s; some 20 ns seen); then rant, its PHCs disciplined,
# measures the one-way delays of an asymmetric wire (MA sends 30 us
# slower): the medians of forward (50 us) and backward (20 us) within
# 5 us, which a swap of the two, or an offset taken out twice, exceeds.
test_model_oneway() {
	local p1 p2 oa ob fwd bwd rpid
	phc2sys -s CLOCK_REALTIME -c "/dev/ptp$PHC_MA" -O 0 -R 8 -m >"$W/p2s-a.out" 2>&1 &
	p1=$!
	phc2sys -s CLOCK_REALTIME -c "/dev/ptp$PHC_MB" -O 0 -R 8 -m >"$W/p2s-b.out" 2>&1 &
	p2=$!
	# each servo locked, its last offsets within 100 ns (a starved guest: up to 40 s)
	wait_for 40 p2p_settled "$W/p2s-a.out"
	wait_for 40 p2p_settled "$W/p2s-b.out"
	oa=$(clock 0 offset_ns) ob=$(clock 1 offset_ns)
	t "model: phc2sys disciplines both PHCs to CLOCK_REALTIME within 5 us ($oa, $ob ns)" "p2s-a p2s-b" \
		bash -c '[[ -n $1 && -n $2 ]] && (( ${1#-} <= 5000 && ${2#-} <= 5000 ))' _ "$oa" "$ob"
	echo 30000 >"$RN/rn0/wire_extra_ns"
	echo 1 >"$RN/truth"
	hw_pair ow 12601 "model: reflector for the one-way run listens" --count 200 --interval 5000 \
		--timeout 10000 -l "$W/ow.csv" --log-format csv --json "$W/ow.json"
	oa=$(clock 0 offset_ns) ob=$(clock 1 offset_ns)
	stop "$p1"
	stop "$p2"
	echo 0 >"$RN/rn0/wire_extra_ns"
	# the medians of rant's forward and backward against the wire's
	fwd=$(median "$W/ow.csv" forward_ns)
	bwd=$(median "$W/ow.csv" backward_ns)
	echo "# model: one-way medians: forward $fwd ns (wire 50000), backward $bwd ns (wire 20000); PHC offsets now $oa, $ob ns"
	t "model: one-way run with disciplined PHCs: complete (exit $RC)" ow complete ow 200
	t "model: no one-way delay went negative" ow bash -c '! grep -qi "went negative" "$1" "$2"' _ "$W/ow.out" "$W/ow.err"
	t "model: forward median within 5 us of the wire's 50 us ($fwd)" ow \
		bash -c '[[ -n $1 ]] && d=$(($1 - 50000)) && (( ${d#-} <= 5000 ))' _ "$fwd"
	t "model: backward median within 5 us of the wire's 20 us ($bwd)" ow \
		bash -c '[[ -n $1 ]] && d=$(($1 - 20000)) && (( ${d#-} <= 5000 ))' _ "$bwd"
}

# phc2sys from one model port's PHC to the other's (-s /dev/ptpB -c
# /dev/ptpA -O 0): the ports' clocks, 100 ppm apart (test_model_rant
# measured that), are then one clock by the model's truth, and rant's
# estimates between them say so.  Bounds against the truth: the offset at
# the lowest-RTT exchange within 100 ns of the truth there (as
# test_model_rant's); the server - client drift within 0.05 ppm of rant's
# own estimator run on the true offsets (truth_fit).  Where phc2sys held
# the clocks together through the run (every exchange's true offset within
# 1 us: a guest starved by a loaded host can throw its servo off by tens of
# us), also: that drift within 1 ppm of 0, and rant's PHC drift against
# CLOCK_REALTIME within 1 ppm of the truth's over the run (the clocks
# file's readings before and after), which is the master's -50 ppm.
test_model_p2p() {
	local p j offt off cppm ppm tf tdrift tmax rate rpid
	phc_ctl "/dev/ptp$PHC_MA" set freq 0 >/dev/null 2>&1
	phc_ctl "/dev/ptp$PHC_MB" set freq 0 >/dev/null 2>&1
	phc2sys -s "/dev/ptp$PHC_MB" -c "/dev/ptp$PHC_MA" -O 0 -R 8 -m >"$W/p2p-s.out" 2>&1 &
	p=$!
	wait_for 40 p2p_settled "$W/p2p-s.out"
	cat "$RN/clocks" >"$W/p2p-c1.out"
	echo 1 >"$RN/truth"
	hw_pair p2p 12602 "model: phc2sys PHC to PHC: reflector listens" --count 400 --interval 5000 \
		--timeout 10000 -l "$W/p2p.csv" --log-format csv --json "$W/p2p.json"
	cat "$RN/clocks" >"$W/p2p-c2.out"
	cp "$RN/truth" "$W/p2p.truth"
	stop "$p"
	phc_ctl "/dev/ptp$PHC_MA" freq 0 >/dev/null 2>&1
	j=$(join "$W/p2p.csv" "$W/p2p.truth")
	offt=${j##* }
	off=$(jclock "$W/p2p.json" clock offset_ns)
	cppm=$(jclock "$W/p2p.json" clock drift_ppm)
	ppm=$(jclock "$W/p2p.json" phc drift_ppm)
	tf=$(truth_fit "$W/p2p.csv" "$W/p2p.truth")
	read -r tdrift tmax <<<"$tf"
	# rn0's PHC - CLOCK_REALTIME: its change over the run, in ppm
	rate=$(cat "$W/p2p-c1.out" "$W/p2p-c2.out" | awk '$1 == 0 { a[++i] = $4; m[i] = $6 }
		END { if (i == 2) printf "%.3f", (a[2] - a[1]) * 1e6 / (m[2] - m[1]) }')
	echo "# model: phc2sys $MB's PHC -> $MA's: rant's offset $off ns (truth $offt), drift $cppm ppm (truth $tdrift, true offsets within $tmax ns), $MA's PHC drift $ppm ppm (truth $rate); $j"
	t "model: phc2sys -s ptp$PHC_MB -c ptp$PHC_MA: rant --timestamps hw complete (exit $RC)" p2p complete p2p 400
	t "model: phc2sys PHC to PHC: rant's offset within 100 ns of the truth at the lowest-RTT exchange ($off, $offt ns)" \
		p2p bash -c '[[ -n $1 && -n $2 ]] && d=$(($1 - $2)) && (( ${d#-} <= 100 ))' _ "$off" "$offt"
	t "model: phc2sys PHC to PHC: server - client drift $cppm ppm, within 0.05 ppm of the truth's $tdrift" \
		"p2p p2p-s" awk -v p="$cppm" -v q="$tdrift" 'BEGIN { d = p - q; exit !(p != "" && q != "" && d * d <= 0.0025) }'
	if [[ -n $tmax ]] && (( tmax <= 1000 )); then
		t "model: phc2sys held the PHCs within 1 us ($tmax ns): rant's drift between them within 1 ppm of 0 ($cppm)" \
			"p2p p2p-s" awk -v p="$cppm" 'BEGIN { exit !(p != "" && p * p <= 1) }'
		t "model: phc2sys PHC to PHC: rant's $MA PHC drift against CLOCK_REALTIME $ppm ppm, within 1 ppm of the truth's $rate (the master's -50)" \
			p2p awk -v p="$ppm" -v q="$rate" 'BEGIN { d = p - q; exit !(p != "" && q != "" && d * d <= 1 && q < -49 && q > -51) }'
	else
		# a starved guest's servo: rant is then checked against the truth only (above)
		skip "model: rant's drift between the PHCs near 0: phc2sys did not hold them within 1 us ($tmax ns)"
		skip "model: rant's $MA PHC drift against CLOCK_REALTIME: phc2sys did not hold the PHCs within 1 us"
	fi
}

# hw_pair NAME PORT LABEL emit-options...: a reflector NAME-r with NIC
# stamps in refl on MB:PORT, one client run NAME from MA through it, the
# reflector ended by SIGINT; a failed test LABEL if it does not listen
hw_pair() {
	local name=$1 port=$2 label=$3 rpid
	shift 3
	if reflector "$name-r" refl "$MB" --timestamps hw --port "$port"; then
		rpid=$RPID
		emit "$name" "" "$MA" "$MB_IP" --port "$port" --timestamps hw "$@"
		stop "$rpid" INT
	else
		not_ok "$label"
		show "$name-r"
	fi
}

# p2p_settled LOG: phc2sys's last four lines locked (s2), each offset
# within 100 ns
p2p_settled() {
	grep ' s2 ' "$1" | tail -n 4 | awk '{ for (i = 1; i < NF; i++) if ($i == "offset") v = $(i + 1)
		if (v * v > 1e4) bad = 1; n++ } END { exit !(n == 4 && !bad) }'
}

# bond_active BOND SLAVE [NS]: the bond's active slave is SLAVE
bond_active() {
	if [[ -n ${3:-} ]]; then
		ip netns exec "$3" cat "/proc/net/bonding/$1"
	else
		cat "/proc/net/bonding/$1"
	fi 2>/dev/null | grep -q "^Currently Active Slave: $2\$"
}

# bond_make BOND NS SLAVE...: an active-backup bond of the slaves (link
# monitor every 50 ms), up
bond_make() {
	local b=$1 ns=$2 s
	shift 2
	ip ${ns:+-n "$ns"} link add "$b" type bond mode active-backup miimon 50 || return 1
	for s in "$@"; do
		ip ${ns:+-n "$ns"} link set "$s" down
		ip ${ns:+-n "$ns"} link set "$s" master "$b" || return 1
	done
	ip ${ns:+-n "$ns"} link set "$b" up
}

# bond_choose BOND SLAVE NS: SLAVE asked for as the active one, and is
# (asked again until the link monitor has seen it up, as guest.sh's
# test_bond does: a model port has carrier once its peer is up too)
bond_choose() {
	ip ${3:+-n "$3"} link set "$1" type bond active_slave "$2"
	bond_active "$@"
}

# ptp_of IFACE [NS]: the PHC index ethtool -T shows
ptp_of() {
	if [[ -n ${2:-} ]]; then
		ip netns exec "$2" ethtool -T "$1"
	else
		ethtool -T "$1"
	fi 2>/dev/null | sed -n 's/^PTP Hardware Clock: *//p'
}

# An active-backup bond over model ports on each side, the module with two
# pairs: bondm over rn0 (active) + rn2 here, bondr over rn1 (active) + rn3
# in refl; their PHCs at +50, -50, +20, -20 ppm.  ethtool -T on a bond
# shows its active slave's PHC (the bond forwards get_ts_info to it).  rant
# --timestamps hw over the bonds, and 200 pongs in, the cable of pair 0
# out: both bonds fail over to pair 1.  What the test holds rant to, all
# from the model's truth: every measured row's T1..T4 are the model's
# stamps of its ping and pong, with rows measured on pair 0 before the
# failover and on pair 1 after it (the bond passes rant's SIOCSHWTSTAMP to
# the slave active then only: the new slave stamps only once rant has set
# it again); each end names its failover; the client's report gives no
# server - client offset or drift (two pairs of clocks) and does not blame
# the missing stamps on a NIC stamping one TX packet at a time; rant's PHC
# reading is the new slave's, its drift within 1 ppm of the model's +20;
# and at the end all four ports' stamping is off again, as rant found it.
test_model_bond() {
	local c0 c1 r0 r1 pc0 pc1 pr0 pr1 rpid epid j rows jn r4 s e1 max tb n0 n2 ppm rate
	model_down
	if ! insmod "$MOD" pairs=2 ppm=50,-50,20,-20; then
		not_ok "model: bond: rantnic loaded with two pairs"
		return
	fi
	c0=$(if_by_mac 02:52:4e:00:00:00) r0=$(if_by_mac 02:52:4e:00:00:01)
	c1=$(if_by_mac 02:52:4e:00:00:02) r1=$(if_by_mac 02:52:4e:00:00:03)
	pc0=$(ptp_of "$c0") pr0=$(ptp_of "$r0") pc1=$(ptp_of "$c1") pr1=$(ptp_of "$r1")
	ip link set "$r0" netns refl
	ip link set "$r1" netns refl
	if ! bond_make bondm "" "$c0" "$c1" || ! bond_make bondr refl "$r0" "$r1" ||
		! wait_for 30 bond_choose bondm "$c0" "" || ! wait_for 30 bond_choose bondr "$r0" refl; then
		not_ok "model: bond: bondm over $c0 + $c1, bondr over $r0 + $r1 in refl, $c0 and $r0 active"
		ip link del bondm 2>/dev/null
		in_r ip link del bondr 2>/dev/null
		return
	fi
	ip addr add 10.62.0.1/24 dev bondm
	in_r ip addr add 10.62.0.2/24 dev bondr
	wait_for 60 ping -c 1 -W 1 10.62.0.2 >/dev/null
	echo "# model: bond: bondm over $c0 (ptp$pc0) + $c1 (ptp$pc1), bondr over $r0 (ptp$pr0) + $r1 (ptp$pr1) in refl"
	t "model: bond: ethtool -T shows each bond's active slave's PHC (bondm ptp$pc0, bondr ptp$pr0)" "" \
		bash -c '[[ $1 == "$2" && $3 == "$4" && -n $2 && -n $4 ]]' _ "$(ptp_of bondm)" "$pc0" "$(ptp_of bondr refl)" "$pr0"
	echo 1 >"$RN/truth"
	if ! reflector mb-r refl bondr --timestamps hw --port 12640; then
		not_ok "model: bond: reflector on bondr listens"
		show mb-r
	else
		rpid=$RPID
		timeout 120 "$RANT" -i bondm -a 10.62.0.2 --port 12640 --timestamps hw --count 1000 --interval 5000 \
			--timeout 10000 -l "$W/mb.csv" --log-format csv --json "$W/mb.json" >"$W/mb.out" 2>"$W/mb.err" &
		epid=$!
		wait_for 60 bash -c '(( $(grep -c " udp [0-9]* 12640 " "$1") >= 400 ))' _ "$RN/truth"
		echo 0 >"$RN/rn0/link"
		wait_for 30 bond_active bondm "$c1" && wait_for 30 bond_active bondr "$r1" refl
		tb="$(ptp_of bondm) $(ptp_of bondr refl)"
		wait "$epid"
		RC=$?
		stop "$rpid" INT
		cp "$RN/truth" "$W/mb.truth"
		echo 1 >"$RN/rn0/link"
		j=$(join "$W/mb.csv" "$W/mb.truth")
		read -r _ rows _ _ _ s _ e1 _ <<<"$j"
		max=$(sed -n 's/.*MAX: \([0-9]*\) ns.*/\1/p' "$W/mb.out")
		# the rows with all four stamps, and how many of them by the
		# port that sent their ping (the truth's TX stamp that is the
		# row's t1_hw)
		read -r r4 n0 n2 < <(awk -F'[ ,]' 'FNR == 1 && NR != 1 { truth = 1 }
			!truth && $1 == "seq" { for (i = 1; i <= NF; i++) c[$i] = i; next }
			!truth && !/^#/ && $2 == "ok" && $(c["t1_hw"]) != "" && $(c["t2_hw"]) != "" &&
				$(c["t3_hw"]) != "" && $(c["t4_hw"]) != "" { t1[$(c["t1_hw"])] = 1; r4++; next }
			truth && !/^#/ && $7 == 12640 && ($10 in t1) { n[$2]++ }
			END { print r4 + 0, n[0] + 0, n[2] + 0 }' "$W/mb.csv" "$W/mb.truth")
		ppm=$(jclock "$W/mb.json" phc drift_ppm)
		rate=$(awk -v p="$pc1" '$3 == p { printf "%.3f", $5 / 1000 }' "$RN/clocks")
		echo "# model: bond: rant $(grep '^Packets:' "$W/mb.out"); $(grep '^Missing stamps' "$W/mb.out"); rows by pair: $n0 on pair 0, $n2 on pair 1; $j; PHC drift $ppm ppm"
		t "model: bond: after the failover ethtool -T shows the new active slaves' PHCs (ptp$pc1 ptp$pr1: $tb)" "" \
			is "$tb" "$pc1 $pr1"
		t "model: bond: rant over the bonds goes on through the failover and ends well (exit $RC)" mb \
			bash -c '[[ $1 == 0 && $2 == 1000 && $(($3 + $4)) == 1000 ]]' _ "$RC" "$(packets mb sent)" \
			"$(packets mb received)" "$(packets mb lost)"
		# (rows: received pongs; those with all four stamps joined; an rtt
		# sample needs T1 and T4 only)
		jn=$(awk '{ print $4 }' <<<"$j")
		t "model: bond: every row's T1..T4 are the model's stamps ($jn of the $r4 rows with all four, of $rows; $s differ)" mb \
			bash -c '[[ $1 -gt 0 && $1 == "$2" && $3 == 0 && $1 -le $4 ]]' _ "$jn" "$r4" "$s" "$(samples mb)"
		t "model: bond: rtt within 100 ppm of the largest rtt + 2 ns of the truth (largest error $e1 ns)" mb \
			bash -c '[[ -n $1 && -n $2 ]] && (( $1 <= 2 + $2 / 10000 ))' _ "$e1" "$max"
		t "model: bond: rant measured on both pairs' PHCs: $n0 rows on pair 0 before the failover, $n2 on pair 1 after" mb \
			bash -c '[[ $1 -gt 0 && $2 -gt 0 && $(($1 + $2)) == "$3" ]]' _ "$n0" "$n2" "$jn"
		t "model: bond: the client names its failover ($c0 to $c1, /dev/ptp$pc1)" mb \
			grep -q "bondm's active slave changed from $c0 to $c1 (PHC /dev/ptp$pc1)" "$W/mb.err"
		t "model: bond: the reflector names its failover ($r0 to $r1, /dev/ptp$pr1)" mb-r \
			grep -q "bondr's active slave changed from $r0 to $r1 (PHC /dev/ptp$pr1)" "$W/mb-r.err"
		t "model: bond: report and JSON: one switch, no server - client offset or drift across two pairs of clocks" mb \
			bash -c 'grep -q "^Bond: bondm.s active slave changed 1 time(s) mid-run, $2 at start, $3 at the end" "$1.out" &&
				grep -q "^Clock: server - client offset and drift not given" "$1.out" &&
				tr -d " \n" <"$1.json" | grep -q "\"bond_switches\":1,.*\"clock\":{\"offset_ns\":null,\"asymmetry_ns\":null,\"drift_ppm\":null"' \
			_ "$W/mb" "$c0" "$c1"
		t "model: bond: the failover's missing stamps not blamed on one TX stamp at a time" mb \
			bash -c '! grep -q "one TX packet at a time" "$1"' _ "$W/mb.out"
		t "model: bond: rant reads the new slave's PHC: ptp$pc1 ($(jclock "$W/mb.json" phc index)), drift within 1 ppm of the model's $rate ($ppm)" mb \
			bash -c '[[ $1 == "$2" ]] && awk -v p="$3" -v q="$4" "BEGIN { d = p - q; exit !(p != \"\" && q != \"\" && d * d <= 1) }"' \
			_ "$(jclock "$W/mb.json" phc index)" "$pc1" "$ppm" "$rate"
		t "model: bond: each port's stamping off again, as rant found it ($c0 $c1 $r0 $r1: $(hwts "$c0"), $(hwts "$c1"), $(hwts "$r0" refl), $(hwts "$r1" refl))" "" \
			is "$(hwts "$c0")/$(hwts "$c1")/$(hwts "$r0" refl)/$(hwts "$r1" refl)" "0 0/0 0/0 0/0 0"
	fi
	ip link del bondm
	in_r ip link del bondr
	model_down
}

# the model's sections run when the group does, or rant.only names one of them
if want model model || { [[ ,$GROUPS_RUN, == *,model,* && ,$ONLY, == *,model_* ]]; }; then
	t0=$SECONDS
	klog=$(dmesg | wc -l)
	if model_up ppm=50,-50; then
		ok "model: rantnic loaded, $MA here and $MB in refl, link up"
		want model_basic model && test_model_basic
		want model_rant model && test_model_rant
		want model_ptp model && test_model_ptp
		want model_ptponly model && test_model_ptponly
		want model_tx model && test_model_tx
		want model_share model && test_model_share
		want model_vlan model && test_model_vlan
		want model_p2p model && test_model_p2p
		want model_oneway model && test_model_oneway
		want model_bond model && test_model_bond
	else
		not_ok "model: rantnic loaded, ports up"
		dmesg | tail -n 20 | sed 's/^/#   /'
	fi
	model_down
	# a WARN_ON or worse inside the module, or elsewhere while it ran
	t "model: the kernel logged no warning, bug or oops while the model ran and went" "" \
		bash -c '! dmesg | tail -n +"$(($1 + 1))" | grep -E "WARNING:|BUG:|Oops|Call Trace" | sed "s/^/#   /" | grep .' _ "$klog"
	echo "# guest: model took $((SECONDS - t0)) s"
fi
