/*
 * perf_queue.c - bounded, pre-allocated time-ordering queue for raw perf
 * records. Records are copied into an arena; a flush sorts the entries,
 * hands out the prefix up to the watermark and compacts the rest into the
 * second arena. Nothing is allocated after pq_init.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "perf_queue.h"

int pq_init(struct pq *q, size_t bytes, size_t entries)
{
	memset(q, 0, sizeof(*q));
	if (bytes < 65536 * 2 || bytes > UINT32_MAX || entries < 16)
		return -EINVAL;
	q->arena[0] = malloc(bytes);
	q->arena[1] = malloc(bytes);
	q->ent = malloc(entries * sizeof(*q->ent));
	if (!q->arena[0] || !q->arena[1] || !q->ent) {
		pq_free(q);
		return -ENOMEM;
	}
	q->cap_bytes = bytes;
	q->cap_ent = entries;
	return 0;
}

void pq_free(struct pq *q)
{
	free(q->arena[0]);
	free(q->arena[1]);
	free(q->ent);
	memset(q, 0, sizeof(*q));
}

bool pq_fits(const struct pq *q, size_t len)
{
	return q->nr < q->cap_ent && q->used + len <= q->cap_bytes;
}

void pq_push(struct pq *q, const void *rec, size_t len, uint64_t time)
{
	struct pq_entry *e = &q->ent[q->nr];

	memcpy(q->arena[q->cur] + q->used, rec, len);
	e->time = time;
	e->seq = q->seq++;
	e->off = (uint32_t)q->used;
	e->len = (uint32_t)len;
	q->used += len;
	/* rings are nearly sorted: keep the sorted prefix growing when we can */
	if (q->sorted == q->nr &&
	    (q->nr == 0 || q->ent[q->nr - 1].time <= time))
		q->sorted++;
	q->nr++;
}

static int entry_cmp(const void *a, const void *b)
{
	const struct pq_entry *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

size_t pq_flush(struct pq *q, uint64_t watermark, size_t max, pq_deliver_fn fn, void *arg)
{
	const uint8_t *src;
	uint8_t *dst;
	size_t n = 0, i, used = 0;

	if (!q->nr)
		return 0;
	if (q->sorted < q->nr)
		qsort(q->ent, q->nr, sizeof(*q->ent), entry_cmp);
	q->sorted = q->nr;
	src = q->arena[q->cur];
	while (n < q->nr && n < max && q->ent[n].time <= watermark) {
		fn(arg, src + q->ent[n].off, q->ent[n].time);
		n++;
	}
	if (n == 0)
		return 0;
	/* compact what stays into the other arena, keeping entry order */
	dst = q->arena[q->cur ^ 1];
	for (i = n; i < q->nr; i++) {
		struct pq_entry *e = &q->ent[i - n];

		*e = q->ent[i];
		memcpy(dst + used, src + e->off, e->len);
		e->off = (uint32_t)used;
		used += e->len;
	}
	q->nr -= n;
	q->sorted = q->nr;
	q->used = used;
	q->cur ^= 1;
	return n;
}
