/*
 * test_sync.c - buffer sync on hand-built records: the exact event buffer
 * for fork/exec/mmap/exit sequences, anon and deleted mappings, kernel PCs
 * through a fake resolver, samples without mapping or app, hooks, sources.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <sys/stat.h>

#include "evbuf.h"
#include "session.h"
#include "sync.h"

#define E EVB_ESCAPE
#define MAXW (1 << 20)

struct fx {
	struct cookie_table cookies;
	struct op_emit w;
	struct sync_ctx s;
	struct op_stats st;
	struct ext_registry reg;
	uint64_t out[MAXW];
	size_t n;
	size_t chunks;
	size_t chunk_ends[256];
};

static int capture(void *priv, const uint64_t *words, size_t n)
{
	struct fx *f = priv;

	assert_true(f->n + n <= MAXW);
	memcpy(f->out + f->n, words, n * sizeof(*words));
	f->n += n;
	if (f->chunks < 256)
		f->chunk_ends[f->chunks++] = f->n;
	return 0;
}

static struct fx *fx_new(size_t cap)
{
	struct fx *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	assert_int_equal(cookie_init(&f->cookies), 0);
	f->cookies.no_stat = true;
	assert_int_equal(evb_init(&f->w, cap, capture, f), 0);
	assert_int_equal(sync_init(&f->s, &f->cookies, &f->w, &f->reg, &f->st), 0);
	return f;
}

static void fx_free(struct fx *f)
{
	sync_free(&f->s);
	evb_free(&f->w);
	cookie_free(&f->cookies);
	free(f);
}

static void fx_flush(struct fx *f)
{
	evb_flush(&f->w);
}

static op_cookie_t ck(struct fx *f, const char *path, enum op_image_kind kind)
{
	return cookie_intern(&f->cookies, path, strlen(path), kind, false);
}

static void rec_comm(struct fx *f, uint32_t pid, uint32_t tid, const char *comm, bool exec)
{
	struct op_record r = { .type = OP_REC_COMM };

	r.comm.pid = pid;
	r.comm.tid = tid;
	r.comm.comm = comm;
	r.comm.exec = exec;
	sync_record(&f->s, &r);
}

static void rec_mmap(struct fx *f, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		     const char *fn)
{
	struct op_record r = { .type = OP_REC_MMAP };

	r.mmap.pid = r.mmap.tid = pid;
	r.mmap.start = start;
	r.mmap.len = len;
	r.mmap.pgoff = pgoff;
	r.mmap.cpumode = OP_CPUMODE_USER;
	r.mmap.exec = true;
	r.mmap.filename = fn;
	sync_record(&f->s, &r);
}

static void rec_task(struct fx *f, enum op_rec_type type, uint32_t pid, uint32_t ppid,
		     uint32_t tid)
{
	struct op_record r = { .type = type };

	r.task.pid = pid;
	r.task.ppid = ppid;
	r.task.tid = tid;
	r.task.ptid = ppid;
	sync_record(&f->s, &r);
}

static void rec_sample(struct fx *f, uint32_t pid, uint32_t tid, uint32_t cpu, uint16_t mode,
		       uint64_t ip, uint32_t counter)
{
	struct op_record r = { .type = OP_REC_SAMPLE };

	r.counter = counter;
	r.cpu = cpu;
	r.sample.size = sizeof(r.sample);
	r.sample.pid = pid;
	r.sample.tid = tid;
	r.sample.cpu = cpu;
	r.sample.cpumode = mode;
	r.sample.ip = ip;
	sync_record(&f->s, &r);
}

static void expect_words(struct fx *f, const uint64_t *exp, size_t n)
{
	size_t i;

	fx_flush(f);
	for (i = 0; i < n && i < f->n; i++)
		if (f->out[i] != exp[i])
			fail_msg("word %zu: expected %#llx, found %#llx", i,
				 (unsigned long long)exp[i], (unsigned long long)f->out[i]);
	assert_int_equal(f->n, n);
}

/* one process, two images, two CPUs, a second thread */
static void test_basic(void **state)
{
	struct fx *f = fx_new(1024);
	op_cookie_t hot, libc;

	(void)state;
	rec_comm(f, 100, 100, "hot", true);
	rec_mmap(f, 100, 0x400000, 0x1000, 0, "/bin/hot");
	rec_mmap(f, 100, 0x7f0000, 0x2000, 0x1000, "/lib/libc.so.6");
	hot = ck(f, "/bin/hot", OP_IMAGE_USER);
	libc = ck(f, "/lib/libc.so.6", OP_IMAGE_USER);
	assert_int_not_equal(hot, libc);
	rec_sample(f, 100, 100, 0, OP_CPUMODE_USER, 0x400123, 0);
	rec_sample(f, 100, 100, 0, OP_CPUMODE_USER, 0x400200, 0);
	rec_sample(f, 100, 100, 0, OP_CPUMODE_USER, 0x7f0010, 1);
	rec_sample(f, 100, 101, 1, OP_CPUMODE_USER, 0x7f0010, 0);
	const uint64_t exp[] = {
		E, EVB_CPU_SWITCH, 1, 0,
		E, EVB_CTX_SWITCH, 3, 100, hot, 100,
		E, EVB_USER_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, hot,
		0x123, 0,
		0x200, 0,
		E, EVB_COOKIE_SWITCH, 1, libc,
		0x1010, 1,
		E, EVB_CPU_SWITCH, 1, 1,
		E, EVB_CTX_SWITCH, 3, 101, hot, 100,
		0x1010, 0,
	};
	expect_words(f, exp, sizeof(exp) / sizeof(exp[0]));
	assert_int_equal(f->st.v[STAT_SAMPLES], 4);
	assert_int_equal(f->st.v[STAT_USER_SAMPLES], 4);
	fx_free(f);
}

/*
 * A cpu's cached mapping (the fast path) survives records of other
 * processes, and goes with a record of its own process: here a FORK that
 * restarts a live pid with another parent's maps.
 */
