#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The guest lab's builder (sourced by tests/vm/run.sh, never run): a Debian
# 6.1 kernel (stock or PREEMPT_RT) taken with `apt-get download` and
# `dpkg -x`, never installed on this host, and an initramfs made of
# busybox-static, the host's own iproute2, ethtool, linuxptp, nftables, bash
# and util-linux tools with their shared libraries, the kernel's modules the
# tests load, and rant built -static.
#
# The cache (VM_CACHE) keeps, per kernel package and version, the kernel
# image and the module closure the guest loads, and per kernel and host-tool
# versions the base initramfs; what changes from run to run (rant, config.sh,
# the guest's scripts) is a second cpio archive appended to it (the kernel
# unpacks concatenated archives in order: Documentation/driver-api/
# early-userspace/buffer-format.rst).

# Modules the guest loads, in an order that satisfies their dependencies
# once each one's own (from its .modinfo "depends=") is put first.
# crc32c_generic: libcrc32c (nf_tables) asks the crypto API for crc32c at
# load, which is not one of its "depends=".
VM_MODULES="e1000e 8021q bonding macvlan nvme crc32c_generic nf_tables nft_numgen"

# Host programs copied into the guest with their shared libraries; busybox
# gives the rest.  ip: busybox's own has no `ip netns`.
VM_TOOLS="bash ip tc ethtool hwstamp_ctl phc2sys phc_ctl nft chrt nsenter unshare setsid
taskset stat ss timeout"

# Debian packages those come from, whose versions key the base initramfs.
VM_HOST_PKGS="busybox-static iproute2 ethtool linuxptp nftables bash util-linux coreutils"

vm_log() {
	printf '# vm: %s\n' "$*"
}

# vm_cache_dir: where downloads and unpacked kernels live between runs.
vm_cache_dir() {
	if [[ -n ${RANT_VM_CACHE:-} ]]; then
		printf '%s' "$RANT_VM_CACHE"
	elif [[ -w /var/cache ]]; then
		printf '/var/cache/rant-vm'
	else
		printf '%s/rant-vm' "${XDG_CACHE_HOME:-$HOME/.cache}"
	fi
}

# vm_kernel_pkg FLAVOR: the Debian package of the newest 6.1 kernel of
# FLAVOR (std: linux-image-6.1.0-N-amd64, rt: linux-image-6.1.0-N-rt-amd64)
# that apt knows; RANT_VM_KERNEL_STD / RANT_VM_KERNEL_RT name one instead.
vm_kernel_pkg() {
	local flavor=$1 over suffix meta pkg
	if [[ $flavor == rt ]]; then
		over=${RANT_VM_KERNEL_RT:-} suffix=rt-amd64 meta=linux-image-rt-amd64
	else
		over=${RANT_VM_KERNEL_STD:-} suffix=amd64 meta=linux-image-amd64
	fi
	if [[ -n $over ]]; then
		printf '%s' "$over"
		return 0
	fi
	local re="^linux-image-6\.1\.0-[0-9]+-$suffix\$"
	pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '$1 == "Depends:" { print $2 }' | grep -E "$re" | head -n 1)
	if [[ -z $pkg ]]; then
		pkg=$(apt-cache search --names-only "$re" 2>/dev/null | awk '{ print $1 }' | sort -V | tail -n 1)
	fi
	[[ -n $pkg ]] && printf '%s' "$pkg"
}

# vm_ko_deps FILE.ko: the modules FILE depends on, one per line.
vm_ko_deps() {
	tr '\0' '\n' <"$1" | sed -n 's/^depends=//p' | tr ',' '\n' | sed '/^$/d'
}

