// SPDX-License-Identifier: Apache-2.0
/*
 * taiset N: set the kernel's TAI offset (CLOCK_TAI - CLOCK_REALTIME) to N
 * seconds, as phc2sys or chronyd would (adjtimex(2), ADJ_TAI); with no
 * argument, print it.  Built -static for the guest lab (tests/vm), whose
 * TSN section needs it set before rant --txtime runs; never run on the host.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/timex.h>

int main(int argc, char **argv)
{
	struct timex t = { 0 };

	if (argc > 1) {
		t.modes = ADJ_TAI;
		t.constant = atoi(argv[1]);
	}
	if (adjtimex(&t) < 0) {
		perror("adjtimex");
		return 1;
	}
	if (argc > 1) {
		t.modes = 0;
		adjtimex(&t);
	}
	printf("%d\n", t.tai);
	return 0;
}
