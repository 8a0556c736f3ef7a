/*
 * fuzz_opimport.c - fuzz target for lib/op_abi, opimport's conversion: an
 * input is an abi file's text, a NUL byte, then a sample file in that ABI;
 * an input that starts with its NUL (no abi text) or holds none is a file
 * of the i386-like big-endian layout (after the NUL, or the whole input).
 * Parse, check and decode must refuse or accept without crashing; what is
 * accepted must encode and decode back to the same, and write a native
 * file that lib/odb validates, holding the same keys and counts.
 * Built with -DOP_LIBFUZZER by tests/fuzz/run-fuzz.sh (clang libFuzzer);
 * otherwise a TAP regression runner over tests/fuzz/corpus/opimport
 * (make check; `fuzz_opimport --make-corpus DIR` writes the seeds).
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
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odb.h"
#include "op_abi.h"

#define OUT_NAME "out"

static char tmpdir[256];
static int tmpfd = -1;

static void cleanup(void)
{
	if (tmpfd >= 0) {
		unlinkat(tmpfd, OUT_NAME, 0);
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
	snprintf(tmpdir, sizeof(tmpdir), "%s/fuzz_opimport.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir))
		return -errno;
	tmpfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (tmpfd < 0)
		return -errno;
	atexit(cleanup);
	return 0;
}

/* the default layout: big-endian, u64 and double 4-aligned, 64-byte header */
static void be32_layout(struct op_abi *a)
{
	op_abi_native(a);
	a->val[OP_ABI_LITTLE_ENDIAN] = 0;
	a->val[OP_ABI_OFF_HEADER_CPU_SPEED] = 28;
	a->val[OP_ABI_OFF_HEADER_MTIME] = 36;
	a->val[OP_ABI_OFF_HEADER_CG_TO_IS_KERNEL] = 44;
	a->val[OP_ABI_OFF_HEADER_ANON_START] = 48;
	a->val[OP_ABI_OFF_HEADER_CG_TO_ANON_START] = 56;
	a->val[OP_ABI_SIZEOF_HEADER] = 64;
}

static bool same_header(const struct opd_header *a, const struct opd_header *b)
{
	return !memcmp(a->magic, b->magic, 4) && a->version == b->version &&
	       a->cpu_type == b->cpu_type && a->ctr_event == b->ctr_event &&
	       a->ctr_um == b->ctr_um && a->ctr_count == b->ctr_count &&
	       a->is_kernel == b->is_kernel && a->mtime == b->mtime &&
	       a->cg_to_is_kernel == b->cg_to_is_kernel && a->anon_start == b->anon_start &&
	       a->cg_to_anon_start == b->cg_to_anon_start &&
	       (a->cpu_speed == b->cpu_speed || (isnan(a->cpu_speed) && isnan(b->cpu_speed)));
}

/* an accepted file: round trip, then the native file */
static const char *run_accepted(const struct op_abi *abi, const struct op_abi_sample *s,
				size_t len, char *err, size_t err_len)
{
	const struct odb_node *nodes;
	struct op_abi_sample d;
	uint64_t sum = 0, sum_out = 0, sat = 0;
	uint8_t *buf;
	size_t i, n;
	odb_t db;
	long l;

	if (s->nr >= s->size)
		return "more used nodes than the table holds";
	if (s->size && !(s->size & (s->size - 1))) {
		l = op_abi_encode(abi, s, &buf);
		if (l < 0)
			return "an accepted file does not encode back";
		if ((size_t)l != len)
			return "re-encoded file has another length";
		if (op_abi_decode(abi, buf, (size_t)l, "re", &d, err, err_len)) {
			free(buf);
			return "a re-encoded file is refused";
		}
		free(buf);
		if (d.nr != s->nr || !same_header(&d.header, &s->header))
			goto differ;
		for (i = 0; i < d.nr; i++)
			if (d.nodes[i].key != s->nodes[i].key ||
			    d.nodes[i].value != s->nodes[i].value)
				goto differ;
		op_abi_sample_free(&d);
	}
	unlinkat(tmpfd, OUT_NAME, 0);
	if (op_abi_write_sample(s, tmpfd, OUT_NAME, OP_ABI_NOREPLACE, &sat, err, err_len))
		return "writing the native file failed";
	if (odb_open(&db, tmpfd, OUT_NAME, ODB_RDONLY, err, err_len))
		return "the native file is refused by odb";
	if (odb_check(&db, err, err_len)) {
		odb_close(&db);
		return "the native file fails odb_check";
	}
	if (!same_header(odb_header(&db), &s->header)) {
		odb_close(&db);
		return "the native file's header differs";
	}
	nodes = odb_nodes(&db, &n);
	for (i = 0; i < n; i++)
		sum_out += nodes[i].value;
	odb_close(&db);
	for (i = 0; i < s->nr; i++)
		sum += s->nodes[i].value;
	if (n > s->nr || sum_out > sum || (!sat && sum_out != sum))
		return "the native file's keys or counts differ";
	return NULL;
differ:
	op_abi_sample_free(&d);
	return "a re-encoded file decodes to something else";
}

