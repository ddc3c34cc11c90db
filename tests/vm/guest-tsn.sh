#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The TSN part of tests/vm/guest.sh (sourced by it, with its helpers), on
# the QEMU 10 boots of 6.1 and 6.12: the three-priority taprio experiment.
# A veth pair with four TX queues (tv0 here, tv1 in the namespace "tsnr"),
# a taprio schedule on tv0 (tc-taprio(8)) with three traffic classes —
# priority 1 -> tc 0, 2 -> tc 1, 3 -> tc 2, one queue each; a fourth, tc 3,
# always open and without etf, for the rest (priority 0: ARP, isochron's
# TCP, which an etf would drop for carrying no launch time) — whose gates
# open in turn, and rant with the three priorities and its smallest
# payload: once without launch times, each
# class's pings put where its gate has just closed (so that each waits its
# closed time), once with an etf (tc-etf(8)) below each of taprio's queues
# and launch times inside each class's window, and once with a launch time
# put where the gate is closed (the etf must report it missed).  isochron
# (send/rcv, Debian's package) measures the same schedule beside it.
#
# Time runs 10 times slower than the experiment's 200 us: under TCG this
# guest sends about a thousand pings a second in all (three classes at 200
# us each, 15 000 a second, overran 40 000 slots in 3 s and backed taprio's
# queues up to hundreds of ms), so the cycle is 2 ms and each class sends
# every 4 ms, every other cycle: the schedule's shape, not its speed.
# The TAI offset is set before taprio starts: taprio's schedule runs on
# CLOCK_TAI, and a 37 s step of it under a running schedule is left
# untried.
#
# Assertions are `bash -c '...' _ ARGS` scripts (one failing is one test):
# shellcheck disable=SC2016

TSN_C=10.44.0.1
TSN_R=10.44.0.2
# the schedule, ns: tc 0 open 200 us (closed 1800), tc 1 600 us (closed 1400), tc 2 1200 us
# (closed 800); each class every 4 ms, the launch time 1.5 ms after the app's slot (this guest
# wakes 0.5-0.7 ms late at times)
TSN_CYCLE=2000000
TSN_OPEN=(200000 600000 1200000)
TSN_START=(0 200000 800000)
TSN_IVAL=4000
TSN_LEAD_US=1500
TSN_DELTA=150000

in_t() { ip netns exec tsnr "$@"; }

# tsn_taprio CLOCK [DEV [QUEUES [OPTIONS...]]]: taprio's gates on DEV (tv0) anew, base time 0
# on CLOCK: each cycle starts at a multiple of the cycle; tc 3 (best effort) open throughout.
# OPTIONS: "flags 0x1 txtime-delay NS", txtime-assist mode, the one in which etf children
# work in software (in the plain mode the etfs were never dequeued: Sent 0, their backlog
# growing until the client's send buffer was full)
tsn_taprio() {
	local clk=$1 dev=${2:-tv0} queues=${3:-1@0 1@1 1@2 1@3}
	shift 3 2>/dev/null || shift $#
	tc qdisc del dev "$dev" root >/dev/null 2>&1
	# shellcheck disable=SC2086 # the queues are words
	tc qdisc add dev "$dev" parent root handle 100 taprio num_tc 4 \
		map 3 0 1 2 3 3 3 3 3 3 3 3 3 3 3 3 queues $queues base-time 0 \
		sched-entry S 09 "${TSN_OPEN[0]}" sched-entry S 0a "${TSN_OPEN[1]}" \
		sched-entry S 0c "${TSN_OPEN[2]}" clockid "$clk" "$@" >>"$W/tsn-tc.out" 2>&1
	tc qdisc show dev "$dev" >>"$W/tsn-tc.out" 2>&1
}

# tsn_etfs [DEV [DELTA]]: an etf below each of the three classes' queues, anew (an etf's
# parameters do not change in place)
tsn_etfs() {
	local q
	for q in 1 2 3; do
		tc qdisc del dev "${1:-tv0}" parent "100:$q" >/dev/null 2>&1
		tc qdisc add dev "${1:-tv0}" parent "100:$q" etf clockid CLOCK_TAI delta "${2:-$TSN_DELTA}" \
			>>"$W/tsn-tc.out" 2>&1
	done
}

