/*
 * test_jit.c - lib/op_jit: the jitdump reader on hand-built record bytes (a
 * whole valid stream fed at once, byte by byte and at every split; the
 * other byte order; every hostile header and record shape) and the perf-map
 * line parser and reader, table-driven.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "op_jit.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* a byte-stream builder, either byte order                           */
/* ------------------------------------------------------------------ */

struct bld {
	uint8_t b[1 << 16];
	size_t n;
	bool swap;
};

static void put(struct bld *s, const void *p, size_t n)
{
	assert_true(s->n + n <= sizeof(s->b));
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static void p32(struct bld *s, uint32_t v)
{
	if (s->swap)
		v = __builtin_bswap32(v);
	put(s, &v, 4);
}

static void p64(struct bld *s, uint64_t v)
{
	if (s->swap)
		v = __builtin_bswap64(v);
	put(s, &v, 8);
}

static void header(struct bld *s, uint32_t magic, uint32_t version, uint32_t size)
{
	size_t start = s->n;

	put(s, &magic, 4); /* raw: the test picks the byte order itself */
	p32(s, version);
	p32(s, size);
	p32(s, 62); /* EM_X86_64 */
	p32(s, 0);
	p32(s, 4242);
	p64(s, 1000);
	p64(s, 0);
	while (s->n - start < size && s->n - start < 4096)
		put(s, "\0", 1);
}

static void good_header(struct bld *s)
{
	header(s, s->swap ? OP_JITDUMP_MAGIC_SWAPPED : OP_JITDUMP_MAGIC, 1, 40);
}

static void rec_head(struct bld *s, uint32_t id, uint32_t size, uint64_t ts)
{
	p32(s, id);
	p32(s, size);
	p64(s, ts);
}

static void load(struct bld *s, const char *name, size_t name_len, uint64_t addr,
		 const uint8_t *code, uint64_t csize, uint64_t index, uint64_t ts)
{
	rec_head(s, OP_JIT_CODE_LOAD, (uint32_t)(56 + name_len + csize), ts);
	p32(s, 4242);
	p32(s, 4243);
	p64(s, addr);
	p64(s, addr);
	p64(s, csize);
	p64(s, index);
	put(s, name, name_len);
	put(s, code, csize);
}

static void move(struct bld *s, uint64_t from, uint64_t to, uint64_t size, uint64_t index,
		 uint64_t ts)
{
	rec_head(s, OP_JIT_CODE_MOVE, 64, ts);
	p32(s, 4242);
	p32(s, 4243);
	p64(s, to);
	p64(s, from);
	p64(s, to);
	p64(s, size);
	p64(s, index);
}

struct line_in {
	uint64_t addr;
	uint32_t lineno;
	const char *file; /* "\xff": same as previous */
};

static void debug(struct bld *s, uint64_t code, uint64_t nr_claimed, const struct line_in *l,
		  size_t n, uint64_t ts)
{
	size_t size = 32;

	for (size_t i = 0; i < n; i++)
		size += 16 + strlen(l[i].file) + 1;
	rec_head(s, OP_JIT_CODE_DEBUG_INFO, (uint32_t)size, ts);
	p64(s, code);
	p64(s, nr_claimed);
	for (size_t i = 0; i < n; i++) {
		p64(s, l[i].addr);
		p32(s, l[i].lineno);
		p32(s, 0);
		put(s, l[i].file, strlen(l[i].file) + 1);
	}
}

/* ------------------------------------------------------------------ */
/* what the callback saw                                              */
/* ------------------------------------------------------------------ */

struct seen {
	int n;
	enum op_jit_kind kind[64];
	char name[64][128];
	size_t name_len[64];
	uint64_t a[64], b[64], c[64];
	uint8_t code0[64];
	size_t lines;
	char line_files[8][64];
	uint32_t linenos[8];
	int stop_at; /* return 7 at this record (1-based), 0 never */
};

static int on_rec(void *priv, const struct op_jit_rec *r)
{
	struct seen *s = priv;
	int i = s->n++;

	assert_true(i < 64);
	s->kind[i] = r->kind;
	switch (r->kind) {
	case OP_JIT_LOAD:
		snprintf(s->name[i], sizeof(s->name[i]), "%s", r->load.name);
		s->name_len[i] = strlen(r->load.name);
		s->a[i] = r->load.code_addr;
		s->b[i] = r->load.code_size;
		s->c[i] = r->load.code_index;
		s->code0[i] = r->load.code_size ? r->load.code[0] : 0;
		assert_int_equal(r->load.pid, 4242);
		assert_int_equal(r->load.tid, 4243);
		break;
	case OP_JIT_MOVE:
		s->a[i] = r->move.old_code_addr;
		s->b[i] = r->move.new_code_addr;
		s->c[i] = r->move.code_index;
		break;
	case OP_JIT_DEBUG_INFO:
		s->a[i] = r->debug.code_addr;
		s->lines = r->debug.nr_entry;
		for (size_t k = 0; k < r->debug.nr_entry && k < 8; k++) {
			snprintf(s->line_files[k], sizeof(s->line_files[k]), "%s",
				 r->debug.entries[k].filename);
			s->linenos[k] = r->debug.entries[k].lineno;
		}
		break;
	case OP_JIT_UNLOAD:
		s->a[i] = r->unload.vma;
		break;
	default:
		break;
	}
	s->b[i] = r->kind == OP_JIT_CLOSE ? r->timestamp : s->b[i];
	return s->stop_at == s->n ? 7 : 0;
}

static const uint8_t code_a[] = { 0x90, 0x90, 0xc3 };
static const uint8_t code_b[] = { 0xcc, 0xc3 };

/* header, 2 LOAD, DEBUG_INFO (with a repeated file), MOVE, UNWINDING, an
 * unknown id, UNLOAD, CLOSE */
static void valid_stream(struct bld *s)
{
	static const struct line_in lines[] = {
		{ 0x1000, 10, "fake.js" },
		{ 0x1001, 11, "\xff" },
		{ 0x1002, 12, "other.js" },
	};

	good_header(s);
	load(s, "jit_big\0\0\0", 10, 0x1000, code_a, sizeof(code_a), 1, 2000);
	load(s, "jit_small", 10, 0x2000, code_b, sizeof(code_b), 2, 2001);
	debug(s, 0x1000, 3, lines, 3, 2002);
	move(s, 0x2000, 0x3000, sizeof(code_b), 2, 2003);
	rec_head(s, OP_JIT_CODE_UNWINDING_INFO, 40 + 8, 2004);
	p64(s, 8);
	p64(s, 0);
	p64(s, 8);
	p64(s, 0);
	rec_head(s, 99, 24, 2005);
	p64(s, 0);
	rec_head(s, OP_JIT_CODE_UNLOAD, 32, 2006);
	p32(s, 4242);
	p32(s, 4243);
	p64(s, 0x1000);
	rec_head(s, OP_JIT_CODE_CLOSE, 16, 2007);
}

static void check_valid(const struct seen *s, struct op_jitdump_reader *r)
{
	const struct op_jit_errors *e = op_jitdump_reader_errors(r);
	const struct op_jitdump_info *h = op_jitdump_reader_header(r);

	assert_int_equal(s->n, 6);
	assert_int_equal(s->kind[0], OP_JIT_LOAD);
	assert_string_equal(s->name[0], "jit_big");
	assert_int_equal(s->a[0], 0x1000);
	assert_int_equal(s->c[0], 1);
	assert_int_equal(s->code0[0], 0x90);
	assert_string_equal(s->name[1], "jit_small");
	assert_int_equal(s->code0[1], 0xcc);
	assert_int_equal(s->kind[2], OP_JIT_DEBUG_INFO);
	assert_int_equal(s->a[2], 0x1000);
	assert_int_equal(s->lines, 3);
	assert_string_equal(s->line_files[0], "fake.js");
	assert_string_equal(s->line_files[1], "fake.js");
	assert_string_equal(s->line_files[2], "other.js");
	assert_int_equal(s->linenos[2], 12);
	assert_int_equal(s->kind[3], OP_JIT_MOVE);
	assert_int_equal(s->a[3], 0x2000);
	assert_int_equal(s->b[3], 0x3000);
	assert_int_equal(s->c[3], 2);
	assert_int_equal(s->kind[4], OP_JIT_UNLOAD);
	assert_int_equal(s->a[4], 0x1000);
	assert_int_equal(s->kind[5], OP_JIT_CLOSE);
	assert_int_equal(s->b[5], 2007);
	assert_non_null(h);
	assert_int_equal(h->pid, 4242);
	assert_int_equal(h->elf_mach, 62);
	assert_int_equal(h->timestamp, 1000);
	assert_int_equal(op_jitdump_reader_count(r, OP_JIT_LOAD), 2);
	assert_int_equal(op_jitdump_reader_skipped_unwinding(r), 1);
	assert_int_equal(e->unknown_record, 1);
	assert_int_equal(op_jit_errors_total(e), 1);
	assert_false(op_jitdump_reader_broken(r));
}

static void test_valid_whole(void **state)
{
	struct bld s = { .n = 0 };
	struct seen seen = { .n = 0 };
	struct op_jitdump_reader *r = op_jitdump_reader_init(on_rec, &seen, 0);
	struct op_jit_errors fin;

	(void)state;
	valid_stream(&s);
	assert_int_equal(op_jitdump_reader_feed(r, s.b, s.n), 0);
	check_valid(&seen, r);
	assert_int_equal(op_jitdump_reader_offset(r), s.n);
	assert_false(op_jitdump_reader_header(r)->swapped);
	op_jitdump_reader_fini(r, &fin);
	assert_int_equal(fin.truncated_tail, 0);
}

/* the same stream split at every offset into two pieces, and byte by byte */
static void test_valid_every_split(void **state)
{
	struct bld s = { .n = 0 };

	(void)state;
	valid_stream(&s);
	for (size_t cut = 0; cut <= s.n; cut++) {
		struct seen seen = { .n = 0 };
		struct op_jitdump_reader *r = op_jitdump_reader_init(on_rec, &seen, 0);

		assert_int_equal(op_jitdump_reader_feed(r, s.b, cut), 0);
		assert_true(op_jitdump_reader_offset(r) <= cut);
		assert_int_equal(op_jitdump_reader_feed(r, s.b + cut, s.n - cut), 0);
		check_valid(&seen, r);
		op_jitdump_reader_fini(r, NULL);
	}
	{
		struct seen seen = { .n = 0 };
		struct op_jitdump_reader *r = op_jitdump_reader_init(on_rec, &seen, 0);

		for (size_t i = 0; i < s.n; i++)
			assert_int_equal(op_jitdump_reader_feed(r, s.b + i, 1), 0);
		check_valid(&seen, r);
		op_jitdump_reader_fini(r, NULL);
	}
}

static void test_other_endian(void **state)
{
	struct bld s = { .n = 0, .swap = true };
	struct seen seen = { .n = 0 };
	struct op_jitdump_reader *r = op_jitdump_reader_init(on_rec, &seen, 0);

	(void)state;
	valid_stream(&s);
	assert_int_equal(op_jitdump_reader_feed(r, s.b, s.n), 0);
	check_valid(&seen, r);
	assert_true(op_jitdump_reader_header(r)->swapped);
	op_jitdump_reader_fini(r, NULL);
}

/* a live file: the tail of a record comes later; fini counts a tail left */
static void test_truncated_tail(void **state)
{
	struct bld s = { .n = 0 };
	struct seen seen = { .n = 0 };
	struct op_jitdump_reader *r = op_jitdump_reader_init(on_rec, &seen, 0);
	struct op_jit_errors fin;
	size_t first;

	(void)state;
	good_header(&s);
	load(&s, "f", 2, 0x10, code_a, sizeof(code_a), 1, 5);
	first = s.n;
	load(&s, "g", 2, 0x20, code_b, sizeof(code_b), 2, 6);
	assert_int_equal(op_jitdump_reader_feed(r, s.b, s.n - 3), 0);
	assert_int_equal(seen.n, 1);
	assert_int_equal(op_jitdump_reader_offset(r), first);
	op_jitdump_reader_fini(r, &fin);
	assert_int_equal(fin.truncated_tail, 1);
	assert_int_equal(op_jit_errors_total(&fin), 1);

	/* read again from the offset the first reader stopped at */
	memset(&seen, 0, sizeof(seen));
	r = op_jitdump_reader_init(on_rec, &seen, 0);
	assert_int_equal(op_jitdump_reader_feed(r, s.b, s.n - 3), 0);
	assert_int_equal(op_jitdump_reader_feed(r, s.b + s.n - 3, 3), 0);
	assert_int_equal(seen.n, 2);
	assert_string_equal(seen.name[1], "g");
	op_jitdump_reader_fini(r, &fin);
	assert_int_equal(op_jit_errors_total(&fin), 0);
}

/* fatal: nothing can be framed after them */
static void test_bad_headers(void **state)
{
	static const struct {
		uint32_t magic, version, size;
		size_t field; /* offsetof in op_jit_errors */
	} cases[] = {
		{ 0x12345678, 1, 40, offsetof(struct op_jit_errors, bad_magic) },
		{ 0, 1, 40, offsetof(struct op_jit_errors, bad_magic) },
		{ OP_JITDUMP_MAGIC, 2, 40, offsetof(struct op_jit_errors, bad_version) },
		{ OP_JITDUMP_MAGIC, 0, 40, offsetof(struct op_jit_errors, bad_version) },
		{ OP_JITDUMP_MAGIC, 1, 0, offsetof(struct op_jit_errors, bad_header_size) },
		{ OP_JITDUMP_MAGIC, 1, 39, offsetof(struct op_jit_errors, bad_header_size) },
		{ OP_JITDUMP_MAGIC, 1, 0xffffffffu, offsetof(struct op_jit_errors, bad_header_size) },
		{ OP_JITDUMP_MAGIC, 1, 4097, offsetof(struct op_jit_errors, bad_header_size) },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct bld s = { .n = 0 };
		struct seen seen = { .n = 0 };
		struct op_jitdump_reader *r = op_jitdump_reader_init(on_rec, &seen, 0);
		const struct op_jit_errors *e = op_jitdump_reader_errors(r);

		header(&s, cases[i].magic, cases[i].version, cases[i].size);
		load(&s, "f", 2, 0x10, code_a, sizeof(code_a), 1, 5);
		assert_int_equal(op_jitdump_reader_feed(r, s.b, s.n), -EINVAL);
		assert_true(op_jitdump_reader_broken(r));
		assert_null(op_jitdump_reader_header(r));
		assert_int_equal(*(const uint64_t *)((const char *)e + cases[i].field), 1);
		assert_int_equal(op_jit_errors_total(e), 1);
		assert_int_equal(op_jitdump_reader_feed(r, s.b, s.n), -EINVAL);
		assert_int_equal(seen.n, 0);
		op_jitdump_reader_fini(r, NULL);
	}
}

/* a header larger than 40 (a later version's fields) is skipped whole */
static void test_long_header(void **state)
{
	struct bld s = { .n = 0 };
	struct seen seen = { .n = 0 };
	struct op_jitdump_reader *r = op_jitdump_reader_init(on_rec, &seen, 0);

	(void)state;
	header(&s, OP_JITDUMP_MAGIC, 1, 64);
	assert_int_equal(s.n, 64);
	load(&s, "f", 2, 0x10, code_a, sizeof(code_a), 1, 5);
	assert_int_equal(op_jitdump_reader_feed(r, s.b, s.n), 0);
	assert_int_equal(seen.n, 1);
	assert_string_equal(seen.name[0], "f");
	op_jitdump_reader_fini(r, NULL);
}

static void test_bad_record_sizes(void **state)
{
	static const uint32_t sizes[] = { 0, 1, 8, 15, 1025, 0xffffffffu };

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct bld s = { .n = 0 };
		struct seen seen = { .n = 0 };
		struct op_jitdump_reader *r = op_jitdump_reader_init(on_rec, &seen, 1024);
		struct op_jit_errors fin;

		good_header(&s);
		load(&s, "ok", 3, 0x10, code_a, sizeof(code_a), 1, 5);
		rec_head(&s, OP_JIT_CODE_CLOSE, sizes[i], 6);
		load(&s, "lost", 5, 0x10, code_a, sizeof(code_a), 1, 7);
		assert_int_equal(op_jitdump_reader_feed(r, s.b, s.n), -EINVAL);
		assert_int_equal(seen.n, 1); /* what came before is kept */
		assert_int_equal(op_jitdump_reader_errors(r)->record_size, 1);
		op_jitdump_reader_fini(r, &fin);
		assert_int_equal(fin.truncated_tail, 0);
	}
}

