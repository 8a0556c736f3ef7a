/*
 * trans.c - event-buffer dispatch. The current cpu's context (trans_ctx.v)
 * holds its sample-file set, looked up in sfile only when a code changed
 * the context, so a sample pair costs one odb update.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "trans.h"

static void trans_clear_sfile(struct trans_ctx *tr)
{
	tr->v->sfile = NULL;
	sfile_pin(tr->sfiles, NULL);
}

static void trans_ctx_switch(struct trans_ctx *tr, const uint64_t *a)
{
	tr->v->tid = (int32_t)a[0];
	tr->v->app_cookie = (op_cookie_t)a[1];
	tr->v->tgid = (int32_t)a[2];
	trans_clear_sfile(tr);
}

/* issue 20: the process's split key (--separate=cgroup) */
static void trans_split_switch(struct trans_ctx *tr, const uint64_t *a)
{
	tr->v->split = (uint32_t)a[0];
	trans_clear_sfile(tr);
}

/* both cpu codes: the context of the cpu being left stays as it is */
static inline void trans_enter(struct trans_ctx *tr, struct trans_cpu_ctx *c)
{
	tr->cc->epoch = sfile_epoch(tr->sfiles);
	tr->cc = c;
	tr->v = &c->v;
}

static void trans_cpu_switch(struct trans_ctx *tr, const uint64_t *a)
{
	struct trans_cpu_ctx *c = a[0] < EVB_MAX_CPU_CONTEXTS ? &tr->cpu_ctx[a[0]] : &tr->spare;

	/* the new cpu starts from the current context */
	if (c != tr->cc) {
		c->v = tr->cc->v;
		c->valid = true;
	}
	trans_enter(tr, c);
	tr->v->cpu = (int32_t)a[0];
	trans_clear_sfile(tr);
}

/* back to the context set aside for a cpu (EVB_CPU_RESTORE of a valid one) */
static inline void trans_restore(struct trans_ctx *tr, struct trans_cpu_ctx *c)
{
	trans_enter(tr, c);
	/* the set may have been freed since (eviction): look it up again then */
	if (c->epoch != sfile_epoch(tr->sfiles))
		c->v.sfile = NULL;
	sfile_pin(tr->sfiles, c->v.sfile);
}

static void trans_cpu_restore(struct trans_ctx *tr, const uint64_t *a)
{
	if (a[0] >= EVB_MAX_CPU_CONTEXTS || !tr->cpu_ctx[a[0]].valid) {
		trans_cpu_switch(tr, a); /* nothing set aside: as a plain cpu switch */
		return;
	}
	trans_restore(tr, &tr->cpu_ctx[a[0]]);
}

static void trans_cookie_switch(struct trans_ctx *tr, const uint64_t *a)
{
	tr->v->cookie = (op_cookie_t)a[0];
	tr->v->anon_start = tr->v->anon_end = 0;
	trans_clear_sfile(tr);
}

static void trans_anon_switch(struct trans_ctx *tr, const uint64_t *a)
{
	tr->v->cookie = (op_cookie_t)a[0];
	tr->v->anon_start = a[1];
	tr->v->anon_end = a[2];
	trans_clear_sfile(tr);
}

static void trans_kernel_enter(struct trans_ctx *tr, const uint64_t *a)
{
	(void)a;
	tr->v->in_kernel = 1;
	trans_clear_sfile(tr);
}

static void trans_user_enter(struct trans_ctx *tr, const uint64_t *a)
{
	(void)a;
	tr->v->in_kernel = 0;
	trans_clear_sfile(tr);
}

void trans_forget_sfile(struct trans_ctx *tr)
{
	unsigned i;

	for (i = 0; i < EVB_MAX_CPU_CONTEXTS; i++)
		tr->cpu_ctx[i].v.sfile = NULL;
	tr->spare.v.sfile = NULL;
	sfile_pin(tr->sfiles, NULL);
}

