#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Builders for fake sysfs/procfs trees and stub-tool state, so config.sh's
# driver-specific paths (mlx5, ice, PHC discovery, IRQ names, IRQ threads,
# PCIe power management) run without the hardware.  Sourced, not run.
#
# A tree ROOT has ROOT/sys, ROOT/proc and ROOT/state (the stubs' state); run
# config.sh with SYSFS=ROOT/sys PROCFS=ROOT/proc FAKE_STATE=ROOT/state and the
# tools pointed at tests/config/stubs.
# shellcheck source=tests/config/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# fake_cpus ROOT N: N online CPUs with cpufreq, idle states and ksoftirqd
# threads (pid 10 * (cpu + 1)), plus the host-wide sysctls.
fake_cpus() {
	local root=$1 n=$2 c s
	mkdir -p "$root/sys/devices/system/cpu" "$root/sys/devices/system/node/node0"
	echo "0-$((n - 1))" >"$root/sys/devices/system/cpu/online"
	echo "0-$((n - 1))" >"$root/sys/devices/system/node/node0/cpulist"
	echo "" >"$root/sys/devices/system/cpu/isolated"
	for ((c = 0; c < n; c++)); do
		mkdir -p "$root/sys/devices/system/cpu/cpu$c/cpufreq"
		echo powersave >"$root/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor"
		for s in 0 1 2; do
			mkdir -p "$root/sys/devices/system/cpu/cpu$c/cpuidle/state$s"
			echo 0 >"$root/sys/devices/system/cpu/cpu$c/cpuidle/state$s/disable"
		done
		write_stat "$root/proc" $((10 * (c + 1))) "ksoftirqd/$c" 0 0
	done
	mkdir -p "$root/proc/sys/kernel" "$root/proc/sys/net/core"
	echo 950000 >"$root/proc/sys/kernel/sched_rt_runtime_us"
	echo 1 >"$root/proc/sys/kernel/timer_migration"
	echo 0 >"$root/proc/sys/net/core/busy_read"
	echo 0 >"$root/proc/sys/net/core/busy_poll"
	: >"$root/proc/interrupts"
	mkdir -p "$root/state"
	: >"$root/state/calls.log"
}

# fake_port ROOT IFACE PCI DRIVER PTP MSI...: one PCI function with its
# netdev.  PTP is "ptpN" (a sysfs ptp child and ROOT/dev/ptpN, run config.sh
# with DEVFS=ROOT/dev) or "-" (none in sysfs).
fake_port() {
	local root=$1 iface=$2 pci=$3 driver=$4 ptp=$5 irq
	shift 5
	local dev=$root/sys/devices/pci0000:00/0000:00:02.0/$pci
	local net=$dev/net/$iface
	mkdir -p "$net" "$dev/msi_irqs" "$dev/power" "$dev/link" "$root/sys/class/net" \
		"$root/sys/bus/pci/drivers/$driver"
	ln -sfn "$root/sys/bus/pci/drivers/$driver" "$dev/driver"
	echo 0 >"$dev/numa_node"
	echo auto >"$dev/power/control"
	echo 1 >"$dev/link/l0s_aspm"
	echo 1 >"$dev/link/l1_aspm"
	if [[ $ptp != - ]]; then
		mkdir -p "$dev/ptp/$ptp" "$root/dev"
		: >"$root/dev/$ptp"
	fi
	for irq in "$@"; do
		: >"$dev/msi_irqs/$irq"
	done
	ln -sfn "$dev" "$net/device"
	ln -sfn "$net" "$root/sys/class/net/$iface"
	echo 0c:42:a1:00:00:01 >"$net/address"
	echo 20000 >"$net/gro_flush_timeout"
	echo 1 >"$net/napi_defer_hard_irqs"
	mkdir -p "$root/proc/sys/net/ipv6/conf/$iface"
	echo 0 >"$root/proc/sys/net/ipv6/conf/$iface/disable_ipv6"

	local s=$root/state/ip/$iface e=$root/state/ethtool/$iface
	mkdir -p "$s" "$e"
	echo "BROADCAST,MULTICAST,UP,LOWER_UP" >"$s/flags"
	: >"$s/addrs"
	: >"$s/neigh"
	echo mq >"$s/qdisc"
	printf 'driver %s\nversion 6.18\nbus-info %s\n' "$driver" "$pci" >"$e/info"
	printf 'adaptive-rx on\nadaptive-tx on\nrx-usecs 8\nrx-frames 128\ntx-usecs 16\ntx-frames 32\n' >"$e/coalesce"
	printf '%s\n' "generic-receive-offload on" "large-receive-offload off" \
		"rx-gro-hw off [fixed]" "tcp-segmentation-offload on" \
		"generic-segmentation-offload on" "rx-checksumming on" >"$e/features"
	printf 'max-rx 8192\nmax-tx 8192\nrx 1024\ntx 1024\n' >"$e/rings"
	printf 'max-combined 63\ncombined 16\n' >"$e/channels"
	printf 'autonegotiate on\nrx on\ntx on\n' >"$e/pause"
}

# fake_irq ROOT IRQ NAME [THREAD_PID]: an /proc/interrupts line, its
# /proc/irq directory and, with a pid, its IRQ thread (SCHED_FIFO 50).
fake_irq() {
	local root=$1 irq=$2 name=$3 pid=${4:-}
	printf '%4d:          0          0  IR-PCI-MSIX   0-edge      %s\n' "$irq" "$name" >>"$root/proc/interrupts"
	mkdir -p "$root/proc/irq/$irq"
	echo "0-3" >"$root/proc/irq/$irq/smp_affinity_list"
	[[ -n $pid ]] && write_stat "$root/proc" "$pid" "irq/$irq-${name:0:10}" 1 50
	return 0
}

