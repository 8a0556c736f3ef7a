/*
 * test_odb_corrupt.c - lib/odb reader and writer against corrupt sample
 * files: a table of single defects, each refused with its exact message,
 * plus every truncation and random byte flips (no crash, no hang).
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odb.h"
#include "op_header.h"

#define BASE_KEYS 300 /* size 512, current_size 301: grown twice */
#define FILE_NAME "s.odb"

/* a sample file held in memory while a defect is applied */
struct img {
	unsigned char *b;
	size_t len;
	uint32_t size, cur; /* of the valid base */
};

static struct img base;
static char dir[256];
static int dirfd = -1;

static uint32_t get32(const struct img *im, size_t off)
{
	uint32_t v;

	memcpy(&v, im->b + off, 4);
	return v;
}

static void put32(struct img *im, size_t off, uint32_t v)
{
	memcpy(im->b + off, &v, 4);
}

static size_t node_off(uint32_t i)
{
	return ODB_NODE_OFFSET + 16 * (size_t)i;
}

static size_t next_off(uint32_t i)
{
	return node_off(i) + offsetof(struct odb_node, next);
}

static size_t hash_off(const struct img *im, uint32_t b)
{
	return ODB_NODE_OFFSET + 16 * (size_t)im->size + 4 * (size_t)b;
}

static uint64_t key_of(const struct img *im, uint32_t i)
{
	uint64_t k;

	memcpy(&k, im->b + node_off(i), 8);
	return k;
}

static uint32_t head(const struct img *im, uint32_t b)
{
	return get32(im, hash_off(im, b));
}

static uint32_t chain_len(const struct img *im, uint32_t b)
{
	uint32_t n = 0, i;

	for (i = head(im, b); i; i = get32(im, next_off(i)))
		n++;
	return n;
}

/* first bucket whose chain has at least @len nodes */
static uint32_t bucket_with(const struct img *im, uint32_t len)
{
	uint32_t b;

	for (b = 0; b < im->size; b++)
		if (chain_len(im, b) >= len)
			return b;
	fail_msg("base file has no chain of %u nodes", len);
	return 0;
}

static void write_file(const char *name, const unsigned char *b, size_t len)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char err[256];
	uint32_t i;
	odb_t db;
	int fd;

	(void)state;
	/* thousands of small rewrites: tmpfs keeps them off the disk when there is one */
	if (!tmp || !*tmp)
		tmp = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
	snprintf(dir, sizeof(dir), "%s/test_odb_corrupt.XXXXXX", tmp);
	if (!mkdtemp(dir))
		return -1;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (dirfd < 0)
		return -1;
	/* the valid base: sample offsets of a small binary */
	if (odb_open(&db, dirfd, "base", ODB_RDWR, err, sizeof(err)))
		return -1;
	op_header_init(odb_header(&db));
	odb_header(&db)->cpu_type = OP_CPU_TIMER;
	for (i = 0; i < BASE_KEYS; i++)
		if (odb_update(&db, 0x1000 + (uint64_t)i * 0x35, i + 1))
			return -1;
	base.size = db.descr->size;
	base.cur = db.descr->current_size;
	base.len = db.map_len;
	base.b = malloc(base.len);
	if (!base.b)
		return -1;
	memcpy(base.b, db.base, base.len);
	odb_close(&db);
	fd = openat(dirfd, "base", O_RDONLY);
	if (fd < 0)
		return -1;
	close(fd);
	return base.size == 512 && base.cur == 301 && base.len == 10344 ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	close(dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
	free(base.b);
	return 0;
}

/*
 * A defect: @mut changes the image (arg: a parameter) and writes the exact
 * message expected into @want ("%s" stands for the file name).
 */
typedef void (*mutator)(struct img *im, int64_t arg, char *want, size_t wlen);

#define P FILE_NAME ": "