tsn_setup() {
	ip netns add tsnr
	ip link add tv0 numtxqueues 4 numrxqueues 4 type veth peer name tv1 numtxqueues 4 numrxqueues 4 &&
		ip link set tv1 netns tsnr
	ip addr add "$TSN_C/24" dev tv0
	in_t ip addr add "$TSN_R/24" dev tv1
	in_t ip link set lo up
	ip link set tv0 up
	in_t ip link set tv1 up
	t "tsn: the veth pair has 4 TX queues" "" bash -c '[[ $(ls -d /sys/class/net/tv0/queues/tx-* | wc -l) == 4 ]]'
	reflector tsn-refl tsnr tv1 --port 12400
	TSN_RPID=$RPID
	# refused before anything is sent: an etf, but the kernel's TAI offset unset (as booted)
	tc qdisc replace dev tv0 root etf clockid CLOCK_TAI delta "$TSN_DELTA" >"$W/tsn-tc.out" 2>&1
	taiset >"$W/tsn-tai0.out" 2>&1
	emit tsn-notai "" tv0 "$TSN_R" --port 12400 --priority 1,2,3 --txtime 300 --count 10
	t "tsn: --txtime with the TAI offset unset: exit 2, one line" "tsn-notai tsn-tai0" \
		bash -c '[[ $1 == 2 && $(cat "$3") == 0 ]] && grep -q "TAI offset is 0" "$2" && [[ $(wc -l <"$2") == 1 ]]' _ "$RC" "$W/tsn-notai.err" "$W/tsn-tai0.out"
	tc qdisc del dev tv0 root >>"$W/tsn-tc.out" 2>&1
	taiset 37 >"$W/tsn-tai.out" 2>&1
	t "tsn: the TAI offset set (37 s)" tsn-tai has tsn-tai '^37$'
	tsn_taprio CLOCK_TAI
	t "tsn: taprio with three traffic classes on tv0" tsn-tc has tsn-tc '^qdisc taprio 100:'
}

# tsn_cls NAME CLASS: the class's row of the rtt table: sent received lost loss samples min avg p50 ...
tsn_cls() {
	awk -v c="$2" '/^--- Classes \(rtt/ { on = 1; next } /^$|^---/ { on = 0 }
		on && substr($0, 1, 1) == c { print substr($0, 28); exit }' "$W/$1.out"
}

# tsn_x NAME CLASS METRIC: samples min avg p50 p99 p99.9 max of a class's metric (app rtt, tx
# stack, launch er, to spare)
tsn_x() {
	awk -v c="$2" -v m="$3" '/^--- Classes \(app rtt/ { on = 1; next } /^$|^---/ { on = 0 }
		on { if ($0 ~ /^[0-9]/) cur = substr($0, 1, 1); mm = substr($0, 28, 9); sub(/ +$/, "", mm)
		     if (cur == c && mm == m) { print substr($0, 38); exit } }' "$W/$1.out"
}

# tsn_launch NAME CLASS WHAT: the class's launch times missed or invalid
tsn_launch() {
	sed -n "s/^  class $2 .* missed \\([0-9]*\\), invalid \\([0-9]*\\)\$/\\1 \\2/p" "$W/$1.out" |
		awk -v w="$3" '{ print (w == "missed" ? $1 : $2) }'
}

# tsn_metric NAME LABEL: samples and min of a metric's row of the report
tsn_metric() {
	awk -v m="$2" 'index($0, m) == 1 { split(substr($0, length(m) + 1), f); print f[1], f[2]; exit }' "$W/$1.out"
}

# tsn_accounted NAME: every class's sent = received + lost, and something received
tsn_accounted() {
	local c row
	for c in 0 1 2; do
		row=$(tsn_cls "$1" "$c")
		read -r s r l _ <<<"$row"
		[[ -n $s && $s -gt 0 && $((r + l)) == "$s" && $r -gt 0 ]] || return 1
	done
}