static void test_fast_path_records(void **state)
{
	struct fx *f = fx_new(1024);
	op_cookie_t a, b;

	(void)state;
	rec_comm(f, 100, 100, "a", true);
	rec_mmap(f, 100, 0x400000, 0x1000, 0, "/bin/a");
	rec_comm(f, 200, 200, "b", true);
	rec_mmap(f, 200, 0x400000, 0x1000, 0, "/bin/b");
	a = ck(f, "/bin/a", OP_IMAGE_USER);
	b = ck(f, "/bin/b", OP_IMAGE_USER);
	rec_sample(f, 100, 100, 0, OP_CPUMODE_USER, 0x400010, 0);
	rec_sample(f, 100, 100, 0, OP_CPUMODE_USER, 0x400020, 0);
	rec_mmap(f, 300, 0x400000, 0x1000, 0, "/lib/x");   /* another process */
	rec_comm(f, 300, 300, "x", false);
	rec_task(f, OP_REC_FORK, 400, 300, 400);
	rec_sample(f, 100, 100, 0, OP_CPUMODE_USER, 0x400030, 0);
	rec_task(f, OP_REC_FORK, 100, 200, 100);           /* pid 100 is b's child now */
	rec_sample(f, 100, 100, 0, OP_CPUMODE_USER, 0x400040, 0);
	const uint64_t exp[] = {
		E, EVB_CPU_SWITCH, 1, 0,
		E, EVB_CTX_SWITCH, 3, 100, a, 100,
		E, EVB_USER_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, a,
		0x10, 0,
		0x20, 0,
		0x30, 0,
		E, EVB_CTX_SWITCH, 3, 100, b, 100,
		E, EVB_COOKIE_SWITCH, 1, b,
		0x40, 0,
	};
	expect_words(f, exp, sizeof(exp) / sizeof(exp[0]));
	fx_free(f);
}

/*
 * Reaped tasks are reused (struct and map array): a process made from a
 * reused one has nothing of the old one - no maps, name or application.
 */
static void test_reused_tasks(void **state)
{
	struct fx *f = fx_new(1 << 16);
	op_cookie_t fresh;
	uint32_t pid;

	(void)state;
	for (pid = 1000; pid < 1000 + 2 * TASK_SPARE_MAX; pid++) {
		rec_comm(f, pid, pid, "old", true);
		rec_mmap(f, pid, 0x400000, 0x1000, 0, "/bin/old");
		rec_mmap(f, pid, 0x7f0000, 0x1000, 0, "/lib/libold.so");
		rec_task(f, OP_REC_EXIT, pid, 1, pid);
	}
	sync_round_end(&f->s);
	assert_int_equal(f->s.tasks.nr_spare, TASK_SPARE_MAX);
	rec_task(f, OP_REC_FORK, 5000, 4000, 5000); /* parent never seen */
	rec_mmap(f, 5000, 0x500000, 0x1000, 0, "/bin/fresh");
	assert_int_equal(f->s.tasks.nr_spare, TASK_SPARE_MAX - 1);
	fresh = ck(f, "/bin/fresh", OP_IMAGE_USER);
	rec_sample(f, 5000, 5000, 0, OP_CPUMODE_USER, 0x400010, 0); /* the old maps: gone */
	rec_sample(f, 5000, 5000, 0, OP_CPUMODE_USER, 0x7f0010, 0);
	assert_int_equal(f->st.v[STAT_LOST_NO_MAPPING], 2);
	rec_sample(f, 5000, 5000, 0, OP_CPUMODE_USER, 0x500010, 0);
	const uint64_t exp[] = {
		E, EVB_CPU_SWITCH, 1, 0,
		E, EVB_CTX_SWITCH, 3, 5000, fresh, 5000,
		E, EVB_USER_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, fresh,
		0x10, 0,
	};
	expect_words(f, exp, sizeof(exp) / sizeof(exp[0]));
	assert_string_equal(task_find(&f->s.tasks, 5000)->comm, "");
	fx_free(f);
}

/* fork copies maps, exec drops them, exit frees after the round */
static void test_fork_exec_exit(void **state)
{
	struct fx *f = fx_new(1024);
	op_cookie_t hot, ls;

	(void)state;
	rec_comm(f, 100, 100, "hot", true);
	rec_mmap(f, 100, 0x400000, 0x1000, 0, "/bin/hot");
	hot = ck(f, "/bin/hot", OP_IMAGE_USER);
	rec_task(f, OP_REC_FORK, 200, 100, 200);
	rec_sample(f, 200, 200, 0, OP_CPUMODE_USER, 0x400010, 0); /* inherited map */
	rec_task(f, OP_REC_FORK, 100, 100, 150);                  /* a thread of 100 */
	rec_sample(f, 100, 150, 0, OP_CPUMODE_USER, 0x400020, 0);
	rec_comm(f, 200, 200, "ls", true);
	rec_sample(f, 200, 200, 0, OP_CPUMODE_USER, 0x400010, 0); /* old map gone */
	assert_int_equal(f->st.v[STAT_LOST_NO_MAPPING], 1);
	rec_mmap(f, 200, 0x500000, 0x3000, 0x2000, "/bin/ls");
	ls = ck(f, "/bin/ls", OP_IMAGE_USER);
	rec_sample(f, 200, 200, 0, OP_CPUMODE_USER, 0x500004, 0);
	rec_task(f, OP_REC_EXIT, 200, 1, 200);
	rec_sample(f, 200, 200, 0, OP_CPUMODE_USER, 0x500008, 0); /* same round: still known */
	sync_round_end(&f->s);
	rec_sample(f, 200, 200, 0, OP_CPUMODE_USER, 0x500008, 0); /* freed */
	assert_int_equal(f->st.v[STAT_LOST_NO_APP_USER], 1);
	const uint64_t exp[] = {
		E, EVB_CPU_SWITCH, 1, 0,
		E, EVB_CTX_SWITCH, 3, 200, hot, 200,
		E, EVB_USER_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, hot,
		0x10, 0,
		E, EVB_CTX_SWITCH, 3, 150, hot, 100,
		0x20, 0,
		E, EVB_CTX_SWITCH, 3, 200, ls, 200,
		E, EVB_COOKIE_SWITCH, 1, ls,
		0x2004, 0,
		0x2008, 0,
	};
	expect_words(f, exp, sizeof(exp) / sizeof(exp[0]));
	fx_free(f);
}

