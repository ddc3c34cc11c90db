#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# config.sh - prepare one network interface, and the two CPUs that serve it,
# for rant latency tests: discover, apply, check, dry-run and undo.
#
# Every change goes through run(); every setting through step(), which
# compares the current value with the wanted one, records how to put the old
# value back (state file under $STATE_DIR, one per interface), applies,
# reads the value back, and reports applied / in place / skipped (with the
# reason) / failed, keeping the record only if the value changed.  A failed
# step does not stop the others: there is deliberately no `set -e`, because a
# host left half-configured by the first refusing ethtool call is worse than
# a complete report of what could and could not be done.

# Overridable settings: the tests point these at a fake sysfs/proc tree and at
# stub tools, so the driver-specific paths run without the hardware.
: "${SYSFS:=/sys}"
: "${PROCFS:=/proc}"
: "${NET_SYSFS:=$SYSFS/class/net}"
: "${NET_PROCFS:=$PROCFS/sys/net}"
: "${STATE_DIR:=/run/rant-config}"
: "${ETHTOOL:=ethtool}"
: "${IP:=ip}"
: "${TC:=tc}"
: "${CHRT:=chrt}"
: "${PHC2SYS:=phc2sys}"
: "${RING_SIZE:=256}"
: "${NETNS_DIR:=/run/netns}"
: "${DEVFS:=/dev}"
: "${DEBUGFS:=$SYSFS/kernel/debug}"
: "${STOP_TIMEOUT:=5}"
: "${LINK_WAIT:=10}"

# Messages name the script by the name it was called with (the installed
# copy is rant-config.sh).
PROG=$(basename "$0")

# Driver private flags worth setting for latency, as "flag=value".
#  mlx5: CQE moderation batches completions (adds up to the moderation
#  period), tx_port_ts takes TX stamps at the port instead of the CQE, but
#  only for PTP traffic (ethertype 0x88F7 or UDP port 319, mlx5e_use_ptpsq):
#  rant's T1/T3 are port stamps only with rant --ptp-probe, other packets
#  keep the earlier CQE stamp; the striding RQ packs small packets into
#  shared pages at the cost of per-packet latency.  rx_cqe_compress is left
#  alone: mlx5 turns it off itself while RX stamping is on for all packets
#  (rant asks for that), and back to its default after.
#  ice: the firmware LLDP agent lets the switch's DCBX turn priority flow
#  control back on behind the pause-frame setting.
declare -A PRIV_FLAGS=(
	[mlx5_core]="rx_cqe_moder=off tx_cqe_moder=off tx_port_ts=on rx_striding_rq=off"
	[ice]="fw-lldp-agent=off"
)

# Offloads that hold packets back to merge them (GRO/LRO) or hand the stack
# super-packets (TSO/GSO): good for throughput, bad for one small packet.
# As "ethtool-feature-name=short-name".
OFFLOADS="generic-receive-offload=gro large-receive-offload=lro rx-gro-hw=gro-hw
rx-gro-list=gro-list tcp-segmentation-offload=tso generic-segmentation-offload=gso
tx-udp-segmentation=udp-gso"

# Options (see usage()).
IFACE=
ADDR=
PREFIX=
FAMILY=
REMOTE=
REMOTE_MAC=
CPU=
IRQ_CPU=
BUSY_POLL=
PTP_SOURCE=
PTP_SYNC_TO=
NO_NS=0
NO_PTP=0
IRQ_PRIO=55
KSOFTIRQD_PRIO=11
MODE=apply
DRY_RUN=0
HOST_TUNING=0

# Discovered.  NS is where IFACE goes: ns_IFACE, the earlier rant's name
# (its README enters it with nsenter --net=/var/run/netns/ns_IFACE).
# OLD_NS is the name config.sh used before, rant-IFACE: an interface found
# there is undone from its state file, but not configured further.
NS=
OLD_NS=
# Set when run under `ip netns exec`: the pid of the nearest ancestor outside
# its temporary mount namespace, where a new namespace must be mounted to
# outlive this script.
HOME_PID=
MAC=
DRIVER=
PCI=
DEV_DIR=
PCI_DIR=
NUMA=
PHC=
declare -a IRQS=()
declare -A IRQ_NAME=()
declare -A THREAD=()
CPUS_ONLINE=
CPU_MAX=0

# Where the interface is now (reads) and where changes go.  They differ only
# under --dry-run, where the namespace move is printed but not made.
QNS=
CNS=

# Set by a dry run that predicts the namespace move.
MOVED=0
STATE_FILE=
PID_FILE=
N_APPLIED=0
N_INPLACE=0
N_SKIPPED=0
N_FAILED=0
N_NOTSET=0
N_GONE=0
# IFSTEP: the steps under way act on IFACE (set by do_steps); IFACE_GONE:
# it has disappeared since discovery (iface_gone).
IFSTEP=0
IFACE_GONE=0
RUN_ERR=
# step() reports a failure whose text contains SKIP_ERR as skipped (SKIP_WHY).
SKIP_ERR=
SKIP_WHY=
declare -a UNDO=()
SEP=$'\x1f'
PCI_RE='^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$'

# ---------------------------------------------------------------- messages

usage() {
	cat <<EOF
Usage: $PROG IFACE --ip ADDR[/LEN] --remote-ip ADDR --cpu N --irq-cpu N [options]
       $PROG IFACE --undo [--dry-run]
       $PROG IFACE --check --ip ADDR ... (the same options as when applied)

Prepare IFACE for rant latency tests.  Unless --no-namespace, IFACE is moved
into the network namespace ns_IFACE (run rant with
'nsenter --net=/var/run/netns/ns_IFACE' or 'ip netns exec ns_IFACE').  Every
change is recorded in $STATE_DIR/IFACE.state so that --undo can restore it.
It may be run from inside another namespace ('ip netns exec NS $PROG ...');
run --undo from the same one.

  --ip ADDR[/LEN]      address for IFACE, IPv4 (/24 default) or IPv6 (/64)
  --remote-ip ADDR     the peer's address (same family)
  --remote-mac MAC     the peer's MAC: add a permanent neighbour entry
  --cpu N              CPU rant runs on
  --irq-cpu N          CPU that takes IFACE's interrupts and softirqs
  --busy-poll US       set net.core.busy_poll and net.core.busy_read to US
                       (host-wide, 0 to 1000000); US > 0 also prepares for
                       rant -P: napi_defer_hard_irqs 2 and gro_flush_timeout
                       200000 instead of 0 and 0
  --ptp-source CLOCK   IFACE's PHC, the clock phc2sys steers (default:
                       found in sysfs or by ethtool -T); CLOCK_REALTIME (the
                       host's clock) needs --host-tuning
  --ptp-sync-to CLOCK  the clock IFACE's PHC follows (default CLOCK_REALTIME),
                       e.g. the other port's PHC
                       (CLOCK: CLOCK_REALTIME, /dev/ptpN or an interface name)
  --no-namespace       configure IFACE where it is
  --no-ptp             do not start phc2sys
  --irq-prio N         SCHED_FIFO priority of IFACE's IRQ threads (default 55)
  --ksoftirqd-prio N   SCHED_FIFO priority of ksoftirqd on the named CPUs
                       (default 11)
  --host-tuning        also change host-wide settings (sysctls); without it
                       they are only listed
  --dry-run            print every command and the verdict the apply would
                       give each step, change nothing
  --undo               restore everything recorded for IFACE
  --check              report which settings are in place (exit 0 if all)
  -h, --help           this text

Each step is applied, in place, skipped (the host does not have it, with
the reason) or failed: refused, not taken (read back), a program it needs
not installed, or IFACE gone during the apply.  --undo drops a record whose
target no longer exists (gone).  Exit status: 0 everything requested is
applied, in place or skipped, 1 a step failed (or, with --check, a setting
is not in place), 2 usage error (nothing changed).
EOF
}

# One line on stderr naming the option and what is accepted, exit 2.
usage_error() {
	printf '%s: %s\n' "$PROG" "$1" >&2
	exit 2
}

warn() {
	printf '%s: %s\n' "$PROG" "$1" >&2
}

# report STATUS ID DETAIL: one line per step; also counts for the summary.
# A step on an interface that has disappeared did not find its setting
# missing or in place, whatever its reads said: it failed.
report() {
	local status=$1 id=$2 detail=$3
	if ((IFSTEP)) && [[ $status != applied && $status != failed ]] && iface_gone; then
		status=failed
		detail=$GONE_WHY
	fi
	case $status in
	applied|"would apply") N_APPLIED=$((N_APPLIED + 1)) ;;
	"in place"|restored) N_INPLACE=$((N_INPLACE + 1)) ;;
	skipped|host) N_SKIPPED=$((N_SKIPPED + 1)) ;;
	failed) N_FAILED=$((N_FAILED + 1)) ;;
	"not set") N_NOTSET=$((N_NOTSET + 1)) ;;
	gone) N_GONE=$((N_GONE + 1)) ;;
	esac
	printf '  %-11s %-26s %s\n' "$status" "$id" "$detail"
}

skip() {
	report skipped "$1" "$2"
}

# iface_gone: true once IFACE is no longer where discovery (or the move
# into NS) put it: unplugged, its driver unbound, renamed, or deleted (a
# veth).  Said once on stderr; every later step on it fails (report, step).
GONE_WHY=
iface_gone() {
	((IFACE_GONE)) && return 0
	[[ $MODE == apply ]] || return 1
	if [[ -n $QNS ]]; then
		"$IP" -n "$QNS" link show dev "$IFACE" >/dev/null 2>&1 && return 1
	else
		[[ -e $NET_SYSFS/$IFACE ]] && return 1
	fi
	IFACE_GONE=1
	GONE_WHY="interface gone: $IFACE is no longer in "
	if [[ -n $QNS ]]; then GONE_WHY+=$QNS; else GONE_WHY+="the caller's namespace"; fi
	warn "$IFACE disappeared during the apply: the steps on it that follow fail"
	return 0
}

# ---------------------------------------------------------------- runner

# show_cmd CMD...: the command as a user would type it.
show_cmd() {
	local w out=
	case $1 in
	write_file)
		if [[ -n ${4:-} ]]; then
			printf 'ip netns exec %s sh -c "echo %s > %s"' "$4" "$3" "$2"
		else
			printf 'echo %s > %s' "$3" "$2"
		fi
		return
		;;
	netns_add | netns_del)
		printf 'ip netns %s %s' "${1#netns_}" "$2"
		[[ -n $HOME_PID ]] && printf ' (in the mount namespace of pid %s, outside ip netns exec)' "$HOME_PID"
		return
		;;
	netns_return)
		printf "ip -n %s link set %s netns <caller's namespace>" "$2" "$3"
		return
		;;
	stop_pidfile)
		printf '%s' "kill \$(cat $2)"
		return
		;;
	start_phc2sys)
		shift
		out="$PHC2SYS $*"
		printf '%s' "$out"
		return
		;;
	esac
	for w in "$@"; do
		if [[ $w =~ ^[][A-Za-z0-9_./:=@,+%-]+$ ]]; then
			out+="$w "
		else
			out+="$(printf '%q' "$w") "
		fi
	done
	printf '%s' "${out% }"
}

