/*
 * hot.c - workload of tests/integration/hot.sh: two functions that are
 * never inlined, with the same code (each its own sink, so the compiler
 * cannot fold them into one) at the same alignment, called with n and 3n:
 * work_big takes 3x the time of work_small. The loop is a multiply chain
 * held in registers: its speed does not depend on where the loop lies
 * (a load/store loop crossing a fetch boundary in one function and not in
 * the other ran 2x slower per iteration on an AMD Zen 4). Argument:
 * milliseconds of CPU to burn (default 3000).
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink_small, sink_big;

#define SPIN(sink, n)                                                           \
	do {                                                                    \
		unsigned long i_, x_ = (n);                                     \
		for (i_ = 0; i_ < (n); i_++)                                    \
			x_ = x_ * 6364136223846793005ul + 1442695040888963407ul; \
		sink += x_;                                                     \
	} while (0)

__attribute__((noinline, aligned(64))) void work_small(unsigned long n)
{
	SPIN(sink_small, n);
}

__attribute__((noinline, aligned(64))) void work_big(unsigned long n)
{
	SPIN(sink_big, n);
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
		work_big(3 * 200000);
	}
	return argc > 2 ? atoi(argv[2]) : 0;
}
