/*
 * test_options.c - oprofiled's command line (core/options.c): defaults,
 * every option, the errors for bad values and bad mode combinations,
 * precedence over the config file, and --check-config's printout.
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
#include <unistd.h>

#include "op_mangle.h"
#include "options.h"

#pragma GCC diagnostic ignored "-Wformat-truncation"

#define OPT_FIXTURE_TMP "opt-tmp"
#include "options_fixture.h"

#define MAXARGS 32

/* parse a NULL-terminated argument list (argv[0] added) */
static void parse(struct run *r, ...)
{
	char *argv[MAXARGS];
	int argc = 0;
	FILE *f;
	va_list ap;

	argv[argc++] = "oprofiled";
	va_start(ap, r);
	while ((argv[argc] = va_arg(ap, char *)) != NULL)
		argc++;
	va_end(ap);
	f = open_memstream(&r->err, &r->err_len);
	assert_non_null(f);
	r->rc = options_parse_f(&r->o, argc, argv, f);
	fclose(f);
}

static void test_defaults_launch(void **state)
{
	struct run r;
	char cwd[PATH_MAX], want[PATH_MAX + 32];

	(void)state;
	parse(&r, "--config=", "--", "/bin/true", "-x", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.mode, OP_MODE_LAUNCH);
	assert_non_null(r.o.command);
	assert_string_equal(r.o.command[0], "/bin/true");
	assert_string_equal(r.o.command[1], "-x");
	assert_null(r.o.command[2]);
	assert_int_equal(r.o.separate, OP_SEP_LIB | OP_SEP_KERNEL);
	assert_int_equal(r.o.ring_pages, 128);
	assert_int_equal(r.o.sync_interval, 10);
	assert_int_equal(r.o.stats_interval, 0);
	assert_int_equal(r.o.max_open_files, OP_DEFAULT_MAX_OPEN_FILES);
	assert_int_equal(r.o.verbose, 0);
	assert_int_equal(r.o.nr_features, 0);
	assert_null(r.o.events_spec);
	assert_null(r.o.config);
	assert_null(r.o.config_file);
	assert_string_equal(r.o.plugin_dir, "/env/plugins");
	assert_string_equal(r.o.proc_root, "/proc");
	assert_non_null(getcwd(cwd, sizeof(cwd)));
	snprintf(want, sizeof(want), "%s/oprofile_data", cwd);
	assert_string_equal(r.o.session_dir, want);
	snprintf(want, sizeof(want), "%s/oprofile_data/samples/oprofiled.log", cwd);
	assert_string_equal(r.o.log_file, want);
	assert_string_equal(r.err, "");
	done(&r);

	/* without "--" the first non-option starts the command; its options stay its own */
	parse(&r, "--config=", "--separate=none", "ls", "--separate=bogus", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.separate, 0);
	assert_string_equal(r.o.command[1], "--separate=bogus");
	done(&r);
}

