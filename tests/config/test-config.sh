#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Tests for config.sh.  Run without arguments: bash tests/config/test-config.sh
# (or name groups of them: usage mlx5 ice more tuning veth)
#
#  - argument errors (exit 2, one line, nothing changed) (shellcheck of
#    config.sh and of these scripts: tests/shellcheck.sh);
#  - driver paths (mlx5, ice, PHC discovery, IRQ names and threads, PCIe PM,
#    phc2sys) against a fake sysfs/proc tree and stub tools;
#  - as root: a veth pair in a private network and mount namespace (so
#    nothing of the host's network is visible or touched): apply, check,
#    apply twice, drift, undo, dry-run, IPv6.  The host's CPUs are never
#    touched: SYSFS/PROCFS point at a fake CPU tree there too.
#
# Prints TAP through tests/lib.sh: "ok N - name" / "not ok N - name" per
# test, "ok N - # SKIP why" for what cannot run here, then the plan "1..N".
#
# Assertions are small `bash -c '...' _ ARGS` scripts so that a failing one
# is one test; their $1.. expand in the inner shell, hence:
# shellcheck disable=SC2016

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
CONFIG=$TOP/config.sh
STUBS=$HERE/stubs
PHC2SYS_STUB=
# shellcheck source=tests/config/fake-sysfs.sh
. "$HERE/fake-sysfs.sh"
# shellcheck source=tests/lib.sh
TAP_ONLY=1 . "$TOP/tests/lib.sh"

TMP=
OUT=
ERR=
RC=0
declare -a BG_PIDS=()

# ---------------------------------------------------------------- harness

t_ok() {
	ok "$1"
}

# t_fail NAME [DETAIL]: DETAIL follows as TAP comments
t_fail() {
	not_ok "$1"
	[[ -n ${2:-} ]] && printf '#   %s\n' "${2//$'\n'/$'\n#   '}"
	return 0
}

# t NAME CMD...: pass if CMD succeeds.
t() {
	local name=$1
	shift
	if "$@"; then t_ok "$name"; else t_fail "$name" "$(tail -n 20 "$OUT" "$ERR" 2>/dev/null)"; fi
}

t_skip() {
	skip "$1"
}

# out_has REGEX / out_lacks REGEX: on the last config.sh stdout.
out_has() {
	grep -Eq -- "$1" "$OUT"
}

out_lacks() {
	! grep -Eq -- "$1" "$OUT"
}

# wait_until TIMEOUT_S CMD...: poll CMD every 50 ms.
wait_until() {
	local end=$((SECONDS + $1))
	shift
	until "$@"; do
		((SECONDS >= end)) && return 1
		sleep 0.05
	done
}

cleanup() {
	local pid
	for pid in "${BG_PIDS[@]}"; do
		kill "$pid" 2>/dev/null
	done
	[[ -n $TMP && -d $TMP ]] && rm -rf "$TMP"
}

# no_empty_reason FILE: every failed step says why.
no_empty_reason() {
	! grep -E '^  failed  ' "$1" | grep -Eq '^  failed +[^ ].{25} *$|: *$'
}

# ------------------------------------------------------------- fake trees

# cfg ROOT ARGS...: config.sh against fake tree ROOT with the stub tools
# (CFG_ETHTOOL, CFG_CHRT, CFG_PHC2SYS: another path for that tool).
cfg() {
	local root=$1
	shift
	SYSFS=$root/sys PROCFS=$root/proc FAKE_STATE=$root/state STATE_DIR=$root/run DEVFS=$root/dev \
		ETHTOOL=${CFG_ETHTOOL:-$STUBS/ethtool} IP=$STUBS/ip TC=$STUBS/tc CHRT=${CFG_CHRT:-$STUBS/chrt} \
		PHC2SYS=${CFG_PHC2SYS:-$PHC2SYS_STUB} "$CONFIG" "$@" >"$OUT" 2>"$ERR"
	RC=$?
}

# snap_fake ROOT: every value in the fake tree and stub state.
snap_fake() {
	(
		cd "$1" || exit 1
		find sys proc state -type f ! -name calls.log -print0 | sort -z | xargs -0 grep -H ''
		find sys proc -type l -printf '%p -> %l\n' | sort
	)
}

rc_is() {
	[[ $RC == "$1" ]]
}

stat_is() {
	# stat_is ROOT PID "policy prio"
	local f
	read -r -a f <<<"$(sed 's/.*) //' "$1/proc/$2/stat")"
	[[ "${f[38]} ${f[37]}" == "$3" ]]
}

file_is() {
	[[ $(cat "$1" 2>/dev/null) == "$2" ]]
}

kv_is() {
	[[ $(kv_get "$1" "$2") == "$3" ]]
}

alive() {
	kill -0 "$1" 2>/dev/null
}

dead() {
	! kill -0 "$1" 2>/dev/null
}

usage_case() {
	local name=$1 want=$2 root=$TMP/usage
	shift 2
	cfg "$root" "$@"
	if [[ $RC == 2 && ! -s $OUT && $(wc -l <"$ERR") == 1 ]] && grep -Eq -- "^config\.sh: $want" "$ERR" &&
		[[ ! -e $root/run ]]; then
		t_ok "usage: $name exits 2 with one line"
	else
		t_fail "usage: $name exits 2 with one line" "rc=$RC stderr: $(cat "$ERR") stdout: $(head -3 "$OUT")"
	fi
}

