// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer harness: proto_decode() on arbitrary bytes.  A header it accepts
 * must re-encode to the same fields (and to the same bytes, except the echoed
 * fields whose flag is clear, which the encoder zeroes), and decode again.
 * The blocks after the header (kernel stamps, T3 history) must survive a
 * round trip through their encoders.  Then the same bytes go through the
 * session rules: the tag check with a key, the stamp plausibility check,
 * the client's emit_packet() against a window of pings in every state (the
 * pong as long as the ping; the reflector's PHC offset it brings within its
 * bound, every metric then inside 64 bits) and the reflector's reflect_packet() from a
 * fixed peer, with the counters' invariants checked after each; and the
 * reflector across a session's life (fz_life): classes in the pings, the
 * input and its confirming seq + 1, the next real ping, the FIN, the input
 * again.
 * Built and run by tests/fuzz.sh.
 */
#define RANT_NO_MAIN
#include "../rant.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The reflector's session reports (fz_life ends sessions) go nowhere. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	run.to = &outputs_table;	/* as main sets it */
	if (!freopen("/dev/null", "w", stdout)) {
		abort();
	}
	return 0;
}

/* The T3 history of two decoded datagrams, entry by entry. */
static bool hist_equal(const struct proto_msg *a, const struct proto_msg *b)
{
	int i;

	if (a->nhist != b->nhist) {
		return false;
	}
	for (i = 0; i < a->nhist; i++) {
		if (a->hist[i].seq != b->hist[i].seq || a->hist[i].t3w != b->hist[i].t3w ||
		    a->hist[i].t3k != b->hist[i].t3k) {
			return false;
		}
	}
	return true;
}

/* Fields of two decoded headers, compared one by one (no padding bytes). */
static bool msg_equal(const struct proto_msg *a, const struct proto_msg *b)
{
	return hist_equal(a, b) && a->version == b->version && a->type == b->type && a->flags == b->flags &&
	       a->session == b->session && a->idle_ms == b->idle_ms && a->seq == b->seq &&
	       a->t2w == b->t2w && a->t2sw == b->t2sw && a->t3sw == b->t3sw && a->t3w == b->t3w &&
	       a->t3w_seq == b->t3w_seq && a->t2k == b->t2k && a->t3k == b->t3k && a->phc_off == b->phc_off &&
	       a->phc_window == b->phc_window && a->phc_method == b->phc_method &&
	       a->phc_disciplined == b->phc_disciplined && a->boot_id == b->boot_id;
}

/* A copy of the input with a guard byte after it, for an encoder to write into. */
static uint8_t *fz_copy(const uint8_t *in, size_t size)
{
	uint8_t *cp = malloc(size + 1);

	if (cp) {
		memcpy(cp, in, size);
		cp[size] = 0x5a;
	}
	return cp;
}

static void fz_copy_done(uint8_t *cp, size_t size)
{
	if (cp[size] != 0x5a) {
		abort();		/* wrote past the datagram */
	}
	free(cp);
}

/*
 * The kernel-stamp block (PF_KSTAMPS): what was read from the input, written
 * again into a copy of it by the reflector's encoder, must read back the
 * same, and the encoder must write nothing past the datagram.
 */
static void fz_kx(const uint8_t *in, size_t size, const struct proto_msg *m)
{
	uint8_t *cp = fz_copy(in, size);
	struct proto_msg m2;
	bool was = run.key.on;

	if (!cp) {
		return;
	}
	run.key.on = m->flags & PF_TAG;
	if (proto_kx_put(cp, size, m) == 0) {
		if (proto_decode(cp, size, &m2) || !(m2.flags & PF_KSTAMPS) ||
		    ((m->type == PT_PONG || m->type == PT_FIN_ACK) &&
		     (m2.t2k != m->t2k || m2.t3k != m->t3k || m2.phc_method != m->phc_method ||
		      m2.boot_id != m->boot_id || (m->phc_method && m2.phc_off != m->phc_off)))) {
			abort();	/* the block does not survive a round trip */
		}
	} else if (size >= PROTO_HDR_LEN + (run.key.on ? TAG_LEN : 0) + KX_LEN) {
		abort();		/* refused a datagram with room for it */
	}
	run.key.on = was;
	fz_copy_done(cp, size);
}

/*
 * The T3 history (PF_T3HIST): what was read from the input, written again
 * into a copy of it (its flag cleared first) after the blocks before it,
 * must read back the same; the encoder has room for every entry the input
 * held, and writes nothing past the datagram.
 */
