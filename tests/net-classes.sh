#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# Integration tests of traffic classes (--priority/--tos lists) and size
# sweeps (--size lists) over a veth pair between two throwaway namespaces:
#
#   per class and per size the counts are exact and both ends agree; each
#   class's TOS is on the wire in both directions, all classes from one
#   client port (tcpdump -v -x); a class whose pongs are dropped shows its
#   loss and no other class does; the class x size matrix; --analyze
#   rebuilds the tables from the CLASS/SIZE log columns; breach lines name
#   the class; a size above the MTU exits 2 before sending;
#   one value of each option leaves report, JSON and log as they were.
#
# Counts, structure and consistency only, never latencies (a noisy 2-core VM).
# Needs root (namespaces), python3; tcpdump and tc (htb, pfifo, u32) for the
# wire checks, which skip with a reason without them.

# Inline awk and bash -c programs expand their own $1.. and python reads
# PY_PRELUDE through lib.sh's py_checks, hence:
# shellcheck disable=SC2016,SC2034

# shellcheck source=tests/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PORT=12345

# py_checks prelude: j(name) loads $WORK/name.json; chk(cond, name, detail)
PY_PRELUDE='
import json, os, sys
W = os.environ["WORK"]
def j(n):
    return json.load(open(os.path.join(W, n + ".json")))
def chk(c, name, detail=""):
    print(("ok\t%s" if c else "not ok\t%s (" + str(detail) + ")") % name)
def why(c, x):
    # what a run that lost samples says about them
    return "%d samples; missing stamps %s, unmatched TX stamps %d, stepped %d" % (
        x["rtt"]["samples"], {k: v for k, v in c["missing_stamps"].items() if v},
        c["packets"]["unmatched_tx_stamps"], c["clock"]["stepped_transactions"])
def sane(r):
    p = r["rtt"]["percentiles_ns"]
    return r["rtt"]["samples"] == 0 or (r["rtt"]["min_ns"] <= p["50"] <= p["99"] <= p["99.9"] <= r["rtt"]["max_ns"])
'
export WORK

# 1. Three classes round-robin: each class's counts exact, reflector agrees.
t_classes() {
	if ! reflector c1r --once --json "$WORK/c1r.json"; then
		not_ok "classes: reflector listens"
		return
	fi
	emit c1c --priority 1,2,3 --tos 0,32,64 --count 3000 -w 30 --json "$WORK/c1c.json"
	expect_rc "classes" 0
	wait_exit "$REFLECTOR_PID" 30
	py_checks classes '
c, r = j("c1c"), j("c1r")
cl = c.get("classes", [])
chk(len(cl) == 3, "three classes in JSON", len(cl))
for k, x in enumerate(cl):
    p = x["packets"]
    chk(x["class"] == k and x["priority"] == k + 1 and x["tos"] == 32 * k, "class %d: priority and tos as given" % k, x)
    chk(p["sent"] == 1010 and p["received"] == 1010 and p["lost"] == 0 and p["warmup"] == 10,
        "class %d: sent 1010 = received, warm-up 10" % k, p)
    chk(x["rtt"]["samples"] == p["received"] - p["warmup"], "class %d: samples = received - warm-up" % k, why(c, x))
    chk(sane(x), "class %d: min <= p50 <= p99 <= p99.9 <= max" % k, x["rtt"])
chk(sum(x["packets"]["sent"] for x in cl) == c["packets"]["sent"], "classes add up to the run", c["packets"])
chk(sum(x["rtt"]["samples"] for x in cl) == c["metrics"]["rtt"]["samples"], "class samples add up to rtt samples")
rc = r.get("classes", [])
chk(sorted((x["priority"], x["tos"], x["answered"], x["warmup"]) for x in rc) == [(1, 0, 1010, 10), (2, 32, 1010, 10), (3, 64, 1010, 10)],
    "reflector: answered each class in its priority and tos, counts agree", rc)
'
	check "classes: report has a row per class" grep -Eq '^2  prio 3 tos 0x40 +1010 +1010 +0 ' "$WORK/c1c.out"
	check "classes: reflector report lists the classes" grep -Eq '^3 +0x40 +1010 +1010 +10$' "$WORK/c1r.out"
}

