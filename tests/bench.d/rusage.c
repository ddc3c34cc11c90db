// SPDX-License-Identifier: Apache-2.0
/*
 * rusage - what make bench reads of each process it measures, without
 * sampling it: the peak resident set and the preemptions, from wait4(2)
 * when the process ends.
 *
 *   rusage [-l US] FILE COMMAND [ARG...]
 *
 * Runs COMMAND as its child, passes SIGTERM, SIGINT and SIGHUP on to it,
 * and when it has ended writes to FILE one line:
 *   MAXRSS_KIB NIVCSW
 * ru_maxrss (the peak RSS in KiB: the VmHWM of /proc/PID/status, taken
 * when the process exits rather than when it was last looked at) and
 * ru_nivcsw (involuntary context switches of all its threads: the times
 * the scheduler took the CPU from it).  FILE holds "0 0" until then.
 * Exits with COMMAND's status, 128 + N if signal N ended it, 127 if it
 * could not be run.
 *
 * -l US holds the CPU latency limit (/dev/cpu_dma_latency) at US while
 * COMMAND runs, as rant does by default (--cpu-latency): the floors and
 * sockperf measured under the same idle states as rant.  Not held: exit 2,
 * nothing run.
 *
 * Why: bench.sh sampled /proc/PID/status every 0.2 s with awk and sleep,
 * two forks per sample on a host whose two CPUs the client and the server
 * keep busy, every sample a preemption of one of them.  With those
 * samplers on both ends the stamped floor ran at 0.92x its rate without
 * them (median of 12 interleaved pairs, spinning).  A parent asleep in
 * wait4(2) takes no CPU while the run lasts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t child;

static void pass_on(int sig)
{
	if (child > 0) {
		kill(child, sig);
	}
}

static int put(const char *file, long rss, long nivcsw)
{
	FILE *f = fopen(file, "w");

	if (!f) {
		fprintf(stderr, "rusage: %s: %s\n", file, strerror(errno));
		return -1;
	}
	fprintf(f, "%ld %ld\n", rss, nivcsw);
	return fclose(f);
}

/* Hold the CPU latency limit at US until this process ends (the request goes with the file). */
static int hold(const char *us)
{
	char *end;
	long v = strtol(us, &end, 10);
	int32_t v32 = (int32_t)v;
	int fd;

	if (!*us || *end || v < 0 || v > 1000000) {
		fprintf(stderr, "rusage: -l: '%s' is not a whole number of us (0 to 1000000)\n", us);
		return -1;
	}
	fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, &v32, sizeof(v32)) != (ssize_t)sizeof(v32)) {
		fprintf(stderr, "rusage: -l: /dev/cpu_dma_latency: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa = { .sa_handler = pass_on };
	struct rusage ru;
	sigset_t block, old;
	pid_t pid, parent = getpid();
	int st, i;

	if (argc >= 3 && !strcmp(argv[1], "-l")) {
		if (hold(argv[2]) < 0) {
			return 2;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc < 3) {
		fputs("usage: rusage [-l US] FILE COMMAND [ARG...]\n", stderr);
		return 2;
	}
	if (put(argv[1], 0, 0) < 0) {
		return 2;
	}
	/* SA_RESTART: wait4 goes on waiting after a signal was passed on */
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (i = 0; i < 3; i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&block, sigs[i]);
	}
	/* held until the child is known, so that none is lost between fork and child = pid */
	sigprocmask(SIG_BLOCK, &block, &old);
	pid = fork();
	if (pid < 0) {
		perror("rusage: fork");
		return 127;
	}
	if (!pid) {
		for (i = 0; i < 3; i++) {
			signal(sigs[i], SIG_DFL);
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		/* a parent killed outright (SIGKILL) takes the measured process with it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) {
			_exit(127);
		}
		execvp(argv[2], argv + 2);
		fprintf(stderr, "rusage: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	child = pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	while (wait4(pid, &st, 0, &ru) < 0) {
		if (errno != EINTR) {
			perror("rusage: wait4");
			return 127;
		}
	}
	if (put(argv[1], ru.ru_maxrss, ru.ru_nivcsw) < 0) {
		return 127;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
