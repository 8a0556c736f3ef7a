/*
 * test_cg_read.c - the stack table reader (lib/op_cg_read.c) on tables
 * built here: version 3's context nodes become each stack's tgid/tid/cpu
 * (-1 where not recorded) and never a frame; a root that promises a
 * context without one, a context node below a frame, one that is a leaf,
 * and one in a version 2 table are each left out with a reason while the
 * rest is read; version 2 tables read as before (no context). Version 4's
 * split nodes become each stack's split key (one pointer per key), never a
 * frame; misplaced ones, keys outside the name area or not a whole path,
 * and split nodes in a version 3 table are left out with a reason.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "op_cg_read.h"

#define CTX_ROOT(flags) ((uint64_t)(CGS_STACK_CONTEXT | (flags)) << 32)
#define CTX_KEY(tgid, tid) ((uint32_t)(tgid) | (uint64_t)(uint32_t)(tid) << 32)

struct got {
	unsigned nstacks, nbad;
	struct op_cgs_stack s[8];
	struct cgs_frame fr[8][4];
	const char *why[8];
};

static int v_image(void *arg, uint32_t i, const struct op_image_name *n)
{
	(void)arg;
	(void)i;
	(void)n;
	return 0;
}

static int v_stack(void *arg, const struct op_cgs_stack *s)
{
	struct got *g = arg;

	assert_true(g->nstacks < 8 && s->depth <= 4);
	g->s[g->nstacks] = *s;
	memcpy(g->fr[g->nstacks], s->fr, s->depth * sizeof(*s->fr));
	g->s[g->nstacks].fr = g->fr[g->nstacks];
	g->nstacks++;
	return 0;
}

static void v_bad(void *arg, const char *why)
{
	struct got *g = arg;

	if (g->nbad < 8)
		g->why[g->nbad] = why;
	g->nbad++;
}

/*
 * a table of @version with one image "/bin/a" (the first name of @names,
 * @nsize bytes with their NULs) and @n nodes, read into @g
 */
static void read_table_names(uint32_t version, const char *names, uint32_t nsize,
			     const struct cgs_node *nodes, uint32_t n, struct got *g)
{
	const struct op_cgs_visitor v = { v_image, v_stack, v_bad, g };
	struct cgs_header2 h = { 0 };
	struct cgs_image img = { .name_len = 6, .tgid = -1 };
	struct op_cgs_info info;
	struct cgs_layout2 l;
	int fd = memfd_create("test_cg_read", MFD_CLOEXEC);

	assert_true(fd >= 0);
	memcpy(h.magic, CGS_MAGIC, 8);
	h.version = version;
	h.header_size = sizeof(h);
	h.images_max = h.images_used = 1;
	h.strings_size = h.strings_used = nsize;
	cgs_layout2(h.images_max, h.strings_size, &l);
	h.images_off = (uint32_t)l.images_off;
	h.strings_off = (uint32_t)l.strings_off;
	h.nodes_off = (uint32_t)l.nodes_off;
	h.nodes_max = h.nodes_used = n;
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	assert_int_equal(pwrite(fd, &img, sizeof(img), (off_t)l.images_off), sizeof(img));
	assert_int_equal(pwrite(fd, names, nsize, (off_t)l.strings_off), (ssize_t)nsize);
	assert_int_equal(pwrite(fd, nodes, n * sizeof(*nodes), (off_t)l.nodes_off),
			 (ssize_t)(n * sizeof(*nodes)));
	memset(g, 0, sizeof(*g));
	assert_int_equal(op_cgs_read(fd, &v, &info), 0);
	assert_true(info.valid);
	assert_int_equal(info.version, version);
	close(fd);
}

static void read_table(uint32_t version, const struct cgs_node *nodes, uint32_t n, struct got *g)
{
	static const char names[] = "/bin/a";

	read_table_names(version, names, sizeof(names), nodes, n, g);
}

