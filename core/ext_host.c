/*
 * ext_host.c - struct op_host, the service table plugins get: the core
 * services forwarded to struct ext_core_services (-ENOSYS when missing),
 * the registrations and the log bound in.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "ext_int.h"

static struct ext_core_services *ext_host_core(op_ext_t *ctx)
{
	return ctx && ctx->loader ? ctx->loader->core : NULL;
}

static int ext_host_map_pc(op_ext_t *ctx, uint32_t pid, uint16_t cpumode, uint64_t pc,
			   struct op_pc_map *out)
{
	struct ext_core_services *c = ext_host_core(ctx);
	struct op_pc_map m = { .size = sizeof(m) };
	uint32_t size;
	int rc;

	if (!c || !c->map_pc)
		return -ENOSYS;
	if (!out)
		return -EINVAL;
	/* a plugin's struct may be smaller (built against an older SDK): never write past it */
	size = out->size;
	if (size >= sizeof(m))
		return c->map_pc(c->sync, pid, cpumode, pc, out);
	if (size < sizeof(size))
		return -EINVAL;
	rc = c->map_pc(c->sync, pid, cpumode, pc, &m);
	memcpy((char *)out + sizeof(size), (char *)&m + sizeof(size), size - sizeof(size));
	return rc;
}

static int ext_host_emit_nosys(op_emit_t *w, uint32_t code, const uint64_t *args, uint32_t nargs)
{
	(void)w;
	(void)code;
	(void)args;
	(void)nargs;
	return -ENOSYS;
}

static int ext_host_log_sample(op_ext_t *ctx, const struct op_trans_view *t, uint32_t counter,
			       uint64_t key, uint32_t count)
{
	struct ext_core_services *c = ext_host_core(ctx);

	if (!c || !c->log_sample)
		return -ENOSYS;
	return c->log_sample(c->trans, t, counter, key, count);
}

static op_sample_file_t *ext_host_sample_file_open(op_ext_t *ctx, op_sfile_t *sf,
						   const struct op_trans_view *t,
						   const struct op_file_spec *spec)
{
	struct ext_core_services *c = ext_host_core(ctx);
	struct op_file_spec s;

	if (!c || !c->sample_file_open || !spec)
		return NULL;
	ext_reg_copy(&s, sizeof(s), spec);
	return c->sample_file_open(c->trans, sf, t, &s);
}

static int ext_host_sample_file_add_nosys(op_sample_file_t *f, uint64_t key, uint32_t count)
{
	(void)f;
	(void)key;
	(void)count;
	return -ENOSYS;
}

static int ext_host_sample_file_sync_nosys(op_sample_file_t *f)
{
	(void)f;
	return -ENOSYS;
}

static void ext_host_sample_file_close_nosys(op_sample_file_t *f)
{
	(void)f;
}

static const char *ext_host_cookie_path(op_ext_t *ctx, op_cookie_t cookie)
{
	struct ext_core_services *c = ext_host_core(ctx);

	return c && c->cookie_path ? c->cookie_path(c->sync, cookie) : NULL;
}

static op_cookie_t ext_host_cookie_intern(op_ext_t *ctx, const char *path, bool is_kernel)
{
	struct ext_core_services *c = ext_host_core(ctx);

	return c && c->cookie_intern && path ? c->cookie_intern(c->sync, path, is_kernel) : 0;
}

static const char *ext_host_session_dir(op_ext_t *ctx)
{
	struct ext_core_services *c = ext_host_core(ctx);

	return c ? c->session_dir : NULL;
}

static const char *ext_host_proc_root(op_ext_t *ctx)
{
	struct ext_core_services *c = ext_host_core(ctx);

	return c ? c->proc_root : NULL;
}

/* --- issue 20: per-process split key --- */
static int ext_host_set_split_key(op_ext_t *ctx, uint32_t pid, const char *key)
{
	struct ext_core_services *c = ext_host_core(ctx);

	if (!ctx || ctx->loader->reg.split_cgroup != ctx)
		return -EPERM;
	return c && c->set_split_key ? c->set_split_key(c->sync, pid, key) : -ENOSYS;
}

/*
 * Services without a ctx argument are bound straight to the core's
 * functions; rebinding happens whenever the core may have changed.
 */
void ext_host_bind(struct ext_loader *l)
{
	struct ext_core_services *c = l->core;

	l->host.emit = c && c->emit ? c->emit : ext_host_emit_nosys;
	l->host.sample_file_add =
		c && c->sample_file_add ? c->sample_file_add : ext_host_sample_file_add_nosys;
	l->host.sample_file_sync =
		c && c->sample_file_sync ? c->sample_file_sync : ext_host_sample_file_sync_nosys;
	l->host.sample_file_close =
		c && c->sample_file_close ? c->sample_file_close : ext_host_sample_file_close_nosys;
}

void ext_host_init(struct ext_loader *l)
{
	struct op_host *h = &l->host;

	memset(h, 0, sizeof(*h));
	h->size = sizeof(*h);
	h->abi_major = OP_SDK_MAJOR;
	h->abi_minor = OP_SDK_MINOR;
	h->log = ext_log_plugin;
	h->vlog = ext_log_plugin_vlog;
	h->config_string = ext_reg_config_string;
	h->config_int64 = ext_reg_config_int64;
	h->config_bool = ext_reg_config_bool;
	h->register_stats = ext_reg_stats;
	h->register_sfile_handlers = ext_reg_sfile_handlers;
	h->register_escape = ext_reg_escape;
	h->register_model = ext_reg_model;
	h->register_source = ext_reg_source;
	h->register_sample_hook = ext_reg_sample_hook;
	h->register_kernel = ext_reg_kernel;
	h->register_counter = ext_reg_counter;
	h->map_pc = ext_host_map_pc;
	h->log_sample = ext_host_log_sample;
	h->sample_file_open = ext_host_sample_file_open;
	h->cookie_path = ext_host_cookie_path;
	h->cookie_intern = ext_host_cookie_intern;
	h->session_dir = ext_host_session_dir;
	h->proc_root = ext_host_proc_root;
	h->set_user_data = ext_reg_user_data;
	h->register_proc_hook = ext_reg_proc_hook;
	h->register_session_hook = ext_reg_session_hook;
	h->register_anon_resolver = ext_reg_anon_resolver;
	/* --- issue 20: per-process split key --- */
	h->register_split = ext_reg_split;
	h->set_split_key = ext_host_set_split_key;
	ext_host_bind(l);
}
