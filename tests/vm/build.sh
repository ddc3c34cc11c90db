#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The guest lab's builder (sourced by tests/vm/run.sh, never run): Debian
# kernels (bookworm's 6.1 and its security suite's 6.12, stock and
# PREEMPT_RT) taken with `apt-get download` and `dpkg -x`, never installed
# on this host, with their headers for the lab's own modules
# (tests/vm/mod/, built against the unpacked headers, loaded only in the
# guests); QEMU from bookworm-backports, unpacked the same way, for the
# NIC models bookworm's QEMU 7.2 lacks (igb); and an initramfs made of
# busybox-static, the host's own iproute2, ethtool, linuxptp, nftables, bash
# and util-linux tools with their shared libraries, the kernel's modules the
# tests load, and rant built -static.
#
# The cache (VM_CACHE) keeps, per kernel package and version, the kernel
# image, its headers, the module closure the guest loads (per module
# list), the lab's modules built for it (per source hash) and, per kernel
# and host-tool versions, the base initramfs; the backported QEMU per
# version; what changes from run to run (rant, config.sh, the guest's
# scripts, the lab's modules) is a second cpio archive appended to the
# base (the kernel unpacks concatenated archives in order:
# Documentation/driver-api/early-userspace/buffer-format.rst).

# Modules the guest loads, in an order that satisfies their dependencies
# once each one's own (from its .modinfo "depends=") is put first.
# crc32c_generic: libcrc32c (nf_tables) asks the crypto API for crc32c at
# load, which is not one of its "depends=".  igb: the 82576 of the newer
# QEMU's boots (ptp, pps_core, i2c-algo-bit and dca before it, from its
# .modinfo, where the kernel has them as modules; ptp is also what the
# lab's own PHC modules need loaded before them).
# veth, sch_mqprio, sch_taprio, sch_etf: the TSN section's multi-queue pair
# and its gate schedule and launch-time qdiscs (tests/vm/guest-tsn.sh).
# sch_tbf: the qdisc that holds pongs in tests/vm/guest-why.sh.
VM_MODULES="e1000e igb 8021q bonding macvlan nvme crc32c_generic nf_tables nft_numgen
veth sch_mqprio sch_taprio sch_etf sch_tbf"

# Host programs copied into the guest with their shared libraries; busybox
# gives the rest.  ip: busybox's own has no `ip netns`.
VM_TOOLS="bash ip tc ethtool hwstamp_ctl phc2sys phc_ctl ptp4l nft chrt nsenter unshare setsid
taskset stat ss timeout"
# ... and those the guest does without (its checks then skip): isochron, the
# TSN section's reference (Debian's isochron package)
VM_TOOLS_OPTIONAL="isochron"

# Debian packages those come from, whose versions key the base initramfs.
VM_HOST_PKGS="busybox-static iproute2 ethtool linuxptp nftables bash util-linux coreutils isochron"

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

# The guest kernels, by flavor: bookworm's own 6.1 and the 6.12 its
# security suite carries, each stock and PREEMPT_RT.
# shellcheck disable=SC2034 # for tests/vm/run.sh
VM_FLAVORS="std rt std612 rt612"

# vm_series FLAVOR: the kernel series of FLAVOR (6.1 or 6.12)
vm_series() {
	case $1 in
	*612) printf '6.12' ;;
	*) printf '6.1' ;;
	esac
}

# vm_kernel_re FLAVOR: an extended regex of the names FLAVOR's kernel
# packages take (6.1's carry an ABI number, 6.12's the upstream release)
vm_kernel_re() {
	local tag=''
	[[ $1 == rt* ]] && tag=rt-
	if [[ $(vm_series "$1") == 6.12 ]]; then
		printf 'linux-image-6\\.12\\.[0-9]+\\+deb[0-9]+-%samd64' "$tag"
	else
		printf 'linux-image-6\\.1\\.0-[0-9]+-%samd64' "$tag"
	fi
}

