// SPDX-License-Identifier: GPL-2.0
/*
 * rantnic: a model of a timestamping Ethernet NIC for rant's guest lab
 * (tests/vm/guest-model.sh).  Guests only: never load it on a host.
 *
 * It makes `pairs` pairs of Ethernet ports, rn0/rn1, rn2/rn3, ... (MAC
 * 02:52:4e:00:00:PP, PP the port's number in hex), each pair joined by a
 * wire as veth's are: what one port sends its peer receives, after the
 * wire's delay (delay_ns plus a uniform 0..jitter_ns, order kept).  Each
 * port has its own PTP hardware clock (Documentation/driver-api/ptp.rst)
 * that runs at its own rate error (ppm) from its own offset (offset_ns);
 * each stamps frames as a NIC does (Documentation/networking/
 * timestamping.rst): RX stamps are the receiving port's PHC at the frame's
 * arrival, TX stamps the sending port's PHC at its departure, handed to the
 * socket later by a timer, not inside ndo_start_xmit.
 *
 * The reference clock is CLOCK_MONOTONIC (the guest runs no NTP, so it
 * ticks at the machine's rate).  A PHC reads
 *     phc = base + (mono - mono0) * (1 + (ppm + adj) / 1e6)
 * with (base, mono0) rebased on each settime, adjtime (a step of the
 * PHC, as real drivers do) and adjfine (a new rate from that instant on).
 * An RX stamp is worked out when its timer runs, a little after the
 * arrival it stamps, with the PHC's parameters of that moment: an
 * adjustment between the two moves it by the change of rate times that
 * latency (nanoseconds, at most).
 *
 * Module parameters (also the defaults of the debugfs files below):
 *   pairs=N              pairs of ports (1..8, default 1)
 *   ppm=P0,P1,...        each port's PHC rate error in ppm (default 0)
 *   offset_ns=O0,O1,...  each port's PHC - CLOCK_REALTIME at load (default 0)
 *   delay_ns=D           the wire's delay, both directions (default 20000)
 *   jitter_ns=J          plus a uniform random 0..J ns per frame (default 0)
 *   ptp_only=B0,B1,...   the port stamps PTP event messages only (below)
 *   tx_ts_delay_ns=T     a TX stamp reaches the socket T ns after the
 *                        frame left (default 10000)
 *   truth_len=K          frames kept in the truth ring (default 65536)
 *
 * Receive filters.  By default a port claims HWTSTAMP_FILTER_ALL and the
 * PTP v2 filters, and any filter but NONE asked for is widened to ALL (as
 * several drivers do).  With ptp_only a port claims NONE and the PTP v2
 * event filters only, like igb on an 82576: SIOCSHWTSTAMP with ALL (or a
 * v1 or NTP filter) is refused with ERANGE, any v2 filter is widened to
 * HWTSTAMP_FILTER_PTP_V2_EVENT, and only PTP v2 event messages (Sync,
 * Delay_Req, Pdelay_Req, Pdelay_Resp; L2 and UDP port 319, as
 * ptp_classify_raw() finds them) get an RX stamp.
 *
 * TX types: OFF, ON and ONESTEP_SYNC.  With ONESTEP_SYNC a Sync's
 * originTimestamp is written with its departure time (the UDP checksum
 * made again) and no TX stamp is given for it; other event messages
 * asking for one get it.
 *
 * debugfs, /sys/kernel/debug/rantnic/:
 *   delay_ns, jitter_ns  the wire (read and write, from the next frame on)
 *   truth                the ring of the last truth_len frames, oldest
 *                        first (write anything to empty it), one a line:
 *       seq src dst len proto sport dport depart arrive txstamp rxstamp flags
 *     seq: a frame's number (from 1); src, dst: port numbers; len: bytes
 *     on the wire (without FCS); proto: the ethertype in hex, or "udp"
 *     (IPv4 or IPv6) with its ports; sport dport: UDP ports or 0; depart,
 *     arrive: the frame's true departure and arrival, CLOCK_MONOTONIC ns
 *     (arrive is the time of the model, even when the frame is lost);
 *     txstamp: the sending PHC at depart, rxstamp: the receiving PHC at
 *     arrive (what a stamp carries, given or not, as seconds.nanoseconds
 *     with nine digits, the form of rant's csv logs); flags: letters, or
 *     "-" for none: h a TX stamp was asked for, T given, S skipped (one in
 *     flight), D dropped (never comes), L late, O one-step Sync written,
 *     R an RX stamp given, X lost (the receiving link down).
 *   clocks               one line per port:
 *       port name ptp offset_ns rate_ppb mono_ns
 *     offset_ns: its PHC - CLOCK_REALTIME at mono_ns (CLOCK_MONOTONIC,
 *     the time of the reading); rate_ppb: the PHC's rate error then (ppm
 *     plus adjfine), in ppb with three decimals.
 *   rnN/ (per port, named as the port was at load):
 *     ptp_only           as the parameter, at run time
 *     tx_one_inflight    Y: one TX stamp in flight at a time (as igb): a
 *                        frame asking for one while another is pending
 *                        gets none, counted in tx_hwtstamp_skipped
 *     tx_drop_every      N > 0: every Nth TX stamp never comes
 *                        (tx_hwtstamp_timeouts)
 *     tx_late_every, tx_late_ns   every Nth TX stamp comes tx_late_ns
 *                        later (tx_hwtstamp_late); later ones wait behind it
 *     wire_extra_ns      added to the wire's delay of the frames this port
 *                        sends (an asymmetric path; default 0)
 *     link               the cable of the port's pair: 0 unplugged, 1 in
 *                        (carrier is on when the cable is in and both
 *                        ports are up, as veth's)
 * ethtool -S: the counters above, tx_hwtstamps, rx_hwtstamps,
 * tx_onestep_syncs, rx_dropped_link (frames lost on a link down), the
 * packets and bytes each way and tx_dropped (sent with no carrier).
 */

