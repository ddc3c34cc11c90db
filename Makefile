# rant - build, test, demo, bench.  See README.md.
CC ?= gcc
CFLAGS ?= -O2 -g -Wall -Wextra
EXTRA_CFLAGS ?=
LDLIBS = -lm -lpthread
PREFIX ?= /usr/local
DESTDIR ?=
SAN_CC ?= clang
GSAN_CC ?= gcc
SAN_FLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_SECONDS ?= 60

all: rant

rant: rant.c
	$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -o $@ rant.c $(LDLIBS)

tests/unit: tests/unit.c rant.c
	$(CC) $(CFLAGS) -Werror $(EXTRA_CFLAGS) -o $@ tests/unit.c $(LDLIBS)

# sanitizer builds of the tool and the unit tests (ASan + UBSan)
rant-san: rant.c
	$(SAN_CC) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ rant.c $(LDLIBS)

tests/unit-san: tests/unit.c rant.c
	$(SAN_CC) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ tests/unit.c $(LDLIBS)

# the same with gcc's sanitizers (gcc before 14 has no __has_feature)
rant-gsan: rant.c
	$(GSAN_CC) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ rant.c $(LDLIBS)

tests/unit-gsan: tests/unit.c rant.c
	$(GSAN_CC) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ tests/unit.c $(LDLIBS)

# -Werror on the real compile (warnings that need -O2 included), then all tests
werror: rant.c
	$(CC) $(CFLAGS) $(EXTRA_CFLAGS) -Werror -c -o /dev/null rant.c

# and with clang, the other compiler users build it with
werror-clang: rant.c tests/unit.c
	clang $(CFLAGS) $(EXTRA_CFLAGS) -Werror -c -o /dev/null rant.c
	clang $(CFLAGS) $(EXTRA_CFLAGS) -Werror -c -o /dev/null tests/unit.c

tests/plot-gen: tests/plot-gen.c
	$(CC) $(CFLAGS) -Werror $(EXTRA_CFLAGS) -o $@ tests/plot-gen.c

# option cases (tests/net-opts.sh)
tests/opts-table: tests/opts-table.c rant.c
	$(CC) $(CFLAGS) -Werror $(EXTRA_CFLAGS) -o $@ tests/opts-table.c $(LDLIBS)

tests/opts-table-san: tests/opts-table.c rant.c
	$(SAN_CC) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ tests/opts-table.c $(LDLIBS)

tests/opts-table-gsan: tests/opts-table.c rant.c
	$(GSAN_CC) $(SAN_FLAGS) -Wall -Wextra -Werror -o $@ tests/opts-table.c $(LDLIBS)

check: werror werror-clang rant tests/unit tests/plot-gen tests/opts-table
	tests/run.sh

check-sanitize: rant-san tests/unit-san tests/plot-gen tests/opts-table-san
	RANT=$(CURDIR)/rant-san UNIT=tests/unit-san OPTS_TABLE=$(CURDIR)/tests/opts-table-san ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 tests/run.sh

check-sanitize-gcc: rant-gsan tests/unit-gsan tests/plot-gen tests/opts-table-gsan
	RANT=$(CURDIR)/rant-gsan UNIT=tests/unit-gsan OPTS_TABLE=$(CURDIR)/tests/opts-table-gsan ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 tests/run.sh

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

bench: rant tests/bench-log tests/bench-tag tests/bench.d/floor tests/bench.d/kcost tests/plot-gen tests/plot-bench
	tests/bench.sh
	tests/bench.d/kcost
	tests/bench-log
	tests/bench-tag
	tests/plot-bench.sh

soak: rant
	tests/soak.sh

install: rant
	install -d $(DESTDIR)$(PREFIX)/bin
	install -p -m 0755 rant $(DESTDIR)$(PREFIX)/bin/rant
	install -p -m 0755 config.sh $(DESTDIR)$(PREFIX)/bin/rant-config.sh

clean:
	rm -f rant rant-san rant-gsan tests/bench-tag tests/unit tests/unit-san tests/unit-gsan tests/bench-log tests/bench.d/floor tests/plot-gen tests/plot-bench
	find tests -maxdepth 1 -type f -name 'fuzz-*' ! -name '*.c' ! -name '*.sh' -delete
	rm -rf tests/fuzz-out

.PHONY: all check check-sanitize check-sanitize-gcc werror werror-clang valgrind fuzz demo bench soak install clean
