#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The QEMU guest lab (make check-vm): boots Debian's stock 6.1 kernel and its
# PREEMPT_RT build with three emulated e1000e NICs on one hub and an NVMe
# disk, runs tests/vm/guest.sh inside each (one boot per kernel), and prints
# the guests' TAP as one suite's, renumbered, each test named by its kernel.
#
#   tests/vm/run.sh [std|rt]...      (default: both)
#
# RANT_STATIC: the rant binary for the guest (built -static; make check-vm
# builds build/vm/rant).  RANT_VM_CACHE: where kernels and the base
# initramfs are kept (default /var/cache/rant-vm as root).  RANT_VM_ONLY:
# a comma-separated list of guest.sh sections to run.  RANT_VM_REQUIRED=1:
# a host without QEMU fails instead of skipping.  RANT_VM_OUT: keep each
# guest's console log and outputs there (default: a temporary directory,
# kept when a test fails).
cd "$(dirname "$0")/../.." || exit 2
TOP=$PWD
# shellcheck source=tests/lib.sh
TAP_ONLY=1 . tests/lib.sh
# shellcheck source=tests/vm/build.sh
. tests/vm/build.sh

: "${RANT_STATIC:=$TOP/build/vm/rant}"
: "${VM_TIMEOUT:=900}"
flavors=("$@")
((${#flavors[@]})) || flavors=(std rt)

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
for tool in busybox apt-get dpkg ldd; do
	command -v "$tool" >/dev/null || lab_missing "$tool not installed"
done
[[ -x $RANT_STATIC ]] || lab_missing "no static rant at $RANT_STATIC (make check-vm builds it)"

OUT=${RANT_VM_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/rant-vm.XXXXXX")}
mkdir -p "$OUT"
keep=${RANT_VM_OUT:+1}

# boot FLAVOR: one guest run; its TAP in $OUT/FLAVOR/tap.txt
boot() {
	local flavor=$1 dir=$OUT/$1 t0 append
	mkdir -p "$dir"
	t0=$SECONDS
	if ! vm_base "$flavor" 2>"$dir/build.err"; then
		not_ok "$flavor: guest built ($(tail -n 1 "$dir/build.err"))"
		return 1
	fi
	echo "# vm: $flavor: $VM_KPKG, built in $((SECONDS - t0)) s (cache $(vm_cache_dir))"
	vm_overlay "$dir/run.cpio" tests/vm/init=init "$RANT_STATIC=usr/bin/rant" config.sh=rant/config.sh \
		tests/lib.sh=rant/tests/lib.sh tests/config/lib.sh=rant/tests/config/lib.sh \
		tests/vm/guest.sh=rant/tests/vm/guest.sh \
		tests/vm/guest-rt.sh=rant/tests/vm/guest-rt.sh || return 1
	cat "$VM_BASE" "$dir/run.cpio" >"$dir/initrd"
	rm -f "$dir/run.cpio"
	# the NVMe disk: IRQ threads for config.sh's tests, and on the way out
	# a tar of the guest's outputs
	rm -f "$dir/nvme.img"
	truncate -s 64M "$dir/nvme.img"
	append="console=ttyS0 panic=-1 loglevel=4 rant.flavor=$flavor"
	[[ -n ${RANT_VM_ONLY:-} ]] && append+=" rant.only=$RANT_VM_ONLY"
	t0=$SECONDS
	# TCG: QEMU's software emulation (the lab needs no /dev/kvm)
	timeout "$VM_TIMEOUT" qemu-system-x86_64 -nodefaults -display none -monitor none -no-reboot \
		-machine q35 -accel "${RANT_VM_ACCEL:-tcg}" -cpu max -smp 2 -m 1024 \
		-kernel "$VM_KDIR/vmlinuz" -initrd "$dir/initrd" -append "$append" \
		-serial "file:$dir/console.log" -serial "file:$dir/tap.raw" \
		-netdev hubport,id=n0,hubid=0 -device e1000e,netdev=n0,mac=52:54:00:12:00:10 \
		-netdev hubport,id=n1,hubid=0 -device e1000e,netdev=n1,mac=52:54:00:12:00:11 \
		-netdev hubport,id=n2,hubid=0 -device e1000e,netdev=n2,mac=52:54:00:12:00:12 \
		-drive "file=$dir/nvme.img,if=none,id=d0,format=raw" -device nvme,drive=d0,serial=rantvm \
		>"$dir/qemu.out" 2>&1
	echo "# vm: $flavor: guest ran $((SECONDS - t0)) s (qemu exit $?)"
	tr -d '\r' <"$dir/tap.raw" >"$dir/tap.txt"
	mkdir -p "$dir/outputs"
	tar -xf "$dir/nvme.img" -C "$dir/outputs" 2>/dev/null
	rm -f "$dir/nvme.img" "$dir/initrd"
}

# relay FLAVOR: the guest's TAP lines renumbered into this suite's, with a
# failing test of their own when the guest did not finish its plan
relay() {
	local flavor=$1 tap=$OUT/$1/tap.txt line
	while IFS= read -r line; do
		case $line in
		"ok "*"- # SKIP "*) skip "$flavor: ${line#*- # SKIP }" ;;
		"ok "*) ok "$flavor: ${line#ok * - }" ;;
		"not ok "*) not_ok "$flavor: ${line#not ok * - }"; keep=1 ;;
		"# "[0-9]*" passed, "*) ;;
		"#"*) echo "$line" ;;
		esac
	done <"$tap"
	if ! tap_plan_ok "$tap" 2>/dev/null; then
		not_ok "$flavor: the guest ran to its plan (console: $OUT/$flavor/console.log)"
		tail -n 15 "$OUT/$flavor/console.log" 2>/dev/null | sed 's/^/#   /'
		keep=1
	fi
}

for f in "${flavors[@]}"; do
	case $f in
	std | rt) ;;
	*) echo "usage: $0 [std|rt]..." >&2; exit 2 ;;
	esac
	boot "$f" && relay "$f"
done
if [[ -n $keep ]]; then
	echo "# vm: console logs and the guests' outputs kept in $OUT"
else
	rm -rf "$OUT"
fi
finish