#include <linux/debugfs.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/hrtimer.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/net_tstamp.h>
#include <linux/netdevice.h>
#include <linux/ptp_classify.h>
#include <linux/ptp_clock_kernel.h>
#include <linux/random.h>
#include <linux/seq_file.h>
#include <linux/skbuff.h>
#include <linux/timekeeping.h>
#include <linux/udp.h>
#include <linux/version.h>
#include <linux/vmalloc.h>
#include <net/checksum.h>
#include <net/ip6_checksum.h>

#define RN_MAX_PAIRS 8
#define RN_MAX_PORTS (2 * RN_MAX_PAIRS)

static int pairs = 1;
module_param(pairs, int, 0444);
MODULE_PARM_DESC(pairs, "pairs of connected ports (1..8)");
static int ppm[RN_MAX_PORTS];
module_param_array(ppm, int, NULL, 0444);
MODULE_PARM_DESC(ppm, "each port's PHC rate error, ppm");
static long offset_ns[RN_MAX_PORTS];
module_param_array(offset_ns, long, NULL, 0444);
MODULE_PARM_DESC(offset_ns, "each port's PHC - CLOCK_REALTIME at load, ns");
static u32 delay_ns = 20000;
module_param(delay_ns, uint, 0444);
MODULE_PARM_DESC(delay_ns, "the wire's delay, ns");
static u32 jitter_ns;
module_param(jitter_ns, uint, 0444);
MODULE_PARM_DESC(jitter_ns, "plus a uniform random 0..jitter_ns, ns");
static bool ptp_only[RN_MAX_PORTS];
module_param_array(ptp_only, bool, NULL, 0444);
MODULE_PARM_DESC(ptp_only, "each port stamps PTP v2 event messages only");
static u32 tx_ts_delay_ns = 10000;
module_param(tx_ts_delay_ns, uint, 0444);
MODULE_PARM_DESC(tx_ts_delay_ns, "a TX stamp reaches the socket this long after departure, ns");
static u32 truth_len = 65536;
module_param(truth_len, uint, 0444);
MODULE_PARM_DESC(truth_len, "frames kept in the truth ring");

/* truth flags */
#define TF_ASKED	BIT(0)	/* h */
#define TF_TXTS		BIT(1)	/* T */
#define TF_SKIPPED	BIT(2)	/* S */
#define TF_DROPPED	BIT(3)	/* D */
#define TF_LATE		BIT(4)	/* L */
#define TF_ONESTEP	BIT(5)	/* O */
#define TF_RXTS		BIT(6)	/* R */
#define TF_LOST		BIT(7)	/* X */
static const char tf_letters[] = "hTSDLORX";

struct rn_truth {
	u64 seq;
	u64 depart, arrive;
	s64 txts, rxts;
	u16 len, proto, sport, dport;
	u8 src, dst, udp, flags;
};

static struct {
	spinlock_t lock;
	struct rn_truth *ring;
	u64 next;	/* the seq the next frame gets */
	u64 first;	/* the oldest seq shown (after an emptying) */
} truth;

/* A queue of skbs due at increasing CLOCK_MONOTONIC times, run by a soft
 * hrtimer.
 */
struct rn_queue {
	spinlock_t lock;
	struct sk_buff_head q;
	struct hrtimer timer;
	u64 last;	/* the latest due time queued (order kept) */
	bool running;
	void (*run)(struct rn_queue *rq, struct sk_buff *skb);
};

/* what an skb carries in cb while it is the model's */
struct rn_cb {
	u64 due;
	u64 seq;
	u64 at;		/* departure or arrival, CLOCK_MONOTONIC ns */
	s64 stamp;
	bool drop;
};

static inline struct rn_cb *rn_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct rn_cb) > sizeof(skb->cb));
	return (struct rn_cb *)skb->cb;
}

enum {
	ST_TX_HWTSTAMPS, ST_RX_HWTSTAMPS, ST_SKIPPED, ST_TIMEOUTS, ST_LATE,
	ST_ONESTEP, ST_RX_DROPPED_LINK, ST_TX_PACKETS, ST_TX_BYTES,
	ST_RX_PACKETS, ST_RX_BYTES, ST_TX_DROPPED, ST_N
};

static const char rn_stat_names[ST_N][ETH_GSTRING_LEN] = {
	"tx_hwtstamps", "rx_hwtstamps", "tx_hwtstamp_skipped",
	"tx_hwtstamp_timeouts", "tx_hwtstamp_late", "tx_onestep_syncs",
	"rx_dropped_link", "tx_packets", "tx_bytes", "rx_packets", "rx_bytes",
	"tx_dropped",
};

struct rn_port {
	int idx;
	struct net_device *dev;
	struct rn_port *peer;
	bool *cable;		/* the pair's */
	/* the PHC */
	struct ptp_clock_info ptp_info;
	struct ptp_clock *ptp;
	spinlock_t phc_lock;
	u64 mono0;
	s64 base;
	s64 ppm_scaled;		/* the intrinsic error, ppm << 16 */
	s64 adj_scaled;		/* adjfine's, ppm << 16 */
	/* stamping */
	spinlock_t ts_lock;
	int tx_type, rx_filter, ts_flags;
	bool tx_busy;
	u32 tx_asked;		/* TX stamps asked for and taken (counts Nth) */
	bool ptp_only, tx_one_inflight;
	u32 wire_extra_ns;	/* added to the wire's delay of what it sends */
	u32 tx_drop_every, tx_late_every;
	u64 tx_late_ns;
	/* frames arriving at this port; TX stamps pending on it */
	struct rn_queue rxq, txq;
	atomic64_t st[ST_N];
	struct dentry *dir;
};

static struct rn_port *ports[RN_MAX_PORTS];
static bool cables[RN_MAX_PAIRS];
static int nports;
static struct dentry *rn_debugfs;

