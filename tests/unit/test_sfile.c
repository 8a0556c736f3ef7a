/*
 * test_sfile.c - the sample-file hash: keys per --separate, names, LRU
 * eviction with a tiny max_open_files, EMFILE recovery, plugin sfile
 * handlers, and hostile process paths that must never create anything
 * outside samples/current (checked by walking the scratch tree); as root,
 * sample files (and their directories) another user owns or may write, or
 * with a second link, are refused and left as they were.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "core_fixture.h"

static struct op_trans_view view(op_cookie_t app, op_cookie_t img, int32_t tgid, int32_t tid,
				 int32_t cpu, int32_t in_kernel)
{
	struct op_trans_view v = { .size = sizeof(v) };

	v.app_cookie = app;
	v.cookie = img;
	v.tgid = tgid;
	v.tid = tid;
	v.cpu = cpu;
	v.in_kernel = in_kernel;
	return v;
}

struct key_case {
	unsigned separate;
	bool same_tid, same_cpu, same_app_user, same_app_kernel;
	const char *name; /* of the base view's file */
};

static void test_keys_per_separate(void **state)
{
	static const struct key_case cases[] = {
		{ OP_SEP_NONE, true, true, true, true,
		  "{root}/lib/libc.so.6/{dep}/{root}/lib/libc.so.6/TIMER.0.0.all.all.all" },
		{ OP_SEP_LIB, true, true, false, true,
		  "{root}/bin/hot/{dep}/{root}/lib/libc.so.6/TIMER.0.0.all.all.all" },
		{ OP_SEP_KERNEL, true, true, false, false,
		  "{root}/bin/hot/{dep}/{root}/lib/libc.so.6/TIMER.0.0.all.all.all" },
		{ OP_SEP_THREAD, false, true, true, true,
		  "{root}/lib/libc.so.6/{dep}/{root}/lib/libc.so.6/TIMER.0.0.100.100.all" },
		{ OP_SEP_CPU, true, false, true, true,
		  "{root}/lib/libc.so.6/{dep}/{root}/lib/libc.so.6/TIMER.0.0.all.all.0" },
		{ OP_SEP_ALL, false, false, false, false,
		  "{root}/bin/hot/{dep}/{root}/lib/libc.so.6/TIMER.0.0.100.100.0" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct key_case *c = &cases[i];
		struct cfx *f = cfx_new(c->separate, 64);
		op_cookie_t hot = cfx_ck(f, "/bin/hot", OP_IMAGE_USER);
		op_cookie_t other = cfx_ck(f, "/bin/other", OP_IMAGE_USER);
		op_cookie_t libc = cfx_ck(f, "/lib/libc.so.6", OP_IMAGE_USER);
		op_cookie_t kern = cfx_ck(f, "vmlinux", OP_IMAGE_KERNEL);
		op_cookie_t anon = cfx_ck(f, "anon", OP_IMAGE_ANON);
		struct op_trans_view b = view(hot, libc, 100, 100, 0, 0), v;
		struct op_sfile *base, *sf;
		char name[PATH_MAX];

		base = sfile_find(&f->sft, &b);
		assert_non_null(base);
		assert_ptr_equal(sfile_find(&f->sft, &b), base);
		v = b;
		v.tid = 101;
		assert_true((sfile_find(&f->sft, &v) == base) == c->same_tid);
		v = b;
		v.cpu = 1;
		assert_true((sfile_find(&f->sft, &v) == base) == c->same_cpu);
		v = b;
		v.app_cookie = other;
		assert_true((sfile_find(&f->sft, &v) == base) == c->same_app_user);
		v = view(hot, kern, 100, 100, 0, 1);
		sf = sfile_find(&f->sft, &v);
		v.app_cookie = other;
		assert_true((sfile_find(&f->sft, &v) == sf) == c->same_app_kernel);
		/* anon regions always belong to their process */
		v = view(hot, anon, 100, 100, 0, 0);
		v.anon_start = 0x1000;
		v.anon_end = 0x1fff;
		sf = sfile_find(&f->sft, &v);
		v.tgid = 200;
		v.tid = 200;
		assert_ptr_not_equal(sfile_find(&f->sft, &v), sf);
		/* no image: no set */
		v = b;
		v.cookie = 0;
		assert_null(sfile_find(&f->sft, &v));
		assert_true(sfile_name(&f->sft, base, 0, NULL, name, sizeof(name)) > 0);
		assert_string_equal(name, c->name);
		assert_int_equal(sfile_log(&f->sft, base, 0, 0x42, 1), 0);
		cfx_free(f);
	}
}

/* --- issue 20: per-process split key --- */
/*
 * the split key keeps processes of two cgroups apart only with
 * --separate=cgroup, names the set ({cgroup}/KEY.../), and a view of an
 * older SDK (smaller size) has none
 */
static void test_split_key(void **state)
{
	static const unsigned seps[] = { OP_SEP_LIB, OP_SEP_LIB | OP_SEP_CGROUP };
	char name[PATH_MAX];

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		bool on = seps[i] & OP_SEP_CGROUP;
		struct cfx *f = cfx_new(seps[i], 64);
		op_cookie_t hot = cfx_ck(f, "/bin/hot", OP_IMAGE_USER);
		op_cookie_t libc = cfx_ck(f, "/lib/libc.so.6", OP_IMAGE_USER);
		op_cookie_t ka = cfx_ck(f, "/system.slice/a.service", OP_IMAGE_ANON);
		op_cookie_t kb = cfx_ck(f, "/", OP_IMAGE_ANON);
		struct op_trans_view none = view(hot, libc, 100, 100, 0, 0), a, b, old;
		struct op_sfile *s0, *sa, *sb;

		a = b = none;
		a.split = ka;
		b.split = kb;
		s0 = sfile_find(&f->sft, &none);
		sa = sfile_find(&f->sft, &a);
		sb = sfile_find(&f->sft, &b);
		assert_non_null(s0);
		assert_true((sa != s0) == on);
		assert_true((sb != sa) == on);
		old = a;
		old.size = offsetof(struct op_trans_view, split);
		assert_ptr_equal(sfile_find(&f->sft, &old), s0);
		assert_true(sfile_name(&f->sft, sa, 0, NULL, name, sizeof(name)) > 0);
		assert_string_equal(name, on ? "{cgroup}/system.slice/a.service/{root}/bin/hot/{dep}/"
					       "{root}/lib/libc.so.6/TIMER.0.0.all.all.all" :
					       "{root}/bin/hot/{dep}/{root}/lib/libc.so.6/TIMER.0.0.all.all.all");
		assert_true(sfile_name(&f->sft, sb, 0, NULL, name, sizeof(name)) > 0);
		if (on)
			assert_string_equal(name, "{cgroup}/{root}/bin/hot/{dep}/{root}/lib/libc.so.6/"
						  "TIMER.0.0.all.all.all");
		assert_int_equal(sfile_log(&f->sft, sa, 0, 0x42, 1), 0);
		cfx_free(f);
	}
}

