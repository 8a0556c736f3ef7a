/*
 * sp_fixed.c - a fixed amount of work (N million loop iterations on one
 * CPU), for wall-time overhead benchmarks: unlike the CPU-time workloads,
 * time lost to profiling shows as a longer run.
 * Usage: sp_fixed MILLIONS
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

static __attribute__((noinline)) void fixed_work(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i;
}

int main(int argc, char **argv)
{
	unsigned long m = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;

	for (unsigned long i = 0; i < m; i++)
		fixed_work(1000000);
	return 0;
}