/* the leader thread exits first: the process lives on with its other thread */
static void test_thread_exit(void **state)
{
	struct fx *f = fx_new(1024);
	op_cookie_t hot;

	(void)state;
	rec_comm(f, 100, 100, "hot", true);
	rec_mmap(f, 100, 0x400000, 0x1000, 0, "/bin/hot");
	hot = ck(f, "/bin/hot", OP_IMAGE_USER);
	rec_task(f, OP_REC_FORK, 100, 100, 150);  /* thread 150 */
	rec_task(f, OP_REC_EXIT, 100, 100, 100);  /* the leader exits */
	sync_round_end(&f->s);
	rec_sample(f, 100, 150, 0, OP_CPUMODE_USER, 0x400010, 0);
	rec_task(f, OP_REC_EXIT, 100, 100, 150);  /* the last thread */
	rec_sample(f, 100, 150, 0, OP_CPUMODE_USER, 0x400020, 0); /* same round */
	sync_round_end(&f->s);
	rec_sample(f, 100, 150, 0, OP_CPUMODE_USER, 0x400030, 0); /* gone */
	assert_int_equal(f->st.v[STAT_LOST_NO_APP_USER], 1);
	const uint64_t exp[] = {
		E, EVB_CPU_SWITCH, 1, 0,
		E, EVB_CTX_SWITCH, 3, 150, hot, 100,
		E, EVB_USER_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, hot,
		0x10, 0,
		0x20, 0,
	};
	expect_words(f, exp, sizeof(exp) / sizeof(exp[0]));
	fx_free(f);
}

/* anon regions, [vdso], deleted files, overlapping maps */
static void test_anon_deleted(void **state)
{
	struct fx *f = fx_new(1024);
	op_cookie_t app, anon, vdso, del;

	(void)state;
	rec_comm(f, 7, 7, "java", true);
	rec_mmap(f, 7, 0x1000, 0x1000, 0, "/usr/bin/java");
	rec_mmap(f, 7, 0x10000, 0x4000, 0, "//anon");
	rec_mmap(f, 7, 0x20000, 0x1000, 0, "[vdso]");
	rec_mmap(f, 7, 0x30000, 0x1000, 0x5000, "/tmp/gone.so (deleted)");
	app = ck(f, "/usr/bin/java", OP_IMAGE_USER);
	anon = ck(f, "anon", OP_IMAGE_ANON);
	vdso = ck(f, "[vdso]", OP_IMAGE_ANON);
	del = cookie_intern(&f->cookies, "/tmp/gone.so", 12, OP_IMAGE_USER, true);
	assert_true(cookie_get(&f->cookies, del)->deleted);
	rec_sample(f, 7, 7, 0, OP_CPUMODE_USER, 0x10010, 0);
	rec_sample(f, 7, 7, 0, OP_CPUMODE_USER, 0x20008, 0);
	rec_sample(f, 7, 7, 0, OP_CPUMODE_USER, 0x30100, 0);
	/* a new map over the middle of the anon region splits it */
	rec_mmap(f, 7, 0x11000, 0x1000, 0, "/usr/lib/jit.so");
	rec_sample(f, 7, 7, 0, OP_CPUMODE_USER, 0x13004, 0);
	const uint64_t exp[] = {
		E, EVB_CPU_SWITCH, 1, 0,
		E, EVB_CTX_SWITCH, 3, 7, app, 7,
		E, EVB_USER_ENTER, 0,
		E, EVB_ANON_SWITCH, 3, anon, 0x10000, 0x13fff,
		0x10, 0,
		E, EVB_ANON_SWITCH, 3, vdso, 0x20000, 0x20fff,
		0x8, 0,
		E, EVB_COOKIE_SWITCH, 1, del,
		0x5100, 0,
		E, EVB_ANON_SWITCH, 3, anon, 0x12000, 0x13fff,
		0x1004, 0,
	};
	expect_words(f, exp, sizeof(exp) / sizeof(exp[0]));
	fx_free(f);
}

/* the fake kernel resolver: one image [0xffffffff81000000, +16 MiB) */
static op_cookie_t fake_kernel_cookie;
static int fake_resolve_calls;

static int fake_resolve(void *priv, uint64_t pc, struct op_kernel_image *out)
{
	(void)priv;
	fake_resolve_calls++;
	if (pc < 0xffffffff81000000ull || pc >= 0xffffffff82000000ull)
		return -ENOENT;
	out->cookie = fake_kernel_cookie;
	out->start = 0xffffffff81000000ull;
	out->end = 0xffffffff82000000ull;
	return 0;
}

/* the kernel plugin's resolver, faked: one image at 0xffffffff81000000 */
static void fx_fake_kernel(struct fx *f)
{
	f->reg.has_kernel = true;
	f->reg.kernel.ops.resolve = fake_resolve;
	fake_kernel_cookie = ck(f, "vmlinux", OP_IMAGE_KERNEL);
}

static void xorshift(uint64_t *r)
{
	*r ^= *r << 13;
	*r ^= *r >> 7;
	*r ^= *r << 17;
}

