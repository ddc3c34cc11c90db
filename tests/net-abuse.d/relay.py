#!/usr/bin/env python3
"""UDP relay between a rant emitter and a rant reflector that keeps a copy of
every datagram it passes, one file per message type (ping, pong, fin,
fin_ack, warmup ping), for the fuzz seed corpus.

    relay.py LISTEN_PORT REFLECTOR_ADDR REFLECTOR_PORT OUTDIR SECONDS
"""
import os
import select
import socket
import struct
import sys
import time

import rantwire as W   # rant's wire format, made from rant.c (build/rantwire.py)

NAMES = {W.PING: "ping", W.PONG: "pong", W.FIN: "fin", W.FIN_ACK: "fin_ack"}


def name_of(data):
    if len(data) < W.SHORT_HDR or struct.unpack_from("!I", data, W.OFF["MAGIC"])[0] != W.MAGIC:
        return "junk"
    kind = data[W.OFF["TYPE"]]
    flags = struct.unpack_from("!H", data, W.OFF["FLAGS"])[0]
    return NAMES.get(kind, "type%d" % kind) + ("-warmup" if flags & W.PF_WARMUP else "")


def main():
    port, raddr, rport, outdir, secs = sys.argv[1:6]
    front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    front.bind(("0.0.0.0", int(port)))
    back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    back.connect((raddr, int(rport)))
    client = None
    seen = set()
    end = time.monotonic() + float(secs)
    while time.monotonic() < end:
        ready, _, _ = select.select([front, back], [], [], 0.1)
        for s in ready:
            data, src = s.recvfrom(70000)
            name = name_of(data)
            if name not in seen:
                seen.add(name)
                with open(os.path.join(outdir, name), "wb") as f:
                    f.write(data)
            if s is front:
                client = src
                back.send(data)
            elif client:
                front.sendto(data, client)


if __name__ == "__main__":
    main()
