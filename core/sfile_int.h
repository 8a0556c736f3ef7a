/*
 * sfile_int.h - what the sample-file files share and nothing else uses:
 * the rate-limited error log (sfile.c), eviction of the least recently used
 * sets (sfile.c), opening one odb of a set (sfile_open.c). Include after
 * sfile.h, only from core/sfile*.c.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_SFILE_INT_H
#define OP_CORE_SFILE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "sfile.h"

/* An error line to the table's log, at most a few a minute (error paths only). */
void sfile_logf(struct sfile_table *tab, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Evict least recently used sets (never @keep or the pinned one) until fewer
 * than @target files are open. Returns the number of sets evicted. */
unsigned sfile_evict(struct sfile_table *tab, unsigned target, const struct op_sfile *keep);

/*
 * Open (creating it and its directories) the file of @counter, or of @spec
 * when not NULL, of set @sf into @db, evicting sets first when too many
 * files are open; a new file gets its header. 0, or -errno after a log line.
 */
int sfile_open_odb(struct sfile_table *tab, struct op_sfile *sf, odb_t *db, uint32_t counter,
		   const struct op_file_spec *spec);

/* Close the directories sfile_open_odb keeps open (rotation, SIGHUP, EMFILE). */
void sfile_dirs_close(struct sfile_table *tab);

/* sfile_name() of the set @k would make (@tgid_hint: its process) */
int sfile_key_name(const struct sfile_table *tab, const struct sfile_key *k, int32_t tgid_hint,
		   uint32_t counter, const struct op_file_spec *spec, char *buf, size_t len);

/*
 * odb_open() refused file @base below @dfd with -EBUSY: another writer has
 * it. If that writer is an open file of this table (two sets, or two files
 * of a set, whose keys differ but whose names are the same file), close it
 * (its owner reopens it on its next sample) and return true: the caller
 * opens it again. One writer per file, or each overwrites the nodes the
 * other adds (broken chains, samples lost).
 */
bool sfile_hand_over(struct sfile_table *tab, int dfd, const char *base);

/* a sample not recorded in a sample file, and why (@cause: STAT_LOST_SF_*) */
static inline void sfile_lost(struct sfile_table *tab, enum op_stat cause)
{
	tab->stats->v[STAT_LOST_SAMPLEFILE]++;
	tab->stats->v[cause]++;
}

#endif /* OP_CORE_SFILE_INT_H */
