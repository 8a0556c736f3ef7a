/*
 * mock_host.c - a recording implementation of every struct op_host service,
 * for unit tests of real plugins without oprofiled (see mock_host.h).
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock_host.h"

static void *mock_xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n, sz);

	if (!p) {
		fprintf(stderr, "mock_host: out of memory\n");
		abort(); /* test infrastructure only */
	}
	return p;
}

static char *mock_xstrdup(const char *s)
{
	size_t len = strlen(s) + 1;
	char *p = mock_xcalloc(1, len);

	memcpy(p, s, len);
	return p;
}

/* the reader's side of the size rule: copy min(size, sizeof) into a zeroed struct */
#define MOCK_COPY_SIZED(dst, src)                                                      \
	do {                                                                           \
		size_t n_ = (src)->size < sizeof(*(dst)) ? (src)->size : sizeof(*(dst)); \
		memset((dst), 0, sizeof(*(dst)));                                      \
		memcpy((dst), (src), n_);                                              \
	} while (0)

/* ------------------------------------------------------------------ */
/* logging                                                             */
/* ------------------------------------------------------------------ */

static void mock_vlog(op_ext_t *ctx, enum op_log_level level, const char *fmt, va_list ap)
{
	struct mock_host *mh = ctx->mh;
	char buf[MOCK_LOG_LEN];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	mh->nr_logs_total++;
	if ((unsigned)level < 4)
		mh->nr_logs_by_level[level]++;
	if (mh->echo_logs)
		fprintf(stderr, "mock_host log[%d]: %s\n", (int)level, buf);
	if (mh->nr_logs >= MOCK_MAX_LOGS) {
		mh->overflows++;
		return;
	}
	mh->logs[mh->nr_logs].level = level;
	memcpy(mh->logs[mh->nr_logs].msg, buf, sizeof(buf));
	mh->nr_logs++;
}

static void mock_log(op_ext_t *ctx, enum op_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	mock_vlog(ctx, level, fmt, ap);
	va_end(ap);
}

size_t mock_host_log_count(const struct mock_host *mh, int level, const char *needle)
{
	size_t i, n = 0;

	for (i = 0; i < mh->nr_logs; i++) {
		if (level >= 0 && (int)mh->logs[i].level != level)
			continue;
		if (!needle || strstr(mh->logs[i].msg, needle))
			n++;
	}
	return n;
}

bool mock_host_log_contains(const struct mock_host *mh, int level, const char *needle)
{
	return mock_host_log_count(mh, level, needle) > 0;
}

void mock_host_log_clear(struct mock_host *mh)
{
	mh->nr_logs = 0;
	mh->nr_logs_total = 0;
	memset(mh->nr_logs_by_level, 0, sizeof(mh->nr_logs_by_level));
}

/* ------------------------------------------------------------------ */
/* configuration                                                       */
/* ------------------------------------------------------------------ */

static struct mock_config *mock_config_slot(struct mock_host *mh, const char *key)
{
	size_t i;

	for (i = 0; i < mh->nr_config; i++)
		if (!strcmp(mh->config[i].key, key)) {
			free(mh->config[i].s);
			mh->config[i].s = NULL;
			return &mh->config[i];
		}
	if (mh->nr_config >= MOCK_MAX_CONFIG) {
		fprintf(stderr, "mock_host: more than %d config keys\n", MOCK_MAX_CONFIG);
		abort();
	}
	mh->config[mh->nr_config].key = mock_xstrdup(key);
	return &mh->config[mh->nr_config++];
}

void mock_host_set_config_string(struct mock_host *mh, const char *key, const char *val)
{
	struct mock_config *c = mock_config_slot(mh, key);

	c->type = MOCK_CFG_STRING;
	c->s = mock_xstrdup(val);
}

void mock_host_set_config_int64(struct mock_host *mh, const char *key, int64_t val)
{
	struct mock_config *c = mock_config_slot(mh, key);

	c->type = MOCK_CFG_INT64;
	c->i = val;
}