static inline u64 rn_now(void)
{
	return ktime_get_ns();
}

static inline void rn_count(struct rn_port *p, int i, u64 n)
{
	atomic64_add(n, &p->st[i]);
}

/* ---------------------------------------------------------------- PHC */

/* the PHC at CLOCK_MONOTONIC time mono; phc_lock held */
static s64 rn_phc_at(struct rn_port *p, u64 mono)
{
	s64 d = (s64)(mono - p->mono0), rate = p->ppm_scaled + p->adj_scaled;
	u64 c;

	/* (ppm << 16) * d / (1e6 << 16), in 128 bits */
	c = mul_u64_u64_div_u64(abs(d), abs(rate), 1000000ULL << 16);
	if ((d < 0) != (rate < 0))
		return p->base + d - (s64)c;
	return p->base + d + (s64)c;
}

static s64 rn_phc_read(struct rn_port *p, u64 mono)
{
	unsigned long fl;
	s64 t;

	spin_lock_irqsave(&p->phc_lock, fl);
	t = rn_phc_at(p, mono);
	spin_unlock_irqrestore(&p->phc_lock, fl);
	return t;
}

/* from now on the PHC reads base + delta (its value now plus step) */
static void rn_phc_rebase(struct rn_port *p, bool set, s64 val, s64 adj_scaled, bool adj)
{
	unsigned long fl;
	u64 now;

	spin_lock_irqsave(&p->phc_lock, fl);
	now = rn_now();
	p->base = set ? val : rn_phc_at(p, now) + val;
	p->mono0 = now;
	if (adj)
		p->adj_scaled = adj_scaled;
	spin_unlock_irqrestore(&p->phc_lock, fl);
}

static int rn_adjfine(struct ptp_clock_info *info, long scaled_ppm)
{
	struct rn_port *p = container_of(info, struct rn_port, ptp_info);

	rn_phc_rebase(p, false, 0, scaled_ppm, true);
	return 0;
}

static int rn_adjtime(struct ptp_clock_info *info, s64 delta)
{
	struct rn_port *p = container_of(info, struct rn_port, ptp_info);

	rn_phc_rebase(p, false, delta, 0, false);
	return 0;
}

static int rn_settime64(struct ptp_clock_info *info, const struct timespec64 *ts)
{
	struct rn_port *p = container_of(info, struct rn_port, ptp_info);

	rn_phc_rebase(p, true, timespec64_to_ns(ts), 0, false);
	return 0;
}

static int rn_gettimex64(struct ptp_clock_info *info, struct timespec64 *ts,
			 struct ptp_system_timestamp *sts)
{
	struct rn_port *p = container_of(info, struct rn_port, ptp_info);
	unsigned long fl;
	s64 t;

	spin_lock_irqsave(&p->phc_lock, fl);
	ptp_read_system_prets(sts);
	t = rn_phc_at(p, rn_now());
	ptp_read_system_postts(sts);
	spin_unlock_irqrestore(&p->phc_lock, fl);
	*ts = ns_to_timespec64(t);
	return 0;
}

static int rn_enable(struct ptp_clock_info *info, struct ptp_clock_request *rq, int on)
{
	return -EOPNOTSUPP;
}

static const struct ptp_clock_info rn_ptp_info = {
	.owner = THIS_MODULE,
	.name = "rantnic",
	.max_adj = 1000000,	/* ppb: 1000 ppm */
	.adjfine = rn_adjfine,
	.adjtime = rn_adjtime,
	.gettimex64 = rn_gettimex64,
	.settime64 = rn_settime64,
	.enable = rn_enable,
};

/* ---------------------------------------------------------------- truth */

static u64 rn_truth_add(struct rn_truth *e)
{
	unsigned long fl;
	u64 seq;

	spin_lock_irqsave(&truth.lock, fl);
	seq = truth.next++;
	e->seq = seq;
	truth.ring[seq % truth_len] = *e;
	spin_unlock_irqrestore(&truth.lock, fl);
	return seq;
}

/* or flags into frame seq's record and set its RX stamp if rxts */
static void rn_truth_mark(u64 seq, u8 flags, const s64 *rxts)
{
	struct rn_truth *e = &truth.ring[seq % truth_len];
	unsigned long fl;

	spin_lock_irqsave(&truth.lock, fl);
	if (e->seq == seq) {
		e->flags |= flags;
		if (rxts)
			e->rxts = *rxts;
	}
	spin_unlock_irqrestore(&truth.lock, fl);
}

static void *rn_truth_start(struct seq_file *m, loff_t *pos)
{
	unsigned long fl;
	u64 lo, hi, i;

	spin_lock_irqsave(&truth.lock, fl);
	hi = truth.next;
	lo = max(truth.first, hi > truth_len ? hi - truth_len : 1);
	spin_unlock_irqrestore(&truth.lock, fl);
	if (*pos == 0)
		seq_puts(m, "# seq src dst len proto sport dport depart arrive txstamp rxstamp flags\n");
	i = lo + *pos;
	return i < hi ? (void *)(uintptr_t)i : NULL;
}

static void *rn_truth_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return rn_truth_start(m, pos);
}

static void rn_truth_stop(struct seq_file *m, void *v)
{
}

/* a PHC time as rant's csv writes its stamps: seconds.nanoseconds */
static void rn_put_stamp(struct seq_file *m, s64 t)
{
	s32 ns;
	s64 s = div_s64_rem(t, NSEC_PER_SEC, &ns);

	if (ns < 0) {
		ns += NSEC_PER_SEC;
		s--;
	}
	seq_printf(m, "%lld.%09d", s, ns);
}

