/*
 * test_kernel.c - the kernel plugin (plugins/kernel/) through the mock host:
 * the session snapshot, module resolution with the rate-limited re-read, the
 * kptr_restrict path, and garbage input (the line parsers: test_ksyms.c).
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE /* nftw, mkdtemp */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kernel.h"
#include "mock_host.h"

extern const struct op_ext_descriptor oprofile_ext_v1;

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

/* ------------------------------------------------------------------ */
/* fixtures                                                            */
/* ------------------------------------------------------------------ */

static char g_data[PATH_MAX];  /* tests/data/kernel in the source tree */
static char g_tmp[PATH_MAX];   /* scratch dir under the build dir */

static void path_of(char *out, const char *a, const char *b)
{
	if (snprintf(out, PATH_MAX, "%s/%s", a, b) >= PATH_MAX)
		fail_msg("path too long: %s/%s", a, b);
}

static char *slurp(const char *path, size_t *len_out)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, len = 0, n;

	if (!f)
		return NULL;
	do {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n);
	fclose(f);
	buf[len] = '\0';
	if (len_out)
		*len_out = len;
	return buf;
}

static void spit(const char *path, const void *data, size_t len, const char *mode)
{
	FILE *f = fopen(path, mode);

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void copy_file(const char *from, const char *to)
{
	size_t len;
	char *s = slurp(from, &len);

	assert_non_null(s);
	spit(to, s, len, "wb");
	free(s);
}

static int rm_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	const char *src = getenv("OP_SRCDIR");
	char tmpl[] = "test_kernel.tmp.XXXXXX";

	(void)state;
	snprintf(g_data, sizeof(g_data), "%s/tests/data/kernel", src && *src ? src : TOP_SRCDIR);
	if (!mkdtemp(tmpl))
		return -1;
	if (!realpath(tmpl, g_tmp))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return nftw(g_tmp, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* a fresh scratch sub-directory g_tmp/name */
static void scratch(char *out, const char *name)
{
	path_of(out, g_tmp, name);
	nftw(out, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	assert_int_equal(mkdir(out, 0755), 0);
}

static struct mock_host *kernel_up(const char *proc, const char *session, const char *extra)
{
	struct mock_host *mh = mock_host_new();
	char args[PATH_MAX + 64];

	snprintf(args, sizeof(args), "proc=%s%s%s", proc, extra ? "," : "", extra ? extra : "");
	if (session)
		mock_host_set_session_dir(mh, session);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, args), 0);
	assert_true(mh->has_kernel);
	assert_int_equal(mh->nr_stats, 1);
	/* the kallsyms pass runs on a helper thread: its files and messages now */
	kernel_wait(mh->kernel_priv);
	return mh;
}

static int resolve(struct mock_host *mh, uint64_t pc, struct op_kernel_image *img)
{
	memset(img, 0, sizeof(*img));
	return mh->kernel_ops.resolve(mh->kernel_priv, pc, img);
}

static uint64_t stat_of(struct mock_host *mh, const char *name)
{
	uint64_t v = 0;

	mock_host_print_stats(mh);
	if (!mock_host_stat(mh, name, &v))
		fail_msg("no stat %s", name);
	return v;
}

/* ------------------------------------------------------------------ */
/* snapshot                                                            */
/* ------------------------------------------------------------------ */

static size_t dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void test_snapshot_exact(void **state)
{
	char proc[PATH_MAX], session[PATH_MAX], p[PATH_MAX], q[PATH_MAX];
	struct mock_host *mh;
	char *got, *want;
	size_t got_len, want_len;
	struct stat sb;
	mode_t old;

	(void)state;
	path_of(proc, g_data, "proc-a");
	scratch(session, "snap");
	/*
	 * the snapshot is as readable as its directory, whatever the umask: a
	 * root daemon's private session (umask 077) keeps the kernel addresses
	 * to root, a 0755 one shares them as before (below)
	 */
	old = umask(077);
	mh = kernel_up(proc, session, NULL);
	umask(old);

	path_of(p, session, "samples/current/stats/kallsyms");
	path_of(q, proc, "kallsyms.expected");
	got = slurp(p, &got_len);
	want = slurp(q, &want_len);
	assert_non_null(got);
	assert_non_null(want);
	assert_int_equal(got_len, want_len);
	assert_memory_equal(got, want, want_len);
	free(got);
	free(want);
	assert_int_equal(lstat(p, &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0600);

	path_of(p, session, "samples/current/stats/modules");
	path_of(q, proc, "modules");
	got = slurp(p, &got_len);
	want = slurp(q, &want_len);
	assert_non_null(got);
	assert_int_equal(got_len, want_len);
	assert_memory_equal(got, want, want_len);
	free(got);
	free(want);
	assert_int_equal(stat(p, &sb), 0);
	assert_int_equal(sb.st_mode & 07777, 0600);

	/* nothing but the two files (no temporaries left behind) */
	path_of(p, session, "samples/current/stats");
	assert_int_equal(dir_entries(p), 2);

	/* counted: 25 lines, 9 malformed, 12 text symbols; 2 modules + 1 bad line */
	assert_int_equal(stat_of(mh, "kallsyms_lines"), 25);
	assert_int_equal(stat_of(mh, "kallsyms_bad_lines"), 9);
	assert_int_equal(stat_of(mh, "kallsyms_text_symbols"), 12);
	assert_int_equal(stat_of(mh, "modules"), 2);
	assert_int_equal(stat_of(mh, "modules_bad_lines"), 1);
	/* the first malformed lines are named with file:line, then a summary */
	assert_true(mock_host_log_contains(mh, OP_LOG_WARN, "proc-a/kallsyms:7: not a kallsyms line"));
	assert_true(mock_host_log_contains(mh, OP_LOG_WARN, "9 malformed lines skipped"));
	assert_true(mock_host_log_contains(mh, OP_LOG_WARN, "proc-a/modules:3: not a modules line"));
	assert_int_equal(mock_host_log_count(mh, OP_LOG_WARN, "not a kallsyms line"), 5);
	mock_host_free(mh);
}

static void test_snapshot_replace_and_symlink(void **state)
{
	char proc[PATH_MAX], session[PATH_MAX], other[PATH_MAX], p[PATH_MAX];
	struct mock_host *mh;
	char *got;

	(void)state;
	path_of(proc, g_data, "proc-a");

	/* an old snapshot is replaced whole */
	scratch(session, "replace");
	path_of(p, session, "samples");
	assert_int_equal(mkdir(p, 0755), 0);
	path_of(p, session, "samples/current");
	assert_int_equal(mkdir(p, 0755), 0);
	path_of(p, session, "samples/current/stats");
	assert_int_equal(mkdir(p, 0755), 0);
	path_of(p, session, "samples/current/stats/kallsyms");
	spit(p, "stale\n", 6, "w");
	mh = kernel_up(proc, session, NULL);
	got = slurp(p, NULL);
	assert_non_null(got);
	assert_null(strstr(got, "stale"));
	assert_non_null(strstr(got, "ffffffff81000000 T _text\n"));
	free(got);
	mock_host_free(mh);
	{
		struct stat sb;

		/* in a 0755 session (a user's, umask 022): readable by all, as before */
		assert_int_equal(chmod(p, 0600), 0);
		mh = kernel_up(proc, session, NULL);
		assert_int_equal(stat(p, &sb), 0);
		assert_int_equal(sb.st_mode & 07777, 0644);
		mock_host_free(mh);
	}

	/* a symlinked stats directory is refused, the plugin still works */
	scratch(session, "symlink");
	scratch(other, "elsewhere");
	path_of(p, session, "samples");
	assert_int_equal(mkdir(p, 0755), 0);
	path_of(p, session, "samples/current");
	assert_int_equal(mkdir(p, 0755), 0);
	path_of(p, session, "samples/current/stats");
	assert_int_equal(symlink(other, p), 0);
	mh = kernel_up(proc, session, NULL);
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "a symlink is refused"));
	assert_int_equal(dir_entries(other), 0);
	mock_host_free(mh);

	/* no session directory: no snapshot, still a resolver */
	mh = kernel_up(proc, NULL, NULL);
	assert_true(mock_host_log_contains(mh, OP_LOG_INFO, "no kernel symbol snapshot"));
	mock_host_free(mh);
}

