/*
 * perf_decode.c - raw perf_event records -> struct op_record. Every field
 * read is bounds-checked against header.size; malformed records are
 * reported as PDEC_BAD, never trusted.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <linux/perf_event.h>

#include "perf_decode.h"

/* record types newer than the 6.1 uapi header */
#define PDEC_RECORD_LAST_KNOWN 22

static inline uint64_t pdec_ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t pdec_ld32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint16_t pdec_ld16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

void pdec_init(struct pdec *d)
{
	memset(d, 0, sizeof(*d));
}

void pdec_free(struct pdec *d)
{
	free(d->ids);
	d->ids = NULL;
	d->ids_cap = d->nr_ids = 0;
	memset(d->idc, 0, sizeof(d->idc));
}

int pdec_add_event(struct pdec *d, const struct pdec_event *e)
{
	uint64_t t = e->sample_type & PDEC_TRAILER_BITS;
	unsigned off = 0;

	if ((e->sample_type & PDEC_BASE_SAMPLE_TYPE) != PDEC_BASE_SAMPLE_TYPE)
		return -EINVAL;
	if (d->nr_events && t != d->trailer_type)
		return -EINVAL;
	if (d->nr_events >= PDEC_MAX_EVENTS)
		return -ENOSPC;
	if (!d->nr_events) {
		d->trailer_type = t;
		if (t & PERF_SAMPLE_TID)
			off += 8;
		d->trailer_time = off;
		if (t & PERF_SAMPLE_TIME)
			off += 8;
		if (t & PERF_SAMPLE_ID)
			off += 8;
		if (t & PERF_SAMPLE_STREAM_ID)
			off += 8;
		d->trailer_cpu = off;
		if (t & PERF_SAMPLE_CPU)
			off += 8;
		if (t & PERF_SAMPLE_IDENTIFIER)
			off += 8;
		d->trailer_size = off;
	}
	d->events[d->nr_events] = *e;
	return (int)d->nr_events++;
}

static size_t pdec_id_slot(uint64_t id, size_t mask)
{
	/* ids are small sequential numbers: spread them */
	return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 20) & mask;
}

