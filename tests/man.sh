#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The manual pages in step with the programs: man/rant.1 and
# man/rant-config.sh.1 are what man/mkman.sh makes from today's --help
# (make man makes them again), every option of `rant --help` has its
# entry, and groff reads both without a warning.
#
#   tests/man.sh      (RANT=path overrides the binary)
cd "$(dirname "$0")/.." || exit 2
# shellcheck source=tests/lib.sh
. tests/lib.sh

[ -x "$RANT" ] || { not_ok "no rant binary at $RANT (run make)"; finish; exit 1; }
bash man/mkman.sh "$RANT" "$WORK" || not_ok "man/mkman.sh ran"
for page in rant.1 rant-config.sh.1; do
	if cmp -s "man/$page" "$WORK/$page"; then
		ok "man/$page is what --help makes of it now"
	else
		not_ok "man/$page is what --help makes of it now (make man)"
		diff "man/$page" "$WORK/$page" | head -n 10 | sed 's/^/#   /'
	fi
	if command -v groff >/dev/null; then
		expect_eq "groff reads man/$page without a warning" "$(groff -man -Tutf8 -ww -z "man/$page" 2>&1)" ""
	else
		skip "groff not installed: man/$page not rendered"
	fi
done
n=$("$RANT" --help | grep -c '^  *-')
expect_eq "rant.1 has an entry for each of --help's $n options" "$(grep -c '^\.TP$' man/rant.1)" "$n"
finish
