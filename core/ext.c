/*
 * ext.c - the plugin loader: finds <dir>/<name>.so, refuses unsafe files and
 * incompatible descriptors before any plugin callback runs, runs ext_init
 * with the host service table, keeps every registration in struct
 * ext_registry owned by its plugin, and rolls a failed init back completely.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "conf.h"
#include "ext.h"
#include "options.h"

/* refusal messages are bounded on purpose: a long path may cut one short */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#define EXT_MAX_PLUGINS 32
#define EXT_NAME_MAX 64

struct op_ext {
	struct ext_loader *loader;
	char *name;
	char *path;   /* the resolved file that was dlopen'd */
	char *origin; /* "command line", "FILE:LINE" */
	void *handle;
	int fd;       /* the file handle was loaded through (ext_unload) */
	struct op_ext_descriptor desc; /* min(size, sizeof) copy */
	bool in_init;
	bool initialized;
	/* log rate limit: messages in the current window, and those dropped */
	uint64_t log_window_start_ms;
	unsigned log_in_window;
	uint64_t log_suppressed;
};

struct ext_loader {
	char *plugin_dir;
	void *config;
	struct ext_core_services *core;
	FILE *log;
	bool verbose;
	bool echo_errors;        /* start-up errors to stderr too (default) */
	unsigned log_limit;      /* messages per plugin per window; 0 = no limit */
	unsigned log_window_ms;
	struct op_host host;
	struct ext_registry reg;
	struct op_ext *plugins[EXT_MAX_PLUGINS];
	size_t nr_plugins;
};

/* ------------------------------------------------------------------ */
/* logging                                                             */
/* ------------------------------------------------------------------ */

static FILE *ext_log_file(const struct ext_loader *l)
{
	return l && l->log ? l->log : stderr;
}

/*
 * Start-up errors (refusals, failed inits, conflicts) also go to stderr when
 * the log is a file: the daemon may stop before anyone reads that log, and a
 * session that failed to start is removed together with its log.
 */
static void ext_put(const struct ext_loader *l, bool echo, const char *prefix, const char *fmt,
		    va_list ap)
{
	FILE *f = ext_log_file(l);
	char buf[2048];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	fprintf(f, "%s%s\n", prefix, buf);
	fflush(f);
	if (echo && f != stderr && (!l || l->echo_errors))
		fprintf(stderr, "%s%s\n", prefix, buf);
}

