/*
 * test_op_trust.c - lib/op_trust: the owner and mode rule by table, then
 * real files and paths below a fresh directory in /tmp (root-owned and
 * sticky: the one writable directory a path may cross): modes, owners
 * (chown, as root), symbolic links, FIFOs, missing names, relative paths.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

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

#include "op_trust.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define OTHER_UID 4321 /* a uid nobody in the test is */

static void test_trust_for(void **state)
{
	struct op_trust t;

	(void)state;
	t = op_trust_for(0, 1000);
	assert_int_equal(t.owner, 0);
	assert_int_equal(t.forbid, S_IWGRP | S_IWOTH);
	t = op_trust_for(1000, 1000);
	assert_int_equal(t.owner, 1000);
	assert_int_equal(t.forbid, S_IWOTH);
	assert_true(op_trust_uid(&t, 0));
	assert_true(op_trust_uid(&t, 1000));
	assert_false(op_trust_uid(&t, 1001));
}

static void test_trust_stat_table(void **state)
{
	static const struct {
		uid_t owner;
		mode_t forbid;
		uid_t uid;
		mode_t mode;
		int rc;
		const char *msg; /* in the message when refused */
	} cases[] = {
		{ 0, S_IWGRP | S_IWOTH, 0, 0755, 0, NULL },
		{ 0, S_IWGRP | S_IWOTH, 0, 0700, 0, NULL },
		{ 0, S_IWGRP | S_IWOTH, 0, 0775, -EPERM, "writable by group or others (mode 0775)" },
		{ 0, S_IWGRP | S_IWOTH, 0, 0757, -EPERM, "writable by group or others (mode 0757)" },
		{ 0, S_IWGRP | S_IWOTH, 0, 01777, -EPERM, "(mode 1777)" },
		{ 0, S_IWGRP | S_IWOTH, 1000, 0755, -EPERM, "is owned by uid 1000, not root" },
		{ 1000, S_IWOTH, 1000, 0775, 0, NULL },
		{ 1000, S_IWOTH, 0, 0755, 0, NULL },
		{ 1000, S_IWOTH, 1000, 0757, -EPERM, "writable by others (mode 0757)" },
		{ 1000, S_IWOTH, 1001, 0700, -EPERM, "owned by uid 1001, neither uid 1000 nor root" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct op_trust t = { cases[i].owner, cases[i].forbid };
		struct stat st;
		char why[256] = "";

		memset(&st, 0, sizeof(st));
		st.st_uid = cases[i].uid;
		st.st_mode = S_IFREG | cases[i].mode;
		if (op_trust_stat(&t, &st, "lock file", "/s/lock", why, sizeof(why)) != cases[i].rc)
			fail_msg("case %zu: expected %d (%s)", i, cases[i].rc, why);
		if (cases[i].msg) {
			if (!strstr(why, cases[i].msg) || !strstr(why, "lock file /s/lock"))
				fail_msg("case %zu: message \"%s\" lacks \"%s\"", i, why,
					 cases[i].msg);
		}
	}
}

/* a fresh directory below /tmp, 0700 and the caller's */
struct trust_dir {
	char path[PATH_MAX];
	int fd;
};

static int setup_dir(void **state)
{
	struct trust_dir *d = calloc(1, sizeof(*d));

	if (!d)
		return -1;
	snprintf(d->path, sizeof(d->path), "/tmp/test_op_trust.XXXXXX");
	if (!mkdtemp(d->path)) {
		free(d);
		return -1;
	}
	d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*state = d;
	return d->fd < 0 ? -1 : 0;
}

static int teardown_dir(void **state)
{
	struct trust_dir *d = *state;
	char cmd[PATH_MAX + 16];

	close(d->fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->path);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", d->path);
	free(d);
	return 0;
}

static void make_file(int dfd, const char *name, mode_t mode)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void test_openat(void **state)
{
	struct trust_dir *d = *state;
	struct op_trust t = op_trust_for(geteuid(), geteuid());
	struct stat st;
	char why[512];
	int fd;

	make_file(d->fd, "lock", 0644);
	fd = op_trust_openat(&t, d->fd, "lock", O_RDONLY, S_IFREG, "lock file", "D/lock", &st, why,
			     sizeof(why));
	assert_true(fd >= 0);
	assert_true(S_ISREG(st.st_mode));
	close(fd);

	/* writable by others: never trusted */
	assert_int_equal(fchmodat(d->fd, "lock", 0646, 0), 0);
	fd = op_trust_openat(&t, d->fd, "lock", O_RDONLY, S_IFREG, "lock file", "D/lock", &st, why,
			     sizeof(why));
	assert_int_equal(fd, -EPERM);
	assert_non_null(strstr(why, "writable by"));
	assert_non_null(strstr(why, "lock file D/lock"));

	/* a symbolic link to a good file is not followed */
	assert_int_equal(fchmodat(d->fd, "lock", 0644, 0), 0);
	assert_int_equal(symlinkat("lock", d->fd, "link"), 0);
	fd = op_trust_openat(&t, d->fd, "link", O_RDONLY, S_IFREG, "lock file", "D/link", &st, why,
			     sizeof(why));
	assert_int_equal(fd, -ELOOP);
	assert_non_null(strstr(why, "symbolic link"));
	/* nor with O_PATH, which opens the link itself */
	fd = op_trust_openat(&t, d->fd, "link", O_PATH, S_IFREG, "lock file", "D/link", &st, why,
			     sizeof(why));
	assert_int_equal(fd, -ELOOP);

	/* a FIFO where a file should be: refused, and opening it does not hang */
	assert_int_equal(mkfifoat(d->fd, "fifo", 0600), 0);
	fd = op_trust_openat(&t, d->fd, "fifo", O_RDONLY, S_IFREG, "lock file", "D/fifo", &st, why,
			     sizeof(why));
	assert_int_equal(fd, -EINVAL);
	assert_non_null(strstr(why, "is a FIFO, not a regular file"));

	fd = op_trust_openat(&t, d->fd, "missing", O_RDONLY, S_IFREG, "lock file", "D/missing", &st,
			     why, sizeof(why));
	assert_int_equal(fd, -ENOENT);
	assert_non_null(strstr(why, "D/missing"));

	/* any type when none is asked for */
	fd = op_trust_openat(&t, d->fd, ".", O_RDONLY, 0, "directory", "D", &st, why, sizeof(why));
	assert_true(fd >= 0);
	assert_true(S_ISDIR(st.st_mode));
	close(fd);
}

/* op_trust_createat: creates with the mode asked (less the umask), checks what it opened */
static void test_createat(void **state)
{
	struct trust_dir *d = *state;
	struct op_trust t = op_trust_for(geteuid(), geteuid());
	mode_t old = umask(022);
	struct stat st;
	char why[512];
	int fd;

	fd = op_trust_createat(&t, d->fd, "new", O_WRONLY | O_CREAT, 0666, S_IFREG, "log file D/new",
			       NULL, &st, why, sizeof(why));
	umask(old);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(fstatat(d->fd, "new", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_int_equal(st.st_mode & 07777, 0644);

	/* an existing file others may write is refused; @path NULL: @what alone names it */
	assert_int_equal(fchmodat(d->fd, "new", 0646, 0), 0);
	fd = op_trust_createat(&t, d->fd, "new", O_WRONLY | O_CREAT, 0644, S_IFREG, "log file D/new",
			       NULL, &st, why, sizeof(why));
	assert_int_equal(fd, -EPERM);
	assert_non_null(strstr(why, "log file D/new is writable by"));

	/* a planted link is not followed, and nothing is created through it */
	assert_int_equal(symlinkat("target", d->fd, "link"), 0);
	fd = op_trust_createat(&t, d->fd, "link", O_WRONLY | O_CREAT, 0644, S_IFREG, "log file",
			       "D/link", &st, why, sizeof(why));
	assert_int_equal(fd, -ELOOP);
	assert_non_null(strstr(why, "log file D/link is a symbolic link"));
	assert_int_equal(fstatat(d->fd, "target", &st, AT_SYMLINK_NOFOLLOW), -1);
}

/* another owner: root can make one (chown) */
static void test_openat_owner(void **state)
{
	struct trust_dir *d = *state;
	struct op_trust root = op_trust_for(0, 0), user = { OTHER_UID, S_IWOTH };
	struct stat st;
	char why[512];
	int fd;

	if (geteuid() != 0) {
		fprintf(stderr, "test_openat_owner: SKIP: chown to another uid needs root\n");
		skip();
	}
	make_file(d->fd, "theirs", 0664);
	assert_int_equal(fchownat(d->fd, "theirs", OTHER_UID, 0, 0), 0);
	fd = op_trust_openat(&root, d->fd, "theirs", O_RDONLY, S_IFREG, "lock file", "D/theirs",
			     &st, why, sizeof(why));
	assert_int_equal(fd, -EPERM);
	assert_non_null(strstr(why, "owned by uid 4321, not root"));
	/* its owner trusts it, group-writable too (the user's rule) */
	fd = op_trust_openat(&user, d->fd, "theirs", O_RDONLY, S_IFREG, "lock file", "D/theirs",
			     &st, why, sizeof(why));
	assert_true(fd >= 0);
	close(fd);
}

static void test_open_path(void **state)
{
	struct trust_dir *d = *state;
	struct op_trust t = op_trust_for(geteuid(), geteuid());
	char path[PATH_MAX + 64], why[1024];
	struct stat st;
	int fd;

	assert_int_equal(mkdirat(d->fd, "a", 0755), 0);
	assert_int_equal(mkdirat(d->fd, "a/b", 0755), 0);
	make_file(d->fd, "a/b/plugin.so", 0644);
	snprintf(path, sizeof(path), "%s/a/b/plugin.so", d->path);
	/* /tmp on the way is root's and sticky: passed */
	fd = op_trust_open_path(&t, path, O_RDONLY, S_IFREG, "plugin file", &st, why, sizeof(why));
	if (fd < 0)
		fail_msg("%s", why);
	close(fd);
	/* doubled slashes walk the same components */
	snprintf(path, sizeof(path), "%s//a/b//plugin.so", d->path);
	fd = op_trust_open_path(&t, path, O_RDONLY, S_IFREG, "plugin file", &st, why, sizeof(why));
	assert_true(fd >= 0);
	close(fd);

	/* a directory above that others can write, not sticky: refused, and named */
	assert_int_equal(fchmodat(d->fd, "a", 0777, 0), 0);
	snprintf(path, sizeof(path), "%s/a/b/plugin.so", d->path);
	fd = op_trust_open_path(&t, path, O_RDONLY, S_IFREG, "plugin file", &st, why, sizeof(why));
	assert_int_equal(fd, -EPERM);
	assert_non_null(strstr(why, "plugin file "));
	assert_non_null(strstr(why, "/a is writable by"));

	/* the same, sticky and the caller's: passed only if the caller is root */
	assert_int_equal(fchmodat(d->fd, "a", 01777, 0), 0);
	fd = op_trust_open_path(&t, path, O_RDONLY, S_IFREG, "plugin file", &st, why, sizeof(why));
	if (geteuid() == 0) {
		assert_true(fd >= 0);
		close(fd);
	} else {
		assert_int_equal(fd, -EPERM);
	}
	assert_int_equal(fchmodat(d->fd, "a", 0755, 0), 0);

	/* the file itself writable by others */
	assert_int_equal(fchmodat(d->fd, "a/b/plugin.so", 0666, 0), 0);
	fd = op_trust_open_path(&t, path, O_RDONLY, S_IFREG, "plugin file", &st, why, sizeof(why));
	assert_int_equal(fd, -EPERM);
	assert_non_null(strstr(why, "plugin.so is writable by"));
	assert_int_equal(fchmodat(d->fd, "a/b/plugin.so", 0644, 0), 0);

	/* a symbolic link on the way is not followed, even to a good directory */
	assert_int_equal(symlinkat("a", d->fd, "l"), 0);
	snprintf(path, sizeof(path), "%s/l/b/plugin.so", d->path);
	fd = op_trust_open_path(&t, path, O_RDONLY, S_IFREG, "plugin file", &st, why, sizeof(why));
	assert_int_equal(fd, -ELOOP);
	assert_non_null(strstr(why, "/l is a symbolic link"));

	/* a file where a directory should be */
	snprintf(path, sizeof(path), "%s/a/b/plugin.so/x", d->path);
	fd = op_trust_open_path(&t, path, O_RDONLY, S_IFREG, "plugin file", &st, why, sizeof(why));
	assert_int_equal(fd, -ENOTDIR);

	/* not absolute, no file name, missing */
	fd = op_trust_open_path(&t, "a/b/plugin.so", O_RDONLY, S_IFREG, "plugin file", &st, why,
				sizeof(why));
	assert_int_equal(fd, -EINVAL);
	assert_non_null(strstr(why, "not an absolute path"));
	snprintf(path, sizeof(path), "%s/a/b/", d->path);
	fd = op_trust_open_path(&t, path, O_RDONLY, S_IFREG, "plugin file", &st, why, sizeof(why));
	assert_int_equal(fd, -EISDIR);
	snprintf(path, sizeof(path), "%s/a/nope/plugin.so", d->path);
	fd = op_trust_open_path(&t, path, O_RDONLY, S_IFREG, "plugin file", &st, why, sizeof(why));
	assert_int_equal(fd, -ENOENT);
	assert_non_null(strstr(why, "/a/nope"));
}

/* a directory above owned by someone else: refused for root */
static void test_open_path_owner(void **state)
{
	struct trust_dir *d = *state;
	struct op_trust root = op_trust_for(0, 0);
	char path[PATH_MAX + 64], why[1024];
	struct stat st;
	int fd;

	if (geteuid() != 0) {
		fprintf(stderr, "test_open_path_owner: SKIP: chown to another uid needs root\n");
		skip();
	}
	assert_int_equal(mkdirat(d->fd, "u", 0755), 0);
	make_file(d->fd, "u/f", 0644);
	assert_int_equal(fchownat(d->fd, "u", OTHER_UID, 0, 0), 0);
	snprintf(path, sizeof(path), "%s/u/f", d->path);
	fd = op_trust_open_path(&root, path, O_RDONLY, S_IFREG, "record file", &st, why,
				sizeof(why));
	assert_int_equal(fd, -EPERM);
	assert_non_null(strstr(why, "/u is owned by uid 4321, not root"));
	/* sticky does not help a directory root does not own */
	assert_int_equal(fchmodat(d->fd, "u", 01777, 0), 0);
	fd = op_trust_open_path(&root, path, O_RDONLY, S_IFREG, "record file", &st, why,
				sizeof(why));
	assert_int_equal(fd, -EPERM);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trust_for),
		cmocka_unit_test(test_trust_stat_table),
		cmocka_unit_test_setup_teardown(test_openat, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_openat_owner, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_createat, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_open_path, setup_dir, teardown_dir),
		cmocka_unit_test_setup_teardown(test_open_path_owner, setup_dir, teardown_dir),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
