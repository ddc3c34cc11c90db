#!/bin/bash
# rant on the host's loopback, without namespaces and without root: what
# needs privileges (mlockall, SO_BINDTODEVICE on older kernels) may warn,
# nothing may fail.  As root the runs drop to nobody with setpriv; as a user
# they run as that user.  Traffic stays on 127.0.0.1 / ::1.

# shellcheck source=tests/lib.sh
. "$(dirname "$0")/lib.sh"

# as_user CMD...: run unprivileged
as_user() {
	if is_root; then
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"
	else
		"$@"
	fi
}

if is_root && ! command -v setpriv >/dev/null; then
	skip "lo without root: setpriv (util-linux) not installed"
	finish
	exit 0
fi
if is_root && ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$RANT"; then
	skip "lo without root: nobody cannot execute $RANT (a directory on its path is not world-searchable)"
	finish
	exit 0
fi
chmod 1777 "$WORK"

# a free UDP port on the host's loopback
PORT=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.bind(("::", 0)); print(s.getsockname()[1])')

lo_run() { # NAME ADDR: a reflector and a client as an unprivileged user
	local name=$1 addr=$2 rpid
	as_user "$RANT" -i lo --port "$PORT" --once -s --json "$WORK/$name-r.json" >"$WORK/$name-r.out" 2>"$WORK/$name-r.err" &
	rpid=$!
	BG_PIDS+=("$rpid")
	wait_for 30 sh -c "ss -Hlun 'sport = :$PORT' | grep -q ."
	as_user "$RANT" -i lo -a "$addr" --port "$PORT" --count 2000 -s -w 10 --json "$WORK/$name.json" \
		>"$WORK/$name.out" 2>"$WORK/$name.err"
	EMIT_RC=$?
	wait_for 30 not_running "$rpid"
	wait "$rpid" 2>/dev/null
	REFLECT_RC=$?
}

for fam in 4 6; do
	addr=127.0.0.1
	[ "$fam" = 6 ] && addr=::1
	lo_run "v$fam" "$addr"
	expect_eq "lo IPv$fam unprivileged: client exit 0" "$EMIT_RC" 0
	expect_eq "lo IPv$fam unprivileged: reflector exit 0 after the FIN" "$REFLECT_RC" 0
	expect_eq "lo IPv$fam: samples = received - warm-up" \
		"$(json_get "$WORK/v$fam.json" metrics.rtt.samples)" \
		"$(($(json_get "$WORK/v$fam.json" packets.received) - $(json_get "$WORK/v$fam.json" packets.warmup)))"
	expect_eq "lo IPv$fam: nothing lost" "$(json_get "$WORK/v$fam.json" packets.lost)" 0
	expect_eq "lo IPv$fam: wire stamps are the kernel's" "$(json_get "$WORK/v$fam.json" timestamps.wire)" software
	expect_eq "lo IPv$fam: reflector answered every ping" \
		"$(json_get "$WORK/v$fam-r.json" packets.received)" "$(json_get "$WORK/v$fam.json" packets.sent)"
	if is_root && [ -c /dev/cpu_dma_latency ]; then
		# the CPU latency device is root's: not held, said, and the run goes on
		expect_eq "lo IPv$fam unprivileged: no CPU latency limit held (JSON)" \
			"$(json_get "$WORK/v$fam.json" cpu_latency_us)" null
		check "lo IPv$fam unprivileged: the JSON says why none is held" \
			grep -q '"cpu_latency_why": "/dev/cpu_dma_latency: Permission denied"' "$WORK/v$fam.json"
		check "lo IPv$fam unprivileged: one warning line says it is not held" \
			grep -q '^rant: warning: CPU latency limit not held: /dev/cpu_dma_latency: Permission denied; ' "$WORK/v$fam.err"
	fi
	check "lo IPv$fam: only warnings on stderr, no errors" \
		sh -c "! grep -v -e '^rant: warning:' -e '^rant [0-9.]*: emit to' -e '^rant: .* samples' -e '^Memory locked in RAM (mlockall successful)$' '$WORK/v$fam.err' | grep -q ."
	PORT=$((PORT + 1))
done

