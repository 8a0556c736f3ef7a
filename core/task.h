/*
 * task.h - buffer sync's task table: processes by tgid, their command name,
 * application image and executable mappings (sorted, non-overlapping).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_TASK_H
#define OP_CORE_TASK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oprofile_sdk.h"

struct task_map {
	uint64_t start, end; /* [start, end) */
	uint64_t pgoff;
	op_cookie_t cookie;
	bool anon; /* key = pc - start, anon range in the name */
};

struct task {
	uint32_t tgid;
	char comm[16];
	op_cookie_t app_cookie;
	bool app_matches_comm; /* app chosen because its name matched comm */
	bool dead;             /* exited; freed at the next task_reap() */
	uint32_t nr_threads;   /* live threads seen (FORK/EXIT records), >= 1 */
	bool probed;           /* /proc/<pid> was read once (sync_probe) */
	bool unknown;          /* created by a failed probe: no record seen yet */
	op_cookie_t split;     /* issue 20: the interned split key (SDK 1.3), 0: none */
	struct task_map *maps;
	size_t nr_maps, cap_maps;
	size_t last_map;    /* hint: index of the map task_find_map found last */
	struct task *hnext; /* hash chain */
	struct task *dnext; /* dead list */
};

struct task_table {
	struct task **buckets;
	size_t nr_buckets; /* power of two */
	size_t nr_tasks;
	struct task *dead;
	/*
	 * reaped tasks kept for reuse, with their map arrays (a churning
	 * machine forks and reaps thousands of processes a second: no
	 * malloc/realloc/free for each)
	 */
	struct task *spare; /* chained by hnext */
	size_t nr_spare;
};

/* at most this many reaped tasks are kept for reuse */
#define TASK_SPARE_MAX 256

int task_table_init(struct task_table *tt);
void task_table_free(struct task_table *tt);
/* HOT. The live-or-dying process @tgid, or NULL. */
struct task *task_find(struct task_table *tt, uint32_t tgid);
/* Find or create @tgid (a dead one of the same tgid is replaced). NULL on ENOMEM. */
struct task *task_get(struct task_table *tt, uint32_t tgid);
/* New process @tgid forked from @ptgid: copies the parent's comm, app and maps. */
struct task *task_fork(struct task_table *tt, uint32_t tgid, uint32_t ptgid);
/* exec: drop every mapping and the app image. */
void task_exec(struct task *t);
/*
 * Add a mapping [start, start+len), replacing what it overlaps (partially
 * overlapped mappings are trimmed or split). 0 or -ENOMEM.
 */
int task_add_map(struct task *t, uint64_t start, uint64_t len, uint64_t pgoff, op_cookie_t cookie,
		 bool anon);
/* HOT. Mapping covering @pc, or NULL. */
const struct task_map *task_find_map(struct task *t, uint64_t pc);
/* Process exit: keep it findable until task_reap(). */
void task_exit(struct task_table *tt, struct task *t);
/* Free processes that exited before the current round of records. */
void task_reap(struct task_table *tt);

/* a thread whose EXIT record came (sync notes them, sfile closes their sets) */
struct task_exited {
	int32_t pid, tid;
};

#endif /* OP_CORE_TASK_H */
