#!/bin/bash
# Integration tests of --series: the run as it goes, one JSON line per
# interval.  What a dashboard or crucible's metric store relies on: every
# line parses, the intervals follow each other without a gap, each line's
# numbers are consistent (min <= p50 <= p99 <= p99.9 <= max), and the lines
# add up to the end-of-run report exactly -- packets, breaches under -C,
# every metric's samples, its extremes, per class -- for a live run, a run
# with loss and late pongs, a run ended by SIGINT, and --analyze of the same
# run's log.  Bad input: exit 2 before anything is sent, no file touched.
#
#   sudo bash tests/net-series.sh        (RANT=path overrides the binary)

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

# LABEL SERIES JSON [CLASSES]: the series against the report, line by line
PY_PRELUDE='
def check_series(label, sp, jp, classes=0, source="live"):
    lines = [json.loads(l) for l in open(sp)]
    rep = load(jp)
    t(label + ": first line says what follows", lines and lines[0].get("type") == "start"
      and lines[0].get("source") == source, lines[:1])
    t(label + ": last line ends it", lines and lines[-1].get("type") == "end", lines[-1:])
    iv = [l for l in lines if l.get("type") == "interval"]
    t(label + ": the end line counts the intervals", lines[-1].get("intervals") == len(iv),
      (lines[-1], len(iv)))
    t(label + ": no event dropped", lines[-1].get("dropped") == 0
      and all(l["dropped"] == 0 for l in iv), lines[-1])
    gaps = [(a["interval"], b["interval"]) for a, b in zip(iv, iv[1:])
            if b["interval"] != a["interval"] + 1 or abs(b["start_s"] - a["end_s"]) > 1e-6]
    t(label + ": intervals follow each other", iv and iv[0]["interval"] == 0 and not gaps, gaps[:3])
    bad = []
    for k in ("sent", "received", "lost", "late", "warmup"):
        s = sum(l["packets"][k] for l in iv)
        if s != rep["packets"][k]:
            bad.append("%s %d != %d" % (k, s, rep["packets"][k]))
    b = sum(l["threshold_breaches"] for l in iv)
    if b != rep["threshold"]["count"]:
        bad.append("breaches %d != %d" % (b, rep["threshold"]["count"]))
    for m, r in rep["metrics"].items():
        got = [l["metrics"][m] for l in iv if m in l["metrics"] and l["metrics"][m]["samples"]]
        s = sum(g["samples"] for g in got)
        if s != r["samples"]:
            bad.append("%s samples %d != %d" % (m, s, r["samples"]))
            continue
        if min(g["min_ns"] for g in got) != r["min_ns"] or max(g["max_ns"] for g in got) != r["max_ns"]:
            bad.append("%s extremes" % m)
        for g in got:
            p = g["percentiles_ns"]
            if not g["min_ns"] <= p["p50"] <= p["p99"] <= p["p99.9"] <= g["max_ns"]:
                bad.append("%s not ordered: %s" % (m, g))
    for l in iv:
        if set(l["metrics"]) - set(lines[0]["metrics"]):
            bad.append("a metric the first line does not name")
    t(label + ": the intervals add up to the report (packets, breaches, samples, extremes)",
      not bad, "; ".join(bad[:5]))
    if not classes:
        return lines
    bad = []
    for c in range(classes):
        rc = rep["classes"][c]
        for k in ("sent", "received", "lost", "late", "warmup"):
            s = sum(l["classes"][c]["packets"][k] for l in iv)
            if s != rc["packets"][k]:
                bad.append("class %d %s %d != %d" % (c, k, s, rc["packets"][k]))
        s = sum(l["classes"][c]["threshold_breaches"] for l in iv)
        if s != rc["threshold_breaches"]:
            bad.append("class %d breaches %d != %d" % (c, s, rc["threshold_breaches"]))
        s = sum(l["classes"][c]["rtt"]["samples"] for l in iv)
        if s != rc["rtt"]["samples"]:
            bad.append("class %d rtt samples %d != %d" % (c, s, rc["rtt"]["samples"]))
    tot = [sum(l["classes"][c]["packets"]["sent"] for c in range(classes)) == l["packets"]["sent"]
           for l in iv]
    t(label + ": per class, the intervals add up to the report classes", not bad and all(tot),
      "; ".join(bad[:5]))
    return lines
'

need_root "net-series"
ns_setup || {
	not_ok "namespaces and veth"
	finish
}
PORT=23460

# --- a run shaped like an hour-long one, scaled down: many intervals, -C breaches
reflector_or hour refl1 --port $PORT -q || finish
emit hour --port $PORT -d 4 --interval 500 -t 40 -C --series "$WORK/hour.jsonl" \
	--series-every 0.2 --json "$WORK/hour.json" -l "$WORK/hour.csv" --log-format csv \
	--plot "$WORK/hour.svg" -q