/* a tiny bound: sets are evicted, files re-opened later keep their counts */
static void test_lru(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB, 2);
	op_cookie_t app = cfx_ck(f, "/bin/app", OP_IMAGE_USER);
	op_cookie_t img[6];
	char path[64], rel[PATH_MAX];
	int round, i;

	(void)state;
	for (i = 0; i < 6; i++) {
		snprintf(path, sizeof(path), "/lib/lib%d.so", i);
		img[i] = cfx_ck(f, path, OP_IMAGE_USER);
	}
	for (round = 0; round < 3; round++) {
		for (i = 0; i < 6; i++) {
			struct op_trans_view v = view(app, img[i], 5, 5, 0, 0);
			struct op_sfile *sf = sfile_find(&f->sft, &v);

			assert_non_null(sf);
			sfile_pin(&f->sft, sf);
			assert_int_equal(sfile_log(&f->sft, sf, 0, 0x10 + i, 1), 0);
			assert_true(f->sft.nr_open <= 2);
		}
	}
	assert_true(f->st.v[STAT_SFILE_EVICTIONS] >= 16);
	assert_int_equal(f->st.v[STAT_SFILE_OPENS], 18);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 0);
	sfile_close_all(&f->sft);
	assert_int_equal(f->sft.nr_open, 0);
	assert_int_equal(f->sft.nr_sfiles, 0);
	for (i = 0; i < 6; i++) {
		uint32_t v;

		snprintf(rel, sizeof(rel),
			 "{root}/bin/app/{dep}/{root}/lib/lib%d.so/TIMER.0.0.all.all.all", i);
		assert_int_equal(cfx_read(f, rel, 0x10 + i, &v, NULL), 1);
		assert_int_equal(v, 3);
	}
	cfx_free(f);
}

/* the process runs out of descriptors: evict and retry */
static void test_emfile(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB, 1000);
	op_cookie_t app = cfx_ck(f, "/bin/app", OP_IMAGE_USER);
	struct rlimit old, lim;
	char path[64];
	int i, fd, maxfd = 0, fill[1024], nr_fill;


	(void)state;
	/* highest descriptor in use now */
	{
		DIR *d = opendir("/proc/self/fd");
		struct dirent *de;

		assert_non_null(d);
		while ((de = readdir(d))) {
			fd = atoi(de->d_name);
			if (fd > maxfd)
				maxfd = fd;
		}
		closedir(d);
	}
	/* fill the holes below it, so that exactly 4 descriptors stay free */
	for (nr_fill = 0; nr_fill < 1024; nr_fill++) {
		fd = dup(0);
		assert_true(fd >= 0);
		if (fd > maxfd) {
			close(fd);
			break;
		}
		fill[nr_fill] = fd;
	}
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	lim = old;
	lim.rlim_cur = (rlim_t)maxfd + 5; /* 4 free descriptors */
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &lim), 0);
	for (i = 0; i < 30; i++) {
		struct op_trans_view v;
		struct op_sfile *sf;

		snprintf(path, sizeof(path), "/lib/many%d.so", i);
		v = view(app, cfx_ck(f, path, OP_IMAGE_USER), 5, 5, 0, 0);
		sf = sfile_find(&f->sft, &v);
		assert_non_null(sf);
		sfile_pin(&f->sft, sf);
		assert_int_equal(sfile_log(&f->sft, sf, 0, 1, 1), 0);
	}
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	for (i = 0; i < nr_fill; i++)
		close(fill[i]);
	assert_true(f->sft.nr_open < 30);
	assert_true(f->st.v[STAT_EMFILE_RETRIES] > 0);
	assert_true(f->st.v[STAT_SFILE_EVICTIONS] > 0);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 0);
	/* the limit is lower than max_open_files assumed: fewer kept open from now on */
	assert_true(f->sft.cfg.max_open_files < 4);
	cfx_free(f);

	/* another part of the daemon out of descriptors: the sample files give half back */
	f = cfx_new(OP_SEP_LIB, 1000);
	app = cfx_ck(f, "/bin/app", OP_IMAGE_USER);
	for (i = 0; i < 30; i++) {
		struct op_trans_view v;
		struct op_sfile *sf;

		snprintf(path, sizeof(path), "/lib/many%d.so", i);
		v = view(app, cfx_ck(f, path, OP_IMAGE_USER), 5, 5, 0, 0);
		sf = sfile_find(&f->sft, &v);
		assert_non_null(sf);
		assert_int_equal(sfile_log(&f->sft, sf, 0, 1, 1), 0);
	}
	assert_int_equal(f->sft.nr_open, 30);
	sfile_yield_fds(&f->sft);
	assert_true(f->sft.nr_open <= 15);
	assert_int_equal(f->sft.cfg.max_open_files, 22);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 0);
	cfx_free(f);
}

/*
 * Every descriptor taken by something else (no sample file to evict): a
 * sample is counted lost (open failed), and its file is tried again once
 * descriptors are back - after a short wait, not on every sample, and not
 * only once the set is made again.
 */
static void test_emfile_transient(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB, 1000);
	op_cookie_t app = cfx_ck(f, "/bin/app", OP_IMAGE_USER);
	struct op_trans_view v = view(app, app, 5, 5, 0, 0);
	struct rlimit old, lim;
	struct op_sfile *sf;
	int fill[4096], nr_fill = 0, i;
	char name[PATH_MAX];

	(void)state;
	sf = sfile_find(&f->sft, &v);
	assert_non_null(sf);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	lim = old;
	lim.rlim_cur = 256;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &lim), 0);
	while (nr_fill < 4096 && (fill[nr_fill] = dup(0)) >= 0)
		nr_fill++;
	assert_int_equal(errno, EMFILE);
	assert_int_equal(sfile_log(&f->sft, sf, 0, 0x10, 1), -EMFILE);
	for (i = 0; i < nr_fill; i++)
		close(fill[i]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	/* within the wait: lost without trying (no syscall per sample) */
	assert_int_equal(sfile_log(&f->sft, sf, 0, 0x10, 1), -EIO);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 2);
	assert_int_equal(f->st.v[STAT_LOST_SF_OPEN], 2);
	usleep(150000);
	assert_int_equal(sfile_log(&f->sft, sf, 0, 0x10, 1), 0);
	assert_int_equal(sfile_add_sample(&f->sft, sf, 0, 0x10), 0);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 2);
	assert_true(sfile_name(&f->sft, sf, 0, NULL, name, sizeof(name)) > 0);
	sfile_close_all(&f->sft);
	assert_int_equal(cfx_total(f, name), 2);
	cfx_free(f);
}