static void test_context(void **state)
{
	const struct cgs_node nodes[] = {
		/* 1: root with context; 2: pid 100 tid 101 cpu 1; 3, 4: caller, leaf */
		{ .key = CTX_ROOT(0), .image = 1 },
		{ .key = CTX_KEY(100, 101), .parent = 1, .image = CGS_CTX_IMAGE | 2 },
		{ .key = 0x1011, .parent = 2, .image = 1 },
		{ .key = 0x1100, .count = 5, .parent = 3, .image = 1 },
		/* 5: thread only (cpu not recorded), a one-frame stack */
		{ .key = CTX_KEY(200, 202), .parent = 1, .image = CGS_CTX_IMAGE },
		{ .key = 0x1200, .count = 2, .parent = 5, .image = 1 },
		/* 7: cpu only, truncated root */
		{ .key = CTX_ROOT(CGS_STACK_TRUNCATED), .image = 1 },
		{ .key = CTX_KEY(-1, -1), .parent = 7, .image = CGS_CTX_IMAGE | 1 },
		{ .key = 0x1300, .count = 7, .parent = 8, .image = 1 },
		/* 10: a root without context in the same table */
		{ .key = 0, .image = 1 },
		{ .key = 0x1400, .count = 3, .parent = 10, .image = 1 },
	};
	struct got g;

	(void)state;
	read_table(CGS_VERSION, nodes, sizeof(nodes) / sizeof(nodes[0]), &g);
	assert_int_equal(g.nbad, 0);
	assert_int_equal(g.nstacks, 4);
	/* leaf first, the context not among the frames */
	assert_int_equal(g.s[0].count, 5);
	assert_int_equal(g.s[0].depth, 2);
	assert_int_equal(g.s[0].fr[0].key, 0x1100);
	assert_int_equal(g.s[0].fr[1].key, 0x1011);
	assert_int_equal(g.s[0].tgid, 100);
	assert_int_equal(g.s[0].tid, 101);
	assert_int_equal(g.s[0].cpu, 1);
	assert_int_equal(g.s[0].app, 1);
	assert_false(g.s[0].truncated);
	assert_int_equal(g.s[1].depth, 1);
	assert_int_equal(g.s[1].tgid, 200);
	assert_int_equal(g.s[1].tid, 202);
	assert_int_equal(g.s[1].cpu, -1);
	assert_int_equal(g.s[2].tgid, -1);
	assert_int_equal(g.s[2].tid, -1);
	assert_int_equal(g.s[2].cpu, 0);
	assert_true(g.s[2].truncated);
	assert_int_equal(g.s[3].count, 3);
	assert_int_equal(g.s[3].tgid, -1);
	assert_int_equal(g.s[3].tid, -1);
	assert_int_equal(g.s[3].cpu, -1);
}

static void test_context_bad(void **state)
{
	const struct cgs_node nodes[] = {
		/* 1: promises a context, 2: a frame right under it */
		{ .key = CTX_ROOT(0), .image = 1 },
		{ .key = 0x1100, .count = 1, .parent = 1, .image = 1 },
		/* 3: no context promised, 4: a context node anyway */
		{ .key = 0, .image = 1 },
		{ .key = CTX_KEY(1, 1), .parent = 3, .image = CGS_CTX_IMAGE | 1 },
		{ .key = 0x1200, .count = 2, .parent = 4, .image = 1 },
		/* 6: context, 7: its context node, 8: a frame, 9: a context node below a frame */
		{ .key = CTX_ROOT(0), .image = 1 },
		{ .key = CTX_KEY(1, 1), .parent = 6, .image = CGS_CTX_IMAGE | 1 },
		{ .key = 0x1300, .parent = 7, .image = 1 },
		{ .key = CTX_KEY(2, 2), .parent = 8, .image = CGS_CTX_IMAGE | 1 },
		{ .key = 0x1301, .count = 4, .parent = 9, .image = 1 },
		/* 11: a count on the context node itself (no frame) */
		{ .key = CTX_KEY(3, 3), .count = 8, .parent = 6, .image = CGS_CTX_IMAGE },
		/* 12: and a good one, which is still read */
		{ .key = 0x1400, .count = 16, .parent = 7, .image = 1 },
	};
	struct got g;

	(void)state;
	read_table(CGS_VERSION, nodes, sizeof(nodes) / sizeof(nodes[0]), &g);
	assert_int_equal(g.nbad, 4);
	assert_int_equal(g.nstacks, 1);
	assert_int_equal(g.s[0].count, 16);
	assert_int_equal(g.s[0].tgid, 1);
	for (unsigned i = 0; i < 4; i++)
		assert_true(g.why[i] && strstr(g.why[i], "context"));
	/* version 2 has no context: the same nodes are bad there too */
	read_table(CGS_VERSION2, nodes, sizeof(nodes) / sizeof(nodes[0]), &g);
	assert_int_equal(g.nstacks, 0);
	assert_int_equal(g.nbad, 5);
}

static void test_version2(void **state)
{
	const struct cgs_node nodes[] = {
		{ .key = 0, .image = 1 },
		{ .key = 0x1011, .parent = 1, .image = 1 },
		{ .key = 0x1100, .count = 4, .parent = 2, .image = 1 },
	};
	struct got g;

	(void)state;
	read_table(CGS_VERSION2, nodes, sizeof(nodes) / sizeof(nodes[0]), &g);
	assert_int_equal(g.nbad, 0);
	assert_int_equal(g.nstacks, 1);
	assert_int_equal(g.s[0].depth, 2);
	assert_int_equal(g.s[0].count, 4);
	assert_int_equal(g.s[0].tgid, -1);
	assert_int_equal(g.s[0].tid, -1);
	assert_int_equal(g.s[0].cpu, -1);
}

