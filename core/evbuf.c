/*
 * evbuf.c - event-buffer writer: append sample pairs and escape records,
 * hand full buffers to the consumer (trans).
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "evbuf.h"
#include "ext.h"

/* the SDK side numbers plugin codes as the event buffer does */
_Static_assert(EVB_PLUGIN_CODE_FIRST == OP_ESCAPE_FIRST_PLUGIN, "plugin escape codes start apart");
_Static_assert(EVB_CODE_MAX == OP_ESCAPE_MAX + 1, "escape code ranges end apart");

static const struct {
	const char *name;
	int nargs;
} evb_core[EVB_CORE_CODES_END] = {
	[EVB_CTX_SWITCH] = { "ctx-switch", 3 },
	[EVB_CPU_SWITCH] = { "cpu-switch", 1 },
	[EVB_COOKIE_SWITCH] = { "cookie-switch", 1 },
	[EVB_KERNEL_ENTER] = { "kernel-enter", 0 },
	[EVB_USER_ENTER] = { "user-enter", 0 },
	[EVB_ANON_SWITCH] = { "anon-switch", 3 },
	[EVB_CPU_RESTORE] = { "cpu-restore", 1 },
	[EVB_SPLIT_SWITCH] = { "split-switch", 1 }, /* issue 20 */
};

int evb_core_nargs(uint32_t code)
{
	if (code >= EVB_CORE_CODES_END || !evb_core[code].name)
		return -1;
	return evb_core[code].nargs;
}

const char *evb_code_name(uint32_t code)
{
	if (code >= EVB_CORE_CODES_END || !evb_core[code].name)
		return NULL;
	return evb_core[code].name;
}

int evb_init(struct op_emit *w, size_t cap,
	     int (*flush)(void *priv, const uint64_t *words, size_t nwords), void *priv)
{
	if (cap < 64)
		cap = 64;
	w->buf = calloc(cap, sizeof(*w->buf));
	if (!w->buf)
		return -ENOMEM;
	w->len = 0;
	w->cap = cap;
	w->flush = flush;
	w->flush_priv = priv;
	w->too_long = 0;
	w->flushes = 0;
	return 0;
}

void evb_free(struct op_emit *w)
{
	free(w->buf);
	w->buf = NULL;
	w->len = w->cap = 0;
}

int evb_flush(struct op_emit *w)
{
	int rc = 0;

	if (w->len && w->flush)
		rc = w->flush(w->flush_priv, w->buf, w->len);
	w->flushes++;
	w->len = 0;
	return rc;
}

static inline int evb_reserve(struct op_emit *w, size_t n)
{
	if (n > w->cap) {
		w->too_long++;
		return -ENOSPC;
	}
	if (w->len + n > w->cap)
		evb_flush(w);
	return 0;
}

int evb_pair(struct op_emit *w, uint64_t offset, uint64_t counter)
{
	if (offset == EVB_ESCAPE)
		return -EINVAL;
	if (evb_reserve(w, 2))
		return -ENOSPC;
	evb_store_pair(w, offset, counter);
	return 0;
}

int evb_code(struct op_emit *w, uint32_t code, const uint64_t *args, uint32_t nargs)
{
	if (!evb_code_ok(code))
		return -EINVAL;
	if (evb_reserve(w, 3 + (size_t)nargs))
		return -ENOSPC;
	evb_store_code(w, code, args, nargs);
	return 0;
}
