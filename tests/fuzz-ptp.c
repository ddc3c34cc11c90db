// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer harness: the --ptp-probe receive path on arbitrary bytes, as
 * emit_recv/reflect_recv run it — ptp_check(), then proto_decode() of what
 * follows the PTP header.  What it accepts must re-encode (ptp_encode over a
 * re-encoded rant header) to a header it accepts again, with the same
 * fields.  Built and run by tests/fuzz.sh.
 */
#define RANT_NO_MAIN
#include "../rant.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a private copy of exactly size bytes: ASan sees any read past the end */
	uint8_t *in = malloc(size ? size : 1), out[PTP_HDR_LEN + PROTO_HDR_LEN];
	struct proto_msg m, m2;
	uint8_t domain = size ? data[0] ^ 0x7f : 127;	/* the first byte picks the domain: both outcomes reached */
	int r;

	if (!in) {
		return 0;
	}
	memcpy(in, data, size);
	r = ptp_check(in, size, domain);
	if (r < 0 || r >= PE_NERR) {
		abort();		/* not a proto_err: the caller indexes invalid_why[] with it */
	}
	if (r) {
		free(in);
		return 0;
	}
	if (size < PTP_HDR_LEN || in[4] != domain || in[3] != PTP_HDR_LEN) {
		abort();		/* accepted something it should have refused */
	}
	r = proto_decode(in + PTP_HDR_LEN, size - PTP_HDR_LEN, &m);
	if (r < 0 || r >= PE_NERR) {
		abort();
	}
	if (r) {
		free(in);
		return 0;
	}
	proto_encode(out + PTP_HDR_LEN, &m);
	ptp_encode(out, domain);
	if (ptp_check(out, sizeof(out), domain) || proto_decode(out + PTP_HDR_LEN, PROTO_HDR_LEN, &m2) ||
	    m2.seq != m.seq || m2.session != m.session || m2.type != m.type) {
		abort();		/* our own probe does not pass our own check */
	}
	if (out[30] != (uint8_t)(m.seq >> 8) || out[31] != (uint8_t)m.seq) {
		abort();		/* sequenceId is not rant's sequence number */
	}
	free(in);
	return 0;
}
