/*
 * perf.c - the sample path: open perf events per CPU (system-wide, launched
 * command, or attached pids), read the rings, merge their records in time
 * order through a bounded queue and deliver them decoded; record and replay
 * the raw stream; synthesize already-running processes at start.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "ext.h"
#include "options.h"
#include "perf.h"
#include "perf_queue.h"
#include "proc_synth.h"
#include "replay.h"
#include "ring.h"

#define PERF_DEFAULT_RING_PAGES 128
#define PERF_DEFAULT_DRAIN_MS 100
#define PERF_DEFAULT_SLACK_NS 10000000ll
#define PERF_MAX_RINGS 1024
#define PERF_MAX_CPUS 1024

/* epoll tags beyond ring indices */
#define TAG_PIDFD 0xfffff000u /* + index into pidfds[] */
#define PERF_MAX_PIDFDS (OP_MAX_PIDS + 1)
#define TAG_WATCH 0xffffff02u

struct perf_ring {
	struct ring r;
	void *base;          /* mmap, or a caller's fake ring */
	size_t map_len;      /* 0: not ours to unmap */
	int fd;              /* owner fd (epoll), -1 for fake rings */
	bool in_epoll;
	bool got;            /* queued a record in this round */
	uint64_t last_time;  /* time of the last record queued this round */
};

/* what a descriptor's event writes, so its PERF_FORMAT_LOST count says what was lost */
enum perf_fd_role {
	PERF_FD_SAMPLES,   /* samples only */
	PERF_FD_SIDEBAND,  /* the side-band dummy: mmap/comm/fork/exit/ksymbol only */
	PERF_FD_BOTH,      /* samples and side-band (no dummy): lost records of either kind */
};

struct perf_fd {
	int fd;
	int ring;
	enum perf_fd_role role;
	uint64_t lost_seen;  /* its PERF_FORMAT_LOST count at the last checkpoint */
};

struct perf_session {
	struct perf_config cfg;
	struct pdec dec;
	struct pq q;
	bool q_ready;
	size_t q_bytes, q_entries;
	struct perf_stats st;
	uint8_t *scratch;            /* RING_MAX_RECORD, for wrapped records */

	struct perf_ring *rings;
	size_t nr_rings, cap_rings;
	struct perf_fd *fds;
	size_t nr_fds, cap_fds;
	int epfd;

	struct replay_writer *rec;
	struct replay_reader rd;
	bool replaying;

	bool clock_ok;               /* perf time is comparable with cfg.clock */
	bool fmt_lost;               /* read_format has PERF_FORMAT_LOST */
	bool sb_event;               /* side-band records come from a dummy event of their own */
	bool lost_split;             /* replay: REPLAY_LOST chunks carry the exact parts */
	uint64_t slack;
	uint64_t last_delivered;
	bool stopped;

	pid_t child;
	int child_go;                /* write end of the launch pipe */
	int pidfds[PERF_MAX_PIDFDS]; /* launched command / --pid targets */
	size_t nr_pidfds;
	size_t targets_alive;        /* pidfds not yet readable */
	bool child_exited;
	int child_status;

	uint8_t *synth_buf;
	size_t synth_len, synth_cap;
	char err[512];
};

