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
	q->tmp = malloc(entries * sizeof(*q->tmp));
	if (!q->arena[0] || !q->arena[1] || !q->ent || !q->tmp) {
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
	free(q->tmp);
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

static inline bool before(const struct pq_entry *x, const struct pq_entry *y)
{
	return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

/* end of the ascending run starting at @i */
static size_t run_end(const struct pq_entry *a, size_t i, size_t n)
{
	while (i + 1 < n && !before(&a[i + 1], &a[i]))
		i++;
	return i + 1;
}

/*
 * Natural merge sort into the pre-allocated tmp array: the queue holds one
 * sorted run per ring chunk plus the sorted leftover of the last round, so
 * this is O(n log runs) and allocation-free (qsort may malloc).
 */
static void sort_entries(struct pq *q)
{
	struct pq_entry *a = q->ent, *b = q->tmp;
	size_t n = q->nr;

	for (;;) {
		size_t i = 0, runs = 0;

		while (i < n) {
			size_t m = run_end(a, i, n), e = m < n ? run_end(a, m, n) : m;
			size_t x = i, y = m, o = i;

			while (x < m && y < e)
				b[o++] = before(&a[y], &a[x]) ? a[y++] : a[x++];
			while (x < m)
				b[o++] = a[x++];
			while (y < e)
				b[o++] = a[y++];
			runs++;
			i = e;
		}
		q->ent = b;
		q->tmp = a;
		if (runs <= 1)
			break;
		a = q->ent;
		b = q->tmp;
	}
}

size_t pq_flush(struct pq *q, uint64_t watermark, size_t max, pq_deliver_fn fn, void *arg)
{
	const uint8_t *src;
	uint8_t *dst;
	size_t n = 0, i, used = 0;

	if (!q->nr)
		return 0;
	if (q->sorted < q->nr)
		sort_entries(q);
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
