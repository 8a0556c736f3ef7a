/*
 * test_fleet_lib.c - the library parts of issue 20: lib/op_cgroups (the
 * /proc/PID/cgroup parser over v2, v1 and hybrid hosts, container IDs and
 * systemd units of docker, containerd, CRI-O, podman and kubepods paths,
 * the index line written and read back, hostile lines refused, the loader
 * on a real file), lib/op_ksyms_store (one copy per content, a different
 * content kept apart, pruning what no session links) and the "<N>Hz"
 * event count of lib/op_events.
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
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

#include "op_cgroups.h"
#include "op_events.h"
#include "op_ksyms_store.h"
#include "op_session_layout.h"

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_from_proc(void **state)
{
	static const struct {
		const char *in, *want; /* want NULL: -EINVAL */
	} cases[] = {
		{ "0::/system.slice/nginx.service\n", "/system.slice/nginx.service" },
		/* hybrid: v2 is the root, v1 names the container */
		{ "9:name=systemd:/docker/" ID64 "\n4:memory:/docker/" ID64 "\n0::/\n",
		  "/docker/" ID64 },
		{ "4:memory:/a\n9:name=systemd:/b\n", "/b" },
		{ "4:memory:/a\n", "/a" },
		{ "0::/\n", "/" },
		{ "0::/x", "/x" }, /* no final newline */
		{ "", NULL },
		{ "garbage\n", NULL },
		{ "0::relative\n", NULL },
	};
	char path[OP_CGROUP_PATH_MAX + 1];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = op_cgroup_from_proc(cases[i].in, strlen(cases[i].in), path, sizeof(path));

		if (!cases[i].want) {
			assert_int_equal(rc, -EINVAL);
			continue;
		}
		assert_int_equal(rc, 0);
		assert_string_equal(path, cases[i].want);
	}
	/* a path longer than the bound is refused, not cut */
	{
		char big[OP_CGROUP_PATH_MAX + 16];

		memset(big, 'a', sizeof(big));
		memcpy(big, "0::/", 4);
		assert_int_equal(op_cgroup_from_proc(big, sizeof(big), path, sizeof(path)), -EINVAL);
	}
}

static void test_ids(void **state)
{
	static const struct {
		const char *path, *container, *unit;
	} cases[] = {
		{ "/system.slice/docker-" ID64 ".scope", ID64, "docker-" ID64 ".scope" },
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/"
		  "cri-containerd-" ID64 ".scope",
		  ID64, "cri-containerd-" ID64 ".scope" },
		{ "/machine.slice/libpod-" ID64 ".scope/container", ID64, "libpod-" ID64 ".scope" },
		{ "/kubepods/burstable/pod1234/" ID64, ID64, "" },
		{ "/docker/" ID64, ID64, "" },
		{ "/system.slice/crio-" ID64 ".scope", ID64, "crio-" ID64 ".scope" },
		{ "/system.slice/nginx.service", "", "nginx.service" },
		{ "/user.slice/user-0.slice/session-3.scope", "", "session-3.scope" },
		{ "/", "", "" },
		/* 63 digits, upper case: no container */
		{ "/docker/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde", "", "" },
		{ "/docker/0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", "",
		  "" },
	};
	struct op_cgroup_entry e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		op_cgroup_ids(cases[i].path, &e);
		assert_string_equal(e.container, cases[i].container);
		assert_string_equal(e.unit, cases[i].unit);
	}
}

static void test_line_roundtrip(void **state)
{
	static const char *const paths[] = { "/", "/system.slice/a b.service", "/x/%41\n/y", "/-",
					     "/system.slice/docker-" ID64 ".scope" };
	struct op_cgroup_entry e, back;
	char line[4096];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		int n;

		memset(&e, 0, sizeof(e));
		e.tgid = 4000000000u;
		e.start_ns = 123456789012345ull;
		strcpy(e.cgroup, paths[i]);
		op_cgroup_ids(e.cgroup, &e);
		if (i == 3)
			strcpy(e.unit, "-"); /* a value that is the "none" mark */
		n = op_cgroup_format(&e, line, sizeof(line));
		assert_true(n > 0);
		assert_int_equal(line[n - 1], '\n');
		/* one line, five fields */
		assert_null(memchr(line, '\n', (size_t)n - 1));
		assert_int_equal(op_cgroup_parse_line(line, (size_t)n - 1, &back), 0);
		assert_int_equal(back.tgid, e.tgid);
		assert_int_equal(back.start_ns, e.start_ns);
		assert_string_equal(back.cgroup, e.cgroup);
		assert_string_equal(back.container, e.container);
		assert_string_equal(back.unit, e.unit);
	}
	/* no room */
	assert_int_equal(op_cgroup_format(&e, line, 10), -ENOSPC);
}

