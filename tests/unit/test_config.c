/*
 * test_config.c - oprofiled.conf handling (core/config.c): the shipped
 * example parses cleanly and states the true defaults; FILE:LINE errors for
 * syntax, types and ranges; unknown keys warned with path and line;
 * @include relative to the file; both plugin forms, the scoped getters and
 * enabled = false in either form.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"
#include "options.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define OPT_FIXTURE_TMP "conf-tmp"
#include "options_fixture.h"

/* oprofiled --config=PATH [extra] --check-config */
static void run_conf(struct run *r, const char *path, const char *extra)
{
	char arg[PATH_MAX + 16];
	char *argv[5];
	int argc = 0;
	FILE *f;

	snprintf(arg, sizeof(arg), "--config=%s", path);
	argv[argc++] = "oprofiled";
	argv[argc++] = arg;
	if (extra)
		argv[argc++] = (char *)extra;
	argv[argc++] = "--check-config";
	argv[argc] = NULL;
	f = open_memstream(&r->err, &r->err_len);
	r->rc = options_parse_f(&r->o, argc, argv, f);
	fclose(f);
}

static char *print_opts(const struct op_options *o)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	options_print(o, f);
	fclose(f);
	return text;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

/* conf/oprofiled.conf: parses without a word, documents every key, states the defaults */
static void test_example_conf(void **state)
{
	const char *src = getenv("OP_SRCDIR");
	char path[PATH_MAX], needle[128];
	char *text, *with, *without, *p;
	struct run a, b;
	size_t i;

	(void)state;
	snprintf(path, sizeof(path), "%s/conf/oprofiled.conf", src ? src : ".");
	run_conf(&a, path, NULL);
	if (a.rc)
		fail_msg("%s does not parse:\n%s", path, a.err);
	assert_string_equal(a.err, "");
	assert_non_null(a.o.config);
	assert_int_equal(a.o.nr_features, 0); /* its plugin entries are disabled */

	/* every key oprofiled knows is documented, as a setting or a commented one */
	text = slurp(path);
	for (i = 0; conf_key_name(i); i++) {
		snprintf(needle, sizeof(needle), "\n%s = ", conf_key_name(i));
		p = strstr(text, needle);
		if (!p) {
			snprintf(needle, sizeof(needle), "\n#%s = ", conf_key_name(i));
			p = strstr(text, needle);
		}
		if (!p)
			fail_msg("conf/oprofiled.conf does not document \"%s\"", conf_key_name(i));
	}
	assert_true(i >= 19);
	free(text);

	/* the values it sets are the built-in defaults */
	run_conf(&b, "", NULL);
	assert_int_equal(b.rc, 0);
	with = print_opts(&a.o);
	without = print_opts(&b.o);
	/* skip the first line, which names the config file */
	assert_string_equal(strchr(with, '\n'), strchr(without, '\n'));
	free(with);
	free(without);
	done(&a);
	done(&b);
}

static void test_syntax_error(void **state)
{
	char path[PATH_MAX];
	struct run r;

	(void)state;
	write_conf("syntax.conf", "ring_pages = 64;\nsession_dir = \"/x\"\nseparate = ;\n", path,
		   sizeof(path));
	run_conf(&r, path, NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "syntax.conf:3: syntax error - fix the config file syntax");
	done(&r);
}

