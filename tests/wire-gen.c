// SPDX-License-Identifier: Apache-2.0
/*
 * The wire format as a Python module, from rant.c's own definitions.
 *
 *   wire-gen py > build/rantwire.py
 *   wire-gen h > build/rantwire.h
 *
 * The test tree's Python helpers (forge.py, fake-reflector.py, junk.py,
 * rantcheck.py, relay.py, net-kx.sh's reflectors) build and read rant's
 * datagrams, and so does the ground-truth relay (net-truth.d/relay.c, which
 * is kept apart from rant.c's code): they import the magic, version, types,
 * flags, sizes and header layout from here instead of typing them again.  The header's struct format is made from the field
 * list below, and each field's offset is checked against rant.c's enum
 * proto_off: a field moved there without this list following fails the
 * build, as does a list that does not end at the header's length.
 */
#define RANT_NO_MAIN
#include "../rant.c"

/* The header's fields in order: offset (rant.c's), Python struct code, bytes. */
static const struct {
	const char *name;
	int off;
	char code;
	int len;
} wire_fields[] = {
	{ "MAGIC", HO_MAGIC, 'I', 4 },	   { "VERSION", HO_VERSION, 'B', 1 },
	{ "TYPE", HO_TYPE, 'B', 1 },	   { "FLAGS", HO_FLAGS, 'H', 2 },
	{ "SESSION", HO_SESSION, 'I', 4 }, { "IDLE", HO_IDLE, 'I', 4 },
	{ "SEQ", HO_SEQ, 'Q', 8 },	   { "T2W", HO_T2W, 'Q', 8 },
	{ "T2SW", HO_T2SW, 'Q', 8 },	   { "T3SW", HO_T3SW, 'Q', 8 },
	{ "T3W", HO_T3W, 'Q', 8 },	   { "T3W_SEQ", HO_T3W_SEQ, 'Q', 8 },
};

int main(int argc, char **argv)
{
	bool py = argc == 2 && !strcmp(argv[1], "py");
	static const struct { const char *name; long v; } consts[] = {
		{ "MAGIC", PROTO_MAGIC },
		{ "VERSION", PROTO_VERSION },
		{ "HDR", PROTO_HDR_LEN },
		{ "SHORT_HDR", PROTO_MIN_SIZE },
		{ "MAX_SIZE", PROTO_MAX_SIZE },
		{ "PING", PT_PING },
		{ "PONG", PT_PONG },
		{ "FIN", PT_FIN },
		{ "FIN_ACK", PT_FIN_ACK },
		{ "BUSY", PT_BUSY },
		{ "PF_WARMUP", PF_WARMUP },
		{ "PF_BREACH", PF_BREACH },
		{ "PF_SRV_HW", PF_SRV_HW },
		{ "PF_T2W", PF_T2W },
		{ "PF_T2SW", PF_T2SW },
		{ "PF_T3SW", PF_T3SW },
		{ "PF_T3W", PF_T3W },
		{ "PF_MORE", PF_MORE },
		{ "PF_PARTIAL", PF_PARTIAL },
		{ "PF_TAG", PF_TAG },
		{ "PF_KSTAMPS", PF_KSTAMPS },
		{ "PF_PHC_OFF", PF_PHC_OFF },
		{ "PF_T3HIST", PF_T3HIST },
		{ "PF_LAST", PF_LAST },
		{ "PF_NO_TX", PF_NO_TX },
		{ "PF_CLASS", PF_CLASS },
		{ "PF_PRIO_SHIFT", PF_PRIO_SHIFT },
		{ "TAG_LEN", TAG_LEN },
		{ "KX_LEN", KX_LEN },
		{ "KX_PHC_LEN", KX_PHC_LEN },
		{ "T3HIST_MAX", T3HIST_MAX },
		{ "T3HIST_HDR", T3HIST_HDR },
		{ "T3HIST_ENT", T3HIST_ENT },
		{ "IDLE_MAX_MS", IDLE_MAX_MS },
	};
	char fmt[ARRAY_SIZE(wire_fields) + 2] = "!";
	size_t i;
	int at = 0, short_n = 0;

	for (i = 0; i < ARRAY_SIZE(wire_fields); i++) {
		if (wire_fields[i].off != at) {
			fprintf(stderr, "wire-gen: field %s at %d in rant.c, %d by this list's sizes\n",
				wire_fields[i].name, wire_fields[i].off, at);
			return 1;
		}
		fmt[i + 1] = wire_fields[i].code;
		at += wire_fields[i].len;
		if (at == PROTO_MIN_SIZE) {
			short_n = (int)i + 1;
		}
	}
	if (at != PROTO_HDR_LEN || !short_n) {
		fprintf(stderr, "wire-gen: the fields end at %d, the header at %d (short header %d)\n", at,
			PROTO_HDR_LEN, PROTO_MIN_SIZE);
		return 1;
	}
	if (!py && (argc != 2 || strcmp(argv[1], "h"))) {
		fprintf(stderr, "usage: wire-gen py|h\n");
		return 2;
	}
	if (!py) {
		printf("/* rant's wire format, generated from rant.c by tests/wire-gen.c: do not edit. */\n");
		for (i = 0; i < ARRAY_SIZE(consts); i++) {
			printf("#define RW_%s %ld\n", consts[i].name, consts[i].v);
		}
		for (i = 0; i < ARRAY_SIZE(wire_fields); i++) {
			printf("#define RW_OFF_%s %d\n", wire_fields[i].name, wire_fields[i].off);
		}
		return 0;
	}
	printf("\"\"\"rant's wire format, generated from rant.c by tests/wire-gen.c: do not edit.\"\"\"\n\n");
	for (i = 0; i < ARRAY_SIZE(consts); i++) {
		printf("%s = %ld\n", consts[i].name, consts[i].v);
	}
	/* the whole header, and its short form (magic to seq) */
	printf("# the header's fields in order, each with its offset\nFIELDS = (");
	for (i = 0; i < ARRAY_SIZE(wire_fields); i++) {
		printf("%s(\"%s\", %d)", i ? ", " : "", wire_fields[i].name, wire_fields[i].off);
	}
	printf(")\nOFF = dict(FIELDS)\n");
	printf("HEADER = \"%s\"\n", fmt);
	fmt[short_n + 1] = 0;
	printf("SHORT = \"%s\"\n", fmt);
	return 0;
}