static void fz_hist(const uint8_t *in, size_t size, const struct proto_msg *m)
{
	uint8_t *cp = fz_copy(in, size);
	struct proto_msg m2;
	bool was = run.key.on;

	if (!cp) {
		return;
	}
	cp[6] &= (uint8_t)~(PF_T3HIST >> 8);
	run.key.on = m->flags & PF_TAG;
	proto_hist_put(cp, size, m);
	if (proto_decode(cp, size, &m2) || !hist_equal(m, &m2) ||
	    (m->nhist && (m->type == PT_PONG || m->type == PT_FIN_ACK) && !(m2.flags & PF_T3HIST))) {
		abort();	/* the history does not survive a round trip */
	}
	run.key.on = was;
	fz_copy_done(cp, size);
}

/* The client's window: pings 0..299 sent, every third answered, one lost. */
static bool fz_fin_sent;
static struct txn fz_win[256];
static uint64_t fz_keyseq[256];
static uint64_t fz_buckets[NMETRIC][100];
static int64_t fz_out[NMETRIC][64];
static uint64_t fz_lh[NMETRIC][2 * LH_N];

static void fz_session(bool emit)
{
	uint64_t s;
	int i;

	memset(&sess.c, 0, sizeof(sess.c));
	for (i = 0; i < NMETRIC; i++) {
		hist_init(&sess.h[i], 100, 10000, fz_buckets[i], fz_out[i], 64, fz_lh[i]);
	}
	memset(fz_win, 0, sizeof(fz_win));
	memset(&emitter, 0, sizeof(emitter));
	memset(&refl, 0, sizeof(refl));
	memset(&run.live, 0, sizeof(run.live));
	run.ts.peer_off = 0;	/* each input's pong brings its own reflector offset */
	run.ts.peer_off_on = false;
	sess.srv_hw = false;
	run.win.slot = fz_win;
	run.win.mask = 255;
	emitter.keyseq = fz_keyseq;
	refl.log_fd = -1;
	run.sock_fd = -1;
	opts.size = PROTO_HDR_LEN;
	opts.timeout_ns = UINT64_MAX / 2;
	opts.threshold_ns = -1;
	side_set(emit);
	sess.id = 0x5151;
	sess.stop_reason = STOP_NONE;
	if (!emit) {
		return;
	}
	for (s = 0; s < 300; s++) {
		struct txn *x = &run.win.slot[s & run.win.mask];

		memset(x, 0, sizeof(*x));
		x->seq = s;
		x->st = TF_USED | TF_SENT;
		x->deadline = UINT64_MAX;
		x->t[T1W] = 1000000 + s * 1000;
		sess.c.sent++;
		emitter.outstanding++;
		if (s % 3 == 0) {
			x->st |= TF_RECEIVED;
			x->t[T4W] = x->t[T1W] + 500;
			answered_set(s, true);
			sess.c.received++;
			emitter.outstanding--;
		} else if (s == 298) {
			emit_lost(x);
		}
	}
	emitter.next_seq = 300;
	emitter.fin_sent = fz_fin_sent;
}

/* A ping of the fuzzed session from the fixed peer, in class seq % 3. */
static void fz_ping(uint64_t seq, uint16_t flags, const struct sockaddr_in6 *peer)
{
	uint8_t b[PROTO_HDR_LEN];
	struct proto_msg m = { .type = PT_PING, .session = 0x5151, .seq = seq, .idle_ms = 1001,
			       .flags = (uint16_t)(flags | PF_CLASS | (seq % 3 + 1) << PF_PRIO_SHIFT) };

	memset(b, 0, sizeof(b));
	proto_encode(b, &m);
	reflect_packet(b, sizeof(b), 0, 0, false, (const struct sockaddr *)peer, sizeof(*peer));
}

/* The reflector's counters: none impossible, the class rows adding up to the session's. */
static void fz_reflect_books(void)
{
	uint64_t rec = 0, ans = 0, warm = 0;
	int i;

	for (i = 0; i <= CLS_RROWS; i++) {
		rec += classes.r[i].received;
		ans += classes.r[i].answered;
		warm += classes.r[i].warmup;
	}
	if (rec != sess.c.received || ans != sess.c.sent || warm != sess.c.warmup) {
		abort();	/* class rows that do not add up */
	}
	if (sess.c.lost >= STAMP_MAX || sess.c.received >= STAMP_MAX || sess.c.late >= STAMP_MAX) {
		abort();	/* an impossible count */
	}
}