# 1b. --spin with classes: every class's TX stamps are read.  All pongs come
# to one class socket and a spinning client never waits in ppoll, so the
# other classes' TX stamps (queued on the socket that sent them) are read
# only by the batch drain, which must drain every class socket: before it
# did, classes 0 and 1 kept 85 of 10,000 RTT samples in a 30,000-ping run.
t_classes_spin() {
	if ! reflector c1s --once --json "$WORK/c1s.json"; then
		not_ok "classes, spinning: reflector listens"
		return
	fi
	emit c1p --priority 1,2,3 --tos 0,32,64 --count 3000 -w 30 --spin --json "$WORK/c1p.json"
	expect_rc "classes, spinning" 0
	wait_exit "$REFLECTOR_PID" 30
	py_checks "classes, spinning" '
c = j("c1p")
cl = c.get("classes", [])
chk(len(cl) == 3, "three classes in JSON", len(cl))
for k, x in enumerate(cl):
    p = x["packets"]
    chk(p["received"] == 1010 and p["warmup"] == 10, "class %d: 1010 received, warm-up 10" % k, p)
    chk(x["rtt"]["samples"] == p["received"] - p["warmup"], "class %d: samples = received - warm-up" % k, why(c, x))
chk(c["packets"]["unmatched_tx_stamps"] == 0 and c["missing_stamps"]["T1_KSW"] == 0,
    "every TX stamp read and matched", why(c, cl[0]) if cl else c["packets"])
'
}

dumped() { # N: tcpdump has printed N UDP datagrams
	[ "$(grep -c 'UDP, length' "$WORK/dump.txt")" -ge "$1" ]
}

# 2. The TOS of each class on the wire, pings and pongs, seen by tcpdump -v.
t_wire() {
	local tpid
	if ! command -v tcpdump >/dev/null; then
		skip "wire: tcpdump not installed"
		return
	fi
	in_b tcpdump -nn -v -x -l -i "$VETH_B" udp port "$PORT" >"$WORK/dump.txt" 2>"$WORK/dump.err" &
	tpid=$!
	BG_PIDS+=("$tpid")
	if ! wait_for 30 grep -q 'listening on' "$WORK/dump.err"; then
		not_ok "wire: tcpdump starts"
		return
	fi
	if ! reflector c2r --once; then
		not_ok "wire: reflector listens"
		return
	fi
	emit c2c --priority 1,2,3 --tos 0,32,184 --count 150 --interval 2000
	expect_rc "wire" 0
	wait_exit "$REFLECTOR_PID" 30
	# tcpdump has printed the 150 pings and the 150 pongs
	wait_for 30 dumped 300
	kill "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
	py_checks wire '
import re
pkts, cur = [], None
for ln in open(os.path.join(W, "dump.txt")).read().split("\n"):
    m = re.search(r"IP \(tos (0x[0-9a-f]+)", ln)
    if m:
        cur = {"tos": int(m.group(1), 16) & 0xfc, "hex": ""}  # without the ECN bits
        pkts.append(cur)
        continue
    m = re.search(r"(\d+\.\d+\.\d+\.\d+)\.(\d+) > (\d+\.\d+\.\d+\.\d+)\.(\d+): UDP", ln)
    if m and cur is not None:
        cur["sp"], cur["dp"] = int(m.group(2)), int(m.group(4))
        continue
    m = re.match(r"\s+0x[0-9a-f]+:\s+((?:[0-9a-f]{4} ?)+)", ln)
    if m and cur is not None:
        cur["hex"] += m.group(1).replace(" ", "")
pings, pongs, ports = {}, {}, set()
for p in pkts:
    kind = int(p["hex"][66:68], 16) if len(p["hex"]) >= 68 else 0  # IPv4 20 + UDP 8 + 5: rant type
    if kind == 1:
        ports.add(p["sp"])
        pings[p["tos"]] = pings.get(p["tos"], 0) + 1
    elif kind == 2:
        pongs[p["tos"]] = pongs.get(p["tos"], 0) + 1
chk(len(ports) == 1, "one client port for every class (the reflector sees one peer)", sorted(ports))
chk(sorted(pings) == [0, 32, 184], "the pings carry TOS 0x00, 0x20, 0xb8", pings)
chk(all(v >= 45 for v in pings.values()), "about a third of the pings per class", pings)
chk(pongs == pings, "each class TOS comes back as often as it went: pongs in their ping class", pongs)
'
}

