/*
 * op_ksyms_store.h - the kernel symbol snapshot stored once per distinct
 * content: samples/.kallsyms/<hash>-<size> holds one copy, and each
 * session's stats/kallsyms is a hard link to it, so a rotated or restarted
 * session adds only its samples (issue 20: 5.4 MB per session before).
 * Readers are unchanged: stats/kallsyms is a regular file like before, and
 * a session copied or archived elsewhere takes its own copy along.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_KSYMS_STORE_H
#define OP_KSYMS_STORE_H

#include <stddef.h>
#include <stdint.h>

/*
 * FNV-1a, 64 bits, over the bytes written. Not a security property: a
 * name match is only believed after the contents compared equal byte for
 * byte, so the hash only has to spread distinct kernels apart.
 */
#define OP_KSYMS_HASH_INIT UINT64_C(0xcbf29ce484222325)

static inline uint64_t op_ksyms_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--) {
		h ^= *c++;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/*
 * Commit the snapshot written to the temporary @tmp below @stats_fd (@size
 * bytes, hash @hash) as stats/@name, one copy per content below the
 * samples directory @samples_fd:
 *  - a store entry of the same hash and size whose bytes are equal becomes
 *    stats/@name (a hard link) and @tmp is removed: returns 1;
 *  - else @tmp is linked into the store and renamed to stats/@name:
 *    returns 0. When the store cannot be used (not a directory of ours,
 *    no hard links on this file system, a hash clash), @tmp is simply
 *    renamed, as without a store: also 0.
 * Entries no session links any more are removed first
 * (op_ksyms_store_prune). Every open is below the fds, without following
 * a link, and what is opened is checked with lib/op_trust (the daemon's
 * own files only). -errno when even the rename failed (@tmp is left for
 * the caller to remove).
 */
int op_ksyms_store_commit(int samples_fd, int stats_fd, const char *tmp, const char *name,
			  uint64_t hash, uint64_t size);

/*
 * Remove the store's entries that no session links any more (link count
 * 1: the store's own). The daemon calls it after pruning rotated sessions.
 * Returns the number removed, 0 without a store, or -errno.
 */
int op_ksyms_store_prune(int samples_fd);

#endif /* OP_KSYMS_STORE_H */
