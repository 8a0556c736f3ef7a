/*
 * sp_dlopen.c - dlopen()s LIB and spends MS milliseconds of CPU time in its
 * sp_lib_hot() (built as a PIE and as a non-PIE main program).
 * Usage: sp_dlopen LIB MS
 * SPDX-License-Identifier: MIT
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	unsigned long (*hot)(long);
	void *h;

	if (argc != 3) {
		fprintf(stderr, "usage: sp_dlopen LIB MS\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW);
	if (!h) {
		fprintf(stderr, "sp_dlopen: %s\n", dlerror());
		return 1;
	}
	*(void **)&hot = dlsym(h, "sp_lib_hot");
	if (!hot) {
		fprintf(stderr, "sp_dlopen: %s\n", dlerror());
		return 1;
	}
	printf("%lu\n", hot(atol(argv[2])));
	return 0;
}
