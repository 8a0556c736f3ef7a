/*
 * fuzz_jitdump.c - fuzz target for lib/op_jit's jitdump reader. Each input
 * is read twice, whole and in pieces of input-derived lengths (a live file
 * read as it grows): both readings must deliver the same records (a hash of
 * every field), the same counts and the same offset; every name must be
 * NUL-terminated, non-empty, at most OP_JIT_NAME_MAX and free of control
 * bytes. In the corpus, valid-* files must give records and no error, bad-*
 * files at least one counted error.
 * libFuzzer build (clang; tests/fuzz/run-fuzz.sh jitdump):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DOP_LIBFUZZER -D_GNU_SOURCE \
 *     -Ilib lib/op_jit.c tests/fuzz/fuzz_jitdump.c -o fuzz_jitdump
 * Otherwise a TAP regression runner over tests/fuzz/corpus/jitdump.
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus_runner.h"
#include "op_jit.h"

struct digest {
	uint64_t h, n;
	const char *bad;
};

static void mix(struct digest *d, const void *p, size_t n)
{
	const uint8_t *b = p;

	/* FNV-1a: equal streams of fields give equal hashes */
	for (size_t i = 0; i < n; i++)
		d->h = (d->h ^ b[i]) * 0x100000001b3ull;
}

static void mix64(struct digest *d, uint64_t v)
{
	mix(d, &v, sizeof(v));
}

static void check_name(struct digest *d, const char *s)
{
	size_t len = strlen(s);

	if (!len)
		d->bad = "empty name delivered";
	if (len > OP_JIT_NAME_MAX)
		d->bad = "name longer than OP_JIT_NAME_MAX";
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			d->bad = "control byte in a delivered name";
	mix(d, s, len + 1);
}

static int on_rec(void *priv, const struct op_jit_rec *r)
{
	struct digest *d = priv;

	d->n++;
	mix64(d, r->kind);
	mix64(d, r->timestamp);
	mix64(d, r->offset);
	switch (r->kind) {
	case OP_JIT_LOAD:
		mix64(d, r->load.pid);
		mix64(d, r->load.tid);
		mix64(d, r->load.vma);
		mix64(d, r->load.code_addr);
		mix64(d, r->load.code_size);
		mix64(d, r->load.code_index);
		check_name(d, r->load.name);
		/* every code byte is read: ASan checks the bounds */
		mix(d, r->load.code, (size_t)r->load.code_size);
		break;
	case OP_JIT_MOVE:
		mix64(d, r->move.old_code_addr);
		mix64(d, r->move.new_code_addr);
		mix64(d, r->move.code_size);
		mix64(d, r->move.code_index);
		break;
	case OP_JIT_DEBUG_INFO:
		mix64(d, r->debug.code_addr);
		mix64(d, r->debug.nr_entry);
		for (size_t i = 0; i < r->debug.nr_entry; i++) {
			mix64(d, r->debug.entries[i].addr);
			mix64(d, r->debug.entries[i].lineno);
			check_name(d, r->debug.entries[i].filename);
		}
		break;
	case OP_JIT_UNLOAD:
		mix64(d, r->unload.vma);
		break;
	default:
		break;
	}
	return 0;
}

struct result {
	struct digest d;
	struct op_jit_errors e;
	uint64_t offset;
	bool broken, header;
};

/* read @data in pieces: all at once when @seed is 0, else of lengths 1..64 from @seed */
static void read_all(const uint8_t *data, size_t size, uint32_t seed, struct result *res)
{
	struct op_jitdump_reader *r;
	size_t o = 0;

	memset(res, 0, sizeof(*res));
	res->d.h = 0xcbf29ce484222325ull;
	r = op_jitdump_reader_init(on_rec, &res->d, 1u << 16);
	if (!r) {
		res->d.bad = "out of memory";
		return;
	}
	while (o < size) {
		size_t n = size - o;
		int rc;

		if (seed) {
			seed = seed * 1103515245u + 12345u;
			n = 1 + (seed >> 16) % 64;
			if (n > size - o)
				n = size - o;
		}
		rc = op_jitdump_reader_feed(r, data + o, n);
		o += n;
		if (rc == -22) /* -EINVAL: broken, every later feed says so */
			break;
		if (rc)
			res->d.bad = "feed returned neither 0 nor -EINVAL";
	}
	res->offset = op_jitdump_reader_offset(r);
	res->broken = op_jitdump_reader_broken(r);
	res->header = op_jitdump_reader_header(r) != NULL;
	if (res->offset > size)
		res->d.bad = "offset beyond the input";
	op_jitdump_reader_fini(r, &res->e);
}

static const char *run(const uint8_t *data, size_t size, struct result *whole)
{
	struct result split;

	read_all(data, size, 0, whole);
	if (whole->d.bad)
		return whole->d.bad;
	read_all(data, size, (uint32_t)size * 2654435761u | 1, &split);
	if (split.d.bad)
		return split.d.bad;
	if (whole->d.h != split.d.h || whole->d.n != split.d.n)
		return "records differ between a whole and a piecewise reading";
	if (memcmp(&whole->e, &split.e, sizeof(whole->e)))
		return "error counts differ between a whole and a piecewise reading";
	if (whole->offset != split.offset || whole->broken != split.broken)
		return "offset or state differ between a whole and a piecewise reading";
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct result res;
	const char *bad = run(data, size, &res);

	if (bad) {
		fprintf(stderr, "fuzz_jitdump: %s\n", bad);
		abort();
	}
	return 0;
}

#ifndef OP_LIBFUZZER
static const char *run_one(const char *name, const uint8_t *data, size_t size, char *note,
			   size_t note_len)
{
	struct result res;
	const char *bad = run(data, size, &res);
	uint64_t nerr = op_jit_errors_total(&res.e);
	char errs[512];

	if (bad)
		return bad;
	op_jit_errors_format(&res.e, errs, sizeof(errs));
	snprintf(note, note_len, "%llu records%s%s", (unsigned long long)res.d.n, nerr ? ", " : "",
		 errs);
	if (!strncmp(name, "valid-", 6) && (nerr || !res.d.n || res.broken))
		return "a valid-* input gave errors or no record";
	if (!strncmp(name, "bad-", 4) && !nerr)
		return "a bad-* input gave no counted error";
	return NULL;
}

int main(int argc, char **argv)
{
	return corpus_main(argc, argv, "jitdump", run_one);
}
#endif /* !OP_LIBFUZZER */