static void test_modes(void **state)
{
	struct run r;

	(void)state;
	parse(&r, "--config=", "--system-wide", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.mode, OP_MODE_SYSTEM);
	assert_string_equal(r.o.session_dir, "/var/lib/oprofile");
	done(&r);

	parse(&r, "--config=", "-a", "--session-dir=/tmp/s", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.mode, OP_MODE_SYSTEM);
	assert_string_equal(r.o.session_dir, "/tmp/s");
	assert_string_equal(r.o.log_file, "/tmp/s/samples/oprofiled.log");
	done(&r);

	parse(&r, "--config=", "--pid=12,34", "-p", "56", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.mode, OP_MODE_PID);
	assert_int_equal(r.o.nr_pids, 3);
	assert_int_equal(r.o.pids[0], 12);
	assert_int_equal(r.o.pids[1], 34);
	assert_int_equal(r.o.pids[2], 56);
	done(&r);

	parse(&r, "--config=", "--replay=rec.perf", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.mode, OP_MODE_REPLAY);
	assert_string_equal(r.o.replay_file, "rec.perf");
	done(&r);

	/* nothing to profile */
	parse(&r, "--config=", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "oprofiled: nothing to profile: give a command (oprofiled [OPTIONS] -- COMMAND [ARGS]), --pid=PID or --system-wide");
	done(&r);
	parse(&r, "--config=", "--", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "nothing to profile");
	done(&r);

	/* ... except for the informational modes */
	parse(&r, "--config=", "--list-plugins", NULL);
	assert_int_equal(r.rc, 0);
	assert_true(r.o.list_plugins);
	done(&r);
	parse(&r, "--config=", "--check-config", NULL);
	assert_int_equal(r.rc, 0);
	assert_true(r.o.check_config);
	done(&r);

	/* conflicting modes */
	parse(&r, "--config=", "--pid=1", "--", "ls", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "choose one of: a command after '--', --pid, --system-wide, --replay");
	done(&r);
	parse(&r, "--config=", "--pid=1", "--system-wide", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "choose one of");
	done(&r);
	parse(&r, "--config=", "--replay=x", "--", "ls", NULL);
	assert_int_equal(r.rc, -EINVAL);
	done(&r);
	parse(&r, "--config=", "--record=a", "--replay=b", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "--record and --replay together");
	done(&r);
	parse(&r, "--config=", "--vmlinux=/v", "--no-vmlinux", "-a", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "--vmlinux and --no-vmlinux together");
	done(&r);
}

static void test_bad_pids(void **state)
{
	static const char *const bad[] = {
		"--pid=abc", "--pid=0", "--pid=-5", "--pid=99999999999999999999", "--pid=12abc",
		"--pid=1,,2", "--pid=", "--pid=1,", "--pid= 5", "--pid=+5", "--pid=4194305",
	};
	struct run r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		parse(&r, "--config=", bad[i], NULL);
		if (r.rc != -EINVAL)
			fail_msg("%s accepted", bad[i]);
		assert_contains(r.err, "--pid=");
		assert_contains(r.err, "is not a process id - expected numbers 1..4194304");
		assert_int_equal(r.o.nr_pids, 0);
		done(&r);
	}
	parse(&r, "--config=", "--pid=4194304", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.pids[0], 4194304);
	done(&r);
	parse(&r, "--config=", "-p", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "option -p needs a value");
	done(&r);
}

/* the values themselves: test_optval.c */
static void test_separate_values(void **state)
{
	struct run r;

	(void)state;
	parse(&r, "--config=", "--separate=lib,bogus", "-a", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "unknown --separate value \"bogus\" - allowed: none,lib,kernel,thread,cpu,all");
	done(&r);
	parse(&r, "--config=", "--separate=thread,cpu", "-a", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.separate, OP_SEP_THREAD | OP_SEP_CPU);
	done(&r);
}

static void test_verbose_values(void **state)
{
	struct run r;

	(void)state;
	parse(&r, "--config=", "--verbose=sfile,ext", "-a", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.verbose, OP_VERBOSE_SFILE | OP_VERBOSE_EXT);
	done(&r);
	parse(&r, "--config=", "--verbose", "-a", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.verbose, OP_VERBOSE_ALL);
	done(&r);
	parse(&r, "--config=", "--verbose=all", "-a", NULL);
	assert_int_equal(r.o.verbose, OP_VERBOSE_ALL);
	done(&r);
	parse(&r, "--config=", "--verbose=arcs,samples,module,misc", "-a", NULL);
	assert_int_equal(r.o.verbose,
			 OP_VERBOSE_ARCS | OP_VERBOSE_SAMPLES | OP_VERBOSE_MODULE | OP_VERBOSE_MISC);
	done(&r);
	parse(&r, "--config=", "--verbose=loud", "-a", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "unknown --verbose value \"loud\" - allowed: all,sfile,arcs,samples,module,misc,ext");
	done(&r);
}