void mock_host_set_config_bool(struct mock_host *mh, const char *key, bool val)
{
	struct mock_config *c = mock_config_slot(mh, key);

	c->type = MOCK_CFG_BOOL;
	c->b = val;
}

static const char *mock_type_name(enum mock_config_type t)
{
	return t == MOCK_CFG_STRING ? "string" : t == MOCK_CFG_INT64 ? "integer" : "boolean";
}

static int mock_config_get(op_ext_t *ctx, const char *key, enum mock_config_type want,
			   const struct mock_config **out)
{
	struct mock_host *mh = ctx->mh;
	size_t i;

	for (i = 0; i < mh->nr_config; i++) {
		if (strcmp(mh->config[i].key, key))
			continue;
		if (mh->config[i].type != want) {
			mock_log(ctx, OP_LOG_ERR, "mock.conf:1: plugins.%s.%s: expected type %s, found %s",
				 mh->desc && mh->desc->name ? mh->desc->name : "?", key,
				 mock_type_name(want), mock_type_name(mh->config[i].type));
			return -EINVAL;
		}
		*out = &mh->config[i];
		return 0;
	}
	return -ENOENT;
}

static int mock_config_string(op_ext_t *ctx, const char *key, const char **out)
{
	const struct mock_config *c;
	int rc = mock_config_get(ctx, key, MOCK_CFG_STRING, &c);

	if (!rc)
		*out = c->s;
	return rc;
}

static int mock_config_int64(op_ext_t *ctx, const char *key, int64_t *out)
{
	const struct mock_config *c;
	int rc = mock_config_get(ctx, key, MOCK_CFG_INT64, &c);

	if (!rc)
		*out = c->i;
	return rc;
}

static int mock_config_bool(op_ext_t *ctx, const char *key, bool *out)
{
	const struct mock_config *c;
	int rc = mock_config_get(ctx, key, MOCK_CFG_BOOL, &c);

	if (!rc)
		*out = c->b;
	return rc;
}

/* ------------------------------------------------------------------ */
/* registrations                                                       */
/* ------------------------------------------------------------------ */

static bool mock_full(struct mock_host *mh, size_t n)
{
	if (n < MOCK_MAX_REG)
		return false;
	mh->overflows++;
	return true;
}

static int mock_register_stats(op_ext_t *ctx, const struct op_stats_ops *ops, void *priv)
{
	struct mock_host *mh = ctx->mh;

	if (!ops || !ops->size || !ops->print_stats)
		return -EINVAL;
	if (mock_full(mh, mh->nr_stats))
		return -ENOSPC;
	MOCK_COPY_SIZED(&mh->stats[mh->nr_stats].ops, ops);
	mh->stats[mh->nr_stats++].priv = priv;
	return 0;
}

static int mock_register_sfile(op_ext_t *ctx, const struct op_sfile_ops *ops, void *priv)
{
	struct mock_host *mh = ctx->mh;

	if (!ops || !ops->size)
		return -EINVAL;
	if (mock_full(mh, mh->nr_sfile))
		return -ENOSPC;
	MOCK_COPY_SIZED(&mh->sfile[mh->nr_sfile].ops, ops);
	mh->sfile[mh->nr_sfile++].priv = priv;
	return 0;
}