test_usage() {
	local root=$TMP/usage
	mkdir -p "$root"
	fake_mlx5 "$root"
	local ok=(enp59s0f0 --no-namespace --ip 10.1.0.1 --remote-ip 10.1.0.2 --cpu 2 --irq-cpu 3)
	usage_case "missing interface" "missing interface" --ip 10.1.0.1
	usage_case "bad --ip" "--ip: '10\.1\.0\.300' is not an IPv4 or IPv6 address" \
		enp59s0f0 --ip 10.1.0.300 --remote-ip 10.1.0.2 --cpu 2 --irq-cpu 3
	usage_case "bad prefix length" "--ip prefix length: '33' is out of range \(1 to 32\)" \
		enp59s0f0 --ip 10.1.0.1/33 --remote-ip 10.1.0.2 --cpu 2 --irq-cpu 3
	usage_case "bad IPv6 --remote-ip" "--remote-ip: 'fd00::1::2' is not" \
		enp59s0f0 --ip fd00::1 --remote-ip fd00::1::2 --cpu 2 --irq-cpu 3
	# Addresses no interface can hold as its own, refused before anything
	# is changed (the state directory is not even created).
	local bad why remote
	for bad in "0.0.0.0=the unspecified address" "224.0.0.1/24=a multicast address \(224" \
		"239.255.255.250=a multicast address" "255.255.255.255=the broadcast address" \
		"127.0.0.1/8=a loopback address" "::=the unspecified address" "::/64=the unspecified address" \
		"ff02::1=a multicast address \(ff00::/8\)" "FF05::1:3/64=a multicast address" \
		"::1=the loopback address" "0:0:0:0:0:0:0:1/128=the loopback address"; do
		why=${bad#*=}
		bad=${bad%%=*}
		remote=10.1.0.2
		[[ $bad == *:* ]] && remote=fd00::2
		usage_case "--ip $bad" "--ip: '${bad//./\\.}' is $why" \
			enp59s0f0 --no-namespace --ip "$bad" --remote-ip "$remote" --cpu 2 --irq-cpu 3
	done
	usage_case "--remote-ip multicast" "--remote-ip: '224\.0\.0\.251' is a multicast address" \
		enp59s0f0 --ip 10.1.0.1 --remote-ip 224.0.0.251 --cpu 2 --irq-cpu 3
	usage_case "--remote-ip unspecified (IPv6)" "--remote-ip: '::' is the unspecified address" \
		enp59s0f0 --ip fd00::1 --remote-ip :: --cpu 2 --irq-cpu 3
	usage_case "--remote-ip loopback" "--remote-ip: '127\.0\.0\.1' is a loopback address" \
		enp59s0f0 --ip 10.1.0.1 --remote-ip 127.0.0.1 --cpu 2 --irq-cpu 3
	usage_case "mixed families" "--remote-ip: 'fd00::2' is not the same family" \
		enp59s0f0 --ip 10.1.0.1 --remote-ip fd00::2 --cpu 2 --irq-cpu 3
	usage_case "CPU out of range" "--cpu: '99' is out of range \(0 to 3\)" \
		enp59s0f0 --ip 10.1.0.1 --remote-ip 10.1.0.2 --cpu 99 --irq-cpu 3
	usage_case "CPU not a number" "--irq-cpu: '1x' is not a number \(0 to 3\)" \
		enp59s0f0 --ip 10.1.0.1 --remote-ip 10.1.0.2 --cpu 2 --irq-cpu 1x
	usage_case "unknown option" "--frobnicate: unknown option" "${ok[@]}" --frobnicate
	usage_case "missing --cpu" "--cpu: missing" enp59s0f0 --ip 10.1.0.1 --remote-ip 10.1.0.2 --irq-cpu 3
	usage_case "bad --remote-mac" "--remote-mac: 'zz:00:00:00:00:01' is not a MAC" \
		"${ok[@]}" --remote-mac zz:00:00:00:00:01
	usage_case "--irq-prio out of range" "--irq-prio: '0' is out of range \(1 to 99\)" "${ok[@]}" --irq-prio 0
	usage_case "unknown interface" "nosuch0: no such interface" \
		nosuch0 --no-namespace --ip 10.1.0.1 --remote-ip 10.1.0.2 --cpu 2 --irq-cpu 3
	usage_case "steering the system clock without --host-tuning" "--ptp-source: CLOCK_REALTIME" \
		"${ok[@]}" --ptp-source CLOCK_REALTIME --ptp-sync-to enp59s0f0
	usage_case "a PHC to follow itself" "--ptp-sync-to: '/dev/ptp3' is also the clock to steer" \
		"${ok[@]}" --ptp-sync-to enp59s0f0
	usage_case "--busy-poll without its value" "--busy-poll: missing value" "${ok[@]}" --busy-poll
	usage_case "--busy-poll followed by an option" "--busy-poll: '--no-ptp' is not a number \(0 to 1000000\)" \
		"${ok[@]}" --busy-poll --no-ptp
	usage_case "--busy-poll out of range" "--busy-poll: '2000000' is out of range" "${ok[@]}" --busy-poll 2000000
	usage_case "a clock device that is not there" "--ptp-sync-to: /dev/ptp9: no such clock device" \
		"${ok[@]}" --ptp-sync-to /dev/ptp9
	LINK_WAIT=ten usage_case "LINK_WAIT not a number" "LINK_WAIT: 'ten' is not a number \(0 to 600\)" "${ok[@]}"
	RING_SIZE=0 usage_case "RING_SIZE out of range" "RING_SIZE: '0' is out of range \(1 to 65536\)" "${ok[@]}"
	STOP_TIMEOUT=-1 usage_case "STOP_TIMEOUT not a number" "STOP_TIMEOUT: '-1' is not a number" "${ok[@]}"
	cfg "$root" --help
	t "--help exits 0 and documents --undo" bash -c '[[ $1 == 0 ]] && grep -q -- --undo "$2"' _ "$RC" "$OUT"
}

test_mlx5() {
	local root=$TMP/mlx5 before after state1 foreign
	mkdir -p "$root"
	fake_mlx5 "$root"
	local args=(enp59s0f0 --no-namespace --ip 10.1.0.1 --remote-ip 10.1.0.2
		--remote-mac 0c:42:a1:00:00:02 --cpu 2 --irq-cpu 3)

	# A phc2sys this script did not start, steering the other port's clock.
	"$PHC2SYS_STUB" -s CLOCK_REALTIME -c /dev/ptp4 -O 0 &
	foreign=$!
	BG_PIDS+=("$foreign")

	before=$(snap_fake "$root")
	cfg "$root" "${args[@]}" --dry-run
	t "mlx5: discovery shows driver, PCI address, NUMA node and PHC" \
		bash -c 'grep -q "driver *mlx5_core" "$1" && grep -q "pci *0000:3b:00.0" "$1" &&
			grep -q "numa node *0" "$1" && grep -q "phc */dev/ptp3" "$1"' _ "$OUT"
	t "mlx5: IRQs are this port's comp and async vectors, not the other port's" \
		bash -c 'grep -q "irqs *100 (mlx5_async0@pci:0000:3b:00.0) 101 (mlx5_comp0@pci:0000:3b:00.0) 102 (mlx5_comp1@pci:0000:3b:00.0) *$" "$1"' _ "$OUT"
	t "mlx5: --dry-run prints the driver-specific commands" \
		bash -c 'grep -q "\$ .*ethtool --set-priv-flags enp59s0f0 rx_cqe_moder off" "$1" &&
			grep -q "\$ .*ethtool --set-priv-flags enp59s0f0 tx_port_ts on" "$1" &&
			grep -q "\$ echo 3 > .*/proc/irq/101/smp_affinity_list" "$1" &&
			grep -q "\$ .*phc2sys[-0-9]* -s CLOCK_REALTIME -c /dev/ptp3 -O 0" "$1"' _ "$OUT"
	after=$(snap_fake "$root")
	t "mlx5: --dry-run changes nothing and writes no state" \
		bash -c '[[ $1 == 0 && "$2" == "$3" && ! -e $4/run/enp59s0f0.state ]] &&
			! grep -q -- " -[CKGLA] \| --set-priv-flags\|^chrt\|^tc qdisc replace" "$4/state/calls.log"' \
		_ "$RC" "$before" "$after" "$root"

	cfg "$root" "${args[@]}"
	t "mlx5: apply exits 0 with nothing failed" \
		bash -c '[[ $1 == 0 ]] && grep -q "applied, .* 0 failed$" "$2"' _ "$RC" "$OUT"
	t "mlx5: only this port's IRQs move to --irq-cpu" bash -c '
		for i in 100 101 102; do [[ $(cat "$1/proc/irq/$i/smp_affinity_list") == 3 ]] || exit 1; done
		for i in 110 111 24; do [[ $(cat "$1/proc/irq/$i/smp_affinity_list") == 0-3 ]] || exit 1; done' _ "$root"
	t "mlx5: this port's IRQ threads get FIFO 55, the other port's keep FIFO 50" \
		bash -c '. "$2"; stat_is() { local f; read -r -a f <<<"$(sed "s/.*) //" "$1/proc/$2/stat")"; [[ "${f[38]} ${f[37]}" == "$3" ]]; }
			stat_is "$1" 501 "1 55" && stat_is "$1" 503 "1 55" && stat_is "$1" 504 "1 55" && stat_is "$1" 511 "1 50"' \
		_ "$root" "$HERE/lib.sh"
	t "mlx5: ksoftirqd of the named CPUs only gets FIFO 11" \
		bash -c 'stat_is() { local f; read -r -a f <<<"$(sed "s/.*) //" "$1/proc/$2/stat")"; [[ "${f[38]} ${f[37]}" == "$3" ]]; }
			stat_is "$1" 30 "1 11" && stat_is "$1" 40 "1 11" && stat_is "$1" 10 "0 0" && stat_is "$1" 20 "0 0"' _ "$root"
	local e=$root/state/ethtool
	t "mlx5: private flags set on this port only" bash -c '
		. "$1"
		kv_get "$2/enp59s0f0/privflags" rx_cqe_moder | grep -qx off &&
		kv_get "$2/enp59s0f0/privflags" tx_port_ts | grep -qx on &&
		kv_get "$2/enp59s0f0/privflags" rx_striding_rq | grep -qx off &&
		kv_get "$2/enp59s0f1/privflags" rx_cqe_moder | grep -qx on' _ "$HERE/lib.sh" "$e"
	t "mlx5: coalescing, rings, channels, pause and offloads set" bash -c '
		. "$1"; d=$2/enp59s0f0
		[[ $(kv_get $d/coalesce adaptive-rx) == off && $(kv_get $d/coalesce rx-usecs) == 0 &&
		   $(kv_get $d/coalesce rx-frames) == 1 && $(kv_get $d/rings rx) == 256 &&
		   $(kv_get $d/channels combined) == 1 && $(kv_get $d/pause rx) == off &&
		   $(kv_get $d/features generic-receive-offload) == off ]]' _ "$HERE/lib.sh" "$e"
	local dev=$root/sys/devices/pci0000:00/0000:00:02.0/0000:3b:00.0
	t "mlx5: NAPI, PCIe runtime PM and ASPM set through sysfs" bash -c '
		[[ $(cat "$1/net/enp59s0f0/gro_flush_timeout") == 0 && $(cat "$1/net/enp59s0f0/napi_defer_hard_irqs") == 0 &&
		   $(cat "$1/power/control") == on && $(cat "$1/link/l1_aspm") == 0 && $(cat "$1/link/l0s_aspm") == 0 &&
		   $(cat "$2/power/control") == auto ]]' _ "$dev" "${dev%.0}.1"
	t "mlx5: host-wide sysctls listed but not changed without --host-tuning" bash -c '
		[[ $(cat "$1/proc/sys/kernel/sched_rt_runtime_us") == 950000 ]] &&
		grep -q "host .*sched_rt_runtime_us .*--host-tuning" "$2"' _ "$root" "$OUT"
	local pid
	pid=$(cat "$root/run/enp59s0f0.phc2sys.pid" 2>/dev/null)
	t "mlx5: phc2sys started for this PHC, tracked by pid file" bash -c '
		[[ -n $1 ]] && kill -0 "$1" && tr "\0" " " </proc/$1/cmdline | grep -q -- "-s CLOCK_REALTIME -c /dev/ptp3 -O 0"' _ "$pid"
	[[ -n $pid ]] && BG_PIDS+=("$pid")

	cfg "$root" "${args[@]}" --check
	t "mlx5: --check after apply exits 0, nothing 'not set'" \
		bash -c '[[ $1 == 0 ]] && ! grep -q "not set  " "$2"' _ "$RC" "$OUT"
	state1=$(cat "$root/run/enp59s0f0.state")
	cfg "$root" "${args[@]}"
	t "mlx5: applying twice is harmless (0 applied, state kept)" \
		bash -c '[[ $1 == 0 ]] && grep -q ": 0 applied, " "$2" && [[ "$3" == "$(cat "$4")" ]]' \
		_ "$RC" "$OUT" "$state1" "$root/run/enp59s0f0.state"
	echo 0-3 >"$root/proc/irq/101/smp_affinity_list"
	cfg "$root" "${args[@]}" --check
	t "mlx5: --check notices a setting that drifted, exits 1" \
		bash -c '[[ $1 == 1 ]] && grep -q "not set *irq 101 affinity *is .0-3., want .3." "$2"' _ "$RC" "$OUT"

	local applied
	applied=$(snap_fake "$root")
	cfg "$root" enp59s0f0 --undo --dry-run
	t "mlx5: --undo --dry-run prints the restoring commands, changes nothing" bash -c '
		[[ $1 == 0 && "$2" == "$3" && -e $4/run/enp59s0f0.state ]] &&
		grep -q "\$ echo 0-3 > .*/proc/irq/101/smp_affinity_list" "$5" &&
		grep -q "\$ kill \$(cat .*/enp59s0f0.phc2sys.pid)" "$5"' \
		_ "$RC" "$applied" "$(snap_fake "$root")" "$root" "$OUT"

	cfg "$root" enp59s0f0 --undo
	after=$(snap_fake "$root")
	t "mlx5: --undo exits 0 and restores every value of the tree" \
		bash -c '[[ $1 == 0 && "$2" == "$3" ]] || { diff <(echo "$2") <(echo "$3"); exit 1; }' _ "$RC" "$before" "$after"
	t "mlx5: --undo stops our phc2sys and removes the state" \
		bash -c 'for i in $(seq 600); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
			! kill -0 "$1" 2>/dev/null && [[ ! -e $2/run/enp59s0f0.state && ! -e $2/run/enp59s0f0.phc2sys.pid ]]' _ "$pid" "$root"
	t "mlx5: a phc2sys it did not start keeps running" alive "$foreign"
	cfg "$root" "${args[@]}" --check
	t "mlx5: --check after undo exits 1" rc_is 1

	# --host-tuning and --busy-poll, then undo.
	cfg "$root" "${args[@]}" --no-ptp --host-tuning --busy-poll 50
	t "mlx5: --host-tuning --busy-poll 50 set the sysctls and NAPI deferral" bash -c '
		[[ $1 == 0 && $(cat "$2/proc/sys/kernel/sched_rt_runtime_us") == -1 &&
		   $(cat "$2/proc/sys/net/core/busy_poll") == 50 && $(cat "$2/proc/sys/net/core/busy_read") == 50 &&
		   $(cat "$2/sys/class/net/enp59s0f0/napi_defer_hard_irqs") == 2 &&
		   $(cat "$2/sys/class/net/enp59s0f0/gro_flush_timeout") == 200000 ]]' _ "$RC" "$root"
	cfg "$root" enp59s0f0 --undo
	after=$(snap_fake "$root")
	t "mlx5: --undo restores the host-wide sysctls too" \
		bash -c '[[ $1 == 0 && "$2" == "$3" ]]' _ "$RC" "$before" "$after"

	# One step fails: the rest still runs, exit 1, undo still complete.
	echo "netlink error: Invalid argument" >"$e/enp59s0f0/fail--G"
	cfg "$root" "${args[@]}" --no-ptp
	t "mlx5: a failing step is reported, the others still run, exit 1" bash -c '
		[[ $1 == 1 ]] && grep -q "failed *ring rx .*Invalid argument" "$2" &&
		grep -q "applied *priv rx_cqe_moder" "$2" && grep -q "applied *irq 102 affinity" "$2" &&
		grep -q " 2 failed$" "$2"' _ "$RC" "$OUT"
	t "mlx5: a step that failed leaves no undo record, the applied ones do" bash -c '
		! grep -q "^ring " "$1" && grep -q "^priv rx_cqe_moder	" "$1" && grep -q "^coalesce rx-usecs	" "$1"' \
		_ "$root/run/enp59s0f0.state"
	rm -f "$e/enp59s0f0/fail--G"
	cfg "$root" enp59s0f0 --undo
	after=$(snap_fake "$root")
	t "mlx5: --undo after a partial apply restores everything" \
		bash -c '[[ $1 == 0 && "$2" == "$3" ]]' _ "$RC" "$before" "$after"

	# A driver that accepts coalescing settings and ignores them: the value
	# read back is the outcome, and what did not change has no record.
	: >"$e/enp59s0f0/noop--C"
	cfg "$root" "${args[@]}" --no-ptp
	t "mlx5: a setting accepted but not taken (read back unchanged) fails, exit 1" bash -c '
		[[ $1 == 1 ]] &&
		grep -q "failed *coalesce rx-usecs .*-C enp59s0f0 rx-usecs 0: did not take effect (still reads .8.)$" "$2" &&
		[[ $(grep -c "^  failed  *coalesce " "$2") == 6 ]] && grep -q "applied *ring rx" "$2" &&
		grep -q " 6 failed$" "$2"' _ "$RC" "$OUT"
	t "mlx5: ... and leaves no undo record for it" bash -c '
		! grep -q "^coalesce " "$1" && grep -q "^ring rx	" "$1"' _ "$root/run/enp59s0f0.state"
	rm -f "$e/enp59s0f0/noop--C"
	cfg "$root" enp59s0f0 --undo
	t "mlx5: --undo after it exits 0 and restores everything" \
		bash -c '[[ $1 == 0 && "$2" == "$3" ]] && grep -q " 0 failed$" "$4"' \
		_ "$RC" "$before" "$(snap_fake "$root")" "$OUT"
	kill "$foreign" 2>/dev/null
}

# The earlier config.sh's --busy-poll VAL, a dry run that predicts every
# verdict of the apply, failures with their reasons, the name it is called by.
test_fake_more() {
	local root=$TMP/more before pid
	mkdir -p "$root"
	fake_mlx5 "$root"
	local args=(enp59s0f0 --no-namespace --ip 10.1.0.1 --remote-ip 10.1.0.2 --cpu 2 --irq-cpu 3)
	before=$(snap_fake "$root")

	cfg "$root" "${args[@]}" --busy-poll 30 --dry-run
	cp "$OUT" "$root/dry.txt"
	t "--busy-poll 30 --dry-run: would set busy_read and busy_poll to 30 without --host-tuning" bash -c '
		[[ $1 == 0 ]] && grep -q "would apply busy_read *.0. -> .30." "$2" &&
		grep -q "would apply busy_poll *.0. -> .30." "$2" &&
		grep -q "\$ echo 30 > .*/proc/sys/net/core/busy_poll" "$2"' _ "$RC" "$OUT"
	cfg "$root" "${args[@]}" --busy-poll 30
	cp "$OUT" "$root/apply.txt"
	pid=$(cat "$root/run/enp59s0f0.phc2sys.pid" 2>/dev/null)
	[[ -n $pid ]] && BG_PIDS+=("$pid")
	t "--busy-poll 30: net.core.busy_read and busy_poll are 30, NAPI deferral for busy polling" bash -c '
		[[ $1 == 0 && $(cat "$2/proc/sys/net/core/busy_poll") == 30 && $(cat "$2/proc/sys/net/core/busy_read") == 30 &&
		   $(cat "$2/sys/class/net/enp59s0f0/napi_defer_hard_irqs") == 2 &&
		   $(cat "$2/proc/sys/kernel/sched_rt_runtime_us") == 950000 ]]' _ "$RC" "$root"
	t "fake mlx5: the dry run predicted the apply's verdict for every step" \
		same_verdicts "$root/dry.txt" "$root/apply.txt"
	cfg "$root" "${args[@]}" --busy-poll 30 --check
	t "--busy-poll 30 --check: in place (exit 0)" \
		bash -c '[[ $1 == 0 ]] && grep -q "in place *busy_poll *30" "$2"' _ "$RC" "$OUT"
	cfg "$root" "${args[@]}" --busy-poll 40 --check
	t "--busy-poll 40 --check after 30: not set (exit 1)" \
		bash -c '[[ $1 == 1 ]] && grep -q "not set *busy_poll *is .30., want .40." "$2"' _ "$RC" "$OUT"
	cfg "$root" enp59s0f0 --undo
	t "--busy-poll: --undo puts busy_read/busy_poll back to 0 and everything else" \
		bash -c '[[ $1 == 0 && "$2" == "$3" ]] || { diff <(echo "$2") <(echo "$3"); exit 1; }' \
		_ "$RC" "$before" "$(snap_fake "$root")"

	# TSO's parts, one of them off: --undo puts each back as it was, not
	# all on with "tso on" (e1000e's tx-tcp-mangleid-segmentation, seen in
	# the guest lab).
	printf '%s\n' "tx-tcp-segmentation on" "tx-tcp-ecn-segmentation off [fixed]" \
		"tx-tcp-mangleid-segmentation off" "tx-tcp6-segmentation on" \
		>>"$root/state/ethtool/enp59s0f0/features"
	local tso_before
	tso_before=$(snap_fake "$root")
	cfg "$root" "${args[@]}" --no-ptp
	t "TSO off turns its parts off" bash -c '
		. "$1"; [[ $(kv_get "$2" tx-tcp-segmentation) == off && $(kv_get "$2" tx-tcp6-segmentation) == off ]]' \
		_ "$HERE/lib.sh" "$root/state/ethtool/enp59s0f0/features"
	cfg "$root" enp59s0f0 --undo
	t "TSO's parts put back each as it was (one was off), not all on" \
		bash -c '[[ $1 == 0 && "$2" == "$3" ]] || { diff <(echo "$2") <(echo "$3"); exit 1; }' \
		_ "$RC" "$tso_before" "$(snap_fake "$root")"
	sed -i '/^tx-tcp/d' "$root/state/ethtool/enp59s0f0/features"

	# A managed IRQ, as the IRQ debugfs shows it: skipped by both.
	mkdir -p "$root/sys/kernel/debug/irq/irqs"
	printf 'handler:  handle_edge_irq\ndstate:   0x3600200\n            IRQD_AFFINITY_SET\n            IRQD_AFFINITY_MANAGED\n' \
		>"$root/sys/kernel/debug/irq/irqs/102"
	cfg "$root" "${args[@]}" --no-ptp --dry-run
	cp "$OUT" "$root/dry.txt"
	cfg "$root" "${args[@]}" --no-ptp
	t "managed IRQ (debugfs): skipped with the reason by the dry run and the apply alike" bash -c '
		grep -q "skipped *irq 102 affinity *affinity is managed by the kernel" "$1" &&
		grep -q "skipped *irq 102 affinity *affinity is managed by the kernel" "$2" &&
		grep -q "applied *irq 101 affinity" "$2" && [[ $(cat "$3/proc/irq/102/smp_affinity_list") == 0-3 ]]' \
		_ "$root/dry.txt" "$OUT" "$root"
	t "managed IRQ: the dry run predicted every verdict" same_verdicts "$root/dry.txt" "$OUT"
	cfg "$root" enp59s0f0 --undo
	rm -r "$root/sys/kernel"

	# The PHC has no device node: predicted, and failed with the reason.
	mv "$root/dev/ptp3" "$root/dev/ptp3.gone"
	cfg "$root" "${args[@]}" --dry-run
	cp "$OUT" "$root/dry.txt"
	t "no /dev/ptp3: the dry run predicts phc2sys fails, with the reason, exit 1" bash -c '
		[[ $1 == 1 ]] && grep -q "failed *phc2sys */dev/ptp3: no such clock device" "$2" &&
		grep -q " 1 failed$" "$2"' _ "$RC" "$OUT"
	cfg "$root" "${args[@]}"
	cp "$OUT" "$root/apply.txt"
	t "no /dev/ptp3: the apply fails phc2sys the same way" bash -c '
		[[ $1 == 1 ]] && grep -q "failed *phc2sys */dev/ptp3: no such clock device" "$2"' _ "$RC" "$OUT"
	t "no /dev/ptp3: the dry run predicted every verdict" same_verdicts "$root/dry.txt" "$root/apply.txt"
	t "no /dev/ptp3: no failure without its reason" no_empty_reason "$OUT"
	cfg "$root" enp59s0f0 --undo
	mv "$root/dev/ptp3.gone" "$root/dev/ptp3"

	# What the dry run can know of the apply's failures, it predicts: the
	# same verdicts side by side, exit 1 both.
	# dry_and_apply ROOT NAME ARGS...: both runs, their outputs in
	# ROOT/dry.txt and ROOT/apply.txt, their exit statuses in DRY_RC, RC.
	dry_and_apply() {
		local r=$1
		shift
		cfg "$r" "$@" --dry-run
		DRY_RC=$RC
		cp "$OUT" "$r/dry.txt"
		cfg "$r" "$@"
		cp "$OUT" "$r/apply.txt"
	}
	local DRY_RC
	# A ring the driver does not have: ethtool -g shows its maximum as 0.
	sed -i 's/^max-tx 8192$/max-tx 0/' "$root/state/ethtool/enp59s0f0/rings"
	dry_and_apply "$root" "${args[@]}" --no-ptp
	t "a ring of maximum 0: not supported, said alike by the dry run and the apply" bash -c '
		[[ $1 == 0 && $2 == 0 ]] &&
		grep -q "^  skipped  *ring tx  *not supported by this driver (mlx5_core)$" "$3/dry.txt" &&
		grep -q "^  applied  *ring rx " "$3/apply.txt"' _ "$DRY_RC" "$RC" "$root"
	t "a ring of maximum 0: the dry run predicted every verdict" same_verdicts "$root/dry.txt" "$root/apply.txt"
	cfg "$root" enp59s0f0 --undo
	sed -i 's/^max-tx 0$/max-tx 8192/' "$root/state/ethtool/enp59s0f0/rings"

	# Tools that are not installed: ethtool, chrt and phc2sys (named by
	# config.sh's settings), setsid (found on PATH: a PATH without it).
	local nobin=$TMP/nosetsid d
	mkdir -p "$nobin"
	# (one ln a PATH directory; a name taken by an earlier one is kept)
	for d in ${PATH//:/ }; do
		ln -s "$d"/* "$nobin/" 2>/dev/null
	done
	rm -f "$nobin/setsid"
	PATH=$nobin dry_and_apply "$root" "${args[@]}"
	t "setsid missing: phc2sys fails saying so, in the dry run and the apply alike, exit 1" bash -c '
		[[ $1 == 1 && $2 == 1 ]] &&
		grep -q "^  failed  *phc2sys  *.*/phc2sys-[0-9]* -s CLOCK_REALTIME -c /dev/ptp3 -O 0 -m: setsid not installed$" "$3/dry.txt"' \
		_ "$DRY_RC" "$RC" "$root"
	t "setsid missing: the dry run predicted every verdict" same_verdicts "$root/dry.txt" "$root/apply.txt"
	cfg "$root" enp59s0f0 --undo
	CFG_ETHTOOL=$TMP/none/ethtool CFG_CHRT=$TMP/none/chrt CFG_PHC2SYS=$TMP/none/phc2sys dry_and_apply "$root" "${args[@]}"
	t "ethtool, chrt, phc2sys missing: each step that needs one fails saying so, exit 1" bash -c '
		[[ $1 == 1 && $2 == 1 ]] && f=$3/apply.txt &&
		grep -q "^  failed  *ethtool  *ethtool not installed: " "$f" &&
		grep -q "^  failed  *irq 101 thread  *chrt not installed (util-linux)$" "$f" &&
		grep -q "^  failed  *ksoftirqd/2  *chrt not installed (util-linux)$" "$f" &&
		grep -q "^  failed  *phc2sys  *phc2sys not installed (linuxptp; or --no-ptp)$" "$f" &&
		grep -q " 7 failed$" "$f" && ! grep -q "^  skipped .*not installed" "$f"' _ "$DRY_RC" "$RC" "$root"
	t "ethtool, chrt, phc2sys missing: the dry run predicted every verdict" \
		same_verdicts "$root/dry.txt" "$root/apply.txt"
	cfg "$root" enp59s0f0 --undo
	t "after the missing tools, --undo restores every value" \
		bash -c '[[ $1 == 0 && "$2" == "$3" ]]' _ "$RC" "$before" "$(snap_fake "$root")"

	# phc2sys dies at once without a word: the failure still says so.
	echo 3 >"$root/state/phc2sys-exit"
	cfg "$root" "${args[@]}"
	t "phc2sys dying silently: failed with its exit status and where its log is" bash -c '
		[[ $1 == 1 ]] && grep -q "failed *phc2sys .*exited at once (status 3): no message (log: .*enp59s0f0.phc2sys.log)" "$2"' \
		_ "$RC" "$OUT"
	t "phc2sys dying silently: no failure without its reason" no_empty_reason "$OUT"
	rm -f "$root/state/phc2sys-exit"
	cfg "$root" enp59s0f0 --undo
	t "after the failed phc2sys, --undo restores every value" \
		bash -c '[[ $1 == 0 && "$2" == "$3" ]]' _ "$RC" "$before" "$(snap_fake "$root")"

	# ethtool --json for features and pause, the text where there is none.
	# ethtool_apply ROOT [STUB-MODE]: an mlx5 tree with a fixed-on feature,
	# applied with the ethtool stub in that mode; the output in ROOT/apply.txt
	ethtool_apply() {
		mkdir -p "$1"
		fake_mlx5 "$1"
		echo "tx-udp-segmentation on [fixed]" >>"$1/state/ethtool/enp59s0f0/features"
		[[ -z ${2:-} ]] || : >"$1/state/$2"
		cfg "$1" "${args[@]}" --no-ptp
		cp "$OUT" "$1/apply.txt"
	}
	local jroot=$TMP/json troot=$TMP/text
	ethtool_apply "$jroot"
	ethtool_apply "$troot" ethtool-no-json
	t "ethtool --json: features read as JSON, pause from the text (6.1's JSON says true for off)" bash -c '
		grep -q "^ethtool --json -k enp59s0f0$" "$1" && ! grep -q "^ethtool --json -a enp59s0f0$" "$1" &&
		! grep -q "^ethtool -k enp59s0f0$" "$1" && grep -q "^ethtool -a enp59s0f0$" "$1"' _ "$jroot/state/calls.log"
	t "ethtool without JSON: falls back to the text" bash -c '
		grep -q "^ethtool --json -k enp59s0f0$" "$1" && grep -q "^ethtool -k enp59s0f0$" "$1" &&
		grep -q "^ethtool -a enp59s0f0$" "$1"' _ "$troot/state/calls.log"
	t "ethtool JSON and text: the same verdicts, a fixed-on feature skipped, pause set" bash -c '
		same_verdicts() { [[ $(grep -c . "$1") -gt 20 ]] && diff <(cut -c1-40 "$1") <(cut -c1-40 "$2") >&2; }
		same_verdicts "$1/apply.txt" "$2/apply.txt" &&
		grep -q "skipped *offload udp-gso *fixed on by this driver" "$1/apply.txt" &&
		grep -q "applied *pause *.autoneg on rx on tx on. -> .autoneg off rx off tx off." "$1/apply.txt" &&
		grep -q "applied *offload gro " "$1/apply.txt"' _ "$jroot" "$troot"

	# A later ethtool gives JSON for coalescing, rings and channels too; the
	# first such one named adaptive-rx "rx" in -c: that JSON is not trusted.
	local aroot=$TMP/json-all xroot=$TMP/json-rx
	ethtool_apply "$aroot" ethtool-json-all
	ethtool_apply "$xroot" ethtool-json-rx
	t "ethtool --json for -c, -g, -l where ethtool has it: no text read" bash -c '
		for o in -k -c -g -l; do
			grep -q "^ethtool --json $o enp59s0f0$" "$1" && ! grep -q "^ethtool $o enp59s0f0$" "$1" || exit 1
		done' _ "$aroot/state/calls.log"
	t "ethtool JSON for -c, -g, -l: the same verdicts as from the text" bash -c '
		[[ $(grep -c . "$1") -gt 20 ]] && diff <(cut -c1-40 "$1") <(cut -c1-40 "$2") >&2' \
		_ "$aroot/apply.txt" "$troot/apply.txt"
	t "ethtool JSON: rings from rx/rx-max, channels from combined-max, coalescing values" bash -c '
		grep -q "applied *ring rx *.1024. -> .256.$" "$1" &&
		grep -q "applied *ring tx *.1024. -> .256.$" "$1" &&
		grep -q "applied *channels *.combined 16. -> .combined 1.$" "$1" &&
		grep -q "applied *coalesce adaptive-rx *.on. -> .off.$" "$1" &&
		grep -q "applied *coalesce rx-usecs *.8. -> .0.$" "$1" || { cat "$1" >&2; exit 1; }' \
		_ "$aroot/apply.txt"
	t "ethtool JSON with adaptive-rx as \"rx\": -c read from the text, -g and -l from JSON" bash -c '
		grep -q "^ethtool --json -c enp59s0f0$" "$1" && grep -q "^ethtool -c enp59s0f0$" "$1" &&
		! grep -q "^ethtool -g enp59s0f0$" "$1" && ! grep -q "^ethtool -l enp59s0f0$" "$1" &&
		diff <(cut -c1-40 "$2") <(cut -c1-40 "$3") >&2' \
		_ "$xroot/state/calls.log" "$xroot/apply.txt" "$troot/apply.txt"

	# The interface disappears halfway through the apply (the stubs unplug
	# it at a given call, tests/config/lib.sh): at a read (the coalescing
	# query), then at a change (the first coalescing change).
	# iface_steps_failed OUT FIRST: every step from FIRST on, up to the
	# CPU steps, failed "interface gone", and so did phc2sys.
	iface_steps_failed() {
		awk -v first="$2" '
			substr($0, 15, 26) ~ "^" first " " { on = 1 }
			/^  [a-z].* irq-threads-other / { on = 0 }
			on { n++; if ($0 !~ /^  failed .*interface gone: enp59s0f0 is no longer in the caller.s namespace\)?$/) bad++ }
			/^  failed  *phc2sys  *interface gone: / { ptp = 1 }
			END { exit !(n > 10 && !bad && ptp) }' "$1"
	}
	# failures_counted OUT: the summary counts every failed line.
	failures_counted() {
		grep -q ": .* $(grep -c "^  failed " "$1") failed$" "$1"
	}
	local uroot=$TMP/unplug
	mkdir -p "$uroot"
	fake_mlx5 "$uroot"
	echo "enp59s0f0 ethtool --json -c *" >"$uroot/state/unplug-at"
	cfg "$uroot" "${args[@]}"
	t "interface gone at a read: exit 1, said once on stderr" bash -c '
		[[ $1 == 1 && $(wc -l <"$3") == 1 ]] &&
		grep -q "^config.sh: enp59s0f0 disappeared during the apply: the steps on it that follow fail$" "$3"' \
		_ "$RC" "$OUT" "$ERR"
	t "interface gone at a read: every later step on it failed (interface gone), none skipped" \
		iface_steps_failed "$OUT" coalescing
	t "interface gone at a read: the steps before it and the CPU steps report what they did" bash -c '
		grep -q "^  applied  *channels " "$1" && grep -q "^  applied  *ksoftirqd/2 " "$1" &&
		grep -q "^  applied  *cpu3 idle state2 " "$1"' _ "$OUT"
	t "interface gone at a read: the summary counts every failure" failures_counted "$OUT"
	fake_mlx5 "$uroot"
	cfg "$uroot" enp59s0f0 --undo
	echo "enp59s0f0 ethtool -C *" >"$uroot/state/unplug-at"
	cfg "$uroot" "${args[@]}"
	t "interface gone at a change: that step fails with its error and the reason, exit 1" bash -c '
		[[ $1 == 1 ]] &&
		grep -q "^  failed  *coalesce adaptive-rx .* adaptive-rx off: Cannot get device settings: No such device (interface gone: enp59s0f0 is no longer in the caller.s namespace)$" "$2"' \
		_ "$RC" "$OUT"
	t "interface gone at a change: every later step on it failed (interface gone)" \
		iface_steps_failed "$OUT" "coalesce adaptive-tx"
	t "interface gone at a change: the summary counts every failure" failures_counted "$OUT"
	t "interface gone at a change: no undo record for what did not change" bash -c '
		! grep -q "^coalesce \|^offload \|^ring \|^irq " "$1" && grep -q "^channels	" "$1"' \
		_ "$uroot/run/enp59s0f0.state"
	cfg "$uroot" enp59s0f0 --undo
	t "interface gone: --undo restores the CPUs, reports each record on the interface gone once, exit 0" bash -c '
		[[ $1 == 0 && ! -e $3 ]] && grep -q "^  restored  *ksoftirqd/2 " "$2" &&
		grep -q "^  gone  *channels  *enp59s0f0 is gone (not here, nor in namespace ns_enp59s0f0 or rant-enp59s0f0): nothing to restore, record dropped$" "$2" &&
		grep -q ": 8 restored, 5 gone, 0 failed$" "$2"' _ "$RC" "$OUT" "$uroot/run/enp59s0f0.state"

	# What a record restores is gone by the time of --undo (an IRQ thread
	# that exited, an IRQ freed): reported once, its record dropped, the
	# rest restored; not a failure on this --undo nor on every later one.
	local groot=$TMP/gone
	mkdir -p "$groot"
	fake_mlx5 "$groot"
	cfg "$groot" "${args[@]}" --no-ptp
	rm -r "$groot/proc/501" "$groot/proc/irq/102"
	cfg "$groot" enp59s0f0 --undo --dry-run
	t "undo of what is gone: the dry run says so, exit 0, state kept" bash -c '
		[[ $1 == 0 ]] && grep -q "^  gone  *irq 101 thread  *thread 501 is gone: the record would be dropped$" "$2" &&
		grep -q "^  gone  *irq 102 affinity  *.*/proc/irq/102/smp_affinity_list is gone" "$2" &&
		[[ -s $3 ]]' _ "$RC" "$OUT" "$groot/run/enp59s0f0.state"
	cfg "$groot" enp59s0f0 --undo
	t "undo of what is gone: reported once each, the rest restored, exit 0" bash -c '
		[[ $1 == 0 && $(grep -c "^  gone " "$2") == 2 ]] &&
		grep -q "^  gone  *irq 101 thread  *thread 501 is gone: nothing to restore, record dropped$" "$2" &&
		grep -q "^  restored  *irq 100 affinity" "$2" && grep -q ": [1-9][0-9]* restored, 2 gone, 0 failed$" "$2" &&
		[[ ! -e $3 ]]' _ "$RC" "$OUT" "$groot/run/enp59s0f0.state"
	cfg "$groot" enp59s0f0 --undo
	t "undo of what is gone: a second --undo has nothing left to do, exit 0" \
		bash -c '[[ $1 == 0 ]] && grep -q "nothing to undo" "$2"' _ "$RC" "$OUT"

	# Installed as rant-config.sh, it says so.
	mkdir -p "$TMP/bin"
	cp "$CONFIG" "$TMP/bin/rant-config.sh"
	"$TMP/bin/rant-config.sh" --help >"$OUT" 2>"$ERR"
	"$TMP/bin/rant-config.sh" enp59s0f0 --frobnicate >>"$OUT" 2>>"$ERR"
	t "installed as rant-config.sh: help and errors name rant-config.sh" bash -c '
		grep -q "^Usage: rant-config.sh IFACE" "$1" && ! grep -q "config.sh" <(grep -v "rant-config.sh" "$1") &&
		grep -q "^rant-config.sh: --frobnicate: unknown option" "$2"' _ "$OUT" "$ERR"
}

# The frequency lock (intel_pstate and acpi-cpufreq), turbo and the SELinux
# AVC cache (host-wide), and other devices' IRQ threads on the named CPUs
# (PREEMPT_RT), against fake trees: applied, predicted by the dry run,
# checked, undone exactly; skipped with the reason where the host lacks them.
test_cpu_tuning() {
	local root=$TMP/tune before
	mkdir -p "$root"
	fake_mlx5 "$root"
	fake_cpufreq "$root" 4 intel
	fake_selinux "$root" 512
	local args=(enp59s0f0 --no-namespace --no-ptp --ip 10.1.0.1 --remote-ip 10.1.0.2 --cpu 2 --irq-cpu 3)
	local c=$root/sys/devices/system/cpu
	before=$(snap_fake "$root")

	cfg "$root" "${args[@]}" --dry-run
	cp "$OUT" "$root/dry.txt"
	cfg "$root" "${args[@]}"
	cp "$OUT" "$root/apply.txt"
	t "frequency: CPUs 2 and 3 locked at intel_pstate's base frequency, the others untouched" bash -c '
		[[ $1 == 0 ]] && for n in 2 3; do
			[[ $(cat "$2/cpu$n/cpufreq/scaling_max_freq") == 2100000 &&
			   $(cat "$2/cpu$n/cpufreq/scaling_min_freq") == 2100000 ]] || exit 1
		done && [[ $(cat "$2/cpu0/cpufreq/scaling_max_freq") == 4800000 &&
			   $(cat "$2/cpu1/cpufreq/scaling_min_freq") == 800000 ]] &&
		grep -q "applied *cpu2 max-freq *.4800000. -> .2100000.$" "$3"' _ "$RC" "$c" "$root/apply.txt"
	t "turbo and the AVC cache: host-wide, listed but not changed without --host-tuning" bash -c '
		[[ $(cat "$1/sys/devices/system/cpu/intel_pstate/no_turbo") == 0 &&
		   $(cat "$1/sys/fs/selinux/avc/cache_threshold") == 512 ]] &&
		grep -q "host *turbo-off *host-wide, not changed (--host-tuning): is 0, would be 1" "$2" &&
		grep -q "host *avc-cache *host-wide, not changed (--host-tuning): is 512, would be 8192" "$2"' \
		_ "$root" "$root/apply.txt"
	t "frequency: the dry run predicted every verdict" same_verdicts "$root/dry.txt" "$root/apply.txt"
	cfg "$root" "${args[@]}" --check
	t "frequency: --check after apply: in place (exit 0)" bash -c '
		[[ $1 == 0 ]] && grep -q "in place *cpu3 min-freq *2100000" "$2"' _ "$RC" "$OUT"
	cfg "$root" enp59s0f0 --undo
	t "frequency: --undo restores every value of the tree" bash -c '[[ $1 == 0 && "$2" == "$3" ]] ||
		{ diff <(echo "$2") <(echo "$3"); exit 1; }' _ "$RC" "$before" "$(snap_fake "$root")"

	cfg "$root" "${args[@]}" --host-tuning --dry-run
	cp "$OUT" "$root/dry.txt"
	cfg "$root" "${args[@]}" --host-tuning
	cp "$OUT" "$root/apply.txt"
	t "--host-tuning: turbo off (intel_pstate no_turbo 1), AVC cache threshold 8192" bash -c '
		[[ $1 == 0 && $(cat "$2/sys/devices/system/cpu/intel_pstate/no_turbo") == 1 &&
		   $(cat "$2/sys/fs/selinux/avc/cache_threshold") == 8192 ]] &&
		grep -q "applied *avc-cache *.512. -> .8192.$" "$3"' _ "$RC" "$root" "$root/apply.txt"
	t "--host-tuning: the dry run predicted every verdict" same_verdicts "$root/dry.txt" "$root/apply.txt"
	cfg "$root" "${args[@]}" --host-tuning --check
	# (exit 1 all the same: this fake host has no isolated CPUs)
	t "--host-tuning --check: turbo and AVC in place" bash -c '
		grep -q "in place *avc-cache *8192" "$1" && grep -q "in place *turbo-off *1" "$1" &&
		! grep -q "not set *\(avc\|turbo\|cpu.*freq\)" "$1"' _ "$OUT"
	echo 512 >"$root/sys/fs/selinux/avc/cache_threshold"
	cfg "$root" "${args[@]}" --host-tuning --check
	t "--host-tuning --check: an AVC threshold put back to 512 is not set (exit 1)" bash -c '
		[[ $1 == 1 ]] && grep -q "not set *avc-cache *is .512., want .8192." "$2"' _ "$RC" "$OUT"
	echo 8192 >"$root/sys/fs/selinux/avc/cache_threshold"
	cfg "$root" enp59s0f0 --undo
	t "--host-tuning: --undo restores turbo, the AVC threshold and everything else" bash -c '
		[[ $1 == 0 && "$2" == "$3" ]] || { diff <(echo "$2") <(echo "$3"); exit 1; }' \
		_ "$RC" "$before" "$(snap_fake "$root")"
	echo 16384 >"$root/sys/fs/selinux/avc/cache_threshold"
	cfg "$root" "${args[@]}" --host-tuning
	t "--host-tuning: a larger AVC threshold is kept" bash -c '
		grep -q "in place *avc-cache *16384" "$1" && [[ $(cat "$2") == 16384 ]]' \
		_ "$OUT" "$root/sys/fs/selinux/avc/cache_threshold"
	cfg "$root" enp59s0f0 --undo

	local acpi=$TMP/tune-acpi
	mkdir -p "$acpi"
	fake_mlx5 "$acpi"
	fake_cpufreq "$acpi" 4 acpi
	before=$(snap_fake "$acpi")
	cfg "$acpi" "${args[@]}" --host-tuning
	t "acpi-cpufreq: locked at the highest frequency that is not the turbo entry, boost off" bash -c '
		[[ $1 == 0 && $(cat "$2/cpu2/cpufreq/scaling_max_freq") == 3000000 &&
		   $(cat "$2/cpu2/cpufreq/scaling_min_freq") == 3000000 && $(cat "$2/cpufreq/boost") == 0 ]]' \
		_ "$RC" "$acpi/sys/devices/system/cpu"
	cfg "$acpi" enp59s0f0 --undo
	t "acpi-cpufreq: --undo restores every value" bash -c '[[ $1 == 0 && "$2" == "$3" ]]' \
		_ "$RC" "$before" "$(snap_fake "$acpi")"

	local bare=$TMP/tune-bare
	mkdir -p "$bare"
	fake_mlx5 "$bare"
	rm -r "$bare"/sys/devices/system/cpu/cpu*/cpufreq
	cfg "$bare" "${args[@]}" --host-tuning --dry-run
	t "no cpufreq, turbo control, SELinux or RT kernel: each step skipped with the reason" bash -c '
		grep -q "skipped *cpu2 frequency *no cpufreq" "$1" &&
		grep -q "skipped *turbo-off *no intel_pstate/no_turbo nor cpufreq/boost" "$1" &&
		grep -q "skipped *avc-cache *no SELinux" "$1" &&
		grep -q "skipped *irq-threads-other *not a PREEMPT_RT kernel, no threadirqs" "$1" &&
		grep -q " 0 failed$" "$1"' _ "$OUT"

	# PREEMPT_RT: an NVMe disk's managed queue IRQs, one per CPU.
	local rt=$TMP/tune-rt
	mkdir -p "$rt"
	fake_mlx5 "$rt"
	fake_rt_storage "$rt"
	before=$(snap_fake "$rt")
	cfg "$rt" "${args[@]}" --dry-run
	cp "$OUT" "$rt/dry.txt"
	cfg "$rt" "${args[@]}"
	cp "$OUT" "$rt/apply.txt"
	t "RT: other devices' IRQ threads on CPUs 2 and 3 demoted to SCHED_OTHER" bash -c '
		. "$2"; stat_is() { local f; read -r -a f <<<"$(sed "s/.*) //" "$1/proc/$2/stat")"; [[ "${f[38]} ${f[37]}" == "$3" ]]; }
		[[ $3 == 0 ]] && stat_is "$1" 743 "0 0" && stat_is "$1" 744 "0 0" &&
		grep -q "applied *irq/43-nvme0q3 *.fifo 50. -> .other 0.$" "$4"' \
		_ "$rt" "$HERE/lib.sh" "$RC" "$rt/apply.txt"
	t "RT: threads on the other CPUs untouched, this port's at --irq-prio" bash -c '
		stat_is() { local f; read -r -a f <<<"$(sed "s/.*) //" "$1/proc/$2/stat")"; [[ "${f[38]} ${f[37]}" == "$3" ]]; }
		stat_is "$1" 740 "1 50" && stat_is "$1" 741 "1 50" && stat_is "$1" 742 "1 50" &&
		stat_is "$1" 501 "1 55"' _ "$rt"
	t "RT: the dry run predicted every verdict" same_verdicts "$rt/dry.txt" "$rt/apply.txt"
	cfg "$rt" "${args[@]}" --check
	t "RT: --check after apply: in place (exit 0)" bash -c '
		[[ $1 == 0 ]] && grep -q "in place *irq/44-nvme0q4 *other 0" "$2"' _ "$RC" "$OUT"
	cfg "$rt" enp59s0f0 --undo
	t "RT: --undo gives the threads SCHED_FIFO 50 back, every value restored" bash -c '
		[[ $1 == 0 && "$2" == "$3" ]] || { diff <(echo "$2") <(echo "$3"); exit 1; }' \
		_ "$RC" "$before" "$(snap_fake "$rt")"
}

test_ice() {
	local root=$TMP/ice foreign
	mkdir -p "$root"
	fake_ice "$root"
	local args=(eth1 --no-namespace --ip fd00:1::1/64 --remote-ip fd00:1::2 --cpu 1 --irq-cpu 0)
	"$PHC2SYS_STUB" -s CLOCK_REALTIME -c /dev/ptp5 -O 0 &
	foreign=$!
	BG_PIDS+=("$foreign")
	cfg "$root" "${args[@]}"
	t "ice: IRQs found by name (ice-eth1-TxRx-N, misc), not eth10's" bash -c '
		grep -q "irqs *200 (ice-0000:5e:00.0:misc) 201 (ice-eth1-TxRx-0) 202 (ice-eth1-TxRx-1) *$" "$1"' _ "$OUT"
	t "ice: PHC found through ethtool -T" bash -c 'grep -q "phc */dev/ptp5" "$1"' _ "$OUT"
	t "ice: fw-lldp-agent private flag turned off" \
		bash -c '. "$1"; [[ $(kv_get "$2" fw-lldp-agent) == off ]]' _ "$HERE/lib.sh" "$root/state/ethtool/eth1/privflags"
	t "ice: IPv6 test address: address added, IPv6 left on" bash -c '
		grep -q "inet6 fd00:1::1/64" "$2/state/ip/eth1/addrs" && grep -q "skipped *ipv6-off *the test address is IPv6" "$1" &&
		[[ $(cat "$2/proc/sys/net/ipv6/conf/eth1/disable_ipv6") == 0 ]]' _ "$OUT" "$root"
	t "ice: a foreign phc2sys on the same clock is left alone, step skipped" bash -c '
		[[ $1 == 0 ]] && grep -q "skipped *phc2sys *phc2sys pid $3 (not ours) already steers /dev/ptp5" "$2" &&
		kill -0 "$3"' _ "$RC" "$OUT" "$foreign"
	t "ice: eth10's IRQ thread untouched" \
		bash -c '[[ $(sed "s/.*) //" "$1/proc/611/stat" | cut -d" " -f38,39) == "50 1" ]]' _ "$root"
	cfg "$root" eth1 --undo
	t "ice: --undo exits 0" rc_is 0
	kill "$foreign" 2>/dev/null
}

# The pause step waits for the carrier (LINK_WAIT): a ring change resets
# the device and a link that comes up after pause was set negotiates it
# again.  A stand-in for sleep(1) that logs each wait and brings the
# carrier up at its third, so the wait is seen in the order of the calls.
test_carrier() {
	local root=$TMP/carrier bin=$TMP/carrier-bin carrier
	mkdir -p "$root" "$bin"
	fake_ice "$root"
	carrier=$root/sys/class/net/eth1/carrier
	# (config.sh's own waits only: the phc2sys stand-in it starts sleeps too)
	cat >"$bin/sleep" <<'EOF2'
#!/bin/bash
[[ $(cat "/proc/$PPID/comm" 2>/dev/null) == config.sh ]] || exec /bin/sleep "$@"
echo "sleep $*" >>"$FAKE_STATE/calls.log"
n=$(grep -c "^sleep 0.1$" "$FAKE_STATE/calls.log")
[[ -n ${CARRIER_AT:-} && $n -ge $CARRIER_AT ]] && echo 1 >"$CARRIER_FILE"
exit 0
EOF2
	chmod +x "$bin/sleep"
	# waits: the "sleep 0.1" lines before the pause call; "-A" (none: "none")
	waits() { awk '/^sleep 0.1$/ { n++ } /^ethtool -A / { print n + 0; f = 1; exit } END { if (!f) print "none" }' "$1"; }
	local args=(eth1 --no-namespace --ip 10.9.0.1 --remote-ip 10.9.0.2 --cpu 1 --irq-cpu 0)

	echo 0 >"$carrier"
	: >"$root/state/calls.log"
	PATH=$bin:$PATH CARRIER_AT=3 CARRIER_FILE=$carrier LINK_WAIT=5 cfg "$root" "${args[@]}"
	t "carrier: apply exits 0" rc_is 0
	t "carrier: a link without carrier is waited for (3 waits, then up), then pause is set" \
		bash -c '[[ $(cat "$1") == 1 && $2 == 3 ]] && grep -q "^ethtool -A eth1 autoneg off rx off tx off" "$3"' \
		_ "$carrier" "$(waits "$root/state/calls.log")" "$root/state/calls.log"
	t "carrier: no warning when it came back" bash -c '! grep -q "no carrier" "$1"' _ "$ERR"
	cfg "$root" eth1 --undo

	echo 0 >"$carrier"
	: >"$root/state/calls.log"
	PATH=$bin:$PATH LINK_WAIT=1 cfg "$root" "${args[@]}"
	t "carrier: never up: LINK_WAIT=1 waits 10 tenths, then pause is set anyway and apply exits 0" \
		bash -c '[[ $1 == 0 && $2 == 10 ]]' _ "$RC" "$(waits "$root/state/calls.log")"
	t "carrier: never up: one warning line names the interface and LINK_WAIT" \
		bash -c '[[ $(grep -c "eth1 has no carrier after 1s (LINK_WAIT)" "$1") == 1 ]]' _ "$ERR"
	cfg "$root" eth1 --undo

	: >"$root/state/calls.log"
	PATH=$bin:$PATH cfg "$root" "${args[@]}" --dry-run
	t "carrier: --dry-run does not wait" bash -c '! grep -q "^sleep" "$1"' _ "$root/state/calls.log"
}

# ------------------------------------------------------------- veth (root)

# The veth tests run in a private network + mount namespace (re-exec of this
# script), so the host's interfaces and /run/netns are never seen or changed.
test_veth_outer() {
	if ((EUID != 0)); then
		t_skip "not root: veth/namespace tests need root"
		return
	fi
	if ! command -v unshare >/dev/null || ! command -v ethtool >/dev/null || ! command -v ip >/dev/null; then
		t_skip "unshare, ip or ethtool missing: veth tests skipped"
		return
	fi
	if ! unshare --net --mount true 2>/dev/null; then
		t_skip "cannot create namespaces here: veth tests skipped"
		return
	fi
	unshare --net --mount --propagation private bash "$0" --veth-inner "$TMP" "$TESTNUM"
	local counts p f s
	if counts=$(cat "$TMP/veth.counts" 2>/dev/null); then
		read -r TESTNUM p f s <<<"$counts"
		PASS=$((PASS + p))
		FAIL=$((FAIL + f))
		SKIP=$((SKIP + s))
	else
		t_fail "veth tests ran to the end"
	fi
}

# snap_veth IFACE: what config.sh may change, as seen from the caller.
snap_veth() {
	local i=$1 a
	ip -o link show dev "$i" | sed -e 's/^[0-9]*: //' -e 's/\\.*//'
	ip -o addr show dev "$i" | awk '{print $3, $4}' | sort
	ethtool -k "$i"
	ethtool -l "$i"
	for a in gro_flush_timeout napi_defer_hard_irqs mtu flags tx_queue_len address; do
		printf '%s=%s\n' "$a" "$(cat "/sys/class/net/$i/$a")"
	done
	printf 'disable_ipv6=%s\n' "$(cat "/proc/sys/net/ipv6/conf/$i/disable_ipv6")"
	tc qdisc show dev "$i" | sed 's/ [0-9a-f]*: / H: /'
	ip neigh show dev "$i" nud permanent
	ip netns list | grep "^ns_\|^rant-" || true
}

same_snap() {
	[[ $(snap_veth "$1") == "$2" ]]
}

# udp_echo NS_FROM NS_TO FROM_ADDR TO_ADDR: one UDP round trip between the
# namespaces (python3), retried until the echo server is up.
udp_echo() {
	local py
	py=$(command -v python3) || return 2
	ip netns exec "$2" "$py" -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 9999)); s.settimeout(30)
