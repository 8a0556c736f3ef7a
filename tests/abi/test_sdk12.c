/*
 * test_sdk12.c - SDK 1.2 as a plugin sees it, through the real loader and
 * the real buffer sync: a 1.0 plugin (tests/plugins/fx_old), a 1.1 plugin
 * (fx_v11) and a 1.2 plugin (fx_sdk12) load into one daemon side by side;
 * buffer sync hands the 1.2 plugin every task record in order (proc hook),
 * lets it claim anon pcs by (pid, pc, time) (anon resolver, the key landing
 * in the plugin's image, moved code included), and the session hook hears
 * START, DUMP, ROTATED and STOP with their directories.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sync_host.h"

#define E EVB_ESCAPE

struct fx {
	struct sync_host h;
	char dir[PATH_MAX];
};

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out;
	size_t n;

	if (!in)
		fail_msg("fixture %s is missing (build tests first)", from);
	out = fopen(to, "wb");
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);
	assert_int_equal(chmod(to, 0644), 0);
}

static struct fx *fx_new(void)
{
	const char *b = getenv("OP_BUILDDIR");
	char from[PATH_MAX + 128], to[PATH_MAX + 128];
	static const char *const fixtures[][2] = {
		{ "tests/plugins/.libs", "fx_old" },
		{ "tests/abi/.libs", "fx_v11" },
		{ "tests/abi/.libs", "fx_sdk12" },
	};
	struct fx *f = calloc(1, sizeof(*f));
	size_t i;

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "%s/tests/abi/sdk12-XXXXXX", b ? b : ".");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(chmod(f->dir, 0755), 0);
	for (i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		snprintf(from, sizeof(from), "%s/%s/%s.so", b ? b : ".", fixtures[i][0],
			 fixtures[i][1]);
		snprintf(to, sizeof(to), "%s/%s.so", f->dir, fixtures[i][1]);
		copy_file(from, to);
	}
	assert_int_equal(sync_host_init(&f->h, f->dir, "/sess", 4096), 0);
	f->h.cookies.no_stat = true;
	return f;
}

static void fx_free(struct fx *f)
{
	char cmd[PATH_MAX + 16];

	sync_host_fini(&f->h);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
}

#define assert_contains(HAY, NEEDLE)                                          \
	do {                                                                  \
		if (!strstr((HAY), (NEEDLE)))                                 \
			fail_msg("expected \"%s\" in:\n%s", (NEEDLE), (HAY)); \
	} while (0)

static void rec(struct fx *f, struct op_record *r)
{
	assert_int_equal(sync_record(&f->h.s, r), 0);
}

/* an MMAP with every field the proc hook passes on set */
static void rec_mmap(struct fx *f, uint32_t pid, uint64_t time, uint64_t start, uint64_t len,
		     const char *fn)
{
	struct op_record r = { .type = OP_REC_MMAP, .time = time };

	r.mmap.pid = r.mmap.tid = pid;
	r.mmap.start = start;
	r.mmap.len = len;
	r.mmap.pgoff = 0x2000;
	r.mmap.cpumode = OP_CPUMODE_USER;
	r.mmap.exec = true;
	r.mmap.prot = 5;
	r.mmap.flags = 2;
	r.mmap.filename = fn;
	rec(f, &r);
}

/* the 1.0, 1.1 and 1.2 plugins load together; each sees the host it expects */
static void test_old_plugins_load(void **state)
{
	struct fx *f = fx_new();

	(void)state;
	assert_int_equal(ext_load(f->h.l, "fx_old", "", "test"), 0);
	assert_int_equal(ext_load(f->h.l, "fx_v11", "", "test"), 0);
	assert_int_equal(ext_load(f->h.l, "fx_sdk12", "", "test"), 0);
	assert_int_equal(ext_nr_plugins(f->h.l), 3);
	assert_contains(sync_host_log(&f->h), "fx_v11 up: host SDK 1.3"); /* issue 20 */
	/* fx_sdk12's hook without a callback was refused, and named */
	assert_contains(sync_host_log(&f->h), "register_proc_hook: on_event is NULL");
	assert_int_equal(ext_registry(f->h.l)->nr_proc_hooks, 1);
	assert_int_equal(ext_registry(f->h.l)->nr_session_hooks, 1);
	assert_int_equal(ext_registry(f->h.l)->nr_anon, 1);
	assert_string_equal(ext_registry(f->h.l)->session_hooks[0].session.name, "fx12-session");
	assert_string_equal(ext_registry(f->h.l)->proc_hooks[0].proc.name, "fx_sdk12");
	fx_free(f);
}

