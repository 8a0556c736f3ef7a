/*
 * perf_deliver.c - the merge of the sample path: each round queues the
 * records of every ring (by reference where it can), delivers them decoded
 * in time order up to the round's watermark, and releases the rings.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <string.h>

#include <linux/perf_event.h>

#include "perf_int.h"

static void perf_deliver_count_undelivered(struct perf_session *s, enum pdec_status st)
{
	switch (st) {
	case PDEC_OK:
		break;
	case PDEC_UNKNOWN_ID:
		s->st.unknown_ids++;
		break;
	case PDEC_SKIP:
		s->st.skipped_types++;
		break;
	case PDEC_UNKNOWN_TYPE:
		s->st.unknown_types++;
		break;
	default:
		s->st.bad_records++;
		break;
	}
}

/* per-type counters (perf_deliver_raw counts samples itself) */
static void perf_deliver_count_sideband(struct perf_session *s, const struct op_record *r)
{
	switch (r->type) {
	case OP_REC_SAMPLE:
		s->st.samples++;
		break;
	case OP_REC_MMAP:
		s->st.mmaps++;
		break;
	case OP_REC_COMM:
		s->st.comms++;
		break;
	case OP_REC_FORK:
		s->st.forks++;
		break;
	case OP_REC_EXIT:
		s->st.exits++;
		break;
	case OP_REC_LOST:
		s->st.lost_records++;
		s->st.lost += r->lost.lost;
		break;
	case OP_REC_THROTTLE:
		s->st.throttle++;
		break;
	case OP_REC_UNTHROTTLE:
		s->st.unthrottle++;
		break;
	case OP_REC_KSYMBOL:
		s->st.ksymbols++;
		break;
	}
}

static inline __attribute__((always_inline)) void perf_deliver_one(struct perf_session *s,
								   const void *rec)
{
	struct op_record r;
	enum pdec_status st = pdec_decode_fast(&s->dec, rec, &r);

	if (__builtin_expect(st != PDEC_OK, 0)) {
		perf_deliver_count_undelivered(s, st);
		return;
	}
	if (__builtin_expect(r.type == OP_REC_SAMPLE, 1)) {
		s->st.samples++;
	} else {
		perf_deliver_count_sideband(s, &r);
		/* the exact counts come from PERF_FORMAT_LOST (perf_lost_checkpoint) */
		if (r.type == OP_REC_LOST && r.lost.kind == OP_LOST_RECORDS && s->fmt_lost)
			r.lost.kind = OP_LOST_NOTICE;
	}
	if (r.time < s->last_delivered)
		s->st.out_of_order++;
	else
		s->last_delivered = r.time;
	s->st.records++;
	if (s->cfg.deliver && s->cfg.deliver(s->cfg.arg, &r) < 0)
		s->st.deliver_errors++;
}

/* an exact lost count (PERF_FORMAT_LOST), straight to the consumer */
void perf_deliver_lost(struct perf_session *s, enum op_lost_kind kind, uint64_t n)
{
	struct op_record r = { .type = OP_REC_LOST, .time = s->last_delivered };

	if (!n)
		return;
	r.lost.lost = n;
	r.lost.kind = kind;
	if (s->cfg.deliver && s->cfg.deliver(s->cfg.arg, &r) < 0)
		s->st.deliver_errors++;
}

void perf_deliver_lost_parts(struct perf_session *s, const uint64_t d[LOST_PARTS])
{
	perf_deliver_lost(s, OP_LOST_SAMPLES, d[LOST_SAMPLES]);
	perf_deliver_lost(s, OP_LOST_SIDEBAND, d[LOST_SIDEBAND]);
	perf_deliver_lost(s, OP_LOST_RECORDS, d[LOST_EITHER]);
	s->st.lost_kernel_samples += d[LOST_SAMPLES];
	s->st.lost_kernel_sideband += d[LOST_SIDEBAND];
}

/* pq_deliver_fn for forced flushes */
static void perf_deliver_raw(void *arg, const void *rec, uint64_t time)
{
	(void)time;
	perf_deliver_one(arg, rec);
}

