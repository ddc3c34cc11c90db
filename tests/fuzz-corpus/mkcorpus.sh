#!/bin/bash
# Regenerate the fuzz seed corpus from real rant traffic (root; throwaway
# namespaces joined by veth, as the network tests use).  The seeds are
# committed; run this only when the wire format, the log format or the
# options change, then commit what it wrote.
#   tests/fuzz-corpus/mkcorpus.sh
cd "$(dirname "$0")/../.." || exit 2
# shellcheck source=tests/lib.sh
. tests/lib.sh
C=tests/fuzz-corpus
D=tests/net-abuse.d

# proto: every message type as it crosses the wire (relay in NS_B keeps copies)
proto_seeds() {
	in_b "$RANT" --once -q -s >/dev/null 2>&1 &
	BG_PIDS+=($!)
	wait_for 5 udp_listening "$NS_B" 12345 || return 1
	in_b python3 "$D/relay.py" 12346 "$ADDR_B" 12345 "$C/proto" 4 &
	BG_PIDS+=($!)
	wait_for 5 udp_listening "$NS_B" 12346 || return 1
	in_a "$RANT" -q -a "$ADDR_B" --port 12346 -w 1 --count 3 --interval 1000 >/dev/null
	wait
	# a pong from a reflector without -s: no app-stamp fields
	in_b "$RANT" --once -q >/dev/null 2>&1 &
	wait_for 5 udp_listening "$NS_B" 12345 || return 1
	in_b python3 "$D/relay.py" 12346 "$ADDR_B" 12345 "$WORK" 2 &
	wait_for 5 udp_listening "$NS_B" 12346 || return 1
	in_a "$RANT" -q -a "$ADDR_B" --port 12346 --count 2 >/dev/null
	wait
	cp "$WORK/pong" "$C/proto/pong-no-sw"
}

# log: text and csv logs of both sides
log_seeds() {
	local fmt
	for fmt in text csv; do
		in_b "$RANT" --once -q -s -l "$C/log/reflect-$fmt" --log-format "$fmt" >/dev/null 2>&1 &
		wait_for 5 udp_listening "$NS_B" 12345 || return 1
		in_a "$RANT" -q -s -a "$ADDR_B" -w 2 --count 6 --interval 1000 \
			-l "$C/log/emit-$fmt" --log-format "$fmt" >/dev/null
		wait
	done
	in_b "$RANT" --once -q >/dev/null 2>&1 &
	wait_for 5 udp_listening "$NS_B" 12345 || return 1
	in_a "$RANT" -q -a "$ADDR_B" --count 4 -l "$C/log/emit-text-no-sw" >/dev/null
	wait
}

# opts: option lines, arguments separated by NUL as the harness splits them
opts_seeds() {
	local i=0 line
	while IFS= read -r line; do
		# shellcheck disable=SC2086 # word splitting is the point
		printf '%s\0' $line | head -c -1 >"$C/opts/line$i"
		i=$((i + 1))
	done <<-'LINES'
		-a 10.0.0.2 --count 1000 --interval 100 -w 10 -H -s --json - -l /tmp/x.log --log-format csv
		-i lo --port 4000 --once -q --timestamps sw -t 50 -C -b 0.5 -o 2000
		--analyze a.log b.log --top 5 -H --json out.json
		-a ::1 -d 1.5 --size 1500 --timeout 20 --spin -p 50 -P -B 64 --priority 3 --tos 184
		-a host -T -S --trace-instance rant -L 100 --log-records 1000 -G -v -l log
		-Hsq -w5 --count=7 -a10.0.0.1
		-h
		-V
	LINES
}

main() {
	need_root "fuzz corpus from live traffic"
	ns_setup || { not_ok "namespaces"; finish; exit 1; }
	mkdir -p "$C"/proto "$C"/cmsg "$C"/opts "$C"/log
	check "proto seeds" proto_seeds
	check "cmsg seeds" in_a python3 "$D/cmsg.py" "$C/cmsg"
	check "log seeds" log_seeds
	check "opts seeds" opts_seeds
	ls -l "$C"/*/
	finish
}

main "$@"
