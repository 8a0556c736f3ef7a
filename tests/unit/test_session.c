/*
 * test_session.c - the session directory: creation, refusal of symlinks and
 * non-directories, the lock against a second daemon (nothing touched),
 * samples/current rotation and --append, log reopening, cpu speed.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oprofile_sdk.h"
#include "session.h"

static char scratch[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	snprintf(scratch, sizeof(scratch), "tmp-session-XXXXXX");
	return mkdtemp(scratch) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return session_rm_tree(AT_FDCWD, scratch);
}

static void path(char *buf, const char *rel)
{
	snprintf(buf, PATH_MAX, "%.2000s/%.2000s", scratch, rel);
}

static bool exists(const char *rel)
{
	char p[PATH_MAX];
	struct stat st;

	path(p, rel);
	return lstat(p, &st) == 0;
}

static void touch(const char *rel)
{
	char p[PATH_MAX];
	int fd;

	path(p, rel);
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	close(fd);
}

static void read_file(const char *rel, char *buf, size_t len)
{
	char p[PATH_MAX];
	FILE *f;
	size_t n;

	path(p, rel);
	f = fopen(p, "r");
	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

static void test_create_lock_rotate(void **state)
{
	struct session s, s2;
	char dir[PATH_MAX], err[512], buf[4096], pid[32];
	struct stat st;

	(void)state;
	path(dir, "a/b/session");
	assert_int_equal(session_open(&s, dir, false, NULL, err, sizeof(err)), 0);
	assert_int_equal(stat(dir, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	{
		mode_t mask = umask(0);

		umask(mask);
		assert_int_equal(st.st_mode & 0777, 0755 & ~mask);
	}
	assert_true(s.dir[0] == '/');
	assert_true(exists("a/b/session/abi"));
	assert_true(exists("a/b/session/samples/current"));
	assert_true(exists("a/b/session/samples/oprofiled.log"));
	read_file("a/b/session/abi", buf, sizeof(buf));
	assert_non_null(strstr(buf, "sizeof_struct_opd_header 72"));
	read_file("a/b/session/lock", buf, sizeof(buf));
	snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	assert_string_equal(buf, pid);
	touch("a/b/session/samples/current/marker");

	/* a second daemon: refused, nothing touched */
	err[0] = 0;
	assert_int_equal(session_open(&s2, dir, false, NULL, err, sizeof(err)), -EBUSY);
	snprintf(buf, sizeof(buf), "another oprofiled (pid %ld) is using ", (long)getpid());
	assert_non_null(strstr(err, buf));
	assert_true(exists("a/b/session/samples/current/marker"));
	assert_false(exists("a/b/session/samples/previous"));
	assert_true(exists("a/b/session/lock"));

	fprintf(s.log, "first line\n");
	session_close(&s);
	assert_false(exists("a/b/session/lock"));

	/* --append keeps current */
	assert_int_equal(session_open(&s, dir, true, NULL, err, sizeof(err)), 0);
	assert_true(exists("a/b/session/samples/current/marker"));
	session_close(&s);

	/* a failed start (closed before session_commit) keeps current and previous */
	assert_int_equal(mkdir(strcat(strcpy(buf, dir), "/samples/previous"), 0755), 0);
	touch("a/b/session/samples/previous/old");
	assert_int_equal(session_open(&s, dir, false, NULL, err, sizeof(err)), 0);
	assert_false(exists("a/b/session/samples/current/marker"));
	assert_true(exists("a/b/session/samples/" SESSION_STAGED "/marker"));
	touch("a/b/session/samples/current/new"); /* e.g. the kernel plugin's snapshot */
	session_close(&s);
	assert_true(exists("a/b/session/samples/current/marker"));
	assert_false(exists("a/b/session/samples/current/new"));
	assert_true(exists("a/b/session/samples/previous/old"));
	assert_false(exists("a/b/session/samples/" SESSION_STAGED));

	/* a start killed before commit: the next open puts the staged current back */
	assert_int_equal(rename(strcat(strcpy(buf, dir), "/samples/current"),
				strcat(strcpy(buf + 2048, dir), "/samples/" SESSION_STAGED)), 0);
	assert_int_equal(session_open(&s, dir, true, NULL, err, sizeof(err)), 0);
	assert_true(exists("a/b/session/samples/current/marker"));
	assert_false(exists("a/b/session/samples/" SESSION_STAGED));
	session_close(&s);

	/* a started session moves current to previous (replacing an older previous) */
	assert_int_equal(session_open(&s, dir, false, NULL, err, sizeof(err)), 0);
	assert_int_equal(session_commit(&s), 0);
	assert_true(exists("a/b/session/samples/previous/marker"));
	assert_false(exists("a/b/session/samples/previous/old"));
	assert_false(exists("a/b/session/samples/current/marker"));
	read_file("a/b/session/samples/oprofiled.log", buf, sizeof(buf));
	assert_non_null(strstr(buf, "first line"));
	session_close(&s);
}

