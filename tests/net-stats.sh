#!/bin/bash
# Integration tests of the statistics, histogram, threshold and tracing
# contract (Output, Tracing): counts, structure and consistency
# between the text report, the JSON report and the transaction log, never
# absolute latencies.  Clients run in NS_A through `ip netns exec`, the way
# users run rant in a namespace.
#
#   sudo bash tests/net-stats.sh        (RANT=path overrides the binary)

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${COUNT:=3000}"
: "${WARMUP:=50}"
TRACEFS=/sys/kernel/tracing
INST="rant_t$$"
INST_DIR="$TRACEFS/instances/$INST"
MOUNTED_TRACEFS=0
# How -T clients reach tracefs: "plain" ip netns exec (rant's own fallback),
# or "mount" (tracefs mounted in a private mount namespace) when the
# fallback does not work here, so the tracing behaviour is still tested.
TRACE_VIA=plain
SYNTH="$(dirname "$0")/net-log.d/synth-log.py"
GEN="$(dirname "$0")/plot-gen"

stats_cleanup() {
	cleanup
	[ -d "$INST_DIR" ] && rmdir "$INST_DIR" 2>/dev/null
	[ "$MOUNTED_TRACEFS" = 1 ] && umount "$TRACEFS" 2>/dev/null
}
trap stats_cleanup EXIT

# The python half of the checks: a prelude that reports like ok/not_ok.
PY_PRELUDE='
import json, re, sys
from fractions import Fraction
from math import ceil
PCT = ["50", "90", "95", "99", "99.9", "99.99", "99.999"]
def nearest_rank(sorted_vals, p):
    n = len(sorted_vals)
    r = max(1, ceil(Fraction(p) * n / 100))
    return sorted_vals[min(r, n) - 1]
def pct_bad(v, m):
    """Percentiles of metric m that miss the contract: below the bound the
    top of the bucket of the nearest-rank sample (true <= reported < true +
    bucket), above it the exact value while the exact store held every
    outlier (percentiles_approximate false), else within the error each
    percentile states (percentiles_error_ns), itself within 0.1 %."""
    h, bad = m["histogram"], []
    for k in PCT:
        true, rep, err = nearest_rank(v, k), m["percentiles_ns"][k], m["percentiles_error_ns"][k]
        if true < h["bound_ns"] and true >= 0:
            good = true <= rep < true + h["bucket_ns"]
        elif not m["percentiles_approximate"]:
            good = rep == true and err == 0
        else:
            good = abs(rep - true) <= err and err * 1000 <= abs(true)
        if not good:
            bad.append("p%s: reported %d +- %d, nearest rank %d" % (k, rep, err, true))
    return "; ".join(bad)
'

# clients of the reflector main starts use remit (tests/lib.sh)
SHARED_REFLECTOR=refl

# ---------------------------------------------------------------- histogram

PY_JSON_HIST='
d = load(sys.argv[1]); n = int(sys.argv[2])
m = d["metrics"]["rtt"]
t("json samples == --count", m["samples"] == n, m["samples"])
p = [m["percentiles_ns"][k] for k in PCT]
t("json percentiles monotonic", all(a <= b for a, b in zip(p, p[1:])), p)
t("json percentiles within [min,max]", all(m["min_ns"] <= v <= m["max_ns"] for v in p),
  (m["min_ns"], p, m["max_ns"]))
h = m["histogram"]
b = h["buckets"]
t("json buckets sum + outside == samples", sum(c for _, c in b) + h["outside"] == n,
  (sum(c for _, c in b), h["outside"], n))
t("json bucket bounds are multiples of bucket_ns below bound_ns, increasing",
  all(lo % h["bucket_ns"] == 0 and 0 <= lo < h["bound_ns"] for lo, _ in b) and
  all(x[0] < y[0] for x, y in zip(b, b[1:])))
t("json bucket_ns/bound_ns as asked", (h["bucket_ns"], h["bound_ns"]) == (int(sys.argv[3]), int(sys.argv[4])),
  (h["bucket_ns"], h["bound_ns"]))
t("json packets: sent == count + warm-up", d["packets"]["sent"] == n + int(sys.argv[5]), d["packets"])
'

