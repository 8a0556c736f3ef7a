/*
 * proc_synth.h - records for processes that were running before the events
 * were enabled (proc_synth.c): COMM per thread, FORK per extra thread and
 * MMAP2 per executable mapping, built from /proc exactly as the kernel would
 * write them (with the session's sample_id trailer, time 0).
 * Known window (perf has it too): a process that exists when the events are
 * enabled but exits before the walk reaches it is never introduced; its few
 * samples stay unattributed (its EXIT still arrives).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_PROC_SYNTH_H
#define OP_CORE_PROC_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "perf_decode.h"

struct psynth_stats {
	uint64_t procs, threads, maps;
	uint64_t unreadable;   /* maps (or task dir) could not be read: skipped */
	uint64_t skipped_maps; /* executable mappings with no file to resolve (memfd:) */
};

struct psynth_ctx {
	const char *proc_root;  /* "/proc" or a test tree */
	const struct pdec *dec; /* trailer layout */
	uint64_t id;            /* value of the ID/IDENTIFIER trailer fields */
	int (*emit)(void *arg, const void *rec, size_t len);
	void *arg;
	struct psynth_stats *stats;
};

/* Every numeric entry of proc_root. Returns 0 or the first emit error. */
int psynth_all(const struct psynth_ctx *c);
/* One process. -ESRCH when it is gone, or the first emit error. */
int psynth_pid(const struct psynth_ctx *c, uint32_t pid);

/*
 * Record builders (also used by tests): write into @buf (at least
 * 64 + strlen(name) + trailer bytes... use PSYNTH_MAX_RECORD) and return the
 * record size, or 0 if it would not fit in a perf record.
 */
#define PSYNTH_MAX_RECORD 8192
size_t psynth_comm(const struct pdec *d, uint64_t id, void *buf, uint32_t pid, uint32_t tid,
		   const char *comm, uint64_t time, uint32_t cpu);
size_t psynth_task(const struct pdec *d, uint64_t id, void *buf, uint32_t type, uint32_t pid,
		   uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time, uint32_t cpu);
size_t psynth_mmap2(const struct pdec *d, uint64_t id, void *buf, uint32_t pid, uint32_t tid,
		    uint64_t start, uint64_t len, uint64_t pgoff, uint32_t maj, uint32_t min,
		    uint64_t ino, uint32_t prot, uint32_t flags, const char *filename,
		    uint64_t time, uint32_t cpu);

#endif /* OP_CORE_PROC_SYNTH_H */
