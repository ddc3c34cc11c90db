// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer harness: alog_read() (what --analyze parses) on a log whose bytes
 * are the input, held in a memfd and opened by its /proc/self/fd path.
 *
 * alog_read() maps the file.  Should a refusal path ever return without
 * unmapping it (it once did: rant exits right after, so nobody noticed), the
 * mappings would pile up run after run to vm.max_map_count and the fuzzer
 * would stop exploring, so mmap/munmap go through a wrapper that remembers
 * the mapping and the harness drops what is left.
 */
#define mmap fuzz_mmap
#define munmap fuzz_munmap
#define RANT_NO_MAIN
#include "../rant.c"
#undef mmap
#undef munmap

extern void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
extern int munmap(void *addr, size_t len);

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void *mapped;
static size_t mapped_len;
static int memfd = -1;
static char memfd_path[64];

void *fuzz_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	void *p = mmap(addr, len, prot, flags, fd, off);

	if (p != MAP_FAILED && fd >= 0) {
		mapped = p;
		mapped_len = len;
	}
	return p;
}

int fuzz_munmap(void *addr, size_t len)
{
	if (addr == mapped) {
		mapped = NULL;
	}
	return munmap(addr, len);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	FILE *null = fopen("/dev/null", "w");

	(void)argc;
	(void)argv;
	if (null) {
		stderr = null;	/* alog_read() explains each refusal: not wanted here */
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
	uint64_t i;
	int r;

	if (ftruncate(memfd, 0) < 0 || pwrite(memfd, data, size, 0) != (ssize_t)size) {
		abort();
	}
	side_set(true);
	r = alog_read(memfd_path, &L);
	if (r == 0) {
		if (L.n && (!L.row || !L.status)) {
			abort();
		}
		for (i = 0; i < L.n; i++) {
			if (L.status[i] >= NSTATUS) {
				abort();
			}
		}
	}
	if (mapped) {
		munmap(mapped, mapped_len);	/* left behind by a refused log */
		mapped = NULL;
	}
	free(L.row);
	free(L.status);
	free(L.cls);
	free(L.size);
	free(L.dup);
	return 0;
}