static void test_kernel(void **state)
{
	struct fx *f = fx_new(1024);
	op_cookie_t hot, k;

	(void)state;
	/* no resolver: kernel samples are lost */
	rec_sample(f, 0, 0, 0, OP_CPUMODE_KERNEL, 0xffffffff81000100ull, 0);
	assert_int_equal(f->st.v[STAT_LOST_KERNEL], 1);

	k = sync_cookie_intern(&f->s, "no-vmlinux", true);
	assert_int_equal(cookie_get(&f->cookies, k)->kind, OP_IMAGE_KERNEL);
	fake_kernel_cookie = k;
	f->reg.has_kernel = true;
	f->reg.kernel.ops.size = sizeof(f->reg.kernel.ops);
	f->reg.kernel.ops.resolve = fake_resolve;
	rec_comm(f, 100, 100, "hot", true);
	rec_mmap(f, 100, 0x400000, 0x1000, 0, "/bin/hot");
	hot = ck(f, "/bin/hot", OP_IMAGE_USER);
	fake_resolve_calls = 0;
	rec_sample(f, 0, 0, 0, OP_CPUMODE_KERNEL, 0xffffffff81000100ull, 0);   /* idle */
	rec_sample(f, 100, 100, 0, OP_CPUMODE_KERNEL, 0xffffffff81000200ull, 0);
	rec_sample(f, 100, 100, 0, OP_CPUMODE_USER, 0x400004, 0);
	rec_sample(f, 100, 100, 0, OP_CPUMODE_KERNEL, 0xffffffff81000300ull, 0);
	assert_int_equal(fake_resolve_calls, 1); /* cached */
	rec_sample(f, 100, 100, 0, OP_CPUMODE_KERNEL, 0xffffffffa0000000ull, 0); /* outside */
	assert_int_equal(f->st.v[STAT_LOST_KERNEL], 2);
	rec_sample(f, 100, 100, 0, OP_CPUMODE_HYPERVISOR, 0x1234, 0);
	assert_int_equal(f->st.v[STAT_LOST_INVALID_DOMAIN], 1);
	const uint64_t exp[] = {
		E, EVB_CPU_SWITCH, 1, 0,
		E, EVB_CTX_SWITCH, 3, 0, 0, 0,
		E, EVB_KERNEL_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, k,
		0x100, 0,
		E, EVB_CTX_SWITCH, 3, 100, hot, 100,
		0x200, 0,
		E, EVB_USER_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, hot,
		0x4, 0,
		E, EVB_KERNEL_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, k,
		0x300, 0,
	};
	expect_words(f, exp, sizeof(exp) / sizeof(exp[0]));
	assert_int_equal(f->st.v[STAT_KERNEL_SAMPLES], 5);
	fx_free(f);
}

/* samples that arrive before anything tells sync about their process/map */
static void test_sample_before_mmap(void **state)
{
	struct fx *f = fx_new(1024);

	(void)state;
	rec_sample(f, 300, 300, 0, OP_CPUMODE_USER, 0x400000, 0); /* unknown task */
	rec_comm(f, 300, 300, "late", true);
	rec_sample(f, 300, 300, 0, OP_CPUMODE_USER, 0x400000, 0); /* no map yet */
	rec_mmap(f, 300, 0x400000, 0x1000, 0, "/bin/late");
	rec_sample(f, 300, 300, 0, OP_CPUMODE_USER, 0x401000, 0); /* just past the end */
	assert_int_equal(f->st.v[STAT_LOST_NO_APP_USER], 1);
	assert_int_equal(f->st.v[STAT_LOST_NO_MAPPING], 2);
	assert_int_equal(f->st.v[STAT_SAMPLES], 3);
	fx_flush(f);
	assert_int_equal(f->n, 0); /* nothing emitted for lost samples */
	fx_free(f);
}

/* app choice: the exec'd binary (matching comm) wins over libraries */
static void test_app_choice(void **state)
{
	struct fx *f = fx_new(1024);
	op_cookie_t app;

	(void)state;
	rec_comm(f, 9, 9, "myprog", true);
	rec_mmap(f, 9, 0x7f000000, 0x1000, 0, "/lib64/ld-linux-x86-64.so.2");
	rec_mmap(f, 9, 0x555000, 0x1000, 0, "/opt/myprog");
	rec_mmap(f, 9, 0x7e000000, 0x1000, 0, "/lib/libmyprogx.so"); /* matches too, but later */
	app = ck(f, "/opt/myprog", OP_IMAGE_USER);
	rec_sample(f, 9, 9, 0, OP_CPUMODE_USER, 0x7f000010, 0);
	fx_flush(f);
	assert_true(f->n >= 10);
	assert_int_equal(f->out[5], EVB_CTX_SWITCH);
	assert_int_equal(f->out[8], app);
	fx_free(f);
}

static int hook_calls;

static int hook_emit(void *priv, const struct op_perf_sample *s, op_emit_t *w)
{
	uint64_t a[2] = { s->ip, 7 };

	(void)priv;
	hook_calls++;
	return sync_emit(w, 40, a, 2);
}

static int source_calls;

static int source_sample(void *priv, const struct op_perf_sample *s, op_emit_t *w)
{
	uint64_t a[1] = { s->addr };

	(void)priv;
	source_calls++;
	/* core codes are refused to plugins */
	assert_int_equal(sync_emit(w, EVB_CTX_SWITCH, a, 1), -EINVAL);
	return sync_emit(w, 41, a, 1);
}

static void test_hooks_sources(void **state)
{
	struct fx *f = fx_new(1024);
	struct op_record r = { .type = OP_REC_SAMPLE };
	op_cookie_t hot;

	(void)state;
	f->reg.hooks[0].desc.on_sample = hook_emit;
	f->reg.nr_hooks = 1;
	f->reg.sources[0].desc.on_sample = source_sample;
	f->reg.nr_sources = 1;
	rec_comm(f, 100, 100, "hot", true);
	rec_mmap(f, 100, 0x400000, 0x1000, 0, "/bin/hot");
	hot = ck(f, "/bin/hot", OP_IMAGE_USER);
	rec_sample(f, 100, 100, 0, OP_CPUMODE_USER, 0x400010, 0);
	/* a sample of plugin source 0 (source index 1) on cpu 1 */
	r.cpu = 1;
	r.sample.source = 1;
	r.sample.pid = r.sample.tid = 100;
	r.sample.cpu = 1;
	r.sample.cpumode = OP_CPUMODE_USER;
	r.sample.ip = 0x400020;
	r.sample.addr = 0xabc;
	sync_record(&f->s, &r);
	/* an unknown source is counted */
	r.sample.source = 5;
	sync_record(&f->s, &r);
	assert_int_equal(f->st.v[STAT_LOST_BAD_COUNTER], 1);
	assert_int_equal(hook_calls, 1);
	assert_int_equal(source_calls, 1);
	const uint64_t exp[] = {
		E, EVB_CPU_SWITCH, 1, 0,
		E, EVB_CTX_SWITCH, 3, 100, hot, 100,
		E, EVB_USER_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, hot,
		0x10, 0,
		E, 40, 2, 0x400010, 7,
		E, EVB_CPU_SWITCH, 1, 1,
		E, 41, 1, 0xabc,
	};
	expect_words(f, exp, sizeof(exp) / sizeof(exp[0]));
	assert_int_equal(f->st.v[STAT_SOURCE_SAMPLES], 2);
	fx_free(f);
}

