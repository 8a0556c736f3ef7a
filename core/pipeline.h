/*
 * pipeline.h - the daemon's sample path as one object: the image cookies,
 * the event buffer, buffer sync, trans, the sample-file table and the
 * statistics, wired together, plus the perf session and the plugin loader
 * it reports on. main (signals, the loop) and control (opcontrol's
 * requests) act on it through these verbs only, so SIGUSR1 and
 * `opcontrol --dump` are the same code.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_PIPELINE_H
#define OP_CORE_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stats.h"

struct ext_core_services;
struct ext_loader;
struct ext_registry;
struct op_log;
struct perf_config;
struct perf_session;
struct session;
struct sfile_config;

struct pipeline;

/*
 * A pipeline logging to @log (kept, not owned), its stats files and sample
 * files in @sess (kept; may be NULL for --check-config, then nothing is
 * written). @filter: --image names (cookie.h; may be NULL). The event
 * buffer, sync and the cookie table exist from here on (plugins' host
 * services need them); the sample files from pipeline_open_files().
 * 0 or -ENOMEM.
 */
int pipeline_new(struct pipeline **pp, struct op_log *log, struct session *sess,
		 char *const *filter);
/* Free what is left (after pipeline_free_files() and the plugin loader). */
void pipeline_free(struct pipeline *p);

/* The host services the plugin loader hands to plugins (sync, trans, cookies). */
void pipeline_core_services(struct pipeline *p, struct ext_core_services *c);

/*
 * After the plugins are loaded: the registry sync and trans dispatch to
 * (may be NULL), the /proc root sync probes for unknown processes (NULL:
 * never, replay), the sample-file table of @cfg. @ring_pages is named in
 * the advice printed when the kernel dropped records. 0 or -errno.
 */
int pipeline_open_files(struct pipeline *p, const struct sfile_config *cfg,
			const struct ext_registry *reg, const char *proc_root, bool verbose,
			size_t ring_pages);
/* Close every sample file and free the table (before the plugins are freed). */
void pipeline_free_files(struct pipeline *p);

/*
 * The perf reader's hooks: records straight to buffer sync (no hop per
 * record), round ends drain. Fills deliver/arg/round_end/round_arg of @pc.
 */
void pipeline_perf_config(struct pipeline *p, struct perf_config *pc);
/* The perf session (stats, lost counts, throttled events) and loader (stats) to report on. */
void pipeline_set_perf(struct pipeline *p, struct perf_session *perf);
void pipeline_set_loader(struct pipeline *p, struct ext_loader *loader);

/* Everything synced so far goes to the sample files (every loop turn). */
void pipeline_drain(struct pipeline *p);
/* msync the open sample files (the periodic sync). */
void pipeline_sync_files(struct pipeline *p);
/*
 * The statistics block to the log: a time stamp after @why (may be NULL),
 * the core counters, advice if the kernel dropped records, perf's and the
 * plugins' sections. The kernel's lost counts are read first.
 */
void pipeline_print_stats(struct pipeline *p, const char *why);
/*
 * samples/current/stats/: the counters, stats/throttled/<event> for each
 * event the kernel throttled. 0 or -errno (logged).
 */
int pipeline_write_stats_files(struct pipeline *p);
/*
 * SIGUSR1 and `opcontrol --dump`: drain, sync the files, write the stats
 * and, with @print_stats, print them to the log. A dump a plugin asks for
 * (pprof's pull, push's interval) prints nothing: a scraper pulling every
 * few seconds would fill the log with statistics blocks.
 */
void pipeline_dump(struct pipeline *p, bool print_stats);
/*
 * SDK 1.2: tell the plugins' session hooks @kind (enum op_session_event_kind)
 * with samples/current and, for OP_SESSION_ROTATED, samples/@prev.
 */
void pipeline_session_event(struct pipeline *p, uint32_t kind, const char *prev);
/* SIGHUP: drain and close every sample file (they reopen on the next sample). */
void pipeline_close_files(struct pipeline *p);
/*
 * save/reset/rotate, before samples/current moves: drain, close every
 * sample file, print the stats (after @why) and write the stats files
 * (incl. throttled/) into the session being set aside. 0 or -errno of the
 * stats files (logged).
 */
int pipeline_end_session(struct pipeline *p, const char *why);
/* After samples/current moved: the counters start at zero, added to @before first. */
void pipeline_new_session(struct pipeline *p, struct op_stats *before);

/* The counters (status), and the open files and sets of the sample-file table. */
const struct op_stats *pipeline_stats(const struct pipeline *p);
void pipeline_file_counts(const struct pipeline *p, unsigned *open, unsigned *sets);
/* Core events by counter: their names for stats/throttled/ (@names kept). */
void pipeline_set_event_names(struct pipeline *p, const char *const *names, size_t n);

#endif /* OP_CORE_PIPELINE_H */
