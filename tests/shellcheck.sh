#!/bin/bash
# Lint the shell scripts with shellcheck, as TAP:
#   tests/shellcheck.sh           config.sh, tests/config/, the other test scripts
#                                 (the guest lab's too), .ci/run
#   tests/shellcheck.sh config    config.sh alone (make quick)
cd "$(dirname "$0")/.." || exit 2
TAP_ONLY=1
# shellcheck source=tests/lib.sh
. tests/lib.sh

if ! command -v shellcheck >/dev/null; then
	skip "shellcheck not installed: not linting"
	finish
	exit 0
fi
# lint NAME FILE...: one test (two shellchecks at a time, a few files each)
lint() {
	local name=$1 out
	shift
	if out=$(printf '%s\0' "$@" | xargs -0 -P 2 -n 4 shellcheck -x 2>&1); then
		ok "shellcheck $name"
	else
		not_ok "shellcheck $name"
		echo "$out" | head -n 30 | sed 's/^/#   /'
	fi
}

lint config.sh config.sh
if [ "${1:-}" != config ]; then
	lint "tests/config scripts and stubs" tests/config/*.sh tests/config/stubs/*
	lint "the other test scripts, the guest lab's and .ci/run" tests/*.sh tests/vm/*.sh tests/vm/init .ci/run
fi
finish