static void ext_msg(const struct ext_loader *l, bool echo, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void ext_msg(const struct ext_loader *l, bool echo, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ext_put(l, echo, "oprofiled: ", fmt, ap);
	va_end(ap);
}

static const char *const ext_level_names[] = { "error: ", "warning: ", "", "debug: " };

static uint64_t ext_now_ms(void)
{
	struct timespec ts;

	/* coarse clock: served from the vDSO, no system call */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * A plugin that logs per sample must not flood the log: at most log_limit
 * messages per window, then one line saying how many were dropped.
 */
static bool ext_log_allowed(op_ext_t *ctx, FILE *f)
{
	struct ext_loader *l = ctx->loader;
	uint64_t now;

	if (!l || !l->log_limit)
		return true;
	now = ext_now_ms();
	if (now - ctx->log_window_start_ms >= l->log_window_ms) {
		if (ctx->log_suppressed)
			fprintf(f, "%s: warning: %llu messages suppressed (more than %u in %u ms)\n",
				ctx->name, (unsigned long long)ctx->log_suppressed, l->log_limit,
				l->log_window_ms);
		ctx->log_window_start_ms = now;
		ctx->log_in_window = 0;
		ctx->log_suppressed = 0;
	}
	if (ctx->log_in_window >= l->log_limit) {
		ctx->log_suppressed++;
		return false;
	}
	ctx->log_in_window++;
	return true;
}

static void host_vlog(op_ext_t *ctx, enum op_log_level level, const char *fmt, va_list ap)
{
	struct ext_loader *l = ctx ? ctx->loader : NULL;
	FILE *f = ext_log_file(l);
	char buf[1024];
	size_t len;

	if (level == OP_LOG_DEBUG && !(l && l->verbose))
		return;
	if ((unsigned)level > OP_LOG_DEBUG)
		level = OP_LOG_DEBUG;
	if (ctx && !ext_log_allowed(ctx, f))
		return;
	vsnprintf(buf, sizeof(buf), fmt ? fmt : "(null)", ap);
	len = strlen(buf);
	while (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	fprintf(f, "%s: %s%s\n", ctx ? ctx->name : "?", ext_level_names[level], buf);
	fflush(f);
	/* why a plugin refuses to start must reach the terminal, not only the log (see ext_put) */
	if (level == OP_LOG_ERR && ctx && ctx->in_init && f != stderr && l->echo_errors)
		fprintf(stderr, "oprofiled: %s: %s%s\n", ctx->name, ext_level_names[level], buf);
}

static void host_log(op_ext_t *ctx, enum op_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	host_vlog(ctx, level, fmt, ap);
	va_end(ap);
}

static void ext_err(op_ext_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* a registration refused: "oprofiled: plugin "x" (path): ..." */
static void ext_err(op_ext_t *ctx, const char *fmt, ...)
{
	char prefix[PATH_MAX + 128];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "oprofiled: plugin \"%s\" (%s): ", ctx->name, ctx->path);
	va_start(ap, fmt);
	ext_put(ctx->loader, true, prefix, fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------------ */
/* scoped configuration                                                */
/* ------------------------------------------------------------------ */

static int ext_conf_result(op_ext_t *ctx, int rc, const char *why)
{
	if (rc == -EINVAL)
		ext_err(ctx, "%s - fix the config file", why);
	return rc;
}

static int host_config_string(op_ext_t *ctx, const char *key, const char **out)
{
	char why[512];

	if (!ctx || !out)
		return -EINVAL;
	return ext_conf_result(ctx, conf_plugin_string(ctx->loader->config, ctx->name, key, out,
						       why, sizeof(why)), why);
}

static int host_config_int64(op_ext_t *ctx, const char *key, int64_t *out)
{
	char why[512];

	if (!ctx || !out)
		return -EINVAL;
	return ext_conf_result(ctx, conf_plugin_int64(ctx->loader->config, ctx->name, key, out,
						      why, sizeof(why)), why);
}

static int host_config_bool(op_ext_t *ctx, const char *key, bool *out)
{
	char why[512];

	if (!ctx || !out)
		return -EINVAL;
	return ext_conf_result(ctx, conf_plugin_bool(ctx->loader->config, ctx->name, key, out, why,
						     sizeof(why)), why);
}

/* ------------------------------------------------------------------ */
/* registrations                                                       */
/* ------------------------------------------------------------------ */

/* the size rule: min(size, sizeof) of @src into zeroed @dst */
static void ext_copy(void *dst, size_t dst_size, const void *src)
{
	uint32_t size;

	memcpy(&size, src, sizeof(size));
	memset(dst, 0, dst_size);
	memcpy(dst, src, size < dst_size ? size : dst_size);
}

static int ext_reg_check(op_ext_t *ctx, const char *what, const void *payload)
{
	if (!ctx)
		return -EINVAL;
	if (!ctx->in_init) {
		ext_err(ctx, "%s called outside ext_init - register everything from ext_init", what);
		return -EPERM;
	}
	if (!payload) {
		ext_err(ctx, "%s with a NULL description", what);
		return -EINVAL;
	}
	return 0;
}

static bool ext_name_ok(const char *s, bool allow_dot_slash)
{
	size_t n;

	if (!s || !*s)
		return false;
	n = strnlen(s, EXT_NAME_MAX + 1);
	if (n > EXT_NAME_MAX)
		return false;
	return allow_dot_slash || !strpbrk(s, "./");
}

/* @strict: the name becomes part of sample file names */
static char *ext_dup_name(op_ext_t *ctx, const char *what, const char *name, bool strict)
{
	char *d;

	if (strict ? !ext_name_valid(name) : !ext_name_ok(name, true)) {
		ext_err(ctx, "%s: name %s%.*s%s is invalid - expected 1..%d %s", what,
			name ? "\"" : "", EXT_NAME_MAX + 1, name ? name : "NULL", name ? "\"" : "",
			EXT_NAME_MAX, strict ? "of [A-Za-z0-9_-]" : "characters");
		return NULL;
	}
	d = strdup(name);
	if (!d)
		ext_err(ctx, "%s: out of memory", what);
	return d;
}

static int ext_missing(op_ext_t *ctx, const char *what, const char *member, uint32_t size)
{
	ext_err(ctx, "%s: %s is NULL (description size %u) - set it", what, member, size);
	return -EINVAL;
}

static int host_register_escape(op_ext_t *ctx, const struct op_escape_desc *desc, void *priv,
				uint32_t *code_out)
{
	struct ext_registry *r;
	struct op_escape_desc d;
	struct ext_escape *e;
	uint32_t code;
	int rc, i;

	rc = ext_reg_check(ctx, "register_escape", desc);
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_copy(&d, sizeof(d), desc);
	if (!d.handler)
		return ext_missing(ctx, "register_escape", "handler", d.size);
	if (!ext_name_ok(d.name, true))
		return ext_missing(ctx, "register_escape", "name", d.size);
	if (d.min_args > d.max_args) {
		ext_err(ctx, "register_escape \"%s\": min_args %u > max_args %u", d.name, d.min_args,
			d.max_args);
		return -EINVAL;
	}
	for (i = 0; i < OP_ESCAPE_MAX; i++) {
		e = r->escapes[i];
		if (e && !strcmp(e->desc.name, d.name)) {
			ext_err(ctx, "escape code name \"%s\" is already registered by plugin \"%s\" (code %d) - "
				     "the two plugins cannot be used together",
				d.name, e->owner->name, i);
			return -EEXIST;
		}
	}
	code = d.code;
	if (code == 0) {
		for (code = OP_ESCAPE_FIRST_PLUGIN; code < OP_ESCAPE_MAX && r->escapes[code]; code++)
			;
		if (code == OP_ESCAPE_MAX) {
			ext_err(ctx, "register_escape \"%s\": all %d plugin escape codes are in use", d.name,
				OP_ESCAPE_MAX - OP_ESCAPE_FIRST_PLUGIN);
			return -ENOSPC;
		}
	} else if (code < OP_ESCAPE_FIRST_PLUGIN || code >= OP_ESCAPE_MAX) {
		ext_err(ctx, "register_escape \"%s\": code %u is outside the plugin range %d..%d - "
			     "use 0 to have one allocated",
			d.name, code, OP_ESCAPE_FIRST_PLUGIN, OP_ESCAPE_MAX - 1);
		return -EINVAL;
	} else if (r->escapes[code]) {
		e = r->escapes[code];
		ext_err(ctx, "escape code %u (\"%s\") is already registered by plugin \"%s\" as \"%s\" - "
			     "the two plugins cannot be used together (or let one allocate with code 0)",
			code, d.name, e->owner->name, e->desc.name);
		return -EEXIST;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	d.name = ext_dup_name(ctx, "register_escape", d.name, false);
	if (!d.name) {
		free(e);
		return -ENOMEM;
	}
	d.code = code;
	e->desc = d;
	e->priv = priv;
	e->owner = ctx;
	r->escapes[code] = e;
	if (code_out)
		*code_out = code;
	return 0;
}

static int host_register_sfile_handlers(op_ext_t *ctx, const struct op_sfile_ops *ops, void *priv)
{
	struct ext_sfile_handlers *h;
	struct ext_registry *r;
	struct op_sfile_ops d;
	size_t i;
	int rc;

	rc = ext_reg_check(ctx, "register_sfile_handlers", ops);
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_copy(&d, sizeof(d), ops);
	if (!d.get_file)
		return ext_missing(ctx, "register_sfile_handlers", "get_file", d.size);
	for (i = 0; i < r->nr_sfile; i++)
		if (r->sfile[i].owner == ctx) {
			ext_err(ctx, "register_sfile_handlers called twice - register one set per plugin");
			return -EEXIST;
		}
	if (r->nr_sfile == EXT_MAX_SFILE_SLOTS) {
		ext_err(ctx, "register_sfile_handlers: all %d slots are in use by other plugins",
			EXT_MAX_SFILE_SLOTS);
		return -ENOSPC;
	}
	h = &r->sfile[r->nr_sfile];
	h->ops = d;
	h->priv = priv;
	h->owner = ctx;
	h->slot = (unsigned)r->nr_sfile;
	r->nr_sfile++;
	return 0;
}

static int host_register_model(op_ext_t *ctx, const struct op_model_desc *desc, void *priv)
{
	struct ext_registry *r;
	struct op_model_desc d;
	size_t i;
	int rc;

	rc = ext_reg_check(ctx, "register_model", desc);
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_copy(&d, sizeof(d), desc);
	if (!ext_name_ok(d.name, true))
		return ext_missing(ctx, "register_model", "name", d.size);
	if (!d.detect)
		return ext_missing(ctx, "register_model", "detect", d.size);
	if (!d.cpu_type)
		return ext_missing(ctx, "register_model", "cpu_type", d.size);
	if (!d.encode)
		return ext_missing(ctx, "register_model", "encode", d.size);
	for (i = 0; i < r->nr_models; i++)
		if (!strcmp(r->models[i].desc.name, d.name)) {
			ext_err(ctx, "hardware model \"%s\" is already registered by plugin \"%s\" - "
				     "load only one of them",
				d.name, r->models[i].owner->name);
			return -EEXIST;
		}
	if (r->nr_models == EXT_MAX_MODELS) {
		ext_err(ctx, "register_model: more than %d models", EXT_MAX_MODELS);
		return -ENOSPC;
	}
	d.name = ext_dup_name(ctx, "register_model", d.name, false);
	if (!d.name)
		return -ENOMEM;
	r->models[r->nr_models].desc = d;
	r->models[r->nr_models].priv = priv;
	r->models[r->nr_models].owner = ctx;
	r->nr_models++;
	return 0;
}

static int host_register_source(op_ext_t *ctx, const struct op_source_desc *desc, void *priv,
				uint32_t *source_out)
{
	struct ext_registry *r;
	struct op_source_desc d;
	uint32_t asize;
	int rc;

	rc = ext_reg_check(ctx, "register_source", desc);
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_copy(&d, sizeof(d), desc);
	if (!d.on_sample)
		return ext_missing(ctx, "register_source", "on_sample", d.size);
	if (!ext_name_ok(d.name, true))
		return ext_missing(ctx, "register_source", "name", d.size);
	/* the nested attr has its own size: apply the rule to it as well */
	asize = d.attr.size;
	if (asize < sizeof(uint32_t) * 2) {
		ext_err(ctx, "register_source \"%s\": attr.size is %u - set attr.size = sizeof(struct op_perf_attr)",
			d.name, asize);
		return -EINVAL;
	}
	if (asize < sizeof(d.attr))
		memset((char *)&d.attr + asize, 0, sizeof(d.attr) - asize);
	if (r->nr_sources == EXT_MAX_SOURCES) {
		ext_err(ctx, "register_source \"%s\": more than %d plugin sources", d.name,
			EXT_MAX_SOURCES);
		return -ENOSPC;
	}
	d.name = ext_dup_name(ctx, "register_source", d.name, false);
	if (!d.name)
		return -ENOMEM;
	r->sources[r->nr_sources].desc = d;
	r->sources[r->nr_sources].priv = priv;
	r->sources[r->nr_sources].owner = ctx;
	if (source_out)
		*source_out = (uint32_t)r->nr_sources;
	r->nr_sources++;
	return 0;
}

static int host_register_sample_hook(op_ext_t *ctx, const struct op_sample_hook_desc *desc,
				     void *priv)
{
	struct op_sample_hook_desc d;
	struct ext_registry *r;
	int rc;

	rc = ext_reg_check(ctx, "register_sample_hook", desc);
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_copy(&d, sizeof(d), desc);
	if (!d.on_sample)
		return ext_missing(ctx, "register_sample_hook", "on_sample", d.size);
	if (r->nr_hooks == EXT_MAX_HOOKS) {
		ext_err(ctx, "register_sample_hook: more than %d hooks", EXT_MAX_HOOKS);
		return -ENOSPC;
	}
	d.name = ext_dup_name(ctx, "register_sample_hook", d.name ? d.name : ctx->name, false);
	if (!d.name)
		return -ENOMEM;
	r->hooks[r->nr_hooks].desc = d;
	r->hooks[r->nr_hooks].priv = priv;
	r->hooks[r->nr_hooks].owner = ctx;
	r->nr_hooks++;
	return 0;
}

static int host_register_kernel(op_ext_t *ctx, const struct op_kernel_ops *ops, void *priv)
{
	struct op_kernel_ops d;
	struct ext_registry *r;
	int rc;

	rc = ext_reg_check(ctx, "register_kernel", ops);
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_copy(&d, sizeof(d), ops);
	if (!d.resolve)
		return ext_missing(ctx, "register_kernel", "resolve", d.size);
	if (r->has_kernel) {
		ext_err(ctx, "a kernel image resolver is already registered by plugin \"%s\" - "
			     "load only one kernel plugin",
			r->kernel.owner->name);
		return -EEXIST;
	}
	r->kernel.ops = d;
	r->kernel.priv = priv;
	r->kernel.owner = ctx;
	r->has_kernel = true;
	return 0;
}

static int host_register_counter(op_ext_t *ctx, const struct op_counter_desc *desc,
				 uint32_t *counter_out)
{
	struct op_counter_desc d;
	struct ext_registry *r;
	struct ext_counter *c;
	size_t i;
	int rc;

	rc = ext_reg_check(ctx, "register_counter", desc);
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_copy(&d, sizeof(d), desc);
	if (!d.name)
		return ext_missing(ctx, "register_counter", "name", d.size);
	for (i = 0; i < r->nr_counters; i++)
		if (!strcmp(r->counters[i].name, d.name)) {
			ext_err(ctx, "counter \"%s\" is already registered by plugin \"%s\" - "
				     "the two plugins cannot be used together",
				d.name, r->counters[i].owner->name);
			return -EEXIST;
		}
	if (r->nr_counters == EXT_MAX_COUNTERS) {
		ext_err(ctx, "register_counter \"%s\": more than %d virtual counters", d.name,
			EXT_MAX_COUNTERS);
		return -ENOSPC;
	}
	c = &r->counters[r->nr_counters];
	c->name = ext_dup_name(ctx, "register_counter", d.name, true);
	if (!c->name)
		return -EINVAL;
	d.name = c->name;
	c->desc = d;
	c->owner = ctx;
	if (counter_out)
		*counter_out = EXT_COUNTER_BASE + (uint32_t)r->nr_counters;
	r->nr_counters++;
	return 0;
}

static int host_register_stats(op_ext_t *ctx, const struct op_stats_ops *ops, void *priv)
{
	struct ext_registry *r;
	struct op_stats_ops d;
	int rc;

	rc = ext_reg_check(ctx, "register_stats", ops);
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_copy(&d, sizeof(d), ops);
	if (!d.print_stats)
		return ext_missing(ctx, "register_stats", "print_stats", d.size);
	if (r->nr_stats == EXT_MAX_STATS) {
		ext_err(ctx, "register_stats: more than %d", EXT_MAX_STATS);
		return -ENOSPC;
	}
	r->stats[r->nr_stats].ops = d;
	r->stats[r->nr_stats].priv = priv;
	r->stats[r->nr_stats].owner = ctx;
	r->nr_stats++;
	return 0;
}

/* remove every registration of @ctx, keeping the others in order */
static void ext_unregister(struct ext_registry *r, const op_ext_t *ctx)
{
	size_t i, j;

	for (i = 0; i < OP_ESCAPE_MAX; i++)
		if (r->escapes[i] && r->escapes[i]->owner == ctx) {
			free((char *)r->escapes[i]->desc.name);
			free(r->escapes[i]);
			r->escapes[i] = NULL;
		}
	for (i = j = 0; i < r->nr_sfile; i++)
		if (r->sfile[i].owner != ctx) {
			r->sfile[j] = r->sfile[i];
			r->sfile[j].slot = (unsigned)j;
			j++;
		}
	memset(&r->sfile[j], 0, (r->nr_sfile - j) * sizeof(r->sfile[0]));
	r->nr_sfile = j;
	for (i = j = 0; i < r->nr_sources; i++) {
		if (r->sources[i].owner == ctx)
			free((char *)r->sources[i].desc.name);
		else
			r->sources[j++] = r->sources[i];
	}
	memset(&r->sources[j], 0, (r->nr_sources - j) * sizeof(r->sources[0]));
	r->nr_sources = j;
	for (i = j = 0; i < r->nr_hooks; i++) {
		if (r->hooks[i].owner == ctx)
			free((char *)r->hooks[i].desc.name);
		else
			r->hooks[j++] = r->hooks[i];
	}
	memset(&r->hooks[j], 0, (r->nr_hooks - j) * sizeof(r->hooks[0]));
	r->nr_hooks = j;
	for (i = j = 0; i < r->nr_models; i++) {
		if (r->models[i].owner == ctx)
			free((char *)r->models[i].desc.name);
		else
			r->models[j++] = r->models[i];
	}
	memset(&r->models[j], 0, (r->nr_models - j) * sizeof(r->models[0]));
	r->nr_models = j;
	if (r->has_kernel && r->kernel.owner == ctx) {
		memset(&r->kernel, 0, sizeof(r->kernel));
		r->has_kernel = false;
	}
	for (i = j = 0; i < r->nr_counters; i++) {
		if (r->counters[i].owner == ctx)
			free(r->counters[i].name);
		else
			r->counters[j++] = r->counters[i];
	}
	memset(&r->counters[j], 0, (r->nr_counters - j) * sizeof(r->counters[0]));
	r->nr_counters = j;
	for (i = j = 0; i < r->nr_stats; i++)
		if (r->stats[i].owner != ctx)
			r->stats[j++] = r->stats[i];
	memset(&r->stats[j], 0, (r->nr_stats - j) * sizeof(r->stats[0]));
	r->nr_stats = j;
}

/* ------------------------------------------------------------------ */
/* core services                                                       */
/* ------------------------------------------------------------------ */

static struct ext_core_services *ext_core(op_ext_t *ctx)
{
	return ctx && ctx->loader ? ctx->loader->core : NULL;
}

static int host_map_pc(op_ext_t *ctx, uint32_t pid, uint16_t cpumode, uint64_t pc,
		       struct op_pc_map *out)
{
	struct ext_core_services *c = ext_core(ctx);

	if (!c || !c->map_pc)
		return -ENOSYS;
	return c->map_pc(c->sync, pid, cpumode, pc, out);
}

static int host_emit_nosys(op_emit_t *w, uint32_t code, const uint64_t *args, uint32_t nargs)
{
	(void)w;
	(void)code;
	(void)args;
	(void)nargs;
	return -ENOSYS;
}

static int host_log_sample(op_ext_t *ctx, const struct op_trans_view *t, uint32_t counter,
			   uint64_t key, uint32_t count)
{
	struct ext_core_services *c = ext_core(ctx);

	if (!c || !c->log_sample)
		return -ENOSYS;
	return c->log_sample(c->trans, t, counter, key, count);
}

static op_sample_file_t *host_sample_file_open(op_ext_t *ctx, op_sfile_t *sf,
					       const struct op_trans_view *t,
					       const struct op_file_spec *spec)
{
	struct ext_core_services *c = ext_core(ctx);
	struct op_file_spec s;

	if (!c || !c->sample_file_open || !spec)
		return NULL;
	ext_copy(&s, sizeof(s), spec);
	return c->sample_file_open(c->trans, sf, t, &s);
}

static int host_sample_file_add_nosys(op_sample_file_t *f, uint64_t key, uint32_t count)
{
	(void)f;
	(void)key;
	(void)count;
	return -ENOSYS;
}

static int host_sample_file_sync_nosys(op_sample_file_t *f)
{
	(void)f;
	return -ENOSYS;
}

static void host_sample_file_close_nosys(op_sample_file_t *f)
{
	(void)f;
}

static const char *host_cookie_path(op_ext_t *ctx, op_cookie_t cookie)
{
	struct ext_core_services *c = ext_core(ctx);

	return c && c->cookie_path ? c->cookie_path(c->sync, cookie) : NULL;
}

static op_cookie_t host_cookie_intern(op_ext_t *ctx, const char *path, bool is_kernel)
{
	struct ext_core_services *c = ext_core(ctx);

	return c && c->cookie_intern && path ? c->cookie_intern(c->sync, path, is_kernel) : 0;
}

static const char *host_session_dir(op_ext_t *ctx)
{
	struct ext_core_services *c = ext_core(ctx);

	return c ? c->session_dir : NULL;
}

static const char *host_proc_root(op_ext_t *ctx)
{
	struct ext_core_services *c = ext_core(ctx);

	return c ? c->proc_root : NULL;
}

/*
 * Services without a ctx argument are bound straight to the core's
 * functions; rebinding happens whenever the core may have changed.
 */
static void ext_bind(struct ext_loader *l)
{
	struct ext_core_services *c = l->core;

	l->host.emit = c && c->emit ? c->emit : host_emit_nosys;
	l->host.sample_file_add = c && c->sample_file_add ? c->sample_file_add
							  : host_sample_file_add_nosys;
	l->host.sample_file_sync = c && c->sample_file_sync ? c->sample_file_sync
							    : host_sample_file_sync_nosys;
	l->host.sample_file_close = c && c->sample_file_close ? c->sample_file_close
							      : host_sample_file_close_nosys;
}

static void ext_host_init(struct ext_loader *l)
{
	struct op_host *h = &l->host;

	memset(h, 0, sizeof(*h));
	h->size = sizeof(*h);
	h->abi_major = OP_SDK_MAJOR;
	h->abi_minor = OP_SDK_MINOR;
	h->log = host_log;
	h->vlog = host_vlog;
	h->config_string = host_config_string;
	h->config_int64 = host_config_int64;
	h->config_bool = host_config_bool;
	h->register_stats = host_register_stats;
	h->register_sfile_handlers = host_register_sfile_handlers;
	h->register_escape = host_register_escape;
	h->register_model = host_register_model;
	h->register_source = host_register_source;
	h->register_sample_hook = host_register_sample_hook;
	h->register_kernel = host_register_kernel;
	h->register_counter = host_register_counter;
	h->map_pc = host_map_pc;
	h->log_sample = host_log_sample;
	h->sample_file_open = host_sample_file_open;
	h->cookie_path = host_cookie_path;
	h->cookie_intern = host_cookie_intern;
	h->session_dir = host_session_dir;
	h->proc_root = host_proc_root;
	ext_bind(l);
}

/* ------------------------------------------------------------------ */
/* finding and checking a plugin                                       */
/* ------------------------------------------------------------------ */

struct ext_probe {
	char path[PATH_MAX]; /* <dir>/<name>.so as named */
	char real[PATH_MAX]; /* the file it resolves to */
	void *handle;
	int fd;              /* the file, open while loaded (ext_unload) */
	struct op_ext_descriptor desc;
};

bool ext_name_valid(const char *name)
{
	size_t i;

	if (!name || !*name || strlen(name) > EXT_NAME_MAX)
		return false;
	for (i = 0; name[i]; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return false;
	}
	return true;
}

/*
 * Who may write what a plugin is loaded through. Everyone's loader refuses
 * a plugin file or plugin directory that group or others can write; a root
 * loader also refuses one root does not own, and applies the same to every
 * directory above the plugin directory, up to / (sshd's StrictModes): whoever
 * can write any of them can put their own code into a root process. A
 * root-owned sticky directory (/tmp) on the way is the one exception: its
 * entries can be renamed only by their owners, and the next one must be root's.
 * @what: "plugin file", "plugin directory", or NULL for a directory above it.
 */
static int ext_check_owner(const char *what, const char *path, const struct stat *st, char *why,
			   size_t len)
{
	const char *by = (st->st_mode & S_IWOTH) ? "everyone" : "its group";
	unsigned mode = (unsigned)(st->st_mode & 07777);

	/*
	 * A root-owned sticky directory (/tmp): others may write in it, but
	 * not rename or replace an entry they do not own, so the path goes on
	 * safely when its next component is root's and writable by root alone
	 * (checked next, as every directory on the way). The same rule as for
	 * a root daemon's session directory.
	 */
	if (!what && st->st_uid == 0 && (st->st_mode & S_ISVTX))
		return 0;
	if (!what && (st->st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, len, "directory %s (above the plugin directory) is writable by %s (mode "
				   "%04o): a root oprofiled loads plugins only through directories that root "
				   "owns and only root can write - run chmod go-w %s, or install the plugins "
				   "elsewhere",
			 path, by, mode, path);
		return -EPERM;
	}
	if (!what && st->st_uid != 0) {
		snprintf(why, len, "directory %s (above the plugin directory) is owned by uid %u, but "
				   "oprofiled runs as root: a root oprofiled loads plugins only through "
				   "directories that root owns and only root can write - run chown root %s, "
				   "or install the plugins elsewhere",
			 path, (unsigned)st->st_uid, path);
		return -EPERM;
	}
	if (what && (st->st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, len, "%s %s is writable by %s (mode %04o) - run chmod go-w %s", what, path,
			 by, mode, path);
		return -EPERM;
	}
	if (what && geteuid() == 0 && st->st_uid != 0) {
		snprintf(why, len, "%s %s is owned by uid %u, but oprofiled runs as root - run chown root %s",
			 what, path, (unsigned)st->st_uid, path);
		return -EPERM;
	}
	return 0;
}

/*
 * Open the plugin file @real (absolute and free of symlinks: realpath) one
 * component at a time from "/", never following a symlink, and check every
 * directory on the fd that the next step opens through: a directory renamed,
 * exchanged or replaced by a symlink after realpath cannot redirect the
 * open, and the file checked is the file opened. Directories from the plugin
 * directory (@rdir_len bytes of @real) down are checked for everyone, those
 * above it for a root loader only (a user's loader is the user's business).
 * Returns the file's fd (O_RDONLY; O_NONBLOCK so that a FIFO cannot hang
 * the daemon) with @st filled, or -errno with @why.
 */
static int ext_open_plugin(const char *real, size_t rdir_len, struct stat *st, char *why,
			   size_t len)
{
	bool root = geteuid() == 0;
	char dir[PATH_MAX], comp[NAME_MAX + 1];
	const char *at = real + 1, *slash;
	int dfd, fd, rc;
	size_t n;

	dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		rc = -errno;
		snprintf(why, len, "cannot open /: %s", strerror(-rc));
		return rc;
	}
	strcpy(dir, "/");
	for (;;) {
		if (fstat(dfd, st)) {
			rc = -errno;
			snprintf(why, len, "%s: %s", dir, strerror(-rc));
			goto out_dir;
		}
		if (strlen(dir) >= rdir_len)
			rc = ext_check_owner("plugin directory", dir, st, why, len);
		else
			rc = root ? ext_check_owner(NULL, dir, st, why, len) : 0;
		if (rc)
			goto out_dir;
		slash = strchr(at, '/');
		if (!slash)
			break;
		n = (size_t)(slash - at);
		if (n > NAME_MAX) {
			rc = -ENAMETOOLONG;
			snprintf(why, len, "%.*s: %s", (int)(slash - real), real, strerror(-rc));
			goto out_dir;
		}
		memcpy(comp, at, n);
		comp[n] = '\0';
		fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			rc = -errno;
			snprintf(why, len, "cannot open directory %.*s: %s%s", (int)(slash - real), real,
				 strerror(-rc), rc == -ELOOP || rc == -ENOTDIR || rc == -ENOENT
					? " - it changed while oprofiled checked the path" : "");
			goto out_dir;
		}
		close(dfd);
		dfd = fd;
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - real), real);
		at = slash + 1;
	}
	fd = openat(dfd, at, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, len, "cannot open %s: %s%s", real, strerror(-rc),
			 rc == -ELOOP ? " - it changed while oprofiled checked the path" : "");
		goto out_dir;
	}
	close(dfd);
	if (fstat(fd, st)) {
		rc = -errno;
		snprintf(why, len, "%s: %s", real, strerror(-rc));
		goto out_file;
	}
	if (!S_ISREG(st->st_mode)) {
		rc = -EINVAL;
		snprintf(why, len, "%s is not a regular file - install the plugin's .so there", real);
		goto out_file;
	}
	rc = ext_check_owner("plugin file", real, st, why, len);
	if (rc)
		goto out_file;
	return fd;

out_file:
	close(fd);
	return rc;
out_dir:
	close(dfd);
	return rc;
}

#define EXT_ELF_CLASS (__SIZEOF_POINTER__ == 8 ? ELFCLASS64 : ELFCLASS32)
#define EXT_ELF_DATA (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB)
#if defined(__x86_64__)
#define EXT_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define EXT_ELF_MACHINE EM_AARCH64
#elif defined(__i386__)
#define EXT_ELF_MACHINE EM_386
#endif

/* bounds of the ELF reader: far above what a linker writes for a plugin */
#define EXT_ELF_MAX_PHDRS 64
#define EXT_ELF_MAX_DYN 1024
#define EXT_ELF_MAX_CHAIN 65536

/* what the descriptor's plain-integer head says, read from the file */
struct ext_peek {
	uint32_t major, minor, size, flags;
	size_t symsize;
};

/* a plugin file read through its fd, as ld.so would map it */
struct ext_elf {
	int fd;
	uint64_t size;
	ElfW(Phdr) load[EXT_ELF_MAX_PHDRS]; /* PT_LOAD segments */
	size_t nr_load;
	uint64_t symtab, strtab, strsz, hash, gnu_hash; /* from PT_DYNAMIC; 0 = absent */
};

/* @n bytes at file offset @off; false when they are not all in the file */
static bool ext_elf_read(const struct ext_elf *e, uint64_t off, void *buf, size_t n)
{
	if (off > e->size || n > e->size - off)
		return false;
	return pread(e->fd, buf, n, (off_t)off) == (ssize_t)n;
}

/* @n bytes at virtual address @va, from the file part of one PT_LOAD segment */
static bool ext_elf_read_va(const struct ext_elf *e, uint64_t va, void *buf, size_t n)
{
	size_t i;

	for (i = 0; i < e->nr_load; i++) {
		const ElfW(Phdr) *ph = &e->load[i];

		if (va >= ph->p_vaddr && va - ph->p_vaddr <= ph->p_filesz &&
		    n <= ph->p_filesz - (va - ph->p_vaddr))
			return ext_elf_read(e, ph->p_offset + (va - ph->p_vaddr), buf, n);
	}
	return false;
}

/*
 * Is dynamic symbol @idx the descriptor? 1 with @sym filled, 0 if not, -1
 * if the tables lie outside the file.
 */
static int ext_elf_sym(const struct ext_elf *e, uint64_t idx, ElfW(Sym) *sym)
{
	char name[sizeof(OP_EXT_SYMBOL)];

	if (!ext_elf_read_va(e, e->symtab + idx * sizeof(*sym), sym, sizeof(*sym)))
		return -1;
	if (sym->st_shndx == SHN_UNDEF || sym->st_name >= e->strsz ||
	    e->strsz - sym->st_name < sizeof(name))
		return 0;
	if (!ext_elf_read_va(e, e->strtab + sym->st_name, name, sizeof(name)))
		return -1;
	return memcmp(name, OP_EXT_SYMBOL, sizeof(name)) == 0;
}

/* DT_GNU_HASH lookup (the default of GNU ld): as ld.so's, bounded */
static int ext_elf_gnu_lookup(const struct ext_elf *e, ElfW(Sym) *sym)
{
	const unsigned char *s = (const unsigned char *)OP_EXT_SYMBOL;
	uint32_t h = 5381, hdr[4], idx, c;
	uint64_t buckets, chain;
	unsigned n;
	int rc;

	while (*s)
		h = h * 33 + *s++;
	if (!ext_elf_read_va(e, e->gnu_hash, hdr, sizeof(hdr)))
		return -1;
	/* nbuckets, symoffset, bloom words, bloom shift */
	if (!hdr[0])
		return 0;
	buckets = e->gnu_hash + sizeof(hdr) + (uint64_t)hdr[2] * sizeof(ElfW(Addr));
	chain = buckets + (uint64_t)hdr[0] * 4;
	if (!ext_elf_read_va(e, buckets + (uint64_t)(h % hdr[0]) * 4, &idx, 4))
		return -1;
	if (idx < hdr[1])
		return 0;
	for (n = 0; n < EXT_ELF_MAX_CHAIN; n++, idx++) {
		if (!ext_elf_read_va(e, chain + (uint64_t)(idx - hdr[1]) * 4, &c, 4))
			return -1;
		if ((c | 1) == (h | 1)) {
			rc = ext_elf_sym(e, idx, sym);
			if (rc)
				return rc;
		}
		if (c & 1)
			return 0;
	}
	return -1;
}

/* DT_HASH lookup (--hash-style=sysv), bounded by the chain's length */
static int ext_elf_sysv_lookup(const struct ext_elf *e, ElfW(Sym) *sym)
{
	const unsigned char *s = (const unsigned char *)OP_EXT_SYMBOL;
	uint32_t h = 0, g, hdr[2], idx;
	uint32_t n;
	int rc;

	while (*s) {
		h = (h << 4) + *s++;
		g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	/* nbucket, nchain */
	if (!ext_elf_read_va(e, e->hash, hdr, sizeof(hdr)))
		return -1;
	if (!hdr[0])
		return 0;
	if (!ext_elf_read_va(e, e->hash + sizeof(hdr) + (uint64_t)(h % hdr[0]) * 4, &idx, 4))
		return -1;
	for (n = 0; idx != STN_UNDEF; n++) {
		if (idx >= hdr[1] || n >= hdr[1])
			return -1;
		rc = ext_elf_sym(e, idx, sym);
		if (rc)
			return rc;
		if (!ext_elf_read_va(e, e->hash + sizeof(hdr) + ((uint64_t)hdr[0] + idx) * 4, &idx, 4))
			return -1;
	}
	return 0;
}

/* PT_LOAD segments and the dynamic section's symbol-table entries */
static int ext_elf_dynamic(struct ext_elf *e, const ElfW(Ehdr) *eh, char *why, size_t len)
{
	ElfW(Phdr) ph[EXT_ELF_MAX_PHDRS];
	const ElfW(Phdr) *dynamic = NULL;
	ElfW(Dyn) dyn;
	uint64_t i;

	if (eh->e_phentsize != sizeof(ph[0]) || !eh->e_phnum || eh->e_phnum > EXT_ELF_MAX_PHDRS ||
	    !ext_elf_read(e, eh->e_phoff, ph, eh->e_phnum * sizeof(ph[0]))) {
		snprintf(why, len, "damaged ELF file: %u program headers of %u bytes at offset %llu "
				   "do not fit the file (%llu bytes) - rebuild or reinstall the plugin",
			 (unsigned)eh->e_phnum, (unsigned)eh->e_phentsize,
			 (unsigned long long)eh->e_phoff, (unsigned long long)e->size);
		return -ENOEXEC;
	}
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD)
			e->load[e->nr_load++] = ph[i];
		else if (ph[i].p_type == PT_DYNAMIC)
			dynamic = &ph[i];
	}
	if (!dynamic) {
		snprintf(why, len, "no dynamic segment: not a shared object - rebuild the plugin with "
				   "-shared -fPIC");
		return -ENOEXEC;
	}
	for (i = 0; i < dynamic->p_filesz / sizeof(dyn) && i < EXT_ELF_MAX_DYN; i++) {
		if (!ext_elf_read(e, dynamic->p_offset + i * sizeof(dyn), &dyn, sizeof(dyn)))
			break;
		if (dyn.d_tag == DT_NULL)
			break;
		switch (dyn.d_tag) {
		case DT_SYMTAB: e->symtab = dyn.d_un.d_ptr; break;
		case DT_STRTAB: e->strtab = dyn.d_un.d_ptr; break;
		case DT_STRSZ: e->strsz = dyn.d_un.d_val; break;
		case DT_HASH: e->hash = dyn.d_un.d_ptr; break;
		case DT_GNU_HASH: e->gnu_hash = dyn.d_un.d_ptr; break;
		case DT_SYMENT:
			if (dyn.d_un.d_val != sizeof(ElfW(Sym))) {
				snprintf(why, len, "damaged ELF file: dynamic symbols of %llu bytes, "
						   "expected %zu - rebuild the plugin",
					 (unsigned long long)dyn.d_un.d_val, sizeof(ElfW(Sym)));
				return -ENOEXEC;
			}
			break;
		}
	}
	return 0;
}

