/*
 * fx_c.c - opreport fixture: a C program with named, non-inlined functions
 * doing 3:1:... work; argv[1] = milliseconds to run (0: return at once).
 * Also built -no-pie (fx_nopie) and stripped with -rdynamic (fx_stripped).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile uint64_t fx_sink;

__attribute__((noipa)) void fx_hot(uint64_t n)
{
	uint64_t x = 1;

	for (uint64_t i = 0; i < 3 * n; i++)
		x = x * 6364136223846793005ull + 1;
	fx_sink += x;
}

__attribute__((noipa)) void fx_warm(uint64_t n)
{
	uint64_t x = 2;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1;
	fx_sink += x;
}

__attribute__((noipa)) void fx_cold(uint64_t n)
{
	uint64_t x = 3;

	for (uint64_t i = 0; i < n / 8; i++)
		x = x * 6364136223846793005ull + 1;
	fx_sink += x;
}

static double fx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = fx_now() + (argc > 1 ? atof(argv[1]) / 1000.0 : 0.0);

	do {
		fx_hot(100000);
		fx_warm(100000);
		fx_cold(100000);
	} while (fx_now() < end);
	puts("fx_c done");
	return 0;
}
