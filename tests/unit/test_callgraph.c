/*
 * test_callgraph.c - the callgraph plugin on the mock host: what it asks the
 * core for, chains with PERF_CONTEXT_* markers, arc keys and cross-image
 * arc files, truncation at depth, unmapped frames, malformed records, the
 * arc-file cache across set closes, and the whole-stack table on disk
 * (version 3's context, version 4's split keys).
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mock_host.h"
#include "op_cg_format.h"
#include "op_session_layout.h"

extern const struct op_ext_descriptor oprofile_ext_v1;

#define APP_START UINT64_C(0x400000)
#define LIB_START UINT64_C(0x7f0000000000)
#define LIB_PGOFF UINT64_C(0x1000)
#define K_START UINT64_C(0xffffffff81000000)
#define ANON_START UINT64_C(0x7e0000000000)

struct fx {
	struct mock_host *mh;
	op_cookie_t app, lib, kern, anon;
	char dir[64];
};

/* map_pc that honours cpumode: kernel pcs map only in kernel mode and back */
static int fx_map(struct mock_host *mh, uint32_t pid, uint16_t cpumode, uint64_t pc,
		  struct op_pc_map *out)
{
	(void)pid;
	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->in_kernel = -1;
	for (size_t i = 0; i < mh->nr_mappings; i++) {
		const struct mock_mapping *m = &mh->mappings[i];

		if (pc < m->start || pc >= m->end)
			continue;
		if ((m->in_kernel == 1) != (cpumode == OP_CPUMODE_KERNEL))
			return -ENOENT;
		out->in_kernel = m->in_kernel;
		out->cookie = m->cookie;
		out->offset = pc - m->start + m->pgoff;
		if (m->anon) {
			out->anon_start = m->start;
			out->anon_end = m->end - 1;
		}
		return 0;
	}
	return -ENOENT;
}

static struct fx *fx_new(const char *args, bool with_session)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct mock_mapping m = { 0 };
	char path[128];

	assert_non_null(f);
	f->mh = mock_host_new();
	f->mh->map_pc_fn = fx_map;
	f->app = f->mh->host.cookie_intern(mock_host_ctx(f->mh), "/usr/bin/app", false);
	f->lib = f->mh->host.cookie_intern(mock_host_ctx(f->mh), "/usr/lib/libc.so.6", false);
	f->kern = f->mh->host.cookie_intern(mock_host_ctx(f->mh), "vmlinux", true);
	f->anon = f->mh->host.cookie_intern(mock_host_ctx(f->mh), "[heap]", false);
	m = (struct mock_mapping){ .start = APP_START,
				   .end = APP_START + 0x100000,
				   .cookie = f->app };
	mock_host_add_mapping(f->mh, &m);
	m = (struct mock_mapping){
		.start = LIB_START, .end = LIB_START + 0x100000, .pgoff = LIB_PGOFF, .cookie = f->lib
	};
	mock_host_add_mapping(f->mh, &m);
	m = (struct mock_mapping){
		.start = K_START, .end = K_START + 0x1000000, .cookie = f->kern, .in_kernel = 1
	};
	mock_host_add_mapping(f->mh, &m);
	m = (struct mock_mapping){
		.start = ANON_START, .end = ANON_START + 0x10000, .cookie = f->anon, .anon = true
	};
	mock_host_add_mapping(f->mh, &m);
	if (with_session) {
		snprintf(f->dir, sizeof(f->dir), "/tmp/test_callgraph.XXXXXX");
		assert_non_null(mkdtemp(f->dir));
		snprintf(path, sizeof(path), "%s/samples", f->dir);
		assert_int_equal(mkdir(path, 0755), 0);
		snprintf(path, sizeof(path), "%s/samples/current", f->dir);
		assert_int_equal(mkdir(path, 0755), 0);
		mock_host_set_session_dir(f->mh, f->dir);
	}
	assert_int_equal(mock_host_init(f->mh, &oprofile_ext_v1, args), 0);
	return f;
}