/*
 * Read the descriptor's version, size and flags from the plugin file open
 * at @fd, so that a plugin built for another SDK is refused before dlopen
 * runs any of its code (constructors). The descriptor is found as ld.so
 * finds symbols - program headers, dynamic segment, symbol hash table -
 * never through section headers, which a stripped file may lack and which
 * ld.so ignores. Those four members hold no pointers: the file bytes are what
 * the loaded object holds. Returns 0 with @pk filled, or a refusal with @why.
 */
static int ext_elf_peek(int fd, struct ext_peek *pk, char *why, size_t len)
{
	struct ext_elf e = { .fd = fd };
	unsigned char head[4 * sizeof(uint32_t)];
	struct stat st = { 0 };
	ElfW(Ehdr) eh;
	ElfW(Sym) sym;
	int rc;

	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(eh) ||
	    pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh)) {
		snprintf(why, len, "not an ELF shared object (%lld bytes) - rebuild the plugin",
			 (long long)st.st_size);
		return -ENOEXEC;
	}
	e.size = (uint64_t)st.st_size;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != EXT_ELF_CLASS ||
	    eh.e_ident[EI_DATA] != EXT_ELF_DATA || eh.e_type != ET_DYN) {
		snprintf(why, len, "not an ELF shared object for this system (%s) - rebuild the plugin "
				   "for this system with -shared -fPIC",
			 memcmp(eh.e_ident, ELFMAG, SELFMAG) ? "no ELF header" : "other class, byte order or type");
		return -ENOEXEC;
	}
