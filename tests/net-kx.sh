#!/bin/bash
# The reflector's kernel stamps on the wire, end to end on veth.  veth has
# no NIC clock, so no real reflector here has hardware stamps: a reflector
# written in python from the wire-protocol table (docs/protocol.md) plays one that
# has (flag "server stamps are hardware", the kernel-stamp block after the
# header where the ping has room), with fixed gaps between its stamps.  The
# real client must then show exactly those gaps as the server's NIC/kernel
# split in its JSON and report, and with pings too short for the block say
# so and count every pong.
#
#   sudo bash tests/net-kx.sh        (RANT=path overrides the binary)

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

need_root "the kernel-stamp block on veth"
ns_setup || { not_ok "namespaces and veth"; finish; exit 1; }

PORT=12411
# The fake: answers pings of one session; T2 wire = now, then T2_K +100,
# T2_SW +500, T3_SW +1500, T3_K +1900, T3 wire +2500 ns, T3 echoed at once
# (with its T3_K); FIN_ACK with the count; the block only where it fits.
FAKE='
import socket, struct, sys, time
import rantwire as W
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.settimeout(20)
got = 0
while True:
    d, a = s.recvfrom(70000)
    if len(d) < W.HDR:
        continue
    magic, version, typ, flags, session, _, seq = struct.unpack_from(W.SHORT, d)
    if magic != W.MAGIC or version != W.VERSION:
        continue
    warm = flags & W.PF_WARMUP
    if typ == W.FIN:
        out = struct.pack(W.SHORT, W.MAGIC, W.VERSION, W.FIN_ACK, 0, session, 0, got).ljust(W.HDR, b"\0") + d[W.HDR:]
        s.sendto(out[:len(d)], a)
        break
    if typ != W.PING:
        continue
    got += 1
    t2 = time.time_ns()
    t = [t2, t2 + 500, t2 + 1500, t2 + 2500]
    room = len(d) >= W.HDR + W.KX_LEN
    flags = warm | W.PF_SRV_HW | W.PF_T2W | W.PF_T2SW | W.PF_T3SW | W.PF_T3W | (W.PF_KSTAMPS if room else 0)
    hdr = struct.pack(W.HEADER, W.MAGIC, W.VERSION, W.PONG, flags, session, 0, seq, t[0], t[1], t[2], t[3], seq)
    out = hdr + (struct.pack("!QQ", t2 + 100, t2 + 1900) if room else b"") + bytes(len(d))
    s.sendto(out[:len(d)], a)
'

fake() {
	in_b python3 -c "$FAKE" "$PORT" >"$WORK/fake-$1.out" 2>&1 &
	FAKE_PID=$!
	BG_PIDS+=("$FAKE_PID")
	wait_for 30 udp_listening "$NS_B" "$PORT"
}

PY_PRELUDE='
import json, sys
def t(name, cond, detail=""):
    print(("ok\t" if cond else "not ok\t") + name + ("" if cond or not detail else " (" + str(detail) + ")"))
'

# --- pings with room (--size 80): the split arrives, exactly the fake's gaps
# (--timeout 10000 here and below: a python fake the host keeps waiting a
# second still answers within it; a fake in time makes it cost nothing)
fake room
emit kx --port "$PORT" --count 300 -w 5 -s --size 80 --timeout 10000 --json "$WORK/kx.json"
expect_rc "kx: --size 80" 0
wait_for 30 not_running "$FAKE_PID"
py_checks "kx" '
d = json.load(open(sys.argv[1]))
m, p = d["metrics"], d["packets"]
n = m["rtt"]["samples"]
t("all answered", p["received"] == p["sent"] and n == 300, (p["sent"], p["received"], n))
t("server wire stamps taken as hardware", d["timestamps"]["server_wire"] == "hardware", d["timestamps"])
for k, v in (("server_rx_nic", 100), ("server_rx_wakeup", 400), ("server_tx_kernel", 400), ("server_tx_nic", 600)):
    x = m.get(k, {})
    t("metrics.%s: every transaction, exactly %d ns" % (k, v),
      x.get("samples") == n and x.get("min_ns") == v and x.get("max_ns") == v, x and (x.get("samples"), x.get("min_ns"), x.get("max_ns")))
t("the parts add up to the server stacks", m["server_rx_stack"]["min_ns"] == 500 and m["server_tx_stack"]["max_ns"] == 1000,
  (m["server_rx_stack"]["min_ns"], m["server_tx_stack"]["max_ns"]))
t("nothing counted as unfit", d["kernel_stamps_unfit"] == 0, d["kernel_stamps_unfit"])
t("no stamp refused", d["rejected"]["implausible_stamps"] == 0 and d["rejected"]["wrong_length"] == 0, d["rejected"])
' "$WORK/kx.json"
check "kx: the report lists the server's NIC/kernel split" grep -q "server rx NIC+driver (T2_K-T2)" "$WORK/kx.out"

# --- the default 64 bytes: no room, every pong counted, the report names --size 80
fake short
emit kx64 --port "$PORT" --count 100 -s --timeout 10000 --json "$WORK/kx64.json"
expect_rc "kx: --size 64" 0
wait_for 30 not_running "$FAKE_PID"
py_checks "kx64" '
d = json.load(open(sys.argv[1]))
m = d["metrics"]
t("kernel_stamps_unfit = pongs", d["kernel_stamps_unfit"] == d["packets"]["received"] == 100, d["kernel_stamps_unfit"])
t("no server split without the block", "server_rx_nic" not in m and "server_tx_kernel" not in m, sorted(m))
t("the server stacks are still there", m["server_rx_stack"]["samples"] == 100)
' "$WORK/kx64.json"
check "kx: the report says why and names --size 80" grep -q "missing from 100 pongs too short for its kernel stamps: use --size 80" "$WORK/kx64.out"

