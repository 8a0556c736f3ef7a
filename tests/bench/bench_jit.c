/*
 * bench_jit.c - the JIT formats' cost: libopagent writing N functions (LOAD
 * with 128 code bytes + an 8-entry DEBUG_INFO each), lib/op_jit reading that
 * dump (whole buffer, 64 KiB pieces as read() gives them, the file through
 * op_jitdump_read_file) and a perf map of N lines. Records/s and ns/record,
 * median of RUNS, thread CPU time (other load on a shared machine does not
 * count; the write figure is wall time, it is all syscalls).
 * Usage: bench_jit [functions=100000] [runs=5] [dir=$TMPDIR or /tmp]
 *        bench_jit -f DUMP [runs=5]   (read one dump: bench_jit.sh puts that
 *                                      beside perf inject --jit on the same file)
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "op_jit.h"
#include "opagent.h"

#define MAX_RUNS 15

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static uint64_t sink;

static int on_rec(void *priv, const struct op_jit_rec *r)
{
	(void)priv;
	/* touch what a consumer touches: the name and the sizes */
	sink += r->kind == OP_JIT_LOAD ? (uint64_t)r->load.name[0] + r->load.code_size : r->kind;
	return 0;
}

static int count_rec(void *priv, const struct op_jit_rec *r)
{
	(*(uint64_t *)priv)++;
	return on_rec(NULL, r);
}

static int on_map(void *priv, const struct op_perfmap_entry *e)
{
	(void)priv;
	sink += e->start + (uint64_t)e->name[0];
	return 0;
}

static void report(const char *what, uint64_t ns, uint64_t records, uint64_t bytes)
{
	printf("%-34s %9.1f ms  %7.1f ns/record  %7.2f M records/s  %7.1f MB/s\n", what,
	       (double)ns / 1e6, (double)ns / (double)records, (double)records * 1e3 / (double)ns,
	       (double)bytes * 1e3 / (double)ns);
}