/*
 * The reflector across a session's life, without a key: pings 0..99 of the
 * fixed peer in three classes (the first 5 warm-up by the reflector's -w),
 * then the input from the peer and again with its seq + 1 (a forged
 * confirmation).  The next real ping (100) is answered unless the input
 * named it or was the session's FIN; after the FIN the input opens no
 * session as a ping up to the session's highest seq.
 */
static void fz_life(const uint8_t *in, size_t size)
{
	struct sockaddr_in6 peer = { .sin6_family = AF_INET6, .sin6_port = htons(4000) };
	uint8_t *buf = malloc(size ? size : 1);
	struct proto_msg m;
	bool ok = !proto_decode(in, size, &m) && m.session == 0x5151;
	bool named = ok && m.type == PT_PING && (m.seq == 100 || m.seq == 99),
	     ends = ok && m.type == PT_FIN;
	uint64_t s, r0, top;

	if (!buf) {
		return;
	}
	fz_session(false);
	opts.warmup = 5;
	refl.now = 1000000000ULL;
	for (s = 0; s < 100; s++) {
		fz_ping(s, s == 50 ? PF_WARMUP : 0, &peer);
	}
	fz_reflect_books();
	for (s = 0; s < 2; s++) {
		memcpy(buf, in, size);
		if (s && size >= 24) {
			put64(buf + 16, get64(in + 16) + 1);
		}
		reflect_packet(buf, size, 0, 0, false, (struct sockaddr *)&peer, sizeof(peer));
		fz_reflect_books();
	}
	if (ok && m.type == PT_PING && m.seq > 99 + SEQ_AHEAD_MAX && refl.top > 99 + SEQ_AHEAD_MAX) {
		abort();	/* a far jump taken, "confirmed", while the client pings */
	}
	r0 = sess.c.received;
	fz_ping(100, 0, &peer);
	if (!named && !ends && sess.c.received != r0 + 1) {
		abort();	/* a datagram without the key cost the client another ping */
	}
	fz_reflect_books();
	if (!refl.active) {
		opts.warmup = 0;
		free(buf);
		return;
	}
	top = refl.top;
	{
		uint8_t b[PROTO_HDR_LEN];
		struct proto_msg f = { .type = PT_FIN, .session = sess.id, .seq = top + 1 };

		memset(b, 0, sizeof(b));
		proto_encode(b, &f);
		reflect_packet(b, sizeof(b), 0, 0, false, (struct sockaddr *)&peer, sizeof(peer));
	}
	fz_reflect_books();	/* the loss count too, now computed */
	memcpy(buf, in, size);
	reflect_packet(buf, size, 0, 0, false, (struct sockaddr *)&peer, sizeof(peer));
	if (ok && m.type == PT_PING && m.seq <= top && refl.active) {
		abort();	/* a replay of the ended session opened one */
	}
	opts.warmup = 0;
	free(buf);
}

