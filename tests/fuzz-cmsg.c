// SPDX-License-Identifier: Apache-2.0
/*
 * libFuzzer harness: ts_parse() and ts_tx_stamp() on a control buffer that is
 * the fuzz input.  The kernel never hands out a malformed one, but a parser
 * that walks cmsg_len fields must survive any bytes: lengths larger than the
 * buffer, smaller than a header, or that wrap the pointer arithmetic of
 * CMSG_NXTHDR.  The buffer is a heap block of exactly the input's size
 * (8-aligned by malloc), so ASan reports any read past its end.  The same
 * buffer goes through ts_parse_cb() with each side's own parser
 * (reflect_ctl(): the address pinged and the TOS; emit_rxq_ovfl()).
 */
#define RANT_NO_MAIN
#include "../rant.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char iob[64];
	struct iovec iov = { iob, sizeof(iob) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct ts_cmsg c;
	void *ctrl = malloc(size ? size : 1);
	uint32_t key;
	uint64_t wire;

	if (!ctrl) {
		return 0;
	}
	memcpy(ctrl, data, size);
	msg.msg_control = size ? ctrl : NULL;
	msg.msg_controllen = size;
	ts_parse(&msg, &c);
	run.ts.hw = false;
	if (ts_tx_stamp(&c, &key, &wire) && wire != c.sw) {
		abort();	/* software source must give the software stamp */
	}
	run.ts.hw = true;
	if (ts_tx_stamp(&c, &key, &wire) && wire != c.hw) {
		abort();
	}
	(void)ts_wire(&c);
	/* the reflector's destination-address and TOS parser, the client's drop counter */
	refl.pi_level = 0;
	classes.rx_tos = -1;
	ts_parse_cb(&msg, &c, reflect_ctl);
	if ((refl.pi_level && refl.pi_level != IPPROTO_IP && refl.pi_level != IPPROTO_IPV6) ||
	    classes.rx_tos < -1 || classes.rx_tos > 255) {
		abort();
	}
	ts_parse_cb(&msg, &c, emit_rxq_ovfl);
	free(ctrl);
	return 0;
}