d, a = s.recvfrom(100); s.sendto(d, a)' "$4" &
	local srv=$!
	ip netns exec "$1" "$py" -c '
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0)); s.settimeout(0.2)
end = time.time() + 30
while time.time() < end:
    s.sendto(b"rant", (sys.argv[2], 9999))
    try:
        if s.recv(100) == b"rant": sys.exit(0)
    except socket.timeout:
        pass
sys.exit(1)' "$3" "$4"
	local rc=$?
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	return "$rc"
}

veth_cleanup() {
	ip netns del "$PEER_NS" 2>/dev/null
	ip netns del "ns_$VA" 2>/dev/null
	ip netns del "rant-$VA" 2>/dev/null
	ip link del "$VA" 2>/dev/null
	cleanup
}

# veth_legacy MAC BEFORE: IFACE where an earlier config.sh left it, in
# rant-IFACE, with that config.sh's state file (tests/config/legacy-rant-IF.state,
# written by it for this very setup): --undo still restores everything.
veth_legacy() {
	local mac=$1 before=$2 old=rant-$VA
	ip netns add "$old"
	ip link set dev "$VA" netns "$old"
	ip -n "$old" link set dev "$VA" up
	ip -n "$old" addr replace 10.77.0.1/24 dev "$VA"
	ip -n "$old" neigh replace 10.77.0.2 lladdr "$mac" dev "$VA" nud permanent
	ip netns exec "$old" sh -c "echo 1 > /proc/sys/net/ipv6/conf/$VA/disable_ipv6"
	ip -n "$old" link set dev "$VA" multicast off
	ip netns exec "$old" ethtool -K "$VA" gro off tso off gso off tx-udp-segmentation off >/dev/null 2>&1
	ip netns exec "$old" sh -c "echo 0 > /sys/class/net/$VA/napi_defer_hard_irqs; echo 0 > /sys/class/net/$VA/gro_flush_timeout"
	sed "s/@IF@/$VA/g" "$HERE/legacy-rant-IF.state" >"$fake/run/$VA.state"

	vcfg "${args[@]}"
	t "veth, earlier rant-IFACE: apply refuses (exit 2), asks for --undo first" bash -c '
		[[ $1 == 2 ]] && grep -q "is in rant-$3, where an earlier config.sh put it; run .config.sh $3 --undo. first" "$2" &&
		ip -n "rant-$3" link show dev "$3" >/dev/null' _ "$RC" "$ERR" "$VA"
	vcfg "${args[@]}" --check
	t "veth, earlier rant-IFACE: --check reads it there, namespace not set (exit 1)" bash -c '
		[[ $1 == 1 ]] && grep -q "not set *namespace *is rant-$3 (an earlier config.sh.s), want ns_$3" "$2" &&
		grep -q "in place *offload gro *off" "$2"' _ "$RC" "$OUT" "$VA"
	vcfg "$VA" --undo
	t "veth, earlier rant-IFACE: --undo of its state file exits 0, 15 restored, none gone" \
		bash -c '[[ $1 == 0 ]] && grep -q ": 15 restored, 0 gone, 0 failed$" "$2"' _ "$RC" "$OUT"
	if wait_until 30 same_snap "$VA" "$before"; then
		t_ok "veth, earlier rant-IFACE: --undo restores the original state, rant-IFACE gone"
	else
		t_fail "veth, earlier rant-IFACE: --undo restores the original state, rant-IFACE gone" \
			"$(diff <(echo "$before") <(snap_veth "$VA"))"
	fi
}

