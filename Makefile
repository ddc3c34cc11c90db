# rant - build, test, demo, bench.  See README.md.
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
FUZZ_SECONDS ?= 60

all: rant

rant: rant.c
	$(CC) $(CFLAGS) $(EXTRA_CFLAGS) $(LDFLAGS) -o $@ rant.c $(LDLIBS)

tests/unit: tests/unit.c rant.c
	$(CC) $(CFLAGS) -Werror $(EXTRA_CFLAGS) -o $@ tests/unit.c $(TEST_LDLIBS)

# sanitizer builds of the tool and the unit tests (ASan + UBSan)
rant-san: rant.c
	$(SAN_CC) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ rant.c $(LDLIBS)

tests/unit-san: tests/unit.c rant.c
	$(SAN_CC) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ tests/unit.c $(TEST_LDLIBS)

# the same with gcc's sanitizers (gcc before 14 has no __has_feature)
rant-gsan: rant.c
	$(GSAN_CC) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ rant.c $(LDLIBS)

tests/unit-gsan: tests/unit.c rant.c
	$(GSAN_CC) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ tests/unit.c $(TEST_LDLIBS)

# -Werror on the real compile (warnings that need -O2 included), then all tests
werror: rant.c
	$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -Werror -c -o /dev/null rant.c

# and with clang, the other compiler users build it with
werror-clang: rant.c tests/unit.c
	clang $(CFLAGS) $(EXTRA_CFLAGS) -Werror -c -o /dev/null rant.c
	clang $(CFLAGS) $(EXTRA_CFLAGS) -Werror -c -o /dev/null tests/unit.c

tests/plot-gen: tests/plot-gen.c
	$(CC) $(CFLAGS) -Werror $(EXTRA_CFLAGS) -o $@ tests/plot-gen.c

# the ground truth of tests/net-truth.sh: a relay holding each packet a known time
tests/net-truth.d/relay: tests/net-truth.d/relay.c
	$(CC) $(CFLAGS) -Werror $(EXTRA_CFLAGS) -o $@ tests/net-truth.d/relay.c

# option parsing against its recording (tests/net-opts.sh)
tests/opts-golden: tests/opts-golden.c rant.c
	$(CC) $(CFLAGS) -Werror $(EXTRA_CFLAGS) -o $@ tests/opts-golden.c $(LDLIBS)

tests/opts-golden-san: tests/opts-golden.c rant.c
	$(SAN_CC) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ tests/opts-golden.c $(LDLIBS)

tests/opts-golden-gsan: tests/opts-golden.c rant.c
	$(GSAN_CC) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ tests/opts-golden.c $(LDLIBS)

check: werror werror-clang rant tests/unit tests/plot-gen tests/opts-golden tests/net-truth.d/relay
	tests/run.sh
	@echo "make check: the QEMU guest lab (real e1000e driver, RT kernel) is make check-vm"

# The QEMU guest lab (tests/vm/run.sh): rant's real-driver tests on
# emulated e1000e NICs under Debian's stock and PREEMPT_RT 6.1 kernels.
# Not part of `make check` (a few minutes of software emulation); CI runs
# both.  The guest has no shared libraries of rant's: it is linked -static
# (glibc's link-time note on getaddrinfo does not apply: the guest's
# addresses are numeric).
build/vm/rant: rant.c
	mkdir -p build/vm
	$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -static -o $@ rant.c $(LDLIBS) 2>&1 | { grep -v 'getaddrinfo\|statically linked' || true; }
	test -x $@

check-vm: build/vm/rant
	tests/run.sh tests/vm/run.sh

check-sanitize: rant-san tests/unit-san tests/plot-gen tests/opts-golden-san tests/net-truth.d/relay
	RANT=$(CURDIR)/rant-san UNIT=tests/unit-san OPTS_GOLDEN=$(CURDIR)/tests/opts-golden-san ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 tests/run.sh

check-sanitize-gcc: rant-gsan tests/unit-gsan tests/plot-gen tests/opts-golden-gsan tests/net-truth.d/relay
	RANT=$(CURDIR)/rant-gsan UNIT=tests/unit-gsan OPTS_GOLDEN=$(CURDIR)/tests/opts-golden-gsan ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 tests/run.sh

valgrind: tests/unit
	valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite tests/unit

fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) tests/fuzz.sh

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

bench: rant tests/bench-log tests/bench-tag tests/bench.d/floor tests/bench.d/kcost tests/plot-gen tests/plot-bench tests/opts-golden tests/opts-golden-san tests/opts-golden-gsan
	tests/bench.sh
	tests/bench.d/icount.sh
	tests/bench.d/kcost
	tests/bench-log
	tests/bench-tag
	tests/plot-bench.sh
	tests/bench.d/scale.sh

soak: rant
	tests/soak.sh

install: rant
	install -d $(DESTDIR)$(PREFIX)/bin
	install -p -m 0755 rant $(DESTDIR)$(PREFIX)/bin/rant
	install -p -m 0755 config.sh $(DESTDIR)$(PREFIX)/bin/rant-config.sh

clean:
	rm -f rant rant-san rant-gsan tests/bench-tag tests/unit tests/unit-san tests/unit-gsan tests/bench-log tests/bench.d/floor tests/plot-gen tests/plot-bench tests/opts-golden tests/opts-golden-san tests/opts-golden-gsan tests/net-truth.d/relay
	find tests -maxdepth 1 -type f -name 'fuzz-*' ! -name '*.c' ! -name '*.sh' -delete
	rm -rf tests/fuzz-out build/vm

.PHONY: all check check-vm check-sanitize check-sanitize-gcc werror werror-clang valgrind fuzz demo bench soak install clean
