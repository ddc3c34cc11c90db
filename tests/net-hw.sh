#!/bin/bash
# Integration tests of the hardware path on veth, where veth can show it:
# exact TX keys across failed sends, the path-MTU rule of --size, one-way
# delays on one clock, PTP-shaped probes.  veth has no NIC clock, so the
# stamps are the kernel's; what needs a PHC is covered by tests/unit.c.
#
#   sudo bash tests/net-hw.sh        (RANT=path overrides the binary)

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

need_root "hardware path on veth"
ns_setup || { not_ok "namespaces and veth"; finish; exit 1; }

PY_PRELUDE='
import json, sys
def ns(v):
    if v in ("", "-"):
        return None
    s, f = v.split(".")
    return int(s) * 1000000000 + int(f)
'

# --- sizes the wire can carry (veth MTU 1500: 1472 B over IPv4, 1452 B over IPv6)
reflector mtu-r --port 12402
SHARED_REFLECTOR=mtu-r
remit mtu-big --port 12402 --size 1473 --count 10
expect_rc "mtu: --size 1473 over IPv4" 2
check "mtu: the refusal names the MTU and the largest size" grep -q -- "--size: 1473 bytes exceed the path MTU 1500.*1472" "$WORK/mtu-big.err"
check "mtu: one line" test "$(wc -l <"$WORK/mtu-big.err")" = 1
remit mtu-6 --port 12402 --size 1453 --count 10 -a "$ADDR6_B"
expect_rc "mtu: --size 1453 over IPv6" 2
check "mtu: IPv6 names 1452" grep -q "1452" "$WORK/mtu-6.err"
remit mtu-frag --port 12402 --size 3000 --count 200 --allow-fragments --json "$WORK/mtu-frag.json"
expect_rc "mtu: --size 3000 --allow-fragments" 0
check "mtu: the report says the stamps are of the first fragment" grep -q "first fragment" "$WORK/mtu-frag.out"
expect_eq "mtu: JSON first_fragment_stamps" "$(json_get "$WORK/mtu-frag.json" path_mtu.first_fragment_stamps)" true
remit mtu-fit --port 12402 --size 1472 --count 200 --json "$WORK/mtu-fit.json"
expect_rc "mtu: --size 1472 fits" 0
expect_eq "mtu: JSON path_mtu.mtu" "$(json_get "$WORK/mtu-fit.json" path_mtu.mtu)" 1500
expect_eq "mtu: JSON max_payload" "$(json_get "$WORK/mtu-fit.json" path_mtu.max_payload)" 1472
kill "$REFLECTOR_PID" 2>/dev/null

# --- one-way delays on one clock (veth: both ends in one kernel)
reflector ow-r --once -s --port 12403
emit ow --port 12403 --count 2000 -w 20 -s -l "$WORK/ow.csv" --log-format csv --json "$WORK/ow.json"
expect_rc "one-way" 0
check "one-way: the report names the evidence" grep -q "^One-way delays: clocks agree: -i is a veth" "$WORK/ow.out"
py_checks "one-way" '
d = json.load(open(sys.argv[1]))
m = d["metrics"]
t("JSON metrics.forward and metrics.backward", "forward" in m and "backward" in m)
t("JSON one_way evidence veth, trusted", d["one_way"]["clock_evidence"] == "veth" and d["one_way"]["trusted"] is True, d["one_way"])
t("forward samples = rtt samples", m["forward"]["samples"] == m["rtt"]["samples"], (m["forward"]["samples"], m["rtt"]["samples"]))
t("min <= avg <= max", m["forward"]["min_ns"] <= m["forward"]["avg_ns"] <= m["forward"]["max_ns"])
neg, sum_bad, n = [], [], 0
for r in rows(sys.argv[2]):
    if r["status"] not in ("ok", "warmup") or r["forward_ns"] == "" or r["backward_ns"] == "":
        continue
    n += 1
    f, b, net = int(r["forward_ns"]), int(r["backward_ns"]), int(r["network_ns"])
    s = [ns(r[k]) for k in ("t1_ksw", "t2_ksw", "t3_ksw", "t4_ksw")]
    if f < 0 or b < 0:
        neg.append(r["seq"])
    if f + b != net or f != s[1] - s[0] or b != s[3] - s[2]:
        sum_bad.append(r["seq"])
t("every transaction of the log has both", n == 2020, n)
t("per transaction forward >= 0 and backward >= 0", not neg, neg[:5])
t("per transaction forward + backward = network exactly, each from its stamps", not sum_bad, sum_bad[:5])
' "$WORK/ow.json" "$WORK/ow.csv"
"$RANT" --analyze "$WORK/ow.csv" --json "$WORK/ow-a.json" >"$WORK/ow-a.out" 2>&1
expect_eq "one-way: --analyze gives the same forward samples" \
	"$(json_get "$WORK/ow-a.json" metrics.forward.samples)" "$(json_get "$WORK/ow.json" metrics.forward.samples)"
