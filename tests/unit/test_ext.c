/*
 * test_ext.c - the plugin loader (core/ext.c) against real fixture plugins
 * (tests/plugins/fx_*.so) copied into private directories: descriptor and
 * file refusals, every registration kind, rollback, conflicts, core
 * services forwarding, --list-plugins; the trust rules of a root loader
 * (ancestors, files swapped between check and load, stripped section
 * headers, no /proc).
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ext.h"
#include "log.h"
#include "options.h"

/* test paths are short; a cut-off one would fail the test visibly */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* ------------------------------------------------------------------ */
/* fixture directories                                                 */
/* ------------------------------------------------------------------ */

static char fixture_dir[PATH_MAX]; /* build tree tests/plugins/.libs */
static char tmp_root[PATH_MAX];    /* per-run scratch dir in the build tree */
static unsigned dir_seq;

static void copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536];
	ssize_t n;
	int in, out;

	in = open(from, O_RDONLY);
	assert_true(in >= 0);
	unlink(to);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, mode);
	assert_true(out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		assert_int_equal(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
	assert_int_equal(chmod(to, mode), 0);
}

/* a fresh 0755 plugin dir */
static void new_dir(char *out, size_t len)
{
	snprintf(out, len, "%s/d%u", tmp_root, dir_seq++);
	assert_int_equal(mkdir(out, 0755), 0);
	assert_int_equal(chmod(out, 0755), 0);
}

/* copy fixture @fx into @dir as <stem>.so */
static void put(const char *dir, const char *fx, const char *stem)
{
	char from[PATH_MAX], to[PATH_MAX];

	snprintf(from, sizeof(from), "%s/%s.so", fixture_dir, fx);
	snprintf(to, sizeof(to), "%s/%s.so", dir, stem ? stem : fx);
	copy_file(from, to, 0644);
}

static int group_setup(void **state)
{
	const char *b = getenv("OP_BUILDDIR");

	(void)state;
	snprintf(fixture_dir, sizeof(fixture_dir), "%s/tests/plugins/.libs", b ? b : ".");
	snprintf(tmp_root, sizeof(tmp_root), "%s/tests/unit/ext-tmp-XXXXXX", b ? b : ".");
	if (!mkdtemp(tmp_root))
		return -1;
	return chmod(tmp_root, 0755);
}

static int group_teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_root);
	return system(cmd) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------------ */
/* a mock core that records what plugins asked for                     */
/* ------------------------------------------------------------------ */

struct mock_core {
	int map_calls, emit_calls, log_calls, open_calls, add_calls, intern_calls;
	uint32_t last_code, last_nargs, last_counter, last_count;
	uint64_t last_args[4], last_key;
	struct op_file_spec last_spec;
	int file; /* the op_sample_file_t the mock hands out */
};

static struct mock_core mc;

static int mock_map_pc(void *sync, uint32_t pid, uint16_t cpumode, uint64_t pc,
		       struct op_pc_map *out)
{
	assert_ptr_equal(sync, &mc);
	(void)pid;
	(void)cpumode;
	mc.map_calls++;
	/* the core fills the whole struct of this SDK */
	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->in_kernel = 0;
	out->cookie = 7;
	out->offset = pc - 0x400000;
	out->anon_start = 0x400000;
	out->anon_end = 0x4fffff;
	return 0;
}

static int mock_emit(op_emit_t *w, uint32_t code, const uint64_t *args, uint32_t nargs)
{
	assert_ptr_equal(w, (op_emit_t *)&mc);
	mc.emit_calls++;
	mc.last_code = code;
	mc.last_nargs = nargs;
	memcpy(mc.last_args, args, (nargs < 4 ? nargs : 4) * sizeof(uint64_t));
	return 0;
}

static int mock_log_sample(void *trans, const struct op_trans_view *t, uint32_t counter,
			   uint64_t key, uint32_t count)
{
	assert_ptr_equal(trans, &mc.file);
	(void)t;
	mc.log_calls++;
	mc.last_counter = counter;
	mc.last_key = key;
	mc.last_count = count;
	return 0;
}

static op_sample_file_t *mock_open(void *trans, op_sfile_t *sf, const struct op_trans_view *t,
				   const struct op_file_spec *spec)
{
	(void)trans;
	(void)sf;
	(void)t;
	mc.open_calls++;
	mc.last_spec = *spec;
	return (op_sample_file_t *)&mc.file;
}

static int mock_add(op_sample_file_t *f, uint64_t key, uint32_t count)
{
	assert_ptr_equal(f, (op_sample_file_t *)&mc.file);
	mc.add_calls++;
	mc.last_key = key;
	mc.last_count = count;
	return 0;
}

static op_cookie_t mock_intern(void *sync, const char *path, bool is_kernel)
{
	(void)sync;
	mc.intern_calls++;
	return !strcmp(path, "fxkern") && is_kernel ? 77 : 1;
}

static struct ext_core_services mock_services(void)
{
	struct ext_core_services c = {
		.sync = &mc,
		.trans = &mc.file,
		.map_pc = mock_map_pc,
		.emit = mock_emit,
		.log_sample = mock_log_sample,
		.sample_file_open = mock_open,
		.sample_file_add = mock_add,
		.cookie_intern = mock_intern,
		.session_dir = "/sess",
		.proc_root = "/fakeproc",
	};
	memset(&mc, 0, sizeof(mc));
	return c;
}

/* ------------------------------------------------------------------ */
/* helpers                                                             */
/* ------------------------------------------------------------------ */

/* the daemon's logger, writing to memory; echo on as main sets it */
struct logbuf {
	char *text;
	size_t len;
	FILE *f;
	struct op_log log;
};

static void log_open(struct logbuf *lb)
{
	memset(lb, 0, sizeof(*lb));
	lb->f = open_memstream(&lb->text, &lb->len);
	assert_non_null(lb->f);
	log_init(&lb->log, lb->f);
	lb->log.echo_errors = true;
}

static const char *log_text(struct logbuf *lb)
{
	fflush(lb->f);
	return lb->text ? lb->text : "";
}

static void log_close(struct logbuf *lb)
{
	fclose(lb->f);
	free(lb->text);
}

/* forget what was logged so far */
static void log_reset(struct logbuf *lb)
{
	log_close(lb);
	log_open(lb);
}

#define assert_contains(hay, needle)                                                        \
	do {                                                                                \
		const char *h_ = (hay);                                                     \
		if (!strstr(h_, (needle)))                                                  \
			fail_msg("expected \"%s\" in:\n%s", (needle), h_);                  \
	} while (0)