static void test_line_hostile(void **state)
{
	static const char *const bad[] = {
		"",
		"1 2 / - ",
		"1 2 / -",
		"x 2 / - -",
		"1 y / - -",
		"4294967296 2 / - -",
		"1 2 relative - -",
		"1 2 /%zz - -",
		"1 2 /%00 - -",
		"1 2 /a\tb - -",
		"1 2 / - - extra",
		"1  2 / - -",
		"1 99999999999999999999 / - -",
	};
	struct op_cgroup_entry e;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(op_cgroup_parse_line(bad[i], strlen(bad[i]), &e), -EINVAL);
	assert_int_equal(op_cgroup_parse_line("7 8 /a%20b - x.service", 22, &e), 0);
	assert_string_equal(e.cgroup, "/a b");
	assert_string_equal(e.unit, "x.service");
}

static char tmpl[] = "/tmp/test_fleet_lib.XXXXXX";

static int count_cb(void *arg, const struct op_cgroup_entry *e)
{
	size_t *n = arg;

	assert_true(e->tgid == 10 || e->tgid == 11);
	(*n)++;
	return 0;
}

static void test_load(void **state)
{
	char *d = mkdtemp(tmpl), p[256];
	size_t n = 0, bad = 0;
	bool found = true;
	FILE *f;
	int dfd;

	(void)state;
	assert_non_null(d);
	dfd = open(d, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	assert_int_equal(op_cgroups_load(dfd, count_cb, &n, &found, &bad), 0);
	assert_false(found);
	snprintf(p, sizeof(p), "%s/stats", d);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/" OP_SESSION_CGROUPS_PATH, d);
	f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "%s\n10 1 /a - -\nbroken line\n11 2 /b - -\n12 3 /c - -", OP_CGROUPS_HEADER);
	fclose(f);
	assert_int_equal(op_cgroups_load(dfd, count_cb, &n, &found, &bad), 0);
	assert_true(found);
	assert_int_equal(n, 2);
	/* the broken line and the last one without its newline */
	assert_int_equal(bad, 2);
	unlink(p);
	/* a symbolic link is not followed */
	assert_int_equal(symlink("/etc/passwd", p), 0);
	assert_true(op_cgroups_load(dfd, count_cb, &n, &found, &bad) < 0);
	unlink(p);
	snprintf(p, sizeof(p), "%s/stats", d);
	rmdir(p);
	close(dfd);
	rmdir(d);
}

/* --- issue 20: reused pids --- */
/*
 * the index by tgid: a pid reused in another cgroup is ambiguous (no
 * entry found, counted); a move (same start within a tick or two) and a
 * reuse in the same cgroup are not
 */
