# rant - build, test, demo, bench.  See README.md (Build, Tests).
CC ?= gcc
CFLAGS ?= -O2 -g -Wall -Wextra
EXTRA_CFLAGS ?=
# every library symbol bound at start: a first call from the loop (the first
# sendmsg, inside the first transaction) never waits for the dynamic linker
LDFLAGS ?= -Wl,-z,now
LDLIBS = -lpthread
# the unit tests compare rant's own arithmetic with libm's
TEST_LDLIBS = $(LDLIBS) -lm
PREFIX ?= /usr/local
DESTDIR ?=
SAN_CC ?= clang
GSAN_CC ?= gcc
SAN_FLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_ENV = ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1
FUZZ_SECONDS ?= 60
# suites at once in make check (tests/run.sh)
JOBS ?= 6
# the network suites the sanitizer builds run: sudo make cover picks them
# (README, Tests); its answer here, in this order: each reaches lines or
# branches of rant.c that none before it (nor the unit tests) reaches;
# net-kx and net-truth, the last two, add none by that answer and are kept
# from an earlier one, when they reached lines no other suite did;
# net-window and net-pmc add none
SAN_SUITES ?= tests/net-compat.sh tests/net-series.sh tests/net-guard.sh tests/net-log.sh \
	tests/net-plot.sh tests/net-lo.sh tests/net-classes.sh tests/net-hw.sh tests/net-abuse.sh \
	tests/net-stats.sh tests/net-outputs.sh tests/net-perf.sh tests/net-core.sh \
	tests/net-kx.sh tests/net-truth.sh
NPROC := $(shell nproc 2>/dev/null || echo 2)
# rant --version names the commit it was built from, where git knows it
GIT_ID := $(shell git describe --always --dirty 2>/dev/null)
BUILD_DEFS = $(if $(GIT_ID),-DRANT_BUILD='"commit $(GIT_ID)"')
# ... so both programs that print it are rebuilt when the commit changes:
# build/git-id is rewritten only then (rant and tests/opts-table must agree)
GIT_ID_STAMP := build/git-id
$(shell mkdir -p build; [ "$$(cat $(GIT_ID_STAMP) 2>/dev/null)" = "$(GIT_ID)" ] || echo "$(GIT_ID)" >$(GIT_ID_STAMP))

all: rant

rant: rant.c $(GIT_ID_STAMP)
	$(CC) $(CFLAGS) $(EXTRA_CFLAGS) $(BUILD_DEFS) $(LDFLAGS) -o $@ rant.c $(LDLIBS)

tests/unit: tests/unit.c rant.c
	$(CC) $(CFLAGS) -Werror $(EXTRA_CFLAGS) -o $@ tests/unit.c $(TEST_LDLIBS)

# make quick's: -O0 compiles in a fifth of -O2's time; the warnings that
# need -O2 come from rant's own build (make check's tests/unit is -O2)
tests/unit-quick: tests/unit.c rant.c
	$(CC) $(CFLAGS) -O0 -Werror $(EXTRA_CFLAGS) -o $@ tests/unit.c $(TEST_LDLIBS)

# option cases (tests/net-opts.sh); -O0: it only parses, and rant.c's
# optimised compile is rant's own
tests/opts-table: tests/opts-table.c rant.c $(GIT_ID_STAMP)
	$(CC) $(CFLAGS) -O0 -Werror $(EXTRA_CFLAGS) $(BUILD_DEFS) -o $@ tests/opts-table.c $(LDLIBS)

tests/plot-gen: tests/plot-gen.c
	$(CC) $(CFLAGS) -Werror $(EXTRA_CFLAGS) -o $@ tests/plot-gen.c

# sanitizer builds (ASan + UBSan), with clang and with gcc (gcc before 14 has no __has_feature)
# (the compiler of each: gcc's for the -gsan ones)
SAN_CC_OF = $(if $(findstring gsan,$@),$(GSAN_CC),$(SAN_CC))

rant-san rant-gsan: rant.c
	$(SAN_CC_OF) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ rant.c $(LDLIBS)

tests/unit-san tests/unit-gsan: tests/unit.c rant.c
	$(SAN_CC_OF) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ tests/unit.c $(TEST_LDLIBS)

tests/opts-table-san tests/opts-table-gsan: tests/opts-table.c rant.c
	$(SAN_CC_OF) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ tests/opts-table.c $(LDLIBS)

# rant itself built with -Werror (warnings that need -O2 included): what
# quick and check test; rant.werror records that it was
werror: rant.werror
rant.werror: rant.c $(GIT_ID_STAMP)
	$(CC) $(CFLAGS) $(EXTRA_CFLAGS) $(BUILD_DEFS) -Werror $(LDFLAGS) -o rant rant.c $(LDLIBS)
	touch $@

