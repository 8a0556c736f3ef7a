/*
 * ring.c - the perf_event ring protocol (acquire data_head, release
 * data_tail) and a walker over ring bytes that copes with records wrapping
 * the end of the ring and with impossible record sizes.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <linux/perf_event.h>

#include "ring.h"

enum ring_next_status ring_span_next(struct ring_span *sp, void *scratch, const void **rec,
				     bool *wrapped)
{
	size_t total = sp->n1 + sp->n2;
	size_t left = total - sp->off;
	struct perf_event_header h;
	size_t size;

	*wrapped = false;
	if (left == 0)
		return RING_END;
	if (left < sizeof(h))
		goto bad;
	/* the header itself may straddle the boundary */
	if (sp->off + sizeof(h) <= sp->n1) {
		memcpy(&h, sp->p1 + sp->off, sizeof(h));
	} else if (sp->off >= sp->n1) {
		memcpy(&h, sp->p2 + (sp->off - sp->n1), sizeof(h));
	} else {
		size_t a = sp->n1 - sp->off;

		memcpy(&h, sp->p1 + sp->off, a);
		memcpy((uint8_t *)&h + a, sp->p2, sizeof(h) - a);
	}
	size = h.size;
	if (size < sizeof(h) || (size & 7) || size > left)
		goto bad;
	if (sp->off + size <= sp->n1) {
		*rec = sp->p1 + sp->off;
	} else if (sp->off >= sp->n1) {
		*rec = sp->p2 + (sp->off - sp->n1);
	} else {
		size_t a = sp->n1 - sp->off;

		memcpy(scratch, sp->p1 + sp->off, a);
		memcpy((uint8_t *)scratch + a, sp->p2, size - a);
		*rec = scratch;
		*wrapped = true;
	}
	sp->off += size;
	return RING_REC;
bad:
	sp->off = total;
	return RING_BAD;
}

int ring_attach(struct ring *r, void *base, size_t page_size, size_t data_size)
{
	struct perf_event_mmap_page *pg = base;
	uint64_t off = pg->data_offset, size = pg->data_size;

	if (off == 0 || size == 0) {
		off = page_size;
		size = data_size;
	}
	if (size == 0 || (size & (size - 1)) || off < 64 || size > (1ull << 40))
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->head_p = (volatile uint64_t *)(void *)&pg->data_head;
	r->tail_p = (volatile uint64_t *)(void *)&pg->data_tail;
	r->data = (const uint8_t *)base + off;
	r->size = size;
	r->tail = __atomic_load_n(&pg->data_tail, __ATOMIC_RELAXED);
	r->head = r->tail;
	return 0;
}

size_t ring_begin(struct ring *r, struct ring_span *sp, bool *bad)
{
	uint64_t head = __atomic_load_n(r->head_p, __ATOMIC_ACQUIRE);
	uint64_t avail = head - r->tail;
	uint64_t mask = r->size - 1;
	uint64_t start;

	*bad = false;
	memset(sp, 0, sizeof(*sp));
	r->head = head;
	if (avail == 0)
		return 0;
	if (avail > r->size) {
		/* cannot happen with PROT_WRITE rings: skip everything */
		*bad = true;
		r->tail = head;
		return 0;
	}
	start = r->tail & mask;
	sp->p1 = r->data + start;
	if (start + avail <= r->size) {
		sp->n1 = avail;
	} else {
		sp->n1 = r->size - start;
		sp->p2 = r->data;
		sp->n2 = avail - sp->n1;
	}
	return avail;
}

void ring_end(struct ring *r)
{
	r->tail = r->head;
	/* orders our reads of the data before the kernel may overwrite it */
	__atomic_store_n(r->tail_p, r->tail, __ATOMIC_RELEASE);
}
