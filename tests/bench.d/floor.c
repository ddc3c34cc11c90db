// SPDX-License-Identifier: Apache-2.0
/*
 * floor - the least a UDP ping-pong can cost on this host: no timestamps,
 * no bookkeeping, one buffer, one socket.  `make bench` measures rant and
 * sockperf against it, so that "how much does the tool add" has an answer.
 *
 *   floor server PORT [spin] [stamps | rxstamps]
 *   floor client ADDR PORT SECONDS SIZE [spin] [stamps | rxstamps]
 *
 * The client sends one datagram, waits for its echo, and keeps every app
 * RTT (clock_gettime around send -> receive) in memory (the server echoes
 * on a socket connected to it after its first datagram, see server()); at
 * the end it prints
 *   floor: samples N duration_s D p50_ns A p99_ns B
 * "spin" makes both receive loops poll non-blocking sockets instead of
 * sleeping in recv().  IPv4 only: the bench's veth pair is IPv4.
 *
 * "stamps" is the floor of a tool that stamps every packet as rant does:
 * software RX and TX stamps (SO_TIMESTAMPING with OPT_ID and OPT_TSONLY),
 * each received stamp read from its control message, and each end reading
 * its datagram's TX stamp from the error queue right after sending it (one
 * recvmmsg; 16 at a time after every 16th send was slower here: that read
 * outlasts a spinning round trip).  No matching, no statistics: what is
 * left between it and rant is rant's own work.
 *
 * "rxstamps" is the floor of rant with every stamp a user can switch off
 * switched off (-N on its reflector, --client-no-tx-ts on its client):
 * software RX stamps only, no TX stamps asked for or read.  As rant does,
 * the server reads each stamp from its datagram's control message, the
 * client its echo with recvfrom and the echo's stamp with SIOCGSTAMPNS
 * after its next send (the first one, before any datagram, turns the
 * socket's stamps on and finds none).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/errqueue.h>
#include <linux/net_tstamp.h>
#include <linux/sockios.h>

#define TX_MAX	16		/* the most one tx_stamps() reads */

static int stamps;		/* "stamps": every packet stamped, see above */
static int rxstamps;		/* "rxstamps": every received packet stamped, see above */
static uint64_t stamps_read;	/* non-zero stamps read (printed: the mode did its work) */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* the stamp of a received message's SO_TIMESTAMPING control message, or 0 */
static uint64_t cmsg_stamp(struct msghdr *m)
{
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(m); cm; cm = CMSG_NXTHDR(m, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_TIMESTAMPING &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(struct scm_timestamping))) {
			struct scm_timestamping st;

			memcpy(&st, CMSG_DATA(cm), sizeof(st));
			return (uint64_t)st.ts[0].tv_sec * 1000000000ULL + (uint64_t)st.ts[0].tv_nsec;
		}
	}
	return 0;
}

/* the client of "rxstamps": the last echo's stamp by SIOCGSTAMPNS, counted if non-zero */
static void ioctl_stamp(int fd)
{
	struct timespec ts;

	if (ioctl(fd, SIOCGSTAMPNS, &ts) == 0 && (ts.tv_sec || ts.tv_nsec)) {
		stamps_read++;
	}
}

static int stamps_on(int fd, int client)
{
	int f = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE |
		SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;
	int rf = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;

	if (rxstamps && client) {
		struct timespec ts;

		return ioctl(fd, SIOCGSTAMPNS, &ts) < 0 && errno != ENOENT ? -1 : 0;
	}
	if (rxstamps) {
		return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &rf, sizeof(rf));
	}
	return stamps ? setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &f, sizeof(f)) : 0;
}

/* read up to want TX stamps from the error queue in one recvmmsg */
static void tx_stamps(int fd, unsigned want)
{
	char ctrl[TX_MAX][128] __attribute__((aligned(8)));
	struct mmsghdr mm[TX_MAX];
	int i, n;

	memset(mm, 0, sizeof(mm[0]) * want);
	for (i = 0; i < (int)want; i++) {
		mm[i].msg_hdr.msg_control = ctrl[i];
		mm[i].msg_hdr.msg_controllen = sizeof(ctrl[i]);
	}
	n = recvmmsg(fd, mm, want, MSG_ERRQUEUE | MSG_DONTWAIT, NULL);
	for (i = 0; i < n; i++) {
		stamps_read += cmsg_stamp(&mm[i].msg_hdr) != 0;
	}
}

/*
 * The client gives up on a reply after a second (a lost datagram, or a server
 * starved of the CPU): the run fails instead of spinning or waiting forever.
 */
static int gave_up(int client, int spin, uint64_t *since, unsigned *polls)
{
	uint64_t t;

	/* spinning, the clock is read every 1024 polls; blocked, SO_RCVTIMEO woke us */
	if (!client || (spin && (++*polls & 1023))) {
		return 0;
	}
	t = now_ns();
	if (!*since) {
		*since = t;
	}
	if (t - *since < 1000000000ULL) {
		return 0;
	}
	errno = ETIMEDOUT;
	return 1;
}

/*
 * receive one datagram, spinning on EAGAIN when asked; -1 on a real error or
 * (the client) a timeout; the sender's address into from if given
 */
