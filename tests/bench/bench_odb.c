/*
 * bench_odb.c - lib/odb hot path: ns per update of an existing key and per
 * insert of a new key (growth included), random keys, one pinned core;
 * updates through odb_update() and through odb_update_hot() (the daemon's
 * inline path).
 * Usage: bench_odb [updates=20000000] [dir=$TMPDIR or /tmp] [runs=5]
 * (runs=1 with few updates: a quick, deterministic workload for callgrind)
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
#include <sys/mman.h>
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

/*
 * Reference: OProfile libodb's algorithm as described in
 * notes/oprofile-format.md 3.1 (same layout, hash, chain order), with its
 * growth by ftruncate + mremap (no space reservation) and wrapping counts.
 * Written from that description for comparison in the same run.
 */
struct ref {
	int fd;
	char *base;
	size_t len;
	struct odb_descr *descr;
	struct odb_node *nodes;
	odb_index_t *hash;
};

static void ref_pointers(struct ref *r)
{
	r->descr = (struct odb_descr *)(r->base + ODB_DESCR_OFFSET);
	r->nodes = (struct odb_node *)(r->base + ODB_NODE_OFFSET);
	r->hash = (odb_index_t *)(r->base + ODB_NODE_OFFSET + 16 * (size_t)r->descr->size);
}

static int ref_open(struct ref *r, int dirfd, const char *name)
{
	r->fd = openat(dirfd, name, O_RDWR | O_CREAT | O_TRUNC, 0644);
	r->len = ODB_FILE_SIZE(ODB_INITIAL_NODES);
	if (r->fd < 0 || ftruncate(r->fd, (off_t)r->len))
		return -1;
	r->base = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (r->base == MAP_FAILED)
		return -1;
	((struct odb_descr *)(r->base + ODB_DESCR_OFFSET))->size = ODB_INITIAL_NODES;
	((struct odb_descr *)(r->base + ODB_DESCR_OFFSET))->current_size = 1;
	ref_pointers(r);
	return 0;
}

static __attribute__((noinline)) int ref_update(struct ref *r, odb_key_t key, odb_value_t n)
{
	uint32_t b = odb_hash(key, r->descr->size), i;

	for (i = r->hash[b]; i; i = r->nodes[i].next)
		if (r->nodes[i].key == key) {
			r->nodes[i].value += n;
			return 0;
		}
	if (r->descr->current_size >= r->descr->size) {
		uint32_t size = r->descr->size * 2;
		size_t len = ODB_FILE_SIZE(size);
		void *nb;

		if (ftruncate(r->fd, (off_t)len))
			return -1;
		nb = mremap(r->base, r->len, len, MREMAP_MAYMOVE);
		if (nb == MAP_FAILED)
			return -1;
		r->base = nb;
		r->len = len;
		r->descr = (struct odb_descr *)(r->base + ODB_DESCR_OFFSET);
		r->descr->size = size;
		ref_pointers(r);
		for (i = 1; i < r->descr->current_size; i++) {
			uint32_t h = odb_hash(r->nodes[i].key, size);

			r->nodes[i].next = r->hash[h];
			r->hash[h] = i;
		}
		b = odb_hash(key, size);
	}
	i = r->descr->current_size;
	r->nodes[i].key = key;
	r->nodes[i].value = n;
	r->nodes[i].next = r->hash[b];
	r->hash[b] = i;
	r->descr->current_size++;
	return 0;
}

static void ref_close(struct ref *r)
{
	munmap(r->base, r->len);
	close(r->fd);
}

struct result {
	uint32_t nodes;
	double ins[RUNS], upd[RUNS], hot[RUNS];
};

/* one run: @keys new keys into a fresh file, then @updates from @stream */
#define RUN(open_ok, update, update_hot, close_, size_expr, out, r)                              \
	do {                                                                              \
		uint64_t t0;                                                              \
		unsigned long i;                                                          \
		if (!(open_ok))                                                           \
			return -1;                                                        \
		t0 = now_ns();                                                            \
		for (i = 0; i < keys; i++)                                                \
			if (update(key_of(i), 1))                                         \
				return -1;                                                \
		(out)->ins[r] = (double)(now_ns() - t0) / (double)keys;                   \
		for (i = 0; i < STREAM; i++) /* warm-up */                                \
			update(stream[i], 1);                                             \
		t0 = now_ns();                                                            \
		for (i = 0; i < updates; i++)                                             \
			update(stream[i & (STREAM - 1)], 1);                              \
		(out)->upd[r] = (double)(now_ns() - t0) / (double)updates;                \
		t0 = now_ns();                                                            \
		for (i = 0; i < updates; i++)                                             \
			update_hot(stream[i & (STREAM - 1)], 1);                          \
		(out)->hot[r] = (double)(now_ns() - t0) / (double)updates;                \
		(out)->nodes = (size_expr);                                               \
		close_;                                                                   \
		unlinkat(dirfd, "bench", 0);                                              \
	} while (0)