/* ------------------------------------------------------------------ */
/* resolution                                                          */
/* ------------------------------------------------------------------ */

static void test_resolve_modules(void **state)
{
	char proc[PATH_MAX];
	struct op_kernel_image img;
	struct mock_host *mh;
	op_cookie_t vmlinux, moda, modb;

	(void)state;
	path_of(proc, g_data, "proc-a");
	mh = kernel_up(proc, NULL, NULL);
	vmlinux = mock_host_cookie_of(mh, "vmlinux");
	moda = mock_host_cookie_of(mh, "moda");
	modb = mock_host_cookie_of(mh, "modb");
	assert_true(vmlinux && moda && modb);
	assert_true(mh->cookies[vmlinux - 1].is_kernel && mh->cookies[moda - 1].is_kernel);
	/* the bad modules line named no module */
	assert_int_equal(mock_host_cookie_of(mh, "modc"), 0);

	/* kernel text: [_text, _etext) */
	assert_int_equal(resolve(mh, 0xffffffff81002010ull, &img), 0);
	assert_int_equal(img.size, sizeof(img));
	assert_int_equal(img.cookie, vmlinux);
	assert_int_equal(img.start, 0xffffffff81000000ull);
	assert_int_equal(img.end, 0xffffffff81a00000ull);
	assert_int_equal(resolve(mh, 0xffffffff81000000ull, &img), 0);
	assert_int_equal(img.cookie, vmlinux);

	/* module A, module B (and A again: the cache must not stick to B) */
	assert_int_equal(resolve(mh, 0xffffffffc0001100ull, &img), 0);
	assert_int_equal(img.cookie, moda);
	assert_int_equal(img.start, 0xffffffffc0000000ull);
	assert_int_equal(img.end, 0xffffffffc0010000ull);
	assert_int_equal(resolve(mh, 0xffffffffc0103fffull, &img), 0);
	assert_int_equal(img.cookie, modb);
	assert_int_equal(img.start, 0xffffffffc0100000ull);
	assert_int_equal(img.end, 0xffffffffc0104000ull);
	assert_int_equal(resolve(mh, 0xffffffffc000ffffull, &img), 0);
	assert_int_equal(img.cookie, moda);

	/* outside everything */
	assert_int_equal(resolve(mh, 0xffffffff81a00000ull, &img), -ENOENT); /* _etext */
	assert_int_equal(resolve(mh, 0xffffffffc0010000ull, &img), -ENOENT); /* after A */
	assert_int_equal(resolve(mh, 0xffffffffc0104000ull, &img), -ENOENT); /* after B */
	assert_int_equal(resolve(mh, 0x400000, &img), -ENOENT);
	assert_int_equal(resolve(mh, 0, &img), -ENOENT);
	assert_int_equal(resolve(mh, UINT64_MAX, &img), -ENOENT);

	/*
	 * pseudo-module code above a module cannot share the kernel image's
	 * contiguous range: it becomes its own kernel image
	 */
	assert_int_equal(resolve(mh, 0xffffffffc0200010ull, &img), 0);
	assert_string_equal(mock_host_cookie_path(mh, img.cookie), "__builtin__ftrace");
	assert_int_equal(img.start, 0xffffffffc0200000ull);
	assert_true(img.end > 0xffffffffc0200010ull);
	assert_true(img.end <= 0xffffffffc0300000ull);

	assert_int_equal(stat_of(mh, "kernel_lookups"), 3);
	assert_int_equal(stat_of(mh, "module_lookups"), 3);
	assert_int_equal(stat_of(mh, "unresolved"), 6);
	/* the first miss came within a second of init: no re-read yet */
	assert_int_equal(stat_of(mh, "modules_rereads"), 0);
	mock_host_free(mh);
}

