// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests for rant: the pure parts, reached by including the source
 * (chrony's test/unit does the same), so every static is in scope.
 *
 *   make tests/unit && tests/unit
 *
 * TAP: one line per assertion, "ok N - case: name" or "not ok N - case:
 * name: detail", then the plan "1..N".  The cases are the table in main();
 * `tests/unit CASE...` runs only those.  Needs neither root nor network;
 * temporary files live under /tmp and are removed.
 */
#define RANT_NO_MAIN
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "../rant.c"
#pragma GCC diagnostic pop
#include <sys/wait.h>

/* ------------------------------------------------------------ framework */

static int t_num, t_pass, t_fail;
static const char *t_case;	/* the case running: each TAP line names it */

static void ok(bool cond, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void ok(bool cond, const char *name, const char *fmt, ...)
{
	size_t n = strlen(t_case);
	/* "pmc: -M parses" in case pmc is not said twice */
	const char *sep = strncmp(name, t_case, n) || name[n] != ':' ? ": " : "";
	const char *c = *sep ? t_case : "";

	t_num++;
	if (cond) {
		t_pass++;
		printf("ok %d - %s%s%s\n", t_num, c, sep, name);
	} else {
		va_list ap;

		t_fail++;
		printf("not ok %d - %s%s%s: ", t_num, c, sep, name);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
	}
	fflush(stdout);
}

/* Deterministic PRNG (xorshift64*), so every run tests the same data. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

/* uniform in [lo, hi] */
static int64_t rnd_range(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* Log bins for the histograms the cases set up by hand (hist_init): slot k, zeroed. */
static uint64_t *test_lh(int k)
{
	static uint64_t lh[NMETRIC + 4][2 * LH_N];

	memset(lh[k], 0, sizeof(lh[k]));
	return lh[k];
}

/* Redirect fd 1 or 2 into an unlinked temp file around a call. */
struct capture {
	int fd, saved, target;
};

static void cap_start(struct capture *c, int target)
{
	char path[] = "/tmp/rant-unit-cap.XXXXXX";

	fflush(stdout);
	fflush(stderr);
	c->target = target;
	c->fd = mkstemp(path);
	if (c->fd < 0) {
		perror("mkstemp");
		exit(99);
	}
	unlink(path);
	c->saved = dup(target);
	dup2(c->fd, target);
}

/* Restore the fd; returns what was written (malloc'd, NUL-terminated). */
static char *cap_stop(struct capture *c)
{
	off_t n;
	char *s;

	fflush(stdout);
	fflush(stderr);
	dup2(c->saved, c->target);
	close(c->saved);
	n = lseek(c->fd, 0, SEEK_END);
	s = malloc((size_t)n + 1);
	if (!s) {
		exit(99);
	}
	if (n > 0 && pread(c->fd, s, (size_t)n, 0) != n) {
		n = 0;
	}
	s[n] = 0;
	close(c->fd);
	return s;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++) {
		n += *s == '\n';
	}
	return n;
}

/* exactly one line, "rant: ..." */
static bool one_rant_line(const char *s)
{
	size_t n = strlen(s);

	return count_lines(s) == 1 && n > 6 && s[n - 1] == '\n' && !strncmp(s, "rant: ", 6);
}

/* A temp file path; the caller unlinks it. */
static void tmp_path(char *buf, size_t len, const char *tag)
{
	static int seq;

	snprintf(buf, len, "/tmp/rant-unit-%d-%d-%s", (int)getpid(), seq++, tag);
}

static int write_file(const char *path, const char *content)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int r;

	if (fd < 0) {
		return -1;
	}
	r = write_all(fd, content, strlen(content));
	close(fd);
	return r;
}

static char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *s;
	long n;

	if (!f) {
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = malloc((size_t)n + 1);
	if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
		n = 0;
	}
	if (s) {
		s[n] = 0;
	}
	fclose(f);
	return s;
}

/*
 * Every case starts from here: the run state and the configuration as at
 * start-up, and the NIC's ioctls real (a case with another fake restores it).
 */
/* The real kernel interface back, whole: every seam a case replaced (struct kops). */
static void kops_restore(void)
{
	kops = kops_sys;
}

static void reset_globals(void)
{
	run_reset();
	run.to = &outputs_table;
	cfg_defaults();
	kops_restore();
	run.ts.phc_index = -1;
	run.ts.rx_filter = -1;
	side_set(true);
}

/* ------------------------------------------------------ option parsing */

/* "rant" + the words of s; single quotes group (and '' is an empty word). */
struct args {
	int argc;
	char *argv[64];
	char buf[2048];
};

static void split_args(const char *s, struct args *a)
{
	char *p = a->buf;

	a->argc = 0;
	strcpy(p, "rant");
	a->argv[a->argc++] = p;
	p += 5;
	for (;;) {
		while (*s == ' ') {
			s++;
		}
		if (!*s) {
			break;
		}
		a->argv[a->argc++] = p;
		while (*s && *s != ' ') {
			if (*s == '\'') {
				s++;
				while (*s && *s != '\'') {
					*p++ = *s++;
				}
				if (*s) {
					s++;
				}
			} else {
				*p++ = *s++;
			}
		}
		*p++ = 0;
	}
	a->argv[a->argc] = NULL;
}

/*
 * Forget getopt's position inside a bundle ("-hV" stops at h): glibc
 * re-initialises only when optind is 0, and opt_parse sets it to 1.
 */
static void getopt_reset(void)
{
	static char arg0[] = "x";
	char *av[] = { arg0, NULL };

	optind = 0;
	opterr = 0;
	(void)getopt(1, av, "failed");
}

static int parse_str(const char *s, struct args *a, char **out, char **err)
{
	struct capture co, ce;
	int r;

	split_args(s, a);
	cap_start(&co, 1);
	cap_start(&ce, 2);
	r = opt_parse(a->argc, a->argv);
	*err = cap_stop(&ce);
	*out = cap_stop(&co);
	getopt_reset();
	return r;
}

/* {expected result, argv, text the stderr line must contain} */
static const struct {
	int want;
	const char *argv, *needle;
} opt_cases[] = {
	/* valid */
	{ 0, "", NULL },
	{ 0, "-a 192.0.2.1", NULL },
	{ 0, "-a ::1 --port 1", NULL },
	{ 0, "--address=h --port=65535", NULL },
	{ 0, "-i lo", NULL },
	{ 0, "-a h -i lo -s -H -G -P --spin -q -v", NULL },
	{ 0, "-a h --count 1 --interval 0 --timeout 1 -w 0", NULL },
	{ 0, "-a h --count 1000000000000 --interval 60000000 --timeout 60000 -w 1000000000", NULL },
	{ 0, "-t5 -C", NULL },
	{ 0, "-S --trace-instance foo", NULL },
	{ 0, "-l /tmp/x --log-format csv --log-records 1 -L 0", NULL },
	{ 0, "-b 0.001 -o 10000", NULL },
	{ 0, "-b 0.1 -o 1000000", NULL },
	{ 0, "-p 0 -B 1 --priority 0 --tos 0", NULL },
	{ 0, "-p 1000000 -B 65535 --priority 6 --tos 255", NULL },
	{ 0, "--once --json -", NULL },
	{ 0, "--analyze a.log", NULL },
	{ 0, "--analyze a.log b.log --top 1 -H -t 1 -b 1 -o 10 --json x -q -v -C", NULL },
	{ 0, "-d 0.001", NULL },
	{ 0, "-d 31536000", NULL },
	{ 0, "--timestamps hw", NULL },
	{ 0, "-a h --size 64", NULL },
	{ 0, "-a h --size 65000", NULL },
	{ 1, "-h", NULL },
	{ 1, "--help", NULL },
	{ 1, "-V", NULL },
	{ 1, "--version", NULL },
	/* numbers: range, sign, junk, empty, not numbers, fractions */
	{ -1, "--port 0", "--port" },
	{ -1, "--port 65536", "--port" },
	{ -1, "--port -1", "--port" },
	{ -1, "--port 10x", "--port" },
	{ -1, "--port ''", "--port" },
	{ -1, "--port abc", "--port" },
	{ -1, "--port 1.5", "--port" },
	{ -1, "--port ' 5'", "--port" },
	{ -1, "--port +5", "--port" },
	{ -1, "--port 0x10", "--port" },
	{ -1, "--port 99999999999999999999999", "--port" },
	{ -1, "-a h --size 23", "--size: '23' is out of range (24 to 65000): a datagram carries at least rant's short header" },
	{ -1, "-a h --size 65001", "--size" },
	{ -1, "-a h --size 64.0", "--size" },
	{ -1, "-a h --size ''", "--size" },
	{ -1, "-d 0", "--duration" },
	{ -1, "-d -1", "--duration" },
	{ -1, "-d 31536001", "--duration" },
	{ -1, "-d 1s", "--duration" },
	{ -1, "-d nan", "--duration" },
	{ -1, "-d inf", "--duration" },
	{ -1, "-d ''", "--duration" },
	{ -1, "-d '1 '", "--duration" },
	{ -1, "-d 1e400", "--duration" },
	{ -1, "-a h --count 0", "--count" },
	{ -1, "-a h --count 1000000000001", "--count" },
	{ -1, "-a h --count 5.5", "--count" },
	{ -1, "-a h --count -3", "--count" },
	{ -1, "-a h -w -1", "--warmup" },
	{ -1, "-a h -w 1000000001", "--warmup" },
	{ -1, "-a h -w ten", "--warmup" },
	{ -1, "-a h --interval 60000001", "--interval" },
	{ -1, "-a h --interval 1.5", "--interval" },
	{ -1, "-a h --interval 100us", "--interval" },
	{ -1, "-a h --timeout 0", "--timeout" },
	{ -1, "-a h --timeout 60001", "--timeout" },
	{ -1, "-a h --timeout 10ms", "--timeout" },
	{ -1, "--timestamps HW", "--timestamps" },
	{ -1, "--timestamps ''", "--timestamps" },
	{ -1, "--timestamps hardware", "--timestamps" },
	{ -1, "-t 0", "--threshold" },
	{ -1, "-t -5", "--threshold" },
	{ -1, "-t 60000001", "--threshold" },
	{ -1, "-t 5us", "--threshold" },
	{ -1, "-t 0.0001", "--threshold" },
	{ -1, "-t ''", "--threshold" },
	{ -1, "-b 0", "--bucket-size" },
	{ -1, "-b 1000001", "--bucket-size" },
	{ -1, "-b 0.0001", "--bucket-size" },
	{ -1, "-b x", "--bucket-size" },
	{ -1, "-o 0", "--overflow" },
	{ -1, "-o 60000001", "--overflow" },
	{ -1, "-o -1", "--overflow" },
	{ -1, "-l f -L -1", "--log-threshold" },
	{ -1, "-l f -L 60000001", "--log-threshold" },
	{ -1, "-l f -L abc", "--log-threshold" },
	{ -1, "-p 1000001", "--busy-poll-us" },
	{ -1, "-p -1", "--busy-poll-us" },
	{ -1, "-p 1.5", "--busy-poll-us" },
	{ -1, "-B 0", "--budget" },
	{ -1, "-B 65536", "--budget" },
	{ -1, "--priority -1", "--priority" },
	{ -1, "--priority x", "--priority" },
	{ -1, "--priority 2147483648", "--priority" },
	{ -1, "--priority 4294967295", "--priority" },
	{ -1, "--tos 256", "--tos" },
	{ -1, "--tos -1", "--tos" },
	{ -1, "-l f --log-records 0", "--log-records" },
	{ -1, "-l f --log-records 10000000001", "--log-records" },
	{ -1, "-l f --log-format xml", "--log-format" },
	{ -1, "-l f --log-format ''", "--log-format" },
	{ -1, "-l f --log-format CSV", "--log-format" },
	{ 0, "-a h --cpu-latency 0", NULL },
	{ 0, "--cpu-latency 1000000", NULL },
	{ 0, "-a h --cpu-latency off", NULL },
	{ -1, "-a h --cpu-latency 1000001", "--cpu-latency: '1000001' is out of range (0 to 1000000 us, or off)" },
	{ -1, "-a h --cpu-latency 99999999999999999999999", "--cpu-latency: '99999999999999999999999' is out of range (0 to 1000000 us, or off)" },
	{ -1, "-a h --cpu-latency -1", "--cpu-latency: '-1' is out of range (0 to 1000000 us, or off)" },
	{ -1, "-a h --cpu-latency OFF", "--cpu-latency: 'OFF' is not a whole number (0 to 1000000 us, or off)" },
	{ -1, "-a h --cpu-latency 5us", "--cpu-latency: '5us' is not a whole number" },
	{ -1, "-a h --cpu-latency", "--cpu-latency" },
	{ -1, "--analyze f --cpu-latency 0", "--cpu-latency: not used with --analyze" },
	{ -1, "--analyze f --top 0", "--top" },
	{ -1, "--analyze f --top 1000001", "--top" },
	/* unknown options, missing values */
	{ -1, "--bogus", "'--bogus'" },
	{ -1, "--bogus=1", "--bogus" },
	{ -1, "-x", "'-x'" },
	{ -1, "-Hx", "'-x'" },
	{ -1, "-1", "'-1'" },
	{ -1, "--spin=1", "--spin" },
	{ -1, "--lo f", "--lo" },
	{ -1, "--port", "--port" },
	{ -1, "-t", "--threshold" },
	{ -1, "-a", "--address" },
	{ -1, "-H -i", "--interface" },
	{ -1, "--log", "--log" },
	{ -1, "--analyze", "--analyze" },
	{ -1, "--timestamps", "--timestamps" },
	/* interfaces and addresses */
	{ -1, "-i nosuchif0", "--interface" },
	{ -1, "-i ''", "--interface" },
	{ -1, "-i aaaaaaaaaaaaaaaaaaaa", "--interface" },
	{ -1, "--address ''", "--address" },
	/* conflicts */
	{ -1, "-a h --once", "--once" },
	{ -1, "--count 5", "--count" },
	{ -1, "--interval 100", "--interval" },
	{ -1, "--timeout 5", "--timeout" },
	{ -1, "-w -1", "--warmup" },
	{ -1, "--size 100", "--size" },
	{ -1, "--log-format csv", "--log-format" },
	{ -1, "--log-records 5", "--log-records" },
	{ -1, "--trace-instance x", "--trace-instance" },
	{ -1, "-T --trace-instance a/b", "--trace-instance" },
	{ -1, "-T --trace-instance ..", "--trace-instance" },
	{ -1, "-S --trace-instance .", "--trace-instance" },
	{ -1, "-T --trace-instance ''", "--trace-instance" },
	{ -1, "--top 5", "--top" },
	{ -1, "-a h --top 5", "--top" },
	{ -1, "--analyze f -a h", "--address" },
	{ -1, "--analyze f -i lo", "--interface" },
	{ -1, "--analyze f --port 5", "--port" },
	{ -1, "--analyze f -d 5", "--duration" },
	{ -1, "--analyze f -T", "--trace-marker" },
	{ -1, "--analyze f -S", "--snapshot" },
	{ -1, "--analyze f -l x", "--log" },
	{ -1, "--analyze f --spin", "--spin" },
	{ -1, "--analyze f --timestamps sw", "--timestamps" },
	{ -1, "--analyze f -s", "--sw-timestamps" },
	{ -1, "--analyze f --size 100", "--size" },
	{ -1, "--analyze f --once", "--once" },
	{ -1, "-o 1 -b 10", "--overflow" },
	{ -1, "-b 0.001 -o 100000", "--overflow" },
	{ -1, "-o 1000001", "--overflow" },
	{ -1, "-l same --json same", "--json" },
	{ -1, "foo", "'foo'" },
	{ -1, "-a h foo", "'foo'" },
	{ -1, "--analyze a b c", "unexpected argument" },
};

static void test_opt_table(void)
{
	size_t i;
	int nbad = 0;

	for (i = 0; i < ARRAY_SIZE(opt_cases); i++) {
		struct args a;
		char *out, *err, name[200];
		int r = parse_str(opt_cases[i].argv, &a, &out, &err);
		bool good;

		snprintf(name, sizeof(name), "opt_parse '%s' -> %d", opt_cases[i].argv, opt_cases[i].want);
		if (opt_cases[i].want < 0) {
			nbad++;
			good = r == -1 && one_rant_line(err) && strstr(err, opt_cases[i].needle) && !*out;
		} else {
			good = r == opt_cases[i].want && !*err;
		}
		ok(good, name, "returned %d, stderr '%s', stdout %zu bytes", r, err, strlen(out));
		free(out);
		free(err);
	}
	ok(nbad >= 60, "opt_parse: at least 60 bad invocations in the table", "only %d", nbad);
}

/* Valid invocations: the fields they set. */
#define GOOD(argstr, cond)                                                          \
	do {                                                                        \
		struct args a_;                                                     \
		char *o_, *e_;                                                      \
		int r_ = parse_str(argstr, &a_, &o_, &e_);                          \
		ok(r_ == 0 && !*e_ && (cond), "opt fields '" argstr "': " #cond,    \
		   "returned %d, stderr '%s'", r_, e_);                             \
		free(o_);                                                           \
		free(e_);                                                           \
	} while (0)

static void test_opt_fields(void)
{
	GOOD("", opts.mode == MODE_REFLECT && opts.port == 12345 && opts.size == 64 &&
		 opts.timeout_ns == 1000000000ULL && opts.interval_ns == 0 && opts.bucket_ns == 100 &&
		 opts.bound_ns == 1000000 && opts.threshold_ns == -1 && opts.log_threshold_ns == -1 &&
		 opts.ts == TS_AUTO && opts.log_format == LOG_TEXT && opts.priority == -1 && opts.tos == -1 &&
		 opts.top == 10 && !opts.trace && !opts.snapshot && !opts.iface && !opts.address && opts.count == 0 &&
		 opts.warmup == 0 && !opts.busy_poll_set && !opts.budget_set);
	GOOD("-a 192.0.2.1", opts.mode == MODE_EMIT && !strcmp(opts.address, "192.0.2.1"));
	GOOD("--address=host.example", opts.mode == MODE_EMIT && !strcmp(opts.address, "host.example"));
	GOOD("-a h --port 1", opts.port == 1);
	GOOD("-a h --port 65535", opts.port == 65535);
	GOOD("--port=007", opts.port == 7);
	GOOD("-a h --size 1472", opts.size == 1472);
	GOOD("-a h --size 65000", opts.size == 65000);
	GOOD("-a h --interval 250", opts.interval_ns == 250000);
	GOOD("-a h --interval 60000000", opts.interval_ns == 60000000000ULL);
	GOOD("-a h --timeout 5", opts.timeout_ns == 5000000);
	GOOD("-a h --timeout 60000", opts.timeout_ns == 60000000000ULL);
	GOOD("-a h --count 1000000000000", opts.count == 1000000000000ULL);
	GOOD("-a h -w 1000000000", opts.warmup == 1000000000ULL);
	GOOD("-d 0.5", opts.duration_s == 0.5);
	GOOD("-d 1e3", opts.duration_s == 1000);
	GOOD("-b 0.1", opts.bucket_ns == 100);
	GOOD("-b 0.001", opts.bucket_ns == 1);
	GOOD("-b 2.5", opts.bucket_ns == 2500);
	GOOD("-b 0.25 -o 0.25", opts.bucket_ns == 250 && opts.bound_ns == 250);
	GOOD("-o 50", opts.bound_ns == 50000);
	GOOD("-o 1000000 -b 0.1", opts.bound_ns == 1000000000ULL && opts.bucket_ns == 100);
	GOOD("-o 60000000 -b 10", opts.bound_ns == 60000000000ULL);
	GOOD("-t 5", opts.threshold_ns == 5000);
	GOOD("-t 0.001", opts.threshold_ns == 1);
	GOOD("-t 2.5", opts.threshold_ns == 2500);
	GOOD("-t 60000000", opts.threshold_ns == 60000000000LL);
	GOOD("-t5", opts.threshold_ns == 5000);
	GOOD("--threshold=7.25", opts.threshold_ns == 7250);
	GOOD("-t 10 -C", opts.cont && opts.threshold_ns == 10000);
	GOOD("-C -t 10", opts.cont && opts.threshold_ns == 10000);
	GOOD("-S", opts.snapshot && opts.trace);
	GOOD("-T", opts.trace && !opts.snapshot);
	GOOD("-T --trace-instance foo", opts.trace && !strcmp(opts.trace_instance, "foo"));
	GOOD("--timestamps hw", opts.ts == TS_HW);
	GOOD("--timestamps sw", opts.ts == TS_SW);
	GOOD("--timestamps auto", opts.ts == TS_AUTO);
	GOOD("-l /tmp/x", !strcmp(opts.log, "/tmp/x") && opts.log_format == LOG_TEXT && opts.log_records == 0);
	GOOD("-l /tmp/x --log-format csv", opts.log_format == LOG_CSV);
	GOOD("-l /tmp/x --log-format text", opts.log_format == LOG_TEXT);
	GOOD("-l f -L 0", opts.log_threshold_ns == 0);
	GOOD("-l f -L 12.5", opts.log_threshold_ns == 12500);
	GOOD("-l f --log-records 100", opts.log_records == 100);
	GOOD("-s -H -G -P --spin -q -v", opts.sw_stamps && opts.histogram && opts.hugepages && opts.prefer_busypoll &&
					      opts.spin && opts.quiet && opts.verbose);
	GOOD("-sHq", opts.sw_stamps && opts.histogram && opts.quiet);
	GOOD("-p 50", opts.busy_poll_us == 50 && opts.busy_poll_set);
	GOOD("-p 0", opts.busy_poll_us == 0 && opts.busy_poll_set);
	GOOD("-B 64", opts.budget == 64 && opts.budget_set);
	GOOD("--priority 6", opts.priority == 6);
	GOOD("--priority 2147483647", opts.priority == 2147483647);
	GOOD("--tos 255", opts.tos == 255);
	GOOD("--tos 0", opts.tos == 0);
	GOOD("--once", opts.once && opts.mode == MODE_REFLECT);
	GOOD("--json -", !strcmp(opts.json, "-"));
	GOOD("--analyze a.log", opts.mode == MODE_ANALYZE && !strcmp(opts.analyze[0], "a.log") && !opts.analyze[1]);
	GOOD("--analyze a.log b.log", opts.mode == MODE_ANALYZE && !strcmp(opts.analyze[1], "b.log"));
	GOOD("a.log --analyze b.log", opts.mode == MODE_ANALYZE && !strcmp(opts.analyze[0], "b.log") &&
					 !strcmp(opts.analyze[1], "a.log"));
	GOOD("--analyze a --top 3 -t 5", opts.top == 3 && opts.threshold_ns == 5000);
	GOOD("-i lo", !strcmp(opts.iface, "lo"));
	GOOD("-a h -H", !strcmp(opts.cmdline, "rant -a h -H"));
	GOOD("-l a --json b", !strcmp(opts.log, "a") && !strcmp(opts.json, "b"));
	/* defaults come back on every call: nothing leaks from the previous parse */
	GOOD("-a h", opts.threshold_ns == -1 && !opts.cont && !opts.log && opts.port == 12345 && opts.ts == TS_AUTO);

	{
		struct args a;
		char *out, *err;
		int r = parse_str("-h", &a, &out, &err);

		ok(r == 1 && strstr(out, "Usage:") && strstr(out, "--timestamps") && !*err, "opt -h: usage on stdout",
		   "r=%d stdout %zu bytes, stderr '%s'", r, strlen(out), err);
		free(out);
		free(err);
		r = parse_str("-V", &a, &out, &err);
		ok(r == 1 && !strncmp(out, "rant " RANT_VERSION "\nbuilt ", strlen(RANT_VERSION) + 12) &&
		   strstr(out, ", for ") && !*err, "opt -V: the version first, then how it was built, on stdout",
		   "r=%d stdout '%s'", r, out);
		free(out);
		free(err);
	}
}

/* The option table itself: every entry complete, no clashes, defaults in range. */

/* The config field of an entry as a number (the generic store's reverse). */
static double opt_field_value(const struct opt_def *o)
{
	const void *p = (const char *)&opts + o->off;

	switch (o->kind) {
	case OF_BOOL:
		return *(const bool *)p;
	case OF_UINT:
		return *(const unsigned *)p;
	case OF_INT:
		return *(const int *)p;
	case OF_U64:
		return (double)*(const uint64_t *)p;
	case OF_I64:
		return (double)*(const int64_t *)p;
	case OF_DBL:
		return *(const double *)p;
	default:
		return 0;
	}
}

/* The field kinds each type can store into. */
static bool opt_kind_fits(const struct opt_def *o)
{
	switch (o->type) {
	case OT_FLAG:
		return o->kind == OF_BOOL;
	case OT_UINT:
		return o->kind == OF_UINT || o->kind == OF_U64;
	case OT_NUM:
		return o->kind == OF_DBL;
	case OT_US:
		return o->kind == OF_I64 || o->kind == OF_U64;
	case OT_CHOICE:
		return o->kind == OF_UINT || o->kind == OF_INT;
	case OT_STR:
		return o->kind == OF_STR;
	case OT_CALL:
		return o->set != NULL;
	case OT_EXIT:
		return o->val == 'h' || o->val == 'V';
	}
	return false;
}

/* A default is off (-1 on a signed field), unset (0), or a value the option accepts. */
static bool opt_def_ok(const struct opt_def *o)
{
	double scale = o->type == OT_US ? 1000 : o->scale ? (double)o->scale : 1;
	double v = (double)o->def / scale;

	if (!o->def || (o->def == -1 && (o->kind == OF_INT || o->kind == OF_I64))) {
		return true;
	}
	return o->kind != OF_BOOL && v >= o->min && v <= o->max;
}

/* "(default N" in the help says the table's default, in the unit given. */
static bool opt_help_default_ok(const struct opt_def *o)
{
	const char *d = strstr(o->help, "default ");
	double scale = o->type == OT_US ? 1000 : o->scale ? (double)o->scale : 1;
	char want[40];

	if (!d || !isdigit((unsigned char)d[8])) {
		if (d && o->type == OT_CHOICE) {
			return !strncmp(d + 8, o->choices[o->def], strlen(o->choices[o->def]));
		}
		return true;
	}
	snprintf(want, sizeof(want), "%g", (double)o->def / scale);
	return !strncmp(d + 8, want, strlen(want)) && !isdigit((unsigned char)d[8 + strlen(want)]);
}

static void test_opt_entries(void)
{
	size_t i, j;
	int bad = 0, nchoice;
	char name[160];

	for (i = 0; i < NOPTS; i++) {
		const struct opt_def *o = &opt_table[i];
		bool takes = o->type != OT_FLAG && o->type != OT_EXIT;

		snprintf(name, sizeof(name), "opt table: --%s is complete", o->name);
		ok(o->name && *o->name && o->help && *o->help && o->val > 0 && o->val < O_MAX &&
		   (o->modes & M_ALL) && !(o->modes & ~M_ALL) && opt_kind_fits(o) &&
		   (!takes || o->type == OT_CALL || o->arg) && (takes || !o->arg) && o->min <= o->max,
		   name, "val %d type %d kind %d modes %#x arg %s", o->val, o->type, o->kind, o->modes,
		   o->arg ? o->arg : "-");
		for (j = i + 1; j < NOPTS; j++) {
			if (opt_table[j].val == o->val || !strcmp(opt_table[j].name, o->name)) {
				printf("# --%s and --%s share a letter or a name\n", o->name,
				       opt_table[j].name);
				bad++;
			}
		}
		snprintf(name, sizeof(name), "opt table: --%s default in range and as its help says",
			 o->name);
		ok(opt_def_ok(o) && opt_help_default_ok(o), name, "def %" PRId64 " range %g-%g",
		   o->def, o->min, o->max);
		if (o->type == OT_CHOICE) {
			for (nchoice = 0; o->choices[nchoice]; nchoice++) {
			}
			snprintf(name, sizeof(name), "opt table: --%s choices match its range", o->name);
			ok(nchoice == (int)o->max + 1 && o->min == 0, name, "%d choices, max %g", nchoice,
			   o->max);
		}
	}
	ok(!bad, "opt table: no two entries share a letter or a name",
	   "%d clashes", bad);
	/* cfg_defaults is the table's defaults */
	cfg_defaults();
	bad = 0;
	for (i = 0; i < NOPTS; i++) {
		const struct opt_def *o = &opt_table[i];

		if (o->kind != OF_NONE && o->kind != OF_STR && o->type != OT_NUM &&
		    opt_field_value(o) != (double)o->def) {
			printf("# --%s: cfg has %g, the table says %" PRId64 "\n", o->name,
			       opt_field_value(o), o->def);
			bad++;
		}
	}
	ok(!bad, "opt table: cfg_defaults sets every field to the table's default", "%d differ", bad);
}

/* The key file of the opt cases: this process's own (runs side by side). */
static const char *opt_key_path(void)
{
	static char path[64];

	if (!*path) {
		snprintf(path, sizeof(path), "/tmp/rant-unit-opt-%d.key", (int)getpid());
	}
	return path;
}

/* A value --NAME accepts, and the options it needs beside it. */
static const char *opt_sample(const struct opt_def *o, char *buf, size_t len, const char **with)
{
	static const struct { int val; const char *arg, *with; } odd[] = {
		{ 'i', "lo", "" }, { O_SIZE, "64", "" }, { O_INTERVAL, "5", "" },
		{ O_TRACE_INSTANCE, "x", "-T" }, { O_PRIORITY, "1", "" }, { O_TOS, "1", "" },
		{ 'C', "", "-t 1" }, { 'L', "1", "-l f" }, { O_LOG_FORMAT, "csv", "-l f" },
		{ O_LOG_RECORDS, "1", "-l f" }, { O_PTP_DOMAIN, "1", "--ptp-probe" },
		{ O_KEY_FILE, NULL, "" }, { O_SERIES_EVERY, "1", "--series s" },
		/* the schedule's options need a cycle, and the cycle a cadence it divides */
		{ O_TXTIME_DEADLINE, "", "--txtime 1" },
		{ O_BASE_TIME, "1", "--cycle 1000 --interval 1000000" },
		{ O_CYCLE, "1000", "--interval 1000000" },
		{ O_CLASS_OFFSET, "1", "--cycle 1000 --interval 1000000" },
	};
	size_t i;

	*with = "";
	for (i = 0; i < ARRAY_SIZE(odd); i++) {
		if (odd[i].val == o->val) {
			*with = odd[i].with;
			return odd[i].arg ? odd[i].arg : opt_key_path();
		}
	}
	if (o->type == OT_CHOICE) {
		return o->choices[0];
	}
	if (o->type == OT_UINT) {
		snprintf(buf, len, "%.0f", o->min);
		return buf;
	}
	return o->arg ? "1" : "";
}

/* Every option in every mode: accepted where its modes say, else the mode's refusal. */
static void test_opt_modes(void)
{
	static const char *const prefix[] = { "-a h", "", "--analyze x" };	/* enum mode */
	static const char *const refusal[] = {
		"only for reflect", "only for emit", "not used with --analyze",
	};
	int fd = open(opt_key_path(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	size_t i;
	int m;

	ok(fd >= 0 && write(fd, "0123456789abcdef0123", 20) == 20, "opt modes: a key file",
	   "%s", strerror(errno));
	if (fd >= 0) {
		close(fd);
	}
	for (i = 0; i < NOPTS; i++) {
		const struct opt_def *o = &opt_table[i];

		/* -a makes the mode, --analyze too; -2 is always refused, -h/-V end parsing */
		if (o->val == 'a' || o->val == O_ANALYZE || o->val == '2' || o->type == OT_EXIT) {
			continue;
		}
		for (m = MODE_EMIT; m <= MODE_ANALYZE; m++) {
			bool accepted = o->modes & (1u << m);
			char cmd[300], val[40], name[360], need[80];
			const char *with, *arg = opt_sample(o, val, sizeof(val), &with);
			struct args a;
			char *out, *err;
			int r;

			/* --ptp-domain needs --ptp-probe, which --analyze refuses */
			if (o->val == O_PTP_DOMAIN && m == MODE_ANALYZE) {
				continue;
			}
			/* --analyze refuses -l, -T and --ptp-probe before it could need them */
			if (m == MODE_ANALYZE && strcmp(with, "-t 1") && strcmp(with, "--series s")) {
				with = "";
			}
			/* an option the reflector refuses is refused before what it needs */
			if (m == MODE_REFLECT && !(o->modes & M_REFLECT)) {
				with = "";
			}
			snprintf(cmd, sizeof(cmd), "%s %s --%s %s", prefix[m], with, o->name, arg);
			snprintf(need, sizeof(need), "--%s: %s", o->name,
				 o->modes == M_ANALYZE && m != MODE_ANALYZE ? "only with --analyze" :
				 refusal[m]);
			r = parse_str(cmd, &a, &out, &err);
			snprintf(name, sizeof(name), "opt modes: '%s' %s", cmd,
				 accepted ? "accepted" : "refused");
			ok(accepted ? r == 0 : r == -1 && one_rant_line(err) && strstr(err, need), name,
			   "r=%d stderr '%s' (wanted '%s')", r, err, need);
			free(out);
			free(err);
		}
	}
	unlink(opt_key_path());
	reset_globals();
}

/* An option that takes a number (a list of them too). */
static bool opt_numeric(const struct opt_def *o)
{
	return o->type == OT_UINT || o->type == OT_NUM || o->type == OT_US ||
	       (o->type == OT_CALL && o->max > 0);
}

/* parse "PREFIX WITH --NAME 'VALUE'": accepted (r == 0), or refused with one line holding need */
static bool opt_value_case(const char *prefix, const char *with, const struct opt_def *o,
			   const char *val, const char *need, char *name, size_t len)
{
	char cmd[300];
	struct args a;
	char *out, *err;
	bool good;
	int r;

	snprintf(cmd, sizeof(cmd), "%s %s --%s '%s'", prefix, with, o->name, val);
	r = parse_str(cmd, &a, &out, &err);
	good = need ? r == -1 && one_rant_line(err) && strstr(err, need) && !*out : r == 0;
	snprintf(name, len, "opt values: '%s' %s%s", cmd, need ? "refused: " : "accepted",
		 need ? need : "");
	if (!good) {
		printf("# returned %d, stderr '%s'\n", r, err);
	}
	free(out);
	free(err);
	return good;
}

/*
 * Every option that takes a number, whatever parses it: its least and its
 * greatest value accepted, a step beyond either end refused as out of range,
 * and what is no number (or no whole one where it must be) refused, each
 * refusal one line naming the option and the value.
 */
static void test_opt_values(void)
{
	static const char *const junk[] = { "", "abc", "10x", "nan", "inf", "1e999", " 5", "5 " };
	int fd = open(opt_key_path(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	size_t i, j;

	if (fd >= 0) {
		ok(write(fd, "0123456789abcdef0123", 20) == 20, "opt values: a key file", "short write");
		close(fd);
	}
	for (i = 0; i < NOPTS; i++) {
		const struct opt_def *o = &opt_table[i];
		const char *with, *prefix = o->modes & M_EMIT ? "-a h" : "--analyze x";
		bool whole = o->type != OT_NUM && o->type != OT_US;
		char val[40], need[120], name[500], lo[40], hi[40];
		double step;

		if (!opt_numeric(o)) {
			continue;
		}
		(void)opt_sample(o, val, sizeof(val), &with);
		snprintf(lo, sizeof(lo), "%.15g", o->min);
		snprintf(hi, sizeof(hi), "%.15g", o->max);
		for (j = 0; j < 2; j++) {
			const struct opt_def *other = opt_find(o->val == 'b' ? 'o' : 'b');
			char pair[60];

			/* a bucket and a bound at either end: the other one as near as it goes */
			snprintf(pair, sizeof(pair), "-%c %.15g", other->val,
				 j ? fmin(o->max, other->max) : fmax(o->min, other->min));
			ok(opt_value_case(prefix, o->val == 'b' || o->val == 'o' ? pair : with, o,
					  j ? hi : lo, NULL, name, sizeof(name)), name, "see above");
		}
		step = whole ? 1 : o->min > 0 ? o->min / 2 : 0.001;
		snprintf(val, sizeof(val), "%.15g", o->max + step);
		snprintf(need, sizeof(need), "rant: --%s: '%s' is out of range", o->name, val);
		ok(opt_value_case(prefix, with, o, val, need, name, sizeof(name)), name, "see above");
		snprintf(val, sizeof(val), "%.15g", o->min - step);
		snprintf(need, sizeof(need), "rant: --%s: '%s' is out of range", o->name, val);
		ok(opt_value_case(prefix, with, o, val, need, name, sizeof(name)), name, "see above");
		for (j = 0; j < ARRAY_SIZE(junk); j++) {
			snprintf(need, sizeof(need), "rant: --%s: '%s' is not a", o->name, junk[j]);
			ok(opt_value_case(prefix, with, o, junk[j], need, name, sizeof(name)), name,
			   "see above");
		}
		if (whole) {
			snprintf(need, sizeof(need), "rant: --%s: '1.5' is not a whole number",
				 o->name);
			ok(opt_value_case(prefix, with, o, "1.5", need, name, sizeof(name)), name,
			   "see above");
		}
	}
	unlink(opt_key_path());
	reset_globals();
}

/* -------------------------------------------------------------- protocol */

static void test_proto(void)
{
	uint8_t buf[PROTO_HDR_LEN + 16];
	struct proto_msg m, d = { 0 };
	int r, len, bad;
	uint16_t f;

	memset(&m, 0, sizeof(m));
	m.type = PT_PONG;
	m.flags = PF_WARMUP | PF_BREACH | PF_SRV_HW | PF_T2W | PF_T2SW | PF_T3SW | PF_T3W | PF_MORE;
	m.session = 0xdeadbeef;
	m.idle_ms = 0x01020304;
	m.seq = 0x1122334455667788ULL;
	m.t2w = 1700000000123456789ULL;
	m.t2sw = 1700000000123456999ULL;
	m.t3sw = 1700000000123457111ULL;
	m.t3w = 0xfedcba9876543210ULL;
	m.t3w_seq = 0x8000000000000001ULL;
	memset(buf, 0xee, sizeof(buf));
	proto_encode(buf, &m);
	r = proto_decode(buf, PROTO_HDR_LEN, &d);
	ok(r == 0 && d.version == PROTO_VERSION && d.type == PT_PONG && d.flags == m.flags &&
	   d.session == m.session && d.idle_ms == m.idle_ms && d.seq == m.seq && d.t2w == m.t2w &&
	   d.t2sw == m.t2sw && d.t3sw == m.t3sw && d.t3w == m.t3w && d.t3w_seq == m.t3w_seq,
	   "proto: round trip of every field with every flag", "r=%d", r);
	ok(buf[PROTO_HDR_LEN] == 0xee, "proto: encode writes exactly PROTO_HDR_LEN bytes", "byte 64 = %#x",
	   buf[PROTO_HDR_LEN]);

	/* exact bytes: network byte order at the documented offsets */
	{
		static const uint8_t want[32] = {
			'R', 'A', 'N', 'T', 1, 2, 0, 0xff, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4,
			0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
			0x17, 0x97, 0x9c, 0xfe, 0x3d, 0x85, 0xcd, 0x15,
		};
		uint64_t t2 = 1700000000123456789ULL;
		int i, first_diff = -1;

		for (i = 0; i < 8; i++) {
			if (((t2 >> (56 - 8 * i)) & 0xff) != want[24 + i]) {
				first_diff = 100 + i;	/* the table itself is wrong */
			}
		}
		for (i = 0; i < 32 && first_diff < 0; i++) {
			if (buf[i] != want[i]) {
				first_diff = i;
			}
		}
		ok(first_diff < 0, "proto: header bytes (magic 'RANT' at 0, version, type, flags, session, idle, seq big-endian at 16, t2 at 24)",
		   "first difference at offset %d (got %#x)", first_diff, first_diff >= 0 && first_diff < 32 ? buf[first_diff] : 0);
		ok(buf[56] == 0x80 && buf[63] == 0x01 && buf[48] == 0xfe && buf[55] == 0x10,
		   "proto: t3 wire at 48 and its seq at 56, big-endian", "%02x..%02x %02x..%02x", buf[48], buf[55], buf[56], buf[63]);
	}

	/* each flag alone round-trips, and only flagged echo fields are carried */
	bad = 0;
	for (f = 1; f && f <= PF_MORE; f = (uint16_t)(f << 1)) {
		m.flags = f;
		memset(buf, 0, sizeof(buf));
		proto_encode(buf, &m);
		if (proto_decode(buf, PROTO_HDR_LEN, &d) || d.flags != f ||
		    d.t2w != (f == PF_T2W ? m.t2w : 0) || d.t2sw != (f == PF_T2SW ? m.t2sw : 0) ||
		    d.t3sw != (f == PF_T3SW ? m.t3sw : 0) || d.t3w != (f == PF_T3W ? m.t3w : 0) ||
		    d.t3w_seq != (f == PF_T3W ? m.t3w_seq : 0)) {
			bad = f;
		}
	}
	ok(!bad, "proto: each flag alone round-trips with only its echo field", "flag %#x", bad);
	m.flags = 0xffff;
	proto_encode(buf, &m);
	ok(!proto_decode(buf, PROTO_HDR_LEN, &d) && d.flags == 0xffff, "proto: all 16 flag bits survive", "flags %#x", d.flags);

	/* unflagged echo fields are zero on the wire and ignored on decode */
	m.flags = 0;
	proto_encode(buf, &m);
	for (len = 24, bad = -1; len < 64; len++) {
		if (buf[len]) {
			bad = len;
		}
	}
	ok(bad < 0, "proto: unflagged echo fields are encoded as zeros", "non-zero byte at %d", bad);
	memset(buf + 24, 0x5a, 40);
	r = proto_decode(buf, PROTO_HDR_LEN, &d);
	ok(r == 0 && !d.t2w && !d.t2sw && !d.t3sw && !d.t3w && !d.t3w_seq, "proto: junk in unflagged echo fields is ignored",
	   "r=%d t2w=%" PRIu64 " t3w=%" PRIu64, r, d.t2w, d.t3w);
	buf[7] = PF_T3W;
	r = proto_decode(buf, PROTO_HDR_LEN, &d);
	ok(r == 0 && !d.t2w && d.t3w == 0x5a5a5a5a5a5a5a5aULL && d.t3w_seq == 0x5a5a5a5a5a5a5a5aULL,
	   "proto: a flagged echo field is read, the others not", "t2w=%" PRIu64, d.t2w);
}

static void test_proto_malformed(void)
{
	uint8_t buf[PROTO_HDR_LEN + 16];
	struct proto_msg m, d = { 0 };
	char name[120];
	int r, t, len, bad;

	/* malformed */
	m.flags = 0;
	m.type = PT_PING;
	proto_encode(buf, &m);
	for (len = 0, bad = -1; len < PROTO_MIN_SIZE; len++) {
		uint8_t *exact = malloc((size_t)len + 1);	/* +1: malloc(0) may be NULL */

		memcpy(exact, buf, (size_t)len);
		memset(&d, 0x77, sizeof(d));
		if (proto_decode(exact, (size_t)len, &d) != PE_SHORT || d.seq || d.type) {
			bad = len;
		}
		free(exact);
	}
	ok(bad < 0, "proto: every length 0..23 is PE_SHORT (and the message is zeroed)", "length %d", bad);
	ok(proto_decode(buf, 65000, &d) == 0, "proto: a long datagram with a good header decodes", "failed");
	memcpy(buf, "TNAR", 4);
	ok(proto_decode(buf, PROTO_HDR_LEN, &d) == PE_MAGIC, "proto: wrong magic -> PE_MAGIC", "failed");
	proto_encode(buf, &m);
	buf[0] ^= 0x80;
	ok(proto_decode(buf, PROTO_HDR_LEN, &d) == PE_MAGIC, "proto: one flipped magic bit -> PE_MAGIC", "failed");
	for (t = 0; t < 256; t += (t == 2 ? 253 : 1)) {
		if (t == PROTO_VERSION) {
			continue;
		}
		proto_encode(buf, &m);
		buf[4] = (uint8_t)t;
		snprintf(name, sizeof(name), "proto: version %d -> PE_VERSION", t);
		ok(proto_decode(buf, PROTO_HDR_LEN, &d) == PE_VERSION, name, "failed");
	}
	for (t = 0, bad = -1; t < 256; t++) {
		bool known = t >= PT_PING && t <= PT_BUSY;

		proto_encode(buf, &m);
		buf[5] = (uint8_t)t;
		r = proto_decode(buf, PROTO_HDR_LEN, &d);
		if (known ? (r != 0 || d.type != t) : r != PE_TYPE) {
			bad = t;
		}
	}
	ok(bad < 0, "proto: types 1..5 accepted, 0 and 6..255 -> PE_TYPE", "type %d", bad);
	proto_encode(buf, &m);
	buf[5] = 0;
	ok(proto_decode(buf, PROTO_HDR_LEN, &d) == PE_TYPE, "proto: type 0 -> PE_TYPE", "failed");
	buf[5] = 6;
	ok(proto_decode(buf, PROTO_HDR_LEN, &d) == PE_TYPE, "proto: type 6 -> PE_TYPE", "failed");
}

/*
 * The pong's late T3_SW and the zero-padded FIN / BUSY go through the codec:
 * written where the datagram has room, decoded back, never a byte beyond it.
 */
static void test_proto_late(void)
{
	struct proto_msg m = { .type = PT_PONG, .session = 7, .seq = 9, .flags = PF_T2SW | PF_T3SW,
			       .t2sw = 100 }, d;
	uint8_t buf[PROTO_HDR_LEN + 16];
	size_t i;
	bool zero = true;

	memset(buf, 0xa5, sizeof(buf));
	proto_encode_len(buf, 40, &m);
	proto_put_t3sw(buf, 40, 200);
	ok(buf[40] == 0xa5 && get64(buf + 32) == 100, "proto: late T3_SW: no room in 40 bytes, none written",
	   "%02x", buf[40]);
	proto_encode_len(buf, PROTO_HDR_LEN, &m);
	proto_put_t3sw(buf, PROTO_HDR_LEN, 200);
	ok(proto_decode(buf, PROTO_HDR_LEN, &d) == 0 && d.t3sw == 200 && d.t2sw == 100 && d.seq == 9,
	   "proto: late T3_SW: decoded from a full header", "t3sw=%" PRIu64, d.t3sw);
	memset(buf, 0xa5, sizeof(buf));
	proto_encode_pad(buf, PROTO_HDR_LEN + 8, &m);
	for (i = PROTO_HDR_LEN; i < PROTO_HDR_LEN + 8; i++) {
		zero &= buf[i] == 0;
	}
	ok(zero && buf[PROTO_HDR_LEN + 8] == 0xa5 && proto_decode(buf, PROTO_HDR_LEN + 8, &d) == 0,
	   "proto: padded: the bytes after the header zero, none beyond", "%02x", buf[PROTO_HDR_LEN + 8]);
}

static void test_proto_random(void)
{
	uint8_t buf[PROTO_HDR_LEN + 16];
	struct proto_msg m = { 0 }, d;
	int t, bad;

	/* random round trips */
	for (t = 0, bad = -1; t < 2000; t++) {
		m.type = (uint8_t)rnd_range(1, 4);
		m.flags = (uint16_t)rnd();
		m.session = (uint32_t)rnd();
		m.idle_ms = (uint32_t)rnd();
		m.seq = rnd();
		m.t2w = rnd();
		m.t2sw = rnd();
		m.t3sw = rnd();
		m.t3w = rnd();
		m.t3w_seq = rnd();
		proto_encode(buf, &m);
		if (proto_decode(buf, PROTO_HDR_LEN, &d) || d.type != m.type || d.flags != m.flags ||
		    d.session != m.session || d.idle_ms != m.idle_ms || d.seq != m.seq ||
		    d.t2w != (m.flags & PF_T2W ? m.t2w : 0) || d.t3w_seq != (m.flags & PF_T3W ? m.t3w_seq : 0)) {
			bad = t;
		}
	}
	ok(bad < 0, "proto: 2000 random headers round-trip", "iteration %d", bad);
}

/* ------------------------------------------------------------------ cmsg */

struct cbuf {
	struct {
		char b[1024] __attribute__((aligned(8)));
	} u;
	struct msghdr msg;
	struct cmsghdr *last;
	size_t used;
};

static void cb_init(struct cbuf *c)
{
	memset(c, 0, sizeof(*c));
	c->msg.msg_control = c->u.b;
	c->msg.msg_controllen = sizeof(c->u.b);
}

/* Append one control message; len_override != 0 sets a (short) cmsg_len. */
static void cb_add(struct cbuf *c, int level, int type, const void *data, size_t len, size_t len_override)
{
	struct cmsghdr *cm;

	c->msg.msg_controllen = sizeof(c->u.b);
	cm = c->last ? CMSG_NXTHDR(&c->msg, c->last) : CMSG_FIRSTHDR(&c->msg);
	cm->cmsg_level = level;
	cm->cmsg_type = type;
	cm->cmsg_len = len_override ? len_override : CMSG_LEN(len);
	memcpy(CMSG_DATA(cm), data, len);
	c->last = cm;
	c->used = (size_t)((char *)cm - c->u.b) + CMSG_ALIGN(cm->cmsg_len);
	c->msg.msg_controllen = c->used;
}

static struct scm_timestamping mk_scm(time_t s0, long n0, time_t s2, long n2)
{
	struct scm_timestamping st;

	memset(&st, 0, sizeof(st));
	st.ts[0].tv_sec = s0;
	st.ts[0].tv_nsec = n0;
	st.ts[1].tv_sec = 42;	/* legacy, always ignored */
	st.ts[1].tv_nsec = 42;
	st.ts[2].tv_sec = s2;
	st.ts[2].tv_nsec = n2;
	return st;
}

static struct sock_extended_err mk_ee(uint32_t err, uint8_t origin, uint32_t info, uint32_t data)
{
	struct sock_extended_err ee;

	memset(&ee, 0, sizeof(ee));
	ee.ee_errno = err;
	ee.ee_origin = origin;
	ee.ee_info = info;
	ee.ee_data = data;
	return ee;
}

/*
 * The one-stamp datagram's short path (a session's socket, a client) reads
 * what the walk reads: the same stamps, zero, negative and partial ones
 * included, as when a second message after it makes the walk read them.
 */
static void test_cmsg_fast(void)
{
	static const long v[][4] = {
		{ 1700000000, 123456789, 1700000001, 7 }, { 1700000000, 5, 0, 0 }, { 0, 0, 1700000001, 7 },
		{ 0, 0, -1, 5 }, { -3, 1, 0, 0 }, { 0, 0, 0, 0 }, { 1, 999999999, 2, 0 },
	};
	unsigned i, same = 0;
	uint8_t tos = 1;

	for (i = 0; i < ARRAY_SIZE(v); i++) {
		struct scm_timestamping st = mk_scm(v[i][0], v[i][1], v[i][2], v[i][3]);
		struct ts_cmsg a, b;
		struct cbuf one, two;

		cb_init(&one);
		cb_add(&one, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
		cb_init(&two);
		cb_add(&two, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
		cb_add(&two, SOL_IP, IP_TOS, &tos, 1, 0);
		ts_parse(&one.msg, &a);
		ts_parse(&two.msg, &b);
		same += one.msg.msg_controllen == CMSG_SPACE(sizeof(st)) && two.msg.msg_controllen > one.msg.msg_controllen &&
			!memcmp(&a, &b, sizeof(a));
	}
	ok(same == ARRAY_SIZE(v), "cmsg: one stamp alone reads as it reads with a message after it",
	   "%u of %zu", same, ARRAY_SIZE(v));
}

static void test_cmsg(void)
{
	const uint64_t SW = 1700000000123456789ULL, HW = 1700000001000000007ULL;
	struct scm_timestamping st;
	struct ts_cmsg c;
	struct cbuf b;

	reset_globals();
	/* both stamps present */
	cb_init(&b);
	st = mk_scm(1700000000, 123456789, 1700000001, 7);
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
	ts_parse(&b.msg, &c);
	ok(c.have_ts && c.sw == SW && c.hw == HW && !c.have_err && !c.bad, "cmsg: ts[0] -> sw, ts[2] -> hw, ts[1] ignored",
	   "sw=%" PRIu64 " hw=%" PRIu64, c.sw, c.hw);
	run.ts.hw = true;
	ok(ts_wire(&c) == HW, "cmsg: ts.hw picks ts[2]", "%" PRIu64, ts_wire(&c));
	run.ts.hw = false;
	ok(ts_wire(&c) == SW, "cmsg: software picks ts[0]", "%" PRIu64, ts_wire(&c));

	/* software stamp only: hardware mode must not fall back to it */
	cb_init(&b);
	st = mk_scm(1700000000, 123456789, 0, 0);
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
	ts_parse(&b.msg, &c);
	run.ts.hw = true;
	ok(c.have_ts && c.hw == 0 && ts_wire(&c) == 0, "cmsg: hw mode with only ts[0] -> 0 (missing), no fallback",
	   "wire=%" PRIu64, ts_wire(&c));
	run.ts.hw = false;
	ok(ts_wire(&c) == SW, "cmsg: sw mode with only ts[0] -> ts[0]", "wire=%" PRIu64, ts_wire(&c));

	/* hardware stamp only */
	cb_init(&b);
	st = mk_scm(0, 0, 1700000001, 7);
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
	ts_parse(&b.msg, &c);
	run.ts.hw = false;
	ok(c.sw == 0 && ts_wire(&c) == 0, "cmsg: sw mode with only ts[2] -> 0 (missing)", "wire=%" PRIu64, ts_wire(&c));
	run.ts.hw = true;
	ok(ts_wire(&c) == HW, "cmsg: hw mode with only ts[2] -> ts[2]", "wire=%" PRIu64, ts_wire(&c));

	/* zero and negative stamps are missing */
	cb_init(&b);
	st = mk_scm(0, 0, -1, 5);
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
	ts_parse(&b.msg, &c);
	ok(c.have_ts && c.sw == 0 && c.hw == 0, "cmsg: zero / negative timespecs -> 0 (missing)", "sw=%" PRIu64 " hw=%" PRIu64,
	   c.sw, c.hw);
	cb_init(&b);
	st = mk_scm(0, 1, 0, 999999999);
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
	ts_parse(&b.msg, &c);
	ok(c.sw == 1 && c.hw == 999999999, "cmsg: stamps below one second are kept", "sw=%" PRIu64 " hw=%" PRIu64, c.sw, c.hw);

	/* no control data at all, unrelated messages */
	cb_init(&b);
	b.msg.msg_controllen = 0;
	ts_parse(&b.msg, &c);
	ok(!c.have_ts && !c.have_err && !c.bad && !c.sw && !c.hw, "cmsg: no control data -> nothing", "failed");
	cb_init(&b);
	{
		int ttl = 64;
		struct timespec tsn = { 1, 2 };

		cb_add(&b, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl), 0);
		cb_add(&b, SOL_SOCKET, SO_TIMESTAMPNS, &tsn, sizeof(tsn), 0);
	}
	ts_parse(&b.msg, &c);
	ok(!c.have_ts && !c.have_err && !c.bad, "cmsg: unrelated control messages are skipped", "failed");
	if (sizeof(time_t) == 8) {
		cb_init(&b);
		st = mk_scm(1700000000, 123456789, 0, 0);
		cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING_NEW, &st, sizeof(st), 0);
		ts_parse(&b.msg, &c);
		ok(c.have_ts && c.sw == SW, "cmsg: SO_TIMESTAMPING_NEW is read too", "sw=%" PRIu64, c.sw);
	}
}

static void test_cmsg_errqueue(void)
{
	const uint64_t SW = 1700000000123456789ULL, HW = 1700000001000000007ULL;
	struct scm_timestamping st;
	struct sock_extended_err ee;
	struct ts_cmsg c;
	struct cbuf b;
	uint32_t key;
	uint64_t wire;
	bool r;

	/* error queue: TX completion stamps (IPv4 and IPv6) */
	cb_init(&b);
	st = mk_scm(1700000000, 123456789, 1700000001, 7);
	ee = mk_ee(ENOMSG, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SND, 4242);
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
	cb_add(&b, SOL_IP, IP_RECVERR, &ee, sizeof(ee), 0);
	ts_parse(&b.msg, &c);
	run.ts.hw = false;
	key = 0;
	wire = 0;
	r = ts_tx_stamp(&c, &key, &wire);
	ok(r && key == 4242 && wire == SW, "cmsg: IP_RECVERR TX stamp (sw) -> key and ts[0]", "r=%d key=%u wire=%" PRIu64, r,
	   key, wire);
	run.ts.hw = true;
	r = ts_tx_stamp(&c, &key, &wire);
	ok(r && key == 4242 && wire == HW, "cmsg: IP_RECVERR TX stamp (hw) -> key and ts[2]", "r=%d wire=%" PRIu64, r, wire);

	cb_init(&b);
	ee = mk_ee(ENOMSG, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SND, 0xffffffffu);
	cb_add(&b, SOL_IPV6, IPV6_RECVERR, &ee, sizeof(ee), 0);	/* error first this time */
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
	ts_parse(&b.msg, &c);
	run.ts.hw = false;
	r = ts_tx_stamp(&c, &key, &wire);
	ok(r && key == 0xffffffffu && wire == SW, "cmsg: IPV6_RECVERR TX stamp, error cmsg first", "r=%d key=%u", r, key);

	/* hw mode, stamp only in ts[0]: the key is known, the wire stamp missing */
	cb_init(&b);
	st = mk_scm(1700000000, 123456789, 0, 0);
	ee = mk_ee(ENOMSG, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SND, 9);
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
	cb_add(&b, SOL_IP, IP_RECVERR, &ee, sizeof(ee), 0);
	ts_parse(&b.msg, &c);
	run.ts.hw = true;
	wire = 1;
	r = ts_tx_stamp(&c, &key, &wire);
	ok(!r && wire == 1, "cmsg: hw mode, ts[0] only -> not the wire stamp (OPT_TX_SWHW's kernel stamp)",
	   "r=%d wire=%" PRIu64, r, wire);
	key = 0;
	r = ts_tx_kernel(&c, &key, &wire);
	ok(r && key == 9 && wire == SW, "cmsg: hw mode, ts[0] only -> the kernel's TX stamp of key 9", "r=%d key=%u wire=%" PRIu64,
	   r, key, wire);
	run.ts.hw = false;
	ok(!ts_tx_kernel(&c, &key, &wire), "cmsg: software mode has no separate kernel TX stamp", "failed");
	run.ts.hw = true;

	{
		static const struct {
			const char *name;
			uint32_t err;
			uint8_t origin;
			uint32_t info;
		} badee[] = {
			{ "cmsg: wrong origin (LOCAL) -> no TX stamp", ENOMSG, SO_EE_ORIGIN_LOCAL, SCM_TSTAMP_SND },
			{ "cmsg: wrong origin (ICMP) -> no TX stamp", ENOMSG, SO_EE_ORIGIN_ICMP, SCM_TSTAMP_SND },
			{ "cmsg: SCM_TSTAMP_SCHED -> no TX stamp", ENOMSG, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SCHED },
			{ "cmsg: SCM_TSTAMP_ACK -> no TX stamp", ENOMSG, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_ACK },
			{ "cmsg: ee_errno EHOSTUNREACH -> no TX stamp", EHOSTUNREACH, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SND },
			{ "cmsg: ee_errno 0 -> no TX stamp", 0, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SND },
		};
		size_t i;

		st = mk_scm(1700000000, 123456789, 1700000001, 7);
		for (i = 0; i < ARRAY_SIZE(badee); i++) {
			cb_init(&b);
			ee = mk_ee(badee[i].err, badee[i].origin, badee[i].info, 1);
			cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
			cb_add(&b, SOL_IP, IP_RECVERR, &ee, sizeof(ee), 0);
			ts_parse(&b.msg, &c);
			key = 77;
			wire = 77;
			r = ts_tx_stamp(&c, &key, &wire);
			ok(!r && c.have_err && key == 77 && wire == 77, badee[i].name, "r=%d", r);
		}
	}
	cb_init(&b);
	ee = mk_ee(ENOMSG, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SND, 1);
	cb_add(&b, SOL_IP, IP_RECVERR, &ee, sizeof(ee), 0);
	ts_parse(&b.msg, &c);
	ok(!ts_tx_stamp(&c, &key, &wire), "cmsg: error without a timestamp cmsg -> no TX stamp", "failed");
	cb_init(&b);
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
	ts_parse(&b.msg, &c);
	ok(!ts_tx_stamp(&c, &key, &wire), "cmsg: timestamp without an error cmsg -> no TX stamp (a received packet)", "failed");
}

static void test_cmsg_truncated(void)
{
	struct scm_timestamping st;
	struct sock_extended_err ee;
	struct ts_cmsg c;
	struct cbuf b;
	uint32_t key;
	uint64_t wire;

	/* truncated control messages (MSG_CTRUNC): counted, never read */
	st = mk_scm(1700000000, 123456789, 1700000001, 7);
	{
		size_t short_len = CMSG_LEN(sizeof(st) - 8);
		struct msghdr msg;
		struct cmsghdr *cm;
		char *exact = malloc(short_len);

		memset(exact, 0xab, short_len);
		memset(&msg, 0, sizeof(msg));
		msg.msg_control = exact;
		msg.msg_controllen = short_len;
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SO_TIMESTAMPING;
		cm->cmsg_len = short_len;
		ts_parse(&msg, &c);
		ok(c.bad == 1 && !c.have_ts && !c.sw && !c.hw, "cmsg: truncated SO_TIMESTAMPING (exact-size buffer) -> bad, not read",
		   "bad=%u have_ts=%d sw=%" PRIu64, c.bad, c.have_ts, c.sw);
		free(exact);
	}
	cb_init(&b);
	ee = mk_ee(ENOMSG, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SND, 1);
	cb_add(&b, SOL_IP, IP_RECVERR, &ee, sizeof(ee) - 1, CMSG_LEN(sizeof(ee) - 1));
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
	ts_parse(&b.msg, &c);
	ok(c.bad == 1 && !c.have_err && c.have_ts && !ts_tx_stamp(&c, &key, &wire),
	   "cmsg: truncated sock_extended_err -> bad, not read, no TX stamp", "bad=%u have_err=%d", c.bad, c.have_err);
	cb_init(&b);
	cb_add(&b, SOL_IPV6, IPV6_RECVERR, &ee, 4, CMSG_LEN(4));
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, 16, CMSG_LEN(16));
	ts_parse(&b.msg, &c);
	ok(c.bad == 2 && !c.have_err && !c.have_ts, "cmsg: two truncated messages -> bad == 2", "bad=%u", c.bad);
}

/* -------------------------------------------------------- hardware path */

/* A NIC, as ETHTOOL_GET_TS_INFO and SIOC[GS]HWTSTAMP show it. */
static struct fake_nic {
	int ethtool_err;		/* -errno for SIOCETHTOOL, 0 = answer */
	struct ethtool_ts_info info;
	int g_err;			/* -errno for SIOCGHWTSTAMP */
	struct hwtstamp_config g_cfg;	/* what SIOCGHWTSTAMP reports */
	int s_err;			/* -errno for every SIOCSHWTSTAMP (EPERM) */
	uint32_t s_accept;		/* filters it applies (bit per filter) */
	int s_refuse_err;		/* -errno for the others (ERANGE) */
	int s_writeback;		/* >= 0: filter it writes back instead */
	int bond;			/* a bond: flags it needs on SIOCSHWTSTAMP, shows on SIOCGHWTSTAMP */
	/* what it saw */
	int n_ethtool, n_g, n_s, n_other;
	int s_req[16];
	struct hwtstamp_config last_s;
	char last_name[IFNAMSIZ];
} nic;

static int fake_ioctl(int fd, unsigned long req, void *arg)
{
	struct ifreq *ifr = arg;

	(void)fd;
	snprintf(nic.last_name, sizeof(nic.last_name), "%s", ifr->ifr_name);
	if (req == SIOCETHTOOL) {
		struct ethtool_ts_info *info = (void *)ifr->ifr_data;

		nic.n_ethtool++;
		if (info->cmd != ETHTOOL_GET_TS_INFO) {
			return -EINVAL;
		}
		if (nic.ethtool_err) {
			return nic.ethtool_err;
		}
		*info = nic.info;
		info->cmd = ETHTOOL_GET_TS_INFO;
		return 0;
	}
	if (req == SIOCGHWTSTAMP) {
		nic.n_g++;
		if (nic.g_err) {
			return nic.g_err;
		}
		memcpy(ifr->ifr_data, &nic.g_cfg, sizeof(nic.g_cfg));
		((struct hwtstamp_config *)ifr->ifr_data)->flags |= nic.bond;
		return 0;
	}
	if (req == SIOCSHWTSTAMP) {
		struct hwtstamp_config *hc = (void *)ifr->ifr_data;

		if (nic.n_s < 16) {
			nic.s_req[nic.n_s] = hc->rx_filter;
		}
		nic.n_s++;
		nic.last_s = *hc;
		if (nic.s_err) {
			return nic.s_err;
		}
		if ((hc->flags & nic.bond) != nic.bond) {
			return -EOPNOTSUPP;	/* bond_eth_ioctl: the flag or nothing */
		}
		if (!nic.bond && hc->flags) {
			return -EINVAL;		/* a NIC driver: flags are reserved */
		}
		if (hc->rx_filter < 0 || hc->rx_filter >= 32 || !(nic.s_accept & (1u << hc->rx_filter))) {
			return nic.s_refuse_err;
		}
		if (nic.s_writeback >= 0) {
			hc->rx_filter = nic.s_writeback;
		}
		nic.g_cfg = *hc;
		return 0;
	}
	nic.n_other++;
	return -ENOTTY;
}

#define HW_CAPS (SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RX_HARDWARE | SOF_TIMESTAMPING_RAW_HARDWARE | \
		 SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE)
#define SW_CAPS (SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE)
#define BIT(x) (1u << (x))

/* A capable NIC that applies every filter, currently off. */
static void nic_full(void)
{
	memset(&nic, 0, sizeof(nic));
	nic.info.cmd = ETHTOOL_GET_TS_INFO;
	nic.info.so_timestamping = HW_CAPS;
	nic.info.phc_index = 3;
	nic.info.tx_types = BIT(HWTSTAMP_TX_OFF) | BIT(HWTSTAMP_TX_ON);
	nic.info.rx_filters = BIT(HWTSTAMP_FILTER_NONE) | BIT(HWTSTAMP_FILTER_ALL) | BIT(HWTSTAMP_FILTER_PTP_V2_EVENT);
	nic.g_cfg.tx_type = HWTSTAMP_TX_OFF;
	nic.g_cfg.rx_filter = HWTSTAMP_FILTER_NONE;
	nic.s_accept = 0xffffffffu;
	nic.s_refuse_err = -ERANGE;
	nic.s_writeback = -1;
}

static int hw_setup(const char *ifname, enum ts_mode mode, char **err)
{
	struct capture ce;
	int r;

	memset(&run.ts, 0, sizeof(run.ts));
	kops.ioctl = fake_ioctl;
	cap_start(&ce, 2);
	r = ts_setup(100, ifname, mode);
	*err = cap_stop(&ce);
	return r;
}

/* reset_globals puts back every kernel seam a case replaced, not some of them. */
static void test_kops_restore(void)
{
	kops.ioctl = fake_ioctl;
	kops.kernel = NULL;
	kops.phc_open = NULL;
	kops.phc_ioctl = fake_ioctl;
	kops.sendmsg = NULL;
	kops.clock = NULL;
	kops.rdpmc = NULL;
	kops.pmc_open = NULL;
	kops.sysfs_net = kops.proc_root = kops.pmc_devices = kops.pmc_paranoid = "/nonexistent";
	reset_globals();
	ok(kops.ioctl == ts_ioctl_sys && kops.kernel == ts_kernel_uname &&
	   kops.phc_open == phc_open_sys && kops.phc_ioctl == ts_ioctl_sys &&
	   kops.sendmsg == sys_sendmsg && kops.clock == now_ns && kops.rdpmc == pmc_rdpmc_hw &&
	   kops.pmc_open == pmc_open_sys && !strcmp(kops.sysfs_net, "/sys/class/net") &&
	   !strcmp(kops.proc_root, "/proc") && !strcmp(kops.pmc_devices, "/sys/bus/event_source/devices") &&
	   !strcmp(kops.pmc_paranoid, "/proc/sys/kernel/perf_event_paranoid"),
	   "kops: reset_globals restores the whole kernel interface", "-");
}

static void test_hw(void)
{
	char *err;
	int r;

	reset_globals();

	/* (a) full hardware, FILTER_ALL accepted */
	nic_full();
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && run.ts.hw && run.ts.rx_filter == HWTSTAMP_FILTER_ALL && run.ts.restore && run.ts.phc_index == 3 && !*err,
	   "hw (a) full caps, ALL accepted: hardware, filter ALL, restore", "r=%d hw=%d filter=%d restore=%d err='%s'", r,
	   run.ts.hw, run.ts.rx_filter, run.ts.restore, err);
	ok(nic.n_s == 1 && nic.s_req[0] == HWTSTAMP_FILTER_ALL && nic.last_s.tx_type == HWTSTAMP_TX_ON &&
	   !strcmp(nic.last_name, "eth0"), "hw (a) one SIOCSHWTSTAMP: TX_ON + ALL on eth0", "n_s=%d req=%d", nic.n_s,
	   nic.s_req[0]);
	ok(strstr(run.ts.note, "hardware") && strstr(run.ts.note, "ptp3"), "hw (a) note names hardware and the PHC", "'%s'", run.ts.note);
	free(err);
	/* ts_restore sends back what SIOCGHWTSTAMP said before */
	nic.n_s = 0;
	ts_restore(-1);
	ok(nic.n_s == 0 && run.ts.restore, "hw restore: fd < 0 does nothing", "n_s=%d", nic.n_s);
	ts_restore(100);
	ok(nic.n_s == 1 && nic.last_s.tx_type == HWTSTAMP_TX_OFF && nic.last_s.rx_filter == HWTSTAMP_FILTER_NONE &&
	   !strcmp(nic.last_name, "eth0") && !run.ts.restore, "hw restore: the saved config (TX_OFF, NONE) goes back to eth0",
	   "n_s=%d tx=%d rx=%d name=%s", nic.n_s, nic.last_s.tx_type, nic.last_s.rx_filter, nic.last_name);
	ts_restore(100);
	ok(nic.n_s == 1, "hw restore: only once", "n_s=%d", nic.n_s);

	/* device configured by someone else (ptp4l: PTP_V2_EVENT): restored to that */
	nic_full();
	nic.g_cfg.tx_type = HWTSTAMP_TX_ON;
	nic.g_cfg.rx_filter = HWTSTAMP_FILTER_PTP_V2_EVENT;
	r = hw_setup("eth0", TS_HW, &err);
	free(err);
	nic.n_s = 0;
	ts_restore(100);
	ok(r == 0 && run.ts.rx_filter == HWTSTAMP_FILTER_ALL && nic.n_s == 1 && nic.last_s.tx_type == HWTSTAMP_TX_ON &&
	   nic.last_s.rx_filter == HWTSTAMP_FILTER_PTP_V2_EVENT, "hw restore: a PTP config found at start is put back",
	   "r=%d rx=%d", r, nic.last_s.rx_filter);
}

static void test_hw_all_refused(void)
{
	char *err;
	int r;

	/* (b) ALL refused with ERANGE, PTP_V2_EVENT applied */
	nic_full();
	nic.s_accept = BIT(HWTSTAMP_FILTER_PTP_V2_EVENT);
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && run.ts.hw && run.ts.rx_filter == HWTSTAMP_FILTER_PTP_V2_EVENT && run.ts.restore,
	   "hw (b) ALL refused, PTP_V2_EVENT applied: hardware with rx_filter PTP_V2_EVENT", "r=%d hw=%d filter=%d", r,
	   run.ts.hw, run.ts.rx_filter);
	ok(one_rant_line(err) && strstr(err, "warning") && strstr(err, "PTP_V2_EVENT") && strstr(err, "eth0"),
	   "hw (b) one warning line naming the filter", "'%s'", err);
	ok(nic.n_s == 2 && nic.s_req[0] == HWTSTAMP_FILTER_ALL && nic.s_req[1] == HWTSTAMP_FILTER_PTP_V2_EVENT,
	   "hw (b) asked ALL first, then PTP_V2_EVENT", "n_s=%d", nic.n_s);
	free(err);

	/* capabilities without ALL: ALL is not even asked */
	nic_full();
	nic.info.rx_filters = BIT(HWTSTAMP_FILTER_NONE) | BIT(HWTSTAMP_FILTER_PTP_V2_L4_EVENT);
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && run.ts.hw && run.ts.rx_filter == HWTSTAMP_FILTER_PTP_V2_L4_EVENT && nic.n_s == 1 &&
	   nic.s_req[0] == HWTSTAMP_FILTER_PTP_V2_L4_EVENT, "hw: rx_filters without ALL -> only the advertised PTP filter is asked",
	   "r=%d n_s=%d req0=%d filter=%d", r, nic.n_s, nic.s_req[0], run.ts.rx_filter);
	free(err);

	/* (c) driver upgrades a PTP request to ALL in its answer */
	nic_full();
	nic.s_accept = BIT(HWTSTAMP_FILTER_PTP_V2_EVENT);
	nic.s_writeback = HWTSTAMP_FILTER_ALL;
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && run.ts.hw && run.ts.rx_filter == HWTSTAMP_FILTER_ALL && !*err,
	   "hw (c) PTP request written back as ALL: reported ALL, no warning", "r=%d filter=%d err='%s'", r, run.ts.rx_filter, err);
	free(err);
	nic_full();
	nic.s_writeback = HWTSTAMP_FILTER_SOME;
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && run.ts.hw && run.ts.rx_filter == HWTSTAMP_FILTER_SOME && one_rant_line(err),
	   "hw (c) driver writes back SOME: reported as SOME, with a warning", "r=%d filter=%d err='%s'", r, run.ts.rx_filter, err);
	free(err);
	/* a driver answering success but filter NONE has not enabled anything */
	nic_full();
	nic.s_writeback = HWTSTAMP_FILTER_NONE;
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && !run.ts.hw && !run.ts.restore, "hw: success with filter NONE written back -> software (auto)",
	   "r=%d hw=%d restore=%d", r, run.ts.hw, run.ts.restore);
	free(err);
	r = hw_setup("eth0", TS_HW, &err);
	ok(r == -1 && one_rant_line(err) && strstr(err, "--timestamps"), "hw: success with filter NONE written back -> error (hw)",
	   "r=%d err='%s'", r, err);
	free(err);
}

static void test_hw_sw_only(void)
{
	char *err;
	int r;

	/* (d) software-only device */
	nic_full();
	nic.info.so_timestamping = SW_CAPS;
	nic.info.phc_index = -1;
	nic.info.tx_types = 0;
	nic.info.rx_filters = 0;
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && !run.ts.hw && nic.n_s == 0 && !*err && strstr(run.ts.note, "software"),
	   "hw (d) software-only device, auto -> software, ret 0, silent", "r=%d hw=%d n_s=%d err='%s'", r, run.ts.hw, nic.n_s, err);
	free(err);
	r = hw_setup("eth0", TS_HW, &err);
	ok(r == -1 && !run.ts.hw && one_rant_line(err) && strstr(err, "--timestamps") && strstr(err, "eth0") && nic.n_s == 0,
	   "hw (d) software-only device, hw -> -1 with one line", "r=%d err='%s'", r, err);
	free(err);
	/* hardware flags but no PHC, or no TX_ON */
	nic_full();
	nic.info.phc_index = -1;
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && !run.ts.hw && nic.n_s == 0, "hw: hardware flags but phc_index -1 -> software", "r=%d hw=%d", r, run.ts.hw);
	free(err);
	nic_full();
	nic.info.tx_types = BIT(HWTSTAMP_TX_OFF);
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && !run.ts.hw && nic.n_s == 0, "hw: no HWTSTAMP_TX_ON in tx_types -> software", "r=%d hw=%d", r, run.ts.hw);
	free(err);
	nic_full();
	nic.info.so_timestamping = HW_CAPS & ~SOF_TIMESTAMPING_RAW_HARDWARE;
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && !run.ts.hw, "hw: no RAW_HARDWARE -> software", "r=%d hw=%d", r, run.ts.hw);
	free(err);
}

static void test_hw_eperm(void)
{
	char *err;
	int r;

	/* (e) SIOCSHWTSTAMP refused with EPERM (not root) */
	nic_full();
	nic.s_err = -EPERM;
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && !run.ts.hw && !run.ts.restore && !*err && nic.n_s == 1, "hw (e) EPERM, auto -> software fallback, asked once",
	   "r=%d hw=%d n_s=%d err='%s'", r, run.ts.hw, nic.n_s, err);
	free(err);
	r = hw_setup("eth0", TS_HW, &err);
	ok(r == -1 && !run.ts.hw && one_rant_line(err) && strstr(err, "--timestamps") && strstr(err, "root"),
	   "hw (e) EPERM, hw -> -1 with one line saying it needs root", "r=%d err='%s'", r, err);
	free(err);
	nic_full();
	nic.s_err = -EACCES;
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && !run.ts.hw && nic.n_s == 1, "hw: EACCES, auto -> software, asked once", "r=%d n_s=%d", r, nic.n_s);
	free(err);
	nic_full();
	nic.s_accept = 0;
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && !run.ts.hw && !run.ts.restore && nic.n_s == 2, "hw: every filter refused (ERANGE), auto -> software",
	   "r=%d hw=%d n_s=%d", r, run.ts.hw, nic.n_s);
	free(err);
}

static void test_hw_no_tsinfo(void)
{
	char *err;
	int r;

	/* (f) ETHTOOL_GET_TS_INFO not supported */
	nic_full();
	nic.ethtool_err = -EOPNOTSUPP;
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && !run.ts.hw && nic.n_s == 0 && nic.n_g == 0 && !*err, "hw (f) ethtool EOPNOTSUPP, auto -> software",
	   "r=%d hw=%d", r, run.ts.hw);
	free(err);
	r = hw_setup("eth0", TS_HW, &err);
	ok(r == -1 && one_rant_line(err) && strstr(err, "--timestamps"), "hw (f) ethtool EOPNOTSUPP, hw -> -1 with one line",
	   "r=%d err='%s'", r, err);
	free(err);

	/* (g) already TX_ON + ALL: change nothing */
	nic_full();
	nic.g_cfg.tx_type = HWTSTAMP_TX_ON;
	nic.g_cfg.rx_filter = HWTSTAMP_FILTER_ALL;
	r = hw_setup("eth0", TS_HW, &err);
	ok(r == 0 && run.ts.hw && run.ts.rx_filter == HWTSTAMP_FILTER_ALL && !run.ts.restore && nic.n_s == 0 && !*err,
	   "hw (g) already TX_ON + ALL: hardware, no SIOCSHWTSTAMP, restore false", "r=%d hw=%d n_s=%d restore=%d", r, run.ts.hw,
	   nic.n_s, run.ts.restore);
	free(err);
	nic.n_s = 0;
	ts_restore(100);
	ok(nic.n_s == 0, "hw (g) ts_restore then changes nothing", "n_s=%d", nic.n_s);
	/* SIOCGHWTSTAMP unsupported (old driver): still configured */
	nic_full();
	nic.g_err = -EOPNOTSUPP;
	r = hw_setup("eth0", TS_AUTO, &err);
	ok(r == 0 && run.ts.hw && run.ts.rx_filter == HWTSTAMP_FILTER_ALL && !run.ts.restore && one_rant_line(err) &&
	   strstr(err, "SIOCGHWTSTAMP"), "hw: SIOCGHWTSTAMP unsupported -> configured, nothing written at exit, said so",
	   "r=%d hw=%d restore=%d err='%s'", r, run.ts.hw, run.ts.restore, err);
	nic.n_s = 0;
	ts_restore(100);
	ok(nic.n_s == 0, "hw: config not read at start -> ts_restore writes nothing", "n_s=%d", nic.n_s);
	free(err);
}

static void test_hw_no_iface(void)
{
	char *err;
	int r;

	/* (h) no interface */
	nic_full();
	r = hw_setup(NULL, TS_HW, &err);
	ok(r == -1 && one_rant_line(err) && strstr(err, "--timestamps") && nic.n_ethtool + nic.n_g + nic.n_s == 0,
	   "hw (h) no -i with hw -> -1, one line, no ioctl", "r=%d err='%s'", r, err);
	free(err);
	r = hw_setup(NULL, TS_AUTO, &err);
	ok(r == 0 && !run.ts.hw && !*err && nic.n_ethtool == 0, "hw (h) no -i with auto -> software", "r=%d", r);
	free(err);

	/* (i) --timestamps sw never asks the device */
	nic_full();
	r = hw_setup("eth0", TS_SW, &err);
	ok(r == 0 && !run.ts.hw && nic.n_ethtool + nic.n_g + nic.n_s + nic.n_other == 0 && !*err,
	   "hw (i) --timestamps sw: software, no ioctl at all", "r=%d calls=%d", r, nic.n_ethtool + nic.n_g + nic.n_s);
	free(err);

	/* stamp labels follow the verified source */
	{
		char b1[16], b2[16], b3[16];

		ok(!strcmp(stamp_label(T1W, true, b1, sizeof(b1)), "T1_HW") &&
		   !strcmp(stamp_label(T4W, false, b2, sizeof(b2)), "T4_KSW") &&
		   !strcmp(stamp_label(T2SW, true, b3, sizeof(b3)), "T2_SW"), "labels: T1_HW, T4_KSW, T2_SW",
		   "%s %s %s", b1, b2, b3);
	}
	{
		const int both = SOF_TIMESTAMPING_RAW_HARDWARE | SOF_TIMESTAMPING_TX_HARDWARE | SOF_TIMESTAMPING_RX_HARDWARE |
				 SOF_TIMESTAMPING_SOFTWARE | SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_RX_SOFTWARE |
				 SOF_TIMESTAMPING_OPT_TX_SWHW;

		ok((ts_sockopt_flags(true) & both) == both && ts_sockopt_flags(false) & SOF_TIMESTAMPING_SOFTWARE &&
		   !(ts_sockopt_flags(false) & (SOF_TIMESTAMPING_RAW_HARDWARE | SOF_TIMESTAMPING_OPT_TX_SWHW)) &&
		   ts_sockopt_flags(false) & SOF_TIMESTAMPING_OPT_ID,
		   "socket flags: hardware asks NIC and kernel stamps (OPT_TX_SWHW), software the kernel's only, OPT_ID always",
		   "flags=%#x", ts_sockopt_flags(true));
	}
	reset_globals();
}

/* ------------------------------------------------------------ statistics */

static const uint64_t pct_milli[NPCT] = { 50000, 90000, 95000, 99000, 99900, 99990, 99999 };

/* nearest rank, in exact integer arithmetic */
static uint64_t true_rank(int k, uint64_t n)
{
	uint64_t r = (uint64_t)(((unsigned __int128)pct_milli[k] * n + 99999) / 100000);

	return r < 1 ? 1 : r;
}

struct hres {
	char pct[256], minmax[256], moments[256], mono[256];
	bool approx, full;
	double maxrel;		/* the largest |reported - true| / |true| of the percentiles outside the bound */
};

/*
 * Fill a histogram with v[] (seq = 1000 + index), compare with a sort.
 * The exact store is allocated with exactly out_cap entries (plus a guard
 * value behind it that a read past the end would return).  Every
 * percentile: below the bound the top of the true value's bucket; outside,
 * exact while the store holds every outlier of that side, else within the
 * error it reports (percentiles_error_ns), which is within 0.1 %.
 */
static void hist_verify(const int64_t *v, size_t n, uint64_t bucket, uint64_t bound, uint64_t out_cap, struct hres *res)
{
	const int64_t GUARD = INT64_MIN + 12345;
	struct hist h;
	uint32_t nb = (uint32_t)((bound + bucket - 1) / bucket);
	uint64_t *buckets = calloc(nb, sizeof(*buckets)), *lh = calloc(hist_lh_len(bound), sizeof(*lh));
	int64_t *out = malloc((out_cap + 1) * sizeof(*out));
	int64_t *s = malloc((n ? n : 1) * sizeof(*s));
	int64_t rep[NPCT], mn = 0, mx = 0;
	uint64_t mn_seq = 0, mx_seq = 0, stored_lo = 0;
	double dsum = 0, var = 0, md;
	bool full_lo, full_hi;
	size_t i;
	int k;

	memset(res, 0, sizeof(*res));
	out[out_cap] = GUARD;
	hist_init(&h, bucket, bound, buckets, out, out_cap, lh);
	for (i = 0; i < n; i++) {
		hist_add(&h, v[i], 1000 + i);
		s[i] = v[i];
		if (!i || v[i] < mn) {
			mn = v[i];
			mn_seq = 1000 + i;
		}
		if (!i || v[i] > mx) {
			mx = v[i];
			mx_seq = 1000 + i;
		}
		dsum += (double)(v[i] - v[0]);	/* shifted: exact in double for these data */
	}
	hist_finish(&h);
	qsort(s, n, sizeof(*s), cmp_i64);
	for (i = 0; i < h.out_n; i++) {
		stored_lo += out[i] < 0;
	}
	full_lo = stored_lo < h.out_lo;
	full_hi = h.out_n - stored_lo < h.out_hi;
	res->full = full_lo || full_hi;
	if (out[out_cap] != GUARD) {
		snprintf(res->pct, sizeof(res->pct), "wrote past the exact store (out[%" PRIu64 "])", out_cap);
	}
	for (k = 0; k < NPCT && n; k++) {
		uint64_t rank = true_rank(k, n), err;
		int64_t tv = s[rank - 1], r;
		bool approx = false;
		__int128 d;

		r = rep[k] = hist_pct(&h, pct_value[k], &approx);
		hist_pct_err(&h, pct_value[k], &err);
		d = (__int128)r - tv;
		d = d < 0 ? -d : d;
		res->approx |= approx;
		if (tv < 0 || (uint64_t)tv >= bound) {
			res->maxrel = fmax(res->maxrel, (double)d / fabs((double)tv));
		}
		if (res->pct[0]) {
			continue;
		}
		if (r == GUARD) {
			snprintf(res->pct, sizeof(res->pct), "p%s read past the exact store", pct_key[k]);
		} else if (tv >= 0 && (uint64_t)tv < bound) {
			if (!(tv <= r && r < tv + (int64_t)bucket && r <= mx && r - (int64_t)err <= tv)) {
				snprintf(res->pct, sizeof(res->pct),
					 "p%s (rank %" PRIu64 " of %zu): true %" PRId64 " reported %" PRId64 " +- %" PRIu64 " (bucket %" PRIu64 ", max %" PRId64 ")",
					 pct_key[k], rank, n, tv, r, err, bucket, mx);
			}
		} else if (tv < 0 ? !full_lo : !full_hi) {
			if (r != tv || err) {
				snprintf(res->pct, sizeof(res->pct), "p%s (rank %" PRIu64 " of %zu) outside the bound: true %" PRId64
					 " reported %" PRId64 " +- %" PRIu64 " (must be exact)", pct_key[k], rank, n, tv, r, err);
			}
		} else if (d > (__int128)err || (__int128)err * 1000 > (tv < 0 ? -(__int128)tv : (__int128)tv) ||
			   (tv < 0 ? !(r < 0 && r >= mn) : !((uint64_t)r >= bound && r <= mx))) {
			snprintf(res->pct, sizeof(res->pct), "p%s from the log bins: true %" PRId64 " reported %" PRId64
				 " +- %" PRIu64 " (bound %" PRIu64 ", min %" PRId64 ", max %" PRId64 "): off by more than it says or 0.1 %%",
				 pct_key[k], tv, r, err, bound, mn, mx);
		}
		if (!res->full && approx && !res->pct[0]) {
			snprintf(res->pct, sizeof(res->pct), "p%s flagged approximate with the store not full", pct_key[k]);
		}
	}
	if (h.n != n || h.min != mn || h.max != mx || (n && (h.min_seq != mn_seq || h.max_seq != mx_seq))) {
		snprintf(res->minmax, sizeof(res->minmax), "n %" PRIu64 "/%zu min %" PRId64 "/%" PRId64 " seq %" PRIu64 "/%" PRIu64
			 " max %" PRId64 "/%" PRId64 " seq %" PRIu64 "/%" PRIu64, h.n, n, h.min, mn, h.min_seq, mn_seq,
			 h.max, mx, h.max_seq, mx_seq);
	}
	if (n) {
		double a = hist_avg(&h), d = hist_stddev(&h), ea, ed;

		/* two-pass reference in double on values shifted by v[0]: no long double, no cancellation */
		md = dsum / (double)n;
		for (i = 0; i < n; i++) {
			double d = (double)(v[i] - v[0]) - md;

			var += d * d;
		}
		ea = (double)v[0] + md;
		ed = sqrt(var / (double)n);
		if (fabs(a - ea) > 1e-6 * fmax(fabs(ea), 1) || fabs(d - ed) > 1e-6 * fmax(fabs(ed), 1)) {
			snprintf(res->moments, sizeof(res->moments), "avg %.9g want %.9g, stddev %.9g want %.9g", a, ea, d, ed);
		}
	}
	for (k = 1; k < NPCT && n; k++) {
		if (rep[k] < rep[k - 1] && !res->mono[0]) {
			snprintf(res->mono, sizeof(res->mono), "p%s %" PRId64 " < p%s %" PRId64, pct_key[k], rep[k], pct_key[k - 1],
				 rep[k - 1]);
		}
	}
	if (!n) {
		bool approx = false;

		if (hist_pct(&h, 50, &approx) != 0 || approx || hist_avg(&h) != 0 || hist_stddev(&h) != 0) {
			snprintf(res->pct, sizeof(res->pct), "empty histogram must report 0");
		}
	}
	free(buckets);
	free(lh);
	free(out);
	free(s);
}

static void hist_case(const char *name, const int64_t *v, size_t n, uint64_t bucket, uint64_t bound, uint64_t out_cap)
{
	struct hres r;
	char t[200];

	hist_verify(v, n, bucket, bound, out_cap, &r);
	snprintf(t, sizeof(t), "hist %s: percentiles vs sort", name);
	ok(!r.pct[0], t, "%s", r.pct);
	snprintf(t, sizeof(t), "hist %s: n, min, max and their seqs", name);
	ok(!r.minmax[0], t, "%s", r.minmax);
	snprintf(t, sizeof(t), "hist %s: avg and stddev vs brute force", name);
	ok(!r.moments[0], t, "%s", r.moments);
	snprintf(t, sizeof(t), "hist %s: percentiles monotonic", name);
	ok(!r.mono[0], t, "%s", r.mono);
}

static void test_hist(void)
{
	const size_t N = 20000;
	int64_t *v = malloc(N * sizeof(*v));
	size_t i;

	v[0] = 0;
	hist_case("empty", v, 0, 100, 1000000, 16);
	v[0] = 12345;
	hist_case("n=1", v, 1, 100, 1000000, 16);
	v[0] = 5000000;
	hist_case("n=1 above the bound", v, 1, 100, 1000000, 16);
	v[0] = -7;
	hist_case("n=1 negative", v, 1, 100, 1000000, 16);

	for (i = 0; i < 10000; i++) {
		v[i] = rnd_range(10000, 30000);
	}
	hist_case("uniform 10-30 us, 10000 samples", v, 10000, 100, 1000000, 64);
	for (i = 0; i < 5000; i++) {
		v[i] = rnd_range(500, 599);
	}
	hist_case("all samples in one bucket", v, 5000, 100, 1000000, 16);
	for (i = 0; i < 3000; i++) {
		v[i] = rnd_range(1000000, 9000000);
	}
	hist_case("all samples above the bound", v, 3000, 100, 1000000, 3000);
	for (i = 0; i < 3000; i++) {
		v[i] = rnd_range(800, 1200);
	}
	hist_case("bound (1000) not a multiple of the bucket (300)", v, 3000, 300, 1000, 3000);
	for (i = 0; i < 3000; i++) {
		v[i] = rnd_range(4294967296LL, 9000000000LL);
	}
	hist_case("values above 4.29 s, bound 20 s, bucket 1 ms", v, 3000, 1000000, 20000000000ULL, 16);
	hist_case("values above 4.29 s, above the bound", v, 3000, 100, 1000000, 3000);
	for (i = 0; i < 4000; i++) {
		v[i] = rnd_range(-50000, 50000);
	}
	hist_case("negative and positive values", v, 4000, 100, 1000000, 4000);
	for (i = 0; i < 4000; i++) {
		v[i] = (i % 3) ? rnd_range(-3000000, -1) : rnd_range(0, 3000000);
	}
	hist_case("mostly negative, some above the bound", v, 4000, 1000, 1000000, 4000);
	for (i = 0; i < 1000; i++) {
		v[i] = 777;
	}
	hist_case("1000 equal values", v, 1000, 100, 1000000, 16);
	for (i = 0; i < 1000; i++) {
		v[i] = i == 500 ? 10000000 : (int64_t)i;
	}
	hist_case("one outlier among 1000", v, 1000, 1, 1000000, 16);

	/* nearest rank at n = 1000: p99.9 is the 999th value, not the maximum */
	for (i = 0; i < 1000; i++) {
		v[i] = (int64_t)(i + 1) * 1000;	/* 1000 .. 1000000 */
	}
	hist_case("n=1000, values k*1000 (rank boundaries)", v, 1000, 1, 2000000, 16);
	{
		struct hist h;
		uint64_t *b = calloc(2000000, sizeof(*b));
		int64_t o[4];
		bool approx = false;
		int64_t p;

		hist_init(&h, 1, 2000000, b, o, 4, test_lh(NMETRIC));
		for (i = 0; i < 1000; i++) {
			hist_add(&h, (int64_t)(i + 1) * 1000, i);
		}
		hist_finish(&h);
		p = hist_pct(&h, 99.9, &approx);
		ok(p == 999000, "hist: p99.9 of 1000 samples is the 999th (rank ceil(0.999*1000) = 999)",
		   "got %" PRId64 " (the %" PRId64 "th), want 999000", p, p / 1000);
		p = hist_pct(&h, 50, &approx);
		ok(p == 500000, "hist: p50 of 1000 samples is the 500th", "got %" PRId64, p);
		p = hist_pct(&h, 90, &approx);
		ok(p == 900000, "hist: p90 of 1000 samples is the 900th", "got %" PRId64, p);
		p = hist_pct(&h, 100, &approx);
		ok(p == 1000000, "hist: p100 is the maximum", "got %" PRId64, p);
		free(b);
	}
	free(v);
}

static void test_hist_store(void)
{
	const size_t N = 20000;
	int64_t *v = malloc(N * sizeof(*v));
	struct hres res;
	size_t i;

	/* exact store fills: flagged, no write past it, tails still sane */
	for (i = 0; i < 2000; i++) {
		v[i] = i % 2 ? rnd_range(2000000, 5000000) : rnd_range(1000, 2000);
	}
	hist_verify(v, 2000, 100, 1000000, 10, &res);
	ok(res.approx, "hist: store of 10 overflows -> approximate flag", "failed");
	ok(!res.pct[0] && !res.minmax[0] && !res.moments[0] && !res.mono[0],
	   "hist: store of 10 overflows -> min/max/avg exact, tails on the right side", "%s%s%s%s", res.pct, res.minmax,
	   res.moments, res.mono);
	for (i = 0; i < 300; i++) {
		v[i] = -1000 - (int64_t)i;
	}
	for (; i < 400; i++) {
		v[i] = rnd_range(0, 999999);
	}
	hist_verify(v, 400, 100, 1000000, 5, &res);
	ok(res.approx && !res.pct[0] && !res.minmax[0], "hist: store of 5 full of negatives, low percentiles approximate",
	   "approx=%d %s%s", res.approx, res.pct, res.minmax);
	/* store filled by negatives, then values above the bound: none of those stored */
	for (i = 0; i < 4; i++) {
		v[i] = -5 - (int64_t)i;
	}
	for (; i < 104; i++) {
		v[i] = 2000000 + (int64_t)i;
	}
	hist_case("store (4) full of negatives, 100 values above the bound", v, 104, 100, 1000000, 4);
	/* store filled by values above the bound, then negatives */
	for (i = 0; i < 4; i++) {
		v[i] = 3000000 + (int64_t)i;
	}
	for (; i < 104; i++) {
		v[i] = -100 - (int64_t)i;
	}
	hist_case("store (4) full of high values, 100 negatives", v, 104, 100, 1000000, 4);

	/* statistics far from zero: unsynchronised clocks give offsets of decades */
	for (i = 0; i < 1000; i++) {
		v[i] = 5000000000LL + rnd_range(-1000, 1000);
	}
	hist_case("values near 5 s with a 1 us spread (stddev precision)", v, 1000, 100, 1000000, 1000);
	for (i = 0; i < 1000; i++) {
		v[i] = 1700000000000000000LL + rnd_range(-1000, 1000);
	}
	hist_case("values near 1.7e18 ns (PHC not synchronised)", v, 1000, 100, 1000000, 1000);
	free(v);
}

/* hist_case with the store overflowing: every percentile within 0.1 % (hist_verify's rule) */
static void hist_case_long(const char *name, const int64_t *v, size_t n, uint64_t bucket, uint64_t bound,
			   uint64_t out_cap)
{
	struct hres r;
	char t[200];

	hist_verify(v, n, bucket, bound, out_cap, &r);
	snprintf(t, sizeof(t), "hist long run, %s: store of %" PRIu64 " overflows, percentiles within 0.1 %% (worst %.4f %%)",
		 name, out_cap, 100 * r.maxrel);
	ok(r.full && !r.pct[0] && !r.minmax[0] && !r.mono[0] && r.maxrel <= 0.001, t, "full %d %s%s%s", r.full, r.pct,
	   r.minmax, r.mono);
}

/*
 * Long runs: more outliers than the exact store holds.  Ranks scaled over
 * the first out_cap outliers would report a path that got slower after the
 * store filled at its old speed: the percentiles must follow every sample.
 */
static void test_hist_long(void)
{
	const size_t N = 300000;
	int64_t *v = malloc(N * sizeof(*v));
	size_t i;

	/* the issue's shape: 20-40 us, then 1 ms slower after the store filled (-o 1: all outside) */
	for (i = 0; i < N; i++) {
		v[i] = rnd_range(20000, 40000) + (i >= 100000 ? 1000000 : 0);
	}
	hist_case_long("1 ms slower after 100000 samples, -o 1", v, N, 100, 1000, 16384);
	/* values spanning decades: 1 ns .. about an hour, log-uniform */
	for (i = 0; i < N; i++) {
		v[i] = (int64_t)pow(10, (double)(rnd() % 1000000) / 1e6 * 12.5);
	}
	hist_case_long("1 ns .. 1 hour, log-uniform", v, N, 100, 1000000, 1000);
	/* all above the bound, ties: 5 distinct values */
	for (i = 0; i < N; i++) {
		static const int64_t d[] = { 1000001, 1000002, 2500000, 999999999, 4000000000LL };

		v[i] = d[rnd() % 5];
	}
	hist_case_long("all above the bound, 5 distinct values", v, N, 100, 1000000, 16);
	/* ties on bin edges: powers of two and their neighbours */
	for (i = 0; i < N; i++) {
		int e = (int)rnd_range(10, 40);

		v[i] = (int64_t)(1ULL << e) + rnd_range(-1, 1);
	}
	hist_case_long("powers of two +-1 (bin edges)", v, N, 10, 1000, 64);
	/* negative decades (one-way delays with an offset), store full */
	for (i = 0; i < N; i++) {
		v[i] = -(int64_t)pow(10, (double)(rnd() % 1000000) / 1e6 * 10) + (i % 7 ? 0 : 3000000);
	}
	hist_case_long("negative decades and some above the bound", v, N, 1000, 1000000, 100);
	/* the largest a metric can be: stamps stay below 2^62 (STAMP_MAX), so do their differences */
	for (i = 0; i < N; i++) {
		const int64_t top = (int64_t)STAMP_MAX - 1;

		v[i] = i % 3 == 0 ? top - rnd_range(0, 1000) : i % 3 == 1 ? -top + rnd_range(0, 1000) :
				      rnd_range(-4, 4) * 1000000000000000000LL;
	}
	hist_case_long("values near +-2^62 (STAMP_MAX)", v, N, 100, 1000000, 8);
	free(v);
}

/*
 * The memory a run's statistics take, sized by what it must keep: a run
 * that cannot produce OUT_CAP samples gets a store for all of them and no
 * log bins; any longer run the same OUT_CAP store and log bins, however long.
 */
static void test_layout_store(void)
{
	struct layout a, b, c, d;

	reset_globals();
	cfg_defaults();
	opts.mode = MODE_EMIT;
	opts.count = 100;
	opts.warmup = 5;
	layout_compute(&a, true);
	opts.count = 2000000;
	layout_compute(&b, true);
	opts.count = 0;
	opts.duration_s = 3;
	layout_compute(&c, true);
	opts.count = 20000000;
	layout_compute(&d, true);
	ok(a.out_cap == 105 && b.out_cap == OUT_CAP && c.out_cap == OUT_CAP && d.out_cap == OUT_CAP,
	   "layout: the exact store holds what a short run can give (105), else OUT_CAP whatever the length",
	   "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, a.out_cap, b.out_cap, c.out_cap, d.out_cap);
	ok(b.total == c.total && c.total == d.total && a.total < b.total,
	   "layout: --count 2000000 and 20000000 take what -d takes; --count 100 less (no log bins)",
	   "%zu %zu %zu %zu", a.total, b.total, c.total, d.total);
	reset_globals();
}

/*
 * --interval with --timeout sizes the client's window by the pings that can
 * be in flight: refused past WIN_MAX / 2 with --interval as typed (a list's
 * cadence that of all its classes), unless --count bounds what is sent.
 */
static void test_layout_inflight(void)
{
	static const struct {
		int want;
		const char *argv, *says;
		unsigned win_min;
	} c[] = {
		{ -1, "-a h --interval 1",
		  "rant: --interval: 1 us with --timeout 1000 ms keeps up to 1000001 pings in flight; at most 524288 (raise --interval, lower --timeout or give --count)\n",
		  0 },
		{ -1, "-a h --tos 1,2,3 --interval 1,1,1",
		  "rant: --interval: 1,1,1 us (all classes together: one ping every 0.333 us) with --timeout 1000 ms keeps up to 3003004 pings in flight",
		  0 },
		{ 0, "-a h --tos 1,2,3 --interval 1,1,1 --count 3000", NULL, 2 * 3000 },
		{ 0, "-a h --interval 1 --count 3000 -w 10", NULL, 2 * 3010 },
		{ 0, "-a h --interval 1 --timeout 100", NULL, 2 * 100001 },
		{ -1, "-a h --interval 1 -d 5", "keeps up to 1000001 pings in flight", 0 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct args a;
		struct layout L;
		struct capture ce;
		char *out, *err, *said, name[240];
		int r;

		reset_globals();
		cfg_defaults();
		memset(&L, 0, sizeof(L));
		r = parse_str(c[i].argv, &a, &out, &err);
		if (r == 0) {
			cap_start(&ce, 2);
			r = layout_compute(&L, true);
			said = cap_stop(&ce);
		} else {
			said = strdup(err);
		}
		snprintf(name, sizeof(name), "layout: '%s' -> %d%s", c[i].argv, c[i].want,
			 c[i].says ? ", one line" : "");
		ok(r == c[i].want && (c[i].says ? one_rant_line(said) && strstr(said, c[i].says) != NULL
						: !*said && L.win >= c[i].win_min),
		   name, "r=%d said='%s' win=%u", r, said, r == 0 ? (unsigned)L.win : 0);
		free(out);
		free(err);
		free(said);
		run_reset();
	}
	reset_globals();
}

static void test_hist_random(void)
{
	const size_t N = 20000;
	int64_t *v = malloc(N * sizeof(*v));
	struct hres res;
	size_t i;
	int trial, failed_trials = 0;
	char first[1200] = "";

	/* 100 random trials: random bucket, bound, store size and data */
	for (trial = 0; trial < 100; trial++) {
		uint64_t bucket = (uint64_t)rnd_range(1, 5000);
		uint64_t bound = bucket * (uint64_t)rnd_range(1, 2000) + (uint64_t)rnd_range(0, (int64_t)bucket - 1);
		size_t n = (size_t)rnd_range(1, 6000);
		uint64_t cap = trial % 4 == 0 ? (uint64_t)rnd_range(1, 50) : n;
		int shape = (int)rnd_range(0, 3);

		for (i = 0; i < n; i++) {
			switch (shape) {
			case 0:
				v[i] = rnd_range(0, (int64_t)bound * 2);
				break;
			case 1:
				v[i] = rnd_range(-(int64_t)bound, (int64_t)bound);
				break;
			case 2:	/* long tail */
				v[i] = (int64_t)(bound / 4) + (int64_t)((double)bound * pow((double)(rnd() % 1000000) / 1e6, 8) * 10);
				break;
			default:
				v[i] = rnd_range(0, (int64_t)bucket * 3) + (rnd() % 100 == 0 ? (int64_t)bound * 5 : 0);
			}
		}
		hist_verify(v, n, bucket, bound, cap, &res);
		if (res.pct[0] || res.minmax[0] || res.moments[0] || res.mono[0]) {
			if (!failed_trials++) {
				snprintf(first, sizeof(first), "trial %d (n %zu bucket %" PRIu64 " bound %" PRIu64 " cap %" PRIu64 "): %s%s%s%s",
					 trial, n, bucket, bound, cap, res.pct, res.minmax, res.moments, res.mono);
			}
		}
	}
	ok(!failed_trials, "hist: 100 random trials (random bucket, bound, store, shape)", "%d failed; first: %s",
	   failed_trials, first);

	/* the exact store allocated to its size: no write past it when it fills */
	{
		struct hist h;
		uint64_t *b = calloc(10, sizeof(*b));
		int64_t *o = malloc(8 * sizeof(*o));

		hist_init(&h, 100, 1000, b, o, 8, test_lh(NMETRIC));
		for (i = 0; i < 1000; i++) {
			hist_add(&h, i % 3 ? 5000 + (int64_t)i : -(int64_t)i - 1, i);
		}
		ok(h.out_n == 8 && h.out_hi + h.out_lo == 1000 && h.n == 1000 && h.out_lo == 334,
		   "hist: store of 8 (exact allocation) keeps 8, counts all 1000 outliers by side", "out_n %" PRIu64 " hi %" PRIu64
		   " lo %" PRIu64, h.out_n, h.out_hi, h.out_lo);
		free(b);
		free(o);
	}

	/* hist_reset keeps the memory, forgets the samples */
	{
		struct hist h;
		uint64_t b[10] = { 0 };
		int64_t o[2];

		hist_init(&h, 100, 1000, b, o, 2, test_lh(NMETRIC));
		hist_add(&h, 5, 1);
		hist_add(&h, 5000, 2);
		hist_add(&h, -5, 3);
		hist_add(&h, 6000, 4);
		hist_reset(&h);
		ok(h.n == 0 && h.out_n == 0 && h.out_hi == 0 && h.out_lo == 0 && b[0] == 0 &&
		   !h.lh[LH_N + lh_index(5000) - h.lh_base] && !h.lh[LH_N - 1 - 5] && h.bucket == b && h.out == o && h.out_cap == 2 &&
		   h.nbuckets == 10, "hist: reset keeps the memory, forgets the samples", "n=%" PRIu64, h.n);
	}
	free(v);
}

/* ------------------------------------------------------------ clock fits */

static void fit_case(double ppm, double noise, int64_t y0, const char *name)
{
	struct fit f;
	uint64_t x0 = 1700000000000000000ULL;
	double got = 0, span = 0;
	int i;
	bool r;

	memset(&f, 0, sizeof(f));
	for (i = 0; i < 1000; i++) {
		uint64_t dx = (uint64_t)i * 10000000ULL;	/* 10 ms */
		double y = (double)y0 + ppm * 1e-6 * (double)dx + (double)rnd_range(-(int64_t)noise, (int64_t)noise);

		fit_point(&f, x0 + dx + (uint64_t)rnd_range(0, 1000), (int64_t)llround(y));
	}
	r = fit_ppm(&f, &got, &span);
	ok(r && fabs(got - ppm) < 0.1 && fabs(span - 10.0) < 0.1, name, "r=%d ppm %.4f want %.4f span %.3f", r, got, ppm, span);
}

static void test_fit(void)
{
	struct fit f;
	double ppm = 0, span = 0;

	fit_case(50, 200, 123456, "fit: +50 ppm over 10 s with 200 ns noise");
	fit_case(-3, 200, -987654, "fit: -3 ppm over 10 s with 200 ns noise");
	fit_case(0, 500, 0, "fit: 0 ppm over 10 s with 500 ns noise");
	fit_case(0.5, 50, 1700000000000000000LL, "fit: +0.5 ppm with offsets near 1.7e18 ns");
	fit_case(-100, 1000, -37000000000LL, "fit: -100 ppm, offset -37 s (TAI-UTC style)");

	/* windowed fit: one point per window, the lowest-delay one */
	{
		const uint64_t x0 = 1700000000000000000ULL;
		int64_t ymin_all = INT64_MAX;
		int i;

		memset(&f, 0, sizeof(f));
		for (i = 0; i < 2000; i++) {
			uint64_t dx = (uint64_t)i * 5000000ULL;	/* 5 ms, 10 s */
			int64_t q = rnd_range(0, 200) + (i % 50 == 7 ? 300000 : 0);	/* queueing: only ever adds */
			int64_t y = 5000 + (int64_t)llround(20e-6 * (double)dx) + q;

			ymin_all = y < ymin_all ? y : ymin_all;
			fit_window(&f, x0 + dx, y, q);
		}
		fit_window_flush(&f);
		ok(f.n >= 39 && f.n <= 41, "fit_window: one point per 250 ms window", "n=%" PRIu64, f.n);
		ok(fit_ppm(&f, &ppm, &span) && fabs(ppm - 20) < 0.1, "fit_window: +20 ppm under one-sided 300 us spikes",
		   "ppm %.4f", ppm);
		ok(f.ymin == ymin_all, "fit_window: ymin is the minimum over all samples", "%" PRId64 " want %" PRId64, f.ymin,
		   ymin_all);
		memset(&f, 0, sizeof(f));
		fit_window(&f, x0, -5, 100);		/* negative, but a slow exchange */
		fit_window(&f, x0 + 1000000, 10, 1);	/* the window's best */
		fit_window_flush(&f);
		ok(f.n == 1 && f.ymin == -5, "fit_window: ymin keeps a negative sample that was not its window's best",
		   "n=%" PRIu64 " ymin=%" PRId64, f.n, f.ymin);
	}

	memset(&f, 0, sizeof(f));
	fit_point(&f, 1000000000, 5);
	fit_point(&f, 2000000000, 6);
	ok(!fit_ppm(&f, &ppm, &span), "fit: two points -> unknown", "failed");
	fit_point(&f, 2000000000, 7);
	ok(fit_ppm(&f, &ppm, &span) && fabs(ppm - 0.0015) < 1e-9, "fit: three points, exact slope 1.5 ns/s", "ppm %.9f", ppm);
	memset(&f, 0, sizeof(f));
	fit_track(&f, 1);
	fit_point(&f, 5, 1);
	fit_track(&f, 2);
	fit_point(&f, 5, 2);
	fit_track(&f, 3);
	fit_point(&f, 5, 3);
	ok(!fit_ppm(&f, &ppm, &span), "fit: all x equal -> unknown", "failed");
	ok(f.ymin == 1 && f.ymax == 3, "fit: ymin/ymax tracked", "%" PRId64 "/%" PRId64, f.ymin, f.ymax);
}

static void test_fit_offset(void)
{
	uint64_t t[NSTAMP];
	int64_t off;

	/* clock offset: server clock = client clock + O, symmetric one-way delay d */
	{
		static const int64_t offs[] = { 0, 1, -1, 2, 1001, -1001, 1000, 123456789, -123456789, -5000000001LL, 37000000000LL };
		static const int64_t dels[] = { 0, 1, 500, 12345, 99999 };
		size_t i, j;
		char name[120];

		for (i = 0; i < ARRAY_SIZE(offs); i++) {
			int nbad = 0;
			int64_t badd = 0, badv = 0;

			for (j = 0; j < ARRAY_SIZE(dels); j++) {
				uint64_t T1 = 1700000000000000000ULL;

				memset(t, 0, sizeof(t));
				t[T1W] = T1;
				t[T2W] = (uint64_t)((int64_t)T1 + dels[j] + offs[i]);
				t[T3W] = t[T2W] + 7777;
				t[T4W] = (uint64_t)((int64_t)t[T3W] - offs[i] + dels[j]);
				if (!clock_offset(t, &off) || off != offs[i]) {
					nbad++;
					badd = dels[j];
					badv = off;
				}
			}
			snprintf(name, sizeof(name), "clock_offset: offset %" PRId64 " ns exact with symmetric delays", offs[i]);
			ok(!nbad, name, "%d of 5 delays wrong, e.g. delay %" PRId64 " gave %" PRId64, nbad, badd, badv);
		}
	}
	memset(t, 0, sizeof(t));
	t[T1W] = 1;
	t[T2W] = 2;
	t[T3W] = 3;
	ok(!clock_offset(t, &off), "clock_offset: missing T4 -> false", "failed");
	t[T4W] = 4;
	t[T2W] = 0;
	ok(!clock_offset(t, &off), "clock_offset: missing T2 -> false", "failed");
}

/* A netlink attribute at p: type, data; returns the bytes it takes (aligned). */
static size_t tsn_put(uint8_t *p, int type, const void *data, size_t n)
{
	struct rtattr a = { .rta_len = (unsigned short)RTA_LENGTH(n), .rta_type = (unsigned short)type };

	memcpy(p, &a, sizeof(a));
	if (n) {
		memcpy(p + RTA_LENGTH(0), data, n);
	}
	return RTA_ALIGN(a.rta_len);
}

/* A nest's header at p, closed by tsn_close once its attributes follow. */
static void tsn_close(uint8_t *p, size_t total)
{
	unsigned short len = (unsigned short)total;

	memcpy(p, &len, sizeof(len));
}

/* One qdisc as RTM_GETQDISC dumps it: tcmsg, kind, options. */
static size_t tsn_msg(uint8_t *buf, int ifindex, uint32_t handle, uint32_t parent, const char *kind,
		      const uint8_t *opt, size_t optlen)
{
	struct tcmsg tc = { .tcm_family = AF_UNSPEC, .tcm_ifindex = ifindex, .tcm_handle = handle,
			    .tcm_parent = parent };
	size_t n = NLMSG_ALIGN(sizeof(tc));

	memcpy(buf, &tc, sizeof(tc));
	n += tsn_put(buf + n, TCA_KIND, kind, strlen(kind) + 1);
	n += tsn_put(buf + n, TCA_OPTIONS, opt, optlen);
	return n;
}

/*
 * --txtime and --cycle read the interface's qdiscs from a netlink dump:
 * taprio's map and gate entries and each etf's clock, delta and mode, only
 * of the interface asked; tsn_etf_check finds the etf of each class's queue.
 */
static void test_tsn_qdiscs(void)
{
	static uint8_t opt[1024], buf[2048];
	struct tc_mqprio_qopt m = { .num_tc = 3, .prio_tc_map = { 0, 0, 1, 2 },
				    .count = { 1, 1, 1 }, .offset = { 0, 1, 2 } };
	struct tc_etf_qopt e = { .delta = 150000, .clockid = CLOCK_TAI, .flags = 0 };
	uint32_t gates[3] = { 1, 2, 4 }, ns[3] = { 20000, 60000, 120000 };
	int64_t base = 1000, cycle = 200000;
	int32_t clk = CLOCK_TAI;
	size_t n = 0, list, ent, len;
	int i;

	reset_globals();
	n += tsn_put(opt + n, TCA_TAPRIO_ATTR_PRIOMAP, &m, sizeof(m));
	list = n;
	n += RTA_LENGTH(0);
	for (i = 0; i < 3; i++) {
		ent = n;
		n += RTA_LENGTH(0);
		n += tsn_put(opt + n, TCA_TAPRIO_SCHED_ENTRY_GATE_MASK, &gates[i], 4);
		n += tsn_put(opt + n, TCA_TAPRIO_SCHED_ENTRY_INTERVAL, &ns[i], 4);
		tsn_put(opt + ent, TCA_TAPRIO_SCHED_ENTRY | NLA_F_NESTED, NULL, 0);
		tsn_close(opt + ent, n - ent);
	}
	tsn_put(opt + list, TCA_TAPRIO_ATTR_SCHED_ENTRY_LIST | NLA_F_NESTED, NULL, 0);
	tsn_close(opt + list, n - list);
	n += tsn_put(opt + n, TCA_TAPRIO_ATTR_SCHED_BASE_TIME, &base, 8);
	n += tsn_put(opt + n, TCA_TAPRIO_ATTR_SCHED_CYCLE_TIME, &cycle, 8);
	n += tsn_put(opt + n, TCA_TAPRIO_ATTR_SCHED_CLOCKID, &clk, 4);
	len = tsn_msg(buf, 7, 0x1000000, TC_H_ROOT, "taprio", opt, n);
	tsn_qdisc_msg(&tsn.q, buf, len - 1, 8);	/* another interface's: nothing taken */
	ok(!tsn.q.sched && !*tsn.q.root, "tsn qdiscs: another interface's qdisc is left alone",
	   "root '%s'", tsn.q.root);
	tsn_qdisc_msg(&tsn.q, buf, len, 7);
	ok(tsn.q.sched && tsn.q.map && !strcmp(tsn.q.root, "taprio") && tsn.q.nent == 3 &&
	   tsn.q.cycle == 200000 && tsn.q.base == 1000 && tsn.q.clockid == CLOCK_TAI &&
	   tsn.q.ent[1].gates == 2 && tsn.q.ent[2].ns == 120000 && tsn.q.prio_tc[3] == 2 &&
	   tsn.q.offset[2] == 2, "tsn qdiscs: taprio's schedule and map read",
	   "sched %d map %d root '%s' nent %d cycle %" PRId64, tsn.q.sched, tsn.q.map, tsn.q.root,
	   tsn.q.nent, tsn.q.cycle);
	n = tsn_put(opt, TCA_ETF_PARMS, &e, sizeof(e));
	len = tsn_msg(buf, 7, 0x80010000, TC_H_MAKE(0x1000000, 1), "etf", opt, n);
	tsn_qdisc_msg(&tsn.q, buf, len, 7);
	len = tsn_msg(buf, 7, 0x80020000, TC_H_MAKE(0x1000000, 2), "etf", opt, n);
	tsn_qdisc_msg(&tsn.q, buf, len, 7);
	ok(tsn.q.netf == 2 && tsn.q.etf[1].delta == 150000 && tsn.q.etf[0].clockid == CLOCK_TAI,
	   "tsn qdiscs: each etf's parent, clock and delta", "netf %d", tsn.q.netf);
	opts.iface = "tv0";
	opts.priority = -1;
	classes.ncls = 3;
	classes.prio[0] = 1;
	classes.prio[1] = 2;
	classes.prio[2] = 3;
	ok(tsn_etf_check(0) == 0 && tsn_etf_check(1) == 0 && tsn.etf_delta == 150000,
	   "tsn qdiscs: classes 0 and 1 (priorities 1, 2 -> tc 0, 1) find their queue's etf", "failed");
	ok(tsn_etf_check(2) < 0, "tsn qdiscs: class 2 (tc 2, queue 2) has no etf: refused", "failed");
	e.flags = TC_ETF_DEADLINE_MODE_ON;
	n = tsn_put(opt, TCA_ETF_PARMS, &e, sizeof(e));
	len = tsn_msg(buf, 7, 0x80030000, TC_H_MAKE(0x1000000, 3), "etf", opt, n);
	tsn_qdisc_msg(&tsn.q, buf, len, 7);
	ok(tsn_etf_check(2) < 0, "tsn qdiscs: an etf in deadline mode without --txtime-deadline: refused",
	   "failed");
	opts.txtime_deadline = true;
	ok(tsn_etf_check(2) == 0, "tsn qdiscs: ... and taken with it", "failed");
	reset_globals();
}

static void test_fit_metrics(void)
{
	uint64_t t[NSTAMP];
	int64_t v;
	int m, k;

	/* metric values and the stamps each one needs */
	{
		static const int need[NMETRIC][4] = {
			[M_RTT] = { T4W, T1W, -1 },	[M_RESPONSE] = { T3W, T2W, -1 },
			[M_NETWORK] = { T4W, T1W, T3W, T2W }, [M_APP_RTT] = { T4SW, T1SW, -1 },
			[M_CLI_TX] = { T1W, T1SW, -1 },	[M_CLI_RX] = { T4SW, T4W, -1 },
			[M_SRV_RX] = { T2SW, T2W, -1 },	[M_SRV_PROC] = { T3SW, T2SW, -1 },
			[M_SRV_TX] = { T3W, T3SW, -1 },
			[M_FORWARD] = { T2W, T1W, -1 },	[M_BACKWARD] = { T4W, T3W, -1 },
			[M_CLI_TX_KERN] = { T1K, T1SW, -1 }, [M_CLI_TX_NIC] = { T1W, T1K, -1 },
			[M_CLI_RX_NIC] = { T4K, T4W, -1 }, [M_CLI_RX_WAKE] = { T4SW, T4K, -1 },
			[M_SRV_RX_NIC] = { T2K, T2W, -1 }, [M_SRV_RX_WAKE] = { T2SW, T2K, -1 },
			[M_SRV_TX_KERN] = { T3K, T3SW, -1 }, [M_SRV_TX_NIC] = { T3W, T3K, -1 },
			[M_LAUNCH_ERR] = { T1W, T1L, -1 }, [M_SPARE] = { T1L, T1SW, -1 },
		};
		const uint64_t B = 1700000000000000000ULL;
		int64_t want[NMETRIC];
		uint64_t full[NSTAMP];
		char name[120];

		full[T1SW] = B;
		full[T1W] = B + 1000;
		full[T2W] = B + 50000 + 3;	/* server clock, 3 ns ahead */
		full[T2SW] = B + 52000;
		full[T3SW] = B + 55000;
		full[T3W] = B + 56000;
		full[T4W] = B + 104000;
		full[T4SW] = B + 107000;
		full[T1K] = B + 400;
		full[T2K] = B + 51000;
		full[T3K] = B + 55600;
		full[T4K] = B + 105500;
		full[T1L] = B + 800;	/* --txtime: the launch time asked */
		want[M_RTT] = 103000;
		want[M_RESPONSE] = 56000 - 50003;
		want[M_NETWORK] = 103000 - (56000 - 50003);
		want[M_APP_RTT] = 107000;
		want[M_CLI_TX] = 1000;
		want[M_CLI_RX] = 3000;
		want[M_SRV_RX] = 52000 - 50003;
		want[M_SRV_PROC] = 3000;
		want[M_SRV_TX] = 1000;
		want[M_FORWARD] = 50003 - 1000;
		want[M_BACKWARD] = 104000 - 56000;
		want[M_CLI_TX_KERN] = 400;
		want[M_CLI_TX_NIC] = 600;
		want[M_CLI_RX_NIC] = 1500;
		want[M_CLI_RX_WAKE] = 1500;
		want[M_SRV_RX_NIC] = 51000 - 50003;
		want[M_SRV_RX_WAKE] = 1000;
		want[M_SRV_TX_KERN] = 600;
		want[M_SRV_TX_NIC] = 400;
		want[M_LAUNCH_ERR] = 200;
		want[M_SPARE] = 800;
		for (m = 0; m < NMETRIC; m++) {
			bool r = metric_value(m, full, &v), miss = true;

			snprintf(name, sizeof(name), "metric %s: value from all stamps", metric_def[m].key);
			ok(r && v == want[m], name, "r=%d v=%" PRId64 " want %" PRId64, r, v, want[m]);
			for (k = 0; k < 4 && need[m][k] >= 0; k++) {
				memcpy(t, full, sizeof(t));
				t[need[m][k]] = 0;
				v = 12345;
				if (metric_value(m, t, &v) || v != 12345) {
					miss = false;
				}
			}
			snprintf(name, sizeof(name), "metric %s: any missing stamp -> false, value untouched", metric_def[m].key);
			ok(miss, name, "failed");
		}
		memset(t, 0, sizeof(t));
		ok(!metric_value(NMETRIC, full, &v) && !metric_value(M_RTT, t, &v), "metric: unknown metric or no stamps -> false", "failed");
		memcpy(t, full, sizeof(t));
		t[T4W] = B + 500;	/* before T1: negative, but known */
		ok(metric_value(M_RTT, t, &v) && v == -500, "metric: a negative difference is a value, not missing", "v=%" PRId64, v);
	}
}

/* ------------------------------------------------------------------- log */

/* Stamps of a transaction, as a run would produce them. */
enum { K_OK, K_OK_NO_T1W, K_OK_NO_T4W, K_OK_NO_SRV, K_LOST, K_LATE, K_WARMUP, K_NEG, K_SMALL, NKIND };

static void mk_emit_txn(struct txn *x, uint64_t seq, int kind)
{
	const uint64_t B = 1700000000000000000ULL + seq * 1000003ULL;

	memset(x, 0, sizeof(*x));
	x->seq = seq;
	x->st = TF_USED | TF_SENT | TF_RECEIVED;
	x->t[T1SW] = B;
	x->t[T1W] = B + 1500 + seq % 7;
	x->t[T2W] = B + 40000 + seq % 11;
	x->t[T2SW] = B + 42000;
	x->t[T3SW] = B + 45000;
	x->t[T3W] = B + 46000 + seq % 13;
	x->t[T4W] = B + 90000 + seq % 17;
	x->t[T4SW] = B + 93000;
	switch (kind) {
	case K_OK_NO_T1W:
		x->t[T1W] = 0;
		break;
	case K_OK_NO_T4W:
		x->t[T4W] = 0;
		break;
	case K_OK_NO_SRV:
		x->t[T2W] = x->t[T2SW] = x->t[T3SW] = x->t[T3W] = 0;
		break;
	case K_LOST:
		x->st = TF_USED | TF_SENT | TF_LOST;
		x->t[T2W] = x->t[T2SW] = x->t[T3SW] = x->t[T3W] = x->t[T4W] = x->t[T4SW] = 0;
		break;
	case K_LATE:
		x->st = TF_USED | TF_SENT | TF_LOST | TF_LATE;
		x->t[T2W] = x->t[T2SW] = x->t[T3SW] = x->t[T3W] = 0;
		x->t[T4W] += 2000000000ULL;
		x->t[T4SW] += 2000000000ULL;
		break;
	case K_WARMUP:
		x->st |= TF_WARMUP;
		break;
	case K_NEG:	/* T4 before T1: a clock step; still a value */
		x->t[T4W] = x->t[T1W] - 5;
		break;
	case K_SMALL:	/* an unsynchronised NIC clock near the epoch */
		x->t[T1W] = 999999999;
		x->t[T4W] = 1000000123;
		break;
	}
}

static void mk_reflect_txn(struct txn *x, uint64_t seq, int kind)
{
	const uint64_t B = 1700000000000000000ULL + seq * 999983ULL;

	memset(x, 0, sizeof(*x));
	x->seq = seq;
	x->st = TF_USED | TF_SENT | TF_RECEIVED;
	x->t[T2W] = B + seq % 5;
	x->t[T2SW] = B + 2000;
	x->t[T3SW] = B + 5000;
	x->t[T3W] = B + 6000 + seq % 19;
	if (kind == K_OK_NO_T1W) {
		x->t[T3W] = 0;	/* TX stamp never came */
	} else if (kind == K_WARMUP) {
		x->st |= TF_WARMUP;
	} else if (kind == K_OK_NO_T4W) {
		x->t[T2W] = 0;
	}
}

static void log_setup(bool emit, uint8_t **mem, uint64_t cap)
{
	memset(&sess, 0, sizeof(sess));
	side_set(emit);
	*mem = calloc(cap, log_rec_size(emit));
	log_init(&sess.log, *mem, cap);
	sess.id = 0x1234abcd;
}

/*
 * A log read back whole, for the cases to look at its rows (rant itself
 * streams them: alog_open, alog_next): what its header said, then each row.
 */
struct tlog {
	bool emit, csv, hw, srv_hw, sw;
	uint32_t have;
	uint64_t n;
	struct txn *row;
	uint8_t *status;
	uint32_t *size;
};

static void tlog_free(struct tlog *L)
{
	free(L->row);
	free(L->status);
	free(L->size);
	L->row = NULL;
	L->status = NULL;
	L->size = NULL;
}

static int tlog_read(const char *path, struct tlog *L)
{
	struct alog a;
	int r;

	memset(L, 0, sizeof(*L));
	r = alog_open(path, &a);
	L->emit = a.emit;
	L->csv = a.csv;
	L->hw = a.hw;
	L->srv_hw = a.srv_hw;
	L->sw = a.sw;
	L->have = a.have;
	while (r == 0 && (r = alog_next(&a)) > 0) {
		L->row = realloc(L->row, (L->n + 1) * sizeof(*L->row));
		L->status = realloc(L->status, L->n + 1);
		L->size = realloc(L->size, (L->n + 1) * sizeof(*L->size));
		L->row[L->n] = a.x;
		L->status[L->n] = (uint8_t)a.st;
		L->size[L->n++] = a.size;
		r = 0;
	}
	alog_close(&a);
	if (r < 0) {
		tlog_free(L);
	}
	return r;
}

/* Write the ring to a temp file; returns 0 or -errno. */
static int log_to_file(const char *path, enum log_format fmt)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600), r;

	if (fd < 0) {
		return -errno;
	}
	r = log_write(fd, fmt);
	close(fd);
	return r;
}

/* Compare what alog_read got with what was pushed; NULL if all agree. */
static const char *log_compare(const struct tlog *L, const struct txn *want, const int *wstatus, size_t nwant,
			       bool skip_warmup, char *why, size_t len)
{
	size_t i, j = 0;
	int s;

	for (i = 0; i < nwant; i++) {
		if (skip_warmup && wstatus[i] == ST_WARMUP) {
			continue;
		}
		if (j >= L->n) {
			snprintf(why, len, "only %" PRIu64 " rows read", L->n);
			return why;
		}
		if (L->row[j].seq != want[i].seq || L->status[j] != wstatus[i]) {
			snprintf(why, len, "row %zu: seq %" PRIu64 " status %d, want seq %" PRIu64 " status %d", j, L->row[j].seq,
				 L->status[j], want[i].seq, wstatus[i]);
			return why;
		}
		for (s = 0; s < NSTAMP; s++) {
			uint64_t w = (L->have & (1u << s)) ? want[i].t[s] : 0;

			if (L->row[j].t[s] != w) {
				snprintf(why, len, "row %zu seq %" PRIu64 " stamp %d: %" PRIu64 " want %" PRIu64, j, want[i].seq, s,
					 L->row[j].t[s], w);
				return why;
			}
		}
		j++;
	}
	if (j != L->n) {
		snprintf(why, len, "%" PRIu64 " rows read, %zu expected", L->n, j);
		return why;
	}
	return NULL;
}

static int read_log(const char *path, struct tlog *L, char **err)
{
	struct capture ce;
	int r;

	cap_start(&ce, 2);
	r = tlog_read(path, L);
	*err = cap_stop(&ce);
	return r;
}

static void log_roundtrip(bool emit, enum log_format fmt, bool hw, bool srv_hw, bool sw)
{
	enum { NT = 3 * NKIND };
	struct txn want[NT];
	int wst[NT];
	uint8_t *mem;
	struct tlog L;
	char path[128], name[160], why[256], *err = NULL, *text;
	const char *bad;
	size_t i;
	int r;
	uint32_t have_want = 0;

	reset_globals();
	opts.sw_stamps = sw;
	run.ts.hw = hw;
	log_setup(emit, &mem, 1000);
	sess.srv_hw = srv_hw;
	for (i = 0; i < NT; i++) {
		if (emit) {
			mk_emit_txn(&want[i], 100 + i, (int)(i % NKIND));
		} else {
			mk_reflect_txn(&want[i], 100 + i, (int)(i % NKIND) % 4);
		}
		wst[i] = txn_status(&want[i]);
		log_push(&want[i]);
	}
	tmp_path(path, sizeof(path), "log");
	r = log_to_file(path, fmt);
	text = read_file(path);
	r = r ? r : read_log(path, &L, &err);
	snprintf(name, sizeof(name), "log round trip %s %s (wire %s, server %s, app stamps %s)", emit ? "emit" : "reflect",
		 fmt == LOG_CSV ? "csv" : "text", hw ? "hw" : "ksw", srv_hw ? "hw" : "ksw", sw ? "on" : "off");
	bad = r ? "write/read failed" : log_compare(&L, want, wst, NT, fmt == LOG_TEXT, why, sizeof(why));
	ok(!bad, name, "%s; stderr '%s'", bad ? bad : "", err ? err : "");
	/* columns: what the format promises, labelled by source */
	if (fmt == LOG_CSV) {
		for (i = 0; i < (size_t)run.side.nstamps; i++) {
			have_want |= 1u << run.side.stamps[i];
		}
	} else {
		have_want = emit ? (1u << T1W | 1u << T4W | (sw ? (1u << T1SW | 1u << T4SW) : 0))
				 : (1u << T2W | 1u << T3W | (sw ? (1u << T2SW | 1u << T3SW) : 0));
	}
	snprintf(name, sizeof(name), "log header %s %s (wire %s%s%s): columns, side and source", emit ? "emit" : "reflect",
		 fmt == LOG_CSV ? "csv" : "text", hw ? "hw" : "ksw", emit ? ", server " : "", emit ? (srv_hw ? "hw" : "ksw") : "");
	ok(!r && L.have == have_want && L.emit == emit && L.csv == (fmt == LOG_CSV) && L.hw == hw &&
	   (!emit || fmt == LOG_TEXT || L.srv_hw == srv_hw), name, "have %#x want %#x emit %d csv %d hw %d srv_hw %d", L.have,
	   have_want, L.emit, L.csv, L.hw, L.srv_hw);
	if (fmt == LOG_TEXT && text) {
		char hdr[128];

		if (emit) {
			snprintf(hdr, sizeof(hdr), "SEQ%s T1_%s T4_%s%s RTT\n", sw ? " T1_SW" : "", hw ? "HW" : "KSW", hw ? "HW" : "KSW",
				 sw ? " T4_SW" : "");
		} else {
			snprintf(hdr, sizeof(hdr), "SEQ T2_%s%s T3_%s RESPONSE\n", hw ? "HW" : "KSW", sw ? " T2_SW T3_SW" : "",
				 hw ? "HW" : "KSW");
		}
		snprintf(name, sizeof(name), "log text header line is the earlier rant's: %.*s", (int)strlen(hdr) - 1, hdr);
		ok(!strncmp(text, hdr, strlen(hdr)) && text[strlen(hdr)] == '-' &&
		   text[2 * strlen(hdr) - 1] == '\n' && text[2 * strlen(hdr) - 2] == '-', name, "got '%.80s'", text);
	}
	if (fmt == LOG_CSV && text && emit) {
		/* the column line first (csv.DictReader's header), the facts as the last line */
		const char *last = strrchr(text, '\n');

		while (last && last > text && last[-1] != '\n') {
			last--;
		}
		ok(!strncmp(text, "seq,status,", 11) && strstr(text, ",rtt_ns,response_ns,network_ns,forward_ns,backward_ns\n") &&
		   last && !strncmp(last, "# rant ", 7) && strstr(last, "session=0x1234abcd") &&
		   strstr(last, "records=27 dropped=0") && strchr(text, '#') == last,
		   "log csv: the column line first, the facts (session, counts) the last line alone", "'%.200s'", text);
	}
	if (!r) {
		tlog_free(&L);
	}
	free(err);
	free(text);
	free(mem);
	unlink(path);
}

/* Write content to a file, alog_read it; check -1 and "path:LINE:" on stderr. */
static void log_corrupt(const char *name, const char *content, int line, const char *needle)
{
	char path[128], want[200], *err;
	struct tlog L;
	int r;

	tmp_path(path, sizeof(path), "bad");
	write_file(path, content);
	r = read_log(path, &L, &err);
	snprintf(want, sizeof(want), "%s:%d:", path, line);
	ok(r == -1 && one_rant_line(err) && strstr(err, want) && (!needle || strstr(err, needle)), name,
	   "r=%d stderr '%s' (want '%s'%s%s)", r, err, want, needle ? " and " : "", needle ? needle : "");
	tlog_free(&L);
	free(err);
	unlink(path);
}

static void test_log(void)
{
	log_roundtrip(true, LOG_TEXT, true, true, true);
	log_roundtrip(true, LOG_TEXT, false, false, false);
	log_roundtrip(true, LOG_TEXT, true, false, false);
	log_roundtrip(true, LOG_CSV, true, true, true);
	log_roundtrip(true, LOG_CSV, false, true, false);
	log_roundtrip(true, LOG_CSV, false, false, true);
	log_roundtrip(false, LOG_TEXT, true, true, true);
	log_roundtrip(false, LOG_TEXT, false, false, false);
	log_roundtrip(false, LOG_CSV, true, true, true);
	log_roundtrip(false, LOG_CSV, false, false, false);
}

static void test_log_ring(void)
{
	uint8_t *mem;
	struct txn x;
	struct tlog L;
	char path[128], *err;
	int st, r;
	uint64_t i;
	bool good;

	/* ring: keep the last N with their real sequence numbers */
	reset_globals();
	log_setup(true, &mem, 100);
	for (i = 0; i < 1000; i++) {
		mk_emit_txn(&x, i, K_OK);
		log_push(&x);
	}
	ok(sess.log.n == 100 && sess.log.dropped == 900 && sess.log.head == 1000, "log ring: cap 100, 1000 pushed -> 100 kept, 900 dropped",
	   "n=%" PRIu64 " dropped=%" PRIu64, sess.log.n, sess.log.dropped);
	for (i = 0, good = true; i < 100; i++) {
		log_get(&sess.log, i, &x, &st);
		good &= x.seq == 900 + i && st == ST_OK && x.t[T4SW] == 1700000000000000000ULL + (900 + i) * 1000003ULL + 93000;
	}
	ok(good, "log ring: log_get returns seqs 900..999 in order with their stamps", "failed");
	tmp_path(path, sizeof(path), "ring");
	r = log_to_file(path, LOG_CSV);
	r = r ? r : read_log(path, &L, &err);
	for (i = 0, good = !r && L.n == 100; good && i < L.n; i++) {
		good = L.row[i].seq == 900 + i && (!i || L.row[i].seq > L.row[i - 1].seq);
	}
	ok(good, "log ring: the file holds exactly the last 100, unique and increasing", "r=%d n=%" PRIu64, r, r ? 0 : L.n);
	{
		char *text = read_file(path);

		ok(text && strstr(text, "records=100 dropped=900"), "log ring: the csv header says records=100 dropped=900", "failed");
		free(text);
	}
	if (!r) {
		tlog_free(&L);
		free(err);
	}
	unlink(path);
	free(mem);
}

static void test_log_large(void)
{
	uint8_t *mem;
	struct txn x;
	struct tlog L;
	char path[128], *err;
	int r;
	uint64_t i;

	/* a large log: more than the writer's 1 MiB buffer */
	reset_globals();
	opts.sw_stamps = true;
	log_setup(true, &mem, 30000);
	for (i = 0; i < 30000; i++) {
		mk_emit_txn(&x, i, (int)(i % NKIND));
		log_push(&x);
	}
	tmp_path(path, sizeof(path), "big");
	r = log_to_file(path, LOG_CSV);
	r = r ? r : read_log(path, &L, &err);
	ok(!r && L.n == 30000 && L.row[29999].seq == 29999 && L.row[12345].seq == 12345,
	   "log: 30000 csv rows (several 1 MiB writes) read back", "r=%d n=%" PRIu64, r, r ? 0 : L.n);
	if (!r) {
		tlog_free(&L);
		free(err);
	}
	unlink(path);
	free(mem);
}

static void test_log_threshold(void)
{
	uint8_t *mem;
	struct txn x;
	int st;
	uint64_t i;

	/* -L: only rows above the threshold, plus lost and late ones */
	reset_globals();
	log_setup(true, &mem, 100);
	opts.log_threshold_ns = 5000;
	{
		static const int64_t rtt[] = { 4999, 5000, 5001, 100000, 1 };
		static const int kinds[] = { K_LOST, K_LATE, K_WARMUP, K_OK_NO_T4W, K_OK_NO_T1W };
		uint64_t kept[16];
		int n = 0;

		for (i = 0; i < 5; i++) {
			mk_emit_txn(&x, i, K_OK);
			x.t[T4W] = x.t[T1W] + (uint64_t)rtt[i];
			log_push(&x);
		}
		for (i = 0; i < 5; i++) {
			mk_emit_txn(&x, 10 + i, kinds[i]);
			if (kinds[i] == K_WARMUP) {
				x.t[T4W] = x.t[T1W] + 999999;
			}
			log_push(&x);
		}
		for (i = 0; i < sess.log.n; i++) {
			log_get(&sess.log, i, &x, &st);
			kept[n++] = x.seq;
		}
		ok(n == 4 && kept[0] == 2 && kept[1] == 3 && kept[2] == 10 && kept[3] == 11 && sess.log.filtered == 6,
		   "log -L 5 us: keeps rtt 5001 and 100000, lost and late; filters 6 (<= 5000, warm-up, unknown rtt)",
		   "kept %d (first %" PRIu64 "), filtered %" PRIu64, n, n ? kept[0] : 0, sess.log.filtered);
	}
	free(mem);
	reset_globals();
	log_setup(false, &mem, 100);
	opts.log_threshold_ns = 0;
	mk_reflect_txn(&x, 1, K_OK);
	log_push(&x);
	x.t[T3W] = x.t[T2W];	/* response 0: not above 0 */
	x.seq = 2;
	log_push(&x);
	ok(sess.log.n == 1 && sess.log.filtered == 1, "log -L 0 on reflect: filters on the response time", "n=%" PRIu64, sess.log.n);
	free(mem);
}

static void test_log_corrupt(void)
{
	struct tlog L;
	char path[128], *err;
	int r;

	/* corrupted logs: an error with the line number */
	{
		static const char hdr[] = "SEQ T1_HW T4_HW RTT\n-------------------\n";
		static const char row0[] = "0 1700000000.000000000 1700000000.000010000 10000\n";
		static const char row1[] = "1 1700000001.000000000 1700000001.000020000 20000\n";
		static const char chdr[] = "# rant 1.0.0 mode=emit wire=hardware\nseq,status,t1_hw,t4_hw,rtt_ns\n";
		char buf[1024];

		snprintf(buf, sizeof(buf), "%s%s%s", hdr, row0, row1);
		tmp_path(path, sizeof(path), "good");
		write_file(path, buf);
		r = read_log(path, &L, &err);
		ok(r == 0 && L.n == 2 && L.emit && L.hw && L.row[1].t[T4W] == 1700000001000020000ULL && !*err,
		   "log read: a hand-written text log parses", "r=%d err '%s'", r, err);
		tlog_free(&L);
		free(err);
		unlink(path);
		snprintf(buf, sizeof(buf), "SEQ T1_HW T4_HW RTT\r\n---\r\n\r\n0 1700000000.000000000 1700000000.000010000 10000\r\n");
		write_file(path, buf);
		r = read_log(path, &L, &err);
		ok(r == 0 && L.n == 1, "log read: CRLF line ends and blank lines are accepted", "r=%d err '%s'", r, err);
		tlog_free(&L);
		free(err);
		unlink(path);

		snprintf(buf, sizeof(buf), "%s%s1 1700000001.00000000 1700000001.000020000 20000\n", hdr, row0);
		log_corrupt("log read: bad timestamp (8 digits) -> line 4", buf, 4, "bad timestamp");
		snprintf(buf, sizeof(buf), "%s%s1 1700000001.000000000 1700000001.0000200x0 20000\n", hdr, row0);
		log_corrupt("log read: bad timestamp (letter) -> line 4", buf, 4, "bad timestamp");
		snprintf(buf, sizeof(buf), "%s0 1700000000.000000000 10000\n%s", hdr, row1);
		log_corrupt("log read: too few fields -> line 3", buf, 3, "too few");
		snprintf(buf, sizeof(buf), "%s%s1 1700000001.000000000 1700000001.000020000 20000 7\n", hdr, row0);
		log_corrupt("log read: too many fields -> line 4", buf, 4, "too many");
		snprintf(buf, sizeof(buf), "%s%s1 1700000001.000000000 1700000001.000020000 20001\n", hdr, row0);
		log_corrupt("log read: latency not matching the stamps -> line 4", buf, 4, "does not match");
		snprintf(buf, sizeof(buf), "%s%s1 1700000001.000000000 - 20000\n", hdr, row0);
		log_corrupt("log read: latency without its stamp -> line 4", buf, 4, "does not match");
		snprintf(buf, sizeof(buf), "%s%s1 1700000001.000000000 1700000001.000020000 2e4\n", hdr, row0);
		log_corrupt("log read: latency not a number -> line 4", buf, 4, "bad latency");
		snprintf(buf, sizeof(buf), "%s%s1 1700000001.000000000 1700000001.000020000 20000", hdr, row0);
		log_corrupt("log read: truncated last line (no newline) -> line 4", buf, 4, "truncated");
		snprintf(buf, sizeof(buf), "%s%s1 1700000001.000000000 17000", hdr, row0);
		log_corrupt("log read: file cut mid-row -> line 4", buf, 4, NULL);
		snprintf(buf, sizeof(buf), "SEQ T1_HW T9_HW RTT\n---\n%s", row0);
		log_corrupt("log read: unknown column -> line 1", buf, 1, "T9_HW");
		snprintf(buf, sizeof(buf), "SEQ T1_HW T4_HW LATENCY\n---\n%s", row0);
		log_corrupt("log read: unknown value column -> line 1", buf, 1, "LATENCY");
		snprintf(buf, sizeof(buf), "T1_HW SEQ T4_HW RTT\n---\n%s", row0);
		log_corrupt("log read: SEQ not first -> line 1", buf, 1, "SEQ");
		snprintf(buf, sizeof(buf), "SEQ T1_HW T4_HW RTT\n%s", row0);
		log_corrupt("log read: missing dashed line -> line 2", buf, 2, "dashed");
		snprintf(buf, sizeof(buf), "%s%s%s%s", hdr, row0, hdr, row1);
		log_corrupt("log read: a second text header -> line 4", buf, 4, "SEQ");
		snprintf(buf, sizeof(buf), "%s%sx 1700000001.000000000 1700000001.000020000 20000\n", hdr, row0);
		log_corrupt("log read: bad sequence number -> line 4", buf, 4, "sequence");
		snprintf(buf, sizeof(buf), "%s\n\n%s\n1 1.5 1700000001.000020000 20000\n", hdr, row0);
		log_corrupt("log read: blank lines count in the line number -> line 7", buf, 7, "bad timestamp");
		snprintf(buf, sizeof(buf), "%s1,ok,1700000000.000000000,1700000000.000010000,10000\n", chdr);
		tmp_path(path, sizeof(path), "csv");
		write_file(path, buf);
		r = read_log(path, &L, &err);
		ok(r == 0 && L.n == 1 && L.csv && L.status[0] == ST_OK, "log read: a hand-written csv log parses", "r=%d err '%s'",
		   r, err);
		tlog_free(&L);
		free(err);
		unlink(path);
		snprintf(buf, sizeof(buf), "%s1,ok,1700000000.000000000,1700000000.000010000,10000\n%s", chdr, chdr);
		log_corrupt("log read: a second csv header (two sessions) -> line 4", buf, 4, "second log header");
		snprintf(buf, sizeof(buf), "%s1,okay,1700000000.000000000,1700000000.000010000,10000\n", chdr);
		log_corrupt("log read: bad csv status -> line 3", buf, 3, "okay");
		snprintf(buf, sizeof(buf), "%s1,ok,1700000000.000000000,1700000000.000010000,\n", chdr);
		log_corrupt("log read: csv ok row with its latency missing -> line 3", buf, 3, NULL);
		snprintf(buf, sizeof(buf), "%s1,ok,1700000000.000000000,1700000000.000010000\n", chdr);
		log_corrupt("log read: csv row with a field missing -> line 3", buf, 3, "too few");
		log_corrupt("log read: not a log at all -> line 1", "hello world\n", 1, NULL);
		{
			struct tlog E;

			tmp_path(path, sizeof(path), "empty");
			write_file(path, "failed");
			r = read_log(path, &E, &err);
			ok(r == -1 && one_rant_line(err) && strstr(err, path), "log read: empty file -> error naming it", "r=%d '%s'", r,
			   err);
			free(err);
			unlink(path);
			r = read_log("/tmp/rant-unit-no-such-file", &E, &err);
			ok(r == -1 && one_rant_line(err) && strstr(err, "rant-unit-no-such-file"), "log read: missing file -> error",
			   "r=%d '%s'", r, err);
			free(err);
		}
	}
}

/*
 * The client's log joined with the reflector's, as --analyze joins them
 * (analyze_load, join_row) while it reads: the client's rows, their server
 * stamps filled; *err what was said.  fix: called on each row before the join.
 */
static uint64_t join_logs(const char *emit, const char *rpath, struct tlog *out, uint64_t *mism, char **err,
			  void (*fix)(struct txn *x))
{
	struct analysis *A = calloc(1, sizeof(*A));
	struct capture ce;
	uint64_t joined = 0;
	int r = -1;

	memset(out, 0, sizeof(*out));
	opts.analyze[0] = emit;
	opts.analyze[1] = rpath;
	A->nlogs = 2;
	A->L[0].fd = A->L[1].fd = -1;
	cap_start(&ce, 2);
	if (analyze_load(A) == 0) {
		analyze_pass_reset(A);
		while ((r = alog_next(&A->L[0])) > 0) {
			out->row = realloc(out->row, (out->n + 1) * sizeof(*out->row));
			if (fix) {
				fix(&A->L[0].x);
			}
			if (join_row(A, &A->L[0].x) < 0) {
				break;
			}
			out->row[out->n++] = A->L[0].x;
		}
		joined = A->joined;
		*mism = A->mism;
		out->hw = A->L[0].hw;
		out->srv_hw = A->L[0].srv_hw;
		out->have = A->L[0].have;
	}
	*err = cap_stop(&ce);
	alog_close(&A->L[0]);
	alog_close(&A->L[1]);
	free(A->jw);
	free(A);
	opts.analyze[0] = opts.analyze[1] = NULL;
	return joined;
}

/* An echoed stamp the reflect log disagrees with, and one the client never got. */
static void join_fix(struct txn *x)
{
	if (x->seq == 5) {
		x->t[T3W] = 0;
	} else if (x->seq == 6) {
		x->t[T3W] += 1;
	}
}

static void test_log_join(void)
{
	uint8_t *mem;
	struct txn x;
	struct tlog L;
	char path[128], path2[128], *err = NULL;
	int r;
	uint64_t i, joined, mism = 0;
	bool good;

	/* join an emit and a reflect log by SEQ */
	reset_globals();
	opts.sw_stamps = true;
	run.ts.hw = true;
	log_setup(true, &mem, 100);
	for (i = 0; i < 10; i++) {
		mk_emit_txn(&x, i, K_OK);
		log_push(&x);
	}
	tmp_path(path, sizeof(path), "emit");
	r = log_to_file(path, LOG_TEXT);
	free(mem);
	log_setup(false, &mem, 100);
	run.ts.hw = false;
	for (i = 3; i < 15; i++) {
		mk_reflect_txn(&x, i, K_OK);
		log_push(&x);
	}
	tmp_path(path2, sizeof(path2), "reflect");
	r = r ? r : log_to_file(path2, LOG_TEXT);
	free(mem);
	joined = join_logs(path, path2, &L, &mism, &err, NULL);
	ok(!r && joined == 7 && L.n == 10, "log join: 7 SEQs in both logs", "r=%d joined %" PRIu64 " rows %" PRIu64, r,
	   joined, L.n);
	for (i = 0, good = L.n == 10; i < L.n && good; i++) {
		struct txn w;

		mk_reflect_txn(&w, L.row[i].seq, K_OK);
		if (L.row[i].seq >= 3) {
			good = L.row[i].t[T2W] == w.t[T2W] && L.row[i].t[T2SW] == w.t[T2SW] &&
			       L.row[i].t[T3SW] == w.t[T3SW] && L.row[i].t[T3W] == w.t[T3W];
		} else {
			good = !L.row[i].t[T2W] && !L.row[i].t[T3W];
		}
	}
	ok(good && !mism && err && !*err, "log join: server stamps filled by SEQ, unmatched rows untouched",
	   "row %" PRIu64 " mism %" PRIu64 " stderr '%s'", i, mism, err ? err : "");
	ok(!L.srv_hw && L.hw && (L.have & (1u << T3W)), "log join: server source and columns come from the reflect log",
	   "srv_hw %d have %#x", L.srv_hw, L.have);
	tlog_free(&L);
	free(err);
	/* an echoed stamp that disagrees with the reflect log is counted (analyze_finish says so) */
	joined = join_logs(path, path2, &L, &mism, &err, join_fix);
	ok(joined == 7 && mism == 1 && L.n == 10 && L.row[5].t[T3W], "log join: a disagreeing stamp is counted, a missing one filled",
	   "joined %" PRIu64 " mism %" PRIu64, joined, mism);
	tlog_free(&L);
	free(err);
	unlink(path);
	unlink(path2);
	reset_globals();
}

/* ------------------------------------------------- the earlier rant's */

/* One invocation: its result, exactly one "rant: " line on stderr holding needle. */
static void compat_line(const char *argv, int want, const char *needle, const char *name)
{
	struct args a;
	char *out, *err;
	int r = parse_str(argv, &a, &out, &err);

	ok(r == want && one_rant_line(err) && strstr(err, needle), name, "'%s' returned %d, stderr '%s'", argv, r, err);
	free(out);
	free(err);
}

/* The earlier rant's flags, its Histogram Summary block and -N's response. */
static void test_compat(void)
{
	static const char *const want =
		"Histogram Summary:\n"
		"  Samples   :  5\n"
		"  Minimum   :  6.88 us (#11)\n"
		"  Maximum   :  1234.57 us (#14)\n"
		"  Average   :  253.90 us\n"
		"  Percentiles (us):\n"
		"    50th    :  9 (Median)\n"
		"    90th    :  1234\n"
		"    95th    :  1234\n"
		"    99th    :  1234\n"
		"    99.9th  :  1234\n"
		"    99.99th :  1234\n"
		"   99.999th :  1234\n\n";
	static const int64_t v[] = { 9950, 6875, 9000, 9100, 1234567 };
	uint64_t b[10000] = { 0 }, t[NSTAMP] = { 0 };
	int64_t o[8], r = 0;
	struct capture c;
	struct hist h;
	char *out;
	size_t i;

	/* options: the reflector takes -w; -N/-R/-F set what they say; -2 is refused */
	GOOD("-w 10000 -N -H -p 50 -B 1 -P", opts.mode == MODE_REFLECT && opts.warmup == 10000 && opts.no_tx_ts);
	GOOD("-R", opts.ts == TS_SW);
	GOOD("-F", opts.fast_path && opts.no_tx_ts && opts.spin);
	compat_line("-a h -N", 0, "--no-tx-ts: a reflector option", "compat: -N on emit: one line");
	ok(!opts.no_tx_ts, "compat: -N on emit: not used", "no_tx_ts set");
	compat_line("-a h -F", 0, "--fast-path: a reflector option", "compat: -F on emit: one line");
	ok(!opts.fast_path && !opts.spin, "compat: -F on emit: not used", "fast_path %d spin %d", opts.fast_path, opts.spin);
	compat_line("-2", -1, "3 CPUs", "compat: -2 refused, says it needs 3 CPUs");
	compat_line("-2", -1, "run without -2", "compat: -2 refused, says what to do instead");
	compat_line("-R --timestamps hw", -1, "--no-hw-ts", "compat: -R with --timestamps: one of them");

	/* the Histogram Summary block, byte for byte */
	reset_globals();
	hist_init(&h, 100, 1000000, b, o, 8, test_lh(NMETRIC));
	for (i = 0; i < ARRAY_SIZE(v); i++) {
		hist_add(&h, v[i], 10 + i);
	}
	hist_finish(&h);
	cap_start(&c, 1);
	print_earlier_summary(stdout, &h);
	fflush(stdout);
	out = cap_stop(&c);
	ok(!strcmp(out, want), "compat: Histogram Summary block in the earlier shape", "got\n%s", out);
	free(out);
	hist_reset(&h);
	cap_start(&c, 1);
	print_earlier_summary(stdout, &h);
	fflush(stdout);
	out = cap_stop(&c);
	ok(!strcmp(out, "Histogram Summary:\n  Samples   :  0\n\n"), "compat: empty Histogram Summary", "got '%s'", out);
	free(out);

	/* -N: the reflector's response ends at T3_SW; without it at the T3 wire stamp */
	t[T2W] = 1000;
	t[T3SW] = 1500;
	t[T3W] = 2600;
	opts.mode = MODE_REFLECT;
	side_set(false);
	ok(metric_value(M_RESPONSE, t, &r) && r == 1600, "compat: response = T3 wire - T2 wire", "%" PRId64, r);
	opts.no_tx_ts = true;
	ok(metric_value(M_RESPONSE, t, &r) && r == 500 && resp_tx_app(), "compat: -N: response = T3_SW - T2 wire",
	   "%" PRId64, r);
	t[T3SW] = 0;
	ok(!metric_value(M_RESPONSE, t, &r), "compat: -N without T3_SW: no response", "%" PRId64, r);

	/* --client-no-tx-ts: the client's rtt starts at T1_SW; what needs T1 wire is gone */
	memset(t, 0, sizeof(t));
	t[T1SW] = 1000;
	t[T2W] = 1300;
	t[T3W] = 1400;
	t[T4W] = 1900;
	opts.no_tx_ts = false;
	opts.mode = MODE_EMIT;
	side_set(true);
	ok(!metric_value(M_RTT, t, &r) && !strstr(metric_label(M_RTT), "T1_SW"),
	   "client tx: without the option, no T1 wire stamp: no rtt", "%" PRId64, r);
	ok(ts_socket_flags() & SOF_TIMESTAMPING_TX_SOFTWARE, "client tx: without the option, TX stamps asked for",
	   "%#x", ts_socket_flags());
	opts.cli_no_tx = true;
	ok(metric_value(M_RTT, t, &r) && r == 900 && strstr(metric_label(M_RTT), "T4 wire-T1_SW"),
	   "client tx: --client-no-tx-ts: rtt = T4 wire - T1_SW, labelled so", "%" PRId64 " %s", r,
	   metric_label(M_RTT));
	ok(!metric_value(M_CLI_TX, t, &r) && !metric_value(M_NETWORK, t, &r) && !metric_value(M_FORWARD, t, &r),
	   "client tx: --client-no-tx-ts: no client tx stack, network or forward", "%" PRId64, r);
	ok(!(ts_socket_flags() & (SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_TX_HARDWARE)) &&
	   (ts_socket_flags() & SOF_TIMESTAMPING_RX_SOFTWARE),
	   "client tx: --client-no-tx-ts: no TX stamps asked for, RX stamps still", "%#x", ts_socket_flags());
	opts.mode = MODE_REFLECT;
	side_set(false);
	ok(ts_socket_flags() & SOF_TIMESTAMPING_TX_SOFTWARE, "client tx: the option is the client's only",
	   "%#x", ts_socket_flags());
	opts.cli_no_tx = false;

	/* two signals at once (timeout(1)): one request to stop, no exit */
	run.stop_signal = 0;
	run.first_signal_ns = 0;
	on_signal(SIGINT);
	on_signal(SIGINT);
	ok(run.stop_signal == 1, "compat: a second signal at once is the same request", "stop_signal %d", (int)run.stop_signal);
	run.stop_signal = 0;
	run.first_signal_ns = 0;
	reset_globals();
}

/* ------------------------------------------------------ protocol rules */

/* A mini window for emit_packet/reflect_packet, no socket (sends fail). */
static struct txn guard_win[256];
static uint64_t guard_keyseq[256];

static void guard_setup(bool emit)
{
	reset_globals();
	side_set(emit);
	memset(guard_win, 0, sizeof(guard_win));
	run.win.slot = guard_win;
	run.win.mask = 255;
	memset(&emitter, 0, sizeof(emitter));
	memset(&refl, 0, sizeof(refl));
	emitter.keyseq = guard_keyseq;
	refl.log_fd = -1;
	run.echo.q = NULL;
	run.sock_fd = -1;
	run.key.on = false;
	sess.id = 0x5151;
}

/* a datagram of cfg.size bytes with the given header */
static size_t guard_msg(uint8_t *buf, int type, uint32_t session, uint64_t seq, uint16_t flags)
{
	struct proto_msg m = { .type = (uint8_t)type, .session = session, .seq = seq, .flags = flags };

	memset(buf, 0, opts.size);
	proto_encode(buf, &m);
	return opts.size;
}

static void test_guard(void)
{
	static const uint64_t k16[2] = { 0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL };
	uint8_t msg[15];
	int i;

	/* SipHash-2-4: the test vectors of the SipHash paper (key 00..0f) */
	for (i = 0; i < 15; i++) {
		msg[i] = (uint8_t)i;
	}
	ok(siphash24(k16, msg, 15) == 0xa129ca6149be45e5ULL, "guard: SipHash-2-4 of 00..0e (the paper's vector)",
	   "%016" PRIx64, siphash24(k16, msg, 15));
	ok(siphash24(k16, msg, 0) == 0x726fdb47dd0e0e31ULL, "guard: SipHash-2-4 of the empty message",
	   "%016" PRIx64, siphash24(k16, msg, 0));
}

static void test_guard_keyfile(void)
{
	char path[128];
	struct capture c;
	char *e;
	int i, r;

	/* --key-file: mode, size */
	{
		static const struct { const char *content; int len; unsigned mode; bool good; const char *why; } kf[] = {
			{ "0123456789abcdef0123456789abcdef", 32, 0600, true, "" },
			{ "0123456789abcdef", 16, 0400, true, "" },
			{ "0123456789abcdef0123456789abcdef", 32, 0640, false, "group or others" },
			{ "0123456789abcdef0123456789abcdef", 32, 0604, false, "group or others" },
			{ "", 0, 0600, false, "empty" },
			{ "0123456789abcde", 15, 0600, false, "short" },
		};

		for (i = 0; i < (int)ARRAY_SIZE(kf); i++) {
			char name[160];
			int fd;

			tmp_path(path, sizeof(path), "key");
			unlink(path);
			fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
			if (fd < 0 || write(fd, kf[i].content, (size_t)kf[i].len) != kf[i].len) {
				ok(false, "guard: key file written", "%s", strerror(errno));
			}
			close(fd);
			chmod(path, kf[i].mode);
			run.key.on = false;
			cap_start(&c, 2);
			r = key_load(path);
			e = cap_stop(&c);
			snprintf(name, sizeof(name), "guard: key file of %d bytes, mode %03o: %s", kf[i].len, kf[i].mode,
				 kf[i].good ? "loaded" : kf[i].why);
			ok(kf[i].good ? (r == 0 && run.key.on && !*e) : (r < 0 && !run.key.on && one_rant_line(e) &&
				strstr(e, "--key-file") && strstr(e, kf[i].why)), name, "r=%d '%s'", r, e);
			free(e);
			unlink(path);
		}
		tmp_path(path, sizeof(path), "big");
		{
			int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
			char big[KEY_MAX + 10];

			memset(big, 'k', sizeof(big));
			ok(fd >= 0 && write(fd, big, sizeof(big)) == (ssize_t)sizeof(big), "guard: big key file written", "-");
			close(fd);
		}
		cap_start(&c, 2);
		r = key_load(path);
		e = cap_stop(&c);
		ok(r < 0 && one_rant_line(e) && strstr(e, "too long"), "guard: a key file over 4096 bytes is refused", "'%s'", e);
		free(e);
		unlink(path);
		cap_start(&c, 2);
		r = key_load("/nonexistent/rant-key");
		e = cap_stop(&c);
		ok(r < 0 && one_rant_line(e), "guard: a missing key file is one line", "'%s'", e);
		free(e);
		/* a FIFO nobody writes: refused at once (it would block both ends' open) */
		tmp_path(path, sizeof(path), "fifo");
		unlink(path);
		ok(mkfifo(path, 0600) == 0, "guard: a FIFO made", "%s", strerror(errno));
		cap_start(&c, 2);
		r = key_load(path);
		e = cap_stop(&c);
		ok(r < 0 && one_rant_line(e) && strstr(e, "not a regular file"), "guard: a FIFO as key file: refused, not waited on",
		   "'%s'", e);
		free(e);
		unlink(path);
	}
}

static void test_guard_tags(void)
{
	uint8_t buf[PROTO_HDR_LEN + 64];
	int i;

	/* tags: the right key passes, any flipped bit or missing tag fails */
	run.key.on = true;
	run.key.k[0] = 1;
	run.key.k[1] = 2;
	memset(buf, 0x33, sizeof(buf));
	guard_msg(buf, PT_PING, 7, 9, 0);
	opts.size = PROTO_HDR_LEN + 32;
	tag_put(buf, opts.size);
	ok(tag_ok(buf, opts.size), "guard: a tagged datagram passes", "-");
	{
		int bad = -1;

		for (i = 0; i < (int)opts.size * 8; i++) {
			buf[i / 8] ^= (uint8_t)(1 << (i % 8));
			if (tag_ok(buf, opts.size)) {
				bad = i;
			}
			buf[i / 8] ^= (uint8_t)(1 << (i % 8));
		}
		ok(bad < 0, "guard: every flipped bit (header, tag, payload) fails the tag", "bit %d passed", bad);
	}
	ok(!tag_ok(buf, PROTO_HDR_LEN), "guard: a header-only datagram has no tag", "-");
	run.key.k[1] = 3;
	ok(!tag_ok(buf, opts.size), "guard: another key fails", "-");
	run.key.on = false;
	ok(tag_ok(buf, 10), "guard: without a key nothing is checked", "-");
}

static void test_guard_stamps(void)
{
	uint64_t t[NSTAMP] = { 0 };
	int64_t v;

	/* stamps: nothing impossible becomes a number, nothing overflows */
	ok(!stamp_diff(1ULL << 63, 1, &v), "guard: a stamp of 2^63 gives no difference", "-");
	ok(stamp_diff(STAMP_MAX - 1, 1, &v) && v == (int64_t)(STAMP_MAX - 2), "guard: stamps below 2^62 do", "-");
	t[T1W] = 1;
	t[T4W] = STAMP_MAX - 1;
	t[T2W] = STAMP_MAX - 1;
	t[T3W] = 1;
	ok(metric_value(M_NETWORK, t, &v) && v == (int64_t)(STAMP_MAX - 2) * 2, "guard: network of extreme stamps is exact",
	   "%" PRId64, v);
	t[T3W] = 1ULL << 63;
	ok(!metric_value(M_RESPONSE, t, &v) && !metric_value(M_NETWORK, t, &v), "guard: T3 of 2^63: no response, no network",
	   "-");
	{
		struct proto_msg m = { .t2w = 100, .t3w = 200, .t2sw = 150, .t3sw = 160 };

		ok(echo_plausible(&m), "guard: ordered echoed stamps are plausible", "-");
		m.t3sw = 140;
		ok(!echo_plausible(&m), "guard: T3 app before T2 app is not", "-");
		m.t3sw = 0;
		m.t3w = 1ULL << 63;
		ok(!echo_plausible(&m), "guard: an echoed stamp of 2^63 is not", "-");
	}
	{
		struct txn x = { 0 };

		x.t[T2W] = 1000;
		ok(!echo_t3_plausible(&x, 999), "guard: T3 wire before T2 wire is refused", "-");
		ok(echo_t3_plausible(&x, 1500), "guard: T3 wire after T2 wire is taken", "-");
		x.t[T1W] = 500;
		x.t[T4W] = 2500;	/* rtt 2000 ns */
		ok(!echo_t3_plausible(&x, 1000 + 2000 + 1000 + 100), "guard: held longer than the round trip: refused", "-");
		ok(echo_t3_plausible(&x, 1000 + 2000), "guard: held as long as the round trip (one clock each side): taken", "-");
	}
}

static void test_guard_peers(void)
{
	struct sockaddr_in a1 = { .sin_family = AF_INET, .sin_port = htons(4000) }, a2 = a1, a0 = a1;

	/* peers */
	a1.sin_addr.s_addr = htonl(0x0a000001);
	a2.sin_addr.s_addr = htonl(0x0a000001);
	{
		struct sockaddr_storage ss;

		memset(&ss, 0, sizeof(ss));
		memcpy(&ss, &a1, sizeof(a1));
		ok(sa_same(&ss, (struct sockaddr *)&a2), "guard: same address and port: same peer", "-");
		a2.sin_port = htons(4001);
		ok(!sa_same(&ss, (struct sockaddr *)&a2), "guard: another port: another peer", "-");
		a2.sin_port = a1.sin_port;
		a2.sin_addr.s_addr = htonl(0x0a000002);
		ok(!sa_same(&ss, (struct sockaddr *)&a2), "guard: another address: another peer", "-");
		a0.sin_port = 0;
		ok(sa_port((struct sockaddr *)&a0) == 0 && sa_port((struct sockaddr *)&a1) == 4000, "guard: source ports", "-");
	}
}

static void test_guard_client(void)
{
	uint8_t buf[PROTO_HDR_LEN + 256];
	int i;

	/* the client: replays, unasked FIN_ACK, length, BUSY, echoes owed */
	guard_setup(true);
	opts.size = PROTO_HDR_LEN;
	for (i = 0; i < 600; i++) {
		struct txn *x = &run.win.slot[(uint64_t)i & run.win.mask];

		emitter.next_seq = (uint64_t)i + 1;
		if (x->st & TF_USED) {
			txn_retire(x);
		}
		memset(x, 0, sizeof(*x));
		x->seq = (uint64_t)i;
		x->st = TF_USED | TF_SENT;
		x->deadline = UINT64_MAX;
		answered_set((uint64_t)i, false);
		emitter.outstanding++;
		sess.c.sent++;
		if (i != 3) {	/* ping 3 is lost */
			emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, (uint64_t)i, 0), 0, 0, false);
		} else {
			emit_lost(x);
		}
	}
	ok(sess.c.received == 599 && sess.c.lost == 1 && !sess.c.late && !sess.c.duplicate, "guard: client counts 599 + 1 lost",
	   "r %" PRIu64 " l %" PRIu64, sess.c.received, sess.c.lost);
	emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, 0, 0), 0, 0, false);
	emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, 1, 0), 0, 0, false);
	ok(sess.c.duplicate == 2 && sess.c.late == 0, "guard: replayed pongs beyond the window are duplicates, never late",
	   "dup %" PRIu64 " late %" PRIu64, sess.c.duplicate, sess.c.late);
	emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, 3, 0), 0, 0, false);
	emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, 3, 0), 0, 0, false);
	ok(sess.c.late == 1 && sess.c.duplicate == 3 && sess.c.late <= sess.c.lost,
	   "guard: the lost ping's first pong is late, its replay a duplicate", "late %" PRIu64 " dup %" PRIu64,
	   sess.c.late, sess.c.duplicate);
	emit_packet(buf, guard_msg(buf, PT_FIN_ACK, sess.id, 600, PF_T3W), 0, 0, false);
	ok(sess.c.rejected[GR_FIN_ACK_UNASKED] == 1 && !result.fin_acked, "guard: a FIN_ACK before our FIN is refused", "-");
	{
		struct proto_msg m = { .type = PT_FIN_ACK, .session = sess.id, .seq = 600, .flags = PF_T3W,
				       .t3w = 5000, .t3w_seq = 599 };

		emitter.fin_sent = true;
		proto_encode(buf, &m);
		emit_packet(buf, opts.size, 0, 0, false);
		ok(!result.fin_acked && sess.c.rejected[GR_LENGTH] == 1,
		   "guard: a FIN_ACK shorter than the FIN (fin_len: room for its blocks) is refused", "-");
		sess.c.rejected[GR_LENGTH] = 0;
		memset(buf, 0, sizeof(buf));
		proto_encode(buf, &m);
		emit_packet(buf, fin_len(), 0, 0, false);
		ok(result.fin_acked && run.win.slot[599 & run.win.mask].t[T3W] == 5000, "guard: after the FIN, a FIN_ACK's owed stamp is taken",
		   "%" PRIu64, run.win.slot[599 & run.win.mask].t[T3W]);
		m.t3w = 7000;
		proto_encode(buf, &m);
		emit_packet(buf, fin_len(), 0, 0, false);
		ok(run.win.slot[599 & run.win.mask].t[T3W] == 5000 && sess.c.rejected[GR_ECHO_UNOWED] == 1,
		   "guard: a second T3 for the same ping never overwrites the first", "-");
	}
	{
		/* the client reads up to fin_len bytes now; longer than --size is still oversized */
		struct proto_msg f = { .type = PT_PONG, .session = sess.id + 1, .seq = 1 };
		uint64_t inv = sess.c.invalid, fo = sess.c.foreign, lng = sess.c.invalid_why[PE_LONG];

		memset(buf, 0, sizeof(buf));
		proto_encode(buf, &f);
		emit_packet(buf, 200, 0, 0, false);
		ok(sess.c.invalid == inv + 1 && sess.c.foreign == fo && sess.c.invalid_why[PE_LONG] == lng + 1,
		   "guard: a datagram longer than --size (not a FIN_ACK of fin_len) is oversized", "-");
	}
	opts.size = PROTO_HDR_LEN + 16;
	guard_msg(buf, PT_PONG, sess.id, 598, 0);
	emit_packet(buf, PROTO_HDR_LEN, 0, 0, false);
	ok(sess.c.rejected[GR_LENGTH] == 1, "guard: a pong shorter than the ping is refused", "-");
	emit_packet(buf, guard_msg(buf, PT_BUSY, sess.id, 1, 0), 0, 0, false);
	ok(!result.busy && sess.c.rejected[GR_IMPLAUSIBLE] == 1, "guard: BUSY after the reflector answered is refused", "-");
	sess.c.received = sess.c.late = 0;
	guard_msg(buf, PT_BUSY, sess.id, 1, 0);
	emit_packet(buf, PROTO_HDR_LEN, 0, 0, false);
	ok(result.busy && sess.stop_reason == STOP_ERROR, "guard: BUSY before any answer ends the client", "-");
}

/*
 * The ended-session memory forgets by age: sessions whose ids share the
 * hash's bucket are all remembered, and the oldest of ENDED_CAP + n is the
 * one forgotten, whatever the ids.
 */
static void test_ended_age(void)
{
	struct proto_msg m = { .type = PT_PING, .seq = 5 };
	uint32_t same[8], id, n = 0, i;
	uint16_t *b0;
	bool all = true;

	guard_setup(false);
	memset(refl.ended, 0, sizeof(refl.ended));
	memset(refl.ended_head, 0, sizeof(refl.ended_head));
	refl.ended_n = 0;
	b0 = ended_bucket(1);
	for (id = 2; n < ARRAY_SIZE(same); id++) {
		if (ended_bucket(id) == b0) {
			same[n++] = id;
		}
	}
	refl.any = true;
	refl.top = 10;
	for (i = 0; i < n; i++) {
		sess.id = same[i];
		reflect_remember(STOP_FIN);
	}
	for (i = 0; i < n; i++) {
		m.session = same[i];
		all = all && reflect_replayed(&m);
	}
	ok(all, "ended: eight sessions of one hash bucket, every one remembered", "%s", "");
	m.seq = 11;
	ok(!reflect_replayed(&m), "ended: a ping above the session's top goes on (not a replay)", "%s", "");
	m.seq = 5;
	for (i = 0; i < ENDED_CAP - n + 1; i++) {
		sess.id = 0x10000 + i;
		reflect_remember(STOP_IDLE);
	}
	m.session = same[0];
	ok(!reflect_replayed(&m), "ended: ENDED_CAP + 1 ends in all: the oldest forgotten", "%s", "");
	for (all = true, i = 1; i < n; i++) {
		m.session = same[i];
		all = all && reflect_replayed(&m);
	}
	m.session = 0x10000;
	ok(all && reflect_replayed(&m), "ended: the other seven and the newer ones still remembered", "%s", "");
	sess.id = same[1];
	refl.top = 40;
	reflect_remember(STOP_IDLE);
	m.session = same[1];
	m.seq = 30;
	ok(reflect_replayed(&m), "ended: an id that ends again keeps its latest end (top 40)", "%s", "");
	sess.id = 0x20000;
	reflect_remember(STOP_IDLE);
	m.session = same[2];
	m.seq = 5;
	ok(!reflect_replayed(&m), "ended: the next end forgets the oldest left", "%s", "");
	m.session = same[1];
	ok(reflect_replayed(&m), "ended: the re-ended id counts as new, not forgotten with its first end", "%s", "");
	reset_globals();
}

static void test_guard_reflector(void)
{
	uint8_t buf[PROTO_HDR_LEN + 64];
	struct sockaddr_in a1 = { .sin_family = AF_INET, .sin_port = htons(4000) }, a0 = a1;

	/* the reflector: port 0, peers, idle hints, seqs far ahead, unknown FINs */
	guard_setup(false);
	a0.sin_port = 0;
	{
		static struct echo q[ECHO_CAP];
		struct sockaddr_in6 p6 = { .sin6_family = AF_INET6, .sin6_port = htons(5000) }, o6 = p6;
		struct proto_msg m = { .type = PT_PING, .session = 0x77, .seq = 0, .idle_ms = 0x80000000u };

		run.echo.q = q;
		opts.size = PROTO_HDR_LEN;
		o6.sin6_port = htons(5001);
		proto_encode(buf, &m);
		reflect_packet(buf, PROTO_HDR_LEN, 0, 0, false, (struct sockaddr *)&a0, sizeof(a0));
		ok(!refl.active && refl.carry_rej[GR_PORT0] == 1, "guard: a ping from port 0 opens no session", "-");
		m.type = PT_FIN;
		proto_encode(buf, &m);
		reflect_packet(buf, PROTO_HDR_LEN, 0, 0, false, (struct sockaddr *)&p6, sizeof(p6));
		ok(!refl.active && refl.carry_rej[GR_FIN_UNKNOWN] == 1, "guard: a FIN of no session is counted", "-");
		m.type = PT_PING;
		proto_encode(buf, &m);
		reflect_packet(buf, PROTO_HDR_LEN, 0, 0, false, (struct sockaddr *)&p6, sizeof(p6));
		ok(refl.active && sess.id == 0x77 && sess.c.rejected[GR_PORT0] == 1 && sess.c.rejected[GR_FIN_UNKNOWN] == 1,
		   "guard: the next session opens, and reports what came before it", "-");
		ok(refl.idle_ns == 2ULL * IDLE_MAX_MS * 1000000ULL, "guard: an idle hint of 2^31 ms is clamped, not wrapped to 0",
		   "%" PRIu64, refl.idle_ns);
		m.idle_ms = UINT32_MAX;
		m.seq = 1;
		proto_encode(buf, &m);
		reflect_packet(buf, PROTO_HDR_LEN, 0, 0, false, (struct sockaddr *)&p6, sizeof(p6));
		ok(refl.idle_ns == 2ULL * IDLE_MAX_MS * 1000000ULL, "guard: an idle hint of 2^32-1 ms is clamped", "-");
		m.seq = 2;
		proto_encode(buf, &m);
		reflect_packet(buf, PROTO_HDR_LEN, 0, 0, false, (struct sockaddr *)&o6, sizeof(o6));
		ok(sess.c.rejected[GR_PEER] == 1 && sess.c.received == 2, "guard: the session's id from another port is refused", "-");
		m.seq = 1000000000;
		proto_encode(buf, &m);
		reflect_packet(buf, PROTO_HDR_LEN, 0, 0, false, (struct sockaddr *)&p6, sizeof(p6));
		ok(sess.c.rejected[GR_SEQ_AHEAD] == 1 && refl.top == 1, "guard: a seq far ahead is refused, the window kept", "-");
		m.seq = 2;
		proto_encode(buf, &m);
		reflect_packet(buf, PROTO_HDR_LEN, 0, 0, false, (struct sockaddr *)&p6, sizeof(p6));
		ok(sess.c.received == 3 && !sess.c.duplicate, "guard: the next real ping is no duplicate", "-");
		m.seq = 50000;
		proto_encode(buf, &m);
		reflect_packet(buf, PROTO_HDR_LEN, 0, 0, false, (struct sockaddr *)&p6, sizeof(p6));
		m.seq = 50001;
		proto_encode(buf, &m);
		reflect_packet(buf, PROTO_HDR_LEN, 0, 0, false, (struct sockaddr *)&p6, sizeof(p6));
		ok(sess.c.received == 3 && refl.top == 2 && sess.c.rejected[GR_SEQ_AHEAD] == 3,
		   "guard: two forged pings far ahead while the client pings: both refused", "-");
		/* the client silent for longer than its idle hint (its pings lost): a real outage */
		refl.now = refl.last_rx + refl.hint_ms * 1000000ULL + 1;
		m.seq = 50002;
		proto_encode(buf, &m);
		reflect_packet(buf, PROTO_HDR_LEN, 0, 0, false, (struct sockaddr *)&p6, sizeof(p6));
		m.seq = 50003;
		proto_encode(buf, &m);
		reflect_packet(buf, PROTO_HDR_LEN, 0, 0, false, (struct sockaddr *)&p6, sizeof(p6));
		ok(sess.c.received == 5 && refl.top == 50003 && sess.c.rejected[GR_SEQ_AHEAD] == 3,
		   "guard: after a silence longer than the hint a jump is taken, confirmed by the ping before", "-");
		m.session = 0x78;
		m.seq = 0;
		proto_encode(buf, &m);
		reflect_packet(buf, PROTO_HDR_LEN, 0, 0, false, (struct sockaddr *)&o6, sizeof(o6));
		ok(sess.id == 0x77 && sess.c.foreign == 1, "guard: another session while one runs is foreign (and told BUSY)", "-");
		refl.key0 = 100;
		refl.txpend = 0;
		reflect_on_tx(99, 12345);
		ok(sess.c.tx_unmatched == 0, "guard: a TX stamp of the previous session is not this one's", "-");
	}
	reset_globals();
	run.win.slot = NULL;
	run.echo.q = NULL;
	run.key.on = false;
}

/* One datagram to reflect_packet from a peer, at the reflector's clock now. */
static void guard_rx(int type, uint32_t session, uint64_t seq, uint16_t flags, uint32_t idle,
		     const struct sockaddr_in6 *from, uint64_t now)
{
	uint8_t buf[PROTO_HDR_LEN + TAG_LEN];
	size_t len = run.key.on ? sizeof(buf) : PROTO_HDR_LEN;
	struct proto_msg m = { .type = (uint8_t)type, .session = session, .seq = seq, .flags = flags,
			       .idle_ms = idle };

	struct capture c;

	memset(buf, 0, sizeof(buf));
	proto_encode(buf, &m);
	tag_put(buf, len);
	refl.now = now;
	if (type == PT_FIN) {
		cap_start(&c, 1);	/* the session's report */
	}
	reflect_packet(buf, len, 0, 0, false, (const struct sockaddr *)from, sizeof(*from));
	if (type == PT_FIN) {
		free(cap_stop(&c));
	}
}

/*
 * Sessions across their end (replays after a FIN and after an idle end,
 * during another session), sequence numbers walking the window up, the
 * session's idle hint, the loss count that never wraps, class rows.
 */
static void test_guard_sessions(void)
{
	static struct echo q[ECHO_CAP];
	struct sockaddr_in6 p6 = { .sin6_family = AF_INET6, .sin6_port = htons(5000) }, o6 = p6;
	struct capture c;
	uint64_t s, t = 1000000000ULL, lost;

	guard_setup(false);
	run.echo.q = q;
	opts.size = PROTO_HDR_LEN;
	o6.sin6_port = htons(5001);
	for (s = 0; s < 10; s++) {
		guard_rx(PT_PING, 0x77, s, 0, 1001, &p6, t);
	}
	guard_rx(PT_FIN, 0x77, 10, 0, 0, &p6, t);
	ok(!refl.active && refl.sessions == 1, "guard: the FIN ends the session", "-");
	guard_rx(PT_PING, 0x77, 5, 0, 1001, &p6, t);
	guard_rx(PT_PING, 0x77, 9, 0, 1001, &p6, t);
	ok(!refl.active && refl.carry_rej[GR_ENDED] == 2,
	   "guard: after its FIN, a ping of the session up to its highest seq opens nothing", "%" PRIu64,
	   refl.carry_rej[GR_ENDED]);
	/* keyed: only the client can have sent the FIN, so every later ping is a replay */
	run.key.on = true;
	run.key.k[0] = 1;
	for (s = 0; s < 10; s++) {
		guard_rx(PT_PING, 0x66, s, 0, 1001, &p6, t);
	}
	guard_rx(PT_FIN, 0x66, 10, 0, 0, &p6, t);
	guard_rx(PT_PING, 0x66, 1000, 0, 1001, &p6, t);
	ok(!refl.active && refl.sessions == 2 && refl.carry_rej[GR_ENDED] == 1,
	   "guard: after a keyed FIN, a ping of the session (any seq) opens nothing", "%" PRIu64,
	   refl.carry_rej[GR_ENDED]);
	run.key.on = false;
	/* no key: the FIN may have been forged, the client goes on above its highest seq */
	guard_rx(PT_PING, 0x77, 10, 0, 1001, &p6, t);
	ok(refl.active && sess.id == 0x77, "guard: after a FIN without a key, the client goes on above it", "-");
	guard_rx(PT_FIN, 0x77, 11, 0, 0, &p6, t);
	for (s = 0; s < 10; s++) {
		guard_rx(PT_PING, 0x88, s, 0, 1001, &p6, t);
	}
	ok(refl.active && sess.id == 0x88 && !sess.c.rejected[GR_ENDED], "guard: the next session opens", "-");
	t += 4 * NSEC_PER_SEC;	/* idle timeout 3 s */
	cap_start(&c, 1);
	reflect_tick(t);
	free(cap_stop(&c));
	ok(!refl.active && refl.sessions == 4, "guard: the next session ends idle", "-");
	guard_rx(PT_PING, 0x88, 9, 0, 1001, &p6, t);
	ok(!refl.active && refl.carry_rej[GR_ENDED] == 1, "guard: after an idle end, a ping up to its highest seq opens nothing", "-");
	guard_rx(PT_PING, 0x88, 10, 0, 1001, &p6, t);
	ok(refl.active && sess.id == 0x88 && sess.c.received == 1,
	   "guard: ... above it, its client goes on in a new session", "-");
	guard_rx(PT_PING, 0x77, 3, 0, 1001, &o6, t);
	ok(sess.c.rejected[GR_ENDED] == 2 && !sess.c.foreign && !sess.c.rejected[GR_BUSY_SENT],
	   "guard: a replay while another session runs: no BUSY, not foreign", "-");

	/* a repeat is no sign of the client: it keeps nothing alive */
	guard_rx(PT_PING, 0x88, 10, 0, 1001, &p6, t + NSEC_PER_SEC);
	ok(refl.last_rx == t && sess.c.duplicate == 1, "guard: a repeated ping does not keep the session alive",
	   "last_rx %" PRIu64, refl.last_rx);
	sess.c.duplicate = 0;
	/* the session's idle hint is its largest: a forged ping cannot shorten it */
	guard_rx(PT_PING, 0x88, 11, 0, 60000, &p6, t);
	guard_rx(PT_PING, 0x88, 12, 0, 0, &p6, t);
	ok(refl.hint_ms == 60000 && refl.idle_ns == 120000ULL * 1000000ULL, "guard: the idle hint is the largest given",
	   "%" PRIu64, refl.hint_ms);

	/* forged pings walking the window up in steps below 4096: real pings still answered */
	guard_rx(PT_PING, 0x88, 4000, 0, 1001, &p6, t);
	guard_rx(PT_PING, 0x88, 8000, 0, 1001, &p6, t);
	guard_rx(PT_PING, 0x88, 12000, 0, 1001, &p6, t);
	for (s = 13; s < 113; s++) {
		guard_rx(PT_PING, 0x88, s, 0, 1001, &p6, t);
	}
	ok(sess.c.received == 106 && !sess.c.duplicate, "guard: no key: after a walk the client's own pings are answered",
	   "received %" PRIu64 " duplicate %" PRIu64, sess.c.received, sess.c.duplicate);
	guard_rx(PT_PING, 0x88, 50, 0, 1001, &p6, t);
	ok(sess.c.duplicate == 1, "guard: ... once each, in increasing order", "-");
	guard_rx(PT_FIN, 0x88, 100, 0, 0, &p6, t);
	ok(refl.active && sess.c.rejected[GR_FIN_SEQ] == 1,
	   "guard: a FIN below the session's last ping is not its client's: refused", "-");
	guard_rx(PT_FIN, 0x88, 113, 0, 0, &p6, t);
	ok(!refl.active, "guard: ... its client's FIN, above it, ends the session (a walk moved the window)", "-");
	/*
	 * No key: replays of seen seqs below the window, above one that never
	 * came, are answered again and count twice: the loss count stays at 0.
	 */
	for (s = 0; s <= 5000; s++) {
		if (s != 1) {
			guard_rx(PT_PING, 0xaa, s, 0, 1001, &p6, t);
		}
	}
	for (s = 2; s < 900; s++) {
		guard_rx(PT_PING, 0xaa, s, 0, 1001, &p6, t);
	}
	guard_rx(PT_FIN, 0xaa, 5001, 0, 0, &p6, t);
	lost = sess.c.lost;
	ok(sess.c.received == 5000 + 898 && lost == 0, "guard: the reflector's loss count never goes below 0 (no wrap)",
	   "received %" PRIu64 " lost %" PRIu64, sess.c.received, lost);

	/* with a key the window moves only with the client: a seq below it is a replay */
	run.key.on = true;
	refl.active = false;
	reflect_start(0x99);
	memcpy(&refl.peer, &p6, sizeof(p6));
	for (s = 0; s < 5000; s++) {
		if (s != 7) {
			refl.now = t;
			(void)reflect_admit(&(struct proto_msg){ .type = PT_PING, .session = 0x99, .seq = s,
								 .idle_ms = 1001 }, t);
		}
	}
	ok(reflect_admit(&(struct proto_msg){ .type = PT_PING, .session = 0x99, .seq = 7, .idle_ms = 1001 }, t) == false,
	   "guard: keyed: a seq below the window is a replay", "-");
	ok(reflect_admit(&(struct proto_msg){ .type = PT_PING, .session = 0x99, .seq = 90000, .idle_ms = 1001 }, t),
	   "guard: keyed: a seq far ahead is the client's (the tag says so)", "-");
	run.key.on = false;
	reset_globals();
	run.win.slot = NULL;
	run.echo.q = NULL;
}

/* Class rows on the reflector: a FIN books none, the reflector's own -w is in them. */
static void test_guard_class_rows(void)
{
	static struct echo q[ECHO_CAP];
	struct sockaddr_in6 p6 = { .sin6_family = AF_INET6, .sin6_port = htons(5000) };
	uint64_t s, t = 1000000000ULL, rec = 0, warm = 0;
	int i;

	guard_setup(false);
	run.echo.q = q;
	opts.size = PROTO_HDR_LEN;
	opts.warmup = 4;
	guard_rx(PT_FIN, 0x4343, 0, PF_CLASS | 3u << PF_PRIO_SHIFT, 0, &p6, t);
	for (s = 0; s < 30; s++) {
		guard_rx(PT_PING, 0x55, s, PF_CLASS | (uint16_t)((s % 3 + 1) << PF_PRIO_SHIFT), 1001, &p6, t);
	}
	guard_rx(PT_FIN, 0x4444, 0, PF_CLASS | 9u << PF_PRIO_SHIFT, 0, &p6, t);
	guard_rx(PT_PING, 0x55, 30, 0, 1001, &p6, t);
	for (i = 0; i <= CLS_RROWS; i++) {
		rec += classes.r[i].received;
		warm += classes.r[i].warmup;
	}
	ok(classes.rn == 3, "guard: FINs with class bits book no class row", "rows %d", classes.rn);
	ok(rec == sess.c.received && warm == sess.c.warmup && warm == 4 && classes.r[CLS_RROWS].received == 1,
	   "guard: class rows add up to received and warm-up (the reflector's own -w too)",
	   "rows %" PRIu64 "/%" PRIu64 " session %" PRIu64 "/%" PRIu64, rec, warm, sess.c.received, sess.c.warmup);
	reset_globals();
	run.win.slot = NULL;
	run.echo.q = NULL;
}

/* --------------------------------------------------- classes and sizes */

/* {expected result, argv, text the stderr line must contain} */
static const struct {
	int want;
	const char *argv, *needle;
} cls_cases[] = {
	{ 0, "-a h --priority 1,2,3", NULL },
	{ 0, "-a h --tos 0,32,64,96", NULL },
	{ 0, "-a h --priority 1,2 --tos 32,64", NULL },
	{ 0, "-a h --priority 1,2,3 --tos 32", NULL },
	{ 0, "-a h --size 64,128 --count 5", NULL },
	{ 0, "-a h --size 64,128 -d 1", NULL },
	{ 0, "-a h --size 64,1400 --priority 1,2 --count 5", NULL },
	{ -1, "-a h --priority 1,,2", "--priority" },
	{ -1, "-a h --priority 1,2,", "--priority" },
	{ -1, "-a h --priority 1,15", "--priority: '15' is out of range (0 to 14)" },
	{ -1, "-a h --priority 1,x", "--priority: 'x' is not a whole number" },
	{ -1, "-a h --tos 1,256", "--tos: '256' is out of range" },
	{ -1, "-a h --tos 1,2,3,4,5,6,7,8,9", "more than 8 values" },
	{ -1, "-a h --priority 1,2 --tos 1,2,3", "--tos: 3 values against 2 of --priority" },
	{ -1, "-a h --size 64,23 --count 5", "--size: '23' is out of range (24 to 65000)" },
	{ -1, "-a h --size 64,128", "--size: a list needs -d SEC or --count N" },
	{ -1, "-a h --size ,64 --count 5", "--size" },
	{ -1, "--priority 1,2", "--priority: a list is for emit" },
	{ -1, "--tos 1,2", "--tos: a list is for emit" },
	{ -1, "-i lo -a h --size 64,70000 --count 5", "--size" },
	{ 0, "-a h --priority 1,2 --interval 100,200", NULL },
	{ -1, "-a h --priority 1,2 --interval 100,200,300", "--interval: 3 values for 2 classes" },
	{ -1, "-a h --interval 100,200", "--interval: 2 values for 1 classes" },
	{ -1, "-a h --priority 1,2 --interval 100,0", "--interval: '0' is out of range (1 to 60000000)" },
	/* items are parsed whole, however long (they were cut at 31 characters) */
	{ -1, "-a h --tos 1,2 --interval 100,0000000000000000000000000002000zz",
	  "--interval: '0000000000000000000000000002000zz' is not a whole number" },
	{ 0, "-a h --tos 1,2 --interval 100,000000000000000000000000000000002000", NULL },
	{ -1, "-a h --size 64,00000000000000000000000000000000000000128zz --count 5",
	  "'00000000000000000000000000000000000000128zz' is not a whole number" },
	/* one --priority for every class: it travels in 4 bits of the ping */
	{ -1, "-a h --priority 20 --tos 0,8", "--priority: 20 with a --tos list; the classes carry their priority in the ping, 0 to 14" },
	{ -1, "-a h --priority 15 --tos 0,8", "--priority: 15 with a --tos list" },
	{ 0, "-a h --priority 14 --tos 0,8", NULL },
	/* a list option given twice would drop one: refused */
	{ -1, "-a h --tos 1,2 --tos 3", "--tos: given twice; give it once, one value or one list (1,2,3)" },
	{ -1, "-a h --priority 1 --priority 2", "--priority: given twice" },
	{ -1, "-a h --size 64 --size 128,256 --count 5", "--size: given twice; give it once, one value or one list (64,512,1400)" },
	{ -1, "-a h --tos 1,2 --interval 100,200 --interval 300,400", "--interval: given twice" },
	/* --key-file: every size of the list has room for the tag */
	{ -1, "-a h --size 128,64 --count 5 --key-file /nonexistent/k",
	  "--key-file: needs --size 72 or more (the tag follows the 64-byte header), the list has 64" },
	{ -1, "-a h --size 128,72 --count 5 --key-file /nonexistent/k", "--key-file: cannot open" },
};

/*
 * --interval behind its cadence: before each send the step reads what has
 * arrived (at most 64 datagrams, without blocking), so a client that falls
 * behind keeps receiving instead of letting its receive buffer overflow.
 */
static int drain_feed(int peer, const struct sockaddr_in *to, int n)
{
	uint8_t junk[64];
	int i, sent = 0;

	memset(junk, 0xa5, sizeof(junk));
	for (i = 0; i < n; i++) {
		sent += sendto(peer, junk, sizeof(junk), 0, (const struct sockaddr *)to, sizeof(*to)) ==
			(ssize_t)sizeof(junk);
	}
	return sent;
}

static int drain_queued(int fd)
{
	uint8_t b[64];
	int n = 0;

	while (recv(fd, b, sizeof(b), MSG_DONTWAIT) >= 0) {
		n++;
	}
	return n;
}

/*
 * A client of rant's options OPTIONS ("-a 127.0.0.1 --port PORT" before
 * them), its socket connected to a local peer (*peer: bound on loopback,
 * any port), the loop's buffers TXB and RXB; WHAT names the checks.  0, or
 * -1 with the peer closed and the globals reset.
 */
static int emit_peer_setup(const char *what, const char *options, uint8_t *txb, uint8_t *rxb, int *peer)
{
	struct sockaddr_in pa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) }, me;
	socklen_t len = sizeof(pa);
	char cmd[200], *out, *err, name[120];
	struct args a;
	int r;

	*peer = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	snprintf(name, sizeof(name), "%s: a local peer socket", what);
	ok(*peer >= 0 && bind(*peer, (struct sockaddr *)&pa, sizeof(pa)) == 0 &&
	   getsockname(*peer, (struct sockaddr *)&pa, &len) == 0, name, "%s", strerror(errno));
	guard_setup(true);
	snprintf(cmd, sizeof(cmd), "-a 127.0.0.1 --port %u %s", ntohs(pa.sin_port), options);
	r = parse_str(cmd, &a, &out, &err);
	free(out);
	free(err);
	side_set(true);
	emitter.tx = txb;
	emitter.rx = rxb;
	emitter.rxcap = opts.size + 1;
	sess.log.cap = 0;
	r = r ? r : sock_open_emit() < 0 ? -1 : 0;
	len = sizeof(me);
	snprintf(name, sizeof(name), "%s: client socket connected to the peer", what);
	ok(r == 0 && getsockname(run.sock_fd, (struct sockaddr *)&me, &len) == 0, name, "r=%d", r);
	if (r) {
		close(*peer);
		reset_globals();
	}
	return r;
}

static void test_interval_drain(void)
{
	static uint8_t txb[PROTO_MAX_SIZE + 64], rxb[PROTO_MAX_SIZE + 64];
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	int peer, fed, pings, left;
	int big = 1 << 20, r;
	uint64_t next, inv0, sent0;

	if (emit_peer_setup("drain", "--interval 1000 --count 1000", txb, rxb, &peer) < 0) {
		return;
	}
	getsockname(run.sock_fd, (struct sockaddr *)&me, &len);
	setsockopt(run.sock_fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));

	/* behind the cadence, the last step only sent: 10 queued datagrams are read first */
	fed = drain_feed(peer, &me, 10);
	inv0 = sess.c.invalid;
	sent0 = sess.c.sent;
	next = mono_ns() - 1;
	emitter.waited = false;
	r = emit_interval_step(&next);
	left = drain_queued(run.sock_fd);
	pings = drain_queued(peer);
	ok(r == 0 && fed == 10 && sess.c.invalid - inv0 == 10 && left == 0 && sess.c.sent - sent0 == 1 && pings == 1,
	   "drain: behind the cadence, the step reads all 10 queued datagrams before its ping",
	   "r=%d fed %d read %" PRIu64 " left %d sent %" PRIu64 " pings %d", r, fed, sess.c.invalid - inv0, left,
	   sess.c.sent - sent0, pings);

	/* bounded: at most 64 per step, so sending keeps its cadence under a flood */
	fed = drain_feed(peer, &me, 100);
	inv0 = sess.c.invalid;
	next = mono_ns() - 1;
	emitter.waited = false;
	r = emit_interval_step(&next);
	pings = drain_queued(peer);
	left = drain_queued(run.sock_fd);
	ok(r == 0 && fed == 100 && sess.c.invalid - inv0 == 64 && left == 36 && pings == 1,
	   "drain: at most 64 datagrams are read before a send", "fed %d read %" PRIu64 " left %d pings %d", fed,
	   sess.c.invalid - inv0, left, pings);

	/* the previous step waited (and so received): this one sends at once */
	fed = drain_feed(peer, &me, 5);
	inv0 = sess.c.invalid;
	next = mono_ns() - 1;
	emitter.waited = true;
	r = emit_interval_step(&next);
	pings = drain_queued(peer);
	left = drain_queued(run.sock_fd);
	ok(r == 0 && sess.c.invalid == inv0 && left == fed && pings == 1 && !emitter.waited,
	   "drain: after a step that waited, the send does not read first", "read %" PRIu64 " left %d",
	   sess.c.invalid - inv0, left);
	close(run.sock_fd);
	close(peer);
	run.sock_fd = -1;
	memset(&emitter, 0, sizeof(emitter));
	reset_globals();
}

/*
 * --interval's wait: a timerfd armed at the absolute time the loop must act
 * by, beside the socket, in a ppoll with no timeout -- the timer wakes it
 * no earlier than that time, a datagram at once; a timer that cannot be
 * armed is closed and the ppoll timeout waits instead; back-to-back and
 * spinning runs have none.
 */
static void test_interval_wake(void)
{
	static uint8_t txb[PROTO_MAX_SIZE + 64], rxb[PROTO_MAX_SIZE + 64];
	struct sockaddr_in me;
	socklen_t len = sizeof(me);
	uint64_t limit, woke;
	int peer, r, fd, fed, left;

	if (emit_peer_setup("wake", "--interval 1000 --count 1000", txb, rxb, &peer) < 0) {
		return;
	}
	getsockname(run.sock_fd, (struct sockaddr *)&me, &len);
	emit_wake_open();
	fd = emitter.tfd;
	ok(emitter.timer && fd >= 0 && (fcntl(fd, F_GETFD) & FD_CLOEXEC), "wake: --interval opens a timerfd, close-on-exec",
	   "fd %d", fd);

	limit = mono_ns() + 2000000;
	r = emit_wake_wait(limit, 2000000, POLLIN);
	woke = mono_ns();
	ok(r == 0 && emitter.tfd == fd && emitter.tfd_at == limit && woke >= limit,
	   "wake: with nothing to read, the timer wakes the wait, not before the time it was armed at",
	   "r=%d tfd %d armed at %" PRIu64 " woke %+" PRId64 " ns from it", r, emitter.tfd, emitter.tfd_at,
	   (int64_t)(woke - limit));

	fed = drain_feed(peer, &me, 1);
	limit = mono_ns() + 30 * NSEC_PER_SEC;
	r = emit_wake_wait(limit, 30 * NSEC_PER_SEC, POLLIN);
	woke = mono_ns();
	left = drain_queued(run.sock_fd);
	ok(fed == 1 && (r & POLLIN) && emitter.tfd_at == limit && woke < limit && left == 1,
	   "wake: a datagram wakes it at once; the timer re-armed for the new time",
	   "fed %d r=%#x armed at %" PRIu64 " (want %" PRIu64 ") left %d", fed, r, emitter.tfd_at, limit, left);

	/* a descriptor timerfd_settime refuses: closed, and the ppoll timeout waits */
	close(fd);
	emitter.tfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fd = emitter.tfd;
	limit = mono_ns() + 1000000;
	r = emit_wake_wait(limit, 1000000, POLLIN);
	ok(r == 0 && fd >= 0 && !emitter.timer && emitter.tfd == -1 && fcntl(fd, F_GETFD) < 0 && errno == EBADF,
	   "wake: a timer that cannot be armed is closed, and the wait falls back to its timeout",
	   "r=%d tfd %d", r, emitter.tfd);
	fed = drain_feed(peer, &me, 1);
	r = emit_wake_wait(mono_ns() + 30 * NSEC_PER_SEC, 30 * NSEC_PER_SEC, POLLIN);
	left = drain_queued(run.sock_fd);
	ok(fed == 1 && (r & POLLIN) && left == 1, "wake: ... which still wakes at once for a datagram", "r=%#x left %d",
	   r, left);
	close(run.sock_fd);
	close(peer);
	run.sock_fd = -1;
	reset_globals();

	for (int k = 0; k < 2; k++) {
		static const char *const none[2][2] = { { "-d 60", "back-to-back" },
							{ "--interval 1000 --spin", "a spinning paced run" } };
		char name[80];

		if (emit_peer_setup("wake", none[k][0], txb, rxb, &peer) < 0) {
			continue;
		}
		emit_wake_open();
		snprintf(name, sizeof(name), "wake: %s opens no timer", none[k][1]);
		ok(!emitter.timer && emitter.tfd == -1, name, "tfd %d", emitter.tfd);
		close(run.sock_fd);
		close(peer);
		run.sock_fd = -1;
		reset_globals();
	}
}

/* fd has a datagram to read, or ms passed */
static bool wait_readable(int fd, int ms)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };

	return poll(&pf, 1, ms) == 1;
}

/* the next ping's send, seen from the slot of the ping whose pong was read */
static uint64_t early_watch;
static int early_sends;
static bool early_taken_at_send;

static ssize_t early_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	early_sends++;
	early_taken_at_send = run.win.slot[early_watch & run.win.mask].st & TF_RECEIVED;
	return sys_sendmsg(fd, msg, flags);
}

/* --client-no-tx-ts's SIOCGSTAMPNS (ts_rx_ioctl): the sends made when it is asked */
static int early_sends_at_stamp = -1;

static int early_stampns(int fd, unsigned long req, void *arg)
{
	(void)fd;
	(void)arg;
	if (req == SIOCGSTAMPNS) {
		early_sends_at_stamp = early_sends;
	}
	return -ENOENT;
}

/* The peer's answer to the ping it holds: its pong with FLAGS, or (seq >= 0) a pong of seq. */
static uint64_t early_answer(int peer, uint16_t flags, int64_t seq)
{
	uint8_t b[PROTO_MAX_SIZE];
	struct sockaddr_storage from;
	socklen_t fl = sizeof(from);
	ssize_t n = wait_readable(peer, 5000) ?
			    recvfrom(peer, b, sizeof(b), MSG_DONTWAIT, (struct sockaddr *)&from, &fl) :
			    -1;
	uint64_t ping;

	if (n < PROTO_HDR_LEN) {
		return UINT64_MAX;
	}
	ping = get64(b + 16);
	b[5] = PT_PONG;
	b[6] = (uint8_t)(flags >> 8);
	b[7] = (uint8_t)flags;
	if (seq >= 0) {
		put64(b + 16, (uint64_t)seq);
	}
	sendto(peer, b, (size_t)n, 0, (struct sockaddr *)&from, fl);
	return ping;
}

/* The client's receive of what the peer sent (emit_recv), once it is there. */
static int early_recv(void)
{
	return wait_readable(run.sock_fd, 5000) ? emit_recv(MSG_DONTWAIT) : -ETIMEDOUT;
}

/* A ping of the step (seq), sent as emit_b2b_step sends it, and armed for its pong. */
static void early_step(uint64_t seq)
{
	emitter.next_seq = seq + 1;
	emit_send(seq, mono_ns());
	emitter.early_seq = early_watch = seq;
	emitter.early_due = true;
	emitter.early_sent = false;
	early_sends = 0;
}

/*
 * Back-to-back, the next ping goes out as the pong of the last is read,
 * before that pong is taken in (emit_recv); not for a pong with the
 * reflector's breach flag, at the run's count, past -d, for a pong of
 * another ping; and not at all with a key, -t or classes on sockets of
 * their own.
 */
static void test_early_ping(void)
{
	static uint8_t txb[PROTO_MAX_SIZE + 64], rxb[PROTO_MAX_SIZE + 64];
	int peer, r;
	uint64_t ping, dup0;

	if (emit_peer_setup("early", "-d 60", txb, rxb, &peer) < 0) {
		return;
	}
	emitter.total = UINT64_MAX;
	emitter.defer = true;	/* as emit_run sets it for a back-to-back run without -t */
	ok(emit_early_allowed(), "early: back-to-back, one socket, no key: allowed", "-");
	kops.sendmsg = early_sendmsg;

	early_step(0);
	ping = early_answer(peer, 0, -1);
	r = early_recv();
	ok(ping == 0 && r == 1 && early_sends == 1 && !early_taken_at_send && (run.win.slot[0].st & TF_RECEIVED) &&
	   emitter.early_sent && !emitter.early_due && emitter.next_seq == 2 && run.win.slot[1].seq == 1 &&
	   (run.win.slot[1].st & TF_SENT) && early_answer(peer, 0, -1) == 1,
	   "early: ping 1 sent as pong 0 was read, before pong 0 was taken in",
	   "ping %" PRIu64 " r %d sends %d taken first %d st0 %#x next %" PRIu64, ping, r, early_sends,
	   early_taken_at_send, run.win.slot[0].st, emitter.next_seq);
	r = early_recv();	/* pong 1, outside a step's wait: taken in as ever */
	ok(r == 1 && early_sends == 1 && (run.win.slot[1].st & TF_RECEIVED) && sess.c.received == 2,
	   "early: a pong read outside a step's wait sends nothing", "sends %d received %" PRIu64, early_sends,
	   sess.c.received);

	early_step(2);
	early_answer(peer, PF_BREACH, -1);
	r = early_recv();
	ok(r == 1 && early_sends == 0 && (run.win.slot[2].st & TF_RECEIVED) && sess.stop_reason == STOP_PEER_BREACH,
	   "early: a pong with the reflector's breach flag: no next ping, the run stops", "sends %d stop %d",
	   early_sends, sess.stop_reason);
	sess.stop_reason = 0;

	early_step(3);
	emitter.total = 4;
	early_answer(peer, 0, -1);
	r = early_recv();
	ok(r == 1 && early_sends == 0 && (run.win.slot[3].st & TF_RECEIVED) && emitter.next_seq == 4,
	   "early: at the run's count, no next ping", "sends %d next %" PRIu64, early_sends, emitter.next_seq);
	emitter.total = UINT64_MAX;

	early_step(4);
	emitter.end = 1;	/* -d is over */
	early_answer(peer, 0, -1);
	r = early_recv();
	ok(r == 1 && early_sends == 0 && (run.win.slot[4].st & TF_RECEIVED),
	   "early: past -d, no next ping", "sends %d", early_sends);
	emitter.end = 0;

	early_step(5);
	dup0 = sess.c.duplicate;
	early_answer(peer, 0, 0);	/* a second pong of ping 0 while ping 5 waits */
	r = early_recv();
	ok(r == 1 && early_sends == 0 && sess.c.duplicate == dup0 + 1 && emitter.early_due &&
	   !(run.win.slot[5].st & TF_RECEIVED),
	   "early: a pong of another ping sends nothing and leaves the step armed", "sends %d dup %" PRIu64,
	   early_sends, sess.c.duplicate - dup0);

	early_step(6);
	emit_lost(&run.win.slot[6]);	/* its deadline passed: the pong comes late */
	early_answer(peer, 0, -1);
	r = early_recv();
	ok(r == 1 && early_sends == 0 && (run.win.slot[6].st & TF_LATE) && emitter.next_seq == 7,
	   "early: the pong of a ping already lost (late): no next ping", "sends %d st %#x", early_sends,
	   run.win.slot[6].st);

	/* --client-no-tx-ts: the pong's stamp asked for only once the next ping went */
	emitter.rx_ioctl = true;
	kops.ioctl = early_stampns;
	early_step(7);
	early_answer(peer, 0, -1);
	early_sends_at_stamp = -1;
	r = early_recv();
	ok(r == 1 && early_sends == 1 && early_sends_at_stamp == 1 && (run.win.slot[7].st & TF_RECEIVED),
	   "early: --client-no-tx-ts: the pong's stamp (SIOCGSTAMPNS) read after the next ping went",
	   "r %d sends %d sends at the stamp's read %d", r, early_sends, early_sends_at_stamp);
	early_answer(peer, 0, -1);	/* ping 8's pong, read by the cleanup's close */
	emitter.rx_ioctl = false;
	kops.ioctl = kops_sys.ioctl;

	run.key.on = true;
	ok(!emit_early_allowed(), "early: not with a key", "-");
	run.key.on = false;
	emitter.defer = false;
	ok(!emit_early_allowed(), "early: not with -t or --interval (no deferral)", "-");
	emitter.defer = true;
	classes.ncls = 2;
	classes.fd[1] = run.sock_fd;
	ok(!emit_early_allowed(), "early: not with classes on sockets of their own", "-");
	classes.ncls = 0;
	classes.fd[1] = 0;

	close(run.sock_fd);
	close(peer);
	run.sock_fd = -1;
	memset(&emitter, 0, sizeof(emitter));
	reset_globals();
}

static void test_classes_opts(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cls_cases); i++) {
		struct args a;
		char *out, *err, name[200];
		int r = parse_str(cls_cases[i].argv, &a, &out, &err);
		bool good;

		snprintf(name, sizeof(name), "classes: opt_parse '%s' -> %d", cls_cases[i].argv, cls_cases[i].want);
		if (cls_cases[i].want < 0) {
			good = r == -1 && one_rant_line(err) && strstr(err, cls_cases[i].needle) && !*out;
		} else {
			good = r == cls_cases[i].want && !*err;
		}
		ok(good, name, "returned %d, stderr '%s'", r, err);
		free(out);
		free(err);
	}
	/* one value: exactly the fields of before, no classes, no sizes */
	GOOD("-a h --priority 7 --tos 32 --size 100", opts.priority == 7 && opts.tos == 32 && opts.size == 100 &&
		 classes.ncls == 1 && classes.nsz == 1 && !cls_multi());
	GOOD("-a h --priority 2147483647", opts.priority == 2147483647 && classes.ncls == 1);
	GOOD("-a h --priority 1,2,3", classes.ncls == 3 && classes.prio[0] == 1 && classes.prio[2] == 3 && classes.tos[1] == -1 &&
		 opts.priority == 1);
	GOOD("-a h --priority 4,5 --tos 64", classes.ncls == 2 && classes.tos[0] == 64 && classes.tos[1] == 64 && classes.prio[1] == 5);
	GOOD("-a h --tos 32,64", classes.ncls == 2 && classes.prio[0] == -1 && classes.tos[1] == 64);
	GOOD("-a h --size 1400,64,512 --count 3", classes.nsz == 3 && classes.size[0] == 1400 && classes.size[1] == 64 &&
		 opts.size == 1400 && classes.tx_size == 1400);
	/* the MTU rule: lo's MTU (65536) takes the largest size */
	GOOD("-i lo -a h --size 64,65000 --count 5", classes.nsz == 2);
	GOOD("-a h", classes.ncls == 1 && classes.nsz == 1);
	GOOD("-a h", opts.cpu_latency == 0 && !opts.cpu_latency_set);
	GOOD("-a h --cpu-latency 25", opts.cpu_latency == 25 && opts.cpu_latency_set);
	GOOD("--cpu-latency off", opts.cpu_latency == -1 && opts.cpu_latency_set);
	/* a cadence per class: the run's interval is all of them together */
	GOOD("-a h --tos 0,32,64 --interval 1000,2000,2000", classes.nival == 3 && classes.ival[1] == 2000000 &&
		 opts.interval_ns == 500000);
	/* "-a h --priority 1,2 --interval 250": one cadence for both, said (tos_interval) */
}

/* Round-robin, sizes in turn, warm-up per size, and the class in the ping's flags. */
static void test_classes_schedule(void)
{
	struct args a;
	char *out, *err, name[120];
	int r = parse_str("-a 127.0.0.1 --port 9 --priority 1,2,3 --tos 0,32,64 --size 64,256 --count 4 -w 2",
			  &a, &out, &err);
	uint64_t seq, keyseq0[256];
	bool sched = true, warm = true, flags = true;
	int k, v;
	socklen_t len = sizeof(v);

	free(out);
	free(err);
	ok(r == 0, "classes: parse a class x size run", "r=%d", r);
	side_set(true);
	run.win.mask = 255;
	emitter.keyseq = keyseq0;
	sess.start_mono = mono_ns();
	r = sock_open_emit() < 0 ? -1 : cls_open();
	ok(r == 0 && classes.fd[1] > 0 && classes.fd[2] > 0 && classes.fd[1] != classes.fd[2] && classes.fd[0] == run.sock_fd,
	   "classes: a socket per class", "r=%d fds %d %d %d", r, classes.fd[0], classes.fd[1], classes.fd[2]);
	{
		struct sockaddr_in me[3];
		socklen_t ml;

		for (k = 0; r == 0 && k < 3; k++) {
			ml = sizeof(me[k]);
			getsockname(classes.fd[k], (struct sockaddr *)&me[k], &ml);
		}
		ok(r == 0 && me[0].sin_port && me[0].sin_port == me[1].sin_port && me[1].sin_port == me[2].sin_port,
		   "classes: ... all on one local port (the reflector sees one peer)", "ports %u %u %u",
		   ntohs(me[0].sin_port), ntohs(me[1].sin_port), ntohs(me[2].sin_port));
	}
	for (k = 0; r == 0 && k < 3; k++) {
		int want_prio = k + 1, want_tos = 32 * k;

		len = sizeof(v);
		getsockopt(classes.fd[k], SOL_SOCKET, SO_PRIORITY, &v, &len);
		snprintf(name, sizeof(name), "classes: class %d socket has SO_PRIORITY %d (getsockopt)", k, want_prio);
		ok(v == want_prio, name, "got %d", v);
		len = sizeof(v);
		getsockopt(classes.fd[k], IPPROTO_IP, IP_TOS, &v, &len);
		snprintf(name, sizeof(name), "classes: class %d socket has IP_TOS %d (getsockopt)", k, want_tos);
		ok(v == want_tos, name, "got %d", v);
	}
	/* 2 sizes x (2 warm-up + 4 counted) = 12 pings, classes round-robin */
	for (seq = 0; r == 0 && seq < 12; seq++) {
		uint16_t f = 0;
		size_t len = cls_before_send(seq, mono_ns(), &f);
		unsigned want_size = seq < 6 ? 64 : 256;
		bool want_warm = seq % 6 < 2;

		sched &= classes.cur == (int)(seq % 3) && run.sock_fd == classes.fd[seq % 3] && len == want_size &&
			 size_of(seq) == (seq < 6 ? 0 : 1);
		warm &= cls_warmup(seq) == want_warm && !!(f & PF_WARMUP) == want_warm;
		flags &= (f & PF_CLASS) && ((f >> PF_PRIO_SHIFT) & 0xf) == seq % 3 + 2;
	}
	ok(sched, "classes: seq % 3 picks the class's socket, sizes change after warm-up + count", "cur %d", classes.cur);
	ok(warm, "classes: the first -w pings of each size are warm-up", "%s", "");
	ok(flags, "classes: pings carry PF_CLASS and their priority + 1", "%s", "");
	for (seq = 0; seq < 12; seq++) {
		size_of(seq);
	}
	ok(size_of(0) == 0 && size_of(5) == 0 && size_of(6) == 1 && size_of(11) == 1,
	   "classes: size_of() maps seq back to its size after the run", "%d %d", size_of(5), size_of(6));
	{
		char buf[128], *p;

		classes.g = (struct grp *)1;	/* only tested for non-NULL by the column writer */
		p = cls_log_cols(buf, false, NULL);
		*p = 0;
		ok(!strcmp(buf, " CLASS SIZE"), "classes: text log columns", "'%s'", buf);
		seq = 7;
		p = cls_log_cols(buf, true, &seq);
		*p = 0;
		ok(!strcmp(buf, ",1,256"), "classes: csv log values of seq 7", "'%s'", buf);
		classes.g = NULL;
		cls_note(buf, sizeof(buf), 7);
		ok(!strcmp(buf, " class=1 priority=2 tos=32 size=256"), "classes: breach note names class and size",
		   "'%s'", buf);
	}
	for (k = 0; k < 3; k++) {
		close(classes.fd[k]);
		if (k) {
			free(classes.keyseq[k]);
		}
	}
	run.sock_fd = -1;
	reset_globals();
}

/* The reflector answers in the class of the ping, and counts each class. */
static void test_classes_reflect(void)
{
	struct proto_msg m = { .type = PT_PING };
	int v, fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	socklen_t len = sizeof(v);
	bool tos_ok, prio_ok;

	reset_globals();
	side_set(false);
	run.sock_fd = fd;
	cls_open();
	m.flags = PF_CLASS | (3u << PF_PRIO_SHIFT);
	classes.rx_tos = 64;
	cls_reflect(m.flags);
	classes.r[cls_rrow(m.flags)].answered++;
	getsockopt(fd, SOL_SOCKET, SO_PRIORITY, &v, &len);
	prio_ok = v == 2;
	len = sizeof(v);
	getsockopt(fd, IPPROTO_IP, IP_TOS, &v, &len);
	tos_ok = v == 64;
	ok(prio_ok && tos_ok, "classes: reflector takes SO_PRIORITY from the ping, TOS as received", "tos %d", v);
	m.flags |= PF_WARMUP;
	classes.r[cls_rrow(m.flags)].answered++;
	classes.r[cls_rrow(m.flags)].warmup++;
	m.flags = PF_CLASS | (5u << PF_PRIO_SHIFT);
	classes.rx_tos = 0;
	classes.r[cls_rrow(m.flags)].answered++;
	ok(classes.rn == 2 && classes.r[0].prio == 2 && classes.r[0].tos == 64 && classes.r[0].answered == 2 && classes.r[0].warmup == 1 &&
	   classes.r[1].prio == 4 && classes.r[1].answered == 1, "classes: reflector counts answers per class", "rn %d", classes.rn);
	m.flags = 0;
	cls_reflect(m.flags);
	len = sizeof(v);
	getsockopt(fd, SOL_SOCKET, SO_PRIORITY, &v, &len);
	ok(v == 0 && classes.rn == 2, "classes: a ping without a class is answered with the reflector's own priority",
	   "prio %d", v);
	ok(cls_rrow(m.flags) == CLS_RROWS && classes.rn == 2, "classes: ... and booked in a row apart from the classes",
	   "rn %d", classes.rn);
	close(fd);
	run.sock_fd = -1;
	reset_globals();
}

/* Each class on its own cadence: seq -> class is kept in a map, not computed. */
/*
 * A plain run (no list) goes through the classes' hooks as one class of one
 * size: the ping's length is --size, the first -w are warm-up, no class
 * flag, the socket stays; no rows to count into; the reflector books its
 * pings and pongs in the row without a class.
 */
static void test_classes_plain(void)
{
	struct args a;
	char *out, *err;
	bool len_ok = true, warm_ok = true, plain_ok = true;
	uint64_t seq;
	int r, fd;

	reset_globals();
	r = parse_str("-a h -w 2 --size 100", &a, &out, &err);
	free(out);
	free(err);
	run.sock_fd = fd = 42;
	for (seq = 0; r == 0 && seq < 6; seq++) {
		uint16_t f = 0;

		len_ok &= cls_before_send(seq, mono_ns(), &f) == 100;
		warm_ok &= !!(f & PF_WARMUP) == (seq < 2);
		plain_ok &= !(f & (PF_CLASS | 0xf000)) && run.sock_fd == fd;
	}
	ok(r == 0 && len_ok && warm_ok && plain_ok && cls_sizes() == 1 && !cls_paced(),
	   "classes: a plain run: one class of one size through the same hooks", "r=%d len %d warm %d plain %d",
	   r, len_ok, warm_ok, plain_ok);
	cls_on_row(0, run.side.primary, 1000);
	cls_on_answer(0, false);
	ok(!classes.g, "classes: a plain run: no rows to count into", "-");
	reset_globals();
	side_set(false);
	cls_on_ping(0, false);
	cls_on_ping(0, true);
	cls_on_pong(0);
	ok(classes.r[CLS_RROWS].received == 2 && classes.r[CLS_RROWS].warmup == 1 && classes.r[CLS_RROWS].answered == 1 &&
	   !classes.rn, "classes: a plain reflector: pings and pongs in the row without a class", "rn=%d", classes.rn);
	run.sock_fd = -1;
	reset_globals();
}

static void test_classes_interval(void)
{
	struct args a;
	char *out, *err;
	uint64_t keyseq0[256], seq;
	int r = parse_str("-a 127.0.0.1 --port 9 --priority 1,2 --interval 1000,3000 --count 100", &a, &out, &err);
	int n[2] = { 0, 0 };
	bool order = true;

	free(out);
	free(err);
	side_set(true);
	run.win.mask = 255;
	emitter.keyseq = keyseq0;
	sess.log.cap = 0;
	r = r ? r : sock_open_emit() < 0 ? -1 : cls_open();
	ok(r == 0 && classes.cmap, "classes: --interval list keeps a seq -> class map", "r=%d", r);
	if (r) {
		reset_globals();
		return;
	}
	/* classes recorded at send (as cls_interval_step does) are the ones read back */
	for (seq = 0; seq < 24; seq++) {
		int b = seq % 4 == 3;	/* class 1 every fourth ping */
		uint16_t f = 0;

		classes.cmap[seq & classes.cmap_mask] = (uint8_t)b;
		cls_before_send(seq, mono_ns(), &f);
		order &= f >> PF_PRIO_SHIFT == (unsigned)b + 2 &&
			 run.sock_fd == classes.fd[b] && cls_of(seq) == b;
		n[b]++;
	}
	ok(order, "classes: a mapped seq goes on its class's socket with its priority", "%s", "");
	ok(n[0] == 18 && n[1] == 6 && cls_of(3) == 1 && cls_of(4) == 0, "classes: seq -> class read back from the map",
	   "%d %d", n[0], n[1]);
	close(classes.fd[0]);
	close(classes.fd[1]);
	free(classes.keyseq[1]);
	free(classes.cmap);
	run.sock_fd = -1;
	memset(&emitter, 0, sizeof(emitter));
	reset_globals();
}

/* -------------------------------------------------------------- outputs */

/* Is s (n bytes) valid UTF-8 without raw control characters? */
static bool json_text_ok(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s, *end = u + n;

	while (u < end) {
		size_t k;

		if (*u < 0x20 || *u == 0x7f) {
			return false;
		}
		k = utf8_len(u);
		if (!k || u + k > end) {
			return false;
		}
		u += k;
	}
	return true;
}

/* json_str(s) into a string (caller frees). */
static char *json_of(const char *s)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	json_str(f, s);
	fclose(f);
	return buf;
}

/* A fake clock: CLOCK_MONOTONIC and CLOCK_REALTIME = MONOTONIC + fake_off. */
static uint64_t fake_mono = 5000000000ULL;
static int64_t fake_off = 1700000000000000000LL;

static uint64_t fake_read(clockid_t c)
{
	fake_mono += 50;	/* time passes between reads */
	return c == CLOCK_MONOTONIC ? fake_mono : (uint64_t)((int64_t)fake_mono + fake_off);
}

/* An emit transaction sent at monotonic tx, rtt ns long, stamped with the fake clock. */
static void clk_txn(struct txn *x, uint64_t seq, uint64_t tx, uint64_t rtt, int64_t off_t1, int64_t off_t4)
{
	memset(x, 0, sizeof(*x));
	x->seq = seq;
	x->st = TF_USED | TF_SENT | TF_RECEIVED;
	x->deadline = tx + opts.timeout_ns;
	x->t[T1W] = (uint64_t)((int64_t)tx + 2000 + off_t1);
	x->t[T4W] = (uint64_t)((int64_t)tx + 2000 + (int64_t)rtt + off_t4);
	x->mono = tx + rtt + 5000;
}

static void test_outputs_clock(void)
{
	static uint64_t b[NMETRIC][64];
	static int64_t o[NMETRIC][64];
	struct txn x;
	char w[4][256];
	int i, nw;
	uint8_t *mem;
	const int64_t off0 = fake_off;

	reset_globals();
	side_set(true);
	for (i = 0; i < NMETRIC; i++) {
		hist_init(&sess.h[i], 1000, 64000, b[i], o[i], 64, test_lh(i));
	}
	log_setup(true, &mem, 16);
	kops.clock = fake_read;
	clk_start();
	ok(run.clk.base == fake_off, "clock: the base is REALTIME - MONOTONIC", "%" PRId64, run.clk.base);

	clk_txn(&x, 0, 6000000000ULL, 30000, fake_off, fake_off);
	txn_account(&x);
	ok(sess.h[M_RTT].n == 1 && !x.clk && !run.clk.steps, "clock: a steady clock: the rtt counts", "n=%" PRIu64, sess.h[M_RTT].n);

	/* CLOCK_REALTIME steps back 5 s between T1 and T4 */
	fake_off -= 5000000000LL;
	clk_txn(&x, 1, 7000000000ULL, 30000, off0, fake_off);
	txn_account(&x);
	ok((x.clk & CLK_STEPPED) && run.clk.steps == 1 && llabs(run.clk.last + 5000000000LL) < 1000 && sess.h[M_RTT].n == 1,
	   "clock: a 5 s backward step inside a transaction is seen, marked, not averaged",
	   "clk=%d steps=%" PRIu64 " last=%" PRId64 " n=%" PRIu64, x.clk, run.clk.steps, run.clk.last, sess.h[M_RTT].n);
	ok(txn_status(&x) == ST_STEPPED && run.clk.stepped == 1, "clock: its log status is 'stepped'", "status %d", txn_status(&x));
	log_push(&x);

	clk_txn(&x, 2, 8000000000ULL, 30000, fake_off, fake_off);
	txn_account(&x);
	ok(!x.clk && sess.h[M_RTT].n == 2 && sess.h[M_RTT].min > 0, "clock: after the step, on the new base, transactions count again",
	   "clk=%d n=%" PRIu64, x.clk, sess.h[M_RTT].n);
	log_push(&x);

	/* a forward step of 3 ms: positive, plausible-looking, still caught */
	fake_off += 3000000;
	clk_txn(&x, 3, 9000000000ULL, 30000, fake_off - 3000000, fake_off);
	txn_account(&x);
	ok((x.clk & CLK_STEPPED) && run.clk.steps == 2 && sess.h[M_RTT].n == 2 && sess.h[M_RTT].max < 1000000,
	   "clock: a 3 ms forward step (rtt would read 3.03 ms) is marked, not counted",
	   "clk=%d steps=%" PRIu64 " max=%" PRId64, x.clk, run.clk.steps, sess.h[M_RTT].max);
	log_push(&x);

	/* the same stamps without the step: never a false alarm */
	clk_txn(&x, 4, 10000000000ULL, 900000000, fake_off, fake_off);
	txn_account(&x);
	ok(!x.clk && sess.h[M_RTT].n == 3, "clock: a slow (0.9 s) but honest transaction is not marked", "clk=%d", x.clk);

	nw = clock_warnings(w, 4);
	ok(nw >= 1 && strstr(w[0], "stepped 2 times") && strstr(w[0], "2 transactions"),
	   "clock: the report warns: steps and marked transactions", "%d: %s", nw, nw ? w[0] : "");

	/* the log: stepped rows read back as stepped (text and csv) */
	{
		static const enum log_format fmts[] = { LOG_TEXT, LOG_CSV };
		char path[128], *err;
		struct tlog L;
		int f, r;

		for (f = 0; f < 2; f++) {
			tmp_path(path, sizeof(path), "clk");
			r = log_to_file(path, fmts[f]);
			r = r ? r : read_log(path, &L, &err);
			ok(!r && L.n == 3 && L.status[0] == ST_STEPPED && L.status[1] == ST_OK && L.status[2] == ST_STEPPED,
			   f ? "clock: csv log keeps 'stepped'" : "clock: text log keeps 'stepped'", "r=%d n=%" PRIu64, r, r ? 0 : L.n);
			if (!r) {
				tlog_free(&L);
				free(err);
			}
			unlink(path);
		}
	}
	free(mem);

	/* no monotonic reference (a log): a negative rtt is still never averaged */
	run.clk.have = false;
	run.clk.stepped = run.clk.steps = 0;
	clk_txn(&x, 5, 11000000000ULL, 30000, fake_off, fake_off);
	x.t[T4W] = x.t[T1W] - 7;
	txn_account(&x);
	ok((x.clk & CLK_STEPPED) && sess.h[M_RTT].min >= 0 && sess.h[M_RTT].n == 3,
	   "clock: a negative rtt is marked and left out", "clk=%d min=%" PRId64, x.clk, sess.h[M_RTT].min);
	nw = clock_warnings(w, 4);
	ok(nw >= 1 && strstr(w[0], "went backwards"), "clock: and warned about", "%d", nw);
	hist_add(&sess.h[M_NETWORK], -40, 9);
	nw = clock_warnings(w, 4);
	ok(nw >= 2 && strstr(w[1], "network has negative samples (min -40 ns)"),
	   "clock: a metric with negative samples is named in a warning", "%d: %s", nw, nw > 1 ? w[1] : "");

	/* reflect: one monotonic read per ping, T2 before it and T3 after it */
	reset_globals();
	kops.clock = fake_read;	/* reset_globals restores the whole kernel interface */
	side_set(false);
	for (i = 0; i < NMETRIC; i++) {
		hist_init(&sess.h[i], 1000, 64000, b[i], o[i], 64, test_lh(i));
	}
	clk_start();
	memset(&x, 0, sizeof(x));
	x.st = TF_USED | TF_SENT | TF_RECEIVED;
	x.mono = x.mono_lo = 12000000000ULL;
	x.t[T2W] = (uint64_t)((int64_t)x.mono - 3000 + fake_off);
	x.t[T3W] = (uint64_t)((int64_t)x.mono + 3000 + fake_off);
	txn_account(&x);
	ok(!x.clk && sess.h[M_RESPONSE].n == 1, "clock: reflect: consistent stamps count", "clk=%d", x.clk);
	fake_off -= 2000000;	/* 2 ms back between T2 and T3 */
	memset(&x, 0, sizeof(x));
	x.st = TF_USED | TF_SENT | TF_RECEIVED;
	x.mono = x.mono_lo = 13000000000ULL;
	x.t[T2W] = (uint64_t)((int64_t)x.mono - 3000 + fake_off + 2000000);
	x.t[T3W] = (uint64_t)((int64_t)x.mono + 3000 + fake_off);
	txn_account(&x);
	ok((x.clk & CLK_STEPPED) && sess.h[M_RESPONSE].n == 1 && run.clk.steps == 1,
	   "clock: reflect: a 2 ms backward step between T2 and T3 is marked", "clk=%d steps=%" PRIu64, x.clk, run.clk.steps);

	/*
	 * --spin: T2 and T3 between the read before the ping (mono_lo) and the
	 * read after the pong (mono).  A pong whose read came long after its T3
	 * (preempted in between) is no step; a step is still one.
	 */
	memset(&x, 0, sizeof(x));
	x.st = TF_USED | TF_SENT | TF_RECEIVED;
	x.mono_lo = 14000000000ULL;
	x.mono = x.mono_lo + 20000 + 3 * CLK_TOL_NS;	/* 300 us between T3 and the read after */
	x.t[T2W] = (uint64_t)((int64_t)x.mono_lo + 10000 + fake_off);
	x.t[T3W] = (uint64_t)((int64_t)x.mono_lo + 20000 + fake_off);
	txn_account(&x);
	ok(!x.clk && sess.h[M_RESPONSE].n == 2 && run.clk.steps == 1,
	   "clock: reflect --spin: T3 read long before the read after the pong is no step", "clk=%d n=%" PRIu64, x.clk,
	   sess.h[M_RESPONSE].n);
	fake_off -= 2000000;	/* 2 ms back again, between T2 and T3 */
	memset(&x, 0, sizeof(x));
	x.st = TF_USED | TF_SENT | TF_RECEIVED;
	x.mono_lo = 15000000000ULL;
	x.mono = x.mono_lo + 30000;
	x.t[T2W] = (uint64_t)((int64_t)x.mono_lo + 10000 + fake_off + 2000000);
	x.t[T3W] = (uint64_t)((int64_t)x.mono_lo + 20000 + fake_off);
	txn_account(&x);
	ok((x.clk & CLK_STEPPED) && run.clk.steps == 2,
	   "clock: reflect --spin: a 2 ms backward step between T2 and T3 is marked", "clk=%d steps=%" PRIu64, x.clk,
	   run.clk.steps);
	fake_off += 4000000;	/* 4 ms forward, before T2 */
	memset(&x, 0, sizeof(x));
	x.st = TF_USED | TF_SENT | TF_RECEIVED;
	x.mono_lo = 16000000000ULL;
	x.mono = x.mono_lo + 30000;
	x.t[T2W] = (uint64_t)((int64_t)x.mono_lo + 10000 + fake_off);
	x.t[T3W] = (uint64_t)((int64_t)x.mono_lo + 20000 + fake_off);
	txn_account(&x);
	ok((x.clk & CLK_STEPPED) && run.clk.steps == 3,
	   "clock: reflect --spin: a 4 ms forward step before T2 is marked", "clk=%d steps=%" PRIu64, x.clk,
	   run.clk.steps);
	kops_restore();
	fake_off = off0;
}

/* Random bytes, no NUL. */
static void rnd_bytes(char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		s[i] = (char)(rnd() % 255 + 1);
	}
	s[n] = 0;
}

/* What the last analyze_files printed: stdout, stderr; --json FILE for the next (NULL: none). */
static char *ana_out, *ana_err;
static const char *ana_json, *ana_plot;

/* Run --analyze on files (stdout and stderr captured in ana_out, ana_err); its exit code. */
static int analyze_files(const char *a, const char *b)
{
	struct capture co, ce;
	int r;

	reset_globals();
	opts.analyze[0] = a;
	opts.analyze[1] = b;
	opts.json = ana_json;
	opts.plot = ana_plot;
	ana_json = ana_plot = NULL;
	opts.mode = MODE_ANALYZE;
	memset(&run.clk, 0, sizeof(run.clk));
	cap_start(&co, 1);
	cap_start(&ce, 2);
	r = analyze_main();
	free(ana_err);
	free(ana_out);
	ana_err = cap_stop(&ce);
	ana_out = cap_stop(&co);
	return r;
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A client's csv log of n rows (rtt 10 us each, SEQ from seq0) appended to f. */
static void csv_rows(FILE *f, int seq0, int n)
{
	int i;

	for (i = seq0; i < seq0 + n; i++) {
		uint64_t t1 = 1700000000000000000ULL + (uint64_t)i * 1000000;

		uint64_t s = NSEC_PER_SEC;

		fprintf(f, "%d,ok,%" PRIu64 ".%09" PRIu64 ",%" PRIu64 ".%09" PRIu64 ",10000\n", i, t1 / s, t1 % s,
			(t1 + 10000) / s, (t1 + 10000) % s);
	}
}

static char grow_path[PATH_MAX];

/* Between --analyze's passes: 50 more rows, as a run still writing its log would add. */
static void grow_log(void)
{
	FILE *f = fopen(grow_path, "a");

	if (f) {
		csv_rows(f, 100, 50);
		fclose(f);
	}
}

static void interrupt_analysis(void)
{
	run.stop_signal = 1;
}

/*
 * One analysis describes one set of rows: a log that grows after the first
 * pass gives a report, JSON and plot of the first pass's rows, and says it
 * changed; outputs are replaced whole, or left as they were when the
 * analysis is interrupted.
 */
static void test_analyze_consistent(void)
{
	char jpath[PATH_MAX], spath[PATH_MAX], *js, *svg;
	FILE *f;
	int r;

	tmp_path(grow_path, sizeof(grow_path), "grow.csv");
	tmp_path(jpath, sizeof(jpath), "grow.json");
	tmp_path(spath, sizeof(spath), "grow.svg");
	f = fopen(grow_path, "w");
	if (!f) {
		ok(false, "analyze consistent: a log to grow", "%s", strerror(errno));
		return;
	}
	fputs("# rant 1.0.0 mode=emit wire=software server_wire=software app_stamps=off session=0x00000001 records=100 dropped=0 filtered=0\n"
	      "seq,status,t1_ksw,t4_ksw,rtt_ns\n", f);
	csv_rows(f, 0, 100);
	fclose(f);
	write_text(jpath, "{\"kept\": true}\n");
	write_text(spath, "<svg>kept</svg>\n");
	ana_json = jpath;
	ana_plot = spath;
	analyze_between = interrupt_analysis;
	r = analyze_files(grow_path, NULL);
	js = read_file(jpath);
	svg = read_file(spath);
	ok(r == EXIT_RUNTIME && js && !strcmp(js, "{\"kept\": true}\n") && svg && !strcmp(svg, "<svg>kept</svg>\n") &&
	   strstr(ana_err, "interrupted"), "analyze consistent: interrupted: the JSON and SVG left as they were, said",
	   "r=%d err='%s'", r, ana_err);
	free(js);
	free(svg);
	ana_json = jpath;
	ana_plot = spath;
	analyze_between = grow_log;
	r = analyze_files(grow_path, NULL);
	analyze_between = NULL;
	js = read_file(jpath);
	svg = read_file(spath);
	ok(r == 0 && js && strstr(js, "\"sent\": 100,") && strstr(js, "\"samples\": 100,") && strstr(js, "changed while it was read") &&
	   strstr(ana_err, "changed while it was read") && strstr(ana_err, "first 100 rows"),
	   "analyze consistent: a log grown after the first pass: the JSON of its first 100 rows, and said", "r=%d err='%s'",
	   r, ana_err);
	ok(svg && strstr(svg, "100 samples of rtt over 99 ms"), "analyze consistent: the plot of the same 100 rows",
	   "%.300s", svg ? svg : "(none)");
	free(js);
	free(svg);
	reset_globals();
}

static void test_outputs_analyze(void)
{
	char p1[128], p2[128];
	int r;

	tmp_path(p1, sizeof(p1), "ar");
	tmp_path(p2, sizeof(p2), "ae");
	/* a restarted reflector (first SEQ 1000), a gap (1005), a repeated SEQ (1003), a reorder (1008 after 1009) */
	write_text(p1, "SEQ T2_KSW T3_KSW RESPONSE\n-\n"
		   "1000 1.000000000 1.000001000 1000\n1001 1.000000000 1.000001000 1000\n"
		   "1002 1.000000000 1.000001000 1000\n1003 1.000000000 1.000001000 1000\n"
		   "1003 1.000000000 1.000001000 1000\n1004 1.000000000 1.000001000 1000\n"
		   "1006 1.000000000 1.000001000 1000\n1007 1.000000000 1.000001000 1000\n"
		   "1009 1.000000000 1.000001000 1000\n1008 1.000000000 1.000001000 1000\n");
	r = analyze_files(p1, NULL);
	ok(r == 0 && sess.c.lost == 1 && sess.c.late == 1 && sess.c.received == 9 && sess.c.sent == 9 &&
	   strstr(ana_err, "1 rows repeat an earlier SEQ") && strstr(ana_out, "duplicate unknown"),
	   "analyze: reflect log of a restarted reflector: lost 1 (the gap), the repeated row counted once and said, late 1 (reorder), received 9",
	   "r=%d lost %" PRIu64 " late %" PRIu64 " received %" PRIu64 " stderr '%s'", r, sess.c.lost, sess.c.late,
	   sess.c.received, ana_err);
	/* empty and one-row logs, alone and joined */
	write_text(p1, "SEQ T2_KSW T3_KSW RESPONSE\n-\n");
	write_text(p2, "SEQ T1_KSW T4_KSW RTT\n-\n");
	r = analyze_files(p1, NULL);
	ok(r == 0 && sess.c.sent == 0 && sess.c.lost == 0, "analyze: an empty reflect log: zero counts, exit 0", "r=%d", r);
	r = analyze_files(p2, p1);
	ok(r == 2, "analyze: empty emit + empty reflect log: exit 2 (nothing to join), no crash", "r=%d", r);
	write_text(p2, "SEQ T1_KSW T4_KSW RTT\n-\n5 1.000000000 1.000010000 10000\n");
	r = analyze_files(p2, p1);
	ok(r == 2, "analyze: one-row emit + empty reflect log: exit 2, no crash", "r=%d", r);
	r = analyze_files(p2, NULL);
	ok(r == 0 && sess.c.received == 1 && sess.h[M_RTT].n == 1, "analyze: a one-row emit log: exit 0, one received, one sample", "r=%d", r);
	unlink(p1);
	unlink(p2);
}

/* --analyze of a log with SIZE, into JSON; the JSON text (NULL if none) and the exit code. */
static char *analyze_json(const char *log, int *r)
{
	char js[128];
	char *text;

	tmp_path(js, sizeof(js), "aj");
	unlink(js);
	ana_json = js;
	*r = analyze_files(log, NULL);
	text = read_file(js);
	unlink(js);
	return text;
}

/*
 * Logs rant could not have written are refused with FILE:LINE; what it
 * could have written gives the live run's numbers (issue: sizes, stepped
 * rows, the reflector's kernel stamps in the client's log).
 */
static void test_analyze_odd(void)
{
	static const char hdr[] = "SEQ T1_KSW T4_KSW RTT SIZE\n-\n";
	static const char *const bad[] = { "0", "10", "23", "65001" };	/* SIZE_MIN is 24 */
	char path[128], buf[1024], want[200], *j;
	size_t i;
	int r;

	tmp_path(path, sizeof(path), "odd");
	/* SIZE: only what rant sends */
	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		snprintf(buf, sizeof(buf), "%s0 1.000000000 1.000010000 10000 64\n1 2.000000000 2.000010000 10000 %s\n", hdr,
			 bad[i]);
		write_text(path, buf);
		r = analyze_files(path, NULL);
		snprintf(want, sizeof(want), "%s:4: bad size", path);
		ok(r == 2 && strstr(ana_err, want), "analyze: SIZE below SIZE_MIN or above 65000 is refused with FILE:LINE",
		   "SIZE %s: r=%d '%s'", bad[i], r, ana_err);
	}
	/* a stepped row was received: counted so in its size row as in the totals */
	snprintf(buf, sizeof(buf), "%s0 1.000000000 1.000010000 10000 64\n1 2.000000000 2.000010000 stepped 64\n"
		 "2 3.000000000 3.000010000 10000 128\n", hdr);
	write_text(path, buf);
	j = analyze_json(path, &r);
	ok(r == 0 && j && strstr(j, "\"received\": 3,") &&
	   strstr(j, "{\"size\": 64, \"packets\": {\"sent\": 2, \"received\": 2, \"lost\": 0,"),
	   "analyze: a stepped row is received in its size row, as in the totals", "r=%d %.600s", r, j ? j : "");
	free(j);
	/* a size the list repeats is its own turn: 64, 200, 64 are three rows */
	snprintf(buf, sizeof(buf), "%s0 1.000000000 1.000010000 10000 64\n1 2.000000000 2.000020000 20000 200\n"
		 "2 3.000000000 3.000030000 30000 64\n3 4.000000000 4.000040000 40000 64\n", hdr);
	write_text(path, buf);
	j = analyze_json(path, &r);
	ok(r == 0 && j && strstr(j, "{\"size\": 64, \"packets\": {\"sent\": 1,") &&
	   strstr(j, "{\"size\": 200, \"packets\": {\"sent\": 1,") &&
	   strstr(j, "{\"size\": 64, \"packets\": {\"sent\": 2,"),
	   "analyze: 64, 200, 64: three size rows, in turn", "r=%d %.600s", r, j ? j : "");
	free(j);
	/* a row of an earlier turn with another size: not a log rant writes */
	snprintf(buf, sizeof(buf), "%s0 1.000000000 1.000010000 10000 64\n2 2.000000000 2.000020000 20000 200\n"
		 "1 3.000000000 3.000030000 30000 200\n", hdr);
	write_text(path, buf);
	r = analyze_files(path, NULL);
	snprintf(want, sizeof(want), "%s:5: SIZE is not the size of its turn", path);
	ok(r == 2 && strstr(ana_err, want), "analyze: a row below a later turn's first SEQ with its size is refused",
	   "r=%d '%s'", r, ana_err);
	/* csv size_turns: a size repeated back to back is still two turns */
	snprintf(buf, sizeof(buf), "# rant 1.0.0 mode=emit dropped=0 filtered=0 size_turns=64@0/64@2 cmdline=x\n"
		 "seq,status,t1_ksw,t4_ksw,rtt_ns,size\n0,ok,1.000000000,1.000010000,10000,64\n"
		 "1,ok,2.000000000,2.000010000,10000,64\n2,ok,3.000000000,3.000020000,20000,64\n");
	write_text(path, buf);
	j = analyze_json(path, &r);
	ok(r == 0 && j && strstr(j, "{\"size\": 64, \"packets\": {\"sent\": 2,") &&
	   strstr(j, "{\"size\": 64, \"packets\": {\"sent\": 1,"),
	   "analyze: size_turns=64@0/64@2: two rows of 64", "r=%d %.600s", r, j ? j : "");
	free(j);
	unlink(path);
}

/* A software-stamped client against a reflector that sends its kernel stamps: they are logged. */
static void test_log_srv_kx(void)
{
	struct txn x;
	struct tlog L;
	uint8_t *mem;
	char path[128], *err = NULL, *text;
	int64_t v;
	int r;

	reset_globals();
	log_setup(true, &mem, 4);
	mk_emit_txn(&x, 7, K_OK);
	x.t[T2K] = x.t[T2W] + 300;
	x.t[T3K] = x.t[T3W] - 200;
	log_push(&x);
	tmp_path(path, sizeof(path), "srvkx");
	r = log_to_file(path, LOG_CSV);
	text = read_file(path);
	ok(!r && text && !strstr(text, ",t2_k,"), "log: no t2_k column when the reflector sent no kernel stamps", "%.300s",
	   text ? text : "");
	free(text);
	sess.srv_kx = true;
	r = log_to_file(path, LOG_CSV);
	text = read_file(path);
	r = r ? r : read_log(path, &L, &err);
	ok(!r && text && strstr(text, ",t2_k,") && strstr(text, ",t3_k,") && L.n == 1 && (L.have & (1u << T2K)) &&
	   L.row[0].t[T2K] == x.t[T2K] && metric_value(M_SRV_RX_NIC, L.row[0].t, &v) && v == 300 &&
	   metric_value(M_SRV_TX_NIC, L.row[0].t, &v) && v == 200,
	   "log: a software client's csv log keeps the reflector's T2_K and T3_K, --analyze reads them back", "r=%d %.300s",
	   r, text ? text : "");
	if (!r) {
		tlog_free(&L);
	}
	free(err);
	free(text);
	free(mem);
	unlink(path);
}

static void test_outputs(void)
{
	char s[600], *j;
	bool good = true;
	int i;

	/* JSON: every byte string becomes valid UTF-8 text */
	j = json_of("a\xff" "b\xc3\xa9" "c\xc0\x80" "d\xed\xa0\x80" "e\n\"\\");
	ok(j && !strcmp(j, "\"a\\u00ffb\xc3\xa9" "c\\u00c0\\u0080d\\u00ed\\u00a0\\u0080e\\u000a\\\"\\\\\""),
	   "json: invalid UTF-8 bytes (stray, overlong, surrogate) become \\u00XX; valid UTF-8 stays", "%s", j);
	free(j);
	for (i = 0; i < 2000 && good; i++) {
		size_t n = (size_t)rnd_range(0, 40);

		rnd_bytes(s, n);
		j = json_of(s);
		good = j && j[0] == '"' && json_text_ok(j, strlen(j));
		free(j);
	}
	ok(good, "json: 2000 random byte strings all give valid UTF-8 without raw control characters", "failed at %d", i);
}

static void test_outputs_property(void)
{
	char path[128], *err;
	bool good = true;
	int i, r;

	/* property: any command line, any format and side: the log reads back */
	for (i = 0, good = true; i < 300 && good; i++) {
		bool emit = rnd() & 1;
		enum log_format fmt = rnd() & 1 ? LOG_CSV : LOG_TEXT;
		uint8_t *mem;
		struct txn x;
		struct tlog L;
		uint64_t k, n = (uint64_t)rnd_range(0, 5), want = 0;

		reset_globals();
		opts.sw_stamps = rnd() & 1;
		run.ts.hw = rnd() & 1;
		log_setup(emit, &mem, 8);
		sess.srv_hw = rnd() & 1;
		rnd_bytes(opts.cmdline, (size_t)rnd_range(0, sizeof(opts.cmdline) - 1));
		opts.log = opts.cmdline;
		for (k = 0; k < n; k++) {
			int kind = (int)(rnd() % NKIND);

			if (emit) {
				mk_emit_txn(&x, k, kind);
			} else {
				mk_reflect_txn(&x, k, kind);
			}
			want += !(fmt == LOG_TEXT && txn_status(&x) == ST_WARMUP);
			log_push(&x);
		}
		tmp_path(path, sizeof(path), "prop");
		r = log_to_file(path, fmt);
		r = r ? r : read_log(path, &L, &err);
		good = !r && L.n == want && L.emit == emit && run.log_out.rows == want;
		if (!r) {
			tlog_free(&L);
			free(err);
		}
		if (!good) {
			printf("# iteration %d: emit %d fmt %d n %" PRIu64 " want %" PRIu64 " r %d\n", i, emit, fmt, n, want, r);
		}
		unlink(path);
		free(mem);
	}
	ok(good, "log: 300 random command lines (any byte: newlines, commas, non-UTF-8), formats and sides read back",
	   "failed at %d", i);
}

static void test_outputs_failed_writes(void)
{
	int r;

	/* failed writes are reported, with the file and the error */
	{
		FILE *f = fopen("/dev/full", "w");
		struct capture ce;
		char *e;
		int fd;
		uint8_t *mem;
		struct txn x;

		if (f) {
			fprintf(f, "report\n");
			cap_start(&ce, 2);
			r = out_finish("stdout: writing the report", f, true);
			e = cap_stop(&ce);
			ok(r == -ENOSPC && e && strstr(e, "rant: stdout: writing the report failed: No space left on device\n"),
			   "out_finish: /dev/full gives -ENOSPC and one line naming the file", "r=%d %s", r, e ? e : "");
			free(e);
		}
		reset_globals();
		log_setup(true, &mem, 4);
		mk_emit_txn(&x, 0, K_OK);
		log_push(&x);
		opts.log = "/dev/full";
		fd = open("/dev/full", O_WRONLY);
		cap_start(&ce, 2);
		r = log_write(fd, LOG_CSV);
		e = cap_stop(&ce);
		ok(r == -ENOSPC && run.log_out.err == -ENOSPC && e && strstr(e, "rant: --log: writing /dev/full failed: No space left on device\n"),
		   "log_write: a failed write is -errno, remembered for the report, and said once", "r=%d %s", r, e ? e : "");
		free(e);
		close(fd);
		free(mem);
	}

	/*
	 * fds 0-2 closed: fds_own points them at /dev/null before anything
	 * opens.  The child reports through a pipe, not its exit status, which
	 * valgrind replaces with its own when it checks the child's leaks.
	 */
	{
		int pfd[2] = { -1, -1 };
		char res = 'x';
		pid_t pid = pipe(pfd) == 0 ? fork() : -1;

		if (pid == 0) {
			struct stat a, b;
			int k, sfd;
			char c = '0';

			close(0);
			close(1);
			close(2);
			if (fds_own() < 0) {
				c = '3';
			} else {
				sfd = socket(AF_INET, SOCK_DGRAM, 0);
				stat("/dev/null", &b);
				for (k = 0; k < 3; k++) {
					if (fstat(k, &a) < 0 || a.st_rdev != b.st_rdev) {
						c = '4';
					}
				}
				if (c == '0' && sfd <= 2) {
					c = '5';
				}
			}
			if (write(pfd[1], &c, 1) != 1) {
				_exit(6);
			}
			_exit(0);
		}
		if (pid > 0) {
			close(pfd[1]);
			if (read(pfd[0], &res, 1) != 1) {
				res = 'r';
			}
			waitpid(pid, NULL, 0);
			close(pfd[0]);
		}
		ok(res == '0', "fds_own: closed 0-2 become /dev/null; a socket then gets fd 3 or above",
		   "child said '%c'", res);
	}
}

static void test_outputs_refused(void)
{
	char path[128];
	int r;

	/* refused inputs and outputs: FIFOs, devices, directories */
	{
		struct capture ce;
		struct tlog L;
		char *e;

		tmp_path(path, sizeof(path), "fifo");
		mkfifo(path, 0600);
		cap_start(&ce, 2);
		r = tlog_read(path, &L);
		e = cap_stop(&ce);
		ok(r < 0 && e && strstr(e, "is a FIFO"), "--analyze: a FIFO is refused at once", "%s", e ? e : "");
		free(e);
		cap_start(&ce, 2);
		r = out_check("--log", path);
		e = cap_stop(&ce);
		ok(r < 0 && e && strstr(e, "--log: ") && strstr(e, "is a FIFO"), "--log: a FIFO is refused", "%s", e ? e : "");
		free(e);
		unlink(path);
		cap_start(&ce, 2);
		r = out_check("--json", "/dev/null");
		e = cap_stop(&ce);
		ok(r < 0 && e && strstr(e, "character device"), "--json: a device is refused", "%s", e ? e : "");
		free(e);
		cap_start(&ce, 2);
		r = tlog_read("/tmp", &L);
		e = cap_stop(&ce);
		ok(r < 0 && e && strstr(e, "directory"), "--analyze: a directory is refused", "%s", e ? e : "");
		free(e);
	}
}

static void test_outputs_analyze_twice(void)
{
	int r;

	/* --analyze twice: the second is the second log; a third is an error */
	{
		struct args a;
		char *o, *e;

		r = parse_str("--analyze A --analyze B", &a, &o, &e);
		ok(r == 0 && opts.analyze[0] && !strcmp(opts.analyze[0], "A") && opts.analyze[1] && !strcmp(opts.analyze[1], "B"),
		   "--analyze A --analyze B: both logs, none dropped", "r=%d", r);
		free(o);
		free(e);
		r = parse_str("--analyze A --analyze B --analyze C", &a, &o, &e);
		ok(r < 0 && e && strstr(e, "--analyze: at most two logs"), "--analyze three times: exit 2", "%s", e ? e : "");
		free(o);
		free(e);
		r = parse_str("--analyze A --analyze B C", &a, &o, &e);
		ok(r < 0, "--analyze A --analyze B C: exit 2", "r=%d", r);
		free(o);
		free(e);
	}
}

/* ------------------------------------------- hardware path: real NICs */

static unsigned fake_kernel_version;
static unsigned fake_kernel(void)
{
	return fake_kernel_version;
}

static void test_hwpath(void)
{
	char *err;
	int r;

	reset_globals();

	/* exact TX keys: which kernels get SCM_TS_OPT_ID (the rest: the counter, re-keyed on failure) */
	kops.kernel = fake_kernel;
	opts.mode = MODE_REFLECT;
	fake_kernel_version = 6018;
	ts_keys_setup();
	ok(run.ts.key_cmsg, "keys: 6.18 reflector -> SCM_TS_OPT_ID per send", "cmsg=%d", run.ts.key_cmsg);
	fake_kernel_version = 6013;
	ts_keys_setup();
	ok(run.ts.key_cmsg, "keys: 6.13 reflector -> SCM_TS_OPT_ID", "cmsg=%d", run.ts.key_cmsg);
	/* the client's connected socket keeps its cached route: no cmsg, the counter */
	opts.mode = MODE_EMIT;
	ts_keys_setup();
	ok(!run.ts.key_cmsg, "keys: 6.13 client -> counter", "cmsg=%d", run.ts.key_cmsg);
	fake_kernel_version = 6018;
	ts_keys_setup();
	ok(!run.ts.key_cmsg, "keys: 6.18 client -> counter", "cmsg=%d", run.ts.key_cmsg);
	opts.mode = MODE_REFLECT;
	fake_kernel_version = 6012;
	ts_keys_setup();
	ok(!run.ts.key_cmsg, "keys: 6.12 reflector -> counter", "cmsg=%d", run.ts.key_cmsg);
	fake_kernel_version = 0;
	ts_keys_setup();
	ok(!run.ts.key_cmsg, "keys: unknown kernel -> counter", "cmsg=%d", run.ts.key_cmsg);
	kops_restore();
	cfg_defaults();	/* the mode the key choices were tried in */

	/*
	 * Leave the device as found: a ptp4l's config (TX_ON, PTP_V2_L2_EVENT,
	 * a filter rant never asks for) and a driver that answers every
	 * request with FILTER_NONE: after each NONE answer the ptp4l's config
	 * goes back at once, before the next request or the fallback.
	 */
	nic_full();
	nic.g_cfg.tx_type = HWTSTAMP_TX_ON;
	nic.g_cfg.rx_filter = HWTSTAMP_FILTER_PTP_V2_L2_EVENT;
	nic.s_accept = BIT(HWTSTAMP_FILTER_ALL) | BIT(HWTSTAMP_FILTER_PTP_V2_EVENT) | BIT(HWTSTAMP_FILTER_PTP_V2_L2_EVENT);
	nic.s_writeback = HWTSTAMP_FILTER_NONE;
	r = hw_setup("eth0", TS_AUTO, &err);
	free(err);
	ok(r == 0 && !run.ts.hw && nic.n_s == 4 && nic.s_req[0] == HWTSTAMP_FILTER_ALL &&
	   nic.s_req[1] == HWTSTAMP_FILTER_PTP_V2_L2_EVENT && nic.s_req[2] == HWTSTAMP_FILTER_PTP_V2_EVENT &&
	   nic.s_req[3] == HWTSTAMP_FILTER_PTP_V2_L2_EVENT && nic.last_s.tx_type == HWTSTAMP_TX_ON,
	   "found: each FILTER_NONE answer is followed at once by the previous config", "n_s=%d req=%d,%d,%d,%d",
	   nic.n_s, nic.s_req[0], nic.s_req[1], nic.s_req[2], nic.s_req[3]);
	/* the same driver, but its config could not be read: nothing is written back */
	nic_full();
	nic.g_err = -EOPNOTSUPP;
	nic.s_writeback = HWTSTAMP_FILTER_NONE;
	r = hw_setup("eth0", TS_AUTO, &err);
	free(err);
	ok(r == 0 && !run.ts.hw && nic.n_s == 2 && nic.s_req[0] == HWTSTAMP_FILTER_ALL &&
	   nic.s_req[1] == HWTSTAMP_FILTER_PTP_V2_EVENT, "found: config unreadable -> only rant's requests, no invented restore",
	   "n_s=%d", nic.n_s);

	/* stamps belong to -i: a hardware stamp from another ifindex is counted, never used */
	{
		struct scm_timestamping st = mk_scm(1700000000, 5, 1700000001, 7);
		struct scm_ts_pktinfo pi = { .if_index = 7, .pkt_length = 64 };
		struct capture ce;
		struct ts_cmsg c;
		struct cbuf b;

		reset_globals();
		run.ts_foreign = 0;
		run.ts.hw = true;
		run.ts.ifindex = 3;
		cb_init(&b);
		cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
		cb_add(&b, SOL_SOCKET, SCM_TIMESTAMPING_PKTINFO, &pi, sizeof(pi), 0);
		ts_parse(&b.msg, &c);
		ok(c.have_pktinfo && c.ifindex == 7 && !c.bad, "pktinfo: SCM_TIMESTAMPING_PKTINFO parsed (ifindex 7)",
		   "have=%d if=%u bad=%u", c.have_pktinfo, c.ifindex, c.bad);
		ok(ts_wire(&c) == 0 && run.ts_foreign == 1, "pktinfo: stamp of ifindex 7 on a socket of ifindex 3 -> missing, counted",
		   "foreign=%" PRIu64, run.ts_foreign);
		pi.if_index = 3;
		cb_init(&b);
		cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
		cb_add(&b, SOL_SOCKET, SCM_TIMESTAMPING_PKTINFO, &pi, sizeof(pi), 0);
		ts_parse(&b.msg, &c);
		ok(ts_wire(&c) == 1700000001000000007ULL && run.ts_foreign == 1, "pktinfo: stamp of -i's ifindex -> used",
		   "foreign=%" PRIu64, run.ts_foreign);
		cb_init(&b);
		cb_add(&b, SOL_SOCKET, SCM_TIMESTAMPING_PKTINFO, &pi, 4, 0);
		ts_parse(&b.msg, &c);
		ok(!c.have_pktinfo && c.bad == 1, "pktinfo: a short SCM_TIMESTAMPING_PKTINFO is refused", "bad=%u", c.bad);
		ok((ts_sockopt_flags(true) & SOF_TIMESTAMPING_OPT_PKTINFO) && !(ts_sockopt_flags(false) & SOF_TIMESTAMPING_OPT_PKTINFO),
		   "pktinfo: asked with hardware stamps only", "flags=%#x", ts_sockopt_flags(true));
		run.ts_foreign = 0;

		/* SO_BINDTODEVICE refused: an error with hardware stamps, a warning without */
		opts.iface = "eth0";
		run.ts.hw = true;
		run.ts.restore = false;
		cap_start(&ce, 2);
		r = ts_bind_check(-1, EPERM);
		err = cap_stop(&ce);
		ok(r == -1 && one_rant_line(err) && strstr(err, "--interface") && strstr(err, "eth0"),
		   "bind: SO_BINDTODEVICE refused with hardware stamps -> error naming -i", "r=%d err='%s'", r, err);
		free(err);
		run.ts.hw = false;
		cap_start(&ce, 2);
		r = ts_bind_check(-1, EPERM);
		err = cap_stop(&ce);
		ok(r == 0 && one_rant_line(err) && strstr(err, "warning"), "bind: refused with software stamps -> a warning",
		   "r=%d err='%s'", r, err);
		free(err);
	}
}

/*
 * A PHC whose time is CLOCK_REALTIME + fake_phc.off (or, still, stands at
 * the first reading's), answering the chosen ioctls; its readings' system
 * time is a fixed one plus sys_at.
 */
static struct {
	int open_err, precise_err, extended_err, plain_err;
	int64_t off, sys_at;
	bool still;
	int n_precise, n_extended, n_plain, n_open;
} fake_phc;

#define FAKE_SYS	1700000000000000000LL

/* the fake PHC's time when the system's is t */
static int64_t fake_dev(int64_t t)
{
	return (fake_phc.still ? FAKE_SYS : t) + fake_phc.off;
}

static int fake_phc_open(int index)
{
	fake_phc.n_open++;
	return fake_phc.open_err ? fake_phc.open_err : 1000 + index;
}

static void fake_pct(struct ptp_clock_time *t, int64_t ns)
{
	t->sec = ns / 1000000000;
	t->nsec = (uint32_t)(ns % 1000000000);
}

static int fake_phc_ioctl(int fd, unsigned long req, void *arg)
{
	const int64_t sys = FAKE_SYS + fake_phc.sys_at;
	unsigned i;

	(void)fd;
	if (req == PTP_SYS_OFFSET_PRECISE) {
		struct ptp_sys_offset_precise *p = arg;

		fake_phc.n_precise++;
		if (fake_phc.precise_err) {
			return fake_phc.precise_err;
		}
		fake_pct(&p->sys_realtime, sys);
		fake_pct(&p->device, fake_dev(sys));
		return 0;
	}
	if (req == PTP_SYS_OFFSET_EXTENDED) {
		struct ptp_sys_offset_extended *e = arg;

		fake_phc.n_extended++;
		if (fake_phc.extended_err) {
			return fake_phc.extended_err;
		}
		/* windows of 1000, 900, ... ns, the sample at i == 4 the narrowest (100 ns) */
		for (i = 0; i < e->n_samples; i++) {
			int64_t a = sys + (int64_t)i * 10000, w = i == 4 ? 100 : 1000 - (int64_t)i * 10;

			fake_pct(&e->ts[i][0], a);
			/* only the narrowest is read in its middle; the others are skewed by 300 ns */
			fake_pct(&e->ts[i][1], fake_dev(a + w / 2) + (i == 4 ? 0 : 300));
			fake_pct(&e->ts[i][2], a + w);
		}
		return 0;
	}
	if (req == PTP_SYS_OFFSET) {
		struct ptp_sys_offset *o = arg;

		fake_phc.n_plain++;
		if (fake_phc.plain_err) {
			return fake_phc.plain_err;
		}
		for (i = 0; i <= 2 * o->n_samples; i += 2) {
			fake_pct(&o->ts[i], sys + (int64_t)i * 1000 + (i >= 6 ? 40 : 0));
		}
		for (i = 1; i < 2 * o->n_samples; i += 2) {
			/* sample 2 (ts[4]..ts[6]) is the narrowest: 2000 + 40 ns apart, others 2000 */
			fake_pct(&o->ts[i], fake_dev(sys + (int64_t)(i - 1) * 1000 + 1000 + (i == 5 ? 20 : 0)));
		}
		return 0;
	}
	return -ENOTTY;
}

static void phc_fake_start(void)
{
	memset(&run.phc, 0, sizeof(run.phc));
	run.phc.fd = -1;
	run.phc.index = -1;
	kops.phc_open = fake_phc_open;
	kops.phc_ioctl = fake_phc_ioctl;
}

static void test_phc(void)
{
	char w[300];
	double ppm = 0;
	int r;

	reset_globals();
	/* PRECISE: the device's own cross-timestamp */
	memset(&fake_phc, 0, sizeof(fake_phc));
	fake_phc.off = 37000000123LL;	/* TAI - UTC and a bit */
	phc_fake_start();
	r = phc_start(3);
	ok(r == 0 && run.phc.method == PHC_PRECISE && run.phc.fd == 1003 && run.phc.n == 1 && run.phc.last_off == fake_phc.off,
	   "phc: PRECISE answered -> used, offset exact", "r=%d method=%d n=%" PRIu64 " off=%" PRId64, r, run.phc.method, run.phc.n,
	   run.phc.last_off);
	ok(!phc_warning(w, sizeof(w)) && phc_is_tai() == (tai_utc_ns() == 37000000000LL),
	   "phc: 37 s from CLOCK_REALTIME is TAI (ptp4l's timescale): disciplined, no warning", "'%s'", w);
	run.phc.last_off = 3000000;
	ok(phc_warning(w, sizeof(w)) && strstr(w, "phc2sys") && strstr(w, "/dev/ptp3") && !phc_is_tai(),
	   "phc: 3 ms from CLOCK_REALTIME -> warning naming phc2sys and the device", "'%s'", w);
	run.phc.last_off = tai_utc_ns() + 2000000;
	ok(phc_warning(w, sizeof(w)) && !phc_is_tai(), "phc: TAI - UTC + 2 ms -> neither UTC nor TAI: warning",
	   "'%s'", w);
	run.phc.last_off = fake_phc.off;
	phc_end();
	ok(run.phc.fd == -1 && run.phc.n == 2, "phc: a last reading at the end", "fd=%d n=%" PRIu64, run.phc.fd, run.phc.n);

	/* EXTENDED when PRECISE is not there: the narrowest window's midpoint */
	memset(&fake_phc, 0, sizeof(fake_phc));
	fake_phc.precise_err = -EOPNOTSUPP;
	fake_phc.off = -2500;
	phc_fake_start();
	r = phc_start(1);
	ok(r == 0 && run.phc.method == PHC_EXTENDED && run.phc.last_off == -2500 && run.phc.window == 100,
	   "phc: PRECISE refused -> EXTENDED, offset from the narrowest window", "r=%d method=%d off=%" PRId64 " w=%" PRId64,
	   r, run.phc.method, run.phc.last_off, run.phc.window);
	ok(fake_phc.n_precise == 1 && !phc_warning(w, sizeof(w)), "phc: PRECISE asked once; -2.5 us, no drift: no warning",
	   "n_precise=%d", fake_phc.n_precise);
	phc_tick();
	ok(run.phc.n == 2 && fake_phc.n_precise == 1 && fake_phc.n_extended == 3,
	   "phc: each tick reads with the method chosen at start", "n=%" PRIu64 " ext=%d", run.phc.n, fake_phc.n_extended);

	/* plain PTP_SYS_OFFSET when neither is there */
	memset(&fake_phc, 0, sizeof(fake_phc));
	fake_phc.precise_err = -EOPNOTSUPP;
	fake_phc.extended_err = -ENOTTY;
	fake_phc.off = 700;
	phc_fake_start();
	r = phc_start(0);
	ok(r == 0 && run.phc.method == PHC_PLAIN && run.phc.last_off == 700 && run.phc.window == 2000,
	   "phc: plain PTP_SYS_OFFSET, interleaved stamps, narrowest pair", "r=%d method=%d off=%" PRId64 " w=%" PRId64, r,
	   run.phc.method, run.phc.last_off, run.phc.window);

	/* nothing answers: an error, kept for the report */
	memset(&fake_phc, 0, sizeof(fake_phc));
	fake_phc.precise_err = fake_phc.extended_err = fake_phc.plain_err = -EOPNOTSUPP;
	phc_fake_start();
	r = phc_start(2);
	ok(r == -EOPNOTSUPP && run.phc.err == -EOPNOTSUPP && !run.phc.n && run.phc.method == PHC_NONE,
	   "phc: no method answers -> -EOPNOTSUPP, no reading", "r=%d", r);
	memset(&fake_phc, 0, sizeof(fake_phc));
	fake_phc.open_err = -ENOENT;
	phc_fake_start();
	r = phc_start(9);
	ok(r == -ENOENT && run.phc.fd == -1, "phc: /dev/ptp9 missing -> -ENOENT", "r=%d fd=%d", r, run.phc.fd);

	/* drift from readings over time, and the warning it gives */
	phc_fake_start();
	run.phc.index = 4;
	run.phc.n = 5;
	run.phc.first_off = 1000;
	run.phc.last_off = 1000 + 20000;	/* 20 us in 2 s: 10 ppm */
	run.phc.first_at = 1000000000ULL;
	run.phc.last_at = 3000000000ULL;
	ok(phc_drift(&ppm) && fabs(ppm - 10.0) < 1e-9, "phc: drift 20 us over 2 s = 10 ppm", "ppm=%f", ppm);
	ok(phc_warning(w, sizeof(w)) && strstr(w, "drifts") && strstr(w, "phc2sys"), "phc: 10 ppm -> not disciplined, phc2sys named",
	   "'%s'", w);
	run.phc.last_off = 1000 + 200;	/* 0.1 ppm, 1.2 us: disciplined */
	ok(!phc_warning(w, sizeof(w)), "phc: 0.1 ppm and 1.2 us -> disciplined, no warning", "'%s'", w);
	run.phc.last_at = run.phc.first_at + 500000000ULL;
	ok(!phc_drift(&ppm), "phc: readings less than a second apart -> no drift yet", "ppm=%f", ppm);
	kops_restore();
	memset(&run.phc, 0, sizeof(run.phc));
	run.phc.fd = -1;
}

/*
 * The PHC's offset to CLOCK_REALTIME, measured at start, is taken out of
 * this side's app-vs-wire segments (and only those); a csv log keeps raw
 * stamps and records the offset, so --analyze gives the same numbers.
 */
static void test_wire_off(void)
{
	const int64_t off = 37000000000LL + 500;
	uint64_t t[NSTAMP] = { 0 };
	char hdr[4096], *p;
	struct alog L;
	int64_t v = 0;
	int r;

	memset(&fake_phc, 0, sizeof(fake_phc));
	fake_phc.off = off;
	phc_fake_start();
	run.ts.hw = true;
	r = phc_start(3);
	ok(r == 0 && run.ts.wire_off == off, "wire offset: the PHC's first reading, kept for the segments",
	   "r=%d off=%" PRId64, r, run.ts.wire_off);
	phc_end();
	/* emit: T1 is 2 us after T1_SW, T4 3 us before T4_SW, on a PHC 37 s ahead */
	t[T1SW] = 1700000000000000000ULL;
	t[T1K] = t[T1SW] + 1000;
	t[T1W] = t[T1SW] + (uint64_t)off + 2000;
	t[T4SW] = t[T1SW] + 90000;
	t[T4K] = t[T4SW] - 1000;
	t[T4W] = t[T4SW] + (uint64_t)off - 3000;
	side_set(true);
	ok(metric_value(M_CLI_TX, t, &v) && v == 2000, "wire offset: client tx stack on one time base", "%" PRId64, v);
	ok(metric_value(M_CLI_RX, t, &v) && v == 3000, "wire offset: client rx stack on one time base", "%" PRId64, v);
	ok(metric_value(M_CLI_TX_NIC, t, &v) && v == 1000 && metric_value(M_CLI_RX_NIC, t, &v) && v == 2000,
	   "wire offset: the NIC segments against the kernel stamps too", "%" PRId64, v);
	ok(metric_value(M_CLI_TX_KERN, t, &v) && v == 1000 && metric_value(M_RTT, t, &v) &&
	   v == (int64_t)(t[T4W] - t[T1W]), "wire offset: one-clock metrics untouched", "%" PRId64, v);
	/* --txtime: the launch time asked (on CLOCK_REALTIME) 1.2 us before T1 left */
	t[T1L] = t[T1SW] + 800;
	ok(metric_value(M_LAUNCH_ERR, t, &v) && v == 1200 && metric_value(M_SPARE, t, &v) && v == 800,
	   "wire offset: launch error on one time base, time to spare untouched", "%" PRId64, v);
	/* reflect: T2 1.5 us before T2_SW, T3 2.5 us after T3_SW */
	memset(t, 0, sizeof(t));
	t[T2SW] = 1700000000000000000ULL;
	t[T2W] = t[T2SW] + (uint64_t)off - 1500;
	t[T3SW] = t[T2SW] + 4000;
	t[T3W] = t[T3SW] + (uint64_t)off + 2500;
	side_set(false);
	ok(metric_value(M_SRV_RX, t, &v) && v == 1500 && metric_value(M_SRV_TX, t, &v) && v == 2500 &&
	   metric_value(M_RESPONSE, t, &v) && v == (int64_t)(t[T3W] - t[T2W]),
	   "wire offset: reflector's rx and tx stacks corrected, response untouched", "%" PRId64, v);
	/* the csv header records it; --analyze reads it back, refuses a bad one */
	side_set(true);
	p = log_csv_facts(hdr);
	*p = 0;
	ok(strstr(hdr, " wire_offset_ns=37000000500 cmdline=") != NULL, "wire offset: in the csv log's facts",
	   "'%.200s'", hdr);
	memset(&L, 0, sizeof(L));
	L.path = "t";
	ok(alog_comment(&L, 1, hdr, strchr(hdr, '\n')) == 0 && L.wire_off == off,
	   "wire offset: read back from the header", "%" PRId64, L.wire_off);
	{
		static const char bad[] = "# rant 1.0 wire_offset_ns=9x cmdline=x";
		static const char in_cmd[] = "# rant 1.0 cmdline=rant wire_offset_ns=5";
		struct capture c;
		char *e;

		memset(&L, 0, sizeof(L));
		L.path = "t";
		cap_start(&c, 2);
		r = alog_comment(&L, 1, bad, bad + sizeof(bad) - 1);
		e = cap_stop(&c);
		ok(r < 0 && strstr(e, "bad wire_offset_ns"), "wire offset: a bad value is refused, named", "'%s'", e);
		free(e);
		ok(alog_comment(&L, 1, in_cmd, in_cmd + sizeof(in_cmd) - 1) == 0 && L.wire_off == 0,
		   "wire offset: the command line's text is not read as one", "%" PRId64, L.wire_off);
	}
	kops_restore();
}

/* NIC and kernel stamps of one transaction, from both kinds of TX error-queue message. */
static void test_swhw(void)
{
	const uint64_t B = 1700000000000000000ULL;
	struct scm_timestamping st;
	struct sock_extended_err ee;
	struct ts_cmsg c;
	struct cbuf b;
	struct txn *x;
	uint64_t *mem[NMETRIC][2], wire, k;
	const char *name[12];
	int64_t val[12];
	uint32_t key;
	int i, n, best;
	bool found_nic = false, found_kern = false, r1, r2;

	reset_globals();
	side_set(true);
	run.ts.hw = true;
	run.win.slot = calloc(256, sizeof(*run.win.slot));
	run.win.mask = 255;
	emitter.keyseq = calloc(256, sizeof(uint64_t));
	for (i = 0; i < NMETRIC; i++) {
		mem[i][0] = calloc(64, 8);
		mem[i][1] = calloc(64, 8);
		hist_init(&sess.h[i], 1000, 64000, mem[i][0], (int64_t *)mem[i][1], 64, test_lh(i));
	}
	/* seq 5 sent with key 7; its pong is in (T4 with both stamps), T1 not yet */
	x = &run.win.slot[5];
	x->seq = 5;
	x->txkey = 7;
	x->st = TF_USED | TF_SENT | TF_RECEIVED | TF_TXPEND;
	emitter.keyseq[7] = 5;
	emitter.txpend = 1;
	x->t[T1SW] = B;
	x->t[T2W] = B + 20000;
	x->t[T2SW] = B + 21000;
	x->t[T3SW] = B + 22000;
	x->t[T3W] = B + 23000;
	x->t[T4W] = B + 40000;
	x->t[T4K] = B + 41000;
	x->t[T4SW] = B + 43000;

	/* message 1: the kernel's stamp alone (ts[0]) */
	cb_init(&b);
	st = mk_scm(1700000000, 300, 0, 0);
	ee = mk_ee(ENOMSG, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SND, 7);
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
	cb_add(&b, SOL_IP, IP_RECVERR, &ee, sizeof(ee), 0);
	ts_parse(&b.msg, &c);
	r1 = ts_tx_stamp(&c, &key, &wire);
	r2 = ts_tx_kernel(&c, &key, &k);
	ok(!r1 && r2 && key == 7 && k == B + 300, "swhw: ts[0]-only TX message -> kernel stamp of key 7", "r1=%d r2=%d k=%" PRIu64,
	   r1, r2, k);
	tx_kernel_stamp(key, k);
	ok(x->t[T1K] == B + 300 && (x->st & TF_TXPEND) && !x->t[T1W], "swhw: T1_K stored, the NIC stamp still pending",
	   "t1k=%" PRIu64, x->t[T1K]);
	/* message 2: the NIC's stamp (ts[2]) */
	cb_init(&b);
	st = mk_scm(0, 0, 1700000000, 1000);
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
	cb_add(&b, SOL_IP, IP_RECVERR, &ee, sizeof(ee), 0);
	ts_parse(&b.msg, &c);
	r1 = ts_tx_stamp(&c, &key, &wire);
	r2 = ts_tx_kernel(&c, &key, &k);
	ok(r1 && !r2 && key == 7 && wire == B + 1000, "swhw: ts[2] TX message -> the wire stamp of key 7", "r1=%d r2=%d", r1, r2);
	emit_on_tx(key, wire);
	ok(x->t[T1W] == B + 1000 && !(x->st & TF_TXPEND), "swhw: T1 stored, nothing pending", "t1=%" PRIu64, x->t[T1W]);
	ok(sess.h[M_CLI_TX_KERN].n == 1 && sess.h[M_CLI_TX_KERN].min == 300 && sess.h[M_CLI_TX_NIC].n == 1 &&
	   sess.h[M_CLI_TX_NIC].min == 700, "swhw: client tx split: kernel 300 ns, driver+NIC 700 ns", "kern n=%" PRIu64 " nic min=%" PRId64,
	   sess.h[M_CLI_TX_KERN].n, sess.h[M_CLI_TX_NIC].min);
	ok(sess.h[M_CLI_RX_NIC].n == 1 && sess.h[M_CLI_RX_NIC].min == 1000 && sess.h[M_CLI_RX_WAKE].n == 1 &&
	   sess.h[M_CLI_RX_WAKE].min == 2000 && sess.h[M_CLI_TX].min == 1000 && sess.h[M_CLI_RX].min == 3000,
	   "swhw: client rx split: NIC+driver 1000, wake-up 2000 (stacks 1000 / 3000 as before)", "rxnic=%" PRId64,
	   sess.h[M_CLI_RX_NIC].min);
	/* a kernel stamp of another key never lands on this transaction */
	tx_kernel_stamp(8, B + 999);
	ok(x->t[T1K] == B + 300, "swhw: kernel stamp of an unknown key ignored", "t1k=%" PRIu64, x->t[T1K]);
	/* the breach breakdown shows the parts, not the sums */
	best = segments(x->t, name, val, &n);
	for (i = 0; i < n; i++) {
		found_nic |= !strcmp(name[i], metric_def[M_CLI_TX_NIC].label) && val[i] == 700;
		found_kern |= !strcmp(name[i], metric_def[M_CLI_RX_WAKE].label) && val[i] == 2000;
	}
	ok(found_nic && found_kern && best >= 0 && n == 8, "swhw: breakdown lists driver+NIC and wake-up segments", "n=%d", n);

	for (i = 0; i < NMETRIC; i++) {
		free(mem[i][0]);
		free(mem[i][1]);
	}
	free(run.win.slot);
	free(emitter.keyseq);
	run.win.slot = NULL;
	emitter.keyseq = NULL;
	memset(&sess, 0, sizeof(sess));
	emitter.txpend = 0;
}

/* --ptp-probe: the PTP header's layout, its check, its options. */
static void test_ptp(void)
{
	uint8_t buf[PTP_HDR_LEN + PROTO_HDR_LEN];
	struct proto_msg m = { .type = PT_PING, .session = 0x11223344, .seq = 0x0102030405060708ULL };
	static const uint8_t zero[10];
	char *out, *err;
	struct args a;
	int r;

	reset_globals();
	memset(buf, 0xee, sizeof(buf));
	proto_encode(buf + PTP_HDR_LEN, &m);
	ptp_encode(buf, 127);
	ok(buf[0] == 0x00 && buf[1] == 0x02 && buf[2] == 0 && buf[3] == 44 && buf[4] == 127 && buf[5] == 0 &&
	   buf[6] == 0 && buf[7] == 0, "ptp: ping = Sync, versionPTP 2, messageLength 44, domain 127, no flags",
	   "%02x %02x %02x%02x %u", buf[0], buf[1], buf[2], buf[3], buf[4]);
	ok(!memcmp(buf + 20, "RANT\x11\x22\x33\x44", 8) && buf[28] == 0 && buf[29] == 1,
	   "ptp: sourcePortIdentity = \"RANT\" + session, port 1 for the client", "port %u", buf[29]);
	ok(buf[30] == 0x07 && buf[31] == 0x08 && buf[32] == 0 && buf[33] == 0x7f && !memcmp(buf + 34, zero, 10),
	   "ptp: sequenceId = low 16 bits of seq, controlField 0, interval 0x7f, originTimestamp 0", "seqid %02x%02x",
	   buf[30], buf[31]);
	ok(get32(buf + PTP_HDR_LEN) == PROTO_MAGIC, "ptp: rant's header follows at byte 44", "failed");
	ok(ptp_check(buf, sizeof(buf), 127) == 0, "ptp: its own header passes the check", "failed");
	m.type = PT_PONG;
	proto_encode(buf + PTP_HDR_LEN, &m);
	ptp_encode(buf, 5);
	ok(buf[0] == 0x01 && buf[29] == 2 && buf[32] == 1 && buf[4] == 5, "ptp: pong = Delay_Req, port 2, controlField 1",
	   "%02x", buf[0]);
	ok(ptp_check(buf, sizeof(buf), 127) == PE_PTP, "ptp: another domain -> refused", "failed");
	ok(ptp_check(buf, 43, 5) == PE_SHORT, "ptp: 43 bytes -> short", "failed");
	buf[1] = 0x01;
	ok(ptp_check(buf, sizeof(buf), 5) == PE_PTP, "ptp: versionPTP 1 -> refused", "failed");
	buf[1] = 0x02;
	buf[0] = 0x08;
	ok(ptp_check(buf, sizeof(buf), 5) == PE_PTP, "ptp: a Follow_Up (not an event message) -> refused", "failed");
	buf[0] = 0x01;
	buf[20] = 'X';
	ok(ptp_check(buf, sizeof(buf), 5) == PE_PTP, "ptp: a clockIdentity not rant's (a real PTP clock) -> refused", "failed");

	/* options */
	r = parse_str("--ptp-probe", &a, &out, &err);
	ok(r == 0 && !*err && opts.ptp_probe && opts.port == 319 && opts.ptp_domain == 127 && run.proto_pre == PTP_HDR_LEN,
	   "ptp opts: --ptp-probe -> port 319, domain 127, 44 B before rant's header", "r=%d err='%s' port=%u", r, err, opts.port);
	free(out);
	free(err);
	r = parse_str("--ptp-probe --ptp-domain 0 --port 319", &a, &out, &err);
	ok(r == 0 && opts.ptp_domain == 0 && opts.port == 319, "ptp opts: domain 0 and an explicit --port 319 are fine",
	   "r=%d err='%s'", r, err);
	free(out);
	free(err);
	r = parse_str("--ptp-probe --port 320", &a, &out, &err);
	ok(r == -1 && one_rant_line(err) && strstr(err, "--port") && strstr(err, "319"), "ptp opts: --port 320 -> one line naming 319",
	   "r=%d err='%s'", r, err);
	free(out);
	free(err);
	r = parse_str("--ptp-probe --ptp-domain 256", &a, &out, &err);
	ok(r == -1 && one_rant_line(err) && strstr(err, "--ptp-domain"), "ptp opts: domain 256 -> out of range", "r=%d err='%s'",
	   r, err);
	free(out);
	free(err);
	r = parse_str("--ptp-domain 3", &a, &out, &err);
	ok(r == -1 && one_rant_line(err) && strstr(err, "needs --ptp-probe"), "ptp opts: --ptp-domain alone -> needs --ptp-probe",
	   "r=%d err='%s'", r, err);
	free(out);
	free(err);
	r = parse_str("--allow-fragments -a h", &a, &out, &err);
	ok(r == 0 && opts.allow_fragments && run.proto_pre == 0, "opts: --allow-fragments; no PTP header without --ptp-probe",
	   "r=%d err='%s'", r, err);
	free(out);
	free(err);
	run.proto_pre = 0;
	reset_globals();
}

/* Hardware mode: the kernel stamps go into the csv log and come back through --analyze. */
static void test_klog(void)
{
	const uint64_t B = 1700000000000000000ULL;
	struct txn x;
	struct tlog L;
	uint8_t *mem;
	char path[128], *err = NULL, *text;
	int r, st;
	bool hw = false;

	reset_globals();
	opts.iface = "eth0";
	run.ts.hw = true;
	side_set(true);
	mem = calloc(10, log_rec_size(true));
	memset(&sess, 0, sizeof(sess));
	log_init(&sess.log, mem, 10);
	log_kernel_stamps();
	ok(run.side.nstamps == 12 && sess.log.nstamps == 12 && sess.log.rec_size == 8 + 96 + 4,
	   "klog: hardware -> 12 stamps per emit record, T1_K, T4_K and the reflector's T2_K, T3_K included", "n=%d rec=%u",
	   run.side.nstamps, sess.log.rec_size);
	memset(&x, 0, sizeof(x));
	x.seq = 3;
	x.st = TF_USED | TF_SENT | TF_RECEIVED;
	x.t[T1SW] = B;
	x.t[T1K] = B + 300;
	x.t[T1W] = B + 1000;
	x.t[T2W] = B + 20000;
	x.t[T3W] = B + 23000;
	x.t[T4W] = B + 40000;
	x.t[T4K] = B + 41000;
	x.t[T4SW] = B + 43000;
	log_push(&x);
	log_get(&sess.log, 0, &x, &st);
	ok(x.t[T1K] == B + 300 && x.t[T4K] == B + 41000, "klog: the ring keeps T1_K and T4_K", "t1k=%" PRIu64, x.t[T1K]);
	tmp_path(path, sizeof(path), "klog.csv");
	r = log_to_file(path, LOG_CSV);
	text = read_file(path);
	ok(r == 0 && text && strstr(text, "seq,status,t1_sw,t1_k,t1_hw,t2_ksw,t2_k,t2_sw,t3_sw,t3_k,t3_ksw,t4_hw,t4_k,t4_sw,"),
	   "klog: csv columns t1_sw,t1_k,t1_hw,t2_ksw,t2_k,...,t3_k,...,t4_k,t4_sw", "r=%d '%.200s'", r, text ? text : "");
	free(text);
	ok(alog_stamp("T1_K", 4, &hw) == T1K && alog_stamp("t4_k", 4, &hw) == T4K && alog_stamp("T1_X", 4, &hw) == -1,
	   "klog: --analyze knows T<n>_K columns", "failed");
	memset(&L, 0, sizeof(L));
	r = read_log(path, &L, &err);
	ok(r == 0 && L.n == 1 && L.row[0].t[T1K] == B + 300 && L.row[0].t[T4K] == B + 41000 && L.hw,
	   "klog: read back with the kernel stamps, as hardware", "r=%d n=%" PRIu64 " err='%s'", r, L.n,
	   err ? err : "");
	{
		int64_t v = 0;

		ok(metric_value(M_CLI_TX_NIC, L.row[0].t, &v) && v == 700, "klog: --analyze has the driver+NIC segment (700 ns)",
		   "v=%" PRId64, v);
	}
	free(err);
	tlog_free(&L);
	unlink(path);
	free(mem);
	memset(&sess, 0, sizeof(sess));
	reset_globals();
}

/*
 * The reflector's kernel stamps reach the client: synthetic RX and TX
 * stamps (ts[0] and ts[2]) on the reflector, its pongs decoded by the
 * client, the server split in the statistics, report, JSON, csv log and
 * --analyze; a ping too short for them counted; the FIN_ACK's PHC block.
 */
static struct txn kx_win[256];
static uint64_t kx_keyseq[256];

/* One TX error-queue message of the reflector's send KEY: ts[0] (kernel) or ts[2] (NIC). */
static void kx_tx(uint32_t key, uint64_t t, bool nic)
{
	struct scm_timestamping st = nic ? mk_scm(0, 0, (time_t)(t / NSEC_PER_SEC), (long)(t % NSEC_PER_SEC)) :
				     mk_scm((time_t)(t / NSEC_PER_SEC), (long)(t % NSEC_PER_SEC), 0, 0);
	struct sock_extended_err ee = mk_ee(ENOMSG, SO_EE_ORIGIN_TIMESTAMPING, SCM_TSTAMP_SND, key);
	struct ts_cmsg c;
	struct cbuf b;
	uint64_t v;
	uint32_t k;

	cb_init(&b);
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
	cb_add(&b, SOL_IP, IP_RECVERR, &ee, sizeof(ee), 0);
	ts_parse(&b.msg, &c);
	if (ts_tx_stamp(&c, &k, &v)) {
		refl.txpend++;	/* it was pending: reflect_on_tx takes it off */
		reflect_on_tx(k, v);
		refl.txpend--;
	} else if (ts_tx_kernel(&c, &k, &v)) {
		tx_kernel_stamp(k, v);
	}
}

static void test_kx(void)
{
	static struct echo q[ECHO_CAP];
	uint64_t *mem[NMETRIC][2], B, t3sw[2];
	uint8_t buf[3][128], fin[256];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t tl = sizeof(to);
	struct proto_msg m, a = { .type = PT_FIN_ACK, .session = 0x4b58 };
	const char *name[12];
	int64_t val[12], v = 0;
	char path[128], *text = NULL, *err = NULL, why[400];
	size_t tlen = 0;
	int i, n, rx, tx, r, found = 0;
	struct tlog L;
	struct report rep;
	uint8_t *lmem;
	FILE *f;

	/* the reflector: hardware stamps, app stamps (-s), a real socket to send from */
	reset_globals();
	side_set(false);
	memset(kx_win, 0, sizeof(kx_win));
	run.win.slot = kx_win;
	run.win.mask = 255;
	memset(&refl, 0, sizeof(refl));
	memset(&emitter, 0, sizeof(emitter));
	refl.log_fd = -1;
	run.echo.q = q;
	run.echo.head = run.echo.n = 0;
	run.key.on = false;
	run.ts.hw = true;
	run.ts.next_key = 0;
	opts.sw_stamps = true;
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	r = bind(rx, (struct sockaddr *)&to, sizeof(to));
	getsockname(rx, (struct sockaddr *)&to, &tl);
	run.sock_fd = tx;
	ok(rx >= 0 && tx >= 0 && r == 0, "kx: loopback sockets to send the pongs from", "rx=%d tx=%d r=%d", rx, tx, r);
	for (i = 0; i < NMETRIC; i++) {
		mem[i][0] = calloc(64, 8);
		mem[i][1] = calloc(64, 8);
		hist_init(&sess.h[i], 1000, 64000, mem[i][0], (int64_t *)mem[i][1], 64, test_lh(i));
	}
	B = real_ns();
	/* ping 0 (80 bytes): T2 wire B, kernel B+100, app B+500 */
	for (i = 0; i < 3; i++) {
		memset(buf[i], 0, sizeof(buf[i]));
		m = (struct proto_msg){ .type = PT_PING, .session = 0x4b58, .seq = (uint64_t)i, .idle_ms = 1000 };
		proto_encode(buf[i], &m);
	}
	run.ts_rx_kernel = B + 100;
	reflect_packet(buf[0], 80, B, B + 500, false, (struct sockaddr *)&to, sizeof(to));
	t3sw[0] = run.win.slot[0].t[T3SW];
	ok(!proto_decode(buf[0], 80, &m) && (m.flags & PF_KSTAMPS) && m.t2k == B + 100 && !m.t3k && m.t2w == B &&
	   run.win.slot[0].t[T2K] == B + 100, "kx: pong 0 carries T2_K of its ping after the header", "flags=%#x t2k=%" PRIu64,
	   m.flags, m.t2k);
	/* its TX stamps: the kernel's first, then the NIC's (the usual order) */
	kx_tx(0, t3sw[0] + 400, false);
	kx_tx(0, t3sw[0] + 1000, true);
	ok(run.win.slot[0].t[T3K] == t3sw[0] + 400 && run.win.slot[0].t[T3W] == t3sw[0] + 1000 && run.echo.n == 1,
	   "kx: reflector: T3_K and T3 of pong 0 from ts[0] and ts[2] messages, T3 queued to echo", "n=%u", run.echo.n);
	run.ts_rx_kernel = B + 20100;
	reflect_packet(buf[1], 80, B + 20000, B + 20500, false, (struct sockaddr *)&to, sizeof(to));
	t3sw[1] = run.win.slot[1].t[T3SW];
	ok(!proto_decode(buf[1], 80, &m) && m.t2k == B + 20100 && (m.flags & PF_T3W) && m.t3w_seq == 0 &&
	   m.t3w == t3sw[0] + 1000 && m.t3k == t3sw[0] + 400 && echo_plausible(&m),
	   "kx: pong 1 carries its T2_K and pong 0's T3 with T3_K beside it", "t3k=%" PRIu64 " t3w_seq=%" PRIu64, m.t3k,
	   m.t3w_seq);
	/* the NIC's stamp first, the kernel's after: T3_K is still found by the TX key */
	kx_tx(1, t3sw[1] + 1000, true);
	kx_tx(1, t3sw[1] + 400, false);
	ok(run.echo.n == 1 && run.win.slot[1].t[T3K] == t3sw[1] + 400, "kx: a kernel stamp after the NIC's still reaches the echo",
	   "n=%u", run.echo.n);
	/* a ping with no room: the pong goes without the block, counted */
	run.ts_rx_kernel = B + 40100;
	reflect_packet(buf[2], 64, B + 40000, B + 40500, false, (struct sockaddr *)&to, sizeof(to));
	ok(!proto_decode(buf[2], 64, &m) && !(m.flags & PF_KSTAMPS) && (m.flags & PF_SRV_HW) && sess.c.kx_unfit == 1 &&
	   m.t3w_seq == 1, "kx: a 64-byte ping: no block, counted (kx_unfit 1), the echo still goes", "flags=%#x unfit=%" PRIu64,
	   m.flags, sess.c.kx_unfit);
	f = open_memstream(&text, &tlen);
	report_compute(&rep);
	print_hw_notes(f, &rep);
	fclose(f);
	ok(text && strstr(text, "Kernel stamps not sent to the client: 1 pongs") && strstr(text, "--size 80"),
	   "kx: the reflector's report says so and names --size 80", "'%s'", text ? text : "");
	free(text);
	text = NULL;
	/* the FIN_ACK: the PHC block, from the reading the status thread published */
	run.phc.n = 3;
	run.phc.method = PHC_EXTENDED;
	run.phc.last_off = -250;
	run.phc.window = 40;
	phc_publish();
	run.host_boot_id = 0x0123456789abcdefULL;
	reflect_phc_block(&a);
	memset(fin, 0, sizeof(fin));
	proto_encode(fin, &a);
	r = proto_kx_put(fin, 104, &a);
	ok(r == 0 && !proto_decode(fin, 104, &m) && m.type == PT_FIN_ACK && m.phc_method == PHC_EXTENDED &&
	   m.phc_off == -250 && m.phc_window == 40 && m.phc_disciplined && m.boot_id == 0x0123456789abcdefULL,
	   "kx: FIN_ACK of 104 bytes carries the PHC reading, its window, method and the boot id", "r=%d method=%d off=%" PRId64,
	   r, m.phc_method, m.phc_off);
	ok(!proto_decode(fin, 80, &m) && !m.phc_method && !proto_decode(buf[0], 80, &m) && !m.phc_method,
	   "kx: a PHC block is read only from a FIN_ACK long enough for it", "method=%d", m.phc_method);
	ok(proto_kx_put(fin, 79, &a) == -ENOSPC, "kx: 79 bytes have no room for the block: -ENOSPC", "-");
	run.key.on = true;
	ok(proto_kx_need() == 88, "kx: with --key-file the block follows the tag: pings of 88 bytes", "%zu", proto_kx_need());
	{
		struct proto_msg p = { .type = PT_PONG, .session = 7, .seq = 9, .t2k = B + 77 }, d;
		uint8_t kb[96] = { 0 };

		run.key.k[0] = 1;
		run.key.k[1] = 2;
		proto_encode(kb, &p);
		r = proto_kx_put(kb, sizeof(kb), &p);
		tag_put(kb, sizeof(kb));
		ok(r == 0 && tag_ok(kb, sizeof(kb)) && !proto_decode(kb, sizeof(kb), &d) && (d.flags & PF_TAG) &&
		   d.t2k == B + 77 && get64(kb + 72) == B + 77, "kx: keyed: the block at 72, under the tag", "r=%d t2k=%" PRIu64,
		   r, d.t2k);
		kb[75] ^= 1;
		ok(!tag_ok(kb, sizeof(kb)), "kx: keyed: a changed kernel stamp breaks the tag", "-");
	}
	run.key.on = false;
	memset(&run.phc, 0, sizeof(run.phc));
	run.phc.fd = -1;
	memset(&run.phc_pub, 0, sizeof(run.phc_pub));
	close(rx);
	close(tx);
	run.sock_fd = -1;

	/* the client: pings 0-2 sent; the pongs above come back (the clock-step check is tested elsewhere) */
	memset(&run.clk, 0, sizeof(run.clk));
	for (i = 0; i < NMETRIC; i++) {
		hist_init(&sess.h[i], 1000, 64000, mem[i][0], (int64_t *)mem[i][1], 64, test_lh(i));
	}
	memset(&sess.c, 0, sizeof(sess.c));
	side_set(true);
	opts.iface = "eth0";
	log_kernel_stamps();
	memset(kx_win, 0, sizeof(kx_win));
	memset(kx_keyseq, 0, sizeof(kx_keyseq));
	emitter.keyseq = kx_keyseq;
	sess.id = 0x4b58;
	opts.size = 80;
	opts.timeout_ns = UINT64_MAX / 2;
	opts.threshold_ns = -1;
	for (i = 0; i < 3; i++) {
		struct txn *x = &run.win.slot[i];

		x->seq = (uint64_t)i;
		x->st = TF_USED | TF_SENT;
		x->deadline = UINT64_MAX;
		x->t[T1W] = B - 5000 + (uint64_t)i * 20000;
		x->t[T1SW] = x->t[T1W] - 300;
		sess.c.sent++;
		emitter.outstanding++;
	}
	emitter.next_seq = 3;
	emit_packet(buf[0], 80, B + 900000000ULL, B + 900001000ULL, false);
	emit_packet(buf[1], 80, B + 900020000ULL, B + 900021000ULL, false);
	ok(sess.c.received == 2 && run.win.slot[0].t[T2K] == B + 100 && run.win.slot[1].t[T2K] == B + 20100 && run.win.slot[0].t[T3K] == t3sw[0] + 400 &&
	   run.win.slot[0].t[T3W] == t3sw[0] + 1000, "kx: client: T2_K from each pong, T3_K of pong 0 from the echo in pong 1",
	   "rx=%" PRIu64 " t2k=%" PRIu64 " t3k=%" PRIu64, sess.c.received, run.win.slot[0].t[T2K], run.win.slot[0].t[T3K]);
	ok(sess.h[M_SRV_RX_NIC].n == 2 && sess.h[M_SRV_RX_NIC].min == 100 && sess.h[M_SRV_RX_WAKE].n == 2 &&
	   sess.h[M_SRV_RX_WAKE].min == 400 && sess.h[M_SRV_TX_KERN].n == 1 && sess.h[M_SRV_TX_KERN].min == 400 &&
	   sess.h[M_SRV_TX_NIC].n == 1 && sess.h[M_SRV_TX_NIC].min == 600,
	   "kx: client statistics: server rx NIC+driver 100, wake-up 400, tx kernel 400, driver+NIC 600 ns",
	   "rxnic n=%" PRIu64 " txkern n=%" PRIu64 " txnic min=%" PRId64, sess.h[M_SRV_RX_NIC].n, sess.h[M_SRV_TX_KERN].n,
	   sess.h[M_SRV_TX_NIC].min);
	n = 0;
	segments(run.win.slot[0].t, name, val, &n);
	for (i = 0; i < n; i++) {
		/* marked: the reflector's PHC offset is still in them (its pongs had no room for it) */
		found += (!strcmp(name[i], metric_label(M_SRV_RX_NIC)) && val[i] == 100) +
			 (!strcmp(name[i], metric_label(M_SRV_TX_NIC)) && val[i] == 600);
	}
	ok(found == 2, "kx: the breach breakdown splits the server's stacks too", "found=%d n=%d", found, n);
	f = open_memstream(&text, &tlen);
	report_compute(&rep);
	json_report(f, &rep, 0);
	fclose(f);
	ok(text && strstr(text, "\"server_rx_nic\"") && strstr(text, "\"server_rx_wakeup\"") &&
	   strstr(text, "\"server_tx_kernel\"") && strstr(text, "\"server_tx_nic\""),
	   "kx: client JSON has metrics.server_rx_nic, server_rx_wakeup, server_tx_kernel, server_tx_nic", "%.300s",
	   text ? text : "");
	free(text);
	text = NULL;
	f = open_memstream(&text, &tlen);
	report_compute(&rep);
	session_report(f, &rep);
	fclose(f);
	ok(text && strstr(text, "server rx NIC+driver (T2_K-T2)") && strstr(text, "server tx driver+NIC (T3-T3_K)"),
	   "kx: client report lists the server's split", "%.300s", text ? text : "");
	free(text);
	text = NULL;
	/* csv log and --analyze: t2_k and t3_k columns, read back */
	lmem = calloc(4, log_rec_size(true));
	log_init(&sess.log, lmem, 4);
	log_kernel_stamps();
	log_push(&run.win.slot[0]);
	tmp_path(path, sizeof(path), "kx.csv");
	r = log_to_file(path, LOG_CSV);
	text = read_file(path);
	ok(r == 0 && text && strstr(text, ",t2_k,") && strstr(text, ",t3_k,"), "kx: client csv log has t2_k and t3_k",
	   "%.300s", text ? text : "");
	free(text);
	memset(&L, 0, sizeof(L));
	r = read_log(path, &L, &err);
	ok(r == 0 && L.n == 1 && metric_value(M_SRV_TX_NIC, L.row[0].t, &v) && v == 600 &&
	   metric_value(M_SRV_RX_NIC, L.row[0].t, &v) && v == 100, "kx: --analyze reads the server split back from the client's log",
	   "r=%d n=%" PRIu64 " err='%s'", r, L.n, err ? err : "");
	free(err);
	tlog_free(&L);
	unlink(path);
	free(lmem);
	memset(&sess.log, 0, sizeof(sess.log));
	/* the client's side of a short ping: counted, and said with the size to use */
	opts.size = 64;
	emit_packet(buf[2], 64, B + 900040000ULL, B + 900041000ULL, false);
	text = NULL;
	f = open_memstream(&text, &tlen);
	report_compute(&rep);
	print_hw_notes(f, &rep);
	fclose(f);
	ok(sess.c.kx_unfit == 1 && text && strstr(text, "missing from 1 pongs") && strstr(text, "--size 80"),
	   "kx: client: a pong too short for the block is counted and the report names --size 80", "unfit=%" PRIu64 " '%s'",
	   sess.c.kx_unfit, text ? text : "");
	free(text);

	/* one-way evidence: two PHCs read against one kernel's CLOCK_REALTIME */
	opts.size = 104;
	emitter.fin_sent = true;
	sess.srv_hw = true;
	run.ts.hw = true;
	run.host_boot_id = 0x0123456789abcdefULL;
	emit_packet(fin, fin_len(), 0, 0, false);
	ok(result.fin_acked && result.srv_phc.method == PHC_EXTENDED && result.srv_phc.off == -250 && result.srv_phc.boot_id == run.host_boot_id,
	   "kx: client: the FIN_ACK's PHC block is kept", "method=%d", result.srv_phc.method);
	run.phc.n = 2;
	run.phc.method = PHC_PRECISE;
	run.phc.last_off = 100;
	run.phc.window = 0;
	hist_init(&sess.h[M_FORWARD], 1000, 64000, mem[M_FORWARD][0], (int64_t *)mem[M_FORWARD][1], 64, test_lh(M_FORWARD));
	hist_init(&sess.h[M_BACKWARD], 1000, 64000, mem[M_BACKWARD][0], (int64_t *)mem[M_BACKWARD][1], 64, test_lh(M_BACKWARD));
	hist_init(&sess.h[M_RTT], 1000, 64000, mem[M_RTT][0], (int64_t *)mem[M_RTT][1], 64, test_lh(M_RTT));
	hist_add(&sess.h[M_FORWARD], 9000, 0);
	hist_add(&sess.h[M_BACKWARD], 9100, 0);
	hist_add(&sess.h[M_RTT], 20000, 0);
	ok(oneway_trusted(why, sizeof(why)) && strstr(why, "within 390 ns") && strstr(why, "same boot id") &&
	   ow_current(why, sizeof(why)) == OW_PHC, "kx: same boot id, both PHCs disciplined, 390 ns apart: one-way trusted (phc)",
	   "'%s'", why);
	run.host_boot_id = 0x0123456789abcdeeULL;
	ok(!oneway_trusted(why, sizeof(why)) && strstr(why, "another kernel"),
	   "kx: another kernel's PHC: not trusted, says why", "'%s'", why);
	run.host_boot_id = result.srv_phc.boot_id;
	run.phc.last_off = 2000;
	ok(!oneway_trusted(why, sizeof(why)) && strstr(why, "differ by up to 2290 ns"),
	   "kx: PHCs 2.29 us apart: not trusted", "'%s'", why);
	run.phc.last_off = 100;
	result.srv_phc.disciplined = 0;
	ok(!oneway_trusted(why, sizeof(why)) && strstr(why, "reflector's PHC is not disciplined"),
	   "kx: the reflector's PHC not disciplined: not trusted", "'%s'", why);
	result.srv_phc.method = 0;
	ok(!oneway_trusted(why, sizeof(why)) && strstr(why, "reflector's PHC - CLOCK_REALTIME was not measured") &&
	   strstr(why, "an earlier rant"), "kx: no PHC block from the reflector: not trusted, says why", "'%s'", why);

	for (i = 0; i < NMETRIC; i++) {
		free(mem[i][0]);
		free(mem[i][1]);
	}
	memset(&run.phc, 0, sizeof(run.phc));
	run.phc.fd = -1;
	run.host_boot_id = 0;
	run.win.slot = NULL;
	emitter.keyseq = NULL;
	memset(&emitter, 0, sizeof(emitter));
	memset(&refl, 0, sizeof(refl));
	run.echo.q = NULL;
	memset(&sess, 0, sizeof(sess));
	reset_globals();
}

/*
 * The T3 history (PF_T3HIST): the reflector repeats its last echoes where
 * the pong has room, after every other block; a client that lost a pong
 * takes the stamp it carried from the next one, so one lost pong costs one
 * transaction, and a repeat of a stamp already known costs nothing.
 */
/* A client with pings 0-7 out, each sent at base + i ms (test_t3hist). */
static void t3hist_client(uint64_t base)
{
	int i;

	guard_setup(true);
	opts.size = 128;
	opts.timeout_ns = UINT64_MAX / 2;
	for (i = 0; i < 8; i++) {
		struct txn *x = &run.win.slot[i];

		x->seq = (uint64_t)i;
		x->st = TF_USED | TF_SENT;
		x->deadline = UINT64_MAX;
		x->t[T1W] = base + (uint64_t)i * 1000000 - 2000;
		answered_set((uint64_t)i, false);
		emitter.outstanding++;
		sess.c.sent++;
	}
	emitter.next_seq = 8;
}

static void test_t3hist(void)
{
	static struct echo q[ECHO_CAP];
	const uint64_t B = 1700000000000000000ULL;
	uint8_t pong[8][256], buf[256];
	struct proto_msg m, d = { 0 };
	uint64_t i;
	int miss = 0;

	guard_setup(false);
	run.echo.q = q;
	opts.size = 256;
	/* pong i echoes the T3 of pong i-1; the history holds the ones before it */
	for (i = 0; i < 8; i++) {
		m = (struct proto_msg){ .type = PT_PONG, .session = 0x5151, .seq = i, .flags = PF_T2W,
					.t2w = B + i * 1000000 };
		echo_pop(&m);
		memset(pong[i], 0, sizeof(pong[i]));
		proto_encode(pong[i], &m);
		echo_hist_put(pong[i], 128, &m);
		echo_push(i, B + i * 1000000 + 5000, (uint32_t)i);
	}
	ok(!proto_decode(pong[1], 128, &d) && !(d.flags & PF_T3HIST) && !d.nhist && d.t3w_seq == 0,
	   "t3hist: the first echo goes alone (nothing sent before it)", "flags=%#x n=%u", d.flags, d.nhist);
	ok(!proto_decode(pong[5], 128, &d) && (d.flags & PF_T3HIST) && d.t3w_seq == 4 && d.nhist == 2 &&
	   d.hist[0].seq == 3 && d.hist[0].t3w == B + 3005000 && d.hist[1].seq == 2 && pong[5][64] == 2,
	   "t3hist: 128 bytes: the two echoes before this one, newest first, at byte 64",
	   "n=%u seq %" PRIu64 ",%" PRIu64, d.nhist, d.hist[0].seq, d.hist[1].seq);
	ok(!proto_decode(pong[5], 119, &d) && !d.nhist,
	   "t3hist: a block cut short (119 bytes for 2 entries) is not read", "n=%u", d.nhist);
	m = (struct proto_msg){ .type = PT_PONG, .session = 0x5151, .seq = 8 };
	echo_pop(&m);
	memset(buf, 0, sizeof(buf));
	proto_encode(buf, &m);
	echo_hist_put(buf, 256, &m);
	ok(!proto_decode(buf, 256, &d) && d.nhist == T3HIST_MAX && d.hist[0].seq == 6 &&
	   d.hist[T3HIST_MAX - 1].seq == 3, "t3hist: room for more: the last T3HIST_MAX, no more",
	   "n=%u", d.nhist);
	memset(buf, 0, sizeof(buf));
	proto_encode(buf, &m);
	proto_hist_put(buf, 64 + T3HIST_HDR + T3HIST_ENT - 1, &m);
	ok(!(buf[6] & (PF_T3HIST >> 8)), "t3hist: no room for one entry: no block, no flag", "-");
	/* after a tag and the kernel-stamp block; in a FIN_ACK after its 40 bytes */
	run.key.on = true;
	run.key.k[0] = 3;
	memset(buf, 0, sizeof(buf));
	m.t2k = B + 1;
	proto_encode(buf, &m);
	proto_kx_put(buf, 160, &m);
	proto_hist_put(buf, 160, &m);
	tag_put(buf, 160);
	ok(tag_ok(buf, 160) && !proto_decode(buf, 160, &d) && d.t2k == B + 1 && d.nhist == 2 &&
	   buf[64 + 8 + 16] == 2 && d.hist[0].seq == 6, "t3hist: keyed, with kernel stamps: at byte 88",
	   "tag %d n=%u", tag_ok(buf, 160), d.nhist);
	m.type = PT_FIN_ACK;
	memset(buf, 0, sizeof(buf));
	proto_encode(buf, &m);
	proto_kx_put(buf, fin_len(), &m);
	proto_hist_put(buf, fin_len(), &m);
	tag_put(buf, fin_len());
	ok(!proto_decode(buf, fin_len(), &d) && d.nhist == T3HIST_MAX && buf[64 + 8 + 40] == T3HIST_MAX,
	   "t3hist: a FIN_ACK (fin_len) holds the whole history after its 40-byte block", "n=%u fin_len %zu",
	   d.nhist, fin_len());
	run.key.on = false;

	/* the client: pongs 0-7 of pings 0-7, pong 5 lost on the way */
	t3hist_client(B);
	for (i = 0; i < 8; i++) {
		if (i != 5) {
			emit_packet(pong[i + 0], 128, B + i * 1000000 + 7000, 0, false);
		}
	}
	for (i = 0; i < 7; i++) {
		miss += i != 5 && !run.win.slot[i].t[T3W];
	}
	ok(!miss && run.win.slot[4].t[T3W] == B + 4005000 && !sess.c.rejected[GR_ECHO_UNOWED] &&
	   !sess.c.rejected[GR_IMPLAUSIBLE], "t3hist: pong 5 lost: T3 of ping 4 (echoed in it) taken from pong 6's history, nothing refused",
	   "missing %d, unowed %" PRIu64, miss, sess.c.rejected[GR_ECHO_UNOWED]);
	/* pong 5 was only reordered: its header brings the T3 the history already did */
	emit_packet(pong[5], 128, B + 5000000 + 9000, 0, false);
	ok(sess.c.received == 8 && run.win.slot[4].t[T3W] == B + 4005000 && !sess.c.rejected[GR_ECHO_UNOWED],
	   "t3hist: a header repeating a stamp the history brought costs nothing", "received %" PRIu64
	   " unowed %" PRIu64, sess.c.received, sess.c.rejected[GR_ECHO_UNOWED]);

	/*
	 * pongs 5-7 late (their pings given up first, as after a link that
	 * came back slowly): late for their own pings, but the T3 of ping 4
	 * they carry (header and history) is taken
	 */
	t3hist_client(B);
	for (i = 0; i < 5; i++) {
		emit_packet(pong[i], 128, B + i * 1000000 + 7000, 0, false);
	}
	for (i = 5; i < 8; i++) {
		emit_lost(&run.win.slot[i]);
	}
	for (i = 5; i < 8; i++) {
		emit_packet(pong[i], 128, B + i * 1000000 + 7000, 0, false);
	}
	ok(sess.c.received == 5 && sess.c.late == 3 && run.win.slot[4].t[T3W] == B + 4005000 &&
	   !sess.c.rejected[GR_ECHO_UNOWED] && !sess.c.rejected[GR_IMPLAUSIBLE],
	   "t3hist: late pongs still bring the T3 of the ping before them", "received %" PRIu64 " late %" PRIu64
	   " T3 of 4: %" PRIu64, sess.c.received, sess.c.late, run.win.slot[4].t[T3W]);
}

/* The report's decomposition block and the JSON's clock object, as text (malloc'd). */
static char *oneway_clock_text(void)
{
	struct report rep;
	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);

	report_compute(&rep);
	print_decomposition(f, &rep);
	json_clock_log(f, &rep);
	fclose(f);
	return text;
}

/*
 * Loopback and veth count as one clock only when the reflector's
 * FIN_ACK names this kernel's boot id; else the report names what is
 * missing.  When they do, the NTP offset is the path's asymmetry and is
 * named so (report and JSON).
 */
static void test_oneway_kernel(void)
{
	static uint64_t b[3][64];
	static int64_t o[3][64];
	const int ms[3] = { M_FORWARD, M_BACKWARD, M_RTT };
	const uint64_t X = 0x0123456789abcdefULL;
	struct proto_msg a = { .type = PT_FIN_ACK, .session = 0x5151 }, d = { 0 };
	uint8_t fin[256] = { 0 };
	char why[320], *text;
	int i;

	/* a reflector without NIC stamps or PHC sends its boot id all the same */
	guard_setup(false);
	run.host_boot_id = X;
	reflect_phc_block(&a);
	proto_encode(fin, &a);
	ok(!proto_kx_put(fin, fin_len(), &a) && !proto_decode(fin, fin_len(), &d) && d.boot_id == X &&
	   !d.phc_method, "oneway: a software reflector's FIN_ACK carries its boot id, no PHC", "boot %" PRIx64, d.boot_id);

	guard_setup(true);
	for (i = 0; i < 3; i++) {
		hist_init(&sess.h[ms[i]], 1000, 64000, b[i], o[i], 64, test_lh(ms[i]));
	}
	hist_add(&sess.h[M_FORWARD], 9000, 0);
	hist_add(&sess.h[M_BACKWARD], 7500, 0);
	hist_add(&sess.h[M_RTT], 20000, 0);
	sess.offset.n = 1;
	sess.best_offset = 750;
	run.ow_evidence = OW_VETH;
	run.host_boot_id = X;
	ok(!oneway_trusted(why, sizeof(why)) && strstr(why, "no FIN_ACK came"),
	   "oneway: veth, no FIN_ACK yet: not trusted, says what is missing", "'%s'", why);
	emitter.fin_sent = true;
	emit_packet(fin, fin_len(), 0, 0, false);
	ok(result.fin_acked && result.srv_phc.boot_id == X && oneway_trusted(why, sizeof(why)) &&
	   strstr(why, "boot id is this kernel's") && ow_current(why, sizeof(why)) == OW_VETH,
	   "oneway: veth and the reflector's boot id this kernel's: trusted", "'%s'", why);
	text = oneway_clock_text();
	ok(text && strstr(text, "Path asymmetry: (forward - backward) / 2 = +750 ns") && !strstr(text, "Clock: server") &&
	   strstr(text, "\"offset_ns\": 750, \"asymmetry_ns\": 750"),
	   "oneway: one clock: the offset is named the path's asymmetry (report, JSON asymmetry_ns)", "'%s'", text);
	free(text);
	run.host_boot_id = X + 1;
	ok(!oneway_trusted(why, sizeof(why)) && strstr(why, "-i is a veth, but the reflector runs in another kernel") &&
	   ow_current(why, sizeof(why)) == OW_NONE, "oneway: veth, another kernel's boot id: not trusted, says so", "'%s'", why);
	text = oneway_clock_text();
	ok(text && strstr(text, "Clock: server - client offset +750 ns") && !strstr(text, "asymmetry:") &&
	   strstr(text, "\"asymmetry_ns\": null"), "oneway: two kernels: a clock offset, no asymmetry claimed", "'%s'", text);
	free(text);
	run.ow_evidence = OW_LOOPBACK;
	result.srv_phc.boot_id = 0;
	ok(!oneway_trusted(why, sizeof(why)) && strstr(why, "loopback, but the reflector's FIN_ACK carries no boot id"),
	   "oneway: loopback, a FIN_ACK without a boot id (an earlier rant): not trusted", "'%s'", why);
	run.host_boot_id = 0;
	ok(!oneway_trusted(why, sizeof(why)) && strstr(why, "this kernel's boot id is unreadable"),
	   "oneway: this kernel's boot id unknown: not trusted", "'%s'", why);
}

/* ------------------------------------- NICs that claim stamps and deliver few */

/*
 * A reflector with a real loopback socket to answer from, whose TX stamps
 * never come (SO_TIMESTAMPING is not enabled on it): a NIC that claims
 * hardware stamps and delivers none.  Its answers reach hf.rx.
 */
static struct {
	struct txn win[256];
	struct echo q[ECHO_CAP];
	uint64_t *mem[NMETRIC][2];
	int rx, rx2;
	struct sockaddr_in cl, cl2;
} hf;

/* The statistics' memory of a case: one set, for one case at a time. */
static void hf_hists(bool take)
{
	int i;

	for (i = 0; i < NMETRIC; i++) {
		if (take) {
			hf.mem[i][0] = calloc(64, 8);
			hf.mem[i][1] = calloc(64, 8);
			hist_init(&sess.h[i], 1000, 64000, hf.mem[i][0], (int64_t *)hf.mem[i][1], 64, test_lh(i));
		} else {
			free(hf.mem[i][0]);
			free(hf.mem[i][1]);
		}
	}
}

static void hf_reflector(void)
{
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(lo);

	reset_globals();
	side_set(false);
	memset(hf.win, 0, sizeof(hf.win));
	run.win.slot = hf.win;
	run.win.mask = 255;
	memset(&refl, 0, sizeof(refl));
	memset(&emitter, 0, sizeof(emitter));
	refl.log_fd = -1;
	run.echo.q = hf.q;
	run.key.on = false;
	opts.size = 64;
	hf_hists(true);
	hf.rx = socket(AF_INET, SOCK_DGRAM, 0);
	hf.rx2 = socket(AF_INET, SOCK_DGRAM, 0);
	run.sock_fd = socket(AF_INET, SOCK_DGRAM, 0);
	bind(hf.rx, (struct sockaddr *)&lo, sizeof(lo));
	bind(hf.rx2, (struct sockaddr *)&lo, sizeof(lo));
	getsockname(hf.rx, (struct sockaddr *)&hf.cl, &l);
	l = sizeof(lo);
	getsockname(hf.rx2, (struct sockaddr *)&hf.cl2, &l);
}

static void hf_done(void)
{
	hf_hists(false);
	close(hf.rx);
	close(hf.rx2);
	close(run.sock_fd);
	run.sock_fd = -1;
	run.win.slot = NULL;
	run.echo.q = NULL;
	memset(&sess, 0, sizeof(sess));
	reset_globals();
}

/* One datagram from a client socket's address to the reflector; its stdout kept apart. */
static void hf_in_flags(int type, uint32_t session, uint64_t seq, uint16_t flags, const struct sockaddr_in *from)
{
	uint8_t buf[128];
	struct proto_msg m = { .type = (uint8_t)type, .session = session, .seq = seq, .idle_ms = 1000, .flags = flags };
	struct capture c;

	memset(buf, 0, sizeof(buf));
	proto_encode(buf, &m);
	cap_start(&c, 1);
	reflect_packet(buf, 64, 1700000000000000000ULL + seq * 1000, 0, false,
		       (const struct sockaddr *)from, sizeof(*from));
	free(cap_stop(&c));
}

static void hf_in(int type, uint32_t session, uint64_t seq, const struct sockaddr_in *from)
{
	hf_in_flags(type, session, seq, 0, from);
}

/* What the reflector sent to fd last: its type and flags (type 0: nothing came). */
static int hf_out(int fd, uint16_t *flags)
{
	uint8_t buf[128];
	struct proto_msg m;
	ssize_t n;
	int type = 0;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		if (!proto_decode(buf, (size_t)n, &m)) {
			type = m.type;
			*flags = m.flags;
		}
	}
	return type;
}

/*
 * A client whose pongs' TX stamps never came sends its FIN: the reflector
 * waits a bounded time for them, answers without "more", ends the session,
 * and a second client right after is served, not told BUSY.
 */
static void test_fin_owed(void)
{
	uint16_t fl = 0;
	int t, i;

	hf_reflector();
	run.ts.hw = true;
	for (i = 0; i < 3; i++) {
		hf_in(PT_PING, 0x21, (uint64_t)i, &hf.cl);
	}
	t = hf_out(hf.rx, &fl);
	ok(refl.active && refl.txpend == 3 && t == PT_PONG && !run.echo.n,
	   "three pongs sent, their three TX stamps owed", "active=%d txpend=%" PRIu64 " t=%d",
	   refl.active, refl.txpend, t);
	hf_in(PT_FIN, 0x21, 3, &hf.cl);
	t = hf_out(hf.rx, &fl);
	ok(t == PT_FIN_ACK && !(fl & PF_MORE), "the FIN_ACK asks for no more FINs", "t=%d flags=%#x", t, fl);
	ok(!refl.active && refl.sessions == 1 && sess.stop_reason == STOP_FIN && sess.c.missing[T3W] == 3,
	   "the session ends on the FIN, the three T3 counted missing", "active=%d sessions=%u stop=%d missing=%" PRIu64,
	   refl.active, refl.sessions, sess.stop_reason, sess.c.missing[T3W]);
	{
		/* its FIN_ACK lost or late, the client asks again: the ended session's count, whole */
		uint8_t b[PROTO_MAX_SIZE];
		struct proto_msg m = { 0 };
		ssize_t n;
		bool got = false;

		hf_in(PT_FIN, 0x21, 3, &hf.cl);
		while ((n = recv(hf.rx, b, sizeof(b), MSG_DONTWAIT)) > 0) {
			got = !proto_decode(b, (size_t)n, &m) && m.type == PT_FIN_ACK;
		}
		ok(got && m.seq == 3 && !(m.flags & PF_PARTIAL),
		   "a repeated FIN of the session that ended: its count again (3), not partial", "got=%d seq=%" PRIu64
		   " flags=%#x", got, m.seq, m.flags);
	}
	hf_in(PT_PING, 0x22, 0, &hf.cl2);
	t = hf_out(hf.rx2, &fl);
	ok(refl.active && sess.id == 0x22 && t == PT_PONG && !sess.c.rejected[GR_BUSY_SENT],
	   "a second client right after is served, not told BUSY", "active=%d id=%#x t=%d busy=%" PRIu64,
	   refl.active, sess.id, t, sess.c.rejected[GR_BUSY_SENT]);
	/* stamps that did come are still echoed, one per round, up to the client's last round */
	echo_push(0, 1700000000000000500ULL, 0);
	echo_push(0, 1700000000000000600ULL, 0);
	hf_in(PT_FIN, 0x22, 1, &hf.cl2);
	t = hf_out(hf.rx2, &fl);
	ok(t == PT_FIN_ACK && (fl & PF_MORE) && (fl & PF_T3W) && refl.active,
	   "a T3 that came and waits: echoed, more asked", "t=%d flags=%#x", t, fl);
	refl.fin_rounds = FIN_ROUNDS - 1;
	echo_push(0, 1700000000000000700ULL, 0);
	hf_in(PT_FIN, 0x22, 1, &hf.cl2);
	t = hf_out(hf.rx2, &fl);
	ok(t == PT_FIN_ACK && !(fl & PF_MORE) && !refl.active,
	   "the client's last round ends the session even with echoes left", "t=%d flags=%#x active=%d", t, fl,
	   refl.active);
	/* a FIN flagged last (the client past its end) ends the session in round 1, echoes left or not */
	hf_in(PT_PING, 0x23, 0, &hf.cl);
	hf_out(hf.rx, &fl);
	echo_push(0, 1700000000000000800ULL, 0);
	echo_push(0, 1700000000000000900ULL, 0);
	hf_in_flags(PT_FIN, 0x23, 1, PF_LAST, &hf.cl);
	t = hf_out(hf.rx, &fl);
	ok(t == PT_FIN_ACK && !(fl & PF_MORE) && (fl & PF_T3W) && !refl.active && sess.stop_reason == STOP_FIN &&
	   refl.fin_rounds == 1, "a FIN flagged last: echoed, no more asked, the session ends by fin",
	   "t=%d flags=%#x active=%d stop=%d rounds=%d", t, fl, refl.active, sess.stop_reason, refl.fin_rounds);
	hf_done();
}

/* What the fake reflector FD got: FINs of SESSION, their flags in FL (at most MAX). */
static int fin_flags_in(int fd, uint32_t session, uint16_t *fl, int max)
{
	uint8_t buf[512];
	struct proto_msg m;
	ssize_t n;
	int k = 0;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
		if (!proto_decode(buf, (size_t)n, &m) && m.type == PT_FIN && m.session == session && k < max) {
			fl[k++] = m.flags;
		}
	}
	return k;
}

/*
 * The client's FINs past -d's end: one goes out whatever the time, and a
 * FIN the client will not wait an answer for says it is the last (PF_LAST),
 * also after a FIN_ACK that asked for more: otherwise the reflector would
 * hold the session, waiting for the next round, until its idle timeout.
 */
/* Why a client cannot split its loss by direction: each reason, and none without loss. */
static void test_loss_why(void)
{
	static const struct {
		const char *what, *want;
		bool busy, fin_acked, whole;
		uint64_t received, late, tries, srv;
	} c[] = {
		{ "BUSY", "the reflector was serving another client", true, false, false, 5, 0, 0, 0 },
		{ "no pong", "no pong came, so no FIN was sent", false, false, false, 0, 0, 0, 0 },
		{ "no FIN tried", "-d's end came before a FIN could be answered", false, false, false, 5, 0, 0, 0 },
		{ "no FIN_ACK", "no FIN_ACK came (3 FINs in 300 ms)", false, false, false, 5, 0, 3, 0 },
		{ "one FIN", "no FIN_ACK came (1 FIN in 300 ms)", false, false, false, 5, 0, 1, 0 },
		{ "partial", "the reflector did not see the whole session", false, true, false, 5, 0, 3, 9 },
		{ "counts", "the reflector's count (4 pings answered) does not fit this run's (10 sent, 6 came back)",
		  false, true, true, 5, 1, 3, 4 },
	};
	struct report r;
	char why[256];
	size_t i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		reset_globals();
		opts.mode = MODE_EMIT;
		sess.c.sent = 10;
		sess.c.received = c[i].received;
		sess.c.late = c[i].late;
		sess.c.lost = 10 - c[i].received;
		result.busy = c[i].busy;
		result.fin_acked = c[i].fin_acked;
		result.srv_whole = c[i].whole;
		result.srv_received = c[i].srv;
		result.fin_tries = (unsigned)c[i].tries;
		result.fin_wait_ns = 300 * 1000000ULL;
		report_compute(&r);
		snprintf(why, sizeof(why), "%s: so it says", c[i].what);
		ok(!r.split && !strncmp(r.split_why, c[i].want, strlen(c[i].want)), why, "%s", r.split_why);
	}
	/*
	 * the counts came in the first round's FIN_ACK (more echoes waited),
	 * the second round's never came: the counts stand, the loss is split
	 */
	reset_globals();
	opts.mode = MODE_EMIT;
	sess.c.sent = 10;
	sess.c.received = 7;
	sess.c.lost = 3;
	result.fin_counted = result.srv_whole = true;
	result.fin_acked = false;
	result.srv_received = 9;
	result.fin_tries = 4;
	report_compute(&r);
	ok(r.split && r.lost_out == 1 && r.lost_back == 2 && !*r.split_why,
	   "a later round's FIN_ACK missing: the first one's counts split the loss", "split %d out %" PRIu64
	   " back %" PRIu64 " %s", r.split, r.lost_out, r.lost_back, r.split_why);
	/* nothing lost: nothing to split, no reason */
	sess.c.lost = 0;
	sess.c.received = 10;
	loss_why(why, sizeof(why));
	ok(!*why, "nothing lost: no reason", "%s", why);
	/* the reflector's side never splits, and never says why */
	side_set(false);
	sess.c.lost = 3;
	loss_why(why, sizeof(why));
	ok(!*why, "the reflector: no reason", "%s", why);
	/* --analyze: one log alone, or the joined logs' own reason */
	side_set(true);
	opts.mode = MODE_ANALYZE;
	opts.analyze[0] = "e.csv";
	loss_why(why, sizeof(why));
	ok(!strncmp(why, "a client log alone", 18), "--analyze of a client log alone", "%s", why);
	opts.analyze[1] = "r.csv";
	snprintf(result.analyze_why, sizeof(result.analyze_why), "the reflect log begins at SEQ 7");
	loss_why(why, sizeof(why));
	ok(!strcmp(why, result.analyze_why), "--analyze of joined logs: their reason", "%s", why);
	reset_globals();
}

static void test_fin_last(void)
{
	struct sockaddr_in lo = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in ca = lo, ra = lo;
	socklen_t l = sizeof(ca);
	static uint8_t rxbuf[PROTO_MAX_SIZE + 64], txbuf[PROTO_MAX_SIZE + 64];
	uint8_t ack[512];
	uint16_t fl[8];
	int rsock, k, i;
	uint64_t t0;

	guard_setup(true);
	opts.size = 64;
	opts.timeout_ns = 100 * 1000000ULL;
	rsock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	run.sock_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rsock < 0 || run.sock_fd < 0 || bind(rsock, (struct sockaddr *)&ra, sizeof(ra)) < 0 ||
	    getsockname(rsock, (struct sockaddr *)&ra, &l) < 0 ||
	    connect(run.sock_fd, (struct sockaddr *)&ra, sizeof(ra)) < 0 ||
	    getsockname(run.sock_fd, (struct sockaddr *)&ca, &(socklen_t){ sizeof(ca) }) < 0) {
		ok(false, "fin last: loopback sockets", "%s", strerror(errno));
		return;
	}
	emitter.rx = rxbuf;
	emitter.rxcap = sizeof(rxbuf);
	emitter.tx = txbuf;

	/* already past the end: one FIN, flagged last, and no waiting */
	t0 = mono_ns();
	emit_fin_exchange(t0 - 1);
	k = fin_flags_in(rsock, sess.id, fl, 8);
	ok(k == 1 && (fl[0] & PF_LAST) && !result.fin_acked, "fin last: past the end, one FIN goes out, flagged last",
	   "fins %d flags %#x", k, k ? fl[0] : 0);

	/* a reflector that answers no FIN, well before the end: 3 tries, then the last */
	opts.timeout_ns = 5 * 1000000ULL;
	emit_fin_exchange(mono_ns() + 60 * NSEC_PER_SEC);
	k = fin_flags_in(rsock, sess.id, fl, 8);
	ok(k == 4 && !(fl[0] & PF_LAST) && !(fl[2] & PF_LAST) && (fl[3] & PF_LAST) && !result.fin_acked,
	   "fin last: three FINs unanswered, then one flagged last", "fins %d", k);
	opts.timeout_ns = 100 * 1000000ULL;

	/*
	 * The answer to the first FIN (queued before it, read after it) asks
	 * for more; the end comes 250 ms after the start: the FINs of round 1
	 * (100 ms each) go unanswered, and the one after them says it is the
	 * last.
	 */
	emitter.fin_sent = false;
	memset(ack, 0, sizeof(ack));
	proto_encode_pad(ack, fin_len(), &(struct proto_msg){ .type = PT_FIN_ACK, .session = sess.id, .flags = PF_MORE });
	sendto(rsock, ack, fin_len(), 0, (struct sockaddr *)&ca, sizeof(ca));
	emit_fin_exchange(mono_ns() + 250 * 1000000ULL);
	k = fin_flags_in(rsock, sess.id, fl, 8);
	for (i = 0; i + 1 < k && !(fl[i] & PF_LAST); i++) {
	}
	ok(k >= 2 && k <= 5 && i == k - 1 && (fl[k - 1] & PF_LAST) && emitter.fin_more,
	   "fin last: after a FIN_ACK asking for more, the FIN past the end is flagged last, none before it",
	   "fins %d, flagged last from %d, more %d", k, i, emitter.fin_more);
	close(rsock);
	close(run.sock_fd);
	run.sock_fd = -1;
	emitter.rx = emitter.tx = NULL;
}

/*
 * sendmsg as the kernel answers it: hf_fail_sends sends fail as before
 * Linux 6.8 (the OPT_ID key is used up: the datagram goes to a blackhole
 * here, its stamp read and dropped, and -1 ENOBUFS comes back); with
 * hf_refuse_key a send carrying SCM_TS_OPT_ID is refused (EINVAL), as by
 * a kernel or backport without it.
 */
static int hf_fail_sends;
static bool hf_refuse_key;

static bool hf_has_key(const struct msghdr *msg)
{
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(msg); cm; cm = CMSG_NXTHDR((struct msghdr *)msg, cm)) {
		if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TS_OPT_ID) {
			return true;
		}
	}
	return false;
}

/* Wait (2 s at most) for fd's error queue; read one message if drop. */
static bool hf_errqueue(int fd, bool drop)
{
	struct pollfd p = { fd, 0, 0 };
	char ctrl[256], data[64];
	struct iovec iov = { data, sizeof(data) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctrl,
			    .msg_controllen = sizeof(ctrl) };

	if (poll(&p, 1, 2000) != 1 || !(p.revents & POLLERR)) {
		return false;
	}
	return !drop || recvmsg(fd, &m, MSG_ERRQUEUE) >= 0;
}

static ssize_t hf_sendmsg(int fd, const struct msghdr *msg, int flags)
{
	struct sockaddr_in sink = { .sin_family = AF_INET, .sin_port = htons(9),
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct msghdr m = *msg;

	if (hf_refuse_key && hf_has_key(msg)) {
		errno = EINVAL;
		return -1;
	}
	if (hf_fail_sends > 0) {
		hf_fail_sends--;
		m.msg_name = &sink;
		m.msg_namelen = sizeof(sink);
		if (sendmsg(fd, &m, flags) >= 0) {
			hf_errqueue(fd, true);
		}
		errno = ENOBUFS;
		return -1;
	}
	return sendmsg(fd, msg, flags);
}

/* The reflector's transaction of seq in this session, once its TX stamp was read (or 2 s). */
static const struct txn *hf_txn(uint64_t seq)
{
	unsigned i;

	while (refl.txpend && hf_errqueue(run.sock_fd, false)) {
		reflect_drain();
	}
	for (i = 0; i < 256; i++) {
		if ((hf.win[i].st & TF_USED) && hf.win[i].seq == seq) {
			return &hf.win[i];
		}
	}
	return &hf.win[255];	/* an empty one: the test then fails on it */
}

/* A reflector on real TX stamps (the kernel's, of loopback), keyed as KERNEL keys them. */
static void hf_keyed(unsigned kernel)
{
	hf_reflector();
	opts.mode = MODE_REFLECT;
	kops.kernel = fake_kernel;
	fake_kernel_version = kernel;
	ts_keys_setup();
	ts_enable_socket(run.sock_fd);
	kops.sendmsg = hf_sendmsg;
	hf_fail_sends = 0;
	hf_refuse_key = false;
}

static void hf_keyed_done(void)
{
	kops_restore();
	hf_done();
}

/*
 * A failed send may have used up an OPT_ID key of the socket's counter on
 * any kernel (before 6.8 whatever failed; since, a datagram dropped after it
 * was built, by netfilter for one), and rant re-keys the socket.  In any
 * session but the first, a failed pong, FIN_ACK or BUSY must not cost the
 * session every later T3.
 */
static void rekey_case(unsigned kernel)
{
	uint16_t fl;
	const struct txn *x;

	hf_keyed(kernel);
	ok(!run.ts.key_cmsg, "a reflector of this kernel: the counter", "kernel %u", kernel);
	hf_in(PT_PING, 0x31, 0, &hf.cl);
	hf_in(PT_PING, 0x31, 1, &hf.cl);
	x = hf_txn(1);
	ok(x->t[T3W] && run.echo.n, "session 1: the pong's T3 is read and queued to echo", "t3=%" PRIu64, x->t[T3W]);
	hf_in(PT_FIN, 0x31, 2, &hf.cl);
	hf_out(hf.rx, &fl);
	hf_in(PT_PING, 0x32, 0, &hf.cl);
	x = hf_txn(0);
	ok(refl.active && sess.id == 0x32 && refl.key0 > 0 && x->t[T3W],
	   "session 2 starts at a later key, its first T3 read", "key0=%u t3=%" PRIu64, refl.key0, x->t[T3W]);
	hf_fail_sends = 1;
	hf_in(PT_PING, 0x32, 1, &hf.cl);
	ok(sess.c.send_errors == 1 && run.ts.next_key == 0, "session 2: a pong send fails, the keys start again at 0",
	   "errors=%" PRIu64 " next=%u", sess.c.send_errors, run.ts.next_key);
	hf_in(PT_PING, 0x32, 2, &hf.cl);
	x = hf_txn(2);
	ok(x->t[T3W] && !refl.txpend && !sess.c.tx_unmatched,
	   "session 2: the next pong's T3 is the session's, not taken for an earlier one's",
	   "t3=%" PRIu64 " txpend=%" PRIu64 " key0=%u", x->t[T3W], refl.txpend, refl.key0);
	/* a FIN_ACK whose send fails: the next session's keys are still right */
	hf_fail_sends = 1;
	hf_in(PT_FIN, 0x32, 3, &hf.cl);
	ok(!refl.active, "session 2 ends on its FIN, whose FIN_ACK failed", "-");
	hf_in(PT_PING, 0x33, 0, &hf.cl);
	x = hf_txn(0);
	ok(x->t[T3W] && !refl.txpend, "session 3: after a failed FIN_ACK its first T3 is read",
	   "t3=%" PRIu64 " next=%u", x->t[T3W], run.ts.next_key);
	/* a BUSY whose send fails, in the middle of session 3 */
	hf_fail_sends = 1;
	hf_in(PT_PING, 0x34, 0, &hf.cl2);
	hf_in(PT_PING, 0x33, 1, &hf.cl);
	x = hf_txn(1);
	ok(sess.id == 0x33 && x->t[T3W] && !refl.txpend, "session 3: after a failed BUSY the next T3 is read",
	   "t3=%" PRIu64 " txpend=%" PRIu64, x->t[T3W], refl.txpend);
	hf_keyed_done();
}

/* Linux 6.7: any failed send may have used its key up */
static void test_rekey(void)
{
	rekey_case(6007);
}

/* Linux 6.12: a failed send gives its key back only if it failed while built */
static void test_rekey_612(void)
{
	rekey_case(6012);
}

/*
 * Linux 6.13+: each pong carries its key (SCM_TS_OPT_ID).  A kernel that
 * refuses it mid-run sends the rest through the socket's counter, which
 * never moved: the keys must start again at 0 with it.
 */
static void test_rekey_cmsg(void)
{
	const struct txn *x;

	hf_keyed(6013);
	ok(run.ts.key_cmsg, "a 6.13 reflector: a key per send", "-");
	hf_in(PT_PING, 0x41, 0, &hf.cl);
	hf_in(PT_PING, 0x41, 1, &hf.cl);
	x = hf_txn(1);
	ok(x->t[T3W] || !run.ts.key_cmsg, "the keyed sends' T3 read", "t3=%" PRIu64, x->t[T3W]);
	hf_refuse_key = true;
	hf_in(PT_PING, 0x41, 2, &hf.cl);
	hf_in(PT_PING, 0x41, 3, &hf.cl);
	x = hf_txn(3);
	ok(!run.ts.key_cmsg && x->t[T3W] && hf_txn(2)->t[T3W] && !refl.txpend && !sess.c.tx_unmatched,
	   "key refused: the counter takes over from 0, the next T3s are read",
	   "cmsg=%d t3=%" PRIu64 " txpend=%" PRIu64 " unmatched=%" PRIu64, run.ts.key_cmsg, x->t[T3W], refl.txpend,
	   sess.c.tx_unmatched);
	hf_keyed_done();
}

/*
 * Tests that count stamps from the first datagram need the kernel's receive
 * stamps live before it (ts_rx_live says why they may not be): one socket
 * asking for them stays open for the rest of the tests, and ts_rx_live waits
 * until they are on.
 */
static void rx_stamps_live(void)
{
	static int fd = -1;
	int f = SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE;

	if (fd < 0) {
		fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		ts_sockopt(fd, f);
	}
	ts_rx_live();
}

/* late_ping N SENT: ping N in the guard window, sent at monotonic SENT, awaiting its pong */
static struct txn *late_ping(uint64_t seq, uint64_t sent)
{
	struct txn *x = &run.win.slot[seq & run.win.mask];

	memset(x, 0, sizeof(*x));
	x->seq = seq;
	x->st = TF_USED | TF_SENT;
	x->deadline = sent + opts.timeout_ns;
	answered_set(seq, false);
	emitter.outstanding++;
	sess.c.sent++;
	if (emitter.next_seq <= seq) {
		emitter.next_seq = seq + 1;
	}
	return x;
}

/*
 * A pong is late by when it arrived (its kernel receive stamp), not by when
 * the client got round to reading it; and a ping is not given up while its
 * pong, in time, sits unread in the socket.
 */
static void test_late_by_arrival(void)
{
	static uint8_t rxbuf[PROTO_MAX_SIZE + 64];
	uint8_t buf[PROTO_HDR_LEN + 64];
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t tl = sizeof(to);
	uint64_t sent, base;
	int rx, tx, i;

	guard_setup(true);
	opts.size = PROTO_HDR_LEN;
	opts.timeout_ns = 20 * 1000000ULL;
	clk_start();
	base = (uint64_t)run.clk.base;
	/* sent 40 ms ago: every deadline has passed when the pongs are read */
	sent = mono_ns() - 2 * opts.timeout_ns;
	late_ping(0, sent);
	late_ping(1, sent);
	late_ping(2, sent);
	late_ping(3, sent);
	/* 0 came 1 us after the send; 1 after its deadline; 2 without a stamp; 3 stamped before its send (a step) */
	emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, 0, 0), base + sent + 1000, 0, false);
	emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, 1, 0), base + sent + opts.timeout_ns + 1000, 0, false);
	emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, 2, 0), 0, 0, false);
	emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, 3, 0), base + sent - 10 * NSEC_PER_SEC, 0, false);
	ok(sess.c.received == 1 && sess.c.late == 3 && sess.c.lost == 3 && (run.win.slot[0].st & TF_RECEIVED),
	   "late: read after the deadline, a pong stamped before it is on time; after it, unstamped or stepped: late",
	   "received %" PRIu64 " late %" PRIu64 " lost %" PRIu64, sess.c.received, sess.c.late, sess.c.lost);

	/* a real socket on lo: the pong came in time, the client reads it only after the deadline */
	rx_stamps_live();
	rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *)&to, sizeof(to)) < 0 ||
	    getsockname(rx, (struct sockaddr *)&to, &tl) < 0 || ts_sockopt(rx, ts_sockopt_flags(false)) < 0) {
		ok(false, "late: loopback sockets with receive stamps", "%s", strerror(errno));
		return;
	}
	run.sock_fd = rx;
	emitter.rx = rxbuf;
	emitter.rxcap = sizeof(rxbuf);
	emitter.oldest = 0;
	/*
	 * The pong is stamped between t0 and t1; the ping is "sent" 1 ms before
	 * t0 (clear of the clock base's error) with a timeout 20 ms past t1, so
	 * the pong is in time however long the host kept this process waiting.
	 */
	guard_msg(buf, PT_PONG, sess.id, 4, 0);
	{
		uint64_t t0 = mono_ns();
		ssize_t n = sendto(tx, buf, opts.size, 0, (struct sockaddr *)&to, sizeof(to));
		uint64_t t1 = mono_ns();

		ok(n == (ssize_t)opts.size, "late: the pong is sent", "%s", strerror(errno));
		sent = t0 - 1000000;
		opts.timeout_ns = t1 - sent + 20 * 1000000ULL;
	}
	late_ping(4, sent);
	for (i = 0; i < 60000 && mono_ns() <= sent + opts.timeout_ns; i++) {	/* its deadline passes */
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	emit_expire(mono_ns());
	ok(sess.c.received == 2 && sess.c.lost == 3 && sess.c.late == 3 && (run.win.slot[4].st & TF_RECEIVED) &&
	   !emitter.outstanding, "late: at its deadline, the pong queued in time is read first: received, not lost",
	   "received %" PRIu64 " lost %" PRIu64 " late %" PRIu64 " outstanding %" PRIu64, sess.c.received, sess.c.lost,
	   sess.c.late, emitter.outstanding);
	/* nothing queued: a ping past its deadline is lost, with no pong to read */
	late_ping(5, mono_ns() - 2 * opts.timeout_ns);
	emit_expire(mono_ns());
	ok(sess.c.lost == 4 && sess.c.received == 2 && !emitter.outstanding, "late: a ping past its deadline with nothing queued is lost",
	   "lost %" PRIu64, sess.c.lost);
	/* the end's cutoff (-d + 200 ms) before the deadline: a pong that came is read, not lost */
	late_ping(6, mono_ns())->deadline = UINT64_MAX / 2;	/* the cutoff, not the deadline, is under test */
	guard_msg(buf, PT_PONG, sess.id, 6, 0);
	sendto(tx, buf, opts.size, 0, (struct sockaddr *)&to, sizeof(to));
	emit_await_pongs(mono_ns() - 1);
	ok(sess.c.received == 3 && sess.c.lost == 4 && !emitter.outstanding,
	   "late: at the end's cutoff, a pong already queued is received, not lost",
	   "received %" PRIu64 " lost %" PRIu64, sess.c.received, sess.c.lost);
	close(rx);
	close(tx);
	run.sock_fd = -1;
	emitter.rx = NULL;
}

/* SIOCGSTAMPNS answered as test_rx_ioctl sets it: a stamp, or an error */
static struct {
	int r;
	uint64_t ns;
	unsigned calls;
} stampns;

static int fake_stampns(int fd, unsigned long req, void *arg)
{
	(void)fd;
	if (req != SIOCGSTAMPNS) {
		return -ENOTTY;
	}
	stampns.calls++;
	if (stampns.r) {
		return stampns.r;
	}
	*(struct timespec *)arg = (struct timespec){ (time_t)(stampns.ns / NSEC_PER_SEC),
						    (long)(stampns.ns % NSEC_PER_SEC) };
	return 0;
}

/*
 * SO_MEMINFO's field i of fd once it is above was, waiting for it (1 ms at a
 * time, 5 s at most): what the kernel delivers on loopback may come after
 * sendto returns, from ksoftirqd on a busy host.  The last value read.
 */
static uint32_t meminfo_past(int fd, int i, uint32_t was)
{
	uint32_t mi[SK_MEMINFO_VARS] = { 0 };
	socklen_t len;
	int k;

	for (k = 0; k < 5000; k++) {
		len = sizeof(mi);
		if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &len) < 0 || mi[i] > was) {
			break;
		}
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return mi[i];
}

/*
 * --client-no-tx-ts: the pong read by recvfrom, its kernel RX stamp by
 * SIOCGSTAMPNS (ts_rx_ioctl_on).  On a real loopback socket: no
 * SO_TIMESTAMPING on it, every pong taken with its own stamp (after its
 * send, before its read), a datagram longer than the buffer cut and
 * flagged, the socket's drops counted from SO_MEMINFO.  Against a fake
 * ioctl: the kernel's "now" for an unstamped datagram (not before the read)
 * and an error both leave the pong without T4; a socket that refuses the
 * ioctl gets SO_TIMESTAMPING as before; and none of this without the option.
 */
static void test_rx_ioctl(void)
{
	static uint8_t rxbuf[PROTO_MAX_SIZE + 64];
	uint8_t buf[PROTO_HDR_LEN + 64], big[600] = { 0 };
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t tl = sizeof(to), fl;
	uint32_t mi[SK_MEMINFO_VARS], drops, queued;
	uint64_t before[3], good = 0;
	int rx, tx, i, f = -1, sent = 0;
	struct rx r;

	guard_setup(true);
	opts.mode = MODE_EMIT;
	opts.size = PROTO_HDR_LEN;
	opts.timeout_ns = 60 * NSEC_PER_SEC;
	opts.sw_stamps = true;
	rx_stamps_live();
	rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *)&to, sizeof(to)) < 0 ||
	    getsockname(rx, (struct sockaddr *)&to, &tl) < 0) {
		ok(false, "rx ioctl: loopback sockets", "%s", strerror(errno));
		return;
	}
	fl = sizeof(f);
	ok(ts_enable_socket(tx) == 0 && !emitter.rx_ioctl &&
	   getsockopt(tx, SOL_SOCKET, SO_TIMESTAMPING, &f, &fl) == 0 && (f & SOF_TIMESTAMPING_RX_SOFTWARE),
	   "rx ioctl: not without --client-no-tx-ts (SO_TIMESTAMPING as ever)", "%d %#x", emitter.rx_ioctl, f);
	ts_sockopt(tx, 0);
	opts.cli_no_tx = true;
	ok(ts_enable_socket(rx) == 0 && emitter.rx_ioctl, "rx ioctl: --client-no-tx-ts reads T4 by SIOCGSTAMPNS", "%d",
	   emitter.rx_ioctl);
	fl = sizeof(f);
	ok(getsockopt(rx, SOL_SOCKET, SO_TIMESTAMPING, &f, &fl) == 0 && f == 0,
	   "rx ioctl: no SO_TIMESTAMPING flags on the socket (they would take the stamp to a control message)",
	   "%#x", f);
	run.sock_fd = rx;
	classes.fd[0] = rx;	/* as cls_open() makes it: the class sockets, the first one too */
	emitter.rx = rxbuf;
	emitter.rxcap = sizeof(rxbuf);
	/*
	 * the reads below wait (5 s at most): on a busy host loopback's
	 * delivery may be left to ksoftirqd, after sendto has returned
	 */
	setsockopt(rx, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){ .tv_sec = 5 }, sizeof(struct timeval));
	memset(&r, 0, sizeof(r));
	for (i = 0, queued = 0; i < 3; i++) {
		late_ping((uint64_t)i, mono_ns());
		before[i] = real_ns();
		guard_msg(buf, PT_PONG, sess.id, (uint64_t)i, 0);
		sent += sendto(tx, buf, opts.size, 0, (struct sockaddr *)&to, sizeof(to)) == (ssize_t)opts.size;
		/* queued (and so stamped) before the next send's clock read */
		queued = meminfo_past(rx, SK_MEMINFO_RMEM_ALLOC, queued);
	}
	for (i = 0; i < 3; i++) {
		ok(emit_recv(0) == 1, "rx ioctl: a pong read", "%d", i);
	}
	for (i = 0; i < 3; i++) {
		const struct txn *x = &run.win.slot[i];

		good += (x->st & TF_RECEIVED) && x->t[T4W] >= before[i] && x->t[T4W] < x->t[T4SW] &&
			(i == 2 || x->t[T4W] < before[i + 1]);
	}
	ok(sent == 3 && good == 3 && sess.c.received == 3,
	   "rx ioctl: each pong its own kernel stamp: after its send, before its read and the next send",
	   "sent %d good %" PRIu64 " received %" PRIu64, sent, good, sess.c.received);
	/* longer than the buffer: cut to it and flagged, as recvmsg would (MSG_TRUNC) */
	sendto(tx, big, sizeof(big), 0, (struct sockaddr *)&to, sizeof(to));
	ok(sock_recv(rxbuf, 100, 0, &r, NULL, false) == 1 && r.trunc && r.len == 100,
	   "rx ioctl: a datagram longer than the buffer read as the buffer and flagged truncated",
	   "trunc %d len %zu", r.trunc, r.len);
	/* drops: a receive buffer too small for a burst */
	setopt_int(rx, SOL_SOCKET, SO_RCVBUF, 1);
	for (i = 0; i < 64; i++) {
		sendto(tx, big, sizeof(big), MSG_DONTWAIT, (struct sockaddr *)&to, sizeof(to));
	}
	/* the drops as the kernel counts them, once there are some (delivery may lag the sends) */
	drops = meminfo_past(rx, SK_MEMINFO_DROPS, 0);
	result.rxq_ovfl = 0;
	emit_drops_meminfo();
	fl = sizeof(mi);
	ok(drops > 0 && drops <= result.rxq_ovfl && getsockopt(rx, SOL_SOCKET, SO_MEMINFO, mi, &fl) == 0 &&
	   result.rxq_ovfl <= mi[SK_MEMINFO_DROPS],
	   "rx ioctl: the socket's drops counted from SO_MEMINFO (between two reads of it)",
	   "before %" PRIu32 " rxq_ovfl %" PRIu32 " after %" PRIu32, drops, result.rxq_ovfl, mi[SK_MEMINFO_DROPS]);

	/* the kernel's answers, faked */
	kops.ioctl = fake_stampns;
	memset(&r, 0, sizeof(r));
	r.app = 5 * NSEC_PER_SEC;
	stampns.r = 0;
	stampns.ns = r.app - 700;
	ts_rx_ioctl(&r);
	ok(r.c.have_ts && r.c.sw == r.app - 700, "rx ioctl: a stamp before the read is the pong's", "%" PRIu64,
	   r.c.sw);
	memset(&r.c, 0, sizeof(r.c));
	stampns.ns = r.app + 300;
	ts_rx_ioctl(&r);
	ok(!r.c.have_ts && !r.c.sw, "rx ioctl: the kernel's time of the ioctl (an unstamped datagram): no T4",
	   "%" PRIu64, r.c.sw);
	stampns.ns = r.app;
	ts_rx_ioctl(&r);
	ok(!r.c.have_ts, "rx ioctl: a stamp at the read itself: no T4", "%" PRIu64, r.c.sw);
	stampns.r = -EINVAL;
	ts_rx_ioctl(&r);
	ok(!r.c.have_ts, "rx ioctl: an ioctl that fails: no T4", "%" PRIu64, r.c.sw);
	stampns.r = -ENOTTY;
	emitter.rx_ioctl = false;
	fl = sizeof(f);
	ok(ts_enable_socket(rx) == 0 && !emitter.rx_ioctl &&
	   getsockopt(rx, SOL_SOCKET, SO_TIMESTAMPING, &f, &fl) == 0 && (f & SOF_TIMESTAMPING_RX_SOFTWARE) &&
	   !(f & SOF_TIMESTAMPING_TX_SOFTWARE),
	   "rx ioctl: a socket that refuses SIOCGSTAMPNS: SO_TIMESTAMPING's RX stamps instead", "%d %#x",
	   emitter.rx_ioctl, f);
	ts_sockopt(rx, 0);
	stampns.r = -ENOENT;
	ok(ts_enable_socket(rx) == 0 && emitter.rx_ioctl, "rx ioctl: ENOENT (nothing read yet) is the answer expected",
	   "%d", emitter.rx_ioctl);
	/* a class's socket refusing what the first took: a warning line, that class without T4 */
	{
		struct capture c;
		char *err;
		int g = -1, en;

		stampns.r = -ENOTTY;
		classes.opening = 1;
		cap_start(&c, 2);
		en = ts_enable_socket(rx);
		err = cap_stop(&c);
		fl = sizeof(g);
		ok(en == 0 && emitter.rx_ioctl && one_rant_line(err) &&
		   strstr(err, "rant: warning: --client-no-tx-ts: SIOCGSTAMPNS refused on class 1's socket") == err &&
		   getsockopt(rx, SOL_SOCKET, SO_TIMESTAMPING, &g, &fl) == 0 && g == 0,
		   "rx ioctl: a later class's socket refusing it: one warning line, no control data asked for",
		   "r %d on %d flags %#x '%s'", en, emitter.rx_ioctl, g, err);
		free(err);
		classes.opening = 0;
	}
	kops_restore();
	opts.cli_no_tx = false;
	close(rx);
	close(tx);
	run.sock_fd = -1;
	emitter.rx = NULL;
	emitter.rx_ioctl = false;
}

/*
 * Back-to-back, the client reads its TX stamps right after each send, at
 * most EMIT_TX_AFTER_SEND of them: a backlog is read over the next sends,
 * never in one long read while the pong waits; nothing pending, no read.
 * Ten real software TX stamps of a loopback socket, under keys that match
 * no ping (so each read stamp is counted unmatched).
 */
static void test_tx_after_send(void)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t tl = sizeof(to);
	char b[8] = { 0 };
	int rx, tx, i;
	uint64_t got[4];

	guard_setup(true);
	rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rx < 0 || tx < 0 || bind(rx, (struct sockaddr *)&to, sizeof(to)) < 0 ||
	    getsockname(rx, (struct sockaddr *)&to, &tl) < 0 || connect(tx, (struct sockaddr *)&to, sizeof(to)) < 0 ||
	    ts_sockopt(tx, ts_sockopt_flags(false)) < 0) {
		ok(false, "tx after send: loopback sockets with TX stamps", "%s", strerror(errno));
		return;
	}
	for (i = 0; i < 10; i++) {
		send(tx, b, sizeof(b), 0);
	}
	run.sock_fd = tx;
	emitter.txpend = 10;	/* stamps of no ping in flight: counted unmatched as they are read */
	for (i = 0; i < 4; i++) {
		emit_tx_after_send();
		got[i] = sess.c.tx_unmatched;
	}
	ok(got[0] == EMIT_TX_AFTER_SEND && got[1] == 2 * EMIT_TX_AFTER_SEND && got[2] == 10 && got[3] == 10,
	   "tx after send: ten stamps waiting are read four a send (4, 8, 10, 10)",
	   "%" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64, got[0], got[1], got[2], got[3]);
	send(tx, b, sizeof(b), 0);
	emitter.txpend = 0;
	emit_tx_after_send();
	ok(sess.c.tx_unmatched == 10, "tx after send: none pending, none read", "%" PRIu64, sess.c.tx_unmatched);
	emitter.txpend = 1;
	emit_tx_after_send();
	ok(sess.c.tx_unmatched == 11, "tx after send: one pending, read at once", "%" PRIu64, sess.c.tx_unmatched);
	close(rx);
	close(tx);
	run.sock_fd = -1;
	emitter.txpend = 0;
}

/*
 * Back-to-back without -t the client accounts a pong, and a batch of TX
 * stamps, after its next ping has gone (emit_later), EMIT_LATER_STEP a
 * step, oldest first: nothing is lost or counted twice, a slot is accounted
 * before it is reused, and a full list accounts at once.
 */
static void test_emit_later(void)
{
	uint8_t buf[PROTO_HDR_LEN + 64];
	uint64_t n0, n1;
	int i, n = EMIT_LATER + 20;

	guard_setup(true);
	opts.size = PROTO_HDR_LEN;
	for (i = 0; i < n; i++) {
		struct txn *x = late_ping((uint64_t)i, 1);

		x->deadline = UINT64_MAX;
		x->t[T1W] = 1000000 + (uint64_t)i * 100000;
	}
	/* not deferred: the pong's RTT is in at once */
	emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, 0, 0), 1005000, 0, false);
	ok(sess.h[M_RTT].n == 1, "later: without deferral a pong is accounted at once", "n=%" PRIu64, sess.h[M_RTT].n);
	emitter.defer = true;
	emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, 1, 0), 1105000, 0, false);
	n0 = sess.h[M_RTT].n;
	emit_later(EMIT_LATER_STEP);
	ok(n0 == 1 && sess.h[M_RTT].n == 2 && !emitter.nlater && !(run.win.slot[1].st & TF_LATER),
	   "later: deferred, the pong is accounted by emit_later, once", "before %" PRIu64 " after %" PRIu64, n0,
	   sess.h[M_RTT].n);
	emit_later(EMIT_LATER_STEP);
	emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, 2, 0), 1205000, 0, false);
	emit_later_before_reuse(&run.win.slot[3]);
	n0 = sess.h[M_RTT].n;
	emit_later_before_reuse(&run.win.slot[2]);
	ok(n0 == 2 && sess.h[M_RTT].n == 3 && !emitter.nlater,
	   "later: another slot's reuse leaves it waiting; its own slot's reuse accounts it first", "n=%" PRIu64,
	   sess.h[M_RTT].n);

	/* a TX stamp whose pong came first: listed once, accounted by a later step */
	run.win.slot[3].t[T1W] = 0;
	run.win.slot[3].st |= TF_TXPEND;
	run.win.slot[3].txkey = 3;
	emitter.keyseq[3] = 3;
	emitter.txpend = 1;
	emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, 3, 0), 1305000, 0, false);
	emit_on_tx(3, 1300000);
	n0 = sess.h[M_RTT].n;
	n1 = emitter.nlater;
	emit_later(EMIT_LATER_STEP);
	ok(n0 == 3 && n1 == 1 && sess.h[M_RTT].n == 4 && !emitter.txpend,
	   "later: a TX stamp's accounting waits for the next step, listed once with its pong's",
	   "before %" PRIu64 " listed %" PRIu64 " after %" PRIu64, n0, n1, sess.h[M_RTT].n);

	/* ten pongs: a step accounts the oldest EMIT_LATER_STEP, the next ones after */
	for (i = 4; i < 14; i++) {
		emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, (uint64_t)i, 0), 1005000 + (uint64_t)i * 100000, 0, false);
	}
	emit_later(EMIT_LATER_STEP);
	ok(sess.h[M_RTT].n == 4 + EMIT_LATER_STEP && emitter.nlater == 10 - EMIT_LATER_STEP &&
	   (run.win.slot[4].st & run.win.slot[4 + EMIT_LATER_STEP - 1].st & TF_LATER) == 0 &&
	   (run.win.slot[4 + EMIT_LATER_STEP].st & TF_LATER),
	   "later: a step accounts EMIT_LATER_STEP of them, the oldest", "n=%" PRIu64 " waiting %u", sess.h[M_RTT].n,
	   emitter.nlater);
	for (i = 14; i < n; i++) {
		emit_packet(buf, guard_msg(buf, PT_PONG, sess.id, (uint64_t)i, 0), 1005000 + (uint64_t)i * 100000, 0, false);
	}
	ok(emitter.nlater == EMIT_LATER && sess.h[M_RTT].n == (uint64_t)(4 + EMIT_LATER_STEP + (n - 14) - (EMIT_LATER - (10 - EMIT_LATER_STEP))),
	   "later: past a full list a pong is accounted at once", "waiting %u n=%" PRIu64, emitter.nlater, sess.h[M_RTT].n);
	emit_later_all();
	ok(sess.h[M_RTT].n == (uint64_t)n && sess.h[M_RTT].min == 5000 && sess.h[M_RTT].max == 5000 &&
	   sess.c.received == (uint64_t)n && !emitter.nlater,
	   "later: every pong accounted once, each its own RTT", "n=%" PRIu64 " min %" PRId64 " max %" PRId64,
	   sess.h[M_RTT].n, sess.h[M_RTT].min, sess.h[M_RTT].max);
	emitter.defer = false;
}

/*
 * The clock fits (offset to the peer, drift, app-to-wire) take each
 * window's best point, so they depend on the order of their points: they
 * follow the window's order (retirement, the log's rows, what --analyze
 * reads), not the order in which the last stamps arrived.  Accounted in
 * order or scrambled, retired in order: the same fits to the bit.
 */
static void fit_order_run(bool scramble, struct fit *off, struct fit *aw, int64_t *best)
{
	const uint64_t base = 1700000000000000000ULL;
	int chunk, i, order[200];

	guard_setup(true);
	srand(7);
	for (chunk = 0; chunk < 10; chunk++) {
		for (i = 0; i < 200; i++) {
			uint64_t seq = (uint64_t)(chunk * 200 + i);
			struct txn *x = &run.win.slot[seq & run.win.mask];

			memset(x, 0, sizeof(*x));
			x->seq = seq;
			x->st = TF_USED | TF_SENT | TF_RECEIVED;
			x->t[T1SW] = base + seq * 1000000;
			x->t[T1W] = x->t[T1SW] + 400 + (uint64_t)(rand() % 300);
			x->t[T2W] = x->t[T1W] + 5000 + (uint64_t)(rand() % 2000);
			x->t[T3W] = x->t[T2W] + 300 + (uint64_t)(rand() % 100);
			x->t[T4W] = x->t[T3W] + 5000 + (uint64_t)(rand() % 2000);
			x->t[T4SW] = x->t[T4W] + 700 + (uint64_t)(rand() % 300);
			order[i] = i;
		}
		for (i = 199; scramble && i > 0; i--) {
			/* an order of its own, so that the stamps are the same in both runs */
			int j = (int)(((uint64_t)(chunk * 7919 + i) * 2654435761u) % (uint64_t)(i + 1)), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (i = 0; i < 200; i++) {
			txn_account(&run.win.slot[(uint64_t)(chunk * 200 + order[i]) & run.win.mask]);
		}
		for (i = 0; i < 200; i++) {
			txn_retire(&run.win.slot[(uint64_t)(chunk * 200 + i) & run.win.mask]);
		}
	}
	*off = sess.offset;
	aw[0] = sess.app_wire[0];
	aw[1] = sess.app_wire[1];
	*best = sess.best_offset;
}

/*
 * The offset at the lowest-RTT exchange is that exchange's, wherever it
 * falls: the first fit window (a quarter second) counts like the others
 * (the model NIC's truth showed the first window's lowest lost).
 */
static void test_best_offset(void)
{
	struct txn x;
	int i;

	reset_globals();
	side_set(true);
	for (i = 0; i < 10; i++) {
		/* 10 exchanges 1 ms apart (one window), rtt 10 us but 4 us for the second, offset 100 + i */
		uint64_t t1 = 1000000000ULL + (uint64_t)i * 1000000, rtt = i == 1 ? 4000 : 10000;

		memset(&x, 0, sizeof(x));
		x.seq = (uint64_t)i;
		x.t[T1W] = t1;
		x.t[T2W] = t1 + rtt / 2 + 100 + (uint64_t)i;
		x.t[T3W] = x.t[T2W];
		x.t[T4W] = t1 + rtt;
		txn_fit(&x);
	}
	ok(sess.best_rtt == 4000 && sess.best_offset == 101, "best offset: the lowest-RTT exchange in the first window is kept",
	   "rtt %" PRId64 " offset %" PRId64, sess.best_rtt, sess.best_offset);
	reset_globals();
}

static void test_fit_order(void)
{
	struct fit o1, o2, a1[2], a2[2];
	int64_t b1, b2;

	fit_order_run(false, &o1, a1, &b1);
	fit_order_run(true, &o2, a2, &b2);
	ok(o1.seen == 2000 && o1.n >= 7 && a1[0].seen == 2000 && a1[1].seen == 2000,
	   "fits: 2000 exchanges offered, a point per 250 ms window", "seen %" PRIu64 " n %" PRIu64, o1.seen, o1.n);
	ok(!memcmp(&o1, &o2, sizeof(o1)) && b1 == b2, "fits: the offset fit and the lowest-RTT offset, whatever the order the stamps came in",
	   "n %" PRIu64 "/%" PRIu64 " best %" PRId64 "/%" PRId64, o1.n, o2.n, b1, b2);
	ok(!memcmp(a1, a2, sizeof(a1)), "fits: the app-to-wire fits likewise", "n %" PRIu64 "/%" PRIu64, a1[0].n, a2[0].n);
	ok(sess.h[M_RTT].n == 2000, "fits: and every RTT was added", "n=%" PRIu64, sess.h[M_RTT].n);
	/* a statistic's extremes: a tie goes to the earlier transaction, whichever came first */
	guard_setup(true);
	hist_add(&sess.h[M_RTT], 5000, 9);
	hist_add(&sess.h[M_RTT], 7000, 8);
	hist_add(&sess.h[M_RTT], 5000, 3);
	hist_add(&sess.h[M_RTT], 7000, 2);
	hist_add(&sess.h[M_RTT], 5000, 4);
	ok(sess.h[M_RTT].min_seq == 3 && sess.h[M_RTT].max_seq == 2, "hist: min and max ties name the earliest seq",
	   "min_seq %" PRIu64 " max_seq %" PRIu64, sess.h[M_RTT].min_seq, sess.h[M_RTT].max_seq);
	reset_globals();
}

/*
 * A client on lo whose NIC (the fake one) grants hardware stamps: lo
 * delivers none (ts[2] is always 0 there), its kernel stamps come as with a
 * real NIC.  peer answers the pings as a reflector with software stamps.
 */
static struct {
	uint8_t tx[PROTO_MAX_SIZE + 64], rx[PROTO_MAX_SIZE + 64];
	int peer;
	char *err;
	struct args a;	/* opts points into it */
} hc;

static int hc_client(const char *ts)
{
	struct sockaddr_in pa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(pa);
	char cmd[200], *out, *err;
	struct capture ce;
	int r;

	rx_stamps_live();
	hc.peer = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	bind(hc.peer, (struct sockaddr *)&pa, sizeof(pa));
	getsockname(hc.peer, (struct sockaddr *)&pa, &len);
	guard_setup(true);
	snprintf(cmd, sizeof(cmd), "-i lo -a 127.0.0.1 --port %u --timestamps %s --size 80 --count 1000",
		 ntohs(pa.sin_port), ts);
	r = parse_str(cmd, &hc.a, &out, &err);
	free(out);
	free(err);
	side_set(true);
	emitter.tx = hc.tx;
	emitter.rx = hc.rx;
	emitter.rxcap = opts.size + 1;
	classes.tx_size = opts.size;
	sess.log.cap = 0;
	sess.id = 0x2121;
	nic_full();
	kops.ioctl = fake_ioctl;
	memset(&fake_phc, 0, sizeof(fake_phc));
	phc_fake_start();
	hf_hists(true);
	cap_start(&ce, 2);
	r = r ? r : sock_open_emit() < 0 ? -1 : 0;
	hc.err = cap_stop(&ce);
	set_rcvtimeo(NSEC_PER_SEC);
	return r;
}

/* One transaction: the ping, its pong from the peer, the pong taken in, TX stamps read. */
static void hc_txn(uint64_t seq)
{
	uint8_t buf[128];
	struct sockaddr_in from;
	socklen_t fl = sizeof(from);
	struct proto_msg m;
	ssize_t n;

	emit_send(seq, mono_ns());
	emitter.next_seq = seq + 1;
	n = recvfrom(hc.peer, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);
	if (n < PROTO_HDR_LEN || proto_decode(buf, (size_t)n, &m)) {
		return;
	}
	m.type = PT_PONG;
	m.flags = 0;
	proto_encode(buf, &m);
	sendto(hc.peer, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
	emit_recv(0);
	emit_drain();
}

static void hc_done(void)
{
	hf_hists(false);
	free(hc.err);
	close(run.sock_fd);
	close(hc.peer);
	run.sock_fd = -1;
	kops_restore();
	memset(&emitter, 0, sizeof(emitter));
	memset(&sess, 0, sizeof(sess));
	reset_globals();
}

/* Transactions until the NIC is judged (or 5 s); how many it took. */
static uint64_t hc_until_judged(struct capture *ce)
{
	uint64_t seq = 0;

	uint64_t end = mono_ns() + 5 * NSEC_PER_SEC;

	cap_start(ce, 2);
	while (!run.hww.verdict && !sess.stop_reason && mono_ns() < end) {
		hc_txn(seq++);
	}
	return seq;
}

/*
 * --timestamps auto on a NIC that grants hardware stamps and delivers none:
 * it is judged within the first transactions, and the kernel's stamps are
 * the wire stamps of the whole run, those before included; the report,
 * JSON and log header then say software.
 */
static void test_hw_none_auto(void)
{
	struct capture ce;
	struct report rep;
	uint64_t n, i, miss = 0;
	char *err, *text = NULL, hdr[4096];
	size_t tl = 0;
	FILE *f;

	if (hc_client("auto")) {
		ok(false, "a client on lo with a NIC granting hardware stamps", "'%s'", hc.err);
		hc_done();
		return;
	}
	ok(run.ts.hw && run.hww.tx == 0, "lo with the fake NIC: hardware stamps granted", "hw=%d", run.ts.hw);
	n = hc_until_judged(&ce);
	err = cap_stop(&ce);
	ok(run.hww.verdict == HWW_NONE && !run.ts.hw && run.hww.fell_back && n >= HWW_TXNS && n <= 3 * HWW_TXNS,
	   "no NIC stamp: judged after the first transactions, kernel stamps since", "verdict=%d hw=%d n=%" PRIu64,
	   run.hww.verdict, run.ts.hw, n);
	ok(one_rant_line(err) && strstr(err, "lo delivered no hardware stamps") && strstr(err, "RX 0 of") &&
	   strstr(err, "kernel stamps"), "one line names the NIC, the missing stamps and the fall-back", "'%s'", err);
	free(err);
	ok(nic.last_s.tx_type == HWTSTAMP_TX_OFF && !run.ts.restore, "the NIC's config is put back at once",
	   "tx=%d", nic.last_s.tx_type);
	for (i = 0; i < 20; i++) {
		hc_txn(n + i);
	}
	for (i = 0; i < n + 20; i++) {
		const struct txn *x = &run.win.slot[i & run.win.mask];

		miss += !x->t[T1W] || !x->t[T4W] || x->t[T1K] || x->t[T4K];
	}
	ok(miss == 0 && sess.h[M_RTT].n == n + 20 && !sess.h[M_CLI_TX_NIC].n && !sess.h[M_CLI_RX_WAKE].n,
	   "every transaction, those before included, has kernel wire stamps and an rtt; no NIC split",
	   "miss=%" PRIu64 " rtt n=%" PRIu64 " of %" PRIu64 " split n=%" PRIu64, miss, sess.h[M_RTT].n, n + 20,
	   sess.h[M_CLI_TX_NIC].n);
	ok(strstr(run.ts.note, "software") && !run.ts.wire_off, "the note says software, no PHC offset taken out",
	   "'%s'", run.ts.note);
	f = open_memstream(&text, &tl);
	report_compute(&rep);
	session_report(f, &rep);
	json_report(f, &rep, 0);
	fclose(f);
	ok(text && strstr(text, "Timestamps: wire software (kernel)") && strstr(text, "Hardware stamps: lo delivered none") &&
	   strstr(text, "\"wire\": \"software\"") && strstr(text, "\"verdict\": \"none\", \"lacking\": \"both\", \"fell_back\": true"),
	   "report and JSON say software, and why", "%.2000s", text ? text : "");
	free(text);
	*log_csv_facts(hdr) = 0;
	ok(strstr(hdr, " wire=software "), "the csv log's facts say software", "'%.300s'", hdr);
	*log_header(hdr, true, run.side.stamps, run.side.nstamps) = 0;
	ok(!strstr(hdr, "_hw"), "the csv log's columns hold no NIC stamp", "'%.300s'", hdr);
	hc_done();
}

/* --timestamps hw on the same NIC: one line naming it and the missing stamps, the run stops. */
static void test_hw_none_hw(void)
{
	struct capture ce;
	uint64_t n;
	char *err;

	if (hc_client("hw")) {
		ok(false, "a client on lo with a NIC granting hardware stamps", "'%s'", hc.err);
		hc_done();
		return;
	}
	n = hc_until_judged(&ce);
	err = cap_stop(&ce);
	ok(run.hww.failed && sess.stop_reason == STOP_ERROR && n >= HWW_TXNS && n <= 3 * HWW_TXNS,
	   "--timestamps hw, no NIC stamp: the run stops after the first transactions", "failed=%d stop=%d n=%" PRIu64,
	   run.hww.failed, sess.stop_reason, n);
	ok(one_rant_line(err) && strstr(err, "--timestamps hw: lo delivered no hardware stamps") && strstr(err, "RX 0 of") &&
	   strstr(err, "TX 0 of") && strstr(err, "FAULTY"), "one line names the NIC and the missing stamps", "'%s'", err);
	free(err);
	hc_done();
}

/*
 * The reflector on lo, hardware stamps granted (as by the fake NIC), none
 * delivered: its session so far is re-stamped by the kernel's stamps, its
 * later pongs say software; with hw it stops with exit 1.
 */
static uint64_t hr_run(enum ts_mode mode, struct capture *ce, uint16_t *last_flags)
{
	static uint8_t rxb[PROTO_MAX_SIZE + 64];
	struct sockaddr_in srv = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t l = sizeof(srv);
	uint64_t seq = 0, end = mono_ns() + 5 * NSEC_PER_SEC;
	uint8_t buf[128];
	ssize_t n;

	rx_stamps_live();
	hf_reflector();
	opts.mode = MODE_REFLECT;
	opts.iface = "lo";
	opts.ts = mode;
	opts.size = 80;
	bind(run.sock_fd, (struct sockaddr *)&srv, sizeof(srv));
	getsockname(run.sock_fd, (struct sockaddr *)&srv, &l);
	refl.rx = rxb;
	refl.rxcap = sizeof(rxb);
	run.ts.hw = true;
	run.ts.ifindex = (int)if_nametoindex("lo");
	ts_keys_setup();
	ts_enable_socket(run.sock_fd);
	set_rcvtimeo(NSEC_PER_SEC);
	cap_start(ce, 2);
	while (!run.hww.verdict && mono_ns() < end) {
		struct proto_msg m = { .type = PT_PING, .session = 0x51, .seq = seq++, .idle_ms = 1000 };

		memset(buf, 0, sizeof(buf));
		proto_encode(buf, &m);
		sendto(hf.rx, buf, 80, 0, (struct sockaddr *)&srv, sizeof(srv));
		reflect_recv(0);
		n = recv(hf.rx, buf, sizeof(buf), 0);
		if (n > 0 && !proto_decode(buf, (size_t)n, &m)) {
			*last_flags = m.flags;
		}
	}
	return seq;
}

static void test_hw_none_reflect(void)
{
	struct sockaddr_in srv;
	socklen_t l = sizeof(srv);
	struct capture ce, co;
	struct proto_msg m = { .type = PT_PING, .session = 0x51, .idle_ms = 1000 };
	uint64_t n, i, miss = 0;
	uint16_t fl = 0;
	uint8_t buf[128] = { 0 };	/* 80 bytes sent, the header's 64 encoded */
	char *err;

	n = hr_run(TS_AUTO, &ce, &fl);
	err = cap_stop(&ce);
	ok(run.hww.verdict == HWW_NONE && run.hww.fell_back && !run.ts.hw && n >= HWW_TXNS && one_rant_line(err) &&
	   strstr(err, "lo delivered no hardware stamps"), "reflector, auto: judged, kernel stamps since, said in one line",
	   "verdict=%d n=%" PRIu64 " '%s'", run.hww.verdict, n, err);
	free(err);
	for (i = 0; i < 4096 && i < run.win.mask + 1; i++) {
		const struct txn *x = &run.win.slot[i];

		if (x->st & TF_USED) {
			miss += !x->t[T2W] || !x->t[T3W] || x->t[T2K] || x->t[T3K];
		}
	}
	ok(miss == 0 && sess.h[M_RESPONSE].n == n && !sess.h[M_SRV_RX_NIC].n && !refl.txpend,
	   "reflector: every pong so far has kernel T2 and T3, a response; no NIC split", "miss=%" PRIu64
	   " response n=%" PRIu64 " of %" PRIu64 " txpend=%" PRIu64, miss, sess.h[M_RESPONSE].n, n, refl.txpend);
	getsockname(run.sock_fd, (struct sockaddr *)&srv, &l);
	m.seq = n;
	proto_encode(buf, &m);
	sendto(hf.rx, buf, 80, 0, (struct sockaddr *)&srv, sizeof(srv));
	cap_start(&co, 1);
	reflect_recv(0);
	free(cap_stop(&co));
	fl = 0;
	hf_out(hf.rx, &fl);
	ok(!(fl & PF_SRV_HW) && !(fl & PF_KSTAMPS) && (fl & PF_T3W),
	   "reflector: the next pong says software and echoes a kernel T3", "flags=%#x", fl);
	run.ts.ifindex = 0;
	hf_done();

	n = hr_run(TS_HW, &ce, &fl);
	err = cap_stop(&ce);
	ok(run.hww.failed && refl.exit_code == EXIT_RUNTIME && sess.stop_reason == STOP_ERROR && one_rant_line(err) &&
	   strstr(err, "--timestamps hw: lo"), "reflector, hw: stops, exit 1, one line", "failed=%d exit=%d '%s'",
	   run.hww.failed, refl.exit_code, err);
	free(err);
	run.ts.ifindex = 0;
	hf_done();
}

/* A pong with NIC stamps and a PHC offset, as a reflector (or a liar) sends it; its length. */
static size_t peer_pong(uint8_t *buf, uint64_t seq, int64_t off, uint64_t t2w, uint64_t t3w)
{
	struct proto_msg m = { .type = PT_PONG, .session = sess.id, .seq = seq,
			       .flags = PF_SRV_HW | PF_T2W | PF_T2SW | PF_T3W | PF_PHC_OFF, .t2w = t2w,
			       .t2sw = STAMP_MAX - 1, .t3w = t3w,
			       .t3w_seq = seq, .phc_off = off, .phc_method = 1 };

	memset(buf, 0, opts.size);
	proto_encode(buf, &m);
	proto_kx_put(buf, opts.size, &m);
	return opts.size;
}

/*
 * Every number a peer sends is bounded before any arithmetic: a PHC offset
 * near INT64_MAX is refused and counted (the rest of the pong stands), one
 * at the bound with stamps at theirs is summed without overflow (the
 * sanitizer builds run this), and the statistics square any two int64
 * values' difference without overflow.
 */
static void test_peer_bounds(void)
{
	uint8_t buf[PROTO_HDR_LEN + 256];
	static const int64_t offs[] = { INT64_MAX - 5, INT64_MIN + 5, PEER_OFF_MAX, -PEER_OFF_MAX };
	static uint64_t hb[4];
	static int64_t ho[8];
	struct hist h;
	uint64_t i;

	guard_setup(true);
	opts.size = PROTO_HDR_LEN + KX_PHC_LEN + 64;
	run.ts.hw = true;
	hf_hists(true);
	for (i = 0; i < ARRAY_SIZE(offs) + 2; i++) {
		struct txn *x = &run.win.slot[i & run.win.mask];

		memset(x, 0, sizeof(*x));
		x->seq = i;
		x->st = TF_USED | TF_SENT;
		x->deadline = UINT64_MAX;
		x->t[T1W] = 1;
		emitter.next_seq = i + 1;
		emitter.outstanding++;
		sess.c.sent++;
		if (i < ARRAY_SIZE(offs)) {
			emit_packet(buf, peer_pong(buf, i, offs[i], 1, 1), 2, 0, false);
		} else {
			emit_packet(buf, peer_pong(buf, i, PEER_OFF_MAX - 1, 1, 1), 2, 0, false);
		}
		txn_account(x);
		ok(i < ARRAY_SIZE(offs) ? !run.ts.peer_off_on : run.ts.peer_off_on && run.ts.peer_off == PEER_OFF_MAX - 1,
		   "peer bounds: a PHC offset beyond +-PEER_OFF_MAX refused, one inside taken", "i=%" PRIu64 " on=%d",
		   i, run.ts.peer_off_on);
	}
	ok(sess.c.rejected[GR_IMPLAUSIBLE] == ARRAY_SIZE(offs) && sess.c.received == ARRAY_SIZE(offs) + 2,
	   "peer bounds: each refused offset counted as implausible, every round trip kept", "implausible=%" PRIu64
	   " received=%" PRIu64, sess.c.rejected[GR_IMPLAUSIBLE], sess.c.received);
	ok(sess.h[M_RTT].n == ARRAY_SIZE(offs) + 2 && sess.h[M_SRV_RX].n == 2 && sess.h[M_SRV_RX].max > 0,
	   "peer bounds: the refused pongs' server segments left out, the others summed", "rtt=%" PRIu64
	   " srv_rx=%" PRIu64, sess.h[M_RTT].n, sess.h[M_SRV_RX].n);
	{
		struct proto_msg f = { .type = PT_FIN_ACK, .session = sess.id, .seq = 6, .phc_method = 1,
				       .phc_off = INT64_MAX, .boot_id = 77 };
		uint64_t bad = sess.c.rejected[GR_IMPLAUSIBLE];

		emitter.fin_sent = true;
		memset(buf, 0, sizeof(buf));
		proto_encode(buf, &f);
		proto_kx_put(buf, fin_len(), &f);
		emit_packet(buf, fin_len(), 0, 0, false);
		ok(result.fin_acked && sess.c.rejected[GR_IMPLAUSIBLE] == bad + 1 && !result.srv_phc.method &&
		   result.srv_phc.boot_id == 77, "peer bounds: a FIN_ACK's PHC offset near INT64_MAX refused, its boot id kept",
		   "acked=%d method=%d", result.fin_acked, result.srv_phc.method);
	}
	hf_hists(false);

	hist_init(&h, 1000, 4000, hb, ho, ARRAY_SIZE(ho), NULL);
	hist_add(&h, INT64_MAX, 0);
	hist_add(&h, INT64_MIN, 1);
	hist_add(&h, INT64_MAX, 2);
	ok(h.n == 3 && h.min == INT64_MIN && h.max == INT64_MAX,
	   "peer bounds: INT64_MIN and INT64_MAX in one histogram, squared without overflow", "n=%" PRIu64, h.n);
	reset_globals();
}

/*
 * The idle hint outlasts the longest gap the client really leaves: with a
 * cadence per class, the fastest class's, not the classes' combined rate
 * (four classes every 4 s may all fall in one slot: 4 s of silence).
 */
static void test_idle_hint(void)
{
	int i;

	reset_globals();
	opts.interval_ns = NSEC_PER_SEC;	/* the combined cadence cls_setup computes */
	ok(emit_longest_gap() == NSEC_PER_SEC, "idle hint: one cadence: its interval", "%" PRIu64,
	   emit_longest_gap());
	classes.ncls = classes.nival = 4;
	for (i = 0; i < 4; i++) {
		classes.ival[i] = 4 * NSEC_PER_SEC;
	}
	ok(emit_longest_gap() == 4 * NSEC_PER_SEC, "idle hint: four classes every 4 s: 4 s, not the combined 1 s",
	   "%" PRIu64, emit_longest_gap());
	classes.ival[2] = 2 * NSEC_PER_SEC;
	ok(emit_longest_gap() == 2 * NSEC_PER_SEC, "idle hint: classes of 4 s and 2 s: the fastest's 2 s", "%" PRIu64,
	   emit_longest_gap());
	reset_globals();
}

/* The watch as a NIC leaves it: RX received and stamped, TX asked for and stamped. */
static void hww_set(uint64_t rx, uint64_t rx_hw, uint64_t tx, uint64_t tx_hw)
{
	run.hww = (struct hw_watch){ .rx = rx, .rx_hw = rx_hw, .tx = tx, .tx_hw = tx_hw };
}

/*
 * Judged per direction: stamps on send only (an RX filter that stamps PTP
 * only: igb's 82576, QEMU's igb) or on receive only (bnxt stamping PTP
 * sends only) give no sample, so they are none; a share skipped (igb's one
 * TX stamp at a time) is not.
 */
static void test_hw_some(void)
{
	struct capture ce;
	char *err;

	run_reset();
	cfg_defaults();
	opts.iface = "eth9";
	run.ts.hw = true;
	run.ts.rx_filter = HWTSTAMP_FILTER_ALL;
	hww_set(HWW_TXNS, HWW_TXNS, HWW_TXNS, HWW_TXNS * 9 / 10);
	ok(!hw_watch_none(false) && run.hww.verdict == HWW_DELIVERS && run.ts.hw,
	   "every RX stamp, 9 in 10 TX stamps (one at a time): the NIC delivers", "verdict=%d", run.hww.verdict);

	run.ts.rx_filter = HWTSTAMP_FILTER_PTP_V2_EVENT;
	hww_set(HWW_TXNS, 0, HWW_TXNS, HWW_TXNS);
	cap_start(&ce, 2);
	ok(hw_watch_none(false) && run.hww.verdict == HWW_NONE && run.hww.lacking == HWW_RX,
	   "TX stamps only (RX filter PTP): none on receive, judged at once", "verdict=%d lacking=%d",
	   run.hww.verdict, run.hww.lacking);
	err = cap_stop(&ce);
	ok(one_rant_line(err) && strstr(err, "eth9 delivered no RX hardware stamps: RX 0 of 64, TX 64 of 64") &&
	   strstr(err, "rx filter PTP_V2_EVENT") && strstr(err, "kernel stamps for the whole run"),
	   "auto: one line names the direction, the counts and the filter, and the fall-back", "'%s'", err);
	free(err);

	opts.ts = TS_HW;
	hww_set(HWW_TXNS, 0, HWW_TXNS, HWW_TXNS);
	cap_start(&ce, 2);
	ok(hw_watch_none(false) && run.hww.failed, "hw, TX stamps only: the run fails", "failed=%d", run.hww.failed);
	err = cap_stop(&ce);
	ok(one_rant_line(err) && strstr(err, "--timestamps hw: eth9 delivered no RX hardware stamps") &&
	   strstr(err, "PTP_V2_EVENT") && strstr(err, "--ptp-probe") && !strstr(err, "FAULTY"),
	   "hw: one line names the missing RX stamps, the filter and --ptp-probe", "'%s'", err);
	free(err);

	run.ts.rx_filter = HWTSTAMP_FILTER_PTP_V2_L2_EVENT;
	hww_set(HWW_TXNS, 0, HWW_TXNS, HWW_TXNS);
	cap_start(&ce, 2);
	hw_watch_none(false);
	err = cap_stop(&ce);
	ok(one_rant_line(err) && strstr(err, "PTP_V2_L2_EVENT") && !strstr(err, "--ptp-probe"),
	   "hw, a layer-2 PTP filter: --ptp-probe (UDP) not offered", "'%s'", err);
	free(err);

	run.ts.rx_filter = HWTSTAMP_FILTER_ALL;
	hww_set(HWW_TXNS, HWW_TXNS, HWW_TXNS, 0);
	cap_start(&ce, 2);
	ok(hw_watch_none(true) && run.hww.lacking == HWW_TX, "RX stamps only: none on send", "lacking=%d",
	   run.hww.lacking);
	err = cap_stop(&ce);
	ok(one_rant_line(err) && strstr(err, "no TX hardware stamps") && strstr(err, "--ptp-probe"),
	   "hw, RX stamps only: the line says TX and offers --ptp-probe", "'%s'", err);
	free(err);

	/* hw: a few TX stamps (one at a time, back-to-back) are samples, not none; auto falls back */
	hww_set(3 * HWW_TXNS, 3 * HWW_TXNS, 3 * HWW_TXNS, 15);
	ok(!hw_watch_none(true) && run.hww.verdict == HWW_DELIVERS && !run.hww.failed,
	   "hw, 15 TX stamps of 192 (one in flight): delivers, the run goes on", "verdict=%d failed=%d",
	   run.hww.verdict, run.hww.failed);
	opts.ts = TS_AUTO;
	hww_set(3 * HWW_TXNS, 3 * HWW_TXNS, 3 * HWW_TXNS, 15);
	cap_start(&ce, 2);
	ok(hw_watch_none(true) && run.hww.lacking == HWW_TX && !run.hww.failed,
	   "auto, 15 TX stamps of 192: fewer than one in ten, none on send", "lacking=%d failed=%d",
	   run.hww.lacking, run.hww.failed);
	err = cap_stop(&ce);
	ok(one_rant_line(err) && strstr(err, "kernel stamps for the whole run"),
	   "auto, 15 TX stamps of 192: one line, the kernel's stamps for the run", "'%s'", err);
	free(err);
	hww_set(10, 1, 10, 1);
	ok(!hw_watch_none(true) && !run.hww.verdict, "a short run with 1 stamp in 10 each way (the share): not none",
	   "verdict=%d", run.hww.verdict);
	hww_set(10, 10, 10, 0);
	cap_start(&ce, 2);
	ok(!hw_watch_none(false) && !run.hww.verdict, "too few datagrams to judge before the end: pending",
	   "verdict=%d", run.hww.verdict);
	ok(hw_watch_none(true) && run.hww.verdict == HWW_NONE && run.hww.lacking == HWW_TX,
	   "the same at its end: none on send", "verdict=%d", run.hww.verdict);
	free(cap_stop(&ce));
	reset_globals();
}

/* Answers past the warm-up and no sample: one line, and the run cannot exit 0. */
static void test_no_sample(void)
{
	struct capture ce;
	char *err;

	run_reset();
	cfg_defaults();
	side_set(true);
	sess.c.received = 10;
	sess.c.warmup = 10;
	ok(!no_sample_say(), "only warm-up answers: no sample expected", "%s", "");
	sess.c.received = 25;
	cap_start(&ce, 2);
	ok(no_sample_say(), "15 pongs past the warm-up, no rtt sample: said", "%s", "");
	err = cap_stop(&ce);
	ok(one_rant_line(err) && strstr(err, "15 pongs received after the warm-up and not one rtt sample"),
	   "one line counts the pongs and names the metric", "'%s'", err);
	free(err);
	sess.h[run.side.primary].n = 1;
	ok(!no_sample_say(), "one sample: nothing said", "%s", "");
	sess.h[run.side.primary].n = 0;
	side_set(false);
	cap_start(&ce, 2);
	ok(no_sample_say(), "the reflector: pings past the warm-up, no response sample: said", "%s", "");
	err = cap_stop(&ce);
	ok(one_rant_line(err) && strstr(err, "15 pings received after the warm-up and not one response sample"),
	   "the reflector's line counts pings and names response", "'%s'", err);
	free(err);
	reset_globals();
}

/* A PHC that does not advance is named as stopped, not as undisciplined. */
static void test_phc_stopped(void)
{
	char w[400], *text = NULL;
	size_t tl = 0;
	FILE *f;

	reset_globals();
	run.phc.index = 0;
	run.phc.n = 3;
	run.phc.method = PHC_EXTENDED;
	run.phc.first_at = 1000000000ULL;
	run.phc.last_at = 3000000000ULL;
	run.phc.first_off = 500;
	run.phc.last_off = 500 - 2000000000LL;	/* 2 s later the PHC reads the same */
	ok(phc_warning(w, sizeof(w)) && strstr(w, "/dev/ptp0 is stopped") && !strstr(w, "phc2sys"),
	   "a PHC that did not move in 2 s: stopped, no phc2sys advice", "'%s'", w);
	f = open_memstream(&text, &tl);
	json_hw(f, &(struct report){ .ow_why = "" });
	fclose(f);
	ok(text && strstr(text, "\"stopped\": true") && strstr(text, "\"disciplined\": false"), "JSON phc.stopped true",
	   "%.400s", text ? text : "");
	free(text);
	run.phc.last_off = 500 + 15;	/* ran, and well disciplined */
	ok(!phc_warning(w, sizeof(w)), "a PHC that moved with CLOCK_REALTIME: no warning", "'%s'", w);
	run.phc.last_off = 500 - 1990000000LL;	/* moved 10 ms in 2 s: 0.5 %, as good as stopped */
	ok(phc_warning(w, sizeof(w)) && strstr(w, "stopped"), "moved 0.5 % of the time: stopped", "'%s'", w);
	run.phc.last_off = 500 - 1000000000LL;	/* half speed: running, badly */
	ok(phc_warning(w, sizeof(w)) && !strstr(w, "stopped") && strstr(w, "phc2sys"),
	   "half speed: running but not disciplined", "'%s'", w);
	reset_globals();

	/*
	 * Real readings, each method: the time between them is the readings'
	 * own (2 s apart here), not when this process got to look at the
	 * clock after each (back to back here; a stall after the last one --
	 * a vCPU its host descheduled -- once read a PHC that stands still
	 * as moving 2.4 % of the time)
	 */
	for (int k = 0; k < 3; k++) {
		int64_t moved = 0;
		uint64_t span = 0;
		bool st;

		memset(&fake_phc, 0, sizeof(fake_phc));
		fake_phc.precise_err = k > 0 ? -EOPNOTSUPP : 0;
		fake_phc.extended_err = k > 1 ? -EOPNOTSUPP : 0;
		fake_phc.still = true;
		fake_phc.off = -5000;
		phc_fake_start();
		phc_start(0);
		fake_phc.sys_at = 2 * (int64_t)NSEC_PER_SEC;
		phc_end();
		st = phc_stopped(&moved, &span);
		ok(run.phc.n == 2 && st && moved == 0 && span == 2 * NSEC_PER_SEC,
		   k == 0 ? "a PHC standing still, PRECISE readings 2 s apart by their own clock: stopped, moved 0" :
		   k == 1 ? "... EXTENDED readings: the same" : "... PTP_SYS_OFFSET readings: the same",
		   "n %" PRIu64 " stopped %d moved %" PRId64 " span %" PRIu64, run.phc.n, st, moved, span);
		kops_restore();
	}
	reset_globals();
}

/* A file in the fake sysfs tree under dir. */
static void sysfs_put(const char *dir, const char *dev, const char *file, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, dev);
	mkdir(path, 0700);
	snprintf(path, sizeof(path), "%s/%s/bonding", dir, dev);
	if (!strncmp(file, "bonding/", 8)) {
		mkdir(path, 0700);
	}
	snprintf(path, sizeof(path), "%s/%s/%s", dir, dev, file);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A received NIC stamp whose SCM_TIMESTAMPING_PKTINFO names IFINDEX, parsed into c. */
static void pktinfo_stamp(struct ts_cmsg *c, uint32_t ifindex)
{
	struct scm_timestamping st = mk_scm(1700000000, 5, 1700000001, 7);
	struct scm_ts_pktinfo pi = { .if_index = ifindex, .pkt_length = 64 };
	struct cbuf b;

	cb_init(&b);
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING, &st, sizeof(st), 0);
	cb_add(&b, SOL_SOCKET, SCM_TIMESTAMPING_PKTINFO, &pi, sizeof(pi), 0);
	ts_parse(&b.msg, c);
}

/*
 * VLAN, macvlan and bond: the stamps of -i's packets are its NIC's, and
 * SCM_TIMESTAMPING_PKTINFO names that NIC (0 when the kernel cannot tell).
 * A fake /sys/class/net (names no host has): ut0 (2) under ut0.100 (5) and
 * utmv0 (6), utbond0 (7) with active slave ut1 (3) under utbond0.200 (9),
 * utmvx (11) whose lower device is in another namespace.
 */
static void test_pktinfo_lower(void)
{
	static const struct { const char *dev, *ifindex, *iflink, *lower; } dev[] = {
		{ "ut0", "2\n", "2\n", NULL }, { "ut1", "3\n", "3\n", NULL },
		{ "ut0.100", "5\n", "2\n", "lower_ut0" }, { "utmv0", "6\n", "2\n", "lower_ut0" },
		{ "utbond0", "7\n", "7\n", NULL }, { "ututbond0.200", "9\n", "7\n", "lower_utbond0" },
		{ "utmvx", "11\n", "4\n", NULL },
	};
	char dir[128], nic[IFNAMSIZ] = "", cmd[300];
	struct ts_cmsg c;
	size_t i;
	int r;

	reset_globals();
	tmp_path(dir, sizeof(dir), "sysfs");
	mkdir(dir, 0700);
	for (i = 0; i < ARRAY_SIZE(dev); i++) {
		sysfs_put(dir, dev[i].dev, "ifindex", dev[i].ifindex);
		sysfs_put(dir, dev[i].dev, "iflink", dev[i].iflink);
		if (dev[i].lower) {
			sysfs_put(dir, dev[i].dev, dev[i].lower, "");
		}
	}
	sysfs_put(dir, "utbond0", "bonding/active_slave", "ut1\n");
	kops.sysfs_net = dir;
	r = ts_real_nic("ut0.100", nic, sizeof(nic));
	ok(r == 2 && !strcmp(nic, "ut0"), "VLAN ut0.100: its stamps are ut0's (ifindex 2)", "r=%d nic=%s", r, nic);
	ok(ts_real_nic("utmv0", nic, sizeof(nic)) == 2, "macvlan utmv0 on ut0: ut0's", "-");
	ok(ts_real_nic("ut0", nic, sizeof(nic)) == 2, "ut0 itself: its own", "-");
	r = ts_real_nic("utbond0", nic, sizeof(nic));
	ok(r == 3 && !strcmp(nic, "ut1"), "utbond0: its active slave ut1's (3)", "r=%d nic=%s", r, nic);
	ok(ts_real_nic("ututbond0.200", nic, sizeof(nic)) == 3, "VLAN over utbond0: the active slave's", "-");
	ok(ts_real_nic("utmvx", nic, sizeof(nic)) == 0, "lower device in another namespace: cannot tell (0)", "-");
	sysfs_put(dir, "utbond0", "bonding/active_slave", "\n");
	ok(ts_real_nic("utbond0", nic, sizeof(nic)) == 0, "a bond without an active slave: cannot tell", "-");
	ok(ts_real_nic("nosuch", nic, sizeof(nic)) == 0, "no such device: cannot tell", "-");
	kops_restore();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {
		printf("# could not remove %s\n", dir);
	}

	/* stamps of ut0.100's pings: PKTINFO says ut0 (2), or 0 when unknown */
	run.ts.hw = true;
	run.ts.ifindex = 2;
	run.ts_foreign = 0;
	pktinfo_stamp(&c, 2);
	ok(ts_wire(&c) == 1700000001000000007ULL && !run.ts_foreign, "PKTINFO names the NIC under the VLAN: used",
	   "foreign=%" PRIu64, run.ts_foreign);
	pktinfo_stamp(&c, 0);
	ok(ts_wire(&c) == 1700000001000000007ULL && !run.ts_foreign, "PKTINFO ifindex 0 (the kernel cannot tell): used",
	   "foreign=%" PRIu64, run.ts_foreign);
	pktinfo_stamp(&c, 3);
	ok(ts_wire(&c) == 0 && run.ts_foreign == 1, "another NIC (a bond's other leg after failover): counted, not used",
	   "foreign=%" PRIu64, run.ts_foreign);
	reset_globals();
}

/*
 * A bond refuses SIOCSHWTSTAMP without HWTSTAMP_FLAG_BONDED_PHC_INDEX and
 * shows the flag in its SIOCGHWTSTAMP answer; a NIC driver refuses the flag.
 */
static void test_bond(void)
{
	char *err;
	int r;

	nic_full();
	nic.bond = HWTSTAMP_FLAG_BONDED_PHC_INDEX;
	r = hw_setup("bond0", TS_AUTO, &err);
	ok(r == 0 && run.ts.hw && run.ts.bonded && (nic.last_s.flags & HWTSTAMP_FLAG_BONDED_PHC_INDEX) && nic.n_s == 1,
	   "bond: hardware stamps granted, the flag asked with the config", "r=%d hw=%d n_s=%d flags=%d err='%s'", r,
	   run.ts.hw, nic.n_s, nic.last_s.flags, err);
	free(err);
	nic.n_s = 0;
	ts_restore(100);
	ok(nic.n_s == 1 && (nic.last_s.flags & HWTSTAMP_FLAG_BONDED_PHC_INDEX) && nic.last_s.tx_type == HWTSTAMP_TX_OFF,
	   "bond: the config goes back with the flag", "n_s=%d flags=%d", nic.n_s, nic.last_s.flags);
	/* a bond whose SIOCGHWTSTAMP does not show the flag: refused without it, asked again with it */
	nic_full();
	nic.bond = HWTSTAMP_FLAG_BONDED_PHC_INDEX;
	nic.g_err = -EOPNOTSUPP;
	r = hw_setup("bond0", TS_HW, &err);
	ok(r == 0 && run.ts.hw && run.ts.bonded && nic.n_s == 2 && (nic.last_s.flags & HWTSTAMP_FLAG_BONDED_PHC_INDEX),
	   "bond: EOPNOTSUPP without the flag, granted with it", "r=%d n_s=%d err='%s'", r, nic.n_s, err);
	free(err);
	/* a NIC: never the flag */
	nic_full();
	r = hw_setup("eth0", TS_HW, &err);
	ok(r == 0 && run.ts.hw && !run.ts.bonded && !nic.last_s.flags, "a NIC: no flag (its driver would refuse it)",
	   "r=%d flags=%d", r, nic.last_s.flags);
	free(err);
	reset_globals();
}

/* bond_watch's ioctls: the slaves' own by name (a NIC: no flag), the bond's to the fake NIC */
static struct {
	int n;
	char name[4][IFNAMSIZ];
	struct hwtstamp_config cfg[4];
} bw;

static int fake_ioctl_bond(int fd, unsigned long req, void *arg)
{
	struct ifreq *ifr = arg;

	if (req == SIOCSHWTSTAMP && bw.n < 4) {
		snprintf(bw.name[bw.n], IFNAMSIZ, "%s", ifr->ifr_name);
		bw.cfg[bw.n++] = *(struct hwtstamp_config *)ifr->ifr_data;
	}
	if (strcmp(ifr->ifr_name, "utbond0")) {
		return req == SIOCSHWTSTAMP && !((struct hwtstamp_config *)ifr->ifr_data)->flags ? 0 : -EINVAL;
	}
	return fake_ioctl(fd, req, arg);
}

/*
 * A bond's failover mid-run (bond_watch, the status thread's): nothing while
 * the active slave stays; when it changes, the old slave's config put back
 * by its own name without the bond's flag, the new one's saved and set
 * through the bond with it, the new slave's PHC read and its ifindex the
 * one stamps are taken from (the report's side: tests/vm/guest-model.sh's
 * model_bond, on the model NIC).  A fake
 * /sys/class/net: utbond0 (7), slaves ut1 (3) and ut2 (4).
 */
static void test_bond_failover(void)
{
	char dir[128], cmd[300], *err;
	struct capture ce;
	int r;

	reset_globals();
	tmp_path(dir, sizeof(dir), "sysfs");
	mkdir(dir, 0700);
	sysfs_put(dir, "utbond0", "ifindex", "7\n");
	sysfs_put(dir, "utbond0", "iflink", "7\n");
	sysfs_put(dir, "ut1", "ifindex", "3\n");
	sysfs_put(dir, "ut1", "iflink", "3\n");
	sysfs_put(dir, "ut2", "ifindex", "4\n");
	sysfs_put(dir, "ut2", "iflink", "4\n");
	sysfs_put(dir, "utbond0", "bonding/active_slave", "ut1\n");
	kops.sysfs_net = dir;
	nic_full();
	nic.bond = HWTSTAMP_FLAG_BONDED_PHC_INDEX;
	r = hw_setup("utbond0", TS_HW, &err);
	ok(r == 0 && run.ts.bonded, "bond: set up", "r=%d err='%s'", r, err);
	free(err);
	opts.iface = "utbond0";
	run.ts.ifindex = ts_real_nic("utbond0", run.ts.nic, sizeof(run.ts.nic));
	phc_fake_start();
	memset(&fake_phc, 0, sizeof(fake_phc));
	kops.ioctl = fake_ioctl_bond;
	memset(&bw, 0, sizeof(bw));
	bond_watch();
	ok(bw.n == 0 && !run.ts.bond_switches && run.ts.ifindex == 3, "bond: the same active slave: nothing done",
	   "n=%d", bw.n);
	/* the failover: ut2 active, its stamping off (what SIOCGHWTSTAMP through the bond now says) */
	sysfs_put(dir, "utbond0", "bonding/active_slave", "ut2\n");
	nic.g_cfg.tx_type = HWTSTAMP_TX_OFF;
	nic.g_cfg.rx_filter = HWTSTAMP_FILTER_NONE;
	nic.info.phc_index = 5;
	cap_start(&ce, 2);
	bond_watch();
	err = cap_stop(&ce);
	ok(bw.n == 2 && !strcmp(bw.name[0], "ut1") && !bw.cfg[0].flags && bw.cfg[0].tx_type == HWTSTAMP_TX_OFF &&
	   bw.cfg[0].rx_filter == HWTSTAMP_FILTER_NONE,
	   "bond: the old slave's config put back by its name, without the bond's flag", "n=%d name=%s flags=%d tx=%d",
	   bw.n, bw.name[0], bw.cfg[0].flags, bw.cfg[0].tx_type);
	ok(bw.n == 2 && !strcmp(bw.name[1], "utbond0") && (bw.cfg[1].flags & HWTSTAMP_FLAG_BONDED_PHC_INDEX) &&
	   bw.cfg[1].tx_type == HWTSTAMP_TX_ON && bw.cfg[1].rx_filter == HWTSTAMP_FILTER_ALL,
	   "bond: the new slave's stamping set through the bond, with the flag", "name=%s flags=%d tx=%d rx=%d",
	   bw.name[1], bw.cfg[1].flags, bw.cfg[1].tx_type, bw.cfg[1].rx_filter);
	ok(run.ts.restore && run.ts.saved.tx_type == HWTSTAMP_TX_OFF && !strcmp(run.ts.saved_ifr.ifr_name, "utbond0"),
	   "bond: what goes back at exit is the new slave's own config, through the bond", "restore=%d tx=%d",
	   run.ts.restore, run.ts.saved.tx_type);
	ok(run.ts.ifindex == 4 && !strcmp(run.ts.nic, "ut2") && !strcmp(run.ts.nic0, "ut1") && run.ts.bond_switches == 1 &&
	   run.ts.phc_index == 5 && run.phc.index == 5 && fake_phc.n_open == 1,
	   "bond: ut2's stamps taken (ifindex 4), its PHC /dev/ptp5 read", "ifindex=%d nic=%s phc=%d/%d opens=%d",
	   run.ts.ifindex, run.ts.nic, run.ts.phc_index, run.phc.index, fake_phc.n_open);
	ok(err && strstr(err, "utbond0's active slave changed from ut1 to ut2 (PHC /dev/ptp5)"), "bond: one line says so",
	   "'%s'", err);
	free(err);
	memset(&bw, 0, sizeof(bw));
	bond_watch();
	ok(bw.n == 0 && run.ts.bond_switches == 1, "bond: once only", "n=%d", bw.n);
	phc_end();
	kops_restore();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {
		printf("# could not remove %s\n", dir);
	}
	reset_globals();
}

/* The child's SIOCSHWTSTAMP calls, told through a pipe (the fake NIC's memory is the child's). */
static int restore_pipe = -1;

static int fake_ioctl_told(int fd, unsigned long req, void *arg)
{
	int r = fake_ioctl(fd, req, arg);

	if (req == SIOCSHWTSTAMP && restore_pipe >= 0) {
		const struct hwtstamp_config *hc = (const void *)((struct ifreq *)arg)->ifr_data;
		char line[32];
		int n = snprintf(line, sizeof(line), "S %d %d\n", hc->tx_type, hc->rx_filter);

		if (write(restore_pipe, line, (size_t)n) < 0) {
			r = -EIO;
		}
	}
	return r;
}

/*
 * A child with the device configured by rant gets SIG; what it put back, and
 * how it ended.  hup: SIGHUP's disposition rant starts with (SIG_IGN: under
 * nohup; set either way, so the test does not depend on how it was started).
 */
static int restore_child(int sig, void (*hup)(int), char *told, size_t len, int *status)
{
	int p[2];
	pid_t pid;
	ssize_t n, got = 0;

	if (pipe(p) < 0) {
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		char *err;
		struct rlimit no_core = { 0, 0 };

		close(p[0]);
		setrlimit(RLIMIT_CORE, &no_core);	/* SIGQUIT, SIGSEGV: no core file */
		nic_full();
		if (hw_setup("eth0", TS_AUTO, &err) < 0 || !run.ts.restore) {
			_exit(9);
		}
		free(err);	/* valgrind checks the child's leaks too */
		kops.ioctl = fake_ioctl_told;
		restore_pipe = p[1];
		run.sock_fd = 100;
		signal(SIGHUP, hup);
		signals_setup();
		raise(sig);
		_exit(run.stop_signal ? 0 : 8);	/* a stop signal: the run ends normally */
	}
	close(p[1]);
	while (got < (ssize_t)len - 1 && (n = read(p[0], told + got, len - 1 - (size_t)got)) > 0) {
		got += n;
	}
	told[got] = 0;
	close(p[0]);
	waitpid(pid, status, 0);
	return 0;
}

/*
 * The device's config goes back on every way out: SIGHUP ends the run as
 * SIGTERM does, SIGQUIT and a fault put it back before their default
 * action; a one-step TX type a ptp4l set is kept; a failed restore is said.
 */
static void test_restore(void)
{
	char told[128], *err;
	struct capture ce;
	int st = 0, r;

	reset_globals();
	r = restore_child(SIGHUP, SIG_DFL, told, sizeof(told), &st);
	ok(r == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "SIGHUP ends the run as SIGTERM does (its report, its restore)",
	   "status %#x", st);
	r = restore_child(SIGHUP, SIG_IGN, told, sizeof(told), &st);
	ok(r == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 8 && !*told,
	   "under nohup (SIGHUP ignored) a hang-up leaves the run going, nothing put back by it", "status %#x told '%s'", st, told);
	r = restore_child(SIGQUIT, SIG_DFL, told, sizeof(told), &st);
	ok(r == 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGQUIT && !strcmp(told, "S 0 0\n"),
	   "SIGQUIT: the config found (TX off, filter NONE) put back, then SIGQUIT's own end", "status %#x told '%s'",
	   st, told);
	if (!RANT_ASAN) {
		r = restore_child(SIGSEGV, SIG_DFL, told, sizeof(told), &st);
		ok(r == 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV && !strcmp(told, "S 0 0\n"),
		   "a fault (SIGSEGV): the config put back first", "status %#x told '%s'", st, told);
		r = restore_child(SIGBUS, SIG_DFL, told, sizeof(told), &st);
		ok(r == 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGBUS && !strcmp(told, "S 0 0\n"),
		   "SIGBUS: the config put back first", "status %#x told '%s'", st, told);
	}
	signal(SIGHUP, SIG_DFL);

	/* a ptp4l's one-step TX type is kept (ptp4l twoStepFlag 0) */
	nic_full();
	nic.g_cfg.tx_type = HWTSTAMP_TX_ONESTEP_SYNC;
	nic.g_cfg.rx_filter = HWTSTAMP_FILTER_PTP_V2_L2_EVENT;
	nic.info.tx_types |= BIT(HWTSTAMP_TX_ONESTEP_SYNC);
	r = hw_setup("eth0", TS_HW, &err);
	ok(r == 0 && run.ts.hw && nic.last_s.tx_type == HWTSTAMP_TX_ONESTEP_SYNC && nic.last_s.rx_filter == HWTSTAMP_FILTER_ALL &&
	   strstr(run.ts.note, "one-step"), "a one-step TX type found: kept, filter ALL asked", "r=%d tx=%d note='%s'", r,
	   nic.last_s.tx_type, run.ts.note);
	free(err);
	nic_full();
	nic.g_cfg.tx_type = HWTSTAMP_TX_ONESTEP_SYNC;
	nic.g_cfg.rx_filter = HWTSTAMP_FILTER_ALL;
	r = hw_setup("eth0", TS_HW, &err);
	ok(r == 0 && run.ts.hw && nic.n_s == 0 && !run.ts.restore, "one-step and ALL already: nothing changed",
	   "n_s=%d", nic.n_s);
	free(err);

	/* a restore the driver refuses is said, naming the device and what it was */
	nic_full();
	r = hw_setup("eth0", TS_AUTO, &err);
	free(err);
	nic.s_err = -EBUSY;
	cap_start(&ce, 2);
	ts_restore_say(100);
	err = cap_stop(&ce);
	ok(r == 0 && one_rant_line(err) && strstr(err, "eth0") && strstr(err, "failed") && strstr(err, "busy") &&
	   run.ts.restore_err == -EBUSY, "a refused restore: one line naming the device and the error", "'%s'", err);
	free(err);
	reset_globals();
}

/* A client pong of seq (104 bytes): the reflector's stamps, and its PHC block if off_method. */
static void po_pong(uint8_t *buf, uint64_t seq, const uint64_t *t, int64_t off, uint8_t off_method)
{
	struct proto_msg p = { .type = PT_PONG, .session = sess.id, .seq = seq,
			       .flags = (uint16_t)(PF_SRV_HW | PF_T2W | PF_T2SW | PF_T3SW |
						   (off_method ? PF_PHC_OFF : 0)),
			       .t2w = t[T2W], .t2sw = t[T2SW], .t3sw = t[T3SW], .t2k = t[T2K],
			       .phc_off = off, .phc_method = off_method };

	memset(buf, 0, 128);
	proto_encode(buf, &p);
	proto_kx_put(buf, 104, &p);
}

/*
 * The reflector's PHC offset in its segments as the client shows them: its
 * pongs of 104 bytes carry it (and the client takes it out from the first
 * on); without them the client marks those rows, and its csv log keeps the
 * FIN_ACK's reading for --analyze to take out.
 */
static void test_peer_off(void)
{
	const int64_t off = 37000000000LL + 250;
	const uint64_t B = 1700000000000000000ULL;
	uint64_t t[NSTAMP] = { 0 };
	uint8_t buf[128];
	uint16_t fl = 0;
	struct proto_msg m = { 0 };
	char hdr[4096], *text = NULL;
	size_t tl = 0;
	struct alog L;
	struct report rep;
	ssize_t n;
	int64_t v = 0;
	FILE *f;
	int i;

	/* the reflector: a 104-byte ping's pong carries the offset it takes out of its own segments */
	hf_reflector();
	run.ts.hw = true;
	run.ts.wire_off = off;
	run.phc.method = PHC_EXTENDED;
	opts.size = 104;
	{
		struct proto_msg pm = { .type = PT_PING, .session = 0x61, .seq = 0, .idle_ms = 1000 };
		struct capture c;

		memset(buf, 0, sizeof(buf));
		proto_encode(buf, &pm);
		cap_start(&c, 1);
		reflect_packet(buf, 104, B, 0, false, (struct sockaddr *)&hf.cl, sizeof(hf.cl));
		free(cap_stop(&c));
	}
	n = recv(hf.rx, buf, sizeof(buf), MSG_DONTWAIT);
	ok(n == 104 && !proto_decode(buf, 104, &m) && m.type == PT_PONG && m.phc_method == PHC_EXTENDED &&
	   m.phc_off == off, "a 104-byte pong carries the reflector's PHC offset", "n=%zd method=%d off=%" PRId64, n,
	   m.phc_method, m.phc_off);
	(void)fl;
	run.phc.method = PHC_NONE;
	hf_done();

	/* with the T3 history: it starts after the 40 bytes of a pong that has the PHC part, else after 16 */
	for (i = 0; i < 2; i++) {
		struct proto_msg p = { .type = PT_PONG, .session = 1, .seq = 5, .t2k = B + 1,
				       .flags = (uint16_t)(PF_SRV_HW | (i ? 0 : PF_PHC_OFF)),
				       .phc_off = off, .phc_method = PHC_EXTENDED, .nhist = 2 };
		uint8_t pb[200] = { 0 };

		p.hist[0].seq = 3;
		p.hist[0].t3w = B + 30;
		p.hist[1].seq = 2;
		p.hist[1].t3w = B + 20;
		proto_encode(pb, &p);
		proto_kx_put(pb, sizeof(pb), &p);
		proto_hist_put(pb, sizeof(pb), &p);
		memset(&m, 0, sizeof(m));
		ok(!proto_decode(pb, sizeof(pb), &m) && m.nhist == 2 && m.hist[1].t3w == B + 20 && m.t2k == B + 1 &&
		   (i ? !m.phc_method : m.phc_off == off) && pb[PROTO_HDR_LEN + (i ? KX_LEN : KX_PHC_LEN)] == 2,
		   i ? "a pong without the PHC part: the T3 history right after the 16 bytes" :
		       "a pong with the PHC part (PF_PHC_OFF): the offset, and the T3 history after its 40 bytes",
		   "nhist=%u method=%d", m.nhist, m.phc_method);
	}

	/* the client: T2 1.5 us before T2_SW, T3 2.5 us after T3_SW, on a reflector PHC 37 s ahead */
	guard_setup(true);
	hf_hists(true);
	opts.size = 104;
	run.ts.hw = true;
	t[T2SW] = B + 20000;
	t[T2W] = t[T2SW] + (uint64_t)off - 1500;
	t[T2K] = t[T2SW] - 400;
	t[T3SW] = t[T2SW] + 3000;
	for (i = 0; i < 2; i++) {
		struct txn *x = &run.win.slot[i];

		x->seq = (uint64_t)i;
		x->st = TF_USED | TF_SENT;
		x->deadline = UINT64_MAX;
		x->t[T1W] = B;
		x->t[T1SW] = B - 300;
		sess.c.sent++;
		emitter.outstanding++;
	}
	emitter.next_seq = 2;
	po_pong(buf, 0, t, off, PHC_EXTENDED);
	emit_packet(buf, 104, B + 900000000ULL, 0, false);
	ok(run.ts.peer_off_on && run.ts.peer_off == off && sess.h[M_SRV_RX].n == 1 && sess.h[M_SRV_RX].min == 1500 &&
	   sess.h[M_SRV_RX_NIC].min == 1100, "client: the reflector's segments on one time base from its first pong",
	   "on=%d srv_rx=%" PRId64 " rx_nic=%" PRId64, run.ts.peer_off_on, sess.h[M_SRV_RX].min,
	   sess.h[M_SRV_RX_NIC].min);
	t[T3W] = t[T3SW] + (uint64_t)off + 2500;
	ok(metric_value(M_RESPONSE, t, &v) && v == 7000, "client: one-clock metrics untouched (response 7 us)",
	   "%" PRId64, v);
	f = open_memstream(&text, &tl);
	report_compute(&rep);
	session_report(f, &rep);
	json_report(f, &rep, 0);
	fclose(f);
	ok(text && strstr(text, "Reflector's segments: its PHC offset (+37000000250 ns, from its pongs) taken out") &&
	   strstr(text, "\"server_wire_offset\": {\"ns\": 37000000250, \"taken_out\": true}") &&
	   !strstr(text, "(T2_SW-T2) *"), "client: report and JSON say it was taken out", "%.3000s", text ? text : "");
	free(text);
	text = NULL;

	/* no room in the pongs (80 bytes): the rows are marked, the FIN_ACK's reading goes to the csv log */
	run.ts.peer_off_on = false;
	run.ts.peer_off = 0;
	for (i = 0; i < NMETRIC; i++) {
		hist_reset(&sess.h[i]);
	}
	result.srv_phc.method = PHC_EXTENDED;
	result.srv_phc.off = off + 40;
	f = open_memstream(&text, &tl);
	report_compute(&rep);
	hist_add(&sess.h[M_SRV_RX], 1500 - off, 0);
	session_report(f, &rep);
	json_report(f, &rep, 0);
	fclose(f);
	ok(text && strstr(text, "server rx stack (T2_SW-T2) *") &&
	   strstr(text, "* Reflector's segments: its PHC offset is still in them (its FIN_ACK said +37000000290 ns)") &&
	   strstr(text, "--size 104") && strstr(text, "\"taken_out\": false"),
	   "client, no offset in the pongs: the rows marked, the FIN_ACK's offset named, --size 104", "%.3000s",
	   text ? text : "");
	free(text);
	*log_csv_facts(hdr) = 0;
	memset(&L, 0, sizeof(L));
	L.path = "t";
	ok(strstr(hdr, " server_wire_offset_ns=37000000290 ") && alog_comment(&L, 1, hdr, strchr(hdr, '\n')) == 0 &&
	   L.peer_off_on && L.peer_off == off + 40, "the csv log keeps the FIN_ACK's offset, --analyze reads it back",
	   "'%.300s'", hdr);
	run.ts.peer_off = L.peer_off;
	run.ts.peer_off_on = L.peer_off_on;
	ok(metric_value(M_SRV_RX, t, &v) && v == 1540 && metric_value(M_SRV_TX, t, &v) && v == 2460,
	   "--analyze takes it out of the reflector's segments (the FIN_ACK's: 40 ns later)", "%" PRId64, v);
	hf_hists(false);
	memset(&sess, 0, sizeof(sess));
	memset(&emitter, 0, sizeof(emitter));
	run.win.slot = NULL;
	reset_globals();
}

/* dir/rel with n bytes of data. */
static void fake_file(const char *dir, const char *rel, const void *data, size_t n)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	f = fopen(path, "w");
	if (f) {
		fwrite(data, 1, n, f);
		fclose(f);
	}
}

/* ... with a string literal's bytes, its NULs inside included */
#define FAKE_FILE(dir, rel, lit)	fake_file(dir, rel, lit, sizeof(lit) - 1)

/* The hardware-path notes of the report, as text. */
static char *hw_notes(void)
{
	struct report rep = { .ow_why = "" };
	char *text = NULL;
	size_t tl = 0;
	FILE *f = open_memstream(&text, &tl);

	print_hw_notes(f, &rep);
	fclose(f);
	return text;
}

/*
 * TX stamps missing in a pattern that names its cause: none while RX
 * stamps came (bnxt before BCM5760X: PTP packets only), or a share (igb,
 * ixgbe, i40e: one at a time); a ptp4l on the same port is found and named.
 */
static void test_tx_pattern(void)
{
	char dir[128], cmd[600], *text, *err;
	struct capture ce;
	uint64_t miss = 0, n = 0;

	reset_globals();
	opts.iface = "eth3";
	run.ts.hw = true;
	sess.c.received = 1000;
	sess.c.warmup = 0;
	sess.c.missing[T1W] = 1000;
	ok(tx_stamp_pattern(&miss, &n) == 1, "client: no T1 of 1000, every T4: PTP packets only", "miss=%" PRIu64, miss);
	text = hw_notes();
	ok(text && strstr(text, "none of 1000 sends") && strstr(text, "bnxt") && strstr(text, "--ptp-probe"),
	   "the report names the cause and --ptp-probe", "'%s'", text ? text : "");
	free(text);
	sess.c.missing[T1W] = 130;
	text = hw_notes();
	ok(tx_stamp_pattern(&miss, &n) == 2 && text && strstr(text, "130 of 1000 sends") && strstr(text, "13.0 %") &&
	   strstr(text, "tx_hwtstamp_skipped") && strstr(text, "--interval"),
	   "client: 130 of 1000 T1 missing: one at a time, pace with --interval", "'%s'", text ? text : "");
	free(text);
	sess.c.missing[T1W] = 5;
	ok(tx_stamp_pattern(&miss, &n) == 0, "5 of 1000 (under 1 %): no pattern claimed", "-");
	sess.c.missing[T1W] = 1000;
	sess.c.missing[T4W] = 1000;
	ok(tx_stamp_pattern(&miss, &n) == 0, "no TX and no RX stamps: not the PTP-only pattern", "-");
	side_set(false);
	sess.c.missing[T1W] = sess.c.missing[T4W] = 0;
	sess.c.missing[T3W] = 400;
	ok(tx_stamp_pattern(&miss, &n) == 2, "reflector: 400 of 1000 T3 missing: one at a time", "-");

	/* a ptp4l on eth3, in a fake /proc: by -i, and by a [eth3] section of its -f file */
	tmp_path(dir, sizeof(dir), "proc");
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/41 %s/42 %s/43 %s/self", dir, dir, dir, dir);
	ok(system(cmd) == 0, "a fake /proc", "-");
	FAKE_FILE(dir, "41/comm", "ptp4l\n");
	FAKE_FILE(dir, "41/cmdline", "ptp4l\0-i\0eth9\0-m\0");	/* another port */
	FAKE_FILE(dir, "42/comm", "phc2sys\n");
	kops.proc_root = dir;
	ok(ptp4l_find("eth3") == 0, "a ptp4l on another port: not this one", "-");
	FAKE_FILE(dir, "43/comm", "ptp4l\n");
	FAKE_FILE(dir, "ptp4l.conf", "[global]\ntwoStepFlag 1\n[eth3]\n");
	{
		char args[512];
		int k = snprintf(args, sizeof(args), "ptp4l%c-f%c%s/ptp4l.conf%c", 0, 0, dir, 0);

		fake_file(dir, "43/cmdline", args, (size_t)k);
	}
	ok(ptp4l_find("eth3") == 43, "a ptp4l whose config file has [eth3]: found", "pid=%d", ptp4l_find("eth3"));
	FAKE_FILE(dir, "41/cmdline", "ptp4l\0-i\0eth3\0");
	ok(ptp4l_find("eth3") == 41 || ptp4l_find("eth3") == 43, "a ptp4l with -i eth3: found", "-");
	kops_restore();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd)) {
		printf("# could not remove %s\n", dir);
	}
	run.ts.ptp4l_pid = 41;
	text = hw_notes();
	ok(text && strstr(text, "ptp4l (pid 41) on eth3"), "the report names the ptp4l that competes for the stamp", "'%s'",
	   text ? text : "");
	free(text);

	/* the filter's advice: --ptp-probe only where PTPv2 over UDP is stamped */
	{
		static const struct { int filter; const char *want; } adv[] = {
			{ HWTSTAMP_FILTER_PTP_V2_L4_EVENT, "run both ends with --ptp-probe" },
			{ HWTSTAMP_FILTER_PTP_V2_EVENT, "run both ends with --ptp-probe" },
			{ HWTSTAMP_FILTER_PTP_V1_L4_EVENT, "cannot help" },
			{ HWTSTAMP_FILTER_PTP_V2_L2_EVENT, "cannot help" },
			{ HWTSTAMP_FILTER_SOME, "cannot help" },
			{ HWTSTAMP_FILTER_PTP_V2_L4_SYNC, "only the reflector's" },
			{ HWTSTAMP_FILTER_PTP_V2_DELAY_REQ, "only the client's" },
		};
		size_t k;
		int bad = 0;

		for (k = 0; k < ARRAY_SIZE(adv); k++) {
			cap_start(&ce, 2);
			ts_filter_warn("eth3", adv[k].filter);
			err = cap_stop(&ce);
			if (!one_rant_line(err) || !strstr(err, adv[k].want)) {
				printf("# filter %d: '%s'\n", adv[k].filter, err);
				bad++;
			}
			free(err);
		}
		ok(!bad, "--ptp-probe advised for PTPv2 L4 filters only; v1, L2 and SOME told it cannot help", "%d wrong", bad);
	}
	reset_globals();
}

/*
 * One PHC open per run: a class socket on the same NIC (cls_open sets each
 * up as the first) keeps the PHC and its readings; another PHC replaces it.
 */
static void test_phc_once(void)
{
	int r;

	reset_globals();
	memset(&fake_phc, 0, sizeof(fake_phc));
	fake_phc.off = 500;
	phc_fake_start();
	r = phc_start(3);
	ok(r == 0 && fake_phc.n_open == 1 && run.phc.fd == 1003 && run.phc.n == 1, "the PHC opened once, one reading",
	   "r=%d opens=%d n=%" PRIu64, r, fake_phc.n_open, run.phc.n);
	r = phc_start(3);
	ok(r == 0 && fake_phc.n_open == 1 && run.phc.fd == 1003 && run.phc.n == 1,
	   "a second class socket on the same NIC: not opened again", "r=%d opens=%d n=%" PRIu64, r, fake_phc.n_open,
	   run.phc.n);
	r = phc_start(5);
	ok(r == 0 && fake_phc.n_open == 2 && run.phc.fd == 1005 && run.phc.index == 5 && run.phc.n == 1,
	   "another PHC: the first ends, the new one starts its readings", "opens=%d fd=%d n=%" PRIu64, fake_phc.n_open,
	   run.phc.fd, run.phc.n);
	phc_end();
	kops_restore();
	reset_globals();
}

/*
 * SO_TIMESTAMPING_NEW: 64-bit seconds (struct scm_timestamping64) whatever
 * the build's time_t, so a stamp after 2038 reads right.
 */
static void test_cmsg64(void)
{
	struct scm_timestamping64 st;
	struct ts_cmsg c;
	struct cbuf b;

	memset(&st, 0, sizeof(st));
	st.ts[0].tv_sec = 4102444800LL;	/* 2100-01-01 */
	st.ts[0].tv_nsec = 11;
	st.ts[2].tv_sec = 4102444800LL;
	st.ts[2].tv_nsec = 22;
	cb_init(&b);
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING_NEW, &st, sizeof(st), 0);
	ts_parse(&b.msg, &c);
	ok(c.have_ts && c.sw == 4102444800000000011ULL && c.hw == 4102444800000000022ULL && !c.bad,
	   "SO_TIMESTAMPING_NEW: 64-bit seconds read (a stamp of 2100)", "sw=%" PRIu64 " hw=%" PRIu64, c.sw, c.hw);
	cb_init(&b);
	cb_add(&b, SOL_SOCKET, SO_TIMESTAMPING_NEW, &st, sizeof(st) - 8, 0);
	ts_parse(&b.msg, &c);
	ok(!c.have_ts && c.bad == 1, "SO_TIMESTAMPING_NEW too short: refused", "bad=%u", c.bad);
	printf("# time_t has %zu bytes here: %s\n", sizeof(time_t),
	       sizeof(time_t) < 8 ? "stamps are asked for with SO_TIMESTAMPING_NEW" : "either form has 64-bit seconds");
}

/* ethtool netlink tsconfig: the provider from a synthetic reply, errors, and the real kernel's answer. */
static void test_tsconfig(void)
{
	uint8_t buf[256] __attribute__((aligned(4)));
	struct nlmsghdr nh = { .nlmsg_type = 30 };
	struct genlmsghdr gh = { .cmd = 47, .version = 1 };
	struct nlmsgerr e;
	uint8_t nest[64] __attribute__((aligned(4)));
	uint32_t idx = 5, qual = 1;
	size_t n, nl;
	int r;

	/* reply: header nest (ignored), provider nest { index 5, qualifier approx } */
	memset(buf, 0, sizeof(buf));
	n = NLMSG_HDRLEN;
	memcpy(buf + n, &gh, sizeof(gh));
	n += GENL_HDRLEN;
	n = nla_put(buf, n, ETNL_A_TSCONFIG_HEADER | NLA_F_NESTED, NULL, 0);
	nl = nla_put(nest, 0, ETNL_A_PROVIDER_INDEX, &idx, 4);
	nl = nla_put(nest, nl, ETNL_A_PROVIDER_QUALIFIER, &qual, 4);
	n = nla_put(buf, n, ETNL_A_TSCONFIG_PROVIDER | NLA_F_NESTED, nest, nl);
	nh.nlmsg_len = (uint32_t)n;
	memcpy(buf, &nh, sizeof(nh));
	memset(&run.ts_prov, 0, sizeof(run.ts_prov));
	r = tsconfig_parse(buf, n);
	ok(r == 0 && run.ts_prov.known && run.ts_prov.phc_index == 5 && run.ts_prov.qualifier == 1,
	   "tsconfig: provider nest -> PHC 5, approximate", "r=%d known=%d idx=%d q=%u", r, run.ts_prov.known, run.ts_prov.phc_index,
	   run.ts_prov.qualifier);
	/* an attribute whose length runs past the message is not read */
	buf[NLMSG_HDRLEN + GENL_HDRLEN + NLA_HDRLEN] = 0xff;
	memset(&run.ts_prov, 0, sizeof(run.ts_prov));
	buf[NLMSG_HDRLEN + GENL_HDRLEN] = 0xf0;
	r = tsconfig_parse(buf, n);
	ok(r == -ENODATA && !run.ts_prov.known, "tsconfig: a bad attribute length -> nothing read", "r=%d", r);
	/* the kernel said no */
	memset(buf, 0, sizeof(buf));
	nh.nlmsg_type = NLMSG_ERROR;
	nh.nlmsg_len = NLMSG_LENGTH(sizeof(e));
	memset(&e, 0, sizeof(e));
	e.error = -EOPNOTSUPP;
	memcpy(buf, &nh, sizeof(nh));
	memcpy(buf + NLMSG_HDRLEN, &e, sizeof(e));
	ok(tsconfig_parse(buf, nh.nlmsg_len) == -EOPNOTSUPP, "tsconfig: NLMSG_ERROR -> its errno", "failed");
	ok(tsconfig_parse(buf, 8) == -EBADMSG, "tsconfig: a truncated message -> -EBADMSG", "failed");
	/* the real kernel, on lo (no hardware stamps): an answer, never a hang */
	ts_provider_get("lo");
	ok(!run.ts_prov.known && run.ts_prov.err < 0, "tsconfig: lo has no provider; the kernel says why", "err=%d (%s)", run.ts_prov.err,
	   strerror(-run.ts_prov.err));
	printf("# tsconfig on lo: %s\n", strerror(-run.ts_prov.err));
	memset(&run.ts_prov, 0, sizeof(run.ts_prov));
}

/* ------------------------------------------------------------------ pmc */

/*
 * -M without a PMU: the counter pages are memfd pages the test writes, the
 * rdpmc instruction is fake_rdpmc (values per counter, calls counted, and a
 * hook that rewrites the page in the middle of a read, as the kernel does on
 * a context switch), and perf_event_open is fake_open.
 */
static struct {
	uint64_t raw[8];		/* what rdpmc(ecx) returns */
	int calls, last_ecx;
	struct perf_event_mmap_page *bump;	/* rewrite this page during a read... */
	int bump_left;			/* ...this many times */
	int64_t bump_offset;		/* new offset after the rewrite */
	uint64_t bump_raw;		/* new raw value after the rewrite */
} fr;

static uint64_t fake_rdpmc(uint32_t ecx)
{
	uint64_t v = fr.raw[ecx & 7];

	fr.calls++;
	fr.last_ecx = (int)ecx;
	if (fr.bump && fr.bump_left) {
		fr.bump_left--;
		fr.bump->lock += 2;
		fr.bump->offset = fr.bump_offset;
		fr.raw[ecx & 7] = fr.bump_raw;
	}
	return v;
}

static void pg_init(struct perf_event_mmap_page *pg, uint32_t index, int64_t offset, uint16_t width)
{
	memset(pg, 0, sizeof(*pg));
	pg->lock = 4;
	pg->index = index;
	pg->offset = offset;
	pg->cap_user_rdpmc = 1;
	pg->pmc_width = width;
}

/* Fake events: open n memfd pages; what each open saw is kept. */
static struct {
	struct perf_event_mmap_page *pg[PMC_MAX];
	struct perf_event_attr attr[PMC_MAX];
	int group[PMC_MAX], n, fail_at, fail_err;
	uint32_t index0;		/* index the pages get (0: not on the PMU) */
	bool no_rdpmc;
} fo;

static int fake_open(struct perf_event_attr *a, int group)
{
	long psz = sysconf(_SC_PAGESIZE);
	int k = fo.n, fd;
	void *m;

	if (k >= PMC_MAX) {
		return -EINVAL;
	}
	fo.attr[k] = *a;
	fo.group[k] = group;
	fo.n++;
	if (k == fo.fail_at) {
		return -fo.fail_err;
	}
	fd = memfd_create("rant-unit-pmc", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, psz) < 0) {
		return -EIO;
	}
	m = mmap(NULL, (size_t)psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		close(fd);
		return -EIO;
	}
	fo.pg[k] = m;
	pg_init(fo.pg[k], fo.index0 ? fo.index0 + (uint32_t)k : 0, 1000 * (k + 1), 48);
	fo.pg[k]->cap_user_rdpmc = !fo.no_rdpmc;
	fr.raw[(fo.index0 + (uint32_t)k - 1) & 7] = 5;
	return fd;
}

static void fake_open_free(void)
{
	int k;

	for (k = 0; k < PMC_MAX; k++) {
		if (fo.pg[k]) {
			munmap(fo.pg[k], (size_t)sysconf(_SC_PAGESIZE));
		}
	}
	memset(&fo, 0, sizeof(fo));
	fo.fail_at = -1;
}

/* A fake /sys/bus/event_source/devices and perf_event_paranoid under dir. */
static char pmc_dir[256], pmc_par[300], pmc_cpu[300];

static void pmc_fake_sysfs(const char *pmu, const char *rdpmc, const char *paranoid)
{
	char p[700];

	snprintf(p, sizeof(p), "rm -rf %s && mkdir -p %s", pmc_dir, pmc_dir);
	if (system(p) != 0) {
		return;
	}
	if (pmu) {
		snprintf(pmc_cpu, sizeof(pmc_cpu), "%s/%s", pmc_dir, pmu);
		mkdir(pmc_cpu, 0700);
		if (rdpmc) {
			snprintf(p, sizeof(p), "%s/rdpmc", pmc_cpu);
			write_file(p, rdpmc);
		}
	}
	snprintf(pmc_par, sizeof(pmc_par), "%s/perf_event_paranoid", pmc_dir);
	write_file(pmc_par, paranoid);
	kops.pmc_devices = pmc_dir;
	kops.pmc_paranoid = pmc_par;
}

/*
 * pmc_setup against fresh fake events: open number fail_at fails with
 * fail_err (-1: none), pages carry index0 + k (0: not on the PMU) and
 * cap_user_rdpmc unless no_rdpmc.  stderr in *err (malloc'd).
 */
static int pmc_try(char **err, int fail_at, int fail_err, uint32_t index0, bool no_rdpmc)
{
	struct capture ce;
	int r;

	fake_open_free();
	fo.fail_at = fail_at;
	fo.fail_err = fail_err;
	fo.index0 = index0;
	fo.no_rdpmc = no_rdpmc;
	cap_start(&ce, 2);
	r = pmc_setup();
	*err = cap_stop(&ce);
	return r;
}

static void test_pmc_read(void)
{
	static struct perf_event_mmap_page pg;
	const int64_t O = 1000000;
	uint64_t a[PMC_MAX], b[PMC_MAX], d[PMC_MAX];

	kops.rdpmc = fake_rdpmc;
	memset(&fr, 0, sizeof(fr));
	pg_init(&pg, 3, O, 48);
	fr.raw[2] = 500;
	ok(pmc_read_one(&pg) == (uint64_t)O + 500 && fr.calls == 1 && fr.last_ecx == 2,
	   "pmc read: offset + rdpmc(index - 1)", "calls %d ecx %d", fr.calls, fr.last_ecx);
	fr.calls = 0;
	pg.index = 0;
	ok(pmc_read_one(&pg) == PMC_NONE && fr.calls == 0, "pmc read: index 0 (not on the PMU) is no value, no rdpmc",
	   "calls %d", fr.calls);
	pg.index = 3;
	pg.cap_user_rdpmc = 0;
	ok(pmc_read_one(&pg) == PMC_NONE && fr.calls == 0, "pmc read: cap_user_rdpmc 0 is no value, no rdpmc",
	   "calls %d", fr.calls);
	pg.cap_user_rdpmc = 1;
	pg.pmc_width = 0;
	ok(pmc_read_one(&pg) == PMC_NONE, "pmc read: pmc_width 0 is no value", "-");
	pg.pmc_width = 48;

	/* the hardware counter is 48 bits and started at -period: sign-extended */
	fr.raw[2] = 0xfffffffffff0ULL;
	ok(pmc_read_one(&pg) == (uint64_t)O - 16, "pmc read: 48-bit raw 0xfffffffffff0 is -16 from offset", "%" PRIu64,
	   pmc_read_one(&pg) - (uint64_t)O);
	fr.raw[2] = 0xabcd000000000010ULL;
	ok(pmc_read_one(&pg) == (uint64_t)O + 16, "pmc read: bits above pmc_width are ignored", "%" PRIu64,
	   pmc_read_one(&pg));
	pg.pmc_width = 40;
	fr.raw[2] = 0xfffffffff0ULL;
	ok(pmc_read_one(&pg) == (uint64_t)O - 16, "pmc read: 40-bit counter sign-extended at bit 39", "-");
	pg.pmc_width = 64;
	fr.raw[2] = 7;
	ok(pmc_read_one(&pg) == (uint64_t)O + 7, "pmc read: a 64-bit counter is taken whole", "-");
	pg.pmc_width = 48;

	/* a wrap: before the overflow interrupt is taken, and after the kernel folded it into offset */
	run.pmc.n = 1;
	run.pmc.pg[0] = &pg;
	fr.raw[2] = 0xfffffffffff0ULL;
	pmc_read(a);
	fr.raw[2] = 0x10;
	pmc_read(b);
	pmc_delta(d, a, b);
	ok(d[0] == 32, "pmc delta: across the 48-bit wrap, overflow not yet taken", "%" PRIu64, d[0]);
	pg.offset = O + 0x10 + 1000;	/* kernel: count so far O+16, counter re-armed at -1000 */
	fr.raw[2] = (1ULL << 48) - 1000 + 5;
	pmc_read(b);
	pmc_delta(d, a, b);
	ok(d[0] == 37, "pmc delta: across the wrap after the kernel moved it into offset", "%" PRIu64, d[0]);
	pmc_delta(d, b, a);
	ok(d[0] == PMC_NONE, "pmc delta: a count that went backwards is no value", "%" PRIu64, d[0]);
	a[0] = PMC_NONE;
	pmc_delta(d, a, b);
	ok(d[0] == PMC_NONE, "pmc delta: no start value, no delta", "-");
	pmc_delta(d, b, a);
	ok(d[0] == PMC_NONE, "pmc delta: no end value, no delta", "-");

	/* the kernel rewrites the page during the read (lock changes): retry, use the new values */
	pg.offset = O;
	pg.lock = 10;
	fr.raw[2] = 100;
	fr.calls = 0;
	fr.bump = &pg;
	fr.bump_left = 1;
	fr.bump_offset = O + 5000;
	fr.bump_raw = 200;
	b[0] = pmc_read_one(&pg);
	ok(b[0] == (uint64_t)O + 5200 && fr.calls == 2 && pg.lock == 12,
	   "pmc read: lock changed during the read -> retried with the new offset and counter",
	   "got %" PRIu64 " calls %d lock %u", b[0] - (uint64_t)O, fr.calls, pg.lock);
	fr.calls = 0;
	fr.bump_left = 1000;
	b[0] = pmc_read_one(&pg);
	ok(b[0] == PMC_NONE && fr.calls == PMC_TRIES, "pmc read: a page rewritten without end gives up (bounded)",
	   "calls %d", fr.calls);
	fr.bump = NULL;
	run.pmc.n = 0;
}

static void test_pmc_setup(void)
{
	char *err, *s;
	int r;

	snprintf(pmc_dir, sizeof(pmc_dir), "/tmp/rant-unit-%d-pmc", (int)getpid());
	kops.pmc_open = fake_open;
	kops.rdpmc = fake_rdpmc;
	if (!PMC_ARCH_OK) {
		pmc_fake_sysfs("cpu", "1", "2\n");
		r = pmc_try(&err, -1, 0, 1, false);
		ok(r < 0 && one_rant_line(err) && strstr(err, "x86"), "pmc setup: refused off x86", "'%s'", err);
		free(err);
		return;
	}
	pmc_fake_sysfs(NULL, NULL, "2\n");
	r = pmc_try(&err, -1, 0, 1, false);
	ok(r < 0 && one_rant_line(err) && strstr(err, "no hardware PMU") && strstr(err, "/cpu/rdpmc") &&
	   strstr(err, "perf_event_paranoid") && fo.n == 0,
	   "pmc setup: no cpu PMU -> one line naming rdpmc and perf_event_paranoid, nothing opened", "'%s' opens %d", err, fo.n);
	free(err);

	pmc_fake_sysfs("cpu", "0\n", "2\n");
	r = pmc_try(&err, -1, 0, 1, false);
	ok(r < 0 && one_rant_line(err) && strstr(err, "cpu/rdpmc is 0") && strstr(err, "echo 1 >") && fo.n == 0,
	   "pmc setup: rdpmc 0 -> one line with the fix", "'%s'", err);
	free(err);

	pmc_fake_sysfs("cpu", "1\n", "3\n");
	r = pmc_try(&err, 0, EACCES, 1, false);
	ok(r < 0 && one_rant_line(err) && strstr(err, "perf_event_paranoid is 3") && strstr(err, "echo 2 >"),
	   "pmc setup: EACCES -> one line naming perf_event_paranoid and its value", "'%s'", err);
	free(err);

	r = pmc_try(&err, 0, ENOENT, 1, false);
	ok(r < 0 && one_rant_line(err) && strstr(err, "cannot count cycles") && run.pmc.n == 0,
	   "pmc setup: no cycles event -> refused", "'%s'", err);
	free(err);

	/* a PMU without a dTLB event: the other three, and the note says so */
	pmc_fake_sysfs("cpu", "1\n", "2\n");
	r = pmc_try(&err, 3, ENOENT, 1, false);
	ok(r == 0 && !*err && run.pmc.n == 3 && !strcmp(run.pmc.skipped, "dtlb_misses") && run.pmc.width == 48,
	   "pmc setup: an event the PMU lacks is left out", "r %d n %d skipped '%s' '%s'", r, run.pmc.n, run.pmc.skipped, err);
	ok(fo.attr[0].exclude_kernel && fo.attr[0].exclude_hv && fo.attr[1].exclude_kernel && fo.attr[0].pinned &&
	   !fo.attr[1].pinned && fo.group[0] == -1 && fo.group[1] >= 0 && fo.group[2] == fo.group[1] &&
	   fo.attr[0].config == PERF_COUNT_HW_CPU_CYCLES && fo.attr[1].config == PERF_COUNT_HW_INSTRUCTIONS &&
	   fo.attr[3].type == PERF_TYPE_HW_CACHE && !fo.attr[0].inherit,
	   "pmc setup: user space only, one pinned group led by cycles, not inherited", "-");
	{
		struct capture ce;

		opts.quiet = false;
		side_set(true);
		cap_start(&ce, 2);
		pmc_note(stderr);
		s = cap_stop(&ce);
	}
	ok(one_rant_line(s) && strstr(s, "cycles, instructions, cache_misses in user space") && strstr(s, "cannot count dtlb_misses") &&
	   strstr(s, "send -> receive"), "pmc setup: the start-up note names what is counted and what is not", "'%s'", s);
	free(s);
	free(err);
	pmc_close();

	/* hybrid CPUs: the PMU is cpu_core */
	pmc_fake_sysfs("cpu_core", "1\n", "2\n");
	r = pmc_try(&err, -1, 0, 1, false);
	ok(r == 0 && run.pmc.n == 4 && !*err, "pmc setup: cpu_core (hybrid) is a PMU too", "r %d '%s'", r, err);
	free(err);
	pmc_close();

	pmc_fake_sysfs("cpu", "1\n", "2\n");
	r = pmc_try(&err, -1, 0, 1, true);
	ok(r < 0 && one_rant_line(err) && strstr(err, "cap_user_rdpmc is 0") && strstr(err, "/cpu/rdpmc") && run.pmc.n == 0,
	   "pmc setup: cap_user_rdpmc 0 in the page -> refused with the fix", "'%s'", err);
	free(err);

	r = pmc_try(&err, -1, 0, 0, false);	/* index 0: the group is not on the PMU */
	ok(r < 0 && one_rant_line(err) && strstr(err, "not on the PMU") && strstr(err, "nmi_watchdog") && run.pmc.n == 0,
	   "pmc setup: index 0 at start -> refused", "'%s'", err);
	free(err);
	fake_open_free();
}

/* Transactions through the hooks' arithmetic, the log, --analyze, report and JSON. */
static void test_pmc_flow(void)
{
	char path[256], jpath[256], *err, *out, *js, line[512], *p;
	struct capture co, ce;
	struct txn x[4];
	uint8_t *mem;
	int i, r, k;

	reset_globals();
	kops.pmc_open = fake_open;	/* reset_globals restores the whole kernel interface */
	kops.rdpmc = fake_rdpmc;
	pmc_fake_sysfs("cpu", "1\n", "2\n");
	r = pmc_try(&err, -1, 0, 1, false);
	free(err);
	if (r < 0 || run.pmc.n != 4) {
		ok(false, "pmc flow: fake counters set up", "r %d n %d", r, run.pmc.n);
		return;
	}
	log_setup(true, &mem, 16);
	/* seq, 8 stamps and the reflector's two kernel stamps, status, 4 counters */
	ok(sess.log.rec_size == 8 + 80 + 4 + 32, "pmc flow: a log record holds the 4 counters", "%u", sess.log.rec_size);
	for (i = 0; i < 4; i++) {
		mk_emit_txn(&x[i], (uint64_t)i, i == 2 ? K_LOST : i == 3 ? K_WARMUP : K_OK);
		/* emit_send: counts before send(); emit_recv: after recvmsg(); emit_packet: the delta */
		pmc_read(x[i].pmc);
		for (k = 0; k < 4; k++) {
			fr.raw[k] += (uint64_t)(100 * (k + 1) * (i + 1));
		}
		if (i != 2) {
			pmc_read(run.pmc_rx);
			pmc_delta(x[i].pmc, x[i].pmc, run.pmc_rx);
		}
		txn_retire(&x[i]);
	}
	ok(x[0].pmc[0] == 100 && x[0].pmc[3] == 400 && x[1].pmc[1] == 400,
	   "pmc flow: deltas of send -> receive", "%" PRIu64 " %" PRIu64 " %" PRIu64, x[0].pmc[0], x[0].pmc[3], x[1].pmc[1]);
	ok(run.pmc_st.n[0] == 2 && run.pmc_st.max[0] == 200 && run.pmc_st.max_seq[0] == 1 && pmc_avg(0) == 150.0 && pmc_avg(3) == 600.0,
	   "pmc flow: only measured transactions in avg/max (lost and warm-up left out)", "n %" PRIu64 " max %" PRIu64,
	   run.pmc_st.n[0], run.pmc_st.max[0]);

	tmp_path(path, sizeof(path), "pmc.csv");
	r = log_to_file(path, LOG_CSV);
	{
		char *txt = read_file(path);

		ok(r == 0 && txt && strstr(txt, ",rtt_ns,response_ns,network_ns,forward_ns,backward_ns,pmc_cycles,pmc_instructions,pmc_cache_misses,pmc_dtlb_misses\n") &&
		   strstr(txt, ",100,200,300,400\n") && strstr(txt, ",200,400,600,800\n") && strstr(txt, ",lost,") &&
		   strstr(txt, ",,,,\n"), "pmc flow: csv has the counter columns; lost rows leave them empty", "%s", txt ? txt : "(none)");
		free(txt);
	}
	free(mem);

	/* --analyze reads the columns back into the same avg/max, report and JSON */
	run.pmc.n = 0;
	pmc_reset();
	reset_globals();
	tmp_path(jpath, sizeof(jpath), "pmc.json");
	opts.mode = MODE_ANALYZE;
	opts.analyze[0] = path;
	opts.json = jpath;
	cap_start(&co, 1);
	cap_start(&ce, 2);
	r = analyze_main();
	err = cap_stop(&ce);
	out = cap_stop(&co);
	js = read_file(jpath);
	ok(r == 0 && run.pmc.n == 4 && run.pmc_st.n[0] == 2 && run.pmc_st.max[3] == 800 && run.pmc_st.max_seq[3] == 1,
	   "pmc flow: --analyze reads the counters back", "r %d n %d '%s'", r, run.pmc.n, err);
	ok(strstr(out, "--- Hardware counters per transaction (user space, send -> receive) ---") &&
	   strstr(out, "cycles ") && strstr(out, "dtlb_misses "), "pmc flow: the report has the counters table", "%s", out);
	ok(js && strstr(js, "\"pmc\": {\"scope\": \"user\"") &&
	   strstr(js, "\"cycles\": {\"samples\": 2, \"missing\": 0, \"avg\": 150.0, \"max\": 200, \"max_seq\": 1}") &&
	   strstr(js, "\"dtlb_misses\": {\"samples\": 2, \"missing\": 0, \"avg\": 600.0, \"max\": 800"),
	   "pmc flow: JSON pmc.<counter>.{avg,max}", "%s", js ? js : "(none)");
	free(err);
	free(out);
	free(js);
	unlink(jpath);

	/* a breach shows the transaction's counters, on stdout and in the trace marker line */
	cap_start(&co, 1);
	print_breakdown(stdout, &x[1], 1000, "Threshold breach");
	out = cap_stop(&co);
	ok(strstr(out, "  counters (user space, send -> receive): cycles 200 | instructions 400 | cache_misses 600 | dtlb_misses 800\n") != NULL,
	   "pmc flow: a breakdown prints the counters", "%s", out);
	free(out);
	x[1].pmc[2] = PMC_NONE;
	p = pmc_marker(line, &x[1]);
	*p = 0;
	ok(!strcmp(line, " cycles=200 instructions=400 cache_misses=- dtlb_misses=800"), "pmc flow: trace marker fields",
	   "'%s'", line);
	unlink(path);
	run.pmc.n = 0;
	pmc_reset();
	reset_globals();
}

static void test_pmc(void)
{
	struct args a;
	char *out, *err;
	int r;

	r = parse_str("-M -a h", &a, &out, &err);
	ok(r == 0 && opts.pmc && !*err, "pmc: -M parses", "%d '%s'", r, err);
	free(out);
	free(err);
	r = parse_str("--pmc", &a, &out, &err);
	ok(r == 0 && opts.pmc && opts.mode == MODE_REFLECT, "pmc: --pmc on the reflector", "%d", r);
	free(out);
	free(err);
	r = parse_str("--analyze f -M", &a, &out, &err);
	ok(r < 0 && one_rant_line(err) && strstr(err, "--pmc"), "pmc: -M refused with --analyze", "'%s'", err);
	free(out);
	free(err);
	fake_open_free();
	test_pmc_read();	/* these leave the fake sysfs the flow reads */
	test_pmc_setup();
	if (PMC_ARCH_OK) {
		test_pmc_flow();	/* elsewhere -M is refused at setup: nothing flows */
	}
	kops_restore();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", pmc_dir);
		if (system(cmd) != 0) {
			ok(false, "pmc: temp dir removed", "%s", pmc_dir);
		}
	}
	reset_globals();
}

/* ------------------------------------------------------------------ plot */

/* Text of the SVG element with id="id", or "" (a static buffer). */
static const char *svg_id_text(const char *svg_doc, const char *id)
{
	static char out[64];
	char key[80];
	const char *p, *q;

	out[0] = 0;
	snprintf(key, sizeof(key), "id=\"%s\"", id);
	p = strstr(svg_doc, key);
	p = p ? strchr(p, '>') : NULL;
	q = p ? strchr(p, '<') : NULL;
	if (p && q && q - p - 1 < (ptrdiff_t)sizeof(out)) {
		memcpy(out, p + 1, (size_t)(q - p - 1));
		out[q - p - 1] = 0;
	}
	return out;
}

static int count_str(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s += strlen(what)) {
		n++;
	}
	return n;
}

/*
 * A synthetic emit run of n transactions through the real accounting and
 * log ring: rtt about 90 us, a spike every 97th, one lost in 50, one
 * warm-up in 200.  The caller frees the memory with plot_fixture_free.
 */
static uint8_t *plot_fixture(uint64_t n, int64_t threshold_ns)
{
	uint8_t *mem;
	struct txn x;
	uint64_t i;
	int k;

	reset_globals();
	run.ow_evidence = OW_NONE;	/* one-way delays not trusted unless a test says so */
	opts.sw_stamps = true;
	opts.threshold_ns = threshold_ns;
	opts.cont = true;
	log_setup(true, &mem, n);
	for (k = 0; k < run.side.nmetrics; k++) {
		int m = run.side.metrics[k];

		hist_init(&sess.h[m], opts.bucket_ns, opts.bound_ns, calloc(opts.bound_ns / opts.bucket_ns, 8), calloc(n, 8), n, test_lh(m));
	}
	sess.breach = calloc(BREACH_KEEP, sizeof(*sess.breach));
	for (i = 0; i < n; i++) {
		mk_emit_txn(&x, i, i % 50 == 7 ? K_LOST : i % 200 == 3 ? K_WARMUP : K_OK);
		if (i % 97 == 5 && x.t[T4W]) {
			x.t[T4W] += 400000 + i;	/* a spike in the network segment */
			x.t[T4SW] += 400000 + i;
		}
		if (x.st & TF_LOST) {
			sess.c.lost++;
		}
		txn_account(&x);
		log_push(&x);
	}
	report_prepare();
	return mem;
}

static void plot_fixture_free(uint8_t *mem)
{
	int k;

	for (k = 0; k < NMETRIC; k++) {
		free(sess.h[k].bucket);
		free(sess.h[k].out);
	}
	free(sess.breach);
	free(mem);
	memset(&sess, 0, sizeof(sess));
}

/* Draw the fixture's ring into a temp file; its text (malloc'd) or NULL. */
static char *plot_fixture_draw(int *r)
{
	struct plot_src src = { .n = sess.log.n, .what = "" };
	char path[128], *text;

	tmp_path(path, sizeof(path), "plot");
	plotter.fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	*r = plot_draw(&src);
	close(plotter.fd);
	plotter.fd = -1;
	text = read_file(path);
	unlink(path);
	return text;
}

static void test_plot(void)
{
	struct plot_series ser;
	int64_t vals[1000] = { 0 }, sorted[1000];
	char buf[64], id[64];
	uint8_t *mem;
	uint64_t i, v;
	bool good = true;
	unsigned prev = 0;
	char *svg_doc;
	int r, k;

	/* the option: a file, not the log or JSON file; it gives the ring --log-records */
	{
		static const struct {
			int want;
			const char *argv, *needle;
		} c[] = {
			{ 0, "-a 10.0.0.2 --plot p.svg", "" },
			{ 0, "-a 10.0.0.2 --plot p.svg --log-records 500", "" },
			{ 0, "--plot p.svg --once", "" },
			{ 0, "--analyze x.log --plot p.svg", "" },
			{ -1, "-a 10.0.0.2 --log-records 500", "--log-records: needs --log" },
			{ -1, "-a 10.0.0.2 --plot same -l same", "--plot: 'same' is also the --log file" },
			{ -1, "--analyze x.log --plot same --json same", "--plot: 'same' is also the --json file" },
			{ -1, "-a 10.0.0.2 --plot", "--plot: needs a value" },
		};
		size_t j;

		for (j = 0; j < ARRAY_SIZE(c); j++) {
			struct args a;
			char *out, *err, name[160];
			int rr = parse_str(c[j].argv, &a, &out, &err);

			snprintf(name, sizeof(name), "plot: opt_parse '%s' -> %d", c[j].argv, c[j].want);
			ok(rr == c[j].want && (c[j].want == 0 ? !*err : one_rant_line(err) && strstr(err, c[j].needle)) &&
			   (c[j].want || !strcmp(opts.plot, "p.svg")), name, "returned %d, stderr '%s'", rr, err);
			free(out);
			free(err);
		}
		reset_globals();
	}

	/* log buckets: monotonic, within 1/16 of the value */
	for (i = 0; i < 200000; i++) {
		int64_t x = (int64_t)(i < 100000 ? i : rnd() % 2000000000000ULL);
		unsigned b = plot_lb(x);

		good &= b < PLOT_LB && llabs(plot_lb_value(b) - x) <= x / 16 + 1;
		good &= i >= 100000 || b >= prev;
		prev = b;
	}
	ok(good && plot_lb(-5) == 0, "plot: log buckets are monotonic and within 1/16 of the value", "failed");

	/* per-bin p50/p99 against a sort */
	good = plot_series_init(&ser, M_RTT) == 0;
	for (k = 0; good && k < 1000; k++) {
		vals[k] = rnd_range(5000, 900000);
		ser.bmin[0] = !k || vals[k] < ser.bmin[0] ? vals[k] : ser.bmin[0];
		ser.bmax[0] = !k || vals[k] > ser.bmax[0] ? vals[k] : ser.bmax[0];
		ser.bn[0]++;
		ser.lh[plot_lb(vals[k])]++;
	}
	memcpy(sorted, vals, sizeof(vals));
	qsort(sorted, 1000, sizeof(sorted[0]), cmp_i64);
	good = good && llabs(plot_bin_pct(&ser, 0, 50) - sorted[499]) <= sorted[499] / 16 + 1 &&
	       llabs(plot_bin_pct(&ser, 0, 99) - sorted[989]) <= sorted[989] / 16 + 1 &&
	       plot_bin_pct(&ser, 0, 100) == sorted[999];
	ok(good, "plot: a bin's p50 and p99 are within one log bucket of the sorted values", "p50 %" PRId64 " vs %" PRId64,
	   plot_bin_pct(&ser, 0, 50), sorted[499]);
	free(ser.bmin);
	free(ser.bmax);
	free(ser.bn);
	free(ser.lh);
	free(ser.rt);
	free(ser.rv);

	/* ticks and labels */
	ok(nice_step(8, 10) == 1 && nice_step(100, 5) == 20 && nice_step(33, 10) == 5 && nice_step(0.9, 10) == 0.1,
	   "plot: round tick steps (1, 2, 5 times a power of ten)", "%g %g %g", nice_step(8, 10), nice_step(100, 5),
	   nice_step(33, 10));
	{
		struct axis a = { 3700, 870000, 0, 100, true }, b = { 13, 87, 0, 100, false };

		ax_round(&a, 5);
		ax_round(&b, 10);
		ok(a.lo == 1000 && a.hi == 1000000 && b.lo == 10 && b.hi == 90, "plot: axes widen to decades (log) and round ticks (linear)",
		   "log %g..%g lin %g..%g", a.lo, a.hi, b.lo, b.hi);
	}
	ok(!strcmp(plot_us3(buf, sizeof(buf), 12345), "12.345") && !strcmp(plot_us3(id, sizeof(id), -1500), "-1.500"),
	   "plot: table values are exact ns written as us", "'%s' '%s'", buf, id);
	ok(!strcmp(plot_dur(buf, sizeof(buf), 850), "850 ns") && !strcmp(plot_dur(id, sizeof(id), 12500), "12.5 \xc2\xb5s"),
	   "plot: axis labels carry their unit", "'%s' '%s'", buf, id);

	/* a small run: every transaction drawn; the table is the histogram's numbers */
	mem = plot_fixture(1000, 200000);
	snprintf(opts.cmdline, sizeof(opts.cmdline), "rant -a <h&st> \"x\" \x01\xc3\xa9");
	svg_doc = plot_fixture_draw(&r);
	ok(!r && svg_doc && !strncmp(svg_doc, "<?xml", 5) && strstr(svg_doc, "</svg>\n") &&
	   strlen(strstr(svg_doc, "</svg>\n")) == 7, "plot: small run drawn, one complete SVG document", "r=%d", r);
	good = svg_doc != NULL;
	for (k = 0; good && k < run.side.nmetrics; k++) {
		const struct hist *h = &sess.h[run.side.metrics[k]];
		const char *key = metric_def[run.side.metrics[k]].key;
		int j;

		if (run.side.metrics[k] != M_RTT && run.side.metrics[k] != M_RESPONSE && run.side.metrics[k] != M_NETWORK) {
			continue;
		}
		snprintf(id, sizeof(id), "%s-samples", key);
		snprintf(buf, sizeof(buf), "%" PRIu64, h->n);
		good &= !strcmp(svg_id_text(svg_doc, id), buf);
		for (j = 0; j < NPCT; j++) {
			bool approx = false;

			snprintf(id, sizeof(id), "%s-p%s", key, pct_key[j]);
			good &= !strcmp(svg_id_text(svg_doc, id), plot_us3(buf, sizeof(buf), hist_pct(h, pct_value[j], &approx)));
		}
		snprintf(id, sizeof(id), "%s-max", key);
		good &= !strcmp(svg_id_text(svg_doc, id), plot_us3(buf, sizeof(buf), h->max));
	}
	ok(good, "plot: samples, percentiles and max in the picture equal the statistics (rtt, response, network)",
	   "rtt-p99 '%s'", svg_doc ? svg_id_text(svg_doc, "rtt-p99") : "");
	v = sess.h[M_RTT].n + sess.h[M_RESPONSE].n + sess.h[M_NETWORK].n;
	ok(svg_doc && count_str(svg_doc, "h.1") == (int)v, "plot: small run: one dot per sample of each series",
	   "%d dots, %" PRIu64 " samples", svg_doc ? count_str(svg_doc, "h.1") : -1, v);
	ok(svg_doc && count_str(svg_doc, "l6 6") == 20, "plot: the 20 lost transactions are marked (one bin each)", "%d",
	   svg_doc ? count_str(svg_doc, "l6 6") : -1);
	ok(svg_doc && count_str(svg_doc, "h8l-4 7z") == (int)sess.c.breaches && sess.c.breaches > 5 && strstr(svg_doc, ">threshold 200 "),
	   "plot: threshold line and every breach marked", "%d marks, %" PRIu64 " breaches",
	   svg_doc ? count_str(svg_doc, "h8l-4 7z") : -1, sess.c.breaches);
	snprintf(buf, sizeof(buf), ">seq %" PRIu64 "<", sess.h[M_RTT].max_seq);
	ok(svg_doc && strstr(svg_doc, buf) && strstr(svg_doc, "The 15 worst transactions by rtt") &&
	   strstr(svg_doc, buf) < strstr(svg_doc, ">seq ") + 1 + strlen(buf), "plot: the worst transaction comes first",
	   "want %s", buf);
	ok(svg_doc && strstr(svg_doc, "rant -a &lt;h&amp;st&gt; &quot;x&quot; ???") && !strstr(svg_doc, "<h&"),
	   "plot: text from the command line is escaped, non-ASCII replaced", "failed");
	free(svg_doc);
	plot_fixture_free(mem);

	/* a large run: bands instead of dots, still the same numbers */
	mem = plot_fixture(PLOT_RAW * 3, -1);
	svg_doc = plot_fixture_draw(&r);
	snprintf(buf, sizeof(buf), "%" PRIu64, sess.h[M_RTT].n);
	ok(!r && svg_doc && !strstr(svg_doc, "h.1") && count_str(svg_doc, "fill-opacity=\"0.22\"") >= 1 && count_str(svg_doc, "fill-opacity=\"0.12\"") >= 2 &&
	   !strcmp(svg_id_text(svg_doc, "rtt-samples"), buf) && !strstr(svg_doc, "h8l-4 7z") && !strstr(svg_doc, ">threshold "),
	   "plot: large run: min-max bands per bin, no dots, no threshold", "r=%d", r);
	free(svg_doc);

	/* a failed write is reported, not lost */
	plotter.fd = open("/dev/full", O_WRONLY);
	{
		struct plot_src src = { .n = sess.log.n, .what = "" };

		r = plotter.fd >= 0 ? plot_draw(&src) : -ENOENT;
	}
	close(plotter.fd);
	plotter.fd = -1;
	ok(r == -ENOSPC, "plot: a write to a full disk returns -ENOSPC", "r=%d", r);
	plot_fixture_free(mem);
	reset_globals();
}

/* ------------------------------------------- performance: answers without IP_PKTINFO */

/* a v4-mapped 127.0.0.x:port, as the reflector's dual-stack socket names its peers */
static struct sockaddr_in6 mapped_lo(unsigned last, unsigned port)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };

	a.sin6_addr.s6_addr[10] = 0xff;
	a.sin6_addr.s6_addr[11] = 0xff;
	a.sin6_addr.s6_addr[12] = 127;
	a.sin6_addr.s6_addr[15] = (uint8_t)last;
	return a;
}

static struct txn perf_win[256];

/* The loop's side of the source watch: its answers, withdrawals and questions, no thread. */
static void perf_watch_loop(const struct src_query *q, const struct sockaddr_in6 *peer)
{
	struct sockaddr_in6 other_port = mapped_lo(1, 40001);
	const struct sockaddr *to = (const struct sockaddr *)peer;
	uint64_t v = 0;

	ok(!reflect_src_known(to), "perf: no answer from the watch yet: the source is named", "-");
	srcw_publish(q, true);
	ok(reflect_src_known(to), "perf: the watch's answer 'same': answers to that peer and address go without IP_PKTINFO", "-");
	ok(!reflect_src_known((const struct sockaddr *)&other_port), "perf: the peer's other port: named", "-");
	refl.pi.v6.ipi6_addr = mapped_lo(2, 0).sin6_addr;
	ok(!reflect_src_known(to), "perf: another destination address: named", "-");
	refl.pi.v6.ipi6_addr = mapped_lo(1, 0).sin6_addr;
	refl.pi_level = 0;
	ok(!reflect_src_known(to), "perf: no IP_PKTINFO received: nothing known", "-");
	refl.pi_level = IPPROTO_IPV6;
	/* routing changed: the watch withdraws its answer, the next pong names its source */
	srcw_publish(q, false);
	ok(!reflect_src_known(to), "perf: a withdrawn answer is taken at the next pong", "-");
	srcw_publish(q, true);
	/* the watch holds the lock while it answers again: never a stale answer, never a wait */
	pthread_mutex_lock(&srcwatch.lock);
	srcw_publish(q, true);
	ok(!reflect_src_known(to), "perf: an answer being written is not read: named meanwhile", "-");
	pthread_mutex_unlock(&srcwatch.lock);
	ok(reflect_src_known(to), "perf: ... and read at the next pong", "-");
	/* a new session keeps the answer: it is about a peer and an address, withdrawn on any change */
	run.win.slot = perf_win;
	run.win.mask = 255;
	reflect_start(0x1234);
	ok(reflect_src_known(to), "perf: a new session keeps the watch's answer", "-");
	/* questions: after a named pong, each one once, another at most once a second */
	srcwatch.on = true;
	srcwatch.ev_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	refl.named = true;
	srcw_ask(to, sizeof(*peer), 5);
	ok(srcwatch.q_gen == 1 && !memcmp(&srcwatch.q, q, sizeof(*q)) && read(srcwatch.ev_fd, &v, 8) == 8 && v == 1,
	   "perf: a named pong asks the watch, and rings its doorbell", "q_gen=%u v=%" PRIu64, srcwatch.q_gen, v);
	srcw_ask(to, sizeof(*peer), 6);
	srcw_ask((const struct sockaddr *)&other_port, sizeof(other_port), 7);
	ok(srcwatch.q_gen == 1 && read(srcwatch.ev_fd, &v, 8) < 0,
	   "perf: the same question is not asked twice, another not within a second", "q_gen=%u", srcwatch.q_gen);
	srcw_ask((const struct sockaddr *)&other_port, sizeof(other_port), 7 + NSEC_PER_SEC);
	ok(srcwatch.q_gen == 2, "perf: another question a second later", "q_gen=%u", srcwatch.q_gen);
	refl.named = false;
	srcw_ask(to, sizeof(*peer), 9 + 2 * NSEC_PER_SEC);
	ok(srcwatch.q_gen == 2, "perf: a pong that went without IP_PKTINFO asks nothing", "q_gen=%u", srcwatch.q_gen);
	close(srcwatch.ev_fd);
	srcwatch.on = false;
	refl.active = false;
	run.win.slot = NULL;
}

static void test_perf(void)
{
	struct sockaddr_in6 peer = mapped_lo(1, 40000);
	struct src_query q = { .peerlen = sizeof(peer), .level = IPPROTO_IPV6 }, q2;
	char iface[] = "lo";
	uint32_t g;
	int i;

	reset_globals();
	side_set(false);
	memcpy(&q.peer, &peer, sizeof(peer));
	q.pi.v6.ipi6_addr = mapped_lo(1, 0).sin6_addr;
	q.pi.v6.ipi6_ifindex = 1;
	q2 = q;
	q2.pi.v6.ipi6_addr = mapped_lo(2, 0).sin6_addr;
	/* the datagram being answered came to 127.0.0.1 on lo */
	refl.pi_level = IPPROTO_IPV6;
	refl.pi.v6 = q.pi.v6;
	opts.iface = NULL;
	ok(!src_probe(&q), "perf: without -i no probe: the source is always named", "-");
	srcw_start();
	ok(!srcwatch.on && !reflect_src_known((struct sockaddr *)&peer),
	   "perf: without -i no source watch, and no answer goes without IP_PKTINFO", "-");
	opts.iface = iface;
	if (geteuid() == 0) {
		ok(src_probe(&q), "perf: -i lo, ping to the kernel's own choice: answers need no IP_PKTINFO", "-");
		ok(!src_probe(&q2), "perf: a second address is never the kernel's choice for the peer", "-");
	}
	pthread_mutex_init(&srcwatch.lock, NULL);
	perf_watch_loop(&q, &peer);
	reset_globals();
	side_set(false);
	if (geteuid() != 0) {
		opts.iface = NULL;
		return;
	}
	/* the thread: a question from the loop is answered, off the loop */
	opts.iface = iface;
	refl.pi_level = IPPROTO_IPV6;
	refl.pi.v6 = q.pi.v6;
	refl.named = true;
	srcw_start();
	g = __atomic_load_n(&srcwatch.a_gen, __ATOMIC_ACQUIRE);
	srcw_ask((struct sockaddr *)&peer, sizeof(peer), 1);
	for (i = 0; i < 5000 && __atomic_load_n(&srcwatch.a_gen, __ATOMIC_ACQUIRE) == g; i++) {
		usleep(1000);
	}
	ok(srcwatch.on && reflect_src_known((struct sockaddr *)&peer),
	   "perf: the source watch answers the loop's question from its own thread", "on=%d gen=%u", srcwatch.on,
	   srcwatch.a_gen);
	srcw_stop();
	ok(!srcwatch.on, "perf: the source watch stops", "-");
	opts.iface = NULL;
	reset_globals();
}

/* A datagram on fd within a second: its length and sender, or -1. */
static ssize_t ss_recv_from(int fd, struct sockaddr_storage *from)
{
	struct pollfd pf = { fd, POLLIN, 0 };
	socklen_t fl = sizeof(*from);
	char b[256];

	if (poll(&pf, 1, 1000) != 1) {
		return -1;
	}
	return recvfrom(fd, b, sizeof(b), MSG_DONTWAIT, (struct sockaddr *)from, &fl);
}

/* The v4-mapped form of a loopback IPv4 address and port. */
static struct sockaddr_in6 ss_mapped(const struct sockaddr_in *a)
{
	struct sockaddr_in6 m = mapped_lo(1, ntohs(a->sin_port));

	memcpy(&m.sin6_addr.s6_addr[12], &a->sin_addr, 4);
	return m;
}

/* refl.pi: the datagram being answered was sent to 127.0.0.<last> (or ADDR, v4-mapped) */
static void ss_pinged(uint32_t addr)
{
	refl.pi_level = IPPROTO_IPV6;
	memset(&refl.pi, 0, sizeof(refl.pi));
	refl.pi.v6.ipi6_addr = mapped_lo(1, 0).sin6_addr;
	addr = htonl(addr);
	memcpy(&refl.pi.v6.ipi6_addr.s6_addr[12], &addr, 4);
	refl.pi.v6.ipi6_ifindex = 1;
}

/*
 * Two loopback clients, each bound to a port of its own: their sockets in
 * fd[], their addresses (with the ports) in c[], v4-mapped in m[].  False
 * (both closed) when the host refuses.
 */
static bool ss_clients(int fd[2], struct sockaddr_in c[2], struct sockaddr_in6 m[2])
{
	int i;

	for (i = 0; i < 2; i++) {
		socklen_t l = sizeof(c[i]);

		fd[i] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		memset(&c[i], 0, sizeof(c[i]));
		c[i].sin_family = AF_INET;
		c[i].sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (fd[i] < 0 || bind(fd[i], (struct sockaddr *)&c[i], sizeof(c[i])) < 0 ||
		    getsockname(fd[i], (struct sockaddr *)&c[i], &l) < 0) {
			if (fd[i] >= 0) {
				close(fd[i]);
			}
			if (i) {
				close(fd[0]);
			}
			return false;
		}
		m[i] = ss_mapped(&c[i]);
	}
	return true;
}

/*
 * A session's own socket (reflect_ss_open), on real loopback sockets: bound
 * to the address pinged and the reflector's port, connected to the peer;
 * the peer's datagrams come to it and another client's to the shared
 * socket; the session's answers go out on it, keyed from 0, another
 * peer's on the shared socket with the shared socket's own keys; closed,
 * the shared socket and its keys are back.  And where there is none to be
 * had: no address pinged known, multicast, broadcast, an address not this
 * host's.
 */
static void test_session_socket(void)
{
	struct sockaddr_in6 any = { .sin6_family = AF_INET6 }, m[2], p6, q6;
	struct sockaddr_in me = { .sin_family = AF_INET }, c[2];
	struct sockaddr_storage from, got;
	socklen_t l = sizeof(any);
	int sh, a, b, fd[2], off = 0, shared_key = 7, port;
	uint8_t buf[PROTO_HDR_LEN] = { 0 };
	bool good;

	reset_globals();
	side_set(false);
	opts.mode = MODE_REFLECT;
	sh = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (sh < 0 || setsockopt(sh, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) < 0 ||
	    bind(sh, (struct sockaddr *)&any, sizeof(any)) < 0 ||
	    getsockname(sh, (struct sockaddr *)&any, &l) < 0 ||
	    setopt_int(sh, SOL_SOCKET, SO_REUSEPORT, 1) < 0 || !ss_clients(fd, c, m)) {
		ok(false, "session socket: loopback sockets", "%s", strerror(errno));
		return;
	}
	a = fd[0];
	b = fd[1];
	p6 = m[0];
	q6 = m[1];
	port = ntohs(any.sin6_port);
	opts.port = (unsigned)port;
	me.sin_port = any.sin6_port;
	connect(a, (struct sockaddr *)&me, sizeof(me));
	connect(b, (struct sockaddr *)&me, sizeof(me));
	run.sock_fd = sh;
	run.ts.next_key = (uint32_t)shared_key;
	run.ts.key_cmsg = false;

	/* the session of client a, which pinged 127.0.0.1 */
	memcpy(&refl.peer, &p6, sizeof(p6));
	refl.peerlen = sizeof(p6);
	ss_pinged(INADDR_LOOPBACK);
	reflect_ss_prepare(AF_INET);
	reflect_ss_open((struct sockaddr *)&p6, 0);
	l = sizeof(from);
	good = refl.ss_on && refl.on_ss && run.sock_fd != sh && run.sock_fd == refl.ss_fd &&
	       run.ts.next_key == (uint32_t)shared_key && refl.ss_base == (uint32_t)shared_key &&
	       !run.ts.key_cmsg && refl.sh.fd == sh &&
	       refl.sh.next_key == (uint32_t)shared_key && refl.shared_due &&
	       getsockname(run.sock_fd, (struct sockaddr *)&from, &l) == 0 &&
	       !memcmp(&((struct sockaddr_in *)&from)->sin_addr, &me.sin_addr, 4) &&
	       ((struct sockaddr_in *)&from)->sin_port == me.sin_port;
	l = sizeof(got);
	good = good && getpeername(run.sock_fd, (struct sockaddr *)&got, &l) == 0 &&
	       ((struct sockaddr_in *)&got)->sin_port == c[0].sin_port;
	good = good && result.ss_got == SS_OWN;
	ok(good, "session socket: bound to the address pinged and the port, connected to the peer, "
	   "the session's keys going on from its counter's 0 (reported: own_socket true)",
	   "on=%d fd=%d sh=%d key=%u", refl.ss_on, run.sock_fd, sh, run.ts.next_key);
	send(a, buf, sizeof(buf), 0);
	send(b, buf, sizeof(buf), 0);
	ok(ss_recv_from(run.sock_fd, &got) == sizeof(buf) && ss_recv_from(sh, &got) == sizeof(buf) &&
	   sa_same(&got, (struct sockaddr *)&q6),
	   "session socket: the peer's datagram comes to it, another client's to the shared socket", "-");

	/* the answers: the session's on its socket, another peer's on the shared one */
	refl.on_ss = true;
	reflect_send(buf, sizeof(buf), (struct sockaddr *)&p6, sizeof(p6));
	good = !refl.sent_shared && ss_recv_from(a, &got) == sizeof(buf) &&
	       ((struct sockaddr_in *)&got)->sin_port == me.sin_port && !refl.named;
	refl.on_ss = false;
	ss_pinged(INADDR_LOOPBACK);
	reflect_send(buf, sizeof(buf), (struct sockaddr *)&q6, sizeof(q6));
	good = good && refl.sent_shared && ss_recv_from(b, &got) == sizeof(buf) &&
	       ((struct sockaddr_in *)&got)->sin_port == me.sin_port &&
	       run.ts.next_key == (uint32_t)shared_key && refl.sh.next_key == (uint32_t)shared_key + 1 &&
	       run.sock_fd == refl.ss_fd;
	ok(good, "session socket: the session's answer on it, another peer's on the shared socket with its own key",
	   "sent_shared=%d key=%u shared key=%u", refl.sent_shared, run.ts.next_key, refl.sh.next_key);

	/* a datagram of the shared socket: whose it is */
	ss_pinged(INADDR_LOOPBACK);
	reflect_shared_whose((struct sockaddr *)&p6);
	good = refl.on_ss && !refl.off_addr && reflect_peer_ok((struct sockaddr *)&p6);
	ss_pinged(INADDR_LOOPBACK + 1);
	reflect_shared_whose((struct sockaddr *)&p6);
	good = good && !refl.on_ss && refl.off_addr && !reflect_peer_ok((struct sockaddr *)&p6);
	ss_pinged(INADDR_LOOPBACK);
	reflect_shared_whose((struct sockaddr *)&q6);
	good = good && !refl.on_ss && !refl.off_addr && !reflect_peer_ok((struct sockaddr *)&q6);
	ok(good, "session socket: on the shared socket, the peer's ping to its address is the session's, "
	   "to another address refused, another peer's not the session's", "-");
	/* the shared socket's TX stamps: below ss_base the session's first pongs', not after a rekey */
	good = reflect_sh_ours((uint32_t)shared_key - 1) && !reflect_sh_ours((uint32_t)shared_key) &&
	       !reflect_sh_ours((uint32_t)shared_key + 1);
	refl.sh_rekeyed = true;
	good = good && !reflect_sh_ours((uint32_t)shared_key - 1);
	refl.sh_rekeyed = false;
	ok(good, "session socket: a shared socket's stamp is the session's below ss_base only, "
	   "and none after its keys restarted", "-");

	/*
	 * a kernel that refuses the shared socket's key cmsg (EINVAL): the send
	 * falls back to its counter and re-keys it, not the session's keys
	 */
	kops.sendmsg = hf_sendmsg;
	hf_refuse_key = true;
	refl.sh.key_cmsg = true;
	refl.key0 = 5;
	refl.on_ss = false;
	ss_pinged(INADDR_LOOPBACK);
	good = reflect_send(buf, sizeof(buf), (struct sockaddr *)&q6, sizeof(q6)) == sizeof(buf) &&
	       refl.sent_shared && ss_recv_from(b, &got) == sizeof(buf);
	ok(good && refl.key0 == 5 && refl.sh_rekeyed && !refl.sh.key_cmsg &&
	   refl.sh.next_key == 1 && run.ts.next_key == (uint32_t)shared_key && run.sock_fd == refl.ss_fd,
	   "session socket: the shared socket's key refused: its counter re-keyed, the session's keys kept",
	   "key0=%u rekeyed=%d cmsg=%d shared key=%u", refl.key0, refl.sh_rekeyed, refl.sh.key_cmsg,
	   refl.sh.next_key);
	hf_refuse_key = false;
	kops_restore();
	refl.sh.next_key = (uint32_t)shared_key + 1;
	refl.sh_rekeyed = false;

	reflect_ss_close();
	ok(!refl.ss_on && run.sock_fd == sh && run.ts.next_key == (uint32_t)shared_key + 1 &&
	   refl.spare_on && refl.spare_family == AF_INET,
	   "session socket: closed, the shared socket and its keys are back, the next one made ready",
	   "fd=%d key=%u spare=%d", run.sock_fd, run.ts.next_key, refl.spare_on);

	/* none to be had: the session stays on the shared socket, nothing changed */
	refl.pi_level = 0;
	reflect_ss_open((struct sockaddr *)&p6, 0);
	good = !refl.ss_on && run.sock_fd == sh && result.ss_got == SS_SHARED &&
	       strstr(result.ss_why, "not known");
	ss_pinged(0xe0000001);	/* 224.0.0.1 */
	reflect_ss_open((struct sockaddr *)&p6, 0);
	good = good && !refl.ss_on && run.sock_fd == sh && strstr(result.ss_why, "not a unicast");
	ss_pinged(INADDR_BROADCAST);
	reflect_ss_open((struct sockaddr *)&p6, 0);
	good = good && !refl.ss_on && run.sock_fd == sh && result.ss_got == SS_SHARED;
	ok(good, "session socket: none where the address pinged is unknown, multicast or broadcast, "
	   "and the reason kept for the report", "why=%s", result.ss_why);
	ss_pinged(0xc0000201);	/* 192.0.2.1: not this host's, bind refuses it */
	reflect_ss_open((struct sockaddr *)&p6, 0);
	ok(!refl.ss_on && !refl.on_ss && run.sock_fd == sh && run.ts.next_key == (uint32_t)shared_key + 1 &&
	   result.ss_got == SS_SHARED && strstr(result.ss_why, "bind or connect") &&
	   strstr(result.ss_why, strerror(EADDRNOTAVAIL)),
	   "session socket: none where bind refuses the address: the shared socket, its keys, serve on; "
	   "the reason (bind's error) kept for the report",
	   "on=%d fd=%d why=%s", refl.ss_on, run.sock_fd, result.ss_why);
	{
		char *text = NULL;
		size_t tl = 0;
		struct report rep;
		FILE *f = open_memstream(&text, &tl);

		sess.id = 0x5e55;
		report_compute(&rep);
		session_report(f, &rep);
		json_report(f, &rep, 0);
		result.ss_got = SS_OWN;
		json_report(f, &rep, 0);
		result.ss_got = SS_NOT_YET;
		json_report(f, &rep, 0);
		fclose(f);
		ok(text && strstr(text, "Session socket: none, answered on the shared socket (bind or connect") &&
		   strstr(text, "\"own_socket\": false, \"own_socket_why\": \"bind or connect") &&
		   strstr(text, "\"own_socket\": true, \"own_socket_why\": null") &&
		   strstr(text, "\"own_socket\": null, \"own_socket_why\": null"),
		   "session socket: the report says a session had none and why; the JSON says own, not, or "
		   "not yet", "%.4000s", text ? text : "");
		free(text);
		sess.id = 0;
	}
	refl.pi_level = IPPROTO_IPV6;
	memset(&refl.pi, 0, sizeof(refl.pi));
	refl.pi.v6.ipi6_addr.s6_addr[0] = 0xff;
	refl.pi.v6.ipi6_addr.s6_addr[1] = 0x02;
	refl.pi.v6.ipi6_addr.s6_addr[15] = 1;
	any.sin6_port = htons(40000);
	reflect_ss_open((struct sockaddr *)&any, 0);
	ok(!refl.ss_on, "session socket: none for an IPv6 multicast address", "-");
	if (refl.spare_on) {
		close(refl.spare_fd);
	}
	close(sh);
	close(a);
	close(b);
	reset_globals();
}

/*
 * What came to a session's socket between its bind and its connect
 * (reflect_recv_pre), on real loopback sockets: each datagram read with
 * its sender (v4-mapped, as the dual-stack shared socket names it), the
 * session's own only from its peer and while the socket serves, answered
 * from the address pinged; none left: done, and a socket whose connect
 * failed closed.
 */
static void test_session_pre(void)
{
	struct sockaddr_in me = { .sin_family = AF_INET }, c[2];
	struct sockaddr_in6 m[2], p6, q6;
	socklen_t l = sizeof(me);
	int pre, a, b, fd[2], n;
	uint8_t buf[PROTO_HDR_LEN] = { 0 };
	struct rx rx;
	bool good;

	reset_globals();
	side_set(false);
	opts.mode = MODE_REFLECT;
	pre = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (pre < 0 || bind(pre, (struct sockaddr *)&me, sizeof(me)) < 0 ||
	    getsockname(pre, (struct sockaddr *)&me, &l) < 0 || !ss_clients(fd, c, m)) {
		ok(false, "session socket before its connect: loopback sockets", "%s", strerror(errno));
		return;
	}
	a = fd[0];
	b = fd[1];
	p6 = m[0];
	q6 = m[1];
	memcpy(&refl.peer, &p6, sizeof(p6));
	refl.peerlen = sizeof(p6);
	refl.rxcap = sizeof(buf);
	refl.rx = buf;
	/* it serves: the session's socket is the one in use */
	run.sock_fd = pre;
	refl.ss_on = true;
	refl.pre_on = true;
	refl.pre_fd = pre;
	refl.pre_close = false;
	ss_pinged(INADDR_LOOPBACK);
	refl.pre_pi_level = refl.pi_level;
	refl.pre_pi = refl.pi;
	refl.pi_level = 0;
	sendto(a, buf, sizeof(buf), 0, (struct sockaddr *)&me, sizeof(me));
	sendto(b, buf, sizeof(buf), 0, (struct sockaddr *)&me, sizeof(me));
	n = 0;
	good = true;
	while (wait_readable(pre, 1000) && reflect_recv_pre(&rx) == 1) {
		bool from_a = sa_same(&refl.peer, (struct sockaddr *)&rx.from);

		good = good && rx.from.ss_family == AF_INET6 && rx.fromlen == sizeof(p6) &&
		       (from_a || sa_same((struct sockaddr_storage *)&q6, (struct sockaddr *)&rx.from)) &&
		       refl.on_ss == from_a && refl.pi_level == IPPROTO_IPV6 &&
		       !memcmp(&refl.pi, &refl.pre_pi, sizeof(refl.pi));
		n++;
		if (n == 2) {
			break;
		}
	}
	ok(good && n == 2 && refl.pre_on && run.sock_fd == pre,
	   "session socket before its connect: each datagram with its sender, the session's only from its "
	   "peer, both to the address pinged", "n=%d", n);
	ok(reflect_recv_pre(&rx) == 0 && !refl.pre_on && fcntl(pre, F_GETFD) >= 0 && run.sock_fd == pre,
	   "session socket before its connect: none left, done; a socket that serves stays open", "-");

	/* its connect failed: the shared socket is in use; read, then closed */
	run.sock_fd = a;
	refl.ss_on = false;
	refl.pre_on = true;
	refl.pre_close = true;
	sendto(a, buf, sizeof(buf), 0, (struct sockaddr *)&me, sizeof(me));
	good = wait_readable(pre, 1000) && reflect_recv_pre(&rx) == 1 && !refl.on_ss &&
	       run.sock_fd == a && sa_same(&refl.peer, (struct sockaddr *)&rx.from);
	good = good && reflect_recv_pre(&rx) == 0 && !refl.pre_on && fcntl(pre, F_GETFD) < 0 &&
	       errno == EBADF;
	ok(good, "session socket whose connect failed: its peer's datagram read (not the session's socket's), "
	   "then the socket closed, the shared socket in use", "-");
	close(a);
	close(b);
	reset_globals();
}

/* The SVG's declared height, from its root element. */
static double svg_height(const char *svg_doc)
{
	const char *p = svg_doc ? strstr(svg_doc, " height=\"") : NULL;

	return p ? atof(p + 9) : 0;
}

/* The largest y="..." in the document: nothing may be drawn below the declared height. */
static double svg_max_y(const char *svg_doc)
{
	const char *p = svg_doc;
	double m = 0;

	while (p && (p = strstr(p, " y=\""))) {
		double y = atof(p + 4);

		m = y > m ? y : m;
		p += 4;
	}
	return m;
}

/*
 * --plot's one-way series (drawn only when the clocks are trusted) and its
 * small panels per class and per size (their numbers the rows' histograms).
 */
static void test_plot_panels(void)
{
	uint64_t want[4] = { 0 }, lost[4] = { 0 }, i;
	char *svg_doc, id[48], buf[64], name[96];
	uint8_t *mem;
	bool good;
	int r, k;

	/* one-way known (a veth): forward and backward are series, in the legend and the table */
	mem = plot_fixture(1000, -1);
	run.ow_evidence = OW_VETH;
	run.host_boot_id = result.srv_phc.boot_id = 0x0123456789abcdefULL;	/* one kernel */
	result.fin_acked = true;
	svg_doc = plot_fixture_draw(&r);
	snprintf(buf, sizeof(buf), "%" PRIu64, sess.h[M_FORWARD].n);
	good = !r && svg_doc && sess.h[M_FORWARD].n &&
	       !strcmp(svg_id_text(svg_doc, "forward-samples"), buf);
	snprintf(buf, sizeof(buf), "%" PRIu64, sess.h[M_BACKWARD].n);
	good = good && !strcmp(svg_id_text(svg_doc, "backward-samples"), buf) &&
	       strstr(svg_doc, ">forward one-way (T2-T1 wire)</text>") &&
	       strstr(svg_doc, ">backward one-way (T4-T3 wire)</text>");
	ok(good, "plot panels: one-way known: forward and backward in the legend and the table",
	   "r=%d forward-samples '%s'", r, svg_doc ? svg_id_text(svg_doc, "forward-samples") : "");
	i = sess.h[M_RTT].n + sess.h[M_RESPONSE].n + sess.h[M_NETWORK].n + sess.h[M_FORWARD].n +
	    sess.h[M_BACKWARD].n;
	ok(svg_doc && count_str(svg_doc, "h.1") == (int)i &&
	   strstr(svg_doc, "stroke=\"" OI_SKY "\"") && strstr(svg_doc, "stroke=\"" OI_PURPLE "\""),
	   "plot panels: one-way known: a dot per one-way sample, in their colours",
	   "%d dots, %" PRIu64 " samples", svg_doc ? count_str(svg_doc, "h.1") : -1, i);
	ok(svg_doc && !strstr(svg_doc, "Per class") && !strstr(svg_doc, "Per size") &&
	   !strstr(svg_doc, "-title\""), "plot panels: a plain run has no class or size panels",
	   "failed");
	free(svg_doc);

	/* one-way not known (nothing shows the clocks agree): measured, not drawn */
	run.ow_evidence = OW_NONE;
	svg_doc = plot_fixture_draw(&r);
	ok(!r && svg_doc && sess.h[M_FORWARD].n && !strstr(svg_doc, "one-way") &&
	   !strstr(svg_doc, "forward-samples"),
	   "plot panels: one-way not known: no forward or backward series", "r=%d", r);
	free(svg_doc);

	/*
	 * Two classes (seq % 2) and two sizes (64 B, then 256 B from seq 500): the
	 * rows get the fixture's transactions as the emit loop would count them.
	 */
	classes.ncls = 2;
	classes.nsz = 2;
	classes.size[0] = 64;
	classes.size[1] = 256;
	classes.prio[0] = 1;
	classes.prio[1] = 2;
	classes.tos[0] = -1;
	classes.tos[1] = 0x28;
	classes.phase = 1;
	classes.phase_seq0[1] = 500;
	good = cls_alloc(1000) == 0;
	for (i = 0; good && i < sess.log.n; i++) {
		struct txn x;
		int st;
		int64_t v;

		log_get(&sess.log, i, &x, &st);
		if (st == ST_LOST) {
			cls_count(x.seq, CG_LOST);
			lost[x.seq % 2]++;
			lost[2 + (x.seq >= 500)]++;
		} else if (st == ST_OK && metric_value(M_RTT, x.t, &v)) {
			cls_sample(x.seq, v);
			want[x.seq % 2]++;
			want[2 + (x.seq >= 500)]++;
		}
	}
	svg_doc = good ? plot_fixture_draw(&r) : NULL;
	good = !r && svg_doc && strstr(svg_doc, ">Per class and per size: rtt distribution") &&
	       !strcmp(svg_id_text(svg_doc, "class0-title"), "class 0, priority 1") &&
	       !strcmp(svg_id_text(svg_doc, "class1-title"), "class 1, priority 2, tos 0x28") &&
	       !strcmp(svg_id_text(svg_doc, "size64-title"), "size 64 B") &&
	       !strcmp(svg_id_text(svg_doc, "size256-title"), "size 256 B") &&
	       count_str(svg_doc, "-title\"") == 4;
	ok(good, "plot panels: a titled panel per class and per size", "r=%d class1-title '%s'", r,
	   svg_doc ? svg_id_text(svg_doc, "class1-title") : "");
	for (k = 0; svg_doc && k < 4; k++) {
		static const char *const row[] = { "class0", "class1", "size64", "size256" };
		const struct hist *h = &classes.g[k].h;
		bool approx = false;

		snprintf(id, sizeof(id), "%s-samples", row[k]);
		snprintf(buf, sizeof(buf), "%" PRIu64, want[k]);
		good = want[k] > 100 && h->n == want[k] && !strcmp(svg_id_text(svg_doc, id), buf);
		snprintf(id, sizeof(id), "%s-lost", row[k]);
		snprintf(buf, sizeof(buf), "%" PRIu64, lost[k]);
		good = good && !strcmp(svg_id_text(svg_doc, id), buf);
		snprintf(id, sizeof(id), "%s-p99", row[k]);
		plot_us3(buf, sizeof(buf), hist_pct(h, 99, &approx));
		good = good && !strcmp(svg_id_text(svg_doc, id), buf);
		snprintf(id, sizeof(id), "%s-max", row[k]);
		plot_us3(buf, sizeof(buf), h->max);
		good = good && !strcmp(svg_id_text(svg_doc, id), buf);
		snprintf(name, sizeof(name), "plot panels: %s: samples, lost, p99, max", row[k]);
		ok(good, name, "samples '%s', want %" PRIu64, svg_id_text(svg_doc, id), want[k]);
	}
	{
		const char *a = svg_doc ? strstr(svg_doc, "<text id=\"phase64\" x=\"") : NULL;
		const char *b = svg_doc ? strstr(svg_doc, "<text id=\"phase256\" x=\"") : NULL;

		/* 256 B began at seq 500, about half way through the 1000 */
		ok(a && b && atof(a + 22) < PLOT_X0 + 5 &&
		   fabs(atof(b + 23) - (PLOT_X0 + PLOT_X1) / 2) < 60,
		   "plot panels: over time, where each size began is marked", "x %.1f and %.1f",
		   a ? atof(a + 22) : -1, b ? atof(b + 23) : -1);
	}
	ok(svg_doc && svg_max_y(svg_doc) < svg_height(svg_doc) &&
	   svg_max_y(svg_doc) > svg_height(svg_doc) - 40,
	   "plot panels: the declared height holds every panel", "max y %.0f, height %.0f",
	   svg_max_y(svg_doc), svg_height(svg_doc));
	free(svg_doc);
	/* a --size list that repeats a size: each panel keeps an id of its own */
	classes.size[1] = 64;
	svg_doc = plot_fixture_draw(&r);
	ok(!r && svg_doc && !strcmp(svg_id_text(svg_doc, "size64-title"), "size 64 B") &&
	   !strcmp(svg_id_text(svg_doc, "size64-1-title"), "size 64 B") &&
	   /* title, samples, lost, avg, p50, p99, max; with -s app rtt's and tx stack's samples */
	   count_str(svg_doc, "id=\"size64-1-") == 9 && strstr(svg_doc, "id=\"phase64-1\""),
	   "plot panels: a repeated size gets ids of its own", "r=%d ids %d", r,
	   svg_doc ? count_str(svg_doc, "id=\"size64-1-") : -1);
	free(svg_doc);
	for (k = 0; classes.g && k < classes.ng; k++) {
		hist_free(&classes.g[k].h);
		for (i = 0; i < GX_N; i++) {
			hist_free(&classes.g[k].x[i]);
		}
	}
	free(classes.g);
	plot_fixture_free(mem);
	reset_globals();
	cls_defaults();
}

/*
 * Arithmetic without libm (num_*) against libm's, which this test links:
 * floor, ceil and llround exactly, sqrt and log10 to a few ulps, powers of
 * ten exactly where the plot relies on it.
 */
static void test_num(void)
{
	static const double fixed[] = {
		0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, 1e-300, 3.7, -3.7,
		4503599627370495.5, 4503599627370497.0, -4503599627370497.0, 1e15 + 0.5, 99999.999,
		1e300, 123456789.123,
	};
	int bad_fl = 0, bad_rd = 0, bad_sq = 0, bad_lg = 0, bad_dec = 0, i, k;

	for (i = 0; i < (int)ARRAY_SIZE(fixed) + 20000; i++) {
		double x = i < (int)ARRAY_SIZE(fixed) ? fixed[i] :
			   (double)(int64_t)rnd() / (double)(1ULL << (rnd() % 64)) / (1 + (double)(rnd() % 1000));

		bad_fl += num_floor(x) != floor(x) || num_ceil(x) != ceil(x);
		if (fabs(x) < 9e18) {
			bad_rd += num_round(x) != llround(x);
		}
		if (x > 0) {
			bad_sq += fabs(num_sqrt(x) - sqrt(x)) > 2.3e-16 * sqrt(x);
			bad_lg += fabs(num_log10(x) - log10(x)) > 4e-15 * (fabs(log10(x)) + 1);
			bad_dec += num_decade(x) != (int)floor(log10(x)) &&
				   fabs(log10(x) - floor(log10(x) + 0.5)) > 1e-12;
		}
	}
	ok(!bad_fl, "num_floor and num_ceil equal floor and ceil", "%d differ", bad_fl);
	ok(!bad_rd, "num_round equals llround (halves away from zero)", "%d differ", bad_rd);
	ok(!bad_sq, "num_sqrt within one ulp of sqrt", "%d differ", bad_sq);
	ok(!bad_lg, "num_log10 within 4e-15 of log10", "%d differ", bad_lg);
	ok(!bad_dec, "num_decade is floor(log10(x))", "%d differ", bad_dec);
	for (k = 0, bad_dec = 0; k <= 22; k++) {
		bad_dec += num_pow10(k) != pow(10, k) || num_log10(num_pow10(k)) != k ||
			   num_decade(num_pow10(k)) != k || num_decade(num_pow10(k) * 0.999) != k - 1;
	}
	ok(!bad_dec, "powers of ten 10^0..10^22: exact, log10 whole, decade exact", "%d differ", bad_dec);
	ok(num_sqrt(0) == 0 && num_sqrt(-4) == 0 && num_sqrt(16) == 4 && num_sqrt(1e-310) > 0,
	   "num_sqrt: 0, negative (0), exact square, subnormal", "%g %g", num_sqrt(16), num_sqrt(1e-310));
}

/*
 * -C without -t and -L without -l, as the earlier rant took them (crucible's
 * bench-rant passes each alone): accepted on both sides, without effect, one
 * line saying so; refused command lines print only their refusal.
 */
/*
 * --cpu-latency: the request written to the CPU latency device (here a
 * file of the test's own) as the kernel reads it, an s32 in us, and held
 * open, close-on-exec; a device that cannot be opened or written a line and
 * the run on, unless the limit was asked for by name; off touches nothing.
 */
static int32_t cpulat_read(const char *path, ssize_t *len)
{
	int32_t v = -12345;
	int fd = open(path, O_RDONLY);

	*len = fd < 0 ? -1 : read(fd, &v, sizeof(v));
	if (fd >= 0) {
		close(fd);
	}
	return v;
}

static int cpulat_try(const char *argv, const char *dev, char **err)
{
	struct args a;
	char *out, *perr;
	struct capture ce;
	int r;

	run_reset();
	r = parse_str(argv, &a, &out, &perr);
	free(out);
	free(perr);
	if (r < 0) {
		*err = strdup("parse failed");
		return -2;
	}
	cpu_latency_dev = dev;
	cap_start(&ce, 2);
	r = cpu_latency_hold();
	*err = cap_stop(&ce);
	return r;
}

static void test_cpu_latency(void)
{
	char dir[] = "/tmp/rant-unit-cpulat.XXXXXX", dev[96], gone[96], *err, *json;
	const char *saved = cpu_latency_dev;
	size_t jlen;
	ssize_t len = -1;
	FILE *m;
	int r, free_fd, after;

	if (!mkdtemp(dir)) {
		ok(false, "cpu_latency: a directory of its own", "%s", strerror(errno));
		return;
	}
	snprintf(dev, sizeof(dev), "%s/dev", dir);
	snprintf(gone, sizeof(gone), "%s/none", dir);
	close(open(dev, O_WRONLY | O_CREAT | O_TRUNC, 0600));

	r = cpulat_try("-a h", dev, &err);
	ok(r == 0 && !*err && run.cpulat.fd >= 0 && run.cpulat.us == 0 && cpulat_read(dev, &len) == 0 &&
	   len == 4 && (fcntl(run.cpulat.fd, F_GETFD) & FD_CLOEXEC),
	   "cpu_latency: by default 0 us written as an s32 and held open, close-on-exec, nothing said",
	   "r=%d err='%s' fd=%d len=%zd", r, err, run.cpulat.fd, len);
	m = open_memstream(&json, &jlen);
	json_room(m);
	fclose(m);
	ok(strstr(json, "\"cpu_latency_us\": 0, \"cpu_latency_why\": null") != NULL,
	   "cpu_latency: the JSON says the limit held", "%s", json);
	free(json);
	free(err);
	close(run.cpulat.fd);

	close(open(dev, O_WRONLY | O_TRUNC));
	r = cpulat_try("-a h --cpu-latency 25", dev, &err);
	ok(r == 0 && !*err && run.cpulat.us == 25 && cpulat_read(dev, &len) == 25 && len == 4,
	   "cpu_latency: --cpu-latency 25 writes 25", "r=%d err='%s' len=%zd", r, err, len);
	free(err);
	close(run.cpulat.fd);

	close(open(dev, O_WRONLY | O_TRUNC));
	r = cpulat_try("-s --cpu-latency off", dev, &err);
	cpulat_read(dev, &len);
	m = open_memstream(&json, &jlen);
	json_room(m);
	fclose(m);
	ok(r == 0 && !*err && run.cpulat.fd < 0 && len == 0 &&
	   strstr(json, "\"cpu_latency_us\": null, \"cpu_latency_why\": \"--cpu-latency off\"") != NULL,
	   "cpu_latency: off opens nothing, writes nothing, and the JSON says why", "r=%d err='%s' len=%zd %s",
	   r, err, len, json);
	free(json);
	free(err);

	/*
	 * a reflector: the limit from start and through sessions; let go after
	 * CPU_LATENCY_GRACE_S without one (never while one runs); again when
	 * the next session begins
	 */
	close(open(dev, O_WRONLY | O_TRUNC));
	r = cpulat_try("--cpu-latency 25", dev, &err);
	{
		const uint64_t grace = CPU_LATENCY_GRACE_S * NSEC_PER_SEC;
		int32_t seq[4] = { 0 };
		uint64_t t0 = run.cpulat.until - grace, end = t0 + 5 * NSEC_PER_SEC;
		bool active = refl.active;
		struct stat st;
		off_t len1, len2, len3;
		int rfd;

		refl.active = false;
		cpu_latency_session();			/* held already: no write */
		cpu_latency_idle(t0 + grace - 1);	/* within the grace from start */
		len1 = stat(dev, &st) == 0 ? st.st_size : -1;
		refl.active = true;
		cpu_latency_idle(t0 + 10 * grace);	/* a session runs: never let go */
		refl.active = false;
		cpu_latency_session_end(end);
		cpu_latency_idle(end + grace - 1);	/* within the grace after the session */
		len2 = stat(dev, &st) == 0 ? st.st_size : -1;
		cpu_latency_idle(end + grace);		/* the grace is over */
		cpu_latency_idle(end + 2 * grace);	/* once */
		len3 = stat(dev, &st) == 0 ? st.st_size : -1;
		cpu_latency_session();			/* the next session */
		cpu_latency_session();			/* once */
		refl.active = active;
		rfd = open(dev, O_RDONLY);
		len = rfd < 0 ? -1 : read(rfd, seq, sizeof(seq));
		if (rfd >= 0) {
			close(rfd);
		}
		ok(r == 0 && !*err && run.cpulat.fd >= 0 && run.cpulat.us == 25 && run.cpulat.on &&
		   t0 <= mono_ns() && len1 == 4 && len2 == 4 && len3 == 8 && len == 12 &&
		   seq[0] == 25 && seq[1] == CPU_LATENCY_NONE && seq[2] == 25,
		   "cpu_latency: a reflector holds 25 from start and through a session, none after the grace without one, 25 for the next",
		   "r=%d err='%s' sizes %lld %lld %lld, %zd writes %d %d %d", r, err, (long long)len1,
		   (long long)len2, (long long)len3, len, seq[0],
		   seq[1], seq[2]);
		close(run.cpulat.fd);
	}
	free(err);

	r = cpulat_try("-a h", gone, &err);
	ok(r == 0 && one_rant_line(err) && strstr(err, "rant: warning: CPU latency limit not held: ") &&
	   strstr(err, gone) && strstr(err, "No such file") && run.cpulat.fd < 0 && run.warn.n == 1 &&
	   strstr(run.cpulat.why, "No such file"),
	   "cpu_latency: no device: one warning line naming it and why, the run goes on", "r=%d err='%s'", r,
	   err);
	free(err);

	r = cpulat_try("-a h --cpu-latency 0", gone, &err);
	ok(r == -1 && one_rant_line(err) && strstr(err, "rant: --cpu-latency: cannot hold 0 us: ") &&
	   strstr(err, "No such file") && run.cpulat.fd < 0,
	   "cpu_latency: no device with the limit asked for by name: refused in one line", "r=%d err='%s'", r,
	   err);
	free(err);

	free_fd = dup(0);
	close(free_fd);
	r = cpulat_try("-a h", "/dev/full", &err);
	after = dup(0);
	close(after);
	ok(r == 0 && one_rant_line(err) && strstr(err, "/dev/full: No space left") && run.cpulat.fd < 0 &&
	   after == free_fd,
	   "cpu_latency: a write the device refuses: not held, said, the descriptor closed",
	   "r=%d err='%s' lowest free fd %d then %d", r, err, free_fd, after);
	free(err);

	cpu_latency_dev = saved;
	unlink(dev);
	rmdir(dir);
	run_reset();
}

static void test_opt_alone(void)
{
	static const struct {
		const char *argv, *says;
		bool cont;
		int64_t lthr;
	} c[] = {
		{ "-C", "--continue: no effect without --threshold", false, -1 },
		{ "-a h -C", "--continue: no effect without --threshold", false, -1 },
		{ "-L 5", "--log-threshold: no effect without --log", false, -1 },
		{ "-a h -L 5 --plot x.svg", "--log-threshold: no effect without --log", false, -1 },
		{ "-a h -C -L 5", "--continue: no effect without --threshold; --log-threshold: no effect without --log",
		  false, -1 },
		{ "-C --analyze x", "--continue: no effect without --threshold", false, -1 },
		{ "-C -t 5 -L 5 -l f", NULL, true, 5000 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct args a;
		char *out, *err, name[160];
		int r = parse_str(c[i].argv, &a, &out, &err);

		snprintf(name, sizeof(name), "'%s': accepted, %s", c[i].argv, c[i].says ? "one line" : "silently");
		ok(r == 0 && (c[i].says ? one_rant_line(err) && strstr(err, c[i].says) != NULL : !*err) &&
		   opts.cont == c[i].cont && opts.log_threshold_ns == c[i].lthr && run.warn.n == (c[i].says != NULL),
		   name, "r=%d err='%s' cont=%d -L %" PRId64, r, err, opts.cont, opts.log_threshold_ns);
		free(out);
		free(err);
		run_reset();
	}
	{
		struct args a;
		char *out, *err;
		int r = parse_str("-C -a h --count 0", &a, &out, &err);

		ok(r == -1 && one_rant_line(err) && strstr(err, "--count") && !strstr(err, "no effect"),
		   "'-C -a h --count 0': refused, and only the refusal is said", "r=%d err='%s'", r, err);
		free(out);
		free(err);
	}
}

/* An emit side whose every metric has a histogram of 1 us buckets to 100 us, outlier store cap. */
static void hists_emit(int cap)
{
	static uint64_t b[NMETRIC][100];
	static int64_t o[NMETRIC][16];
	int i;

	reset_globals();
	opts.mode = MODE_EMIT;
	memset(b, 0, sizeof(b));
	for (i = 0; i < NMETRIC; i++) {
		hist_init(&sess.h[i], 1000, 100000, b[i], o[i], (uint64_t)cap, NULL);
	}
}

/* The text of stream-writing f(): a report block as a string (free it). */
static char *text_of(void (*f)(FILE *))
{
	char *t = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&t, &n);

	f(m);
	fclose(m);
	return t;
}

static void counts_block(FILE *f)
{
	struct report r;

	memset(&r, 0, sizeof(r));
	print_counts(f, &r);
}

static void earlier_block(FILE *f)
{
	print_earlier_summary(f, &sess.h[M_RTT]);
}

/* Whitespace-separated fields of line number k (0-based) of t. */
static int line_fields(const char *t, int k, char **line)
{
	const char *p = t;
	int n = 0;
	bool in = false;

	while (k-- > 0 && (p = strchr(p, '\n'))) {
		p++;
	}
	*line = p ? strndup(p, strcspn(p, "\n")) : strdup("");
	for (p = *line; *p; p++) {
		n += !in && *p != ' ';
		in = *p != ' ';
	}
	return n;
}

/*
 * Small output defects: the percentile tables keep their columns apart past
 * 1 s, the earlier summary's ':' stays in one column, the missing-stamps
 * line ends without ';' and says what -N on the reflector means, the
 * size table has an avg column.
 */
static void test_report_columns(void)
{
	static const int64_t big[] = { 1234567890123LL, 9876543210LL, 5, 3000000000LL };
	char *t, *l;
	int i, n, col = -1, bad = 0;

	hists_emit(16);
	for (i = 0; i < (int)ARRAY_SIZE(big); i++) {
		hist_add(&sess.h[M_RTT], big[i], (uint64_t)i);
		hist_add(&sess.h[M_APP_RTT], big[i] / 7, (uint64_t)i);
	}
	hist_finish(&sess.h[M_RTT]);
	hist_finish(&sess.h[M_APP_RTT]);
	t = text_of(print_pct_table);
	{
		char *head, *row;
		int nh = line_fields(t, 2, &head);

		n = line_fields(t, 3, &row);
		ok(n == 3 + NPCT && strstr(row, " 1234567890123"),
		   "percentile table past 1 s: a row is its label and 7 separate numbers", "%d fields in '%s'", n, row);
		ok(nh == 1 + NPCT && strlen(head) == strlen(row),
		   "percentile table past 1 s: the header's columns end where the values do", "'%s' / '%s'", head, row);
		free(head);
		free(row);
	}
	free(t);

	t = text_of(earlier_block);
	for (i = 0, l = t; (l = strstr(l, "th ")); l++) {
		const char *bol = l;
		int c;

		while (bol > t && bol[-1] != '\n') {
			bol--;
		}
		c = (int)(strchr(l, ':') - bol);
		bad += col >= 0 && c != col;
		col = c;
		i++;
	}
	ok(i == NPCT && !bad && strstr(t, "\n   99.999th :  "), "earlier summary: every 'Nth :' has ':' in one column",
	   "%d lines, %d off column:\n%s", i, bad, t);
	free(t);

	sess.c.missing[T2W] = 3;
	sess.c.missing[T3W] = 493658;
	t = text_of(counts_block);
	ok(strstr(t, "\nMissing stamps: T2_KSW 3; T3_KSW 493658\n") != NULL,
	   "missing stamps: '; ' between, none at the end", "%s", t);
	free(t);
	result.srv_no_tx = true;
	sess.c.received = 1;
	t = text_of(counts_block);
	ok(strstr(t, "\nMissing stamps: T2_KSW 3; T3_KSW 493658 (the reflector runs -N: no TX stamps, by request)\n") != NULL,
	   "missing stamps: a reflector with -N (PF_NO_TX) is said to be why", "%s", t);
	free(t);
	reset_globals();
}

/*
 * The short header: a datagram of 24 to 63 bytes carries magic to seq, and
 * of the echoed fields only those that fit whole; the reflector's pong says
 * no more than that, and keeps its T3 echoes for a pong with room.
 */
static void test_proto_short(void)
{
	static const struct { size_t len; uint16_t room; } want[] = {
		{ 24, 0 }, { 31, 0 }, { 32, PF_T2W }, { 39, PF_T2W }, { 40, PF_T2W | PF_T2SW },
		{ 48, PF_T2W | PF_T2SW | PF_T3SW }, { 63, PF_T2W | PF_T2SW | PF_T3SW },
		{ 64, PF_T2W | PF_T2SW | PF_T3SW | PF_T3W }, { 1400, PF_T2W | PF_T2SW | PF_T3SW | PF_T3W },
	};
	struct proto_msg m = { .type = PT_PONG, .session = 0x1234, .seq = 77, .t2w = 5, .t2sw = 6,
			       .t3sw = 7, .t3w = 8, .t3w_seq = 76,
			       .flags = PF_T2W | PF_T2SW | PF_T3SW | PF_T3W }, d;
	struct echo q[4];
	struct txn slots[4];
	uint8_t buf[2048];
	size_t i, len;
	int bad = 0, r;

	for (i = 0; i < ARRAY_SIZE(want); i++) {
		bad += proto_room(want[i].len) != want[i].room;
	}
	ok(!bad, "proto_room: a field counts only whole (T2 wire from 32 B, T2_SW 40, T3_SW 48, T3 wire 64)",
	   "%d wrong", bad);
	ok(proto_min_size(false) == 24 && proto_min_size(true) == 72 && PROTO_MIN_SIZE == 24,
	   "proto_min_size: 24, keyed 72 (the tag after the full header)", "%u %u", proto_min_size(false),
	   proto_min_size(true));
	memset(buf, 0, sizeof(buf));
	proto_encode(buf, &m);
	for (len = 24, bad = 0; len < 80; len++) {
		r = proto_decode(buf, len, &d);
		bad += len < 64 ? r != PE_SHORT : r != 0 || d.t3w != 8;
	}
	ok(!bad, "proto_decode: a pong flagging a field beyond its end is PE_SHORT", "%d wrong", bad);
	for (len = 24, bad = 0; len < 80; len++) {
		m.flags = proto_room(len);
		proto_encode(buf, &m);
		r = proto_decode(buf, len, &d);
		bad += r != 0 || d.seq != 77 || d.session != 0x1234 || d.flags != proto_room(len) ||
		       (d.flags & PF_T2W && d.t2w != 5) || (d.flags & PF_T3SW && d.t3sw != 7);
	}
	ok(!bad, "proto_decode: 24..79 bytes with the fields that fit: header and fields intact", "%d wrong", bad);

	/* the reflector's pong over a ping of each length */
	reset_globals();
	opts.sw_stamps = true;
	opts.mode = MODE_REFLECT;
	side_set(false);
	run.echo.q = q;
	memset(slots, 0, sizeof(slots));	/* no pong stamped yet: echo_t3k reads them */
	run.win.slot = slots;
	run.win.mask = ARRAY_SIZE(slots) - 1;
	for (i = 0, bad = 0; i < ARRAY_SIZE(want); i++) {
		struct proto_msg ping = { .type = PT_PING, .session = 9, .seq = 3 }, p = { .type = PT_PONG };

		if (want[i].len > sizeof(buf)) {
			continue;
		}
		run.echo.head = 0;
		run.echo.n = 1;
		q[0] = (struct echo){ 2, 1000, 0 };
		proto_encode(buf, &ping);
		memset(buf + want[i].len, 0xee, sizeof(buf) - want[i].len);
		reflect_pong(&ping, &p, buf, want[i].len, 100, 200);
		r = proto_decode(buf, want[i].len, &d);
		bad += r != 0 || (d.flags & (PF_T2W | PF_T2SW | PF_T3SW | PF_T3W)) != want[i].room ||
		       run.echo.n != (want[i].len < 64 ? 1u : 0u) || (p.t3sw == 0) ||
		       (want[i].len < 64 && buf[want[i].len] != 0xee) || buf[63 > want[i].len ? 63 : want[i].len] != 0xee;
	}
	ok(!bad, "reflect_pong: flags only the fields that fit, writes nothing past the datagram, keeps the echo for a pong with room, still takes T3_SW",
	   "%d wrong", bad);
	/* one byte over the largest datagram fills the receive buffer without MSG_TRUNC */
	{
		static uint8_t big[PROTO_MAX_SIZE + 1];
		struct proto_msg ping = { .type = PT_PING, .session = 9, .seq = 3 };
		struct sockaddr_in from = { .sin_family = AF_INET, .sin_port = htons(4000) };

		reset_globals();
		side_set(false);
		run.win.slot = slots;	/* were it taken for a ping, it would be answered */
		run.win.mask = ARRAY_SIZE(slots) - 1;
		proto_encode(big, &ping);
		reflect_packet(big, sizeof(big), 0, 0, false, (struct sockaddr *)&from, sizeof(from));
		run.win.slot = NULL;
		ok(sess.c.invalid_why[PE_LONG] + refl.carry_invalid[PE_LONG] == 1 && !sess.c.sent,
		   "reflect: a ping of PROTO_MAX_SIZE + 1 bytes is too long, not answered", "long %" PRIu64 "+%" PRIu64,
		   sess.c.invalid_why[PE_LONG], refl.carry_invalid[PE_LONG]);
	}
	run.echo.q = NULL;
	run.win.slot = NULL;
	reset_globals();
}

/*
 * TAPRIO users' command lines: --tos in hex as the tables print it, and one
 * --interval for several classes said to be shared by them.
 */
static void test_tos_interval(void)
{
	static const struct {
		int want;
		const char *argv, *says;
	} c[] = {
		{ 0, "-a h --tos 0x20", NULL },
		{ 0, "-a h --tos 0X2f,0x40", NULL },
		{ 0, "-a h --tos 32,0xb8", NULL },
		{ -1, "-a h --tos 0x", "--tos: '0x' is not a whole number (0 to 255, or 0x0 to 0xff)" },
		{ -1, "-a h --tos 0x100", "--tos: '0x100' is out of range (0 to 255, or 0x0 to 0xff)" },
		{ -1, "-a h --priority 0x2", "--priority: '0x2' is not a whole number" },
		{ 0, "-a h --tos 0x20,0x40,0x60 --interval 200",
		  "--interval 200 with 3 classes: they take turns, each class sends every 600 us (1/3 of the rate); --interval 200,200,200 gives each class 200 us" },
		{ 0, "-a h --tos 0x20,0x40,0x60 --interval 200,200,200", NULL },
		{ 0, "-a h --tos 0x20,0x40 --interval 0", NULL },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct args a;
		char *out, *err, name[200];
		int r = parse_str(c[i].argv, &a, &out, &err);

		snprintf(name, sizeof(name), "'%s' -> %d%s", c[i].argv, c[i].want, c[i].says ? ", one line" : "");
		ok(r == c[i].want && (c[i].says ? one_rant_line(err) && strstr(err, c[i].says) != NULL : !*err),
		   name, "r=%d err='%s'", r, err);
		if (i == 0) {
			ok(r == 0 && opts.tos == 32, "--tos 0x20 is 32", "%d", opts.tos);
		} else if (i == 1) {
			ok(r == 0 && classes.ntos == 2 && classes.tos[0] == 47 && classes.tos[1] == 64,
			   "--tos 0X2f,0x40: classes 47 and 64", "%d %d", classes.tos[0], classes.tos[1]);
		} else if (i == 6) {
			ok(r == 0 && classes.nival == 0 && opts.interval_ns == 200000,
			   "one --interval with classes: one cadence, 200 us, for all", "nival %d %" PRIu64,
			   classes.nival, opts.interval_ns);
		}
		free(out);
		free(err);
		run_reset();
	}
	/* the overload warning names --interval as typed */
	{
		static const char *const argv[2] = { "-a h --tos 1,2,3 --interval 10,10,10", "-a h --interval 200" };
		static const char *const says[2] = {
			"rant: warning: --interval 10,10,10 (all classes together: one ping every 3.33 us) is faster than this host sustains: 50 send slots skipped",
			"rant: warning: --interval 200 is faster than this host sustains: 50 send slots skipped",
		};
		int k;

		for (k = 0; k < 2; k++) {
			struct args a;
			struct capture c;
			char *out, *err;

			parse_str(argv[k], &a, &out, &err);
			free(out);
			free(err);
			result.overruns = 50;
			emitter.next_seq = 100;
			cap_start(&c, 2);
			emit_overload_note();
			err = cap_stop(&c);
			ok(strstr(err, says[k]) == err, "overload warning: --interval as typed", "'%s'", err);
			free(err);
			result.overruns = 1;
			cap_start(&c, 2);
			emit_overload_note();
			err = cap_stop(&c);
			ok(!*err, "overload warning: none at 1 % of the slots", "'%s'", err);
			free(err);
			run_reset();
		}
	}
}

static void histfile_block_rtt(FILE *f)
{
	histfile_block(f);
}

/*
 * cyclictest users: --histfile has every bucket to the bound and the samples
 * above it in buckets of the same width, the JSON's "above" the same; -b
 * given keeps the text histogram's width (no merging).
 */
static void test_histfile(void)
{
	static const int64_t v[] = { 500, 1500, 1700, 99999, 100000, 100999, 101000, 250000, -40, 7 };
	char *t, *p, *line;
	uint64_t sum = 0, rows = 0, above[4] = { 0 };
	int i, bad = 0;

	hists_emit(5);
	for (i = 0; i < (int)ARRAY_SIZE(v); i++) {
		hist_add(&sess.h[M_RTT], v[i], (uint64_t)i);
	}
	hist_add(&sess.h[M_RTT], 300000, 99);	/* the sixth outlier: the store (5) is full */
	t = text_of(histfile_block_rtt);
	for (p = t; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		double us;
		uint64_t n;

		line = strndup(p, strcspn(p, "\n"));
		if (*line != '#') {
			if (sscanf(line, "%lf %" SCNu64, &us, &n) != 2) {
				bad++;
			} else {
				rows++;
				sum += n;
				if (us >= 100) {
					above[us == 100 ? 0 : us == 101 ? 1 : us == 250 ? 2 : 3] += n;
				}
			}
		}
		free(line);
	}
	ok(!bad && rows == 100 + 3, "histfile: 100 buckets to the bound, then 3 non-empty above it", "%" PRIu64 " rows, %d bad",
	   rows, bad);
	ok(sum == ARRAY_SIZE(v) + 1 - 2 && above[0] == 2 && above[1] == 1 && above[2] == 1 && !above[3],
	   "histfile: counts of all but the one below zero and the one not kept; 100 us: 2, 101 us: 1, 250 us: 1",
	   "sum %" PRIu64 " %" PRIu64 "/%" PRIu64 "/%" PRIu64, sum, above[0], above[1], above[2]);
	ok(strstr(t, "\n0.000 2\n1.000 2\n2.000 0\n") && strstr(t, "\n99.000 1\n100.000 2\n") &&
	   strstr(t, "1 below zero, 1 above the bound not kept"),
	   "histfile: value in us (lower edge), count; what is in no bucket said", "%.400s", t);
	free(t);
	{
		char *j = NULL;
		size_t n = 0;
		FILE *m = open_memstream(&j, &n);

		json_metric(m, M_RTT);
		fclose(m);
		ok(strstr(j, "\"above\": [[100000, 2], [101000, 1], [250000, 1]], \"above_not_kept\": 1, \"below_zero\": 1") != NULL,
		   "json: histogram.above has the samples above the bound, as the histfile", "%s", j);
		free(j);
	}
	/* -b given: the text histogram keeps its width, as many bars as it takes */
	for (i = 0; i < 90; i++) {
		hist_add(&sess.h[M_APP_RTT], 1000 * i + 10, (uint64_t)i);
	}
	opts.bucket_set = true;
	{
		char *h = NULL;
		size_t n = 0;
		FILE *m = open_memstream(&h, &n);

		print_histogram(m, M_APP_RTT);
		fclose(m);
		ok(count_str(h, " #") == 90 && !strstr(h, "merged"), "-H with -b: 90 non-empty buckets, 90 bars, none merged",
		   "%d bars", count_str(h, " #"));
		free(h);
		opts.bucket_set = false;
		m = open_memstream(&h, &n);
		print_histogram(m, M_APP_RTT);
		fclose(m);
		ok(count_str(h, " #") <= 60 && strstr(h, "merged"), "-H without -b: merged to at most 60 bars",
		   "%d bars", count_str(h, " #"));
		free(h);
	}
	reset_globals();
}

/* ---------------------------------------------------------------- cases */

struct unit_case {
	const char *name;
	void (*fn)(void);
};

#define CASE(fn) { &(#fn)[5], fn }	/* "test_proto" is case "proto" */

/*
 * --series, fed as --analyze feeds it (no ring, no thread): rows a
 * millisecond apart, rtt 1..2500 ns; each interval's line holds its own
 * counts and the nearest-rank percentiles of its own samples, the last one
 * what was left, and the lines add up.
 */
static void test_series(void)
{
	const uint64_t base = 1700000000ULL * NSEC_PER_SEC;
	char *p, *all, *line[8] = { NULL };
	int i, n = 0;

	cfg_defaults();
	opts.series = "-";
	opts.plot = NULL;
	series.on = true;
	series.every_ns = NSEC_PER_SEC;
	series.mem = open_memstream(&series.mem_buf, &series.mem_len);
	for (i = 0; i < 2500; i++) {
		series_row(base + (uint64_t)i * 1000000);
		series_put(CG_SENT, 0, 0);
		if (i % 100 == 7) {
			series_put(CG_LOST, 0, 0);
			continue;
		}
		series_put(CG_RECEIVED, 0, 0);
		series_put(SERIES_SAMPLE + M_RTT, 0, i + 1);
	}
	series_rows_end();
	/* the first line is kept apart until the rows are read (its classes are known then) */
	all = malloc((size_t)series.first_len + series.mem_len + 1);
	memcpy(all, series.first, (size_t)series.first_len);
	memcpy(all + series.first_len, series.mem_buf, series.mem_len + 1);
	for (p = strtok(all, "\n"); p && n < 8; p = strtok(NULL, "\n")) {
		line[n++] = p;
	}
	ok(n == 5, "series: a start line, three intervals, an end line", "%d lines", n);
	if (n == 5) {
		ok(strstr(line[0], "\"type\": \"start\"") && strstr(line[0], "\"source\": \"log\""),
		   "series: the start line", "%s", line[0]);
		ok(strstr(line[1], "\"interval\": 0,") &&
		   strstr(line[1], "\"packets\": {\"sent\": 1000, \"received\": 990, \"lost\": 10,"),
		   "series: the first interval's packets", "%.300s", line[1]);
		/* 990 samples, 1..1000 less 8, 108, ...: ranks 495, 981 and 990 (ceil of p % of n) */
		ok(strstr(line[1], "\"rtt\": {\"samples\": 990, \"min_ns\": 1, \"max_ns\": 1000, "
			  "\"percentiles_ns\": {\"p50\": 500, \"p99\": 991, \"p99.9\": 1000}}") != NULL,
		   "series: the first interval's rtt, nearest rank", "%.400s", line[1]);
		ok(strstr(line[3], "\"interval\": 2,") && strstr(line[3], "\"sent\": 500,") &&
		   strstr(line[3], "\"max_ns\": 2500"), "series: the last interval, what was left",
		   "%.300s", line[3]);
		ok(strstr(line[4], "\"type\": \"end\", \"intervals\": 3, \"dropped\": 0, "
			  "\"stop_reason\": null") != NULL, "series: the end line", "%s", line[4]);
	}
	free(all);
	series_free();
}

/* --series from a log whose rows lie 584 years apart: the silence skipped, a few lines, no hang */
static void test_series_gap(void)
{
	cfg_defaults();
	opts.series = "-";
	opts.plot = NULL;
	series.on = true;
	series.every_ns = 86400 * NSEC_PER_SEC;
	series.mem = open_memstream(&series.mem_buf, &series.mem_len);
	series_row(NSEC_PER_SEC);
	series_put(CG_SENT, 0, 0);
	series_row(UINT64_MAX - NSEC_PER_SEC);
	series_put(CG_SENT, 0, 0);
	series_rows_end();
	ok(series.lines == 2, "series: a silence past 2^64 ns / every skipped in one step", "%" PRIu64 " lines",
	   series.lines);
	series_free();
}

/* w: one segment NAME (KEY) of one part, the cause */
static void why_one(struct why *w, const char *name, const char *key, struct why_part part)
{
	memset(w, 0, sizeof(*w));
	w->nseg = 1;
	w->seg[0].name = name;
	w->seg[0].key = key;
	w->seg[0].n = 1;
	w->seg[0].p[0] = part;
	w->cs = 0, w->cp = 0, w->pkt_cpu = -1;
}

/*
 * The Why: sentence of a rant left runnable on an idle CPU: RT throttling
 * when rant is real-time and the wait is a millisecond or more, nothing
 * said otherwise (a short idle exit, or a rant of the normal class).
 */
static void test_why_idle(void)
{
	static const struct { int prio; uint64_t ns; bool said; } c[] = {
		{ 49, 30000000, true }, { 49, 999000, false }, { 120, 30000000, false }, { -1, 30000000, false },
	};
	static struct why w;
	char buf[512], name[128];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		why_one(&w, "server rx stack", "server_rx_stack", (struct why_part){ .kind = WK_IDLE, .cpu = 1, .ns = c[i].ns });
		w.prio = c[i].prio;
		why_sentence(buf, sizeof(buf), &w);
		snprintf(name, sizeof(name), "why: idle while runnable, prio %d for %" PRIu64 " ns: RT throttling %s",
			 c[i].prio, c[i].ns, c[i].said ? "said" : "not said");
		ok(!strncmp(buf, "server rx stack: rant's CPU 1 was idle and took ", 48) &&
			   !!strstr(buf, "RT throttling, sched_rt_runtime_us") == c[i].said,
		   name, "'%s'", buf);
	}
}

/*
 * A task in the breakdown: rant's thread "runnable while" it ran, in an rx
 * stack; in an rx irq segment, where the parts are what the packet's CPU
 * did, it simply "ran" (rant itself too).
 */
static void test_why_parts(void)
{
	static const struct { const char *name, *key, *want; } c[] = {
		{ "server rx stack", "server_rx_stack", "runnable while why-hog (pid 77, FIFO 90) ran" },
		{ "server rx irq", "server_rx_irq", "rant (pid 77, FIFO 90) ran" },
		{ "client rx irq", "client_rx_irq", "rant (pid 77, FIFO 90) ran" },
	};
	static struct why w;
	char buf[128], name[160];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		why_one(&w, c[i].name, c[i].key,
			(struct why_part){ .kind = WK_RUNNABLE, .id = 77, .cpu = 1, .prio = 9, .ns = 5000 });
		snprintf(w.seg[0].p[0].what, sizeof(w.seg[0].p[0].what), "%s", strstr(c[i].key, "irq") ? "rant" : "why-hog");
		snprintf(w.policy, sizeof(w.policy), "FIFO");
		w.pkt_cpu = 1;
		why_part_text(buf, sizeof(buf), &w, &w.seg[0], &w.seg[0].p[0]);
		snprintf(name, sizeof(name), "why: a task's part in the %s: '%s'", c[i].name, c[i].want);
		ok(!strcmp(buf, c[i].want), name, "'%s'", buf);
	}
}

/*
 * The packet's CPU and its rx irq segment, found in a trace: its
 * netif_receive_skb 2.9 ms after its stamp (a vCPU the host stalled in
 * between) but before the app's stamp is the packet's; one after the
 * app's stamp is not (no segment, the CPU unknown).
 */
static void test_why_rx_irq(void)
{
	static const char trace[] =
		"# tracer: nop\n"
		"     kworker/0:1-22      [000] d..h...    53.626240: irq_handler_entry: irq=26 name=eth0-rx-0\n"
		"     kworker/1:1-37      [001] d..h...    53.626245: irq_handler_entry: irq=32 name=eth2-rx-0\n"
		"     kworker/1:1-37      [001] d..h...    53.626249: irq_handler_exit: irq=32 ret=handled\n"
		" irq/32-eth2-rx--206     [001] ...s.12    53.626284: softirq_entry: vec=3 [action=NET_RX]\n"
		"            rant-1126    [000] D..h.14    53.628500: irq_handler_entry: irq=27 name=eth0-tx-0\n"
		" irq/32-eth2-rx--206     [001] ...s.12    53.629203: netif_receive_skb: dev=eth2 skbaddr=00000000b24a0aa0 len=92\n"
		" irq/26-eth0-rx--201     [000] ...s.12    53.629250: netif_receive_skb: dev=eth0 skbaddr=00000000acd29b45 len=92\n";
	static const struct { uint64_t app; int nseg, cpu; } c[] = {
		{ 53629399000ULL, 2, 1 },	/* the app's stamp after it: found */
		{ 53628799000ULL, 1, -1 },	/* before it: not the packet's */
	};
	static struct why w;
	char path[] = "/tmp/rant-unit-trace.XXXXXX", name[160];
	int fd = mkstemp(path);
	size_t i;

	if (fd < 0 || write(fd, trace, sizeof(trace) - 1) != (ssize_t)sizeof(trace) - 1) {
		ok(false, "why: a trace file for the rx irq cases", "%s", strerror(errno));
		return;
	}
	close(fd);
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		why_one(&w, "server rx stack", "server_rx_stack", (struct why_part){ .kind = WK_RUN });
		w.seg[0].a = 53626299136ULL;
		w.seg[0].b = c[i].app;
		why_rx_irq(&w, path);
		snprintf(name, sizeof(name), "why: netif_receive_skb 2.9 ms after the stamp, the app's stamp %s it: %s",
			 c[i].nseg == 2 ? "after" : "before", c[i].nseg == 2 ? "CPU 1, an rx irq segment" : "not the packet's");
		ok(w.nseg == c[i].nseg && w.pkt_cpu == c[i].cpu &&
			   (c[i].nseg == 1 || (!strcmp(w.seg[0].key, "server_rx_irq") && w.seg[0].a == 53626245000ULL &&
					       w.seg[0].b == 53626299136ULL && !strcmp(w.seg[1].key, "server_rx_stack"))),
		   name, "%d segments (first %s), packet CPU %d", w.nseg, w.seg[0].key, w.pkt_cpu);
	}
	unlink(path);
}

static const struct unit_case unit_cases[] = {
	CASE(test_opt_table),
	CASE(test_series),
	CASE(test_series_gap),
	CASE(test_why_idle),
	CASE(test_why_parts),
	CASE(test_why_rx_irq),
	CASE(test_opt_fields),
	CASE(test_opt_entries),
	CASE(test_opt_modes),
	CASE(test_opt_values),
	CASE(test_proto),
	CASE(test_proto_malformed),
	CASE(test_proto_random),
	CASE(test_proto_late),
	CASE(test_cmsg),
	CASE(test_cmsg_fast),
	CASE(test_cmsg_errqueue),
	CASE(test_cmsg_truncated),
	CASE(test_kops_restore),
	CASE(test_hw),
	CASE(test_hw_all_refused),
	CASE(test_hw_sw_only),
	CASE(test_hw_eperm),
	CASE(test_hw_no_tsinfo),
	CASE(test_hw_no_iface),
	CASE(test_hwpath),
	CASE(test_phc),
	CASE(test_wire_off),
	CASE(test_swhw),
	CASE(test_ptp),
	CASE(test_klog),
	CASE(test_kx),
	CASE(test_t3hist),
	CASE(test_oneway_kernel),
	CASE(test_tsconfig),
	CASE(test_fin_owed),
	CASE(test_fin_last),
	CASE(test_loss_why),
	CASE(test_rekey),
	CASE(test_rekey_612),
	CASE(test_rekey_cmsg),
	CASE(test_hw_none_auto),
	CASE(test_hw_none_hw),
	CASE(test_hw_none_reflect),
	CASE(test_hw_some),
	CASE(test_analyze_consistent),
	CASE(test_idle_hint),
	CASE(test_ended_age),
	CASE(test_peer_bounds),
	CASE(test_no_sample),
	CASE(test_phc_stopped),
	CASE(test_pktinfo_lower),
	CASE(test_bond),
	CASE(test_bond_failover),
	CASE(test_restore),
	CASE(test_peer_off),
	CASE(test_tx_pattern),
	CASE(test_phc_once),
	CASE(test_cmsg64),
	CASE(test_hist),
	CASE(test_hist_store),
	CASE(test_hist_long),
	CASE(test_layout_store),
	CASE(test_hist_random),
	CASE(test_fit),
	CASE(test_fit_offset),
	CASE(test_fit_metrics),
	CASE(test_tsn_qdiscs),
	CASE(test_log),
	CASE(test_log_ring),
	CASE(test_log_large),
	CASE(test_log_threshold),
	CASE(test_log_corrupt),
	CASE(test_log_join),
	CASE(test_compat),
	CASE(test_guard),
	CASE(test_guard_keyfile),
	CASE(test_guard_tags),
	CASE(test_guard_stamps),
	CASE(test_guard_peers),
	CASE(test_guard_client),
	CASE(test_early_ping),
	CASE(test_late_by_arrival),
	CASE(test_rx_ioctl),
	CASE(test_emit_later),
	CASE(test_tx_after_send),
	CASE(test_session_socket),
	CASE(test_session_pre),
	CASE(test_layout_inflight),
	CASE(test_fit_order),
	CASE(test_best_offset),
	CASE(test_guard_reflector),
	CASE(test_guard_sessions),
	CASE(test_guard_class_rows),
	CASE(test_interval_drain),
	CASE(test_interval_wake),
	CASE(test_classes_opts),
	CASE(test_classes_plain),
	CASE(test_classes_interval),
	CASE(test_classes_schedule),
	CASE(test_classes_reflect),
	CASE(test_outputs),
	CASE(test_outputs_property),
	CASE(test_outputs_failed_writes),
	CASE(test_outputs_refused),
	CASE(test_outputs_analyze_twice),
	CASE(test_outputs_analyze),
	CASE(test_analyze_odd),
	CASE(test_log_srv_kx),
	CASE(test_outputs_clock),
	CASE(test_pmc),
	CASE(test_plot),
	CASE(test_plot_panels),
	CASE(test_perf),
	CASE(test_num),
	CASE(test_opt_alone),
	CASE(test_cpu_latency),
	CASE(test_report_columns),
	CASE(test_proto_short),
	CASE(test_tos_interval),
	CASE(test_histfile),
};

static bool case_wanted(const char *name, int argc, char **argv)
{
	int i;

	if (argc < 2) {
		return true;
	}
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], name)) {
			return true;
		}
	}
	return false;
}

/*
 * Each case starts from fresh global state, so that it passes alone
 * (`tests/unit hist`) as it does after the others.
 */
int main(int argc, char **argv)
{
	size_t i;
	int n = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < ARRAY_SIZE(unit_cases); i++) {
		if (!case_wanted(unit_cases[i].name, argc, argv)) {
			continue;
		}
		t_case = unit_cases[i].name;
		printf("# %s\n", t_case);
		reset_globals();
		unit_cases[i].fn();
		n++;
	}
	if (!n) {
		fprintf(stderr, "unit: no case of that name\n");
		return 2;
	}
	printf("1..%d\n", t_num);
	printf("# %d passed, %d failed\n", t_pass, t_fail);
	return t_fail ? 1 : 0;
}
