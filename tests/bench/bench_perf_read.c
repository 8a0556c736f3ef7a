/*
 * bench_perf_read.c - cost of the sample path's read side without a kernel:
 * fake rings filled like the kernel fills them, then perf_round() walks,
 * queues, sorts, decodes and delivers. Prints ns per record.
 * Run by hand: tests/bench/bench_perf_read [RECORDS_PER_ROUND] [ROUNDS] [RINGS]
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf.h"
#include "../unit/fake_ring.h"

static uint64_t delivered, sum_ip;

static int deliver(void *arg, const struct op_record *r)
{
	(void)arg;
	delivered++;
	if (r->type == OP_REC_SAMPLE)
		sum_ip += r->sample.ip;
	return 0;
}

static uint64_t fake_now;
static uint64_t clock_fn(void *arg)
{
	(void)arg;
	return fake_now;
}

static double now_s(void)
{
	struct timespec ts;

	/* CPU time: the machine is shared, wall time would measure the others */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* a 56-byte cpu-clock SAMPLE: IDENTIFIER IP TID TIME CPU PERIOD */
static void sample(uint8_t *b, uint64_t id, uint64_t ip, uint64_t time, uint32_t cpu)
{
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .misc = 2, .size = 56 };
	uint32_t pt[2] = { 1000, 1000 }, c[2] = { cpu, 0 };
	uint64_t period = 1000000;

	memcpy(b, &h, 8);
	memcpy(b + 8, &id, 8);
	memcpy(b + 16, &ip, 8);
	memcpy(b + 24, pt, 8);
	memcpy(b + 32, &time, 8);
	memcpy(b + 40, c, 8);
	memcpy(b + 48, &period, 8);
}

int main(int argc, char **argv)
{
	unsigned per_round = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;
	unsigned rounds = argc > 2 ? (unsigned)atoi(argv[2]) : 2000;
	unsigned nr = argc > 3 ? (unsigned)atoi(argv[3]) : 2, i, k, r;
	struct fake_ring rings[64];
	struct perf_config cfg = { .deliver = deliver, .clock = clock_fn, .slack_ns = -1 };
	struct pdec_event ev = { .sample_type = PDEC_BASE_SAMPLE_TYPE,
				 .read_format = PERF_FORMAT_ID };
	uint64_t id = 7, t = 1;
	struct perf_session *s;
	uint8_t rec[56] __attribute__((aligned(8)));
	char err[256];
	double t0, fill = 0, read = 0;

	if (nr < 1 || nr > 64 || per_round < 1)
		return 2;
	if (perf_new(&s, &cfg, err, sizeof(err)) || perf_add_event(s, &ev, &id, 1) < 0)
		return 1;
	for (i = 0; i < nr; i++) {
		/* enough for one round's share, power of two pages */
		size_t pages = 1;

		while (pages * FAKE_PAGE < (size_t)per_round * 56 / nr + 4096)
			pages *= 2;
		fake_ring_init(&rings[i], pages);
		perf_attach_ring(s, rings[i].mem, FAKE_PAGE, rings[i].size);
	}
	for (r = 0; r < rounds; r++) {
		t0 = now_s();
		for (k = 0; k < per_round; k++) {
			sample(rec, id, 0x400000 + (t & 0xffff), t, k % nr);
			if (!fake_write(&rings[k % nr], rec, 56))
				return 3;
			t++;
		}
		for (i = 0; i < nr; i++)
			fake_publish(&rings[i]);
		fake_now = t;
		fill += now_s() - t0;
		t0 = now_s();
		perf_round(s);
		read += now_s() - t0;
	}
	t0 = now_s();
	perf_stop(s);
	read += now_s() - t0;
	printf("rings=%u records=%" PRIu64 " per_round=%u\n", nr, delivered, per_round);
	printf("read_path_ns_per_record=%.1f\n", read * 1e9 / (double)delivered);
	printf("(producer fill, not counted: %.1f ns/record)\n", fill * 1e9 / (double)delivered);
	printf("wrapped=%" PRIu64 " out_of_order=%" PRIu64 "\n", perf_get_stats(s)->wrapped,
	       perf_get_stats(s)->out_of_order);
	perf_close(s);
	for (i = 0; i < nr; i++)
		fake_ring_free(&rings[i]);
	return delivered == (uint64_t)per_round * rounds && sum_ip ? 0 : 1;
}