/* skippable defects: the size frames them, the next record is read */
static void test_bad_records_skipped(void **state)
{
	struct bld s = { .n = 0 };
	struct seen seen = { .n = 0 };
	struct op_jitdump_reader *r = op_jitdump_reader_init(on_rec, &seen, 0);
	const struct op_jit_errors *e;
	char longname[6000];

	(void)state;
	memset(longname, 'x', sizeof(longname));
	longname[sizeof(longname) - 1] = '\0';
	good_header(&s);
	/* LOAD shorter than its fixed part */
	rec_head(&s, OP_JIT_CODE_LOAD, 40, 1);
	p64(&s, 0);
	p64(&s, 0);
	p64(&s, 0);
	/* MOVE, DEBUG_INFO, UNLOAD shorter than theirs */
	rec_head(&s, OP_JIT_CODE_MOVE, 56, 1);
	put(&s, longname, 40);
	rec_head(&s, OP_JIT_CODE_DEBUG_INFO, 24, 1);
	p64(&s, 0);
	rec_head(&s, OP_JIT_CODE_UNLOAD, 24, 1);
	p64(&s, 0);
	/* code_size beyond the record (and one overflowing size_t arithmetic) */
	rec_head(&s, OP_JIT_CODE_LOAD, 64, 1);
	p32(&s, 1);
	p32(&s, 1);
	p64(&s, 0x10);
	p64(&s, 0x10);
	p64(&s, 9);
	p64(&s, 1);
	p64(&s, 0);
	rec_head(&s, OP_JIT_CODE_LOAD, 64, 1);
	p32(&s, 1);
	p32(&s, 1);
	p64(&s, 0x10);
	p64(&s, 0x10);
	p64(&s, UINT64_MAX);
	p64(&s, 1);
	p64(&s, 0);
	/* names: no NUL, control bytes and a backslash, empty, too long */
	load(&s, "abc", 3, 0x100, code_a, sizeof(code_a), 3, 2);
	load(&s, "a\nb\x1b\\c", 7, 0x200, code_a, sizeof(code_a), 4, 3);
	load(&s, "", 1, 0x300, code_a, 0, 5, 4);
	load(&s, longname, sizeof(longname), 0x400, code_a, 1, 6, 5);
	e = op_jitdump_reader_errors(r);
	assert_int_equal(op_jitdump_reader_feed(r, s.b, s.n), 0);
	assert_int_equal(e->record_short, 4);
	assert_int_equal(e->code_size, 2);
	assert_int_equal(e->name_unterminated, 1);
	assert_int_equal(e->name_escaped, 1);
	assert_int_equal(e->name_empty, 1);
	assert_int_equal(e->name_truncated, 1);
	assert_int_equal(seen.n, 4);
	assert_string_equal(seen.name[0], "abc");
	assert_string_equal(seen.name[1], "a\\x0ab\\x1b\\x5cc");
	assert_string_equal(seen.name[2], "[unnamed]");
	assert_int_equal(seen.b[2], 0);
	assert_int_equal(seen.name_len[3], OP_JIT_NAME_MAX);
	assert_false(op_jitdump_reader_broken(r));
	op_jitdump_reader_fini(r, NULL);
}