static bool registry_empty(const struct ext_registry *r)
{
	static const struct ext_registry zero;

	return memcmp(r, &zero, sizeof(zero)) == 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* ------------------------------------------------------------------ */
/* tests                                                               */
/* ------------------------------------------------------------------ */

/* every registration kind, loaded through the config file, driven through the registry */
static void test_all_kinds(void **state)
{
	char dir[PATH_MAX], conf[PATH_MAX], dirarg[PATH_MAX + 16], confarg[PATH_MAX + 16];
	struct ext_core_services core = mock_services();
	struct op_options o;
	struct logbuf lb, st;
	struct ext_loader *l;
	struct ext_registry *r;
	struct op_trans_view tv = { .size = sizeof(tv), .tgid = 1, .tid = 1, .cpu = 0 };
	struct op_perf_sample s = { .size = sizeof(s), .pid = 10, .tid = 10, .ip = 0x401000 };
	struct op_cpuinfo ci = { .size = sizeof(ci), .vendor = "FixtureVendor" };
	struct op_event_req ev = { .size = sizeof(ev), .name = "FX", .code = 0x3c, .um = 2,
				   .count = 5000 };
	struct op_perf_attr attr = { .size = sizeof(attr) };
	struct op_kernel_image ki = { .size = sizeof(ki) };
	uint64_t eargs[2] = { 0x55, 3 };
	char why[64], err[64];
	uint32_t id = 0;
	void *sfpriv = NULL;
	int i, nesc = 0;
	char *argv[8];

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_all", NULL);
	snprintf(conf, sizeof(conf), "%s/all.conf", dir);
	write_file(conf, "plugins = ( { name = \"fx_all\"; args = \"from-config\";\n"
			 "  str = \"hello\"; num = 5000000000L; flag = true; } );\n");
	snprintf(dirarg, sizeof(dirarg), "--plugin-dir=%s", dir);
	snprintf(confarg, sizeof(confarg), "--config=%s", conf);
	argv[0] = "oprofiled";
	argv[1] = confarg;
	argv[2] = dirarg;
	argv[3] = "--check-config";
	argv[4] = NULL;
	assert_int_equal(options_parse_f(&o, 4, argv, stderr), 0);
	assert_int_equal(o.nr_features, 1);

	log_open(&lb);
	l = ext_loader_new(o.plugin_dir, o.config, &core, &lb.log);
	assert_non_null(l);
	assert_int_equal(ext_load_all(l, &o), 0);
	assert_int_equal(ext_nr_plugins(l), 1);
	assert_contains(log_text(&lb), "fx_all: init args=\"from-config\"");
	assert_null(strstr(log_text(&lb), "debug line")); /* not verbose */
	r = ext_registry(l);

	/* escapes: the wanted code and an allocated one */
	assert_non_null(r->escapes[40]);
	assert_string_equal(r->escapes[40]->desc.name, "fx-all-esc");
	assert_string_equal(ext_name(r->escapes[40]->owner), "fx_all");
	assert_int_equal(r->escapes[40]->desc.code, 40);
	assert_non_null(r->escapes[OP_ESCAPE_FIRST_PLUGIN]);
	assert_string_equal(r->escapes[OP_ESCAPE_FIRST_PLUGIN]->desc.name, "fx-all-esc2");
	for (i = 0; i <= OP_ESCAPE_MAX; i++)
		nesc += r->escapes[i] != NULL;
	assert_int_equal(nesc, 2);
	assert_int_equal(r->escapes[40]->desc.handler(r->escapes[40]->priv, &tv, eargs, 2), 0);
	assert_int_equal(mc.log_calls, 1);
	assert_int_equal(mc.last_counter, EXT_COUNTER_BASE);
	assert_int_equal(mc.last_key, 0x55);
	assert_int_equal(mc.last_count, 3);
	assert_int_equal(r->escapes[40]->desc.handler(r->escapes[40]->priv, &tv, eargs, 1),
			 -EINVAL);

	/* sfile handlers: create -> get_file opens through the core, adds, close */
	assert_int_equal(r->nr_sfile, 1);
	assert_int_equal(r->sfile[0].slot, 0);
	assert_int_equal(r->sfile[0].ops.create(r->sfile[0].priv, NULL, &sfpriv), 0);
	assert_non_null(sfpriv);
	assert_ptr_equal(r->sfile[0].ops.get_file(r->sfile[0].priv, NULL, sfpriv, &tv, 3, true),
			 (op_sample_file_t *)&mc.file);
	assert_int_equal(mc.open_calls, 1);
	assert_int_equal(mc.last_spec.size, sizeof(struct op_file_spec));
	assert_int_equal(mc.last_spec.counter, 3);
	assert_true(mc.last_spec.is_cg);
	assert_int_equal(mc.add_calls, 1);
	assert_int_equal(mc.last_key, 0x1234);
	assert_int_equal(mc.last_count, 7);
	assert_null(r->sfile[0].ops.dup);
	assert_non_null(r->sfile[0].ops.close);
	assert_int_equal(r->sfile[0].ops.close(r->sfile[0].priv, NULL, sfpriv), 0);

	/* source: attr copied, sample maps the pc and emits the plugin's code */
	assert_int_equal(r->nr_sources, 1);
	assert_string_equal(r->sources[0].desc.name, "fx-source");
	assert_int_equal(r->sources[0].desc.attr.type, 1);
	assert_int_equal(r->sources[0].desc.attr.config, 9);
	assert_int_equal(r->sources[0].desc.attr.sample_period, 1000);
	assert_true(r->sources[0].desc.attr.exclude_kernel);
	assert_int_equal(r->sources[0].desc.on_sample(r->sources[0].priv, &s, (op_emit_t *)&mc), 0);
	assert_int_equal(mc.map_calls, 1);
	assert_int_equal(mc.emit_calls, 1);
	assert_int_equal(mc.last_code, 40);
	assert_int_equal(mc.last_nargs, 2);
	assert_int_equal(mc.last_args[0], 0x1000);

	/* hook */
	assert_int_equal(r->nr_hooks, 1);
	assert_string_equal(r->hooks[0].desc.name, "fx-hook");
	assert_int_equal(r->hooks[0].desc.max_stack, 16);
	assert_int_equal(r->hooks[0].desc.sample_type_extra, 1u << 5);
	assert_int_equal(r->hooks[0].desc.on_sample(r->hooks[0].priv, &s, (op_emit_t *)&mc), 0);
	assert_int_equal(mc.emit_calls, 2);
	assert_int_equal(mc.last_code, OP_ESCAPE_FIRST_PLUGIN);
	assert_int_equal(mc.last_args[0], 0x401000);

	/* model */
	assert_int_equal(r->nr_models, 1);
	assert_string_equal(r->models[0].desc.name, "fx-model");
	assert_int_equal(r->models[0].desc.nr_counters, 4);
	assert_string_equal(r->models[0].desc.default_event, "FX_CYCLES:100000");
	assert_int_equal(r->models[0].desc.detect(r->models[0].priv, &ci, why, sizeof(why)), 5);
	strcpy(ci.vendor, "Other");
	assert_int_equal(r->models[0].desc.detect(r->models[0].priv, &ci, why, sizeof(why)), 0);
	assert_string_equal(why, "not a fixture cpu");
	assert_string_equal(r->models[0].desc.cpu_type(r->models[0].priv, &id), "fixture/cpu");
	assert_int_equal(id, 42);
	assert_int_equal(r->models[0].desc.encode(r->models[0].priv, &ev, &attr, err, sizeof(err)), 0);
	assert_int_equal(attr.config, 0x23c);
	assert_int_equal(attr.sample_period, 5000);

	/* kernel resolver interns through the core */
	assert_true(r->has_kernel);
	assert_string_equal(ext_name(r->kernel.owner), "fx_all");
	assert_int_equal(r->kernel.ops.resolve(r->kernel.priv, 0xffff0010ull, &ki), 0);
	assert_int_equal(ki.cookie, 77);
	assert_int_equal(ki.start, 0xffff0000ull);
	assert_int_equal(r->kernel.ops.resolve(r->kernel.priv, 0x10, &ki), -ENOENT);

	/* counter */
	assert_int_equal(r->nr_counters, 1);
	assert_string_equal(r->counters[0].name, "FX_DERIVED");
	assert_ptr_equal(r->counters[0].desc.name, r->counters[0].name);
	assert_int_equal(r->counters[0].desc.event, 0xf100);
	assert_int_equal(r->counters[0].desc.um, 3);
	assert_int_equal(r->counters[0].desc.count, 1000);

	/* flags */
	assert_int_equal(r->no_event_ok, 1);

	/* stats section, config getters, late registration refused */
	assert_int_equal(r->nr_stats, 1);
	log_open(&st);
	ext_print_stats(l, st.f);
	assert_contains(log_text(&st), "-- plugin fx_all --\n");
	assert_contains(log_text(&st), "esc_code: 40\n");
	assert_contains(log_text(&st), "esc2_code: 32\n");
	assert_contains(log_text(&st), "source_nr: 0\n");
	assert_contains(log_text(&st), "counter_nr: 64\n");
	assert_contains(log_text(&st), "args=from-config\n");
	assert_contains(log_text(&st), "config rc 0 0 0 missing -2 mismatch -22\n");
	assert_contains(log_text(&st), "str=hello num=5000000000 flag=1\n");
	assert_contains(log_text(&st), "late_register=-1\n"); /* -EPERM */
	assert_contains(log_text(&st), "session_dir=/sess proc_root=/fakeproc\n");
	log_close(&st);
	/* the mismatch and the late registration were logged, naming the plugin */
	assert_contains(log_text(&lb), "plugins.fx_all.str: expected an integer, found a string");
	assert_contains(log_text(&lb), "all.conf:2: plugins.fx_all.str");
	assert_contains(log_text(&lb), "plugin \"fx_all\" (");
	assert_contains(log_text(&lb), "register_counter called outside ext_init");

	ext_loader_free(l);
	assert_contains(log_text(&lb), "fx_all: deinit after");
	/* the plugin's user data (SDK 1.1) is freed after its deinit */
	assert_contains(log_text(&lb), "fx_all: user data freed after");
	assert_true(strstr(log_text(&lb), "fx_all: deinit after") <
		    strstr(log_text(&lb), "fx_all: user data freed after"));
	log_close(&lb);
	options_free(&o);
}

/* --ext-feature=NAME:ARGS splits at the first ':'; verbose shows debug lines */
static void test_cmdline_args(void **state)
{
	char dir[PATH_MAX], dirarg[PATH_MAX + 16];
	struct ext_core_services core = mock_services();
	struct op_options o;
	struct logbuf lb, st;
	struct ext_loader *l;
	char *argv[] = { "oprofiled", "--config=", dirarg, "--ext-feature=fx_all:a:b:c",
			 "--check-config", NULL };

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_all", NULL);
	snprintf(dirarg, sizeof(dirarg), "--plugin-dir=%s", dir);
	assert_int_equal(options_parse_f(&o, 5, argv, stderr), 0);
	log_open(&lb);
	l = ext_loader_new(o.plugin_dir, o.config, &core, &lb.log);
	ext_loader_set_verbose(l, true);
	assert_int_equal(ext_load_all(l, &o), 0);
	assert_contains(log_text(&lb), "fx_all: debug: debug line");
	assert_contains(log_text(&lb), "plugin \"fx_all\" 1.2.3 (SDK 1.3) loaded from ");
	log_open(&st);
	ext_print_stats(l, st.f);
	assert_contains(log_text(&st), "args=a:b:c\n");
	/* no config: every getter says absent */
	assert_contains(log_text(&st), "config rc -2 -2 -2 missing -2 mismatch -2\n");
	log_close(&st);
	/* the same plugin twice is refused */
	assert_int_equal(ext_load(l, "fx_all", "", "test"), -EEXIST);
	assert_contains(log_text(&lb), "already loaded by command line");
	ext_loader_free(l);
	log_close(&lb);
	options_free(&o);
}

/* host services without a core answer -ENOSYS / NULL */
static void test_no_core(void **state)
{
	char dir[PATH_MAX];
	struct logbuf lb;
	struct ext_loader *l;
	const struct op_host *h;
	struct op_pc_map m = { .size = sizeof(m) };
	struct op_file_spec spec = { .size = sizeof(spec) };
	uint64_t a = 1;
	op_ext_t *ctx;

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_all", NULL);
	log_open(&lb);
	l = ext_loader_new(dir, NULL, NULL, &lb.log);
	assert_int_equal(ext_load(l, "fx_all", "", "test"), 0);
	ctx = ext_plugin(l, "fx_all");
	assert_non_null(ctx);
	assert_null(ext_plugin(l, "nope"));
	h = ext_host(l);
	assert_int_equal(h->size, OP_HOST_SIZE_V1_3_SPLIT); /* issue 20: SDK 1.3 */
	assert_int_equal(h->abi_major, OP_SDK_MAJOR);
	assert_int_equal(h->map_pc(ctx, 1, 2, 3, &m), -ENOSYS);
	assert_int_equal(h->emit(NULL, 40, &a, 1), -ENOSYS);
	assert_int_equal(h->log_sample(ctx, NULL, 0, 0, 1), -ENOSYS);
	assert_null(h->sample_file_open(ctx, NULL, NULL, &spec));
	assert_int_equal(h->sample_file_add(NULL, 0, 1), -ENOSYS);
	assert_int_equal(h->sample_file_sync(NULL), -ENOSYS);
	h->sample_file_close(NULL);
	assert_null(h->cookie_path(ctx, 1));
	assert_int_equal(h->cookie_intern(ctx, "x", false), 0);
	assert_null(h->session_dir(ctx));
	assert_null(h->proc_root(ctx));

	/* a plugin flooding the log is cut short, then told how much was dropped */
	{
		const char *t, *p;
		int i, n = 0;

		ext_loader_set_log_limit(l, 5, 200);
		usleep(250 * 1000); /* a fresh window: init's message is in the old one */
		for (i = 0; i < 50; i++)
			h->log(ctx, OP_LOG_WARN, "flood %d", i);
		usleep(250 * 1000);
		h->log(ctx, OP_LOG_WARN, "after the window");
		t = log_text(&lb);
		for (p = t; (p = strstr(p, "fx_all: warning: flood ")); p++)
			n++;
		assert_int_equal(n, 5);
		assert_contains(t, "fx_all: warning: flood 4\n");
		assert_null(strstr(t, "flood 5\n"));
		assert_contains(t, "fx_all: warning: 45 messages suppressed (more than 5 in 200 ms)\n"
				   "fx_all: warning: after the window\n");
	}

	/* binding the core later reaches the ctx-less services */
	{
		struct ext_core_services core = mock_services();

		ext_loader_set_core(l, &core);
		assert_int_equal(h->emit((op_emit_t *)&mc, 41, &a, 1), 0);
		assert_int_equal(mc.last_code, 41);
		m.size = sizeof(m);
		assert_int_equal(h->map_pc(ctx, 1, 2, 0x400010, &m), 0);
		assert_int_equal(m.offset, 0x10);
		assert_int_equal(m.anon_end, 0x4fffff);
		ext_loader_set_core(l, NULL);
	}

	/*
	 * map_pc writes at most out->size bytes: the 1.0 struct whole, a
	 * shorter one (an older plugin's) up to its end, a size-less one not at all
	 */
	{
		struct ext_core_services core = mock_services();
		union {
			struct op_pc_map m;
			unsigned char b[sizeof(struct op_pc_map) + 8];
		} u;
		size_t i, cut = offsetof(struct op_pc_map, anon_start);

		ext_loader_set_core(l, &core);
		memset(&u, 0xa5, sizeof(u));
		u.m.size = OP_PC_MAP_SIZE_V1_0;
		assert_int_equal(h->map_pc(ctx, 1, 2, 0x400020, &u.m), 0);
		assert_int_equal(u.m.offset, 0x20);
		assert_int_equal(u.m.anon_start, 0x400000);
		assert_int_equal(u.m.size, OP_PC_MAP_SIZE_V1_0);
		for (i = OP_PC_MAP_SIZE_V1_0; i < sizeof(u.b); i++)
			assert_int_equal(u.b[i], 0xa5);
		memset(&u, 0xa5, sizeof(u));
		u.m.size = (uint32_t)cut;
		assert_int_equal(h->map_pc(ctx, 1, 2, 0x400030, &u.m), 0);
		assert_int_equal(u.m.size, cut);
		assert_int_equal(u.m.cookie, 7);
		assert_int_equal(u.m.offset, 0x30);
		for (i = cut; i < sizeof(u.b); i++)
			assert_int_equal(u.b[i], 0xa5);
		memset(&u, 0xa5, sizeof(u));
		u.m.size = 2;
		assert_int_equal(h->map_pc(ctx, 1, 2, 0x400030, &u.m), -EINVAL);
		for (i = sizeof(u.m.size); i < sizeof(u.b); i++)
			assert_int_equal(u.b[i], 0xa5);
		ext_loader_set_core(l, NULL);
	}
	ext_loader_free(l);
	log_close(&lb);
}

struct refusal {
	const char *fixture; /* NULL: no file */
	const char *stem;    /* load name */
	int rc;
	const char *msg1, *msg2;
	bool before_dlopen;  /* refused from the file: its constructor must not run */
};

static const struct refusal refusals[] = {
	{ "fx_major", "fx_major", -ENOEXEC,
	  "plugin \"fx_major\" (", "): built for SDK 2.3, oprofiled provides 1.3 - rebuild the plugin against SDK 1.x", true },
	{ "fx_minor", "fx_minor", -ENOEXEC, "built for SDK 1.4, oprofiled provides 1.3",
	  "use an oprofiled with SDK >= 1.4, or rebuild the plugin against SDK 1.3", true },
	{ "fx_small", "fx_small", -ENOEXEC, "descriptor size is 64 bytes", "needs at least 104", true },
	{ "fx_reserved", "fx_reserved", -ENOEXEC, "reserved slot 2 is not zero (found 0x1)",
	  "rebuild", false },
	{ "fx_stem", "fx_stem", -ENOEXEC,
	  "descriptor name is \"something_else\", expected \"fx_stem\" (the file stem)", "rename", false },
	{ "fx_all", "renamed", -ENOEXEC, "descriptor name is \"fx_all\", expected \"renamed\"", NULL, false },
	{ "fx_nodesc", "fx_nodesc", -ENOEXEC, "does not export the descriptor \"oprofile_ext_v1\"",
	  "OP_EXT_DEFINE", true },
	{ "fx_noinit", "fx_noinit", -ENOEXEC, "descriptor has no ext_init", NULL, false },
	{ "fx_flags", "fx_flags", -ENOEXEC, "descriptor flags 0x80000000 unknown to SDK 1.3", NULL, true },
	{ NULL, "nosuch", -ENOENT, "plugin \"nosuch\" (", "no plugin of that name", true },
	{ NULL, "../fx_all", -EINVAL, "invalid plugin name", "no '/', '.' or '..'", true },
	{ NULL, "a/b", -EINVAL, "invalid plugin name", NULL, true },
	{ NULL, "..", -EINVAL, "invalid plugin name", NULL, true },
	{ NULL, "", -EINVAL, "invalid plugin name", NULL, true },
	{ NULL, "x.y", -EINVAL, "invalid plugin name", NULL, true },
};

/* set e_machine of an ELF file */
static void patch_machine(const char *path, uint16_t machine)
{
	FILE *f = fopen(path, "r+b");

	assert_non_null(f);
	assert_int_equal(fseek(f, 18, SEEK_SET), 0);
	assert_int_equal(fwrite(&machine, sizeof(machine), 1, f), 1);
	fclose(f);
}

/* set byte @at of a file */
static void patch_byte(const char *path, long at, unsigned char value)
{
	FILE *f = fopen(path, "r+b");

	assert_non_null(f);
	assert_int_equal(fseek(f, at, SEEK_SET), 0);
	assert_int_equal(fputc(value, f), value);
	fclose(f);
}

static void test_refusals(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX], mark[PATH_MAX];
	struct logbuf lb;
	struct ext_loader *l;
	size_t i;

	(void)state;
	new_dir(dir, sizeof(dir));
	/* a fx_all one level up, which "../fx_all" must not reach */
	put(tmp_root, "fx_all", NULL);
	snprintf(path, sizeof(path), "%s/garbage.so", dir);
	write_file(path, "this is not an ELF file\n");
	snprintf(mark, sizeof(mark), "%s/ctor-mark", tmp_root);
	setenv("FX_CTOR_MARK", mark, 1);
	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		const struct refusal *t = &refusals[i];

		unlink(mark);
		if (t->fixture)
			put(dir, t->fixture, t->stem);
		log_open(&lb);
		l = ext_loader_new(dir, NULL, NULL, &lb.log);
		if (ext_load(l, t->stem, "", "the test") != t->rc)
			fail_msg("%s: expected %d, log:\n%s", t->stem, t->rc, log_text(&lb));
		assert_contains(log_text(&lb), t->msg1);
		if (t->msg2)
			assert_contains(log_text(&lb), t->msg2);
		assert_contains(log_text(&lb), "[requested by the test]");
		/* no plugin code ran (fixtures log if their init runs) */
		assert_null(strstr(log_text(&lb), "ext_init of a refused fixture ran"));
		assert_true(registry_empty(ext_registry(l)));
		assert_int_equal(ext_nr_plugins(l), 0);
		if (t->before_dlopen && access(mark, F_OK) == 0)
			fail_msg("%s: the plugin's constructor ran before it was refused", t->stem);
		ext_loader_free(l);
		log_close(&lb);
	}
	unsetenv("FX_CTOR_MARK");
	/* the sanity of the mark itself: an accepted fixture's constructor does run */
	put(dir, "fx_reserved", NULL);
	setenv("FX_CTOR_MARK", mark, 1);
	unlink(mark);
	log_open(&lb);
	l = ext_loader_new(dir, NULL, NULL, &lb.log);
	assert_int_equal(ext_load(l, "fx_reserved", "", "x"), -ENOEXEC);
	assert_int_equal(access(mark, F_OK), 0);
	ext_loader_free(l);
	log_close(&lb);
	unsetenv("FX_CTOR_MARK");

	/* files that are not plugins for this system */
	log_open(&lb);
	l = ext_loader_new(dir, NULL, NULL, &lb.log);
	assert_int_equal(ext_load(l, "garbage", "", "x"), -ENOEXEC);
	assert_contains(log_text(&lb), "not an ELF shared object (24 bytes)");
	copy_file("/bin/true", strcat(strcpy(path, dir), "/exe.so"), 0644);
	assert_int_equal(ext_load(l, "exe", "", "x"), -ENOEXEC);
	assert_contains(log_text(&lb), "plugin \"exe\" (");
	assert_contains(log_text(&lb), "does not export the descriptor");
	put(dir, "fx_all", "other_arch");
	patch_machine(strcat(strcpy(path, dir), "/other_arch.so"), 183);
	assert_int_equal(ext_load(l, "other_arch", "", "x"), -ENOEXEC);
	assert_contains(log_text(&lb), "built for ELF machine 183, this system is 62");
	put(dir, "fx_all", "cut");
	assert_int_equal(truncate(strcat(strcpy(path, dir), "/cut.so"), 200), 0);
	assert_int_equal(ext_load(l, "cut", "", "x"), -ENOEXEC);
	assert_contains(log_text(&lb), "plugin \"cut\" (");
	assert_contains(log_text(&lb), "): damaged ELF file: ");
	assert_contains(log_text(&lb), "do not fit the file (200 bytes) - rebuild or reinstall the plugin");
	/* a file the ELF reader accepts and ld.so does not (e_ident[EI_VERSION]) */
	put(dir, "fx_all", "oldelf");
	patch_byte(strcat(strcpy(path, dir), "/oldelf.so"), EI_VERSION, 0);
	assert_int_equal(ext_load(l, "oldelf", "", "x"), -ENOEXEC);
	assert_contains(log_text(&lb), "plugin \"oldelf\" (");
	assert_contains(log_text(&lb), "cannot load: ");
	ext_loader_free(l);
	log_close(&lb);
	/* a missing directory */
	log_open(&lb);
	l = ext_loader_new("/nonexistent/plugins", NULL, NULL, &lb.log);
	assert_int_equal(ext_load(l, "fx_all", "", "x"), -ENOENT);
	assert_contains(log_text(&lb), "plugin directory \"/nonexistent/plugins\": No such file or directory - set --plugin-dir");
	ext_loader_free(l);
	log_close(&lb);
	snprintf(path, sizeof(path), "%s/fx_all.so", tmp_root);
	unlink(path);
}

