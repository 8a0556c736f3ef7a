/*
 * test_optval.c - the setting values both the command line and the config
 * file take (core/optval.c, built here alone: it is a leaf): --separate
 * and --verbose lists, session groups, the image filter, plugin requests.
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

#include "op_mangle.h"
#include "options.h"
#include "optval.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* a value, what it parses to, or the message it is refused with (want_err) */
struct list_case {
	const char *arg;
	unsigned want;
	const char *want_err;
};

static void optval_check_lists(const struct list_case *t, size_t n,
			       int (*parse)(const char *, unsigned *, char *, size_t))
{
	char err[256];
	unsigned v;
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		v = 0xdead;
		err[0] = '\0';
		rc = parse(t[i].arg, &v, err, sizeof(err));
		if (!t[i].want_err) {
			if (rc)
				fail_msg("\"%s\" refused: %s", t[i].arg, err);
			if (v != t[i].want)
				fail_msg("\"%s\": 0x%x, expected 0x%x", t[i].arg, v, t[i].want);
			continue;
		}
		if (rc != -EINVAL)
			fail_msg("\"%s\" accepted (%d)", t[i].arg, rc);
		assert_int_equal(v, 0xdead); /* untouched */
		if (strcmp(err, t[i].want_err))
			fail_msg("\"%s\": message \"%s\", expected \"%s\"", t[i].arg, err, t[i].want_err);
	}
}

static void test_separate(void **state)
{
	static const struct list_case t[] = {
		{ "none", 0, NULL },
		{ "lib", OP_SEP_LIB, NULL },
		{ "library", OP_SEP_LIB, NULL },
		{ "kernel", OP_SEP_KERNEL | OP_SEP_LIB, NULL },
		{ "thread", OP_SEP_THREAD, NULL },
		{ "cpu", OP_SEP_CPU, NULL },
		{ "thread,cpu", OP_SEP_THREAD | OP_SEP_CPU, NULL },
		{ "all", OP_SEP_ALL, NULL },
		{ "none,cpu", OP_SEP_CPU, NULL },
		/* issue 20: needs the cgroup plugin (checked at start-up), not part of all */
		{ "cgroup", OP_SEP_CGROUP, NULL },
		{ "all,cgroup", OP_SEP_ALL | OP_SEP_CGROUP, NULL },
		{ "bogus", 0, "unknown --separate value \"bogus\" - allowed: none,lib,kernel,thread,cpu,all,cgroup" },
		{ "lib,bogus", 0, "unknown --separate value \"bogus\" - allowed: none,lib,kernel,thread,cpu,all,cgroup" },
		{ "", 0, "empty --separate value - expected a comma list of none,lib,kernel,thread,cpu,all,cgroup" },
		{ "lib,", 0, "trailing ',' in --separate value \"lib,\"" },
		{ ",lib", 0, "unknown --separate value \"\" - allowed: none,lib,kernel,thread,cpu,all,cgroup" },
		{ "LIB", 0, "unknown --separate value \"LIB\" - allowed: none,lib,kernel,thread,cpu,all,cgroup" },
	};

	(void)state;
	optval_check_lists(t, ARRAY_LEN(t), optval_parse_separate);
}

static void test_verbose(void **state)
{
	static const struct list_case t[] = {
		{ "", 0, NULL },
		{ "all", OP_VERBOSE_ALL, NULL },
		{ "sfile,ext", OP_VERBOSE_SFILE | OP_VERBOSE_EXT, NULL },
		{ "arcs,samples,module,misc",
		  OP_VERBOSE_ARCS | OP_VERBOSE_SAMPLES | OP_VERBOSE_MODULE | OP_VERBOSE_MISC, NULL },
		{ "sfile,all", OP_VERBOSE_ALL, NULL },
		{ "loud", 0, "unknown --verbose value \"loud\" - allowed: all,sfile,arcs,samples,module,misc,ext" },
		{ "ext,", 0, "trailing ',' in --verbose value \"ext,\"" },
		{ "Ext", 0, "unknown --verbose value \"Ext\" - allowed: all,sfile,arcs,samples,module,misc,ext" },
	};

	(void)state;
	optval_check_lists(t, ARRAY_LEN(t), optval_parse_verbose);
}

