/*
 * fx_sdk12.c - fixture plugin of SDK 1.2: a proc hook, a session hook and
 * an anon resolver. It logs every event it gets (test_sdk12 reads the
 * log) and claims the anon pcs of pid 42 in [0x70000000, 0x70001000): a pc
 * is key pc - 0x70000000 + 0x1000 of image /jit/42.jo, except that after
 * time 5000 the code moved to 0x70000800 (the same keys from there), the
 * way plugins/jit attributes moved JIT code.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <inttypes.h>

#include "oprofile_sdk.h"

struct fx12 {
	op_ext_t *ctx;
	const struct op_host *host;
	op_cookie_t image;
};

static struct fx12 fx;

static int fx12_proc(void *priv, const struct op_proc_event *e)
{
	struct fx12 *f = priv;

	f->host->log(f->ctx, OP_LOG_INFO,
		     "proc kind=%u pid=%u tid=%u ppid=%u misc=%u time=%" PRIu64
		     " comm=%s file=%s start=%#" PRIx64 " len=%#" PRIx64 " pgoff=%#" PRIx64,
		     e->kind, e->pid, e->tid, e->ppid, e->misc, e->time, e->comm ? e->comm : "-",
		     e->filename ? e->filename : "-", e->start, e->len, e->pgoff);
	return e->pid == 666 ? -EIO : 0; /* a failing hook is counted, not fatal */
}

static int fx12_session(void *priv, const struct op_session_event *e)
{
	struct fx12 *f = priv;

	f->host->log(f->ctx, OP_LOG_INFO, "session kind=%u dir=%s prev=%s ordered=%d", e->kind,
		     e->dir ? e->dir : "-", e->prev_dir ? e->prev_dir : "-",
		     e->start_ns && e->start_ns <= e->end_ns);
	return 0;
}

static int fx12_resolve(void *priv, uint32_t pid, uint64_t pc, uint64_t time,
			struct op_pc_map *out)
{
	struct fx12 *f = priv;
	uint64_t base = time > 5000 ? 0x70000800 : 0x70000000;

	if (pid != 42 || pc < base || pc >= base + 0x800)
		return 0;
	out->cookie = f->image;
	out->offset = pc - base + 0x1000;
	out->anon_start = 1; /* not the plugin's to say: the host clears it */
	return 1;
}

static int fx12_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct op_proc_hook_desc ph = { .size = sizeof(ph), .on_event = fx12_proc };
	struct op_session_hook_desc sh = { .size = sizeof(sh), .name = "fx12-session",
					   .on_event = fx12_session };
	struct op_anon_resolver_desc ar = { .size = sizeof(ar), .resolve = fx12_resolve };
	struct op_proc_hook_desc bad = { .size = sizeof(bad) };
	int rc;

	(void)args;
	if (!OP_HOST_HAS(host, register_anon_resolver))
		return -ENOSYS;
	fx.ctx = ctx;
	fx.host = host;
	fx.image = host->cookie_intern(ctx, "/jit/42.jo", false);
	/* a hook without its callback is refused, and registers nothing */
	if (host->register_proc_hook(ctx, &bad, &fx) != -EINVAL)
		return -EPROTO;
	rc = host->register_proc_hook(ctx, &ph, &fx);
	if (!rc)
		rc = host->register_session_hook(ctx, &sh, &fx);
	if (!rc)
		rc = host->register_anon_resolver(ctx, &ar, &fx);
	return rc;
}

OP_EXT_DEFINE(.name = "fx_sdk12", .version = "1.2", .summary = "SDK 1.2 fixture",
	      .ext_init = fx12_init);
