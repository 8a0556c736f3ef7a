/*
 * test_op_abi.c - lib/op_abi: the native description against the abi file
 * the daemon writes, parsing (every key, errors with their line), the
 * layout check, encode/decode round trips over several layouts with every
 * header field, hostile files (every truncation, bad descriptors, values
 * too wide), and writing the native file (content, no overwrite, sums).
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odb.h"
#include "op_abi.h"
#include "op_header.h"

struct fixture {
	char dir[256];
	int dirfd;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/test_op_abi.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	f->dirfd = open(f->dir, O_RDONLY | O_DIRECTORY);
	if (f->dirfd < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[300];

	close(f->dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", f->dir);
	free(f);
	return 0;
}

static char *read_all(int dirfd, const char *name, size_t *len)
{
	static char buf[1 << 16];
	int fd = openat(dirfd, name, O_RDONLY);
	ssize_t r;

	assert_true(fd >= 0);
	r = read(fd, buf, sizeof(buf) - 1);
	assert_true(r >= 0);
	close(fd);
	buf[r] = 0;
	*len = (size_t)r;
	return buf;
}

/* the daemon's abi file (op_write_abi) is exactly op_abi_native() formatted */
static void test_native_is_written_abi(void **state)
{
	struct fixture *f = *state;
	struct op_abi native, parsed;
	char err[256], text[4096];
	size_t len;
	char *file;
	int i;

	op_abi_native(&native);
	for (i = 0; i < OP_ABI_NR_KEYS; i++)
		assert_true(native.val[i] >= 0);
	assert_int_equal(op_write_abi(f->dirfd, "abi"), 0);
	file = read_all(f->dirfd, "abi", &len);
	assert_int_equal(op_abi_parse(&parsed, file, len, "abi", err, sizeof(err)), 0);
	assert_int_equal(parsed.nr_unknown, 0);
	for (i = 0; i < OP_ABI_NR_KEYS; i++) {
		if (parsed.val[i] != native.val[i])
			fail_msg("%s: native %d, abi file %d", op_abi_key_name(i), native.val[i],
				 parsed.val[i]);
	}
	assert_true(op_abi_equal(&native, &parsed));
	assert_int_equal(op_abi_format(&native, text, sizeof(text)), (int)len);
	assert_string_equal(text, file);
	assert_int_equal(op_abi_check(&native, "native", err, sizeof(err)), 0);
	/* the values pinned by the format notes (x86_64, OProfile 1.x) */
	assert_int_equal(native.val[OP_ABI_SIZEOF_HEADER], 72);
	assert_int_equal(native.val[OP_ABI_OFF_HEADER_CG_TO_ANON_START], 64);
	assert_int_equal(native.val[OP_ABI_SIZEOF_ODB_NODE_T], 16);
	assert_int_equal(native.val[OP_ABI_OFF_NODE_NEXT], 12);
	assert_null(op_abi_key_name(OP_ABI_NR_KEYS));
}

/* every key parses to its own slot; blanks, CRLF, blank lines, unknown keys */
static void test_parse_every_key(void **state)
{
	struct op_abi a;
	char text[8192], err[256];
	size_t n = 0;
	int i;

	(void)state;
	n += snprintf(text + n, sizeof(text) - n, "\n  sizeof_time_t 4\r\n");
	for (i = 0; i < OP_ABI_NR_KEYS; i++)
		n += snprintf(text + n, sizeof(text) - n, "%s%s\t %d %s\n", i % 2 ? "  " : "",
			      op_abi_key_name(i), i == OP_ABI_LITTLE_ENDIAN ? 1 : 100 + i,
			      i % 3 ? "" : "\r");
	n += snprintf(text + n, sizeof(text) - n, "offsetof_header_ctr 8"); /* no final newline */
	assert_int_equal(op_abi_parse(&a, text, n, "t", err, sizeof(err)), 0);
	for (i = 0; i < OP_ABI_NR_KEYS; i++)
		assert_int_equal(a.val[i], i == OP_ABI_LITTLE_ENDIAN ? 1 : 100 + i);
	assert_int_equal(a.nr_unknown, 2);
	/* absent keys stay absent */
	assert_int_equal(op_abi_parse(&a, "sizeof_u32 4\n", 13, "t", err, sizeof(err)), 0);
	assert_int_equal(a.val[OP_ABI_SIZEOF_U32], 4);
	assert_int_equal(a.val[OP_ABI_SIZEOF_U64], -1);
	assert_int_equal(op_abi_check(&a, "t", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "t: sizeof_double: missing"));
}

