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
	{ "intel-arch_perfmon", "i386/arch_perfmon", 41, NULL, 4, "CPU_CLK_UNHALTED:100000",
	  false, INTEL_VENDOR, MP_SCORE_GENERIC, intel_arch, "Intel family 6" },
};

static struct {
	op_ext_t *ctx;
	struct mp_plugin *pl;
} intel_instances[4];

static int intel_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct mp_plugin *pl;
	size_t i;
	int rc;

	if (args && *args) {
		host->log(ctx, OP_LOG_ERR, "unexpected arguments '%s': the intel plugin takes "
			  "none (force a cpu type with --cpu-type=i386/...)", args);
		return -EINVAL;
	}
	for (i = 0; i < sizeof(intel_instances) / sizeof(intel_instances[0]); i++)
		if (!intel_instances[i].ctx)
			break;
	if (i == sizeof(intel_instances) / sizeof(intel_instances[0])) {
		host->log(ctx, OP_LOG_ERR, "too many intel plugin instances");
		return -ENOSPC;
	}
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	rc = mp_plugin_init(pl, ctx, host, "intel", intel_types,
			    sizeof(intel_types) / sizeof(intel_types[0]));
	if (rc) {
		free(pl);
		return rc;
	}
	intel_instances[i].ctx = ctx;
	intel_instances[i].pl = pl;
	return 0;
}

static void intel_deinit(op_ext_t *ctx)
{
	size_t i;

	for (i = 0; i < sizeof(intel_instances) / sizeof(intel_instances[0]); i++) {
		if (intel_instances[i].ctx != ctx)
			continue;
		mp_plugin_fini(intel_instances[i].pl);
		free(intel_instances[i].pl);
		intel_instances[i].ctx = NULL;
		intel_instances[i].pl = NULL;
	}
}

OP_EXT_DECLARE("intel", "1.0", "Intel hardware models (Skylake, architectural perfmon) via "
	       "libpfm4 tables", intel_init, intel_deinit);