/* DEBUG_INFO counts that lie, entries cut, after CLOSE */
static void test_debug_counts(void **state)
{
	static const struct line_in two[] = { { 1, 1, "a.c" }, { 2, 2, "\xff" } };
	struct bld s = { .n = 0 };
	struct seen seen = { .n = 0 };
	struct op_jitdump_reader *r = op_jitdump_reader_init(on_rec, &seen, 0);
	const struct op_jit_errors *e = op_jitdump_reader_errors(r);

	(void)state;
	good_header(&s);
	debug(&s, 0x10, UINT64_MAX, two, 2, 1);
	assert_int_equal(op_jitdump_reader_feed(r, s.b, s.n), 0);
	assert_int_equal(seen.lines, 2);
	assert_string_equal(seen.line_files[1], "a.c");
	assert_int_equal(e->debug_count, 1);
	/* fewer claimed than present: the claim wins */
	s.n = 0;
	debug(&s, 0x10, 1, two, 2, 1);
	assert_int_equal(op_jitdump_reader_feed(r, s.b, s.n), 0);
	assert_int_equal(seen.lines, 1);
	/* an entry cut by the record's end: its filename has no NUL */
	s.n = 0;
	rec_head(&s, OP_JIT_CODE_DEBUG_INFO, 32 + 16 + 3, 1);
	p64(&s, 0x10);
	p64(&s, 1);
	p64(&s, 1);
	p32(&s, 1);
	p32(&s, 0);
	put(&s, "abc", 3);
	rec_head(&s, OP_JIT_CODE_CLOSE, 16, 1);
	rec_head(&s, OP_JIT_CODE_CLOSE, 16, 1);
	assert_int_equal(op_jitdump_reader_feed(r, s.b, s.n), 0);
	assert_int_equal(seen.lines, 0);
	assert_int_equal(e->debug_entry, 1);
	assert_int_equal(e->after_close, 1);
	assert_int_equal(seen.n, 5);
	op_jitdump_reader_fini(r, NULL);
}