/* task records reach the proc hook in order, with every field */
static void test_proc_hook(void **state)
{
	struct fx *f = fx_new();
	struct op_record r;
	const char *t;

	(void)state;
	assert_int_equal(ext_load(f->h.l, "fx_sdk12", "", "test"), 0);
	sync_set_registry(&f->h.s, ext_registry(f->h.l));
	memset(&r, 0, sizeof(r));
	r.type = OP_REC_COMM;
	r.time = 10;
	r.comm.pid = r.comm.tid = 42;
	r.comm.exec = true;
	r.comm.comm = "jitprog";
	rec(f, &r);
	rec_mmap(f, 42, 20, 0x70000000, 0x1000, "//anon");
	memset(&r, 0, sizeof(r));
	r.type = OP_REC_FORK;
	r.time = 30;
	r.task.pid = r.task.tid = 43;
	r.task.ppid = 42;
	rec(f, &r);
	r.type = OP_REC_EXIT;
	r.time = 40;
	rec(f, &r);
	/* a synthesized record (time 0); a kernel mapping is not passed */
	memset(&r, 0, sizeof(r));
	r.type = OP_REC_COMM;
	r.comm.pid = 50;
	r.comm.tid = 51;
	r.comm.comm = "old";
	rec(f, &r);
	memset(&r, 0, sizeof(r));
	r.type = OP_REC_MMAP;
	r.mmap.cpumode = OP_CPUMODE_KERNEL;
	r.mmap.filename = "[kernel.kallsyms]";
	rec(f, &r);
	/* a failing hook: counted */
	rec_mmap(f, 666, 50, 0x1000, 0x1000, "/bin/x");
	t = sync_host_log(&f->h);
	assert_contains(t, "proc kind=2 pid=42 tid=42 ppid=0 misc=0 time=10 comm=jitprog file=- ");
	assert_contains(t, "proc kind=5 pid=42 tid=42 ppid=0 misc=1 time=20 comm=- file=//anon "
			   "start=0x70000000 len=0x1000 pgoff=0x2000");
	assert_contains(t, "proc kind=3 pid=43 tid=43 ppid=42 misc=0 time=30");
	assert_contains(t, "proc kind=4 pid=43 tid=43 ppid=42 misc=0 time=40");
	assert_contains(t, "proc kind=1 pid=50 tid=51 ppid=0 misc=2 time=0 comm=old");
	assert_null(strstr(t, "kallsyms"));
	/* record order */
	assert_true(strstr(t, "kind=2 pid=42") < strstr(t, "kind=5 pid=42"));
	assert_true(strstr(t, "kind=5 pid=42") < strstr(t, "kind=3 pid=43"));
	assert_true(strstr(t, "kind=3 pid=43") < strstr(t, "kind=4 pid=43"));
	assert_int_equal(f->h.st.v[STAT_HOOK_ERRORS], 1);
	fx_free(f);
}

/*
 * The resolver claims pid 42's JIT pcs by time: before and after the
 * move, the same key in the plugin's image; a pc it does not claim stays
 * anon; a process without a resolver's claim is untouched.
 */
static void test_anon_resolver(void **state)
{
	struct fx *f = fx_new();
	op_cookie_t jit, anon;

	(void)state;
	assert_int_equal(ext_load(f->h.l, "fx_sdk12", "", "test"), 0);
	sync_set_registry(&f->h.s, ext_registry(f->h.l));
	rec_mmap(f, 42, 20, 0x70000000, 0x1000, "//anon");
	jit = cookie_intern(&f->h.cookies, "/jit/42.jo", 10, OP_IMAGE_USER, false);
	anon = cookie_intern(&f->h.cookies, "anon", 4, OP_IMAGE_ANON, false);
	assert_int_not_equal(jit, 0);
	sync_host_sample(&f->h, 42, 100, 0x70000010);  /* claimed: key 0x1010 */
	sync_host_sample(&f->h, 42, 200, 0x70000020);  /* claimed, no fast path */
	sync_host_sample(&f->h, 42, 300, 0x70000900);  /* not claimed before the move: anon */
	sync_host_sample(&f->h, 42, 6000, 0x70000810); /* moved: the same key as the first */
	evb_flush(&f->h.w);
	const uint64_t exp[] = {
		E,
		EVB_CPU_SWITCH,
		1,
		0,
		E,
		EVB_CTX_SWITCH,
		3,
		42,
		0,
		42,
		E,
		EVB_USER_ENTER,
		0,
		E,
		EVB_COOKIE_SWITCH,
		1,
		jit,
		0x1010,
		0,
		0x1020,
		0,
		E,
		EVB_ANON_SWITCH,
		3,
		anon,
		0x70000000,
		0x70000fff,
		0x900,
		0,
		E,
		EVB_COOKIE_SWITCH,
		1,
		jit,
		0x1010,
		0,
	};
	assert_int_equal(f->h.n, sizeof(exp) / sizeof(exp[0]));
	assert_memory_equal(f->h.out, exp, sizeof(exp));
	assert_int_equal(f->h.st.v[STAT_SAMPLES], 4);
	fx_free(f);
}

