/*
 * perf_queue.h - the bounded time-ordering queue of the sample path
 * (perf_queue.c): raw records copied off the rings wait here until the
 * round's watermark says no earlier record can still arrive from any ring.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_PERF_QUEUE_H
#define OP_CORE_PERF_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pq_entry {
	uint64_t time;
	uint64_t seq;  /* arrival order: ties keep ring order, synthesized first */
	uint32_t off;  /* into the current arena */
	uint32_t len;
};

struct pq {
	uint8_t *arena[2];      /* records live in arena[cur]; compaction copies to the other */
	unsigned cur;
	size_t cap_bytes, used;
	struct pq_entry *ent;
	struct pq_entry *tmp;   /* merge sort scratch, cap_ent entries */
	size_t cap_ent, nr;
	size_t sorted;          /* ent[0..sorted) is known to be in order */
	uint64_t seq;
};

/* Called for every record leaving the queue, in (time, arrival) order. */
typedef void (*pq_deliver_fn)(void *arg, const void *rec, uint64_t time);

/* Allocate @bytes of record space (x2) and @entries slots. -ENOMEM, -EINVAL. */
int pq_init(struct pq *q, size_t bytes, size_t entries);
void pq_free(struct pq *q);

/* Whether a record of @len bytes can be pushed without flushing. */
bool pq_fits(const struct pq *q, size_t len);
/* Copy @rec (@len bytes, multiple of 8) in. The caller checked pq_fits. */
void pq_push(struct pq *q, const void *rec, size_t len, uint64_t time);

/*
 * Deliver, in order, queued records with time <= @watermark, at most @max of
 * them (SIZE_MAX: no limit; a forced flush passes a limit and
 * watermark UINT64_MAX to make room). Returns the number delivered.
 */
size_t pq_flush(struct pq *q, uint64_t watermark, size_t max, pq_deliver_fn fn, void *arg);

#endif /* OP_CORE_PERF_QUEUE_H */
