// SPDX-License-Identifier: Apache-2.0
/*
 * relay - the ground truth of tests/net-truth.sh.
 *
 *   relay IF_CLIENT IF_REFLECTOR PORT LOG READY [rules...]
 *
 * A layer-2 relay in a namespace of its own between the client's and the
 * reflector's: every frame that arrives on one interface leaves by the
 * other (AF_PACKET, ETH_P_ALL, PACKET_IGNORE_OUTGOING so that it never sees
 * its own sends).  rant's datagrams to or from PORT are held a known time,
 * different for every ping and every pong and for each direction:
 *
 *   ping (client to reflector): FWD + (seq % FWD_MOD) * FWD_STEP ns
 *   pong (reflector to client): BACK + (seq % BACK_MOD) * BACK_STEP ns
 *
 * counted from the kernel's receive stamp of the frame on this relay's
 * socket.  What each packet really spent here is taken from the kernel's
 * own stamps on these sockets (SO_TIMESTAMPING: the software receive stamp,
 * and the software transmit stamp read back from the error queue right
 * after each send; Documentation/networking/timestamping.rst), not from
 * what the relay meant to do, and logged, one line per rant datagram:
 *
 *   DIR TYPE SEQ RX_NS TX_NS TX2_NS ACTION
 *
 * DIR f (client to reflector) or b; TYPE ping, pong, fin, fin_ack, busy;
 * TX_NS 0 for a dropped packet, TX2_NS the duplicate's send (0 if none);
 * ACTION pass, drop, dup or hold.  The log is written when the relay ends
 * (SIGTERM or SIGINT); READY is created once both sockets listen.
 *
 * Rules (each an argument; the first that matches a packet applies, and
 * only to seqs up to --last):
 *   --fwd BASE,STEP,MOD   --back BASE,STEP,MOD   (ns; default 1000000,100000,7
 *                                                  and 2000000,150000,5)
 *   --rule TYPE,ACTION,MOD,REM[,NS]   TYPE ping|pong, ACTION drop|dup|hold:
 *        seq % MOD == REM is dropped, sent twice (DUP_GAP apart), or held NS
 *        more (past the client's timeout: late; past the next ones: reordered)
 *   --last SEQ      --dup-gap NS (default 20000)
 *
 * On a loaded host the relay must not lose what it is to account for: it
 * runs SCHED_FIFO when it may (it sleeps in ppoll between frames), reads
 * every queued frame at each wakeup, and its sockets' receive buffers are
 * large (SO_RCVBUFFORCE, 32 MiB: 18 s of this run's frames).  What its own
 * sockets still dropped (PACKET_STATISTICS tp_drops; packet(7)) it says on
 * stderr when it ends, one line "relay: dropped N", so that the test can
 * tell a relay that lost frames from a rant that miscounts.
 *
 * Frames that are not rant's (ARP, IPv6) pass at once.  The relay rewrites
 * the UDP checksum of what it forwards: a veth hands frames over with the
 * checksum left to the "hardware" (CHECKSUM_PARTIAL), and a frame sent from
 * a packet socket must carry a finished one.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/errqueue.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/net_tstamp.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING	23
#endif

#define FRAME_MAX	2048
#define HELD_MAX	4096
#define RCVBUF		(32 << 20)
#define RULES_MAX	16
/* rant's wire format, made from rant.c (make builds it): the header's magic, types and offsets */
#include "rantwire.h"

enum { T_PING = RW_PING, T_PONG = RW_PONG, T_FIN = RW_FIN, T_FIN_ACK = RW_FIN_ACK, T_BUSY = RW_BUSY };
_Static_assert(T_PING == 1 && T_BUSY == 5, "type_name below lists the types 1 to 5");
static const char *const type_name[] = { "other", "ping", "pong", "fin", "fin_ack", "busy" };
enum { A_PASS, A_DROP, A_DUP, A_HOLD };
static const char *const action_name[] = { "pass", "drop", "dup", "hold" };

struct rule {
	int type, action;
	uint64_t mod, rem, ns;
};

/* A frame waiting for its time to leave. */
struct held {
	bool used;
	int out;			/* index of the socket it leaves by */
	uint64_t due;			/* CLOCK_REALTIME ns */
	int copies;			/* sends still to do (2 for a duplicate) */
	int dir, type, action;		/* type 0: not rant's (not logged) */
	uint64_t seq, rx, tx[2];
	size_t len;
	uint8_t frame[FRAME_MAX];
};

