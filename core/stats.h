/*
 * stats.h - the daemon's counters: one enum, one table of names (log line
 * and, for lost-sample counters, OProfile 1.x operf's stats/ file name),
 * printing to the log and writing samples/current/stats/.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_STATS_H
#define OP_CORE_STATS_H

#include <stdint.h>
#include <stdio.h>

enum op_stat {
	STAT_SAMPLES,            /* samples received from the core events */
	STAT_KERNEL_SAMPLES,
	STAT_USER_SAMPLES,
	STAT_SOURCE_SAMPLES,     /* samples of plugin sources */
	STAT_LOST_KERNEL,        /* kernel pc that no kernel image covers */
	STAT_LOST_NO_MAPPING,
	STAT_LOST_NO_APP_USER,
	STAT_LOST_NO_CONTEXT,    /* trans: sample pair before any image/mode code */
	STAT_LOST_INVALID_DOMAIN, /* hypervisor / guest / unknown cpumode */
	STAT_LOST_RECORDS,       /* PERF_RECORD_LOST: records the kernel dropped */
	STAT_LOST_SAMPLEFILE,    /* sample file could not be opened */
	STAT_LOST_BAD_COUNTER,   /* sample pair with an unknown counter */
	STAT_LOST_PLUGIN_FILE,   /* plugin get_file / open refused */
	STAT_THROTTLE,
	STAT_UNTHROTTLE,
	STAT_UNKNOWN_CODE,
	STAT_INCOMPLETE_CODE,
	STAT_EVB_TOO_LONG,
	STAT_INVALID_PC,
	STAT_IMAGE_FILTERED,     /* not in --image */
	STAT_MMAP,
	STAT_MMAP_IGNORED,
	STAT_COMM,
	STAT_FORK,
	STAT_EXIT,
	STAT_KSYMBOL,
	STAT_PROC_PROBES,        /* unknown process read from /proc */
	STAT_PROC_PROBE_FAILED,
	STAT_NO_MEMORY,
	STAT_HOOK_ERRORS,
	STAT_SFILE_CREATED,
	STAT_SFILE_OPENS,
	STAT_SFILE_EVICTIONS,
	STAT_EMFILE_RETRIES,
	STAT_ODB_SATURATED,
	STAT_BAD_PATH,           /* a file name that would escape the session dir */
	STAT_NR
};

struct op_stats {
	uint64_t v[STAT_NR];
};

const char *stats_name(enum op_stat s);
/* operf's samples/current/stats/ file name, or NULL */
const char *stats_file_name(enum op_stat s);
/* "-- OProfile-ng Statistics --" block (plugins' sections are printed by the caller) */
void stats_print(const struct op_stats *st, FILE *out);
/*
 * Write the lost counters that are non-zero as files under
 * <current_dirfd>/stats/ (plus total_samples), and stats/throttled/<event>
 * for each @throttled event name (NULL-terminated list, may be NULL).
 */
int stats_write_files(const struct op_stats *st, int current_dirfd, const char *const *throttled);

#endif /* OP_CORE_STATS_H */
