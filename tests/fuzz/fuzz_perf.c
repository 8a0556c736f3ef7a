/*
 * fuzz_perf.c - fuzz target for the sample path's input side (core/perf*.c,
 * ring.c, replay.c). The first input byte picks the mode:
 *   'D' raw record bytes: walked, each record copied to an exact-size heap
 *       block and decoded (ASan sees any read past header.size), by
 *       pdec_decode and by its inline fast path, which must agree;
 *   'R' byte 1 = wrap offset, rest = ring bytes written into a fake 2-page
 *       ring that wraps, then merged and delivered (must come out in order);
 *   'F' a --record file, replayed.
 * libFuzzer build (clang), from the top of the tree with a configured BUILD dir:
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DOP_LIBFUZZER -D_GNU_SOURCE \
 *     -I$BUILD -Isdk -Ilib -Icore core/perf.c core/perf_deliver.c core/perf_open.c \
 *     core/perf_replay.c core/perf_decode.c core/perf_queue.c core/ring.c core/replay.c \
 *     core/proc_synth.c tests/fuzz/fuzz_perf.c -o fuzz_perf
 *   ./fuzz_perf -max_len=16384 tests/fuzz/corpus/perf
 * Otherwise a TAP regression runner over tests/fuzz/corpus/perf
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
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf.h"
#include "perf_decode.h"
#include "ring.h"

static const char *bad;
static char tmpdir[256];

struct sink {
	uint64_t n, last;
	bool ordered;
};

static void check_record(const struct op_record *r)
{
	switch (r->type) {
	case OP_REC_MMAP:
		if (!r->mmap.filename || strlen(r->mmap.filename) > 65536)
			bad = "mmap filename";
		break;
	case OP_REC_COMM:
		if (!r->comm.comm || strlen(r->comm.comm) > 65536)
			bad = "comm";
		break;
	case OP_REC_KSYMBOL:
		if (!r->ksym.name || strlen(r->ksym.name) > 65536)
			bad = "ksymbol name";
		break;
	case OP_REC_SAMPLE: {
		volatile uint64_t x = 0;

		/* touch what the consumer will read */
		for (uint64_t i = 0; i < r->sample.nr_callchain; i++)
			x += r->sample.callchain[i];
		for (uint32_t i = 0; i < r->sample.raw_size; i++)
			x += ((const uint8_t *)r->sample.raw)[i];
		(void)x;
		if (r->sample.nr_callchain > 65536 / 8 || r->sample.raw_size > 65536)
			bad = "sample sizes beyond a record";
		break;
	}
	default:
		break;
	}
}

static int deliver(void *arg, const struct op_record *r)
{
	struct sink *s = arg;

	check_record(r);
	if (s->n && r->time < s->last)
		s->ordered = false;
	s->last = r->time;
	s->n++;
	return 0;
}

static void setup_events(struct pdec *d)
{
	struct pdec_event ev[3] = {
		{ .sample_type = PDEC_BASE_SAMPLE_TYPE, .read_format = PERF_FORMAT_ID },
		{ .sample_type = PDEC_BASE_SAMPLE_TYPE | PERF_SAMPLE_RAW | PERF_SAMPLE_ADDR,
		  .read_format = PERF_FORMAT_ID, .source = 1 },
		{ .sample_type = PDEC_BASE_SAMPLE_TYPE | PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN,
		  .read_format = PERF_FORMAT_ID | PERF_FORMAT_GROUP | PERF_FORMAT_LOST,
		  .counter = 1 },
	};

	for (unsigned i = 0; i < 3; i++) {
		pdec_add_event(d, &ev[i]);
		pdec_add_id(d, i + 1, i);
	}
}

/* the inline fast path must agree with the general decoder on every record */
static void check_fast(const struct pdec *d, const void *rec)
{
	struct op_record a, b;
	enum pdec_status sa = pdec_decode(d, rec, &a), sb = pdec_decode_fast(d, rec, &b);

	if (sa != sb) {
		bad = "pdec_decode_fast status differs from pdec_decode";
		return;
	}
	if (sa != PDEC_OK || a.type != OP_REC_SAMPLE)
		return;
	if (a.type != b.type || a.time != b.time || a.cpu != b.cpu || a.counter != b.counter ||
	    a.sample.size != b.sample.size || a.sample.misc != b.sample.misc ||
	    a.sample.cpumode != b.sample.cpumode || a.sample.id != b.sample.id ||
	    a.sample.ip != b.sample.ip || a.sample.pid != b.sample.pid ||
	    a.sample.tid != b.sample.tid || a.sample.time != b.sample.time ||
	    a.sample.cpu != b.sample.cpu || a.sample.source != b.sample.source ||
	    a.sample.period != b.sample.period || a.sample.addr != b.sample.addr ||
	    a.sample.nr_callchain != b.sample.nr_callchain ||
	    a.sample.callchain != b.sample.callchain || a.sample.raw_size != b.sample.raw_size ||
	    a.sample.raw != b.sample.raw)
		bad = "pdec_decode_fast sample differs from pdec_decode";
}

