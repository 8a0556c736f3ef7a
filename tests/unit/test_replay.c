/*
 * test_replay.c - how the --record writer creates its file (issue 14, hole
 * 6): a new file only, never through a symlink; REPLAY_OVERWRITE replaces a
 * regular file by a new one; as root, no directory lib/op_trust does not
 * trust (/tmp); the reader opens as op_trust says.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay.h"

static char tmpdir[256];

static void build_path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", tmpdir, name);
}

static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* the file's content (up to 63 bytes) */
static const char *content(const char *path)
{
	static char buf[64];
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return buf;
}

/* a complete file through the writer: the header's magic at the start */
static bool is_recording(const char *path)
{
	return !memcmp(content(path), REPLAY_MAGIC, 8);
}

static int create(const char *path, unsigned flags, char *err, size_t err_len)
{
	struct replay_writer *w = NULL;
	int ret;

	err[0] = 0;
	ret = replay_writer_create(&w, path, flags, 1u << 20, 1024, err, err_len);
	if (ret == 0) {
		assert_int_equal(replay_write(w, REPLAY_END, 0, 0, NULL, 0, NULL, 0), 0);
		assert_int_equal(replay_writer_close(w), 0);
	}
	return ret;
}

static void test_new_file(void **state)
{
	char path[512], err[512];
	struct stat st;

	(void)state;
	build_path(path, sizeof(path), "new.oprec");
	assert_int_equal(create(path, 0, err, sizeof(err)), 0);
	assert_true(is_recording(path));
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, geteuid() == 0 ? 0600 : 0644);
	/* a relative name: the current directory */
	assert_int_equal(chdir(tmpdir), 0);
	assert_int_equal(create("rel.oprec", 0, err, sizeof(err)), 0);
	build_path(path, sizeof(path), "rel.oprec");
	assert_true(is_recording(path));
	/* no file name at all */
	build_path(path, sizeof(path), "");
	assert_int_equal(create(path, 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a file name"));
	/* a missing directory is named */
	build_path(path, sizeof(path), "nodir/x.oprec");
	assert_int_equal(create(path, 0, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "nodir"));
}

static void test_existing_refused(void **state)
{
	char path[512], err[512];

	(void)state;
	build_path(path, sizeof(path), "old.oprec");
	put_file(path, "keep");
	assert_int_equal(create(path, 0, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "--record-overwrite"));
	assert_string_equal(content(path), "keep");
	/* replay_writer_open is the same: a new file only */
	{
		struct replay_writer *w = NULL;

		assert_int_equal(replay_writer_open(&w, path, 1u << 20, 1024, err, sizeof(err)),
				 -EEXIST);
		assert_null(w);
	}
	assert_string_equal(content(path), "keep");
}

static void test_symlink_never_followed(void **state)
{
	char path[512], target[512], err[512];
	unsigned flags;

	(void)state;
	build_path(target, sizeof(target), "precious");
	put_file(target, "precious");
	build_path(path, sizeof(path), "link.oprec");
	assert_int_equal(symlink(target, path), 0);
	for (flags = 0; flags <= REPLAY_OVERWRITE; flags += REPLAY_OVERWRITE) {
		assert_true(create(path, flags, err, sizeof(err)) < 0);
		assert_non_null(strstr(err, path));
		assert_non_null(strstr(err, "symbolic link"));
		assert_string_equal(content(target), "precious");
	}
	/* a dangling one is not created through either */
	build_path(target, sizeof(target), "nowhere");
	build_path(path, sizeof(path), "dangling.oprec");
	assert_int_equal(symlink(target, path), 0);
	for (flags = 0; flags <= REPLAY_OVERWRITE; flags += REPLAY_OVERWRITE) {
		assert_true(create(path, flags, err, sizeof(err)) < 0);
		assert_non_null(strstr(err, "symbolic link"));
		assert_int_equal(access(target, F_OK), -1);
	}
}

static void test_overwrite(void **state)
{
	char path[512], hard[512], dir[512], err[512];

	(void)state;
	build_path(path, sizeof(path), "again.oprec");
	build_path(hard, sizeof(hard), "again.hardlink");
	put_file(path, "old run");
	assert_int_equal(link(path, hard), 0);
	assert_int_equal(create(path, REPLAY_OVERWRITE, err, sizeof(err)), 0);
	assert_true(is_recording(path));
	/* replaced, not truncated: the other name keeps the old content */
	assert_string_equal(content(hard), "old run");
	/* a directory (or anything not regular) is not replaced */
	build_path(dir, sizeof(dir), "adir");
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(create(dir, REPLAY_OVERWRITE, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "not a regular file"));
	/* a missing file is simply created */
	build_path(path, sizeof(path), "first.oprec");
	assert_int_equal(create(path, REPLAY_OVERWRITE, err, sizeof(err)), 0);
	assert_true(is_recording(path));
}

static void test_root_world_writable_dir(void **state)
{
	char dir[512], path[600], err[512];

	(void)state;
	if (geteuid() != 0) {
		print_message("not root: the world-writable directory rule is root's only\n");
		skip();
	}
	build_path(dir, sizeof(dir), "sticky");
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chmod(dir, 01777), 0);
	snprintf(path, sizeof(path), "%s/rec.oprec", dir);
	assert_int_equal(create(path, 0, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, dir));
	assert_non_null(strstr(err, "writable by every user"));
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(create(path, REPLAY_OVERWRITE, err, sizeof(err)), -EPERM);
	/* op_trust's rule for root, stricter: its group may not write it either */
	assert_int_equal(chmod(dir, 0775), 0);
	assert_int_equal(create(path, 0, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "writable by its group (mode 0775)"));
	/* nor may another user own it */
	assert_int_equal(chmod(dir, 0755), 0);
	assert_int_equal(chown(dir, 65534, 65534), 0);
	assert_int_equal(create(path, 0, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "owned by uid 65534, not root"));
	assert_int_equal(access(path, F_OK), -1);
	/* root's own directory: fine */
	assert_int_equal(chown(dir, 0, 0), 0);
	assert_int_equal(create(path, 0, err, sizeof(err)), 0);
}

