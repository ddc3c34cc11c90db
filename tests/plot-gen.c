// SPDX-License-Identifier: Apache-2.0
/*
 * Write a synthetic rant emit log (text format, kernel software stamps, no
 * app stamps) of N transactions for the --plot tests and benchmark: one
 * ping every 10 us, rtt around 20 us with a slow wave, a spike every 100003
 * transactions and a lost one every 50021.  Deterministic, so a test can
 * count what it wrote: the last line on stderr gives the totals.  With a
 * second file, a pair of csv logs of the same run instead: the client's
 * (T1, T4, rtt) and the reflector's (T2, T3, response, every ping but the
 * ones lost on the way out, every third lost one), for --analyze's join.
 *
 *   tests/plot-gen N FILE [REFLECT_FILE]
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

/* The csv pair: the client's rows into f, the reflector's into r. */
static int csv_pair(uint64_t n, FILE *f, FILE *r)
{
	static char b1[1 << 20], b2[1 << 20];
	uint64_t i, lost = 0, t0 = 1795000000ULL * 1000000000ULL;
	size_t l1 = 0, l2 = 0;

	fputs("# rant 1.0.0 mode=emit wire=software server_wire=software app_stamps=off dropped=0 filtered=0 cmdline=plot-gen\n"
	      "seq,status,t1_ksw,t4_ksw,rtt_ns\n", f);
	fputs("# rant 1.0.0 mode=reflect wire=software server_wire=software app_stamps=off dropped=0 filtered=0 cmdline=plot-gen\n"
	      "seq,status,t2_ksw,t3_ksw,response_ns\n", r);
	for (i = 0; i < n; i++) {
		uint64_t t1 = t0 + i * 10000, rtt = 18000 + (i * 7919) % 4001 + (i / 1000) % 500;
		uint64_t t2 = t1 + rtt / 2 - 700, t3 = t2 + 1400;
		char *p = b1 + l1, *q = b2 + l2;

		p += sprintf(p, "%" PRIu64 ",", i);
		if (i % 50021 == 50000) {
			p += sprintf(p, "lost,");
			p = stamp(p, t1);
			p += sprintf(p, ",,\n");
			lost++;
		} else {
			p += sprintf(p, "ok,");
			p = stamp(p, t1);
			*p++ = ',';
			p = stamp(p, t1 + rtt);
			p += sprintf(p, ",%" PRIu64 "\n", rtt);
		}
		if (i % 50021 != 50000 || lost % 3 == 0) {
			q += sprintf(q, "%" PRIu64 ",ok,", i);
			q = stamp(q, t2);
			*q++ = ',';
			q = stamp(q, t3);
			q += sprintf(q, ",%" PRIu64 "\n", t3 - t2);
		}
		l1 = (size_t)(p - b1);
		l2 = (size_t)(q - b2);
		if (l1 > sizeof(b1) - 256 || l2 > sizeof(b2) - 256) {
			fwrite(b1, 1, l1, f);
			fwrite(b2, 1, l2, r);
			l1 = l2 = 0;
		}
	}
	fwrite(b1, 1, l1, f);
	fwrite(b2, 1, l2, r);
	fprintf(stderr, "plot-gen: %" PRIu64 " transactions, %" PRIu64 " lost (csv pair)\n", n, lost);
	return 0;
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	uint64_t n, i, lost = 0, spikes = 0, t0 = 1795000000ULL * 1000000000ULL;
	size_t len = 0;
	FILE *f;

	if ((argc != 3 && argc != 4) || !(n = strtoull(argv[1], NULL, 10))) {
		fprintf(stderr, "usage: plot-gen N FILE [REFLECT_FILE]\n");
		return 2;
	}
	if (argc == 4) {
		FILE *r = fopen(argv[3], "w");

		f = fopen(argv[2], "w");
		if (!f || !r || csv_pair(n, f, r) || fclose(f) || fclose(r)) {
			perror("plot-gen");
			return 1;
		}
		return 0;
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