/* Nothing the datagram says may break the client's or reflector's counters. */
static void fz_rules(uint8_t *in, size_t size)
{
	static const uint64_t k[2] = { 1, 2 };
	struct sockaddr_in6 peer = { .sin6_family = AF_INET6, .sin6_port = htons(4000) };
	struct proto_msg m;
	uint8_t *buf = malloc(size + TAG_LEN + 1);
	size_t i;

	if (!buf) {
		return;
	}
	run.key.on = true;
	memcpy(run.key.k, k, sizeof(k));
	memcpy(buf, in, size);
	(void)tag_ok(buf, size);	/* reads only [0, size): ASan watches */
	if (memcmp(buf, in, size)) {
		abort();		/* the check must leave the datagram as it was */
	}
	run.key.on = false;
	if (!proto_decode(in, size, &m) && echo_plausible(&m) &&
	    (m.t2w >= STAMP_MAX || m.t2sw >= STAMP_MAX || m.t3sw >= STAMP_MAX || m.t3w >= STAMP_MAX ||
	     m.t2k >= STAMP_MAX || m.t3k >= STAMP_MAX)) {
		abort();
	}
	fz_fin_sent = size & 1;
	fz_session(true);
	result.fin_counted = fz_fin_sent;	/* the session's own FIN_ACK came already */
	result.srv_received = 77;
	if (size >= PROTO_HDR_LEN && size <= PROTO_MAX_SIZE) {
		opts.size = (unsigned)size;	/* a pong of the ping's length: history and all */
	}
	emit_packet(buf, size, 2000000, 0, false);
	if (fz_fin_sent && result.srv_received != 77 &&
	    (proto_decode(in, size, &m) || (m.flags & PF_PARTIAL && !m.seq))) {
		abort();	/* a repeated FIN's answer overwrote the session's counts */
	}
	if (sess.c.late > sess.c.lost || sess.c.received + sess.c.lost + emitter.outstanding != sess.c.sent) {
		abort();		/* late <= lost, sent = received + lost + in flight */
	}
	if (run.ts.peer_off_on && (run.ts.peer_off >= PEER_OFF_MAX || run.ts.peer_off <= -PEER_OFF_MAX)) {
		abort();		/* a reflector offset past its bound was taken */
	}
	for (i = 0; i <= run.win.mask; i++) {
		int mm;
		int64_t v;

		for (mm = 0; mm < NMETRIC; mm++) {
			/* a stamp difference (below 2^62) and at most the bounded reflector offset */
			if (metric_value(mm, run.win.slot[i].t, &v) &&
			    (v >= (int64_t)STAMP_MAX + PEER_OFF_MAX || v <= -(int64_t)STAMP_MAX - PEER_OFF_MAX)) {
				abort();	/* an impossible number */
			}
		}
		if (run.win.slot[i].t[T3W] >= STAMP_MAX || run.win.slot[i].t[T3K] >= STAMP_MAX) {
			abort();	/* an echoed stamp (header or history) past 2^62 */
		}
	}
	fz_session(false);
	memcpy(buf, in, size);
	reflect_packet(buf, size, 0, 0, false, (struct sockaddr *)&peer, sizeof(peer));
	memcpy(buf, in, size);
	reflect_packet(buf, size, 0, 0, false, (struct sockaddr *)&peer, sizeof(peer));
	if (refl.idle_ns > 2ULL * IDLE_MAX_MS * 1000000ULL || (refl.active && refl.idle_ns < 3000ULL * 1000000ULL)) {
		abort();		/* the idle timeout is clamped and never wraps */
	}
	if (sess.c.received > 1 || sess.c.received + sess.c.duplicate > 2) {
		abort();		/* one ping twice: answered once */
	}
	free(buf);
	fz_life(in, size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct { uint16_t flag; int off, len; } echoed[] = {
		{ PF_T2W, 24, 8 }, { PF_T2SW, 32, 8 }, { PF_T3SW, 40, 8 }, { PF_T3W, 48, 16 },
	};
	/* a private copy of exactly size bytes: ASan sees any read past the end */
	uint8_t *in = malloc(size ? size : 1), out[PROTO_HDR_LEN + 8];
	struct proto_msg m, m2;
	size_t i;
	int r;

	if (!in) {
		return 0;
	}
	memcpy(in, data, size);
	r = proto_decode(in, size, &m);
	if (r < 0 || r >= PE_NERR) {
		abort();		/* not a proto_err: the caller indexes invalid_why[] with it */
	}
	if (r) {
		fz_rules(in, size);
		free(in);
		return 0;
	}
	if (size < PROTO_MIN_SIZE || m.version != PROTO_VERSION || m.type < PT_PING || m.type > PT_BUSY ||
	    (m.flags & (PF_T2W | PF_T2SW | PF_T3SW | PF_T3W) & ~proto_room(size))) {
		abort();		/* accepted something it should have refused */
	}
	fz_rules(in, size);
	fz_kx(in, size, &m);
	fz_hist(in, size, &m);
	memset(out, 0xa5, sizeof(out));
	proto_encode(out, &m);
	for (i = PROTO_HDR_LEN; i < sizeof(out); i++) {
		if (out[i] != 0xa5) {
			abort();	/* the encoder wrote past the header */
		}
	}
	if (memcmp(out, in, 24)) {
		abort();		/* magic .. seq do not survive a round trip */
	}
	for (i = 0; i < ARRAY_SIZE(echoed); i++) {
		static const uint8_t zero[16];
		const uint8_t *want = m.flags & echoed[i].flag ? in + echoed[i].off : zero;

		if (memcmp(out + echoed[i].off, want, (size_t)echoed[i].len)) {
			abort();
		}
	}
	/* the header alone: the kernel-stamp block after it is not part of the round trip */
	m.t2k = m.t3k = m.boot_id = 0;
	m.phc_off = 0;
	m.phc_window = 0;
	m.phc_method = m.phc_disciplined = 0;
	m.nhist = 0;
	if (proto_decode(out, PROTO_HDR_LEN, &m2) || !msg_equal(&m, &m2)) {
		abort();
	}
	free(in);
	return 0;
}