/* plugin per-sfile handlers and plugin files */
static int h_create, h_close, h_sync;
static int slot_token;

static int sh_create(void *priv, op_sfile_t *sf, void **sf_priv)
{
	(void)priv;
	(void)sf;
	h_create++;
	*sf_priv = &slot_token;
	return 0;
}

static int sh_close(void *priv, op_sfile_t *sf, void *sf_priv)
{
	(void)priv;
	(void)sf;
	assert_ptr_equal(sf_priv, &slot_token);
	h_close++;
	return 0;
}

static int sh_sync(void *priv, op_sfile_t *sf, void *sf_priv)
{
	(void)priv;
	(void)sf;
	assert_ptr_equal(sf_priv, &slot_token);
	h_sync++;
	return 0;
}

/* the sh_* handlers as a plugin's, in slot 3 */
static void use_handlers(struct cfx *f)
{
	f->reg.sfile[0].ops = (struct op_sfile_ops){ .size = sizeof(struct op_sfile_ops),
						      .create = sh_create, .close = sh_close,
						      .sync = sh_sync };
	f->reg.sfile[0].slot = 3;
	f->reg.nr_sfile = 1;
}

static void test_plugin_handlers(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB, 64);
	op_cookie_t app = cfx_ck(f, "/bin/app", OP_IMAGE_USER);
	op_cookie_t lib = cfx_ck(f, "/lib/x.so", OP_IMAGE_USER);
	struct op_trans_view v = view(app, app, 5, 5, 0, 0);
	struct op_file_spec spec = { .size = sizeof(spec), .counter = 0, .is_cg = true,
				     .cg_to_cookie = lib };
	struct op_sample_file *pf, *pf2;
	struct op_sfile *sf;
	uint32_t val;

	(void)state;
	use_handlers(f);
	sf = sfile_find(&f->sft, &v);
	assert_int_equal(h_create, 1);
	assert_ptr_equal(sf->slot[3], &slot_token);
	pf = sfile_open_spec(&f->sft, sf, &spec);
	assert_non_null(pf);
	pf2 = sfile_open_spec(&f->sft, sf, &spec);
	assert_ptr_equal(pf, pf2); /* the same spec is opened once */
	assert_int_equal(sfile_file_add(pf, 0x0000123400005678ull, 2), 0);
	sfile_sync_all(&f->sft);
	assert_int_equal(h_sync, 1);
	/* unknown counter: refused, counted */
	assert_int_equal(sfile_log(&f->sft, sf, 7, 1, 1), -EINVAL);
	assert_int_equal(f->st.v[STAT_LOST_BAD_COUNTER], 1);
	sfile_close_all(&f->sft);
	assert_int_equal(h_close, 1);
	assert_int_equal(cfx_read(f, "{root}/bin/app/{dep}/{root}/bin/app/{cg}/{root}/lib/x.so/TIMER.0.0.all.all.all",
				  0x0000123400005678ull, &val, NULL),
			 1);
	assert_int_equal(val, 2);
	cfx_free(f);
}

/*
 * sfile_sync_all syncs only the sets looked up since the last sync (issue
 * 20: not every open file every sync_interval): counted through a plugin's
 * sync handler, which is called once per synced set.
 */
static void test_sync_only_used(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_THREAD, 64);
	op_cookie_t app = cfx_ck(f, "/bin/app", OP_IMAGE_USER);
	struct op_trans_view a = view(app, app, 5, 5, 0, 0), b = view(app, app, 6, 6, 0, 0);
	struct op_trans_view c = view(app, app, 7, 7, 0, 0);
	struct op_sfile *sa, *sb, *sc;
	uint32_t val;

	(void)state;
	use_handlers(f);
	h_sync = 0;
	sa = sfile_find(&f->sft, &a);
	sb = sfile_find(&f->sft, &b);
	sc = sfile_find(&f->sft, &c);
	assert_true(sa && sb && sc && sa != sb && sb != sc);
	assert_int_equal(sfile_log(&f->sft, sa, 0, 0x10, 1), 0);
	assert_int_equal(sfile_log(&f->sft, sb, 0, 0x20, 1), 0);
	assert_int_equal(sfile_log(&f->sft, sc, 0, 0x30, 1), 0);
	sfile_sync_all(&f->sft);
	assert_int_equal(h_sync, 3); /* all three are new */
	sfile_sync_all(&f->sft);
	assert_int_equal(h_sync, 3); /* none looked up since */
	/* b used again (the least recent one: moves to the recent end), then a
	 * looked up through the recent cache while already the most recent */
	assert_ptr_equal(sfile_lookup(&f->sft, &b), sb);
	assert_int_equal(sfile_log(&f->sft, sb, 0, 0x20, 2), 0);
	sfile_sync_all(&f->sft);
	assert_int_equal(h_sync, 4);
	assert_ptr_equal(sfile_lookup(&f->sft, &b), sb);
	assert_ptr_equal(sfile_lookup(&f->sft, &b), sb);
	sfile_sync_all(&f->sft);
	assert_int_equal(h_sync, 5); /* stamped though it did not move */
	assert_ptr_equal(sfile_find(&f->sft, &a), sa);
	assert_ptr_equal(sfile_find(&f->sft, &c), sc);
	sfile_sync_all(&f->sft);
	assert_int_equal(h_sync, 7);
	/* a skipped sync loses nothing: the counts are in the files */
	sfile_close_all(&f->sft);
	assert_int_equal(cfx_read(f, "{root}/bin/app/{dep}/{root}/bin/app/TIMER.0.0.6.6.all", 0x20,
				  &val, NULL),
			 1);
	assert_int_equal(val, 3);
	cfx_free(f);
}

/*
 * The directories kept open (sfile_open.c, issue 20): a new process of an
 * image makes its files in the directory the previous one used; one removed
 * under the daemon is walked and made anew; after sfile_close_all (what a
 * rotation does before samples/current is set aside) no file lands in the
 * old directory.
 */
