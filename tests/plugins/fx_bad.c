/*
 * fx_bad.c - fixture plugins with descriptors the loader must refuse before
 * running ext_init; built once per FX_BAD_* variant (tests/plugins/local.mk).
 * ext_init returns -EPROTO so that a wrongly accepted fixture is visible; a
 * constructor leaves a mark file so the test sees whether dlopen ran it.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "oprofile_sdk.h"

/* plugin code that runs at dlopen: leaves a mark the test looks for */
__attribute__((constructor)) static void fx_ctor(void)
{
	const char *mark = getenv("FX_CTOR_MARK");
	FILE *f = mark ? fopen(mark, "w") : NULL;

	if (f)
		fclose(f);
}

__attribute__((unused)) static int fx_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	(void)args;
	host->log(ctx, OP_LOG_ERR, "ext_init of a refused fixture ran");
	return -EPROTO;
}

#if defined(FX_BAD_NODESC)
/* no descriptor at all, just some code */
__attribute__((visibility("default"))) int fx_nodesc_entry(void);
int fx_nodesc_entry(void)
{
	return fx_init(NULL, NULL, "");
}
#else
#if defined(FX_BAD_MAJOR)
#define FX_NAME "fx_major"
#define FX_MAJOR (OP_SDK_MAJOR + 1)
#elif defined(FX_BAD_MAJOR_SYSV)
#define FX_NAME "fx_major_sysv"
#define FX_MAJOR (OP_SDK_MAJOR + 1)
#elif defined(FX_BAD_MINOR)
#define FX_NAME "fx_minor"
#define FX_MINOR (OP_SDK_MINOR + 1)
#elif defined(FX_BAD_SMALL)
#define FX_NAME "fx_small"
#define FX_SIZE 64
#elif defined(FX_BAD_RESERVED)
#define FX_NAME "fx_reserved"
#define FX_RESERVED { 0, 0, (void *)0x1 }
#elif defined(FX_BAD_STEM)
#define FX_NAME "something_else"
#elif defined(FX_BAD_NOINIT)
#define FX_NAME "fx_noinit"
#define FX_INIT NULL
#elif defined(FX_BAD_FLAGS)
#define FX_NAME "fx_flags"
#define FX_FLAGS 0x80000000u
#else
#error "define one FX_BAD_* variant"
#endif
#ifndef FX_MAJOR
#define FX_MAJOR OP_SDK_MAJOR
#endif
#ifndef FX_MINOR
#define FX_MINOR OP_SDK_MINOR
#endif
#ifndef FX_SIZE
#define FX_SIZE sizeof(struct op_ext_descriptor)
#endif
#ifndef FX_RESERVED
#define FX_RESERVED { 0 }
#endif
#ifndef FX_INIT
#define FX_INIT fx_init
#endif
#ifndef FX_FLAGS
#define FX_FLAGS 0
#endif

__attribute__((visibility("default"))) extern const struct op_ext_descriptor oprofile_ext_v1;
const struct op_ext_descriptor oprofile_ext_v1 = {
	.abi_major = FX_MAJOR,
	.abi_minor = FX_MINOR,
	.size = FX_SIZE,
	.flags = FX_FLAGS,
	.name = FX_NAME,
	.version = "0.0",
	.summary = "fixture: a descriptor to refuse",
	.ext_init = FX_INIT,
	.reserved = FX_RESERVED,
};
#endif