static void test_resolve_pseudo_without_modules(void **state)
{
	char proc[PATH_MAX], p[PATH_MAX], q[PATH_MAX];
	struct op_kernel_image img;
	struct mock_host *mh;
	op_cookie_t vmlinux;

	(void)state;
	/* like this VM: kallsyms with [__builtin__ftrace] and [bpf], no /proc/modules */
	scratch(proc, "proc-nomod");
	path_of(p, g_data, "proc-a/kallsyms");
	path_of(q, proc, "kallsyms");
	copy_file(p, q);
	mh = kernel_up(proc, NULL, NULL);
	vmlinux = mock_host_cookie_of(mh, "vmlinux");
	assert_int_equal(stat_of(mh, "modules"), 0);

	assert_int_equal(resolve(mh, 0xffffffffc0200010ull, &img), 0);
	assert_int_equal(img.cookie, vmlinux);
	assert_int_equal(img.start, 0xffffffff81000000ull); /* key = pc - _text */
	assert_true(img.end > 0xffffffffc0200010ull);
	assert_int_equal(resolve(mh, 0xffffffffc0300abcull, &img), 0);
	assert_int_equal(img.cookie, vmlinux);
	assert_int_equal(img.start, 0xffffffff81000000ull);
	/* module symbols without a modules file are not images */
	assert_int_equal(resolve(mh, 0xffffffffc0001000ull, &img), -ENOENT);
	assert_int_equal(stat_of(mh, "kernel_lookups"), 2);
	mock_host_free(mh);
}