static void test_features(void **state)
{
	struct run r;

	(void)state;
	parse(&r, "--config=", "--ext-feature=ibs:fetch,op:x=1", "--ext-feature=timer", "-a", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.nr_features, 2);
	assert_string_equal(r.o.features[0].name, "ibs");
	assert_string_equal(r.o.features[0].args, "fetch,op:x=1");
	assert_string_equal(r.o.features[0].origin, "command line");
	assert_string_equal(r.o.features[1].name, "timer");
	assert_string_equal(r.o.features[1].args, "");
	done(&r);
	parse(&r, "--config=", "--ext-feature=ibs:", "-a", NULL);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.o.features[0].args, "");
	done(&r);
	parse(&r, "--config=", "--ext-feature=:x", "-a", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "--ext-feature=:x: empty plugin name - use NAME[:ARGS]");
	done(&r);
	parse(&r, "--config=", "--ext-feature=ibs", "--ext-feature=ibs:a", "-a", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "--ext-feature=ibs given twice");
	done(&r);
	/* names the loader would refuse only at start */
	parse(&r, "--config=", "--ext-feature=../timer:freq=100", "-a", "--check-config", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "--ext-feature=../timer:freq=100: plugin name \"../timer\" is not valid - "
			       "expected 1..64 of [A-Za-z0-9_-]");
	done(&r);
}

static void test_other_options(void **state)
{
	struct run r;

	(void)state;
	parse(&r, "--config=", "--events=CPU_CLK_UNHALTED:100000:0:1:1,INST:5000",
	      "--image=/bin/a,/lib/b", "--vmlinux=/boot/vmlinux", "--append", "--ring-pages=64",
	      "--record=out.rec", "--proc-root=/fake", "--cpu-type=timer", "--daemonize",
	      "--stats-interval=30", "--sync-interval=5", "--max-open-files=100",
	      "--log-file=/tmp/l.log", "--plugin-dir=/cmd/plugins", "--session-dir=rel/sess", "-a",
	      NULL);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.o.events_spec, "CPU_CLK_UNHALTED:100000:0:1:1,INST:5000");
	assert_non_null(r.o.image_filter);
	assert_string_equal(r.o.image_filter[0], "/bin/a");
	assert_string_equal(r.o.image_filter[1], "/lib/b");
	assert_null(r.o.image_filter[2]);
	assert_string_equal(r.o.vmlinux, "/boot/vmlinux");
	assert_false(r.o.no_vmlinux);
	assert_true(r.o.append);
	assert_int_equal(r.o.ring_pages, 64);
	assert_string_equal(r.o.record_file, "out.rec");
	assert_string_equal(r.o.proc_root, "/fake");
	assert_string_equal(r.o.cpu_type, "timer");
	assert_true(r.o.daemonize);
	assert_int_equal(r.o.stats_interval, 30);
	assert_int_equal(r.o.sync_interval, 5);
	assert_int_equal(r.o.max_open_files, 100);
	assert_string_equal(r.o.log_file, "/tmp/l.log");
	assert_string_equal(r.o.plugin_dir, "/cmd/plugins");
	assert_int_equal(r.o.session_dir[0], '/');
	assert_non_null(strstr(r.o.session_dir, "/rel/sess"));
	done(&r);

	parse(&r, "--config=", "--no-vmlinux", "-a", NULL);
	assert_true(r.o.no_vmlinux);
	done(&r);
	parse(&r, "--config=", "--image=", "-a", NULL);
	assert_int_equal(r.rc, 0);
	assert_null(r.o.image_filter);
	done(&r);
	parse(&r, "--config=", "--image=,/only,", "-a", NULL);
	assert_string_equal(r.o.image_filter[0], "/only");
	assert_null(r.o.image_filter[1]);
	done(&r);

	parse(&r, "--config=", "--ring-pages=3", "-a", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "--ring-pages=3: not a power of two");
	done(&r);
	parse(&r, "--config=", "--ring-pages=0", "-a", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "--ring-pages=0: expected a whole number 1..65536");
	done(&r);
	/* the daemon refused it only at start (perf: "between 1 and 65536") */
	parse(&r, "--config=", "--ring-pages=131072", "-a", "--check-config", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "--ring-pages=131072: expected a whole number 1..65536");
	done(&r);
	parse(&r, "--config=", "--stats-interval=soon", "-a", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "--stats-interval=soon: expected a whole number");
	done(&r);
	parse(&r, "--config=", "--bogus-option", "-a", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "unknown option --bogus-option - see oprofiled --help");
	done(&r);
	parse(&r, "--config=", "--session-dir", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "needs a value");
	done(&r);
	parse(&r, "--config=", "--session-dir=", "-a", NULL);
	assert_int_equal(r.rc, -EINVAL);
	done(&r);
}