static void test_type_and_range_errors(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "\nring_pages = \"many\";\n", ":2: \"ring_pages\": expected an integer, found a string" },
		{ "append = 1;\n", ":1: \"append\": expected a boolean (true/false), found an integer" },
		{ "session_dir = 5;\n", ":1: \"session_dir\": expected a string, found an integer" },
		{ "events = [ 1, 2 ];\n", "\"events[0]\": expected a string, found an integer" },
		{ "separate = \"lib,bogus\";\n", ":1: \"separate\": unknown --separate value \"bogus\"" },
		{ "verbose = \"loud\";\n", "\"verbose\": unknown --verbose value \"loud\"" },
		{ "ring_pages = 3;\n", "\"ring_pages\": 3 is not a power of two" },
		{ "stats_interval = -1;\n", "\"stats_interval\": -1 is out of range, expected 0..31536000" },
		{ "max_open_files = 5000000000L;\n", "5000000000 is out of range" },
		{ "plugins = 3;\n", "\"plugins\": expected a list" },
		{ "plugins = ( { args = \"x\"; } );\n", "\"plugins[0]\": plugin entry without a string 'name'" },
		{ "plugins = ( \"ibs\" );\n", "\"plugins[0]\": expected a group" },
		{ "plugins = ( { name = \"a\"; enabled = \"yes\"; } );\n",
		  "\"plugins[0].enabled\": expected a boolean, found a string" },
		{ "plugins = ( { name = \"a\"; args = 1; } );\n",
		  "\"plugins[0].args\": expected a string, found an integer" },
		{ "plugins = ( { name = \"a\"; },\n { name = \"a\"; } );\n",
		  ":2: \"plugins[1]\": plugin \"a\" is configured twice" },
		{ "plugins = { a = 1; };\n", "\"plugins.a\": expected a group of plugin settings, found an integer" },
		/* start refused these with "not a power of two between 1 and 65536" */
		{ "ring_pages = 1048576;\n", ":1: \"ring_pages\": 1048576 is out of range, expected 1..65536" },
		{ "plugins = ( { name = \"bad/name\"; } );\n",
		  ":1: \"plugins[0]\": plugin name \"bad/name\" is not valid - expected 1..64 of [A-Za-z0-9_-]" },
		{ "plugins = { tim*er = { }; };\n", "\"plugins.tim*er\": plugin name \"tim*er\" is not valid" },
	};
	char path[PATH_MAX];
	struct run r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_conf("bad.conf", cases[i].text, path, sizeof(path));
		run_conf(&r, path, NULL);
		if (r.rc != -EINVAL)
			fail_msg("accepted: %s", cases[i].text);
		assert_contains(r.err, "oprofiled: ");
		assert_contains(r.err, "bad.conf:");
		assert_contains(r.err, cases[i].msg);
		assert_null(r.o.config);
		done(&r);
	}
}

/*
 * libconfig 1.5 reads an integer without an L suffix through an int:
 * 4294967297 was taken as 1, 4294967356 as 60, and all of these ran.
 */
static void test_wide_integers(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "max_open_files = 4294967297;\n",
		  "wide.conf:1: \"max_open_files\": 4294967297 is out of range, expected 1..1048576" },
		{ "\nrotate_interval = 4294967356;\n",
		  "wide.conf:2: \"rotate_interval\": 4294967356 is out of range, expected 0..31622400 seconds" },
		{ "stats_interval = 99999999999999999999;\n",
		  ":1: \"stats_interval\": 99999999999999999999 is out of range, expected 0..31536000" },
		{ "sync_interval = -4294967297;\n", "\"sync_interval\": -4294967297 is out of range" },
		{ "rotate_keep = 0x100000001;\n",
		  "\"rotate_keep\": 4294967297 is out of range, expected 1..100000" },
		{ "ring_pages = 4294967360;\n", "\"ring_pages\": 4294967360 is out of range" },
		/* the key's line, the value below it; a comment and a string that look alike */
		{ "# max_open_files = 64;\nmax_open_files /* = 64; */\n=\n4294967297; log_file = \"x = 1;\";\n",
		  "wide.conf:2: \"max_open_files\": 4294967297 is out of range" },
	};
	char path[PATH_MAX], inc[PATH_MAX];
	struct run r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_conf("wide.conf", cases[i].text, path, sizeof(path));
		run_conf(&r, path, NULL);
		if (r.rc != -EINVAL)
			fail_msg("accepted: %s", cases[i].text);
		assert_contains(r.err, cases[i].msg);
		done(&r);
	}

	/* in an included file: named by that file's line */
	write_conf("wide-inc.conf", "\n\nmax_open_files = 4294967297;\n", inc, sizeof(inc));
	write_conf("wide-main.conf", "ring_pages = 8;\n@include \"wide-inc.conf\"\n", path,
		   sizeof(path));
	run_conf(&r, path, NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "wide-inc.conf:3: \"max_open_files\": 4294967297 is out of range");
	done(&r);

	/* values that fit are read as before, whatever surrounds them */
	write_conf("fits.conf",
		   "max_open_files = 65536; # max_open_files = 4294967297;\n"
		   "log_file = \"rotate_keep = 4294967297;\"; rotate_keep = 0x10;\n"
		   "ring_pages = 65536; sync_interval = 86400L;\n"
		   "stats_interval = +7;\n",
		   path, sizeof(path));
	run_conf(&r, path, NULL);
	if (r.rc)
		fail_msg("%s", r.err);
	assert_int_equal(r.o.max_open_files, 65536);
	assert_int_equal(r.o.rotate_keep, 16);
	assert_int_equal(r.o.ring_pages, 65536);
	assert_int_equal(r.o.sync_interval, 86400);
	assert_int_equal(r.o.stats_interval, 7);
	done(&r);
}

