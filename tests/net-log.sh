#!/bin/bash
# Integration tests of the transaction log contract (the contract: Transaction
# log, System): logs parse back through --analyze to the live report, the
# emit + reflect join, the ring, -L, refused log paths, -G hugepages,
# corrupted logs, and informational memory / parse-speed numbers.
#
#   sudo bash tests/net-log.sh        (RANT=path overrides the binary)

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

: "${COUNT:=3000}"
: "${WARMUP:=50}"
# the synthetic log --analyze parses (make check-long: a million rows)
if [ -n "${LONG:-}" ]; then
	: "${SYNTH_ROWS:=1000000}"
else
	: "${SYNTH_ROWS:=50000}"
fi
HUGE=/proc/sys/vm/nr_hugepages
HUGE_OLD=
SYNTH="$(dirname "$0")/net-log.d/synth-log.py"

log_cleanup() {
	cleanup
	[ -n "$HUGE_OLD" ] && echo "$HUGE_OLD" >"$HUGE"
}
trap log_cleanup EXIT

PY_PRELUDE='
import json, re, sys
'

# ------------------------------------------------------- log -> --analyze

PY_SAME='
live, ana = load(sys.argv[1]), load(sys.argv[2])
a, b = live["metrics"]["rtt"], ana["metrics"]["rtt"]
for k in ("samples", "min_ns", "max_ns", "min_seq", "max_seq"):
    t("rtt %s equal" % k, a[k] == b[k], (a[k], b[k]))
t("rtt avg equal (within 1 ns)", abs(a["avg_ns"] - b["avg_ns"]) <= 1, (a["avg_ns"], b["avg_ns"]))
t("rtt percentiles equal", a["percentiles_ns"] == b["percentiles_ns"], (a["percentiles_ns"], b["percentiles_ns"]))
t("lost equal", live["packets"]["lost"] == ana["packets"]["lost"], (live["packets"]["lost"], ana["packets"]["lost"]))
'

# roundtrip TAG FORMAT [emit options]: one live run, its log analyzed back
roundtrip() {
	local tag=$1 fmt=$2
	shift 2
	remit "$tag" -s -w "$WARMUP" --count "$COUNT" -q --json "$WORK/$tag.json" \
		-l "$WORK/$tag.log" --log-format "$fmt" "$@"
	expect_rc "$tag log run" 0
	analyze "$tag-a" "$WORK/$tag.log" --json "$WORK/$tag-a.json"
	expect_eq "$tag log: --analyze exit status" "$ANALYZE_RC" 0
	[ "$ANALYZE_RC" = 0 ] || { show "$tag-a"; return; }
	py_checks "$tag log vs live" "$PY_SAME" "$WORK/$tag.json" "$WORK/$tag-a.json"
	expect_eq "$tag log: text --analyze MIN == live MIN" \
		"$(report_field "$WORK/$tag-a.out" MIN)" "$(report_field "$WORK/$tag.out" MIN)"
	expect_eq "$tag log: text --analyze MAX == live MAX" \
		"$(report_field "$WORK/$tag-a.out" MAX)" "$(report_field "$WORK/$tag.out" MAX)"
	expect_eq "$tag log: text --analyze samples == live samples" \
		"$(report_field "$WORK/$tag-a.out" samples)" "$(report_field "$WORK/$tag.out" samples)"
}

test_roundtrip() {
	roundtrip text text
	py_checks "text log" '
r = rows(sys.argv[1]); w = int(sys.argv[2]); n = int(sys.argv[3])
t("one row per measured transaction (warm-up skipped)", len(r) == n, len(r))
t("first SEQ is the first after warm-up", r and int(r[0]["SEQ"]) == w, r and r[0]["SEQ"])
t("columns are the earlier rant names with _KSW wire stamps", r and list(r[0]) == ["SEQ", "T1_SW", "T1_KSW", "T4_KSW", "T4_SW", "RTT"],
  r and list(r[0]))
' "$WORK/text.log" "$WARMUP" "$COUNT"
	roundtrip csv csv
	py_checks "csv log" '
r = rows(sys.argv[1]); w = int(sys.argv[2]); n = int(sys.argv[3]); a = load(sys.argv[4])
st = [x["status"] for x in r]
t("warm-up rows present with status warmup", st.count("warmup") == w, st.count("warmup"))
t("warm-up rows are the first SEQs", all(x["status"] == "warmup" for x in r[:w]))
t("every transaction has a row", len(r) == n + w, len(r))
t("--analyze counts the warm-up rows as warm-up", a["packets"]["warmup"] == w, a["packets"])
t("echoed server stamps and all latencies present", all(x["t2_ksw"] and x["t3_ksw"] and x["response_ns"] for x in r))
' "$WORK/csv.log" "$WARMUP" "$COUNT" "$WORK/csv-a.json"
}

