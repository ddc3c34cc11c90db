#!/bin/bash
# make bench's measuring wrapper (tests/bench.d/rusage.c), as TAP: the
# command's exit status passed through (128 + N for signal N), "0 0" in its
# file while the command runs and its peak RSS and preemptions after, a TERM
# passed on, the command killed with it when the wrapper is killed outright,
# bad use refused with exit 2, -l holding the CPU latency limit.  No
# network; -l's hold is checked as root.
# shellcheck disable=SC2016 # the sh -c scripts expand in their shells, not here
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=tests/lib.sh
. tests/lib.sh

RU=$PWD/tests/bench.d/rusage
if [ ! -x "$RU" ]; then
	not_ok "tests/bench.d/rusage is not built (make check-build)"
	finish
	exit 1
fi

# gone PID: the process has ended (no such process, or a zombie nobody reaped yet)
gone() {
	[ ! -e "/proc/$1" ] || grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null
}

"$RU" >/dev/null 2>"$WORK/usage.err"
expect_eq "no command: exit 2" "$?" 2
check "no command: the usage on stderr, one line" test "$(wc -l <"$WORK/usage.err")" -eq 1
"$RU" "$WORK/no/such/dir/f" true 2>"$WORK/nofile.err"
expect_eq "a file it cannot write: exit 2, before the command runs" "$?" 2
check "a file it cannot write: named on stderr" hasf "$WORK/nofile.err" "$WORK/no/such/dir/f"

# -l US: the CPU latency limit held by the wrapper while the command runs
"$RU" -l x "$WORK/lx" touch "$WORK/lx.ran" 2>"$WORK/lx.err"
expect_eq "-l x: exit 2" "$?" 2
check "-l x: nothing run" test ! -e "$WORK/lx.ran"
check "-l x: one line naming -l" grep -q '^rusage: -l: ' "$WORK/lx.err"
if is_root && [ -c /dev/cpu_dma_latency ]; then
	"$RU" -l 7 "$WORK/l7" sh -c 'find "/proc/$PPID/fd" -lname /dev/cpu_dma_latency | grep -q . &&
		! find "/proc/$$/fd" -lname /dev/cpu_dma_latency | grep -q .'
	expect_eq "-l 7: the wrapper holds the CPU latency device while the command runs, the command does not inherit it" "$?" 0
else
	skip "-l: the CPU latency device needs root and CONFIG_CPU_IDLE"
fi

"$RU" "$WORK/exit3" sh -c 'exit 3'
expect_eq "the command's exit status is the wrapper's" "$?" 3
check "after the command: two whole numbers in the file" grep -Eq '^[0-9]+ [0-9]+$' "$WORK/exit3"

"$RU" "$WORK/none" "$WORK/no-such-command" 2>/dev/null
expect_eq "a command that cannot run: exit 127" "$?" 127

# the peak resident set: 64 MiB written, against a process that writes none
"$RU" "$WORK/big" python3 -c 'b = b"x" * (64 << 20)'
"$RU" "$WORK/small" true
read -r big_rss _ <"$WORK/big"
read -r small_rss _ <"$WORK/small"
check "peak RSS of a process that touched 64 MiB: at least 65536 KiB (got $big_rss)" test "$big_rss" -ge 65536
check "peak RSS of true: below that by at least 64 MiB (got $small_rss)" test $((big_rss - small_rss)) -ge 65536

# while it runs the file says "0 0"; a TERM to the wrapper ends the command
"$RU" "$WORK/term" sh -c 'echo $$ >"$1"; exec sleep 60' sh "$WORK/term.pid" &
ru_pid=$!
wait_for 10 test -s "$WORK/term.pid"
expect_eq "while the command runs: 0 0" "$(cat "$WORK/term")" "0 0"
kill -TERM "$ru_pid"
wait "$ru_pid"
expect_eq "TERM passed on: the command ended by it (128 + 15)" "$?" 143
check "TERM passed on: the command is gone" gone "$(cat "$WORK/term.pid")"
check "TERM passed on: its numbers written" grep -Eq '^[1-9][0-9]* [0-9]+$' "$WORK/term"

# the wrapper killed outright: the command goes with it (PR_SET_PDEATHSIG)
"$RU" "$WORK/kill" sh -c 'echo $$ >"$1"; exec sleep 60' sh "$WORK/kill.pid" &
ru_pid=$!
wait_for 10 test -s "$WORK/kill.pid"
kill -KILL "$ru_pid"
{ wait "$ru_pid"; } 2>/dev/null
child=$(cat "$WORK/kill.pid")
if wait_for 10 gone "$child"; then
	ok "the wrapper killed: the command killed with it"
else
	not_ok "the wrapper killed: the command $child still runs"
	kill -KILL "$child" 2>/dev/null
fi

# preemptions: a busy loop sharing its CPU with another, which spins until it is done
cpu=$(taskset -pc $$ | sed 's/.*: //; s/[,-].*//')
taskset -c "$cpu" sh -c 'while :; do :; done' &
other=$!
taskset -c "$cpu" "$RU" "$WORK/nivcsw" sh -c 'i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done'
kill "$other"
{ wait "$other"; } 2>/dev/null
read -r _ nivcsw <"$WORK/nivcsw"
check "a busy loop sharing its CPU with another: preempted at least once (got $nivcsw)" test "$nivcsw" -ge 1

finish