static void fx_free(struct fx *f)
{
	char cmd[128];

	mock_host_free(f->mh);
	if (f->dir[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
		assert_int_equal(system(cmd), 0);
	}
	free(f);
}

static void fx_sample(struct fx *f, uint16_t cpumode, const uint64_t *chain, size_t n)
{
	struct op_perf_sample s = { .size = sizeof(s) };

	s.cpumode = cpumode;
	s.pid = s.tid = 42;
	s.ip = n > 1 ? chain[1] : 0;
	s.nr_callchain = n;
	s.callchain = chain;
	assert_int_equal(f->mh->hooks[0].desc.on_sample(f->mh->hooks[0].priv, &s,
							mock_host_emitter(f->mh)),
			 0);
}

static struct op_trans_view fx_view(const struct fx *f, op_cookie_t leaf, int32_t in_kernel)
{
	struct op_trans_view t = { .size = sizeof(t) };

	t.tgid = t.tid = 42;
	t.cpu = -1;
	t.in_kernel = in_kernel;
	t.app_cookie = f->app;
	t.cookie = leaf;
	t.counter = 0;
	return t;
}

/* run the last emitted record through the escape handler */
static int fx_trans(struct fx *f, const struct op_trans_view *t)
{
	const struct mock_reg_escape *e = mock_host_escape(f->mh, "callgraph-chain");
	const struct mock_emit_rec *r;

	assert_non_null(e);
	assert_true(f->mh->nr_emits > 0);
	r = &f->mh->emits[f->mh->nr_emits - 1];
	assert_int_equal(r->code, e->code);
	return e->desc.handler(e->priv, t, r->args, r->nargs);
}

/* the arc file opened for caller image @from and callee @to (last one opened) */
static struct op_sample_file *fx_file(const struct fx *f, op_cookie_t from, op_cookie_t to)
{
	struct op_sample_file *found = NULL;

	for (size_t i = 0; i < f->mh->nr_files; i++) {
		struct op_sample_file *sf = f->mh->files[i];

		if (sf->spec.is_cg && sf->view.cookie == from && sf->spec.cg_to_cookie == to)
			found = sf;
	}
	return found;
}

static uint64_t fx_stat(struct fx *f, const char *name)
{
	uint64_t v = UINT64_MAX;

	mock_host_print_stats(f->mh);
	assert_true(mock_host_stat(f->mh, name, &v));
	return v;
}

static void test_registrations(void **state)
{
	struct fx *f = fx_new("depth=8", false);

	(void)state;
	assert_int_equal(f->mh->nr_hooks, 1);
	assert_int_equal(f->mh->hooks[0].desc.sample_type_extra, 1u << 5); /* PERF_SAMPLE_CALLCHAIN */
	/* one frame more than kept: a deeper chain is then known to be cut */
	assert_int_equal(f->mh->hooks[0].desc.max_stack, 9);
	assert_int_equal(f->mh->nr_escapes, 1);
	assert_int_equal(f->mh->nr_sfile, 1);
	assert_non_null(f->mh->sfile[0].ops.get_file);
	assert_non_null(f->mh->sfile[0].ops.close);
	assert_int_equal(f->mh->nr_stats, 1);
	fx_free(f);

	/* bare number and the default */
	f = fx_new("16", false);
	assert_int_equal(f->mh->hooks[0].desc.max_stack, 17);
	fx_free(f);
	f = fx_new("", false);
	assert_int_equal(f->mh->hooks[0].desc.max_stack, 65);
	fx_free(f);
}

static void test_bad_args(void **state)
{
	static const char *const bad[] = { "depth=0",  "depth=x",     "depth=100000",
					   "foo=1",    "stacks=1000", "frames=3",
					   "depth=-1", "context=tid", "context=" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mock_host *mh = mock_host_new();

		assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, bad[i]), -EINVAL);
		assert_true(mock_host_log_count(mh, OP_LOG_ERR, bad[i] + 0) ||
			    mock_host_log_contains(mh, OP_LOG_ERR, "expected"));
		assert_int_equal(mh->nr_hooks, 0); /* rolled back */
		mock_host_free(mh);
	}
	{
		struct mock_host *mh = mock_host_new();

		mock_host_set_config_int64(mh, "depth", 0);
		assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, ""), -EINVAL);
		assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "plugins.callgraph.depth"));
		mock_host_free(mh);
	}
}

/* kernel frames, then user frames in libc and the app: markers switch the mode */
static void test_chain_markers_and_arcs(void **state)
{
	struct fx *f = fx_new("depth=16", false);
	const uint64_t chain[] = {
		OP_CONTEXT_KERNEL, K_START + 0x100,    K_START + 0x2000,   OP_CONTEXT_USER,
		LIB_START + 0x50,  APP_START + 0x1234, APP_START + 0x1100,
	};
	struct op_trans_view t = fx_view(f, f->kern, 1);
	const struct mock_emit_rec *r;
	struct op_sample_file *sf;

	(void)state;
	fx_sample(f, OP_CPUMODE_KERNEL, chain, 7);
	assert_int_equal(f->mh->nr_emits, 1);
	r = &f->mh->emits[0];
	assert_int_equal(r->nargs, 1 + 5 * 2);
	assert_int_equal(r->args[0], 5);                     /* 5 frames, not truncated */
	assert_int_equal(r->args[1] & 0xffffffffu, f->kern); /* leaf: kernel */
	assert_true(r->args[1] & (UINT64_C(1) << 32));
	assert_int_equal(r->args[2], 0x100);
	assert_int_equal(r->args[5] & 0xffffffffu, f->lib); /* user part after the marker */
	assert_false(r->args[5] & (UINT64_C(1) << 32));
	assert_int_equal(r->args[6], 0x50 + LIB_PGOFF); /* file offset */
	assert_int_equal(fx_stat(f, "frames_walked"), 5);
	assert_int_equal(fx_stat(f, "frames_unmapped"), 0);
	assert_int_equal(fx_stat(f, "samples_with_chain"), 1);

	assert_int_equal(fx_trans(f, &t), 0);
	assert_int_equal(fx_stat(f, "arcs"), 4);
	/* kernel -> kernel */
	sf = fx_file(f, f->kern, f->kern);
	assert_non_null(sf);
	assert_int_equal(mock_file_count(sf, (UINT64_C(0x2000) << 32) | 0x100), 1);
	/* libc (user) -> kernel: the syscall/interrupt boundary */
	sf = fx_file(f, f->lib, f->kern);
	assert_non_null(sf);
	assert_int_equal(sf->spec.cg_to_is_kernel, 1);
	assert_int_equal(sf->view.in_kernel, 0);
	assert_int_equal(mock_file_count(sf, ((0x50 + LIB_PGOFF) << 32) | 0x2000), 1);
	/* app -> libc: a cross-binary arc, filed under the caller image */
	sf = fx_file(f, f->app, f->lib);
	assert_non_null(sf);
	assert_int_equal(sf->view.app_cookie, f->app);
	assert_int_equal(sf->view.tgid, 42);
	assert_int_equal(mock_file_count(sf, (UINT64_C(0x1234) << 32) | (0x50 + LIB_PGOFF)), 1);
	/* app -> app */
	sf = fx_file(f, f->app, f->app);
	assert_non_null(sf);
	assert_int_equal(mock_file_count(sf, (UINT64_C(0x1100) << 32) | 0x1234), 1);
	assert_int_equal(f->mh->nr_files, 4);

	/* the same chain again: cached files, counts grow */
	fx_sample(f, OP_CPUMODE_KERNEL, chain, 7);
	assert_int_equal(fx_trans(f, &t), 0);
	assert_int_equal(f->mh->nr_files, 4);
	assert_int_equal(mock_file_count(fx_file(f, f->app, f->app),
					 (UINT64_C(0x1100) << 32) | 0x1234),
			 2);

	/* a closed set drops the cache: the next arc asks the host again */
	assert_int_equal(f->mh->sfile[0].ops.close(f->mh->sfile[0].priv, NULL, NULL), 0);
	fx_sample(f, OP_CPUMODE_KERNEL, chain, 7);
	assert_int_equal(fx_trans(f, &t), 0);
	assert_int_equal(f->mh->nr_files, 8);
	fx_free(f);
}

