#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The manual pages, made from the programs' own --help, so that they say
# what the programs do (tests/man.sh checks that the committed pages are
# what this makes now; make man makes them again):
#
#   man/mkman.sh RANT DIR     writes DIR/rant.1 and DIR/rant-config.sh.1
#
# rant.1: NAME, SYNOPSIS and OPTIONS from `rant --help` (one option a
# line), the rest below.  rant-config.sh.1: config.sh's whole --help, as
# written.  Only the man(7) macros groff and mandoc both know.
set -u
RANT=${1:?usage: man/mkman.sh RANT DIR}
DIR=${2:?usage: man/mkman.sh RANT DIR}
HERE=$(cd "$(dirname "$0")/.." && pwd)

# roff TEXT: a line of text as roff reads it literally (backslashes, a
# leading dot or quote, hyphens of options)
roff() {
	sed -e 's/\\/\\e/g' -e 's/^\([.'"'"']\)/\\\&\1/' -e 's/-/\\-/g'
}

help=$("$RANT" --help) || exit 1
version=$("$RANT" --version | head -n 1)

{
	printf '.TH RANT 1 "" "%s" "User Commands"\n' "$version"
	printf '.SH NAME\nrant \\- Round-trip And Network Timing: UDP ping-pong latency with NIC or kernel timestamps\n'
	printf '.SH SYNOPSIS\n.nf\n'
	sed -n '/^Options:$/q; /^Usage: /s/^Usage: //p; /^       rant /s/^       //p' <<<"$help" | roff
	printf '.fi\n'
	cat <<-'EOF'
	.SH DESCRIPTION
	\fBrant\fR measures network latency with a UDP ping-pong between a client
	(\fB\-a\fR \fIADDR\fR) and a reflector (no \fB\-a\fR), timestamping every packet
	in the NIC where the hardware can, else in the kernel: T1 (the ping
	leaves the client), T2 (it reaches the reflector), T3 (the pong leaves),
	T4 (it reaches the client), and with \fB\-s\fR the application's own stamps
	around them.  From those it reports the round trip, the reflector's
	response, the network's share and the one-way delays, with percentiles,
	the transactions that breached a threshold and where their time went,
	as text, JSON, a csv or text log and an SVG picture; \fB\-\-analyze\fR
	reports the same from logs.
	.PP
	Run as root on the NIC under test for hardware stamps; \%\fBrant\-config.sh\fR(1)
	prepares an interface for such tests.  README.md in rant's source tree
	is the full manual.
	.SH OPTIONS
	EOF
	sed -n '/^Options:$/,/^Exit status/p' <<<"$help" | sed '1d;$d' | while IFS= read -r line; do
		[[ -z $line ]] && continue
		# "  -i, --interface IFACE          text": the names, then the text after two spaces or more
		names=${line:2:31}
		names=${names%"${names##*[! ]}"}
		text=${line:33}
		printf '.TP\n.B %s\n' "$(roff <<<"$names")"
		roff <<<"$text"
	done
	printf '.SH EXIT STATUS\n'
	sed -n 's/^Exit status: //p' <<<"$help" | roff
	cat <<-'EOF'
	.SH EXAMPLES
	.nf
	# reflector, on the NIC under test
	sudo rant \-i eth1
	# client: 100 000 transactions, a breach above 50 us stops it
	sudo rant \-i eth1 \-a 192.0.2.2 \-\-count 100000 \-t 50 \-\-json run.json
	# what the log of a run says, with its 10 worst transactions
	rant \-\-analyze run.csv \-\-top 10
	.fi
	.SH SEE ALSO
	\fBrant\-config.sh\fR(1), \fBsockperf\fR(1), \fBcyclictest\fR(8),
	\fBptp4l\fR(8), \fBphc2sys\fR(8), \fBethtool\fR(8)
	EOF
} >"$DIR/rant.1"

chelp=$(bash "$HERE/config.sh" --help 2>&1)
{
	printf '.TH RANT\\-CONFIG.SH 1 "" "%s" "User Commands"\n' "$version"
	printf '.SH NAME\nrant\\-config.sh \\- prepare a host'"'"'s interface for rant latency tests, and undo it\n'
	printf '.SH SYNOPSIS\n.nf\n'
	sed -n '/^$/q; s/^Usage: //p; s/^       config\.sh /config.sh /p' <<<"$chelp" | roff
	printf '.fi\n.SH DESCRIPTION\n.nf\n'
	sed '1,/^$/d' <<<"$chelp" | roff
	printf '.fi\n.SH SEE ALSO\n\\fBrant\\fR(1), \\fBethtool\\fR(8), \\fBphc2sys\\fR(8), \\fBchrt\\fR(1), \\fBip\\-netns\\fR(8)\n'
} >"$DIR/rant-config.sh.1"