# 3. Drop the pongs of one class (by their TOS, on the reflector's egress):
#    only that class shows loss.
t_drop_one() {
	local tc="in_b tc"
	tc_drop_tos "drop one class" "$NS_B" "$VETH_B" 0x40 || return
	if ! reflector c3r --once --json "$WORK/c3r.json"; then
		not_ok "drop one class: reflector listens"
		return
	fi
	# a pong a loaded host delays is no loss: only class 2's are dropped
	emit c3c --priority 1,2,3 --tos 0,32,64 --count 600 --interval 500 --timeout 3000 --json "$WORK/c3c.json"
	expect_rc "drop one class" 0
	wait_exit "$REFLECTOR_PID" 30
	$tc qdisc del dev "$VETH_B" root
	py_checks "drop one class" '
c = j("c3c")
cl = c["classes"]
for k in (0, 1):
    p = cl[k]["packets"]
    chk(p["sent"] == 200 and p["received"] == 200 and p["lost"] == 0, "class %d: no loss" % k, p)
p = cl[2]["packets"]
chk(p["sent"] == 200 and p["received"] == 0 and p["lost"] == 200 and cl[2]["rtt"]["samples"] == 0, "class 2 (tos 0x40): every pong lost", p)
chk(c["packets"]["lost"] == 200, "the run lost exactly class 2", c["packets"])
lb = c["loss_by_direction"]
chk(lb is not None and lb["back"] == 200 and lb["out"] == 0, "lost on the way back", lb)
r = [x for x in j("c3r")["classes"] if x["tos"] == 64]
chk(len(r) == 1 and r[0]["answered"] == 200, "the reflector answered class 2 (its pongs died on the wire)", r)
chk(j("c3r")["stop_reason"] == "fin", "the session ended by the FIN, though class 2 answers go nowhere", j("c3r")["stop_reason"])
'
	# the first class's pings dropped on the reflector's way in: the FIN of
	# every other class still ends the session (not its idle timeout)
	if ! in_b nft -f - <<-'EOF' 2>"$WORK/nft.err"; then
	table inet rantc3 {
		chain in {
			type filter hook input priority 0;
			ip dscp 0 udp dport 12345 counter drop
		}
	}
	EOF
		skip "drop one class in: nftables not available ($(head -1 "$WORK/nft.err"))"
		return
	fi
	if ! reflector c3ir --once --json "$WORK/c3ir.json"; then
		not_ok "drop one class in: reflector listens"
		in_b nft delete table inet rantc3
		return
	fi
	emit c3ic --tos 0,32 --count 200 --interval 1000 --timeout 3000 --json "$WORK/c3ic.json"
	expect_rc "drop one class in" 0
	wait_exit "$REFLECTOR_PID" 30
	in_b nft delete table inet rantc3
	py_checks "drop one class in" '
c, r = j("c3ic"), j("c3ir")
cl = c["classes"]
chk(cl[0]["packets"]["lost"] == cl[0]["packets"]["sent"] > 0 and cl[1]["packets"]["lost"] == 0, "class 0 all lost, class 1 none", [x["packets"] for x in cl])
chk(r["stop_reason"] == "fin", "the reflector ended by the FIN of class 1 (not by idle)", r["stop_reason"])
# (the loss is not split: the first ping the reflector saw was seq 1: it cannot tell where the session began)
chk(c["loss_by_direction"] is None and "whole session" in c["loss_by_direction_why"], "the loss not split, and why", c.get("loss_by_direction_why"))
'
}