/* Deliver the queued records with time <= @wm, in order; returns how many. */
size_t perf_deliver_to(struct perf_session *s, uint64_t wm)
{
	size_t nr, n = 0;
	const struct pq_entry *e;

	if (!s->q.nr)
		return 0;
	e = pq_sorted(&s->q, &nr);
	while (n < nr && e[n].time <= wm)
		perf_deliver_one(s, e[n++].rec);
	pq_consume(&s->q, n);
	return n;
}

int perf_deliver_queue_ready(struct perf_session *s)
{
	int err;

	if (s->q_ready)
		return 0;
	if (!s->q_bytes) {
		size_t total = 0, i;

		for (i = 0; i < s->nr_rings; i++)
			total += s->rings[i].r.size;
		/* one full drain of every ring plus the round's leftovers */
		s->q_bytes = s->cfg.queue_bytes ? s->cfg.queue_bytes : total + total / 4;
		if (s->q_bytes < (1u << 20))
			s->q_bytes = 1u << 20;
		if (s->q_bytes > (256u << 20))
			s->q_bytes = 256u << 20;
		s->q_entries = s->q_bytes / 32;
	}
	err = pq_init(&s->q, s->q_bytes, s->q_entries);
	if (err)
		return err;
	s->q_ready = true;
	return 0;
}

/*
 * The hot loop of perf_deliver_enqueue_span: whole SAMPLE records lying in one part of
 * @sp (before or after the ring's end), queued by reference while entry slots last (the queue's
 * fields stay in registers). Stops before the first record that needs more
 * care (another type, a size only ring_span_next can judge, a full queue).
 * Returns false when it queued nothing; else *last is the last time queued.
 */
static bool perf_deliver_enqueue_samples(struct pq *q, struct ring_span *sp, uint64_t *last)
{
	enum { MIN_SAMPLE = PDEC_SAMPLE_TIME_OFF + 8 }; /* a SAMPLE with its time */
	struct pq_entry *e0 = q->ent + q->nr, *e = e0, *elim = q->ent + q->cap_ent;
	const uint8_t *base, *p, *end;
	size_t start, lim, skip;
	uint64_t prev = q->nr ? e[-1].time : 0;

	if (sp->off < sp->n1) {
		base = sp->p1;
		skip = 0;
		lim = sp->n1;
	} else {
		base = sp->p2;
		skip = sp->n1;
		lim = sp->n2;
	}
	start = sp->off - skip;
	if (start >= lim)
		return false;
	p = base + start;
	end = base + lim;
	while (e < elim) {
		const struct perf_event_header *h = (const void *)p;
		size_t left = (size_t)(end - p), size;
		uint64_t t;

		if (left < MIN_SAMPLE || h->type != PERF_RECORD_SAMPLE)
			break;
		/* MIN_SAMPLE <= size <= left, 8-aligned; the unsigned wrap catches size < MIN_SAMPLE */
		size = h->size;
		if ((size & 7) || size - MIN_SAMPLE > left - MIN_SAMPLE)
			break;
		memcpy(&t, p + PDEC_SAMPLE_TIME_OFF, sizeof(t));
		if (__builtin_expect(t < prev, 0) && e != q->ent) {
			q->nr = (size_t)(e - q->ent);
			pq_new_run(q); /* rings are sorted but for rare exceptions */
		}
		e->time = t;
		e->rec = p;
		e++;
		prev = t;
		p += size;
	}
	if (e == e0)
		return false;
	q->nr = (size_t)(e - q->ent);
	sp->off = skip + (size_t)(p - base);
	*last = prev;
	return true;
}

/*
 * Queue the records of @sp; @pr is the ring or NULL (synth/replay data).
 * With @copy they are copied into the queue's arena (the caller's buffer
 * goes away); otherwise the queue points at them, which the caller keeps
 * valid until they are delivered or pq_detach ran (a ring is released only
 * after that; a replay mapping lives for the whole run). Records that
 * wrapped the ring end (in s->scratch) are always copied.
 */
void perf_deliver_enqueue_span(struct perf_session *s, struct ring_span *sp, bool copy,
			       struct perf_ring *pr)
{
	struct pq *q = &s->q;
	uint64_t t, last = 0;
	bool got = false;