static void test_kept_dirs(void **state)
{
	static const char dir[] = "{root}/bin/app/{dep}/{root}/bin/app";
	struct cfx *f = cfx_new(OP_SEP_THREAD, 64);
	op_cookie_t app = cfx_ck(f, "/bin/app", OP_IMAGE_USER);
	struct op_trans_view a = view(app, app, 5, 5, 0, 0), b = view(app, app, 6, 6, 0, 0);
	struct op_trans_view c = view(app, app, 7, 7, 0, 0), d = view(app, app, 8, 8, 0, 0);
	char path[2 * PATH_MAX], old[PATH_MAX + 16];
	uint32_t val;
	int fd;

	(void)state;
	assert_int_equal(sfile_log(&f->sft, sfile_find(&f->sft, &a), 0, 0x10, 1), 0);
	assert_int_equal(sfile_log(&f->sft, sfile_find(&f->sft, &b), 0, 0x10, 2), 0);
	assert_int_equal(cfx_read(f, "{root}/bin/app/{dep}/{root}/bin/app/TIMER.0.0.6.6.all", 0x10,
				  &val, NULL),
			 1);
	assert_int_equal(val, 2);
	/* the kept directory removed (its files first): the next file makes it again */
	snprintf(path, sizeof(path), "%s/TIMER.0.0.5.5.all", dir);
	assert_int_equal(unlinkat(f->current_fd, path, 0), 0);
	snprintf(path, sizeof(path), "%s/TIMER.0.0.6.6.all", dir);
	assert_int_equal(unlinkat(f->current_fd, path, 0), 0);
	assert_int_equal(unlinkat(f->current_fd, dir, AT_REMOVEDIR), 0);
	assert_int_equal(sfile_log(&f->sft, sfile_find(&f->sft, &c), 0, 0x20, 3), 0);
	assert_int_equal(cfx_read(f, "{root}/bin/app/{dep}/{root}/bin/app/TIMER.0.0.7.7.all", 0x20,
				  &val, NULL),
			 1);
	assert_int_equal(val, 3);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 0);
	/* a rotation: everything closed, samples/current set aside and made anew */
	sfile_close_all(&f->sft);
	snprintf(old, sizeof(old), "%s/samples/old", f->root);
	assert_int_equal(rename(f->current, old), 0);
	assert_int_equal(mkdir(f->current, 0755), 0);
	fd = open(f->current, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	assert_int_equal(dup2(fd, f->current_fd), f->current_fd);
	close(fd);
	assert_int_equal(sfile_log(&f->sft, sfile_find(&f->sft, &d), 0, 0x30, 4), 0);
	assert_int_equal(cfx_read(f, "{root}/bin/app/{dep}/{root}/bin/app/TIMER.0.0.8.8.all", 0x30,
				  &val, NULL),
			 1);
	assert_int_equal(val, 4);
	snprintf(path, sizeof(path), "%s/%s/TIMER.0.0.8.8.all", old, dir);
	assert_int_equal(access(path, F_OK), -1);
	cfx_free(f);
}

/* descriptors open in this process */
static int nr_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* remove the tree @name below @dfd (files and directories, no symlinks followed) */
static void rm_tree(int dfd, const char *name)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd;

	assert_int_equal(fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	if (S_ISDIR(st.st_mode)) {
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		assert_true(fd >= 0);
		d = fdopendir(fd);
		assert_non_null(d);
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				rm_tree(dirfd(d), de->d_name);
		closedir(d);
	}
	assert_int_equal(unlinkat(dfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0), 0);
}

/*
 * Issue 20 (process churn): a new pair's directories are made from the
 * deepest directory kept open, ancestors included. Files of many pairs
 * (more directories than are kept) all land where their names say, no
 * descriptor is left behind once the table closes, and a kept ancestor
 * whose tree was removed under the daemon is walked around: the files are
 * made again from the root, nothing lost.
 */
static void test_kept_ancestors(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB | OP_SEP_CGROUP, 1000);
	op_cookie_t app = cfx_ck(f, "/usr/bin/app", OP_IMAGE_USER);
	op_cookie_t libc = cfx_ck(f, "/usr/lib/libc.so.6", OP_IMAGE_USER);
	char name[64], path[PATH_MAX];
	int i, fds = nr_fds();
	uint32_t val;

	(void)state;
	/* 40 cgroups x 2 images: 40 x 12 directories, more than SFILE_DIRS */
	for (i = 0; i < 40; i++) {
		struct op_trans_view v;

		snprintf(name, sizeof(name), "/svc%d", i);
		v = view(app, app, 5, 5, 0, 0);
		v.split = cfx_ck(f, name, OP_IMAGE_ANON);
		assert_int_equal(sfile_log(&f->sft, sfile_find(&f->sft, &v), 0, 0x10,
					   (uint32_t)i + 1),
				 0);
		v = view(app, libc, 5, 5, 0, 0);
		v.split = cfx_ck(f, name, OP_IMAGE_ANON);
		assert_int_equal(sfile_log(&f->sft, sfile_find(&f->sft, &v), 0, 0x20,
					   (uint32_t)i + 2),
				 0);
	}
	for (i = 0; i < 40; i += 13) {
		snprintf(path, sizeof(path),
			 "{cgroup}/svc%d/{root}/usr/bin/app/{dep}/{root}/usr/lib/libc.so.6/"
			 "TIMER.0.0.all.all.all",
			 i);
		assert_int_equal(cfx_read(f, path, 0x20, &val, NULL), 1);
		assert_int_equal(val, (uint32_t)i + 2);
	}
	assert_true(nr_fds() > fds);
	assert_true(nr_fds() <= fds + 80 + SFILE_DIRS + 2);
	/* the whole tree removed: the kept directories point into nothing */
	rm_tree(f->current_fd, "{cgroup}");
	{
		struct op_trans_view v = view(libc, libc, 5, 5, 0, 0);

		v.split = cfx_ck(f, "/svc39", OP_IMAGE_ANON);
		assert_int_equal(sfile_log(&f->sft, sfile_find(&f->sft, &v), 0, 0x30, 7), 0);
	}
	assert_int_equal(cfx_read(f,
				  "{cgroup}/svc39/{root}/usr/lib/libc.so.6/{dep}/{root}/usr/lib/"
				  "libc.so.6/TIMER.0.0.all.all.all",
				  0x30, &val, NULL),
			 1);
	assert_int_equal(val, 7);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 0);
	sfile_close_all(&f->sft);
	assert_int_equal(nr_fds(), fds);
	cfx_free(f);
}

/*
 * The sets of threads that exited are closed (issue 20: a host starting
 * processes all the time kept them all mapped until the LRU pushed them
 * out): only those of the exited threads, anon sets of an exited process
 * too, their counts stay in the files, and a late sample of the same
 * thread opens its file again and adds to it.
 */
