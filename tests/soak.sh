#!/bin/bash
# make soak: a long back-to-back run with ring logs; memory must stay flat.
#
# A reflector (CPU 1) and a client (CPU 0) in two namespaces joined by a veth
# pair run for SOAK_SECONDS (default 600) at full rate (--interval 0), both
# with app stamps and a ring log of the last 100000 transactions
# (-l FILE --log-records 100000).  The RSS (VmRSS) of both is sampled every
# 5 s and printed as a table; at the end, first/last/max for each.  A side
# passes when its last RSS is within 5% (or 1 MiB, whichever is larger) of
# its RSS at 30 s.  The final reports of both are printed, then
# "N passed, N failed".
#
#   sudo make soak                     sudo SOAK_SECONDS=60 tests/soak.sh

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${SOAK_SECONDS:=600}"
RECORDS=100000
STEP=5
BASE_T=30
CPU_SERVER=1
CPU_CLIENT=0

if ! [[ $SOAK_SECONDS =~ ^[1-9][0-9]*$ ]]; then
	echo "soak.sh: SOAK_SECONDS must be a positive whole number of seconds (got '$SOAK_SECONDS')" >&2
	exit 1
fi
need_setup soak.sh soak

# rows_within FILE MAX: FILE is a log with a 2-line header and 1..MAX rows
rows_within() {
	local n
	n=$(($(wc -l <"$1") - 2))
	[ "$n" -gt 0 ] && [ "$n" -le "$2" ]
}

# rss_of PID: VmRSS in KiB of a live process; fails once it is gone
rss_of() {
	awk '/^VmRSS:/ { print $2; found = 1 } END { exit !found }' "/proc/$1/status" 2>/dev/null
}

# now_us: CLOCK_REALTIME in microseconds (bash 5's EPOCHREALTIME)
now_us() {
	local t=${EPOCHREALTIME/[.,]/}
	echo "$((10#$t))"
}

ip netns exec "$NS_B" taskset -c "$CPU_SERVER" "$RANT" -i "$VETH_B" -s --once \
	-l "$WORK/reflect.log" --log-records "$RECORDS" --json "$WORK/reflect.json" \
	>"$WORK/reflect.out" 2>"$WORK/reflect.err" &
RPID=$!
BG_PIDS+=("$RPID")
if ! wait_for 5 udp_listening "$NS_B" 12345; then
	not_ok "reflector starts: $(head -n 3 "$WORK/reflect.err")"
	finish
	exit 1
fi
ip netns exec "$NS_A" taskset -c "$CPU_CLIENT" "$RANT" -i "$VETH_A" -a "$ADDR_B" -s -H -d "$SOAK_SECONDS" \
	-l "$WORK/emit.log" --log-records "$RECORDS" --json "$WORK/emit.json" \
	>"$WORK/emit.out" 2>"$WORK/emit.err" &
CPID=$!
BG_PIDS+=("$CPID")

echo "# soak: ${SOAK_SECONDS}s back-to-back, ring logs of $RECORDS records, client on CPU $CPU_CLIENT, reflector on CPU $CPU_SERVER"
echo "# RSS (VmRSS, KiB) every ${STEP}s"
printf '%8s %14s %14s\n' "time_s" "client_kib" "reflector_kib"
T_S=()
C_RSS=()
R_RSS=()
start=$(now_us)
k=0
while true; do
	c=$(rss_of "$CPID") || break
	r=$(rss_of "$RPID") || r=-
	printf '%8d %14s %14s\n' $((k * STEP)) "$c" "$r"
	T_S+=($((k * STEP)))
	C_RSS+=("$c")
	R_RSS+=("$r")
	k=$((k + 1))
	# sleep to the next absolute tick, in small steps so that the end of the run is noticed
	while kill -0 "$CPID" 2>/dev/null; do
		left=$((start + k * STEP * 1000000 - $(now_us)))
		[ "$left" -le 0 ] && break
		[ "$left" -gt 500000 ] && left=500000
		sleep "$(printf '%d.%06d' $((left / 1000000)) $((left % 1000000)))"
	done
done
wait "$CPID"
EMIT_RC=$?
# the reflector ends its session on the client's FIN and exits (--once)
if ! wait_for 5 gone "$RPID"; then
	echo "# the reflector did not exit 5 s after the client: stopping it"
	kill -TERM "$RPID"
fi
wait "$RPID"
REFLECT_RC=$?

# summary PID-LABEL ARRAY-NAME: first/last/max and the stability verdict
summary() {
	local label=$1
	local -n a=$2
	local first last max=0 base="" base_t="" v i tol
	first=${a[0]}
	last=${a[${#a[@]} - 1]}
	for i in "${!a[@]}"; do
		v=${a[$i]}
		[ "$v" = - ] && continue
		[ "$v" -gt "$max" ] && max=$v
		if [ -z "$base" ] && [ "${T_S[$i]}" -ge "$BASE_T" ]; then
			base=$v
			base_t=${T_S[$i]}
		fi
	done
	if [ -z "$base" ]; then
		base=$first
		base_t=0
		echo "# $label: run shorter than ${BASE_T}s: comparing with the first sample"
	fi
	tol=$((base / 20))
	[ "$tol" -lt 1024 ] && tol=1024
	printf '%-10s first %8s KiB  last %8s KiB  max %8s KiB  at %ss %8s KiB  (tolerance %s KiB)\n' \
		"$label" "$first" "$last" "$max" "$base_t" "$base" "$tol"
	if [ "$last" != - ] && [ $((last > base ? last - base : base - last)) -le "$tol" ]; then
		ok "$label RSS stable: last $last KiB vs $base KiB at ${base_t}s (within 5% or 1 MiB)"
	else
		not_ok "$label RSS not stable: last $last KiB vs $base KiB at ${base_t}s (more than 5% and 1 MiB apart)"
	fi
}

echo
echo "## Final report: client (emit)"
cat "$WORK/emit.out"
echo
echo "## Final report: reflector"
cat "$WORK/reflect.out"
echo
echo "## Memory"
if [ ${#C_RSS[@]} -eq 0 ]; then
	not_ok "RSS sampled (the client ended before the first sample: $(tail -n 3 "$WORK/emit.err"))"
else
	summary client C_RSS
	summary reflector R_RSS
fi
expect_eq "client exit status" "$EMIT_RC" 0
expect_eq "reflector exit status" "$REFLECT_RC" 0
if [ "$EMIT_RC" -ne 0 ] || [ "$REFLECT_RC" -ne 0 ]; then
	tail -n 5 "$WORK/emit.err" "$WORK/reflect.err"
fi
samples=$(json_get "$WORK/emit.json" metrics.rtt.samples 2>/dev/null)
check "client measured transactions ($samples)" [ "${samples:-0}" -gt 0 ]
for side in emit reflect; do
	rec=$(json_get "$WORK/$side.json" log.records 2>/dev/null)
	dropped=$(json_get "$WORK/$side.json" log.dropped 2>/dev/null)
	echo "# $side log: $(wc -l <"$WORK/$side.log" 2>/dev/null) lines written, $rec records kept, $dropped dropped by the ring"
	check "$side ring log holds 1 to $RECORDS transactions" rows_within "$WORK/$side.log" "$RECORDS"
done
finish