#ifdef EXT_ELF_MACHINE
	if (eh.e_machine != EXT_ELF_MACHINE) {
		snprintf(why, len, "built for ELF machine %u, this system is %u - rebuild the plugin "
				   "for this system",
			 (unsigned)eh.e_machine, (unsigned)EXT_ELF_MACHINE);
		return -ENOEXEC;
	}
#endif
	rc = ext_elf_dynamic(&e, &eh, why, len);
	if (rc)
		return rc;
	rc = 0;
	if (e.symtab && e.strtab && e.strsz && e.gnu_hash)
		rc = ext_elf_gnu_lookup(&e, &sym);
	else if (e.symtab && e.strtab && e.strsz && e.hash)
		rc = ext_elf_sysv_lookup(&e, &sym);
	if (rc < 0) {
		snprintf(why, len, "damaged ELF file: its dynamic symbol tables lie outside the file "
				   "(%llu bytes) - rebuild or reinstall the plugin",
			 (unsigned long long)e.size);
		return -ENOEXEC;
	}
	if (rc == 0) {
		snprintf(why, len, "does not export the descriptor \"%s\" - not an oprofiled plugin, or "
				   "built without OP_EXT_DECLARE()",
			 OP_EXT_SYMBOL);
		return -ENOEXEC;
	}
	if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT && ELF64_ST_TYPE(sym.st_info) != STT_NOTYPE) {
		snprintf(why, len, "descriptor \"%s\" is not a data symbol (ELF symbol type %u) - "
				   "declare it with OP_EXT_DECLARE()",
			 OP_EXT_SYMBOL, (unsigned)ELF64_ST_TYPE(sym.st_info));
		return -ENOEXEC;
	}
	if (!ext_elf_read_va(&e, sym.st_value, head, sizeof(head))) {
		snprintf(why, len, "descriptor \"%s\" at 0x%llx is not initialised data of the file - "
				   "declare it with OP_EXT_DECLARE()",
			 OP_EXT_SYMBOL, (unsigned long long)sym.st_value);
		return -ENOEXEC;
	}
	memcpy(&pk->major, head + offsetof(struct op_ext_descriptor, abi_major), 4);
	memcpy(&pk->minor, head + offsetof(struct op_ext_descriptor, abi_minor), 4);
	memcpy(&pk->size, head + offsetof(struct op_ext_descriptor, size), 4);
	memcpy(&pk->flags, head + offsetof(struct op_ext_descriptor, flags), 4);
	pk->symsize = sym.st_size;
	return 0;
}