test_tsn_gates() {
	local c off=() closed
	# each class's pings right where its gate closes: each then waits its closed time
	for c in 0 1 2; do
		off+=($(((TSN_START[c] + TSN_OPEN[c]) % TSN_CYCLE)))
	done
	emit tsn-gates "" tv0 "$TSN_R" --port 12400 --priority 1,2,3 --interval "$TSN_IVAL,$TSN_IVAL,$TSN_IVAL" \
		--size 24 --cycle "$TSN_CYCLE" --class-offset "$(IFS=,; echo "${off[*]}")" \
		-s -d 3 -w 30 --json "$W/tsn-gates.json"
	t "tsn: rant through taprio exits 0" tsn-gates is "$RC" 0
	t "tsn: rant reads taprio's schedule and places each class" tsn-gates \
		has tsn-gates "taprio on tv0: class 2 \\(priority 3, traffic class 2\\): open ${TSN_OPEN[2]} of $TSN_CYCLE ns"
	t "tsn: each class's loss accounted: sent = received + lost" tsn-gates tsn_accounted tsn-gates
	for c in 0 1 2; do
		closed=$((TSN_CYCLE - TSN_OPEN[c]))
		read -r n mn _ p50 _ <<<"$(tsn_x tsn-gates "$c" "tx stack")"
		echo "# guest: tsn: class $c (closed $closed ns): tx stack samples $n min $mn p50 $p50"
		# the gate holds a ping at most its closed time: the shortest wait is within it
		t "tsn: class $c's gate wait (client tx stack) lies within its closed window ($closed ns)" tsn-gates \
			bash -c '[[ $1 -gt 0 && $2 -le $3 ]]' _ "${n:-0}" "${mn:-999999999}" "$closed"
		eval "TSN_P50_$c=\${p50:-0}"
	done
	# tc 0 is closed 180 of 200 us, tc 2 only 80: its pings wait longer
	t "tsn: the class closed most of the cycle waits longest (p50 tx stack class 0 > class 2)" tsn-gates \
		bash -c '[[ $1 -gt $2 ]]' _ "$TSN_P50_0" "$TSN_P50_2"
}