/* a failed init loses everything it registered; earlier plugins keep theirs */
static void test_failed_init_rollback(void **state)
{
	char dir[PATH_MAX];
	struct ext_registry before;
	struct logbuf lb, st;
	struct ext_loader *l;
	struct ext_registry *r;

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_fail", NULL);
	put(dir, "fx_old", NULL);
	put(dir, "fx_all", NULL);
	log_open(&lb);
	l = ext_loader_new(dir, NULL, NULL, &lb.log);
	r = ext_registry(l);

	/* alone: the registry is all zeroes afterwards */
	assert_int_equal(ext_load(l, "fx_fail", "", "test"), -EIO);
	assert_contains(log_text(&lb), "fx_fail: error: failing on purpose after 9 registrations");
	assert_contains(log_text(&lb), "plugin \"fx_fail\" (");
	assert_contains(log_text(&lb), "ext_init failed with -5 (Input/output error)");
	assert_contains(log_text(&lb), "rolled back");
	assert_contains(log_text(&lb), "fx_fail: user data freed after the failed init");
	assert_true(registry_empty(r));
	assert_int_equal(ext_nr_plugins(l), 0);

	/* after another plugin: that one's registrations stay exactly as they were */
	assert_int_equal(ext_load(l, "fx_old", "", "test"), 0);
	before = *r;
	assert_int_equal(ext_load(l, "fx_fail", "", "test"), -EIO);
	assert_memory_equal(&before, r, sizeof(before));
	assert_int_equal(ext_nr_plugins(l), 1);

	/* the names fx_fail held are free again: fx_all takes the same ones */
	assert_int_equal(ext_load(l, "fx_all", "x", "test"), 0);
	assert_string_equal(r->escapes[40]->desc.name, "fx-all-esc");
	assert_int_equal(r->nr_counters, 2);
	assert_string_equal(r->counters[1].name, "FX_DERIVED");
	assert_int_equal(r->nr_models, 1);
	assert_true(r->has_kernel);
	log_open(&st);
	ext_print_stats(l, st.f);
	assert_null(strstr(log_text(&st), "fx_fail must never print"));
	assert_contains(log_text(&st), "-- plugin fx_old --\n-- plugin fx_all --\n");
	log_close(&st);
	ext_loader_free(l);
	log_close(&lb);
}