static struct {
	int fd[2];
	unsigned port;
	uint64_t base[2], step[2], mod[2];	/* [0] forward (pings), [1] back (pongs) */
	struct rule rule[RULES_MAX];
	int nrules;
	uint64_t last, dup_gap;
	struct held held[HELD_MAX];
	FILE *log;
} R = {
	.base = { 1000000, 2000000 }, .step = { 100000, 150000 }, .mod = { 7, 5 },
	.last = UINT64_MAX, .dup_gap = 20000,
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "relay: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < 8; i++) {
		v = v << 8 | p[i];
	}
	return v;
}

/* The software stamp of a control buffer (SCM_TIMESTAMPING ts[0]), or 0. */
static uint64_t cmsg_stamp(struct msghdr *msg)
{
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR(msg, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_TIMESTAMPING &&
		    cm->cmsg_len >= CMSG_LEN(sizeof(struct timespec) * 3)) {
			struct timespec ts[3];

			memcpy(ts, CMSG_DATA(cm), sizeof(ts));
			return (uint64_t)ts[0].tv_sec * 1000000000ULL + (uint64_t)ts[0].tv_nsec;
		}
	}
	return 0;
}

/* A packet socket on one interface, every frame, stamped both ways. */
static int open_if(const char *name)
{
	int fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)), one = 1, rcvbuf = RCVBUF;
	int flags = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_TX_SOFTWARE |
		    SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_TSONLY;
	struct sockaddr_ll sll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL) };
	struct packet_mreq mr = { .mr_type = PACKET_MR_PROMISC };

	if (fd < 0) {
		die("socket(AF_PACKET)");
	}
	sll.sll_ifindex = (int)if_nametoindex(name);
	mr.mr_ifindex = sll.sll_ifindex;
	if (!sll.sll_ifindex) {
		die(name);
	}
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		die("bind");
	}
	if (setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)) < 0) {
		die("PACKET_ADD_MEMBERSHIP promiscuous");
	}
	if (setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0) {
		die("PACKET_IGNORE_OUTGOING");
	}
	if (setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &flags, sizeof(flags)) < 0) {
		die("SO_TIMESTAMPING");
	}
	/* room for a starved relay's backlog (net.core.rmem_max does not cap FORCE) */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)) < 0 &&
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)) < 0) {
		die("SO_RCVBUF");
	}
	return fd;
}

/* IPv4 UDP of PORT: the rant header's type and seq; false for any other frame. */
static bool rant_frame(uint8_t *f, size_t len, int *type, uint64_t *seq, uint8_t **udp,
		       size_t *udp_len)
{
	size_t ihl;
	const uint8_t *ip = f + ETH_HLEN, *p;

	if (len < ETH_HLEN + 20 || f[12] != 0x08 || f[13] != 0x00 || (ip[0] >> 4) != 4 || ip[9] != 17) {
		return false;
	}
	ihl = (size_t)(ip[0] & 15) * 4;
	if (len < ETH_HLEN + ihl + 8 + RW_HDR) {
		return false;
	}
	*udp = f + ETH_HLEN + ihl;
	*udp_len = (size_t)((*udp)[4] << 8 | (*udp)[5]);
	if (ETH_HLEN + ihl + *udp_len > len ||
	    ((unsigned)((*udp)[0] << 8 | (*udp)[1]) != R.port &&
	     (unsigned)((*udp)[2] << 8 | (*udp)[3]) != R.port)) {
		return false;
	}
	p = *udp + 8;
	if ((uint32_t)(p[RW_OFF_MAGIC] << 24 | p[RW_OFF_MAGIC + 1] << 16 | p[RW_OFF_MAGIC + 2] << 8 |
		       p[RW_OFF_MAGIC + 3]) != RW_MAGIC ||
	    p[RW_OFF_TYPE] < T_PING || p[RW_OFF_TYPE] > T_BUSY) {
		return false;
	}
	*type = p[RW_OFF_TYPE];
	*seq = be64(p + RW_OFF_SEQ);
	return true;
}

/* The UDP checksum over the IPv4 pseudo-header, written into the datagram. */
static void udp_checksum(const uint8_t *ip, uint8_t *udp, size_t n)
{
	uint32_t sum = 17 + (uint32_t)n;
	size_t i;

	for (i = 12; i < 20; i += 2) {
		sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	}
	udp[6] = udp[7] = 0;
	for (i = 0; i + 1 < n; i += 2) {
		sum += (uint32_t)(udp[i] << 8 | udp[i + 1]);
	}
	if (n & 1) {
		sum += (uint32_t)udp[n - 1] << 8;
	}
	while (sum >> 16) {
		sum = (sum & 0xffff) + (sum >> 16);
	}
	sum = ~sum & 0xffff;
	if (!sum) {
		sum = 0xffff;
	}
	udp[6] = (uint8_t)(sum >> 8);
	udp[7] = (uint8_t)sum;
}

