/*
 * fake_ring.h - a ring buffer laid out like a perf_event mmap (control page +
 * power-of-two data area) with a producer that writes records the way the
 * kernel does, wrapping at the end. For test_ring and test_perf_decode.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_TESTS_FAKE_RING_H
#define OP_TESTS_FAKE_RING_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#define FAKE_PAGE 4096

struct fake_ring {
	uint8_t *mem;
	struct perf_event_mmap_page *pg;
	uint8_t *data;
	size_t size;
	uint64_t head; /* producer position, published by fake_publish */
};

static inline void fake_ring_init(struct fake_ring *f, size_t data_pages)
{
	f->size = data_pages * FAKE_PAGE;
	f->mem = aligned_alloc(FAKE_PAGE, FAKE_PAGE + f->size);
	memset(f->mem, 0xee, FAKE_PAGE + f->size);
	f->pg = (struct perf_event_mmap_page *)f->mem;
	memset(f->pg, 0, sizeof(*f->pg));
	f->pg->data_offset = FAKE_PAGE;
	f->pg->data_size = f->size;
	f->data = f->mem + FAKE_PAGE;
	f->head = 0;
}

/* start both head and tail at @pos (to force wrapping early) */
static inline void fake_ring_seek(struct fake_ring *f, uint64_t pos)
{
	f->head = pos;
	f->pg->data_head = pos;
	f->pg->data_tail = pos;
}

static inline void fake_ring_free(struct fake_ring *f)
{
	free(f->mem);
	f->mem = NULL;
}

/* false when the consumer has not freed enough space (kernel would drop it) */
static inline bool fake_write(struct fake_ring *f, const void *rec, size_t len)
{
	uint64_t tail = __atomic_load_n(&f->pg->data_tail, __ATOMIC_ACQUIRE);
	size_t i, mask = f->size - 1;

	if (f->head + len - tail > f->size)
		return false;
	for (i = 0; i < len; i++)
		f->data[(f->head + i) & mask] = ((const uint8_t *)rec)[i];
	f->head += len;
	return true;
}

static inline void fake_publish(struct fake_ring *f)
{
	__atomic_store_n(&f->pg->data_head, f->head, __ATOMIC_RELEASE);
}

#endif /* OP_TESTS_FAKE_RING_H */