static void test_refusals(void **state)
{
	struct session s;
	char dir[PATH_MAX], link[PATH_MAX], err[512];

	(void)state;
	path(dir, "real");
	assert_int_equal(mkdir(dir, 0755), 0);
	path(link, "link");
	assert_int_equal(symlink("real", link), 0);
	assert_int_equal(session_open(&s, link, false, NULL, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "symbolic link"));
	assert_false(exists("real/lock"));
	touch("file");
	path(dir, "file");
	assert_int_equal(session_open(&s, dir, false, NULL, err, sizeof(err)), -ENOTDIR);
	assert_non_null(strstr(err, "not a directory"));
	assert_int_equal(session_open(&s, "", false, NULL, err, sizeof(err)), -EINVAL);
	if (geteuid() != 0) {
		path(dir, "ro");
		assert_int_equal(mkdir(dir, 0555), 0);
		assert_int_equal(session_open(&s, dir, false, NULL, err, sizeof(err)), -EACCES);
		assert_non_null(strstr(err, "not writable"));
	}
	/* samples/current planted as a symlink: refused, the target untouched */
	path(dir, "planted");
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(mkdir(strcat(dir, "/samples"), 0755), 0);
	assert_int_equal(mkdir(strcat(strcpy(link, scratch), "/target"), 0755), 0);
	assert_int_equal(symlink(link, strcat(dir, "/current")), 0);
	path(dir, "planted");
	assert_true(session_open(&s, dir, true, NULL, err, sizeof(err)) < 0);
	assert_false(exists("target/abi"));
	assert_false(exists("planted/lock"));
}

/* rotation removes samples/previous without following symlinks inside it */
static void test_rotation_no_follow(void **state)
{
	struct session s;
	char dir[PATH_MAX], p[PATH_MAX], err[512];

	(void)state;
	path(dir, "rot");
	assert_int_equal(session_open(&s, dir, false, NULL, err, sizeof(err)), 0);
	session_close(&s);
	assert_int_equal(mkdir(strcat(strcpy(p, scratch), "/keep"), 0755), 0);
	touch("keep/precious");
	path(p, "keep");
	assert_int_equal(symlink(p, strcat(strcpy(dir, scratch), "/rot/samples/current/link")), 0);
	path(dir, "rot");
	assert_int_equal(session_open(&s, dir, false, NULL, err, sizeof(err)), 0); /* -> previous */
	assert_int_equal(session_commit(&s), 0);
	session_close(&s);
	assert_true(exists("rot/samples/previous/link"));
	assert_int_equal(session_open(&s, dir, false, NULL, err, sizeof(err)), 0); /* removes it */
	assert_int_equal(session_commit(&s), 0);
	session_close(&s);
	assert_false(exists("rot/samples/previous/link"));
	assert_true(exists("keep/precious"));
}

static void test_log_reopen(void **state)
{
	struct session s;
	char dir[PATH_MAX], a[PATH_MAX], b[PATH_MAX], err[512], buf[4096];
	FILE *log;

	(void)state;
	path(dir, "logs");
	assert_int_equal(session_open(&s, dir, false, NULL, err, sizeof(err)), 0);
	log = s.log;
	fprintf(log, "before rotate\n");
	path(a, "logs/samples/oprofiled.log");
	path(b, "logs/samples/oprofiled.log.1");
	assert_int_equal(rename(a, b), 0);
	assert_int_equal(session_reopen_log(&s), 0);
	assert_ptr_equal(s.log, log); /* same FILE: holders stay valid */
	fprintf(s.log, "after rotate\n");
	fflush(s.log);
	read_file("logs/samples/oprofiled.log", buf, sizeof(buf));
	assert_string_equal(buf, "after rotate\n");
	read_file("logs/samples/oprofiled.log.1", buf, sizeof(buf));
	assert_string_equal(buf, "before rotate\n");
	/* a reset removed samples/current: SIGHUP recreates it behind the same fd */
	{
		int fd = s.current_fd;

		path(a, "logs/samples/current");
		assert_int_equal(session_rm_tree(AT_FDCWD, a), 0);
		assert_int_equal(session_reopen_current(&s), 0);
		assert_int_equal(s.current_fd, fd);
		assert_true(exists("logs/samples/current"));
		assert_int_equal(mkdirat(s.current_fd, "made-through-fd", 0755), 0);
		assert_true(exists("logs/samples/current/made-through-fd"));
	}
	session_close(&s);
}

static void test_cpu_speed(void **state)
{
	char p[PATH_MAX];
	FILE *f;

	(void)state;
	path(p, "cpuinfo");
	f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 33\n"
		   "model name\t: AMD Ryzen 9 5950X\nstepping\t: 2\ncpu MHz\t\t: 2596.124\n\n"
		   "processor\t: 1\nvendor_id\t: GenuineIntel\nmodel\t\t: 99\ncpu MHz\t\t: 1000.000\n");
	fclose(f);
	{
		struct op_cpuinfo ci;

		session_cpuinfo(scratch, &ci);
		assert_string_equal(ci.vendor, "AuthenticAMD");
		assert_int_equal(ci.family, 25);
		assert_int_equal(ci.model, 33); /* not "model name", not the 2nd CPU */
		assert_int_equal(ci.stepping, 2);
		assert_int_equal(ci.size, sizeof(ci));
	}
	assert_true(session_cpu_speed(scratch) > 2596.123 && session_cpu_speed(scratch) < 2596.125);
	path(p, "nothing-here");
	assert_true(session_cpu_speed(p) == 0.0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_lock_rotate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rotation_no_follow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_speed, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