/* open @path with the reader: its return, @err set */
static int reader(const char *path, char *err, size_t err_len)
{
	struct replay_reader r;
	int ret;

	err[0] = 0;
	ret = replay_reader_open(&r, path, err, err_len);
	if (ret == 0)
		replay_reader_close(&r);
	return ret;
}

/*
 * The reader opens as lib/op_trust says: not through a symlink, a regular
 * file (a FIFO does not hang it), as root one that root owns and only root
 * can write.
 */
static void test_reader_trust(void **state)
{
	char path[512], link[512], fifo[512], err[512];

	(void)state;
	build_path(path, sizeof(path), "read.oprec");
	assert_int_equal(create(path, 0, err, sizeof(err)), 0);
	assert_int_equal(reader(path, err, sizeof(err)), 0);
	build_path(link, sizeof(link), "read.link");
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(reader(link, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "symbolic link"));
	build_path(fifo, sizeof(fifo), "read.fifo");
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(reader(fifo, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
	build_path(fifo, sizeof(fifo), "missing.oprec");
	assert_int_equal(reader(fifo, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot open"));
	if (geteuid() != 0) {
		print_message("not root: the owner cases are root's only\n");
		return;
	}
	assert_int_equal(chmod(path, 0660), 0);
	assert_int_equal(reader(path, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "writable by group or others (mode 0660)"));
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(chown(path, 65534, 65534), 0);
	assert_int_equal(reader(path, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "owned by uid 65534, not root"));
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(reader(path, err, sizeof(err)), 0);
}

static int setup_tmp(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_replay.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_file),
		cmocka_unit_test(test_existing_refused),
		cmocka_unit_test(test_symlink_never_followed),
		cmocka_unit_test(test_overwrite),
		cmocka_unit_test(test_root_world_writable_dir),
		cmocka_unit_test(test_reader_trust),
	};

	umask(022);
	return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