/* a small buffer flushes between records, never inside one */
static void test_flush_boundaries(void **state)
{
	struct fx *f = fx_new(64);
	size_t c, i, start = 0;
	int k;

	(void)state;
	rec_comm(f, 100, 100, "hot", true);
	rec_mmap(f, 100, 0x400000, 0x1000, 0, "/bin/hot");
	rec_mmap(f, 100, 0x500000, 0x1000, 0, "/bin/other");
	for (k = 0; k < 200; k++)
		rec_sample(f, 100, 100 + (k % 3), k % 2, OP_CPUMODE_USER,
			   (k % 5 ? 0x400000 : 0x500000) + k, 0);
	fx_flush(f);
	assert_true(f->chunks > 5);
	for (c = 0; c < f->chunks; c++) {
		/* every chunk parses to its exact end */
		for (i = start; i < f->chunk_ends[c];) {
			if (f->out[i] == E)
				i += 3 + f->out[i + 2];
			else
				i += 2;
		}
		assert_int_equal(i, f->chunk_ends[c]);
		assert_true(f->chunk_ends[c] - start <= 64);
		start = f->chunk_ends[c];
	}
	fx_free(f);
}

/* the map_pc host service */
static void test_map_pc(void **state)
{
	struct fx *f = fx_new(1024);
	struct op_pc_map m;

	(void)state;
	rec_comm(f, 100, 100, "hot", true);
	rec_mmap(f, 100, 0x400000, 0x1000, 0x3000, "/bin/hot");
	rec_mmap(f, 100, 0x600000, 0x1000, 0, "[heap]");
	assert_int_equal(sync_map_pc(&f->s, 100, OP_CPUMODE_USER, 0x400010, &m), 0);
	assert_int_equal(m.in_kernel, 0);
	assert_int_equal(m.offset, 0x3010);
	assert_string_equal(sync_cookie_path(&f->s, m.cookie), "/bin/hot");
	assert_int_equal(sync_map_pc(&f->s, 100, OP_CPUMODE_USER, 0x600010, &m), 0);
	assert_int_equal(m.anon_start, 0x600000);
	assert_int_equal(m.anon_end, 0x600fff);
	assert_string_equal(sync_cookie_path(&f->s, m.cookie), "[heap]");
	assert_int_equal(sync_map_pc(&f->s, 100, OP_CPUMODE_USER, 0x700000, &m), -ENOENT);
	assert_int_equal(sync_map_pc(&f->s, 101, OP_CPUMODE_USER, 0x400010, &m), -ESRCH);
	assert_int_equal(sync_map_pc(&f->s, 100, OP_CPUMODE_KERNEL, 0xffffffff81000000ull, &m),
			 -ENOENT);
	fx_free(f);
}

/* a process whose records were lost is read once from (a fake) /proc */
static void test_proc_probe(void **state)
{
	struct fx *f = fx_new(1024);
	char root[] = "tmp-proc-XXXXXX", path[256];
	op_cookie_t app, heap;
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/4242", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/4242/comm", root);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("probed\n", fp);
	fclose(fp);
	snprintf(path, sizeof(path), "%s/4242/maps", root);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fputs("55d000000000-55d000001000 r--p 00000000 08:01 1234   /usr/bin/probed\n"
	      "55d000001000-55d000003000 r-xp 00001000 08:01 1234   /usr/bin/probed\n"
	      "55d000100000-55d000200000 rwxp 00000000 00:00 0      [heap]\n"
	      "7f0000000000-7f0000010000 r-xp 00000000 00:00 0 \n"
	      "garbage line\n", fp);
	fclose(fp);
	f->s.proc_root = root;
	rec_sample(f, 4242, 4243, 0, OP_CPUMODE_USER, 0x55d000001010ull, 0);
	rec_sample(f, 4242, 4242, 0, OP_CPUMODE_USER, 0x55d000100020ull, 0);
	rec_sample(f, 4242, 4242, 0, OP_CPUMODE_USER, 0x12345, 0);   /* no map: no new probe */
	rec_sample(f, 5000, 5000, 0, OP_CPUMODE_USER, 0x1000, 0);    /* gone */
	rec_sample(f, 5000, 5000, 0, OP_CPUMODE_USER, 0x1000, 0);    /* remembered */
	assert_int_equal(f->st.v[STAT_PROC_PROBES], 2);
	assert_int_equal(f->st.v[STAT_PROC_PROBE_FAILED], 1);
	assert_int_equal(f->st.v[STAT_LOST_NO_MAPPING], 1);
	assert_int_equal(f->st.v[STAT_LOST_NO_APP_USER], 2);
	app = ck(f, "/usr/bin/probed", OP_IMAGE_USER);
	heap = ck(f, "[heap]", OP_IMAGE_ANON);
	const uint64_t exp[] = {
		E, EVB_CPU_SWITCH, 1, 0,
		E, EVB_CTX_SWITCH, 3, 4243, app, 4242,
		E, EVB_USER_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, app,
		0x1010, 0,
		E, EVB_CTX_SWITCH, 3, 4242, app, 4242,
		E, EVB_ANON_SWITCH, 3, heap, 0x55d000100000ull, 0x55d0001fffffull,
		0x20, 0,
	};
	expect_words(f, exp, sizeof(exp) / sizeof(exp[0]));
	session_rm_tree(AT_FDCWD, root);
	fx_free(f);
}