/* two plugins claiming one code/name/model/counter/kernel: -EEXIST naming both */
static void test_conflicts(void **state)
{
	static const struct {
		const char *args, *msg;
	} cases[] = {
		{ "escape-code", "escape code 40 (\"fx-clash-esc\") is already registered by plugin \"fx_all\" as \"fx-all-esc\"" },
		{ "escape-name", "escape code name \"fx-all-esc\" is already registered by plugin \"fx_all\" (code 40)" },
		{ "model", "hardware model \"fx-model\" is already registered by plugin \"fx_all\"" },
		{ "counter", "counter \"FX_DERIVED\" is already registered by plugin \"fx_all\"" },
		{ "kernel", "a kernel image resolver is already registered by plugin \"fx_all\"" },
	};
	char dir[PATH_MAX];
	struct ext_registry before;
	struct logbuf lb;
	struct ext_loader *l;
	size_t i;

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_all", NULL);
	put(dir, "fx_clash", NULL);
	log_open(&lb);
	l = ext_loader_new(dir, NULL, NULL, &lb.log);
	assert_int_equal(ext_load(l, "fx_all", "", "test"), 0);
	before = *ext_registry(l);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		/* the loader follows its op_log to the new file (a SIGHUP reopen) */
		log_reset(&lb);
		assert_int_equal(ext_load(l, "fx_clash", cases[i].args, "test"), -EEXIST);
		assert_contains(log_text(&lb), "plugin \"fx_clash\" (");
		assert_contains(log_text(&lb), cases[i].msg);
		assert_contains(log_text(&lb), "ext_init failed with -17");
		/* FX_CLASH_FIRST was rolled back too */
		assert_memory_equal(&before, ext_registry(l), sizeof(before));
	}
	/* without a clash it loads next to fx_all */
	assert_int_equal(ext_load(l, "fx_clash", "none", "test"), 0);
	assert_int_equal(ext_registry(l)->nr_counters, 2);
	assert_string_equal(ext_registry(l)->counters[1].name, "FX_CLASH_FIRST");
	assert_int_equal(ext_registry(l)->counters[1].desc.size, sizeof(struct op_counter_desc));
	ext_loader_free(l);
	log_close(&lb);
}