static void m_truncate(struct img *im, int64_t arg, char *want, size_t wlen)
{
	size_t len = arg < 0 ? im->len + arg : (size_t)arg;
	size_t payload;

	if (len > im->len)
		memset(im->b + im->len, 0, len - im->len); /* appended zeros */
	im->len = len;
	payload = len - ODB_NODE_OFFSET;
	if (len == 0)
		snprintf(want, wlen, P "empty sample file (0 bytes): never written or truncated");
	else if (len < ODB_NODE_OFFSET)
		snprintf(want, wlen,
			 P "file size %zu is smaller than the 104-byte header and descriptor: "
			   "truncated",
			 len);
	else if (payload % 20)
		snprintf(want, wlen,
			 P "file size %zu is not 104 + 20*N bytes (%zu bytes too many): truncated or "
			   "appended to",
			 len, payload % 20);
	else
		snprintf(want, wlen, P "file size %zu holds %zu nodes but the descriptor says 512",
			 len, payload / 20);
}

static void m_magic(struct img *im, int64_t arg, char *want, size_t wlen)
{
	memcpy(im->b, &arg, 4);
	snprintf(want, wlen,
		 P "bad magic %02x %02x %02x %02x, expected 44 41 45 0a (\"DAE\\n\"): not an "
		   "OProfile sample file",
		 im->b[0], im->b[1], im->b[2], im->b[3]);
}

static void m_version(struct img *im, int64_t arg, char *want, size_t wlen)
{
	put32(im, 4, (uint32_t)arg);
	snprintf(want, wlen, P "sample file version 0x%x, expected 0x13 (OProfile 1.x)%s",
		 (uint32_t)arg, arg == 0x12 ? ": written by OProfile 0.9.x, convert it first" : "");
}

static void m_size(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t v = (uint32_t)arg;

	put32(im, ODB_DESCR_OFFSET, v);
	if (!v || (v & (v - 1)))
		snprintf(want, wlen, P "node capacity %u is not a power of two in 1..2^31", v);
	else
		snprintf(want, wlen,
			 P "file size 10344 holds 512 nodes but the descriptor says %u", v);
}

static void m_current(struct img *im, int64_t arg, char *want, size_t wlen)
{
	put32(im, ODB_DESCR_OFFSET + 4, (uint32_t)arg);
	snprintf(want, wlen, P "current_size %u out of range 1..512", (uint32_t)arg);
}

/* shrink current_size by one: node 300 (the newest, a bucket head) becomes invalid */
static void m_current_drop(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t b, cur = im->cur - (uint32_t)arg;

	put32(im, ODB_DESCR_OFFSET + 4, cur);
	for (b = 0; b < im->size; b++)
		if (head(im, b) >= cur)
			break;
	snprintf(want, wlen, P "bucket %u head index %u out of range (used nodes %u)", b,
		 head(im, b), cur - 1);
}

/* bucket head out of range: arg = index, in the first non-empty bucket */
static void m_head_range(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t b = bucket_with(im, 1);

	put32(im, hash_off(im, b), (uint32_t)arg);
	snprintf(want, wlen, P "bucket %u head index %u out of range (used nodes 300)", b,
		 (uint32_t)arg);
}

/* an empty bucket (the first one) pointing out of range */
static void m_empty_head_range(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t b;

	for (b = 0; head(im, b); b++)
		;
	put32(im, hash_off(im, b), (uint32_t)arg);
	snprintf(want, wlen, P "bucket %u head index %u out of range (used nodes 300)", b,
		 (uint32_t)arg);
}

/* next index out of range, on the tail of a 2-node chain */
static void m_next_range(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t b = bucket_with(im, 2), h = head(im, b), s = get32(im, next_off(h));

	put32(im, next_off(s), (uint32_t)arg);
	snprintf(want, wlen, P "node %u next index %u out of range (used nodes 300)", s,
		 (uint32_t)arg);
}

static void m_self_loop(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t b = bucket_with(im, 1), h = head(im, b);

	(void)arg;
	put32(im, next_off(h), h);
	snprintf(want, wlen, P "chain of bucket %u reaches node %u twice (cycle)", b, h);
}

/* the last node of a chain of >= arg nodes points back to the head */
static void m_cycle(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t b = bucket_with(im, (uint32_t)arg), h = head(im, b), t = h;

	while (get32(im, next_off(t)))
		t = get32(im, next_off(t));
	put32(im, next_off(t), h);
	snprintf(want, wlen, P "chain of bucket %u reaches node %u twice (cycle)", b, h);
}

