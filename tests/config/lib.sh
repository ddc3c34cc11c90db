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
