/*
 * perf_decode.h - decoding raw perf_event records (as the kernel writes them
 * into the rings, or as a replay file holds them) into struct op_record
 * (perf_decode.c). Knows the sample_type of every event and maps event ids
 * to (counter, source).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_PERF_DECODE_H
#define OP_CORE_PERF_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/perf_event.h>

#include "record.h"

#define PDEC_MAX_EVENTS 64

/* sample_type bits every event must carry (the sample_id trailer and the
 * fixed SAMPLE prefix depend on them) */
#define PDEC_BASE_SAMPLE_TYPE                                                           \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
/* bits that change the sample_id trailer: must be equal for all events */
#define PDEC_TRAILER_BITS                                                              \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* One opened event kind (the same for all its per-CPU/per-task fds). */
struct pdec_event {
	uint64_t sample_type;
	uint64_t read_format;
	uint32_t counter; /* op_record.counter */
	uint32_t source;  /* op_perf_sample.source: 0 core, 1+i registry source i */
};

struct pdec_id {
	uint64_t id;
	uint32_t ev; /* index into events[]; UINT32_MAX = empty slot */
};

/* direct-mapped front of the id table: slot id % PDEC_ID_CACHE */
#define PDEC_ID_CACHE 256

struct pdec_idc {
	uint64_t id;
	uint32_t ev1;     /* index into events[] + 1; 0 = empty (ids[] has the answer) */
	uint32_t counter; /* events[ev1 - 1].counter */
	uint32_t source;  /* events[ev1 - 1].source */
	bool base;        /* its sample_type is exactly PDEC_BASE_SAMPLE_TYPE */
};

struct pdec {
	struct pdec_event events[PDEC_MAX_EVENTS];
	unsigned nr_events;
	uint64_t trailer_type; /* sample_type & PDEC_TRAILER_BITS of all events */
	unsigned trailer_size; /* bytes of the sample_id trailer */
	unsigned trailer_time; /* offset of time inside the trailer */
	unsigned trailer_cpu;  /* offset of {cpu,res} inside the trailer */
	struct pdec_id *ids;   /* open addressing, power-of-two capacity */
	size_t ids_cap, nr_ids;
	/* ids are small sequential numbers: most hit this without hashing */
	struct pdec_idc idc[PDEC_ID_CACHE];
};

enum pdec_status {
	PDEC_OK = 0,       /* decoded (or, for pdec_classify, worth queueing) */
	PDEC_SKIP,         /* a known record type the profiler does not use */
	PDEC_UNKNOWN_TYPE, /* header.type not known to this decoder */
	PDEC_BAD,          /* fields do not fit in header.size (or no NUL in a name) */
	PDEC_UNKNOWN_ID,   /* SAMPLE of an event id never registered */
};

void pdec_init(struct pdec *d);
void pdec_free(struct pdec *d);

/*
 * Register an event kind; returns its index or -EINVAL when its sample_type
 * lacks PDEC_BASE_SAMPLE_TYPE or its trailer bits differ from the first
 * event's, -ENOSPC when PDEC_MAX_EVENTS are registered.
 */
int pdec_add_event(struct pdec *d, const struct pdec_event *e);
/* Map kernel event id @id (PERF_EVENT_IOC_ID) to event kind @ev. -ENOMEM, -EINVAL. */
int pdec_add_id(struct pdec *d, uint64_t id, unsigned ev);
/* The event kind of @id, or NULL. */
const struct pdec_event *pdec_lookup(const struct pdec *d, uint64_t id);

/*
 * Cheap look at a whole record (@rec 8-aligned, header.size bytes valid):
 * its type class and time (for the merge). PDEC_OK for record types that are
 * delivered, PDEC_SKIP / PDEC_UNKNOWN_TYPE for others, PDEC_BAD when it is
 * too short to hold the trailer/time.
 */
enum pdec_status pdec_classify(const struct pdec *d, const void *rec, uint64_t *time);

/* offset of a SAMPLE's time: IDENTIFIER, IP and TID come first (PDEC_BASE_SAMPLE_TYPE) */
#define PDEC_SAMPLE_TIME_OFF 32

/* pdec_classify with the SAMPLE case inline (the hot path of the merge) */
static inline enum pdec_status pdec_classify_fast(const struct pdec *d, const void *rec,
						  uint64_t *time)
{
	const struct perf_event_header *h = rec;

	if (h->type == PERF_RECORD_SAMPLE && h->size >= PDEC_SAMPLE_TIME_OFF + 8) {
		memcpy(time, (const uint8_t *)rec + PDEC_SAMPLE_TIME_OFF, sizeof(*time));
		return PDEC_OK;
	}
	return pdec_classify(d, rec, time);
}

/*
 * Decode @rec into @out. Pointers in @out (filename, comm, callchain, raw,
 * name) point into @rec. No allocation. On PDEC_OK every field of the
 * record's type is set (absent ones 0/NULL); other union members and
 * padding are left as they were.
 */
enum pdec_status pdec_decode(const struct pdec *d, const void *rec, struct op_record *out);

/* bytes of a SAMPLE of PDEC_BASE_SAMPLE_TYPE: header, IDENTIFIER IP TID TIME CPU PERIOD */
#define PDEC_BASE_SAMPLE_SIZE (8 + 6 * 8)

#define PDEC_SAMPLE_AT(field, off)                                      \
	_Static_assert(offsetof(struct op_perf_sample, field) == (off), \
		       "op_perf_sample." #field " is not where pdec_decode_fast copies it")
PDEC_SAMPLE_AT(id, 8);
PDEC_SAMPLE_AT(ip, 16);
PDEC_SAMPLE_AT(pid, 24);
PDEC_SAMPLE_AT(tid, 28);
PDEC_SAMPLE_AT(time, 32);
PDEC_SAMPLE_AT(cpu, 40);
PDEC_SAMPLE_AT(source, 44);
PDEC_SAMPLE_AT(period, 48);
PDEC_SAMPLE_AT(addr, 56);
#undef PDEC_SAMPLE_AT

/*
 * pdec_decode with the common case inline: a SAMPLE of an event whose
 * sample_type is exactly PDEC_BASE_SAMPLE_TYPE (fixed offsets).
 */
static inline enum pdec_status pdec_decode_fast(const struct pdec *d, const void *rec,
						struct op_record *out)
{
	const uint8_t *p = rec;
	const struct perf_event_header *h = rec;
	const struct pdec_idc *c;
	struct op_perf_sample *s = &out->sample;
	uint64_t id;

	if (h->type != PERF_RECORD_SAMPLE || h->size < PDEC_BASE_SAMPLE_SIZE)
		return pdec_decode(d, rec, out);
	memcpy(&id, p + 8, 8);
	c = &d->idc[id % PDEC_ID_CACHE];
	if (!c->base || c->id != id)
		return pdec_decode(d, rec, out);
	out->type = OP_REC_SAMPLE;
	out->counter = c->counter;
	s->size = sizeof(*s);
	s->misc = h->misc;
	s->cpumode = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	/* id ip pid tid time cpu (res) period: the record's layout (asserted below) */
	memcpy(&s->id, p + 8, PDEC_BASE_SAMPLE_SIZE - 8);
	s->source = c->source;
	memset(&s->addr, 0, sizeof(*s) - offsetof(struct op_perf_sample, addr));
	out->time = s->time;
	out->cpu = s->cpu;
	return PDEC_OK;
}

#endif /* OP_CORE_PERF_DECODE_H */