/* --image=hot,/lib/libx.so: a sample stays if its image or its app is listed */
static void test_image_filter(void **state)
{
	static char *const filter[] = { "hot", "/lib/libx.so", NULL };
	struct fx *f = fx_new(1024);

	(void)state;
	f->cookies.filter = filter;
	rec_comm(f, 1, 1, "hot", true);
	rec_mmap(f, 1, 0x400000, 0x1000, 0, "/usr/bin/hot");
	rec_mmap(f, 1, 0x500000, 0x1000, 0, "/lib/libc.so.6");
	rec_comm(f, 2, 2, "other", true);
	rec_mmap(f, 2, 0x400000, 0x1000, 0, "/usr/bin/other");
	rec_mmap(f, 2, 0x500000, 0x1000, 0, "/lib/libc.so.6");
	rec_mmap(f, 2, 0x600000, 0x1000, 0, "/lib/libx.so");
	rec_sample(f, 1, 1, 0, OP_CPUMODE_USER, 0x400001, 0); /* app hot: kept */
	rec_sample(f, 1, 1, 0, OP_CPUMODE_USER, 0x500002, 0); /* libc of hot: kept */
	rec_sample(f, 2, 2, 0, OP_CPUMODE_USER, 0x400003, 0); /* other: skipped */
	rec_sample(f, 2, 2, 0, OP_CPUMODE_USER, 0x500004, 0); /* libc of other: skipped */
	rec_sample(f, 2, 2, 0, OP_CPUMODE_USER, 0x600005, 0); /* libx: kept */
	assert_int_equal(f->st.v[STAT_IMAGE_FILTERED], 2);
	fx_flush(f);
	/* ... 0x2 0 | ctx(6 words) | cookie(4 words) | 0x5 0 */
	assert_int_equal(f->n, 37);
	assert_int_equal(f->out[f->n - 2], 5);
	assert_int_equal(f->out[f->n - 14], 2);
	fx_free(f);
}

/*
 * task_add_map against a reference model: random mappings over a small
 * address space; after each one every address must map like the model
 * (last writer wins) and the list must stay sorted and disjoint.
 */
static void test_map_overlaps_model(void **state)
{
	enum { SPACE = 512 };
	static uint32_t model[SPACE]; /* cookie per address, 0 = none */
	static uint64_t model_off[SPACE];
	struct task t;
	uint64_t r = 0x9e3779b97f4a7c15ull;
	int op, a, k;

	(void)state;
	memset(&t, 0, sizeof(t));
	memset(model, 0, sizeof(model));
	for (op = 0; op < 3000; op++) {
		uint64_t start, len, pgoff;
		uint32_t c;

		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		start = r % SPACE;
		len = 1 + (r >> 16) % 64;
		if (start + len > SPACE)
			len = SPACE - start;
		pgoff = (r >> 32) % 1000;
		c = 1 + (uint32_t)(op % 1000);
		assert_int_equal(task_add_map(&t, start, len, pgoff, c, false), 0);
		for (a = 0; a < (int)len; a++) {
			model[start + a] = c;
			model_off[start + a] = pgoff + a;
		}
		for (k = 1; k < (int)t.nr_maps; k++)
			assert_true(t.maps[k - 1].end <= t.maps[k].start);
		for (k = 0; k < (int)t.nr_maps; k++)
			assert_true(t.maps[k].start < t.maps[k].end);
		for (a = 0; a < SPACE; a++) {
			const struct task_map *m = task_find_map(&t, (uint64_t)a);

			if (!model[a]) {
				assert_null(m);
				continue;
			}
			assert_non_null(m);
			assert_int_equal(m->cookie, model[a]);
			assert_int_equal(a - m->start + m->pgoff, model_off[a]);
		}
	}
	free(t.maps);
}

/* random record streams never crash and never emit a malformed buffer */
/*
 * Two CPUs' samples interleaved in time: a cpu seen before gets
 * EVB_CPU_RESTORE and its own context back (no context or image code
 * again); with the smallest buffer the code lands across flushes alike.
 */
static void cpu_interleave(size_t cap)
{
	struct fx *f = fx_new(cap);
	op_cookie_t a, b;
	int i;

	rec_comm(f, 100, 100, "a", true);
	rec_mmap(f, 100, 0x400000, 0x1000, 0, "/bin/a");
	rec_comm(f, 200, 200, "b", true);
	rec_mmap(f, 200, 0x400000, 0x1000, 0, "/bin/b");
	a = ck(f, "/bin/a", OP_IMAGE_USER);
	b = ck(f, "/bin/b", OP_IMAGE_USER);
	for (i = 0; i < 3; i++) {
		rec_sample(f, 100, 100, 0, OP_CPUMODE_USER, 0x400010 + i, 0);
		rec_sample(f, 200, 200, 1, OP_CPUMODE_USER, 0x400020 + i, 0);
	}
	rec_sample(f, 300, 300, 300, OP_CPUMODE_USER, 0x400030, 0); /* unknown task: dropped */
	const uint64_t exp[] = {
		E, EVB_CPU_SWITCH, 1, 0,
		E, EVB_CTX_SWITCH, 3, 100, a, 100,
		E, EVB_USER_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, a,
		0x10, 0,
		E, EVB_CPU_SWITCH, 1, 1,
		E, EVB_CTX_SWITCH, 3, 200, b, 200,
		E, EVB_COOKIE_SWITCH, 1, b,
		0x20, 0,
		E, EVB_CPU_RESTORE, 1, 0,
		0x11, 0,
		E, EVB_CPU_RESTORE, 1, 1,
		0x21, 0,
		E, EVB_CPU_RESTORE, 1, 0,
		0x12, 0,
		E, EVB_CPU_RESTORE, 1, 1,
		0x22, 0,
	};
	expect_words(f, exp, sizeof(exp) / sizeof(exp[0]));
	assert_int_equal(f->st.v[STAT_SAMPLES], 7);
	assert_int_equal(f->st.v[STAT_LOST_NO_APP_USER], 1);
	fx_free(f);
}

static void test_cpu_interleave(void **state)
{
	(void)state;
	cpu_interleave(1024);
	cpu_interleave(64);
}

static uint64_t throttled_id;
static int throttled_calls;

static void on_throttle(void *arg, uint64_t id)
{
	assert_ptr_equal(arg, &throttled_calls);
	throttled_id = id;
	throttled_calls++;
}