# 3b. One class shaped on the client's egress (htb 100 kbit on its TOS, a
#    tenth of what it sends): its pings wait in the qdisc, before their wire
#    stamp.  With -s its app rtt and client tx stack rise in every table
#    (report, JSON classes[], --analyze, plot) while its wire rtt does not.
#    Orderings only, never values: the wait is 100s of ms (each ping takes
#    8.5 ms at 100 kbit), a ping's tx stack some us and a loaded host's app
#    rtt p50 some ms, so a factor of 10 holds on a loaded host too.
t_shaped() {
	local tc="in_a tc"
	if ! { $tc qdisc add dev "$VETH_A" root handle 1: htb default 1 &&
		$tc class add dev "$VETH_A" parent 1: classid 1:1 htb rate 10gbit &&
		$tc class add dev "$VETH_A" parent 1: classid 1:3 htb rate 100kbit burst 1600 cburst 1600 &&
		$tc filter add dev "$VETH_A" parent 1: protocol ip prio 1 u32 match ip tos 0x40 0xff flowid 1:3; } 2>"$WORK/tc.err"; then
		skip "shaped class: tc htb/u32 not available ($(head -1 "$WORK/tc.err"))"
		$tc qdisc del dev "$VETH_A" root 2>/dev/null
		return
	fi
	if ! reflector c11r --once -s; then
		not_ok "shaped class: reflector listens"
		$tc qdisc del dev "$VETH_A" root
		return
	fi
	emit c11c --tos 0,32,64 --count 300 --interval 300 --timeout 3000 -s --json "$WORK/c11c.json" \
		-l "$WORK/c11c.csv" --log-format csv --plot "$WORK/c11c.svg"
	expect_rc "shaped class" 0
	wait_exit "$REFLECTOR_PID" 10
	$tc qdisc del dev "$VETH_A" root
	"$RANT" --analyze "$WORK/c11c.csv" --json "$WORK/c11a.json" >"$WORK/c11a.out" 2>&1
	py_checks "shaped class" '
import re
c, a = j("c11c"), j("c11a")
cl, m = c["classes"], c["metrics"]
svg = open(os.path.join(W, "c11c.svg")).read()
def p(x, k, q="50"):
    return x[k]["percentiles_ns"][q]
for x in cl:
    for k in ("app_rtt", "client_tx_stack"):
        h = x.get(k)
        chk(h is not None and h["samples"] == x["rtt"]["samples"] == 100, "class %d: %s in the row, a sample per transaction" % (x["class"], k), h)
        if h:
            chk(h["min_ns"] <= h["avg_ns"] <= h["max_ns"] and h["min_ns"] <= p(x, k) <= p(x, k, "99") <= h["max_ns"],
                "class %d: %s min <= avg, p50 <= p99 <= max" % (x["class"], k), h)
for k in ("app_rtt", "client_tx_stack"):
    chk(sum(x[k]["samples"] for x in cl) == m[k]["samples"], "classes add up to the run: %s" % k)
s, o = cl[2], cl[:2]
# against the others' medians: their p99 is a loaded host's (31 ms seen here)
chk(p(s, "client_tx_stack") > 10 * max(p(x, "client_tx_stack") for x in o),
    "the shaped class: its tx stack p50 > 10 x the p50 of the others (the qdisc holds it)", [p(x, "client_tx_stack") for x in cl])
chk(p(s, "app_rtt") > 10 * max(p(x, "app_rtt") for x in o),
    "the shaped class: its app rtt p50 > 10 x the p50 of the others", [p(x, "app_rtt") for x in cl])
chk(10 * p(s, "rtt") < p(s, "client_tx_stack") and p(s, "rtt") < 10 * max(p(x, "rtt", "99") for x in o),
    "the shaped class: its wire rtt p50 under a tenth of its tx stack, under 10 x the p99 of the others (not on the wire)",
    [p(x, "rtt") for x in cl])
chk(all(a["classes"][k][h] == cl[k][h] for k in range(3) for h in ("app_rtt", "client_tx_stack")),
    "--analyze rebuilds app rtt and tx stack per class from the log", a["classes"][2]["client_tx_stack"])
def svg_num(i):
    g = re.search(r"id=\"%s\"[^>]*>([-0-9.]+)<" % i, svg)
    return g and round(float(g.group(1)) * 1000)
for k in ("app_rtt", "client_tx_stack"):
    chk(svg_num("class2-%s-p50" % k) == p(s, k) and svg_num("class2-%s-p99" % k) == p(s, k, "99") and
        abs(svg_num("class2-%s-avg" % k) - s[k]["avg_ns"]) <= 1, "plot: class 2 panel carries %s p50, p99, avg as the JSON" % k,
        (svg_num("class2-%s-p50" % k), p(s, k)))
chk(abs(svg_num("class2-avg") - s["rtt"]["avg_ns"]) <= 1 and abs(svg_num("rtt-avg") - m["rtt"]["avg_ns"]) <= 1,
    "plot: avg next to the percentiles (class panel, metric table)", svg_num("class2-avg"))
'
	check "shaped class: report has avg in the class table" grep -Eq '^class +sent +received +lost +loss +samples +min +avg +p50 ' "$WORK/c11c.out"
	check "shaped class: report has app rtt and tx stack per class" grep -Eq '^2  prio - tos 0x40 +app rtt +100 ' "$WORK/c11c.out"
	check "shaped class: --analyze prints them too" grep -Eq '^ +tx stack +100 ' "$WORK/c11a.out"
}