/* the version/size/flags rules; @symsize 0 = unknown */
static int ext_check_head(uint32_t major, uint32_t minor, uint32_t size, uint32_t flags,
			  size_t symsize, char *why, size_t len)
{
	if (symsize && symsize < 3 * sizeof(uint32_t)) {
		snprintf(why, len, "descriptor \"%s\" is only %zu bytes, SDK %d.%d needs %d - rebuild "
				   "the plugin with OP_EXT_DECLARE()",
			 OP_EXT_SYMBOL, symsize, OP_SDK_MAJOR, OP_SDK_MINOR, OP_EXT_DESCRIPTOR_SIZE_V1_0);
		return -ENOEXEC;
	}
	if (major != OP_SDK_MAJOR) {
		snprintf(why, len, "built for SDK %u.%u, oprofiled provides %d.%d - rebuild the plugin "
				   "against SDK %d.x",
			 major, minor, OP_SDK_MAJOR, OP_SDK_MINOR, OP_SDK_MAJOR);
		return -ENOEXEC;
	}
	if (minor > OP_SDK_MINOR) {
		snprintf(why, len, "built for SDK %u.%u, oprofiled provides %d.%d - use an oprofiled "
				   "with SDK >= %u.%u, or rebuild the plugin against SDK %d.%d",
			 major, minor, OP_SDK_MAJOR, OP_SDK_MINOR, major, minor, OP_SDK_MAJOR,
			 OP_SDK_MINOR);
		return -ENOEXEC;
	}
	if (size < OP_EXT_DESCRIPTOR_SIZE_V1_0) {
		snprintf(why, len, "descriptor size is %u bytes, SDK %d.x needs at least %d - rebuild "
				   "the plugin with OP_EXT_DECLARE()",
			 size, OP_SDK_MAJOR, OP_EXT_DESCRIPTOR_SIZE_V1_0);
		return -ENOEXEC;
	}
	if (symsize && size > symsize) {
		snprintf(why, len, "descriptor claims %u bytes but its symbol has %zu - the plugin is "
				   "broken, rebuild it with OP_EXT_DECLARE()",
			 size, symsize);
		return -ENOEXEC;
	}
	if (flags & ~(uint32_t)OP_EXT_F_NO_EVENT_OK) {
		snprintf(why, len, "descriptor flags 0x%x unknown to SDK %d.%d (known: 0x%x) - rebuild "
				   "the plugin against SDK %d.%d",
			 flags, OP_SDK_MAJOR, OP_SDK_MINOR, (unsigned)OP_EXT_F_NO_EVENT_OK, OP_SDK_MAJOR,
			 OP_SDK_MINOR);
		return -ENOEXEC;
	}
	return 0;
}