/* no _text: _stext starts the image; no _etext: the page after the last text symbol ends it */
static void test_text_range_fallbacks(void **state)
{
	static const char ks[] = "ffffffff81000100 T _stext\n"
				 "ffffffff81000200 t early\n"
				 "ffffffff81234567 T last_function\n"
				 "ffffffff81f00000 D data_after_text\n"
				 "ffffffffc0000000 t in_a_module\t[m]\n";
	static const char ks2[] = "ffffffff81000300 t first\nffffffff81000400 T second\n";
	char proc[PATH_MAX], p[PATH_MAX];
	struct op_kernel_image img;
	struct mock_host *mh;

	(void)state;
	scratch(proc, "proc-fallback");
	path_of(p, proc, "kallsyms");
	spit(p, ks, sizeof(ks) - 1, "w");
	mh = kernel_up(proc, NULL, NULL);
	assert_int_equal(resolve(mh, 0xffffffff81234600ull, &img), 0);
	assert_int_equal(img.start, 0xffffffff81000100ull);
	assert_int_equal(img.end, 0xffffffff81235000ull);
	assert_int_equal(resolve(mh, 0xffffffff81235000ull, &img), -ENOENT);
	assert_int_equal(resolve(mh, 0xffffffff810000ffull, &img), -ENOENT);
	mock_host_free(mh);

	/* neither _text nor _stext: the lowest kernel text symbol */
	spit(p, ks2, sizeof(ks2) - 1, "w");
	mh = kernel_up(proc, NULL, NULL);
	assert_int_equal(resolve(mh, 0xffffffff81000300ull, &img), 0);
	assert_int_equal(img.start, 0xffffffff81000300ull);
	assert_int_equal(img.end, 0xffffffff81001000ull);
	mock_host_free(mh);
}

/*
 * The snapshot keeps every function, t, T, w and W (perf's rule): a
 * module's weak functions show as 'w' and opreport names them from it;
 * weak objects (v, V) stay out with the data.
 */
static void test_snapshot_weak_functions(void **state)
{
	static const char ks[] = "ffffffff81000000 T _text\n"
				 "ffffffff81000100 W kernel_weak\n"
				 "ffffffff81000200 V weak_object\n"
				 "ffffffff81a00000 T _etext\n"
				 "ffffffffc0001000 t mod_init\t[moda]\n"
				 "ffffffffc0001100 w mod_weak\t[moda]\n"
				 "ffffffffc0001200 v mod_weak_object\t[moda]\n";
	static const char want[] = "ffffffff81000000 T _text\n"
				   "ffffffff81000100 W kernel_weak\n"
				   "ffffffff81a00000 T _etext\n"
				   "ffffffffc0001000 t mod_init\t[moda]\n"
				   "ffffffffc0001100 w mod_weak\t[moda]\n";
	char proc[PATH_MAX], session[PATH_MAX], p[PATH_MAX];
	struct mock_host *mh;
	char *got;

	(void)state;
	scratch(proc, "proc-weak");
	scratch(session, "weak");
	path_of(p, proc, "kallsyms");
	spit(p, ks, sizeof(ks) - 1, "w");
	mh = kernel_up(proc, session, NULL);
	assert_int_equal(stat_of(mh, "kallsyms_text_symbols"), 5);
	path_of(p, session, "samples/current/stats/kallsyms");
	got = slurp(p, NULL);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
	mock_host_free(mh);
}

struct fake_clock {
	uint64_t now;
};

static uint64_t fake_now(void *arg)
{
	return ((struct fake_clock *)arg)->now;
}

