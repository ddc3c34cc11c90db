#!/bin/bash
# make bench's summary (tests/bench.d/summary.py) on synthetic results, as
# TAP: per-tool medians, per-round ratios, the goals' verdicts with the
# rounds that bear them out and the sign test's p, a starved round left out
# of its ratios, a missing tool's goal left out, the busy warning only past
# the spread.  Needs python3 only (no root, no network).
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=tests/lib.sh
. tests/lib.sh

HEAD="pairing tool round rtt_p50_ns rtt_p99_ns tps rss_client_kib rss_server_kib proc_p50_ns proc_p99_ns ovh_p50_ns ovh_p99_ns lost wire preempt_client preempt_server"

# row PAIRING TOOL ROUND RTT_P50 TPS: one run's line, the other columns fixed
row() {
	echo "$1 $2 $3 $4 $(($4 * 2)) $5 100 100 - - - - 0 software 1 1"
}

# results A: 9 rounds.  Blocking, rant equals floor-ts in every round (both
# goals within); spinning, rant's rate is 0.8x floor-ts's in every round (a
# miss all 9 agree on); rant-N against sockperf: rate 0.9x in 5 rounds and
# 1.1x in 4 (a median miss that the rounds do not bear out); rant-NN
# (--client-no-tx-ts) 0.76x sockperf's RTT at 1.2x its rate spinning, and
# floor-rx (the floor with rant-NN's stamps) 0.8x sockperf's RTT at 1.25x its
# rate: rant-NN 0.95x floor-rx's RTT at 0.96x its rate.
{
	echo "$HEAD"
	for r in 1 2 3 4 5 6 7 8 9; do
		row defaults floor-ts "$r" 10000 50000
		row defaults rant "$r" 10000 50000
		row spin floor-ts "$r" 5000 100000
		row spin rant "$r" 5000 80000
		row defaults sockperf "$r" 10000 50000
		row spin sockperf "$r" 5000 100000
		row defaults rant-NN "$r" 9000 60000
		row spin rant-NN "$r" 3800 120000
		row defaults floor-rx "$r" 8000 62500
		row spin floor-rx "$r" 4000 125000
		if [ "$r" -le 5 ]; then
			row defaults rant-N "$r" 9000 45000
			row spin rant-N "$r" 4000 90000
		else
			row defaults rant-N "$r" 9000 55000
			row spin rant-N "$r" 4000 110000
		fi
	done
} >"$WORK/a.txt"
python3 tests/bench.d/summary.py "$WORK/a.txt" 9 2 64 1.25 >"$WORK/a.out" 2>&1
expect_eq "summary: exit 0" "$?" 0
check "goal met where every round is within it" hasf "$WORK/a.out" '| rant / floor-ts: RTT ≤ 1.05×, rate ≥ 0.95× | defaults | 1.00 (1.00–1.00) | 1.00 (1.00–1.00) | yes: both within in 9 of 9 rounds (sign test p = 0.002) |'
check "goal missed in every round: conclusive" hasf "$WORK/a.out" '| rant / floor-ts: RTT ≤ 1.05×, rate ≥ 0.95× | spin | 1.00 (1.00–1.00) | 0.80 (0.80–0.80) | no: rate below 0.95× in 9 of 9 rounds (sign test p = 0.002) |'
check "a median miss in 5 of 9 rounds: not conclusive" hasf "$WORK/a.out" '| rant-N / sockperf: RTT ≤ 0.95×, rate ≥ 1.05× | defaults | 0.90 (0.90–0.90) | 0.90 (0.90–1.10) | no: rate below 1.05× in 5 of 9 rounds (sign test p = 0.500, not conclusive) |'
check "the client's stamps off too: rant-NN's goal, met in every round" hasf "$WORK/a.out" '| rant-NN / sockperf: RTT ≤ 0.95×, rate ≥ 1.05× | spin | 0.76 (0.76–0.76) | 1.20 (1.20–1.20) | yes: both within in 9 of 9 rounds (sign test p = 0.002) |'
check "rant-NN against the floor with its stamps: within" hasf "$WORK/a.out" '| rant-NN / floor-rx: RTT ≤ 1.05×, rate ≥ 0.95× | spin | 0.95 (0.95–0.95) | 0.96 (0.96–0.96) | yes: both within in 9 of 9 rounds (sign test p = 0.002) |'
check "floor-rx against sockperf: what rant-NN's goal asks of it" hasf "$WORK/a.out" 'floor-rx / sockperf spin: RTT p50 0.80×, rate 1.25×: rant-NN ahead of sockperf (0.95×, 1.05×) asks of it 1.19× floor-rx'"'"'s RTT and 0.84× its rate'
check "ratios: floor-rx / sockperf" hasf "$WORK/a.out" '| floor-rx / sockperf | 0.80 (0.80–0.80) | 0.80 (0.80–0.80) | 1.25 (1.25–1.25) |'
check "per-tool medians: rant-N's spinning rate is the median of its rounds" hasf "$WORK/a.out" '| rant-N | 4,000 | 8,000 | 90,000 |'
check "ratios: rant / floor-ts spinning rate, median (min–max)" hasf "$WORK/a.out" '| rant / floor-ts | 1.00 (1.00–1.00) | 1.00 (1.00–1.00) | 0.80 (0.80–0.80) |'
check "spreads within x1.25: no busy warning" hasnt "$WORK/a.out" 'WARNING'