# options the kernel refuses to an unprivileged socket: exit 2, one line, nothing sent
refused() { # NAME OPTION-NAME rant-options...
	local name=$1 opt=$2 rc
	shift 2
	as_user "$RANT" -i lo -a 127.0.0.1 --port "$PORT" --count 5 -q "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
	rc=$?
	expect_eq "unprivileged $opt: exit 2" "$rc" 2
	expect_eq "unprivileged $opt: one line on stderr" "$(wc -l <"$WORK/$name.err")" 1
	check "unprivileged $opt: the line names $opt" grep -q -- "^rant: $opt: .*refused" "$WORK/$name.err"
	check "unprivileged $opt: no report (nothing ran)" test ! -s "$WORK/$name.out"
}
# (SO_BUSY_POLL itself is not privileged on this kernel: 6.18 accepts -p 50 from nobody)
refused prio --priority --priority 7
# a CPU latency limit asked for by name that cannot be held: exit 2, one line, nothing sent
if is_root && [ -c /dev/cpu_dma_latency ]; then
	as_user "$RANT" -i lo -a 127.0.0.1 --port "$PORT" --count 5 -q --cpu-latency 0 >"$WORK/cl.out" 2>"$WORK/cl.err"
	expect_eq "unprivileged --cpu-latency 0: exit 2" "$?" 2
	expect_eq "unprivileged --cpu-latency 0: one line on stderr" "$(wc -l <"$WORK/cl.err")" 1
	check "unprivileged --cpu-latency 0: the line says it cannot be held and why" \
		grep -q '^rant: --cpu-latency: cannot hold 0 us: /dev/cpu_dma_latency: Permission denied' "$WORK/cl.err"
	check "unprivileged --cpu-latency 0: no report (nothing ran)" test ! -s "$WORK/cl.out"
fi
refused budget --budget -B 64

# The memory a run locks, sized up front: said at start when large, refused
# (exit 2, one line naming --log-records, no file, nothing sent) when it
# cannot be had.
mem_refused() { # NAME LABEL PATTERN rant options...
	local name=$1 label=$2 pat=$3
	shift 3
	"$@" -i lo -a 127.0.0.1 --port "$PORT" -l "$WORK/$name.csv" >"$WORK/$name.out" 2>"$WORK/$name.err"
	expect_eq "$label: exit 2" "$?" 2
	expect_eq "$label: one line on stderr" "$(wc -l <"$WORK/$name.err")" 1
	check "$label: the line names --log-records and the limit" grep -Eq "^rant: --log-records: .*$pat" "$WORK/$name.err"
	check "$label: no log file, no report" test ! -e "$WORK/$name.csv" -a ! -s "$WORK/$name.out"
}
mem_refused memhuge "a ring above the host's memory" "(MemAvailable|80 % of the host's RAM)" \
	as_user "$RANT" -d 31536000 --interval 100
# RLIMIT_MEMLOCK at 8 MiB (or below, as it was), as an unprivileged user has it
mem_refused memrl "a ring above RLIMIT_MEMLOCK, unprivileged" "RLIMIT_MEMLOCK \(not root, no CAP_IPC_LOCK\)" \
	as_user sh -c 'ulimit -l 8192 2>/dev/null; exec "$@"' sh "$RANT" --count 10 --log-records 4000000
if is_root; then
	# root (CAP_IPC_LOCK) may lock it: said in one line before the first packet
	# setpriv itself, not as_user: $! is then rant's pid (setpriv execs it), for the cleanup
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$RANT" -i lo --port "$PORT" --once -q >/dev/null 2>&1 &
	rpid=$!
	BG_PIDS+=("$rpid")
	wait_for 30 sh -c "ss -Hlun 'sport = :$PORT' | grep -q ."
	"$RANT" -i lo -a 127.0.0.1 --port "$PORT" --count 100 --log-records 3000000 -l "$WORK/membig.csv" \
		>"$WORK/membig.out" 2>"$WORK/membig.err"
	expect_eq "a ring above 256 MiB that can be had: exit 0" "$?" 0
	check "... said at start in one line" grep -Eq \
		'^rant: locking 0\.[0-9]{2} GiB of memory before the first packet \(3000000 log records of 92 B; --log-records sets it\)$' \
		"$WORK/membig.err"
	wait_for 30 not_running "$rpid"
fi
finish
