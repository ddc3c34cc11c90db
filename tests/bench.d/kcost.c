// SPDX-License-Identifier: Apache-2.0
/*
 * kcost - what each socket feature rant uses costs the kernel, per call, on
 * loopback, in one process.  A busy host cannot make a call faster, only
 * slower: each figure is the best average of 300 batches of 200 calls, so
 * it survives the load that spoils the ping-pong ratios of `make bench`.
 *
 * Two sockets on 127.0.0.1: a "reflector" R (unconnected, answers with
 * sendmsg to the client's address) and a "client" C (connected to R).  Each
 * iteration C sends 64 bytes to R, R receives them (timed), R answers
 * (timed) and C's copy is read.  A send on lo delivers the datagram inside
 * the call, so the send figures include the receive path up to the peer's
 * queue, as veth's do.  The rows add one feature at a time:
 *
 *   stamps   SO_TIMESTAMPING: software RX and TX stamps, OPT_ID, OPT_TSONLY;
 *            every TX stamp is read back from the error queue (not timed)
 *   dual     R is an AF_INET6 socket serving IPv4 (v4-mapped), as rant's
 *   rx info  IPV6_RECVPKTINFO and IP_RECVTOS / IPV6_RECVTCLASS on R
 *   key      R's answer carries its SCM_TS_OPT_ID key
 *   tx info  R's answer carries the ping's destination as IPV6_PKTINFO
 *   C key    the client's send carries an SCM_TS_OPT_ID key (connected socket)
 *
 * and two rows of a reflector whose socket is connected to the client (the
 * stamped floor's server, and rant's socket of a session: IPv4, its TX keys
 * from its counter, no control data, no peer named either way), the second
 * with the TOS read on each receive (a session of a client with classes).
 *
 *   tests/bench.d/kcost          (make bench runs it)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <linux/net_tstamp.h>

#ifndef SCM_TS_OPT_ID
#define SCM_TS_OPT_ID	81	/* asm-generic/socket.h, Linux 6.13 */
#endif

#define BATCH	200
#define ROUNDS	300

enum { STAMPS = 1, DUAL = 2, RXINFO = 4, TXINFO = 8, KEY = 16, CKEY = 32, CONN = 64, RXTOS = 128 };

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static void on(int fd, int level, int name)
{
	int one = 1;

	setsockopt(fd, level, name, &one, sizeof(one));
}

/* one control message at p; returns its space */
static size_t put_cmsg(char *p, int level, int type, const void *data, size_t len)
{
	struct cmsghdr *cm = (struct cmsghdr *)(void *)p;

	cm->cmsg_level = level;
	cm->cmsg_type = type;
	cm->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(cm), data, len);
	return CMSG_SPACE(len);
}

struct pair {
	int r, c;
	struct sockaddr_storage to;	/* the client, as R names it */
	socklen_t tolen;
};