expect_eq "one-way: --analyze gives the same backward max" \
	"$(json_get "$WORK/ow-a.json" metrics.backward.max_ns)" "$(json_get "$WORK/ow.json" metrics.backward.max_ns)"
check "one-way: --analyze warns that a log does not record the clocks' evidence" grep -q "One-way delays: warning" "$WORK/ow-a.out"

# --- PTP-shaped probes: PTPv2 event messages on UDP 319, decoded as such by tcpdump
if command -v tcpdump >/dev/null; then
	in_b tcpdump -vv -n -l -i "$VETH_B" -c 4 udp port 319 >"$WORK/td.out" 2>"$WORK/td.err" &
	TD_PID=$!
	BG_PIDS+=("$TD_PID")
	wait_for 30 grep -q "listening" "$WORK/td.err" || true
fi
reflector ptp-r --ptp-probe --ptp-domain 99 --once -s
emit ptp --ptp-probe --ptp-domain 99 --count 1000 -w 10 -s --json "$WORK/ptp.json"
expect_rc "ptp" 0
py_checks "ptp" '
d = json.load(open(sys.argv[1]))
p, m = d["packets"], d["metrics"]
t("as complete as without: nothing lost or invalid", p["lost"] == 0 and p["invalid"] == 0 and p["sent"] == p["received"], p)
t("samples = received - warm-up", m["rtt"]["samples"] == p["received"] - p["warmup"], (m["rtt"]["samples"], p))
t("the server stamps came back", m.get("response", {}).get("samples") == m["rtt"]["samples"])
t("JSON ptp_probe port 319, domain 99", d["ptp_probe"] == {"port": 319, "domain": 99, "header_bytes": 44}, d["ptp_probe"])
' "$WORK/ptp.json"
check "ptp: the report says what the packets are" grep -q "^PTP probes: .*UDP 319.*domain 99" "$WORK/ptp.out"
if [ -n "${TD_PID:-}" ]; then
	wait_for 30 not_running "$TD_PID"
	kill "$TD_PID" 2>/dev/null
	check "ptp: tcpdump -vv decodes a Sync to port 319 in domain 99" \
		grep -q "\.319 > .*\.319: .*PTPv2.*msg type : sync msg.*domain : 99" "$WORK/td.out"
	check "ptp: and the pong as a Delay_Req" grep -q "PTPv2.*msg type : delay req msg.*domain : 99" "$WORK/td.out"
	check "ptp: sequenceId follows rant's sequence number" grep -q "seq id : 1," "$WORK/td.out"
else
	skip "ptp: tcpdump not installed"
fi
# port 319 taken (as by a ptp4l): exit 2 naming the conflict, on both ends
in_b python3 -c 'import socket,time; s=socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.bind(("::", 319)); time.sleep(30)' &
HOLD=$!
BG_PIDS+=("$HOLD")
wait_for 30 udp_listening "$NS_B" 319
in_b "$RANT" -i "$VETH_B" --ptp-probe --once >"$WORK/ptp-busy.out" 2>"$WORK/ptp-busy.err"
expect_eq "ptp: port 319 busy on the reflector: exit 2" "$?" 2
check "ptp: the line names port 319 and ptp4l" grep -q "UDP port 319.*in use.*ptp4l" "$WORK/ptp-busy.err"
kill "$HOLD" 2>/dev/null
in_a python3 -c 'import socket,time; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("0.0.0.0", 319)); time.sleep(30)' &
HOLD=$!
BG_PIDS+=("$HOLD")
wait_for 30 udp_listening "$NS_A" 319
emit ptp-busy-c --ptp-probe --count 10
expect_rc "ptp: port 319 busy on the client" 2
check "ptp: the client line names the conflict" grep -q "UDP port 319.*in use" "$WORK/ptp-busy-c.err"
kill "$HOLD" 2>/dev/null
emit ptp-port --ptp-probe --port 12345 --count 10
expect_rc "ptp: --port other than 319" 2
emit ptp-mtu --ptp-probe --size 1429 --count 10
expect_rc "ptp: --size 1429 + 44 B of PTP over the MTU" 2

# --- exact TX keys: sends fail mid-run, no later stamp lands on another packet
# no_routes: sends NS_A refused for want of a route (Ip OutNoRoutes)
# shellcheck disable=SC2016 # an awk program
no_routes() {
	ip netns exec "$NS_A" awk '/^Ip:/ { if (!h) { for (i = 1; i <= NF; i++) c[$i] = i; h = 1 } else print $c["OutNoRoutes"] }' /proc/net/snmp
}
no_routes_reach() { [ "$(no_routes)" -ge "$1" ]; }
# nft_dropped NS: datagrams the rule of nft_drop has dropped in NS
nft_dropped() {
	ip netns exec "$1" nft list chain inet rantkeys out 2>/dev/null | awk '/packets/ { for (i = 1; i < NF; i++) if ($i == "packets") print $(i + 1) }'
}
nft_dropped_reach() { [ "$(nft_dropped "$1")" -ge "$2" ] 2>/dev/null; }
# nft_drop NS MATCH: every datagram NS sends that MATCHes is dropped by
# netfilter, after it was built: its send fails with EPERM
nft_drop() {
	ip netns exec "$1" nft add table inet rantkeys &&
		ip netns exec "$1" nft add chain inet rantkeys out '{ type filter hook output priority 0; }' &&
		ip netns exec "$1" nft add rule inet rantkeys out "$2" counter drop
}

