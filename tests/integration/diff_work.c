/*
 * diff_work.c - workload of tests/integration/report_diff.sh: two functions
 * of the same code (hot.c's multiply chain, each its own sink), called with
 * a split the arguments choose: "diff_work MS A B" burns MS milliseconds of
 * CPU with A:B rounds of diff_one:diff_two. "diff_work MS A B extra" also
 * runs diff_extra, a third function, as long as diff_two: a symbol that only
 * this run has (the +++ / --- case).
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink_one, sink_two, sink_extra;

#define SPIN(sink, n)                                                           \
	do {                                                                    \
		unsigned long i_, x_ = (n);                                     \
		for (i_ = 0; i_ < (n); i_++)                                    \
			x_ = x_ * 6364136223846793005ul + 1442695040888963407ul; \
		sink += x_;                                                     \
	} while (0)

__attribute__((noinline, aligned(64))) void diff_one(unsigned long n)
{
	SPIN(sink_one, n);
}

__attribute__((noinline, aligned(64))) void diff_two(unsigned long n)
{
	SPIN(sink_two, n);
}

__attribute__((noinline, aligned(64))) void diff_extra(unsigned long n)
{
	SPIN(sink_extra, n);
}

static double diff_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	double budget = argc > 1 ? atof(argv[1]) : 2000.0;
	unsigned long a = argc > 2 ? strtoul(argv[2], NULL, 10) : 1;
	unsigned long b = argc > 3 ? strtoul(argv[3], NULL, 10) : 1;
	int extra = argc > 4 && !strcmp(argv[4], "extra");
	double start = diff_cpu_ms();

	/* whole rounds only, so that the split holds exactly */
	while (diff_cpu_ms() - start < budget) {
		diff_one(100000 * a);
		diff_two(100000 * b);
		if (extra)
			diff_extra(100000 * b);
	}
	return 0;
}
