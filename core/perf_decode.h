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

#include <linux/perf_event.h>

#include "record.h"

#define PDEC_MAX_EVENTS 64

/* sample_type bits every event must carry (the sample_id trailer and the
 * fixed SAMPLE prefix depend on them) */
#define PDEC_BASE_SAMPLE_TYPE                                                      \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)
/* bits that change the sample_id trailer: must be equal for all events */
#define PDEC_TRAILER_BITS                                                          \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |  \
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
	uint32_t ev;  /* index into events[]; UINT32_MAX = empty slot */
};

struct pdec {
	struct pdec_event events[PDEC_MAX_EVENTS];
	unsigned nr_events;
	uint64_t trailer_type;  /* sample_type & PDEC_TRAILER_BITS of all events */
	unsigned trailer_size;  /* bytes of the sample_id trailer */
	unsigned trailer_time;  /* offset of time inside the trailer */
	unsigned trailer_cpu;   /* offset of {cpu,res} inside the trailer */
	struct pdec_id *ids;    /* open addressing, power-of-two capacity */
	size_t ids_cap, nr_ids;
};

enum pdec_status {
	PDEC_OK = 0,          /* decoded (or, for pdec_classify, worth queueing) */
	PDEC_SKIP,            /* a known record type the profiler does not use */
	PDEC_UNKNOWN_TYPE,    /* header.type not known to this decoder */
	PDEC_BAD,             /* fields do not fit in header.size (or no NUL in a name) */
	PDEC_UNKNOWN_ID,      /* SAMPLE of an event id never registered */
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

/*
 * Decode @rec into @out. Pointers in @out (filename, comm, callchain, raw,
 * name) point into @rec. No allocation.
 */
enum pdec_status pdec_decode(const struct pdec *d, const void *rec, struct op_record *out);

#endif /* OP_CORE_PERF_DECODE_H */
