#!/usr/bin/env python3
"""Send junk datagrams at a rant socket, paced, and print what each kind
should count as on the receiving side, as JSON.

    junk.py [options] ADDR PORT

Kinds: random bytes (never starting with the magic), truncated headers
(< 24 bytes: shorter than the short header), wrong magic, wrong version, wrong type (incl. pongs and
FIN_ACKs sent to a reflector), 200-byte and (with --big) 65 001+ byte
datagrams, valid pings and FINs of another session (--foreign), exact
duplicates of such a ping, and (--session ID --replay-below N) replays of
the real session's pings with sequence numbers below N, which the receiver
has already seen.  Datagrams longer than --max-len count as invalid only.  With --spoof SRC:SPORT the datagrams are built on a raw
socket with that source, so they pass a connected socket's filter.

With --queue PID:PORT it never lets the receive queue of the UDP socket
on PORT, in the namespace of process PID, hold more than 64 KiB: it waits
for the receiver to read.  A receiver a loaded host starves of CPU then
gets the junk later, not lost in a full buffer; what the test measures is
the counting, not the host.
"""
import argparse
import json
import os
import random
import socket
import struct
import sys
import time

import rantwire as W   # rant's wire format, made from rant.c (build/rantwire.py)

# a datagram of W.SHORT_HDR (magic to seq) to W.HDR - 1 bytes is a valid short one
# magics that are not rant's: none, one off, its bytes the other way round, all ones
BAD_MAGICS = [0, W.MAGIC + 1, int.from_bytes(W.MAGIC.to_bytes(4, "big"), "little"), 0xFFFFFFFF]


def header(kind=W.PING, session=0, seq=0, flags=0, version=W.VERSION, magic=W.MAGIC, idle_ms=1001, size=W.HDR):
    h = struct.pack(W.SHORT, magic, version, kind, flags, session, idle_ms, seq)
    return (h + bytes(size - len(h))) if size >= len(h) else h[:size]


class Sender:
    def __init__(self, addr, port, spoof):
        self.dst = (addr, port)
        self.spoof = spoof
        if spoof:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
            self.src = (spoof.split(":")[0], int(spoof.split(":")[1]))
        else:
            self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)

    def send(self, data):
        if not self.spoof:
            self.sock.sendto(data, self.dst)
            return
        udp = struct.pack("!HHHH", self.src[1], self.dst[1], 8 + len(data), 0)
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(data), 0, 0x4000, 64,
                         socket.IPPROTO_UDP, 0, socket.inet_aton(self.src[0]),
                         socket.inet_aton(self.dst[0]))
        self.sock.sendto(ip + udp + data, (self.dst[0], 0))


def rx_queue(pid, port):
    """Bytes waiting in the receive queue of PID's UDP socket(s) on PORT."""
    n = 0
    for f in ("udp", "udp6"):
        try:
            lines = open("/proc/%d/net/%s" % (pid, f)).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            v = line.split()
            if int(v[1].rsplit(":", 1)[1], 16) == port:
                n += int(v[4].split(":")[1], 16)
    return n


def wait_queue(queue, limit=64 << 10, seconds=30):
    if not queue:
        return
    pid, port = (int(x) for x in queue.split(":"))
    end = time.monotonic() + seconds
    while rx_queue(pid, port) > limit and time.monotonic() < end:
        time.sleep(0.001)


def build(args, rnd):
    """The list of (datagram, counts-as) in send order."""
    other = rnd.randrange(1, 1 << 32)
    while other == args.session:
        other = rnd.randrange(1, 1 << 32)
    out = []
    n = args.count
    per = n // 10
    for _ in range(per):                                   # random bytes
        d = rnd.randbytes(rnd.randrange(0, 120))
        if d[:1] == W.MAGIC.to_bytes(4, "big")[:1]:
            d = b"X" + d[1:]
        out.append((d, "invalid"))
    for _ in range(per):                                   # truncated headers
        out.append((header(session=other, seq=rnd.randrange(1 << 20))[:rnd.randrange(0, W.SHORT_HDR)], "invalid"))
    for _ in range(per):                                   # wrong magic
        out.append((header(magic=rnd.choice(BAD_MAGICS), session=other), "invalid"))
    for _ in range(per):                                   # wrong version
        out.append((header(version=rnd.choice([0, W.VERSION + 1, 255]), session=args.session or other), "invalid"))
    for _ in range(per):                                   # wrong type
        out.append((header(kind=rnd.choice(args.bad_types), session=args.session or other), "invalid"))
    for _ in range(per):                                   # 200 bytes, bad magic
        out.append((b"junk" + bytes(196), "invalid"))
    if args.foreign:
        for i in range(per):                               # another session's pings
            out.append((header(session=other, seq=i), "foreign"))
        for i in range(per // 2):                          # ... exact duplicates of one
            out.append((header(session=other, seq=7), "foreign"))
        for i in range(per // 2):                          # ... 200-byte ones
            out.append((header(session=other, seq=i, size=200), "foreign" if args.max_len >= 200 else "invalid"))
        for i in range(per // 10):                         # ... and its FINs
            out.append((header(kind=W.FIN, session=other, seq=i), "foreign"))
    for _ in range(args.big):                              # bigger than any ping
        out.append((header(session=args.session or other, size=W.MAX_SIZE + 1 + rnd.randrange(400)), "invalid"))
    while len(out) < n - args.replays:                     # fill up with random bytes
        out.append((b"\x00" * rnd.randrange(0, 200), "invalid"))
    rnd.shuffle(out)
    # replays come last, when the real session is far past them
    for i in range(args.replays):
        out.append((header(session=args.session, seq=i % args.replay_below), "duplicate"))
    return out[:n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("addr")
    ap.add_argument("port", type=int)
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--seconds", type=float, default=4.0, help="spread the sending over this long")
    ap.add_argument("--session", type=lambda s: int(s, 0), default=0)
    ap.add_argument("--replays", type=int, default=0)
    ap.add_argument("--replay-below", type=int, default=100)
    ap.add_argument("--foreign", action="store_true")
    ap.add_argument("--big", type=int, default=0)
    ap.add_argument("--bad-types", default="0,2,4,5,255")
    ap.add_argument("--spoof", default="")
    ap.add_argument("--max-len", type=int, default=W.MAX_SIZE,
                    help="longest datagram the receiver reads whole (longer: invalid, whatever it holds)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--queue", default="", help="PID:PORT of the receiving socket (see above)")
    args = ap.parse_args()
    args.bad_types = [int(x) for x in args.bad_types.split(",")]
    rnd = random.Random(args.seed)
    plan = build(args, rnd)
    snd = Sender(args.addr, args.port, args.spoof)
    counts = {"invalid": 0, "foreign": 0, "duplicate": 0, "sent": 0, "errors": 0}
    batch = 50
    gap = args.seconds / (len(plan) / batch)
    t0 = time.monotonic()
    for i, (data, what) in enumerate(plan):
        if i % batch == 0 or len(data) > 1000:
            wait_queue(args.queue)
        try:
            snd.send(data)
        except OSError:
            counts["errors"] += 1
            continue
        counts["sent"] += 1
        counts[what] += 1
        if what == "foreign":
            counts["invalid"] += 1      # foreign is the subset of invalid from other sessions
        if i % batch == batch - 1:
            delay = t0 + gap * (i + 1) / batch - time.monotonic()
            if delay > 0:
                time.sleep(delay)
    counts["seconds"] = round(time.monotonic() - t0, 3)
    json.dump(counts, sys.stdout)
    print()


if __name__ == "__main__":
    main()
