// SPDX-License-Identifier: Apache-2.0
/*
 * How long and how much memory --plot takes after a long run: fill the log
 * ring with N synthetic client transactions through the real accounting
 * (histograms, breaches), then time plot_draw() alone and measure how much
 * its peak memory adds.  Run by `make bench` (tests/plot-bench.sh); N from
 * PLOT_BENCH_RECORDS (default 30000000).
 */
#define RANT_NO_MAIN
#include "../rant.c"

static long maxrss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

int main(void)
{
	const char *env = getenv("PLOT_BENCH_RECORDS");
	uint64_t n = env ? strtoull(env, NULL, 10) : 30000000, i, nb;
	const char *path = "/tmp/rant-plot-bench.svg";
	struct plot_src src = { .what = "" };
	double t0, t1;
	long rss0, rss1;
	struct stat sb;
	int k, r;

	cfg_defaults();
	opts.threshold_ns = 100000;
	opts.cont = true;
	side_set(true);
	run.ow_evidence = OW_VETH;	/* the worst case: a veth run also draws the one-way series */
	log_init(&sess.log, malloc(n * log_rec_size(true)), n);
	nb = opts.bound_ns / opts.bucket_ns;
	for (k = 0; k < run.side.nmetrics; k++) {
		hist_init(&sess.h[run.side.metrics[k]], opts.bucket_ns, opts.bound_ns, calloc(nb, 8), calloc(OUT_CAP, 8), OUT_CAP,
			  calloc(hist_lh_len(opts.bound_ns), 8));
	}
	sess.breach = calloc(BREACH_KEEP, sizeof(*sess.breach));
	if (!sess.log.mem || !sess.breach) {
		fprintf(stderr, "plot-bench: cannot allocate %" PRIu64 " records\n", n);
		return 1;
	}
	for (i = 0; i < n; i++) {
		uint64_t t = 1795000000ULL * NSEC_PER_SEC + i * 10000, rtt = 18000 + (i * 7919) % 4001;
		struct txn x = { .seq = i, .st = TF_USED | TF_SENT | TF_RECEIVED };

		if (i % 100003 == 99999) {
			rtt += 150000;
		}
		x.t[T1W] = t;
		x.t[T2W] = t + 2100;
		x.t[T3W] = t + 2100 + rtt / 3;
		x.t[T4W] = t + rtt;
		if (i % 50021 == 50000) {
			x.st = TF_USED | TF_SENT | TF_LOST;
			x.t[T4W] = x.t[T2W] = x.t[T3W] = 0;
			sess.c.lost++;
		}
		txn_account(&x);
		log_push(&x);
	}
	report_prepare();
	src.n = sess.log.n;
	plotter.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (plotter.fd < 0) {
		perror(path);
		return 1;
	}
	rss0 = maxrss_kb();
	t0 = (double)mono_ns() / 1e9;
	r = plot_draw(&src);
	t1 = (double)mono_ns() / 1e9;
	rss1 = maxrss_kb();
	close(plotter.fd);
	if (r < 0 || stat(path, &sb) < 0) {
		fprintf(stderr, "plot-bench: %s\n", strerror(r < 0 ? -r : errno));
		return 1;
	}
	printf("plot of %" PRIu64 " transactions from the log ring: %.2f s (%.1f M/s), +%ld KiB peak memory, SVG %lld bytes\n",
	       n, t1 - t0, (double)n / (t1 - t0) / 1e6, rss1 - rss0, (long long)sb.st_size);
	unlink(path);
	return 0;
}
