/*
 * rotate.h - setting samples/current aside below <session>/samples: save it
 * under a name, reset it (to samples/previous), timed rotation to
 * rotate-<UTC time>-<sequence> keeping the newest K. Directory work only,
 * on the samples directory fd; the caller closes and syncs the sample files
 * first.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_ROTATE_H
#define OP_CORE_ROTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define ROTATE_PREFIX "rotate-"
#define ROTATE_NAME_MAX 64

/*
 * A name --save may use: 1..63 characters of [A-Za-z0-9._-], not starting
 * with '.' or '-', not "current", "previous" or "stats".
 */
bool rotate_name_ok(const char *name);

/*
 * Move samples/current to samples/@name. With @replace an existing @name is
 * removed first (reset -> previous); without, an existing @name is -EEXIST.
 * No samples/current: -ENOENT. The kernel symbol snapshot (stats/kallsyms,
 * stats/modules) goes with the samples; rotate_keep_snapshot() gives the
 * next current its own link. 0 or -errno, with a message in @err.
 */
int rotate_move_current(int samples_fd, const char *name, bool replace, char *err, size_t err_len);

/*
 * Hard-link (else copy) samples/@from/stats/{kallsyms,modules} into
 * samples/current/stats/ (created as needed): the report of the next
 * session needs the kernel symbols the kernel plugin saved at start-up.
 * Returns the number of files carried over, or -errno.
 */
int rotate_keep_snapshot(int samples_fd, const char *from);

/*
 * rotate-YYYYMMDDTHHMMSSZ-NNNNNN: @t in UTC, then a sequence number (six
 * digits or more) above *@seq and above every one found below @samples_fd;
 * *@seq becomes the number used. The caller keeps *@seq for the next call
 * (0 at start-up), so a name is never given twice, not even once pruning
 * has removed its directory, and the order of creation is known whatever
 * the clock did. 0 or -errno.
 */
int rotate_stamp_name(int samples_fd, time_t t, uint64_t *seq, char *buf, size_t len);

/*
 * The sequence number of a rotate_stamp_name() name, or 0 for any other
 * rotate-* name (an older daemon's rotate-TIME[-NN], or a save by hand).
 */
uint64_t rotate_seq(const char *name);

/*
 * The rotate-* directories below @samples_fd, oldest first: by sequence
 * number, those without one (older) first and among themselves by name.
 * *@names is a malloc'd array of malloc'd strings; free with
 * rotate_free_list. 0 or -errno.
 */
int rotate_list(int samples_fd, char ***names, size_t *n);
void rotate_free_list(char **names, size_t n);

/*
 * Remove the oldest rotate-* directories until at most @keep remain.
 * Returns how many were removed, or -errno (the first failure).
 */
int rotate_prune(int samples_fd, unsigned keep);

#endif /* OP_CORE_ROTATE_H */
