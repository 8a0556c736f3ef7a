/*
 * stats.h - the daemon's counters: one enum, one table of names (log line
 * and, for lost-sample counters, OProfile 1.x operf's stats/ file name),
 * printing to the log and writing samples/current/stats/.
 * SPDX-License-Identifier: MIT
 *
 * The stats/ files of a session (what opreport reads):
 *   total_samples            samples received from the kernel (core events
 *                            and plugin sources)
 *   lost_kernel, lost_no_mapping, lost_no_app_for_user_sample,
 *   lost_invalid_domain, lost_samplefile
 *                            received samples the daemon could not attribute:
 *                            part of total_samples
 *   lost_samples_by_kernel   samples the kernel dropped (a ring was full),
 *                            never received: not in total_samples
 *   lost_sideband_by_kernel  mmap/comm/fork/exit/ksymbol records the kernel
 *                            dropped
 *   lost_records_by_kernel   records the kernel dropped whose kind it did not
 *                            say (samples or side-band: PERF_RECORD_LOST
 *                            without PERF_FORMAT_LOST, or one event carrying
 *                            both)
 * Each holds one decimal number and a newline. A file not there is 0.
 */
#ifndef OP_CORE_STATS_H
#define OP_CORE_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum op_stat {
	STAT_SAMPLES, /* samples received from the core events */
	STAT_KERNEL_SAMPLES,
	STAT_USER_SAMPLES,
	STAT_SOURCE_SAMPLES, /* samples of plugin sources */
	STAT_LOST_KERNEL,    /* kernel pc that no kernel image covers */
	STAT_LOST_NO_MAPPING,
	STAT_LOST_NO_APP_USER,
	STAT_LOST_NO_CONTEXT,     /* trans: sample pair before any image/mode code */
	STAT_LOST_INVALID_DOMAIN, /* hypervisor / guest / unknown cpumode */
	STAT_LOST_RECORDS,        /* records the kernel dropped, every kind; of them: */
	STAT_KLOST_SAMPLES,       /*   samples (exact: PERF_FORMAT_LOST, LOST_SAMPLES) */
	STAT_KLOST_SIDEBAND,      /*   side-band records (PERF_FORMAT_LOST) */
	STAT_LOST_SAMPLEFILE,     /* sample file could not be opened */
	STAT_LOST_BAD_COUNTER,    /* sample pair with an unknown counter */
	STAT_LOST_PLUGIN_FILE,    /* plugin get_file / open refused */
	STAT_THROTTLE,
	STAT_UNTHROTTLE,
	STAT_UNKNOWN_CODE,
	STAT_INCOMPLETE_CODE,
	STAT_EVB_TOO_LONG,
	STAT_INVALID_PC,
	STAT_IMAGE_FILTERED, /* not in --image */
	STAT_MMAP,
	STAT_MMAP_IGNORED,
	STAT_COMM,
	STAT_FORK,
	STAT_EXIT,
	STAT_KSYMBOL,
	STAT_PROC_PROBES, /* unknown process read from /proc */
	STAT_PROC_PROBE_FAILED,
	STAT_NO_MEMORY,
	STAT_HOOK_ERRORS,
	STAT_SFILE_CREATED,
	STAT_SFILE_OPENS,
	STAT_SFILE_EVICTIONS,
	STAT_EMFILE_RETRIES,
	STAT_ODB_SATURATED,
	STAT_BAD_PATH, /* a file name that would escape the session dir */
	/* which cause STAT_LOST_SAMPLEFILE's samples had (the rest: no name) */
	STAT_LOST_SF_OPEN,    /*   the file could not be opened or created */
	STAT_LOST_SF_GROW,    /*   the file could not grow (disk full, RLIMIT_FSIZE) */
	STAT_LOST_SF_CHANGED, /*   another process changed the file under the daemon */
	STAT_SFILE_HANDOVERS, /* a file closed for another set that names the same file */
	STAT_SFILE_ALIASES,   /* a new key whose files a set has: uses that set */
	STAT_NR
};

/* the stats/ counter files, in the order stats_write_files writes them */
enum stats_file {
	STATS_F_TOTAL,
	STATS_F_LOST_KERNEL,
	STATS_F_LOST_NO_MAPPING,
	STATS_F_LOST_NO_APP_USER,
	STATS_F_LOST_INVALID_DOMAIN,
	STATS_F_LOST_SAMPLEFILE,
	STATS_F_KLOST_SAMPLES,
	STATS_F_KLOST_SIDEBAND,
	STATS_F_KLOST_RECORDS,
	STATS_F_NR
};

struct op_stats {
	uint64_t v[STAT_NR];
	/*
	 * What samples/current/stats/ held before this daemon first wrote it
	 * (--append keeps an earlier run's): read once, by the first
	 * stats_write_files, and added to what this daemon counted. Zero the
	 * whole struct for a new samples/current.
	 */
	bool base_read;
	uint64_t base[STATS_F_NR];
};

const char *stats_name(enum op_stat s);
/* operf's samples/current/stats/ file name of a counter, or NULL */
const char *stats_file_name(enum op_stat s);
/* the name of a stats/ counter file */
const char *stats_file(enum stats_file f);
/* the value stats_write_files would write to @f for @st (without the base) */
uint64_t stats_file_value(const struct op_stats *st, enum stats_file f);
/* "-- OProfile-ng Statistics --" block (plugins' sections are printed by the caller) */
void stats_print(const struct op_stats *st, FILE *out);
/*
 * Write the counter files under <current_dirfd>/stats/: total_samples and
 * every lost_* file that is not 0, each the value of @st plus the file's
 * value before this daemon's first write (st->base, read then), and
 * stats/throttled/<event> for each @throttled event name (NULL-terminated
 * list, may be NULL). Every file is written to a temporary name first and
 * renamed over the old one only when all were written whole (write, fsync
 * and close checked): a full disk leaves the previous set in place and
 * returns -ENOSPC. 0 or -errno.
 */
int stats_write_files(struct op_stats *st, int current_dirfd, const char *const *throttled);
/*
 * stats/buildids (lib/op_buildid.h): what an --append'ed session's index
 * held before this daemon first wrote it, malloc'd in *@old (NULL, 0 when
 * none or not trusted). 0 or -ENOMEM.
 */
int stats_read_buildids(int current_dirfd, char **old, size_t *old_len);
/*
 * Write stats/buildids whole: @old (the earlier run's lines, may be NULL)
 * then @text, to a temporary name, fsync'ed, renamed over the old file
 * (a reader sees the last complete index). 0 or -errno.
 */
int stats_write_buildids(int current_dirfd, const char *old, size_t old_len, const char *text,
			 size_t len);

#endif /* OP_CORE_STATS_H */
