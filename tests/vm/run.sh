#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The QEMU guest lab (make check-vm): boots four Debian kernels — bookworm's
# 6.1 and its security suite's 6.12, each stock and PREEMPT_RT (flavors
# std, rt, std612, rt612) — runs tests/vm/guest.sh inside each, and prints
# the guests' TAP as one suite's, renumbered, each test named by its boot.
#
#   tests/vm/run.sh [std|rt|std612|rt612]...      (default: all four)
#
# Two QEMUs: bookworm's own 7.2, whose e1000e claims hardware stamps and
# never gives one, its PHC standing still (the premise of guest.sh's e1000e
# sections), and the backports' 10 (tests/vm/build.sh), whose igb (an
# 82576) stamps TX packets and whose e1000e PHC runs.  A 6.1 kernel boots
# under each: under 7.2 the e1000e sections (and on rt config.sh's,
# tests/vm/guest-rt.sh), under 10 the igb ones (tests/vm/guest-igb.sh) and
# the model NIC's (tests/vm/guest-model.sh, with tests/vm/mod/rantnic), and
# on std the TSN ones (tests/vm/guest-tsn.sh); a 6.12 kernel under 10
# only, with the TSN ones on std612 and config.sh's on rt612.  Every boot has
# three e1000e NICs on one hub and an NVMe disk; the QEMU 10 ones also two
# igb ports, each behind its own PCIe root port, on a second hub.
#
# RANT_STATIC: the rant binary for the guest (built -static; make check-vm
# builds build/vm/rant).  RANT_VM_CACHE: where kernels, headers, QEMU,
# modules and the base initramfs are kept (default /var/cache/rant-vm as
# root).  RANT_VM_ONLY: a comma-separated list of sections (or groups:
# e1000e, rt, igb, model, tsn) to run; a boot with none of them is left out.
# RANT_VM_MODS: the directory of the lab's modules (default tests/vm/mod).
# RANT_VM_REQUIRED=1: a host without QEMU fails instead of skipping.
# RANT_VM_OUT: keep each guest's console log and outputs there (default: a
# temporary directory, kept when a test fails).
cd "$(dirname "$0")/../.." || exit 2
TOP=$PWD
# shellcheck source=tests/lib.sh
TAP_ONLY=1 . tests/lib.sh
# shellcheck source=tests/vm/build.sh
. tests/vm/build.sh

