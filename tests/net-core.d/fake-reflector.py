#!/usr/bin/env python3
"""A misbehaving rant reflector for tests/net-core.sh.

    fake-reflector.py ADDR PORT READYFILE [more]

Answers rant pings (64-byte header, the wire protocol in docs/protocol.md) with well-formed
pongs, except for the sequence numbers in PLAN, where it misbehaves in one
way each.  Answers a FIN with a FIN_ACK and exits.  When it listens it
creates READYFILE; at exit it prints what it did as JSON, so that the test
compares the client's counters with what was really sent.

"more": only ping 20 goes unanswered, the first FIN's FIN_ACK (the
session's counts) says PF_MORE, as a reflector with T3 stamps still owed
does, and every FIN after it goes unanswered, counted; it exits once 3 s
passed without a datagram after the first FIN.
"""
import json
import select
import socket
import struct
import sys
import time

import rantwire as W   # rant's wire format, made from rant.c (build/rantwire.py)
from rantwire import PING, PONG, FIN, FIN_ACK, PF_WARMUP, PF_MORE

# seq -> what to do.  Every action but "drop" and "late" also sends the good pong.
PLAN = {
    10: "wrong_session",   # + a pong with another session id: invalid
    12: "wrong_magic",     # + a pong with a bad magic: invalid
    14: "future_seq",      # + a pong for a seq never sent: invalid
    16: "duplicate",       # the pong twice: duplicate
    18: "late",            # the pong when the FIN comes: lost, then late
    20: "drop",            # no pong: lost
    22: "wrong_version",   # + a pong with version 9: invalid
}


def pong(session, seq, flags=0, magic=W.MAGIC, version=W.VERSION, ptype=PONG, size=W.HDR):
    h = struct.pack(W.SHORT, magic, version, ptype, flags, session, 0, seq)
    return h.ljust(max(size, W.HDR), b"\0")


def main():
    addr, port, ready = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    more = sys.argv[4:] == ["more"]
    plan = {20: "drop"} if more else PLAN
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((addr, port))
    open(ready, "w").close()
    did = {"pings": 0, "pongs": 0, "invalid": 0, "duplicate": 0, "late": 0, "dropped": 0, "fins": 0}
    # pongs held until the FIN: the client sends it only once it has given
    # up on every ping (--timeout), so they are late however slow the host
    pending = []        # (datagram, peer)
    deadline = time.monotonic() + 60
    quiet_end = deadline
    while time.monotonic() < deadline:
        r, _, _ = select.select([s], [], [], 0.2)
        if not r:
            if did["fins"] and time.monotonic() > quiet_end:
                break
            continue
        data, peer = s.recvfrom(65536)
        if len(data) < W.HDR:
            continue
        magic, version, ptype, flags, session, _, seq = struct.unpack_from(W.SHORT, data)
        if magic != W.MAGIC or version != W.VERSION:
            continue
        if ptype == FIN:
            did["fins"] += 1
            quiet_end = time.monotonic() + 3
            if did["fins"] > 1:
                continue
            for p in pending:
                s.sendto(p[0], p[1])
            s.sendto(pong(session, did["pongs"], PF_MORE if more else 0, ptype=FIN_ACK, size=len(data)), peer)
            if not more:
                break
            continue
        if ptype != PING:
            continue
        did["pings"] += 1
        good = pong(session, seq, flags & PF_WARMUP, size=len(data))
        act = plan.get(seq)
        if act == "drop":
            did["dropped"] += 1
            continue
        if act == "late":
            did["late"] += 1
            pending.append((good, peer))
            continue
        s.sendto(good, peer)
        did["pongs"] += 1
        if act == "duplicate":
            s.sendto(good, peer)
            did["duplicate"] += 1
        elif act == "wrong_session":
            s.sendto(pong(session ^ 0x5A5A5A5A, seq, size=len(data)), peer)
            did["invalid"] += 1
        elif act == "wrong_magic":
            s.sendto(pong(session, seq, magic=W.MAGIC + 1, size=len(data)), peer)
            did["invalid"] += 1
        elif act == "wrong_version":
            s.sendto(pong(session, seq, version=9, size=len(data)), peer)
            did["invalid"] += 1
        elif act == "future_seq":
            s.sendto(pong(session, seq + 1000000, size=len(data)), peer)
            did["invalid"] += 1
    print(json.dumps(did))
    return 0


if __name__ == "__main__":
    sys.exit(main())