/* a v1.0 plugin with short payloads loads; what it did not write reads as 0 */
static void test_old_plugin(void **state)
{
	char dir[PATH_MAX];
	struct logbuf lb;
	struct ext_loader *l;
	struct ext_registry *r;

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_old", NULL);
	log_open(&lb);
	l = ext_loader_new(dir, NULL, NULL, &lb.log);
	assert_int_equal(ext_load(l, "fx_old", "", "test"), 0);
	r = ext_registry(l);
	assert_int_equal(r->nr_counters, 1);
	assert_string_equal(r->counters[0].name, "FX_OLD");
	assert_int_equal(r->counters[0].desc.event, 0xf200);
	assert_int_equal(r->counters[0].desc.um, 5);
	assert_int_equal(r->counters[0].desc.count, 0); /* beyond its size: not 99 */
	assert_int_equal(r->counters[0].desc.size, offsetof(struct op_counter_desc, count));
	/* its 1.0 source: the embedded attr, no attr_ptr beyond its size */
	assert_int_equal(r->nr_sources, 1);
	assert_string_equal(r->sources[0].desc.name, "fx-old-src");
	assert_int_equal(r->sources[0].desc.size, OP_SOURCE_DESC_SIZE_V1_0);
	assert_int_equal(r->sources[0].desc.attr.config, 3);
	assert_int_equal(r->sources[0].desc.attr.sample_period, 500);
	assert_null(r->sources[0].desc.attr_ptr);
	assert_non_null(r->escapes[OP_ESCAPE_FIRST_PLUGIN]);
	assert_string_equal(r->escapes[OP_ESCAPE_FIRST_PLUGIN]->desc.name, "fx-old-esc");
	assert_int_equal(r->no_event_ok, 0);
	ext_loader_free(l);
	log_close(&lb);
}

/* start-up errors reach stderr too when the log is another file */
static void test_echo_to_stderr(void **state)
{
	char dir[PATH_MAX], capture[PATH_MAX], buf[4096];
	struct logbuf lb;
	struct ext_loader *l;
	int saved, fd;
	ssize_t n;

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_major", NULL);
	put(dir, "fx_fail", NULL);
	snprintf(capture, sizeof(capture), "%s/stderr.txt", dir);
	fflush(stderr);
	saved = dup(2);
	fd = open(capture, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);

	log_open(&lb);
	l = ext_loader_new(dir, NULL, NULL, &lb.log);
	assert_int_equal(ext_load(l, "fx_major", "", "test"), -ENOEXEC);
	assert_int_equal(ext_load(l, "fx_fail", "", "test"), -EIO);
	lb.log.echo_errors = false;
	assert_int_equal(ext_load(l, "nosuch", "", "test"), -ENOENT);
	ext_loader_free(l);
	log_close(&lb);

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fd = open(capture, O_RDONLY);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n > 0);
	buf[n] = '\0';
	assert_contains(buf, "oprofiled: plugin \"fx_major\" (");
	assert_contains(buf, "built for SDK 2.3, oprofiled provides 1.3");
	assert_contains(buf, "fx_fail: error: failing on purpose after 9 registrations\n");
	assert_contains(buf, "ext_init failed with -5");
	assert_null(strstr(buf, "nosuch"));
}

/*
 * The ELF reader survives damaged files: random bytes in the headers, the
 * program headers and dynamic tables (the first 2 KB), anywhere; cut files.
 */