# Losses: the reflector is paused for a moment mid-run, so some pings time
# out (lost) and their pongs come late; the log must account for them.
test_roundtrip_loss() {
	local pid pongs
	shared_settle
	pongs=$(udp_count "$NS_A" InDatagrams)
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" -s --interval 1000 --count 2500 \
		--timeout 20 --status --json "$WORK/loss.json" -l "$WORK/loss.log" --log-format csv \
		>"$WORK/loss.out" 2>"$WORK/loss.err" &
	pid=$!
	BG_PIDS+=("$pid")
	# the fault, after 200 answered: 300 pings go unanswered for a while
	if wait_for 30 udp_reaches "$NS_A" InDatagrams $((pongs + 200)); then
		kill -STOP "$MAIN_REFLECTOR"
		udp_wait "$NS_A" OutDatagrams 300
		kill -CONT "$MAIN_REFLECTOR"
	fi
	wait "$pid"
	EMIT_RC=$?
	shared_count "$EMIT_RC"
	expect_rc "loss run" 0
	analyze loss-a "$WORK/loss.log" --json "$WORK/loss-a.json"
	expect_eq "loss log: --analyze exit status" "$ANALYZE_RC" 0
	py_checks "loss log vs live" '
live, ana = load(sys.argv[1]), load(sys.argv[2])
t("the pause made losses", live["packets"]["lost"] > 0, live["packets"])
t("lost equal", live["packets"]["lost"] == ana["packets"]["lost"], (live["packets"]["lost"], ana["packets"]["lost"]))
r = rows(sys.argv[3])
bad = sum(1 for x in r if x["status"] in ("lost", "late"))
t("lost + late rows == live lost", bad == live["packets"]["lost"], (bad, live["packets"]["lost"]))
for k in ("samples", "min_ns", "max_ns"):
    t("rtt %s equal" % k, live["metrics"]["rtt"][k] == ana["metrics"]["rtt"][k])
' "$WORK/loss.json" "$WORK/loss-a.json" "$WORK/loss.log"
}

# ------------------------------------------------------------ emit + reflect

test_join() {
	reflector rj --port 12411 --once -s -l "$WORK/rj.log" || { not_ok "join: reflector did not start"; return; }
	emit ej --port 12411 -s -w 20 --count "$COUNT" -q -l "$WORK/ej.log" --json "$WORK/ej.json"
	expect_rc "join: client" 0
	wait_reflector
	expect_eq "join: reflector exit" "$REFLECTOR_RC" 0
	analyze ja "$WORK/ej.log" "$WORK/rj.log" --top 5 --json "$WORK/ja.json"
	expect_eq "join: --analyze EMIT REFLECT exit status" "$ANALYZE_RC" 0
	[ "$ANALYZE_RC" = 0 ] || { show ja; return; }
	analyze ja2 "$WORK/rj.log" "$WORK/ej.log" --top 5
	expect_eq "join: the order of the two logs does not matter" "$ANALYZE_RC" 0
	py_checks "join" '
live, ana = load(sys.argv[1]), load(sys.argv[2])
for m in ("response", "network", "rtt"):
    a, b = live["metrics"].get(m), ana["metrics"].get(m)
    t("%s present" % m, a is not None and b is not None)
    if a and b:
        for k in ("samples", "min_ns", "max_ns"):
            t("%s %s == live echoed decomposition" % (m, k), a[k] == b[k], (a[k], b[k]))
text = open(sys.argv[3]).read()
t("prints the worst transactions", re.search(r"^--- The 5 worst transactions", text, re.M) is not None)
worst = text[text.find("worst transactions"):]
heads = re.findall(r"^#: seq (\d+), rtt (\d+) ns", worst, re.M)
t("5 breakdowns", len(heads) == 5, len(heads))
t("5 dominant marks", worst.count("<-- where the spike is") == 5, worst.count("<-- where the spike is"))
r = rows(sys.argv[4])
top = sorted((int(x["RTT"]) for x in r), reverse=True)[:5]
t("they are the 5 largest RTTs of the log", [int(v) for _, v in heads] == top, ([v for _, v in heads], top))
t("the join filled the server stamps", "network (both ways)" in worst)
' "$WORK/ej.json" "$WORK/ja.json" "$WORK/ja.out" "$WORK/ej.log"
}