/* "/bin/a", then split keys "/A" at 7 and "/B/c" at 10 (as the plugin writes them) */
static const char split_names[] = "/bin/a\0/A\0/B/c";
#define SPLIT_KEY(off, len) ((uint32_t)(off) | (uint64_t)(len) << 32)
#define SPLIT_ROOT(flags) ((uint64_t)(CGS_STACK_SPLIT | (flags)) << 32)

static void test_split(void **state)
{
	const struct cgs_node nodes[] = {
		/* 1: root with a split key; 2: "/A"; 3, 4: caller, leaf */
		{ .key = SPLIT_ROOT(0), .image = 1 },
		{ .key = SPLIT_KEY(7, 2), .parent = 1, .image = CGS_SPLIT_IMAGE },
		{ .key = 0x1011, .parent = 2, .image = 1 },
		{ .key = 0x1100, .count = 5, .parent = 3, .image = 1 },
		/* 5: a second stack of "/A" */
		{ .key = 0x1200, .count = 2, .parent = 2, .image = 1 },
		/* 6: split and context: "/B/c", then pid 300 tid 301 cpu 0 */
		{ .key = SPLIT_ROOT(CGS_STACK_CONTEXT | CGS_STACK_TRUNCATED), .image = 1 },
		{ .key = SPLIT_KEY(10, 4), .parent = 6, .image = CGS_SPLIT_IMAGE },
		{ .key = CTX_KEY(300, 301), .parent = 7, .image = CGS_CTX_IMAGE | 1 },
		{ .key = 0x1300, .count = 7, .parent = 8, .image = 1 },
		/* 10: a process without a key in the same table */
		{ .key = 0, .image = 1 },
		{ .key = 0x1400, .count = 3, .parent = 10, .image = 1 },
	};
	struct got g;

	(void)state;
	read_table_names(CGS_VERSION4, split_names, sizeof(split_names), nodes,
			 sizeof(nodes) / sizeof(nodes[0]), &g);
	assert_int_equal(g.nbad, 0);
	assert_int_equal(g.nstacks, 4);
	/* the split node is not a frame */
	assert_int_equal(g.s[0].depth, 2);
	assert_int_equal(g.s[0].count, 5);
	assert_int_equal(g.s[0].fr[0].key, 0x1100);
	assert_int_equal(g.s[0].fr[1].key, 0x1011);
	assert_int_equal(g.s[0].tgid, -1);
	assert_int_equal(g.s[1].depth, 1);
	assert_int_equal(g.s[1].count, 2);
	/* stacks of one key share its string; not valid after the read: compared by pointer */
	assert_true(g.s[0].split && g.s[0].split == g.s[1].split);
	assert_int_equal(g.s[2].depth, 1);
	assert_int_equal(g.s[2].fr[0].key, 0x1300);
	assert_int_equal(g.s[2].tgid, 300);
	assert_int_equal(g.s[2].tid, 301);
	assert_int_equal(g.s[2].cpu, 0);
	assert_true(g.s[2].truncated);
	assert_true(g.s[2].split && g.s[2].split != g.s[0].split);
	assert_int_equal(g.s[3].count, 3);
	assert_null(g.s[3].split);
	/* a version 3 table has no split nodes: all but the last stack are bad there */
	read_table_names(CGS_VERSION, split_names, sizeof(split_names), nodes,
			 sizeof(nodes) / sizeof(nodes[0]), &g);
	assert_int_equal(g.nstacks, 1);
	assert_int_equal(g.s[0].count, 3);
	assert_int_equal(g.nbad, 3);
}

/* the key's text, checked while the table is read */
static const char *split_seen;

static int v_stack_key(void *arg, const struct op_cgs_stack *s)
{
	split_seen = s->split;
	if (s->split)
		assert_string_equal(s->split, s->count == 5 ? "/A" : "/B/c");
	return v_stack(arg, s);
}