static void test_peek_damaged(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX], why[512];
	uint32_t major, minor, size, flags;
	unsigned char *img;
	long len;
	FILE *f;
	int i, k, rc, ok = 0, refused = 0;

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_all", "victim");
	snprintf(path, sizeof(path), "%s/victim.so", dir);
	assert_int_equal(ext_descriptor_peek(path, &major, &minor, &size, &flags, why, sizeof(why)), 0);
	assert_int_equal(major, 1);
	assert_int_equal(minor, OP_SDK_MINOR);
	assert_int_equal(size, 104);
	assert_int_equal(flags, OP_EXT_F_NO_EVENT_OK);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	img = malloc((size_t)len);
	assert_non_null(img);
	assert_int_equal(fread(img, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	srand(12345);
	for (i = 0; i < 1000; i++) {
		unsigned char *bad = malloc((size_t)len);
		long cut = len;

		memcpy(bad, img, (size_t)len);
		for (k = 0; k < 1 + rand() % 8; k++) {
			int where = rand() % 3;
			long at = where == 0 ? rand() % 64 : where == 1 ? rand() % 2048 : rand() % len;

			bad[at % len] = (unsigned char)rand();
		}
		if (i % 10 == 0)
			cut = rand() % len;
		f = fopen(path, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(bad, 1, (size_t)cut, f), (size_t)cut);
		fclose(f);
		free(bad);
		rc = ext_descriptor_peek(path, &major, &minor, &size, &flags, why, sizeof(why));
		if (rc > 0)
			fail_msg("damaged copy %d: peek returned %d: a file is accepted or refused", i, rc);
		if (rc == 0)
			ok++;
		else
			refused++;
	}
	free(img);
	/* both outcomes happen, none crashed */
	assert_true(ok > 0);
	assert_true(refused > 0);
}

/* malformed payloads are refused one by one, with a message each */
static void test_invalid_payloads(void **state)
{
	char dir[PATH_MAX];
	struct logbuf lb;
	struct ext_loader *l;
	struct ext_registry *r;
	int i;

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_invalid", NULL);
	log_open(&lb);
	l = ext_loader_new(dir, NULL, NULL, &lb.log);
	if (ext_load(l, "fx_invalid", "", "test"))
		fail_msg("fx_invalid saw unexpected answers:\n%s", log_text(&lb));
	r = ext_registry(l);
	assert_int_equal(r->nr_sfile, 1);
	assert_int_equal(r->nr_counters, 1);
	assert_int_equal(r->nr_sources + r->nr_hooks + r->nr_models + r->nr_stats, 0);
	assert_false(r->has_kernel);
	for (i = 0; i <= OP_ESCAPE_MAX; i++)
		assert_null(r->escapes[i]);
	assert_contains(log_text(&lb), "register_escape: handler is NULL (description size 32) - set it");
	assert_contains(log_text(&lb), "register_escape: handler is NULL (description size 4)");
	assert_contains(log_text(&lb), "register_escape \"e\": min_args 3 > max_args 2");
	assert_contains(log_text(&lb), "register_escape \"e\": code 5 is outside the plugin range 32..255 - use 0 to have one allocated");
	assert_contains(log_text(&lb), "register_source \"s\": attr.size is 0");
	assert_contains(log_text(&lb), "register_model: encode is NULL");
	assert_contains(log_text(&lb), "register_counter: name \"A.B\" has '.' - expected 1..64 of [A-Za-z0-9_-]");
	assert_contains(log_text(&lb), "register_sfile_handlers called twice");
	assert_contains(log_text(&lb), "counter \"FX_ONCE\" is already registered by plugin \"fx_invalid\"");
	ext_loader_free(l);
	log_close(&lb);

	/* every plugin escape code can be allocated, then -ENOSPC */
	log_open(&lb);
	l = ext_loader_new(dir, NULL, NULL, &lb.log);
	if (ext_load(l, "fx_invalid", "fill", "test"))
		fail_msg("fx_invalid fill saw unexpected answers:\n%s", log_text(&lb));
	r = ext_registry(l);
	for (i = 0; i < OP_ESCAPE_FIRST_PLUGIN; i++)
		assert_null(r->escapes[i]);
	for (i = OP_ESCAPE_FIRST_PLUGIN; i <= OP_ESCAPE_MAX; i++)
		assert_int_equal(r->escapes[i]->desc.code, i);
	assert_contains(log_text(&lb), "all 224 plugin escape codes are in use");
	ext_loader_free(l);
	log_close(&lb);
}

static int load_one(const char *dir, const char *name, struct logbuf *lb)
{
	struct ext_loader *l;
	int rc;

	log_reset(lb);
	l = ext_loader_new(dir, NULL, NULL, &lb->log);
	rc = ext_load(l, name, "", "test");
	ext_loader_free(l);
	fflush(lb->f);
	return rc;
}

/* unsafe files and directories are refused before dlopen */
static void test_permissions(void **state)
{
	char dir[PATH_MAX], out[PATH_MAX], sub[PATH_MAX], file[PATH_MAX], link[PATH_MAX];
	struct logbuf lb;

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_old", NULL);
	snprintf(file, sizeof(file), "%s/fx_old.so", dir);
	log_open(&lb);
	assert_int_equal(load_one(dir, "fx_old", &lb), 0);

	assert_int_equal(chmod(file, 0664), 0);
	assert_int_equal(load_one(dir, "fx_old", &lb), -EPERM);
	assert_contains(log_text(&lb), "plugin file ");
	assert_contains(log_text(&lb), "is writable by its group (mode 0664) - run chmod go-w");
	assert_int_equal(chmod(file, 0646), 0);
	assert_int_equal(load_one(dir, "fx_old", &lb), -EPERM);
	assert_contains(log_text(&lb), "is writable by everyone (mode 0646)");
	assert_int_equal(chmod(file, 0755), 0);
	assert_int_equal(load_one(dir, "fx_old", &lb), 0);

	assert_int_equal(chmod(dir, 0775), 0);
	assert_int_equal(load_one(dir, "fx_old", &lb), -EPERM);
	assert_contains(log_text(&lb), "plugin directory ");
	assert_contains(log_text(&lb), "is writable by its group (mode 0775)");
	assert_int_equal(chmod(dir, 0757), 0);
	assert_int_equal(load_one(dir, "fx_old", &lb), -EPERM);
	assert_contains(log_text(&lb), "is writable by everyone (mode 0757)");
	assert_int_equal(chmod(dir, 0755), 0);

	if (geteuid() == 0) {
		assert_int_equal(chown(file, 65534, 0), 0);
		assert_int_equal(load_one(dir, "fx_old", &lb), -EPERM);
		assert_contains(log_text(&lb), "is owned by uid 65534, but oprofiled runs as root - run chown root");
		assert_int_equal(chown(file, 0, 0), 0);
		assert_int_equal(load_one(dir, "fx_old", &lb), 0);
	}

	/* a symlink that leaves the plugin dir */
	new_dir(out, sizeof(out));
	put(out, "fx_all", NULL);
	snprintf(file, sizeof(file), "%s/fx_all.so", out);
	snprintf(link, sizeof(link), "%s/fx_all.so", dir);
	assert_int_equal(symlink(file, link), 0);
	assert_int_equal(load_one(dir, "fx_all", &lb), -EPERM);
	assert_contains(log_text(&lb), "symlink leads out of the plugin directory");
	unlink(link);
	/* a relative one that climbs out */
	assert_int_equal(symlink("../d_nonexistent/../fx_all.so", link), 0);
	assert_int_equal(load_one(dir, "fx_all", &lb) < 0, 1);
	unlink(link);
	/* one that stays inside is fine */
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(chmod(sub, 0755), 0);
	put(sub, "fx_all", NULL);
	assert_int_equal(symlink("sub/fx_all.so", link), 0);
	assert_int_equal(load_one(dir, "fx_all", &lb), 0);
	/* ... unless its own directory is unsafe */
	assert_int_equal(chmod(sub, 0777), 0);
	assert_int_equal(load_one(dir, "fx_all", &lb), -EPERM);
	assert_contains(log_text(&lb), "/sub is writable by everyone (mode 0777)");
	assert_int_equal(chmod(sub, 0755), 0);
	log_close(&lb);
}

/*
 * Load @name of @dir in a child that is uid/gid 65534: 0 when ext_load
 * returned @want and, for a refusal, logged @msg.
 */
static int user_load(const char *dir, const char *name, int want, const char *msg)
{
	struct logbuf lb;
	int status, rc;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		if (setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(2);
		log_open(&lb);
		rc = load_one(dir, name, &lb);
		if (rc != want || (msg && !strstr(log_text(&lb), msg))) {
			fprintf(stderr, "user loader: rc %d, expected %d and \"%s\" in:\n%s\n", rc,
				want, msg ? msg : "", log_text(&lb));
			_exit(1);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/*
 * A user's loader: the plugin file and directory must be root's or the
 * user's (lib/op_trust's owner rule) and writable by nobody else, not even
 * their group (the loader's stricter write rule); the directories above the
 * plugin directory are not checked (a root loader's are: test_ancestors).
 */
static void test_user_loader(void **state)
{
	char above[PATH_MAX], dir[PATH_MAX], file[PATH_MAX];

	(void)state;
	if (geteuid() != 0) {
		print_message("not root: cannot become another user to load as one\n");
		skip();
	}
	new_dir(above, sizeof(above));
	snprintf(dir, sizeof(dir), "%s/plugins", above);
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(chmod(dir, 0755), 0);
	put(dir, "fx_old", NULL);
	snprintf(file, sizeof(file), "%s/fx_old.so", dir);
	/* root's file in the user's directory, below a third user's directory */
	assert_int_equal(chown(above, 65533, 65533), 0);
	assert_int_equal(chown(dir, 65534, 65534), 0);
	assert_int_equal(user_load(dir, "fx_old", 0, NULL), 0);
	/* a third user's file */
	assert_int_equal(chown(file, 65533, 65533), 0);
	assert_int_equal(user_load(dir, "fx_old", -EPERM,
				   "is owned by uid 65533, but oprofiled runs as uid 65534"), 0);
	/* the user's own file, but its group may write it */
	assert_int_equal(chown(file, 65534, 65534), 0);
	assert_int_equal(chmod(file, 0664), 0);
	assert_int_equal(user_load(dir, "fx_old", -EPERM, "is writable by its group (mode 0664)"),
			 0);
	assert_int_equal(chmod(file, 0644), 0);
	assert_int_equal(user_load(dir, "fx_old", 0, NULL), 0);
	/* a plugin directory a third user owns */
	assert_int_equal(chown(dir, 65533, 65533), 0);
	assert_int_equal(user_load(dir, "fx_old", -EPERM,
				   "owned by uid 65533, but oprofiled runs as uid 65534"), 0);
	assert_int_equal(chown(dir, 0, 0), 0);
}

/* zero the ELF header's section-header fields, as strip --strip-section-headers does */
static void strip_section_headers(const char *path)
{
	ElfW(Ehdr) eh;
	int fd = open(path, O_RDWR);

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &eh, sizeof(eh), 0), sizeof(eh));
	eh.e_shoff = 0;
	eh.e_shnum = 0;
	eh.e_shstrndx = 0;
	assert_int_equal(pwrite(fd, &eh, sizeof(eh), 0), sizeof(eh));
	close(fd);
}

static bool exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/*
 * Without section headers the descriptor is found through the dynamic
 * segment, as ld.so finds symbols: a bad one is refused before any plugin
 * code runs, a good one loads (GNU and SysV hash tables).
 */
static void test_stripped_section_headers(void **state)
{
	static const struct {
		const char *fx;
		int rc;
		const char *msg;
	} cases[] = {
		{ "fx_major", -ENOEXEC, "): built for SDK 2.3, oprofiled provides 1.3 - rebuild the plugin against SDK 1.x" },
		{ "fx_major_sysv", -ENOEXEC, "): built for SDK 2.3, oprofiled provides 1.3" },
		{ "fx_minor", -ENOEXEC, "built for SDK 1.4, oprofiled provides 1.3" },
		{ "fx_small", -ENOEXEC, "descriptor size is 64 bytes" },
		{ "fx_flags", -ENOEXEC, "descriptor flags 0x80000000 unknown to SDK 1.3" },
		{ "fx_nodesc", -ENOEXEC, "does not export the descriptor \"oprofile_ext_v1\"" },
		{ "fx_mark", 0, NULL },
		{ "fx_mark_sysv", 0, NULL },
	};
	char dir[PATH_MAX], path[PATH_MAX], mark[PATH_MAX];
	struct logbuf lb;
	size_t i;
	int strip, rc;

	(void)state;
	new_dir(dir, sizeof(dir));
	snprintf(mark, sizeof(mark), "%s/ctor-mark", dir);
	setenv("FX_CTOR_MARK", mark, 1);
	log_open(&lb);
	for (strip = 0; strip < 2; strip++)
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			put(dir, cases[i].fx, NULL);
			snprintf(path, sizeof(path), "%s/%s.so", dir, cases[i].fx);
			if (strip)
				strip_section_headers(path);
			unlink(mark);
			rc = load_one(dir, cases[i].fx, &lb);
			if (rc != cases[i].rc)
				fail_msg("%s%s: expected %d, got %d:\n%s", cases[i].fx,
					 strip ? " (no section headers)" : "", cases[i].rc, rc,
					 log_text(&lb));
			if (cases[i].msg)
				assert_contains(log_text(&lb), cases[i].msg);
			if (rc && exists(mark))
				fail_msg("%s%s: its constructor ran before it was refused", cases[i].fx,
					 strip ? " (no section headers)" : "");
			if (!rc && !exists(mark))
				fail_msg("%s: loaded, but its constructor did not run", cases[i].fx);
		}
	log_close(&lb);
	unsetenv("FX_CTOR_MARK");
}

/*
 * A file exchanged for another (renameat2 RENAME_EXCHANGE, by a process of
 * the test) while the loader runs: the loader loads exactly the file it
 * checked. The other file is an SDK 2.0 plugin whose constructor leaves a
 * mark: if the check saw fx_all and dlopen the other file, the mark appears.
 */
static void test_swap_race(void **state)
{
	char dir[PATH_MAX], mark[PATH_MAX];
	int i, rc, loaded = 0, refused = 0, status;
	struct logbuf lb;
	pid_t pid;

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_all", NULL);
	put(dir, "fx_major", "evil");
	snprintf(mark, sizeof(mark), "%s/ctor-mark", dir);
	unlink(mark);
	setenv("FX_CTOR_MARK", mark, 1);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		time_t end = time(NULL) + 60;
		int dfd = open(dir, O_RDONLY | O_DIRECTORY);
		unsigned long n = 0;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		while (dfd >= 0 && (n++ & 1023 || time(NULL) < end))
			if (renameat2(dfd, "fx_all.so", dfd, "evil.so", RENAME_EXCHANGE))
				_exit(1);
		_exit(0);
	}
	log_open(&lb);
	for (i = 0; i < 400 && !exists(mark); i++) {
		rc = load_one(dir, "fx_all", &lb);
		if (rc == 0) {
			loaded++;
		} else {
			refused++;
			assert_int_equal(rc, -ENOEXEC);
			assert_contains(log_text(&lb), "built for SDK 2.3");
		}
		log_reset(&lb);
		assert_int_equal(ext_list_plugins(dir, lb.f), 0);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	log_close(&lb);
	unsetenv("FX_CTOR_MARK");
	if (exists(mark))
		fail_msg("after %d loads, code of a file swapped in after the checks ran", i);
	/* the swap happened both ways: the loop tested something */
	assert_true(loaded > 0);
	assert_true(refused > 0);
}

/*
 * Plugins are loaded as /proc/self/fd/N, and ld.so returns an object already
 * loaded under that name: one that stays loaded after dlclose (-z nodelete)
 * must not stand in for the next plugin opened on the same fd number.
 */
static void test_nodelete_fd_name(void **state)
{
	char dir[PATH_MAX];
	struct logbuf lb;
	int i;

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_nodel", NULL);
	put(dir, "fx_all", NULL);
	log_open(&lb);
	for (i = 0; i < 3; i++) {
		assert_int_equal(load_one(dir, "fx_nodel", &lb), 0);
		if (load_one(dir, "fx_all", &lb))
			fail_msg("fx_all after fx_nodel:\n%s", log_text(&lb));
	}
	log_reset(&lb);
	assert_int_equal(ext_list_plugins(dir, lb.f), 0);
	assert_contains(log_text(&lb), "  fx_all       1.2.3    SDK 1.3");
	assert_contains(log_text(&lb), "  fx_nodel     1.0      SDK 1.3");
	log_close(&lb);
}

/* mkdir @path with @mode (whatever the umask), owned by @uid */
static void mkdir_owned(const char *path, mode_t mode, uid_t uid)
{
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(chown(path, uid, 0), 0);
	assert_int_equal(chmod(path, mode), 0);
}

/*
 * As root, every directory from / to the plugin must be root's and
 * writable by root alone (sshd's StrictModes): below a user's directory, or
 * a group/other-writable one, a plugin is refused and none of its code runs.
 * A root-owned sticky directory (/tmp) is passed through when the entry in
 * it is root's (others cannot rename it); a user's entry there is refused.
 * The rest of the tests run in the build tree, root's 0755 here.
 */
static void test_ancestors(void **state)
{
	static const struct {
		mode_t mode;
		uid_t uid, sub_uid;
		const char *msg;
	} cases[] = {
		{ 0755, 65534, 0, "(above the plugin directory) is owned by uid 65534, but oprofiled runs as root: "
			       "a root oprofiled loads plugins only through directories that root owns and only root can write" },
		{ 0775, 0, 0, "(above the plugin directory) is writable by its group (mode 0775): a root oprofiled loads "
			   "plugins only through directories that root owns and only root can write" },
		{ 0757, 0, 0, "(above the plugin directory) is writable by everyone (mode 0757)" },
		/* sticky and root's: refused only because the entry in it is the user's */
		{ 01777, 0, 65534, "(above the plugin directory) is owned by uid 65534, but oprofiled runs as root" },
	};
	char top[PATH_MAX], dir[PATH_MAX], mark[PATH_MAX], want[PATH_MAX + 256];
	struct logbuf lb;
	size_t i;

	(void)state;
	if (geteuid() != 0) {
		fprintf(stderr, "test_ancestors: needs root (the rules of a root loader): skipped\n");
		skip();
	}
	snprintf(mark, sizeof(mark), "%s/ctor-mark", tmp_root);
	setenv("FX_CTOR_MARK", mark, 1);
	log_open(&lb);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(top, sizeof(top), "%s/anc%zu", tmp_root, i);
		mkdir_owned(top, cases[i].mode, cases[i].uid);
		snprintf(dir, sizeof(dir), "%s/sub", top);
		mkdir_owned(dir, 0755, cases[i].sub_uid);
		snprintf(dir, sizeof(dir), "%s/sub/plugins", top);
		mkdir_owned(dir, 0755, 0);
		put(dir, "fx_mark", NULL);
		unlink(mark);
		assert_int_equal(load_one(dir, "fx_mark", &lb), -EPERM);
		snprintf(want, sizeof(want), "plugin \"fx_mark\" (%s/fx_mark.so): directory %s%s %s",
			 dir, top, cases[i].sub_uid ? "/sub" : "", cases[i].msg);
		assert_contains(log_text(&lb), want);
		if (exists(mark))
			fail_msg("%s: the constructor of a refused plugin ran", top);
		log_reset(&lb);
		assert_int_equal(ext_list_plugins(dir, lb.f), 0);
		assert_contains(log_text(&lb), "fx_mark      REFUSED: directory ");
		if (exists(mark))
			fail_msg("%s: --list-plugins ran the constructor of a refused plugin", top);
		/* made safe, the same tree loads (a root sticky top stays as it is) */
		snprintf(dir, sizeof(dir), "%s/sub", top);
		assert_int_equal(chown(dir, 0, 0), 0);
		snprintf(dir, sizeof(dir), "%s/sub/plugins", top);
		assert_int_equal(chown(top, 0, 0), 0);
		if (!(cases[i].mode & S_ISVTX))
			assert_int_equal(chmod(top, 0755), 0);
		assert_int_equal(load_one(dir, "fx_mark", &lb), 0);
		assert_true(exists(mark));
	}
	log_close(&lb);
	unsetenv("FX_CTOR_MARK");
}