static void test_reread_rate_limited(void **state)
{
	static const char moda[] = "moda 65536 0 - Live 0xffffffffc0000000\n";
	static const char modb[] = "modb 16384 2 moda, Live 0xffffffffc0100000 (OE)\n";
	static const char modc[] = "modc 8192 0 - Live 0xffffffffc0500000\n";
	char proc[PATH_MAX], p[PATH_MAX], q[PATH_MAX];
	struct fake_clock clk = { 0 };
	struct op_kernel_image img;
	struct mock_host *mh = mock_host_new();
	struct kernel_state *st;
	char args[PATH_MAX + 8];

	(void)state;
	scratch(proc, "proc-reread");
	path_of(p, g_data, "proc-a/kallsyms");
	path_of(q, proc, "kallsyms");
	copy_file(p, q);
	path_of(q, proc, "modules");
	spit(q, moda, sizeof(moda) - 1, "w");
	snprintf(args, sizeof(args), "proc=%s", proc);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, args), 0);
	st = mh->kernel_priv;
	kernel_set_clock(st, fake_now, &clk);
	st->last_reread_ns = 0; /* "init" happened at t = 0 */

	assert_int_equal(resolve(mh, 0xffffffffc0001000ull, &img), 0);
	assert_int_equal(resolve(mh, 0xffffffffc0100010ull, &img), -ENOENT);
	assert_int_equal(stat_of(mh, "modules_rereads"), 0);
	assert_int_equal(stat_of(mh, "modules_rereads_skipped"), 1);

	/* modb is loaded */
	spit(q, modb, sizeof(modb) - 1, "a");
	clk.now = 500000000; /* 0.5 s: still rate-limited */
	assert_int_equal(resolve(mh, 0xffffffffc0100010ull, &img), -ENOENT);
	assert_int_equal(stat_of(mh, "modules_rereads"), 0);
	clk.now = 1000000000; /* 1 s after the last read: re-read, found */
	assert_int_equal(resolve(mh, 0xffffffffc0100010ull, &img), 0);
	assert_int_equal(img.cookie, mock_host_cookie_of(mh, "modb"));
	assert_int_equal(img.start, 0xffffffffc0100000ull);
	assert_int_equal(stat_of(mh, "modules_rereads"), 1);
	assert_int_equal(stat_of(mh, "modules"), 2);

	/* modc appears right after: one second must pass again */
	spit(q, modc, sizeof(modc) - 1, "a");
	clk.now = 1900000000;
	assert_int_equal(resolve(mh, 0xffffffffc0500000ull, &img), -ENOENT);
	assert_int_equal(resolve(mh, 0xffffffffc0500000ull, &img), -ENOENT);
	assert_int_equal(stat_of(mh, "modules_rereads"), 1);
	clk.now = 2000000001;
	assert_int_equal(resolve(mh, 0xffffffffc0500000ull, &img), 0);
	assert_int_equal(img.cookie, mock_host_cookie_of(mh, "modc"));
	assert_int_equal(stat_of(mh, "modules_rereads"), 2);

	/* an address nothing covers, after the interval: re-read, still unresolved */
	clk.now = 3500000000ull;
	assert_int_equal(resolve(mh, 0xffffffffc0900000ull, &img), -ENOENT);
	assert_int_equal(stat_of(mh, "modules_rereads"), 3);
	/* a module unloaded: gone after the next re-read */
	spit(q, moda, sizeof(moda) - 1, "w");
	clk.now = 4600000000ull;
	assert_int_equal(resolve(mh, 0xffffffffc0900000ull, &img), -ENOENT);
	assert_int_equal(resolve(mh, 0xffffffffc0100010ull, &img), -ENOENT);
	assert_int_equal(stat_of(mh, "modules"), 1);
	/* modb, modb, modc, modc, c09 x2, modb: 7 unresolved */
	assert_int_equal(stat_of(mh, "unresolved"), 7);
	assert_int_equal(stat_of(mh, "module_lookups"), 3);
	mock_host_free(mh);
}

static void test_kptr_restrict_zero(void **state)
{
	char proc[PATH_MAX], session[PATH_MAX], p[PATH_MAX];
	struct op_kernel_image img;
	struct mock_host *mh;
	op_cookie_t vmlinux;
	char *snap;

	(void)state;
	path_of(proc, g_data, "proc-zero");
	scratch(session, "zero");
	mh = kernel_up(proc, session, NULL);
	assert_true(mock_host_log_contains(
		mh, OP_LOG_WARN,
		"kallsyms shows zero addresses (kptr_restrict=1, not root?): kernel samples will be "
		"attributed to the kernel image without symbols"));
	vmlinux = mock_host_cookie_of(mh, "vmlinux");
	assert_int_equal(resolve(mh, 0xffffffff81002000ull, &img), 0);
	assert_int_equal(img.cookie, vmlinux);
	assert_int_equal(img.start, KERNEL_HALF_START);
	assert_int_equal(resolve(mh, 0xffffffffc0001000ull, &img), 0);
	assert_int_equal(img.cookie, vmlinux);
	assert_int_equal(img.start, KERNEL_HALF_START);
	assert_int_equal(resolve(mh, 0xffffffff80000000ull, &img), 0);
	assert_int_equal(resolve(mh, 0xffffffff7fffffffull, &img), -ENOENT);
	assert_int_equal(resolve(mh, 0x400000, &img), -ENOENT);
	/* the (useless) zero-address snapshot is still what the machine showed */
	path_of(p, session, "samples/current/stats/kallsyms");
	snap = slurp(p, NULL);
	assert_non_null(snap);
	assert_non_null(strstr(snap, "0000000000000000 T _text\n"));
	free(snap);
	assert_int_equal(stat_of(mh, "kernel_lookups"), 3);
	assert_int_equal(stat_of(mh, "modules"), 0);
	mock_host_free(mh);
}

/* ------------------------------------------------------------------ */
/* garbage, arguments, the real /proc                                  */
/* ------------------------------------------------------------------ */

static void resolve_a_few(struct mock_host *mh)
{
	static const uint64_t pcs[] = { 0, 1, 0x400000, 0xffffffff80000000ull,
					0xffffffff81000000ull, 0xffffffffc0000000ull,
					UINT64_MAX - 1, UINT64_MAX };
	struct op_kernel_image img;
	size_t i;

	for (i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++) {
		int rc = resolve(mh, pcs[i], &img);

		assert_true(rc == 0 || rc == -ENOENT);
		if (!rc) {
			assert_non_null(mock_host_cookie_path(mh, img.cookie));
			assert_true(pcs[i] >= img.start && pcs[i] < img.end);
		}
	}
}