static void test_help(void **state)
{
	struct run r;
	FILE *saved = stdout;
	char *out = NULL;
	size_t len = 0;

	(void)state;
	stdout = open_memstream(&out, &len);
	parse(&r, "--help", NULL);
	fclose(stdout);
	stdout = saved;
	assert_int_equal(r.rc, 1);
	assert_contains(out, "Usage: oprofiled");
	assert_contains(out, "--ext-feature=NAME[:ARGS]");
	free(out);
	done(&r);
}

/* command line > config file > defaults; plugin dir: option > config > env > default */
static void test_precedence(void **state)
{
	char conf[PATH_MAX], arg[PATH_MAX + 16];
	struct run r;

	(void)state;
	write_conf("prec.conf",
		   "session_dir = \"/cfg/session\";\nseparate = \"thread\";\nplugin_dir = \"/cfg/plugins\";\n"
		   "ring_pages = 32;\nplugins = ( { name = \"ibs\"; args = \"cfg-args\"; },\n"
		   "  { name = \"timer\"; } );\n",
		   conf, sizeof(conf));
	snprintf(arg, sizeof(arg), "--config=%s", conf);

	parse(&r, arg, "-a", NULL);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.o.config_file, conf);
	assert_non_null(r.o.config);
	assert_string_equal(r.o.session_dir, "/cfg/session");
	assert_int_equal(r.o.separate, OP_SEP_THREAD);
	assert_string_equal(r.o.plugin_dir, "/cfg/plugins");
	assert_int_equal(r.o.ring_pages, 32);
	assert_int_equal(r.o.nr_features, 2);
	assert_string_equal(r.o.features[0].args, "cfg-args");
	assert_contains(r.o.features[0].origin, "prec.conf:5");
	assert_contains(r.o.features[1].origin, "prec.conf:6");
	done(&r);

	parse(&r, arg, "--session-dir=/cmd/s", "--separate=cpu", "--plugin-dir=/cmd/p",
	      "--ext-feature=ibs:cmd-args", "--ext-feature=callgraph", "-a", NULL);
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.o.session_dir, "/cmd/s");
	assert_int_equal(r.o.separate, OP_SEP_CPU);
	assert_string_equal(r.o.plugin_dir, "/cmd/p");
	assert_int_equal(r.o.ring_pages, 32);
	assert_int_equal(r.o.nr_features, 3);
	assert_string_equal(r.o.features[0].name, "ibs");
	assert_string_equal(r.o.features[0].args, "cmd-args");
	assert_string_equal(r.o.features[0].origin, "command line");
	assert_string_equal(r.o.features[2].name, "callgraph");
	done(&r);

	/* env beats the configure default, loses to the config file */
	write_conf("empty.conf", "", conf, sizeof(conf));
	snprintf(arg, sizeof(arg), "--config=%s", conf);
	parse(&r, arg, "-a", NULL);
	assert_string_equal(r.o.plugin_dir, "/env/plugins");
	done(&r);
	unsetenv("OP_PLUGIN_DIR");
	parse(&r, arg, "-a", NULL);
	assert_string_equal(r.o.plugin_dir, OP_PLUGINDIR);
	done(&r);
	setenv("OP_PLUGIN_DIR", "/env/plugins", 1);

	/* a missing --config file is an error naming it */
	parse(&r, "--config=/nonexistent/op.conf", "-a", NULL);
	assert_int_equal(r.rc, -EINVAL);
	assert_contains(r.err, "cannot read config file /nonexistent/op.conf: No such file or directory");
	done(&r);

	/* system_wide in the file, a command on the command line wins */
	write_conf("sys.conf", "system_wide = true;\n", conf, sizeof(conf));
	snprintf(arg, sizeof(arg), "--config=%s", conf);
	parse(&r, arg, NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.mode, OP_MODE_SYSTEM);
	done(&r);
	parse(&r, arg, "--", "ls", NULL);
	assert_int_equal(r.rc, 0);
	assert_int_equal(r.o.mode, OP_MODE_LAUNCH);
	done(&r);
}

