#!/bin/bash
# Which network suites the sanitizer builds run (make cover, as root).
#
# rant, the unit tests and tests/opts-table are built with gcc --coverage;
# every network suite runs against that rant (JOBS at a time), and so do
# the unit tests and the option cases, which the sanitizer builds run in
# any case; each writes its own counts (GCOV_PREFIX).  gcov reads from each
# the lines of rant.c it executed and the branches it took.  A greedy cover
# then starts from what the unit tests and option cases reach and picks,
# again and again, the network suite that adds the most lines and branches
# not reached yet, until together they reach all that the network suites
# reach.  Prints each suite's share, the cover in order with what each
# adds, and the SAN_SUITES line for the Makefile.  Run it again when the
# suites or rant.c change much.  (A run under a file-size limit, as the
# full-disk tests make, cannot write its counts: those paths are not in.)
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=tests/lib.sh
TAP_ONLY=1 . tests/lib.sh
: "${CC:=gcc}"
: "${JOBS:=6}"

if [ "$(id -u)" -ne 0 ]; then
	echo "cover.sh: needs root (the network suites create namespaces): sudo make cover" >&2
	exit 1
fi
DIR=$(mktemp -d /tmp/rant-cover.XXXXXX)
chmod 755 "$DIR"	# net-lo runs rant as nobody
if [ -n "${KEEP:-}" ]; then
	echo "cover: keeping $DIR" >&2
else
	trap 'rm -rf "$DIR"' EXIT
fi
mkdir "$DIR/bin"
for b in rant tests/unit tests/opts-table; do
	"$CC" -O0 -g --coverage -o "$DIR/bin/${b#tests/}" "$b.c" -lm -lpthread || exit 1
done
strip=$(echo "$DIR/bin" | tr -cd / | wc -c)

suites=(unit tests/net-opts.sh)
for t in tests/net-*.sh; do
	[ "$t" = tests/net-opts.sh ] || suites+=("$t")
done
running=0
for t in "${suites[@]}"; do
	name=$(basename "$t" .sh)
	mkdir -m 1777 "$DIR/$name"
	while [ "$running" -ge "$JOBS" ]; do
		wait -n
		running=$((running - 1))
	done
	echo "cover: running $t" >&2
	cmd=(bash "$t")
	[ "$t" = unit ] && cmd=("$DIR/bin/unit")
	GCOV_PREFIX=$DIR/$name GCOV_PREFIX_STRIP=$strip RANT=$DIR/bin/rant OPTS_TABLE=$DIR/bin/opts-table \
		"${cmd[@]}" >"$DIR/$name.log" 2>&1 &
	running=$((running + 1))
done
wait
for t in "${suites[@]}"; do
	name=$(basename "$t" .sh)
	read -r p f s < <(tap_count "$DIR/$name.log")
	echo "cover: $t: $p passed, $f failed, $s skipped" >&2
	grep '^not ok' "$DIR/$name.log" | sed 's/^/cover:   /' >&2
	cp "$DIR"/bin/*.gcno "$DIR/$name/"
	for b in rant unit opts-table; do
		[ -e "$DIR/$name/$b.gcda" ] || continue
		(cd "$DIR/$name" && gcov -j -b -o . "$b.c" >/dev/null 2>&1)
	done
done

python3 - "$DIR" "${suites[@]}" <<'PY'
import gzip, json, os, sys
top, suites = sys.argv[1], sys.argv[2:]
reach, fn = {}, {}
for t in suites:
    name = os.path.basename(t)[:-3] if t.endswith(".sh") else t
    got = set()
    for b in ("rant", "unit", "opts-table"):
        path = os.path.join(top, name, b + ".gcov.json.gz")
        if not os.path.exists(path):
            continue
        for f in json.load(gzip.open(path))["files"]:
            if not f["file"].endswith("rant.c"):
                continue
            for ln in f["lines"]:
                fn[ln["line_number"]] = ln.get("function_name", "?")
                if ln["count"]:
                    got.add(("line", ln["line_number"]))
                for i, b in enumerate(ln.get("branches", [])):
                    if b["count"]:
                        got.add(("branch", ln["line_number"], i))
    reach[t] = got
free = reach["unit"] | reach["tests/net-opts.sh"]
net = [t for t in suites if t not in ("unit", "tests/net-opts.sh")]
union = set().union(*(reach[t] for t in net))
def count(s):
    return "%d lines, %d branches" % (sum(1 for x in s if x[0] == "line"), sum(1 for x in s if x[0] == "branch"))
print("every network suite together: " + count(union))
print("of which the unit tests and option cases reach: " + count(union & free))
for t in suites:
    print("  %-24s %s" % (t, count(reach[t])))
left, cover = union - free, []
while left:
    best = max(net, key=lambda t: (len(reach[t] & left), -net.index(t)))
    add = reach[best] & left
    if not add:
        break
    cover.append(best)
    left -= add
    print("cover %2d: %-24s adds %s" % (len(cover), best, count(add)))
    if len(add) <= 12:
        print("          " + ", ".join("%s %d (%s)" % (x[0], x[1], fn.get(x[1], "?")) for x in sorted(add, key=lambda x: x[1:])))
print("SAN_SUITES = " + " ".join(cover))
PY
