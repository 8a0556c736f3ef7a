/*
 * sdk12_shim.h - LOCAL COPY of contract C1 (SDK 1.2 session hook) as the
 * contract text describes it, so that the network plugins compile before
 * the real sdk/oprofile_sdk.h 1.2 lands on main. Deleted at that merge.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PLUGINS_SDK12_SHIM_H
#define OP_PLUGINS_SDK12_SHIM_H

#include "oprofile_sdk.h"

#if OP_SDK_MINOR < 2
enum op_session_event_kind {
	OP_SESSION_START = 1,
	OP_SESSION_DUMP = 2,
	OP_SESSION_ROTATED = 3,
	OP_SESSION_STOP = 4,
};

struct op_session_event {
	uint32_t size;
	uint32_t kind;
	const char *dir;
	const char *prev_dir;
	uint64_t start, end;
};

struct op_session_hook_desc {
	uint32_t size;
	const char *name;
	void (*on_event)(void *priv, const struct op_session_event *e);
};

/* stands in for host->register_session_hook until SDK 1.2 */
static inline int op_shim_register_session_hook(const struct op_host *h, op_ext_t *ctx,
						const struct op_session_hook_desc *d, void *priv)
{
	(void)h;
	(void)ctx;
	(void)d;
	(void)priv;
	return -ENOSYS;
}
#define NP_REGISTER_SESSION_HOOK(h, ctx, d, priv) op_shim_register_session_hook(h, ctx, d, priv)
#else
#define NP_REGISTER_SESSION_HOOK(h, ctx, d, priv) \
	(OP_HOST_HAS(h, register_session_hook) ? (h)->register_session_hook(ctx, d, priv) : -ENOSYS)
#endif

#endif