# veth_from_netns MAC: config.sh run with `ip netns exec CALLER` on an
# interface of CALLER (a veth whose peer is in the peer namespace).  The
# namespace it creates must outlive `ip netns exec`'s temporary mount
# namespace, and --undo, run the same way, must put everything back.
veth_from_netns() {
	local caller=rantcfg$$-caller vc=rantcfg$$c vd=rantcfg$$d before dry apply
	local cargs=("$vc" --ip 10.78.0.1 --remote-ip 10.78.0.2 --cpu 1 --irq-cpu 0)
	ip netns add "$caller"
	ip link add "$vc" netns "$caller" type veth peer name "$vd" netns "$PEER_NS"
	ip -n "$caller" addr add 192.168.78.1/24 dev "$vc"
	ip -n "$caller" link set dev "$vc" up
	ip -n "$PEER_NS" addr add 10.78.0.2/24 dev "$vd"
	ip -n "$PEER_NS" link set dev "$vd" up
	before=$(ip netns exec "$caller" bash -c "$(declare -f snap_veth); snap_veth $vc")

	ncfg() {
		ip netns exec "$caller" env SYSFS="$fake/sys" PROCFS="$fake/proc" NET_SYSFS=/sys/class/net \
			NET_PROCFS=/proc/sys/net STATE_DIR="$fake/run" "$CONFIG" "$@" >"$OUT" 2>"$ERR"
		RC=$?
	}
	nsenter --net="/run/netns/$caller" env SYSFS="$fake/sys" PROCFS="$fake/proc" NET_SYSFS=/sys/class/net \
		NET_PROCFS=/proc/sys/net STATE_DIR="$fake/run" "$CONFIG" "${cargs[@]}" >"$OUT" 2>"$ERR"
	RC=$?
	t "nsenter --net (sysfs of another namespace): refused in one line, exit 2" bash -c '
		[[ $1 == 2 && $(wc -l <"$2") == 1 ]] && grep -q "in this network namespace but not in /sys/class/net" "$2"' \
		_ "$RC" "$ERR"
	ip netns exec "$caller" env SYSFS="$fake/sys" PROCFS=/proc NET_SYSFS=/sys/class/net NET_PROCFS=/proc/sys/net \
		STATE_DIR="$fake/run" "$CONFIG" "${cargs[@]}" --no-namespace --no-ptp --busy-poll 10 --dry-run >"$OUT" 2>"$ERR"
	RC=$?
	t "from ip netns exec: --busy-poll cannot reach net.core, the dry run says so (exit 1)" bash -c '
		[[ $1 == 1 ]] && grep -q "failed *busy_poll *host-wide, not visible from this network namespace" "$2"' \
		_ "$RC" "$OUT"
	ncfg "${cargs[@]}" --dry-run
	dry=$(cat "$OUT")
	ncfg "${cargs[@]}"
	apply=$(cat "$OUT")
	t "from ip netns exec: apply exits 0" rc_is 0
	t "from ip netns exec: ns_IFACE outlives ip netns exec, with the interface in it, peer alive" bash -c '
		ip -n "ns_$1" link show dev "$1" >/dev/null && ip -n "$3" link show dev "$2" >/dev/null &&
		! ip -n "$4" link show dev "$1" >/dev/null 2>&1' _ "$vc" "$vd" "$PEER_NS" "$caller"
	t "from ip netns exec: the dry run predicted the apply's verdict for every step" \
		same_verdicts <(echo "$dry") <(echo "$apply")
	if command -v python3 >/dev/null; then
		t "from ip netns exec: UDP round trip from ns_IFACE to the peer" \
			udp_echo "ns_$vc" "$PEER_NS" 10.78.0.1 10.78.0.2
	fi
	vcfg "$vc" --undo
	t "from ip netns exec: --undo from another namespace refused (exit 2), nothing undone" bash -c '
		[[ $1 == 2 && $(wc -l <"$2") == 1 ]] &&
		grep -q "applied from another network namespace; run --undo with .ip netns exec $4 config.sh $3 --undo." "$2" &&
		ip -n "ns_$3" link show dev "$3" >/dev/null && [[ -s $5/run/$3.state ]]' _ "$RC" "$ERR" "$vc" "$caller" "$fake"
	ncfg "$vc" --undo
	t "from ip netns exec: --undo exits 0, nothing failed" \
		bash -c '[[ $1 == 0 ]] && grep -q " 0 failed$" "$2"' _ "$RC" "$OUT"
	t "from ip netns exec: the interface is back in the caller's namespace as it was, ns_IFACE gone" bash -c '
		[[ $2 == "$3" ]] && ! ip netns list | grep -q "^ns_$1\b"' \
		_ "$vc" "$before" "$(ip netns exec "$caller" bash -c "$(declare -f snap_veth); snap_veth $vc")"
	ip netns del "ns_$vc" 2>/dev/null
	ip netns del "$caller"
}

