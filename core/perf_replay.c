/*
 * perf_replay.c - the session's side of the --record / --replay stream
 * (format and file access: replay.c): write the chunks as the rings are
 * read, and deliver a recorded file through the same merge as live.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <linux/perf_event.h>

#include "perf_int.h"

void perf_replay_write_chunk(struct perf_session *s, uint32_t type, uint64_t a, uint64_t b,
			     const void *p1, size_t n1, const void *p2, size_t n2)
{
	if (!s->rec)
		return;
	if (replay_write(s->rec, type, a, b, p1, n1, p2, n2)) {
		perf_log(s, "record file: write failed (%s); recording stopped, profiling goes on",
			 strerror(-replay_write(s->rec, type, a, b, NULL, 0, NULL, 0)));
		replay_writer_close(s->rec);
		s->rec = NULL;
	}
}

static void perf_replay_write_events(struct perf_session *s)
{
	size_t i;

	for (i = 0; i < s->dec.nr_events; i++) {
		struct replay_event_payload p = {
			.sample_type = s->dec.events[i].sample_type,
			.read_format = s->dec.events[i].read_format,
			.counter = s->dec.events[i].counter,
			.source = s->dec.events[i].source,
		};

		perf_replay_write_chunk(s, REPLAY_EVENT, i, 0, &p, sizeof(p), NULL, 0);
	}
	for (i = 0; i < s->dec.ids_cap; i++) {
		uint64_t pair[2] = { s->dec.ids[i].id, s->dec.ids[i].ev };

		if (s->dec.ids[i].ev != UINT32_MAX)
			perf_replay_write_chunk(s, REPLAY_IDS, 0, 0, pair, sizeof(pair), NULL, 0);
	}
}

int perf_record_to(struct perf_session *s, const char *path, unsigned flags, char *err,
		   size_t err_len)
{
	int ret = perf_deliver_queue_ready(s);

	if (ret) {
		snprintf(err, err_len, "sample path: merge queue: %s", strerror(-ret));
		return ret;
	}
	ret = replay_writer_create(&s->rec, path, flags, s->q_bytes, s->q_entries, err, err_len);
	if (ret)
		return ret;
	perf_replay_write_events(s);
	return 0;
}

int perf_replay_open(struct perf_session *s, const char *path, char *err, size_t err_len)
{
	int ret = replay_reader_open(&s->rd, path, err, err_len);

	if (ret)
		return ret;
	/* a recording's queue has bytes / 32 entries (perf_deliver_queue_ready): more is a
	 * corrupt file asking for gigabytes of index (found by fuzz_perf) */
	if (s->rd.hdr.queue_bytes < (1u << 20) || s->rd.hdr.queue_bytes > (256u << 20) ||
	    s->rd.hdr.queue_entries < 16 || s->rd.hdr.queue_entries > s->rd.hdr.queue_bytes / 32) {
		snprintf(err, err_len,
			 "replay file %s: offset 16: merge queue geometry %" PRIu64
			 " bytes / %" PRIu64 " entries is impossible - the file is corrupt",
			 path, s->rd.hdr.queue_bytes, s->rd.hdr.queue_entries);
		replay_reader_close(&s->rd);
		return -EINVAL;
	}
	s->q_bytes = s->rd.hdr.queue_bytes;
	s->q_entries = s->rd.hdr.queue_entries;
	ret = perf_deliver_queue_ready(s);
	if (ret) {
		snprintf(err, err_len, "replay: merge queue: %s", strerror(-ret));
		replay_reader_close(&s->rd);
		return ret;
	}
	s->replaying = true;
	return 0;
}

static uint64_t perf_replay_thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int perf_replay_deliver_all(struct perf_session *s);

/*
 * Deliver the whole file, timing it (the pipeline's throughput, in the
 * log). 0, or -EINVAL with s->err set.
 */
int perf_replay_run(struct perf_session *s)
{
	uint64_t t0 = perf_replay_thread_cpu_ns();
	int ret = perf_replay_deliver_all(s);

	s->st.replay_cpu_ns = perf_replay_thread_cpu_ns() - t0;
	return ret;
}

static int perf_replay_deliver_all(struct perf_session *s)
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
				snprintf(err, el,
					 "replay file %s: offset %zu: event chunk of %" PRIu64
					 " bytes, expected %zu",
					 s->rd.path, at, c.len, sizeof(ep));
				return -EINVAL;
			}
			memcpy(&ep, p, sizeof(ep));
			/* the recording read exact lost counts: LOST records are news only */
			if (ep.read_format & PERF_FORMAT_LOST)
				s->fmt_lost = true;
			e = (struct pdec_event){ .sample_type = ep.sample_type,
						 .read_format = ep.read_format,
						 .counter = ep.counter,
						 .source = ep.source };
			idx = pdec_add_event(&s->dec, &e);
			if (idx < 0 || (uint64_t)idx != c.a) {
				snprintf(err, el,
					 "replay file %s: offset %zu: event %" PRIu64
					 " (sample_type %#" PRIx64
					 ") is inconsistent with the events before it",
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
						 " maps to event %" PRIu64
						 ", only %u events defined",
						 s->rd.path, at, pair[0], pair[1], s->dec.nr_events);
					return -EINVAL;
				}
			}
			break;
		}
		case REPLAY_DATA: {
			struct ring_span sp = { .p1 = p, .n1 = c.len };

			if (!s->dec.nr_events) {
				snprintf(err, el,
					 "replay file %s: offset %zu: data before any event description",
					 s->rd.path, at);
				return -EINVAL;
			}
			s->st.bytes += c.len;
			/* by reference: the mapping stays until the final flush */
			perf_deliver_enqueue_span(s, &sp, false, NULL);
			break;
		}
		case REPLAY_ROUND:
			perf_deliver_to(s, c.a);
			s->st.rounds++;
			if (s->cfg.round_end)
				s->cfg.round_end(s->cfg.round_arg);
			break;
		case REPLAY_LOST:
			if (c.len >= LOST_PARTS * sizeof(uint64_t)) {
				uint64_t d[LOST_PARTS];

				memcpy(d, p, sizeof(d));
				perf_deliver_lost_parts(s, d);
				s->lost_split = true;
			} else if (!s->lost_split && c.a > s->st.lost_kernel) {
				/* an older recording: one total at the end, kind unknown */
				perf_deliver_lost(s, OP_LOST_RECORDS, c.a - s->st.lost_kernel);
			}
			s->st.lost_kernel = c.a;
			break;
		}
	}
	if (ret < 0)
		return ret;
	perf_deliver_to(s, UINT64_MAX);
	return 0;
}

int perf_replay_file(struct perf_session *s, const char *path, char *err, size_t err_len)
{
	int ret = perf_replay_open(s, path, err, err_len);

	if (ret)
		return ret;
	ret = perf_replay_run(s);
	if (ret)
		snprintf(err, err_len, "%s", s->err);
	replay_reader_close(&s->rd);
	s->replaying = false;
	s->stopped = true;
	return ret;
}
