/*
 * trans.h - walks the event buffer: escape codes go to handlers[code] (core
 * codes and plugins' registered codes), sample pairs go to the sample file
 * of the current context (struct trans_ctx.v).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_TRANS_H
#define OP_CORE_TRANS_H

#include <stdint.h>

#include "evbuf.h"
#include "ext.h"
#include "sfile.h"
#include "stats.h"

struct trans_ctx;
typedef void (*trans_core_handler)(struct trans_ctx *tr, const uint64_t *args);

/*
 * The context of each cpu: a cpu code only moves v to another one (samples
 * of two CPUs interleave in time). spare serves before the first cpu code
 * and for cpus >= EVB_MAX_CPU_CONTEXTS. v.sfile is the context's sample-file
 * set once looked up (NULL: look it up at the next sample).
 */
struct trans_cpu_ctx {
	struct op_trans_view v;
	uint64_t epoch; /* sfile_epoch() when left: v.sfile valid if equal */
	bool valid;
};

struct trans_ctx {
	struct op_trans_view *v;  /* what plugins see: the current cpu's view (&cc->v) */
	struct trans_cpu_ctx *cc; /* the context v belongs to */
	struct trans_cpu_ctx cpu_ctx[EVB_MAX_CPU_CONTEXTS], spare;
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
op_sample_file_t *trans_sample_file_open(void *trans, op_sfile_t *sf, const struct op_trans_view *t,
					 const struct op_file_spec *spec);
int trans_sample_file_add(op_sample_file_t *f, uint64_t key, uint32_t count);
int trans_sample_file_sync(op_sample_file_t *f);
void trans_sample_file_close(op_sample_file_t *f);

#endif /* OP_CORE_TRANS_H */