static void test_close_exited(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_THREAD, 64);
	op_cookie_t app = cfx_ck(f, "/bin/app", OP_IMAGE_USER);
	op_cookie_t anon = cfx_ck(f, "anon", OP_IMAGE_ANON);
	struct op_trans_view a = view(app, app, 5, 5, 0, 0), b = view(app, app, 5, 6, 0, 0);
	struct op_trans_view c = view(app, app, 7, 7, 0, 0), d = view(app, anon, 7, 7, 0, 0);
	struct task_exited ex[] = { { 5, 6 }, { 7, 7 }, { 9, 9 } };
	uint32_t val;

	(void)state;
	d.anon_start = 0x1000;
	d.anon_end = 0x2000;
	assert_int_equal(sfile_log(&f->sft, sfile_find(&f->sft, &a), 0, 0x10, 1), 0);
	assert_int_equal(sfile_log(&f->sft, sfile_find(&f->sft, &b), 0, 0x10, 2), 0);
	assert_int_equal(sfile_log(&f->sft, sfile_find(&f->sft, &c), 0, 0x10, 3), 0);
	assert_int_equal(sfile_log(&f->sft, sfile_find(&f->sft, &d), 0, 0x10, 4), 0);
	assert_int_equal(f->sft.nr_sfiles, 4);
	assert_int_equal(f->sft.nr_open, 4);
	assert_int_equal(sfile_close_exited(&f->sft, ex, 3), 3);
	assert_int_equal(f->sft.nr_sfiles, 1); /* thread 5 of process 5 is alive */
	assert_int_equal(f->sft.nr_open, 1);
	assert_int_equal(sfile_close_exited(&f->sft, ex, 3), 0);
	assert_int_equal(cfx_read(f, "{root}/bin/app/{dep}/{root}/bin/app/TIMER.0.0.5.6.all", 0x10,
				  &val, NULL),
			 1);
	assert_int_equal(val, 2);
	/* a late sample: the file opens again and adds */
	assert_int_equal(sfile_log(&f->sft, sfile_find(&f->sft, &b), 0, 0x10, 5), 0);
	sfile_close_all(&f->sft);
	assert_int_equal(cfx_read(f, "{root}/bin/app/{dep}/{root}/bin/app/TIMER.0.0.5.6.all", 0x10,
				  &val, NULL),
			 1);
	assert_int_equal(val, 7);
	assert_int_equal(cfx_read(f, "{root}/bin/app/{dep}/{root}/bin/app/TIMER.0.0.7.7.all", 0x10,
				  &val, NULL),
			 1);
	assert_int_equal(val, 3);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 0);
	cfx_free(f);
}

/* count regular files below @dir; fail on any symlink */
static long walk(int dfd, const char *name)
{
	struct dirent *de;
	struct stat st;
	long n = 0;
	DIR *d;
	int fd;

	assert_int_equal(fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_false(S_ISLNK(st.st_mode));
	if (!S_ISDIR(st.st_mode))
		return 1;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
	assert_true(fd >= 0);
	d = fdopendir(fd);
	assert_non_null(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		n += walk(dirfd(d), de->d_name);
	}
	closedir(d);
	return n;
}

static size_t nr_entries(const char *dir)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

/* entries of @dir named like the escape targets below (other tests may run in parallel) */
static size_t nr_escapes(const char *dir)
{
	struct dirent *de;
	size_t n = 0;
	DIR *d = opendir(dir);

	assert_non_null(d);
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "tmp-core-escape", 15))
			n++;
	closedir(d);
	return n;
}

static void test_hostile_paths(void **state)
{
	static const char *const users[] = {
		"/../../../../tmp-core-escape1",
		"/a/../../../tmp-core-escape2",
		"/..",
		"/.",
		"//",
		"/",
		"/x/\n/y\x7f",
		"/{dep}/{root}/{cg}/z",
		"/{anon:x}/1.0x1.0x2",
		"/%2e%2e/%2F",
		"/ends/with/backslash\\",
		"/sp ace/lo:op",
		"/\xff\xfe/utf",
	};
	static const char *const anons[] = { "../../tmp-core-escape3", "[heap]/../..", "" };
	static const char *const kernels[] = { "..", ".", "{dep}" };
	struct cfx *f = cfx_new(OP_SEP_ALL, 8);
	op_cookie_t app = cfx_ck(f, "/../../tmp-core-escape-app", OP_IMAGE_USER);
	char longp[2048];
	size_t i, nr_ok = 0;
	long files;

	(void)state;
	longp[0] = '/';
	memset(longp + 1, 'a', 600);
	strcpy(longp + 601, "/../..");
	for (i = 0; i < sizeof(users) / sizeof(users[0]) + 1; i++) {
		const char *p = i < sizeof(users) / sizeof(users[0]) ? users[i] : longp;
		struct op_trans_view v = view(app, cfx_ck(f, p, OP_IMAGE_USER), 5, 5, 0, 0);
		struct op_sfile *sf = sfile_find(&f->sft, &v);

		assert_non_null(sf);
		sfile_pin(&f->sft, sf);
		if (sfile_log(&f->sft, sf, 0, i, 1) == 0)
			nr_ok++;
	}
	for (i = 0; i < sizeof(anons) / sizeof(anons[0]); i++) {
		struct op_trans_view v = view(app, cfx_ck(f, anons[i], OP_IMAGE_ANON), 5, 5, 0, 0);
		struct op_sfile *sf;

		v.anon_start = 0x1000;
		v.anon_end = 0x1fff;
		sf = sfile_find(&f->sft, &v);
		assert_non_null(sf);
		sfile_pin(&f->sft, sf);
		if (sfile_log(&f->sft, sf, 0, i, 1) == 0)
			nr_ok++;
	}
	for (i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++) {
		struct op_trans_view v = view(app, cfx_ck(f, kernels[i], OP_IMAGE_KERNEL), 5, 5, 0, 1);
		struct op_sfile *sf = sfile_find(&f->sft, &v);

		assert_non_null(sf);
		sfile_pin(&f->sft, sf);
		if (sfile_log(&f->sft, sf, 0, i, 1) == 0)
			nr_ok++;
	}
	sfile_close_all(&f->sft);
	/* most names are escaped and land inside; a refused one is counted */
	assert_true(nr_ok >= 15);
	assert_int_equal(nr_ok + f->st.v[STAT_LOST_SAMPLEFILE], 20);
	/* nothing outside samples/current: no escape* in cwd, root and samples/ unchanged */
	assert_int_equal(nr_escapes("."), 0);
	assert_int_equal(nr_escapes(".."), 0);
	assert_int_equal(nr_entries(f->root), 1);
	{
		char samples[PATH_MAX + 16];

		snprintf(samples, sizeof(samples), "%s/samples", f->root);
		assert_int_equal(nr_entries(samples), 1);
	}
	files = walk(AT_FDCWD, f->current);
	assert_int_equal(files, (long)nr_ok);
	cfx_free(f);
}