# run CMD...: the one place where anything on the host changes.  Under
# --dry-run it only prints.  Leaves the command's error text in RUN_ERR.
run() {
	RUN_ERR=
	if ((DRY_RUN)); then
		printf '  %-11s $ %s\n' "" "$(show_cmd "$@")"
		return 0
	fi
	local rc
	RUN_ERR=$("$@" 2>&1 >/dev/null)
	rc=$?
	RUN_ERR=${RUN_ERR//$'\n'/; }
	[[ -z $RUN_ERR && $rc -ne 0 ]] && RUN_ERR="exit status $rc"
	return "$rc"
}

# record ID OLD CMD...: remember how to restore ID, before it is changed
# (a change made and not recorded, if this script is killed in between,
# could never be undone).  The first record of an ID wins, so applying
# twice keeps the original value; fails when it wrote nothing.
record() {
	local id=$1 old=$2 line
	shift 2
	((DRY_RUN)) && return 1
	if [[ -f $STATE_FILE ]]; then
		while IFS=$'\t' read -r line _; do
			[[ $line == "$id" ]] && return 1
		done <"$STATE_FILE"
	fi
	old=${old//[$'\t\n']/ }
	local IFS=$SEP
	printf '%s\t%s\t%s\n' "$id" "$old" "$*" >>"$STATE_FILE"
}

# unrecord ID: drop ID's record again, for a change that did not happen:
# its undo would put back what is already there, or fail on every --undo
# (a thread or file that never took the value).  An empty state file goes.
unrecord() {
	[[ -f $STATE_FILE ]] || return 0
	awk -F '\t' -v id="$1" '$1 != id' "$STATE_FILE" >"$STATE_FILE.new" &&
		mv "$STATE_FILE.new" "$STATE_FILE"
	[[ -s $STATE_FILE ]] || rm -f "$STATE_FILE"
}

# read_file PATH [NS]: a sysfs/procfs value, inside NS if given.
read_file() {
	if [[ -n ${2:-} ]]; then
		"$IP" netns exec "$2" cat "$1" 2>/dev/null
	else
		cat "$1" 2>/dev/null
	fi
}

# step ID CURRENT WANT CMD...: bring one setting from CURRENT to WANT.
# UNDO holds the command that restores CURRENT; READ, if set, one that
# prints the setting as CURRENT and WANT show it (sysfs writes and chrt
# have theirs here).  A command that succeeds is not taken at its word:
# the value read back after it is the outcome (a driver may accept a
# setting and ignore it), and only a value that changed keeps its record.
declare -a READ=()
step() {
	local id=$1 cur=$2 want=$3 added=0 ok=1 err now changed
	local -a rb=("${READ[@]}")
	READ=()
	shift 3
	if ((${#rb[@]} == 0)); then
		case $1 in
		write_file) rb=(read_file "$2" "${4:-}") ;;
		"$CHRT") rb=(sched_of "${!#}") ;;
		esac
	fi
	if ((IFSTEP)) && iface_gone; then
		report failed "$id" "$GONE_WHY"
		return 1
	fi
	if [[ $MODE == check ]]; then
		if [[ $cur == "$want" ]]; then
			report "in place" "$id" "$want"
		else
			report "not set" "$id" "is '$cur', want '$want'"
		fi
		return 0
	fi
	if [[ $cur == "$want" ]]; then
		report "in place" "$id" "$want"
		return 0
	fi
	# A program the change needs and that is not there: the apply would
	# fail on it, so the dry run says so as well (and neither tries).
	if err=$(cmd_missing "$@"); then
		report failed "$id" "$(show_cmd "$@"): $err not installed"
		return 1
	fi
	if ((DRY_RUN)); then
		report "would apply" "$id" "'$cur' -> '$want'"
		run "$@"
		return 0
	fi
	record "$id" "$cur" "${UNDO[@]}" && added=1
	run "$@" || ok=0
	err=$RUN_ERR
	# Without a value to read back, a command that failed changed nothing.
	if ((${#rb[@]})) && now=$("${rb[@]}"); then
		changed=0
		[[ $now != "$cur" ]] && changed=1
	else
		now=
		changed=$ok
	fi
	((added && !changed)) && unrecord "$id"
	if ((ok)) && [[ -z $now || $now == "$want" ]]; then
		report applied "$id" "'$cur' -> '$want'"
		return 0
	fi
	if ((ok && changed)); then
		report failed "$id" "$(show_cmd "$@"): reads '$now' after it, not '$want'"
		return 1
	fi
	if ((ok)); then
		report failed "$id" "$(show_cmd "$@"): did not take effect (still reads '$now')"
		return 1
	fi
	if [[ -n $SKIP_ERR && $err == *"$SKIP_ERR"* ]]; then
		skip "$id" "$SKIP_WHY"
		return 1
	fi
	# The command may have failed because IFACE went away under it.
	((IFSTEP)) && iface_gone && err+=" ($GONE_WHY)"
	report failed "$id" "$(show_cmd "$@"): $err"
	return 1
}

# cmd_missing CMD...: print the program CMD runs, itself or through one
# of the primitives below, that is not installed; fail if none is missing.
cmd_missing() {
	local p
	local -a progs=()
	case $1 in
	write_file) [[ -n ${4:-} ]] && progs=("$IP" sh) ;;
	netns_add | netns_del)
		progs=("$IP")
		[[ -n $HOME_PID ]] && progs+=(nsenter)
		;;
	netns_return) progs=("$IP") ;;
	start_phc2sys) progs=(setsid "$PHC2SYS") ;;
	stop_pidfile) ;;
	*)
		progs=("$1")
		[[ $1 == "$IP" && ${2:-} == netns && ${3:-} == exec && -n ${5:-} ]] && progs+=("$5")
		;;
	esac
	for p in "${progs[@]}"; do
		if ! have "$p"; then
			printf '%s' "$p"
			return 0
		fi
	done
	return 1
}

# ------------------------------------------------------- change primitives

# write_file PATH VALUE [NS]: sysfs/procfs write, inside NS if given.
write_file() {
	local path=$1 val=$2 ns=${3:-} err
	if [[ -n $ns ]]; then
		# shellcheck disable=SC2016 # expanded by the inner sh
		"$IP" netns exec "$ns" sh -c 'printf "%s\n" "$1" > "$2"' sh "$val" "$path"
		return
	fi
	if ! err=$( { printf '%s\n' "$val" >"$path"; } 2>&1); then
		printf '%s: %s\n' "$path" "${err##*: }" >&2
		return 1
	fi
}

# netns_return NS IFACE: move IFACE back to the namespace this script runs
# in (not to pid 1's: the tests run the whole thing in a private namespace).
netns_return() {
	"$IP" -n "$1" link set "$2" netns "$$"
}

# start_phc2sys ARGS...: start phc2sys in the background, write its pid
# file, and make sure it did not die at once (bad clock, clock busy).
start_phc2sys() {
	local log="$STATE_DIR/$IFACE.phc2sys.log" pid i
	local rc msg
	setsid "$PHC2SYS" "$@" </dev/null >"$log" 2>&1 &
	pid=$!
	printf '%s\n' "$pid" >"$PID_FILE"
	for ((i = 0; i < 10; i++)); do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			rc=$?
			rm -f "$PID_FILE"
			# Its last error without the "phc2sys[uptime]: " prefix, else its
			# last line that is not part of the usage text it may print.
			msg=$(grep '^phc2sys\[' "$log" | tail -n 1)
			[[ -z $msg ]] && msg=$(grep -v '^[[:space:]]*$\|^[[:space:]]\|^usage:' "$log" | tail -n 1)
			msg=${msg#phc2sys\[*\]: }
			printf 'phc2sys exited at once (status %s): %s\n' "$rc" \
				"${msg:-no message (log: $log)}" >&2
			return 1
		fi
		sleep 0.05
	done
}

# pidfile_alive PIDFILE: true if the pid in PIDFILE is a phc2sys we started.
# Processes are looked up in the real /proc even when PROCFS is a fake tree:
# phc2sys is a process this script runs, not part of the hardware.
pidfile_alive() {
	local pid comm
	[[ -r $1 ]] || return 1
	read -r pid <"$1" || return 1
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	read -r comm 2>/dev/null <"/proc/$pid/comm" || return 1
	[[ $comm == "$(basename "$PHC2SYS")" ]]
}

# stop_pidfile PIDFILE: stop the phc2sys this script started, and no other.
stop_pidfile() {
	local pid i
	if ! pidfile_alive "$1"; then
		rm -f "$1"
		return 0
	fi
	read -r pid <"$1"
	kill "$pid" || return 1
	for ((i = 0; i < STOP_TIMEOUT * 20; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$pid" 2>/dev/null; then
		echo "phc2sys (pid $pid) did not stop" >&2
		return 1
	fi
	rm -f "$1"
}

# ---------------------------------------------------------------- reading

# qx CMD...: run a read-only command where the interface is now.
qx() {
	if [[ -n $QNS ]]; then
		"$IP" netns exec "$QNS" "$@"
	else
		"$@"
	fi
}

# net_path ATTR: the interface's sysfs attribute, as seen from where it is
# (qx-relative for a namespace, where `ip netns exec` remounts /sys).
net_path() {
	if [[ -n ${2-$QNS} ]]; then
		printf '/sys/class/net/%s/%s' "$IFACE" "$1"
	else
		printf '%s/%s/%s' "$NET_SYSFS" "$IFACE" "$1"
	fi
}

# net_conf_path FAMILY KEY [NS]: per-interface sysctl file.
net_conf_path() {
	if [[ -n ${3-$QNS} ]]; then
		printf '/proc/sys/net/%s/conf/%s/%s' "$1" "$IFACE" "$2"
	else
		printf '%s/%s/conf/%s/%s' "$NET_PROCFS" "$1" "$IFACE" "$2"
	fi
}

# get FILE: contents of a file where the interface is, empty if none.
get() {
	local v
	if [[ -n $QNS && $1 == /sys/class/net/* || -n $QNS && $1 == /proc/sys/net/* ]]; then
		v=$(qx cat "$1" 2>/dev/null) || return 1
	else
		v=$(cat "$1" 2>/dev/null) || return 1
	fi
	printf '%s' "$v"
}

# have_net_file FILE: as [[ -e ]], seen from where the interface is.
have_net_file() {
	if [[ -n $QNS && ($1 == /sys/* || $1 == /proc/*) ]]; then
		qx test -e "$1"
	else
		[[ -e $1 ]]
	fi
}

have() {
	command -v "$1" >/dev/null 2>&1
}

# ipq / ipc ARGS: ip for reads (where the interface is) / changes.
ipq() {
	if [[ -n $QNS ]]; then "$IP" -n "$QNS" "$@"; else "$IP" "$@"; fi
}

# Arrays for commands that change things, prefixed for the target namespace.
ip_cmd() {
	if [[ -n $CNS ]]; then CMD=("$IP" -n "$CNS"); else CMD=("$IP"); fi
}

tool_cmd() {
	if [[ -n $CNS ]]; then CMD=("$IP" netns exec "$CNS" "$@"); else CMD=("$@"); fi
}

# ethtool_step NAME OPTION KEY CUR WANT: one ethtool setting through step(),
# with `ethtool OPTION IFACE KEY CUR` recorded as its undo.
ethtool_step() {
	local name=$1 opt=$2 key=$3 cur=$4 want=$5
	tool_cmd "$ETHTOOL" "$opt" "$IFACE" "$key" "$cur"
	UNDO=("${CMD[@]}")
	tool_cmd "$ETHTOOL" "$opt" "$IFACE" "$key" "$want"
	READ=(read_kv "${opt,,}" "$key")
	step "$name" "$cur" "$want" "${CMD[@]}"
}

# read_kv OPTION KEY: one value of `ethtool OPTION IFACE` (ethtool_kv),
# without a "[fixed]" note.  (Run in a subshell: it replaces KV.)
read_kv() {
	local v
	ethtool_kv "$1" || return 1
	v=${KV[$2]:-}
	[[ -n $v ]] || return 1
	printf '%s' "${v%% *}"
}

# read_channels KIND: channels as step_ethtool shows them, "combined N" or
# "rx N tx N".
read_channels() {
	ethtool_kv -l || return 1
	if [[ $1 == combined ]]; then
		printf 'combined %s' "${KV[combined]:-}"
	else
		printf 'rx %s tx %s' "${KV[rx]:-}" "${KV[tx]:-}"
	fi
}

# read_pause: pause as step_ethtool shows it.
read_pause() {
	ethtool_kv -a || return 1
	printf 'autoneg %s rx %s tx %s' "${KV[autonegotiate]:-off}" "${KV[rx]:-off}" "${KV[tx]:-off}"
}

# wait_carrier: until the interface has its carrier, at most LINK_WAIT
# seconds (tenths of a second apart); 1 when it is still down then.  An
# interface that is down has no carrier to read: nothing to wait for.
wait_carrier() {
	local i c
	for ((i = 0; i <= LINK_WAIT * 10; i++)); do
		c=$(get "$(net_path carrier)") || return 0
		[[ $c == 1 ]] && return 0
		((i < LINK_WAIT * 10)) && sleep 0.1
	done
	return 1
}

# ethtool_kv OPTION: `ethtool OPTION IFACE` into KV, key -> value as the
# text output shows it ("on", "off [fixed]", "256"; a pre-set maximum as
# "max-rx").  Features (-k), coalescing (-c), rings (-g) and channels (-l)
# are read from `ethtool --json` where this ethtool gives it (Debian 12's
# ethtool 6.1 does for -k only; later ones for all four), the rest from the
# text: -i and --show-priv-flags have no JSON output, and ethtool 6.1's JSON
# for pause (-a) says true for every flag the kernel sent, on or off (seen
# on e1000e in the guest lab, tests/vm), so pause is read from the text.
declare -A KV=()
ethtool_kv() {
	local out line k v section=
	KV=()
	case $1 in
	-k | -g | -l) ethtool_json "$1" && return 0 ;;
	-c)
		# The first ethtool with JSON for -c named adaptive-rx "rx" (and
		# CQE mode "rx" too): only a JSON that says adaptive-rx is read.
		ethtool_json -c && [[ -n ${KV[adaptive-rx]:-} ]] && return 0
		KV=()
		;;
	esac
	out=$(qx "$ETHTOOL" "$1" "$IFACE" 2>/dev/null) || return 1
	while IFS= read -r line; do
		case $line in
		"Pre-set maximums:"*) section=max- ; continue ;;
		"Current hardware settings:"*) section= ; continue ;;
		"Adaptive RX:"*)
			read -r _ _ v _ k <<<"$line"
			KV[adaptive-rx]=$v
			KV[adaptive-tx]=$k
			continue
			;;
		esac
		[[ $line == *:* ]] || continue
		k=${line%%:*}
		v=${line#*:}
		k=${k//[[:space:]]/}
		v=${v#"${v%%[![:space:]]*}"}
		v=${v%"${v##*[![:space:]]}"}
		[[ -n $k ]] || continue
		KV[$section${k,,}]=$v
	done <<<"$out"
}

# ethtool_json OPTION: `ethtool --json OPTION IFACE` into KV, as ethtool_kv.
# A feature is an object {"active": bool, "fixed": bool|null, ...}: its
# value is "on"/"off", with " [fixed]" when it cannot be changed.  Other
# booleans read "on"/"off" too; "rx-max" (rings, channels) is KV's "max-rx".
ethtool_json() {
	local out k v n=0
	out=$(qx "$ETHTOOL" --json "$1" "$IFACE" 2>/dev/null) || return 1
	[[ $out == "["* ]] || return 1
	while IFS=$'\t' read -r k v; do
		[[ -n $k && $k != ifname ]] || continue
		k=${k,,}
		[[ $1 == -[gl] && $k == *-max ]] && k=max-${k%-max}
		KV[$k]=$v
		n=$((n + 1))
	done < <(awk '
		function val(s) {
			sub(/,[ \t]*$/, "", s); gsub(/^"|"$/, "", s)
			return s == "true" ? "on" : s == "false" ? "off" : s
		}
		/^[ \t]*"[^"]+": *\{[ \t]*$/ { split($0, q, "\""); obj = q[2]; next }
		/^[ \t]*\}/ { obj = ""; next }
		/^[ \t]*"[^"]+": / {
			split($0, q, "\""); k = q[2]
			v = $0; sub(/^[ \t]*"[^"]+": */, "", v); v = val(v)
			if (obj == "") { print k "\t" v; next }
			if (k == "active") act[obj] = v
			if (k == "fixed" && v == "on") fix[obj] = 1
		}
		END { for (o in act) print o "\t" act[o] (fix[o] ? " [fixed]" : "") }' <<<"$out")
	((n > 0))
}

# sched_of PID: "policy priority" of a task, from /proc/PID/stat.
sched_of() {
	local line rest
	local -a f
	read -r line 2>/dev/null <"$PROCFS/$1/stat" || return 1
	rest=${line##*) }
	read -r -a f <<<"$rest"
	case ${f[38]} in
	0) printf 'other %s' "${f[37]}" ;;
	1) printf 'fifo %s' "${f[37]}" ;;
	2) printf 'rr %s' "${f[37]}" ;;
	3) printf 'batch %s' "${f[37]}" ;;
	5) printf 'idle %s' "${f[37]}" ;;
	*) printf 'policy%s %s' "${f[38]}" "${f[37]}" ;;
	esac
}