/* NULL when every invariant held; *accepted: the file was decoded */
static const char *run_input(const uint8_t *data, size_t size, bool *accepted, char *err,
			     size_t err_len)
{
	const uint8_t *nul = memchr(data, 0, size);
	const uint8_t *file = data;
	struct op_abi_sample s;
	struct op_abi abi;
	size_t len = size;
	const char *bad;
	uint8_t *copy;
	int rc;

	*accepted = false;
	err[0] = 0;
	if (nul == data) {
		be32_layout(&abi);
		file = data + 1;
		len = size - 1;
	} else if (nul) {
		rc = op_abi_parse(&abi, (const char *)data, (size_t)(nul - data), "abi", err,
				  err_len);
		if (rc)
			return rc == -EINVAL && !strncmp(err, "abi:", 4) ? NULL :
			       "abi refused without a message naming it";
		rc = op_abi_check(&abi, "abi", err, err_len);
		if (rc)
			return rc == -EINVAL && !strncmp(err, "abi: ", 5) ? NULL :
			       "layout refused without a message naming it";
		file = nul + 1;
		len = size - (size_t)(nul + 1 - data);
	} else {
		be32_layout(&abi);
	}
	/* exactly len bytes, so a sanitizer sees any read past the file */
	copy = malloc(len ? len : 1);
	if (!copy)
		return NULL;
	memcpy(copy, file, len);
	rc = op_abi_decode(&abi, copy, len, "in", &s, err, err_len);
	free(copy);
	if (rc) {
		if (s.nodes || s.nr)
			return "a refused file left nodes";
		if (rc != -EINVAL && rc != -ENOMEM)
			return "refused with an unexpected error code";
		if (rc == -EINVAL && (strncmp(err, "in: ", 4) || strlen(err) < 20))
			return "refusal message does not name the file and the defect";
		return NULL;
	}
	*accepted = true;
	bad = run_accepted(&abi, &s, len, err, err_len);
	op_abi_sample_free(&s);
	return bad;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[1024];
	const char *bad;
	bool accepted;

	if (init_tmp())
		abort();
	bad = run_input(data, size, &accepted, err, sizeof(err));
	if (bad) {
		fprintf(stderr, "fuzz_opimport: %s (last message: %s)\n", bad, err);
		abort();
	}
	return 0;
}

#ifndef OP_LIBFUZZER
/* ---- seed generator and regression runner (gcc, make check) ---- */

static int save(const char *dir, const char *name, const struct op_abi *abi, const uint8_t *b,
		size_t len)
{
	char path[1024], text[4096];
	int tl = abi ? op_abi_format(abi, text, sizeof(text)) : 0;
	FILE *f;

	/* no abi: a lone NUL first, the default layout */
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || tl < 0 || fwrite(text, 1, (size_t)tl, f) != (size_t)tl || fputc(0, f) == EOF ||
	    (len && fwrite(b, 1, len, f) != len) || fclose(f)) {
		fprintf(stderr, "fuzz_opimport: cannot write %s\n", path);
		return 1;
	}
	return 0;
}