static void test_split_text(void **state)
{
	const struct cgs_node nodes[] = {
		{ .key = SPLIT_ROOT(0), .image = 1 },
		{ .key = SPLIT_KEY(7, 2), .parent = 1, .image = CGS_SPLIT_IMAGE },
		{ .key = 0x1100, .count = 5, .parent = 2, .image = 1 },
		{ .key = SPLIT_KEY(10, 4), .parent = 1, .image = CGS_SPLIT_IMAGE },
		{ .key = 0x1100, .count = 6, .parent = 4, .image = 1 },
	};
	struct got g = { 0 };
	const struct op_cgs_visitor v = { v_image, v_stack_key, v_bad, &g };
	struct cgs_header2 h = { 0 };
	struct cgs_image img = { .name_len = 6, .tgid = -1 };
	struct cgs_layout2 l;
	int fd = memfd_create("test_cg_read", MFD_CLOEXEC);

	(void)state;
	assert_true(fd >= 0);
	memcpy(h.magic, CGS_MAGIC, 8);
	h.version = CGS_VERSION4;
	h.header_size = sizeof(h);
	h.images_max = h.images_used = 1;
	h.strings_size = h.strings_used = sizeof(split_names);
	cgs_layout2(h.images_max, h.strings_size, &l);
	h.images_off = (uint32_t)l.images_off;
	h.strings_off = (uint32_t)l.strings_off;
	h.nodes_off = (uint32_t)l.nodes_off;
	h.nodes_max = h.nodes_used = sizeof(nodes) / sizeof(nodes[0]);
	assert_int_equal(pwrite(fd, &h, sizeof(h), 0), sizeof(h));
	assert_int_equal(pwrite(fd, &img, sizeof(img), (off_t)l.images_off), sizeof(img));
	assert_int_equal(pwrite(fd, split_names, sizeof(split_names), (off_t)l.strings_off),
			 sizeof(split_names));
	assert_int_equal(pwrite(fd, nodes, sizeof(nodes), (off_t)l.nodes_off), sizeof(nodes));
	assert_int_equal(op_cgs_read(fd, &v, NULL), 0);
	close(fd);
	assert_int_equal(g.nbad, 0);
	assert_int_equal(g.nstacks, 2);
	assert_non_null(split_seen);
}

static void test_split_bad(void **state)
{
	const struct cgs_node nodes[] = {
		/* 1: promises a split key, 2: a frame right under it */
		{ .key = SPLIT_ROOT(0), .image = 1 },
		{ .key = 0x1100, .count = 1, .parent = 1, .image = 1 },
		/* 3: no split promised, 4: a split node anyway */
		{ .key = 0, .image = 1 },
		{ .key = SPLIT_KEY(7, 2), .parent = 3, .image = CGS_SPLIT_IMAGE },
		{ .key = 0x1200, .count = 2, .parent = 4, .image = 1 },
		/* 6: split, 7: key "bin/a" (not a path), 8: key past the area, 9: "/" of "/A" */
		{ .key = SPLIT_ROOT(0), .image = 1 },
		{ .key = SPLIT_KEY(1, 5), .parent = 6, .image = CGS_SPLIT_IMAGE },
		{ .key = 0x1300, .count = 4, .parent = 7, .image = 1 },
		{ .key = SPLIT_KEY(10, 5), .parent = 6, .image = CGS_SPLIT_IMAGE },
		{ .key = 0x1301, .count = 4, .parent = 9, .image = 1 },
		{ .key = SPLIT_KEY(7, 1), .parent = 6, .image = CGS_SPLIT_IMAGE },
		{ .key = 0x1302, .count = 4, .parent = 11, .image = 1 },
		/* 13: a good key, 14: a frame, 15: a split node below the frame */
		{ .key = SPLIT_KEY(7, 2), .parent = 6, .image = CGS_SPLIT_IMAGE },
		{ .key = 0x1400, .parent = 13, .image = 1 },
		{ .key = SPLIT_KEY(10, 4), .parent = 14, .image = CGS_SPLIT_IMAGE },
		{ .key = 0x1401, .count = 8, .parent = 15, .image = 1 },
		/* 17: split + context, the context node first (18), then the split node (19) */
		{ .key = SPLIT_ROOT(CGS_STACK_CONTEXT), .image = 1 },
		{ .key = CTX_KEY(1, 1), .parent = 17, .image = CGS_CTX_IMAGE | 1 },
		{ .key = SPLIT_KEY(7, 2), .parent = 18, .image = CGS_SPLIT_IMAGE },
		{ .key = 0x1500, .count = 9, .parent = 19, .image = 1 },
		/* 21: a count on the split node itself (no frame) */
		{ .key = SPLIT_KEY(10, 4), .count = 10, .parent = 6, .image = CGS_SPLIT_IMAGE },
		/* 22: and a good one, which is still read */
		{ .key = 0x1600, .count = 16, .parent = 13, .image = 1 },
	};
	struct got g;

	(void)state;
	read_table_names(CGS_VERSION4, split_names, sizeof(split_names), nodes,
			 sizeof(nodes) / sizeof(nodes[0]), &g);
	assert_int_equal(g.nstacks, 1);
	assert_int_equal(g.s[0].count, 16);
	assert_non_null(g.s[0].split);
	assert_int_equal(g.nbad, 8);
	for (unsigned i = 0; i < 8; i++)
		assert_true(g.why[i] && strstr(g.why[i], "split"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_context),    cmocka_unit_test(test_context_bad),
		cmocka_unit_test(test_version2),   cmocka_unit_test(test_split),
		cmocka_unit_test(test_split_text), cmocka_unit_test(test_split_bad),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