static void fuzz_decode(const uint8_t *data, size_t size)
{
	static uint8_t scratch[RING_MAX_RECORD] __attribute__((aligned(8)));
	struct ring_span sp = { .p1 = data, .n1 = size };
	struct pdec d;
	const void *rec;
	bool wrapped;
	uint8_t *al = malloc(size ? size : 1);

	/* the decoder expects 8-aligned records, like ring and arena give */
	memcpy(al, data, size);
	sp.p1 = al;
	pdec_init(&d);
	setup_events(&d);
	while (ring_span_next(&sp, scratch, &rec, &wrapped) == RING_REC) {
		uint16_t n = ((const struct perf_event_header *)rec)->size;
		uint8_t *exact = malloc(n);
		struct op_record r;
		uint64_t t;

		memcpy(exact, rec, n);
		pdec_classify(&d, exact, &t);
		if (pdec_decode(&d, exact, &r) == PDEC_OK)
			check_record(&r);
		check_fast(&d, exact);
		free(exact);
	}
	pdec_free(&d);
	free(al);
}

static void fuzz_ring(const uint8_t *data, size_t size)
{
	struct sink sk = { .ordered = true };
	struct perf_config cfg = { .deliver = deliver, .arg = &sk, .slack_ns = -1 };
	struct perf_session *s;
	const size_t page = 4096, dsize = 2 * 4096;
	uint8_t *mem;
	uint64_t *head, *tail;
	char err[256];
	size_t off, i;

	if (size < 1 || size - 1 > dsize)
		return;
	off = (size_t)data[0] * 64 % dsize;
	data++;
	size--;
	mem = aligned_alloc(page, page + dsize);
	memset(mem, 0, page + dsize);
	/* data_head / data_tail of struct perf_event_mmap_page */
	head = (uint64_t *)(mem + offsetof(struct perf_event_mmap_page, data_head));
	tail = (uint64_t *)(mem + offsetof(struct perf_event_mmap_page, data_tail));
	*tail = off;
	for (i = 0; i < size; i++)
		mem[page + (off + i) % dsize] = data[i];
	*head = off + size;
	if (perf_new(&s, &cfg, err, sizeof(err)) == 0) {
		struct pdec_event ev = { .sample_type = PDEC_BASE_SAMPLE_TYPE,
					 .read_format = PERF_FORMAT_ID };
		uint64_t id = 1;

		perf_add_event(s, &ev, &id, 1);
		perf_attach_ring(s, mem, page, dsize);
		perf_round(s);
		perf_stop(s);
		if (!sk.ordered)
			bad = "records delivered out of time order from one round";
		if (sk.n > size / 8)
			bad = "more records delivered than bytes allow";
		perf_close(s);
	}
	free(mem);
}

static void fuzz_file(const uint8_t *data, size_t size)
{
	char path[300], err[512];
	struct sink sk = { .ordered = true };
	struct perf_config cfg = { .deliver = deliver, .arg = &sk };
	struct perf_session *s;
	FILE *f;

	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/fuzz_perf.XXXXXX");
		if (!mkdtemp(tmpdir))
			return;
	}
	snprintf(path, sizeof(path), "%s/in.oprec", tmpdir);
	f = fopen(path, "wb");
	if (!f)
		return;
	if (size)
		fwrite(data, 1, size, f);
	fclose(f);
	if (perf_new(&s, &cfg, err, sizeof(err)) == 0) {
		int ret = perf_replay_file(s, path, err, sizeof(err));

		if (ret && !strstr(err, "replay file"))
			bad = "replay error without the file name";
		perf_close(s);
	}
	unlink(path);
}

static void run(const uint8_t *data, size_t size)
{
	bad = NULL;
	if (size == 0)
		return;
	switch (data[0]) {
	case 'D':
		fuzz_decode(data + 1, size - 1);
		break;
	case 'R':
		fuzz_ring(data + 1, size - 1);
		break;
	case 'F':
		fuzz_file(data + 1, size - 1);
		break;
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	run(data, size);
	if (bad) {
		fprintf(stderr, "fuzz_perf: %s\n", bad);
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
	run(data, size);
	return bad;
}

int main(int argc, char **argv)
{
	int rc = corpus_main(argc, argv, "perf", run_one);

	if (tmpdir[0])
		rmdir(tmpdir);
	return rc;
}
#endif /* !OP_LIBFUZZER */
