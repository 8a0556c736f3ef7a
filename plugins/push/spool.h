/*
 * spool.h - the push plugin's on-disk queue of encoded profiles, in the
 * session directory, bounded in bytes and in files: the oldest entry is
 * dropped (and counted) to make room, so a store that is down for a while
 * loses nothing up to the bound and then only the oldest profiles.
 * Used by one thread. Prefix spool_.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PLUGINS_PUSH_SPOOL_H
#define OP_PLUGINS_PUSH_SPOOL_H

#include <stddef.h>
#include <stdint.h>

/* one queued profile; its file is "<seq>-<from_s>-<until_s>-<hz>.pprof.gz" */
struct spool_entry {
	uint64_t seq;
	uint64_t from_s, until_s; /* wall-clock seconds the profile covers */
	uint64_t hz;              /* sampling rate, 0 unknown */
	uint64_t bytes;
};

struct spool {
	int dfd;
	uint64_t max_bytes;
	unsigned max_files;
	uint64_t next_seq;
	struct spool_entry *e; /* oldest first */
	unsigned n, cap;
	uint64_t bytes;
	uint64_t dropped; /* entries dropped to stay within the bounds */
};

/*
 * Open (creating, mode 0700) the spool directory @name below the session
 * directory @session_dir and take what an earlier run left in it (oldest
 * first, then trimmed to the bounds). 0 or -errno with @err.
 */
int spool_open(struct spool *sp, const char *session_dir, const char *name, uint64_t max_bytes,
	       unsigned max_files, char *err, size_t err_len);
void spool_close(struct spool *sp);
/*
 * Queue @len bytes; the oldest entries go first to make room. An entry
 * larger than the whole bound is dropped itself. 0 or -errno with @err.
 */
int spool_add(struct spool *sp, const void *buf, size_t len, uint64_t from_s, uint64_t until_s,
	      uint64_t hz, char *err, size_t err_len);
/* the oldest entry's bytes (malloc'd) in *buf, or -ENOENT when empty */
int spool_peek(struct spool *sp, struct spool_entry *ent, void **buf, size_t *len, char *err,
	       size_t err_len);
/* remove the oldest entry (sent, or refused for good) */
void spool_pop(struct spool *sp);

#endif