# vm_kernel_pkg FLAVOR: the Debian package of FLAVOR's newest kernel apt
# knows (through its meta-package); RANT_VM_KERNEL_STD, _RT, _STD612 and
# _RT612 name one instead.
vm_kernel_pkg() {
	local flavor=$1 over meta pkg re
	case $flavor in
	std) over=${RANT_VM_KERNEL_STD:-} meta=linux-image-amd64 ;;
	rt) over=${RANT_VM_KERNEL_RT:-} meta=linux-image-rt-amd64 ;;
	std612) over=${RANT_VM_KERNEL_STD612:-} meta=linux-image-6.12-amd64 ;;
	rt612) over=${RANT_VM_KERNEL_RT612:-} meta=linux-image-6.12-rt-amd64 ;;
	*) return 1 ;;
	esac
	if [[ -n $over ]]; then
		printf '%s' "$over"
		return 0
	fi
	re="^$(vm_kernel_re "$flavor")\$"
	pkg=$(apt-cache depends "$meta" 2>/dev/null | awk '$1 == "Depends:" { print $2 }' | grep -E "$re" | head -n 1)
	if [[ -z $pkg ]]; then
		pkg=$(apt-cache search --names-only "$re" 2>/dev/null | awk '{ print $1 }' | sort -V | tail -n 1)
	fi
	[[ -n $pkg ]] && printf '%s' "$pkg"
}

# vm_ko_read FILE: a module's bytes (6.12's are xz-compressed)
vm_ko_read() {
	if [[ $1 == *.xz ]]; then
		xz -dc "$1"
	else
		cat "$1"
	fi
}

# vm_ko_deps FILE.ko: the modules FILE depends on, one per line.
vm_ko_deps() {
	vm_ko_read "$1" | tr '\0' '\n' | sed -n 's/^depends=//p' | tr ',' '\n' | sed '/^$/d'
}