void trans_reset(struct trans_ctx *tr)
{
	memset(tr->cpu_ctx, 0, sizeof(tr->cpu_ctx));
	memset(&tr->spare, 0, sizeof(tr->spare));
	tr->cc = &tr->spare;
	tr->v = &tr->spare.v;
	tr->v->size = sizeof(*tr->v);
	tr->v->tgid = tr->v->tid = tr->v->cpu = -1;
	tr->v->in_kernel = -1;
	sfile_pin(tr->sfiles, NULL);
}

int trans_init(struct trans_ctx *tr, struct sfile_table *sfiles, const struct ext_registry *reg,
	       struct op_stats *stats)
{
	uint32_t i;

	if (!sfiles || !stats)
		return -EINVAL;
	memset(tr, 0, sizeof(*tr));
	tr->sfiles = sfiles;
	tr->reg = reg;
	tr->stats = stats;
	tr->core[EVB_CTX_SWITCH] = trans_ctx_switch;
	tr->core[EVB_CPU_SWITCH] = trans_cpu_switch;
	tr->core[EVB_CPU_RESTORE] = trans_cpu_restore;
	tr->core[EVB_COOKIE_SWITCH] = trans_cookie_switch;
	tr->core[EVB_KERNEL_ENTER] = trans_kernel_enter;
	tr->core[EVB_USER_ENTER] = trans_user_enter;
	tr->core[EVB_ANON_SWITCH] = trans_anon_switch;
	tr->core[EVB_SPLIT_SWITCH] = trans_split_switch; /* issue 20 */
	for (i = 0; i < EVB_CORE_CODES_END; i++)
		tr->core_nargs[i] = (int8_t)evb_core_nargs(i);
	trans_reset(tr);
	return 0;
}

/* the set of the current context, looked up (and pinned) if a code cleared it */
static struct op_sfile *trans_current_sfile(struct trans_ctx *tr)
{
	struct op_sfile *sf = tr->v->sfile;

	if (sf)
		return sf;
	sf = sfile_lookup(tr->sfiles, tr->v);
	tr->v->sfile = sf;
	sfile_pin(tr->sfiles, sf);
	return sf;
}

static __attribute__((noinline)) void trans_sample_slow(struct trans_ctx *tr, uint64_t offset,
							uint64_t counter64)
{
	uint32_t counter = (uint32_t)counter64;
	struct op_sfile *sf;

	if (counter64 > UINT32_MAX) {
		tr->stats->v[STAT_LOST_BAD_COUNTER]++;
		return;
	}
	if (tr->v->in_kernel < 0 || !tr->v->cookie) {
		tr->stats->v[STAT_LOST_NO_CONTEXT]++;
		return;
	}
	tr->v->pc = offset;
	tr->v->counter = counter;
	sf = trans_current_sfile(tr);
	if (!sf) {
		tr->stats->v[STAT_LOST_SAMPLEFILE]++;
		return;
	}
	sfile_add_sample(tr->sfiles, sf, counter, offset);
}

/*
 * HOT. The common case inline: the set of the context is known (a context
 * code clears it), a core counter whose file is open: one odb update.
 * Everything else takes trans_sample_slow().
 */
static inline void trans_sample(struct trans_ctx *tr, uint64_t offset, uint64_t counter64)
{
	struct op_trans_view *v = tr->v;
	struct op_sfile *sf = v->sfile;

	if (__builtin_expect(sf && sfile_count_open(tr->sfiles, sf, counter64, offset), 1)) {
		v->pc = offset;
		v->counter = (uint32_t)counter64;
		return;
	}
	trans_sample_slow(tr, offset, counter64);
}