# and with clang, the other compiler users build it with: its warnings come
# from its front end, so a syntax-only pass gives them all, in a fifth of the time.
# A host without clang skips the pass with a line, as shellcheck's is skipped:
# gcc's -Werror build and the tests still run.
CLANG ?= clang
werror-clang: rant.c tests/unit.c
	@if ! command -v $(CLANG) >/dev/null 2>&1; then \
		echo "# skip werror-clang: $(CLANG) not installed: rant.c not checked with clang -Werror"; \
	else \
		echo "$(CLANG) $(CFLAGS) $(EXTRA_CFLAGS) -Werror -fsyntax-only rant.c"; \
		$(CLANG) $(CFLAGS) $(EXTRA_CFLAGS) -Werror -fsyntax-only rant.c && \
		echo "$(CLANG) $(CFLAGS) $(EXTRA_CFLAGS) -Werror -fsyntax-only tests/unit.c" && \
		$(CLANG) $(CFLAGS) $(EXTRA_CFLAGS) -Werror -fsyntax-only tests/unit.c; \
	fi

# the fuzz harnesses include rant.c too: compiled (syntax only) by check,
# so that a change of rant.c does not leave them broken until make fuzz
fuzz-syntax: rant.c tests/fuzz-cmsg.c tests/fuzz-log.c tests/fuzz-opts.c tests/fuzz-proto.c tests/fuzz-ptp.c
	@if ! command -v $(CLANG) >/dev/null 2>&1; then \
		echo "# skip fuzz-syntax: $(CLANG) not installed"; \
	else \
		for f in tests/fuzz-cmsg.c tests/fuzz-log.c tests/fuzz-opts.c tests/fuzz-proto.c tests/fuzz-ptp.c; do \
			echo "$(CLANG) -Wall -Wextra -Wno-unused-function -Werror -fsyntax-only $$f"; \
			$(CLANG) -Wall -Wextra -Wno-unused-function -Werror -fsyntax-only $$f || exit 1; \
		done; \
	fi

# the builds of quick and check, NPROC at a time
quick-build:
	@$(MAKE) --no-print-directory -j$(NPROC) werror werror-clang tests/unit-quick tests/opts-table \
		tests/bench.d/rusage

# the bench programs too, so that none of them stops building unseen
check-build:
	@$(MAKE) --no-print-directory -j$(NPROC) werror werror-clang fuzz-syntax tests/unit tests/opts-table build/rantwire.py \
		tests/plot-gen tests/net-truth.d/relay tests/net-why.d/why-hog tests/bench-log tests/bench-tag tests/plot-bench \
		tests/bench.d/floor tests/bench.d/kcost tests/bench.d/rusage

# the ground truth of tests/net-truth.sh: a relay holding each packet a known time
tests/net-truth.d/relay: tests/net-truth.d/relay.c build/rantwire.h
	$(CC) $(CFLAGS) -Werror $(EXTRA_CFLAGS) -Ibuild -o $@ tests/net-truth.d/relay.c

# the injected cause of tests/net-why.sh: a FIFO spin or a SIGSTOP of a known length
tests/net-why.d/why-hog: tests/net-why.d/why-hog.c
	$(CC) $(CFLAGS) -Werror $(EXTRA_CFLAGS) -o $@ tests/net-why.d/why-hog.c

# the wire format the test tree's Python helpers and the relay import, made from rant.c
build/wire-gen: tests/wire-gen.c rant.c
	mkdir -p build
	$(CC) $(CFLAGS) -O0 -Werror -Wno-unused-function $(EXTRA_CFLAGS) -o $@ tests/wire-gen.c $(LDLIBS)
build/rantwire.py: build/wire-gen
	build/wire-gen py >$@.tmp && mv $@.tmp $@
build/rantwire.h: build/wire-gen
	build/wire-gen h >$@.tmp && mv $@.tmp $@

# after every edit: no root, no namespaces, well under a minute
quick: quick-build
	UNIT=tests/unit-quick JOBS=$(NPROC) tests/run.sh unit tests/style.sh tests/man.sh tests/net-opts.sh tests/bench-summary.sh \
		tests/bench-rusage.sh "tests/shellcheck.sh config"

# every suite (the network ones need root: without it they skip, saying so)
check: check-build
	JOBS=$(JOBS) tests/run.sh
	@echo "make check: the QEMU guest lab (real e1000e and igb drivers, 6.1 and 6.12 kernels, stock and RT) is make check-vm"

# what is too heavy for every check (LONG=1): floods of 100 000 junk
# datagrams, a million-row log parsed, a 300 000-row plot in bounded time
# and memory (README, Tests)
check-long: check-build
	LONG=1 JOBS=$(JOBS) tests/run.sh tests/net-abuse.sh tests/net-log.sh tests/net-plot.sh

# the sanitizer builds: unit tests, option cases and the network suites of SAN_SUITES
check-sanitize: rant-san tests/unit-san tests/plot-gen tests/opts-table-san tests/net-truth.d/relay build/rantwire.py
	RANT=$(CURDIR)/rant-san UNIT=tests/unit-san OPTS_TABLE=$(CURDIR)/tests/opts-table-san \
		$(SAN_ENV) JOBS=$(JOBS) tests/run.sh unit tests/net-opts.sh $(SAN_SUITES)

