/*
 * cg_many.c - call-graph fixture with very many distinct stacks: walk()
 * recurses 16 levels choosing fa() or fb() by one bit of a counter, so the
 * counter's 2^16 values are 2^16 different stacks; then, for half as much
 * CPU time again, it runs fresh() (a stack never seen before: a third of
 * the CPU time) and kfill(), which reads /dev/zero (kernel frames).
 * Arguments: CPU milliseconds of the walk (default 2000) and of fresh()
 * (default half of it). Built with frame pointers, -fno-inline.
 * SPDX-License-Identifier: MIT
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define CG_BITS 16

static volatile unsigned long sink;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void burn(unsigned long n)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005ul + i;
	sink = x;
}

__attribute__((noinline)) void walk(unsigned level, unsigned c);

__attribute__((noinline)) void fa(unsigned level, unsigned c)
{
	walk(level + 1, c);
	sink++; /* no tail call: each level keeps its frame */
}

__attribute__((noinline)) void fb(unsigned level, unsigned c)
{
	walk(level + 1, c);
	sink++;
}

__attribute__((noinline)) void walk(unsigned level, unsigned c)
{
	if (level == CG_BITS) {
		burn(2000);
		return;
	}
	if (c >> level & 1)
		fb(level, c);
	else
		fa(level, c);
	sink++;
}

/* its own loop: the samples' leaf is fresh() itself */
__attribute__((noinline)) void fresh(double until)
{
	unsigned long x = sink;

	while (cpu_ms() < until) {
		for (unsigned long i = 0; i < 200000; i++)
			x = x * 6364136223846793005ul + i;
		sink = x;
	}
}

__attribute__((noinline)) void kfill(int fd, double until)
{
	static char buf[1 << 16];

	while (cpu_ms() < until)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
}

int main(int argc, char **argv)
{
	double walk_ms = argc > 1 ? atof(argv[1]) : 2000;
	double fresh_ms = argc > 2 ? atof(argv[2]) : walk_ms / 2;
	double t0 = cpu_ms();
	unsigned long c = 0;
	int fd = open("/dev/zero", O_RDONLY);

	while (cpu_ms() - t0 < walk_ms)
		for (unsigned i = 0; i < 256; i++)
			walk(0, (unsigned)(c++ & ((1u << CG_BITS) - 1)));
	fresh(cpu_ms() + fresh_ms);
	if (fd >= 0)
		kfill(fd, cpu_ms() + fresh_ms / 10);
	printf("%lu stacks walked\n", c);
	return 0;
}