	for (;;) {
		const struct perf_event_header *h;
		const void *rec;
		bool wrapped = false;

		if (!copy && perf_deliver_enqueue_samples(q, sp, &last))
			got = true;
		/* the next record, whatever it is: inline: a whole, plausible record in the first part */
		if (sp->off + sizeof(*h) <= sp->n1) {
			h = (const void *)(sp->p1 + sp->off);
			if (h->size >= sizeof(*h) && !(h->size & 7) && h->size <= sp->n1 - sp->off) {
				rec = h;
				sp->off += h->size;
				goto have;
			}
		}
		switch (ring_span_next(sp, s->scratch, &rec, &wrapped)) {
		case RING_REC:
			break;
		case RING_BAD:
			s->st.resyncs++;
			s->st.bad_records++;
			goto out;
		default:
			goto out;
		}
		h = rec;
		if (wrapped)
			s->st.wrapped++;
have:
		switch (pdec_classify_fast(&s->dec, rec, &t)) {
		case PDEC_OK:
			break;
		case PDEC_SKIP:
			s->st.skipped_types++;
			continue;
		case PDEC_UNKNOWN_TYPE:
			s->st.unknown_types++;
			continue;
		default:
			s->st.bad_records++;
			continue;
		}
		if (__builtin_expect(copy || wrapped, 0)) {
			while (!pq_fits(q, h->size)) {
				size_t half = q->nr / 2 ? q->nr / 2 : 1;

				s->st.queue_forced +=
					pq_flush(q, UINT64_MAX, half, perf_deliver_raw, s);
			}
			pq_push(q, rec, h->size, t);
		} else {
			while (!pq_fits_ref(q)) {
				size_t half = q->nr / 2 ? q->nr / 2 : 1;

				s->st.queue_forced +=
					pq_flush(q, UINT64_MAX, half, perf_deliver_raw, s);
			}
			pq_push_ref(q, rec, t);
		}
		got = true;
		last = t;
	}
out:
	if (pr && got) {
		pr->got = true;
		pr->last_time = last;
	}
}

void perf_deliver_flush_to(struct perf_session *s, uint64_t wm)
{
	if (perf_deliver_to(s, wm))
		perf_replay_write_chunk(s, REPLAY_ROUND, wm, 0, NULL, 0, NULL, 0);
}

int perf_round(struct perf_session *s)
{
	uint64_t wm = UINT64_MAX;
	size_t i;
	int err = perf_deliver_queue_ready(s);

	if (err)
		return err;
	for (i = 0; i < s->nr_rings; i++) {
		struct perf_ring *pr = &s->rings[i];
		struct ring_span sp;
		uint64_t now = s->cfg.clock(s->cfg.clock_arg), bound;
		bool bad;
		size_t n = ring_begin(&pr->r, &sp, &bad);

		if (bad)
			s->st.resyncs++;
		pr->got = false;
		if (n) {
			s->st.bytes += n;
			perf_replay_write_chunk(s, REPLAY_DATA, i, n, sp.p1, sp.n1, sp.p2, sp.n2);
			/* by reference: the ring is released only after pq_detach below */
			perf_deliver_enqueue_span(s, &sp, false, pr);
		}
		if (pr->got)
			bound = pr->last_time;
		else if (s->clock_ok)
			bound = now;
		else
			continue;
		bound = bound > s->slack ? bound - s->slack : 0;
		if (bound < wm)
			wm = bound;
	}
	perf_deliver_flush_to(s, wm);
	/* what stays queued moves out of the rings before the kernel may reuse them */
	s->st.queue_forced += pq_detach(&s->q, perf_deliver_raw, s);
	for (i = 0; i < s->nr_rings; i++)
		ring_end(&s->rings[i].r);
	s->st.rounds++;
	return 0;
}

int perf_add_synth(struct perf_session *s, const void *recs, size_t len)
{
	struct ring_span sp = { .p1 = recs, .n1 = len };
	int err = perf_deliver_queue_ready(s);

	if (err)
		return err;
	perf_replay_write_chunk(s, REPLAY_DATA, REPLAY_RING_SYNTH, len, recs, len, NULL, 0);
	perf_deliver_enqueue_span(s, &sp, true, NULL);
	return 0;
}