static ssize_t rx(int fd, char *buf, size_t len, int spin, struct sockaddr_in *from, int client)
{
	socklen_t fl = sizeof(*from);
	uint64_t since = 0;
	unsigned polls = 0;
	ssize_t n;

	if (stamps || (rxstamps && !client)) {
		char ctrl[256] __attribute__((aligned(8)));
		struct iovec iov = { buf, len };
		struct msghdr m = {
			.msg_name = from, .msg_namelen = from ? sizeof(*from) : 0,
			.msg_iov = &iov, .msg_iovlen = 1,
		};

		for (;;) {
			m.msg_control = ctrl;
			m.msg_controllen = sizeof(ctrl);
			n = recvmsg(fd, &m, spin ? MSG_DONTWAIT : 0);
			if (n >= 0) {
				stamps_read += cmsg_stamp(&m) != 0;
				return n;
			}
			if (errno != EAGAIN && errno != EINTR) {
				return n;
			}
			if (gave_up(client, spin, &since, &polls)) {
				return -1;
			}
		}
	}
	for (;;) {
		n = recvfrom(fd, buf, len, spin ? MSG_DONTWAIT : 0,
			     (struct sockaddr *)from, from ? &fl : NULL);
		if (n >= 0 || (errno != EAGAIN && errno != EINTR)) {
			return n;
		}
		if (gave_up(client, spin, &since, &polls)) {
			return -1;
		}
	}
}

/*
 * The server answers its one client on a socket connected to it after the
 * first datagram: a send that names its peer looks the route up every time,
 * a connected socket's send takes its cached route (udp_sendmsg()), which
 * rant's reflector does too (a socket of its own per session).  It then
 * reads only what the client sends.
 */
static int server(int port, int spin)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) }, peer;
	static char buf[65536];
	int fd = socket(AF_INET, SOCK_DGRAM, 0), connected = 0;
	ssize_t n;

	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || stamps_on(fd, 0) < 0) {
		perror("floor: server socket");
		return 1;
	}
	for (;;) {
		n = rx(fd, buf, sizeof(buf), spin, connected ? NULL : &peer, 0);
		if (n < 0) {
			perror("floor: recvfrom");
			return 1;
		}
		if (!connected && connect(fd, (struct sockaddr *)&peer, sizeof(peer)) < 0) {
			perror("floor: connect");
			return 1;
		}
		connected = 1;
		send(fd, buf, (size_t)n, 0);
		if (stamps) {
			tx_stamps(fd, 1);
		}
	}
}

static int client(const char *addr, int port, double secs, size_t size, int spin)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	struct timeval tv = { .tv_sec = 1 };
	static char buf[65536];
	size_t n = 0, cap = 1 << 20;
	uint64_t *rtt = malloc(cap * sizeof(*rtt));
	uint64_t start, end, t0, t1;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (!rtt || fd < 0 || inet_pton(AF_INET, addr, &a.sin_addr) != 1 || size > sizeof(buf) ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || stamps_on(fd, 1) < 0) {
		fprintf(stderr, "floor: client set-up failed (address '%s'): %s\n", addr, strerror(errno));
		return 1;
	}
	/* a lost datagram must not hang the blocking variant */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	start = now_ns();
	end = start + (uint64_t)(secs * 1e9);
	do {
		t0 = now_ns();
		if (send(fd, buf, size, 0) < 0) {
			perror("floor: send");
			return 1;
		}
		if (stamps) {
			tx_stamps(fd, 1);
		}
		if (rxstamps && n) {
			ioctl_stamp(fd);	/* the last echo's, off its round trip */
		}
		if (rx(fd, buf, sizeof(buf), spin, NULL, 1) < 0) {
			perror("floor: recv");
			return 1;
		}
		t1 = now_ns();
		if (n == cap) {
			uint64_t *p = realloc(rtt, 2 * cap * sizeof(*rtt));

			if (!p) {
				fputs("floor: out of memory\n", stderr);
				return 1;
			}
			rtt = p;
			cap *= 2;
		}
		rtt[n++] = t1 - t0;
	} while (t1 < end);
	if (rxstamps) {
		ioctl_stamp(fd);	/* the last echo's */
	}
	qsort(rtt, n, sizeof(*rtt), cmp_u64);
	/* nearest rank, as rant computes its percentiles */
	printf("floor: samples %zu duration_s %.6f p50_ns %llu p99_ns %llu stamps_read %llu\n", n,
	       (double)(t1 - start) / 1e9, (unsigned long long)rtt[(n * 50 + 99) / 100 - 1],
	       (unsigned long long)rtt[(n * 99 + 99) / 100 - 1], (unsigned long long)stamps_read);
	free(rtt);
	return 0;
}

/* "spin" and "stamps" after the required arguments, in any order */
static int flag(int argc, char **argv, int from, const char *name)
{
	int i;

	for (i = from; i < argc; i++) {
		if (!strcmp(argv[i], name)) {
			return 1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "server")) {
		stamps = flag(argc, argv, 3, "stamps");
		rxstamps = !stamps && flag(argc, argv, 3, "rxstamps");
		return server(atoi(argv[2]), flag(argc, argv, 3, "spin"));
	}
	if (argc >= 6 && !strcmp(argv[1], "client")) {
		stamps = flag(argc, argv, 6, "stamps");
		rxstamps = !stamps && flag(argc, argv, 6, "rxstamps");
		return client(argv[2], atoi(argv[3]), atof(argv[4]), (size_t)atoi(argv[5]),
			      flag(argc, argv, 6, "spin"));
	}
	fputs("usage: floor server PORT [spin] [stamps | rxstamps] | floor client ADDR PORT SECONDS SIZE [spin] [stamps | rxstamps]\n",
	      stderr);
	return 2;
}
