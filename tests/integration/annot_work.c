/*
 * annot_work.c - workload of tests/integration/opannotate.sh, built -O2 -g:
 * annot_hot spends its time on one source line (marked ANNOT_HOT_LINE),
 * annot_inl calls annot_mix, which is always inlined (its body lines and
 * the line calling it are marked ANNOT_MIX_BODY, ANNOT_MIX_CALL), with a
 * third of annot_hot's work. Argument: milliseconds of CPU (default 2000).
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long annot_sink;

static inline __attribute__((always_inline)) unsigned long annot_mix(unsigned long x)
{
	x ^= x >> 13; x *= 0x9e3779b97f4a7c15ul; x ^= x >> 29; /* ANNOT_MIX_BODY */
	return x;
}

__attribute__((noinline)) void annot_hot(unsigned long n)
{
	unsigned long i, x = n;

	for (i = 0; i < n; i++) x = x * 6364136223846793005ul + 1442695040888963407ul; /* ANNOT_HOT_LINE */
	annot_sink += x;
}

__attribute__((noinline)) void annot_inl(unsigned long n)
{
	unsigned long i, x = n;

	for (i = 0; i < n; i++)
		x = annot_mix(x + i); /* ANNOT_MIX_CALL */
	annot_sink += x;
}

static double annot_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	double budget = argc > 1 ? atof(argv[1]) : 2000.0;
	double start = annot_cpu_ms();

	while (annot_cpu_ms() - start < budget) {
		annot_hot(600000);
		annot_inl(100000);
	}
	return 0;
}
