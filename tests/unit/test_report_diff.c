/*
 * test_report_diff.c - opreport's differential reports (opreport_diff.c):
 * splitting "[shared] { first } { second }" (table of good and bad word
 * lists), the diff % arithmetic, and the matching of rows by image base
 * name, application and symbol name - not address - with +++/--- sides,
 * duplicate keys summed, and the sort by the second profile.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "opreport.h"

#define W_MAX 12

static void test_split_table(void **state)
{
	static const struct {
		const char *words;  /* space-separated */
		int ret;
		const char *sides;  /* S shared, 1 first, 2 second, B brace */
		const char *msg;    /* part of the error */
	} t[] = {
		{ "", 0, "", NULL },
		{ "image:ls tid:1", 0, "SS", NULL },
		{ "{ session:a } { session:b }", 1, "B1BB2B", NULL },
		{ "-x { a b } { c }", 1, "SB11BB2B", NULL },
		{ "image:x { a } { b } cpu:0", 1, "SB1BB2BS", NULL },
		{ "{a} {b}", 0, "SS", NULL }, /* braces only as whole words */
		{ "{ a", -EINVAL, NULL, "the first profile's '{' has no '}'" },
		{ "{ a } { b", -EINVAL, NULL, "the second profile's '{' has no '}'" },
		{ "{ a }", -EINVAL, NULL, "only one profile in braces" },
		{ "} a", -EINVAL, NULL, "'}' (word 1) has no '{'" },
		{ "{ } { b }", -EINVAL, NULL, "the first profile { } is empty" },
		{ "{ a } { }", -EINVAL, NULL, "the second profile { } is empty" },
		{ "{ a { b } }", -EINVAL, NULL, "a '{' (word 3) inside the first profile's" },
		{ "{ a } { b } { c }", -EINVAL, NULL, "a third '{' (word 7)" },
		{ "{ a } } { b }", -EINVAL, NULL, "'}' (word 4) has no '{'" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char buf[256], *w[W_MAX], err[256] = "", *save = NULL;
		enum rdiff_word side[W_MAX];
		size_t n = 0;
		int ret;

		snprintf(buf, sizeof(buf), "%s", t[i].words);
		for (char *tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
			w[n++] = tok;
		ret = rdiff_split(w, n, side, err, sizeof(err));
		if (ret != t[i].ret)
			fail_msg("\"%s\": returned %d, expected %d (%s)", t[i].words, ret, t[i].ret, err);
		if (t[i].msg && !strstr(err, t[i].msg))
			fail_msg("\"%s\": message \"%s\" lacks \"%s\"", t[i].words, err, t[i].msg);
		for (size_t k = 0; t[i].sides && k < n; k++) {
			static const char code[] = "S12B";

			if (code[side[k]] != t[i].sides[k])
				fail_msg("\"%s\": word %zu is %c, expected %c", t[i].words, k + 1,
					 code[side[k]], t[i].sides[k]);
		}
	}
}

static void test_pct(void **state)
{
	(void)state;
	/* 25 % of A, 50 % of B: the share doubled */
	assert_float_equal(rdiff_pct(25, 100, 500, 1000), 100.0, 1e-9);
	/* 75 % -> 25 %: -66.67 %, whatever the totals */
	assert_float_equal(rdiff_pct(750, 1000, 50, 200), -200.0 / 3.0, 1e-9);
	/* same share, different totals: 0 */
	assert_float_equal(rdiff_pct(10, 40, 30, 120), 0.0, 1e-9);
	assert_true(isinf(rdiff_pct(0, 100, 5, 100)) && rdiff_pct(0, 100, 5, 100) > 0);
	assert_float_equal(rdiff_pct(0, 100, 0, 100), 0.0, 0);
	/* an empty total is a 0 share, not a division by zero */
	assert_true(isinf(rdiff_pct(3, 0, 1, 10)));
	assert_float_equal(rdiff_pct(1, 10, 0, 0), -100.0, 1e-9);
}

/* a side of fake rows: image path, app, symbol name, vma, count */
struct fake {
	const char *img, *app, *name;
	uint64_t vma, count;
};

struct side {
	struct rpt_image img[8];
	struct rpt_group grp[8];
	struct rpt_sym sym[8];
	uint64_t cnt[8];
	struct rpt_symrow row[8];
	struct rpt_rows rows;
};

static void build(struct side *s, const struct fake *f, size_t n)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < n; i++) {
		s->img[i].path = s->img[i].display = (char *)f[i].img;
		s->grp[i].img = &s->img[i];
		s->grp[i].app = (char *)f[i].app;
		s->sym[i] = (struct rpt_sym){ .vma = f[i].vma, .name = f[i].name };
		s->cnt[i] = f[i].count;
		s->row[i] = (struct rpt_symrow){ .g = &s->grp[i], .sym = f[i].name ? &s->sym[i] : NULL,
						 .count = &s->cnt[i] };
	}
	s->rows = (struct rpt_rows){ .v = s->row, .n = n, .ncls = 1 };
}

