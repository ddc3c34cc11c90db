// SPDX-License-Identifier: Apache-2.0
/*
 * The option cases of tests/net-opts.d/cases, checked.
 *
 *   opts-table CASES RANT      (in a directory holding the files CASES names)
 *
 * CASES has one case a line, "COMMAND LINE => STATUS LINE" ('#' starts a
 * comment; blank lines are skipped).  The command line's words split at
 * spaces, single quotes group ('' is an empty word).  opt_parse() runs on it
 * in this process.  When parsing ends the program (help, version, a usage
 * error) or leaves --analyze to read its logs, RANT runs the same command
 * line and its exit status and output are the case's; otherwise the status
 * is 0 (the run would start) and every configuration field is listed as a
 * "name=value" line (cfg, the class and size lists, the key and PTP state).
 *
 * A case passes when its status is STATUS and LINE is one whole line of
 * stdout, stderr or that list.  A status 2 must print LINE alone, on
 * stderr; rant must print what opt_parse printed.  One verdict a case,
 * "ok<TAB>NAME" or "not ok<TAB>NAME (detail)", for tests/net-opts.sh.
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
		classes.ncls, classes.nsz, classes.nprio, classes.ntos, classes.nival, classes.tx_size);
	for (i = 0; i < CLS_MAX; i++) {
		v[i] = (int64_t)classes.ival[i];
	}
	dump_list(f, "K.ival", v, CLS_MAX);
	for (i = 0; i < CLS_MAX; i++) {
		v[i] = classes.prio[i];
	}
	dump_list(f, "K.prio", v, CLS_MAX);
	for (i = 0; i < CLS_MAX; i++) {
		v[i] = classes.tos[i];
	}
	dump_list(f, "K.tos", v, CLS_MAX);
	for (i = 0; i < SZ_MAX; i++) {
		v[i] = classes.size[i];
	}
	dump_list(f, "K.size", v, SZ_MAX);
}

static void dump_flags(FILE *f)
{
	fprintf(f, "sw_stamps=%d\nhistogram=%d\ncont=%d\ntrace=%d\nsnapshot=%d\nhugepages=%d\n",
		opts.sw_stamps, opts.histogram, opts.cont, opts.trace, opts.snapshot, opts.hugepages);
	fprintf(f, "prefer_busypoll=%d\nspin=%d\nonce=%d\nquiet=%d\nverbose=%d\n",
		opts.prefer_busypoll, opts.spin, opts.once, opts.quiet, opts.verbose);
	fprintf(f, "allow_fragments=%d\nptp_probe=%d\nno_tx_ts=%d\nfast_path=%d\npmc=%d\ncli_no_tx=%d\n",
		opts.allow_fragments, opts.ptp_probe, opts.no_tx_ts, opts.fast_path, opts.pmc, opts.cli_no_tx);
	fprintf(f, "busy_poll_set=%d\nbudget_set=%d\nbucket_set=%d\nstatus=%d\nkey.on=%d\n",
		opts.busy_poll_set, opts.budget_set, opts.bucket_set, opts.status, run.key.on);
}

static void dump_cfg(FILE *f)
{
	static const char *const mode_names[] = { "emit", "reflect", "analyze" };	/* enum mode */

	fprintf(f, "mode=%s\nport=%u\nsize=%u\nduration_s=%.17g\ncount=%" PRIu64 "\n",
		mode_names[opts.mode], opts.port, opts.size, opts.duration_s, opts.count);
	fprintf(f, "warmup=%" PRIu64 "\ninterval_ns=%" PRIu64 "\ntimeout_ns=%" PRIu64 "\nts=%s\n",
		opts.warmup, opts.interval_ns, opts.timeout_ns, ts_names[opts.ts]);
	fprintf(f, "threshold_ns=%" PRId64 "\nlog_threshold_ns=%" PRId64 "\nptp_domain=%u\n",
		opts.threshold_ns, opts.log_threshold_ns, opts.ptp_domain);
	fprintf(f, "bucket_ns=%" PRIu64 "\nbound_ns=%" PRIu64 "\nbusy_poll_us=%u\nbudget=%u\n",
		opts.bucket_ns, opts.bound_ns, opts.busy_poll_us, opts.budget);
	fprintf(f, "priority=%d\ntos=%d\nlog_format=%s\nlog_records=%" PRIu64 "\ntop=%u\n",
		opts.priority, opts.tos, log_format_names[opts.log_format], opts.log_records, opts.top);
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
	dump_str(f, "histfile", opts.histfile);
	dump_str(f, "interval_arg", opts.interval_arg);
	dump_str(f, "cmdline", opts.cmdline);
	dump_classes(f);
}

