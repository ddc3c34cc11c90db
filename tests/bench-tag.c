// SPDX-License-Identifier: Apache-2.0
/*
 * What --key-file costs per packet: tag_put() (the sender's side) and
 * tag_ok() (the receiver's) on datagrams of 72, 200, 1400 and 9000 bytes,
 * N times each, in ns per call.  Each datagram is tagged twice per
 * transaction (ping and pong) and checked twice.  Run by `make bench`; N
 * from BENCH_TAG_N.
 */
#define RANT_NO_MAIN
#include "../rant.c"

int main(void)
{
	static const size_t sizes[] = { 72, 200, 1400, 9000 };
	static uint8_t buf[9000];
	const char *env = getenv("BENCH_TAG_N");
	uint64_t n = env ? strtoull(env, NULL, 10) : 1000000, i, t0, bad = 0;
	size_t k;

	run.key.on = true;
	run.key.k[0] = 0x0123456789abcdefULL;
	run.key.k[1] = 0xfedcba9876543210ULL;
	for (k = 0; k < ARRAY_SIZE(sizes); k++) {
		struct proto_msg m = { .type = PT_PING, .session = 1 };
		double put, chk;

		memset(buf, 0, sizeof(buf));
		t0 = mono_ns();
		for (i = 0; i < n; i++) {
			m.seq = i;
			proto_encode(buf, &m);
			tag_put(buf, sizes[k]);
		}
		put = (double)(mono_ns() - t0) / (double)n;
		t0 = mono_ns();
		for (i = 0; i < n; i++) {
			bad += !tag_ok(buf, sizes[k]);
		}
		chk = (double)(mono_ns() - t0) / (double)n;
		printf("bench-tag: %5zu bytes: encode+tag %7.1f ns, check %7.1f ns per datagram\n", sizes[k], put, chk);
	}
	if (bad) {
		fprintf(stderr, "bench-tag: %" PRIu64 " tags failed their own check\n", bad);
		return 1;
	}
	return 0;
}
