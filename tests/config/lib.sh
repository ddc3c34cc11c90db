#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Helpers shared by the config.sh tests, the fake sysfs builder and the stub
# tools.  Sourced, not run.

# kv_get FILE KEY: value of "KEY VALUE" line in FILE.
kv_get() {
	local k v
	[[ -f $1 ]] || return 1
	while read -r k v; do
		if [[ $k == "$2" ]]; then
			printf '%s\n' "$v"
			return 0
		fi
	done <"$1"
	return 1
}

# kv_set FILE KEY VALUE: replace or add "KEY VALUE" in FILE.
kv_set() {
	local file=$1 key=$2 val=$3 k v found=0 tmp
	tmp=$(mktemp)
	if [[ -f $file ]]; then
		while read -r k v; do
			if [[ $k == "$key" ]]; then
				v=$val
				found=1
			fi
			printf '%s %s\n' "$k" "$v"
		done <"$file" >"$tmp"
	fi
	((found)) || printf '%s %s\n' "$key" "$val" >>"$tmp"
	cat "$tmp" >"$file"
	rm -f "$tmp"
}

# write_stat PROCDIR PID COMM POLICY PRIO: a fake /proc/PID/{comm,stat}
# whose rt_priority (field 40) and policy (field 41) are what chrt reads.
write_stat() {
	local dir=$1/$2 i
	local -a f=()
	mkdir -p "$dir"
	printf '%s\n' "$3" >"$dir/comm"
	for ((i = 3; i <= 52; i++)); do f[i]=0; done
	f[3]=S
	f[40]=$5
	f[41]=$4
	printf '%s (%s) %s\n' "$2" "$3" "${f[*]:3}" >"$dir/stat"
}

# verdicts FILE: "verdict|step" per step of a config.sh report, a dry run's
# "would apply" read as "applied", so that a dry run and an apply compare.
verdicts() {
	awk '/^  [a-z]/ && substr($0, 15, 1) != "$" {
		v = substr($0, 3, 11); id = substr($0, 15, 26)
		sub(/ +$/, "", v); sub(/ +$/, "", id)
		if (v == "would apply") v = "applied"
		print v "|" id }' "$1"
}

# same_verdicts DRY APPLY: the dry run predicted every step's verdict; the
# difference, if any, on stderr as TAP comments.
same_verdicts() {
	local d a
	d=$(verdicts "$1")
	a=$(verdicts "$2")
	[[ -n $d && $d == "$a" ]] && return 0
	diff <(echo "$d") <(echo "$a") | sed 's/^/#   /' >&2
	return 1
}

# unplug_hook CALL: the stubs' way to have an interface disappear halfway
# through an apply.  $FAKE_STATE/unplug-at holds "IFACE PATTERN": the first
# stub call whose logged line (CALL) matches the glob PATTERN removes IFACE
# before it runs, as a driver unbind or a hot unplug does: its netdev in
# sysfs, its IRQs and their threads, its per-interface sysctls and the
# stubs' state for it.  That call then fails as it would.  (SYSFS and
# PROCFS are the fake tree's, as config.sh was given them.)
unplug_hook() {
	local at=$FAKE_STATE/unplug-at iface pat dev irq c
	[[ -f $at ]] || return 0
	read -r iface pat <"$at"
	# shellcheck disable=SC2053 # a glob on purpose
	[[ $1 == $pat ]] || return 0
	rm -f "$at"
	dev=$(readlink -f "$SYSFS/class/net/$iface/device")
	for irq in "$dev"/msi_irqs/*; do
		[[ -e $irq ]] || continue
		irq=${irq##*/}
		rm -rf "${PROCFS:?}/irq/$irq"
		for c in "$PROCFS"/[0-9]*/comm; do
			[[ $(cat "$c") == "irq/$irq-"* ]] && rm -rf "${c%/comm}"
		done
	done
	rm -rf "$dev/msi_irqs" "$dev/net/$iface" "$SYSFS/class/net/$iface" \
		"$PROCFS/sys/net/ipv6/conf/$iface" "$FAKE_STATE/ip/$iface" "$FAKE_STATE/ethtool/$iface"
}
