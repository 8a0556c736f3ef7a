/*
 * options_fixture.h - helpers shared by test_options.c and test_config.c
 * (included once by each, after cmocka.h): a scratch directory under the
 * build dir for config files, the parse result holder and assert_contains.
 * Define OPT_FIXTURE_TMP (the scratch directory's name prefix) first.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_TESTS_OPTIONS_FIXTURE_H
#define OP_TESTS_OPTIONS_FIXTURE_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#ifndef OPT_FIXTURE_TMP
#error "define OPT_FIXTURE_TMP before including options_fixture.h"
#endif

#define assert_contains(hay, needle)                                                        \
	do {                                                                                \
		const char *h_ = (hay);                                                     \
		if (!strstr(h_ ? h_ : "", (needle)))                                        \
			fail_msg("expected \"%s\" in:\n%s", (needle), h_ ? h_ : "");        \
	} while (0)

/* one options_parse_f() call: the options, its return and what it printed */
struct run {
	struct op_options o;
	int rc;
	char *err;
	size_t err_len;
};

static void done(struct run *r)
{
	options_free(&r->o);
	free(r->err);
	memset(r, 0, sizeof(*r));
}

static char tmpdir[PATH_MAX];

static int setup(void **state)
{
	const char *b = getenv("OP_BUILDDIR");

	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/tests/unit/" OPT_FIXTURE_TMP "-XXXXXX", b ? b : ".");
	if (!mkdtemp(tmpdir))
		return -1;
	setenv("OP_PLUGIN_DIR", "/env/plugins", 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* write @text to tmpdir/@name; the full path goes to @path */
static void write_conf(const char *name, const char *text, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

#endif /* OP_TESTS_OPTIONS_FIXTURE_H */