# 4. A size sweep: each size measured in turn, warm-up per size, counts exact;
#    the log has a SIZE column and --analyze rebuilds the same table.
t_sizes() {
	if ! reflector c4r --once --json "$WORK/c4r.json"; then
		not_ok "sizes: reflector listens"
		return
	fi
	emit c4c --size 64,128,256,512,1024,1400 --count 500 -w 20 --json "$WORK/c4c.json" \
		-l "$WORK/c4c.csv" --log-format csv
	expect_rc "sizes" 0
	wait_exit "$REFLECTOR_PID" 30
	"$RANT" --analyze "$WORK/c4c.csv" --json "$WORK/c4a.json" >"$WORK/c4a.out" 2>&1
	py_checks sizes '
import csv
c, r, a = j("c4c"), j("c4r"), j("c4a")
sz = c.get("sizes", [])
chk([x["size"] for x in sz] == [64, 128, 256, 512, 1024, 1400], "sizes in the order given", [x["size"] for x in sz])
for x in sz:
    p = x["packets"]
    chk(p["sent"] == 520 and p["received"] == 520 and p["warmup"] == 20 and x["rtt"]["samples"] == 500,
        "size %d: 520 sent and received, 20 warm-up, 500 samples" % x["size"], p)
    chk(sane(x), "size %d: min <= p50 <= p99 <= p99.9 <= max" % x["size"], x["rtt"])
chk(r["packets"]["received"] == 3120 and r["packets"]["warmup"] == 120, "reflector: 3120 pings, 120 warm-up", r["packets"])
rows = list(csv.DictReader(l for l in open(os.path.join(W, "c4c.csv")) if not l.startswith("#")))
by = {}
for row in rows:
    by.setdefault(int(row["size"]), []).append(int(row["seq"]))
chk(sorted(by) == [64, 128, 256, 512, 1024, 1400] and all(len(v) == 520 for v in by.values()), "log: 520 rows per size", {k: len(v) for k, v in by.items()})
chk(all(max(by[s]) < min(by[t]) for s, t in zip([64, 128, 256, 512, 1024], [128, 256, 512, 1024, 1400])), "log: sizes in turn, never mixed")
asz = a.get("sizes", [])
chk([(x["size"], x["packets"]["sent"], x["rtt"]["samples"], x["rtt"]["min_ns"], x["rtt"]["max_ns"], x["rtt"]["percentiles_ns"]) for x in asz] ==
    [(x["size"], x["packets"]["sent"], x["rtt"]["samples"], x["rtt"]["min_ns"], x["rtt"]["max_ns"], x["rtt"]["percentiles_ns"]) for x in sz],
    "--analyze rebuilds the size table from the log", asz[:1])
'
	check "sizes: report has the size table" grep -Eq '^1400 B +520 +520 +0 +0\.00% +500 ' "$WORK/c4c.out"
	check "sizes: --analyze prints the size table" grep -Eq '^1400 B +520 +520 +0 +0\.00% +500 ' "$WORK/c4a.out"
}

# 4b. A list that repeats a size: one row per turn, live and from the log.
#     The csv header says where each turn began (size_turns=), so even a
#     size repeated back to back is its own row; a text log has no header,
#     and a change of SIZE starts a turn there.
t_repeat_sizes() {
	local f
	for f in csv text; do
		if ! reflector "c4b$f-r" --once; then
			not_ok "repeated sizes ($f): reflector listens"
			return
		fi
		if [ "$f" = csv ]; then
			emit "c4b$f" --size 64,200,64,64 --count 150 -w 5 --json "$WORK/c4b$f.json" \
				-l "$WORK/c4b$f.log" --log-format csv
		else
			emit "c4b$f" --size 64,200,64 --count 150 -w 5 --json "$WORK/c4b$f.json" \
				-l "$WORK/c4b$f.log"
		fi
		expect_rc "repeated sizes ($f)" 0
		wait_exit "$REFLECTOR_PID" 10
		"$RANT" --analyze "$WORK/c4b$f.log" --json "$WORK/c4b$f-a.json" >"$WORK/c4b$f-a.out" 2>&1
	done
	py_checks "repeated sizes" '
for f, want in (("csv", [64, 200, 64, 64]), ("text", [64, 200, 64])):
    c, a = j("c4b" + f), j("c4b" + f + "-a")
    # a text log leaves warm-up rows out: its counts are without them, the samples the same
    key = lambda x: (x["size"], x["rtt"]["samples"], x["rtt"]["max_ns"]) + \
        ((x["packets"]["sent"], x["packets"]["received"], x["packets"]["warmup"]) if f == "csv" else ())
    chk([x["size"] for x in c["sizes"]] == want, "%s: one row per turn live (%s)" % (f, want), [x["size"] for x in c["sizes"]])
    chk([key(x) for x in a.get("sizes", [])] == [key(x) for x in c["sizes"]],
        "%s: --analyze has the same rows, the repeated size its own" % f, [key(x) for x in a.get("sizes", [])])
'
}

