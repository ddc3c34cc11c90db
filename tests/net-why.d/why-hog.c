/*
 * The injected cause of tests/net-why.sh: a busy loop of a known length.
 *   why-hog CPU FIFO_PRIO BUSY_US FILE [LINGER_S]
 * It pins itself to CPU, makes itself SCHED_FIFO FIFO_PRIO (0: stays as it
 * is), then spins for BUSY_US microseconds and writes "pid start_mono_ns
 * end_mono_ns start_real_ns end_real_ns" to FILE: the truth the test holds
 * rant's Why: to, taken after the policy is set, so that it holds nothing
 * but the spin (FILE.start, empty, is made just before the spin).  With
 * WHY_HOLD=PID in the environment, PID is stopped (SIGSTOP) for
 * WHY_HOLD_US microseconds (default 3000) before the spin and continued
 * (SIGCONT) as it starts.  It then sleeps LINGER_S seconds (default 0) at its policy,
 * so that rant can still read it.
 *   why-hog stop PID STOP_US FILE
 * stops PID (SIGSTOP) for STOP_US microseconds and continues it (SIGCONT),
 * writing the same line about the stop (its pid: PID).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static unsigned long long ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return (unsigned long long)t.tv_sec * 1000000000ULL + (unsigned long long)t.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long long m0, r0, m1, r1, len;
	struct sched_param sp = { 0 };
	char start[4096];
	cpu_set_t set;
	FILE *f;

	if (argc == 5 && !strcmp(argv[1], "stop")) {
		int pid = atoi(argv[2]);

		len = strtoull(argv[3], NULL, 10) * 1000ULL;
		m0 = ns(CLOCK_MONOTONIC);
		r0 = ns(CLOCK_REALTIME);
		if (kill(pid, SIGSTOP) < 0) {
			perror("SIGSTOP");
			return 1;
		}
		do {
			m1 = ns(CLOCK_MONOTONIC);
		} while (m1 - m0 < len);
		kill(pid, SIGCONT);
		r1 = ns(CLOCK_REALTIME);
		f = fopen(argv[4], "w");
		if (!f) {
			perror(argv[4]);
			return 1;
		}
		fprintf(f, "%d %llu %llu %llu %llu\n", pid, m0, m1, r0, r1);
		fclose(f);
		return 0;
	}
	if (argc < 5) {
		fprintf(stderr, "usage: why-hog CPU FIFO_PRIO BUSY_US FILE [LINGER_S]\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(atoi(argv[1]), &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		perror("sched_setaffinity");
		return 1;
	}
	sp.sched_priority = atoi(argv[2]);
	if (sp.sched_priority && sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
		perror("sched_setscheduler");
		return 1;
	}
	len = strtoull(argv[3], NULL, 10) * 1000ULL;
	snprintf(start, sizeof(start), "%s.start", argv[4]);
	f = fopen(start, "w");	/* "spinning now", for a test to wait on */
	if (f) {
		fclose(f);
	}
	if (getenv("WHY_HOLD")) {
		/* hold the peer WHY_HOLD_US (default 3 ms): a client then waits for a pong */
		long us = getenv("WHY_HOLD_US") ? atol(getenv("WHY_HOLD_US")) : 3000;
		struct timespec hold = { us / 1000000, us % 1000000 * 1000 };

		kill(atoi(getenv("WHY_HOLD")), SIGSTOP);
		nanosleep(&hold, NULL);
	}
	m0 = ns(CLOCK_MONOTONIC);
	r0 = ns(CLOCK_REALTIME);
	if (getenv("WHY_HOLD")) {
		kill(atoi(getenv("WHY_HOLD")), SIGCONT);	/* its answers come during the spin */
	}
	do {
		m1 = ns(CLOCK_MONOTONIC);
	} while (m1 - m0 < len);
	r1 = ns(CLOCK_REALTIME);
	f = fopen(argv[4], "w");
	if (!f) {
		perror(argv[4]);
		return 1;
	}
	fprintf(f, "%d %llu %llu %llu %llu\n", (int)getpid(), m0, m1, r0, r1);
	fclose(f);
	if (argc > 5) {
		sleep((unsigned)atoi(argv[5]));
	}
	return 0;
}
