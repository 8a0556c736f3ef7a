/*
 * fuzz_jitmap.c - fuzz target for lib/op_jit's perf-map (/tmp/perf-PID.map)
 * reader. Each input is read whole and in pieces of input-derived lengths:
 * both must deliver the same entries and counts; every delivered entry must
 * have start + size within 2^64 and a clean name; and every line must be
 * accounted for: delivered, blank, or refused with exactly one counter.
 * In the corpus, valid-* files must give entries and no error, bad-* files
 * at least one counted error.
 * libFuzzer build (clang; tests/fuzz/run-fuzz.sh jitmap):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DOP_LIBFUZZER -D_GNU_SOURCE \
 *     -Ilib lib/op_jit.c tests/fuzz/fuzz_jitmap.c -o fuzz_jitmap
 * Otherwise a TAP regression runner over tests/fuzz/corpus/jitmap.
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

struct result {
	uint64_t h, n;
	const char *bad;
	struct op_jit_errors e;
};

static void mix(struct result *d, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		d->h = (d->h ^ b[i]) * 0x100000001b3ull;
}

static int on_entry(void *priv, const struct op_perfmap_entry *e)
{
	struct result *d = priv;
	size_t len = strlen(e->name);

	d->n++;
	if (e->size > UINT64_MAX - e->start)
		d->bad = "entry with start + size beyond 2^64";
	if (!len || len > OP_JIT_NAME_MAX)
		d->bad = "empty or overlong name delivered";
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)e->name[i] < 0x20 || e->name[i] == 0x7f)
			d->bad = "control byte in a delivered name";
	mix(d, &e->start, sizeof(e->start));
	mix(d, &e->size, sizeof(e->size));
	mix(d, &e->lineno, sizeof(e->lineno));
	mix(d, e->name, len + 1);
	return 0;
}

static void read_all(const uint8_t *data, size_t size, uint32_t seed, struct result *res)
{
	struct op_perfmap_reader *r;
	size_t o = 0;

	memset(res, 0, sizeof(*res));
	res->h = 0xcbf29ce484222325ull;
	r = op_perfmap_reader_init(on_entry, res);
	if (!r) {
		res->bad = "out of memory";
		return;
	}
	while (o < size) {
		size_t n = size - o;

		if (seed) {
			seed = seed * 1103515245u + 12345u;
			n = 1 + (seed >> 16) % 64;
			if (n > size - o)
				n = size - o;
		}
		if (op_perfmap_reader_feed(r, data + o, n))
			res->bad = "feed failed";
		o += n;
	}
	if (op_perfmap_reader_offset(r) > size)
		res->bad = "offset beyond the input";
	op_perfmap_reader_fini(r, true, &res->e);
}

static bool is_blank(const uint8_t *s, size_t len)
{
	if (len && s[len - 1] == '\r')
		len--;
	for (size_t i = 0; i < len; i++)
		if (s[i] != ' ' && s[i] != '\t')
			return false;
	return true;
}

static const char *run(const uint8_t *data, size_t size, struct result *whole)
{
	struct result split;
	uint64_t lines = 0, blank = 0, refused;
	size_t o = 0;

	read_all(data, size, 0, whole);
	if (whole->bad)
		return whole->bad;
	read_all(data, size, (uint32_t)size * 2654435761u | 1, &split);
	if (split.bad)
		return split.bad;
	if (whole->h != split.h || whole->n != split.n ||
	    memcmp(&whole->e, &split.e, sizeof(split.e)))
		return "entries or counts differ between a whole and a piecewise reading";
	/* every line is delivered, blank, or refused by exactly one counter */
	while (o < size) {
		const uint8_t *nl = memchr(data + o, '\n', size - o);
		size_t len = nl ? (size_t)(nl - data - o) : size - o;

		lines++;
		if (len <= OP_PERFMAP_LINE_MAX && is_blank(data + o, len))
			blank++;
		o += len + (nl ? 1 : 0);
	}
	refused = whole->e.map_syntax + whole->e.map_overflow + whole->e.map_long_line +
		  whole->e.map_nul + whole->e.name_empty;
	if (whole->n + blank + refused != lines)
		return "a line neither delivered, blank nor counted";
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct result res;
	const char *bad = run(data, size, &res);

	if (bad) {
		fprintf(stderr, "fuzz_jitmap: %s\n", bad);
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
	snprintf(note, note_len, "%llu entries%s%s", (unsigned long long)res.n, nerr ? ", " : "",
		 errs);
	if (!strncmp(name, "valid-", 6) && (nerr || !res.n))
		return "a valid-* input gave errors or no entry";
	if (!strncmp(name, "bad-", 4) && !nerr)
		return "a bad-* input gave no counted error";
	return NULL;
}

int main(int argc, char **argv)
{
	return corpus_main(argc, argv, "jitmap", run_one);
}
#endif /* !OP_LIBFUZZER */