/* Every field as "name=value" lines (malloc'd). */
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
 * stdout and stderr into the files o and e; its result.  Everything it sets
 * is reset by the next call (cfg_defaults, and the key and PTP state by
 * their checks).
 */
static int parse_case(int argc, char **argv)
{
	int so, se, r;

	fflush(stdout);
	fflush(stderr);
	so = redirect(1, "o");
	se = redirect(2, "e");
	r = opt_parse(argc, argv);
	fflush(stdout);
	fflush(stderr);
	restore(1, so);
	restore(2, se);
	return r;
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

/* line is one whole line of text */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p;

	for (p = text; (p = strstr(p, line)); p++) {
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n])) {
			return true;
		}
	}
	return false;
}

/* The text's first line, for a verdict's detail (cut at 200 bytes). */
static const char *first_line(const char *s, char *buf, size_t len)
{
	snprintf(buf, len, "%.*s", (int)strcspn(s, "\n"), s);
	return buf;
}

struct outcome {
	int status;
	char *out, *err, *fields;	/* fields: "" unless the run would start */
	const char *why;		/* NULL, or what is wrong besides status and line */
};

/* Run one command line: parsed here, and by rant when parsing ends the program. */
static void run_case(const char *cmd, const char *rant, struct outcome *o)
{
	char buf[4096], *argv[128];
	int argc = split_args(cmd, buf, argv, 126);
	int r = parse_case(argc, argv);

	o->why = NULL;
	o->out = slurp("o");
	o->err = slurp("e");
	o->fields = r == 0 ? dump_text() : strdup("");
	o->status = r < 0 ? EXIT_USAGE : EXIT_OK;
	if (r || opts.mode == MODE_ANALYZE) {
		char *po = o->out, *pe = o->err;

		o->status = rant_case(argv, rant);
		o->out = slurp("o");
		o->err = slurp("e");
		if (r && (strcmp(po, o->out) || strcmp(pe, o->err))) {
			o->why = "rant printed other than opt_parse";
		}
		free(po);
		free(pe);
	}
}

/* One line of CASES: its verdict on stdout. */
static void check_case(char *line, const char *rant)
{
	char *sep = strstr(line, " => "), *want, *end;
	struct outcome o;
	long status;

	if (!sep) {
		printf("not ok\t%s (no ' => STATUS LINE')\n", line);
		return;
	}
	*sep = 0;
	status = strtol(sep + 4, &end, 10);
	want = end + (*end == ' ');
	run_case(line, rant, &o);
	if (!o.why && o.status != status) {
		o.why = "exit status";
	}
	if (!o.why && !has_line(o.err, want) && !has_line(o.out, want) &&
	    !has_line(o.fields, want)) {
		o.why = "no such line";
	}
	if (!o.why && status == EXIT_USAGE &&
	    (*o.out || strncmp(o.err, want, strlen(want)) || strcmp(o.err + strlen(want), "\n"))) {
		o.why = "not that line alone on stderr";
	}
	*sep = ' ';
	if (o.why) {
		char e[200], so[200];

		printf("not ok\t%s (%s: status %d, stderr '%s', stdout '%s')\n", line, o.why,
		       o.status, first_line(o.err, e, sizeof(e)), first_line(o.out, so, sizeof(so)));
	} else {
		printf("ok\t%s\n", line);
	}
	free(o.out);
	free(o.err);
	free(o.fields);
}

int main(int argc, char **argv)
{
	char line[4096];
	FILE *f;

	(void)run_main;		/* linked, never run: this program only parses */
	(void)analyze_main;
	(void)fds_own;
	if (argc != 3 || !(f = fopen(argv[1], "r"))) {
		fprintf(stderr, "usage: opts-table CASES RANT (in a scratch directory)\n");
		return 2;
	}
	run_reset();
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0] == '#' || !line[strspn(line, " \t")]) {
			continue;
		}
		check_case(line, argv[2]);
		fflush(stdout);
	}
	fclose(f);
	return 0;
}
