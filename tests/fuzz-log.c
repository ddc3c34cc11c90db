// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer harness: the log reader of --analyze (alog_open, alog_next) on
 * a log whose bytes are the input, held in a memfd and opened by its
 * /proc/self/fd path, read a slice at a time as --analyze reads it.
 *
 * alog_close() must give back the descriptor and the buffer whatever the
 * outcome: a refusal path that kept either would pile them up run after run
 * (descriptors to the limit, then every open fails and the fuzzer stops
 * exploring), so the harness checks that both are gone.
 */
#define RANT_NO_MAIN
#include "../rant.c"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char memfd_path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *null = fopen("/dev/null", "w");

	(void)argc;
	(void)argv;
	if (null) {
		stderr = null;	/* the reader explains each refusal: not wanted here */
	}
	memfd = memfd_create("rant-fuzz-log", MFD_CLOEXEC);
	if (memfd < 0) {
		abort();
	}
	snprintf(memfd_path, sizeof(memfd_path), "/proc/self/fd/%d", memfd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct alog L;
	int r, fd;

	if (ftruncate(memfd, 0) < 0 || pwrite(memfd, data, size, 0) != (ssize_t)size) {
		abort();
	}
	side_set(true);
	r = alog_open(memfd_path, &L);
	fd = L.fd;
	while (r == 0 && (r = alog_next(&L)) > 0) {
		if (L.st < 0 || L.st >= NSTATUS || L.n > size) {
			abort();
		}
		r = 0;
	}
	alog_close(&L);
	if ((fd >= 0 && fcntl(fd, F_GETFD) != -1) || L.buf) {
		abort();	/* the descriptor or the buffer left behind */
	}
	return 0;
}
