#!/usr/bin/env python3
"""Read a rant result file the way crucible's bench-rant post-processing
does (its patterns, re-implemented here from its documented behaviour), and
check the numbers against rant's own --json of the same run.

  benchparse.py parse RESULT                 print what bench-rant would take
  benchparse.py check RESULT JSON PREFIX     TAP-like "ok/not ok" lines
"""
import json
import re
import sys

DURATION = re.compile(r"Test is complete\. Duration: ([0-9]+(?:\.[0-9]+)?) s")
MINMAX = re.compile(r"MIN: (-?[0-9]+) ns \| MAX: (-?[0-9]+) ns \| AVG: (-?[0-9]+) ns \| Total Samples: ([0-9]+)")
PCT = re.compile(r"^\s+([0-9]+(?:\.[0-9]+)?)th\s*:\s+(-?[0-9]+)", re.M)
MINIMUM = re.compile(r"Minimum\s+:\s+(-?[0-9.]+) us")
MAXIMUM = re.compile(r"Maximum\s+:\s+(-?[0-9.]+) us")
AVERAGE = re.compile(r"Average\s+:\s+(-?[0-9.]+) us")


def parse(text):
    r = {}
    m = DURATION.search(text)
    if m:
        r["duration"] = float(m.group(1))
    m = MINMAX.search(text)
    if m:
        r["min"], r["max"], r["avg"], r["samples"] = (int(x) for x in m.groups())
    r["pct"] = {k: int(v) for k, v in PCT.findall(text)}
    for name, rx in (("minimum", MINIMUM), ("maximum", MAXIMUM), ("average", AVERAGE)):
        m = rx.search(text)
        if m:
            r[name] = float(m.group(1))
    if r.get("samples") and r.get("duration"):
        r["packets_sec"] = r["samples"] / r["duration"]
    return r


def t(name, cond, detail=""):
    print(("ok\t" if cond else "not ok\t") + name + ("" if cond or not detail else " (" + str(detail) + ")"))


def check(result, jpath, prefix):
    r = parse(open(result, errors="replace").read())
    text = open(jpath).read()
    # a reflector appends one JSON object per session: take the last one
    objs, dec, i = [], json.JSONDecoder(), 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        o, i = dec.raw_decode(text, i)
        objs.append(o)
    d = objs[-1]
    mkey = "rtt" if d["mode"] == "emit" else "response"
    m = d["metrics"].get(mkey, {"samples": 0})
    t(prefix + " duration line parsed", "duration" in r)
    t(prefix + " duration = json duration_s", abs(r.get("duration", -1) - d["duration_s"]) < 0.006,
      (r.get("duration"), d["duration_s"]))
    t(prefix + " MIN/MAX/AVG/Total Samples line parsed", "samples" in r)
    t(prefix + " samples > 0", r.get("samples", 0) > 0, r.get("samples"))
    t(prefix + " Total Samples = json samples", r.get("samples") == m["samples"], (r.get("samples"), m["samples"]))
    if not m["samples"]:
        return
    t(prefix + " MIN = json min_ns", r.get("min") == m["min_ns"], (r.get("min"), m["min_ns"]))
    t(prefix + " MAX = json max_ns", r.get("max") == m["max_ns"], (r.get("max"), m["max_ns"]))
    t(prefix + " AVG = json avg_ns", abs(r.get("avg", -10) - m["avg_ns"]) <= 1, (r.get("avg"), m["avg_ns"]))
    keys = ["50", "90", "95", "99", "99.9", "99.99", "99.999"]
    t(prefix + " percentiles 50..99.999 parsed", sorted(r["pct"], key=float) == keys, sorted(r["pct"]))
    bucket = m["histogram"]["bucket_ns"]
    bad = [k for k in keys if k in r["pct"] and abs(r["pct"][k] * 1000 - m["percentiles_ns"][k]) >= 1000 + bucket]
    t(prefix + " percentiles = json within one bucket", not bad and len(r["pct"]) == 7,
      "; ".join("%s: %d us vs %d ns" % (k, r["pct"][k], m["percentiles_ns"][k]) for k in bad))
    vals = [r["pct"][k] for k in keys if k in r["pct"]]
    t(prefix + " percentiles ordered", vals == sorted(vals), vals)
    t(prefix + " Minimum us = json min", abs(r.get("minimum", -1) - m["min_ns"] / 1000) <= 0.0051,
      (r.get("minimum"), m["min_ns"]))
    t(prefix + " Maximum us = json max", abs(r.get("maximum", -1) - m["max_ns"] / 1000) <= 0.0051,
      (r.get("maximum"), m["max_ns"]))
    t(prefix + " Average us = json avg", abs(r.get("average", -1) - m["avg_ns"] / 1000) <= 0.0051,
      (r.get("average"), m["avg_ns"]))
    t(prefix + " packets-sec computable", r.get("packets_sec", 0) > 0, r.get("packets_sec"))


if __name__ == "__main__":
    if sys.argv[1] == "parse":
        print(json.dumps(parse(open(sys.argv[2], errors="replace").read()), sort_keys=True))
    else:
        check(sys.argv[2], sys.argv[3], sys.argv[4])