static void test_parse_errors(void **state)
{
	static const struct {
		const char *text;
		const char *msg;
	} cases[] = {
		{ "sizeof_u32 4\nsizeof_u32 4\n", "t:2: sizeof_u32 given twice" },
		{ "sizeof_u32\n", "t:1: expected \"KEY VALUE\"" },
		{ "sizeof_u32   \n", "t:1: expected \"KEY VALUE\"" },
		{ "\n\nsizeof_u32 x4\n", "t:3: sizeof_u32: value must be a decimal" },
		{ "sizeof_u32 -4\n", "t:1: sizeof_u32: value must be a decimal" },
		{ "sizeof_u32 4 5\n", "t:1: sizeof_u32: value must be a decimal" },
		{ "sizeof_u32 65537\n", "t:1: sizeof_u32: value must be a decimal number 0..65536" },
		{ "sizeof_u32 99999999999999999999\n", "t:1: sizeof_u32: value must be" },
		{ "size-of 4\n", "t:1: expected \"KEY VALUE\"" },
		{ " 4\n", "t:1: expected \"KEY VALUE\"" },
		{ "sizeof_u32 4\nsizeof_u64 8\0\n", "t:2: NUL byte" },
	};
	struct op_abi a;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].text);

		if (strstr(cases[i].msg, "NUL"))
			len += 2;
		err[0] = 0;
		if (op_abi_parse(&a, cases[i].text, len, "t", err, sizeof(err)) != -EINVAL)
			fail_msg("case %zu accepted: %s", i, cases[i].text);
		if (!strstr(err, cases[i].msg))
			fail_msg("case %zu: message \"%s\", expected \"%s\"", i, err, cases[i].msg);
	}
	/* the largest value is accepted */
	assert_int_equal(op_abi_parse(&a, "sizeof_u32 65536", 16, "t", err, sizeof(err)), 0);
	assert_int_equal(a.val[OP_ABI_SIZEOF_U32], 65536);
}

static void test_read_file(void **state)
{
	struct fixture *f = *state;
	struct op_abi a;
	char err[256];
	int fd;

	assert_int_equal(op_abi_read(&a, f->dirfd, "none", err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "none: cannot open"));
	assert_int_equal(mkdirat(f->dirfd, "dir", 0755), 0);
	assert_int_equal(op_abi_read(&a, f->dirfd, "dir", err, sizeof(err)), -EINVAL);
	fd = openat(f->dirfd, "big", O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, OP_ABI_MAX_FILE + 1), 0);
	close(fd);
	assert_int_equal(op_abi_read(&a, f->dirfd, "big", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "big: the abi file must be a regular file of at most"));
	assert_int_equal(op_write_abi(f->dirfd, "abi"), 0);
	assert_int_equal(op_abi_read(&a, f->dirfd, "abi", err, sizeof(err)), 0);
	assert_int_equal(op_abi_check(&a, "abi", err, sizeof(err)), 0);
}

