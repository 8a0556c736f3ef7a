/*
 * fx_mark.c - a well-formed fixture plugin whose constructor leaves a mark
 * file ($FX_CTOR_MARK): the trust tests see whether the loader ran code of a
 * file it refused. Built twice: fx_mark (GNU hash) and, with FX_SYSV,
 * fx_mark_sysv (DT_HASH only), for the reader of the dynamic segment.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>

#include "oprofile_sdk.h"

#if defined(FX_SYSV)
#define FX_NAME "fx_mark_sysv"
#elif defined(FX_NODEL)
#define FX_NAME "fx_nodel"
#else
#define FX_NAME "fx_mark"
#endif

/* plugin code that runs at dlopen, before ext_init */
__attribute__((constructor)) static void fx_ctor(void)
{
	const char *mark = getenv("FX_CTOR_MARK");
	FILE *f = mark ? fopen(mark, "w") : NULL;

	if (f)
		fclose(f);
}

static int fx_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	(void)args;
	host->log(ctx, OP_LOG_INFO, "fx_mark init");
	return 0;
}

OP_EXT_DECLARE(FX_NAME, "1.0", "fixture: its constructor leaves a mark file", fx_init, NULL);