static int rn_truth_show(struct seq_file *m, void *v)
{
	u64 seq = (uintptr_t)v;
	struct rn_truth e;
	unsigned long fl;
	char f[9];
	int i, n = 0;

	spin_lock_irqsave(&truth.lock, fl);
	e = truth.ring[seq % truth_len];
	spin_unlock_irqrestore(&truth.lock, fl);
	if (e.seq != seq)
		return 0;
	for (i = 0; i < 8; i++)
		if (e.flags & BIT(i))
			f[n++] = tf_letters[i];
	if (!n)
		f[n++] = '-';
	f[n] = 0;
	if (e.udp)
		seq_printf(m, "%llu %u %u %u udp %u %u", e.seq, e.src, e.dst, e.len,
			   e.sport, e.dport);
	else
		seq_printf(m, "%llu %u %u %u %04x 0 0", e.seq, e.src, e.dst, e.len, e.proto);
	seq_printf(m, " %llu %llu ", e.depart, e.arrive);
	rn_put_stamp(m, e.txts);
	seq_putc(m, ' ');
	rn_put_stamp(m, e.rxts);
	seq_printf(m, " %s\n", f);
	return 0;
}

static const struct seq_operations rn_truth_sops = {
	.start = rn_truth_start,
	.next = rn_truth_next,
	.stop = rn_truth_stop,
	.show = rn_truth_show,
};

static int rn_truth_open(struct inode *inode, struct file *file)
{
	return seq_open(file, &rn_truth_sops);
}

static ssize_t rn_truth_write(struct file *file, const char __user *buf, size_t n, loff_t *pos)
{
	unsigned long fl;

	spin_lock_irqsave(&truth.lock, fl);
	truth.first = truth.next;
	spin_unlock_irqrestore(&truth.lock, fl);
	return n;
}

static const struct file_operations rn_truth_fops = {
	.owner = THIS_MODULE,
	.open = rn_truth_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = seq_release,
	.write = rn_truth_write,
};

