/*
 * test_ring.c - the ring reader: head/tail protocol on a fake 1-2 page ring,
 * records wrapping the end (header split, body split), impossible sizes
 * (resync), and a producer/consumer run with thousands of wrapped records.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>

#include "ring.h"
#include "fake_ring.h"

static uint8_t scratch[RING_MAX_RECORD] __attribute__((aligned(8)));

/* a record of @size bytes whose body bytes are @fill */
static void mkrec(uint8_t *buf, uint32_t type, uint16_t size, uint8_t fill)
{
	struct perf_event_header h = { .type = type, .misc = 0, .size = size };

	memset(buf, fill, size);
	memcpy(buf, &h, sizeof(h));
}

static void check_rec(const void *rec, uint32_t type, uint16_t size, uint8_t fill)
{
	const struct perf_event_header *h = rec;
	size_t i;

	assert_int_equal(h->type, type);
	assert_int_equal(h->size, size);
	for (i = sizeof(*h); i < size; i++)
		assert_int_equal(((const uint8_t *)rec)[i], fill);
}

static void test_empty_ring(void **state)
{
	struct fake_ring f;
	struct ring r;
	struct ring_span sp;
	bool bad;

	(void)state;
	fake_ring_init(&f, 1);
	assert_int_equal(ring_attach(&r, f.mem, FAKE_PAGE, f.size), 0);
	assert_int_equal(ring_begin(&r, &sp, &bad), 0);
	assert_false(bad);
	ring_end(&r);
	assert_int_equal(f.pg->data_tail, 0);
	fake_ring_free(&f);
}

static void test_bad_geometry(void **state)
{
	uint8_t mem[FAKE_PAGE * 2] __attribute__((aligned(8))) = { 0 };
	struct ring r;

	(void)state;
	/* data_size 0 in the page and a non power of two given */
	assert_int_equal(ring_attach(&r, mem, FAKE_PAGE, 3000), -EINVAL);
	assert_int_equal(ring_attach(&r, mem, FAKE_PAGE, 0), -EINVAL);
}

static void test_contiguous_records(void **state)
{
	struct fake_ring f;
	struct ring r;
	struct ring_span sp;
	uint8_t rec[256];
	const void *p;
	bool bad, wrapped;
	int i;

	(void)state;
	fake_ring_init(&f, 1);
	assert_int_equal(ring_attach(&r, f.mem, FAKE_PAGE, f.size), 0);
	for (i = 0; i < 5; i++) {
		mkrec(rec, 9, (uint16_t)(16 + 8 * i), (uint8_t)i);
		assert_true(fake_write(&f, rec, 16 + 8 * i));
	}
	fake_publish(&f);
	assert_int_equal(ring_begin(&r, &sp, &bad), 16 * 5 + 8 * 10);
	for (i = 0; i < 5; i++) {
		assert_int_equal(ring_span_next(&sp, scratch, &p, &wrapped), RING_REC);
		assert_false(wrapped);
		assert_ptr_not_equal(p, scratch);
		check_rec(p, 9, (uint16_t)(16 + 8 * i), (uint8_t)i);
	}
	assert_int_equal(ring_span_next(&sp, scratch, &p, &wrapped), RING_END);
	ring_end(&r);
	assert_int_equal(f.pg->data_tail, f.head);
	fake_ring_free(&f);
}

/* the body (or the header itself) crosses the end of the data area */
static void wrap_at(size_t before_end)
{
	struct fake_ring f;
	struct ring r;
	struct ring_span sp;
	uint8_t rec[64];
	const void *p;
	bool bad, wrapped;

	fake_ring_init(&f, 1);
	fake_ring_seek(&f, 3 * f.size - before_end); /* free-running counters */
	assert_int_equal(ring_attach(&r, f.mem, FAKE_PAGE, f.size), 0);
	mkrec(rec, 10, 48, 0x5a);
	assert_true(fake_write(&f, rec, 48));
	mkrec(rec, 3, 24, 0x33);
	assert_true(fake_write(&f, rec, 24));
	fake_publish(&f);
	assert_int_equal(ring_begin(&r, &sp, &bad), 72);
	assert_int_equal(ring_span_next(&sp, scratch, &p, &wrapped), RING_REC);
	assert_true(wrapped == (before_end < 48));
	if (wrapped)
		assert_ptr_equal(p, scratch);
	check_rec(p, 10, 48, 0x5a);
	assert_int_equal(ring_span_next(&sp, scratch, &p, &wrapped), RING_REC);
	check_rec(p, 3, 24, 0x33);
	assert_int_equal(ring_span_next(&sp, scratch, &p, &wrapped), RING_END);
	ring_end(&r);
	assert_int_equal(f.pg->data_tail, 3 * f.size - before_end + 72);
	fake_ring_free(&f);
}

