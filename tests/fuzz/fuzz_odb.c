/*
 * fuzz_odb.c - fuzz target for the lib/odb reader (open + check + iterate)
 * and, when a file is accepted, the writer (reopen, update, recheck), then
 * the writer under hostile writes to its file (a second shared mapping).
 * Built with -DOP_LIBFUZZER by tests/fuzz/run-fuzz.sh (clang libFuzzer);
 * otherwise a TAP regression runner over tests/fuzz/corpus/odb
 * (make check; the corpus walk is in corpus_runner.c).
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include "corpus_runner.h"
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odb.h"
#include "op_header.h"

#define IN_NAME "in.odb"

static char tmpdir[256];
static int tmpfd = -1;

static void cleanup(void)
{
	if (tmpfd >= 0) {
		unlinkat(tmpfd, IN_NAME, 0);
		close(tmpfd);
		rmdir(tmpdir);
		tmpfd = -1;
	}
}

static int init_tmp(void)
{
	const char *t = getenv("TMPDIR");

	if (tmpfd >= 0)
		return 0;
	snprintf(tmpdir, sizeof(tmpdir), "%s/fuzz_odb.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir))
		return -errno;
	tmpfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tmpfd < 0)
		return -errno;
	atexit(cleanup);
	return 0;
}

static int put_file(const uint8_t *data, size_t size)
{
	int fd = openat(tmpfd, IN_NAME, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t done = 0;

	if (fd < 0)
		return -errno;
	while (done < size) {
		ssize_t w = write(fd, data + done, size - done);

		if (w <= 0) {
			close(fd);
			return -EIO;
		}
		done += (size_t)w;
	}
	return close(fd) ? -errno : 0;
}

/*
 * Another process changes words of the file under an open writer (a second
 * shared mapping): input bytes from the end, 6 at a time, give a word index
 * (after the header, modulo the file) and its new value. The writer must not
 * crash, hang or touch memory outside its mapping; an update counts or fails
 * with -EIO, and after the first -EIO every update does.
 */
static const char *run_hostile(const uint8_t *data, size_t size, char *err, size_t err_len)
{
	odb_key_t keys[64];
	const struct odb_node *nodes;
	size_t n, nk, words, i, len;
	const char *bad = NULL;
	bool failed = false;
	unsigned char *m;
	odb_t db;
	int fd;

	if (odb_open(&db, tmpfd, IN_NAME, ODB_RDWR, err, err_len))
		return "writer refused a file it wrote";
	nodes = odb_nodes(&db, &n);
	for (nk = 0; nk < n && nk < 64; nk++)
		keys[nk] = nodes[nk].key;
	fd = openat(tmpfd, IN_NAME, O_RDWR | O_CLOEXEC);
	len = db.map_len; /* the writer's may grow meanwhile */
	m = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (fd >= 0)
		close(fd);
	if (m == MAP_FAILED) {
		odb_close(&db);
		return "cannot map the file a second time";
	}
	words = (len - sizeof(struct opd_header)) / 4;
	for (i = 0; i + 6 <= size && i < 6 * 16; i += 6) {
		const uint8_t *p = data + size - i - 6;
		uint32_t v;

		memcpy(&v, p + 2, 4);
		memcpy(m + sizeof(struct opd_header) + 4 * ((p[0] | p[1] << 8) % words), &v, 4);
	}
	for (i = 0; i < 200 && !bad; i++) {
		odb_key_t key = nk && i % 3 ? keys[i % nk] : (i < size ? data[i] : i) * 0x1000193ull;
		int rc = i & 1 ? odb_update_hot(&db, key, 1) : odb_update(&db, key, 1);

		if (rc && rc != -EIO)
			bad = "update under hostile writes failed with an unexpected error";
		else if (!rc && failed)
			bad = "update succeeded after -EIO";
		failed |= rc == -EIO;
	}
	munmap(m, len);
	odb_close(&db);
	return bad;
}

/*
 * Run one input. Returns NULL when every invariant held, else what broke.
 * *accepted tells the reader's verdict.
 */
