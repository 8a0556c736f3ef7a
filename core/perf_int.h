/*
 * perf_int.h - private to the sample path (perf.c, perf_deliver.c,
 * perf_open.c, perf_replay.c): the session struct they share and the verbs
 * each stage gives the others. Nothing outside core/perf*.c includes it.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_PERF_INT_H
#define OP_CORE_PERF_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "options.h"
#include "perf.h"
#include "perf_decode.h"
#include "perf_queue.h"
#include "replay.h"
#include "ring.h"

#define PERF_MAX_PIDFDS (OP_MAX_PIDS + 1)

struct perf_ring {
	struct ring r;
	void *base;     /* mmap, or a caller's fake ring */
	size_t map_len; /* 0: not ours to unmap */
	int fd;         /* owner fd (epoll), -1 for fake rings */
	bool in_epoll;
	bool got;           /* queued a record in this round */
	uint64_t last_time; /* time of the last record queued this round */
};

/* what a descriptor's event writes, so its PERF_FORMAT_LOST count says what was lost */
enum perf_fd_role {
	PERF_FD_SAMPLES,  /* samples only */
	PERF_FD_SIDEBAND, /* the side-band dummy: mmap/comm/fork/exit/ksymbol only */
	PERF_FD_BOTH,     /* samples and side-band (no dummy): lost records of either kind */
};

struct perf_fd {
	int fd;
	int ring;
	enum perf_fd_role role;
	uint64_t lost_seen; /* its PERF_FORMAT_LOST count at the last checkpoint */
};

struct perf_session {
	struct perf_config cfg;
	struct pdec dec;
	struct pq q;
	bool q_ready;
	size_t q_bytes, q_entries;
	struct perf_stats st;
	uint8_t *scratch; /* RING_MAX_RECORD, for wrapped records */

	struct perf_ring *rings;
	size_t nr_rings, cap_rings;
	struct perf_fd *fds;
	size_t nr_fds, cap_fds;
	int epfd;

	struct replay_writer *rec;
	struct replay_reader rd;
	bool replaying;

	bool clock_ok;   /* perf time is comparable with cfg.clock */
	bool fmt_lost;   /* read_format has PERF_FORMAT_LOST */
	bool sb_event;   /* side-band records come from a dummy event of their own */
	bool lost_split; /* replay: REPLAY_LOST chunks carry the exact parts */
	uint64_t slack;
	uint64_t last_delivered;
	unsigned wait_ms;  /* the next poll's longest wait (perf_adapt_wait) */
	size_t ring_bytes; /* data bytes of all rings */
	bool stopped;

	pid_t child;
	int child_go;                /* write end of the launch pipe */
	int pidfds[PERF_MAX_PIDFDS]; /* launched command / --pid targets */
	size_t nr_pidfds;
	size_t targets_alive; /* pidfds not yet readable */
	bool child_exited;
	int child_status;

	uint8_t *synth_buf;
	size_t synth_len, synth_cap;
	char err[512];
};

/* the parts of a REPLAY_LOST payload, and of perf_stats' exact counts */
enum { LOST_SAMPLES, LOST_SIDEBAND, LOST_EITHER, LOST_PARTS };

/* ---- perf.c: the session, its targets and its loop ---- */

/* "oprofiled: " + message + newline through cfg.log (stderr without one) */
void perf_log(struct perf_session *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Read a ring at @base; @map_len 0: not ours to unmap. Returns its index or -errno. */
int perf_add_ring(struct perf_session *s, void *base, size_t map_len, int fd, size_t page_size,
		  size_t data_size);
/* Wake perf_poll when @fd is readable; @tag: a ring index or one of perf.c's tags. */
int perf_epoll_add(struct perf_session *s, int fd, uint64_t tag);
/* Fork the command stopped on a pipe (s->child, s->child_go). 0 or -errno + @err. */
int perf_launch_child(struct perf_session *s, char **argv, char *err, size_t err_len);
/* Wake perf_poll when process @pid exits (pidfd); silently nothing without pidfds. */
void perf_watch_target(struct perf_session *s, pid_t pid);

/* ---- perf_deliver.c: the time-ordered merge feeding cfg.deliver ---- */

/* Size (first call) and allocate the merge queue. 0 or -errno. */
int perf_deliver_queue_ready(struct perf_session *s);
/* Queue the records of @sp (by reference unless @copy); @pr: the ring or NULL. */
void perf_deliver_enqueue_span(struct perf_session *s, struct ring_span *sp, bool copy,
			       struct perf_ring *pr);
/* Deliver the queued records with time <= @wm, in order; returns how many. */
size_t perf_deliver_to(struct perf_session *s, uint64_t wm);
/* perf_deliver_to, and a REPLAY_ROUND chunk if anything was delivered */
void perf_deliver_flush_to(struct perf_session *s, uint64_t wm);
/* An exact lost count (PERF_FORMAT_LOST), straight to the consumer. */
void perf_deliver_lost(struct perf_session *s, enum op_lost_kind kind, uint64_t n);
/* The three parts of a checkpoint, delivered and added to the stats. */
void perf_deliver_lost_parts(struct perf_session *s, const uint64_t d[LOST_PARTS]);

/* ---- perf_replay.c: the session's side of the --record / --replay stream ---- */

/* Append a chunk to the record file, if any; a write error stops recording. */
void perf_replay_write_chunk(struct perf_session *s, uint32_t type, uint64_t a, uint64_t b,
			     const void *p1, size_t n1, const void *p2, size_t n2);
/* Open @path and size the merge queue as it was recorded. 0 or -errno + @err. */
int perf_replay_open(struct perf_session *s, const char *path, char *err, size_t err_len);
/* Deliver the whole file, timed (st.replay_cpu_ns). 0, or -EINVAL with s->err set. */
int perf_replay_run(struct perf_session *s);

#endif /* OP_CORE_PERF_INT_H */
