#!/usr/bin/env python3
"""Forged rant datagrams for tests/net-guard.sh.

    forge.py reflector ADDR PORT READYFILE MODE
        a fake reflector that answers pings in one impossible way (MODE),
        answers a FIN with a FIN_ACK and exits; prints what it did as JSON.
    forge.py ping DST PORT [--src ADDR:PORT] [--from-port P] [--session ID]
                 [--seq N] [--seq-step [K]] [--idle MS] [--type T] [--flags F] [--count N]
                 [--size N] [--vary-session] [--junk]
        pings (or FINs, --type 3) from a UDP socket (bound to port P with
        --from-port), or with --src from any address and port on a raw IPv4
        socket (port 0 included); --junk sends datagrams that are no rant
        packet.
    forge.py sniff IFACE PORT OUT [--count N] [--timeout S]
        captures the UDP datagrams to PORT on IFACE (AF_PACKET, IPv4) into
        OUT, one JSON line each (source address and port, payload in hex).
    forge.py replay FILE DST PORT [--index I] [--src ADDR:PORT] [--count N]
                 [--cycle] [--gap S]
        sends captured datagram I of FILE again, unmodified: from its own
        source address and port (raw socket), or from --src; with --cycle
        the datagrams I, I+1, ... in turn (round the file), S seconds apart.

Header layout: magic, version, type, flags, session, idle_ms, seq, then the
echoed stamps t2 wire, t2 app, t3 app, t3 wire and its seq (docs/protocol.md).
"""
import argparse
import json
import os
import select
import socket
import struct
import sys
import time

import rantwire as W   # rant's wire format, made from rant.c (build/rantwire.py)
from rantwire import PING, PONG, FIN, FIN_ACK, BUSY, PF_WARMUP, PF_T2W, PF_T2SW, PF_T3SW, PF_T3W, PF_TAG


def header(kind, session, seq, flags=0, idle_ms=0, t2w=0, t2sw=0, t3sw=0, t3w=0, t3seq=0, size=W.HDR):
    h = struct.pack(W.HEADER, W.MAGIC, W.VERSION, kind, flags, session, idle_ms, seq,
                    t2w, t2sw, t3sw, t3w, t3seq)
    return h.ljust(size, b"\0")


def fake_reflector(a):
    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((a.addr, a.port))
    open(a.ready, "w").close()
    did = {"pings": 0, "pongs": 0, "forged": 0}
    deadline = time.monotonic() + 60
    idle_until = time.monotonic() + 10      # gone 2 s after the last datagram
    now_ns = time.time_ns
    while time.monotonic() < min(deadline, idle_until):
        r, _, _ = select.select([s], [], [], 0.2)
        if not r:
            continue
        idle_until = time.monotonic() + 2
        data, peer = s.recvfrom(65536)
        if len(data) < W.HDR:
            continue
        magic, version, ptype, flags, session, _, seq = struct.unpack_from(W.SHORT, data)
        if magic != W.MAGIC:
            continue
        n = len(data)
        if a.go and not os.path.exists(a.go):
            did["held"] = did.get("held", 0) + 1
            continue
        if a.answers is not None and did["forged"] + did["pongs"] >= a.answers:
            did["unanswered"] = did.get("unanswered", 0) + 1
            continue
        if ptype == FIN:
            s.sendto(header(FIN_ACK, session, did["pongs"], size=n), peer)
            break
        if ptype != PING:
            continue
        did["pings"] += 1
        w = flags & PF_WARMUP
        m = a.mode
        if m == "absurd":        # echoed stamps 1 and 2^63, and T3 app before T2 app
            s.sendto(header(PONG, session, seq, w | PF_T2W | PF_T3W | PF_T2SW | PF_T3SW, t2w=1,
                            t2sw=now_ns(), t3sw=now_ns() - 10**9, t3w=1 << 63, t3seq=seq, size=n), peer)
            did["forged"] += 1
        elif m == "short":       # a header-sized pong to a longer ping
            s.sendto(header(PONG, session, seq, w, size=W.HDR), peer)
            did["forged"] += 1
        elif m == "replay":      # every pong, and the pong of seq 0 again
            s.sendto(header(PONG, session, seq, w, size=n), peer)
            did["pongs"] += 1
            if seq >= 300:
                s.sendto(header(PONG, session, 0, 0, size=n), peer)
                did["forged"] += 1
        elif m == "finack":      # every pong, then an unasked FIN_ACK echoing a T3 stamp
            t = now_ns()
            s.sendto(header(PONG, session, seq, w | PF_T2W, t2w=t, size=n), peer)
            did["pongs"] += 1
            if seq >= 1:
                s.sendto(header(FIN_ACK, session, 0, PF_T3W, t3w=t, t3seq=seq - 1, size=n), peer)
                did["forged"] += 1
        elif m == "busy":        # another session runs here
            s.sendto(header(BUSY, session, seq, size=W.HDR), peer)
            did["forged"] += 1
        elif m == "busy_late":   # good pongs, then a BUSY: the client already has its answers
            s.sendto(header(PONG, session, seq, w, size=n), peer)
            did["pongs"] += 1
            if seq == 5:
                s.sendto(header(BUSY, session, seq, size=W.HDR), peer)
                did["forged"] += 1
        elif m == "untagged":    # good pongs without the key's tag
            s.sendto(header(PONG, session, seq, w, size=n), peer)
            did["forged"] += 1
        elif m == "wrongtag":    # the tag flag and 8 bytes that are not the tag
            d = bytearray(header(PONG, session, seq, w | PF_TAG, size=n))
            d[W.HDR:W.HDR + W.TAG_LEN] = os.urandom(W.TAG_LEN)
            s.sendto(bytes(d), peer)
            did["forged"] += 1
    print(json.dumps(did))
    return 0


def checksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def raw_send(raw, saddr, sport, dst, dport, d):
    """One UDP datagram from any IPv4 address and port (checksum included)."""
    u = struct.pack("!HHHH", sport, dport, 8 + len(d), 0)
    pseudo = socket.inet_aton(saddr) + socket.inet_aton(dst) + struct.pack("!BBH", 0, 17, 8 + len(d))
    c = checksum(pseudo + u + d) or 0xFFFF
    u = struct.pack("!HHHH", sport, dport, 8 + len(d), c)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(d), 0, 0x4000, 64, 17, 0,
                     socket.inet_aton(saddr), socket.inet_aton(dst))
    raw.sendto(ip + u + d, (dst, 0))


def pinger(a):
    raw = None
    if a.src:
        saddr, sport = a.src.rsplit(":", 1)
        raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    else:
        fam = socket.AF_INET6 if ":" in a.dst else socket.AF_INET
        udp = socket.socket(fam, socket.SOCK_DGRAM)
        if a.from_port:
            udp.bind(("::" if fam == socket.AF_INET6 else "0.0.0.0", a.from_port))
    sent = 0
    for i in range(a.count):
        sess = a.session + i if a.vary_session else a.session
        d = header(a.type, sess, a.seq + i * a.seq_step, flags=a.flags, idle_ms=a.idle,
                   size=a.size)
        if a.junk:
            d = b"junk" + os.urandom(max(a.size - 4, 0))
        if raw:
            raw_send(raw, saddr, int(sport), a.dst, a.port, d)
        else:
            udp.sendto(d, (a.dst, a.port))
        sent += 1
        if a.gap:
            time.sleep(a.gap)
    print(json.dumps({"sent": sent}))
    return 0


def sniff(a):
    """Capture datagrams to a UDP port as they pass IFACE (IPv4 only)."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
    s.bind((a.iface, 0))
    n = 0
    end = time.monotonic() + a.timeout
    with open(a.out, "w") as out:
        while n < a.count and time.monotonic() < end:
            r, _, _ = select.select([s], [], [], 0.1)
            if not r:
                continue
            pkt = s.recv(65536)
            ihl = (pkt[0] & 0xF) * 4
            if len(pkt) < ihl + 8 or pkt[9] != 17:
                continue
            sport, dport, ulen = struct.unpack("!HHH", pkt[ihl:ihl + 6])
            if dport != a.port:
                continue
            out.write(json.dumps({"src": socket.inet_ntoa(pkt[12:16]), "sport": sport,
                                  "data": pkt[ihl + 8:ihl + ulen].hex()}) + "\n")
            out.flush()
            n += 1
    print(json.dumps({"captured": n}))
    return 0 if n else 1


def replay(a):
    """A captured datagram again, unmodified, from its own address and port."""
    caps = [json.loads(l) for l in open(a.file)]
    raw = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    for k in range(a.count):
        c = caps[(a.index + (k if a.cycle else 0)) % len(caps)]
        d = bytes.fromhex(c["data"])
        saddr, sport = (a.src.rsplit(":", 1) if a.src else (c["src"], c["sport"]))
        raw_send(raw, saddr, int(sport), a.dst, a.port, d)
        if a.gap:
            time.sleep(a.gap)
    print(json.dumps({"sent": a.count}))
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("reflector")
    r.add_argument("addr")
    r.add_argument("port", type=int)
    r.add_argument("ready")
    r.add_argument("mode")
    r.add_argument("--answers", type=int, help="answer the first ANSWERS datagrams only")
    r.add_argument("--go", help="answer nothing before this file exists")
    p = sub.add_parser("ping")
    p.add_argument("dst")
    p.add_argument("port", type=int)
    p.add_argument("--src")
    p.add_argument("--session", type=lambda s: int(s, 0), default=0x1234)
    p.add_argument("--seq", type=int, default=0)
    p.add_argument("--seq-step", type=int, nargs="?", const=1, default=0)
    p.add_argument("--idle", type=int, default=1001)
    p.add_argument("--type", type=int, default=PING)
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--size", type=int, default=W.HDR)
    p.add_argument("--gap", type=float, default=0)
    p.add_argument("--vary-session", action="store_true")
    p.add_argument("--from-port", type=int, default=0)
    p.add_argument("--flags", type=lambda s: int(s, 0), default=0)
    p.add_argument("--junk", action="store_true")
    f = sub.add_parser("sniff")
    f.add_argument("iface")
    f.add_argument("port", type=int)
    f.add_argument("out")
    f.add_argument("--count", type=int, default=1)
    f.add_argument("--timeout", type=float, default=10)
    y = sub.add_parser("replay")
    y.add_argument("file")
    y.add_argument("dst")
    y.add_argument("port", type=int)
    y.add_argument("--index", type=int, default=0)
    y.add_argument("--src")
    y.add_argument("--count", type=int, default=1)
    y.add_argument("--cycle", action="store_true")
    y.add_argument("--gap", type=float, default=0)
    a = ap.parse_args()
    return {"reflector": fake_reflector, "ping": pinger, "sniff": sniff, "replay": replay}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