static const struct rdiff_ent *find(const struct rdiff *d, const char *image, const char *name)
{
	for (size_t i = 0; i < d->n; i++)
		if (!strcmp(d->v[i].image, image) && !strcmp(d->v[i].name, name))
			return &d->v[i];
	return NULL;
}

static void test_match(void **state)
{
	/* two builds at different paths and addresses; a static duplicate; one-sided rows */
	static const struct fake a[] = {
		{ "/build1/bin/prog", "/build1/bin/prog", "hot", 0x1000, 300 },
		{ "/build1/bin/prog", "/build1/bin/prog", "cold", 0x1100, 100 },
		{ "/build1/bin/prog", "/build1/bin/prog", "gone", 0x1200, 40 },
		{ "/lib/libc.so.6", "/build1/bin/prog", "memcpy", 0x9000, 10 },
		{ "/lib/libc.so.6", "/other/app", "memcpy", 0x9000, 7 },
	};
	static const struct fake b[] = {
		{ "/build2/prog", "/build2/prog", "cold", 0x2200, 250 },
		{ "/build2/prog", "/build2/prog", "hot", 0x2000, 100 },
		{ "/build2/prog", "/build2/prog", "new", 0x2400, 30 },
		{ "/build2/prog", "/build2/prog", "new", 0x2500, 20 }, /* same name: summed */
		{ "/lib/libc.so.6", "/build2/prog", "memcpy", 0x9000, 5 },
		{ "/build2/prog", "/build2/prog", NULL, 0, 3 }, /* (no symbols) */
	};
	struct side *sa = calloc(1, sizeof(*sa)), *sb = calloc(1, sizeof(*sb));
	struct rdiff d = { .ncls = 1 };
	struct rpt_opts o = { .sort = SORT_SAMPLE };
	const struct rdiff_ent *e;

	(void)state;
	assert_non_null(sa);
	assert_non_null(sb);
	build(sa, a, sizeof(a) / sizeof(a[0]));
	build(sb, b, sizeof(b) / sizeof(b[0]));
	assert_int_equal(rdiff_add_rows(&d, 0, &sa->rows), 0);
	assert_int_equal(rdiff_add_rows(&d, 1, &sb->rows), 0);
	rdiff_fold(&d);
	/* prog:hot, cold, gone, new, (no symbols); libc:memcpy under prog and under app */
	assert_int_equal(d.n, 7);
	e = find(&d, "prog", "hot");
	assert_non_null(e);
	assert_true(e->in[0] && e->in[1]);
	assert_int_equal(e->count[0][0], 300);
	assert_int_equal(e->count[1][0], 100);
	assert_ptr_equal(e->row[1], &sb->row[1]); /* shown from the second profile */
	e = find(&d, "prog", "gone");
	assert_true(e->in[0] && !e->in[1]);
	assert_int_equal(e->count[1][0], 0);
	e = find(&d, "prog", "new");
	assert_true(!e->in[0] && e->in[1]);
	assert_int_equal(e->count[1][0], 50);
	assert_ptr_equal(e->row[1], &sb->row[2]); /* the larger of the two */
	e = find(&d, "prog", "(no symbols)");
	assert_true(e && !e->in[0] && e->in[1]);
	/* the library matches per application base name */
	for (size_t i = 0; i < d.n; i++) {
		if (strcmp(d.v[i].name, "memcpy"))
			continue;
		if (!strcmp(d.v[i].app, "prog"))
			assert_true(d.v[i].in[0] && d.v[i].in[1] && d.v[i].count[0][0] == 10);
		else
			assert_true(!strcmp(d.v[i].app, "app") && d.v[i].in[0] && !d.v[i].in[1]);
	}
	/* sorted by the second profile's samples, then the first's */
	rdiff_sort(&d, &o);
	assert_string_equal(d.v[0].name, "cold");
	assert_string_equal(d.v[1].name, "hot");
	assert_string_equal(d.v[2].name, "new");
	assert_string_equal(d.v[d.n - 2].name, "gone"); /* 0 in B: by A's 40, then 7 */
	assert_int_equal(d.v[d.n - 1].count[0][0], 7);
	o.reverse_sort = true;
	rdiff_sort(&d, &o);
	assert_int_equal(d.v[d.n - 1].count[1][0], 250);
	rdiff_free(&d);
	free(sa);
	free(sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_table),
		cmocka_unit_test(test_pct),
		cmocka_unit_test(test_match),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
