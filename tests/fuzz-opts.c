// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer harness: opt_parse() on an argv made of the input split at NUL
 * bytes (argv[0] is "rant").  Every argument is its own heap block, freed
 * after the call, so ASan catches a read past an argument or a pointer kept
 * into a previous run's argv.
 *
 * opt_parse() reports through stderr (and -h/-V through stdout): the harness
 * points the stdio streams at /dev/null once, at init.  Only the FILE
 * pointers change, not fds 1 and 2, so libFuzzer's and the sanitizers' own
 * reports still reach the terminal.  -i makes it call if_nametoindex(), a
 * local ioctl that sends nothing.
 */
#define RANT_NO_MAIN
#include "../rant.c"

#define MAX_ARGS	64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *null = fopen("/dev/null", "w");

	(void)argc;
	(void)argv;
	if (null) {
		stderr = null;
		stdout = null;
	}
	return 0;
}

/*
 * glibc's getopt keeps a pointer into the previous argv (the rest of a
 * cluster like "-qZ" after an error at Z); only optind = 0 drops it.
 * opt_parse() does that itself (optind = 1 would leave a second call
 * parsing the first one's leftovers); the harness resets too, so each
 * input is judged on its own even if that regresses.
 */
static void getopt_reset(void)
{
	static char name[] = "rant";
	char *none[] = { name, NULL };

	optind = 0;
	opterr = 0;
	(void)getopt(1, none, ":");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *argv[MAX_ARGS + 2];
	int argc = 0, r;
	size_t i = 0;

	argv[argc++] = strdup("rant");
	while (i < size && argc <= MAX_ARGS) {
		const uint8_t *nul = memchr(data + i, 0, size - i);
		size_t n = nul ? (size_t)(nul - (data + i)) : size - i;
		char *a = malloc(n + 1);

		if (!a) {
			break;
		}
		memcpy(a, data + i, n);
		a[n] = 0;
		argv[argc++] = a;
		i += n + 1;
	}
	argv[argc] = NULL;
#ifndef FUZZ_NO_GETOPT_RESET
	getopt_reset();
#endif
	r = opt_parse(argc, argv);
	if (r < -1 || r > 1) {
		abort();	/* opt_parse promises -1, 0 or 1 */
	}
	if (r == 0 && opts.mode != MODE_ANALYZE && opts.mode != MODE_EMIT && opts.mode != MODE_REFLECT) {
		abort();
	}
	if (r == 0 && (opts.bucket_ns == 0 || opts.bound_ns < opts.bucket_ns || opts.port < 1 || opts.port > 65535 ||
		       opts.size < PROTO_MIN_SIZE || opts.size > PROTO_MAX_SIZE)) {
		abort();	/* opt_check let through what the run cannot handle */
	}
	fflush(stdout);
	fflush(stderr);
	while (argc > 0) {
		free(argv[--argc]);
	}
	return 0;
}