static void test_unknown_keys(void **state)
{
	char path[PATH_MAX];
	struct run r;

	(void)state;
	write_conf("unknown.conf",
		   "ring_pages = 8;\nfoo = 1;\nbar = { baz = 2; };\n"
		   "plugins = ( { name = \"p\"; enabled = false; own_key = 5; } );\n",
		   path, sizeof(path));
	run_conf(&r, path, NULL);
	assert_int_equal(r.rc, 0);
	assert_contains(r.err, "unknown.conf:2: warning: \"foo\": unknown setting ignored");
	assert_contains(r.err, "unknown.conf:3: warning: \"bar\": unknown setting ignored");
	/* plugin-specific keys belong to the plugin: no warning */
	assert_null(strstr(r.err, "own_key"));
	assert_int_equal(r.o.ring_pages, 8);
	assert_int_equal(r.o.nr_features, 0);
	done(&r);
}

static void test_include_relative(void **state)
{
	char path[PATH_MAX], inc[PATH_MAX], sub[PATH_MAX], cwd[PATH_MAX];
	struct run r;

	(void)state;
	snprintf(sub, sizeof(sub), "%s/inc", tmpdir);
	assert_int_equal(mkdir(sub, 0755), 0);
	write_conf("inc/extra.conf", "ring_pages = 256;\n", inc, sizeof(inc));
	write_conf("inc/broken.conf", "a = 1;\nb = ;\n", inc, sizeof(inc));
	write_conf("inc/main.conf", "@include \"extra.conf\"\nstats_interval = 9;\n", path,
		   sizeof(path));
	/* from another working directory */
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir("/"), 0);
	run_conf(&r, path, NULL);
	assert_int_equal(chdir(cwd), 0);
	if (r.rc)
		fail_msg("include failed:\n%s", r.err);
	assert_int_equal(r.o.ring_pages, 256);
	assert_int_equal(r.o.stats_interval, 9);
	done(&r);

	write_conf("inc/main3.conf", "stats_interval = 9;\n@include \"missing.conf\"\n", path,
		   sizeof(path));
	run_conf(&r, path, NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "main3.conf:2: cannot open include file - @include paths are relative to the including config file's directory");
	done(&r);

	write_conf("inc/main2.conf", "stats_interval = 9;\n@include \"broken.conf\"\n", path,
		   sizeof(path));
	run_conf(&r, path, NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "broken.conf:2: syntax error");
	done(&r);
}

static void test_values_applied(void **state)
{
	char path[PATH_MAX];
	struct run r;

	(void)state;
	write_conf("vals.conf",
		   "events = [ \"A:1000\", \"B:2000:0x1\" ];\nimage = \"/x,/y\";\nverbose = [ \"sfile\", \"ext\" ];\n"
		   "vmlinux = \"/boot/v\";\nproc_root = \"/p\";\ncpu_type = \"timer\";\nlog_file = \"/l\";\n"
		   "sync_interval = 3;\nmax_open_files = 64;\ndaemonize = true;\nappend = true;\n"
		   "no_vmlinux = false;\nseparate = [ \"thread\", \"cpu\" ];\n",
		   path, sizeof(path));
	run_conf(&r, path, NULL);
	if (r.rc)
		fail_msg("%s", r.err);
	assert_string_equal(r.err, "");
	assert_string_equal(r.o.events_spec, "A:1000,B:2000:0x1");
	assert_string_equal(r.o.image_filter[0], "/x");
	assert_string_equal(r.o.image_filter[1], "/y");
	assert_int_equal(r.o.verbose, OP_VERBOSE_SFILE | OP_VERBOSE_EXT);
	assert_string_equal(r.o.vmlinux, "/boot/v");
	assert_string_equal(r.o.proc_root, "/p");
	assert_string_equal(r.o.cpu_type, "timer");
	assert_string_equal(r.o.log_file, "/l");
	assert_int_equal(r.o.sync_interval, 3);
	assert_int_equal(r.o.max_open_files, 64);
	assert_true(r.o.daemonize);
	assert_true(r.o.append);
	assert_int_equal(r.o.separate, (1u << 2) | (1u << 3));
	done(&r);
}