/* What the rules say for this packet, and its hold. */
static int decide(int dir, int type, uint64_t seq, uint64_t *hold)
{
	int i;

	*hold = 0;
	if (!((dir == 0 && type == T_PING) || (dir == 1 && type == T_PONG))) {
		return A_PASS;
	}
	*hold = R.base[dir] + (seq % R.mod[dir]) * R.step[dir];
	for (i = 0; seq <= R.last && i < R.nrules; i++) {
		const struct rule *r = &R.rule[i];

		if (r->type == type && seq % r->mod == r->rem) {
			*hold += r->action == A_HOLD ? r->ns : 0;
			return r->action;
		}
	}
	return A_PASS;
}

static void log_line(const struct held *h)
{
	fprintf(R.log, "%c %s %llu %llu %llu %llu %s\n", h->dir ? 'b' : 'f', type_name[h->type],
		(unsigned long long)h->seq, (unsigned long long)h->rx, (unsigned long long)h->tx[0],
		(unsigned long long)h->tx[1], action_name[h->action]);
}

/* Read one frame from side dir and queue it (or drop it); false: none read. */
static bool receive(int dir)
{
	struct held *h = NULL;
	uint8_t *udp;
	size_t udp_len;
	uint64_t hold;
	char ctrl[512];
	struct iovec iov;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl,
			      .msg_controllen = sizeof(ctrl) };
	ssize_t n;
	int i;

	for (i = 0; i < HELD_MAX && !h; i++) {
		h = R.held[i].used ? NULL : &R.held[i];
	}
	if (!h) {
		return false;		/* the table is full: send what is due first */
	}
	iov = (struct iovec){ h->frame, FRAME_MAX };
	n = recvmsg(R.fd[dir], &msg, MSG_DONTWAIT);
	if (n <= 0) {
		return false;
	}
	memset(h->tx, 0, sizeof(h->tx));
	h->len = (size_t)n;
	h->rx = cmsg_stamp(&msg);
	h->dir = dir;
	h->out = !dir;
	h->type = 0;
	h->action = A_PASS;
	h->copies = 1;
	if (rant_frame(h->frame, h->len, &h->type, &h->seq, &udp, &udp_len)) {
		udp_checksum(h->frame + ETH_HLEN, udp, udp_len);
		h->action = decide(dir, h->type, h->seq, &hold);
		if (h->action == A_DROP) {
			log_line(h);
			return true;
		}
		h->copies = h->action == A_DUP ? 2 : 1;
		h->due = (h->rx ? h->rx : now_ns()) + hold;
	} else {
		h->due = 0;
	}
	h->used = true;
	return true;
}

/* The transmit stamp of the send just done (SOF_TIMESTAMPING_OPT_TSONLY), or 0. */
static uint64_t tx_stamp(int fd)
{
	int tries;

	for (tries = 0; tries < 100; tries++) {
		char ctrl[512];
		struct msghdr msg = { .msg_control = ctrl, .msg_controllen = sizeof(ctrl) };
		struct pollfd p = { fd, POLLERR, 0 };
		uint64_t t;

		if (recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) < 0) {
			if (errno != EAGAIN) {
				die("recvmsg(MSG_ERRQUEUE)");
			}
			poll(&p, 1, 1);
			continue;
		}
		t = cmsg_stamp(&msg);
		if (t) {
			return t;
		}
	}
	return 0;
}

/* Send every frame whose time has come; the next due time (0: none held). */
static uint64_t send_due(void)
{
	uint64_t next = 0;
	int i;

	for (i = 0; i < HELD_MAX; i++) {
		struct held *h = &R.held[i];

		if (!h->used) {
			continue;
		}
		if (h->due > now_ns()) {
			next = !next || h->due < next ? h->due : next;
			continue;
		}
		if (send(R.fd[h->out], h->frame, h->len, 0) < 0) {
			die("send");
		}
		h->tx[h->action == A_DUP && h->copies == 1] = tx_stamp(R.fd[h->out]);
		if (--h->copies > 0) {
			h->due += R.dup_gap;
			next = !next || h->due < next ? h->due : next;
			continue;
		}
		if (h->type) {
			log_line(h);
		}
		h->used = false;
	}
	return next;
}

/* Real-time priority if the relay may have it: a busy host must not starve it. */
static void go_realtime(void)
{
	struct sched_param sp = { .sched_priority = 50 };

	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0) {
		fprintf(stderr, "relay: SCHED_FIFO: %s (running without)\n", strerror(errno));
	}
}

