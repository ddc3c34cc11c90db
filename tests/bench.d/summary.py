#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""make bench's summary (tests/bench.sh): the tables of a bench-results.txt.

    summary.py RESULTS ROUNDS DUR SIZE SPREAD_WARN

RESULTS has one line per run (the column names first).  Per tool and
pairing the medians of its per-round values; per pair of tools the median
(min-max) of the ratios within each round; then the hot path's goals, each
with its verdict from the median and how far the rounds bear it out: the
rounds that fall on the verdict's side of the line, and the one-sided sign
test's p of that many or more out of the rounds by chance (a spread wider
than SPREAD_WARN cannot hide a verdict that 9 of 9 rounds agree on).
tests/bench-summary.sh checks it on synthetic results.
"""
from math import comb
import statistics, sys
cols = ("pairing tool round rtt_p50_ns rtt_p99_ns tps rss_client_kib rss_server_kib proc_p50_ns "
        "proc_p99_ns ovh_p50_ns ovh_p99_ns lost wire preempt_client preempt_server").split()
rows = [dict(zip(cols, l.split())) for l in open(sys.argv[1]).read().splitlines()[1:] if l.strip()]
rounds, dur, size, warn = sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5])
tools = []
for r in rows:
    if r["tool"] not in tools:
        tools.append(r["tool"])

def val(p, tool, rnd, col):
    for r in rows:
        if r["pairing"] == p and r["tool"] == tool and r["round"] == rnd and r[col] != "-":
            return float(r[col])
    return None

def med(p, tool, col):
    v = [float(r[col]) for r in rows if r["pairing"] == p and r["tool"] == tool and r[col] != "-"]
    return statistics.median(v) if v else None

def per_round_keyed(p, a, b, col):
    """{round: ratio a/b} for each round where both ran"""
    out = {}
    for rnd in sorted({r["round"] for r in rows}, key=int):
        x, y = val(p, a, rnd, col), val(p, b, rnd, col)
        # a run starved to a single transaction reports a rate of 0: no ratio
        if x and y:
            out[rnd] = x / y
    return out


def per_round(p, a, b, col):
    """ratio a/b within each round where both ran"""
    return list(per_round_keyed(p, a, b, col).values())

def n(x):
    return "n/a" if x is None else f"{x:,.0f}"

warnings = []
def rcell(p, a, b, col):
    v = per_round(p, a, b, col)
    if not v:
        return "n/a"
    m, lo, hi = statistics.median(v), min(v), max(v)
    if col != "rtt_p99_ns":
        # tails are noisy by nature: the verdict rests on the p50 and rate ratios
        warnings.append((hi / lo, f"{p} {a}/{b} {col} {lo:.2f}–{hi:.2f}"))
    return f"{m:.2f} ({lo:.2f}–{hi:.2f})"

print(f"### {size}-byte payload, {rounds} alternating rounds of {dur} s, servers on CPU 1, clients on CPU 0\n")
print("Medians of each tool's per-round value; app RTT (rant: T4_SW−T1_SW with -s; sockperf: --full-rtt; "
      "floor: clock_gettime around send→recv). Ratios are the median of per-round ratios, (min–max) across rounds. "
      "rant holds the CPU latency limit at 0 (its default --cpu-latency), and so do the floors and sockperf-held "
      "(sockperf under the same hold); sockperf runs as it comes.\n")
for p, label in (("defaults", "defaults (blocking)"), ("spin", "spinning")):
    print(f"#### {label}\n")
    print("| tool | app RTT p50, ns | p99, ns | transactions/s | RSS client / server, KiB | preemptions client / server |")
    print("|---|--:|--:|--:|--:|--:|")
    for t in tools:
        print(f"| {t} | {n(med(p, t, 'rtt_p50_ns'))} | {n(med(p, t, 'rtt_p99_ns'))} | {n(med(p, t, 'tps'))} | "
              f"{n(med(p, t, 'rss_client_kib'))} / {n(med(p, t, 'rss_server_kib'))} | "
              f"{n(med(p, t, 'preempt_client'))} / {n(med(p, t, 'preempt_server'))} |")
    print()
    print("| ratio | RTT p50 | RTT p99 | rate |")
    print("|---|--:|--:|--:|")
    pairs = [(t, "sockperf") for t in tools if t.startswith("rant")] + \
            [(t, "sockperf-held") for t in tools if t.startswith("rant") or t == "sockperf"] + \
            [(t, "floor") for t in tools if t != "floor"] + \
            [(t, "floor-ts") for t in tools if t.startswith("rant")] + \
            [("rant-NN", "floor-rx"), ("floor-rx", "sockperf")]
    for a, b in pairs:
        if a in tools and b in tools:
            print(f"| {a} / {b} | {rcell(p, a, b, 'rtt_p50_ns')} | {rcell(p, a, b, 'rtt_p99_ns')} | "
                  f"{rcell(p, a, b, 'tps')} |")
    print()
for t in tools:
    if not t.startswith("rant"):
        continue
    for p in ("defaults", "spin"):
        a, o = med(p, t, "proc_p50_ns"), med(p, t, "ovh_p50_ns")
        if a is not None:
            ovh = f"{n(o)} ns" if o is not None else "none (no wire rtt: --client-no-tx-ts)"
            print(f"{t} {p}: reflector processing T3_SW−T2_SW p50 {n(a)} ns; app overhead app_rtt−rtt p50 {ovh}")
# the goals of the hot path, from the same per-round ratios: rant against the floor that
# stamps as it does, and rant with the stamps a user can switch off against sockperf: the
# reflector's (-N), and the client's too (rant-NN: --client-no-tx-ts)
goals = [("rant", "floor-ts", 1.05, 0.95), ("rant-N", "sockperf", 0.95, 1.05),
         ("rant-NN", "sockperf", 0.95, 1.05), ("rant-NN", "floor-rx", 1.05, 0.95)]


def sign_p(k, m):
    """one-sided sign test: the chance of k or more of m rounds on one side"""
    return sum(comb(m, i) for i in range(k, m + 1)) / 2 ** m


def verdict(r, q, rtt_max, rate_min):
    """yes/no from the medians, and the rounds that bear it out"""
    paired = list(zip(r, q))
    m = len(paired)
    rtt_ok = statistics.median(r) <= rtt_max
    rate_ok = statistics.median(q) >= rate_min
    if rtt_ok and rate_ok:
        k = sum(1 for a, b in paired if a <= rtt_max and b >= rate_min)
        what = "both within"
        met = "yes"
    else:
        # the criterion that fails in most rounds decides
        misses = []
        if not rtt_ok:
            misses.append((sum(1 for a, _ in paired if a > rtt_max), f"RTT above {rtt_max}×"))
        if not rate_ok:
            misses.append((sum(1 for _, b in paired if b < rate_min), f"rate below {rate_min}×"))
        k, what = max(misses)
        met = "no"
    p = sign_p(k, m)
    return (f"{met}: {what} in {k} of {m} rounds (sign test p = {p:.3f}"
            f"{'' if p < 0.05 else ', not conclusive'})")


print("\n#### The hot path's goals: median (min–max) of per-round ratios\n")
print("| goal | pairing | RTT p50 ratio | rate ratio | met |")
print("|---|---|--:|--:|---|")
for a, b, rtt_max, rate_min in goals:
    if a not in tools or b not in tools:
        continue
    for p in ("defaults", "spin"):
        rk, qk = per_round_keyed(p, a, b, "rtt_p50_ns"), per_round_keyed(p, a, b, "tps")
        both = [rnd for rnd in rk if rnd in qk]
        r, q = [rk[rnd] for rnd in both], [qk[rnd] for rnd in both]
        if not both:
            print(f"| {a} / {b}: RTT ≤ {rtt_max}×, rate ≥ {rate_min}× | {p} | n/a | n/a | n/a |")
            continue
        print(f"| {a} / {b}: RTT ≤ {rtt_max}×, rate ≥ {rate_min}× | {p} | "
              f"{statistics.median(r):.2f} ({min(r):.2f}–{max(r):.2f}) | "
              f"{statistics.median(q):.2f} ({min(q):.2f}–{max(q):.2f}) | {verdict(r, q, rtt_max, rate_min)} |")
# what rant-NN's goal against sockperf asks of it against the floor that stamps as it does
print()
for p in ("defaults", "spin"):
    r, q = per_round(p, "floor-rx", "sockperf", "rtt_p50_ns"), per_round(p, "floor-rx", "sockperf", "tps")
    if r and q:
        rm, qm = statistics.median(r), statistics.median(q)
        print(f"floor-rx / sockperf {p}: RTT p50 {rm:.2f}×, rate {qm:.2f}×: rant-NN ahead of "
              f"sockperf (0.95×, 1.05×) asks of it {0.95 / rm:.2f}× floor-rx's RTT and "
              f"{1.05 / qm:.2f}× its rate")
print()
wide = sorted((w for w in warnings if w[0] > warn), reverse=True)
if wide:
    print(f"WARNING: the host was too busy to conclude from the spreads: {len(wide)} of {len(warnings)} "
          f"p50/rate ratios spread wider than ×{warn} across rounds (widest: {wide[0][1]}); "
          f"a goal's verdict with sign test p < 0.05 stands all the same")