/* plugins are loaded through /proc/self/fd: without /proc, a clear refusal */
static void test_no_proc(void **state)
{
	char dir[PATH_MAX];
	struct logbuf lb;
	pid_t pid;
	int status;

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_all", NULL);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		/* a private mount namespace (in a user namespace unless root) with a tmpfs over /proc */
		if (unshare(CLONE_NEWNS | (geteuid() ? CLONE_NEWUSER : 0)) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("none", "/proc", "tmpfs", 0, NULL))
			_exit(77);
		log_open(&lb);
		if (load_one(dir, "fx_all", &lb) != -ENOENT ||
		    !strstr(log_text(&lb), "/proc is not mounted (no /proc/self/fd/"))  {
			fprintf(stderr, "without /proc:\n%s", log_text(&lb));
			_exit(1);
		}
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		fprintf(stderr, "test_no_proc: cannot mount over /proc in a new namespace: skipped\n");
		skip();
	}
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* --list-plugins: good ones with version and SDK, refused ones with the reason */
static void test_list_plugins(void **state)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct logbuf lb;

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_all", NULL);
	put(dir, "fx_old", NULL);
	put(dir, "fx_major", NULL);
	put(dir, "fx_stem", NULL);
	snprintf(path, sizeof(path), "%s/README", dir);
	write_file(path, "not a plugin\n");
	log_open(&lb);
	assert_int_equal(ext_list_plugins(dir, lb.f), 0);
	assert_contains(log_text(&lb), "(oprofiled SDK 1.3):\n");
	assert_contains(log_text(&lb), "  fx_all       1.2.3    SDK 1.3  fixture: one registration of every kind\n");
	assert_contains(log_text(&lb), "  fx_old       1.0      SDK 1.0  fixture: a v1.0 plugin with short payloads\n");
	assert_contains(log_text(&lb), "  fx_major     REFUSED: built for SDK 2.3, oprofiled provides 1.3");
	assert_contains(log_text(&lb), "  fx_stem      REFUSED: descriptor name is \"something_else\"");
	assert_null(strstr(log_text(&lb), "README"));
	/* sorted by name */
	assert_true(strstr(log_text(&lb), "fx_all") < strstr(log_text(&lb), "fx_major"));
	/* listing runs no ext_init */
	assert_null(strstr(log_text(&lb), "init args"));
	log_close(&lb);

	log_open(&lb);
	assert_int_equal(ext_list_plugins("/nonexistent/dir", lb.f), -ENOENT);
	assert_contains(log_text(&lb), "cannot list plugin directory \"/nonexistent/dir\"");
	log_close(&lb);
}

