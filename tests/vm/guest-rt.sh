#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The PREEMPT_RT guest's part of tests/vm/guest.sh (sourced by it, with its
# helpers and the lab set up): config.sh on e1000e, where every IRQ has a
# thread, and the NVMe disk's managed queue IRQs, one per CPU
# (irq/N-nvme0q1 on CPU 0, irq/N-nvme0q2 on CPU 1, SCHED_FIFO 50).
#
# config.sh eth0 --cpu 1 --irq-cpu 1: CPU 1 is the test CPU, CPU 0 is not.
#
# Assertions are `bash -c '...' _ ARGS` scripts (one failing is one test):
# shellcheck disable=SC2016,SC2153

# shellcheck source=tests/config/lib.sh
. /rant/tests/config/lib.sh

# threads: every IRQ thread and ksoftirqd as "comm policy priority", by
# name (an IRQ thread a driver frees and requests again has a new pid)
threads() {
	local f comm line
	local -a s
	for f in /proc/[0-9]*/comm; do
		read -r comm <"$f" 2>/dev/null || continue
		case $comm in
		irq/* | ksoftirqd/*)
			read -r line <"${f%comm}stat" || continue
			read -r -a s <<<"${line##*) }"
			printf '%s %s %s\n' "$comm" "${s[38]}" "${s[37]}"
			;;
		esac
	done | sort
}

# thread_pid COMM-PREFIX: the pid of the IRQ thread whose name starts so
thread_pid() {
	local f comm
	for f in /proc/[0-9]*/comm; do
		read -r comm <"$f" 2>/dev/null || continue
		[[ $comm == "$1"* ]] && { f=${f%/comm}; echo "${f##*/}"; return 0; }
	done
	return 1
}

# policy PID: "policy priority" (0 other, 1 fifo) from /proc/PID/stat
policy() {
	local line
	local -a s
	read -r line <"/proc/$1/stat" || return 1
	read -r -a s <<<"${line##*) }"
	echo "${s[38]} ${s[37]}"
}

# irqs_of NAME: the IRQ numbers /proc/interrupts names NAME-... or NAME
irqs_of() {
	awk -v n="$1" '$NF == n || index($NF, n "-") == 1 { sub(":", "", $1); print $1 }' /proc/interrupts
}

# snap IFACE NS: what config.sh may change, as seen from NS ("" = here)
snap() {
	local i=$1 ns=$2 o n
	local -a q=()
	[[ -n $ns ]] && q=(ip netns exec "$ns")
	for o in -k -c -g -l -a; do
		echo "ethtool $o"
		"${q[@]}" ethtool "$o" "$i" 2>&1
	done
	"${q[@]}" ip -o link show "$i" | sed -e 's/^[0-9]*: //' -e 's/\\.*//'
	"${q[@]}" ip -o addr show "$i" | awk '{ print $3, $4 }'
	"${q[@]}" tc qdisc show dev "$i" | sed 's/ [0-9a-f]*: / H: /'
	"${q[@]}" cat "/sys/class/net/$i/gro_flush_timeout" "/sys/class/net/$i/napi_defer_hard_irqs" \
		"/proc/sys/net/ipv6/conf/$i/disable_ipv6"
	for n in $(irqs_of "$i") $(irqs_of nvme0q); do
		echo "irq $n $(cat "/proc/irq/$n/smp_affinity_list")"
	done
	cat /proc/sys/kernel/sched_rt_runtime_us /proc/sys/kernel/timer_migration
	threads
}