/* --check-config output is a config file that gives the same configuration */
static void test_print_roundtrip(void **state)
{
	char conf[PATH_MAX], arg[PATH_MAX + 16], *text = NULL;
	struct run a, b;
	size_t len = 0;
	FILE *f;

	(void)state;
	parse(&a, "--config=", "--session-dir=/s \"q\"", "--separate=thread,kernel",
	      "--verbose=sfile,misc", "--ring-pages=16", "--image=/a,/b", "--stats-interval=7",
	      "--ext-feature=ibs:x\\y\"z", "--ext-feature=timer", "--proc-root=/p",
	      "--cpu-type=timer", "--no-vmlinux", "--append", "--daemonize", "-a", NULL);
	assert_int_equal(a.rc, 0);
	f = open_memstream(&text, &len);
	options_print(&a.o, f);
	fclose(f);
	assert_contains(text, "# mode: system-wide\n");
	assert_contains(text, "separate = \"lib,kernel,thread\";\n");
	assert_contains(text, "verbose = \"sfile,misc\";\n");
	assert_contains(text, "session_dir = \"/s \\\"q\\\"\";\n");
	assert_contains(text, "  # from command line\n  { name = \"ibs\"; args = \"x\\\\y\\\"z\"; }");

	write_conf("print.conf", text, conf, sizeof(conf));
	snprintf(arg, sizeof(arg), "--config=%s", conf);
	parse(&b, arg, NULL);
	if (b.rc)
		fail_msg("re-reading --check-config output failed:\n%s\n%s", b.err, text);
	assert_string_equal(b.err, "");
	assert_int_equal(b.o.mode, OP_MODE_SYSTEM);
	assert_string_equal(b.o.session_dir, a.o.session_dir);
	assert_int_equal(b.o.separate, a.o.separate);
	assert_int_equal(b.o.verbose, a.o.verbose);
	assert_int_equal(b.o.ring_pages, 16);
	assert_string_equal(b.o.image_filter[1], "/b");
	assert_int_equal(b.o.stats_interval, 7);
	assert_int_equal(b.o.nr_features, 2);
	assert_string_equal(b.o.features[0].args, "x\\y\"z");
	assert_string_equal(b.o.features[1].name, "timer");
	assert_string_equal(b.o.proc_root, "/p");
	assert_string_equal(b.o.cpu_type, "timer");
	assert_true(b.o.no_vmlinux);
	assert_true(b.o.append);
	assert_true(b.o.daemonize);
	assert_string_equal(b.o.log_file, a.o.log_file);
	assert_string_equal(b.o.plugin_dir, a.o.plugin_dir);
	free(text);
	done(&a);
	done(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_launch),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_bad_pids),
		cmocka_unit_test(test_separate_values),
		cmocka_unit_test(test_verbose_values),
		cmocka_unit_test(test_features),
		cmocka_unit_test(test_other_options),
		cmocka_unit_test(test_help),
		cmocka_unit_test(test_precedence),
		cmocka_unit_test(test_print_roundtrip),
	};

	return cmocka_run_group_tests_name("options", tests, setup, teardown);
}