/* layouts: native, i386-like big-endian, every offset moved, narrow little-endian */
static void layout(struct op_abi *a, int which)
{
	int32_t *v = a->val;

	op_abi_native(a);
	if (which == 0)
		return;
	v[OP_ABI_LITTLE_ENDIAN] = 0;
	v[OP_ABI_OFF_HEADER_CPU_SPEED] = 28;
	v[OP_ABI_OFF_HEADER_MTIME] = 36;
	v[OP_ABI_OFF_HEADER_CG_TO_IS_KERNEL] = 44;
	v[OP_ABI_OFF_HEADER_ANON_START] = 48;
	v[OP_ABI_OFF_HEADER_CG_TO_ANON_START] = 56;
	v[OP_ABI_SIZEOF_HEADER] = 64;
	if (which == 1)
		return;
	if (which == 2) {
		/* header fields in reverse order, magic last; 8-byte u32 fields; wide nodes */
		v[OP_ABI_SIZEOF_U32] = 8;
		v[OP_ABI_OFF_HEADER_CG_TO_ANON_START] = 0;
		v[OP_ABI_OFF_HEADER_ANON_START] = 8;
		v[OP_ABI_OFF_HEADER_CG_TO_IS_KERNEL] = 16;
		v[OP_ABI_OFF_HEADER_MTIME] = 24;
		v[OP_ABI_OFF_HEADER_CPU_SPEED] = 32;
		v[OP_ABI_OFF_HEADER_IS_KERNEL] = 40;
		v[OP_ABI_OFF_HEADER_CTR_COUNT] = 48;
		v[OP_ABI_OFF_HEADER_CTR_UM] = 56;
		v[OP_ABI_OFF_HEADER_CTR_EVENT] = 64;
		v[OP_ABI_OFF_HEADER_CPU_TYPE] = 72;
		v[OP_ABI_OFF_HEADER_VERSION] = 80;
		v[OP_ABI_OFF_HEADER_MAGIC] = 88;
		v[OP_ABI_SIZEOF_HEADER] = 100;
		v[OP_ABI_SIZEOF_ODB_NODE_NR_T] = 8;
		v[OP_ABI_SIZEOF_ODB_INDEX_T] = 8;
		v[OP_ABI_SIZEOF_ODB_DESCR_T] = 48;
		v[OP_ABI_OFF_DESCR_SIZE] = 8;
		v[OP_ABI_OFF_DESCR_CURRENT_SIZE] = 24;
		v[OP_ABI_SIZEOF_ODB_VALUE_T] = 8;
		v[OP_ABI_SIZEOF_ODB_NODE_T] = 32;
		v[OP_ABI_OFF_NODE_VALUE] = 0;
		v[OP_ABI_OFF_NODE_KEY] = 8;
		v[OP_ABI_OFF_NODE_NEXT] = 16;
		return;
	}
	/* 3: little-endian, float cpu_speed, 2-byte indexes, a 12-byte packed node */
	v[OP_ABI_LITTLE_ENDIAN] = 1;
	v[OP_ABI_SIZEOF_DOUBLE] = 4;
	v[OP_ABI_SIZEOF_ODB_INDEX_T] = 2;
	v[OP_ABI_SIZEOF_ODB_NODE_NR_T] = 2;
	v[OP_ABI_SIZEOF_ODB_NODE_T] = 14;
	v[OP_ABI_OFF_NODE_KEY] = 0;
	v[OP_ABI_OFF_NODE_VALUE] = 8;
	v[OP_ABI_OFF_NODE_NEXT] = 12;
}

static void make_sample(struct op_abi_sample *s, size_t nr, uint32_t size)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	op_header_init(&s->header);
	s->header.cpu_type = 69;
	s->header.ctr_event = 0x76;
	s->header.ctr_um = 0x0102;
	s->header.ctr_count = 100000;
	s->header.is_kernel = 1;
	s->header.cpu_speed = 2596.125; /* exact in a float too */
	s->header.mtime = 0x0102030405060708ull;
	s->header.cg_to_is_kernel = 7;
	s->header.anon_start = 0x7fa1b47d0000ull;
	s->header.cg_to_anon_start = 0xffffffff81000000ull;
	s->size = size;
	s->nr = nr;
	s->nodes = calloc(nr ? nr : 1, sizeof(*s->nodes));
	assert_non_null(s->nodes);
	for (i = 0; i < nr; i++) {
		s->nodes[i].key = i * 0x9e3779b97f4a7c15ull; /* key 0 included */
		s->nodes[i].value = (uint32_t)(i * 2654435761u) | 1;
	}
}

