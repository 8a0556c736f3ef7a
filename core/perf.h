/*
 * perf.h - the sample path of oprofiled: opens the perf events (perf_open.c),
 * reads every ring itself, merges records of all rings in time order and
 * hands them, decoded, to a callback (buffer sync; perf_deliver.c). Also
 * --record/--replay (perf_replay.c) and the start-up synthesis of
 * already-running processes; the session and its poll loop are perf.c.
 * SPDX-License-Identifier: MIT
 *
 * HOW main.c USES IT
 *
 *	struct perf_config pc = {
 *		.opts = &opts,                 // mode, pids, command, ring_pages,
 *		                               // proc_root, record_file, replay_file
 *		.events = attrs, .nr_events = n, // from the model/timer plugin's encode()
 *		.ext = ext_registry(loader),   // extra sources + sample hooks (or NULL)
 *		.deliver = sync_deliver, .arg = sync,
 *		.log = logfile,
 *	};
 *	struct perf_session *ps;
 *	char err[512];
 *	if (perf_open(&ps, &pc, err, sizeof(err))) { print err; exit 1 }
 *	perf_watch_fd(ps, signalfd);             // optional: wake on signals
 *	for (;;) {
 *		int r = perf_poll(ps, 1000);         // waits, then drains one round
 *		if (r < 0) error;
 *		if (r == PERF_POLL_CHILD_EXIT || r == PERF_POLL_DONE) break;
 *		if (r == PERF_POLL_FD) handle the signal (SIGTERM -> break, SIGUSR1 -> sync)
 *	}
 *	perf_stop(ps);      // disable, drain, deliver everything, read lost counts
 *	perf_print_stats(ps, log);
 *	if (perf_child_status(ps, &ws)) exit code from ws (launch mode)
 *	perf_close(ps);
 *
 * In OP_MODE_REPLAY perf_open reads the file header instead of opening
 * events (events/ext are ignored: the file describes them) and the first
 * perf_poll delivers the whole file, then returns PERF_POLL_DONE.
 *
 * PERF_POLL_CHILD_EXIT means: launch mode, the command exited; --pid mode,
 * every attached process exited. perf_poll(ps, 0) runs one round without
 * waiting (e.g. for a SIGUSR1 dump).
 *
 * Delivery contract: deliver() is called on the caller's thread from
 * perf_poll/perf_stop, once per record, in non-decreasing time order
 * (synthesized records first, time 0). A record can only arrive late
 * (counted in out_of_order) if the kernel published it more than the
 * watermark slack (10 ms) after its timestamp, or if the bounded merge
 * queue overflowed (queue_forced). The op_record and everything it
 * points to (filename, comm, callchain, raw) is valid only during the call.
 * SAMPLE records carry sample.source (0 core event, 1+i registry source i)
 * and op_record.counter (the core event index, or 0 for a source).
 * A negative return is counted (deliver_errors), nothing else happens.
 */
#ifndef OP_CORE_PERF_H
#define OP_CORE_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "oprofile_sdk.h"
#include "perf_decode.h"
#include "record.h"

struct op_options;
struct op_log;
struct ext_registry;
struct perf_session;

struct perf_config {
	/* NULL only with perf_new (tests): no kernel, no files */
	const struct op_options *opts;
	const struct op_perf_attr *events; /* core events, counter i = events[i] */
	size_t nr_events;
	const struct ext_registry *ext; /* NULL: no plugin sources or hooks */
	int (*deliver)(void *arg, const struct op_record *r);
	void *arg;
	struct op_log *log; /* warnings and errors (kept); NULL: stderr */
	unsigned drain_ms;  /* longest wait between two rounds; 0: 100 ms */
	/*
	 * replay: called after each recorded round is delivered, as the live
	 * loop does its end-of-round work after each perf_poll (NULL: none)
	 */
	void (*round_end)(void *arg);
	void *round_arg;
	/* tuning and tests; leave 0/NULL */
	uint64_t (*clock)(void *arg); /* "now" in perf time; NULL: CLOCK_MONOTONIC */
	void *clock_arg;
	int64_t slack_ns;   /* watermark safety margin; 0: 10 ms, <0: none */
	size_t queue_bytes; /* merge queue record space; 0: 1.25 x all rings, >= 1 MiB */
};