# ------------------------------------------------------------------ ring, -L

test_ring() {
	local w=10
	remit ring -s -w "$w" --count "$COUNT" -l "$WORK/ring.log" --log-records 500 -q --json "$WORK/ring.json"
	expect_rc "ring" 0
	py_checks "ring" '
r = rows(sys.argv[1]); n = int(sys.argv[2]); w = int(sys.argv[3]); d = load(sys.argv[4])
s = [int(x["SEQ"]) for x in r]
t("exactly 500 data rows", len(r) == 500, len(r))
t("SEQs unique and strictly increasing", all(a < b for a, b in zip(s, s[1:])))
t("last SEQ is the last measured one", s and s[-1] == n + w - 1, s and s[-1])
t("the kept rows are the last 500", s == list(range(n + w - 500, n + w)))
t("json log: records 500, dropped count-500+warm-up", (d["log"]["records"], d["log"]["dropped"]) == (500, n + w - 500),
  d["log"])
' "$WORK/ring.log" "$COUNT" "$w" "$WORK/ring.json"
	check "ring: report says 500 kept, $((COUNT + w - 500)) dropped" \
		grep -q "^Log: 500 records kept, $((COUNT + w - 500)) dropped" "$WORK/ring.out"
	check "ring: the report's Log line is well formed" \
		grep -Eqx "Log: 500 records kept, $((COUNT + w - 500)) dropped \(ring of 500\)" "$WORK/ring.out"
	analyze ring-a "$WORK/ring.log"
	expect_eq "ring: the ring's log parses back" "$ANALYZE_RC" 0
	expect_eq "ring: --analyze samples" "$(report_field "$WORK/ring-a.out" samples)" 500
}

# -L at both ends, where no host's speed decides what is logged: 0 logs
# every measured transaction (the warm-up is filtered), 60 s none but the
# lost; which side of a threshold a row falls is the unit tests' (log_*)
test_log_threshold() {
	local us
	for us in 0 60000000; do
		remit "lth$us" -s -w 10 --count "$COUNT" -l "$WORK/lth$us.log" --log-format csv -L "$us" -q \
			--json "$WORK/lth$us.json"
		expect_rc "-L $us" 0
		py_checks "-L $us" '
r = rows(sys.argv[1]); us = int(sys.argv[2]); d = load(sys.argv[3]); lg = d["log"]; p = d["packets"]
ok_rows = [x for x in r if x["status"] == "ok"]
if us == 0:
    t("every measured transaction logged, the warm-up filtered", len(ok_rows) == d["metrics"]["rtt"]["samples"]
      and lg["filtered"] == p["warmup"], (len(ok_rows), lg, p))
else:
    t("no ok row logged, the lost ones are", not ok_rows and len(r) == p["lost"], (len(r), p))
t("every ok row has rtt_ns > -L", all(int(x["rtt_ns"]) > us * 1000 for x in ok_rows))
t("only ok, lost or late rows (no warm-up)", all(x["status"] in ("ok", "lost", "late") for x in r))
t("json log.records == data rows", lg["records"] == len(r), (lg["records"], len(r)))
t("records + filtered == every transaction sent", lg["records"] + lg["filtered"] == p["sent"],
  (lg, p["sent"]))
t("no ring drops", lg["dropped"] == 0, lg)
' "$WORK/lth$us.log" "$us" "$WORK/lth$us.json"
		check "-L $us: report names the filtered count" grep -Eq "^Log: .*, [0-9]+ at or below -L$" "$WORK/lth$us.out"
	done
}

