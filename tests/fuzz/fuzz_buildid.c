/*
 * fuzz_buildid.c - fuzz target for lib/op_buildid. The first input byte
 * picks the mode: 'E' ELF file bytes -> op_elf_ids_from_fd (through a
 * memfd: the reader's bounded preads), 'N' a raw notes blob ->
 * op_buildid_from_notes, 'I' index text -> op_buildid_index_parse, every
 * entry formatted and parsed back equal.
 * libFuzzer build (clang):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DOP_LIBFUZZER -D_GNU_SOURCE \
 *     -Ilib lib/op_buildid.c tests/fuzz/fuzz_buildid.c -o fuzz_buildid
 * Otherwise a TAP regression runner over tests/fuzz/corpus/buildid (make check).
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "corpus_runner.h"
#include "op_buildid.h"

static const char *bad; /* what went wrong in the last input */

static void fuzz_elf(const uint8_t *d, size_t n)
{
	struct op_elf_ids ids;
	int fd = memfd_create("fuzz_buildid", MFD_CLOEXEC), rc;

	if (fd < 0)
		return;
	if (write(fd, d, n) == (ssize_t)n) {
		rc = op_elf_ids_from_fd(fd, &ids);
		if (rc && rc != -EINVAL && rc != -ENOMEM)
			bad = "unexpected error from op_elf_ids_from_fd";
		else if (ids.id_len > OP_BUILDID_MAX || (rc && ids.id_len))
			bad = "build ID length out of range";
	}
	close(fd);
}

static void fuzz_notes(const uint8_t *d, size_t n)
{
	uint8_t id[OP_BUILDID_MAX];
	size_t len = 0;
	int rc = op_buildid_from_notes(d, n, id, &len);

	if (rc == 0 && (len == 0 || len > OP_BUILDID_MAX))
		bad = "notes: build ID length out of range";
	if (rc && rc != -ENOENT && rc != -EINVAL)
		bad = "notes: unexpected error";
}

static bool same_ent(const struct op_buildid_ent *a, const struct op_buildid_ent *b)
{
	return !strcmp(a->path, b->path) && a->kind == b->kind && a->size == b->size &&
	       a->mtime == b->mtime && a->ids.id_len == b->ids.id_len &&
	       !memcmp(a->ids.id, b->ids.id, a->ids.id_len) && a->ids.text_off == b->ids.text_off &&
	       a->ids.text_vaddr == b->ids.text_vaddr && a->ids.text_size == b->ids.text_size;
}

static void fuzz_index(const uint8_t *d, size_t n)
{
	struct op_buildid_index idx, again;
	char *text = NULL;
	size_t len = 0, i;

	if (op_buildid_index_parse((const char *)d, n, &idx))
		return;
	for (i = 0; i < idx.n; i++) {
		size_t need = op_buildid_format(NULL, 0, &idx.v[i]);
		char *nt = realloc(text, len + need + 1);

		if (!nt)
			goto out;
		text = nt;
		if (op_buildid_format(text + len, need + 1, &idx.v[i]) != need) {
			bad = "format: length differs between measuring and writing";
			goto out;
		}
		len += need;
	}
	if (op_buildid_index_parse(text ? text : "", len, &again))
		goto out;
	if (again.n != idx.n || again.nbad)
		bad = "formatted index does not parse back whole";
	for (i = 0; !bad && i < idx.n; i++)
		if (!same_ent(&idx.v[i], &again.v[i]))
			bad = "formatted entry parses back different";
	op_buildid_index_free(&again);
out:
	free(text);
	op_buildid_index_free(&idx);
}

/* run one input; returns what went wrong or NULL */
static const char *run(const uint8_t *data, size_t size)
{
	bad = NULL;
	if (size == 0)
		return NULL;
	switch (data[0]) {
	case 'E':
		fuzz_elf(data + 1, size - 1);
		break;
	case 'N':
		fuzz_notes(data + 1, size - 1);
		break;
	case 'I':
		fuzz_index(data + 1, size - 1);
		break;
	default:
		break;
	}
	return bad;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (run(data, size)) {
		fprintf(stderr, "fuzz_buildid: %s\n", bad);
		abort();
	}
	return 0;
}

#ifndef OP_LIBFUZZER
static const char *run_one(const char *name, const uint8_t *data, size_t size, char *note,
			   size_t note_len)
{
	(void)name;
	(void)note;
	(void)note_len;
	return run(data, size);
}

int main(int argc, char **argv)
{
	return corpus_main(argc, argv, "buildid", run_one);
}
#endif /* !OP_LIBFUZZER */
