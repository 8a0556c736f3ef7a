/*
 * fx_lib.c - opreport fixture: a shared library (libfx.so) with one busy
 * function, linked by fx_c-style programs or dlopen'd by fx_dlopen.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>

volatile uint64_t fx_lib_sink;

__attribute__((noipa)) void fx_lib_work(uint64_t n)
{
	uint64_t x = 5;

	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1;
	fx_lib_sink += x;
}