/* a THROTTLE record reaches the daemon's hook with its event id */
static void test_throttle_hook(void **state)
{
	struct fx *f = fx_new(1024);
	struct op_record r = { .type = OP_REC_THROTTLE };

	(void)state;
	r.throttle.id = 42;
	sync_record(&f->s, &r); /* no hook set: only counted */
	sync_set_throttle_hook(&f->s, on_throttle, &throttled_calls);
	r.throttle.id = 77;
	assert_int_equal(sync_deliver(&f->s, &r), 0);
	assert_int_equal(throttled_calls, 1);
	assert_int_equal(throttled_id, 77);
	assert_int_equal(f->st.v[STAT_THROTTLE], 2);
	fx_free(f);
}

/* what a sample pair stands for, by the context codes before it */
struct sem {
	uint64_t cpu, tid, tgid, app, in_kernel, cookie, anon_start, anon_end, offset, counter;
};

/*
 * Differential check of the whole sample path of sync (fast and full):
 * random records; for every core sample the expected meaning is taken from
 * sync_map_pc() and the task table just before the record goes in, and the
 * event buffer, read back with trans' context rules, must say the same.
 */
/* a plugin source that writes nothing of its own (its sample's context codes only) */
static int source_quiet(void *priv, const struct op_perf_sample *s, op_emit_t *w)
{
	(void)priv;
	(void)s;
	(void)w;
	return 0;
}

/*
 * With @sources, one sample in six is of a plugin source (IBS, say): sync
 * writes that sample's context, so the core samples after it must not
 * take a context they did not write for granted.
 */
static void random_semantics(uint64_t seed, bool sources)
{
	static const char *const names[] = { "/bin/a", "/lib/b.so", "//anon", "[heap]",
					      "/x (deleted)", "[vdso]" };
	struct fx *f = fx_new(64);
	struct sem *want = calloc(40000, sizeof(*want)), ctx[4], *cur, got;
	bool valid[4] = { false };
	size_t nwant = 0, ngot = 0, i;
	uint64_t r = seed;
	int n;

	assert_non_null(want);
	fx_fake_kernel(f);
	if (sources) {
		f->reg.sources[0].desc.on_sample = source_quiet;
		f->reg.nr_sources = 1;
	}
	for (n = 0; n < 40000; n++) {
		struct op_record rec;
		uint32_t pid;

		xorshift(&r);
		memset(&rec, 0, sizeof(rec));
		pid = 1 + (uint32_t)(r % 5);
		switch ((r >> 8) % 32) {
		case 0:
			rec.type = OP_REC_MMAP;
			rec.mmap.pid = rec.mmap.tid = pid;
			rec.mmap.start = ((r >> 12) % 32) << 12;
			rec.mmap.len = (1 + (r >> 20) % 8) << 12;
			rec.mmap.pgoff = ((r >> 28) % 16) << 12;
			rec.mmap.exec = true;
			rec.mmap.cpumode = OP_CPUMODE_USER;
			rec.mmap.filename = names[(r >> 48) % 6];
			break;
		case 1:
			rec.type = OP_REC_COMM;
			rec.comm.pid = pid;
			rec.comm.tid = pid;
			rec.comm.exec = (r >> 16) % 4 == 0;
			rec.comm.comm = "a";
			break;
		case 2:
			rec.type = (r >> 12) % 2 ? OP_REC_FORK : OP_REC_EXIT;
			rec.task.pid = pid;
			rec.task.ppid = 1 + (uint32_t)((r >> 16) % 5);
			rec.task.tid = pid;
			break;
		case 3:
			sync_round_end(&f->s);
			continue;
		default:
			rec.type = OP_REC_SAMPLE;
			rec.sample.size = sizeof(rec.sample);
			rec.sample.pid = pid;
			rec.sample.tid = pid + 100 * (uint32_t)((r >> 10) % 2);
			rec.sample.cpu = (uint32_t)((r >> 12) % 4);
			rec.sample.cpumode = (r >> 14) % 3 ? OP_CPUMODE_USER : OP_CPUMODE_KERNEL;
			rec.sample.ip = rec.sample.cpumode == OP_CPUMODE_USER
					? (r >> 24) % (40 << 12)
					: 0xffffffff81000000ull + ((r >> 24) % 0x1000);
			rec.counter = (uint32_t)((r >> 52) % 2);
			if (sources && (r >> 40) % 6 == 0) {
				rec.sample.source = 1;
				break;
			}
			{
				struct op_pc_map m;
				struct task *t = task_find(&f->s.tasks, pid);

				if (sync_map_pc(&f->s, pid, rec.sample.cpumode, rec.sample.ip, &m) == 0 &&
				    m.offset != EVB_ESCAPE) {
					want[nwant++] = (struct sem){
						.cpu = rec.sample.cpu, .tid = rec.sample.tid, .tgid = pid,
						.app = t ? t->app_cookie : 0, .in_kernel = (uint64_t)m.in_kernel,
						.cookie = m.cookie, .anon_start = m.anon_start,
						.anon_end = m.anon_end, .offset = m.offset,
						.counter = rec.counter,
					};
				}
			}
			break;
		}
		assert_int_equal(sync_record(&f->s, &rec), 0);
	}
	fx_flush(f);
	print_message("%zu of the samples mapped\n", nwant);
	assert_true(nwant > 10000);
	/* read the buffer back as trans does: a context per cpu */
	memset(ctx, 0, sizeof(ctx));
	cur = &ctx[0];
	for (i = 0; i < f->n;) {
		const uint64_t *w = &f->out[i];

		if (w[0] != E) {
			got = *cur;
			got.offset = w[0];
			got.counter = w[1];
			assert_true(ngot < nwant);
			if (memcmp(&got, &want[ngot], sizeof(got)))
				fail_msg("sample %zu: cpu %llu tid %llu cookie %llu offset %#llx, expected "
					 "cpu %llu tid %llu cookie %llu offset %#llx", ngot,
					 (unsigned long long)got.cpu, (unsigned long long)got.tid,
					 (unsigned long long)got.cookie, (unsigned long long)got.offset,
					 (unsigned long long)want[ngot].cpu,
					 (unsigned long long)want[ngot].tid,
					 (unsigned long long)want[ngot].cookie,
					 (unsigned long long)want[ngot].offset);
			ngot++;
			i += 2;
			continue;
		}
		switch (w[1]) {
		case EVB_CPU_SWITCH:
			ctx[w[3]] = *cur; /* carried over */
			valid[w[3]] = true;
			cur = &ctx[w[3]];
			cur->cpu = w[3];
			break;
		case EVB_CPU_RESTORE:
			assert_true(valid[w[3]]);
			cur = &ctx[w[3]];
			break;
		case EVB_CTX_SWITCH:
			cur->tid = w[3];
			cur->app = w[4];
			cur->tgid = w[5];
			break;
		case EVB_KERNEL_ENTER:
			cur->in_kernel = 1;
			break;
		case EVB_USER_ENTER:
			cur->in_kernel = 0;
			break;
		case EVB_COOKIE_SWITCH:
			cur->cookie = w[3];
			cur->anon_start = cur->anon_end = 0;
			break;
		case EVB_ANON_SWITCH:
			cur->cookie = w[3];
			cur->anon_start = w[4];
			cur->anon_end = w[5];
			break;
		default:
			fail_msg("unexpected code %llu", (unsigned long long)w[1]);
		}
		i += 3 + w[2];
	}
	assert_int_equal(ngot, nwant);
	assert_int_equal(f->st.v[STAT_SAMPLES], f->st.v[STAT_KERNEL_SAMPLES] +
						    f->st.v[STAT_USER_SAMPLES]);
	if (sources)
		assert_true(f->st.v[STAT_SOURCE_SAMPLES] > 3000);
	free(want);
	fx_free(f);
}