test_tsn_etf() {
	local c off=()
	# refusals, one line and exit 2 before anything is sent: gates on another clock than the
	# etf's (which takes CLOCK_TAI only)
	tsn_taprio CLOCK_REALTIME
	tsn_etfs
	emit tsn-clk "" tv0 "$TSN_R" --port 12400 --priority 1,2,3 --txtime 300 --count 10
	t "tsn: taprio on CLOCK_REALTIME under launch times on CLOCK_TAI: exit 2 naming the clock" tsn-clk \
		bash -c '[[ $1 == 2 ]] && grep -q "keeps its schedule on CLOCK_REALTIME" "$2"' _ "$RC" "$W/tsn-clk.err"
	tsn_taprio CLOCK_TAI tv0 "1@0 1@1 1@2 1@3" flags 0x1 txtime-delay "$TSN_DELTA"
	tsn_etfs
	emit tsn-dl "" tv0 "$TSN_R" --port 12400 --priority 1,2,3 --txtime 300 --txtime-deadline --count 10
	t "tsn: --txtime-deadline against an etf without deadline_mode: exit 2" tsn-dl \
		bash -c '[[ $1 == 2 ]] && grep -q "deadline_mode off" "$2"' _ "$RC" "$W/tsn-dl.err"
	tc qdisc del dev tv0 parent 100:3 >>"$W/tsn-tc.out" 2>&1
	emit tsn-noetf "" tv0 "$TSN_R" --port 12400 --priority 1,2,3 --txtime 300 --count 10
	t "tsn: no etf on class 2's queue: exit 2 naming it" tsn-noetf \
		bash -c '[[ $1 == 2 ]] && grep -q "no etf qdisc on tv0.s queue 2 (class 2, priority 3" "$2"' _ "$RC" "$W/tsn-noetf.err"
	tc qdisc add dev tv0 parent 100:3 etf clockid CLOCK_TAI delta "$TSN_DELTA" >>"$W/tsn-tc.out" 2>&1
	tc qdisc show dev tv0 >>"$W/tsn-tc.out" 2>&1
	# launch times 50 us into each class's window
	for c in 0 1 2; do
		off+=($((TSN_START[c] + 50000)))
	done
	emit tsn-etf "" tv0 "$TSN_R" --port 12400 --priority 1,2,3 --interval "$TSN_IVAL,$TSN_IVAL,$TSN_IVAL" \
		--size 24 --cycle "$TSN_CYCLE" --class-offset "$(IFS=,; echo "${off[*]}")" \
		--txtime "$TSN_LEAD_US" -d 3 -w 30 --json "$W/tsn-etf.json" -l "$W/tsn-etf.csv" --log-format csv
	tc -s qdisc show dev tv0 >"$W/tsn-diag.out" 2>&1
	t "tsn: rant with launch times through etf below taprio exits 0" tsn-etf is "$RC" 0
	t "tsn: its report names the launch time" tsn-etf has tsn-etf "^Launch time: SO_TXTIME on CLOCK_TAI \\(TAI offset 37 s\\), lead ${TSN_LEAD_US}000 ns, etf delta $TSN_DELTA ns"
	t "tsn: with etf, each class's loss accounted: sent = received + lost" tsn-etf tsn_accounted tsn-etf
	for c in 0 1 2; do
		read -r s _ l _ <<<"$(tsn_cls tsn-etf "$c")"
		read -r n mn _ p50 _ _ mx <<<"$(tsn_x tsn-etf "$c" "to spare")"
		read -r ln lmn _ lp50 _ _ lmx <<<"$(tsn_x tsn-etf "$c" "launch er")"
		m=$(tsn_launch tsn-etf "$c" missed) i=$(tsn_launch tsn-etf "$c" invalid)
		echo "# guest: tsn: etf class $c: sent $s lost $l missed $m invalid $i; to spare n $n min $mn p50 $p50 max $mx; launch error n $ln min $lmn p50 $lp50 max $lmx"
		# the app sends after its slot, and a ping sent after its launch time is dropped:
		# every measured time to spare is in (0, lead]
		t "tsn: class $c's time to spare lies in (0, lead ${TSN_LEAD_US} us]" tsn-etf \
			bash -c '[[ $1 -gt 0 && $2 -gt 0 && $3 -le $4 ]]' _ "${n:-0}" "${mn:-0}" "${mx:-999999999}" "$((TSN_LEAD_US * 1000))"
		# the etf lets a packet go at most delta before its launch time
		t "tsn: class $c's launch error is not below -delta (-$TSN_DELTA ns)" tsn-etf \
			bash -c '[[ $1 -gt 0 && $2 -ge -$3 ]]' _ "${ln:-0}" "${lmn:--999999999}" "$TSN_DELTA"
		t "tsn: class $c's dropped launch times are among its lost" tsn-etf \
			bash -c '[[ -n $1 && -n $2 && $(($1 + $2)) -le $3 ]]' _ "$m" "$i" "${l:-0}"
	done
	# each launch time the etf dropped is its row's status in the log (a FIN's has no row)
	read -r lm li lu <<<"$(sed -n 's/^Launch time: .*: \([0-9]*\) missed, \([0-9]*\) invalid[^,]*\(, \([0-9]*\) of no ping\)\{0,1\}.*/\1 \2 \4/p' "$W/tsn-etf.out")"
	t "tsn: the log's launch_missed and launch_invalid rows are the launch times the etf dropped" tsn-etf \
		bash -c '[[ -n $1 && $(grep -cE ",launch_(missed|invalid)," "$4") == $(($1 + $2 - ${3:-0})) ]]' _ \
		"$lm" "$li" "$lu" "$W/tsn-etf.csv"
	"$RANT" --analyze "$W/tsn-etf.csv" >"$W/tsn-an.out" 2>"$W/tsn-an.err"
	for m in "launch error (T1-T1_LT)" "time to spare (T1_LT-T1_SW)"; do
		t "tsn: --analyze of the csv log: the run's $m row, the same samples and min" "tsn-etf tsn-an" \
			bash -c '[[ -n $1 && $1 == "$2" ]]' _ "$(tsn_metric tsn-etf "$m")" "$(tsn_metric tsn-an "$m")"
	done
	t "tsn: JSON launch_time with the TAI offset" tsn-etf \
		bash -c 'grep -q "\"launch_time\": {\"clock\": \"CLOCK_TAI\", \"tai_offset_s\": 37" "$1"' _ "$W/tsn-etf.json"
	# deliberately late launch times: 1 us after the slot (already past when the packet
	# comes: invalid), and with an etf delta of 1 us (its timer wakes after the launch time
	# has passed: missed)
	emit tsn-late "" tv0 "$TSN_R" --port 12400 --priority 1 --interval "$TSN_IVAL" --size 24 \
		--cycle "$TSN_CYCLE" --class-offset 50000 --txtime 1 --count 50
	echo "# guest: tsn: launch times 1 us after the slot: $(grep '^Launch time' "$W/tsn-late.out")"
	read -r _ lmiss linv <<<"$(sed -n 's/^Launch time: .*: \([0-9]*\) missed, \([0-9]*\) invalid.*/x \1 \2/p' "$W/tsn-late.out")"
	t "tsn: launch times already past are reported invalid by the etf" tsn-late \
		bash -c '[[ ${1:-0} -gt 0 ]]' _ "$linv"
	tsn_etfs tv0 1000
	emit tsn-miss "" tv0 "$TSN_R" --port 12400 --priority 1 --interval "$TSN_IVAL" --size 24 \
		--cycle "$TSN_CYCLE" --class-offset 50000 --txtime "$TSN_LEAD_US" --count 50
	echo "# guest: tsn: etf delta 1 us: $(grep '^Launch time' "$W/tsn-miss.out")"
	read -r _ lmiss linv <<<"$(sed -n 's/^Launch time: .*: \([0-9]*\) missed, \([0-9]*\) invalid.*/x \1 \2/p' "$W/tsn-miss.out")"
	t "tsn: the etf's delta read anew (1000 ns)" tsn-miss has tsn-miss "etf delta 1000 ns"
	t "tsn: launch times that passed in the etf (delta 1 us) are reported missed" tsn-miss \
		bash -c '[[ ${1:-0} -gt 0 ]]' _ "$lmiss"
	t "tsn: a run whose pings the etf dropped ends by itself" tsn-miss bash -c '[[ $1 != 124 ]]' _ "$RC"
}