: "${RANT_STATIC:=$TOP/build/vm/rant}"
: "${VM_TIMEOUT:=900}"
# a guest that has written nothing on its TAP port this long after QEMU
# started hung in its boot (under TCG a kernel once stalled in RCU from
# 22 s on, before its init ran): it is stopped and booted once more
: "${VM_FIRST_S:=300}"
for v in VM_TIMEOUT VM_FIRST_S; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "tests/vm/run.sh: $v='${!v}': a number of seconds, 1 or more" >&2; exit 2; }
done
: "${RANT_VM_MODS:=$TOP/tests/vm/mod}"
: "${TAISET:=$TOP/build/vm/taiset}"
flavors=("$@")
# shellcheck disable=SC2206 # a list of words
((${#flavors[@]})) || flavors=($VM_FLAVORS)

# The sections of each group (guest.sh's want); the model's are named
# model or model_*, by tests/vm/guest-model.sh.
declare -A GROUP_SECTIONS=(
	[e1000e]="driver hwtstamp phc nostamps vlan macvlan bond txkey"
	[rt]="config_rt"
	[igb]="igb_driver igb_tx igb_rx igb_b2b"
	[model]="model"
	[tsn]="tsn"
	[why]="why_qdisc why_softirq why_irqthread"
)

# lab_missing WHY: no lab on this host; a skip, or a failure where required
lab_missing() {
	if [[ -n ${RANT_VM_REQUIRED:-} ]]; then
		not_ok "guest lab: $1"
	else
		skip "guest lab: $1"
	fi
	finish
	exit
}

command -v qemu-system-x86_64 >/dev/null || lab_missing "qemu-system-x86_64 not installed (apt-get install qemu-system-x86)"
for tool in busybox apt-get dpkg ldd xz; do
	command -v "$tool" >/dev/null || lab_missing "$tool not installed"
done
[[ -x $RANT_STATIC ]] || lab_missing "no static rant at $RANT_STATIC (make check-vm builds it)"
[[ -x $TAISET ]] || lab_missing "no $TAISET, the TSN section's TAI offset setter (make check-vm builds it)"

# one lab at a time on this host: the cache's kernels, headers, modules and
# base images are made in place (a second lab waits, as long as it takes)
mkdir -p "$(vm_cache_dir)" || lab_missing "cannot make the cache $(vm_cache_dir)"
exec {lab_lock}>>"$(vm_cache_dir)/lock"
flock "$lab_lock"

OUT=${RANT_VM_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/rant-vm.XXXXXX")}
mkdir -p "$OUT"
keep=${RANT_VM_OUT:+1}

# wanted GROUP...: the groups of a boot that RANT_VM_ONLY leaves in, as a
# comma-separated list ("" if none)
wanted() {
	local g w out=''
	for g in "$@"; do
		if [[ -z ${RANT_VM_ONLY:-} ]]; then
			out+=,$g
			continue
		fi
		for w in ${RANT_VM_ONLY//,/ }; do
			if [[ $w == "$g" || " ${GROUP_SECTIONS[$g]} " == *" $w "* || ($g == model && $w == model_*) || ($g == tsn && $w == tsn_*) ]]; then
				out+=,$g
				break
			fi
		done
	done
	printf '%s' "${out#,}"
}

# boot FLAVOR QEMU GROUPS: one guest run of FLAVOR's kernel under QEMU
# "old" (the host's) or "new" (the backports'), running GROUPS; its TAP
# in $OUT/LABEL/tap.txt, LABEL in BOOT_LABEL
boot() {
	local flavor=$1 which=$2 groups=$3 dir t0 append qemu qver label rc try qpid hung
	local -a q mods=() nics=()
	if [[ $which == new ]]; then
		if ! vm_qemu_new 2>"$OUT/qemu-new.err"; then
			BOOT_LABEL=$flavor/qemu-backports
			not_ok "$BOOT_LABEL: QEMU from backports unpacked ($(tail -n 1 "$OUT/qemu-new.err"))"
			return 1
		fi
		qemu=$VM_QNEW qver=$VM_QNEW_VER
		# its firmware: the unpacked data and BIOS first (Debian's QEMU
		# looks in /usr/share/qemu and /usr/share/seabios, here the host's
		# older ones)
		q=(-L "$VM_QNEW_DATA" -L "${VM_QNEW_DATA%/qemu}/seabios")
		# igb on q35: a PCIe device, each behind a root port of its own;
		# the two ports on their own hub, cabled to each other
		# shellcheck disable=SC2054 # QEMU's options, commas and all
		nics=(-device pcie-root-port,id=rp1,chassis=1,slot=1 -device pcie-root-port,id=rp2,chassis=2,slot=2
			-netdev hubport,id=i0,hubid=1 -device igb,bus=rp1,netdev=i0,mac=52:54:00:12:01:10,romfile=
			-netdev hubport,id=i1,hubid=1 -device igb,bus=rp2,netdev=i1,mac=52:54:00:12:01:11,romfile=)
	else
		qemu=$(command -v qemu-system-x86_64)
		qver=$("$qemu" --version | sed -n '1s/.*version \([0-9.]*\).*/\1/p')
		q=()
	fi
	label=$flavor/qemu${qver%%.*}
	BOOT_LABEL=$label
	dir=$OUT/$label
	mkdir -p "$dir"
	t0=$SECONDS
	if ! vm_base "$flavor" 2>"$dir/build.err"; then
		not_ok "$label: guest built ($(tail -n 1 "$dir/build.err"))"
		return 1
	fi
	# the TSN section runs rant and isochron side by side on the model NIC too
	if [[ ,$groups, == *,model,* || ,$groups, == *,tsn,* ]]; then
		if ! vm_modules "$RANT_VM_MODS" 2>"$dir/mod.err"; then
			not_ok "$label: the lab's modules built ($(tail -n 1 "$dir/mod.err"))"
			return 1
		fi
		mods=("${VM_MOD_SPECS[@]}")
		[[ -e tests/vm/guest-model.sh ]] && mods+=(tests/vm/guest-model.sh=rant/tests/vm/guest-model.sh)
	fi
	if [[ ,$groups, == *,tsn,* ]]; then
		mods+=(tests/vm/guest-tsn.sh=rant/tests/vm/guest-tsn.sh)
		mods+=("$TAISET=usr/bin/taiset")
	fi
	echo "# vm: $label: $VM_KPKG, QEMU $qver, $groups; built in $((SECONDS - t0)) s (cache $(vm_cache_dir))"
	vm_overlay "$dir/run.cpio" tests/vm/init=init "$RANT_STATIC=usr/bin/rant" config.sh=rant/config.sh \
		tests/lib.sh=rant/tests/lib.sh tests/config/lib.sh=rant/tests/config/lib.sh \
		tests/vm/guest.sh=rant/tests/vm/guest.sh tests/vm/guest-rt.sh=rant/tests/vm/guest-rt.sh \
		tests/vm/guest-igb.sh=rant/tests/vm/guest-igb.sh tests/vm/guest-why.sh=rant/tests/vm/guest-why.sh \
		"${mods[@]}" || return 1
	cat "$VM_BASE" "$dir/run.cpio" >"$dir/initrd"
	rm -f "$dir/run.cpio"
	# the NVMe disk: IRQ threads for config.sh's tests, and on the way out
	# a tar of the guest's outputs
	rm -f "$dir/nvme.img"
	truncate -s 64M "$dir/nvme.img"
	append="console=ttyS0 panic=-1 loglevel=4 rant.flavor=$flavor rant.series=$(vm_series "$flavor")"
	append+=" rant.qemu=$qver rant.groups=$groups"
	[[ -n ${RANT_VM_ONLY:-} ]] && append+=" rant.only=$RANT_VM_ONLY"
	for try in 1 2; do
		t0=$SECONDS
		rm -f "$dir/tap.raw"
		# TCG: QEMU's software emulation (the lab needs no /dev/kvm).
		# romfile=: no option ROM (the kernel is given, nothing boots from a NIC)
		timeout "$VM_TIMEOUT" "$qemu" "${q[@]}" -nodefaults -display none -monitor none -no-reboot \
			-machine q35 -accel "${RANT_VM_ACCEL:-tcg}" -cpu max -smp 2 -m 1024 \
			-kernel "$VM_KDIR/vmlinuz" -initrd "$dir/initrd" -append "$append" \
			-serial "file:$dir/console.log" -serial "file:$dir/tap.raw" \
			-netdev hubport,id=n0,hubid=0 -device e1000e,netdev=n0,mac=52:54:00:12:00:10,romfile= \
			-netdev hubport,id=n1,hubid=0 -device e1000e,netdev=n1,mac=52:54:00:12:00:11,romfile= \
			-netdev hubport,id=n2,hubid=0 -device e1000e,netdev=n2,mac=52:54:00:12:00:12,romfile= \
			"${nics[@]}" \
			-drive "file=$dir/nvme.img,if=none,id=d0,format=raw" -device nvme,drive=d0,serial=rantvm \
			>"$dir/qemu.out" 2>&1 &
		qpid=$!
		hung=0
		# the guest's first TAP line, or its end, whichever comes first
		while kill -0 "$qpid" 2>/dev/null && [[ ! -s $dir/tap.raw ]]; do
			if ((SECONDS - t0 >= VM_FIRST_S)); then
				hung=1
				kill "$qpid" 2>/dev/null	# timeout passes it on to QEMU
				break
			fi
			sleep 1
		done
		wait "$qpid"
		rc=$?
		echo "# vm: $label: guest ran $((SECONDS - t0)) s (qemu exit $rc)"
		((hung)) || break
		echo "# vm: $label: nothing on its TAP port after $VM_FIRST_S s, a boot that hung (console: $(tail -n 1 "$dir/console.log" 2>/dev/null | tr -d '\r')): try $try of 2"
		keep=1
		((try == 2)) || mv "$dir/console.log" "$dir/console.hung$try.log" 2>/dev/null
	done
	tr -d '\r' <"$dir/tap.raw" >"$dir/tap.txt"
	mkdir -p "$dir/outputs"
	tar -xf "$dir/nvme.img" -C "$dir/outputs" 2>/dev/null
	rm -f "$dir/nvme.img" "$dir/initrd"
}

# relay LABEL: the guest's TAP lines renumbered into this suite's, with a
# failing test of their own when the guest did not finish its plan
relay() {
	local label=$1 tap=$OUT/$1/tap.txt line
	while IFS= read -r line; do
		case $line in
		"ok "*"- # SKIP "*) skip "$label: ${line#*- # SKIP }" ;;
		"ok "*) ok "$label: ${line#ok * - }" ;;
		"not ok "*) not_ok "$label: ${line#not ok * - }"; keep=1 ;;
		"# "[0-9]*" passed, "*) ;;
		"#"*) echo "$line" ;;
		esac
	done <"$tap"
	if ! tap_plan_ok "$tap" 2>/dev/null; then
		not_ok "$label: the guest ran to its plan (console: $OUT/$label/console.log)"
		tail -n 15 "$OUT/$label/console.log" 2>/dev/null | sed 's/^/#   /'
		keep=1
	fi
}

# run FLAVOR QEMU GROUP...: boot FLAVOR under QEMU for the groups
# RANT_VM_ONLY leaves in, if any
run() {
	local flavor=$1 which=$2 groups
	shift 2
	groups=$(wanted "$@")
	[[ -n $groups ]] || return 0
	boot "$flavor" "$which" "$groups" && relay "$BOOT_LABEL"
}

for f in "${flavors[@]}"; do
	case $f in
	std) run std old e1000e; run std new igb model tsn why ;;
	rt) run rt old e1000e rt; run rt new igb model why ;;
	std612) run std612 new igb model tsn why ;;
	rt612) run rt612 new igb model rt why ;;
	*) echo "usage: $0 [std|rt|std612|rt612]..." >&2; exit 2 ;;
	esac
done
if [[ -n $keep ]]; then
	echo "# vm: console logs and the guests' outputs kept in $OUT"
else
	rm -rf "$OUT"
fi
finish