static void assert_header_equal(const struct opd_header *a, const struct opd_header *b)
{
	assert_memory_equal(a->magic, b->magic, 4);
	assert_int_equal(a->version, b->version);
	assert_int_equal(a->cpu_type, b->cpu_type);
	assert_int_equal(a->ctr_event, b->ctr_event);
	assert_int_equal(a->ctr_um, b->ctr_um);
	assert_int_equal(a->ctr_count, b->ctr_count);
	assert_int_equal(a->is_kernel, b->is_kernel);
	assert_true(a->cpu_speed == b->cpu_speed);
	assert_int_equal(a->mtime, b->mtime);
	assert_int_equal(a->cg_to_is_kernel, b->cg_to_is_kernel);
	assert_int_equal(a->anon_start, b->anon_start);
	assert_int_equal(a->cg_to_anon_start, b->cg_to_anon_start);
}

static void test_round_trip(void **state)
{
	static const size_t nrs[] = { 0, 1, 3, 127, 300 };
	struct op_abi a;
	char err[512];
	int which;
	size_t k, i;

	(void)state;
	for (which = 0; which < 4; which++) {
		layout(&a, which);
		if (op_abi_check(&a, "layout", err, sizeof(err)))
			fail_msg("layout %d: %s", which, err);
		for (k = 0; k < sizeof(nrs) / sizeof(nrs[0]); k++) {
			struct op_abi_sample s, d;
			uint32_t size = nrs[k] < 127 ? 128 : 512;
			uint8_t *buf;
			long len;

			make_sample(&s, nrs[k], size);
			len = op_abi_encode(&a, &s, &buf);
			assert_true(len > 0);
			assert_int_equal(len, a.val[OP_ABI_SIZEOF_HEADER] +
						      a.val[OP_ABI_SIZEOF_ODB_DESCR_T] +
						      (long)size * (a.val[OP_ABI_SIZEOF_ODB_NODE_T] +
								    a.val[OP_ABI_SIZEOF_ODB_INDEX_T]));
			if (op_abi_decode(&a, buf, (size_t)len, "rt", &d, err, sizeof(err)))
				fail_msg("layout %d, %zu nodes: %s", which, nrs[k], err);
			assert_header_equal(&d.header, &s.header);
			assert_int_equal(d.size, size);
			assert_int_equal(d.nr, nrs[k]);
			for (i = 0; i < d.nr; i++) {
				assert_int_equal(d.nodes[i].key, s.nodes[i].key);
				assert_int_equal(d.nodes[i].value, s.nodes[i].value);
			}
			/* the native layout is odb's own: the bytes are a valid native file */
			if (which == 0) {
				assert_memory_equal(buf, &s.header, sizeof(s.header) - 0);
				assert_int_equal(len, (long)ODB_FILE_SIZE(size));
			}
			free(buf);
			op_abi_sample_free(&d);
			op_abi_sample_free(&s);
		}
	}
}

/* the big-endian layout's bytes are where the abi says, most significant first */
static void test_byte_order(void **state)
{
	struct op_abi_sample s, d;
	struct op_abi a;
	char err[256];
	uint8_t *buf;
	long len;

	(void)state;
	layout(&a, 1);
	make_sample(&s, 1, 2);
	s.nodes[0].key = 0x1122334455667788ull;
	s.nodes[0].value = 0xa1b2c3d4;
	len = op_abi_encode(&a, &s, &buf);
	assert_true(len > 0);
	assert_memory_equal(buf, "DAE\n\0\0\0\x13", 8);
	assert_memory_equal(buf + 36, "\x01\x02\x03\x04\x05\x06\x07\x08", 8); /* mtime */
	/* descr at 64: size 2, current_size 2; node 1 at 64 + 32 + 16 */
	assert_memory_equal(buf + 64, "\0\0\0\x02\0\0\0\x02", 8);
	assert_memory_equal(buf + 112, "\x11\x22\x33\x44\x55\x66\x77\x88\xa1\xb2\xc3\xd4", 12);
	/* bucket of the key points at node 1 */
	assert_int_equal(buf[128 + 4 * odb_hash(s.nodes[0].key, 2) + 3], 1);
	assert_int_equal(op_abi_decode(&a, buf, (size_t)len, "bo", &d, err, sizeof(err)), 0);
	assert_int_equal(d.nodes[0].key, 0x1122334455667788ull);
	assert_int_equal(d.nodes[0].value, 0xa1b2c3d4);
	op_abi_sample_free(&d);
	op_abi_sample_free(&s);
	free(buf);
}