veth_inner() {
	TMP=$1
	TESTNUM=$2
	OUT=$TMP/veth.out
	ERR=$TMP/veth.err
	VA=rantcfg$$a
	local vb=rantcfg$$b
	PEER_NS=rantcfg$$-peer
	local ns=ns_$VA fake=$TMP/vethfake mac before args6 state
	TMP_KEEP=$TMP
	trap 'ip netns del "$PEER_NS" 2>/dev/null; ip netns del "ns_$VA" 2>/dev/null; ip netns del "rant-$VA" 2>/dev/null; ip link del "$VA" 2>/dev/null' EXIT

	mount -t sysfs sysfs /sys || { t_fail "veth: remount /sys in the private namespace"; return; }
	mkdir -p /run/netns
	mount -t tmpfs tmpfs /run/netns || { t_fail "veth: private /run/netns"; return; }
	mkdir -p "$fake/sys/devices/system/cpu" "$fake/proc/sys/kernel"
	echo 0-1 >"$fake/sys/devices/system/cpu/online"
	: >"$fake/proc/interrupts"
	echo 950000 >"$fake/proc/sys/kernel/sched_rt_runtime_us"

	ip netns add "$PEER_NS"
	ip link add "$VA" type veth peer name "$vb" netns "$PEER_NS"
	ip -n "$PEER_NS" addr add 10.77.0.2/24 dev "$vb"
	ip -n "$PEER_NS" addr add fd77::2/64 dev "$vb" nodad
	ip -n "$PEER_NS" link set "$vb" up
	ip -n "$PEER_NS" link set lo up
	# A configured starting point, so that undo has something to restore.
	ip addr add 192.168.77.1/24 dev "$VA"
	ip link set "$VA" up
	ethtool -K "$VA" gro on >/dev/null
	echo 1 >"/sys/class/net/$VA/napi_defer_hard_irqs"
	echo 5000 >"/sys/class/net/$VA/gro_flush_timeout"
	wait_until 30 bash -c '[[ $(cat /sys/class/net/$1/operstate) == up ]]' _ "$VA"
	mac=$(ip -n "$PEER_NS" -o link show dev "$vb" | sed 's/.*link\/ether \([^ ]*\).*/\1/')
	before=$(snap_veth "$VA")
	local args=("$VA" --ip 10.77.0.1 --remote-ip 10.77.0.2 --remote-mac "$mac" --cpu 1 --irq-cpu 0)

	vcfg() {
		SYSFS=$fake/sys PROCFS=$fake/proc NET_SYSFS=/sys/class/net NET_PROCFS=/proc/sys/net \
			STATE_DIR=$fake/run "$CONFIG" "$@" >"$OUT" 2>"$ERR"
		RC=$?
	}

	vcfg "${args[@]}" --dry-run
	cp "$OUT" "$TMP/dry-run.txt"
	t "veth: --dry-run exits 0 and prints the namespace move" \
		bash -c '[[ $1 == 0 ]] && grep -q "\$ ip link set dev $2 netns ns_$2" "$3"' _ "$RC" "$VA" "$OUT"
	t "veth: --dry-run changes nothing (ip, ethtool, sysfs, no state file)" \
		bash -c '[[ "$2" == "$3" && ! -e $4/run/$1.state ]]' \
		_ "$VA" "$before" "$(snap_veth "$VA")" "$fake"

	vcfg "${args[@]}"
	cp "$OUT" "$TMP/apply.txt"
	t "veth: apply exits 0" rc_is 0
	t "veth: interface moved into namespace ns_IFACE" \
		bash -c 'ip -n "$2" link show dev "$1" >/dev/null && ! ip link show dev "$1" >/dev/null 2>&1' _ "$VA" "$ns"
	t "veth: address configured in the namespace" \
		bash -c 'ip -n "$2" -o addr show dev "$1" | grep -q "inet 10.77.0.1/24"' _ "$VA" "$ns"
	t "veth: static neighbour entry for the peer" \
		bash -c 'ip -n "$2" neigh show 10.77.0.2 dev "$1" | grep -q "lladdr $3 PERMANENT"' _ "$VA" "$ns" "$mac"
	t "veth: noqueue qdisc, link up" \
		bash -c 'tc -n "$2" qdisc show dev "$1" root | grep -q "^qdisc noqueue" &&
			ip -n "$2" -o link show dev "$1" | grep -q "<[^>]*UP[^>]*>"' _ "$VA" "$ns"
	t "veth: IPv6 and multicast off" \
		bash -c '[[ $(ip netns exec "$2" cat /proc/sys/net/ipv6/conf/$1/disable_ipv6) == 1 ]] &&
			! ip -n "$2" -o link show dev "$1" | grep -q MULTICAST' _ "$VA" "$ns"
	t "veth: GRO off, NAPI deferral and GRO flush timer 0" \
		bash -c 'ip netns exec "$2" ethtool -k "$1" | grep -q "^generic-receive-offload: off" &&
			[[ $(ip netns exec "$2" cat /sys/class/net/$1/napi_defer_hard_irqs) == 0 &&
			   $(ip netns exec "$2" cat /sys/class/net/$1/gro_flush_timeout) == 0 ]]' _ "$VA" "$ns"
	t "veth: what veth cannot do is reported as skipped with the reason" bash -c '
		grep -q "skipped *rings *not supported by this driver (veth)" "$1" &&
		grep -q "skipped *pause *not supported by this driver (veth)" "$1" &&
		grep -q "skipped *coalescing *not supported by this driver (veth)" "$1" &&
		grep -q "skipped *pcie-pm *not a PCI device" "$1" &&
		grep -q "skipped *phc2sys *no PHC" "$1" && grep -q " 0 failed$" "$1"' _ "$OUT"
	t "veth: the dry run predicted the apply's verdict for every step" \
		same_verdicts "$TMP/dry-run.txt" "$TMP/apply.txt"
	if command -v python3 >/dev/null; then
		t "veth: UDP round trip from ns_IFACE to the peer namespace" \
			udp_echo "$ns" "$PEER_NS" 10.77.0.1 10.77.0.2
	else
		t_skip "python3 missing: no UDP round trip"
	fi
	t "veth: the earlier README's nsenter --net=/var/run/netns/ns_IFACE reaches the interface" \
		bash -c 'nsenter --net="/var/run/netns/$2" ip -o addr show dev "$1" | grep -q "inet 10.77.0.1/24"' _ "$VA" "$ns"

	vcfg "${args[@]}" --check
	t "veth: --check agrees (exit 0, nothing 'not set')" \
		bash -c '[[ $1 == 0 ]] && grep -q " 0 not set," "$2"' _ "$RC" "$OUT"
	state=$(cat "$fake/run/$VA.state")
	vcfg "${args[@]}"
	t "veth: applying twice is harmless (0 applied, state kept)" \
		bash -c '[[ $1 == 0 ]] && grep -q ": 0 applied, " "$2" && [[ "$3" == "$(cat "$4")" ]]' \
		_ "$RC" "$OUT" "$state" "$fake/run/$VA.state"
	ip netns exec "$ns" ethtool -K "$VA" gro on >/dev/null
	vcfg "${args[@]}" --check
	t "veth: --check notices GRO switched back on (exit 1)" \
		bash -c '[[ $1 == 1 ]] && grep -q "not set *offload gro" "$2"' _ "$RC" "$OUT"

	vcfg "$VA" --undo
	cp "$OUT" "$TMP/undo.txt"
	t "veth: --undo exits 0" rc_is 0
	if wait_until 30 same_snap "$VA" "$before"; then
		t_ok "veth: --undo restores ip, ethtool and sysfs state exactly"
	else
		t_fail "veth: --undo restores ip, ethtool and sysfs state exactly" \
			"$(diff <(echo "$before") <(snap_veth "$VA"))"
	fi
	t "veth: --undo removes the namespace and the state file" \
		bash -c '! ip netns list | grep -q "^$1\b" && [[ ! -e $2/run/$3.state ]]' _ "$ns" "$fake" "$VA"
	vcfg "$VA" --undo
	t "veth: a second --undo has nothing to do, exits 0" \
		bash -c '[[ $1 == 0 ]] && grep -q "nothing to undo" "$2"' _ "$RC" "$OUT"

	args6=("$VA" --ip fd77::1/64 --remote-ip fd77::2 --remote-mac "$mac" --cpu 0 --irq-cpu 0)
	vcfg "${args6[@]}"
	t "veth: IPv6 apply: address in the namespace, IPv6 kept on" bash -c '
		[[ $1 == 0 ]] && ip -n "$3" -o addr show dev "$2" | grep -q "inet6 fd77::1/64" &&
		grep -q "skipped *ipv6-off *the test address is IPv6" "$4"' _ "$RC" "$VA" "$ns" "$OUT"
	vcfg "${args6[@]}" --check
	t "veth: IPv6 --check exits 0" rc_is 0
	vcfg "$VA" --undo
	if [[ $RC == 0 ]] && wait_until 30 same_snap "$VA" "$before"; then
		t_ok "veth: IPv6 --undo restores the original state"
	else
		t_fail "veth: IPv6 --undo restores the original state" "$(diff <(echo "$before") <(snap_veth "$VA"))"
	fi

	veth_legacy "$mac" "$before"
	veth_from_netns "$mac"

	ip route add default via 192.168.77.254 dev "$VA"
	vcfg "${args[@]}"
	t "veth: refuses to move the interface carrying the default route (exit 2)" \
		bash -c '[[ $1 == 2 ]] && grep -q "carries the default route" "$2" && ip link show dev "$3" >/dev/null' \
		_ "$RC" "$ERR" "$VA"
	ip route del default via 192.168.77.254 dev "$VA"

	# A leftover file where ns_IFACE would be: the move fails, and the link
	# steps that needed it are failures (not done), not skips.
	: >"/run/netns/$ns"
	vcfg "${args[@]}" --dry-run
	cp "$OUT" "$TMP/leftover-dry.txt"
	local dry_rc=$RC
	vcfg "${args[@]}"
	t "veth, a leftover /run/netns file: the move and the link steps fail (not done), exit 1" bash -c '
		[[ $1 == 1 ]] && grep -q "^  failed  *netns-create  *.*/$3 is a leftover file" "$2" &&
		grep -q "^  failed  *address  *not done: $4 was not moved into $3$" "$2" &&
		! grep -q "^  skipped .*not moved" "$2"' _ "$RC" "$OUT" "$ns" "$VA"
	t "veth, a leftover /run/netns file: the dry run predicted every verdict and the exit status" bash -c '
		. "$4"; [[ $1 == 1 ]] && same_verdicts "$2" "$3"' _ "$dry_rc" "$TMP/leftover-dry.txt" "$OUT" "$HERE/lib.sh"
	rm "/run/netns/$ns"
	vcfg "$VA" --undo
	if [[ $RC == 0 ]] && wait_until 30 same_snap "$VA" "$before"; then
		t_ok "veth, a leftover /run/netns file: --undo restores the original state"
	else
		t_fail "veth, a leftover /run/netns file: --undo restores the original state" \
			"$(diff <(echo "$before") <(snap_veth "$VA"))"
	fi

	# Moved back out of ns_IFACE by hand after the apply: the records made
	# there are gone (reported once, dropped), the rest is restored.
	vcfg "${args[@]}"
	ip -n "$ns" link set dev "$VA" netns "$$"
	vcfg "$VA" --undo
	t "veth moved out of ns_IFACE by hand: --undo drops what was recorded there (gone), exit 0" bash -c '
		[[ $1 == 0 ]] && grep -q "^  gone  *offload gro  *$3 is no longer in namespace $4: nothing to restore, record dropped$" "$2" &&
		grep -q "^  restored  *netns-create " "$2" && grep -q " 0 failed$" "$2" && [[ ! -e $5/run/$3.state ]] &&
		! ip netns list | grep -q "^$4\b"' _ "$RC" "$OUT" "$VA" "$ns" "$fake"
	vcfg "$VA" --undo
	t "veth moved out of ns_IFACE by hand: a second --undo has nothing to do, exit 0" \
		bash -c '[[ $1 == 0 ]] && grep -q "nothing to undo" "$2"' _ "$RC" "$OUT"
	ethtool -K "$VA" gro on >/dev/null
	ip link set "$VA" up
	ip addr replace 192.168.77.1/24 dev "$VA"

	# Last, as it deletes the pair: the veth disappears halfway through the
	# apply, deleted (in ns_IFACE) by an ethtool wrapper at its first
	# offload change, before that change runs.
	cat >"$TMP/ethtool-unplug" <<'EOF2'
#!/bin/bash
if [[ $1 == -K && ! -e $UNPLUG_MARK ]]; then
	: >"$UNPLUG_MARK"
	ip link del "$2"
fi
exec ethtool "$@"
EOF2
	chmod +x "$TMP/ethtool-unplug"
	ETHTOOL=$TMP/ethtool-unplug UNPLUG_MARK=$TMP/unplugged vcfg "${args[@]}"
	cp "$OUT" "$TMP/unplug.txt"
	t "veth deleted mid-apply: exit 1, said once on stderr" bash -c '
		[[ $1 == 1 && -e $4 ]] && grep -q "^config.sh: $3 disappeared during the apply" "$2" &&
		[[ $(wc -l <"$2") == 1 ]]' _ "$RC" "$ERR" "$VA" "$TMP/unplugged"
	t "veth deleted mid-apply: the change under way fails, every later step on it fails (interface gone)" bash -c '
		grep -q "^  failed  *offload gro .*(interface gone: $2 is no longer in ns_$2)$" "$1" &&
		awk "/^  failed  *offload gro /{on=1; next} /^  [a-z].* irq-threads-other /{on=0}
			on { n++; if (\$0 !~ /^  failed .*interface gone: /) bad++ }
			END { exit !(n >= 5 && !bad) }" "$1" && grep -q "^  failed  *phc2sys  *interface gone" "$1" &&
		! grep -q "^  skipped  *\(rings\|pause\|pcie-pm\|irq-affinity\|phc2sys\) " "$1"' \
		_ "$OUT" "$VA"
	t "veth deleted mid-apply: the steps before it applied, the summary counts every failure" bash -c '
		grep -q "^  applied  *namespace " "$1" && grep -q "^  applied  *address " "$1" &&
		grep -q " $(grep -c "^  failed " "$1") failed$" "$1"' _ "$OUT"
	vcfg "$VA" --undo
	t "veth deleted mid-apply: --undo drops its records (gone), removes ns_IFACE and the state, exit 0" bash -c '
		[[ $1 == 0 && ! -e $4/run/$3.state ]] && ! ip netns list | grep -q "^ns_$3\b" &&
		grep -q "^  gone  *namespace  *$3 is gone" "$2" && grep -q "^  restored  *netns-create " "$2" &&
		grep -q " 0 failed$" "$2"' _ "$RC" "$OUT" "$VA" "$fake"
	vcfg "$VA" --undo
	t "veth deleted mid-apply: a second --undo finds neither it nor a record (exit 2, one line)" bash -c '
		[[ $1 == 2 && $(wc -l <"$2") == 1 ]] && grep -q "$3: no such interface" "$2"' _ "$RC" "$ERR" "$VA"

	printf "%s %s %s %s\n" "$TESTNUM" "$PASS" "$FAIL" "$SKIP" >"$TMP_KEEP/veth.counts"
}

