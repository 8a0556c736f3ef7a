/*
 * intel.c - Intel hardware models: i386/skylake (catalogue generated from
 * libpfm4's skl table) and i386/arch_perfmon (the architectural events of
 * CPUID leaf 0xA) for any other family-6 Intel CPU. Shared logic:
 * plugins/common/model_pfm.c.
 * SPDX-License-Identifier: MIT
 *
 * Raw config (IA32_PERFEVTSELx): event select 7:0, unit mask 15:8, edge 18,
 * any-thread 21, inv 23, cmask 31:24; user/kernel go to the
 * perf_event_attr exclude bits. Without a usable PMU every model declines
 * with the reason, and the timer model takes over.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_pfm.h"

#define INTEL_VENDOR "GenuineIntel"

/* Skylake client/server and its Kaby/Coffee/Comet Lake refreshes */
static bool intel_skylake(uint32_t family, uint32_t model)
{
	static const uint32_t models[] = { 0x4e, 0x5e, 0x55, 0x8e, 0x9e, 0xa5, 0xa6 };
	size_t i;

	if (family != 6)
		return false;
	for (i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (models[i] == model)
			return true;
	return false;
}

static bool intel_arch(uint32_t family, uint32_t model)
{
	(void)model;
	return family == 6;
}

/*
 * 4 general-purpose counters per hardware thread with Hyper-Threading on
 * (libpfm4's tables assume 8, HT off); fixed counters are left to the kernel.
 */
static const struct mp_type intel_types[] = {
	{ "intel-skylake", "i386/skylake", 80, "skl,skx", 4, "CPU_CLK_UNHALTED:100000", false,
	  INTEL_VENDOR, MP_SCORE_SPECIFIC, intel_skylake, "Intel Skylake" },
	{ "intel-arch_perfmon", "i386/arch_perfmon", 41, NULL, 4, "CPU_CLK_UNHALTED:100000", false,
	  INTEL_VENDOR, MP_SCORE_GENERIC, intel_arch, "Intel family 6" },
};

static int intel_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	return mp_ext_init(ctx, host, args, "intel", intel_types,
			   sizeof(intel_types) / sizeof(intel_types[0]), "i386/...");
}

OP_EXT_DEFINE(.name = "intel", .version = "1.0",
	      .summary = "Intel hardware models (Skylake, architectural perfmon) via libpfm4 tables",
	      .ext_init = intel_init);