/* keys keep only the low 32 bits of each half; anon frames carry their range */
static void test_arc_key_truncation_and_anon(void **state)
{
	struct fx *f = fx_new("", false);
	const uint64_t chain[] = { OP_CONTEXT_USER, ANON_START + 0x40, APP_START + 0x10 };
	struct op_trans_view t = fx_view(f, f->anon, 0);
	const struct mock_emit_rec *r;
	struct op_sample_file *sf;

	(void)state;
	fx_sample(f, OP_CPUMODE_USER, chain, 3);
	r = &f->mh->emits[0];
	assert_int_equal(r->nargs, 1 + 4 + 2);
	assert_true(r->args[1] & (UINT64_C(1) << 33));
	assert_int_equal(r->args[3], ANON_START);
	assert_int_equal(r->args[4], ANON_START + 0x10000 - 1);
	t.anon_start = ANON_START;
	t.anon_end = ANON_START + 0xffff;
	assert_int_equal(fx_trans(f, &t), 0);
	sf = fx_file(f, f->app, f->anon);
	assert_non_null(sf);
	assert_int_equal(sf->spec.cg_to_anon_start, ANON_START);
	assert_int_equal(sf->spec.cg_to_anon_end, ANON_START + 0xffff);
	assert_int_equal(sf->view.anon_start, 0); /* the caller is not anon */
	assert_int_equal(mock_file_count(sf, (UINT64_C(0x10) << 32) | 0x40), 1);

	/* a big key: hand-made record, the host sees both halves cut to 32 bits */
	{
		const struct mock_reg_escape *e = mock_host_escape(f->mh, "callgraph-chain");
		uint64_t rec[] = { 2, f->app, UINT64_C(0x123456789), f->app, UINT64_C(0xabcdef012) };

		t = fx_view(f, f->app, 0);
		assert_int_equal(e->desc.handler(e->priv, &t, rec, 5), 0);
		sf = fx_file(f, f->app, f->app);
		assert_non_null(sf);
		assert_int_equal(mock_file_count(sf, (UINT64_C(0xabcdef012) << 32) | 0x23456789u),
				 1);
	}
	fx_free(f);
}

static void test_truncation(void **state)
{
	struct fx *f = fx_new("depth=3", false);
	const uint64_t chain[] = { OP_CONTEXT_USER, APP_START + 1, APP_START + 2, APP_START + 3,
				   APP_START + 4 };
	const uint64_t exact[] = { OP_CONTEXT_USER, APP_START + 1, APP_START + 2, APP_START + 3 };

	(void)state;
	fx_sample(f, OP_CPUMODE_USER, chain, 5);
	assert_int_equal(f->mh->emits[0].args[0], 3 | (UINT64_C(1) << 32));
	assert_int_equal(f->mh->emits[0].nargs, 7);
	assert_int_equal(fx_stat(f, "chains_truncated"), 1);
	assert_int_equal(fx_stat(f, "frames_walked"), 3);
	/* exactly depth frames is not a truncation */
	fx_sample(f, OP_CPUMODE_USER, exact, 4);
	assert_int_equal(f->mh->emits[1].args[0], 3);
	assert_int_equal(fx_stat(f, "chains_truncated"), 1);
	fx_free(f);
}

static void test_unmapped_frames(void **state)
{
	struct fx *f = fx_new("", false);
	/* a user pc in no mapping, and a kernel pc under the user marker */
	const uint64_t chain[] = { OP_CONTEXT_USER,  APP_START + 0x10, UINT64_C(0x1000),
				   APP_START + 0x20, K_START + 5,      OP_CONTEXT_GUEST,
				   UINT64_C(0x5000) };
	struct op_trans_view t = fx_view(f, f->app, 0);

	(void)state;
	fx_sample(f, OP_CPUMODE_USER, chain, 7);
	assert_int_equal(fx_stat(f, "frames_unmapped"), 3);
	assert_int_equal(fx_stat(f, "frames_walked"), 5);
	assert_int_equal(f->mh->emits[0].args[0], 5);
	assert_true(f->mh->emits[0].args[3] & (UINT64_C(1) << 34));
	assert_int_equal(f->mh->emits[0].args[4], 0x1000); /* raw pc kept */
	assert_int_equal(fx_trans(f, &t), 0);
	/* arcs 0x1000->leaf, 0x20->0x1000, K->0x20, guest->K touch unmapped frames */
	assert_int_equal(fx_stat(f, "arcs"), 0);
	assert_int_equal(fx_stat(f, "arcs_unmapped"), 4);
	assert_int_equal(f->mh->nr_files, 0);
	fx_free(f);
}

static void test_no_chain_and_bad_records(void **state)
{
	struct fx *f = fx_new("depth=4", false);
	const struct mock_reg_escape *e = mock_host_escape(f->mh, "callgraph-chain");
	struct op_trans_view t = fx_view(f, f->app, 0);
	struct op_perf_sample s = { .size = sizeof(s), .cpumode = OP_CPUMODE_USER, .pid = 1 };
	const uint64_t markers_only[] = { OP_CONTEXT_USER, OP_CONTEXT_KERNEL };
	uint64_t rec[16] = { 0 };

	(void)state;
	assert_int_equal(f->mh->hooks[0].desc.on_sample(f->mh->hooks[0].priv, &s,
							mock_host_emitter(f->mh)),
			 0);
	fx_sample(f, OP_CPUMODE_USER, markers_only, 2);
	assert_int_equal(f->mh->nr_emits, 0);
	assert_int_equal(fx_stat(f, "samples"), 2);
	assert_int_equal(fx_stat(f, "samples_with_chain"), 1);

	assert_int_equal(e->desc.handler(e->priv, &t, rec, 0), -EINVAL);
	rec[0] = 5; /* more frames than the depth */
	assert_int_equal(e->desc.handler(e->priv, &t, rec, 11), -EINVAL);
	rec[0] = 2; /* says 2 frames, carries 1 */
	rec[1] = f->app;
	assert_int_equal(e->desc.handler(e->priv, &t, rec, 3), -EINVAL);
	rec[0] = 1; /* trailing junk */
	assert_int_equal(e->desc.handler(e->priv, &t, rec, 4), -EINVAL);
	rec[0] = 1; /* an anon frame without its range */
	rec[1] = f->anon | (UINT64_C(1) << 33);
	assert_int_equal(e->desc.handler(e->priv, &t, rec, 3), -EINVAL);
	assert_int_equal(fx_stat(f, "bad_records"), 5);

	/* the emitter refuses a long record: counted, not fatal */
	f->mh->emitter.max_args = 2;
	{
		const uint64_t chain[] = { OP_CONTEXT_USER, APP_START + 1, APP_START + 2 };

		fx_sample(f, OP_CPUMODE_USER, chain, 3);
	}
	assert_int_equal(fx_stat(f, "emit_errors"), 1);
	fx_free(f);
}