/* both plugin forms; scoped getters with 64-bit values and type mismatches */
static void test_plugin_getters(void **state)
{
	char path[PATH_MAX], why[256];
	const char *s = NULL;
	int64_t v = 0;
	bool b = false;
	struct run r;

	(void)state;
	write_conf("list.conf",
		   "plugins = (\n  { name = \"ibs\"; args = \"op\"; rate = 5000000000L; small = 7;\n"
		   "    on = true; label = \"x\"; nested = { depth = 3; }; },\n"
		   "  { name = \"off\"; enabled = false; k = 1; }\n);\n",
		   path, sizeof(path));
	run_conf(&r, path, NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.nr_features, 1);
	assert_string_equal(r.o.features[0].name, "ibs");
	assert_string_equal(r.o.features[0].args, "op");
	assert_contains(r.o.features[0].origin, "list.conf:2");

	assert_int_equal(conf_plugin_int64(r.o.config, "ibs", "rate", &v, why, sizeof(why)), 0);
	assert_int_equal(v, 5000000000LL);
	assert_int_equal(conf_plugin_int64(r.o.config, "ibs", "small", &v, why, sizeof(why)), 0);
	assert_int_equal(v, 7);
	assert_int_equal(conf_plugin_int64(r.o.config, "ibs", "nested.depth", &v, why, sizeof(why)), 0);
	assert_int_equal(v, 3);
	assert_int_equal(conf_plugin_bool(r.o.config, "ibs", "on", &b, why, sizeof(why)), 0);
	assert_true(b);
	assert_int_equal(conf_plugin_string(r.o.config, "ibs", "label", &s, why, sizeof(why)), 0);
	assert_string_equal(s, "x");
	/* a disabled entry's settings are still its own */
	assert_int_equal(conf_plugin_int64(r.o.config, "off", "k", &v, why, sizeof(why)), 0);
	assert_int_equal(v, 1);
	/* absent */
	assert_int_equal(conf_plugin_int64(r.o.config, "ibs", "nope", &v, why, sizeof(why)), -ENOENT);
	assert_int_equal(conf_plugin_int64(r.o.config, "other", "rate", &v, why, sizeof(why)), -ENOENT);
	assert_int_equal(conf_plugin_int64(NULL, "ibs", "rate", &v, why, sizeof(why)), -ENOENT);
	/* mismatch */
	v = 99;
	assert_int_equal(conf_plugin_int64(r.o.config, "ibs", "label", &v, why, sizeof(why)), -EINVAL);
	assert_int_equal(v, 99);
	assert_contains(why, "list.conf:3: plugins.ibs.label: expected an integer, found a string");
	assert_int_equal(conf_plugin_string(r.o.config, "ibs", "rate", &s, why, sizeof(why)), -EINVAL);
	assert_contains(why, "plugins.ibs.rate: expected a string, found a 64-bit integer");
	assert_int_equal(conf_plugin_bool(r.o.config, "ibs", "small", &b, why, sizeof(why)), -EINVAL);
	done(&r);

	/* integers libconfig 1.5 would cut to 32 bits reach the plugin whole */
	write_conf("wide.conf",
		   "plugins = { timer = { frequency = 4294967396; mask = 0xFFFFFFFF; };\n"
		   "  a = { n = 4294967297; }; b = { n = 1; }; c = { n = -4294967297; };\n"
		   "  d = {\n    huge = 99999999999999999999; }; };\n",
		   path, sizeof(path));
	run_conf(&r, path, NULL);
	if (r.rc)
		fail_msg("%s", r.err);
	assert_int_equal(conf_plugin_int64(r.o.config, "timer", "frequency", &v, why, sizeof(why)), 0);
	assert_int_equal(v, 4294967396LL);
	assert_int_equal(conf_plugin_int64(r.o.config, "timer", "mask", &v, why, sizeof(why)), 0);
	assert_int_equal(v, 0xFFFFFFFFLL);
	assert_int_equal(conf_plugin_int64(r.o.config, "a", "n", &v, why, sizeof(why)), 0);
	assert_int_equal(v, 4294967297LL);
	assert_int_equal(conf_plugin_int64(r.o.config, "b", "n", &v, why, sizeof(why)), 0);
	assert_int_equal(v, 1);
	assert_int_equal(conf_plugin_int64(r.o.config, "c", "n", &v, why, sizeof(why)), 0);
	assert_int_equal(v, -4294967297LL);
	v = 99;
	assert_int_equal(conf_plugin_int64(r.o.config, "d", "huge", &v, why, sizeof(why)), -EINVAL);
	assert_int_equal(v, 99);
	assert_contains(why, "wide.conf:4: plugins.d.huge: 99999999999999999999 does not fit a 64-bit "
			     "integer");
	done(&r);

	write_conf("group.conf",
		   "plugins = {\n  ibs = { args = \"fetch\"; rate = 12; };\n  cg = { enabled = false; };\n"
		   "  timer = { };\n};\n",
		   path, sizeof(path));
	run_conf(&r, path, "--ext-feature=timer:cmd");
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.nr_features, 2);
	assert_string_equal(r.o.features[0].name, "ibs");
	assert_string_equal(r.o.features[0].args, "fetch");
	assert_string_equal(r.o.features[1].name, "timer");
	assert_string_equal(r.o.features[1].args, "cmd");
	assert_string_equal(r.o.features[1].origin, "command line");
	assert_int_equal(conf_plugin_int64(r.o.config, "ibs", "rate", &v, why, sizeof(why)), 0);
	assert_int_equal(v, 12);
	assert_int_equal(conf_plugin_int64(r.o.config, "cg", "rate", &v, why, sizeof(why)), -ENOENT);
	done(&r);
}