/* some mapping of this process is a file whose name contains @needle */
static bool maps_have(const char *needle)
{
	char line[PATH_MAX + 256];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) != NULL;
	fclose(f);
	return found;
}

/* copy the real plugin @name.so of the build tree into @dir */
static void put_real(const char *dir, const char *name)
{
	const char *b = getenv("OP_BUILDDIR");
	char from[PATH_MAX], to[PATH_MAX];

	snprintf(from, sizeof(from), "%s/plugins/.libs/%s.so", b ? b : ".", name);
	snprintf(to, sizeof(to), "%s/%s.so", dir, name);
	copy_file(from, to, 0644);
}

/*
 * ext_unload (issue 20): the real hardware-model plugins, which register
 * only models and a stats section, go with everything they registered and
 * their libpfm4 leaves the address space (dlclose really unmaps it); the
 * other plugins' registrations stay as they were; one holding anything
 * else (fx_all: an sfile slot, a source, counters...) is refused, -EBUSY.
 */
static void test_unload(void **state)
{
	struct ext_registry before;
	char dir[PATH_MAX], sopath[PATH_MAX + 16];
	struct logbuf lb, st;
	struct ext_loader *l;
	struct ext_registry *r;

	(void)state;
	new_dir(dir, sizeof(dir));
	put(dir, "fx_all", NULL);
	put_real(dir, "amd64");
	put_real(dir, "intel");
	assert_false(maps_have("libpfm"));
	log_open(&lb);
	l = ext_loader_new(dir, NULL, NULL, &lb.log);
	r = ext_registry(l);
	assert_int_equal(ext_load(l, "fx_all", "x", "test"), 0);
	before = *r;
	assert_int_equal(ext_load(l, "amd64", "", "default"), 0);
	assert_int_equal(ext_load(l, "intel", "", "default"), 0);
	assert_true(maps_have("libpfm"));
	snprintf(sopath, sizeof(sopath), "%s/intel.so", dir);
	assert_true(maps_have(sopath));
	assert_true(r->nr_models > before.nr_models);
	assert_int_equal(r->nr_stats, before.nr_stats + 2);

	/* one of two: libpfm4 stays for the other */
	assert_int_equal(ext_unload(l, "amd64", "only probed"), 0);
	assert_contains(log_text(&lb), "plugin \"amd64\" (");
	assert_contains(log_text(&lb), "amd64.so) unloaded: only probed");
	assert_null(ext_plugin(l, "amd64"));
	assert_int_equal(ext_nr_plugins(l), 2);
	assert_true(maps_have("libpfm"));
	assert_int_equal(ext_unload(l, "amd64", "again"), -ENOENT);

	/* both: back to fx_all's registry exactly, libpfm4 and the files unmapped */
	assert_int_equal(ext_unload(l, "intel", "only probed"), 0);
	assert_memory_equal(&before, r, sizeof(before));
	assert_int_equal(ext_nr_plugins(l), 1);
	assert_false(maps_have("libpfm"));
	snprintf(sopath, sizeof(sopath), "%s/amd64.so", dir);
	assert_false(maps_have(sopath));
	snprintf(sopath, sizeof(sopath), "%s/intel.so", dir);
	assert_false(maps_have(sopath));
	log_open(&st);
	ext_print_stats(l, st.f);
	assert_null(strstr(log_text(&st), "-- plugin amd64 --"));
	assert_null(strstr(log_text(&st), "-- plugin intel --"));
	assert_contains(log_text(&st), "-- plugin fx_all --\n");
	log_close(&st);

	/* a plugin holding registrations something may use stays */
	assert_int_equal(ext_unload(l, "fx_all", "test"), -EBUSY);
	assert_contains(log_text(&lb),
			"plugin \"fx_all\" stays loaded: it registered an escape code, in use");
	assert_non_null(ext_plugin(l, "fx_all"));
	assert_memory_equal(&before, r, sizeof(before));

	/* the name and the file are free again: loaded anew, it registers the same */
	assert_int_equal(ext_load(l, "amd64", "", "default"), 0);
	assert_true(maps_have("libpfm"));
	assert_int_equal(r->nr_stats, before.nr_stats + 1);
	ext_loader_free(l);
	assert_false(maps_have("libpfm"));
	log_close(&lb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_kinds),
		cmocka_unit_test(test_cmdline_args),
		cmocka_unit_test(test_no_core),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_failed_init_rollback),
		cmocka_unit_test(test_conflicts),
		cmocka_unit_test(test_old_plugin),
		cmocka_unit_test(test_invalid_payloads),
		cmocka_unit_test(test_peek_damaged),
		cmocka_unit_test(test_echo_to_stderr),
		cmocka_unit_test(test_permissions),
		cmocka_unit_test(test_user_loader),
		cmocka_unit_test(test_list_plugins),
		cmocka_unit_test(test_stripped_section_headers),
		cmocka_unit_test(test_swap_race),
		cmocka_unit_test(test_nodelete_fd_name),
		cmocka_unit_test(test_ancestors),
		cmocka_unit_test(test_no_proc),
		cmocka_unit_test(test_unload),
	};

	return cmocka_run_group_tests_name("ext", tests, group_setup, group_teardown);
}