static int pdec_ids_grow(struct pdec *d)
{
	size_t cap = d->ids_cap ? d->ids_cap * 2 : 256, i;
	struct pdec_id *n = malloc(cap * sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (i = 0; i < cap; i++)
		n[i].ev = UINT32_MAX;
	for (i = 0; i < d->ids_cap; i++) {
		size_t s;

		if (d->ids[i].ev == UINT32_MAX)
			continue;
		s = pdec_id_slot(d->ids[i].id, cap - 1);
		while (n[s].ev != UINT32_MAX)
			s = (s + 1) & (cap - 1);
		n[s] = d->ids[i];
	}
	free(d->ids);
	d->ids = n;
	d->ids_cap = cap;
	return 0;
}

/* the cache slot of @id; it is filled only when free, so it never disagrees with ids[] */
static inline struct pdec_idc *pdec_idc_slot(const struct pdec *d, uint64_t id)
{
	return (struct pdec_idc *)&d->idc[id % PDEC_ID_CACHE];
}

int pdec_add_id(struct pdec *d, uint64_t id, unsigned ev)
{
	struct pdec_idc *c;
	size_t s;

	if (ev >= d->nr_events)
		return -EINVAL;
	if ((d->nr_ids + 1) * 2 > d->ids_cap) {
		int err = pdec_ids_grow(d);

		if (err)
			return err;
	}
	c = pdec_idc_slot(d, id);
	if (!c->ev1 || c->id == id) {
		c->id = id;
		c->ev1 = ev + 1;
		c->counter = d->events[ev].counter;
		c->source = d->events[ev].source;
		c->base = d->events[ev].sample_type == PDEC_BASE_SAMPLE_TYPE;
	}
	s = pdec_id_slot(id, d->ids_cap - 1);
	while (d->ids[s].ev != UINT32_MAX) {
		if (d->ids[s].id == id) {
			d->ids[s].ev = ev;
			return 0;
		}
		s = (s + 1) & (d->ids_cap - 1);
	}
	d->ids[s].id = id;
	d->ids[s].ev = ev;
	d->nr_ids++;
	return 0;
}

static const struct pdec_event *pdec_lookup_slow(const struct pdec *d, uint64_t id)
{
	size_t s;

	if (!d->ids_cap)
		return NULL;
	s = pdec_id_slot(id, d->ids_cap - 1);
	while (d->ids[s].ev != UINT32_MAX) {
		if (d->ids[s].id == id)
			return &d->events[d->ids[s].ev];
		s = (s + 1) & (d->ids_cap - 1);
	}
	return NULL;
}

static inline const struct pdec_event *pdec_lookup_id(const struct pdec *d, uint64_t id)
{
	const struct pdec_idc *c = &d->idc[id % PDEC_ID_CACHE];

	if (c->ev1 && c->id == id)
		return &d->events[c->ev1 - 1];
	return pdec_lookup_slow(d, id);
}

const struct pdec_event *pdec_lookup(const struct pdec *d, uint64_t id)
{
	return pdec_lookup_id(d, id);
}

static bool pdec_delivered_type(uint32_t type)
{
	switch (type) {
	case PERF_RECORD_SAMPLE:
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	case PERF_RECORD_KSYMBOL:
		return true;
	default:
		return false;
	}
}

static enum pdec_status pdec_skipped_or_unknown(uint32_t type)
{
	return type >= 1 && type <= PDEC_RECORD_LAST_KNOWN ? PDEC_SKIP : PDEC_UNKNOWN_TYPE;
}

#define SAMPLE_TIME_OFF PDEC_SAMPLE_TIME_OFF

enum pdec_status pdec_classify(const struct pdec *d, const void *rec, uint64_t *time)
{
	const uint8_t *p = rec;
	const struct perf_event_header *h = rec;

	*time = 0;
	if (!pdec_delivered_type(h->type))
		return pdec_skipped_or_unknown(h->type);
	if (h->type == PERF_RECORD_SAMPLE) {
		if (h->size < SAMPLE_TIME_OFF + 8)
			return PDEC_BAD;
		*time = pdec_ld64(p + SAMPLE_TIME_OFF);
		return PDEC_OK;
	}
	if (h->size < sizeof(*h) + d->trailer_size)
		return PDEC_BAD;
	if (d->trailer_type & PERF_SAMPLE_TIME)
		*time = pdec_ld64(p + h->size - d->trailer_size + d->trailer_time);
	return PDEC_OK;
}

static enum pdec_status pdec_decode_sample(const struct pdec *d, const uint8_t *p, size_t size,
					   struct op_record *out)
{
	const struct perf_event_header *h = (const void *)p;
	struct op_perf_sample *s = &out->sample;
	const struct pdec_event *ev;
	const uint8_t *q = p + sizeof(*h), *end = p + size;
	uint64_t st, n, id;

#define NEED(bytes)                                      \
	do {                                             \
		if ((size_t)(end - q) < (size_t)(bytes)) \
			return PDEC_BAD;                 \
	} while (0)

	NEED(8);
	id = pdec_ld64(q);
	q += 8;
	ev = pdec_lookup_id(d, id);
	if (!ev)
		return PDEC_UNKNOWN_ID;
	st = ev->sample_type;
	s->size = sizeof(*s);
	s->misc = h->misc;
	s->cpumode = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	s->id = id;
	s->source = ev->source;
	s->addr = 0;
	s->nr_callchain = 0;
	s->callchain = NULL;
	s->raw_size = 0;
	s->raw = NULL;
	out->counter = ev->counter;
	/* the common case: IDENTIFIER IP TID TIME CPU PERIOD at fixed offsets */
	if (st == PDEC_BASE_SAMPLE_TYPE && size >= PDEC_BASE_SAMPLE_SIZE) {
		s->ip = pdec_ld64(p + 16);
		s->pid = pdec_ld32(p + 24);
		s->tid = pdec_ld32(p + 28);
		s->time = pdec_ld64(p + 32);
		s->cpu = pdec_ld32(p + 40);
		s->period = pdec_ld64(p + 48);
		goto done;
	}
	/* IP, TID, TIME are guaranteed by PDEC_BASE_SAMPLE_TYPE */
	NEED(24);
	s->ip = pdec_ld64(q);
	s->pid = pdec_ld32(q + 8);
	s->tid = pdec_ld32(q + 12);
	s->time = pdec_ld64(q + 16);
	q += 24;
	if (st & PERF_SAMPLE_ADDR) {
		NEED(8);
		s->addr = pdec_ld64(q);
		q += 8;
	}
	if (st & PERF_SAMPLE_ID) {
		NEED(8);
		q += 8;
	}
	if (st & PERF_SAMPLE_STREAM_ID) {
		NEED(8);
		q += 8;
	}
	NEED(8); /* CPU */
	s->cpu = pdec_ld32(q);
	q += 8;
	NEED(8); /* PERIOD */
	s->period = pdec_ld64(q);
	q += 8;
	if (st & PERF_SAMPLE_READ) {
		uint64_t rf = ev->read_format;
		uint64_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
		uint64_t fixed = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
				 !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);

		if (rf & PERF_FORMAT_GROUP) {
			NEED(8);
			n = pdec_ld64(q);
			q += 8;
			if (n > (size_t)(end - q) / 8 / per)
				return PDEC_BAD;
			NEED((fixed + n * per) * 8);
			q += (fixed + n * per) * 8;
		} else {
			NEED((fixed + per) * 8);
			q += (fixed + per) * 8;
		}
	}
	if (st & PERF_SAMPLE_CALLCHAIN) {
		NEED(8);
		n = pdec_ld64(q);
		q += 8;
		if (n > (size_t)(end - q) / 8)
			return PDEC_BAD;
		s->nr_callchain = n;
		s->callchain = (const uint64_t *)(const void *)q;
		q += n * 8;
	}
	if (st & PERF_SAMPLE_RAW) {
		uint32_t rs;
		size_t adv;

		NEED(4);
		rs = pdec_ld32(q);
		adv = ((size_t)rs + 4 + 7) & ~(size_t)7;
		NEED(adv);
		s->raw_size = rs;
		s->raw = rs ? q + 4 : NULL;
		q += adv;
	}
	/* later fields (branch stack, regs, ...) are not used */
#undef NEED
done:
	out->type = OP_REC_SAMPLE;
	out->time = s->time;
	out->cpu = s->cpu;
	return PDEC_OK;
}

