/*
 * test_session.c - the session directory: creation, refusal of symlinks and
 * non-directories, the lock against a second daemon (nothing touched),
 * samples/current rotation and --append, log reopening, cpu speed. The path
 * walk (no symlink anywhere, "LINK/" included), FIFOs where files are
 * expected; as root: what the daemon trusts (owners, modes, ancestors,
 * sticky parents), the private modes and session_group.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
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
		/* a root daemon's session is private; a user's follows the umask */
		assert_int_equal(st.st_mode & 0777, geteuid() == 0 ? 0700 : 0755 & ~mask);
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

static void mode_is(const char *rel, mode_t mode)
{
	char p[PATH_MAX];
	struct stat st;

	path(p, rel);
	assert_int_equal(lstat(p, &st), 0);
	if ((st.st_mode & 07777) != mode)
		fail_msg("%s: mode %04o, expected %04o", rel, (unsigned)(st.st_mode & 07777),
			 (unsigned)mode);
}

static void own(const char *rel, uid_t uid)
{
	char p[PATH_MAX];

	path(p, rel);
	assert_int_equal(lchown(p, uid, (gid_t)-1), 0);
}

static void make_dir(const char *rel, mode_t mode)
{
	char p[PATH_MAX];

	path(p, rel);
	assert_int_equal(mkdir(p, 0700), 0);
	assert_int_equal(chmod(p, mode), 0);
}

/* session_open(@rel): the result, the message in @err */
static int open_rel(struct session *s, const char *rel, bool append, char *err, size_t len)
{
	char dir[PATH_MAX];

	path(dir, rel);
	err[0] = 0;
	return session_open(s, dir, append, NULL, err, len);
}

static void err_has(const char *err, const char *what)
{
	if (!strstr(err, what))
		fail_msg("message \"%s\" does not say \"%s\"", err, what);
}

static void log_has(const char *rel, const char *what)
{
	char buf[8192];

	read_file(rel, buf, sizeof(buf));
	if (!strstr(buf, what))
		fail_msg("%s does not say \"%s\":\n%s", rel, what, buf);
}

/*
 * The path is walked without following any symlink: "LINK/", "LINK/." and
 * a symlinked parent are refused with nothing written through them; "//",
 * "." and ".." are resolved by name.
 */
static void test_path_walk(void **state)
{
	struct session s;
	char dir[PATH_MAX], link[PATH_MAX], err[1024];

	(void)state;
	make_dir("real", 0755);
	touch("real/lock");
	path(link, "link");
	assert_int_equal(symlink("real", link), 0);
	assert_int_equal(open_rel(&s, "link/", false, err, sizeof(err)), -ELOOP);
	err_has(err, "link is a symbolic link");
	assert_int_equal(open_rel(&s, "link/.", false, err, sizeof(err)), -ELOOP);
	assert_int_equal(open_rel(&s, "real/../link/", false, err, sizeof(err)), -ELOOP);
	assert_int_equal(open_rel(&s, "link/sess", false, err, sizeof(err)), -ELOOP);
	err_has(err, "link/sess: ");
	err_has(err, "link is a symbolic link");
	assert_false(exists("real/sess"));
	assert_false(exists("real/abi"));
	assert_false(exists("real/samples"));
	assert_true(exists("real/lock")); /* not unlinked by a session_close */
	/* a symlink further up, to a directory to be created */
	path(link, "up");
	assert_int_equal(symlink("real", link), 0);
	assert_int_equal(open_rel(&s, "up/a/b", false, err, sizeof(err)), -ELOOP);
	assert_false(exists("real/a"));
	/* a file as a parent */
	touch("file");
	assert_int_equal(open_rel(&s, "file/sess", false, err, sizeof(err)), -ENOTDIR);
	err_has(err, "file is not a directory");
	/* names resolved: the session is a/b/sess, nothing made for c */
	assert_int_equal(open_rel(&s, "a//b/./c/../sess/", false, err, sizeof(err)), 0);
	path(dir, "a/b/sess");
	assert_true(s.dir[0] == '/');
	assert_true(strlen(s.dir) >= strlen(dir) &&
		    !strcmp(s.dir + strlen(s.dir) - strlen(dir), dir));
	assert_true(exists("a/b/sess/abi"));
	assert_false(exists("a/b/c"));
	session_close(&s);
}

