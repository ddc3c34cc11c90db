#!/bin/bash
# Integration tests of --plot: the SVG of an emit run, of a reflector
# session and of --analyze (single and joined logs) is well-formed XML
# (xmllint), renders with a real SVG renderer (rsvg-convert) to a PNG of the
# expected size that is not blank, writes the same numbers as the JSON, and
# refers to nothing outside itself, also after SIGINT; bad --plot paths are refused (exit 2)
# before a packet is sent; a failed write ends in exit 1 with one line; a
# synthetic log too long to draw dot by dot is binned (LONG=1, make
# check-long: 300 000 rows, plotted in bounded time and memory); and
# --analyze's peak memory does not grow with the rows of its logs.
#
#   sudo bash tests/net-plot.sh        (RANT=path overrides the binary)

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

if [ -n "${LONG:-}" ]; then
	: "${PLOT_ROWS:=300000}"
else
	: "${PLOT_ROWS:=20000}"
fi
GEN="$(dirname "$0")/plot-gen"

PY_PRELUDE='
import json, re, struct, sys, zlib
import xml.etree.ElementTree as ET
NS = "{http://www.w3.org/2000/svg}"
def texts(path):
    """id -> text of every element that has an id."""
    out = {}
    for e in ET.parse(path).getroot().iter():
        if e.get("id"):
            out[e.get("id")] = "".join(e.itertext())
    return out
def us3(ns):
    return ("-" if ns < 0 else "") + "%d.%03d" % (abs(ns) // 1000, abs(ns) % 1000)
def same_numbers(svg, js, metrics):
    ids, d = texts(svg), json.load(open(js))
    for m in metrics:
        j = d["metrics"][m]
        t("%s samples equal the JSON" % m, ids.get(m + "-samples") == str(j["samples"]), (ids.get(m + "-samples"), j["samples"]))
        bad = [k for k, v in j["percentiles_ns"].items() if ids.get("%s-p%s" % (m, k)) != us3(v)]
        t("%s percentiles equal the JSON" % m, not bad, [(k, ids.get("%s-p%s" % (m, k)), j["percentiles_ns"][k]) for k in bad])
        t("%s max equals the JSON" % m, ids.get(m + "-max") == us3(j["max_ns"]), (ids.get(m + "-max"), j["max_ns"]))
def png_size(path):
    """(width, height) of a PNG, from its header."""
    data = open(path, "rb").read(24)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])
