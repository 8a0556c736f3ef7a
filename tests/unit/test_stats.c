/*
 * test_stats.c - core/stats.c: what each stats/ file holds (kernel losses
 * split into samples, side-band records and records of unknown kind),
 * --append adding to the earlier run's files, and a full disk (a small
 * tmpfs) giving -ENOSPC with the earlier files left whole.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session.h"
#include "stats.h"

struct fx {
	char dir[64];
	int fd; /* the session's samples/current */
	bool mounted;
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_stats.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->fd = open(f->dir, O_RDONLY | O_DIRECTORY);
	assert_true(f->fd >= 0);
	*state = f;
	return 0;
}

static int fx_teardown(void **state)
{
	struct fx *f = *state;
	char *slash = strrchr(f->dir, '/');
	int p;

	close(f->fd);
	if (f->mounted)
		umount2(f->dir, MNT_DETACH);
	p = open("/tmp", O_RDONLY | O_DIRECTORY);
	session_rm_tree(p, slash + 1);
	close(p);
	free(f);
	return 0;
}

static void put(int dfd, const char *path, const char *content)
{
	int fd;

	mkdirat(dfd, "stats", 0755);
	fd = openat(dfd, path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
}

/* the text of @path below @dfd, "" if missing, "(empty)" if 0 bytes */
static const char *get(int dfd, const char *path)
{
	static char buf[64];
	int fd = openat(dfd, path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return "";
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return "(empty)";
	buf[n] = 0;
	return buf;
}

static void test_file_values(void **state)
{
	static const struct {
		uint64_t total, klost_samples, klost_sideband; /* STAT_LOST_RECORDS and its parts */
		uint64_t samples, sideband, unknown;          /* the three files */
	} t[] = {
		/* LOST records only (no PERF_FORMAT_LOST): kind unknown */
		{ 22051, 0, 0, 0, 0, 22051 },
		/* a side-band event of its own: all told apart */
		{ 5300, 5000, 300, 5000, 300, 0 },
		/* an event carrying samples and side-band: the rest is unknown */
		{ 900, 100, 0, 100, 0, 800 },
		/* never below zero */
		{ 10, 8, 7, 8, 7, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct op_stats st = { 0 };

		st.v[STAT_LOST_RECORDS] = t[i].total;
		st.v[STAT_KLOST_SAMPLES] = t[i].klost_samples;
		st.v[STAT_KLOST_SIDEBAND] = t[i].klost_sideband;
		assert_int_equal(stats_file_value(&st, STATS_F_KLOST_SAMPLES), t[i].samples);
		assert_int_equal(stats_file_value(&st, STATS_F_KLOST_SIDEBAND), t[i].sideband);
		assert_int_equal(stats_file_value(&st, STATS_F_KLOST_RECORDS), t[i].unknown);
	}
	assert_string_equal(stats_file(STATS_F_KLOST_SAMPLES), "lost_samples_by_kernel");
	assert_string_equal(stats_file(STATS_F_KLOST_SIDEBAND), "lost_sideband_by_kernel");
	assert_string_equal(stats_file(STATS_F_KLOST_RECORDS), "lost_records_by_kernel");
	assert_null(stats_file(STATS_F_NR));
}

static void test_write(void **state)
{
	struct fx *f = *state;
	struct op_stats st = { 0 };

	/* nothing counted: no stats/ at all */
	assert_int_equal(stats_write_files(&st, f->fd, NULL), 0);
	assert_string_equal(get(f->fd, "stats"), "");
	st.v[STAT_SAMPLES] = 1300;
	st.v[STAT_SOURCE_SAMPLES] = 36;
	st.v[STAT_LOST_NO_MAPPING] = 1331;
	st.v[STAT_LOST_RECORDS] = 5300;
	st.v[STAT_KLOST_SAMPLES] = 5000;
	st.v[STAT_KLOST_SIDEBAND] = 300;
	assert_int_equal(stats_write_files(&st, f->fd, NULL), 0);
	assert_string_equal(get(f->fd, "stats/total_samples"), "1336\n");
	assert_string_equal(get(f->fd, "stats/lost_no_mapping"), "1331\n");
	assert_string_equal(get(f->fd, "stats/lost_samples_by_kernel"), "5000\n");
	assert_string_equal(get(f->fd, "stats/lost_sideband_by_kernel"), "300\n");
	/* zero counts get no file, no temporary file is left */
	assert_string_equal(get(f->fd, "stats/lost_records_by_kernel"), "");
	assert_string_equal(get(f->fd, "stats/.tmp.total_samples"), "");
	/* written again later in the same run (a dump, then the stop): the new counts */
	st.v[STAT_SAMPLES] = 2000;
	assert_int_equal(stats_write_files(&st, f->fd, NULL), 0);
	assert_string_equal(get(f->fd, "stats/total_samples"), "2036\n");
}

/*
 * --append: the earlier run's files are added to, once; before, the new
 * run's counts replaced them (total_samples 500 instead of 1500).
 */
static void test_append(void **state)
{
	struct fx *f = *state;
	struct op_stats st = { 0 };
	const char *const throttled[] = { "TIMER", NULL };

	put(f->fd, "stats/total_samples", "1000\n");
	put(f->fd, "stats/lost_no_mapping", "7\n");
	put(f->fd, "stats/lost_records_by_kernel", "40\n");
	put(f->fd, "stats/lost_kernel", "not a number\n"); /* damaged: not added */
	st.v[STAT_SAMPLES] = 500;
	st.v[STAT_LOST_NO_MAPPING] = 3;
	st.v[STAT_LOST_KERNEL] = 2;
	assert_int_equal(stats_write_files(&st, f->fd, throttled), 0);
	assert_string_equal(get(f->fd, "stats/total_samples"), "1500\n");
	assert_string_equal(get(f->fd, "stats/lost_no_mapping"), "10\n");
	assert_string_equal(get(f->fd, "stats/lost_records_by_kernel"), "40\n");
	assert_string_equal(get(f->fd, "stats/lost_kernel"), "2\n");
	assert_string_equal(get(f->fd, "stats/throttled/TIMER"), "1\n");
	/* the same run writes again: still the earlier run's counts plus this one's */
	st.v[STAT_SAMPLES] = 600;
	assert_int_equal(stats_write_files(&st, f->fd, NULL), 0);
	assert_string_equal(get(f->fd, "stats/total_samples"), "1600\n");
	assert_string_equal(get(f->fd, "stats/lost_no_mapping"), "10\n");
	/* a new samples/current (the struct zeroed, as after a rotation) starts anew */
	memset(&st, 0, sizeof(st));
	put(f->fd, "stats/total_samples", "18446744073709551615\n");
	st.v[STAT_SAMPLES] = 5;
	assert_int_equal(stats_write_files(&st, f->fd, NULL), 0);
	/* saturates rather than wrapping to 4 */
	assert_string_equal(get(f->fd, "stats/total_samples"), "18446744073709551615\n");
}

/*
 * A full disk: -ENOSPC, and the files of the previous write stay as they
 * were. Before, each file was truncated and then not written: empty files
 * and "Input/output error".
 */
static void test_full_disk(void **state)
{
	struct fx *f = *state;
	struct op_stats st = { 0 };
	static char block[4096];
	int fd, rc;

	if (mount("test_stats", f->dir, "tmpfs", 0, "size=64k,nr_inodes=64")) {
		fprintf(stderr, "# SKIP: cannot mount a tmpfs on %s: %s (needs root)\n", f->dir,
			strerror(errno));
		skip();
	}
	f->mounted = true;
	close(f->fd);
	f->fd = open(f->dir, O_RDONLY | O_DIRECTORY);
	assert_true(f->fd >= 0);
	st.v[STAT_SAMPLES] = 100;
	st.v[STAT_LOST_NO_MAPPING] = 4;
	assert_int_equal(stats_write_files(&st, f->fd, NULL), 0);
	assert_string_equal(get(f->fd, "stats/total_samples"), "100\n");
	/* fill the file system */
	fd = openat(f->fd, "filler", O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	memset(block, 'x', sizeof(block));
	while (write(fd, block, sizeof(block)) > 0)
		;
	close(fd);
	st.v[STAT_SAMPLES] = 200;
	st.v[STAT_LOST_NO_MAPPING] = 9;
	st.v[STAT_LOST_SAMPLEFILE] = 1;
	rc = stats_write_files(&st, f->fd, NULL);
	if (rc != -ENOSPC)
		fail_msg("full disk: stats_write_files gave %d (%s), expected -ENOSPC", rc,
			 strerror(-rc));
	assert_string_equal(get(f->fd, "stats/total_samples"), "100\n");
	assert_string_equal(get(f->fd, "stats/lost_no_mapping"), "4\n");
	assert_string_equal(get(f->fd, "stats/lost_samplefile"), "");
	assert_string_equal(get(f->fd, "stats/.tmp.total_samples"), "");
	/* room again: the new counts */
	assert_int_equal(unlinkat(f->fd, "filler", 0), 0);
	assert_int_equal(stats_write_files(&st, f->fd, NULL), 0);
	assert_string_equal(get(f->fd, "stats/total_samples"), "200\n");
	assert_string_equal(get(f->fd, "stats/lost_samplefile"), "1\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_values),
		cmocka_unit_test_setup_teardown(test_write, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_append, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_full_disk, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