/* a FIFO where the log or the lock should be is refused at once, never waited on */
static void test_fifo(void **state)
{
	struct session s;
	char p[PATH_MAX], dir[PATH_MAX], err[1024];

	(void)state;
	alarm(20); /* a hang fails the test (SIGALRM) instead of stopping the run */
	make_dir("f", 0755);
	make_dir("f/samples", 0755);
	path(p, "f/samples/oprofiled.log");
	assert_int_equal(mkfifo(p, 0644), 0);
	assert_int_equal(open_rel(&s, "f", false, err, sizeof(err)), -EINVAL);
	err_has(err, "samples/oprofiled.log is not a regular file (a FIFO)");
	/* --log-file= a FIFO */
	path(dir, "f2");
	assert_int_equal(session_open(&s, dir, false, p, err, sizeof(err)), -EINVAL);
	err_has(err, "is not a regular file (a FIFO)");
	/* the lock */
	make_dir("f3", 0755);
	path(p, "f3/lock");
	assert_int_equal(mkfifo(p, 0644), 0);
	assert_int_equal(open_rel(&s, "f3", false, err, sizeof(err)), -EINVAL);
	err_has(err, "lock is not a regular file (a FIFO)");
	/* SIGHUP: a FIFO planted after the rotation; the old log stays, saying why */
	assert_int_equal(open_rel(&s, "f4", false, err, sizeof(err)), 0);
	path(p, "f4/samples/oprofiled.log");
	path(dir, "f4/samples/oprofiled.log.1");
	assert_int_equal(rename(p, dir), 0);
	assert_int_equal(mkfifo(p, 0644), 0);
	assert_int_equal(session_reopen_log(&s), -EINVAL);
	fprintf(s.log, "still logging\n");
	session_close(&s);
	log_has("f4/samples/oprofiled.log.1", "is not a regular file (a FIFO)");
	log_has("f4/samples/oprofiled.log.1", "the log stays where it was");
	log_has("f4/samples/oprofiled.log.1", "still logging");
	alarm(0);
}

/*
 * Root: a session directory, an ancestor, or a reused entry (samples,
 * current, the staged current, lock, log) that another user owns or may
 * write is refused, naming the path and the owner, and nothing is moved;
 * a sticky world-writable parent is fine above a root-owned session.
 */