static void test_check_group(void **state)
{
	static const struct {
		const char *name;
		int want;
	} t[] = {
		{ "root", 0 }, /* gid 0 has that name on Linux */
		{ "", -ENOENT },
		{ "no-such-group-optval", -ENOENT },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_LEN(t); i++)
		if (optval_check_group(t[i].name) != t[i].want)
			fail_msg("group \"%s\": expected %d", t[i].name, t[i].want);
}

static void test_set_image(void **state)
{
	/* the value, then the filter it leaves ("" ends it; none: no filter) */
	static const struct {
		const char *arg;
		const char *want[4];
	} t[] = {
		{ "a", { "a", NULL } },
		{ "a,b,c", { "a", "b", "c", NULL } },
		{ "/usr/bin/x,,y", { "/usr/bin/x", "y", NULL } },
		{ ",a,", { "a", NULL } },
		{ "", { NULL } },
		{ ",", { NULL } },
	};
	struct op_options o;
	size_t i, k;

	(void)state;
	memset(&o, 0, sizeof(o));
	for (i = 0; i < ARRAY_LEN(t); i++) {
		/* each call replaces the previous filter (ASan sees a leak otherwise) */
		assert_int_equal(optval_set_image(&o, t[i].arg), 0);
		if (!t[i].want[0]) {
			assert_null(o.image_filter);
			continue;
		}
		assert_non_null(o.image_filter);
		for (k = 0; t[i].want[k]; k++) {
			assert_non_null(o.image_filter[k]);
			assert_string_equal(o.image_filter[k], t[i].want[k]);
		}
		assert_null(o.image_filter[k]);
	}
	assert_int_equal(optval_set_image(&o, "z"), 0);
	optval_free_strv(o.image_filter);
	optval_free_strv(NULL);
}

static void test_add_feature(void **state)
{
	/* applied in order to one struct op_options */
	static const struct {
		const char *name, *args, *origin;
		bool replace;
		int want;
		size_t nr; /* nr_features after it */
	} t[] = {
		{ "ibs", "fetch", "f.conf:3", false, 0, 1 },
		{ "timer", NULL, "f.conf:4", false, 0, 2 },
		{ "ibs", "op", "f.conf:5", false, -EEXIST, 2 },  /* the config file twice */
		{ "ibs", "op", "command line", true, 0, 2 },   /* the command line overrides */
	};
	struct op_options o;
	char name[16];
	size_t i;

	(void)state;
	memset(&o, 0, sizeof(o));
	for (i = 0; i < ARRAY_LEN(t); i++) {
		assert_int_equal(optval_add_feature(&o, t[i].name, t[i].args, t[i].origin, t[i].replace),
				 t[i].want);
		assert_int_equal(o.nr_features, t[i].nr);
	}
	assert_string_equal(o.features[0].name, "ibs");
	assert_string_equal(o.features[0].args, "op");
	assert_string_equal(o.features[0].origin, "command line");
	assert_string_equal(o.features[1].name, "timer");
	assert_string_equal(o.features[1].args, "");
	assert_string_equal(o.features[1].origin, "f.conf:4");
	while (o.nr_features < OP_MAX_FEATURES) {
		snprintf(name, sizeof(name), "p%zu", o.nr_features);
		assert_int_equal(optval_add_feature(&o, name, "", "x", false), 0);
	}
	assert_int_equal(optval_add_feature(&o, "one-more", "", "x", true), -ENOSPC);
	/* replacing one of a full table still works */
	assert_int_equal(optval_add_feature(&o, "timer", "hz=99", "x", true), 0);
	assert_string_equal(o.features[1].args, "hz=99");
	for (i = 0; i < o.nr_features; i++)
		optval_free_feature(&o.features[i]);
	assert_null(o.features[0].name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_separate),
		cmocka_unit_test(test_verbose),
		cmocka_unit_test(test_check_group),
		cmocka_unit_test(test_set_image),
		cmocka_unit_test(test_add_feature),
	};

	return cmocka_run_group_tests_name("optval", tests, NULL, NULL);
}
