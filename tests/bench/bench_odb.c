/*
 * bench_odb.c - lib/odb hot path: ns per update of an existing key and per
 * insert of a new key (growth included), random keys, one pinned core.
 * Usage: bench_odb [updates=20000000] [dir=$TMPDIR or /tmp]
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "odb.h"
#include "op_header.h"

#define RUNS 5
#define STREAM (1u << 20) /* precomputed keys, replayed: keeps key generation out */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts); /* CPU time: other load on a shared machine does not count */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * key i: a sample offset in a 1 GiB text, scattered. Every step is a
 * bijection on 30 bits, so distinct i give distinct keys.
 */
static uint64_t key_of(uint64_t i)
{
	const uint64_t m = (1u << 30) - 1;
	uint64_t x = i & m;

	x ^= x >> 15;
	x = (x * 0x2c1b3c6dull) & m;
	x ^= x >> 12;
	x = (x * 0x297a2d39ull) & m;
	x ^= x >> 15;
	return 0x1000 + x;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct result {
	unsigned long distinct;
	uint32_t nodes;
	double ins, upd; /* medians, ns */
	double ins_min, upd_min;
};

/*
 * @keys distinct keys inserted into a fresh file (random order), then
 * @updates updates drawn from them: uniformly, or with @hot_pct percent of
 * them going to the hottest 1% of the keys (a profile's hot spots).
 */
static int bench(int dirfd, unsigned long keys, unsigned long updates, unsigned hot_pct,
		 uint64_t *stream, struct result *res)
{
	double ins[RUNS], upd[RUNS];
	unsigned long i, hot = keys / 100 ? keys / 100 : 1;
	uint64_t t0, x = 88172645463325252ull;
	char err[256];
	odb_t db;
	int r;

	for (i = 0; i < STREAM; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if ((x & 127) * 100 < hot_pct * 128u)
			stream[i] = key_of((x >> 8) % hot);
		else
			stream[i] = key_of((x >> 8) % keys);
	}
	for (r = 0; r < RUNS; r++) {
		if (odb_open(&db, dirfd, "bench", ODB_RDWR, err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			return -1;
		}
		op_header_init(odb_header(&db));
		t0 = now_ns();
		for (i = 0; i < keys; i++)
			if (odb_update(&db, key_of(i), 1))
				return -1;
		ins[r] = (double)(now_ns() - t0) / (double)keys;
		if (db.descr->current_size - 1 != keys) {
			fprintf(stderr, "bench_odb: %u keys, expected %lu\n",
				db.descr->current_size - 1, keys);
			return -1;
		}
		for (i = 0; i < STREAM; i++) /* warm-up */
			odb_update(&db, stream[i], 1);
		t0 = now_ns();
		for (i = 0; i < updates; i++)
			odb_update(&db, stream[i & (STREAM - 1)], 1);
		upd[r] = (double)(now_ns() - t0) / (double)updates;
		res->nodes = db.descr->size;
		odb_close(&db);
		unlinkat(dirfd, "bench", 0);
	}
	qsort(ins, RUNS, sizeof(double), cmp_dbl);
	qsort(upd, RUNS, sizeof(double), cmp_dbl);
	res->distinct = keys;
	res->ins = ins[RUNS / 2];
	res->ins_min = ins[0];
	res->upd = upd[RUNS / 2];
	res->upd_min = upd[0];
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		unsigned long keys;
		unsigned hot_pct;
	} cases[] = { { 1000, 0 }, { 10000, 0 }, { 100000, 0 }, { 100000, 90 }, { 1000000, 0 } };
	unsigned long updates = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000000;
	const char *tmp = argc > 2 ? argv[2] : getenv("TMPDIR");
	uint64_t *stream = malloc(STREAM * sizeof(uint64_t));
	char dir[512];
	cpu_set_t set;
	int dirfd, cpu;
	size_t c;

	cpu = sched_getcpu();
	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("bench_odb: sched_setaffinity");
	snprintf(dir, sizeof(dir), "%s/bench_odb.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!stream || !mkdtemp(dir)) {
		perror(dir);
		return 1;
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dirfd < 0) {
		perror(dir);
		return 1;
	}
	printf("bench_odb: pinned to cpu %d, files in %s, %lu updates per run, %d runs, "
	       "ns per call: median [min]\n",
	       cpu, dir, updates, RUNS);
	printf("%9s %-14s %9s %10s  %-16s %-16s\n", "keys", "distribution", "nodes", "file",
	       "insert new key", "update existing");
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct result res;
		char dist[32];

		if (bench(dirfd, cases[c].keys, updates, cases[c].hot_pct, stream, &res)) {
			fprintf(stderr, "bench_odb: failed\n");
			return 1;
		}
		if (cases[c].hot_pct)
			snprintf(dist, sizeof(dist), "%u%% on 1%%", cases[c].hot_pct);
		else
			snprintf(dist, sizeof(dist), "uniform");
		printf("%9lu %-14s %9u %10llu  %6.1f [%6.1f]  %6.1f [%6.1f]\n", res.distinct, dist,
		       res.nodes, (unsigned long long)ODB_FILE_SIZE(res.nodes), res.ins, res.ins_min,
		       res.upd, res.upd_min);
	}
	rmdir(dir);
	close(dirfd);
	free(stream);
	return 0;
}
