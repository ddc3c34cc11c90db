// SPDX-License-Identifier: Apache-2.0
/*
 * Characterization of option parsing.
 *
 *   opts-golden CASES RANT
 *
 * CASES has one command line a line (words split at spaces, single quotes
 * group, '' is an empty word; "# NAME" lines start a group and are copied).
 * For each, opt_parse() runs and its stdout, stderr and result are
 * printed, then every configuration field that differs from the defaults
 * (cfg, the class and size lists, the key and PTP state).  When parsing
 * ends the program (help, version, a usage error) or leaves only a missing
 * --analyze log to read, RANT runs the same command line too and its
 * stdout, stderr and exit status follow.  tests/net-opts.sh compares the
 * whole output with the one recorded before the option code changed.
 * Nothing here opens a socket.
 */
#define RANT_NO_MAIN
#include "../rant.c"

#include <spawn.h>
#include <sys/wait.h>

static void dump_str(FILE *f, const char *name, const char *s)
{
	fprintf(f, "%s=%s%s%s\n", name, s ? "'" : "", s ? s : "(null)", s ? "'" : "");
}

static void dump_list(FILE *f, const char *name, const int64_t *v, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		fprintf(f, "%s[%d]=%" PRId64 "\n", name, i, v[i]);
	}
}

static void dump_classes(FILE *f)
{
	int64_t v[SZ_MAX];
	int i;

	fprintf(f, "K.ncls=%d\nK.nsz=%d\nK.nprio=%d\nK.ntos=%d\nK.nival=%d\nK.tx_size=%u\n",
		run.K.ncls, run.K.nsz, run.K.nprio, run.K.ntos, run.K.nival, run.K.tx_size);
	for (i = 0; i < CLS_MAX; i++) {
		v[i] = (int64_t)run.K.ival[i];
	}
	dump_list(f, "K.ival", v, CLS_MAX);
	for (i = 0; i < CLS_MAX; i++) {
		v[i] = run.K.prio[i];
	}
	dump_list(f, "K.prio", v, CLS_MAX);
	for (i = 0; i < CLS_MAX; i++) {
		v[i] = run.K.tos[i];
	}
	dump_list(f, "K.tos", v, CLS_MAX);
	for (i = 0; i < SZ_MAX; i++) {
		v[i] = run.K.size[i];
	}
	dump_list(f, "K.size", v, SZ_MAX);
}

static void dump_flags(FILE *f)
{
	fprintf(f, "sw_stamps=%d\nhistogram=%d\ncont=%d\ntrace=%d\nsnapshot=%d\nhugepages=%d\n",
		opts.sw_stamps, opts.histogram, opts.cont, opts.trace, opts.snapshot, opts.hugepages);
	fprintf(f, "prefer_busypoll=%d\nspin=%d\nonce=%d\nquiet=%d\nverbose=%d\n",
		opts.prefer_busypoll, opts.spin, opts.once, opts.quiet, opts.verbose);
	fprintf(f, "allow_fragments=%d\nptp_probe=%d\nno_tx_ts=%d\nfast_path=%d\npmc=%d\n",
		opts.allow_fragments, opts.ptp_probe, opts.no_tx_ts, opts.fast_path, opts.pmc);
	fprintf(f, "busy_poll_set=%d\nbudget_set=%d\nkey.on=%d\n", opts.busy_poll_set,
		opts.budget_set, run.key.on);
}

static void dump_cfg(FILE *f)
{
	fprintf(f, "mode=%d\nport=%u\nsize=%u\nduration_s=%.17g\ncount=%" PRIu64 "\n",
		(int)opts.mode, opts.port, opts.size, opts.duration_s, opts.count);
	fprintf(f, "warmup=%" PRIu64 "\ninterval_ns=%" PRIu64 "\ntimeout_ns=%" PRIu64 "\nts=%d\n",
		opts.warmup, opts.interval_ns, opts.timeout_ns, (int)opts.ts);
	fprintf(f, "threshold_ns=%" PRId64 "\nlog_threshold_ns=%" PRId64 "\nptp_domain=%u\n",
		opts.threshold_ns, opts.log_threshold_ns, opts.ptp_domain);
	fprintf(f, "bucket_ns=%" PRIu64 "\nbound_ns=%" PRIu64 "\nbusy_poll_us=%u\nbudget=%u\n",
		opts.bucket_ns, opts.bound_ns, opts.busy_poll_us, opts.budget);
	fprintf(f, "priority=%d\ntos=%d\nlog_format=%d\nlog_records=%" PRIu64 "\ntop=%u\n",
		opts.priority, opts.tos, (int)opts.log_format, opts.log_records, opts.top);
	fprintf(f, "proto_pre=%u\n", run.proto_pre);
	dump_flags(f);
	dump_str(f, "iface", opts.iface);
	dump_str(f, "address", opts.address);
	dump_str(f, "json", opts.json);
	dump_str(f, "log", opts.log);
	dump_str(f, "trace_instance", opts.trace_instance);
	dump_str(f, "analyze0", opts.analyze[0]);
	dump_str(f, "analyze1", opts.analyze[1]);
	dump_str(f, "key_file", opts.key_file);
	dump_str(f, "plot", opts.plot);
	dump_str(f, "cmdline", opts.cmdline);
	dump_classes(f);
}

/* The dump as one string (malloc'd). */
static char *dump_text(void)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	if (!f) {
		exit(99);
	}
	dump_cfg(f);
	fclose(f);
	return s;
}

/* Lines of now that are not the same line of base (both dump_text). */
static void print_changed(const char *base, const char *now)
{
	while (*now) {
		size_t ln = strcspn(now, "\n") + 1, lb = strcspn(base, "\n") + 1;

		if (ln != lb || memcmp(now, base, ln)) {
			fwrite(now, 1, ln, stdout);
		}
		now += ln;
		base += *base ? lb : 0;
	}
}