static void test_wrap_body(void **state)
{
	(void)state;
	wrap_at(16); /* header and 8 body bytes before the end */
	wrap_at(40);
}

static void test_wrap_header(void **state)
{
	(void)state;
	/* records are 8-aligned, so a header never splits in the kernel; the walker
	 * still copes with a 4-byte split (replay data is not trusted either) */
	struct ring_span sp;
	uint8_t a[4], b[60];
	uint8_t rec[64];
	const void *p;
	bool wrapped;

	mkrec(rec, 7, 64, 0x11);
	memcpy(a, rec, 4);
	memcpy(b, rec + 4, 60);
	sp = (struct ring_span){ .p1 = a, .n1 = 4, .p2 = b, .n2 = 60 };
	assert_int_equal(ring_span_next(&sp, scratch, &p, &wrapped), RING_REC);
	assert_true(wrapped);
	check_rec(p, 7, 64, 0x11);
	(void)state;
}

static void test_bad_sizes_resync(void **state)
{
	uint8_t buf[128] __attribute__((aligned(8)));
	struct ring_span sp;
	const void *p;
	bool wrapped;
	uint16_t sizes[] = { 0, 4, 12, 200 }; /* < header, < header, unaligned, > span */
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		mkrec(buf, 9, 16, 0);
		mkrec(buf + 16, 9, 16, 0);
		((struct perf_event_header *)(buf + 16))->size = sizes[i];
		sp = (struct ring_span){ .p1 = buf, .n1 = 128 };
		assert_int_equal(ring_span_next(&sp, scratch, &p, &wrapped), RING_REC);
		assert_int_equal(ring_span_next(&sp, scratch, &p, &wrapped), RING_BAD);
		/* resynced: nothing more in this span */
		assert_int_equal(ring_span_next(&sp, scratch, &p, &wrapped), RING_END);
	}
	/* a span shorter than a header */
	sp = (struct ring_span){ .p1 = buf, .n1 = 4 };
	assert_int_equal(ring_span_next(&sp, scratch, &p, &wrapped), RING_BAD);
}

static void test_head_beyond_size(void **state)
{
	struct fake_ring f;
	struct ring r;
	struct ring_span sp;
	bool bad;

	(void)state;
	fake_ring_init(&f, 1);
	assert_int_equal(ring_attach(&r, f.mem, FAKE_PAGE, f.size), 0);
	f.pg->data_head = f.size * 2 + 8; /* impossible for a PROT_WRITE ring */
	assert_int_equal(ring_begin(&r, &sp, &bad), 0);
	assert_true(bad);
	ring_end(&r);
	assert_int_equal(f.pg->data_tail, f.size * 2 + 8);
	fake_ring_free(&f);
}

/* a 2-page ring, 20000 records of varying size: all arrive, in order, intact */
static void test_producer_consumer(void **state)
{
	struct fake_ring f;
	struct ring r;
	uint8_t rec[512];
	unsigned produced = 0, consumed = 0, wraps = 0, rounds = 0;
	const unsigned total = 20000;

	(void)state;
	fake_ring_init(&f, 2);
	assert_int_equal(ring_attach(&r, f.mem, FAKE_PAGE, f.size), 0);
	while (consumed < total) {
		struct ring_span sp;
		const void *p;
		bool bad, wrapped;

		/* produce a burst until full or done */
		while (produced < total) {
			uint16_t size = (uint16_t)(16 + 8 * ((produced * 7) % 60));

			mkrec(rec, 9, size, (uint8_t)produced);
			memcpy(rec + 8, &produced, sizeof(produced));
			if (!fake_write(&f, rec, size))
				break;
			produced++;
			if (produced % 13 == 0)
				break;
		}
		fake_publish(&f);
		ring_begin(&r, &sp, &bad);
		assert_false(bad);
		while (ring_span_next(&sp, scratch, &p, &wrapped) == RING_REC) {
			unsigned seq;
			uint16_t size = (uint16_t)(16 + 8 * ((consumed * 7) % 60));

			memcpy(&seq, (const uint8_t *)p + 8, sizeof(seq));
			assert_int_equal(seq, consumed);
			assert_int_equal(((const struct perf_event_header *)p)->size, size);
			assert_int_equal(((const uint8_t *)p)[size - 1], (uint8_t)consumed);
			wraps += wrapped;
			consumed++;
		}
		ring_end(&r);
		rounds++;
	}
	assert_int_equal(consumed, total);
	assert_true(wraps > 10); /* the test really exercised wrapping */
	fake_ring_free(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_ring),
		cmocka_unit_test(test_bad_geometry),
		cmocka_unit_test(test_contiguous_records),
		cmocka_unit_test(test_wrap_body),
		cmocka_unit_test(test_wrap_header),
		cmocka_unit_test(test_bad_sizes_resync),
		cmocka_unit_test(test_head_beyond_size),
		cmocka_unit_test(test_producer_consumer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
