/* bench_opcount_read.c - cost per read of libopcount's read paths
 * (oc_read, oc_read_fast, a bare read(), the control-page seqlock alone)
 * while a page-fault counter is live, and a check that fast == slow.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "opcount.h"

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void touch(long n)
{
	long ps = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, n * ps, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (long i = 0; i < n; i++)
		p[i * ps] = 1;
	munmap((void *)p, n * ps);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	struct oc_target t = { .kind = OC_TARGET_THREAD, .id = 0 };
	struct oc_set *s;
	struct oc_error err;
	struct oc_value v;
	const char *why;
	uint64_t f, sink = 0;
	long mism = 0;
	double t0, t_slow, t_fast, t_raw, t_page;
	int fd;
	volatile struct perf_event_mmap_page *pc;

	if (n < 1000)
		n = 1000;
	if (oc_open(&s, &t, "page-faults", OC_START, &err)) {
		fprintf(stderr, "bench_opcount_read: %s\n", err.msg);
		return 1;
	}
	/* correctness while counting: slow, fast, slow, faults in between */
	for (long i = 0; i < n; i++) {
		struct oc_value a, b;

		if (i % 64 == 0)
			touch(2);
		oc_read(s, OC_VIEW_ALL, &a);
		oc_read_fast(s, 0, &f);
		oc_read(s, OC_VIEW_ALL, &b);
		mism += f < a.count || f > b.count;
	}
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		oc_read(s, OC_VIEW_ALL, &v);
		sink += v.count;
	}
	t_slow = (now_ns() - t0) / n;
	t0 = now_ns();
	for (long i = 0; i < n; i++) {
		oc_read_fast(s, 0, &f);
		sink += f;
	}
	t_fast = (now_ns() - t0) / n;

	/* the floor: one bare read() of a counting fd, and the control page
	 * seqlock alone (what the rdpmc path costs besides rdpmc itself) */
	{
		struct perf_event_attr a;
		uint64_t buf[3];
		uint32_t seq;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_PAGE_FAULTS;
		a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
		if (fd < 0) {
			perror("perf_event_open");
			return 1;
		}
		t0 = now_ns();
		for (long i = 0; i < n; i++) {
			if (read(fd, buf, sizeof(buf)) != sizeof(buf))
				return 1;
			sink += buf[0];
		}
		t_raw = (now_ns() - t0) / n;
		pc = mmap(NULL, sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);
		if (pc == MAP_FAILED)
			return 1;
		t0 = now_ns();
		for (long i = 0; i < n; i++) {
			do {
				seq = pc->lock;
				__asm__ volatile("" ::: "memory");
				sink += (uint64_t)pc->offset + pc->index;
				__asm__ volatile("" ::: "memory");
			} while (pc->lock != seq);
		}
		t_page = (now_ns() - t0) / n;
	}
	if (oc_fast_path(s, 0, &why) == OC_FAST_RDPMC)
		printf("fast path: rdpmc (%s)\n", why);
	else
		printf("fast path: syscall (%s)\n", why);
	printf("reads: %ld; fast outside [slow, slow] brackets: %ld\n", n, mism);
	printf("| read path | ns per read |\n|---|---|\n");
	printf("| oc_read (read(), count + enabled + running, scaled) | %.0f |\n", t_slow);
	printf("| oc_read_fast (seqlock check, then read()) | %.0f |\n", t_fast);
	printf("| bare read() syscall | %.0f |\n", t_raw);
	printf("| control-page seqlock only (no live count for sw events) | %.1f |\n", t_page);
	oc_close(s);
	close(fd);
	return mism != 0 || sink == 0;
}