/* Counters; all monotonic. */
struct perf_stats {
	uint64_t records; /* records delivered */
	uint64_t samples, mmaps, comms, forks, exits, ksymbols;
	uint64_t lost_records;         /* PERF_RECORD_LOST (+LOST_SAMPLES) records */
	uint64_t lost;                 /* sum of their counts (records of any kind) */
	uint64_t lost_kernel;          /* PERF_FORMAT_LOST total of every event, read at
				   * each perf_lost_checkpoint and at stop; of it: */
	uint64_t lost_kernel_samples;  /* of events that write samples only */
	uint64_t lost_kernel_sideband; /* of the side-band dummy event */
	uint64_t throttle, unthrottle;
	uint64_t bad_records;    /* malformed records skipped */
	uint64_t resyncs;        /* impossible size / head: rest of a ring span dropped */
	uint64_t wrapped;        /* records copied because they wrapped the ring end */
	uint64_t unknown_types;  /* record types this decoder does not know */
	uint64_t skipped_types;  /* known types not used (switch, bpf, cgroup, ...) */
	uint64_t unknown_ids;    /* samples of an event id never opened */
	uint64_t queue_forced;   /* delivered early because the merge queue was full */
	uint64_t out_of_order;   /* delivered with a time below an earlier record's */
	uint64_t deliver_errors; /* deliver() returned < 0 */
	uint64_t rounds;
	uint64_t bytes; /* ring bytes read */
	uint64_t hup;   /* descriptors removed from epoll on POLLHUP */
	uint64_t fds, rings;
	uint64_t skipped_threads; /* --pid threads gone before they could be opened */
	uint64_t synth_procs, synth_threads, synth_maps;
	uint64_t synth_unreadable;   /* processes whose maps/comm could not be read */
	uint64_t synth_skipped_maps; /* mappings without a usable file (memfd:) */
	uint64_t record_bytes;       /* bytes written to --record */
	uint64_t replay_cpu_ns;      /* --replay: thread CPU time from the first chunk to the
				   * last delivery (decode, merge, sync, trans, sample files) */
};

enum perf_poll_result {
	PERF_POLL_OK = 0,
	/* launch mode: the command exited (perf_child_status); --pid mode:
	 * every attached process exited. Call perf_stop next. */
	PERF_POLL_CHILD_EXIT = 1,
	PERF_POLL_DONE = 2, /* replay mode: the whole file was delivered */
	PERF_POLL_FD = 3,   /* an fd given to perf_watch_fd is readable */
};

/*
 * Open everything for cfg->opts->mode:
 *  - OP_MODE_SYSTEM: every event on every online CPU (pid -1); then the
 *    events are enabled and /proc is walked to synthesize COMM/FORK/MMAP2
 *    records of running processes (time 0).
 *  - OP_MODE_LAUNCH: forks opts->command stopped on a pipe, opens per-CPU
 *    events on it (inherit, enable_on_exec), then lets it exec.
 *  - OP_MODE_PID: per-CPU events (inherit) on every thread of every pid in
 *    opts->pids, enabled, then the pids are synthesized.
 *  - OP_MODE_REPLAY: opens opts->replay_file.
 * With opts->record_file the raw stream is also written there.
 * Returns 0 or -errno with a message in @err (what, expected, found, what to do).
 */
int perf_open(struct perf_session **out, const struct perf_config *cfg, char *err, size_t err_len);

