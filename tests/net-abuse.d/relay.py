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

NAMES = {1: "ping", 2: "pong", 3: "fin", 4: "fin_ack"}


def name_of(data):
    if len(data) < 8 or data[:4] != b"RANT":
        return "junk"
    kind = NAMES.get(data[5], "type%d" % data[5])
    flags = struct.unpack("!H", data[6:8])[0]
    return kind + ("-warmup" if flags & 1 else "")


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