# 5. Classes x sizes, -d per size: rows add up; sizes on the wire by length.
t_matrix() {
	if ! reflector c5r --once; then
		not_ok "matrix: reflector listens"
		return
	fi
	emit c5c --priority 1,2 --size 64,512 --count 400 --json "$WORK/c5c.json" -l "$WORK/c5c.log"
	expect_rc "matrix" 0
	wait_exit "$REFLECTOR_PID" 30
	"$RANT" --analyze "$WORK/c5c.log" --json "$WORK/c5a.json" >"$WORK/c5a.out" 2>&1
	py_checks matrix '
c, a = j("c5c"), j("c5a")
for k, x in enumerate(c["classes"]):
    chk([(y["size"], y["packets"]["sent"], y["rtt"]["samples"]) for y in x["sizes"]] == [(64, 200, 200), (512, 200, 200)],
        "class %d: 200 per size" % k, x["sizes"])
    chk(sum(y["rtt"]["samples"] for y in x["sizes"]) == x["rtt"]["samples"], "class %d: its cells add up" % k)
chk([(x["size"], x["rtt"]["samples"]) for x in c["sizes"]] == [(64, 400), (512, 400)], "sizes over all classes", c["sizes"])
chk([[(y["size"], y["rtt"]["samples"], y["rtt"]["max_ns"]) for y in x["sizes"]] for x in a["classes"]] ==
    [[(y["size"], y["rtt"]["samples"], y["rtt"]["max_ns"]) for y in x["sizes"]] for x in c["classes"]],
    "--analyze of the text log rebuilds the matrix", a.get("classes"))
'
	check "matrix: text log has CLASS and SIZE columns" grep -q '^SEQ T1_KSW T4_KSW RTT CLASS SIZE$' "$WORK/c5c.log"
}

# 6. -d per size with an interval: each size gets its share of the time.
t_duration() {
	if ! reflector c6r --once; then
		not_ok "duration: reflector listens"
		return
	fi
	emit c6c --size 64,1000 -d 0.5 --interval 1000 --json "$WORK/c6c.json"
	expect_rc "duration" 0
	wait_exit "$REFLECTOR_PID" 30
	py_checks duration '
c = j("c6c")
sz = c["sizes"]
chk(len(sz) == 2 and all(x["packets"]["sent"] > 50 for x in sz), "both sizes measured", [x["packets"] for x in sz])
chk(sum(x["packets"]["sent"] for x in sz) == c["packets"]["sent"], "sizes add up to the run")
# never shorter than 2 x 0.5 s; longer only by what a loaded host adds
chk(0.9 <= c["duration_s"] <= 20, "-d is per size: about 1 s in all", c["duration_s"])
'
}

# 7. Breach lines name the class; the class is the one of that seq.
t_breach() {
	if ! reflector c7r --once; then
		not_ok "breach: reflector listens"
		return
	fi
	emit c7c --priority 1,2,3 --count 60 -t 0.001 -C
	expect_rc "breach" 3
	wait_exit "$REFLECTOR_PID" 30
	check "breach: lines name class and priority" grep -Eq '^Threshold breach: seq [0-9]+, rtt [0-9]+ ns > threshold 1 ns class=[0-2] priority=[1-3]$' "$WORK/c7c.out"
	check "breach: the class is the seq's" awk '/^Threshold breach: seq/ { s = $4 + 0; split($NF, p, "="); split($(NF-1), c, "=");
		if (c[2] != s % 3 || p[2] != s % 3 + 1) bad++; n++ } END { exit !(n > 0 && !bad) }' "$WORK/c7c.out"
	check "breach: per class counts in the table" grep -Eq '^0  prio 1 tos - +20 +20 +0 +0\.00% +20 .* 20$' "$WORK/c7c.out"
}