/* "rant" + the words of s; single quotes group (and '' is an empty word). */
static int split_args(const char *s, char *buf, char **argv, int max)
{
	char *p = buf;
	int argc = 0;

	strcpy(p, "rant");
	argv[argc++] = p;
	p += 5;
	for (;;) {
		while (*s == ' ') {
			s++;
		}
		if (!*s || argc == max) {
			break;
		}
		argv[argc++] = p;
		while (*s && *s != ' ') {
			if (*s == '\'') {
				for (s++; *s && *s != '\''; ) {
					*p++ = *s++;
				}
				s += !!*s;
			} else {
				*p++ = *s++;
			}
		}
		*p++ = 0;
	}
	argv[argc] = NULL;
	return argc;
}

/* The contents of a file (malloc'd, NUL-terminated; empty if it cannot be read). */
static char *slurp(const char *path)
{
	char *s = NULL;
	size_t n = 0, got;
	FILE *m = open_memstream(&s, &n), *f = fopen(path, "r");
	char buf[4096];

	if (!m) {
		exit(99);
	}
	while (f && (got = fread(buf, 1, sizeof(buf), f)) > 0) {
		fwrite(buf, 1, got, m);
	}
	if (f) {
		fclose(f);
	}
	fclose(m);
	return s;
}

/*
 * Print an output under its label; a long one seen before (the help text)
 * is named by the first case that printed it, so the recording stays small.
 */
static void print_blob(const char *label, const char *s, const char *line)
{
	static struct { uint64_t h; char line[200]; } seen[64];
	static int nseen;
	uint64_t h = 14695981039346656037ULL;	/* FNV-1a */
	const char *p;
	int i;

	for (p = s; *p; p++) {
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	}
	if (strlen(s) > 200) {
		for (i = 0; i < nseen; i++) {
			if (seen[i].h == h) {
				printf("--- %s: %zu bytes as in '%s'\n", label, strlen(s), seen[i].line);
				return;
			}
		}
		if (nseen < 64) {
			seen[nseen].h = h;
			snprintf(seen[nseen++].line, sizeof(seen[0].line), "%s", line);
		}
	}
	printf("--- %s\n%s", label, s);
}

/* Point fd (1 or 2) at a fresh file; the old fd's copy, to put back. */
static int redirect(int fd, const char *path)
{
	int saved = dup(fd), f = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (saved < 0 || f < 0 || dup2(f, fd) < 0) {
		exit(99);
	}
	close(f);
	return saved;
}

static void restore(int fd, int saved)
{
	dup2(saved, fd);
	close(saved);
}

/*
 * opt_parse in this process (a fork per case is slow under the sanitizers),
 * stdout and stderr into the files o and e; its result.  Everything it
 * sets is reset by the next call (cfg_defaults, and the key and PTP state
 * by their checks) and dumped only when it returned 0.
 */
static int parse_case(int argc, char **argv, const char *base)
{
	int so, se, r;

	fflush(stdout);
	fflush(stderr);
	so = redirect(1, "o");
	se = redirect(2, "e");
	r = opt_parse(argc, argv);
	fflush(stderr);
	printf("--- opt_parse %d\n", r);
	if (r == 0) {
		char *now = dump_text();

		print_changed(base, now);
		free(now);
	}
	fflush(stdout);
	restore(1, so);
	restore(2, se);
	return r < 0 ? 2 : r;
}

/* rant itself on the same argv, stdout and stderr into o and e; its exit status. */
static int rant_case(char **argv, const char *rant)
{
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "o", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, "e", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (posix_spawn(&pid, rant, &fa, NULL, argv, environ) || waitpid(pid, &st, 0) < 0) {
		exit(99);
	}
	posix_spawn_file_actions_destroy(&fa);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* rant's output: "as parse" when it printed what opt_parse printed. */
static void print_rant(const char *label, const char *path, const char *parsed, const char *line)
{
	char *s = slurp(path);

	if (!strcmp(s, parsed)) {
		printf("--- %s: as parse\n", label);
	} else {
		print_blob(label, s, line);
	}
	free(s);
}

static void run_case(const char *line, const char *rant, const char *base)
{
	char buf[4096], *argv[128], *out, *err, *mark;
	int argc = split_args(line, buf, argv, 126);
	int rc = parse_case(argc, argv, base);

	out = slurp("o");
	err = slurp("e");
	print_blob("parse stdout", out, line);
	print_blob("parse stderr", err, line);
	printf("--- parse exit %d\n", rc);
	if (rc || strstr(out, "--- opt_parse 1\n") || strstr(out, "\nmode=2\n")) {
		mark = strstr(out, "--- opt_parse ");
		if (mark) {
			*mark = 0;	/* what opt_parse printed, not the dump after it */
		}
		rc = rant_case(argv, rant);
		print_rant("rant stdout", "o", out, line);
		print_rant("rant stderr", "e", err, line);
		printf("--- rant exit %d\n", rc);
	}
	free(out);
	free(err);
}

int main(int argc, char **argv)
{
	char line[4096], *base;
	FILE *f;

	(void)run_main;		/* linked, never run: this program only parses */
	(void)analyze_main;
	(void)fds_own;
	if (argc != 3 || !(f = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: opts-golden CASES RANT (in a scratch directory)\n");
		return 2;
	}
	run_reset();
	cfg_defaults();
	base = dump_text();
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "# ", 2)) {
			printf("%s\n", line);
			continue;
		}
		printf("=== %s\n", line);
		run_case(line, argv[2], base);
	}
	fclose(f);
	free(base);
	return 0;
}
