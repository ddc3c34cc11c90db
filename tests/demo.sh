#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# `make demo`: rant in two throwaway network namespaces joined by a veth
# pair, a reflector (--once) and a client run of a few seconds with app
# stamps and histograms, then both reports.  The namespaces go away on exit
# (tests/lib.sh's EXIT trap); nothing of the host's network is touched.
#
#   DEMO_SECONDS=3 DEMO_INTERVAL_US=100 tests/demo.sh

: "${DEMO_SECONDS:=3}"
: "${DEMO_INTERVAL_US:=100}"

banner() {
	printf '\n==================== %s ====================\n' "$*"
}

main() {
	local rc rrc

	# shellcheck source=tests/lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
	need_setup demo demo
	echo "demo: namespaces $NS_A ($ADDR_A on $VETH_A) and $NS_B ($ADDR_B on $VETH_B), joined by veth"
	if ! reflector demo-reflect --once -s -H; then
		echo "demo: the reflector did not start:" >&2
		cat "$WORK/demo-reflect.err" >&2
		exit 1
	fi
	echo "demo: reflector listening in $NS_B: rant -i $VETH_B --once -s -H"
	echo "demo: client in $NS_A for $DEMO_SECONDS s: rant -i $VETH_A -a $ADDR_B -s -H --interval $DEMO_INTERVAL_US -d $DEMO_SECONDS"
	echo
	# the client's status lines show live on a terminal (stderr); its report is printed below
	ip netns exec "$NS_A" "$RANT" -i "$VETH_A" -a "$ADDR_B" -s -H --interval "$DEMO_INTERVAL_US" \
		-d "$DEMO_SECONDS" >"$WORK/demo-emit.out"
	rc=$?
	# --once: the reflector ends after the client's FIN
	if wait_for 5 gone "$REFLECTOR_PID"; then
		wait "$REFLECTOR_PID"
		rrc=$?
	else
		rrc="still running"
	fi

	banner "emit (client) report, exit $rc"
	cat "$WORK/demo-emit.out"
	banner "reflect (server) report, exit $rrc"
	cat "$WORK/demo-reflect.out"
	echo
	echo "demo: done; removing the namespaces"
	return "$rc"
}

main "$@"
