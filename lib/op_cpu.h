/*
 * op_cpu.h - OProfile cpu_type values (the sample-file header's cpu_type)
 * and their events/ directory names. Values are those of
 * notes/oprofile-format.md section 5, plus i386/arch_perfmon (41): the 0.9.x
 * enum order without the types 1.x dropped (rtc, ia64, alpha ev4-ev6/pca56,
 * cell-be, pa6t, avr32, ibm-compat-v1), which reproduces the notes' anchors
 * hammer 6, family10 35 and family15h 53. Other types are unknown to us.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CPU_H
#define OP_CPU_H

#include <stdbool.h>

enum op_cpu {
	OP_CPU_PPRO = 0,
	OP_CPU_ATHLON = 3,
	OP_CPU_TIMER_INT = 4,
	OP_CPU_HAMMER = 6,
	OP_CPU_FAMILY10 = 35,
	OP_CPU_ARCH_PERFMON = 41,
	OP_CPU_FAMILY15H = 53,
	OP_CPU_SANDYBRIDGE = 57,
	OP_CPU_HASWELL = 67,
	OP_CPU_AMD64_GENERIC = 69,
	OP_CPU_SKYLAKE = 80,
	OP_CPU_ARMV8_THUNDERX2 = 87,
	OP_MAX_CPU_TYPE = 88,
	/*
	 * Not in OProfile's enum (it stopped at Skylake and family 15h): values
	 * after its MAX_CPU_TYPE, so they never collide with an OProfile type.
	 * OProfile's own tools call them "invalid cpu type", which is true.
	 */
	OP_CPU_FAMILY17H = 89,
	OP_CPU_FAMILY19H = 90,
};

/* "x86-64/generic", "timer", ...; "invalid cpu type" for an unknown value. */
const char *op_cpu_name(int cpu_type);

/* The value for an events/ directory name, or -1. */
int op_cpu_from_name(const char *name);

/* Counters of the type, 0 when not known (architecture-defined / cpuid). */
unsigned op_cpu_nr_counters(int cpu_type);

/* The type has an events/ directory (everything but timer). */
bool op_cpu_has_events(int cpu_type);

#endif /* OP_CPU_H */