static int mock_register_escape(op_ext_t *ctx, const struct op_escape_desc *desc, void *priv,
				uint32_t *code_out)
{
	struct mock_host *mh = ctx->mh;
	struct mock_reg_escape *e;
	uint32_t code;
	size_t i;

	if (!desc || !desc->size || !desc->name || !desc->handler ||
	    desc->min_args > desc->max_args)
		return -EINVAL;
	if (desc->code && (desc->code < MOCK_ESCAPE_FIRST || desc->code >= MOCK_ESCAPE_MAX))
		return -EINVAL;
	for (i = 0; i < mh->nr_escapes; i++)
		if (!strcmp(mh->escapes[i].name, desc->name) || mh->escapes[i].code == desc->code)
			return -EEXIST;
	if (mock_full(mh, mh->nr_escapes))
		return -ENOSPC;
	code = desc->code;
	if (!code) {
		code = MOCK_ESCAPE_FIRST;
		for (i = 0; i < mh->nr_escapes; i++)
			if (mh->escapes[i].code >= code)
				code = mh->escapes[i].code + 1;
		if (code >= MOCK_ESCAPE_MAX)
			return -ENOSPC;
	}
	e = &mh->escapes[mh->nr_escapes++];
	MOCK_COPY_SIZED(&e->desc, desc);
	e->name = mock_xstrdup(desc->name);
	e->desc.name = e->name;
	e->desc.code = code;
	e->priv = priv;
	e->code = code;
	if (code_out)
		*code_out = code;
	return 0;
}

static int mock_register_model(op_ext_t *ctx, const struct op_model_desc *desc, void *priv)
{
	struct mock_host *mh = ctx->mh;
	size_t i;

	if (!desc || !desc->size || !desc->name || !desc->detect)
		return -EINVAL;
	for (i = 0; i < mh->nr_models; i++)
		if (!strcmp(mh->models[i].desc.name, desc->name))
			return -EEXIST;
	if (mock_full(mh, mh->nr_models))
		return -ENOSPC;
	MOCK_COPY_SIZED(&mh->models[mh->nr_models].desc, desc);
	mh->models[mh->nr_models++].priv = priv;
	return 0;
}

static int mock_register_source(op_ext_t *ctx, const struct op_source_desc *desc, void *priv,
				uint32_t *source_out)
{
	struct mock_host *mh = ctx->mh;
	struct mock_reg_source *s;

	if (!desc || !desc->size || !desc->on_sample)
		return -EINVAL;
	if (mock_full(mh, mh->nr_sources))
		return -ENOSPC;
	s = &mh->sources[mh->nr_sources];
	MOCK_COPY_SIZED(&s->desc, desc);
	/* SDK 1.1: the attr by pointer, as the loader copies it */
	if (s->desc.attr_ptr) {
		MOCK_COPY_SIZED(&s->desc.attr, s->desc.attr_ptr);
		s->desc.attr_ptr = NULL;
	}
	s->priv = priv;
	/* source 0 is the core's own event */
	s->index = (uint32_t)mh->nr_sources + 1;
	mh->nr_sources++;
	if (source_out)
		*source_out = s->index;
	return 0;
}

static int mock_register_hook(op_ext_t *ctx, const struct op_sample_hook_desc *desc, void *priv)
{
	struct mock_host *mh = ctx->mh;

	if (!desc || !desc->size || !desc->on_sample)
		return -EINVAL;
	if (mock_full(mh, mh->nr_hooks))
		return -ENOSPC;
	MOCK_COPY_SIZED(&mh->hooks[mh->nr_hooks].desc, desc);
	mh->hooks[mh->nr_hooks++].priv = priv;
	return 0;
}

static int mock_register_kernel(op_ext_t *ctx, const struct op_kernel_ops *ops, void *priv)
{
	struct mock_host *mh = ctx->mh;

	if (!ops || !ops->size || !ops->resolve)
		return -EINVAL;
	if (mh->has_kernel)
		return -EEXIST;
	MOCK_COPY_SIZED(&mh->kernel_ops, ops);
	mh->kernel_priv = priv;
	mh->has_kernel = true;
	return 0;
}