static const char *run_input(const uint8_t *data, size_t size, bool *accepted, char *err,
			     size_t err_len)
{
	const struct odb_node *nodes;
	uint64_t sum = 0, sum_after = 0;
	size_t n, n_after, i;
	odb_t db;
	int rc;

	*accepted = false;
	err[0] = 0;
	if (put_file(data, size))
		return "cannot write the input file";
	rc = odb_open(&db, tmpfd, IN_NAME, ODB_RDONLY, err, err_len);
	if (!rc) {
		rc = odb_check(&db, err, err_len);
		if (!rc) {
			nodes = odb_nodes(&db, &n);
			for (i = 0; i < n; i++)
				sum += nodes[i].value;
		}
		odb_close(&db);
	}
	if (rc) {
		if (rc != -EINVAL && rc != -EIO)
			return "refused with an unexpected error code";
		if (rc == -EIO && size)
			return "-EIO for a non-empty file";
		if (strncmp(err, IN_NAME ": ", strlen(IN_NAME) + 2) || strlen(err) < 20)
			return "refusal message does not name the file and the defect";
		return NULL;
	}
	*accepted = true;

	/* an accepted file must take updates and stay valid (growth included) */
	rc = odb_open(&db, tmpfd, IN_NAME, ODB_RDWR, err, err_len);
	if (rc)
		return "writer refused a file the reader accepted";
	for (i = 0; i < 160; i++) {
		odb_key_t key = i < size ? data[i] * 0x1000193ull + i : i;

		if (odb_update(&db, key, 1))
			return "update failed";
	}
	odb_close(&db);
	rc = odb_open(&db, tmpfd, IN_NAME, ODB_RDONLY, err, err_len);
	if (!rc)
		rc = odb_check(&db, err, err_len);
	if (rc)
		return "file invalid after updates";
	nodes = odb_nodes(&db, &n_after);
	for (i = 0; i < n_after; i++)
		sum_after += nodes[i].value;
	odb_close(&db);
	if (n_after < n)
		return "updates lost nodes";
	/* each update adds 1 unless the count is saturated */
	if (sum_after > sum + 160)
		return "counts grew by more than the updates";
	return run_hostile(data, size, err, err_len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512];
	const char *bad;
	bool accepted;

	if (init_tmp())
		abort();
	bad = run_input(data, size, &accepted, err, sizeof(err));
	if (bad) {
		fprintf(stderr, "fuzz_odb: %s (last message: %s)\n", bad, err);
		abort();
	}
	return 0;
}

#ifndef OP_LIBFUZZER
/* ---- seed generator and regression runner (gcc, make check) ---- */

/* build a valid file in memory with @size nodes holding @nkeys keys */
static size_t build(uint8_t *buf, uint32_t size, const odb_key_t *keys, uint32_t nkeys)
{
	struct odb_descr *d = (struct odb_descr *)(buf + ODB_DESCR_OFFSET);
	struct odb_node *nodes = (struct odb_node *)(buf + ODB_NODE_OFFSET);
	odb_index_t *hash = (odb_index_t *)(buf + ODB_NODE_OFFSET + 16 * (size_t)size);
	uint32_t i;

	memset(buf, 0, ODB_FILE_SIZE(size));
	op_header_init((struct opd_header *)buf);
	((struct opd_header *)buf)->cpu_type = OP_CPU_TIMER;
	d->size = size;
	d->current_size = nkeys + 1;
	for (i = 1; i <= nkeys; i++) {
		uint32_t b = odb_hash(keys[i - 1], size);

		nodes[i].key = keys[i - 1];
		nodes[i].value = i * 3;
		nodes[i].next = hash[b];
		hash[b] = i;
	}
	return ODB_FILE_SIZE(size);
}

static int save(const char *dir, const char *name, const uint8_t *b, size_t len)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || (len && fwrite(b, 1, len, f) != len) || fclose(f)) {
		fprintf(stderr, "fuzz_odb: cannot write %s\n", path);
		return 1;
	}
	return 0;
}