/* session moments, as main, control and the pipeline report them */
static void test_session_hook(void **state)
{
	struct fx *f = fx_new();
	const char *t;

	(void)state;
	assert_int_equal(ext_load(f->h.l, "fx_sdk12", "", "test"), 0);
	ext_session_event(f->h.l, OP_SESSION_START, "/s/samples/current", NULL);
	ext_session_event(f->h.l, OP_SESSION_DUMP, "/s/samples/current", "ignored");
	ext_session_event(f->h.l, OP_SESSION_ROTATED, "/s/samples/current", "/s/samples/rotate-1");
	ext_session_event(f->h.l, OP_SESSION_STOP, "/s/samples/current", NULL);
	t = sync_host_log(&f->h);
	assert_contains(t, "session kind=1 dir=/s/samples/current prev=- ordered=1");
	assert_contains(t, "session kind=2 dir=/s/samples/current prev=- ordered=1");
	assert_contains(t,
			"session kind=3 dir=/s/samples/current prev=/s/samples/rotate-1 ordered=1");
	assert_contains(t, "session kind=4 dir=/s/samples/current prev=- ordered=1");
	/* a loader without session hooks: nothing happens */
	ext_session_event(NULL, OP_SESSION_START, "/x", NULL);
	fx_free(f);
}

/* registrations of 1.2 are refused outside ext_init, like every other */
static void test_outside_init(void **state)
{
	struct fx *f = fx_new();
	const struct op_host *h;
	struct op_anon_resolver_desc ar = { .size = sizeof(ar) };

	(void)state;
	assert_int_equal(ext_load(f->h.l, "fx_sdk12", "", "test"), 0);
	h = ext_host(f->h.l);
	assert_int_equal(h->size, OP_HOST_SIZE_V1_3_SPLIT); /* issue 20: 1.3 */
	assert_int_equal(h->abi_minor, 3);
	assert_int_equal(h->register_anon_resolver(ext_plugin(f->h.l, "fx_sdk12"), &ar, NULL),
			 -EPERM);
	assert_contains(sync_host_log(&f->h), "register_anon_resolver called outside ext_init");
	/* --- issue 20: the split services too; no key without registering the split --- */
	assert_int_equal(h->register_split(ext_plugin(f->h.l, "fx_sdk12"), "cgroup"), -EPERM);
	assert_contains(sync_host_log(&f->h), "register_split called outside ext_init");
	assert_int_equal(h->set_split_key(ext_plugin(f->h.l, "fx_sdk12"), 1, "/a"), -EPERM);
	assert_null(ext_registry(f->h.l)->split_cgroup);
	fx_free(f);
}

/* a plugin thread interns through the host while the daemon's thread does */
struct intern_arg {
	struct fx *f;
	op_cookie_t got[3000];
};

static void *intern_thread(void *p)
{
	struct intern_arg *a = p;
	const struct op_host *h = ext_host(a->f->h.l);
	op_ext_t *ctx = ext_plugin(a->f->h.l, "fx_sdk12");
	char path[64];
	size_t i;

	for (i = 0; i < 3000; i++) {
		snprintf(path, sizeof(path), "/thread/%zu", i);
		a->got[i] = h->cookie_intern(ctx, path, false);
	}
	return NULL;
}

static void test_thread_intern(void **state)
{
	struct fx *f = fx_new();
	static struct intern_arg a;
	op_cookie_t mine[3000];
	char path[64];
	pthread_t th;
	size_t i;

	(void)state;
	assert_int_equal(ext_load(f->h.l, "fx_sdk12", "", "test"), 0);
	a.f = f;
	assert_int_equal(pthread_create(&th, NULL, intern_thread, &a), 0);
	for (i = 0; i < 3000; i++) {
		snprintf(path, sizeof(path), "/main/%zu", i);
		mine[i] = sync_cookie_intern(&f->h.s, path, false);
		/* an entry made by either thread reads whole, wherever the table grew */
		assert_string_equal(cookie_path(&f->h.cookies, mine[i]), path);
	}
	assert_int_equal(pthread_join(th, NULL), 0);
	for (i = 0; i < 3000; i++) {
		snprintf(path, sizeof(path), "/thread/%zu", i);
		assert_int_not_equal(a.got[i], 0);
		assert_string_equal(cookie_path(&f->h.cookies, a.got[i]), path);
		/* interning again gives the same cookie */
		assert_int_equal(sync_cookie_intern(&f->h.s, path, false), a.got[i]);
		snprintf(path, sizeof(path), "/main/%zu", i);
		assert_int_equal(sync_cookie_intern(&f->h.s, path, false), mine[i]);
	}
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_old_plugins_load), cmocka_unit_test(test_proc_hook),
		cmocka_unit_test(test_anon_resolver),    cmocka_unit_test(test_session_hook),
		cmocka_unit_test(test_outside_init),     cmocka_unit_test(test_thread_intern),
	};

	return cmocka_run_group_tests_name("sdk12", tests, NULL, NULL);
}
