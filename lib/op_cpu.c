/*
 * op_cpu.c - cpu_type value <-> events/ directory name table.
 *
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "op_cpu.h"

static const struct {
	int type;
	const char *name;
	unsigned nr_counters;
} cpus[] = {
	{ OP_CPU_PPRO, "i386/ppro", 2 },
	{ OP_CPU_ATHLON, "i386/athlon", 4 },
	{ OP_CPU_TIMER_INT, "timer", 1 },
	{ OP_CPU_HAMMER, "x86-64/hammer", 4 },
	{ OP_CPU_FAMILY10, "x86-64/family10", 4 },
	{ OP_CPU_ARCH_PERFMON, "i386/arch_perfmon", 0 },
	{ OP_CPU_FAMILY15H, "x86-64/family15h", 6 },
	{ OP_CPU_SANDYBRIDGE, "i386/sandybridge", 0 },
	{ OP_CPU_HASWELL, "i386/haswell", 0 },
	{ OP_CPU_AMD64_GENERIC, "x86-64/generic", 4 },
	{ OP_CPU_SKYLAKE, "i386/skylake", 0 },
	{ OP_CPU_ARMV8_THUNDERX2, "arm/armv8-thunderx2", 0 },
	{ OP_CPU_FAMILY17H, "x86-64/family17h", 6 },
	{ OP_CPU_FAMILY19H, "x86-64/family19h", 6 },
};

#define NR_CPUS (sizeof(cpus) / sizeof(cpus[0]))

const char *op_cpu_name(int cpu_type)
{
	for (size_t i = 0; i < NR_CPUS; i++)
		if (cpus[i].type == cpu_type)
			return cpus[i].name;
	return "invalid cpu type";
}

int op_cpu_from_name(const char *name)
{
	for (size_t i = 0; name && i < NR_CPUS; i++)
		if (!strcmp(cpus[i].name, name))
			return cpus[i].type;
	return -1;
}

unsigned op_cpu_nr_counters(int cpu_type)
{
	for (size_t i = 0; i < NR_CPUS; i++)
		if (cpus[i].type == cpu_type)
			return cpus[i].nr_counters;
	return 0;
}

bool op_cpu_has_events(int cpu_type)
{
	return cpu_type != OP_CPU_TIMER_INT && op_cpu_from_name(op_cpu_name(cpu_type)) == cpu_type;
}