/* a NUL-terminated string in [q, end) */
static bool pdec_has_nul(const uint8_t *q, const uint8_t *end)
{
	return end > q && memchr(q, 0, (size_t)(end - q)) != NULL;
}

enum pdec_status pdec_decode(const struct pdec *d, const void *rec, struct op_record *out)
{
	const uint8_t *p = rec;
	const struct perf_event_header *h = rec;
	size_t size = h->size;
	const uint8_t *q = p + sizeof(*h), *end;
	size_t body;

	if (size < sizeof(*h))
		return PDEC_BAD;
	if (h->type == PERF_RECORD_SAMPLE)
		return pdec_decode_sample(d, p, size, out);
	if (!pdec_delivered_type(h->type))
		return pdec_skipped_or_unknown(h->type);
	memset(out, 0, sizeof(*out));
	if (size < sizeof(*h) + d->trailer_size)
		return PDEC_BAD;
	end = p + size - d->trailer_size; /* body is [q, end) */
	body = (size_t)(end - q);
	if (d->trailer_type & PERF_SAMPLE_TIME)
		out->time = pdec_ld64(end + d->trailer_time);
	if (d->trailer_type & PERF_SAMPLE_CPU)
		out->cpu = pdec_ld32(end + d->trailer_cpu);

	switch (h->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		size_t fixed = h->type == PERF_RECORD_MMAP ? 32 : 64;
		const uint8_t *nul;

		if (body < fixed)
			return PDEC_BAD;
		nul = memchr(q + fixed, 0, (size_t)(end - (q + fixed)));
		if (!nul)
			return PDEC_BAD;
		out->type = OP_REC_MMAP;
		out->mmap.pid = pdec_ld32(q);
		out->mmap.tid = pdec_ld32(q + 4);
		out->mmap.start = pdec_ld64(q + 8);
		out->mmap.len = pdec_ld64(q + 16);
		out->mmap.pgoff = pdec_ld64(q + 24);
		out->mmap.cpumode = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
		if (h->type == PERF_RECORD_MMAP2) {
			/* q+32: maj/min/ino/ino_gen or build-id: not used */
			out->mmap.prot = pdec_ld32(q + 56);
			out->mmap.flags = pdec_ld32(q + 60);
		}
		if (out->mmap.prot)
			out->mmap.exec = out->mmap.prot & PROT_EXEC;
		else
			out->mmap.exec = !(h->misc & PERF_RECORD_MISC_MMAP_DATA);
		out->mmap.filename = (const char *)(q + fixed);
		out->mmap.filename_len = (uint32_t)(nul - (q + fixed)); /* < header.size */
		return PDEC_OK;
	}
	case PERF_RECORD_COMM:
		if (body < 8 || !pdec_has_nul(q + 8, end))
			return PDEC_BAD;
		out->type = OP_REC_COMM;
		out->comm.pid = pdec_ld32(q);
		out->comm.tid = pdec_ld32(q + 4);
		out->comm.exec = h->misc & PERF_RECORD_MISC_COMM_EXEC;
		out->comm.comm = (const char *)(q + 8);
		return PDEC_OK;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (body < 24)
			return PDEC_BAD;
		out->type = h->type == PERF_RECORD_FORK ? OP_REC_FORK : OP_REC_EXIT;
		out->task.pid = pdec_ld32(q);
		out->task.ppid = pdec_ld32(q + 4);
		out->task.tid = pdec_ld32(q + 8);
		out->task.ptid = pdec_ld32(q + 12);
		if (!(d->trailer_type & PERF_SAMPLE_TIME))
			out->time = pdec_ld64(q + 16);
		return PDEC_OK;
	case PERF_RECORD_LOST:
		if (body < 16)
			return PDEC_BAD;
		out->type = OP_REC_LOST;
		out->lost.id = pdec_ld64(q);
		out->lost.lost = pdec_ld64(q + 8);
		out->lost.kind = OP_LOST_RECORDS;
		return PDEC_OK;
	case PERF_RECORD_LOST_SAMPLES:
		if (body < 8)
			return PDEC_BAD;
		out->type = OP_REC_LOST;
		if (d->trailer_type & PERF_SAMPLE_IDENTIFIER)
			out->lost.id = pdec_ld64(end + d->trailer_size - 8);
		out->lost.lost = pdec_ld64(q);
		out->lost.kind = OP_LOST_SAMPLES;
		return PDEC_OK;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		if (body < 24)
			return PDEC_BAD;
		out->type = h->type == PERF_RECORD_THROTTLE ? OP_REC_THROTTLE : OP_REC_UNTHROTTLE;
		if (!(d->trailer_type & PERF_SAMPLE_TIME))
			out->time = pdec_ld64(q);
		out->throttle.id = pdec_ld64(q + 8);
		return PDEC_OK;
	case PERF_RECORD_KSYMBOL:
		if (body < 16 || !pdec_has_nul(q + 16, end))
			return PDEC_BAD;
		out->type = OP_REC_KSYMBOL;
		out->ksym.addr = pdec_ld64(q);
		out->ksym.len = pdec_ld32(q + 8);
		out->ksym.ktype = pdec_ld16(q + 12);
		out->ksym.flags = pdec_ld16(q + 14);
		out->ksym.name = (const char *)(q + 16);
		return PDEC_OK;
	}
	return PDEC_UNKNOWN_TYPE;
}
