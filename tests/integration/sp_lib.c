/*
 * sp_lib.c - libsphot: the dlopen'd library of the libraries test; all
 * its time is spent inside sp_lib_hot().
 * SPDX-License-Identifier: MIT
 */
#include "sp_work.h"

unsigned long sp_lib_hot(long ms);

__attribute__((noinline)) unsigned long sp_lib_hot(long ms)
{
	long long end = sp_cpu_ns(CLOCK_PROCESS_CPUTIME_ID) + ms * 1000000ll;
	unsigned long x = 0;

	while (sp_cpu_ns(CLOCK_PROCESS_CPUTIME_ID) < end)
		for (int i = 0; i < 20000; i++)
			x = x * 33 + (unsigned long)i;
	return x;
}
