/*
 * ring.h - reading perf_event ring buffers (ring.c): the head/tail protocol
 * of the kernel's mmap'd rings, and walking the records of a byte span that
 * may wrap around the end of the ring (the same walker serves replay files).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_RING_H
#define OP_CORE_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest record the kernel can write: perf_event_header.size is a u16. */
#define RING_MAX_RECORD 65536

/*
 * A span of ring bytes: first @n1 bytes at @p1 then @n2 bytes at @p2 (the
 * wrapped part, at the start of the ring data area). @off walks the whole
 * span. A replay chunk is a span with n2 == 0.
 */
struct ring_span {
	const uint8_t *p1;
	size_t n1;
	const uint8_t *p2;
	size_t n2;
	size_t off;
};

enum ring_next_status {
	RING_REC = 0, /* *rec points at a whole record */
	RING_END = 1, /* span exhausted */
	RING_BAD = 2, /* impossible header (size < 8, not 8-aligned or beyond the span) */
};

/*
 * Next record of @sp. A record lying across the p1/p2 boundary is copied
 * into @scratch (RING_MAX_RECORD bytes, 8-aligned) and *wrapped is set.
 * On RING_BAD the rest of the span is skipped (resync to head): records
 * cannot be found again once a length is wrong.
 */
enum ring_next_status ring_span_next(struct ring_span *sp, void *scratch, const void **rec,
				     bool *wrapped);

/* A live (or fake, in tests) ring: the control page and the data area. */
struct ring {
	volatile uint64_t *head_p; /* &perf_event_mmap_page.data_head */
	volatile uint64_t *tail_p; /* &perf_event_mmap_page.data_tail */
	const uint8_t *data;
	uint64_t size; /* power of two */
	uint64_t tail; /* our copy of data_tail */
	uint64_t head; /* head loaded by ring_begin */
};

/*
 * Attach to a mapping at @base of 1 control page + data. The data offset and
 * size are read from the control page (kernel >= 4.1 fills them); when they
 * are 0 (fake rings), @page_size and @data_size are used. -EINVAL if the
 * geometry is impossible.
 */
int ring_attach(struct ring *r, void *base, size_t page_size, size_t data_size);

/*
 * Acquire-load data_head and describe the unread bytes in @sp. Returns the
 * number of unread bytes (0: empty). A head that moved backwards or more than
 * the ring size ahead of the tail is a kernel/ABI surprise: the span is empty
 * and *bad is set so the caller can count it; the tail is resynced to head.
 */
size_t ring_begin(struct ring *r, struct ring_span *sp, bool *bad);

/* Release-store data_tail = head: the kernel may reuse the bytes. */
void ring_end(struct ring *r);

#endif /* OP_CORE_RING_H */