static int mock_register_counter(op_ext_t *ctx, const struct op_counter_desc *desc,
				 uint32_t *counter_out)
{
	struct mock_host *mh = ctx->mh;
	struct mock_reg_counter *c;
	size_t i;

	if (!desc || !desc->size || !desc->name || !*desc->name ||
	    strpbrk(desc->name, "./"))
		return -EINVAL;
	for (i = 0; i < mh->nr_counters; i++)
		if (!strcmp(mh->counters[i].name, desc->name))
			return -EEXIST;
	if (mock_full(mh, mh->nr_counters))
		return -ENOSPC;
	c = &mh->counters[mh->nr_counters];
	MOCK_COPY_SIZED(&c->desc, desc);
	c->name = mock_xstrdup(desc->name);
	c->desc.name = c->name;
	c->counter = MOCK_COUNTER_BASE + (uint32_t)mh->nr_counters;
	mh->nr_counters++;
	if (counter_out)
		*counter_out = c->counter;
	return 0;
}

/* ------------------------------------------------------------------ */
/* buffer sync side                                                    */
/* ------------------------------------------------------------------ */

void mock_host_add_mapping(struct mock_host *mh, const struct mock_mapping *m)
{
	if (mh->nr_mappings >= MOCK_MAX_MAPPINGS) {
		mh->overflows++;
		return;
	}
	mh->mappings[mh->nr_mappings++] = *m;
}

static int mock_set_user_data(op_ext_t *ctx, const struct op_user_data *ud)
{
	struct mock_host *mh = ctx->mh;

	if (!mh->in_init)
		return -EPERM;
	if (!ud || ud->size < sizeof(uint32_t) || ud->size > sizeof(*ud))
		return -EINVAL;
	if (mh->has_ud)
		return -EEXIST;
	MOCK_COPY_SIZED(&mh->ud, ud);
	mh->has_ud = true;
	return 0;
}

static void mock_free_user_data(struct mock_host *mh)
{
	if (mh->has_ud && mh->ud.free_func) {
		mh->ud.free_func(mh->ud.data);
		mh->nr_ud_freed++;
	}
	mh->has_ud = false;
}

static int mock_map_pc(op_ext_t *ctx, uint32_t pid, uint16_t cpumode, uint64_t pc,
		       struct op_pc_map *out)
{
	struct mock_host *mh = ctx->mh;
	size_t i;