# fake_mlx5 ROOT: a two-port ConnectX (enp59s0f0 = 0000:3b:00.0 with ptp3,
# enp59s0f1 = 0000:3b:00.1 with ptp4) on a 4-CPU host, threaded IRQs.
fake_mlx5() {
	local root=$1 iface
	fake_cpus "$root" 4
	fake_port "$root" enp59s0f0 0000:3b:00.0 mlx5_core ptp3 100 101 102
	fake_port "$root" enp59s0f1 0000:3b:00.1 mlx5_core ptp4 110 111
	fake_irq "$root" 24 ttyS0
	fake_irq "$root" 100 mlx5_async0@pci:0000:3b:00.0 503
	fake_irq "$root" 101 mlx5_comp0@pci:0000:3b:00.0 501
	fake_irq "$root" 102 mlx5_comp1@pci:0000:3b:00.0 504
	fake_irq "$root" 110 mlx5_async0@pci:0000:3b:00.1 513
	fake_irq "$root" 111 mlx5_comp0@pci:0000:3b:00.1 511
	for iface in enp59s0f0 enp59s0f1; do
		printf '%s\n' "rx_cqe_moder on" "tx_cqe_moder off" "rx_cqe_compress off" \
			"rx_striding_rq on" "tx_port_ts off" >"$root/state/ethtool/$iface/privflags"
	done
}

# fake_ice ROOT: an E810 port eth1 (0000:5e:00.0) whose queue IRQs are found
# by name only ("ice-eth1-TxRx-N"; only the misc vector is in msi_irqs), a
# PHC known only to ethtool -T, and a neighbour eth10 whose IRQ must not be
# taken for eth1's.
fake_ice() {
	local root=$1
	fake_cpus "$root" 4
	fake_port "$root" eth1 0000:5e:00.0 ice - 200
	fake_port "$root" eth10 0000:5e:00.1 ice - 210
	fake_irq "$root" 200 ice-0000:5e:00.0:misc
	fake_irq "$root" 201 ice-eth1-TxRx-0 601
	fake_irq "$root" 202 ice-eth1-TxRx-1 602
	fake_irq "$root" 210 ice-0000:5e:00.1:misc
	fake_irq "$root" 211 ice-eth10-TxRx-0 611
	printf '%s\n' "link-down-on-close off" "fw-lldp-agent on" "legacy-rx off" \
		>"$root/state/ethtool/eth1/privflags"
	echo "phc 5" >"$root/state/ethtool/eth1/ts"
	mkdir -p "$root/dev"
	: >"$root/dev/ptp5"
}

# fake_cpufreq ROOT N KIND: frequency scaling on N CPUs, as intel_pstate
# shows it (KIND intel: base_frequency, intel_pstate/no_turbo) or
# acpi-cpufreq with boost (KIND acpi: the turbo entry at base + 1000 kHz in
# scaling_available_frequencies, cpufreq/boost).
fake_cpufreq() {
	local root=$1 n=$2 kind=$3 c d
	for ((c = 0; c < n; c++)); do
		d=$root/sys/devices/system/cpu/cpu$c/cpufreq
		mkdir -p "$d"
		echo 800000 >"$d/scaling_min_freq"
		echo 800000 >"$d/cpuinfo_min_freq"
		if [[ $kind == intel ]]; then
			echo 4800000 >"$d/scaling_max_freq"
			echo 4800000 >"$d/cpuinfo_max_freq"
			echo 2100000 >"$d/base_frequency"
		else
			echo 3001000 >"$d/scaling_max_freq"
			echo 3001000 >"$d/cpuinfo_max_freq"
			echo "3001000 3000000 2400000 1600000 800000" >"$d/scaling_available_frequencies"
		fi
	done
	if [[ $kind == intel ]]; then
		mkdir -p "$root/sys/devices/system/cpu/intel_pstate"
		echo 0 >"$root/sys/devices/system/cpu/intel_pstate/no_turbo"
	else
		mkdir -p "$root/sys/devices/system/cpu/cpufreq"
		echo 1 >"$root/sys/devices/system/cpu/cpufreq/boost"
	fi
}

# fake_selinux ROOT THRESHOLD: selinuxfs's AVC cache threshold.
fake_selinux() {
	mkdir -p "$1/sys/fs/selinux/avc"
	echo "$2" >"$1/sys/fs/selinux/avc/cache_threshold"
}

# fake_rt_storage ROOT: a PREEMPT_RT kernel (/sys/kernel/realtime) with an
# NVMe disk's managed queue IRQs, one per CPU of a 4-CPU host, each with its
# SCHED_FIFO 50 thread (pid 7xx), and the admin queue's on CPU 0.
fake_rt_storage() {
	local root=$1 c
	mkdir -p "$root/sys/kernel"
	echo 1 >"$root/sys/kernel/realtime"
	fake_irq "$root" 40 nvme0q0 740
	echo 0 >"$root/proc/irq/40/effective_affinity_list"
	for c in 0 1 2 3; do
		fake_irq "$root" $((41 + c)) "nvme0q$((c + 1))" $((741 + c))
		echo "$c" >"$root/proc/irq/$((41 + c))/smp_affinity_list"
		echo "$c" >"$root/proc/irq/$((41 + c))/effective_affinity_list"
	done
}
