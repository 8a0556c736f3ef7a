/*
 * ext_reg.c - what plugins register from ext_init (stats, sfile handlers,
 * escape codes, models, sources, sample hooks, the kernel resolver, virtual
 * counters) and the scoped plugins.<name>.<key> lookups: each payload is
 * checked, copied with the size rule and owned by its plugin.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "ext_int.h"

static int ext_reg_conf_result(op_ext_t *ctx, int rc, const char *why)
{
	if (rc == -EINVAL)
		ext_log_err(ctx, "%s - fix the config file", why);
	return rc;
}

int ext_reg_config_string(op_ext_t *ctx, const char *key, const char **out)
{
	char why[512];

	if (!ctx || !out)
		return -EINVAL;
	return ext_reg_conf_result(ctx,
				   conf_plugin_string(ctx->loader->config, ctx->name, key, out, why,
						      sizeof(why)),
				   why);
}

int ext_reg_config_int64(op_ext_t *ctx, const char *key, int64_t *out)
{
	char why[512];

	if (!ctx || !out)
		return -EINVAL;
	return ext_reg_conf_result(ctx,
				   conf_plugin_int64(ctx->loader->config, ctx->name, key, out, why,
						     sizeof(why)),
				   why);
}

int ext_reg_config_bool(op_ext_t *ctx, const char *key, bool *out)
{
	char why[512];

	if (!ctx || !out)
		return -EINVAL;
	return ext_reg_conf_result(ctx,
				   conf_plugin_bool(ctx->loader->config, ctx->name, key, out, why,
						    sizeof(why)),
				   why);
}

/* ------------------------------------------------------------------ */
/* registrations                                                       */
/* ------------------------------------------------------------------ */

/* the size rule: min(size, sizeof) of @src into zeroed @dst */
void ext_reg_copy(void *dst, size_t dst_size, const void *src)
{
	uint32_t size;

	memcpy(&size, src, sizeof(size));
	memset(dst, 0, dst_size);
	memcpy(dst, src, size < dst_size ? size : dst_size);
}

/*
 * Every registration first: inside ext_init, a description, and a size
 * that is a struct of this SDK or an older one (@own: sizeof the host's
 * @type; a plugin's minor is never above the host's, so neither is its size).
 */
static int ext_reg_check(op_ext_t *ctx, const char *what, const void *payload, size_t own,
			 const char *type)
{
	uint32_t size;

	if (!ctx)
		return -EINVAL;
	if (!ctx->in_init) {
		ext_log_err(ctx, "%s called outside ext_init - register everything from ext_init",
			    what);
		return -EPERM;
	}
	if (!payload) {
		ext_log_err(ctx, "%s with a NULL description", what);
		return -EINVAL;
	}
	memcpy(&size, payload, sizeof(size));
	if (size < sizeof(size)) {
		ext_log_err(ctx,
			    "%s: description size is %u, less than its size member - set "
			    ".size = sizeof(struct %s)",
			    what, size, type);
		return -EINVAL;
	}
	if (size > own) {
		ext_log_err(ctx,
			    "%s: description size is %u, but struct %s of SDK %d.%d has %zu "
			    "bytes - set .size = sizeof(struct %s)",
			    what, size, type, OP_SDK_MAJOR, OP_SDK_MINOR, own, type);
		return -EINVAL;
	}
	return 0;
}

/*
 * Check a registration's name: 1..EXT_NAME_MAX characters, and with
 * @strict (the name becomes part of sample file names) only [A-Za-z0-9_-].
 * Logs what is wrong with it; 0 or -EINVAL.
 */