int ext_descriptor_peek(const char *path, uint32_t *major, uint32_t *minor, uint32_t *size,
			uint32_t *flags, char *why, size_t why_len)
{
	struct ext_peek pk = { 0 };
	int fd, rc;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, why_len, "cannot open %s: %s", path, strerror(-rc));
		return rc;
	}
	rc = ext_elf_peek(fd, &pk, why, why_len);
	close(fd);
	if (rc == 0) {
		*major = pk.major;
		*minor = pk.minor;
		*size = pk.size;
		*flags = pk.flags;
		rc = ext_check_head(pk.major, pk.minor, pk.size, pk.flags, pk.symsize, why, why_len);
	}
	return rc;
}

/*
 * dlopen the file open at @fd through /proc/self/fd/N: the file that was
 * checked, whatever its path names by now. Without /proc there is no such
 * name, and no falling back to the path.
 *
 * ld.so returns an object already loaded under the name it is given before
 * it opens anything, so no object may keep the name /proc/self/fd/N once fd
 * N is closed and its number reused: the fd stays open while its plugin is
 * loaded, and for good if the object outlives dlclose (ext_unload).
 */
static int ext_dlopen_fd(int fd, const struct stat *st, void **handle, char *why, size_t len)
{
	char proc[64];
	struct stat pst;
	const char *e;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (stat(proc, &pst) || pst.st_dev != st->st_dev || pst.st_ino != st->st_ino) {
		snprintf(why, len, "/proc is not mounted (no %s): oprofiled loads plugins only through "
				   "/proc/self/fd, never again by path - mount proc on /proc",
			 proc);
		return -ENOENT;
	}
	dlerror();
	*handle = dlopen(proc, RTLD_NOW | RTLD_LOCAL);
	if (*handle)
		return 0;
	e = dlerror();
	snprintf(why, len, "cannot load: %s - rebuild the plugin for this system",
		 e ? e : "unknown dlopen error");
	return -ENOEXEC;
}