/* layout defects op_abi_check names */
static void test_check_layout(void **state)
{
	static const struct {
		enum op_abi_key key;
		int32_t val;
		const char *msg;
	} cases[] = {
		{ OP_ABI_LITTLE_ENDIAN, 2, "little_endian: must be 0 or 1" },
		{ OP_ABI_SIZEOF_U32, 0, "sizeof_u32: 0 bytes" },
		{ OP_ABI_SIZEOF_U64, 9, "sizeof_u64: 9 bytes" },
		{ OP_ABI_SIZEOF_DOUBLE, 6, "sizeof_double: 6 bytes" },
		{ OP_ABI_SIZEOF_ODB_KEY_T, 16, "sizeof_odb_key_t: 16 bytes" },
		{ OP_ABI_OFF_HEADER_CG_TO_ANON_START, 65, "offsetof_header_cg_to_anon_start: field at 65" },
		{ OP_ABI_SIZEOF_HEADER, 70, "offsetof_header_cg_to_anon_start: field at 64 of 8 bytes overruns sizeof_struct_opd_header 70" },
		{ OP_ABI_OFF_NODE_NEXT, 13, "offsetof_node_next: field at 13" },
		{ OP_ABI_OFF_DESCR_CURRENT_SIZE, 30, "offsetof_descr_current_size" },
		{ OP_ABI_OFF_HEADER_MAGIC, 69, "offsetof_header_magic: 4 bytes at 69" },
		{ OP_ABI_SIZEOF_ODB_NODE_T, -1, "sizeof_odb_node_t: missing" },
		{ OP_ABI_OFF_NODE_NEXT, 6, "offsetof_node_key 0 (8 bytes) and offsetof_node_next 6 (4 bytes) overlap" },
		{ OP_ABI_OFF_HEADER_MAGIC, 2, "offsetof_header_version 4 (4 bytes) and offsetof_header_magic 2 (4 bytes) overlap" },
		{ OP_ABI_OFF_DESCR_CURRENT_SIZE, 0, "offsetof_descr_size 0 (4 bytes) and offsetof_descr_current_size 0 (4 bytes) overlap" },
		{ OP_ABI_OFF_HEADER_MTIME, 36, "offsetof_header_cpu_speed 32 (8 bytes) and offsetof_header_mtime 36 (8 bytes) overlap" },
	};
	struct op_abi a;
	char err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct op_abi_sample s;
		uint8_t *buf;

		op_abi_native(&a);
		a.val[cases[i].key] = cases[i].val;
		err[0] = 0;
		assert_int_equal(op_abi_check(&a, "x", err, sizeof(err)), -EINVAL);
		if (!strstr(err, cases[i].msg))
			fail_msg("case %zu: \"%s\", expected \"%s\"", i, err, cases[i].msg);
		/* decode and encode refuse the layout too */
		assert_int_equal(op_abi_decode(&a, "", 0, "x", &s, err, sizeof(err)), -EINVAL);
		make_sample(&s, 1, 2);
		assert_int_equal(op_abi_encode(&a, &s, &buf), -EINVAL);
		op_abi_sample_free(&s);
	}
	/* the informative keys may be absent */
	op_abi_native(&a);
	a.val[OP_ABI_SIZEOF_U8] = a.val[OP_ABI_SIZEOF_INT] = a.val[OP_ABI_SIZEOF_UNSIGNED_INT] = -1;
	assert_int_equal(op_abi_check(&a, "x", err, sizeof(err)), 0);
}