static void test_callback_stops(void **state)
{
	struct bld s = { .n = 0 };
	struct seen seen = { .n = 0, .stop_at = 2 };
	struct op_jitdump_reader *r = op_jitdump_reader_init(on_rec, &seen, 0);

	(void)state;
	valid_stream(&s);
	assert_int_equal(op_jitdump_reader_feed(r, s.b, s.n), 7);
	assert_int_equal(seen.n, 2);
	/* the rest is fed again from the reader's offset */
	assert_int_equal(op_jitdump_reader_feed(r, s.b + op_jitdump_reader_offset(r),
						s.n - op_jitdump_reader_offset(r)),
			 0);
	assert_int_equal(seen.n, 6);
	op_jitdump_reader_fini(r, NULL);
}

static void test_read_file(void **state)
{
	char path[] = "/tmp/test_jit.XXXXXX";
	struct bld s = { .n = 0 };
	struct seen seen = { .n = 0 };
	struct op_jitdump_info info;
	struct op_jit_errors e;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	valid_stream(&s);
	assert_int_equal(write(fd, s.b, s.n - 5), (ssize_t)(s.n - 5));
	close(fd);
	assert_int_equal(op_jitdump_read_file(path, on_rec, &seen, &info, &e), 0);
	assert_int_equal(seen.n, 5);
	assert_int_equal(info.pid, 4242);
	assert_int_equal(e.truncated_tail, 1);
	assert_int_equal(e.unknown_record, 1);
	unlink(path);
	assert_int_equal(op_jitdump_read_file(path, on_rec, &seen, &info, &e), -ENOENT);
	assert_int_equal(op_jitdump_read_file("/tmp", on_rec, &seen, &info, &e), -EINVAL);
}

