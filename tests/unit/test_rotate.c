/*
 * test_rotate.c - core/rotate.c on real directories: session names, moving
 * samples/current aside (save, reset replacing previous, refusals), the
 * kernel snapshot carried to the next current, rotate-TIME-SEQ names (never
 * reused, whatever the clock does) and pruning to the newest K rotate-*
 * sessions, several rotations within one second included.
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
#include <sys/stat.h>
#include <unistd.h>

#include "rotate.h"
#include "session.h"

struct fx {
	char dir[64];
	int fd; /* the samples directory */
};

static int fx_setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_rotate.XXXXXX");
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
	int p = open("/tmp", O_RDONLY | O_DIRECTORY);

	session_rm_tree(p, slash + 1);
	close(p);
	close(f->fd);
	free(f);
	return 0;
}

static void mk(int dfd, const char *path, const char *content)
{
	char buf[256], *p;
	int fd;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = strchr(buf, '/'); p; p = strchr(p + 1, '/')) {
		*p = 0;
		mkdirat(dfd, buf, 0755);
		*p = '/';
	}
	if (!content) {
		assert_int_equal(mkdirat(dfd, buf, 0755), 0);
		return;
	}
	fd = openat(dfd, buf, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	close(fd);
}

static bool exists(int dfd, const char *path)
{
	struct stat st;

	return fstatat(dfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static void test_names(void **state)
{
	static const struct {
		const char *name;
		bool ok;
	} t[] = {
		{ "run1", true },     { "a.b_c-d", true },  { "rotate-20260101T000000Z", true },
		{ "", false },        { ".hidden", false }, { "-x", false },
		{ "../x", false },    { "a/b", false },     { "current", false },
		{ "previous", false }, { "stats", false },  { "a b", false },
		{ "x\n", false },
		{ "0123456789012345678901234567890123456789012345678901234567890123", false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (rotate_name_ok(t[i].name) != t[i].ok)
			fail_msg("rotate_name_ok(\"%s\") != %d", t[i].name, t[i].ok);
	assert_false(rotate_name_ok(NULL));
}

static void test_move(void **state)
{
	struct fx *f = *state;
	char err[256];

	/* no current yet */
	assert_int_equal(rotate_move_current(f->fd, "run1", false, err, sizeof(err)), -ENOENT);
	mk(f->fd, "current/{root}/bin/x/TIMER.100000.0.all.all.all", "a");
	mk(f->fd, "current/stats/kallsyms", "ffffffff81000000 T _text\n");
	mk(f->fd, "current/stats/total_samples", "5\n");
	assert_int_equal(rotate_move_current(f->fd, "run1", false, err, sizeof(err)), 0);
	assert_false(exists(f->fd, "current"));
	assert_true(exists(f->fd, "run1/{root}/bin/x/TIMER.100000.0.all.all.all"));
	assert_true(exists(f->fd, "run1/stats/total_samples"));
	/* the next current gets the kernel snapshot, not the counters */
	assert_int_equal(rotate_keep_snapshot(f->fd, "run1"), 1);
	assert_true(exists(f->fd, "current/stats/kallsyms"));
	assert_false(exists(f->fd, "current/stats/total_samples"));
	/* a name in use is refused, bad names too */
	assert_int_equal(rotate_move_current(f->fd, "run1", false, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, "samples/run1 already exists"));
	assert_int_equal(rotate_move_current(f->fd, "../up", false, err, sizeof(err)), -EINVAL);
	assert_true(exists(f->fd, "current"));
	/* reset: previous is replaced */
	mk(f->fd, "previous/old", "o");
	assert_int_equal(rotate_move_current(f->fd, "previous", true, err, sizeof(err)), 0);
	assert_false(exists(f->fd, "previous/old"));
	assert_true(exists(f->fd, "previous/stats/kallsyms"));
	/* a save may not name previous */
	mk(f->fd, "current", NULL);
	assert_int_equal(rotate_move_current(f->fd, "previous", false, err, sizeof(err)), -EINVAL);
	/* no snapshot to carry: 0 files */
	assert_int_equal(rotate_keep_snapshot(f->fd, "nonexistent"), -ENOENT);
}

static void test_seq(void **state)
{
	static const struct {
		const char *name;
		uint64_t seq;
	} t[] = {
		{ "rotate-20231114T221320Z-000001", 1 },
		{ "rotate-20231114T221320Z-000042", 42 },
		{ "rotate-20231114T221320Z-1234567", 1234567 },
		{ "rotate-20231114T221320Z-999999999999", 999999999999ull },
		{ "rotate-20231114T221320Z-1000000000000", 0 }, /* 13 digits: not ours */
		{ "rotate-20231114T221320Z-18446744073709551616", 0 },
		{ "rotate-20231114T221320Z", 0 },               /* an older daemon's */
		{ "rotate-20231114T221320Z-01", 0 },
		{ "rotate-20231114T221320Z-00001", 0 },
		{ "rotate-20231114T221320Z-000001x", 0 },
		{ "rotate-2023111XT221320Z-000001", 0 },
		{ "rotate-20231114T221320-000001", 0 },
		{ "rotate-mine", 0 },
		{ "run-20231114T221320Z-000001", 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (rotate_seq(t[i].name) != t[i].seq)
			fail_msg("rotate_seq(\"%s\") = %llu, expected %llu", t[i].name,
				 (unsigned long long)rotate_seq(t[i].name),
				 (unsigned long long)t[i].seq);
}

static void test_stamp_and_prune(void **state)
{
	struct fx *f = *state;
	char name[ROTATE_NAME_MAX];
	uint64_t seq = 0;
	char **v;
	size_t n, i;
	time_t t = 1700000000; /* 2023-11-14T22:13:20Z */

	/* left by an older daemon: older than any numbered name */
	mk(f->fd, "rotate-20231114T231320Z", NULL);
	mk(f->fd, "rotate-20231114T231320Z-01", NULL);
	assert_int_equal(rotate_stamp_name(f->fd, t, &seq, name, sizeof(name)), 0);
	assert_string_equal(name, "rotate-20231114T221320Z-000001");
	assert_int_equal(seq, 1);
	assert_true(rotate_name_ok(name));
	mk(f->fd, name, NULL);
	assert_int_equal(rotate_stamp_name(f->fd, t, &seq, name, sizeof(name)), 0);
	assert_string_equal(name, "rotate-20231114T221320Z-000002");
	mk(f->fd, name, NULL);
	/* the clock went back an hour: still the newest */
	assert_int_equal(rotate_stamp_name(f->fd, t - 3600, &seq, name, sizeof(name)), 0);
	assert_string_equal(name, "rotate-20231114T211320Z-000003");
	mk(f->fd, name, NULL);
	/* a restarted daemon (seq 0) goes on after the highest number found */
	seq = 0;
	assert_int_equal(rotate_stamp_name(f->fd, t + 60, &seq, name, sizeof(name)), 0);
	assert_string_equal(name, "rotate-20231114T221420Z-000004");
	mk(f->fd, name, NULL);
	/* a file (not a directory) in the way is stepped over */
	mk(f->fd, "rotate-20231114T221520Z-000005", "x");
	assert_int_equal(rotate_stamp_name(f->fd, t + 120, &seq, name, sizeof(name)), 0);
	assert_string_equal(name, "rotate-20231114T221520Z-000006");
	mk(f->fd, name, NULL);
	mk(f->fd, "run1", NULL); /* saved by hand: never pruned */
	assert_int_equal(rotate_list(f->fd, &v, &n), 0);
	assert_int_equal(n, 7);
	assert_string_equal(v[0], "rotate-20231114T231320Z");
	assert_string_equal(v[1], "rotate-20231114T231320Z-01");
	assert_string_equal(v[2], "rotate-20231114T221320Z-000001");
	assert_string_equal(v[4], "rotate-20231114T211320Z-000003");
	assert_string_equal(v[6], "rotate-20231114T221520Z-000006");
	rotate_free_list(v, n);

	assert_int_equal(rotate_prune(f->fd, 3), 4);
	assert_int_equal(rotate_list(f->fd, &v, &n), 0);
	assert_int_equal(n, 3);
	/* the newest three are left, the one made after the clock went back among them */
	assert_string_equal(v[0], "rotate-20231114T211320Z-000003");
	assert_string_equal(v[1], "rotate-20231114T221420Z-000004");
	assert_string_equal(v[2], "rotate-20231114T221520Z-000006");
	rotate_free_list(v, n);
	assert_true(exists(f->fd, "run1"));
	assert_int_equal(rotate_prune(f->fd, 3), 0);
	assert_int_equal(rotate_prune(f->fd, 0), 3);
	assert_int_equal(rotate_list(f->fd, &v, &n), 0);
	assert_int_equal(n, 0);
	rotate_free_list(v, n);
	/* all pruned: the daemon's own number still goes on, no name comes back */
	assert_int_equal(rotate_stamp_name(f->fd, t + 120, &seq, name, sizeof(name)), 0);
	assert_string_equal(name, "rotate-20231114T221520Z-000007");
	/* a short buffer */
	assert_int_equal(rotate_stamp_name(f->fd, t, &seq, name, 20), -ENAMETOOLONG);
	(void)i;
}

/*
 * --rotate-keep=K then many rotations within one second, as the daemon does
 * them (prune to K-1, name, move): the newest K are the ones left, and no
 * name is given twice. The old names were reused once pruned, and pruning
 * by name then removed the newest-but-one.
 */
static void test_same_second(void **state)
{
	struct fx *f = *state;
	char made[8][ROTATE_NAME_MAX];
	unsigned keep;
	uint64_t seq = 0;
	char **v;
	size_t n;
	int i, j;

	for (keep = 1; keep <= 2; keep++) {
		for (i = 0; i < 4; i++) {
			int k = (int)(keep - 1) * 4 + i;

			assert_true(rotate_prune(f->fd, keep - 1) >= 0);
			assert_int_equal(rotate_stamp_name(f->fd, 1700000000, &seq, made[k],
							   sizeof(made[k])), 0);
			for (j = 0; j < k; j++)
				if (!strcmp(made[j], made[k]))
					fail_msg("rotation %d reused the name %s", k, made[k]);
			mk(f->fd, made[k], NULL);
		}
		assert_int_equal(rotate_list(f->fd, &v, &n), 0);
		assert_int_equal(n, keep);
		if (strcmp(v[keep - 1], made[keep * 4 - 1]) ||
		    (keep == 2 && strcmp(v[0], made[keep * 4 - 2])))
			fail_msg("keep %u: kept %s %s, expected the newest %s %s", keep, v[0],
				 keep == 2 ? v[1] : "", keep == 2 ? made[6] : "",
				 made[keep * 4 - 1]);
		rotate_free_list(v, n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_seq),
		cmocka_unit_test_setup_teardown(test_move, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_stamp_and_prune, fx_setup, fx_teardown),
		cmocka_unit_test_setup_teardown(test_same_second, fx_setup, fx_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