# isochron beside rant.  isochron needs a PHC and hardware stamps with the receive filter
# ALL on both ends: veth has no PHC, the igb ports' 82576 refuses ALL (SIOCSHWTSTAMP: ERANGE)
# and QEMU 10's e1000e gives no TX stamp ("Timed out waiting for TX timestamps"), so the two
# run side by side on the lab's model NIC (tests/vm/mod/rantnic: PHCs, hardware stamps, ALL
# widened), rn0 here and rn1 in "refl", with one TX queue: launch times through a root etf,
# no taprio (its classes need a queue each).  The same cadence for both (each priority every
# 4 ms, launch times 50 us into its window of the 2 ms cycle, the app 1.5 ms ahead); isochron
# one priority at a time, 500 frames, its stats connection over the e1000e ports A and R.
TSN_MOD=/rant/mod/rantnic.ko
TSN_M_C=10.46.0.1
TSN_M_R=10.46.0.2

tsn_model_setup() {
	if [[ ! -e $TSN_MOD ]]; then
		skip "tsn: rant and isochron side by side (no model NIC module in this boot)"
		return 1
	fi
	grep -q '^rantnic ' /proc/modules && rmmod rantnic
	insmod "$TSN_MOD" >"$W/tsn-mod.out" 2>&1
	TSN_MA=$(if_by_mac 02:52:4e:00:00:00) TSN_MB=$(if_by_mac 02:52:4e:00:00:01)
	if [[ -z $TSN_MA || -z $TSN_MB ]]; then
		not_ok "tsn: the model NIC's ports for rant and isochron side by side"
		show tsn-mod
		return 1
	fi
	ip link set "$TSN_MB" netns refl
	ip addr add "$TSN_M_C/24" dev "$TSN_MA"
	in_r ip addr add "$TSN_M_R/24" dev "$TSN_MB"
	ip link set "$TSN_MA" up
	in_r ip link set "$TSN_MB" up
	wait_for 30 link_up "$TSN_MA" && wait_for 30 link_up "$TSN_MB" refl
	# the etf drops what carries no launch time, ARP too: the neighbours fixed
	ip neigh replace "$TSN_M_R" lladdr 02:52:4e:00:00:01 dev "$TSN_MA" nud permanent
	in_r ip neigh replace "$TSN_M_C" lladdr 02:52:4e:00:00:00 dev "$TSN_MB" nud permanent
	reflector tsn-mrefl refl "$TSN_MB" --port 12401 --timestamps hw
	TSN_MRPID=$RPID
}