static int ext_reg_name(op_ext_t *ctx, const char *what, const char *name, bool strict,
			uint32_t size)
{
	const char *chars = strict ? "of [A-Za-z0-9_-]" : "characters";
	size_t i;

	if (!name) {
		ext_log_err(ctx, "%s: name is NULL (description size %u) - set it", what, size);
		return -EINVAL;
	}
	if (!*name) {
		ext_log_err(ctx, "%s: name is empty - expected 1..%d %s", what, EXT_NAME_MAX, chars);
		return -EINVAL;
	}
	if (strnlen(name, EXT_NAME_MAX + 1) > EXT_NAME_MAX) {
		ext_log_err(ctx, "%s: name \"%.*s...\" is longer than %d characters - shorten it",
			    what, 16, name, EXT_NAME_MAX);
		return -EINVAL;
	}
	for (i = 0; strict && name[i]; i++) {
		unsigned char c = (unsigned char)name[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_' || c == '-')
			continue;
		if (c > ' ' && c < 0x7f && c != '"')
			ext_log_err(ctx, "%s: name \"%s\" has '%c' - expected 1..%d %s", what, name,
				    c, EXT_NAME_MAX, chars);
		else
			ext_log_err(ctx, "%s: name has byte 0x%02x at %zu - expected 1..%d %s",
				    what, c, i, EXT_NAME_MAX, chars);
		return -EINVAL;
	}
	return 0;
}

/* a copy of @name, checked by ext_reg_name() */
static char *ext_reg_dup_name(op_ext_t *ctx, const char *what, const char *name)
{
	char *d = strdup(name);

	if (!d)
		ext_log_err(ctx, "%s: out of memory", what);
	return d;
}

static int ext_reg_missing(op_ext_t *ctx, const char *what, const char *member, uint32_t size)
{
	ext_log_err(ctx, "%s: %s is NULL (description size %u) - set it", what, member, size);
	return -EINVAL;
}

int ext_reg_escape(op_ext_t *ctx, const struct op_escape_desc *desc, void *priv, uint32_t *code_out)
{
	struct ext_registry *r;
	struct op_escape_desc d;
	struct ext_escape *e;
	uint32_t code;
	int rc, i;

	rc = ext_reg_check(ctx, "register_escape", desc, sizeof(struct op_escape_desc),
			   "op_escape_desc");
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_reg_copy(&d, sizeof(d), desc);
	if (!d.handler)
		return ext_reg_missing(ctx, "register_escape", "handler", d.size);
	rc = ext_reg_name(ctx, "register_escape", d.name, false, d.size);
	if (rc)
		return rc;
	if (d.min_args > d.max_args) {
		ext_log_err(ctx, "register_escape \"%s\": min_args %u > max_args %u", d.name,
			    d.min_args, d.max_args);
		return -EINVAL;
	}
	for (i = 0; i <= OP_ESCAPE_MAX; i++) {
		e = r->escapes[i];
		if (e && !strcmp(e->desc.name, d.name)) {
			ext_log_err(ctx,
				    "escape code name \"%s\" is already registered by plugin \"%s\" (code %d) - "
				    "the two plugins cannot be used together",
				    d.name, e->owner->name, i);
			return -EEXIST;
		}
	}
	code = d.code;
	if (code == 0) {
		for (code = OP_ESCAPE_FIRST_PLUGIN; code <= OP_ESCAPE_MAX && r->escapes[code];
		     code++)
			;
		if (code > OP_ESCAPE_MAX) {
			ext_log_err(ctx,
				    "register_escape \"%s\": all %d plugin escape codes are in use",
				    d.name, OP_ESCAPE_MAX + 1 - OP_ESCAPE_FIRST_PLUGIN);
			return -ENOSPC;
		}
	} else if (code < OP_ESCAPE_FIRST_PLUGIN || code > OP_ESCAPE_MAX) {
		ext_log_err(ctx,
			    "register_escape \"%s\": code %u is outside the plugin range %d..%d - "
			    "use 0 to have one allocated",
			    d.name, code, OP_ESCAPE_FIRST_PLUGIN, OP_ESCAPE_MAX);
		return -EINVAL;
	} else if (r->escapes[code]) {
		e = r->escapes[code];
		ext_log_err(ctx,
			    "escape code %u (\"%s\") is already registered by plugin \"%s\" as \"%s\" - "
			    "the two plugins cannot be used together (or let one allocate with code 0)",
			    code, d.name, e->owner->name, e->desc.name);
		return -EEXIST;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	d.name = ext_reg_dup_name(ctx, "register_escape", d.name);
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

int ext_reg_sfile_handlers(op_ext_t *ctx, const struct op_sfile_ops *ops, void *priv)
{
	struct ext_sfile_handlers *h;
	struct ext_registry *r;
	struct op_sfile_ops d;
	size_t i;
	int rc;

	rc = ext_reg_check(ctx, "register_sfile_handlers", ops, sizeof(struct op_sfile_ops),
			   "op_sfile_ops");
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_reg_copy(&d, sizeof(d), ops);
	/* every callback is optional: get_file is never called (SDK 1.1) */
	for (i = 0; i < r->nr_sfile; i++)
		if (r->sfile[i].owner == ctx) {
			ext_log_err(ctx,
				    "register_sfile_handlers called twice - register one set per plugin");
			return -EEXIST;
		}
	if (r->nr_sfile == EXT_MAX_SFILE_SLOTS) {
		ext_log_err(ctx, "register_sfile_handlers: all %d slots are in use by other plugins",
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

int ext_reg_model(op_ext_t *ctx, const struct op_model_desc *desc, void *priv)
{
	struct ext_registry *r;
	struct op_model_desc d;
	size_t i;
	int rc;

	rc = ext_reg_check(ctx, "register_model", desc, sizeof(struct op_model_desc),
			   "op_model_desc");
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_reg_copy(&d, sizeof(d), desc);
	rc = ext_reg_name(ctx, "register_model", d.name, false, d.size);
	if (rc)
		return rc;
	if (!d.detect)
		return ext_reg_missing(ctx, "register_model", "detect", d.size);
	if (!d.cpu_type)
		return ext_reg_missing(ctx, "register_model", "cpu_type", d.size);
	if (!d.encode)
		return ext_reg_missing(ctx, "register_model", "encode", d.size);
	for (i = 0; i < r->nr_models; i++)
		if (!strcmp(r->models[i].desc.name, d.name)) {
			ext_log_err(ctx,
				    "hardware model \"%s\" is already registered by plugin \"%s\" - "
				    "load only one of them",
				    d.name, r->models[i].owner->name);
			return -EEXIST;
		}
	if (r->nr_models == EXT_MAX_MODELS) {
		ext_log_err(ctx, "register_model: more than %d models", EXT_MAX_MODELS);
		return -ENOSPC;
	}
	d.name = ext_reg_dup_name(ctx, "register_model", d.name);
	if (!d.name)
		return -ENOMEM;
	r->models[r->nr_models].desc = d;
	r->models[r->nr_models].priv = priv;
	r->models[r->nr_models].owner = ctx;
	r->nr_models++;
	return 0;
}

int ext_reg_source(op_ext_t *ctx, const struct op_source_desc *desc, void *priv,
		   uint32_t *source_out)
{
	struct ext_registry *r;
	struct op_source_desc d;
	uint32_t asize;
	int rc;

	rc = ext_reg_check(ctx, "register_source", desc, sizeof(struct op_source_desc),
			   "op_source_desc");
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_reg_copy(&d, sizeof(d), desc);
	if (!d.on_sample)
		return ext_reg_missing(ctx, "register_source", "on_sample", d.size);
	rc = ext_reg_name(ctx, "register_source", d.name, false, d.size);
	if (rc)
		return rc;
	/*
	 * The attr has its own size: apply the rule to it as well. SDK 1.1
	 * passes it by pointer (it may grow); the registry keeps a copy.
	 */
	if (d.attr_ptr) {
		ext_reg_copy(&d.attr, sizeof(d.attr), d.attr_ptr);
		d.attr_ptr = NULL;
	}
	asize = d.attr.size;
	if (asize < sizeof(uint32_t) * 2) {
		const char *m =
			desc->size > offsetof(struct op_source_desc, attr_ptr) && desc->attr_ptr ?
				"attr_ptr->size" :
				"attr.size";

		ext_log_err(ctx,
			    "register_source \"%s\": %s is %u - set %s = sizeof(struct op_perf_attr)",
			    d.name, m, asize, m);
		return -EINVAL;
	}
	if (asize < sizeof(d.attr))
		memset((char *)&d.attr + asize, 0, sizeof(d.attr) - asize);
	if (r->nr_sources == EXT_MAX_SOURCES) {
		ext_log_err(ctx, "register_source \"%s\": more than %d plugin sources", d.name,
			    EXT_MAX_SOURCES);
		return -ENOSPC;
	}
	d.name = ext_reg_dup_name(ctx, "register_source", d.name);
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

int ext_reg_sample_hook(op_ext_t *ctx, const struct op_sample_hook_desc *desc, void *priv)
{
	struct op_sample_hook_desc d;
	struct ext_registry *r;
	int rc;

	rc = ext_reg_check(ctx, "register_sample_hook", desc, sizeof(struct op_sample_hook_desc),
			   "op_sample_hook_desc");
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_reg_copy(&d, sizeof(d), desc);
	if (!d.on_sample)
		return ext_reg_missing(ctx, "register_sample_hook", "on_sample", d.size);
	if (d.name) {
		rc = ext_reg_name(ctx, "register_sample_hook", d.name, false, d.size);
		if (rc)
			return rc;
	}
	if (r->nr_hooks == EXT_MAX_HOOKS) {
		ext_log_err(ctx, "register_sample_hook: more than %d hooks", EXT_MAX_HOOKS);
		return -ENOSPC;
	}
	d.name = ext_reg_dup_name(ctx, "register_sample_hook", d.name ? d.name : ctx->name);
	if (!d.name)
		return -ENOMEM;
	r->hooks[r->nr_hooks].desc = d;
	r->hooks[r->nr_hooks].priv = priv;
	r->hooks[r->nr_hooks].owner = ctx;
	r->nr_hooks++;
	return 0;
}

int ext_reg_kernel(op_ext_t *ctx, const struct op_kernel_ops *ops, void *priv)
{
	struct op_kernel_ops d;
	struct ext_registry *r;
	int rc;

	rc = ext_reg_check(ctx, "register_kernel", ops, sizeof(struct op_kernel_ops),
			   "op_kernel_ops");
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_reg_copy(&d, sizeof(d), ops);
	if (!d.resolve)
		return ext_reg_missing(ctx, "register_kernel", "resolve", d.size);
	if (r->has_kernel) {
		ext_log_err(ctx,
			    "a kernel image resolver is already registered by plugin \"%s\" - "
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

int ext_reg_counter(op_ext_t *ctx, const struct op_counter_desc *desc, uint32_t *counter_out)
{
	struct op_counter_desc d;
	struct ext_registry *r;
	struct ext_counter *c;
	size_t i;
	int rc;

	rc = ext_reg_check(ctx, "register_counter", desc, sizeof(struct op_counter_desc),
			   "op_counter_desc");
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_reg_copy(&d, sizeof(d), desc);
	rc = ext_reg_name(ctx, "register_counter", d.name, true, d.size);
	if (rc)
		return rc;
	for (i = 0; i < r->nr_counters; i++)
		if (!strcmp(r->counters[i].name, d.name)) {
			ext_log_err(ctx,
				    "counter \"%s\" is already registered by plugin \"%s\" - "
				    "the two plugins cannot be used together",
				    d.name, r->counters[i].owner->name);
			return -EEXIST;
		}
	if (r->nr_counters == EXT_MAX_COUNTERS) {
		ext_log_err(ctx, "register_counter \"%s\": more than %d virtual counters", d.name,
			    EXT_MAX_COUNTERS);
		return -ENOSPC;
	}
	c = &r->counters[r->nr_counters];
	c->name = ext_reg_dup_name(ctx, "register_counter", d.name);
	if (!c->name)
		return -ENOMEM;
	d.name = c->name;
	c->desc = d;
	c->owner = ctx;
	if (counter_out)
		*counter_out = EXT_COUNTER_BASE + (uint32_t)r->nr_counters;
	r->nr_counters++;
	return 0;
}

int ext_reg_stats(op_ext_t *ctx, const struct op_stats_ops *ops, void *priv)
{
	struct ext_registry *r;
	struct op_stats_ops d;
	int rc;

	rc = ext_reg_check(ctx, "register_stats", ops, sizeof(struct op_stats_ops), "op_stats_ops");
	if (rc)
		return rc;
	r = &ctx->loader->reg;
	ext_reg_copy(&d, sizeof(d), ops);
	if (!d.print_stats)
		return ext_reg_missing(ctx, "register_stats", "print_stats", d.size);
	if (r->nr_stats == EXT_MAX_STATS) {
		ext_log_err(ctx, "register_stats: more than %d", EXT_MAX_STATS);
		return -ENOSPC;
	}
	r->stats[r->nr_stats].ops = d;
	r->stats[r->nr_stats].priv = priv;
	r->stats[r->nr_stats].owner = ctx;
	r->nr_stats++;
	return 0;
}

int ext_reg_user_data(op_ext_t *ctx, const struct op_user_data *ud)
{
	struct op_user_data d;
	int rc;

	rc = ext_reg_check(ctx, "set_user_data", ud, sizeof(struct op_user_data), "op_user_data");
	if (rc)
		return rc;
	if (ctx->has_ud) {
		ext_log_err(ctx, "set_user_data called twice - keep one state per plugin");
		return -EEXIST;
	}
	ext_reg_copy(&d, sizeof(d), ud);
	d.size = sizeof(d);
	ctx->ud = d;
	ctx->has_ud = true;
	return 0;
}

/* SDK 1.2: the three descriptions share one layout (struct ext_hook_entry) */
_Static_assert(offsetof(struct op_proc_hook_desc, name) ==
			       offsetof(struct op_session_hook_desc, name) &&
		       offsetof(struct op_proc_hook_desc, name) ==
			       offsetof(struct op_anon_resolver_desc, name) &&
		       offsetof(struct op_proc_hook_desc, on_event) ==
			       offsetof(struct op_session_hook_desc, on_event) &&
		       offsetof(struct op_proc_hook_desc, on_event) ==
			       offsetof(struct op_anon_resolver_desc, resolve) &&
		       sizeof(struct op_proc_hook_desc) == sizeof(struct op_session_hook_desc) &&
		       sizeof(struct op_proc_hook_desc) == sizeof(struct op_anon_resolver_desc),
	       "the SDK 1.2 hook descriptions share one layout");

/*
 * A hook of SDK 1.2 into @arr (@nr of @max used): the payload checked and
 * copied with the size rule, its callback (@cb names it) required, its
 * optional name checked and copied (the plugin's name when none is given).
 */
static int ext_reg_hook(op_ext_t *ctx, const char *what, const char *type, const char *cb,
			const void *desc, void *priv, struct ext_hook_entry *arr, size_t *nr,
			size_t max)
{
	struct ext_hook_entry e = { 0 };
	int rc;

	rc = ext_reg_check(ctx, what, desc, sizeof(e.proc), type);
	if (rc)
		return rc;
	ext_reg_copy(&e.proc, sizeof(e.proc), desc);
	if (!e.proc.on_event)
		return ext_reg_missing(ctx, what, cb, e.proc.size);
	if (e.proc.name) {
		rc = ext_reg_name(ctx, what, e.proc.name, false, e.proc.size);
		if (rc)
			return rc;
	}
	if (*nr == max) {
		ext_log_err(ctx, "%s: more than %zu registered", what, max);
		return -ENOSPC;
	}
	e.proc.name = ext_reg_dup_name(ctx, what, e.proc.name ? e.proc.name : ctx->name);
	if (!e.proc.name)
		return -ENOMEM;
	e.priv = priv;
	e.owner = ctx;
	arr[(*nr)++] = e;
	return 0;
}

int ext_reg_proc_hook(op_ext_t *ctx, const struct op_proc_hook_desc *desc, void *priv)
{
	struct ext_registry *r = ctx ? &ctx->loader->reg : NULL;

	return r ? ext_reg_hook(ctx, "register_proc_hook", "op_proc_hook_desc", "on_event", desc,
				priv, r->proc_hooks, &r->nr_proc_hooks, EXT_MAX_PROC_HOOKS) :
		   -EINVAL;
}

int ext_reg_session_hook(op_ext_t *ctx, const struct op_session_hook_desc *desc, void *priv)
{
	struct ext_registry *r = ctx ? &ctx->loader->reg : NULL;

	return r ? ext_reg_hook(ctx, "register_session_hook", "op_session_hook_desc", "on_event",
				desc, priv, r->session_hooks, &r->nr_session_hooks,
				EXT_MAX_SESSION_HOOKS) :
		   -EINVAL;
}

int ext_reg_anon_resolver(op_ext_t *ctx, const struct op_anon_resolver_desc *desc, void *priv)
{
	struct ext_registry *r = ctx ? &ctx->loader->reg : NULL;

	return r ? ext_reg_hook(ctx, "register_anon_resolver", "op_anon_resolver_desc", "resolve",
				desc, priv, r->anon, &r->nr_anon, EXT_MAX_ANON_RESOLVERS) :
		   -EINVAL;
}

/* drop @ctx's SDK 1.2 hooks of @arr (@nr used), keeping the others in order */
static void ext_reg_drop_hooks(struct ext_hook_entry *arr, size_t *nr, const op_ext_t *ctx)
{
	size_t i, j;

	for (i = j = 0; i < *nr; i++) {
		if (arr[i].owner == ctx)
			free((char *)arr[i].proc.name);
		else
			arr[j++] = arr[i];
	}
	memset(&arr[j], 0, (*nr - j) * sizeof(arr[0]));
	*nr = j;
}

/* --- issue 20: per-process split key --- */
int ext_reg_split(op_ext_t *ctx, const char *name)
{
	struct ext_registry *r = ctx ? &ctx->loader->reg : NULL;

	if (!r)
		return -EINVAL;
	if (!ctx->in_init) {
		ext_log_err(ctx, "register_split called outside ext_init - register everything "
				 "from ext_init");
		return -EPERM;
	}
	if (!name || strcmp(name, "cgroup")) {
		ext_log_err(ctx, "register_split: unknown split \"%s\" - oprofiled knows \"cgroup\"",
			    name ? name : "(null)");
		return -EINVAL;
	}
	if (r->split_cgroup && r->split_cgroup != ctx) {
		ext_log_err(ctx,
			    "register_split: --separate=cgroup is already provided by plugin "
			    "\"%s\" - load only one of them",
			    ext_name(r->split_cgroup));
		return -EEXIST;
	}
	r->split_cgroup = ctx;
	return 0;
}

/* @ctx owns one of the @nr hook entries of @arr */
static bool ext_reg_owns_hook(const struct ext_hook_entry *arr, size_t nr, const op_ext_t *ctx)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (arr[i].owner == ctx)
			return true;
	return false;
}

const char *ext_reg_held(const struct ext_registry *r, const op_ext_t *ctx)
{
	size_t i;

	for (i = 0; i <= OP_ESCAPE_MAX; i++)
		if (r->escapes[i] && r->escapes[i]->owner == ctx)
			return "an escape code";
	for (i = 0; i < r->nr_sfile; i++)
		if (r->sfile[i].owner == ctx)
			return "sample file handlers";
	for (i = 0; i < r->nr_sources; i++)
		if (r->sources[i].owner == ctx)
			return "a sample source";
	for (i = 0; i < r->nr_hooks; i++)
		if (r->hooks[i].owner == ctx)
			return "a sample hook";
	for (i = 0; i < r->nr_counters; i++)
		if (r->counters[i].owner == ctx)
			return "a virtual counter";
	if (r->has_kernel && r->kernel.owner == ctx)
		return "the kernel resolver";
	if (ext_reg_owns_hook(r->proc_hooks, r->nr_proc_hooks, ctx))
		return "a task-record hook";
	if (ext_reg_owns_hook(r->session_hooks, r->nr_session_hooks, ctx))
		return "a session hook";
	if (ext_reg_owns_hook(r->anon, r->nr_anon, ctx))
		return "an anon resolver";
	if (r->split_cgroup == ctx)
		return "the cgroup split";
	return NULL;
}

/* remove every registration of @ctx, keeping the others in order */
void ext_reg_unregister(struct ext_registry *r, const op_ext_t *ctx)
{
	size_t i, j;

	if (r->split_cgroup == ctx) /* issue 20 */
		r->split_cgroup = NULL;

	ext_reg_drop_hooks(r->proc_hooks, &r->nr_proc_hooks, ctx);
	ext_reg_drop_hooks(r->session_hooks, &r->nr_session_hooks, ctx);
	ext_reg_drop_hooks(r->anon, &r->nr_anon, ctx);

	for (i = 0; i <= OP_ESCAPE_MAX; i++)
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