/* the tail points back to its predecessor: a 2-cycle in the middle */
static void m_cycle_back(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t b = bucket_with(im, 2), h = head(im, b), s = get32(im, next_off(h));

	(void)arg;
	put32(im, next_off(s), h);
	snprintf(want, wlen, P "chain of bucket %u reaches node %u twice (cycle)", b, h);
}

/* a key changed (xor arg): the node now belongs to another bucket */
static void m_key(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t b = bucket_with(im, 1), h = head(im, b);
	uint64_t k = key_of(im, h) ^ (uint64_t)arg;

	memcpy(im->b + node_off(h), &k, 8);
	snprintf(want, wlen,
		 P "node %u key 0x%" PRIx64 " belongs in bucket %u but is chained from bucket %u",
		 h, k, odb_hash(k, im->size), b);
}

/* an empty bucket gets the head of another chain */
static void m_head_foreign(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t e, b = bucket_with(im, 1), h = head(im, b);

	(void)arg;
	for (e = 0; head(im, e); e++)
		;
	put32(im, hash_off(im, e), h);
	snprintf(want, wlen,
		 P "node %u key 0x%" PRIx64 " belongs in bucket %u but is chained from bucket %u",
		 h, key_of(im, h), b, e);
}

/* two chains merged: the tail of one points into another */
static void m_merge(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t b = bucket_with(im, 1), c, h = head(im, b), t = h;

	(void)arg;
	for (c = b + 1; !head(im, c); c++)
		;
	while (get32(im, next_off(t)))
		t = get32(im, next_off(t));
	put32(im, next_off(t), head(im, c));
	snprintf(want, wlen,
		 P "node %u key 0x%" PRIx64 " belongs in bucket %u but is chained from bucket %u",
		 head(im, c), key_of(im, head(im, c)), c, b);
}

/* unlink the head of a chain of >= arg nodes: it becomes unreachable */
static void m_orphan(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t b = bucket_with(im, (uint32_t)arg), h = head(im, b);

	put32(im, hash_off(im, b), get32(im, next_off(h)));
	snprintf(want, wlen,
		 P "node %u is not linked from any bucket (1 of 300 used nodes unreachable)", h);
}

/* empty a whole bucket of >= 2 nodes */
static void m_orphan_chain(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t b = bucket_with(im, 2), n = chain_len(im, b), i, low = UINT32_MAX;

	(void)arg;
	for (i = head(im, b); i; i = get32(im, next_off(i)))
		low = i < low ? i : low;
	put32(im, hash_off(im, b), 0);
	snprintf(want, wlen,
		 P "node %u is not linked from any bucket (%u of 300 used nodes unreachable)",
		 low, n);
}

/* the tail of a chain of >= 2 cut off */
static void m_cut(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t b = bucket_with(im, 2), h = head(im, b), s = get32(im, next_off(h));
	uint32_t n = chain_len(im, b) - 1, i, low = UINT32_MAX;

	(void)arg;
	for (i = s; i; i = get32(im, next_off(i)))
		low = i < low ? i : low;
	put32(im, next_off(h), 0);
	snprintf(want, wlen,
		 P "node %u is not linked from any bucket (%u of 300 used nodes unreachable)",
		 low, n);
}

/* two nodes swap keys within different buckets */
static void m_swap_keys(struct img *im, int64_t arg, char *want, size_t wlen)
{
	uint32_t b = bucket_with(im, 1), c, x = head(im, b), y;
	uint64_t kx = key_of(im, x), ky;

	(void)arg;
	for (c = b + 1; !head(im, c); c++)
		;
	y = head(im, c);
	ky = key_of(im, y);
	memcpy(im->b + node_off(x), &ky, 8);
	memcpy(im->b + node_off(y), &kx, 8);
	snprintf(want, wlen,
		 P "node %u key 0x%" PRIx64 " belongs in bucket %u but is chained from bucket %u",
		 x, ky, c, b);
}