/*
 * dlclose @handle, loaded through @fd (ext_dlopen_fd), and close @fd -
 * unless ld.so still holds an object under its /proc/self/fd name (-z
 * nodelete, C++ unique symbols, a dependency of another object): then @fd
 * stays open for good, so that its number, and the name, never come back
 * for another file.
 */
static void ext_unload(void *handle, int fd)
{
	char proc[64];
	void *h;

	if (handle)
		dlclose(handle);
	if (fd < 0)
		return;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	h = handle ? dlopen(proc, RTLD_LAZY | RTLD_LOCAL | RTLD_NOLOAD) : NULL;
	if (h)
		dlclose(h);
	else
		close(fd);
}

/*
 * Find, check and dlopen plugin @name of @dir; fill @p. The file is opened
 * once, through directories checked on their fds (ext_open_plugin); its
 * owner, mode and descriptor version/size/flags are checked on that fd, and
 * that fd is what gets loaded. Only a plugin that passed gets its ELF
 * constructors run, and none gets ext_init called here. On refusal, @why
 * says what was expected, what was found and what to do.
 */
static int ext_probe(const char *dir, const char *name, struct ext_probe *p, char *why, size_t len)
{
	uint32_t major, minor, size, flags;
	struct ext_peek pk = { 0 };
	const unsigned char *raw;
	char rdir[PATH_MAX];
	size_t symsize = 0, rdir_len;
	ElfW(Sym) *es = NULL;
	struct stat st;
	Dl_info info;
	int rc, fd, i;
	void *sym;

	memset(p, 0, sizeof(*p));
	p->fd = -1;
	snprintf(p->path, sizeof(p->path), "%s/%s.so", dir ? dir : "", name ? name : "");
	if (!ext_name_valid(name)) {
		snprintf(why, len, "invalid plugin name - expected 1..%d letters, digits, '_' or '-' "
				   "(no '/', '.' or '..'); plugins are looked up as <plugin dir>/NAME.so",
			 EXT_NAME_MAX);
		return -EINVAL;
	}
	if (!dir || !*dir || !realpath(dir, rdir)) {
		rc = dir && *dir ? -errno : -ENOENT;
		snprintf(why, len, "plugin directory \"%s\": %s - set --plugin-dir, plugin_dir in the "
				   "config file or OP_PLUGIN_DIR",
			 dir ? dir : "", strerror(-rc));
		return rc;
	}
	if (lstat(p->path, &st)) {
		rc = -errno;
		snprintf(why, len, "%s - no plugin of that name in %s (see oprofiled --list-plugins)",
			 strerror(-rc), dir);
		return rc;
	}
	if (!realpath(p->path, p->real)) {
		rc = -errno;
		snprintf(why, len, "cannot resolve the path: %s - fix or remove the file", strerror(-rc));
		return rc;
	}
	rdir_len = strlen(rdir);
	if (S_ISLNK(st.st_mode) && (strncmp(p->real, rdir, rdir_len) || p->real[rdir_len] != '/')) {
		snprintf(why, len, "symlink leads out of the plugin directory %s (to %s) - install the "
				   "plugin file itself in the plugin directory",
			 rdir, p->real);
		return -EPERM;
	}
	/*
	 * The walk checks p->real from rdir down as the plugin directory; a
	 * swap between the two realpath calls could have moved one of them.
	 */
	if (strncmp(p->real, rdir, rdir_len) || (rdir_len > 1 && p->real[rdir_len] != '/')) {
		snprintf(why, len, "%s is not in the plugin directory %s - it changed while oprofiled "
				   "checked the path",
			 p->real, rdir);
		return -EPERM;
	}
	fd = ext_open_plugin(p->real, rdir_len, &st, why, len);
	if (fd < 0)
		return fd;
	rc = ext_elf_peek(fd, &pk, why, len);
	if (rc == 0)
		rc = ext_check_head(pk.major, pk.minor, pk.size, pk.flags, pk.symsize, why, len);
	if (rc == 0)
		rc = ext_dlopen_fd(fd, &st, &p->handle, why, len);
	if (rc) {
		close(fd);
		return rc;
	}
	p->fd = fd;
	sym = dlsym(p->handle, OP_EXT_SYMBOL);
	if (!sym) {
		snprintf(why, len, "does not export the descriptor \"%s\" - not an oprofiled plugin, or "
				   "built without OP_EXT_DECLARE()",
			 OP_EXT_SYMBOL);
		rc = -ENOEXEC;
		goto out_close;
	}
	if (dladdr1(sym, &info, (void **)&es, RTLD_DL_SYMENT) && es)
		symsize = es->st_size;
	raw = sym;
	memcpy(&major, raw + offsetof(struct op_ext_descriptor, abi_major), sizeof(major));
	memcpy(&minor, raw + offsetof(struct op_ext_descriptor, abi_minor), sizeof(minor));
	memcpy(&size, raw + offsetof(struct op_ext_descriptor, size), sizeof(size));
	memcpy(&flags, raw + offsetof(struct op_ext_descriptor, flags), sizeof(flags));
	rc = ext_check_head(major, minor, size, flags, symsize, why, len);
	if (rc)
		goto out_close;
	/* the descriptor's size is its third member, not its first */
	memset(&p->desc, 0, sizeof(p->desc));
	memcpy(&p->desc, sym, size < sizeof(p->desc) ? size : sizeof(p->desc));
	for (i = 0; i < (int)(sizeof(p->desc.reserved) / sizeof(p->desc.reserved[0])); i++)
		if (p->desc.reserved[i]) {
			snprintf(why, len, "descriptor reserved slot %d is not zero (found %p), SDK %d.%d "
					   "needs zero - rebuild the plugin with OP_EXT_DECLARE()",
				 i, p->desc.reserved[i], OP_SDK_MAJOR, OP_SDK_MINOR);
			rc = -ENOEXEC;
			goto out_close;
		}
	if (!p->desc.name || strcmp(p->desc.name, name)) {
		snprintf(why, len, "descriptor name is \"%.*s\", expected \"%s\" (the file stem) - "
				   "rename the file to <name>.so or fix the name in OP_EXT_DECLARE()",
			 EXT_NAME_MAX, p->desc.name ? p->desc.name : "(null)", name);
		rc = -ENOEXEC;
		goto out_close;
	}
	if (!p->desc.ext_init) {
		snprintf(why, len, "descriptor has no ext_init - set it in OP_EXT_DECLARE()");
		rc = -ENOEXEC;
		goto out_close;
	}
	if (!p->desc.version)
		p->desc.version = "";
	if (!p->desc.summary)
		p->desc.summary = "";
	return 0;

out_close:
	ext_unload(p->handle, p->fd);
	p->handle = NULL;
	p->fd = -1;
	return rc;
}

/* ------------------------------------------------------------------ */
/* loader API                                                          */
/* ------------------------------------------------------------------ */

struct ext_loader *ext_loader_new(const char *plugin_dir, void *config,
				  struct ext_core_services *core, FILE *log)
{
	struct ext_loader *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->plugin_dir = strdup(plugin_dir ? plugin_dir : "");
	if (!l->plugin_dir) {
		free(l);
		return NULL;
	}
	l->config = config;
	l->core = core;
	l->log = log;
	l->echo_errors = true;
	l->log_limit = 100;
	l->log_window_ms = 10000;
	ext_host_init(l);
	return l;
}