/* ------------------------------------------------------------------ */
/* the stack table on disk                                             */
/* ------------------------------------------------------------------ */

struct tab {
	void *base;
	size_t len;
	const struct cgs_header2 *h;
	const struct cgs_image *imgs;
	const char *strs;
	const struct cgs_node *nodes;
};

static void tab_open(const struct fx *f, struct tab *t)
{
	char path[128];
	struct cgs_layout2 l;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/" OP_SESSION_CURRENT_PATH "/" OP_SESSION_CG_STACKS_PATH,
		 f->dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	t->len = (size_t)st.st_size;
	t->base = mmap(NULL, t->len, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	assert_true(t->base != MAP_FAILED);
	t->h = t->base;
	assert_memory_equal(t->h->magic, CGS_MAGIC, 8);
	/* version 4 once a stack has a split key, 3 once one has a context, else 2 */
	assert_true(t->h->version == CGS_VERSION4 || t->h->version == CGS_VERSION ||
		    t->h->version == CGS_VERSION2);
	cgs_layout2(t->h->images_max, t->h->strings_size, &l);
	assert_int_equal(t->h->nodes_off, l.nodes_off);
	assert_true(l.nodes_off + (uint64_t)t->h->nodes_max * sizeof(struct cgs_node) <= t->len);
	assert_true(t->h->nodes_used <= t->h->nodes_max);
	t->imgs = (const void *)((const char *)t->base + l.images_off);
	t->strs = (const char *)t->base + l.strings_off;
	t->nodes = (const void *)((const char *)t->base + l.nodes_off);
}

/* leaf-first frames of the stack ending at node @i (parents always come first); its root */
static uint32_t tab_frames(const struct tab *t, uint32_t i, const struct cgs_node **fr,
			   const struct cgs_node **root)
{
	uint32_t n = 0;

	while (t->nodes[i].parent) {
		assert_true(t->nodes[i].parent - 1 < i);
		fr[n++] = &t->nodes[i];
		i = t->nodes[i].parent - 1;
	}
	*root = &t->nodes[i];
	return n;
}

/* the stack of @depth frames whose leaf has key @leaf_key */
static const struct cgs_node *tab_find(const struct tab *t, uint32_t depth, uint64_t leaf_key)
{
	const struct cgs_node *fr[CGS_MAX_DEPTH + 1], *root;

	for (uint32_t i = 0; i < t->h->nodes_used; i++)
		if (t->nodes[i].count && t->nodes[i].parent && t->nodes[i].key == leaf_key &&
		    tab_frames(t, i, fr, &root) == depth)
			return &t->nodes[i];
	return NULL;
}

static void test_stack_table(void **state)
{
	struct fx *f = fx_new("depth=4", true);
	const uint64_t a[] = { OP_CONTEXT_USER, LIB_START + 0x50, APP_START + 0x20,
			       APP_START + 0x10 };
	const uint64_t b[] = { OP_CONTEXT_USER, APP_START + 0x30, APP_START + 0x10 };
	const uint64_t deep[] = { OP_CONTEXT_USER,  APP_START + 0x40, APP_START + 0x41,
				  APP_START + 0x42, APP_START + 0x43, APP_START + 0x44 };
	struct op_trans_view t = fx_view(f, f->lib, 0);
	const struct cgs_node *s, *fr[CGS_MAX_DEPTH + 1], *root;
	struct tab tb;

	(void)state;
	for (int i = 0; i < 3; i++) {
		fx_sample(f, OP_CPUMODE_USER, a, 4);
		assert_int_equal(fx_trans(f, &t), 0);
	}
	t = fx_view(f, f->app, 0);
	fx_sample(f, OP_CPUMODE_USER, b, 3);
	assert_int_equal(fx_trans(f, &t), 0);
	fx_sample(f, OP_CPUMODE_USER, deep, 6);
	assert_int_equal(fx_trans(f, &t), 0);

	/* readable while the plugin still runs: what a crash would leave */
	tab_open(f, &tb);
	assert_int_equal(tb.h->version, CGS_VERSION2); /* no context: older readers read it */
	assert_int_equal(tb.h->stacks_used, 3);
	assert_int_equal(tb.h->total_samples, 5);
	assert_int_equal(tb.h->overflow_samples, 0);
	assert_int_equal(tb.h->images_used, 2); /* app, libc */
	/* a and b share their root and caller 0x10: 1 + 3, + 1 (b's leaf), + 1 + 4 (cut: own root) */
	assert_int_equal(tb.h->nodes_used, 10);
	s = tab_find(&tb, 3, 0x50 + LIB_PGOFF);
	assert_non_null(s);
	assert_int_equal(s->count, 3);
	/* leaf first: libc, then the app frames; image names through the dictionary */
	assert_int_equal(tab_frames(&tb, (uint32_t)(s - tb.nodes), fr, &root), 3);
	{
		const struct cgs_image *li = &tb.imgs[fr[0]->image - 1];
		const struct cgs_image *ai = &tb.imgs[fr[1]->image - 1];

		assert_string_equal(tb.strs + li->name_off, "/usr/lib/libc.so.6");
		assert_string_equal(tb.strs + ai->name_off, "/usr/bin/app");
		assert_int_equal(fr[1]->key, 0x20);
		assert_int_equal(fr[2]->key, 0x10);
		assert_int_equal(fr[1]->count, 0);           /* only leaves count */
		assert_int_equal(root->image, fr[1]->image); /* the application */
		assert_int_equal(root->key, 0);              /* counter 0, not cut */
	}
	s = tab_find(&tb, 4, 0x40);
	assert_non_null(s);
	tab_frames(&tb, (uint32_t)(s - tb.nodes), fr, &root);
	assert_int_equal(root->key >> 32, CGS_STACK_TRUNCATED);
	munmap(tb.base, tb.len);
	assert_int_equal(fx_stat(f, "stacks_distinct"), 3);
	assert_int_equal(fx_stat(f, "stack_nodes"), 10);
	/* the sync handler flushes without complaint */
	assert_int_equal(f->mh->sfile[0].ops.sync(f->mh->sfile[0].priv, NULL, NULL), 0);
	fx_free(f);
}

/* one-frame stacks (no arcs) of leaf key @key, straight into the escape handler */
static void tab_add_leaf(struct fx *f, uint64_t key)
{
	const struct mock_reg_escape *e = mock_host_escape(f->mh, "callgraph-chain");
	struct op_trans_view t = fx_view(f, f->app, 0);
	uint64_t rec[] = { 1, f->app, key };

	assert_int_equal(e->desc.handler(e->priv, &t, rec, 3), 0);
}

/*
 * Many distinct stacks: the table grows (no overflow where a fixed table of
 * 12,288 stacks dropped them) up to max_mb, then counts what does not fit,
 * says so once, still counts stacks it holds, and is cut to its use at close.
 */
static void test_stack_table_grows(void **state)
{
	struct fx *f = fx_new("depth=4,max_mb=4", true);
	struct cgs_layout2 l;
	uint64_t cap, over;
	char path[128];
	struct stat st;
	struct tab tb;

	(void)state;
	cgs_layout2(2048, 256 * 1024, &l);
	cap = ((UINT64_C(4) << 20) - l.nodes_off) / sizeof(struct cgs_node);
	for (uint64_t k = 0; k < 100000; k++)
		tab_add_leaf(f, 0x1000 + k);
	/* the index doubled at 98,304 nodes and still moves its old slots: both are searched */
	for (uint64_t k = 0; k < 100000; k += 997)
		tab_add_leaf(f, 0x1000 + k);
	tab_open(f, &tb);
	assert_int_equal(tb.h->stacks_used, 100000);
	assert_int_equal(tb.h->nodes_used, 100001); /* one root */
	assert_int_equal(tab_find(&tb, 1, 0x1000 + 997)->count, 2);
	assert_int_equal(tb.h->overflow_samples, 0);
	assert_true(tb.h->nodes_max > 65536); /* grew from its first size */
	assert_true(tb.len <= (UINT64_C(4) << 20));
	assert_int_equal(tb.h->budget, UINT64_C(4) << 20);
	munmap(tb.base, tb.len);
	assert_true(fx_stat(f, "stack_table_grows") >= 1);
	assert_int_equal(fx_stat(f, "stacks_overflow"), 0);
	assert_false(mock_host_log_contains(f->mh, OP_LOG_WARN, "budget"));

	/* past the budget: counted, said once, known stacks still count */
	for (uint64_t k = 100000; k < 200000; k++)
		tab_add_leaf(f, 0x1000 + k);
	tab_add_leaf(f, 0x1000);
	tab_open(f, &tb);
	assert_int_equal(tb.h->nodes_used, cap);
	assert_int_equal(tb.h->nodes_max, cap);
	assert_int_equal(tb.len, l.nodes_off + cap * sizeof(struct cgs_node));
	over = 200000 - (cap - 1);
	assert_int_equal(tb.h->overflow_samples, over);
	assert_int_equal(tb.h->total_samples, 200001 + 101);
	assert_int_equal(tab_find(&tb, 1, 0x1000)->count, 3);
	munmap(tb.base, tb.len);
	assert_int_equal(fx_stat(f, "stacks_overflow"), over);
	assert_int_equal(mock_host_log_count(f->mh, OP_LOG_WARN, "budget of 4 MiB"), 1);
	assert_true(mock_host_log_contains(f->mh, OP_LOG_WARN, "max_mb=N"));

	/* a small table is cut to what it uses when the plugin lets it go */
	fx_free(f);
	f = fx_new("depth=4", true);
	for (uint64_t k = 0; k < 1000; k++)
		tab_add_leaf(f, 0x1000 + k);
	snprintf(path, sizeof(path), "%s/" OP_SESSION_CURRENT_PATH "/" OP_SESSION_CG_STACKS_PATH,
		 f->dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, l.nodes_off + 65536 * sizeof(struct cgs_node));
	mock_host_deinit(f->mh);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, l.nodes_off + 1001 * sizeof(struct cgs_node));
	tab_open(f, &tb);
	assert_int_equal(tb.h->nodes_max, 1001);
	assert_int_equal(tb.h->stacks_used, 1000);
	munmap(tb.base, tb.len);
	fx_free(f);
}