check-sanitize-gcc: rant-gsan tests/unit-gsan tests/plot-gen tests/opts-table-gsan tests/net-truth.d/relay build/rantwire.py
	RANT=$(CURDIR)/rant-gsan UNIT=tests/unit-gsan OPTS_TABLE=$(CURDIR)/tests/opts-table-gsan \
		$(SAN_ENV) JOBS=$(JOBS) tests/run.sh unit tests/net-opts.sh $(SAN_SUITES)

# which network suites SAN_SUITES should be (README, Tests); root
cover: build/rantwire.py
	JOBS=$(JOBS) tests/cover.sh

# The QEMU guest lab (tests/vm/run.sh): rant's real-driver tests under
# Debian's 6.1 and 6.12 kernels, stock and PREEMPT_RT: emulated e1000e
# NICs under bookworm's QEMU 7.2 (6.1 only), igb ports and the lab's own
# modules under the backports' QEMU 10 (all four).  Not part of `make
# check` (minutes of software emulation); CI runs all of it.  The guest
# has no shared libraries of rant's: it is linked -static
# (glibc's link-time note on getaddrinfo does not apply: the guest's
# addresses are numeric).
build/vm/rant: rant.c
	mkdir -p build/vm
	$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -static -o $@ rant.c $(LDLIBS) 2>&1 | { grep -v 'getaddrinfo\|statically linked' || true; }
	test -x $@

# the TSN section's TAI offset setter (adjtimex ADJ_TAI), for the guest only
build/vm/taiset: tests/vm/taiset.c
	mkdir -p build/vm
	$(CC) -O2 -Wall -static -o $@ tests/vm/taiset.c

# Six boots one after another: more than the 15 min a suite gets by default
# (31 min in the last .ci/run, beside the other stages)
check-vm: build/vm/rant build/vm/taiset
	SUITE_TIMEOUT=2700 tests/run.sh tests/vm/run.sh

valgrind: tests/unit
	valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite tests/unit

fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz.sh

# only the inputs kept in tests/fuzz-regress/, under the fuzzers' sanitizers
fuzz-regress:
	FUZZ_SECONDS=0 tests/fuzz.sh

demo: rant
	tests/demo.sh

tests/bench-log: tests/bench-log.c rant.c
	$(CC) $(CFLAGS) -Wno-unused-function -o $@ tests/bench-log.c $(LDLIBS)

tests/bench-tag: tests/bench-tag.c rant.c
	$(CC) $(CFLAGS) -Wno-unused-function -o $@ tests/bench-tag.c $(LDLIBS)

tests/plot-bench: tests/plot-bench.c rant.c
	$(CC) $(CFLAGS) -Wno-unused-function -o $@ tests/plot-bench.c $(LDLIBS)

tests/bench.d/floor: tests/bench.d/floor.c
	$(CC) $(CFLAGS) -Werror -o $@ tests/bench.d/floor.c

tests/bench.d/kcost: tests/bench.d/kcost.c
	$(CC) $(CFLAGS) -Werror -o $@ tests/bench.d/kcost.c

tests/bench.d/rusage: tests/bench.d/rusage.c
	$(CC) $(CFLAGS) -Werror -o $@ tests/bench.d/rusage.c

bench: rant tests/bench-log tests/bench-tag tests/bench.d/floor tests/bench.d/kcost tests/bench.d/rusage tests/plot-gen tests/plot-bench
	tests/bench.sh
	tests/bench.d/icount.sh
	tests/bench.d/kcost
	tests/bench-log
	tests/bench-tag
	tests/plot-bench.sh
	tests/bench.d/scale.sh

soak: rant
	tests/soak.sh

# the manual pages, from rant's and config.sh's --help (tests/man.sh checks them)
man: rant
	bash man/mkman.sh ./rant man

install: rant
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -p -m 0755 rant $(DESTDIR)$(PREFIX)/bin/rant
	install -p -m 0755 config.sh $(DESTDIR)$(PREFIX)/bin/rant-config.sh
	install -p -m 0644 man/rant.1 man/rant-config.sh.1 $(DESTDIR)$(PREFIX)/share/man/man1/

clean:
	rm -f rant rant.werror rant-san rant-gsan tests/bench-tag tests/unit tests/unit-quick tests/unit-san tests/unit-gsan tests/bench-log tests/bench.d/floor tests/bench.d/kcost tests/bench.d/rusage tests/plot-gen tests/plot-bench tests/opts-table tests/opts-table-san tests/opts-table-gsan tests/net-truth.d/relay tests/net-why.d/why-hog
	find tests -maxdepth 1 -type f -name 'fuzz-*' ! -name '*.c' ! -name '*.sh' -delete
	rm -rf tests/fuzz-out build/vm build/wire-gen build/rantwire.py build/rantwire.h build/__pycache__

.PHONY: all quick quick-build fuzz-syntax check check-build check-long check-vm check-sanitize check-sanitize-gcc cover werror werror-clang valgrind fuzz fuzz-regress demo bench soak man install clean
