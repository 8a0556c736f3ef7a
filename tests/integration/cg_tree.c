/*
 * cg_tree.c - call-graph fixture with a known tree: main -> mid -> leaf_b
 * (called 3 times per round) and leaf_c (once); each leaf burns the same
 * work and calls strlen() in libc for cross-binary arcs. Built with frame
 * pointers, -fno-inline. Arguments: milliseconds to run (default 2000), or
 * MS ROUNDS for a fixed number of rounds.
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;
/* through a volatile pointer, so the compiler keeps the libc call */
static size_t (*volatile cg_strlen)(const char *) = strlen;
static const char text[] = "call graphs for oprofile-ng: a string for strlen";

__attribute__((noinline)) void leaf_work(unsigned long n);

__attribute__((noinline)) void leaf_b(void)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < 200000; i++) {
		x = x * 6364136223846793005ul + i;
		if (!(i & 127))
			x += cg_strlen(text);
	}
	sink = x;
}

__attribute__((noinline)) void leaf_c(void)
{
	unsigned long x = sink;

	for (unsigned long i = 0; i < 200000; i++) {
		x = x * 6364136223846793005ul + i;
		if (!(i & 127))
			x += cg_strlen(text);
	}
	sink = x;
}

__attribute__((noinline)) void mid(void)
{
	leaf_b();
	leaf_b();
	leaf_b();
	leaf_c();
	sink++; /* no tail call: leaf_c keeps mid as its caller */
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 2000, t0 = now_ms();
	/* a second argument: exactly that many rounds (fixed work, for benchmarks) */
	unsigned long rounds = 0, max_rounds = argc > 2 ? strtoul(argv[2], NULL, 10) : 0;

	while (max_rounds ? rounds < max_rounds : now_ms() - t0 < ms) {
		mid();
		rounds++;
	}
	printf("%lu rounds\n", rounds);
	return 0;
}
