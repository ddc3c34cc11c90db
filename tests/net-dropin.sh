#!/bin/bash
# Drop-in, round 3: what the earlier rant's users, crucible's bench-rant and
# the TAPRIO, pktgen and cyclictest users of the earlier tool hit first:
#   - the earlier build line `gcc -o rant rant.c` (no -lm) builds a rant that runs;
#   - `rant` with no arguments prints its usage and exits non-zero;
# (more below, one function per item).
#
#   sudo bash tests/net-dropin.sh        (RANT=path overrides the binary)

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

# RANT_SRC: the source the plain build line compiles
: "${RANT_SRC:=$(cd "$(dirname "$0")/.." && pwd)/rant.c}"

# ---------------------------------------------- the earlier build line
test_plain_build() {
	local cc=${CC:-gcc}
	if ! command -v "$cc" >/dev/null; then
		skip "plain build: no $cc here"
		return
	fi
	# exactly the earlier READMEs' line, in a directory of its own
	(cd "$WORK" && cp "$RANT_SRC" rant.c && "$cc" -o rant rant.c) >"$WORK/plain.err" 2>&1
	expect_eq "gcc -o rant rant.c: builds (no -lm, no -lpthread)" "$?" 0
	sed 's/^/#   /' "$WORK/plain.err" | head -n 5
	check "  ... links no libm" not_grep -q 'libm\.so' <(ldd "$WORK/rant" 2>/dev/null)
	"$WORK/rant" --version >"$WORK/plain.out" 2>&1
	expect_eq "  ... the binary runs (--version exit 0)" "$?" 0
	check "  ... and says its version" grep -q '^rant [0-9]' "$WORK/plain.out"
	PLAIN=$WORK/rant
}

# the plain binary measures: percentiles, averages and deviations come from
# rant's own arithmetic now (loopback of a namespace of this suite)
test_plain_run() {
	local pid
	[ -x "${PLAIN:-}" ] || return
	ip netns exec "$NS_A" "$PLAIN" -i lo --once -q --json "$WORK/plain-r.json" >"$WORK/plain-r.out" 2>&1 &
	pid=$!
	BG_PIDS+=("$pid")
	wait_for 5 udp_listening "$NS_A" 12345
	ip netns exec "$NS_A" "$PLAIN" -a 127.0.0.1 --count 2000 -H -b 0.25 -q --json "$WORK/plain-e.json" \
		>"$WORK/plain-e.out" 2>&1
	expect_eq "plain build: a 2000-ping run over loopback, exit 0" "$?" 0
	wait_exit "$pid" 10
	expect_eq "plain build: its reflector (--once) exit 0" "$WAIT_RC" 0
	py_checks "plain build" '
d = load(sys.argv[1])["metrics"]["rtt"]
p = d["percentiles_ns"]
t("2000 samples", d["samples"] == 2000, d["samples"])
t("min <= p50 <= p99 <= max", d["min_ns"] <= p["50"] <= p["99"] <= d["max_ns"], (d["min_ns"], p, d["max_ns"]))
t("stddev > 0 and below the range", 0 < d["stddev_ns"] <= d["max_ns"] - d["min_ns"], d["stddev_ns"])
t("-b 0.25: 250 ns buckets", d["histogram"]["bucket_ns"] == 250, d["histogram"]["bucket_ns"])
' "$WORK/plain-e.json"
}

need_root "net-dropin"
if ! ns_setup; then
	not_ok "namespace setup"
	finish
	exit 1
fi

test_plain_build
test_plain_run
finish
