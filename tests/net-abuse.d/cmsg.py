#!/usr/bin/env python3
"""Real control buffers for the cmsg fuzz seeds: a datagram received with an
SO_TIMESTAMPING software stamp, and a TX stamp from the error queue
(SO_TIMESTAMPING + IP_RECVERR), each re-packed the way the kernel lays out
struct cmsghdr on this host.  Run inside a throwaway namespace (loopback).

    cmsg.py OUTDIR
"""
import os
import socket
import struct
import sys
import time

SO_TIMESTAMPING = 37
SOF = dict(TX_SOFTWARE=1 << 1, RX_SOFTWARE=1 << 3, SOFTWARE=1 << 4,
           OPT_ID=1 << 7, OPT_TSONLY=1 << 11)
HDR = struct.calcsize("@Nii")   # struct cmsghdr: size_t len, int level, int type
ALIGN = struct.calcsize("@N")


def pack(ancdata):
    out = b""
    for level, kind, data in ancdata:
        one = struct.pack("@Nii", HDR + len(data), level, kind) + data
        out += one + b"\0" * (-len(one) % ALIGN)
    return out


def main():
    outdir = sys.argv[1]
    flags = SOF["TX_SOFTWARE"] | SOF["RX_SOFTWARE"] | SOF["SOFTWARE"] | SOF["OPT_ID"] | SOF["OPT_TSONLY"]
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    rx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING, flags)
    tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tx.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPING, flags)
    tx.connect(rx.getsockname())
    tx.send(b"x" * 64)
    _, anc, _, _ = rx.recvmsg(128, 512)
    with open(os.path.join(outdir, "rx-software"), "wb") as f:
        f.write(pack(anc))
    for _ in range(100):
        try:
            _, anc, _, _ = tx.recvmsg(128, 512, socket.MSG_ERRQUEUE | socket.MSG_DONTWAIT)
            break
        except BlockingIOError:
            time.sleep(0.01)
    else:
        sys.exit("no TX stamp on the error queue")
    buf = pack(anc)
    with open(os.path.join(outdir, "tx-errqueue"), "wb") as f:
        f.write(buf)
    # the same TX completion as a NIC would stamp it (ts[2] filled in)
    hw = b""
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPING:
            data = data[:32] + data[:16]
        hw += pack([(level, kind, data)])
    with open(os.path.join(outdir, "tx-errqueue-hw"), "wb") as f:
        f.write(hw)


if __name__ == "__main__":
    main()