static int make_corpus(const char *dir)
{
	static uint8_t buf[32768] __attribute__((aligned(64)));
	/* size 4: keys 0 and 4 share bucket 0 (chain 2 -> 1), 0x100000004 is in bucket 1 */
	static const odb_key_t k4[] = { 0, 4, 0x100000004ull };
	static const odb_key_t k1[] = { 0x1167 };
	odb_key_t k[300];
	uint32_t *u32 = (uint32_t *)(buf + ODB_NODE_OFFSET);
	size_t len, i;
	int rc = 0;

	for (i = 0; i < 300; i++)
		k[i] = 0x1000 + i * 0x35;
	rc |= save(dir, "bad-empty", buf, 0);
	len = build(buf, 1, NULL, 0);
	rc |= save(dir, "valid-size1-empty", buf, len);
	len = build(buf, 2, k1, 1);
	rc |= save(dir, "valid-size2", buf, len);
	len = build(buf, 4, k4, 3);
	rc |= save(dir, "valid-size4-chain", buf, len);
	len = build(buf, 16, k, 13);
	rc |= save(dir, "valid-size16", buf, len);
	len = build(buf, 128, k, 13);
	rc |= save(dir, "valid-operf-like", buf, len);
	len = build(buf, 128, k, 127);
	rc |= save(dir, "valid-full", buf, len);
	len = build(buf, 256, k, 200);
	rc |= save(dir, "valid-grown", buf, len);
	len = build(buf, 128, NULL, 0);
	memset(buf, 0, sizeof(struct opd_header)); /* fresh, header never filled */
	rc |= save(dir, "bad-zero-header", buf, len);

	len = build(buf, 4, k4, 3);
	rc |= save(dir, "bad-truncated", buf, len - 1);
	buf[0] = 'X';
	rc |= save(dir, "bad-magic", buf, len);
	len = build(buf, 4, k4, 3);
	((struct opd_header *)buf)->version = 0x12;
	rc |= save(dir, "bad-version", buf, len);
	len = build(buf, 4, k4, 3);
	((struct odb_descr *)(buf + ODB_DESCR_OFFSET))->size = 3;
	rc |= save(dir, "bad-size-not-pow2", buf, len);
	len = build(buf, 4, k4, 3);
	((struct odb_descr *)(buf + ODB_DESCR_OFFSET))->current_size = 0;
	rc |= save(dir, "bad-current-zero", buf, len);
	len = build(buf, 4, k4, 3);
	u32[3 * 4 + 3] = 3; /* node 3 (alone in bucket 1) points to itself */
	rc |= save(dir, "bad-cycle", buf, len);
	len = build(buf, 4, k4, 3);
	u32[1 * 4 + 3] = 9; /* node 1 next out of range */
	rc |= save(dir, "bad-next-range", buf, len);
	len = build(buf, 4, k4, 3);
	u32[2 * 4] ^= 1; /* node 2 key changed: wrong bucket */
	rc |= save(dir, "bad-wrong-bucket", buf, len);
	return rc;
}

/* one corpus file: valid-* must be accepted, bad-* refused, none may break */
static const char *run_one(const char *name, const uint8_t *data, size_t size, char *note,
			   size_t note_len)
{
	static char fail[1024];
	char err[512];
	const char *bad;
	bool accepted;

	bad = run_input(data, size, &accepted, err, sizeof(err));
	if (!bad && !strncmp(name, "valid-", 6) && !accepted)
		bad = "a valid- seed was refused";
	if (!bad && !strncmp(name, "bad-", 4) && accepted)
		bad = "a bad- seed was accepted";
	if (bad) {
		snprintf(fail, sizeof(fail), "%s (%s)", bad, err);
		return fail;
	}
	snprintf(note, note_len, "%s", accepted ? "accepted" : err);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--make-corpus"))
		return make_corpus(argv[2]);
	if (init_tmp()) {
		printf("Bail out! cannot create a temporary directory\n");
		return 1;
	}
	return corpus_main(argc, argv, "odb", run_one);
}
#endif /* !OP_LIBFUZZER */