/* harmless changes: must still be accepted (readers ignore these bytes) */
static void m_ok(struct img *im, int64_t arg, char *want, size_t wlen)
{
	switch (arg) {
	case 0: /* descriptor padding */
		put32(im, ODB_DESCR_OFFSET + 8, 0xdeadbeef);
		break;
	case 1: /* unused node slots (stale bytes after growth) */
		memset(im->b + node_off(im->cur), 0xa5, 16 * (im->size - im->cur));
		break;
	case 2: /* node 0 */
		memset(im->b + node_off(0), 0xff, 16);
		break;
	case 3: /* header fields other than magic/version */
		memset(im->b + 8, 0x7f, 72 - 8);
		break;
	}
	want[0] = 0;
	(void)wlen;
}

static const struct corruption {
	const char *name;
	mutator mut;
	int64_t arg;
	int rc; /* from odb_open(RDONLY) + odb_check */
} table[] = {
	/* truncated or extended files */
	{ "empty", m_truncate, 0, -EIO },
	{ "1 byte", m_truncate, 1, -EINVAL },
	{ "4 bytes (magic only)", m_truncate, 4, -EINVAL },
	{ "71 bytes", m_truncate, 71, -EINVAL },
	{ "header only", m_truncate, 72, -EINVAL },
	{ "half descriptor", m_truncate, 88, -EINVAL },
	{ "103 bytes", m_truncate, 103, -EINVAL },
	{ "header+descriptor, no nodes", m_truncate, 104, -EINVAL },
	{ "105 bytes", m_truncate, 105, -EINVAL },
	{ "120 bytes (node 0 only)", m_truncate, 120, -EINVAL },
	{ "initial file size", m_truncate, 2664, -EINVAL },
	{ "page boundary", m_truncate, 4096, -EINVAL },
	{ "previous size", m_truncate, 5224, -EINVAL },
	{ "two pages", m_truncate, 8192, -EINVAL },
	{ "one byte short", m_truncate, -1, -EINVAL },
	{ "one bucket short", m_truncate, -4, -EINVAL },
	{ "one node short", m_truncate, -20, -EINVAL },
	{ "one byte appended", m_truncate, 10345, -EINVAL },
	{ "one node appended", m_truncate, 10364, -EINVAL },
	{ "doubled size, zero-filled", m_truncate, 20584, -EINVAL },
	/* header */
	{ "magic XAE\\n", m_magic, 0x0a454158, -EINVAL },
	{ "magic zero", m_magic, 0, -EINVAL },
	{ "magic DAE\\r", m_magic, 0x0d454144, -EINVAL },
	{ "magic ELF", m_magic, 0x464c457f, -EINVAL },
	{ "version 0.9.x", m_version, 0x12, -EINVAL },
	{ "version newer", m_version, 0x14, -EINVAL },
	{ "version 0", m_version, 0, -EINVAL },
	{ "version byte-swapped", m_version, 0x13000000, -EINVAL },
	/* descriptor */
	{ "size 0", m_size, 0, -EINVAL },
	{ "size 511", m_size, 511, -EINVAL },
	{ "size 768", m_size, 768, -EINVAL },
	{ "size 2^31+1", m_size, 0x80000001, -EINVAL },
	{ "size UINT32_MAX", m_size, 0xffffffff, -EINVAL },
	{ "size 256 (smaller than file)", m_size, 256, -EINVAL },
	{ "size 1024 (larger than file)", m_size, 1024, -EINVAL },
	{ "size 2^31", m_size, 0x80000000, -EINVAL },
	{ "size 1", m_size, 1, -EINVAL },
	{ "current_size 0", m_current, 0, -EINVAL },
	{ "current_size size+1", m_current, 513, -EINVAL },
	{ "current_size UINT32_MAX", m_current, 0xffffffff, -EINVAL },
	{ "current_size one too small", m_current_drop, 1, -EINVAL },
	{ "current_size 1 with chains", m_current_drop, 300, -EINVAL },
	/* bucket heads */
	{ "head = current_size", m_head_range, 301, -EINVAL },
	{ "head in unused slots", m_head_range, 511, -EINVAL },
	{ "head = size", m_head_range, 512, -EINVAL },
	{ "head UINT32_MAX", m_head_range, 0xffffffff, -EINVAL },
	{ "empty bucket head out of range", m_empty_head_range, 4000, -EINVAL },
	{ "empty bucket gets a foreign chain", m_head_foreign, 0, -EINVAL },
	/* next indexes */
	{ "next = current_size", m_next_range, 301, -EINVAL },
	{ "next 4000", m_next_range, 4000, -EINVAL },
	{ "next UINT32_MAX", m_next_range, 0xffffffff, -EINVAL },
	{ "next 2^31", m_next_range, 0x80000000, -EINVAL },
	/* cycles */
	{ "self loop", m_self_loop, 0, -EINVAL },
	{ "tail to head (2 nodes)", m_cycle, 2, -EINVAL },
	{ "tail to head (3 nodes)", m_cycle, 3, -EINVAL },
	{ "second to head", m_cycle_back, 0, -EINVAL },
	/* keys and reachability */
	{ "key bit 0 flipped", m_key, 1, -EINVAL },
	{ "key upper half changed", m_key, 0x100000000ull, -EINVAL },
	{ "keys swapped across buckets", m_swap_keys, 0, -EINVAL },
	{ "chains merged", m_merge, 0, -EINVAL },
	{ "head unlinked", m_orphan, 1, -EINVAL },
	{ "head of a long chain unlinked", m_orphan, 3, -EINVAL },
	{ "chain emptied", m_orphan_chain, 0, -EINVAL },
	{ "chain cut", m_cut, 0, -EINVAL },
	/* accepted: bytes nobody reads */
	{ "descriptor padding", m_ok, 0, 0 },
	{ "junk in unused node slots", m_ok, 1, 0 },
	{ "junk in node 0", m_ok, 2, 0 },
	{ "other header fields", m_ok, 3, 0 },
};

