/*
 * sp_threads.c - two threads, each spinning MS milliseconds of its own CPU
 * time in its own function; prints "tid1 tid2" (the --separate=thread test).
 * Usage: sp_threads MS
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sp_work.h"

static long ms;
static volatile unsigned long sink;
static long tids[2];

static __attribute__((noinline)) void spin_a(void)
{
	long long end = sp_cpu_ns(CLOCK_THREAD_CPUTIME_ID) + ms * 1000000ll;

	while (sp_cpu_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			sink += i;
}

static __attribute__((noinline)) void spin_b(void)
{
	long long end = sp_cpu_ns(CLOCK_THREAD_CPUTIME_ID) + ms * 1000000ll;

	while (sp_cpu_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			sink ^= i;
}

static void *run(void *arg)
{
	long i = (long)arg;

	tids[i] = syscall(SYS_gettid);
	if (i)
		spin_b();
	else
		spin_a();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	ms = argc > 1 ? atol(argv[1]) : 1000;
	for (long i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, run, (void *)i))
			return 1;
	pthread_join(t[0], NULL);
	pthread_join(t[1], NULL);
	printf("%ld %ld\n", tids[0], tids[1]);
	return 0;
}