static void test_root_trust(void **state)
{
	struct session s;
	char p[PATH_MAX], q[PATH_MAX], err[1024];

	(void)state;
	if (geteuid() != 0) {
		print_message("test_root_trust: skipped, needs root (chown)\n");
		skip();
	}
	make_dir("u", 0755);
	own("u", 65534);
	assert_int_equal(open_rel(&s, "u", false, err, sizeof(err)), -EPERM);
	path(p, "u");
	err_has(err, p);
	err_has(err, " is owned by uid 65534");
	err_has(err, "not root");
	assert_false(exists("u/lock"));
	assert_false(exists("u/samples"));
	make_dir("w", 0777);
	assert_int_equal(open_rel(&s, "w", false, err, sizeof(err)), -EPERM);
	err_has(err, "is writable by group or other (mode 0777)");
	assert_false(exists("w/abi"));
	/* ancestors: the user's; root's but open to all and not sticky */
	make_dir("ua", 0755);
	make_dir("ua/sess", 0755);
	own("ua", 65534);
	assert_int_equal(open_rel(&s, "ua/sess", false, err, sizeof(err)), -EPERM);
	path(p, "ua is owned by uid 65534");
	err_has(err, p);
	assert_false(exists("ua/sess/abi"));
	make_dir("wa", 0777);
	assert_int_equal(open_rel(&s, "wa/sess", false, err, sizeof(err)), -EPERM);
	err_has(err, "(mode 0777) and not sticky");
	assert_false(exists("wa/sess"));
	/* a sticky one (/tmp): root's session in it is fine, the user's is not */
	make_dir("st", 01777);
	assert_int_equal(open_rel(&s, "st/rootsess", false, err, sizeof(err)), 0);
	session_close(&s);
	make_dir("st/usersess", 0755);
	own("st/usersess", 65534);
	assert_int_equal(open_rel(&s, "st/usersess", false, err, sizeof(err)), -EPERM);
	err_has(err, "usersess is owned by uid 65534");

	/* entries of a root session */
	assert_int_equal(open_rel(&s, "e", false, err, sizeof(err)), 0);
	touch("e/samples/current/marker");
	session_close(&s);
	own("e/samples", 65534);
	assert_int_equal(open_rel(&s, "e", false, err, sizeof(err)), -EPERM);
	err_has(err, ": samples is owned by uid 65534");
	own("e/samples", 0);
	own("e/samples/current", 65534);
	assert_int_equal(open_rel(&s, "e", true, err, sizeof(err)), -EPERM);
	err_has(err, ": samples/current is owned by uid 65534");
	assert_int_equal(open_rel(&s, "e", false, err, sizeof(err)), -EPERM);
	assert_true(exists("e/samples/current/marker")); /* not moved aside */
	assert_false(exists("e/samples/" SESSION_STAGED));
	own("e/samples/current", 0);
	path(p, "e/samples/current");
	path(q, "e/samples/" SESSION_STAGED);
	assert_int_equal(rename(p, q), 0);
	own("e/samples/" SESSION_STAGED, 65534);
	assert_int_equal(open_rel(&s, "e", true, err, sizeof(err)), -EPERM);
	err_has(err, ": samples/" SESSION_STAGED " is owned by uid 65534");
	own("e/samples/" SESSION_STAGED, 0);
	assert_int_equal(rename(q, p), 0);
	touch("e/lock");
	own("e/lock", 65534);
	assert_int_equal(open_rel(&s, "e", true, err, sizeof(err)), -EPERM);
	err_has(err, ": lock is owned by uid 65534");
	assert_true(exists("e/lock"));
	path(p, "e/lock");
	assert_int_equal(unlink(p), 0);
	own("e/samples/oprofiled.log", 65534);
	assert_int_equal(open_rel(&s, "e", true, err, sizeof(err)), -EPERM);
	err_has(err, ": samples/oprofiled.log is owned by uid 65534");
	own("e/samples/oprofiled.log", 0);
	path(p, "e/samples/oprofiled.log");
	assert_int_equal(chmod(p, 0622), 0);
	assert_int_equal(open_rel(&s, "e", true, err, sizeof(err)), -EPERM);
	err_has(err, "samples/oprofiled.log is writable by group or other (mode 0622)");
	assert_int_equal(chmod(p, 0600), 0);
	path(q, "e/log-link");
	assert_int_equal(link(p, q), 0);
	assert_int_equal(open_rel(&s, "e", true, err, sizeof(err)), -EPERM);
	err_has(err, "samples/oprofiled.log has 2 hard links");
	assert_int_equal(unlink(q), 0);
	assert_true(exists("e/samples/current/marker"));

	/* SIGHUP reopens a current swapped for the user's: refused, said in the log */
	assert_int_equal(open_rel(&s, "e", true, err, sizeof(err)), 0);
	path(p, "e/samples/current");
	path(q, "e/samples/current.old");
	assert_int_equal(rename(p, q), 0);
	make_dir("e/samples/current", 0755);
	own("e/samples/current", 65534);
	assert_int_equal(session_reopen_current(&s), -EPERM);
	session_close(&s);
	log_has("e/samples/oprofiled.log", "SIGHUP: session directory ");
	log_has("e/samples/oprofiled.log", "samples/current is owned by uid 65534");
}

/* a gid for session_group tests: any group but root's */
static bool other_group(char *name, size_t len, gid_t *gid)
{
	static const char *const names[] = { "nogroup", "nobody", "users", "daemon" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct group *g = getgrnam(names[i]);

		if (g && g->gr_gid != 0) {
			snprintf(name, len, "%s", g->gr_name);
			*gid = g->gr_gid;
			return true;
		}
	}
	return false;
}

static void gid_is(const char *rel, gid_t gid)
{
	char p[PATH_MAX];
	struct stat st;

	path(p, rel);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_gid, gid);
}

/*
 * Root: the session is private (0700 directories, 0600 files, whatever the
 * caller's umask, which comes back at close); a 0755 session of an older
 * version is tightened and the log says so, a directory holding other
 * things is not chmod'ed; session_group: 02750/0640 and the group.
 */