/* the writer keeps its own counts: counts scribbled into the file's header steer nothing */
static void test_stack_table_scribbled(void **state)
{
	struct fx *f = fx_new("depth=4", true);
	const uint32_t junk = UINT32_MAX;
	static const size_t offs[] = { offsetof(struct cgs_header2, images_used),
				       offsetof(struct cgs_header2, strings_used),
				       offsetof(struct cgs_header2, nodes_max),
				       offsetof(struct cgs_header2, nodes_used),
				       offsetof(struct cgs_header2, stacks_used) };
	char path[128];
	struct tab tb;
	int fd;

	(void)state;
	for (uint64_t k = 0; k < 10; k++)
		tab_add_leaf(f, 0x1000 + k);
	snprintf(path, sizeof(path), "%s/" OP_SESSION_CURRENT_PATH "/" OP_SESSION_CG_STACKS_PATH,
		 f->dir);
	fd = open(path, O_RDWR);
	assert_true(fd >= 0);
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		assert_int_equal(pwrite(fd, &junk, sizeof(junk), (off_t)offs[i]),
				 (ssize_t)sizeof(junk));
	close(fd);
	for (uint64_t k = 10; k < 20; k++)
		tab_add_leaf(f, 0x1000 + k);
	/* a new image and name land where the writer's counts say */
	{
		const struct mock_reg_escape *e = mock_host_escape(f->mh, "callgraph-chain");
		struct op_trans_view t = fx_view(f, f->lib, 0);
		uint64_t rec[] = { 1, f->lib, 0x77 };

		assert_int_equal(e->desc.handler(e->priv, &t, rec, 3), 0);
	}
	tab_open(f, &tb);
	assert_int_equal(tb.h->nodes_used, 22);
	assert_int_equal(tb.h->images_used, 2);
	assert_int_equal(tb.h->strings_used, sizeof("/usr/bin/app") + sizeof("/usr/lib/libc.so.6"));
	assert_string_equal(tb.strs + tb.imgs[1].name_off, "/usr/lib/libc.so.6");
	assert_int_equal(tb.h->stacks_used, 21);
	assert_non_null(tab_find(&tb, 1, 0x1000 + 19));
	munmap(tb.base, tb.len);
	fx_free(f);
}