# --analyze believes a log only as far as it justifies: a csv log cut short
# of its header's records= is analysed and said to be; two runs' logs are
# not joined (every run numbers from SEQ 0: the header's session= tells
# them apart); a reflect log -L filtered has gaps that are not losses (lost
# unknown, null); a small size turn's pongs had no room for the reflector's
# stamps, which are then not missing (SIZE or size_turns=).
test_analyze_trust() {
	local i
	for i in 1 2; do
		reflector "tr$i" --port 1242$i --once -l "$WORK/tr$i.csv" --log-format csv ||
			{ not_ok "analyze trust: reflector $i"; return; }
		emit "te$i" --port 1242$i --count 300 -q -l "$WORK/te$i.csv" --log-format csv --json "$WORK/te$i.json"
		wait_reflector
	done
	analyze tj1 "$WORK/te1.csv" "$WORK/tr1.csv"
	expect_eq "analyze trust: one run's two logs join" "$ANALYZE_RC" 0
	analyze tj2 "$WORK/te1.csv" "$WORK/tr2.csv"
	expect_eq "analyze trust: two runs' logs refused (exit 2)" "$ANALYZE_RC" 2
	check "analyze trust: the refusal names both sessions" \
		grep -Eq '^rant: --analyze: .*te1.csv is of session 0x[0-9a-f]{8}, .*tr2.csv of session 0x[0-9a-f]{8}: the logs of two runs' "$WORK/tj2.err"
	head -n 151 "$WORK/te1.csv" >"$WORK/cut.csv"	# the column line and 150 rows
	analyze tcut "$WORK/cut.csv" --json "$WORK/tcut.json"
	expect_eq "analyze trust: a log cut short is analysed (exit 0)" "$ANALYZE_RC" 0
	check "analyze trust: cut short, said on stderr and in the JSON's warnings" \
		bash -c "grep -q \"cut.csv holds 150 rows and ends without its '# rant' line (records=, session=): cut short\" '$WORK/tcut.err' &&
			python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if any(\"cut short\" in w for w in d[\"warnings\"]) and d[\"packets\"][\"sent\"] == 150 else 1)' '$WORK/tcut.json'"
	reflector trl --port 12423 --once -l "$WORK/trl.csv" --log-format csv -L 60000000 ||
		{ not_ok "analyze trust: reflector -L"; return; }
	emit tel --port 12423 --count 300 -q
	wait_reflector
	analyze tal "$WORK/trl.csv" --json "$WORK/tal.json"
	expect_eq "analyze trust: a filtered reflect log: exit 0" "$ANALYZE_RC" 0
	check "analyze trust: its gaps are not losses: lost unknown (text), null (JSON)" \
		bash -c "grep -q '| lost unknown (-L filtered the log) |' '$WORK/tal.out' &&
			python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))[\"packets\"][\"lost\"] is None else 1)' '$WORK/tal.json'"
	remit tsz --count 200 --size 32,128 -q -l "$WORK/tsz.csv" --log-format csv --json "$WORK/tsz.json"
	analyze tsza "$WORK/tsz.csv" --json "$WORK/tsza.json"
	py_checks "analyze trust: small sizes" '
live, ana = load(sys.argv[1]), load(sys.argv[2])
t("the live run misses no stamp its pongs had room for", not any(live["missing_stamps"].values()), live["missing_stamps"])
t("--analyze counts the same missing stamps (none for the 32-byte turn)", ana["missing_stamps"] == live["missing_stamps"],
  (ana["missing_stamps"], live["missing_stamps"]))
' "$WORK/tsz.json" "$WORK/tsza.json"
}

# --------------------------------------------------------- refused log paths

# refused NAME WHAT [emit options]: exit 2, one stderr line naming --log
refused() {
	local name=$1 what=$2
	shift 2
	emit "$name" --port 12412 --count 10 -q "$@"
	expect_rc "$what" 2
	expect_eq "$what: one stderr line" "$(wc -l <"$WORK/$name.err")" 1
	check "$what: the line names --log" grep -q -- '--log' "$WORK/$name.err"
}

