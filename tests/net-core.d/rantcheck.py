#!/usr/bin/env python3
"""Checks and traffic helpers for tests/net-core.sh (rant integration tests).

Subcommands (each prints what is wrong and exits 1 on failure):
  keys FILE MODE            the JSON against docs/json.md's key table: every
                            key it holds documented, every key documented as
                            always there (or there on MODE's side) present
  stats FILE METRIC...      min <= avg <= max, percentiles monotonic in [min, max]
  csv FILE                  per-transaction invariants of an emit CSV log;
                            prints "ok=N warmup=N lost=N late=N"
  junk HOST PORT KIND=N...  send junk datagrams (kinds in cmd_junk) from a fresh
                            socket; prints "replies=N", what came back in 0.3 s
"""
import json
import os
import re
import socket
import struct
import sys
import time

import rantwire as W   # rant's wire format, made from rant.c (build/rantwire.py)

PCT_KEYS = ["50", "90", "95", "99", "99.9", "99.99", "99.999"]


def header(magic=W.MAGIC, version=W.VERSION, ptype=W.PING, flags=0, session=0, idle_ms=0, seq=0, size=W.HDR):
    """A rant header (docs/protocol.md: network byte order), zero padded to size."""
    h = struct.pack(W.SHORT, magic, version, ptype, flags, session, idle_ms, seq)
    return h.ljust(max(size, W.HDR), b"\0")


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


DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "json.md")


def doc_tables(doc=None):
    """docs/json.md's tables: (rows of "## Keys" as [key, meaning, unit,
    present], placeholders as {"<p>": [names], ...}).  A row's key is its
    first cell's code span; <metric>'s names are the metric table's keys."""
    rows, holders, metrics, section = [], {}, [], None
    for line in open(doc or DOC):
        if line.startswith("## "):
            section = line[3:].strip()
            continue
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip()[1:-1].split("|")]
        key = cells[0].strip("`")
        if section == "Keys":
            if len(cells) != 4:
                raise ValueError("docs/json.md: a key row without 4 cells: " + line)
            rows.append([key] + cells[1:])
        elif section == "Placeholders" and len(cells) == 2:
            holders[key] = [n.strip('"') for n in re.findall(r"`([^`]+)`", cells[1])]
        elif section == "Placeholders" and len(cells) == 3:
            metrics.append(key)
    holders["<metric>"] = metrics
    # <rows>.x stands for several tokens (classes[].sizes[]): one row per list
    lists = holders.pop("<rows>", [])
    out = []
    for r in rows:
        if r[0].startswith("<rows>."):
            out += [[g + r[0][len("<rows>"):]] + r[1:] for g in lists]
        else:
            out.append(r)
    return out, holders


def tok_match(doc_tok, tok, holders):
    if doc_tok in holders:
        return tok in holders[doc_tok]
    # an empty list of objects is the key alone: "name" for the row "name[]"
    return doc_tok == tok or doc_tok == tok + "[]"


def json_paths(d, path=()):
    """(tokens, value) for every key of d, an object's keys after it; a
    list of objects is one token "name[]" followed by each item's keys."""
    for k, v in d.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            yield path + (k + "[]",), None
            for x in v:
                yield from json_paths(x, path + (k + "[]",))
        else:
            yield path + (k,), v
            if isinstance(v, dict):
                yield from json_paths(v, path + (k,))


def documented(toks, value, keys, holders):
    """a row's key is toks, or (for an object, a list or null) begins with them"""
    for k in keys:
        if len(k) < len(toks) or (len(k) > len(toks) and value is not None and
                                  not isinstance(value, (dict, list))):
            continue
        if all(tok_match(a, b, holders) for a, b in zip(k, toks)):
            return True
    return False


def present(d, toks, optional, holders, done=()):
    """the key toks is in d: where a key on the way is null, or is absent
    and its own row is not required (optional), so is everything below it"""
    if not toks:
        return True
    if d is None:
        return True
    if not isinstance(d, dict):
        return False
    t, rest = toks[0], toks[1:]
    if t in holders:
        return all(present(v, rest, optional, holders, done + (t,)) for k, v in d.items() if k in holders[t])
    name = t[:-2] if t.endswith("[]") else t
    if name not in d:
        return done + (t,) in optional
    if t.endswith("[]"):
        return all(present(x, rest, optional, holders, done + (t,)) for x in d[name] or [])
    return present(d[name], rest, optional, holders, done + (t,))


def cmd_keys(path, mode):
    """The object in path against docs/json.md: every key it holds is a row
    of the key table, every row present "always" or for its side is in it;
    then what this run must have (mode, software stamps, the metrics of a
    plain run with -s, every percentile of the placeholder table, in order)."""
    d = json.load(open(path))
    rows, holders = doc_tables()
    side = {"emit": "client", "reflect": "reflector"}[mode]
    keys = [tuple(r[0].split(".")) for r in rows]
    need = [tuple(r[0].split(".")) for r in rows if r[3] in ("always", side)]
    optional = set(keys) - set(need)
    bad = []
    if len(rows) < 100 or not holders.get("<p>") or len(holders["<metric>"]) < 9:
        bad.append("%s: the key table, the percentiles or the metric table not found" % DOC)
    for toks, value in json_paths(d):
        if not documented(toks, value, keys, holders):
            bad.append("%s: key %s is not in docs/json.md" % (path, ".".join(toks)))
    for k in need:
        if not present(d, k, optional, holders):
            bad.append("%s: key %s (docs/json.md: present %s) missing" % (path, ".".join(k),
                       dict((tuple(r[0].split(".")), r[3]) for r in rows)[k]))
    if bad:
        uniq = list(dict.fromkeys(bad))
        return fail(uniq[:30] + (["... and %d more" % (len(uniq) - 30)] if len(uniq) > 30 else []))
    if d["mode"] != mode:
        bad.append("mode is %r, expected %r" % (d["mode"], mode))
    if d["timestamps"]["wire"] != "software":
        bad.append("timestamps.wire is %r on veth/lo" % d["timestamps"]["wire"])
    want = ["rtt", "response", "network", "app_rtt"] if mode == "emit" else ["response"]
    for m in want:
        if m not in d["metrics"]:
            bad.append("no metric %s" % m)
            continue
        got = list(d["metrics"][m]["percentiles_ns"].keys())
        if got != holders["<p>"]:
            bad.append("metrics.%s.percentiles_ns keys %s, docs/json.md says %s" % (m, got, holders["<p>"]))
    print("# rantcheck: %s: %d keys, each documented; %d rows of docs/json.md required here, each present"
          % (path, sum(1 for _ in json_paths(d)), len(need)))
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
        "short": lambda: header()[:W.SHORT_HDR - 4],
        "version": lambda: header(version=W.VERSION + 8),
        "type": lambda: header(ptype=W.BUSY + 2),
        "random": lambda: b"\x00" + os.urandom(W.HDR - 1),   # never starts with the magic
        "foreign": lambda: header(ptype=W.PING, session=0x0BADF00D, seq=1),
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
        if len(d) == W.HDR and d[W.OFF["TYPE"]] == W.BUSY:
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