test_config_rt() {
	local before after q1 q2 rpid cargs
	t "rt: the kernel is PREEMPT_RT (/sys/kernel/realtime)" "" is "$(cat /sys/kernel/realtime 2>/dev/null)" 1
	q1=$(thread_pid "irq/$(irqs_of nvme0q1)-nvme0q1")
	q2=$(thread_pid "irq/$(irqs_of nvme0q2)-nvme0q2")
	t "rt: NVMe queue threads nvme0q1 (CPU 0) and nvme0q2 (CPU 1) at SCHED_FIFO 50" "" bash -c '
		[[ -n $1 && -n $2 && $(cat /proc/irq/$3/smp_affinity_list) == 0 &&
		   $(cat /proc/irq/$4/smp_affinity_list) == 1 ]] &&
		[[ $(sed "s/.*) //" /proc/$1/stat | cut -d" " -f38,39) == "50 1" ]] &&
		[[ $(sed "s/.*) //" /proc/$2/stat | cut -d" " -f38,39) == "50 1" ]]' \
		_ "$q1" "$q2" "$(irqs_of nvme0q1)" "$(irqs_of nvme0q2)"
	# managed: the kernel refuses to move it (EIO), whatever is asked
	t "rt: nvme0q2's affinity is managed (a move is refused)" "" \
		bash -c '! echo 0 >/proc/irq/$1/smp_affinity_list' _ "$(irqs_of nvme0q2)"

	in_r ip addr add 10.40.0.2/24 dev "$R"
	cargs=("$A" --ip 10.40.0.1 --remote-ip 10.40.0.2 --cpu 1 --irq-cpu 1)
	before=$(snap "$A" "")
	STATE_DIR=/run/rant-config bash "$CONFIG" "${cargs[@]}" --dry-run >"$W/cfg-dry.out" 2>"$W/cfg-dry.err"
	t "config.sh: --dry-run exits 0 and changes nothing" "cfg-dry" \
		bash -c '[[ $1 == 0 && $2 == "$3" ]]' _ "$?" "$before" "$(snap "$A" "")"
	STATE_DIR=/run/rant-config bash "$CONFIG" "${cargs[@]}" >"$W/cfg-apply.out" 2>"$W/cfg-apply.err"
	t "config.sh: apply on e1000e exits 0, nothing failed" "cfg-apply" \
		bash -c '[[ $1 == 0 ]] && grep -q " 0 failed$" "$2"' _ "$?" "$W/cfg-apply.out"
	t "config.sh: the dry run predicted the apply's verdict for every step" "" \
		same_verdicts "$W/cfg-dry.out" "$W/cfg-apply.out"
	t "config.sh: $A's IRQs found and moved to CPU 1" "cfg-apply" bash -c '
		n=0; for i in $(awk -v n="$2" "\$NF == n || index(\$NF, n \"-\") == 1 { sub(\":\", \"\", \$1); print \$1 }" /proc/interrupts); do
			n=$((n + 1)); [[ $(cat /proc/irq/$i/smp_affinity_list) == 1 ]] || exit 1
			grep -q "applied *irq $i affinity" "$1" || exit 1
		done; ((n >= 2))' _ "$W/cfg-apply.out" "$A"
	t "config.sh: $A's IRQ threads at SCHED_FIFO 55" "cfg-apply" bash -c '
		n=0; for i in $(awk -v n="$1" "\$NF == n || index(\$NF, n \"-\") == 1 { sub(\":\", \"\", \$1); print \$1 }" /proc/interrupts); do
			for f in /proc/[0-9]*/comm; do
				[[ $(cat "$f" 2>/dev/null) == irq/$i-* ]] || continue
				n=$((n + 1)); [[ $(sed "s/.*) //" "${f%comm}stat" | cut -d" " -f38,39) == "55 1" ]] || exit 1
			done
		done; ((n >= 2))' _ "$A"
	t "config.sh: ethtool settings applied (rings, coalescing or offloads)" "cfg-apply" \
		bash -c 'grep -Eq "applied *(ring|coalesce|offload) " "$1"' _ "$W/cfg-apply.out"
	t "config.sh: nvme0q2's thread, on the test CPU, demoted to SCHED_OTHER" "cfg-apply" bash -c '
		[[ $(sed "s/.*) //" /proc/$1/stat | cut -d" " -f38,39) == "0 0" ]] &&
		grep -q "applied *irq/[0-9]*-nvme0q2 *.fifo 50. -> .other 0." "$2"' _ "$q2" "$W/cfg-apply.out"
	t "config.sh: nvme0q1's thread, on CPU 0, untouched" "cfg-apply" bash -c '
		[[ $(sed "s/.*) //" /proc/$1/stat | cut -d" " -f38,39) == "50 1" ]] && ! grep -q "nvme0q1" "$2"' \
		_ "$q1" "$W/cfg-apply.out"
	STATE_DIR=/run/rant-config bash "$CONFIG" "${cargs[@]}" --check >"$W/cfg-check.out" 2>"$W/cfg-check.err"
	t "config.sh: --check after apply: every setting in place" "" \
		bash -c '! grep "^  not set" "$1" | sed "s/^/#   /" | grep .' _ "$W/cfg-check.out"

	# rant through the configured port, on the test CPU: the IRQ threads
	# follow their IRQ's affinity once an interrupt comes
	if reflector cf-r refl "$R" --port 12500; then
		rpid=$RPID # set by reflector (tests/vm/guest.sh)
		wait_for 60 ip netns exec "ns_$A" ping -c 1 -W 1 10.40.0.2 >/dev/null
		timeout 120 ip netns exec "ns_$A" taskset -c 1 chrt -f 2 "$RANT" -i "$A" -a 10.40.0.2 --port 12500 \
			--timestamps sw --count 200 >"$W/cf-c.out" 2>"$W/cf-c.err"
		t "config.sh: rant in ns_$A under taskset -c 1 chrt -f 2 (exit $?)" cf-c \
			bash -c '[[ $1 -gt 0 ]]' _ "$(samples cf-c)"
		t "config.sh: $A's IRQ threads now run on CPU 1 only" "" bash -c '
			n=0; for i in $(awk -v n="$1" "index(\$NF, n \"-\") == 1 { sub(\":\", \"\", \$1); print \$1 }" /proc/interrupts); do
				for f in /proc/[0-9]*/comm; do
					[[ $(cat "$f" 2>/dev/null) == irq/$i-* ]] || continue
					grep -q "^Cpus_allowed_list:[[:space:]]*1$" "${f%comm}status" || exit 1; n=$((n + 1))
				done
			done; ((n >= 1))' _ "$A"
		stop "$rpid" INT
	else
		not_ok "config.sh: reflector for the configured port listens"
	fi

	STATE_DIR=/run/rant-config bash "$CONFIG" "$A" --undo >"$W/cfg-undo.out" 2>"$W/cfg-undo.err"
	t "config.sh: --undo exits 0, nothing failed" "cfg-undo" \
		bash -c '[[ $1 == 0 ]] && grep -q " 0 failed$" "$2"' _ "$?" "$W/cfg-undo.out"
	wait_for 60 link_up "$A"
	after=$(snap "$A" "")
	t "config.sh: --undo restores ethtool, link, addresses, IRQ affinities and every thread's policy exactly" "" \
		bash -c '[[ $1 == "$2" ]] || { diff <(echo "$1") <(echo "$2") | sed "s/^/#   /"; exit 1; }' _ "$before" "$after"
	t "config.sh: nvme0q2's thread back at SCHED_FIFO 50" "" is "$(policy "$q2")" "1 50"
	in_r ip addr del 10.40.0.2/24 dev "$R"
}

if want config_rt rt; then
	t0=$SECONDS
	test_config_rt
	echo "# guest: config_rt took $((SECONDS - t0)) s"
fi