test_refused_paths() {
	reflector rp --port 12412 --once || { not_ok "refused paths: reflector did not start"; return; }
	refused nodir "-l in a missing directory" -l /nonexistent/dir/f.log
	echo "precious content" >"$WORK/target"
	ln -s "$WORK/target" "$WORK/link"
	refused symlink "-l on a symbolic link" -l "$WORK/link"
	check "-l on a symbolic link: the message says so" grep -q 'symbolic link' "$WORK/symlink.err"
	expect_eq "-l on a symbolic link: target unchanged" "$(cat "$WORK/target")" "precious content"
	echo "precious content" >"$WORK/kept.log"
	emit latefail --port 12412 --count 10 -q -l "$WORK/kept.log" -T --trace-instance "nosuch$$"
	expect_rc "a later configuration error (-T, missing instance)" 2
	expect_eq "a later configuration error: the existing log is not truncated" \
		"$(cat "$WORK/kept.log")" "precious content"
	# nothing was sent: the reflector's only session is this one
	emit pgood --port 12412 --count 10 -q
	expect_rc "refused paths: a following run" 0
	wait_reflector
	expect_eq "refused paths: reflector exit" "$REFLECTOR_RC" 0
	expect_eq "refused paths: nothing was sent by the refused runs (one session of 10)" \
		"$(report_field "$WORK/rp.out" received)" 10
	expect_eq "refused paths: the reflector saw one session" "$(grep -c '^Session 0x[0-9a-f]* is complete' "$WORK/rp.out")" 1
}

# ----------------------------------------------------------------- hugepages

hugepages_free() {
	sed -n 's/^HugePages_Free: *//p' /proc/meminfo
}

# the hugepage pool is the host's: its size changes under a lock
test_hugepages() {
	if [ ! -w "$HUGE" ]; then
		skip "-G: $HUGE not writable"
		return
	fi
	host_lock hugepages
	hugepages
	if [ -n "$HUGE_OLD" ]; then
		echo "$HUGE_OLD" >"$HUGE"
		HUGE_OLD=
	fi
	host_unlock hugepages
}

hugepages() {
	local need
	HUGE_OLD=$(cat "$HUGE")
	echo 0 >"$HUGE"
	remit g0 -G --count 100 -q -l "$WORK/g0.log"
	expect_rc "-G without hugepages" 2
	expect_eq "-G without hugepages: one stderr line" "$(wc -l <"$WORK/g0.err")" 1
	check "-G without hugepages: names $HUGE" grep -q "$HUGE" "$WORK/g0.err"
	check "-G without hugepages: log not created" [ ! -e "$WORK/g0.log" ]
	need=$(sed -n 's/.*echo \([0-9]*\) > .*/\1/p' "$WORK/g0.err")
	check "-G without hugepages: says how many pages (${need:-none})" [ -n "$need" ]
	echo 64 >"$HUGE"
	if [ "$(hugepages_free)" -lt 8 ]; then
		skip "-G: could not reserve hugepages (free: $(hugepages_free))"
		return
	fi
	remit g1 -s -G -w 10 --count "$COUNT" -q -l "$WORK/g1.log" --json "$WORK/g1.json"
	expect_rc "-G with $(hugepages_free) free hugepages" 0
	py_checks "-G" '
r = rows(sys.argv[1]); n = int(sys.argv[2]); d = load(sys.argv[3])
t("log complete", len(r) == n and int(r[-1]["SEQ"]) == n + 9, (len(r), r and r[-1]["SEQ"]))
t("all samples", d["metrics"]["rtt"]["samples"] == n)
' "$WORK/g1.log" "$COUNT" "$WORK/g1.json"
}

# ------------------------------------------------------------- corrupt logs

# corrupt NAME WHAT LINE: --analyze of $WORK/NAME fails at LINE
corrupt() {
	local name=$1 what=$2 line=$3
	analyze "$name-a" "$WORK/$name"
	expect_eq "corrupt log ($what): exit status" "$ANALYZE_RC" 2
	check "corrupt log ($what): stderr names $name:$line" grep -q "$WORK/$name:$line:" "$WORK/$name-a.err"
	if [ "$ANALYZE_RC" != 2 ] || ! grep -q "$WORK/$name:$line:" "$WORK/$name-a.err"; then
		show "$name-a"
	fi
}