PY_TEXT_HIST='
d = load(sys.argv[1]); n = int(sys.argv[2]); text = open(sys.argv[3]).read()
m = d["metrics"]["rtt"]
i = text.find("--- Histogram Summary")
t("text has the Histogram Summary", i >= 0)
blk = text[i:] if i >= 0 else ""
s = re.search(r"^Samples: (\d+)$", blk, re.M)
t("text Samples == --count", s and int(s.group(1)) == n, s and s.group(1))
mn = re.search(r"^Min: (-?\d+) ns \(seq (\d+)\)$", blk, re.M)
mx = re.search(r"^Max: (-?\d+) ns \(seq (\d+)\)$", blk, re.M)
t("text Min line with (seq K) == json min/min_seq",
  mn and (int(mn.group(1)), int(mn.group(2))) == (m["min_ns"], m["min_seq"]), mn and mn.groups())
t("text Max line with (seq K) == json max/max_seq",
  mx and (int(mx.group(1)), int(mx.group(2))) == (m["max_ns"], m["max_seq"]), mx and mx.groups())
pl = dict(re.findall(r"^\s+([0-9.]+)%: (-?\d+) ns(?: \+- \d+ ns)?$", blk, re.M))
t("text has the 7 percentile lines", sorted(pl) == sorted(PCT), sorted(pl))
t("text percentiles == json percentiles", all(int(pl.get(k, -1)) == m["percentiles_ns"][k] for k in PCT))
bars = re.findall(r"^\s+(\d+) - (\d+)\s+(\d+) (#+)$", blk, re.M)
# bars when the JSON has buckets (none when every sample is above a small
# bound: how many fall below it depends on the host)
t("text has histogram bars, as the JSON has buckets", (len(bars) > 0) == (len(m["histogram"]["buckets"]) > 0),
  (len(bars), len(m["histogram"]["buckets"])))
o = re.search(r"outside \[0, \d+\) ns: (\d+) above[^,]*, (\d+) below", blk)
outside = int(o.group(1)) + int(o.group(2)) if o else 0
t("text bars + outside == samples", sum(int(c) for _, _, c, _ in bars) + outside == n,
  (sum(int(c) for _, _, c, _ in bars), outside))
'

# Percentiles against a brute-force nearest rank over the run's own log:
# below the bound true <= reported < true + bucket, above it exact.
PY_PCT_EXACT='
d = load(sys.argv[1]); m = d["metrics"]["rtt"]
v = sorted(int(r["rtt_ns"]) for r in rows(sys.argv[2]) if r["status"] == "ok")
t("log has one ok row per sample", len(v) == m["samples"], (len(v), m["samples"]))
bad = pct_bad(v, m)
t("percentiles exact to the bucket (brute force over the log)", not bad, bad)
'

# hist_run TAG BUCKET_NS BOUND_NS [options]: -H run, checked three ways
hist_run() {
	local tag=$1 bns=$2 ons=$3
	shift 3
	remit "$tag" -s -w "$WARMUP" --count "$COUNT" -H -q --json "$WORK/$tag.json" \
		-l "$WORK/$tag.csv" --log-format csv "$@"
	expect_rc "histogram $tag" 0
	[ "$EMIT_RC" = 0 ] || return
	py_checks "histogram $tag" "$PY_JSON_HIST" "$WORK/$tag.json" "$COUNT" "$bns" "$ons" "$WARMUP"
	py_checks "histogram $tag" "$PY_TEXT_HIST" "$WORK/$tag.json" "$COUNT" "$WORK/$tag.out"
	py_checks "histogram $tag" "$PY_PCT_EXACT" "$WORK/$tag.json" "$WORK/$tag.csv"
}

test_histogram() {
	hist_run default 100 1000000
	hist_run b0.5-o50 500 50000 -b 0.5 -o 50
	# the bound is not a multiple of the bucket: the last bucket is cut short
	hist_run b3-o10 3000 10000 -b 3 -o 10
}