static void expect_refused(const struct op_abi *a, const uint8_t *buf, size_t len,
			   const char *msg)
{
	struct op_abi_sample d;
	char err[512] = "";

	if (op_abi_decode(a, buf, len, "h", &d, err, sizeof(err)) != -EINVAL)
		fail_msg("accepted (%zu bytes), expected \"%s\"", len, msg);
	if (strncmp(err, "h: ", 3) || !strstr(err, msg))
		fail_msg("message \"%s\", expected \"%s\"", err, msg);
	assert_null(d.nodes);
	assert_int_equal(d.nr, 0);
}

static void test_hostile(void **state)
{
	struct op_abi_sample s;
	struct op_abi a;
	uint8_t *buf, *copy;
	long len;
	size_t l;
	int which;

	(void)state;
	for (which = 0; which < 4; which++) {
		const int32_t *v = a.val;
		uint8_t *descr;

		layout(&a, which);
		make_sample(&s, 5, 8);
		len = op_abi_encode(&a, &s, &buf);
		assert_true(len > 0);
		/* every shorter length, and one byte more (sizes are not guessed) */
		for (l = 0; l < (size_t)len; l++) {
			copy = malloc(l ? l : 1); /* exactly l bytes: ASan sees over-reads */
			memcpy(copy, buf, l);
			expect_refused(&a, copy, l, "bytes");
			free(copy);
		}
		copy = calloc(1, (size_t)len + 1);
		memcpy(copy, buf, (size_t)len);
		expect_refused(&a, copy, (size_t)len + 1, "a table of 8 nodes is");
		memcpy(copy, buf, (size_t)len);
		descr = copy + v[OP_ABI_SIZEOF_HEADER];
		/* current_size > size, 0, size 0, size huge */
		memset(descr + v[OP_ABI_OFF_DESCR_CURRENT_SIZE], 0x7f, 2);
		expect_refused(&a, copy, (size_t)len, "expected 1 <= current_size <= size");
		memset(descr + v[OP_ABI_OFF_DESCR_CURRENT_SIZE], 0,
		       (size_t)v[OP_ABI_SIZEOF_ODB_NODE_NR_T]);
		expect_refused(&a, copy, (size_t)len, "current_size 0");
		memcpy(copy, buf, (size_t)len);
		memset(descr + v[OP_ABI_OFF_DESCR_SIZE], 0, (size_t)v[OP_ABI_SIZEOF_ODB_NODE_NR_T]);
		expect_refused(&a, copy, (size_t)len, "descriptor size 0");
		if (v[OP_ABI_SIZEOF_ODB_NODE_NR_T] == 8) {
			memcpy(copy, buf, (size_t)len);
			memset(descr + v[OP_ABI_OFF_DESCR_SIZE], 0xff, 8);
			memset(descr + v[OP_ABI_OFF_DESCR_CURRENT_SIZE], 0xff, 8);
			expect_refused(&a, copy, (size_t)len, "< 2^32");
		}
		/* header: magic and version */
		memcpy(copy, buf, (size_t)len);
		copy[v[OP_ABI_OFF_HEADER_MAGIC]] = 'X';
		expect_refused(&a, copy, (size_t)len, "bad magic");
		memcpy(copy, buf, (size_t)len);
		copy[v[OP_ABI_OFF_HEADER_VERSION] +
		     (v[OP_ABI_LITTLE_ENDIAN] ? 0 : v[OP_ABI_SIZEOF_U32] - 1)] = 0x12;
		expect_refused(&a, copy, (size_t)len, "version 0x12");
		/* wider-than-native fields */
		if (v[OP_ABI_SIZEOF_U32] == 8) {
			memcpy(copy, buf, (size_t)len);
			copy[v[OP_ABI_OFF_HEADER_CTR_COUNT]] = 1; /* big-endian: bit 56 */
			expect_refused(&a, copy, (size_t)len, "ctr_count = 0x1");
		}
		if (v[OP_ABI_SIZEOF_ODB_VALUE_T] == 8) {
			memcpy(copy, buf, (size_t)len);
			copy[v[OP_ABI_SIZEOF_HEADER] + v[OP_ABI_SIZEOF_ODB_DESCR_T] +
			     2 * v[OP_ABI_SIZEOF_ODB_NODE_T] + v[OP_ABI_OFF_NODE_VALUE]] = 1;
			expect_refused(&a, copy, (size_t)len, "node 2: count");
		}
		free(copy);
		free(buf);
		/* the encoder refuses what does not fit the foreign fields or the table */
		if (v[OP_ABI_SIZEOF_ODB_INDEX_T] == 2) {
			op_abi_sample_free(&s);
			make_sample(&s, 70000, 131072);
			assert_int_equal(op_abi_encode(&a, &s, &buf), -EINVAL);
		}
		op_abi_sample_free(&s);
		make_sample(&s, 8, 8); /* no room for node 0 */
		assert_int_equal(op_abi_encode(&a, &s, &buf), -EINVAL);
		s.nr = 2;
		s.size = 6; /* not a power of two */
		assert_int_equal(op_abi_encode(&a, &s, &buf), -EINVAL);
		op_abi_sample_free(&s);
	}
}