# results B: 7 rounds, one of them starved (rant's rate 0: no ratio from it),
# no rant-N at all, and rant's spinning rate spread 0.57x-0.99x of floor-ts's
# (past x1.25; sockperf's follows rant's, so rant / sockperf does not spread)
{
	echo "$HEAD"
	for r in 1 2 3 4 5 6 7; do
		row defaults floor-ts "$r" 10000 50000
		row spin floor-ts "$r" 5000 100000
		row defaults sockperf "$r" 10000 50000
		row spin sockperf "$r" 6000 $((50000 + r * 7000))
		if [ "$r" = 4 ]; then
			row defaults rant "$r" 10000 0
		else
			row defaults rant "$r" 10400 48000
		fi
		row spin rant "$r" 6000 $((50000 + r * 7000))
	done
} >"$WORK/b.txt"
python3 tests/bench.d/summary.py "$WORK/b.txt" 7 2 64 1.25 >"$WORK/b.out" 2>&1
expect_eq "summary B: exit 0" "$?" 0
check "a starved round leaves the goal's rounds, not a ratio of 0" hasf "$WORK/b.out" '| rant / floor-ts: RTT ≤ 1.05×, rate ≥ 0.95× | defaults | 1.04 (1.04–1.04) | 0.96 (0.96–0.96) | yes: both within in 6 of 6 rounds (sign test p = 0.016) |'
check "RTT above the goal decides when it misses in more rounds than the rate" hasf "$WORK/b.out" '| rant / floor-ts: RTT ≤ 1.05×, rate ≥ 0.95× | spin | 1.20 (1.20–1.20) | 0.78 (0.57–0.99) | no: RTT above 1.05× in 7 of 7 rounds (sign test p = 0.008) |'
check "no rant-N runs: no rant-N goal" hasnt "$WORK/b.out" 'rant-N / sockperf: RTT'
check "no rant-NN runs: no rant-NN goal" hasnt "$WORK/b.out" 'rant-NN / sockperf: RTT'
check "no floor-rx runs: no line on it" hasnt "$WORK/b.out" 'floor-rx'
check "spreads past x1.25: the busy warning, naming the widest" hasf "$WORK/b.out" '1 of 8 p50/rate ratios spread wider than ×1.25 across rounds (widest: spin rant/floor-ts tps 0.57–0.99); a goal'"'"'s verdict with sign test p < 0.05 stands all the same'
finish