# keys_across NAME PORT HOW: a client pinging every 2 ms with -s and a csv
# log; once it runs (100 pongs), sends fail until 50 have (HOW: "route", the
# client's link down: ENETUNREACH, before its datagram is built, a route of
# type prohibit does not apply to a bound socket; "nft", netfilter drops the
# client's pings: EPERM, after the datagram took its OPT_ID key; "nft-r",
# the same for the reflector's pongs); then 200 pongs more, and SIGINT.
# Every later stamp must be its own packet's, and none may go missing.
# The client's options after HOW.
keys_across() {
	local name=$1 port=$2 how=$3 base
	shift 3
	reflector "$name-r" --once -s --port "$port" --json "$WORK/$name-r.json"
	emit_bg "$name" --port "$port" --interval 2000 -d 600 -s -l "$WORK/$name.csv" --log-format csv \
		--json "$WORK/$name.json" "$@"
	udp_wait "$NS_A" InDatagrams 100
	case $how in
	route)
		base=$(no_routes)
		ip -n "$NS_A" link set "$VETH_A" down
		wait_for 30 no_routes_reach $((base + 50))
		ip -n "$NS_A" link set "$VETH_A" up
		wait_for 30 link_up "$NS_A" "$VETH_A"
		;;
	nft)
		nft_drop "$NS_A" "udp dport $port" || not_ok "$name: an nft rule in the client's namespace"
		wait_for 30 nft_dropped_reach "$NS_A" 50
		ip netns exec "$NS_A" nft delete table inet rantkeys
		;;
	nft-r)
		nft_drop "$NS_B" "udp sport $port" || not_ok "$name: an nft rule in the reflector's namespace"
		wait_for 30 nft_dropped_reach "$NS_B" 50
		ip netns exec "$NS_B" nft delete table inet rantkeys
		;;
	esac
	udp_wait "$NS_A" InDatagrams 200
	kill -INT "$EMIT_PID"
	wait_for 30 not_running "$EMIT_PID"
	wait "$EMIT_PID"
	EMIT_RC=$?
	expect_rc "$name" 0
	wait_for 30 gone "$REFLECTOR_PID"
	stop_reflector
	py_checks "$name" '
d = json.load(open(sys.argv[1]))
r = json.load(open(sys.argv[3]))
p = d["packets"]
side = r if sys.argv[4] == "nft-r" else d
t("sends failed mid-run", side["packets"]["send_errors"] > 0, side["packets"]["send_errors"])
t("no TX stamp unmatched (client)", p["unmatched_tx_stamps"] == 0, p["unmatched_tx_stamps"])
t("no TX stamp unmatched (reflector)", r["packets"]["unmatched_tx_stamps"] == 0, r["packets"]["unmatched_tx_stamps"])
t("no stamp missing (client)", not any(d["missing_stamps"].values()), d["missing_stamps"])
bad = []
n = 0
for row in rows(sys.argv[2]):
    if row["status"] != "ok":
        continue
    v = [ns(row[k]) for k in ("t1_sw", "t1_ksw", "t2_ksw", "t3_ksw", "t4_ksw", "t4_sw")]
    if None in v:
        continue
    n += 1
    # one clock on veth: a stamp of another packet breaks this order
    if not (v[0] <= v[1] <= v[2] <= v[3] <= v[4] <= v[5]):
        bad.append(row["seq"])
t("transactions with all stamps after the failures", n > 100, n)
t("every TX stamp is of its own packet: T1_SW <= T1 <= T2 <= T3 <= T4 <= T4_SW", not bad, bad[:5])
' "$WORK/$name.json" "$WORK/$name.csv" "$WORK/$name-r.json" "$how"
}
# the link goes down with a pong in flight now and then: that pong is lost,
# and with it the echo of the T3 before it, which the T3 history (--size
# 168) brings again with the next pong
keys_across keys 12401 route --size 168
if command -v nft >/dev/null && ip netns exec "$NS_A" nft list tables >/dev/null 2>&1; then
	keys_across keys-nft 12403 nft
	# a failed pong takes the echo of the T3 before it along: the T3
	# history (--size 168: the last four) brings it with the next pong
	keys_across keys-nft-r 12404 nft-r --size 168
else
	skip "keys: sends dropped by netfilter (nft not installed or not usable here)"
fi


finish