def png_pixels(path):
    """(width, height, set of distinct RGBA pixels) of an 8-bit RGBA or RGB PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 4 if ctype == 6 else 3
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, prev, seen = zlib.decompress(idat), w * bpp, bytearray(w * bpp), set()
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % 4 == 0:
            seen.update(bytes(line[i:i + bpp]) for i in range(0, stride, bpp * 2))
        prev = line
    return w, h, seen
def rendered(svg, png, small):
    """png: rendered at the size the SVG declares; small: at a quarter of it, whose
    pixels python decodes in a fifteenth of the time"""
    root = ET.parse(svg).getroot()
    w, h = int(root.get("width")), int(root.get("height"))
    pw, ph = png_size(png)
    t("PNG is the size the SVG declares (%dx%d)" % (w, h), (pw, ph) == (w, h), (pw, ph))
    _, _, seen = png_pixels(small)
    t("PNG is not blank (%d colours at a quarter of its size)" % len(seen), len(seen) >= 8, len(seen))
    body = open(svg).read()
    t("self-contained: no script, link, image, external font or url()",
      not re.search(r"<script|href=|<image|url\(|@import|@font-face|<foreignObject", body))
'

# svg_ok TAG FILE: well-formed (xmllint) and renders (rsvg-convert) to FILE.png
svg_ok() {
	if xmllint --noout "$2" 2>"$WORK/$1.xmllint"; then
		ok "$1: SVG is well-formed XML (xmllint)"
	else
		not_ok "$1: SVG is well-formed XML (xmllint)"
		head -5 "$WORK/$1.xmllint" | sed 's/^/#   /'
	fi
	if rsvg-convert -o "$2.png" "$2" 2>"$WORK/$1.rsvg" &&
		rsvg-convert -z 0.25 -o "$2.small.png" "$2" 2>>"$WORK/$1.rsvg"; then
		ok "$1: rsvg-convert renders it"
		py_checks "$1" 'rendered(sys.argv[1], sys.argv[2], sys.argv[3])' "$2" "$2.png" "$2.small.png"
	else
		not_ok "$1: rsvg-convert renders it"
		head -5 "$WORK/$1.rsvg" | sed 's/^/#   /'
	fi
}

if ! command -v xmllint >/dev/null || ! command -v rsvg-convert >/dev/null; then
	skip "needs xmllint (libxml2-utils) and rsvg-convert (librsvg2-bin)"
	finish
	exit 0
fi

# ----------------------------------------------- --analyze of a large log

if [ ! -x "$GEN" ]; then
	skip "tests/plot-gen not built (make tests/plot-gen)"
else
	BIG=$WORK/big.log
	"$GEN" "$PLOT_ROWS" "$BIG" 2>"$WORK/gen.err"
	lost=$(sed -n 's/.* \([0-9]*\) lost.*/\1/p' "$WORK/gen.err")
	/usr/bin/time -f "%e %M" -o "$WORK/noplot.time" "$RANT" --analyze "$BIG" --json "$WORK/big0.json" >/dev/null 2>&1
	/usr/bin/time -f "%e %M" -o "$WORK/plot.time" "$RANT" --analyze "$BIG" --json "$WORK/big.json" \
		--plot "$WORK/big.svg" >"$WORK/big.out" 2>"$WORK/big.err"
	rc=$?
	expect_eq "analyze $PLOT_ROWS rows --plot: exit status" "$rc" 0
	svg_ok "analyze big" "$WORK/big.svg"
	py_checks "analyze big" 'same_numbers(sys.argv[1], sys.argv[2], ["rtt"])
body = open(sys.argv[1]).read()
t("lost count in the picture is the log'"'"'s (" + sys.argv[3] + ")", ("; lost " + sys.argv[3] + ",") in body)
t("binned, not one dot per transaction", "every transaction is a dot" not in body and "bins of" in body)
t("SVG stays small (%d bytes)" % len(body), len(body) < 400000)
e0, m0 = map(float, open(sys.argv[4]).read().split()[-2:])
e1, m1 = map(float, open(sys.argv[5]).read().split()[-2:])
print("plot of %s rows: %.2f s, max RSS %.0f MiB (without --plot: %.2f s, %.0f MiB)" % (sys.argv[6], e1, m1 / 1024, e0, m0 / 1024))
if sys.argv[7]:
    t("--plot adds bounded memory (%.0f KiB)" % (m1 - m0), m1 - m0 < 64 * 1024, (m0, m1))
    # the time of 300 000 rows under test: 30 s is room for a loaded host
    t("--plot adds bounded time (%.2f s)" % (e1 - e0), e1 - e0 < 30, (e0, e1))' \
		"$WORK/big.svg" "$WORK/big.json" "$lost" "$WORK/noplot.time" "$WORK/plot.time" "$PLOT_ROWS" "${LONG:-}"
fi

# --analyze streams its logs: its peak memory does not grow with their rows.
# 20 times the rows (a text log; a csv pair, joined) may add at most 8 MiB
# (held every row, 400 000 rows would add about 140 MiB)
analyze_rss() { # LOG...: peak RSS in kB of --analyze of the logs
	local a=() f
	for f in "$@"; do
		a+=(--analyze "$f")
	done
	/usr/bin/time -f "%M" -o "$WORK/rss.t" "$RANT" "${a[@]}" -q >/dev/null 2>"$WORK/rss.err" &&
		tail -n 1 "$WORK/rss.t"
}
if [ -x "$GEN" ]; then
	for kind in text csv; do
		small=
		big=
		for n in 20000 400000; do
			if [ $kind = text ]; then
				"$GEN" $n "$WORK/s.log" 2>/dev/null
				r=$(analyze_rss "$WORK/s.log")
			else
				"$GEN" $n "$WORK/s.csv" "$WORK/r.csv" 2>/dev/null
				r=$(analyze_rss "$WORK/s.csv" "$WORK/r.csv")
			fi
			rm -f "$WORK/s.log" "$WORK/s.csv" "$WORK/r.csv"
			if [ $n = 20000 ]; then small=$r; else big=$r; fi
		done
		check "analyze streams ($kind$([ $kind = csv ] && echo ' pair, joined')): 400 000 rows peak at ${big:-?} kB, 20 000 at ${small:-?} kB: under 8 MiB more" \
			test -n "$small" -a -n "$big" -a "${big:-0}" -lt $((${small:-0} + 8192))
	done
fi

# an --analyze that cannot write its plot: exit 2 before reading on (no file made)
"$RANT" --analyze "$WORK/big.log" --plot "$WORK/nodir/x.svg" >"$WORK/bad.out" 2>"$WORK/bad.err"
expect_eq "analyze --plot into a missing directory: exit 2" "$?" 2
check "analyze --plot into a missing directory: one line naming --plot" \
	test "$(wc -l <"$WORK/bad.err")" = 1 -a -n "$(grep '^rant: --plot: ' "$WORK/bad.err")"

need_root "veth runs"
if ! ns_setup; then
	not_ok "namespaces and veth set up"
	finish
	exit 1
fi

# ------------------------------------------- emit and reflect, both plotted

reflector refl --once -s --plot "$WORK/refl.svg" --json "$WORK/refl.json" -l "$WORK/refl.log"
emit run -s --count 2000 --interval 100 -w 20 -t 100 -C --plot "$WORK/run.svg" --json "$WORK/run.json" \
	-l "$WORK/run.log"
if [ "$EMIT_RC" = 0 ] || [ "$EMIT_RC" = 3 ]; then
	ok "emit --plot: exit 0 or 3 (threshold)"
else
	not_ok "emit --plot: exit 0 or 3 (got $EMIT_RC)"
	show run
fi
wait_for 30 not_running "$REFLECTOR_PID"
svg_ok "emit" "$WORK/run.svg"
py_checks "emit" 'same_numbers(sys.argv[1], sys.argv[2], ["rtt", "response", "network"])
d, body = json.load(open(sys.argv[2])), open(sys.argv[1]).read()
t("every transaction drawn (small run)", "every transaction is a dot (2000)" in body)
t("title names mode, peer and interface", re.search(r"rant emit to 10\.231\.0\.2 via vrA[0-9]+, 20", body) is not None)
t("title names the stamp sources", "wire stamps software (kernel), server wire stamps software (kernel), app stamps on" in body)
t("threshold line drawn", ">threshold 100 \u00b5s<" in body)
t("breaches counted as the JSON does", ("breaches %d<" % d["threshold"]["count"]) in body, d["threshold"]["count"])
t("worst transactions decomposed into segments", "The 15 worst transactions by rtt" in body and "server rx stack" in body)
t("veth: the JSON trusts the one-way delays", d["one_way"]["trusted"] is True, d["one_way"])
t("one-way series over time: both in the legend", ">forward one-way (T2-T1 wire)<" in body and ">backward one-way (T4-T3 wire)<" in body)
t("one-way series over time: drawn in their colours", body.count("stroke=\"#56B4E9\"") >= 2 and body.count("stroke=\"#CC79A7\"") >= 2)
same_numbers(sys.argv[1], sys.argv[2], ["forward", "backward"])
t("a plain run has no class or size panels", "Per class" not in body and "Per size" not in body)' \
	"$WORK/run.svg" "$WORK/run.json"
svg_ok "reflect" "$WORK/refl.svg"
py_checks "reflect" 'same_numbers(sys.argv[1], sys.argv[2], ["response"])
body = open(sys.argv[1]).read()
t("title names the reflector session", re.search(r"rant reflect, session 0x[0-9a-f]{8} via vrB", body) is not None)
t("worst by response", "worst transactions by response" in body)
t("reflector: no one-way series", "one-way" not in body)' "$WORK/refl.svg" "$WORK/refl.json"

# --top N draws the N worst (the text lists N), and each worst bar's label
# gives the length drawn: with -s on both sides the bars run app stamp to
# app stamp, longer than the wire rtt they were chosen by, so one scale
# (px per ns) must fit every bar and its label
"$RANT" --analyze "$WORK/run.log" --top 5 --plot "$WORK/top5.svg" >"$WORK/top5.out" 2>"$WORK/top5.err"
expect_eq "--analyze --top 5 --plot: exit 0" "$?" 0
svg_ok "--top 5" "$WORK/top5.svg"
py_checks "--top 5" '
body = open(sys.argv[1]).read()
t("the plot draws the 5 worst, as the text lists 5", "The 5 worst transactions by rtt" in body and
  "15 worst" not in body)
unit = {"ns": 1, "\u00b5s": 1e3, "ms": 1e6, "s": 1e9}
labels = re.findall(r"<text x=\"830\.0\" y=\"([0-9.]+)\" font-size=\"11\">(?:bar )?([0-9.]+) (ns|\u00b5s|ms|s)\b", body)
t("five bars labelled", len(labels) == 5, len(labels))
scale = []
for ly, v, u in labels:
    ry = float(ly) - 14
    w = sum(float(m) for m in re.findall(r"<rect x=\"[0-9.]+\" y=\"%.1f\" width=\"([0-9.]+)\" height=\"14\.0\"" % (ry + 3), body))
    scale.append(w / (float(v) * unit[u]))
t("every bar drawn to its label on one scale (within 2 %)",
  scale and min(scale) > 0 and max(scale) / min(scale) < 1.02, scale)
t("a bar longer than its rtt says both", " (rtt " in body)' "$WORK/top5.svg"

# ------------------------------------------------ one-way not known

# without -i nothing shows that the clocks agree: the one-way delays are
# measured (the JSON has them) but not drawn, as the report does not trust them
reflector ow --once -q
ip netns exec "$NS_A" "$RANT" -a "$ADDR_B" -q --count 300 --interval 200 -w 10 --plot "$WORK/ow.svg" \
	--json "$WORK/ow.json" >"$WORK/ow.out" 2>"$WORK/ow.err"
expect_eq "emit without -i --plot: exit 0" "$?" 0
wait_for 30 not_running "$REFLECTOR_PID"
svg_ok "untrusted one-way" "$WORK/ow.svg"
py_checks "untrusted one-way" 'd, body = json.load(open(sys.argv[2])), open(sys.argv[1]).read()
t("without -i: the JSON does not trust the one-way delays", d["one_way"]["trusted"] is False, d["one_way"])
t("without -i: the one-way delays were measured", d["metrics"]["forward"]["samples"] > 0)
t("without -i: no one-way series drawn", "one-way" not in body and "forward-samples" not in body)
same_numbers(sys.argv[1], sys.argv[2], ["rtt", "response", "network"])' "$WORK/ow.svg" "$WORK/ow.json"

# ------------------------------------------- classes and sizes: small panels

# same_groups SVG JSON: a panel per class and per size, titled, whose numbers are the JSON's rows
PY_GROUPS='
def same_groups(svg, js, live):
    ids, d, body = texts(svg), json.load(open(js)), open(svg).read()
    t("heading of the class and size panels", "Per class and per size: rtt distribution" in body)
    rows = [("class%d" % c["class"], c) for c in d["classes"]] + [("size%d" % z["size"], z) for z in d["sizes"]]
    t("a panel per class and per size (%d)" % len(rows), len(rows) == 4 and all(r + "-title" in ids for r, _ in rows), sorted(ids))
    if live:
        t("class panels titled with their priority", ids.get("class0-title") == "class 0, priority 1" and ids.get("class1-title") == "class 1, priority 2", (ids.get("class0-title"), ids.get("class1-title")))
    else:
        t("class panels titled by index", ids.get("class0-title") == "class 0" and ids.get("class1-title") == "class 1", (ids.get("class0-title"), ids.get("class1-title")))
    t("size panels titled with their size", ids.get("size64-title") == "size 64 B" and ids.get("size256-title") == "size 256 B", (ids.get("size64-title"), ids.get("size256-title")))
    for r, j in rows:
        t("%s: samples equal the JSON (%d)" % (r, j["rtt"]["samples"]), ids.get(r + "-samples") == str(j["rtt"]["samples"]), ids.get(r + "-samples"))
        t("%s: lost equals the JSON" % r, ids.get(r + "-lost") == str(j["packets"]["lost"]), ids.get(r + "-lost"))
        p = j["rtt"]["percentiles_ns"]
        got = (ids.get(r + "-p50"), ids.get(r + "-p99"), ids.get(r + "-max"))
        t("%s: p50, p99 and max equal the JSON" % r, got == (us3(p["50"]), us3(p["99"]), us3(j["rtt"]["max_ns"])), got)
    xs = {e.get("id"): float(e.get("x")) for e in ET.parse(svg).getroot().iter() if (e.get("id") or "").startswith("phase")}
    t("over time: where each size began is marked, 64 B first", sorted(xs) == ["phase256", "phase64"] and xs["phase64"] < xs["phase256"], xs)
    return xs
'
reflector cs-refl --once -q
emit cs -q --count 400 --interval 100 -w 10 --priority 1,2 --size 64,256 --plot "$WORK/cs.svg" \
	--json "$WORK/cs.json" -l "$WORK/cs.log"
expect_rc "classes x sizes --plot" 0
wait_for 30 not_running "$REFLECTOR_PID"
svg_ok "classes x sizes" "$WORK/cs.svg"
py_checks "classes x sizes" "$PY_GROUPS"'
same_groups(sys.argv[1], sys.argv[2], True)
same_numbers(sys.argv[1], sys.argv[2], ["rtt"])' "$WORK/cs.svg" "$WORK/cs.json"
"$RANT" --analyze "$WORK/cs.log" --json "$WORK/csa.json" --plot "$WORK/csa.svg" >"$WORK/csa.out" 2>"$WORK/csa.err"
expect_eq "analyze of the classes x sizes log --plot: exit 0" "$?" 0
svg_ok "analyze classes x sizes" "$WORK/csa.svg"
py_checks "analyze classes x sizes" "$PY_GROUPS"'
xs = same_groups(sys.argv[1], sys.argv[2], False)
same_numbers(sys.argv[1], sys.argv[2], ["rtt"])
ids = {e.get("id"): e.get("x") for e in ET.parse(sys.argv[3]).getroot().iter() if (e.get("id") or "").startswith("phase")}
t("the size markers sit where the live run put them", {k: float(v) for k, v in ids.items()} == xs, (ids, xs))' \
	"$WORK/csa.svg" "$WORK/csa.json" "$WORK/cs.svg"

# the two logs joined: the plot has the server segments; numbers equal --analyze's JSON
"$RANT" --analyze "$WORK/run.log" "$WORK/refl.log" --json "$WORK/join.json" --plot "$WORK/join.svg" \
	>"$WORK/join.out" 2>"$WORK/join.err"
rc=$?
if [ "$rc" = 0 ] || [ "$rc" = 3 ]; then
	ok "analyze joined --plot: exit 0 or 3"
else
	not_ok "analyze joined --plot: exit $rc"
fi
svg_ok "joined" "$WORK/join.svg"
py_checks "joined" 'same_numbers(sys.argv[1], sys.argv[2], ["rtt", "response", "network"])
body = open(sys.argv[1]).read()
t("title names both logs", "run.log + " in body and "refl.log (emit log)" in body)' "$WORK/join.svg" "$WORK/join.json"

# ------------------------------------------------------------ refused paths

# sessions_seen NAME: how many sessions the reflector reported
sessions_seen() {
	grep -c '^Session 0x' "$WORK/$1.out"
}
reflector quiet -q
for bad in "$WORK/nodir/x.svg" "$WORK" "$WORK/same.log"; do
	extra=()
	[ "$bad" = "$WORK/same.log" ] && extra=(-l "$WORK/same.log")
	emit refused -q --count 50 --plot "$bad" --json "$WORK/refused.json" "${extra[@]}"
	expect_rc "--plot $bad refused" 2
	check "--plot $bad: one line naming --plot" \
		test "$(wc -l <"$WORK/refused.err")" = 1 -a -n "$(grep '^rant: --plot: ' "$WORK/refused.err")"
	check "--plot $bad: the --json file was not created" test ! -e "$WORK/refused.json"
done
kill -INT "$REFLECTOR_PID"
wait_for 30 not_running "$REFLECTOR_PID"
expect_eq "refused runs sent nothing: the reflector saw no session" "$(sessions_seen quiet)" 0

# ------------------------------------------------------- SIGINT mid-run

# a run ended by SIGINT still gets its picture, with the report's numbers
reflector sig-refl -q
emit_bg sig -q -d 60 --interval 1000 --plot "$WORK/sig.svg" --json "$WORK/sig.json"
# some transactions first (100); the test checks consistency, not how many
udp_wait "$NS_A" InDatagrams 100
kill -INT "$EMIT_PID"
if wait_for 30 not_running "$EMIT_PID"; then
	wait "$EMIT_PID"
	expect_eq "SIGINT: emit exits 0" "$?" 0
	svg_ok "SIGINT" "$WORK/sig.svg"
	py_checks "SIGINT" 'same_numbers(sys.argv[1], sys.argv[2], ["rtt"])' "$WORK/sig.svg" "$WORK/sig.json"
else
	not_ok "SIGINT: emit ends"
fi
kill -INT "$REFLECTOR_PID"
wait_for 30 not_running "$REFLECTOR_PID"

# ------------------------------------------------------------ failed write

reflector full-refl --once -q
# a device is refused before anything is sent (outputs are regular files)
emit fulldev -q --count 200 --plot /dev/full --json "$WORK/fulldev.json"
expect_rc "--plot /dev/full (a device): refused" 2
# a full disk, as a 16 KiB file-size limit (SIGXFSZ ignored: writes fail
# with EFBIG): the SVG does not fit, the JSON does
(
	trap '' XFSZ
	ulimit -f 16
	emit full -q --count 200 --plot "$WORK/full.svg" --json "$WORK/full.json"
	exit "$EMIT_RC"
)
EMIT_RC=$?
expect_rc "--plot on a full disk" 1
check "--plot on a full disk: one line naming the file and the error" \
	test "$(grep -c 'plot' "$WORK/full.err")" = 1 -a -n "$(grep "^rant: --plot: writing $WORK/full.svg failed: File too large\$" "$WORK/full.err")"
expect_eq "--plot on a full disk: the JSON is still written, with exit_code 1" "$(json_get "$WORK/full.json" exit_code)" 1
wait_for 30 not_running "$REFLECTOR_PID"

# ----------------------------------- losses that never got a stamp, live and --analyze

# Halfway through, the reflector's address goes away and the client forgets
# its MAC: every later ping waits for an ARP answer that never comes and is
# dropped before the wire, with no TX stamp.  Each loss is drawn and counted
# where the run's total is: the title, the time panel, the --analyze picture.
reflector nostamp -q
# 3000 pings at 2 ms: 6 s, so that the first status line (once a second)
# comes while pings remain also on a loaded host (600 ended before it there)
emit_bg nostamp --count 3000 --interval 2000 --timeout 20 -v -l "$WORK/nostamp.log" \
	--plot "$WORK/nostamp.svg" --json "$WORK/nostamp.json"
if wait_for 30 grep -q 'samples [1-9]' "$WORK/nostamp.err"; then
	ip -n "$NS_B" addr del "$ADDR_B/24" dev "$VETH_B"
	ip -n "$NS_A" neigh flush dev "$VETH_A"
fi
wait "$EMIT_PID"
EMIT_RC=$?
kill -9 "$REFLECTOR_PID" 2>/dev/null
ip -n "$NS_B" addr add "$ADDR_B/24" dev "$VETH_B"
"$RANT" --analyze "$WORK/nostamp.log" --plot "$WORK/nostamp-a.svg" --json "$WORK/nostamp-a.json" \
	>"$WORK/nostamp-a.out" 2>"$WORK/nostamp-a.err"
expect_eq "unstamped losses: --analyze --plot exits 0" "$?" 0
svg_ok "unstamped losses, live" "$WORK/nostamp.svg"
svg_ok "unstamped losses, --analyze" "$WORK/nostamp-a.svg"
py_checks "unstamped losses" '
d, a = json.load(open(sys.argv[1])), json.load(open(sys.argv[4]))
rows = [l.split() for l in open(sys.argv[3]) if l[:1].isdigit()]
bare = sum(1 for r in rows if r[1] == "-" and r[-1] == "lost")
lost = d["packets"]["lost"]
t("the run lost pings that got no stamp at all (%d of %d lost)" % (bare, lost), bare > 0 and lost >= bare, (bare, lost))
for name, svg in (("live", sys.argv[2]), ("--analyze", sys.argv[5])):
    body = open(svg).read()
    t(name + ": the time panel counts every loss (%d)" % lost, ("; lost %d, late %d, breaches" % (lost, d["packets"]["late"])) in body)
    t(name + ": the title counts them too", re.search(r"over [^;<]*; lost %d, late" % lost, body) is not None)
    t(name + ": the lost strip has marks", body.count("l6 6m0 -6l-6 6") >= 1)
t("--analyze counts them as the run did", a["packets"]["lost"] == lost, (a["packets"]["lost"], lost))
' "$WORK/nostamp.json" "$WORK/nostamp.svg" "$WORK/nostamp.log" "$WORK/nostamp-a.json" "$WORK/nostamp-a.svg"

finish