/*
 * Wait up to @timeout_ms (< 0: as long as the session's adaptive wait allows:
 * the drain interval while records flow, up to 1 s while the rings stay
 * nearly empty) for ring wakeups, then run
 * one round: drain every ring, deliver what the watermark allows. Returns a
 * perf_poll_result or -errno.
 */
int perf_poll(struct perf_session *s, int timeout_ms);

/* Also wake perf_poll (PERF_POLL_FD) when @fd is readable (e.g. a signalfd). */
int perf_watch_fd(struct perf_session *s, int fd);

/*
 * Disable the events, drain and deliver every record left, read the kernel's
 * exact lost count and finish the record file. Idempotent.
 */
int perf_stop(struct perf_session *s);

/*
 * Read the kernel's exact lost counts (PERF_FORMAT_LOST, kept per event)
 * and deliver what was lost since the last call as OP_REC_LOST records:
 * OP_LOST_SAMPLES for events that write samples only, OP_LOST_SIDEBAND for
 * the side-band dummy event, OP_LOST_RECORDS for an event writing both
 * (kernels without the dummy). Meanwhile PERF_RECORD_LOST records are
 * delivered as OP_LOST_NOTICE, so nothing is counted twice. Call it before
 * writing a session's statistics (save, rotation, dump); perf_stop calls
 * it. No-op without PERF_FORMAT_LOST (LOST records are then the counts),
 * in replay (the recorded checkpoints are delivered) and after perf_stop.
 * One read() per descriptor. Returns 0.
 */
int perf_lost_checkpoint(struct perf_session *s);

/* Unmap, close, reap/kill the launched command, free. NULL is fine. */
void perf_close(struct perf_session *s);

const struct perf_stats *perf_get_stats(const struct perf_session *s);
/* Print the counters, one "name: value" line each, under "-- sample path --". */
void perf_print_stats(const struct perf_session *s, FILE *out);

/* Launch mode: the command's pid (0 otherwise). */
pid_t perf_child_pid(const struct perf_session *s);
/* Launch mode: true once the command exited, with its waitpid() status. */
bool perf_child_status(const struct perf_session *s, int *wstatus);

/* ---- lower level: used by perf_open, and by tests with fake rings ---- */

/* A session with no kernel part: add events, rings and synthesized records by hand. */
int perf_new(struct perf_session **out, const struct perf_config *cfg, char *err, size_t err_len);
/* Register an event kind and its kernel ids. Returns the event index or -errno. */
int perf_add_event(struct perf_session *s, const struct pdec_event *e, const uint64_t *ids,
		   size_t nr_ids);
/* Read a ring at @base (control page + data; see ring_attach). Returns its index. */
int perf_attach_ring(struct perf_session *s, void *base, size_t page_size, size_t data_size);
/* Queue raw records built by hand or by proc_synth (they go to --record too). */
int perf_add_synth(struct perf_session *s, const void *recs, size_t len);
/*
 * One round: drain all rings, deliver up to the watermark. Records are read
 * in place; what stays queued is copied out and the rings are released
 * (data_tail) at the end of the round.
 */
int perf_round(struct perf_session *s);
/*
 * Start writing a record file now (perf_open does it for opts->record_file).
 * @flags: replay_writer_create's (REPLAY_OVERWRITE for --record-overwrite).
 */
int perf_record_to(struct perf_session *s, const char *path, unsigned flags, char *err,
		   size_t err_len);
/* /proc/sys/kernel/perf_event_paranoid, or PERF_PARANOID_UNKNOWN when unreadable */
#define PERF_PARANOID_UNKNOWN (-99)
int perf_paranoid(void);
/* Replay a file through this session (perf_open does it in OP_MODE_REPLAY). */
int perf_replay_file(struct perf_session *s, const char *path, char *err, size_t err_len);
/* The decoder (its trailer layout is what synthesized records must use). */
const struct pdec *perf_decoder(const struct perf_session *s);

#endif /* OP_CORE_PERF_H */
