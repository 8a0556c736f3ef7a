/*
 * trans.h - walks the event buffer: escape codes go to handlers[code] (core
 * codes and plugins' registered codes), sample pairs go to the sample file
 * of the current context (struct transient).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_TRANS_H
#define OP_CORE_TRANS_H

#include <stdint.h>

#include "evbuf.h"
#include "ext.h"
#include "sfile.h"
#include "stats.h"

enum trans_tracing { TRACE_OFF, TRACE_START, TRACE_ON };

struct transient {
	struct op_trans_view *v;    /* what plugins see: the current cpu's view
				     * (&cc->v); v->sfile is the current set */
	enum trans_tracing tracing;
	struct op_trans_view last;  /* previous frame of a call chain (arcs) */
};

struct trans_ctx;
typedef void (*trans_core_handler)(struct trans_ctx *tr, const uint64_t *args);

/*
 * sets used recently, by key (direct-mapped on its hash): tasks come back,
 * a task's kernel and user samples alternate, and unless --separate asks
 * for it, new processes of an image use the set of the one before
 */
#define TRANS_RECENT 128
struct trans_recent {
	struct sfile_key key;
	uint32_t hash;
	struct op_sfile *sf; /* NULL: free slot */
};

/*
 * The context of each cpu: a cpu code only moves cur.v to another one
 * (samples of two CPUs interleave in time). spare serves before the first
 * cpu code and for cpus >= EVB_MAX_CPU_CONTEXTS.
 */
struct trans_cpu_ctx {
	struct op_trans_view v; /* the rest of a transient only matters while tracing */
	uint64_t gen;           /* sfiles->gen when left: v.sfile valid if equal */
	bool valid;
};

struct trans_ctx {
	struct transient cur;
	struct trans_cpu_ctx *cc;  /* the context cur.v belongs to */
	struct trans_cpu_ctx cpu_ctx[EVB_MAX_CPU_CONTEXTS], spare;
	struct trans_recent recent[TRANS_RECENT];
	uint64_t recent_gen;    /* sfiles->gen the entries are valid for */
	struct sfile_table *sfiles;
	const struct ext_registry *reg; /* plugin codes; may be NULL */
	struct op_stats *stats;
	trans_core_handler core[EVB_CORE_CODES_END];
	int8_t core_nargs[EVB_CORE_CODES_END]; /* evb_core_nargs(), looked up once */
};

int trans_init(struct trans_ctx *tr, struct sfile_table *sfiles, const struct ext_registry *reg,
	       struct op_stats *stats);
/* Forget the context (everything unknown, no current sample file). */
void trans_reset(struct trans_ctx *tr);
/* Drop the pointer to the current sample-file set (before sfile_close_all). */
void trans_forget_sfile(struct trans_ctx *tr);
/*
 * Process @n words. Never fails: unknown codes are counted and skipped, a
 * record cut by the end of the buffer is counted as incomplete. Usable as
 * the event buffer's flush callback (@priv = the trans_ctx).
 */
int trans_buffer(void *priv, const uint64_t *words, size_t n);

/* host services (ext_core_services) */
int trans_log_sample(void *trans, const struct op_trans_view *t, uint32_t counter, uint64_t key,
		     uint32_t count);
op_sample_file_t *trans_sample_file_open(void *trans, op_sfile_t *sf,
					 const struct op_trans_view *t,
					 const struct op_file_spec *spec);
int trans_sample_file_add(op_sample_file_t *f, uint64_t key, uint32_t count);
int trans_sample_file_sync(op_sample_file_t *f);
void trans_sample_file_close(op_sample_file_t *f);

#endif /* OP_CORE_TRANS_H */
