// SPDX-License-Identifier: Apache-2.0
/*
 * How fast is the log: fill the ring with N synthetic client records (eight
 * stamps each, a few lost and late), write them in both formats with the
 * real writer, read them back with the real --analyze parser, and print
 * records per second.  Run by `make bench`; N from BENCH_LOG_RECORDS.
 */
#define RANT_NO_MAIN
#include "../rant.c"

static double secs(void)
{
	return (double)mono_ns() / 1e9;
}

int main(void)
{
	const char *env = getenv("BENCH_LOG_RECORDS");
	uint64_t n = env ? strtoull(env, NULL, 10) : 10000000, i;
	const char *path = "/tmp/rant-bench-log.tmp";
	enum log_format fmt;

	cfg_defaults();
	opts.sw_stamps = true;
	side_set(true);
	log_init(&sess.log, malloc(n * log_rec_size(true)), n);
	if (!sess.log.mem) {
		fprintf(stderr, "bench-log: cannot allocate %" PRIu64 " records\n", n);
		return 1;
	}
	for (i = 0; i < n; i++) {
		uint64_t t = 1795000000ULL * NSEC_PER_SEC + i * 10000;
		struct txn x = { .seq = i, .st = TF_USED | TF_SENT | TF_RECEIVED };

		x.t[T1SW] = t;
		x.t[T1W] = t + 700;
		x.t[T2W] = t + 2100;
		x.t[T2SW] = t + 4800;
		x.t[T3SW] = t + 4900;
		x.t[T3W] = t + 5800;
		x.t[T4W] = t + 7300 + i % 977;
		x.t[T4SW] = t + 9900 + i % 977;
		if (i % 10007 == 0) {
			x.st = TF_USED | TF_SENT | TF_LOST;
			x.t[T4W] = x.t[T4SW] = x.t[T2W] = x.t[T2SW] = x.t[T3SW] = x.t[T3W] = 0;
		}
		log_push(&x);
	}
	printf("records: %" PRIu64 " of %zu bytes each (%.1f MiB in memory)\n", n, log_rec_size(true),
	       (double)n * (double)log_rec_size(true) / (1 << 20));
	for (fmt = LOG_TEXT; fmt <= LOG_CSV; fmt++) {
		struct alog L;
		struct stat sb;
		double t0, t1, t2, tn;
		int fd = open("/dev/null", O_WRONLY), r;

		/* formatting alone: the writer into /dev/null */
		tn = secs();
		r = log_write(fd, fmt);
		tn = secs() - tn;
		close(fd);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (r < 0 || fd < 0) {
			perror(path);
			return 1;
		}
		printf("%-4s: format only %.2f s (%.1f M records/s)\n", fmt == LOG_TEXT ? "text" : "csv", tn,
		       (double)n / tn / 1e6);
		t0 = secs();
		r = log_write(fd, fmt);
		close(fd);
		t1 = secs();
		if (r < 0 || stat(path, &sb) < 0) {
			fprintf(stderr, "bench-log: write failed: %s\n", strerror(-r));
			return 1;
		}
		r = alog_open(path, &L);
		while (r == 0 && (r = alog_next(&L)) > 0) {
			r = 0;
		}
		t2 = secs();
		if (r < 0 || L.n != n) {
			fprintf(stderr, "bench-log: read back %" PRIu64 " of %" PRIu64 " records\n", L.n, n);
			return 1;
		}
		printf("%-4s: %.0f MiB file, write %.2f s (%.1f M records/s), read + validate %.2f s (%.1f M records/s)\n",
		       fmt == LOG_TEXT ? "text" : "csv", (double)sb.st_size / (1 << 20), t1 - t0,
		       (double)n / (t1 - t0) / 1e6, t2 - t1, (double)n / (t2 - t1) / 1e6);
		alog_close(&L);
	}
	unlink(path);
	free(sess.log.mem);
	return 0;
}