# tsn_isochron RUN [--txtime]: isochron send/rcv, one priority at a time, 500 frames each (the
# etf run: priority 1 only, the app 3.5 ms ahead: isochron stops at its first launch time
# missed, and this guest's first wake-up can come 10 ms late); its summary kept
tsn_isochron() {
	local run=$1 p c ipid adv="0.00${TSN_LEAD_US}" prios="1 2 3"
	shift
	[[ $run == etf ]] && adv=0.0035 prios=1
	# (not in_r: its background subshell's pid would leave isochron running)
	ip netns exec refl isochron rcv -i "$TSN_MB" --quiet --stats-port "$TSN_ISO_PORT" >"$W/iso-rcv-$run.out" 2>&1 &
	ipid=$!
	tcp_listening() { in_r ss -Hltn "sport = :$TSN_ISO_PORT" | grep -q .; }
	if ! wait_for 30 tcp_listening; then
		not_ok "tsn: isochron rcv listens for its sender (port $TSN_ISO_PORT, $run)"
		show "iso-rcv-$run"
		kill "$ipid" 2>/dev/null
		return
	fi
	for p in $prios; do
		c=$((p - 1))
		timeout 60 isochron send -i "$TSN_MA" --dmac 02:52:4e:00:00:01 --client "$R_IP" --priority "$p" \
			--stats-port "$TSN_ISO_PORT" --cycle-time 0.004 --base-time 0 \
			--shift-time "0.000$(printf %06d $((TSN_START[c] + 50000)))" --advance-time "$adv" \
			--frame-size 64 --num-frames 500 --omit-sync --omit-remote-sync --utc-tai-offset 37 "$@" \
			--output-file "$W/iso-$run-$p.dat" >"$W/iso-$run-$p.out" 2>&1
		isochron report --input-file "$W/iso-$run-$p.dat" --summary >"$W/iso-$run-$p.sum" 2>&1
		sed "s/^/# guest: isochron $run priority $p: /" "$W/iso-$run-$p.sum" | head -n 30
		grep -i "postmortem\|failed" "$W/iso-$run-$p.out" | head -n 3 | sed "s/^/# guest: isochron $run priority $p: /"
	done
	kill "$ipid" 2>/dev/null
	wait "$ipid" 2>/dev/null
	TSN_ISO_PORT=$((TSN_ISO_PORT + 1))
}