static void run_one(const struct corruption *c, unsigned idx)
{
	struct img im = base;
	char want[512], err[512], err_rw[512];
	unsigned char *after;
	odb_t db;
	int rc;

	im.b = calloc(1, base.len * 2 + 64);
	assert_non_null(im.b);
	memcpy(im.b, base.b, base.len);
	c->mut(&im, c->arg, want, sizeof(want));
	write_file(FILE_NAME, im.b, im.len);

	err[0] = 0;
	rc = odb_open(&db, dirfd, FILE_NAME, ODB_RDONLY, err, sizeof(err));
	if (!rc) {
		rc = odb_check(&db, err, sizeof(err));
		odb_close(&db);
	}
	if (rc != c->rc || (rc && strcmp(err, want)))
		fail_msg("#%u %s: rc %d (%s)\n  want %d \"%s\"\n  got       \"%s\"", idx, c->name, rc,
			 strerror(-rc), c->rc, want, err);
	if (getenv("VERBOSE"))
		print_message("%-36s %s\n", c->name, rc ? err : "(accepted)");

	/* the writer refuses the same file with the same message, and leaves it alone */
	err_rw[0] = 0;
	rc = odb_open(&db, dirfd, FILE_NAME, ODB_RDWR, err_rw, sizeof(err_rw));
	if (c->rc == -EIO) { /* an empty file is (re)initialised by a writer */
		assert_int_equal(rc, 0);
		odb_close(&db);
	} else if (c->rc) {
		if (rc != -EINVAL || strcmp(err_rw, want))
			fail_msg("#%u %s (RDWR): rc %d, want -EINVAL \"%s\"\n  got \"%s\"", idx,
				 c->name, rc, want, err_rw);
		after = malloc(im.len + 1);
		assert_non_null(after);
		{
			int fd = openat(dirfd, FILE_NAME, O_RDONLY);

			assert_true(fd >= 0);
			assert_int_equal(read(fd, after, im.len + 1), (ssize_t)im.len);
			close(fd);
		}
		assert_memory_equal(after, im.b, im.len);
		free(after);
	} else {
		assert_int_equal(rc, 0);
		assert_int_equal(odb_update(&db, 0x1000, 1), 0);
		odb_close(&db);
	}
	free(im.b);
}

static void test_table(void **state)
{
	unsigned i, bad = 0;

	(void)state;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		run_one(&table[i], i);
		bad += table[i].rc != 0;
	}
	print_message("%u corruptions refused with their message, %u harmless changes accepted\n",
		      bad, i - bad);
	assert_true(bad >= 40);
}

