#!/usr/bin/env python3
"""Checks and traffic helpers for tests/net-core.sh (rant integration tests).

Subcommands (each prints what is wrong and exits 1 on failure):
  keys FILE MODE            every JSON key docs/json.md documents is present
  stats FILE METRIC...      min <= avg <= max, percentiles monotonic in [min, max]
  csv FILE                  per-transaction invariants of an emit CSV log;
                            prints "ok=N warmup=N lost=N late=N"
  junk HOST PORT KIND=N...  send junk datagrams (kinds in cmd_junk) from a fresh
                            socket; prints "replies=N", what came back in 0.3 s
"""
import json
import os
import socket
import struct
import sys
import time

MAGIC = 0x52414E54
PCT_KEYS = ["50", "90", "95", "99", "99.9", "99.99", "99.999"]
METRIC_KEYS = ["samples", "min_ns", "max_ns", "avg_ns", "stddev_ns", "percentiles_ns"]


def header(magic=MAGIC, version=1, ptype=1, flags=0, session=0, idle_ms=0, seq=0, size=64):
    """A rant header (SPEC: network byte order), zero padded to size."""
    h = struct.pack("!IBBHIIQ", magic, version, ptype, flags, session, idle_ms, seq)
    return (h + bytes(40)).ljust(size, b"\0")


def fail(msgs):
    for m in msgs:
        print("rantcheck: " + m)
    return 1 if msgs else 0


def get(d, path):
    """d[k1][k2]... for "k1.k2..."; a percentile key ("99.9") ends a path."""
    head, _, pct = path.partition(".percentiles_ns.")
    keys = head.split(".") + (["percentiles_ns", pct] if pct else [])
    for k in keys:
        if not isinstance(d, dict) or k not in d:
            raise KeyError(path)
        d = d[k]
    return d


def cmd_keys(path, mode):
    d = json.load(open(path))
    bad = []
    metrics = ["rtt", "response", "network", "app_rtt"] if mode == "emit" else ["response"]
    want = ["mode", "timestamps.wire", "duration_s", "threshold.us", "threshold.exceeded",
            "threshold.percent", "exit_code"]
    want += ["packets." + k for k in
             ("sent", "received", "lost", "late", "duplicate", "invalid", "warmup")]
    for m in metrics:
        want += ["metrics.%s.%s" % (m, k) for k in METRIC_KEYS]
        want += ["metrics.%s.percentiles_ns.%s" % (m, k) for k in PCT_KEYS]
    for k in want:
        try:
            get(d, k)
        except KeyError:
            bad.append("%s: missing key %s" % (path, k))
    if not bad:
        if d["mode"] != mode:
            bad.append("mode is %r, expected %r" % (d["mode"], mode))
        if d["timestamps"]["wire"] != "software":
            bad.append("timestamps.wire is %r on veth/lo" % d["timestamps"]["wire"])
        for m in metrics:
            got = list(d["metrics"][m]["percentiles_ns"].keys())
            if got != PCT_KEYS:
                bad.append("metrics.%s.percentiles_ns keys %s" % (m, got))
    return fail(bad)


def cmd_stats(path, metrics):
    d = json.load(open(path))
    bad = []
    for m in metrics:
        x = d["metrics"][m]
        if not x["min_ns"] <= x["avg_ns"] <= x["max_ns"]:
            bad.append("%s: min %s avg %s max %s out of order" % (m, x["min_ns"], x["avg_ns"], x["max_ns"]))
        p = [x["percentiles_ns"][k] for k in PCT_KEYS]
        if p != sorted(p) or p[0] < x["min_ns"] or p[-1] > x["max_ns"]:
            bad.append("%s: percentiles %s not monotonic within [%s, %s]" % (m, p, x["min_ns"], x["max_ns"]))
        if x["stddev_ns"] < 0:
            bad.append("%s: negative stddev" % m)
    return fail(bad)


def ns(stamp):
    """'seconds.nanoseconds' -> integer ns, exactly (no float rounding)."""
    s, _, f = stamp.partition(".")
    return int(s) * 1000000000 + int(f.ljust(9, "0"))


def cmd_csv(path):
    bad = []
    count = {"ok": 0, "warmup": 0, "lost": 0, "late": 0}
    cols = None
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("#") or not line:
            continue
        f = line.split(",")
        if cols is None:
            cols = f
            continue
        r = dict(zip(cols, f))
        if len(f) != len(cols):
            bad.append("row %s: %d fields, header has %d" % (f[0], len(f), len(cols)))
            continue
        count[r["status"]] = count.get(r["status"], 0) + 1
        if r["status"] != "ok":
            continue
        rtt, resp, net = int(r["rtt_ns"]), int(r["response_ns"]), int(r["network_ns"])
        app = ns(r["t4_sw"]) - ns(r["t1_sw"])
        if not rtt >= resp >= 0 or net < 0 or net != rtt - resp or app < rtt:
            bad.append("seq %s: rtt %d response %d network %d app_rtt %d" % (r["seq"], rtt, resp, net, app))
    print(" ".join("%s=%d" % kv for kv in count.items()))
    return fail(bad[:10])


def cmd_junk(host, port, kinds):
    """Junk datagrams of each kind; a well-formed header with something wrong."""
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    make = {
        "magic": lambda: header(magic=0xDEADBEEF),
        "short": lambda: header()[:20],
        "version": lambda: header(version=9),
        "type": lambda: header(ptype=7),
        "random": lambda: b"\x00" + os.urandom(63),   # never starts with 'R'
        "foreign": lambda: header(ptype=1, session=0x0BADF00D, seq=1),
    }
    for kv in kinds:
        kind, _, n = kv.partition("=")
        for _ in range(int(n)):
            s.sendto(make[kind](), (host, int(port)))
    # Answers come in the order of what they answer, BUSY (to "foreign",
    # sent last) last: with foreign pings, wait for it however loaded the
    # host (20 s at most), then 0.3 s for anything after it.
    want_busy = any(kv.startswith("foreign=") for kv in kinds)
    deadline = time.monotonic() + 20
    s.settimeout(0.3)
    replies = 0
    busy = 0
    while time.monotonic() < deadline:
        try:
            d = s.recv(65536)
        except socket.timeout:
            if busy or not want_busy:
                break
            continue
        except ConnectionRefusedError:
            break
        if len(d) >= 64 and d[5] == 5 and len(d) <= 64:
            busy += 1   # BUSY: the answer to a ping of another session, header-sized
        else:
            replies += 1
    print("replies=%d" % replies + (" busy" if busy else ""))
    return 0


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 2
    cmd, args = argv[1], argv[2:]
    if cmd == "keys":
        return cmd_keys(args[0], args[1])
    if cmd == "stats":
        return cmd_stats(args[0], args[1:])
    if cmd == "csv":
        return cmd_csv(args[0])
    if cmd == "junk":
        return cmd_junk(args[0], args[1], args[2:])
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