/* a symlink planted inside samples/current is never followed */
static void test_planted_symlink(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB, 8);
	op_cookie_t app = cfx_ck(f, "/bin/app", OP_IMAGE_USER);
	struct op_trans_view v = view(app, app, 5, 5, 0, 0);
	char outside[PATH_MAX + 16];
	struct op_sfile *sf;

	(void)state;
	snprintf(outside, sizeof(outside), "%s/outside", f->root);
	assert_int_equal(mkdir(outside, 0755), 0);
	assert_int_equal(symlinkat(outside, f->current_fd, "{root}"), 0);
	sf = sfile_find(&f->sft, &v);
	assert_non_null(sf);
	assert_true(sfile_log(&f->sft, sf, 0, 1, 1) < 0);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 1);
	/* not retried for every sample */
	assert_int_equal(sfile_log(&f->sft, sf, 0, 1, 1), -EIO);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 2);
	assert_int_equal(nr_entries(outside), 0);
	/* a new set (after SIGHUP) tries again and succeeds once the link is gone */
	sfile_close_all(&f->sft);
	assert_int_equal(unlinkat(f->current_fd, "{root}", 0), 0);
	sf = sfile_find(&f->sft, &v);
	assert_int_equal(sfile_log(&f->sft, sf, 0, 1, 1), 0);
	assert_int_equal(nr_entries(outside), 0);
	/*
	 * the directories exist now (the one-call reopen path): a deep one
	 * swapped for a link between two opens is not followed either
	 */
	sfile_close_all(&f->sft);
	{
		char real[PATH_MAX + 64], moved[PATH_MAX + 64];

		snprintf(real, sizeof(real), "%s/{root}/bin", f->current);
		snprintf(moved, sizeof(moved), "%s/bin.moved", f->root);
		assert_int_equal(rename(real, moved), 0);
		assert_int_equal(symlink(outside, real), 0);
	}
	sf = sfile_find(&f->sft, &v);
	assert_non_null(sf);
	assert_true(sfile_log(&f->sft, sf, 0, 1, 1) < 0);
	assert_int_equal(nr_entries(outside), 0);
	/* nor a relative one that stays inside samples/current */
	sfile_close_all(&f->sft);
	{
		char real[PATH_MAX + 64], decoy[PATH_MAX + 64];

		snprintf(real, sizeof(real), "%s/{root}/bin", f->current);
		snprintf(decoy, sizeof(decoy), "%s/decoy", f->current);
		static const char *const chain[] = { "app", "app/{dep}", "app/{dep}/{root}",
						     "app/{dep}/{root}/bin",
						     "app/{dep}/{root}/bin/app" };
		size_t i;

		assert_int_equal(mkdir(decoy, 0755), 0);
		/* the rest of the file's directory chain, as if under {root}/bin */
		for (i = 0; i < sizeof(chain) / sizeof(chain[0]); i++) {
			char d[PATH_MAX + 128];

			snprintf(d, sizeof(d), "%s/%s", decoy, chain[i]);
			assert_int_equal(mkdir(d, 0755), 0);
		}
		assert_int_equal(unlink(real), 0);
		assert_int_equal(symlink("../decoy", real), 0);
		sf = sfile_find(&f->sft, &v);
		assert_non_null(sf);
		assert_true(sfile_log(&f->sft, sf, 0, 1, 1) < 0);
		assert_int_equal(walk(AT_FDCWD, decoy), 0);
	}
	cfx_free(f);
}

/* the bytes of file @rel below @dfd (at most @len) */
static size_t slurp(int dfd, const char *rel, char *buf, size_t len)
{
	int fd = openat(dfd, rel, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, len);
	close(fd);
	assert_true(n > 0);
	return (size_t)n;
}

/* log one sample to a fresh set of @v (as after SIGHUP): 0 or -errno */
static int log_fresh(struct cfx *f, const struct op_trans_view *v)
{
	struct op_sfile *sf;

	sfile_close_all(&f->sft);
	sf = sfile_find(&f->sft, v);
	assert_non_null(sf);
	return sfile_log(&f->sft, sf, 0, 1, 1);
}

/*
 * Root: an existing sample file another user owns or may write (or that has
 * a second link), or whose directory is such, is refused - logged, counted
 * as lost, left untouched; a non-root daemon keeps using its own files.
 */
/*
 * Another process writes into a sample file the daemon has open (a shared
 * mapping): the writer's bounds checks find an index out of order (odb:
 * -EIO, broken). sfile says so once in the log, closes the file, and counts
 * that sample and the later ones as lost, without touching the file again.
 */
static void test_changed_under_writer(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB, 8);
	op_cookie_t app = cfx_ck(f, "/bin/app", OP_IMAGE_USER);
	struct op_trans_view v = view(app, app, 5, 5, 0, 0);
	char name[PATH_MAX], *logbuf = NULL;
	size_t loglen = 0, len, i;
	struct op_log lg;
	struct op_sfile *sf;
	uint32_t *heads;
	uint8_t *map;
	struct stat st;
	int fd;

	(void)state;
	log_init(&lg, open_memstream(&logbuf, &loglen));
	assert_non_null(lg.fp);
	sfile_set_log(&f->sft, &lg);
	sf = sfile_find(&f->sft, &v);
	assert_non_null(sf);
	assert_int_equal(sfile_log(&f->sft, sf, 0, 0x10, 1), 0);
	assert_true(sfile_name(&f->sft, sf, 0, NULL, name, sizeof(name)) > 0);
	/* the "attacker": every bucket head points past the used nodes */
	fd = openat(f->current_fd, name, O_RDWR);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	len = (size_t)st.st_size;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(map != MAP_FAILED);
	heads = (uint32_t *)(map + ODB_NODE_OFFSET + ODB_INITIAL_NODES * sizeof(struct odb_node));
	for (i = 0; i < ODB_INITIAL_NODES; i++)
		heads[i] = 0x7fffffff;
	assert_int_equal(sfile_log(&f->sft, sf, 0, 0x10, 1), -EIO);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 1);
	assert_int_equal(sf->files[0].fd, -1);
	/* later samples: lost, the file is not used again */
	for (i = 0; i < 100; i++)
		assert_true(sfile_log(&f->sft, sf, 0, 0x20 + i, 1) < 0);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 101);
	for (i = 0; i < ODB_INITIAL_NODES; i++)
		assert_int_equal(heads[i], 0x7fffffff);
	fflush(lg.fp);
	assert_non_null(strstr(logbuf, "changed by another process under the daemon"));
	assert_non_null(strstr(logbuf, name));
	/* said once */
	assert_null(strstr(strstr(logbuf, "changed by another") + 1, "changed by another"));
	munmap(map, len);
	close(fd);
	sfile_set_log(&f->sft, NULL);
	fclose(lg.fp);
	free(logbuf);
	cfx_free(f);
}

/*
 * Two sets whose keys differ but whose names are the same file: a binary
 * replaced while a process still runs the old one (the same path interned
 * as deleted and not deleted), a user image seen with in_kernel 0 and 1
 * (both "{root}/path"), a kernel image given by path and a user image of
 * that path. Their samples, interleaved with new keys, must all be in the
 * one file, whose chains stay whole: one writer per file.
 */