# vm_ko_find TREE NAME: the .ko of module NAME (- and _ are the same).
vm_ko_find() {
	local alt=${2//-/_}
	find "$1" -name "$2.ko" -o -name "$alt.ko" -o -name "${2//_/-}.ko" | head -n 1
}

# vm_ko_order TREE NAME...: the modules to load for NAME..., dependencies
# first, each once, as paths relative to TREE.
declare -A VM_KO_SEEN=()
vm_ko_order() {
	local tree=$1 m f d
	shift
	for m in "$@"; do
		[[ -n ${VM_KO_SEEN[$m]:-} ]] && continue
		VM_KO_SEEN[$m]=1
		f=$(vm_ko_find "$tree" "$m")
		if [[ -z $f ]]; then
			echo "vm: module $m not in the kernel package" >&2
			return 1
		fi
		for d in $(vm_ko_deps "$f"); do
			vm_ko_order "$tree" "$d" || return 1
		done
		printf '%s\n' "${f#"$tree"/}"
	done
}

# vm_kernel FLAVOR: download and unpack FLAVOR's kernel into the cache
# (once per package version); sets VM_KDIR (vmlinuz, modules/, load-order,
# kver) and VM_KPKG.
vm_kernel() {
	local flavor=$1 cache pkg ver dir tmp deb kver tree tag='' old
	[[ $flavor == rt ]] && tag=rt-
	# the package names of this flavor (the ABI number varies)
	local re="^linux-image-6\.1\.0-[0-9]+-${tag}amd64_"
	cache=$(vm_cache_dir)
	pkg=$(vm_kernel_pkg "$flavor")
	if [[ -n $pkg ]]; then
		ver=$(apt-cache policy "$pkg" 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')
	fi
	if [[ -z $pkg || -z $ver || $ver == "(none)" ]]; then
		# No apt lists (apt-get update not run, or offline): the newest
		# kernel of this flavor already in the cache.
		dir=$(find "$cache/kernel" -mindepth 1 -maxdepth 1 -printf '%p\n' 2>/dev/null |
			grep -E "/${re#^}" | sort -V | tail -n 1)
		if [[ -z $dir || ! -e $dir/done ]]; then
			echo "vm: no Debian 6.1 $flavor kernel package known to apt and none cached (run apt-get update)" >&2
			return 1
		fi
		pkg=${dir##*/}
		ver=${pkg#*_}
		pkg=${pkg%%_*}
	else
		dir=$cache/kernel/${pkg}_$ver
	fi
	VM_KDIR=$dir
	# shellcheck disable=SC2034 # for the caller's messages
	VM_KPKG=${dir##*/}
	# "done" names the modules taken: another list unpacks the kept .deb again
	[[ -e $dir/done && $(cat "$dir/done") == "$VM_MODULES" ]] && return 0
	mkdir -p "$cache/deb" || return 1
	tmp=$(mktemp -d "$cache/unpack.XXXXXX") || return 1
	deb=$(find "$cache/deb" -name "${pkg}_${ver//:/%3a}_amd64.deb" | head -n 1)
	if [[ -z $deb ]]; then
		vm_log "downloading $pkg $ver"
		(cd "$cache/deb" && apt-get download "$pkg=$ver" >/dev/null 2>"$tmp/apt.err") || {
			echo "vm: apt-get download $pkg=$ver failed: $(tail -n 1 "$tmp/apt.err")" >&2
			rm -rf "$tmp"
			return 1
		}
		deb=$(find "$cache/deb" -name "${pkg}_*_amd64.deb" | sort -V | tail -n 1)
	fi
	vm_log "unpacking $(basename "$deb")"
	dpkg -x "$deb" "$tmp/root" || { rm -rf "$tmp"; return 1; }
	kver=$(basename "$(find "$tmp/root/lib/modules" -mindepth 1 -maxdepth 1 -type d | head -n 1)")
	tree=$tmp/root/lib/modules/$kver
	rm -rf "$dir"
	mkdir -p "$dir/modules"
	cp "$tmp/root/boot/vmlinuz-$kver" "$dir/vmlinuz" || { rm -rf "$tmp"; return 1; }
	cp "$tmp/root/boot/config-$kver" "$dir/config"
	VM_KO_SEEN=()
	# shellcheck disable=SC2086 # a list of module names
	vm_ko_order "$tree" $VM_MODULES >"$dir/load-order" || { rm -rf "$tmp"; return 1; }
	# shellcheck disable=SC2046 # one path a line, none with a space
	(cd "$tree" && cp --parents $(cat "$dir/load-order") "$dir/modules/") || { rm -rf "$tmp"; return 1; }
	printf '%s\n' "$kver" >"$dir/kver"
	rm -rf "$tmp"
	# Keep the .deb of this version only: an older one of this flavor (the
	# same name but for its ABI number) is not used again.
	find "$cache/deb" -name '*.deb' ! -name "${pkg}_*" -printf '%f\n' 2>/dev/null | grep -E "$re" |
		while read -r old; do rm -f "$cache/deb/$old"; done
	printf '%s\n' "$VM_MODULES" >"$dir/done"
}

# vm_copy_bin ROOT PROG: PROG and the shared libraries it loads, at the
# same paths under ROOT.
vm_copy_bin() {
	local root=$1 path lib
	path=$(command -v "$2") || { echo "vm: $2 not installed on this host" >&2; return 1; }
	path=$(readlink -f "$path")
	install -D -m 0755 "$path" "$root/usr/bin/$2"
	for lib in $(ldd "$path" 2>/dev/null | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }'); do
		[[ -e $root$lib ]] || install -D -m 0755 "$(readlink -f "$lib")" "$root$lib"
	done
}

# vm_host_key: the versions of the host packages the base initramfs takes
# its programs from, and of this builder.
vm_host_key() {
	{
		# shellcheck disable=SC2086 # a list of package names
		dpkg-query -W -f '${Package} ${Version}\n' $VM_HOST_PKGS 2>/dev/null
		cat "${BASH_SOURCE[0]}"
	} | md5sum | cut -c1-12
}

# vm_base FLAVOR: the cached base initramfs of FLAVOR's kernel (busybox,
# host tools, modules); sets VM_BASE.
vm_base() {
	local flavor=$1 key root a kver
	vm_kernel "$flavor" || return 1
	key=$(vm_host_key)
	VM_BASE=$VM_KDIR/base-$key.cpio
	[[ -s $VM_BASE ]] && return 0
	if ! busybox --list >/dev/null 2>&1; then
		echo "vm: busybox missing (apt-get install busybox-static)" >&2
		return 1
	fi
	root=$(mktemp -d "${TMPDIR:-/tmp}/rant-vm-root.XXXXXX") || return 1
	mkdir -p "$root"/{usr/bin,usr/lib,usr/lib64,dev,proc,sys,run,tmp,etc,root,var,mnt}
	ln -s usr/bin "$root/bin"
	ln -s usr/bin "$root/sbin"
	ln -s bin "$root/usr/sbin"
	ln -s usr/lib "$root/lib"
	ln -s usr/lib64 "$root/lib64"
	ln -s ../run "$root/var/run"
	for a in busybox $VM_TOOLS; do
		vm_copy_bin "$root" "$a" || { rm -rf "$root"; return 1; }
	done
	# busybox for every applet the host tools do not provide
	for a in $(busybox --list); do
		[[ -e $root/usr/bin/$a ]] || ln -s busybox "$root/usr/bin/$a"
	done
	kver=$(cat "$VM_KDIR/kver")
	mkdir -p "$root/lib/modules/$kver"
	cp -r "$VM_KDIR/modules/." "$root/lib/modules/$kver/"
	cp "$VM_KDIR/load-order" "$root/lib/modules/$kver/load-order"
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
	printf 'root:x:0:\n' >"$root/etc/group"
	printf 'ip 0 IP\nudp 17 UDP\ntcp 6 TCP\nicmp 1 ICMP\n' >"$root/etc/protocols"
	(cd "$root" && find . | sort | busybox cpio -o -H newc -R 0:0 2>/dev/null >"$VM_BASE.tmp") &&
		mv "$VM_BASE.tmp" "$VM_BASE"
	rm -rf "$root"
	[[ -s $VM_BASE ]]
}

# vm_overlay OUT FILE=PATH...: a cpio archive of what changes per run, each
# host FILE at guest PATH.
vm_overlay() {
	local out=$1 root spec
	shift
	root=$(mktemp -d "${TMPDIR:-/tmp}/rant-vm-run.XXXXXX") || return 1
	for spec in "$@"; do
		install -D "${spec%%=*}" "$root/${spec#*=}" || { rm -rf "$root"; return 1; }
	done
	(cd "$root" && find . | sort | busybox cpio -o -H newc -R 0:0 2>/dev/null >"$out")
	rm -rf "$root"
}