main() {
	if [[ ${1:-} == --veth-inner ]]; then
		veth_inner "$2" "$3"
		return 0
	fi
	TMP=$(mktemp -d "/tmp/rantcfg$$.XXXXXX")
	trap cleanup EXIT
	OUT=$TMP/out
	ERR=$TMP/err
	# A phc2sys stand-in named for this run: config.sh tells phc2sys
	# processes by name, and other runs of these tests may have theirs.
	PHC2SYS_STUB=$TMP/phc2sys-$$
	cp "$STUBS/phc2sys" "$PHC2SYS_STUB"
	# GROUP...: only those (tests/run.sh runs two halves side by side)
	local g groups=("$@")
	[[ ${#groups[@]} -gt 0 ]] || groups=(usage mlx5 ice carrier more tuning veth)
	for g in "${groups[@]}"; do
		case $g in
		usage) test_usage ;;
		mlx5) test_mlx5 ;;
		ice) test_ice ;;
		carrier) test_carrier ;;
		more) test_fake_more ;;
		tuning) test_cpu_tuning ;;
		veth) test_veth_outer ;;
		*) t_fail "no such group of tests: $g (usage mlx5 ice carrier more tuning veth)" ;;
		esac
	done
	if [[ -n ${RANT_CFG_KEEP:-} && -d $TMP ]]; then
		cp "$TMP"/dry-run.txt "$TMP"/apply.txt "$TMP"/undo.txt "$TMP"/unplug.txt "$RANT_CFG_KEEP"/ 2>/dev/null
	fi
	finish
}

main "$@"
