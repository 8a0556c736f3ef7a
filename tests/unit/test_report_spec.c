/*
 * test_report_spec.c - opreport's profile specification: parsing (keys,
 * comma lists, relative image paths, errors) and matching against parsed
 * sample-file names (globs, basenames, lib-image, exclusions, sessions).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "opreport.h"

static struct op_parsed_name name(const char *app, const char *image, const char *event,
				  int32_t tgid, int32_t tid, int32_t cpu)
{
	struct op_parsed_name n;

	memset(&n, 0, sizeof(n));
	n.app.kind = n.image.kind = OP_IMAGE_USER;
	n.app.path = app;
	n.image.path = image;
	strcpy(n.event, event);
	n.count = 100000;
	n.um = 0;
	n.tgid = tgid;
	n.tid = tid;
	n.cpu = cpu;
	return n;
}

static void add_ok(struct rpt_spec *s, const char *w)
{
	char err[512] = "";

	assert_int_equal(spec_add(s, w, "/home/u", err, sizeof(err)), 0);
}

static void test_parse_keys_and_dedup(void **state)
{
	struct rpt_spec s = { 0 };

	(void)state;
	add_ok(&s, "event:CYCLES,INSNS,CYCLES");
	add_ok(&s, "tid:1,2");
	add_ok(&s, "tid:2");
	add_ok(&s, "image:./bin/../bin/app");
	add_ok(&s, "ls");
	assert_int_equal(s.event.n, 2);
	assert_int_equal(s.tid.n, 2);
	assert_int_equal(s.image.n, 2);
	assert_string_equal(s.image.v[0], "/home/u/bin/app");
	assert_string_equal(s.image.v[1], "ls");
	spec_free(&s);
}

static void test_parse_errors(void **state)
{
	static const char *const bad[] = { "bogus:1", "tid:abc", "cpu:1x", "event:", "count:-1", "" };
	struct rpt_spec s = { 0 };
	char err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(spec_add(&s, bad[i], "/", err, sizeof(err)), -EINVAL);
		assert_true(strlen(err) > 10);
	}
	/* an existing file whose name has a colon is an image, not a key */
	{
		FILE *f = fopen("report_spec:file", "w");

		assert_non_null(f);
		fclose(f);
		assert_int_equal(spec_add(&s, "report_spec:file", "/tmp", err, sizeof(err)), 0);
		assert_string_equal(s.image.v[s.image.n - 1], "report_spec:file");
		unlink("report_spec:file");
	}
	/* the message names the word and what was expected */
	spec_add(&s, "tid:abc", "/", err, sizeof(err));
	assert_non_null(strstr(err, "tid:abc"));
	assert_non_null(strstr(err, "decimal"));
	spec_free(&s);
}

static void test_match_image(void **state)
{
	struct op_parsed_name app = name("/usr/bin/app", "/usr/bin/app", "TIMER", -1, -1, -1);
	struct op_parsed_name lib = name("/usr/bin/app", "/lib/libc.so.6", "TIMER", -1, -1, -1);
	struct op_parsed_name other = name("/usr/bin/other", "/usr/bin/other", "TIMER", -1, -1, -1);
	struct rpt_spec s = { 0 };

	(void)state;
	assert_true(spec_match(&s, &app)); /* empty spec: everything */
	add_ok(&s, "image:app");
	assert_true(spec_match(&s, &app));
	assert_true(spec_match(&s, &lib)); /* the app's libraries come with it */
	assert_false(spec_match(&s, &other));
	spec_free(&s);

	memset(&s, 0, sizeof(s));
	add_ok(&s, "image:/usr/bin/*");
	assert_true(spec_match(&s, &other));
	add_ok(&s, "image-exclude:libc*");
	assert_false(spec_match(&s, &lib));
	assert_true(spec_match(&s, &app));
	spec_free(&s);

	memset(&s, 0, sizeof(s));
	add_ok(&s, "lib-image:/lib/libc.so.6");
	assert_true(spec_match(&s, &lib));
	assert_false(spec_match(&s, &app)); /* not a library */
	spec_free(&s);
}

static void test_match_numbers(void **state)
{
	struct op_parsed_name a = name("/a", "/a", "TIMER", 10, 11, 0);
	struct op_parsed_name all = name("/a", "/a", "TIMER", -1, -1, -1);
	struct rpt_spec s = { 0 };

	(void)state;
	add_ok(&s, "tid:11,12");
	assert_true(spec_match(&s, &a));
	assert_false(spec_match(&s, &all));
	add_ok(&s, "cpu:1");
	assert_false(spec_match(&s, &a));
	spec_free(&s);

	memset(&s, 0, sizeof(s));
	add_ok(&s, "tgid:all");
	assert_true(spec_match(&s, &all));
	assert_false(spec_match(&s, &a));
	add_ok(&s, "event:TIM*");
	assert_true(spec_match(&s, &all));
	add_ok(&s, "count:5");
	assert_false(spec_match(&s, &all));
	assert_true(spec_match_noimage(&(struct rpt_spec){ 0 }, &all));
	spec_free(&s);
}

static void test_sessions(void **state)
{
	struct rpt_spec s = { 0 };

	(void)state;
	assert_true(spec_match_session(&s, "current"));
	assert_false(spec_match_session(&s, "saved"));
	add_ok(&s, "session:sa*,current");
	add_ok(&s, "session-exclude:saved2");
	assert_true(spec_match_session(&s, "saved"));
	assert_true(spec_match_session(&s, "current"));
	assert_false(spec_match_session(&s, "saved2"));
	assert_false(spec_match_session(&s, "other"));
	spec_free(&s);
}

static void test_strlist(void **state)
{
	struct strlist l = { 0 };

	(void)state;
	assert_int_equal(strlist_add_csv(&l, "a,b,,a,c"), 0);
	assert_int_equal(l.n, 3);
	assert_true(strlist_has(&l, "c"));
	assert_false(strlist_has(&l, "d"));
	strlist_free(&l);
	assert_int_equal(l.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_keys_and_dedup), cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_match_image),          cmocka_unit_test(test_match_numbers),
		cmocka_unit_test(test_sessions),             cmocka_unit_test(test_strlist),
	};

	return cmocka_run_group_tests_name("report_spec", tests, NULL, NULL);
}