/* the version 1 sizes are checked, then ignored with a warning; max_mb is bounded */
static void test_table_args(void **state)
{
	static const char *const bad[] = { "max_mb=0", "max_mb=16385", "max_mb=x", "stacks=1000" };
	struct mock_host *mh;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mh = mock_host_new();
		assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, bad[i]), -EINVAL);
		assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "expected"));
		mock_host_free(mh);
	}
	mh = mock_host_new();
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, "stacks=1024,frames=4096,max_mb=64"),
			 0);
	assert_int_equal(mock_host_log_count(mh, OP_LOG_WARN, "is ignored"), 2);
	assert_true(mock_host_log_contains(mh, OP_LOG_INFO, "stack table up to 64 MiB"));
	mock_host_free(mh);
	mh = mock_host_new();
	mock_host_set_config_int64(mh, "max_mb", 3);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, ""), 0);
	assert_true(mock_host_log_contains(mh, OP_LOG_INFO, "stack table up to 3 MiB"));
	mock_host_free(mh);
	mh = mock_host_new();
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, ""), 0);
	assert_true(mock_host_log_contains(mh, OP_LOG_INFO, "stack table up to 1024 MiB"));
	mock_host_free(mh);
}

/* a daemon restarted on the same session (--append) continues the table */
/*
 * a daemon started again on the session of @f (its plugin state gone, the
 * table on disk): @args, the same images, one sample of @chain seen with
 * @t, with split key @split (NULL: @t's) interned after another string
 */
static void fx_reopen_split(struct fx *f, const char *args, const struct op_trans_view *t,
			    const uint64_t *chain, uint32_t n, const char *split)
{
	struct op_trans_view tv = *t;
	struct mock_host *mh2 = mock_host_new();
	struct op_perf_sample s = { .size = sizeof(s),
				    .cpumode = OP_CPUMODE_USER,
				    .pid = 42,
				    .nr_callchain = n,
				    .callchain = chain };
	const struct mock_reg_escape *e;

	mh2->map_pc_fn = fx_map;
	memcpy(mh2->mappings, f->mh->mappings, sizeof(mh2->mappings));
	mh2->nr_mappings = f->mh->nr_mappings;
	assert_int_equal(mh2->host.cookie_intern(mock_host_ctx(mh2), "/usr/bin/app", false), f->app);
	if (split) {
		mh2->host.cookie_intern(mock_host_ctx(mh2), "/other", false);
		tv.split = (uint32_t)mh2->host.cookie_intern(mock_host_ctx(mh2), split, false);
	}
	mock_host_set_session_dir(mh2, f->dir);
	assert_int_equal(mock_host_init(mh2, &oprofile_ext_v1, args), 0);
	e = mock_host_escape(mh2, "callgraph-chain");
	assert_int_equal(mh2->hooks[0].desc.on_sample(mh2->hooks[0].priv, &s, mock_host_emitter(mh2)),
			 0);
	assert_int_equal(e->desc.handler(e->priv, &tv, mh2->emits[0].args, mh2->emits[0].nargs), 0);
	mock_host_free(mh2);
}

static void fx_reopen_sample(struct fx *f, const char *args, const struct op_trans_view *t,
			     const uint64_t *chain, uint32_t n)
{
	fx_reopen_split(f, args, t, chain, n, NULL);
}

static void test_stack_table_reopen(void **state)
{
	struct fx *f = fx_new("depth=4", true);
	const uint64_t a[] = { OP_CONTEXT_USER, APP_START + 0x20, APP_START + 0x10 };
	struct op_trans_view t = fx_view(f, f->app, 0);
	struct tab tb;

	(void)state;
	fx_sample(f, OP_CPUMODE_USER, a, 3);
	assert_int_equal(fx_trans(f, &t), 0);
	mock_host_deinit(f->mh);

	fx_reopen_sample(f, "depth=4", &t, a, 3);
	tab_open(f, &tb);
	assert_int_equal(tb.h->stacks_used, 1);
	assert_int_equal(tb.h->images_used, 1); /* the image was found again, not added twice */
	assert_int_equal(tab_find(&tb, 2, 0x20)->count, 2);
	munmap(tb.base, tb.len);
	fx_free(f);
}

/* a session reset removes the table: the plugin starts a new one; a failed open is retried */
/*
 * context=thread+cpu: a context node (tgid/tid, cpu + 1) under the root of
 * each stack; the reader hands it out as the stack's context; a version 2
 * table is continued as version 3 with its stacks kept
 */