/* What the kernel dropped from the relay's own receive queues (both sockets). */
static unsigned long long own_drops(void)
{
	unsigned long long sum = 0;
	int i;

	for (i = 0; i < 2; i++) {
		struct tpacket_stats st;
		socklen_t len = sizeof(st);

		if (getsockopt(R.fd[i], SOL_PACKET, PACKET_STATISTICS, &st, &len) < 0) {
			die("PACKET_STATISTICS");
		}
		sum += st.tp_drops;
	}
	return sum;
}

static void parse_triple(const char *a, uint64_t *base, uint64_t *step, uint64_t *mod)
{
	unsigned long long b, s, m;

	if (sscanf(a, "%llu,%llu,%llu", &b, &s, &m) != 3 || !m) {
		fprintf(stderr, "relay: '%s': BASE,STEP,MOD expected\n", a);
		exit(2);
	}
	*base = b;
	*step = s;
	*mod = m;
}

static void parse_rule(const char *a)
{
	char type[8], action[8];
	unsigned long long mod, rem, ns = 0;
	struct rule *r = &R.rule[R.nrules];

	if (R.nrules == RULES_MAX ||
	    sscanf(a, "%7[a-z],%7[a-z],%llu,%llu,%llu", type, action, &mod, &rem, &ns) < 4 || !mod) {
		fprintf(stderr, "relay: --rule '%s': TYPE,ACTION,MOD,REM[,NS] expected\n", a);
		exit(2);
	}
	r->type = !strcmp(type, "ping") ? T_PING : !strcmp(type, "pong") ? T_PONG : 0;
	r->action = !strcmp(action, "drop") ? A_DROP : !strcmp(action, "dup") ? A_DUP :
		    !strcmp(action, "hold") ? A_HOLD : A_PASS;
	if (!r->type || r->action == A_PASS) {
		fprintf(stderr, "relay: --rule '%s': TYPE ping|pong, ACTION drop|dup|hold\n", a);
		exit(2);
	}
	r->mod = mod;
	r->rem = rem;
	r->ns = ns;
	R.nrules++;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	FILE *ready;
	int i;

	if (argc < 6) {
		fprintf(stderr, "usage: relay IF_CLIENT IF_REFLECTOR PORT LOG READY [rules...]\n");
		return 2;
	}
	R.port = (unsigned)atoi(argv[3]);
	for (i = 6; i < argc; i++) {
		if (i + 1 >= argc) {
			fprintf(stderr, "relay: %s needs a value\n", argv[i]);
			return 2;
		}
		if (!strcmp(argv[i], "--fwd")) {
			parse_triple(argv[++i], &R.base[0], &R.step[0], &R.mod[0]);
		} else if (!strcmp(argv[i], "--back")) {
			parse_triple(argv[++i], &R.base[1], &R.step[1], &R.mod[1]);
		} else if (!strcmp(argv[i], "--rule")) {
			parse_rule(argv[++i]);
		} else if (!strcmp(argv[i], "--last")) {
			R.last = strtoull(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--dup-gap")) {
			R.dup_gap = strtoull(argv[++i], NULL, 10);
		} else {
			fprintf(stderr, "relay: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	R.log = fopen(argv[4], "w");
	if (!R.log) {
		die(argv[4]);
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* timer slack: the holds are met within a few us, not 50 */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	R.fd[0] = open_if(argv[1]);
	R.fd[1] = open_if(argv[2]);
	(void)own_drops();	/* the counters count from here (reading resets them) */
	go_realtime();
	ready = fopen(argv[5], "w");
	if (!ready) {
		die(argv[5]);
	}
	fclose(ready);
	while (!stop) {
		struct pollfd p[2] = { { R.fd[0], POLLIN, 0 }, { R.fd[1], POLLIN, 0 } };
		uint64_t next = send_due(), now = now_ns();
		struct timespec t = { 0, 100000000 };

		if (next) {
			uint64_t d = next > now ? next - now : 0;

			t = (struct timespec){ (time_t)(d / 1000000000ULL), (long)(d % 1000000000ULL) };
		}
		if (ppoll(p, 2, &t, NULL) < 0 && errno != EINTR) {
			die("ppoll");
		}
		for (i = 0; i < 2; i++) {
			int k;

			/* what is queued, not one frame per wakeup (a bounded
			 * batch, so that sends come due between batches) */
			for (k = 0; k < 64 && (p[i].revents & POLLIN) && receive(i); k++) {
			}
		}
	}
	fprintf(stderr, "relay: dropped %llu\n", own_drops());
	if (fclose(R.log)) {
		die(argv[4]);
	}
	return 0;
}