expect_eq "hour: exit 3 (breaches under -C) or 0" "$((EMIT_RC == 3 ? 0 : EMIT_RC))" 0
py_checks hour '
lines = check_series("hour", sys.argv[1], sys.argv[2])
iv = [l for l in lines if l["type"] == "interval"]
t("many intervals (about 20 of 0.2 s)", len(iv) >= 15, len(iv))
r = load(sys.argv[2])
t("the end line names why the run stopped", lines[-1]["stop_reason"] == r["stop_reason"],
  (lines[-1], r["stop_reason"]))
# the plot draws the lines: one tooltip per interval, with its numbers
tips = re.findall(r"<title>interval (\d+): ([^<]*)</title>", open(sys.argv[3]).read())
t("the plot has an interval per line", len(tips) == len(iv), (len(tips), len(iv)))
bad = []
for (k, text), l in zip(tips, iv):
    m = l["metrics"]["rtt"]
    want = "samples %d" % m["samples"]
    if m["samples"]:
        p = m["percentiles_ns"]
        want += ", min %d ns, p50 %d ns, p99 %d ns, p99.9 %d ns, max %d ns" % (
            m["min_ns"], p["p50"], p["p99"], p["p99.9"], m["max_ns"])
    want += ", sent %d, lost %d, breaches %d" % (l["packets"]["sent"], l["packets"]["lost"],
                                                 l["threshold_breaches"])
    if int(k) != l["interval"] or want not in text:
        bad.append((k, text, want))
