/*
 * fx_dlopen.c - opreport fixture: dlopen()s the library given as argv[1]
 * and runs its fx_lib_work for argv[2] milliseconds, so that a profile has
 * samples in a library that was not linked in.
 *
 * SPDX-License-Identifier: MIT
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double fx_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	void (*work)(uint64_t);
	void *h;
	double end;

	if (argc < 3) {
		fprintf(stderr, "usage: fx_dlopen LIBRARY MILLISECONDS\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "fx_dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&work = dlsym(h, "fx_lib_work");
	if (!work) {
		fprintf(stderr, "fx_dlopen: %s\n", dlerror());
		return 1;
	}
	end = fx_now() + atof(argv[2]) / 1000.0;
	do
		work(1000000);
	while (fx_now() < end);
	puts("fx_dlopen done");
	return 0;
}
