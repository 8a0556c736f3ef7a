/*
 * test_push_spool.c - the push plugin's on-disk spool (plugins/push/spool.c)
 * in a scratch session directory: oldest-first drops at the file and byte
 * bounds (counted), an entry larger than the spool, what a restart finds
 * (whole entries in order, temporaries removed, foreign files and links
 * left alone), the sequence going on after a restart.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "spool.h"

static char sdir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(sdir, sizeof(sdir), "/tmp/test_push_spool.XXXXXX");
	return mkdtemp(sdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void add(struct spool *sp, size_t len, uint64_t from, int want)
{
	char buf[256], err[256];

	memset(buf, (int)(from & 0xff), sizeof(buf));
	assert_int_equal(spool_add(sp, buf, len, from, from + 1, 99, err, sizeof(err)), want);
}

/* the oldest entry's from_s and bytes, checked against its content */
static uint64_t peek_from(struct spool *sp)
{
	struct spool_entry e;
	char err[256];
	void *buf = NULL;
	size_t len = 0;

	assert_int_equal(spool_peek(sp, &e, &buf, &len, err, sizeof(err)), 0);
	assert_int_equal(len, e.bytes);
	assert_int_equal(((unsigned char *)buf)[0], e.from_s & 0xff);
	assert_int_equal(e.until_s, e.from_s + 1);
	assert_int_equal(e.hz, 99);
	free(buf);
	return e.from_s;
}

static void test_file_bound(void **state)
{
	struct spool sp;
	struct stat st;
	char err[256], path[128];

	(void)state;
	assert_int_equal(spool_open(&sp, sdir, "spool", 1 << 20, 3, err, sizeof(err)), 0);
	snprintf(path, sizeof(path), "%s/spool", sdir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	for (uint64_t i = 1; i <= 5; i++)
		add(&sp, 10, i, 0);
	/* 1 and 2 went, oldest first, counted */
	assert_int_equal(sp.n, 3);
	assert_int_equal(sp.dropped, 2);
	assert_int_equal(sp.bytes, 30);
	assert_int_equal(peek_from(&sp), 3);
	spool_pop(&sp);
	assert_int_equal(peek_from(&sp), 4);
	assert_int_equal(sp.n, 2);
	spool_close(&sp);
}

static void test_byte_bound(void **state)
{
	struct spool sp;
	char err[256];

	(void)state;
	assert_int_equal(spool_open(&sp, sdir, "spool", 100, 100, err, sizeof(err)), 0);
	add(&sp, 40, 1, 0);
	add(&sp, 40, 2, 0);
	add(&sp, 40, 3, 0); /* 120 > 100: the first goes */
	assert_int_equal(sp.n, 2);
	assert_int_equal(sp.dropped, 1);
	assert_int_equal(peek_from(&sp), 2);
	/* larger than the whole spool: itself dropped, the others kept */
	add(&sp, 101, 4, -EFBIG);
	assert_int_equal(sp.dropped, 2);
	assert_int_equal(sp.n, 2);
	spool_close(&sp);
}

static void test_restart(void **state)
{
	struct spool sp;
	char err[256], path[160];
	uint64_t seq;
	int fd;

	(void)state;
	assert_int_equal(spool_open(&sp, sdir, "spool", 1 << 20, 10, err, sizeof(err)), 0);
	add(&sp, 10, 7, 0);
	add(&sp, 20, 8, 0);
	seq = sp.next_seq;
	spool_close(&sp);
	/* a temporary of a crashed write, a foreign file, a link with our name shape */
	snprintf(path, sizeof(path), "%s/spool/.tmp00000000000000000009-9-10-99.pprof.gz", sdir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/spool/notes.txt", sdir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(path, sizeof(path), "%s/spool/00000000000000000050-1-2-99.pprof.gz", sdir);
	assert_int_equal(symlink("/etc/passwd", path), 0);

	assert_int_equal(spool_open(&sp, sdir, "spool", 1 << 20, 10, err, sizeof(err)), 0);
	assert_int_equal(sp.n, 2);
	assert_int_equal(sp.bytes, 30);
	assert_int_equal(sp.next_seq, seq);
	assert_int_equal(peek_from(&sp), 7);
	snprintf(path, sizeof(path), "%s/spool/.tmp00000000000000000009-9-10-99.pprof.gz", sdir);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/spool/notes.txt", sdir);
	assert_int_equal(access(path, F_OK), 0);
	/* the next entry comes after the kept ones */
	add(&sp, 5, 9, 0);
	spool_pop(&sp);
	assert_int_equal(peek_from(&sp), 8);
	spool_pop(&sp);
	assert_int_equal(peek_from(&sp), 9);
	spool_close(&sp);
}

static void test_restart_smaller_bound(void **state)
{
	struct spool sp;
	char err[256];

	(void)state;
	assert_int_equal(spool_open(&sp, sdir, "spool", 1 << 20, 10, err, sizeof(err)), 0);
	for (uint64_t i = 1; i <= 4; i++)
		add(&sp, 10, i, 0);
	spool_close(&sp);
	/* started again with room for 2: the two oldest go at once, counted */
	assert_int_equal(spool_open(&sp, sdir, "spool", 1 << 20, 2, err, sizeof(err)), 0);
	assert_int_equal(sp.n, 2);
	assert_int_equal(sp.dropped, 2);
	assert_int_equal(peek_from(&sp), 3);
	spool_close(&sp);
}

static void test_no_session(void **state)
{
	struct spool sp;
	char err[256], path[128];

	(void)state;
	snprintf(path, sizeof(path), "%s/missing", sdir);
	assert_int_equal(spool_open(&sp, path, "spool", 100, 10, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot open the session directory"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_file_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_byte_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_restart_smaller_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_session, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