void ext_loader_set_core(struct ext_loader *l, struct ext_core_services *core)
{
	l->core = core;
	ext_bind(l);
}

void ext_loader_set_log(struct ext_loader *l, FILE *log)
{
	l->log = log;
}

void ext_loader_set_log_limit(struct ext_loader *l, unsigned max_messages, unsigned window_ms)
{
	l->log_limit = max_messages;
	l->log_window_ms = window_ms;
}

void ext_loader_set_echo(struct ext_loader *l, bool echo_errors)
{
	l->echo_errors = echo_errors;
}

void ext_loader_set_verbose(struct ext_loader *l, bool verbose)
{
	l->verbose = verbose;
}

const struct op_host *ext_host(struct ext_loader *l)
{
	ext_bind(l);
	return &l->host;
}

const char *ext_name(const op_ext_t *ctx)
{
	return ctx ? ctx->name : "core";
}

size_t ext_nr_plugins(const struct ext_loader *l)
{
	return l->nr_plugins;
}

op_ext_t *ext_plugin(struct ext_loader *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->nr_plugins; i++)
		if (!strcmp(l->plugins[i]->name, name))
			return l->plugins[i];
	return NULL;
}

static void ext_ctx_free(op_ext_t *ctx)
{
	if (!ctx)
		return;
	free(ctx->name);
	free(ctx->path);
	free(ctx->origin);
	free(ctx);
}

int ext_load(struct ext_loader *l, const char *name, const char *args, const char *origin)
{
	struct ext_probe p;
	char why[PATH_MAX + 512];
	op_ext_t *ctx, *old;
	int rc;

	if (!origin)
		origin = "caller";
	old = name ? ext_plugin(l, name) : NULL;
	if (old) {
		ext_msg(l, true, "plugin \"%s\" (%s): requested again by %s, already loaded by %s - give it once",
			name, old->path, origin, old->origin);
		return -EEXIST;
	}
	if (l->nr_plugins == EXT_MAX_PLUGINS) {
		ext_msg(l, true, "plugin \"%s\": more than %d plugins requested (%s) - load fewer", name,
			EXT_MAX_PLUGINS, origin);
		return -ENOSPC;
	}
	rc = ext_probe(l->plugin_dir, name, &p, why, sizeof(why));
	if (rc) {
		ext_msg(l, true, "plugin \"%s\" (%s): %s [requested by %s]", name ? name : "", p.path, why,
			origin);
		return rc;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		goto out_nomem;
	ctx->loader = l;
	ctx->name = strdup(name);
	ctx->path = strdup(p.real);
	ctx->origin = strdup(origin);
	if (!ctx->name || !ctx->path || !ctx->origin)
		goto out_nomem;
	ctx->handle = p.handle;
	ctx->fd = p.fd;
	ctx->desc = p.desc;

	ext_bind(l);
	ctx->in_init = true;
	rc = ctx->desc.ext_init(ctx, &l->host, args ? args : "");
	ctx->in_init = false;
	if (rc) {
		ext_msg(l, true, "plugin \"%s\" (%s): ext_init failed with %d (%s) - see the plugin's messages "
			   "above; everything it registered was rolled back",
			name, ctx->path, rc, rc < 0 ? strerror(-rc) : "not a -errno value");
		ext_unregister(&l->reg, ctx);
		ext_unload(ctx->handle, ctx->fd);
		ext_ctx_free(ctx);
		return rc < 0 ? rc : -EINVAL;
	}
	ctx->initialized = true;
	if (ctx->desc.flags & OP_EXT_F_NO_EVENT_OK)
		l->reg.no_event_ok++;
	l->plugins[l->nr_plugins++] = ctx;
	if (l->verbose)
		ext_msg(l, false, "plugin \"%s\" %s (SDK %u.%u) loaded from %s", name, ctx->desc.version,
			ctx->desc.abi_major, ctx->desc.abi_minor, ctx->path);
	return 0;

out_nomem:
	ext_msg(l, true, "plugin \"%s\": out of memory", name);
	ext_ctx_free(ctx);
	ext_unload(p.handle, p.fd);
	return -ENOMEM;
}

int ext_load_all(struct ext_loader *l, const struct op_options *o)
{
	size_t i;
	int rc;

	for (i = 0; i < o->nr_features; i++) {
		rc = ext_load(l, o->features[i].name, o->features[i].args, o->features[i].origin);
		if (rc)
			return rc;
	}
	return 0;
}

struct ext_registry *ext_registry(struct ext_loader *l)
{
	ext_bind(l);
	return &l->reg;
}

struct ext_stats_out {
	FILE *out;
};

static void ext_sink_counter(const struct op_stats_sink *sink, const char *name, uint64_t value)
{
	const struct ext_stats_out *s = sink->opaque;

	fprintf(s->out, "%s: %" PRIu64 "\n", name ? name : "?", value);
}

static void ext_sink_text(const struct op_stats_sink *sink, const char *line)
{
	const struct ext_stats_out *s = sink->opaque;

	fprintf(s->out, "%s\n", line ? line : "");
}

void ext_print_stats(struct ext_loader *l, FILE *out)
{
	struct ext_stats_out so = { .out = out };
	struct op_stats_sink sink = {
		.size = sizeof(sink),
		.opaque = &so,
		.counter = ext_sink_counter,
		.text = ext_sink_text,
	};
	size_t i, k;

	for (i = 0; i < l->nr_plugins; i++) {
		fprintf(out, "-- plugin %s --\n", l->plugins[i]->name);
		for (k = 0; k < l->reg.nr_stats; k++)
			if (l->reg.stats[k].owner == l->plugins[i])
				l->reg.stats[k].ops.print_stats(l->reg.stats[k].priv, &sink);
	}
	fflush(out);
}

static int ext_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ext_list_plugins(const char *plugin_dir, FILE *out)
{
	char **names = NULL, why[PATH_MAX + 512];
	size_t n = 0, cap = 0, i;
	struct ext_probe p;
	struct dirent *de;
	DIR *d;

	d = opendir(plugin_dir ? plugin_dir : "");
	if (!d) {
		int e = errno;

		fprintf(out, "oprofiled: cannot list plugin directory \"%s\": %s - set --plugin-dir, "
			     "plugin_dir in the config file or OP_PLUGIN_DIR\n",
			plugin_dir ? plugin_dir : "", strerror(e));
		return -e;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || len < 4 || strcmp(de->d_name + len - 3, ".so"))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*names));

			if (!nn)
				break;
			names = nn;
		}
		names[n] = strndup(de->d_name, len - 3);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), ext_cmp_str);
	fprintf(out, "plugins in %s (oprofiled SDK %d.%d):\n", plugin_dir, OP_SDK_MAJOR,
		OP_SDK_MINOR);
	if (!n)
		fprintf(out, "  (none)\n");
	for (i = 0; i < n; i++) {
		if (ext_probe(plugin_dir, names[i], &p, why, sizeof(why)) == 0) {
			fprintf(out, "  %-12s %-8s SDK %u.%u  %s\n", names[i], p.desc.version,
				p.desc.abi_major, p.desc.abi_minor, p.desc.summary);
			ext_unload(p.handle, p.fd);
		} else {
			fprintf(out, "  %-12s REFUSED: %s\n", names[i], why);
		}
		free(names[i]);
	}
	free(names);
	fflush(out);
	return 0;
}

void ext_loader_free(struct ext_loader *l)
{
	size_t i;

	if (!l)
		return;
	for (i = l->nr_plugins; i-- > 0;)
		if (l->plugins[i]->initialized && l->plugins[i]->desc.ext_deinit)
			l->plugins[i]->desc.ext_deinit(l->plugins[i]);
	for (i = l->nr_plugins; i-- > 0;)
		ext_unregister(&l->reg, l->plugins[i]);
	for (i = l->nr_plugins; i-- > 0;) {
		ext_unload(l->plugins[i]->handle, l->plugins[i]->fd);
		ext_ctx_free(l->plugins[i]);
	}
	free(l->plugin_dir);
	free(l);
}
