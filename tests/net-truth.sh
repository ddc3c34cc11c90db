#!/bin/bash
# rant against the ground truth: a relay of our own (tests/net-truth.d/relay,
# built by make) in a namespace between the client's and the reflector's
# holds every ping and every pong a known, different time, drops,
# duplicates, reorders and delays past the timeout some of them by rule,
# and logs what each packet really spent there from its own sockets' kernel
# stamps.  Every transaction's rtt, network, response, forward and backward
# must lie within that transaction's veth path of the relay's truth, with a
# median error of at most 25 us (see net-truth.d/truth.py for why), and
# every counter, live (client and reflector) and --analyze, must be the
# relay's.  A lost pong must cost no other transaction its response (the
# T3 history): pings of 128 bytes have room for two earlier echoes.
#
#   sudo bash tests/net-truth.sh        (RANT=path overrides the binary)

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

D="$(cd "$(dirname "$0")" && pwd)/net-truth.d"
RELAY="$D/relay"
NS_M="rantM$$"
VETH_MA="vmA$$"
VETH_MB="vmB$$"
PORT=12422
# 3000 pings 600 us apart (1.8 s); faults by rule up to seq 2000, so that a
# pong held 400 ms (the timeout is 200 ms: late) still arrives in the run
COUNT=3000
TIMEOUT_MS=200
LAST=2000
RULES=(--rule "ping,drop,97,13" --rule "pong,drop,89,29" --rule "pong,dup,83,41"
	--rule "ping,dup,79,7" --rule "pong,hold,101,53,400000000")

need_root "the relay between three namespaces"

truth_cleanup() {
	cleanup
	ip netns del "$NS_M" 2>/dev/null
}
trap truth_cleanup EXIT

if [ ! -x "$RELAY" ] || [ "$RELAY.c" -nt "$RELAY" ]; then
	make -s -C "$D/../.." tests/net-truth.d/relay >/dev/null 2>&1
fi
if [ ! -x "$RELAY" ]; then
	not_ok "the relay is built (make tests/net-truth.d/relay)"
	finish
	exit 1
fi

# client (NS_A) -- relay (NS_M) -- reflector (NS_B); static neighbours, so
# that no ARP is in flight when the run starts
ns3_setup() {
	local n mac_a mac_b
	for n in "$NS_A" "$NS_M" "$NS_B"; do
		ip netns add "$n" && ip -n "$n" link set lo up || return 1
	done
	ip link add "$VETH_A" netns "$NS_A" type veth peer name "$VETH_MA" netns "$NS_M" || return 1
	ip link add "$VETH_B" netns "$NS_B" type veth peer name "$VETH_MB" netns "$NS_M" || return 1
	ip netns exec "$NS_M" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	ip netns exec "$NS_M" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	ip -n "$NS_A" addr add "$ADDR_A/24" dev "$VETH_A"
	ip -n "$NS_B" addr add "$ADDR_B/24" dev "$VETH_B"
	ip -n "$NS_A" link set "$VETH_A" up
	ip -n "$NS_B" link set "$VETH_B" up
	ip -n "$NS_M" link set "$VETH_MA" up
	ip -n "$NS_M" link set "$VETH_MB" up
	mac_a=$(ip -n "$NS_A" -br link show "$VETH_A" | awk '{ print $3 }')
	mac_b=$(ip -n "$NS_B" -br link show "$VETH_B" | awk '{ print $3 }')
	ip -n "$NS_A" neigh replace "$ADDR_B" lladdr "$mac_b" dev "$VETH_A" nud permanent &&
		ip -n "$NS_B" neigh replace "$ADDR_A" lladdr "$mac_a" dev "$VETH_B" nud permanent || return 1
	wait_for 30 link_up "$NS_A" "$VETH_A" && wait_for 30 link_up "$NS_B" "$VETH_B" &&
		wait_for 30 link_up "$NS_M" "$VETH_MA" && wait_for 30 link_up "$NS_M" "$VETH_MB"
}

ns3_setup || { not_ok "three namespaces and two veth pairs"; finish; exit 1; }

ip netns exec "$NS_M" "$RELAY" "$VETH_MA" "$VETH_MB" "$PORT" "$WORK/relay.log" "$WORK/relay.ready" \
	--last "$LAST" "${RULES[@]}" 2>"$WORK/relay.err" &
RELAY_PID=$!
BG_PIDS+=("$RELAY_PID")
if ! wait_for 30 test -e "$WORK/relay.ready"; then
	not_ok "the relay starts"
	sed 's/^/#   /' "$WORK/relay.err"
	finish
	exit 1
fi
reflector_or "truth" refl --port "$PORT" --once -q --json "$WORK/refl.json" -l "$WORK/refl.csv" \
	--log-format csv || { finish; exit 1; }
emit cli --port "$PORT" --count "$COUNT" --interval 600 --timeout "$TIMEOUT_MS" --size 128 \
	--json "$WORK/cli.json" -l "$WORK/cli.csv" --log-format csv
wait_reflector
kill -TERM "$RELAY_PID"
wait_exit "$RELAY_PID" 10
expect_eq "truth: the relay wrote its log" "$WAIT_RC" 0
# the relay's log is the truth only if the relay lost nothing before reading
# it: frames its own sockets dropped (its receive queues overflowed on a
# starved host) would be counted against rant, and may cost the client its
# session (exit 1), so its exit status too is judged only when there were none
drops=$(sed -n 's/^relay: dropped \([0-9]*\)$/\1/p' "$WORK/relay.err")
expect_eq "truth: the relay counted its own drops" "${drops:+counted}" counted
if [ "${drops:-0}" -gt 0 ]; then
	skip "truth: the comparisons: the relay's own sockets dropped $drops frames" \
		"(PACKET_STATISTICS), so its log is not the truth"
	sed 's/^/#   /' "$WORK/relay.err"
	finish
	exit 0
fi
expect_rc "truth: client" 0
expect_eq "truth: reflector ends with the session" "$REFLECTOR_RC" 0
analyze ana "$WORK/cli.csv" "$WORK/refl.csv" --json "$WORK/ana.json"
expect_eq "truth: --analyze of both logs" "$ANALYZE_RC" 0

out=$(python3 -c "$PY_LIB$(cat "$D/truth.py")" "$WORK/relay.log" "$WORK/cli.csv" "$WORK/refl.csv" \
	"$WORK/cli.json" "$WORK/refl.json" "$WORK/ana.json" $((TIMEOUT_MS * 1000000)) 2>&1)
rc=$?
while IFS= read -r line; do
	case $line in
	"ok	"*) ok "truth: ${line#ok	}" ;;
	"not ok	"*) not_ok "truth: ${line#not ok	}" ;;
	"ANALYZE_UNKNOWABLE ") ok "truth: --analyze shows nothing a log cannot know as a wrong number" ;;
	"ANALYZE_UNKNOWABLE "*)
		# a log holds no duplicates: unknown is right, 0 is not; loss by
		# direction, where the joined logs give it, must be the relay's
		not_ok "truth: --analyze prints a number a log cannot know: ${line#ANALYZE_UNKNOWABLE }"
		;;
	"") ;;
	*) echo "# $line" ;;
	esac
done <<<"$out"
[ "$rc" -eq 0 ] || not_ok "truth: python checks failed to run (exit $rc)"

finish