# Long runs: more samples above the bound (-o 1: all of them) than the exact
# store holds (16384).  Every percentile against the exact nearest rank
# from the csv log: within the error it states, which is within 0.1 %, in
# the JSON, the text table and the -H block alike.
test_percentile_long() {
	local n=40000
	remit long -o 1 --count "$n" -H -q --json "$WORK/long.json" -l "$WORK/long.csv" --log-format csv
	expect_rc "long run, -o 1, $n samples" 0
	[ "$EMIT_RC" = 0 ] || return
	py_checks "long run" '
d = load(sys.argv[1]); m = d["metrics"]["rtt"]; text = open(sys.argv[3]).read()
v = sorted(int(r["rtt_ns"]) for r in rows(sys.argv[2]) if r["status"] == "ok")
t("log has one ok row per sample (%d)" % len(v), len(v) == m["samples"], (len(v), m["samples"]))
t("more outliers than the exact store: approximate, said", m["percentiles_approximate"] is True and
  m["histogram"]["outside"] > 16384, (m["percentiles_approximate"], m["histogram"]["outside"]))
bad = pct_bad(v, m)
t("every percentile within its stated error of the exact nearest rank, within 0.1 %", not bad, bad)
row = re.search(r"^rtt \(T4-T1 wire\).*\(tail \+- (\d+) ns at most, within 0\.1 %", text, re.M)
t("the percentile table says by how much at most", row is not None and
  int(row.group(1)) == max(m["percentiles_error_ns"].values()), row and row.group(0))
pl = re.findall(r"^\s+[0-9.]+%: -?\d+ ns \+- (\d+) ns$", text, re.M)
t("the -H percentiles say it per line", len(pl) >= 1, len(pl))
' "$WORK/long.json" "$WORK/long.csv" "$WORK/long.out"
	# the same through --analyze of a synthetic log (tests/plot-gen): 200000
	# rows, half of them above -o 20
	if [ ! -x "$GEN" ]; then
		skip "long log: tests/plot-gen not built (make tests/plot-gen)"
		return
	fi
	"$GEN" 200000 "$WORK/gen.log" 2>/dev/null
	"$RANT" --analyze "$WORK/gen.log" -o 20 --json "$WORK/gen.json" >/dev/null 2>"$WORK/gen.err"
	expect_eq "long log: --analyze -o 20 exits 0" "$?" 0
	py_checks "long log" '
m = load(sys.argv[1])["metrics"]["rtt"]
v = sorted(int(l.split()[3]) for l in open(sys.argv[2]) if l[:1].isdigit() and l.split()[3].isdigit())
t("more outliers than the exact store (%d)" % m["histogram"]["outside"], m["histogram"]["outside"] > 16384 and
  m["percentiles_approximate"] is True, m["histogram"]["outside"])
bad = pct_bad(v, m)
t("every percentile within its stated error of the exact nearest rank, within 0.1 %", not bad, bad)
' "$WORK/gen.json" "$WORK/gen.log"
}

# Deterministic nearest-rank check: a synthetic log whose i-th RTT is
# (i+1) us, read back with --analyze (the same statistics code).
test_percentile_rank() {
	local log="$WORK/synth.csv" n
	for n in 1000 2000 3000; do
		python3 "$SYNTH" "$n" "$log" 1000 || { not_ok "synthetic log $n"; continue; }
		"$RANT" --analyze "$log" -H --json "$WORK/synth.json" >/dev/null 2>"$WORK/synth.err"
		py_checks "nearest rank, $n synthetic samples" '
d = load(sys.argv[1]); m = d["metrics"]["rtt"]
v = [(i + 1) * 1000 for i in range(int(sys.argv[2]))]
bad = pct_bad(v, m)
t("percentiles match the ceil(p/100*n)-th sample", not bad, bad)
' "$WORK/synth.json" "$n"
	done
}

# ---------------------------------------------------------------- threshold

test_threshold_stop() {
	remit tstop -s --count 1000 -t 0.001 -q --json "$WORK/tstop.json"
	expect_rc "-t stop" 3
	check "-t stop: 'Stopped by: threshold'" grep -qx 'Stopped by: threshold' "$WORK/tstop.out"
	check "-t stop: breakdown printed" grep -q '^Threshold breach: seq [0-9]*, rtt [0-9]* ns > threshold 1 ns' "$WORK/tstop.out"
	check "-t stop: dominant segment marked" grep -q '<-- where the spike is' "$WORK/tstop.out"
	py_checks "-t stop" '
d = load(sys.argv[1])
t("json threshold.exceeded true", d["threshold"]["exceeded"] is True, d["threshold"])
t("json threshold.count >= 1", d["threshold"]["count"] >= 1, d["threshold"])
t("json exit_code 3", d["exit_code"] == 3, d["exit_code"])
t("json stop_reason threshold", d["stop_reason"] == "threshold", d["stop_reason"])
t("it stopped: sent is small", d["packets"]["sent"] < 100, d["packets"]["sent"])
' "$WORK/tstop.json"
}

