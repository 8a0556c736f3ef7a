/*
 * perf_queue.h - the bounded time-ordering queue of the sample path
 * (perf_queue.c): raw records wait here until the round's watermark says no
 * earlier record can still arrive from any ring. Entries either point at
 * records the caller keeps in place (replay mapping, a ring not yet
 * released) or at copies in the queue's own arena.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_PERF_QUEUE_H
#define OP_CORE_PERF_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pq_entry {
	uint64_t time;
	const uint8_t *rec; /* into the arena, or caller memory (pq_push_ref) */
};

/* sorted runs whose starts are remembered; beyond, the sort finds them itself */
#define PQ_MAX_RUNS 256

struct pq {
	uint8_t *arena[2]; /* copies live in arena[cur]; compaction copies to the other */
	unsigned cur;
	size_t cap_bytes, used;
	struct pq_entry *ent;
	struct pq_entry *tmp; /* merge sort scratch, cap_ent entries */
	size_t cap_ent, nr;
	/* ent[] is sorted runs: ent[runs[i]] is earlier than the entry before it */
	size_t runs[PQ_MAX_RUNS];
	unsigned nr_runs;
	bool runs_lost; /* more than PQ_MAX_RUNS: the sort scans for them */
};

/* Called for every record leaving the queue, in (time, arrival) order. */
typedef void (*pq_deliver_fn)(void *arg, const void *rec, uint64_t time);

/* Allocate @bytes of record space (x2) and @entries slots. -ENOMEM, -EINVAL. */
int pq_init(struct pq *q, size_t bytes, size_t entries);
void pq_free(struct pq *q);

/* Whether a record of @len bytes can be copied in (pq_push) without flushing. */
bool pq_fits(const struct pq *q, size_t len);
/* Copy @rec (@len bytes, multiple of 8, its perf header's size) in. The caller checked pq_fits. */
void pq_push(struct pq *q, const void *rec, size_t len, uint64_t time);

/* Whether an entry slot is free (pq_push_ref). */
static inline bool pq_fits_ref(const struct pq *q)
{
	return q->nr < q->cap_ent;
}

/* A new sorted run starts at ent[q->nr] (the next entry pushed). */
static inline void pq_new_run(struct pq *q)
{
	if (q->nr_runs < PQ_MAX_RUNS)
		q->runs[q->nr_runs++] = q->nr;
	else
		q->runs_lost = true;
}

/*
 * Queue a pointer to @rec (8-aligned, a whole perf record) without copying.
 * @rec must stay valid and unchanged until it is delivered or pq_detach ran.
 * The caller checked pq_fits_ref. Arrival order is kept for equal times.
 */
static inline void pq_push_ref(struct pq *q, const void *rec, uint64_t time)
{
	struct pq_entry *e = &q->ent[q->nr];

	/* rings are sorted but for rare exceptions: the sort merges runs */
	if (q->nr && time < e[-1].time)
		pq_new_run(q);
	e->time = time;
	e->rec = rec;
	q->nr++;
}

/*
 * Deliver, in order, queued records with time <= @watermark, at most @max of
 * them (SIZE_MAX: no limit; a forced flush passes a limit and
 * watermark UINT64_MAX to make room). Returns the number delivered.
 */
size_t pq_flush(struct pq *q, uint64_t watermark, size_t max, pq_deliver_fn fn, void *arg);

/*
 * pq_flush in two steps, for callers that deliver inline: the queued
 * entries sorted (*nr of them), then pq_consume(@n) drops the first @n
 * (delivered; @n <= *nr) and compacts the rest. Nothing may be pushed in
 * between.
 */
const struct pq_entry *pq_sorted(struct pq *q, size_t *nr);
void pq_consume(struct pq *q, size_t n);

/*
 * Copy every record still queued by reference into the arena (before the
 * caller releases that memory, e.g. a ring's data_tail). When they do not
 * all fit, the oldest queued records are delivered first, in order.
 * Returns the number delivered that way (forced).
 */
size_t pq_detach(struct pq *q, pq_deliver_fn fn, void *arg);

#endif /* OP_CORE_PERF_QUEUE_H */
