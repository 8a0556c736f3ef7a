/*
 * plugin_util.h - small helpers every bundled plugin used to repeat:
 * optional config getters and a strict decimal parser (a plugin's state is
 * its SDK 1.1 user data, host->set_user_data). Header-only (static inline),
 * so each plugin gets its own copy and stays SDK-only with no dependency on
 * another .so; prefix pu_.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PLUGINS_PLUGIN_UTIL_H
#define OP_PLUGINS_PLUGIN_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "oprofile_sdk.h"

/* ------------------------------------------------------------------ */
/* the plugin's state                                                  */
/* ------------------------------------------------------------------ */

/*
 * A zeroed state of @size bytes kept as the plugin's user data, which the
 * host frees with @free_func after ext_deinit or a failed init (so an init
 * may fail at any point without freeing it). NULL when out of memory or
 * refused (logged).
 */
static inline void *pu_state_new(const struct op_host *host, op_ext_t *ctx, size_t size,
				 void (*free_func)(void *data))
{
	void *st = calloc(1, size);

	if (!st) {
		host->log(ctx, OP_LOG_ERR, "out of memory");
		return NULL;
	}
	if (host->set_user_data(ctx, &(struct op_user_data){ .size = sizeof(struct op_user_data),
							     .data = st,
							     .free_func = free_func })) {
		free(st);
		return NULL;
	}
	return st;
}

/* ------------------------------------------------------------------ */
/* optional settings plugins.<name>.<key>                              */
/* ------------------------------------------------------------------ */

/*
 * An absent key (-ENOENT) and a host without config (-ENOSYS, or no getter)
 * both leave *found false and return 0; a type mismatch returns the host's
 * error (the host already logged it with file:line).
 */
static inline int pu_config_int64(const struct op_host *h, op_ext_t *ctx, const char *key,
				  int64_t *out, bool *found)
{
	int rc = h->config_int64 ? h->config_int64(ctx, key, out) : -ENOSYS;

	*found = !rc;
	return rc == -ENOENT || rc == -ENOSYS ? 0 : rc;
}

static inline int pu_config_string(const struct op_host *h, op_ext_t *ctx, const char *key,
				   const char **out, bool *found)
{
	int rc = h->config_string ? h->config_string(ctx, key, out) : -ENOSYS;

	*found = !rc;
	return rc == -ENOENT || rc == -ENOSYS ? 0 : rc;
}

/* ------------------------------------------------------------------ */
/* parsing                                                             */
/* ------------------------------------------------------------------ */

/* Strict decimal: digits only, no sign, space or junk, no overflow. */
static inline bool pu_parse_dec_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!s || !*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return true;
}

#endif /* OP_PLUGINS_PLUGIN_UTIL_H */
