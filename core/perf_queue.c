/*
 * perf_queue.c - bounded, pre-allocated time-ordering queue for raw perf
 * records. Entries point at records: in place (replay mapping, unreleased
 * ring) or copied into an arena. A flush sorts the entries (stable), hands
 * out the prefix up to the watermark and compacts the rest, copying arena
 * records into the second arena. Nothing is allocated after pq_init.
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
	uint8_t *dst = q->arena[q->cur] + q->used;

	memcpy(dst, rec, len);
	q->used += len;
	pq_push_ref(q, dst, time);
}

/* bytes of the queued record @rec: its perf_event_header.size */
static inline size_t pq_rec_len(const uint8_t *rec)
{
	uint16_t size;

	memcpy(&size, rec + 6, sizeof(size));
	return size;
}

static inline bool pq_in_arena(const struct pq *q, const uint8_t *rec)
{
	uintptr_t a = (uintptr_t)q->arena[q->cur], p = (uintptr_t)rec;

	return p >= a && p - a < q->cap_bytes;
}

/* end of the ascending run starting at @i (equal times continue a run) */
static size_t pq_run_end(const struct pq_entry *a, size_t i, size_t n)
{
	while (i + 1 < n && a[i + 1].time >= a[i].time)
		i++;
	return i + 1;
}

/* Merge the sorted a[i..m) and a[m..e) into b[i..e); ties take the left run. */
static void pq_merge(const struct pq_entry *a, struct pq_entry *b, size_t i, size_t m, size_t e)
{
	const struct pq_entry *x = a + i, *xe = a + m, *y = a + m, *ye = a + e;
	struct pq_entry *o = b + i;

	while (x < xe && y < ye) {
		bool right = y->time < x->time;

		*o++ = *(right ? y : x);
		y += right;
		x += !right;
	}
	if (x < xe)
		memcpy(o, x, (size_t)(xe - x) * sizeof(*a));
	else if (y < ye)
		memcpy(o, y, (size_t)(ye - y) * sizeof(*a));
}

/*
 * Stable merge sort of the sorted runs into the pre-allocated tmp array:
 * the queue holds one sorted run per ring chunk plus the sorted leftover of
 * the last round, so this is O(n log runs) and allocation-free (qsort may
 * malloc). Ties take the left (earlier arrived) run: arrival order is kept.
 * The run starts are known from the pushes unless there were too many.
 */
static void pq_sort_entries(struct pq *q)
{
	struct pq_entry *a = q->ent, *b = q->tmp;
	size_t n = q->nr, bound[PQ_MAX_RUNS + 2], k = 0, i;

	if (!q->runs_lost) {
		bound[k++] = 0;
		for (i = 0; i < q->nr_runs; i++)
			bound[k++] = q->runs[i];
		bound[k++] = n;
		/* k - 1 runs; each pass merges neighbours and halves them */
		while (k > 2) {
			size_t j = 0;

			for (i = 0; i + 2 < k; i += 2) {
				pq_merge(a, b, bound[i], bound[i + 1], bound[i + 2]);
				bound[j++] = bound[i];
			}
			if (i + 1 < k) { /* an odd run out */
				memcpy(b + bound[i], a + bound[i],
				       (bound[i + 1] - bound[i]) * sizeof(*a));
				bound[j++] = bound[i];
			}
			bound[j++] = n;
			k = j;
			q->ent = b;
			q->tmp = a;
			a = q->ent;
			b = q->tmp;
		}
		return;
	}
	for (;;) {
		size_t runs = 0;

		i = 0;
		while (i < n) {
			size_t m = pq_run_end(a, i, n), e = m < n ? pq_run_end(a, m, n) : m;

			pq_merge(a, b, i, m, e);
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

/*
 * Drop the first @n entries, keeping the order of the rest; arena records
 * (with @all: every record) are copied into the other arena, which becomes
 * the current one. The caller made sure they fit.
 */
static void pq_compact(struct pq *q, size_t n, bool all)
{
	uint8_t *dst = q->arena[q->cur ^ 1];
	size_t used = 0, i, k = q->nr - n;

	for (i = 0; i < k; i++) {
		struct pq_entry e = q->ent[n + i];

		if (all || pq_in_arena(q, e.rec)) {
			size_t len = pq_rec_len(e.rec);

			memcpy(dst + used, e.rec, len);
			e.rec = dst + used;
			used += len;
		}
		q->ent[i] = e;
	}
	q->nr = k;
	q->nr_runs = 0;
	q->runs_lost = false;
	q->used = used;
	q->cur ^= 1;
}

static void pq_sort_if_needed(struct pq *q)
{
	if (q->nr_runs || q->runs_lost)
		pq_sort_entries(q);
	q->nr_runs = 0;
	q->runs_lost = false;
}

const struct pq_entry *pq_sorted(struct pq *q, size_t *nr)
{
	pq_sort_if_needed(q);
	*nr = q->nr;
	return q->ent;
}

void pq_consume(struct pq *q, size_t n)
{
	if (n == 0)
		return;
	if (n >= q->nr) {
		q->nr = q->used = 0;
		q->nr_runs = 0;
		q->runs_lost = false;
		return;
	}
	pq_compact(q, n, false);
}

size_t pq_flush(struct pq *q, uint64_t watermark, size_t max, pq_deliver_fn fn, void *arg)
{
	const struct pq_entry *e;
	size_t n = 0, lim, nr;

	if (!q->nr)
		return 0;
	e = pq_sorted(q, &nr);
	lim = nr < max ? nr : max;
	while (n < lim && e[n].time <= watermark) {
		fn(arg, e[n].rec, e[n].time);
		n++;
	}
	pq_consume(q, n);
	return n;
}

size_t pq_detach(struct pq *q, pq_deliver_fn fn, void *arg)
{
	size_t need = 0, n = 0, i, refs = 0;

	for (i = 0; i < q->nr; i++) {
		need += pq_rec_len(q->ent[i].rec);
		refs += !pq_in_arena(q, q->ent[i].rec);
	}
	if (!refs)
		return 0;
	pq_sort_if_needed(q);
	/* everything moves to the other arena: deliver the oldest until it fits */
	while (need > q->cap_bytes && n < q->nr) {
		fn(arg, q->ent[n].rec, q->ent[n].time);
		need -= pq_rec_len(q->ent[n].rec);
		n++;
	}
	pq_compact(q, n, true);
	return n;
}
