/*
 * fuzz_cgstacks.c - fuzz target for the call-graph stack table reader
 * (lib/op_cg_read.c) and what libopprofile makes of it: the input is a
 * stacks file (through a memfd: the reader's preads), visited with checks of
 * every index the visitor is given (version 3's context and version 4's
 * split key never a frame), then loaded into a profile
 * (op_profile_add_stacks, op_profile_finish) and encoded as pprof, which
 * protobuf-c's own unpacker must read back with the same sample count and
 * total.
 * libFuzzer build (clang):
 *   protoc-c --c_out=. -Ilib/profile lib/profile/profile.proto
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DOP_LIBFUZZER -D_GNU_SOURCE -I. \
 *     -Ilib -Ilib/profile lib/op_cg_read.c lib/op_mangle.c lib/odb.c lib/op_ksyms.c \
 *     lib/op_buildid.c lib/op_header.c lib/op_cgroups.c lib/profile/op_profile.c \
 *     lib/profile/op_profile_load.c \
 *     lib/profile/op_pprof.c profile.pb-c.c tests/fuzz/fuzz_cgstacks.c \
 *     -lprotobuf-c -lz -o fuzz_cgstacks
 * Otherwise a TAP regression runner over tests/fuzz/corpus/cgstacks (make check).
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
#include "op_cg_read.h"
#include "op_profile.h"
#include "profile.pb-c.h"

static const char *bad; /* what went wrong in the last input */

struct seen {
	const struct op_cgs_info *info;
	uint32_t nimages;
	uint64_t stacks, samples;
};

static int v_image(void *arg, uint32_t i, const struct op_image_name *n)
{
	struct seen *s = arg;

	if (i >= s->info->nimages)
		bad = "image index beyond the table's images";
	else if (!n->path || strlen(n->path) > (1u << 30))
		bad = "image without a name";
	s->nimages++;
	return 0;
}

static int v_stack(void *arg, const struct op_cgs_stack *st)
{
	struct seen *s = arg;
	volatile uint64_t touch = 0;

	if (st->app > s->info->nimages)
		bad = "stack of an application beyond the images";
	if (st->depth > CGS_MAX_DEPTH)
		bad = "stack deeper than a reader accepts";
	if (!st->count)
		bad = "stack without samples";
	/* version 3's context: what the node held, or -1; never a frame */
	if (st->tgid < -1 || st->tid < -1 || st->cpu < -1 ||
	    (s->info->version < 3 && (st->tgid != -1 || st->tid != -1 || st->cpu != -1)))
		bad = "a context that is not one";
	/* version 4's split key: a whole path in the table, or NULL; never a frame */
	if (st->split && (s->info->version < 4 || st->split[0] != '/' ||
			  strlen(st->split) > (1u << 30)))
		bad = "a split key that is not one";
	for (uint32_t j = 0; j < st->depth; j++) { /* every frame readable (ASan) */
		touch += st->fr[j].key + st->fr[j].image;
		if (st->fr[j].image & CGS_CTX_IMAGE)
			bad = "a context node handed out as a frame";
		if (st->fr[j].image == CGS_SPLIT_IMAGE)
			bad = "a split node handed out as a frame";
	}
	(void)touch;
	s->stacks++;
	s->samples += st->count;
	return 0;
}

static void v_bad(void *arg, const char *why)
{
	(void)arg;
	if (!why || !*why)
		bad = "bad entry without a reason";
}

static void no_warn(void *arg, const char *msg)
{
	(void)arg;
	(void)msg;
}

static void fuzz_table(const uint8_t *d, size_t n)
{
	struct op_cgs_info info;
	struct seen s = { .info = &info };
	const struct op_cgs_visitor v = { v_image, v_stack, v_bad, &s };
	const struct op_pprof_opts raw = { .no_gzip = true };
	Perftools__Profiles__Profile *pp;
	struct op_profile *p;
	uint8_t *buf = NULL;
	size_t len = 0;
	int fd = memfd_create("fuzz_cgstacks", MFD_CLOEXEC), rc;

	if (fd < 0)
		return;
	if (write(fd, d, n) != (ssize_t)n) {
		close(fd);
		return;
	}
	rc = op_cgs_read(fd, &v, &info);
	if (rc && rc != -ENOMEM)
		bad = "unexpected error from op_cgs_read";
	if (!info.valid && (s.stacks || s.nimages))
		bad = "stacks visited in a table that is not one";
	if (bad || rc) {
		close(fd);
		return;
	}
	/* the same bytes into a profile, then pprof, then read back */
	p = op_profile_new();
	if (!p) {
		close(fd);
		return;
	}
	op_profile_set_warn(p, no_warn, NULL);
	rc = op_profile_add_stacks(p, fd, "fuzz", NULL, NULL, NULL); /* closes fd */
	if (!rc)
		rc = op_profile_finish(p);
	if (!rc && p->total != s.samples)
		bad = "the profile's total is not the stacks' samples";
	if (!rc && !bad && !op_pprof_encode(p, &raw, &buf, &len)) {
		pp = perftools__profiles__profile__unpack(NULL, len, buf);
		if (!pp) {
			bad = "protobuf-c cannot read the encoded profile back";
		} else {
			uint64_t total = 0;

			for (size_t i = 0; i < pp->n_sample; i++)
				total += pp->sample[i]->n_value ? (uint64_t)pp->sample[i]->value[0] :
								  0;
			if (pp->n_sample != p->nsamples || total != p->total)
				bad = "the encoded profile holds other samples";
			if (!pp->n_string_table || pp->string_table[0][0])
				bad = "string 0 is not empty";
			perftools__profiles__profile__free_unpacked(pp, NULL);
		}
		free(buf);
	}
	op_profile_free(p);
}

/* run one input; returns what went wrong or NULL */
static const char *run(const uint8_t *data, size_t size)
{
	bad = NULL;
	fuzz_table(data, size);
	return bad;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (run(data, size)) {
		fprintf(stderr, "fuzz_cgstacks: %s\n", bad);
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
	return corpus_main(argc, argv, "cgstacks", run_one);
}
#endif /* !OP_LIBFUZZER */
