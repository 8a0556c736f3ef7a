/*
 * op-demo.c - the bundled demo workload for tools/quickstart.sh and the live
 * opreport tests: two clearly named, non-inlined functions doing 3:1 work
 * (about 2 s of CPU time by default; argv[1] = milliseconds of CPU time).
 * CPU time, not wall time: on a loaded machine the run takes longer but
 * gathers as many cpu-clock samples.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* volatile sink: the loops cannot be optimised away */
static volatile uint64_t op_demo_sink;

/*
 * Each function runs its own loop (no shared helper), so the samples land in
 * the function whose name the report shows.
 */
__attribute__((noinline)) void op_demo_hot(uint64_t n)
{
	uint64_t x = 1;

	for (uint64_t i = 0; i < 3 * n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	op_demo_sink += x;
}

__attribute__((noinline)) void op_demo_cold(uint64_t n)
{
	uint64_t x = 2;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	op_demo_sink += x;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? strtol(argv[1], NULL, 10) : 2000;
	double end, start = now();
	uint64_t chunk = 200000;

	if (ms <= 0 || ms > 3600000) {
		fprintf(stderr, "op-demo: argument: run time in milliseconds (1..3600000), got %s\n",
			argv[1]);
		return 2;
	}
	end = start + (double)ms / 1000.0;
	while (now() < end) {
		op_demo_hot(chunk);
		op_demo_cold(chunk);
	}
	printf("op-demo: ran %.2f s of CPU time (op_demo_hot 3/4, op_demo_cold 1/4)\n",
	       now() - start);
	return 0;
}