# floor_us: the least rtt of an earlier run, in us: a threshold most
# samples of a later run breach, however loaded the host is then, and some
# may not (the median breached none when the host had become quieter)
floor_us() {
	awk -v n="$(json_get "$WORK/default.json" metrics.rtt.min_ns 2>/dev/null)" \
		'BEGIN { printf "%.3f", (n > 1 ? n : 1) / 1000 }'
}

# -C with the threshold at the floor of an earlier run: most samples breach.
test_threshold_continue() {
	local us
	us=$(floor_us)
	remit tcont -s --count 2000 -t "$us" -C -q --json "$WORK/tcont.json" -l "$WORK/tcont.csv" --log-format csv
	expect_rc "-C (threshold $us us)" 3
	check "-C: 'Stopped by: count'" grep -qx 'Stopped by: count' "$WORK/tcont.out"
	py_checks "-C" '
d = load(sys.argv[1]); thr = round(d["threshold"]["us"] * 1000); th = d["threshold"]
n = d["metrics"]["rtt"]["samples"]
t("runs to the full count", n == 2000, n)
t("threshold.count > 0", th["count"] > 0, th)
above = sum(1 for r in rows(sys.argv[2]) if r["status"] == "ok" and int(r["rtt_ns"]) > thr)
t("threshold.count == log rows with rtt_ns > threshold", th["count"] == above, (th["count"], above))
t("percent == 100*count/samples", abs(th["percent"] - 100.0 * th["count"] / n) < 1e-5, th)
t("exceeded true, exit_code 3", th["exceeded"] is True and d["exit_code"] == 3)
text = open(sys.argv[3]).read()
shown = len(re.findall(r"^Threshold breach: seq", text, re.M))
t("at most 10 breakdowns in the text report", shown == min(th["count"], 10), (shown, th["count"]))
tl = re.search(r"^Threshold: [0-9.]+ us, exceeded (\d+) times", text, re.M)
t("text Threshold line count == json count", tl and int(tl.group(1)) == th["count"], tl and tl.group(0))
' "$WORK/tcont.json" "$WORK/tcont.csv" "$WORK/tcont.out"
}

test_reflector_threshold() {
	local rc
	reflector rthr --port 12401 -s -t 0.001 || { not_ok "reflector -t 0.001 did not start"; return; }
	emit ethr --port 12401 -s --count 1000 -q --json "$WORK/ethr.json"
	expect_rc "reflector -t: client" 3
	check "reflector -t: client says why" grep -q 'The reflector stopped on its threshold' "$WORK/ethr.out"
	check "reflector -t: client 'Stopped by: peer_threshold'" grep -qx 'Stopped by: peer_threshold' "$WORK/ethr.out"
	expect_eq "reflector -t: json stop_reason" "$(json_get "$WORK/ethr.json" stop_reason)" peer_threshold
	expect_eq "reflector -t: json exit_code" "$(json_get "$WORK/ethr.json" exit_code)" 3
	if wait_for 30 not_running "$REFLECTOR_PID"; then
		wait "$REFLECTOR_PID"
		rc=$?
		expect_eq "reflector -t: reflector exit status" "$rc" 3
		check "reflector -t: reflector 'Stopped by: threshold'" grep -qx 'Stopped by: threshold' "$WORK/rthr.out"
	else
		not_ok "reflector -t: the reflector did not exit after its breach"
	fi
}

# ------------------------------------------------------------------ tracing

trace_setup() {
	if [ ! -d "$TRACEFS/instances" ] && mount -t tracefs nodev "$TRACEFS" 2>/dev/null; then
		MOUNTED_TRACEFS=1
	fi
	[ -d "$TRACEFS/instances" ] || return 1
	mkdir "$INST_DIR" || return 1
	echo 4096 >"$INST_DIR/buffer_size_kb" 2>/dev/null
	echo 1 >"$INST_DIR/tracing_on"
}

trace_reset() {
	echo 1 >"$INST_DIR/tracing_on"
	: >"$INST_DIR/trace"
}

marks() {
	grep -c "tracing_mark_write: $1" "$INST_DIR/trace"
}

# temit NAME [options]: a client for the tracing tests (see TRACE_VIA)
temit() {
	local name=$1
	shift
	if [ "$TRACE_VIA" = plain ]; then
		remit "$name" "$@"
		return
	fi
	shared_settle
	ip netns exec "$NS_A" unshare -m --propagation private \
		sh -c 'mount -t tracefs nodev /sys/kernel/tracing && exec "$@"' sh \
		"$RANT" -i "$VETH_A" -a "$ADDR_B" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	EMIT_RC=$?
	shared_count "$EMIT_RC"
}