static void plog(struct perf_session *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void plog(struct perf_session *s, const char *fmt, ...)
{
	FILE *f = s->cfg.log ? s->cfg.log : stderr;
	va_list ap;

	va_start(ap, fmt);
	fputs("oprofiled: ", f);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	va_end(ap);
}

static uint64_t mono_clock(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* delivery                                                            */
/* ------------------------------------------------------------------ */

static void count_undelivered(struct perf_session *s, enum pdec_status st)
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

/* per-type counters (deliver_raw counts samples itself) */
static void count_sideband(struct perf_session *s, const struct op_record *r)
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

static inline __attribute__((always_inline)) void deliver_one(struct perf_session *s,
								const void *rec)
{
	struct op_record r;
	enum pdec_status st = pdec_decode_fast(&s->dec, rec, &r);

	if (__builtin_expect(st != PDEC_OK, 0)) {
		count_undelivered(s, st);
		return;
	}
	if (__builtin_expect(r.type == OP_REC_SAMPLE, 1)) {
		s->st.samples++;
	} else {
		count_sideband(s, &r);
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
static void deliver_lost(struct perf_session *s, enum op_lost_kind kind, uint64_t n)
{
	struct op_record r = { .type = OP_REC_LOST, .time = s->last_delivered };

	if (!n)
		return;
	r.lost.lost = n;
	r.lost.kind = kind;
	if (s->cfg.deliver && s->cfg.deliver(s->cfg.arg, &r) < 0)
		s->st.deliver_errors++;
}

/* the parts of a REPLAY_LOST payload, and of perf_stats' exact counts */
enum { LOST_SAMPLES, LOST_SIDEBAND, LOST_EITHER, LOST_PARTS };

static void deliver_lost_parts(struct perf_session *s, const uint64_t d[LOST_PARTS])
{
	deliver_lost(s, OP_LOST_SAMPLES, d[LOST_SAMPLES]);
	deliver_lost(s, OP_LOST_SIDEBAND, d[LOST_SIDEBAND]);
	deliver_lost(s, OP_LOST_RECORDS, d[LOST_EITHER]);
	s->st.lost_kernel_samples += d[LOST_SAMPLES];
	s->st.lost_kernel_sideband += d[LOST_SIDEBAND];
}

/* pq_deliver_fn for forced flushes */
static void deliver_raw(void *arg, const void *rec, uint64_t time)
{
	(void)time;
	deliver_one(arg, rec);
}

/* Deliver the queued records with time <= @wm, in order; returns how many. */
static size_t deliver_to(struct perf_session *s, uint64_t wm)
{
	size_t nr, n = 0;
	const struct pq_entry *e;

	if (!s->q.nr)
		return 0;
	e = pq_sorted(&s->q, &nr);
	while (n < nr && e[n].time <= wm)
		deliver_one(s, e[n++].rec);
	pq_consume(&s->q, n);
	return n;
}

static int queue_ready(struct perf_session *s)
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
 * The hot loop of enqueue_span: whole SAMPLE records lying in one part of
 * @sp (before or after the ring's end), queued by reference while entry slots last (the queue's
 * fields stay in registers). Stops before the first record that needs more
 * care (another type, a size only ring_span_next can judge, a full queue).
 * Returns false when it queued nothing; else *last is the last time queued.
 */
static bool enqueue_samples(struct pq *q, struct ring_span *sp, uint64_t *last)
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
static void enqueue_span(struct perf_session *s, struct ring_span *sp, bool copy,
			 struct perf_ring *pr)
{
	struct pq *q = &s->q;
	uint64_t t, last = 0;
	bool got = false;

	for (;;) {
		const struct perf_event_header *h;
		const void *rec;
		bool wrapped = false;

		if (!copy && enqueue_samples(q, sp, &last))
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

				s->st.queue_forced += pq_flush(q, UINT64_MAX, half, deliver_raw, s);
			}
			pq_push(q, rec, h->size, t);
		} else {
			while (!pq_fits_ref(q)) {
				size_t half = q->nr / 2 ? q->nr / 2 : 1;

				s->st.queue_forced += pq_flush(q, UINT64_MAX, half, deliver_raw, s);
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

static void record_chunk(struct perf_session *s, uint32_t type, uint64_t a, uint64_t b,
			 const void *p1, size_t n1, const void *p2, size_t n2)
{
	if (!s->rec)
		return;
	if (replay_write(s->rec, type, a, b, p1, n1, p2, n2)) {
		plog(s, "record file: write failed (%s); recording stopped, profiling goes on",
		     strerror(-replay_write(s->rec, type, a, b, NULL, 0, NULL, 0)));
		replay_writer_close(s->rec);
		s->rec = NULL;
	}
}

static void flush_to(struct perf_session *s, uint64_t wm)
{
	if (deliver_to(s, wm))
		record_chunk(s, REPLAY_ROUND, wm, 0, NULL, 0, NULL, 0);
}

int perf_round(struct perf_session *s)
{
	uint64_t wm = UINT64_MAX;
	size_t i;
	int err = queue_ready(s);

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
			record_chunk(s, REPLAY_DATA, i, n, sp.p1, sp.n1, sp.p2, sp.n2);
			/* by reference: the ring is released only after pq_detach below */
			enqueue_span(s, &sp, false, pr);
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
	flush_to(s, wm);
	/* what stays queued moves out of the rings before the kernel may reuse them */
	s->st.queue_forced += pq_detach(&s->q, deliver_raw, s);
	for (i = 0; i < s->nr_rings; i++)
		ring_end(&s->rings[i].r);
	s->st.rounds++;
	return 0;
}

int perf_add_synth(struct perf_session *s, const void *recs, size_t len)
{
	struct ring_span sp = { .p1 = recs, .n1 = len };
	int err = queue_ready(s);

	if (err)
		return err;
	record_chunk(s, REPLAY_DATA, REPLAY_RING_SYNTH, len, recs, len, NULL, 0);
	enqueue_span(s, &sp, true, NULL);
	return 0;
}

/* ------------------------------------------------------------------ */
/* session basics                                                      */
/* ------------------------------------------------------------------ */

int perf_new(struct perf_session **out, const struct perf_config *cfg, char *err,
	     size_t err_len)
{
	struct perf_session *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s || !(s->scratch = aligned_alloc(8, RING_MAX_RECORD))) {
		free(s);
		snprintf(err, err_len, "sample path: out of memory");
		return -ENOMEM;
	}
	s->cfg = *cfg;
	if (!s->cfg.clock) {
		s->cfg.clock = mono_clock;
		s->cfg.clock_arg = NULL;
	}
	if (!s->cfg.drain_ms)
		s->cfg.drain_ms = PERF_DEFAULT_DRAIN_MS;
	s->slack = cfg->slack_ns > 0 ? (uint64_t)cfg->slack_ns :
		   cfg->slack_ns == 0 ? PERF_DEFAULT_SLACK_NS : 0;
	s->clock_ok = true;
	s->epfd = -1;
	s->child_go = -1;
	pdec_init(&s->dec);
	*out = s;
	return 0;
}

int perf_add_event(struct perf_session *s, const struct pdec_event *e, const uint64_t *ids,
		   size_t nr_ids)
{
	int idx = pdec_add_event(&s->dec, e);
	size_t i;

	if (idx < 0)
		return idx;
	for (i = 0; i < nr_ids; i++) {
		int err = pdec_add_id(&s->dec, ids[i], (unsigned)idx);

		if (err)
			return err;
	}
	return idx;
}

static int add_ring(struct perf_session *s, void *base, size_t map_len, int fd,
		    size_t page_size, size_t data_size)
{
	struct perf_ring *pr;
	int err;

	if (s->q_ready)
		return -EBUSY; /* the queue is sized from the rings */
	if (s->nr_rings == s->cap_rings) {
		size_t cap = s->cap_rings ? s->cap_rings * 2 : 8;
		struct perf_ring *n = realloc(s->rings, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->rings = n;
		s->cap_rings = cap;
	}
	pr = &s->rings[s->nr_rings];
	memset(pr, 0, sizeof(*pr));
	err = ring_attach(&pr->r, base, page_size, data_size);
	if (err)
		return err;
	pr->base = base;
	pr->map_len = map_len;
	pr->fd = fd;
	s->st.rings++;
	return (int)s->nr_rings++;
}

int perf_attach_ring(struct perf_session *s, void *base, size_t page_size, size_t data_size)
{
	return add_ring(s, base, 0, -1, page_size, data_size);
}

const struct pdec *perf_decoder(const struct perf_session *s)
{
	return &s->dec;
}

const struct perf_stats *perf_get_stats(const struct perf_session *s)
{
	return &s->st;
}

pid_t perf_child_pid(const struct perf_session *s)
{
	return s->child;
}

bool perf_child_status(const struct perf_session *s, int *wstatus)
{
	if (!s->child_exited)
		return false;
	if (wstatus)
		*wstatus = s->child_status;
	return true;
}

static void write_events(struct perf_session *s)
{
	size_t i;

	for (i = 0; i < s->dec.nr_events; i++) {
		struct replay_event_payload p = {
			.sample_type = s->dec.events[i].sample_type,
			.read_format = s->dec.events[i].read_format,
			.counter = s->dec.events[i].counter,
			.source = s->dec.events[i].source,
		};

		record_chunk(s, REPLAY_EVENT, i, 0, &p, sizeof(p), NULL, 0);
	}
	for (i = 0; i < s->dec.ids_cap; i++) {
		uint64_t pair[2] = { s->dec.ids[i].id, s->dec.ids[i].ev };

		if (s->dec.ids[i].ev != UINT32_MAX)
			record_chunk(s, REPLAY_IDS, 0, 0, pair, sizeof(pair), NULL, 0);
	}
}

int perf_record_to(struct perf_session *s, const char *path, unsigned flags, char *err,
		   size_t err_len)
{
	int ret = queue_ready(s);

	if (ret) {
		snprintf(err, err_len, "sample path: merge queue: %s", strerror(-ret));
		return ret;
	}
	ret = replay_writer_create(&s->rec, path, flags, s->q_bytes, s->q_entries, err, err_len);
	if (ret)
		return ret;
	write_events(s);
	return 0;
}

/* ------------------------------------------------------------------ */
/* replay                                                              */
/* ------------------------------------------------------------------ */

static int replay_open(struct perf_session *s, const char *path, char *err, size_t err_len)
{
	int ret = replay_reader_open(&s->rd, path, err, err_len);

	if (ret)
		return ret;
	/* a recording's queue has bytes / 32 entries (queue_ready): more is a corrupt file
	 * asking for gigabytes of index (found by fuzz_perf) */
	if (s->rd.hdr.queue_bytes < (1u << 20) || s->rd.hdr.queue_bytes > (256u << 20) ||
	    s->rd.hdr.queue_entries < 16 || s->rd.hdr.queue_entries > s->rd.hdr.queue_bytes / 32) {
		snprintf(err, err_len,
			 "replay file %s: offset 16: merge queue geometry %" PRIu64 " bytes / %" PRIu64
			 " entries is impossible - the file is corrupt",
			 path, s->rd.hdr.queue_bytes, s->rd.hdr.queue_entries);
		replay_reader_close(&s->rd);
		return -EINVAL;
	}
	s->q_bytes = s->rd.hdr.queue_bytes;
	s->q_entries = s->rd.hdr.queue_entries;
	ret = queue_ready(s);
	if (ret) {
		snprintf(err, err_len, "replay: merge queue: %s", strerror(-ret));
		replay_reader_close(&s->rd);
		return ret;
	}
	s->replaying = true;
	return 0;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int replay_deliver_all(struct perf_session *s);

/*
 * Deliver the whole file, timing it (the pipeline's throughput, in the
 * log). 0, or -EINVAL with s->err set.
 */
static int replay_run(struct perf_session *s)
{
	uint64_t t0 = thread_cpu_ns();
	int ret = replay_deliver_all(s);

	s->st.replay_cpu_ns = thread_cpu_ns() - t0;
	return ret;
}

static int replay_deliver_all(struct perf_session *s)
{
	struct replay_chunk c;
	const uint8_t *p;
	char *err = s->err;
	size_t el = sizeof(s->err);
	int ret;

	while ((ret = replay_next(&s->rd, &c, &p, err, el)) == 1) {
		size_t at = s->rd.off - sizeof(c) - ((c.len + 7) & ~7ull);

		switch (c.type) {
		case REPLAY_EVENT: {
			struct replay_event_payload ep;
			struct pdec_event e;
			int idx;

			if (c.len < sizeof(ep)) {
				snprintf(err, el, "replay file %s: offset %zu: event chunk of %" PRIu64
					 " bytes, expected %zu", s->rd.path, at, c.len, sizeof(ep));
				return -EINVAL;
			}
			memcpy(&ep, p, sizeof(ep));
			/* the recording read exact lost counts: LOST records are news only */
			if (ep.read_format & PERF_FORMAT_LOST)
				s->fmt_lost = true;
			e = (struct pdec_event){ .sample_type = ep.sample_type,
						 .read_format = ep.read_format,
						 .counter = ep.counter, .source = ep.source };
			idx = pdec_add_event(&s->dec, &e);
			if (idx < 0 || (uint64_t)idx != c.a) {
				snprintf(err, el,
					 "replay file %s: offset %zu: event %" PRIu64
					 " (sample_type %#" PRIx64 ") is inconsistent with the events before it",
					 s->rd.path, at, c.a, ep.sample_type);
				return -EINVAL;
			}
			break;
		}
		case REPLAY_IDS: {
			size_t i;

			for (i = 0; i + 16 <= c.len; i += 16) {
				uint64_t pair[2];

				memcpy(pair, p + i, 16);
				if (pair[1] >= s->dec.nr_events ||
				    pdec_add_id(&s->dec, pair[0], (unsigned)pair[1])) {
					snprintf(err, el,
						 "replay file %s: offset %zu: id %" PRIu64
						 " maps to event %" PRIu64 ", only %u events defined",
						 s->rd.path, at, pair[0], pair[1], s->dec.nr_events);
					return -EINVAL;
				}
			}
			break;
		}
		case REPLAY_DATA: {
			struct ring_span sp = { .p1 = p, .n1 = c.len };

			if (!s->dec.nr_events) {
				snprintf(err, el, "replay file %s: offset %zu: data before any event description",
					 s->rd.path, at);
				return -EINVAL;
			}
			s->st.bytes += c.len;
			/* by reference: the mapping stays until the final flush */
			enqueue_span(s, &sp, false, NULL);
			break;
		}
		case REPLAY_ROUND:
			deliver_to(s, c.a);
			s->st.rounds++;
			if (s->cfg.round_end)
				s->cfg.round_end(s->cfg.round_arg);
			break;
		case REPLAY_LOST:
			if (c.len >= LOST_PARTS * sizeof(uint64_t)) {
				uint64_t d[LOST_PARTS];

				memcpy(d, p, sizeof(d));
				deliver_lost_parts(s, d);
				s->lost_split = true;
			} else if (!s->lost_split && c.a > s->st.lost_kernel) {
				/* an older recording: one total at the end, kind unknown */
				deliver_lost(s, OP_LOST_RECORDS, c.a - s->st.lost_kernel);
			}
			s->st.lost_kernel = c.a;
			break;
		}
	}
	if (ret < 0)
		return ret;
	deliver_to(s, UINT64_MAX);
	return 0;
}

int perf_replay_file(struct perf_session *s, const char *path, char *err, size_t err_len)
{
	int ret = replay_open(s, path, err, err_len);

	if (ret)
		return ret;
	ret = replay_run(s);
	if (ret)
		snprintf(err, err_len, "%s", s->err);
	replay_reader_close(&s->rd);
	s->replaying = false;
	s->stopped = true;
	return ret;
}

/* ------------------------------------------------------------------ */
/* opening events                                                      */
/* ------------------------------------------------------------------ */

struct open_plan {
	struct op_perf_attr attr[PDEC_MAX_EVENTS];
	uint64_t sample_type[PDEC_MAX_EVENTS];
	uint32_t max_stack;
	unsigned nr;
	int cpus[PERF_MAX_CPUS];
	int nr_cpus;
	size_t pages;
	size_t page_size;
	enum op_mode mode;
	int *cpu_ring;   /* ring index per cpu slot, -1 before the first fd */
};

static int online_cpus(int *cpus, int max)
{
	char buf[4096], *p = buf;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int n = 0;

	if (f && fgets(buf, sizeof(buf), f)) {
		while (*p && *p != '\n') {
			char *e;
			long a = strtol(p, &e, 10), b = a;

			if (e == p)
				break;
			if (*e == '-')
				b = strtol(e + 1, &e, 10);
			for (; a <= b && n < max; a++)
				cpus[n++] = (int)a;
			p = *e == ',' ? e + 1 : e;
		}
	}
	if (f)
		fclose(f);
	if (n == 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		for (n = 0; n < c && n < max; n++)
			cpus[n] = n;
	}
	return n;
}

static void fill_attr(struct perf_session *s, const struct open_plan *pl, unsigned e,
		      struct perf_event_attr *a)
{
	const struct op_perf_attr *o = &pl->attr[e];

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = o->type;
	a->config = o->config;
	a->config1 = o->config1;
	a->config2 = o->config2;
	if (o->freq) {
		a->freq = 1;
		a->sample_freq = o->sample_period;
	} else {
		a->sample_period = o->sample_period;
	}
	a->exclude_user = o->exclude_user;
	a->exclude_kernel = o->exclude_kernel;
	a->exclude_hv = o->exclude_hv;
	a->precise_ip = o->precise_ip & 3;
	a->sample_type = pl->sample_type[e];
	a->read_format = PERF_FORMAT_ID | (s->fmt_lost ? PERF_FORMAT_LOST : 0);
	a->disabled = 1;
	a->inherit = pl->mode != OP_MODE_SYSTEM;
	a->enable_on_exec = pl->mode == OP_MODE_LAUNCH;
	a->sample_id_all = 1;
	if (s->clock_ok) {
		a->use_clockid = 1;
		a->clockid = CLOCK_MONOTONIC;
	}
	if ((a->sample_type & PERF_SAMPLE_CALLCHAIN) && pl->max_stack)
		a->sample_max_stack = (uint16_t)(pl->max_stack > 65535 ? 65535 : pl->max_stack);
}

/*
 * The side-band event: a software dummy that never samples and writes the
 * mmap/comm/fork/exit/ksymbol records into the cpu's ring, so that each
 * event's PERF_FORMAT_LOST count (kept per event by the kernel) tells
 * dropped samples from dropped side-band records. Same trailer layout,
 * read format, clock, inheritance and exclusions as the first event.
 */
static void fill_sideband_attr(struct perf_session *s, const struct open_plan *pl,
			       struct perf_event_attr *a)
{
	fill_attr(s, pl, 0, a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->config1 = 0;
	a->config2 = 0;
	a->freq = 0;
	a->sample_period = 0;
	a->precise_ip = 0;
}

static int sys_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int add_fd(struct perf_session *s, int fd, int ring, enum perf_fd_role role)
{
	if (s->nr_fds == s->cap_fds) {
		size_t cap = s->cap_fds ? s->cap_fds * 2 : 64;
		struct perf_fd *n = realloc(s->fds, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->fds = n;
		s->cap_fds = cap;
	}
	s->fds[s->nr_fds].fd = fd;
	s->fds[s->nr_fds].ring = ring;
	s->fds[s->nr_fds].role = role;
	s->fds[s->nr_fds].lost_seen = 0;
	s->nr_fds++;
	s->st.fds++;
	return 0;
}

int perf_paranoid(void)
{
	char v[32];
	int level = PERF_PARANOID_UNKNOWN;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");

	if (f) {
		if (fgets(v, sizeof(v), f))
			level = atoi(v);
		fclose(f);
	}
	return level;
}

static const char *paranoid_hint(char *buf, size_t len)
{
	char v[32] = "?";
	int level = perf_paranoid();

	if (level != PERF_PARANOID_UNKNOWN)
		snprintf(v, sizeof(v), "%d", level);
	snprintf(buf, len,
		 "perf_event_paranoid is %s; run oprofiled as root (CAP_PERFMON), lower /proc/sys/kernel/perf_event_paranoid, or (paranoid 2) profile one command in user mode only (EVENT:count:um:0:1)",
		 v);
	return buf;
}

/* Open every event on every cpu for task @pid (-1: all tasks). */
static int open_target(struct perf_session *s, struct open_plan *pl, pid_t pid,
		       bool may_vanish, char *err, size_t err_len)
{
	int c;
	unsigned k;

	for (c = 0; c < pl->nr_cpus; c++) {
		/* k 0 is the side-band dummy (if used), opened first: it owns the ring */
		for (k = s->sb_event ? 0 : 1; k <= pl->nr; k++) {
			struct perf_event_attr a;
			bool owner = pl->cpu_ring[c] < 0, sb = k == 0;
			unsigned e = sb ? 0 : k - 1;
			int fd, ring, ret;
			uint64_t id;

			if (sb)
				fill_sideband_attr(s, pl, &a);
			else
				fill_attr(s, pl, e, &a);
			/* one side-band event per (task, cpu) */
			if (sb || (e == 0 && !s->sb_event)) {
				a.mmap = 1;
				a.mmap2 = 1;
				a.comm = 1;
				a.comm_exec = 1;
				a.task = 1;
				a.ksymbol = 1;
			}
			if (owner) {
				a.watermark = 1;
				a.wakeup_watermark = (uint32_t)(pl->pages * pl->page_size / 2);
			}
			fd = sys_perf_event_open(&a, pid, pl->cpus[c]);
			if (fd < 0 && errno == EINVAL && (s->fmt_lost || s->clock_ok) &&
			    s->nr_fds == 0) {
				/*
				 * Only the very first open probes the kernel: < 6.0 has
				 * no PERF_FORMAT_LOST, very old ones no clockid. A
				 * downgrade is kept only if it makes the open work.
				 */
				struct perf_event_attr b = a;

				b.read_format &= ~(uint64_t)PERF_FORMAT_LOST;
				fd = sys_perf_event_open(&b, pid, pl->cpus[c]);
				if (fd >= 0) {
					s->fmt_lost = false;
					plog(s, "perf_event_open: PERF_FORMAT_LOST refused (kernel < 6.0?): lost counts come from LOST records only");
				} else if (errno == EINVAL) {
					b.use_clockid = 0;
					b.clockid = 0;
					fd = sys_perf_event_open(&b, pid, pl->cpus[c]);
					if (fd >= 0) {
						s->fmt_lost = false;
						s->clock_ok = false;
						plog(s, "perf_event_open: PERF_FORMAT_LOST and clockid refused (old kernel): merge watermark uses ring times only");
					} else {
						errno = EINVAL;
					}
				}
				if (fd >= 0)
					a = b;
			}
			if (fd < 0 && sb && s->nr_fds == 0 &&
			    (errno == EINVAL || errno == ENOENT || errno == EOPNOTSUPP)) {
				/* no dummy event (old kernel): the first event carries side-band */
				plog(s, "perf_event_open: no dummy software event (%s): side-band records come with the samples, their losses cannot be told apart",
				     strerror(errno));
				s->sb_event = false;
				continue;
			}
			if (fd < 0) {
				char hint[300], who[32];
				int en = errno;

				if (en == ESRCH && may_vanish)
					return -ESRCH;
				if (pid < 0)
					snprintf(who, sizeof(who), "all tasks");
				else
					snprintf(who, sizeof(who), "pid %d", (int)pid);
				snprintf(err, err_len,
					 "perf_event_open(type %u config %#llx, %s, cpu %d) failed: %s%s%s",
					 a.type, (unsigned long long)a.config, who, pl->cpus[c],
					 strerror(en),
					 en == EACCES || en == EPERM ? " - " : "",
					 en == EACCES || en == EPERM ? paranoid_hint(hint, sizeof(hint)) :
					 en == ESRCH ? " - the process does not exist (any more)" :
					 en == ENOENT || en == EOPNOTSUPP ? " - this kernel/CPU does not offer the event" :
					 en == EMFILE ? " - one descriptor per event, CPU and thread: raise the open-files limit (ulimit -n)" :
					 "");
				return -en;
			}
			if (owner) {
				size_t len = (1 + pl->pages) * pl->page_size;
				void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

				if (m == MAP_FAILED) {
					int en = errno;

					snprintf(err, err_len,
						 "mmap of a %zu-page perf ring on cpu %d failed: %s - lower --ring-pages or raise /proc/sys/kernel/perf_event_mlock_kb",
						 pl->pages, pl->cpus[c], strerror(en));
					close(fd);
					return -en;
				}
				ring = add_ring(s, m, len, fd, pl->page_size, pl->pages * pl->page_size);
				if (ring < 0) {
					munmap(m, len);
					close(fd);
					snprintf(err, err_len, "perf ring on cpu %d: %s", pl->cpus[c],
						 strerror(-ring));
					return ring;
				}
				pl->cpu_ring[c] = ring;
			} else {
				ring = pl->cpu_ring[c];
				if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[ring].fd)) {
					int en = errno;

					snprintf(err, err_len,
						 "PERF_EVENT_IOC_SET_OUTPUT on cpu %d failed: %s",
						 pl->cpus[c], strerror(en));
					close(fd);
					return -en;
				}
			}
			ret = add_fd(s, fd, ring,
				     sb ? PERF_FD_SIDEBAND :
				     e == 0 && !s->sb_event ? PERF_FD_BOTH : PERF_FD_SAMPLES);
			if (ret) {
				close(fd);
				return ret;
			}
			if (sb) /* never samples: its id maps to no event kind */
				continue;
			if (ioctl(fd, PERF_EVENT_IOC_ID, &id)) {
				int en = errno;

				snprintf(err, err_len, "PERF_EVENT_IOC_ID failed: %s", strerror(en));
				return -en;
			}
			ret = pdec_add_id(&s->dec, id, e);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* --pid opens events x CPUs x threads descriptors: allow the hard limit */
static void raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int open_pid(struct perf_session *s, struct open_plan *pl, uint32_t pid,
		    const char *proc_root, char *err, size_t err_len)
{
	char path[512];
	struct dirent *de;
	DIR *dir;
	int ret = 0, opened = 0;

	snprintf(path, sizeof(path), "%s/%" PRIu32 "/task", proc_root, pid);
	dir = opendir(path);
	if (!dir) {
		ret = -errno;
		snprintf(err, err_len, "--pid %" PRIu32 ": cannot list %s: %s - is the pid right?",
			 pid, path, strerror(errno));
		return ret == -ENOENT ? -ESRCH : ret;
	}
	while ((de = readdir(dir))) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (*end || end == de->d_name || tid == 0)
			continue;
		ret = open_target(s, pl, (pid_t)tid, tid != pid, err, err_len);
		if (ret == -ESRCH) { /* thread exited meanwhile */
			s->st.skipped_threads++;
			ret = 0;
			continue;
		}
		if (ret)
			break;
		opened++;
	}
	closedir(dir);
	if (!ret && !opened) {
		snprintf(err, err_len, "--pid %" PRIu32 ": no thread could be attached (it exited)",
			 pid);
		ret = -ESRCH;
	}
	return ret;
}

static int launch_child(struct perf_session *s, char **argv, char *err, size_t err_len)
{
	int go[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC)) {
		snprintf(err, err_len, "launch: pipe: %s", strerror(errno));
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int en = errno;

		close(go[0]);
		close(go[1]);
		snprintf(err, err_len, "launch %s: fork: %s", argv[0], strerror(en));
		return -en;
	}
	if (pid == 0) {
		sigset_t none;
		char c;

		/* the command starts with default signal handling, whatever ours is */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		close(go[1]);
		/* wait until the events are in place */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "oprofiled: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	s->child = pid;
	s->child_go = go[1];
	return 0;
}

static int synth_emit(void *arg, const void *rec, size_t len)
{
	struct perf_session *s = arg;

	if (s->synth_len + len > s->synth_cap) {
		size_t cap = s->synth_cap ? s->synth_cap * 2 : 65536;
		uint8_t *n;

		while (cap < s->synth_len + len)
			cap *= 2;
		n = realloc(s->synth_buf, cap);
		if (!n)
			return -ENOMEM;
		s->synth_buf = n;
		s->synth_cap = cap;
	}
	memcpy(s->synth_buf + s->synth_len, rec, len);
	s->synth_len += len;
	return 0;
}

static int synthesize(struct perf_session *s, const struct op_options *o)
{
	struct psynth_stats ps = { 0 };
	struct psynth_ctx c = {
		.proc_root = o->proc_root ? o->proc_root : "/proc",
		.dec = &s->dec,
		.id = s->dec.nr_ids ? s->dec.ids[0].id : 0,
		.emit = synth_emit,
		.arg = s,
		.stats = &ps,
	};
	size_t i;
	int ret = 0;

	for (i = 0; i < s->dec.ids_cap; i++)
		if (s->dec.ids[i].ev != UINT32_MAX) {
			c.id = s->dec.ids[i].id;
			break;
		}
	if (o->mode == OP_MODE_SYSTEM) {
		ret = psynth_all(&c);
	} else {
		for (i = 0; i < o->nr_pids && !ret; i++) {
			ret = psynth_pid(&c, o->pids[i]);
			if (ret == -ESRCH)
				ret = 0;
		}
	}
	s->st.synth_procs += ps.procs;
	s->st.synth_threads += ps.threads;
	s->st.synth_maps += ps.maps;
	s->st.synth_unreadable += ps.unreadable;
	s->st.synth_skipped_maps += ps.skipped_maps;
	if (ret)
		plog(s, "start-up synthesis of %s failed part-way: %s", c.proc_root,
		     strerror(-ret));
	if (s->synth_len)
		ret = perf_add_synth(s, s->synth_buf, s->synth_len);
	free(s->synth_buf);
	s->synth_buf = NULL;
	s->synth_len = s->synth_cap = 0;
	return ret;
}

static int epoll_add(struct perf_session *s, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/*
 * Wake up when process @pid exits (pidfd, kernel >= 5.3). Without pidfds the
 * launched command is still reaped by waitpid at every round; a --pid target
 * then simply stays until the daemon is stopped.
 */
static void watch_target(struct perf_session *s, pid_t pid)
{
	long pfd;

	if (s->nr_pidfds >= PERF_MAX_PIDFDS)
		return;
	pfd = syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0)
		return;
	if (epoll_add(s, (int)pfd, TAG_PIDFD + s->nr_pidfds)) {
		close((int)pfd);
		return;
	}
	s->pidfds[s->nr_pidfds++] = (int)pfd;
	s->targets_alive++;
}

static int build_plan(struct perf_session *s, struct open_plan *pl, char *err, size_t err_len)
{
	const struct ext_registry *x = s->cfg.ext;
	uint64_t hooks_extra = 0;
	const uint64_t allowed = ~(uint64_t)(PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID);
	size_t i;

	if (x) {
		for (i = 0; i < x->nr_hooks; i++) {
			hooks_extra |= x->hooks[i].desc.sample_type_extra;
			if (x->hooks[i].desc.max_stack > pl->max_stack)
				pl->max_stack = x->hooks[i].desc.max_stack;
		}
	}
	if (pl->max_stack) {
		/* the kernel refuses (EOVERFLOW) a depth above its sysctl */
		FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "re");
		unsigned lim = 0;

		if (f) {
			if (fscanf(f, "%u", &lim) == 1 && lim && pl->max_stack > lim) {
				plog(s, "call-chain depth %u lowered to kernel.perf_event_max_stack = %u",
				     pl->max_stack, lim);
				pl->max_stack = lim;
			}
			fclose(f);
		}
	}
	if (s->cfg.nr_events + (x ? x->nr_sources : 0) > PDEC_MAX_EVENTS) {
		snprintf(err, err_len, "too many events (%zu core + %zu plugin sources, at most %d)",
			 s->cfg.nr_events, x ? x->nr_sources : 0, PDEC_MAX_EVENTS);
		return -E2BIG;
	}
	for (i = 0; i < s->cfg.nr_events; i++) {
		struct pdec_event e = {
			.sample_type = (PDEC_BASE_SAMPLE_TYPE |
					s->cfg.events[i].sample_type_extra | hooks_extra) & allowed,
			.counter = (uint32_t)i,
			.source = 0,
		};

		pl->attr[pl->nr] = s->cfg.events[i];
		pl->sample_type[pl->nr++] = e.sample_type;
	}
	for (i = 0; x && i < x->nr_sources; i++) {
		pl->attr[pl->nr] = x->sources[i].desc.attr;
		pl->sample_type[pl->nr++] =
			(PDEC_BASE_SAMPLE_TYPE | x->sources[i].desc.attr.sample_type_extra) & allowed;
	}
	if (!pl->nr) {
		snprintf(err, err_len, "sample path: no event to open (no core event and no plugin source)");
		return -EINVAL;
	}
	return 0;
}

static int register_plan_events(struct perf_session *s, const struct open_plan *pl)
{
	unsigned i;

	for (i = 0; i < pl->nr; i++) {
		struct pdec_event e = {
			.sample_type = pl->sample_type[i],
			.read_format = PERF_FORMAT_ID | (s->fmt_lost ? PERF_FORMAT_LOST : 0),
			.counter = i < s->cfg.nr_events ? i : 0,
			.source = i < s->cfg.nr_events ? 0 : (uint32_t)(i - s->cfg.nr_events + 1),
		};
		int ret = pdec_add_event(&s->dec, &e);

		if (ret < 0)
			return ret;
	}
	return 0;
}

int perf_open(struct perf_session **out, const struct perf_config *cfg, char *err,
	      size_t err_len)
{
	const struct op_options *o = cfg->opts;
	struct perf_session *s;
	struct open_plan *pl = NULL;
	const char *proc_root;
	size_t i;
	int ret;

	*out = NULL;
	if (!o) {
		snprintf(err, err_len, "sample path: no options given");
		return -EINVAL;
	}
	ret = perf_new(&s, cfg, err, err_len);
	if (ret)
		return ret;
	if (o->mode == OP_MODE_REPLAY) {
		ret = replay_open(s, o->replay_file ? o->replay_file : "", err, err_len);
		if (ret)
			goto out_free;
		*out = s;
		return 0;
	}
	proc_root = o->proc_root ? o->proc_root : "/proc";
	s->fmt_lost = true;
	s->sb_event = true;
	pl = calloc(1, sizeof(*pl));
	if (!pl) {
		ret = -ENOMEM;
		goto out_free;
	}
	pl->mode = o->mode;
	pl->page_size = (size_t)sysconf(_SC_PAGESIZE);
	pl->pages = o->ring_pages ? o->ring_pages : PERF_DEFAULT_RING_PAGES;
	if ((pl->pages & (pl->pages - 1)) || pl->pages > 65536) {
		snprintf(err, err_len, "ring pages: %zu is not a power of two between 1 and 65536",
			 pl->pages);
		ret = -EINVAL;
		goto out_free;
	}
	ret = build_plan(s, pl, err, err_len);
	if (ret)
		goto out_free;
	pl->nr_cpus = online_cpus(pl->cpus, PERF_MAX_CPUS);

	pl->cpu_ring = malloc(sizeof(int) * (size_t)pl->nr_cpus);
	if (!pl->cpu_ring) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < (size_t)pl->nr_cpus; i++)
		pl->cpu_ring[i] = -1;
	/* event kinds first (their index is the value PERF_EVENT_IOC_ID maps to) */
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		ret = -errno;
		snprintf(err, err_len, "epoll_create1: %s", strerror(errno));
		goto out_free;
	}
	/*
	 * The read_format of the event kinds depends on whether the kernel takes
	 * PERF_FORMAT_LOST, known only after the first open: register the
	 * kinds with the optimistic value and fix it after opening.
	 */
	ret = register_plan_events(s, pl);
	if (ret) {
		snprintf(err, err_len, "sample path: inconsistent event sample types");
		goto out_free;
	}
	switch (o->mode) {
	case OP_MODE_LAUNCH:
		if (!o->command || !o->command[0]) {
			snprintf(err, err_len, "launch mode: no command given (oprofiled [options] -- command args)");
			ret = -EINVAL;
			goto out_free;
		}
		ret = launch_child(s, o->command, err, err_len);
		if (!ret)
			ret = open_target(s, pl, s->child, false, err, err_len);
		break;
	case OP_MODE_PID:
		if (!o->nr_pids) {
			snprintf(err, err_len, "--pid mode: no pid given");
			ret = -EINVAL;
			goto out_free;
		}
		raise_nofile();
		for (i = 0; i < o->nr_pids && !ret; i++)
			ret = open_pid(s, pl, o->pids[i], proc_root, err, err_len);
		break;
	case OP_MODE_SYSTEM:
		ret = open_target(s, pl, -1, false, err, err_len);
		break;
	default:
		snprintf(err, err_len, "sample path: unknown mode %d", (int)o->mode);
		ret = -EINVAL;
	}
	if (ret)
		goto out_free;
	for (i = 0; i < s->dec.nr_events; i++)
		s->dec.events[i].read_format =
			PERF_FORMAT_ID | (s->fmt_lost ? PERF_FORMAT_LOST : 0);
	for (i = 0; i < s->nr_rings; i++) {
		ret = epoll_add(s, s->rings[i].fd, i);
		if (ret) {
			snprintf(err, err_len, "epoll_ctl: %s", strerror(-ret));
			goto out_free;
		}
		s->rings[i].in_epoll = true;
	}
	ret = queue_ready(s);
	if (ret) {
		snprintf(err, err_len, "sample path: merge queue of %zu bytes: %s", s->q_bytes,
			 strerror(-ret));
		goto out_free;
	}
	if (o->record_file) {
		ret = perf_record_to(s, o->record_file, o->record_overwrite ? REPLAY_OVERWRITE : 0, err,
				     err_len);
		if (ret)
			goto out_free;
	}
	if (o->mode == OP_MODE_LAUNCH) {
		/* enable_on_exec: the events start when the command execs */
		if (write(s->child_go, "g", 1) != 1) {
			ret = -errno;
			snprintf(err, err_len, "launch: cannot release the command: %s",
				 strerror(errno));
			goto out_free;
		}
		close(s->child_go);
		s->child_go = -1;
		watch_target(s, s->child);
	} else {
		/* enable first, then synthesize: nothing mapped in between is lost */
		for (i = 0; i < s->nr_fds; i++) {
			if (ioctl(s->fds[i].fd, PERF_EVENT_IOC_ENABLE, 0)) {
				ret = -errno;
				snprintf(err, err_len, "PERF_EVENT_IOC_ENABLE: %s", strerror(errno));
				goto out_free;
			}
		}
		for (i = 0; o->mode == OP_MODE_PID && i < o->nr_pids; i++)
			watch_target(s, (pid_t)o->pids[i]);
		ret = synthesize(s, o);
		if (ret) {
			snprintf(err, err_len, "start-up synthesis: %s", strerror(-ret));
			goto out_free;
		}
	}
	free(pl->cpu_ring);
	free(pl);
	*out = s;
	return 0;
out_free:
	if (pl)
		free(pl->cpu_ring);
	free(pl);
	perf_close(s);
	return ret;
}

/* ------------------------------------------------------------------ */
/* main loop, stop, close                                              */
/* ------------------------------------------------------------------ */

int perf_watch_fd(struct perf_session *s, int fd)
{
	if (s->epfd < 0) {
		s->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (s->epfd < 0)
			return -errno;
	}
	return epoll_add(s, fd, TAG_WATCH);
}

static void reap_child(struct perf_session *s)
{
	int st;

	if (s->child > 0 && !s->child_exited && waitpid(s->child, &st, WNOHANG) == s->child) {
		s->child_exited = true;
		s->child_status = st;
	}
}

int perf_poll(struct perf_session *s, int timeout_ms)
{
	struct epoll_event evs[32];
	int n, i, ret = PERF_POLL_OK, err;

	if (s->replaying) {
		err = replay_run(s);
		replay_reader_close(&s->rd);
		s->replaying = false;
		s->stopped = true;
		if (err) {
			plog(s, "%s", s->err);
			return err;
		}
		return PERF_POLL_DONE;
	}
	if (s->stopped)
		return -EINVAL;
	if (timeout_ms < 0 || (unsigned)timeout_ms > s->cfg.drain_ms)
		timeout_ms = (int)s->cfg.drain_ms;
	n = s->epfd >= 0 ? epoll_wait(s->epfd, evs, 32, timeout_ms) : 0;
	for (i = 0; i < n; i++) {
		uint64_t tag = evs[i].data.u64;

		if (tag == TAG_WATCH) {
			ret = PERF_POLL_FD;
		} else if (tag >= TAG_PIDFD && tag < TAG_PIDFD + s->nr_pidfds) {
			int *pfd = &s->pidfds[tag - TAG_PIDFD];

			/* the process exited: readable for ever, stop watching */
			if (*pfd >= 0) {
				epoll_ctl(s->epfd, EPOLL_CTL_DEL, *pfd, NULL);
				close(*pfd);
				*pfd = -1;
				s->targets_alive--;
			}
		} else if (tag < s->nr_rings && (evs[i].events & (EPOLLHUP | EPOLLERR))) {
			/* the task is gone: no more wakeups, stop polling it (no busy loop) */
			struct perf_ring *pr = &s->rings[tag];

			if (pr->in_epoll) {
				epoll_ctl(s->epfd, EPOLL_CTL_DEL, pr->fd, NULL);
				pr->in_epoll = false;
				s->st.hup++;
			}
		}
	}
	err = perf_round(s);
	if (err)
		return err;
	reap_child(s);
	if (s->child_exited && ret == PERF_POLL_OK)
		ret = PERF_POLL_CHILD_EXIT;
	/* --pid: every attached process is gone */
	if (!s->child && s->nr_pidfds && !s->targets_alive && ret == PERF_POLL_OK)
		ret = PERF_POLL_CHILD_EXIT;
	return ret;
}

int perf_lost_checkpoint(struct perf_session *s)
{
	uint64_t d[LOST_PARTS] = { 0 };
	size_t i;

	if (!s || s->replaying || s->stopped || !s->fmt_lost)
		return 0;
	for (i = 0; i < s->nr_fds; i++) {
		struct perf_fd *f = &s->fds[i];
		uint64_t v[3]; /* value, id, lost */

		if (read(f->fd, v, sizeof(v)) != (ssize_t)sizeof(v) || v[2] <= f->lost_seen)
			continue;
		d[f->role == PERF_FD_SAMPLES	 ? LOST_SAMPLES :
		  f->role == PERF_FD_SIDEBAND ? LOST_SIDEBAND :
						LOST_EITHER] += v[2] - f->lost_seen;
		f->lost_seen = v[2];
	}
	s->st.lost_kernel += d[LOST_SAMPLES] + d[LOST_SIDEBAND] + d[LOST_EITHER];
	deliver_lost_parts(s, d);
	/* a = the running total (what older readers take), payload = the parts since the last */
	record_chunk(s, REPLAY_LOST, s->st.lost_kernel, 0, d, sizeof(d), NULL, 0);
	return 0;
}

int perf_stop(struct perf_session *s)
{
	size_t i;
	int err = 0;

	if (!s || s->stopped)
		return 0;
	for (i = 0; i < s->nr_fds; i++)
		ioctl(s->fds[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	if (s->q_ready) {
		err = perf_round(s);
		flush_to(s, UINT64_MAX);
	}
	if (s->fmt_lost)
		perf_lost_checkpoint(s);
	else
		record_chunk(s, REPLAY_LOST, 0, 0, NULL, 0, NULL, 0);
	record_chunk(s, REPLAY_END, 0, 0, NULL, 0, NULL, 0);
	if (s->rec) {
		s->st.record_bytes = replay_writer_bytes(s->rec);
		if (replay_writer_close(s->rec)) {
			plog(s, "record file: final write failed");
			err = err ? err : -EIO;
		}
		s->rec = NULL;
	}
	reap_child(s);
	s->stopped = true;
	return err;
}

void perf_close(struct perf_session *s)
{
	size_t i;

	if (!s)
		return;
	if (s->rec) {
		replay_writer_close(s->rec);
		s->rec = NULL;
	}
	if (s->replaying)
		replay_reader_close(&s->rd);
	for (i = 0; i < s->nr_fds; i++)
		close(s->fds[i].fd);
	for (i = 0; i < s->nr_rings; i++)
		if (s->rings[i].map_len)
			munmap(s->rings[i].base, s->rings[i].map_len);
	if (s->child_go >= 0)
		close(s->child_go); /* an unreleased command exits 127 */
	if (s->child > 0 && !s->child_exited) {
		int st;

		if (waitpid(s->child, &st, WNOHANG) == 0) {
			kill(s->child, SIGTERM);
			waitpid(s->child, &st, 0);
		}
	}
	for (i = 0; i < s->nr_pidfds; i++)
		if (s->pidfds[i] >= 0)
			close(s->pidfds[i]);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->q_ready)
		pq_free(&s->q);
	pdec_free(&s->dec);
	free(s->fds);
	free(s->rings);
	free(s->synth_buf);
	free(s->scratch);
	free(s);
}

void perf_print_stats(const struct perf_session *s, FILE *out)
{
	const struct perf_stats *t = &s->st;

	fprintf(out, "-- sample path --\n");
#define P(name) fprintf(out, "%s: %" PRIu64 "\n", #name, t->name)
	P(records);
	P(samples);
	P(mmaps);
	P(comms);
	P(forks);
	P(exits);
	P(ksymbols);
	P(lost_records);
	P(lost);
	P(lost_kernel);
	P(lost_kernel_samples);
	P(lost_kernel_sideband);
	P(throttle);
	P(unthrottle);
	P(bad_records);
	P(resyncs);
	P(wrapped);
	P(unknown_types);
	P(skipped_types);
	P(unknown_ids);
	P(queue_forced);
	P(out_of_order);
	P(deliver_errors);
	P(rounds);
	P(bytes);
	P(hup);
	P(fds);
	P(rings);
	P(skipped_threads);
	P(synth_procs);
	P(synth_threads);
	P(synth_maps);
	P(synth_unreadable);
	P(synth_skipped_maps);
	P(record_bytes);
	P(replay_cpu_ns);
#undef P
	if (t->replay_cpu_ns)
		fprintf(out, "replay: %" PRIu64 " samples in %.3f s of CPU = %.2f M samples/s "
			"(decode, merge, sync, trans, sample files; start-up and shutdown not included)\n",
			t->samples, t->replay_cpu_ns / 1e9,
			t->samples * 1e3 / (double)t->replay_cpu_ns);
}
