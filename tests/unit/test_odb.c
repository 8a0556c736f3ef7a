/*
 * test_odb.c - lib/odb: exact OProfile 1.x byte layout and growth sizes,
 * random updates against an in-memory model (with reopen and growth),
 * saturation, full-disk growth, the abi file.
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "odb.h"
#include "op_header.h"

struct fixture {
	char dir[256];
	int dirfd;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	const char *tmp = getenv("TMPDIR");

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "%s/test_odb.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->dir))
		return -1;
	f->dirfd = open(f->dir, O_RDONLY | O_DIRECTORY);
	if (f->dirfd < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	char cmd[300];

	close(f->dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", f->dir);
	free(f);
	return 0;
}

static off_t file_size(struct fixture *f, const char *name)
{
	struct stat st;

	assert_int_equal(fstatat(f->dirfd, name, &st, 0), 0);
	return st.st_size;
}

static size_t read_all(struct fixture *f, const char *name, unsigned char *buf, size_t len)
{
	int fd = openat(f->dirfd, name, O_RDONLY);
	ssize_t n;

	assert_true(fd >= 0);
	n = read(fd, buf, len);
	assert_true(n >= 0);
	close(fd);
	return (size_t)n;
}

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

/* bijective 64-bit mix: distinct indexes give distinct keys */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

static uint64_t rng_state = 0x1234567;

static uint64_t rnd(void)
{
	rng_state += 0x9e3779b97f4a7c15ull;
	return mix64(rng_state);
}

static void test_hash_function(void **state)
{
	(void)state;
	/* t = 0x1167; t ^ t>>8 = 0x1176; & 127 = 0x76 */
	assert_int_equal(odb_hash(0x1167, 128), 0x76);
	/* upper and lower halves cancel */
	assert_int_equal(odb_hash(0x0000000100000001ull, 128), 0);
	assert_int_equal(odb_hash(0xffffffff00000000ull, 256), (0xffffffffu ^ 0x00ffffffu) & 255);
	assert_int_equal(odb_hash(0xabcd12345678ull, 1u << 20),
			 ((0xabcdu ^ 0x12345678u) ^ ((0xabcdu ^ 0x12345678u) >> 8)) & 0xfffff);
}

static void test_create_layout(void **state)
{
	struct fixture *f = *state;
	unsigned char buf[4096];
	char err[256];
	odb_t db;
	size_t n, count;
	const struct odb_node *nodes;

	assert_int_equal(odb_open(&db, f->dirfd, "new", ODB_RDWR, err, sizeof(err)), 0);
	assert_int_equal(file_size(f, "new"), 2664);
	assert_int_equal(db.descr->size, 128);
	assert_int_equal(db.descr->current_size, 1);
	/* header all zero until the writer fills it */
	for (n = 0; n < sizeof(struct opd_header); n++)
		assert_int_equal(((unsigned char *)db.base)[n], 0);
	op_header_init(odb_header(&db));
	odb_header(&db)->cpu_type = OP_CPU_TIMER;
	odb_header(&db)->ctr_count = 100000;
	odb_header(&db)->mtime = 0x6b022a48;
	assert_int_equal(odb_update(&db, 0x1167, 0x1b0), 0);
	assert_int_equal(odb_update(&db, 0x1167, 7), 0);
	assert_int_equal(odb_update(&db, 0, 1), 0); /* key 0 is valid */
	nodes = odb_nodes(&db, &count);
	assert_int_equal(count, 2);
	assert_int_equal(nodes[0].key, 0x1167);
	assert_int_equal(odb_sync(&db), 0);
	odb_close(&db);
	odb_close(&db); /* idempotent */

	n = read_all(f, "new", buf, sizeof(buf));
	assert_int_equal(n, 2664);
	assert_memory_equal(buf, "DAE\n", 4);
	assert_int_equal(get32(buf + 4), 0x13);
	assert_int_equal(get32(buf + 8), 4);
	assert_int_equal(get32(buf + 20), 100000);
	assert_int_equal(get64(buf + 40), 0x6b022a48);
	assert_int_equal(get32(buf + 72), 128); /* descr.size */
	assert_int_equal(get32(buf + 76), 3);   /* current_size = used + 1 */
	for (n = 80; n < 120; n++)              /* descr padding, node 0 */
		assert_int_equal(buf[n], 0);
	assert_int_equal(get64(buf + 120), 0x1167); /* node 1 */
	assert_int_equal(get32(buf + 128), 0x1b7);
	assert_int_equal(get32(buf + 132), 0);
	assert_int_equal(get64(buf + 136), 0); /* node 2: key 0 */
	assert_int_equal(get32(buf + 144), 1);
	/* bucket table after 128 nodes: bucket 0x76 -> node 1, bucket 0 -> node 2 */
	assert_int_equal(get32(buf + 104 + 128 * 16 + 0x76 * 4), 1);
	assert_int_equal(get32(buf + 104 + 128 * 16), 2);

	/* a reader sees exactly that */
	assert_int_equal(odb_open(&db, f->dirfd, "new", ODB_RDONLY, err, sizeof(err)), 0);
	assert_int_equal(odb_check(&db, err, sizeof(err)), 0);
	nodes = odb_nodes(&db, &count);
	assert_int_equal(count, 2);
	assert_int_equal(nodes[0].value, 0x1b7);
	assert_int_equal(nodes[1].value, 1);
	odb_close(&db);
}

/* every chain lists nodes from newest to oldest: OProfile's insert-at-head order */
static void assert_chains_descending(const odb_t *db)
{
	uint32_t b, i;

	for (b = 0; b < db->descr->size; b++)
		for (i = db->hash[b]; i && db->nodes[i].next; i = db->nodes[i].next)
			assert_true(db->nodes[i].next < i);
}

static void test_growth_sizes(void **state)
{
	static const struct {
		unsigned keys;
		off_t size;
		uint32_t nodes;
	} t[] = { { 0, 2664, 128 },     { 1, 2664, 128 },     { 127, 2664, 128 },
		  { 128, 5224, 256 },   { 255, 5224, 256 },   { 256, 10344, 512 },
		  { 1000, 20584, 1024 }, { 1023, 20584, 1024 }, { 1024, 41064, 2048 } };
	struct fixture *f = *state;
	char err[256], name[32];
	size_t k, count;
	unsigned i;
	odb_t db;

	for (k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		snprintf(name, sizeof(name), "grow%u", t[k].keys);
		assert_int_equal(odb_open(&db, f->dirfd, name, ODB_RDWR, err, sizeof(err)), 0);
		op_header_init(odb_header(&db));
		for (i = 0; i < t[k].keys; i++)
			assert_int_equal(odb_update(&db, (uint64_t)i * 4 + 0x400000, i + 1), 0);
		assert_int_equal(db.descr->current_size, t[k].keys + 1);
		assert_int_equal(db.descr->size, t[k].nodes);
		assert_chains_descending(&db);
		odb_close(&db);
		assert_int_equal(file_size(f, name), t[k].size);

		assert_int_equal(odb_open(&db, f->dirfd, name, ODB_RDONLY, err, sizeof(err)), 0);
		assert_int_equal(odb_check(&db, err, sizeof(err)), 0);
		const struct odb_node *nodes = odb_nodes(&db, &count);
		assert_int_equal(count, t[k].keys);
		for (i = 0; i < count; i++) { /* insertion order is kept */
			assert_int_equal(nodes[i].key, (uint64_t)i * 4 + 0x400000);
			assert_int_equal(nodes[i].value, i + 1);
		}
		odb_close(&db);
	}
}

