// SPDX-License-Identifier: Apache-2.0
/*
 * Write a synthetic rant emit log (text format, kernel software stamps, no
 * app stamps) of N transactions for the --plot tests and benchmark: one
 * ping every 10 us, rtt around 20 us with a slow wave, a spike every 100003
 * transactions and a lost one every 50021.  Deterministic, so a test can
 * count what it wrote: the last line on stderr gives the totals.
 *
 *   tests/plot-gen N FILE
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *stamp(char *p, uint64_t ns)
{
	return p + sprintf(p, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	uint64_t n, i, lost = 0, spikes = 0, t0 = 1795000000ULL * 1000000000ULL;
	size_t len = 0;
	FILE *f;

	if (argc != 3 || !(n = strtoull(argv[1], NULL, 10))) {
		fprintf(stderr, "usage: plot-gen N FILE\n");
		return 2;
	}
	f = fopen(argv[2], "w");
	if (!f) {
		perror(argv[2]);
		return 1;
	}
	fputs("SEQ T1_KSW T4_KSW RTT\n---------------------\n", f);
	for (i = 0; i < n; i++) {
		uint64_t t1 = t0 + i * 10000, rtt = 18000 + (i * 7919) % 4001 + (i / 1000) % 500;
		char *p = buf + len;

		if (i % 100003 == 99999) {
			rtt = 150000 + (i % 7) * 10000;
			spikes++;
		}
		p += sprintf(p, "%" PRIu64 " ", i);
		p = stamp(p, t1);
		if (i % 50021 == 50000) {
			p += sprintf(p, " - lost\n");
			lost++;
		} else {
			*p++ = ' ';
			p = stamp(p, t1 + rtt);
			p += sprintf(p, " %" PRIu64 "\n", rtt);
		}
		len = (size_t)(p - buf);
		if (len > sizeof(buf) - 256) {
			fwrite(buf, 1, len, f);
			len = 0;
		}
	}
	fwrite(buf, 1, len, f);
	if (fclose(f)) {
		perror(argv[2]);
		return 1;
	}
	fprintf(stderr, "plot-gen: %" PRIu64 " transactions, %" PRIu64 " lost, %" PRIu64 " spikes\n", n, lost, spikes);
	return 0;
}