struct same_file_case {
	const char *what;
	const char *path2;
	enum op_image_kind kind1, kind2;
	bool deleted2;
	int32_t in_kernel1, in_kernel2;
};

static void test_same_file_two_keys(void **state)
{
	static const struct same_file_case cases[] = {
		{ "replaced binary", "/bin/up", OP_IMAGE_USER, OP_IMAGE_USER, true, 0, 0 },
		{ "user image in kernel mode", "/bin/up", OP_IMAGE_USER, OP_IMAGE_USER, false, 0, 1 },
		{ "kernel image by path", "/bin/up", OP_IMAGE_USER, OP_IMAGE_KERNEL, false, 0, 1 },
	};
	/* new keys per set: within the first 127 nodes, and growing the table 6 times */
	static const unsigned sizes[] = { 40, 3000 };
	unsigned nr_bad = 0;
	size_t c;

	(void)state;
	for (c = 0; c < 2 * sizeof(cases) / sizeof(cases[0]); c++) {
		const struct same_file_case *k = &cases[c / 2];
		const unsigned nr = sizes[c % 2];
		struct cfx *f = cfx_new(OP_SEP_NONE, 64);
		op_cookie_t c1 = cfx_ck(f, "/bin/up", k->kind1);
		op_cookie_t c2 = cookie_intern(&f->cookies, k->path2, strlen(k->path2), k->kind2,
					       k->deleted2);
		struct op_trans_view v1 = view(c1, c1, 10, 10, 0, k->in_kernel1);
		struct op_trans_view v2 = view(c2, c2, 20, 20, 1, k->in_kernel2);
		char n1[PATH_MAX], n2[PATH_MAX], err[256];
		struct op_sfile *s1, *s2;
		unsigned i, failed = 0;
		bool bad = false;
		odb_t db;

		s1 = sfile_find(&f->sft, &v1);
		s2 = sfile_find(&f->sft, &v2);
		assert_non_null(s1);
		assert_non_null(s2);
		assert_true(sfile_name(&f->sft, s1, 0, NULL, n1, sizeof(n1)) > 0);
		assert_true(sfile_name(&f->sft, s2, 0, NULL, n2, sizeof(n2)) > 0);
		/* the premise: one name for both; so one set (the second key an alias) */
		assert_string_equal(n1, n2);
		assert_ptr_equal(s1, s2);
		assert_int_equal(f->st.v[STAT_SFILE_ALIASES], 1);
		assert_ptr_equal(sfile_find(&f->sft, &v2), s1);
		assert_ptr_equal(sfile_lookup(&f->sft, &v2), s1);
		assert_ptr_equal(sfile_lookup(&f->sft, &v1), s1);
		assert_int_equal(f->st.v[STAT_SFILE_ALIASES], 1);
		for (i = 0; i < nr; i++) {
			/* a few samples of each context in turn, as the rings deliver them */
			failed += sfile_add_sample(&f->sft, s1, 0, 0x100000 + 2 * i) != 0;
			failed += sfile_add_sample(&f->sft, s1, 0, 0x100000 + 2 * (i / 2)) != 0;
			failed += sfile_add_sample(&f->sft, s2, 0, 0x100001 + 2 * i) != 0;
			failed += sfile_add_sample(&f->sft, s2, 0, 0x100001 + 2 * (i / 2)) != 0;
		}
		sfile_close_all(&f->sft);
		err[0] = 0;
		if (odb_open(&db, f->current_fd, n1, ODB_RDONLY, err, sizeof(err)) ||
		    odb_check(&db, err, sizeof(err)))
			bad = true;
		/* one writer from the start: nothing to hand over */
		assert_int_equal(f->st.v[STAT_SFILE_HANDOVERS], 0);
		if (bad || failed || f->st.v[STAT_LOST_SAMPLEFILE])
			print_error("%s, %u keys each: %u samples not recorded, %" PRIu64
				    " counted lost; %s\n",
				    k->what, nr, failed, f->st.v[STAT_LOST_SAMPLEFILE],
				    bad ? err : "chains whole"),
				nr_bad++;
		odb_close(&db);
		if (!bad && (cfx_read(f, n1, 0, NULL, NULL) != 2 * nr ||
			     cfx_total(f, n1) != 4 * nr))
			print_error("%s, %u keys each: %ld keys, %ld samples in the file, "
				    "expected %u, %u\n",
				    k->what, nr, cfx_read(f, n1, 0, NULL, NULL), cfx_total(f, n1),
				    2 * nr, 4 * nr),
				nr_bad++;
		cfx_free(f);
	}
	assert_int_equal(nr_bad, 0);
}

/*
 * The safety net under the aliases: two call-graph files of one set whose
 * specs differ (callee seen in user and in kernel mode) but whose names are
 * the same file. The file is handed over between them on each switch (one
 * writer at a time); every arc is recorded and the chains stay whole. An
 * eviction of the set in between changes nothing.
 */
static void test_same_file_handover(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB, 64);
	op_cookie_t app = cfx_ck(f, "/bin/app", OP_IMAGE_USER);
	op_cookie_t lib = cfx_ck(f, "/lib/libx.so", OP_IMAGE_USER);
	struct op_trans_view v = view(app, app, 5, 5, 0, 0);
	struct op_file_spec sa = { .size = sizeof(sa), .is_cg = true, .cg_to_cookie = lib };
	struct op_file_spec sb = sa;
	struct op_sample_file *fa, *fb;
	char na[PATH_MAX], nb[PATH_MAX], err[256];
	struct op_sfile *sf;
	unsigned i;
	odb_t db;

	(void)state;
	sb.cg_to_is_kernel = 1;
	sf = sfile_find(&f->sft, &v);
	assert_non_null(sf);
	sfile_pin(&f->sft, sf);
	assert_true(sfile_name(&f->sft, sf, 0, &sa, na, sizeof(na)) > 0);
	assert_true(sfile_name(&f->sft, sf, 0, &sb, nb, sizeof(nb)) > 0);
	assert_string_equal(na, nb);
	fa = sfile_open_spec(&f->sft, sf, &sa);
	fb = sfile_open_spec(&f->sft, sf, &sb);
	assert_non_null(fa);
	assert_non_null(fb);
	assert_ptr_not_equal(fa, fb);
	for (i = 0; i < 600; i++) {
		assert_int_equal(sfile_file_add(fa, 0x1000 + 2 * i, 1), 0);
		assert_int_equal(sfile_file_add(fb, 0x1001 + 2 * i, 1), 0);
		assert_int_equal(sfile_file_add(fb, 0x1001, 1), 0);
		assert_true(f->sft.nr_open <= 1);
	}
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 0);
	assert_true(f->st.v[STAT_SFILE_HANDOVERS] >= 1199);
	sfile_close_all(&f->sft);
	assert_int_equal(f->sft.nr_open, 0);
	if (odb_open(&db, f->current_fd, na, ODB_RDONLY, err, sizeof(err)) ||
	    odb_check(&db, err, sizeof(err)))
		fail_msg("%s", err);
	odb_close(&db);
	assert_int_equal(cfx_read(f, na, 0x1001, NULL, NULL), 1200);
	assert_int_equal(cfx_total(f, na), 1800);
	cfx_free(f);
}

