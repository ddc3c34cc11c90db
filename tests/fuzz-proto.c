// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer harness: proto_decode() on arbitrary bytes.  A header it accepts
 * must re-encode to the same fields (and to the same bytes, except the echoed
 * fields whose flag is clear, which the encoder zeroes), and decode again.
 * Built and run by tests/fuzz.sh.
 */
#define RANT_NO_MAIN
#include "../rant.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Fields of two decoded headers, compared one by one (no padding bytes). */
static bool msg_equal(const struct proto_msg *a, const struct proto_msg *b)
{
	return a->version == b->version && a->type == b->type && a->flags == b->flags &&
	       a->session == b->session && a->idle_ms == b->idle_ms && a->seq == b->seq &&
	       a->t2w == b->t2w && a->t2sw == b->t2sw && a->t3sw == b->t3sw && a->t3w == b->t3w &&
	       a->t3w_seq == b->t3w_seq;
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
		free(in);
		return 0;
	}
	if (size < PROTO_HDR_LEN || m.version != PROTO_VERSION || m.type < PT_PING || m.type > PT_BUSY) {
		abort();		/* accepted something it should have refused */
	}
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
	for (i = 0; i < sizeof(echoed) / sizeof(echoed[0]); i++) {
		static const uint8_t zero[16];
		const uint8_t *want = m.flags & echoed[i].flag ? in + echoed[i].off : zero;

		if (memcmp(out + echoed[i].off, want, (size_t)echoed[i].len)) {
			abort();
		}
	}
	if (proto_decode(out, PROTO_HDR_LEN, &m2) || !msg_equal(&m, &m2)) {
		abort();
	}
	free(in);
	return 0;
}
