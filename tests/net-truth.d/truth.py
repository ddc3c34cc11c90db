# rant's numbers against the relay's truth (tests/net-truth.sh), run by
# py_checks with PY_LIB's t(), load() and rows():
#   RELAY_LOG CLIENT_CSV REFLECTOR_CSV CLIENT_JSON REFLECTOR_JSON ANALYZE_JSON
#
# Every frame the relay forwards crosses two veths: client -> relay and
# relay -> reflector forward, reflector -> relay and relay -> client back.
# All stamps are CLOCK_REALTIME of one kernel, so for each transaction
#   T1 <= ping rx <= ping tx <= T2 <= T3 <= pong rx <= pong tx <= T4
# where T1..T4 are rant's wire stamps and rx/tx the relay's (its sockets'
# kernel stamps).  The four gaps between them (the "legs") are what a veth
# crossing costs between the sender's transmit stamp and the receiver's
# receive stamp, taken in one call (the sender's xmit queues the frame to
# the receiver's backlog): about a microsecond.  So rant's numbers exceed
# the relay's holds by exactly those legs:
#   forward  - ping hold            = leg1 + leg2
#   backward - pong hold            = leg3 + leg4
#   rtt      - (pong tx - ping rx)  = leg1 + leg4
#   (pong rx - ping tx) - response  = leg2 + leg3
#   network  - both holds           = all four: the transaction's veth path
# Each error is asserted >= 0 (one clock: a stamp of the wrong packet or
# direction would put some leg below 0, the holds differing by 100 us or
# more from one seq to the next) and <= the transaction's own veth path,
# and the median of each <= MEDIAN_BOUND_NS: a crossing is ~1 us; only an
# interrupt or a preempted vCPU between the two stamps makes it longer,
# which a loaded host does to some transactions, never to half of them.
import statistics

MEDIAN_BOUND_NS = 25000


def ns(v):
    s, _, f = v.partition(".")
    return int(s) * 1000000000 + int(f.ljust(9, "0")) if v else None


pings, pongs, twice = {}, {}, []
for line in open(sys.argv[1]):
    d, typ, seq, rx, tx, tx2, act = line.split()
    r = dict(dir=d, type=typ, seq=int(seq), rx=int(rx), tx=int(tx), tx2=int(tx2), act=act)
    into = {("f", "ping"): pings, ("b", "pong"): pongs}.get((d, typ))
    if into is not None:
        if r["seq"] in into:
            twice.append(line)
        into[r["seq"]] = r
t("relay: each ping and each pong came once (the relay made the duplicates)", not twice, twice[:3])
cli, ref = load(sys.argv[4]), load(sys.argv[5])
ana = load(sys.argv[6])
cp, rp = cli["packets"], ref["packets"]
n = cp["sent"]


def count(dct, act):
    return sum(1 for r in dct.values() if r["act"] == act)


# what the relay did, and so what rant must count.  A pong is late by when
# it really left the relay (its first send's stamp) against its ping's
# arrival, not by the rule alone: on a loaded host a starved reflector
# answers past the client's timeout too (the veth paths, a few us, are the
# only part the relay does not see)
TIMEOUT = int(sys.argv[7])


def in_time(r):
    return r["act"] != "drop" and r["seq"] in pings and r["tx"] - pings[r["seq"]]["rx"] <= TIMEOUT


truth = dict(sent=len(pings), received=sum(1 for r in pongs.values() if in_time(r)),
             late=sum(1 for r in pongs.values() if r["act"] != "drop" and not in_time(r)),
             duplicate=count(pongs, "dup"),
             out=count(pings, "drop"), back=count(pongs, "drop"))
truth["lost"] = truth["sent"] - truth["received"]
print("relay: %s; ping dups %d" % (truth, count(pings, "dup")))
t("relay saw every ping 0..%d once" % (n - 1), sorted(pings) == list(range(n)), (len(pings), n))
t("the relay injected each fault at least once",
  all(truth[k] > 0 for k in ("late", "duplicate", "out", "back")) and count(pings, "dup") > 0, truth)
for k in ("sent", "received", "lost", "late", "duplicate"):
    t("live client %s = relay's %d" % (k, truth[k]), cp[k] == truth[k], cp[k])
lbd = cli.get("loss_by_direction") or {}
t("live loss by direction = relay's drops (out %d, back %d)" % (truth["out"], truth["back"]),
  lbd.get("out") == truth["out"] and lbd.get("back") == truth["back"], lbd)
t("live reflector answered = pings the relay passed (%d)" % (n - truth["out"]),
  rp["received"] == n - truth["out"], rp["received"])