/* the valid base really is valid, and the iteration matches what was written */
static void test_base_valid(void **state)
{
	const struct odb_node *nodes;
	char err[256];
	size_t n, i;
	odb_t db;

	(void)state;
	write_file(FILE_NAME, base.b, base.len);
	assert_int_equal(odb_open(&db, dirfd, FILE_NAME, ODB_RDONLY, err, sizeof(err)), 0);
	assert_int_equal(odb_check(&db, err, sizeof(err)), 0);
	nodes = odb_nodes(&db, &n);
	assert_int_equal(n, BASE_KEYS);
	for (i = 0; i < n; i++) {
		assert_int_equal(nodes[i].key, 0x1000 + i * 0x35);
		assert_int_equal(nodes[i].value, i + 1);
	}
	odb_close(&db);
}

/* every truncation of the base, and a zero-extension of each length: all refused */
static void test_every_truncation(void **state)
{
	char err[512];
	size_t len;
	odb_t db;
	int rc;

	(void)state;
	for (len = 0; len < base.len; len++) {
		write_file(FILE_NAME, base.b, len);
		rc = odb_open(&db, dirfd, FILE_NAME, ODB_RDONLY, err, sizeof(err));
		if (!rc) {
			rc = odb_check(&db, err, sizeof(err));
			odb_close(&db);
		}
		if (rc != (len ? -EINVAL : -EIO) || strncmp(err, P, strlen(P)))
			fail_msg("truncated to %zu: rc %d \"%s\"", len, rc, err);
	}
}

/*
 * Random single and multiple byte changes: whatever the verdict, no crash;
 * an accepted file iterates fine and a writer can update it and keep it valid.
 */
static void test_random_flips(void **state)
{
	unsigned char *b = malloc(base.len);
	uint64_t x = 0x2545f4914f6cdd1dull;
	unsigned round, accepted = 0, refused = 0;
	char err[512];
	odb_t db;
	int rc;

	(void)state;
	assert_non_null(b);
	for (round = 0; round < 3000; round++) {
		unsigned flips = 1 + round % 4, k;

		memcpy(b, base.b, base.len);
		for (k = 0; k < flips; k++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* aim at the interesting part half the time: header, descr, buckets */
			size_t off = (x >> 8) % (round & 1 ? base.len : 104 + 512 * 4);

			if (!(round & 1) && off >= 104)
				off = hash_off(&base, 0) + (off - 104);
			b[off] ^= (unsigned char)(1u << (x & 7));
		}
		write_file(FILE_NAME, b, base.len);
		rc = odb_open(&db, dirfd, FILE_NAME, ODB_RDONLY, err, sizeof(err));
		if (!rc) {
			rc = odb_check(&db, err, sizeof(err));
			if (!rc) {
				size_t n, i;
				const struct odb_node *nodes = odb_nodes(&db, &n);
				uint64_t sum = 0;

				for (i = 0; i < n; i++)
					sum += nodes[i].value;
				(void)sum;
			}
			odb_close(&db);
		}
		if (rc) {
			assert_int_equal(rc, -EINVAL);
			assert_int_equal(strncmp(err, P, strlen(P)), 0);
			refused++;
			continue;
		}
		accepted++;
		assert_int_equal(odb_open(&db, dirfd, FILE_NAME, ODB_RDWR, err, sizeof(err)), 0);
		for (k = 0; k < 300; k++)
			assert_int_equal(odb_update(&db, x + k * 977, 1), 0);
		odb_close(&db);
		assert_int_equal(odb_open(&db, dirfd, FILE_NAME, ODB_RDONLY, err, sizeof(err)), 0);
		rc = odb_check(&db, err, sizeof(err));
		if (rc)
			fail_msg("round %u: valid file broken by updates: %s", round, err);
		odb_close(&db);
	}
	print_message("random flips: %u accepted, %u refused\n", accepted, refused);
	assert_true(refused > 0 && accepted > 0);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_base_valid),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_every_truncation),
		cmocka_unit_test(test_random_flips),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