test_tracing() {
	local n m
	if ! trace_setup; then
		skip "tracing: no $TRACEFS/instances (tracefs not mounted and cannot be)"
		return
	fi
	# `ip netns exec` remounts /sys: rant must find tracefs by itself
	trace_reset
	remit tplain -s --count 200 -T --trace-instance "$INST" -t 0.001 -q
	if [ "$EMIT_RC" = 3 ] && [ "$(marks RANT_TEST_START)" = 1 ]; then
		ok "tracing: -T works under plain ip netns exec (tracefs found despite the remounted /sys)"
	else
		not_ok "tracing: -T under plain ip netns exec (exit $EMIT_RC, want 3 and a RANT_TEST_START mark)"
		show tplain
		TRACE_VIA=mount
		echo "# note: the tracing tests below mount tracefs in a private mount namespace instead"
	fi

	trace_reset
	temit tbreach -s --count 1000 -T --trace-instance "$INST" -t 0.001 -q --json "$WORK/tbreach.json"
	expect_rc "tracing -T -t stop" 3
	expect_eq "tracing -T -t stop: one RANT_TEST_START" "$(marks RANT_TEST_START)" 1
	check "tracing -T -t stop: a RANT_BREACH line with seq, rtt and threshold" \
		grep -Eq 'tracing_mark_write: RANT_BREACH seq=[0-9]+ rtt_ns=[0-9]+ threshold_ns=1 ' "$INST_DIR/trace"
	expect_eq "tracing -T -t stop: tracing_on is 0 afterwards" "$(cat "$INST_DIR/tracing_on")" 0

	trace_reset
	# 2000 breaches, each marked.  -T's default events trace the whole host,
	# and the suites beside this one flood it: however large, the buffer
	# can overrun in a slow (sanitizer) run and drop the oldest markers.  An
	# event selection of the instance's own (kept by rant, and it has the
	# scheduler events -T needs) limited to this client's tasks keeps the
	# buffer to this run's events: by a comm of its own, a link's name
	# (execve(2) names the task after the path it is given), as every
	# suite beside this one runs a "rant" (CI once saw 82220 events
	# overwritten on one CPU, every marker with them, filtering on "rant")
	local comm="rant-tc$$" rant_was=$RANT
	comm=${comm:0:15}
	ln -sf "$(realpath "$RANT")" "$WORK/$comm"
	echo 16384 >"$INST_DIR/buffer_size_kb"
	echo "prev_comm == \"$comm\" || next_comm == \"$comm\"" >"$INST_DIR/events/sched/sched_switch/filter"
	echo "comm == \"$comm\"" >"$INST_DIR/events/sched/sched_waking/filter"
	printf 'sched:sched_switch\nsched:sched_waking\n' >"$INST_DIR/set_event"
	n=$(floor_us)
	RANT=$WORK/$comm
	temit tcont -s --count 2000 -T --trace-instance "$INST" -t "$n" -C -q --json "$WORK/ttcont.json"
	RANT=$rant_was
	expect_rc "tracing -T -C" 3
	check "tracing -T -C: the instance's own events kept (no default set enabled)" \
		[ "$(sort "$INST_DIR/set_event" | tr '\n' ' ')" = "sched:sched_switch sched:sched_waking " ]
	n=$(json_get "$WORK/ttcont.json" threshold.count 2>/dev/null)
	m=$(marks RANT_BREACH)
	expect_eq "tracing -T -C: every breach marked (RANT_BREACH lines == threshold.count)" \
		"$m" "${n:-missing}"
	[ "$m" = "$n" ] || grep -H overrun "$INST_DIR"/per_cpu/cpu*/stats | sed 's/^/# /'
	expect_eq "tracing -T -C: tracing_on stays 1" "$(cat "$INST_DIR/tracing_on")" 1
	: >"$INST_DIR/set_event"
	echo 0 >"$INST_DIR/events/sched/sched_switch/filter"
	echo 0 >"$INST_DIR/events/sched/sched_waking/filter"

	trace_reset
	temit tnot -s --count 200 -T --trace-instance "$INST" -q
	expect_rc "tracing -T without -t" 0
	expect_eq "tracing -T without -t: RANT_TEST_START" "$(marks RANT_TEST_START)" 1
	expect_eq "tracing -T without -t: no RANT_BREACH" "$(marks RANT_BREACH)" 0
	expect_eq "tracing -T without -t: tracing_on unchanged (1)" "$(cat "$INST_DIR/tracing_on")" 1
	echo 0 >"$INST_DIR/tracing_on"
	temit toff -s --count 200 -T --trace-instance "$INST" -q
	expect_eq "tracing -T without -t: tracing_on unchanged (0)" "$(cat "$INST_DIR/tracing_on")" 0

	temit tmiss -s --count 200 -T --trace-instance "nosuch$$" -q
	expect_rc "tracing: missing instance" 2
	check "tracing: missing instance: stderr gives the mkdir command" \
		grep -Eq "mkdir [^ ]*/instances/nosuch$$" "$WORK/tmiss.err"
	expect_eq "tracing: missing instance: one stderr line" "$(wc -l <"$WORK/tmiss.err")" 1

	test_snapshot
}