t("live reflector duplicate = pings the relay sent twice (%d)" % count(pings, "dup"),
  rp["duplicate"] == count(pings, "dup"), rp["duplicate"])
# a ping reaching the reflector after a higher seq is late (reordered) there
top, reordered = -1, 0
for r in sorted((r for r in pings.values() if r["act"] != "drop"), key=lambda r: r["tx"]):
    reordered += r["seq"] < top
    top = max(top, r["seq"])
t("live reflector late = pings the relay reordered (%d)" % reordered, rp["late"] == reordered and reordered > 0,
  rp["late"])
ap = ana["packets"]
for k in ("sent", "received", "lost", "late"):
    t("--analyze %s = relay's %d" % (k, truth[k]), ap[k] == truth[k], ap[k])
# what a log cannot know may be unknown (null), never a wrong number
ANALYZE_UNKNOWABLE = []
if ap.get("duplicate") not in (None, truth["duplicate"]):
    ANALYZE_UNKNOWABLE.append("duplicate %s" % ap.get("duplicate"))
alb = ana.get("loss_by_direction")
if alb is not None and (alb.get("out"), alb.get("back")) != (truth["out"], truth["back"]):
    ANALYZE_UNKNOWABLE.append("loss by direction %s" % alb)
t("--analyze loss by direction from the joined logs = relay's drops (out %d, back %d)" % (truth["out"], truth["back"]),
  alb is not None and (alb.get("out"), alb.get("back")) == (truth["out"], truth["back"]), alb)
print("ANALYZE_UNKNOWABLE " + "; ".join(ANALYZE_UNKNOWABLE))

# per transaction: rant's numbers against the relay's holds
crow, rrow = {int(r["seq"]): r for r in rows(sys.argv[2])}, {int(r["seq"]): r for r in rows(sys.argv[3])}
err = {k: [] for k in ("forward", "backward", "rtt", "response", "network")}
bad, echo_bad, nok, lacking = [], 0, 0, 0
for s, c in sorted(crow.items()):
    if c["status"] != "ok":
        continue
    nok += 1
    T = [ns(c[k]) for k in ("t1_ksw", "t2_ksw", "t3_ksw", "t4_ksw")]
    p, q = pings.get(s), pongs.get(s)
    if T[2] is None:
        lacking += 1	# no T3: counted below (the T3 history)
        continue
    if None in T or not p or not q or not p["tx"] or not q["tx"]:
        bad.append((s, "stamps or relay records missing", T))
        continue
    r = rrow.get(s)
    echo_bad += not r or ns(r["t2_ksw"]) != T[1] or ns(r["t3_ksw"]) != T[2]
    legs = [p["rx"] - T[0], T[1] - p["tx"], q["rx"] - T[2], T[3] - q["tx"]]
    hold_f, hold_b = p["tx"] - p["rx"], q["tx"] - q["rx"]
    e = dict(forward=int(c["forward_ns"]) - hold_f, backward=int(c["backward_ns"]) - hold_b,
             rtt=int(c["rtt_ns"]) - (q["tx"] - p["rx"]), response=(q["rx"] - p["tx"]) - int(c["response_ns"]),
             network=int(c["network_ns"]) - hold_f - hold_b)
    path = sum(legs)
    if min(legs) < 0 or e["network"] != path or any(not 0 <= v <= path for v in e.values()):
        bad.append((s, legs, e))
    for k, v in e.items():
        err[k].append(v)
t("every answered transaction checked (%d)" % nok, nok == truth["received"] and nok > 0, (nok, truth["received"]))
t("each transaction with its T3: the four veth legs >= 0 and every error within [0, its veth path]",
  not bad, bad[:3])
t("each transaction: T2 and T3 as the reflector logged them", echo_bad == 0, echo_bad)
for k, v in err.items():
    if v:
        v.sort()
        med = statistics.median(v)
        print("error %-8s p50 %6d ns  p99 %7d ns  max %8d ns  (%d transactions)" %
              (k, med, v[int(len(v) * 0.99)], v[-1], len(v)))
        t("%s: median error %d ns <= %d ns" % (k, med, MEDIAN_BOUND_NS), 0 <= med <= MEDIAN_BOUND_NS, med)
# one lost pong costs one transaction: every answered one has its response and backward
m = cli["metrics"]
t("no answered transaction lacks its T3 (%d do)" % lacking, lacking == 0, lacking)
t("response samples = received: a lost pong costs no other transaction's response (%d lost)" % truth["lost"],
  m["response"]["samples"] == truth["received"], (m["response"]["samples"], truth["received"]))
t("backward samples = received", m["backward"]["samples"] == truth["received"],
  (m["backward"]["samples"], truth["received"]))
