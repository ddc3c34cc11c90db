#!/bin/bash
# make bench, part --plot: the time and memory of plotting PLOT_ROWS
# transactions (default 30 M), from the log ring (tests/plot-bench) and
# from a synthetic log through --analyze (tests/plot-gen), with and without
# --plot, measured by /usr/bin/time.  The log needs ~60 bytes a row in TMPDIR.
#
#   make bench            PLOT_ROWS=30000000
set -u
cd "$(dirname "$0")/.." || exit 2
: "${PLOT_ROWS:=30000000}"
: "${TMPDIR:=/tmp}"
: "${RANT:=$PWD/rant}"

work=$(mktemp -d "$TMPDIR/rant-plot-bench.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

PLOT_BENCH_RECORDS=$PLOT_ROWS tests/plot-bench || exit 1
tests/plot-gen "$PLOT_ROWS" "$work/log" || exit 1
for plot in "" --plot; do
	args=(--analyze "$work/log" -q)
	[ -n "$plot" ] && args+=(--plot "$work/plot.svg")
	if ! /usr/bin/time -f "%e %M" -o "$work/time" "$RANT" "${args[@]}" >/dev/null 2>"$work/err"; then
		echo "plot-bench: rant ${args[*]} failed:" >&2
		cat "$work/err" >&2
		exit 1
	fi
	read -r secs kb <"$work/time"
	printf 'rant --analyze of %s rows%s: %s s, max RSS %s MiB\n' "$PLOT_ROWS" "${plot:+ --plot}" "$secs" "$((kb / 1024))"
done
