/*
 * amd64.c - AMD64 hardware models: x86-64/family10, family15h, family17h,
 * family19h (catalogues generated from libpfm4's tables) and x86-64/generic
 * for any other AMD family from 10h on. Shared logic: plugins/common/model_pfm.c.
 * SPDX-License-Identifier: MIT
 *
 * Raw config (PERFEVTSEL): event select 7:0 -> 7:0 and 11:8 -> 35:32, unit
 * mask -> 15:8, edge 18, inv 23, cmask 31:24; user/kernel go to the
 * perf_event_attr exclude bits. Without a usable PMU every model declines
 * with the reason, and the timer model takes over.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_pfm.h"

#define AMD_VENDOR "AuthenticAMD"

static bool amd_fam10(uint32_t family, uint32_t model)
{
	(void)model;
	return family == 0x10;
}

static bool amd_fam15(uint32_t family, uint32_t model)
{
	(void)model;
	return family == 0x15;
}

static bool amd_fam17(uint32_t family, uint32_t model)
{
	(void)model;
	return family == 0x17;
}

static bool amd_fam19(uint32_t family, uint32_t model)
{
	(void)model;
	return family == 0x19;
}

/* the 16 core events of x86-64/generic exist on every family from 10h on */
static bool amd_generic(uint32_t family, uint32_t model)
{
	(void)model;
	return family >= 0x10;
}

static const struct mp_type amd64_types[] = {
	{ "amd64-family10", "x86-64/family10", 35, "amd64_fam10h_barcelona", 4,
	  "CPU_CLK_UNHALTED:100000", true, AMD_VENDOR, MP_SCORE_SPECIFIC, amd_fam10,
	  "AMD family 10h" },
	{ "amd64-family15h", "x86-64/family15h", 53, "amd64_fam15h_interlagos", 6,
	  "CPU_CLK_UNHALTED:100000", true, AMD_VENDOR, MP_SCORE_SPECIFIC, amd_fam15,
	  "AMD family 15h" },
	{ "amd64-family17h", "x86-64/family17h", 89, "amd64_fam17h_zen1,amd64_fam17h_zen2", 6,
	  "CPU_CLK_UNHALTED:100000", true, AMD_VENDOR, MP_SCORE_SPECIFIC, amd_fam17,
	  "AMD family 17h (Zen 1/2)" },
	{ "amd64-family19h", "x86-64/family19h", 90, "amd64_fam19h_zen3,amd64_fam19h_zen4", 6,
	  "CPU_CLK_UNHALTED:100000", true, AMD_VENDOR, MP_SCORE_SPECIFIC, amd_fam19,
	  "AMD family 19h (Zen 3/4)" },
	{ "amd64-generic", "x86-64/generic", 69, NULL, 4, "CPU_CLK_UNHALTED:100000", true,
	  AMD_VENDOR, MP_SCORE_GENERIC, amd_generic, "AMD family 10h or later" },
};

static int amd64_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	return mp_ext_init(ctx, host, args, "amd64", amd64_types,
			   sizeof(amd64_types) / sizeof(amd64_types[0]), "x86-64/...");
}

OP_EXT_DEFINE(.name = "amd64", .version = "1.0",
	      .summary = "AMD64 hardware models (family 10h/15h/17h/19h, generic) via libpfm4 tables",
	      .ext_init = amd64_init);