static int pair_open(struct pair *p, int o)
{
	struct sockaddr_in ca = { .sin_family = AF_INET }, ra = { .sin_family = AF_INET };
	struct sockaddr_in6 r6 = { .sin6_family = AF_INET6 };
	int f = SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE |
		SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;
	socklen_t l = sizeof(ca);
	int zero = 0;

	p->r = socket((o & DUAL) ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
	p->c = socket(AF_INET, SOCK_DGRAM, 0);
	if (p->r < 0 || p->c < 0) {
		return -1;
	}
	ca.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ra.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(p->c, (struct sockaddr *)&ca, sizeof(ca)) < 0 ||
	    getsockname(p->c, (struct sockaddr *)&ca, &l) < 0) {
		return -1;
	}
	if (o & DUAL) {
		setsockopt(p->r, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		l = sizeof(r6);
		if (bind(p->r, (struct sockaddr *)&r6, sizeof(r6)) < 0 ||
		    getsockname(p->r, (struct sockaddr *)&r6, &l) < 0) {
			return -1;
		}
		ra.sin_port = r6.sin6_port;
		/* the client as a v4-mapped address */
		memset(&r6.sin6_addr, 0, sizeof(r6.sin6_addr));
		r6.sin6_addr.s6_addr[10] = 0xff;
		r6.sin6_addr.s6_addr[11] = 0xff;
		memcpy(&r6.sin6_addr.s6_addr[12], &ca.sin_addr, 4);
		r6.sin6_port = ca.sin_port;
		memcpy(&p->to, &r6, sizeof(r6));
		p->tolen = sizeof(r6);
	} else {
		l = sizeof(ra);
		if (bind(p->r, (struct sockaddr *)&ra, sizeof(ra)) < 0 ||
		    getsockname(p->r, (struct sockaddr *)&ra, &l) < 0) {
			return -1;
		}
		memcpy(&p->to, &ca, sizeof(ca));
		p->tolen = sizeof(ca);
	}
	if (connect(p->c, (struct sockaddr *)&ra, sizeof(ra)) < 0 ||
	    ((o & CONN) && connect(p->r, (struct sockaddr *)&p->to, p->tolen) < 0)) {
		return -1;
	}
	if (o & STAMPS) {
		setsockopt(p->r, SOL_SOCKET, SO_TIMESTAMPING, &f, sizeof(f));
		setsockopt(p->c, SOL_SOCKET, SO_TIMESTAMPING, &f, sizeof(f));
	}
	if (o & RXINFO) {
		on(p->r, IPPROTO_IPV6, IPV6_RECVPKTINFO);
		on(p->r, IPPROTO_IP, IP_RECVTOS);
		on(p->r, IPPROTO_IPV6, IPV6_RECVTCLASS);
	}
	if (o & RXTOS) {
		on(p->r, IPPROTO_IP, IP_RECVTOS);
	}
	return 0;
}

/* the best average ns per call of R's receive, R's send and C's send */
static void measure(int o, double *rrecv, double *rsend, double *csend)
{
	char buf[2048], ctrl[512] __attribute__((aligned(8))), sctrl[128] __attribute__((aligned(8)));
	char cctrl[CMSG_SPACE(sizeof(uint32_t))] __attribute__((aligned(8)));
	uint64_t best[3] = { UINT64_MAX, UINT64_MAX, UINT64_MAX };
	struct in6_pktinfo pi6 = { .ipi6_addr.s6_addr = { [10] = 0xff, [11] = 0xff, [12] = 127, [15] = 1 } };
	struct pair p;
	uint32_t key = 0;
	int r, i, k;

	if (pair_open(&p, o) < 0) {
		perror("kcost: sockets");
		*rrecv = *rsend = *csend = 0;
		return;
	}
	for (r = 0; r < ROUNDS; r++) {
		uint64_t t[3] = { 0, 0, 0 }, a;

		for (i = 0; i < BATCH; i++) {
			struct iovec iov = { buf, sizeof(buf) }, out = { buf, 64 };
			struct sockaddr_storage from;
			struct msghdr rm = {
				.msg_name = &from, .msg_namelen = sizeof(from), .msg_iov = &iov, .msg_iovlen = 1,
				.msg_control = ctrl, .msg_controllen = sizeof(ctrl),
			};
			struct msghdr sm = {
				.msg_name = &p.to, .msg_namelen = p.tolen, .msg_iov = &out, .msg_iovlen = 1,
			};
			struct msghdr cm = { .msg_iov = &out, .msg_iovlen = 1 };
			size_t n = 0;

			if (o & CKEY) {
				cm.msg_control = cctrl;
				cm.msg_controllen = put_cmsg(cctrl, SOL_SOCKET, SCM_TS_OPT_ID, &key, sizeof(key));
			}
			a = now_ns();
			sendmsg(p.c, &cm, 0);
			t[2] += now_ns() - a;
			if (o & CONN) {
				rm.msg_name = NULL;	/* its peer is known */
				rm.msg_namelen = 0;
			}
			a = now_ns();
			recvmsg(p.r, &rm, MSG_DONTWAIT);
			t[0] += now_ns() - a;
			if (o & TXINFO) {
				n += put_cmsg(sctrl + n, IPPROTO_IPV6, IPV6_PKTINFO, &pi6, sizeof(pi6));
			}
			if (o & KEY) {
				n += put_cmsg(sctrl + n, SOL_SOCKET, SCM_TS_OPT_ID, &key, sizeof(key));
			}
			if (o & CONN) {
				sm.msg_name = NULL;	/* connected: sendto(2) as rant's */
				sm.msg_namelen = 0;
			}
			sm.msg_control = n ? sctrl : NULL;
			sm.msg_controllen = n;
			key++;
			a = now_ns();
			if (n) {
				sendmsg(p.r, &sm, 0);
			} else {
				sendto(p.r, buf, 64, 0, sm.msg_name, sm.msg_namelen);
			}
			t[1] += now_ns() - a;
			recv(p.c, buf, sizeof(buf), MSG_DONTWAIT);
			for (k = 0; (o & STAMPS) && k < 2; k++) {
				struct msghdr em = { .msg_control = ctrl, .msg_controllen = sizeof(ctrl) };

				recvmsg(k ? p.c : p.r, &em, MSG_ERRQUEUE | MSG_DONTWAIT);
			}
		}
		for (k = 0; k < 3; k++) {
			if (t[k] < best[k]) {
				best[k] = t[k];
			}
		}
	}
	close(p.r);
	close(p.c);
	*rrecv = (double)best[0] / BATCH;
	*rsend = (double)best[1] / BATCH;
	*csend = (double)best[2] / BATCH;
}

int main(void)
{
	static const struct {
		int o;
		const char *what;
	} row[] = {
		{ 0, "plain (sockperf's server)" },
		{ STAMPS, "+ stamps" },
		{ STAMPS | DUAL, "+ dual-stack reflector" },
		{ STAMPS | DUAL | RXINFO, "+ rx pktinfo, tos (rant's shared socket)" },
		{ STAMPS | DUAL | RXINFO | KEY, "+ reflector key cmsg (rant's shared socket, -i)" },
		{ STAMPS | DUAL | RXINFO | KEY | TXINFO, "+ tx pktinfo (rant's shared socket, no -i)" },
		{ STAMPS | DUAL | RXINFO | KEY | TXINFO | CKEY, "+ client key cmsg (rant before)" },
		{ CONN, "plain, R connected (the floor)" },
		{ STAMPS | CONN, "stamps, R connected (floor-ts; rant's session socket)" },
		{ STAMPS | CONN | RXTOS, "+ rx tos (rant's session socket, classes)" },
	};
	double base[3] = { 0, 0, 0 };
	unsigned i;

	printf("| kernel cost per call, ns (best of %d x %d, lo) | reflector recvmsg | reflector sendmsg | client sendmsg |\n",
	       ROUNDS, BATCH);
	printf("|---|--:|--:|--:|\n");
	for (i = 0; i < sizeof(row) / sizeof(row[0]); i++) {
		double v[3];

		measure(row[i].o, &v[0], &v[1], &v[2]);
		if (!i) {
			memcpy(base, v, sizeof(base));
		}
		printf("| %s | %.0f (%+.0f) | %.0f (%+.0f) | %.0f (%+.0f) |\n", row[i].what, v[0], v[0] - base[0],
		       v[1], v[1] - base[1], v[2], v[2] - base[2]);
	}
	return 0;
}