static int rn_clocks_show(struct seq_file *m, void *v)
{
	unsigned long fl;
	s64 phc, rate;
	u64 now;
	int i;

	for (i = 0; i < nports; i++) {
		struct rn_port *p = ports[i];

		spin_lock_irqsave(&p->phc_lock, fl);
		now = rn_now();
		phc = rn_phc_at(p, now);
		rate = p->ppm_scaled + p->adj_scaled;
		spin_unlock_irqrestore(&p->phc_lock, fl);
		/* ppm << 16 to ppb with three decimals: * 1e6 >> 16 */
		rate = div_s64(rate * 1000000, 65536);
		seq_printf(m, "%d %s %d %lld %s%lld.%03lld %llu\n", i, netdev_name(p->dev),
			   ptp_clock_index(p->ptp),
			   phc - ktime_to_ns(ktime_mono_to_real(ns_to_ktime(now))),
			   rate < 0 ? "-" : "", abs(rate) / 1000, abs(rate) % 1000, now);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(rn_clocks);

/* ---------------------------------------------------------------- queues */

static enum hrtimer_restart rn_queue_fire(struct hrtimer *t)
{
	struct rn_queue *rq = container_of(t, struct rn_queue, timer);
	struct sk_buff_head due;
	struct sk_buff *skb;
	unsigned long fl;
	u64 now = rn_now();

	__skb_queue_head_init(&due);
	spin_lock_irqsave(&rq->lock, fl);
	while ((skb = skb_peek(&rq->q)) && rn_cb(skb)->due <= now)
		__skb_queue_tail(&due, __skb_dequeue(&rq->q));
	if (skb)
		hrtimer_start(&rq->timer, ns_to_ktime(rn_cb(skb)->due), HRTIMER_MODE_ABS_SOFT);
	spin_unlock_irqrestore(&rq->lock, fl);
	while ((skb = __skb_dequeue(&due)))
		rq->run(rq, skb);
	return HRTIMER_NORESTART;
}

static void rn_queue_init(struct rn_queue *rq, void (*run)(struct rn_queue *, struct sk_buff *))
{
	spin_lock_init(&rq->lock);
	skb_queue_head_init(&rq->q);
	hrtimer_init(&rq->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT);
	rq->timer.function = rn_queue_fire;
	rq->run = run;
}

/* queue skb due at cb->due, or later if one queued before is due later
 * (order kept); false when the queue does not run (the port is down)
 */
static bool rn_queue_add(struct rn_queue *rq, struct sk_buff *skb)
{
	struct rn_cb *cb = rn_cb(skb);
	unsigned long fl;
	bool ok;

	spin_lock_irqsave(&rq->lock, fl);
	ok = rq->running;
	if (ok) {
		if (cb->due <= rq->last)
			cb->due = rq->last + 1;
		rq->last = cb->due;
		__skb_queue_tail(&rq->q, skb);
		if (skb_queue_len(&rq->q) == 1)
			hrtimer_start(&rq->timer, ns_to_ktime(cb->due), HRTIMER_MODE_ABS_SOFT);
	}
	spin_unlock_irqrestore(&rq->lock, fl);
	return ok;
}

static void rn_queue_stop(struct rn_queue *rq)
{
	unsigned long fl;

	spin_lock_irqsave(&rq->lock, fl);
	rq->running = false;
	spin_unlock_irqrestore(&rq->lock, fl);
	hrtimer_cancel(&rq->timer);
}

/* ---------------------------------------------------------------- RX */

/* the frame is a PTP v2 event message (L2, or UDP to port 319) */
static bool rn_is_ptp_event(struct sk_buff *skb, unsigned int *type)
{
	struct ptp_header *h;

	*type = ptp_classify_raw(skb);
	if (*type == PTP_CLASS_NONE || !(*type & PTP_CLASS_V2))
		return false;
	h = ptp_parse_header(skb, *type);
	return h && ptp_get_msgtype(h, *type) <= PTP_MSGTYPE_PDELAY_RESP;
}

static void rn_arrive(struct rn_queue *rq, struct sk_buff *skb)
{
	struct rn_port *p = container_of(rq, struct rn_port, rxq);
	struct rn_cb *cb = rn_cb(skb);
	unsigned int type;
	bool stamp;
	s64 ts;

	if (cb->drop || !netif_carrier_ok(p->dev)) {
		rn_count(p, ST_RX_DROPPED_LINK, 1);
		rn_truth_mark(cb->seq, TF_LOST, NULL);
		kfree_skb(skb);
		return;
	}
	ts = rn_phc_read(p, cb->at);
	skb_reset_mac_header(skb);
	spin_lock_bh(&p->ts_lock);
	stamp = p->rx_filter != HWTSTAMP_FILTER_NONE;
	if (stamp && (p->ptp_only || p->rx_filter != HWTSTAMP_FILTER_ALL))
		stamp = rn_is_ptp_event(skb, &type);
	spin_unlock_bh(&p->ts_lock);
	if (stamp) {
		skb_hwtstamps(skb)->hwtstamp = ns_to_ktime(ts);
		rn_count(p, ST_RX_HWTSTAMPS, 1);
	}
	rn_truth_mark(cb->seq, stamp ? TF_RXTS : 0, &ts);
	rn_count(p, ST_RX_PACKETS, 1);
	rn_count(p, ST_RX_BYTES, skb->len);
	skb->protocol = eth_type_trans(skb, p->dev);
	/* the receiver checks the checksums (a one-step Sync's too) */
	skb->ip_summed = CHECKSUM_NONE;
	netif_rx(skb);
}

/* ---------------------------------------------------------------- TX */

/* a TX stamp's time has come: give it to the socket, or not (dropped) */
static void rn_tx_done(struct rn_queue *rq, struct sk_buff *skb)
{
	struct rn_port *p = container_of(rq, struct rn_port, txq);
	struct rn_cb *cb = rn_cb(skb);
	struct skb_shared_hwtstamps hw = { .hwtstamp = ns_to_ktime(cb->stamp) };

	if (!cb->drop) {
		skb_tstamp_tx(skb, &hw);
		rn_count(p, ST_TX_HWTSTAMPS, 1);
		rn_truth_mark(cb->seq, TF_TXTS, NULL);
	}
	spin_lock_bh(&p->ts_lock);
	p->tx_busy = false;
	spin_unlock_bh(&p->ts_lock);
	dev_consume_skb_any(skb);
}

/* write a Sync's originTimestamp (the departure, PHC time) and make its
 * UDP checksum again; the frame's data is linear and the model's own
 */
static bool rn_onestep(struct sk_buff *skb, unsigned int type, s64 t)
{
	struct ptp_header *h = ptp_parse_header(skb, type);
	unsigned int off = (type & PTP_CLASS_VLAN) ? VLAN_ETH_HLEN : ETH_HLEN;
	u8 *o;
	u64 s;
	u32 ns;

	if (!h || (u8 *)(h + 1) + 10 > skb->data + skb->len)
		return false;
	o = (u8 *)(h + 1);
	s = div_u64_rem(t, NSEC_PER_SEC, &ns);
	put_unaligned_be16(s >> 32, o);
	put_unaligned_be32((u32)s, o + 2);
	put_unaligned_be32(ns, o + 6);
	if (type & (PTP_CLASS_IPV4 | PTP_CLASS_IPV6)) {
		u8 *l3 = skb->data + off;
		unsigned int l4 = (type & PTP_CLASS_IPV4) ? (l3[0] & 0x0f) * 4 :
				  sizeof(struct ipv6hdr);
		struct udphdr *uh = (struct udphdr *)(l3 + l4);
		unsigned int ulen = ntohs(uh->len);
		__wsum c;

		if ((u8 *)uh + ulen > skb->data + skb->len)
			return false;
		uh->check = 0;
		c = csum_partial(uh, ulen, 0);
		if (type & PTP_CLASS_IPV4) {
			struct iphdr *ih = (struct iphdr *)l3;

			uh->check = csum_tcpudp_magic(ih->saddr, ih->daddr, ulen, IPPROTO_UDP, c);
		} else {
			struct ipv6hdr *ih = (struct ipv6hdr *)l3;

			uh->check = csum_ipv6_magic(&ih->saddr, &ih->daddr, ulen, IPPROTO_UDP, c);
		}
		if (!uh->check)
			uh->check = CSUM_MANGLED_0;
	}
	return true;
}

static void rn_truth_fill(struct rn_truth *e, struct sk_buff *skb)
{
	const u8 *d = skb->data;
	unsigned int l3 = ETH_HLEN, proto = get_unaligned_be16(d + 12);
	const struct udphdr *uh = NULL;

	e->proto = proto;
	if (proto == ETH_P_IP && skb->len >= l3 + 20 && d[l3 + 9] == IPPROTO_UDP) {
		unsigned int ihl = (d[l3] & 0x0f) * 4;

		if (skb->len >= l3 + ihl + 8)
			uh = (const struct udphdr *)(d + l3 + ihl);
	} else if (proto == ETH_P_IPV6 && skb->len >= l3 + 48 && d[l3 + 6] == IPPROTO_UDP) {
		uh = (const struct udphdr *)(d + l3 + 40);
	}
	if (uh) {
		e->udp = 1;
		e->sport = ntohs(uh->source);
		e->dport = ntohs(uh->dest);
	}
}

static netdev_tx_t rn_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct rn_port *p = netdev_priv(dev), *q = p->peer;
	struct rn_truth e = { .src = p->idx, .dst = q->idx, .len = skb->len };
	u32 jit = READ_ONCE(jitter_ns);
	struct sk_buff *wire;
	bool hold = false;
	unsigned int type;
	struct rn_cb *cb;
	u64 now, seq;

	if (!netif_carrier_ok(dev) || skb->len < ETH_HLEN) {
		rn_count(p, ST_TX_DROPPED, 1);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	/* the frame on the wire: the model's own copy */
	wire = skb_copy(skb, GFP_ATOMIC);
	if (!wire) {
		rn_count(p, ST_TX_DROPPED, 1);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	skb_scrub_packet(wire, true);
	skb_reset_mac_header(wire);
	now = rn_now();
	e.depart = now;
	e.txts = rn_phc_read(p, now);
	e.arrive = now + READ_ONCE(delay_ns) + READ_ONCE(p->wire_extra_ns);
	if (jit)
		e.arrive += ((u64)get_random_u32() * (jit + 1)) >> 32;
	rn_truth_fill(&e, wire);

	spin_lock_bh(&p->ts_lock);
	/* one-step: a Sync carries its own departure, and gets no TX stamp */
	if (p->tx_type == HWTSTAMP_TX_ONESTEP_SYNC) {
		type = ptp_classify_raw(wire);
		if (ptp_msg_is_sync(wire, type) && rn_onestep(wire, type, e.txts)) {
			e.flags |= TF_ONESTEP;
			rn_count(p, ST_ONESTEP, 1);
		}
	}
	if ((skb_shinfo(skb)->tx_flags & SKBTX_HW_TSTAMP) && p->tx_type != HWTSTAMP_TX_OFF &&
	    !(e.flags & TF_ONESTEP)) {
		if (p->tx_one_inflight && p->tx_busy) {
			e.flags |= TF_ASKED | TF_SKIPPED;
			rn_count(p, ST_SKIPPED, 1);
		} else {
			u32 n = ++p->tx_asked;

			e.flags |= TF_ASKED;
			hold = true;
			p->tx_busy = true;
			skb_shinfo(skb)->tx_flags |= SKBTX_IN_PROGRESS;
			cb = rn_cb(skb);
			memset(cb, 0, sizeof(*cb));
			cb->stamp = e.txts;
			cb->due = now + READ_ONCE(tx_ts_delay_ns);
			if (p->tx_drop_every && n % p->tx_drop_every == 0) {
				cb->drop = true;
				e.flags |= TF_DROPPED;
				rn_count(p, ST_TIMEOUTS, 1);
			} else if (p->tx_late_every && n % p->tx_late_every == 0) {
				cb->due += p->tx_late_ns;
				e.flags |= TF_LATE;
				rn_count(p, ST_LATE, 1);
			}
		}
	}
	spin_unlock_bh(&p->ts_lock);
	/* the kernel's software TX stamp (after SKBTX_IN_PROGRESS, as drivers do) */
	skb_tx_timestamp(skb);

	seq = rn_truth_add(&e);
	rn_count(p, ST_TX_PACKETS, 1);
	rn_count(p, ST_TX_BYTES, skb->len);

	cb = rn_cb(wire);
	memset(cb, 0, sizeof(*cb));
	cb->seq = seq;
	cb->at = e.arrive;
	cb->due = e.arrive;
	cb->drop = !READ_ONCE(*p->cable);
	if (!rn_queue_add(&q->rxq, wire)) {
		rn_truth_mark(seq, TF_LOST, NULL);
		rn_count(q, ST_RX_DROPPED_LINK, 1);
		kfree_skb(wire);
	}
	if (hold) {
		rn_cb(skb)->seq = seq;
		if (!rn_queue_add(&p->txq, skb)) {
			spin_lock_bh(&p->ts_lock);
			p->tx_busy = false;
			spin_unlock_bh(&p->ts_lock);
			dev_kfree_skb_any(skb);
		}
	} else {
		dev_consume_skb_any(skb);
	}
	return NETDEV_TX_OK;
}

/* ---------------------------------------------------------------- netdev */

/* carrier on when the pair's cable is in and both ports are up */
static void rn_carrier(struct rn_port *p)
{
	struct rn_port *q = p->peer;

	if (READ_ONCE(*p->cable) && netif_running(p->dev) && netif_running(q->dev)) {
		netif_carrier_on(p->dev);
		netif_carrier_on(q->dev);
	} else {
		netif_carrier_off(p->dev);
		netif_carrier_off(q->dev);
	}
}

static void rn_queue_start(struct rn_queue *rq)
{
	unsigned long fl;

	spin_lock_irqsave(&rq->lock, fl);
	rq->running = true;
	spin_unlock_irqrestore(&rq->lock, fl);
}

static int rn_open(struct net_device *dev)
{
	struct rn_port *p = netdev_priv(dev);

	rn_queue_start(&p->rxq);
	rn_queue_start(&p->txq);
	rn_carrier(p);
	return 0;
}

static int rn_stop(struct net_device *dev)
{
	struct rn_port *p = netdev_priv(dev);

	rn_carrier(p);
	rn_queue_stop(&p->rxq);
	rn_queue_stop(&p->txq);
	skb_queue_purge(&p->rxq.q);
	/* pending TX stamps never come */
	skb_queue_purge(&p->txq.q);
	spin_lock_bh(&p->ts_lock);
	p->tx_busy = false;
	spin_unlock_bh(&p->ts_lock);
	return 0;
}

static void rn_get_stats64(struct net_device *dev, struct rtnl_link_stats64 *s)
{
	struct rn_port *p = netdev_priv(dev);

	s->tx_packets = atomic64_read(&p->st[ST_TX_PACKETS]);
	s->tx_bytes = atomic64_read(&p->st[ST_TX_BYTES]);
	s->rx_packets = atomic64_read(&p->st[ST_RX_PACKETS]);
	s->rx_bytes = atomic64_read(&p->st[ST_RX_BYTES]);
	s->tx_dropped = atomic64_read(&p->st[ST_TX_DROPPED]);
	s->rx_dropped = atomic64_read(&p->st[ST_RX_DROPPED_LINK]);
}

/* SIOCSHWTSTAMP's rules (file header); cfg updated to what is in force */
static int rn_hwts_set(struct rn_port *p, int *flags, int *tx_type, int *rx_filter)
{
	int rx = *rx_filter;

	switch (*tx_type) {
	case HWTSTAMP_TX_OFF:
	case HWTSTAMP_TX_ON:
	case HWTSTAMP_TX_ONESTEP_SYNC:
		break;
	default:
		return -ERANGE;
	}
	switch (rx) {
	case HWTSTAMP_FILTER_NONE:
		break;
	case HWTSTAMP_FILTER_PTP_V2_L4_EVENT:
	case HWTSTAMP_FILTER_PTP_V2_L4_SYNC:
	case HWTSTAMP_FILTER_PTP_V2_L4_DELAY_REQ:
	case HWTSTAMP_FILTER_PTP_V2_L2_EVENT:
	case HWTSTAMP_FILTER_PTP_V2_L2_SYNC:
	case HWTSTAMP_FILTER_PTP_V2_L2_DELAY_REQ:
	case HWTSTAMP_FILTER_PTP_V2_EVENT:
	case HWTSTAMP_FILTER_PTP_V2_SYNC:
	case HWTSTAMP_FILTER_PTP_V2_DELAY_REQ:
		rx = READ_ONCE(p->ptp_only) ? HWTSTAMP_FILTER_PTP_V2_EVENT : HWTSTAMP_FILTER_ALL;
		break;
	default:
		if (READ_ONCE(p->ptp_only))
			return -ERANGE;
		rx = HWTSTAMP_FILTER_ALL;
	}
	spin_lock_bh(&p->ts_lock);
	p->tx_type = *tx_type;
	p->rx_filter = rx;
	p->ts_flags = *flags;
	spin_unlock_bh(&p->ts_lock);
	*rx_filter = rx;
	return 0;
}

static void rn_hwts_get(struct rn_port *p, int *flags, int *tx_type, int *rx_filter)
{
	spin_lock_bh(&p->ts_lock);
	*flags = p->ts_flags;
	*tx_type = p->tx_type;
	*rx_filter = p->rx_filter;
	spin_unlock_bh(&p->ts_lock);
}

static int rn_eth_ioctl(struct net_device *dev, struct ifreq *ifr, int cmd)
{
	struct rn_port *p = netdev_priv(dev);
	struct hwtstamp_config c;
	int err;

	switch (cmd) {
	case SIOCSHWTSTAMP:
		if (copy_from_user(&c, ifr->ifr_data, sizeof(c)))
			return -EFAULT;
		err = rn_hwts_set(p, &c.flags, &c.tx_type, &c.rx_filter);
		if (err)
			return err;
		break;
	case SIOCGHWTSTAMP:
		rn_hwts_get(p, &c.flags, &c.tx_type, &c.rx_filter);
		break;
	default:
		return -EOPNOTSUPP;
	}
	return copy_to_user(ifr->ifr_data, &c, sizeof(c)) ? -EFAULT : 0;
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
/* from 6.6 the kernel's own path for SIOC[SG]HWTSTAMP */
static int rn_hwtstamp_get(struct net_device *dev, struct kernel_hwtstamp_config *c)
{
	int tx, rx;

	rn_hwts_get(netdev_priv(dev), &c->flags, &tx, &rx);
	c->tx_type = tx;
	c->rx_filter = rx;
	return 0;
}

static int rn_hwtstamp_set(struct net_device *dev, struct kernel_hwtstamp_config *c,
			   struct netlink_ext_ack *extack)
{
	int tx = c->tx_type, rx = c->rx_filter, err;

	err = rn_hwts_set(netdev_priv(dev), &c->flags, &tx, &rx);
	if (err)
		return err;
	c->rx_filter = rx;
	return 0;
}
#endif

static const struct net_device_ops rn_netdev_ops = {
	.ndo_open = rn_open,
	.ndo_stop = rn_stop,
	.ndo_start_xmit = rn_xmit,
	.ndo_get_stats64 = rn_get_stats64,
	.ndo_eth_ioctl = rn_eth_ioctl,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
	.ndo_hwtstamp_get = rn_hwtstamp_get,
	.ndo_hwtstamp_set = rn_hwtstamp_set,
#endif
};

/* ---------------------------------------------------------------- ethtool */

static void rn_get_drvinfo(struct net_device *dev, struct ethtool_drvinfo *info)
{
	strscpy(info->driver, "rantnic", sizeof(info->driver));
	strscpy(info->bus_info, "rantnic", sizeof(info->bus_info));
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
static int rn_get_ts_info(struct net_device *dev, struct kernel_ethtool_ts_info *info)
#else
static int rn_get_ts_info(struct net_device *dev, struct ethtool_ts_info *info)
#endif
{
	struct rn_port *p = netdev_priv(dev);

	info->so_timestamping = SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RX_HARDWARE |
				SOF_TIMESTAMPING_RAW_HARDWARE | SOF_TIMESTAMPING_TX_SOFTWARE |
				SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;
	info->phc_index = ptp_clock_index(p->ptp);
	info->tx_types = BIT(HWTSTAMP_TX_OFF) | BIT(HWTSTAMP_TX_ON) | BIT(HWTSTAMP_TX_ONESTEP_SYNC);
	info->rx_filters = BIT(HWTSTAMP_FILTER_NONE) | BIT(HWTSTAMP_FILTER_PTP_V2_EVENT) |
			   BIT(HWTSTAMP_FILTER_PTP_V2_L2_EVENT) |
			   BIT(HWTSTAMP_FILTER_PTP_V2_L4_EVENT);
	if (!READ_ONCE(p->ptp_only))
		info->rx_filters |= BIT(HWTSTAMP_FILTER_ALL);
	return 0;
}

static int rn_get_sset_count(struct net_device *dev, int sset)
{
	return sset == ETH_SS_STATS ? ST_N : -EOPNOTSUPP;
}

static void rn_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	if (sset == ETH_SS_STATS)
		memcpy(data, rn_stat_names, sizeof(rn_stat_names));
}

static void rn_get_ethtool_stats(struct net_device *dev, struct ethtool_stats *stats, u64 *data)
{
	struct rn_port *p = netdev_priv(dev);
	int i;

	for (i = 0; i < ST_N; i++)
		data[i] = atomic64_read(&p->st[i]);
}

static const struct ethtool_ops rn_ethtool_ops = {
	.get_drvinfo = rn_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_ts_info = rn_get_ts_info,
	.get_sset_count = rn_get_sset_count,
	.get_strings = rn_get_strings,
	.get_ethtool_stats = rn_get_ethtool_stats,
};

/* ---------------------------------------------------------------- set-up */

static int rn_link_get(void *data, u64 *val)
{
	*val = READ_ONCE(*((struct rn_port *)data)->cable);
	return 0;
}

static int rn_link_set(void *data, u64 val)
{
	struct rn_port *p = data;

	WRITE_ONCE(*p->cable, !!val);
	rn_carrier(p);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(rn_link_fops, rn_link_get, rn_link_set, "%llu\n");

static void rn_debugfs_port(struct rn_port *p)
{
	p->dir = debugfs_create_dir(netdev_name(p->dev), rn_debugfs);
	debugfs_create_bool("ptp_only", 0644, p->dir, &p->ptp_only);
	debugfs_create_bool("tx_one_inflight", 0644, p->dir, &p->tx_one_inflight);
	debugfs_create_u32("wire_extra_ns", 0644, p->dir, &p->wire_extra_ns);
	debugfs_create_u32("tx_drop_every", 0644, p->dir, &p->tx_drop_every);
	debugfs_create_u32("tx_late_every", 0644, p->dir, &p->tx_late_every);
	debugfs_create_u64("tx_late_ns", 0644, p->dir, &p->tx_late_ns);
	debugfs_create_file_unsafe("link", 0644, p->dir, p, &rn_link_fops);
}

static void rn_setup(struct net_device *dev)
{
	ether_setup(dev);
	dev->netdev_ops = &rn_netdev_ops;
	dev->ethtool_ops = &rn_ethtool_ops;
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = 9000;
}

static int rn_port_new(int i)
{
	struct net_device *dev;
	struct rn_port *p;
	u8 mac[ETH_ALEN] = { 0x02, 0x52, 0x4e, 0x00, 0x00, i };
	u64 now;

	dev = alloc_netdev(sizeof(*p), "rn%d", NET_NAME_ENUM, rn_setup);
	if (!dev)
		return -ENOMEM;
	eth_hw_addr_set(dev, mac);
	p = netdev_priv(dev);
	p->idx = i;
	p->dev = dev;
	p->cable = &cables[i / 2];
	spin_lock_init(&p->phc_lock);
	spin_lock_init(&p->ts_lock);
	p->ptp_only = ptp_only[i];
	p->ppm_scaled = (s64)ppm[i] << 16;
	now = rn_now();
	p->mono0 = now;
	p->base = ktime_to_ns(ktime_mono_to_real(ns_to_ktime(now))) + offset_ns[i];
	rn_queue_init(&p->rxq, rn_arrive);
	rn_queue_init(&p->txq, rn_tx_done);
	p->ptp_info = rn_ptp_info;
	p->ptp = ptp_clock_register(&p->ptp_info, NULL);
	if (IS_ERR(p->ptp)) {
		int err = PTR_ERR(p->ptp);

		free_netdev(dev);
		return err;
	}
	ports[i] = p;
	return 0;
}

static void rn_port_free(struct rn_port *p)
{
	hrtimer_cancel(&p->rxq.timer);
	hrtimer_cancel(&p->txq.timer);
	skb_queue_purge(&p->rxq.q);
	skb_queue_purge(&p->txq.q);
	ptp_clock_unregister(p->ptp);
	free_netdev(p->dev);
}

static void rn_cleanup(int registered)
{
	int i;

	for (i = 0; i < registered; i++)
		unregister_netdev(ports[i]->dev);
	for (i = 0; i < nports; i++)
		if (ports[i])
			rn_port_free(ports[i]);
	vfree(truth.ring);
}

static int __init rn_init(void)
{
	int i, err, reg = 0;

	if (pairs < 1 || pairs > RN_MAX_PAIRS || truth_len < 1)
		return -EINVAL;
	spin_lock_init(&truth.lock);
	truth.next = 1;
	truth.first = 1;
	truth.ring = vzalloc(array_size(truth_len, sizeof(*truth.ring)));
	if (!truth.ring)
		return -ENOMEM;
	nports = 2 * pairs;
	for (i = 0; i < nports; i++) {
		err = rn_port_new(i);
		if (err)
			goto fail;
	}
	for (i = 0; i < nports; i++) {
		cables[i / 2] = true;
		ports[i]->peer = ports[i ^ 1];
	}
	for (i = 0; i < nports; i++) {
		/* carrier off until both ports of the pair are up */
		netif_carrier_off(ports[i]->dev);
		err = register_netdev(ports[i]->dev);
		if (err)
			goto fail;
		reg++;
	}
	rn_debugfs = debugfs_create_dir("rantnic", NULL);
	debugfs_create_u32("delay_ns", 0644, rn_debugfs, &delay_ns);
	debugfs_create_u32("jitter_ns", 0644, rn_debugfs, &jitter_ns);
	debugfs_create_file("truth", 0644, rn_debugfs, NULL, &rn_truth_fops);
	debugfs_create_file("clocks", 0444, rn_debugfs, NULL, &rn_clocks_fops);
	for (i = 0; i < nports; i++)
		rn_debugfs_port(ports[i]);
	return 0;
fail:
	rn_cleanup(reg);
	return err;
}

static void __exit rn_exit(void)
{
	debugfs_remove_recursive(rn_debugfs);
	rn_cleanup(nports);
}

module_init(rn_init);
module_exit(rn_exit);
MODULE_DESCRIPTION("rantnic: pairs of timestamping Ethernet ports with PHCs, a NIC model");
MODULE_LICENSE("GPL");