static void test_write_sample(void **state)
{
	struct fixture *f = *state;
	struct op_abi_sample s;
	const struct odb_node *nodes;
	char err[512];
	uint64_t sat = 99;
	size_t n, i;
	odb_t db;

	make_sample(&s, 300, 512);
	assert_int_equal(op_abi_write_sample(&s, f->dirfd, "out", OP_ABI_NOREPLACE, &sat, err,
					     sizeof(err)), 0);
	assert_int_equal(sat, 0);
	assert_int_equal(odb_open(&db, f->dirfd, "out", ODB_RDONLY, err, sizeof(err)), 0);
	assert_int_equal(odb_check(&db, err, sizeof(err)), 0);
	assert_header_equal(odb_header(&db), &s.header);
	nodes = odb_nodes(&db, &n);
	assert_int_equal(n, 300);
	for (i = 0; i < n; i++) {
		assert_int_equal(nodes[i].key, s.nodes[i].key);
		assert_int_equal(nodes[i].value, s.nodes[i].value);
	}
	odb_close(&db);
	/* no overwrite: -EEXIST, the file and no temporary left */
	s.nodes[0].value = 12345;
	assert_int_equal(op_abi_write_sample(&s, f->dirfd, "out", OP_ABI_NOREPLACE, NULL, err,
					     sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "out: exists"));
	assert_int_equal(faccessat(f->dirfd, "out.opimport-tmp", F_OK, 0), -1);
	assert_int_equal(odb_open(&db, f->dirfd, "out", ODB_RDONLY, err, sizeof(err)), 0);
	assert_int_not_equal(odb_nodes(&db, &n)[0].value, 12345);
	odb_close(&db);
	/* replace; repeated keys summed, saturating */
	s.nr = 3;
	s.nodes[1].key = s.nodes[2].key = s.nodes[0].key;
	s.nodes[0].value = 5;
	s.nodes[1].value = 6;
	s.nodes[2].value = 7;
	assert_int_equal(op_abi_write_sample(&s, f->dirfd, "out", 0, &sat, err, sizeof(err)), 0);
	assert_int_equal(odb_open(&db, f->dirfd, "out", ODB_RDONLY, err, sizeof(err)), 0);
	nodes = odb_nodes(&db, &n);
	assert_int_equal(n, 1);
	assert_int_equal(nodes[0].value, 18);
	odb_close(&db);
	s.nodes[1].value = UINT32_MAX;
	assert_int_equal(op_abi_write_sample(&s, f->dirfd, "out", 0, &sat, err, sizeof(err)), 0);
	assert_int_equal(sat, 2);
	/* a missing directory: the error names the path */
	assert_int_equal(op_abi_write_sample(&s, f->dirfd, "no/out", 0, NULL, err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "no/out"));
	op_abi_sample_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_native_is_written_abi, setup, teardown),
		cmocka_unit_test(test_parse_every_key),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test_setup_teardown(test_read_file, setup, teardown),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_byte_order),
		cmocka_unit_test(test_check_layout),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test_setup_teardown(test_write_sample, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