/* -f: the median CPU time of reading @path whole, RUNS times */
static int read_one(const char *path, int runs)
{
	struct op_jit_errors e;
	uint64_t t[MAX_RUNS], records = 0;
	struct stat st;

	if (stat(path, &st)) {
		perror(path);
		return 1;
	}
	for (int r = 0; r < runs; r++) {
		uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		if (op_jitdump_read_file(path, count_rec, &records, NULL, &e)) {
			fprintf(stderr, "bench_jit: %s does not read\n", path);
			return 1;
		}
		t[r] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	}
	records /= (uint64_t)runs;
	printf("bench_jit: %s: %llu records, %.1f MB, errors %llu\n", path,
	       (unsigned long long)records, (double)st.st_size / 1e6,
	       (unsigned long long)op_jit_errors_total(&e));
	report("jitdump read_file (page cache)", median(t, runs), records, (uint64_t)st.st_size);
	printf("RESULT read_ns %llu\n", (unsigned long long)median(t, runs));
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	const char *tmp = argc > 3 ? argv[3] : getenv("TMPDIR");
	uint64_t t[MAX_RUNS], records = 0;
	static uint8_t code[128];
	struct debug_line_info li[8];
	char dir[256], path[300];
	struct stat st;
	uint8_t *buf;
	char *map;
	size_t map_len = 0;
	int fd;

	if (argc > 2 && !strcmp(argv[1], "-f")) {
		runs = argc > 3 ? atoi(argv[3]) : 5;
		if (runs < 1 || runs > MAX_RUNS) {
			fprintf(stderr, "usage: bench_jit -f DUMP [runs=1..%d]\n", MAX_RUNS);
			return 2;
		}
		return read_one(argv[2], runs);
	}
	if (!n || runs < 1 || runs > MAX_RUNS) {
		fprintf(stderr, "usage: bench_jit [functions>0] [runs=1..%d] [dir]\n", MAX_RUNS);
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s/bench_jit.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	setenv("OPROFILE_JITDUMP_DIR", dir, 1);
	memset(code, 0x90, sizeof(code));
	for (int i = 0; i < 8; i++) {
		li[i].lineno = (unsigned)(100 + i);
		li[i].filename = "bench/Generated.java";
	}

	/* write: one dump, timed once (wall: syscalls) */
	{
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
		op_agent_t a = op_open_agent();

		if (!a) {
			perror("op_open_agent");
			return 1;
		}
		for (unsigned long i = 0; i < n; i++) {
			char name[96];
			uint64_t vma = 0x7f0000000000ull + i * 256;

			snprintf(name, sizeof(name),
				 "Lbench/Generated%lu;method%lu(ILjava/lang/String;)V", i / 16,
				 i % 16);
			for (int k = 0; k < 8; k++)
				li[k].vma = (unsigned long)(vma + (uint64_t)k * 16);
			if (op_write_native_code(a, name, vma, code, sizeof(code)) ||
			    op_write_debug_line_info(a, (void *)(uintptr_t)vma, 8, li)) {
				perror("libopagent write");
				return 1;
			}
		}
		op_close_agent(a);
		snprintf(path, sizeof(path), "%s/%d.dump", dir, (int)getpid());
		if (stat(path, &st)) {
			perror(path);
			return 1;
		}
		records = 2 * n + 1;
		printf("bench_jit: %lu functions, %llu records, %.1f MB dump, %d runs (median)\n",
		       n, (unsigned long long)records, (double)st.st_size / 1e6, runs);
		report("libopagent write (wall)", clock_ns(CLOCK_MONOTONIC) - t0, records,
		       (uint64_t)st.st_size);
	}
	fd = open(path, O_RDONLY);
	buf = fd < 0 ? MAP_FAILED :
		       mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (buf == MAP_FAILED) {
		perror(path);
		return 1;
	}

	for (int r = 0; r < runs; r++) {
		struct op_jitdump_reader *rd = op_jitdump_reader_init(on_rec, NULL, 0);
		uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		if (op_jitdump_reader_feed(rd, buf, (size_t)st.st_size))
			return 1;
		t[r] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (op_jitdump_reader_count(rd, OP_JIT_LOAD) != n)
			return 1;
		op_jitdump_reader_fini(rd, NULL);
	}
	report("jitdump read, whole buffer", median(t, runs), records, (uint64_t)st.st_size);

	for (int r = 0; r < runs; r++) {
		struct op_jitdump_reader *rd = op_jitdump_reader_init(on_rec, NULL, 0);
		uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		for (off_t o = 0; o < st.st_size; o += 65536) {
			size_t len = st.st_size - o < 65536 ? (size_t)(st.st_size - o) : 65536;

			if (op_jitdump_reader_feed(rd, buf + o, len))
				return 1;
		}
		t[r] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (op_jitdump_reader_count(rd, OP_JIT_LOAD) != n)
			return 1;
		op_jitdump_reader_fini(rd, NULL);
	}
	report("jitdump read, 64 KiB pieces", median(t, runs), records, (uint64_t)st.st_size);

	for (int r = 0; r < runs; r++) {
		uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		if (op_jitdump_read_file(path, on_rec, NULL, NULL, NULL))
			return 1;
		t[r] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	}
	report("jitdump read_file (page cache)", median(t, runs), records, (uint64_t)st.st_size);
	munmap(buf, (size_t)st.st_size);
	close(fd);
	unlink(path);
	rmdir(dir);

	/* a perf map of the same functions */
	map = malloc(n * 96);
	if (!map)
		return 1;
	for (unsigned long i = 0; i < n; i++)
		map_len += (size_t)sprintf(map + map_len, "%llx %x LazyCompile:~f%lu bench.js:%lu\n",
					   0x3ef400000000ull + i * 256, 128, i, i % 977);
	for (int r = 0; r < runs; r++) {
		struct op_perfmap_reader *mr = op_perfmap_reader_init(on_map, NULL);
		uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

		for (size_t o = 0; o < map_len; o += 65536)
			op_perfmap_reader_feed(mr, map + o,
					       map_len - o < 65536 ? map_len - o : 65536);
		t[r] = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
		if (op_perfmap_reader_count(mr) != n)
			return 1;
		op_perfmap_reader_fini(mr, true, NULL);
	}
	report("perf map read, 64 KiB pieces", median(t, runs), n, map_len);
	free(map);
	return sink == 42 ? 3 : 0; /* keep the callbacks' work */
}