/* enabled = false turns a plugin off in the list form as in the group form */
static void test_plugin_disabled(void **state)
{
	static const struct {
		const char *text;
		const char *off, *on; /* a plugin it disables, one it leaves */
	} t[] = {
		{ "plugins = ( { name = \"kernel\"; enabled = false; } );\n", "kernel", "timer" },
		{ "plugins = { kernel = { enabled = false; }; };\n", "kernel", "timer" },
		{ "plugins = ( { name = \"amd64\"; enabled = false; },\n"
		  "  { name = \"kernel\"; enabled = true; } );\n", "amd64", "kernel" },
		{ "plugins = { intel = { enabled = false; }; kernel = { args = \"\"; }; };\n", "intel",
		  "kernel" },
		{ "plugins = ( { name = \"timer\"; } );\n", NULL, "timer" },
		{ "ring_pages = 64;\n", NULL, "kernel" },
	};
	char path[PATH_MAX];
	struct run r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		write_conf("enabled.conf", t[i].text, path, sizeof(path));
		run_conf(&r, path, NULL);
		if (r.rc)
			fail_msg("%s: %s", t[i].text, r.err);
		if (t[i].off && !options_plugin_disabled(&r.o, t[i].off))
			fail_msg("%s leaves %s enabled", t[i].text, t[i].off);
		if (options_plugin_disabled(&r.o, t[i].on))
			fail_msg("%s disables %s", t[i].text, t[i].on);
		done(&r);
	}
	/* no config file: nothing is disabled */
	memset(&r, 0, sizeof(r));
	assert_false(options_plugin_disabled(&r.o, "kernel"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example_conf),
		cmocka_unit_test(test_syntax_error),
		cmocka_unit_test(test_type_and_range_errors),
		cmocka_unit_test(test_wide_integers),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_include_relative),
		cmocka_unit_test(test_values_applied),
		cmocka_unit_test(test_plugin_getters),
		cmocka_unit_test(test_plugin_disabled),
	};

	return cmocka_run_group_tests_name("config", tests, setup, teardown);
}
