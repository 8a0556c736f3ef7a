/* count_workloads.c - deterministic workloads for opcount's tests and the
 * perf stat cross-check: touch N fresh pages, fork K children touching M
 * pages, pipe ping-pong on one CPU, spin for a CPU time (and linger), T
 * threads.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long cw_arg(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0) {
		fprintf(stderr, "count_workloads: %s '%s': expected a number >= 0\n", what, s);
		exit(2);
	}
	return v;
}

/* one write fault per page: private anonymous memory, no THP */
static int cw_touch(long pages)
{
	long ps = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)pages * (size_t)ps;
	volatile char *p;

	if (!pages)
		return 0;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("count_workloads: mmap");
		return 1;
	}
	madvise((void *)p, len, MADV_NOHUGEPAGE);
	for (long i = 0; i < pages; i++)
		p[i * ps] = 1;
	munmap((void *)p, len);
	return 0;
}

static int cw_fork(long k, long m)
{
	for (long i = 0; i < k; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("count_workloads: fork");
			return 1;
		}
		if (pid == 0)
			_exit(cw_touch(m));
	}
	while (wait(NULL) > 0)
		;
	return 0;
}

static void cw_pin0(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* n round trips parent <-> child over two pipes, both on CPU 0: every
 * blocking read is a context switch */
static int cw_pingpong(long n)
{
	int a[2], b[2];
	char c = 'x';
	pid_t pid;

	if (pipe(a) || pipe(b)) {
		perror("count_workloads: pipe");
		return 1;
	}
	cw_pin0();
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (long i = 0; i < n; i++)
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	for (long i = 0; i < n; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			return 1;
	waitpid(pid, NULL, 0);
	return 0;
}

static double cw_cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cw_spin(long ms)
{
	double end = cw_cpu_s() + ms / 1000.0;
	volatile unsigned long x = 0;

	while (cw_cpu_s() < end)
		for (int i = 0; i < 10000; i++)
			x += (unsigned long)i;
	return 0;
}

static long cw_thread_pages;

static void *cw_thread(void *arg)
{
	(void)arg;
	cw_touch(cw_thread_pages);
	return NULL;
}

static int cw_threads(long t, long m)
{
	pthread_t th[64];

	if (t > 64)
		t = 64;
	cw_thread_pages = m;
	for (long i = 0; i < t; i++)
		if (pthread_create(&th[i], NULL, cw_thread, NULL))
			return 1;
	for (long i = 0; i < t; i++)
		pthread_join(th[i], NULL);
	return 0;
}

/* run for s seconds touching m pages every 10 ms (a target for --pid) */
static int cw_loop(long s, long m)
{
	struct timespec d = { 0, 10000000 };

	for (long i = 0; i < s * 100; i++) {
		cw_touch(m);
		nanosleep(&d, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *w = argc > 1 ? argv[1] : "";

	if (!strcmp(w, "touch") && argc == 3)
		return cw_touch(cw_arg(argv[2], "pages"));
	if (!strcmp(w, "fork") && argc == 4)
		return cw_fork(cw_arg(argv[2], "children"), cw_arg(argv[3], "pages"));
	if (!strcmp(w, "pingpong") && argc == 3)
		return cw_pingpong(cw_arg(argv[2], "round trips"));
	if (!strcmp(w, "spin") && argc == 3)
		return cw_spin(cw_arg(argv[2], "milliseconds"));
	/* spin, then stay: a profiler that reads /proc at the exec finds it */
	if (!strcmp(w, "spin") && argc == 4) {
		long linger = cw_arg(argv[3], "linger milliseconds");
		struct timespec d = { linger / 1000, linger % 1000 * 1000000 };

		cw_spin(cw_arg(argv[2], "milliseconds"));
		nanosleep(&d, NULL);
		return 0;
	}
	if (!strcmp(w, "threads") && argc == 4)
		return cw_threads(cw_arg(argv[2], "threads"), cw_arg(argv[3], "pages"));
	if (!strcmp(w, "loop") && argc == 4)
		return cw_loop(cw_arg(argv[2], "seconds"), cw_arg(argv[3], "pages"));
	if (!strcmp(w, "exit") && argc == 3)
		return (int)cw_arg(argv[2], "status");
	fprintf(stderr,
		"usage: count_workloads touch N | fork K M | pingpong N | spin MS [LINGER_MS] |\n"
		"                       threads T M | loop SECONDS M | exit STATUS\n");
	return 2;
}