t("each interval drawn with its line'"'"'s numbers", not bad, bad[:2])
' "$WORK/hour.jsonl" "$WORK/hour.json" "$WORK/hour.svg"

# --analyze of the same log: the same totals, its intervals by T1
in_a "$RANT" --analyze "$WORK/hour.csv" -t 40 -C --series "$WORK/ana.jsonl" --series-every 0.2 \
	--json "$WORK/ana.json" -q >"$WORK/ana.out" 2>&1
rc=$?
expect_eq "analyze: exit 3 (the same breaches) or 0" "$((rc == 3 ? 0 : rc))" 0
py_checks analyze '
check_series("analyze", sys.argv[1], sys.argv[2], source="log")
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[3])]
sa = sum(l["packets"]["sent"] for l in a if l["type"] == "interval")
sb = sum(l["packets"]["sent"] for l in b if l["type"] == "interval")
t("the log gives the live run'"'"'s total", sa == sb, (sa, sb))
' "$WORK/ana.jsonl" "$WORK/ana.json" "$WORK/hour.jsonl"

# --- classes: three priorities, each its own cadence
emit cls --port $PORT -d 3 --priority 1,2,3 --interval 1000,2000,3000 -t 40 -C \
	--series "$WORK/cls.jsonl" --series-every 0.5 --json "$WORK/cls.json" -q \
	-l "$WORK/cls.csv" --log-format csv
expect_eq "classes: exit 3 or 0" "$((EMIT_RC == 3 ? 0 : EMIT_RC))" 0
py_checks classes '
check_series("classes", sys.argv[1], sys.argv[2], classes=3)
' "$WORK/cls.jsonl" "$WORK/cls.json"
# --analyze of its log: the same three classes, said in the first line and in every line
in_a "$RANT" --analyze "$WORK/cls.csv" -t 40 -C --series "$WORK/clsa.jsonl" --series-every 0.5 \
	--json "$WORK/clsa.json" -q >/dev/null 2>&1
py_checks "classes, analyze" '
lines = check_series("classes, analyze", sys.argv[1], sys.argv[2], classes=3, source="log")
t("the first line names 3 classes, every line lists 3", lines[0]["classes"] == 3 and
  all(len(l["classes"]) == 3 for l in lines if l["type"] == "interval"), lines[0])
' "$WORK/clsa.jsonl" "$WORK/clsa.json"
# --analyze --series - into a full device: one line naming the failure, exit 1
"$RANT" --analyze "$WORK/cls.csv" --series - -q >/dev/full 2>"$WORK/full.err"
expect_eq "analyze to a full stdout: exit 1" "$?" 1
check "analyze to a full stdout: one line names it" grep -q "^rant: --series: writing - failed" "$WORK/full.err"

# --- loss and late pongs: the reflector stopped for 0.3 s, a 20 ms timeout
emit_bg loss --port $PORT -d 3 --interval 2000 --timeout 20 --series "$WORK/loss.jsonl" \
	--series-every 0.5 --json "$WORK/loss.json" -q
wait_for 30 grep -q '"type": "interval"' "$WORK/loss.jsonl"
kill -STOP "$REFLECTOR_PID"
sleep 0.3
kill -CONT "$REFLECTOR_PID"
wait_exit "$EMIT_PID" 30
expect_exit "loss: exit 0" loss 0
py_checks loss '
lines = check_series("loss", sys.argv[1], sys.argv[2])
r = load(sys.argv[2])
t("pongs were lost (the reflector was stopped)", r["packets"]["lost"] > 0, r["packets"])
' "$WORK/loss.jsonl" "$WORK/loss.json"

# --- SIGINT: the lines so far, the last interval and the end are there
emit_bg sig --port $PORT --interval 1000 --series "$WORK/sig.jsonl" --series-every 0.25 \
	--json "$WORK/sig.json" -q
wait_for 30 test -s "$WORK/sig.jsonl"
wait_for 30 grep -q '"interval": 2,' "$WORK/sig.jsonl"
kill -INT "$EMIT_PID"
wait_exit "$EMIT_PID" 30
expect_exit "sigint: exit 0" sig 0
py_checks sigint '
lines = check_series("sigint", sys.argv[1], sys.argv[2])
t("the end line says signal", lines[-1]["stop_reason"] == "signal", lines[-1])
' "$WORK/sig.jsonl" "$WORK/sig.json"

# --- --series -: stdout holds the lines only, the report goes to stderr
emit stdout --port $PORT --count 300 --interval 1000 --series - --series-every 0.1 -q
expect_rc "stdout" 0
py_checks stdout '
ok = all(json.loads(l)["type"] in ("start", "interval", "end") for l in open(sys.argv[1]))
t("every stdout line is a series line", ok)
t("the report went to stderr", "Round-Trip" in open(sys.argv[2]).read())
' "$WORK/stdout.out" "$WORK/stdout.err"

# --- a full disk (an 8 KiB file-size limit; rant ignores SIGXFSZ): exit 1, one line, the report
(
	ulimit -f 8
	in_a "$RANT" -a "$ADDR_B" --port $PORT -d 2 --interval 1000 --series "$WORK/big.jsonl" \
		--series-every 0.1 -q >"$WORK/big.out" 2>"$WORK/big.err"
)
expect_eq "full disk: exit 1" "$?" 1
check "full disk: one line names the file and the error" \
	grep -qx "rant: --series: writing $WORK/big.jsonl failed: File too large" "$WORK/big.err"
check "full disk: the report still written" grep -q '^Packets: sent [1-9]' "$WORK/big.out"
py_checks "full disk" '
text = open(sys.argv[1]).read()
lines = text.split("\n")
t("the file ends with a whole line", text.endswith("\n") and len(lines) > 2, len(lines))
ok = True
try:
    [json.loads(l) for l in lines[:-1]]
except ValueError:
    ok = False
t("every line kept parses", ok)
' "$WORK/big.jsonl"

# --- bad input: exit 2, one line, nothing made, nothing sent
refused() { # LABEL PATTERN rant options...
	local label=$1 pat=$2 rc
	shift 2
	"$@" >"$WORK/bad.out" 2>"$WORK/bad.err"
	rc=$?
	expect_eq "$label: exit 2" "$rc" 2
	check "$label: one line naming the problem" grep -q -- "$pat" "$WORK/bad.err"
	expect_eq "$label: one line on stderr" "$(wc -l <"$WORK/bad.err")" 1
}
refused "reflector" "only for emit" in_b "$RANT" --port $((PORT + 1)) --series "$WORK/r.jsonl"
refused "stdout twice" "give one of them a file" in_a "$RANT" -a "$ADDR_B" --port $PORT \
	--series - --json - --count 5
refused "interval 0" "series-every" in_a "$RANT" -a "$ADDR_B" --port $PORT \
	--series "$WORK/z.jsonl" --series-every 0 --count 5
refused "same file as the json" "also the --json file" in_a "$RANT" -a "$ADDR_B" --port $PORT \
	--series "$WORK/j.json" --json "$WORK/j.json" --count 5
refused "a directory that is not there" "cannot create" in_a "$RANT" -a "$ADDR_B" --port $PORT \
	--series "$WORK/nodir/s.jsonl" --count 5
check "nothing was made" test ! -e "$WORK/z.jsonl" -a ! -e "$WORK/j.json"
echo "keep" >"$WORK/keep.jsonl"
in_b "$RANT" --port $((PORT + 2)) -l "$WORK/refl.log" -q >/dev/null 2>&1 &
BG_PIDS+=($!)
wait_for 30 udp_listening "$NS_B" $((PORT + 2))
in_a "$RANT" -a "$ADDR_B" --port $((PORT + 2)) --count 20 -q >/dev/null 2>&1
wait_for 30 grep -q '^19 ' "$WORK/refl.log"
refused "analyze of a reflect log" "a client's (emit) log" "$RANT" --analyze "$WORK/refl.log" \
	--series "$WORK/keep.jsonl"
expect_eq "the series file it refused is as it was" "$(cat "$WORK/keep.jsonl")" keep

finish