/* growth leaves the old bucket table as junk in unused node slots, as libodb does */
static void test_growth_stale_area(void **state)
{
	struct fixture *f = *state;
	unsigned char old_hash[128 * 4], buf[8192];
	char err[256];
	unsigned i;
	odb_t db;

	assert_int_equal(odb_open(&db, f->dirfd, "stale", ODB_RDWR, err, sizeof(err)), 0);
	for (i = 0; i < 127; i++)
		assert_int_equal(odb_update(&db, rnd(), 1), 0);
	memcpy(old_hash, db.hash, sizeof(old_hash));
	assert_int_equal(odb_update(&db, 42, 1), 0); /* grows */
	assert_int_equal(db.descr->size, 256);
	odb_close(&db);
	assert_int_equal(read_all(f, "stale", buf, sizeof(buf)), 5224);
	/* node 128 overwrote the first 16 bytes of the old table; the rest remains */
	assert_memory_equal(buf + 104 + 129 * 16, old_hash + 16, sizeof(old_hash) - 16);
}

/* in-memory model: pool of distinct keys, expected counts */
#define POOL 100000
struct model {
	uint64_t key[POOL];
	uint64_t sorted[POOL]; /* key << 0, sorted, for lookup */
	uint32_t count[POOL];
	uint8_t seen[POOL];
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t model_index(const struct model *m, const uint64_t *idx_by_sorted, uint64_t key)
{
	const uint64_t *p = bsearch(&key, m->sorted, POOL, sizeof(uint64_t), cmp_u64);

	assert_non_null(p);
	return idx_by_sorted[p - m->sorted];
}

static void model_verify(const struct model *m, const uint64_t *idx_by_sorted, const odb_t *db)
{
	static uint8_t found[POOL];
	const struct odb_node *nodes;
	size_t count, i, want = 0;

	memset(found, 0, sizeof(found));
	nodes = odb_nodes(db, &count);
	for (i = 0; i < POOL; i++)
		want += m->seen[i];
	assert_int_equal(count, want);
	for (i = 0; i < count; i++) {
		size_t k = model_index(m, idx_by_sorted, nodes[i].key);

		assert_false(found[k]);
		found[k] = 1;
		assert_true(m->seen[k]);
		assert_int_equal(nodes[i].value, m->count[k]);
	}
}

static void test_random_model(void **state)
{
	struct fixture *f = *state;
	struct model *m = calloc(1, sizeof(*m));
	uint64_t *idx_by_sorted = calloc(POOL, sizeof(uint64_t));
	uint64_t *pairs = calloc(POOL * 2, sizeof(uint64_t));
	char err[256];
	unsigned long u;
	unsigned grows = 0, last_size = 128;
	size_t i;
	odb_t db;

	assert_non_null(m);
	assert_non_null(idx_by_sorted);
	assert_non_null(pairs);
	for (i = 0; i < POOL; i++)
		m->key[i] = i ? mix64(i) : 0;
	/* sort (key, index) pairs */
	{
		struct kv {
			uint64_t k, i;
		} *kv = (struct kv *)pairs;

		for (i = 0; i < POOL; i++) {
			kv[i].k = m->key[i];
			kv[i].i = i;
		}
		qsort(kv, POOL, sizeof(*kv), cmp_u64);
		for (i = 0; i < POOL; i++) {
			m->sorted[i] = kv[i].k;
			idx_by_sorted[i] = kv[i].i;
		}
	}

	assert_int_equal(odb_open(&db, f->dirfd, "model", ODB_RDWR, err, sizeof(err)), 0);
	op_header_init(odb_header(&db));
	for (u = 0; u < 1000000; u++) {
		/* skewed: half the updates go to the first 1% of keys */
		size_t k = (rnd() & 1) ? rnd() % (POOL / 100) : rnd() % POOL;
		uint32_t n = 1 + rnd() % 16;

		assert_int_equal(odb_update(&db, m->key[k], n), 0);
		m->count[k] += n;
		m->seen[k] = 1;
		if (db.descr->size != last_size) {
			grows++;
			last_size = db.descr->size;
		}
		if (u % 250000 == 249999) { /* close and reopen for writing mid-run */
			odb_close(&db);
			assert_int_equal(odb_open(&db, f->dirfd, "model", ODB_RDWR, err, sizeof(err)),
					 0);
			model_verify(m, idx_by_sorted, &db);
		}
	}
	assert_true(grows >= 9); /* 128 -> 131072 */
	assert_int_equal(db.descr->size, 131072);
	model_verify(m, idx_by_sorted, &db);
	assert_int_equal(db.saturated, 0);
	odb_close(&db);

	assert_int_equal(odb_open(&db, f->dirfd, "model", ODB_RDONLY, err, sizeof(err)), 0);
	assert_int_equal(odb_check(&db, err, sizeof(err)), 0);
	model_verify(m, idx_by_sorted, &db);
	assert_chains_descending(&db);
	odb_close(&db);
	free(pairs);
	free(idx_by_sorted);
	free(m);
}

static void test_saturation(void **state)
{
	struct fixture *f = *state;
	const struct odb_node *nodes;
	char err[256];
	size_t count;
	odb_t db;

	assert_int_equal(odb_open(&db, f->dirfd, "sat", ODB_RDWR, err, sizeof(err)), 0);
	assert_int_equal(odb_update(&db, 7, UINT32_MAX - 5), 0);
	assert_int_equal(odb_update(&db, 7, 3), 0);
	assert_int_equal(db.saturated, 0);
	nodes = odb_nodes(&db, &count);
	assert_int_equal(nodes[0].value, UINT32_MAX - 2);
	assert_int_equal(odb_update(&db, 7, 2), 0);
	assert_int_equal(nodes[0].value, UINT32_MAX);
	assert_int_equal(db.saturated, 0); /* reached exactly, nothing lost */
	assert_int_equal(odb_update(&db, 7, 1), 0);
	assert_int_equal(nodes[0].value, UINT32_MAX);
	assert_int_equal(db.saturated, 1);
	assert_int_equal(odb_update(&db, 7, UINT32_MAX), 0);
	assert_int_equal(nodes[0].value, UINT32_MAX);
	assert_int_equal(db.saturated, 2);
	assert_int_equal(odb_update(&db, 8, 0), 0); /* a zero update still creates the node */
	nodes = odb_nodes(&db, &count);
	assert_int_equal(count, 2);
	assert_int_equal(nodes[1].value, 0);
	odb_close(&db);
}

/*
 * odb_create (issue 20: the files of a new pair): a missing file is made
 * with O_EXCL, laid out as odb_open lays it out, and db.created says so;
 * an existing one is opened as odb_open opens it, its counts kept; a
 * symlink in its place is refused as odb_open refuses it.
 */
static void test_create_expected_new(void **state)
{
	struct fixture *f = *state;
	const struct odb_node *nodes;
	char err[256];
	size_t count;
	odb_t db;

	assert_int_equal(odb_create(&db, f->dirfd, "made", err, sizeof(err)), 0);
	assert_true(db.created);
	assert_int_equal(file_size(f, "made"), 2664);
	assert_int_equal(db.descr->size, 128);
	assert_int_equal(db.descr->current_size, 1);
	op_header_init(odb_header(&db));
	assert_int_equal(odb_update(&db, 0x42, 5), 0);
	odb_close(&db);
	/* it exists now: opened, not made again, the count kept */
	assert_int_equal(odb_create(&db, f->dirfd, "made", err, sizeof(err)), 0);
	assert_false(db.created);
	nodes = odb_nodes(&db, &count);
	assert_int_equal(count, 1);
	assert_int_equal(nodes[0].key, 0x42);
	assert_int_equal(nodes[0].value, 5);
	odb_close(&db);
	assert_int_equal(odb_open(&db, f->dirfd, "made", ODB_RDWR, err, sizeof(err)), 0);
	assert_false(db.created);
	odb_close(&db);
	assert_int_equal(symlinkat("made", f->dirfd, "link"), 0);
	assert_int_equal(odb_create(&db, f->dirfd, "link", err, sizeof(err)), -ELOOP);
}

static void test_open_errors(void **state)
{
	struct fixture *f = *state;
	char err[256];
	odb_t db;
	int fd;

	/* read-only open of an empty file: EIO and a message */
	fd = openat(f->dirfd, "empty", O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(odb_open(&db, f->dirfd, "empty", ODB_RDONLY, err, sizeof(err)), -EIO);
	assert_string_equal(err, "empty: empty sample file (0 bytes): never written or truncated");
	odb_close(&db);
	/* ...while a writer initialises it */
	assert_int_equal(odb_open(&db, f->dirfd, "empty", ODB_RDWR, err, sizeof(err)), 0);
	assert_int_equal(db.descr->size, 128);
	odb_close(&db);
	assert_int_equal(file_size(f, "empty"), 2664);

	/* missing file */
	assert_int_equal(odb_open(&db, f->dirfd, "missing", ODB_RDONLY, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "missing: cannot open"));

	/* never through a symlink, for reading or writing */
	assert_int_equal(symlinkat("empty", f->dirfd, "link"), 0);
	assert_int_equal(odb_open(&db, f->dirfd, "link", ODB_RDONLY, err, sizeof(err)), -ELOOP);
	assert_string_equal(err, "link: cannot open: is a symbolic link");
	assert_int_equal(odb_open(&db, f->dirfd, "link", ODB_RDWR, err, sizeof(err)), -ELOOP);
	assert_int_equal(symlinkat("nowhere", f->dirfd, "dangling"), 0);
	assert_int_equal(odb_open(&db, f->dirfd, "dangling", ODB_RDWR, err, sizeof(err)), -ELOOP);
	assert_int_equal(faccessat(f->dirfd, "nowhere", F_OK, 0), -1); /* not created */

	/* not a regular file (a FIFO must not hang the open) */
	assert_int_equal(mkfifoat(f->dirfd, "fifo", 0644), 0);
	assert_int_equal(odb_open(&db, f->dirfd, "fifo", ODB_RDONLY, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "fifo: not a regular file");
	assert_int_equal(odb_open(&db, f->dirfd, "fifo", ODB_RDWR, err, sizeof(err)), -EINVAL);
	assert_int_equal(mkdirat(f->dirfd, "dir", 0755), 0);
	assert_true(odb_open(&db, f->dirfd, "dir", ODB_RDWR, err, sizeof(err)) < 0);

	/* mode 0644 (under the usual umask 022) */
	umask(022);
	assert_int_equal(odb_open(&db, f->dirfd, "mode", ODB_RDWR, err, sizeof(err)), 0);
	odb_close(&db);
	{
		struct stat st;

		assert_int_equal(fstatat(f->dirfd, "mode", &st, 0), 0);
		assert_int_equal(st.st_mode & 07777, 0644);
	}

	/* a writer reopening a file keeps its header, and refuses a foreign one */
	assert_int_equal(odb_open(&db, f->dirfd, "hdr", ODB_RDWR, err, sizeof(err)), 0);
	op_header_init(odb_header(&db));
	odb_header(&db)->version = 0x12;
	odb_close(&db);
	assert_int_equal(odb_open(&db, f->dirfd, "hdr", ODB_RDWR, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "hdr: sample file version 0x12, expected 0x13 (OProfile 1.x): "
				 "written by OProfile 0.9.x, convert it first");
}

/* fill until growth fails; the file must stay valid and hold every accepted key */
static void fill_until_error(struct fixture *f, const char *name, int want_rc, uint32_t *keys_ok)
{
	char err[256];
	uint32_t i, size_before;
	off_t len_before;
	int rc = 0;
	odb_t db;

	assert_int_equal(odb_open(&db, f->dirfd, name, ODB_RDWR, err, sizeof(err)), 0);
	op_header_init(odb_header(&db));
	for (i = 0; i < 1000000; i++) {
		size_before = db.descr->size;
		len_before = (off_t)db.map_len;
		rc = odb_update(&db, 1000 + i, i + 1);
		if (rc)
			break;
	}
	assert_int_equal(rc, want_rc);
	*keys_ok = i;
	assert_int_equal(i + 1, size_before); /* failed exactly when the table was full */
	assert_int_equal(db.descr->size, size_before);
	assert_int_equal(db.descr->current_size, i + 1);
	assert_int_equal(file_size(f, name), len_before);
	/* existing keys still update after the failure; a new one fails again */
	assert_int_equal(odb_update(&db, 1000, 1), 0);
	assert_int_equal(odb_update(&db, 999, 1), want_rc);
	odb_close(&db);

	assert_int_equal(odb_open(&db, f->dirfd, name, ODB_RDONLY, err, sizeof(err)), 0);
	assert_int_equal(odb_check(&db, err, sizeof(err)), 0);
	{
		size_t count, k;
		const struct odb_node *nodes = odb_nodes(&db, &count);

		assert_int_equal(count, *keys_ok);
		for (k = 0; k < count; k++) {
			assert_int_equal(nodes[k].key, 1000 + k);
			assert_int_equal(nodes[k].value, k + 1 + (k == 0));
		}
	}
	odb_close(&db);
}

/* RLIMIT_FSIZE makes growth fail with EFBIG: same path as a full disk */
static void test_growth_fsize_limit(void **state)
{
	struct fixture *f = *state;
	struct rlimit old, lim;
	uint32_t ok;

	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 20584; /* 1024 nodes fit, 2048 do not */
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	fill_until_error(f, "fsize", -EFBIG, &ok);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(ok, 1023);
}

/* a real ENOSPC: a 64 KiB tmpfs in a private mount namespace (needs root) */
static void test_growth_enospc(void **state)
{
	struct fixture *f = *state;
	char mnt[300], err[256];
	struct fixture sub;
	uint32_t ok;
	off_t len;
	odb_t db;
	int fd;

	snprintf(mnt, sizeof(mnt), "%s/tmpfs", f->dir);
	assert_int_equal(mkdir(mnt, 0755), 0);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", mnt, "tmpfs", 0, "size=64k")) {
		print_message("cannot mount a small tmpfs (%s): ENOSPC test skipped\n",
			      strerror(errno));
		skip();
	}
	sub.dir[0] = 0; /* unused by fill_until_error */
	sub.dirfd = open(mnt, O_RDONLY | O_DIRECTORY);
	assert_true(sub.dirfd >= 0);
	fill_until_error(&sub, "full", -ENOSPC, &ok);
	/* 16 pages: 41064 bytes (11 pages) fit, 82024 do not */
	assert_int_equal(ok, 2047);

	/* creating a new file on the full disk fails cleanly and leaves nothing */
	fd = openat(sub.dirfd, "filler", O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	for (len = 4096; posix_fallocate(fd, 0, len) == 0; len += 4096)
		;
	close(fd);
	assert_int_equal(odb_open(&db, sub.dirfd, "new", ODB_RDWR, err, sizeof(err)), -ENOSPC);
	assert_non_null(strstr(err, "new: cannot reserve 2664 bytes"));
	assert_int_equal(faccessat(sub.dirfd, "new", F_OK, 0), -1);
	close(sub.dirfd);
	assert_int_equal(umount(mnt), 0);
}

/*
 * The same on a real ext4 (8 MiB loop image, private mount namespace): the
 * reservation must hold through delayed allocation, so updates through the
 * mapping and their writeback never fail after growth was refused.
 */
static void test_growth_enospc_ext4(void **state)
{
	struct fixture *f = *state;
	static char buf[65536];
	char cmd[1024], mnt[300], err[256];
	struct fixture sub;
	uint32_t ok, k;
	off_t len = 0;
	odb_t db;
	ssize_t w;
	int fd;

	snprintf(mnt, sizeof(mnt), "%s/ext4", f->dir);
	assert_int_equal(mkdir(mnt, 0755), 0);
	snprintf(cmd, sizeof(cmd),
		 "truncate -s 8M '%s/img' && mkfs.ext4 -q -F '%s/img' >/dev/null 2>&1", f->dir,
		 f->dir);
	if (system(cmd)) {
		print_message("mkfs.ext4 unavailable: ext4 ENOSPC test skipped\n");
		skip();
	}
	snprintf(cmd, sizeof(cmd), "mount -o loop '%s/img' '%s' 2>/dev/null", f->dir, mnt);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    system(cmd)) {
		print_message("cannot loop-mount an ext4 image (no root or no loop device): "
			      "ext4 ENOSPC test skipped\n");
		skip();
	}
	sub.dir[0] = 0;
	sub.dirfd = open(mnt, O_RDONLY | O_DIRECTORY);
	assert_true(sub.dirfd >= 0);
	/* fill the disk, then give back 64 KiB: a few growths fit, then one fails */
	fd = openat(sub.dirfd, "filler", O_CREAT | O_WRONLY, 0644);
	assert_true(fd >= 0);
	while ((w = write(fd, buf, sizeof(buf))) > 0)
		len += w;
	assert_int_equal(fsync(fd), 0);
	assert_int_equal(ftruncate(fd, len > 65536 ? len - 65536 : 0), 0);
	assert_int_equal(fsync(fd), 0);
	close(fd);
	fill_until_error(&sub, "full", -ENOSPC, &ok);
	print_message("ext4: %u keys fit before growth hit ENOSPC\n", ok);
	assert_true(ok >= 127);

	/* hammer the accepted keys and force writeback: no SIGBUS, nothing lost */
	assert_int_equal(odb_open(&db, sub.dirfd, "full", ODB_RDWR, err, sizeof(err)), 0);
	for (k = 0; k < 1000000; k++)
		assert_int_equal(odb_update(&db, 1000 + k % ok, 1), 0);
	assert_int_equal(msync(db.base, db.map_len, MS_SYNC), 0);
	odb_close(&db);
	assert_int_equal(odb_open(&db, sub.dirfd, "full", ODB_RDONLY, err, sizeof(err)), 0);
	assert_int_equal(odb_check(&db, err, sizeof(err)), 0);
	{
		size_t count, i;
		const struct odb_node *nodes = odb_nodes(&db, &count);
		uint64_t sum = 0;

		assert_int_equal(count, ok);
		for (i = 0; i < count; i++)
			sum += nodes[i].value;
		/* fill_until_error: 1..ok, +1 on the first key; then 10^6 */
		assert_int_equal(sum, (uint64_t)ok * (ok + 1) / 2 + 1 + 1000000);
	}
	odb_close(&db);
	close(sub.dirfd);
	assert_int_equal(umount(mnt), 0);
}

/* a reader keeps to its snapshot while a writer grows the file under it */
static void test_reader_snapshot(void **state)
{
	struct fixture *f = *state;
	const struct odb_node *nodes;
	char err[256];
	size_t count, i;
	odb_t w, r;

	assert_int_equal(odb_open(&w, f->dirfd, "live", ODB_RDWR, err, sizeof(err)), 0);
	op_header_init(odb_header(&w));
	for (i = 0; i < 100; i++)
		assert_int_equal(odb_update(&w, 0x5000 + i, (uint32_t)i + 1), 0);
	assert_int_equal(odb_open(&r, f->dirfd, "live", ODB_RDONLY, err, sizeof(err)), 0);
	assert_int_equal(r.size, 128);
	assert_int_equal(r.cur, 101);
	for (i = 100; i < 5000; i++) /* 128 -> 8192 nodes: the reader's table is overwritten */
		assert_int_equal(odb_update(&w, 0x5000 + i, (uint32_t)i + 1), 0);
	assert_int_equal(w.descr->size, 8192);
	nodes = odb_nodes(&r, &count);
	assert_int_equal(count, 100);
	for (i = 0; i < count; i++) {
		assert_int_equal(nodes[i].key, 0x5000 + i);
		assert_int_equal(nodes[i].value, i + 1);
	}
	/* its chains are stale, but that is the writer's doing, not corruption */
	assert_int_equal(odb_check(&r, err, sizeof(err)), 0);
	odb_close(&r);
	assert_int_equal(odb_open(&r, f->dirfd, "live", ODB_RDONLY, err, sizeof(err)), 0);
	assert_int_equal(odb_check(&r, err, sizeof(err)), 0);
	odb_nodes(&r, &count);
	assert_int_equal(count, 5000);
	odb_close(&r);
	odb_close(&w);
}

static void write_at(struct fixture *f, const char *name, off_t off, const void *b, size_t len)
{
	int fd = openat(f->dirfd, name, O_WRONLY);

	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, b, len, off), (ssize_t)len);
	close(fd);
}

/*
 * A writer killed inside an insert, after it linked the node at its bucket
 * head and before it raised current_size (its insert marker still set):
 * readers refuse the file (a head past the used nodes), the next writer
 * unlinks the uncommitted node and every committed count is intact. The
 * same bytes without the marker are refused by the writer too.
 */
static void test_insert_crash_repair(void **state)
{
	static unsigned char before[ODB_FILE_SIZE(128)], after[ODB_FILE_SIZE(128)];
	struct fixture *f = *state;
	const struct odb_node *nodes;
	uint32_t cur, b, *hash;
	struct odb_node *n;
	char err[256];
	size_t count, i;
	odb_t db;
	unsigned char *m;
	int fd;

	assert_int_equal(odb_open(&db, f->dirfd, "half", ODB_RDWR, err, sizeof(err)), 0);
	op_header_init(odb_header(&db));
	for (i = 0; i < 50; i++)
		assert_int_equal(odb_update(&db, 0x700 + i, (uint32_t)i + 1), 0);
	odb_close(&db);
	/* the dead writer's half insert, as odb_insert() leaves it before the commit */
	fd = openat(f->dirfd, "half", O_RDWR);
	assert_true(fd >= 0);
	m = mmap(NULL, ODB_FILE_SIZE(128), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	assert_true(m != MAP_FAILED);
	cur = ((struct odb_descr *)(m + ODB_DESCR_OFFSET))->current_size;
	assert_int_equal(cur, 51);
	n = (struct odb_node *)(m + ODB_NODE_OFFSET) + cur;
	hash = (uint32_t *)(m + ODB_NODE_OFFSET + 128 * sizeof(struct odb_node));
	b = odb_hash(0x701, 128); /* a key already in: a chain of one or more */
	n->key = 0x701 + 128 * 256; /* another key of that bucket */
	assert_int_equal(odb_hash(n->key, 128), b);
	n->value = 1;
	n->next = hash[b];
	hash[b] = cur;
	assert_int_equal(read_all(f, "half", before, sizeof(before)), ODB_FILE_SIZE(128));
	/* without the insert marker, the same bytes are a corrupt file: refused, left alone */
	assert_int_equal(odb_open(&db, f->dirfd, "half", ODB_RDWR, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "out of range"));
	assert_int_equal(read_all(f, "half", after, sizeof(after)), ODB_FILE_SIZE(128));
	assert_memory_equal(before, after, ODB_FILE_SIZE(128));
	((struct odb_descr *)(m + ODB_DESCR_OFFSET))->padding[0] = 2;
	munmap(m, ODB_FILE_SIZE(128));
	close(fd);
	assert_int_equal(odb_open(&db, f->dirfd, "half", ODB_RDONLY, err, sizeof(err)), 0);
	assert_int_equal(odb_check(&db, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "out of range (used nodes 50): a writer died inside an insert"));
	odb_close(&db);
	assert_int_equal(odb_open(&db, f->dirfd, "half", ODB_RDWR, err, sizeof(err)), 0);
	assert_int_equal(db.descr->padding[0], 0);
	assert_int_equal(odb_check(&db, err, sizeof(err)), 0);
	assert_int_equal(odb_update(&db, 0x701 + 128 * 256, 5), 0);
	odb_close(&db);
	assert_int_equal(odb_open(&db, f->dirfd, "half", ODB_RDONLY, err, sizeof(err)), 0);
	assert_int_equal(odb_check(&db, err, sizeof(err)), 0);
	nodes = odb_nodes(&db, &count);
	assert_int_equal(count, 51);
	for (i = 0; i < 50; i++) {
		assert_int_equal(nodes[i].key, 0x700 + i);
		assert_int_equal(nodes[i].value, i + 1);
	}
	assert_int_equal(nodes[50].key, 0x701 + 128 * 256);
	assert_int_equal(nodes[50].value, 5);
	odb_close(&db);
}

/*
 * One writer per file: a second ODB_RDWR open, in this process (another
 * open file description) or in another process, is refused with -EBUSY and
 * a message, and changes nothing; once the writer closes, it opens. Two
 * writers each keep their own current_size, so each would overwrite the
 * nodes the other adds.
 */
static void test_second_writer_refused(void **state)
{
	struct fixture *f = *state;
	unsigned char before[4096], after[4096];
	char err[256];
	size_t len;
	odb_t w, w2;
	pid_t pid;
	int status;
	uint32_t i;

	assert_int_equal(odb_open(&w, f->dirfd, "one", ODB_RDWR, err, sizeof(err)), 0);
	op_header_init(odb_header(&w));
	for (i = 0; i < 50; i++)
		assert_int_equal(odb_update(&w, 0x100 + i, 1), 0);
	len = read_all(f, "one", before, sizeof(before));
	err[0] = 0;
	assert_int_equal(odb_open(&w2, f->dirfd, "one", ODB_RDWR, err, sizeof(err)), -EBUSY);
	assert_non_null(strstr(err, "one: already open for writing elsewhere"));
	assert_int_equal(w2.fd, -1);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		odb_t c;

		_exit(odb_open(&c, f->dirfd, "one", ODB_RDWR, NULL, 0) == -EBUSY ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* readers are not writers */
	assert_int_equal(odb_open(&w2, f->dirfd, "one", ODB_RDONLY, err, sizeof(err)), 0);
	odb_close(&w2);
	assert_int_equal(read_all(f, "one", after, sizeof(after)), len);
	assert_memory_equal(before, after, len);
	/* the first writer still works, and hands over when it closes */
	assert_int_equal(odb_update(&w, 0x100, 1), 0);
	odb_close(&w);
	assert_int_equal(odb_open(&w2, f->dirfd, "one", ODB_RDWR, err, sizeof(err)), 0);
	assert_int_equal(odb_update(&w2, 0x100, 1), 0);
	assert_int_equal(odb_check(&w2, err, sizeof(err)), 0);
	assert_int_equal(w2.nodes[1].value, 3);
	odb_close(&w2);
}

/*
 * Chains in another order than writers make them (the older node first) are
 * valid; a writer relinks them at open, since its bounds checks rely on the
 * order (each index below the one before).
 */
static void test_writer_relinks_foreign_order(void **state)
{
	struct fixture *f = *state;
	const uint64_t k1 = 5, k2 = (1ull << 32) | 4; /* same bucket: hi ^ lo = 5 */
	const uint32_t b = odb_hash(k1, 128), one = 1, two = 2, zero = 0;
	const struct odb_node *nodes;
	char err[256];
	size_t count;
	odb_t db;

	assert_int_equal(odb_hash(k2, 128), b);
	assert_int_equal(odb_open(&db, f->dirfd, "order", ODB_RDWR, err, sizeof(err)), 0);
	op_header_init(odb_header(&db));
	assert_int_equal(odb_update(&db, k1, 1), 0);
	assert_int_equal(odb_update(&db, k2, 1), 0);
	odb_close(&db);
	/* bucket -> node 1 -> node 2 */
	write_at(f, "order", 104 + 16 * 128 + 4 * b, &one, 4);
	write_at(f, "order", 104 + 16 * 1 + 12, &two, 4);
	write_at(f, "order", 104 + 16 * 2 + 12, &zero, 4);
	assert_int_equal(odb_open(&db, f->dirfd, "order", ODB_RDONLY, err, sizeof(err)), 0);
	assert_int_equal(odb_check(&db, err, sizeof(err)), 0);
	odb_close(&db);

	assert_int_equal(odb_open(&db, f->dirfd, "order", ODB_RDWR, err, sizeof(err)), 0);
	assert_chains_descending(&db);
	assert_int_equal(odb_update_hot(&db, k1, 1), 0);
	assert_int_equal(odb_update_hot(&db, k2, 1), 0);
	assert_int_equal(odb_update(&db, k1, 1), 0);
	nodes = odb_nodes(&db, &count);
	assert_int_equal(count, 2);
	assert_int_equal(nodes[0].value, 3);
	assert_int_equal(nodes[1].value, 2);
	odb_close(&db);
}

/* a writer that died while doubling the table: readers refuse, the next writer repairs */
static void test_growth_crash_repair(void **state)
{
	static unsigned char before[8192], after[8192], zeros[2560];
	struct fixture *f = *state;
	const uint32_t one = 1;
	char err[512];
	uint32_t i;
	size_t n;
	odb_t db;
	int fd;

	assert_int_equal(odb_open(&db, f->dirfd, "crash", ODB_RDWR, err, sizeof(err)), 0);
	op_header_init(odb_header(&db));
	for (i = 0; i < 127; i++) /* full: the next insert grows */
		assert_int_equal(odb_update(&db, rnd(), i + 1), 0);
	odb_close(&db);
	n = read_all(f, "crash", before, sizeof(before));
	assert_int_equal(n, 2664);

	/* the crash: marker set, tail written, some chains relinked for 256 buckets */
	write_at(f, "crash", 80, &one, 4);
	write_at(f, "crash", 2664, zeros, sizeof(zeros));
	for (i = 1; i < 127; i += 3)
		write_at(f, "crash", 104 + 16 * i + 12, &i, 4);
	assert_int_equal(odb_open(&db, f->dirfd, "crash", ODB_RDONLY, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "crash: file size 5224 holds 256 nodes but the descriptor says 128: "
				 "a writer did not finish growing it (a writer reopening it "
				 "repairs it)");
	assert_int_equal(odb_open(&db, f->dirfd, "crash", ODB_RDWR, err, sizeof(err)), 0);
	odb_close(&db);
	n = read_all(f, "crash", after, sizeof(after));
	assert_int_equal(n, 2664);
	assert_memory_equal(after, before, 2664); /* exactly the file before the growth */

	/* died after publishing the new size, before clearing the marker */
	assert_int_equal(odb_open(&db, f->dirfd, "crash", ODB_RDWR, err, sizeof(err)), 0);
	assert_int_equal(odb_update(&db, 1, 1), 0); /* grows to 256 */
	odb_close(&db);
	n = read_all(f, "crash", before, sizeof(before));
	assert_int_equal(n, 5224);
	write_at(f, "crash", 80, &one, 4);
	assert_int_equal(odb_open(&db, f->dirfd, "crash", ODB_RDONLY, err, sizeof(err)), 0);
	assert_int_equal(odb_check(&db, err, sizeof(err)), 0);
	odb_close(&db);
	assert_int_equal(odb_open(&db, f->dirfd, "crash", ODB_RDWR, err, sizeof(err)), 0);
	odb_close(&db);
	n = read_all(f, "crash", after, sizeof(after));
	assert_int_equal(n, 5224);
	assert_memory_equal(after, before, 5224);

	/* a marker on a file that is not mid-growth changes nothing else */
	fd = openat(f->dirfd, "crash", O_RDONLY);
	assert_true(fd >= 0);
	close(fd);
}

/* readers in a loop while another process inserts, grows and updates */
static void test_concurrent_reader(void **state)
{
	struct fixture *f = *state;
	unsigned opened = 0, max_seen = 0;
	char err[512];
	int pfd[2], status;
	pid_t pid;
	char c;

	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		odb_t w;
		uint32_t k;

		close(pfd[0]);
		if (odb_open(&w, f->dirfd, "conc", ODB_RDWR, err, sizeof(err)))
			_exit(2);
		/* the reader starts before the header is filled: it must wait for it */
		if (write(pfd[1], "x", 1) != 1)
			_exit(3);
		usleep(20000);
		op_header_init(odb_header(&w));
		for (k = 0; k < 3000000; k++)
			if (odb_update(&w, mix64(k % 300000 + (k / 1000) % 7), 1))
				_exit(4);
		odb_close(&w);
		_exit(0);
	}
	close(pfd[1]);
	assert_int_equal(read(pfd[0], &c, 1), 1);
	close(pfd[0]);
	for (;;) {
		const struct odb_node *nodes;
		size_t count, i;
		uint64_t sum = 0;
		odb_t r;
		int done = waitpid(pid, &status, WNOHANG) == pid;

		if (odb_open(&r, f->dirfd, "conc", ODB_RDONLY, err, sizeof(err)) ||
		    odb_check(&r, err, sizeof(err)))
			fail_msg("reader #%u: %s", opened, err);
		nodes = odb_nodes(&r, &count);
		for (i = 0; i < count; i++)
			sum += nodes[i].value;
		assert_true(sum >= count);
		max_seen = count > max_seen ? (unsigned)count : max_seen;
		odb_close(&r);
		opened++;
		if (done)
			break;
	}
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	print_message("%u reads during the writer's run, up to %u nodes\n", opened, max_seen);
	assert_true(opened > 1);
	assert_true(max_seen >= 300000);
}

/*
 * Hostile writes: another process that can write a sample file (a second
 * shared mapping) changes the descriptor and the indexes under a writer.
 * The writer must keep to its own size and current_size, never read or
 * write outside its mapping, never loop, and stop using a file whose
 * chains were broken (-EIO on every later update).
 */
#define HOSTILE_KEYS 300 /* size 512, current_size 301 */
#define HOSTILE_NEW 400  /* enough new keys to grow to 1024 */

static const char *hostile_case = "";

static void hostile_alarm(int sig)
{
	static const char msg[] = "test_odb: writer hangs (endless chain walk) in case: ";

	(void)sig;
	if (write(2, msg, sizeof(msg) - 1) < 0 ||
	    write(2, hostile_case, strlen(hostile_case)) < 0 || write(2, "\n", 1) < 0) {
		/* dying anyway */
	}
	_exit(1);
}

static uint64_t hostile_key(uint32_t i)
{
	return 0x400000 + (uint64_t)i * 0x35;
}

/* the attacker's view: the descriptor, node i's next, bucket b's head */
struct attacker {
	unsigned char *m;
	size_t len;
};

static uint32_t *a_word(struct attacker *a, size_t off)
{
	assert_true(off + 4 <= a->len);
	return (uint32_t *)(a->m + off);
}

static uint32_t *a_size(struct attacker *a)
{
	return a_word(a, ODB_DESCR_OFFSET);
}

static uint32_t *a_cur(struct attacker *a)
{
	return a_word(a, ODB_DESCR_OFFSET + 4);
}

static uint32_t *a_next(struct attacker *a, uint32_t i)
{
	return a_word(a, ODB_NODE_OFFSET + 16 * (size_t)i + 12);
}

static uint32_t *a_head(struct attacker *a, uint32_t b)
{
	return a_word(a, ODB_NODE_OFFSET + 16 * 512 + 4 * (size_t)b);
}

/* first bucket (of 512) whose chain has at least @len nodes */
static uint32_t a_bucket_with(struct attacker *a, uint32_t len)
{
	uint32_t b, i, n;

	for (b = 0; b < 512; b++) {
		for (n = 0, i = *a_head(a, b); i && n < len; i = *a_next(a, i))
			n++;
		if (n >= len)
			return b;
	}
	fail_msg("no chain of %u nodes", len);
	return 0;
}

/* each returns the bucket it damaged, or UINT32_MAX for the descriptor */
static uint32_t h_size(struct attacker *a, uint32_t v)
{
	*a_size(a) = v;
	return UINT32_MAX;
}

static uint32_t h_cur(struct attacker *a, uint32_t v)
{
	*a_cur(a) = v;
	return UINT32_MAX;
}

static uint32_t h_head(struct attacker *a, uint32_t v)
{
	uint32_t b = a_bucket_with(a, 1);

	*a_head(a, b) = v;
	return b;
}

static uint32_t h_empty_head(struct attacker *a, uint32_t v)
{
	uint32_t b;

	for (b = 0; *a_head(a, b); b++)
		;
	*a_head(a, b) = v;
	return b;
}

/* the head's next (the second node is looked up through it) */
static uint32_t h_next(struct attacker *a, uint32_t v)
{
	uint32_t b = a_bucket_with(a, 2);

	*a_next(a, *a_head(a, b)) = v;
	return b;
}

/* a next index that goes up instead of down, in range: no writer makes that */
static uint32_t h_next_up(struct attacker *a, uint32_t v)
{
	(void)v;
	return h_next(a, HOSTILE_KEYS); /* the newest node */
}

static uint32_t h_self_loop(struct attacker *a, uint32_t v)
{
	uint32_t b = a_bucket_with(a, 2), h = *a_head(a, b);

	(void)v;
	*a_next(a, h) = h;
	return b;
}

static uint32_t h_cycle(struct attacker *a, uint32_t v)
{
	uint32_t b = a_bucket_with(a, 2), h = *a_head(a, b), s = *a_next(a, h);

	(void)v;
	*a_next(a, s) = h;
	return b;
}

/* a key not in the file whose bucket is @b: its lookup walks the whole chain */
static uint64_t probe_key(uint32_t b)
{
	uint64_t k;

	for (k = 0x50000000;; k++)
		if (odb_hash(k, 512) == b)
			return k;
}

static void test_writer_hostile(void **state)
{
	static const struct {
		const char *name;
		uint32_t (*apply)(struct attacker *a, uint32_t v);
		uint32_t v;
		bool broken; /* chains broken: -EIO from then on; else the writer ignores it */
	} t[] = {
		{ "descr size 2^30", h_size, 1u << 30, false },
		{ "descr size 2^31", h_size, 1u << 31, false },
		{ "descr size 0", h_size, 0, false },
		{ "descr size 2 (smaller)", h_size, 2, false },
		{ "descr size 256 (smaller)", h_size, 256, false },
		{ "descr size UINT32_MAX", h_size, UINT32_MAX, false },
		{ "current_size 0", h_cur, 0, false },
		{ "current_size 2", h_cur, 2, false },
		{ "current_size = size", h_cur, 512, false },
		{ "current_size UINT32_MAX", h_cur, UINT32_MAX, false },
		{ "bucket head UINT32_MAX", h_head, UINT32_MAX, true },
		{ "bucket head 2^28", h_head, 1u << 28, true },
		{ "bucket head = current_size", h_head, HOSTILE_KEYS + 1, true },
		{ "empty bucket head UINT32_MAX", h_empty_head, UINT32_MAX, true },
		{ "next UINT32_MAX", h_next, UINT32_MAX, true },
		{ "next 2^28", h_next, 1u << 28, true },
		{ "next in unused slots", h_next, 511, true },
		{ "next going up", h_next_up, 0, true },
		{ "self loop", h_self_loop, 0, true },
		{ "2-node cycle", h_cycle, 0, true },
	};
	struct fixture *f = *state;
	char err[256], name[32];
	size_t k;

	signal(SIGALRM, hostile_alarm);
	for (k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		struct attacker a;
		uint64_t want = 0, sum = 0;
		const struct odb_node *nodes;
		unsigned eio = 0, round;
		size_t count, i;
		uint32_t j, b;
		odb_t db;
		int fd;

		hostile_case = t[k].name;
		snprintf(name, sizeof(name), "hostile%zu", k);
		assert_int_equal(odb_open(&db, f->dirfd, name, ODB_RDWR, err, sizeof(err)), 0);
		op_header_init(odb_header(&db));
		for (j = 0; j < HOSTILE_KEYS; j++) {
			assert_int_equal(odb_update(&db, hostile_key(j), 1), 0);
			want++;
		}
		fd = openat(f->dirfd, name, O_RDWR);
		assert_true(fd >= 0);
		a.len = db.map_len;
		a.m = mmap(NULL, a.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		assert_true(a.m != MAP_FAILED);
		close(fd);
		b = t[k].apply(&a, t[k].v);

		alarm(10);
		if (b != UINT32_MAX) {
			/* a walk of the whole damaged chain, first thing */
			assert_int_equal(odb_update_hot(&db, probe_key(b), 1), -EIO);
			eio++;
		}
		/* every key, old and new, through both paths, three times: walks every chain */
		for (round = 0; round < 3; round++) {
			for (j = 0; j < HOSTILE_KEYS + HOSTILE_NEW; j++) {
				int rc = j & 1 ? odb_update_hot(&db, hostile_key(j), 1)
					       : odb_update(&db, hostile_key(j), 1);

				if (rc == -EIO)
					eio++;
				else if (rc)
					fail_msg("%s: update returned %d", t[k].name, rc);
				else if (eio)
					fail_msg("%s: an update succeeded after -EIO", t[k].name);
				else
					want++;
			}
		}
		alarm(0);
		if (t[k].broken) {
			if (!eio)
				fail_msg("%s: never reported", t[k].name);
			/* stopped using it: nothing reported as used any more */
			odb_nodes(&db, &count);
			assert_int_equal(count, 0);
		} else {
			if (eio)
				fail_msg("%s: %u updates refused", t[k].name, eio);
			/* the writer's own view: every count where it belongs */
			nodes = odb_nodes(&db, &count);
			assert_int_equal(count, HOSTILE_KEYS + HOSTILE_NEW);
			for (i = 0; i < count; i++) {
				assert_int_equal(nodes[i].key, hostile_key((uint32_t)i));
				sum += nodes[i].value;
			}
			assert_int_equal(sum, want);
		}
		munmap(a.m, a.len);
		odb_close(&db);
	}
	signal(SIGALRM, SIG_DFL);
}

/*
 * The same as a race: a child puts random words into the descriptor, the
 * bucket heads and the next indexes for a moment each (then puts the old
 * word back) while the parent counts the keys of the file, reopening it
 * whenever the writer gave up on it. No crash, no hang, only -EIO. (A chain
 * redirected in range can make the writer insert a key twice, and the old
 * word put back then loses that node: the file stays corrupt, and the
 * parent writes the original back when an open refuses it.)
 */
static void test_writer_hostile_race(void **state)
{
	struct fixture *f = *state;
	unsigned long updates = 0, eio = 0, reopen_refused = 0;
	unsigned char *pristine;
	char err[256];
	size_t len;
	uint32_t j;
	odb_t db;
	pid_t pid;
	int status;

	assert_int_equal(odb_open(&db, f->dirfd, "race", ODB_RDWR, err, sizeof(err)), 0);
	op_header_init(odb_header(&db));
	for (j = 0; j < HOSTILE_KEYS; j++)
		assert_int_equal(odb_update(&db, hostile_key(j), 1), 0);
	len = db.map_len;
	odb_close(&db);
	pristine = malloc(len);
	assert_non_null(pristine);
	assert_int_equal(read_all(f, "race", pristine, len), len);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		uint64_t x = 0x9e3779b97f4a7c15ull;
		int fd = openat(f->dirfd, "race", O_RDWR);
		volatile uint32_t *w;
		unsigned char *m;
		unsigned n;
		uint32_t old;
		size_t off;

		if (fd < 0)
			_exit(2);
		m = mmap(NULL, ODB_FILE_SIZE(512), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m == MAP_FAILED)
			_exit(3);
		for (n = 0; n < 20000; n++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			switch (x & 3) {
			case 0: /* size or current_size */
				off = ODB_DESCR_OFFSET + 4 * ((x >> 2) & 1);
				break;
			case 1: /* a bucket head */
				off = ODB_NODE_OFFSET + 16 * 512 + 4 * ((x >> 8) % 512);
				break;
			default: /* a next index */
				off = ODB_NODE_OFFSET + 16 * (1 + (x >> 8) % HOSTILE_KEYS) + 12;
				break;
			}
			w = (volatile uint32_t *)(m + off);
			old = *w;
			/* far out of range, or in range (cycles, wrong order) */
			*w = (x >> 32) & 4 ? (uint32_t)(x >> 40) << 8 : (uint32_t)(x >> 40) % 600;
			usleep(20);
			*w = old;
		}
		_exit(0);
	}
	hostile_case = "race";
	signal(SIGALRM, hostile_alarm);
	alarm(30);
	while (waitpid(pid, &status, WNOHANG) != pid) {
		int rc = odb_open(&db, f->dirfd, "race", ODB_RDWR, err, sizeof(err));

		if (rc) {
			int fd = openat(f->dirfd, "race", O_WRONLY);

			/* the check at open saw the damage: refused with a message */
			if (rc != -EINVAL || strncmp(err, "race: ", 6))
				fail_msg("open: %d %s", rc, err);
			reopen_refused++;
			assert_true(fd >= 0);
			assert_int_equal(ftruncate(fd, (off_t)len), 0);
			assert_int_equal(pwrite(fd, pristine, len, 0), (ssize_t)len);
			close(fd);
			continue;
		}
		for (j = 0; j < 100000; j++) {
			uint64_t key = hostile_key(j % HOSTILE_KEYS);

			rc = j & 1 ? odb_update_hot(&db, key, 1) : odb_update(&db, key, 1);
			updates++;
			if (rc == -EIO) {
				eio++;
				break;
			}
			if (rc)
				fail_msg("update: %d", rc);
		}
		odb_close(&db);
	}
	alarm(0);
	signal(SIGALRM, SIG_DFL);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	print_message("%lu updates under a scribbler, %lu gave -EIO, %lu opens refused\n",
		      updates, eio, reopen_refused);
	assert_true(eio > 0);
	free(pristine);
}

/* a reader's data stays readable after another process truncates the file (no SIGBUS) */
static void test_reader_truncated_after_open(void **state)
{
	static const off_t cut[] = { 0, 4096, 100000 };
	struct fixture *f = *state;
	const struct odb_node *nodes;
	char err[256];
	size_t count, i, c;
	uint64_t sum;
	odb_t w, r;
	uint32_t j;

	assert_int_equal(odb_open(&w, f->dirfd, "cut", ODB_RDWR, err, sizeof(err)), 0);
	op_header_init(odb_header(&w));
	for (j = 0; j < 20000; j++)
		assert_int_equal(odb_update(&w, hostile_key(j), 2), 0);
	odb_close(&w);
	for (c = 0; c < sizeof(cut) / sizeof(cut[0]); c++) {
		int fd;
		unsigned char *copy;
		size_t len;

		assert_int_equal(odb_open(&r, f->dirfd, "cut", ODB_RDONLY, err, sizeof(err)), 0);
		len = r.map_len;
		copy = malloc(len);
		assert_non_null(copy);
		assert_int_equal(read_all(f, "cut", copy, len), len);
		fd = openat(f->dirfd, "cut", O_RDWR);
		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, cut[c]), 0);
		/* everything the reader does after open, on the truncated file */
		assert_int_equal(odb_check(&r, err, sizeof(err)), 0);
		assert_memory_equal(odb_header(&r), "DAE\n", 4);
		nodes = odb_nodes(&r, &count);
		assert_int_equal(count, 20000);
		for (i = 0, sum = 0; i < count; i++)
			sum += nodes[i].value;
		assert_int_equal(sum, 40000);
		odb_close(&r);
		/* a later open: refused with a message naming the file */
		assert_int_equal(odb_open(&r, f->dirfd, "cut", ODB_RDONLY, err, sizeof(err)),
				 cut[c] ? -EINVAL : -EIO);
		assert_int_equal(strncmp(err, "cut: ", 5), 0);
		/* put it back */
		assert_int_equal(pwrite(fd, copy, len, 0), (ssize_t)len);
		close(fd);
		free(copy);
	}
}

/*
 * A file that ends before its size said (it shrank between fstat and the
 * read): a sysfs attribute, a regular file whose st_size is 4096, reads
 * the same way. Refused with -EIO and a message naming it.
 */
static void test_reader_short_read(void **state)
{
	static const char path[] = "/sys/kernel/uevent_seqnum";
	char err[256], want[256];
	struct stat st;
	odb_t r;

	(void)state;
	if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size <= 32) {
		print_message("%s: no sysfs attribute to read: short read test skipped\n", path);
		skip();
	}
	assert_int_equal(odb_open(&r, AT_FDCWD, path, ODB_RDONLY, err, sizeof(err)), -EIO);
	assert_null(r.base);
	snprintf(want, sizeof(want), "%s: file shrank while being read (", path);
	assert_int_equal(strncmp(err, want, strlen(want)), 0);
	assert_non_null(strstr(err, " expected): changed by another process"));
	odb_close(&r);
}