static void test_garbage(void **state)
{
	char proc[PATH_MAX], session[PATH_MAX], p[PATH_MAX];
	struct mock_host *mh;
	unsigned seed = 12345, round;
	size_t len = 256 * 1024, i;
	char *buf = malloc(len);

	(void)state;
	assert_non_null(buf);
	for (round = 0; round < 4; round++) {
		scratch(proc, "proc-garbage");
		scratch(session, "garbage");
		for (i = 0; i < len; i++) {
			seed = seed * 1103515245u + 12345u;
			buf[i] = (char)(seed >> 16);
			/* rounds 2, 3: mostly kallsyms-like characters, long and NUL-laden lines */
			if (round >= 2 && (seed >> 8) % 7)
				buf[i] = "0123456789abcdef Tt[]\n\tx"[(seed >> 20) % 24];
			if (round == 3 && i % 5000 == 0)
				buf[i] = '\0';
		}
		path_of(p, proc, "kallsyms");
		spit(p, buf, len, "wb");
		path_of(p, proc, "modules");
		spit(p, buf + 1000, len - 1000, "wb");
		mh = kernel_up(proc, session, NULL);
		resolve_a_few(mh);
		/* some lines were junk and counted; the plugin did not die */
		assert_true(stat_of(mh, "kallsyms_bad_lines") > 0);
		mock_host_free(mh);
	}

	/* one 1 MiB line without a newline, and an empty modules file */
	scratch(proc, "proc-longline");
	buf = realloc(buf, 1 << 20);
	assert_non_null(buf);
	memset(buf, 'f', 1 << 20);
	path_of(p, proc, "kallsyms");
	spit(p, buf, 1 << 20, "wb");
	path_of(p, proc, "modules");
	spit(p, "", 0, "wb");
	mh = kernel_up(proc, NULL, NULL);
	assert_int_equal(stat_of(mh, "kallsyms_bad_lines"), 1);
	assert_true(mock_host_log_contains(mh, OP_LOG_WARN, "has no valid symbol line"));
	resolve_a_few(mh);
	mock_host_free(mh);
	free(buf);

	/* no kallsyms at all */
	scratch(proc, "proc-empty");
	mh = kernel_up(proc, NULL, NULL);
	assert_true(mock_host_log_contains(mh, OP_LOG_WARN, "cannot read"));
	resolve_a_few(mh);
	mock_host_free(mh);
}

static void test_args(void **state)
{
	char proc[PATH_MAX], args[PATH_MAX + 64];
	struct op_kernel_image img;
	struct mock_host *mh;
	static const char *const bad[] = { "foo=1", "proc=", "vmlinux", "vmlinux=", ",",
					   "proc=/x,bogus" };
	size_t i;

	(void)state;
	path_of(proc, g_data, "proc-a");
	mh = kernel_up(proc, NULL, "vmlinux=/nonexistent/boot/vmlinux-6.18");
	assert_int_equal(resolve(mh, 0xffffffff81002000ull, &img), 0);
	assert_string_equal(mock_host_cookie_path(mh, img.cookie), "/nonexistent/boot/vmlinux-6.18");
	assert_true(mock_host_log_contains(mh, OP_LOG_WARN, "vmlinux /nonexistent/boot/vmlinux-6.18"));
	assert_int_equal(mock_host_cookie_of(mh, "vmlinux"), 0);
	mock_host_free(mh);

	/* config plugins.kernel.vmlinux; the argument wins over it */
	mh = mock_host_new();
	mock_host_set_config_string(mh, "vmlinux", "/cfg/vmlinux");
	snprintf(args, sizeof(args), "proc=%s", proc);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, args), 0);
	assert_int_equal(resolve(mh, 0xffffffff81002000ull, &img), 0);
	assert_string_equal(mock_host_cookie_path(mh, img.cookie), "/cfg/vmlinux");
	mock_host_free(mh);
	mh = mock_host_new();
	mock_host_set_config_string(mh, "vmlinux", "/cfg/vmlinux");
	snprintf(args, sizeof(args), "vmlinux=/arg/vmlinux,proc=%s", proc);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, args), 0);
	assert_int_equal(resolve(mh, 0xffffffff81002000ull, &img), 0);
	assert_string_equal(mock_host_cookie_path(mh, img.cookie), "/arg/vmlinux");
	mock_host_free(mh);

	/* proc root from the host when no proc= is given */
	mh = mock_host_new();
	mock_host_set_proc_root(mh, proc);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, ""), 0);
	assert_int_equal(resolve(mh, 0xffffffffc0100000ull, &img), 0);
	assert_string_equal(mock_host_cookie_path(mh, img.cookie), "modb");
	mock_host_free(mh);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mh = mock_host_new();
		if (mock_host_init(mh, &oprofile_ext_v1, bad[i]) != -EINVAL)
			fail_msg("args '%s' accepted", bad[i]);
		assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "expected vmlinux=PATH or proc=DIR"));
		assert_false(mh->has_kernel);
		assert_int_equal(mh->nr_stats, 0);
		mock_host_free(mh);
	}
}

