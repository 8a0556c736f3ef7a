/*
 * vendor_model.c - an out-of-tree hardware-model plugin, built only against
 * the installed SDK (pkg-config oprofile-sdk): what a CPU vendor ships to
 * teach oprofiled a new CPU without touching its sources. It claims the cpu
 * type "vendor/demo" when forced (--cpu-type=vendor/demo, e.g. for data
 * from another machine) or when cpuid says "VendorDemoCPU", and encodes two
 * events: DEMO_CYCLES (a raw PERFEVTSEL event, as a real model would) and
 * DEMO_CLOCK (the kernel's cpu-clock, so the demo also runs without a PMU).
 *   oprofiled --ext-feature=vendor_model --cpu-type=vendor/demo --events=DEMO_CLOCK:250000 -- cmd
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oprofile_sdk.h>

#define VM_CPU_TYPE "vendor/demo"
#define VM_CPU_TYPE_ID 1000u /* outside OProfile's enum (< 88) and oprofile-ng's (89, 90) */
#define VM_PERF_TYPE_SOFTWARE 1
#define VM_PERF_TYPE_RAW 4
#define VM_NR_COUNTERS 2

struct vm_state {
	op_ext_t *ctx;
	const struct op_host *host;
	unsigned placed; /* counter events of the current set */
	unsigned long long encoded;
};

static int vm_detect(void *priv, const struct op_cpuinfo *ci, char *why, size_t why_len)
{
	struct vm_state *s = priv;

	if (ci->forced_cpu_type) {
		if (strcmp(ci->forced_cpu_type, VM_CPU_TYPE))
			return 0;
		s->placed = 0;
		return 900; /* forced: above any detected model */
	}
	if (strcmp(ci->vendor, "VendorDemoCPU"))
		return 0; /* not our vendor: say nothing */
	if (!ci->pmu_usable) {
		snprintf(why, why_len, "VendorDemoCPU family %u: no usable PMU", ci->family);
		return 0;
	}
	s->placed = 0;
	return 100;
}

static const char *vm_cpu_type(void *priv, uint32_t *id)
{
	(void)priv;
	if (id)
		*id = VM_CPU_TYPE_ID;
	return VM_CPU_TYPE;
}

static int vm_encode(void *priv, const struct op_event_req *ev, struct op_perf_attr *attr,
		     char *err, size_t err_len)
{
	struct vm_state *s = priv;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	if (!strcmp(ev->name, "DEMO_CYCLES")) {
		if (ev->um > 0xff) {
			snprintf(err, err_len, "DEMO_CYCLES: unit mask 0x%x does not fit 8 bits",
				 ev->um);
			return -EINVAL;
		}
		attr->type = VM_PERF_TYPE_RAW;
		attr->config = 0x76 | (uint64_t)ev->um << 8;
	} else if (!strcmp(ev->name, "DEMO_CLOCK")) {
		attr->type = VM_PERF_TYPE_SOFTWARE;
		attr->config = 0; /* PERF_COUNT_SW_CPU_CLOCK */
	} else {
		snprintf(err, err_len, "%s is not an event of %s (DEMO_CYCLES, DEMO_CLOCK)",
			 ev->name, VM_CPU_TYPE);
		return -EINVAL;
	}
	if (!ev->count) {
		snprintf(err, err_len, "%s: give a count (NAME:count)", ev->name);
		return -EINVAL;
	}
	if (s->placed == VM_NR_COUNTERS) {
		snprintf(err, err_len, "Too many events specified: CPU only has %u counters.",
			 VM_NR_COUNTERS);
		return -EINVAL;
	}
	s->placed++;
	attr->sample_period = ev->count;
	attr->exclude_kernel = !ev->kernel;
	attr->exclude_user = !ev->user;
	s->encoded++;
	return 0;
}

static void vm_print_stats(void *priv, const struct op_stats_sink *sink)
{
	struct vm_state *s = priv;

	if (sink->counter)
		sink->counter(sink, "events_encoded", s->encoded);
}

static const struct op_stats_ops vm_stats = {
	.size = sizeof(struct op_stats_ops),
	.print_stats = vm_print_stats,
};

static const struct op_model_desc vm_model = {
	.size = sizeof(struct op_model_desc),
	.name = "vendor-demo",
	.detect = vm_detect,
	.cpu_type = vm_cpu_type,
	.nr_counters = VM_NR_COUNTERS,
	.default_event = "DEMO_CLOCK:250000",
	.encode = vm_encode,
};

static int vm_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct vm_state *vm;
	int rc;

	(void)args;
	vm = calloc(1, sizeof(*vm));
	if (!vm)
		return -ENOMEM;
	vm->ctx = ctx;
	vm->host = host;
	/* SDK 1.1: the host frees the state after ext_deinit or a failed init */
	rc = host->set_user_data(ctx, &(struct op_user_data){ .size = sizeof(struct op_user_data),
							      .data = vm,
							      .free_func = free });
	if (rc) {
		free(vm);
		return rc;
	}
	rc = host->register_model(ctx, &vm_model, vm);
	if (!rc)
		rc = host->register_stats(ctx, &vm_stats, vm);
	if (rc)
		host->log(ctx, OP_LOG_ERR, "registration failed: %s", strerror(-rc));
	return rc;
}

OP_EXT_DEFINE(.name = "vendor_model", .version = "1.0",
	      .summary = "example out-of-tree hardware model (cpu type vendor/demo)",
	      .ext_init = vm_init);