# rant on the same port and cadence: three classes, the NIC's TX stamps; with launch times
# (through the root etf) or without (no qdisc)
tsn_rant_model() {
	local c off=() run=$1
	for c in 0 1 2; do
		off+=($((TSN_START[c] + 50000)))
	done
	if [[ $run == etf ]]; then
		tc qdisc replace dev "$TSN_MA" root etf clockid CLOCK_TAI delta "$TSN_DELTA" >>"$W/tsn-tc.out" 2>&1
		emit "tsn-m$run" "" "$TSN_MA" "$TSN_M_R" --port 12401 --priority 1,2,3 \
			--interval "$TSN_IVAL,$TSN_IVAL,$TSN_IVAL" --size 24 --cycle "$TSN_CYCLE" \
			--class-offset "$(IFS=,; echo "${off[*]}")" --txtime "$TSN_LEAD_US" --timestamps hw \
			--count 1500 -w 30
	else
		tc qdisc del dev "$TSN_MA" root >/dev/null 2>&1
		# the app's send where isochron's wakes: lead before the launch time it would have had
		for c in 0 1 2; do
			off[c]=$(((off[c] - TSN_LEAD_US * 1000 + TSN_CYCLE) % TSN_CYCLE))
		done
		emit "tsn-m$run" "" "$TSN_MA" "$TSN_M_R" --port 12401 --priority 1,2,3 \
			--interval "$TSN_IVAL,$TSN_IVAL,$TSN_IVAL" --size 24 --cycle "$TSN_CYCLE" \
			--class-offset "$(IFS=,; echo "${off[*]}")" -s --timestamps hw --count 1500 -w 30
	fi
	t "tsn: rant on the model NIC ($run) exits 0" "tsn-m$run" is "$RC" 0
	grep -E '^client tx (kernel|driver)' "$W/tsn-m$run.out" | sed "s/^/# guest: tsn: model NIC $run: /"
	t "tsn: rant on the model NIC ($run): sent = received + lost per class" "tsn-m$run" tsn_accounted "tsn-m$run"
	for c in 0 1 2; do
		read -r _ tmn tavg tp50 _ _ tmx <<<"$(tsn_x "tsn-m$run" "$c" "tx stack")"
		read -r n mn _ p50 _ _ mx <<<"$(tsn_x "tsn-m$run" "$c" "to spare")"
		read -r ln lmn _ lp50 _ _ lmx <<<"$(tsn_x "tsn-m$run" "$c" "launch er")"
		echo "# guest: tsn: model NIC $run class $c: tx stack (T1_HW-T1_SW) min $tmn avg $tavg p50 $tp50 max $tmx; to spare n $n min $mn p50 $p50 max $mx; launch error (T1_HW-T1_LT) n $ln min $lmn p50 $lp50 max $lmx; $(tsn_launch "tsn-m$run" "$c" missed) missed, $(tsn_launch "tsn-m$run" "$c" invalid) invalid"
		[[ $run == etf ]] || continue
		t "tsn: model NIC class $c: time to spare in (0, lead], launch error not below -delta" "tsn-m$run" \
			bash -c '[[ $1 -gt 0 && $2 -gt 0 && $3 -le $4 && $5 -gt 0 && $6 -ge -$7 ]]' _ "${n:-0}" \
			"${mn:-0}" "${mx:-999999999}" "$((TSN_LEAD_US * 1000))" "${ln:-0}" "${lmn:--999999999}" "$TSN_DELTA"
	done
}

if want tsn; then
	t0=$SECONDS
	tsn_setup
	test_tsn_gates
	test_tsn_etf
	stop "$TSN_RPID"
	ip netns del tsnr 2>/dev/null
	if tsn_model_setup; then
		TSN_ISO_PORT=5000
		tsn_rant_model plain
		if command -v isochron >/dev/null; then
			tsn_isochron plain
			t "tsn: isochron send/rcv through the model NIC: its report has latencies, no failure" \
				iso-plain-1 bash -c 'grep -Eq "latency: min -?[0-9]+ max -?[0-9]+" "$1" &&
					! grep -qi failed "$2"' _ "$W/iso-plain-1.sum" "$W/iso-plain-1.out"
		else
			skip "tsn: isochron beside rant (isochron not in the guest)"
		fi
		tsn_rant_model etf
		# information only: isochron's launch-time mode stops at the first launch
		# time the etf refuses, which under TCG is its first frame
		command -v isochron >/dev/null && tsn_isochron etf --txtime
		stop "$TSN_MRPID"
		ip link set "$TSN_MB" netns 1 2>/dev/null
		rmmod rantnic 2>/dev/null
	fi
	echo "# guest: tsn took $((SECONDS - t0)) s"
fi