/*
 * Readers while another process truncates the file and writes it back, over
 * and over (opreport on a file that changes under it): each open either sees
 * the whole file or refuses it with a message naming it; never a crash.
 */
static void test_reader_truncate_race(void **state)
{
	struct fixture *f = *state;
	unsigned ok = 0, refused = 0, n;
	unsigned char *copy;
	char err[512];
	size_t len;
	odb_t w;
	uint32_t j;
	pid_t pid;
	int status, pfd[2];

	assert_int_equal(odb_open(&w, f->dirfd, "shrink", ODB_RDWR, err, sizeof(err)), 0);
	op_header_init(odb_header(&w));
	for (j = 0; j < 20000; j++)
		assert_int_equal(odb_update(&w, hostile_key(j), 1), 0);
	len = w.map_len;
	odb_close(&w);
	copy = malloc(len);
	assert_non_null(copy);
	assert_int_equal(read_all(f, "shrink", copy, len), len);
	assert_int_equal(pipe(pfd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = openat(f->dirfd, "shrink", O_RDWR);
		uint64_t x = 88172645463325252ull;
		char c;

		close(pfd[1]);
		if (fd < 0)
			_exit(2);
		fcntl(pfd[0], F_SETFL, O_NONBLOCK);
		/* until the parent closes the pipe */
		while (read(pfd[0], &c, 1) < 0) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			if (ftruncate(fd, (off_t)((x >> 8) % len)))
				_exit(3);
			usleep((useconds_t)(x >> 40) % 200);
			if (pwrite(fd, copy, len, 0) != (ssize_t)len)
				_exit(4);
			usleep((useconds_t)(x >> 20) % 1000);
		}
		_exit(0);
	}
	close(pfd[0]);
	for (n = 0; n < 1500 && (ok < 50 || refused < 50 || n < 300); n++) {
		const struct odb_node *nodes;
		size_t count, i;
		uint64_t sum = 0;
		odb_t r;
		int rc;

		err[0] = 0;
		rc = odb_open(&r, f->dirfd, "shrink", ODB_RDONLY, err, sizeof(err));
		if (!rc)
			rc = odb_check(&r, err, sizeof(err));
		if (rc) {
			if ((rc != -EINVAL && rc != -EIO) || strncmp(err, "shrink: ", 8))
				fail_msg("open #%u: %d \"%s\"", n, rc, err);
			refused++;
			odb_close(&r);
			continue;
		}
		nodes = odb_nodes(&r, &count);
		for (i = 0; i < count; i++)
			sum += nodes[i].value;
		assert_int_equal(count, 20000);
		assert_int_equal(sum, 20000);
		odb_close(&r);
		ok++;
	}
	close(pfd[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	free(copy);
	print_message("%u reads of a file truncated meanwhile: %u whole, %u refused\n", n, ok,
		      refused);
	assert_true(ok > 0 && refused > 0);
}

static void test_abi_file(void **state)
{
	static const char want[] =
		"sizeof_double 8\nsizeof_u64 8\nsizeof_u8 1\nsizeof_u32 4\nsizeof_int 4\n"
		"sizeof_unsigned_int 4\nsizeof_odb_key_t 8\nsizeof_odb_index_t 4\n"
		"sizeof_odb_value_t 4\nsizeof_odb_node_nr_t 4\nsizeof_odb_descr_t 32\n"
		"sizeof_odb_node_t 16\nsizeof_struct_opd_header 72\n"
		"offsetof_node_key 0\noffsetof_node_value 8\noffsetof_node_next 12\n"
		"offsetof_descr_size 0\noffsetof_descr_current_size 4\n"
		"offsetof_header_magic 0\noffsetof_header_version 4\noffsetof_header_cpu_type 8\n"
		"offsetof_header_ctr_event 12\noffsetof_header_ctr_um 16\n"
		"offsetof_header_ctr_count 20\noffsetof_header_is_kernel 24\n"
		"offsetof_header_cpu_speed 32\noffsetof_header_mtime 40\n"
		"offsetof_header_cg_to_is_kernel 48\noffsetof_header_anon_start 56\n"
		"offsetof_header_cg_to_anon_start 64\nlittle_endian 1\n";
	struct fixture *f = *state;
	char buf[4096];
	size_t n;
	struct stat st;

	assert_int_equal(op_write_abi(f->dirfd, "abi"), 0);
	n = read_all(f, "abi", (unsigned char *)buf, sizeof(buf) - 1);
	buf[n] = 0;
	assert_string_equal(buf, want);
	assert_int_equal(fstatat(f->dirfd, "abi", &st, 0), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(faccessat(f->dirfd, "abi.tmp", F_OK, 0), -1);
	/* rewriting replaces it */
	assert_int_equal(op_write_abi(f->dirfd, "abi"), 0);
	assert_int_equal(file_size(f, "abi"), (off_t)strlen(want));
	/* never through a symlink */
	assert_int_equal(symlinkat("/nonexistent-abi-target", f->dirfd, "abi2.tmp"), 0);
	assert_int_equal(op_write_abi(f->dirfd, "abi2"), -ELOOP);
}

static void test_header_check(void **state)
{
	struct opd_header h;
	char err[256];

	(void)state;
	op_header_init(&h);
	assert_int_equal(op_header_check(&h, "f", err, sizeof(err)), 0);
	h.magic[3] = 'X';
	assert_int_equal(op_header_check(&h, "f", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "f: bad magic 44 41 45 58, expected 44 41 45 0a (\"DAE\\n\"): "
				 "not an OProfile sample file");
	op_header_init(&h);
	h.version = 0x14;
	assert_int_equal(op_header_check(&h, "f", err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "f: sample file version 0x14, expected 0x13 (OProfile 1.x)");
	assert_int_equal(op_header_check(&h, "f", NULL, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hash_function),
		cmocka_unit_test(test_header_check),
		cmocka_unit_test_setup_teardown(test_create_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_growth_sizes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_growth_stale_area, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_model, setup, teardown),
		cmocka_unit_test_setup_teardown(test_saturation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_create_expected_new, setup, teardown),
		cmocka_unit_test_setup_teardown(test_growth_fsize_limit, setup, teardown),
		cmocka_unit_test_setup_teardown(test_growth_enospc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_growth_enospc_ext4, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_snapshot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_growth_crash_repair, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_relinks_foreign_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_reader, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_hostile, setup, teardown),
		cmocka_unit_test_setup_teardown(test_writer_hostile_race, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reader_truncated_after_open, setup, teardown),
		cmocka_unit_test(test_reader_short_read),
		cmocka_unit_test_setup_teardown(test_reader_truncate_race, setup, teardown),
		cmocka_unit_test_setup_teardown(test_abi_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_second_writer_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_insert_crash_repair, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