static void test_root_modes(void **state)
{
	struct session_conf c = { 0 };
	struct session s;
	char dir[PATH_MAX], group[64], err[1024];
	mode_t mask;
	gid_t gid;
	int fd;

	(void)state;
	if (geteuid() != 0) {
		print_message("test_root_modes: skipped, needs root\n");
		skip();
	}
	mask = umask(022);
	assert_int_equal(open_rel(&s, "p", false, err, sizeof(err)), 0);
	fd = openat(s.current_fd, "file", O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mkdirat(s.current_fd, "dir", 0755), 0);
	mode_is("p", 0700);
	mode_is("p/samples", 0700);
	mode_is("p/samples/current", 0700);
	mode_is("p/samples/current/dir", 0700);
	mode_is("p/samples/current/file", 0600);
	mode_is("p/abi", 0600);
	mode_is("p/lock", 0600);
	mode_is("p/samples/oprofiled.log", 0600);
	session_close(&s);
	assert_int_equal(umask(022), 022);

	/* an older version's session: tightened, logged */
	path(dir, "p");
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chmod(strcat(dir, "/samples"), 0755), 0);
	assert_int_equal(chmod(strcat(dir, "/current"), 0755), 0);
	assert_int_equal(open_rel(&s, "p", true, err, sizeof(err)), 0);
	session_close(&s);
	mode_is("p", 0700);
	mode_is("p/samples", 0700);
	mode_is("p/samples/current", 0700);
	path(dir, "p");
	{
		char line[PATH_MAX + 64];

		/* (@dir is relative: the end of the absolute path logged) */
		snprintf(line, sizeof(line), "%s was mode 0755: now 0700", dir);
		log_has("p/samples/oprofiled.log", line);
		snprintf(line, sizeof(line), "%s: samples/current was mode 0755", dir);
		log_has("p/samples/oprofiled.log", line);
	}
	/* a directory with other things in it is left as it is (samples/ is private) */
	make_dir("shared-dir", 0755);
	touch("shared-dir/other");
	assert_int_equal(open_rel(&s, "shared-dir", false, err, sizeof(err)), 0);
	session_close(&s);
	mode_is("shared-dir", 0755);
	mode_is("shared-dir/samples", 0700);

	/* session_group */
	if (!other_group(group, sizeof(group), &gid)) {
		print_message("test_root_modes: no group to share with, session_group not tested\n");
		umask(mask);
		return;
	}
	path(dir, "g");
	c.dir = dir;
	c.group = group;
	assert_int_equal(session_open_conf(&s, &c, err, sizeof(err)), 0);
	fd = openat(s.current_fd, "file", O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mkdirat(s.current_fd, "dir", 0755), 0);
	session_close(&s);
	mode_is("g", 02750);
	mode_is("g/samples", 02750);
	mode_is("g/samples/current", 02750);
	mode_is("g/samples/current/dir", 02750);
	mode_is("g/samples/current/file", 0640);
	mode_is("g/samples/oprofiled.log", 0640);
	gid_is("g", gid);
	gid_is("g/samples/current/dir", gid);
	gid_is("g/samples/current/file", gid);
	gid_is("g/samples/oprofiled.log", gid);
	/* the private session shared from now on */
	path(dir, "p");
	c.dir = dir;
	assert_int_equal(session_open_conf(&s, &c, err, sizeof(err)), 0);
	session_close(&s);
	mode_is("p", 02750);
	mode_is("p/samples", 02750);
	gid_is("p/samples", gid);
	log_has("p/samples/oprofiled.log", "was mode 0700: now 2750, group of session_group");
	c.group = "no-such-group-opng";
	assert_int_equal(session_open_conf(&s, &c, err, sizeof(err)), -ENOENT);
	err_has(err, "session_group \"no-such-group-opng\": no such group");
	umask(mask);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_create_lock_rotate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rotation_no_follow, setup, teardown),
		cmocka_unit_test_setup_teardown(test_log_reopen, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cpu_speed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_path_walk, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fifo, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_trust, setup, teardown),
		cmocka_unit_test_setup_teardown(test_root_modes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