# 8. A size above the MTU: exit 2, one line naming the MTU, nothing sent.
t_mtu() {
	local before after
	before=$(udp_in_b)
	emit c8c --size 64,1473 --count 10
	after=$(udp_in_b)
	expect_rc "mtu" 2
	check "mtu: one line naming the MTU" grep -Eq '^rant: --size: 1473 bytes exceed the path MTU 1500 to .* \(at most 1472 bytes of UDP payload' "$WORK/c8c.err"
	expect_eq "mtu: nothing sent" "$after" "$before"
}

udp_in_b() {
	ip netns exec "$NS_B" awk '$1 == "Udp:" && $2 ~ /^[0-9]+$/ { n += $2 + $3 + $4 } END { print n + 0 }' /proc/net/snmp
}

# 9. One value of each: no class or size table, no new JSON keys or columns.
t_single() {
	if ! reflector c9r --once; then
		not_ok "single: reflector listens"
		return
	fi
	emit c9c --priority 3 --tos 32 --size 100 --count 200 --json "$WORK/c9c.json" -l "$WORK/c9c.log"
	expect_rc "single" 0
	wait_exit "$REFLECTOR_PID" 30
	py_checks single '
c = j("c9c")
chk("classes" not in c and "sizes" not in c and c["size"] == 100, "JSON without classes or sizes", list(c))
chk(c["packets"]["sent"] == 200 and c["metrics"]["rtt"]["samples"] == 200, "counts as ever", c["packets"])
'
	check "single: log header as ever" grep -q '^SEQ T1_KSW T4_KSW RTT$' "$WORK/c9c.log"
	check "single: no class or size table" bash -c '! grep -Eq "^--- (Classes|Sizes)" "$1"' _ "$WORK/c9c.out"
}

# 10. Each class at its own --interval: the faster class sends more, each
#     class's counts are exact, the reflector agrees, the log keeps classes.
t_own_interval() {
	if ! reflector c10r --once --json "$WORK/c10r.json"; then
		not_ok "own interval: reflector listens"
		return
	fi
	emit c10c --priority 1,2,3 --tos 0,32,64 --interval 1000,2000,4000 -d 2 --json "$WORK/c10c.json" \
		-l "$WORK/c10c.csv" --log-format csv
	expect_rc "own interval" 0
	wait_exit "$REFLECTOR_PID" 30
	py_checks "own interval" '
import csv
c, r = j("c10c"), j("c10r")
cl = c["classes"]
s = [x["packets"]["sent"] for x in cl]
chk([x["interval_us"] for x in cl] == [1000, 2000, 4000], "classes keep their intervals", cl[0])
chk(s[0] > s[1] > s[2] > 0, "the 1 ms class sends most, the 4 ms class least", s)
chk(s[1] * 1.3 < s[0] and s[2] * 1.3 < s[1], "sends follow the cadences (about 4:2:1)", s)
chk(all(x["packets"]["received"] + x["packets"]["lost"] == x["packets"]["sent"] for x in cl), "each class: sent = received + lost")
chk(sum(s) == c["packets"]["sent"], "classes add up to the run")
# a pong on its way when -d ended was answered, not received (how many depends on the host)
ans = {x["tos"]: x["answered"] for x in r["classes"]}
chk(all(x["packets"]["received"] <= ans.get(x["tos"], -1) <= x["packets"]["sent"] for x in cl),
    "reflector answered each class at least as often as it came back, at most as it was sent", (ans, [x["packets"] for x in cl]))
rows = list(csv.DictReader(l for l in open(os.path.join(W, "c10c.csv")) if not l.startswith("#")))
n = [sum(1 for x in rows if x["class"] == str(k)) for k in range(3)]
chk(n == s, "log rows per class = sent per class", n)
'
}

main() {
	need_root "classes and sizes"
	if ! ns_setup; then
		not_ok "veth namespaces"
		finish
		exit 1
	fi
	t_classes
	t_classes_spin
	t_wire
	t_drop_one
	t_shaped
	t_sizes
	t_repeat_sizes
	t_matrix
	t_duration
	t_breach
	t_mtu
	t_single
	t_own_interval
	finish
}

main "$@"