test_corrupt() {
	local src="$WORK/text.log" csv="$WORK/csv.log"
	if [ ! -s "$src" ] || [ ! -s "$csv" ]; then
		skip "corrupt logs: no logs from the round-trip runs"
		return
	fi
	# cut inside line 101 (no newline at the end)
	{
		head -n 100 "$src"
		sed -n '101p' "$src" | cut -c1-25 | tr -d '\n'
	} >"$WORK/cut.log"
	corrupt cut.log "truncated mid-line" 101
	# one digit of a stamp changed on line 200: RTT no longer matches
	awk 'NR == 200 { d = substr($3, length($3)); $3 = substr($3, 1, length($3) - 1) ((d + 1) % 10) } 1' \
		"$src" >"$WORK/edit.log"
	corrupt edit.log "a stamp edited" 200
	# a stamp that is not a number, line 150
	awk 'NR == 150 { $2 = "12x4.000000001" } 1' "$src" >"$WORK/junk.log"
	corrupt junk.log "a stamp that is not a number" 150
	# csv: a field dropped on line 77 (the column line + 76 rows)
	awk -F, -v OFS=, 'NR == 77 { NF = NF - 1 } 1' "$csv" >"$WORK/short.csv"
	corrupt short.csv "csv row with a field missing" 77
	# csv: an edited stamp on line 300
	awk -F, -v OFS=, 'NR == 300 { d = substr($4, length($4)); $4 = substr($4, 1, length($4) - 1) ((d + 3) % 10) } 1' \
		"$csv" >"$WORK/edit.csv"
	corrupt edit.csv "csv stamp edited" 300
}

# -------------------------------------------------------- memory, parse speed

# vmhwm CMD...: run CMD under /usr/bin/time -v; prints the peak RSS in kB
peak_rss() {
	/usr/bin/time -v "$@" 2>&1 >/dev/null | sed -n 's/.*Maximum resident set size (kbytes): *//p'
}

test_memory() {
	local small big t0 t1 rate
	if [ -x /usr/bin/time ]; then
		shared_settle
		small=$(peak_rss ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --count "$COUNT" -q -l "$WORK/m1.log")
		SHARED_SESSIONS=$((SHARED_SESSIONS + 1))
		shared_settle
		big=$(peak_rss ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --count "$COUNT" -q \
			-l "$WORK/m2.log" --log-records 1000000)
		echo "# info: peak RSS, --count $COUNT -l (ring sized to the run): ${small:-?} kB"
		echo "# info: peak RSS, --count $COUNT -l --log-records 1000000: ${big:-?} kB"
		check "memory: both runs measured" [ -n "$small" ] && [ -n "$big" ]
	else
		skip "memory: /usr/bin/time not installed (apt-get install time)"
	fi
	python3 "$SYNTH" "$SYNTH_ROWS" "$WORK/big.csv" || { not_ok "synthetic log"; return; }
	t0=$(($(now_us) * 1000))
	analyze big-a "$WORK/big.csv" --json "$WORK/big-a.json"
	t1=$(($(now_us) * 1000))
	expect_eq "parse speed: --analyze of $SYNTH_ROWS synthetic rows" "$ANALYZE_RC" 0
	expect_eq "parse speed: all rows read" "$(json_get "$WORK/big-a.json" metrics.rtt.samples 2>/dev/null)" "$SYNTH_ROWS"
	rate=$((SYNTH_ROWS * 1000000000 / (t1 - t0 + 1)))
	echo "# info: --analyze parsed $SYNTH_ROWS csv rows ($(($(stat -c %s "$WORK/big.csv") / 1048576)) MiB) in $(((t1 - t0) / 1000000)) ms: $rate records/s"
	if [ -x /usr/bin/time ]; then
		echo "# info: peak RSS of that --analyze: $(peak_rss "$RANT" --analyze "$WORK/big.csv") kB"
	fi
}

# mem_line NAME: the bytes -v says are locked, and the bytes of a log record
mem_line() {
	sed -n 's/^rant: memory \([0-9]*\) B locked.* log ring [0-9]* records of \([0-9]*\) B.*/\1 \2/p' "$WORK/$1.err"
}

