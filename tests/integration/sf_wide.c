/*
 * sf_wide.c - workload of tests/integration/sfile_stress.sh: a wide code
 * footprint, so that its samples keep bringing new keys (file offsets) to
 * its sample file and the file's table keeps growing. 4096 functions
 * (never inlined, each its own short loop) are called in a pseudo-random
 * order until the CPU time is spent. Arguments: milliseconds of CPU
 * (default 3000) and a seed (default the pid), so two copies sample
 * different keys first.
 * SPDX-License-Identifier: MIT
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

/* one function: a loop whose length varies with its number */
#define F(n)                                                            \
	static __attribute__((noinline)) void f##n(unsigned long x)     \
	{                                                               \
		unsigned long i;                                        \
		for (i = 0; i < 40 + (n) % 23; i++)                     \
			x = x * 6364136223846793005ul + (n);            \
		sink += x;                                              \
	}
#define F4(n) F(n##0) F(n##1) F(n##2) F(n##3)
#define F16(n) F4(n##0) F4(n##1) F4(n##2) F4(n##3)
#define F64(n) F16(n##0) F16(n##1) F16(n##2) F16(n##3)
#define F256(n) F64(n##0) F64(n##1) F64(n##2) F64(n##3)
#define F1024(n) F256(n##0) F256(n##1) F256(n##2) F256(n##3)
F1024(10)
F1024(11)
F1024(12)
F1024(13)

#define P(n) f##n,
#define P4(n) P(n##0) P(n##1) P(n##2) P(n##3)
#define P16(n) P4(n##0) P4(n##1) P4(n##2) P4(n##3)
#define P64(n) P16(n##0) P16(n##1) P16(n##2) P16(n##3)
#define P256(n) P64(n##0) P64(n##1) P64(n##2) P64(n##3)
#define P1024(n) P256(n##0) P256(n##1) P256(n##2) P256(n##3)
static void (*const fns[])(unsigned long) = { P1024(10) P1024(11) P1024(12) P1024(13) };

#define NR_FNS (sizeof(fns) / sizeof(fns[0]))

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 3000;
	unsigned long x = argc > 2 ? strtoul(argv[2], NULL, 0) : (unsigned long)getpid();
	unsigned i;

	_Static_assert(sizeof(fns) / sizeof(fns[0]) == 4096, "4096 functions");
	while (cpu_ms() < ms) {
		for (i = 0; i < 4096; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			fns[x % NR_FNS](x);
		}
	}
	return 0;
}