# --- one-way evidence: a veth counts only when the FIN_ACK names this kernel
# A reflector without NIC stamps, in python: pongs with T2 and T3 wire
# stamps read from CLOCK_REALTIME around its recvfrom and sendto (so both
# one-way delays are >= 0 on this host), T3 echoed at once; its FIN_ACK
# carries the 40-byte block with the boot id argv[2] says: "same" (this
# kernel's), "other" (another kernel's), "none" (no block: an earlier rant).
BOOT_FAKE='
import socket, struct, sys, time
import rantwire as W
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.settimeout(20)
boot = int(open("/proc/sys/kernel/random/boot_id").read().replace("-", "")[:16], 16)
boot = {"same": boot, "other": boot ^ 0x5a5a, "none": None}[sys.argv[2]]
got = 0
while True:
    d, a = s.recvfrom(70000)
    t2 = time.time_ns()
    if len(d) < W.HDR:
        continue
    magic, version, typ, flags, session, _, seq = struct.unpack_from(W.SHORT, d)
    if magic != W.MAGIC or version != W.VERSION:
        continue
    if typ == W.FIN:
        # the kernel-stamp block: T2_K, T3_K, the PHC part zero, then the boot id
        block = b"" if boot is None else bytes(W.KX_PHC_LEN - 8) + struct.pack("!Q", boot)
        flags = 0 if boot is None else W.PF_KSTAMPS
        out = struct.pack(W.SHORT, W.MAGIC, W.VERSION, W.FIN_ACK, flags, session, 0, got).ljust(W.HDR, b"\0") + block
        s.sendto(out.ljust(len(d), b"\0")[:len(d)], a)
        break
    if typ != W.PING:
        continue
    got += 1
    warm = flags & W.PF_WARMUP
    t3 = time.time_ns()
    out = struct.pack(W.HEADER, W.MAGIC, W.VERSION, W.PONG, warm | W.PF_T2W | W.PF_T3W, session, 0, seq, t2, 0, 0, t3, seq)
    s.sendto(out.ljust(len(d), b"\0"), a)
'

boot_fake() {
	in_b python3 -c "$BOOT_FAKE" "$PORT" "$1" >"$WORK/boot-$1.out" 2>&1 &
	FAKE_PID=$!
	BG_PIDS+=("$FAKE_PID")
	wait_for 5 udp_listening "$NS_B" "$PORT"
}

for b in other none same; do
	boot_fake "$b"
	emit "boot-$b" --port "$PORT" --count 200 --json "$WORK/boot-$b.json"
	expect_rc "boot id $b" 0
	wait_for 5 not_running "$FAKE_PID"
done
py_checks "boot id" '
d = {b: json.load(open(sys.argv[i + 1])) for i, b in enumerate(("other", "none", "same"))}
for b in d:
    t("%s: every pong answered, both directions measured" % b,
      d[b]["packets"]["received"] == 200 and d[b]["metrics"]["forward"]["samples"] == 200 and
      d[b]["metrics"]["backward"]["samples"] == 200 and d[b]["metrics"]["forward"]["min_ns"] >= 0 and
      d[b]["metrics"]["backward"]["min_ns"] >= 0, d[b]["packets"])
o, n, s = d["other"]["one_way"], d["none"]["one_way"], d["same"]["one_way"]
t("another kernel: -i a veth, yet not trusted, evidence none", o["trusted"] is False and o["clock_evidence"] == "none", o)
t("another kernel: the note says the reflector runs in another kernel", "-i is a veth, but the reflector runs in another kernel" in o["note"], o["note"])
t("another kernel: no asymmetry claimed", d["other"]["clock"]["asymmetry_ns"] is None, d["other"]["clock"])
t("no boot id (an earlier rant): not trusted, says it carries none", n["trusted"] is False and "carries no boot id" in n["note"], n)
t("this kernel: trusted, evidence veth", s["trusted"] is True and s["clock_evidence"] == "veth" and "boot id is this kernel" in s["note"], s)
t("this kernel: the offset is the asymmetry", d["same"]["clock"]["asymmetry_ns"] == d["same"]["clock"]["offset_ns"], d["same"]["clock"])
' "$WORK/boot-other.json" "$WORK/boot-none.json" "$WORK/boot-same.json"
check "boot id: the report of another kernel says so" grep -q "^One-way delays: warning: nothing shows the two clocks agree (-i is a veth, but the reflector runs in another kernel" "$WORK/boot-other.out"
check "boot id: another kernel: a clock offset, not an asymmetry" grep -q "^Clock: server - client offset" "$WORK/boot-other.out"

# --- the real reflector in the other namespace: one kernel, trusted
reflector boot-real --once --port "$PORT" -q
emit boot-real2 --port "$PORT" --count 200 --json "$WORK/boot-real.json"
expect_rc "real reflector" 0
py_checks "real reflector" '
d = json.load(open(sys.argv[1]))
t("one kernel: trusted, evidence veth", d["one_way"]["trusted"] is True and d["one_way"]["clock_evidence"] == "veth", d["one_way"])
t("asymmetry_ns is the offset formula", d["clock"]["asymmetry_ns"] == d["clock"]["offset_ns"] is not None, d["clock"])
' "$WORK/boot-real.json"
check "real reflector: the report names the path asymmetry" grep -q "^Path asymmetry: (forward - backward) / 2 = " "$WORK/boot-real2.out"

finish