static void test_stack_context(void **state)
{
	struct fx *f = fx_new("depth=4,context=thread+cpu", true);
	const uint64_t a[] = { OP_CONTEXT_USER, APP_START + 0x20, APP_START + 0x10 };
	struct op_trans_view t = fx_view(f, f->app, 0);
	const struct cgs_node *s, *fr[CGS_MAX_DEPTH + 1], *root;
	char path[256];
	uint32_t two = CGS_VERSION2;
	struct tab tb;
	int fd;

	(void)state;
	assert_true(mock_host_log_contains(f->mh, OP_LOG_INFO, "stack context: thread+cpu"));
	t.tid = 43;
	t.cpu = 1;
	for (int i = 0; i < 2; i++) {
		fx_sample(f, OP_CPUMODE_USER, a, 3);
		assert_int_equal(fx_trans(f, &t), 0);
	}
	t.tid = 44;
	t.cpu = 0;
	fx_sample(f, OP_CPUMODE_USER, a, 3);
	assert_int_equal(fx_trans(f, &t), 0);
	tab_open(f, &tb);
	assert_int_equal(tb.h->version, CGS_VERSION);
	/* one root, two context nodes, two frames under each */
	assert_int_equal(tb.h->nodes_used, 1 + 2 * 3);
	assert_int_equal(tb.h->stacks_used, 2);
	for (int k = 0; k < 2; k++) {
		s = tab_find(&tb, 3, 0x20);
		assert_non_null(s);
		s = NULL;
		for (uint32_t i = 0; i < tb.h->nodes_used; i++)
			if (tb.nodes[i].count == (k ? 1u : 2u))
				s = &tb.nodes[i];
		assert_non_null(s);
		assert_int_equal(tab_frames(&tb, (uint32_t)(s - tb.nodes), fr, &root), 3);
		assert_int_equal(root->key >> 32, CGS_STACK_CONTEXT);
		assert_int_equal(fr[2]->image, CGS_CTX_IMAGE | (k ? 1u : 2u));
		assert_int_equal(fr[2]->key, 42 | (uint64_t)(k ? 44 : 43) << 32);
		assert_int_equal(fr[2]->count, 0);
		assert_int_equal(fr[0]->key, 0x20);
	}
	munmap(tb.base, tb.len);
	mock_host_deinit(f->mh);

	/* an older daemon's table (version 2), continued with context=thread: one table */
	snprintf(path, sizeof(path), "%s/" OP_SESSION_CURRENT_PATH "/" OP_SESSION_CG_STACKS_PATH,
		 f->dir);
	fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, &two, sizeof(two), offsetof(struct cgs_header2, version)),
			 sizeof(two));
	close(fd);
	fx_reopen_sample(f, "depth=4,context=thread", &t, a, 3);
	tab_open(f, &tb);
	assert_int_equal(tb.h->version, CGS_VERSION); /* version 3 again */
	assert_int_equal(tb.h->stacks_used, 3);
	/* the new stack's context: thread 42/44, no cpu */
	s = NULL;
	for (uint32_t i = 0; i < tb.h->nodes_used; i++)
		if ((tb.nodes[i].image & CGS_CTX_IMAGE) && tb.nodes[i].image == CGS_CTX_IMAGE)
			s = &tb.nodes[i];
	assert_non_null(s);
	assert_int_equal(s->key, 42 | (uint64_t)44 << 32);
	munmap(tb.base, tb.len);
	fx_free(f);
}

/* the split key a split node names, checked against the strings area */
static const char *tab_split(const struct tab *t, const struct cgs_node *n)
{
	uint32_t off = (uint32_t)n->key, len = (uint32_t)(n->key >> 32);

	assert_int_equal(n->image, CGS_SPLIT_IMAGE);
	assert_true(len && off + len < t->h->strings_used);
	assert_int_equal(t->strs[off + len], '\0');
	assert_int_equal(strlen(t->strs + off), len);
	return t->strs + off;
}

/* the split nodes of the table, how many, the last in *@last */
static unsigned tab_splits(const struct tab *t, const struct cgs_node **last)
{
	unsigned n = 0;

	for (uint32_t i = 0; i < t->h->nodes_used; i++)
		if (t->nodes[i].image == CGS_SPLIT_IMAGE) {
			*last = &t->nodes[i];
			n++;
		}
	return n;
}

/*
 * --separate=cgroup (the view's split key): a split node under the root
 * names each process's key, written once per table (version 4 only then);
 * a process without a key keeps a root without one; with context= the
 * context node hangs under the split node; arc files of two keys are two;
 * a continued table finds its keys again by their strings
 */
