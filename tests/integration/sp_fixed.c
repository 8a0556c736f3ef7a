/*
 * sp_fixed.c - a fixed amount of work (N million loop iterations on one
 * CPU), for wall-time overhead benchmarks: unlike the CPU-time workloads,
 * time lost to profiling shows as a longer run.
 * Usage: sp_fixed MILLIONS
 * With SP_FIXED_TIME=FILE in the environment it also writes one line
 * "WALL_NS CPU_NS" to FILE: CLOCK_MONOTONIC and CLOCK_PROCESS_CPUTIME_ID
 * elapsed over the work loop alone (no exec, loading or exit), so a
 * benchmark can tell a profiler's sampling cost from its start-up cost.
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static __attribute__((noinline)) void fixed_work(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

static uint64_t ns_of(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned long m = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	const char *out = getenv("SP_FIXED_TIME");
	uint64_t w0, c0, w1, c1;
	FILE *f;

	w0 = ns_of(CLOCK_MONOTONIC);
	c0 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
	for (unsigned long i = 0; i < m; i++)
		fixed_work(1000000);
	w1 = ns_of(CLOCK_MONOTONIC);
	c1 = ns_of(CLOCK_PROCESS_CPUTIME_ID);
	if (!out || !*out)
		return 0;
	f = fopen(out, "w");
	if (!f) {
		perror(out);
		return 1;
	}
	fprintf(f, "%llu %llu\n", (unsigned long long)(w1 - w0), (unsigned long long)(c1 - c0));
	if (fclose(f)) {
		perror(out);
		return 1;
	}
	return 0;
}
