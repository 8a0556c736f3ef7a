/*
 * sp_churn.c - process churn: N times fork + exec of itself as a
 * short-lived child that spins US microseconds of CPU time and exits.
 * Usage: sp_churn N US
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sp_work.h"

static volatile unsigned long sink;

/*
 * The clock is a system call (CLOCK_PROCESS_CPUTIME_ID has no vDSO path):
 * read it every ~20 us of work, so that the child's time is spent here and
 * not in the kernel reading it
 */
static __attribute__((noinline)) void child_spin(long us)
{
	long long end = sp_cpu_ns(CLOCK_PROCESS_CPUTIME_ID) + us * 1000ll;
	unsigned long x = 1;

	while (sp_cpu_ns(CLOCK_PROCESS_CPUTIME_ID) < end)
		for (int i = 0; i < 10000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink += x;
}

int main(int argc, char **argv)
{
	long n, i;
	int st, bad = 0;

	if (argc == 3 && !strcmp(argv[1], "--child")) {
		child_spin(atol(argv[2]));
		return 0;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: sp_churn N US\n");
		return 2;
	}
	n = atol(argv[1]);
	for (i = 0; i < n; i++) {
		pid_t p = fork();

		if (p < 0)
			return 1;
		if (!p) {
			execl("/proc/self/exe", argv[0], "--child", argv[2], (char *)NULL);
			_exit(127);
		}
		if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	printf("%ld children, %d failed\n", n, bad);
	return bad != 0;
}