/* the machine's own /proc: real kallsyms, and no /proc/modules on this VM */
static void test_real_proc(void **state)
{
	char session[PATH_MAX], p[PATH_MAX];
	struct op_kernel_image img;
	struct mock_host *mh;
	unsigned long long text = 0;
	char line[512], *snap;
	bool found = false;
	FILE *f = fopen("/proc/kallsyms", "r");

	(void)state;
	if (!f)
		skip();
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx T _text", &text) == 1 && strstr(line, " T _text\n")) {
			found = true;
			break;
		}
	fclose(f);
	assert_true(found);

	scratch(session, "real");
	mh = mock_host_new();
	mock_host_set_session_dir(mh, session);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, ""), 0);
	if (text) {
		assert_int_equal(resolve(mh, text + 0x10, &img), 0);
		assert_int_equal(img.start, text);
		assert_true(img.end > text + 0x10);
	} else {
		/* not privileged: kptr_restrict hides addresses. The kallsyms
		 * pass runs on a helper thread and its messages are logged when
		 * it is joined, here at the first kernel address resolved */
		assert_int_equal(resolve(mh, 0xffffffff81000010ull, &img), 0);
		assert_int_equal(img.start, KERNEL_HALF_START);
		assert_true(mock_host_log_contains(mh, OP_LOG_WARN, "shows zero addresses"));
	}
	assert_string_equal(mock_host_cookie_path(mh, img.cookie), "vmlinux");
	assert_int_equal(stat_of(mh, "kallsyms_bad_lines"), 0);
	assert_true(stat_of(mh, "kallsyms_text_symbols") > 1000);
	path_of(p, session, "samples/current/stats/kallsyms");
	snap = slurp(p, NULL);
	assert_non_null(snap);
	assert_non_null(strstr(snap, " T _text\n"));
	free(snap);
	/* the modules copy exists exactly when the machine has /proc/modules */
	path_of(p, session, "samples/current/stats/modules");
	assert_int_equal(access(p, F_OK) == 0, access("/proc/modules", F_OK) == 0);
	mock_host_free(mh);
}

/*
 * A kallsyms bigger than the plugin's 1 MiB read block: lines straddle the
 * block ends, an over-long line (longer than a block) sits in the middle,
 * the last line has no '\n'. The snapshot is exactly the text lines, in
 * order (the last one given its '\n'), and the counts are exact.
 */
static void test_snapshot_blocks(void **state)
{
	char proc[PATH_MAX], session[PATH_MAX], p[PATH_MAX];
	size_t cap = 6u << 20, len = 0, wlen = 0, i, got_len;
	char *in = malloc(cap), *want = malloc(cap), *got;
	uint64_t lines = 0, text = 0, bad = 0;
	struct op_kernel_image img;
	struct mock_host *mh;
	static const char types[] = "TtWDdrbT";

	(void)state;
	assert_non_null(in);
	assert_non_null(want);
	for (i = 0; len < (4u << 20); i++) {
		char line[160];
		char type = types[i % 8];
		int n;

		if (i == 10000) {
			/* 1.5 MiB without a blank or '\n': one malformed line */
			memset(in + len, 'a', 3u << 19);
			len += 3u << 19;
			in[len++] = '\n';
			lines++;
			bad++;
		}
		/* names of varying length move the line ends across the blocks */
		n = snprintf(line, sizeof(line), "%016llx %c sym_%zu_%.*s%s\n",
			     0xffffffff81000000ull + i * 16, type, i, (int)(i % 37),
			     "abcdefghijklmnopqrstuvwxyz0123456789x", i % 11 == 0 ? "\t[bpf]" : "");
		if (i == 0)
			n = snprintf(line, sizeof(line), "ffffffff81000000 T _text\n");
		memcpy(in + len, line, (size_t)n);
		len += (size_t)n;
		lines++;
		if (type == 'T' || type == 't' || type == 'W') {
			memcpy(want + wlen, line, (size_t)n);
			wlen += (size_t)n;
			text++;
		}
	}
	/* the last line: a text symbol without '\n' */
	memcpy(in + len, "ffffffff82000000 T _etext", 25);
	len += 25;
	memcpy(want + wlen, "ffffffff82000000 T _etext\n", 26);
	wlen += 26;
	lines++;
	text++;
	assert_true(len > (4u << 20));

	scratch(proc, "proc-blocks");
	scratch(session, "blocks");
	path_of(p, proc, "kallsyms");
	spit(p, in, len, "wb");
	mh = kernel_up(proc, session, NULL);
	path_of(p, session, "samples/current/stats/kallsyms");
	got = slurp(p, &got_len);
	assert_non_null(got);
	assert_int_equal(got_len, wlen);
	assert_memory_equal(got, want, wlen);
	assert_int_equal(stat_of(mh, "kallsyms_lines"), lines);
	assert_int_equal(stat_of(mh, "kallsyms_bad_lines"), bad);
	assert_int_equal(stat_of(mh, "kallsyms_text_symbols"), text);
	assert_true(mock_host_log_contains(mh, OP_LOG_WARN, "not a kallsyms line"));
	/* _text and _etext (the last line) bound the kernel image */
	assert_int_equal(resolve(mh, 0xffffffff81ffffffull, &img), 0);
	assert_int_equal(img.start, 0xffffffff81000000ull);
	assert_int_equal(img.end, 0xffffffff82000000ull);
	mock_host_free(mh);
	free(got);
	free(in);
	free(want);
}

