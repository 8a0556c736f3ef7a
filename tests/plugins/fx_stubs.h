/*
 * fx_stubs.h - no-op callbacks shared by the fixture plugins fx_fail.c,
 * fx_invalid.c and fx_clash.c (each registers some of them; static inline so
 * the unused ones cost nothing). Include after oprofile_sdk.h.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_TESTS_FX_STUBS_H
#define OP_TESTS_FX_STUBS_H

#include <errno.h>
#include <stddef.h>

#include "oprofile_sdk.h"

static inline int fx_escape(void *priv, const struct op_trans_view *t, const uint64_t *args,
			    uint32_t nargs)
{
	(void)priv; (void)t; (void)args; (void)nargs;
	return 0;
}

static inline op_sample_file_t *fx_sf_get(void *priv, op_sfile_t *sf, void *sf_priv,
					  const struct op_trans_view *t, uint32_t counter,
					  bool is_cg)
{
	(void)priv; (void)sf; (void)sf_priv; (void)t; (void)counter; (void)is_cg;
	return NULL;
}

static inline int fx_on_sample(void *priv, const struct op_perf_sample *s, op_emit_t *w)
{
	(void)priv; (void)s; (void)w;
	return 0;
}

static inline int fx_detect(void *priv, const struct op_cpuinfo *ci, char *why, size_t why_len)
{
	(void)priv; (void)ci; (void)why; (void)why_len;
	return 0;
}

static inline int fx_encode(void *priv, const struct op_event_req *ev, struct op_perf_attr *attr,
			    char *err, size_t err_len)
{
	(void)priv; (void)ev; (void)attr; (void)err; (void)err_len;
	return -EINVAL;
}

static inline int fx_resolve(void *priv, uint64_t pc, struct op_kernel_image *out)
{
	(void)priv; (void)pc; (void)out;
	return -ENOENT;
}

#endif /* OP_TESTS_FX_STUBS_H */