/*
 * @keys distinct keys inserted into a fresh file (random order), then
 * @updates updates drawn from them: uniformly, or with @hot_pct percent of
 * them going to the hottest 1% of the keys (a profile's hot spots).
 * Runs of lib/odb and of the reference alternate.
 */
static int bench(int dirfd, unsigned long keys, unsigned long updates, unsigned hot_pct,
		 int runs, uint64_t *stream, struct result *res, struct result *ref)
{
	unsigned long i, hot = keys / 100 ? keys / 100 : 1;
	uint64_t x = 88172645463325252ull;
	char err[256];
	struct ref rf;
	odb_t db;
	int r;

	for (i = 0; i < STREAM; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if ((x & 127) * 100 < hot_pct * 128u)
			stream[i] = key_of((x >> 8) % hot);
		else
			stream[i] = key_of((x >> 8) % keys);
	}
#define DB_UPDATE(k, n) odb_update(&db, k, n)
#define DB_HOT(k, n) odb_update_hot(&db, k, n)
#define REF_UPDATE(k, n) ref_update(&rf, k, n)
#define REF_HOT(k, n) (void)(k) /* libodb has one update path */
	for (r = 0; r < runs; r++) {
		RUN(!odb_open(&db, dirfd, "bench", ODB_RDWR, err, sizeof(err)), DB_UPDATE, DB_HOT,
		    odb_close(&db), db.descr->size, res, r);
		RUN(!ref_open(&rf, dirfd, "bench"), REF_UPDATE, REF_HOT, ref_close(&rf),
		    rf.descr->size, ref, r);
	}
	qsort(res->ins, (size_t)runs, sizeof(double), cmp_dbl);
	qsort(res->upd, (size_t)runs, sizeof(double), cmp_dbl);
	qsort(res->hot, (size_t)runs, sizeof(double), cmp_dbl);
	qsort(ref->ins, (size_t)runs, sizeof(double), cmp_dbl);
	qsort(ref->upd, (size_t)runs, sizeof(double), cmp_dbl);
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
	int runs = argc > 3 ? atoi(argv[3]) : RUNS;
	uint64_t *stream = malloc(STREAM * sizeof(uint64_t));
	char dir[512];
	cpu_set_t set;
	int dirfd, cpu;
	size_t c;

	if (runs < 1 || runs > RUNS) {
		fprintf(stderr, "bench_odb: runs must be 1..%d\n", RUNS);
		return 1;
	}
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
	       cpu, dir, updates, runs);
	printf("%9s %-11s %9s %9s | %-29s | %-44s\n", "", "", "", "", "   insert new key (growth incl)",
	       "   update existing key");
	printf("%9s %-11s %9s %9s | %14s %14s | %14s %14s %14s\n", "keys", "keys drawn", "nodes",
	       "file", "lib/odb", "libodb-ref", "lib/odb", "lib/odb hot", "libodb-ref");
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct result res, ref;
		char dist[32];

		if (bench(dirfd, cases[c].keys, updates, cases[c].hot_pct, runs, stream, &res, &ref)) {
			fprintf(stderr, "bench_odb: failed: %s\n", strerror(errno));
			return 1;
		}
		if (cases[c].hot_pct)
			snprintf(dist, sizeof(dist), "%u%% on 1%%", cases[c].hot_pct);
		else
			snprintf(dist, sizeof(dist), "uniform");
		printf("%9lu %-11s %9u %9llu | %5.1f [%5.1f]  %5.1f [%5.1f] | %5.1f [%5.1f]  %5.1f "
		       "[%5.1f]  %5.1f [%5.1f]\n",
		       cases[c].keys, dist, res.nodes, (unsigned long long)ODB_FILE_SIZE(res.nodes),
		       res.ins[runs / 2], res.ins[0], ref.ins[runs / 2], ref.ins[0],
		       res.upd[runs / 2], res.upd[0], res.hot[runs / 2], res.hot[0],
		       ref.upd[runs / 2], ref.upd[0]);
		fflush(stdout);
	}
	rmdir(dir);
	close(dirfd);
	free(stream);
	return 0;
}