static void test_random_semantics(void **state)
{
	(void)state;
	random_semantics(987654321, false);
}

static void test_random_semantics_sources(void **state)
{
	(void)state;
	random_semantics(55555, true);
}

static void test_random_records(void **state)
{
	static const char *const names[] = { "/bin/a", "/lib/b.so", "//anon", "[heap]", "",
					      "/x (deleted)", "[vdso]", "rel/path" };
	struct fx *f = fx_new(256);
	uint64_t r = 12345;
	size_t i, c, start = 0;
	int n;

	(void)state;
	fx_fake_kernel(f);
	for (n = 0; n < 20000; n++) {
		struct op_record rec;
		uint32_t pid;

		xorshift(&r);
		memset(&rec, 0, sizeof(rec));
		pid = 1 + (uint32_t)(r % 7);
		switch ((r >> 8) % 10) {
		case 0:
			rec.type = OP_REC_MMAP;
			rec.mmap.pid = rec.mmap.tid = pid;
			rec.mmap.start = ((r >> 12) % 64) << 12;
			rec.mmap.len = ((r >> 20) % 16) << 12;
			rec.mmap.pgoff = (r >> 28) % 0x10000;
			rec.mmap.exec = (r >> 40) % 4 != 0;
			rec.mmap.cpumode = (r >> 42) % 8 ? OP_CPUMODE_USER : OP_CPUMODE_KERNEL;
			rec.mmap.filename = (r >> 44) % 16 ? names[(r >> 48) % 8] : NULL;
			break;
		case 1:
			rec.type = OP_REC_COMM;
			rec.comm.pid = pid;
			rec.comm.tid = pid + (uint32_t)((r >> 12) % 2);
			rec.comm.exec = (r >> 16) % 2;
			rec.comm.comm = (r >> 18) % 8 ? "a" : NULL;
			break;
		case 2:
			rec.type = (r >> 12) % 2 ? OP_REC_FORK : OP_REC_EXIT;
			rec.task.pid = pid;
			rec.task.ppid = 1 + (uint32_t)((r >> 16) % 7);
			rec.task.tid = (r >> 20) % 2 ? pid : pid + 100;
			break;
		case 3:
			sync_round_end(&f->s);
			rec.type = (enum op_rec_type)((r >> 12) % 9);
			if (rec.type == OP_REC_MMAP || rec.type == OP_REC_COMM)
				rec.type = OP_REC_LOST;
			rec.lost.lost = (r >> 16) % 3;
			break;
		default:
			rec.type = OP_REC_SAMPLE;
			rec.sample.pid = pid;
			rec.sample.tid = pid;
			rec.sample.cpu = (uint32_t)((r >> 12) % 3);
			rec.sample.cpumode = (uint16_t)((r >> 14) % 6);
			rec.sample.ip = (r >> 20) % 3 ? ((r >> 24) % (64 << 12))
						       : 0xffffffff81000000ull + ((r >> 24) % 0x2000000);
			rec.sample.source = (r >> 50) % 16 ? 0 : 1;
			rec.counter = (uint32_t)((r >> 52) % 2);
			break;
		}
		assert_int_equal(sync_record(&f->s, &rec), 0);
	}
	fx_flush(f);
	assert_true(f->n > 1000);
	for (c = 0; c < f->chunks; c++) {
		for (i = start; i < f->chunk_ends[c];) {
			if (f->out[i] == E) {
				int nargs = evb_core_nargs((uint32_t)f->out[i + 1]);

				assert_true(nargs >= 0);
				assert_int_equal(f->out[i + 2], (uint64_t)nargs);
				i += 3 + f->out[i + 2];
			} else {
				assert_true(f->out[i + 1] < 2);
				i += 2;
			}
		}
		assert_int_equal(i, f->chunk_ends[c]);
		start = f->chunk_ends[c];
	}
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_fork_exec_exit),
		cmocka_unit_test(test_fast_path_records),
		cmocka_unit_test(test_reused_tasks),
		cmocka_unit_test(test_thread_exit),
		cmocka_unit_test(test_anon_deleted),
		cmocka_unit_test(test_kernel),
		cmocka_unit_test(test_sample_before_mmap),
		cmocka_unit_test(test_app_choice),
		cmocka_unit_test(test_hooks_sources),
		cmocka_unit_test(test_flush_boundaries),
		cmocka_unit_test(test_map_pc),
		cmocka_unit_test(test_proc_probe),
		cmocka_unit_test(test_image_filter),
		cmocka_unit_test(test_map_overlaps_model),
		cmocka_unit_test(test_cpu_interleave),
		cmocka_unit_test(test_throttle_hook),
		cmocka_unit_test(test_random_semantics),
		cmocka_unit_test(test_random_semantics_sources),
		cmocka_unit_test(test_random_records),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