# vm_ko_find TREE NAME: the .ko (or .ko.xz) of module NAME (- and _ are
# the same).
vm_ko_find() {
	local n a b
	n=$2 a=${2//-/_} b=${2//_/-}
	find "$1" \( -name "$n.ko" -o -name "$a.ko" -o -name "$b.ko" -o -name "$n.ko.xz" -o -name "$a.ko.xz" \
		-o -name "$b.ko.xz" \) | head -n 1
}

# vm_ko_builtin TREE NAME: NAME is built into the kernel (6.12 has ptp
# and pps_core so), nothing to load
vm_ko_builtin() {
	grep -Eq "/(${2//-/_}|${2//_/-})\.ko\$" "$1/modules.builtin" 2>/dev/null
}

# vm_ko_order TREE NAME...: the modules to load for NAME..., dependencies
# first, each once, as paths relative to TREE (as found: .ko or .ko.xz).
declare -A VM_KO_SEEN=()
vm_ko_order() {
	local tree=$1 m f d
	shift
	for m in "$@"; do
		[[ -n ${VM_KO_SEEN[$m]:-} ]] && continue
		VM_KO_SEEN[$m]=1
		f=$(vm_ko_find "$tree" "$m")
		if [[ -z $f ]]; then
			vm_ko_builtin "$tree" "$m" && continue
			echo "vm: module $m not in the kernel package" >&2
			return 1
		fi
		for d in $(vm_ko_deps "$f"); do
			vm_ko_order "$tree" "$d" || return 1
		done
		printf '%s\n' "${f#"$tree"/}"
	done
}

# vm_download DIR PKG[=VERSION]...: the packages' .debs into DIR (kept
# there: a later run unpacks them again without the network)
vm_download() {
	local dir=$1 err
	shift
	mkdir -p "$dir" || return 1
	err=$(cd "$dir" && apt-get download "$@" 2>&1 >/dev/null) || {
		echo "vm: apt-get download $* failed: $(tail -n 1 <<<"$err")" >&2
		return 1
	}
}

# vm_deb DIR PKG [VERSION]: the path of PKG's .deb in DIR (of VERSION, or
# the newest there)
vm_deb() {
	if [[ -n ${3:-} ]]; then
		find "$1" -name "${2}_${3//:/%3a}_*.deb" | head -n 1
	else
		find "$1" -name "${2}_*.deb" | sort -V | tail -n 1
	fi
}

# vm_kernel FLAVOR: download and unpack FLAVOR's kernel into the cache
# (once per package version, and once per module list); sets VM_KDIR
# (vmlinuz, config, kver), VM_KMODS (modules/ and load-order of
# VM_MODULES) and VM_KPKG.
vm_kernel() {
	local flavor=$1 cache pkg ver='' dir tmp deb kver tree re old p mkey
	re=$(vm_kernel_re "$flavor")
	cache=$(vm_cache_dir)
	pkg=$(vm_kernel_pkg "$flavor")
	if [[ -n $pkg ]]; then
		ver=$(apt-cache policy "$pkg" 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')
	fi
	if [[ -z $pkg || -z $ver || $ver == "(none)" ]]; then
		# No apt lists (apt-get update not run, or offline): the newest
		# kernel of this flavor already in the cache.
		dir=$(find "$cache/kernel" -mindepth 1 -maxdepth 1 -printf '%p\n' 2>/dev/null |
			grep -E "/${re}_" | sort -V | tail -n 1)
		if [[ -z $dir || ! -s $dir/kver ]]; then
			echo "vm: no Debian $(vm_series "$flavor") $flavor kernel package known to apt and none cached (run apt-get update)" >&2
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
	# the module closure is kept per module list, beside the image: a
	# checkout with another list (another branch, an older one) shares
	# the image and leaves this one's modules alone
	mkey=$(printf '%s' "$VM_MODULES" | md5sum | cut -c1-8)
	VM_KMODS=$dir/modules-$mkey
	[[ -s $dir/kver && -s $dir/vmlinuz && -s $VM_KMODS/load-order ]] && return 0
	tmp=$(mktemp -d "$cache/unpack.XXXXXX") || return 1
	deb=$(vm_deb "$cache/deb" "$pkg" "$ver")
	if [[ -z $deb ]]; then
		vm_log "downloading $pkg $ver"
		vm_download "$cache/deb" "$pkg=$ver" || { rm -rf "$tmp"; return 1; }
		deb=$(vm_deb "$cache/deb" "$pkg")
	fi
	vm_log "unpacking $(basename "$deb")"
	dpkg -x "$deb" "$tmp/root" || { rm -rf "$tmp"; return 1; }
	kver=$(basename "$(find "$tmp/root/lib/modules" -mindepth 1 -maxdepth 1 -type d | head -n 1)")
	tree=$tmp/root/lib/modules/$kver
	if [[ ! -s $dir/kver ]]; then
		mkdir -p "$dir"
		cp "$tmp/root/boot/vmlinuz-$kver" "$dir/vmlinuz" || { rm -rf "$tmp"; return 1; }
		cp "$tmp/root/boot/config-$kver" "$dir/config"
		printf '%s\n' "$kver" >"$dir/kver"
	fi
	VM_KO_SEEN=()
	mkdir -p "$tmp/m/modules"
	# shellcheck disable=SC2086 # a list of module names
	vm_ko_order "$tree" $VM_MODULES >"$tmp/order" || { rm -rf "$tmp"; return 1; }
	# busybox's insmod takes them uncompressed
	while read -r p; do
		mkdir -p "$tmp/m/modules/${p%/*}"
		vm_ko_read "$tree/$p" >"$tmp/m/modules/${p%.xz}" || { rm -rf "$tmp"; return 1; }
		printf '%s\n' "${p%.xz}" >>"$tmp/m/load-order"
	done <"$tmp/order"
	rm -rf "$VM_KMODS"
	mv "$tmp/m" "$VM_KMODS"
	rm -rf "$tmp"
	# Keep the .deb of this version only: an older one of this flavor (the
	# same name but for its ABI number or release) is not used again.
	find "$cache/deb" -name '*.deb' ! -name "${pkg}_*" -printf '%f\n' 2>/dev/null | grep -E "^${re}_" |
		while read -r old; do rm -f "$cache/deb/$old"; done
	return 0
}

# vm_headers: after vm_kernel, its headers (linux-headers-KVER, the
# -common tree it includes and the kbuild tools), unpacked into the cache
# once; sets VM_HDIR, the tree `make -C` takes.
vm_headers() {
	local cache kver ver dir tmp p deps deb
	cache=$(vm_cache_dir)
	kver=$(cat "$VM_KDIR/kver") || return 1
	ver=${VM_KPKG#*_}
	dir=$cache/headers/$kver
	VM_HDIR=$dir/root/usr/src/linux-headers-$kver
	# done holds the package's version: a Debian revision that keeps KVER unpacks anew
	[[ -e $dir/done && $(cat "$dir/done") == "$ver" ]] && return 0
	# what linux-headers-KVER depends on of its own source package: the
	# -common(-rt) tree (the same version) and linux-kbuild-SERIES
	deps=$(apt-cache show "linux-headers-$kver=$ver" 2>/dev/null | sed -n 's/^Depends: //p' | head -n 1 |
		tr ',' '\n' | sed 's/^ *//; s/[ |].*//' | grep -E '^linux-(headers|kbuild)-')
	if [[ -z $deps ]]; then
		echo "vm: linux-headers-$kver $ver not known to apt (run apt-get update)" >&2
		return 1
	fi
	tmp=$(mktemp -d "$cache/unpack.XXXXXX") || return 1
	# shellcheck disable=SC2086 # a list of package names
	vm_download "$tmp/deb" "linux-headers-$kver=$ver" $deps || { rm -rf "$tmp"; return 1; }
	vm_log "unpacking linux-headers-$kver and ${deps//$'\n'/ }"
	for deb in "$tmp"/deb/*.deb; do
		dpkg -x "$deb" "$tmp/root" || { rm -rf "$tmp"; return 1; }
	done
	p=$tmp/root/usr/src/linux-headers-$kver/Makefile
	# Its one line includes the -common tree by its installed path
	# (/usr/src/...): here, the unpacked one.  The rest links relatively.
	grep -q '^include /usr/src/' "$p" || { echo "vm: $p: no include of /usr/src/" >&2; rm -rf "$tmp"; return 1; }
	rm -rf "$dir"
	mkdir -p "$dir"
	mv "$tmp/root" "$dir/root"
	rm -rf "$tmp"
	sed -i "s#^include /usr/src/#include $dir/root/usr/src/#" "$VM_HDIR/Makefile"
	echo "$ver" >"$dir/done"
}

# vm_modules SRC: builds every module directory SRC/NAME (NAME.c and a
# Kbuild file `obj-m := NAME.o`) for the booted kernel's headers
# (vm_headers), each .ko cached by kernel and by a hash of its directory,
# the compiler and the kernel package; VM_MOD_SPECS gets "KO=rant/mod/NAME.ko" for
# vm_overlay.
VM_MOD_SPECS=()
vm_modules() {
	local src=$1 cache kver d name key ko tmp
	VM_MOD_SPECS=()
	[[ -d $src ]] || return 0
	cache=$(vm_cache_dir)
	kver=$(cat "$VM_KDIR/kver") || return 1
	for d in "$src"/*/; do
		d=${d%/}
		name=${d##*/}
		[[ -e $d/Kbuild ]] || continue
		# the module's files, the compiler and the kernel package (its version too)
		key=$( (cd "$d" && find . -type f | sort | xargs md5sum; gcc-12 --version 2>&1 | head -n 1
			echo "$VM_KPKG") | md5sum | cut -c1-12)
		ko=$cache/mod/$kver/$name-$key.ko
		if [[ ! -s $ko ]]; then
			vm_headers || return 1
			command -v gcc-12 >/dev/null || { echo "vm: gcc-12, the guest kernels' compiler, not installed" >&2; return 1; }
			tmp=$(mktemp -d "${TMPDIR:-/tmp}/rant-vm-mod.XXXXXX") || return 1
			cp -r "$d/." "$tmp/"
			# CONFIG_DEBUG_INFO_BTF_MODULES=: no BTF section, which would
			# need pahole; the module loads the same without it
			if ! make -C "$VM_HDIR" M="$tmp" CONFIG_DEBUG_INFO_BTF_MODULES= modules >"$tmp/make.log" 2>&1 ||
				[[ ! -s $tmp/$name.ko ]]; then
				echo "vm: module $name did not build for $kver:" >&2
				grep -E 'error|Error' "$tmp/make.log" | head -n 5 >&2
				rm -rf "$tmp"
				return 1
			fi
			mkdir -p "${ko%/*}"
			cp "$tmp/$name.ko" "$ko.tmp" && mv "$ko.tmp" "$ko"
			rm -rf "$tmp"
			vm_log "built $name.ko for $kver"
		fi
		VM_MOD_SPECS+=("$ko=rant/mod/$name.ko")
	done
	return 0
}

# vm_apt_entry CODENAME: "URI SIGNED-BY" of the machine's own Debian apt
# entry whose suites include CODENAME (deb822 sources first, then the
# one-line lists); SIGNED-BY may be empty
vm_apt_entry() {
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -r $f ]] || continue
		awk -v want="$1" '
			function flush() {
				if (!found && types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " want " ") && uris != "") {
					split(uris, u, " "); print u[1], signed; found = 1
				}
				types = suites = uris = signed = ""
			}
			/^[ \t]*#/ { next }
			/^[ \t]*$/ { flush(); next }
			{ k = tolower($1); $1 = ""; sub(/^ +/, "") }
			k == "types:" { types = $0 }
			k == "suites:" { suites = $0 }
			k == "uris:" { uris = $0 }
			k == "signed-by:" { signed = $0 }
			END { flush() }' "$f" | head -n 1 | grep . && return 0
	done
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[[ -r $f ]] || continue
		awk -v want="$1" '
			$1 != "deb" { next }
			{ opts = ""; i = 2 }
			$2 ~ /^\[/ { while (i <= NF) { opts = opts " " $i; if ($i ~ /\]$/) { i++; break } i++ } }
			$(i + 1) == want {
				s = ""; if (match(opts, /signed-by=[^ \]]*/)) s = substr(opts, RSTART + 10, RLENGTH - 10)
				print $i, s; exit
			}' "$f" | grep . && return 0
	done
	return 1
}

# vm_qemu_new: QEMU from the backports suite of this Debian release
# (igb's model came in QEMU 8; bookworm has 7.2), through a private apt
# configuration kept in the cache (its own sources file, derived from the
# machine's Debian entry, and its own lists) that leaves the machine's
# apt alone; the packages unpacked with dpkg -x, never installed.  Sets
# VM_QNEW (the binary), VM_QNEW_DATA (its firmware directory, for -L) and
# VM_QNEW_VER.
vm_qemu_new() {
	local cache dir codename entry uri signed ver root tmp deb out
	local -a apt
	cache=$(vm_cache_dir)
	dir=$cache/qemu-backports
	mkdir -p "$dir/lists/partial" || return 1
	codename=$(. /etc/os-release 2>/dev/null && printf '%s' "${VERSION_CODENAME:-}")
	if [[ -n $codename ]] && entry=$(vm_apt_entry "$codename"); then
		read -r uri signed <<<"$entry"
		printf 'deb %s%s %s-backports main\n' "${signed:+[signed-by=$signed] }" "$uri" "$codename" >"$dir/sources.list.new"
		if cmp -s "$dir/sources.list.new" "$dir/sources.list"; then
			rm -f "$dir/sources.list.new"
		else
			mv "$dir/sources.list.new" "$dir/sources.list"
			rm -f "$dir/lists/"*_Packages* "$dir/lists/"*Release*
		fi
	fi
	apt=(-o "Dir::Etc::SourceList=$dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$dir/lists" -o Dir::State::status=/dev/null)
	if [[ -e $dir/sources.list ]] &&
		[[ -z $(find "$dir/lists" -maxdepth 1 -name '*_Packages*' -mmin -1440 2>/dev/null) ]]; then
		apt-get "${apt[@]}" -qq update >/dev/null 2>"$dir/update.err" ||
			vm_log "apt-get update of ${codename}-backports failed: $(tail -n 1 "$dir/update.err")"
	fi
	ver=$(apt-cache "${apt[@]}" policy qemu-system-x86 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')
	if [[ -z $ver || $ver == "(none)" ]]; then
		# offline, or no Debian entry: the newest one unpacked before
		root=$(find "$dir" -mindepth 2 -maxdepth 2 -name 'done' -printf '%h\n' 2>/dev/null | sort -V | tail -n 1)
		if [[ -z $root ]]; then
			echo "vm: qemu-system-x86 of ${codename:-?}-backports not known (no Debian apt entry for ${codename:-?}, or offline) and none cached" >&2
			return 1
		fi
	else
		root=$dir/qemu-${ver//:/%3a}
	fi
	if [[ ! -e $root/done ]]; then
		tmp=$(mktemp -d "$dir/unpack.XXXXXX") || return 1
		# seabios too: QEMU 10 wants a newer BIOS than bookworm's
		# shellcheck disable=SC2016
		(cd "$dir" && apt-get "${apt[@]}" -qq download qemu-system-x86 qemu-system-data seabios \
			>"$tmp/apt.err" 2>&1) || {
			echo "vm: apt-get download of QEMU from backports failed: $(grep -v unsandboxed "$tmp/apt.err" | tail -n 1)" >&2
			rm -rf "$tmp"
			return 1
		}
		for p in qemu-system-x86 qemu-system-data seabios; do
			deb=$(find "$dir" -maxdepth 1 -name "${p}_*.deb" | sort -V | tail -n 1)
			dpkg -x "$deb" "$tmp/root" || { rm -rf "$tmp"; return 1; }
		done
		# every library it links is bookworm's (ldd says which are not)
		out=$(ldd "$tmp/root/usr/bin/qemu-system-x86_64" 2>&1 | grep -i 'not found')
		if [[ -n $out ]]; then
			echo "vm: the backported QEMU needs what this host lacks: ${out//$'\n'/ }" >&2
			rm -rf "$tmp"
			return 1
		fi
		rm -rf "$root"
		mv "$tmp/root" "$root"
		rm -rf "$tmp"
		# the .debs are not needed again once unpacked
		rm -f "$dir"/*.deb
		: >"$root/done"
	fi
	VM_QNEW=$root/usr/bin/qemu-system-x86_64
	# shellcheck disable=SC2034 # for tests/vm/run.sh
	VM_QNEW_DATA=$root/usr/share/qemu
	VM_QNEW_VER=$("$VM_QNEW" --version | sed -n '1s/.*version \([0-9.]*\).*/\1/p')
	if [[ -z $VM_QNEW_VER ]]; then
		echo "vm: $VM_QNEW does not run" >&2
		return 1
	fi
	if ((${VM_QNEW_VER%%.*} < 8)); then
		echo "vm: the backports' QEMU is $VM_QNEW_VER, which has no igb (8.0 added it)" >&2
		return 1
	fi
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
	VM_BASE=$VM_KMODS/base-$key.cpio
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
	for a in $VM_TOOLS_OPTIONAL; do
		command -v "$a" >/dev/null && { vm_copy_bin "$root" "$a" || { rm -rf "$root"; return 1; }; }
	done
	# busybox for every applet the host tools do not provide
	for a in $(busybox --list); do
		[[ -e $root/usr/bin/$a ]] || ln -s busybox "$root/usr/bin/$a"
	done
	kver=$(cat "$VM_KDIR/kver")
	mkdir -p "$root/lib/modules/$kver"
	cp -r "$VM_KMODS/modules/." "$root/lib/modules/$kver/"
	cp "$VM_KMODS/load-order" "$root/lib/modules/$kver/load-order"
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