/*
 * A binary whose path is too long once mangled into a sample-file name: its
 * samples are lost (lost_samplefile), and the log line names the binary (cut
 * in the middle, no raw control bytes) and says why.
 */
static void test_path_too_long(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB, 8);
	char longp[PATH_MAX + 64], *logbuf = NULL;
	size_t loglen = 0, n;
	struct op_log lg;
	struct op_trans_view v;
	struct op_sfile *sf;
	op_cookie_t img;

	(void)state;
	strcpy(longp, "/opt/vendor-app/");
	n = strlen(longp);
	while (n < PATH_MAX - 200) {
		memcpy(longp + n, "deep/dir/", 9);
		n += 9;
	}
	strcpy(longp + n, "very-long-tail\nforged-binary");
	img = cfx_ck(f, longp, OP_IMAGE_USER);
	v = view(img, img, 5, 5, 0, 0);
	log_init(&lg, open_memstream(&logbuf, &loglen));
	assert_non_null(lg.fp);
	sfile_set_log(&f->sft, &lg);
	sf = sfile_find(&f->sft, &v);
	assert_non_null(sf);
	assert_int_equal(sfile_log(&f->sft, sf, 0, 1, 1), -ENAMETOOLONG);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 1);
	fflush(lg.fp);
	assert_non_null(strstr(logbuf, "cannot name the sample file of /opt/vendor-app/deep/dir/"));
	assert_non_null(strstr(logbuf, "..."));
	assert_non_null(strstr(logbuf, "/very-long-tail?forged-binary (counter 0)"));
	assert_non_null(strstr(logbuf, "too long once mangled"));
	assert_non_null(strstr(logbuf, "stats/lost_samplefile"));
	assert_null(strstr(logbuf, "\nforged"));
	sfile_set_log(&f->sft, NULL);
	fclose(lg.fp);
	free(logbuf);
	cfx_free(f);
}

static void test_root_refuses_others_files(void **state)
{
	struct cfx *f;
	op_cookie_t app;
	struct op_trans_view v;
	char name[PATH_MAX], dir[PATH_MAX], before[8192], after[8192], msg[4096];
	size_t n;
	FILE *log;
	struct op_log lg;
	uint64_t lost;

	(void)state;
	if (geteuid() != 0) {
		print_message("test_root_refuses_others_files: skipped, needs root (chown)\n");
		skip();
	}
	f = cfx_new(OP_SEP_LIB, 8);
	app = cfx_ck(f, "/bin/app", OP_IMAGE_USER);
	v = view(app, app, 5, 5, 0, 0);
	log = tmpfile();
	assert_non_null(log);
	log_init(&lg, log);
	sfile_set_log(&f->sft, &lg);
	assert_true(f->sft.strict);
	assert_int_equal(log_fresh(f, &v), 0);
	assert_true(sfile_name(&f->sft, sfile_find(&f->sft, &v), 0, NULL, name, sizeof(name)) > 0);
	strcpy(dir, name);
	*strrchr(dir, '/') = 0;
	sfile_close_all(&f->sft);
	n = slurp(f->current_fd, name, before, sizeof(before));

	/* the user's file */
	assert_int_equal(fchownat(f->current_fd, name, 65534, 65534, 0), 0);
	lost = f->st.v[STAT_LOST_SAMPLEFILE];
	assert_true(log_fresh(f, &v) < 0);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], lost + 1);
	/* a file anyone may write */
	assert_int_equal(fchownat(f->current_fd, name, 0, 0, 0), 0);
	assert_int_equal(fchmodat(f->current_fd, name, 0666, 0), 0);
	assert_true(log_fresh(f, &v) < 0);
	/* a second link (to a file elsewhere, say) */
	assert_int_equal(fchmodat(f->current_fd, name, 0644, 0), 0);
	assert_int_equal(linkat(f->current_fd, name, f->current_fd, "second-link", 0), 0);
	assert_true(log_fresh(f, &v) < 0);
	assert_int_equal(unlinkat(f->current_fd, "second-link", 0), 0);
	/* the user's directory */
	assert_int_equal(fchownat(f->current_fd, dir, 65534, 65534, 0), 0);
	assert_true(log_fresh(f, &v) < 0);
	sfile_close_all(&f->sft);
	assert_int_equal(slurp(f->current_fd, name, after, sizeof(after)), n);
	assert_memory_equal(before, after, n);
	rewind(log);
	n = fread(msg, 1, sizeof(msg) - 1, log);
	msg[n] = 0;
	assert_non_null(strstr(msg, "it is owned by uid 65534"));
	assert_non_null(strstr(msg, "it is writable by group or other (mode 0666)"));
	assert_non_null(strstr(msg, "it has 2 hard links"));
	assert_non_null(strstr(msg, "its directory is owned by uid 65534"));

	/* a non-root daemon: its own files whoever owns them (the kernel decides) */
	f->sft.strict = false;
	assert_int_equal(log_fresh(f, &v), 0);
	f->sft.strict = true;
	assert_true(log_fresh(f, &v) < 0);
	/* root's again: used */
	assert_int_equal(fchownat(f->current_fd, dir, 0, 0, 0), 0);
	assert_int_equal(log_fresh(f, &v), 0);
	sfile_set_log(&f->sft, NULL);
	fclose(log);
	cfx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys_per_separate),
		cmocka_unit_test(test_split_key), /* issue 20 */
		cmocka_unit_test(test_lru),
		cmocka_unit_test(test_emfile),
		cmocka_unit_test(test_emfile_transient),
		cmocka_unit_test(test_plugin_handlers),
		cmocka_unit_test(test_sync_only_used),
		cmocka_unit_test(test_kept_dirs),
		cmocka_unit_test(test_kept_ancestors),
		cmocka_unit_test(test_close_exited),
		cmocka_unit_test(test_hostile_paths),
		cmocka_unit_test(test_planted_symlink),
		cmocka_unit_test(test_changed_under_writer),
		cmocka_unit_test(test_path_too_long),
		cmocka_unit_test(test_root_refuses_others_files),
		cmocka_unit_test(test_same_file_two_keys),
		cmocka_unit_test(test_same_file_handover),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