/* a plugin's escape record: its handler sees the context of the preceding sample */
static void trans_plugin_code(struct trans_ctx *tr, const struct evb_item *it)
{
	const struct ext_escape *e = tr->reg ? tr->reg->escapes[it->code] : NULL;

	if (!e || !e->desc.handler) {
		tr->stats->v[STAT_UNKNOWN_CODE]++;
		return;
	}
	if (it->nargs < e->desc.min_args || it->nargs > e->desc.max_args) {
		tr->stats->v[STAT_INCOMPLETE_CODE]++;
		return;
	}
	trans_current_sfile(tr);
	if (e->desc.handler(e->priv, tr->v, it->args, it->nargs))
		tr->stats->v[STAT_INCOMPLETE_CODE]++;
}

int trans_buffer(void *priv, const uint64_t *w, size_t n)
{
	struct trans_ctx *tr = priv;
	struct evb_item it;
	uint64_t offset, counter, cpu;
	size_t pos = 0;

	for (;;) {
		/* HOT: sample pairs, and the most frequent code (two CPUs' samples interleave) */
		if (evb_next_pair(w, n, &pos, &offset, &counter)) {
			trans_sample(tr, offset, counter);
			continue;
		}
		if (evb_cpu_restore_at(w, n, pos, &cpu) && cpu < EVB_MAX_CPU_CONTEXTS &&
		    tr->cpu_ctx[cpu].valid) {
			trans_restore(tr, &tr->cpu_ctx[cpu]);
			pos += EVB_CPU_RESTORE_WORDS;
			continue;
		}
		switch (evb_next(w, n, &pos, &it)) {
		case EVB_PAIR:
			trans_sample(tr, it.offset, it.counter);
			continue;
		case EVB_RECORD:
			break;
		case EVB_CUT:
			tr->stats->v[STAT_INCOMPLETE_CODE]++;
			return 0;
		case EVB_END:
		default:
			return 0;
		}
		if (evb_core_code(it.code) && tr->core[it.code]) {
			if (it.nargs != (uint32_t)tr->core_nargs[it.code]) {
				tr->stats->v[STAT_INCOMPLETE_CODE]++;
				continue;
			}
			tr->core[it.code](tr, it.args);
		} else if (evb_plugin_code(it.code)) {
			trans_plugin_code(tr, &it);
		} else {
			tr->stats->v[STAT_UNKNOWN_CODE]++;
		}
	}
}

/* ------------------------------------------------------------------ */
/* Host services                                                       */
/* ------------------------------------------------------------------ */

int trans_log_sample(void *trans, const struct op_trans_view *t, uint32_t counter, uint64_t key,
		     uint32_t count)
{
	struct trans_ctx *tr = trans;
	struct op_trans_view v = { 0 };
	struct op_sfile *sf;

	if (!t)
		return -EINVAL;
	memcpy(&v, t, t->size < sizeof(v) ? t->size : sizeof(v));
	v.size = sizeof(v);
	sf = sfile_find(tr->sfiles, &v);
	if (!sf) {
		tr->stats->v[STAT_LOST_SAMPLEFILE]++;
		return -ENOENT;
	}
	return sfile_log(tr->sfiles, sf, counter, key, count);
}

op_sample_file_t *trans_sample_file_open(void *trans, op_sfile_t *sf, const struct op_trans_view *t,
					 const struct op_file_spec *spec)
{
	struct trans_ctx *tr = trans;

	if (!sf && t) {
		struct op_trans_view v = { 0 };

		memcpy(&v, t, t->size < sizeof(v) ? t->size : sizeof(v));
		v.size = sizeof(v);
		sf = sfile_find(tr->sfiles, &v);
	}
	if (!sf)
		return NULL;
	return sfile_open_spec(tr->sfiles, sf, spec);
}

int trans_sample_file_add(op_sample_file_t *f, uint64_t key, uint32_t count)
{
	return sfile_file_add(f, key, count);
}

int trans_sample_file_sync(op_sample_file_t *f)
{
	return sfile_file_sync(f);
}

void trans_sample_file_close(op_sample_file_t *f)
{
	sfile_file_close(f);
}