static void test_index_reuse(void **state)
{
	char d[] = "/tmp/test_fleet_reuse.XXXXXX", p[256];
	struct op_cgroup_index x;
	const struct op_cgroup_entry *e;
	FILE *f;
	int dfd;

	(void)state;
	assert_non_null(mkdtemp(d));
	dfd = open(d, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	snprintf(p, sizeof(p), "%s/stats", d);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/" OP_SESSION_CGROUPS_PATH, d);
	f = fopen(p, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", OP_CGROUPS_HEADER);
	/* 5: reused in another cgroup 4 s later */
	fprintf(f, "5 1000000000 /a - -\n5 5000000000 /b - -\n");
	/* 6: one process, moved then exec'd; its fork line 5 ms off its /proc one */
	fprintf(f, "6 1000000000 /a - -\n6 1005000000 /c - -\n");
	/* 7: reused in the same cgroup: the label is true either way */
	fprintf(f, "7 1000000000 /a - -\n7 9000000000 /a - -\n");
	/* 8: reused in another cgroup, then back in the first: still two processes apart */
	fprintf(f, "8 1000000000 /a - -\n8 3000000000 /b - -\n8 3000000000 /a - -\n");
	fclose(f);
	assert_int_equal(op_cgroup_index_load(dfd, &x), 0);
	assert_int_equal(x.n, 4);
	assert_int_equal(x.reused, 1);
	assert_null(op_cgroup_index_find(&x, 5));
	e = op_cgroup_index_find(&x, 6);
	assert_non_null(e);
	assert_string_equal(e->cgroup, "/c");
	e = op_cgroup_index_find(&x, 7);
	assert_non_null(e);
	assert_string_equal(e->cgroup, "/a");
	/* 8: the second process moved into /a (same start): the last line wins, as for 6 */
	e = op_cgroup_index_find(&x, 8);
	assert_non_null(e);
	assert_string_equal(e->cgroup, "/a");
	op_cgroup_index_free(&x);
	unlink(p);
	snprintf(p, sizeof(p), "%s/stats", d);
	rmdir(p);
	close(dfd);
	rmdir(d);
}

/* write @text as stats/.tmp below @stats and commit it through the store */
static int store_put(int samples, int stats, const char *text)
{
	uint64_t h = op_ksyms_hash(OP_KSYMS_HASH_INIT, text, strlen(text));
	int fd = openat(stats, ".tmp", O_WRONLY | O_CREAT | O_EXCL, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	return op_ksyms_store_commit(samples, stats, ".tmp", OP_SESSION_KALLSYMS, h, strlen(text));
}

static void test_ksyms_store(void **state)
{
	char d[] = "/tmp/test_fleet_store.XXXXXX";
	int samples, a, b, c;
	struct stat sa, sb, sc;

	(void)state;
	assert_non_null(mkdtemp(d));
	samples = open(d, O_RDONLY | O_DIRECTORY);
	assert_true(samples >= 0);
	assert_int_equal(mkdirat(samples, "a", 0700), 0);
	assert_int_equal(mkdirat(samples, "b", 0700), 0);
	assert_int_equal(mkdirat(samples, "c", 0700), 0);
	a = openat(samples, "a", O_RDONLY | O_DIRECTORY);
	b = openat(samples, "b", O_RDONLY | O_DIRECTORY);
	c = openat(samples, "c", O_RDONLY | O_DIRECTORY);
	/* first: stored; same content: shared; other content: its own */
	assert_int_equal(store_put(samples, a, "ffffffff81000000 T _text\n"), 0);
	assert_int_equal(store_put(samples, b, "ffffffff81000000 T _text\n"), 1);
	assert_int_equal(store_put(samples, c, "ffffffff82000000 T _text\n"), 0);
	assert_int_equal(fstatat(a, OP_SESSION_KALLSYMS, &sa, 0), 0);
	assert_int_equal(fstatat(b, OP_SESSION_KALLSYMS, &sb, 0), 0);
	assert_int_equal(fstatat(c, OP_SESSION_KALLSYMS, &sc, 0), 0);
	assert_int_equal(sa.st_ino, sb.st_ino);
	assert_int_equal(sa.st_nlink, 3); /* a, b and the store */
	assert_true(sc.st_ino != sa.st_ino);
	assert_int_equal(sc.st_nlink, 2);
	/* no temporary left behind */
	assert_true(faccessat(b, ".tmp", F_OK, 0) && errno == ENOENT);
	/* nothing to prune while sessions link both */
	assert_int_equal(op_ksyms_store_prune(samples), 0);
	assert_int_equal(unlinkat(c, OP_SESSION_KALLSYMS, 0), 0);
	assert_int_equal(op_ksyms_store_prune(samples), 1);
	assert_int_equal(unlinkat(a, OP_SESSION_KALLSYMS, 0), 0);
	assert_int_equal(unlinkat(b, OP_SESSION_KALLSYMS, 0), 0);
	assert_int_equal(op_ksyms_store_prune(samples), 1);
	assert_int_equal(unlinkat(samples, OP_SESSION_KSYMS_STORE, AT_REMOVEDIR), 0);
	unlinkat(samples, "a", AT_REMOVEDIR);
	unlinkat(samples, "b", AT_REMOVEDIR);
	unlinkat(samples, "c", AT_REMOVEDIR);
	close(a);
	close(b);
	close(c);
	close(samples);
	rmdir(d);
}

static void test_event_freq(void **state)
{
	struct op_event_spec sp;
	struct op_events c;
	char err[256];
	uint32_t hz;

	(void)state;
	assert_true(op_parse_event_freq("99Hz", &hz) && hz == 99);
	assert_true(op_parse_event_freq("19hz", &hz) && hz == 19);
	assert_true(op_parse_event_freq("10000HZ", &hz) && hz == 10000);
	assert_false(op_parse_event_freq("0Hz", &hz));
	assert_int_equal(hz, UINT32_MAX);
	assert_false(op_parse_event_freq("10001Hz", &hz));
	assert_false(op_parse_event_freq("-5Hz", &hz));
	assert_false(op_parse_event_freq("Hz", &hz));
	assert_false(op_parse_event_freq("100000", &hz));
	assert_int_equal(hz, 0);
	assert_int_equal(op_events_timer(&c), 0);
	assert_int_equal(op_parse_event_spec(&c, "TIMER:99Hz", &sp, err, sizeof(err)), 0);
	assert_int_equal(sp.freq_hz, 99);
	assert_int_equal(sp.count, 1000000000ull / 99);
	assert_int_equal(op_parse_event_spec(&c, "TIMER:19Hz:0:0:1", &sp, err, sizeof(err)), 0);
	assert_int_equal(sp.freq_hz, 19);
	assert_false(sp.kernel);
	assert_int_equal(op_parse_event_spec(&c, "TIMER:0Hz", &sp, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "1..10000Hz"));
	assert_int_equal(op_parse_event_spec(&c, "TIMER:250000", &sp, err, sizeof(err)), 0);
	assert_int_equal(sp.freq_hz, 0);
	op_events_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_from_proc),      cmocka_unit_test(test_ids),
		cmocka_unit_test(test_line_roundtrip), cmocka_unit_test(test_line_hostile),
		cmocka_unit_test(test_load),           cmocka_unit_test(test_ksyms_store),
		cmocka_unit_test(test_event_freq),
		cmocka_unit_test(test_index_reuse), /* issue 20 */
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
