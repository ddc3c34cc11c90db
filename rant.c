// SPDX-License-Identifier: Apache-2.0
/*
 * rant - Round-trip And Network Timing.
 *
 * A UDP ping-pong that timestamps every packet at four points: in the NIC
 * where the hardware can (SOF_TIMESTAMPING_RAW_HARDWARE), in the kernel where
 * it cannot (*_SOFTWARE), and optionally in the application.  One binary runs
 * as emit (client, -a ADDR) or reflect (server).  The reflector echoes its own
 * stamps so that the client alone can decompose every transaction.
 *
 * Reading order: each part uses only what is above it (no forward
 * declarations).  Two halves joined at one point.  The measurement:
 * constants and the wire format, types, the configuration and the one run
 * state, helpers, then timestamps (the kernel API), protocol, statistics,
 * the series (--series, its thread), classes and sizes, time-sensitive
 * networking (launch times, schedules), pmc (-M), why, tracing, log,
 * transactions, memory, sockets,
 * emit, reflect.  Then the outputs: report, json, plot (ending with
 * report_outputs, which the loops reach through run.to, the one join), and
 * analyze, which reads a log back through them.  Last, options and main.
 *
 * Kernel references: Documentation/networking/timestamping.rst (SO_TIMESTAMPING,
 * OPT_ID, OPT_TSONLY, the error queue, SIOCSHWTSTAMP) and
 * Documentation/networking/napi.rst (SO_BUSY_POLL, SO_PREFER_BUSY_POLL).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/timex.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/errqueue.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/net_tstamp.h>
#include <linux/perf_event.h>
#include <linux/pkt_sched.h>
#include <linux/ptp_clock.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/sockios.h>
#include <sys/syscall.h>

/*
 * Built with AddressSanitizer?  gcc says so with __SANITIZE_ADDRESS__, clang
 * with __has_feature, which gcc only knows from version 14: the test must be
 * split so that gcc never has to parse __has_feature(...) in an #if.
 */
#if defined(__SANITIZE_ADDRESS__)
#define RANT_ASAN	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RANT_ASAN	1
#endif
#endif
#ifndef RANT_ASAN
#define RANT_ASAN	0
#endif

/* ------------------------------------------------------------ constants */

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
/* emit: a TX key that stamps no ping (E.keyseq) */
#define KEY_NONE	UINT64_MAX

#define RANT_VERSION	"1.0.0"
/* the build's commit as make knows it, for --version (gcc -o rant rant.c: none) */
#ifndef RANT_BUILD
#define RANT_BUILD	""
#endif
#define NSEC_PER_SEC	1000000000ULL
#define NSEC_PER_US	1000ULL

/* Exit codes. */
enum { EXIT_OK = 0, EXIT_RUNTIME = 1, EXIT_USAGE = 2, EXIT_BREACH = 3 };

/* Older kernel headers lack these; values are the kernel's ABI. */
#ifndef SO_PREFER_BUSY_POLL
#define SO_PREFER_BUSY_POLL	69
#endif
#ifndef SO_BUSY_POLL_BUDGET
#define SO_BUSY_POLL_BUDGET	70
#endif
#ifndef SO_TIMESTAMPING_NEW
#define SO_TIMESTAMPING_NEW	65	/* Linux 5.1 */
#endif
#ifndef HWTSTAMP_FLAG_BONDED_PHC_INDEX
#define HWTSTAMP_FLAG_BONDED_PHC_INDEX	(1 << 0)	/* Linux 5.17 */
#endif

/*
 * Wire protocol.  Everything in network byte order; the header is padded
 * with zeros to --size bytes.  Offsets are fixed so that a decoder never
 * depends on the host's struct layout.
 *
 *   0 magic   4 version  5 type  6 flags  8 session  12 idle_ms
 *  16 seq    24 t2 wire 32 t2_sw 40 t3_sw 48 t3 wire (echo) 56 seq of that t3
 *
 * The first 24 bytes are the short header every datagram carries; a datagram
 * shorter than 64 bytes (--size 24 to 63) ends inside the echoed fields, and
 * its pong carries only those that fit whole (proto_room): the stamps of a
 * small size are the client's own, the reflector's stay in its own report.
 */
#define PROTO_MAGIC	0x52414e54u	/* "RANT" */
#define PROTO_VERSION	1
/* The header's fields where they are, the one place that says so (above). */
enum proto_off {
	HO_MAGIC = 0, HO_VERSION = 4, HO_TYPE = 5, HO_FLAGS = 6, HO_SESSION = 8, HO_IDLE = 12,
	HO_SEQ = 16, HO_T2W = 24, HO_T2SW = 32, HO_T3SW = 40, HO_T3W = 48, HO_T3W_SEQ = 56,
	HO_END = 64
};
#define PROTO_HDR_LEN	HO_END
#define PROTO_MIN_SIZE	(HO_SEQ + 8)	/* the short header: magic to seq; no datagram is shorter */
/* The smallest --size rant sends, and so the smallest SIZE its logs can hold. */
#define SIZE_MIN	PROTO_MIN_SIZE
#define PROTO_MAX_SIZE	65000

enum proto_type { PT_PING = 1, PT_PONG = 2, PT_FIN = 3, PT_FIN_ACK = 4, PT_BUSY = 5 };

enum proto_flag {
	PF_WARMUP	= 1 << 0,	/* ping is warm-up: not counted by either side */
	PF_BREACH	= 1 << 1,	/* reflector stopped on a threshold breach */
	PF_SRV_HW	= 1 << 2,	/* reflector's wire stamps are NIC stamps */
	PF_T2W		= 1 << 3,	/* echoed fields present */
	PF_T2SW		= 1 << 4,
	PF_T3SW		= 1 << 5,
	PF_T3W		= 1 << 6,
	PF_MORE		= 1 << 7,	/* FIN_ACK: more T3 stamps pending, send FIN again */
	/* FIN_ACK: the reflector did not see the session from seq 0 */
	PF_PARTIAL	= 1 << 8,
	/* --key-file: a keyed tag follows the header (bytes 64-71) */
	PF_TAG		= 1 << 9,
	PF_KSTAMPS	= 1 << 10,	/* pong, FIN_ACK: the kernel-stamp block follows */
	/* 1 << 11: a ping's PF_CLASS, below (its bits 12-15 are its priority); in a pong: */
	PF_PHC_OFF	= 1 << 11,	/* its kernel-stamp block has the PHC part (40 bytes) */
	PF_T3HIST	= 1 << 12,	/* pong, FIN_ACK only: earlier echoes again (T3 history) */
	/*
	 * FIN only: the client's last, it waits for no answer: the FIN_ACK
	 * ends the session whatever echoes still wait (no PF_MORE)
	 */
	PF_LAST		= 1 << 13,
	/* pong, FIN_ACK: the reflector takes no TX stamps (-N): no T3 wire stamp comes */
	PF_NO_TX	= 1 << 15,
};

/*
 * The kernel-stamp block (PF_KSTAMPS): a reflector with NIC stamps also has
 * the kernel's software stamps of the same packets, and sends them where the
 * ping left room, after the header and the tag: T2_K of this ping, then T3_K
 * of the earlier pong whose T3 wire stamp is echoed (0 = not known).  A
 * FIN_ACK with room for more adds the reflector's PHC reading and the id of
 * its kernel's boot (see oneway_trusted).  Every reflector sends that much in
 * its FIN_ACK, with or without NIC stamps (T2_K, T3_K and the PHC part zero
 * then): the boot id is what shows a client that both ends share a kernel,
 * and the client's FIN is long enough for it (fin_len).  A pong with that
 * room carries the offset the reflector takes out of its own segments (its
 * wire_off, window 0), so that the client takes it out of the reflector's
 * segments from the first pong on (metric_value):
 *
 *  +0 T2_K  +8 T3_K  +16 PHC - CLOCK_REALTIME (signed ns)  +24 read window (ns)
 *  +28 method (enum phc_method, 0 = none)  +29 disciplined  +32 boot id (64 bits)
 */
#define KX_LEN		16
#define KX_PHC_LEN	(KX_LEN + 24)

/*
 * The T3 history (PF_T3HIST).  An echoed T3 rides in the next pong, so a
 * lost pong would also take the response and backward of the transaction
 * before it.  Where the pong (or FIN_ACK) has room, the reflector repeats
 * the echoes of its last few pongs after every other block (header, tag,
 * the kernel-stamp block as sent: 16 bytes in a pong, 40 in a FIN_ACK with
 * room for 40), newest first, as many as fit:
 *
 *  +0 count (1..T3HIST_MAX)  +1 seven bytes zero
 *  +8 count entries of 24 bytes: seq  +8 its T3 wire stamp  +16 its T3_K (0 = unknown)
 *
 * A client that knows the stamp already takes nothing from it; an earlier
 * client never looks at the padding.  T3HIST_MAX pongs lost in a row still
 * cost only their own transactions.
 */
#define T3HIST_MAX	4
#define T3HIST_HDR	8
#define T3HIST_ENT	24

/*
 * Rules of a session (see README, Protocol): what a real peer never sends.
 * Stamps beyond 2^62 ns (year 2116) are impossible, and keeping every stamp
 * below it keeps every difference of two stamps, and the difference of two
 * such differences, inside int64_t.
 */
#define STAMP_MAX	(1ULL << 62)
/* --interval 60 s + --timeout 60 s, as emit_run sends it */
#define IDLE_MAX_MS	(60000 + 60000 + 1)
/* a larger jump needs a second ping to confirm it */
#define SEQ_AHEAD_MAX	4096
#define TAG_LEN		8
#define KEY_MIN		16
#define KEY_MAX		4096
#define BUSY_GAP_NS	(10 * 1000000ULL)	/* at most 100 BUSY answers a second */
/* FIN rounds of a session's end: the client asks no more, the reflector offers no more */
#define FIN_ROUNDS	64
/* the least a FIN waits for its FIN_ACK: twice the reflector's END_TX_WAIT_NS */
#define FIN_WAIT_MIN_NS	(100 * 1000000ULL)

/* Well-formed datagrams refused by a rule of the session; report "Rejected:". */
enum guard_rej {
	GR_PEER, GR_SEQ_AHEAD, GR_FIN_UNKNOWN, GR_FIN_ACK_UNASKED, GR_PORT0, GR_IMPLAUSIBLE,
	GR_LENGTH, GR_ECHO_UNOWED, GR_UNAUTH, GR_BUSY_SENT, GR_ENDED, GR_FIN_SEQ, GR_N
};
static const char *const guard_rej_name[GR_N] = {
	"wrong_peer", "seq_ahead", "fin_unknown", "fin_ack_unasked", "source_port_0",
	"implausible_stamps", "wrong_length", "echo_not_owed", "unauthenticated", "busy_answers",
	"session_ended", "fin_before_pings",
};

/* Why a datagram was refused; the report sums them as "invalid". */
enum proto_err { PE_SHORT = 1, PE_MAGIC, PE_VERSION, PE_TYPE, PE_LONG, PE_PTP, PE_NERR };
static const char *const proto_err_name[PE_NERR] = {
	"", "short", "bad magic", "bad version", "bad type", "oversized", "not rant's PTP",
};

/*
 * Every stamp of a transaction, in one list: its name, the point it is of
 * (T1 to T4) and whether it is a wire stamp (the NIC's or, without one,
 * the kernel's at the device).  The eight of a transaction first; then
 * T<n>K, the kernel's software stamp of a packet the NIC stamps too
 * (hardware mode); and T1L, the launch time the ping asked for (--txtime),
 * on CLOCK_REALTIME like the app's stamps.  A stamp added here is in the
 * enum and both tables below.
 */
#define STAMPS(X)                                                                          \
	X(T1SW, "T1", false) X(T1W, "T1", true) X(T2W, "T2", true) X(T2SW, "T2", false)     \
	X(T3SW, "T3", false) X(T3W, "T3", true) X(T4W, "T4", true) X(T4SW, "T4", false)     \
	X(T1K, "T1", false) X(T2K, "T2", false) X(T3K, "T3", false) X(T4K, "T4", false)     \
	X(T1L, "T1", false)
#define STAMP_ENUM(id, base, wire) id,
#define STAMP_BASE(id, base, wire) [id] = base,
#define STAMP_WIRE(id, base, wire) [id] = wire,
enum stamp { STAMPS(STAMP_ENUM) NSTAMP };
static const char *const stamp_base[NSTAMP] = { STAMPS(STAMP_BASE) };
static const bool stamp_is_wire[NSTAMP] = { STAMPS(STAMP_WIRE) };
_Static_assert(NSTAMP <= 32, "a side's stamps are a set of bits in an unsigned (sset, needed_by)");

/* The stamps each side knows, in the order its logs list them. */
static const int emit_stamps[] = { T1SW, T1W, T2W, T2SW, T3SW, T3W, T4W, T4SW };
static const int reflect_stamps[] = { T2W, T2SW, T3SW, T3W };

/*
 * Every metric, in one list: a metric added here is in every table (its
 * enum value, key, label, the stamps it is the difference of, each side's
 * sign of the wire-vs-app offset in it, the sides that measure it, whether
 * one clock takes both its stamps) or the build fails.  Each is b - a of
 * two stamps; M_NETWORK (-1, -1) is rtt - response.  The signs: how each
 * side's wire-vs-app offset enters it (metric_value; 0: not at all).  One
 * clock: both stamps on one clock, so only a stepped clock makes it
 * negative (clk_mark).  The key is the JSON name.
 *
 * X(name, key, label, b, a, sign emit, sign reflect, sides, one clock)
 */
#define METRICS(X) \
	X(M_RTT,	"rtt",			"rtt (T4-T1 wire)",		T4W,  T1W,   0,  0, MS_EMIT, true) \
	X(M_RESPONSE,	"response",		"response (T3-T2 wire)",	T3W,  T2W,   0,  0, MS_BOTH, true) \
	X(M_NETWORK,	"network",		"network (rtt-response)",	-1,   -1,    0,  0, MS_EMIT, false) \
	X(M_APP_RTT,	"app_rtt",		"app rtt (T4_SW-T1_SW)",	T4SW, T1SW,  0,  0, MS_EMIT, true) \
	X(M_CLI_TX,	"client_tx_stack",	"client tx stack (T1-T1_SW)",	T1W,  T1SW, -1,  0, MS_EMIT, false) \
	X(M_CLI_RX,	"client_rx_stack",	"client rx stack (T4_SW-T4)",	T4SW, T4W,   1,  0, MS_EMIT, false) \
	X(M_SRV_RX,	"server_rx_stack",	"server rx stack (T2_SW-T2)",	T2SW, T2W,   0,  1, MS_BOTH, false) \
	X(M_SRV_PROC,	"server_processing",	"server processing (T3_SW-T2_SW)", T3SW, T2SW, 0, 0, MS_BOTH, true) \
	X(M_SRV_TX,	"server_tx_stack",	"server tx stack (T3-T3_SW)",	T3W,  T3SW,  0, -1, MS_BOTH, false) \
	X(M_FORWARD,	"forward",		"forward one-way (T2-T1 wire)",	T2W,  T1W,   0,  0, MS_EMIT, false) \
	X(M_BACKWARD,	"backward",		"backward one-way (T4-T3 wire)", T4W, T3W,   0,  0, MS_EMIT, false) \
	/* NIC and kernel stamps together: driver/NIC time apart from wake-up time */ \
	X(M_CLI_TX_KERN, "client_tx_kernel",	"client tx kernel (T1_K-T1_SW)", T1K, T1SW,  0,  0, MS_EMIT, false) \
	X(M_CLI_TX_NIC,	"client_tx_nic",	"client tx driver+NIC (T1-T1_K)", T1W, T1K, -1,  0, MS_EMIT, false) \
	X(M_CLI_RX_NIC,	"client_rx_nic",	"client rx NIC+driver (T4_K-T4)", T4K, T4W,  1,  0, MS_EMIT, false) \
	X(M_CLI_RX_WAKE, "client_rx_wakeup",	"client rx wake-up (T4_SW-T4_K)", T4SW, T4K, 0,  0, MS_EMIT, false) \
	/* the reflector's split; the client has it from the kernel stamps its pongs carry */ \
	X(M_SRV_RX_NIC,	"server_rx_nic",	"server rx NIC+driver (T2_K-T2)", T2K, T2W,  0,  1, MS_BOTH, false) \
	X(M_SRV_RX_WAKE, "server_rx_wakeup",	"server rx wake-up (T2_SW-T2_K)", T2SW, T2K, 0,  0, MS_BOTH, false) \
	X(M_SRV_TX_KERN, "server_tx_kernel",	"server tx kernel (T3_K-T3_SW)", T3K, T3SW,  0,  0, MS_BOTH, false) \
	X(M_SRV_TX_NIC,	"server_tx_nic",	"server tx driver+NIC (T3-T3_K)", T3W, T3K,  0, -1, MS_BOTH, false) \
	/* --txtime (last: the client lists them only then): how late, how early */ \
	X(M_LAUNCH_ERR,	"launch_error",		"launch error (T1-T1_LT)",	T1W,  T1L,  -1,  0, MS_EMIT, false) \
	X(M_SPARE,	"time_to_spare",	"time to spare (T1_LT-T1_SW)",	T1L,  T1SW,  0,  0, MS_EMIT, false)

/* The sides that measure a metric. */
enum { MS_EMIT = 1, MS_REFLECT = 2, MS_BOTH = 3 };

#define METRIC_ENUM(name, key, label, b, a, se, sr, sides, one)	name,
enum metric { METRICS(METRIC_ENUM) NMETRIC };
#undef METRIC_ENUM

static const struct {
	const char *key;
	const char *label;
	signed char b, a;		/* the metric is stamp b - stamp a */
	signed char sign[2];		/* the wire-vs-app offset's sign in it: emit, reflect */
	unsigned char sides;		/* MS_* */
	bool one_clock;
} metric_def[NMETRIC] = {
#define METRIC_DEF(name, key, label, b, a, se, sr, sides, one) \
	[name] = { key, label, b, a, { se, sr }, sides, one },
	METRICS(METRIC_DEF)
#undef METRIC_DEF
};
/* the client lists the launch-time metrics last, and only with --txtime (emit_nmetrics) */
_Static_assert(M_LAUNCH_ERR == NMETRIC - 2 && M_SPARE == NMETRIC - 1, "launch metrics last");

/* Percentiles reported everywhere, as the JSON keys spell them. */
static const double pct_value[] = { 50, 90, 95, 99, 99.9, 99.99, 99.999 };
static const char *const pct_key[] = {
	"50", "90", "95", "99", "99.9", "99.99", "99.999",
};
#define NPCT	7

/* Transaction status in logs. */
/* ST_LMISS, ST_LINVAL: lost, the qdisc having dropped the ping's launch time (--txtime) */
enum txn_status { ST_OK, ST_LOST, ST_LATE, ST_WARMUP, ST_STEPPED, ST_LMISS, ST_LINVAL, NSTATUS };
static const char *const status_name[NSTATUS] = {
	"ok", "lost", "late", "warmup", "stepped", "launch_missed", "launch_invalid",
};

/* ---------------------------------------------------------------- types */

enum mode { MODE_EMIT, MODE_REFLECT, MODE_ANALYZE };
enum ts_mode { TS_AUTO, TS_HW, TS_SW };
enum log_format { LOG_TEXT, LOG_CSV };

/* Decoded wire header. */
struct proto_msg {
	uint8_t version;
	uint8_t type;
	uint16_t flags;
	uint32_t session;
	uint32_t idle_ms;
	uint64_t seq;
	uint64_t t2w, t2sw, t3sw, t3w, t3w_seq;
	uint64_t t2k, t3k;		/* PF_KSTAMPS: the reflector's kernel stamps */
	/* a FIN_ACK's PHC block (phc_method 0 = none) */
	int64_t phc_off;
	uint32_t phc_window;
	uint8_t phc_method, phc_disciplined;
	uint64_t boot_id;
	/* PF_T3HIST: earlier echoes, newest first */
	uint8_t nhist;
	struct { uint64_t seq, t3w, t3k; } hist[T3HIST_MAX];
};

/* Per-transaction state flags (struct txn.st). */
enum txn_flag {
	TF_USED		= 1 << 0,	/* slot holds a transaction */
	TF_SENT		= 1 << 1,
	TF_RECEIVED	= 1 << 2,	/* pong (emit) / ping (reflect) in time */
	TF_LOST		= 1 << 3,	/* timed out */
	TF_LATE		= 1 << 4,	/* pong arrived after the timeout */
	TF_WARMUP	= 1 << 5,
	TF_TXPEND	= 1 << 6,	/* waiting for the TX stamp from the error queue */
	TF_SRV_SW	= 1 << 7,	/* peer sent app stamps */
	TF_SENDERR	= 1 << 8,	/* send() failed: never on the wire */
};

/* Hardware counters -M can read per transaction (see the pmc section). */
#define PMC_MAX	4

/* One transaction; stamps are ns since the epoch, 0 = not (yet) known. */
struct txn {
	uint64_t seq;
	uint64_t t[NSTAMP];
	union {
		uint64_t deadline;	/* emit: CLOCK_MONOTONIC ns after which it is lost */
		uint64_t mono_lo;	/* reflect: CLOCK_MONOTONIC before its T3 (clk_check) */
	};
	uint32_t txkey;		/* SOF_TIMESTAMPING_OPT_ID key of its send */
	uint32_t counted;	/* metrics already added to the statistics */
	uint16_t st;
	/* CLK_STEPPED: a CLOCK_REALTIME step made its stamps inconsistent */
	uint8_t clk;
	/*
	 * CLOCK_MONOTONIC read at the pong (emit) / after T2 (reflect: at the
	 * ping, or with --spin right after the pong): clock-step check
	 */
	uint64_t mono;
	uint64_t pmc[PMC_MAX];	/* -M: counts at the start, then this transaction's deltas */
};

/*
 * Histogram with an exact store for outliers and a log histogram behind it.
 * Values in [0, bound) land in buckets of bucket_ns.  Values outside
 * (negative, or at/above the bound) are kept exactly in out[] while it has
 * room (the first out_cap of them, a size fixed before the run), and every one
 * of them is also counted in lh[], log-scaled bins 1/512 of an octave wide
 * (1 ns wide below 1024 ns): a percentile read there, the middle of its bin,
 * is within 1/1024 (0.098 %) of the true value, however long the run.  So a
 * percentile is exact to the bucket below the bound, exact above it while
 * the store holds every outlier of that side, and within 0.1 % after; each
 * percentile says by how much at most (hist_pct_err).
 */
#define LH_SUB		512	/* log bins per octave */
#define LH_LIN		1024	/* below it, one bin per ns */
/* magnitudes up to 2^64 - 1: the linear bins, then 54 octaves (2^10 .. 2^63) */
#define LH_N		(LH_LIN + 54 * LH_SUB)
/*
 * The exact store's size, whatever the run's length (a run that cannot
 * produce that many samples gets a store for all of them, and no log bins:
 * nothing of it can overflow).
 */
#define OUT_CAP		16384

struct hist {
	uint64_t bucket_ns, bound_ns;
	uint32_t nbuckets;
	uint64_t *bucket;
	int64_t *out;
	uint64_t out_cap, out_n;
	/* lh: LH_N bins of negative values (most negative first), then those at/above the bound */
	uint64_t *lh;
	uint32_t lh_base;	/* the bound's log bin: where the positive half starts */
	uint64_t out_lo, out_hi;	/* every value below 0, and at/above the bound */
	uint64_t n;
	int64_t min, max;
	uint64_t min_seq, max_seq;
	int64_t shift;		/* the first sample: sums are of v - shift, exact */
	__int128 sum;
	unsigned __int128 sumsq;
};

/* Least-squares line through (seconds, ns) points: offsets and drift. */
struct fit {
	uint64_t n;
	uint64_t x0;		/* first x, ns */
	int64_t y0;		/* first y, ns */
	double sx, sy, sxx, sxy;
	uint64_t seen;		/* every sample offered, and their extremes */
	int64_t ymin, ymax;
	/* the current window: its best point waits here (see fit_window) */
	uint64_t w_start, w_x;
	int64_t w_y, w_q;
	bool w_have;
};

/* Packet and stamp counters of one session. */
struct counters {
	uint64_t sent, received, lost, late, duplicate, invalid, warmup;
	uint64_t invalid_why[PE_NERR], foreign, send_errors, refused;
	uint64_t missing[NSTAMP];
	uint64_t tx_unmatched, echo_dropped;
	uint64_t breaches;
	uint64_t warmup_local;	/* reflect: warm-up by its own -w, not flagged by the client */
	uint64_t rejected[GR_N];	/* enum guard_rej */
	uint64_t kx_unfit;	/* pongs with no room for the reflector's kernel stamps */
};

/* A transaction that crossed the threshold, kept for the report. */
struct breach {
	struct txn x;
	int64_t value;
};
#define BREACH_KEEP	64

/* Log: a ring of fixed-size records in the arena, written after the run. */
struct log_ring {
	uint8_t *mem;
	uint32_t rec_size;	/* log_rec_bytes(nstamps): the fields of enum log_rec */
	const int *stamps;
	int nstamps;
	uint64_t cap, head, n, dropped, filtered;
};

/* Everything one session measured; reset at each reflector session. */
struct session {
	uint32_t id;
	struct counters c;
	struct hist h[NMETRIC];
	struct fit offset;	/* server - client clock offset over time */
	struct fit app_wire[2];	/* client T1-T1_SW, T4_SW-T4 (reflect: T2_SW-T2, T3-T3_SW) */
	int64_t best_rtt, best_offset;
	struct breach *breach;
	uint64_t nbreach_kept;
	struct log_ring log;
	bool srv_hw, srv_hw_known, srv_sw;
	bool srv_kx;		/* the reflector sent its kernel stamps (PF_KSTAMPS) */
	uint64_t start_mono, end_mono, first_real;
	uint32_t peer_idle_ms;
	int stop_reason;
};

/* Why a run ended, for the report and JSON. */
enum stop_reason {
	STOP_NONE, STOP_COUNT, STOP_DURATION, STOP_SIGNAL, STOP_BREACH,
	STOP_PEER_BREACH, STOP_FIN, STOP_IDLE, STOP_ERROR, STOP_NO_ANSWER,
};
static const char *const stop_name[] = {
	"running", "count", "duration", "signal", "threshold", "peer_threshold",
	"fin", "idle", "error", "no_answer",
};

/* -------------------------------------------------- configuration, state */

/* What the command line asked for; filled by opt_parse, then read-only. */
struct config {
	enum mode mode;
	const char *iface, *address;
	unsigned port, size;
	double duration_s;
	uint64_t count, warmup;
	uint64_t interval_ns, timeout_ns;
	enum ts_mode ts;
	bool sw_stamps, histogram, cont, trace, snapshot, hugepages;
	bool prefer_busypoll, spin, once, quiet, verbose;
	bool status;		/* the status line even when stderr is no terminal */
	/* --interval as typed (for a list, interval_ns is all classes' together) */
	const char *interval_arg;
	bool allow_fragments;	/* --size above the path MTU: stamps are of the first fragment */
	bool ptp_probe;		/* every packet a PTPv2 event message on UDP 319 */
	unsigned ptp_domain;
	int64_t threshold_ns;	/* -1 = none */
	int64_t log_threshold_ns;
	uint64_t bucket_ns, bound_ns;
	unsigned busy_poll_us, budget;
	bool busy_poll_set, budget_set;
	bool bucket_set;	/* -b given: the text histogram keeps that width */
	const char *histfile;	/* --histfile: one line per bucket, to plot */
	int priority, tos;	/* -1 = leave alone */
	const char *json, *log, *trace_instance;
	const char *trace_file;	/* --analyze --trace FILE */
	enum log_format log_format;
	uint64_t log_records;
	const char *analyze[2];
	unsigned top;
	char cmdline[512];
	bool no_tx_ts, fast_path;	/* -N, -F (reflect) */
	bool cli_no_tx;		/* --client-no-tx-ts (emit) */
	const char *key_file;
	bool pmc;		/* -M */
	const char *plot;	/* --plot FILE.svg */
	int cpu_latency;	/* --cpu-latency: the limit to hold, us; -1 = off */
	bool cpu_latency_set;	/* given: not holding it is an error */
	bool top_set;		/* --top given: the plot draws as many worst transactions */
	const char *series;	/* --series FILE|-: one JSON line per interval */
	double series_s;	/* --series-every */
	/* time-sensitive networking: --txtime's lead, --base-time, --cycle (ns) */
	uint64_t txtime_lead_ns, cycle_ns;
	bool txtime, txtime_deadline;
	int64_t base_time_ns;
	bool base_time_set;
};

/* Wire timestamp source actually in use, verified at start. */
struct ts_state {
	bool hw;		/* NIC stamps; else kernel software stamps */
	int phc_index;
	int rx_filter;		/* what the driver accepted */
	bool restore;		/* we changed the device's hwtstamp config */
	bool unknown_before;	/* SIOCGHWTSTAMP failed: nothing to restore */
	struct ifreq saved_ifr;
	struct hwtstamp_config saved;
	uint32_t next_key;	/* OPT_ID key the next send will get */
	bool key_cmsg;		/* SCM_TS_OPT_ID: each send carries its own key */
	int ifindex;		/* the NIC under -i: its stamps only are ours (0: cannot tell) */
	char nic[IFNAMSIZ];	/* its name */
	bool bonded;		/* a bond: HWTSTAMP_FLAG_BONDED_PHC_INDEX with every config */
	uint32_t bond_switches;	/* its active slave changed mid-run (bond_watch) */
	char nic0[IFNAMSIZ];	/* ... from this one, at start */
	int tx_type;		/* HWTSTAMP_TX_ON, or a one-step type found set (kept) */
	int ptp4l_pid;		/* a ptp4l on the same NIC (competes for its TX stamp), 0 = none */
	int restore_err;	/* -errno of a failed restore */
	int64_t wire_off;	/* this side's wire clock - CLOCK_REALTIME (the PHC's, at start) */
	/* the client: the reflector's wire_off, from its pongs (on: known and taken out) */
	int64_t peer_off;
	bool peer_off_on;
	char note[200];
};

/*
 * The CPU latency limit rant holds while it runs (--cpu-latency): the open
 * request's descriptor (-1: none), the limit it asks for in us, and why it
 * holds none.  A reflector's request asks for the limit (on) until it has
 * had no session for CPU_LATENCY_GRACE_S (until: CLOCK_MONOTONIC).
 */
struct cpu_latency {
	int fd;
	int us;
	bool on;
	uint64_t until;
	char why[160];
};

/* PM_QOS_CPU_LATENCY_DEFAULT_VALUE (include/linux/pm_qos.h): a request for no limit */
#define CPU_LATENCY_NONE	2000000000

/* How long a reflector keeps the limit without a session: after its start and after each session */
#define CPU_LATENCY_GRACE_S	60

/* The CPU latency QoS device; the unit tests point it at a file of their own. */
static const char *cpu_latency_dev = "/dev/cpu_dma_latency";

/* Open tracefs files (-T/-S), all checked at start. */
struct trace_state {
	int marker_fd, on_fd, snap_fd;
	char dir[PATH_MAX];
	/* what -T changed for the run (trace_restore puts it back) */
	bool set_events;	/* the instance had no events: rant enabled why_events */
	bool turned_on;		/* tracing_on was 0 at start */
	bool mono;		/* the trace clock is mono: the trace relates to the stamps */
	char why_not[160];	/* why the trace cannot explain a breach, for every one */
	bool breached;		/* a breach stopped tracing: its trace is in the buffer */
	int tid;		/* rant's measuring thread, as the trace names it */
};

/* Classes (--priority/--tos lists) and sizes (--size list): state outside struct session. */
#define CLS_MAX		8
#define SZ_MAX		16
#define CLS_RROWS	16	/* the reflector's rows: the classes its pings arrive in */

/* PF_CLASS pings carry the SO_PRIORITY to answer with (+1, 0 = none) in these bits. */
#define PF_CLASS	(1u << 11)
#define PF_PRIO_SHIFT	12

/* CG_LMISS, CG_LINVAL: --txtime's launch times the qdisc reported missed or invalid */
enum { CG_SENT, CG_RECEIVED, CG_LOST, CG_LATE, CG_WARMUP, CG_BREACH, CG_LMISS, CG_LINVAL, NCG };

/*
 * With -s a row keeps two more metrics: a qdisc or a taprio gate holds a
 * ping before its wire stamp, where the wire rtt cannot see it.
 */
enum { GX_APP, GX_TX, GX_LAUNCH, GX_SPARE, GX_N };

/* One row of the class/size tables. */
struct grp {
	uint64_t n[NCG];
	struct hist h;		/* the primary metric: rtt */
	/* with -s: app rtt, client tx stack; with --txtime launch error, time to spare */
	struct hist x[GX_N];
};

/*
 * Reflector: a session that ended, remembered by its id so that a replay of
 * one of its pings opens nothing (reflect_replayed).  A table indexed by a
 * hash of the id: a newer session whose id falls in the same slot takes it.
 */
enum { ENDED_NONE, ENDED_UPTO, ENDED_ALL };
/*
 * The last ENDED_CAP sessions that ended, oldest forgotten first: a ring in
 * the order they ended, found by id through chains from a hash table (next
 * and the heads are index + 1, 0 none, so that zeroed memory is empty).
 */
struct ended_session { uint64_t top; uint32_t id; uint16_t next; uint8_t how; };
#define ENDED_CAP	4096
#define ENDED_HASH	(2 * ENDED_CAP)

/*
 * Reflector: T3 wire stamps waiting to be echoed in a later pong, with the
 * TX key of their send: T3_K (which may come after T3) is looked up by it.
 */
struct echo { uint64_t seq, t3w; uint32_t key; };
#define ECHO_CAP	256

/* ------------------------------------------------------------ run state */

enum phc_method { PHC_NONE, PHC_PRECISE, PHC_EXTENDED, PHC_PLAIN };

enum ow_evidence { OW_NONE, OW_LOOPBACK, OW_VETH, OW_PHC };

#define PLOT_BINS	400
#define PLOT_LB		1024	/* log buckets per bin: 16 per octave of ns */
#define PLOT_MAXSER	5
#define PLOT_MAXPANEL	8
#define PLOT_WORST	15	/* the worst transactions a plot draws, unless --top says */
#define PLOT_WORST_MAX	50	/* --top above it draws this many: the panel grows 20 px a bar */

/* One latency series over time: per bin min, max, count and log histogram. */
struct plot_series {
	int m;
	uint64_t n;
	int64_t min, max, minpos;	/* minpos: the smallest value above 0 (log axis) */
	int64_t *bmin, *bmax;
	uint32_t *bn, *lh;
	uint32_t nraw;
	uint64_t *rt;			/* raw points: stamp and value */
	int64_t *rv;
};

struct plot_panel {
	char title[160];
	int nser;
	struct plot_series ser[PLOT_MAXSER];
	uint32_t lost[PLOT_BINS], breach[PLOT_BINS];
	uint64_t nrec, nlost, nlate, nbreach;
};

struct plot_worst {
	struct txn x;
	int64_t v;
};

/* The in-flight window: txn slots indexed by seq (emit) or TX key (reflect). */
struct window {
	struct txn *slot;
	uint64_t mask;		/* slots - 1, a power of two minus one */
};

/* Reflector: T3 wire stamps waiting to be echoed in a later pong. */
struct echo_ring {
	struct echo *q;
	uint32_t head, n;
	/* the last echoes sent, newest first: the T3 history (PF_T3HIST) */
	struct echo sent[T3HIST_MAX + 1];
	uint32_t nsent;
};

struct classes {
	int ncls, nsz;			/* 1 and 1: a plain run */
	int nprio, ntos, nival;		/* list lengths given */
	uint64_t ival[CLS_MAX];		/* --interval list: each class its own cadence, ns */
	uint64_t next[CLS_MAX];		/* ... and its next slot, CLOCK_MONOTONIC */
	uint8_t *cmap;			/* ... so seq -> class is kept, not computed */
	uint64_t cmap_mask;
	int prio[CLS_MAX], tos[CLS_MAX];	/* -1: leave the socket's alone */
	unsigned size[SZ_MAX];
	int fd[CLS_MAX];		/* emit: class sockets (fd[0] is the run's socket) */
	uint32_t next_key[CLS_MAX];	/* their OPT_ID counters */
	uint64_t *keyseq[CLS_MAX];	/* their key -> seq maps */
	int cur;			/* the class whose socket is sock_fd now */
	int colw;			/* the class/size tables' value columns now printed */
	/* the class whose socket sock_setup() opens, 0 = the run's own */
	int opening;
	int phase;			/* the size measured now */
	uint64_t phase_seq0[SZ_MAX];	/* first seq of each size */
	uint64_t phase_ns;		/* -d per size */
	unsigned tx_size;		/* length of the next ping */
	struct grp *g;			/* rows: classes, then sizes, then class x size */
	int ng;
	/* reflect: the classes of this session as they arrive */
	int rx_tos;			/* TOS / traffic class of the last ping, -1 = unknown */
	int r_prio, r_tos;		/* what the reflector's socket carries now */
	int rn;
	/* ... r[CLS_RROWS]: pings without a class (or beyond CLS_RROWS classes) */
	struct { int prio, tos; uint64_t received, answered, warmup; } r[CLS_RROWS + 1];
	/* --analyze: the class and size of the row being read, from its columns */
	bool analyze;
	int a_cls, a_size;
	/* --analyze: the row's datagram size, from SIZE or size_turns= (0: not said) */
	unsigned a_bytes;
};

/*
 * Time-sensitive networking (--txtime, --cycle): what the interface's
 * qdiscs say (a netlink dump, as `tc -j qdisc show` reads it) and what the
 * run counts.  A taprio schedule's gate entries, as tc-taprio(8) gives them.
 */
#define TSN_ENT_MAX	64
#define TSN_ETF_MAX	16
#define TSN_REP_MAX	64
struct tsn_qdiscs {
	char root[16];			/* the root qdisc's kind ("" none found) */
	uint32_t root_handle;
	int netf;			/* etf qdiscs: parent, clock, delta, flags */
	struct { uint32_t parent; int clockid, delta; uint32_t flags; } etf[TSN_ETF_MAX];
	/* taprio (or mqprio: its map only) */
	bool map, sched;
	int num_tc;
	uint8_t prio_tc[16];
	uint16_t count[16], offset[16];
	int64_t base, cycle;		/* taprio's base and cycle time, ns on its clock */
	int clockid;
	uint32_t flags;			/* TCA_TAPRIO_ATTR_FLAGS: 1 txtime-assist, 2 offload */
	int nent;
	struct { uint32_t gates, ns; } ent[TSN_ENT_MAX];
};

struct tsn {
	bool on;			/* --txtime: every ping carries a launch time */
	int64_t tai;			/* CLOCK_TAI - CLOCK_REALTIME, ns (adjtimex's tai) */
	uint64_t slot;			/* the slot of the ping sent now (MONOTONIC), 0 = now */
	uint64_t launch;		/* the next send's launch time, CLOCK_TAI ns; 0 = none */
	int64_t offset[CLS_MAX];	/* --class-offset: each class's into the cycle, ns */
	int noffset;
	/* the error queue's reports (SO_EE_ORIGIN_TXTIME), and those no ping of the window made */
	uint64_t missed, invalid, unmatched;
	struct { uint64_t launch; bool missed; } rep[TSN_REP_MAX];	/* not yet counted */
	int nrep;
	int64_t etf_delta;		/* the etf's delta: it dequeues a packet that much early */
	struct tsn_qdiscs q;
	/*
	 * a taprio's schedule against each class: its traffic class, gate open and longest
	 * closed in the cycle (ns), where its pings come in it (-1: not aligned), inside a window?
	 */
	struct { int tc; int64_t open, closed, phase; bool in; } fit[CLS_MAX];
};

/*
 * Counters the status thread reads once a second.  Written with relaxed
 * atomic stores by the measurement loop; the thread never writes them, so
 * the loop never waits on it.
 */
struct live_counts {
	uint64_t samples, sum, min, max, lost, sent;
	int running;
	uint32_t session;	/* reflect: announced by the status thread, not the loop */
};

/*
 * What the NIC delivered of the hardware stamps rant asked for, over the
 * run (see hw_watch_none): datagrams received and those with a NIC stamp,
 * sends that asked for a TX stamp and the NIC TX stamps read.
 */
struct hw_watch {
	uint64_t rx, rx_hw, tx, tx_hw;
	uint64_t armed;		/* CLOCK_MONOTONIC when too few had come: late TX stamps' grace */
	int verdict;		/* enum hww_verdict */
	int lacking;		/* HWW_NONE: HWW_RX | HWW_TX, the directions without stamps */
	uint64_t at[4];		/* rx, rx_hw, tx, tx_hw when judged */
	bool fell_back;		/* auto: the kernel's stamps since */
	bool failed;		/* hw: the run stops, exit 1 */
};

struct ts_provider {
	bool known;		/* the kernel answered with a provider */
	int phc_index;
	uint32_t qualifier;	/* 0 precise, 1 approximate (net_tstamp.h) */
	int err;		/* why not, -errno */
};

/*
 * The reflector's source address for the datagram being sent (reflect_send
 * fills it from the ping's IP_PKTINFO / IPV6_PKTINFO); len 0 = none.
 */
struct tx_source {
	int level, type;
	size_t len;
	uint8_t data[sizeof(struct in6_pktinfo)];
};

struct phc_state {
	int fd, index;
	enum phc_method method;
	uint64_t n;
	int64_t first_off, last_off;	/* PHC - CLOCK_REALTIME, ns */
	/*
	 * CLOCK_REALTIME of those, as the readings themselves took it: a
	 * clock read after the ioctl would count any stall between the two
	 * (a preempted thread, a VM's vCPU descheduled on its host) as PHC
	 * time that passed, and a PHC that stands still would read as moving
	 */
	uint64_t first_at, last_at;
	int64_t window;			/* width of the last read, ns (0: precise) */
	int err;			/* why it could not be read, -errno */
	bool status_own;		/* opened in the status thread's fd table (bond_watch) */
};

/*
 * The reflector's loop sends its last PHC reading in each FIN_ACK while the
 * status thread takes new ones: the reading it may use is published here,
 * in two words the loop reads without waiting (a torn pair is two readings
 * a second apart, both real).
 */
struct phc_published {
	int64_t off;
	uint64_t meta;		/* window (32 bits) << 16 | method << 8 | disciplined */
};

struct key_state {
	bool on;
	uint64_t k[2];
};

/*
 * Every "rant: ..." line on stderr (warnings, notes, errors) is also kept
 * for the JSON, so that CI can judge a run from its JSON alone: the first
 * WARN_KEEP of them, each cut to WARN_LEN bytes.  Those printed before a
 * reflector's first session go into every session's object.
 */
#define WARN_KEEP	32
#define WARN_LEN	320

struct warn_list {
	char line[WARN_KEEP][WARN_LEN];
	unsigned n;		/* printed, kept or not */
	unsigned start;		/* printed before the first session began */
	unsigned from;		/* the first since the last JSON object */
	bool started;
};

struct side_view {
	bool emit;
	const int *metrics, *stamps;
	int nmetrics, nstamps, primary;
	/* the metrics as bits, and per stamp the metrics that need it (txn_account) */
	unsigned mset, needed_by[NSTAMP];
	unsigned uset;		/* the stamps some metric of the side needs, as bits */
	unsigned sset;		/* the stamps as bits */
};

struct clock_watch {
	int64_t base;		/* CLOCK_REALTIME - CLOCK_MONOTONIC, ns */
	bool have;
	uint64_t steps, stepped;	/* steps seen, transactions marked (this session) */
	int64_t last;		/* the last step, ns */
};

/* The counters this run has: pmc.def[i] indexes pmc_def; pg[i] is its mapped page. */
struct pmc_state {
	int n;
	int def[PMC_MAX];
	int fd[PMC_MAX];
	const volatile struct perf_event_mmap_page *pg[PMC_MAX];
	uint16_t width;
	char skipped[64];	/* events this PMU refused, named in the start-up note */
};

/* Per-session statistics of the deltas of measured (ok, not warm-up) transactions. */
struct pmc_stats {
	uint64_t n[PMC_MAX], missing[PMC_MAX], max[PMC_MAX], max_seq[PMC_MAX];
	unsigned __int128 sum[PMC_MAX];
};

/* What the last log_write put in the file, for the report's "Log:" line. */
struct log_result {
	uint64_t rows, skipped;	/* rows written; warm-up records a text log leaves out */
	int err;		/* -errno of a failed write, 0 */
	bool done;
};

/*
 * All memory the measurement touches comes from one arena, mapped, populated
 * and locked before the first packet (-G: from hugepages), so the loop never
 * faults or allocates.  Its size follows what the run asked for.
 */
struct arena {
	uint8_t *base;
	size_t size, used;
	size_t page;		/* its page size (-G: the hugepage's) */
};

/*
 * Only the first fragment of a datagram is timestamped (timestamping.rst:
 * stamps are taken per skb, and on receive the reassembled datagram keeps
 * the stamp of its first fragment), so a datagram larger than the path MTU
 * measures one fragment, not the datagram.  The path MTU of the connected
 * socket (IP_MTU / IPV6_MTU) less the IP and UDP headers is the largest
 * payload that is stamped whole.
 */
struct path_mtu {
	unsigned mtu;		/* path MTU, 0 = unknown */
	unsigned payload;	/* largest unfragmented UDP payload */
	bool fragmented;	/* a size above payload was allowed */
};

/* State of the client's loop. */
/*
 * emit_later's list: a ring that holds a batch of TS_BATCH TX stamps' and the
 * pongs' accounting around it (TX stamps come one a ping back-to-back, a
 * batch with --interval); EMIT_LATER_STEP of it is done per
 * back-to-back step (about 1,300 instructions each, ~0.6 us here: far less
 * than a round trip)
 */
#define EMIT_LATER	64
#define EMIT_LATER_STEP	3
/* back-to-back, the most TX stamps read right after a send (emit_b2b_step) */
#define EMIT_TX_AFTER_SEND	4
struct emit_state {
	uint8_t *tx, *rx;
	size_t rxcap;
	uint64_t next_seq, total, outstanding, oldest, txpend;
	uint64_t *keyseq;	/* OPT_ID key -> seq of the ping it stamped */
	uint64_t end;		/* CLOCK_MONOTONIC end of -d, 0 = none */
	uint64_t rcvtimeo;	/* SO_RCVTIMEO now set, ns */
	uint32_t idle_ms;	/* hint to the reflector: longest silence between pings */
	bool fin_more;
	uint64_t first_rx_mono;
	bool fin_sent;		/* a FIN_ACK is an answer only after our FIN */
	bool waited;		/* --interval: the last step received, not only sent */
	/* --interval: the wake-up timerfd (emit_wake_open), there if timer; armed at tfd_at */
	bool timer;
	int tfd;
	uint64_t tfd_at;
	/* pongs heard at the last loss, since when nothing was heard, pings lost since */
	uint64_t heard, silent_since;
	uint32_t silent_lost;
	bool rx_ioctl;		/* --client-no-tx-ts: T4 read by SIOCGSTAMPNS (ts_rx_ioctl_on) */
	/* back-to-back without -t: transactions to account after the next ping went (emit_later) */
	bool defer;
	/*
	 * ... and the next ping sent as its pong is read, before the pong is
	 * taken in (emit_recv): early_ok for the run, early_due while the step
	 * waits for ping early_seq, early_sent once its successor went
	 */
	bool early_ok, early_due, early_sent;
	uint64_t early_seq;
	unsigned later_head, nlater;
	struct txn *later[EMIT_LATER];
	/* seqs answered (or never sent), beyond the window: replays */
	uint64_t answered[1024];
};

/*
 * What the loops learned that the outputs report, beyond the session's
 * counters and statistics (struct session): the loops (and --analyze,
 * from its logs) write it as they learn it; the report, JSON, log and plot
 * read it, and nothing else of a loop's state.
 */
struct loop_result {
	/* the client */
	uint64_t seqs;		/* the seqs its pings took, 0 to seqs - 1 (at its end) */
	uint64_t overruns;	/* --interval slots skipped because we were late */
	uint32_t rxq_ovfl;	/* SO_RXQ_OVFL: datagrams this host's receive buffer dropped */
	bool fin_acked;		/* a FIN_ACK came */
	bool fin_counted;	/* a FIN_ACK of the session itself came (its counts) */
	uint64_t srv_received;	/* FIN_ACK: pings the reflector answered */
	bool srv_whole;		/* ... over the whole session: loss can be split by direction */
	/* FINs waited for, and how long, in the exchange that got no "done" (loss_why) */
	unsigned fin_tries;
	uint64_t fin_wait_ns;
	char analyze_why[160];	/* --analyze: why the joined logs do not split the loss */
	bool busy;		/* the reflector answered BUSY: another session runs there */
	bool srv_no_tx;		/* the reflector said it takes no TX stamps (-N, PF_NO_TX) */
	/* the reflector's PHC reading and boot id, from its FIN_ACK (method 0 = none) */
	struct {
		int64_t off;
		uint32_t window;
		uint8_t method, disciplined;
		uint64_t boot_id;
	} srv_phc;
	/* the reflector: did the session get its socket (JSON own_socket), and if not, why */
	enum { SS_NOT_YET, SS_OWN, SS_SHARED } ss_got;
	char ss_why[96];
};

/* A destination address as IP_PKTINFO / IPV6_PKTINFO give it. */
union pktinfo_any {
	struct in_pktinfo v4;
	struct in6_pktinfo v6;
};

/* A question to the source watch: the peer, and the address it pinged. */
struct src_query {
	struct sockaddr_storage peer;
	socklen_t peerlen;
	int level;			/* IPPROTO_IP / IPPROTO_IPV6; 0 = no question */
	union pktinfo_any pi;
};

/*
 * The reflector's source watch (srcw_main), shared by the loop and the
 * watch thread.  lock guards q and a; the loop only ever try-locks it.
 */
struct src_watch {
	bool on;			/* the thread runs */
	pthread_t thread;
	/* rtnetlink notifications (-1: none), the loop's doorbell */
	int nl_fd, ev_fd;
	pthread_mutex_t lock;
	struct src_query q;		/* the loop's latest question */
	uint32_t q_gen;			/* counts questions */
	struct src_query a;		/* the question answered last */
	bool a_same;			/* its pinged address is the kernel's own source */
	uint32_t a_gen;			/* counts answers and withdrawals (atomic) */
	bool quit;			/* atomic */
};

/* A reflector socket's own: its fd, TX keys and the class it answers in. */
struct reflect_sock {
	int fd;
	uint32_t next_key;
	bool key_cmsg;
	int r_tos, r_prio;
};

/* State of the reflector across sessions. */
struct reflect_state {
	uint8_t *rx;
	size_t rxcap;
	bool active;
	uint64_t last_rx, idle_ns, txpend;
	/* the session that ended last: its FINs still get an answer */
	uint32_t last_id;
	/* the session that ended last: its count and whether it saw it whole, for a repeated FIN */
	uint64_t last_received;
	bool last_whole;
	uint64_t seen[64];		/* which of the 4096 seqs up to top arrived (duplicates) */
	uint64_t top, first, distinct;	/* seqs seen: highest, first, how many */
	bool any;
	uint64_t carry_invalid[PE_NERR];	/* junk between sessions, reported with the next */
	unsigned sessions;
	int exit_code;
	uint64_t end;
	int log_fd;
	FILE *json;
	bool log_header_done;
	struct sockaddr_storage peer;	/* the session's address and port: its first ping's */
	socklen_t peerlen;
	/* the session's first TX key: older stamps are not its own */
	uint32_t key0;
	/* FINs of this session answered, and whether owed TX stamps were waited for */
	unsigned fin_rounds;
	bool fin_waited;
	/* a far-ahead seq waiting for a second ping to confirm it */
	uint64_t ahead;
	/* the session's idle hint: the largest its pings gave, clamped */
	uint64_t hint_ms;
	/* without a key: the lowest seq below the window that may still come */
	uint64_t below;
	/* the seq of the session's last ping answered: its client's FIN comes above it */
	uint64_t last_seq;
	uint64_t busy_last;		/* CLOCK_MONOTONIC of the last BUSY answer */
	/* CLOCK_MONOTONIC when the loop last ran (stall detection) */
	uint64_t last_wake;
	/*
	 * CLOCK_MONOTONIC as the datagram being handled was read (reflect_tick);
	 * with --spin the last read before it (at most 64 empty polls or one
	 * datagram old), and after a pong the read that follows it
	 */
	uint64_t now;
	bool read_after;	/* --spin: reflect_packet read the clock after its pong */
	/* the sessions that ended, newest ENDED_CAP kept (reflect_replayed) */
	struct ended_session ended[ENDED_CAP];
	uint16_t ended_head[ENDED_HASH];
	uint32_t ended_n;		/* sessions remembered so far: the ring's next slot */
	uint64_t carry_rej[GR_N];	/* rejections between sessions, reported with the next */
	/* where the datagram being answered was sent to (IP_PKTINFO / IPV6_PKTINFO) */
	int pi_level;			/* 0 = none */
	union pktinfo_any pi;
	bool measuring;		/* this session's warm-up is over (RANT_TEST_START written) */
	bool mark_due;		/* RANT_TEST_START: written after this pong (reflect_after_pong) */
	bool fresh;		/* the session's first pong is not sent yet */
	bool clean;		/* the next session's memory is cleared (reflect_clear) */
	bool named;		/* the datagram just sent named its source (IP_PKTINFO) */
	/* answers that need no IP_PKTINFO: the source watch's answer (srcw_adopt) */
	struct src_query src;	/* the peer and pinged address it is about */
	bool src_same;		/* ... the pinged address is the kernel's own source */
	uint32_t src_gen;	/* the answer's generation */
	struct src_query ask;	/* the last question asked (srcw_ask) */
	uint64_t ask_mono;	/* ... when, */
	uint32_t ask_id;	/* ... in which session */
	/*
	 * The session's own socket (reflect_ss_open): bound to the address its
	 * first ping was sent to, connected to its peer.  While it serves
	 * (ss_on) it is run.sock_fd, with TX keys of its own, and the shared
	 * socket that every other datagram comes to waits in sh.
	 */
	bool ss_on;
	int ss_fd, ss_family;
	int ss_pi_level;		/* the address it is bound to, as IP_PKTINFO said */
	union pktinfo_any ss_pi;
	struct reflect_sock sh;
	bool spare_on;			/* the next session's, made ready between sessions */
	int spare_fd, spare_family;
	char spare_why[64];		/* why there is none: the call that failed, its error */
	/*
	 * Between its bind and its connect the session's socket takes every
	 * datagram sent to its address, any client's: those are read with
	 * their senders before anything else on it (pre_on), and a socket whose
	 * connect failed is closed once they are read (pre_close).
	 */
	bool pre_on, pre_close;
	int pre_fd;
	int pre_pi_level;
	union pktinfo_any pre_pi;
	bool on_ss;		/* the datagram being handled is the session's, to ss's address */
	bool off_addr;		/* ... is from its peer, to another of this host's addresses */
	bool sent_shared;	/* the last send went out on the shared socket while ss served */
	bool shared_due;	/* the shared socket is read before the next receive */
	uint64_t shared_last;	/* when it was last found empty (reflect_recv_shared) */
	bool ss_due;		/* the session's first pong is out: its socket next */
	/*
	 * ss's TX keys: its counter from 0 at ss_base, the session's keys going
	 * on; the shared socket's stamps below ss_base are the session's first
	 * pongs' (sh_owed of them still owed), the others its BUSYs' (dropped)
	 */
	uint32_t ss_base;
	uint64_t sh_owed;
	unsigned sh_tries;	/* pongs after which sh_owed is read with each (then every ms) */
	bool sh_busy;		/* a BUSY went out on it: its error queue has a stamp to drop */
	bool sh_rekeyed;	/* the shared socket's keys restarted: none of its stamps is ours */
};

struct plot_state {
	int fd;
	uint64_t t0, t1;	/* time span of the transactions, ns since the epoch */
	bool raw;		/* few enough: every point is drawn */
	int npanel;
	struct plot_panel panel[PLOT_MAXPANEL];
	int nworst;
	struct plot_worst worst[PLOT_WORST_MAX];
	uint64_t szt0[SZ_MAX];	/* --size list: when each size's turn began, 0 = never */
	uint64_t tlast;		/* the time of the transaction binned last */
	/* the writer: its buffer and the first error (errno) */
	char buf[1 << 16];
	size_t len;
	int err;
};

/*
 * The one point where measurement hands over to outputs.  The outputs (the
 * text report, the picture and the JSON) stand below the loops, so the loops
 * reach them through this table, which main points run.to at before the run.
 */
struct outputs {
	/* a run's or a reflector session's outputs (report_outputs of a live run) */
	int (*report)(FILE *out, FILE *json, bool close_json, int code, uint64_t n);
};

/* What the command line asked for: written by the options section only. */
static struct config opts;
/* ... and read everywhere else through cfg, so that nothing else can change it. */
static const struct config *const cfg = &opts;

/* -N on the reflector: its response ends at the app's send (T3_SW), not on the wire. */
static bool resp_tx_app(void)
{
	return cfg->no_tx_ts && cfg->mode == MODE_REFLECT;
}

/* --client-no-tx-ts on the client: its rtt starts at the app's send (T1_SW). */
static bool cli_no_tx(void)
{
	return cfg->cli_no_tx && cfg->mode == MODE_EMIT;
}

/*
 * What a run (or --analyze) measures and changes that no one section owns,
 * in one object.  Each section's own state is a static of its own below
 * it: the session's (sess), the classes' (classes), the launch times'
 * (tsn), the client's loop (emitter), the reflector's (refl), its source
 * watch (srcwatch), and what the outputs keep while they write (outs,
 * plotter).  run_reset() puts all of them back through one list, and the
 * unit tests start each case from there.
 */
static struct run {
	/* the wire timestamp source in use */
	struct ts_state ts;
	/* tracefs files (-T/-S) */
	struct trace_state tr;
	/* the run's socket (emit with classes: the current class's) */
	int sock_fd;
	/* the in-flight window: txn slots indexed by seq (emit) or TX key (reflect) */
	struct window win;
	/* reflector: T3 wire stamps waiting to be echoed in a later pong */
	struct echo_ring echo;
	/* Set by SIGINT/SIGTERM; a second signal exits at once. */
	volatile sig_atomic_t stop_signal;
	/* what the status thread reads once a second */
	struct live_counts live;
	/* the device's timestamp provider (ethtool tsconfig) */
	struct ts_provider ts_prov;
	/* -i's NIC said it cannot stamp in hardware: log records need no room for kernel stamps */
	bool ts_no_hw;
	/* the hardware stamps the NIC delivered */
	struct hw_watch hww;
	/* bytes before the header: the PTP header with --ptp-probe */
	unsigned proto_pre;
	/* the reflector's source address for the datagram being sent */
	struct tx_source tx_src;
	/* Stamps a NIC other than -i's put on packets that reached our socket. */
	uint64_t ts_foreign;
	/* Kernel RX stamp of the datagram being handled (hardware mode; else 0). */
	uint64_t ts_rx_kernel;
	/* the NIC clock's offset to CLOCK_REALTIME */
	struct phc_state phc;
	/*
	 * This kernel's boot id (/proc/sys/kernel/random/boot_id, random at each
	 * boot, the same in every network namespace): two ends that send the same
	 * one run in one kernel, on one CLOCK_REALTIME.  Its first 64 bits; 0 =
	 * unknown.  Read once at start, never in the loop.
	 */
	uint64_t host_boot_id;
	struct phc_published phc_pub;
	/* --key-file */
	struct key_state key;
	/* what this side measures */
	struct side_view side;
	/* CLOCK_REALTIME steps */
	struct clock_watch clk;
	/* -M: the counters */
	struct pmc_state pmc;
	/* -M: their statistics */
	struct pmc_stats pmc_st;
	/*
	 * Counts at the last receive (emit: the end of a transaction; reflect: its
	 * start) and at the reflector's send.  Kept here: the loop passes no extra
	 * arguments around for -M.
	 */
	uint64_t pmc_rx[PMC_MAX], pmc_tx[PMC_MAX];
	/* what the log file got */
	struct log_result log_out;
	/*
	 * The writer's buffer is static, not malloc'ed after the run: mlockall faults
	 * it in before the first packet, so a reflector writing a session's log
	 * allocates nothing and its memory stays flat across sessions.
	 */
	char log_buf[1 << 20];
	/* the memory the loop touches */
	struct arena arena;
	/* mlockall succeeded */
	bool memory_locked;
	/* --analyze: a filtered reflect log's gaps are not losses: lost is not known */
	bool lost_unknown;
	/* --analyze: the stamps the log has no column for: whether they came is not known */
	unsigned stamps_unknown;
	/* --cpu-latency: the CPU latency request held open (cpu_latency_hold) */
	struct cpu_latency cpulat;
	/* the path MTU */
	struct path_mtu path;
	/* why one-way delays may be read as such */
	enum ow_evidence ow_evidence;
	/* when the first SIGINT/SIGTERM came */
	uint64_t first_signal_ns;
	/* the status line */
	pthread_t status_thread;
	bool status_started;
	bool status_live;	/* the periodic line is printed (status_wanted) */
	/* the lines warnx_ printed, for the JSON's "warnings" (main thread only) */
	struct warn_list warn;
	/* the outputs (set by main before the run) */
	const struct outputs *to;
} run;

/*
 * What the outputs (report, json, plot) keep while they write: apart from
 * the run, which the loops change; run_reset() puts it back with the run.
 */
static struct out_state {
	/* --histfile: its descriptor (-1: none) and the blocks written */
	int hf_fd;
	unsigned hf_blocks;
	/* the JSON's "above" array: the separator before its next pair */
	const char *json_above_sep;
	/* a reflector's JSON Lines: a failed write left part of a line in the file */
	bool json_cut;
} outs;

/* Each section's own state (see struct run) */
static struct session sess;		/* the (current) session: its counters and statistics */
static struct classes classes;		/* classes and sizes */
static struct tsn tsn;			/* time-sensitive networking: launch times, the schedule */
static struct emit_state emitter;	/* the client's loop */
static struct reflect_state refl;	/* the reflector, across sessions */
static struct loop_result result;	/* what the loops learned for the outputs */
static struct src_watch srcwatch;	/* the reflector's source watch (-i) */
static struct plot_state plotter;	/* --plot */

/* Every state run_reset() puts back, each all zero first. */
static const struct {
	void *at;
	size_t size;
} run_states[] = {
	{ &run, sizeof(run) }, { &sess, sizeof(sess) }, { &classes, sizeof(classes) },
	{ &tsn, sizeof(tsn) }, { &emitter, sizeof(emitter) }, { &refl, sizeof(refl) },
	{ &result, sizeof(result) },
	{ &srcwatch, sizeof(srcwatch) }, { &outs, sizeof(outs) }, { &plotter, sizeof(plotter) },
};

/* The run state and the outputs' state as at start-up: everything zero but these. */
static void run_reset(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(run_states); i++) {
		memset(run_states[i].at, 0, run_states[i].size);
	}
	run.tr = (struct trace_state){ .marker_fd = -1, .on_fd = -1, .snap_fd = -1 };
	run.sock_fd = -1;
	run.cpulat.fd = -1;
	classes = (struct classes){ .ncls = 1, .nsz = 1, .rx_tos = -1, .r_prio = -1, .r_tos = -1 };
	run.phc = (struct phc_state){ .fd = -1, .index = -1 };
	plotter = (struct plot_state){ .fd = -1 };
	outs.hf_fd = -1;
}

/* ------------------------------------------------------------- helpers */

/* A ping whose fate is known: answered, lost, or never sent. */
static bool resolved(const struct txn *x)
{
	return x->st & (TF_RECEIVED | TF_LOST | TF_SENDERR);
}

/* A ping on the wire still waiting for its pong. */
static bool awaiting(const struct txn *x)
{
	return (x->st & TF_SENT) && !resolved(x);
}

/* A receive that found nothing now (non-blocking, timed out or interrupted). */
static bool nothing_now(int err)
{
	return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}

static void warnx_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warnx_(const char *fmt, ...)
{
	/* the status thread says a bond's failover too: one line at a time, kept whole */
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct warn_list *w = &run.warn;
	va_list ap;

	pthread_mutex_lock(&lock);
	fputs("rant: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (w->n < WARN_KEEP) {
		va_start(ap, fmt);
		vsnprintf(w->line[w->n], WARN_LEN, fmt, ap);
		va_end(ap);
	}
	w->n++;
	pthread_mutex_unlock(&lock);
}

/* The first session begins: what was printed so far was the run's start-up. */
static void warn_start(void)
{
	if (!run.warn.started) {
		run.warn.start = run.warn.from = run.warn.n;
		run.warn.started = true;
	}
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return (uint64_t)t.tv_sec * NSEC_PER_SEC + (uint64_t)t.tv_nsec;
}

static uint64_t mono_ns(void)
{
	return now_ns(CLOCK_MONOTONIC);
}

/* App stamps use CLOCK_REALTIME: the base of the kernel's software stamps. */
static uint64_t real_ns(void)
{
	return now_ns(CLOCK_REALTIME);
}

/*
 * rant's helper threads (the status line, the reflector's source watch):
 * every signal blocked (the main thread takes SIGINT/SIGTERM), a small
 * stack, and SCHED_OTHER whatever chrt gave main (sched(7)): under chrt the
 * loop preempts them at once, so that their work never lands inside one of
 * its measured windows.  Not SCHED_IDLE: on a busy host an idle-class
 * thread waits seconds for the CPU, and the status line and the watch's
 * withdrawal after a routing change must not.  True if the thread runs.
 */
static bool thread_start(pthread_t *t, void *(*fn)(void *))
{
	pthread_attr_t at;
	struct sched_param sp = { 0 };
	sigset_t all, old;
	bool ok;

	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	pthread_attr_setinheritsched(&at, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&at, SCHED_OTHER);
	pthread_attr_setschedparam(&at, &sp);
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ok = pthread_create(t, &at, fn, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&at);
	return ok;
}

/* close(2) of every fd in [first, last]: close_range(2), else one by one */
static void close_from(unsigned first, unsigned last)
{
	unsigned fd, max = (unsigned)sysconf(_SC_OPEN_MAX);

	if (first > last) {
		return;
	}
	if (syscall(SYS_close_range, first, last, 0) == 0) {
		return;
	}
	/* before Linux 5.9: one by one, up to the limit of open files */
	for (fd = first; fd <= last && fd < max; fd++) {
		close((int)fd);
	}
}

/*
 * A helper thread's first act: a file table of its own (unshare(2),
 * CLONE_FILES).  While a second task shares the loop's table, the kernel
 * takes and drops a reference to the file in every system call on it
 * (fdget(), fs/file.c: the lockless way is only for a table used by one
 * task): two atomic operations in each send and receive of the loop.
 * Measured on a 2-CPU VM, veth, spinning: rate 1.029 (quartiles
 * 1.02-1.06, above in 15 of 16 pairs), app RTT 0.968 against the same
 * build sharing its table.  The copy keeps only what the thread uses (keep,
 * and stdin, stdout, stderr): a socket the loop closes later (a session's
 * own, reflect_ss_close) must close then, not stay bound and connected in
 * the helper's copy.
 */
static void thread_own_files(const int *keep, int n)
{
	unsigned from = 3;
	int j;

	if (unshare(CLONE_FILES) < 0) {
		return;	/* the table stays shared: slower system calls in the loop, nothing else */
	}
	/* every fd from 3 up closed but those kept (-1: none): the gaps between them, in order */
	for (;;) {
		int next = -1;

		for (j = 0; j < n; j++) {
			if (keep[j] >= (int)from && (next < 0 || keep[j] < next)) {
				next = keep[j];
			}
		}
		if (next < 0) {
			close_from(from, ~0U);
			return;
		}
		close_from(from, (unsigned)next - 1);
		from = (unsigned)next + 1;
	}
}

/*
 * The loop's socket calls, made directly: glibc's recvmsg, sendmsg and
 * recvmmsg are cancellation points (pthreads(7)), which once a process has
 * a second thread (the status line, the source watch) wrap every call in
 * two atomic operations -- measured with callgrind: 87 instructions per
 * transaction on the reflector.  rant never cancels its main thread.
 */
static ssize_t sys_recvmsg(int fd, struct msghdr *msg, int flags)
{
	/*
	 * No control data and no name: recvfrom(2), which takes the buffer as
	 * it is, where recvmsg(2) first copies in the msghdr and its iovec
	 * (___sys_recvmsg): on a 2-CPU VM an empty non-blocking call
	 * 270 ns against 400, a datagram read 700 ns against 920 with its
	 * stamp.  MSG_TRUNC makes it return the datagram's whole length, as
	 * recvmsg(2) sets MSG_TRUNC in msg_flags (udp(7)).
	 */
	if (!msg->msg_controllen && !msg->msg_name && msg->msg_iovlen == 1) {
		size_t cap = msg->msg_iov[0].iov_len;
		ssize_t n = syscall(SYS_recvfrom, fd, msg->msg_iov[0].iov_base, cap,
				    flags | MSG_TRUNC, NULL, NULL);

		msg->msg_flags = n > (ssize_t)cap ? MSG_TRUNC : 0;
		return n > (ssize_t)cap ? (ssize_t)cap : n;
	}
	return syscall(SYS_recvmsg, fd, msg, flags);
}

/*
 * A send with no control data goes as sendto(2): the kernel then takes the
 * one buffer as it is, where sendmsg(2) first copies and checks the msghdr
 * and its iovec (___sys_sendmsg).  Measured on a 2-CPU VM, veth,
 * spinning: about 0.1 us less per send, inside every round trip, for the
 * stamped floor as for rant (docs/bench.md).
 */
static ssize_t sys_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	if (!msg->msg_controllen && msg->msg_iovlen == 1) {
		return syscall(SYS_sendto, fd, msg->msg_iov[0].iov_base, msg->msg_iov[0].iov_len,
			       flags, msg->msg_name, msg->msg_namelen);
	}
	return syscall(SYS_sendmsg, fd, msg, flags);
}

static int sys_recvmmsg(int fd, struct mmsghdr *v, unsigned n, int flags)
{
	return (int)syscall(SYS_recvmmsg, fd, v, n, flags, NULL);
}

/*
 * The kernel interface the unit tests replace: every call and path below
 * goes through kops, which they set and restore whole (kops = kops_sys).
 */
static int ts_ioctl_sys(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) < 0 ? -errno : 0;
}

/* Kernel release as major * 1000 + minor (6.13 -> 6013); 0 if unknown. */
static unsigned ts_kernel_uname(void)
{
	struct utsname u;
	unsigned maj = 0, min = 0;

	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &maj, &min) != 2) {
		return 0;
	}
	return maj * 1000 + min;
}

static int phc_open_sys(int index)
{
	char path[32];
	int fd;

	snprintf(path, sizeof(path), "/dev/ptp%d", index);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

#if defined(__x86_64__)
#define PMC_ARCH_OK	1
#else
#define PMC_ARCH_OK	0
#endif

static uint64_t pmc_rdpmc_hw(uint32_t counter)
{
#if PMC_ARCH_OK
	uint32_t lo, hi;

	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return (uint64_t)hi << 32 | lo;
#else
	(void)counter;
	return 0;
#endif
}

/* perf_event_open(2) for this thread. */
static int pmc_open_sys(struct perf_event_attr *a, int group)
{
	int fd = (int)syscall(SYS_perf_event_open, a, 0, -1, group, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

struct kops {
	/* SIOCETHTOOL, SIOC[GS]HWTSTAMP: the tests answer as a real NIC would */
	int (*ioctl)(int fd, unsigned long req, void *arg);
	unsigned (*kernel)(void);	/* the kernel's release (ts_keys_setup) */
	int (*phc_open)(int index);	/* a fake PHC behind these two */
	int (*phc_ioctl)(int fd, unsigned long req, void *arg);
	/* the loop's sends: the tests make one fail as a kernel would */
	ssize_t (*sendmsg)(int fd, const struct msghdr *msg, int flags);
	uint64_t (*clock)(clockid_t clk);	/* the clock-step check's reads: a fake clock */
	uint64_t (*rdpmc)(uint32_t counter);	/* -M: the instruction's values */
	int (*pmc_open)(struct perf_event_attr *a, int group);
	/* where the interfaces, processes, PMU and perf paranoia level are */
	const char *sysfs_net, *proc_root, *pmc_devices, *pmc_paranoid;
};

#define KOPS_SYS {								\
	.ioctl = ts_ioctl_sys, .kernel = ts_kernel_uname, .phc_open = phc_open_sys,	\
	.phc_ioctl = ts_ioctl_sys, .sendmsg = sys_sendmsg, .clock = now_ns,		\
	.rdpmc = pmc_rdpmc_hw, .pmc_open = pmc_open_sys, .sysfs_net = "/sys/class/net",	\
	.proc_root = "/proc", .pmc_devices = "/sys/bus/event_source/devices",		\
	.pmc_paranoid = "/proc/sys/kernel/perf_event_paranoid",			\
}
static const struct kops kops_sys = KOPS_SYS;
static struct kops kops = KOPS_SYS;

static uint64_t ts_to_ns(const struct timespec *t)
{
	if (t->tv_sec < 0 || (t->tv_sec == 0 && t->tv_nsec == 0)) {
		return 0;
	}
	return (uint64_t)t->tv_sec * NSEC_PER_SEC + (uint64_t)t->tv_nsec;
}

/* b - a when both stamps are known. */
static bool stamp_diff(uint64_t b, uint64_t a, int64_t *out)
{
	if (!a || !b || a >= STAMP_MAX || b >= STAMP_MAX) {
		/* beyond STAMP_MAX: impossible, and the sums below could overflow */
		return false;
	}
	*out = (int64_t)b - (int64_t)a;
	return true;
}

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = 1;

	while (p < v) {
		p <<= 1;
	}
	return p;
}

/* The characters v takes printed: a column of ns values is at least this wide. */
static int num_width(int64_t v)
{
	char b[24];

	return snprintf(b, sizeof(b), "%" PRId64, v);
}

/*
 * Arithmetic without libm: the earlier rant's build line, `gcc -o rant
 * rant.c`, links no -lm, so rant calls none of its functions (fabs, isnan
 * and isinf are compiler builtins).  Only what the statistics, the option
 * parser and the plot need, exact where they rely on it: whole numbers and
 * powers of ten.
 */
#define NUM_WHOLE	4503599627370496.0	/* 2^52: every double beyond is whole */

static double num_floor(double x)
{
	double t;

	if (!(x > -NUM_WHOLE && x < NUM_WHOLE)) {
		return x;	/* whole already, or not a number */
	}
	t = (double)(int64_t)x;	/* toward zero, exact below 2^52 */
	return t > x ? t - 1 : t;
}

static double num_ceil(double x)
{
	return -num_floor(-x);
}

/* The nearest whole number, halves away from zero (llround); |x| < 2^63. */
static int64_t num_round(double x)
{
	double t = num_floor(x < 0 ? -x : x);
	int64_t r = (int64_t)t + ((x < 0 ? -x : x) - t >= 0.5);

	return x < 0 ? -r : r;
}

/* Newton's iteration after scaling x by powers of four into [1, 4): 0 for x <= 0. */
static double num_sqrt(double x)
{
	double r, s = 1;
	int i;

	if (!(x > 0) || isinf(x)) {
		return x > 0 ? x : 0;
	}
	while (x >= 0x1p64) {
		x *= 0x1p-64;
		s *= 0x1p32;
	}
	while (x < 0x1p-64) {
		x *= 0x1p64;
		s *= 0x1p-32;
	}
	while (x >= 4) {
		x /= 4;
		s *= 2;
	}
	while (x < 1) {
		x *= 4;
		s /= 2;
	}
	r = (1 + x) / 2;	/* within 25 % of the root: 6 steps reach double precision */
	for (i = 0; i < 6; i++) {
		r = (r + x / r) / 2;
	}
	return r * s;
}

/* 10^k: exact for 0 <= k <= 22, correctly rounded down to 10^-22. */
static double num_pow10(int k)
{
	double p = 1;
	int i;

	for (i = 0; i < (k < 0 ? -k : k); i++) {
		p *= 10;
	}
	return k < 0 ? 1 / p : p;
}

/* The k with 10^k <= x < 10^(k+1), for x > 0. */
static int num_decade(double x)
{
	int k = 0;

	while (k < 308 && x >= num_pow10(k + 1)) {
		k++;
	}
	while (k > -307 && x < num_pow10(k)) {
		k--;
	}
	return k;
}

/*
 * log10 for x > 0: the decade, then ln of the rest as 2 atanh((m-1)/(m+1))
 * over m in [1, 2) (|term ratio| <= 1/9).  Exact at powers of ten.
 */
static double num_log10(double x)
{
	double m, s, s2, term, sum = 0;
	int k, e = 0, i;

	if (!(x > 0)) {
		return -308;
	}
	k = num_decade(x);
	m = x / num_pow10(k);
	while (m >= 2) {
		m /= 2;
		e++;
	}
	while (m < 1) {
		m *= 2;
		e--;
	}
	s = (m - 1) / (m + 1);
	s2 = s * s;
	term = s;
	for (i = 1; i < 40; i += 2) {
		sum += term / i;
		term *= s2;
	}
	return k + (2 * sum + e * 0.69314718055994530942) / 2.30258509299404568402;
}

/*
 * Hand-rolled formatting for the log writer and trace lines: snprintf per
 * field is what made the earlier writer slow, and these also run on the
 * breach path where stdio is not welcome.
 */
static char *fmt_u64(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n) {
		*p++ = tmp[--n];
	}
	return p;
}

static char *fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return fmt_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return fmt_u64(p, (uint64_t)v);
}

/* Two digits at a time: the log writer formats eight stamps per record. */
static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static char *fmt_9digits(char *p, uint32_t v)
{
	int i;

	p[8] = (char)('0' + v % 10);
	v /= 10;
	for (i = 6; i >= 0; i -= 2) {
		memcpy(p + i, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	return p + 9;
}

/*
 * seconds.nanoseconds, nine digits after the point; "-" when unknown.
 * Consecutive stamps share their seconds, so the last one is kept formatted
 * (main thread only: the status thread never formats stamps).
 */
static char *fmt_stamp(char *p, uint64_t ns, char missing)
{
	static uint64_t last_sec = UINT64_MAX;
	static char sec_str[24];
	static size_t sec_len;
	uint64_t sec = ns / NSEC_PER_SEC;

	if (!ns) {
		if (missing) {
			*p++ = missing;
		}
		return p;
	}
	if (sec != last_sec) {
		sec_len = (size_t)(fmt_u64(sec_str, sec) - sec_str);
		last_sec = sec;
	}
	memcpy(p, sec_str, sec_len);
	p += sec_len;
	*p++ = '.';
	return fmt_9digits(p, (uint32_t)(ns % NSEC_PER_SEC));
}

static char *fmt_str(char *p, const char *s)
{
	size_t n = strlen(s);

	memcpy(p, s, n);
	return p + n;
}

/* "T1_HW", "T1_KSW" or "T1_SW": wire stamps are never mislabelled. */
static const char *stamp_label(int s, bool hw, char *buf, size_t len)
{
	snprintf(buf, len, "%s_%s", stamp_base[s],
		 stamp_is_wire[s] ? (hw ? "HW" : "KSW") : s == T1L ? "LT" : s >= T1K ? "K" : "SW");
	return buf;
}

/* write(2) until all of buf is written; -errno */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0) {
			if (errno == EINTR) {
				continue;
			}
			return -errno;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/* ---------------------------------------------------------- timestamps */

/* One interface ioctl (SIOCETHTOOL and friends) with DATA for IFNAME. */
static int if_ioctl(int fd, const char *ifname, unsigned long req, void *data)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ifr.ifr_data = data;
	return kops.ioctl(fd, req, &ifr);
}

/* What ETHTOOL_GET_TS_INFO says the device can do. */
struct ts_caps {
	uint32_t so_timestamping;
	int phc_index;
	uint32_t tx_types, rx_filters;
};

static int ts_get_caps(int fd, const char *ifname, struct ts_caps *caps)
{
	struct ethtool_ts_info info = { .cmd = ETHTOOL_GET_TS_INFO };
	int r = if_ioctl(fd, ifname, SIOCETHTOOL, &info);

	if (r < 0) {
		return r;
	}
	caps->so_timestamping = info.so_timestamping;
	caps->phc_index = info.phc_index;
	caps->tx_types = info.tx_types;
	caps->rx_filters = info.rx_filters;
	return 0;
}

static bool ts_caps_hw(const struct ts_caps *c)
{
	const uint32_t need = SOF_TIMESTAMPING_TX_HARDWARE |
			      SOF_TIMESTAMPING_RX_HARDWARE |
			      SOF_TIMESTAMPING_RAW_HARDWARE;

	return (c->so_timestamping & need) == need &&
	       (c->tx_types & (1u << HWTSTAMP_TX_ON)) && c->phc_index >= 0;
}

static const char *ts_filter_name(int f)
{
	switch (f) {
	case HWTSTAMP_FILTER_NONE: return "NONE";
	case HWTSTAMP_FILTER_ALL: return "ALL";
	case HWTSTAMP_FILTER_SOME: return "SOME";
	case HWTSTAMP_FILTER_PTP_V1_L4_EVENT: return "PTP_V1_L4_EVENT";
	case HWTSTAMP_FILTER_PTP_V1_L4_SYNC: return "PTP_V1_L4_SYNC";
	case HWTSTAMP_FILTER_PTP_V1_L4_DELAY_REQ: return "PTP_V1_L4_DELAY_REQ";
	case HWTSTAMP_FILTER_PTP_V2_L4_EVENT: return "PTP_V2_L4_EVENT";
	case HWTSTAMP_FILTER_PTP_V2_L4_SYNC: return "PTP_V2_L4_SYNC";
	case HWTSTAMP_FILTER_PTP_V2_L4_DELAY_REQ: return "PTP_V2_L4_DELAY_REQ";
	case HWTSTAMP_FILTER_PTP_V2_L2_EVENT: return "PTP_V2_L2_EVENT";
	case HWTSTAMP_FILTER_PTP_V2_L2_SYNC: return "PTP_V2_L2_SYNC";
	case HWTSTAMP_FILTER_PTP_V2_L2_DELAY_REQ: return "PTP_V2_L2_DELAY_REQ";
	case HWTSTAMP_FILTER_PTP_V2_EVENT: return "PTP_V2_EVENT";
	case HWTSTAMP_FILTER_PTP_V2_SYNC: return "PTP_V2_SYNC";
	case HWTSTAMP_FILTER_PTP_V2_DELAY_REQ: return "PTP_V2_DELAY_REQ";
	default: return "PTP (other)";
	}
}

/* Write back the config read at start, if one was read; 0 or -errno. */
static int ts_put_back(int fd, struct ts_state *st, bool have_saved)
{
	struct hwtstamp_config hc = st->saved;
	struct ifreq ifr = st->saved_ifr;

	if (!have_saved) {
		return -ENODATA;
	}
	ifr.ifr_data = (void *)&hc;
	return kops.ioctl(fd, SIOCSHWTSTAMP, &ifr);
}

/*
 * One SIOCSHWTSTAMP: TX on (or the one-step type found), FILTER.  A bond
 * (Linux 5.17+) passes the request to its active slave only with
 * HWTSTAMP_FLAG_BONDED_PHC_INDEX, and refuses it without (EOPNOTSUPP), as
 * linuxptp knows; most NIC drivers refuse any flag (EINVAL, "reserved for
 * future extensions").  So the flag goes only to a device that showed it in
 * its SIOCGHWTSTAMP answer, or that refused the request without it.
 */
static int ts_hw_request(int fd, struct ifreq *ifr, struct hwtstamp_config *hc, int filter,
			 struct ts_state *st)
{
	int r;

	memset(hc, 0, sizeof(*hc));
	hc->flags = st->bonded ? HWTSTAMP_FLAG_BONDED_PHC_INDEX : 0;
	hc->tx_type = st->tx_type;
	hc->rx_filter = filter;
	ifr->ifr_data = (void *)hc;
	r = kops.ioctl(fd, SIOCSHWTSTAMP, ifr);
	if (r == -EOPNOTSUPP && !st->bonded) {
		memset(hc, 0, sizeof(*hc));
		hc->flags = HWTSTAMP_FLAG_BONDED_PHC_INDEX;
		hc->tx_type = st->tx_type;
		hc->rx_filter = filter;
		if (kops.ioctl(fd, SIOCSHWTSTAMP, ifr) == 0) {
			st->bonded = true;
			st->saved.flags |= HWTSTAMP_FLAG_BONDED_PHC_INDEX;	/* and to restore */
			return 0;
		}
	}
	return r;
}

/*
 * Ask the driver to stamp every packet.  Some NICs refuse HWTSTAMP_FILTER_ALL
 * and only stamp PTP event messages; timestamping.rst says the driver writes
 * back the filter it really applied, which may be broader than requested, so
 * that answer (not our request) is what we report.  Returns 0 or -errno.
 */
static int ts_hw_enable(int fd, const char *ifname, const struct ts_caps *caps,
			struct ts_state *st)
{
	static const int filters[] = {
		HWTSTAMP_FILTER_ALL, HWTSTAMP_FILTER_PTP_V2_EVENT,
		HWTSTAMP_FILTER_PTP_V2_L4_EVENT, HWTSTAMP_FILTER_PTP_V1_L4_EVENT,
	};
	struct hwtstamp_config hc;
	struct ifreq ifr;
	int r = -EOPNOTSUPP;
	size_t i;

	bool have_saved;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	memset(&hc, 0, sizeof(hc));
	ifr.ifr_data = (void *)&hc;
	have_saved = kops.ioctl(fd, SIOCGHWTSTAMP, &ifr) == 0;
	/* a bond answers for its active slave and says so in the flags (see ts_hw_request) */
	st->bonded = have_saved && (hc.flags & HWTSTAMP_FLAG_BONDED_PHC_INDEX);
	/*
	 * A one-step TX type (a ptp4l with twoStepFlag 0) stamps every other
	 * packet as TX_ON does (net_tstamp.h) and writes its own Sync (P2P:
	 * and Pdelay_Resp) stamps on the wire: kept, or that ptp4l would send
	 * unstamped Syncs for as long as rant runs.
	 */
	st->tx_type = HWTSTAMP_TX_ON;
	if (have_saved && (hc.tx_type == HWTSTAMP_TX_ONESTEP_SYNC ||
			   hc.tx_type == HWTSTAMP_TX_ONESTEP_P2P)) {
		st->tx_type = hc.tx_type;
	}
	if (have_saved && hc.tx_type == st->tx_type && hc.rx_filter == HWTSTAMP_FILTER_ALL) {
		st->rx_filter = hc.rx_filter;
		return 0;	/* already as we need it: change nothing */
	}
	st->saved = hc;
	st->saved_ifr = ifr;
	st->unknown_before = !have_saved;
	for (i = 0; i < ARRAY_SIZE(filters); i++) {
		if (caps->rx_filters && !(caps->rx_filters & (1u << filters[i]))) {
			continue;
		}
		r = ts_hw_request(fd, &ifr, &hc, filters[i], st);
		if (r == -EPERM || r == -EACCES) {
			return r;
		}
		if (r == 0 && hc.rx_filter != HWTSTAMP_FILTER_NONE && hc.tx_type == st->tx_type) {
			st->rx_filter = hc.rx_filter;
			/* never write at exit a config that was not read at start */
			st->restore = have_saved;
			return 0;
		}
		if (r == 0) {
			/*
			 * The driver took the call but stamps nothing (or does
			 * not stamp TX): whoever relied on the previous setting
			 * (a ptp4l) gets it back now, not at exit.
			 */
			ts_put_back(fd, st, have_saved);
			r = -EOPNOTSUPP;
		}
	}
	return r;
}

/*
 * Put the device's timestamping config back as we found it; 0 or -errno
 * (kept in ts.restore_err).  Async-signal-safe: one ioctl.
 */
static int ts_restore(int fd)
{
	struct ifreq ifr;

	if (!run.ts.restore || fd < 0) {
		return 0;
	}
	ifr = run.ts.saved_ifr;
	ifr.ifr_data = (void *)&run.ts.saved;
	run.ts.restore = false;
	run.ts.restore_err = kops.ioctl(fd, SIOCSHWTSTAMP, &ifr);
	return run.ts.restore_err;
}

/* ts_restore, and a line if it failed: the device is left as rant set it. */
static void ts_restore_say(int fd)
{
	if (ts_restore(fd) < 0) {
		warnx_("warning: putting back %s's timestamping config (tx type %d, rx filter %s) failed: %s; it stays as rant set it (hwstamp_ctl -i %s -t %d -r %d sets it)",
		       run.ts.saved_ifr.ifr_name, run.ts.saved.tx_type,
		       ts_filter_name(run.ts.saved.rx_filter), strerror(-run.ts.restore_err),
		       run.ts.saved_ifr.ifr_name, run.ts.saved.tx_type, run.ts.saved.rx_filter);
	}
}

/*
 * Who provides the device's hardware stamps (the MAC's PHC, or a PHY's), as
 * the ethtool netlink tsconfig interface reports it (Linux 6.15,
 * Documentation/networking/ethtool-netlink.rst, TSCONFIG_GET).  Read only:
 * SIOCSHWTSTAMP remains the way rant sets the config.  The numbers are the
 * kernel's ABI (ethtool_netlink_generated.h); older headers lack them.
 */
#define ETNL_MSG_TSCONFIG_GET		46
#define ETNL_A_TSCONFIG_HEADER		1
#define ETNL_A_TSCONFIG_PROVIDER	2
#define ETNL_A_PROVIDER_INDEX		1
#define ETNL_A_PROVIDER_QUALIFIER	2
#define ETNL_A_HEADER_DEV_NAME		2

/* Attributes [p, end): the first of TYPE, or NULL. */
static const struct nlattr *nla_find(const uint8_t *p, const uint8_t *end, int type)
{
	while (end - p >= (ptrdiff_t)NLA_HDRLEN) {
		const struct nlattr *a = (const void *)p;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > end - p) {
			return NULL;
		}
		if ((a->nla_type & NLA_TYPE_MASK) == type) {
			return a;
		}
		p += NLA_ALIGN(a->nla_len);
	}
	return NULL;
}

static bool nla_u32(const struct nlattr *a, uint32_t *v)
{
	if (!a || a->nla_len < NLA_HDRLEN + 4) {
		return false;
	}
	memcpy(v, (const uint8_t *)a + NLA_HDRLEN, 4);
	return true;
}

/* One netlink reply to TSCONFIG_GET: the provider, or -errno. */
static int tsconfig_parse(const uint8_t *buf, size_t len)
{
	const struct nlmsghdr *nh = (const void *)buf;
	const struct nlattr *prov;
	const uint8_t *a, *end;
	uint32_t idx;

	if (len < NLMSG_HDRLEN || nh->nlmsg_len < NLMSG_HDRLEN || nh->nlmsg_len > len) {
		return -EBADMSG;
	}
	if (nh->nlmsg_type == NLMSG_ERROR) {
		struct nlmsgerr e;

		if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(e))) {
			return -EBADMSG;
		}
		memcpy(&e, NLMSG_DATA(nh), sizeof(e));
		return e.error < 0 ? e.error : -ENODATA;
	}
	if (nh->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN)) {
		return -EBADMSG;
	}
	a = (const uint8_t *)NLMSG_DATA(nh) + GENL_HDRLEN;
	end = buf + nh->nlmsg_len;
	prov = nla_find(a, end, ETNL_A_TSCONFIG_PROVIDER);
	if (!prov) {
		return -ENODATA;
	}
	a = (const uint8_t *)prov + NLA_HDRLEN;
	end = (const uint8_t *)prov + prov->nla_len;
	if (!nla_u32(nla_find(a, end, ETNL_A_PROVIDER_INDEX), &idx)) {
		return -ENODATA;
	}
	run.ts_prov.phc_index = (int)idx;
	run.ts_prov.qualifier = 0;
	nla_u32(nla_find(a, end, ETNL_A_PROVIDER_QUALIFIER), &run.ts_prov.qualifier);
	run.ts_prov.known = true;
	return 0;
}

/* Append one attribute to a request; returns the new length. */
static size_t nla_put(uint8_t *buf, size_t len, int type, const void *data, size_t n)
{
	struct nlattr a = { .nla_len = (uint16_t)(NLA_HDRLEN + n), .nla_type = (uint16_t)type };

	memcpy(buf + len, &a, sizeof(a));
	if (data) {
		memcpy(buf + len + NLA_HDRLEN, data, n);
	}
	return len + NLA_ALIGN(NLA_HDRLEN + n);
}

/*
 * The qdiscs of ifindex (0: every device's), from an RTM_GETQDISC dump
 * (rtnetlink(7)): each RTM_NEWQDISC message's payload (struct tcmsg and its
 * attributes) to each(); 0 or -errno.  A 2 s receive timeout: nothing hangs.
 */
static int qdisc_dump(int ifindex, void (*each)(const uint8_t *p, size_t len, void *arg), void *arg)
{
	struct {
		struct nlmsghdr h;
		struct tcmsg t;
	} req = { .h = { .nlmsg_len = sizeof(req), .nlmsg_type = RTM_GETQDISC,
			 .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP, .nlmsg_seq = 1 },
		  .t = { .tcm_family = AF_UNSPEC, .tcm_ifindex = ifindex } };
	static uint8_t buf[65536] __attribute__((aligned(8)));
	struct timeval tv = { 2, 0 };
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE), r = 0;
	bool done = false;

	if (fd < 0) {
		return -errno;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (send(fd, &req, sizeof(req), 0) < 0) {
		r = -errno;
	}
	while (!r && !done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)(void *)buf;
		size_t left = n > 0 ? (size_t)n : 0;

		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			break;
		}
		for (; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_type == NLMSG_DONE) {
				done = true;
				break;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr e;

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(e))) {
					r = -EBADMSG;
					break;
				}
				memcpy(&e, NLMSG_DATA(h), sizeof(e));
				r = e.error ? e.error : -EIO;
				break;
			}
			if (h->nlmsg_type == RTM_NEWQDISC) {
				each(NLMSG_DATA(h), h->nlmsg_len - NLMSG_LENGTH(0), arg);
			}
		}
	}
	close(fd);
	return r;
}

/* A generic netlink request and its one reply into rx; reply length or -errno. */
static ssize_t genl_call(int fd, uint16_t family, uint8_t cmd, const uint8_t *attrs, size_t alen,
			 uint8_t *rx, size_t rxlen)
{
	uint8_t tx[256] __attribute__((aligned(4)));
	struct nlmsghdr nh = { .nlmsg_len = (uint32_t)(NLMSG_LENGTH(GENL_HDRLEN) + alen),
			       .nlmsg_type = family,
			       .nlmsg_flags = NLM_F_REQUEST,
			       .nlmsg_seq = 1 };
	struct genlmsghdr gh = { .cmd = cmd, .version = 1 };
	ssize_t n;

	if (nh.nlmsg_len > sizeof(tx)) {
		return -E2BIG;
	}
	memcpy(tx, &nh, sizeof(nh));
	memcpy(tx + NLMSG_HDRLEN, &gh, sizeof(gh));
	memcpy(tx + NLMSG_HDRLEN + GENL_HDRLEN, attrs, alen);
	if (send(fd, tx, nh.nlmsg_len, 0) < 0) {
		return -errno;
	}
	n = recv(fd, rx, rxlen, 0);
	return n < 0 ? -errno : n;
}

/* Ask the kernel who provides IFNAME's hardware stamps; fills ts_prov. */
static void ts_provider_get(const char *ifname)
{
	uint8_t attrs[128] __attribute__((aligned(4))), rx[4096] __attribute__((aligned(4)));
	struct timeval tv = { 1, 0 };
	const struct nlattr *id;
	uint16_t family;
	uint32_t fam32;
	size_t alen, hlen;
	ssize_t n;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);

	memset(&run.ts_prov, 0, sizeof(run.ts_prov));
	if (fd < 0) {
		run.ts_prov.err = -errno;
		return;
	}
	/* never hang on a silent kernel */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	alen = nla_put(attrs, 0, CTRL_ATTR_FAMILY_NAME, "ethtool", 8);
	n = genl_call(fd, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, attrs, alen, rx, sizeof(rx));
	id = n >= (ssize_t)NLMSG_LENGTH(GENL_HDRLEN) &&
			     ((struct nlmsghdr *)rx)->nlmsg_type != NLMSG_ERROR ?
		     nla_find(rx + NLMSG_HDRLEN + GENL_HDRLEN, rx + n, CTRL_ATTR_FAMILY_ID) :
		     NULL;
	if (!id || id->nla_len < NLA_HDRLEN + 2) {
		run.ts_prov.err = n < 0 ? (int)n : -ENOENT;
		close(fd);
		return;
	}
	memcpy(&family, (const uint8_t *)id + NLA_HDRLEN, 2);
	fam32 = family;
	/* header nest with the device name */
	hlen = nla_put(attrs + NLA_HDRLEN, 0, ETNL_A_HEADER_DEV_NAME, ifname, strlen(ifname) + 1);
	nla_put(attrs, 0, ETNL_A_TSCONFIG_HEADER | NLA_F_NESTED, NULL, hlen);
	alen = NLA_HDRLEN + hlen;
	n = genl_call(fd, (uint16_t)fam32, ETNL_MSG_TSCONFIG_GET, attrs, alen, rx, sizeof(rx));
	run.ts_prov.err = n < 0 ? (int)n : tsconfig_parse(rx, (size_t)n);
	close(fd);
}

/*
 * The NIC whose stamps -i's packets carry.  SCM_TIMESTAMPING_PKTINFO names
 * "the real interface which received the packet" (timestamping.rst,
 * OPT_PKTINFO): the device of the NAPI instance, 0 when the kernel cannot
 * tell (no CONFIG_NET_RX_BUSY_POLL, a driver without NAPI).  Under a VLAN or
 * macvlan that is the lower device, under a bond its active slave (whose PHC
 * the bond reports too): followed down through sysfs, where an upper device
 * has a lower_NAME link to its lower device in the same namespace and a bond
 * names its active slave.  0: cannot tell (a lower device in another
 * namespace, no active slave), and then no stamp is refused for its device.
 */
static int sysfs_read(const char *dev, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s/%s", kops.sysfs_net, dev, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, len - 1);
	if (fd >= 0) {
		close(fd);
	}
	if (n <= 0) {
		return -1;
	}
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/* DEV's one lower_NAME link in sysfs, into lower; false if none or several. */
static bool sysfs_lower(const char *dev, char *lower, size_t len)
{
	char path[PATH_MAX];
	struct dirent *e;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", kops.sysfs_net, dev);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		if (!strncmp(e->d_name, "lower_", 6) && strlen(e->d_name + 6) < len) {
			snprintf(lower, len, "%s", e->d_name + 6);
			n++;
		}
	}
	if (d) {
		closedir(d);
	}
	return n == 1;
}

static int ts_real_nic(const char *ifname, char *nic, size_t len)
{
	char name[IFNAMSIZ], buf[64];
	int depth, idx, link;

	snprintf(name, sizeof(name), "%s", ifname);
	for (depth = 0; depth < 8; depth++) {
		if (sysfs_read(name, "ifindex", buf, sizeof(buf)) < 0 || (idx = atoi(buf)) <= 0) {
			return 0;
		}
		if (!depth && if_nametoindex(name) && (int)if_nametoindex(name) != idx) {
			return 0;	/* this /sys is another network namespace's */
		}
		if (sysfs_read(name, "bonding/active_slave", buf, sizeof(buf)) == 0) {
			if (!*buf || strlen(buf) >= sizeof(name)) {
				return 0;	/* no active slave now */
			}
			snprintf(name, sizeof(name), "%.*s", (int)sizeof(name) - 1, buf);
			continue;
		}
		link = sysfs_read(name, "iflink", buf, sizeof(buf)) == 0 ? atoi(buf) : idx;
		if (link == idx || link <= 0) {
			snprintf(nic, len, "%s", name);
			return idx;	/* a device of its own */
		}
		if (!sysfs_lower(name, name, sizeof(name))) {
			return 0;
		}
	}
	return 0;
}

/*
 * What --ptp-probe does for an RX filter that stamps only some PTP event
 * messages: rant's probes are PTPv2 over UDP, pings Syncs and pongs
 * Delay_Reqs.  1: both ends' receives are stamped with it; 2: only the
 * reflector's (it receives the Syncs); 3: only the client's; 0: no help (a
 * PTPv1 or layer-2 filter, SOME).
 */
static int ptp_probe_helps(int filter)
{
	switch (filter) {
	case HWTSTAMP_FILTER_PTP_V2_L4_EVENT:
	case HWTSTAMP_FILTER_PTP_V2_EVENT:
		return 1;
	case HWTSTAMP_FILTER_PTP_V2_L4_SYNC:
	case HWTSTAMP_FILTER_PTP_V2_SYNC:
		return 2;
	case HWTSTAMP_FILTER_PTP_V2_L4_DELAY_REQ:
	case HWTSTAMP_FILTER_PTP_V2_DELAY_REQ:
		return 3;
	default:
		return 0;
	}
}

/* The start-up warning for a filter other than ALL: what is stamped, and what helps. */
static void ts_filter_warn(const char *ifname, int filter)
{
	static const char *const help[] = {
		"--ptp-probe cannot help: rant's probes are PTPv2 over UDP",
		"run both ends with --ptp-probe",
		"with --ptp-probe only the reflector's receives (pings are Syncs) are stamped",
		"with --ptp-probe only the client's receives (pongs are Delay_Reqs) are stamped",
	};

	warnx_("warning: %s accepted only rx filter %s: the NIC stamps received PTP event messages, not rant's pings; RX hardware stamps will be missing (and counted): %s",
	       ifname, ts_filter_name(filter), help[ptp_probe_helps(filter)]);
}

/*
 * A ptp4l on the same NIC: drivers that stamp one TX packet at a time
 * (igb, ixgbe, i40e) give that stamp to whichever send asks first, so
 * rant's T1/T3 and ptp4l's TX stamps ("timed out while polling for tx
 * timestamp") go missing at times.  Found in /proc: a process named ptp4l
 * with -i NIC among its arguments, or a [NIC] section in its -f file.
 */
static bool ptp4l_cfg_has(const char *path, const char *nic)
{
	char line[256], want[IFNAMSIZ + 3];
	bool found = false;
	FILE *f = fopen(path, "r");

	snprintf(want, sizeof(want), "[%s]", nic);
	while (f && !found && fgets(line, sizeof(line), f)) {
		found = !strncmp(line, want, strlen(want));
	}
	if (f) {
		fclose(f);
	}
	return found;
}

static bool ptp4l_on(const char *pid, const char *nic)
{
	char path[PATH_MAX], args[4096];
	size_t i, n;
	const char *prev = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/cmdline", kops.proc_root, pid);
	f = fopen(path, "r");
	n = f ? fread(args, 1, sizeof(args) - 1, f) : 0;
	if (f) {
		fclose(f);
	}
	args[n] = 0;
	for (i = 0; i < n; i += strlen(args + i) + 1) {
		const char *a = args + i;

		if ((!strcmp(prev, "-i") && !strcmp(a, nic)) ||
		    (!strcmp(prev, "-f") && ptp4l_cfg_has(a, nic))) {
			return true;
		}
		prev = a;
	}
	return false;
}

static int ptp4l_find(const char *nic)
{
	char path[PATH_MAX], comm[32];
	struct dirent *e;
	DIR *d = opendir(kops.proc_root);
	int pid = 0;

	while (d && !pid && (e = readdir(d))) {
		FILE *f;

		if (!isdigit((unsigned char)e->d_name[0])) {
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s/comm", kops.proc_root, e->d_name);
		f = fopen(path, "r");
		if (f && fgets(comm, sizeof(comm), f) && !strcmp(comm, "ptp4l\n") &&
		    ptp4l_on(e->d_name, nic)) {
			pid = atoi(e->d_name);
		}
		if (f) {
			fclose(f);
		}
	}
	if (d) {
		closedir(d);
	}
	return pid;
}

/*
 * Decide the wire stamp source for --timestamps MODE on IFACE (NULL: no -i).
 * Fills ts and returns 0, or prints one line and returns -1 (a configuration
 * error: exit 2).
 */
static int ts_setup(int fd, const char *ifname, enum ts_mode mode)
{
	struct ts_caps caps = { 0, -1, 0, 0 };
	int r;

	run.ts.hw = false;
	run.ts.phc_index = -1;
	run.ts.rx_filter = -1;
	if (mode == TS_SW) {
		snprintf(run.ts.note, sizeof(run.ts.note), "software (kernel), as %s",
			 cli_no_tx() ? "--client-no-tx-ts needs" :
			 "--timestamps sw asked");
		return 0;
	}
	if (!ifname) {
		if (mode == TS_HW) {
			warnx_("--timestamps: 'hw' needs -i IFACE (the NIC whose clock stamps the packets)");
			return -1;
		}
		snprintf(run.ts.note, sizeof(run.ts.note), "software (kernel): no -i, so no NIC to ask");
		return 0;
	}
	r = ts_get_caps(fd, ifname, &caps);
	if (r < 0 || !ts_caps_hw(&caps)) {
		if (mode == TS_HW) {
			warnx_("--timestamps: %s cannot timestamp in hardware (ETHTOOL_GET_TS_INFO: %s); use --timestamps sw or auto",
			       ifname, r < 0 ? strerror(-r) : "no TX/RX/RAW hardware stamps or no PHC");
			return -1;
		}
		snprintf(run.ts.note, sizeof(run.ts.note), "software (kernel): %s has no hardware timestamping%s%s",
			 ifname, r < 0 ? ": " : "", r < 0 ? strerror(-r) : "");
		return 0;
	}
	r = ts_hw_enable(fd, ifname, &caps, &run.ts);
	if (r < 0) {
		if (mode == TS_HW) {
			warnx_("--timestamps: SIOCSHWTSTAMP on %s failed: %s%s", ifname, strerror(-r),
			       r == -EPERM ? " (needs CAP_NET_ADMIN: run as root)" : "");
			return -1;
		}
		snprintf(run.ts.note, sizeof(run.ts.note), "software (kernel): %s refused hardware stamping: %s",
			 ifname, strerror(-r));
		return 0;
	}
	run.ts.hw = true;
	run.ts.phc_index = caps.phc_index;
	if (kops.ioctl == kops_sys.ioctl) {
		ts_provider_get(ifname);	/* read only, for the report */
	}
	if (run.ts.unknown_before) {
		warnx_("warning: %s cannot report its timestamping config (SIOCGHWTSTAMP unsupported): rant leaves it as it set it (tx on, rx filter %s) at exit",
		       ifname, ts_filter_name(run.ts.rx_filter));
	}
	snprintf(run.ts.note, sizeof(run.ts.note), "hardware (NIC %s, PHC /dev/ptp%d, rx filter %s)",
		 ifname, caps.phc_index, ts_filter_name(run.ts.rx_filter));
	if (run.ts.tx_type != HWTSTAMP_TX_ON) {
		size_t n = strlen(run.ts.note);

		snprintf(run.ts.note + n, sizeof(run.ts.note) - n, ", one-step tx type %d kept",
			 run.ts.tx_type);
		if (cfg->ptp_probe && cfg->mode == MODE_EMIT) {
			warnx_("warning: %s's tx type is one-step (a ptp4l set it; rant keeps it): the NIC writes the stamp of a Sync into the packet, not the error queue, and --ptp-probe's pings are Syncs: their T1 stamps will be missing",
			       ifname);
		}
	}
	if (run.ts.rx_filter != HWTSTAMP_FILTER_ALL) {
		ts_filter_warn(ifname, run.ts.rx_filter);
	}
	return 0;
}

/*
 * SO_TIMESTAMPING flags: OPT_ID numbers TX stamps so they can be matched to
 * their packet; OPT_TSONLY returns only the stamp, not the packet, which also
 * works for unprivileged sockets (timestamping.rst, "1.3.1 Timestamp Options").
 */
static int ts_sockopt_flags(bool hw)
{
	int f = SOF_TIMESTAMPING_OPT_ID | SOF_TIMESTAMPING_OPT_TSONLY;

	if (hw) {
		f |= SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RX_HARDWARE |
		     SOF_TIMESTAMPING_RAW_HARDWARE | SOF_TIMESTAMPING_OPT_PKTINFO;
		/*
		 * The kernel's stamps of the same packets too: ts[0] next to
		 * ts[2] on receive, and with OPT_TX_SWHW a second error-queue
		 * message per send carrying the software stamp alone
		 * (timestamping.rst, 1.3.3).  They split the stack segments
		 * into driver/NIC time and kernel/wake-up time.
		 */
		f |= SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE |
		     SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_OPT_TX_SWHW;
	} else {
		f |= SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE |
		     SOF_TIMESTAMPING_SOFTWARE;
	}
	return f;
}

/*
 * SO_TIMESTAMPING with flags F.  Where time_t has 32 bits the option's old
 * form hands stamps over as that struct timespec, which ends in 2038:
 * SO_TIMESTAMPING_NEW (Linux 5.1) hands them over with 64-bit seconds
 * (struct scm_timestamping64, ts_parse) whatever the build's time_t.  A
 * kernel without it (ENOPROTOOPT) gets the old form.
 */
static int ts_sockopt(int fd, int f)
{
	if (sizeof(time_t) < 8 &&
	    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING_NEW, &f, sizeof(f)) == 0) {
		return 0;
	}
	return setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPING, &f, sizeof(f)) < 0 ? -errno : 0;
}

/* The SO_TIMESTAMPING flags of this run's sockets. */
static int ts_socket_flags(void)
{
	int f = ts_sockopt_flags(run.ts.hw);

	if (resp_tx_app() || cli_no_tx()) {
		/* -N, --client-no-tx-ts: this side's TX stamps never asked for, so never read */
		f &= ~(SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_TX_SOFTWARE);
	}
	return f;
}

/*
 * --client-no-tx-ts: the client's one stamp, T4, is the kernel's software
 * RX stamp, and it need not come with the datagram.  SIOCGSTAMPNS
 * (socket(7)) gives the stamp of the last datagram the socket read: the
 * same skb->tstamp that SO_TIMESTAMPING's software RX stamp reports, taken
 * as the driver hands the packet to the stack (timestamping.rst, "Network
 * timestamps"), written to the socket as it is read, once the first
 * SIOCGSTAMPNS has turned SOCK_TIMESTAMP on (net/core/sock.c).  The pong is
 * then read with recvfrom(2), which costs less than recvmsg(2) with its
 * control data (sys_recvmsg), and its stamp read after the next ping left
 * (emit_recv): both inside the turnaround no longer.  The first
 * SIOCGSTAMPNS is made here, before any datagram: it answers ENOENT.  Not
 * with SO_TIMESTAMPING's RX flags on the socket, which take the datagram's
 * stamp to its control message instead; nor with SO_RXQ_OVFL, whose count
 * comes from SO_MEMINFO at the end (emit_drops_meminfo).
 */
static bool ts_rx_ioctl_on(int fd)
{
	struct timespec ts;
	int r;

	if (!cli_no_tx()) {
		return false;
	}
	r = kops.ioctl(fd, SIOCGSTAMPNS, &ts);
	return r == 0 || r == -ENOENT;
}

static int ts_enable_socket(int fd)
{
	int r;

	if (run.side.emit && ts_rx_ioctl_on(fd)) {
		emitter.rx_ioctl = true;
		run.ts.next_key = 0;
		return 0;
	}
	if (run.side.emit && emitter.rx_ioctl) {
		/*
		 * a class's socket refusing what the first took: the loop reads every
		 * class's pongs alike, so this class's come without T4, and said so
		 */
		warnx_("warning: --client-no-tx-ts: SIOCGSTAMPNS refused on class %d's socket, taken on the first: that class's pongs come without T4 (counted missing)",
		       classes.opening);
		run.ts.next_key = 0;
		return 0;
	}
	r = ts_sockopt(fd, ts_socket_flags());

	if (r < 0) {
		return r;
	}
	run.ts.next_key = 0;
	return 0;
}

/*
 * The kernel stamps received packets in software only while some socket
 * asks for it, and it turns that on for the first one from a work queue:
 * net_enable_timestamp() (net/core/dev.c) leaves enabling its static key to
 * netstamp_work, queued on the asking CPU.  Until that has run, datagrams
 * arrive unstamped, so on a host where nothing else asks for stamps the
 * first pongs of a run lacked T4 (the first pings T2), and a run under
 * chrt -f that never sleeps (--spin) on an isolated CPU would keep the
 * work from ever running there.  Before the first packet rant therefore
 * sleeps until a datagram of its own over loopback comes back stamped,
 * 200 ms at most; where loopback is down (a fresh network namespace) one
 * short sleep lets the work run.
 */
static void ts_rx_live(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timespec ms = { .tv_nsec = 1000000 };
	socklen_t len = sizeof(sa);
	uint64_t end = mono_ns() + NSEC_PER_SEC / 5;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int f = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
	char c = 0;

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0 || ts_sockopt(fd, f) < 0) {
		nanosleep(&ms, NULL);
		if (fd >= 0) {
			close(fd);
		}
		return;
	}
	while (mono_ns() < end) {
		union {
			char b[CMSG_SPACE(sizeof(struct scm_timestamping64))];
			struct cmsghdr align;
		} ctl;
		struct iovec iov = { .iov_base = &c, .iov_len = 1 };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
				     .msg_controllen = sizeof(ctl.b) };
		struct cmsghdr *cm;
		bool stamped = false;

		if (sendto(fd, &c, 1, 0, (struct sockaddr *)&sa, sizeof(sa)) != 1) {
			nanosleep(&ms, NULL);
			break;
		}
		/* loopback delivers within the send, or soon after: read what came */
		while (recvmsg(fd, &mh, 0) == 1) {
			for (cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
				stamped |= cm->cmsg_level == SOL_SOCKET &&
					   (cm->cmsg_type == SO_TIMESTAMPING ||
					    cm->cmsg_type == SO_TIMESTAMPING_NEW);
			}
			mh.msg_controllen = sizeof(ctl.b);
		}
		if (stamped) {
			break;
		}
		nanosleep(&ms, NULL);
	}
	close(fd);
}

/*
 * After a failed send the socket's OPT_ID counter may or may not have moved:
 * the kernel takes the key when it builds the datagram (__ip_append_data),
 * and gives it back (since 6.8) only when building it fails.  A send that
 * fails after that, a datagram dropped by netfilter (EPERM) for one, has
 * used its key up on every kernel; counting on the key coming back lost
 * every later T1 stamp of a run (tests/net-hw.sh, sends refused by nft).
 * Re-enabling the option resets the counter to zero (timestamping.rst: "It
 * is reset each time the option is enabled after having been disabled"),
 * so after any failed send the keys start again at 0.  A stamp still in
 * flight under its old key is still taken for its own packet (its slot
 * holds the whole key) or, once new keys have reused its slot, counted
 * unmatched: never for another packet.  Sends that carry their key
 * (SCM_TS_OPT_ID) need none of this.
 */
static void ts_rekey_now(int fd)
{
	ts_sockopt(fd, 0);
	if (refl.ss_on && fd == refl.ss_fd) {
		/* a reflector session's own socket: its counter from 0 again, the keys go on */
		ts_sockopt(fd, ts_socket_flags());
		refl.ss_base = run.ts.next_key;
		return;
	}
	ts_enable_socket(fd);
	/*
	 * The reflector's session takes the stamps from its first key on
	 * (reflect_on_tx): the keys start again at 0, and so does the session,
	 * or every later T3 of it would be taken for an earlier session's.
	 */
	refl.key0 = run.ts.next_key;
}

static void ts_rekey(int fd)
{
	if (run.ts.key_cmsg) {
		return;
	}
	ts_rekey_now(fd);
}

#ifndef SCM_TS_OPT_ID
#define SCM_TS_OPT_ID	81	/* asm-generic/socket.h, Linux 6.13 */
#endif

/*
 * How this kernel keys TX stamps.  Linux 6.13 takes the key of each send from
 * an SCM_TS_OPT_ID control message (timestamping.rst, "OPT_ID ... can be
 * overridden per send"): the key is then exactly ours and a failed send
 * cannot shift it.  Elsewhere the socket's counter numbers sends, and a
 * send that fails may have used up its key (ts_rekey_now).
 *
 * The client keeps the counter, which is as exact from 6.8 on: its socket is
 * connected, and udp_sendmsg() sends through the connected socket's cached
 * route only when a send carries no control message (any cmsg makes it look
 * the route up again).  Measured on a 2-CPU VM: +0.3-0.4 us per send,
 * in every app RTT.  The reflector's sends name their destination: there is
 * no cached route to lose, and its key costs ~0.04 us (tests/bench.d/kcost.c).
 */
static void ts_keys_setup(void)
{
	unsigned k = kops.kernel();

	run.ts.key_cmsg = k >= 6013 && cfg->mode == MODE_REFLECT;
}

/*
 * Every datagram leaves through here, so that its TX stamp carries the key
 * rant expects (ts.next_key; the caller advances it on success).  A kernel
 * that refuses the control message (EINVAL: older than its uname says, or a
 * backport without it) falls back to the counter for the rest of the run.
 */

/* Control data of a send: the source address if any, the OPT_ID key if asked. */
static size_t ts_send_ctrl(char *ctrl, bool key)
{
	struct cmsghdr *cm = (struct cmsghdr *)(void *)ctrl;
	size_t n = 0;

	if (run.tx_src.len) {
		cm->cmsg_level = run.tx_src.level;
		cm->cmsg_type = run.tx_src.type;
		cm->cmsg_len = CMSG_LEN(run.tx_src.len);
		memcpy(CMSG_DATA(cm), run.tx_src.data, run.tx_src.len);
		n = CMSG_SPACE(run.tx_src.len);
		cm = (struct cmsghdr *)(void *)(ctrl + n);
	}
	if (key) {
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_TS_OPT_ID;
		cm->cmsg_len = CMSG_LEN(sizeof(uint32_t));
		memcpy(CMSG_DATA(cm), &run.ts.next_key, sizeof(uint32_t));
		n += CMSG_SPACE(sizeof(uint32_t));
	}
	return n;
}

/* What one received message's control data carried. */
struct ts_cmsg {
	uint64_t sw, hw;		/* scm_timestamping ts[0] and ts[2] */
	bool have_ts, have_err;
	bool have_pktinfo;		/* SCM_TIMESTAMPING_PKTINFO: which device stamped it */
	uint32_t ifindex;
	uint32_t ee_errno, ee_origin, ee_info, ee_data;
	uint8_t ee_code;		/* SO_EE_ORIGIN_TXTIME: why the launch time was not kept */
	unsigned bad;			/* control messages too short to read */
};

/* A struct __kernel_timespec (64-bit seconds) in ns, 0 for none (as ts_to_ns). */
static uint64_t kts_to_ns(const struct __kernel_timespec *t)
{
	if (t->tv_sec < 0 || t->tv_nsec < 0 || (t->tv_sec == 0 && t->tv_nsec == 0)) {
		return 0;
	}
	return (uint64_t)t->tv_sec * NSEC_PER_SEC + (uint64_t)t->tv_nsec;
}

/*
 * Parse control messages; every cmsg_len is checked before reading.  A
 * message that is no stamp, error or stamp pktinfo goes to other (the side's
 * own: the address pinged, the TOS, the drop count), if given, after the
 * same check: one walk over the control data per datagram.
 */
static void ts_parse_cb(struct msghdr *msg, struct ts_cmsg *out,
			void (*other)(const struct cmsghdr *cm))
{
	struct cmsghdr *cm = CMSG_FIRSTHDR(msg);

	memset(out, 0, sizeof(*out));
	/*
	 * The datagram of a session's socket and of a client: one SO_TIMESTAMPING
	 * message, whole, and nothing after it.  Read as the walk below reads it,
	 * without the walk: it is inside the measured windows.
	 */
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_TIMESTAMPING &&
	    cm->cmsg_len == CMSG_LEN(sizeof(struct scm_timestamping)) &&
	    msg->msg_controllen == CMSG_SPACE(sizeof(struct scm_timestamping))) {
		struct scm_timestamping st;

		memcpy(&st, CMSG_DATA(cm), sizeof(st));
		out->sw = ts_to_ns(&st.ts[0]);
		out->hw = ts_to_ns(&st.ts[2]);
		out->have_ts = true;
		return;
	}
	for (; cm; cm = CMSG_NXTHDR(msg, cm)) {
		size_t left = msg->msg_controllen - (size_t)((char *)cm - (char *)msg->msg_control);
		bool tsmsg = cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_TIMESTAMPING;
		/* 64-bit seconds whatever this build's time_t (see ts_sockopt) */
		bool ts64 = cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_TIMESTAMPING_NEW &&
			    SO_TIMESTAMPING != SO_TIMESTAMPING_NEW;
		bool errmsg = (cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
			      (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR);

		/*
		 * a length that runs past the buffer ends the walk: nothing after it can be trusted
		 */
		if (cm->cmsg_len < sizeof(*cm) || cm->cmsg_len > left) {
			out->bad++;
			break;
		}
		if (tsmsg) {
			struct scm_timestamping st;

			if (cm->cmsg_len < CMSG_LEN(sizeof(st))) {
				out->bad++;
				continue;
			}
			memcpy(&st, CMSG_DATA(cm), sizeof(st));
			out->sw = ts_to_ns(&st.ts[0]);
			out->hw = ts_to_ns(&st.ts[2]);
			out->have_ts = true;
		} else if (ts64) {
			struct scm_timestamping64 st;

			if (cm->cmsg_len < CMSG_LEN(sizeof(st))) {
				out->bad++;
				continue;
			}
			memcpy(&st, CMSG_DATA(cm), sizeof(st));
			out->sw = kts_to_ns(&st.ts[0]);
			out->hw = kts_to_ns(&st.ts[2]);
			out->have_ts = true;
		} else if (cm->cmsg_level == SOL_SOCKET &&
			   cm->cmsg_type == SCM_TIMESTAMPING_PKTINFO) {
			struct scm_ts_pktinfo pi;

			if (cm->cmsg_len < CMSG_LEN(sizeof(pi))) {
				out->bad++;
				continue;
			}
			memcpy(&pi, CMSG_DATA(cm), sizeof(pi));
			out->have_pktinfo = true;
			out->ifindex = pi.if_index;
		} else if (errmsg) {
			struct sock_extended_err ee;

			if (cm->cmsg_len < CMSG_LEN(sizeof(ee))) {
				out->bad++;
				continue;
			}
			memcpy(&ee, CMSG_DATA(cm), sizeof(ee));
			out->have_err = true;
			out->ee_errno = ee.ee_errno;
			out->ee_origin = ee.ee_origin;
			out->ee_code = ee.ee_code;
			out->ee_info = ee.ee_info;
			out->ee_data = ee.ee_data;
		} else if (other) {
			other(cm);
		}
	}
}

static void ts_parse(struct msghdr *msg, struct ts_cmsg *out)
{
	ts_parse_cb(msg, out, NULL);
}

/*
 * The wire stamp of the source in use; never the other clock's.  A hardware
 * stamp is only of use from -i's NIC: with OPT_PKTINFO the kernel names the
 * device that received the packet (timestamping.rst), and a packet that came
 * in through another one (a bond's other leg, a route change) carries a
 * stamp of another PHC.  It is counted and treated as missing.
 */
static uint64_t ts_wire(const struct ts_cmsg *c)
{
	if (run.ts.hw && c->hw && c->have_pktinfo && run.ts.ifindex && c->ifindex &&
	    c->ifindex != (uint32_t)run.ts.ifindex) {
		run.ts_foreign++;
		return 0;
	}
	return run.ts.hw ? c->hw : c->sw;
}

/* A TX completion stamp from the error queue: key and wire time, or false. */
static bool ts_tx_stamp(const struct ts_cmsg *c, uint32_t *key, uint64_t *wire)
{
	if (!c->have_ts || !c->have_err || c->ee_errno != ENOMSG ||
	    c->ee_origin != SO_EE_ORIGIN_TIMESTAMPING || c->ee_info != SCM_TSTAMP_SND) {
		return false;
	}
	if (run.ts.hw && !c->hw) {
		return false;	/* OPT_TX_SWHW's software stamp: see ts_tx_kernel() */
	}
	if (!run.ts.hw && !c->sw) {
		return false;	/* a NIC's stamp after the fall-back to kernel stamps */
	}
	*key = c->ee_data;
	*wire = ts_wire(c);
	return true;
}

/* With hardware stamps, the kernel's own TX stamp of the same send. */
static bool ts_tx_kernel(const struct ts_cmsg *c, uint32_t *key, uint64_t *k)
{
	if (!run.ts.hw || !c->have_ts || c->hw || !c->sw || !c->have_err || c->ee_errno != ENOMSG ||
	    c->ee_origin != SO_EE_ORIGIN_TIMESTAMPING || c->ee_info != SCM_TSTAMP_SND) {
		return false;
	}
	*key = c->ee_data;
	*k = c->sw;
	return true;
}

/*
 * Read TX stamps from the error queue without blocking until `want` stamps
 * came or the queue is empty, handing each to fn.  Stopping at `want` saves
 * the extra recvmsg that would only return EAGAIN.  Kernel stamps of sends
 * the NIC stamps too go to kfn.  Returns how many wire stamps it read.
 */
#define TS_BATCH	16

/*
 * --txtime: a launch time the qdisc did not keep, from the error queue
 * (SO_EE_ORIGIN_TXTIME): kept for its ping's class to count
 * (tsn_reports, once the classes are known).
 */
static void ts_txtime_report(const struct ts_cmsg *c)
{
	struct tsn *t = &tsn;

	if (t->nrep < TSN_REP_MAX) {
		t->rep[t->nrep].launch = (uint64_t)c->ee_data << 32 | c->ee_info;
		t->rep[t->nrep].missed = c->ee_code == SO_EE_CODE_TXTIME_MISSED;
		t->nrep++;
	} else {
		t->missed += c->ee_code == SO_EE_CODE_TXTIME_MISSED;
		t->invalid += c->ee_code != SO_EE_CODE_TXTIME_MISSED;
		t->unmatched++;
	}
}

static int ts_drain(int fd, void (*fn)(uint32_t key, uint64_t wire),
		    void (*kfn)(uint32_t key, uint64_t k), int want)
{
	char ctrl[TS_BATCH][256] __attribute__((aligned(8)));
	char data[TS_BATCH][64];
	struct iovec iov[TS_BATCH];
	struct mmsghdr mm[TS_BATCH];
	int got = 0, calls = 0;

	/* recvmmsg: one system call for a whole batch of TX stamps */
	while (got < want && calls++ < want / TS_BATCH + 2) {
		int i, n, vlen = want - got < TS_BATCH ? want - got : TS_BATCH;

		for (i = 0; i < vlen; i++) {
			iov[i] = (struct iovec){ data[i], sizeof(data[i]) };
			memset(&mm[i], 0, sizeof(mm[i]));
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
			mm[i].msg_hdr.msg_control = ctrl[i];
			mm[i].msg_hdr.msg_controllen = sizeof(ctrl[i]);
		}
		n = sys_recvmmsg(fd, mm, (unsigned)vlen, MSG_ERRQUEUE | MSG_DONTWAIT);
		for (i = 0; i < n; i++) {
			struct ts_cmsg c;
			uint32_t key;
			uint64_t wire;

			ts_parse(&mm[i].msg_hdr, &c);
			if (ts_tx_stamp(&c, &key, &wire)) {
				run.hww.tx_hw += run.ts.hw && wire;
				fn(key, wire);
				got++;
			} else if (ts_tx_kernel(&c, &key, &wire)) {
				kfn(key, wire);
			} else if (c.have_err && c.ee_origin == SO_EE_ORIGIN_TXTIME) {
				ts_txtime_report(&c);	/* a launch time not kept: dropped */
			}
		}
		if (n < vlen) {
			break;
		}
	}
	return got;
}

/*
 * The NIC's clock (PHC) against CLOCK_REALTIME.  Hardware stamps are PHC
 * time and app stamps are CLOCK_REALTIME: every app-vs-wire segment carries
 * their offset.  Measured, not guessed, with the best ioctl the driver has
 * (Documentation/ptp/ptp.rst, linux/ptp_clock.h): PTP_SYS_OFFSET_PRECISE
 * (cross-timestamped by the hardware), else PTP_SYS_OFFSET_EXTENDED (system
 * time read right around the PHC read, in the driver), else PTP_SYS_OFFSET
 * (the same from the PTP core, wider window).  At start, once a second from
 * the status thread (a PHC read can take microseconds: never in the loop),
 * and at the end.
 */
static const char *const phc_method_name[] = { "none", "PTP_SYS_OFFSET_PRECISE", "PTP_SYS_OFFSET_EXTENDED", "PTP_SYS_OFFSET" };
#define PHC_SAMPLES	9

static int64_t pct_ns(const struct ptp_clock_time *t)
{
	return (int64_t)t->sec * (int64_t)NSEC_PER_SEC + t->nsec;
}

/*
 * One reading with METHOD: PHC - CLOCK_REALTIME in *off, the CLOCK_REALTIME
 * it was taken at in *at; 0 or -errno.
 */
static int phc_read(enum phc_method method, int64_t *off, int64_t *window, int64_t *at)
{
	int64_t best = INT64_MAX;
	unsigned i;
	int r;

	if (method == PHC_PRECISE) {
		struct ptp_sys_offset_precise p;

		memset(&p, 0, sizeof(p));
		r = kops.phc_ioctl(run.phc.fd, PTP_SYS_OFFSET_PRECISE, &p);
		if (r == 0) {
			*off = pct_ns(&p.device) - pct_ns(&p.sys_realtime);
			*at = pct_ns(&p.sys_realtime);
			*window = 0;
		}
		return r;
	}
	if (method == PHC_EXTENDED) {
		struct ptp_sys_offset_extended e;

		memset(&e, 0, sizeof(e));
		e.n_samples = PHC_SAMPLES;
		r = kops.phc_ioctl(run.phc.fd, PTP_SYS_OFFSET_EXTENDED, &e);
		/* the narrowest [system, phc, system] window is the least disturbed */
		for (i = 0; r == 0 && i < e.n_samples && i < PTP_MAX_SAMPLES; i++) {
			int64_t a = pct_ns(&e.ts[i][0]), b = pct_ns(&e.ts[i][2]), w = b - a;

			if (w >= 0 && w < best) {
				best = w;
				*at = a + w / 2;
				*off = pct_ns(&e.ts[i][1]) - *at;
			}
		}
	} else {
		struct ptp_sys_offset o;

		memset(&o, 0, sizeof(o));
		o.n_samples = PHC_SAMPLES;
		r = kops.phc_ioctl(run.phc.fd, PTP_SYS_OFFSET, &o);
		/* ts[] = sys, phc, sys, phc, ..., sys */
		for (i = 0; r == 0 && i < o.n_samples && i < PTP_MAX_SAMPLES; i++) {
			int64_t a = pct_ns(&o.ts[2 * i]), b = pct_ns(&o.ts[2 * i + 2]), w = b - a;

			if (w >= 0 && w < best) {
				best = w;
				*at = a + w / 2;
				*off = pct_ns(&o.ts[2 * i + 1]) - *at;
			}
		}
	}
	if (r == 0 && best == INT64_MAX) {
		r = -EIO;	/* no sample with time going forward */
	}
	*window = best;
	return r;
}

static void boot_id_read(void)
{
	char b[64];
	uint64_t v = 0;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC), i, d = 0;
	ssize_t n = fd < 0 ? -1 : read(fd, b, sizeof(b) - 1);

	if (fd >= 0) {
		close(fd);
	}
	for (i = 0; i < n && d < 16; i++) {
		int c = (unsigned char)b[i];

		if (isxdigit(c)) {
			v = v << 4 | (uint64_t)(isdigit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
			d++;
		}
	}
	run.host_boot_id = d == 16 ? v : 0;
}

/* Take one reading with the method chosen at start; called once a second. */
static void phc_tick(void)
{
	int64_t off, w, at = 0;

	if (run.phc.fd < 0 || run.phc.method == PHC_NONE ||
	    phc_read(run.phc.method, &off, &w, &at) < 0) {
		return;
	}
	if (!run.phc.n++) {
		run.phc.first_off = off;
		run.phc.first_at = (uint64_t)at;
	}
	run.phc.last_off = off;
	run.phc.last_at = (uint64_t)at;
	run.phc.window = w;
}

/* The last reading, at the end of the run; the fd is closed after it. */
static void phc_end(void)
{
	if (run.phc.fd < 0) {
		return;
	}
	if (run.phc.status_own &&
	    !(run.status_started && pthread_equal(pthread_self(), run.status_thread))) {
		run.phc.fd = -1;	/* the status thread's: gone with its fd table */
		return;
	}
	phc_tick();
	if (kops.phc_open == kops_sys.phc_open) {
		close(run.phc.fd);
	}
	run.phc.fd = -1;
}

/* Open /dev/ptpINDEX and find the best method it answers.  0 or -errno. */
static int phc_start(int index)
{
	static const enum phc_method order[] = { PHC_PRECISE, PHC_EXTENDED, PHC_PLAIN };
	int64_t off, w, at;
	size_t i;
	int r = -ENODEV;

	if (run.phc.fd >= 0 && run.phc.index == index) {
		return 0;	/* a class socket on the same NIC: its readings go on */
	}
	phc_end();		/* another PHC (never two open) */
	run.phc = (struct phc_state){ .fd = -1, .index = index };
	boot_id_read();
	run.phc.fd = kops.phc_open(index);
	if (run.phc.fd < 0) {
		run.phc.err = run.phc.fd;
		run.phc.fd = -1;
		return run.phc.err;
	}
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		r = phc_read(order[i], &off, &w, &at);
		if (r == 0) {
			run.phc.method = order[i];
			phc_tick();
			/* app-vs-wire segments are taken on one time base (metric_value) */
			if (run.phc.first_off > -(int64_t)STAMP_MAX &&
			    run.phc.first_off < (int64_t)STAMP_MAX) {
				/* read by the loop, set by the status thread too (bond_watch) */
				__atomic_store_n(&run.ts.wire_off, run.phc.first_off,
						 __ATOMIC_RELAXED);
			}
			return 0;
		}
	}
	run.phc.err = r;
	return r;
}

/* PHC drift against CLOCK_REALTIME in ppm, once readings span a second. */
static bool phc_drift(double *ppm)
{
	if (run.phc.n < 2 || run.phc.last_at - run.phc.first_at < NSEC_PER_SEC) {
		return false;
	}
	*ppm = (double)(run.phc.last_off - run.phc.first_off) * 1e3 /
	       (double)(run.phc.last_at - run.phc.first_at) * 1e3;
	return true;
}

/*
 * Disciplined by phc2sys, a PHC stays within microseconds of CLOCK_REALTIME
 * (or a constant TAI-UTC apart, with phc2sys -O 0 unset) and does not drift.
 * Fills w and returns true when it evidently is not.
 */
/*
 * TAI - UTC in ns: the kernel's value where something (ptp4l, phc2sys -a,
 * chrony) told it, else 37 s, its value since 2017.  A PHC that ptp4l
 * disciplines runs TAI (linuxptp: the PTP timescale), so it stands that
 * far from CLOCK_REALTIME.
 */
static int64_t tai_utc_ns(void)
{
	struct timex tx = { .modes = 0 };

	return (adjtimex(&tx) >= 0 && tx.tai > 0 ? tx.tai : 37) * (int64_t)NSEC_PER_SEC;
}

/* The PHC keeps TAI: within 1 ms of TAI - UTC from CLOCK_REALTIME. */
static bool phc_is_tai(void)
{
	int64_t d = run.phc.last_off - tai_utc_ns();

	return run.phc.n && d > -1000000 && d < 1000000;
}

/*
 * A PHC that does not advance (QEMU's e1000e; a NIC whose clock is not
 * running) falls behind CLOCK_REALTIME second for second: between the first
 * and the last reading it moved less than 1% of the time that passed.  No
 * phc2sys can help it, and none of its stamps means anything.
 */
static bool phc_stopped(int64_t *moved, uint64_t *span)
{
	*span = run.phc.last_at - run.phc.first_at;
	*moved = (int64_t)*span + (run.phc.last_off - run.phc.first_off);
	return run.phc.n >= 2 && *span >= NSEC_PER_SEC / 10 && *moved < (int64_t)(*span / 100);
}

static bool phc_warning(char *w, size_t len)
{
	double ppm = 0;
	bool drift = phc_drift(&ppm) && fabs(ppm) > 1.0;
	int64_t a = run.phc.last_off < 0 ? -run.phc.last_off : run.phc.last_off, moved;
	uint64_t span;

	if (phc_stopped(&moved, &span)) {
		snprintf(w, len, "PHC /dev/ptp%d is stopped: it moved %" PRId64 " ns while CLOCK_REALTIME moved %.3f s; its NIC's stamps are not time (a driver fault, or an emulated NIC)",
			 run.phc.index, moved, (double)span / 1e9);
		return true;
	}
	if (!run.phc.n || (!drift && (a < 1000000 || phc_is_tai()))) {
		return false;
	}
	snprintf(w, len, "PHC /dev/ptp%d is %+" PRId64 " ns from CLOCK_REALTIME%s%.2f ppm: it is not disciplined; run phc2sys (phc2sys -s CLOCK_REALTIME -c /dev/ptp%d -O 0) so app and NIC stamps share a time base",
		 run.phc.index, run.phc.last_off, drift ? " and drifts " : ", drift ", ppm, run.phc.index);
	return true;
}

static void phc_publish(void)
{
	char why[256];
	uint64_t win = run.phc.window < 0	   ? 0 :
		       run.phc.window > UINT32_MAX ? UINT32_MAX :
						     (uint64_t)run.phc.window;
	uint64_t meta = win << 16 | (uint64_t)run.phc.method << 8 | !phc_warning(why, sizeof(why));

	__atomic_store_n(&run.phc_pub.off, run.phc.last_off, __ATOMIC_RELAXED);
	__atomic_store_n(&run.phc_pub.meta, meta, __ATOMIC_RELEASE);
}

/*
 * A bond's failover mid-run (active-backup), seen from the status thread,
 * never the loop.  The bond passes SIOCSHWTSTAMP to its active slave only
 * (drivers/net/bonding/bond_main.c), so the new one stamps as it was set,
 * often not at all, and its stamps are of its own PHC.  As ptp4l does on a
 * failover: the old slave's config put back (by its own name, without the
 * bond's flag), the new one's saved and set through the bond, its PHC read
 * from then on.  A transaction's two stamps on one side are then of one
 * clock (none is stamped until this ran); the server - client fit is not,
 * and the report leaves it out (bond_switches).
 */
static void bond_watch(void)
{
	char slave[64], nic[IFNAMSIZ];
	struct hwtstamp_config hc;
	struct ts_caps caps = { 0, -1, 0, 0 };
	struct ifreq ifr;
	int idx, fd;

	if (!run.ts.hw || !run.ts.bonded || !cfg->iface || !*run.ts.nic ||
	    sysfs_read(cfg->iface, "bonding/active_slave", slave, sizeof(slave)) < 0 || !*slave ||
	    !strcmp(slave, run.ts.nic)) {
		return;
	}
	/* a socket of its own for the ioctls: this thread's fd table has not the loop's */
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return;
	}
	if (run.ts.restore) {
		memset(&ifr, 0, sizeof(ifr));
		snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", run.ts.nic);
		hc = run.ts.saved;
		hc.flags &= ~HWTSTAMP_FLAG_BONDED_PHC_INDEX;
		ifr.ifr_data = (void *)&hc;
		run.ts.restore = false;
		if (kops.ioctl(fd, SIOCSHWTSTAMP, &ifr) < 0) {
			warnx_("warning: putting back %s's timestamping config after the failover failed: it stays as rant set it",
			       run.ts.nic);
		}
	}
	if (!run.ts.bond_switches++) {
		snprintf(run.ts.nic0, sizeof(run.ts.nic0), "%s", run.ts.nic);
	}
	idx = ts_real_nic(cfg->iface, nic, sizeof(nic));
	if (ts_get_caps(fd, cfg->iface, &caps) < 0 || !ts_caps_hw(&caps) ||
	    ts_hw_enable(fd, cfg->iface, &caps, &run.ts) < 0) {
		warnx_("warning: %s's active slave is now %s, which cannot stamp in hardware as rant asks: its NIC stamps are missing from now on",
		       cfg->iface, slave);
	} else {
		run.ts.phc_index = caps.phc_index;
		phc_start(caps.phc_index);
		run.phc.status_own = true;
		warnx_("warning: %s's active slave changed from %s to %s (PHC /dev/ptp%d): its stamping set, its PHC read from now on; the server - client offset and drift, which would mix two clocks, are left out",
		       cfg->iface, run.ts.nic, slave, caps.phc_index);
	}
	snprintf(run.ts.nic, sizeof(run.ts.nic), "%.*s", IFNAMSIZ - 1, idx ? nic : slave);
	__atomic_store_n(&run.ts.ifindex, idx, __ATOMIC_RELAXED);
	close(fd);
}

/* ------------------------------------------------------------ protocol */

static void put32(uint8_t *p, uint32_t v)
{
	v = htonl(v);
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return ntohl(v);
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* The flags of the header at buf. */
static uint16_t proto_flags(const uint8_t *buf)
{
	return (uint16_t)(buf[HO_FLAGS] << 8 | buf[HO_FLAGS + 1]);
}

/*
 * The short header of the datagram buf, len bytes, without decoding the rest
 * (the client's early ping looks at a pong before it is taken in): false
 * unless it is rant's, of this version and long enough.
 */
struct proto_peek {
	uint8_t type;
	uint16_t flags;
	uint32_t session;
	uint64_t seq;
};

static bool proto_peek(const uint8_t *buf, size_t len, struct proto_peek *h)
{
	if (len < PROTO_MIN_SIZE || get32(buf + HO_MAGIC) != PROTO_MAGIC ||
	    buf[HO_VERSION] != PROTO_VERSION) {
		return false;
	}
	h->type = buf[HO_TYPE];
	h->flags = proto_flags(buf);
	h->session = get32(buf + HO_SESSION);
	h->seq = get64(buf + HO_SEQ);
	return true;
}

/* Write the header into the first PROTO_HDR_LEN bytes of buf. */
/*
 * --ptp-probe: NICs such as i40e/X710, ixgbe and several igb/e1000e parts
 * stamp only PTP event messages on receive (HWTSTAMP_FILTER_PTP_V2_*).  Then
 * every ping and pong is one: a whole PTPv2 Sync (client to reflector) or
 * Delay_Req (reflector to client) on UDP port 319 — the 34-byte common
 * header and the 10-byte originTimestamp (IEEE 1588-2008, 13.3 and 13.6) —
 * and rant's own header follows it.  The domain is one the common profiles
 * leave alone (default 0-3, telecom 24-63), so that a ptp4l on the same
 * network ignores the probes.  Written just before each send (ts_send), read
 * and stripped right after each receive: the rest of rant never sees it.
 *
 *   0 transportSpecific|messageType  1 versionPTP  2 messageLength  4 domain
 *   6 flagField  8 correctionField  16 reserved  20 sourcePortIdentity
 *  30 sequenceId  32 controlField  33 logMessageInterval  34 originTimestamp
 */
#define PTP_HDR_LEN		44
#define PTP_EVENT_PORT		319
#define PTP_DOMAIN_DEFAULT	127
enum { PTP_SYNC = 0x0, PTP_DELAY_REQ = 0x1 };

/* proto_pre: bytes before rant's header, PTP_HDR_LEN with --ptp-probe (declared above ts_send) */

/* The PTP header of a rant datagram whose rant header starts at p + PTP_HDR_LEN. */
static void ptp_encode(uint8_t *p, uint8_t domain)
{
	const uint8_t *h = p + PTP_HDR_LEN;
	bool to_reflector = h[HO_TYPE] == PT_PING || h[HO_TYPE] == PT_FIN;

	memset(p, 0, PTP_HDR_LEN);
	p[0] = to_reflector ? PTP_SYNC : PTP_DELAY_REQ;
	p[1] = 2;					/* versionPTP */
	p[2] = 0;
	p[3] = PTP_HDR_LEN;				/* messageLength: the PTP message alone */
	p[4] = domain;
	/* sourcePortIdentity: clockIdentity "RANT" + session, port 1 client, 2 reflector */
	memcpy(p + 20, "RANT", 4);
	memcpy(p + 24, h + HO_SESSION, 4);
	p[29] = to_reflector ? 1 : 2;
	memcpy(p + 30, h + HO_SEQ + 6, 2);		/* sequenceId: low 16 bits of rant's seq */
	p[32] = to_reflector ? 0 : 1;			/* controlField: Sync 0, Delay_Req 1 */
	p[33] = 0x7f;					/* logMessageInterval: not periodic */
}

/* --txtime: the send's launch time (SCM_TXTIME, CLOCK_TAI ns) at ctrl; its bytes, 0 for none. */
static size_t tsn_ctrl(char *ctrl, uint64_t launch)
{
	struct cmsghdr *cm = (struct cmsghdr *)(void *)ctrl;

	if (!launch) {
		return 0;
	}
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_TXTIME;
	cm->cmsg_len = CMSG_LEN(sizeof(launch));
	memcpy(CMSG_DATA(cm), &launch, sizeof(launch));
	return CMSG_SPACE(sizeof(launch));
}

static ssize_t ts_send(int fd, const void *buf, size_t len, const struct sockaddr *to,
		       socklen_t tolen)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(struct in6_pktinfo)) +
			 CMSG_SPACE(sizeof(uint64_t))];
		struct cmsghdr align;
	} ctrl;
	/* --txtime: a ping's launch time, else (a FIN) now + lead: etf drops untimed packets */
	uint64_t launch = !tsn.on || !run.side.emit ? 0 : tsn.launch ? tsn.launch :
			  real_ns() + (uint64_t)tsn.tai + cfg->txtime_lead_ns;
	struct iovec iov = { (void *)buf, len };
	struct msghdr msg = {
		.msg_name = (void *)to, .msg_namelen = tolen, .msg_iov = &iov, .msg_iovlen = 1,
	};
	ssize_t n;

	if (run.proto_pre) {
		/* every buffer rant sends from has room for the PTP header before it */
		iov.iov_base = (uint8_t *)buf - run.proto_pre;
		iov.iov_len = len + run.proto_pre;
		ptp_encode(iov.iov_base, (uint8_t)cfg->ptp_domain);
	}
	/* sends that ask the NIC for a TX stamp (-N's reflector asks for none) */
	run.hww.tx += run.ts.hw && !resp_tx_app();
	if (!run.ts.key_cmsg && !run.tx_src.len && !launch) {
		return kops.sendmsg(fd, &msg, 0);
	}
	memset(&ctrl, 0, sizeof(ctrl));
	msg.msg_control = ctrl.buf;
	msg.msg_controllen = ts_send_ctrl(ctrl.buf, run.ts.key_cmsg);
	msg.msg_controllen += tsn_ctrl(ctrl.buf + msg.msg_controllen, launch);
	/*
	 * --txtime: a qdisc holds each packet until its launch time, and the socket's send
	 * buffer with it: a full one is a failed send (counted), never a wait past the cadence
	 */
	n = kops.sendmsg(fd, &msg, launch ? MSG_DONTWAIT : 0);
	if (n < 0 && errno == EINVAL && run.ts.key_cmsg) {
		run.ts.key_cmsg = false;
		/*
		 * The socket's counter never moved while each send carried its
		 * key: from here on it numbers the sends, from 0.
		 */
		ts_rekey_now(fd);
		memset(&ctrl, 0, sizeof(ctrl));
		msg.msg_controllen = ts_send_ctrl(ctrl.buf, false);
		msg.msg_controllen += tsn_ctrl(ctrl.buf + msg.msg_controllen, launch);
		msg.msg_control = msg.msg_controllen ? ctrl.buf : NULL;
		n = kops.sendmsg(fd, &msg, launch ? MSG_DONTWAIT : 0);
	}
	return n;
}

/* Is p[0..len) a datagram of rant's PTP probes?  0, or why not (proto_err). */
static int ptp_check(const uint8_t *p, size_t len, uint8_t domain)
{
	if (len < PTP_HDR_LEN) {
		return PE_SHORT;
	}
	if ((p[0] & 0x0f) > PTP_DELAY_REQ || (p[1] & 0x0f) != 2 || p[2] != 0 ||
	    p[3] != PTP_HDR_LEN || p[4] != domain || memcmp(p + 20, "RANT", 4)) {
		return PE_PTP;
	}
	return 0;
}

/* A datagram that is not a valid rant packet, counted by why. */
static void count_invalid(int why)
{
	sess.c.invalid++;
	sess.c.invalid_why[why]++;
}

/* A received probe: its length without the PTP header, or -1 (counted invalid). */
static ssize_t ptp_strip(const uint8_t *buf, ssize_t n)
{
	int why = ptp_check(buf, (size_t)n, (uint8_t)cfg->ptp_domain);

	if (why) {
		count_invalid(why);
		return -1;
	}
	return n - (ssize_t)run.proto_pre;
}

/*
 * The kernel-stamp block of a pong or FIN_ACK (PF_KSTAMPS), where the
 * datagram has room for it: a block cut short is not read, and a PHC block
 * is read only from a FIN_ACK.  The flag stays as sent.
 */
static void proto_kx_decode(const uint8_t *buf, size_t len, struct proto_msg *m)
{
	size_t off = PROTO_HDR_LEN + (m->flags & PF_TAG ? TAG_LEN : 0);

	if (!(m->flags & PF_KSTAMPS) || (m->type != PT_PONG && m->type != PT_FIN_ACK) ||
	    len < off + KX_LEN) {
		return;
	}
	m->t2k = get64(buf + off);
	m->t3k = get64(buf + off + 8);
	if (len < off + KX_PHC_LEN || (m->type == PT_PONG && !(m->flags & PF_PHC_OFF))) {
		return;
	}
	if (m->type == PT_FIN_ACK) {
		/* the boot id stands alone: a reflector without a PHC sends it too */
		m->boot_id = get64(buf + off + 32);
	}
	/* the PHC part: a FIN_ACK's last reading, a pong's offset taken out (wire_off) */
	if (!buf[off + 28] || buf[off + 28] > PHC_PLAIN) {
		return;
	}
	m->phc_off = (int64_t)get64(buf + off + 16);
	m->phc_window = get32(buf + off + 24);
	m->phc_method = buf[off + 28];
	m->phc_disciplined = buf[off + 29] != 0;
}

/* Where the T3 history of a pong or FIN_ACK starts: after every block before it. */
static size_t proto_hist_off(unsigned flags, uint8_t type, size_t len)
{
	size_t off = PROTO_HDR_LEN + (flags & PF_TAG ? TAG_LEN : 0);

	if (flags & PF_KSTAMPS) {
		off += (type == PT_FIN_ACK || (type == PT_PONG && (flags & PF_PHC_OFF))) &&
				       len >= off + KX_PHC_LEN ?
			       KX_PHC_LEN :
			       KX_LEN;
	}
	return off;
}

/* The T3 history (PF_T3HIST), where it is whole: a block cut short is not read. */
static void proto_hist_decode(const uint8_t *buf, size_t len, struct proto_msg *m)
{
	size_t off = proto_hist_off(m->flags, m->type, len);
	int i, n;

	if (!(m->flags & PF_T3HIST) || (m->type != PT_PONG && m->type != PT_FIN_ACK) ||
	    len < off + T3HIST_HDR) {
		return;
	}
	n = buf[off];
	if (n < 1 || n > T3HIST_MAX || len < off + T3HIST_HDR + (size_t)n * T3HIST_ENT) {
		return;
	}
	for (i = 0; i < n; i++) {
		const uint8_t *e = buf + off + T3HIST_HDR + (size_t)i * T3HIST_ENT;

		m->hist[i].seq = get64(e);
		m->hist[i].t3w = get64(e + 8);
		m->hist[i].t3k = get64(e + 16);
	}
	m->nhist = (uint8_t)n;
}

/* The echoed fields a datagram of len bytes has room for, each whole (PF_T2W .. PF_T3W). */
static uint16_t proto_room(size_t len)
{
	return (uint16_t)((len >= 32 ? PF_T2W : 0) | (len >= 40 ? PF_T2SW : 0) |
			  (len >= 48 ? PF_T3SW : 0) | (len >= PROTO_HDR_LEN ? PF_T3W : 0));
}

/*
 * The smallest --size: the short header, and with --key-file the tag after
 * the full header.  (A log's SIZE column is checked against it too.)
 */
static unsigned proto_min_size(bool keyed)
{
	return keyed ? PROTO_HDR_LEN + TAG_LEN : PROTO_MIN_SIZE;
}

static void proto_encode(uint8_t *buf, const struct proto_msg *m)
{
	put32(buf + HO_MAGIC, PROTO_MAGIC);
	buf[HO_VERSION] = PROTO_VERSION;
	buf[HO_TYPE] = m->type;
	buf[HO_FLAGS] = (uint8_t)(m->flags >> 8);
	buf[HO_FLAGS + 1] = (uint8_t)m->flags;
	put32(buf + HO_SESSION, m->session);
	put32(buf + HO_IDLE, m->idle_ms);
	put64(buf + HO_SEQ, m->seq);
	put64(buf + HO_T2W, m->flags & PF_T2W ? m->t2w : 0);
	put64(buf + HO_T2SW, m->flags & PF_T2SW ? m->t2sw : 0);
	put64(buf + HO_T3SW, m->flags & PF_T3SW ? m->t3sw : 0);
	put64(buf + HO_T3W, m->flags & PF_T3W ? m->t3w : 0);
	put64(buf + HO_T3W_SEQ, m->flags & PF_T3W ? m->t3w_seq : 0);
}

/*
 * The header over the first len bytes of a datagram of len bytes, no byte
 * beyond (a short one, --size below 64, holds only what fits: proto_room).
 */
static void proto_encode_len(uint8_t *buf, size_t len, const struct proto_msg *m)
{
	uint8_t h[PROTO_HDR_LEN];

	if (len >= PROTO_HDR_LEN) {
		proto_encode(buf, m);
		return;
	}
	proto_encode(h, m);
	memcpy(buf, h, len);
}

/* A message of len bytes: its header (short if len is), every byte after it zero. */
static void proto_encode_pad(uint8_t *buf, size_t len, const struct proto_msg *m)
{
	proto_encode_len(buf, len, m);
	if (len > PROTO_HDR_LEN) {
		memset(buf + PROTO_HDR_LEN, 0, len - PROTO_HDR_LEN);
	}
}

/*
 * A pong's T3_SW, read the moment before its send, into the pong already
 * encoded (proto_encode_len and the blocks after it): where it has room.
 */
static void proto_put_t3sw(uint8_t *buf, size_t len, uint64_t t3sw)
{
	if (proto_room(len) & PF_T3SW) {
		put64(buf + HO_T3SW, t3sw);
	}
}

/* Decode and validate; returns 0 or the proto_err that makes it invalid. */
static int proto_decode(const uint8_t *buf, size_t len, struct proto_msg *m)
{
	/* all but the T3 history's entries: read only below nhist, which is 0 until they are */
	memset(m, 0, offsetof(struct proto_msg, hist));
	if (len < PROTO_MIN_SIZE) {
		return PE_SHORT;
	}
	if (get32(buf + HO_MAGIC) != PROTO_MAGIC) {
		return PE_MAGIC;
	}
	m->version = buf[HO_VERSION];
	if (m->version != PROTO_VERSION) {
		return PE_VERSION;
	}
	m->type = buf[HO_TYPE];
	if (m->type < PT_PING || m->type > PT_BUSY) {
		return PE_TYPE;
	}
	m->flags = proto_flags(buf);
	m->session = get32(buf + HO_SESSION);
	m->idle_ms = get32(buf + HO_IDLE);
	m->seq = get64(buf + HO_SEQ);
	if (m->flags & (PF_T2W | PF_T2SW | PF_T3SW | PF_T3W) & ~proto_room(len)) {
		return PE_SHORT;	/* a field flagged present beyond the datagram's end */
	}
	/* An echoed field counts only with its flag and a plausible value. */
	if (m->flags & PF_T2W) {
		m->t2w = get64(buf + HO_T2W);
	}
	if (m->flags & PF_T2SW) {
		m->t2sw = get64(buf + HO_T2SW);
	}
	if (m->flags & PF_T3SW) {
		m->t3sw = get64(buf + HO_T3SW);
	}
	if (m->flags & PF_T3W) {
		m->t3w = get64(buf + HO_T3W);
		m->t3w_seq = get64(buf + HO_T3W_SEQ);
	}
	proto_kx_decode(buf, len, m);
	proto_hist_decode(buf, len, m);
	return 0;
}

/*
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
 * 2012), written from the paper's description: a 128-bit key, four 64-bit
 * words of state, two rounds per 8-byte little-endian word and four to
 * finish.  It is a MAC made for short messages, which is what a ping is.
 */
static uint64_t rotl64(uint64_t x, int b)
{
	return x << b | x >> (64 - b);
}

static void sip_round(uint64_t *v)
{
	v[0] += v[1];
	v[1] = rotl64(v[1], 13);
	v[1] ^= v[0];
	v[0] = rotl64(v[0], 32);
	v[2] += v[3];
	v[3] = rotl64(v[3], 16);
	v[3] ^= v[2];
	v[0] += v[3];
	v[3] = rotl64(v[3], 21);
	v[3] ^= v[0];
	v[2] += v[1];
	v[1] = rotl64(v[1], 17);
	v[1] ^= v[2];
	v[2] = rotl64(v[2], 32);
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--) {
		v = v << 8 | p[i];
	}
	return v;
}

static void sip_word(uint64_t *v, uint64_t m)
{
	v[3] ^= m;
	sip_round(v);
	sip_round(v);
	v[0] ^= m;
}

static uint64_t siphash24(const uint64_t *k, const uint8_t *p, size_t n)
{
	uint64_t v[4] = {
		k[0] ^ 0x736f6d6570736575ULL, k[1] ^ 0x646f72616e646f6dULL,
		k[0] ^ 0x6c7967656e657261ULL, k[1] ^ 0x7465646279746573ULL,
	};
	uint64_t last = (uint64_t)(n & 0xff) << 56;
	size_t i, whole = n & ~(size_t)7;

	for (i = 0; i < whole; i += 8) {
		sip_word(v, le64(p + i));
	}
	for (i = 0; i < (n & 7); i++) {
		last |= (uint64_t)p[whole + i] << (8 * i);
	}
	sip_word(v, last);
	v[2] ^= 0xff;
	sip_round(v);
	sip_round(v);
	sip_round(v);
	sip_round(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* --key-file: the shared secret, folded to SipHash's 128-bit key. */

/*
 * Read and check a key file: a regular file, readable by its owner only
 * (a key the group can read is no secret), 16 to 4096 bytes.  Its bytes are
 * folded into the 128-bit key with SipHash under two fixed keys, so a long
 * pass-phrase and 16 random bytes are both used whole.
 */
static int key_load(const char *path)
{
	static const uint64_t fold[2][2] = { { 0x72616e74ULL, 0 }, { 0x72616e74ULL, 1 } };
	uint8_t buf[KEY_MAX + 1];
	struct stat st;
	ssize_t n;
	/* O_NONBLOCK: a FIFO (or a device) is refused below, never waited on */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	if (fd < 0) {
		warnx_("--key-file: cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		warnx_("--key-file: '%s' is not a regular file", path);
		close(fd);
		return -1;
	}
	if (st.st_mode & 077) {
		warnx_("--key-file: '%s' is readable or writable by group or others (mode %03o); chmod 600 it",
		       path, (unsigned)(st.st_mode & 0777));
		close(fd);
		return -1;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0) {
		warnx_("--key-file: cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	if (n < KEY_MIN || n > KEY_MAX) {
		warnx_("--key-file: '%s' is %s (%zd bytes); a key is %d to %d bytes, e.g. head -c 32 /dev/urandom",
		       path, n ? (n < KEY_MIN ? "short" : "too long") : "empty",
		       n > KEY_MAX ? (ssize_t)KEY_MAX + 1 : n, KEY_MIN, KEY_MAX);
		return -1;
	}
	run.key.k[0] = siphash24(fold[0], buf, (size_t)n);
	run.key.k[1] = siphash24(fold[1], buf, (size_t)n);
	run.key.on = true;
	memset(buf, 0, sizeof(buf));
	return 0;
}

/* The tag of a datagram: SipHash over all its bytes, the tag field as zeros. */
static uint64_t tag_of(uint8_t *buf, size_t len)
{
	uint8_t saved[TAG_LEN];
	uint64_t t;

	memcpy(saved, buf + PROTO_HDR_LEN, TAG_LEN);
	memset(buf + PROTO_HDR_LEN, 0, TAG_LEN);
	t = siphash24(run.key.k, buf, len);
	memcpy(buf + PROTO_HDR_LEN, saved, TAG_LEN);
	return t;
}

/* With a key: flag the header and write the tag (after every other byte is final). */
static void tag_put(uint8_t *buf, size_t len)
{
	if (!run.key.on || len < PROTO_HDR_LEN + TAG_LEN) {
		return;
	}
	buf[HO_FLAGS] |= PF_TAG >> 8;
	put64(buf + PROTO_HDR_LEN, tag_of(buf, len));
}

/* With a key: true only for a datagram that carries the right tag. */
static bool tag_ok(uint8_t *buf, size_t len)
{
	uint64_t want, got;

	if (!run.key.on) {
		return true;
	}
	if (len < PROTO_HDR_LEN + TAG_LEN || !(buf[HO_FLAGS] & (PF_TAG >> 8))) {
		return false;
	}
	got = get64(buf + PROTO_HDR_LEN);
	want = tag_of(buf, len);
	return !(got ^ want);
}

/*
 * The reflector's kernel-stamp block, after the header and the tag (which
 * tag_put writes later, over every byte): 0, or -ENOSPC when the datagram
 * (as long as the client's ping) has no room for it.  A FIN_ACK with room
 * carries the PHC block too, zeros when there is no PHC reading.
 */
static int proto_kx_put(uint8_t *buf, size_t len, const struct proto_msg *m)
{
	size_t off = PROTO_HDR_LEN + (run.key.on ? TAG_LEN : 0);

	if (len < off + KX_LEN) {
		buf[HO_FLAGS] &= (uint8_t)~(PF_PHC_OFF >> 8);
		return -ENOSPC;
	}
	buf[HO_FLAGS] |= PF_KSTAMPS >> 8;
	put64(buf + off, m->t2k);
	put64(buf + off + 8, m->t3k);
	if (len < off + KX_PHC_LEN) {
		buf[HO_FLAGS] &= (uint8_t)~(PF_PHC_OFF >> 8);	/* no room: the pong says so */
	} else if (m->type == PT_FIN_ACK || (m->flags & PF_PHC_OFF)) {
		memset(buf + off + KX_LEN, 0, KX_PHC_LEN - KX_LEN);
		if (m->phc_method) {
			put64(buf + off + 16, (uint64_t)m->phc_off);
			put32(buf + off + 24, m->phc_window);
			buf[off + 28] = m->phc_method;
			buf[off + 29] = m->phc_disciplined;
		}
		put64(buf + off + 32, m->boot_id);
	}
	return 0;
}

/* Where the T3 history goes in buf: after the blocks written, and the tag (tag_put comes last). */
static size_t proto_hist_put_off(const uint8_t *buf, size_t len, uint8_t type)
{
	return proto_hist_off((unsigned)proto_flags(buf) | (run.key.on ? PF_TAG : 0), type,
			      len);
}

/* How many history entries fit in buf after the blocks written. */
static size_t proto_hist_room(const uint8_t *buf, size_t len, uint8_t type)
{
	size_t off = proto_hist_put_off(buf, len, type);
	size_t room = len > off + T3HIST_HDR ? (len - off - T3HIST_HDR) / T3HIST_ENT : 0;

	return room < T3HIST_MAX ? room : T3HIST_MAX;
}

/* The T3 history of m into buf: as many entries as fit, none without room for one. */
static void proto_hist_put(uint8_t *buf, size_t len, const struct proto_msg *m)
{
	size_t off = proto_hist_put_off(buf, len, m->type);
	size_t room = proto_hist_room(buf, len, m->type);
	int i, n = (int)(room < m->nhist ? room : m->nhist);

	if (n < 1) {
		return;
	}
	buf[HO_FLAGS] |= PF_T3HIST >> 8;
	memset(buf + off, 0, T3HIST_HDR);
	buf[off] = (uint8_t)n;
	for (i = 0; i < n; i++) {
		uint8_t *e = buf + off + T3HIST_HDR + (size_t)i * T3HIST_ENT;

		put64(e, m->hist[i].seq);
		put64(e + 8, m->hist[i].t3w);
		put64(e + 16, m->hist[i].t3k);
	}
}

/* The ping length a reflector's kernel-stamp block needs (--size on the client). */
static size_t proto_kx_need(void)
{
	return PROTO_HDR_LEN + (run.key.on ? TAG_LEN : 0) + KX_LEN;
}

/*
 * The client's FIN (and so the FIN_ACK, which has its length): --size, or
 * longer when that leaves no room for the FIN_ACK's blocks (the boot id,
 * the PHC reading, the whole T3 history).  Not a measured packet: its
 * length costs nothing, and a reflector answers FINs of any length.
 */
static size_t fin_len(void)
{
	size_t n = PROTO_HDR_LEN + (run.key.on ? TAG_LEN : 0) + KX_PHC_LEN + T3HIST_HDR +
		   T3HIST_MAX * T3HIST_ENT;

	return cfg->size > n ? cfg->size : n;
}

/* The port of an IPv4 or IPv6 address, 0 for any other family. */
static unsigned sa_port(const struct sockaddr *a)
{
	if (a->sa_family == AF_INET) {
		return ntohs(((const struct sockaddr_in *)(const void *)a)->sin_port);
	}
	if (a->sa_family == AF_INET6) {
		return ntohs(((const struct sockaddr_in6 *)(const void *)a)->sin6_port);
	}
	return 0;
}

/* Same address and port (and IPv6 scope): the peer a session belongs to. */
static bool sa_same(const struct sockaddr_storage *a, const struct sockaddr *b)
{
	if (a->ss_family != b->sa_family) {
		return false;
	}
	if (b->sa_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (b->sa_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port && x->sin6_scope_id == y->sin6_scope_id &&
		       IN6_ARE_ADDR_EQUAL(&x->sin6_addr, &y->sin6_addr);
	}
	return false;
}

/*
 * The offset of the reflector's PHC from its system clock, as a pong or
 * FIN_ACK brings it: a PHC that was never set counts from its own epoch, so
 * decades are possible, but not more than PEER_OFF_MAX (73 years).  Added
 * to a difference of two stamps (each below STAMP_MAX) it then cannot pass
 * INT64_MAX; anything beyond is not a clock, and is refused, never summed.
 */
#define PEER_OFF_MAX	((int64_t)(STAMP_MAX >> 1))

static bool peer_off_plausible(const struct proto_msg *m)
{
	return !m->phc_method || (m->phc_off > -PEER_OFF_MAX && m->phc_off < PEER_OFF_MAX);
}

/*
 * Echoed server stamps a real reflector can send: each below STAMP_MAX, and
 * in order where they come from one clock (T2 wire before T3 wire, T2 app
 * before T3 app).  Wire and app stamps may be different clocks (NIC and
 * system), so they are not compared with each other.
 */
static bool echo_plausible(const struct proto_msg *m)
{
	if (!peer_off_plausible(m)) {
		return false;
	}
	if ((m->t2w >= STAMP_MAX) || (m->t2sw >= STAMP_MAX) || (m->t3sw >= STAMP_MAX) ||
	    (m->t3w >= STAMP_MAX)) {
		return false;
	}
	if (m->t2sw && m->t3sw && m->t3sw < m->t2sw) {
		return false;
	}
	/* kernel stamps: CLOCK_REALTIME like the app stamps, T2_K before the app read it */
	if (m->t2k >= STAMP_MAX || m->t3k >= STAMP_MAX || (m->t2k && m->t2sw && m->t2k > m->t2sw)) {
		return false;
	}
	return true;
}

/* ---------------------------------------------------------- statistics */

/* The log bin of magnitude u: exact below LH_LIN, then LH_SUB bins per octave. */
static uint32_t lh_index(uint64_t u)
{
	unsigned e;

	if (u < LH_LIN) {
		return (uint32_t)u;
	}
	e = 63 - (unsigned)__builtin_clzll(u);	/* 10 .. 63 */
	return LH_LIN + (e - 10) * LH_SUB + (uint32_t)((u >> (e - 9)) & (LH_SUB - 1));
}

/* The magnitudes log bin i holds: [*lo, *hi]. */
static void lh_range(uint32_t i, uint64_t *lo, uint64_t *hi)
{
	unsigned e;

	if (i < LH_LIN) {
		*lo = *hi = i;
		return;
	}
	e = (i - LH_LIN) / LH_SUB + 10;
	*lo = (uint64_t)(LH_SUB + (i - LH_LIN) % LH_SUB) << (e - 9);
	*hi = *lo + ((1ULL << (e - 9)) - 1);
}

/* Entries of a histogram's log bins for this bound (the memory layout sizes them). */
static uint64_t hist_lh_len(uint64_t bound_ns)
{
	return 2 * (uint64_t)LH_N - lh_index(bound_ns);
}

/* Log bins for a store of out_cap: none when the run cannot fill it (see OUT_CAP). */
static uint64_t hist_lh_room(uint64_t out_cap, uint64_t bound_ns)
{
	return out_cap < OUT_CAP ? 0 : hist_lh_len(bound_ns);
}

/*
 * buckets: ceil(bound / bucket) entries, zeroed; out: out_cap; lh:
 * hist_lh_len(bound), or NULL where the store holds every sample the run
 * can give (hist_lh_room).
 */
static void hist_init(struct hist *h, uint64_t bucket_ns, uint64_t bound_ns,
		      uint64_t *buckets, int64_t *out, uint64_t out_cap, uint64_t *lh)
{
	memset(h, 0, sizeof(*h));
	h->bucket_ns = bucket_ns;
	h->bound_ns = bound_ns;
	h->nbuckets = (uint32_t)((bound_ns + bucket_ns - 1) / bucket_ns);
	h->bucket = buckets;
	h->out = out;
	h->out_cap = out_cap;
	h->lh = lh;
	h->lh_base = lh_index(bound_ns);
	if (lh) {
		memset(lh, 0, hist_lh_len(bound_ns) * sizeof(*lh));
	}
}

static void hist_reset(struct hist *h)
{
	memset(h->bucket, 0, h->nbuckets * sizeof(*h->bucket));
	if (h->lh) {
		memset(h->lh, 0, hist_lh_len(h->bound_ns) * sizeof(*h->lh));
	}
	h->out_n = h->out_lo = h->out_hi = h->n = 0;
	h->min = h->max = h->shift = 0;
	h->min_seq = h->max_seq = 0;
	h->sum = 0;
	h->sumsq = 0;
}

/* Free what hist_init was given (--analyze's histograms are calloc'ed). */
static void hist_free(struct hist *h)
{
	free(h->bucket);
	free(h->out);
	free(h->lh);
	h->bucket = NULL;
	h->out = NULL;
	h->lh = NULL;
}

/*
 * A value outside [0, bound): stored while there is room, always counted in
 * its log bin (a store sized for the whole run, or a zeroed histogram, has
 * none: it counts).
 */
static void hist_outside(struct hist *h, int64_t v)
{
	if (h->out_n < h->out_cap) {
		h->out[h->out_n++] = v;
	}
	if (v < 0) {
		h->out_lo++;
		if (h->lh) {
			h->lh[LH_N - 1 - lh_index(-(uint64_t)v)]++;
		}
	} else {
		h->out_hi++;
		if (h->lh) {
			h->lh[LH_N + lh_index((uint64_t)v) - h->lh_base]++;
		}
	}
}

static void hist_add(struct hist *h, int64_t v, uint64_t seq)
{
	__int128 d;
	unsigned __int128 u;

	if (v >= 0 && (uint64_t)v < h->bound_ns) {
		h->bucket[(uint64_t)v / h->bucket_ns]++;
	} else {
		hist_outside(h, v);
	}
	if (!h->n) {
		h->shift = v;
	}
	/* a tie goes to the earlier transaction: the same whatever order they were added in */
	if (!h->n || v < h->min || (v == h->min && seq < h->min_seq)) {
		h->min = v;
		h->min_seq = seq;
	}
	if (!h->n || v > h->max || (v == h->max && seq < h->max_seq)) {
		h->max = v;
		h->max_seq = seq;
	}
	h->n++;
	h->sum += (__int128)v - h->shift;
	/*
	 * Squared unsigned: two int64 values differ by less than 2^64, whose
	 * square fits an unsigned __int128 but not a signed one.
	 */
	d = (__int128)v - h->shift;
	u = (unsigned __int128)(d < 0 ? -d : d);
	h->sumsq += u * u;
}

/*
 * Average and population standard deviation from the shifted sums.  Shifting
 * by the first sample keeps the squares small even for stamps-sized values
 * (an unsynchronised NIC clock can make a metric ~1e18 ns), and no long
 * double is used (valgrind computes it in double precision only).
 */
static double hist_avg(const struct hist *h)
{
	__int128 q, r;

	if (!h->n) {
		return 0;
	}
	q = h->sum / (__int128)h->n;
	r = h->sum % (__int128)h->n;
	return (double)((__int128)h->shift + q) + (double)r / (double)h->n;
}

static double hist_stddev(const struct hist *h)
{
	double n = (double)h->n, mean, var;

	if (h->n < 2) {
		return 0;
	}
	mean = (double)h->sum / n;
	var = (double)h->sumsq / n - mean * mean;
	return var > 0 ? num_sqrt(var) : 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* Sort the exact store; percentiles need it ordered. */
static void hist_finish(struct hist *h)
{
	if (h->out_n) {
		/* qsort of a NULL store, even of 0 elements, is undefined (UBSan says so) */
		qsort(h->out, h->out_n, sizeof(*h->out), cmp_i64);
	}
}

/* Nearest rank of percentile p among n (rank = ceil(p/100 * n)), 1 .. n. */
static uint64_t pct_rank(double p, uint64_t n)
{
	/*
	 * Exact integer rank: p in thousandths of a percent, so that 99.9 % of
	 * 1000 samples is rank 999 (ceill(99.9 / 100 * 1000) is 1000 in binary
	 * floating point).
	 */
	uint64_t rank = (uint64_t)(((unsigned __int128)num_round(p * 1000) * n + 99999) / 100000);

	return rank < 1 ? 1 : rank > n ? n : rank;
}

/*
 * The rank-th outlier of one side from the log bins: the middle of what its
 * bin can hold within [min, max]; *err the most it can be off.  neg: the
 * negative half (bins from the most negative), else the half above the bound.
 */
static int64_t hist_lh_pct(const struct hist *h, bool neg, uint64_t rank, uint64_t *err)
{
	uint32_t i, n = neg ? LH_N : LH_N - h->lh_base;
	const uint64_t *b;
	uint64_t cum = 0, lo, hi;
	__int128 a, z;

	if (!h->lh) {
		*err = (uint64_t)(h->max - h->min);
		return neg ? h->min : h->max;
	}
	b = neg ? h->lh : h->lh + LH_N;	/* not before the check: NULL + n is undefined */

	for (i = 0; i < n - 1; i++) {
		cum += b[i];
		if (cum >= rank) {
			break;
		}
	}
	if (neg) {
		lh_range(LH_N - 1 - i, &lo, &hi);
		a = -(__int128)hi;
		z = -(__int128)lo;
	} else {
		lh_range(i + h->lh_base, &lo, &hi);
		a = lo;
		z = hi;
	}
	a = a < h->min ? h->min : a;
	z = z > h->max ? h->max : z;
	*err = (uint64_t)((z - a + 1) / 2);
	return (int64_t)(z - (__int128)*err);
}

/*
 * Percentile p by nearest rank, and in *err the most the value can be off
 * (0: exact).  Below the bound it is the highest value the sample's bucket
 * can hold, clamped to the maximum, so true <= reported < true + bucket.
 * Outside [0, bound) it is the exact value from the sorted store while that
 * holds every outlier of its side, else from the log bins (hist_lh_pct).
 * hist_finish() must have run.
 */
static int64_t hist_pct_err(const struct hist *h, double p, uint64_t *err)
{
	uint64_t rank, lo_stored = 0, mid, cum = 0, i;

	*err = 0;
	if (!h->n) {
		return 0;
	}
	rank = pct_rank(p, h->n);
	if (rank == h->n) {
		return h->max;
	}
	while (lo_stored < h->out_n && h->out[lo_stored] < 0) {
		lo_stored++;
	}
	mid = h->n - h->out_lo - h->out_hi;
	if (rank <= h->out_lo) {
		return lo_stored == h->out_lo ? h->out[rank - 1] : hist_lh_pct(h, true, rank, err);
	}
	if (rank <= h->out_lo + mid) {
		uint64_t r = rank - h->out_lo;

		for (i = 0; i < h->nbuckets; i++) {
			cum += h->bucket[i];
			if (cum >= r) {
				uint64_t top = (i + 1) * h->bucket_ns, low = i * h->bucket_ns;
				int64_t v;

				top = top > h->bound_ns ? h->bound_ns : top;
				v = (int64_t)(top - 1) < h->max ? (int64_t)(top - 1) : h->max;
				*err = (uint64_t)(v - ((int64_t)low > h->min ? (int64_t)low :
								 h->min));
				return v;
			}
		}
		return h->max;
	}
	rank -= h->out_lo + mid;
	if (h->out_n - lo_stored == h->out_hi) {
		return h->out[lo_stored + rank - 1];
	}
	return hist_lh_pct(h, false, rank, err);
}

/*
 * Percentile p; *approx set when it came from the log bins (within 0.1 %)
 * rather than exact or exact to the bucket.
 */
static int64_t hist_pct(const struct hist *h, double p, bool *approx)
{
	uint64_t err;
	int64_t v = hist_pct_err(h, p, &err);

	if (v < 0 || (uint64_t)v >= h->bound_ns) {
		*approx |= err != 0;
	}
	return v;
}

/*
 * "percentiles_error_ns": the most each percentile can be off (0: exact;
 * below the bound less than a bucket, from the log bins within 0.1 %).
 */
static void hist_json_err(FILE *f, const struct hist *h)
{
	uint64_t err;
	int k;

	fprintf(f, "\"percentiles_error_ns\": {");
	for (k = 0; k < NPCT; k++) {
		hist_pct_err(h, pct_value[k], &err);
		fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", pct_key[k], err);
	}
	fputc('}', f);
}

/* The largest error of the reported percentiles that came from the log bins; 0: none did. */
static uint64_t hist_tail_err(const struct hist *h)
{
	uint64_t err, most = 0;
	int k;

	for (k = 0; k < NPCT; k++) {
		int64_t v = hist_pct_err(h, pct_value[k], &err);

		if ((v < 0 || (uint64_t)v >= h->bound_ns) && err > most) {
			most = err;
		}
	}
	return most;
}

/* The first stored value at or above the bound (hist_finish() sorted the store). */
static uint64_t hist_first_above(const struct hist *h)
{
	uint64_t i = 0;

	while (i < h->out_n && h->out[i] < 0) {
		i++;
	}
	return i;
}

/*
 * The samples kept exactly at or above the bound, in buckets of the
 * histogram's width: f(arg, lower_ns, count) for each non-empty one, in
 * order.  (Those the full store could not keep are only counted:
 * hist_above_not_kept.)  hist_finish() must have run.
 */
static void hist_above(const struct hist *h, void (*f)(void *, uint64_t, uint64_t), void *arg)
{
	uint64_t i = hist_first_above(h), b, n;

	while (i < h->out_n) {
		b = (uint64_t)h->out[i] / h->bucket_ns;
		for (n = 0; i < h->out_n && (uint64_t)h->out[i] / h->bucket_ns == b; i++) {
			n++;
		}
		f(arg, b * h->bucket_ns, n);
	}
}

/* Samples below zero (one-way delays between clocks that disagree), kept or not. */
static uint64_t hist_below(const struct hist *h)
{
	return h->out_lo;
}

/* Samples at or above the bound the exact store had no room for. */
static uint64_t hist_above_not_kept(const struct hist *h)
{
	return h->out_hi - (h->out_n - hist_first_above(h));
}

static void fit_track(struct fit *f, int64_t y)
{
	if (!f->seen || y < f->ymin) {
		f->ymin = y;
	}
	if (!f->seen || y > f->ymax) {
		f->ymax = y;
	}
	f->seen++;
}

/* One point into the least-squares sums (x relative to the first, in s). */
static void fit_point(struct fit *f, uint64_t x_ns, int64_t y)
{
	double x, dy;

	if (!f->n) {
		f->x0 = x_ns;
		f->y0 = y;
	}
	x = (double)(int64_t)(x_ns - f->x0) / 1e9;
	dy = (double)(y - f->y0);
	f->n++;
	f->sx += x;
	f->sy += dy;
	f->sxx += x * x;
	f->sxy += x * dy;
}

/*
 * Feed the fit with one point per FIT_WINDOW: the one of lowest quality q
 * (the smallest delay), not every sample.  Queueing and wake-up jitter only
 * ever add delay, so the lower envelope is what moves with the clocks; a
 * plain fit of all samples mistakes a few slow seconds for drift.
 */
#define FIT_WINDOW	(NSEC_PER_SEC / 4)

static void fit_window_flush(struct fit *f)
{
	if (f->w_have) {
		fit_point(f, f->w_x, f->w_y);
		f->w_have = false;
	}
}

static void fit_window(struct fit *f, uint64_t x, int64_t y, int64_t q)
{
	if (f->w_have && x - f->w_start >= FIT_WINDOW) {
		fit_window_flush(f);
	}
	if (!f->w_have) {
		f->w_start = x;
		f->w_have = true;
		f->w_q = INT64_MAX;
	}
	if (q < f->w_q) {
		f->w_q = q;
		f->w_x = x;
		f->w_y = y;
	}
	fit_track(f, y);
}

/* Slope of the fitted line in ppm (ns per second / 1000); false if unknown. */
static bool fit_ppm(const struct fit *f, double *ppm, double *span_s)
{
	double d = (double)f->n * f->sxx - f->sx * f->sx;

	if (f->n < 3 || d <= 1e-12) {
		return false;
	}
	*ppm = ((double)f->n * f->sxy - f->sx * f->sy) / d / 1000.0;
	/* the x range of a least-squares fit: sqrt(12 * variance) for uniform x */
	*span_s = num_sqrt(12 * (f->sxx / f->n - (f->sx / f->n) * (f->sx / f->n)));
	return true;
}

/*
 * The stamps' difference for metric m, as metric_value gives it: a segment
 * between an app or kernel stamp and a wire stamp of this side's NIC spans
 * two clocks.  The PHC's offset to CLOCK_REALTIME, measured at start
 * (PTP_SYS_OFFSET_*, Documentation/ptp/ptp.rst; 0 with kernel stamps), is
 * taken out of it: +1 where the wire stamp ends the segment, -1 where it
 * starts it, 0 for every other metric (one clock, or the peer's NIC).
 */
static int wire_sign_of(int m, bool emit)
{
	return metric_def[m].sign[emit ? 0 : 1];
}

static int wire_sign(int m)
{
	return wire_sign_of(m, run.side.emit);
}

/* A metric's label in tables; the reflector's -N measures its response to the app's send. */
/*
 * On the client: one of the reflector's segments between its NIC stamp and
 * an app or kernel stamp, with the reflector's PHC offset still in it (its
 * pongs had no room to say it: see metric_value).  Marked where shown.
 */
static bool peer_off_in(int m)
{
	return run.side.emit && sess.srv_hw && !run.ts.peer_off_on && wire_sign_of(m, false);
}

static const char *metric_label(int m)
{
	static char marked[NMETRIC][64];

	if (m == M_RESPONSE && resp_tx_app()) {
		return "response (T3_SW-T2 wire, -N)";
	}
	if (m == M_RTT && cli_no_tx()) {
		return "rtt (T4 wire-T1_SW, no TX stamps)";
	}
	if (peer_off_in(m)) {
		if (!marked[m][0]) {
			snprintf(marked[m], sizeof(marked[m]), "%s *", metric_def[m].label);
		}
		return marked[m];
	}
	return metric_def[m].label;
}

/*
 * The two stamps of metric m; the reflector's -N (nx) ends its response at
 * the app's send, and --client-no-tx-ts (cx) starts the rtt at it.
 */
static void metric_pair(int m, bool nx, bool cx, int *b, int *a)
{
	*b = m == M_RESPONSE && nx ? T3SW : metric_def[m].b;
	*a = m == M_RTT && cx ? T1SW : metric_def[m].a;
}

/* The stamps metric m needs whether or not -N or --client-no-tx-ts is on, one bit per stamp. */
static unsigned metric_need(int m)
{
	int a, b, na, nb, ca, cb;

	if (m == M_NETWORK) {
		return 1u << T4W | 1u << T1W | 1u << T3W | 1u << T2W;
	}
	metric_pair(m, false, false, &b, &a);
	metric_pair(m, true, false, &nb, &na);
	metric_pair(m, false, true, &cb, &ca);
	return (1u << b | 1u << a) & (1u << nb | 1u << na) & (1u << cb | 1u << ca);
}

/* The stamps of t that metrics may use (stamp_diff's test), one bit per stamp. */
static unsigned stamps_known(const uint64_t *t)
{
	unsigned have = 0;
	int s;

	for (s = 0; s < NSTAMP; s++) {
		/* 0 < t < STAMP_MAX in one unsigned comparison (0 wraps to the top) */
		have |= (unsigned)(t[s] - 1 < STAMP_MAX - 1) << s;
	}
	return have;
}

/* Metric m as the difference of its stamps t, when the stamps it needs are known. */
static bool metric_stamps(int m, const uint64_t *t, int64_t *v)
{
	int64_t x, y;
	int a, b;

	if (m < 0 || m >= NMETRIC) {
		return false;
	}
	if (m == M_NETWORK) {
		if (!stamp_diff(t[T4W], t[T1W], &x) || !stamp_diff(t[T3W], t[T2W], &y)) {
			return false;
		}
		*v = x - y;
		return true;
	}
	metric_pair(m, resp_tx_app(), cli_no_tx(), &b, &a);
	return stamp_diff(t[b], t[a], v);
}

/*
 * The value of metric m from the stamps t, when the stamps it needs are
 * known: each app-vs-wire segment on one time base, this side's PHC offset
 * taken out, and on the client the reflector's too (its segments, once it
 * said its offset).
 */
static bool metric_value(int m, const uint64_t *t, int64_t *v)
{
	int64_t own, peer = 0;

	if (!metric_stamps(m, t, v)) {
		return false;
	}
	/* both offsets are bounded (STAMP_MAX, PEER_OFF_MAX); a sum past 64 bits is no value */
	own = wire_sign(m) * __atomic_load_n(&run.ts.wire_off, __ATOMIC_RELAXED);
	if (run.side.emit && run.ts.peer_off_on) {
		peer = wire_sign_of(m, false) * run.ts.peer_off;
	}
	return !__builtin_add_overflow(*v, own, v) && !__builtin_add_overflow(*v, peer, v);
}

/* Server minus client clock offset from the four wire stamps (NTP's formula). */
static bool clock_offset(const uint64_t *t, int64_t *off)
{
	int64_t a, b;

	if (!stamp_diff(t[T2W], t[T1W], &a) || !stamp_diff(t[T3W], t[T4W], &b)) {
		return false;
	}
	*off = (int64_t)(((__int128)a + b) / 2);
	return true;
}

/* What this side measures: the metrics (METRICS' order), stamps and headline metric. */
static int side_metrics[2][NMETRIC], side_nmetrics[2];

static void metric_lists(void)
{
	int m, k;

	for (k = 0; k < 2; k++) {
		side_nmetrics[k] = 0;
		for (m = 0; m < NMETRIC; m++) {
			if (metric_def[m].sides & (k ? MS_REFLECT : MS_EMIT)) {
				side_metrics[k][side_nmetrics[k]++] = m;
			}
		}
	}
}

/* The client's metrics: launch error and time to spare only with launch times (--txtime). */
static int emit_nmetrics(void)
{
	return side_nmetrics[0] - (tsn.on ? 0 : 2);
}

static void side_set(bool emit)
{
	int i;

	metric_lists();
	run.side.emit = emit;
	run.side.metrics = side_metrics[emit ? 0 : 1];
	run.side.nmetrics = emit ? emit_nmetrics() : side_nmetrics[1];
	run.side.stamps = emit ? emit_stamps : reflect_stamps;
	run.side.nstamps = emit ? (int)ARRAY_SIZE(emit_stamps) : (int)ARRAY_SIZE(reflect_stamps);
	run.side.primary = emit ? M_RTT : M_RESPONSE;
	run.side.mset = run.side.sset = run.side.uset = 0;
	memset(run.side.needed_by, 0, sizeof(run.side.needed_by));
	for (i = 0; i < run.side.nmetrics; i++) {
		int m = run.side.metrics[i], k;

		run.side.mset |= 1u << m;
		run.side.uset |= metric_need(m);
		for (k = 0; k < NSTAMP; k++) {
			run.side.needed_by[k] |= metric_need(m) & 1u << k ? 1u << m : 0;
		}
	}
	for (i = 0; i < run.side.nstamps; i++) {
		run.side.sset |= 1u << run.side.stamps[i];
	}
}

/*
 * With hardware stamps the kernel's stamps of the same packets are kept too
 * (T<n>_K): in the csv log, the missing counts and the breach listing.
 */
static const int emit_stamps_k[] = {
	T1SW, T1K, T1W, T2W, T2K, T2SW, T3SW, T3K, T3W, T4W, T4K, T4SW,
};
static const int reflect_stamps_k[] = { T2W, T2K, T2SW, T3SW, T3K, T3W };

static void side_kernel_stamps(void)
{
	int i;

	run.side.stamps = run.side.emit ? emit_stamps_k : reflect_stamps_k;
	run.side.nstamps = run.side.emit ? (int)ARRAY_SIZE(emit_stamps_k) :
					   (int)ARRAY_SIZE(reflect_stamps_k);
	for (i = 0; i < run.side.nstamps; i++) {
		run.side.sset |= 1u << run.side.stamps[i];
	}
}

/* Is this wire stamp a NIC stamp?  The server's may differ from ours. */
static bool stamp_hw(int s)
{
	if (!stamp_is_wire[s]) {
		return false;
	}
	if (s == T2W || s == T3W) {
		return run.side.emit ? sess.srv_hw : run.ts.hw;
	}
	return run.ts.hw;
}

static const char *stamp_name(int s, char *buf, size_t len)
{
	return stamp_label(s, stamp_hw(s), buf, len);
}

#define TF_BREACH	(1u << 9)
/* reflect: the pong had no room for T3 echoes (a --size below 64): its T3 is not queued */
#define TF_NO_ECHO	(1u << 10)
/* emit: on emit_later's list, to be accounted after a later send */
#define TF_LATER	(1u << 11)
/* emit, --txtime: the qdisc reported its launch time missed, or invalid (and dropped it) */
#define TF_LMISS	(1u << 12)
#define TF_LINVAL	(1u << 13)

/*
 * CLOCK_REALTIME steps.  Kernel software stamps and app stamps are
 * CLOCK_REALTIME, which NTP or an admin may step; CLOCK_MONOTONIC is never
 * stepped, and both are slewed alike (Documentation/timers/timekeeping.rst),
 * so REALTIME - MONOTONIC is constant between steps.  Each transaction's
 * REALTIME stamps must fall, on the MONOTONIC scale, between the monotonic
 * reads the loop already makes around it (emit: the send and the pong;
 * reflect: T2 before, T3 after its one read; with --spin, T2 before the
 * read after the pong, T3 after the last read before the ping).  A stamp
 * outside means a step larger than the round trip: the transaction is
 * marked "stepped", left out of the statistics, counted, and the report
 * warns.  A step smaller than the round trip is indistinguishable from
 * latency; if it makes a latency negative, that transaction is marked too,
 * never averaged in.
 */
#define CLK_STEPPED	1
#define CLK_TOL_NS	100000	/* error of the base estimate, and scheduling between reads */


/* REALTIME - MONOTONIC, from the tightest of three paired reads. */
static int64_t clk_offset(void)
{
	int64_t best = 0;
	uint64_t spread = UINT64_MAX;
	int i;

	for (i = 0; i < 3; i++) {
		uint64_t r1 = kops.clock(CLOCK_REALTIME), m = kops.clock(CLOCK_MONOTONIC),
			 r2 = kops.clock(CLOCK_REALTIME);

		if (r2 - r1 < spread) {
			spread = r2 - r1;
			best = (int64_t)(r1 + (r2 - r1) / 2 - m);
		}
	}
	return best;
}

static void clk_start(void)
{
	run.clk.base = clk_offset();
	run.clk.have = true;
	run.clk.steps = run.clk.stepped = 0;
	run.clk.last = 0;
}

static void clk_mark(struct txn *x)
{
	if (!(x->clk & CLK_STEPPED)) {
		x->clk |= CLK_STEPPED;
		run.clk.stepped++;
	}
}

/* Is realtime stamp v (0 = unknown) within [lo, hi] on the monotonic scale (0 = no bound)? */
static bool clk_in(uint64_t v, uint64_t lo, uint64_t hi)
{
	__int128 m;	/* a peer's stamp can be anything: no overflow on any value */

	if (!v) {
		return true;
	}
	m = (__int128)v - run.clk.base;
	return (!lo || m >= (__int128)lo - CLK_TOL_NS) && (!hi || m <= (__int128)hi + CLK_TOL_NS);
}

/* Check a received transaction's CLOCK_REALTIME stamps; re-base on a step. */
static void clk_check(struct txn *x)
{
	uint64_t lo, hi;
	bool ok, wire = !run.ts.hw;	/* NIC stamps are on the PHC, not CLOCK_REALTIME */

	if (!run.clk.have || !x->mono || (x->clk & CLK_STEPPED)) {
		return;
	}
	if (run.side.emit) {
		lo = x->deadline - cfg->timeout_ns;	/* read before the send */
		hi = x->mono;				/* read after the pong */
		ok = clk_in(x->t[T1SW], lo, hi) && clk_in(x->t[T4SW], lo, hi) &&
		     (!wire || (clk_in(x->t[T1W], lo, hi) && clk_in(x->t[T4W], lo, hi)));
	} else {
		hi = x->mono;		/* after T2 */
		lo = x->mono_lo;	/* before T3 (the same read, but with --spin) */
		ok = clk_in(x->t[T2SW], 0, hi) && clk_in(x->t[T3SW], lo, 0) &&
		     (!wire || (clk_in(x->t[T2W], 0, hi) && clk_in(x->t[T3W], lo, 0)));
	}
	if (!ok) {
		int64_t now = clk_offset();

		if (llabs(now - run.clk.base) > CLK_TOL_NS) {
			run.clk.steps++;
			run.clk.last = now - run.clk.base;
			run.clk.base = now;
		}
		clk_mark(x);
	}
}

/* Latencies between two stamps of one clock can never be negative. */
static bool metric_one_clock(int m)
{
	return metric_def[m].one_clock;
}

static void live_add(int64_t v)
{
	uint64_t u = v < 0 ? 0 : (uint64_t)v;

	__atomic_store_n(&run.live.samples, run.live.samples + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&run.live.sum, run.live.sum + u, __ATOMIC_RELAXED);
	if (run.live.samples == 1 || u < run.live.min) {
		__atomic_store_n(&run.live.min, u, __ATOMIC_RELAXED);
	}
	if (u > run.live.max) {
		__atomic_store_n(&run.live.max, u, __ATOMIC_RELAXED);
	}
}

/* A status that is a loss: the timeout's, or a launch time the qdisc dropped. */
static bool st_lost(int st)
{
	return st == ST_LOST || st == ST_LMISS || st == ST_LINVAL;
}

static int txn_status(const struct txn *x)
{
	if (x->st & TF_LATE) {
		return ST_LATE;
	}
	if (!(x->st & TF_RECEIVED)) {
		return x->st & TF_LMISS ? ST_LMISS : x->st & TF_LINVAL ? ST_LINVAL : ST_LOST;
	}
	if (x->clk & CLK_STEPPED) {
		return ST_STEPPED;
	}
	return x->st & TF_WARMUP ? ST_WARMUP : ST_OK;
}

/* ------------------------------------------------------------ the series */

/*
 * --series: the run as it goes.  Where the loop counts a packet or adds a
 * sample for the report (cls_count, cls_on_row), it also appends one event
 * of 16 bytes to a ring in the arena; the series thread (see "the series"
 * below) drains the ring and writes one JSON line per interval.  Every
 * event the report counts is in exactly one line, so the lines add up to
 * the report.  The loop never waits: with the ring full (a thread starved
 * of its CPU for longer than the ring holds) the event is dropped and
 * counted, and the line and the end say so.
 */
struct series_ev {
	int64_t v;
	uint32_t what;		/* CG_*, or SERIES_SAMPLE + the metric */
	uint32_t cls;
};
#define SERIES_SAMPLE	64

/* one interval's values of one metric (or of a class's primary metric) */
struct series_vals {
	int64_t *v;
	size_t n, cap;
};

/* An interval of the primary metric as its line gave it, kept for --plot. */
struct series_sum {
	uint64_t from, to, samples, sent, lost, breaches;
	int64_t min, p50, p99, p999, max;
};

static struct series_state {
	bool on;
	/* the ring: the loop writes at head, the thread reads at tail */
	struct series_ev *ring;
	uint64_t mask, head, tail, dropped;
	/* the thread's: where it writes, the interval being gathered */
	int fd;
	FILE *mem;		/* --analyze: the lines, written once the logs are read */
	char *mem_buf;
	size_t mem_len;
	char first[1024];	/* the first line (--analyze: made again once the rows are read) */
	int first_len;
	pthread_t thread;
	bool started, failed;	/* failed: a write (err, an errno) or memory (err 0) */
	int stop, err;
	uint64_t every_ns, start_mono, start_real, index, lines, drop_seen, pos, bytes;
	uint64_t n[CLS_MAX][NCG];
	struct series_vals m[NMETRIC], c[CLS_MAX];
} series = { .fd = -1 };

/* --plot with --series: every line's primary metric, drawn once the run ended */
static struct {
	struct series_sum *s;
	size_t n, cap;
} series_sums;

/* The loop's side: one event into the ring, or counted as dropped. */
/*
 * --series FILE: one JSON line (JSON Lines) per --series-every seconds
 * while the client runs, written by a thread of its own (thread_start: never
 * the loop, which only appends events, series_put), plus a first line that
 * says what follows and a last that says how it ended.  An interval's line
 * holds what rant accounted in it: packets sent, answered, lost, late and
 * warm-up, threshold breaches, and each metric's samples with their exact
 * minimum, p50, p99, p99.9 and maximum (nearest rank over the interval's
 * sorted samples), per class too.  The thread drains the ring every
 * SERIES_DRAIN_NS, so a packet's interval is the one in which rant counted
 * it, to within that.  --analyze gives the same lines from a client's log,
 * each row in the interval of its T1 (the log keeps no accounting time).
 */
#define SERIES_DRAIN_NS	(20 * NSEC_PER_US * 1000)
/* the ring holds this long of the fastest the run can go: the thread's slack */
#define SERIES_HOLD_NS	(250 * NSEC_PER_US * 1000)

/* Events the ring needs (a power of two), from the run's cadence; 0: no --series. */
static uint64_t series_ring_len(void)
{
	uint64_t per_s = cfg->interval_ns ? NSEC_PER_SEC / cfg->interval_ns + 1 : 200000;
	uint64_t n = per_s * (NCG + NMETRIC) * (SERIES_HOLD_NS / 1000) / (NSEC_PER_SEC / 1000);

	if (!cfg->series) {
		return 0;
	}
	n = n < 65536 ? 65536 : n > (1u << 21) ? (1u << 21) : n;
	return pow2_at_least(n);
}

static void series_vals_add(struct series_vals *sv, int64_t v)
{
	if (sv->n == sv->cap) {
		size_t cap = sv->cap ? 2 * sv->cap : 1024;
		int64_t *p = realloc(sv->v, cap * sizeof(*p));

		if (!p) {
			series.failed = true;	/* said at the end; the counts go on */
			return;
		}
		sv->v = p;
		sv->cap = cap;
	}
	sv->v[sv->n++] = v;
}

/* One event into the interval being gathered. */
static void series_take(const struct series_ev *e)
{
	uint32_t c = e->cls < CLS_MAX ? e->cls : CLS_MAX - 1;

	if (e->what < NCG) {
		series.n[c][e->what]++;
		return;
	}
	if (e->what - SERIES_SAMPLE < NMETRIC) {
		int m = (int)(e->what - SERIES_SAMPLE);

		series_vals_add(&series.m[m], e->v);
		if (m == run.side.primary) {
			series_vals_add(&series.c[c], e->v);
		}
	}
}

/* The thread's side: every event the loop has published. */
static void series_drain(void)
{
	uint64_t head = __atomic_load_n(&series.head, __ATOMIC_ACQUIRE), t = series.tail;

	for (; t != head; t++) {
		series_take(&series.ring[t & series.mask]);
	}
	__atomic_store_n(&series.tail, t, __ATOMIC_RELEASE);
}

/* A metric's samples of the interval: count, exact extremes and percentiles. */
static void series_stats(FILE *f, const char *key, struct series_vals *sv, struct series_sum *out)
{
	static const uint64_t p[] = { 5000, 9900, 9990 };	/* per 10000 */
	static const char *const pk[] = { "p50", "p99", "p99.9" };
	int64_t v[ARRAY_SIZE(p)];
	size_t k;

	fprintf(f, "\"%s\": {\"samples\": %zu, ", key, sv->n);
	if (!sv->n) {
		fprintf(f, "\"min_ns\": null, \"max_ns\": null, \"percentiles_ns\": null}");
		return;
	}
	qsort(sv->v, sv->n, sizeof(*sv->v), cmp_i64);
	fprintf(f, "\"min_ns\": %" PRId64 ", \"max_ns\": %" PRId64 ", \"percentiles_ns\": {",
		sv->v[0], sv->v[sv->n - 1]);
	for (k = 0; k < ARRAY_SIZE(p); k++) {
		/* nearest rank: the smallest value with p % of the samples at or below it */
		size_t r = (size_t)((p[k] * sv->n + 9999) / 10000);

		v[k] = sv->v[r ? r - 1 : 0];
		fprintf(f, "%s\"%s\": %" PRId64, k ? ", " : "", pk[k], v[k]);
	}
	fputs("}}", f);
	if (out) {
		out->samples = sv->n;
		out->min = sv->v[0];
		out->max = sv->v[sv->n - 1];
		out->p50 = v[0];
		out->p99 = v[1];
		out->p999 = v[2];
	}
	sv->n = 0;
}

/* --plot: the interval's line kept (a failed allocation: the plot says fewer) */
static void series_keep(const struct series_sum *sum)
{
	if (!cfg->plot) {
		return;
	}
	if (series_sums.n == series_sums.cap) {
		size_t cap = series_sums.cap ? 2 * series_sums.cap : 256;
		struct series_sum *p = realloc(series_sums.s, cap * sizeof(*p));

		if (!p) {
			return;
		}
		series_sums.s = p;
		series_sums.cap = cap;
	}
	series_sums.s[series_sums.n++] = *sum;
}

static void series_packets(FILE *f, const uint64_t *n)
{
	fprintf(f, "\"packets\": {\"sent\": %" PRIu64 ", \"received\": %" PRIu64 ", \"lost\": %"
		PRIu64 ", \"late\": %" PRIu64 ", \"warmup\": %" PRIu64 "}, \"threshold_breaches\": %"
		PRIu64, n[CG_SENT], n[CG_RECEIVED], n[CG_LOST], n[CG_LATE], n[CG_WARMUP],
		n[CG_BREACH]);
	if (tsn.on) {
		/* --txtime: launch times the qdisc reported missed or invalid (their pings lost) */
		fprintf(f, ", \"launch\": {\"missed\": %" PRIu64 ", \"invalid\": %" PRIu64 "}",
			n[CG_LMISS], n[CG_LINVAL]);
	}
}

/* The classes a line lists: the run's, or (--analyze) as many as the rows named. */
static int series_ncls(void)
{
	/* --analyze: the classes the rows named so far (classes.ncls is CLS_MAX while it reads) */
	int c, n = classes.analyze ? 1 : classes.ncls > 1 ? classes.ncls : 1;

	for (c = n; c < CLS_MAX; c++) {
		if (series.n[c][CG_SENT]) {
			n = c + 1;
		}
	}
	return n;
}

/* A line out: to the file now, or (--analyze) kept until the logs are read. */
static void series_out(const char *buf, size_t len)
{
	if (series.mem) {
		fwrite(buf, 1, len, series.mem);
	} else if (!series.failed) {
		int r = write_all(series.fd, buf, len);
		struct stat sb;

		series.failed = r < 0;
		series.err = -r;
		/* a line cut by a full disk: the file ends with the last whole one */
		if (r < 0 && strcmp(cfg->series, "-") && fstat(series.fd, &sb) == 0 &&
		    S_ISREG(sb.st_mode) &&
		    ftruncate(series.fd, (off_t)series.bytes) < 0) {
			series.err = errno;
		}
		series.bytes += len;
	}
}

/* The interval [from, to) ns after the start: its line, and a clean slate. */
static void series_line(uint64_t from, uint64_t to)
{
	uint64_t tot[NCG] = { 0 }, dropped = __atomic_load_n(&series.dropped, __ATOMIC_RELAXED);
	struct series_sum sum = { .from = from, .to = to };
	int c, k, i, ncls = series_ncls();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		series.failed = true;
		return;
	}
	for (c = 0; c < CLS_MAX; c++) {
		for (k = 0; k < NCG; k++) {
			tot[k] += series.n[c][k];
		}
	}
	fprintf(f, "{\"type\": \"interval\", \"interval\": %" PRIu64 ", \"start_s\": %.3f, \"end_s\": %.3f, "
		"\"time_ns\": %" PRIu64 ", ", series.index, (double)from / 1e9, (double)to / 1e9,
		series.start_real + to);
	series_packets(f, tot);
	fprintf(f, ", \"dropped\": %" PRIu64 ", \"metrics\": {", dropped - series.drop_seen);
	series.drop_seen = dropped;
	/* the primary always; the others when the interval gave them samples */
	for (i = 0, k = 0; i < run.side.nmetrics; i++) {
		int m = run.side.metrics[i];

		if (series.m[m].n || m == run.side.primary) {
			fputs(k++ ? ", " : "", f);
			series_stats(f, metric_def[m].key, &series.m[m],
				     m == run.side.primary ? &sum : NULL);
		}
	}
	fputc('}', f);
	if (ncls > 1) {
		fputs(", \"classes\": [", f);
		for (c = 0; c < ncls; c++) {
			fprintf(f, "%s{\"class\": %d, ", c ? ", " : "", c);
			series_packets(f, series.n[c]);
			fputs(", ", f);
			series_stats(f, metric_def[run.side.primary].key, &series.c[c], NULL);
			fputc('}', f);
		}
		fputc(']', f);
	}
	fputs("}\n", f);
	memset(series.n, 0, sizeof(series.n));
	for (i = 0; i < NMETRIC; i++) {
		series.m[i].n = 0;	/* a metric not listed: nothing was added */
	}
	for (c = 0; c < CLS_MAX; c++) {
		series.c[c].n = 0;
	}
	if (fclose(f) == 0) {
		series_out(buf, len);
	} else {
		series.failed = true;
	}
	free(buf);
	sum.sent = tot[CG_SENT];
	sum.lost = tot[CG_LOST];
	sum.breaches = tot[CG_BREACH];
	series_keep(&sum);
	series.index++;
	series.lines++;
}

/* Every interval that ended by `at` ns after the start gets its line. */
static void series_due(uint64_t at)
{
	/* by division: (index + 1) * every could wrap past 2^64 after a skip */
	while (at / series.every_ns > series.index) {
		series_line(series.index * series.every_ns, (series.index + 1) * series.every_ns);
	}
}

/* The first line: what follows. */
static void series_head(void)
{
	char *buf = series.first;
	int i, n;

	n = snprintf(buf, sizeof(series.first), "{\"type\": \"start\", \"rant\": \"%s\", \"side\": \"client\", "
		     "\"source\": \"%s\", \"every_s\": %.3f, \"time_ns\": %" PRIu64 ", \"metrics\": [",
		     RANT_VERSION, series.mem ? "log" : "live", (double)series.every_ns / 1e9,
		     series.start_real);
	for (i = 0; i < run.side.nmetrics && n < (int)sizeof(series.first) - 64; i++) {
		n += snprintf(buf + n, sizeof(series.first) - (size_t)n, "%s\"%s\"", i ? ", " : "",
			      metric_def[run.side.metrics[i]].key);
	}
	n += snprintf(buf + n, sizeof(series.first) - (size_t)n, "], \"classes\": %d}\n",
		      classes.ncls > 1 ? classes.ncls : 1);
	series.first_len = n;
	if (!series.mem) {
		series_out(buf, (size_t)n);	/* --analyze: written before the lines at the end */
	}
}

/* The last line: how many intervals, what was dropped, why the run ended. */
static void series_tail(void)
{
	char buf[256];
	/* --analyze: a log does not say why its run stopped */
	int n = snprintf(buf, sizeof(buf), "{\"type\": \"end\", \"intervals\": %" PRIu64
			 ", \"dropped\": %" PRIu64 ", \"stop_reason\": %s%s%s}\n", series.lines,
			 __atomic_load_n(&series.dropped, __ATOMIC_RELAXED), series.mem ? "" : "\"",
			 series.mem ? "null" : stop_name[sess.stop_reason], series.mem ? "" : "\"");

	series_out(buf, (size_t)n);
}

static void *series_main(void *arg)
{
	struct timespec next;

	(void)arg;
	thread_own_files(&series.fd, 1);
	clock_gettime(CLOCK_MONOTONIC, &next);
	while (!__atomic_load_n(&series.stop, __ATOMIC_ACQUIRE)) {
		next.tv_nsec += (long)SERIES_DRAIN_NS;
		if (next.tv_nsec >= (long)NSEC_PER_SEC) {
			next.tv_nsec -= (long)NSEC_PER_SEC;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		series_drain();
		series_due(mono_ns() - series.start_mono);
	}
	return NULL;
}

/* The live run's series begins (the first ping goes next). */
static void series_start(void)
{
	if (!series.on) {
		return;
	}
	series.every_ns = (uint64_t)(cfg->series_s * 1e9);
	series.start_mono = mono_ns();
	series.start_real = real_ns();
	series_head();
	series.started = thread_start(&series.thread, series_main);
	if (!series.started) {
		warnx_("warning: --series: no thread for it (%s): its lines come at the end", strerror(errno));
	}
}

/* The vals' memory back, and the file closed. */
static void series_free(void)
{
	int i;

	for (i = 0; i < NMETRIC; i++) {
		free(series.m[i].v);
	}
	for (i = 0; i < CLS_MAX; i++) {
		free(series.c[i].v);
	}
	if (series.fd >= 0) {
		close(series.fd);
	}
	if (series.mem) {
		fclose(series.mem);
		free(series.mem_buf);
	}
	memset(&series, 0, sizeof(series));
	series.fd = -1;
}

/* Said once the series is complete: why its lines may not add up to the report; -1: failed. */
static int series_say(void)
{
	uint64_t d = __atomic_load_n(&series.dropped, __ATOMIC_RELAXED);

	if (d) {
		warnx_("warning: --series: %" PRIu64 " events did not fit its ring (its thread was kept"
		       " from its CPU): its lines add up to less than the report", d);
	}
	if (series.failed && series.err) {
		warnx_("--series: writing %s failed: %s", cfg->series, strerror(series.err));
	} else if (series.failed) {
		warnx_("--series: out of memory: lines are missing from %s", cfg->series);
	}
	return series.failed ? -1 : 0;
}

/* The live run ended: the thread stopped, the last events in the last line; -1: failed. */
static int series_end(void)
{
	int r;

	if (!series.on) {
		return 0;
	}
	if (series.started) {
		__atomic_store_n(&series.stop, 1, __ATOMIC_RELEASE);
		pthread_join(series.thread, NULL);
	}
	series_drain();
	series_due(mono_ns() - series.start_mono);
	series_line(series.index * series.every_ns, mono_ns() - series.start_mono);
	series_tail();
	r = series_say();
	series_free();
	return r;
}

/* --analyze: the row about to be accounted began at t0 (0: unknown, the interval goes on). */
static void series_row(uint64_t t0)
{
	if (!series.on || !t0) {
		return;
	}
	if (!series.start_real) {
		series.start_real = t0;
	}
	if (t0 > series.start_real) {
		uint64_t at = t0 - series.start_real;

		/* a silence of more than 3600 lines: skipped, the next line's start says so */
		if (at / series.every_ns > series.index + 3600) {
			series_line(series.index * series.every_ns,
				    (series.index + 1) * series.every_ns);
			series.index = at / series.every_ns;
		}
		series_due(at);
	}
	series.pos = t0 > series.pos ? t0 : series.pos;
}

/* --analyze: every row read; the last interval and the end line. */
static void series_rows_end(void)
{
	uint64_t from, to;

	if (!series.on) {
		return;
	}
	if (!series.start_real) {
		/* no row had a time: one line of what was counted */
		series.start_real = real_ns();
	}
	/* the last interval ends just after the last row's T1 */
	from = series.index * series.every_ns;
	to = series.pos >= series.start_real ? series.pos - series.start_real + 1 : 0;
	series_line(from, to > from ? to : from + series.every_ns);
	series_tail();
	series_head();	/* the classes now known */
	fflush(series.mem);
}

/* The loop's side: one event into the ring, or counted as dropped. */
static void series_put(uint32_t what, uint32_t cls, int64_t v)
{
	struct series_ev e;

	e.v = v;
	e.what = what;
	e.cls = cls;
	if (!series.ring) {
		series_take(&e);	/* --analyze: no thread, the row's interval is known */
		return;
	}
	if (series.head - __atomic_load_n(&series.tail, __ATOMIC_ACQUIRE) > series.mask) {
		__atomic_store_n(&series.dropped, series.dropped + 1, __ATOMIC_RELAXED);
		return;
	}
	series.ring[series.head & series.mask] = e;
	__atomic_store_n(&series.head, series.head + 1, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------ classes, sizes */

/*
 * Experiments in one run.  A --priority or --tos list makes classes that run
 * side by side in one session: each class has its own connected socket with
 * its own SO_PRIORITY and IP_TOS / IPV6_TCLASS, so that prio, mqprio and
 * taprio qdiscs put it in its own queue and gate (tc-mqprio(8): the skb
 * priority picks the traffic class); pings go round-robin over the classes,
 * and class k owns the sequence numbers seq % nclasses == k.  A --size list
 * measures each size in turn (-d or --count each, warm-up each); the ping's
 * length says which.  Both lists give the class x size matrix.  The counters
 * and the primary metric of every row live here, outside struct session, so a
 * plain run (one class, one size) touches none of it.
 */

static bool cls_multi(void)
{
	return classes.ncls > 1 || classes.nsz > 1;
}

/* Back to a plain run (cfg_defaults: the unit tests parse many command lines). */
static void cls_defaults(void)
{
	memset(&classes, 0, sizeof(classes));
	classes.ncls = classes.nsz = 1;
	classes.rx_tos = classes.r_prio = classes.r_tos = -1;
}

/* The classes side by side, each on its own socket (cls_use): 1 in a plain run. */
static int cls_classes(void)
{
	return classes.ncls;
}

/* The sizes measured in turn (each -d or --count long): 1 in a plain run. */
static uint64_t cls_sizes(void)
{
	return (uint64_t)classes.nsz;
}

/* --interval is a list: each class on its own cadence (cls_due). */
static bool cls_paced(void)
{
	return classes.nival > 0;
}

/* After --interval as typed: a list's cadence, that of all its classes together ("" else). */
static void cls_interval_all(char *all, size_t len)
{
	all[0] = 0;
	if (cls_paced()) {
		snprintf(all, len, " (all classes together: one ping every %.3g us)",
			 (double)cfg->interval_ns / 1000);
	}
}

/* The lists the options take (opt_cls_list, the one parser of them all). */
enum { CL_SIZE, CL_IVAL, CL_PRIO, CL_TOS };

/* A list given (n values, each in the option's range): the classes and sizes it makes. */
static void cls_list_set(int what, const uint64_t *v, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		if (what == CL_SIZE) {
			classes.size[i] = (unsigned)v[i];
		} else if (what == CL_IVAL) {
			classes.ival[i] = v[i] * NSEC_PER_US;
		} else {
			(what == CL_PRIO ? classes.prio : classes.tos)[i] = (int)v[i];
		}
	}
	*(what == CL_SIZE ? &classes.nsz : what == CL_IVAL ? &classes.nival :
	  what == CL_PRIO ? &classes.nprio : &classes.ntos) = n;
}

/*
 * The lists given, checked together and made into classes and sizes (a
 * plain run: one class of one size, the run's priority, TOS and size).  A
 * list of --interval sets the run's cadence, all classes together: into
 * *interval_ns.  After every option is parsed (opt_check).
 */
static int cls_setup_lists(uint64_t *interval_ns)
{
	int i;

	if (classes.nprio > 1 && classes.ntos > 1 && classes.nprio != classes.ntos) {
		warnx_("--tos: %d values against %d of --priority; give one of them, or as many as the other (one pair per class)",
		       classes.ntos, classes.nprio);
		return -1;
	}
	classes.ncls = classes.nprio > classes.ntos ? classes.nprio : classes.ntos;
	if (classes.ncls < 1) {
		classes.ncls = 1;
	}
	if (classes.ncls > 1 && classes.nprio == 1 && cfg->priority > 14) {
		/* every class carries it in 4 bits of its pings (cls_before_send) */
		warnx_("--priority: %d with a --tos list; the classes carry their priority in the ping, 0 to 14",
		       cfg->priority);
		return -1;
	}
	for (i = 0; i < classes.ncls; i++) {
		if (classes.nprio <= 1) {
			classes.prio[i] = cfg->priority;
		}
		if (classes.ntos <= 1) {
			classes.tos[i] = cfg->tos;
		}
	}
	if (classes.nsz <= 1) {
		classes.nsz = 1;
		classes.size[0] = cfg->size;
	}
	classes.tx_size = classes.size[0];
	if (classes.nival) {
		double rate = 0;

		if (classes.nival != classes.ncls || classes.ncls < 2) {
			warnx_("--interval: %d values for %d classes; a list gives each class of --priority/--tos its own cadence",
			       classes.nival, classes.ncls);
			return -1;
		}
		/* the run's cadence is all classes together: window, log and idle hint follow it */
		for (i = 0; i < classes.ncls; i++) {
			rate += 1.0 / (double)classes.ival[i];
		}
		*interval_ns = (uint64_t)(1.0 / rate);
		if (!*interval_ns) {
			*interval_ns = 1;
		}
	}
	if (cfg->mode == MODE_REFLECT && classes.ncls > 1) {
		warnx_("%s: a list is for emit (-a ADDR); the reflector answers each class in the class of its ping",
		       classes.nprio > 1 ? "--priority" : "--tos");
		return -1;
	}
	if (classes.nsz > 1 && !cfg->count && !(cfg->duration_s > 0)) {
		warnx_("--size: a list needs -d SEC or --count N (how long each size is measured)");
		return -1;
	}
	return 0;
}

/* Emit with classes: the loop has more than one socket to wait on. */
static bool cls_multi_sock(void)
{
	return run.side.emit && classes.ncls > 1 && classes.fd[1] > 0;
}

static int cls_of(uint64_t seq)
{
	if (classes.cmap) {
		return classes.cmap[seq & classes.cmap_mask];
	}
	return (int)(seq % (uint64_t)classes.ncls);
}

/* Which size a sequence number was sent with (sizes are measured in order). */
static int size_of(uint64_t seq)
{
	int i;

	for (i = classes.phase; i > 0; i--) {
		if (seq >= classes.phase_seq0[i]) {
			break;
		}
	}
	return i;
}

/* The length of the ping with this seq: a pong must have exactly that. */
static size_t ping_len(uint64_t seq)
{
	size_t n = classes.nsz ? classes.size[size_of(seq)] : 0;

	return n ? n : cfg->size;
}

/*
 * The echoed field (PF_T2W .. PF_T3W) that carries a reflector's stamp s to
 * the client, 0 for the client's own stamps.
 */
static uint16_t stamp_field(int s)
{
	return s == T2W ? PF_T2W : s == T2SW ? PF_T2SW : s == T3SW ? PF_T3SW :
	       s == T3W ? PF_T3W : 0;
}

/*
 * Emit: the reflector's stamps (1 << stamp) the pong of seq has no room for
 * (a --size below 64): never counted missing.  The usual run: none.
 */
static unsigned stamps_uncarried(uint64_t seq)
{
	static const int srv[] = { T2W, T2SW, T3SW, T3W };
	unsigned m = 0, i;
	uint16_t room;

	if (classes.a_bytes) {
		room = proto_room(classes.a_bytes);	/* --analyze: the size the log gives */
	} else if (classes.nsz <= 1 && cfg->size >= PROTO_HDR_LEN) {
		return 0;
	} else {
		room = proto_room(ping_len(seq));
	}
	for (i = 0; i < ARRAY_SIZE(srv); i++) {
		m |= room & stamp_field(srv[i]) ? 0 : 1u << srv[i];
	}
	return m;
}

/* The class of a transaction, 0 in a plain run (--analyze: its row's). */
static uint32_t cls_index(uint64_t seq)
{
	return classes.analyze ? (uint32_t)classes.a_cls :
	       classes.ncls > 1 ? (uint32_t)cls_of(seq) : 0;
}

/* The rows a transaction belongs to: its class, its size, its cell. */
static int cls_rows(uint64_t seq, struct grp **rows)
{
	int c = classes.analyze ? classes.a_cls : cls_of(seq),
	    z = classes.analyze ? classes.a_size : size_of(seq), n = 0;

	if (classes.ncls > 1) {
		rows[n++] = &classes.g[c];
	}
	if (classes.nsz > 1) {
		rows[n++] = &classes.g[classes.ncls + z];
	}
	if (classes.ncls > 1 && classes.nsz > 1) {
		rows[n++] = &classes.g[classes.ncls + classes.nsz + c * classes.nsz + z];
	}
	return n;
}

static void cls_count(uint64_t seq, int what)
{
	struct grp *rows[3];
	int i, n = classes.g ? cls_rows(seq, rows) : 0;

	if (series.on) {
		series_put((uint32_t)what, cls_index(seq), 0);
	}

	for (i = 0; i < n; i++) {
		rows[i]->n[what]++;
	}
}

static void cls_sample(uint64_t seq, int64_t v)
{
	struct grp *rows[3];
	int i, n = classes.g ? cls_rows(seq, rows) : 0;

	for (i = 0; i < n; i++) {
		hist_add(&rows[i]->h, v, seq);
	}
}

/* The metrics of struct grp's x[], in order. */
static const int grp_xm[GX_N] = { M_APP_RTT, M_CLI_TX, M_LAUNCH_ERR, M_SPARE };
static const char *const grp_xlabel[GX_N] = { "app rtt", "tx stack", "launch er", "to spare" };

/* Does a row keep x[k]?  The launch metrics only with launch times (--txtime). */
static bool cls_x_on(int k)
{
	return k < GX_LAUNCH || tsn.on;
}

/* Do the rows keep app rtt and client tx stack (emit, app stamps on: -s)? */
static bool cls_extra(void)
{
	return run.side.emit && cfg->sw_stamps;
}

/* Metric m of a transaction into its rows, when they keep it (cls_extra). */
static void cls_sample_x(uint64_t seq, int m, int64_t v)
{
	struct grp *rows[3];
	int i, k, n;

	if (!classes.g || !cls_extra()) {
		return;		/* a plain run, or no app stamps */
	}
	for (k = 0; k < GX_N && grp_xm[k] != m; k++) {
	}
	if (k == GX_N || !cls_x_on(k)) {
		return;
	}
	n = cls_rows(seq, rows);
	for (i = 0; i < n; i++) {
		hist_add(&rows[i]->x[k], v, seq);
	}
}

/*
 * The hook on a transaction's row: metric m's value v into the rows of its
 * class, size and cell (the primary metric; app rtt and client tx stack too
 * with app stamps, cls_extra).  A plain run has no rows: nothing to do.
 */
static void cls_on_row(uint64_t seq, int m, int64_t v)
{
	if (series.on) {
		series_put(SERIES_SAMPLE + (uint32_t)m, cls_index(seq), v);
	}
	if (!classes.g) {
		return;
	}
	cls_sample_x(seq, m, v);
	if (m == run.side.primary) {
		cls_sample(seq, v);
	}
}

/* Emit: the hook on a ping answered (warm: a warm-up one), any class and size. */
static void cls_on_answer(uint64_t seq, bool warm)
{
	cls_count(seq, CG_RECEIVED);
	if (warm) {
		cls_count(seq, CG_WARMUP);
	}
}

/* One row's histogram (its exact store as large as a metric's: tails above -o alike). */
static int cls_hist_alloc(struct hist *h, uint64_t nb, uint64_t out_cap)
{
	uint64_t nlh = hist_lh_room(out_cap, cfg->bound_ns);
	uint64_t *b = calloc(nb, 8), *lh = nlh ? calloc(nlh, 8) : NULL;
	int64_t *o = calloc(out_cap ? out_cap : 1, 8);

	if (!b || !o || (nlh && !lh)) {
		free(b);
		free(o);
		free(lh);
		warnx_("cannot allocate the class/size tables: %s", strerror(errno));
		return -1;
	}
	hist_init(h, cfg->bucket_ns, cfg->bound_ns, b, o, out_cap, lh);
	return 0;
}

/* Rows and their histograms, before the memory is locked. */
static int cls_alloc(uint64_t out_cap)
{
	uint64_t nb = (cfg->bound_ns + cfg->bucket_ns - 1) / cfg->bucket_ns;
	int i, k;

	if (!cls_multi()) {
		return 0;
	}
	classes.ng = classes.ncls + classes.nsz + classes.ncls * classes.nsz;
	classes.g = calloc((size_t)classes.ng, sizeof(*classes.g));
	if (!classes.g) {
		warnx_("cannot allocate the class/size tables: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < classes.ng; i++) {
		if (cls_hist_alloc(&classes.g[i].h, nb, out_cap) < 0) {
			return -1;
		}
		for (k = 0; cls_extra() && k < GX_N && cls_x_on(k); k++) {
			if (cls_hist_alloc(&classes.g[i].x[k], nb, out_cap) < 0) {
				return -1;
			}
		}
	}
	return 0;
}

/* Make class k's socket the one the loop sends, receives and drains on. */
static void cls_use(int k)
{
	if (k == classes.cur) {
		return;
	}
	classes.next_key[classes.cur] = run.ts.next_key;
	classes.keyseq[classes.cur] = emitter.keyseq;
	classes.cur = k;
	run.sock_fd = classes.fd[k];
	run.ts.next_key = classes.next_key[k];
	emitter.keyseq = classes.keyseq[k];
}

/* Emit: the run starts; with a --size list and -d, each size is measured -d long. */
static void cls_run_start(void)
{
	classes.phase_ns = (uint64_t)(cfg->duration_s * 1e9);
}

/* Warm-up: the first -w pings of each size. */
static bool cls_warmup(uint64_t seq)
{
	return seq - classes.phase_seq0[classes.phase] < cfg->warmup;
}

/* With classes: the flags that carry the class of the ping about to go (cls_use'd). */
static uint16_t cls_flags(void)
{
	return (uint16_t)(PF_CLASS |
			  (classes.prio[classes.cur] >= 0 ?
				   (unsigned)(classes.prio[classes.cur] + 1) << PF_PRIO_SHIFT :
				   0));
}

/*
 * The hook before a ping, a plain run's too (one class of one size): its
 * size measured now, its class's socket, the flags that carry its class
 * and warm-up (PF_WARMUP: the first -w pings of each size) into *flags.
 * Returns the ping's length.
 */
static size_t cls_before_send(uint64_t seq, uint64_t now, uint16_t *flags)
{
	int ph = classes.phase;

	if (classes.nsz > 1) {
		if (cfg->count) {
			ph = (int)(seq / (cfg->warmup + cfg->count));
		} else if (classes.phase_ns && now > sess.start_mono) {
			ph = (int)((now - sess.start_mono) / classes.phase_ns);
		}
		if (ph >= classes.nsz) {
			ph = classes.nsz - 1;
		}
		while (classes.phase < ph) {
			/* a size -d skipped entirely gets none */
			classes.phase_seq0[++classes.phase] = seq;
			classes.tx_size = classes.size[classes.phase];
		}
	}
	if (classes.ncls > 1) {
		cls_use(cls_of(seq));
		*flags |= cls_flags();
	}
	if (cls_warmup(seq)) {
		*flags |= PF_WARMUP;
	}
	return classes.tx_size;
}

/*
 * --interval with a list, each class on its own absolute cadence from the
 * run's start: the class due first, and when.
 */
static int cls_due(uint64_t *when)
{
	int k, b = 0;

	for (k = 0; k < classes.ncls; k++) {
		if (!classes.next[k]) {
			classes.next[k] = sess.start_mono;
		}
		if (classes.next[k] < classes.next[b]) {
			b = k;
		}
	}
	*when = classes.next[b];
	return b;
}

/*
 * Class b's slot taken at now by the ping seq: its class recorded (cls_of),
 * its next slot set.  Returns the slots it let pass (skipped, not sent).
 */
static uint64_t cls_due_taken(int b, uint64_t seq, uint64_t now)
{
	uint64_t skip = 0;

	classes.cmap[seq & classes.cmap_mask] = (uint8_t)b;
	classes.next[b] += classes.ival[b];
	if (classes.next[b] <= now) {
		skip = (now - classes.next[b]) / classes.ival[b] + 1;
		classes.next[b] += skip * classes.ival[b];
	}
	return skip;
}

/*
 * Interval mode and the end of the run: wait on every class's socket, until
 * t passes or (tfd >= 0, t NULL) the wake-up timer fires.
 */
static int cls_wait_on(const struct timespec *t, short events, int tfd)
{
	struct pollfd p[CLS_MAX + 1];
	int k, n = classes.ncls;

	for (k = 0; k < n; k++) {
		p[k] = (struct pollfd){ classes.fd[k], events, 0 };
	}
	if (tfd >= 0) {
		p[n++] = (struct pollfd){ tfd, POLLIN, 0 };
	}
	if (ppoll(p, (nfds_t)n, t, NULL) <= 0) {
		return 0;
	}
	/* a socket with datagrams first: another's TX stamps must not hide them */
	for (k = 0; k < classes.ncls; k++) {
		if (p[k].revents & POLLIN) {
			cls_use(k);
			return p[k].revents;
		}
	}
	for (k = 0; k < classes.ncls; k++) {
		if (p[k].revents) {
			cls_use(k);
			return p[k].revents;
		}
	}
	return 0;
}

static void cls_set_rcvtimeo(const struct timeval *tv)
{
	int k;

	for (k = 1; run.side.emit && k < classes.ncls; k++) {
		setsockopt(classes.fd[k], SOL_SOCKET, SO_RCVTIMEO, tv, sizeof(*tv));
	}
}

/* Reflect, before each receive: no TOS known until its control data says. */
static void cls_rx_begin(void)
{
	classes.rx_tos = -1;
}

/* Reflect: the TOS / traffic class the ping arrived with (IP_RECVTOS). */
static void cls_rx_tos(const struct cmsghdr *cm)
{
	if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_TOS &&
	    cm->cmsg_len >= CMSG_LEN(1)) {
		classes.rx_tos = *(const uint8_t *)CMSG_DATA(cm);
	} else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_TCLASS &&
		   cm->cmsg_len >= CMSG_LEN(sizeof(int))) {
		int v;

		memcpy(&v, CMSG_DATA(cm), sizeof(v));
		classes.rx_tos = v & 0xff;
	}
}

static void cls_session_reset(void)
{
	int i, k;

	classes.rn = 0;
	memset(classes.r, 0, sizeof(classes.r));
	classes.phase = 0;
	memset(classes.phase_seq0, 0, sizeof(classes.phase_seq0));
	classes.tx_size = classes.size[0];
	for (i = 0; classes.g && i < classes.ng; i++) {
		memset(classes.g[i].n, 0, sizeof(classes.g[i].n));
		hist_reset(&classes.g[i].h);
		for (k = 0; cls_extra() && k < GX_N && cls_x_on(k); k++) {
			hist_reset(&classes.g[i].x[k]);
		}
	}
}

/* The label of a class row: priority and TOS as given. */
static char *cls_label(char *buf, size_t len, int c)
{
	char p[16] = "-", t[16] = "-";

	if (classes.analyze) {
		snprintf(buf, len, "%d", c);	/* a log knows the class by its index */
		return buf;
	}
	if (classes.prio[c] >= 0) {
		snprintf(p, sizeof(p), "%d", classes.prio[c]);
	}
	if (classes.tos[c] >= 0) {
		snprintf(t, sizeof(t), "0x%02x", classes.tos[c]);
	}
	if (classes.nival) {
		snprintf(buf, len, "%d  prio %s tos %s %" PRIu64 "us", c, p, t,
			 (uint64_t)(classes.ival[c] / NSEC_PER_US));
		return buf;
	}
	snprintf(buf, len, "%d  prio %s tos %s", c, p, t);
	return buf;
}

/* CLASS and SIZE log columns (header when seq is NULL) of a run with lists. */
static char *cls_log_cols(char *p, bool csv, const uint64_t *seq)
{
	if (!run.side.emit || classes.analyze || !classes.g) {
		return p;
	}
	if (classes.ncls > 1) {
		p = seq ? fmt_u64(fmt_str(p, csv ? "," : " "), (uint64_t)cls_of(*seq)) :
			  fmt_str(p, csv ? ",class" : " CLASS");
	}
	if (classes.nsz > 1) {
		p = seq ? fmt_u64(fmt_str(p, csv ? "," : " "), classes.size[size_of(*seq)]) :
			  fmt_str(p, csv ? ",size" : " SIZE");
	}
	return p;
}

/* For breach lines and trace markers: which class and size a transaction was. */
static char *cls_note(char *buf, size_t len, uint64_t seq)
{
	int n = 0;

	buf[0] = 0;
	if (classes.analyze) {
		return buf;	/* a log row's class and size are in its columns, not in its seq */
	}
	if (classes.ncls > 1) {
		n = snprintf(buf, len, " class=%d", cls_of(seq));
		if (classes.prio[cls_of(seq)] >= 0) {
			n += snprintf(buf + n, len - (size_t)n, " priority=%d", classes.prio[cls_of(seq)]);
		}
		if (classes.tos[cls_of(seq)] >= 0) {
			n += snprintf(buf + n, len - (size_t)n, " tos=%d", classes.tos[cls_of(seq)]);
		}
	}
	if (classes.nsz > 1 && (size_t)n < len) {
		snprintf(buf + n, len - (size_t)n, " size=%u", classes.size[size_of(seq)]);
	}
	return buf;
}

/* The class/size tables' value columns: 9 characters, or the widest value's. */
static int cls_width(void)
{
	int i, k, w = 9;

	for (i = 0; classes.g && i < classes.ng; i++) {
		for (k = -1; k < (cls_extra() ? GX_N : 0); k++) {
			const struct hist *h = k < 0 ? &classes.g[i].h : &classes.g[i].x[k];

			if (h->n) {
				w = num_width(h->max) > w ? num_width(h->max) : w;
				w = num_width(h->min) > w ? num_width(h->min) : w;
			}
		}
	}
	return w;
}

/*
 * A histogram's columns of the class/size tables: samples min avg p50 p99
 * p99.9 max, as wide as K.colw (past 1 s a value has 10 digits).
 */
static void cls_stats(FILE *f, struct hist *h)
{
	bool approx = false;
	int w = classes.colw;

	hist_finish(h);
	if (!h->n) {
		/* no sample: nothing measured, never a 0 that reads as one */
		fprintf(f, " %9d %*s %*s %*s %*s %*s %*s", 0, w, "-", w, "-", w, "-", w, "-", w, "-",
			w, "-");
		return;
	}
	fprintf(f, " %9" PRIu64 " %*" PRId64 " %*.0f %*" PRId64 " %*" PRId64 " %*" PRId64 " %*" PRId64,
		h->n, w, h->min, w, hist_avg(h), w, hist_pct(h, 50, &approx), w,
		hist_pct(h, 99, &approx), w, hist_pct(h, 99.9, &approx), w, h->max);
}

/*
 * Did the run measure metric k of the rows' extras at all?  The client tx
 * stack is not measured with --client-no-tx-ts (no T1 on the wire): such a
 * metric is left out of the tables, JSON and plot, not shown as zeros.
 */
static bool cls_x_measured(int k)
{
	return cls_x_on(k) && sess.h[grp_xm[k]].n != 0;
}

static void cls_row(FILE *f, const char *label, struct grp *g)
{
	uint64_t sent = g->n[CG_SENT];

	fprintf(f, "%-26s %9" PRIu64 " %9" PRIu64 " %7" PRIu64 " %6.2f%%", label, sent,
		g->n[CG_RECEIVED], g->n[CG_LOST],
		sent ? 100.0 * (double)g->n[CG_LOST] / (double)sent : 0.0);
	cls_stats(f, &g->h);
	fprintf(f, " %5" PRIu64 "\n", g->n[CG_BREACH]);
}

/* With -s: a row's app rtt and client tx stack, one line each. */
static void cls_row_x(FILE *f, const char *label, struct grp *g)
{
	int k;

	for (k = 0; k < GX_N; k++) {
		if (!cls_x_measured(k)) {
			continue;
		}
		fprintf(f, "%-26s %-9s", k ? "" : label, grp_xlabel[k]);
		cls_stats(f, &g->x[k]);
		fputc('\n', f);
	}
}

/* Every row of the class/size table, each printed by row(). */
static void cls_rows_each(FILE *f, void (*row)(FILE *, const char *, struct grp *))
{
	char lab[64];
	int c, z;

	for (c = 0; classes.ncls > 1 && c < classes.ncls; c++) {
		row(f, cls_label(lab, sizeof(lab), c), &classes.g[c]);
	}
	for (z = 0; classes.nsz > 1 && z < classes.nsz; z++) {
		snprintf(lab, sizeof(lab), classes.ncls > 1 ? "all  %u B" : "%u B", classes.size[z]);
		row(f, lab, &classes.g[classes.ncls + z]);
	}
	for (c = 0; classes.ncls > 1 && classes.nsz > 1 && c < classes.ncls; c++) {
		for (z = 0; z < classes.nsz; z++) {
			snprintf(lab, sizeof(lab), "%d  %u B", c, classes.size[z]);
			row(f, lab, &classes.g[classes.ncls + classes.nsz + c * classes.nsz + z]);
		}
	}
}

/* Under the table: how far off a row's percentiles may be when they came from the log bins. */
static void cls_tail_note(FILE *f)
{
	uint64_t most = 0, e;
	int i;

	for (i = 0; i < classes.ng; i++) {
		e = hist_tail_err(&classes.g[i].h);
		most = e > most ? e : most;
	}
	if (most) {
		fprintf(f, "(rows with more outliers than their exact store: p50/p99/p99.9 within +- %" PRIu64
			" ns, 0.1 %%; each in the JSON's percentiles_error_ns)\n", most);
	}
}

/* Emit: the table with a row per class, per size, per class x size. */
static void cls_report(FILE *f)
{
	const char *what, *head;
	char lab[64];
	int c, w;

	if (!run.side.emit) {
		for (c = 0; classes.rn && c <= CLS_RROWS; c++) {
			if (!c) {
				fprintf(f, "\n--- Classes (as the pings arrived; answered in the same class) ---\n"
					"%-8s %-6s %12s %12s %12s\n", "priority", "tos", "received", "answered",
					"warm-up");
			}
			if (c == CLS_RROWS && classes.r[c].received) {
				fprintf(f, "%-15s", "no class");	/* pings without a class */
			} else if (c < classes.rn) {
				int tos = classes.r[c].tos < 0 ? 0 : classes.r[c].tos;

				snprintf(lab, sizeof(lab), "0x%02x", tos);
				fprintf(f, "%-8d %-6s", classes.r[c].prio, lab);
			} else {
				continue;
			}
			fprintf(f, " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", classes.r[c].received,
				classes.r[c].answered, classes.r[c].warmup);
		}
		return;
	}
	if (!classes.g) {
		return;
	}
	what = classes.ncls > 1 && classes.nsz > 1 ? "Classes x sizes" : classes.ncls > 1 ? "Classes" : "Sizes";
	head = classes.ncls > 1 ? (classes.nsz > 1 ? "class / size" : "class") : "size";
	w = classes.colw = cls_width();
	fprintf(f, "\n--- %s (rtt, ns) ---\n%-26s %9s %9s %7s %7s %9s %*s %*s %*s %*s %*s %*s %5s\n",
		what, head, "sent", "received", "lost", "loss", "samples", w, "min", w, "avg", w, "p50",
		w, "p99", w, "p99.9", w, "max", "brch");
	cls_rows_each(f, cls_row);
	if (cls_extra()) {
		/* where a qdisc or gate holds a ping: before its wire stamp, in the tx stack */
		fprintf(f, "\n--- %s (app rtt T4_SW-T1_SW%s; ns) ---\n"
			"%-26s %-9s %9s %*s %*s %*s %*s %*s %*s\n", what,
			cls_x_measured(GX_TX) ? ", client tx stack T1-T1_SW" : "", head, "metric", "samples",
			w, "min", w, "avg", w, "p50", w, "p99", w, "p99.9", w, "max");
		cls_rows_each(f, cls_row_x);
	}
	cls_tail_note(f);
}

/* One metric of a row: ", "KEY": {samples, min, max, avg, stddev, percentiles}". */
static void cls_json_hist(FILE *f, const char *key, struct hist *h)
{
	bool approx = false;
	int k;

	hist_finish(h);
	if (!h->n) {
		fprintf(f, ", \"%s\": {\"samples\": 0, \"min_ns\": null, \"max_ns\": null, \"avg_ns\": null"
			", \"stddev_ns\": null, \"percentiles_ns\": null, \"percentiles_approximate\": false, ", key);
		hist_json_err(f, h);
		fputc('}', f);
		return;
	}
	fprintf(f, ", \"%s\": {\"samples\": %" PRIu64 ", \"min_ns\": %" PRId64 ", \"max_ns\": %" PRId64
		", \"avg_ns\": %.1f, \"stddev_ns\": %.1f, \"percentiles_ns\": {", key, h->n,
		h->min, h->max, hist_avg(h), hist_stddev(h));
	for (k = 0; k < NPCT; k++) {
		fprintf(f, "%s\"%s\": %" PRId64, k ? ", " : "", pct_key[k], hist_pct(h, pct_value[k], &approx));
	}
	fprintf(f, "}, \"percentiles_approximate\": %s, ", approx ? "true" : "false");
	hist_json_err(f, h);
	fputc('}', f);
}

static void cls_json_row(FILE *f, struct grp *g)
{
	int k;

	fprintf(f,
		"\"packets\": {\"sent\": %" PRIu64 ", \"received\": %" PRIu64 ", \"lost\": %" PRIu64
		", \"late\": %" PRIu64 ", \"warmup\": %" PRIu64 "}, \"threshold_breaches\": %" PRIu64,
		g->n[CG_SENT], g->n[CG_RECEIVED], g->n[CG_LOST], g->n[CG_LATE], g->n[CG_WARMUP],
		g->n[CG_BREACH]);
	if (tsn.on) {
		/* --txtime: the launch times the qdisc reported missed or invalid */
		fprintf(f, ", \"launch\": {\"missed\": %" PRIu64 ", \"invalid\": %" PRIu64 "}",
			g->n[CG_LMISS], g->n[CG_LINVAL]);
	}
	cls_json_hist(f, "rtt", &g->h);
	for (k = 0; cls_extra() && k < GX_N; k++) {
		if (cls_x_measured(k)) {
			cls_json_hist(f, metric_def[grp_xm[k]].key, &g->x[k]);
		}
	}
}

static void cls_json_prio_tos(FILE *f, int prio, int tos)
{
	if (prio >= 0) {
		fprintf(f, "\"priority\": %d, ", prio);
	} else {
		fprintf(f, "\"priority\": null, ");
	}
	if (tos >= 0) {
		fprintf(f, "\"tos\": %d, ", tos);
	} else {
		fprintf(f, "\"tos\": null, ");
	}
}

/* JSON "classes" and "sizes" arrays, each followed by ",\n". */
static void cls_json(FILE *f)
{
	int c, z;

	if (!run.side.emit) {
		if (!classes.rn) {
			return;
		}
		fprintf(f, "  \"classes\": [");
		for (c = 0; c <= CLS_RROWS; c++) {
			if (c >= classes.rn && (c < CLS_RROWS || !classes.r[c].received)) {
				continue;
			}
			/* the row of pings without a class: priority and TOS null */
			fprintf(f, "%s\n    {", c ? "," : "");
			cls_json_prio_tos(f, c < CLS_RROWS ? classes.r[c].prio : -1,
					  c < CLS_RROWS ? classes.r[c].tos : -1);
			fprintf(f, "\"received\": %" PRIu64 ", \"answered\": %" PRIu64 ", \"warmup\": %" PRIu64 "}",
				classes.r[c].received, classes.r[c].answered, classes.r[c].warmup);
		}
		fprintf(f, "\n  ],\n");
		return;
	}
	if (!classes.g) {
		return;
	}
	if (classes.ncls > 1) {
		fprintf(f, "  \"classes\": [");
		for (c = 0; c < classes.ncls; c++) {
			fprintf(f, "%s\n    {\"class\": %d, ", c ? "," : "", c);
			cls_json_prio_tos(f, classes.prio[c], classes.tos[c]);
			if (classes.nival) {
				fprintf(f, "\"interval_us\": %" PRIu64 ", ", (uint64_t)(classes.ival[c] / NSEC_PER_US));
			}
			cls_json_row(f, &classes.g[c]);
			if (classes.nsz > 1) {
				fprintf(f, ",\n      \"sizes\": [");
				for (z = 0; z < classes.nsz; z++) {
					fprintf(f, "%s\n        {\"size\": %u, ", z ? "," : "", classes.size[z]);
					cls_json_row(f, &classes.g[classes.ncls + classes.nsz +
								 c * classes.nsz + z]);
					fputc('}', f);
				}
				fprintf(f, "]");
			}
			fputc('}', f);
		}
		fprintf(f, "\n  ],\n");
	}
	if (classes.nsz > 1) {
		fprintf(f, "  \"sizes\": [");
		for (z = 0; z < classes.nsz; z++) {
			fprintf(f, "%s\n    {\"size\": %u, ", z ? "," : "", classes.size[z]);
			cls_json_row(f, &classes.g[classes.ncls + z]);
			fputc('}', f);
		}
		fprintf(f, "\n  ],\n");
	}
}

/* ------------------------------------------- time-sensitive networking */

/*
 * Launch time (--txtime LEAD): each ping asks to leave at its cadence slot
 * plus LEAD, on CLOCK_TAI: SO_TXTIME on every class socket and an
 * SCM_TXTIME message with each send, which the etf qdisc (tc-etf(8),
 * net/sched/sch_etf.c) holds until that time (less its delta) and
 * compares on its own clock, which must be the socket's.  Where nothing
 * enforces the time the socket option is taken all the same, so the
 * interface's qdiscs are read first (the netlink dump `tc -j qdisc show`
 * reads) and a run that cannot work is refused before anything is sent.
 * The etf tells a launch time it could not keep on the socket's error
 * queue and drops the packet (include/uapi/linux/errqueue.h:
 * SO_EE_ORIGIN_TXTIME; SO_EE_CODE_TXTIME_INVALID_PARAM for one already
 * past when the packet came, or of another clock or mode;
 * SO_EE_CODE_TXTIME_MISSED for one that passed while it waited, as behind
 * a closed taprio gate; ee_data:ee_info is the launch time asked): each
 * report is matched to its ping and counted in its class.
 *
 * The schedule (--cycle, --base-time, --class-offset): each class's
 * cadence starts at base + offset + n * cycle (CLOCK_TAI), as isochron's
 * --base-time/--shift-time do; with --txtime that is the launch time and
 * the app sends LEAD before it.  A taprio qdisc on the interface is read
 * too, and each class's send time is placed in its gate's windows.
 */

static bool tsn_on(void)
{
	return tsn.on && run.side.emit;
}

/* The attribute of type want in [p, p + len): its data and length; NULL if none. */
static const uint8_t *tsn_attr(const uint8_t *p, size_t len, int want, size_t *n)
{
	/* a route attribute is a netlink one: the same two 16-bit words (rtnetlink(7)) */
	const struct nlattr *a = nla_find(p, p + len, want);

	if (!a) {
		return NULL;
	}
	*n = a->nla_len - NLA_HDRLEN;
	return (const uint8_t *)a + NLA_HDRLEN;
}

/* Attribute want copied to out when it has at least size bytes. */
static bool tsn_attr_get(const uint8_t *p, size_t len, int want, void *out, size_t size)
{
	size_t n = 0;
	const uint8_t *d = tsn_attr(p, len, want, &n);

	if (!d || n < size) {
		return false;
	}
	memcpy(out, d, size);
	return true;
}

/* A taprio's entries (TCA_TAPRIO_ATTR_SCHED_ENTRY_LIST, each a nest of gate mask and interval). */
static void tsn_taprio_entries(struct tsn_qdiscs *q, const uint8_t *p, size_t len)
{
	struct rtattr a;

	while (len >= sizeof(a) && q->nent < TSN_ENT_MAX) {
		uint32_t gates = 0, ns = 0;

		memcpy(&a, p, sizeof(a));
		if (a.rta_len < sizeof(a) || a.rta_len > len) {
			return;
		}
		if ((a.rta_type & NLA_TYPE_MASK) == TCA_TAPRIO_SCHED_ENTRY &&
		    tsn_attr_get(p + RTA_LENGTH(0), a.rta_len - RTA_LENGTH(0),
				 TCA_TAPRIO_SCHED_ENTRY_GATE_MASK, &gates, 4) &&
		    tsn_attr_get(p + RTA_LENGTH(0), a.rta_len - RTA_LENGTH(0),
				 TCA_TAPRIO_SCHED_ENTRY_INTERVAL, &ns, 4)) {
			q->ent[q->nent].gates = gates;
			q->ent[q->nent].ns = ns;
			q->nent++;
		}
		if (RTA_ALIGN(a.rta_len) >= len) {
			return;
		}
		len -= RTA_ALIGN(a.rta_len);
		p += RTA_ALIGN(a.rta_len);
	}
}

/* One qdisc of the dump (a tcmsg and its attributes), if of ifindex: what rant needs of it. */
static void tsn_qdisc_msg(struct tsn_qdiscs *q, const uint8_t *p, size_t len, int ifindex)
{
	struct tcmsg tc;
	const uint8_t *kind, *opt;
	size_t nk = 0, no = 0;
	char k[16] = "";
	struct tc_mqprio_qopt m;

	if (len < NLMSG_ALIGN(sizeof(tc))) {
		return;
	}
	memcpy(&tc, p, sizeof(tc));
	if (tc.tcm_ifindex != ifindex) {
		return;
	}
	p += NLMSG_ALIGN(sizeof(tc));
	len -= NLMSG_ALIGN(sizeof(tc));
	kind = tsn_attr(p, len, TCA_KIND, &nk);
	if (!kind) {
		return;
	}
	memcpy(k, kind, nk < sizeof(k) - 1 ? nk : sizeof(k) - 1);
	opt = tsn_attr(p, len, TCA_OPTIONS, &no);
	if (tc.tcm_parent == TC_H_ROOT) {
		snprintf(q->root, sizeof(q->root), "%s", k);
		q->root_handle = tc.tcm_handle;
	}
	if (!strcmp(k, "etf") && opt && q->netf < TSN_ETF_MAX) {
		struct tc_etf_qopt e;

		if (tsn_attr_get(opt, no, TCA_ETF_PARMS, &e, sizeof(e))) {
			q->etf[q->netf].parent = tc.tcm_parent;
			q->etf[q->netf].clockid = e.clockid;
			q->etf[q->netf].delta = e.delta;
			q->etf[q->netf].flags = e.flags;
			q->netf++;
		}
	}
	if (tc.tcm_parent != TC_H_ROOT || !opt) {
		return;
	}
	/* mqprio's options begin with its map; taprio's carry it as an attribute */
	if (!strcmp(k, "mqprio") && no >= sizeof(m)) {
		memcpy(&m, opt, sizeof(m));
		q->map = true;
	} else if (!strcmp(k, "taprio")) {
		size_t nl = 0;
		const uint8_t *l = tsn_attr(opt, no, TCA_TAPRIO_ATTR_SCHED_ENTRY_LIST, &nl);

		q->map = tsn_attr_get(opt, no, TCA_TAPRIO_ATTR_PRIOMAP, &m, sizeof(m));
		tsn_attr_get(opt, no, TCA_TAPRIO_ATTR_SCHED_BASE_TIME, &q->base, 8);
		tsn_attr_get(opt, no, TCA_TAPRIO_ATTR_SCHED_CYCLE_TIME, &q->cycle, 8);
		tsn_attr_get(opt, no, TCA_TAPRIO_ATTR_SCHED_CLOCKID, &q->clockid, 4);
		tsn_attr_get(opt, no, TCA_TAPRIO_ATTR_FLAGS, &q->flags, 4);
		if (l) {
			tsn_taprio_entries(q, l, nl);
		}
		q->sched = q->nent > 0;
		if (q->sched && q->cycle <= 0) {
			int i;

			for (i = 0, q->cycle = 0; i < q->nent; i++) {
				q->cycle += q->ent[i].ns;
			}
		}
	}
	if (q->map) {
		int i;

		q->num_tc = m.num_tc > 16 ? 16 : m.num_tc;
		memcpy(q->prio_tc, m.prio_tc_map, 16);
		memcpy(q->count, m.count, sizeof(q->count));
		memcpy(q->offset, m.offset, sizeof(q->offset));
		/* a map naming a class the qdisc lacks is no map (the kernel never sends one) */
		for (i = 0; i < 16; i++) {
			q->map &= q->prio_tc[i] < q->num_tc;
		}
	}
}

/* What tsn_qdiscs_read takes of each qdisc of the dump. */
struct tsn_dump {
	struct tsn_qdiscs *q;
	int ifindex;
};

static void tsn_qdisc_each(const uint8_t *p, size_t len, void *arg)
{
	struct tsn_dump *d = arg;

	tsn_qdisc_msg(d->q, p, len, d->ifindex);
}

/* The qdiscs of ifindex, from an RTM_GETQDISC dump; 0 or -errno. */
static int tsn_qdiscs_read(int ifindex, struct tsn_qdiscs *q)
{
	struct tsn_dump d = { q, ifindex };

	memset(q, 0, sizeof(*q));
	return qdisc_dump(ifindex, tsn_qdisc_each, &d);
}

static const char *tsn_clock_name(int c)
{
	return c == CLOCK_TAI ? "CLOCK_TAI" : c == CLOCK_REALTIME ? "CLOCK_REALTIME" :
	       c == CLOCK_MONOTONIC ? "CLOCK_MONOTONIC" : c == CLOCK_BOOTTIME ? "CLOCK_BOOTTIME" :
	       "another clock";
}

/* Class k's priority, as its socket carries it (0 where none is set). */
static int tsn_prio(int k)
{
	int p = classes.ncls > 1 ? classes.prio[k] : cfg->priority;

	return p < 0 ? 0 : p & 15;
}

/* The etf whose parent is that: its index, -1 if none. */
static int tsn_etf_at(const struct tsn_qdiscs *q, uint32_t parent)
{
	int i;

	for (i = 0; i < q->netf; i++) {
		if (q->etf[i].parent == parent) {
			return i;
		}
	}
	return -1;
}

/* The interface's TX queues, from sysfs (queues/tx-N); 0 if unknown. */
static int tsn_txqueues(void)
{
	char path[PATH_MAX];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "%s/%s/queues", kops.sysfs_net, cfg->iface);
	dir = opendir(path);
	if (!dir) {
		return 0;
	}
	while ((d = readdir(dir))) {
		n += !strncmp(d->d_name, "tx-", 3);
	}
	closedir(dir);
	return n;
}

/* One etf found for a class's queue: its clock and mode must be the socket's.  0 or -1 (said). */
static int tsn_etf_fits(int e)
{
	const struct tsn_qdiscs *q = &tsn.q;
	bool dl = (q->etf[e].flags & TC_ETF_DEADLINE_MODE_ON) != 0;

	if (q->etf[e].clockid != CLOCK_TAI) {
		warnx_("--txtime: the etf qdisc on %s (parent %x:%x) keeps time on %s; rant's launch times are on CLOCK_TAI, which it would refuse as an invalid parameter (tc qdisc replace ... etf clockid CLOCK_TAI)",
		       cfg->iface, q->etf[e].parent >> 16, q->etf[e].parent & 0xffff,
		       tsn_clock_name(q->etf[e].clockid));
		return -1;
	}
	if (dl != cfg->txtime_deadline) {
		warnx_("--txtime: the etf qdisc on %s (parent %x:%x) runs deadline_mode %s; %s (the etf drops packets of the other mode)",
		       cfg->iface, q->etf[e].parent >> 16, q->etf[e].parent & 0xffff, dl ? "on" : "off",
		       dl ? "give --txtime-deadline" : "--txtime-deadline asks for it");
		return -1;
	}
	if (q->etf[e].delta > tsn.etf_delta) {
		tsn.etf_delta = q->etf[e].delta;
	}
	return 0;
}

/*
 * Every queue class k's packets may take has an etf: the root one, each
 * queue of its traffic class under taprio or mqprio (tc-mqprio(8): the
 * priority picks the class, the class its queues), every queue under mq.
 */
static int tsn_etf_check(int k)
{
	const struct tsn_qdiscs *q = &tsn.q;
	int p = tsn_prio(k), tc = 0, first = 0, n = 1, i, e;

	if (!strcmp(q->root, "etf") && tsn_etf_at(q, TC_H_ROOT) >= 0) {
		return tsn_etf_fits(tsn_etf_at(q, TC_H_ROOT));
	}
	if ((!strcmp(q->root, "taprio") || !strcmp(q->root, "mqprio")) && q->map) {
		tc = q->prio_tc[p];
		first = q->offset[tc];
		n = q->count[tc] ? q->count[tc] : 1;
	} else if (!strcmp(q->root, "mq")) {
		n = tsn_txqueues();
	} else {
		n = 0;
	}
	for (i = 0; i < n; i++) {
		e = tsn_etf_at(q, TC_H_MAKE(q->root_handle, (uint32_t)(first + i + 1)));
		if (e < 0) {
			break;
		}
		if (tsn_etf_fits(e) < 0) {
			return -1;
		}
	}
	if (n && i == n) {
		return 0;
	}
	if (!n) {
		warnx_("--txtime: no etf qdisc on %s (its root qdisc is %s): nothing would hold a packet to its launch time (tc qdisc replace dev %s root etf clockid CLOCK_TAI delta NS, or one below each queue of a taprio or mqprio)",
		       cfg->iface, *q->root ? q->root : "none", cfg->iface);
	} else {
		warnx_("--txtime: no etf qdisc on %s's queue %d (class %d, priority %d, traffic class %d of its %s): nothing would hold that class's packets to their launch time (tc qdisc replace dev %s parent %x:%x etf clockid CLOCK_TAI delta NS)",
		       cfg->iface, first + i, k, p, tc, *q->root ? q->root : "root", cfg->iface,
		       q->root_handle >> 16, first + i + 1);
	}
	return -1;
}

/* Class k's --class-offset into the cycle (one for all, or its own), ns. */
static int64_t tsn_offset(int k)
{
	return tsn.noffset ? tsn.offset[tsn.noffset > 1 ? k : 0] : 0;
}

/* The kernel's TAI offset (adjtimex(2): tai), in s; -1 if it cannot be read. */
static int tsn_tai_offset(void)
{
	struct timex t;

	memset(&t, 0, sizeof(t));
	return adjtimex(&t) < 0 ? -1 : t.tai;
}

/*
 * A taprio on the interface: each class's gate windows in the cycle, and
 * where its pings come (said at the start).  With --cycle, a class whose
 * send time falls outside its windows does not fit (a warning); without,
 * its pings fall anywhere in the cycle.
 */
static void tsn_sched_note(void)
{
	const struct tsn_qdiscs *q = &tsn.q;
	int k;

	if (!q->sched || !q->map) {
		return;
	}
	if (!cfg->quiet) {
		warnx_("taprio on %s: cycle %" PRId64 " ns, base time %" PRId64 " ns (%s), %d entries",
		       cfg->iface, q->cycle, q->base, tsn_clock_name(q->clockid), q->nent);
	}
	for (k = 0; k < classes.ncls; k++) {
		int tc = q->prio_tc[tsn_prio(k)], i;
		int64_t at = 0, open = 0, closed = 0, gap = 0, phase = -1, ph_in = -1;
		char win[160] = "";
		size_t wl = 0;

		if (cfg->cycle_ns && q->cycle > 0) {
			int64_t s = cfg->base_time_ns + tsn_offset(k);

			phase = ((s - q->base) % q->cycle + q->cycle) % q->cycle;
		}
		for (i = 0; i < q->nent; i++) {
			bool on = q->ent[i].gates >> tc & 1;

			if (on) {
				open += q->ent[i].ns;
				gap = 0;
				if (wl < sizeof(win) - 24) {
					wl += (size_t)snprintf(win + wl, sizeof(win) - wl,
							       "%s%" PRId64 "-%" PRId64, wl ? "," : "",
							       at, at + q->ent[i].ns);
				}
				if (phase >= at && phase < at + q->ent[i].ns) {
					ph_in = 1;
				}
			} else {
				gap += q->ent[i].ns;
				closed = gap > closed ? gap : closed;
			}
			at += q->ent[i].ns;
		}
		if (phase >= 0 && ph_in < 0) {
			ph_in = 0;
		}
		tsn.fit[k].tc = tc;
		tsn.fit[k].open = open;
		tsn.fit[k].closed = closed;
		tsn.fit[k].phase = phase;
		tsn.fit[k].in = ph_in > 0;
		if (!cfg->quiet) {
			warnx_("taprio on %s: class %d (priority %d, traffic class %d): open %" PRId64
			       " of %" PRId64 " ns (%s ns), closed up to %" PRId64 " ns at a time%s",
			       cfg->iface, k, tsn_prio(k), tc, open, q->cycle, *win ? win : "never",
			       closed, phase < 0 ? "; its cadence is not aligned to the cycle (--cycle, --base-time, --class-offset)" :
			       ph_in ? "; its pings come inside a window" : "");
		}
		if (phase >= 0 && !ph_in) {
			warnx_("warning: class %d's cadence does not fit its window: its pings come at %" PRId64
			       " ns of taprio's %" PRId64 " ns cycle, where its gate is closed",
			       k, phase, q->cycle);
		}
	}
	if (cfg->cycle_ns && q->cycle > 0 && (int64_t)cfg->cycle_ns % q->cycle) {
		warnx_("warning: --cycle %" PRIu64 " ns is no multiple of taprio's cycle %" PRId64
		       " ns on %s: the classes' pings drift through its windows",
		       cfg->cycle_ns, q->cycle, cfg->iface);
	}
}

/*
 * Before anything is sent: the qdiscs read, launch time refused where it
 * cannot work, the clocks' offsets taken.  0 or -1 (said in one line).
 */
static int tsn_start(void)
{
	int k, r, tai;

	tsn.on = cfg->txtime && run.side.emit;
	if (!run.side.emit || (!cfg->txtime && !cfg->cycle_ns)) {
		return 0;
	}
	if (cfg->txtime && !cfg->iface) {
		warnx_("--txtime: needs -i IFACE: the etf qdisc that keeps launch times is read from it");
		return -1;
	}
	if (cfg->iface) {
		r = tsn_qdiscs_read((int)if_nametoindex(cfg->iface), &tsn.q);
		if (r < 0 && cfg->txtime) {
			warnx_("--txtime: cannot read %s's qdiscs (netlink RTM_GETQDISC): %s", cfg->iface,
			       strerror(-r));
			return -1;
		}
	}
	for (k = 0; cfg->txtime && k < classes.ncls; k++) {
		if (tsn_etf_check(k) < 0) {
			return -1;
		}
	}
	if (cfg->txtime && tsn.q.sched && tsn.q.clockid != CLOCK_TAI) {
		/* the etf's launch times are on CLOCK_TAI (tc-etf(8)): the gates must be too */
		warnx_("--txtime: the taprio on %s keeps its schedule on %s, the launch times are on CLOCK_TAI: they would fall %s off its windows (tc qdisc replace ... taprio ... clockid CLOCK_TAI)",
		       cfg->iface, tsn_clock_name(tsn.q.clockid),
		       tsn.q.clockid == CLOCK_REALTIME ? "the TAI offset" : "an unknown time");
		return -1;
	}
	tai = tsn_tai_offset();
	if (cfg->txtime && tai <= 0) {
		warnx_("--txtime: the kernel's TAI offset is %s (CLOCK_TAI reads CLOCK_REALTIME, not TAI): a schedule or NIC clock on TAI is then 37 s away; set it first (phc2sys or ptp4l with kernel_leap, chronyd's leapsectz, adjtimex ADJ_TAI)",
		       tai < 0 ? "unreadable" : "0, not set");
		return -1;
	}
	tsn.tai = tai > 0 ? (int64_t)tai * (int64_t)NSEC_PER_SEC : 0;
	tsn_sched_note();
	return 0;
}

/* SO_TXTIME on a client socket (each class's): CLOCK_TAI, errors reported. */
static int tsn_socket(int fd)
{
	struct sock_txtime st = { .clockid = CLOCK_TAI, .flags = SOF_TXTIME_REPORT_ERRORS };

	if (!tsn_on()) {
		return 0;
	}
	if (cfg->txtime_deadline) {
		st.flags |= SOF_TXTIME_DEADLINE_MODE;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_TXTIME, &st, sizeof(st)) < 0) {
		warnx_("--txtime: SO_TXTIME refused: %s%s", strerror(errno),
		       errno == EPERM ? " (CLOCK_TAI needs CAP_NET_ADMIN)" : "");
		return -1;
	}
	return 0;
}

/*
 * The cadence on the schedule: each class's first slot at base + its
 * offset + n cycles (CLOCK_TAI), at least a cycle ahead, less the lead
 * with --txtime (the launch time is then on the schedule).  next: the
 * shared cadence's first slot (one --interval).
 */
static void tsn_run_start(uint64_t *next)
{
	uint64_t now = real_ns() + (uint64_t)tsn.tai;
	int k, n = cls_paced() ? classes.ncls : 1;

	if (!run.side.emit || !cfg->cycle_ns) {
		return;
	}
	for (k = 0; k < n; k++) {
		int64_t off = tsn_offset(k);
		int64_t lead = tsn.on ? (int64_t)cfg->txtime_lead_ns : 0;
		int64_t first = cfg->base_time_ns + off - lead;
		int64_t soon = (int64_t)now + (int64_t)cfg->cycle_ns, c = (int64_t)cfg->cycle_ns;
		uint64_t mono;

		if (first < soon) {
			first += ((soon - first) / c + 1) * c;
		}
		/* run.clk.base: CLOCK_REALTIME - CLOCK_MONOTONIC, taken again after a step */
		mono = (uint64_t)(first - tsn.tai - run.clk.base);
		if (cls_paced()) {
			classes.next[k] = mono;
		} else {
			*next = mono;
		}
	}
}

/*
 * The launch times the qdisc did not keep (ts_txtime_report): each counted
 * in its ping's class, found in the window by its launch time (newest
 * first: a report comes soon after its send).  Off the measured path: before
 * a ping's send and at the end.
 */
static void tsn_reports(void)
{
	int i;

	for (i = 0; i < tsn.nrep; i++) {
		uint64_t lt = tsn.rep[i].launch - (uint64_t)tsn.tai, s;
		bool missed = tsn.rep[i].missed, found = false;

		tsn.missed += missed;
		tsn.invalid += !missed;
		for (s = emitter.next_seq; s-- > 0 && s + run.win.mask >= emitter.next_seq;) {
			struct txn *x = &run.win.slot[s & run.win.mask];

			if ((x->st & TF_USED) && x->seq == s && x->t[T1L] == lt) {
				cls_count(s, missed ? CG_LMISS : CG_LINVAL);
				x->st |= missed ? TF_LMISS : TF_LINVAL;	/* its log status */
				if (x->st & TF_TXPEND) {
					/* dropped by the qdisc: no TX stamp will come */
					x->st &= (uint16_t)~TF_TXPEND;
					emitter.txpend--;
				}
				found = true;
				break;
			}
		}
		tsn.unmatched += !found;
	}
	tsn.nrep = 0;
}

/* Before a ping's T1_SW: its launch time, from its slot (back-to-back: now) plus the lead. */
static void tsn_before_send(struct txn *x, uint64_t now)
{
	uint64_t slot = tsn.slot ? tsn.slot : now;

	tsn.slot = 0;
	if (!tsn_on()) {
		return;
	}
	if (tsn.nrep) {
		tsn_reports();
	}
	x->t[T1L] = slot + (uint64_t)run.clk.base + cfg->txtime_lead_ns;
	tsn.launch = x->t[T1L] + (uint64_t)tsn.tai;
}


static void tsn_report(FILE *f)
{
	int c;

	if (!tsn_on()) {
		return;
	}
	if (cfg->mode == MODE_ANALYZE) {
		/* the log's T1_LT gives the metrics, its statuses the launch times dropped */
		fprintf(f, "Launch time (from the log): %" PRIu64 " missed, %" PRIu64 " invalid%s\n",
			tsn.missed, tsn.invalid,
			tsn.missed + tsn.invalid ? " (dropped by the qdisc: lost)" : "");
	} else {
		tsn_reports();
		fprintf(f, "Launch time: SO_TXTIME on CLOCK_TAI (TAI offset %" PRId64 " s), lead %"
			PRIu64 " ns%s, etf delta %" PRId64 " ns: %" PRIu64 " missed, %" PRIu64
			" invalid%s", tsn.tai / (int64_t)NSEC_PER_SEC, cfg->txtime_lead_ns,
			cfg->txtime_deadline ? ", deadline mode" : "", tsn.etf_delta, tsn.missed,
			tsn.invalid,
			tsn.missed + tsn.invalid ? " (dropped by the qdisc: lost)" : "");
		if (tsn.unmatched) {
			fprintf(f, ", %" PRIu64 " of no ping (a FIN's)", tsn.unmatched);
		}
		fputc('\n', f);
	}
	for (c = 0; classes.g && classes.ncls > 1 && c < classes.ncls; c++) {
		char lab[64];

		fprintf(f, "  class %-26s missed %" PRIu64 ", invalid %" PRIu64 "\n",
			cls_label(lab, sizeof(lab), c), classes.g[c].n[CG_LMISS],
			classes.g[c].n[CG_LINVAL]);
	}
}

/* JSON "taprio": the schedule read from -i and each class against it (null: none read). */
static void tsn_json_sched(FILE *f)
{
	const struct tsn_qdiscs *q = &tsn.q;
	int k;

	if (!run.side.emit || !q->sched || !q->map || cfg->mode == MODE_ANALYZE) {
		fprintf(f, "  \"taprio\": null,\n");
		return;
	}
	fprintf(f, "  \"taprio\": {\"cycle_ns\": %" PRId64 ", \"base_time_ns\": %" PRId64
		", \"clock\": \"%s\", \"flags\": %u, \"entries\": %d, \"classes\": [",
		q->cycle, q->base, tsn_clock_name(q->clockid), q->flags, q->nent);
	for (k = 0; k < classes.ncls; k++) {
		fprintf(f, "%s{\"class\": %d, \"traffic_class\": %d, \"open_ns\": %" PRId64
			", \"closed_max_ns\": %" PRId64 ", ", k ? ", " : "", k, tsn.fit[k].tc,
			tsn.fit[k].open, tsn.fit[k].closed);
		if (tsn.fit[k].phase < 0) {
			fprintf(f, "\"phase_ns\": null, \"fits\": null}");
		} else {
			fprintf(f, "\"phase_ns\": %" PRId64 ", \"fits\": %s}", tsn.fit[k].phase,
				tsn.fit[k].in ? "true" : "false");
		}
	}
	fprintf(f, "]},\n");
}

static void tsn_json(FILE *f)
{
	tsn_json_sched(f);
	if (!tsn_on()) {
		fprintf(f, "  \"launch_time\": null,\n");
		return;
	}
	if (cfg->mode == MODE_ANALYZE) {
		/* from the log: the metrics, and the launch times its statuses say were dropped */
		fprintf(f, "  \"launch_time\": {\"missed\": %" PRIu64 ", \"invalid\": %" PRIu64 "},\n",
			tsn.missed, tsn.invalid);
		return;
	}
	tsn_reports();
	fprintf(f, "  \"launch_time\": {\"clock\": \"CLOCK_TAI\", \"tai_offset_s\": %" PRId64
		", \"lead_ns\": %" PRIu64 ", \"deadline_mode\": %s, \"etf_delta_ns\": %" PRId64
		", \"missed\": %" PRIu64 ", \"invalid\": %" PRIu64 ", \"unmatched\": %" PRIu64 "},\n",
		tsn.tai / (int64_t)NSEC_PER_SEC, cfg->txtime_lead_ns,
		cfg->txtime_deadline ? "true" : "false", tsn.etf_delta, tsn.missed, tsn.invalid,
		tsn.unmatched);
}

/* ----------------------------------------------------------------- pmc */

/*
 * -M: hardware performance counters around each transaction's own work.
 * Emit: from just before send() to just after the pong's recvmsg() returns;
 * reflect: from just after the ping's recvmsg() to just after the pong's
 * sendto().  Each counter is a perf event of this thread only (pid 0, any
 * CPU, not inherited by the status thread), counting in user space only
 * (exclude_kernel, exclude_hv): that is what an unprivileged user may count
 * at the default perf_event_paranoid of 2, and it gives the same numbers
 * whoever runs rant.  The send and receive system calls themselves are
 * therefore not in the counts; a thread asleep in recvmsg() counts nothing.
 *
 * The loop never calls read() on the events: each one's first page is
 * mapped, and the count is read with rdpmc under the page's seqlock as
 * include/uapi/linux/perf_event.h documents for struct perf_event_mmap_page.
 */
#define PMC_NONE	UINT64_MAX	/* no value: the counter was not on the PMU */
#define PMC_TRIES	64		/* seqlock retries before giving up on a read */

/* What -M asks the PMU for; key is the JSON key and the csv column pmc_<key>. */
static const struct pmc_def {
	const char *key;
	uint32_t type;
	uint64_t config;
} pmc_def[PMC_MAX] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache_misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "dtlb_misses", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
					     (PERF_COUNT_HW_CACHE_RESULT_MISS << 16) },
};

/*
 * A compiler barrier: the page is rewritten by the kernel, on this CPU, between our instructions.
 */
#define pmc_barrier()	__atomic_signal_fence(__ATOMIC_SEQ_CST)

/*
 * One counter's 64-bit count, the protocol of include/uapi/linux/perf_event.h:
 * read lock, then index and offset and (if cap_user_rdpmc and index != 0)
 * rdpmc(index - 1), and start again if lock changed meanwhile (the kernel
 * rewrote the page: a context switch, a counter overflow).  The hardware
 * value is pmc_width bits wide and sign-extended before offset is added; the
 * kernel starts counters at -period, so the raw value near 2^width and just
 * past 0 are neighbours.  index 0: the event is not on a hardware counter
 * now, so there is no value.  Bounded retries: never an unbounded wait.
 */
static uint64_t pmc_read_one(const volatile struct perf_event_mmap_page *pg)
{
	uint64_t raw, off;
	uint32_t seq, idx;
	uint16_t width;
	bool can;
	int tries;

	for (tries = 0; tries < PMC_TRIES; tries++) {
		seq = pg->lock;
		pmc_barrier();
		idx = pg->index;
		off = (uint64_t)pg->offset;
		can = pg->cap_user_rdpmc;
		width = pg->pmc_width;
		raw = can && idx ? kops.rdpmc(idx - 1) : 0;
		pmc_barrier();
		if (pg->lock != seq) {
			continue;
		}
		if (!can || !idx || !width || width > 64) {
			return PMC_NONE;
		}
		return off + (uint64_t)((int64_t)(raw << (64 - width)) >> (64 - width));
	}
	return PMC_NONE;
}

/* Every counter of the run into v[]; PMC_NONE where there is no value. */
static void pmc_read(uint64_t *v)
{
	int i;

	for (i = 0; i < run.pmc.n; i++) {
		v[i] = pmc_read_one(run.pmc.pg[i]);
	}
}

/* d = b - a per counter (d may be a); no value if either read had none. */
static void pmc_delta(uint64_t *d, const uint64_t *a, const uint64_t *b)
{
	int i;

	for (i = 0; i < run.pmc.n; i++) {
		d[i] = a[i] == PMC_NONE || b[i] == PMC_NONE || b[i] < a[i] ? PMC_NONE : b[i] - a[i];
	}
}

/* A measured transaction leaves the window: add its deltas to the session. */
static void pmc_account(const struct txn *x)
{
	int i;

	for (i = 0; i < run.pmc.n; i++) {
		uint64_t v = x->pmc[i];

		if (v == PMC_NONE) {
			run.pmc_st.missing[i]++;
			continue;
		}
		if (!run.pmc_st.n[i] || v > run.pmc_st.max[i]) {
			run.pmc_st.max[i] = v;
			run.pmc_st.max_seq[i] = x->seq;
		}
		run.pmc_st.n[i]++;
		run.pmc_st.sum[i] += v;
	}
}

static void pmc_reset(void)
{
	memset(&run.pmc_st, 0, sizeof(run.pmc_st));
}

static double pmc_avg(int i)
{
	return run.pmc_st.n[i] ? (double)run.pmc_st.sum[i] / (double)run.pmc_st.n[i] : 0;
}

static void pmc_close(void)
{
	int i;

	for (i = 0; i < run.pmc.n; i++) {
		munmap((void *)(uintptr_t)run.pmc.pg[i], (size_t)sysconf(_SC_PAGESIZE));
		close(run.pmc.fd[i]);
	}
	run.pmc.n = 0;
	run.pmc.skipped[0] = 0;
}

static long pmc_read_long(const char *path)
{
	char buf[32] = "";
	long v = -1;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fgets(buf, sizeof(buf), f)) {
			v = strtol(buf, NULL, 10);
		}
		fclose(f);
	}
	return v;
}

/* Open one event (the first is the group leader) and map its page. */
static int pmc_add(int d, int group)
{
	struct perf_event_attr a;
	void *pg;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = pmc_def[d].type;
	a.config = pmc_def[d].config;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	/* a pinned group is on the PMU whenever the thread runs, never multiplexed */
	a.pinned = group < 0;
	fd = kops.pmc_open(&a, group);
	if (fd < 0) {
		return fd;
	}
	pg = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		int err = -errno;

		close(fd);
		return err;
	}
	run.pmc.def[run.pmc.n] = d;
	run.pmc.fd[run.pmc.n] = fd;
	run.pmc.pg[run.pmc.n] = pg;
	run.pmc.n++;
	return fd;
}

/*
 * -M at start, before anything is sent or truncated: every reason the
 * counters cannot be read is one line with the fix, and exit 2.  The events
 * belong to the calling thread (pid 0), and rdpmc reads the counters of the
 * thread that executes it: this must run on the thread that runs the loop.
 */
static int pmc_setup(void)
{
	char dir[PATH_MAX], path[PATH_MAX + 8];
	uint64_t v[PMC_MAX];
	struct stat sb;
	long rdpmc;
	int d, i, r, group = -1;

	if (!PMC_ARCH_OK) {
		warnx_("-M: reading the counters with rdpmc is x86-only (x86_64); this rant was built for another architecture: run without -M");
		return -1;
	}
	snprintf(dir, sizeof(dir), "%s/cpu", kops.pmc_devices);
	if (stat(dir, &sb) < 0) {
		/* hybrid Intel CPUs name the big cores' PMU cpu_core */
		snprintf(dir, sizeof(dir), "%s/cpu_core", kops.pmc_devices);
		if (stat(dir, &sb) < 0) {
			warnx_("-M: no hardware PMU on this host (no %s/cpu: a VM without a virtual PMU, or a kernel without perf events); run on a host or VM with a PMU (KVM: -cpu host), with %s/cpu/rdpmc 1 and %s 2 or lower (or as root), or run without -M",
			       kops.pmc_devices, kops.pmc_devices, kops.pmc_paranoid);
			return -1;
		}
	}
	snprintf(path, sizeof(path), "%s/rdpmc", dir);
	rdpmc = pmc_read_long(path);
	if (rdpmc == 0) {
		warnx_("-M: rdpmc is disabled for user space (%s is 0): echo 1 > %s", path, path);
		return -1;
	}
	for (d = 0; d < PMC_MAX; d++) {
		r = pmc_add(d, group);
		if (r == -EACCES || r == -EPERM) {
			warnx_("-M: perf_event_open: %s (%s is %ld; counting one's own thread in user space needs 2 or lower, or root): echo 2 > %s",
			       strerror(-r), kops.pmc_paranoid, pmc_read_long(kops.pmc_paranoid),
			       kops.pmc_paranoid);
			goto fail;
		}
		if (r < 0 && group < 0) {
			warnx_("-M: the PMU cannot count %s for this thread (perf_event_open: %s): run without -M",
			       pmc_def[d].key, strerror(-r));
			goto fail;
		}
		if (r < 0) {
			/*
			 * a counter this PMU lacks (some have no dTLB event): left out, and said so
			 */
			snprintf(run.pmc.skipped + strlen(run.pmc.skipped),
				 sizeof(run.pmc.skipped) - strlen(run.pmc.skipped), "%s%s",
				 *run.pmc.skipped ? ", " : "", pmc_def[d].key);
			continue;
		}
		if (group < 0) {
			group = r;
		}
	}
	for (i = 0; i < run.pmc.n; i++) {
		if (!run.pmc.pg[i]->cap_user_rdpmc || !run.pmc.pg[i]->pmc_width) {
			warnx_("-M: the kernel does not let user space read the %s counter with rdpmc (cap_user_rdpmc is 0 in its mmap page; %s is %ld): echo 2 > %s",
			       pmc_def[run.pmc.def[i]].key, path, rdpmc, path);
			goto fail;
		}
	}
	pmc_read(v);
	for (i = 0; i < run.pmc.n; i++) {
		if (v[i] == PMC_NONE) {
			warnx_("-M: the %s counter is not on the PMU (index 0 in its mmap page: the hardware counters are taken, by the NMI watchdog or another perf user): echo 0 > /proc/sys/kernel/nmi_watchdog, or stop the other perf session",
			       pmc_def[run.pmc.def[i]].key);
			goto fail;
		}
	}
	run.pmc.width = run.pmc.pg[0]->pmc_width;
	return 0;
fail:
	pmc_close();
	return -1;
}

static const char *pmc_span(void)
{
	return run.side.emit ? "send -> receive" : "receive -> send";
}

/* The start-up note: what is counted, and what this PMU could not count. */
static void pmc_note(FILE *f)
{
	int i;

	if (!run.pmc.n) {
		return;
	}
	fprintf(f, "rant: -M: counting");
	for (i = 0; i < run.pmc.n; i++) {
		fprintf(f, "%s %s", i ? "," : "", pmc_def[run.pmc.def[i]].key);
	}
	fprintf(f, " in user space per transaction (%s), rdpmc on %u-bit counters", pmc_span(), run.pmc.width);
	if (*run.pmc.skipped) {
		fprintf(f, "; this PMU cannot count %s", run.pmc.skipped);
	}
	fputc('\n', f);
}

/* A log column pmc_<key>: its slot (adding the counter when --analyze meets it), else -1. */
static int pmc_log_column(const char *s, size_t n)
{
	int d, i;

	for (d = 0; d < PMC_MAX; d++) {
		if (n != 4 + strlen(pmc_def[d].key) || strncmp(s, "pmc_", 4) ||
		    strncmp(s + 4, pmc_def[d].key, n - 4)) {
			continue;
		}
		for (i = 0; i < run.pmc.n; i++) {
			if (run.pmc.def[i] == d) {
				return i;
			}
		}
		run.pmc.def[run.pmc.n] = d;
		return run.pmc.n++;
	}
	return -1;
}

static char *pmc_csv_header(char *p)
{
	int i;

	for (i = 0; i < run.pmc.n; i++) {
		p = fmt_str(p, ",pmc_");
		p = fmt_str(p, pmc_def[run.pmc.def[i]].key);
	}
	return p;
}

/* Empty where there is no value, and for lost and late transactions (no end). */
static char *pmc_csv_row(char *p, const struct txn *x, bool ended)
{
	int i;

	for (i = 0; i < run.pmc.n; i++) {
		*p++ = ',';
		if (ended && x->pmc[i] != PMC_NONE) {
			p = fmt_u64(p, x->pmc[i]);
		}
	}
	return p;
}

/* " cycles=N instructions=N ..." for the trace marker line of a breach. */
static char *pmc_marker(char *p, const struct txn *x)
{
	int i;

	for (i = 0; i < run.pmc.n; i++) {
		*p++ = ' ';
		p = fmt_str(p, pmc_def[run.pmc.def[i]].key);
		*p++ = '=';
		p = x->pmc[i] == PMC_NONE ? fmt_str(p, "-") : fmt_u64(p, x->pmc[i]);
	}
	return p;
}

/* The counters of one transaction, under its breakdown. */
static void pmc_print_txn(FILE *f, const struct txn *x)
{
	int i;

	if (!run.pmc.n) {
		return;
	}
	fprintf(f, "  counters (user space, %s):", pmc_span());
	for (i = 0; i < run.pmc.n; i++) {
		if (x->pmc[i] == PMC_NONE) {
			fprintf(f, "%s %s -", i ? " |" : "", pmc_def[run.pmc.def[i]].key);
		} else {
			fprintf(f, "%s %s %" PRIu64, i ? " |" : "", pmc_def[run.pmc.def[i]].key, x->pmc[i]);
		}
	}
	fputc('\n', f);
}

static void pmc_report(FILE *f)
{
	int i;

	if (!run.pmc.n) {
		return;
	}
	fprintf(f, "\n--- Hardware counters per transaction (user space, %s) ---\n%-34s %12s %12s %12s %12s %10s\n",
		pmc_span(), "counter", "samples", "missing", "avg", "max", "max seq");
	for (i = 0; i < run.pmc.n; i++) {
		fprintf(f, "%-34s %12" PRIu64 " %12" PRIu64 " %12.1f %12" PRIu64 " %10" PRIu64 "\n",
			pmc_def[run.pmc.def[i]].key, run.pmc_st.n[i], run.pmc_st.missing[i],
			pmc_avg(i), run.pmc_st.max[i], run.pmc_st.max_seq[i]);
	}
}

/* ,"pmc": {...} after the other keys; absent without -M. */
static void pmc_json(FILE *f)
{
	int i;

	if (!run.pmc.n) {
		return;
	}
	fprintf(f, ",\n  \"pmc\": {\"scope\": \"user\", \"span\": \"%s\"", pmc_span());
	for (i = 0; i < run.pmc.n; i++) {
		fprintf(f,
			",\n    \"%s\": {\"samples\": %" PRIu64 ", \"missing\": %" PRIu64
			", \"avg\": %.1f, \"max\": %" PRIu64 ", \"max_seq\": %" PRIu64 "}",
			pmc_def[run.pmc.def[i]].key, run.pmc_st.n[i], run.pmc_st.missing[i],
			pmc_avg(i), run.pmc_st.max[i], run.pmc_st.max_seq[i]);
	}
	fprintf(f, "}");
}

/* ------------------------------------------------------------------ why */

/* A CLOCK_MONOTONIC time as the trace prints it: seconds and microseconds. */
static char *fmt_trace_ts(char *p, uint64_t ns)
{
	uint64_t us = ns % NSEC_PER_SEC / 1000;
	int d;

	p = fmt_u64(p, ns / NSEC_PER_SEC);
	*p++ = '.';
	for (d = 100000; d; d /= 10) {
		*p++ = (char)('0' + us / (uint64_t)d % 10);
	}
	return p;
}


/*
 * Why was it slow: after the run (a reflector: at its session's end; with
 * -C for every breach kept whose window the buffer still holds), rant reads
 * the instance's trace back and walks it up to the breach: for each segment
 * its own stamps bound (client: tx stack, the wait for the pong, rx stack;
 * reflector: rx stack, processing, tx stack) it splits the time by what
 * the CPU did with rant's thread: running, runnable while another task ran
 * (which), interrupted by a hard IRQ or a softirq (which), waiting on an
 * idle CPU to wake, asleep, or stopped.  The parts add up to the segment;
 * the largest one that is not rant's own work is the cause.  Nothing of it
 * runs while rant measures.  Times are the trace's: 1 us.
 */
#define WHY_SEGS	4
#define WHY_PARTS	12
#define WHY_CPUS	256
/* the timeline's intervals kept per breach; the rest counted (timeline_dropped) */
#define WHY_TL		256

enum why_kind {
	WK_RUN, WK_RUNNABLE, WK_IRQ, WK_SOFTIRQ, WK_IDLE, WK_ASLEEP, WK_STOPPED, WK_QUEUED,
	WK_UNKNOWN, WK_N
};
static const char *const why_kind_key[WK_N] = {
	"running", "runnable", "irq", "softirq", "idle", "asleep", "stopped", "queued", "unknown",
};

struct why_part {
	int kind, id, cpu, prio;	/* id: the pid, IRQ, softirq vector or qdisc handle */
	char what[40];			/* comm, IRQ name, softirq name or the qdisc's device */
	char qdisc[16];			/* queued: the qdisc's kind, when it could be read */
	uint64_t ns;			/* (queued: prio holds the device's ifindex) */
};

struct why_seg {
	const char *name, *key;
	uint64_t a, b;			/* CLOCK_MONOTONIC ns */
	int n;
	struct why_part p[WHY_PARTS];
};

/*
 * The timeline: the same time as the parts, in order, each interval where
 * it began (CLOCK_MONOTONIC ns) and in which segment; neighbours of the
 * same segment, kind and id that touch are one interval.
 */
struct why_tl {
	uint64_t t, ns;
	int seg, kind, id, cpu;
	char what[40];
};

struct why {
	int nseg;
	struct why_seg seg[WHY_SEGS];
	char cannot[200];		/* non-empty: cannot tell, and why */
	int cs, cp;			/* the cause: segment, part (-1: none) */
	char policy[16];		/* the culprit's policy, when it could be read */
	bool other_host;		/* the time was outside this host's stamps */
	uint64_t own_ns, wait_ns;
	int pid;			/* rant's thread in the trace */
	int prio;			/* its prio as the trace last saw it (-1: not seen) */
	int pkt_cpu;			/* the CPU that took the packet in (its IRQ, its stamp) */
	int ntl;
	uint64_t tl_dropped;		/* intervals past WHY_TL, not listed */
	struct why_tl tl[WHY_TL];
};

/* One parsed line of a trace as `cat trace` writes it. */
struct why_ev {
	uint64_t ts;
	int cpu, pid;
	char ctx;			/* 'h' hard IRQ, 's' softirq, ... (the flags' third) */
	const char *name, *args;
	size_t nlen;
};

static bool why_digits(const char *p, const char **end, uint64_t *v)
{
	uint64_t x = 0;
	const char *q = p;

	while (*q >= '0' && *q <= '9' && q - p < 19) {
		x = x * 10 + (uint64_t)(*q++ - '0');
	}
	*end = q;
	*v = x;
	return q > p;
}

/*
 * "  comm-PID  [CPU] flags  SEC.USEC: name: args" (the flags column and a
 * "(TGID)" one are optional, as trace_options make them).  False for
 * comments and anything else.
 */
static bool why_parse(char *line, struct why_ev *e)
{
	char *br = line, *q;
	const char *p;
	uint64_t v, frac;
	int dig;

	if (line[0] == '#') {
		return false;
	}
	/* the CPU column: " [ddd] " */
	for (;;) {
		br = strchr(br, '[');
		if (!br) {
			return false;
		}
		if (br > line && br[-1] == ' ' && why_digits(br + 1, &p, &v) && *p == ']' &&
		    p[1] == ' ') {
			break;
		}
		br++;
	}
	e->cpu = v < WHY_CPUS ? (int)v : -1;
	/* back from the column: an optional "(  TGID)", then comm-PID */
	q = br - 1;
	while (q > line && *q == ' ') {
		q--;
	}
	if (*q == ')') {
		while (q > line && *q != '(') {
			q--;
		}
		if (q == line) {
			return false;
		}
		q--;
		while (q > line && *q == ' ') {
			q--;
		}
	}
	{
		char *d = q;

		while (d > line && *d != '-') {
			d--;
		}
		if (*d != '-' || !why_digits(d + 1, &p, &v)) {
			return false;
		}
		e->pid = (int)v;
	}
	p = br + 1;
	while (*p != ']') {
		p++;
	}
	p++;
	while (*p == ' ') {
		p++;
	}
	e->ctx = 0;
	if (!why_digits(p, &p, &v) || *p != '.') {
		/* the flags column */
		const char *f = p;

		while (*p && *p != ' ') {
			p++;
		}
		e->ctx = p - f >= 3 ? f[2] : 0;
		while (*p == ' ') {
			p++;
		}
		if (!why_digits(p, &p, &v) || *p != '.') {
			return false;
		}
	}
	{
		const char *f = p + 1;

		if (!why_digits(f, &p, &frac) || *p != ':') {
			return false;
		}
		dig = (int)(p - f);
	}
	while (dig < 9) {
		frac *= 10;
		dig++;
	}
	if (dig > 9) {
		return false;
	}
	e->ts = v * NSEC_PER_SEC + frac;
	p++;
	while (*p == ' ') {
		p++;
	}
	e->name = p;
	while (*p && *p != ':' && *p != ' ') {
		p++;
	}
	if (*p != ':') {
		return false;
	}
	e->nlen = (size_t)(p - e->name);
	p++;
	while (*p == ' ') {
		p++;
	}
	e->args = p;
	return true;
}

static bool why_is(const struct why_ev *e, const char *name)
{
	return strlen(name) == e->nlen && !memcmp(e->name, name, e->nlen);
}

/* The value after " key=" (or key= at the start) in args; NULL if absent. */
static const char *why_kv(const char *args, const char *key)
{
	size_t k = strlen(key);
	const char *p = args;

	while ((p = strstr(p, key))) {
		if ((p == args || p[-1] == ' ') && p[k] == '=') {
			return p + k + 1;
		}
		p += k;
	}
	return NULL;
}

static long why_kv_num(const char *args, const char *key, long def)
{
	const char *p = why_kv(args, key);
	char *end;
	long v;

	if (!p) {
		return def;
	}
	v = strtol(p, &end, 10);
	return end == p ? def : v;
}

/* A comm (which may hold spaces) from key= up to " next=" */
static void why_comm(char *out, size_t len, const char *args, const char *key, const char *next)
{
	const char *p = why_kv(args, key), *e;
	char pat[24];

	out[0] = 0;
	if (!p) {
		return;
	}
	snprintf(pat, sizeof(pat), " %s=", next);
	e = strstr(p, pat);
	if (!e) {
		e = p + strcspn(p, " ");
	}
	snprintf(out, len, "%.*s", (int)(e - p < (ptrdiff_t)len - 1 ? e - p : (ptrdiff_t)len - 1), p);
}

enum { RS_UNKNOWN, RS_RUN, RS_RUNNABLE, RS_ASLEEP, RS_STOPPED };

struct why_cpu {
	int pid, prio;			/* the task on it: -1 not known yet */
	char comm[24];
	int irq, vec;			/* in a hard IRQ / softirq: -1 none */
	char irqname[32], vecname[16];
	bool seen;
};

struct why_walk {
	struct why *w;
	struct why_cpu *cpu;
	int state, at;			/* rant's thread: RS_*, its CPU */
	uint64_t last, first, end;	/* the previous event, the trace's first and last */
	bool any_switch, covered_end;
	uint64_t lost;			/* "[LOST N EVENTS]" inside the window */
	int first_cpu_late;		/* a CPU whose buffer starts inside the window */
	/* rant's packet in a TX segment: its skbaddr, and while a qdisc holds it which one */
	char skb[24], qdev[20];
	bool queued;
	unsigned qhandle;
	int qifindex;
};

/* The interval [at, at + ns) of segment s onto w's timeline. */
static void why_tl_add(struct why *w, const struct why_seg *s, uint64_t at, int kind, int id,
		       int cpu, const char *what, uint64_t ns)
{
	struct why_tl *e = w->ntl ? &w->tl[w->ntl - 1] : NULL;
	int seg = (int)(s - w->seg);

	if (e && e->seg == seg && e->kind == kind && e->id == id && e->t + e->ns == at) {
		e->ns += ns;
		return;
	}
	if (w->ntl == WHY_TL) {
		w->tl_dropped++;
		return;
	}
	e = &w->tl[w->ntl++];
	*e = (struct why_tl){ .t = at, .ns = ns, .seg = seg, .kind = kind, .id = id, .cpu = cpu };
	snprintf(e->what, sizeof(e->what), "%s", what ? what : "");
}

/* ns of segment s, from at, to the part (kind, id) and the timeline. */
static void why_add(struct why *w, struct why_seg *s, uint64_t at, int kind, int id, int cpu,
		    int prio, const char *what, uint64_t ns)
{
	int i;

	why_tl_add(w, s, at, kind, id, cpu, what, ns);
	for (i = 0; i < s->n; i++) {
		if (s->p[i].kind == kind && s->p[i].id == id) {
			s->p[i].ns += ns;
			return;
		}
	}
	if (s->n == WHY_PARTS) {
		i = WHY_PARTS - 1;	/* full: the last one gathers the rest */
		s->p[i].ns += ns;
		return;
	}
	s->p[i] = (struct why_part){ kind, id, cpu, prio, "", "", ns };
	snprintf(s->p[i].what, sizeof(s->p[i].what), "%s", what ? what : "");
	s->n++;
}

/* A segment that ends with rant's packet leaving the device (its TX stamp). */
static bool why_tx_seg(const struct why_seg *s)
{
	return strstr(s->key, "tx_stack") || !strcmp(s->key, "response");
}

/*
 * The ping between its NIC's IRQ and its stamp: what the CPU the IRQ came
 * to did, whatever rant's thread did (asleep: the ping has not reached it).
 */
static void why_account_cpu(struct why_walk *W, struct why_seg *s, uint64_t at, uint64_t ns)
{
	struct why *w = W->w;
	const struct why_cpu *c = w->pkt_cpu >= 0 ? &W->cpu[w->pkt_cpu] : NULL;

	if (!c || !c->seen) {
		why_add(w, s, at, WK_UNKNOWN, 0, -1, 0, NULL, ns);
	} else if (c->irq >= 0) {
		why_add(w, s, at, WK_IRQ, c->irq, w->pkt_cpu, 0, c->irqname, ns);
	} else if (c->vec >= 0) {
		why_add(w, s, at, WK_SOFTIRQ, c->vec, w->pkt_cpu, 0, c->vecname, ns);
	} else if (c->pid == 0) {
		why_add(w, s, at, WK_IDLE, 0, w->pkt_cpu, 0, NULL, ns);
	} else {
		why_add(w, s, at, WK_RUNNABLE, c->pid, w->pkt_cpu, c->prio, c->comm, ns);
	}
}

/* What rant's thread did from W->last to t, added to the segments it falls in. */
static void why_account(struct why_walk *W, uint64_t t)
{
	struct why *w = W->w;
	const struct why_cpu *c = W->at >= 0 ? &W->cpu[W->at] : NULL;
	int kind = WK_UNKNOWN, id = 0, cpu = W->at, prio = 0, i;
	const char *what = NULL;

	switch (W->state) {
	case RS_RUN:
	case RS_RUNNABLE:
		if (!c || !c->seen) {
			break;
		}
		if (c->irq >= 0) {
			kind = WK_IRQ, id = c->irq, what = c->irqname;
		} else if (c->vec >= 0) {
			kind = WK_SOFTIRQ, id = c->vec, what = c->vecname;
		} else if (W->state == RS_RUN || c->pid == w->pid) {
			kind = WK_RUN;
		} else if (c->pid == 0) {
			kind = WK_IDLE;
		} else if (c->pid > 0) {
			kind = WK_RUNNABLE, id = c->pid, what = c->comm, prio = c->prio;
		}
		break;
	case RS_ASLEEP:
		kind = WK_ASLEEP;
		break;
	case RS_STOPPED:
		kind = WK_STOPPED;
		break;
	}
	for (i = 0; i < w->nseg; i++) {
		struct why_seg *s = &w->seg[i];
		uint64_t a = W->last > s->a ? W->last : s->a, b = t < s->b ? t : s->b;

		if (b <= a) {
			continue;
		}
		if (W->queued && why_tx_seg(s)) {
			/* the packet waits in the qdisc, whatever rant's thread does meanwhile */
			why_add(w, s, a, WK_QUEUED, (int)W->qhandle, -1, W->qifindex, W->qdev,
				b - a);
		} else if (strstr(s->key, "_rx_irq")) {
			why_account_cpu(W, s, a, b - a);
		} else if (kind == WK_ASLEEP && strstr(s->key, "_rx_stack") && cpu >= 0 &&
			   cpu == w->pkt_cpu && c->seen && (c->irq >= 0 || c->vec >= 0)) {
			/*
			 * Stamped, not yet delivered: rant sleeps on the CPU that took
			 * the packet in, and an IRQ or softirq there (the stack's own
			 * work, of this packet or others before it) holds the wake-up.
			 */
			why_account_cpu(W, s, a, b - a);
		} else {
			why_add(w, s, a, kind, id, cpu, prio, what, b - a);
		}
	}
}

/*
 * A switched-out task's state: "R"/"R+" still runnable, "T"/"t" stopped,
 * else asleep; as a number (trace-cmd report -R) the kernel's bits:
 * 0 running, TASK_REPORT_MAX (256 since 4.14) preempted, __TASK_STOPPED (4)
 * or __TASK_TRACED (8) stopped (include/linux/sched.h).
 */
static int why_state(const char *st)
{
	long v;

	if (!st) {
		return RS_UNKNOWN;
	}
	if (*st >= '0' && *st <= '9') {
		v = strtol(st, NULL, 0);
		return !v || (v & 256) ? RS_RUNNABLE : (v & 12) ? RS_STOPPED : RS_ASLEEP;
	}
	return *st == 'R' ? RS_RUNNABLE : *st == 'T' || *st == 't' ? RS_STOPPED : RS_ASLEEP;
}

/* The token after key= in args (a word: up to a space or ','), in out; false if absent. */
static bool why_word(char *out, size_t len, const char *args, const char *key)
{
	const char *p = why_kv(args, key);

	if (!p) {
		return false;
	}
	snprintf(out, len, "%.*s", (int)strcspn(p, " ,"), p);
	return out[0] != 0;
}

/*
 * rant's packet on its way out (include/trace/events/net.h, qdisc.h): its
 * net_dev_queue, from rant's thread inside a TX segment, names its skb
 * (by address, as the trace prints it); qdisc_enqueue of that skb starts
 * its wait in the device's qdisc, its qdisc_dequeue (or, for a qdisc whose
 * dequeue the trace misses, its transmit) ends it.  A qdisc bypassed (an
 * empty pfifo_fast, noqueue) has no enqueue: nothing is queued.
 */
static void why_skb(struct why_walk *W, const struct why_ev *e)
{
	char skb[24];
	const char *h;
	int i;

	if (!why_word(skb, sizeof(skb), e->args, "skbaddr")) {
		return;
	}
	if (why_is(e, "net_dev_queue")) {
		if (e->pid != W->w->pid || W->skb[0]) {
			return;
		}
		for (i = 0; i < W->w->nseg; i++) {
			const struct why_seg *s = &W->w->seg[i];

			if (why_tx_seg(s) && e->ts >= s->a && e->ts < s->b) {
				snprintf(W->skb, sizeof(W->skb), "%s", skb);
				if (!why_word(W->qdev, sizeof(W->qdev), e->args, "dev")) {
					snprintf(W->qdev, sizeof(W->qdev), "?");
				}
				return;
			}
		}
		return;
	}
	if (!W->skb[0] || strcmp(skb, W->skb)) {
		return;
	}
	if (why_is(e, "qdisc_enqueue")) {
		W->queued = true;
		h = why_kv(e->args, "handle");
		W->qhandle = h ? (unsigned)strtoul(h, NULL, 0) : 0;
		W->qifindex = (int)why_kv_num(e->args, "ifindex", 0);
	} else {
		/* dequeued or sent: out of the qdisc (after its transmit, the skb is no more) */
		W->queued = false;
		if (!why_is(e, "qdisc_dequeue")) {
			snprintf(W->skb, sizeof(W->skb), "-");
		}
	}
}

static void why_event(struct why_walk *W, struct why_ev *e)
{
	struct why_cpu *c = e->cpu >= 0 ? &W->cpu[e->cpu] : NULL;
	int me = W->w->pid;

	if (!c) {
		return;
	}
	c->seen = true;
	/* every line names the task its CPU runs (an IRQ's: the one it interrupted) */
	if (c->pid < 0) {
		c->pid = e->pid;
		c->prio = 120;
		snprintf(c->comm, sizeof(c->comm), "%s", e->pid ? "?" : "<idle>");
	}
	if (e->pid == me && W->state == RS_UNKNOWN) {
		W->state = RS_RUN;
		W->at = e->cpu;
	}
	if (why_is(e, "sched_switch")) {
		const char *st = why_kv(e->args, "prev_state");
		int prev = (int)why_kv_num(e->args, "prev_pid", -1);

		W->any_switch = true;
		if (prev == me) {
			W->state = why_state(st);
			W->at = e->cpu;
		}
		c->pid = (int)why_kv_num(e->args, "next_pid", -1);
		c->prio = (int)why_kv_num(e->args, "next_prio", 120);
		why_comm(c->comm, sizeof(c->comm), e->args, "next_comm", "next_pid");
		if (c->pid == me) {
			W->state = RS_RUN;
			W->at = e->cpu;
			W->w->prio = c->prio;
		}
	} else if (why_is(e, "sched_waking") || why_is(e, "sched_wakeup")) {
		if (why_kv_num(e->args, "pid", -1) == me && W->state != RS_RUN) {
			W->state = RS_RUNNABLE;
			W->at = (int)why_kv_num(e->args, "target_cpu", W->at);
			if (W->at >= WHY_CPUS || W->at < 0) {
				W->at = -1;
			}
		}
	} else if (why_is(e, "sched_migrate_task")) {
		if (why_kv_num(e->args, "pid", -1) == me) {
			long d = why_kv_num(e->args, "dest_cpu", -1);

			W->at = d >= 0 && d < WHY_CPUS ? (int)d : -1;
		}
	} else if (why_is(e, "irq_handler_entry")) {
		c->irq = (int)why_kv_num(e->args, "irq", 0);
		why_comm(c->irqname, sizeof(c->irqname), e->args, "name", "irq");
	} else if (why_is(e, "irq_handler_exit")) {
		c->irq = -1;
	} else if (why_is(e, "softirq_entry")) {
		const char *a = strstr(e->args, "action=");

		/* the kernel's names (include/linux/interrupt.h), for a trace without action= */
		static const char *const vecs[] = { "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK",
						    "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU" };

		c->vec = (int)why_kv_num(e->args, "vec", 0);
		snprintf(c->vecname, sizeof(c->vecname), "%.*s", a ? (int)strcspn(a + 7, "]") : 15,
			 a ? a + 7 : c->vec >= 0 && c->vec < 10 ? vecs[c->vec] : "?");
	} else if (why_is(e, "softirq_exit")) {
		c->vec = -1;
	} else if (why_is(e, "net_dev_queue") || why_is(e, "qdisc_enqueue") ||
		   why_is(e, "qdisc_dequeue") || why_is(e, "net_dev_start_xmit") ||
		   why_is(e, "net_dev_xmit")) {
		why_skb(W, e);
	}
}

/* The trace's "[LOST N EVENTS]" and "##### CPU N buffer started ####" lines. */
static void why_meta(struct why_walk *W, const char *line, uint64_t w0)
{
	const char *p = strstr(line, "[LOST ");
	long n;

	if (p && W->last >= w0 && !W->covered_end) {
		n = strtol(p + 6, NULL, 10);
		W->lost += n > 0 ? (uint64_t)n : 1;
	}
	if (strstr(line, "##### CPU ") && strstr(line, "buffer started") && W->last >= w0 &&
	    !W->covered_end) {
		W->first_cpu_late = (int)strtol(strstr(line, "CPU ") + 4, NULL, 10);
	}
}

/* Walk trace file f for w (segments set, pid set); fills its parts or w->cannot. */
static void why_walk(struct why *w, FILE *f)
{
	struct why_walk W = { .w = w, .state = RS_UNKNOWN, .at = -1, .first_cpu_late = -1 };
	uint64_t w0 = UINT64_MAX, w1 = 0;
	char ta[32], tb[32];
	struct why_ev e;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int i;

	W.cpu = calloc(WHY_CPUS, sizeof(*W.cpu));
	if (!W.cpu) {
		snprintf(w->cannot, sizeof(w->cannot), "no memory to read the trace");
		return;
	}
	for (i = 0; i < WHY_CPUS; i++) {
		W.cpu[i].pid = -1;
		W.cpu[i].irq = W.cpu[i].vec = -1;
	}
	for (i = 0; i < w->nseg; i++) {
		w0 = w->seg[i].a < w0 ? w->seg[i].a : w0;
		w1 = w->seg[i].b > w1 ? w->seg[i].b : w1;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n') {
			line[len - 1] = 0;
		}
		if (!why_parse(line, &e)) {
			why_meta(&W, line, w0);
			continue;
		}
		if (!W.first) {
			W.first = e.ts;
		}
		W.end = e.ts;
		if (e.ts < W.last) {
			continue;	/* out of order (another clock?): never backwards */
		}
		if (W.last && e.ts > w0) {
			why_account(&W, e.ts);
		}
		W.last = e.ts;
		if (e.ts >= w1) {
			W.covered_end = true;
			break;
		}
		why_event(&W, &e);
	}
	free(line);
	free(W.cpu);
	if (!W.first) {
		snprintf(w->cannot, sizeof(w->cannot), "the trace is empty");
	} else if (W.first > w0) {
		*fmt_trace_ts(ta, W.first) = 0;
		*fmt_trace_ts(tb, w0) = 0;
		snprintf(w->cannot, sizeof(w->cannot),
			 "the trace does not cover the transaction: it begins at %s s, after the window "
			 "opened at %s s (overwritten: the buffer overran)", ta, tb);
	} else if (!W.covered_end) {
		*fmt_trace_ts(ta, W.end) = 0;
		*fmt_trace_ts(tb, w1) = 0;
		snprintf(w->cannot, sizeof(w->cannot),
			 "the trace ends at %s s, before the window closed at %s s (tracing stopped before it)",
			 ta, tb);
	} else if (!W.any_switch) {
		snprintf(w->cannot, sizeof(w->cannot),
			 "events missing: the trace has no sched:sched_switch (enable it, and "
			 "sched:sched_waking, in the instance)");
	} else if (W.lost) {
		snprintf(w->cannot, sizeof(w->cannot), "the trace lost %" PRIu64 " events inside the window",
			 W.lost);
	} else if (W.first_cpu_late >= 0) {
		snprintf(w->cannot, sizeof(w->cannot),
			 "CPU %d's trace begins inside the window (its buffer overran)", W.first_cpu_late);
	}
}

/*
 * The culprit as the kernel has it now, while it lives: its comm and policy
 * (the trace has only the prio and comm of its last switch, which may
 * predate an exec or a sched_setscheduler; no event records the policy).
 */
static void why_policy(struct why *w, struct why_part *p)
{
	struct sched_param sp;
	char path[64], comm[40] = "";
	FILE *f;
	int pol;

	w->policy[0] = 0;
	if (p->kind != WK_RUNNABLE) {
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", p->id);
	f = fopen(path, "re");
	if (!f) {
		return;
	}
	if (!fgets(comm, sizeof(comm), f)) {
		comm[0] = 0;
	}
	fclose(f);
	comm[strcspn(comm, "\n")] = 0;
	if (!comm[0] || (pol = sched_getscheduler(p->id)) < 0 || sched_getparam(p->id, &sp) < 0) {
		return;
	}
	snprintf(p->what, sizeof(p->what), "%s", comm);
	pol &= ~SCHED_RESET_ON_FORK;
	if (pol == SCHED_FIFO || pol == SCHED_RR) {
		p->prio = 99 - sp.sched_priority;
	}
	snprintf(w->policy, sizeof(w->policy), "%s", pol == SCHED_FIFO ? "FIFO" : pol == SCHED_RR ? "RR" :
		 pol == SCHED_BATCH ? "BATCH" : pol == SCHED_IDLE ? "IDLE" : pol == 6 ? "DEADLINE" : "OTHER");
}

/*
 * The cause: the largest part of the transaction, rant's own work
 * included (on a VM the host taking the CPU is invisible to the trace and
 * counts as rant running), its sleep while its pong travels excepted.
 */
static void why_cause(struct why *w)
{
	uint64_t best = 0;
	int i, k;

	w->cs = w->cp = -1;
	for (i = 0; i < w->nseg; i++) {
		for (k = 0; k < w->seg[i].n; k++) {
			const struct why_part *p = &w->seg[i].p[k];

			if (p->kind == WK_ASLEEP && !strcmp(w->seg[i].key, "pong_wait")) {
				continue;
			}
			if (p->ns > best) {
				best = p->ns, w->cs = i, w->cp = k;
			}
		}
	}
}

/*
 * The culprit as it left the CPU after the window: the comm and prio of its
 * first switch-out from then (its switch-in may predate an exec or its own
 * sched_setscheduler, and nothing else records those).
 */
static void why_refine(struct why *w, const char *path)
{
	struct why_part *p = &w->seg[w->cs].p[w->cp];
	struct why_ev e;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;

	if (p->kind != WK_RUNNABLE || !(f = fopen(path, "re"))) {
		return;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		line[len - 1] = line[len - 1] == '\n' ? 0 : line[len - 1];
		if (why_parse(line, &e) && e.ts >= w->seg[w->cs].a && why_is(&e, "sched_switch") &&
		    why_kv_num(e.args, "prev_pid", -1) == p->id) {
			why_comm(p->what, sizeof(p->what), e.args, "prev_comm", "prev_pid");
			p->prio = (int)why_kv_num(e.args, "prev_prio", p->prio);
			break;
		}
	}
	free(line);
	fclose(f);
}

/* A stamp of this side on CLOCK_MONOTONIC: the kernel's where the NIC's is on the PHC. */
static uint64_t why_mono(const struct txn *x, int s, int k, int64_t base)
{
	bool nic = (s == T1W || s == T2W || s == T3W || s == T4W) && run.ts.hw;
	uint64_t v = x->t[k] ? x->t[k] : nic ? 0 : x->t[s];

	return v && (int64_t)v > base ? (uint64_t)((int64_t)v - base) : 0;
}

static void why_seg_set(struct why *w, const char *name, const char *key, uint64_t a, uint64_t b)
{
	if (a && b && b > a && w->nseg < WHY_SEGS) {
		/* field by field: the breach's marker builds one on its path, and the parts
		 * (the bulk of it) are filled only when the trace is read, after the run */
		struct why_seg *g = &w->seg[w->nseg++];

		g->name = name;
		g->key = key;
		g->a = a;
		g->b = b;
		g->n = 0;
	}
}

/* This side's segments of x on CLOCK_MONOTONIC; the first and last stamp in *a, *b. */
static void why_segments(struct why *w, const struct txn *x, int64_t base, bool emit)
{
	w->nseg = 0;
	if (emit) {
		uint64_t t1s = why_mono(x, T1SW, T1SW, base), t1 = why_mono(x, T1W, T1K, base),
			 t4 = why_mono(x, T4W, T4K, base), t4s = why_mono(x, T4SW, T4SW, base);

		why_seg_set(w, "client tx stack", "client_tx_stack", t1s, t1);
		why_seg_set(w, "the wait for the pong", "pong_wait", t1 ? t1 : t1s, t4);
		why_seg_set(w, "client rx stack", "client_rx_stack", t4, t4s);
	} else {
		uint64_t t2 = why_mono(x, T2W, T2K, base), t2s = why_mono(x, T2SW, T2SW, base),
			 t3s = why_mono(x, T3SW, T3SW, base), t3 = why_mono(x, T3W, T3K, base);

		if (!t2s || !t3s) {
			/* no app stamps (-s): the response as one segment */
			why_seg_set(w, "server response", "response", t2, t3);
			return;
		}
		why_seg_set(w, "server rx stack", "server_rx_stack", t2, t2s);
		why_seg_set(w, "server processing", "server_processing", t2s, t3s);
		why_seg_set(w, "server tx stack", "server_tx_stack", t3s, t3);
	}
}

/* The window of x in the trace clock (mono), for the breach's marker line; false if none. */
static bool why_window(const struct txn *x, uint64_t *a, uint64_t *b)
{
	/*
	 * static: the breach's marker is written on the loop's path, and a
	 * struct why (its 256-stretch timeline) on the stack would take it
	 * some 23 KB deeper (18 KB of it new); only the segments are used
	 */
	static struct why w;
	int i;

	if (!run.clk.have) {
		return false;
	}
	why_segments(&w, x, run.clk.base, run.side.emit);
	*a = UINT64_MAX, *b = 0;
	for (i = 0; i < w.nseg; i++) {
		*a = w.seg[i].a < *a ? w.seg[i].a : *a;
		*b = w.seg[i].b > *b ? w.seg[i].b : *b;
	}
	return w.nseg > 0;
}

/*
 * A packet before its kernel receive stamp (a reflector's T2, a client's
 * T4: taken as the stack takes it in, after its NIC's IRQ and the NAPI
 * poll that brought it): the first netif_receive_skb from the stamp on,
 * before the app's stamp (or within 2 ms), names its device and the CPU
 * that received it; the last hard IRQ of that device on that CPU before
 * the stamp (its handler named after the device, as e1000e's "eth2-rx-0",
 * not a TX queue's "eth2-tx-0") opens a segment of its own, "server rx
 * irq" before the rx stack, "client rx irq" at the end of the wait for the
 * pong (which it shortens).  Not found (another naming, a NIC stamp before
 * the IRQ, events missing): no such segment.
 */
static void why_rx_irq(struct why *w, const char *path)
{
	FILE *f;
	struct why_seg *s = NULL;
	uint64_t t, from, end, irq_ts = 0;
	char dev[20] = "", name[40], *line = NULL;
	size_t cap = 0;
	ssize_t len;
	struct why_ev e;
	int cpu = -1, pass, i, at = -1;

	for (i = 0; i < w->nseg && !s; i++) {
		if (!strcmp(w->seg[i].key, "server_rx_stack") || !strcmp(w->seg[i].key, "response") ||
		    !strcmp(w->seg[i].key, "pong_wait")) {
			s = &w->seg[i];
			at = i;
		}
	}
	if (!s || w->nseg >= WHY_SEGS) {
		return;
	}
	/* the stamp: the rx stack's start, or the wait's end; an IRQ after from */
	t = strcmp(s->key, "pong_wait") ? s->a : s->b;
	from = strcmp(s->key, "pong_wait") ? 0 : s->a;
	/*
	 * the stack takes the packet in before rant has it: its
	 * netif_receive_skb comes by the app's stamp (a vCPU the host stalls
	 * between the kernel's stamp and that event put 2.9 ms between them)
	 */
	end = strcmp(s->key, "pong_wait") ? s->b : at + 1 < w->nseg ? w->seg[at + 1].b : 0;
	end = end > t ? end : t + 2000000;
	/* each pass opens it anew: tracefs's trace file does not rewind (seq_file) */
	for (pass = 0; pass < 2 && (pass == 0 || cpu >= 0); pass++) {
		if (!(f = fopen(path, "re"))) {
			break;
		}
		while ((len = getline(&line, &cap, f)) > 0) {
			line[len - 1] = line[len - 1] == '\n' ? 0 : line[len - 1];
			if (!why_parse(line, &e)) {
				continue;
			}
			if ((pass == 0 && e.ts > end) || (pass == 1 && e.ts >= t)) {
				break;
			}
			if (pass == 0 && e.ts + 1000 >= t && why_is(&e, "netif_receive_skb") &&
			    why_word(dev, sizeof(dev), e.args, "dev")) {
				cpu = e.cpu;
				break;
			}
			if (pass == 1 && e.cpu == cpu && e.ts > from && why_is(&e, "irq_handler_entry")) {
				why_comm(name, sizeof(name), e.args, "name", "irq");
				/* not a TX queue's ("eth0-tx-0": its completions) */
				if (!strncmp(name, dev, strlen(dev)) &&
				    !strstr(name + strlen(dev), "-tx-")) {
					irq_ts = e.ts;
				}
			}
		}
		fclose(f);
	}
	free(line);
	w->pkt_cpu = cpu;	/* the rx stack's too (why_account), with or without its IRQ */
	if (!irq_ts || irq_ts >= t) {
		return;
	}
	if (!strcmp(s->key, "pong_wait")) {
		s->b = irq_ts;
		at++;
	}
	memmove(&w->seg[at + 1], &w->seg[at], sizeof(w->seg[0]) * (size_t)(w->nseg - at));
	w->nseg++;
	w->seg[at] = at && !strcmp(w->seg[at - 1].key, "pong_wait") ?
		(struct why_seg){ .name = "client rx irq", .key = "client_rx_irq", .a = irq_ts, .b = t } :
		(struct why_seg){ .name = "server rx irq", .key = "server_rx_irq", .a = irq_ts, .b = t };
	w->pkt_cpu = cpu;
}

/* Explain x from trace file path (pid: rant's thread there, base: REALTIME - MONOTONIC). */
static void why_explain(struct why *w, const struct txn *x, const char *path, int pid, int64_t base,
			bool emit)
{
	FILE *f;
	int i;

	memset(w, 0, sizeof(*w));
	w->pid = pid;
	w->prio = -1;
	w->cs = w->cp = -1;
	why_segments(w, x, base, emit);
	if (!w->nseg) {
		snprintf(w->cannot, sizeof(w->cannot), "the transaction lacks the stamps that bound its segments");
		return;
	}
	w->pkt_cpu = -1;
	why_rx_irq(w, path);
	f = fopen(path, "re");
	if (!f) {
		snprintf(w->cannot, sizeof(w->cannot), "cannot read %.120s: %.60s", path, strerror(errno));
		return;
	}
	why_walk(w, f);
	fclose(f);
	for (i = 0; i < w->nseg; i++) {
		if (!strcmp(w->seg[i].key, "pong_wait")) {
			w->wait_ns += w->seg[i].b - w->seg[i].a;
		} else {
			w->own_ns += w->seg[i].b - w->seg[i].a;
		}
	}
	w->other_host = emit && w->wait_ns > w->own_ns;
	if (!w->cannot[0]) {
		why_cause(w);
		if (w->cs >= 0 && w->seg[w->cs].p[w->cp].kind == WK_UNKNOWN) {
			/*
			 * the largest part is time the trace does not cover: rant's CPU's
			 * buffer lost it while another CPU's kept older events (cannot
			 * tell, never a guess)
			 */
			snprintf(w->cannot, sizeof(w->cannot),
				 "the trace does not cover the window on rant's CPU (its buffer overran)");
			w->cs = w->cp = -1;
		} else if (w->cs >= 0) {
			why_refine(w, path);
			why_policy(w, &w->seg[w->cs].p[w->cp]);
		}
	}
}

static void why_culprit(char *buf, size_t len, const struct why *w, const struct why_part *p)
{
	int rt = p->prio >= 0 && p->prio < 100 ? 99 - p->prio : -1;
	/* the live policy was read for the cause's task alone */
	const char *pol = w->cs >= 0 && p == &w->seg[w->cs].p[w->cp] ? w->policy : "";

	if (rt >= 0) {
		snprintf(buf, len, "%s %d", pol[0] ? pol : "RT", rt);
	} else if (p->prio >= 100) {
		snprintf(buf, len, "%s nice %d", pol[0] ? pol : "OTHER", p->prio - 120);
	} else {
		snprintf(buf, len, "%s", pol[0] ? pol : "DEADLINE");
	}
}

/* A queued part's qdisc: "qdisc tbf 8001:" (its kind when known, its handle's major). */
static void why_qdisc_name(char *buf, size_t len, const struct why_part *p)
{
	snprintf(buf, len, "qdisc %s%s%x:", p->qdisc, p->qdisc[0] ? " " : "", (unsigned)p->id >> 16);
}

/*
 * A part as the breakdown lists it.  In an rx irq segment the parts are
 * what the packet's CPU did (why_account_cpu), not rant's thread: a task
 * there simply ran, whichever it was.
 */
static void why_part_text(char *buf, size_t len, const struct why *w, const struct why_seg *s,
			  const struct why_part *p)
{
	char pol[32];

	switch (p->kind) {
	case WK_RUNNABLE:
		why_culprit(pol, sizeof(pol), w, p);
		snprintf(buf, len, "%s%s (pid %d, %s) ran", strstr(s->key, "_rx_irq") ? "" : "runnable while ",
			 p->what, p->id, pol);
		break;
	case WK_IRQ:
		snprintf(buf, len, "hard IRQ %d (%s)", p->id, p->what);
		break;
	case WK_SOFTIRQ:
		snprintf(buf, len, "softirq %s", p->what);
		break;
	case WK_QUEUED:
		why_qdisc_name(pol, sizeof(pol), p);
		snprintf(buf, len, "queued in %s on %s", pol, p->what);
		break;
	default:
		snprintf(buf, len, "%s", why_kind_key[p->kind]);
	}
}

/* The cause in one sentence. */
static void why_sentence(char *buf, size_t len, const struct why *w)
{
	const struct why_seg *s;
	const struct why_part *p;
	char pol[32];
	double us;

	if (w->cannot[0]) {
		snprintf(buf, len, "cannot tell: %s", w->cannot);
		return;
	}
	if (w->cs < 0) {
		snprintf(buf, len, "cannot tell: nothing of rant's thread in the window");
		return;
	}
	s = &w->seg[w->cs];
	p = &s->p[w->cp];
	us = (double)p->ns / 1000;
	if (strstr(s->key, "_rx_irq") && p->kind != WK_UNKNOWN) {
		/* what the receiving CPU did while the ping waited for its NAPI poll */
		char what[96];

		if (p->kind == WK_RUNNABLE) {
			why_culprit(pol, sizeof(pol), w, p);
			snprintf(what, sizeof(what), "%s (pid %d, %s) ran", p->what, p->id, pol);
		} else {
			why_part_text(what, sizeof(what), w, s, p);
			strcat(what, p->kind == WK_IDLE ? "" : " ran");
		}
		snprintf(buf, len, "%s: the %s waited %.0f us after its NIC's IRQ, before the stack "
			 "took it in, while %s on CPU %d", s->name, w->pkt_cpu >= 0 &&
			 !strcmp(s->key, "client_rx_irq") ? "pong" : "ping", us, what, p->cpu);
		return;
	}
	switch (p->kind) {
	case WK_RUNNABLE:
		why_culprit(pol, sizeof(pol), w, p);
		snprintf(buf, len, "%s: rant was runnable for %.0f us while %s (pid %d, %s) ran on CPU %d%s",
			 s->name, us, p->what, p->id, pol, p->cpu,
			 /* a real-time rant passed over for long for a lower priority */
			 w->prio >= 0 && w->prio < 100 && p->prio > w->prio && p->ns >= 1000000 ?
				 " (a lower priority than rant's: RT throttling, sched_rt_runtime_us, "
				 "or kernel code it could not be preempted in)" : "");
		break;
	case WK_IRQ:
		snprintf(buf, len, "%s: hard IRQ %d (%s) held rant's CPU %d for %.0f us", s->name, p->id,
			 p->what, p->cpu, us);
		break;
	case WK_SOFTIRQ:
		snprintf(buf, len, "%s: softirq %s held rant's CPU %d for %.0f us", s->name, p->what,
			 p->cpu, us);
		break;
	case WK_IDLE:
		snprintf(buf, len, "%s: rant's CPU %d was idle and took %.0f us to run it%s", s->name, p->cpu, us,
			 /* no idle exit takes a millisecond: a real-time rant runnable on
			    an idle CPU is one whose class the kernel throttled */
			 w->prio >= 0 && w->prio < 100 && p->ns >= 1000000 ?
				 " (real-time tasks throttled there: RT throttling, sched_rt_runtime_us)" : "");
		break;
	case WK_ASLEEP:
		snprintf(buf, len, "%s: rant slept %.0f us after the packet's stamp before it was woken",
			 s->name, us);
		break;
	case WK_STOPPED:
		snprintf(buf, len, "%s: rant was stopped (SIGSTOP) for %.0f us", s->name, us);
		break;
	case WK_QUEUED:
		why_qdisc_name(pol, sizeof(pol), p);
		snprintf(buf, len, "%s: the %s waited %.0f us in %s on %s", s->name,
			 strstr(s->key, "client") ? "ping" : "pong", us, pol, p->what);
		break;
	case WK_RUN:
		snprintf(buf, len, "%s: rant itself ran for %.0f us on CPU %d (its own work, in the kernel "
			 "or not; on a VM also the time the host took the CPU)", s->name, us, p->cpu);
		break;
	default:
		snprintf(buf, len, "%s: %.0f us the trace does not explain", s->name, us);
	}
}

/* The Why: block, under a breach's breakdown. */
static void why_print(FILE *f, const struct why *w)
{
	char line[400];
	int i, k;

	why_sentence(line, sizeof(line), w);
	fprintf(f, "Why: %s\n", line);
	if (w->other_host && !w->cannot[0]) {
		fprintf(f, "  (%.0f us of it passed outside this host's stamps, %.0f us inside: the "
			   "reflector's own -t -T explains its part)\n", (double)w->wait_ns / 1000,
			(double)w->own_ns / 1000);
	}
	for (i = 0; i < w->nseg && !w->cannot[0]; i++) {
		const struct why_seg *s = &w->seg[i];

		fprintf(f, "  %-22s %8.0f us:", s->name, (double)(s->b - s->a) / 1000);
		for (k = 0; k < s->n; k++) {
			why_part_text(line, sizeof(line), w, s, &s->p[k]);
			fprintf(f, "%s %s %.0f us", k ? "," : "", line, (double)s->p[k].ns / 1000);
			if (s->p[k].cpu >= 0 && s->p[k].kind != WK_ASLEEP &&
			    s->p[k].kind != WK_STOPPED) {
				fprintf(f, " (CPU %d)", s->p[k].cpu);
			}
		}
		fputc('\n', f);
	}
}

/* A string as JSON, ASCII only (a comm may hold any byte). */
static void why_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
		} else if (c < 0x20 || c > 0x7e) {
			fprintf(f, "\\u%04x", c);
		} else {
			fputc(c, f);
		}
	}
	fputc('"', f);
}

/* The "cause" object of a breach. */
/* A part's or a stretch's kind, id, name and CPU, as JSON members. */
static void why_json_who(FILE *f, int kind, int id, const char *what, int cpu)
{
	/* a qdisc's handle as the kernel's u32 */
	fprintf(f, "\"kind\": \"%s\", \"id\": %lld, \"what\": ", why_kind_key[kind],
		kind == WK_QUEUED ? (long long)(unsigned)id : (long long)id);
	why_json_str(f, what);
	fprintf(f, ", \"cpu\": %d", cpu);
}

static void why_json(FILE *f, const struct why *w)
{
	char line[400];
	int i, k;

	why_sentence(line, sizeof(line), w);
	fprintf(f, "{\"summary\": ");
	why_json_str(f, line);
	if (w->cannot[0] || w->cs < 0) {
		fprintf(f, ", \"kind\": \"unknown\", \"why\": ");
		why_json_str(f, w->cannot[0] ? w->cannot : "nothing of rant's thread in the window");
		fprintf(f, ", \"segment\": null, \"culprit\": null, \"duration_ns\": null, \"segments\": [], "
			   "\"timeline\": [], \"timeline_dropped\": 0}");
		return;
	}
	{
		const struct why_part *p = &w->seg[w->cs].p[w->cp];

		fprintf(f, ", \"kind\": \"%s\", \"segment\": \"%s\", \"duration_ns\": %" PRIu64
			", \"other_host\": %s, \"culprit\": ", why_kind_key[p->kind], w->seg[w->cs].key, p->ns,
			w->other_host ? "true" : "false");
		if (p->kind == WK_RUNNABLE) {
			int rt = p->prio >= 0 && p->prio < 100 ? 99 - p->prio : -1;

			fprintf(f, "{\"comm\": ");
			why_json_str(f, p->what);
			fprintf(f, ", \"pid\": %d, \"cpu\": %d, \"prio\": %d, \"policy\": ", p->id, p->cpu, p->prio);
			if (w->policy[0]) {
				fprintf(f, "\"%s\"", w->policy);
			} else {
				fprintf(f, "null");
			}
			fprintf(f, ", \"rt_priority\": %d}", rt);
		} else if (p->kind == WK_IRQ || p->kind == WK_SOFTIRQ) {
			fprintf(f, "{\"%s\": %d, \"name\": ", p->kind == WK_IRQ ? "irq" : "vec", p->id);
			why_json_str(f, p->what);
			fprintf(f, ", \"cpu\": %d}", p->cpu);
		} else if (p->kind == WK_QUEUED) {
			fprintf(f, "{\"dev\": ");
			why_json_str(f, p->what);
			fprintf(f, ", \"ifindex\": %d, \"qdisc\": ", p->prio);
			if (p->qdisc[0]) {
				why_json_str(f, p->qdisc);
			} else {
				fprintf(f, "null");
			}
			fprintf(f, ", \"handle\": \"%x:%x\"}", (unsigned)p->id >> 16,
				(unsigned)p->id & 0xffff);
		} else {
			fprintf(f, "null");
		}
	}
	fprintf(f, ", \"segments\": [");
	for (i = 0; i < w->nseg; i++) {
		const struct why_seg *s = &w->seg[i];

		fprintf(f, "%s{\"segment\": \"%s\", \"start_mono_ns\": %" PRIu64 ", \"duration_ns\": %" PRIu64
			", \"parts\": [", i ? ", " : "", s->key, s->a, s->b - s->a);
		for (k = 0; k < s->n; k++) {
			fprintf(f, "%s{", k ? ", " : "");
			why_json_who(f, s->p[k].kind, s->p[k].id, s->p[k].what, s->p[k].cpu);
			fprintf(f, ", \"duration_ns\": %" PRIu64 "}", s->p[k].ns);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "], \"timeline\": [");
	for (k = 0; k < w->ntl; k++) {
		const struct why_tl *e = &w->tl[k];

		fprintf(f, "%s{\"segment\": \"%s\", \"start_mono_ns\": %" PRIu64 ", \"duration_ns\": %" PRIu64
			", ", k ? ", " : "", w->seg[e->seg].key, e->t, e->ns);
		why_json_who(f, e->kind, e->id, e->what, e->cpu);
		fputc('}', f);
	}
	fprintf(f, "], \"timeline_dropped\": %" PRIu64 "}", w->tl_dropped);
}

/*
 * The kind of each qdisc a queued part names, asked of the kernel now
 * (rtnetlink(7), RTM_GETQDISC: the trace's enqueue and dequeue give only
 * the ifindex and handle).  A live run only: rant is in the device's
 * network namespace; --analyze of a saved trace names the handle alone.
 */
static void why_qdisc_each(const uint8_t *b, size_t len, void *arg)
{
	struct why_part *p = arg;
	struct tcmsg t;
	const struct nlattr *k;

	if (len < NLMSG_ALIGN(sizeof(t))) {
		return;
	}
	memcpy(&t, b, sizeof(t));
	if (t.tcm_ifindex != p->prio || t.tcm_handle != (unsigned)p->id) {
		return;
	}
	k = nla_find(b + NLMSG_ALIGN(sizeof(t)), b + len, TCA_KIND);
	if (k) {
		snprintf(p->qdisc, sizeof(p->qdisc), "%.*s", (int)(k->nla_len - NLA_HDRLEN),
			 (const char *)k + NLA_HDRLEN);
	}
}

static void why_qdisc_kind(struct why_part *p)
{
	qdisc_dump(p->prio, why_qdisc_each, p);
}

static void why_qdisc_kinds(struct why *w)
{
	int i, k;

	for (i = 0; i < w->nseg && !w->cannot[0]; i++) {
		for (k = 0; k < w->seg[i].n; k++) {
			if (w->seg[i].p[k].kind == WK_QUEUED && w->seg[i].p[k].prio > 0) {
				why_qdisc_kind(&w->seg[i].p[k]);
			}
		}
	}
}

/* The Why: of this run's (a reflector: this session's) breaches kept, in their order. */
static struct why *why_kept;
static unsigned why_n;

#define WHY_EXPLAINED	10	/* as many as the report prints in full */

/*
 * After the run stops (a reflector: as its session ends): read the
 * instance's trace back for the breaches kept.  Without -C tracing stopped
 * at the first breach, so its trace is the one there; with -C the buffer
 * holds the latest events, and a breach whose window it lost says so.
 */
static void why_run(void)
{
	char path[PATH_MAX + 16];
	unsigned i, n = sess.nbreach_kept < WHY_EXPLAINED ? (unsigned)sess.nbreach_kept :
								 WHY_EXPLAINED;

	why_n = 0;
	if (!cfg->trace || !n || run.tr.marker_fd < 0) {
		return;
	}
	if (!why_kept && !(why_kept = calloc(WHY_EXPLAINED, sizeof(*why_kept)))) {
		return;
	}
	snprintf(path, sizeof(path), "%s/trace", run.tr.dir);
	for (i = 0; i < n; i++) {
		struct why *w = &why_kept[i];

		if (run.tr.why_not[0] || !run.clk.have) {
			memset(w, 0, sizeof(*w));
			w->cs = w->cp = -1;
			snprintf(w->cannot, sizeof(w->cannot), "%s",
				 run.tr.why_not[0] ? run.tr.why_not : "no clock base to relate the trace to");
			continue;
		}
		why_explain(w, &sess.breach[i].x, path, run.tr.tid, run.clk.base, run.side.emit);
		why_qdisc_kinds(w);
	}
	why_n = n;
}

static void why_print_kept(FILE *f, unsigned i)
{
	if (i < why_n) {
		why_print(f, &why_kept[i]);
	}
}

/* "breaches": [{seq, value_ns, cause}] in the JSON's threshold object. */
static void why_json_breaches(FILE *f)
{
	unsigned i, n = sess.nbreach_kept < WHY_EXPLAINED ? (unsigned)sess.nbreach_kept :
								 WHY_EXPLAINED;

	fprintf(f, ", \"breaches\": [");
	for (i = 0; i < n; i++) {
		fprintf(f, "%s{\"seq\": %" PRIu64 ", \"value_ns\": %" PRId64 ", \"cause\": ", i ? ", " : "",
			sess.breach[i].x.seq, sess.breach[i].value);
		if (i < why_n) {
			why_json(f, &why_kept[i]);
		} else {
			fprintf(f, "null");
		}
		fputc('}', f);
	}
	fputc(']', f);
}

/*
 * --analyze LOG --trace FILE: the trace of a run that breached under -T, as
 * `cat trace` wrote it (or `trace-cmd report -R`: the same fields, a
 * task's state as a number).  Its first RANT_BREACH marker names rant's
 * thread (the line's task), the side (rtt_ns: a client's) and the clock
 * base (base_ns); each --top transaction is then explained as a live run's
 * breach is.
 */
static struct {
	bool read, ok, emit;
	int pid;
	int64_t base;
	char why[160];
} why_src;

static void why_src_read(void)
{
	struct why_ev e;
	char *line = NULL, *m;
	const char *b;
	size_t cap = 0;
	ssize_t len;
	FILE *f;

	why_src.read = true;
	f = fopen(cfg->trace_file, "re");
	if (!f) {
		snprintf(why_src.why, sizeof(why_src.why), "cannot read %.100s: %.40s", cfg->trace_file,
			 strerror(errno));
		return;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		line[len - 1] = line[len - 1] == '\n' ? 0 : line[len - 1];
		if (!(m = strstr(line, "RANT_BREACH ")) || !why_parse(line, &e)) {
			continue;
		}
		b = why_kv(m, "base_ns");
		if (!b) {
			continue;	/* a marker of a rant before the Why: (no base) */
		}
		why_src.pid = e.pid;
		why_src.base = strtoll(b, NULL, 10);
		why_src.emit = why_kv(m, "rtt_ns") != NULL;
		why_src.ok = true;
		break;
	}
	free(line);
	fclose(f);
	if (!why_src.ok && !why_src.why[0]) {
		snprintf(why_src.why, sizeof(why_src.why),
			 "the trace has no RANT_BREACH marker with base_ns= (a run with -t and -T writes it)");
	}
}

/* The Why: of an --analyze --top transaction, when --trace gave a trace. */
static void why_print_analyzed(FILE *f, const struct txn *x)
{
	struct why w;

	if (!cfg->trace_file) {
		return;
	}
	if (!why_src.read) {
		why_src_read();
	}
	memset(&w, 0, sizeof(w));
	w.cs = w.cp = -1;
	if (!why_src.ok) {
		snprintf(w.cannot, sizeof(w.cannot), "%s", why_src.why);
	} else if (why_src.emit != run.side.emit) {
		snprintf(w.cannot, sizeof(w.cannot), "the trace is the %s's (its marker), the log the %s's",
			 why_src.emit ? "client" : "reflector", run.side.emit ? "client" : "reflector");
	} else {
		why_explain(&w, x, cfg->trace_file, why_src.pid, why_src.base, why_src.emit);
	}
	why_print(f, &w);
}

/* -------------------------------------------------------------- tracing */

/*
 * Where tracefs may be.  `ip netns exec` gives the command its own mount
 * namespace with /sys remounted, which hides /sys/kernel/tracing.  The
 * parent processes (the shell, sudo) still live in the original namespace,
 * and /proc/PID/root walks into it; init's is the last resort (PID 1 may be
 * out of reach in a container).  Failing all that, tracefs is mounted in a
 * private mount namespace of rant's own: the host's mounts and its tracing
 * state are not touched, only rant's view of them.
 */
static const char *const tracefs_dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

static bool trace_try(const char *prefix, char *out, size_t len)
{
	char p[PATH_MAX];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(tracefs_dirs); i++) {
		snprintf(p, sizeof(p), "%s%s/instances", prefix, tracefs_dirs[i]);
		if (access(p, F_OK) == 0) {
			snprintf(out, len, "%s%s", prefix, tracefs_dirs[i]);
			return true;
		}
	}
	return false;
}

static pid_t parent_of(pid_t pid)
{
	char p[64], buf[512], *rp;
	pid_t pp = 0;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	f = fopen(p, "r");
	if (!f) {
		return 0;
	}
	if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) &&
	    sscanf(rp + 1, " %*c %d", &pp) != 1) {
		pp = 0;
	}
	fclose(f);
	return pp;
}

static bool trace_root(char *out, size_t len)
{
	char prefix[64];
	pid_t pid = getppid();
	int depth;

	if (trace_try("", out, len)) {
		return true;
	}
	for (depth = 0; pid > 0 && depth < 16; depth++, pid = parent_of(pid)) {
		snprintf(prefix, sizeof(prefix), "/proc/%d/root", (int)pid);
		if (trace_try(prefix, out, len)) {
			return true;
		}
	}
	if (trace_try("/proc/1/root", out, len)) {
		return true;
	}
	if (unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
	    mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0) {
		return trace_try("", out, len);
	}
	return false;
}

static int trace_open_file(const char *name, const char *opt)
{
	char p[PATH_MAX + 32];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", run.tr.dir, name);
	fd = open(p, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		warnx_("%s: cannot open %s: %s%s", opt, p, strerror(errno),
		       errno == EACCES || errno == EPERM ? " (tracing needs root)" : "");
	}
	return fd;
}

/* A tracefs file of the instance read whole into buf (at most len - 1 bytes); -1 if unreadable. */
static ssize_t trace_read_file(const char *name, char *buf, size_t len)
{
	char p[PATH_MAX + 32];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", run.tr.dir, name);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		return -1;
	}
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return n;
}

/* Write s to the instance's file name (O_TRUNC: set_event's "replace all"); 0 or -errno. */
static int trace_write_file(const char *name, const char *s, bool trunc)
{
	char p[PATH_MAX + 32];
	int fd, r = 0;

	snprintf(p, sizeof(p), "%s/%s", run.tr.dir, name);
	fd = open(p, O_WRONLY | O_CLOEXEC | (trunc ? O_TRUNC : O_APPEND));
	if (fd < 0) {
		return -errno;
	}
	if (*s && write(fd, s, strlen(s)) < 0) {
		r = -errno;
	}
	close(fd);
	return r;
}

/*
 * The events the Why: analysis reads, enabled when the instance has none
 * (Documentation/trace/events.rst: set_event takes "system:event").  The
 * scheduler's switch and wake-up say who ran while rant waited; the
 * handlers' entry and exit say how long IRQs and softirqs held the CPU;
 * napi_poll, the receive and transmit points and cpu_idle name the packet's
 * path and an idle CPU's wake-up; the qdisc's enqueue and dequeue how long
 * rant's packet waited in one.  One that this kernel lacks is skipped.
 */
static const char *const why_events[] = {
	"sched:sched_switch", "sched:sched_waking", "sched:sched_wakeup",
	"sched:sched_migrate_task", "irq:irq_handler_entry", "irq:irq_handler_exit",
	"irq:softirq_entry", "irq:softirq_exit", "napi:napi_poll", "net:netif_receive_skb",
	"net:net_dev_queue", "net:net_dev_xmit", "qdisc:qdisc_enqueue", "qdisc:qdisc_dequeue",
	"power:cpu_idle",
};

/*
 * What the Why: analysis needs from the instance, fixed for the run or said
 * in one line: tracing on, the mono trace clock (CLOCK_MONOTONIC: rant
 * relates its CLOCK_REALTIME stamps to it through the REALTIME - MONOTONIC
 * base of its clock-step check), the scheduler events.  A user's own event
 * selection is left alone and used.
 */
static void trace_prepare(const char *opt)
{
	char buf[4096], kb[32], *b, *e;
	size_t i;
	int r;

	if (trace_read_file("tracing_on", buf, sizeof(buf)) > 0 && buf[0] == '0') {
		if (write(run.tr.on_fd, "1", 1) == 1) {
			run.tr.turned_on = true;
			warnx_("%s: tracing was off in %s (an earlier breach stops it): on for this run",
			       opt, run.tr.dir);
		}
	}
	/* the clock in use is the one in brackets: "[local] global ... mono ..." */
	if (trace_read_file("trace_clock", buf, sizeof(buf)) > 0 && (b = strchr(buf, '[')) &&
	    (e = strchr(b, ']'))) {
		*e = 0;
		if (!strcmp(b + 1, "mono")) {
			run.tr.mono = true;
		} else if ((r = trace_write_file("trace_clock", "mono", true)) == 0) {
			/* a new clock empties the buffer: nothing of this run is in it yet */
			run.tr.mono = true;
		} else {
			snprintf(run.tr.why_not, sizeof(run.tr.why_not),
				 "the trace clock is %.23s and cannot be set to mono (%s)", b + 1,
				 strerror(-r));
		}
	} else {
		snprintf(run.tr.why_not, sizeof(run.tr.why_not), "the instance's trace_clock is unreadable");
	}
	if (run.tr.why_not[0]) {
		warnx_("%s: breaches will not be explained: %s", opt, run.tr.why_not);
		return;
	}
	if (trace_read_file("set_event", buf, sizeof(buf)) < 0) {
		snprintf(run.tr.why_not, sizeof(run.tr.why_not), "the instance's set_event is unreadable");
		warnx_("%s: breaches will not be explained: %s", opt, run.tr.why_not);
		return;
	}
	if (!buf[0]) {
		for (i = 0; i < ARRAY_SIZE(why_events); i++) {
			char ev[64];

			snprintf(ev, sizeof(ev), "%s\n", why_events[i]);
			if (trace_write_file("set_event", ev, false) == 0) {
				run.tr.set_events = true;
			}
		}
	} else if (!strstr(buf, "sched:sched_switch") ||
		   (!strstr(buf, "sched:sched_waking") && !strstr(buf, "sched:sched_wakeup"))) {
		warnx_("%s: the instance's own events (kept) lack sched:sched_switch or a wake-up event: "
		       "a breach's Why: cannot say who ran", opt);
	}
	/* too small to keep a window until it is read: named (resizing would empty it) */
	if (trace_read_file("buffer_size_kb", kb, sizeof(kb)) > 0 && atol(kb) < 1024) {
		warnx_("%s: the instance's buffer is %ld KB a CPU: a breach's window may be overwritten "
		       "before it is read%s (raise it: echo 4096 > %s/buffer_size_kb)", opt, atol(kb),
		       cfg->cont ? ", with -C the more so" : "", run.tr.dir);
	}
	if (!run.tr.set_events && !buf[0]) {
		snprintf(run.tr.why_not, sizeof(run.tr.why_not), "no event could be enabled in the instance");
		warnx_("%s: breaches will not be explained: %s", opt, run.tr.why_not);
	}
}

/*
 * After the run (and its Why:): the events rant enabled off again and
 * tracing_on as it was.  The trace clock stays mono: the kernel empties
 * the buffer on a clock change (kernel/trace/trace.c, tracing_set_clock),
 * and what is in it (a breach's trace, the markers) is what the user reads
 * next.
 */
static void trace_restore(bool kept)
{
	if (run.tr.marker_fd < 0) {
		return;
	}
	if (run.tr.set_events && trace_write_file("set_event", "", true) < 0) {
		warnx_("-T: could not turn off the events rant enabled in %s", run.tr.dir);
	}
	run.tr.set_events = false;
	if (run.tr.turned_on && !kept && write(run.tr.on_fd, "0", 1) < 0) {
		/* it stays on: nothing is lost */
	}
	run.tr.turned_on = false;
}

/* Open and check everything -T/-S need; one line and -1 on failure. */
static int trace_open(void)
{
	const char *inst = cfg->trace_instance ? cfg->trace_instance : "rant";
	const char *opt = cfg->snapshot ? "-S" : "-T";
	char root[PATH_MAX];
	struct stat sb;

	if (!trace_root(root, sizeof(root))) {
		warnx_("%s: tracefs not found (tried /sys/kernel/tracing, /sys/kernel/debug/tracing and via /proc/1/root); mount it: mount -t tracefs nodev /sys/kernel/tracing && mkdir /sys/kernel/tracing/instances/%s",
		       opt, inst);
		return -1;
	}
	snprintf(run.tr.dir, sizeof(run.tr.dir), "%.3800s/instances/%.200s", root, inst);
	if (stat(run.tr.dir, &sb) < 0 || !S_ISDIR(sb.st_mode)) {
		warnx_("%s: tracing instance '%s' does not exist; create it: mkdir %s", opt, inst, run.tr.dir);
		return -1;
	}
	if (cfg->snapshot) {
		char snap[PATH_MAX + 16];

		snprintf(snap, sizeof(snap), "%s/snapshot", run.tr.dir);
		if (access(snap, F_OK) < 0) {
			warnx_("-S: this kernel has no snapshot support (no %s; it needs CONFIG_TRACER_SNAPSHOT=y): run without -S, or on a kernel built with it and then: echo 1 > %s",
			       snap, snap);
			return -1;
		}
		run.tr.snap_fd = trace_open_file("snapshot", opt);
		if (run.tr.snap_fd < 0) {
			return -1;
		}
	}
	run.tr.marker_fd = trace_open_file("trace_marker", opt);
	run.tr.on_fd = trace_open_file("tracing_on", opt);
	if (run.tr.marker_fd < 0 || run.tr.on_fd < 0) {
		return -1;
	}
	run.tr.tid = (int)syscall(SYS_gettid);	/* the measuring thread: the trace's rant */
	trace_prepare(opt);
	return 0;
}

static void trace_mark(const char *s, size_t n)
{
	if (run.tr.marker_fd >= 0 && write(run.tr.marker_fd, s, n) < 0) {
		/* a full or stopped buffer drops the line; nothing to do */
	}
}

/*
 * On a breach: mark it with every stamp known now, then (stop mode) freeze
 * the trace.  With --continue tracing stays on so that every later breach is
 * marked too; -S takes a snapshot at each one.
 */
static void trace_breach(const struct txn *x, int64_t v)
{
	uint64_t wa, wb;
	char line[1024], note[96], *p = line;
	int k;

	if (run.tr.marker_fd < 0) {
		return;
	}
	p = fmt_str(p, "RANT_BREACH seq=");
	p = fmt_u64(p, x->seq);
	p = fmt_str(p, run.side.emit ? " rtt_ns=" : " response_ns=");
	p = fmt_i64(p, v);
	p = fmt_str(p, " threshold_ns=");
	p = fmt_i64(p, cfg->threshold_ns);
	p = fmt_str(p, cls_note(note, sizeof(note), x->seq));
	for (k = 0; k < run.side.nstamps; k++) {
		int s = run.side.stamps[k];

		if (x->t[s]) {
			*p++ = ' ';
			p = fmt_str(p, stamp_base[s]);
			p = fmt_str(p, s == T1L		 ? "_LT=" :
				       s >= T1K		 ? "_K=" :
				       !stamp_is_wire[s] ? "_SW=" :
				       stamp_hw(s)	 ? "_HW=" :
							   "_KSW=");
			p = fmt_stamp(p, x->t[s], '-');
		}
	}
	p = pmc_marker(p, x);
	/* where a reader of the trace finds the transaction, and how rant relates its stamps */
	if (run.tr.mono && why_window(x, &wa, &wb)) {
		p = fmt_str(p, " window=");
		p = fmt_trace_ts(p, wa);
		*p++ = '-';
		p = fmt_trace_ts(p, wb);
		p = fmt_str(p, " base_ns=");
		p = fmt_i64(p, run.clk.base);
	}
	*p++ = '\n';
	trace_mark(line, (size_t)(p - line));
	if (run.tr.snap_fd >= 0 && write(run.tr.snap_fd, "1", 1) < 0) {
		/* reported by the check at start; ignore here */
	}
	if (!cfg->cont && run.tr.on_fd >= 0 && write(run.tr.on_fd, "0", 1) < 0) {
		/* as above */
	}
	run.tr.breached = true;
}

/* ------------------------------------------------------------------ log */

/*
 * The client's log keeps the reflector's kernel stamps (T2_K, T3_K) besides
 * its own stamps: a reflector with NIC stamps sends them in its pongs
 * (PF_KSTAMPS), and --analyze needs them for the numbers the run showed.
 */
static const int emit_stamps_log[] = { T1SW, T1W, T2W, T2K, T2SW, T3SW, T3K, T3W, T4W, T4SW };
_Static_assert(ARRAY_SIZE(emit_stamps_k) == ARRAY_SIZE(emit_stamps_log) + 2, "the client's own T1_K and T4_K");
_Static_assert(ARRAY_SIZE(reflect_stamps_k) == ARRAY_SIZE(reflect_stamps) + 2, "the reflector's T2_K and T3_K");
/* --txtime: each ping's launch time too (T1_LT), after the stamps it would have without */
static const int emit_stamps_log_lt[] = {
	T1SW, T1W, T2W, T2K, T2SW, T3SW, T3K, T3W, T4W, T4SW, T1L,
};
static const int emit_stamps_k_lt[] = {
	T1SW, T1K, T1W, T2W, T2K, T2SW, T3SW, T3K, T3W, T4W, T4K, T4SW, T1L,
};
/* each list with the launch time is its list without it, and T1_LT */
_Static_assert(ARRAY_SIZE(emit_stamps_log_lt) == ARRAY_SIZE(emit_stamps_log) + 1, "T1_LT once more");
_Static_assert(ARRAY_SIZE(emit_stamps_k_lt) == ARRAY_SIZE(emit_stamps_k) + 1, "T1_LT once more");

/*
 * A record's fields, in order, the one place that says so: the seq, each
 * stamp of the ring's list (8 bytes each), the status, then -M's counts
 * (8 bytes each).  Native byte order: the ring never leaves the process.
 */
enum log_rec { LR_SEQ = 0, LR_STAMP0 = 8, LR_STAMP_LEN = 8, LR_STATUS_LEN = 4, LR_PMC_LEN = 8 };
_Static_assert(LR_STAMP0 == sizeof(((struct txn *)0)->seq) &&
	       LR_STAMP_LEN == sizeof(((struct txn *)0)->t[0]) &&
	       LR_PMC_LEN == sizeof(((struct txn *)0)->pmc[0]), "a record's fields are the transaction's");

static size_t lr_stamp(int k)
{
	return LR_STAMP0 + (size_t)LR_STAMP_LEN * (size_t)k;
}

static size_t lr_status(int nstamps)
{
	return lr_stamp(nstamps);
}

static size_t lr_pmc(int nstamps)
{
	return lr_status(nstamps) + LR_STATUS_LEN;
}

/* Bytes of a record of n stamps: seq, the stamps, the status, the -M counts. */
static uint32_t log_rec_bytes(int n)
{
	return (uint32_t)(lr_pmc(n) + (size_t)LR_PMC_LEN * (size_t)run.pmc.n);
}

static void log_init(struct log_ring *l, uint8_t *mem, uint64_t cap)
{
	bool emit8 = run.side.emit && run.side.nstamps == (int)ARRAY_SIZE(emit_stamps);

	memset(l, 0, sizeof(*l));
	l->mem = mem;
	l->cap = cap;
	l->stamps = emit8 ? emit_stamps_log : run.side.stamps;
	l->nstamps = emit8 ? (int)ARRAY_SIZE(emit_stamps_log) : run.side.nstamps;
	if (emit8 && tsn.on) {
		l->stamps = emit_stamps_log_lt;
		l->nstamps = (int)ARRAY_SIZE(emit_stamps_log_lt);
	}
	l->rec_size = log_rec_bytes(l->nstamps);
}

/*
 * The bytes a record is given before the socket is open: room for this
 * side's kernel stamps too when hardware stamps may be granted (-i, not
 * --timestamps sw, and a NIC that did not say it cannot: run.ts_no_hw).
 */
static size_t log_rec_size(bool emit)
{
	/* each side's own kernel stamps too (T1_K, T4_K; T2_K, T3_K), and the launch time */
	bool k = cfg->iface && cfg->ts != TS_SW && !run.ts_no_hw;

	size_t emit_n = k ? ARRAY_SIZE(emit_stamps_k) : ARRAY_SIZE(emit_stamps_log);
	size_t refl_n = k ? ARRAY_SIZE(reflect_stamps_k) : ARRAY_SIZE(reflect_stamps);

	return log_rec_bytes(emit ? (int)emit_n + tsn.on : (int)refl_n);
}

/*
 * Keep the record in the ring: when the run produces more than --log-records
 * the oldest go, so the log holds the last N with their real sequence numbers.
 */
static void log_push(const struct txn *x)
{
	struct log_ring *l = &sess.log;
	uint8_t *p;
	uint32_t status = (uint32_t)txn_status(x);
	int k;

	if (cfg->log_threshold_ns >= 0) {
		int64_t v;

		if (status == ST_WARMUP || (status == ST_OK &&
		    (!metric_value(run.side.primary, x->t, &v) || v <= cfg->log_threshold_ns))) {
			l->filtered++;
			return;
		}
	}
	p = l->mem + (l->head % l->cap) * l->rec_size;
	memcpy(p + LR_SEQ, &x->seq, sizeof(x->seq));
	for (k = 0; k < l->nstamps; k++) {
		memcpy(p + lr_stamp(k), &x->t[l->stamps[k]], LR_STAMP_LEN);
	}
	memcpy(p + lr_status(l->nstamps), &status, LR_STATUS_LEN);
	memcpy(p + lr_pmc(l->nstamps), x->pmc, LR_PMC_LEN * (size_t)run.pmc.n);
	l->head++;
	if (l->n < l->cap) {
		l->n++;
	} else {
		l->dropped++;
	}
}

static void log_get(const struct log_ring *l, uint64_t i, struct txn *x, int *status)
{
	const uint8_t *p = l->mem + ((l->head - l->n + i) % l->cap) * l->rec_size;
	uint32_t st;
	int k;

	memset(x, 0, sizeof(*x));
	memcpy(&x->seq, p + LR_SEQ, sizeof(x->seq));
	for (k = 0; k < l->nstamps; k++) {
		memcpy(&x->t[l->stamps[k]], p + lr_stamp(k), LR_STAMP_LEN);
	}
	memcpy(&st, p + lr_status(l->nstamps), LR_STATUS_LEN);
	memcpy(x->pmc, p + lr_pmc(l->nstamps), LR_PMC_LEN * (size_t)run.pmc.n);
	*status = (int)st;
}

/*
 * A pong that came after its ping left the window (emit_stale): its record,
 * written as lost, becomes late with its T4 stamps, as a pong late within
 * the window makes it, so that the log says what the live run counted.
 * The client's records are in SEQ order (it retires in order): found by
 * bisection, O(log n), and only for such a pong.  Gone from the ring: nothing.
 */
static void log_late(uint64_t seq, uint64_t t4w, uint64_t t4sw, uint64_t t4k)
{
	struct log_ring *l = &sess.log;
	uint64_t lo = 0, hi = l->n, s;
	uint32_t late = ST_LATE;
	uint8_t *p;
	int k;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const uint8_t *r = l->mem + ((l->head - l->n + mid) % l->cap) * l->rec_size;

		memcpy(&s, r + LR_SEQ, sizeof(s));
		if (s < seq) {
			lo = mid + 1;
		} else {
			hi = mid;
		}
	}
	if (!l->cap || lo == l->n) {
		return;
	}
	p = l->mem + ((l->head - l->n + lo) % l->cap) * l->rec_size;
	memcpy(&s, p + LR_SEQ, sizeof(s));
	if (s != seq) {
		return;
	}
	for (k = 0; k < l->nstamps; k++) {
		int st = l->stamps[k];

		if (st == T4W || st == T4SW || st == T4K) {
			const uint64_t *v = st == T4W ? &t4w : st == T4SW ? &t4sw : &t4k;

			memcpy(p + lr_stamp(k), v, LR_STAMP_LEN);
		}
	}
	memcpy(p + lr_status(l->nstamps), &late, LR_STATUS_LEN);
}

/* The columns of each format, in order; text keeps the earlier rant's. */
static int log_columns(bool csv, int *cols)
{
	static const int emit_text[] = { T1SW, T1W, T4W, T4SW };
	static const int emit_text_lt[] = { T1SW, T1W, T4W, T4SW, T1L };	/* --txtime */
	static const int refl_text[] = { T2W, T2SW, T3SW, T3W };
	/* csv: every stamp the ring kept; the reflector's kernel stamps if it sent any */
	bool all = csv && sess.log.stamps &&
		   (sess.srv_kx || sess.log.nstamps != (int)ARRAY_SIZE(emit_stamps_log));
	const int *src = all ? sess.log.stamps : csv ? run.side.stamps :
			 run.side.emit ? (tsn.on ? emit_text_lt : emit_text) : refl_text;
	int i, n = 0, cnt = all ? sess.log.nstamps : csv ? run.side.nstamps :
			    (int)(!run.side.emit ? ARRAY_SIZE(refl_text) :
				  tsn.on     ? ARRAY_SIZE(emit_text_lt) : ARRAY_SIZE(emit_text));

	for (i = 0; i < cnt; i++) {
		bool sw = !stamp_is_wire[src[i]];

		if (!csv && sw && !cfg->sw_stamps && !(resp_tx_app() && src[i] == T3SW)) {
			continue;
		}
		if ((resp_tx_app() && src[i] == T3W) || (cli_no_tx() && src[i] == T1W)) {
			continue;	/* -N, --client-no-tx-ts: never stamped */
		}
		cols[n++] = src[i];
	}
	return n;
}

/* The text report: stdout, unless --json - or --series - has it (then stderr). */
static FILE *report_stream(void)
{
	return (cfg->json && !strcmp(cfg->json, "-")) || (cfg->series && !strcmp(cfg->series, "-")) ?
	       stderr : stdout;
}

/*
 * Checked output, for every file rant writes (report, JSON, log, plot): a
 * failed or short write is reported in one line that names the file and the
 * error ("rant: --log: writing run.log failed: No space left on device"),
 * and the caller turns it into exit 1.  out_write() writes a whole buffer to
 * a descriptor; out_finish() ends a stdio stream.  what is "OPT: writing FILE".
 */
static int out_write(const char *what, int fd, const void *buf, size_t len)
{
	int r = write_all(fd, buf, len);

	if (r < 0) {
		warnx_("%s failed: %s", what, strerror(-r));
	}
	return r;
}

/* Flush (and close) f: 0, or -errno after saying which file failed. */
static int out_finish(const char *what, FILE *f, bool close_it)
{
	int err = 0;

	/*
	 * glibc's fflush repeats a failed write while data is buffered, so
	 * errno names the cause; if the buffer went with an earlier failure,
	 * errno still holds it (callers clear errno before writing).
	 */
	if (fflush(f) == EOF) {
		err = errno;
	}
	if (ferror(f) && !err) {
		err = errno ? errno : EIO;
	}
	if (close_it && fclose(f) == EOF && !err) {
		err = errno;
	}
	if (err) {
		warnx_("%s failed: %s", what, strerror(err));
	}
	return -err;
}

/*
 * The command line in the csv header comment: paths may hold newlines,
 * commas or any byte, and a newline would end the comment and break the
 * log for --analyze.  Backslash, control bytes, DEL, commas and bytes above
 * 0x7e are written as \xHH; the header stays one ASCII line.
 */
static const char *log_escape(const char *s)
{
	static char out[sizeof(cfg->cmdline) * 4 + 1];
	char *p = out;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c > 0x7e || c == '\\' || c == ',') {
			p += sprintf(p, "\\x%02x", c);
		} else {
			*p++ = (char)c;
		}
	}
	*p = 0;
	return out;
}

/*
 * A --size list's turns, each size with its first SEQ (a turn -d never
 * reached begins at the next SEQ that would have been sent): --analyze tells
 * a size the list repeats from its first turn.
 */
static char *log_size_turns(char *p)
{
	int z;

	if (!run.side.emit || classes.nsz < 2 || classes.analyze) {
		return p;
	}
	for (z = 0; z < classes.nsz; z++) {
		p += sprintf(p, "%s%u@%" PRIu64, z ? "/" : " size_turns=", classes.size[z],
			     z <= classes.phase ? classes.phase_seq0[z] : result.seqs);
	}
	return p;
}

/*
 * A csv log's facts (version, side, stamps, session, counts, offsets,
 * command line) as one "# rant ..." comment line, written after the rows:
 * the column line comes first, so that csv.DictReader, pandas and
 * spreadsheets take it as the header without options.  --analyze reads the
 * line from the end of the file (alog_trailer), and still reads it first in
 * the logs of earlier builds.
 */
static char *log_csv_facts(char *p)
{
	p += sprintf(p, "# rant %s mode=%s wire=%s server_wire=%s app_stamps=%s session=0x%08x records=%" PRIu64
		     " dropped=%" PRIu64 "%s",
		     RANT_VERSION, run.side.emit ? "emit" : "reflect", run.ts.hw ? "hardware" : "software",
		     (run.side.emit ? sess.srv_hw : run.ts.hw) ? "hardware" : "software",
		     cfg->sw_stamps ? "on" : "off", sess.id, sess.log.n, sess.log.dropped,
		     resp_tx_app() ? " response=T3_SW-T2_wire(app_send,-N)" :
		     cli_no_tx() ? " rtt=T4_wire-T1_SW(app_send,--client-no-tx-ts)" : "");
	/* whether the log holds every transaction: --analyze's loss by direction */
	p += sprintf(p, " filtered=%" PRIu64, sess.log.filtered);
	p = log_size_turns(p);
	if (run.ts.wire_off) {
		/* the stamps stay raw: --analyze takes the PHC's offset out again */
		p += sprintf(p, " wire_offset_ns=%" PRId64, run.ts.wire_off);
	}
	if (run.side.emit && (run.ts.peer_off_on || result.srv_phc.method)) {
		/* the reflector's, from its pongs, else its FIN_ACK's last reading */
		p += sprintf(p, " server_wire_offset_ns=%" PRId64,
			     run.ts.peer_off_on ? run.ts.peer_off : result.srv_phc.off);
	}
	p += sprintf(p, " cmdline=%s\n", log_escape(cfg->cmdline));
	return p;
}

static char *log_header(char *p, bool csv, const int *cols, int ncols)
{
	char name[16];
	char *start = p;
	int i;

	if (csv) {
		p = fmt_str(p, "seq,status");
		for (i = 0; i < ncols; i++) {
			char *q = p + 1;

			p += sprintf(p, ",%s", stamp_name(cols[i], name, sizeof(name)));
			for (; q < p; q++) {
				*q = (char)tolower((unsigned char)*q);
			}
		}
		p = fmt_str(p, run.side.emit ? cli_no_tx() ? ",rtt_app_tx_ns,response_ns,network_ns,forward_ns,backward_ns" :
				 ",rtt_ns,response_ns,network_ns,forward_ns,backward_ns" :
				 resp_tx_app() ? ",response_app_tx_ns" : ",response_ns");
		p = pmc_csv_header(p);
		p = cls_log_cols(p, true, NULL);
		*p++ = '\n';
		return p;
	}
	p = fmt_str(p, "SEQ");
	for (i = 0; i < ncols; i++) {
		p += sprintf(p, " %s", stamp_name(cols[i], name, sizeof(name)));
	}
	p = fmt_str(p, run.side.emit ? cli_no_tx() ? " RTT_APP_TX" : " RTT" :
		    resp_tx_app() ? " RESPONSE_APP_TX" : " RESPONSE");
	p = cls_log_cols(p, false, NULL);
	*p++ = '\n';
	memset(p, '-', (size_t)(p - start - 1));
	p += p - start - 1;
	*p++ = '\n';
	return p;
}

static char *log_value(char *p, int m, const uint64_t *t, const char *none)
{
	int64_t v;

	return metric_value(m, t, &v) ? fmt_i64(p, v) : fmt_str(p, none);
}

/* Format one record; text rows skip warm-up (the earlier rant logged measurements). */
static char *log_row(char *p, bool csv, const int *cols, int ncols, const struct txn *x, int status)
{
	int i;

	p = fmt_u64(p, x->seq);
	if (csv) {
		*p++ = ',';
		p = fmt_str(p, status_name[status]);
		for (i = 0; i < ncols; i++) {
			*p++ = ',';
			p = fmt_stamp(p, x->t[cols[i]], 0);
		}
		*p++ = ',';
		if (run.side.emit) {
			p = log_value(p, M_RTT, x->t, "");
			*p++ = ',';
			p = log_value(p, M_RESPONSE, x->t, "");
			*p++ = ',';
			p = log_value(p, M_NETWORK, x->t, "");
			*p++ = ',';
			p = log_value(p, M_FORWARD, x->t, "");
			*p++ = ',';
			p = log_value(p, M_BACKWARD, x->t, "");
		} else {
			p = log_value(p, M_RESPONSE, x->t, "");
		}
		p = pmc_csv_row(p, x, status == ST_OK || status == ST_WARMUP);
		p = cls_log_cols(p, true, &x->seq);
		*p++ = '\n';
		return p;
	}
	for (i = 0; i < ncols; i++) {
		*p++ = ' ';
		p = fmt_stamp(p, x->t[cols[i]], '-');
	}
	*p++ = ' ';
	if (st_lost(status) || status == ST_LATE || status == ST_STEPPED) {
		p = fmt_str(p, status_name[status]);
	} else {
		p = log_value(p, run.side.primary, x->t, "-");
	}
	p = cls_log_cols(p, false, &x->seq);
	*p++ = '\n';
	return p;
}

/*
 * What buf holds, from buf to *p, written to fd and its rows (*pending)
 * counted as in the file; buf is then empty.  0 or -errno.
 */
static int log_flush(const char *what, int fd, char *buf, char **p, uint64_t *pending)
{
	int r = out_write(what, fd, buf, (size_t)(*p - buf));

	if (r < 0) {
		run.log_out.err = r;
		return r;
	}
	run.log_out.rows += *pending;
	*pending = 0;
	*p = buf;
	return 0;
}

/*
 * Write the ring to fd after the run: rows are formatted by hand into a
 * 1 MiB buffer and written in large chunks.  Returns 0 or -errno.
 */
static int log_write(int fd, enum log_format fmt)
{
	const size_t bufsz = sizeof(run.log_buf);
	bool csv = fmt == LOG_CSV;
	int cols[NSTAMP], ncols = log_columns(csv, cols), status, r;
	char *buf = run.log_buf, *p;
	struct txn x;
	uint64_t i;

	uint64_t pending = 0;
	char what[PATH_MAX + 16];

	snprintf(what, sizeof(what), "--log: writing %s", cfg->log ? cfg->log : "");
	memset(&run.log_out, 0, sizeof(run.log_out));
	run.log_out.done = true;
	p = log_header(buf, csv, cols, ncols);
	for (i = 0; i < sess.log.n; i++) {
		log_get(&sess.log, i, &x, &status);
		if (!csv && status == ST_WARMUP) {
			run.log_out.skipped++;
			continue;
		}
		p = log_row(p, csv, cols, ncols, &x, status);
		pending++;
		if ((size_t)(p - buf) > bufsz - 1024 &&
		    (r = log_flush(what, fd, buf, &p, &pending)) < 0) {
			return r;
		}
	}
	/* the facts last (log_csv_facts), with room: the command line may be long */
	if (csv && (size_t)(p - buf) > bufsz / 2 &&
	    (r = log_flush(what, fd, buf, &p, &pending)) < 0) {
		return r;
	}
	if (csv) {
		p = log_csv_facts(p);
	}
	return log_flush(what, fd, buf, &p, &pending);
}

/*
 * Open an output file at start, after every other check: never follow a
 * symbolic link (a root process writing where a link points is a classic
 * hole).  Nothing is truncated here: out_truncate() does that once every
 * output is open, so a failure on the second never costs the first.
 * *created says whether the file is new (to remove it if a later one fails).
 */
static int out_open(const char *opt, const char *path, bool *created)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	struct stat sb;

	*created = fd >= 0;
	if (fd < 0 && errno == EEXIST) {
		/* O_NONBLOCK: a FIFO swapped in after out_check must not block the open */
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0 && (fstat(fd, &sb) < 0 || !S_ISREG(sb.st_mode))) {
			warnx_("%s: '%s' is not a regular file; rant writes only regular files", opt, path);
			close(fd);
			return -1;
		}
		if (fd >= 0) {
			fcntl(fd, F_SETFL, 0);
		}
	}
	if (fd < 0) {
		if (errno == ELOOP) {
			warnx_("%s: '%s' is a symbolic link; refusing to follow it", opt, path);
		} else {
			warnx_("%s: cannot open '%s' for writing: %s", opt, path, strerror(errno));
		}
		return -1;
	}
	return fd;
}

static int out_truncate(const char *opt, const char *path, int fd)
{
	struct stat sb;

	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && ftruncate(fd, 0) < 0) {
		warnx_("%s: cannot truncate '%s': %s", opt, path, strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * --analyze's outputs are replaced whole or not at all: each is written to
 * a file of its own beside its target (".NAME.rant-PID") and renamed over
 * it once written (rename(2) replaces a file atomically).  A failed write,
 * an interrupted analysis or a second signal leaves the target as it was.
 */
struct out_swap {
	const char *opt, *path;
	char tmp[PATH_MAX];
	bool failed;
};
static struct out_swap out_swaps[4];
static volatile sig_atomic_t out_nswaps;

static int out_open_swap(const char *opt, const char *path)
{
	struct out_swap *w = &out_swaps[out_nswaps];
	const char *base = strrchr(path, '/');
	int fd, dl = base ? (int)(base - path) + 1 : 0;
	struct stat sb;

	base = base ? base + 1 : path;
	if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		warnx_("%s: '%s' is a symbolic link; refusing to follow it", opt, path);
		return -1;
	}
	if (snprintf(w->tmp, sizeof(w->tmp), "%.*s.%s.rant-%ld", dl, path, base, (long)getpid()) >=
	    (int)sizeof(w->tmp)) {
		warnx_("%s: '%s': path too long", opt, path);
		return -1;
	}
	fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		warnx_("%s: cannot create '%s' beside '%s': %s", opt, w->tmp, path, strerror(errno));
		return -1;
	}
	w->opt = opt;
	w->path = path;
	w->failed = false;
	out_nswaps++;
	return fd;
}

/* The output for path failed: its target is left as it was. */
static void out_swap_failed(const char *path)
{
	int i;

	for (i = 0; path && i < out_nswaps; i++) {
		out_swaps[i].failed |= out_swaps[i].path == path;
	}
}

/* Each output written whole replaces its target; the others are removed.  -1 if any failed. */
static int out_swap_commit(bool keep)
{
	int i, r = 0;

	for (i = 0; i < out_nswaps; i++) {
		struct out_swap *w = &out_swaps[i];

		if (keep && !w->failed && rename(w->tmp, w->path) == 0) {
			continue;
		}
		if (keep && !w->failed) {
			warnx_("%s: cannot replace '%s': %s", w->opt, w->path, strerror(errno));
		} else if (keep) {
			warnx_("%s: '%s' left as it was", w->opt, w->path);
		}
		unlink(w->tmp);
		r = -1;
	}
	out_nswaps = 0;
	return r;
}

/* From the signal handler: unlink is async-signal-safe. */
static void out_swap_drop(void)
{
	int i;

	for (i = 0; i < out_nswaps; i++) {
		unlink(out_swaps[i].tmp);
	}
}

/* What a non-regular file is, for the message that refuses it. */
static const char *out_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" :
	       S_ISSOCK(m) ? "a socket" : S_ISDIR(m) ? "a directory" : "not a regular file";
}

/* Can we create/write path?  Checked without creating or truncating it. */
static int out_check(const char *opt, const char *path)
{
	char dir[PATH_MAX];
	struct stat sb;
	char *slash;

	if (!*path) {
		warnx_("%s: empty file name", opt);
		return -1;
	}
	if (lstat(path, &sb) == 0) {
		if (S_ISLNK(sb.st_mode)) {
			warnx_("%s: '%s' is a symbolic link; refusing to follow it", opt, path);
			return -1;
		}
		if (S_ISDIR(sb.st_mode)) {
			warnx_("%s: '%s' is a directory", opt, path);
			return -1;
		}
		if (!S_ISREG(sb.st_mode)) {
			warnx_("%s: '%s' is %s, not a regular file; rant writes only regular files (a FIFO or device could block or swallow the output)",
			       opt, path, out_kind(sb.st_mode));
			return -1;
		}
		if (access(path, W_OK) < 0) {
			warnx_("%s: cannot write '%s': %s", opt, path, strerror(errno));
			return -1;
		}
		return 0;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == dir) {
		dir[1] = 0;
	} else if (slash) {
		*slash = 0;
	} else {
		snprintf(dir, sizeof(dir), ".");
	}
	if (access(dir, W_OK | X_OK) < 0) {
		warnx_("%s: cannot create '%s': %s", opt, path, strerror(errno));
		return -1;
	}
	return 0;
}

/* -------------------------------------------------------- transactions */

/* A transaction crossed -t: count, keep, mark the trace, maybe stop. */
static void breach(struct txn *x, int64_t v)
{
	sess.c.breaches++;
	cls_count(x->seq, CG_BREACH);
	x->st |= TF_BREACH;
	if (sess.nbreach_kept < BREACH_KEEP) {
		sess.breach[sess.nbreach_kept].x = *x;
		sess.breach[sess.nbreach_kept].value = v;
		sess.nbreach_kept++;
	}
	trace_breach(x, v);
	if (!cfg->cont) {
		sess.stop_reason = STOP_BREACH;
	}
}

/*
 * Add whatever this transaction's stamps now allow to the statistics.  Each
 * metric is added once, when the last stamp it needs arrives (the T1 wire
 * stamp comes from the error queue, the server's T3 in a later pong), so the
 * order in which stamps arrive does not matter.
 */
static void txn_account(struct txn *x)
{
	unsigned missing, todo = run.side.mset & ~x->counted;
	int64_t v;

	if ((x->st & (TF_RECEIVED | TF_WARMUP | TF_LATE)) != TF_RECEIVED) {
		return;
	}
	clk_check(x);
	/* the metrics not added yet whose stamps are all there (each side lists them in order) */
	missing = ~stamps_known(x->t) & run.side.uset;
	while (missing) {
		todo &= ~run.side.needed_by[__builtin_ctz(missing)];
		missing &= missing - 1;
	}
	while (todo && !(x->clk & CLK_STEPPED)) {
		int m = __builtin_ctz(todo);

		todo &= todo - 1;
		if (!metric_value(m, x->t, &v)) {
			continue;
		}
		if (v < 0 && metric_one_clock(m)) {
			clk_mark(x);	/* only a stepped clock goes backwards */
			break;
		}
		x->counted |= 1u << m;
		hist_add(&sess.h[m], v, x->seq);
		cls_on_row(x->seq, m, v);
		if (m == run.side.primary) {
			live_add(v);
			if (cfg->threshold_ns >= 0 && v > cfg->threshold_ns &&
			    sess.stop_reason != STOP_BREACH) {
				breach(x, v);
			}
		}
	}
}

/*
 * The clock fits of a measured transaction as it leaves the window: its
 * offset to the peer (lowest-RTT exchange, drift) and the app-to-wire
 * offsets.  Each fit takes the minimum of each FIT_WINDOW, so it depends on
 * the order of its points; the window's order (sequence order, the log's
 * rows, as --analyze reads them) makes it the same whenever the stamps
 * arrived.  Called once per transaction (txn_retire); a stepped one is left out.
 */
static void txn_fit(struct txn *x)
{
	int64_t v;

	if (x->clk & CLK_STEPPED) {
		return;
	}
	if (run.side.emit && clock_offset(x->t, &v)) {
		int64_t rtt = (int64_t)(x->t[T4W] - x->t[T1W]) - (int64_t)(x->t[T3W] - x->t[T2W]);

		fit_window(&sess.offset, x->t[T1W], v, rtt);
		if (sess.offset.seen == 1 || rtt < sess.best_rtt) {
			sess.best_rtt = rtt;
			sess.best_offset = v;
		}
	}
	{
		int a0 = run.side.emit ? T1SW : T2W, b0 = run.side.emit ? T1W : T2SW;
		int a1 = run.side.emit ? T4W : T3SW, b1 = run.side.emit ? T4SW : T3W;

		if (stamp_diff(x->t[b0], x->t[a0], &v)) {
			fit_window(&sess.app_wire[0], x->t[a0], v, v);
		}
		if (stamp_diff(x->t[b1], x->t[a1], &v)) {
			fit_window(&sess.app_wire[1], x->t[a1], v, v);
		}
	}
}

/* A send's awaited TX stamp came: store it in slot s, one fewer pending (the caller accounts). */
static void txn_tx_stamped(struct txn *x, uint64_t *pending, int s, uint64_t wire)
{
	x->st &= (uint16_t)~TF_TXPEND;
	(*pending)--;
	x->t[s] = wire;
}

/*
 * A transaction leaves the window: count the stamps that never came, log it,
 * and refresh the breach copy (its T3 wire stamp arrives after the breach).
 */
static void txn_retire(struct txn *x)
{
	uint64_t i;

	if (!(x->st & TF_USED)) {
		return;
	}
	if ((x->st & TF_SENT) && !(x->st & TF_SENDERR)) {
		if ((x->st & (TF_RECEIVED | TF_WARMUP | TF_LATE)) == TF_RECEIVED) {
			unsigned want = 1u << T1W | 1u << T2W | 1u << T3W | 1u << T4W, s;

			if (cfg->no_tx_ts && !run.side.emit) {
				want &= ~(1u << T3W);
			}
			if (cfg->sw_stamps) {
				want |= 1u << T1SW | 1u << T4SW;
			}
			if (run.side.emit ? (x->st & TF_SRV_SW) : cfg->sw_stamps) {
				want |= 1u << T2SW | 1u << T3SW;
			}
			if (run.side.emit) {
				want &= ~stamps_uncarried(x->seq);
			}
			for (want &= run.side.sset; want; want &= want - 1) {
				s = (unsigned)__builtin_ctz(want);
				sess.c.missing[s] += !x->t[s];
			}
			pmc_account(x);
			txn_fit(x);
		}
		if (sess.log.cap) {
			log_push(x);
		}
		if (x->st & TF_BREACH) {
			for (i = 0; i < sess.nbreach_kept; i++) {
				if (sess.breach[i].x.seq == x->seq) {
					sess.breach[i].x = *x;
				}
			}
		}
	}
	x->st = 0;
}

/* The kernel's TX stamp of a send the NIC stamps too: T1_K (emit), T3_K (reflect). */
static void tx_kernel_stamp(uint32_t key, uint64_t k)
{
	struct txn *x;

	if (run.side.emit) {
		uint64_t seq = emitter.keyseq[key & run.win.mask];

		if (seq == KEY_NONE) {
			return;
		}
		x = &run.win.slot[seq & run.win.mask];
		if (!(x->st & TF_USED) || x->seq != seq || x->txkey != key) {
			return;
		}
		x->t[T1K] = k;
	} else {
		x = &run.win.slot[key & run.win.mask];
		if (!(x->st & TF_USED) || x->txkey != key) {
			return;
		}
		x->t[T3K] = k;
	}
	txn_account(x);
}

/*
 * A NIC can claim hardware stamps (ETHTOOL_GET_TS_INFO, SIOCSHWTSTAMP
 * accepted) and deliver none: a driver fault, or QEMU's e1000e, whose
 * model never stamps a packet.  ptp4l then says "timed out while polling
 * for tx timestamp" and declares the port FAULTY.  Or it delivers them in
 * one direction only: a NIC whose RX filter stamps PTP event messages only
 * (the 82576 of igb, QEMU's igb model) stamps every send and no ping or
 * pong received; bnxt before BCM5760X stamps only PTP packets it sends.
 * Every sample needs both ends of a segment on one clock, so stamps in one
 * direction only give no sample at all.  rant judges each direction on its
 * first HWW_TXNS datagrams received and the sends of that time: fewer than
 * one in HWW_SHARE of the hardware stamps asked for in a direction is none.
 * With --timestamps hw the run then stops (exit 1); with auto the kernel's
 * stamps, asked for alongside (OPT_TX_SWHW, timestamping.rst 1.3.3), are
 * the wire stamps of the whole run (hw_fall_back).
 */
#define HWW_TXNS	64
#define HWW_SHARE	10
/*
 * TX stamps that come late get this long, or until HWW_TXNS more datagrams
 * came: the transactions judged are then all still in the window (256 at
 * least), where a fall-back can give them their kernel stamps.
 */
#define HWW_WAIT_NS	(50 * 1000000ULL)

enum hww_verdict { HWW_PENDING, HWW_DELIVERS, HWW_NONE };
enum { HWW_RX = 1, HWW_TX = 2 };
/* hw_watch.lacking as the word before "hardware stamps" */
static const char *const hww_dir[] = { "", "RX ", "TX ", "" };

/* Fewer than one in HWW_SHARE of the stamps asked for came (none asked: not short). */
static bool hww_short(uint64_t got, uint64_t asked)
{
	return asked && got * HWW_SHARE < asked;
}

/* What the NIC delivered, for the judging line: "no RX hardware stamps" and the counts. */
static void hww_say(char *s, size_t len, const struct hw_watch *w)
{
	static const char *const what[] = { "", "no RX hardware stamps", "no TX hardware stamps",
					     "no hardware stamps" };
	int n = snprintf(s, len, "%s delivered %s: RX %" PRIu64 " of %" PRIu64 ", TX %" PRIu64 " of %" PRIu64,
			 cfg->iface, what[w->lacking & 3], w->at[1], w->at[0], w->at[3], w->at[2]);

	if (n < 0 || (size_t)n >= len) {
		return;
	}
	if (w->lacking == HWW_RX && run.ts.rx_filter != HWTSTAMP_FILTER_ALL) {
		snprintf(s + n, len - (size_t)n, " (its rx filter %s stamps received PTP event messages only)",
			 ts_filter_name(run.ts.rx_filter));
	} else if (w->lacking == HWW_TX) {
		snprintf(s + n, len - (size_t)n, " (some NICs stamp only the PTP packets they send)");
	}
}

/*
 * True once: the NIC delivers (almost) no hardware stamp in a direction.
 * FINAL: the run or session ends.
 */
static bool hw_watch_none(bool final)
{
	struct hw_watch *w = &run.hww;
	char said[320];
	uint64_t now;
	int lacking;

	if (w->verdict || !run.ts.hw || !w->rx || (!final && w->rx < HWW_TXNS)) {
		return false;
	}
	lacking = hww_short(w->rx_hw, w->rx) ? HWW_RX : 0;
	lacking |= hww_short(w->tx_hw, w->tx) ? HWW_TX : 0;
	if (cfg->ts == TS_HW) {
		/*
		 * hw: the run stops only for a direction with not one stamp.
		 * A NIC that stamps one TX packet at a time skips most sends
		 * back-to-back (the model's one in flight: 15 of 183), yet
		 * each stamped one is a sample; the report counts the skips.
		 */
		lacking &= ~((w->rx_hw ? HWW_RX : 0) | (w->tx_hw ? HWW_TX : 0));
	}
	if (!lacking) {
		if (w->rx >= HWW_TXNS) {
			w->verdict = HWW_DELIVERS;
		}
		return false;
	}
	if (!final && w->rx < 3 * HWW_TXNS && (lacking & HWW_TX)) {
		now = mono_ns();
		if (!w->armed) {
			w->armed = now;
		}
		if (now - w->armed < HWW_WAIT_NS) {
			return false;	/* late TX stamps may still come */
		}
	}
	w->verdict = HWW_NONE;
	w->lacking = lacking;
	w->at[0] = w->rx;
	w->at[1] = w->rx_hw;
	w->at[2] = w->tx;
	w->at[3] = w->tx_hw;
	hww_say(said, sizeof(said), w);
	if (cfg->ts == TS_HW) {
		bool probe = !cfg->ptp_probe && (lacking == HWW_TX || (lacking == HWW_RX &&
						 ptp_probe_helps(run.ts.rx_filter) == 1));

		w->failed = true;
		warnx_("--timestamps hw: %s%s; no sample can be taken: stopping: %s", said,
		       lacking == (HWW_RX | HWW_TX) ? " (a port ptp4l declares FAULTY)" : "",
		       probe ? "run both ends with --ptp-probe (its pings and pongs are PTP event messages), or use --timestamps auto or sw" :
		       "see ethtool -T and the driver, or use --timestamps auto or sw");
	} else {
		warnx_("%s: kernel stamps for the whole run (--timestamps auto)", said);
	}
	return true;
}

/* The kernel's stamp of a packet becomes its wire stamp (the NIC's, if any, is dropped). */
static bool hw_txn_kernel(struct txn *x, int wire, int kern)
{
	x->t[wire] = x->t[kern];
	x->t[kern] = 0;
	return x->t[wire] != 0;
}

/*
 * --timestamps auto, no NIC stamps: software stamps from here on, on one
 * clock (no PHC offset to take out), the NIC's config put back now, and the
 * NIC/kernel split of this side's stacks dropped (it has no NIC part).  The
 * caller moves the kernel stamps of the transactions so far into place.
 */
static void hw_fall_back(void)
{
	static const int split[2][4] = {
		{ M_SRV_RX_NIC, M_SRV_RX_WAKE, M_SRV_TX_KERN, M_SRV_TX_NIC },
		{ M_CLI_TX_KERN, M_CLI_TX_NIC, M_CLI_RX_NIC, M_CLI_RX_WAKE },
	};
	int i;

	run.ts.hw = false;
	run.ts.wire_off = 0;
	run.hww.fell_back = true;
	ts_restore_say(run.sock_fd);
	snprintf(run.ts.note, sizeof(run.ts.note),
		 "software (kernel): %s delivered no %shardware stamps (--timestamps auto fell back)",
		 cfg->iface, hww_dir[run.hww.lacking & 3]);
	for (i = 0; i < 4; i++) {
		hist_reset(&sess.h[split[run.side.emit][i]]);
	}
}

/*
 * The NIC judged (hw_watch_none): with --timestamps hw the run stops; with
 * auto every transaction so far takes its kernel stamps as wire stamps
 * (RESTAMP, the side's own) and is accounted with them.
 */
static void hw_judge(bool final, void (*restamp)(struct txn *x))
{
	uint64_t i;

	if (!hw_watch_none(final)) {
		return;
	}
	if (cfg->ts == TS_HW) {
		sess.stop_reason = STOP_ERROR;
		return;
	}
	hw_fall_back();
	for (i = 0; i <= run.win.mask; i++) {
		if (run.win.slot[i].st & TF_USED) {
			restamp(&run.win.slot[i]);
			txn_account(&run.win.slot[i]);
		}
	}
}

/*
 * Datagrams answered past the warm-up and not one sample of the primary
 * metric (rtt, or the reflector's response): every one lacked a stamp it
 * needs.  Whatever the cause, such a run or session never ends with exit 0;
 * one line says so (the report's Missing stamps line says which).
 */
static bool no_sample_say(void)
{
	uint64_t n = sess.c.received > sess.c.warmup ? sess.c.received - sess.c.warmup : 0;

	if (!n || sess.h[run.side.primary].n) {
		return false;
	}
	warnx_("%" PRIu64 " %s%s received after the warm-up and not one %s sample: each lacked a stamp it needs (see Missing stamps in the report)",
	       n, run.side.emit ? "pong" : "ping", n == 1 ? "" : "s", metric_def[run.side.primary].key);
	return true;
}

/* --------------------------------------------------------------- memory */

static size_t align64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

/*
 * The histograms of this side's metrics and the kept breaches, from take:
 * the arena for a run, calloc for --analyze (its stores have room for every
 * row; calloc's pages are only paid for where a sample lands).
 */
static int stats_alloc(void *(*take)(size_t), uint64_t nbuckets, uint64_t out_cap)
{
	int k;

	for (k = 0; k < run.side.nmetrics; k++) {
		uint64_t nlh = hist_lh_room(out_cap, cfg->bound_ns);
		uint64_t *b = take(nbuckets * 8), *lh = nlh ? take(nlh * 8) : NULL;
		int64_t *o = take((out_cap ? out_cap : 1) * 8);

		if (!b || !o || (nlh && !lh)) {
			return -1;
		}
		hist_init(&sess.h[run.side.metrics[k]], cfg->bucket_ns, cfg->bound_ns, b, o,
			  out_cap, lh);
	}
	sess.breach = take(BREACH_KEEP * sizeof(struct breach));
	return sess.breach ? 0 : -1;
}

static void *arena_take(size_t n)
{
	void *p = run.arena.base + run.arena.used;

	run.arena.used += align64(n);
	return p;
}

static size_t hugepage_size(void)
{
	char line[128];
	size_t kb = 2048;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f) {
		return kb * 1024;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Hugepagesize: %zu kB", &kb) == 1) {
			break;
		}
	}
	fclose(f);
	return kb * 1024;
}

/* Sizes of what the run needs, computed from the configuration. */
struct layout {
	uint64_t win, out_cap, log_cap, nbuckets;
	size_t total;
};

static uint64_t expected_txns(void)
{
	if (cfg->count) {
		return (cfg->count + cfg->warmup) * cls_sizes();
	}
	if (cfg->duration_s > 0 && cfg->interval_ns) {
		return ((uint64_t)(cfg->duration_s * 1e9 / (double)cfg->interval_ns) + cfg->warmup +
			16) *
		       cls_sizes();
	}
	return 0;
}

/* The log ring's default when --log or --plot asks for one. */
#define LOG_RECORDS_DEFAULT	1000000
#define WIN_MAX			(1 << 20)

/*
 * Can -i's NIC stamp in hardware (ETHTOOL_GET_TS_INFO, as ts_setup asks)?
 * Asked before the memory is sized, so that a log record holds room for
 * kernel stamps only where they may come.  Unsure: room is kept.
 */
static void ts_probe_hw(void)
{
	struct ts_caps caps = { 0, -1, 0, 0 };
	int fd, r;

	run.ts_no_hw = false;
	if (!cfg->iface || cfg->ts == TS_SW) {
		return;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	}
	if (fd < 0) {
		return;
	}
	r = ts_get_caps(fd, cfg->iface, &caps);
	run.ts_no_hw = r == -EOPNOTSUPP || (r == 0 && !ts_caps_hw(&caps));
	close(fd);
}

static int layout_compute(struct layout *L, bool emit)
{
	uint64_t exp = expected_txns();
	int nm = emit ? emit_nmetrics() : side_nmetrics[1];

	memset(L, 0, sizeof(*L));
	if (emit && cfg->interval_ns) {
		uint64_t inflight = cfg->timeout_ns / cfg->interval_ns + 1;

		/* a --count run never has more in flight than it sends */
		if (cfg->count && exp && exp < inflight) {
			inflight = exp;
		}
		if (inflight > WIN_MAX / 2) {
			char all[64];

			cls_interval_all(all, sizeof(all));
			warnx_("--interval: %s us%s with --timeout %" PRIu64 " ms keeps up to %" PRIu64
			       " pings in flight; at most %d"
			       " (raise --interval, lower --timeout or give --count)",
			       cfg->interval_arg ? cfg->interval_arg : "?", all,
			       cfg->timeout_ns / 1000000, inflight, WIN_MAX / 2);
			return -1;
		}
		L->win = pow2_at_least(2 * inflight + 64);
	} else {
		L->win = emit ? 256 : 4096;
	}
	if (L->win < 256) {
		L->win = 256;
	}
	/* a run that cannot fill the store gets one for all it can give, and no log bins */
	L->out_cap = exp && exp < OUT_CAP ? exp : OUT_CAP;
	if (cfg->log || cfg->plot) {	/* the ring also feeds --plot's picture over time */
		L->log_cap = cfg->log_records ? cfg->log_records : exp ? exp : LOG_RECORDS_DEFAULT;
	}
	if (L->log_cap) {
		ts_probe_hw();
	}
	L->nbuckets = (cfg->bound_ns + cfg->bucket_ns - 1) / cfg->bucket_ns;
	L->total = align64(L->win * sizeof(struct txn)) + align64(L->win * sizeof(uint64_t)) +
		   (size_t)nm * (align64(L->nbuckets * 8) + align64(L->out_cap * 8) +
				 align64(hist_lh_room(L->out_cap, cfg->bound_ns) * 8)) +
		   align64(BREACH_KEEP * sizeof(struct breach)) +
		   align64(ECHO_CAP * sizeof(struct echo)) + 2 * align64(PROTO_MAX_SIZE + 64) +
		   align64(series_ring_len() * sizeof(struct series_ev)) +
		   align64(L->log_cap * log_rec_size(emit));
	return 0;
}

/*
 * Fault in every page of the arena before the first packet, a slice at a
 * time: a large log ring takes seconds, and a SIGINT meanwhile must end rant
 * at once (MAP_POPULATE would hold it until the whole mapping is in).
 * MADV_POPULATE_WRITE (Linux 5.14) faults a slice in one call; older
 * kernels get a write to each page.  -1 if a signal came.
 */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE	23
#endif
#define PREFAULT_SLICE		(32UL << 20)

static int arena_prefault(size_t page)
{
	size_t off, i;

	for (off = 0; off < run.arena.size; off += PREFAULT_SLICE) {
		size_t n = run.arena.size - off < PREFAULT_SLICE ? run.arena.size - off :
								   PREFAULT_SLICE;

		if (run.stop_signal) {
			return -1;
		}
		if (madvise(run.arena.base + off, n, MADV_POPULATE_WRITE) == 0) {
			continue;
		}
		for (i = 0; i < n; i += page) {
			((volatile uint8_t *)run.arena.base)[off + i] = 0;
		}
	}
	return run.stop_signal ? -1 : 0;
}

/* Locked memory above this is said at start: a long run's log ring is most of it. */
#define MEM_SAY_BYTES		(256ULL << 20)

/* /proc/meminfo's MemAvailable in bytes, 0 if it cannot be read. */
static uint64_t mem_available(void)
{
	char line[128];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/meminfo", "re");

	if (!f) {
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
			break;
		}
	}
	fclose(f);
	return (uint64_t)kb * 1024;
}

/* CAP_IPC_LOCK in the effective set (/proc/self/status CapEff): RLIMIT_MEMLOCK does not bind. */
static bool cap_ipc_lock(void)
{
	char line[128];
	unsigned long long eff = 0;
	bool got = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f) {
		return geteuid() == 0;
	}
	while (!got && fgets(line, sizeof(line), f)) {
		got = sscanf(line, "CapEff: %llx", &eff) == 1;
	}
	fclose(f);
	return got ? (eff >> 14 & 1) : geteuid() == 0;
}

/*
 * The memory rant locks is sized up front (the log ring for every record
 * the run may produce: -d 3600 --interval 100 -l is 36 M records, 3.3 GB),
 * so a run that cannot have it is refused before anything is sent, rather
 * than pushing the host into swap or the OOM killer, or running unlocked
 * past RLIMIT_MEMLOCK; a large one is said, since faulting it in takes
 * seconds.  Below MEM_SAY_BYTES an unprivileged run goes on unlocked with
 * mlockall's warning (memory_lock), as over loopback without root.
 */
static int arena_check(const struct layout *L, size_t size, bool emit)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
	double most = pages > 0 && psz > 0 ? 0.8 * (double)pages * (double)psz : 0;
	uint64_t avail = mem_available();
	struct rlimit rl;
	const char *what = NULL;
	double limit = 0;

	/* what is free now, and never more than 80 % of the RAM: the host has to go on */
	if (avail && (!most || (double)avail <= most)) {
		what = size > avail ? "MemAvailable (/proc/meminfo)" : NULL;
		limit = (double)avail;
	} else if (most) {
		what = (double)size > most ? "80 % of the host's RAM" : NULL;
		limit = most;
	}
	if (!what && size > MEM_SAY_BYTES && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
	    rl.rlim_cur != RLIM_INFINITY && size > rl.rlim_cur && !cap_ipc_lock()) {
		what = "RLIMIT_MEMLOCK (not root, no CAP_IPC_LOCK)";
		limit = (double)rl.rlim_cur;
	}
	if (what) {
		warnx_("--log-records: this run needs %.2f GiB of locked memory (%" PRIu64
		       " log records of %zu B); %s is %.2f GiB: lower --log-records, -d or --interval's rate",
		       (double)size / (1 << 30), L->log_cap, log_rec_size(emit), what,
		       limit / (1 << 30));
		return -1;
	}
	if (size > MEM_SAY_BYTES && !cfg->quiet) {
		fprintf(stderr, "rant: locking %.2f GiB of memory before the first packet (%" PRIu64
			" log records of %zu B; --log-records sets it)\n",
			(double)size / (1 << 30), L->log_cap, log_rec_size(emit));
	}
	return 0;
}

/* Map, populate and carve the arena; errors are configuration errors. */
static int arena_setup(const struct layout *L, bool emit)
{
	long psz = sysconf(_SC_PAGESIZE);
	size_t size = L->total, page = psz > 0 ? (size_t)psz : 4096;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;

	if (arena_check(L, size, emit) < 0) {
		return -1;
	}
	if (cfg->hugepages) {
		page = hugepage_size();
		size = (size + page - 1) / page * page;
		flags |= MAP_HUGETLB;
		run.arena.base = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
		if (run.arena.base == MAP_FAILED) {
			warnx_("-G: cannot map %zu hugepages of %zu kB (%s); reserve them first: echo %zu > /proc/sys/vm/nr_hugepages",
			       size / page, page / 1024, strerror(errno), size / page);
			return -1;
		}
	} else {
		run.arena.base = mmap(NULL, size, PROT_READ | PROT_WRITE, flags, -1, 0);
		if (run.arena.base == MAP_FAILED) {
			warnx_("cannot allocate %zu bytes: %s", size, strerror(errno));
			return -1;
		}
	}
	run.arena.size = size;
	run.arena.page = page;
	run.arena.used = 0;
	if (arena_prefault(page) < 0) {
		return -1;
	}
	run.win.slot = arena_take(L->win * sizeof(struct txn));
	run.win.mask = L->win - 1;
	stats_alloc(arena_take, L->nbuckets, L->out_cap);
	run.echo.q = arena_take(ECHO_CAP * sizeof(struct echo));
	emitter.tx = arena_take(PROTO_MAX_SIZE + 64);
	emitter.rx = refl.rx = arena_take(PROTO_MAX_SIZE + 64);
	emitter.keyseq = arena_take((run.win.mask + 1) * sizeof(uint64_t));
	if (series_ring_len()) {
		series.ring = arena_take(series_ring_len() * sizeof(struct series_ev));
		series.mask = series_ring_len() - 1;
	}
	/* the ring last: log_trim() gives back what its records turn out not to need */
	log_init(&sess.log, L->log_cap ? arena_take(L->log_cap * log_rec_size(emit)) : NULL,
		 L->log_cap);
	return 0;
}

/*
 * Once the socket knows its stamps (log_kernel_stamps), a ring that was
 * given room for kernel stamps that did not come returns the unused end of
 * the arena, so that the memory a record holds is what the log, -v and JSON
 * say (bytes_per_record).
 */
static void log_trim(void)
{
	const struct log_ring *l = &sess.log;
	size_t end, keep;

	if (!l->mem) {
		return;
	}
	end = (size_t)(l->mem - run.arena.base) + l->cap * l->rec_size;
	keep = (end + run.arena.page - 1) / run.arena.page * run.arena.page;
	if (keep < run.arena.size && munmap(run.arena.base + keep, run.arena.size - keep) == 0) {
		run.arena.size = keep;
	}
}

/*
 * --cpu-latency: hold the CPU latency limit while rant runs, as cyclictest
 * does by default.  An idle CPU then waits in an idle state it leaves at
 * once (with a limit of 0: polling) instead of one that takes microseconds
 * to tens of them to leave (a halt; in a VM, an exit to the host), and a
 * blocking run's wake-ups stop measuring the idle states.  The request
 * lasts while the file is open and goes however rant ends: "When the device
 * node is closed the request is removed" (Documentation/power/
 * pm_qos_interface.rst).  It is one limit for every CPU, not rant's alone,
 * so a reflector, which may wait for hours between clients, holds it from
 * its start and while sessions run, and lets it go after
 * CPU_LATENCY_GRACE_S without one (cpu_latency_idle): a client started
 * within that finds the reflector's CPU awake from its first ping on, and a
 * reflector left waiting does not keep every CPU of the host polling.
 * Not held, the run goes on with a line -- unless the user named a limit,
 * which then refuses the run (exit 2) before a packet is sent.
 */
static int cpu_latency_hold(void)
{
	struct cpu_latency *c = &run.cpulat;
	int32_t v = cfg->cpu_latency;
	int fd, e;

	if (v < 0) {
		snprintf(c->why, sizeof(c->why), "--cpu-latency off");
		return 0;
	}
	errno = 0;
	fd = open(cpu_latency_dev, O_WRONLY | O_CLOEXEC);
	if (fd >= 0 && write(fd, &v, sizeof(v)) != (ssize_t)sizeof(v)) {
		e = errno ? errno : EIO;
		close(fd);
		fd = -1;
		errno = e;
	}
	if (fd < 0) {
		snprintf(c->why, sizeof(c->why), "%s: %s", cpu_latency_dev, strerror(errno));
		if (cfg->cpu_latency_set) {
			warnx_("--cpu-latency: cannot hold %d us: %s (run as root, or leave --cpu-latency out)",
			       v, c->why);
			return -1;
		}
		warnx_("warning: CPU latency limit not held: %s; an idle CPU's wake-up may add to a blocking run's latency (run as root; --cpu-latency off: do not ask)",
		       c->why);
		return 0;
	}
	c->fd = fd;
	c->us = v;
	c->on = true;
	c->until = mono_ns() + CPU_LATENCY_GRACE_S * NSEC_PER_SEC;
	c->why[0] = 0;
	return 0;
}

/*
 * The reflector's request: the limit again when a session begins after the
 * grace ran out (after its first pong: outside the measured window, but the
 * session's first transactions then wait for a CPU that was idle), and no
 * limit once the reflector has had no session for CPU_LATENCY_GRACE_S
 * (from its wake-ups between datagrams).  A write that fails (the first one
 * succeeded) changes nothing measured: the request stays as it was.
 */
static void cpu_latency_write(bool on)
{
	int32_t v = on ? run.cpulat.us : CPU_LATENCY_NONE;

	run.cpulat.on = on;
	if (write(run.cpulat.fd, &v, sizeof(v)) < 0) {
		/* the request stays as it was; nothing to do */
	}
}

static void cpu_latency_session(void)
{
	if (run.cpulat.fd >= 0 && !run.cpulat.on) {
		cpu_latency_write(true);
	}
}

/* A session's report is out: the limit stays for the grace, in case the next client comes soon. */
static void cpu_latency_session_end(uint64_t now)
{
	run.cpulat.until = now + CPU_LATENCY_GRACE_S * NSEC_PER_SEC;
}

static void cpu_latency_idle(uint64_t now)
{
	if (run.cpulat.on && run.cpulat.fd >= 0 && !refl.active && now >= run.cpulat.until) {
		cpu_latency_write(false);
	}
}

/* Lock everything and fault in the stack before the first packet. */
static void memory_lock(void)
{
	volatile char stack[256 * 1024];

	memset((char *)stack, 0, sizeof(stack));
#if RANT_ASAN
	/* ASan reserves terabytes of shadow memory: locking it all would never end */
	return;
#endif
	if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0) {
		warnx_("warning: mlockall: %s; page faults may show up as latency (run as root or raise RLIMIT_MEMLOCK)",
		       strerror(errno));
		return;
	}
	run.memory_locked = true;
}

/*
 * The measured part is over (the client's run, a reflector's session): what
 * is locked stays locked, but what the report, JSON and plot allocate now
 * is not, so that a run within RLIMIT_MEMLOCK (8 MiB unprivileged) does not
 * lose an output to ENOMEM after measuring.  mlockall without MCL_FUTURE
 * clears the lock-on-fault default for new mappings (mlockall(2)).
 */
static void memory_lock_current(void)
{
	if (run.memory_locked) {
		(void)mlockall(MCL_CURRENT);
	}
}

/*
 * Zero what a session measured, keep the memory it owns: every histogram
 * and the window, most of a megabyte on the reflector.  The reflector does
 * it after each session's report, so that a session starts on memory that
 * is ready (session_begin) and its first pong waits for none of this.
 */
static void session_clear(void)
{
	int i;

	memset(&sess.c, 0, sizeof(sess.c));
	pmc_reset();
	for (i = 0; i < NMETRIC; i++) {
		if (sess.h[i].bucket) {
			hist_reset(&sess.h[i]);
		}
	}
	memset(&sess.offset, 0, sizeof(sess.offset));
	memset(sess.app_wire, 0, sizeof(sess.app_wire));
	sess.best_rtt = sess.best_offset = 0;
	sess.nbreach_kept = 0;
	sess.log.head = sess.log.n = sess.log.dropped = sess.log.filtered = 0;
	sess.srv_hw = sess.srv_hw_known = sess.srv_sw = sess.srv_kx = false;
	sess.end_mono = 0;
	memset(run.win.slot, 0, (run.win.mask + 1) * sizeof(struct txn));
	run.echo.head = run.echo.n = run.echo.nsent = 0;
	cls_session_reset();
}

/* A session starts on cleared memory: its id, its start, the status thread told. */
static void session_begin(uint32_t id)
{
	sess.id = id;
	sess.stop_reason = STOP_NONE;
	sess.start_mono = mono_ns();
	sess.first_real = real_ns();
	warn_start();
	memset(&run.live, 0, sizeof(run.live));
	__atomic_store_n(&run.live.running, 1, __ATOMIC_RELAXED);
}

/* Start a session: zero what it measured, keep the memory it owns. */
static void session_reset(uint32_t id)
{
	session_clear();
	session_begin(id);
}

/* -------------------------------------------------------------- sockets */

static int resolve(const char *host, unsigned port, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *res;
	char portstr[8];
	int r;

	snprintf(portstr, sizeof(portstr), "%u", port);
	r = getaddrinfo(host, portstr, &hints, &res);
	if (r) {
		warnx_("--address: cannot resolve '%s': %s", host, gai_strerror(r));
		return -1;
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/*
 * SO_BINDTODEVICE refused (EPERM: no CAP_NET_RAW).  Unbound, packets may come
 * and go through another device whose clock is not -i's PHC; with software
 * stamps that is harmless, with hardware stamps every T would be suspect, so
 * it is an error (and the device goes back as found).
 */
static int ts_bind_check(int fd, int err)
{
	if (run.ts.hw) {
		ts_restore_say(fd);
		warnx_("--interface: SO_BINDTODEVICE %s: %s: hardware stamps need the socket bound to the NIC whose PHC stamps them (needs CAP_NET_RAW; or use --timestamps sw)",
		       cfg->iface, strerror(err));
		return -1;
	}
	warnx_("warning: binding to %s needs CAP_NET_RAW (%s); continuing unbound", cfg->iface, strerror(err));
	return 0;
}

/* Hardware stamps granted: keep the kernel's too, if the log ring has room. */
static void log_kernel_stamps(void)
{
	side_kernel_stamps();
	if (sess.log.mem && log_rec_bytes(run.side.nstamps) <= log_rec_size(run.side.emit)) {
		sess.log.stamps = run.side.stamps;
		sess.log.nstamps = run.side.nstamps;
		if (tsn.on && run.side.emit) {
			sess.log.stamps = emit_stamps_k_lt;	/* --txtime: the launch time too */
			sess.log.nstamps = (int)ARRAY_SIZE(emit_stamps_k_lt);
		}
		sess.log.rec_size = log_rec_bytes(sess.log.nstamps);
	} else if (sess.log.mem) {
		side_set(run.side.emit);	/* no room: the log and counts stay as they were */
	}
}

static int setopt_int(int fd, int level, int name, int val)
{
	return setsockopt(fd, level, name, &val, sizeof(val)) < 0 ? -errno : 0;
}

/*
 * A socket's own options, the loop's: busy polling, priority, TOS and the
 * receive queue.  Each refused one the user asked for is one line (say) and
 * -1; the reflector's session sockets (reflect_ss_prepare) get them again,
 * quietly: what the run's first socket was given, they are given too.
 */
#define SAY(...)	do { if (say) { warnx_(__VA_ARGS__); } } while (0)

static int sock_opts(int fd, int family, int prio, int tos, bool say)
{
	int r;

	if (cfg->busy_poll_set &&
	    (r = setopt_int(fd, SOL_SOCKET, SO_BUSY_POLL, (int)cfg->busy_poll_us)) < 0) {
		SAY("--busy-poll-us: SO_BUSY_POLL %u refused: %s%s", cfg->busy_poll_us, strerror(-r),
		    r == -EPERM ? " (above net.core.busy_read needs CAP_NET_ADMIN)" : "");
		return -1;
	}
	if (cfg->prefer_busypoll && (r = setopt_int(fd, SOL_SOCKET, SO_PREFER_BUSY_POLL, 1)) < 0) {
		SAY("--prefer-busypoll: SO_PREFER_BUSY_POLL refused: %s%s", strerror(-r),
		    r == -ENOPROTOOPT ? " (kernel older than 5.11)" : "");
		return -1;
	}
	if (cfg->budget_set &&
	    (r = setopt_int(fd, SOL_SOCKET, SO_BUSY_POLL_BUDGET, (int)cfg->budget)) < 0) {
		SAY("--budget: SO_BUSY_POLL_BUDGET %u refused: %s%s", cfg->budget, strerror(-r),
		    r == -EPERM ? " (needs CAP_NET_ADMIN)" : "");
		return -1;
	}
	if (prio >= 0 && (r = setopt_int(fd, SOL_SOCKET, SO_PRIORITY, prio)) < 0) {
		SAY("--priority: SO_PRIORITY %d refused: %s%s", prio, strerror(-r),
		    r == -EPERM ? " (above 6 needs CAP_NET_ADMIN)" : "");
		return -1;
	}
	if (tos >= 0) {
		r = family == AF_INET6 ? setopt_int(fd, IPPROTO_IPV6, IPV6_TCLASS, tos) : 0;
		if (r == 0) {
			r = setopt_int(fd, IPPROTO_IP, IP_TOS, tos);
			if (family == AF_INET6 && r < 0) {
				r = 0;	/* v6-only socket: IPV6_TCLASS is the one */
			}
		}
		if (r < 0) {
			SAY("--tos: %d refused: %s", tos, strerror(-r));
			return -1;
		}
		/*
		 * a new IP_TOS resets sk_priority to rt_tos2priority() (net/ipv4/ip_sockglue.c):
		 * --priority again
		 */
		if (prio >= 0) {
			setopt_int(fd, SOL_SOCKET, SO_PRIORITY, prio);
		}
	}
	/* A deeper receive queue rides out bursts of junk; best effort. */
	setopt_int(fd, SOL_SOCKET, SO_RCVBUF, 4 << 20);
	return 0;
}

/*
 * Everything a socket needs before the first packet.  A refused option the
 * user asked for is a configuration error (exit 2); what only needs privileges
 * the tool can live without is a warning.
 */
static int sock_setup(int fd, int family)
{
	/* the run's own socket has -p/--tos; a class socket (cls_open) its class's */
	int prio = classes.opening ? classes.prio[classes.opening] : cfg->priority;
	int tos = classes.opening ? classes.tos[classes.opening] : cfg->tos;
	int r;

	int bind_err = 0;

	if (cfg->iface && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, cfg->iface,
				    (socklen_t)strlen(cfg->iface)) < 0) {
		bind_err = errno;
		if (errno != EPERM) {
			warnx_("--interface: SO_BINDTODEVICE %s: %s", cfg->iface, strerror(errno));
			return -1;
		}
	}
	if (ts_setup(fd, cfg->iface, cfg->ts) < 0) {
		return -1;
	}
	if (bind_err && ts_bind_check(fd, bind_err) < 0) {
		return -1;
	}
	run.ts.ifindex = cfg->iface ? ts_real_nic(cfg->iface, run.ts.nic, sizeof(run.ts.nic)) : 0;
	if (run.ts.hw && !classes.opening) {
		run.ts.ptp4l_pid = ptp4l_find(cfg->iface);
		if (!run.ts.ptp4l_pid && *run.ts.nic && strcmp(run.ts.nic, cfg->iface)) {
			run.ts.ptp4l_pid = ptp4l_find(run.ts.nic);
		}
		if (run.ts.ptp4l_pid) {
			warnx_("warning: ptp4l (pid %d) runs on %s: a NIC that stamps one TX packet at a time (igb, ixgbe, i40e) gives that stamp to whichever send asks first, so rant's T1/T3 and ptp4l's TX stamps will go missing at times",
			       run.ts.ptp4l_pid, cfg->iface);
		}
	}
	if (run.ts.hw && run.ts.ifindex && strcmp(run.ts.nic, cfg->iface)) {
		size_t n = strlen(run.ts.note);

		snprintf(run.ts.note + n, sizeof(run.ts.note) - n, "%s%s", run.ts.bonded ?
			 ", the bond's active slave " : ", the NIC under it ", run.ts.nic);
	}
	if (run.ts.hw && run.ts.phc_index >= 0 && (r = phc_start(run.ts.phc_index)) < 0) {
		warnx_("warning: cannot read the offset of PHC /dev/ptp%d to CLOCK_REALTIME (%s): app-vs-wire segments carry an unmeasured offset",
		       run.ts.phc_index, strerror(-r));
	}
	if (run.phc.n) {
		phc_publish();	/* what the reflector's FIN_ACKs tell the client */
	}
	ts_keys_setup();
	if (run.ts.hw) {
		log_kernel_stamps();
	}
	r = ts_enable_socket(fd);
	if (r < 0) {
		warnx_("--timestamps: SO_TIMESTAMPING refused: %s", strerror(-r));
		return -1;
	}
	if (tsn_socket(fd) < 0) {
		return -1;
	}
	return sock_opts(fd, family, prio, tos, true);
}

/* Port 319 taken: most likely by a PTP daemon, which owns the event port. */
static void ptp_port_busy(void)
{
	warnx_("--ptp-probe: UDP port %d (PTP event messages) is in use on this host: a ptp4l or other PTP daemon? It owns the port; stop it for this test, or run without --ptp-probe",
	       PTP_EVENT_PORT);
}

/*
 * PTP-only NICs match event messages by their destination port, so the
 * client's pongs must come to port 319 too: its socket takes that port.
 */
static int ptp_bind_client(int fd, int family)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(PTP_EVENT_PORT) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(PTP_EVENT_PORT) };
	int r = family == AF_INET6 ? bind(fd, (struct sockaddr *)&a6, sizeof(a6))
				   : bind(fd, (struct sockaddr *)&a4, sizeof(a4));

	if (r < 0 && errno == EADDRINUSE) {
		ptp_port_busy();
		return -1;
	}
	if (r < 0) {
		warnx_("--ptp-probe: cannot bind UDP port %d: %s", PTP_EVENT_PORT, strerror(errno));
		return -1;
	}
	return 0;
}

static void mtu_probe(int fd, int family)
{
	socklen_t l;
	int mtu = 0, r;

	l = sizeof(mtu);
	r = family == AF_INET6 ? getsockopt(fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &l)
			       : getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &l);
	if (r < 0 || mtu <= 0) {
		run.path.mtu = 0;
		return;
	}
	run.path.mtu = (unsigned)mtu;
	run.path.payload = run.path.mtu > 48u ? run.path.mtu - (family == AF_INET6 ? 48u : 28u) : 0;
}

/*
 * May one datagram of SIZE bytes go on this path?  One size at a time, so
 * that every size of a run is checked the same way.  0, or -1 after one line.
 */
static int mtu_check(unsigned size)
{
	unsigned most, least;
	char fix[100];

	size += run.proto_pre;	/* the PTP header rides in the same datagram */
	if (!run.path.mtu || size <= run.path.payload) {
		return 0;
	}
	if (cfg->allow_fragments) {
		run.path.fragmented = true;
		return 0;
	}
	/* the advice names a size rant takes: what is left after the PTP header */
	most = run.path.payload > run.proto_pre ? run.path.payload - run.proto_pre : 0;
	least = PROTO_HDR_LEN + (run.key.on ? TAG_LEN : 0);
	if (most >= least) {
		snprintf(fix, sizeof(fix), "use --size %u or less, or --allow-fragments", most);
	} else {
		snprintf(fix, sizeof(fix), "no --size fits in one packet (%u is the least), use --allow-fragments",
			 least);
	}
	warnx_("--size: %u bytes%s exceed the path MTU %u to %s (at most %u bytes of UDP payload in one packet); only the first fragment of a datagram is timestamped: %s",
	       size - run.proto_pre, run.proto_pre ? " and the PTP header of --ptp-probe" : "",
	       run.path.mtu, cfg->address ? cfg->address : "the peer", run.path.payload, fix);
	return -1;
}

/*
 * One-way delays subtract stamps of two clocks; they mean something only
 * when the clocks are known to agree.  What rant can know from here: the
 * peer is on this host (loopback), or -i is one end of a veth pair (both
 * ends always live in one kernel, stamped by one CLOCK_REALTIME), with
 * kernel stamps on both sides.  Anything else is "none".
 */
static const char *const ow_name[] = { "none", "loopback", "veth", "phc" };

/* The driver behind IFACE (ETHTOOL_GDRVINFO); 0 or -errno. */
static int iface_driver(int fd, const char *ifname, char *out, size_t len)
{
	struct ethtool_drvinfo di = { .cmd = ETHTOOL_GDRVINFO };
	int r = if_ioctl(fd, ifname, SIOCETHTOOL, &di);

	if (r < 0) {
		return r;
	}
	snprintf(out, len, "%.*s", (int)sizeof(di.driver), di.driver);
	return 0;
}

static void ow_probe(int fd, const struct sockaddr_storage *peer)
{
	const struct sockaddr_in *a4 = (const void *)peer;
	const struct sockaddr_in6 *a6 = (const void *)peer;
	char drv[40];

	run.ow_evidence = OW_NONE;
	if ((peer->ss_family == AF_INET && (ntohl(a4->sin_addr.s_addr) >> 24) == 127) ||
	    (peer->ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr)) ||
	    (cfg->iface && !strcmp(cfg->iface, "lo"))) {
		run.ow_evidence = OW_LOOPBACK;
	} else if (cfg->iface && !run.ts.hw &&
		   iface_driver(fd, cfg->iface, drv, sizeof(drv)) == 0 && !strcmp(drv, "veth")) {
		run.ow_evidence = OW_VETH;
	}
}

/*
 * Classes: every class's socket has the port of the first (SO_REUSEPORT,
 * socket(7); one user's sockets only), so that the reflector sees one peer,
 * address and port, whatever class a ping is in (README, Rules).  The
 * pongs of all classes then come to one of them: the loop waits on all.
 */
static int cls_share_port(int fd)
{
	struct sockaddr_storage me;
	socklen_t len = sizeof(me);

	if (setopt_int(fd, SOL_SOCKET, SO_REUSEPORT, 1) < 0) {
		warnx_("--priority/--tos list: SO_REUSEPORT refused: %s", strerror(errno));
		return -1;
	}
	if (!classes.opening || cfg->ptp_probe) {
		return 0;	/* the first class's port (or PTP's 319) is the one */
	}
	if (getsockname(classes.fd[0], (struct sockaddr *)&me, &len) < 0 ||
	    bind(fd, (struct sockaddr *)&me, len) < 0) {
		warnx_("--priority/--tos list: cannot give class %d the port of class 0: %s",
		       classes.opening, strerror(errno));
		return -1;
	}
	return 0;
}

static int sock_open_emit(void)
{
	struct sockaddr_storage peer;
	socklen_t len;
	int fd;

	if (resolve(cfg->address, cfg->port, &peer, &len) < 0) {
		return -1;
	}
	fd = socket(peer.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		warnx_("socket: %s", strerror(errno));
		return -1;
	}
	run.sock_fd = fd;
	if (sock_setup(fd, peer.ss_family) < 0) {
		return -1;
	}
	/* local receive-buffer drops, reported apart from network loss; best effort */
	if (!emitter.rx_ioctl) {
		setopt_int(fd, SOL_SOCKET, SO_RXQ_OVFL, 1);
	}
	if (classes.ncls > 1 && cls_share_port(fd) < 0) {
		return -1;
	}
	if (cfg->ptp_probe && ptp_bind_client(fd, peer.ss_family) < 0) {
		return -1;
	}
	/* connect(): the kernel then drops datagrams from anyone but the peer */
	if (connect(fd, (struct sockaddr *)&peer, len) < 0) {
		warnx_("--address: cannot reach %s port %u: %s", cfg->address, cfg->port, strerror(errno));
		return -1;
	}
	mtu_probe(fd, peer.ss_family);
	ow_probe(fd, &peer);
	if (mtu_check(cfg->size) < 0) {
		return -1;
	}
	return fd;
}

static int sock_open_reflect(void)
{
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons((uint16_t)cfg->port) };
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t)cfg->port) };
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0), family = AF_INET6;
	int r;

	/* One dual-stack socket serves IPv4 and IPv6 clients; IPv4 alone if v6 is off. */
	if (fd >= 0 && setopt_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 0) < 0) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		family = AF_INET;
	}
	if (fd < 0) {
		warnx_("socket: %s", strerror(errno));
		return -1;
	}
	run.sock_fd = fd;
	if (sock_setup(fd, family) < 0) {
		return -1;
	}
	/* the destination of each ping, to answer from it (reflect_send) */
	r = family == AF_INET6 ? setopt_int(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, 1)
			       : setopt_int(fd, IPPROTO_IP, IP_PKTINFO, 1);
	if (r < 0) {
		warnx_("socket: %s refused: %s", family == AF_INET6 ? "IPV6_RECVPKTINFO" : "IP_PKTINFO", strerror(-r));
		return -1;
	}
	r = family == AF_INET6 ? bind(fd, (struct sockaddr *)&a6, sizeof(a6))
			       : bind(fd, (struct sockaddr *)&a4, sizeof(a4));
	if (r < 0) {
		if (cfg->ptp_probe && errno == EADDRINUSE) {
			ptp_port_busy();
			return -1;
		}
		warnx_("--port: cannot listen on UDP port %u: %s%s", cfg->port, strerror(errno),
		       errno == EADDRINUSE ? " (another reflector running?)" : "");
		return -1;
	}
	/*
	 * Bound alone (a second reflector on the port is still refused above),
	 * then shared with this user's sockets: each session's own socket
	 * (reflect_ss_open) binds the same port at the address pinged.
	 */
	setopt_int(fd, SOL_SOCKET, SO_REUSEPORT, 1);
	return fd;
}

/* SO_RCVTIMEO's value for ns */
static struct timeval rcvtimeo_tv(uint64_t ns)
{
	struct timeval tv = { (time_t)(ns / NSEC_PER_SEC),
			      (suseconds_t)(ns % NSEC_PER_SEC / 1000) };

	if (!tv.tv_sec && !tv.tv_usec) {
		tv.tv_usec = 1;	/* zero would mean "block forever" */
	}
	return tv;
}

static void set_rcvtimeo(uint64_t ns)
{
	struct timeval tv = rcvtimeo_tv(ns);

	setsockopt(run.sock_fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	cls_set_rcvtimeo(&tv);
}

/* ns (a duration, or a CLOCK_MONOTONIC time) as a struct timespec */
static struct timespec ns_timespec(uint64_t ns)
{
	return (struct timespec){ (time_t)(ns / NSEC_PER_SEC), (long)(ns % NSEC_PER_SEC) };
}

/* Wait until the socket is readable/errored, t passes, or (t NULL) the timer tfd fires. */
static int wait_fd_on(const struct timespec *t, short events, int tfd)
{
	struct pollfd p[2] = { { run.sock_fd, events, 0 }, { tfd, POLLIN, 0 } };

	if (cls_multi_sock()) {
		return cls_wait_on(t, events, tfd);
	}
	if (ppoll(p, tfd >= 0 ? 2 : 1, t, NULL) <= 0) {
		return 0;
	}
	return p[0].revents;
}

/* Wait until fd is readable/errored or the relative timeout passes. */
static int wait_fd(uint64_t ns, short events)
{
	struct timespec t = ns_timespec(ns);

	return wait_fd_on(&t, events, -1);
}

/*
 * --interval: the loop's wake-up for the next send (or a pong's deadline,
 * or -d's end) is a timerfd armed at that CLOCK_MONOTONIC time and waited
 * on beside the sockets, with no ppoll timeout.  A ppoll timeout is a timer
 * started at each wait and cancelled when the pong wakes it, and when it
 * is the CPU's nearest timer -- the next send is -- the cancel reprograms
 * the CPU's timer device inside the pong's receive (hrtimer_cancel, then
 * the clock event device; in a VM an exit to the host).  Measured here on
 * a paced client (1 ms, veth): the pong's T4_SW-T4 p50 11-14 us with the
 * ppoll timeout, against 6-8 us for a bare client with this wait.  The
 * timerfd's timer is armed after the send (re-arming resets a fired one,
 * timerfd_settime(2)) and left to fire at the send time, when the loop
 * wakes anyway.  Without a timerfd: the ppoll timeout, as before.
 */
static void emit_wake_open(void)
{
	emitter.tfd = -1;
	emitter.tfd_at = 0;
	if (!cfg->spin && (cfg->interval_ns || cls_paced())) {
		emitter.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	}
	emitter.timer = emitter.tfd >= 0;
}

static int emit_wake_wait(uint64_t limit, uint64_t ns, short events)
{
	if (emitter.timer && emitter.tfd_at != limit) {
		struct itimerspec it = { .it_value = ns_timespec(limit) };

		if (timerfd_settime(emitter.tfd, TFD_TIMER_ABSTIME, &it, NULL) < 0) {
			close(emitter.tfd);	/* the ppoll timeout from now on */
			emitter.tfd = -1;
			emitter.timer = false;
		}
		emitter.tfd_at = limit;
	}
	return emitter.timer ? wait_fd_on(NULL, events, emitter.tfd) : wait_fd(ns, events);
}

/* One datagram as sock_recv() received it. */
struct rx {
	struct sockaddr_storage from;
	socklen_t fromlen;
	struct ts_cmsg c;
	uint64_t app;		/* CLOCK_REALTIME as recvmsg returned (-s), else 0 */
	size_t len;		/* rant's part, after the PTP header with --ptp-probe */
	bool trunc;		/* longer than the buffer: too long for rant */
	bool ours;		/* false: a PTP packet that is not rant's (counted) */
};

/*
 * The receive of both sides: one recvmsg into buf, the app stamp and the -M
 * counts as it returns, then the control messages in one walk (the stamps;
 * ctl reads each of the side's own).  1: a datagram, 0: nothing now, -errno.
 * The sender's address only where the socket is not connected (name): the
 * client's and a reflector session's are, and filling it in costs the
 * kernel ~0.1 us of the round trip.
 */
static int sock_recv(uint8_t *buf, size_t cap, int flags, struct rx *rx,
		     void (*ctl)(const struct cmsghdr *), bool name)
{
	char ctrl[512] __attribute__((aligned(8)));
	struct iovec iov = { buf, cap };
	struct msghdr msg = {
		.msg_name = name ? &rx->from : NULL,
		.msg_namelen = name ? sizeof(rx->from) : 0,
		.msg_iov = &iov, .msg_iovlen = 1,
		/* none with the stamp read apart (ts_rx_ioctl): a recvfrom then */
		.msg_control = emitter.rx_ioctl ? NULL : ctrl,
		.msg_controllen = emitter.rx_ioctl ? 0 : sizeof(ctrl),
	};
	ssize_t n = sys_recvmsg(run.sock_fd, &msg, flags);

	if (n < 0) {
		return nothing_now(errno) ? 0 : -errno;
	}
	rx->app = cfg->sw_stamps ? real_ns() : 0;
	pmc_read(run.pmc_rx);
	ts_parse_cb(&msg, &rx->c, ctl);
	run.ts_rx_kernel = run.ts.hw ? rx->c.sw : 0;
	rx->fromlen = msg.msg_namelen;
	rx->trunc = msg.msg_flags & MSG_TRUNC;
	rx->ours = !run.proto_pre || (n = ptp_strip(buf, n)) >= 0;
	rx->len = rx->ours ? (size_t)n : 0;
	if (run.ts.hw && rx->ours) {
		run.hww.rx++;
		run.hww.rx_hw += rx->c.hw != 0;
	}
	return 1;
}

/*
 * The pong's T4 by SIOCGSTAMPNS (ts_rx_ioctl_on), read after the pong and
 * so after rx->app.  Where the datagram came unstamped the kernel answers
 * with the time of the ioctl itself (sock_gettstamp(): a stamp of 0 is
 * replaced by ktime_get_real()): a stamp not before rx->app is that one,
 * and the pong has no T4.
 */
static void ts_rx_ioctl(struct rx *rx)
{
	struct timespec ts;
	uint64_t ns;

	if (kops.ioctl(run.sock_fd, SIOCGSTAMPNS, &ts) < 0) {
		return;
	}
	ns = ts_to_ns(&ts);
	if (ns && ns < rx->app) {
		rx->c.sw = ns;
		rx->c.have_ts = true;
	}
}

#define ANSWERED_BITS	(1024 * 64)

static void answered_set(uint64_t seq, bool on)
{
	uint64_t b = 1ULL << (seq % 64), *w = &emitter.answered[(seq % ANSWERED_BITS) / 64];

	*w = on ? *w | b : *w & ~b;
}

static bool answered_get(uint64_t seq)
{
	return emitter.answered[(seq % ANSWERED_BITS) / 64] & (1ULL << (seq % 64));
}

/* After -d: what the end of the run may take before the report (README: 200 ms). */
#define FINISH_NS	(170 * 1000000ULL)

/* Every class after the first gets its own socket, set up like the first. */
static int cls_open(void)
{
	int k, first = run.sock_fd;
	struct ts_state keep = run.ts;	/* a second ts_setup() must not overwrite what to restore */

	classes.fd[0] = run.sock_fd;
	/* every size of the list against the path MTU, as the one --size is */
	for (k = 0; run.side.emit && classes.nsz > 1 && k < classes.nsz; k++) {
		if (mtu_check(classes.size[k]) < 0) {
			return -1;
		}
	}
	if (!run.side.emit) {
		/* the reflector learns each ping's TOS to answer in it */
		setopt_int(run.sock_fd, IPPROTO_IP, IP_RECVTOS, 1);
		setopt_int(run.sock_fd, IPPROTO_IPV6, IPV6_RECVTCLASS, 1);
		classes.r_prio = cfg->priority;
		classes.r_tos = cfg->tos;
		return 0;
	}
	for (k = 1; k < classes.ncls; k++) {
		classes.opening = k;
		/*
		 * sock_open_emit() sets sock_fd; ts_setup() on the same device is a no-op the
		 * second time
		 */
		if (sock_open_emit() < 0) {
			classes.opening = 0;
			run.sock_fd = first;
			return -1;
		}
		run.ts = keep;
		classes.fd[k] = run.sock_fd;
		classes.next_key[k] = 0;
		classes.keyseq[k] = calloc(run.win.mask + 1, sizeof(uint64_t));
		if (!classes.keyseq[k]) {
			warnx_("cannot allocate: %s", strerror(errno));
			return -1;
		}
	}
	classes.opening = 0;
	run.sock_fd = first;
	run.ts = keep;
	if (cls_paced()) {
		/*
		 * every seq still in the window or in the log ring keeps its class, and
		 * every seq whose late pong may still be counted (emit_stale)
		 */
		uint64_t n = pow2_at_least(run.win.mask + 1 + sess.log.cap);

		if (n < ANSWERED_BITS) {
			n = ANSWERED_BITS;
		}

		classes.cmap = calloc(n, 1);
		classes.cmap_mask = n - 1;
		if (!classes.cmap) {
			warnx_("cannot allocate: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void cls_set_tos(int tos)
{
	int v = tos < 0 ? 0 : tos;

	setopt_int(run.sock_fd, IPPROTO_IPV6, IPV6_TCLASS, v);
	setopt_int(run.sock_fd, IPPROTO_IP, IP_TOS, v);
	classes.r_tos = tos;
}

/* The priority and TOS a ping is answered with: its class's, or the reflector's own. */
static void cls_answer(uint16_t flags, int *prio, int *tos)
{
	*prio = cfg->priority;
	*tos = cfg->tos;
	if (flags & PF_CLASS) {
		unsigned p = (flags >> PF_PRIO_SHIFT) & 0xf;

		*prio = p ? (int)p - 1 : cfg->priority;
		*tos = classes.rx_tos >= 0 ? classes.rx_tos : cfg->tos;
	}
}

/*
 * Reflect: answer a class ping in its class.  The socket's options change
 * only when the class does (two system calls then), and go back to the
 * reflector's own for pings without a class (and for FIN_ACKs: flags 0).
 */
static void cls_reflect(uint16_t flags)
{
	int prio, tos;

	cls_answer(flags, &prio, &tos);
	/* TOS first: a new IP_TOS resets sk_priority (net/ipv4/ip_sockglue.c) */
	if (tos != classes.r_tos) {
		cls_set_tos(tos);
		classes.r_prio = -2;
	}
	if (prio != classes.r_prio) {
		setopt_int(run.sock_fd, SOL_SOCKET, SO_PRIORITY, prio < 0 ? 0 : prio);
		classes.r_prio = prio;
	}
}

/*
 * The reflector's row of a ping's class, by the priority and TOS it is
 * answered with (made at its first ping); CLS_RROWS: no class, or more
 * classes than rows.  Each admitted ping is booked in it (received,
 * warm-up by either side's -w) and each pong sent (answered), so that the
 * rows add up to the session's received, sent and warm-up.
 */
static int cls_rrow(uint16_t flags)
{
	int prio, tos, i;

	if (!(flags & PF_CLASS)) {
		return CLS_RROWS;
	}
	cls_answer(flags, &prio, &tos);
	for (i = 0; i < classes.rn; i++) {
		if (classes.r[i].prio == prio && classes.r[i].tos == tos) {
			return i;
		}
	}
	if (classes.rn == CLS_RROWS) {
		return CLS_RROWS;
	}
	classes.r[classes.rn].prio = prio;
	classes.r[classes.rn].tos = tos;
	return classes.rn++;
}

/* Reflect: the hook on a ping admitted (warm: warm-up by either side's -w), any class or none. */
static void cls_on_ping(uint16_t flags, bool warm)
{
	int row = cls_rrow(flags);

	classes.r[row].received++;
	classes.r[row].warmup += warm;
}

/* Reflect: the hook on a pong sent, in the row of its ping. */
static void cls_on_pong(uint16_t flags)
{
	classes.r[cls_rrow(flags)].answered++;
}

/* ----------------------------------------------------------------- emit */

/*
 * How long a client goes on without an answer: 5 s, or three --timeout if
 * longer.  A reflector started (or restarted) a moment after its client is
 * in time, also on a loaded host, and one that stalls for less than its own
 * idle timeout (3 s at least) keeps its client.
 */
#define EMIT_SILENCE_MIN	(5 * NSEC_PER_SEC)

static uint64_t emit_silence_ns(void)
{
	return 3 * cfg->timeout_ns > EMIT_SILENCE_MIN ? 3 * cfg->timeout_ns : EMIT_SILENCE_MIN;
}

/*
 * Every datagram that reached the client's (connected) socket: pongs in time
 * or late, and those it refused.  The kernel's port-unreachable is no answer.
 */
static uint64_t emit_heard(void)
{
	uint64_t n = sess.c.received + sess.c.late + sess.c.duplicate + sess.c.invalid;
	int i;

	for (i = 0; i < GR_N; i++) {
		n += sess.c.rejected[i];
	}
	return n;
}

/*
 * A client nobody answers stops (STOP_NO_ANSWER) instead of pinging forever
 * towards --count: once nothing was heard for emit_silence_ns() and at least
 * 3 pings in a row were lost.  Looked at when a ping is lost, so the answered
 * path pays nothing; the silence began when the first of them was sent.  A
 * peer that sends anything, even what is refused, is there: the report
 * says what it sent.
 */
static void emit_silence(void)
{
	uint64_t now = mono_ns(), heard = emit_heard();

	if (heard != emitter.heard || !emitter.silent_lost) {
		emitter.heard = heard;
		emitter.silent_since = now - cfg->timeout_ns;
		emitter.silent_lost = 1;
		return;
	}
	emitter.silent_lost++;
	if (emitter.silent_lost >= 3 && now - emitter.silent_since >= emit_silence_ns() &&
	    !sess.stop_reason) {
		sess.stop_reason = STOP_NO_ANSWER;
	}
}

static void emit_lost(struct txn *x)
{
	x->st |= TF_LOST;
	sess.c.lost++;
	cls_count(x->seq, CG_LOST);
	emitter.outstanding--;
	__atomic_store_n(&run.live.lost, sess.c.lost, __ATOMIC_RELAXED);
	emit_silence();
}

/*
 * Account a transaction whose pong, echoed T3 or TX stamp just came.
 * Back-to-back without -t that waits until the next ping has gone
 * (emit_later): the statistics are then added while that ping is on its
 * way, not between a pong and the next ping, where every instruction
 * lowers the rate; a batch of TX stamps is accounted EMIT_LATER_STEP at a
 * time over the steps after it.  With -t a breach must be seen at once, and
 * --interval waits anyway.  A full list accounts at once.
 */
static void emit_account(struct txn *x)
{
	if (!emitter.defer || emitter.nlater == EMIT_LATER) {
		txn_account(x);
	} else if (!(x->st & TF_LATER)) {
		x->st |= TF_LATER;
		emitter.later[(emitter.later_head + emitter.nlater++) % EMIT_LATER] = x;
	}
}

/* What emit_account left for later: the oldest max of it. */
static void emit_later(unsigned max)
{
	while (emitter.nlater && max--) {
		struct txn *x = emitter.later[emitter.later_head];

		emitter.later_head = (emitter.later_head + 1) % EMIT_LATER;
		emitter.nlater--;
		x->st &= (uint16_t)~TF_LATER;
		txn_account(x);
	}
}

/* All of it: the end of the run. */
static void emit_later_all(void)
{
	emit_later(EMIT_LATER);
}

/* Slot x is about to be reused: whatever waits is accounted first (x among it). */
static void emit_later_before_reuse(const struct txn *x)
{
	if (x->st & TF_LATER) {
		emit_later_all();
	}
}

static void emit_on_tx(uint32_t key, uint64_t wire)
{
	uint64_t seq = emitter.keyseq[key & run.win.mask];
	struct txn *x = &run.win.slot[seq & run.win.mask];

	if (seq == KEY_NONE) {
		return;		/* a FIN's stamp */
	}
	if (!(x->st & TF_TXPEND) || x->seq != seq || x->txkey != key) {
		sess.c.tx_unmatched++;
		return;
	}
	txn_tx_stamped(x, &emitter.txpend, T1W, wire);
	emit_account(x);	/* back-to-back: added after the next send, as a pong is */
}

/*
 * Collect TX stamps once TS_BATCH of them are pending, so one recvmmsg
 * serves TS_BATCH transactions (back-to-back they are read after each send
 * instead, emit_b2b_step, and this is the backstop); metrics that need T1
 * are then added a few transactions late, which changes nothing (each is
 * added once, whenever its last stamp arrives).  Forced when idle, when
 * ppoll reports the error queue, and at the end.
 *
 * With classes every class socket is drained, each under its own keys
 * (cls_use), then the socket in use is put back: a class's TX stamps queue
 * on the socket that sent it, and all pongs come to one socket, so when the
 * pong is always there before the wait (a loaded host) the others' stamps
 * were never read there and piled up (over a hundred in a 3000-ping run).
 */
static void emit_drain_if(bool force)
{
	int k, cur = classes.cur;

	if (!emitter.txpend || (!force && emitter.txpend < TS_BATCH)) {
		return;
	}
	if (!cls_multi_sock()) {
		ts_drain(run.sock_fd, emit_on_tx, tx_kernel_stamp, (int)emitter.txpend);
		return;
	}
	for (k = 0; k < classes.ncls && emitter.txpend; k++) {
		cls_use(k);
		ts_drain(run.sock_fd, emit_on_tx, tx_kernel_stamp, (int)emitter.txpend);
	}
	cls_use(cur);
}

static void emit_drain(void)
{
	emit_drain_if(true);
}

/* A send failed: the packet is not on the wire; resynchronise OPT_ID keys. */
static void send_failed(int err)
{
	sess.c.send_errors++;
	if (err == ECONNREFUSED) {
		sess.c.refused++;
	}
	if (run.side.emit) {
		emit_drain();
	}
	if (!refl.sent_shared) {
		ts_rekey(run.sock_fd);	/* else reflect_send rekeyed the shared socket */
	}
}

/* The TX key the next send will carry, and the ping's deadline (before its T1_SW). */
static void emit_key(struct txn *x, uint64_t seq, uint64_t now)
{
	x->deadline = now + cfg->timeout_ns;
	x->txkey = run.ts.next_key;
	emitter.keyseq[run.ts.next_key & run.win.mask] = seq;
}

/*
 * The window's slot for seq, emptied: what it holds (the transaction a
 * window ago) is accounted, lost if still unanswered, and retired (logged).
 */
static void emit_free_slot(uint64_t seq)
{
	struct txn *x = &run.win.slot[seq & run.win.mask];

	emit_later_before_reuse(x);
	if (x->st & TF_USED) {
		if (awaiting(x)) {
			emit_lost(x);
		}
		if (x->st & TF_TXPEND) {
			emitter.txpend--;
		}
		txn_retire(x);
	}
}

static void emit_send(uint64_t seq, uint64_t now)
{
	struct txn *x = &run.win.slot[seq & run.win.mask];
	/*
	 * what proto_encode reads of a ping, and no more: an initializer would
	 * zero the whole message, its T3 history too, before every ping
	 */
	struct proto_msg m;
	size_t len;

	m.type = PT_PING;
	m.flags = 0;
	m.session = sess.id;
	m.idle_ms = emitter.idle_ms;
	m.seq = seq;
	m.t2w = m.t2sw = m.t3sw = m.t3w = m.t3w_seq = 0;

	emit_free_slot(seq);	/* back-to-back: done after the last send (emit_b2b_step) */
	len = cls_before_send(seq, now, &m.flags);
	memset(x, 0, sizeof(*x));
	x->seq = seq;
	x->st = TF_USED;
	if (m.flags & PF_WARMUP) {
		x->st |= TF_WARMUP;
	} else if (seq == cfg->warmup && cfg->warmup) {
		trace_mark("RANT_TEST_START\n", 16);
	}
	proto_encode(emitter.tx, &m);
	tag_put(emitter.tx, len);
	answered_set(seq, false);
	/* its bookkeeping before T1_SW: between T1_SW and the send, only the send */
	emit_key(x, seq, now);
	tsn_before_send(x, now);
	if (cfg->sw_stamps) {
		x->t[T1SW] = real_ns();
	}
	pmc_read(x->pmc);
	if (ts_send(run.sock_fd, emitter.tx, len, NULL, 0) < 0) {
		/*
		 * ECONNREFUSED here is the ICMP port-unreachable of an earlier
		 * ping, reported on this send: the ping itself was not sent.
		 * Count it and try once more, so the cadence keeps its pings.
		 */
		int err = errno;

		send_failed(err);
		emit_key(x, seq, now);	/* send_failed may have re-keyed the socket */
		if (err != ECONNREFUSED ||
		    ts_send(run.sock_fd, emitter.tx, len, NULL, 0) < 0) {
			x->st |= TF_SENT | TF_SENDERR;
			answered_set(seq, true);	/* never sent: a pong for it is no answer */
			tsn.launch = 0;	/* its launch time is no later send's */
			return;
		}
		sess.c.send_errors--;	/* the retry went out: it was only a report */
	}
	tsn.launch = 0;
	/* --client-no-tx-ts: no TX stamp to wait for (the key still counts sends) */
	x->st |= TF_SENT | (cli_no_tx() ? 0 : TF_TXPEND);
	run.ts.next_key++;
	emitter.txpend += !cli_no_tx();
	emitter.outstanding++;
	sess.c.sent++;
	cls_count(seq, CG_SENT);
	__atomic_store_n(&run.live.sent, sess.c.sent, __ATOMIC_RELAXED);
}

/*
 * An echoed T3 wire stamp must follow its T2 (one clock: the reflector's
 * wire clock), and the time the reflector held the ping cannot exceed the
 * round trip that contained it, give or take 0.1% of clock rate difference
 * and 1 us of stamping granularity.
 */
static bool echo_t3_plausible(const struct txn *e, uint64_t t3w)
{
	uint64_t rtt;

	if (!t3w || t3w >= STAMP_MAX || (e->t[T2W] && t3w < e->t[T2W])) {
		return false;
	}
	if (e->t[T2W] && e->t[T1W] && e->t[T4W] && e->t[T4W] > e->t[T1W]) {
		rtt = e->t[T4W] - e->t[T1W];
		if (t3w - e->t[T2W] > rtt + rtt / 1000 + 1000) {
			return false;
		}
	}
	return true;
}

/*
 * One echoed T3 wire stamp (and its T3_K) for the ping seq, from a header or
 * the T3 history: taken only when still owed.  A repeat of the stamp known
 * is the rule with the history (and, with pongs reordered, the header may
 * bring one the history already did): it costs nothing; a different one is
 * refused and counted.
 */
static void emit_echo_one(uint64_t seq, uint64_t t3w, uint64_t t3k)
{
	struct txn *e = &run.win.slot[seq & run.win.mask];

	if (!(e->st & TF_USED) || e->seq != seq || seq >= emitter.next_seq) {
		return;
	}
	if (t3w && e->t[T3W] == t3w) {
		return;
	}
	if (e->t[T3W] || !(e->st & TF_SENT) || (e->st & TF_SENDERR)) {
		/* already known: never overwrite a counted stamp */
		sess.c.rejected[GR_ECHO_UNOWED]++;
		return;
	}
	if (!echo_t3_plausible(e, t3w)) {
		sess.c.rejected[GR_IMPLAUSIBLE]++;
		return;
	}
	e->t[T3W] = t3w;
	/* its kernel stamp: CLOCK_REALTIME, taken after the app's T3 */
	if (t3k && t3k < STAMP_MAX && (!e->t[T3SW] || t3k >= e->t[T3SW])) {
		e->t[T3K] = t3k;
	} else if (t3k) {
		sess.c.rejected[GR_IMPLAUSIBLE]++;
	}
	emit_account(e);
}

/* Take in the server's stamps from a pong or FIN_ACK: its echo, then its T3 history. */
static void emit_echo(const struct proto_msg *m)
{
	int i;

	if (m->flags & PF_T3W) {
		emit_echo_one(m->t3w_seq, m->t3w, m->t3k);
	}
	for (i = 0; i < m->nhist; i++) {
		emit_echo_one(m->hist[i].seq, m->hist[i].t3w, m->hist[i].t3k);
	}
}

/* BUSY: believed only before the reflector answered us; later, it is a forgery. */
static void emit_busy(size_t len)
{
	if (!sess.c.received && !sess.c.late && len <= cfg->size) {
		result.busy = true;
		sess.stop_reason = STOP_ERROR;
	} else {
		sess.c.rejected[GR_IMPLAUSIBLE]++;
	}
}

/*
 * FIN_ACK: an answer only after our FIN, exactly as long; the stamps the
 * reflector still owed, its kernel's boot id and its PHC reading.
 */
static void emit_fin_ack(const struct proto_msg *m, size_t len)
{
	if (!emitter.fin_sent) {
		sess.c.rejected[GR_FIN_ACK_UNASKED]++;
		return;
	}
	if (len != fin_len()) {
		sess.c.rejected[GR_LENGTH]++;
		return;
	}
	result.fin_acked = true;
	emitter.fin_more = m->flags & PF_MORE;
	if ((m->flags & PF_PARTIAL) && !m->seq && result.fin_counted) {
		return;		/* a repeated FIN's answer: the session's counts came already */
	}
	result.fin_counted = true;
	result.srv_received = m->seq;
	result.srv_whole = !(m->flags & PF_PARTIAL);
	if (m->boot_id) {
		result.srv_phc.boot_id = m->boot_id;
	}
	if (!peer_off_plausible(m)) {
		/* its PHC block is dropped, the rest stands */
		sess.c.rejected[GR_IMPLAUSIBLE]++;
	} else if (m->phc_method) {
		result.srv_phc.off = m->phc_off;
		result.srv_phc.window = m->phc_window;
		result.srv_phc.method = m->phc_method;
		result.srv_phc.disciplined = m->phc_disciplined;
	}
	emit_echo(m);
}

/*
 * A pong whose ping already left the window: late if its ping was lost and
 * this is its first pong, else a replay (a duplicate).
 */
static void emit_stale(const struct txn *x, uint64_t seq, uint64_t wire, uint64_t t4sw)
{
	if ((x->st & TF_SENDERR) && x->seq == seq) {
		sess.c.duplicate++;
	} else if (emitter.next_seq - seq <= ANSWERED_BITS && !answered_get(seq)) {
		answered_set(seq, true);
		sess.c.late++;
		cls_count(seq, CG_LATE);
		log_late(seq, wire, t4sw, run.ts_rx_kernel);
	} else {
		sess.c.duplicate++;
	}
}

/* The pong of ping x: its stamps and the server's into the slot, counted. */
static void emit_answered(struct txn *x, const struct proto_msg *m, size_t len, uint64_t wire,
			  uint64_t t4sw)
{
	x->st |= TF_RECEIVED;
	pmc_delta(x->pmc, x->pmc, run.pmc_rx);
	result.srv_no_tx = m->flags & PF_NO_TX;
	emitter.outstanding--;
	sess.c.received++;
	cls_on_answer(x->seq, x->st & TF_WARMUP);
	if (!emitter.first_rx_mono) {
		emitter.first_rx_mono = mono_ns();
	}
	if (x->st & TF_WARMUP) {
		sess.c.warmup++;
	}
	x->t[T4W] = wire;
	x->t[T4SW] = t4sw;
	x->t[T4K] = run.ts_rx_kernel;
	x->t[T2W] = m->t2w;
	x->t[T2SW] = m->t2sw;
	x->t[T3SW] = m->t3sw;
	x->t[T2K] = m->t2k;
	if ((m->flags & (PF_SRV_HW | PF_KSTAMPS)) == PF_SRV_HW && len < proto_kx_need()) {
		sess.c.kx_unfit++;	/* NIC stamps there, but no room for the kernel's: --size */
	}
	if (m->flags & PF_T3SW) {
		x->st |= TF_SRV_SW;
		sess.srv_sw = true;
	}
	if (m->flags & PF_KSTAMPS) {
		sess.srv_kx = true;
	}
	sess.srv_hw = m->flags & PF_SRV_HW;
	sess.srv_hw_known = true;
	if (sess.srv_hw && m->phc_method && !run.ts.peer_off_on) {
		/* the reflector's PHC offset: out of its segments from this pong on */
		run.ts.peer_off = m->phc_off;
		run.ts.peer_off_on = true;
	}
	emit_echo(m);
	if (m->flags & PF_BREACH) {
		sess.stop_reason = STOP_PEER_BREACH;
	}
}

/*
 * When a pong arrived, on the monotonic scale of the deadlines: its kernel
 * receive stamp (CLOCK_REALTIME; beside NIC stamps the kernel's own of the
 * same packet) less the REALTIME - MONOTONIC base of the clock-step check,
 * so a pong read late by a client the scheduler kept waiting is judged by
 * when it came, not by when it was read.  Without that stamp, or with one
 * outside the send .. read interval (a stepped clock), the read time.
 */
static uint64_t emit_arrival(const struct txn *x, uint64_t wire, uint64_t read)
{
	uint64_t k = run.ts.hw ? run.ts_rx_kernel : wire, sent = x->deadline - cfg->timeout_ns;
	__int128 a;

	if (!k || !run.clk.have) {
		return read;
	}
	a = (__int128)k - run.clk.base;
	/* the base's own error allowed for, as the clock-step check does */
	return a + CLK_TOL_NS >= sent && a <= read ? (uint64_t)a : read;
}

/*
 * One datagram on the client: decoded and authenticated, of our session,
 * BUSY or FIN_ACK taken, a pong of the right length for an in-flight ping
 * (else late, duplicate or rejected), its stamps checked and accounted.
 */
static void emit_packet(const uint8_t *buf, size_t len, uint64_t wire, uint64_t t4sw, bool trunc)
{
	struct proto_msg m;
	struct txn *x;
	int err = trunc ? PE_LONG : proto_decode(buf, len, &m);

	/* longer than --size: oversized, but for the FIN_ACK (fin_len: room for its blocks) */
	if (!err && len > cfg->size && (m.type != PT_FIN_ACK || len != fin_len())) {
		err = PE_LONG;
	}
	if (err) {
		count_invalid(err);
		return;
	}
	if (!tag_ok((uint8_t *)buf, len)) {
		sess.c.rejected[GR_UNAUTH]++;
		return;
	}
	if (m.session != sess.id) {
		sess.c.foreign++;
		count_invalid(PE_TYPE);
		return;
	}
	if (m.type == PT_BUSY) {
		emit_busy(len);
		return;
	}
	if (m.type == PT_FIN_ACK) {
		emit_fin_ack(&m, len);
		return;
	}
	if (len != (m.type == PT_PONG ? ping_len(m.seq) : cfg->size)) {
		/* the pong is exactly the ping's length */
		sess.c.rejected[GR_LENGTH]++;
		return;
	}
	if (m.type != PT_PONG || m.seq >= emitter.next_seq || len > cfg->size) {
		count_invalid(len > cfg->size ? PE_LONG : PE_TYPE);
		return;
	}
	if (!echo_plausible(&m)) {
		/* the round trip is ours and stands; the peer's impossible stamps are dropped */
		sess.c.rejected[GR_IMPLAUSIBLE]++;
		m.flags &= (uint16_t)~(PF_T2W | PF_T2SW | PF_T3SW | PF_T3W | PF_KSTAMPS);
		m.t2w = m.t2sw = m.t3sw = m.t3w = m.t3w_seq = m.t2k = m.t3k = 0;
		m.nhist = 0;
		m.phc_method = 0;
		m.phc_off = 0;
	}
	x = &run.win.slot[m.seq & run.win.mask];
	if (!(x->st & TF_USED) || x->seq != m.seq || (x->st & TF_SENDERR)) {
		emit_stale(x, m.seq, wire, t4sw);
		return;
	}
	if (x->st & (TF_RECEIVED | TF_LATE)) {
		sess.c.duplicate++;
		return;
	}
	if (!(x->st & TF_LOST)) {
		x->mono = mono_ns();	/* after the pong: the clock-step check's upper bound */
		if (x->mono > x->deadline &&
		    emit_arrival(x, wire, x->mono) > x->deadline) {
			/* arrived after --timeout: lost, and the pong late */
			emit_lost(x);
		}
	}
	answered_set(m.seq, true);
	if (x->st & TF_LOST) {
		x->st |= TF_LATE;
		x->t[T4W] = wire;
		x->t[T4SW] = t4sw;
		x->t[T4K] = run.ts_rx_kernel;
		sess.c.late++;
		cls_count(x->seq, CG_LATE);
		/*
		 * late for its own ping, but the T3 stamps it carries are the
		 * earlier pongs' (header and history): a run of late pongs (a
		 * link that came back slowly, ARP) would otherwise take the T3
		 * of the last ping answered in time with it
		 */
		emit_echo(&m);
		return;
	}
	emit_answered(x, &m, len, wire, t4sw);
	/* hunting a threshold: the breach must be seen (and tracing stopped) at once */
	emit_drain_if(cfg->threshold_ns >= 0);
	emit_account(x);
}

/*
 * SO_RXQ_OVFL: the count of datagrams the socket dropped because its
 * receive buffer was full (socket(7)), sent with every datagram.  Those are
 * this host's losses, not the network's.
 */
static void emit_rxq_ovfl(const struct cmsghdr *cm)
{
	uint32_t v;

	if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SO_RXQ_OVFL &&
	    cm->cmsg_len >= CMSG_LEN(sizeof(v))) {
		memcpy(&v, CMSG_DATA(cm), sizeof(v));
		if (v > result.rxq_ovfl) {
			result.rxq_ovfl = v;
		}
	}
}

/* --timestamps auto without NIC stamps: a transaction so far takes its kernel stamps (hw_judge). */
static void emit_restamp(struct txn *x)
{
	hw_txn_kernel(x, T4W, T4K);
	if (hw_txn_kernel(x, T1W, T1K) && (x->st & TF_TXPEND)) {
		x->st &= (uint16_t)~TF_TXPEND;
		emitter.txpend--;
	}
}

static void emit_hw_check(bool final)
{
	hw_judge(final, emit_restamp);
}

/*
 * The next ping before the last pong is taken in (emit_recv): back-to-back
 * (emitter.defer: no --interval, no -t; a breach must stop the run before
 * another ping), one socket (with classes the next ping may go from
 * another), no key (a pong's header is believed only once its tag is
 * checked).
 */
static bool emit_early_allowed(void)
{
	return emitter.defer && !cls_multi_sock() && !run.key.on;
}

/*
 * Back-to-back: is this datagram the pong the step waits for, and may the
 * run go on?  Read from its header alone, before any decoding: our
 * session's pong of ping early_seq, exactly as long as the ping, without
 * the reflector's breach flag, its ping neither lost nor answered, and the
 * run neither stopped, at its count nor past -d.  Whatever this passes,
 * emit_packet still judges in full; what it refuses is only taken in the
 * usual order.  *now: CLOCK_MONOTONIC, read here for the next ping.
 */
static bool emit_early_pong(const uint8_t *buf, size_t len, bool trunc, uint64_t *now)
{
	const struct txn *x = &run.win.slot[emitter.early_seq & run.win.mask];
	struct proto_peek h;

	if (trunc || len != ping_len(emitter.early_seq) || !proto_peek(buf, len, &h) ||
	    h.type != PT_PONG || h.session != sess.id || h.seq != emitter.early_seq ||
	    (h.flags & PF_BREACH) || x->seq != emitter.early_seq || !awaiting(x) ||
	    run.stop_signal || sess.stop_reason || emitter.next_seq >= emitter.total) {
		return false;
	}
	*now = mono_ns();
	return !emitter.end || *now < emitter.end;
}

/* One recvmsg; 1 = a datagram was handled, 0 = none, <0 = -errno (fatal). */
static int emit_recv(int flags)
{
	struct rx rx;
	int r = sock_recv(emitter.rx, emitter.rxcap, flags, &rx, emit_rxq_ovfl, false);
	uint64_t now;

	if (r == -ECONNREFUSED) {	/* ICMP port unreachable: no reflector (yet) */
		sess.c.refused++;
		return 0;
	}
	if (r > 0 && rx.ours) {
		if (emitter.early_due &&
		    emit_early_pong(emitter.rx + run.proto_pre, rx.len, rx.trunc, &now)) {
			/* the next ping first: the pong taken in after it, off the turnaround */
			emitter.early_due = false;
			emitter.early_sent = true;
			emit_send(emitter.next_seq++, now);
		}
		if (emitter.rx_ioctl) {
			ts_rx_ioctl(&rx);	/* after the next ping: off the turnaround */
		}
		emit_packet(emitter.rx + run.proto_pre, rx.len, ts_wire(&rx.c), rx.app, rx.trunc);
		emit_hw_check(false);
	}
	return r;
}

/* --spin with classes, between pings: one non-blocking receive on each socket. */
static int cls_spin_recv(void)
{
	int k, r, got = 0;

	for (k = 0; k < cls_classes(); k++) {
		cls_use(k);
		r = emit_recv(MSG_DONTWAIT);
		if (r < 0) {
			return r;
		}
		got |= r;
	}
	return got;
}

/* Deadline of the oldest ping still waiting for its pong, or 0. */
static uint64_t emit_next_deadline(void)
{
	uint64_t s;

	for (s = emitter.oldest; s < emitter.next_seq; s++) {
		struct txn *x = &run.win.slot[s & run.win.mask];

		if (x->seq == s && awaiting(x)) {
			return x->deadline;
		}
	}
	return 0;
}

/*
 * Read what is queued, without waiting: at most 64 rounds, so no stream of
 * datagrams holds the caller past its deadline; from the socket in use, or
 * (every_class) a round over every class socket.  <0: a socket error.
 */
static int emit_recv_queued(bool every_class)
{
	int i, r = 0;

	for (i = 0; i < 64; i++) {
		r = every_class ? cls_spin_recv() : emit_recv(MSG_DONTWAIT);
		if (r <= 0) {
			break;
		}
	}
	return r < 0 ? r : 0;
}

/*
 * Before a ping is given up: read the pongs already queued.  A client that
 * was not scheduled until after a deadline would otherwise expire a ping
 * whose pong came in time and sits unread, and then count that pong late.
 */
static void emit_read_queued(uint64_t now)
{
	uint64_t due = emit_next_deadline();

	if (!due || now < due) {
		return;		/* nothing due: no system call */
	}
	/* a socket error is the loop's to report, at its next receive */
	(void)emit_recv_queued(cls_multi_sock());
}

/* Mark as lost every outstanding ping whose deadline has passed. */
static void emit_expire(uint64_t now)
{
	emit_read_queued(now);
	while (emitter.oldest < emitter.next_seq) {
		struct txn *x = &run.win.slot[emitter.oldest & run.win.mask];

		if (x->seq == emitter.oldest && awaiting(x)) {
			if (now < x->deadline) {
				break;
			}
			emit_lost(x);
		}
		emitter.oldest++;
	}
}

/*
 * Wait for packets until the monotonic time limit: spin on non-blocking
 * receives, block in recvmsg with SO_RCVTIMEO (one syscall per pong, the
 * back-to-back case), or ppoll (interval mode, where TX stamps are collected
 * while idle).  Returns <0 on a fatal socket error.
 */
static int emit_wait_until(uint64_t limit, bool use_poll)
{
	uint64_t now = mono_ns(), want;
	int r;

	if (now >= limit) {
		return 0;
	}
	want = limit - now;
	if (cfg->spin && cls_multi_sock()) {
		return cls_spin_recv();
	}
	if (cfg->spin) {
		return emit_recv(MSG_DONTWAIT);
	}
	/* classes: the pongs of all come to one of their sockets (cls_share_port) */
	if (use_poll || cls_multi_sock()) {
		int ev = emit_wake_wait(limit, want, POLLIN);

		if (ev & POLLERR) {
			/*
			 * TX stamps, a FIN's too (txpend does not count those: they
			 * would stay); with --client-no-tx-ts none is queued (nor
			 * a launch-time report without --txtime): the error is
			 * the socket's, and the error queue is never read
			 */
			if (!cli_no_tx() || tsn.on) {
				ts_drain(run.sock_fd, emit_on_tx, tx_kernel_stamp,
					 (int)emitter.txpend + TS_BATCH);
			}
			if (!(ev & POLLIN)) {
				/* a socket error (ICMP) is read here */
				r = emit_recv(MSG_DONTWAIT);
				return r < 0 ? r : 0;
			}
		}
		if (ev & POLLIN) {
			return emit_recv_queued(false);
		}
		return 0;
	}
	/*
	 * SO_RCVTIMEO stays at its short tick (see emit_run): re-arming it to
	 * each deadline would cost a setsockopt per ping near the end of -d.
	 */
	return emit_recv(0);
}

/*
 * --spin, back-to-back: non-blocking receives until the pong is there.  The
 * clock is read every 64 polls only (empty or not, so that no stream of
 * datagrams holds the loop past its deadline): on the spinning path a vDSO
 * clock_gettime per poll costs more than the poll finds.
 */
static int emit_spin_pong(const struct txn *x, uint64_t limit)
{
	unsigned spins = 0;
	int r = 0;

	while (!resolved(x) && !run.stop_signal && !sess.stop_reason) {
		r = cls_multi_sock() ? cls_spin_recv() : emit_recv(MSG_DONTWAIT);
		if (r < 0) {
			break;
		}
		if (!(++spins & 63) && mono_ns() >= limit) {
			break;
		}
	}
	return r;
}

/*
 * Back-to-back, right after a send: the TX stamps waiting, this ping's
 * among them where the driver stamps inside the send (software stamps,
 * veth): one recvmmsg of one or two stamps, inside the round trip.  Read 16
 * at a time after a pong, they cost the turnaround about 15 us every 16th
 * ping here (a mean turnaround of 1.3-1.7 us against a median of 0.45).
 * At most EMIT_TX_AFTER_SEND, so that a backlog (NIC stamps that came late)
 * never holds up the pong's read for long: it goes on after the next
 * sends, or by the batch after a pong (emit_drain_if).
 */
static void emit_tx_after_send(void)
{
	if (emitter.txpend) {
		int n = emitter.txpend < EMIT_TX_AFTER_SEND ? (int)emitter.txpend :
								EMIT_TX_AFTER_SEND;

		ts_drain(run.sock_fd, emit_on_tx, tx_kernel_stamp, n);
	}
}

/*
 * Back-to-back: one ping, then wait for its pong or its timeout.  *now is
 * CLOCK_MONOTONIC read before this step (its ping's deadline, and the
 * clock-step check's lower bound of its T1_SW: read before it); on return,
 * read after this step: the pong's arrival time where it came (emit_packet
 * reads it right after the receive), which saves the turnaround between a
 * pong and the next ping two reads of the clock.
 */
static int emit_b2b_step(uint64_t *nowp)
{
	uint64_t seq, now = *nowp, limit;
	struct txn *x;
	int r = 0;

	if (emitter.early_sent) {
		/* sent as the last ping's pong was read (emit_recv) */
		emitter.early_sent = false;
		seq = emitter.next_seq - 1;
	} else {
		seq = emitter.next_seq++;
		emit_send(seq, now);
	}
	x = &run.win.slot[seq & run.win.mask];
	/* the last pong's statistics while this ping is out (about a microsecond) */
	emit_later(EMIT_LATER_STEP);
	/* then the TX stamps: after them, so that a ping's stamp and its pong are accounted once */
	emit_tx_after_send();
	/* and the next ping's slot, a window old: its retirement (the log, the fits) too */
	emit_free_slot(seq + 1);
	limit = emitter.end && emitter.end < x->deadline ? emitter.end : x->deadline;
	emitter.early_seq = seq;
	emitter.early_due = emitter.early_ok;
	if (cfg->spin) {
		r = emit_spin_pong(x, limit);
	}
	while (!resolved(x) && !run.stop_signal && !sess.stop_reason && r >= 0) {
		if (mono_ns() >= limit) {
			break;
		}
		r = emit_wait_until(limit, false);
	}
	emitter.early_due = false;
	if (resolved(x) && emitter.oldest == seq) {
		/* every earlier ping was resolved in its own step */
		emitter.oldest = seq + 1;
		*nowp = (x->st & TF_RECEIVED) && x->mono ? x->mono : mono_ns();
	} else {
		*nowp = mono_ns();
		emit_expire(*nowp);
	}
	return r;
}

/* --interval: an absolute cadence as in cyclictest, never a burst to catch up. */
static int emit_interval_step(uint64_t *next)
{
	uint64_t now = mono_ns(), limit, dl;

	emit_expire(now);
	if (now >= *next) {
		/*
		 * Behind the cadence, every step would only send: read what
		 * arrived first (bounded), or the receive buffer overflows and
		 * answered pings turn into losses.
		 */
		if (!emitter.waited) {
			int r = emit_recv_queued(false);

			if (r < 0) {
				return r;
			}
		}
		emitter.waited = false;
		tsn.slot = *next;	/* --txtime: the launch time is the slot's */
		emit_send(emitter.next_seq++, now);
		emit_tx_after_send();
		*next += cfg->interval_ns;
		if (*next <= now) {
			uint64_t skip = (now - *next) / cfg->interval_ns + 1;

			result.overruns += skip;
			*next += skip * cfg->interval_ns;
		}
		return 0;
	}
	limit = *next;
	dl = emit_next_deadline();
	if (dl && dl < limit) {
		limit = dl;
	}
	if (emitter.end && emitter.end < limit) {
		limit = emitter.end;
	}
	emitter.waited = true;
	return emit_wait_until(limit, true);
}

/*
 * After the last ping: wait for the pongs still in flight (after -d at most
 * 200 ms more), collect outstanding TX stamps, then FIN so the reflector ends
 * its session and sends the T3 stamps it still owes.
 */
/* Every ping still waiting for its pong is lost (the end's cutoff, a BUSY answer). */
static void emit_lose_outstanding(void)
{
	uint64_t s;

	for (s = emitter.oldest; s < emitter.next_seq; s++) {
		struct txn *x = &run.win.slot[s & run.win.mask];

		if (x->seq == s && awaiting(x)) {
			emit_lost(x);
		}
	}
}

/* The pongs still in flight: each until its deadline, none past cutoff (then lost). */
static void emit_await_pongs(uint64_t cutoff)
{
	while (emitter.outstanding) {
		uint64_t dl = emit_next_deadline(), now = mono_ns();

		if (!dl) {
			break;
		}
		if (dl > cutoff) {
			dl = cutoff;
		}
		if (now >= dl) {
			if (now >= cutoff) {
				/* what came before the cutoff counts */
				emit_read_queued(UINT64_MAX);
				emit_lose_outstanding();
				break;
			}
			emit_expire(now);
			continue;
		}
		if (emit_wait_until(dl, true) < 0) {
			break;
		}
	}
}

/*
 * The FIN, from every class's socket: a class whose traffic is dropped
 * (a qdisc, a gate, a policer) does not take the FIN with it.  The first to
 * arrive is the session's; the reflector answers the others as repeats.
 */
static void emit_fin_send(const struct proto_msg *m)
{
	int k;

	emitter.fin_sent = true;
	for (k = 0; k < cls_classes(); k++) {
		cls_use(k);
		proto_encode_pad(emitter.tx, fin_len(), m);
		tag_put(emitter.tx, fin_len());
		if (ts_send(run.sock_fd, emitter.tx, fin_len(), NULL, 0) >= 0) {
			emitter.keyseq[run.ts.next_key++ & run.win.mask] = KEY_NONE;
		} else {
			ts_rekey(run.sock_fd);	/* a key it may have used up */
		}
	}
}

/*
 * FIN until the FIN_ACK says no T3 stamps wait to be echoed (FIN_ROUNDS at
 * most), each tried 3 times; the reflector ends its session with the first
 * FIN_ACK that says so, whatever TX stamps it still lacks.  Past hard (-d's
 * end, spent waiting for pongs that never came or for an earlier FIN's
 * answer) the client waits no more, and an exchange that did not end with
 * the reflector's "done" ends with one FIN flagged PF_LAST, sent whatever
 * the time and not waited for: the reflector ends its session with it,
 * whatever echoes are left.  A client that left without it would hold the
 * reflector in its session until the idle timeout, and the next run of a
 * script would be told BUSY.
 */
static void emit_fin_exchange(uint64_t hard)
{
	struct proto_msg m = { .type = PT_FIN, .session = sess.id, .seq = emitter.next_seq };
	/*
	 * Each try waits --timeout, but 300 ms at most and FIN_WAIT_MIN_NS at
	 * least: the reflector may first wait END_TX_WAIT_NS for the TX stamps
	 * it still lacks before it answers, and a 10 ms --timeout gave up on a
	 * busy one's FIN_ACK (no loss by direction).
	 */
	uint64_t fin_wait = cfg->timeout_ns < FIN_WAIT_MIN_NS ? FIN_WAIT_MIN_NS :
			    cfg->timeout_ns < 300000000ULL ? cfg->timeout_ns : 300000000ULL;
	uint64_t t0 = mono_ns();
	int round;

	for (round = 0; round < FIN_ROUNDS; round++) {
		uint64_t limit;
		int tries;

		result.fin_acked = false;
		for (tries = 0; tries < 3 && !result.fin_acked && mono_ns() < hard; tries++) {
			emit_fin_send(&m);
			result.fin_tries++;
			limit = mono_ns() + fin_wait;
			if (limit > hard) {
				limit = hard;
			}
			while (!result.fin_acked && mono_ns() < limit) {
				if (emit_wait_until(limit, true) < 0) {
					break;
				}
			}
		}
		if (!result.fin_acked) {
			break;
		}
		if (!emitter.fin_more) {
			return;
		}
	}
	result.fin_wait_ns = mono_ns() - t0;
	m.flags |= PF_LAST;
	emit_fin_send(&m);
}

static void emit_finish(void)
{
	uint64_t grace_end = mono_ns() + 200 * 1000000ULL, t0;
	bool cut = sess.stop_reason == STOP_DURATION || sess.stop_reason == STOP_SIGNAL;
	/*
	 * With -d nothing the reflector does (vanish, stall, answer late) may
	 * keep the client past -d + 200 ms: in-flight pongs, TX stamps and the
	 * FIN exchange all end by FINISH_NS after -d, the rest is the report.
	 */
	uint64_t hard = emitter.end ? emitter.end + FINISH_NS : UINT64_MAX;
	uint64_t cutoff = cut && grace_end < hard ? grace_end : hard;

	emit_later_all();
	emitter.defer = false;
	if (result.busy) {
		/* the reflector serves someone else: what BUSY answered is lost, nothing comes */
		emit_lose_outstanding();
		return;
	}
	emit_await_pongs(cutoff);
	t0 = mono_ns();
	while (emitter.txpend && mono_ns() - t0 < 100 * 1000000ULL && mono_ns() < hard) {
		if (wait_fd(10 * 1000000ULL, 0) & POLLERR) {
			emit_drain();
		}
	}
	if (!sess.c.received) {
		return;
	}
	emit_fin_exchange(hard);
}

/* Retire the whole window in sequence order, so the log is ordered. */
static void window_flush(uint64_t end)
{
	uint64_t s = end > run.win.mask + 1 ? end - (run.win.mask + 1) : 0;

	for (; s < end; s++) {
		struct txn *x = &run.win.slot[s & run.win.mask];

		if ((x->st & TF_USED) && x->seq == s) {
			txn_retire(x);
		}
	}
}

/*
 * --interval with a list: each class on its own absolute cadence (as
 * emit_interval_step does for one), the earliest due class sends next.
 */
static int cls_interval_step(void)
{
	uint64_t now = mono_ns(), limit, dl;
	int b;

	emit_expire(now);
	b = cls_due(&limit);
	if (now >= limit) {
		uint64_t skip = cls_due_taken(b, emitter.next_seq, now);

		tsn.slot = limit;	/* --txtime: the launch time is the slot's */
		emit_send(emitter.next_seq++, now);
		result.overruns += skip;
		return 0;
	}
	dl = emit_next_deadline();
	if (dl && dl < limit) {
		limit = dl;
	}
	if (emitter.end && emitter.end < limit) {
		limit = emitter.end;
	}
	return emit_wait_until(limit, true);
}

/*
 * With the pongs read by recvfrom (ts_rx_ioctl_on) no SO_RXQ_OVFL count
 * comes with them: the same count, the socket's sk_drops, is read once at
 * the end from SO_MEMINFO (socket(7), SK_MEMINFO_DROPS), summed over the
 * classes' sockets, each of which drops on its own.
 */
static void emit_drops_meminfo(void)
{
	uint64_t sum = 0;
	int k;

	if (!emitter.rx_ioctl) {
		return;
	}
	for (k = 0; k < cls_classes(); k++) {
		uint32_t mi[SK_MEMINFO_VARS];
		socklen_t len = sizeof(mi);

		if (getsockopt(classes.fd[k], SOL_SOCKET, SO_MEMINFO, mi, &len) == 0 &&
		    len > SK_MEMINFO_DROPS * sizeof(mi[0])) {
			sum += mi[SK_MEMINFO_DROPS];
		}
	}
	if (sum > result.rxq_ovfl) {
		result.rxq_ovfl = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
	}
}

/*
 * --interval faster than this host sustains (more than 1 % of the send
 * slots skipped, or pongs its receive buffer dropped): said once, naming
 * --interval as typed; a list's cadence is all its classes' together.
 */
static void emit_overload_note(void)
{
	char all[64];

	if (!cfg->interval_ns ||
	    (result.overruns * 100 <= emitter.next_seq && !result.rxq_ovfl)) {
		return;
	}
	cls_interval_all(all, sizeof(all));
	warnx_("warning: --interval %s%s is faster than this host sustains: %" PRIu64
	       " send slots skipped, %" PRIu32 " pongs dropped by its receive buffer",
	       cfg->interval_arg, all, result.overruns, result.rxq_ovfl);
}

/*
 * The longest silence the client leaves between two pings, which the
 * reflector's idle timeout must outlast (the hint in every ping): the
 * cadence; with a cadence per class, the fastest class's own, since the
 * classes' slots may fall together (four classes every 4 s can leave 4 s
 * between pings, though together they send one a second).
 */
static uint64_t emit_longest_gap(void)
{
	uint64_t gap = 0;
	int i;

	for (i = 0; i < classes.nival; i++) {
		if (!gap || classes.ival[i] < gap) {
			gap = classes.ival[i];
		}
	}
	return gap ? gap : cfg->interval_ns;
}

static int emit_run(void)
{
	uint64_t next, now;
	int r = 0;

	emitter.total = cfg->count ? (cfg->warmup + cfg->count) * cls_sizes() : UINT64_MAX;
	emitter.idle_ms = (uint32_t)((emit_longest_gap() + cfg->timeout_ns) / 1000000 + 1);
	/*
	 * A blocked recvmsg wakes at least every 50 ms (or --timeout, if
	 * shorter) to look at its deadline and -d: the timeout is set once, and
	 * lateness is judged on arrival (emit_packet), not by when we woke.
	 */
	emitter.rcvtimeo = cfg->timeout_ns < 50000000ULL ? cfg->timeout_ns : 50000000ULL;
	set_rcvtimeo(emitter.rcvtimeo);
	sess.start_mono = mono_ns();
	sess.first_real = real_ns();
	clk_start();
	emitter.end = cfg->duration_s > 0 ? sess.start_mono + (uint64_t)(cfg->duration_s * 1e9) *
								     cls_sizes() :
					  0;
	cls_run_start();
	emitter.defer = cfg->threshold_ns < 0 && !cfg->interval_ns && !cls_paced();
	emitter.early_ok = emit_early_allowed();
	emit_wake_open();
	next = sess.start_mono;
	tsn_run_start(&next);	/* --cycle: the cadence on the schedule */
	if (!cfg->warmup) {
		trace_mark("RANT_TEST_START\n", 16);
	}
	/*
	 * Per ping (emit_b2b_step; --interval: emit_interval_step):
	 *   emit_send: proto_encode, tag_put, ts_send (sendmsg)
	 *   emit_wait_until: emit_recv (recvmsg, ts_parse) -> emit_packet
	 *     (proto_decode, tag_ok, the checks) -> txn_account (metrics,
	 *     breach); the TX stamp: emit_drain_if -> ts_drain (recvmmsg of the
	 *     error queue) -> emit_on_tx -> txn_account
	 *   at the slot's reuse: txn_retire (log_push, pmc_account)
	 */
	now = mono_ns();
	while (!run.stop_signal && !sess.stop_reason && r >= 0) {
		if (emitter.end && now >= emitter.end) {
			sess.stop_reason = STOP_DURATION;
			break;
		}
		if (emitter.next_seq >= emitter.total && !emitter.early_sent) {
			sess.stop_reason = STOP_COUNT;
			break;
		}
		if (cls_paced() || cfg->interval_ns) {
			r = cls_paced() ? cls_interval_step() : emit_interval_step(&next);
			now = mono_ns();
		} else {
			r = emit_b2b_step(&now);	/* it reads the clock for the next */
		}
	}
	if (r < 0) {
		warnx_("receive failed: %s", strerror(-r));
		sess.stop_reason = STOP_ERROR;
	}
	if (run.stop_signal && !sess.stop_reason) {
		sess.stop_reason = STOP_SIGNAL;
	}
	emit_finish();
	emit_hw_check(true);	/* a run too short to judge the NIC on the way */
	sess.end_mono = mono_ns();
	tsn_reports();	/* --txtime: the last launch times dropped, before their log rows */
	window_flush(emitter.next_seq);
	emit_drops_meminfo();
	emit_overload_note();
	result.seqs = emitter.next_seq;
	return r < 0 ? -1 : 0;
}

/* -------------------------------------------------------------- reflect */

#define SEEN_BITS	4096

/* A seq leaves the window: if it never came, it may still come (reflect_seen). */
static void reflect_leaves(uint64_t seq, bool came)
{
	if (!came && seq >= refl.first && seq < refl.below) {
		refl.below = seq;
	}
}

/* The window moves up to seq: what leaves it is noted, the new seqs start unseen. */
static void reflect_advance(uint64_t seq)
{
	uint64_t i, bit;

	if (!refl.any) {
		memset(refl.seen, 0, sizeof(refl.seen));
		refl.first = seq;	/* a restarted reflector joins mid-session */
		refl.below = UINT64_MAX;
	} else if (seq - refl.top >= SEEN_BITS) {
		i = refl.top >= SEEN_BITS ? refl.top - SEEN_BITS + 1 : 0;
		for (; i <= refl.top; i++) {
			reflect_leaves(i, refl.seen[(i % SEEN_BITS) / 64] & (1ULL << (i % 64)));
		}
		reflect_leaves(refl.top + 1, seq - refl.top == SEEN_BITS);
		memset(refl.seen, 0, sizeof(refl.seen));
	} else {
		for (i = refl.top + 1; i <= seq; i++) {
			uint64_t *w = &refl.seen[(i % SEEN_BITS) / 64];

			bit = 1ULL << (i % 64);
			if (i >= SEEN_BITS) {
				/* the seq the bit held */
				reflect_leaves(i - SEEN_BITS, *w & bit);
			}
			*w &= ~bit;
		}
	}
	refl.top = seq;
	refl.any = true;
}

/*
 * True if seq was already answered (or, with a key, is too old to tell).
 * Without a key a third party can move the window (README, Rules): a seq
 * below it that left it unseen is still answered, once, in increasing order.
 */
static bool reflect_seen(uint64_t seq)
{
	if (!refl.any || seq > refl.top) {
		reflect_advance(seq);
	} else if (refl.top - seq >= SEEN_BITS) {
		if (run.key.on || seq < refl.below) {
			return true;
		}
		refl.below = seq + 1;
		sess.c.late++;	/* arrived after a later ping: reordered */
		return false;
	} else if (refl.seen[(seq % SEEN_BITS) / 64] & (1ULL << (seq % 64))) {
		return true;
	} else {
		sess.c.late++;	/* arrived after a later ping: reordered */
		if (seq < refl.first) {
			refl.first = seq;
		}
	}
	refl.seen[(seq % SEEN_BITS) / 64] |= 1ULL << (seq % 64);
	return false;
}

static void echo_push(uint64_t seq, uint64_t t3w, uint32_t key)
{
	if (run.echo.n == ECHO_CAP) {
		run.echo.head = (run.echo.head + 1) % ECHO_CAP;
		run.echo.n--;
		sess.c.echo_dropped++;
	}
	run.echo.q[(run.echo.head + run.echo.n) % ECHO_CAP] = (struct echo){ seq, t3w, key };
	run.echo.n++;
}

/* The kernel stamp of an echo's pong, if it came (the slot may hold a newer send by now). */
static uint64_t echo_t3k(const struct echo *e)
{
	const struct txn *x = &run.win.slot[e->key & run.win.mask];

	return (x->st & TF_USED) && x->txkey == e->key && x->seq == e->seq ? x->t[T3K] : 0;
}

/* The next echo into m's header; it becomes the newest of the T3 history. */
static bool echo_pop(struct proto_msg *m)
{
	if (!run.echo.n) {
		return false;
	}
	m->t3w_seq = run.echo.q[run.echo.head].seq;
	m->t3w = run.echo.q[run.echo.head].t3w;
	m->flags |= PF_T3W;
	m->t3k = echo_t3k(&run.echo.q[run.echo.head]);
	memmove(run.echo.sent + 1, run.echo.sent, T3HIST_MAX * sizeof(struct echo));
	run.echo.sent[0] = run.echo.q[run.echo.head];
	if (run.echo.nsent < T3HIST_MAX + 1) {
		run.echo.nsent++;
	}
	run.echo.head = (run.echo.head + 1) % ECHO_CAP;
	run.echo.n--;
	return true;
}

/*
 * The T3 history of a pong or FIN_ACK written into buf (after echo_pop and
 * the blocks before it): the echoes sent before the one in its header, as
 * many as buf has room for, newest first.  Nothing to do for a ping with
 * no room (the default 64 bytes).
 */
static void echo_hist_put(uint8_t *buf, size_t len, struct proto_msg *m)
{
	uint32_t i, skip = m->flags & PF_T3W ? 1 : 0;
	uint32_t room = (uint32_t)proto_hist_room(buf, len, m->type);

	m->nhist = 0;
	if (!room) {
		return;		/* the default 64 bytes: nothing more to do before the send */
	}
	for (i = skip; i < run.echo.nsent && m->nhist < room; i++) {
		m->hist[m->nhist].seq = run.echo.sent[i].seq;
		m->hist[m->nhist].t3w = run.echo.sent[i].t3w;
		m->hist[m->nhist].t3k = echo_t3k(&run.echo.sent[i]);
		m->nhist++;
	}
	proto_hist_put(buf, len, m);
}

/*
 * The session's peer: its first ping's address and port, exactly.  A
 * client with --priority/--tos classes sends every class from that one
 * port (cls_share_port), so no other port ever belongs to a session.
 */
static bool reflect_peer_ok(const struct sockaddr *from)
{
	/* with its own socket, the session is also the address its first ping was sent to */
	return sa_same(&refl.peer, from) && !refl.off_addr;
}

/* A datagram refused by a session rule: counted with the session, or with the next one. */
static void reflect_reject(int why)
{
	if (refl.active) {
		sess.c.rejected[why]++;
	} else {
		refl.carry_rej[why]++;
	}
}

/*
 * Where the datagram just read was sent to.  The dual-stack socket reports
 * IPv4 pings too, as IPV6_PKTINFO with a v4-mapped address (ip(7), ipv6(7)).
 */
static void reflect_pktinfo(const struct cmsghdr *cm)
{
	if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO &&
	    cm->cmsg_len >= CMSG_LEN(sizeof(refl.pi.v6))) {
		memcpy(&refl.pi.v6, CMSG_DATA(cm), sizeof(refl.pi.v6));
		refl.pi_level = IPPROTO_IPV6;
	} else if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO &&
		   cm->cmsg_len >= CMSG_LEN(sizeof(refl.pi.v4))) {
		memcpy(&refl.pi.v4, CMSG_DATA(cm), sizeof(refl.pi.v4));
		refl.pi_level = IPPROTO_IP;
	}
}

/*
 * A source address in IP_PKTINFO costs every answer a route lookup by
 * source (measured on a 2-CPU VM: +0.28 us per send, tests/bench.d/
 * kcost.c).  It is needed only where the kernel would pick another address.
 * With the socket bound to -i's device (both ways through it), the kernel's
 * choice for the peer is asked (connect() on a probe socket, then
 * getsockname(), ip(7)): when it is the address the ping came to, answers to
 * that peer and address go without it.  The probe is a handful of system
 * calls: it never runs in the loop, but in the source watch (srcw_main).
 */
static bool src_probe(const struct src_query *q)
{
	const struct sockaddr *to = (const struct sockaddr *)&q->peer;
	struct sockaddr_storage me;
	socklen_t len = sizeof(me);
	bool same = false;
	int fd, off = 0;

	if (!cfg->iface || !q->level) {
		return false;
	}
	fd = socket(to->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		return false;
	}
	if (to->sa_family == AF_INET6) {
		/* v4-mapped peers */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	}
	if (!setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, cfg->iface,
			(socklen_t)strlen(cfg->iface)) &&
	    !connect(fd, to, q->peerlen) && !getsockname(fd, (struct sockaddr *)&me, &len)) {
		if (me.ss_family == AF_INET6 && q->level == IPPROTO_IPV6) {
			same = !memcmp(&((struct sockaddr_in6 *)(void *)&me)->sin6_addr,
				       &q->pi.v6.ipi6_addr, sizeof(q->pi.v6.ipi6_addr));
		} else if (me.ss_family == AF_INET && q->level == IPPROTO_IP) {
			same = ((struct sockaddr_in *)(void *)&me)->sin_addr.s_addr ==
			       q->pi.v4.ipi_addr.s_addr;
		}
	}
	close(fd);
	return same;
}

/*
 * Everything that can change the kernel's choice of source address: links,
 * addresses, routes and policy rules of both families (rtnetlink(7)).  The
 * watch only needs to know that something changed, never what.
 */
static int srcw_nl_open(void)
{
	struct sockaddr_nl sa = {
		.nl_family = AF_NETLINK,
		.nl_groups = RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV4_ROUTE |
			     RTMGRP_IPV4_RULE | RTMGRP_IPV6_IFADDR | RTMGRP_IPV6_ROUTE |
			     1u << (RTNLGRP_IPV6_RULE - 1),
	};
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* Read every notification queued; true if there was any (or some were lost: ENOBUFS). */
static bool srcw_nl_drain(int fd)
{
	char buf[8192] __attribute__((aligned(8)));
	bool any = false;
	ssize_t n;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0 || (n < 0 && errno == ENOBUFS)) {
			any = true;
		} else if (n == 0 || (errno != EINTR && errno != ENOBUFS)) {
			return any;
		}
	}
}

/* The watch's answer to q (lock held by the caller): the loop adopts it at its next pong. */
static void srcw_publish(const struct src_query *q, bool same)
{
	srcwatch.a = *q;
	srcwatch.a_same = same;
	__atomic_store_n(&srcwatch.a_gen, srcwatch.a_gen + 1, __ATOMIC_RELEASE);
}

/*
 * The source watch: a thread of its own (thread_start), asleep until the
 * loop asks about a new peer or pinged address, or the kernel announces a
 * change of routing.  A change first withdraws a "same" answer -- from then on the
 * loop names the source again -- then probes anew.  Without rtnetlink it
 * probes every second.
 */
static void *srcw_main(void *arg)
{
	struct src_query q;
	uint32_t answered = 0;
	uint64_t v;

	(void)arg;
	thread_own_files((const int[]){ srcwatch.ev_fd, srcwatch.nl_fd }, 2);
	while (!__atomic_load_n(&srcwatch.quit, __ATOMIC_ACQUIRE)) {
		struct pollfd p[2] = { { srcwatch.ev_fd, POLLIN, 0 },
				       { srcwatch.nl_fd, POLLIN, 0 } };
		int n = poll(p, srcwatch.nl_fd >= 0 ? 2 : 1, srcwatch.nl_fd >= 0 ? -1 : 1000);
		bool changed, asked;

		if (n < 0 && errno != EINTR) {
			break;
		}
		if ((p[0].revents & POLLIN) && read(srcwatch.ev_fd, &v, sizeof(v)) < 0) {
			/* a doorbell rung twice reads once: nothing lost */
		}
		changed = srcwatch.nl_fd >= 0 ? p[1].revents && srcw_nl_drain(srcwatch.nl_fd) :
						 n == 0;
		pthread_mutex_lock(&srcwatch.lock);
		asked = srcwatch.q_gen != answered;
		answered = srcwatch.q_gen;
		q = srcwatch.q;
		if (changed && srcwatch.a_same) {
			srcw_publish(&srcwatch.a, false);
		}
		pthread_mutex_unlock(&srcwatch.lock);
		if ((asked || changed) && q.level) {
			bool same = src_probe(&q);

			pthread_mutex_lock(&srcwatch.lock);
			srcw_publish(&q, same);
			pthread_mutex_unlock(&srcwatch.lock);
		}
	}
	return NULL;
}

/* The reflector with -i: the watch starts (thread_start); without it every source is named. */
static void srcw_start(void)
{
	if (!cfg->iface || srcwatch.on) {
		return;
	}
	srcwatch.ev_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (srcwatch.ev_fd < 0) {
		return;
	}
	srcwatch.nl_fd = srcw_nl_open();
	pthread_mutex_init(&srcwatch.lock, NULL);
	srcwatch.on = thread_start(&srcwatch.thread, srcw_main);
	if (!srcwatch.on) {
		close(srcwatch.ev_fd);
		if (srcwatch.nl_fd >= 0) {
			close(srcwatch.nl_fd);
		}
	}
}

static void srcw_stop(void)
{
	uint64_t one = 1;

	if (!srcwatch.on) {
		return;
	}
	__atomic_store_n(&srcwatch.quit, true, __ATOMIC_RELEASE);
	if (write(srcwatch.ev_fd, &one, sizeof(one)) < 0) {
		/* cannot fail on an eventfd below its maximum */
	}
	pthread_join(srcwatch.thread, NULL);
	close(srcwatch.ev_fd);
	if (srcwatch.nl_fd >= 0) {
		close(srcwatch.nl_fd);
	}
	srcwatch.on = false;
}

/*
 * The watch's answer, when it changed: one atomic load per pong.  Copied
 * only if the thread does not hold the lock (the loop never waits); until
 * then the source is named.
 */
static void srcw_adopt(void)
{
	uint32_t g = __atomic_load_n(&srcwatch.a_gen, __ATOMIC_ACQUIRE);

	if (g == refl.src_gen) {
		return;
	}
	refl.src_same = false;
	if (pthread_mutex_trylock(&srcwatch.lock)) {
		return;
	}
	refl.src = srcwatch.a;
	refl.src_same = srcwatch.a_same;
	refl.src_gen = srcwatch.a_gen;
	pthread_mutex_unlock(&srcwatch.lock);
}

/* The datagram being answered came to the watched address from the watched peer. */
static bool reflect_src_known(const struct sockaddr *to)
{
	srcw_adopt();
	if (!refl.src_same || refl.pi_level != refl.src.level ||
	    !sa_same(&refl.src.peer, to)) {
		return false;
	}
	if (refl.pi_level == IPPROTO_IPV6) {
		return !memcmp(&refl.pi.v6, &refl.src.pi.v6, sizeof(refl.pi.v6));
	}
	return !memcmp(&refl.pi.v4, &refl.src.pi.v4, sizeof(refl.pi.v4));
}

/*
 * After a pong that had to name its source: ask the watch whether the
 * kernel's own choice for this peer is the pinged address.  The same
 * question once; another at most once a second (a client that pings more
 * than one of this host's addresses), a session's first at once.  One write to the
 * watch's eventfd, after the pong and never before it.
 */
#define SRC_ASK_NS	NSEC_PER_SEC

static void srcw_ask(const struct sockaddr *to, socklen_t tolen, uint64_t now)
{
	static const uint64_t one = 1;
	struct src_query q;

	if (!srcwatch.on || !refl.named || !refl.pi_level || tolen > sizeof(q.peer)) {
		return;
	}
	memset(&q, 0, sizeof(q));
	memcpy(&q.peer, to, tolen);
	q.peerlen = tolen;
	q.level = refl.pi_level;
	memcpy(&q.pi, &refl.pi, sizeof(q.pi));
	if (!memcmp(&q, &refl.ask, sizeof(q)) ||
	    (refl.ask_mono && refl.ask_id == sess.id && now - refl.ask_mono < SRC_ASK_NS)) {
		return;
	}
	if (pthread_mutex_trylock(&srcwatch.lock)) {
		return;		/* the watch is busy: asked at a later pong */
	}
	srcwatch.q = q;
	srcwatch.q_gen++;
	pthread_mutex_unlock(&srcwatch.lock);
	refl.ask = q;
	refl.ask_mono = now;
	refl.ask_id = sess.id;
	if (write(srcwatch.ev_fd, &one, sizeof(one)) < 0) {
		/* cannot fail on an eventfd below its maximum */
	}
}

/*
 * Answer from the address (and interface) the ping was sent to: the
 * kernel's own choice of source would be its preferred address, which a
 * client that pinged a second address drops on its connected socket.  A
 * multicast destination is no source address; the kernel picks one then.
 * The shared socket's way (reflect_send): each send names its peer.
 */
static ssize_t reflect_send_named(uint8_t *buf, size_t len, const struct sockaddr *to,
				  socklen_t tolen)
{
	ssize_t n;

	tag_put(buf, len);
	run.tx_src.len = 0;
	if (reflect_src_known(to)) {
		/* the kernel's own choice is that address: no source lookup */
	} else if (refl.pi_level == IPPROTO_IPV6 &&
		   !IN6_IS_ADDR_MULTICAST(&refl.pi.v6.ipi6_addr) &&
		   !(IN6_IS_ADDR_V4MAPPED(&refl.pi.v6.ipi6_addr) &&
		     IN_MULTICAST(ntohl(refl.pi.v6.ipi6_addr.s6_addr32[3])))) {
		run.tx_src.level = IPPROTO_IPV6;
		run.tx_src.type = IPV6_PKTINFO;
		run.tx_src.len = sizeof(struct in6_pktinfo);
		memcpy(run.tx_src.data, &refl.pi.v6, sizeof(refl.pi.v6));
	} else if (refl.pi_level == IPPROTO_IP &&
		   !IN_MULTICAST(ntohl(refl.pi.v4.ipi_addr.s_addr)) &&
		   refl.pi.v4.ipi_addr.s_addr != INADDR_BROADCAST) {
		struct in_pktinfo pi = { .ipi_ifindex = refl.pi.v4.ipi_ifindex,
					 .ipi_spec_dst = refl.pi.v4.ipi_addr };

		run.tx_src.level = IPPROTO_IP;
		run.tx_src.type = IP_PKTINFO;
		run.tx_src.len = sizeof(pi);
		memcpy(run.tx_src.data, &pi, sizeof(pi));
	}
	n = ts_send(run.sock_fd, buf, len, to, tolen);
	refl.named = run.tx_src.len != 0;
	run.tx_src.len = 0;
	return n;
}

/* ------------------------------------------- the session's own socket */

/*
 * The reflector's one socket is shared: every peer's datagrams come to it,
 * so every answer names its peer, and its source is the address the ping
 * was sent to (IP_PKTINFO) or the kernel's choice for that peer (the source
 * watch).  For a send that names its destination the kernel looks the
 * route up again each time; a send with control data does so even on a
 * connected socket (udp_sendmsg()).  A session has one peer and one address
 * pinged, so it gets a socket of its own once its first pong is out (bind
 * and connect, outside every measured window): bound to that address and
 * port (SO_REUSEPORT beside the shared socket, socket(7)), connected to the
 * peer.  The kernel then hands it the peer's datagrams (a connected socket
 * is the best match of a UDP lookup), and each pong goes out on the
 * connected socket's cached route, from the right address, with no control
 * data: its TX key is the socket's own counter (OPT_ID, timestamping.rst),
 * counted from ss_base in the session's keys, reset after a failed send as
 * the client's (ts_rekey).  Measured on this
 * project's VM, veth, spinning: the round trip 14 % shorter than on the
 * shared socket (docs/bench.md).  Everything else still comes to the shared
 * socket, read between the session's datagrams (reflect_recv_shared): a
 * second client's pings (told BUSY from there), junk, FINs of sessions that
 * ended.  Where a session socket cannot be had (no address pinged is known,
 * a multicast or broadcast one, a refused option, bind or connect), the
 * session is answered on the shared socket as before.
 */
/* the loop's wake-up while ss serves; the shared socket is read at least this often */
#define SS_TICK_NS	(20 * 1000000ULL)
#define SHARED_EVERY_NS	(1000000ULL)

/* The shared socket's state and the one in use trade places (for a read or a send on it). */
static void reflect_shared_swap(void)
{
	struct reflect_sock t = { run.sock_fd, run.ts.next_key, run.ts.key_cmsg, classes.r_tos,
				  classes.r_prio };

	run.sock_fd = refl.sh.fd;
	run.ts.next_key = refl.sh.next_key;
	run.ts.key_cmsg = refl.sh.key_cmsg;
	classes.r_tos = refl.sh.r_tos;
	classes.r_prio = refl.sh.r_prio;
	refl.sh = t;
}

/*
 * The next session's socket, with every option the shared socket was
 * given, made between sessions: after a session's first pong only bind and
 * connect are left.
 */
static void reflect_ss_prepare(int family)
{
	struct timeval tv = rcvtimeo_tv(SS_TICK_NS);
	int fd;

	if (refl.spare_on && refl.spare_family == family) {
		return;
	}
	if (refl.spare_on) {
		close(refl.spare_fd);
		refl.spare_on = false;
	}
	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(refl.spare_why, sizeof(refl.spare_why), "socket: %s", strerror(errno));
		return;
	}
	/* SO_BINDTODEVICE refused for want of privilege: so was the shared socket's (sock_setup) */
	if ((family == AF_INET6 && setopt_int(fd, IPPROTO_IPV6, IPV6_V6ONLY, 1) < 0) ||
	    setopt_int(fd, SOL_SOCKET, SO_REUSEPORT, 1) < 0 ||
	    (cfg->iface && setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, cfg->iface,
				      (socklen_t)strlen(cfg->iface)) < 0 && errno != EPERM) ||
	    ts_sockopt(fd, ts_socket_flags()) < 0 ||
	    sock_opts(fd, family, cfg->priority, cfg->tos, false) < 0) {
		snprintf(refl.spare_why, sizeof(refl.spare_why), "its socket options: %s",
			 strerror(errno));
		close(fd);
		return;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	refl.spare_fd = fd;
	refl.spare_family = family;
	refl.spare_on = true;
}

/*
 * The session's two ends, from its first ping (from) and where it was sent
 * (refl.pi): the family of a socket for them, false where there is none
 * to have.  A v4-mapped pair is IPv4; a link-local address names its
 * interface.
 */
static bool reflect_ss_ends(const struct sockaddr *from, struct sockaddr_storage *me,
			    struct sockaddr_storage *peer, socklen_t *len, int *family)
{
	struct sockaddr_in *m4 = (struct sockaddr_in *)(void *)me;
	struct sockaddr_in *p4 = (struct sockaddr_in *)(void *)peer;
	struct sockaddr_in6 *m6 = (struct sockaddr_in6 *)(void *)me;
	const struct sockaddr_in6 *f6 = (const struct sockaddr_in6 *)(const void *)from;
	const struct in6_addr *a6 = &refl.pi.v6.ipi6_addr;
	uint32_t a4;

	memset(me, 0, sizeof(*me));
	memset(peer, 0, sizeof(*peer));
	if (refl.pi_level == IPPROTO_IP && from->sa_family == AF_INET) {
		a4 = ntohl(refl.pi.v4.ipi_addr.s_addr);
		memcpy(p4, from, sizeof(*p4));
	} else if (refl.pi_level == IPPROTO_IPV6 && from->sa_family == AF_INET6 &&
		   IN6_IS_ADDR_V4MAPPED(a6) && IN6_IS_ADDR_V4MAPPED(&f6->sin6_addr)) {
		memcpy(&a4, &a6->s6_addr[12], 4);
		a4 = ntohl(a4);
		p4->sin_family = AF_INET;
		p4->sin_port = f6->sin6_port;
		memcpy(&p4->sin_addr, &f6->sin6_addr.s6_addr[12], 4);
	} else if (refl.pi_level == IPPROTO_IPV6 && from->sa_family == AF_INET6 &&
		   !IN6_IS_ADDR_V4MAPPED(a6) && !IN6_IS_ADDR_MULTICAST(a6) &&
		   !IN6_IS_ADDR_UNSPECIFIED(a6)) {
		m6->sin6_family = AF_INET6;
		m6->sin6_port = htons((uint16_t)cfg->port);
		m6->sin6_addr = *a6;
		if (IN6_IS_ADDR_LINKLOCAL(a6)) {
			m6->sin6_scope_id = (uint32_t)refl.pi.v6.ipi6_ifindex;
		}
		memcpy(peer, from, sizeof(struct sockaddr_in6));
		*len = sizeof(struct sockaddr_in6);
		*family = AF_INET6;
		return true;
	} else {
		return false;
	}
	if (IN_MULTICAST(a4) || a4 == INADDR_BROADCAST || a4 == INADDR_ANY) {
		return false;
	}
	m4->sin_family = AF_INET;
	m4->sin_port = htons((uint16_t)cfg->port);
	m4->sin_addr.s_addr = htonl(a4);
	*len = sizeof(struct sockaddr_in);
	*family = AF_INET;
	return true;
}

/* Why the session has no socket of its own: its bind or connect failed (errno). */
static void reflect_ss_refused(void)
{
	snprintf(result.ss_why, sizeof(result.ss_why), "bind or connect to the session's ends: %s",
		 strerror(errno));
}

/*
 * Right after a session's first pong (reflect_packet), outside its windows:
 * the session gets its socket, or stays on the shared one.  From here on
 * its pongs and FIN_ACKs go out on it, their keys going on from the first
 * pongs' (ss_base + the socket's counter).  The TOS of each ping is read on
 * it only for a client with classes (the first ping says so), where the
 * pong goes out in it.
 */
static void reflect_ss_open(const struct sockaddr *from, uint16_t flags)
{
	struct sockaddr_storage me, peer;
	socklen_t len = 0;
	int family = 0, fd, tos_opt, tos_level;

	refl.on_ss = false;
	if (refl.ss_on) {
		return;
	}
	result.ss_got = SS_SHARED;	/* until it has its socket */
	if (!reflect_ss_ends(from, &me, &peer, &len, &family)) {
		snprintf(result.ss_why, sizeof(result.ss_why), "%s",
			 refl.pi_level ? "the address pinged is not a unicast one" :
					  "the address pinged is not known (no IP_PKTINFO)");
		return;
	}
	reflect_ss_prepare(family);
	if (!refl.spare_on) {
		snprintf(result.ss_why, sizeof(result.ss_why), "no socket: %s", refl.spare_why);
		return;
	}
	fd = refl.spare_fd;
	refl.spare_on = false;
	tos_opt = family == AF_INET6 ? IPV6_RECVTCLASS : IP_RECVTOS;
	tos_level = family == AF_INET6 ? IPPROTO_IPV6 : IPPROTO_IP;
	if (bind(fd, (struct sockaddr *)&me, len) < 0) {
		reflect_ss_refused();
		close(fd);
		return;
	}
	/* from here the address's datagrams may queue on it: read before it serves, or closes */
	refl.pre_on = true;
	refl.pre_fd = fd;
	refl.pre_pi_level = refl.pi_level;
	refl.pre_pi = refl.pi;
	refl.pre_close = connect(fd, (struct sockaddr *)&peer, len) < 0 ||
			  ((flags & PF_CLASS) && setopt_int(fd, tos_level, tos_opt, 1) < 0);
	if (refl.pre_close) {
		reflect_ss_refused();
		return;
	}
	result.ss_got = SS_OWN;
	/* in use from here, with the keys going on; the shared socket's state waits in sh */
	refl.sh = (struct reflect_sock){ fd, run.ts.next_key, false, cfg->tos, cfg->priority };
	reflect_shared_swap();
	refl.ss_fd = fd;
	refl.ss_family = family;
	refl.ss_base = run.ts.next_key;	/* the socket's counter is 0 here */
	refl.ss_pi_level = refl.pi_level;
	refl.ss_pi = refl.pi;
	refl.ss_on = refl.on_ss = true;
	/* pings sent before the connect are queued on the shared socket: read them next */
	refl.shared_due = true;
	refl.sh_owed = refl.txpend;	/* the first pongs' stamps, on the shared socket */
	refl.sh_tries = 16;
	refl.sh_busy = false;
	refl.sh_rekeyed = false;
}

/*
 * A session's end (reflect_end, after its last report): its socket closes,
 * and the shared socket is the one in use again, its TX keys where they
 * were.  Datagrams still queued on the session's socket were late for it.
 */
static void reflect_ss_close(void)
{
	if (!refl.ss_on) {
		return;
	}
	close(refl.ss_fd);
	reflect_shared_swap();	/* the shared socket's state back in use */
	refl.ss_on = refl.on_ss = false;
	refl.sh_owed = 0;
	refl.sh_busy = false;
	reflect_ss_prepare(refl.ss_family);
}

/* A session ends: no socket of its own is due any more (reflect_end). */
static void reflect_ss_end(void)
{
	refl.ss_due = false;
	if (refl.pre_on && refl.pre_close) {
		close(refl.pre_fd);
	}
	refl.pre_on = false;
	reflect_ss_close();
}

/*
 * Answer on the session's socket (connected: no peer named, no source, no
 * key in control data), or on the shared socket.  A send on the shared one
 * while ss serves is to another peer (a BUSY): its TX key is the shared
 * socket's own, at or above ss_base, its stamp is dropped (sent_shared
 * tells the caller that no key of the session's was used).
 */
static ssize_t reflect_send(uint8_t *buf, size_t len, const struct sockaddr *to, socklen_t tolen)
{
	uint32_t key0;
	bool cmsg;
	ssize_t n;

	refl.sent_shared = false;
	if (!refl.ss_on) {
		return reflect_send_named(buf, len, to, tolen);
	}
	if (refl.on_ss) {
		tag_put(buf, len);
		refl.named = false;
		return ts_send(run.sock_fd, buf, len, NULL, 0);
	}
	/* a re-key of the shared socket (here, or ts_send's) leaves the session's keys alone */
	key0 = refl.key0;
	reflect_shared_swap();
	cmsg = run.ts.key_cmsg;
	n = reflect_send_named(buf, len, to, tolen);
	if (n >= 0) {
		run.ts.next_key++;
		refl.sh_busy |= !cfg->no_tx_ts;
	} else if (!run.ts.key_cmsg) {
		int err = errno;

		ts_rekey(run.sock_fd);	/* the shared socket's key it may have used up */
		refl.sh_rekeyed = true;
		errno = err;
	}
	refl.sh_rekeyed |= cmsg != run.ts.key_cmsg;	/* ts_send fell back to the counter */
	refl.key0 = key0;
	reflect_shared_swap();
	refl.sent_shared = true;
	return n;
}

/*
 * A datagram sent outside any transaction (a BUSY, a FIN_ACK) used up a TX
 * key: park it in its slot, so that its TX stamp finds a slot that ignores it.
 */
static void reflect_park_key(void)
{
	struct txn *x = &run.win.slot[run.ts.next_key & run.win.mask];

	if (x->st & TF_TXPEND) {
		refl.txpend--;
	}
	txn_retire(x);
	memset(x, 0, sizeof(*x));
	x->txkey = run.ts.next_key++;
}

/*
 * A ping of another session while one runs: a header-sized BUSY (never
 * larger than the ping, which is at least a header), at most one per
 * BUSY_GAP_NS so that it cannot be used to amplify a flood.  Its TX stamp
 * is parked like a FIN_ACK's.
 */
static void reflect_busy(const struct proto_msg *m, uint8_t *buf, size_t len,
			 const struct sockaddr *from, socklen_t fromlen, uint64_t now)
{
	struct proto_msg b = { .type = PT_BUSY, .session = m->session, .seq = m->seq };
	/* a short ping gets a short BUSY: the short header says all it says */
	size_t n = run.key.on ? PROTO_HDR_LEN + TAG_LEN : len < PROTO_HDR_LEN ? len : PROTO_HDR_LEN;

	if (refl.busy_last && now - refl.busy_last < BUSY_GAP_NS) {
		return;
	}
	if (n > len) {
		return;
	}
	refl.busy_last = now;
	proto_encode_pad(buf, n, &b);
	if (reflect_send(buf, n, from, fromlen) >= 0) {
		if (!refl.sent_shared) {
			reflect_park_key();
		}
		sess.c.rejected[GR_BUSY_SENT]++;
	} else if (!refl.sent_shared) {
		ts_rekey(run.sock_fd);	/* the key it may have used up */
	}
}

/*
 * A reflector that did not run (stopped, starved of CPU) cannot tell that
 * its client fell silent: the client was pinging all along, into the socket
 * queue.  The loop reads the clock after every datagram and wakes at least
 * every 200 ms; a longer gap since it last did is the reflector's own stall,
 * credited to the session's last ping so that the queued pings are read
 * before the session is called idle.
 */
#define STALL_NS	(1000 * 1000000ULL)

static void reflect_stall_credit(uint64_t now)
{
	if (refl.active && refl.last_wake && now - refl.last_wake > STALL_NS) {
		refl.last_rx += now - refl.last_wake;
	}
	refl.last_wake = now;
}

static void reflect_on_tx(uint32_t key, uint64_t wire)
{
	struct txn *x = &run.win.slot[key & run.win.mask];

	if ((int32_t)(key - refl.key0) < 0) {
		return;		/* a stamp of an earlier session (its last FIN_ACK): not ours */
	}

	if (!(x->st & TF_TXPEND) || x->txkey != key) {
		if (x->txkey != key || (x->st & TF_USED)) {
			sess.c.tx_unmatched++;
		}
		return;
	}
	txn_tx_stamped(x, &refl.txpend, T3W, wire);
	txn_account(x);
	if (wire && !(x->st & TF_NO_ECHO)) {
		echo_push(x->seq, wire, key);
	}
}

/* ss's TX stamps: its counter's key, in the session's keys. */
static void reflect_on_tx_ss(uint32_t key, uint64_t wire)
{
	reflect_on_tx(refl.ss_base + key, wire);
}

static void tx_kernel_stamp_ss(uint32_t key, uint64_t k)
{
	tx_kernel_stamp(refl.ss_base + key, k);
}

/* The shared socket's while ss serves: the session's first pongs', or a BUSY's (dropped). */
static bool reflect_sh_ours(uint32_t key)
{
	return !refl.sh_rekeyed && (int32_t)(key - refl.ss_base) < 0;
}

static void reflect_on_tx_sh(uint32_t key, uint64_t wire)
{
	if (reflect_sh_ours(key)) {
		refl.sh_owed -= refl.sh_owed > 0;
		reflect_on_tx(key, wire);
	}
}

static void tx_kernel_stamp_sh(uint32_t key, uint64_t k)
{
	if (reflect_sh_ours(key)) {
		tx_kernel_stamp(key, k);
	}
}

/* The shared socket's error queue (swapped in): what is there, at most a batch. */
static void reflect_shared_stamps(void)
{
	if (ts_drain(run.sock_fd, reflect_on_tx_sh, tx_kernel_stamp_sh, TS_BATCH) < TS_BATCH) {
		refl.sh_busy = false;	/* all read (a NIC's stamp still to come: read after ss) */
	}
}

/* The same while ss serves (ss in use). */
static void reflect_sh_read(void)
{
	reflect_shared_swap();
	reflect_shared_stamps();
	reflect_shared_swap();
}

/* reflect_drain while ss serves: its stamps, and the first pongs' still owed on the shared one. */
static void reflect_ss_drain(void)
{
	if (refl.txpend > refl.sh_owed) {
		ts_drain(run.sock_fd, reflect_on_tx_ss, tx_kernel_stamp_ss,
			 (int)(refl.txpend - refl.sh_owed));
	}
	/* a NIC that skips a stamp must not cost every pong a read: then every ms (reflect_recv) */
	if (refl.sh_owed && refl.sh_tries) {
		refl.sh_tries--;
		reflect_sh_read();
	}
}

/*
 * Unlike the client, the reflector reads its pong's TX stamp right after
 * sending it: that one recvmsg hides inside the client's turnaround, while a
 * batch of 16 (measured: ~3 us) would delay the next ping and show in the
 * p99 of the RTT.
 */
static void reflect_drain(void)
{
	if (refl.ss_on) {
		reflect_ss_drain();
	} else if (refl.txpend) {
		ts_drain(run.sock_fd, reflect_on_tx, tx_kernel_stamp, (int)refl.txpend);
	}
}

/* Retire the reflector's window (slots keyed by TX key) in send order. */
static void reflect_flush(void)
{
	uint64_t k = run.ts.next_key > run.win.mask + 1 ? run.ts.next_key - (run.win.mask + 1) : 0;

	for (; k < run.ts.next_key; k++) {
		struct txn *x = &run.win.slot[k & run.win.mask];

		if ((x->st & TF_USED) && x->txkey == (uint32_t)k) {
			if (x->st & TF_TXPEND) {
				refl.txpend--;
			}
			txn_retire(x);
		}
	}
}

/*
 * Between sessions: the next one's memory cleared now (session_clear), TX
 * stamps still owed to the last one ignored from now on.  Called before the
 * receive that follows a session's end (reflect_recv), so that whatever
 * reads the ended session's numbers has done so; a session that starts
 * without it (a ping that ends an idle session starts the next) clears first.
 */
static void reflect_clear(void)
{
	session_clear();
	refl.key0 = run.ts.next_key;
	refl.clean = true;
}

/*
 * A session's first ping: only what its pong needs happens before the
 * pong.  The memory is ready (reflect_clear), the clock base is taken after
 * the pong (reflect_after_pong), the source address is asked off the loop
 * (srcw_ask).
 */
static void reflect_start(uint32_t id)
{
	int i;

	if (!refl.clean) {
		session_clear();
	}
	refl.clean = false;
	session_begin(id);
	memset(refl.seen, 0, sizeof(refl.seen));
	refl.any = false;
	refl.distinct = 0;
	refl.txpend = 0;
	refl.active = true;
	refl.key0 = run.ts.next_key;
	refl.fin_rounds = 0;
	refl.fin_waited = false;
	refl.ahead = 0;
	refl.hint_ms = 0;
	refl.below = UINT64_MAX;
	refl.measuring = false;
	refl.fresh = true;
	result.ss_got = SS_NOT_YET;
	result.ss_why[0] = '\0';
	for (i = 0; i < PE_NERR; i++) {
		sess.c.invalid_why[i] = refl.carry_invalid[i];
		sess.c.invalid += refl.carry_invalid[i];
		refl.carry_invalid[i] = 0;
	}
	memcpy(sess.c.rejected, refl.carry_rej, sizeof(refl.carry_rej));
	memset(refl.carry_rej, 0, sizeof(refl.carry_rej));
	__atomic_store_n(&run.live.session, id, __ATOMIC_RELAXED);
}

static uint16_t *ended_bucket(uint32_t id)
{
	return &refl.ended_head[(id * 2654435761u) >> 19 & (ENDED_HASH - 1)];
}

/* The remembered end of session id, or NULL. */
static struct ended_session *reflect_ended(uint32_t id)
{
	uint16_t i = *ended_bucket(id);

	while (i) {
		struct ended_session *e = &refl.ended[i - 1];

		if (e->id == id && e->how != ENDED_NONE) {
			return e;
		}
		i = e->next;
	}
	return NULL;
}

/* Forget the end in ring slot i (index + 1): out of its chain, empty. */
static void ended_forget(uint16_t i)
{
	struct ended_session *e = &refl.ended[i - 1];
	uint16_t *p = ended_bucket(e->id);

	while (*p && *p != i) {
		p = &refl.ended[*p - 1].next;
	}
	if (*p) {
		*p = e->next;
	}
	e->how = ENDED_NONE;
	e->next = 0;
}

/*
 * The session ending now: its id, the highest seq it saw, and whether any
 * later ping of it is a replay (a keyed FIN ends it for good) or only those
 * up to that seq.  It goes in as the newest; the oldest of ENDED_CAP is
 * forgotten to make room, never one that hashed alike; an id that ends a
 * second time keeps only its latest end.
 */
static void reflect_remember(int reason)
{
	struct ended_session *e = reflect_ended(sess.id);
	uint16_t i, *b;

	if (e) {
		ended_forget((uint16_t)(e - refl.ended + 1));
	}
	i = (uint16_t)(refl.ended_n++ % ENDED_CAP + 1);
	if (refl.ended[i - 1].how != ENDED_NONE) {
		ended_forget(i);
	}
	e = &refl.ended[i - 1];
	e->id = sess.id;
	e->how = reason == STOP_FIN && run.key.on ? ENDED_ALL : ENDED_UPTO;
	e->top = refl.any ? refl.top : 0;
	b = ended_bucket(e->id);
	e->next = *b;
	*b = i;
}

/*
 * A ping of a session that ended is a replay (README, Rules).  A client
 * that really was silent that long (or whose session a forged FIN ended)
 * goes on above its highest seq, in a new session.
 */
static bool reflect_replayed(const struct proto_msg *m)
{
	const struct ended_session *e = reflect_ended(m->session);

	return e && (e->how == ENDED_ALL || m->seq <= e->top);
}

/*
 * TX stamps still owed get at most this long at the end of a session (on a
 * FIN, before its FIN_ACK; else before the report).  A NIC that never
 * stamps, or skips stamps (igb, ixgbe and i40e stamp one TX packet at a
 * time), must not hold the session open: it ends whatever is still owed.
 */
#define END_TX_WAIT_NS	(50 * 1000000ULL)

static void reflect_await_tx(uint64_t ns)
{
	uint64_t t0 = mono_ns();

	while (refl.txpend && mono_ns() - t0 < ns) {
		if (wait_fd(5 * 1000000ULL, 0) & POLLERR) {
			reflect_drain();
		}
		if (refl.ss_on && refl.sh_owed) {
			reflect_sh_read();	/* the first pongs' stamps, on the shared socket */
		}
	}
}

/* The reflector's re-stamping (hw_judge): a T3 that comes from the kernel only is echoed. */
static void reflect_restamp(struct txn *x)
{
	hw_txn_kernel(x, T2W, T2K);
	if (!(x->st & TF_TXPEND)) {
		hw_txn_kernel(x, T3W, T3K);
	} else if (hw_txn_kernel(x, T3W, T3K)) {
		/* its kernel stamp came, the NIC's never will: echoed as T3 */
		x->st &= (uint16_t)~TF_TXPEND;
		refl.txpend--;
		echo_push(x->seq, x->t[T3W], x->txkey);
	}
}

static void reflect_hw_check(bool final)
{
	hw_judge(final, reflect_restamp);
	if (run.hww.failed) {
		refl.exit_code = EXIT_RUNTIME;
	}
}

/* Session over (FIN, idle, signal, -d): report it, log it, get ready for the next. */
static void reflect_end(int reason)
{
	int exit_code = EXIT_OK, r;
	FILE *out = report_stream();

	if (reason != STOP_FIN) {
		reflect_await_tx(END_TX_WAIT_NS);	/* on a FIN, reflect_fin waited */
	}
	memory_lock_current();
	reflect_hw_check(true);
	if (run.hww.failed || no_sample_say()) {
		exit_code = EXIT_RUNTIME;	/* hw_watch_none or no_sample_say said why */
	}
	if (sess.stop_reason != STOP_BREACH && !run.hww.failed) {
		sess.stop_reason = reason;
	}
	sess.end_mono = reason == STOP_IDLE ? refl.last_rx : mono_ns();
	reflect_flush();
	if (refl.any) {
		uint64_t span = refl.top + 1 - refl.first;

		/* without a key a replay below the window may count twice: never below 0 */
		sess.c.lost = span > refl.distinct ? span - refl.distinct : 0;
	}
	if (sess.c.breaches && !run.hww.failed) {
		exit_code = EXIT_BREACH;
	}
	if (refl.log_fd >= 0 && (r = log_write(refl.log_fd, cfg->log_format)) < 0) {
		exit_code = EXIT_RUNTIME;	/* log_write said which file and why */
	}
	why_run();
	exit_code = run.to->report(out, refl.json, false, exit_code, sess.log.n);
	if (exit_code > refl.exit_code) {
		refl.exit_code = exit_code;
	}
	reflect_remember(reason);
	refl.last_id = sess.id;
	refl.last_received = sess.c.received;
	refl.last_whole = refl.any && !refl.first;
	refl.active = false;
	refl.sessions++;
	__atomic_store_n(&run.live.running, 0, __ATOMIC_RELAXED);
	reflect_ss_end();
	cpu_latency_session_end(mono_ns());
}

/* The run is over after a session: --once, or a breach without -C (-C carries on). */
static bool reflect_done(void)
{
	return !refl.active && refl.sessions &&
	       (cfg->once || (refl.exit_code == EXIT_BREACH && !cfg->cont));
}

/*
 * The reflector's clock, read once per datagram (before it is handled) and
 * once per wake-up: whatever arrives, and however often, the stall is
 * credited and the session's idleness judged on time.  False: the run is
 * over (reflect_done).
 */
static bool reflect_tick(uint64_t now)
{
	refl.now = now;
	reflect_stall_credit(now);
	if (refl.active && now - refl.last_rx > refl.idle_ns) {
		reflect_end(STOP_IDLE);
	}
	return !reflect_done();
}

/*
 * What a FIN_ACK tells the client about this end's clocks: the last PHC
 * reading and the boot id of this kernel (one kernel, one CLOCK_REALTIME:
 * see oneway_trusted).
 */
static void reflect_phc_block(struct proto_msg *a)
{
	uint64_t meta = __atomic_load_n(&run.phc_pub.meta, __ATOMIC_ACQUIRE);

	a->boot_id = run.host_boot_id;	/* with or without a PHC */
	if (!(meta >> 8 & 0xff)) {
		return;		/* no PHC reading */
	}
	a->phc_method = (uint8_t)(meta >> 8);
	a->phc_disciplined = meta & 1;
	a->phc_window = (uint32_t)(meta >> 16);
	a->phc_off = __atomic_load_n(&run.phc_pub.off, __ATOMIC_RELAXED);
}

static void reflect_fin(const struct proto_msg *m, uint8_t *buf, size_t len,
			const struct sockaddr *from, socklen_t fromlen)
{
	struct proto_msg a = { .type = PT_FIN_ACK, .session = m->session,
			       .flags = cfg->no_tx_ts ? PF_NO_TX : 0 };
	bool current = refl.active && m->session == sess.id;

	if (!current) {
		/*
		 * a repeated FIN (its first FIN_ACK lost or late): the ended
		 * session's count again, so that the client can still split its
		 * loss by direction
		 */
		a.seq = refl.last_received;
		a.flags |= refl.last_whole ? 0 : PF_PARTIAL;
	}

	reflect_drain();
	if (current) {
		if (!run.echo.n && refl.txpend && !refl.fin_waited) {
			refl.fin_waited = true;	/* once, then the session ends */
			reflect_await_tx(END_TX_WAIT_NS);
		}
		refl.fin_rounds++;
		a.seq = sess.c.received;
		if (!refl.any || refl.first) {
			a.flags |= PF_PARTIAL;	/* restarted mid-session, or ping 0 was lost */
		}
		/*
		 * more only for stamps that came and wait to be echoed, and not
		 * beyond the client's last round (emit_fin_exchange: 64, or a
		 * FIN flagged PF_LAST); a FIN too short for the echo (--size
		 * below 64) carries none
		 */
		if ((proto_room(len) & PF_T3W) && echo_pop(&a) && run.echo.n &&
		    refl.fin_rounds < FIN_ROUNDS && !(m->flags & PF_LAST)) {
			a.flags |= PF_MORE;
		}
	}
	proto_encode_len(buf, len, &a);
	/* the boot id for every client (one-way evidence), the PHC's with NIC stamps */
	reflect_phc_block(&a);
	if (proto_kx_put(buf, len, &a) < 0 && current && run.ts.hw) {
		sess.c.kx_unfit++;
	}
	if (current) {
		echo_hist_put(buf, len, &a);
	}
	if (reflect_send(buf, len, from, fromlen) >= 0) {
		if (!refl.sent_shared) {
			reflect_park_key();	/* the FIN_ACK's TX stamp is ignored */
		}
	} else {
		send_failed(errno);	/* counted, and the TX keys resynchronised */
	}
	if (current && !(a.flags & PF_MORE)) {
		reflect_end(STOP_FIN);
	}
}

/* A datagram that is no rant packet: counted with the session, or carried to the next. */
static void reflect_junk(int err)
{
	if (refl.active) {
		count_invalid(err);
	} else {
		refl.carry_invalid[err]++;
	}
}

/* A FIN: answered for the session (or the one that just ended) from its peer only. */
static void reflect_fin_in(const struct proto_msg *m, uint8_t *buf, size_t len,
			   const struct sockaddr *from, socklen_t fromlen)
{
	cls_reflect(0);	/* the FIN_ACK in the reflector's own class, whatever the FIN says */
	if ((refl.active && m->session == sess.id) ||
	    (!refl.active && m->session == refl.last_id && refl.sessions)) {
		if (!reflect_peer_ok(from)) {
			reflect_reject(GR_PEER);
		} else if (refl.active && refl.any && m->seq <= refl.last_seq) {
			/* the client's FIN carries its next seq, above its last ping */
			reflect_reject(GR_FIN_SEQ);
		} else {
			reflect_fin(m, buf, len, from, fromlen);
		}
	} else if (refl.active) {
		sess.c.foreign++;
		count_invalid(PE_TYPE);
	} else {
		reflect_reject(GR_FIN_UNKNOWN);
	}
}

/*
 * The session switch: a ping of another session while one runs is told
 * BUSY, unless this one went idle (it ends); the first ping of a session
 * starts it and binds it to its address and port.  False: not admitted.
 */
static bool reflect_switch(const struct proto_msg *m, uint8_t *buf, size_t len,
			   const struct sockaddr *from, socklen_t fromlen, uint64_t now)
{
	if ((!refl.active || m->session != sess.id) && reflect_replayed(m)) {
		reflect_reject(GR_ENDED);	/* opens nothing, told nothing, blocks no one */
		return false;
	}
	if (refl.active && m->session != sess.id) {
		if (now - refl.last_rx <= refl.idle_ns) {
			/* a second client: told BUSY while this one runs */
			sess.c.foreign++;
			count_invalid(PE_TYPE);
			reflect_busy(m, buf, len, from, fromlen, now);
			return false;
		}
		reflect_end(STOP_IDLE);
		if (cfg->once || sess.stop_reason == STOP_BREACH) {
			run.stop_signal = 1;
			return false;
		}
	}
	if (refl.active && !reflect_peer_ok(from)) {
		reflect_reject(GR_PEER);	/* the session's id from another address or port */
		return false;
	}
	if (!refl.active) {
		reflect_start(m->session);
		memset(&refl.peer, 0, sizeof(refl.peer));
		refl.peerlen = fromlen < sizeof(refl.peer) ? fromlen : sizeof(refl.peer);
		memcpy(&refl.peer, from, refl.peerlen);
		refl.ss_due = true;	/* after its first pong (reflect_packet) */
	}
	return true;
}

/*
 * Without a key, a seq more than SEQ_AHEAD_MAX beyond the highest is taken
 * only when the session has been silent for longer than its idle hint (its
 * client's pings were not arriving) and the next ping confirms it: a third
 * party cannot silence a client that is pinging.  With a key the tag says
 * the client sent it.  True: refused.
 */
static bool reflect_far_ahead(uint64_t seq, uint64_t now)
{
	if (run.key.on || !refl.any || seq <= refl.top || seq - refl.top <= SEQ_AHEAD_MAX) {
		return false;
	}
	if (now - refl.last_rx > refl.hint_ms * 1000000ULL && refl.ahead && seq > refl.ahead &&
	    seq - refl.ahead <= SEQ_AHEAD_MAX) {
		return false;
	}
	refl.ahead = seq;
	return true;
}

/*
 * A ping of the session: a seq far ahead may need a second ping to confirm
 * it, the idle hint is clamped, a duplicate is counted.  False: not answered.
 */
static bool reflect_admit(const struct proto_msg *m, uint64_t now)
{
	/* the hint, clamped to what a client can send; 64-bit, so it cannot wrap */
	uint64_t idle = m->idle_ms < IDLE_MAX_MS ? m->idle_ms : IDLE_MAX_MS;

	if (reflect_far_ahead(m->seq, now)) {
		reflect_reject(GR_SEQ_AHEAD);
		return false;
	}
	refl.ahead = 0;
	if (reflect_seen(m->seq)) {
		/* a repeat (with a key: a replay) is no sign of the client, keeps nothing alive */
		sess.c.duplicate++;
		return false;
	}
	refl.last_rx = now;
	/* the largest hint of the session: a forged ping cannot shorten it */
	if (idle > refl.hint_ms) {
		refl.hint_ms = idle;
	}
	refl.idle_ns = (refl.hint_ms > 1500 ? 2 * refl.hint_ms : 3000) * 1000000ULL;
	refl.last_seq = m->seq;
	return true;
}

/* Count an admitted ping; true if it is warm-up by this reflector's own -w. */
static bool reflect_count(const struct proto_msg *m)
{
	bool local;

	refl.distinct++;
	sess.c.received++;
	/* the reflector's own -w: its first PKTS pings, whatever the client flagged */
	local = !(m->flags & PF_WARMUP) && sess.c.received <= cfg->warmup;
	cls_on_ping(m->flags, (m->flags & PF_WARMUP) || local);
	if (m->flags & PF_WARMUP) {
		sess.c.warmup++;
	} else if (local) {
		sess.c.warmup++;
		sess.c.warmup_local++;
		return true;
	} else if (!refl.measuring) {
		/* the session's first measured ping: RANT_TEST_START after its pong */
		refl.measuring = true;
		refl.mark_due = run.tr.marker_fd >= 0;
	}
	return false;
}

#define PHC_OFF_FIRST	64

/* The pong, written over the ping in buf: the same length, never larger. */
static void reflect_pong(const struct proto_msg *m, struct proto_msg *p, uint8_t *buf, size_t len,
			 uint64_t wire, uint64_t t2sw)
{
	uint16_t room = proto_room(len);

	p->session = m->session;
	p->seq = m->seq;
	p->flags = (uint16_t)((m->flags & PF_WARMUP) | (run.ts.hw ? PF_SRV_HW : 0) |
			      (sess.stop_reason == STOP_BREACH ? PF_BREACH : 0) |
			      (cfg->no_tx_ts ? PF_NO_TX : 0));
	if (wire) {
		p->flags |= PF_T2W & room;
		p->t2w = wire;
	}
	if (cfg->sw_stamps) {
		p->flags |= (PF_T2SW | PF_T3SW) & room;
		p->t2sw = t2sw;
	}
	if (room & PF_T3W) {
		echo_pop(p);
	}
	cls_reflect(m->flags);
	if (run.ts.hw && run.phc.method != PHC_NONE && run.ts.wire_off &&
	    (sess.c.received <= PHC_OFF_FIRST || !(sess.c.received % PHC_OFF_FIRST))) {
		/*
		 * and the PHC offset this side takes out of its segments, for the
		 * client to take out of them too: the session's first pongs (one
		 * that arrives is enough) and every PHC_OFF_FIRST-th after; the
		 * others leave that room to the T3 history
		 */
		p->flags |= PF_PHC_OFF;
		p->phc_off = run.ts.wire_off;
		p->phc_method = (uint8_t)run.phc.method;
		p->boot_id = run.host_boot_id;
	}
	proto_encode_len(buf, len, p);
	if (run.ts.hw) {
		/* NIC stamps: the kernel's of the same packets go where the ping left room */
		p->t2k = run.ts_rx_kernel;
		if (proto_kx_put(buf, len, p) < 0) {
			sess.c.kx_unfit++;
		}
	}
	echo_hist_put(buf, len, p);
	if (cfg->sw_stamps) {
		p->t3sw = real_ns();
		proto_put_t3sw(buf, len, p->t3sw);
	} else if (cfg->no_tx_ts) {
		p->t3sw = real_ns();	/* -N: the response ends here; not echoed without -s */
	}
}

/* The window's slot of the pong just sent (keyed by its TX key), its stamps so far. */
static struct txn *reflect_claim(const struct proto_msg *m, const struct proto_msg *p,
				 uint64_t wire, uint64_t lo, uint64_t now, bool local_warmup)
{
	struct txn *x = &run.win.slot[run.ts.next_key & run.win.mask];

	if (x->st & TF_USED) {
		if (x->st & TF_TXPEND) {
			refl.txpend--;
		}
		txn_retire(x);
	}
	memset(x, 0, sizeof(*x));
	x->seq = m->seq;
	x->txkey = run.ts.next_key++;
	x->t[T2W] = wire;
	x->t[T2SW] = p->t2sw;
	x->t[T2K] = run.ts_rx_kernel;
	x->t[T3SW] = p->t3sw;
	x->mono_lo = lo;
	x->mono = now;
	pmc_delta(x->pmc, run.pmc_rx, run.pmc_tx);
	x->st = TF_USED | TF_SENT | TF_RECEIVED | TF_TXPEND |
		((m->flags & PF_WARMUP) || local_warmup ? TF_WARMUP : 0);
	return x;
}

/*
 * Right after a pong, outside every measured window (T2_SW..T3_SW here, the
 * client's T1_SW..T4_SW is over for this ping): what the session needed but
 * the pong did not.  The clock base of the first one (clk_check reads it
 * only when the transaction is accounted, after this), RANT_TEST_START
 * after the first measured one, the source watch's question (a session on
 * the shared socket); the session's own socket at the end of reflect_packet.
 */
static void reflect_after_pong(const struct sockaddr *to, socklen_t tolen, uint64_t now)
{
	if (refl.fresh) {
		refl.fresh = false;
		clk_start();
		cpu_latency_session();
	}
	if (refl.mark_due) {
		refl.mark_due = false;
		trace_mark("RANT_TEST_START\n", 16);
	}
	if (!refl.ss_due) {
		srcw_ask(to, tolen, now);	/* not for a session about to get its own socket */
	}
}

/*
 * One datagram on the reflector: decoded and authenticated, a FIN answered,
 * a ping admitted to its session (reflect_switch, reflect_admit), counted,
 * answered from the address it was sent to, and its transaction claimed.
 */
static void reflect_packet(uint8_t *buf, size_t len, uint64_t wire, uint64_t t2sw, bool trunc,
			   const struct sockaddr *from, socklen_t fromlen)
{
	struct proto_msg m, p = { .type = PT_PONG };
	struct txn *x;
	uint64_t now, lo;
	bool local_warmup;
	/* PROTO_MAX_SIZE + 1 bytes fill the receive buffer without MSG_TRUNC: too long too */
	int err = trunc || len > PROTO_MAX_SIZE ? PE_LONG : proto_decode(buf, len, &m);

	if (err) {
		reflect_junk(err);
		return;
	}
	if (!sa_port(from)) {
		reflect_reject(GR_PORT0);	/* no answer can reach port 0: never a session */
		return;
	}
	if (!tag_ok(buf, len)) {
		reflect_reject(GR_UNAUTH);
		return;
	}
	if (m.type == PT_FIN) {
		reflect_fin_in(&m, buf, len, from, fromlen);
		return;
	}
	if (m.type != PT_PING) {
		reflect_junk(PE_TYPE);
		return;
	}
	now = refl.now;	/* read as it arrived, or with --spin before (reflect_recv) */
	if (!reflect_switch(&m, buf, len, from, fromlen, now) || !reflect_admit(&m, now)) {
		return;
	}
	local_warmup = reflect_count(&m);
	reflect_pong(&m, &p, buf, len, wire, t2sw);
	if (reflect_send(buf, len, from, fromlen) < 0) {
		send_failed(errno);
		return;
	}
	pmc_read(run.pmc_tx);
	lo = now;
	if (cfg->spin) {
		/*
		 * --spin: the clock is read here, after the pong, not as the ping
		 * came (a vDSO clock_gettime, about 25 ns here, out of
		 * T2_SW..T3_SW): the clock-step check's bounds are then the read
		 * before the ping and this one
		 */
		now = refl.now = mono_ns();
		refl.read_after = true;
	}
	reflect_after_pong(from, fromlen, now);
	sess.c.sent++;
	cls_on_pong(m.flags);
	x = reflect_claim(&m, &p, wire, lo, now, local_warmup);
	if (!(proto_room(len) & PF_T3W)) {
		x->st |= TF_NO_ECHO;	/* a pong too short for the echo: its client wants none */
	}
	__atomic_store_n(&run.live.sent, sess.c.sent, __ATOMIC_RELAXED);
	if (cfg->no_tx_ts) {
		x->st &= (uint16_t)~TF_TXPEND;	/* -N: no TX stamp will come */
		txn_account(x);
	} else {
		refl.txpend++;
		reflect_drain();
	}
	if (refl.ss_due) {
		refl.ss_due = false;
		reflect_ss_open(from, m.flags);	/* the session's own socket, outside its windows */
	}
}

/* The reflector's own control messages: the address pinged, the TOS. */
static void reflect_ctl(const struct cmsghdr *cm)
{
	reflect_pktinfo(cm);
	cls_rx_tos(cm);
}

/*
 * While ss serves: one non-blocking read of the shared socket, swapped in
 * (1: a datagram in rx, 0: none, <0: -errno).  When it has nothing, its
 * error queue is read if a stamp is owed there: the session's first pongs'
 * TX stamps, and its BUSYs' (dropped).
 */
static int reflect_recv_shared(struct rx *rx)
{
	int r;

	reflect_shared_swap();
	r = sock_recv(refl.rx, refl.rxcap, MSG_DONTWAIT, rx, reflect_ctl, true);
	if (r == 0 && (refl.sh_owed || refl.sh_busy)) {
		reflect_shared_stamps();
	}
	reflect_shared_swap();
	refl.shared_due = r != 0;
	if (r == 0) {
		refl.shared_last = refl.now;
	}
	return r;
}

/*
 * What came to the session's socket between its bind and its connect (or
 * its failed connect), with each sender: one non-blocking read (1: a
 * datagram in rx, 0: none left).  Sent to the address pinged; the session's
 * own if its peer sent it and the socket serves, else answered as the
 * shared socket answers it.  Once none is left, a socket that does not
 * serve is closed.
 */
static int reflect_recv_pre(struct rx *rx)
{
	int keep = run.sock_fd, r;

	run.sock_fd = refl.pre_fd;
	r = sock_recv(refl.rx, refl.rxcap, MSG_DONTWAIT, rx, reflect_ctl, true);
	run.sock_fd = keep;
	if (r <= 0) {
		/* none left, or an error (ICMP's): what queues behind it is read as ss reads */
		if (refl.pre_close) {
			close(refl.pre_fd);
		}
		refl.pre_on = false;
		return 0;
	}
	if (rx->from.ss_family == AF_INET && refl.peer.ss_family == AF_INET6) {
		/* an IPv4 session's socket, a dual-stack shared one: named as that one names */
		struct sockaddr_in v4;
		struct sockaddr_in6 *m6 = (struct sockaddr_in6 *)&rx->from;

		memcpy(&v4, &rx->from, sizeof(v4));
		memset(m6, 0, sizeof(*m6));
		m6->sin6_family = AF_INET6;
		m6->sin6_port = v4.sin_port;
		m6->sin6_addr.s6_addr[10] = m6->sin6_addr.s6_addr[11] = 0xff;
		memcpy(&m6->sin6_addr.s6_addr[12], &v4.sin_addr, 4);
		rx->fromlen = sizeof(*m6);
	}
	refl.pi_level = refl.pre_pi_level;
	refl.pi = refl.pre_pi;
	refl.on_ss = refl.ss_on && sa_same(&refl.peer, (struct sockaddr *)&rx->from);
	return 1;
}

/* Where the datagram just read on the shared socket stands to the session's socket. */
static void reflect_shared_whose(const struct sockaddr *from)
{
	bool peer = sa_same(&refl.peer, from), addr = refl.pi_level == refl.ss_pi_level;

	if (addr && refl.pi_level == IPPROTO_IPV6) {
		addr = !memcmp(&refl.pi.v6.ipi6_addr, &refl.ss_pi.v6.ipi6_addr,
			       sizeof(refl.pi.v6.ipi6_addr));
	} else if (addr) {
		addr = refl.pi.v4.ipi_addr.s_addr == refl.ss_pi.v4.ipi_addr.s_addr;
	}
	/* a ping of the session queued before ss was connected is its own */
	refl.on_ss = peer && addr;
	/* the session's peer to another address of this host: not the session's */
	refl.off_addr = peer && !addr;
}

/*
 * One receive on the reflector; same return convention as emit_recv().
 * While a session has its own socket (reflect_ss_open), that is where the
 * loop waits; the shared socket is read first when due: right after ss was
 * made, again while it has datagrams, else every SHARED_EVERY_NS.
 */
static int reflect_recv(int flags)
{
	struct rx rx;
	int r = 0;

	/* a session ended: the next one's memory, before any ping */
	if (!refl.active && !refl.clean) {
		reflect_clear();
	}
	refl.pi_level = 0;	/* none until a datagram's control data says */
	refl.off_addr = false;
	cls_rx_begin();
	if (refl.ss_on && (refl.shared_due || refl.now - refl.shared_last >= SHARED_EVERY_NS)) {
		r = reflect_recv_shared(&rx);
		if (r > 0 && refl.ss_on) {
			reflect_shared_whose((struct sockaddr *)&rx.from);
		}
	}
	if (r == 0 && refl.pre_on) {
		r = reflect_recv_pre(&rx);
	}
	if (r == 0 && refl.ss_on) {
		r = sock_recv(refl.rx, refl.rxcap, flags, &rx, reflect_ctl, false);
		if (r > 0) {
			/* connected: from its peer, sent to its address */
			memcpy(&rx.from, &refl.peer, refl.peerlen);
			rx.fromlen = refl.peerlen;
			refl.pi_level = refl.ss_pi_level;
			refl.pi = refl.ss_pi;
			refl.on_ss = true;
		}
	} else if (r == 0) {
		r = sock_recv(refl.rx, refl.rxcap, flags, &rx, reflect_ctl, true);
	}

	if (r == -ECONNREFUSED) {
		return 0;
	}
	if (r <= 0) {
		return r;
	}
	/*
	 * The clock as the datagram came: read now; with --spin the last read
	 * (at most 64 empty polls or one datagram old), then read after it,
	 * outside the measured window (reflect_packet after a pong, here
	 * otherwise): -d and the idle limit hold under any traffic either way
	 */
	refl.read_after = false;
	if (reflect_tick(cfg->spin ? refl.now : mono_ns()) && rx.ours) {
		reflect_packet(refl.rx + run.proto_pre, rx.len, ts_wire(&rx.c), rx.app, rx.trunc,
			       (struct sockaddr *)&rx.from, rx.fromlen);
		reflect_hw_check(false);
	}
	if (cfg->spin && !refl.read_after) {
		refl.now = mono_ns();
	}
	return r;
}

/*
 * -d is over for the reflector: at its end when no session runs; a session
 * that began before it is finished first (until its FIN, or its client goes
 * quiet: reflect_tick), for at most -d again.  The documented full test
 * gives both ends the same -d with the reflector started first: its -d ends
 * first, and cutting the session there lost the client's last pong and its
 * FIN_ACK.  A client whose session began before the reflector's end, with
 * the same -d, ends before that bound; a session begun after it is not
 * served on.
 */
static bool reflect_over(uint64_t now)
{
	uint64_t d = refl.end ? (uint64_t)(cfg->duration_s * 1e9) : 0;

	if (!refl.end || now < refl.end) {
		return false;
	}
	return !refl.active || sess.start_mono >= refl.end || now - refl.end >= d;
}

static int reflect_run(void)
{
	uint64_t start = mono_ns(), last_check = 0;
	unsigned spins = 0;
	int r = 0;

	refl.end = cfg->duration_s > 0 ? start + (uint64_t)(cfg->duration_s * 1e9) : 0;
	refl.now = start;	/* --spin: the first ping's clock, until the loop reads it */
	/* wake up now and then to notice idle sessions, -d and signals */
	set_rcvtimeo(200 * 1000000ULL);
	/* the first session's own socket, IPv4 (the most likely; reflect_ss_prepare) */
	reflect_ss_prepare(AF_INET);
	/*
	 * Per ping: reflect_recv (recvmsg, ts_parse_cb: the stamps, reflect_ctl) ->
	 * reflect_packet (proto_decode, tag_ok, the session's admission, the
	 * window's slot) -> reflect_send (tag_put, ts_send: sendmsg from the
	 * address pinged); its TX stamp later: reflect_drain -> ts_drain ->
	 * reflect_on_tx (txn_account, echo_push: echoed in a later pong).
	 */
	while (!run.stop_signal && r >= 0) {
		uint64_t now;

		r = cfg->spin ? reflect_recv(MSG_DONTWAIT) : reflect_recv(0);
		if (run.hww.failed || reflect_done()) {
			break;
		}
		if (r > 0) {
			/* reflect_recv read the clock for it: -d holds under any traffic */
			if (reflect_over(refl.now)) {
				break;
			}
			continue;
		}
		/* spinning: look at the clock every 64 empty polls, act every 10 ms */
		if (cfg->spin && (++spins & 63)) {
			continue;
		}
		now = mono_ns();
		if (cfg->spin) {
			refl.now = now;	/* the clock a ping that comes next is taken at */
			if (now - last_check < 10 * 1000000ULL) {
				continue;
			}
		}
		last_check = now;
		reflect_drain();
		if (!reflect_tick(now) || reflect_over(now)) {
			break;
		}
		cpu_latency_idle(now);
	}
	if (r < 0) {
		warnx_("receive failed: %s", strerror(-r));
	}
	if (refl.active || (!refl.sessions && r >= 0)) {
		/* no client came at all: still a report (0 samples), as the earlier rant printed */
		reflect_end(run.hww.failed ? STOP_ERROR : run.stop_signal ? STOP_SIGNAL :
			    refl.end ? STOP_DURATION : STOP_ERROR);
	}
	return r < 0 ? -1 : 0;
}

/* --------------------------------------------------------------- report */

static double session_duration(void)
{
	return sess.end_mono > sess.start_mono ?
		       (double)(sess.end_mono - sess.start_mono) / 1e9 :
		       0;
}

/*
 * Clock sanity: an app stamp taken after its wire stamp on TX (or before it
 * on RX) means the two clocks differ; a drifting app-vs-wire offset means
 * the NIC clock is not disciplined.  Each warning names the likely cause.
 */
/* Steps of CLOCK_REALTIME and negative samples: never a silent number. */
static int clock_step_warnings(char w[][256], int max)
{
	int i, n = 0;

	if (run.clk.steps && n < max) {
		snprintf(
			w[n++], 256,
			"CLOCK_REALTIME was stepped %" PRIu64
			" time%s during the run (last by %+.6f s; NTP or a manual change): "
			"%" PRIu64
			" transaction%s spanning a step %s left out of the statistics and marked 'stepped' in the log",
			run.clk.steps, run.clk.steps == 1 ? "" : "s", (double)run.clk.last / 1e9,
			run.clk.stepped, run.clk.stepped == 1 ? "" : "s",
			run.clk.stepped == 1 ? "is" : "are");
	} else if (run.clk.stepped && n < max) {
		snprintf(w[n++], 256, "%" PRIu64 " transaction%s had stamps that went backwards (a clock step): left out of the statistics and marked 'stepped' in the log",
			 run.clk.stepped, run.clk.stepped == 1 ? "" : "s");
	}
	for (i = 0; i < run.side.nmetrics && n < max; i++) {
		const struct hist *h = &sess.h[run.side.metrics[i]];

		/* --txtime: an etf lets a packet go up to its delta before its launch time */
		if (h->n && h->min < 0 && run.side.metrics[i] != M_LAUNCH_ERR) {
			snprintf(w[n++], 256, "%s has negative samples (min %" PRId64 " ns): the clocks of its two stamps disagree",
				 metric_def[run.side.metrics[i]].key, h->min);
		}
	}
	return n;
}

static int clock_warnings(char w[][256], int max)
{
	static const char *const what_emit[2] = { "T1-T1_SW (client send)", "T4_SW-T4 (client receive)" };
	static const char *const what_refl[2] = { "T2_SW-T2 (server receive)", "T3-T3_SW (server send)" };
	const char *cause = run.ts.hw ? (cfg->iface ? "the NIC clock (PHC) is not synchronised to CLOCK_REALTIME: is phc2sys running for this interface?"
					       : "the NIC clock is not synchronised to CLOCK_REALTIME: is phc2sys running?")
				  : "CLOCK_REALTIME was stepped during the run (NTP or a manual change)";
	static char measured[120];
	char tmp[300];
	int i, n = 0;

	if (run.ts.hw && run.phc.n) {
		/* the PHC's offset was measured: say what it is instead of guessing */
		int64_t moved;
		uint64_t span;

		snprintf(measured, sizeof(measured), "PHC /dev/ptp%d measured %+" PRId64 " ns from CLOCK_REALTIME%s",
			 run.phc.index, run.phc.last_off,
			 phc_stopped(&moved, &span)    ? ", stopped (it does not advance)" :
			 phc_warning(tmp, sizeof(tmp)) ? ", not disciplined: run phc2sys" :
							 "");
		cause = measured;
	}
	for (i = 0; i < 2 && n < max; i++) {
		const struct fit *f = &sess.app_wire[i];
		const char *what = run.side.emit ? what_emit[i] : what_refl[i];
		double ppm, span;

		if (!f->seen) {
			continue;
		}
		if (f->ymin < 0) {
			snprintf(w[n++], 256, "app-vs-wire offset %s went negative (min %" PRId64 " ns): %s",
				 what, f->ymin, cause);
		} else if (run.ts.hw && fit_ppm(f, &ppm, &span) && span >= 3.0 && fabs(ppm) > 1.0) {
			/* with software stamps both are CLOCK_REALTIME: they cannot drift apart */
			snprintf(w[n++], 256, "app-vs-wire offset %s drifts %+.2f ppm: %s", what, ppm, cause);
		}
	}
	return n + clock_step_warnings(w + n, max - n);
}

static const char *tsrc(bool hw)
{
	return hw ? "hardware (NIC)" : "software (kernel)";
}

static void print_pct_table(FILE *f)
{
	int i, k, w = 9;

	/* columns as wide as the widest value: past 1 s (10 digits) they would run together */
	for (i = 0; i < run.side.nmetrics; i++) {
		const struct hist *h = &sess.h[run.side.metrics[i]];

		if (h->n) {
			w = num_width(h->max) > w ? num_width(h->max) : w;
			w = num_width(h->min) > w ? num_width(h->min) : w;
		}
	}
	fprintf(f, "\n--- Percentiles (ns, nearest rank) ---\n%-34s", "metric");
	for (k = 0; k < NPCT; k++) {
		fprintf(f, " %*s", w, pct_key[k]);
	}
	fputc('\n', f);
	for (i = 0; i < run.side.nmetrics; i++) {
		const struct hist *h = &sess.h[run.side.metrics[i]];
		bool approx = false;

		if (!h->n) {
			continue;
		}
		fprintf(f, "%-34s", metric_label(run.side.metrics[i]));
		for (k = 0; k < NPCT; k++) {
			fprintf(f, " %*" PRId64, w, hist_pct(h, pct_value[k], &approx));
		}
		if (approx) {
			fprintf(f, "  (tail +- %" PRIu64 " ns at most, within 0.1 %%: more outliers than the %" PRIu64
				" kept exactly)", hist_tail_err(h), h->out_cap);
		}
		fputc('\n', f);
	}
}

/* Non-empty groups of `merge` adjacent buckets, and the largest group count. */
static uint64_t hist_groups(const struct hist *h, uint64_t merge, uint64_t *maxc)
{
	uint64_t i, j, groups = 0;

	*maxc = 0;
	for (i = 0; i < h->nbuckets; i += merge) {
		uint64_t c = 0;

		for (j = i; j < i + merge && j < h->nbuckets; j++) {
			c += h->bucket[j];
		}
		groups += c != 0;
		*maxc = c > *maxc ? c : *maxc;
	}
	return groups;
}

/* The earlier rant's "Histogram Summary" block and the non-empty buckets as bars. */
static void print_histogram(FILE *f, int m)
{
	const struct hist *h = &sess.h[m];
	uint64_t i, j, maxc = 0, merge = 1, above, below;
	int k;

	fprintf(f, "\n--- Histogram Summary: %s ---\n", metric_label(m));
	fprintf(f, "Samples: %" PRIu64 "\n", h->n);
	if (!h->n) {
		return;
	}
	fprintf(f, "Min: %" PRId64 " ns (seq %" PRIu64 ")\nMax: %" PRId64 " ns (seq %" PRIu64 ")\n",
		h->min, h->min_seq, h->max, h->max_seq);
	fprintf(f, "Avg: %.0f ns\nStddev: %.0f ns\n", hist_avg(h), hist_stddev(h));
	fprintf(f, "Percentiles (bucket %.3f us; a value below %.3f us is the top of its bucket, above it exact while the store of %" PRIu64 " outliers holds them all, else within 0.1 %%, +- shown):\n",
		(double)h->bucket_ns / 1000, (double)h->bound_ns / 1000, h->out_cap);
	for (k = 0; k < NPCT; k++) {
		uint64_t err;
		int64_t v = hist_pct_err(h, pct_value[k], &err);
		bool from_lh = (v < 0 || (uint64_t)v >= h->bound_ns) && err;

		fprintf(f, "  %7s%%: %" PRId64 " ns", pct_key[k], v);
		if (from_lh) {
			fprintf(f, " +- %" PRIu64 " ns", err);
		}
		fputc('\n', f);
	}
	/* at most 60 bars: merge adjacent buckets by powers of two until they fit; -b: as given */
	while (hist_groups(h, merge, &maxc) > 60 && !cfg->bucket_set) {
		merge *= 2;
	}
	fprintf(f, "Buckets (ns)%s:\n", merge > 1 ? " (adjacent buckets merged to fit)" : "");
	for (i = 0; i < h->nbuckets; i += merge) {
		uint64_t c = 0, lo = i * h->bucket_ns, hi = (i + merge) * h->bucket_ns;
		int bar;

		for (j = i; j < i + merge && j < h->nbuckets; j++) {
			c += h->bucket[j];
		}
		if (!c) {
			continue;
		}
		hi = hi > h->bound_ns ? h->bound_ns : hi;
		bar = (int)(c * 50 / (maxc ? maxc : 1));
		fprintf(f, "  %10" PRIu64 " - %-10" PRIu64 " %12" PRIu64 " %.*s\n", lo, hi, c, bar > 0 ? bar : 1,
			"##################################################");
	}
	above = h->out_hi;
	below = h->out_lo;
	if (above || below) {
		fprintf(f, "  outside [0, %" PRIu64 ") ns: %" PRIu64 " above, %" PRIu64
			" below zero (%" PRIu64 " of them kept exactly)\n", h->bound_ns, above, below, h->out_n);
	}
}

/* The segments of a transaction, for breakdowns and --top; returns the dominant. */
/*
 * With NIC and kernel stamps, a stack segment is shown as its two parts:
 * driver/NIC time and kernel/wake-up time; the reflector's too, when its
 * pongs carried its kernel stamps.  True when it did.
 */
static bool segment_split(int m, const uint64_t *t, const char **name, int64_t *val, int *n,
			  int *best)
{
	int a = m == M_CLI_TX ? M_CLI_TX_KERN : m == M_CLI_RX ? M_CLI_RX_NIC :
		m == M_SRV_RX ? M_SRV_RX_NIC : m == M_SRV_TX ? M_SRV_TX_KERN : -1;
	int b = m == M_CLI_TX ? M_CLI_TX_NIC : m == M_CLI_RX ? M_CLI_RX_WAKE :
		m == M_SRV_RX ? M_SRV_RX_WAKE : M_SRV_TX_NIC;
	int64_t va, vb;
	int k;

	if (a < 0 || !metric_value(a, t, &va) || !metric_value(b, t, &vb)) {
		return false;
	}
	for (k = 0; k < 2; k++) {
		name[*n] = k ? metric_label(b) : metric_label(a);
		val[*n] = k ? vb : va;
		if (*best < 0 || val[*n] > val[*best]) {
			*best = *n;
		}
		(*n)++;
	}
	return true;
}

static int segments(const uint64_t *t, const char **name, int64_t *val, int *n)
{
	static const struct {
		const char *name;
		int m;
	} seg[] = {
		{ "client tx stack", M_CLI_TX }, { "network (both ways)", M_NETWORK },
		{ "server rx stack", M_SRV_RX }, { "server processing", M_SRV_PROC },
		{ "server tx stack", M_SRV_TX }, { "client rx stack", M_CLI_RX },
	};
	int i, best = -1;
	bool srv_detail = t[T2SW] && t[T3SW];

	*n = 0;
	for (i = 0; i < 6; i++) {
		int64_t v;

		if (!metric_value(seg[i].m, t, &v)) {
			continue;
		}
		if (segment_split(seg[i].m, t, name, val, n, &best)) {
			continue;
		}
		name[*n] = seg[i].name;
		val[*n] = v;
		if (best < 0 || v > val[best]) {
			best = *n;
		}
		(*n)++;
	}
	if (!srv_detail && metric_value(M_RESPONSE, t, &val[*n])) {
		name[*n] = "server response";
		if (best < 0 || val[*n] > val[best]) {
			best = *n;
		}
		(*n)++;
	} else if (!t[T2W] && !t[T3W] && metric_value(M_RTT, t, &val[*n])) {
		name[*n] = "network + server (no server stamps)";
		if (best < 0 || val[*n] > val[best]) {
			best = *n;
		}
		(*n)++;
	}
	return best;
}

static void print_breakdown(FILE *f, const struct txn *x, int64_t v, const char *title)
{
	const char *name[12];
	int64_t val[12];
	char lab[16], buf[32], note[96];
	int k, n, dom;

	if (cfg->threshold_ns >= 0 && v > cfg->threshold_ns && cfg->mode != MODE_ANALYZE) {
		/* the earlier rant's opening line, which scripts grep for */
		fprintf(f, "%s latency (%" PRId64 " ns) exceeds threshold (%" PRId64 " ns).\n",
			run.side.emit ? "Round-Trip" : "Response", v, cfg->threshold_ns);
	}
	fprintf(f, "%s: seq %" PRIu64 ", %s %" PRId64 " ns", title, x->seq, metric_def[run.side.primary].key, v);
	if (cfg->threshold_ns >= 0) {
		fprintf(f, " > threshold %" PRId64 " ns", cfg->threshold_ns);
	}
	fprintf(f, "%s\n", cls_note(note, sizeof(note), x->seq));
	for (k = 0; k < run.side.nstamps; k++) {
		int s = run.side.stamps[k];

		*fmt_stamp(buf, x->t[s], '-') = 0;
		fprintf(f, "  %-7s %s%s\n", stamp_name(s, lab, sizeof(lab)), buf,
			run.side.emit && (s == T2W || s == T2SW || s == T3SW || s == T3W) ?
				"  (server clock)" :
				"");
	}
	dom = segments(x->t, name, val, &n);
	for (k = 0; k < n; k++) {
		fprintf(f, "    %-22s %10" PRId64 " ns%s\n", name[k], val[k], k == dom ? "    <-- where the spike is" : "");
	}
	pmc_print_txn(f, x);
}

/*
 * --analyze --top: the N worst transactions by the primary metric, kept in a
 * heap as the rows go by (memory for N, whatever the log's length); ties go
 * to the earlier row, as a stable sort of every row would give them.
 */
struct topn {
	unsigned cap, n;
	uint64_t seen;		/* rows that could be listed */
	struct topn_entry {
		struct txn x;
		int64_t v;
		uint64_t row;
	} *e;
};

static int topn_init(struct topn *t, unsigned cap)
{
	memset(t, 0, sizeof(*t));
	t->cap = cap;
	t->e = cap ? calloc(cap, sizeof(*t->e)) : NULL;
	return !cap || t->e ? 0 : -1;
}

/* Does a rank below b (a smaller value, or a later row of the same value)? */
static bool topn_below(const struct topn_entry *a, const struct topn_entry *b)
{
	return a->v < b->v || (a->v == b->v && a->row > b->row);
}

/* The heap's root is its lowest entry: the first to go when a higher one comes. */
static void topn_sift(struct topn *t, unsigned i)
{
	for (;;) {
		unsigned l = 2 * i + 1, r = l + 1, m = i;
		struct topn_entry tmp;

		if (l < t->n && topn_below(&t->e[l], &t->e[m])) {
			m = l;
		}
		if (r < t->n && topn_below(&t->e[r], &t->e[m])) {
			m = r;
		}
		if (m == i) {
			return;
		}
		tmp = t->e[i];
		t->e[i] = t->e[m];
		t->e[m] = tmp;
		i = m;
	}
}

static void topn_add(struct topn *t, const struct txn *x, int64_t v, uint64_t row)
{
	struct topn_entry in = { *x, v, row };
	unsigned i;

	t->seen++;
	if (!t->cap) {
		return;
	}
	if (t->n < t->cap) {
		for (i = t->n++; i > 0 && topn_below(&in, &t->e[(i - 1) / 2]); i = (i - 1) / 2) {
			t->e[i] = t->e[(i - 1) / 2];
		}
		t->e[i] = in;
	} else if (topn_below(&t->e[0], &in)) {
		t->e[0] = in;
		topn_sift(t, 0);
	}
}

static int cmp_topn(const void *a, const void *b)
{
	const struct topn_entry *x = a, *y = b;

	return topn_below(x, y) ? 1 : topn_below(y, x) ? -1 : 0;
}

/* --analyze --top: the worst transactions, each broken down. */
static void print_top(FILE *f, struct topn *t, unsigned top)
{
	unsigned i;

	qsort(t->e, t->n, sizeof(*t->e), cmp_topn);
	fprintf(f, "\n--- The %u worst transactions by %s ---\n", top < t->seen ? top : (unsigned)t->seen,
		metric_def[run.side.primary].key);
	for (i = 0; i < t->n; i++) {
		print_breakdown(f, &t->e[i].x, t->e[i].v, "#");
		why_print_analyzed(f, &t->e[i].x);
	}
}

/*
 * The reflector's FIN_ACK says how many pings it answered: with the whole
 * session seen there, lost = lost on the way out + lost (or late) on the way
 * back.  Unknown (false) when the reflector restarted or never acknowledged.
 */
/*
 * Of the pongs lost on the way back, those this host's own receive buffer
 * dropped (SO_RXQ_OVFL): local, not the network's.
 */
static uint64_t local_drops(uint64_t back)
{
	if (!run.side.emit || cfg->mode == MODE_ANALYZE) {
		return 0;
	}
	return result.rxq_ovfl < back ? result.rxq_ovfl : back;
}

/*
 * The session's counts came in a FIN_ACK: in any round of the exchange
 * (fin_counted; a later round's FIN_ACK that did not come takes nothing
 * back), or from the joined logs (--analyze sets fin_acked, analyze_split).
 */
static bool fin_heard(void)
{
	return result.fin_counted || result.fin_acked;
}

static bool loss_split(uint64_t *out_lost, uint64_t *back_lost)
{
	/* --analyze sets these from the joined logs where they determine them (analyze_split) */
	if (!run.side.emit || !fin_heard() || !result.srv_whole ||
	    result.srv_received > sess.c.sent ||
	    result.srv_received < sess.c.received + sess.c.late) {
		return false;
	}
	*out_lost = sess.c.sent - result.srv_received;
	*back_lost = result.srv_received - sess.c.received - sess.c.late;
	*back_lost -= local_drops(*back_lost);
	return true;
}

/* Rejected datagrams, one count per rule; nothing printed when none. */
static void print_rejected(FILE *f)
{
	bool any = false;
	int i;

	for (i = 0; i < GR_N; i++) {
		if (sess.c.rejected[i]) {
			fprintf(f, "%s %s %" PRIu64 ";", any ? "" : "Rejected:", guard_rej_name[i],
				sess.c.rejected[i]);
			any = true;
		}
	}
	if (any) {
		fputc('\n', f);
	}
}

static void json_rejected(FILE *f)
{
	int i;

	if (cfg->mode == MODE_ANALYZE) {
		/* datagrams refused are not in a log */
		fprintf(f, "  \"rejected\": null, \"local_receive_drops\": null,\n");
		return;
	}
	fprintf(f, "  \"rejected\": {");
	for (i = 0; i < GR_N; i++) {
		fprintf(f, "%s\"%s\": %" PRIu64, i ? ", " : "", guard_rej_name[i], sess.c.rejected[i]);
	}
	fprintf(f, "}, \"local_receive_drops\": %" PRIu32 ",\n", run.side.emit ? result.rxq_ovfl : 0);
}

/*
 * May the one-way delays be read as such?  Returns true when the clocks are
 * known to agree (and the server's stamps are of the same kind), and fills
 * why with the evidence or the warning.
 */
/*
 * NIC stamps on both ends: two PHCs.  Their difference can be known only
 * through a clock both ends read: when both run in one kernel (the same boot
 * id: two ports of one host, e.g. in two namespaces) and each measured its
 * PHC - CLOCK_REALTIME (item "the PHC's own offset"), then PHC_srv - PHC_cli
 * = off_srv - off_cli, known within the two read windows.  That is evidence
 * when both are disciplined and the difference is under 1 us.  Two hosts
 * share no clock rant can read: their PHCs may well be synchronised (ptp4l),
 * but nothing one end measures shows it, so it is never claimed.  *bound:
 * |off_srv - off_cli| + both windows, ns.
 */
#define OW_PHC_BOUND_NS	1000

static bool ow_phc(int64_t *bound, char *why, size_t len)
{
	char tmp[256];
	int64_t d;

	if (!run.ts.hw || !sess.srv_hw) {
		return false;
	}
	if (!run.phc.n || !result.srv_phc.method) {
		snprintf(why, len, "%s PHC - CLOCK_REALTIME was not measured%s",
			 !run.phc.n ? "this end's" : "the reflector's",
			 run.phc.n ? " (or its FIN_ACK did not say: an earlier rant, or none came)" : "");
		return false;
	}
	if (!run.host_boot_id || run.host_boot_id != result.srv_phc.boot_id) {
		snprintf(why, len, "the reflector runs in another kernel: %s",
			 "its PHC and this one share no clock rant can read");
		return false;
	}
	d = result.srv_phc.off - run.phc.last_off;
	*bound = (d < 0 ? -d : d) + (run.phc.window > 0 ? run.phc.window : 0) +
		 (int64_t)result.srv_phc.window;
	if (phc_warning(tmp, sizeof(tmp)) || !result.srv_phc.disciplined) {
		snprintf(why, len, "the %s PHC is not disciplined to CLOCK_REALTIME (run phc2sys)",
			 !result.srv_phc.disciplined ? "reflector's" : "client's");
		return false;
	}
	if (*bound > OW_PHC_BOUND_NS) {
		snprintf(why, len, "the two PHCs, each measured against this host's CLOCK_REALTIME, "
			 "differ by up to %" PRId64 " ns (client %+" PRId64 " ns, reflector %+" PRId64 " ns)",
			 *bound, run.phc.last_off, result.srv_phc.off);
		return false;
	}
	snprintf(why, len,
		 "clocks agree within %" PRId64 " ns: both ends in one kernel (same boot id), "
		 "PHC - CLOCK_REALTIME measured on each (client %+" PRId64
		 " ns, reflector %+" PRId64 " ns, %s)",
		 *bound, run.phc.last_off, result.srv_phc.off,
		 phc_method_name[result.srv_phc.method]);
	return true;
}

/*
 * Loopback and veth show one kernel only at this end: the peer may still be
 * another host (a container's veth leads out through the host; a loopback
 * port may be forwarded to a VM or through a tunnel).  They count only when
 * the reflector's FIN_ACK names this kernel's boot id; why says what is
 * missing when it does not.
 */
static bool ow_same_kernel(char *why, size_t len)
{
	const char *what = run.ow_evidence == OW_LOOPBACK ? "the peer is on loopback" : "-i is a veth";

	if (!run.host_boot_id) {
		snprintf(why, len, "%s, but this kernel's boot id is unreadable "
			 "(/proc/sys/kernel/random/boot_id)", what);
	} else if (!fin_heard()) {
		snprintf(why, len, "%s, but no FIN_ACK came to say which kernel the reflector "
			 "runs in", what);
	} else if (!result.srv_phc.boot_id) {
		snprintf(why, len, "%s, but the reflector's FIN_ACK carries no boot id "
			 "(an earlier rant): nothing shows it runs in this kernel", what);
	} else if (result.srv_phc.boot_id != run.host_boot_id) {
		snprintf(why, len, "%s, but the reflector runs in another kernel (its boot id "
			 "%016" PRIx64 " is not this one's %016" PRIx64 ")", what,
			 result.srv_phc.boot_id, run.host_boot_id);
	} else {
		return true;
	}
	return false;
}

/* The evidence for the clocks of the one-way delays, as the report states it. */
static enum ow_evidence ow_current(char *why, size_t len)
{
	int64_t bound;

	if (run.ow_evidence == OW_NONE && ow_phc(&bound, why, len)) {
		return OW_PHC;
	}
	if (run.ow_evidence != OW_NONE && !ow_same_kernel(why, len)) {
		return OW_NONE;
	}
	return run.ow_evidence;
}

static bool oneway_trusted(char *why, size_t len)
{
	const struct hist *fw = &sess.h[M_FORWARD], *bw = &sess.h[M_BACKWARD],
			  *rtt = &sess.h[M_RTT];
	char phc_why[320] = "";
	enum ow_evidence ev = OW_NONE;
	bool same;

	if (cfg->mode != MODE_ANALYZE) {
		ev = ow_current(phc_why, sizeof(phc_why));
	}
	same = ev == OW_PHC || (ev != OW_NONE && !sess.srv_hw && !run.ts.hw);

	if (!fw->n && !bw->n) {
		snprintf(why, len, "no transaction has both stamps of a direction");
		return false;
	}
	if ((fw->n && fw->min < 0) || (bw->n && bw->min < 0)) {
		snprintf(why, len, "warning: a one-way delay went negative (forward min %" PRId64 " ns, backward min %" PRId64
			 " ns): the two clocks disagree%s", fw->min, bw->min,
			 same ? "" : "; run phc2sys (or ptp4l) so both ends share one time base");
		return false;
	}
	if (fw->n && bw->n && rtt->n && fabs(hist_avg(fw) - hist_avg(bw)) > hist_avg(rtt)) {
		snprintf(why, len, "warning: forward and backward differ by more than the rtt: the clocks disagree");
		return false;
	}
	if (same && ev == OW_PHC) {
		snprintf(why, len, "%s", phc_why);
		return true;
	}
	if (same) {
		snprintf(why, len, "clocks agree: %s and the reflector's boot id is this kernel's, "
			 "one CLOCK_REALTIME stamps both ends",
			 run.ow_evidence == OW_LOOPBACK ? "the peer is on loopback" : "-i is a veth");
		return true;
	}
	snprintf(why, len, "warning: nothing shows the two clocks agree (%s): read forward/backward as offset-laden",
		 cfg->mode == MODE_ANALYZE ? "a log does not record it" :
		 phc_why[0] ? phc_why : "different hosts or NIC clocks, not compared");
	return false;
}

/*
 * Why a client cannot split its loss by direction (loss_split said no):
 * "" when it has no loss to split, or is no client.
 */
static void loss_why(char *why, size_t len)
{
	*why = 0;
	if (!run.side.emit || !sess.c.lost) {
		return;
	}
	if (cfg->mode == MODE_ANALYZE) {
		snprintf(why, len, "%s", cfg->analyze[1] ? result.analyze_why :
			 "a client log alone (joined with the reflector's csv log, --analyze splits it)");
	} else if (result.busy) {
		snprintf(why, len, "the reflector was serving another client (it answered BUSY)");
	} else if (!sess.c.received) {
		snprintf(why, len, "no pong came, so no FIN was sent to ask the reflector");
	} else if (!fin_heard() && !result.fin_tries) {
		snprintf(why, len, "-d's end came before a FIN could be answered (the pongs still awaited "
			 "took the time)");
	} else if (!fin_heard()) {
		snprintf(why, len, "no FIN_ACK came (%u FIN%s in %.0f ms): the reflector was gone or "
			 "still busy, or its answer was lost; its csv log joined with this one's "
			 "(--analyze) can split the loss", result.fin_tries, result.fin_tries == 1 ? "" : "s",
			 (double)result.fin_wait_ns / 1e6);
	} else if (!result.srv_whole) {
		snprintf(why, len, "the reflector did not see the whole session (it restarted, or had "
			 "ended the session)");
	} else {
		snprintf(why, len, "the reflector's count (%" PRIu64 " pings answered) does not fit "
			 "this run's (%" PRIu64 " sent, %" PRIu64 " came back)", result.srv_received,
			 sess.c.sent, sess.c.received + sess.c.late);
	}
}

/* What the text report and the JSON both say, computed once per report. */
struct report {
	const struct hist *primary;
	double duration_s;
	bool split;			/* loss by direction known (emit, FIN_ACK seen) */
	uint64_t lost_out, lost_back, lost_local;
	char split_why[256];		/* ... or why not (loss_why) */
	bool ow_trusted;		/* one-way delays: may they be read as such */
	char ow_why[256];		/* ... the evidence, or the warning */
	bool drift;			/* server - client offset drift over >= 1 s */
	double ppm, span;
	char warn[4][256];		/* clock warnings */
	int nwarn;
	double breach_pct;		/* -t breaches, % of the primary metric's samples */
	uint64_t log_records;		/* what the log file holds */
};

/* Sort the exact stores and close the fit windows: before anything reads them. */
static void report_prepare(void)
{
	int i;

	for (i = 0; i < run.side.nmetrics; i++) {
		hist_finish(&sess.h[run.side.metrics[i]]);
	}
	fit_window_flush(&sess.offset);
	fit_window_flush(&sess.app_wire[0]);
	fit_window_flush(&sess.app_wire[1]);
}

static void report_compute(struct report *r)
{
	memset(r, 0, sizeof(*r));
	report_prepare();
	r->primary = &sess.h[run.side.primary];
	r->duration_s = session_duration();
	r->split = loss_split(&r->lost_out, &r->lost_back);
	if (r->split) {
		r->lost_local = result.srv_received - sess.c.received - sess.c.late - r->lost_back;
	} else {
		loss_why(r->split_why, sizeof(r->split_why));
	}
	r->ow_trusted = oneway_trusted(r->ow_why, sizeof(r->ow_why));
	r->drift = fit_ppm(&sess.offset, &r->ppm, &r->span) && r->span >= 1.0 &&
		   !run.ts.bond_switches;
	r->nwarn = clock_warnings(r->warn, 4);
	r->breach_pct =
		r->primary->n ? 100.0 * (double)sess.c.breaches / (double)r->primary->n : 0.0;
	r->log_records = run.log_out.done ? run.log_out.rows : sess.log.n;
}

/* The NIC's verdict (hw_watch_none), when it delivered no hardware stamps. */
static void print_hw_watch(FILE *f)
{
	const struct hw_watch *w = &run.hww;

	if (w->verdict != HWW_NONE) {
		return;
	}
	fprintf(f, "Hardware stamps: %s delivered none%s (RX %" PRIu64 " of %" PRIu64 ", TX %" PRIu64
		" of %" PRIu64 "): %s\n", cfg->iface, w->lacking == HWW_RX ? " on receive" :
		w->lacking == HWW_TX ? " on send" : "", w->at[1], w->at[0], w->at[3], w->at[2],
		w->fell_back ? "the kernel's stamps are the wire stamps of the whole run (--timestamps auto)" :
			       "stopped (--timestamps hw)");
}

/*
 * This side's TX stamps, when some are missing in a pattern that names its
 * cause: none at all while RX stamps came (bnxt before BCM5760X stamps TX
 * only for PTP packets: bnxt_ptp_parse), or a share of them (igb, ixgbe and
 * i40e stamp one TX packet at a time and skip a send while the last one's
 * stamp is pending: ethtool -S counts tx_hwtstamp_skipped).  0: no
 * pattern, 1: PTP only, 2: one at a time.
 */
static int tx_stamp_pattern(uint64_t *miss, uint64_t *n)
{
	int tx = run.side.emit ? T1W : T3W, rx = run.side.emit ? T4W : T2W;

	*miss = sess.c.missing[tx];
	*n = sess.c.received > sess.c.warmup ? sess.c.received - sess.c.warmup : 0;
	if (!run.ts.hw || !*n || !*miss || (cfg->no_tx_ts && !run.side.emit) ||
	    run.ts.bond_switches) {
		return 0;	/* a failover's missing stamps have their own line ("Bond: ...") */
	}
	if (*miss >= *n && sess.c.missing[rx] < *n) {
		return 1;
	}
	return *miss < *n && *miss * 100 >= *n ? 2 : 0;
}

static void print_tx_pattern(FILE *f)
{
	uint64_t miss, n;
	int p = tx_stamp_pattern(&miss, &n);
	char also[96] = "";

	if (run.ts.ptp4l_pid) {
		snprintf(also, sizeof(also), "; ptp4l (pid %d) on %s asks for the same stamp",
			 run.ts.ptp4l_pid, cfg->iface);
	}
	if (p == 1) {
		fprintf(f, "TX stamps: none of %" PRIu64 " sends stamped by the NIC while its RX stamps came: %s\n",
			n, cfg->ptp_probe ? "even as PTP probes: see ethtool -T and the driver" :
			"NICs that stamp TX only for PTP packets do this (bnxt before BCM5760X): run both ends with --ptp-probe");
	} else if (p == 2) {
		fprintf(f, "TX stamps: %" PRIu64 " of %" PRIu64 " sends not stamped by the NIC (%.1f %%): NICs that stamp one TX packet at a time (igb, ixgbe, i40e) skip a send while the last one's stamp is pending (ethtool -S %s: tx_hwtstamp_skipped): pace the client with --interval (e.g. 1000)%s\n",
			miss, n, 100.0 * (double)miss / (double)n, cfg->iface, also);
	} else if (run.ts.ptp4l_pid && run.ts.hw) {
		fprintf(f, "TX stamps: ptp4l (pid %d) runs on %s: on a NIC that stamps one TX packet at a time the two compete for it\n",
			run.ts.ptp4l_pid, cfg->iface);
	}
}

/* The client: the reflector's PHC offset, out of its segments or still in them (*). */
static void print_peer_off(FILE *f)
{
	char said[64] = "not known";

	if (!run.side.emit || !sess.srv_hw) {
		return;
	}
	if (run.ts.peer_off_on) {
		fprintf(f, "Reflector's segments: its PHC offset (%+" PRId64
			" ns, from its pongs) taken out, on one time base\n", run.ts.peer_off);
	} else if (peer_off_in(M_SRV_RX) && sess.h[M_SRV_RX].n + sess.h[M_SRV_TX].n +
		   sess.h[M_SRV_RX_NIC].n + sess.h[M_SRV_TX_NIC].n) {
		if (result.srv_phc.method) {
			snprintf(said, sizeof(said), "its FIN_ACK said %+" PRId64 " ns", result.srv_phc.off);
		}
		fprintf(f, "* Reflector's segments: its PHC offset is still in them (%s): pongs of --size %zu or more carry it\n",
			said, proto_kx_need() + KX_PHC_LEN - KX_LEN);
	}
}

/* What the hardware path has to say about this run's stamps. */
static void print_hw_notes(FILE *f, const struct report *r)
{
	char why[256];
	double ppm;

	print_hw_watch(f);
	print_tx_pattern(f);
	if (run.side.emit && (sess.h[M_FORWARD].n || sess.h[M_BACKWARD].n)) {
		fprintf(f, "One-way delays: %s\n", r->ow_why);
	}
	if (run.ts.wire_off) {
		fprintf(f, "App-vs-wire segments: the PHC's offset at start (%+" PRId64
			" ns) taken out, on one time base\n", run.ts.wire_off);
	}
	print_peer_off(f);
	if (sess.c.kx_unfit && run.side.emit) {
		fprintf(f, "Reflector's NIC/kernel split: missing from %" PRIu64
			" pongs too short for its kernel stamps: use --size %zu or more\n",
			sess.c.kx_unfit, proto_kx_need());
	} else if (sess.c.kx_unfit) {
		fprintf(f, "Kernel stamps not sent to the client: %" PRIu64 " pongs (as long as its pings)"
			" had no room: the client needs --size %zu or more\n", sess.c.kx_unfit, proto_kx_need());
	}
	if (run.phc.n) {
		fprintf(f,
			"PHC /dev/ptp%d - CLOCK_REALTIME: %+" PRId64 " ns (%s, %" PRIu64
			" readings, window %" PRId64 " ns)",
			run.phc.index, run.phc.last_off, phc_method_name[run.phc.method], run.phc.n,
			run.phc.window);
		if (phc_drift(&ppm)) {
			fprintf(f, ", drift %+.3f ppm", ppm);
		}
		if (phc_is_tai()) {
			fprintf(f, ", TAI (ptp4l's timescale): NIC stamps are TAI - UTC ahead of app stamps");
		}
		fprintf(f, "\n");
		if (phc_warning(why, sizeof(why))) {
			fprintf(f, "warning: %s\n", why);
		}
	} else if (run.phc.err) {
		fprintf(f, "PHC /dev/ptp%d - CLOCK_REALTIME: not measured (%s)\n", run.phc.index, strerror(-run.phc.err));
	}
	if (run.ts.hw && run.ts_prov.known) {
		fprintf(f, "Timestamp provider (ethtool tsconfig): PHC /dev/ptp%d, %s\n", run.ts_prov.phc_index,
			run.ts_prov.qualifier ? "approximate" : "precise");
	} else if (run.ts.hw && run.ts_prov.err) {
		fprintf(f, "Timestamp provider (ethtool tsconfig): not reported (%s)\n", strerror(-run.ts_prov.err));
	}
	if (cfg->ptp_probe) {
		fprintf(f, "PTP probes: every packet a PTPv2 event message on UDP %d (Sync out, Delay_Req back), domain %u, %d B before rant's %u\n",
			PTP_EVENT_PORT, cfg->ptp_domain, PTP_HDR_LEN, cfg->size);
	}
	if (run.path.fragmented) {
		fprintf(f, "Fragments: --size %u exceeds the path MTU %u (%u B of payload): the stamps are of the first fragment\n",
			cfg->size, run.path.mtu, run.path.payload);
	}
	if (run.ts.bond_switches) {
		fprintf(f, "Bond: %s's active slave changed %" PRIu32 " time(s) mid-run, %s at start, %s at the end:"
			" until rant set the new one's stamping, its NIC stamps were missing\n", cfg->iface,
			run.ts.bond_switches, run.ts.nic0, run.ts.nic);
	}
	if (run.ts_foreign) {
		fprintf(f, "Stamps from another interface than %s: %" PRIu64 " (not used: counted as missing)\n",
			*run.ts.nic ? run.ts.nic : cfg->iface ? cfg->iface : "-", run.ts_foreign);
	}
}

/*
 * A --size below 64: the reflector's stamps whose echoed field its pongs
 * have no room for (proto_room), for the smallest size of the run.  No
 * transaction of that size can have them: they are not counted missing, and
 * the report and JSON say so once.  0 when every field fits.
 */
static uint16_t room_lacking(unsigned *smallest)
{
	unsigned z = cfg->size;
	int i;

	for (i = 0; i < classes.nsz; i++) {
		if (classes.size[i] && classes.size[i] < z) {
			z = classes.size[i];
		}
	}
	*smallest = z;
	if (!run.side.emit || cfg->mode == MODE_ANALYZE) {
		return 0;
	}
	return (uint16_t)((PF_T2W | PF_T2SW | PF_T3SW | PF_T3W) & ~proto_room(z));
}

/* The datagram length from which the field f fits. */
static unsigned room_needed(uint16_t f)
{
	unsigned n = PROTO_MIN_SIZE;

	while (!(proto_room(n) & f)) {
		n++;
	}
	return n;
}

static const int room_stamps[] = { T2W, T2SW, T3SW, T3W };

static void print_room(FILE *f)
{
	unsigned z, i;
	uint16_t lack = room_lacking(&z);
	const char *sep = "";
	char lab[16];

	if (!lack) {
		return;
	}
	fprintf(f, "Size %u B: its pongs have no room for the reflector's", z);
	for (i = 0; i < ARRAY_SIZE(room_stamps); i++) {
		uint16_t fl = stamp_field(room_stamps[i]);

		if (lack & fl) {
			fprintf(f, "%s %s (from %u B)", sep, stamp_name(room_stamps[i], lab, sizeof(lab)),
				room_needed(fl));
			sep = ",";
		}
	}
	fprintf(f, ": not counted missing; response, network and the server's segments need them (the reflector's own report has its side)\n");
}

/*
 * --analyze: what a log cannot know is said to be unknown, never 0.  A log
 * holds one row per ping: no duplicate or invalid datagram, and a text log
 * no warm-up ping (its sent and received leave them out).
 */
static bool analyze_warmup_known(void)
{
	return cfg->mode != MODE_ANALYZE || cfg->log_format == LOG_CSV;
}

static void print_counts_analyze(FILE *f)
{
	fprintf(f, "Packets: sent %" PRIu64 " | received %" PRIu64 " | lost ", sess.c.sent, sess.c.received);
	if (run.lost_unknown) {
		fputs("unknown (-L filtered the log)", f);
	} else {
		fprintf(f, "%" PRIu64, sess.c.lost);
	}
	fprintf(f, " | late %" PRIu64 " | duplicate unknown | invalid unknown | warm-up ", sess.c.late);
	if (analyze_warmup_known()) {
		fprintf(f, "%" PRIu64 "\n", sess.c.warmup);
	} else {
		fprintf(f, "unknown (a text log leaves warm-up out: sent and received are without it)\n");
	}
}

static void print_counts(FILE *f, const struct report *r)
{
	char lab[16];
	bool any = false;
	int i;

	if (cfg->mode == MODE_ANALYZE) {
		print_counts_analyze(f);
	} else {
		fprintf(f,
			"Packets: sent %" PRIu64 " | received %" PRIu64 " | lost %" PRIu64
			" | late %" PRIu64 " | duplicate %" PRIu64 " | invalid %" PRIu64
			" | warm-up %" PRIu64 "\n",
			sess.c.sent, sess.c.received, sess.c.lost, sess.c.late,
			sess.c.duplicate, sess.c.invalid, sess.c.warmup);
	}
	if (sess.c.invalid) {
		fprintf(f, "Invalid:");
		for (i = 1; i < PE_NERR; i++) {
			if (sess.c.invalid_why[i]) {
				fprintf(f, " %s %" PRIu64 ";", proto_err_name[i], sess.c.invalid_why[i]);
			}
		}
		fprintf(f, " from another session %" PRIu64 "\n", sess.c.foreign);
	}
	if (r->split && cfg->mode == MODE_ANALYZE) {
		fprintf(f, "Lost by direction: %" PRIu64 " pings on the way out, %" PRIu64
			" pongs on the way back (the reflect log holds %" PRIu64 " of these pings; drops in the"
			" client's receive buffer are not in a log, counted as on the way back)\n",
			r->lost_out, r->lost_back, result.srv_received);
	} else if (r->split) {
		fprintf(f, "Lost by direction: %" PRIu64 " pings on the way out, %" PRIu64
			" pongs on the way back (the reflector answered %" PRIu64 ")\n", r->lost_out, r->lost_back,
			result.srv_received);
		if (r->lost_local) {
			fprintf(f, "Lost locally: %" PRIu64 " pongs dropped by this host's full receive buffer (not the network)\n",
				r->lost_local);
		}
	} else if (*r->split_why && cfg->mode != MODE_ANALYZE) {
		/* --analyze said it above the report, for the logs as a whole */
		fprintf(f, "Lost by direction: not known: %s\n", r->split_why);
	}
	print_rejected(f);
	if (sess.c.send_errors || sess.c.refused || sess.c.tx_unmatched ||
	    sess.c.echo_dropped || result.overruns) {
		fprintf(f,
			"Other: send errors %" PRIu64 " | port unreachable %" PRIu64
			" | unmatched TX stamps %" PRIu64 " | echo dropped %" PRIu64
			" | interval overruns %" PRIu64 "\n",
			sess.c.send_errors, sess.c.refused, sess.c.tx_unmatched,
			sess.c.echo_dropped, result.overruns);
	}
	fprintf(f, "Missing stamps:");
	for (i = 0; i < run.side.nstamps; i++) {
		int s = run.side.stamps[i];

		if (sess.c.missing[s]) {
			fprintf(f, "%s %s %" PRIu64, any ? ";" : "", stamp_name(s, lab, sizeof(lab)),
				sess.c.missing[s]);
			any = true;
		}
	}
	{
		bool srv = run.side.emit && result.srv_no_tx && sess.c.missing[T3W],
		     cli = run.side.emit && cli_no_tx() && sess.c.missing[T1W];

		fprintf(f, "%s%s\n", any ? "" : " none",
			srv && cli ? " (no TX stamps, by request: this client's --client-no-tx-ts and the reflector's -N)" :
			cli ? " (no TX stamps of the pings, by request: --client-no-tx-ts)" :
			srv ? " (the reflector runs -N: no TX stamps, by request)" : "");
	}
	print_room(f);
	print_hw_notes(f, r);
}

/*
 * The earlier rant's "Histogram Summary" block, line for line, for the
 * scripts that parse it (crucible's bench-rant reads every "<N>th : <us>"
 * line and Minimum/Maximum/Average).  Percentiles are whole microseconds
 * as there, rounded down from rant's (finer) percentile; 99.999th is new.
 */
static void print_earlier_summary(FILE *f, const struct hist *h)
{
	static const char *const name[NPCT] = {
		"50th", "90th", "95th", "99th", "99.9th", "99.99th", "99.999th",
	};
	bool approx = false;
	int k;

	fprintf(f, "Histogram Summary:\n  Samples   :  %" PRIu64 "\n", h->n);
	if (!h->n) {
		fputc('\n', f);
		return;
	}
	fprintf(f, "  Minimum   :  %.2f us (#%" PRIu64 ")\n", (double)h->min / 1000, h->min_seq);
	fprintf(f, "  Maximum   :  %.2f us (#%" PRIu64 ")\n", (double)h->max / 1000, h->max_seq);
	fprintf(f, "  Average   :  %.2f us\n  Percentiles (us):\n", hist_avg(h) / 1000);
	for (k = 0; k < NPCT; k++) {
		int64_t v = hist_pct(h, pct_value[k], &approx);

		/* ':' in one column; 99.999th, a character wider, starts one earlier */
		int over = strlen(name[k]) > 7 ? (int)strlen(name[k]) - 7 : 0;

		fprintf(f, "%*s%-*s:  %" PRId64 "%s\n", 4 - over, "", 8 + over, name[k],
			v >= 0 ? v / 1000 : -((999 - v) / 1000), k == 0 ? " (Median)" : "");
	}
	fputc('\n', f);
}

/* How many pings the warm-up left out of this report, and whose -w did it. */
static void print_warmup(FILE *f)
{
	if (cfg->mode == MODE_ANALYZE || (!cfg->warmup && !sess.c.warmup)) {
		return;
	}
	if (run.side.emit) {
		fprintf(f, "Warm-up: %" PRIu64 " pings excluded (-w %" PRIu64
			": the first pings, flagged so that the reflector leaves them out too)\n", sess.c.warmup, cfg->warmup);
	} else {
		fprintf(f,
			"Warm-up: %" PRIu64 " pings excluded: %" PRIu64
			" flagged by the client's -w, %" PRIu64
			" more by this reflector's -w %" PRIu64 " (the first %" PRIu64
			" pings of the session)\n",
			sess.c.warmup, sess.c.warmup - sess.c.warmup_local, sess.c.warmup_local,
			cfg->warmup, cfg->warmup);
	}
}

/* The end-of-run (or end-of-session) report, in the earlier rant's format first. */
/* "Log:": what the file holds (a text log leaves warm-up records out), or why it is cut short. */
static void print_log_line(FILE *f, const struct report *r)
{
	if (sess.log.cap && run.log_out.err) {
		fprintf(f, "Log: INCOMPLETE: writing %s failed (%s); the file is cut short (%" PRIu64 " records were to be written)\n",
			cfg->log, strerror(-run.log_out.err), sess.log.n - run.log_out.skipped);
	} else if (sess.log.cap) {
		fprintf(f, "Log: %" PRIu64 " records kept, %" PRIu64 " dropped (ring of %" PRIu64 ")",
			r->log_records, sess.log.dropped, sess.log.cap);
		if (cfg->log_threshold_ns >= 0) {
			fprintf(f, ", %" PRIu64 " at or below -L", sess.log.filtered);
		}
		if (run.log_out.skipped) {
			fprintf(f, ", %" PRIu64 " warm-up not in the text log", run.log_out.skipped);
		}
		fputc('\n', f);
	}
}

/* The decomposition table, the clocks and the threshold's breaches, each broken down. */
static void print_decomposition(FILE *f, const struct report *r)
{
	int i;

	fprintf(f, "\n--- Decomposition (ns) ---\n%-34s %12s %10s %10s %10s %10s\n", "metric", "samples", "min",
		"avg", "max", "stddev");
	for (i = 0; i < run.side.nmetrics; i++) {
		const struct hist *h = &sess.h[run.side.metrics[i]];

		if (h->n) {
			fprintf(f,
				"%-34s %12" PRIu64 " %10" PRId64 " %10.0f %10" PRId64 " %10.0f\n",
				metric_label(run.side.metrics[i]), h->n, h->min, hist_avg(h),
				h->max, hist_stddev(h));
		}
	}
	if (run.side.emit && sess.offset.n && run.ts.bond_switches) {
		fprintf(f, "Clock: server - client offset and drift not given: %s's active slave changed"
			" mid-run (%s at start), so its stamps are of two PHCs\n", cfg->iface, run.ts.nic0);
	} else if (run.side.emit && sess.offset.n) {
		if (r->ow_trusted) {
			/* one clock: ((T2-T1) + (T3-T4)) / 2 holds no offset, only the asymmetry */
			fprintf(f, "Path asymmetry: (forward - backward) / 2 = %+" PRId64
				" ns (at the lowest-RTT exchange; one clock, so no offset)",
				sess.best_offset);
		} else {
			fprintf(f, "Clock: server - client offset %+" PRId64
				" ns (at the lowest-RTT exchange)", sess.best_offset);
		}
		if (r->drift) {
			/* one clock does not drift: then it is the asymmetry that moved */
			fprintf(f, ", %s %+.3f ppm over %.1f s", r->ow_trusted ? "trend" : "drift",
				r->ppm, r->span);
		}
		fputc('\n', f);
	}
	for (i = 0; i < r->nwarn; i++) {
		fprintf(f, "WARNING: %s\n", r->warn[i]);
	}
	pmc_report(f);
	if (cfg->threshold_ns >= 0) {
		fprintf(f, "Threshold: %.3f us, exceeded %" PRIu64 " times (%.4f %% of samples)\n",
			(double)cfg->threshold_ns / 1000, sess.c.breaches, r->breach_pct);
		for (i = 0; i < (int)sess.nbreach_kept && i < 10; i++) {
			print_breakdown(f, &sess.breach[i].x, sess.breach[i].value, "Threshold breach");
			why_print_kept(f, (unsigned)i);
		}
		if (sess.nbreach_kept > 10) {
			fprintf(f, "(%" PRIu64 " more breaches not shown)\n", sess.c.breaches - 10);
		}
	}
}

/*
 * What rant changed on the host that changes the numbers: the CPU latency
 * limit took a blocking veth RTT's median from 57.7 us to 13.5 us here, so a
 * report compared with another tool's must say whether it held one.
 * (mlockall changes only rant's own memory, not the host.)  --analyze ran
 * nothing, so says nothing.
 */
static void print_host(FILE *f)
{
	if (cfg->mode == MODE_ANALYZE) {
		return;
	}
	if (run.cpulat.fd >= 0) {
		fprintf(f, "Host: CPU wake-up latency held at %d us (%s; --cpu-latency off to measure without)\n",
			run.cpulat.us, cpu_latency_dev);
	} else {
		fprintf(f, "Host: CPU wake-up latency not held (%s): idle CPUs' wake-ups are in the numbers\n",
			run.cpulat.why);
	}
}

static void session_report(FILE *f, const struct report *r)
{
	const struct hist *p = r->primary;

	fprintf(f, "Test is complete. Duration: %.2f s\n", r->duration_s);
	if (cfg->mode == MODE_REFLECT && sess.id) {
		fprintf(f, "Session 0x%08x is complete. Duration: %.2f s\n", sess.id, r->duration_s);
	} else if (cfg->mode == MODE_REFLECT) {
		fprintf(f, "No session: no client came\n");
	}
	fprintf(f, "\n--- %s Latency Statistics ---\n", run.side.emit ? "Round-Trip" : "Response");
	fprintf(f, "MIN: %" PRId64 " ns | MAX: %" PRId64 " ns | AVG: %.0f ns | Total Samples: %" PRIu64 "\n\n",
		p->min, p->max, hist_avg(p), p->n);
	if (cfg->histogram) {
		print_earlier_summary(f, p);
	}
	fprintf(f, "Timestamps: wire %s%s%s; app stamps %s\n", tsrc(run.ts.hw),
		run.side.emit && sess.srv_hw_known ? "; server wire " : "",
		run.side.emit && sess.srv_hw_known ? tsrc(sess.srv_hw) : "",
		cfg->sw_stamps ? "on (CLOCK_REALTIME)" : "off");
	print_host(f);
	if (resp_tx_app()) {
		fprintf(f, "Response: T3_SW - T2 wire (app send; -N: no TX stamps), not wire-to-wire\n");
	}
	if (run.side.emit && cli_no_tx()) {
		fprintf(f, "RTT: T4 wire - T1_SW (app send; --client-no-tx-ts: no TX stamps), not wire-to-wire\n");
	}
	print_counts(f, r);
	print_warmup(f);
	if (cfg->mode != MODE_ANALYZE) {
		fprintf(f, "Stopped by: %s\n", stop_name[sess.stop_reason]);
	}
	if (cfg->mode == MODE_REFLECT && result.ss_got == SS_SHARED) {
		/* only the speed differs: the stamps and the numbers are the same */
		fprintf(f, "Session socket: none, answered on the shared socket (%s)\n", result.ss_why);
	}
	print_log_line(f, r);
	print_decomposition(f, r);
	if (sess.stop_reason == STOP_PEER_BREACH) {
		fprintf(f, "The reflector stopped on its threshold (its response time crossed -t there).\n");
	}
	cls_report(f);
	tsn_report(f);
	if (cfg->histogram) {
		print_pct_table(f);
		print_histogram(f, run.side.primary);
	}
	fflush(f);
}

/* ----------------------------------------------------------------- json */

/*
 * Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), 0 if the byte at s does
 * not start one.
 */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t c;

	if (s[0] < 0x80) {
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		c = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		c = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		c = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) {
			return 0;	/* also stops at the terminating NUL */
		}
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff)) {
		return 0;
	}
	return n;
}

/*
 * A JSON string.  Paths and interface names are bytes, not text: a byte
 * that is not part of valid UTF-8 is written as \u00XX (the code point of
 * the same value, as Latin-1 would read it), so the JSON stays valid and
 * the byte can be recovered.  Control characters are escaped too.
 */
static void json_str(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	fputc('"', f);
	while (u && *u) {
		size_t n = utf8_len(u);

		if (*u == '"' || *u == '\\') {
			fprintf(f, "\\%c", *u);
		} else if (*u < 0x20 || *u == 0x7f || !n) {
			fprintf(f, "\\u%04x", *u);
		} else {
			fwrite(u, 1, n, f);
			u += n;
			continue;
		}
		u++;
	}
	fputc('"', f);
}

/* One bucket of the samples above the bound, as [lower_ns, count] (hist_above). */
static void json_above(void *arg, uint64_t lower, uint64_t n)
{
	fprintf(arg, "%s[%" PRIu64 ", %" PRIu64 "]", outs.json_above_sep, lower, n);
	outs.json_above_sep = ", ";
}

static void json_metric(FILE *f, int m)
{
	const struct hist *h = &sess.h[m];
	bool approx = false;
	uint64_t i;
	int k;
	const char *sep = "";

	fprintf(f,
		"    \"%s\": {\"samples\": %" PRIu64 ", \"min_ns\": %" PRId64
		", \"min_seq\": %" PRIu64 ", \"max_ns\": %" PRId64 ", \"max_seq\": %" PRIu64
		", \"avg_ns\": %.1f, \"stddev_ns\": %.1f,\n",
		metric_def[m].key, h->n, h->min, h->min_seq, h->max, h->max_seq, hist_avg(h),
		hist_stddev(h));
	fprintf(f, "      \"percentiles_ns\": {");
	for (k = 0; k < NPCT; k++) {
		fprintf(f, "%s\"%s\": %" PRId64, k ? ", " : "", pct_key[k], hist_pct(h, pct_value[k], &approx));
	}
	fprintf(f, "}, \"percentiles_approximate\": %s, ", approx ? "true" : "false");
	hist_json_err(f, h);
	fprintf(f, ",\n");
	fprintf(f, "      \"histogram\": {\"bucket_ns\": %" PRIu64 ", \"bound_ns\": %" PRIu64
		", \"outside\": %" PRIu64 ", \"buckets\": [", h->bucket_ns, h->bound_ns,
		h->out_lo + h->out_hi);
	for (i = 0; i < h->nbuckets; i++) {
		if (h->bucket[i]) {
			fprintf(f, "%s[%" PRIu64 ", %" PRIu64 "]", sep, i * h->bucket_ns, h->bucket[i]);
			sep = ", ";
		}
	}
	/* outside: the samples above the bound in buckets of that width, the rest counted */
	fprintf(f, "], \"above\": [");
	outs.json_above_sep = "";
	hist_above(h, json_above, f);
	fprintf(f, "], \"above_not_kept\": %" PRIu64 ", \"below_zero\": %" PRIu64 "}}",
		hist_above_not_kept(h), hist_below(h));
}

/* The hardware path's keys, one line each, before "metrics". */
static void json_hw(FILE *f, const struct report *r)
{
	char why[256], tmp[320];
	double ppm;
	int64_t moved;
	uint64_t span;

	fprintf(f, "  \"foreign_interface_stamps\": %" PRIu64 ",\n", run.ts_foreign);
	fprintf(f, "  \"bond_switches\": %" PRIu32 ",\n", run.ts.bond_switches);
	if (run.side.emit && sess.srv_hw && (run.ts.peer_off_on || result.srv_phc.method)) {
		fprintf(f, "  \"server_wire_offset\": {\"ns\": %" PRId64 ", \"taken_out\": %s},\n",
			run.ts.peer_off_on ? run.ts.peer_off : result.srv_phc.off,
			run.ts.peer_off_on ? "true" : "false");
	} else {
		fprintf(f, "  \"server_wire_offset\": null,\n");
	}
	if (cfg->mode != MODE_ANALYZE && run.ts.hw) {
		static const char *const pattern[] = { "null", "\"ptp_only\"", "\"one_at_a_time\"" };
		uint64_t miss, n;
		int p = tx_stamp_pattern(&miss, &n);

		fprintf(f, "  \"tx_stamp_pattern\": {\"measured\": %" PRIu64 ", \"missing\": %" PRIu64
			", \"pattern\": %s, \"ptp4l_pid\": %d},\n", n, miss, pattern[p], run.ts.ptp4l_pid);
	} else {
		fprintf(f, "  \"tx_stamp_pattern\": null,\n");
	}
	if (cfg->mode != MODE_ANALYZE && (run.ts.hw || run.hww.verdict)) {
		static const char *const verdict[] = { "unjudged", "delivers", "none" };
		const struct hw_watch *w = &run.hww;

		static const char *const lacking[] = { "null", "\"rx\"", "\"tx\"", "\"both\"" };

		fprintf(f, "  \"hw_stamps\": {\"rx\": %" PRIu64 ", \"rx_nic\": %" PRIu64 ", \"tx\": %" PRIu64
			", \"tx_nic\": %" PRIu64 ", \"verdict\": \"%s\", \"lacking\": %s, \"fell_back\": %s},\n",
			w->rx, w->rx_hw, w->tx, w->tx_hw, verdict[w->verdict],
			lacking[w->lacking & 3],
			w->fell_back ? "true" : "false");
	} else {
		fprintf(f, "  \"hw_stamps\": null,\n");
	}
	fprintf(f, "  \"kernel_stamps_unfit\": %" PRIu64 ",\n", sess.c.kx_unfit);
	if (run.phc.n) {
		fprintf(f,
			"  \"phc\": {\"index\": %d, \"method\": \"%s\", \"offset_ns\": %" PRId64
			", \"readings\": %" PRIu64 ", \"window_ns\": %" PRId64 ", \"drift_ppm\": ",
			run.phc.index, phc_method_name[run.phc.method], run.phc.last_off, run.phc.n,
			run.phc.window);
		if (phc_drift(&ppm)) {
			fprintf(f, "%.3f", ppm);
		} else {
			fputs("null", f);
		}
		fprintf(f, ", \"disciplined\": %s, \"tai\": %s, \"stopped\": %s},\n",
			phc_warning(why, sizeof(why)) ? "false" : "true", phc_is_tai() ? "true" : "false",
			phc_stopped(&moved, &span) ? "true" : "false");
	} else {
		fprintf(f, "  \"phc\": null,\n");
	}
	if (run.side.emit) {
		fprintf(f, "  \"one_way\": {\"clock_evidence\": \"%s\", \"trusted\": %s, \"note\": ",
			cfg->mode == MODE_ANALYZE ? "unknown" : ow_name[ow_current(tmp, sizeof(tmp))],
			r->ow_trusted ? "true" : "false");
		json_str(f, r->ow_why);
		fprintf(f, "},\n");
	}
	if (run.ts.hw && run.ts_prov.known) {
		fprintf(f, "  \"ts_provider\": {\"phc_index\": %d, \"qualifier\": \"%s\"},\n", run.ts_prov.phc_index,
			run.ts_prov.qualifier ? "approx" : "precise");
	} else {
		fprintf(f, "  \"ts_provider\": null,\n");
	}
	if (cfg->ptp_probe) {
		fprintf(f, "  \"ptp_probe\": {\"port\": %d, \"domain\": %u, \"header_bytes\": %d},\n", PTP_EVENT_PORT,
			cfg->ptp_domain, PTP_HDR_LEN);
	} else {
		fprintf(f, "  \"ptp_probe\": null,\n");
	}
	if (run.path.mtu) {
		fprintf(f, "  \"path_mtu\": {\"mtu\": %u, \"max_payload\": %u, \"first_fragment_stamps\": %s},\n",
			run.path.mtu, run.path.payload, run.path.fragmented ? "true" : "false");
	} else {
		fprintf(f, "  \"path_mtu\": null,\n");
	}
}

/* A JSON string, or null for none. */
static void json_str_or_null(FILE *f, const char *s)
{
	if (s) {
		json_str(f, s);
	} else {
		fputs("null", f);
	}
}

/*
 * When the session started (UTC, ISO 8601; null for --analyze, which ran no
 * session) and the command line, so that one object says what ran.
 */
static void json_started(FILE *f)
{
	time_t sec = (time_t)(sess.first_real / NSEC_PER_SEC);
	struct tm tm;
	char when[40];

	fprintf(f, "  \"started\": ");
	if (sess.first_real && cfg->mode != MODE_ANALYZE && gmtime_r(&sec, &tm)) {
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		fprintf(f, "\"%s.%06uZ\"", when, (unsigned)(sess.first_real % NSEC_PER_SEC / 1000));
	} else {
		fputs("null", f);
	}
	fprintf(f, ", \"cmdline\": ");
	json_str(f, cfg->cmdline);
	fprintf(f, ",\n");
}

/*
 * The lines rant printed on stderr as "rant: ..." (warnings, notes, errors)
 * that belong to this object: the run's start-up ones, then those since the
 * previous object (a reflector's earlier session).
 */
static void json_warnings(FILE *f)
{
	const struct warn_list *w = &run.warn;
	unsigned i, n = 0;

	fprintf(f, ",\n  \"warnings\": [");
	for (i = 0; i < w->n && i < WARN_KEEP; i++) {
		if (i >= w->start && i < w->from) {
			continue;	/* an earlier session's */
		}
		fputs(n++ ? ", " : "", f);
		json_str(f, w->line[i]);
	}
	if (w->n > WARN_KEEP) {
		fprintf(f, "%s\"... and %u more lines on stderr\"", n ? ", " : "", w->n - WARN_KEEP);
	}
	fputc(']', f);
}

/* What ran: tool, mode, where, which stamps, how long and why it stopped. */
static void json_run(FILE *f, const struct report *r)
{
	const char *srv = !run.side.emit ? (run.ts.hw ? "\"hardware\"" : "\"software\"") :
			  sess.srv_hw_known ? (sess.srv_hw ? "\"hardware\"" : "\"software\"") : "null";

	fprintf(f, "{\n  \"tool\": \"rant\", \"version\": \"%s\", \"mode\": \"%s\", \"session\": \"0x%08x\",\n",
		RANT_VERSION, cfg->mode == MODE_ANALYZE ? "analyze" : run.side.emit ? "emit" : "reflect", sess.id);
	json_started(f);
	fprintf(f, "  \"side\": \"%s\", \"interface\": ", run.side.emit ? "emit" : "reflect");
	json_str_or_null(f, cfg->iface);
	fprintf(f, ", \"address\": ");
	json_str_or_null(f, cfg->address);
	fprintf(f, ", \"port\": %u, \"size\": %u,\n", cfg->port, cfg->size);
	fprintf(f, "  \"timestamps\": {\"wire\": \"%s\", \"server_wire\": %s, \"app\": %s, \"phc_index\": %d, \"rx_filter\": ",
		run.ts.hw ? "hardware" : "software", srv, cfg->sw_stamps ? "true" : "false", run.ts.phc_index);
	json_str_or_null(f, run.ts.hw ? ts_filter_name(run.ts.rx_filter) : NULL);
	fprintf(f, ", \"wire_offset_ns\": %" PRId64, run.ts.wire_off);
	fprintf(f, "},\n  \"duration_s\": %.6f, \"stop_reason\": \"%s\",\n", r->duration_s,
		stop_name[sess.stop_reason]);
}

/* ", "key": v" in an object, or null when the count is not known (--analyze). */
static void json_count(FILE *f, const char *key, uint64_t v, bool known)
{
	if (known) {
		fprintf(f, ", \"%s\": %" PRIu64, key, v);
	} else {
		fprintf(f, ", \"%s\": null", key);
	}
}

/* Every count: packets, warm-up, rejections, loss by direction, classes, missing stamps. */
static void json_counts(FILE *f, const struct report *r)
{
	char lab[16];
	int i;

	bool live = cfg->mode != MODE_ANALYZE;	/* --analyze: what a log cannot know is null */

	fprintf(f, "  \"packets\": {\"sent\": %" PRIu64 ", \"received\": %" PRIu64, sess.c.sent,
		sess.c.received);
	json_count(f, "lost", sess.c.lost, !run.lost_unknown);
	fprintf(f, ", \"late\": %" PRIu64, sess.c.late);
	json_count(f, "duplicate", sess.c.duplicate, live);
	json_count(f, "invalid", sess.c.invalid, live);
	json_count(f, "warmup", sess.c.warmup, analyze_warmup_known());
	json_count(f, "foreign", sess.c.foreign, live);
	json_count(f, "send_errors", sess.c.send_errors, live);
	json_count(f, "port_unreachable", sess.c.refused, live);
	json_count(f, "unmatched_tx_stamps", sess.c.tx_unmatched, live);
	json_count(f, "interval_overruns", result.overruns, live);
	fprintf(f, "},\n");
	fprintf(f,
		"  \"warmup_excluded\": {\"total\": %" PRIu64 ", \"flagged_by_client\": %" PRIu64
		", \"by_reflector_w\": %" PRIu64 ", \"w\": %" PRIu64 "},\n",
		sess.c.warmup, run.side.emit ? 0 : sess.c.warmup - sess.c.warmup_local,
		sess.c.warmup_local, cfg->warmup);
	/* a client of a -N reflector has no response: no basis to name (null) */
	fprintf(f, "  \"response_basis\": %s, \"tx_stamps\": %s,\n",
		resp_tx_app()			   ? "\"app_send_T3_SW-T2_wire\"" :
		run.side.emit && result.srv_no_tx ? "null" :
						   "\"wire_T3-T2\"",
		resp_tx_app() || cli_no_tx() ? "false" : "true");
	if (run.side.emit) {
		fprintf(f, "  \"rtt_basis\": \"%s\",\n", cli_no_tx() ? "app_send_T4_wire-T1_SW" : "wire_T4-T1");
	}
	json_rejected(f);
	if (r->split) {
		fprintf(f, "  \"loss_by_direction\": {\"out\": %" PRIu64 ", \"back\": %" PRIu64,
			r->lost_out, r->lost_back);
		json_count(f, "local", r->lost_local, live);
		fprintf(f, ", \"reflector_answered\": %" PRIu64 "},\n", result.srv_received);
	} else {
		fprintf(f, "  \"loss_by_direction\": null,\n");
	}
	fprintf(f, "  \"loss_by_direction_why\": ");
	json_str_or_null(f, *r->split_why ? r->split_why : NULL);
	fprintf(f, ",\n");
	cls_json(f);
	tsn_json(f);
	fprintf(f, "  \"missing_stamps\": {");
	for (i = 0; i < run.side.nstamps; i++) {
		int k = run.side.stamps[i];

		fprintf(f, "%s\"%s\": ", i ? ", " : "", stamp_name(k, lab, sizeof(lab)));
		if (run.stamps_unknown & (1u << k)) {
			fprintf(f, "null");	/* --analyze of a log without the column */
		} else {
			fprintf(f, "%" PRIu64, sess.c.missing[k]);
		}
	}
	fprintf(f, "},\n");
}

/* The metrics with samples, then the threshold's count. */
static void json_metrics(FILE *f, const struct report *r)
{
	int i, n = 0;

	fprintf(f, "  \"metrics\": {\n");
	for (i = 0; i < run.side.nmetrics; i++) {
		if (!sess.h[run.side.metrics[i]].n) {
			continue;
		}
		fputs(n++ ? ",\n" : "", f);
		json_metric(f, run.side.metrics[i]);
	}
	fprintf(f, "\n  },\n  \"threshold\": {\"us\": ");
	if (cfg->threshold_ns >= 0) {
		fprintf(f, "%.3f, \"exceeded\": %s, \"count\": %" PRIu64 ", \"percent\": %.6f",
			(double)cfg->threshold_ns / 1000, sess.c.breaches ? "true" : "false",
			sess.c.breaches, r->breach_pct);
		why_json_breaches(f);
	} else {
		fprintf(f, "null, \"exceeded\": false, \"count\": 0, \"percent\": 0, \"breaches\": []");
	}
	fprintf(f, "},\n");
}

/* The clocks (offset, drift, steps, warnings) and what the log file holds. */
static void json_clock_log(FILE *f, const struct report *r)
{
	int i;

	fprintf(f, "  \"clock\": {\"offset_ns\": ");
	if (run.side.emit && sess.offset.n && !run.ts.bond_switches) {
		fprintf(f, "%" PRId64, sess.best_offset);
	} else {
		fputs("null", f);
	}
	/* the same value named for what it is when one clock stamps both ends */
	fprintf(f, ", \"asymmetry_ns\": ");
	if (run.side.emit && sess.offset.n && r->ow_trusted && !run.ts.bond_switches) {
		fprintf(f, "%" PRId64, sess.best_offset);
	} else {
		fputs("null", f);
	}
	fprintf(f, ", \"drift_ppm\": ");
	if (run.side.emit && r->drift) {
		fprintf(f, "%.4f", r->ppm);
	} else {
		fputs("null", f);
	}
	fprintf(f, ", \"realtime_steps\": %" PRIu64 ", \"stepped_transactions\": %" PRIu64, run.clk.steps,
		run.clk.stepped);
	fprintf(f, ", \"warnings\": [");
	for (i = 0; i < r->nwarn; i++) {
		fputs(i ? ", " : "", f);
		json_str(f, r->warn[i]);
	}
	fprintf(f, "]},\n  \"log\": ");
	if (sess.log.cap) {
		fprintf(f, "{\"file\": ");
		json_str(f, cfg->log);
		fprintf(f, ", \"records\": %" PRIu64 ", \"dropped\": %" PRIu64 ", \"filtered\": %" PRIu64
			", \"bytes_per_record\": %u, \"warmup_not_written\": %" PRIu64 ", \"complete\": %s}",
			r->log_records, sess.log.dropped, sess.log.filtered, sess.log.rec_size,
			run.log_out.skipped, run.log_out.err ? "false" : "true");
	} else {
		fputs("null", f);
	}
}

/*
 * What the size let the pongs carry (print_room), and whether the reflector
 * takes TX stamps (emit: as its pongs said, null before any; reflect: -N).
 */
static void json_room(FILE *f)
{
	unsigned z, i, n = 0;
	uint16_t lack = room_lacking(&z);
	char lab[16];
	/* reflect: did the session's answers after its first go out on a socket of its own */
	int got = run.side.emit || cfg->mode != MODE_REFLECT ? SS_NOT_YET : (int)result.ss_got;

	fprintf(f, ",\n  \"pong_room\": ");
	if (lack) {
		fprintf(f, "{\"smallest_size\": %u, \"not_carried\": [", z);
		for (i = 0; i < ARRAY_SIZE(room_stamps); i++) {
			if (lack & stamp_field(room_stamps[i])) {
				fprintf(f, "%s\"%s\"", n++ ? ", " : "",
					stamp_name(room_stamps[i], lab, sizeof(lab)));
			}
		}
		fputs("]}", f);
	} else {
		fputs("null", f);
	}
	fprintf(f, ", \"reflector_tx_stamps\": %s", !run.side.emit ? (cfg->no_tx_ts ? "false" : "true") :
		!sess.c.received || cfg->mode == MODE_ANALYZE ? "null" :
		result.srv_no_tx ? "false" : "true");
	fprintf(f, ",\n  \"own_socket\": %s, \"own_socket_why\": ",
		got == SS_OWN ? "true" : got == SS_SHARED ? "false" : "null");
	json_str_or_null(f, got == SS_SHARED ? result.ss_why : NULL);
	/* --cpu-latency: the limit held while the run ran, or why none (--analyze: nothing ran) */
	if (run.cpulat.fd >= 0) {
		fprintf(f, ",\n  \"cpu_latency_us\": %d, \"cpu_latency_why\": null", run.cpulat.us);
	} else {
		fputs(",\n  \"cpu_latency_us\": null, \"cpu_latency_why\": ", f);
		json_str_or_null(f, cfg->mode == MODE_ANALYZE ? NULL : run.cpulat.why);
	}
}

/*
 * One object as one line (JSON Lines: a reflector writes one per session):
 * the writers' line breaks and the indentation after them become one space.
 * Strings never hold a raw line break (json_str escapes it).
 */
static void json_line(FILE *f, const char *s, size_t len)
{
	size_t i = 0, start = 0;
	char prev;

	while (i < len) {
		if (s[i] != '\n') {
			i++;
			continue;
		}
		fwrite(s + start, 1, i - start, f);
		prev = i ? s[i - 1] : '{';
		while (i < len && (s[i] == '\n' || s[i] == ' ')) {
			i++;
		}
		/* {"a": [1, 2]}: no space just inside a bracket */
		if (i < len && prev != '{' && prev != '[' && s[i] != '}' && s[i] != ']') {
			fputc(' ', f);
		}
		start = i;
	}
	fwrite(s + start, 1, len - start, f);
	fputc('\n', f);
}

/* The JSON report: one object on one line, its keys in the order the README lists them. */
static void json_report(FILE *f, const struct report *r, int exit_code)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m) {
		m = f;	/* no memory for the one-line form: the object as written */
	}
	json_run(m, r);
	json_counts(m, r);
	json_hw(m, r);
	json_metrics(m, r);
	json_clock_log(m, r);
	pmc_json(m);
	json_room(m);
	json_warnings(m);
	fprintf(m, ",\n  \"exit_code\": %d\n}", exit_code);
	run.warn.from = run.warn.n;
	if (m != f) {
		fclose(m);
		json_line(f, buf, len);
		free(buf);
	} else {
		fputc('\n', f);
	}
	fflush(f);
}

/* How a failed JSON write names its file. */
static const char *json_what(void)
{
	static char what[PATH_MAX + 32];

	if (!strcmp(cfg->json, "-")) {
		return "--json: writing to stdout";
	}
	snprintf(what, sizeof(what), "--json: writing %s", cfg->json);
	return what;
}

/* ----------------------------------------------------------------- plot */

/*
 * --plot FILE.svg: one self-contained SVG (no script, no external file or
 * font) drawn after the run, or from --analyze's rows; never from the
 * measurement loop.  The transactions (the log ring, or the parsed log) are
 * read twice: once for their time span, once into PLOT_BINS time bins per
 * series, each bin with its min, max and a log-bucketed histogram for p50
 * and p99.  Memory is fixed whatever the run's length; runs of up to
 * PLOT_RAW transactions keep every point.  The distribution is drawn from
 * the run's own histograms, so the percentiles written in the picture are
 * the report's and the JSON's numbers.
 *
 * The over-time part is drawn from an array of panels, each an array of
 * series (one panel today: all transactions); classes and sizes get small
 * histograms of their own further down (plot_groups_panel).
 */
#define PLOT_RAW	4000
#define PLOT_W		1200
#define PLOT_X0		92.0	/* plot area, left and right */
#define PLOT_X1		1170.0

/* Okabe-Ito: told apart with every common colour-vision deficiency, and in grey. */
#define OI_ORANGE	"#E69F00"
#define OI_SKY		"#56B4E9"
#define OI_GREEN	"#009E73"
#define OI_YELLOW	"#F0E442"
#define OI_BLUE		"#0072B2"
#define OI_VERMILLION	"#D55E00"
#define OI_PURPLE	"#CC79A7"

static const char *plot_metric_colour(int m)
{
	switch (m) {
	case M_RTT:
		return OI_BLUE;
	case M_RESPONSE:
		return OI_ORANGE;
	case M_NETWORK:
		return OI_GREEN;
	case M_FORWARD:
		return OI_SKY;
	case M_BACKWARD:
		return OI_PURPLE;
	}
	return "#666666";
}

/*
 * Where the plot reads transactions: the log ring's n (a run), or nothing
 * more (collected: --analyze fed plot_span and plot_bin as it read the log).
 */
struct plot_src {
	uint64_t n;
	const char *what;	/* title: what was measured or read */
	bool collected;
};

/* The moment a transaction started, on this side's clock; 0 if unknown. */
static uint64_t plot_time(const struct txn *x)
{
	if (run.side.emit) {
		return x->t[T1SW] ? x->t[T1SW] : x->t[T1W];
	}
	return x->t[T2W] ? x->t[T2W] : x->t[T2SW];
}

/* Log bucket of v: exact below 16 ns, then 16 per octave (about 4 % wide). */
static unsigned plot_lb(int64_t v)
{
	uint64_t u = v > 0 ? (uint64_t)v : 0;
	unsigned e;

	if (u < 16) {
		return (unsigned)u;
	}
	e = 63 - (unsigned)__builtin_clzll(u);
	return (e - 3) * 16 + (unsigned)((u >> (e - 4)) & 15);
}

/* The middle of log bucket i. */
static int64_t plot_lb_value(unsigned i)
{
	unsigned e;

	if (i < 16) {
		return i;
	}
	e = i / 16 + 3;
	return (int64_t)(((uint64_t)(16 + i % 16) << (e - 4)) + ((1ULL << (e - 4)) >> 1));
}

/* The value at percentile p of bin b, from its log histogram, within its min and max. */
static int64_t plot_bin_pct(const struct plot_series *s, int b, double p)
{
	const uint32_t *h = s->lh + (size_t)b * PLOT_LB;
	uint64_t rank = (uint64_t)num_ceil(p / 100 * s->bn[b]), cum = 0;
	unsigned i;
	int64_t v = s->bmax[b];

	rank = rank < 1 ? 1 : rank;
	for (i = 0; i < PLOT_LB; i++) {
		cum += h[i];
		if (cum >= rank) {
			v = plot_lb_value(i);
			break;
		}
	}
	return v < s->bmin[b] ? s->bmin[b] : v > s->bmax[b] ? s->bmax[b] : v;
}

static void plot_free(void)
{
	int p, k;

	for (p = 0; p < PLOT_MAXPANEL; p++) {
		for (k = 0; k < PLOT_MAXSER; k++) {
			struct plot_series *s = &plotter.panel[p].ser[k];

			free(s->bmin);
			free(s->bmax);
			free(s->bn);
			free(s->lh);
			free(s->rt);
			free(s->rv);
			memset(s, 0, sizeof(*s));
		}
	}
}

static int plot_series_init(struct plot_series *s, int m)
{
	memset(s, 0, sizeof(*s));
	s->m = m;
	s->bmin = calloc(PLOT_BINS, sizeof(*s->bmin));
	s->bmax = calloc(PLOT_BINS, sizeof(*s->bmax));
	s->bn = calloc(PLOT_BINS, sizeof(*s->bn));
	s->lh = calloc((size_t)PLOT_BINS * PLOT_LB, sizeof(*s->lh));
	s->rt = calloc(PLOT_RAW, sizeof(*s->rt));
	s->rv = calloc(PLOT_RAW, sizeof(*s->rv));
	return s->bmin && s->bmax && s->bn && s->lh && s->rt && s->rv ? 0 : -ENOMEM;
}

/* How many worst transactions the plot draws: --top's N (as the text lists), else PLOT_WORST. */
static int plot_worst_n(void)
{
	if (!cfg->top_set) {
		return PLOT_WORST;
	}
	return cfg->top < PLOT_WORST_MAX ? (int)cfg->top : PLOT_WORST_MAX;
}

/* Keep the plot_worst_n() largest values of the primary metric, largest first. */
static void plot_worst_add(const struct txn *x, int64_t v)
{
	int i, max = plot_worst_n();

	if (plotter.nworst == max && v <= plotter.worst[max - 1].v) {
		return;
	}
	i = plotter.nworst < max ? plotter.nworst++ : max - 1;
	for (; i > 0 && plotter.worst[i - 1].v < v; i--) {
		plotter.worst[i] = plotter.worst[i - 1];
	}
	plotter.worst[i].x = *x;
	plotter.worst[i].v = v;
}

/*
 * A --size list measures the sizes in turn: note when each began, for the
 * markers over time.  z: the turn (--analyze: from the log's SIZE column and
 * its turns); -1: the live run's, which the seq says (size_of).
 */
static void plot_size_seen(const struct txn *x, int z, uint64_t t)
{
	if (!run.side.emit || classes.nsz < 2) {
		return;
	}
	z = z < 0 ? size_of(x->seq) : z;
	if (!plotter.szt0[z] || t < plotter.szt0[z]) {
		plotter.szt0[z] = t;
	}
}

/* The id of size z's marks: "size64", or "size64-2" when the list repeats a size. */
static char *plot_size_id(char *buf, size_t len, const char *what, int z)
{
	int e;

	for (e = 0; e < z && classes.size[e] != classes.size[z]; e++) {
	}
	snprintf(buf, len, "%s%u", what, classes.size[z]);
	if (e < z) {
		snprintf(buf, len, "%s%u-%d", what, classes.size[z], z);
	}
	return buf;
}

/*
 * The picture over time is collected in two passes over the transactions:
 * the first (plot_span) finds the time span, the second (plot_bin) puts each
 * into its bin.  A lost transaction that got no stamp at all (not even its
 * TX stamp: dropped before the wire) is drawn and counted at the time of the
 * one before it, so that every loss the report counts is in the picture.
 */
static void plot_span_begin(const char *what)
{
	struct plot_panel *pn = &plotter.panel[0];

	plotter.npanel = 1;
	plotter.nworst = 0;
	plotter.t0 = plotter.t1 = plotter.tlast = 0;
	memset(plotter.szt0, 0, sizeof(plotter.szt0));
	memset(pn, 0, sizeof(*pn));
	snprintf(pn->title, sizeof(pn->title), "%s", what);
}

/* The first pass: transaction x (status st, size turn z or -1) into the time span. */
static void plot_span(const struct txn *x, int st, int z)
{
	struct plot_panel *pn = &plotter.panel[0];
	uint64_t t = plot_time(x);

	if (st == ST_WARMUP || (!t && !st_lost(st) && st != ST_LATE)) {
		return;
	}
	pn->nrec++;
	if (!t) {
		return;
	}
	plotter.t0 = !plotter.t0 || t < plotter.t0 ? t : plotter.t0;
	plotter.t1 = t > plotter.t1 ? t : plotter.t1;
	plot_size_seen(x, z, t);
}

/* Between the passes: the series of the metrics that have samples; 0 or -ENOMEM. */
static int plot_bins_begin(void)
{
	static const int emit_ser[] = { M_RTT, M_RESPONSE, M_NETWORK, M_FORWARD, M_BACKWARD };
	struct plot_panel *pn = &plotter.panel[0];
	char why[256];
	int k;
	/* one-way delays only when the report trusts them: else they carry the clocks' offset */
	bool ow = run.side.emit && oneway_trusted(why, sizeof(why));

	for (k = 0; k < (run.side.emit ? 5 : 1); k++) {
		int m = run.side.emit ? emit_ser[k] : M_RESPONSE;

		if (!sess.h[m].n || ((m == M_FORWARD || m == M_BACKWARD) && !ow)) {
			continue;	/* only metrics that exist */
		}
		if (plot_series_init(&pn->ser[pn->nser++], m) < 0) {
			return -ENOMEM;
		}
	}
	plotter.raw = pn->nrec <= PLOT_RAW;
	plotter.tlast = 0;
	return 0;
}

/* The second pass: transaction x (status st) into its time bin. */
static void plot_bin(const struct txn *x, int st)
{
	struct plot_panel *pn = &plotter.panel[0];
	uint64_t t = plot_time(x), span = plotter.t1 - plotter.t0 + 1;
	int64_t v;
	int b, k;

	if (st == ST_WARMUP || (!t && !st_lost(st) && st != ST_LATE)) {
		return;
	}
	t = t ? t : plotter.tlast ? plotter.tlast : plotter.t0;
	plotter.tlast = t;
	b = (int)((unsigned __int128)(t - plotter.t0) * PLOT_BINS / span);
	if (st_lost(st) || st == ST_LATE) {
		pn->lost[b]++;
		pn->nlost++;	/* every loss, a late pong's too, as the report counts them */
		pn->nlate += st == ST_LATE;
		return;
	}
	for (k = 0; k < pn->nser; k++) {
		struct plot_series *s = &pn->ser[k];

		if (!metric_value(s->m, x->t, &v)) {
			continue;
		}
		if (!s->bn[b] || v < s->bmin[b]) {
			s->bmin[b] = v;
		}
		if (!s->bn[b] || v > s->bmax[b]) {
			s->bmax[b] = v;
		}
		s->bn[b]++;
		s->lh[(size_t)b * PLOT_LB + plot_lb(v)]++;
		if (!s->n || v < s->min) {
			s->min = v;
		}
		if (!s->n || v > s->max) {
			s->max = v;
		}
		if (v > 0 && (!s->minpos || v < s->minpos)) {
			s->minpos = v;
		}
		s->n++;
		if (plotter.raw && s->nraw < PLOT_RAW) {
			s->rt[s->nraw] = t;
			s->rv[s->nraw++] = v;
		}
	}
	if (metric_value(run.side.primary, x->t, &v)) {
		if (cfg->threshold_ns >= 0 && v > cfg->threshold_ns) {
			pn->breach[b]++;
			pn->nbreach++;
		}
		plot_worst_add(x, v);
	}
}

/* Both passes over the log ring; 0 or -ENOMEM. */
static int plot_collect(const struct plot_src *src)
{
	struct txn x;
	uint64_t i;
	int st, r;

	plot_span_begin(src->what);
	for (i = 0; i < src->n; i++) {
		log_get(&sess.log, i, &x, &st);
		plot_span(&x, st, -1);
	}
	r = plot_bins_begin();
	for (i = 0; !r && i < src->n; i++) {
		log_get(&sess.log, i, &x, &st);
		plot_bin(&x, st);
	}
	return r;
}

/* ---- the SVG writer: a buffer, written in large pieces, first error kept */

static void svg_flush(void)
{
	struct plot_state *pl = &plotter;
	int r;

	if (pl->len && !pl->err && (r = write_all(pl->fd, pl->buf, pl->len)) < 0) {
		pl->err = -r;
	}
	pl->len = 0;
}

static void svg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void svg(const char *fmt, ...)
{
	size_t room;
	va_list ap;
	int n;

	if (plotter.len > sizeof(plotter.buf) - 4096) {
		svg_flush();
	}
	room = sizeof(plotter.buf) - plotter.len;
	va_start(ap, fmt);
	n = vsnprintf(plotter.buf + plotter.len, room, fmt, ap);
	va_end(ap);
	if (n > 0) {
		plotter.len += (size_t)n < room ? (size_t)n : room - 1;
	}
}

/* Text from outside (paths, command line): XML-escaped, ASCII only, at most max bytes. */
static void svg_esc(const char *s, size_t max)
{
	size_t i;

	for (i = 0; s && s[i] && i < max; i++) {
		unsigned char c = (unsigned char)s[i];

		if (plotter.len > sizeof(plotter.buf) - 16) {
			svg_flush();
		}
		if (c == '&') {
			svg("&amp;");
		} else if (c == '<') {
			svg("&lt;");
		} else if (c == '>') {
			svg("&gt;");
		} else if (c == '"') {
			svg("&quot;");
		} else {
			plotter.buf[plotter.len++] = c < 0x20 || c > 0x7e ? '?' : (char)c;
		}
	}
	if (s && s[i]) {
		svg("...");
	}
}

/* A duration in ns with the unit that suits it: "850 ns", "12.5 µs", "3 ms". */
static char *plot_dur(char *buf, size_t len, double ns)
{
	double a = fabs(ns);

	if (a == 0) {
		snprintf(buf, len, "0");
	} else if (a < 1e3) {
		snprintf(buf, len, "%.4g ns", ns);
	} else if (a < 1e6) {
		snprintf(buf, len, "%.4g \xc2\xb5s", ns / 1e3);
	} else if (a < 1e9) {
		snprintf(buf, len, "%.4g ms", ns / 1e6);
	} else {
		snprintf(buf, len, "%.4g s", ns / 1e9);
	}
	return buf;
}

/* An axis: value -> pixel, linear or log10, with its pixel ends. */
struct axis {
	double lo, hi, a, b;
	bool log;
};

static double ax_map(const struct axis *x, double v)
{
	double f, flo, fhi, p, pmin, pmax;

	if (x->log) {
		f = num_log10(v < x->lo ? x->lo : v);
		flo = num_log10(x->lo);
		fhi = num_log10(x->hi);
	} else {
		f = v;
		flo = x->lo;
		fhi = x->hi;
	}
	if (!(fhi > flo)) {
		return x->a;
	}
	p = x->a + (f - flo) * (x->b - x->a) / (fhi - flo);
	pmin = x->a < x->b ? x->a : x->b;
	pmax = x->a < x->b ? x->b : x->a;
	return p < pmin ? pmin : p > pmax ? pmax : p;
}

/* A round step (1, 2 or 5 times a power of ten) for about n ticks. */
static double nice_step(double range, int n)
{
	double raw = range / n, mag, r;

	if (!(raw > 0)) {
		return 1;
	}
	mag = num_pow10(num_decade(raw));
	r = raw / mag;
	return (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
}

/* Widen the axis to round ticks; a log axis to whole decades. */
static void ax_round(struct axis *x, int nticks)
{
	if (x->log) {
		x->lo = num_pow10(num_decade(x->lo > 0 ? x->lo : 1));
		x->hi = x->hi > x->lo ? x->hi : x->lo * 10;
		/* the lowest power of ten at or above hi */
		x->hi = num_pow10(num_decade(x->hi) + (x->hi > num_pow10(num_decade(x->hi))));
		if (x->hi <= x->lo) {
			x->hi = x->lo * 10;
		}
		return;
	}
	if (x->hi <= x->lo) {
		x->hi = x->lo + 1;
	}
	{
		double st = nice_step(x->hi - x->lo, nticks);

		x->lo = num_floor(x->lo / st) * st;
		x->hi = num_ceil(x->hi / st) * st;
	}
}

/*
 * Ticks and grid lines of an axis; horizontal (x) or vertical (y).  fmt
 * labels a value; a log axis gets 1-2-5 ticks over up to three decades,
 * decades only beyond.
 */
static void ax_draw(const struct axis *x, bool horiz, double other0, double other1,
		    char *(*fmt)(char *, size_t, double))
{
	double v, st;
	char lab[32];
	int i;

	if (x->log) {
		double decades = num_log10(x->hi / x->lo);

		for (v = x->lo; v <= x->hi * 1.0001; v *= 10) {
			static const double mult[] = { 1, 2, 5 };

			for (i = 0; i < (decades <= 3 ? 3 : 1); i++) {
				double t = v * mult[i], p = ax_map(x, t);

				if (t > x->hi * 1.0001) {
					break;
				}
				fmt(lab, sizeof(lab), t);
				if (horiz) {
					svg("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", p, other0, p,
					    other1, i ? "#eeeeee" : "#cccccc");
					svg("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", p, other1 + 15, lab);
				} else {
					svg("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>\n", other0, p,
					    other1, p, i ? "#eeeeee" : "#cccccc");
					svg("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", other0 - 5, p + 4, lab);
				}
			}
		}
		return;
	}
	st = nice_step(x->hi - x->lo, horiz ? 10 : 5);
	for (i = 0, v = num_ceil(x->lo / st - 1e-9) * st; v <= x->hi + st * 1e-6 && i < 40;
	     i++, v += st) {
		double p = ax_map(x, v);

		fmt(lab, sizeof(lab), fabs(v) < st * 1e-6 ? 0 : v);
		if (horiz) {
			svg("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", p, other0, p, other1);
			svg("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", p, other1 + 15, lab);
		} else {
			svg("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#dddddd\"/>\n", other0, p, other1, p);
			svg("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", other0 - 5, p + 4, lab);
		}
	}
}

static char *plot_count_label(char *buf, size_t len, double v)
{
	if (v >= 1e6) {
		snprintf(buf, len, "%.0fM", v / 1e6);
	} else if (v >= 1e3) {
		snprintf(buf, len, "%.0fk", v / 1e3);
	} else {
		snprintf(buf, len, "%.0f", v);
	}
	return buf;
}

static void plot_frame(double x0, double y0, double x1, double y1)
{
	svg("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#333333\"/>\n", x0, y0,
	    x1 - x0, y1 - y0);
}

static void plot_heading(double y, const char *text)
{
	svg("<text x=\"16\" y=\"%.1f\" font-size=\"15\" font-weight=\"bold\">%s</text>\n", y, text);
}

static void plot_swatch(double x, double y, const char *colour, const char *label, bool dash)
{
	svg("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"3\"%s/>\n", x, y - 4,
	    x + 22, y - 4, colour, dash ? " stroke-dasharray=\"5,3\"" : "");
	svg("<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x + 27, y, label);
}

/* The over-time axes of a panel: log latency from its series (and -t), seconds since the start. */
static void plot_time_axes(const struct plot_panel *pn, struct axis *ax, struct axis *ay, double y0,
			   double y1)
{
	int k;

	for (k = 0; k < pn->nser; k++) {
		const struct plot_series *s = &pn->ser[k];

		if (s->n && s->minpos && (!ay->lo || (double)s->minpos < ay->lo)) {
			ay->lo = (double)s->minpos;
		}
		if (s->n && (double)s->max > ay->hi) {
			ay->hi = (double)s->max;
		}
	}
	if (cfg->threshold_ns > 0 && (double)cfg->threshold_ns > ay->hi) {
		ay->hi = (double)cfg->threshold_ns;
	}
	if (!ay->lo) {
		ay->lo = ay->hi > 0 ? ay->hi / 10 : 1000;
		ay->hi = ay->hi > ay->lo ? ay->hi : ay->lo * 10;
	}
	ax_round(ay, 5);
	ax_round(ax, 10);
	ax->hi = ax->hi > 0 ? ax->hi : 1;
	svg("<g font-size=\"11\" fill=\"#222222\">\n");
	ax_draw(ay, false, PLOT_X0, PLOT_X1, plot_dur);
	{
		/* seconds since the first transaction, labelled with their unit */
		struct axis axn = *ax;

		axn.lo *= 1e9;
		axn.hi *= 1e9;
		ax_draw(&axn, true, y0, y1, plot_dur);
	}
	svg("</g>\n");
	svg("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\">time since the first transaction</text>\n",
	    (PLOT_X0 + PLOT_X1) / 2, y1 + 32);
	svg("<text x=\"20\" y=\"%.1f\" font-size=\"12\" transform=\"rotate(-90 20 %.1f)\" text-anchor=\"middle\">latency (log scale)</text>\n",
	    (y0 + y1) / 2, (y0 + y1) / 2);
	if (!pn->nrec) {
		svg("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"14\">no transactions</text>\n",
		    (PLOT_X0 + PLOT_X1) / 2, (y0 + y1) / 2);
	}
}

/* One run of non-empty bins [b, e) of a series: a closed min-max band, a p99 and a p50 line. */
static void plot_band(const struct plot_series *s, const struct axis *ax, const struct axis *ay,
		      int b, int e, const char *c, bool headline)
{
	double span = (double)(plotter.t1 - plotter.t0 + 1), xa, xb;
	uint32_t i;

	/* the headline metric's band stronger: bands of close metrics overlap */
	svg("<path fill=\"%s\" fill-opacity=\"%s\" stroke=\"none\" d=\"", c, headline ? "0.22" : "0.12");
	for (i = (uint32_t)b; i < (uint32_t)e; i++) {
		xa = ax_map(ax, span * i / PLOT_BINS / 1e9);
		xb = ax_map(ax, span * (i + 1) / PLOT_BINS / 1e9);
		svg("%s%.1f %.1fH%.1f", i == (uint32_t)b ? "M" : "L", xa, ax_map(ay, (double)s->bmax[i]), xb);
	}
	for (i = (uint32_t)e; i-- > (uint32_t)b;) {
		xa = ax_map(ax, span * i / PLOT_BINS / 1e9);
		xb = ax_map(ax, span * (i + 1) / PLOT_BINS / 1e9);
		svg("L%.1f %.1fH%.1f", xb, ax_map(ay, (double)s->bmin[i]), xa);
	}
	svg("Z\"/>\n");
	svg("<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.2\" stroke-dasharray=\"4,2\" points=\"", c);
	for (i = (uint32_t)b; i < (uint32_t)e; i++) {
		svg("%.1f,%.1f ", ax_map(ax, span * (i + 0.5) / PLOT_BINS / 1e9),
		    ax_map(ay, (double)plot_bin_pct(s, (int)i, 99)));
	}
	svg("\"/>\n<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\" points=\"", c);
	for (i = (uint32_t)b; i < (uint32_t)e; i++) {
		svg("%.1f,%.1f ", ax_map(ax, span * (i + 0.5) / PLOT_BINS / 1e9),
		    ax_map(ay, (double)plot_bin_pct(s, (int)i, 50)));
	}
	svg("\"/>\n");
}

/*
 * Every series: each point, or per run of bins a band (plot_band); the headline metric last, on
 * top.
 */
static void plot_time_series(const struct plot_panel *pn, const struct axis *ax,
			     const struct axis *ay)
{
	int k, b, e;

	for (k = pn->nser - 1; k >= 0; k--) {
		const struct plot_series *s = &pn->ser[k];
		const char *c = plot_metric_colour(s->m);
		uint32_t i;

		if (plotter.raw) {
			svg("<path fill=\"none\" stroke=\"%s\" stroke-width=\"2.6\" stroke-linecap=\"round\" d=\"", c);
			for (i = 0; i < s->nraw; i++) {
				svg("M%.1f %.1fh.1", ax_map(ax, (double)(s->rt[i] - plotter.t0) / 1e9),
				    ax_map(ay, (double)s->rv[i]));
			}
			svg("\"/>\n");
			continue;
		}
		for (b = 0; b < PLOT_BINS; b = e) {
			if (!s->bn[b]) {
				e = b + 1;
				continue;
			}
			for (e = b; e < PLOT_BINS && s->bn[e]; e++) {
			}
			plot_band(s, ax, ay, b, e, c, k == 0);
		}
	}
}

/* The threshold line, where each --size turn began, and the lost/late and breach strips. */
static void plot_time_marks(const struct plot_panel *pn, const struct axis *ax,
			    const struct axis *ay, double y0, double y1)
{
	double span = (double)(plotter.t1 - plotter.t0 + 1);
	char lab[64];
	int k, b;

	if (cfg->threshold_ns > 0) {
		double ty = ax_map(ay, (double)cfg->threshold_ns);

		svg("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\" stroke-dasharray=\"8,4\"/>\n",
		    PLOT_X0, ty, PLOT_X1, ty, OI_VERMILLION);
		svg("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-size=\"11\" fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">threshold %s</text>\n",
		    PLOT_X1 - 4, ty - 4, OI_VERMILLION,
		    plot_dur(lab, sizeof(lab), (double)cfg->threshold_ns));
	}
	/* a --size list: where each size's turn began */
	for (k = 0; k < classes.nsz && classes.nsz > 1; k++) {
		double x;

		if (!plotter.szt0[k]) {
			continue;
		}
		x = ax_map(ax, (double)(plotter.szt0[k] - plotter.t0) / 1e9);
		svg("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444444\" "
		    "stroke-dasharray=\"2,3\"/>\n", x, y0, x, y1);
		svg("<text id=\"%s\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#222222\" "
		    "stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">%u B</text>\n",
		    plot_size_id(lab, sizeof(lab), "phase", k), x + 3, y0 + 12, classes.size[k]);
	}
	/* two strips above the plot: lost or late transactions, and breaches, per bin */
	svg("<g font-size=\"11\"><text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">lost/late</text>\n", PLOT_X0 - 5, y0 - 26);
	svg("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">breach</text></g>\n", PLOT_X0 - 5, y0 - 8);
	svg("<path stroke=\"#000000\" stroke-width=\"1.6\" fill=\"none\" d=\"");
	for (b = 0; b < PLOT_BINS; b++) {
		if (pn->lost[b]) {
			double x = ax_map(ax, span * (b + 0.5) / PLOT_BINS / 1e9);

			svg("M%.1f %.1fl6 6m0 -6l-6 6", x - 3, y0 - 36);
		}
	}
	svg("\"/>\n<path fill=\"%s\" stroke=\"none\" d=\"", OI_VERMILLION);
	for (b = 0; b < PLOT_BINS; b++) {
		if (pn->breach[b]) {
			double x = ax_map(ax, span * (b + 0.5) / PLOT_BINS / 1e9);

			svg("M%.1f %.1fh8l-4 7z", x - 4, y0 - 18);
		}
	}
	svg("\"/>\n");
}

/* Latency over time of one panel; returns the height used. */
static double plot_time_panel(const struct plot_panel *pn, double top)
{
	const double y0 = top + 62, y1 = top + 302;
	struct axis ax = { 0, (double)(plotter.t1 - plotter.t0) / 1e9, PLOT_X0, PLOT_X1, false };
	struct axis ay = { 0, 0, y1, y0, true };
	double span = (double)(plotter.t1 - plotter.t0 + 1), lx;
	char lab[64], head[256];
	int k;

	snprintf(head, sizeof(head), "Latency over time%s%s", *pn->title ? ": " : "", pn->title);
	plot_heading(top + 16, head);
	plot_time_axes(pn, &ax, &ay, y0, y1);
	plot_time_series(pn, &ax, &ay);
	plot_time_marks(pn, &ax, &ay, y0, y1);
	plot_frame(PLOT_X0, y0, PLOT_X1, y1);
	/* legend */
	lx = PLOT_X0;
	for (k = 0; k < pn->nser; k++) {
		plot_swatch(lx, y1 + 52, plot_metric_colour(pn->ser[k].m),
			    metric_label(pn->ser[k].m), false);
		lx += 210;
	}
	if (plotter.raw) {
		snprintf(head, sizeof(head), "every transaction is a dot (%" PRIu64 ")", pn->nrec);
	} else {
		snprintf(head, sizeof(head), "%" PRIu64 " transactions in %d bins of %s: shaded min to max, solid p50, dashed p99",
			 pn->nrec, PLOT_BINS, plot_dur(lab, sizeof(lab), span / PLOT_BINS));
	}
	svg("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s; lost %" PRIu64 ", late %" PRIu64 ", breaches %" PRIu64 "</text>\n",
	    PLOT_X0, y1 + 70, head, pn->nlost, pn->nlate, pn->nbreach);
	return 386;
}

/*
 * --series with --plot: the lines as a picture, one step per interval of
 * the primary metric's p50, p99, p99.9 and max (the numbers of its line,
 * each interval's in a tooltip), and a cross over an interval with losses.
 */
static double plot_series_panel(double top)
{
	static const struct { const char *name, *dash; double w; size_t off; } st[] = {
		{ "max", "2,2", 1.2, offsetof(struct series_sum, max) },
		{ "p99.9", "6,3", 1.4, offsetof(struct series_sum, p999) },
		{ "p99", "4,2", 1.6, offsetof(struct series_sum, p99) },
		{ "p50", "", 2.0, offsetof(struct series_sum, p50) },
	};
	static const char *const colour[] = { "#444444", OI_PURPLE, OI_VERMILLION, OI_BLUE };
	const double y0 = top + 62, y1 = top + 302;
	struct axis ax = { 0, 0, PLOT_X0, PLOT_X1, false }, ay = { 0, 0, y1, y0, true };
	char lab[64], head[192];
	uint64_t lost = 0;
	size_t i, k;

	if (!series_sums.n) {
		return 0;
	}
	for (i = 0; i < series_sums.n; i++) {
		const struct series_sum *u = &series_sums.s[i];

		ax.hi = (double)u->to / 1e9 > ax.hi ? (double)u->to / 1e9 : ax.hi;
		if (u->samples && u->min > 0 && (!ay.lo || (double)u->min < ay.lo)) {
			ay.lo = (double)u->min;
		}
		ay.hi = u->samples && (double)u->max > ay.hi ? (double)u->max : ay.hi;
		lost += u->lost;
	}
	if (!ay.lo) {
		ay.lo = ay.hi > 0 ? ay.hi / 10 : 1000;
		ay.hi = ay.hi > ay.lo ? ay.hi : ay.lo * 10;
	}
	ax_round(&ay, 5);
	ax_round(&ax, 10);
	ax.hi = ax.hi > 0 ? ax.hi : 1;
	snprintf(head, sizeof(head), "Every %s (--series): %s", plot_dur(lab, sizeof(lab),
		 cfg->series_s * 1e9), metric_def[run.side.primary].key);
	plot_heading(top + 16, head);
	svg("<g font-size=\"11\" fill=\"#222222\">\n");
	ax_draw(&ay, false, PLOT_X0, PLOT_X1, plot_dur);
	{
		struct axis axn = ax;

		axn.lo *= 1e9;
		axn.hi *= 1e9;
		ax_draw(&axn, true, y0, y1, plot_dur);
	}
	svg("</g>\n");
	for (k = 0; k < ARRAY_SIZE(st); k++) {
		bool open = false;

		svg("<path fill=\"none\" stroke=\"%s\" stroke-width=\"%.1f\"%s%s%s d=\"", colour[k],
		    st[k].w, *st[k].dash ? " stroke-dasharray=\"" : "", st[k].dash,
		    *st[k].dash ? "\"" : "");
		for (i = 0; i < series_sums.n; i++) {
			const struct series_sum *u = &series_sums.s[i];
			int64_t v;

			if (!u->samples) {
				open = false;	/* no sample: a gap in the line */
				continue;
			}
			memcpy(&v, (const char *)u + st[k].off, sizeof(v));
			svg("%s%.1f %.1fH%.1f", open ? "L" : "M", ax_map(&ax, (double)u->from / 1e9),
			    ax_map(&ay, (double)v), ax_map(&ax, (double)u->to / 1e9));
			open = true;
		}
		svg("\"/>\n");
		plot_swatch(PLOT_X0 + 110.0 * (double)k, y1 + 52, colour[k], st[k].name,
			    *st[k].dash);
	}
	/* each interval's numbers, as its line says them, on hover */
	svg("<g fill=\"#ffffff\" fill-opacity=\"0\">\n");
	for (i = 0; i < series_sums.n; i++) {
		const struct series_sum *u = &series_sums.s[i];
		double xa = ax_map(&ax, (double)u->from / 1e9);
		double xb = ax_map(&ax, (double)u->to / 1e9);

		svg("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>interval %zu: "
		    "%.3f-%.3f s, samples %" PRIu64, xa, y0, xb - xa, y1 - y0, i,
		    (double)u->from / 1e9, (double)u->to / 1e9, u->samples);
		if (u->samples) {
			svg(", min %" PRId64 " ns, p50 %" PRId64 " ns, p99 %" PRId64 " ns, p99.9 %" PRId64
			    " ns, max %" PRId64 " ns", u->min, u->p50, u->p99, u->p999, u->max);
		}
		svg(", sent %" PRIu64 ", lost %" PRIu64 ", breaches %" PRIu64 "</title></rect>\n",
		    u->sent, u->lost, u->breaches);
	}
	svg("</g>\n<path stroke=\"#000000\" stroke-width=\"1.6\" fill=\"none\" d=\"");
	for (i = 0; i < series_sums.n; i++) {
		const struct series_sum *u = &series_sums.s[i];

		if (u->lost) {
			svg("M%.1f %.1fl6 6m0 -6l-6 6",
			    ax_map(&ax, (double)(u->from + u->to) / 2e9) - 3, y0 - 20);
		}
	}
	svg("\"/>\n");
	plot_frame(PLOT_X0, y0, PLOT_X1, y1);
	svg("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%zu intervals of the series' lines; "
	    "crossed above: an interval with losses (%" PRIu64 " in all)</text>\n",
	    PLOT_X0, y1 + 70, series_sums.n, lost);
	return 386;
}

/* The histogram column of value v (clamped to the axis). */
static int plot_col(const struct axis *ax, double v, int ncol)
{
	double f = ax->log ? (v > 0 ? num_log10(v / ax->lo) / num_log10(ax->hi / ax->lo) : 0) :
			     (v - ax->lo) / (ax->hi - ax->lo);
	int c = (int)(f * ncol);

	return c < 0 ? 0 : c >= ncol ? ncol - 1 : c;
}

/* n values in [lo, hi) into the columns of axis ax they cover. */
static void plot_hist_put(const struct axis *ax, int ncol, uint64_t *cnt, double lo, double hi,
			  uint64_t n)
{
	int c = plot_col(ax, lo, ncol), c1 = hi > lo ? plot_col(ax, hi - 1e-3, ncol) : c;

	if (c == c1) {
		cnt[c] += n;
	}
	/* a bucket wider than the columns (log axis, low end) covers each of them */
	for (; c1 > c && c <= c1; c++) {
		cnt[c] = n > cnt[c] ? n : cnt[c];
	}
}

/*
 * A histogram's counts in ncol columns of axis ax (cnt zeroed by the
 * caller); the largest.  Outliers come from the log bins, which hold every
 * one of them (the exact store may hold only the first), or from the store
 * where it holds all the run could give (no log bins).
 */
static uint64_t plot_hist_cols(const struct hist *h, const struct axis *ax, int ncol, uint64_t *cnt)
{
	uint64_t i, maxc = 0, lo, hi, nlh = hist_lh_len(h->bound_ns);
	int c;

	for (i = 0; i < h->nbuckets; i++) {
		double a = (double)(i * h->bucket_ns), z = a + (double)h->bucket_ns;

		if (h->bucket[i]) {
			z = z > (double)h->max + 1 ? (double)h->max + 1 : z;
			plot_hist_put(ax, ncol, cnt, a, z, h->bucket[i]);
		}
	}
	for (i = 0; !h->lh && i < h->out_n; i++) {
		plot_hist_put(ax, ncol, cnt, (double)h->out[i], (double)h->out[i], 1);
	}
	for (i = 0; h->lh && i < nlh; i++) {
		if (!h->lh[i]) {
			continue;
		}
		if (i < LH_N) {
			lh_range((uint32_t)(LH_N - 1 - i), &lo, &hi);
			plot_hist_put(ax, ncol, cnt, -(double)hi, -(double)lo + 1, h->lh[i]);
		} else {
			lh_range((uint32_t)(i - LH_N + h->lh_base), &lo, &hi);
			plot_hist_put(ax, ncol, cnt, (double)lo, (double)hi + 1, h->lh[i]);
		}
	}
	for (c = 0; c < ncol; c++) {
		maxc = cnt[c] > maxc ? cnt[c] : maxc;
	}
	return maxc;
}

/* Metrics the distribution shows: those of the first panel with samples. */
static int plot_hist_metrics(int *ms)
{
	const struct plot_panel *pn = &plotter.panel[0];
	int k, n = 0;

	for (k = 0; k < pn->nser; k++) {
		if (sess.h[pn->ser[k].m].n) {
			ms[n++] = pn->ser[k].m;
		}
	}
	return n;
}

/* The percentiles the table shows, and the ones marked on the histogram. */
static const int plot_pct_idx[] = { 0, 1, 3, 4, 5, 6 };	/* 50 90 99 99.9 99.99 99.999 */

/* The distribution: a histogram per metric with a log count axis (cyclictest's picture). */
/*
 * The latency axis of histograms hs: their range, log when a tail is far
 * from the body (>30x), rounded to ticks; the number of columns, none
 * narrower than a histogram bucket (a linear axis would draw a comb).
 */
static int plot_lat_axis(struct axis *ax, const struct hist *const *hs, int n, int ticks, int ncol)
{
	bool any = false;
	int k;

	for (k = 0; k < n; k++) {
		if (!hs[k]->n) {
			continue;
		}
		ax->lo = !any || (double)hs[k]->min < ax->lo ? (double)hs[k]->min : ax->lo;
		ax->hi = !any || (double)hs[k]->max > ax->hi ? (double)hs[k]->max : ax->hi;
		any = true;
	}
	ax->log = any && ax->lo > 0 && ax->hi / ax->lo > 30;
	if (!any) {
		ax->lo = 0;
		ax->hi = 1000;
	}
	ax_round(ax, ticks);
	if (!ax->log && (ax->hi - ax->lo) / (double)cfg->bucket_ns < ncol) {
		ncol = (int)((ax->hi - ax->lo) / (double)cfg->bucket_ns);
	}
	return ncol < 10 ? 10 : ncol;
}

/* The log count axis (from 1; it starts at 0.5 so that a count of 1 shows) and the latency axis. */
static void plot_hist_axes(const struct axis *ax, const struct axis *ay, double y0, double y1)
{
	char lab[64];
	double v;

	svg("<g font-size=\"11\" fill=\"#222222\">\n");
	for (v = 1; v <= ay->hi * 1.0001; v *= 10) {
		double p = ax_map(ay, v);

		svg("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#cccccc\"/>\n", PLOT_X0, p, PLOT_X1, p);
		svg("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", PLOT_X0 - 5, p + 4,
		    plot_count_label(lab, sizeof(lab), v));
	}
	ax_draw(ax, true, y0, y1, plot_dur);
	svg("</g>\n");
	svg("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"12\">latency%s</text>\n",
	    (PLOT_X0 + PLOT_X1) / 2, y1 + 32, ax->log ? " (log scale)" : "");
	svg("<text x=\"20\" y=\"%.1f\" font-size=\"12\" transform=\"rotate(-90 20 %.1f)\" text-anchor=\"middle\">transactions</text>\n",
	    (y0 + y1) / 2, (y0 + y1) / 2);
}

/* The percentiles of the headline metric (and its max), each a dashed line with its label. */
static void plot_hist_pcts(const struct hist *h, const struct axis *ax, double y0, double y1)
{
	double lastx = -1e9;
	int k, row = 0;

	for (k = 0; k < (int)ARRAY_SIZE(plot_pct_idx) + 1; k++) {
		bool approx = false;
		bool is_max = k == (int)ARRAY_SIZE(plot_pct_idx);
		int64_t v = is_max ? h->max : hist_pct(h, pct_value[plot_pct_idx[k]], &approx);
		double x = ax_map(ax, (double)v);

		/* a percentile the sample count cannot resolve is not marked */
		if (!is_max && (double)h->n * (100 - pct_value[plot_pct_idx[k]]) / 100 < 1) {
			continue;
		}
		svg("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000000\" stroke-width=\"1\" stroke-dasharray=\"3,3\"/>\n",
		    x, y0, x, y1);
		/* labels side by side where there is room, else stacked below the previous one */
		row = x - lastx < 44 && row < 5 ? row + 1 : 0;
		lastx = x;
		svg("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\" fill=\"#000000\" stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">%s%s</text>\n",
		    x, y0 + 11 + 11 * row, is_max ? "max" : "p",
		    is_max ? "" : pct_key[plot_pct_idx[k]]);
	}
}

/* ns as µs with three decimals: exact, so a reader (or a test) gets the report's number. */
static char *plot_us3(char *buf, size_t len, int64_t v)
{
	uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	snprintf(buf, len, "%s%" PRIu64 ".%03" PRIu64, v < 0 ? "-" : "", a / 1000, a % 1000);
	return buf;
}

/* The numbers under the histogram; every cell has an id (metric-column). */
static double plot_table(double top, const int *ms, int nser)
{
	static const char *const colname[] = {
		"samples", "min", "avg", "p50", "p90", "p95", "p99", "p99.9", "p99.99", "p99.999", "max",
	};
	/* the first column clear of the longest label, "backward one-way (T4-T3 wire)" */
	const double cx[] = { 355, 431, 508, 584, 661, 737, 814, 890, 967, 1043, 1120 };
	char lab[48];
	int k, j;

	svg("<g font-size=\"12\">\n<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">metric (values in \xc2\xb5s)</text>\n",
	    PLOT_X0, top);
	for (j = 0; j < 11; j++) {
		svg("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" font-weight=\"bold\">%s</text>\n", cx[j], top, colname[j]);
	}
	for (k = 0; k < nser; k++) {
		const struct hist *h = &sess.h[ms[k]];
		const char *key = metric_def[ms[k]].key;
		double y = top + 18 * (k + 1);
		bool approx = false;

		plot_swatch(PLOT_X0 - 30, y, plot_metric_colour(ms[k]), "", false);
		svg("<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", PLOT_X0, y, metric_label(ms[k]));
		svg("<text id=\"%s-samples\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%" PRIu64 "</text>\n", key, cx[0], y, h->n);
		svg("<text id=\"%s-min\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", key, cx[1], y,
		    plot_us3(lab, sizeof(lab), h->min));
		svg("<text id=\"%s-avg\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.3f</text>\n", key, cx[2], y,
		    hist_avg(h) / 1000);
		for (j = 0; j < NPCT; j++) {
			svg("<text id=\"%s-p%s\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", key, pct_key[j], cx[3 + j], y,
			    plot_us3(lab, sizeof(lab), hist_pct(h, pct_value[j], &approx)));
		}
		svg("<text id=\"%s-max\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", key, cx[10], y,
		    plot_us3(lab, sizeof(lab), h->max));
		if (approx) {
			svg("<text x=\"%.1f\" y=\"%.1f\">(approx.)</text>\n", cx[10] + 6, y);
		}
	}
	svg("</g>\n");
	return top + 18 * nser + 14;
}

static double plot_hist_panel(double top)
{
	const double y0 = top + 30, y1 = top + 250;
	struct axis ax = { 0, 0, PLOT_X0, PLOT_X1, false }, ay = { 0.5, 1, y1, y0, true };
	static uint64_t cnt[PLOT_MAXSER][400];
	uint64_t maxc = 0;
	int k, ncol = 300, c, nser = 0, ms[PLOT_MAXSER];
	const struct hist *hs[PLOT_MAXSER] = { NULL };

	plot_heading(top + 16, "Distribution (counts on a log scale)");
	nser = plot_hist_metrics(ms);
	for (k = 0; k < nser; k++) {
		hs[k] = &sess.h[ms[k]];
	}
	ncol = plot_lat_axis(&ax, hs, nser, 10, ncol);
	memset(cnt, 0, sizeof(cnt));
	for (k = 0; k < nser; k++) {
		uint64_t m = plot_hist_cols(&sess.h[ms[k]], &ax, ncol, cnt[k]);

		maxc = m > maxc ? m : maxc;
	}
	ay.hi = maxc > 1 ? (double)maxc : 10;
	ax_round(&ay, 5);
	ay.lo = 0.5;
	plot_hist_axes(&ax, &ay, y0, y1);
	/* the first metric filled, every one as a step outline */
	for (k = nser - 1; k >= 0; k--) {
		const char *col = plot_metric_colour(ms[k]);

		svg("<path fill=\"%s\" fill-opacity=\"%s\" stroke=\"%s\" stroke-width=\"1.4\" d=\"M%.1f %.1f", k ? "none" : col,
		    k ? "0" : "0.3", col, PLOT_X0, y1);
		for (c = 0; c < ncol; c++) {
			double xb = PLOT_X0 + (PLOT_X1 - PLOT_X0) * (c + 1) / ncol;
			double y = cnt[k][c] ? ax_map(&ay, (double)cnt[k][c]) : y1;

			svg("V%.1fH%.1f", y, xb);
		}
		svg("V%.1f%s\"/>\n", y1, k ? "" : "Z");
	}
	if (nser) {
		plot_hist_pcts(&sess.h[ms[0]], &ax, y0, y1);
	} else {
		svg("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"14\">no samples</text>\n",
		    (PLOT_X0 + PLOT_X1) / 2, (y0 + y1) / 2);
	}
	plot_frame(PLOT_X0, y0, PLOT_X1, y1);
	return plot_table(top + 300, ms, nser) - top;
}

/* A colour per segment of the decomposition, by the name segments() gives it. */
static const char *plot_seg_colour(const char *name)
{
	static const struct {
		const char *name, *colour;
	} c[] = {
		{ "client tx stack", OI_SKY }, { "network (both ways)", OI_GREEN },
		{ "server rx stack", OI_ORANGE }, { "server processing", OI_PURPLE },
		{ "server tx stack", OI_YELLOW }, { "client rx stack", OI_BLUE },
		{ "server response", OI_VERMILLION },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		if (!strcmp(name, c[i].name)) {
			return c[i].colour;
		}
	}
	return "#999999";
}

/* The worst transactions as stacked bars, one segment per part of the path. */
static double plot_worst_panel(double top)
{
	const double bx0 = 170, bx1 = 820, row = 20;	/* room on the right for the labels */
	struct axis ax = { 0, 0, bx0, bx1, false };
	const char *seen[8], *name[12];	/* segments() gives up to 11 */
	int64_t val[12];
	int i, k, n, nseen = 0;
	char lab[48], head[160];
	double y, lx;

	if (plotter.nworst && cfg->top_set && cfg->top > PLOT_WORST_MAX) {
		snprintf(head, sizeof(head), "The %d worst transactions by %s, decomposed (--top %" PRIu64 ": %d drawn)",
			 plotter.nworst, metric_def[run.side.primary].key, (uint64_t)cfg->top,
			 PLOT_WORST_MAX);
	} else if (plotter.nworst) {
		snprintf(head, sizeof(head), "The %d worst transactions by %s, decomposed", plotter.nworst, metric_def[run.side.primary].key);
	} else {
		snprintf(head, sizeof(head), "The worst transactions by %s", metric_def[run.side.primary].key);
	}
	plot_heading(top + 16, head);
	if (!plotter.nworst) {
		svg("<text x=\"%.1f\" y=\"%.1f\" font-size=\"13\">no measured transactions</text>\n", PLOT_X0, top + 44);
		return 64;
	}
	for (i = 0; i < plotter.nworst; i++) {
		double sum = 0;

		segments(plotter.worst[i].x.t, name, val, &n);
		for (k = 0; k < n; k++) {
			sum += val[k] > 0 ? (double)val[k] : 0;
		}
		ax.hi = sum > ax.hi ? sum : ax.hi;
	}
	ax_round(&ax, 8);
	y = top + 40;
	svg("<g font-size=\"11\" fill=\"#222222\">\n");
	ax_draw(&ax, true, y, y + row * plotter.nworst, plot_dur);
	svg("</g>\n");
	for (i = 0; i < plotter.nworst; i++) {
		const struct plot_worst *w = &plotter.worst[i];
		double x = bx0, ry = y + row * i, acc = 0;
		int dom = segments(w->x.t, name, val, &n);

		svg("<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">seq %" PRIu64 "</text>\n", bx0 - 8,
		    ry + 14, w->x.seq);
		for (k = 0; k < n; k++) {
			double x2;
			int s;

			/* a negative segment (clock skew) draws nothing */
			acc += val[k] > 0 ? (double)val[k] : 0;
			x2 = ax_map(&ax, acc);

			for (s = 0; s < nseen && strcmp(seen[s], name[k]); s++) {
			}
			if (s == nseen && nseen < 8) {
				seen[nseen++] = name[k];
			}
			if (x2 > x) {
				svg("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" stroke=\"#333333\" stroke-width=\"0.5\"/>\n",
				    x, ry + 3, x2 - x, row - 6, plot_seg_colour(name[k]));
			}
			x = x2;
		}
		/*
		 * The label gives the bar's length: with app stamps the segments run
		 * app stamp to app stamp, longer than the wire metric the bar was
		 * chosen by, which is named after it (a 114 us rtt drawn as 193 us
		 * under a "rtt 114 us" label said two things at once).
		 */
		if ((int64_t)acc == w->v) {
			svg("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s %s%s%s</text>\n", bx1 + 10,
			    ry + 14, metric_def[run.side.primary].key,
			    plot_dur(lab, sizeof(lab), (double)w->v), dom >= 0 ? ", most in " : "",
			    dom >= 0 ? name[dom] : "");
		} else {
			char wl[48];

			svg("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">bar %s (%s %s)%s%s</text>\n", bx1 + 10,
			    ry + 14, plot_dur(lab, sizeof(lab), acc),
			    metric_def[run.side.primary].key,
			    plot_dur(wl, sizeof(wl), (double)w->v), dom >= 0 ? ", most in " : "",
			    dom >= 0 ? name[dom] : "");
		}
	}
	plot_frame(bx0, y, bx1, y + row * plotter.nworst);
	y += row * plotter.nworst + 40;
	svg("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">each bar: the segments end to end (with -s on both sides: send() to receive, app stamp to app stamp); the number: its length, and its %s where that differs</text>\n",
	    bx0, y + 20, metric_def[run.side.primary].key);
	lx = bx0;
	for (k = 0; k < nseen; k++) {
		svg("<rect x=\"%.1f\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\" stroke=\"#333333\" stroke-width=\"0.5\"/>\n",
		    lx, y - 9, plot_seg_colour(seen[k]));
		svg("<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\">%s</text>\n", lx + 18, y, seen[k]);
		lx += 30 + 7.0 * (double)strlen(seen[k]);
	}
	return y - top + 34;
}

/*
 * Per class and per size (--priority/--tos and --size lists): a small
 * histogram each, side by side on shared axes, so that a class or a size that
 * behaves differently stands out.  Drawn from the rows' own histograms, the
 * ones the report's and the JSON's class and size tables come from: no
 * memory of its own, and the same numbers.  The class x size cells are in
 * the report and the JSON only (up to 128 would not make a picture).
 */
#define PLOT_GRP_H	200.0	/* height of a row of two small panels */
#define PLOT_GRP_COLS	150

/* The rows drawn: classes, then sizes; their count. */
static int plot_groups(int *gi)
{
	int c, n = 0;

	if (!run.side.emit || !classes.g) {
		return 0;
	}
	for (c = 0; classes.ncls > 1 && c < classes.ncls; c++) {
		gi[n++] = c;
	}
	for (c = 0; classes.nsz > 1 && c < classes.nsz; c++) {
		gi[n++] = classes.ncls + c;
	}
	return n;
}

/* A row of panels: with -s two more lines of numbers (app rtt, client tx stack). */
static double plot_grp_h(void)
{
	return PLOT_GRP_H + (cls_extra() ? (tsn.on ? 56 : 28) : 0);
}

static double plot_groups_height(void)
{
	int gi[CLS_MAX + SZ_MAX], n = plot_groups(gi);

	return n ? 34 + plot_grp_h() * ((n + 1) / 2) + 10 : 0;
}

/* One line of a panel's numbers: avg, p50, p99 and max of h, each with its id. */
static void plot_group_nums(const char *id, const char *key, struct hist *h, bool *approx)
{
	char lab[48];

	hist_finish(h);
	svg(", avg <tspan id=\"%s%s-avg\">%.3f</tspan>", id, key, hist_avg(h) / 1000);
	svg(", p50 <tspan id=\"%s%s-p50\">%s</tspan>", id, key,
	    plot_us3(lab, sizeof(lab), hist_pct(h, 50, approx)));
	svg(", p99 <tspan id=\"%s%s-p99\">%s</tspan>", id, key,
	    plot_us3(lab, sizeof(lab), hist_pct(h, 99, approx)));
	svg(", max <tspan id=\"%s%s-max\">%s</tspan> \xc2\xb5s", id, key,
	    plot_us3(lab, sizeof(lab), h->max));
}

static const char *const plot_xlabel[GX_N] = {
	"app rtt", "client tx stack", "launch error", "time to spare",
};

/*
 * With -s, under a panel: its row's app rtt and client tx stack, with
 * --txtime launch error and time to spare (ids CLASS-app_rtt-p50, ...).
 */
static void plot_group_x(int g, const char *id, double x0, double y)
{
	char key[40];
	bool approx = false;
	int k;

	for (k = 0; cls_extra() && k < GX_N; k++) {
		struct hist *h = &classes.g[g].x[k];

		if (!cls_x_measured(k)) {
			continue;
		}
		snprintf(key, sizeof(key), "-%s", metric_def[grp_xm[k]].key);
		svg("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s: samples <tspan id=\"%s%s-samples\">%"
		    PRIu64 "</tspan>", x0, y + 14 * k, plot_xlabel[k], id,
		    key, h->n);
		if (h->n) {
			plot_group_nums(id, key, h, &approx);
		}
		svg("%s</text>\n", approx ? " (approx.)" : "");
	}
}

/* One small panel: the heading, the histogram of row g, p50 and p99, the numbers with ids. */
static void plot_group(int g, double x0, double x1, double top, const struct axis *ax0,
		       const struct axis *ay0, int ncol)
{
	const double y0 = top + 22, y1 = top + 142;
	struct axis ax = *ax0, ay = *ay0;
	const struct hist *h = &classes.g[g].h;
	static uint64_t cnt[PLOT_GRP_COLS];
	char id[32], head[96], lab[48];
	bool approx = false;
	double v;
	int c;

	ax.a = x0;
	ax.b = x1;
	ay.a = y1;
	ay.b = y0;
	if (g < classes.ncls) {
		size_t n;

		snprintf(id, sizeof(id), "class%d", g);
		n = (size_t)snprintf(head, sizeof(head), "class %d", g);
		if (!classes.analyze && classes.prio[g] >= 0) {
			n += (size_t)snprintf(head + n, sizeof(head) - n, ", priority %d",
					      classes.prio[g]);
		}
		if (!classes.analyze && classes.tos[g] >= 0) {
			snprintf(head + n, sizeof(head) - n, ", tos 0x%02x", classes.tos[g]);
		}
	} else {
		plot_size_id(id, sizeof(id), "size", g - classes.ncls);
		snprintf(head, sizeof(head), "size %u B", classes.size[g - classes.ncls]);
	}
	svg("<text id=\"%s-title\" x=\"%.1f\" y=\"%.1f\" font-size=\"13\" "
	    "font-weight=\"bold\">%s</text>\n", id, x0, top + 14, head);
	svg("<g font-size=\"10\" fill=\"#222222\">\n");
	for (v = 1; v <= ay.hi * 1.0001; v *= 10) {
		double p = ax_map(&ay, v);

		svg("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#cccccc\"/>\n",
		    x0, p, x1, p);
		svg("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", x0 - 4, p + 4,
		    plot_count_label(lab, sizeof(lab), v));
	}
	ax_draw(&ax, true, y0, y1, plot_dur);
	svg("</g>\n");
	memset(cnt, 0, sizeof(cnt));
	if (h->n) {
		plot_hist_cols(h, &ax, ncol, cnt);
		svg("<path fill=\"%s\" fill-opacity=\"0.3\" stroke=\"%s\" stroke-width=\"1.2\" "
		    "d=\"M%.1f %.1f", OI_BLUE, OI_BLUE, x0, y1);
		for (c = 0; c < ncol; c++) {
			svg("V%.1fH%.1f", cnt[c] ? ax_map(&ay, (double)cnt[c]) : y1,
			    x0 + (x1 - x0) * (c + 1) / ncol);
		}
		svg("V%.1fZ\"/>\n", y1);
		for (c = 0; c < 2; c++) {
			double x = ax_map(&ax, (double)hist_pct(h, c ? 99 : 50, &approx));

			svg("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
			    "stroke=\"#000000\" stroke-dasharray=\"3,3\"/>\n", x, y0, x, y1);
			svg("<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" text-anchor=\"middle\" "
			    "stroke=\"#ffffff\" stroke-width=\"3\" paint-order=\"stroke\">"
			    "p%s</text>\n", x, y0 + 11 + 11 * c, c ? "99" : "50");
		}
	} else {
		svg("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">"
		    "no samples</text>\n", (x0 + x1) / 2, (y0 + y1) / 2);
	}
	plot_frame(x0, y0, x1, y1);
	/* the row's numbers, as the report's class/size table has them (values in µs) */
	svg("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">samples <tspan id=\"%s-samples\">%" PRIu64
	    "</tspan>", x0, y1 + 34, id, h->n);
	svg(", lost <tspan id=\"%s-lost\">%" PRIu64 "</tspan>", id, classes.g[g].n[CG_LOST]);
	if (h->n) {
		plot_group_nums(id, "", &classes.g[g].h, &approx);
	}
	svg("%s</text>\n", approx ? " (approx.)" : "");
	plot_group_x(g, id, x0, y1 + 48);
}

/* The small panels, two a row; returns the height used (0: a run without lists). */
static double plot_groups_panel(double top)
{
	const double gap = 70, w = (PLOT_X1 - PLOT_X0 - gap) / 2;
	struct axis ax = { 0, 0, 0, 0, false }, ay = { 0.5, 10, 0, 0, true };
	int gi[CLS_MAX + SZ_MAX], n = plot_groups(gi), k, ncol = PLOT_GRP_COLS;
	const struct hist *hs[CLS_MAX + SZ_MAX] = { NULL };
	char head[128];

	if (!n) {
		return 0;
	}
	snprintf(head, sizeof(head), "Per %s: %s distribution (shared axes, counts on a log scale)",
		 classes.ncls > 1 && classes.nsz > 1 ? "class and per size" : classes.ncls > 1 ? "class" : "size",
		 metric_def[run.side.primary].key);
	plot_heading(top + 16, head);
	/* shared axes: one latency range, one count range, so panels compare by eye */
	for (k = 0; k < n; k++) {
		hist_finish(&classes.g[gi[k]].h);
		hs[k] = &classes.g[gi[k]].h;
	}
	ncol = plot_lat_axis(&ax, hs, n, 5, ncol);
	for (k = 0; k < n; k++) {
		static uint64_t cnt[PLOT_GRP_COLS];
		uint64_t m;

		memset(cnt, 0, sizeof(cnt));
		m = plot_hist_cols(&classes.g[gi[k]].h, &ax, ncol, cnt);
		ay.hi = (double)m > ay.hi ? (double)m : ay.hi;
	}
	ax_round(&ay, 5);
	ay.lo = 0.5;	/* a count of 1 shows */
	for (k = 0; k < n; k++) {
		double x0 = PLOT_X0 + (k % 2) * (w + gap);

		plot_group(gi[k], x0, x0 + w, top + 34 + plot_grp_h() * (k / 2), &ax, &ay, ncol);
	}
	return plot_groups_height();
}

/*
 * A --size list on emit: latency against size, as pktgen users chart it --
 * p50, p99 and avg of the primary metric per size (the report's size rows),
 * joined in the order of size, and the numbers under it with ids
 * (bysize<SIZE>-p50 ...), so that they can be read back.
 */
#define PLOT_SZ_CHART	200.0

static bool plot_sizes_on(void)
{
	return run.side.emit && classes.g && classes.nsz > 1;
}

static double plot_sizes_height(void)
{
	return plot_sizes_on() ? 34 + PLOT_SZ_CHART + 44 + 16.0 * classes.nsz + 10 : 0;
}

static char *plot_bytes(char *buf, size_t len, double v)
{
	snprintf(buf, len, "%.0f B", v);
	return buf;
}

/* The size rows in the order of size (insertion sort: at most SZ_MAX of them). */
static void plot_sizes_order(int *ord)
{
	int i, j;

	for (i = 0; i < classes.nsz; i++) {
		for (j = i; j > 0 && classes.size[ord[j - 1]] > classes.size[i]; j--) {
			ord[j] = ord[j - 1];
		}
		ord[j] = i;
	}
}

/* Size z's p50 (k 0), p99 (1) or avg (2). */
static double plot_sizes_stat(int z, int k)
{
	const struct hist *h = &classes.g[classes.ncls + z].h;
	bool approx = false;

	return k == 2 ? hist_avg(h) : (double)hist_pct(h, k ? 99 : 50, &approx);
}

/* The chart's three lines, each a path through the sizes with samples, and its points. */
static void plot_sizes_lines(const int *ord, const struct axis *ax, const struct axis *ay)
{
	static const char *const colour[3] = { OI_BLUE, OI_VERMILLION, OI_GREEN };
	int k, i, n;

	for (k = 0; k < 3; k++) {
		svg("<path fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s d=\"", colour[k],
		    k == 2 ? " stroke-dasharray=\"5,3\"" : "");
		for (i = 0, n = 0; i < classes.nsz; i++) {
			if (classes.g[classes.ncls + ord[i]].h.n) {
				svg("%s%.1f %.1f", n++ ? " L" : "M", ax_map(ax, classes.size[ord[i]]),
				    ax_map(ay, plot_sizes_stat(ord[i], k)));
			}
		}
		svg("\"/>\n");
		for (i = 0; i < classes.nsz; i++) {
			double x = ax_map(ax, classes.size[ord[i]]);

			if (classes.g[classes.ncls + ord[i]].h.n) {
				svg("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"/>\n", x,
				    ax_map(ay, plot_sizes_stat(ord[i], k)), colour[k]);
			}
		}
	}
	plot_swatch(PLOT_X1 - 330, ay->b - 8, OI_BLUE, "p50", false);
	plot_swatch(PLOT_X1 - 230, ay->b - 8, OI_VERMILLION, "p99", false);
	plot_swatch(PLOT_X1 - 130, ay->b - 8, OI_GREEN, "avg", true);
}

/* The numbers of the chart, a line per size in the order of size (values in µs). */
static void plot_sizes_numbers(const int *ord, double y)
{
	static const char *const stat[3] = { "p50", "p99", "avg" };
	char id[32], lab[32];
	int i, k;

	for (i = 0; i < classes.nsz; i++, y += 16) {
		const struct hist *h = &classes.g[classes.ncls + ord[i]].h;

		plot_size_id(id, sizeof(id), "bysize", ord[i]);
		svg("<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%u B: samples "
		    "<tspan id=\"%s-samples\">%" PRIu64 "</tspan>", PLOT_X0, y, classes.size[ord[i]], id,
		    h->n);
		for (k = 0; k < 3 && h->n; k++) {
			svg(", %s <tspan id=\"%s-%s\">%s</tspan>", stat[k], id, stat[k],
			    plot_us3(lab, sizeof(lab), num_round(plot_sizes_stat(ord[i], k))));
		}
		svg("%s</text>\n", h->n ? " \xc2\xb5s" : "");
	}
}

static double plot_sizes_panel(double top)
{
	const double y0 = top + 34, y1 = top + 34 + PLOT_SZ_CHART;
	struct axis ax = { 0, 0, PLOT_X0, PLOT_X1, false }, ay = { 0, 0, y1, y0, false };
	int ord[SZ_MAX] = { 0 }, i;	/* plot_sizes_order fills nsz of them */
	char head[96];

	if (!plot_sizes_on()) {
		return 0;
	}
	plot_sizes_order(ord);
	ax.lo = classes.size[ord[0]];
	ax.hi = classes.size[ord[classes.nsz - 1]];
	for (i = 0; i < classes.nsz; i++) {
		hist_finish(&classes.g[classes.ncls + i].h);
		if (classes.g[classes.ncls + i].h.n) {
			double p99 = plot_sizes_stat(i, 1), avg = plot_sizes_stat(i, 2);

			ay.hi = p99 > ay.hi ? p99 : ay.hi;
			ay.hi = avg > ay.hi ? avg : ay.hi;
		}
	}
	ax_round(&ax, 8);
	ax_round(&ay, 5);
	snprintf(head, sizeof(head), "Latency against size: %s p50, p99 and avg per size",
		 metric_def[run.side.primary].key);
	plot_heading(top + 16, head);
	svg("<g font-size=\"10\" fill=\"#222222\">\n");
	ax_draw(&ax, true, y0, y1, plot_bytes);
	ax_draw(&ay, false, PLOT_X0, PLOT_X1, plot_dur);
	svg("</g>\n");
	plot_frame(PLOT_X0, y0, PLOT_X1, y1);
	plot_sizes_lines(ord, &ax, &ay);
	plot_sizes_numbers(ord, y1 + 44);
	return plot_sizes_height();
}

/* Title: what was measured, where, with which stamps, when, and how. */
static double plot_title(const struct plot_src *src)
{
	time_t when = (time_t)((plotter.t0 ? plotter.t0 : real_ns()) / NSEC_PER_SEC);
	struct tm tm;
	char date[64], lab[48];

	gmtime_r(&when, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S UTC", &tm);
	svg("<text x=\"16\" y=\"26\" font-size=\"18\" font-weight=\"bold\">rant ");
	if (cfg->mode == MODE_ANALYZE) {
		svg("--analyze ");
		svg_esc(cfg->analyze[0], 120);
		if (cfg->analyze[1]) {
			svg(" + ");
			svg_esc(cfg->analyze[1], 120);
		}
		svg(" (%s log)", run.side.emit ? "emit" : "reflect");
	} else if (run.side.emit) {
		svg("emit to ");
		svg_esc(cfg->address, 80);
	} else {
		svg("reflect, session 0x%08x", sess.id);
	}
	if (cfg->iface) {
		svg(" via ");
		svg_esc(cfg->iface, IFNAMSIZ);
	}
	svg(", %s</text>\n", date);
	svg("<text x=\"16\" y=\"46\" font-size=\"12\">wire stamps %s", tsrc(run.ts.hw));
	if (run.side.emit && (sess.srv_hw_known || cfg->mode == MODE_ANALYZE)) {
		svg(", server wire stamps %s", tsrc(sess.srv_hw));
	}
	svg(", app stamps %s; %" PRIu64 " samples of %s over %s; lost %" PRIu64 ", late %" PRIu64,
	    cfg->sw_stamps ? "on" : "off", sess.h[run.side.primary].n, metric_def[run.side.primary].key,
	    plot_dur(lab, sizeof(lab), session_duration() * 1e9), sess.c.lost, sess.c.late);
	if (cfg->threshold_ns >= 0) {
		svg("; threshold %s exceeded %" PRIu64 " times", plot_dur(lab, sizeof(lab), (double)cfg->threshold_ns),
		    sess.c.breaches);
	}
	svg("</text>\n<text x=\"16\" y=\"64\" font-size=\"11\" fill=\"#444444\">");
	svg_esc(cfg->cmdline, 190);
	if (src->n < sess.h[run.side.primary].n + sess.c.lost + sess.c.late ||
	    sess.log.dropped || cfg->log_threshold_ns >= 0) {
		svg(" (over time: the %" PRIu64 " transactions %s)", src->n,
		    cfg->log_threshold_ns >= 0 ? "above -L" : "the log ring kept");
	}
	svg("</text>\n");
	return 78;
}

/* Height of the over-time panels, the histogram and the worst-N panel. */
static double plot_height(void)
{
	int ms[PLOT_MAXSER], nser = plot_hist_metrics(ms);

	return 78 + 386.0 * (plotter.npanel + (series_sums.n > 0)) + 300 + 18 * nser + 14 + 20 +
	       (plotter.nworst ? 114 + 20.0 * plotter.nworst : 64) + 24 + plot_groups_height() +
	       plot_sizes_height();
}

/* Draw everything into PL.fd (rewound: a reflector redraws it each session); 0 or -errno. */
static int plot_draw(const struct plot_src *src)
{
	struct stat sb;
	double y, h;
	int p, r;

	plotter.len = 0;
	plotter.err = 0;
	r = src->collected ? 0 : plot_collect(src);
	if (r < 0) {
		plot_free();
		return r;
	}
	if (fstat(plotter.fd, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (ftruncate(plotter.fd, 0) < 0 || lseek(plotter.fd, 0, SEEK_SET) < 0)) {
		plot_free();
		return -errno;
	}
	h = plot_height();
	svg("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	svg("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
	    "font-family=\"DejaVu Sans, Liberation Sans, Arial, Helvetica, sans-serif\" fill=\"#000000\">\n",
	    PLOT_W, h, PLOT_W, h);
	svg("<title>rant %s latency</title>\n", run.side.emit ? "emit" : "reflect");
	svg("<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%.0f\" fill=\"#ffffff\"/>\n", PLOT_W, h);
	y = plot_title(src);
	for (p = 0; p < plotter.npanel; p++) {
		y += plot_time_panel(&plotter.panel[p], y);
	}
	y += plot_series_panel(y);
	y += plot_hist_panel(y) + 20;
	y += plot_groups_panel(y);
	y += plot_sizes_panel(y);
	y += plot_worst_panel(y);
	svg("<text x=\"%d\" y=\"%.0f\" font-size=\"10\" fill=\"#666666\" text-anchor=\"end\">rant %s</text>\n", PLOT_W - 10,
	    h - 8, RANT_VERSION);
	svg("</svg>\n");
	svg_flush();
	plot_free();
	return plotter.err ? -plotter.err : 0;
}

/* After a run or a reflector session: draw from the log ring. */
static int plot_run(const struct plot_src *src)
{
	int r;

	if (plotter.fd < 0) {
		return 0;
	}
	r = plot_draw(src);
	if (r < 0) {
		warnx_("--plot: writing %s failed: %s", cfg->plot, strerror(-r));
		return -1;
	}
	return 0;
}

/*
 * --histfile FILE: the primary metric's histogram as cyclictest's users plot
 * it -- one line per bucket, "value count", value the bucket's lower edge in
 * us (three decimals: exact to the ns) -- every bucket from 0 to the bound,
 * then the samples above it (kept exactly) in buckets of the same width, the
 * non-empty ones.  '#' lines say what it is; a reflector appends a block
 * per session, two empty lines apart (gnuplot's "index").
 */
static int histfile_open(void)
{
	bool created;

	if (!cfg->histfile) {
		return 0;
	}
	if (cfg->mode == MODE_ANALYZE) {
		return (outs.hf_fd = out_open_swap("--histfile", cfg->histfile)) < 0 ? -1 : 0;
	}
	outs.hf_fd = out_open("--histfile", cfg->histfile, &created);
	if (outs.hf_fd < 0 || out_truncate("--histfile", cfg->histfile, outs.hf_fd) < 0) {
		return -1;
	}
	return 0;
}

static void histfile_above(void *arg, uint64_t lower, uint64_t n)
{
	fprintf(arg, "%" PRIu64 ".%03" PRIu64 " %" PRIu64 "\n", lower / 1000, lower % 1000, n);
}

static void histfile_block(FILE *f)
{
	const struct hist *h = &sess.h[run.side.primary];
	uint64_t i;

	hist_finish(&sess.h[run.side.primary]);
	fprintf(f, "# rant %s: histogram of %s, %" PRIu64 " samples", RANT_VERSION,
		metric_label(run.side.primary), h->n);
	if (cfg->mode != MODE_ANALYZE) {
		fprintf(f, ", session 0x%08x", sess.id);
	}
	fprintf(f, "\n# %s\n", cfg->cmdline);
	fprintf(f, "# columns: value (us: the bucket's lower edge; a bucket is %" PRIu64 ".%03" PRIu64
		" us wide), count (samples in [value, value + width))\n", h->bucket_ns / 1000,
		h->bucket_ns % 1000);
	fprintf(f, "# every bucket from 0 to the bound %" PRIu64 ".%03" PRIu64 " us (-o), then the non-empty ones above it\n",
		h->bound_ns / 1000, h->bound_ns % 1000);
	fprintf(f, "# not in a bucket: %" PRIu64 " below zero, %" PRIu64 " above the bound not kept (store full)\n",
		hist_below(h), hist_above_not_kept(h));
	for (i = 0; i < h->nbuckets; i++) {
		uint64_t lower = i * h->bucket_ns;

		fprintf(f, "%" PRIu64 ".%03" PRIu64 " %" PRIu64 "\n", lower / 1000, lower % 1000,
			h->bucket[i]);
	}
	hist_above(h, histfile_above, f);
}

static const char *histfile_what(void)
{
	static char what[PATH_MAX + 32];

	snprintf(what, sizeof(what), "--histfile: writing %s", cfg->histfile);
	return what;
}

/* One block, appended at the file's end (the reflector's sessions in turn); 0 or -1. */
static int histfile_write(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;
	int r;

	if (outs.hf_fd < 0) {
		return 0;
	}
	m = open_memstream(&buf, &len);
	if (!m) {
		warnx_("--histfile: %s", strerror(errno));
		return -1;
	}
	if (outs.hf_blocks++) {
		fputs("\n\n", m);
	}
	histfile_block(m);
	fclose(m);
	r = buf ? out_write(histfile_what(), outs.hf_fd, buf, len) : -ENOMEM;
	free(buf);
	return r < 0 ? -1 : 0;
}

/*
 * The JSON, and its failure said.  A stream that stays open (a reflector's
 * JSON Lines, one line a session) must not carry a failure past the write
 * that caused it: what was still buffered is dropped and the error flag
 * cleared, so the next session's line is neither glued to this one's rest
 * nor reported failed for it; and where part of this line reached the file,
 * the next line starts on a line of its own.
 */
static void json_stream_report(FILE *json, const struct report *r, bool close_json, int *code)
{
	off_t at;

	errno = 0;
	if (outs.json_cut) {
		fputc('\n', json);
		outs.json_cut = false;
	}
	fflush(json);
	at = lseek(fileno(json), 0, SEEK_CUR);
	errno = 0;
	json_report(json, r, *code);
	if (out_finish(json_what(), json, close_json) < 0) {
		*code = EXIT_RUNTIME;
		out_swap_failed(cfg->json);
		if (!close_json) {
			__fpurge(json);
			clearerr(json);
			outs.json_cut = at < 0 || lseek(fileno(json), 0, SEEK_CUR) != at;
		}
	}
}

/*
 * The outputs of a run, a reflector session or --analyze, in order: the
 * text report (with --analyze's --top table), the picture and the JSON, the
 * text and the JSON from one computed report.  The JSON's exit_code is the
 * run's, a failed report or plot included.  n: the transactions drawn over
 * time; top NULL: a live run (its picture from the log ring), else
 * --analyze's worst rows (its picture collected while it read the log).
 */
static int report_outputs(FILE *out, FILE *json, bool close_json, int code, uint64_t n,
			  struct topn *top)
{
	struct plot_src src = { .n = n, .what = "", .collected = top != NULL };
	struct report r;

	report_compute(&r);
	errno = 0;
	session_report(out, &r);
	if (top) {
		print_top(out, top, cfg->top);
	}
	if (out_finish(out == stdout ? "stdout: writing the report" : "stderr: writing the report", out, false) < 0) {
		code = EXIT_RUNTIME;
	}
	/* each output written, or named as failed, on its own: a failed plot stops no histfile */
	if (plot_run(&src) < 0) {
		code = EXIT_RUNTIME;
		out_swap_failed(cfg->plot);
	}
	if (histfile_write() < 0) {
		code = EXIT_RUNTIME;
		out_swap_failed(cfg->histfile);
	}
	if (json) {
		json_stream_report(json, &r, close_json, &code);
	}
	return code;
}

/* The outputs of a live run (run.to->report): no --top table. */
static int report_live(FILE *out, FILE *json, bool close_json, int code, uint64_t n)
{
	return report_outputs(out, json, close_json, code, n, NULL);
}

static const struct outputs outputs_table = { .report = report_live };

/*
 * Opened with the other outputs, so that a path that cannot be written stops the run before it
 * starts.
 */
static int plot_open(void)
{
	bool created;

	if (!cfg->plot) {
		return 0;
	}
	if (cfg->mode == MODE_ANALYZE) {
		return (plotter.fd = out_open_swap("--plot", cfg->plot)) < 0 ? -1 : 0;
	}
	plotter.fd = out_open("--plot", cfg->plot, &created);
	if (plotter.fd < 0 || out_truncate("--plot", cfg->plot, plotter.fd) < 0) {
		return -1;
	}
	return 0;
}

/* -------------------------------------------------------------- analyze */

/*
 * --analyze streams its logs: each is read a slice at a time (ALOG_BUF) and
 * every row is accounted as it goes by, as the live run accounted it.  What
 * stays in memory is the live run's histograms, the --top heap, a window of
 * the SEQs below the highest (repeated rows, reordering) and, with two logs,
 * a window of the reflector's rows around the client's SEQ -- never the
 * rows, whatever the log's length.  --plot reads the logs a second time:
 * the picture over time needs the time span before it bins.
 */
#define ALOG_BUF	(1 << 20)

/*
 * Column kinds of a log header besides the stamps (a stamp column holds its
 * stamp index, >= 0).  C_PMC - k is counter slot k; CLASS and SIZE sit far
 * below every slot (and are tested first).
 */
enum { C_SEQ = -2, C_STATUS = -3, C_VAL = -4, C_PMC = -5, C_CLASS = -1000, C_SIZE = -1001 };

/* 28 columns: room for the kernel stamps' (both ends') and counters' columns. */
#define ALOG_COLS	28

/* What a log's header line said: the kind of each column, the metric of each latency column. */
struct alog_hdr {
	int col[ALOG_COLS], valm[ALOG_COLS], ncol;
};

/* One log being read: what its header said, where the reader is, and the row read last. */
struct alog {
	const char *path;
	int fd;
	bool emit, csv, hw, srv_hw, sw;
	int64_t wire_off;	/* csv header: the PHC - CLOCK_REALTIME the run took out */
	int64_t peer_off;	/* ... and the reflector's (client logs), if peer_off_on */
	bool peer_off_on;
	uint32_t have;		/* stamps the log has columns for */
	bool has_cls, has_size;	/* CLASS and SIZE columns (class and size lists) */
	/* csv header: what the ring dropped and -L filtered (-1: not said); the size turns */
	int64_t dropped, filtered;
	/* the first pass's rows and the file's size then: the plot's pass reads as many */
	uint64_t n_first;
	off_t size_first;
	/* csv header: the rows the writer announced (-1: not said), and its session */
	int64_t records;
	uint32_t session;
	bool session_known;
	int nturns;
	bool turns_given;	/* size_turns= said them (else found from the rows) */
	unsigned turn_size[SZ_MAX];
	uint64_t turn_seq0[SZ_MAX];
	struct alog_hdr H;
	uint64_t n, line;	/* rows read, and the number of the line read last */
	/* the file, a slice at a time: buf[pos, len) not read yet, buf[0] at file_off */
	char *buf;
	size_t pos, len;
	bool eof;
	off_t file_off, data_off;	/* data_off, data_line: the first row, for a second pass */
	off_t facts_at;			/* a csv's trailing "# rant" line: its offset; -1 none */
	bool head_facts;		/* the "# rant" line came first (an earlier build's csv) */
	uint64_t data_line;
	/* the row read last: its stamps, status, class and size */
	struct txn x;
	int st;
	uint32_t cls, size;
};

static int alog_error(const struct alog *L, uint64_t line, const char *what, const char *tok,
		      size_t toklen)
{
	/* line 0: the csv's trailing facts, read before the rows are counted */
	char at[32] = "last line";

	if (line) {
		snprintf(at, sizeof(at), "%" PRIu64, line);
	}
	warnx_("--analyze: %s:%s: %s%s%.*s%s", L->path, at, what, tok ? " '" : "", (int)toklen,
	       tok ? tok : "", tok ? "'" : "");
	return -1;
}

/* "T2_KSW" / "t2_ksw" -> stamp index and source; -1 if not a stamp name. */
static int alog_stamp(const char *s, size_t n, bool *hw)
{
	static const int wire_of[5] = { -1, T1W, T2W, T3W, T4W };
	static const int sw_of[5] = { -1, T1SW, T2SW, T3SW, T4SW };
	static const int k_of[5] = { -1, T1K, T2K, T3K, T4K };
	int k;

	if (n < 4 || (s[0] != 'T' && s[0] != 't') || s[1] < '1' || s[1] > '4' || s[2] != '_') {
		return -1;
	}
	k = s[1] - '0';
	if (n == 4 && (s[3] == 'K' || s[3] == 'k')) {
		return k_of[k];
	}
	if (n == 5 && !strncasecmp(s + 3, "SW", 2)) {
		return sw_of[k];
	}
	if (n == 5 && k == 1 && !strncasecmp(s + 3, "LT", 2)) {
		return T1L;	/* --txtime's launch time */
	}
	if (n == 5 && !strncasecmp(s + 3, "HW", 2)) {
		*hw = true;
		return wire_of[k];
	}
	if (n == 6 && !strncasecmp(s + 3, "KSW", 3)) {
		*hw = false;
		return wire_of[k];
	}
	return -1;
}

/* n (<= 19) decimal digits, nothing else: the hot loop of reading a log. */
static bool alog_digits(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';

		if (d > 9) {
			return false;
		}
		v = v * 10 + d;
	}
	*out = v;
	return true;
}

/* Parse "sec.nnnnnnnnn" exactly as the writer prints it; "" or "-" = missing. */
static bool alog_ns(const char *s, size_t n, uint64_t *out)
{
	uint64_t sec, frac;

	*out = 0;
	if (n == 0 || (n == 1 && s[0] == '-')) {
		return true;
	}
	/* seconds (up to 11 digits, the largest that cannot overflow), a dot, 9 digits */
	if (n < 11 || n > 21 || s[n - 10] != '.' || !alog_digits(s, n - 10, &sec) ||
	    !alog_digits(s + n - 9, 9, &frac) || sec > (UINT64_MAX - 999999999) / NSEC_PER_SEC) {
		return false;
	}
	*out = sec * NSEC_PER_SEC + frac;
	return *out != 0;
}

static bool alog_u64(const char *s, size_t n, uint64_t *out)
{
	*out = 0;
	return n && n <= 19 && alog_digits(s, n, out);
}

static bool alog_i64(const char *s, size_t n, int64_t *out)
{
	uint64_t u;
	bool neg = n && s[0] == '-';

	if (!alog_u64(s + neg, n - neg, &u) || u > INT64_MAX) {
		return false;
	}
	*out = neg ? -(int64_t)u : (int64_t)u;
	return true;
}

/* Split a line into fields (CSV: commas; text: runs of blanks). */
static int alog_split(const char *p, const char *end, bool csv, const char **f, size_t *len,
		      int max)
{
	int n = 0;

	if (csv) {
		while (n < max) {
			const char *c = memchr(p, ',', (size_t)(end - p));

			f[n] = p;
			len[n++] = (size_t)((c ? c : end) - p);
			if (!c) {
				return n;
			}
			p = c + 1;
		}
		return max + 1;
	}
	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t')) {
			p++;
		}
		if (p == end) {
			break;
		}
		if (n == max) {
			return max + 1;
		}
		f[n] = p;
		while (p < end && *p != ' ' && *p != '\t') {
			p++;
		}
		len[n] = (size_t)(p - f[n]);
		n++;
	}
	return n;
}

/* Named columns a header may carry, in the text and the csv spellings. */
static const struct {
	const char *name;
	bool nocase;
	int col, metric;
} alog_named[] = {
	{ "seq", true, C_SEQ, -1 },		{ "status", true, C_STATUS, -1 },
	{ "RTT", false, C_VAL, M_RTT },		{ "rtt_ns", false, C_VAL, M_RTT },
	{ "RESPONSE", false, C_VAL, M_RESPONSE }, { "response_ns", false, C_VAL, M_RESPONSE },
	{ "network_ns", false, C_VAL, M_NETWORK },
	{ "class", true, C_CLASS, -1 },		{ "size", true, C_SIZE, -1 },
	{ "forward_ns", false, C_VAL, M_FORWARD }, { "backward_ns", false, C_VAL, M_BACKWARD },
};

static bool alog_is(const char *f, size_t n, const char *name, bool nocase)
{
	return strlen(name) == n && !(nocase ? strncasecmp(f, name, n) : strncmp(f, name, n));
}

/* A stamp column: which stamps the log has, whose wire clock, which side wrote it. */
static void alog_stamp_col(struct alog *L, int s, bool hw, bool *emit)
{
	L->have |= 1u << s;
	if (stamp_is_wire[s]) {
		if (s == T1W || s == T4W) {
			L->hw = hw;
		} else {
			L->srv_hw = hw;
		}
	} else if (s < T1K) {
		L->sw = true;
	}
	*emit |= s == T1W || s == T4W || s == T1SW || s == T4SW || s == T1K || s == T4K || s == T1L;
}

/* The header line: every column known, SEQ first. */
static int alog_header(struct alog *L, struct alog_hdr *H, uint64_t line, const char **f,
		       size_t *len, int nf)
{
	bool hw = false, emit = false;
	int i, s, k;

	if (nf > ALOG_COLS || nf < 3) {
		return alog_error(L, line, "not a rant log header", NULL, 0);
	}
	for (i = 0; i < nf; i++) {
		H->valm[i] = -1;
		s = alog_stamp(f[i], len[i], &hw);
		if (s >= 0) {
			H->col[i] = s;
			alog_stamp_col(L, s, hw, &emit);
			continue;
		}
		for (k = 0; k < (int)ARRAY_SIZE(alog_named); k++) {
			if (alog_is(f[i], len[i], alog_named[k].name, alog_named[k].nocase)) {
				break;
			}
		}
		if (k < (int)ARRAY_SIZE(alog_named)) {
			H->col[i] = alog_named[k].col;
			H->valm[i] = alog_named[k].metric;
			L->has_cls |= H->col[i] == C_CLASS;
			L->has_size |= H->col[i] == C_SIZE;
		} else if (L->csv && pmc_log_column(f[i], len[i]) >= 0) {
			H->col[i] = C_PMC - pmc_log_column(f[i], len[i]);
		} else if (alog_is(f[i], len[i], "RESPONSE_APP_TX", false) ||
			   alog_is(f[i], len[i], "response_app_tx_ns", false)) {
			return alog_error(L, line, "a reflector log written with -N (response up to the app's send, "
					  "no T3 wire stamp): --analyze reads wire-to-wire logs", NULL, 0);
		} else if (alog_is(f[i], len[i], "RTT_APP_TX", false) ||
			   alog_is(f[i], len[i], "rtt_app_tx_ns", false)) {
			return alog_error(L, line, "a client log written with --client-no-tx-ts (rtt from the app's "
					  "send, no T1 wire stamp): --analyze reads wire-to-wire logs", NULL, 0);
		} else {
			return alog_error(L, line, "unknown column", f[i], len[i]);
		}
	}
	if (H->col[0] != C_SEQ) {
		return alog_error(L, line, "not a rant log header (first column must be SEQ)", NULL, 0);
	}
	L->emit = emit;
	if (!L->emit) {
		L->srv_hw = L->srv_hw || L->hw;
		L->hw = L->srv_hw;
	}
	H->ncol = nf;
	return 0;
}

/* The value of " key=" in a csv header line (before cmdline=): its text, or NULL. */
static const char *alog_key(const char *p, const char *end, const char *key, size_t *n)
{
	const char *c = memmem(p, (size_t)(end - p), " cmdline=", 9), *k;
	size_t kl = strlen(key);

	end = c ? c : end;
	k = memmem(p, (size_t)(end - p), key, kl);
	if (!k) {
		return NULL;
	}
	k += kl;
	for (*n = 0; k + *n < end && k[*n] != ' '; (*n)++) {
	}
	return k;
}

/*
 * A --size list's turns, "size_turns=64@0/1400@1050/64@2100" (each size and
 * its first SEQ): a list may repeat a size, back to back too.
 */
static int alog_turns(struct alog *L, uint64_t line, const char *k, size_t n)
{
	const char *e = k + n;
	uint64_t sz, seq;

	while (k < e) {
		const char *at = memchr(k, '@', (size_t)(e - k)), *sl;

		sl = at ? memchr(at, '/', (size_t)(e - at)) : NULL;
		sl = sl ? sl : e;
		if (!at || L->nturns == SZ_MAX || !alog_u64(k, (size_t)(at - k), &sz) ||
		    !alog_u64(at + 1, (size_t)(sl - at - 1), &seq) || sz < SIZE_MIN ||
		    sz > PROTO_MAX_SIZE || (L->nturns && seq < L->turn_seq0[L->nturns - 1])) {
			return alog_error(L, line, "bad size_turns", NULL, 0);
		}
		L->turn_size[L->nturns] = (unsigned)sz;
		L->turn_seq0[L->nturns++] = seq;
		k = sl + (sl < e);
	}
	L->turns_given = L->nturns > 0;
	return 0;
}

/*
 * A csv log's "# rant ..." line: the PHC - CLOCK_REALTIME offset the run took
 * out of its app-vs-wire segments (wire_offset_ns=), so that --analyze gives
 * the run's numbers from the raw stamps; what its ring dropped and -L
 * filtered (dropped=, filtered=: does it hold every transaction?); a size
 * list's turns (size_turns=).
 */
static int alog_comment(struct alog *L, uint64_t line, const char *p, const char *end)
{
	const char *k;
	size_t n;
	int64_t v;

	if ((k = alog_key(p, end, " wire_offset_ns=", &n))) {
		if (!alog_i64(k, n, &v) || v <= -(int64_t)STAMP_MAX || v >= (int64_t)STAMP_MAX) {
			return alog_error(L, line, "bad wire_offset_ns", k, n);
		}
		L->wire_off = v;
	}
	/* ... and the reflector's (client logs), from its pongs or FIN_ACK */
	if ((k = alog_key(p, end, " server_wire_offset_ns=", &n))) {
		if (!alog_i64(k, n, &v) || v <= -(int64_t)STAMP_MAX || v >= (int64_t)STAMP_MAX) {
			return alog_error(L, line, "bad server_wire_offset_ns", k, n);
		}
		L->peer_off = v;
		L->peer_off_on = true;
	}
	if ((k = alog_key(p, end, " dropped=", &n)) && !alog_i64(k, n, &L->dropped)) {
		return alog_error(L, line, "bad dropped", k, n);
	}
	if ((k = alog_key(p, end, " records=", &n)) && (!alog_i64(k, n, &L->records) || L->records < 0)) {
		return alog_error(L, line, "bad records", k, n);
	}
	if ((k = alog_key(p, end, " session=0x", &n))) {
		char *e;
		unsigned long id = n ? strtoul(k, &e, 16) : 0;

		if (!n || n > 8 || e != k + n) {
			return alog_error(L, line, "bad session", k, n);
		}
		L->session = (uint32_t)id;
		L->session_known = true;
	}
	if ((k = alog_key(p, end, " filtered=", &n)) && !alog_i64(k, n, &L->filtered)) {
		return alog_error(L, line, "bad filtered", k, n);
	}
	if ((k = alog_key(p, end, " size_turns=", &n)) && alog_turns(L, line, k, n) < 0) {
		return -1;
	}
	return 0;
}

/* One field of a row into transaction x (SEQ, STATUS, a stamp, CLASS, SIZE or a counter). */
static int alog_field(struct alog *L, uint64_t line, int col, const char *f, size_t len,
		      struct txn *x, int *st)
{
	uint64_t v;

	if (col == C_SEQ) {
		if (!alog_u64(f, len, &x->seq)) {
			return alog_error(L, line, "bad sequence number", f, len);
		}
	} else if (col == C_STATUS) {
		for (*st = 0; *st < NSTATUS; (*st)++) {
			if (alog_is(f, len, status_name[*st], false)) {
				break;
			}
		}
		if (*st == NSTATUS) {
			return alog_error(L, line, "bad status", f, len);
		}
	} else if (col >= 0) {
		if (!alog_ns(f, len, &x->t[col])) {
			return alog_error(L, line, "bad timestamp", f, len);
		}
	} else if (col == C_CLASS) {
		if (!alog_u64(f, len, &v) || v > CLS_MAX - 1) {
			return alog_error(L, line, "bad class", f, len);
		}
		L->cls = (uint32_t)v;
	} else if (col == C_SIZE) {
		/* only what rant sends: SIZE_MIN .. PROTO_MAX_SIZE bytes */
		if (!alog_u64(f, len, &v) || v < SIZE_MIN || v > PROTO_MAX_SIZE) {
			return alog_error(L, line, "bad size (not one rant sends)", f, len);
		}
		L->size = (uint32_t)v;
	} else if (col <= C_PMC) {
		x->pmc[C_PMC - col] = PMC_NONE;
		if (len && !alog_u64(f, len, &x->pmc[C_PMC - col])) {
			return alog_error(L, line, "bad counter value", f, len);
		}
	}
	return 0;
}

/* A latency column must agree with the stamps it came from; text logs spell a status there. */
static int alog_value(struct alog *L, uint64_t line, int m, const char *f, size_t len,
		      const struct txn *x, int *st)
{
	static const struct { const char *word; int st; } words[] = {
		{ "lost", ST_LOST }, { "late", ST_LATE }, { "stepped", ST_STEPPED },
		{ "launch_missed", ST_LMISS }, { "launch_invalid", ST_LINVAL },
	};
	int64_t want, got;
	bool known;
	int k;

	for (k = 0; !L->csv && k < (int)ARRAY_SIZE(words); k++) {
		if (alog_is(f, len, words[k].word, false)) {
			*st = words[k].st;
			return 0;
		}
	}
	known = metric_value(m, x->t, &want);
	if ((len == 0 || (len == 1 && f[0] == '-')) && (!known || *st != ST_OK)) {
		return 0;
	}
	if (!alog_i64(f, len, &got)) {
		return alog_error(L, line, "bad latency value", f, len);
	}
	if (!known || got != want) {
		return alog_error(L, line, "latency does not match its stamps", f, len);
	}
	return 0;
}


/* A row: its fields first, then every latency column checked against them. */
static int alog_row(struct alog *L, const char **f, size_t *len)
{
	const struct alog_hdr *H = &L->H;
	struct txn *x = &L->x;
	int i;

	memset(x, 0, sizeof(*x));
	/* PMC_NONE: a log without -M columns has no counts */
	memset(x->pmc, 0xff, sizeof(x->pmc));
	L->st = ST_OK;
	L->cls = L->size = 0;
	for (i = 0; i < H->ncol; i++) {
		if (alog_field(L, L->line, H->col[i], f[i], len[i], x, &L->st) < 0) {
			return -1;
		}
	}
	for (i = 0; i < H->ncol; i++) {
		if (H->col[i] == C_VAL &&
		    alog_value(L, L->line, H->valm[i], f[i], len[i], x, &L->st) < 0) {
			return -1;
		}
	}
	L->n++;
	return 0;
}

/* Read more of the file behind what is left in the buffer; 0 or -1. */
static int alog_fill(struct alog *L)
{
	ssize_t r;

	if (L->pos == 0 && L->len == ALOG_BUF) {
		return alog_error(L, L->line + 1, "a line longer than 1 MiB: not a rant log", NULL, 0);
	}
	memmove(L->buf, L->buf + L->pos, L->len - L->pos);
	L->file_off += (off_t)L->pos;
	L->len -= L->pos;
	L->pos = 0;
	do {
		r = read(L->fd, L->buf + L->len, ALOG_BUF - L->len);
	} while (r < 0 && errno == EINTR);
	if (r < 0) {
		warnx_("--analyze: cannot read '%s': %s", L->path, strerror(errno));
		return -1;
	}
	L->eof = r == 0;
	L->len += (size_t)r;
	return 0;
}

/* The next line, [*p, *le) without its end (\n or \r\n): 1, 0 at the end of the file, or -1. */
static int alog_line(struct alog *L, const char **p, const char **le)
{
	char *nl;

	while (!(nl = memchr(L->buf + L->pos, '\n', L->len - L->pos))) {
		if (L->eof) {
			if (L->pos == L->len) {
				return 0;
			}
			return alog_error(L, L->line + 1,
					  "truncated line (no newline at the end of the file)", NULL, 0);
		}
		if (alog_fill(L) < 0) {
			return -1;
		}
	}
	L->line++;
	*p = L->buf + L->pos;
	*le = nl > *p && nl[-1] == '\r' ? nl - 1 : nl;
	L->pos = (size_t)(nl + 1 - L->buf);
	return 1;
}

/*
 * The lines above the first row: csv comments, the header line, the text
 * format's dashed line.  A line that does not parse stops the analysis with
 * its line number (exit 2): numbers computed from a partly unreadable log
 * would look trustworthy and not be.
 */
static int alog_head(struct alog *L)
{
	const char *f[ALOG_COLS + 1], *p, *le;
	size_t len[ALOG_COLS + 1];
	bool header = false;
	int r, nf;

	while ((r = alog_line(L, &p, &le)) > 0) {
		if (le == p) {
			continue;	/* blank line */
		}
		if (header) {
			if (*p != '-') {
				return alog_error(L, L->line, "expected the dashed line under the header", NULL, 0);
			}
			return 0;
		}
		if (*p == '#') {
			L->csv = true;
			L->head_facts = true;
			if (alog_comment(L, L->line, p, le) < 0) {
				return -1;
			}
			continue;
		}
		L->csv = L->csv || memchr(p, ',', (size_t)(le - p));
		nf = alog_split(p, le, L->csv, f, len, ALOG_COLS);
		if (alog_header(L, &L->H, L->line, f, len, nf) < 0) {
			return -1;
		}
		header = true;
		if (L->csv) {
			return 0;
		}
	}
	if (r == 0 && header) {
		return 0;	/* a text header and nothing under it */
	}
	return r < 0 ? -1 : alog_error(L, L->line, "no header line: not a rant log", NULL, 0);
}

/*
 * A csv log rant writes now ends with its "# rant ..." line (log_csv_facts):
 * read from the file's last ALOG_FACTS_MAX bytes before the rows, since
 * the rows need its size turns and the analysis its offsets and session.
 * A csv without it (cut short, or not rant's) is read as one without facts:
 * the records= check then has nothing to compare.
 */
#define ALOG_FACTS_MAX		(256 * 1024)

static int alog_trailer(struct alog *L, off_t size)
{
	size_t n = size < ALOG_FACTS_MAX ? (size_t)size : ALOG_FACTS_MAX;
	char *t = malloc(n + 1), *s;
	ssize_t got;
	int r = 0;

	if (!t) {
		warnx_("--analyze: out of memory");
		return -1;
	}
	got = pread(L->fd, t, n, size - (off_t)n);
	if (got != (ssize_t)n || !n || t[n - 1] != '\n') {
		free(t);
		return 0;	/* no whole last line: no facts (alog_line says a cut line) */
	}
	t[n - 1] = 0;
	s = strrchr(t, '\n');
	s = s ? s + 1 : t;
	if (!strncmp(s, "# rant ", 7) && (s > t || (off_t)n == size)) {
		char *e = t + n - 1;

		if (e > s && e[-1] == '\r') {
			e--;
		}
		L->facts_at = size - (off_t)n + (off_t)(s - t);
		r = alog_comment(L, 0, s, e);
	}
	free(t);
	return r;
}

/* Open a log and read its header; the first row is next.  0, or -1 said. */
static int alog_open(const char *path, struct alog *L)
{
	struct stat sb;

	memset(L, 0, sizeof(*L));
	L->path = path;
	L->dropped = L->filtered = L->records = -1;
	L->facts_at = -1;
	/* O_NONBLOCK: opening a FIFO must not wait for a writer */
	L->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (L->fd < 0 || fstat(L->fd, &sb) < 0) {
		warnx_("--analyze: cannot read '%s': %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(sb.st_mode)) {
		warnx_("--analyze: '%s' is %s, not a regular file (a log is read whole; a FIFO or device could block or never end)",
		       path, out_kind(sb.st_mode));
		return -1;
	}
	if (!sb.st_size) {
		warnx_("--analyze: '%s' is empty or unreadable", path);
		return -1;
	}
	posix_fadvise(L->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	L->buf = malloc(ALOG_BUF);
	if (!L->buf) {
		warnx_("--analyze: out of memory");
		return -1;
	}
	if (alog_head(L) < 0) {
		return -1;
	}
	if (L->csv && !L->head_facts && alog_trailer(L, sb.st_size) < 0) {
		return -1;
	}
	L->data_off = L->file_off + (off_t)L->pos;
	L->data_line = L->line;
	return 0;
}

/* The next row into L->x, L->st, L->cls, L->size: 1, 0 at the end, or -1 said. */
static int alog_next(struct alog *L)
{
	const char *f[ALOG_COLS + 1], *p, *le;
	size_t len[ALOG_COLS + 1];
	int r, nf;

	while ((r = alog_line(L, &p, &le)) > 0) {
		if (le == p) {
			continue;
		}
		if (*p == '#' && L->facts_at >= 0 &&
		    L->file_off + (off_t)(p - L->buf) == L->facts_at) {
			continue;	/* the trailing facts, read at open (alog_trailer) */
		}
		if (*p == '#') {
			return alog_error(L, L->line, "a second log header (several sessions in one file: split it)",
					  NULL, 0);
		}
		nf = alog_split(p, le, L->csv, f, len, ALOG_COLS);
		if (nf != L->H.ncol) {
			return alog_error(L, L->line, nf < L->H.ncol ? "too few fields" : "too many fields", NULL, 0);
		}
		return alog_row(L, f, len) < 0 ? -1 : 1;
	}
	return r;
}

/* Back to the first row, for a second pass. */
static int alog_rewind(struct alog *L)
{
	if (lseek(L->fd, L->data_off, SEEK_SET) < 0) {
		warnx_("--analyze: cannot read '%s' again: %s", L->path, strerror(errno));
		return -1;
	}
	L->file_off = L->data_off;
	L->pos = L->len = 0;
	L->eof = false;
	L->line = L->data_line;
	L->n = 0;
	return 0;
}

static void alog_close(struct alog *L)
{
	if (L->fd >= 0) {
		close(L->fd);
	}
	free(L->buf);
	L->fd = -1;
	L->buf = NULL;
}

/* ---- the analysis: repeated SEQs, the join, size turns, classes, --top */

/*
 * SEQs a window remembers below the highest: a repeated row is counted once,
 * an earlier SEQ after a later one is reordering (the reflector's own window
 * is SEEN_BITS).  A SEQ further below the highest than the window is not in
 * a log rant writes.
 */
#define ASEEN_BITS	65536
/* The reflector's rows kept around the client's SEQ; read ahead past reordering there */
#define JOIN_WIN	65536
#define JOIN_AHEAD	(2 * SEEN_BITS)

enum { SEQ_NEW, SEQ_EARLIER, SEQ_REPEATED, SEQ_TOO_OLD };

struct aseen {
	uint64_t bits[ASEEN_BITS / 64];
	uint64_t top;
	bool any;
};

/* The server's stamps a reflector row gives the client's row of its SEQ. */
static const int join_stamps[] = { T2W, T2SW, T3SW, T3W, T2K, T3K };

struct ajoin_slot {
	uint64_t seq, t[ARRAY_SIZE(join_stamps)];
	bool used;
};

/* What --analyze keeps while the rows go by (analyze_main's; nothing of it is per row). */
struct analysis {
	struct alog L[2];	/* the client's log (or the only one), then the reflector's */
	int nlogs;
	struct aseen seen, rseen;	/* SEQs of each log */
	uint64_t low, distinct, repeated, first, last;
	bool any_sw;
	/* the reflector's rows around the client's SEQ */
	struct ajoin_slot *jw;
	uint64_t joined, mism, rrows, rlow;
	bool rdone;
	int maxcls;		/* the highest class so far */
	int metrics[NMETRIC], nmetrics;	/* those the log's columns can give */
	struct grp *wide;	/* class and size rows in the widest shape, until the end */
	int wcls, wsz;
	struct topn top;
};

static int aseen_mark(struct aseen *S, uint64_t seq)
{
	uint64_t i;

	if (!S->any || seq > S->top) {
		if (!S->any || seq - S->top >= ASEEN_BITS) {
			memset(S->bits, 0, sizeof(S->bits));
		} else {
			for (i = S->top + 1; i < seq; i++) {
				S->bits[(i % ASEEN_BITS) / 64] &= ~(1ULL << (i % 64));
			}
		}
		S->top = seq;
		S->any = true;
		S->bits[(seq % ASEEN_BITS) / 64] |= 1ULL << (seq % 64);
		return SEQ_NEW;
	}
	if (S->top - seq >= ASEEN_BITS) {
		return SEQ_TOO_OLD;
	}
	if (S->bits[(seq % ASEEN_BITS) / 64] & (1ULL << (seq % 64))) {
		return SEQ_REPEATED;
	}
	S->bits[(seq % ASEEN_BITS) / 64] |= 1ULL << (seq % 64);
	return SEQ_EARLIER;
}

/* The SEQ of the row read last, against the window: kind, or -1 said. */
static int analyze_seq(struct aseen *S, struct alog *L)
{
	int k = aseen_mark(S, L->x.seq);

	if (k == SEQ_TOO_OLD) {
		return alog_error(L, L->line, "SEQ more than 65536 below an earlier one: not a log rant writes",
				  NULL, 0);
	}
	return k;
}

/* Read the reflector's rows until they pass seq by JOIN_AHEAD; 0 or -1. */
static int join_read(struct analysis *A, uint64_t seq)
{
	struct alog *R = &A->L[1];
	int r, k, i;

	while (!A->rdone && (!A->rseen.any || A->rseen.top < seq + JOIN_AHEAD)) {
		struct ajoin_slot *s;

		r = alog_next(R);
		if (r <= 0) {
			A->rdone = true;
			return r;
		}
		if ((k = analyze_seq(&A->rseen, R)) < 0) {
			return -1;
		}
		if (k == SEQ_REPEATED) {
			continue;	/* the first row of a SEQ is the one joined */
		}
		s = &A->jw[R->x.seq % JOIN_WIN];
		s->seq = R->x.seq;
		s->used = true;
		for (i = 0; i < (int)ARRAY_SIZE(join_stamps); i++) {
			s->t[i] = R->x.t[join_stamps[i]];
		}
		A->rlow = !A->rrows || R->x.seq < A->rlow ? R->x.seq : A->rlow;
		A->rrows++;
	}
	return 0;
}

/* The client's row x gets the server stamps of the reflector's row of its SEQ; 0 or -1. */
static int join_row(struct analysis *A, struct txn *x)
{
	struct ajoin_slot *s;
	int i;

	if (join_read(A, x->seq) < 0) {
		return -1;
	}
	s = &A->jw[x->seq % JOIN_WIN];
	if (!s->used || s->seq != x->seq) {
		return 0;
	}
	A->joined++;
	for (i = 0; i < (int)ARRAY_SIZE(join_stamps); i++) {
		uint64_t *dst = &x->t[join_stamps[i]];

		if (*dst && s->t[i] && *dst != s->t[i]) {
			A->mism++;
		}
		if (!*dst) {
			*dst = s->t[i];
		}
	}
	return 0;
}

/* A pass starts: no SEQ seen, no reflector row read. */
static void analyze_pass_reset(struct analysis *A)
{
	memset(&A->seen, 0, sizeof(A->seen));
	memset(&A->rseen, 0, sizeof(A->rseen));
	if (A->jw) {
		memset(A->jw, 0, JOIN_WIN * sizeof(*A->jw));
	}
	A->joined = A->mism = A->rrows = A->rlow = 0;
	A->rdone = false;
}

/*
 * The size turn of the row read last.  A --size list measures its sizes in
 * turn, in SEQ order: the csv header's size_turns says where each began;
 * without it, a row of the last turn whose SIZE is not that turn's starts
 * the next one (so 64,1400,64 is three turns; a size repeated back to back
 * is one turn there).  The turns found stay in L for a second pass.  -1 said.
 */
static int analyze_turn(struct alog *L)
{
	int z;

	if (!L->has_size) {
		return 0;
	}
	if (!L->nturns) {
		L->turn_size[0] = L->size;
		L->turn_seq0[0] = 0;
		L->nturns = 1;
	}
	for (z = L->nturns - 1; z > 0 && L->x.seq < L->turn_seq0[z]; z--) {
	}
	if (L->turn_size[z] == L->size) {
		return z;
	}
	if (L->turns_given || z < L->nturns - 1) {
		return alog_error(L, L->line, "SIZE is not the size of its turn: not a log rant writes", NULL, 0);
	}
	if (L->nturns == SZ_MAX) {
		return alog_error(L, L->line, "more than 16 size turns", NULL, 0);
	}
	L->turn_size[L->nturns] = L->size;
	L->turn_seq0[L->nturns] = L->x.seq;
	return L->nturns++;
}

/*
 * A log with CLASS / SIZE columns (a run with class or size lists): the
 * class and size tables again, each row taken from its columns.  Until the
 * classes and turns are all known, rows live in the widest shape (CLS_MAX
 * classes, SZ_MAX turns), each histogram made at its first use.
 */
static int analyze_cls_start(struct analysis *A)
{
	const struct alog *L = &A->L[0];
	int z;

	if (!L->emit || (!L->has_cls && !L->has_size)) {
		return 0;
	}
	A->wcls = classes.ncls = L->has_cls ? CLS_MAX : 1;
	A->wsz = classes.nsz = L->has_size ? SZ_MAX : 1;
	classes.ng = classes.ncls + classes.nsz + classes.ncls * classes.nsz;
	classes.g = calloc((size_t)classes.ng, sizeof(*classes.g));
	if (!classes.g) {
		warnx_("--analyze: out of memory");
		return -1;
	}
	for (z = 0; z < CLS_MAX; z++) {
		classes.prio[z] = classes.tos[z] = -1;
	}
	classes.analyze = true;
	return 0;
}

/* A class or size row's histograms, made at its first use (with -s: app rtt, tx stack too). */
static int analyze_grp_alloc(struct grp *g, uint64_t nb)
{
	int k;

	if (!g->h.bucket && cls_hist_alloc(&g->h, nb, OUT_CAP) < 0) {
		return -1;
	}
	for (k = 0; cls_extra() && k < GX_N && cls_x_on(k); k++) {
		if (!g->x[k].bucket && cls_hist_alloc(&g->x[k], nb, OUT_CAP) < 0) {
			return -1;
		}
	}
	return 0;
}

/* The row read last into its class and size rows, as the live run counts them. */
static int analyze_cls_row(struct analysis *A, int st, int z)
{
	uint64_t nb = (cfg->bound_ns + cfg->bucket_ns - 1) / cfg->bucket_ns;
	struct grp *rows[3];
	int i, n;

	if (classes.analyze) {
		classes.a_cls = (int)A->L[0].cls;
		classes.a_size = z;
		A->maxcls = classes.a_cls > A->maxcls ? classes.a_cls : A->maxcls;
		n = cls_rows(0, rows);
		for (i = 0; i < n; i++) {
			if (analyze_grp_alloc(rows[i], nb) < 0) {
				return -1;
			}
		}
	} else if (!series.on) {
		return 0;	/* no rows to count in (a plain run's counts are sess.c) */
	}
	cls_count(0, CG_SENT);
	/* a stepped transaction was received: only its samples are left out */
	cls_count(0, st == ST_OK || st == ST_WARMUP || st == ST_STEPPED ? CG_RECEIVED : CG_LOST);
	if (st == ST_WARMUP) {
		cls_count(0, CG_WARMUP);
	}
	if (st == ST_LATE) {
		cls_count(0, CG_LATE);
	}
	if (st == ST_LMISS || st == ST_LINVAL) {
		cls_count(0, st == ST_LMISS ? CG_LMISS : CG_LINVAL);
	}
	return 0;
}

/* The classes and turns are known: the rows in the shape the report prints. */
static int analyze_cls_finish(struct analysis *A)
{
	uint64_t nb = (cfg->bound_ns + cfg->bucket_ns - 1) / cfg->bucket_ns;
	const struct alog *L = &A->L[0];
	struct grp *w = classes.g, *g;
	int nc = L->has_cls ? A->maxcls + 1 : 1, nz = L->has_size ? L->nturns : 1, c, z, i;

	if (!classes.analyze) {
		return 0;
	}
	memcpy(classes.size, L->turn_size, sizeof(classes.size));
	g = calloc((size_t)(nc + nz + nc * nz), sizeof(*g));
	if (!g) {
		warnx_("--analyze: out of memory");
		return -1;
	}
	for (c = 0; c < nc; c++) {
		g[c] = w[c];
		for (z = 0; z < nz; z++) {
			g[nc + nz + c * nz + z] = w[A->wcls + A->wsz + c * A->wsz + z];
		}
	}
	for (z = 0; z < nz; z++) {
		g[nc + z] = w[A->wcls + z];
	}
	free(w);
	classes.g = g;
	classes.ncls = nc;
	classes.nsz = nz;
	classes.ng = nc + nz + nc * nz;
	for (i = 0; i < classes.ng; i++) {
		if (analyze_grp_alloc(&g[i], nb) < 0) {
			return -1;
		}
	}
	return 0;
}

/* Row i's status into the counters and flags the live run would have set. */
static void analyze_status(struct txn *x, int st)
{
	if (st == ST_STEPPED) {
		clk_mark(x);	/* the live run saw its clock step: left out, as there */
	}
	if (st == ST_OK || st == ST_WARMUP || st == ST_STEPPED) {
		x->st |= TF_RECEIVED;
		sess.c.received++;
		if (x->t[T2SW] && x->t[T3SW]) {
			x->st |= TF_SRV_SW;
		}
	} else {
		x->st |= TF_LOST;
		sess.c.lost++;
	}
	if (st == ST_WARMUP) {
		x->st |= TF_WARMUP;
		sess.c.warmup++;
	}
	if (st == ST_LATE) {
		x->st |= TF_LATE;
		sess.c.late++;
	}
	tsn.missed += st == ST_LMISS;	/* a --txtime log: the launch times dropped */
	tsn.invalid += st == ST_LINVAL;
}

/* The moment a row's transaction started, on its side's clock; 0 if unknown. */
static uint64_t analyze_t0(const struct txn *x)
{
	const uint64_t *t = x->t;

	return run.side.emit ? (t[T1SW] ? t[T1SW] : t[T1W]) : (t[T2W] ? t[T2W] : t[T2SW]);
}

/*
 * The datagram size of the row read last, as its log says it: the SIZE
 * column, else the header's size_turns= (the turn the SEQ falls in); 0
 * when neither is there.  A pong that small had no room for some of the
 * reflector's stamps: they are not missing (stamps_uncarried).
 */
static unsigned analyze_row_bytes(const struct alog *L)
{
	int z;

	if (L->has_size) {
		return L->size;
	}
	for (z = L->nturns - 1; z > 0 && L->x.seq < L->turn_seq0[z]; z--) {
	}
	return L->nturns ? L->turn_size[z] : 0;
}

/* The row read last through the live run's accounting (txn_account, txn_retire); 0 or -1. */
static int analyze_row(struct analysis *A)
{
	struct alog *L = &A->L[0];
	struct txn *x = &L->x;
	uint64_t t0;
	int64_t v;
	int k = analyze_seq(&A->seen, L), z;

	if (k < 0 || (z = analyze_turn(L)) < 0) {
		return -1;
	}
	if (k == SEQ_REPEATED) {
		A->repeated++;	/* counted once: a log never holds a SEQ twice */
		return 0;
	}
	if (k == SEQ_EARLIER && !run.side.emit) {
		sess.c.late++;	/* answered after a later ping, as the reflector counts it */
	}
	if (A->nlogs == 2 && join_row(A, x) < 0) {
		return -1;
	}
	A->low = !A->distinct || x->seq < A->low ? x->seq : A->low;
	A->distinct++;
	x->st = TF_USED | TF_SENT;
	sess.c.sent++;
	series_row(analyze_t0(x));
	if (analyze_cls_row(A, L->st, z) < 0) {
		return -1;
	}
	analyze_status(x, L->st);
	t0 = analyze_t0(x);
	A->first = t0 && (!A->first || t0 < A->first) ? t0 : A->first;
	A->last = t0 > A->last ? t0 : A->last;
	A->any_sw |= run.side.emit ? (x->t[T1SW] || x->t[T4SW]) : (x->t[T2SW] || x->t[T3SW]);
	classes.a_bytes = analyze_row_bytes(L);
	txn_account(x);
	txn_retire(x);
	if (L->st == ST_OK && metric_value(run.side.primary, x->t, &v)) {
		topn_add(&A->top, x, v, L->n);
	}
	if (cfg->plot) {
		plot_span(x, L->st, z);
	}
	return 0;
}

/* ---- --analyze's main: the logs, two passes at most, the outputs */

/* Open one or two logs; two are one emit and one reflect log of the same run, joined by SEQ. */
static int analyze_load(struct analysis *A)
{
	int k;

	for (k = 0; k < A->nlogs; k++) {
		if (alog_open(cfg->analyze[k], &A->L[k]) < 0) {
			return -1;
		}
	}
	if (cfg->series && !A->L[0].emit && (A->nlogs < 2 || !A->L[1].emit)) {
		warnx_("--series: from a client's (emit) log; %s is a reflect log", A->L[0].path);
		return -1;
	}
	if (A->nlogs < 2) {
		return 0;
	}
	if (A->L[0].emit == A->L[1].emit) {
		warnx_("--analyze: give one emit log and one reflect log of the same run (both are %s logs)",
		       A->L[0].emit ? "emit" : "reflect");
		return -1;
	}
	/* every run numbers its pings from 0: two runs' logs join on SEQ alone */
	if (A->L[0].session_known && A->L[1].session_known && A->L[0].session != A->L[1].session) {
		warnx_("--analyze: %s is of session 0x%08x, %s of session 0x%08x: the logs of two runs, not one",
		       A->L[0].path, A->L[0].session, A->L[1].path, A->L[1].session);
		return -1;
	}
	if (!A->L[0].emit) {
		struct alog t = A->L[0];

		A->L[0] = A->L[1];
		A->L[1] = t;
	}
	A->jw = calloc(JOIN_WIN, sizeof(*A->jw));
	if (!A->jw) {
		warnx_("--analyze: out of memory");
		return -1;
	}
	/* the server's stamps and their source come from the reflect log */
	A->L[0].srv_hw = A->L[1].hw;
	A->L[0].have |= A->L[1].have;
	return 0;
}

/*
 * A file of tracefs other than a "trace" (trace_pipe and its kin are
 * regular files there that block until events come, and consume them).
 */
static bool trace_pipe_like(int fd, const char *path)
{
	struct statfs fs;
	const char *base = strrchr(path, '/');

	return fstatfs(fd, &fs) == 0 && fs.f_type == 0x74726163 /* TRACEFS_MAGIC */ &&
	       strcmp(base ? base + 1 : path, "trace");
}

/* --json, --plot and --histfile can be written?  Checked before a row is read; nothing made. */
static int analyze_check_outputs(void)
{
	if (cfg->trace_file) {
		/* O_NONBLOCK: opening a FIFO must not wait for a writer */
		int fd = open(cfg->trace_file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		struct stat sb;
		bool ok = fd >= 0 && fstat(fd, &sb) == 0;

		if (!ok) {
			warnx_("--trace: cannot read '%s': %s", cfg->trace_file, strerror(errno));
		} else if (!S_ISREG(sb.st_mode) || trace_pipe_like(fd, cfg->trace_file)) {
			warnx_("--trace: '%s' is %s (a saved trace is read whole: "
			       "save the instance's trace into a file first)", cfg->trace_file,
			       S_ISREG(sb.st_mode) ? "a tracefs file that waits for events" :
			       out_kind(sb.st_mode));
			ok = false;
		}
		if (fd >= 0) {
			close(fd);
		}
		if (!ok) {
			return -1;
		}
	}
	if (cfg->json && strcmp(cfg->json, "-") && out_check("--json", cfg->json) < 0) {
		return -1;
	}
	if (cfg->histfile && out_check("--histfile", cfg->histfile) < 0) {
		return -1;
	}
	if (cfg->series && strcmp(cfg->series, "-") && out_check("--series", cfg->series) < 0) {
		return -1;
	}
	return cfg->plot && out_check("--plot", cfg->plot) < 0 ? -1 : 0;
}

/* --series: its lines, gathered while the rows were read, to its file (replaced whole). */
static int analyze_series_write(void)
{
	int fd, r;

	if (!series.on) {
		return 0;
	}
	if (!strcmp(cfg->series, "-")) {
		fflush(stdout);
		fd = STDOUT_FILENO;
	} else if ((fd = out_open_swap("--series", cfg->series)) < 0) {
		return -1;
	}
	r = write_all(fd, series.first, (size_t)series.first_len);
	if (!r) {
		r = write_all(fd, series.mem_buf, series.mem_len);
	}
	if (fd != STDOUT_FILENO && close(fd) < 0 && !r) {
		r = -errno;
	}
	if (r < 0) {
		warnx_("--series: writing %s failed: %s", cfg->series, strerror(-r));
		out_swap_failed(cfg->series);
		series.failed = true;	/* analyze_run: exit 1, as for the JSON */
	}
	return 0;
}

/* --json and --plot opened once the logs have been read: a bad log truncates no file. */
static int analyze_open(FILE **js)
{
	*js = NULL;
	if (cfg->json && strcmp(cfg->json, "-")) {
		int fd = out_open_swap("--json", cfg->json);

		if (fd < 0 || !(*js = fdopen(fd, "w"))) {
			return -1;
		}
	} else if (cfg->json) {
		*js = stdout;
	}
	if ((cfg->plot && plot_open() < 0) || histfile_open() < 0 || analyze_series_write() < 0) {
		if (*js && *js != stdout) {
			fclose(*js);
		}
		return -1;
	}
	return 0;
}

/* Histograms, class rows and the --top heap: what the live run keeps, nothing per row. */
static void *analyze_take(size_t n)
{
	return calloc(1, n);
}

/*
 * The metrics the log's columns can give (a text log has no server stamps):
 * the others are left out of the accounting, which they would only slow
 * (they could never have a sample).
 */
static void analyze_metrics(struct analysis *A)
{
	uint64_t t[NSTAMP];
	int i, k;
	int64_t v;

	for (k = 0; k < NSTAMP; k++) {
		t[k] = A->L[0].have & (1u << k) ? 1 : 0;
	}
	for (i = 0; i < run.side.nmetrics; i++) {
		if (metric_stamps(run.side.metrics[i], t, &v)) {
			A->metrics[A->nmetrics++] = run.side.metrics[i];
		}
	}
	run.side.metrics = A->metrics;
	run.side.nmetrics = A->nmetrics;
}

/*
 * The run's state as the log describes it: side, stamp sources, format.
 * The log completes --analyze's configuration, before anything reads it;
 * app stamps: csv logs have their columns either way, and whether any row
 * filled them (-s) is known at the end (analyze_finish).
 */
static int analyze_state(struct analysis *A)
{
	const struct alog *L = &A->L[0];
	uint64_t nb = (cfg->bound_ns + cfg->bucket_ns - 1) / cfg->bucket_ns;

	/* a --txtime client's log: launch error and time to spare from its T1_LT */
	tsn.on = L->emit && (L->have & 1u << T1L);
	side_set(L->emit);
	analyze_metrics(A);
	run.ts.hw = L->hw;
	run.ts.wire_off = L->wire_off;
	run.ts.peer_off = L->peer_off;
	run.ts.peer_off_on = L->peer_off_on;
	sess.srv_hw = L->srv_hw;
	sess.srv_hw_known = run.side.emit;
	opts.sw_stamps = L->sw;
	opts.log_format = L->csv ? LOG_CSV : LOG_TEXT;
	if (stats_alloc(analyze_take, nb, OUT_CAP) < 0 || topn_init(&A->top, cfg->top) < 0) {
		warnx_("--analyze: out of memory");
		return -1;
	}
	if (cfg->plot) {
		plot_span_begin("");
	}
	return analyze_cls_start(A);
}

/* The first pass: every row accounted; the rest of the reflect log read for its counts. */
static int analyze_pass(struct analysis *A)
{
	int r, k;

	analyze_pass_reset(A);
	while ((r = alog_next(&A->L[0])) > 0) {
		if (run.stop_signal) {
			warnx_("--analyze: interrupted while reading: no output written");
			return -1;
		}
		if (analyze_row(A) < 0) {
			return -1;
		}
	}
	for (k = 0; r == 0 && k < A->nlogs; k++) {
		struct stat sb;

		A->L[k].n_first = A->L[k].n;
		A->L[k].size_first = fstat(A->L[k].fd, &sb) == 0 ? sb.st_size : -1;
	}
	if (r == 0 && A->nlogs == 2) {
		r = join_read(A, UINT64_MAX - JOIN_AHEAD);
	}
	return r;
}

/*
 * Loss by direction from the joined logs, where they determine it: the
 * reflect log holds every ping its reflector answered (a csv log whose ring
 * dropped nothing and -L filtered nothing, from SEQ 0 on: the session
 * whole, as the live run's FIN_ACK says it).  A lost ping in it was answered:
 * its pong was lost on the way back (or in this host's receive buffer,
 * which a log does not record); one not in it was lost on the way out.
 */
static void analyze_split(struct analysis *A, char *why, size_t len)
{
	const struct alog *R = &A->L[1];

	*why = 0;
	if (!R->csv || R->dropped < 0 || R->filtered < 0) {
		snprintf(why, len, "the reflect log does not say it holds every ping answered (a csv log says so)");
	} else if (R->dropped || R->filtered) {
		snprintf(why, len, "the reflect log's ring dropped %" PRId64 " and -L filtered %" PRId64 " rows",
			 R->dropped, R->filtered);
	} else if (A->rlow) {
		snprintf(why, len, "the reflect log begins at SEQ %" PRIu64 ", not at the session's start", A->rlow);
	} else {
		result.fin_acked = result.srv_whole = true;
		result.srv_received = A->joined;
	}
}

/* After the first pass: the counts only the whole log gives; 0, or -1 (nothing joined). */
static int analyze_finish(struct analysis *A, char *why, size_t len)
{
	static const int own_sw[2][2] = { { T2SW, T3SW }, { T1SW, T4SW } };
	int k;

	for (k = 0; k < A->nlogs; k++) {
		const struct alog *L = &A->L[k];

		if (L->records >= 0 && L->n != (uint64_t)L->records) {
			/* the writer failed, or the file was cut or added to since */
			warnx_("warning: --analyze: %s holds %" PRIu64 " rows, its header announces records=%" PRId64
			       ": %s; the analysis is of the rows there",
			       L->path, L->n, L->records, L->n < (uint64_t)L->records ? "cut short" : "more than written");
		} else if (L->csv && !L->head_facts && L->facts_at < 0) {
			/* its facts come last (log_csv_facts): a log cut short has lost them */
			warnx_("warning: --analyze: %s holds %" PRIu64 " rows and ends without its '# rant' line"
			       " (records=, session=): cut short, or not written whole by rant; the analysis is of the rows there",
			       L->path, L->n);
		}
	}
	if (!run.side.emit) {
		/* gaps from the first SEQ seen, as a (restarted) reflector counts them */
		sess.c.lost = A->distinct ? A->seen.top + 1 - A->low - A->distinct : 0;
		if (A->L[0].filtered > 0 || A->L[0].dropped > 0) {
			/* a gap is a row -L left out or the ring dropped, as well as a ping lost */
			sess.c.lost = 0;
			run.lost_unknown = true;
			warnx_("warning: --analyze: %s: -L left out %" PRId64 " rows and the ring dropped %" PRId64
			       ": its gaps are not losses, lost is unknown", A->L[0].path,
			       A->L[0].filtered > 0 ? A->L[0].filtered : 0,
			       A->L[0].dropped > 0 ? A->L[0].dropped : 0);
		}
	}
	for (k = 0; k < NSTAMP; k++) {
		if (!(A->L[0].have & (1u << k))) {
			sess.c.missing[k] = 0;	/* the log has no column for it */
			run.stamps_unknown |= 1u << k;
		}
	}
	if (!A->any_sw) {
		opts.sw_stamps = false;	/* app-stamp columns, never filled: no -s */
		sess.c.missing[own_sw[run.side.emit][0]] = 0;
		sess.c.missing[own_sw[run.side.emit][1]] = 0;
	}
	sess.start_mono = A->first;
	sess.end_mono = A->last;
	sess.stop_reason = STOP_NONE;
	if (A->repeated) {
		warnx_("warning: %" PRIu64 " rows repeat an earlier SEQ: each SEQ counted once (rant logs a transaction once)",
		       A->repeated);
	}
	if (A->nlogs == 2) {
		if (!A->joined) {
			warnx_("--analyze: no SEQ appears in both logs: they are not from the same run");
			return -1;
		}
		if (A->mism) {
			warnx_("warning: %" PRIu64 " echoed server stamps differ from the reflect log's", A->mism);
		}
		analyze_split(A, why, len);
	}
	return analyze_cls_finish(A);
}

/* Called between the first pass and the outputs, where set (the unit tests only). */
static void (*analyze_between)(void);

/* A log that changed size while it was read: said, the analysis being of the rows first read. */
static void analyze_changed(const struct analysis *A)
{
	struct stat sb;
	int k;

	for (k = 0; k < A->nlogs; k++) {
		const struct alog *L = &A->L[k];

		if (L->size_first >= 0 && fstat(L->fd, &sb) == 0 && sb.st_size != L->size_first) {
			warnx_("warning: --analyze: %s changed while it was read (%lld bytes, then %lld): the report, JSON and plot are of its first %" PRIu64 " rows",
			       L->path, (long long)L->size_first, (long long)sb.st_size,
			       L->n_first);
		}
	}
}

/* --plot's second pass: the same rows, joined again, into the picture's time bins. */
static int analyze_plot_pass(struct analysis *A)
{
	struct alog *L = &A->L[0];
	int r = 0, k;

	analyze_pass_reset(A);
	for (k = 0; k < A->nlogs; k++) {
		if (alog_rewind(&A->L[k]) < 0) {
			return -1;
		}
	}
	if (plot_bins_begin() < 0) {
		warnx_("--plot: out of memory");
		return -1;
	}
	/* the rows of the first pass, no more: one analysis describes one set of rows */
	while (L->n < L->n_first && (r = alog_next(L)) > 0) {
		if (run.stop_signal) {
			warnx_("--analyze: interrupted while drawing: the output files left as they were");
			return -1;
		}
		k = analyze_seq(&A->seen, L);
		if (k < 0 || (k != SEQ_REPEATED && A->nlogs == 2 && join_row(A, &L->x) < 0)) {
			return -1;
		}
		if (k != SEQ_REPEATED) {
			plot_bin(&L->x, L->st);
		}
	}
	analyze_changed(A);
	return r < 0 ? r : 0;
}

/* The report, --top, --plot and --json of what was accounted; the exit code. */
static int analyze_outputs(struct analysis *A, FILE *js, const char *why)
{
	FILE *out = report_stream();
	const struct alog *L = &A->L[0];

	fprintf(out, "Analysis of %s%s%s (%s log%s, %s, %" PRIu64 " records)\n", cfg->analyze[0],
		A->nlogs == 2 ? " + " : "", A->nlogs == 2 ? cfg->analyze[1] : "",
		run.side.emit ? "emit" : "reflect",
		A->nlogs == 2 ? " joined with reflect log" : "", L->csv ? "csv" : "text", L->n);
	if (*why) {
		fprintf(out, "Lost by direction: not known from these logs: %s\n", why);
	}
	return report_outputs(out, js, js != stdout, sess.c.breaches ? EXIT_BREACH : EXIT_OK, L->n,
			      &A->top);
}

/*
 * --analyze: open the logs, account every row as the live run does (one
 * pass; a second for --plot), then open the outputs and write the same
 * report, plot and JSON as a live run's.
 */
static int analyze_run(struct analysis *A)
{
	char *why = result.analyze_why;	/* the report's loss_why says it too */
	FILE *js;
	int code;

	*why = 0;

	if (analyze_check_outputs() < 0 || analyze_load(A) < 0) {
		return EXIT_USAGE;
	}
	if (analyze_state(A) < 0) {
		return EXIT_RUNTIME;
	}
	if (analyze_pass(A) < 0 || analyze_finish(A, why, sizeof(result.analyze_why)) < 0) {
		return run.stop_signal ? EXIT_RUNTIME : EXIT_USAGE;
	}
	series_rows_end();
	if (analyze_between) {
		analyze_between();	/* the unit tests: a log that grows, a signal */
	}
	if (analyze_open(&js) < 0) {
		out_swap_commit(false);
		return EXIT_USAGE;
	}
	if (cfg->plot && analyze_plot_pass(A) < 0) {
		if (js && js != stdout) {
			fclose(js);
		}
		plot_free();
		out_swap_commit(false);
		return EXIT_RUNTIME;
	}
	code = analyze_outputs(A, js, why);
	if (series.failed && code < EXIT_RUNTIME) {
		code = EXIT_RUNTIME;	/* --series: analyze_series_write said why */
	}
	if (run.stop_signal) {
		/* interrupted while writing: what was there stays */
		warnx_("--analyze: interrupted: its output files left as they were");
		out_swap_commit(false);
		return EXIT_RUNTIME;
	}
	return out_swap_commit(true) < 0 && code < EXIT_RUNTIME ? EXIT_RUNTIME : code;
}

/* analyze_run and free what it left. */
static int analyze_main(void)
{
	struct analysis *A = calloc(1, sizeof(*A));
	int k, code;

	if (!A) {
		warnx_("--analyze: out of memory");
		return EXIT_RUNTIME;
	}
	A->nlogs = cfg->analyze[1] ? 2 : 1;
	A->L[0].fd = A->L[1].fd = -1;
	if (cfg->series) {
		series.on = true;
		series.every_ns = (uint64_t)(cfg->series_s * 1e9);
		series.mem = open_memstream(&series.mem_buf, &series.mem_len);
		if (!series.mem) {
			warnx_("--analyze: out of memory");
			free(A);
			return EXIT_RUNTIME;
		}
	}
	code = analyze_run(A);
	series_free();
	for (k = 0; k < 2; k++) {
		alog_close(&A->L[k]);
	}
	for (k = 0; k < NMETRIC; k++) {
		hist_free(&sess.h[k]);
	}
	for (k = 0; classes.g && k < classes.ng; k++) {
		hist_free(&classes.g[k].h);
		hist_free(&classes.g[k].x[GX_APP]);
		hist_free(&classes.g[k].x[GX_TX]);
		hist_free(&classes.g[k].x[GX_LAUNCH]);
		hist_free(&classes.g[k].x[GX_SPARE]);
	}
	free(classes.g);
	classes.g = NULL;
	free(sess.breach);
	sess.breach = NULL;
	free(A->jw);
	free(A->top.e);
	free(A);
	side_set(run.side.emit);	/* its metric list was A's */
	return code;
}

/* -------------------------------------------------------------- options */

/*
 * One table, opt_table, says everything about an option: its letter and
 * name, its argument, how the argument is read (type, range, scale,
 * choices), the configuration field it sets and that field's default, the
 * modes that accept it and its help line.  getopt_long's array and short
 * string, the parsing and its messages, the mode checks, cfg's defaults and
 * --help all come from it; opt_check keeps the checks across options.
 *
 * Adding an option: a field in struct config, an O_ value below if it has
 * no letter, and one entry at the end of opt_table (--help lists it there;
 * README's option list is --help).
 */
enum {
	O_PORT = 256, O_SIZE, O_INTERVAL, O_COUNT, O_TIMEOUT, O_TIMESTAMPS, O_PRIORITY,
	O_TOS, O_SPIN, O_JSON, O_LOG_FORMAT, O_LOG_RECORDS, O_ONCE, O_TRACE_INSTANCE, O_TRACE_FILE,
	O_ANALYZE, O_TOP, O_PLOT, O_ALLOW_FRAGMENTS, O_PTP_PROBE, O_PTP_DOMAIN, O_KEY_FILE,
	O_STATUS, O_HISTFILE, O_SERIES, O_SERIES_EVERY, O_CPU_LATENCY, O_CLIENT_NO_TX,
	O_TXTIME, O_TXTIME_DEADLINE, O_BASE_TIME, O_CYCLE, O_CLASS_OFFSET, O_MAX
};

/* How an option's argument is read. */
enum opt_type {
	OT_FLAG,	/* no argument: the bool field becomes true */
	OT_UINT,	/* a whole number in [min, max], exact to 2^64, stored times scale */
	OT_NUM,		/* a number in [min, max], fractions allowed */
	OT_US,		/* microseconds in [min, max], fractions allowed, stored in ns */
	OT_CHOICE,	/* one of choices, stored as its index */
	OT_STR,		/* the argument itself: argv outlives cfg */
	OT_CALL,	/* set() does it all: lists, checks of their own, several fields */
	OT_EXIT,	/* prints (help, version) and ends parsing */
};

/* The type of the config field an option sets, for the one generic store. */
enum opt_field { OF_NONE, OF_BOOL, OF_UINT, OF_INT, OF_U64, OF_I64, OF_DBL, OF_STR };

#define OF_KIND(m)	_Generic(((struct config *)0)->m, bool: OF_BOOL, unsigned: OF_UINT, \
				 int: OF_INT, uint64_t: OF_U64, int64_t: OF_I64, double: OF_DBL, \
				 const char *: OF_STR, default: OF_NONE)
#define CFG(m)		.off = offsetof(struct config, m), .kind = OF_KIND(m)
#define ALSO(m)		.also = offsetof(struct config, m)

/* Modes that accept an option (1 << enum mode). */
#define M_EMIT		(1u << MODE_EMIT)
#define M_REFLECT	(1u << MODE_REFLECT)
#define M_ANALYZE	(1u << MODE_ANALYZE)
#define M_RUN		(M_EMIT | M_REFLECT)
#define M_ALL		(M_RUN | M_ANALYZE)

struct opt_def {
	int val;			/* the short letter, or an O_ value */
	const char *name;		/* --name */
	const char *arg;		/* the argument's name in --help; NULL: none */
	enum opt_type type;
	size_t off;			/* the field in struct config (CFG) */
	enum opt_field kind;
	size_t also;			/* a bool field set true with it (ALSO); 0: none */
	double min, max;		/* accepted range, in the unit the user gives */
	uint64_t scale;			/* OT_UINT: stored = given * scale (0: 1) */
	const char *const *choices;	/* OT_CHOICE: NULL-terminated */
	int64_t def;			/* the field's default, stored unit; -1: off */
	unsigned modes;			/* M_*: where it is accepted */
	int (*set)(const struct opt_def *o, const char *a);	/* OT_CALL */
	const char *help;
	const char *why_min;		/* why nothing below min will do, said when refused */
	bool hex;			/* OT_CALL lists of whole numbers: 0x.. taken too */
};

/*
 * The one number parser: the whole string must be a number within [min,
 * max]; the message names the option and the accepted range.
 */
static int opt_num(const struct opt_def *o, const char *s, double min, double max, bool whole,
		   double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	/* strtod also takes hex and "infinity": a user meant neither */
	if (!*s || isspace((unsigned char)*s) || *end || errno == ERANGE || isnan(v) || isinf(v) ||
	    strspn(s, "0123456789.+-eE") != strlen(s) || (whole && v != num_floor(v))) {
		warnx_("--%s: '%s' is not a %s (%.15g to %.15g)", o->name, s,
		       whole ? "whole number" : "number", min, max);
		return -1;
	}
	if (v < min || v > max) {
		warnx_("--%s: '%s' is out of range (%.15g to %.15g)", o->name, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

/*
 * Integers beyond 2^53 do not survive a double: parse them exactly.  An
 * option marked hex also takes 0x.. (--tos 0x20, as the tables print it).
 */
static int opt_u64(const struct opt_def *o, const char *s, uint64_t min, uint64_t max,
		   uint64_t *out)
{
	bool hex = o->hex && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
		   isxdigit((unsigned char)s[2]);
	char *end, range[64];
	unsigned long long v;

	snprintf(range, sizeof(range), "%" PRIu64 " to %" PRIu64, min, max);
	if (o->hex) {
		snprintf(range + strlen(range), sizeof(range) - strlen(range),
			 ", or 0x%" PRIx64 " to 0x%" PRIx64, min, max);
	}
	errno = 0;
	v = strtoull(s, &end, hex ? 16 : 10);
	if (!*s || !isdigit((unsigned char)*s) || *end || errno == ERANGE) {
		bool neg = *s == '-' && isdigit((unsigned char)s[1]);

		warnx_("--%s: '%s' is %s (%s)", o->name, s, neg ? "out of range" : "not a whole number",
		       range);
		return -1;
	}
	if (v < min || v > max) {
		bool why = v < min && o->why_min;

		warnx_("--%s: '%s' is out of range (%s)%s%s", o->name, s, range, why ? ": " : "",
		       why ? o->why_min : "");
		return -1;
	}
	*out = v;
	return 0;
}

static int opt_us_to_ns(const struct opt_def *o, const char *s, int64_t *ns)
{
	double v;

	if (opt_num(o, s, o->min, o->max, false, &v) < 0) {
		return -1;
	}
	*ns = num_round(v * 1000);
	return 0;
}

/* The index of s in o->choices; the message lists them: "a, b or c". */
static int opt_choice(const struct opt_def *o, const char *s)
{
	char list[128] = "";
	size_t len = 0;
	int i, n;

	for (n = 0; o->choices[n]; n++) {
		if (!strcmp(s, o->choices[n])) {
			return n;
		}
	}
	for (i = 0; i < n; i++) {
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", o->choices[i],
					i + 2 < n ? ", " : i + 1 < n ? " or " : "");
		if (len >= sizeof(list)) {
			break;
		}
	}
	warnx_("--%s: '%s' is not one of %s", o->name, s, list);
	return -1;
}

/*
 * -2 (the earlier rant's --threaded) put send and receive on threads of
 * their own, pinned to CPUs of their own next to main's.  rant refuses it
 * rather than run it on fewer CPUs than it needs: threads sharing a CPU take
 * turns, and every pong then waits for a wake-up.
 */
static int opt_threaded(const struct opt_def *o, const char *a)
{
	cpu_set_t set;
	int n = 0;

	(void)o;
	(void)a;
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		n = CPU_COUNT(&set);
	}
	if (n < 3) {
		warnx_("--threaded: needs 3 CPUs in the affinity mask (receive, send, main), this process has %d; run without -2 (use --spin for the lowest latency)",
		       n);
	} else {
		warnx_("--threaded: not offered: the pong leaves from the thread that received the ping, a hand-off to a send thread adds a cross-CPU wake-up to every answer; run without -2 (use --spin for the lowest latency)");
	}
	return -1;
}

/* Parse a comma-separated list of whole numbers; one value behaves as before. */
static int opt_list(const struct opt_def *o, const char *s, uint64_t min, uint64_t max,
		    uint64_t *out, int maxn, int *n)
{
	const char *p = s;

	*n = 0;
	for (;;) {
		const char *e = strchr(p, ',');
		/* each item whole, however long: a cut item would parse as another number */
		char *item = strndup(p, e ? (size_t)(e - p) : strlen(p));
		int r;

		if (!item) {
			warnx_("--%s: cannot allocate: %s", o->name, strerror(errno));
			return -1;
		}
		if (*n == maxn) {
			warnx_("--%s: '%s' has more than %d values", o->name, s, maxn);
			free(item);
			return -1;
		}
		r = opt_u64(o, item, min, max, &out[*n]);
		free(item);
		if (r < 0) {
			return -1;
		}
		(*n)++;
		if (!e) {
			return 0;
		}
		p = e + 1;
	}
}

/*
 * The options whose value may be a list, all parsed here and handed to the
 * classes section (cls_list_set): a --size list measures each size in turn,
 * a --priority or --tos list runs classes side by side, an --interval list
 * gives each class its cadence.  An item's range is the option's, but for
 * what a list needs: a class's priority travels in 4 bits of the ping
 * (0-14), and an --interval slot of 0 would be no cadence at all (1 us).
 */
static const struct opt_list_def {
	int val, what, maxn;
	uint64_t min, max;	/* in a list (with a comma); 0, 0: the option's */
} opt_lists[] = {
	{ O_SIZE, CL_SIZE, SZ_MAX, 0, 0 },
	{ O_INTERVAL, CL_IVAL, CLS_MAX, 1, 0 },
	{ O_PRIORITY, CL_PRIO, CLS_MAX, 0, 14 },
	{ O_TOS, CL_TOS, CLS_MAX, 0, 0 },
};

/* What one value sets: --interval's cadence, the run's priority and TOS, the largest size. */
static void opt_list_one(const struct opt_def *o, const char *a, const uint64_t *v, int n)
{
	int i;

	switch (o->val) {
	case O_SIZE:
		opts.size = 0;	/* buffers and checks take the largest */
		for (i = 0; i < n; i++) {
			if (v[i] > opts.size) {
				opts.size = (unsigned)v[i];
			}
		}
		break;
	case O_INTERVAL:
		opts.interval_arg = a;
		if (!strchr(a, ',')) {
			opts.interval_ns = v[0] * NSEC_PER_US;
		}
		break;
	case O_PRIORITY:
		opts.priority = (int)v[0];
		break;
	default:
		opts.tos = (int)v[0];
	}
}

static int opt_cls_list(const struct opt_def *o, const char *a)
{
	const struct opt_list_def *l = opt_lists;
	bool many = strchr(a, ',') != NULL;
	uint64_t v[CLS_MAX > SZ_MAX ? CLS_MAX : SZ_MAX];
	int n;

	while (l->val != o->val) {
		l++;
	}
	if (opt_list(o, a, many && l->min ? l->min : (uint64_t)o->min,
		     many && l->max ? l->max : (uint64_t)o->max, v, l->maxn, &n) < 0) {
		return -1;
	}
	/* one --interval is the run's cadence, not a list of one */
	if (l->what != CL_IVAL || many) {
		cls_list_set(l->what, v, n);
	}
	opt_list_one(o, a, v, n);
	return 0;
}

/* --base-time SEC[.NS]: seconds on CLOCK_TAI, to the nanosecond (a double would round it). */
#define BASE_TIME_MAX_S	9000000000ULL

static int opt_base_time(const struct opt_def *o, const char *a)
{
	uint64_t sec = 0, ns = 0;
	const char *p = a;
	int d = 0;

	(void)o;
	int digits = 0;

	/* below 9 * 10^9 s (year 2255): SEC * 10^9 + NS stays within int64_t */
	while (*p >= '0' && *p <= '9' && sec < BASE_TIME_MAX_S) {
		sec = sec * 10 + (uint64_t)(*p++ - '0');
		digits++;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9' && d < 9; d++) {
			ns = ns * 10 + (uint64_t)(*p++ - '0');
			digits++;
		}
		for (; d < 9; d++) {
			ns *= 10;
		}
	}
	if (!digits || *p || sec >= BASE_TIME_MAX_S) {
		warnx_("--base-time: '%s' is no time: SEC or SEC.NS on CLOCK_TAI (up to 9 decimals, below 9000000000 s)", a);
		return -1;
	}
	opts.base_time_ns = (int64_t)(sec * NSEC_PER_SEC + ns);
	opts.base_time_set = true;
	return 0;
}

/* --class-offset: one offset into the cycle, or one per class (ns). */
static int opt_class_offset(const struct opt_def *o, const char *a)
{
	uint64_t v[CLS_MAX];
	int n, i;

	if (opt_list(o, a, 0, 1000000000, v, CLS_MAX, &n) < 0) {
		return -1;
	}
	for (i = 0; i < n; i++) {
		tsn.offset[i] = (int64_t)v[i];
	}
	tsn.noffset = n;
	return 0;
}

/*
 * --txtime, --cycle and their company, once every option is known: what
 * needs what, and a cadence that stays on the cycle.
 */
static int opt_check_tsn(const bool *given)
{
	int k;

	if (opts.txtime_deadline && !opts.txtime) {
		warnx_("--txtime-deadline: makes --txtime's launch time a deadline; give --txtime US");
		return -1;
	}
	if ((given[O_BASE_TIME] || given[O_CLASS_OFFSET]) && !opts.cycle_ns) {
		warnx_("%s: places the cadence on a schedule; give its --cycle NS",
		       given[O_BASE_TIME] ? "--base-time" : "--class-offset");
		return -1;
	}
	if (opts.txtime) {
		opts.sw_stamps = true;	/* time to spare: the launch time against T1_SW */
	}
	if (!opts.cycle_ns) {
		return 0;
	}
	if (!opts.interval_ns) {
		warnx_("--cycle: aligns a cadence; give --interval (a multiple of the cycle)");
		return -1;
	}
	if (tsn.noffset > 1 && tsn.noffset != classes.ncls) {
		warnx_("--class-offset: %d values for %d classes; give one, or one per class", tsn.noffset,
		       classes.ncls);
		return -1;
	}
	if (classes.ncls > 1 && !classes.nival) {
		warnx_("--cycle: with %d classes each needs its own cadence to keep its place in the cycle: give an --interval list (one per class)",
		       classes.ncls);
		return -1;
	}
	for (k = 0; k < (classes.nival ? classes.ncls : 1); k++) {
		uint64_t iv = classes.nival ? classes.ival[k] : opts.interval_ns;

		if (iv % opts.cycle_ns) {
			warnx_("--cycle: %" PRIu64 " ns does not divide %s's %" PRIu64 " us: the pings would drift through the cycle",
			       opts.cycle_ns, classes.nival ? "the class's --interval" : "--interval",
			       (uint64_t)(iv / NSEC_PER_US));
			return -1;
		}
	}
	for (k = 0; k < tsn.noffset; k++) {
		if ((uint64_t)tsn.offset[k] >= opts.cycle_ns) {
			warnx_("--class-offset: %" PRId64 " ns is not inside the %" PRIu64 " ns cycle",
			       tsn.offset[k], opts.cycle_ns);
			return -1;
		}
	}
	return 0;
}

static int opt_iface(const struct opt_def *o, const char *a)
{
	(void)o;
	if (!*a || strlen(a) >= IFNAMSIZ || !if_nametoindex(a)) {
		warnx_("--interface: no interface '%s' here (see: ip link)", a);
		return -1;
	}
	opts.iface = a;
	return 0;
}

static int opt_address(const struct opt_def *o, const char *a)
{
	(void)o;
	if (!*a) {
		warnx_("--address: empty address");
		return -1;
	}
	opts.address = a;
	return 0;
}

static int opt_trace_instance(const struct opt_def *o, const char *a)
{
	(void)o;
	if (!*a || strchr(a, '/') || !strcmp(a, ".") || !strcmp(a, "..")) {
		warnx_("--trace-instance: '%s' is not an instance name (no '/')", a);
		return -1;
	}
	opts.trace_instance = a;
	return 0;
}

/* A second --analyze is the second LOG, never a silent replacement. */
static int opt_analyze(const struct opt_def *o, const char *a)
{
	(void)o;
	if (opts.analyze[1]) {
		warnx_("--analyze: at most two logs (one emit and one reflect log of the same run)");
		return -1;
	}
	opts.analyze[opts.analyze[0] ? 1 : 0] = a;
	return 0;
}

/* -R: the earlier rant's way to say --timestamps sw */
static int opt_no_hw_ts(const struct opt_def *o, const char *a)
{
	(void)o;
	(void)a;
	opts.ts = TS_SW;
	return 0;
}

/* -F: the earlier rant's fastest reflector, here --spin with -N */
static int opt_fast_path(const struct opt_def *o, const char *a)
{
	(void)o;
	(void)a;
	opts.fast_path = opts.no_tx_ts = opts.spin = true;
	return 0;
}

/* --cpu-latency US|off: every refusal names the whole range, off included */
static int opt_cpu_latency(const struct opt_def *o, const char *a)
{
	char *end = (char *)a;
	unsigned long long v = 0;
	bool num = isdigit((unsigned char)a[0]), neg = a[0] == '-' && isdigit((unsigned char)a[1]);

	if (!strcmp(a, "off")) {
		opts.cpu_latency = -1;
		return 0;
	}
	if (num) {
		errno = 0;
		v = strtoull(a, &end, 10);
	}
	if (!num || *end || errno == ERANGE || v > (unsigned long long)o->max) {
		warnx_("--%s: '%s' is %s (%.0f to %.0f us, or off)", o->name, a,
		       neg || (num && !*end) ? "out of range" : "not a whole number", o->min, o->max);
		return -1;
	}
	opts.cpu_latency = (int)v;
	return 0;
}

static const char *const ts_names[] = { "auto", "hw", "sw", NULL };	/* enum ts_mode */
static const char *const log_format_names[] = { "text", "csv", NULL };	/* enum log_format */

static const struct opt_def opt_table[] = {
	{ .val = 'i', .name = "interface", .arg = "IFACE", .type = OT_CALL, .set = opt_iface,
	  .modes = M_RUN,
	  .help = "bind to IFACE; its NIC is asked for hardware stamps" },
	{ .val = 'a', .name = "address", .arg = "ADDR", .type = OT_CALL, .set = opt_address,
	  .modes = M_RUN,
	  .help = "emit (client) to the reflector at ADDR (IPv4, IPv6 or name); omit to reflect" },
	{ .val = O_PORT, .name = "port", .arg = "N", .type = OT_UINT, CFG(port),
	  .min = 1, .max = 65535, .def = 12345, .modes = M_RUN,
	  .help = "UDP port (1-65535, default 12345)" },
	{ .val = O_SIZE, .name = "size", .arg = "BYTES", .type = OT_CALL, .set = opt_cls_list,
	  CFG(size),
	  .min = SIZE_MIN, .max = PROTO_MAX_SIZE, .def = PROTO_HDR_LEN,
	  .modes = M_EMIT,
	  .help = "datagram payload, 24-65000 bytes (default 64); the pong is the same size, below 64 without the reflector's stamps that do not fit; a list (64,512,1400) measures each in turn",
	  .why_min = "a datagram carries at least rant's short header (magic, version, type, flags, session, idle hint, sequence number)" },
	{ .val = 'd', .name = "duration", .arg = "SEC", .type = OT_NUM, CFG(duration_s),
	  .min = 0.001, .max = 31536000, .modes = M_RUN,
	  .help = "stop after SEC seconds (default: until --count or SIGINT); reflect: a session begun before then is finished first (to the client's FIN, at most SEC more)" },
	{ .val = O_COUNT, .name = "count", .arg = "N", .type = OT_UINT, CFG(count),
	  .min = 1, .max = 1000000000000ULL, .modes = M_EMIT,
	  .help = "emit: stop after N measured transactions (warm-up not included)" },
	{ .val = 'w', .name = "warmup", .arg = "PKTS", .type = OT_UINT, CFG(warmup),
	  .min = 0, .max = 1000000000, .modes = M_RUN,
	  .help = "emit: the first PKTS pings are flagged warm-up, neither side counts them; reflect: also its first PKTS pings of each session (default 0)" },
	{ .val = O_INTERVAL, .name = "interval", .arg = "US", .type = OT_CALL, .set = opt_cls_list,
	  CFG(interval_ns), .min = 0, .max = 60000000, .scale = NSEC_PER_US,
	  .modes = M_EMIT,
	  .help = "emit: 0 = back-to-back (default), else one ping every US on an absolute cadence; a list: one per class" },
	{ .val = O_TIMEOUT, .name = "timeout", .arg = "MS", .type = OT_UINT, CFG(timeout_ns),
	  .min = 1, .max = 60000, .scale = 1000000, .def = 1000 * 1000000LL,
	  .modes = M_EMIT,
	  .help = "emit: a pong later than MS is lost, and counted late if it comes (default 1000); nothing heard for 3 x MS, 5 s at least, ends the run (exit 1)" },
	{ .val = O_TIMESTAMPS, .name = "timestamps", .arg = "auto|hw|sw", .type = OT_CHOICE,
	  CFG(ts), .choices = ts_names, .max = TS_SW, .modes = M_RUN,
	  .help = "wire stamps from the NIC, the kernel, or NIC if it can (default auto)" },
	{ .val = 's', .name = "sw-timestamps", .type = OT_FLAG, CFG(sw_stamps),
	  .modes = M_RUN,
	  .help = "also take app stamps (clock_gettime) around send and receive" },
	{ .val = 't', .name = "threshold", .arg = "US", .type = OT_US, CFG(threshold_ns),
	  .min = 0.001, .max = 60000000, .def = -1, .modes = M_ALL,
	  .help = "a latency above US (rtt on emit, response on reflect) is a breach: stop, exit 3" },
	{ .val = 'C', .name = "continue", .type = OT_FLAG, CFG(cont), .modes = M_ALL,
	  .help = "with -t: keep going after a breach, count them, exit 3 at the end" },
	{ .val = 'H', .name = "histogram", .type = OT_FLAG, CFG(histogram), .modes = M_ALL,
	  .help = "print percentiles and the histogram" },
	{ .val = 'b', .name = "bucket-size", .arg = "US", .type = OT_US, CFG(bucket_ns),
	  ALSO(bucket_set), .min = 0.001, .max = 1000000, .def = 100, .modes = M_ALL,
	  .help = "histogram bucket in us, fractions allowed (default 0.1); given, -H prints buckets of that width" },
	{ .val = 'o', .name = "overflow", .arg = "US", .type = OT_US, CFG(bound_ns),
	  .min = 0.001, .max = 60000000, .def = 1000 * NSEC_PER_US, .modes = M_ALL,
	  .help = "histogram bound in us; samples above it exact, beyond 16384 of them within 0.1 % (default 1000)" },
	{ .val = 'T', .name = "trace-marker", .type = OT_FLAG, CFG(trace),
	  .modes = M_RUN,
	  .help = "write RANT_TEST_START and breaches to the tracefs instance's trace_marker; stop tracing on a breach; with -t, read the trace back after the run and say why each breach was slow (its clock set to mono, tracing on and a default event set where the instance has none)" },
	{ .val = 'S', .name = "snapshot", .type = OT_FLAG, CFG(snapshot), ALSO(trace),
	  .modes = M_RUN,
	  .help = "-T, and a tracefs snapshot on each breach (implies -T)" },
	{ .val = O_TRACE_INSTANCE, .name = "trace-instance", .arg = "NAME", .type = OT_CALL,
	  .set = opt_trace_instance, .modes = M_RUN,
	  .help = "tracefs instance for -T/-S (default rant)" },
	{ .val = 'l', .name = "log", .arg = "FILE", .type = OT_STR, CFG(log),
	  .modes = M_RUN,
	  .help = "write every transaction to FILE after the run" },
	{ .val = O_LOG_FORMAT, .name = "log-format", .arg = "text|csv", .type = OT_CHOICE,
	  CFG(log_format), .choices = log_format_names, .max = LOG_CSV,
	  .modes = M_RUN,
	  .help = "log format (default text, the earlier rant's)" },
	{ .val = O_LOG_RECORDS, .name = "log-records", .arg = "N", .type = OT_UINT,
	  CFG(log_records), .min = 1, .max = 10000000000ULL, .modes = M_RUN,
	  .help = "keep the last N records (default: what --count/-d/--interval produce, else 1000000)" },
	{ .val = 'L', .name = "log-threshold", .arg = "US", .type = OT_US, CFG(log_threshold_ns),
	  .min = 0, .max = 60000000, .def = -1, .modes = M_RUN,
	  .help = "log only transactions above US (lost ones always)" },
	{ .val = 'G', .name = "hugepages", .type = OT_FLAG, CFG(hugepages),
	  .modes = M_RUN,
	  .help = "put the run's memory in hugepages (MAP_HUGETLB)" },
	{ .val = 'p', .name = "busy-poll-us", .arg = "US", .type = OT_UINT, CFG(busy_poll_us),
	  ALSO(busy_poll_set), .min = 0, .max = 1000000, .modes = M_RUN,
	  .help = "SO_BUSY_POLL: busy-poll the NIC queue for US when blocking" },
	{ .val = 'P', .name = "prefer-busypoll", .type = OT_FLAG, CFG(prefer_busypoll),
	  .modes = M_RUN,
	  .help = "SO_PREFER_BUSY_POLL" },
	{ .val = 'B', .name = "budget", .arg = "N", .type = OT_UINT, CFG(budget), ALSO(budget_set),
	  .min = 1, .max = 65535, .modes = M_RUN,
	  .help = "SO_BUSY_POLL_BUDGET (1-65535)" },
	{ .val = O_SPIN, .name = "spin", .type = OT_FLAG, CFG(spin),
	  .modes = M_RUN,
	  .help = "spin on non-blocking receives instead of sleeping (one CPU fully used)" },
	{ .val = O_PRIORITY, .name = "priority", .arg = "N", .type = OT_CALL, .set = opt_cls_list,
	  CFG(priority), .min = 0, .max = INT_MAX, .def = -1, .modes = M_RUN,
	  .help = "SO_PRIORITY (0-6; more needs CAP_NET_ADMIN); a list (1,2,3: 0-14) runs classes side by side" },
	{ .val = O_TOS, .name = "tos", .arg = "N", .type = OT_CALL, .set = opt_cls_list, CFG(tos),
	  .min = 0, .max = 255, .def = -1, .modes = M_RUN, .hex = true,
	  .help = "IP TOS / IPv6 traffic class (0-255, or hex: 0x20); a list runs classes side by side" },
	{ .val = O_ONCE, .name = "once", .type = OT_FLAG, CFG(once),
	  .modes = M_REFLECT,
	  .help = "reflect: exit after one session" },
	{ .val = O_JSON, .name = "json", .arg = "FILE|-", .type = OT_STR, CFG(json), .modes = M_ALL,
	  .help = "write the report as JSON to FILE or stdout (the text report then goes to stderr)" },
	{ .val = O_ANALYZE, .name = "analyze", .arg = "LOG", .type = OT_CALL, .set = opt_analyze,
	  .modes = M_ALL,
	  .help = "report from a rant log; a second LOG (emit + reflect) is joined by SEQ" },
	{ .val = O_TRACE_FILE, .name = "trace", .arg = "FILE", .type = OT_STR, CFG(trace_file),
	  .modes = M_ANALYZE,
	  .help = "with --analyze: explain each --top transaction from this saved trace (the instance's trace of a -t -T run)" },
	{ .val = O_TOP, .name = "top", .arg = "N", .type = OT_UINT, CFG(top), ALSO(top_set),
	  .min = 1, .max = 1000000, .def = 10, .modes = M_ANALYZE,
	  .help = "with --analyze: list the N worst transactions (default 10); --plot then draws as many (at most 50; else 15)" },
	{ .val = O_PLOT, .name = "plot", .arg = "FILE.svg", .type = OT_STR, CFG(plot),
	  .modes = M_ALL,
	  .help = "after the run (or --analyze): latency over time, distribution and worst transactions as one SVG" },
	{ .val = 'q', .name = "quiet", .type = OT_FLAG, CFG(quiet), .modes = M_ALL,
	  .help = "no status line and no start-up notes" },
	{ .val = 'v', .name = "verbose", .type = OT_FLAG, CFG(verbose), .modes = M_ALL,
	  .help = "more detail at start, and the status line even into a file or pipe" },
	{ .val = 'V', .name = "version", .type = OT_EXIT, .modes = M_ALL,
	  .help = "print the version" },
	{ .val = 'h', .name = "help", .type = OT_EXIT, .modes = M_ALL,
	  .help = "this help" },
	/* the earlier rant's flags: -N, -F work on the reflector only (opt_check_earlier) */
	{ .val = 'N', .name = "no-tx-ts", .type = OT_FLAG, CFG(no_tx_ts), .modes = M_RUN,
	  .help = "reflect: no TX stamps; response is then T3_SW-T2 wire (app send), labelled so" },
	{ .val = 'R', .name = "no-hw-ts", .type = OT_CALL, .set = opt_no_hw_ts,
	  .modes = M_RUN,
	  .help = "no NIC stamps: the same as --timestamps sw" },
	{ .val = 'F', .name = "fast-path", .type = OT_CALL, .set = opt_fast_path,
	  .modes = M_RUN,
	  .help = "reflect: the fastest path rant has: --spin and -N together" },
	{ .val = '2', .name = "threaded", .type = OT_CALL, .set = opt_threaded, .modes = M_ALL,
	  .help = "refused: send and receive on separate threads needs 3 CPUs (says why)" },
	{ .val = 'M', .name = "pmc", .type = OT_FLAG, CFG(pmc), .modes = M_RUN,
	  .help = "hardware counters (cycles, instructions, cache and dTLB misses) per transaction, user space, via rdpmc (x86_64)" },
	{ .val = O_ALLOW_FRAGMENTS, .name = "allow-fragments", .type = OT_FLAG,
	  CFG(allow_fragments), .modes = M_ALL,
	  .help = "emit: allow --size above the path MTU (stamps are then of the first fragment)" },
	{ .val = O_PTP_PROBE, .name = "ptp-probe", .type = OT_FLAG, CFG(ptp_probe),
	  .modes = M_RUN,
	  .help = "every packet a PTPv2 event message on UDP 319, for NICs that stamp only PTP (both ends)" },
	{ .val = O_PTP_DOMAIN, .name = "ptp-domain", .arg = "N", .type = OT_UINT, CFG(ptp_domain),
	  .min = 0, .max = 255, .def = PTP_DOMAIN_DEFAULT, .modes = M_ALL,
	  .help = "with --ptp-probe: PTP domainNumber of the probes (0-255, default 127)" },
	{ .val = O_KEY_FILE, .name = "key-file", .arg = "FILE", .type = OT_STR, CFG(key_file),
	  .modes = M_RUN,
	  .help = "both ends: a keyed tag (SipHash-2-4) on every datagram; FILE: 16-4096 secret bytes, mode 600" },
	{ .val = O_STATUS, .name = "status", .type = OT_FLAG, CFG(status), .modes = M_RUN,
	  .help = "the once-a-second status line on stderr even when it is no terminal (as -v does)" },
	{ .val = O_HISTFILE, .name = "histfile", .arg = "FILE", .type = OT_STR, CFG(histfile),
	  .modes = M_ALL,
	  .help = "the histogram of rtt (reflect: response) to FILE, one line per bucket: us and count (cyclictest's --histfile); a reflector appends each session" },
	{ .val = O_SERIES, .name = "series", .arg = "FILE|-", .type = OT_STR, CFG(series),
	  .modes = M_EMIT | M_ANALYZE,
	  .help = "the run as it goes: every --series-every seconds one JSON line (JSON Lines) to FILE or stdout with the interval's packets, breaches and each metric's min/p50/p99/p99.9/max, per class too; --analyze: the same from a client's log" },
	{ .val = O_SERIES_EVERY, .name = "series-every", .arg = "SEC", .type = OT_NUM,
	  CFG(series_s), .min = 0.1, .max = 86400, .def = 1, .modes = M_EMIT | M_ANALYZE,
	  .help = "with --series: the interval of its lines, seconds (default 1)" },
	{ .val = O_CPU_LATENCY, .name = "cpu-latency", .arg = "US|off", .type = OT_CALL,
	  .set = opt_cpu_latency, ALSO(cpu_latency_set), .min = 0, .max = 1000000, .modes = M_RUN,
	  .help = "hold the CPUs' wake-up latency limit (/dev/cpu_dma_latency) at US while running (reflect: from start and during sessions, let go after 60 s without one), as cyclictest does (default 0; off: leave idle states alone)" },
	{ .val = O_CLIENT_NO_TX, .name = "client-no-tx-ts", .type = OT_FLAG, CFG(cli_no_tx),
	  .modes = M_EMIT,
	  .help = "emit: no TX stamps of the pings (implies -s; kernel stamps): rtt is then T4 wire - T1_SW (app send), labelled so; client tx stack, forward, network and the clock offset are not measured. With -N on the reflector: the fewest stamps rant takes" },
	{ .val = O_TXTIME, .name = "txtime", .arg = "US", .type = OT_UINT, CFG(txtime_lead_ns),
	  ALSO(txtime), .min = 1, .max = 1000000, .scale = NSEC_PER_US, .modes = M_EMIT,
	  .help = "emit: each ping leaves at a launch time, its slot plus US (SO_TXTIME on CLOCK_TAI; needs -i with an etf qdisc on the class's queue and the kernel's TAI offset set; implies -s): launch error, time to spare and the launch times the qdisc missed, per class" },
	{ .val = O_TXTIME_DEADLINE, .name = "txtime-deadline", .type = OT_FLAG, CFG(txtime_deadline),
	  .modes = M_EMIT,
	  .help = "emit: --txtime's launch time is a deadline (SOF_TXTIME_DEADLINE_MODE, for an etf with deadline_mode)" },
	{ .val = O_BASE_TIME, .name = "base-time", .arg = "SEC[.NS]", .type = OT_CALL,
	  .set = opt_base_time, .modes = M_EMIT,
	  .help = "emit: with --cycle, the schedule's base time on CLOCK_TAI (default 0)" },
	{ .val = O_CYCLE, .name = "cycle", .arg = "NS", .type = OT_UINT, CFG(cycle_ns),
	  .min = 1000, .max = 1000000000, .modes = M_EMIT,
	  .help = "emit: each class's cadence on a schedule of this cycle: its pings (with --txtime their launch times) at base time + class offset + n cycles; --interval a multiple of it; a taprio on -i is read and each class placed in its gate's windows" },
	{ .val = O_CLASS_OFFSET, .name = "class-offset", .arg = "NS", .type = OT_CALL,
	  .set = opt_class_offset, .modes = M_EMIT,
	  .help = "emit: with --cycle, the offset into the cycle; a list (0,50000,100000): one per class" },
};
#define NOPTS	ARRAY_SIZE(opt_table)

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: rant [-i IFACE] -a ADDR [options]      emit: measure against a reflector\n"
		   "       rant [-i IFACE] [options]              reflect: answer pings\n"
		   "       rant --analyze LOG [LOG] [options]     report from logs\n\nOptions:\n");
	for (i = 0; i < NOPTS; i++) {
		const struct opt_def *o = &opt_table[i];
		char left[48];

		snprintf(left, sizeof(left), "%c%c%c --%s%s%s", o->val < 256 ? '-' : ' ',
			 o->val < 256 ? o->val : ' ', o->val < 256 ? ',' : ' ', o->name,
			 o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(f, "  %-30s %s\n", left, o->help);
	}
	fprintf(f, "\nExit status: 0 ok, 1 runtime failure (or no answer), 2 usage or configuration error, 3 threshold exceeded.\n");
}

static const struct opt_def *opt_find(int val)
{
	size_t i;

	for (i = 0; i < NOPTS; i++) {
		if (opt_table[i].val == val) {
			return &opt_table[i];
		}
	}
	return NULL;
}

static const char *opt_name(int val)
{
	static char buf[40];
	const struct opt_def *o = opt_find(val);

	if (!o) {
		return "?";
	}
	snprintf(buf, sizeof(buf), "--%s", o->name);
	return buf;
}

/* A number into the option's config field, whatever the field's type. */
static void opt_store(const struct opt_def *o, int64_t v)
{
	void *p = (char *)&opts + o->off;

	switch (o->kind) {
	case OF_BOOL:
		*(bool *)p = v;
		break;
	case OF_UINT:
		*(unsigned *)p = (unsigned)v;
		break;
	case OF_INT:
		*(int *)p = (int)v;
		break;
	case OF_U64:
		*(uint64_t *)p = (uint64_t)v;
		break;
	case OF_I64:
		*(int64_t *)p = v;
		break;
	case OF_DBL:
		*(double *)p = (double)v;
		break;
	case OF_STR:
	case OF_NONE:
		break;
	}
}

/*
 * --version: the version on the first line (as scripts read it), then how
 * this binary was built: the source's commit where make knew it, the
 * compiler (and a sanitizer), the target, the C library.
 */
static void print_version(FILE *f)
{
	fprintf(f, "rant %s\n", RANT_VERSION);
	fprintf(f, "built%s%s with %s %s%s, for %s, glibc %d.%d\n", *RANT_BUILD ? " from " : "", RANT_BUILD,
#ifdef __clang__
		"clang",
#else
		"gcc",
#endif
		__VERSION__, RANT_ASAN ? " and AddressSanitizer" : "",
#if defined(__x86_64__)
		"x86_64",
#elif defined(__aarch64__)
		"aarch64",
#else
		"another 64-bit target",
#endif
		__GLIBC__, __GLIBC_MINOR__);
}

/* One option's argument into cfg: 0, 1 = parsing ends here (help, version), -1 = refused. */
static int opt_value(const struct opt_def *o, const char *a)
{
	uint64_t u;
	int64_t ns;
	double d;
	int k;

	switch (o->type) {
	case OT_FLAG:
		opt_store(o, 1);
		return 0;
	case OT_UINT:
		if (opt_u64(o, a, (uint64_t)o->min, (uint64_t)o->max, &u) < 0) {
			return -1;
		}
		opt_store(o, (int64_t)(u * (o->scale ? o->scale : 1)));
		return 0;
	case OT_NUM:
		if (opt_num(o, a, o->min, o->max, false, &d) < 0) {
			return -1;
		}
		*(double *)((char *)&opts + o->off) = d;
		return 0;
	case OT_US:
		if (opt_us_to_ns(o, a, &ns) < 0) {
			return -1;
		}
		opt_store(o, ns);
		return 0;
	case OT_CHOICE:
		if ((k = opt_choice(o, a)) < 0) {
			return -1;
		}
		opt_store(o, k);
		return 0;
	case OT_STR:
		*(const char **)((char *)&opts + o->off) = a;
		return 0;
	case OT_CALL:
		return o->set(o, a);
	case OT_EXIT:
		if (o->val == 'h') {
			usage(stdout);
		} else {
			print_version(stdout);
		}
		return 1;
	}
	return -1;
}

static int opt_apply(const struct opt_def *o, const char *a)
{
	int r = opt_value(o, a);

	if (!r && o->also) {
		*(bool *)((char *)&opts + o->also) = true;
	}
	return r;
}

/* cfg as no option given: every field's default from the table. */
static void cfg_defaults(void)
{
	size_t i;

	memset(&opts, 0, sizeof(opts));
	for (i = 0; i < NOPTS; i++) {
		if (opt_table[i].def && opt_table[i].kind != OF_BOOL) {
			opt_store(&opt_table[i], opt_table[i].def);
		}
	}
	cls_defaults();
}

/* Checks across options, after the loop (opt_check). */
static int cls_check(const bool *given)
{
	uint64_t ival = opts.interval_ns;

	(void)given;
	if (cls_setup_lists(&ival) < 0) {
		return -1;
	}
	opts.interval_ns = ival;
	return 0;
}

/* --ptp-probe and its port: PTP event messages go to UDP 319, nowhere else. */
static int ptp_opt_check(const bool *given)
{
	run.proto_pre = 0;
	if (given[O_PTP_DOMAIN] && !opts.ptp_probe) {
		warnx_("--ptp-domain: needs --ptp-probe");
		return -1;
	}
	if (!opts.ptp_probe) {
		return 0;
	}
	if (given[O_PORT] && opts.port != PTP_EVENT_PORT) {
		warnx_("--port: %u with --ptp-probe; PTP event messages use UDP port %d (leave --port out)",
		       opts.port, PTP_EVENT_PORT);
		return -1;
	}
	opts.port = PTP_EVENT_PORT;
	run.proto_pre = PTP_HDR_LEN;
	return 0;
}

/*
 * An option given that this mode refuses, from the table's modes; of several,
 * the first in the table's (and --help's) order is named.
 */
static int opt_check_modes(const bool *given)
{
	const struct opt_def *first = NULL;
	size_t i;

	for (i = 0; i < NOPTS && !first; i++) {
		if (given[opt_table[i].val] && !(opt_table[i].modes & (1u << opts.mode))) {
			first = &opt_table[i];
		}
	}
	if (!first) {
		return 0;
	}
	if (opts.mode == MODE_ANALYZE) {
		warnx_("--%s: not used with --analyze (it reads logs, it sends nothing)",
		       first->name);
	} else if (opts.mode == MODE_REFLECT && (first->modes & M_EMIT)) {
		warnx_("--%s: only for emit (-a ADDR)%s", first->name,
		       first->modes == M_EMIT ? "; the client decides it for the reflector" : "");
	} else if (first->modes & M_ANALYZE && !(first->modes & M_RUN)) {
		warnx_("--%s: only with --analyze", first->name);
	} else {
		warnx_("--%s: only for reflect (without -a)", first->name);
	}
	return -1;
}

/* The earlier rant's later flags, once all options are known. */
static int opt_check_earlier(const bool *given)
{
	if (given['R'] && given[O_TIMESTAMPS]) {
		warnx_("--no-hw-ts: is --timestamps sw; give one of them");
		return -1;
	}
	if (opts.mode == MODE_EMIT && (given['N'] || given['F'])) {
		/* the earlier rant took them on both sides and used them on the server */
		warnx_("%s: a reflector option (for the client's own TX stamps: --client-no-tx-ts); this emit runs without it",
		       given['F'] ? "--fast-path" : "--no-tx-ts");
		opts.no_tx_ts = opts.fast_path = false;
		opts.spin = given[O_SPIN];
	}
	return 0;
}

/*
 * --client-no-tx-ts: the rtt starts at T1_SW, an app stamp on CLOCK_REALTIME,
 * so T4 must be on that clock too: a kernel stamp, never the NIC's (on its
 * PHC).  -s comes with it (T1_SW is one of its stamps).
 */
static int opt_check_cli_no_tx(const bool *given)
{
	if (!opts.cli_no_tx) {
		return 0;
	}
	if (given[O_TIMESTAMPS] && opts.ts == TS_HW) {
		warnx_("--client-no-tx-ts: its rtt starts at the app's send (CLOCK_REALTIME), so its T4 is the kernel's stamp: not with --timestamps hw");
		return -1;
	}
	opts.ts = TS_SW;
	opts.sw_stamps = true;
	return 0;
}

/* The smallest --size given (of a list, or the one value). */
static unsigned opt_size_min(void)
{
	unsigned m = opts.size;
	int i;

	for (i = 0; i < classes.nsz; i++) {
		if (classes.size[i] && classes.size[i] < m) {
			m = classes.size[i];
		}
	}
	return m;
}

/* --key-file: load the key; the tag needs 8 bytes after the header. */
static int opt_check_key(const bool *given)
{
	run.key.on = false;
	if (!opts.key_file) {
		return 0;
	}
	if (given[O_SIZE] && opt_size_min() < proto_min_size(true)) {
		/* every size of a list: one without room would go out untagged, all lost */
		char list[40] = "";

		if (classes.nsz > 1) {
			snprintf(list, sizeof(list), ", the list has %u", opt_size_min());
		}
		warnx_("--key-file: needs --size %u or more (the tag follows the %d-byte header)%s",
		       proto_min_size(true), PROTO_HDR_LEN, list);
		return -1;
	}
	if (opts.size < proto_min_size(true)) {
		opts.size = proto_min_size(true);
	}
	return key_load(opts.key_file);
}

/*
 * -C without -t and -L without -l: the earlier rant took each alone, and
 * crucible's bench-rant passes them as independent flags.  Accepted, without
 * effect, said in one line once the command line is known to be good.
 */
static void opt_note_alone(const bool *given)
{
	bool c = given['C'] && opts.threshold_ns < 0, l = given['L'] && !opts.log;

	if (!c && !l) {
		return;
	}
	warnx_("%s%s%s (accepted, as the earlier rant did)",
	       c ? "--continue: no effect without --threshold" : "", c && l ? "; " : "",
	       l ? "--log-threshold: no effect without --log" : "");
	opts.cont = opts.cont && !c;
	if (l) {
		opts.log_threshold_ns = -1;	/* nor on what --plot draws */
	}
}

/*
 * One --interval with classes: the classes take turns on that one cadence,
 * so each sends at 1/n of the rate.  Said at start, with the list that gives
 * each class the cadence instead.
 */
static void opt_note_interval(void)
{
	char list[80] = "";
	size_t len = 0;
	int i;

	if (opts.mode != MODE_EMIT || classes.ncls < 2 || classes.nival || !opts.interval_ns) {
		return;
	}
	for (i = 0; i < classes.ncls && len < sizeof(list); i++) {
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? "," : "",
					opts.interval_arg);
	}
	warnx_("--interval %s with %d classes: they take turns, each class sends every %.6g us (1/%d of the rate); --interval %s gives each class %s us",
	       opts.interval_arg, classes.ncls, (double)opts.interval_ns * classes.ncls / 1000,
	       classes.ncls, list, opts.interval_arg);
}

/*
 * Two paths name one file when they resolve to it, whatever the spelling
 * (h.json, ./h.json, a symlink, a hard link): the same device and inode for
 * a file that exists, else the same resolved directory and name.  "-" is
 * standard output, never a file.
 */
static bool same_file(const char *a, const char *b)
{
	char da[PATH_MAX], db[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
	const char *na, *nb;
	struct stat sa, sb;
	int ea, eb;

	if (!strcmp(a, "-") || !strcmp(b, "-")) {
		return false;
	}
	if (!strcmp(a, b)) {
		return true;
	}
	ea = stat(a, &sa);
	eb = stat(b, &sb);
	if (!ea && !eb) {
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	}
	if (!ea || !eb) {
		return false;	/* one exists and the other does not */
	}
	na = strrchr(a, '/');
	nb = strrchr(b, '/');
	snprintf(da, sizeof(da), "%.*s", na ? (int)(na - a) + 1 : 1, na ? a : ".");
	snprintf(db, sizeof(db), "%.*s", nb ? (int)(nb - b) + 1 : 1, nb ? b : ".");
	na = na ? na + 1 : a;
	nb = nb ? nb + 1 : b;
	return strcmp(na, nb) == 0 && realpath(da, ra) && realpath(db, rb) && !strcmp(ra, rb);
}

/*
 * Each output a file of its own, and none of them a log --analyze reads:
 * one would overwrite the other.  Said as "--json: 'PATH' is also the
 * --log file", the later option of the two first.
 */
static int opt_check_outputs(void)
{
	const struct { const char *opt, *path; } out[] = {
		{ "--analyze", opts.analyze[0] }, { "--analyze", opts.analyze[1] },
		{ "--log", opts.log }, { "--json", opts.json }, { "--plot", opts.plot },
		{ "--histfile", opts.histfile }, { "--series", opts.series },
	};
	size_t i, j;

	if (opts.series && opts.json && !strcmp(opts.series, "-") && !strcmp(opts.json, "-")) {
		warnx_("--series: '-' is stdout, and --json - has it: give one of them a file");
		return -1;
	}
	for (i = 2; i < ARRAY_SIZE(out); i++) {
		for (j = 0; j < i && out[i].path; j++) {
			if (out[j].path && same_file(out[i].path, out[j].path)) {
				warnx_("%s: '%s' is also the %s file%s", out[i].opt, out[i].path, out[j].opt,
				       j < 2 ? " (it would overwrite the log it reads)" : "");
				return -1;
			}
		}
	}
	return 0;
}

/* Options that make no sense together, checked once all are known. */
static int opt_check(const bool *given)
{
	if (opt_check_modes(given) < 0) {
		return -1;
	}
	if (!opts.log && (given[O_LOG_FORMAT] || (given[O_LOG_RECORDS] && !opts.plot))) {
		int why = given[O_LOG_FORMAT] ? O_LOG_FORMAT : O_LOG_RECORDS;

		warnx_("%s: needs --log FILE", opt_name(why));
		return -1;
	}
	if (given[O_SERIES_EVERY] && !opts.series) {
		warnx_("--series-every: needs --series FILE|-");
		return -1;
	}
	if (opts.trace_instance && !opts.trace) {
		warnx_("--trace-instance: needs -T or -S");
		return -1;
	}
	if (opts.bound_ns < opts.bucket_ns) {
		warnx_("--overflow: %.3f us is below the bucket size %.3f us",
		       (double)opts.bound_ns / 1000, (double)opts.bucket_ns / 1000);
		return -1;
	}
	if ((opts.bound_ns + opts.bucket_ns - 1) / opts.bucket_ns > 10000000) {
		warnx_("--overflow: %.3f us / --bucket-size %.3f us makes %" PRIu64 " buckets; at most 10000000",
		       (double)opts.bound_ns / 1000, (double)opts.bucket_ns / 1000,
		       (opts.bound_ns + opts.bucket_ns - 1) / opts.bucket_ns);
		return -1;
	}
	if (opt_check_outputs() < 0 || opt_check_key(given) < 0 || ptp_opt_check(given) < 0) {
		return -1;
	}
	if (cls_check(given) < 0 || opt_check_earlier(given) < 0 ||
	    opt_check_cli_no_tx(given) < 0 || opt_check_tsn(given) < 0) {
		return -1;
	}
	opt_note_alone(given);
	opt_note_interval();
	return 0;
}

/* Options whose value may be a list: a second one would replace the first. */
static bool opt_is_list(const struct opt_def *o)
{
	return o->set == opt_cls_list;
}

/* getopt_long's array and short option string, from the table. */
static void opt_getopt(struct option *lo, char *so)
{
	size_t i;

	*so++ = ':';
	for (i = 0; i < NOPTS; i++) {
		lo[i] = (struct option){ opt_table[i].name, opt_table[i].arg ? required_argument :
					 no_argument, NULL, opt_table[i].val };
		if (opt_table[i].val < 256) {
			*so++ = (char)opt_table[i].val;
			if (opt_table[i].arg) {
				*so++ = ':';
			}
		}
	}
	memset(&lo[NOPTS], 0, sizeof(lo[NOPTS]));
	*so = 0;
}

/*
 * The earlier rant's long options: its getopt_long took any abbreviation
 * unique among these, and its users' scripts may hold one that rant's
 * newer options make ambiguous (--hist, --inter, --v, --co).
 */
static const char *const opt_earlier_long[] = {
	"--interface", "--address", "--threshold", "--continue", "--log-threshold",
	"--trace-marker", "--snapshot", "--duration", "--warmup", "--histogram", "--log",
	"--overflow", "--bucket-size", "--hugepages", "--busy-poll-us", "--budget",
	"--prefer-busypoll", "--verbose", "--pmc", "--no-tx-ts", "--no-hw-ts", "--fast-path",
	"--threaded", "--help", "--sw-timestamps",
};

/* The options NAME (LEN bytes) names: exact (1), or how many it abbreviates; one in *o. */
static int opt_matches(const char *name, size_t len, const struct opt_def **o)
{
	size_t i;
	int n = 0;

	*o = NULL;
	for (i = 0; i < NOPTS; i++) {
		if (strncmp(opt_table[i].name, name, len)) {
			continue;
		}
		if (!opt_table[i].name[len]) {
			*o = &opt_table[i];
			return 1;
		}
		*o = &opt_table[i];
		n++;
	}
	return n;
}

/* The earlier rant's option NAME (LEN bytes) abbreviates, if it names one alone. */
static const struct opt_def *opt_earlier(const char *name, size_t len)
{
	const struct opt_def *o = NULL;
	size_t i;
	int n = 0;

	for (i = 0; i < ARRAY_SIZE(opt_earlier_long); i++) {
		if (!strncmp(opt_earlier_long[i] + 2, name, len)) {
			n++;
			opt_matches(opt_earlier_long[i] + 2, strlen(opt_earlier_long[i] + 2), &o);
		}
	}
	return n == 1 ? o : NULL;
}

/* One line: an abbreviation that names more than one option, and which. */
static void opt_ambiguous(const char *a, const char *name, size_t len)
{
	char list[1024];
	size_t i, used = 0;

	list[0] = 0;
	for (i = 0; i < NOPTS && used + 1 < sizeof(list); i++) {
		if (!strncmp(opt_table[i].name, name, len)) {
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s--%s",
						 used ? ", " : "", opt_table[i].name);
		}
	}
	warnx_("ambiguous option '%s': %s (see rant --help)", a, list);
}

/*
 * argv as getopt_long is to read it (av: room for 2 * argc + 1): a long
 * option abbreviated where rant's options make it ambiguous but the
 * earlier rant's did not is written out whole (its value, after '=', as
 * the next word), so that its scripts keep their meaning; one ambiguous
 * in both is refused naming the options it could be -- getopt_long would
 * say only that it does not know it.  The words that are values of the
 * option before them are left alone.  The count of av, or -1 (said).
 */
static int opt_expand(int argc, char **argv, char **av)
{
	int i, n = 0;

	for (i = 0; i < argc; i++) {
		const struct opt_def *o = NULL;
		char *a = argv[i];

		av[n++] = a;
		if (!i || a[0] != '-' || !a[1]) {
			continue;
		}
		if (!strcmp(a, "--")) {
			while (++i < argc) {
				av[n++] = argv[i];
			}
			break;
		}
		if (a[1] == '-') {
			size_t len = strcspn(a + 2, "=");
			int m = len ? opt_matches(a + 2, len, &o) : 0;

			if (m > 1 && !(o = opt_earlier(a + 2, len))) {
				opt_ambiguous(a, a + 2, len);
				return -1;
			}
			if (m > 1) {
				size_t k;

				for (k = 0; k < ARRAY_SIZE(opt_earlier_long); k++) {
					if (!strcmp(opt_earlier_long[k] + 2, o->name)) {
						av[n - 1] = (char *)opt_earlier_long[k];
					}
				}
				if (a[2 + len] && !o->arg) {
					warnx_("--%s: takes no value ('%s')", o->name, a);
					return -1;
				}
				if (a[2 + len]) {
					av[n++] = a + 3 + len;
					continue;
				}
			}
			if (o && o->arg && !a[2 + len] && i + 1 < argc) {
				av[n++] = argv[++i];
			}
			continue;
		}
		for (a++; *a && (o = opt_find((unsigned char)*a)); a++) {
			if (o->arg) {
				if (!a[1] && i + 1 < argc) {
					av[n++] = argv[++i];
				}
				break;
			}
		}
	}
	av[n] = NULL;
	return n;
}

/* The words of opt_expand's argv into cfg: as opt_parse. */
static int opt_read(int argc, char **argv)
{
	struct option lo[NOPTS + 1];
	char so[NOPTS * 2 + 2];
	bool given[O_MAX] = { false };
	int c, r;

	opt_getopt(lo, so);
	opterr = 0;
	optind = 0;	/* 0, not 1: glibc then resets its state fully */
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		if (c == '?') {
			if (optopt && optopt < 256 && !strchr(so, optopt)) {
				warnx_("unknown option '-%c' (see rant --help)", optopt);
			} else {
				warnx_("unknown option '%s' (see rant --help)", argv[optind - 1]);
			}
			return -1;
		}
		if (c == ':') {
			warnx_("%s: needs a value", optopt ? opt_name(optopt) : argv[optind - 1]);
			return -1;
		}
		if (given[c] && opt_is_list(opt_find(c))) {
			warnx_("%s: given twice; give it once, one value or one list (%s)", opt_name(c),
			       c == O_SIZE ? "64,512,1400" : c == O_INTERVAL ? "100,200,400" : "1,2,3");
			return -1;
		}
		given[c] = true;
		if ((r = opt_apply(opt_find(c), optarg)) != 0) {
			return r;
		}
	}
	if (optind < argc) {
		if (opts.analyze[0] && !opts.analyze[1] && optind + 1 == argc) {
			opts.analyze[1] = argv[optind];
		} else {
			warnx_("unexpected argument '%s' (see rant --help)", argv[optind]);
			return -1;
		}
	}
	opts.mode = opts.analyze[0] ? MODE_ANALYZE : opts.address ? MODE_EMIT : MODE_REFLECT;
	return opt_check(given);
}

/*
 * Parse argv into cfg: 0 = run, 1 = done (help/version), -1 = usage error.
 * cfg keeps pointers into argv's strings, never into the expanded copy's
 * array (freed here).
 */
static int opt_parse(int argc, char **argv)
{
	size_t i, used = 0;
	char **av;
	int n, r;

	cfg_defaults();
	for (i = 0; i < (size_t)argc && used + 1 < sizeof(opts.cmdline); i++) {
		used += (size_t)snprintf(opts.cmdline + used, sizeof(opts.cmdline) - used, "%s%s",
					 i ? " " : "", argv[i]);
	}
	if (!(av = malloc((2 * (size_t)argc + 1) * sizeof(*av)))) {
		warnx_("out of memory reading the command line");
		return -1;
	}
	n = opt_expand(argc, argv, av);
	r = n < 0 ? -1 : opt_read(n, av);
	free(av);
	return r;
}

/* ----------------------------------------------------------------- main */

/*
 * The first signal ends the run with its report; a second one exits at once
 * -- unless it comes within half a second of the first: `timeout -s INT`
 * signals the process and its group together, which is not a user asking
 * twice.  clock_gettime is async-signal-safe.
 */
/* The device's config back from a signal handler, and a fixed line if that failed. */
static void signal_restore(void)
{
	static const char msg[] = "rant: warning: putting back the NIC's timestamping config failed\n";

	if (ts_restore(run.sock_fd) < 0 && write(2, msg, sizeof(msg) - 1) < 0) {
		return;	/* nothing more to do in a handler */
	}
}

static void on_signal(int sig)
{
	uint64_t now = mono_ns();

	(void)sig;
	if (run.stop_signal) {
		if (run.first_signal_ns && now - run.first_signal_ns < NSEC_PER_SEC / 2) {
			return;
		}
		signal_restore();	/* ioctl is async-signal-safe */
		out_swap_drop();	/* --analyze: the targets stay as they were */
		_exit(EXIT_RUNTIME);
	}
	run.first_signal_ns = now;
	run.stop_signal = 1;
}

/*
 * A signal that ends rant at once (a fault, SIGQUIT's core dump) still
 * puts the device's timestamping config back first, then takes its
 * default action (SA_RESETHAND).
 */
static void on_fatal(int sig)
{
	signal_restore();
	raise(sig);
}

static void signals_setup(void)
{
	static const int fatal[] = { SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
	struct sigaction sa, old;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* no SA_RESTART: a blocked recvmsg must return */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a hang-up (the terminal closed) ends the run as SIGTERM does; nohup's SIG_IGN stays */
	if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler != SIG_IGN) {
		sigaction(SIGHUP, &sa, NULL);
	}
	sa.sa_handler = on_fatal;
	sa.sa_flags = SA_RESETHAND;
	/* AddressSanitizer reports faults through its own handlers: left to it (SIGQUIT is not) */
	for (i = 0; i < (RANT_ASAN ? 1 : ARRAY_SIZE(fatal)); i++) {
		sigaction(fatal[i], &sa, NULL);
	}
}

/* The once-a-second status line, from its own thread: the loop never prints. */
/*
 * The status thread is told to stop through an eventfd, not cancelled: a
 * thread cancelled in its sleep never leaves its frames, and a sanitizer
 * build then finds their stack poisoned when the thread is torn down.
 */
static int status_efd = -1;

/* Wait until next (CLOCK_MONOTONIC); true if told to stop meanwhile. */
static bool status_wait(const struct timespec *next)
{
	for (;;) {
		struct pollfd p = { status_efd, POLLIN, 0 };
		uint64_t now = mono_ns(), at = (uint64_t)next->tv_sec * NSEC_PER_SEC +
					      (uint64_t)next->tv_nsec;

		if (now >= at) {
			return false;
		}
		/* poll(2), to the ms rounded up: the loop's own waits are its ppolls */
		if (poll(&p, 1, (int)((at - now + 999999) / 1000000)) > 0) {
			return true;
		}
	}
}

static void *status_main(void *arg)
{
	struct timespec next;
	uint64_t prev = 0, start = mono_ns();
	uint32_t announced = 0;
	int keep[2] = { run.phc.fd, status_efd };

	(void)arg;
	thread_own_files(keep, 2);	/* stderr, the PHC and the stop's eventfd */
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		uint64_t n, sum, mn, mx, lost, sent;
		uint32_t id;

		next.tv_sec++;
		if (status_wait(&next)) {
			break;
		}
		bond_watch();
		phc_tick();
		phc_publish();
		if (cfg->quiet) {
			continue;	/* started for the PHC only */
		}
		id = __atomic_load_n(&run.live.session, __ATOMIC_RELAXED);
		if (!run.side.emit && id && id != announced) {
			fprintf(stderr, "rant: session 0x%08x started\n", id);
			announced = id;
		}
		if (!run.status_live || !__atomic_load_n(&run.live.running, __ATOMIC_RELAXED)) {
			prev = 0;
			continue;
		}
		n = __atomic_load_n(&run.live.samples, __ATOMIC_RELAXED);
		sum = __atomic_load_n(&run.live.sum, __ATOMIC_RELAXED);
		mn = __atomic_load_n(&run.live.min, __ATOMIC_RELAXED);
		mx = __atomic_load_n(&run.live.max, __ATOMIC_RELAXED);
		lost = __atomic_load_n(&run.live.lost, __ATOMIC_RELAXED);
		sent = __atomic_load_n(&run.live.sent, __ATOMIC_RELAXED);
		fprintf(stderr, "rant: %6.0f s  %s %" PRIu64 "  samples %" PRIu64 "  rate %" PRIu64
			"/s  min/avg/max %" PRIu64 "/%" PRIu64 "/%" PRIu64 " ns  lost %" PRIu64 "\n",
			(double)(mono_ns() - start) / 1e9, run.side.emit ? "sent" : "pongs", sent, n,
			n - (prev < n ? prev : n), mn, n ? sum / n : 0, mx, lost);
		prev = n;
	}
	return NULL;
}

/*
 * The periodic line is for a person watching: on a terminal, or when asked
 * (-v, --status).  Into a file or pipe (crucible keeps a run's stdout and
 * stderr in a result file) it would add a line a second of noise.
 */
static bool status_wanted(void)
{
	return !cfg->quiet && (cfg->verbose || cfg->status || isatty(STDERR_FILENO));
}

/* The status thread: see thread_start(). */
static void status_start(void)
{
	status_efd = eventfd(0, EFD_CLOEXEC);
	run.status_started = status_efd >= 0 && thread_start(&run.status_thread, status_main);
	if (!run.status_started && status_efd >= 0) {
		close(status_efd);
		status_efd = -1;
	}
}

static void status_stop(void)
{
	uint64_t one = 1;

	if (run.status_started) {
		if (write(status_efd, &one, sizeof(one)) != (ssize_t)sizeof(one)) {
			pthread_cancel(run.status_thread);	/* cannot happen: a counter of 1 */
		}
		pthread_join(run.status_thread, NULL);
		run.status_started = false;
		close(status_efd);
		status_efd = -1;
	}
}

/* A spinning SCHED_FIFO/RR task with RT throttling on gets preempted anyway. */
static void check_rt_throttling(void)
{
	int pol = sched_getscheduler(0);
	long rt = -1;
	FILE *f;

	if (!cfg->spin || (pol != SCHED_FIFO && pol != SCHED_RR)) {
		return;
	}
	f = fopen("/proc/sys/kernel/sched_rt_runtime_us", "r");
	if (f) {
		if (fscanf(f, "%ld", &rt) != 1) {
			rt = -1;
		}
		fclose(f);
	}
	if (rt >= 0) {
		warnx_("warning: spinning under SCHED_%s while RT throttling is active (sched_rt_runtime_us=%ld): the kernel will stop rant for part of every period; isolate the CPU or echo -1 > /proc/sys/kernel/sched_rt_runtime_us",
		       pol == SCHED_FIFO ? "FIFO" : "RR", rt);
	}
}

static uint32_t random_id(void)
{
	uint32_t id = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		if (read(fd, &id, sizeof(id)) != sizeof(id)) {
			id = 0;
		}
		close(fd);
	}
	if (!id) {
		id = (uint32_t)(real_ns() ^ ((uint64_t)getpid() << 16)) | 1;
	}
	return id;
}

/*
 * Outputs last, so that nothing is created or truncated unless the run
 * starts; a file we created is removed again if the next one fails.
 */
static int outputs_open(int *log_fd, FILE **json)
{
	bool log_new = false, json_new = false;
	int jfd = -1;

	if (cfg->log && (*log_fd = out_open("--log", cfg->log, &log_new)) < 0) {
		return -1;
	}
	if (cfg->json) {
		jfd = strcmp(cfg->json, "-") ? out_open("--json", cfg->json, &json_new) : dup(1);
	}
	if (cfg->json && jfd < 0) {
		if (log_new) {
			unlink(cfg->log);
		}
		return -1;
	}
	if (cfg->series) {
		bool series_new = false;

		series.fd = strcmp(cfg->series, "-") ? out_open("--series", cfg->series, &series_new) :
			    dup(1);
		if (series.fd < 0) {
			if (log_new) {
				unlink(cfg->log);
			}
			if (json_new) {
				unlink(cfg->json);
			}
			return -1;
		}
	}
	if ((cfg->log && out_truncate("--log", cfg->log, *log_fd) < 0) ||
	    (jfd >= 0 && strcmp(cfg->json, "-") && out_truncate("--json", cfg->json, jfd) < 0) ||
	    (cfg->series && strcmp(cfg->series, "-") &&
	     out_truncate("--series", cfg->series, series.fd) < 0)) {
		return -1;
	}
	if (jfd >= 0 && !(*json = fdopen(jfd, "w"))) {
		return -1;
	}
	return 0;
}

/*
 * The earlier rant's options whose meaning rant gives differently: the
 * closest honest thing, said in one line each (never a silent ignore).
 */
static void compat_setup(void)
{
	if (cfg->mode == MODE_REFLECT && cfg->fast_path) {
		warnx_("--fast-path: here it is --spin with -N; the ping's RX stamp stays on (it starts the response) and pongs go out with sendto, as without -F");
	}
}

/* The earlier rant's start-up lines, which users' logs show. */
static void start_lines_earlier(void)
{
	if (run.tr.marker_fd >= 0) {
		fprintf(stderr, "Trace marker enabled for kernel tracing integration\n");
	}
	if (run.tr.snap_fd >= 0) {
		fprintf(stderr, "Trace snapshot enabled\n");
	}
	if (cfg->snapshot && sess.log.cap) {
		fprintf(stderr,
			"Snapshot mode: circular log buffer of %" PRIu64
			" records (~%.0fs at 50K packets/s, %.1f MB)\n",
			sess.log.cap, (double)sess.log.cap / 50000,
			(double)sess.log.cap * sess.log.rec_size / 1e6);
	}
	if (run.memory_locked) {
		fprintf(stderr, "Memory locked in RAM (mlockall successful)\n");
	}
}

/* Everything that can fail with exit 2 happens here, before any packet. */
static int run_setup(struct layout *L, int *log_fd, FILE **json)
{
	bool emit = cfg->mode == MODE_EMIT;

	side_set(emit);
	compat_setup();
	if (tsn_start() < 0) {
		return -1;
	}
	side_set(emit);		/* with --txtime, launch error and time to spare */
	if (cfg->pmc && pmc_setup() < 0) {
		return -1;
	}
	if (layout_compute(L, emit) < 0) {
		return -1;
	}
	if (cfg->log && out_check("--log", cfg->log) < 0) {
		return -1;
	}
	if (cfg->json && strcmp(cfg->json, "-") && out_check("--json", cfg->json) < 0) {
		return -1;
	}
	if (cfg->plot && out_check("--plot", cfg->plot) < 0) {
		return -1;
	}
	if (cfg->series && strcmp(cfg->series, "-") && out_check("--series", cfg->series) < 0) {
		return -1;
	}
	series.on = cfg->series;
	if (cfg->trace && trace_open() < 0) {
		return -1;
	}
	/* memory ready before the port opens: a reflector answers its first ping at once */
	if (arena_setup(L, emit) < 0) {
		return -1;
	}
	memory_lock();
	if ((emit ? sock_open_emit() : sock_open_reflect()) < 0) {
		return -1;
	}
	log_trim();
	if (cls_alloc(L->out_cap) < 0 || cls_open() < 0) {
		return -1;
	}
	if (cfg->histfile && out_check("--histfile", cfg->histfile) < 0) {
		return -1;
	}
	if (cpu_latency_hold() < 0) {
		return -1;
	}
	return outputs_open(log_fd, json) < 0 || plot_open() < 0 ? -1 : histfile_open();
}

static void start_note(void)
{
	if (cfg->quiet) {
		return;
	}
	start_lines_earlier();
	fprintf(stderr, "rant %s: %s%s%s port %u%s%s, %u B, wire stamps %s, app stamps %s, %s\n",
		RANT_VERSION, cfg->mode == MODE_EMIT ? "emit to " : "reflect on",
		cfg->mode == MODE_EMIT ? cfg->address : "", cfg->mode == MODE_EMIT ? "" : "",
		cfg->port, cfg->iface ? " via " : "", cfg->iface ? cfg->iface : "", cfg->size,
		run.ts.note, cfg->sw_stamps ? "on" : "off",
		cfg->spin	 ? "spinning" :
		cfg->interval_ns ? "interval" :
				   "blocking");
	pmc_note(stderr);
	if (cfg->verbose) {
		fprintf(stderr, "rant: memory %zu B locked%s; window %" PRIu64 " transactions; log ring %" PRIu64
			" records of %u B; session 0x%08x\n", run.arena.size, cfg->hugepages ? " in hugepages" : "",
			run.win.mask + 1, sess.log.cap, sess.log.rec_size, sess.id);
		if (run.tr.marker_fd >= 0) {
			fprintf(stderr, "rant: tracing to %s\n", run.tr.dir);
		}
		if (run.cpulat.fd >= 0) {
			if (cfg->mode == MODE_REFLECT) {
				fprintf(stderr, "rant: CPU latency limit %d us held (%s) from start and while sessions run; let go after %d s without one\n",
					run.cpulat.us, cpu_latency_dev, CPU_LATENCY_GRACE_S);
			} else {
				fprintf(stderr, "rant: CPU latency limit %d us held (%s) while rant runs\n",
					run.cpulat.us, cpu_latency_dev);
			}
		}
	}
}

static int run_main(void)
{
	struct layout L;
	int log_fd = -1, code = EXIT_OK, r;
	FILE *json = NULL, *out;
	bool series_bad;

	signals_setup();	/* a SIGINT during set-up then still ends in a report */
	if (run_setup(&L, &log_fd, &json) < 0) {
		ts_restore_say(run.sock_fd);
		trace_restore(false);	/* -T's events, tracing_on: as they were */
		if (run.stop_signal) {
			/* while the memory was faulted in: nothing was sent, nothing to report */
			warnx_("interrupted before the first packet: nothing measured");
			return EXIT_RUNTIME;
		}
		return EXIT_USAGE;
	}
	out = report_stream();
	check_rt_throttling();
	ts_rx_live();
	boot_id_read();		/* the one-way evidence (client), the FIN_ACK's (reflector) */
	/*
	 * A SCHED_OTHER thread's timeouts may fire up to 50 us late (timer
	 * slack, Documentation/timers/hrtimers.rst): at --interval 100 that
	 * skips slots.  RT threads have none; ask for none here too.
	 */
	prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	emitter.tx += run.proto_pre;	/* room for the PTP header (--ptp-probe) */
	/* one byte more than the largest valid datagram reveals an oversized one */
	emitter.rxcap = fin_len() + 1 + run.proto_pre;
	refl.rxcap = PROTO_MAX_SIZE + 1 + run.proto_pre;
	session_reset(cfg->mode == MODE_EMIT ? random_id() : 0);
	start_note();
	run.status_live = status_wanted();
	if (!cfg->quiet || run.phc.fd >= 0) {
		status_start();
	}
	if (cfg->mode == MODE_REFLECT) {
		refl.log_fd = log_fd;
		refl.json = json;
		refl.clean = true;	/* session_reset above: the first session starts on it */
		__atomic_store_n(&run.live.running, 0, __ATOMIC_RELAXED);
		srcw_start();
		r = reflect_run();
		trace_restore(run.tr.breached);
		srcw_stop();
		status_stop();
		phc_end();
		ts_restore_say(run.sock_fd);
		if (json && out_finish(json_what(), json, true) < 0 &&
		    refl.exit_code < EXIT_RUNTIME) {
			refl.exit_code = EXIT_RUNTIME;
		}
		return r < 0 && refl.exit_code < EXIT_RUNTIME ? EXIT_RUNTIME : refl.exit_code;
	}
	series_start();
	r = emit_run();
	series_bad = series_end() < 0;
	memory_lock_current();
	status_stop();
	phc_end();
	ts_restore_say(run.sock_fd);
	if (r < 0) {
		code = EXIT_RUNTIME;
	} else if (result.busy) {
		warnx_("reflector %s port %u is busy with another session: run again when it has ended, "
		       "or start another reflector (--port) for this client", cfg->address, cfg->port);
		code = EXIT_RUNTIME;
	} else if (run.hww.failed) {
		code = EXIT_RUNTIME;	/* hw_watch_none said why */
	} else if (no_sample_say()) {
		code = EXIT_RUNTIME;
	} else if (sess.stop_reason == STOP_NO_ANSWER) {
		warnx_("no answer from %s port %u for %.0f s: %s", cfg->address, cfg->port,
		       (double)emit_silence_ns() / 1e9, sess.c.received ?
		       "the reflector stopped answering" :
		       "is a reflector (rant without -a) running there?");
		code = EXIT_RUNTIME;
	} else if (!sess.c.received && sess.c.sent) {
		warnx_("no answer from %s port %u: is a reflector (rant without -a) running there?", cfg->address, cfg->port);
		code = EXIT_RUNTIME;
	} else if (sess.c.breaches || sess.stop_reason == STOP_PEER_BREACH) {
		code = EXIT_BREACH;
	}
	if (log_fd >= 0 && (r = log_write(log_fd, cfg->log_format)) < 0) {
		code = EXIT_RUNTIME;	/* log_write said which file and why */
	}
	if (series_bad) {
		code = EXIT_RUNTIME;	/* series_say did */
	}
	why_run();
	trace_restore(run.tr.breached);
	return report_outputs(out, json, true, code, sess.log.n, NULL);
}

/*
 * fds 0-2 must be open before rant opens anything: a socket that became fd
 * 1 would carry the report to the reflector as datagrams.  A closed one is
 * pointed at /dev/null (the user closed it: nothing wanted there).
 */
static int fds_own(void)
{
	int fd;

	for (fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
			int n = open("/dev/null", O_RDWR);

			if (n < 0) {
				return -errno;
			}
			if (n != fd) {
				return -EBADF;	/* open takes the lowest free fd: this one */
			}
		}
	}
	/* a closed pipe is a write error to report (exit 1), not a silent death */
	signal(SIGPIPE, SIG_IGN);
	/* past RLIMIT_FSIZE a write fails with EFBIG (said, the other outputs written): no kill */
	signal(SIGXFSZ, SIG_IGN);
	return 0;
}

#ifndef RANT_NO_MAIN
int main(int argc, char **argv)
{
	int r;

	if (fds_own() < 0) {
		return EXIT_RUNTIME;
	}
	run_reset();
	run.to = &outputs_table;
	if (argc < 2) {
		/* the earlier rant required -i: no arguments at all is a question, not a run */
		usage(stderr);
		return EXIT_USAGE;
	}
	r = opt_parse(argc, argv);

	if (r) {
		return r < 0 ? EXIT_USAGE : EXIT_OK;
	}
	if (cfg->mode == MODE_ANALYZE) {
		side_set(true);
		return analyze_main();
	}
	return run_main();
}
#endif