# -S: this kernel has no snapshot file; the error must come before any packet.
test_snapshot() {
	local rc
	if [ -e "$INST_DIR/snapshot" ]; then
		skip "tracing -S: this kernel has snapshot support; the no-snapshot error cannot be tested"
		return
	fi
	reflector rsnap --port 12402 --once || { not_ok "tracing -S: reflector did not start"; return; }
	temit tsnap -s --port 12402 --count 200 -T -S --trace-instance "$INST" -q
	expect_rc "tracing -S without kernel support" 2
	check "tracing -S: stderr mentions snapshot support" grep -q 'snapshot support' "$WORK/tsnap.err"
	expect_eq "tracing -S: one stderr line" "$(wc -l <"$WORK/tsnap.err")" 1
	# a clean session now: the reflector's one session must be this one
	emit tsnap2 --port 12402 --count 10 -q
	expect_rc "tracing -S: a following run" 0
	if wait_for 30 not_running "$REFLECTOR_PID"; then
		wait "$REFLECTOR_PID"
		rc=$?
		expect_eq "tracing -S: reflector exit" "$rc" 0
		expect_eq "tracing -S: nothing was sent (the reflector saw one session of 10)" \
			"$(report_field "$WORK/rsnap.out" received)" 10
	else
		not_ok "tracing -S: the reflector's session did not end"
	fi
}

# ---------------------------------------------------------- status and clock

STATUS_RE='^rant: .* samples .* rate .*/s'

test_status_clock() {
	local n
	# stderr is a file here: the status line only because --status asks for it
	remit live -s --status --interval 1000 -d 3 --json "$WORK/live.json"
	expect_rc "status line run (-d 3)" 0
	n=$(grep -Ec "$STATUS_RE" "$WORK/live.err")
	# once a second on an absolute clock: 2 in 3 s unless the host starved
	# the status thread for a second; 1 at least however loaded
	check "status line: on stderr during a 3 s run (got $n)" [ "$n" -ge 1 ]
	check "status line: not on stdout" [ "$(grep -Ec "$STATUS_RE" "$WORK/live.out")" = 0 ]
	remit quiet -s --status --interval 1000 -d 2 -q
	expect_rc "status line run with -q" 0
	expect_eq "status line: none with -q (even with --status)" "$(grep -Ec "$STATUS_RE" "$WORK/quiet.err")" 0
	py_checks "clock" '
d = load(sys.argv[1]); c = d["clock"]
t("offset_ns is a number with -s", isinstance(c["offset_ns"], int), c)
t("warnings is an empty list on veth (software stamps)", c["warnings"] == [], c["warnings"])
t("wire stamps are software on veth", d["timestamps"]["wire"] == "software", d["timestamps"])
' "$WORK/live.json"
	check "clock: no WARNING in the text report" [ "$(grep -c '^WARNING' "$WORK/live.out")" = 0 ]
}

main() {
	need_root "net-stats"
	[ -x "$RANT" ] || { not_ok "no rant binary at $RANT (run make)"; finish; exit 1; }
	ns_setup || { not_ok "namespace setup"; finish; exit 1; }
	reflector refl -s || { not_ok "reflector did not start"; finish; exit 1; }
	test_histogram
	test_percentile_rank
	test_percentile_long
	test_threshold_stop
	test_threshold_continue
	test_reflector_threshold
	test_tracing
	test_status_clock
	finish
}

main "$@"
