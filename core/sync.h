/*
 * sync.h - buffer sync: turns decoded perf records (record.h), in time
 * order, into the event buffer (evbuf.h). Keeps the task table, interns
 * image paths, maps PCs to (image, offset), calls plugins' sample hooks and
 * source callbacks. A SAMPLE of source 0 is a core event (record.counter
 * is its counter); source 1+i belongs to the registry's source i.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_SYNC_H
#define OP_CORE_SYNC_H

#include <stdbool.h>
#include <stdint.h>

#include "cookie.h"
#include "evbuf.h"
#include "ext.h"
#include "record.h"
#include "stats.h"
#include "task.h"

/* buckets of per-pid generations (struct sync_ctx.pid_gen), a power of two */
#define SYNC_PID_GENS 1024

#define SYNC_MAX_EXITED 1024

struct sync_ctx {
	struct task_table tasks;
	struct cookie_table *cookies;
	struct op_emit *w;
	const struct ext_registry *reg; /* hooks, sources, kernel resolver; may be NULL */
	struct op_stats *stats;
	const char *proc_root; /* probe /proc for unknown processes; NULL: never (replay, tests) */
	/*
	 * The sample the plugins' on_sample hooks are given, while they run
	 * (else NULL): map_pc of a frame in anon code asks the anon resolvers
	 * at that sample's time, as the sample's own pc was asked.
	 */
	const struct op_perf_sample *hook_sample;

	/*
	 * The context last written to the event buffer, per cpu (trans keeps
	 * the same): samples of two CPUs interleave in time, so a cpu change
	 * only moves @c to that cpu's context (EVB_CPU_RESTORE) instead of
	 * copying contexts around. @c is &spare before the first cpu code and
	 * for cpus >= EVB_MAX_CPU_CONTEXTS.
	 */
	struct sync_cpu_ctx {
		bool valid, have_ctx, have_mode, have_image;
		uint32_t tid, tgid;
		op_cookie_t app, cookie;
		int in_kernel;
		uint64_t anon_start, anon_end;
		/*
		 * The mapping of this cpu's last sample: a sample of the same
		 * thread and mode with a pc in [fast_lo, fast_lo + fast_len)
		 * has key pc - fast_delta and needs no context code. Valid
		 * while fast_gen == sync_gen() of fast_pid (0: never).
		 */
		uint64_t fast_gen, fast_lo, fast_len, fast_delta;
		uint32_t fast_pid, fast_tid;
		uint16_t fast_mode;
		op_cookie_t split; /* issue 20: EVB_SPLIT_SWITCH written last */
	} cpu_ctx[EVB_MAX_CPU_CONTEXTS], spare;
	struct sync_cpu_ctx *c;
	bool have_cpu;
	uint32_t cpu;

	/*
	 * Last task of a sample, per cpu: valid while sync_gen() of its pid
	 * is unchanged.
	 */
	struct sync_last_task {
		struct task *t;
		uint32_t pid;
		uint64_t gen;
	} last[EVB_MAX_CPU_CONTEXTS];
	/*
	 * What a cached mapping or task depends on: task_gen, bumped by what
	 * may change any task (a reap, a /proc probe, a kernel symbol change,
	 * a record of unknown effect), plus pid_gen[] of the task's pid
	 * bucket, bumped by the FORK, COMM, MMAP and EXIT records of a pid.
	 * Both only grow, so their sum changes whenever either does; a
	 * process starting or mapping a library leaves the other CPUs' fast
	 * paths alone.
	 */
	uint64_t task_gen;
	uint64_t pid_gen[SYNC_PID_GENS];

	/* called for a THROTTLE record with its event id (may be NULL) */
	void (*on_throttle)(void *arg, uint64_t id);
	void *on_throttle_arg;

	/* last kernel image the resolver returned */
	struct op_kernel_image kcache;
	bool have_kcache;
	/* --- issue 20: per-process split key --- */
	bool split_on; /* --separate=cgroup: keep the plugin's keys with the processes */

	/*
	 * Threads whose EXIT record came since the owner last took them
	 * (pipeline_drain closes their sample-file sets); past
	 * SYNC_MAX_EXITED in one round the rest are not noted (their sets age
	 * out of the LRU instead).
	 */
	struct task_exited exited[SYNC_MAX_EXITED];
	unsigned nr_exited;
};

/* the generation a mapping or task cached for @pid was valid in */
static inline uint64_t sync_gen(const struct sync_ctx *s, uint32_t pid)
{
	return s->task_gen + s->pid_gen[pid & (SYNC_PID_GENS - 1)];
}

int sync_init(struct sync_ctx *s, struct cookie_table *cookies, struct op_emit *w,
	      const struct ext_registry *reg, struct op_stats *stats);
void sync_free(struct sync_ctx *s);
/* The plugins' registry: hooks, sources, kernel resolver (NULL: none). */
void sync_set_registry(struct sync_ctx *s, const struct ext_registry *reg);
/* Probe @proc_root for processes whose records were lost (NULL: never; replay, tests). */
void sync_set_proc_root(struct sync_ctx *s, const char *proc_root);
/* Called for a THROTTLE record with its event id (@fn NULL: nobody). */
void sync_set_throttle_hook(struct sync_ctx *s, void (*fn)(void *arg, uint64_t id), void *arg);
/* Process one record (the perf reader's callback). Never fails on bad input. */
int sync_record(struct sync_ctx *s, const struct op_record *r);
/* sync_record() as the perf reader's deliver callback (@sync: the sync_ctx). */
int sync_deliver(void *sync, const struct op_record *r);
/* End of a batch of records: free processes that exited. */
void sync_round_end(struct sync_ctx *s);
/* Forget the context written so far (the next sample re-emits it all). */
void sync_reset_context(struct sync_ctx *s);
/* The map_pc host service. 0, -ENOENT (no mapping/image), -ESRCH (unknown task). */
int sync_map_pc(void *sync, uint32_t pid, uint16_t cpumode, uint64_t pc, struct op_pc_map *out);
/* The cookie_path / cookie_intern host services. */
const char *sync_cookie_path(void *sync, op_cookie_t c);
op_cookie_t sync_cookie_intern(void *sync, const char *path, bool is_kernel);
/* The emit host service (escape codes of plugins: code >= OP_ESCAPE_FIRST_PLUGIN). */
int sync_emit(op_emit_t *w, uint32_t code, const uint64_t *args, uint32_t nargs);
/* --- issue 20: per-process split key --- */
/* --separate=cgroup is on: set_split_key keeps keys (off: ignores them). */
void sync_set_split(struct sync_ctx *s, bool on);
/*
 * The set_split_key host service: @pid's key (an absolute path, NULL:
 * none) interned and kept with its task. 0 (also when the split is off),
 * -EINVAL bad key, -ESRCH unknown pid, -ENOMEM.
 */
int sync_set_split_key(void *sync, uint32_t pid, const char *key);

#endif /* OP_CORE_SYNC_H */