	mh->nr_map_pc++;
	if (mh->map_pc_fn)
		return mh->map_pc_fn(mh, pid, cpumode, pc, out);
	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->in_kernel = -1;
	for (i = 0; i < mh->nr_mappings; i++) {
		const struct mock_mapping *m = &mh->mappings[i];

		if ((m->pid && m->pid != pid) || pc < m->start || pc >= m->end)
			continue;
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

static int mock_emit(op_emit_t *w, uint32_t code, const uint64_t *args, uint32_t nargs)
{
	struct mock_host *mh = w->mh;
	struct mock_emit_rec *r;

	if (nargs > w->max_args || nargs > MOCK_MAX_EMIT_ARGS)
		return -ENOSPC;
	if (mh->nr_emits >= MOCK_MAX_EMITS) {
		mh->overflows++;
		return -ENOSPC;
	}
	r = &mh->emits[mh->nr_emits++];
	r->code = code;
	r->nargs = nargs;
	if (nargs)
		memcpy(r->args, args, nargs * sizeof(*args));
	return 0;
}

op_emit_t *mock_host_emitter(struct mock_host *mh)
{
	return &mh->emitter;
}

/* ------------------------------------------------------------------ */
/* trans side                                                          */
/* ------------------------------------------------------------------ */

static int mock_log_sample(op_ext_t *ctx, const struct op_trans_view *t, uint32_t counter,
			   uint64_t key, uint32_t count)
{
	struct mock_host *mh = ctx->mh;
	struct mock_logged *l;

	if (mh->nr_logged >= MOCK_MAX_LOGGED) {
		mh->overflows++;
		return -ENOSPC;
	}
	l = &mh->logged[mh->nr_logged++];
	l->counter = counter;
	l->key = key;
	l->count = count;
	if (t)
		MOCK_COPY_SIZED(&l->view, t);
	else
		memset(&l->view, 0, sizeof(l->view));
	return 0;
}

static op_sample_file_t *mock_sample_file_open(op_ext_t *ctx, op_sfile_t *sf,
					       const struct op_trans_view *t,
					       const struct op_file_spec *spec)
{
	struct mock_host *mh = ctx->mh;
	struct op_sample_file *f;

	if (!spec || !spec->size) {
		mock_log(ctx, OP_LOG_ERR, "mock_host: sample_file_open without a spec");
		return NULL;
	}
	if (mh->nr_files >= MOCK_MAX_FILES) {
		mh->overflows++;
		mock_log(ctx, OP_LOG_ERR, "mock_host: more than %d sample files", MOCK_MAX_FILES);
		return NULL;
	}
	f = mock_xcalloc(1, sizeof(*f));
	f->mh = mh;
	f->sf = sf;
	MOCK_COPY_SIZED(&f->spec, spec);
	if (t)
		MOCK_COPY_SIZED(&f->view, t);
	mh->files[mh->nr_files++] = f;
	return f;
}

static int mock_sample_file_add(op_sample_file_t *f, uint64_t key, uint32_t count)
{
	size_t i;

	if (f->closed)
		return -EBADF;
	f->mh->nr_file_adds++;
	for (i = 0; i < f->nr_keys; i++)
		if (f->keys[i].key == key)
			break;
	if (i == f->nr_keys) {
		if (f->nr_keys >= MOCK_MAX_FILE_KEYS) {
			f->mh->overflows++;
			return -ENOSPC;
		}
		f->keys[f->nr_keys].key = key;
		f->keys[f->nr_keys++].count = 0;
	}
	/* saturate, never wrap (the host contract) */
	if (f->keys[i].count > UINT32_MAX - count)
		f->keys[i].count = UINT32_MAX;
	else
		f->keys[i].count += count;
	return 0;
}

static int mock_sample_file_sync(op_sample_file_t *f)
{
	if (f->closed)
		return -EBADF;
	f->syncs++;
	return 0;
}

static void mock_sample_file_close(op_sample_file_t *f)
{
	/* kept for inspection; freed by mock_host_free */
	if (f)
		f->closed = true;
}

uint32_t mock_file_count(const struct op_sample_file *f, uint64_t key)
{
	size_t i;

	for (i = 0; i < f->nr_keys; i++)
		if (f->keys[i].key == key)
			return f->keys[i].count;
	return 0;
}

/* ------------------------------------------------------------------ */
/* misc                                                                */
/* ------------------------------------------------------------------ */

static const char *mock_cookie_path(op_ext_t *ctx, op_cookie_t cookie)
{
	return mock_host_cookie_path(ctx->mh, cookie);
}

static op_cookie_t mock_cookie_intern(op_ext_t *ctx, const char *path, bool is_kernel)
{
	struct mock_host *mh = ctx->mh;
	size_t i;

	if (!path || !*path)
		return 0;
	for (i = 0; i < mh->nr_cookies; i++)
		if (mh->cookies[i].is_kernel == is_kernel && !strcmp(mh->cookies[i].path, path))
			return (op_cookie_t)(i + 1);
	if (mh->nr_cookies >= MOCK_MAX_COOKIES) {
		mh->overflows++;
		return 0;
	}
	mh->cookies[mh->nr_cookies].path = mock_xstrdup(path);
	mh->cookies[mh->nr_cookies].is_kernel = is_kernel;
	return (op_cookie_t)++mh->nr_cookies;
}

const char *mock_host_cookie_path(const struct mock_host *mh, op_cookie_t c)
{
	if (!c || c > mh->nr_cookies)
		return NULL;
	return mh->cookies[c - 1].path;
}

op_cookie_t mock_host_cookie_of(const struct mock_host *mh, const char *path)
{
	size_t i;

	for (i = 0; i < mh->nr_cookies; i++)
		if (!strcmp(mh->cookies[i].path, path))
			return (op_cookie_t)(i + 1);
	return 0;
}

static const char *mock_session_dir(op_ext_t *ctx)
{
	return ctx->mh->session_dir;
}

static const char *mock_proc_root(op_ext_t *ctx)
{
	return ctx->mh->proc_root;
}

void mock_host_set_session_dir(struct mock_host *mh, const char *dir)
{
	free(mh->session_dir);
	mh->session_dir = dir ? mock_xstrdup(dir) : NULL;
}

void mock_host_set_proc_root(struct mock_host *mh, const char *dir)
{
	free(mh->proc_root);
	mh->proc_root = dir ? mock_xstrdup(dir) : NULL;
}

op_ext_t *mock_host_ctx(struct mock_host *mh)
{
	return &mh->ctx;
}

const struct mock_reg_escape *mock_host_escape(const struct mock_host *mh, const char *name)
{
	size_t i;

	for (i = 0; i < mh->nr_escapes; i++)
		if (!strcmp(mh->escapes[i].name, name))
			return &mh->escapes[i];
	return NULL;
}

/* ------------------------------------------------------------------ */
/* stats                                                               */
/* ------------------------------------------------------------------ */

static void mock_sink_counter(const struct op_stats_sink *sink, const char *name, uint64_t value)
{
	struct mock_host *mh = sink->opaque;
	struct mock_stat *s;

	if (mh->nr_stat_values >= MOCK_MAX_STATS) {
		mh->overflows++;
		return;
	}
	s = &mh->stat_values[mh->nr_stat_values++];
	snprintf(s->name, sizeof(s->name), "%s", name ? name : "(null)");
	s->value = value;
}

static void mock_sink_text(const struct op_stats_sink *sink, const char *line)
{
	struct mock_host *mh = sink->opaque;
	size_t old = mh->stat_text ? strlen(mh->stat_text) : 0;
	size_t add = strlen(line ? line : "");
	char *p = mock_xcalloc(1, old + add + 2);

	if (old)
		memcpy(p, mh->stat_text, old);
	memcpy(p + old, line ? line : "", add);
	p[old + add] = '\n';
	free(mh->stat_text);
	mh->stat_text = p;
}

void mock_host_print_stats(struct mock_host *mh)
{
	struct op_stats_sink sink = {
		.size = sizeof(sink),
		.opaque = mh,
		.counter = mock_sink_counter,
		.text = mock_sink_text,
	};
	size_t i;

	mh->nr_stat_values = 0;
	free(mh->stat_text);
	mh->stat_text = NULL;
	for (i = 0; i < mh->nr_stats; i++)
		mh->stats[i].ops.print_stats(mh->stats[i].priv, &sink);
}

bool mock_host_stat(const struct mock_host *mh, const char *name, uint64_t *value)
{
	size_t i;

	for (i = 0; i < mh->nr_stat_values; i++)
		if (!strcmp(mh->stat_values[i].name, name)) {
			if (value)
				*value = mh->stat_values[i].value;
			return true;
		}
	return false;
}

/* ------------------------------------------------------------------ */
/* life cycle                                                          */
/* ------------------------------------------------------------------ */

struct mock_host *mock_host_new(void)
{
	struct mock_host *mh = mock_xcalloc(1, sizeof(*mh));
	const char *v = getenv("MOCK_HOST_VERBOSE");

	mh->host.size = sizeof(mh->host);
	mh->host.abi_major = OP_SDK_MAJOR;
	mh->host.abi_minor = OP_SDK_MINOR;
	mh->host.log = mock_log;
	mh->host.vlog = mock_vlog;
	mh->host.config_string = mock_config_string;
	mh->host.config_int64 = mock_config_int64;
	mh->host.config_bool = mock_config_bool;
	mh->host.register_stats = mock_register_stats;
	mh->host.register_sfile_handlers = mock_register_sfile;
	mh->host.register_escape = mock_register_escape;
	mh->host.register_model = mock_register_model;
	mh->host.register_source = mock_register_source;
	mh->host.register_sample_hook = mock_register_hook;
	mh->host.register_kernel = mock_register_kernel;
	mh->host.register_counter = mock_register_counter;
	mh->host.map_pc = mock_map_pc;
	mh->host.emit = mock_emit;
	mh->host.log_sample = mock_log_sample;
	mh->host.sample_file_open = mock_sample_file_open;
	mh->host.sample_file_add = mock_sample_file_add;
	mh->host.sample_file_sync = mock_sample_file_sync;
	mh->host.sample_file_close = mock_sample_file_close;
	mh->host.cookie_path = mock_cookie_path;
	mh->host.cookie_intern = mock_cookie_intern;
	mh->host.session_dir = mock_session_dir;
	mh->host.proc_root = mock_proc_root;
	mh->host.set_user_data = mock_set_user_data;
	mh->ctx.mh = mh;
	mh->emitter.mh = mh;
	mh->emitter.max_args = MOCK_MAX_EMIT_ARGS;
	mh->proc_root = mock_xstrdup("/proc");
	mh->echo_logs = v && *v && strcmp(v, "0");
	return mh;
}

struct mock_marks {
	size_t stats, sfile, escapes, models, sources, hooks, counters;
	bool kernel;
};

static void mock_rollback(struct mock_host *mh, const struct mock_marks *m)
{
	size_t i;

	for (i = m->escapes; i < mh->nr_escapes; i++)
		free(mh->escapes[i].name);
	for (i = m->counters; i < mh->nr_counters; i++)
		free(mh->counters[i].name);
	mh->nr_stats = m->stats;
	mh->nr_sfile = m->sfile;
	mh->nr_escapes = m->escapes;
	mh->nr_models = m->models;
	mh->nr_sources = m->sources;
	mh->nr_hooks = m->hooks;
	mh->nr_counters = m->counters;
	mh->has_kernel = m->kernel;
}

int mock_host_init(struct mock_host *mh, const struct op_ext_descriptor *desc, const char *args)
{
	struct mock_marks m = {
		mh->nr_stats, mh->nr_sfile, mh->nr_escapes, mh->nr_models,
		mh->nr_sources, mh->nr_hooks, mh->nr_counters, mh->has_kernel,
	};
	size_t i;
	int rc;

	if (!desc || desc->abi_major != OP_SDK_MAJOR || desc->abi_minor > OP_SDK_MINOR ||
	    desc->size < OP_EXT_DESCRIPTOR_SIZE_V1_0 || !desc->name || !desc->ext_init)
		return -EPROTO;
	for (i = 0; i < sizeof(desc->reserved) / sizeof(desc->reserved[0]); i++)
		if (desc->reserved[i])
			return -EPROTO;
	if (mh->inited)
		return -EBUSY;
	mh->desc = desc;
	mh->in_init = true;
	rc = desc->ext_init(&mh->ctx, &mh->host, args ? args : "");
	mh->in_init = false;
	if (rc) {
		mock_rollback(mh, &m);
		mock_free_user_data(mh);
		return rc;
	}
	mh->inited = true;
	return 0;
}

void mock_host_deinit(struct mock_host *mh)
{
	if (mh->inited && mh->desc->ext_deinit)
		mh->desc->ext_deinit(&mh->ctx);
	if (mh->inited)
		mock_free_user_data(mh);
	mh->inited = false;
}

void mock_host_free(struct mock_host *mh)
{
	size_t i;

	if (!mh)
		return;
	mock_host_deinit(mh);
	for (i = 0; i < mh->nr_config; i++) {
		free(mh->config[i].key);
		free(mh->config[i].s);
	}
	for (i = 0; i < mh->nr_escapes; i++)
		free(mh->escapes[i].name);
	for (i = 0; i < mh->nr_counters; i++)
		free(mh->counters[i].name);
	for (i = 0; i < mh->nr_cookies; i++)
		free(mh->cookies[i].path);
	for (i = 0; i < mh->nr_files; i++)
		free(mh->files[i]);
	free(mh->stat_text);
	free(mh->session_dir);
	free(mh->proc_root);
	free(mh);
}