# Memory sized by what the run keeps, not by its length; a record's bytes
# as said; a long prefault ends at once on SIGINT.
test_memory_sizes() {
	local d c l rec pid t0 t1 rc r peak ring
	remit md -d 0.2 -v
	shared_settle
	emit_bg mc --count 2000000 -v
	wait_for 30 grep -q '^rant: memory' "$WORK/mc.err"
	kill -INT "$EMIT_PID"
	wait "$EMIT_PID"
	shared_count "$?"
	read -r d _ < <(mem_line md)
	read -r c _ < <(mem_line mc)
	echo "# info: locked memory: -d 0.2 ${d:-?} B, --count 2000000 ${c:-?} B"
	check "memory: a --count 2000000 client with no log is as small as a -d run (${c:-?} B)" \
		test -n "$d" -a "$d" = "$c"
	remit ml -d 0.2 -v -l "$WORK/ml.log" --log-records 100000 --json "$WORK/ml.json"
	read -r l rec < <(mem_line ml)
	py_checks "memory: a log record" '
d, l, rec, bpr = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), load(sys.argv[4])["log"]["bytes_per_record"]
t("-v and the JSON say the same bytes per record (%d)" % bpr, rec == bpr, (rec, bpr))
t("the ring of 100000 records costs what they say (%d B more, %d said)" % (l - d, 100000 * bpr),
  abs((l - d) - 100000 * bpr) <= 4096 + 64, (l - d, 100000 * bpr))
' "${d:-0}" "${l:-0}" "${rec:-0}" "$WORK/ml.json"
	# a 30 M-record ring (2.7 GB) takes seconds to fault in: SIGINT meanwhile
	# ends rant before any packet.  Asked of how far the prefault went after
	# the signal, not of a time: the most memory rant held until it was gone
	# stays under half the ring (a prefault that ignored the signal
	# would fault in all of it), however slowly a loaded host runs both
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" --count 10 -q -l "$WORK/pf.log" \
		--log-records 30000000 >"$WORK/pf.out" 2>"$WORK/pf.err" &
	pid=$!
	BG_PIDS+=("$pid")
	check "prefault: the ring is being faulted in (RSS past 200 MB)" wait_for 30 rss_above "$pid" 200000
	t0=$(now_us)
	kill -INT "$pid"
	peak=0
	while r=$(rss_kb "$pid") && [ -n "$r" ] && [ "$(now_us)" -lt $((t0 + 60000000)) ]; do
		[ "$r" -le "$peak" ] || peak=$r
		sleep 0.02
	done
	wait "$pid"
	rc=$?
	t1=$(now_us)
	ring=$((30000000 * ${rec:-92} / 1024))
	echo "# info: SIGINT during the prefault of a 30 M-record ring: exit after $(((t1 - t0) / 1000)) ms, at most $peak kB resident meanwhile"
	check "prefault: SIGINT stops it: at most $peak kB resident after it, under half the ring's $ring kB" \
		[ "$peak" -lt $((ring / 2)) ]
	expect_eq "prefault: interrupted before the first packet: exit 1" "$rc" 1
	check "prefault: one line says nothing was measured, no log file made" \
		bash -c "grep -q 'interrupted before the first packet' '$WORK/pf.err' && [ ! -e '$WORK/pf.log' ]"
}

# rss_above PID KB: its resident memory is above KB
# rss_kb PID: its resident memory in kB; nothing once it has exited
rss_kb() {
	sed -n 's/^VmRSS:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$1/status" 2>/dev/null
}

rss_above() {
	[ "$(rss_kb "$1")" -gt "$2" ] 2>/dev/null
}

main() {
	need_root "net-log"
	[ -x "$RANT" ] || { not_ok "no rant binary at $RANT (run make)"; finish; exit 1; }
	ns_setup || { not_ok "namespace setup"; finish; exit 1; }
	reflector refl -s || { not_ok "reflector did not start"; finish; exit 1; }
	MAIN_REFLECTOR=$REFLECTOR_PID
	SHARED_REFLECTOR=refl
	test_roundtrip
	test_roundtrip_loss
	test_join
	test_ring
	test_log_threshold
	test_analyze_trust
	test_refused_paths
	test_hugepages
	test_corrupt
	test_memory
	test_memory_sizes
	finish
}

main "$@"