static void test_stack_split(void **state)
{
	struct fx *f = fx_new("depth=4", true);
	const uint64_t a[] = { OP_CONTEXT_USER, APP_START + 0x20, APP_START + 0x10 };
	struct op_trans_view t = fx_view(f, f->app, 0);
	op_cookie_t ka = f->mh->host.cookie_intern(mock_host_ctx(f->mh), "/A", false);
	op_cookie_t kb = f->mh->host.cookie_intern(mock_host_ctx(f->mh), "/B/c.scope", false);
	const struct cgs_node *s, *fr[CGS_MAX_DEPTH + 1], *root, *sp = NULL;
	uint32_t strings;
	struct tab tb;

	(void)state;
	/* no key yet: version 2, as before */
	fx_sample(f, OP_CPUMODE_USER, a, 3);
	assert_int_equal(fx_trans(f, &t), 0);
	tab_open(f, &tb);
	assert_int_equal(tb.h->version, CGS_VERSION2);
	strings = tb.h->strings_used;
	munmap(tb.base, tb.len);
	t.split = (uint32_t)ka;
	for (int i = 0; i < 2; i++) {
		fx_sample(f, OP_CPUMODE_USER, a, 3);
		assert_int_equal(fx_trans(f, &t), 0);
	}
	t.split = (uint32_t)kb;
	fx_sample(f, OP_CPUMODE_USER, a, 3);
	assert_int_equal(fx_trans(f, &t), 0);
	/* two keys, two arc files of the same arc: the files follow the split */
	{
		unsigned narc = 0;

		for (size_t i = 0; i < f->mh->nr_files; i++)
			if (f->mh->files[i]->spec.is_cg)
				narc += f->mh->files[i]->view.split == (uint32_t)ka ||
					f->mh->files[i]->view.split == (uint32_t)kb;
		assert_int_equal(narc, 2);
	}
	tab_open(f, &tb);
	assert_int_equal(tb.h->version, CGS_VERSION4);
	assert_int_equal(tb.h->stacks_used, 3);
	/* each key's string once, beside the image names */
	assert_int_equal(tb.h->strings_used, strings + sizeof("/A") + sizeof("/B/c.scope"));
	assert_int_equal(tab_splits(&tb, &sp), 2);
	for (uint32_t i = 0; i < tb.h->nodes_used; i++) {
		if (!tb.nodes[i].count)
			continue;
		s = &tb.nodes[i];
		assert_int_equal(tab_frames(&tb, i, fr, &root), s->count == 1 && i < 3 ? 2 : 3);
		if (tab_frames(&tb, i, fr, &root) == 2) {
			assert_int_equal(root->key >> 32, 0); /* the stack without a key */
			continue;
		}
		assert_int_equal(root->key >> 32, CGS_STACK_SPLIT);
		assert_string_equal(tab_split(&tb, fr[2]), s->count == 2 ? "/A" : "/B/c.scope");
		assert_int_equal(fr[2]->count, 0);
		assert_int_equal(fr[0]->key, 0x20);
	}
	munmap(tb.base, tb.len);
	assert_int_equal(fx_stat(f, "stacks_split"), 3);
	mock_host_deinit(f->mh);

	/* continued with context=thread: "/A" (another cookie now) found again, not written twice */
	fx_reopen_split(f, "depth=4,context=thread", &t, a, 3, "/A");
	tab_open(f, &tb);
	assert_int_equal(tb.h->version, CGS_VERSION4); /* not back to 3 */
	assert_int_equal(tb.h->strings_used, strings + sizeof("/A") + sizeof("/B/c.scope"));
	assert_int_equal(tb.h->stacks_used, 4);
	/* a new root (split + context) with its own split node for "/A" */
	assert_int_equal(tab_splits(&tb, &sp), 3);
	assert_string_equal(tab_split(&tb, sp), "/A");
	s = &tb.nodes[tb.h->nodes_used - 1];
	assert_int_equal(s->count, 1);
	assert_int_equal(tab_frames(&tb, tb.h->nodes_used - 1, fr, &root), 4);
	assert_int_equal(root->key >> 32, CGS_STACK_SPLIT | CGS_STACK_CONTEXT);
	assert_ptr_equal(fr[3], sp);
	assert_int_equal(fr[2]->image, CGS_CTX_IMAGE);
	assert_int_equal(fr[2]->key, 42 | (uint64_t)42 << 32);
	munmap(tb.base, tb.len);
	fx_free(f);
}

static void test_stack_table_reset(void **state)
{
	struct fx *f = fx_new("depth=4", true);
	const uint64_t a[] = { OP_CONTEXT_USER, APP_START + 0x20, APP_START + 0x10 };
	const uint64_t b[] = { OP_CONTEXT_USER, APP_START + 0x30, APP_START + 0x10 };
	struct op_trans_view t = fx_view(f, f->app, 0);
	const struct op_sfile_ops *ops = &f->mh->sfile[0].ops;
	void *priv = f->mh->sfile[0].priv;
	char cmd[256];
	struct tab tb;

	(void)state;
	/* samples/current missing: no table, an error, arcs still logged */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/samples/current'", f->dir);
	assert_int_equal(system(cmd), 0);
	fx_sample(f, OP_CPUMODE_USER, a, 3);
	assert_int_equal(fx_trans(f, &t), 0);
	assert_true(mock_host_log_contains(f->mh, OP_LOG_ERR, "cannot create the stack table"));
	assert_int_equal(fx_stat(f, "arcs"), 1);
	/* the directory comes back: the next sync lets the next stack open it */
	snprintf(cmd, sizeof(cmd), "mkdir '%s/samples/current'", f->dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ops->sync(priv, NULL, NULL), 0);
	fx_sample(f, OP_CPUMODE_USER, a, 3);
	assert_int_equal(fx_trans(f, &t), 0);
	tab_open(f, &tb);
	assert_int_equal(tb.h->stacks_used, 1);
	munmap(tb.base, tb.len);

	/* reset: current/ removed and made anew, then the sets are closed (SIGHUP) */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/samples/current' && mkdir '%s/samples/current'",
		 f->dir, f->dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ops->close(priv, NULL, NULL), 0);
	fx_sample(f, OP_CPUMODE_USER, b, 3);
	assert_int_equal(fx_trans(f, &t), 0);
	assert_true(mock_host_log_contains(f->mh, OP_LOG_INFO, "starting a new stack table"));
	tab_open(f, &tb);
	assert_int_equal(tb.h->stacks_used, 1);
	assert_int_equal(tb.h->total_samples, 1);
	assert_int_equal(tb.h->images_used, 1); /* indexes of the old table are not reused */
	assert_non_null(tab_find(&tb, 2, 0x30));
	assert_int_equal(tb.nodes[0].parent, 0); /* the root: the application is image 1 */
	assert_int_equal(tb.nodes[0].image, 1);
	munmap(tb.base, tb.len);
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registrations),
		cmocka_unit_test(test_stack_split),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_chain_markers_and_arcs),
		cmocka_unit_test(test_arc_key_truncation_and_anon),
		cmocka_unit_test(test_truncation),
		cmocka_unit_test(test_unmapped_frames),
		cmocka_unit_test(test_no_chain_and_bad_records),
		cmocka_unit_test(test_stack_table),
		cmocka_unit_test(test_stack_table_grows),
		cmocka_unit_test(test_stack_table_scribbled),
		cmocka_unit_test(test_table_args),
		cmocka_unit_test(test_stack_table_reopen),
		cmocka_unit_test(test_stack_table_reset),
		cmocka_unit_test(test_stack_context),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
