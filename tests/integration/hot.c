/*
 * hot.c - workload of tests/integration/hot.sh: two functions that are
 * never inlined, work_big doing exactly 3x the loop iterations of
 * work_small with the same loop body. Argument: milliseconds of CPU to burn
 * (default 3000).
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

#define SPIN(n)                                        \
	do {                                           \
		unsigned long i_;                      \
		for (i_ = 0; i_ < (n); i_++)           \
			sink += i_;                    \
	} while (0)

__attribute__((noinline)) void work_small(unsigned long n)
{
	SPIN(n);
}

__attribute__((noinline)) void work_big(unsigned long n)
{
	SPIN(3 * n);
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	double budget = argc > 1 ? atof(argv[1]) : 3000.0;
	double start = cpu_ms();

	/* whole rounds only, so that the 1:3 split holds exactly */
	while (cpu_ms() - start < budget) {
		work_small(200000);
		work_big(200000);
	}
	return argc > 2 ? atoi(argv[2]) : 0;
}