/*
 * The kallsyms pass runs on a helper thread after init: the first resolve
 * waits for it (then the snapshot is complete and its messages logged).
 * A forked child (--daemonize) has no helper thread: it redoes the pass
 * itself, into its own temporary, and leaves a complete snapshot too.
 */
static void test_async_and_fork(void **state)
{
	char proc[PATH_MAX], session[PATH_MAX], args[PATH_MAX + 8], p[PATH_MAX], q[PATH_MAX];
	struct op_kernel_image img;
	struct mock_host *mh;
	char *got, *want;
	size_t got_len, want_len;
	int ws, round;
	pid_t pid;

	(void)state;
	path_of(proc, g_data, "proc-a");
	path_of(q, proc, "kallsyms.expected");
	want = slurp(q, &want_len);
	assert_non_null(want);
	for (round = 0; round < 2; round++) {
		scratch(session, round ? "async-fork" : "async");
		mh = mock_host_new();
		mock_host_set_session_dir(mh, session);
		snprintf(args, sizeof(args), "proc=%s", proc);
		assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, args), 0);
		path_of(p, session, "samples/current/stats/kallsyms");
		if (round == 1) {
			pid = fork();
			assert_true(pid >= 0);
			if (pid == 0) {
				/* the child: no cmocka here, the exit status says it */
				int bad = resolve(mh, 0xffffffff81002000ull, &img) != 0 ||
					  img.start != 0xffffffff81000000ull;

				got = slurp(p, &got_len);
				bad |= !got || got_len != want_len || memcmp(got, want, want_len);
				bad |= !mock_host_log_contains(mh, OP_LOG_INFO, "saved in the session");
				_exit(bad ? 1 : 0);
			}
			assert_int_equal(waitpid(pid, &ws, 0), pid);
			assert_true(WIFEXITED(ws));
			assert_int_equal(WEXITSTATUS(ws), 0);
		}
		/* the first kernel address waits for the pass */
		assert_int_equal(resolve(mh, 0xffffffff81002000ull, &img), 0);
		assert_int_equal(img.start, 0xffffffff81000000ull);
		got = slurp(p, &got_len);
		assert_non_null(got);
		assert_int_equal(got_len, want_len);
		assert_memory_equal(got, want, want_len);
		free(got);
		assert_true(mock_host_log_contains(mh, OP_LOG_INFO, "saved in the session"));
		assert_int_equal(mock_host_log_count(mh, OP_LOG_WARN, "not a kallsyms line"), 5);
		assert_int_equal(stat_of(mh, "kallsyms_bad_lines"), 9);
		/* nothing but the two files: no temporary of the parent or the child */
		path_of(p, session, "samples/current/stats");
		assert_int_equal(dir_entries(p), 2);
		mock_host_free(mh);
	}
	free(want);
}

static void test_descriptor(void **state)
{
	(void)state;
	assert_int_equal(oprofile_ext_v1.abi_major, 1);
	assert_int_equal(oprofile_ext_v1.abi_minor, OP_SDK_MINOR);
	assert_string_equal(oprofile_ext_v1.name, "kernel");
	assert_null(oprofile_ext_v1.ext_deinit); /* its state is freed as user data */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_snapshot_exact),
		cmocka_unit_test(test_snapshot_replace_and_symlink),
		cmocka_unit_test(test_snapshot_blocks),
		cmocka_unit_test(test_async_and_fork),
		cmocka_unit_test(test_resolve_modules),
		cmocka_unit_test(test_resolve_pseudo_without_modules),
		cmocka_unit_test(test_text_range_fallbacks),
		cmocka_unit_test(test_snapshot_weak_functions),
		cmocka_unit_test(test_reread_rate_limited),
		cmocka_unit_test(test_kptr_restrict_zero),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_real_proc),
		cmocka_unit_test(test_descriptor),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