static int make_corpus(const char *dir)
{
	struct odb_node nodes[40];
	struct op_abi_sample s = { .nodes = nodes };
	struct op_abi be32, native, wide;
	uint8_t *b;
	long len;
	int rc = 0, i;

	be32_layout(&be32);
	op_abi_native(&native);
	wide = be32;
	wide.val[OP_ABI_SIZEOF_ODB_NODE_NR_T] = 8;
	wide.val[OP_ABI_SIZEOF_ODB_INDEX_T] = 8;
	wide.val[OP_ABI_SIZEOF_ODB_DESCR_T] = 48;
	wide.val[OP_ABI_OFF_DESCR_SIZE] = 8;
	wide.val[OP_ABI_OFF_DESCR_CURRENT_SIZE] = 24;
	wide.val[OP_ABI_SIZEOF_ODB_NODE_T] = 24;
	wide.val[OP_ABI_OFF_NODE_VALUE] = 0;
	wide.val[OP_ABI_OFF_NODE_KEY] = 8;
	wide.val[OP_ABI_OFF_NODE_NEXT] = 16;
	op_header_init(&s.header);
	s.header.cpu_type = OP_CPU_TIMER;
	s.header.ctr_count = 250000;
	s.header.cpu_speed = 2300.0;
	s.header.mtime = 0x65000000;
	for (i = 0; i < 40; i++) {
		nodes[i].key = 0x1000 + 0x35 * (uint64_t)i;
		nodes[i].value = 1 + i * 7;
		nodes[i].next = 0;
	}
	s.size = 2;
	s.nr = 1;
	if ((len = op_abi_encode(&be32, &s, &b)) < 0)
		return 1;
	rc |= save(dir, "valid-be32-default-abi", NULL, b, (size_t)len);
	rc |= save(dir, "valid-be32-one", &be32, b, (size_t)len);
	rc |= save(dir, "bad-be32-truncated", &be32, b, (size_t)len - 1);
	free(b);
	s.size = 64;
	s.nr = 40;
	if ((len = op_abi_encode(&wide, &s, &b)) < 0)
		return 1;
	rc |= save(dir, "valid-wide-40", &wide, b, (size_t)len);
	rc |= save(dir, "bad-wide-as-be32", &be32, b, (size_t)len);
	free(b);
	nodes[3].key = nodes[2].key; /* repeated key: summed */
	s.size = 128;
	if ((len = op_abi_encode(&native, &s, &b)) < 0)
		return 1;
	rc |= save(dir, "valid-native-repeated-key", &native, b, (size_t)len);
	free(b);
	rc |= save(dir, "bad-empty", NULL, NULL, 0);
	native.val[OP_ABI_OFF_NODE_NEXT] = 13;
	rc |= save(dir, "bad-layout-overrun", &native, NULL, 0);
	/* found by the fuzzer: overlapping fields do not round-trip */
	native.val[OP_ABI_OFF_NODE_NEXT] = 6;
	rc |= save(dir, "bad-layout-overlap", &native, NULL, 0);
	{
		static const char text[] = "sizeof_u32 4\nsizeof_u32 4\n";

		FILE *f;
		char path[1024];

		snprintf(path, sizeof(path), "%s/bad-abi-twice", dir);
		f = fopen(path, "wb");
		if (!f || fwrite(text, 1, sizeof(text), f) != sizeof(text) || fclose(f))
			rc = 1;
	}
	return rc;
}

/* one corpus file: valid-* must be decoded, bad-* refused, none may break */
static const char *run_one(const char *name, const uint8_t *data, size_t size, char *note,
			   size_t note_len)
{
	static char fail[1200];
	char err[1024];
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
	return corpus_main(argc, argv, "opimport", run_one);
}
#endif /* !OP_LIBFUZZER */