# ------------------------------------------------------- argument checking

# parse_int OPTION VALUE MIN MAX: print VALUE if it is an integer in range.
parse_int() {
	local opt=$1 val=$2 min=$3 max=$4
	if [[ ! $val =~ ^[0-9]+$ ]] || ((${#val} > 9)); then
		usage_error "$opt: '$val' is not a number ($min to $max)"
	fi
	if ((10#$val < min || 10#$val > max)); then
		usage_error "$opt: '$val' is out of range ($min to $max)"
	fi
	printf '%d' "$((10#$val))"
}

# cpu_list_has LIST N: is CPU N in a kernel cpu list like "0-3,6"?
cpu_list_has() {
	local part lo hi
	local IFS=,
	for part in $1; do
		lo=${part%-*}
		hi=${part#*-}
		[[ $lo =~ ^[0-9]+$ && $hi =~ ^[0-9]+$ ]] || continue
		((10#$2 >= 10#$lo && 10#$2 <= 10#$hi)) && return 0
	done
	return 1
}

parse_cpu() {
	local opt=$1 val=$2 n
	n=$(parse_int "$opt" "$val" 0 "$CPU_MAX") || exit 2
	if ! cpu_list_has "$CPUS_ONLINE" "$n"; then
		usage_error "$opt: CPU '$val' is offline (online: $CPUS_ONLINE)"
	fi
	printf '%d' "$n"
}

# canon_ipv6 ADDR: RFC 5952 form (as ip prints it), or fail.
canon_ipv6() {
	local a=${1,,} head tail g i best=-1 bestlen=0 run=0 start=-1 out=
	local -a h=() t=() all=()
	[[ $a =~ ^[0-9a-f:]+$ ]] || return 1
	[[ $a == *:::* ]] && return 1
	if [[ $a == *::* ]]; then
		head=${a%%::*}
		tail=${a#*::}
		[[ $tail == *::* ]] && return 1
		[[ -n $head ]] && IFS=: read -r -a h <<<"$head"
		[[ -n $tail ]] && IFS=: read -r -a t <<<"$tail"
		((${#h[@]} + ${#t[@]} > 7)) && return 1
		all=("${h[@]}")
		for ((i = ${#h[@]} + ${#t[@]}; i < 8; i++)); do all+=(0); done
		all+=("${t[@]}")
	else
		[[ $a == :* || $a == *: ]] && return 1
		IFS=: read -r -a all <<<"$a"
		((${#all[@]} == 8)) || return 1
	fi
	for ((i = 0; i < 8; i++)); do
		g=${all[i]}
		[[ $g =~ ^[0-9a-f]{1,4}$ ]] || return 1
		all[i]=$(printf '%x' "$((16#$g))")
		if [[ ${all[i]} == 0 ]]; then
			((run == 0)) && start=$i
			run=$((run + 1))
			if ((run > bestlen)); then
				bestlen=$run
				best=$start
			fi
		else
			run=0
		fi
	done
	((bestlen < 2)) && best=-1
	for ((i = 0; i < 8; i++)); do
		if ((i == best)); then
			out+="::"
			i=$((i + bestlen - 1))
			continue
		fi
		[[ -n $out && $out != *:: ]] && out+=:
		out+=${all[i]}
	done
	printf '%s' "$out"
}

# parse_addr OPTION VALUE PREFIX_ALLOWED: sets P_ADDR P_LEN P_FAMILY.
parse_addr() {
	local opt=$1 val=$2 allow_len=$3 a len="" o
	local -a oct
	local what="an IPv4 or IPv6 address"
	((allow_len)) && what+=" with an optional /prefix length"
	a=${val%%/*}
	if [[ $val == */* ]]; then
		((allow_len)) || usage_error "$opt: '$val' is not $what"
		len=${val#*/}
	fi
	if [[ $a =~ ^[0-9]{1,3}(\.[0-9]{1,3}){3}$ ]]; then
		IFS=. read -r -a oct <<<"$a"
		for o in "${oct[@]}"; do
			((10#$o <= 255)) || usage_error "$opt: '$val' is not $what"
		done
		P_ADDR=$((10#${oct[0]})).$((10#${oct[1]})).$((10#${oct[2]})).$((10#${oct[3]}))
		P_FAMILY=4
		P_LEN=$(parse_int "$opt prefix length" "${len:-24}" 1 32) || exit 2
	elif P_ADDR=$(canon_ipv6 "$a"); then
		P_FAMILY=6
		P_LEN=$(parse_int "$opt prefix length" "${len:-64}" 1 128) || exit 2
	else
		usage_error "$opt: '$val' is not $what (e.g. 192.168.10.1/24, fd00::1/64)"
	fi
	local why
	why=$(addr_unusable "$P_FAMILY" "$P_ADDR") &&
		usage_error "$opt: '$val' is $why, not an address an interface can hold as its own"
}

# addr_unusable FAMILY ADDR: print what kind of address ADDR is if no
# interface can hold it as its own (the kernel refuses the IPv6 ones, but
# takes the IPv4 ones as an address nothing reaches), else fail.  Loopback
# belongs to lo alone.
addr_unusable() {
	local -a o
	if [[ $1 == 4 ]]; then
		IFS=. read -r -a o <<<"$2"
		if [[ $2 == 0.0.0.0 ]]; then
			printf 'the unspecified address'
		elif [[ $2 == 255.255.255.255 ]]; then
			printf 'the broadcast address'
		elif ((o[0] >= 224 && o[0] <= 239)); then
			printf 'a multicast address (224.0.0.0/4)'
		elif ((o[0] == 127)) && [[ $IFACE != lo ]]; then
			printf 'a loopback address (127.0.0.0/8)'
		else
			return 1
		fi
		return 0
	fi
	if [[ $2 == :: ]]; then
		printf 'the unspecified address'
	elif [[ $2 == ff* ]]; then
		printf 'a multicast address (ff00::/8)'
	elif [[ $2 == ::1 && $IFACE != lo ]]; then
		printf 'the loopback address'
	else
		return 1
	fi
}

# ---------------------------------------------------------------- discovery

# read_cpus: online CPUs and the highest possible CPU number.
read_cpus() {
	local last
	CPUS_ONLINE=$(cat "$SYSFS/devices/system/cpu/online" 2>/dev/null) || CPUS_ONLINE=0
	last=${CPUS_ONLINE##*[,-]}
	[[ $last =~ ^[0-9]+$ ]] || last=0
	CPU_MAX=$last
}

# locate_iface: set QNS to where IFACE is (here, ns_IFACE or rant-IFACE).
locate_iface() {
	NS="ns_$IFACE"
	OLD_NS="rant-$IFACE"
	if [[ -e $NET_SYSFS/$IFACE ]]; then
		QNS=
	elif "$IP" -n "$NS" link show dev "$IFACE" >/dev/null 2>&1; then
		QNS=$NS
	elif "$IP" -n "$OLD_NS" link show dev "$IFACE" >/dev/null 2>&1; then
		QNS=$OLD_NS
	else
		return 1
	fi
	CNS=$QNS
}

# find_home: under `ip netns exec NAME` (which gives its command a mount
# namespace of its own, with NAME's sysfs on /sys), set HOME_PID to the
# nearest ancestor outside that mount namespace.  A namespace mounted in
# the temporary one would vanish, with IFACE in it, when this script exits.
find_home() {
	local src mine pid ns stat
	HOME_PID=
	src=$(awk '$5 == "/sys" { for (i = 7; $i != "-"; i++) ; s = ($(i + 1) == "sysfs") ? $(i + 2) : "" }
		END { print s }' \
		"/proc/$$/mountinfo" 2>/dev/null)
	[[ -n $src && $src != sysfs && $src != none && -e $NETNS_DIR/$src ]] || return 0
	[[ $(stat -L -c %i "$NETNS_DIR/$src" 2>/dev/null) == "$(stat -L -c %i "/proc/$$/ns/net")" ]] || return 0
	mine=$(readlink "/proc/$$/ns/mnt")
	pid=$PPID
	while [[ $pid =~ ^[0-9]+$ ]] && ((pid > 0)); do
		ns=$(readlink "/proc/$pid/ns/mnt" 2>/dev/null) || break
		if [[ $ns != "$mine" ]]; then
			HOME_PID=$pid
			return 0
		fi
		read -r stat <"/proc/$pid/stat" || break
		stat=${stat##*) }
		read -r _ pid _ <<<"$stat"
	done
	usage_error "run under 'ip netns exec $src' with no process outside its temporary mount namespace: a namespace created here would vanish on exit (run it from a shell, or with --no-namespace)"
}

# netns_add NS: create a named network namespace that outlives this script.
# Under `ip netns exec`, it is created in the caller's mount namespace and,
# if that mount does not propagate here, bound here as well.
netns_add() {
	if [[ -z $HOME_PID ]]; then
		"$IP" netns add "$1"
		return
	fi
	nsenter --mount="/proc/$HOME_PID/ns/mnt" -- "$IP" netns add "$1" || return 1
	if ! "$IP" netns exec "$1" true 2>/dev/null; then
		mount --bind "/proc/$HOME_PID/root$NETNS_DIR/$1" "$NETNS_DIR/$1"
	fi
}

# netns_del NS: delete it, where netns_add created it.
netns_del() {
	if [[ -z $HOME_PID ]]; then
		"$IP" netns del "$1"
		return
	fi
	umount "$NETNS_DIR/$1" 2>/dev/null
	nsenter --mount="/proc/$HOME_PID/ns/mnt" -- "$IP" netns del "$1"
}

# find_threads: kernel threads we may tune (ksoftirqd/N, irq/N-name).
find_threads() {
	local f comm pid
	THREAD=()
	for f in "$PROCFS"/[0-9]*/comm; do
		read -r comm 2>/dev/null <"$f" || continue
		case $comm in
		ksoftirqd/* | irq/*)
			pid=${f%/comm}
			pid=${pid##*/}
			THREAD[$pid]=$comm
			;;
		esac
	done
}

# find_irqs: this interface's IRQs, from its PCI function's MSI vectors and
# from the names drivers give them in /proc/interrupts: "<iface>-TxRx-N"
# (ice: "ice-<iface>-TxRx-N"), "mlx5_comp0@pci:<pci>", "mlx5_async0@pci:<pci>",
# "ice-<pci>:misc".  Matching whole tokens keeps eth1 from taking eth10's.
find_irqs() {
	local line n name f
	local -A msi=()
	IRQS=()
	IRQ_NAME=()
	if [[ -n $PCI_DIR && -d $PCI_DIR/msi_irqs ]]; then
		for f in "$PCI_DIR"/msi_irqs/*; do
			[[ -e $f ]] && msi[${f##*/}]=1
		done
	fi
	[[ -r $PROCFS/interrupts ]] || return 0
	while read -r line; do
		n=${line%%:*}
		[[ $n =~ ^[0-9]+$ ]] || continue
		name=${line##* }
		if [[ -n ${msi[$n]:-} ]] ||
			[[ $name =~ (^|[^[:alnum:]])"$IFACE"([^[:alnum:]]|$) ]] ||
			[[ -n $PCI && $name == *"$PCI"* ]]; then
			IRQS+=("$n")
			IRQ_NAME[$n]=$name
		fi
	done <"$PROCFS/interrupts"
}

# discover: everything the steps need, read-only, printed first.
discover() {
	local dev out n
	MAC=$(get "$(net_path address)")
	DRIVER=
	PCI=
	DEV_DIR=
	PCI_DIR=
	if have_net_file "$(net_path device)" &&
		dev=$(qx readlink -f "$(net_path device)" 2>/dev/null) && [[ -n $dev ]]; then
		[[ -n $QNS ]] && dev=$SYSFS${dev#/sys}
		DEV_DIR=$dev
		DRIVER=$(basename "$(readlink -f "$DEV_DIR/driver" 2>/dev/null)" 2>/dev/null)
		[[ $DRIVER == driver || $DRIVER == . ]] && DRIVER=
		# virtio-net's device is virtioN, a child of the PCI function.
		[[ ${dev##*/} =~ $PCI_RE ]] || dev=${dev%/*}
		if [[ ${dev##*/} =~ $PCI_RE ]]; then
			PCI=${dev##*/}
			PCI_DIR=$dev
		fi
	fi
	if have "$ETHTOOL" && ethtool_kv -i; then
		[[ -n ${KV[driver]:-} ]] && DRIVER=${KV[driver]}
	fi
	: "${DRIVER:=unknown}"
	NUMA=$(cat "$PCI_DIR/numa_node" 2>/dev/null)
	[[ -z $NUMA || $NUMA == -1 ]] && NUMA=none
	PHC=
	if [[ -n $DEV_DIR ]]; then
		for n in "$DEV_DIR"/ptp/ptp*; do
			[[ -e $n ]] && PHC=/dev/${n##*/} && break
		done
	fi
	if [[ -z $PHC ]] && have "$ETHTOOL" && out=$(qx "$ETHTOOL" -T "$IFACE" 2>/dev/null); then
		n=$(sed -n 's/^PTP Hardware Clock: *\([0-9][0-9]*\)$/\1/p' <<<"$out")
		[[ -n $n ]] && PHC=/dev/ptp$n
	fi
	find_irqs
	find_threads
}

# show_discovery: what discover found, printed before the steps.
show_discovery() {
	local n irqs="" ROOT_NAME="root (the caller's)"
	for n in "${IRQS[@]}"; do
		irqs+="$n (${IRQ_NAME[$n]}) "
	done
	printf '%s: %s\n' "$PROG" "$IFACE"
	printf '  %-11s %s\n' \
		namespace "${QNS:-$ROOT_NAME}" \
		mac "${MAC:-unknown}" \
		driver "$DRIVER" \
		pci "${PCI:-none (not a PCI device)}" \
		"numa node" "$NUMA" \
		phc "${PHC:-none}" \
		irqs "${irqs:-none}"
	if [[ $MODE != undo ]]; then
		printf '  %-11s %s\n' cpus "rant on $CPU, IRQs and softirqs on $IRQ_CPU (online: $CPUS_ONLINE)"
		if [[ $NUMA != none ]] && [[ -r $SYSFS/devices/system/node/node$NUMA/cpulist ]] &&
			! cpu_list_has "$(cat "$SYSFS/devices/system/node/node$NUMA/cpulist")" "$CPU"; then
			printf '  %-11s %s\n' note "CPU $CPU is not on the NIC's NUMA node $NUMA"
		fi
	fi
}

# phc_of NAME: PHC device of an interface (here or in its ns_/rant- namespace).
phc_of() {
	local name=$1 f n out
	for f in "$NET_SYSFS/$name"/device/ptp/ptp*; do
		[[ -e $f ]] && printf '/dev/%s' "${f##*/}" && return 0
	done
	out=$("$ETHTOOL" -T "$name" 2>/dev/null) ||
		out=$("$IP" netns exec "ns_$name" "$ETHTOOL" -T "$name" 2>/dev/null) ||
		out=$("$IP" netns exec "rant-$name" "$ETHTOOL" -T "$name" 2>/dev/null) || return 1
	n=$(sed -n 's/^PTP Hardware Clock: *\([0-9][0-9]*\)$/\1/p' <<<"$out")
	[[ -n $n ]] && printf '/dev/ptp%s' "$n"
}

# clock_problem CLOCK: fail, printing why, if phc2sys could not open CLOCK.
clock_problem() {
	local f
	[[ $1 == CLOCK_REALTIME ]] && return 0
	f=$DEVFS/${1#/dev/}
	if [[ ! -e $f ]]; then
		printf '%s: no such clock device' "$1"
		return 1
	fi
	if [[ ! -r $f || ! -w $f ]]; then
		printf '%s: cannot open it for reading and writing' "$1"
		return 1
	fi
}

# resolve_clock OPTION VALUE: CLOCK_REALTIME, /dev/ptpN or an interface's PHC.
resolve_clock() {
	local opt=$1 val=$2 phc
	case $val in
	CLOCK_REALTIME) printf '%s' "$val" ;;
	/dev/ptp[0-9]*)
		clock_problem "$val" >/dev/null || usage_error "$opt: $(clock_problem "$val")"
		printf '%s' "$val"
		;;
	*)
		if [[ $val == "$IFACE" && -n $PHC ]]; then
			printf '%s' "$PHC"
		elif phc=$(phc_of "$val") && [[ -n $phc ]]; then
			printf '%s' "$phc"
		else
			usage_error "$opt: '$val' is not CLOCK_REALTIME, /dev/ptpN or an interface with a PHC"
		fi
		;;
	esac
}

# ---------------------------------------------------------------- steps

step_namespace() {
	local a
	local -a added=()
	if ((NO_NS)); then
		skip namespace "--no-namespace given"
		return 0
	fi
	if [[ $QNS == "$NS" ]]; then
		report "in place" namespace "$NS"
		return 0
	fi
	if [[ $MODE == check ]]; then
		if [[ $QNS == "$OLD_NS" ]]; then
			report "not set" namespace "is $OLD_NS (an earlier config.sh's), want $NS"
		else
			report "not set" namespace "is the caller's, want $NS"
		fi
		return 0
	fi
	if "$IP" netns exec "$NS" true 2>/dev/null; then
		:
	elif [[ -e $NETNS_DIR/$NS ]]; then
		report failed netns-create "$NETNS_DIR/$NS is a leftover file, not a namespace (remove it)"
		return 1
	else
		UNDO=(netns_del "$NS")
		step netns-create absent present netns_add "$NS" || return 1
	fi
	# --undo moves IFACE back to where config.sh runs: it must run there.
	record caller-netns "$(netns_id)" true && added+=(caller-netns)
	# Moving a device between namespaces takes it down and drops its
	# addresses: record how to put them back after it returns.
	while read -r _ _ _ a _; do
		[[ -n $a ]] && record "caller-addr $a" "$a" "$IP" addr add "$a" dev "$IFACE" &&
			added+=("caller-addr $a")
	done < <("$IP" -o addr show dev "$IFACE" scope global permanent 2>/dev/null)
	if [[ $(link_flag UP) == on ]]; then
		record caller-link-up up "$IP" link set dev "$IFACE" up && added+=(caller-link-up)
	fi
	UNDO=(netns_return "$NS" "$IFACE")
	if step namespace caller "$NS" "$IP" link set dev "$IFACE" netns "$NS"; then
		CNS=$NS
		# The dry run reads IFACE where it is, and predicts what the move
		# changes (step_link).
		if ((DRY_RUN)); then MOVED=1; else QNS=$NS; fi
		return 0
	fi
	# Not moved: its addresses and link are as they were, and re-adding
	# an address it still has would fail every --undo.
	for a in "${added[@]}"; do
		unrecord "$a"
	done
	return 1
}

# netns_id: this script's network namespace, as "net:[INODE] NAME" (NAME:
# its name under NETNS_DIR, or "host" for pid 1's, or "unnamed").
netns_id() {
	local mine f name=unnamed
	mine=$(readlink "/proc/$$/ns/net")
	if [[ $mine == "$(readlink /proc/1/ns/net 2>/dev/null)" ]]; then
		name=host
	else
		for f in "$NETNS_DIR"/*; do
			[[ $(stat -L -c %i "$f" 2>/dev/null) == "$(stat -L -c %i "/proc/$$/ns/net")" ]] || continue
			name=${f##*/}
			break
		done
	fi
	printf '%s %s' "$mine" "$name"
}

# check_undo_netns: --undo runs in the namespace the apply ran in, or exit 2.
check_undo_netns() {
	local id old _w how
	[[ -f $STATE_FILE ]] || return 0
	while IFS=$'\t' read -r id old _w; do
		[[ $id == caller-netns ]] || continue
		[[ ${old%% *} == "$(readlink "/proc/$$/ns/net")" ]] && return 0
		case ${old#* } in
		host) how="from the host's namespace" ;;
		unnamed) how="from the namespace it was applied in (${old%% *})" ;;
		*) how="with 'ip netns exec ${old#* } $PROG $IFACE --undo'" ;;
		esac
		usage_error "$IFACE: applied from another network namespace; run --undo $how"
	done <"$STATE_FILE"
}

# ipv6_default_in NS: disable_ipv6 a device gets when it enters NS (its
# default), or a new namespace if NS does not exist yet.
ipv6_default_in() {
	local f=/proc/sys/net/ipv6/conf/default/disable_ipv6
	if "$IP" netns exec "$1" true 2>/dev/null; then
		"$IP" netns exec "$1" cat "$f" 2>/dev/null
	else
		unshare --net cat "$f" 2>/dev/null
	fi
}

# link_flag FLAG: "on" if the interface has FLAG (UP, MULTICAST).
link_flag() {
	local line
	line=$(ipq -o link show dev "$IFACE" 2>/dev/null)
	line=${line#*<}
	line=${line%%>*}
	if [[ ,$line, == *",$1,"* ]]; then echo on; else echo off; fi
}

step_link() {
	local cur want
	local -a CMD
	ip_cmd
	# The qdisc first: what a down device shows depends on whether it has
	# been up since, which a dry run cannot know after a link-up it does not
	# make.  A noqueue root set while down stays when it comes up.
	if ! have "$TC"; then
		report failed qdisc "tc not installed (iproute2)"
	else
		local -a tcq=("$TC") tcc=("$TC")
		[[ -n $QNS ]] && tcq=("$TC" -n "$QNS")
		[[ -n $CNS ]] && tcc=("$TC" -n "$CNS")
		cur=$("${tcq[@]}" qdisc show dev "$IFACE" root 2>/dev/null | awk 'NR == 1 {print $2}')
		# A move shuts the device's qdiscs down.
		((MOVED)) && cur=
		# Deleting the root qdisc gives the device its default one back.
		UNDO=("${tcc[@]}" qdisc del dev "$IFACE" root)
		step qdisc "${cur:-none}" noqueue "${tcc[@]}" qdisc replace dev "$IFACE" root noqueue
	fi

	# A dry run that predicts the namespace move predicts what the move does:
	# the device goes down, loses its addresses and neighbours, and gets the
	# new namespace's IPv6 defaults.
	cur=$(link_flag UP)
	((MOVED)) && cur=off
	UNDO=("${CMD[@]}" link set dev "$IFACE" down)
	READ=(link_flag UP)
	step link-up "$cur" on "${CMD[@]}" link set dev "$IFACE" up

	cur=absent
	if ipq -o addr show dev "$IFACE" 2>/dev/null | awk '{print $4}' | grep -qx "$ADDR/$PREFIX"; then
		cur=present
	fi
	((MOVED)) && cur=absent
	UNDO=("${CMD[@]}" addr del "$ADDR/$PREFIX" dev "$IFACE")
	if [[ $FAMILY == 6 ]]; then
		# nodad: a tentative address cannot be bound for a second or two.
		step address "$cur" present "${CMD[@]}" addr replace "$ADDR/$PREFIX" dev "$IFACE" nodad
	else
		step address "$cur" present "${CMD[@]}" addr replace "$ADDR/$PREFIX" dev "$IFACE"
	fi

	if [[ -z $REMOTE_MAC ]]; then
		skip neighbour "no --remote-mac (the first packets wait for ARP/ND)"
	else
		local line mac=absent state=
		line=$(ipq neigh show "$REMOTE" dev "$IFACE" 2>/dev/null)
		if [[ $line =~ lladdr\ ([0-9a-f:]+)\ .*(PERMANENT|REACHABLE|STALE|DELAY|PROBE|NOARP) ]]; then
			mac=${BASH_REMATCH[1]}
			state=${BASH_REMATCH[2]}
		fi
		((MOVED)) && mac=absent state=
		cur=$mac
		[[ -n $state ]] && cur+=" $state"
		if [[ $state == PERMANENT ]]; then
			UNDO=("${CMD[@]}" neigh replace "$REMOTE" lladdr "$mac" dev "$IFACE" nud permanent)
		else
			UNDO=("${CMD[@]}" neigh del "$REMOTE" dev "$IFACE")
		fi
		step neighbour "$cur" "$REMOTE_MAC PERMANENT" \
			"${CMD[@]}" neigh replace "$REMOTE" lladdr "$REMOTE_MAC" dev "$IFACE" nud permanent
	fi

	if [[ $FAMILY == 6 ]]; then
		skip ipv6-off "the test address is IPv6"
	elif ! have_net_file "$(net_conf_path ipv6 disable_ipv6)"; then
		skip ipv6-off "no IPv6 in this kernel"
	else
		cur=$(get "$(net_conf_path ipv6 disable_ipv6)")
		((MOVED)) && cur=$(ipv6_default_in "$NS")
		UNDO=(write_file "$(net_conf_path ipv6 disable_ipv6 "$CNS")" "$cur" "$CNS")
		step ipv6-off "$cur" 1 write_file "$(net_conf_path ipv6 disable_ipv6 "$CNS")" 1 "$CNS"
	fi

	if [[ $FAMILY == 6 && -z $REMOTE_MAC ]]; then
		skip multicast-off "IPv6 without --remote-mac needs multicast for ND"
	else
		cur=$(link_flag MULTICAST)
		UNDO=("${CMD[@]}" link set dev "$IFACE" multicast "$cur")
		READ=(link_flag MULTICAST)
		step multicast-off "$cur" off "${CMD[@]}" link set dev "$IFACE" multicast off
	fi

}

# not_supported ID: ethtool said no; tell which driver.
not_supported() {
	skip "$1" "not supported by this driver ($DRIVER)"
}

# Features that ethtool's legacy name switches together, as the pattern
# ethtool itself matches them with: "tso on" turns on every TCP
# segmentation feature, also one that was off (e1000e's
# tx-tcp-mangleid-segmentation, as the guest lab showed).
declare -A OFFLOAD_PARTS=(
	[tcp-segmentation-offload]="tx-tcp*-segmentation"
)

# offload_undo NAME CUR: PAIRS, the `ethtool -K` arguments that put NAME
# back: each of its parts as it is now (from KV, as ethtool_kv -k read
# it), those fixed by the driver left out; NAME CUR if none is known.
declare -a PAIRS=()
offload_undo() {
	local part v pat=${OFFLOAD_PARTS[$1]:-}
	PAIRS=()
	if [[ -n $pat ]]; then
		while read -r part; do
			v=${KV[$part]:-}
			# shellcheck disable=SC2053 # a glob on purpose
			[[ $part == $pat && -n $v && $v != *"[fixed]"* ]] && PAIRS+=("$part" "${v%% *}")
		done < <(printf '%s\n' "${!KV[@]}" | sort)
	fi
	((${#PAIRS[@]})) || PAIRS=("$1" "$2")
}

step_ethtool() {
	local -a CMD
	local k cur want v rx tx f flag val max
	if ! have "$ETHTOOL"; then
		report failed ethtool "ethtool not installed: channels, coalescing, offloads, rings, pause not set"
		return 1
	fi

	if ! ethtool_kv -l; then
		not_supported channels
	elif [[ ${KV[max-combined]:-n/a} =~ ^[1-9] ]]; then
		cur=${KV[combined]}
		tool_cmd "$ETHTOOL" -L "$IFACE" combined "$cur"
		UNDO=("${CMD[@]}")
		tool_cmd "$ETHTOOL" -L "$IFACE" combined 1
		READ=(read_channels combined)
		step channels "combined $cur" "combined 1" "${CMD[@]}"
	elif [[ ${KV[max-rx]:-n/a} =~ ^[1-9] && ${KV[max-tx]:-n/a} =~ ^[1-9] ]]; then
		rx=${KV[rx]}
		tx=${KV[tx]}
		tool_cmd "$ETHTOOL" -L "$IFACE" rx "$rx" tx "$tx"
		UNDO=("${CMD[@]}")
		tool_cmd "$ETHTOOL" -L "$IFACE" rx 1 tx 1
		READ=(read_channels rx)
		step channels "rx $rx tx $tx" "rx 1 tx 1" "${CMD[@]}"
	else
		not_supported channels
	fi

	# Adaptive moderation first: while it is on, rx-usecs is not used.
	if ! ethtool_kv -c; then
		not_supported coalescing
	else
		for k in adaptive-rx=off adaptive-tx=off rx-usecs=0 rx-frames=1 tx-usecs=0 tx-frames=1; do
			want=${k#*=}
			k=${k%%=*}
			cur=${KV[$k]:-n/a}
			if [[ $cur == n/a ]]; then
				not_supported "coalesce $k"
				continue
			fi
			ethtool_step "coalesce $k" -C "$k" "$cur" "$want"
		done
	fi

	if ! ethtool_kv -k; then
		not_supported offloads
	else
		for f in $OFFLOADS; do
			k=${f%%=*}
			v=${KV[$k]:-}
			[[ -n $v ]] || continue
			cur=${v%% *}
			if [[ $v == *"[fixed]"* && $cur != off ]]; then
				skip "offload ${f#*=}" "fixed on by this driver ($DRIVER)"
				continue
			fi
			offload_undo "$k" "$cur"
			tool_cmd "$ETHTOOL" -K "$IFACE" "${PAIRS[@]}"
			UNDO=("${CMD[@]}")
			tool_cmd "$ETHTOOL" -K "$IFACE" "$k" off
			READ=(read_kv -k "$k")
			step "offload ${f#*=}" "$cur" off "${CMD[@]}"
		done
	fi

	# Small rings: fewer descriptors to walk and keep in cache.  A ring
	# already at or below RING_SIZE is left alone.
	if ! ethtool_kv -g || [[ ! ${KV[max-rx]:-} =~ ^[0-9]+$ ]]; then
		not_supported rings
	else
		for k in rx tx; do
			cur=${KV[$k]:-n/a}
			want=$RING_SIZE
			max=${KV[max-$k]:-}
			[[ $max =~ ^[0-9]+$ ]] && ((max < want)) && want=$max
			# A maximum of 0 (the text of older ethtools): no such ring.
			if [[ ! $cur =~ ^[0-9]+$ || $max == 0 ]]; then
				not_supported "ring $k"
				continue
			fi
			((cur <= want)) && want=$cur
			ethtool_step "ring $k" -G "$k" "$cur" "$want"
		done
	fi

	# Pause is resolved anew whenever the link comes up (e1000e:
	# e1000e_config_fc_after_link_up() at the watchdog's link-up), and a
	# ring, coalescing or offload change above may have reset the device:
	# set by hand while that link is still coming back, it was undone a
	# moment later (the guest lab's RT kernel, tests/vm).  So the link gets
	# up to LINK_WAIT seconds to be back first.
	if ((!DRY_RUN)) && [[ $MODE == apply ]] && ! wait_carrier; then
		warn "$IFACE has no carrier after ${LINK_WAIT}s (LINK_WAIT): pause is set now, and a link that comes up later may negotiate it again (--check after it says)"
	fi
	if ! ethtool_kv -a; then
		not_supported pause
	else
		cur="autoneg ${KV[autonegotiate]:-off} rx ${KV[rx]:-off} tx ${KV[tx]:-off}"
		# shellcheck disable=SC2086 # cur is "key value" pairs on purpose
		tool_cmd "$ETHTOOL" -A "$IFACE" $cur
		UNDO=("${CMD[@]}")
		tool_cmd "$ETHTOOL" -A "$IFACE" autoneg off rx off tx off
		READ=(read_pause)
		step pause "$cur" "autoneg off rx off tx off" "${CMD[@]}"
	fi

	if [[ -z ${PRIV_FLAGS[$DRIVER]:-} ]]; then
		skip priv-flags "none to set for driver $DRIVER"
	elif ! ethtool_kv --show-priv-flags; then
		not_supported priv-flags
	else
		for f in ${PRIV_FLAGS[$DRIVER]}; do
			flag=${f%%=*}
			val=${f#*=}
			cur=${KV[${flag,,}]:-}
			if [[ -z $cur ]]; then
				skip "priv $flag" "not offered by this driver/firmware ($DRIVER)"
				continue
			fi
			tool_cmd "$ETHTOOL" --set-priv-flags "$IFACE" "$flag" "$cur"
			UNDO=("${CMD[@]}")
			tool_cmd "$ETHTOOL" --set-priv-flags "$IFACE" "$flag" "$val"
			READ=(read_kv --show-priv-flags "${flag,,}")
			step "priv $flag" "$cur" "$val" "${CMD[@]}"
		done
	fi
}

# NAPI: 0/0 = interrupt per packet, no deferral.  With --busy-poll US > 0, the
# kernel's recommended pair for SO_PREFER_BUSY_POLL (napi.rst): the IRQ stays
# masked while rant polls, re-armed by the timer if it stops.
step_napi() {
	local attr want cur path
	for attr in napi_defer_hard_irqs gro_flush_timeout; do
		want=0
		if ((BUSY_POLL)); then
			[[ $attr == napi_defer_hard_irqs ]] && want=2 || want=200000
		fi
		if ! have_net_file "$(net_path "$attr")"; then
			skip "$attr" "not offered by this kernel"
			continue
		fi
		cur=$(get "$(net_path "$attr")")
		path=$(net_path "$attr" "$CNS")
		UNDO=(write_file "$path" "$cur" "$CNS")
		step "$attr" "$cur" "$want" write_file "$path" "$want" "$CNS"
	done
}

# PCIe power management through the kernel's own knobs (runtime PM and the
# per-link ASPM files), not raw config-space writes.
step_pcie_pm() {
	local f cur any=0
	if [[ -z $PCI ]]; then
		skip pcie-pm "not a PCI device"
		return 0
	fi
	if [[ -w $PCI_DIR/power/control ]]; then
		cur=$(cat "$PCI_DIR/power/control")
		UNDO=(write_file "$PCI_DIR/power/control" "$cur")
		step pcie-runtime-pm "$cur" on write_file "$PCI_DIR/power/control" on
	else
		skip pcie-runtime-pm "no runtime PM control for $PCI"
	fi
	for f in l0s_aspm l1_aspm l1_1_aspm l1_2_aspm l1_1_pcipm l1_2_pcipm; do
		[[ -e $PCI_DIR/link/$f ]] || continue
		any=1
		cur=$(cat "$PCI_DIR/link/$f")
		UNDO=(write_file "$PCI_DIR/link/$f" "$cur")
		step "pcie $f" "$cur" 0 write_file "$PCI_DIR/link/$f" 0
	done
	((any)) || skip pcie-aspm "no ASPM control in sysfs for $PCI (kernel without CONFIG_PCIEASPM)"
}

# set_fifo ID PID PRIO: SCHED_FIFO for one kernel thread.
set_fifo() {
	local id=$1 pid=$2 prio=$3 cur pol p
	if ! cur=$(sched_of "$pid"); then
		skip "$id" "thread $pid is gone"
		return 0
	fi
	pol=${cur% *}
	p=${cur#* }
	UNDO=("$CHRT" "--$pol" -p "$p" "$pid")
	step "$id" "$cur" "fifo $prio" "$CHRT" --fifo -p "$prio" "$pid"
}

step_irqs() {
	local n pid path cur found
	if ((${#IRQS[@]} == 0)); then
		skip irq-affinity "no IRQs found for $IFACE (virtual device?)"
		skip irq-threads "no IRQs found for $IFACE"
		return 0
	fi
	# IRQ threads follow their IRQ's affinity, so this places them too.
	for n in "${IRQS[@]}"; do
		path=$PROCFS/irq/$n/smp_affinity_list
		if [[ ! -e $path ]]; then
			skip "irq $n affinity" "no $path"
			continue
		fi
		cur=$(cat "$path")
		# Managed IRQs (spread by the kernel) refuse affinity writes.  The
		# IRQ debugfs (CONFIG_GENERIC_IRQ_DEBUGFS) says so beforehand, which
		# lets a dry run know; without it only the write tells.
		if grep -qs IRQD_AFFINITY_MANAGED "$DEBUGFS/irq/irqs/$n"; then
			skip "irq $n affinity" "affinity is managed by the kernel"
			continue
		fi
		# The write's EIO says only that the kernel will not move this IRQ
		# (managed, per-CPU, or a chip that cannot): the reason names no more.
		UNDO=(write_file "$path" "$cur")
		SKIP_ERR="Input/output error" SKIP_WHY="the kernel does not let it move (Input/output error: a managed or per-CPU IRQ)"
		step "irq $n affinity" "$cur" "$IRQ_CPU" write_file "$path" "$IRQ_CPU"
		SKIP_ERR="" SKIP_WHY=""
	done
	found=0
	for n in "${IRQS[@]}"; do
		for pid in "${!THREAD[@]}"; do
			[[ ${THREAD[$pid]} == "irq/$n-"* ]] || continue
			found=1
			if have "$CHRT"; then
				set_fifo "irq $n thread" "$pid" "$IRQ_PRIO"
			else
				report failed "irq $n thread" "chrt not installed (util-linux)"
			fi
		done
	done
	((found)) || skip irq-threads "no IRQ threads (boot with threadirqs or use PREEMPT_RT)"
}

# lists_meet LIST1 LIST2: do two kernel cpu lists ("0-3,6") share a CPU?
lists_meet() {
	local part lo hi c
	local IFS=,
	for part in $1; do
		lo=${part%-*}
		hi=${part#*-}
		[[ $lo =~ ^[0-9]+$ && $hi =~ ^[0-9]+$ ]] || continue
		for ((c = 10#$lo; c <= 10#$hi; c++)); do
			cpu_list_has "$2" "$c" && return 0
		done
	done
	return 1
}

# irq_threads_forced: the IRQ threads run at SCHED_FIFO 50 (PREEMPT_RT, or
# a kernel booted with threadirqs); else prints why there are none.
irq_threads_forced() {
	[[ $(cat "$SYSFS/kernel/realtime" 2>/dev/null) == 1 ]] && return 0
	grep -qs PREEMPT_RT "$PROCFS/version" && return 0
	grep -qw threadirqs "$PROCFS/cmdline" 2>/dev/null && return 0
	printf 'not a PREEMPT_RT kernel, no threadirqs: no forced IRQ threads'
	return 1
}

# Other devices' IRQ threads on the named CPUs.  On PREEMPT_RT every IRQ
# has a SCHED_FIFO 50 thread, above rant under `chrt -f` and above
# ksoftirqd.  Moving IRQs off the test CPUs is the host's isolation
# (irqaffinity=, isolcpus=managed_irq, irqbalance); managed IRQs, the
# per-queue vectors of NVMe and other multi-queue storage, cannot be moved
# (core-api/irq/managed_irq.rst), and their threads stay there.  Whatever
# is still delivered to a named CPU now, after the host's moves and this
# script's own (step_irqs), has its thread demoted to SCHED_OTHER, as the
# earlier config.sh did.  The effective affinity says where an IRQ is
# delivered, and its thread follows it (kernel/irq/manage.c).
step_irq_others() {
	local pid comm n aff why found=0
	local -A ours=()
	local list
	list=$(cpus)
	list=${list// /,}
	if ! why=$(irq_threads_forced); then
		skip irq-threads-other "$why"
		return 0
	fi
	for n in "${IRQS[@]}"; do ours[$n]=1; done
	for pid in "${!THREAD[@]}"; do
		comm=${THREAD[$pid]}
		[[ $comm =~ ^irq/([0-9]+)- ]] || continue
		n=${BASH_REMATCH[1]}
		[[ -n ${ours[$n]:-} ]] && continue
		aff=$(cat "$PROCFS/irq/$n/effective_affinity_list" 2>/dev/null)
		[[ -n $aff ]] || aff=$(cat "$PROCFS/irq/$n/smp_affinity_list" 2>/dev/null)
		if [[ -z $aff ]] || ! lists_meet "$aff" "$list"; then
			continue
		fi
		found=1
		if have "$CHRT"; then
			set_other "$comm" "$pid"
		else
			report failed "$comm" "chrt not installed (util-linux)"
		fi
	done
	((found)) || report "in place" irq-threads-other "no other device's IRQ on CPUs $list"
	return 0
}

# set_other ID PID: SCHED_OTHER for one kernel thread, its old policy
# recorded.
set_other() {
	local id=$1 pid=$2 cur
	if ! cur=$(sched_of "$pid"); then
		skip "$id" "thread $pid is gone"
		return 0
	fi
	UNDO=("$CHRT" "--${cur% *}" -p "${cur#* }" "$pid")
	step "$id" "$cur" "other 0" "$CHRT" --other -p 0 "$pid"
}

# cpus: the named CPUs, once each.
cpus() {
	if ((CPU == IRQ_CPU)); then
		echo "$CPU"
	elif ((CPU < IRQ_CPU)); then
		echo "$CPU $IRQ_CPU"
	else
		echo "$IRQ_CPU $CPU"
	fi
}

# fixed_freq DIR: the highest frequency (kHz) of a cpufreq policy that is
# not turbo: intel_pstate's base_frequency; else the highest of
# scaling_available_frequencies that is not the ACPI turbo entry (reported
# as the base + 1000 kHz); else cpuinfo_max_freq.
fixed_freq() {
	local d=$1 f best=0
	local -a fs
	f=$(cat "$d/base_frequency" 2>/dev/null)
	if [[ $f =~ ^[0-9]+$ ]]; then
		printf '%s' "$f"
		return 0
	fi
	read -r -a fs 2>/dev/null <"$d/scaling_available_frequencies"
	for f in "${fs[@]}"; do
		[[ $f =~ ^[0-9]+$ ]] || continue
		[[ " ${fs[*]} " == *" $((f - 1000)) "* ]] && continue
		((f > best)) && best=$f
	done
	if ((best > 0)); then
		printf '%s' "$best"
		return 0
	fi
	f=$(cat "$d/cpuinfo_max_freq" 2>/dev/null)
	[[ $f =~ ^[0-9]+$ ]] && printf '%s' "$f"
}

# step_freq CPU: the CPU's frequency locked at fixed_freq (scaling_max_freq
# and scaling_min_freq both): frequency steps change latency from run to
# run (the earlier config.sh locked it before every test).  Max first, so
# that min is never asked above it.
step_freq() {
	local c=$1 d f cur k
	d=$SYSFS/devices/system/cpu/cpu$c/cpufreq
	if [[ ! -w $d/scaling_max_freq || ! -w $d/scaling_min_freq ]]; then
		skip "cpu$c frequency" "no cpufreq (VM or no frequency scaling)"
		return 0
	fi
	if ! f=$(fixed_freq "$d") || [[ -z $f ]]; then
		skip "cpu$c frequency" "cpufreq tells no base or maximum frequency"
		return 0
	fi
	for k in max min; do
		cur=$(cat "$d/scaling_${k}_freq")
		UNDO=(write_file "$d/scaling_${k}_freq" "$cur")
		step "cpu$c ${k}-freq" "$cur" "$f" write_file "$d/scaling_${k}_freq" "$f"
	done
}

step_cpus() {
	local c pid found f cur d
	for c in $(cpus); do
		found=0
		for pid in "${!THREAD[@]}"; do
			[[ ${THREAD[$pid]} == "ksoftirqd/$c" ]] || continue
			found=1
			if have "$CHRT"; then
				set_fifo "ksoftirqd/$c" "$pid" "$KSOFTIRQD_PRIO"
			else
				report failed "ksoftirqd/$c" "chrt not installed (util-linux)"
			fi
		done
		((found)) || skip "ksoftirqd/$c" "no ksoftirqd/$c thread"

		d=$SYSFS/devices/system/cpu/cpu$c
		if [[ -w $d/cpufreq/scaling_governor ]]; then
			cur=$(cat "$d/cpufreq/scaling_governor")
			UNDO=(write_file "$d/cpufreq/scaling_governor" "$cur")
			step "cpu$c governor" "$cur" performance write_file "$d/cpufreq/scaling_governor" performance
		else
			skip "cpu$c governor" "no cpufreq (VM or no frequency scaling)"
		fi
		step_freq "$c"
		# Deep idle states take tens of microseconds to leave.
		found=0
		for f in "$d"/cpuidle/state[1-9]*/disable; do
			[[ -e $f ]] || continue
			found=1
			cur=$(cat "$f")
			f=${f%/disable}
			UNDO=(write_file "$f/disable" "$cur")
			step "cpu$c idle ${f##*/}" "$cur" 1 write_file "$f/disable" 1
		done
		((found)) || skip "cpu$c idle" "no deep idle states"
	done
}

# host_setting ID FILE WANT [ASKED]: a host-wide sysctl, changed only with
# --host-tuning or when its own option ASKED for it (--busy-poll US).
host_setting() {
	local id=$1 file=$2 want=$3 asked=${4:-0} cur
	if [[ ! -e $file ]]; then
		local why="not offered by this kernel"
		# net.core's host-wide sysctls exist only in the host's namespace.
		if [[ $file == /proc/sys/net/* && $(readlink /proc/1/ns/net) != "$(readlink "/proc/$$/ns/net")" ]]; then
			why="host-wide, not visible from this network namespace (run config.sh from the host's)"
		fi
		# What an option asked for by name and cannot be done is a failure.
		if ((!asked)); then
			skip "$id" "$why"
		elif [[ $MODE == check ]]; then
			report "not set" "$id" "$why"
		else
			report failed "$id" "$why"
		fi
		return 0
	fi
	cur=$(cat "$file")
	if ((!HOST_TUNING && !asked)); then
		report host "$id" "host-wide, not changed (--host-tuning): is $cur, would be $want"
		return 0
	fi
	UNDO=(write_file "$file" "$cur")
	step "$id" "$cur" "$want" write_file "$file" "$want"
}

# Turbo off, host-wide (the frequency it gives depends on what the other
# cores do): intel_pstate's no_turbo, or cpufreq's boost elsewhere
# (admin-guide/pm/intel_pstate.rst, admin-guide/pm/cpufreq.rst).
step_turbo() {
	local d=$SYSFS/devices/system/cpu
	if [[ -e $d/intel_pstate/no_turbo ]]; then
		host_setting turbo-off "$d/intel_pstate/no_turbo" 1
	elif [[ -e $d/cpufreq/boost ]]; then
		host_setting turbo-off "$d/cpufreq/boost" 0
	else
		skip turbo-off "no intel_pstate/no_turbo nor cpufreq/boost (no turbo control, or a VM)"
	fi
}

# SELinux's access vector cache: at the default 512 entries, evictions cost
# the earlier rant's users 200-300 us spikes on hosts with SELinux enforcing.
# Host-wide; a larger threshold already set is kept.
step_avc() {
	local f=$SYSFS/fs/selinux/avc/cache_threshold cur want=8192
	if [[ ! -e $f ]]; then
		skip avc-cache "no SELinux (no selinuxfs avc/cache_threshold)"
		return 0
	fi
	cur=$(cat "$f")
	[[ $cur =~ ^[0-9]+$ ]] && ((cur > want)) && want=$cur
	host_setting avc-cache "$f" "$want"
}

step_host() {
	local c iso nohz missing=
	iso=$(cat "$SYSFS/devices/system/cpu/isolated" 2>/dev/null)
	nohz=$(cat "$SYSFS/devices/system/cpu/nohz_full" 2>/dev/null)
	for c in $(cpus); do
		if ! cpu_list_has "$iso" "$c" || ! cpu_list_has "$nohz" "$c"; then
			missing+="${missing:+,}$c"
		fi
	done
	if [[ -z $missing ]]; then
		report "in place" cpu-isolation "CPUs $(cpus) isolated and nohz_full"
	elif [[ $MODE == check && $HOST_TUNING == 1 ]]; then
		report "not set" cpu-isolation "CPUs $missing: boot with isolcpus=$missing nohz_full=$missing rcu_nocbs=$missing"
	else
		report host cpu-isolation "host-wide, needs a reboot: isolcpus=$missing nohz_full=$missing rcu_nocbs=$missing on the kernel command line"
	fi
	# RT throttling would stall a spinning SCHED_FIFO rant for 50 ms a second.
	host_setting sched_rt_runtime_us "$PROCFS/sys/kernel/sched_rt_runtime_us" -1
	host_setting timer_migration "$PROCFS/sys/kernel/timer_migration" 0
	step_turbo
	step_avc
	# The earlier config.sh's --busy-poll VAL: both sysctls to VAL (busy_read:
	# the busy-poll time of sockets without SO_BUSY_POLL; busy_poll: of
	# poll() and select()).
	if [[ -n $BUSY_POLL ]]; then
		host_setting busy_read "$PROCFS/sys/net/core/busy_read" "$BUSY_POLL" 1
		host_setting busy_poll "$PROCFS/sys/net/core/busy_poll" "$BUSY_POLL" 1
	fi
}

step_ptp() {
	local src dst cur f pid comm name
	if ((NO_PTP)); then
		skip phc2sys "--no-ptp given"
		return 0
	fi
	if [[ -z $PHC && -z $PTP_SOURCE ]]; then
		skip phc2sys "no PHC (no hardware clock on $IFACE)"
		return 0
	fi
	if ! have "$PHC2SYS"; then
		report failed phc2sys "phc2sys not installed (linuxptp; or --no-ptp)"
		return 1
	fi
	src=${PTP_SYNC_TO_CLOCK:-CLOCK_REALTIME}
	dst=${PTP_SOURCE_CLOCK:-$PHC}
	# What phc2sys would die of at once is checked first, so that the dry
	# run predicts it: both clocks must be there to open.
	for f in "$src" "$dst"; do
		if ! cur=$(clock_problem "$f"); then
			report failed phc2sys "$cur"
			return 1
		fi
	done
	# Two phc2sys steering one clock fight; leave a foreign one alone.
	name=${PHC2SYS##*/}
	for f in /proc/[0-9]*/comm; do
		read -r comm 2>/dev/null <"$f" || continue
		[[ $comm == "$name" ]] || continue
		pid=${f%/comm}
		pid=${pid##*/}
		[[ -r $PID_FILE && $(cat "$PID_FILE") == "$pid" ]] && continue
		if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "-c $dst\( \|$\)"; then
			skip phc2sys "phc2sys pid $pid (not ours) already steers $dst"
			return 0
		fi
	done
	cur=stopped
	pidfile_alive "$PID_FILE" && cur=running
	UNDO=(stop_pidfile "$PID_FILE")
	# -O 0: keep the NIC clock on the system clock's (UTC) time scale,
	# which is the one rant's app stamps use.
	step phc2sys "$cur" running start_phc2sys -s "$src" -c "$dst" -O 0 -m
}

# ---------------------------------------------------------------- modes

# undo_gone CMD...: print what no longer exists that CMD would restore
# (IFACE, a namespace, a sysfs or procfs file, a thread), or fail.  Such a
# record can never be undone: kept, it would fail every later --undo.
undo_gone() {
	local i ns=
	case $1 in
	write_file)
		ns=${4:-}
		if [[ -n $ns ]] && ! "$IP" netns exec "$ns" true 2>/dev/null; then
			printf 'namespace %s is gone' "$ns"
			return 0
		fi
		if [[ -n $ns ]]; then
			"$IP" netns exec "$ns" test -e "$2" && return 1
		else
			[[ -e $2 ]] && return 1
		fi
		printf '%s is gone' "$2"
		return 0
		;;
	netns_del)
		if "$IP" netns exec "$2" true 2>/dev/null || [[ -e $NETNS_DIR/$2 ]]; then
			return 1
		fi
		printf 'namespace %s is gone' "$2"
		return 0
		;;
	netns_return) ns=$2 ;;
	stop_pidfile) return 1 ;;
	esac
	if [[ $1 == "$CHRT" ]]; then
		[[ -e $PROCFS/${!#} ]] && return 1
		printf 'thread %s is gone' "${!#}"
		return 0
	fi
	for ((i = 1; i < $#; i++)); do
		[[ ${!i} == -n ]] && { i=$((i + 1)); ns=${!i}; }
		[[ ${!i} == netns && $((i + 2)) -le $# ]] && { i=$((i + 2)); ns=${!i}; }
	done
	if [[ -n $ns ]] && ! "$IP" netns exec "$ns" true 2>/dev/null; then
		printf 'namespace %s is gone' "$ns"
		return 0
	fi
	[[ " $* " == *" $IFACE "* ]] || return 1
	if ! (locate_iface); then
		printf '%s is gone (not here, nor in namespace %s or %s)' "$IFACE" "$NS" "$OLD_NS"
		return 0
	fi
	# A record made in NS restores IFACE there; moved out of it since (by
	# hand), it is not that record's to restore anywhere else.
	if [[ -n $ns ]] && ! "$IP" -n "$ns" link show dev "$IFACE" >/dev/null 2>&1; then
		printf '%s is no longer in namespace %s' "$IFACE" "$ns"
		return 0
	fi
	return 1
}

do_undo() {
	local -a lines=() keep=() cmd
	local i id old words why
	if [[ ! -f $STATE_FILE ]]; then
		printf '%s: %s: nothing to undo (no %s)\n' "$PROG" "$IFACE" "$STATE_FILE"
		return 0
	fi
	mapfile -t lines <"$STATE_FILE"
	for ((i = ${#lines[@]} - 1; i >= 0; i--)); do
		IFS=$'\t' read -r id old words <<<"${lines[i]}"
		# Checked before anything was changed (check_undo_netns).
		[[ $id == caller-netns ]] && continue
		IFS=$SEP read -r -a cmd <<<"$words"
		if ((DRY_RUN)) && why=$(undo_gone "${cmd[@]}"); then
			report gone "$id" "$why: the record would be dropped"
		elif ((DRY_RUN)); then
			report "would apply" "$id" "back to '$old'"
			run "${cmd[@]}"
		elif run "${cmd[@]}"; then
			report restored "$id" "'$old'"
		elif why=$(undo_gone "${cmd[@]}"); then
			report gone "$id" "$why: nothing to restore, record dropped"
		else
			report failed "$id" "$(show_cmd "${cmd[@]}"): $RUN_ERR"
			keep=("${lines[i]}" "${keep[@]}")
		fi
	done
	((DRY_RUN)) && return 0
	if ((${#keep[@]})); then
		# Keep what could not be restored, so a second --undo retries it.
		printf '%s\n' "${keep[@]}" >"$STATE_FILE"
	else
		rm -f "$STATE_FILE" "$STATE_DIR/$IFACE.phc2sys.log"
	fi
}

do_steps() {
	IFSTEP=1
	step_namespace || true
	if ((!NO_NS)) && [[ $CNS != "$NS" ]] && [[ $MODE != check ]]; then
		# What was asked for and not done is a failure, whatever the cause.
		local id
		for id in qdisc link-up address neighbour ipv6-off multicast-off; do
			report failed "$id" "not done: $IFACE was not moved into $NS"
		done
	else
		step_link
	fi
	# A driver that requests its IRQs when the device opens and frees them
	# when it closes (e1000e, igb, ixgbe) has new IRQ threads once the link
	# is up again in the namespace: the ones found before the move are gone.
	((DRY_RUN)) || find_threads
	step_ethtool
	step_napi
	step_pcie_pm
	step_irqs
	# The CPUs and the host are there whatever becomes of IFACE.
	IFSTEP=0
	step_irq_others
	step_cpus
	step_host
	# phc2sys steers IFACE's own PHC unless --ptp-source named a clock.
	[[ -z ${PTP_SOURCE_CLOCK:-} ]] && IFSTEP=1
	step_ptp
	IFSTEP=0
}

# ---------------------------------------------------------------- options

parse_args() {
	local arg opt val have_val
	local -a need
	# the numbers the environment may set (Settings for tests and unusual hosts)
	RING_SIZE=$(parse_int RING_SIZE "$RING_SIZE" 1 65536) || exit 2
	STOP_TIMEOUT=$(parse_int STOP_TIMEOUT "$STOP_TIMEOUT" 0 3600) || exit 2
	LINK_WAIT=$(parse_int LINK_WAIT "$LINK_WAIT" 0 600) || exit 2
	while (($#)); do
		arg=$1
		shift
		opt=${arg%%=*}
		have_val=0
		[[ $arg == --*=* ]] && have_val=1 && val=${arg#*=}
		case $opt in
		--ip | --remote-ip | --remote-mac | --cpu | --irq-cpu | --ptp-source | \
			--ptp-sync-to | --irq-prio | --ksoftirqd-prio | --busy-poll)
			if ((!have_val)); then
				(($#)) || usage_error "$opt: missing value"
				val=$1
				shift
			fi
			;;
		*)
			((have_val)) && usage_error "$opt: takes no value"
			;;
		esac
		case $opt in
		--ip) OPT_IP=$val ;;
		--remote-ip) OPT_REMOTE=$val ;;
		--remote-mac) OPT_MAC=$val ;;
		--cpu) OPT_CPU=$val ;;
		--irq-cpu) OPT_IRQ_CPU=$val ;;
		--ptp-source) PTP_SOURCE=$val ;;
		--ptp-sync-to) PTP_SYNC_TO=$val ;;
		--irq-prio) IRQ_PRIO=$(parse_int --irq-prio "$val" 1 99) || exit 2 ;;
		--ksoftirqd-prio) KSOFTIRQD_PRIO=$(parse_int --ksoftirqd-prio "$val" 1 99) || exit 2 ;;
		--busy-poll) BUSY_POLL=$(parse_int --busy-poll "$val" 0 1000000) || exit 2 ;;
		--no-namespace) NO_NS=1 ;;
		--no-ptp) NO_PTP=1 ;;
		--host-tuning) HOST_TUNING=1 ;;
		--dry-run) DRY_RUN=1 ;;
		--undo) [[ $MODE == check ]] && usage_error "--undo: not with --check"; MODE=undo ;;
		--check) [[ $MODE == undo ]] && usage_error "--check: not with --undo"; MODE=check ;;
		-h | --help) usage; exit 0 ;;
		-*) usage_error "$arg: unknown option (see --help)" ;;
		*)
			[[ -n $IFACE ]] && usage_error "$arg: only one interface (already have '$IFACE')"
			IFACE=$arg
			;;
		esac
	done
	[[ -n $IFACE ]] || usage_error "missing interface (usage: $PROG IFACE --ip ADDR --remote-ip ADDR --cpu N --irq-cpu N)"
	if [[ ! $IFACE =~ ^[A-Za-z0-9_.:@-]{1,15}$ || $IFACE == . || $IFACE == .. ]]; then
		usage_error "'$IFACE': not an interface name (1 to 15 letters, digits, _ . : @ -)"
	fi
	[[ $MODE == undo ]] && return 0

	# Check the values given first, then complain about missing ones.
	if [[ -n ${OPT_IP:-} ]]; then
		parse_addr --ip "$OPT_IP" 1
		ADDR=$P_ADDR PREFIX=$P_LEN FAMILY=$P_FAMILY
	fi
	if [[ -n ${OPT_REMOTE:-} ]]; then
		parse_addr --remote-ip "$OPT_REMOTE" 0
		REMOTE=$P_ADDR
	fi
	if [[ -n ${OPT_MAC:-} ]]; then
		[[ $OPT_MAC =~ ^([0-9A-Fa-f]{2}:){5}[0-9A-Fa-f]{2}$ ]] ||
			usage_error "--remote-mac: '$OPT_MAC' is not a MAC address (xx:xx:xx:xx:xx:xx)"
		REMOTE_MAC=${OPT_MAC,,}
	fi
	read_cpus
	[[ -n ${OPT_CPU:-} ]] && { CPU=$(parse_cpu --cpu "$OPT_CPU") || exit 2; }
	[[ -n ${OPT_IRQ_CPU:-} ]] && { IRQ_CPU=$(parse_cpu --irq-cpu "$OPT_IRQ_CPU") || exit 2; }

	need=()
	[[ -n ${OPT_IP:-} ]] || need+=(--ip)
	[[ -n ${OPT_REMOTE:-} ]] || need+=(--remote-ip)
	[[ -n ${OPT_CPU:-} ]] || need+=(--cpu)
	[[ -n ${OPT_IRQ_CPU:-} ]] || need+=(--irq-cpu)
	((${#need[@]} == 0)) || usage_error "${need[0]}: missing (required: --ip ADDR --remote-ip ADDR --cpu N --irq-cpu N)"
	[[ $P_FAMILY == "$FAMILY" ]] || usage_error "--remote-ip: '$OPT_REMOTE' is not the same family as --ip (IPv$FAMILY)"
	[[ $REMOTE != "$ADDR" ]] || usage_error "--remote-ip: '$OPT_REMOTE' is the same as --ip"
	if [[ $PTP_SOURCE == CLOCK_REALTIME ]] && ((!HOST_TUNING)); then
		usage_error "--ptp-source: CLOCK_REALTIME would have phc2sys steer the host's clock; add --host-tuning"
	fi
	if ((NO_PTP)) && [[ -n $PTP_SOURCE$PTP_SYNC_TO ]]; then
		usage_error "--no-ptp: conflicts with --ptp-source/--ptp-sync-to"
	fi
	[[ $PTP_SOURCE == /dev/* ]] && ! clock_problem "$PTP_SOURCE" >/dev/null &&
		usage_error "--ptp-source: $(clock_problem "$PTP_SOURCE")"
	[[ $PTP_SYNC_TO == /dev/* ]] && ! clock_problem "$PTP_SYNC_TO" >/dev/null &&
		usage_error "--ptp-sync-to: $(clock_problem "$PTP_SYNC_TO")"
}

# check_iface: the interface exists, and moving it will not cut the host off.
check_iface() {
	if ! locate_iface; then
		if [[ $MODE == undo && -f $STATE_DIR/$IFACE.state ]]; then
			return 0
		fi
		if "$IP" link show dev "$IFACE" >/dev/null 2>&1; then
			usage_error "$IFACE: in this network namespace but not in $NET_SYSFS, which shows another one's (nsenter --net? run config.sh with ip netns exec, which mounts the namespace's /sys)"
		fi
		usage_error "$IFACE: no such interface (not here, nor in namespace $NS or $OLD_NS)"
	fi
	if [[ $QNS == "$OLD_NS" && $MODE == apply ]]; then
		usage_error "$IFACE: is in $OLD_NS, where an earlier config.sh put it; run '$PROG $IFACE --undo' first (the namespace is now $NS)"
	fi
	if [[ $MODE == apply && $NO_NS == 0 && -z $QNS ]] &&
		[[ -n $("$IP" route show default dev "$IFACE" 2>/dev/null)$("$IP" -6 route show default dev "$IFACE" 2>/dev/null) ]]; then
		usage_error "$IFACE: carries the default route; moving it into $NS would cut this host off (use --no-namespace, or another port)"
	fi
}

# state_dir: the state directory exists and is ours to write, or exit 2.
state_dir() {
	[[ -d $STATE_DIR ]] || mkdir -m 0700 "$STATE_DIR" 2>/dev/null
	if [[ ! -d $STATE_DIR || ! -w $STATE_DIR ]]; then
		usage_error "$STATE_DIR: cannot write the state directory (run as root, or set STATE_DIR)"
	fi
}

main() {
	local dst
	parse_args "$@"
	check_iface
	[[ $MODE == check ]] || find_home
	STATE_FILE=$STATE_DIR/$IFACE.state
	PID_FILE=$STATE_DIR/$IFACE.phc2sys.pid
	if [[ $MODE == undo ]]; then
		STATE_FILE=$STATE_DIR/$IFACE.state
		check_undo_netns
		((DRY_RUN)) || state_dir
		if [[ -n $QNS || -e $NET_SYSFS/$IFACE ]]; then
			discover
			show_discovery
		fi
		printf '%s: %s: undo%s\n' "$PROG" "$IFACE" "$( ((DRY_RUN)) && echo ' (dry run)')"
		do_undo
		printf '%s: %s: %d restored, %d gone, %d failed\n' "$PROG" "$IFACE" "$N_INPLACE" "$N_GONE" "$N_FAILED"
		((N_FAILED == 0))
		return
	fi
	discover
	if ((!NO_PTP)); then
		if [[ -n $PTP_SOURCE ]]; then
			PTP_SOURCE_CLOCK=$(resolve_clock --ptp-source "$PTP_SOURCE") || exit 2
		fi
		if [[ -n $PTP_SYNC_TO ]]; then
			PTP_SYNC_TO_CLOCK=$(resolve_clock --ptp-sync-to "$PTP_SYNC_TO") || exit 2
		fi
		dst=${PTP_SOURCE_CLOCK:-$PHC}
		if [[ -n $dst && $dst == "${PTP_SYNC_TO_CLOCK:-CLOCK_REALTIME}" ]]; then
			usage_error "--ptp-sync-to: '$dst' is also the clock to steer"
		fi
	fi
	[[ $MODE == check ]] || ((DRY_RUN)) || state_dir
	show_discovery
	printf '%s: %s: %s\n' "$PROG" "$IFACE" "$(
		case $MODE in
		check) echo check ;;
		*) ((DRY_RUN)) && echo "apply (dry run, nothing is changed)" || echo apply ;;
		esac
	)"
	do_steps
	if [[ $MODE == check ]]; then
		printf '%s: %s: %d in place, %d not set, %d skipped\n' "$PROG" "$IFACE" \
			"$N_INPLACE" "$N_NOTSET" "$N_SKIPPED"
		((N_NOTSET == 0))
		return
	fi
	printf '%s: %s: %d %s, %d in place, %d skipped, %d failed\n' "$PROG" "$IFACE" \
		"$N_APPLIED" "$( ((DRY_RUN)) && echo would apply || echo applied)" \
		"$N_INPLACE" "$N_SKIPPED" "$N_FAILED"
	((N_FAILED == 0))
}

main "$@"