static void test_errors_format(void **state)
{
	struct op_jit_errors a = { .bad_magic = 1 }, b = { .map_nul = 2, .bad_magic = 1 };
	char buf[256];

	(void)state;
	op_jit_errors_add(&a, &b);
	assert_int_equal(op_jit_errors_total(&a), 4);
	op_jit_errors_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "bad_magic=2 map_nul=2");
	op_jit_errors_format(&a, buf, 12);
	assert_string_equal(buf, "bad_magic=2");
	memset(&a, 0, sizeof(a));
	op_jit_errors_format(&a, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

/* ------------------------------------------------------------------ */
/* perf maps                                                          */
/* ------------------------------------------------------------------ */

static void test_perfmap_lines(void **state)
{
	static const struct {
		const char *line;
		int rc;
		uint64_t start, size;
		const char *name;
		size_t field; /* the counter bumped on error */
	} cases[] = {
		{ "7f0000001000 40 jit_big", 0, 0x7f0000001000ull, 0x40, "jit_big", 0 },
		{ "0x10 0X20 LazyCompile:~f a.js:1", 0, 0x10, 0x20, "LazyCompile:~f a.js:1", 0 },
		{ "10\t20\tname with  blanks \r", 0, 0x10, 0x20, "name with  blanks ", 0 },
		{ "  ffffffffffffffff 0 end", 0, UINT64_MAX, 0, "end", 0 },
		{ "10 20 bell\x07here", 0, 0x10, 0x20, "bell\\x07here", 0 },
		{ "", -ENODATA, 0, 0, NULL, 0 },
		{ " \t\r", -ENODATA, 0, 0, NULL, 0 },
		{ "xyz 10 f", -EINVAL, 0, 0, NULL, offsetof(struct op_jit_errors, map_syntax) },
		{ "10 f", -EINVAL, 0, 0, NULL, offsetof(struct op_jit_errors, map_syntax) },
		{ "10 20", -EINVAL, 0, 0, NULL, offsetof(struct op_jit_errors, map_syntax) },
		{ "10 20 ", -EINVAL, 0, 0, NULL, offsetof(struct op_jit_errors, name_empty) },
		{ "1020f", -EINVAL, 0, 0, NULL, offsetof(struct op_jit_errors, map_syntax) },
		{ "10 20f", -EINVAL, 0, 0, NULL, offsetof(struct op_jit_errors, map_syntax) },
		{ "0x 20 f", -EINVAL, 0, 0, NULL, offsetof(struct op_jit_errors, map_syntax) },
		{ "10000000000000000 1 f", -EINVAL, 0, 0, NULL,
		  offsetof(struct op_jit_errors, map_syntax) },
		{ "ffffffffffffffff 1 f", -EINVAL, 0, 0, NULL,
		  offsetof(struct op_jit_errors, map_overflow) },
		{ "-10 20 f", -EINVAL, 0, 0, NULL, offsetof(struct op_jit_errors, map_syntax) },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct op_jit_errors e = { 0 };
		struct op_perfmap_entry out;
		char name[64];
		int rc = op_perfmap_parse_line(cases[i].line, strlen(cases[i].line), &out, name,
					       sizeof(name), &e);

		if (rc != cases[i].rc)
			fail_msg("line %zu \"%s\": rc %d, want %d", i, cases[i].line, rc,
				 cases[i].rc);
		if (!rc) {
			assert_int_equal(out.start, cases[i].start);
			assert_int_equal(out.size, cases[i].size);
			assert_string_equal(out.name, cases[i].name);
		} else if (rc == -EINVAL) {
			assert_int_equal(*(const uint64_t *)((const char *)&e + cases[i].field), 1);
		}
		if (rc != -EINVAL && strcmp(cases[i].line, "10 20 bell\x07here"))
			assert_int_equal(op_jit_errors_total(&e), 0);
	}
	{
		/* a NUL inside the line */
		struct op_jit_errors e = { 0 };
		struct op_perfmap_entry out;
		char name[64];

		assert_int_equal(op_perfmap_parse_line("10 20 a\0b", 9, &out, name, sizeof(name), &e),
				 -EINVAL);
		assert_int_equal(e.map_nul, 1);
	}
}

struct mapseen {
	int n;
	char names[16][64];
	uint64_t linenos[16];
};

static int on_map(void *priv, const struct op_perfmap_entry *e)
{
	struct mapseen *m = priv;

	assert_true(m->n < 16);
	snprintf(m->names[m->n], sizeof(m->names[0]), "%s", e->name);
	m->linenos[m->n++] = e->lineno;
	return 0;
}

static void test_perfmap_reader(void **state)
{
	static char text[3 * OP_PERFMAP_LINE_MAX];
	size_t n = 0;

	(void)state;
	n += (size_t)sprintf(text + n, "10 20 one\n\ngarbage\n");
	memset(text + n, 'z', OP_PERFMAP_LINE_MAX + 10);
	n += OP_PERFMAP_LINE_MAX + 10;
	n += (size_t)sprintf(text + n, "\n30 40 two\r\n50 60 three");
	for (size_t step = 1; step <= n; step = step < 64 ? step + 1 : step * 3) {
		struct mapseen m = { .n = 0 };
		struct op_perfmap_reader *r = op_perfmap_reader_init(on_map, &m);
		struct op_jit_errors e;

		for (size_t o = 0; o < n; o += step)
			assert_int_equal(op_perfmap_reader_feed(r, text + o,
								o + step > n ? n - o : step),
					 0);
		assert_int_equal(m.n, 2);
		assert_int_equal(op_perfmap_reader_offset(r), n - strlen("50 60 three"));
		assert_int_equal(op_perfmap_reader_count(r), 2);
		assert_int_equal(op_perfmap_reader_fini(r, true, &e), 0);
		assert_int_equal(m.n, 3);
		assert_string_equal(m.names[0], "one");
		assert_string_equal(m.names[1], "two");
		assert_string_equal(m.names[2], "three");
		assert_int_equal(m.linenos[1], 5);
		assert_int_equal(m.linenos[2], 6);
		assert_int_equal(e.map_syntax, 1);
		assert_int_equal(e.map_long_line, 1);
		assert_int_equal(op_jit_errors_total(&e), 2);
	}
	{
		/* not flushed: the unterminated line is a truncated tail */
		struct mapseen m = { .n = 0 };
		struct op_perfmap_reader *r = op_perfmap_reader_init(on_map, &m);
		struct op_jit_errors e;

		assert_int_equal(op_perfmap_reader_feed(r, "10 20 a\n30 4", 12), 0);
		assert_int_equal(op_perfmap_reader_fini(r, false, &e), 0);
		assert_int_equal(m.n, 1);
		assert_int_equal(e.truncated_tail, 1);
	}
}

static void test_escape_name(void **state)
{
	struct op_jit_errors e = { 0 };
	char out[8];

	(void)state;
	assert_int_equal(op_jit_escape_name("abcdefghij", 10, out, sizeof(out), &e), 7);
	assert_string_equal(out, "abcdefg");
	assert_int_equal(e.name_truncated, 1);
	/* an escape never split */
	assert_int_equal(op_jit_escape_name("abcde\n", 6, out, sizeof(out), &e), 5);
	assert_string_equal(out, "abcde");
	assert_int_equal(op_jit_escape_name("ab\0cd", 5, out, sizeof(out), &e), 2);
	assert_string_equal(out, "ab");
	/* UTF-8 is kept */
	assert_int_equal(op_jit_escape_name("\xc3\xa9", 2, out, sizeof(out), &e), 2);
	assert_int_equal(op_jit_escape_name("", 0, out, 4, &e), 3);
	assert_string_equal(out, "[un");
	assert_int_equal(e.name_empty, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_whole),      cmocka_unit_test(test_valid_every_split),
		cmocka_unit_test(test_other_endian),     cmocka_unit_test(test_truncated_tail),
		cmocka_unit_test(test_bad_headers),      cmocka_unit_test(test_long_header),
		cmocka_unit_test(test_bad_record_sizes), cmocka_unit_test(test_bad_records_skipped),
		cmocka_unit_test(test_debug_counts),     cmocka_unit_test(test_callback_stops),
		cmocka_unit_test(test_read_file),        cmocka_unit_test(test_errors_format),
		cmocka_unit_test(test_perfmap_lines),    cmocka_unit_test(test_perfmap_reader),
		cmocka_unit_test(test_escape_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
