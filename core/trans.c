/*
 * trans.c - event-buffer dispatch. One struct transient holds the current
 * context; the sample-file set is looked up only when a code changed it,
 * so a sample pair costs one odb update.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "trans.h"

static void trans_clear_sfile(struct trans_ctx *tr)
{
	tr->cur.v->sfile = NULL;
	tr->sfiles->pinned = NULL;
}

static void code_ctx_switch(struct trans_ctx *tr, const uint64_t *a)
{
	tr->cur.v->tid = (int32_t)a[0];
	tr->cur.v->app_cookie = (op_cookie_t)a[1];
	tr->cur.v->tgid = (int32_t)a[2];
	tr->cur.tracing = TRACE_OFF;
	trans_clear_sfile(tr);
}

/* both cpu codes: the context of the cpu being left stays as it is */
static inline void trans_enter(struct trans_ctx *tr, struct trans_cpu_ctx *c)
{
	tr->cc->gen = tr->sfiles ? tr->sfiles->gen : 0;
	tr->cc = c;
	tr->cur.v = &c->v;
	tr->cur.tracing = TRACE_OFF; /* cur.last is unused until the next trace */
}

static void code_cpu_switch(struct trans_ctx *tr, const uint64_t *a)
{
	struct trans_cpu_ctx *c = a[0] < EVB_MAX_CPU_CONTEXTS ? &tr->cpu_ctx[a[0]] : &tr->spare;

	/* the new cpu starts from the current context */
	if (c != tr->cc) {
		c->v = tr->cc->v;
		c->valid = true;
	}
	trans_enter(tr, c);
	tr->cur.v->cpu = (int32_t)a[0];
	trans_clear_sfile(tr);
}

/* back to the context set aside for a cpu (EVB_CPU_RESTORE of a valid one) */
static inline void trans_restore(struct trans_ctx *tr, struct trans_cpu_ctx *c)
{
	trans_enter(tr, c);
	/* the set may have been freed since (eviction): look it up again then */
	if (!tr->sfiles || c->gen != tr->sfiles->gen)
		c->v.sfile = NULL;
	if (tr->sfiles)
		tr->sfiles->pinned = c->v.sfile;
}

static void code_cpu_restore(struct trans_ctx *tr, const uint64_t *a)
{
	if (a[0] >= EVB_MAX_CPU_CONTEXTS || !tr->cpu_ctx[a[0]].valid) {
		code_cpu_switch(tr, a); /* nothing set aside: as a plain cpu switch */
		return;
	}
	trans_restore(tr, &tr->cpu_ctx[a[0]]);
}

static void code_cookie_switch(struct trans_ctx *tr, const uint64_t *a)
{
	tr->cur.v->cookie = (op_cookie_t)a[0];
	tr->cur.v->anon_start = tr->cur.v->anon_end = 0;
	trans_clear_sfile(tr);
}

static void code_anon_switch(struct trans_ctx *tr, const uint64_t *a)
{
	tr->cur.v->cookie = (op_cookie_t)a[0];
	tr->cur.v->anon_start = a[1];
	tr->cur.v->anon_end = a[2];
	trans_clear_sfile(tr);
}

static void code_kernel_enter(struct trans_ctx *tr, const uint64_t *a)
{
	(void)a;
	tr->cur.v->in_kernel = 1;
	trans_clear_sfile(tr);
}

static void code_user_enter(struct trans_ctx *tr, const uint64_t *a)
{
	(void)a;
	tr->cur.v->in_kernel = 0;
	trans_clear_sfile(tr);
}

static void code_trace_begin(struct trans_ctx *tr, const uint64_t *a)
{
	(void)a;
	tr->cur.tracing = TRACE_START;
}

static void code_trace_end(struct trans_ctx *tr, const uint64_t *a)
{
	(void)a;
	tr->cur.tracing = TRACE_OFF;
}

void trans_forget_sfile(struct trans_ctx *tr)
{
	unsigned i;

	for (i = 0; i < EVB_MAX_CPU_CONTEXTS; i++)
		tr->cpu_ctx[i].v.sfile = NULL;
	tr->spare.v.sfile = NULL;
	memset(tr->recent, 0, sizeof(tr->recent));
	tr->cur.last.sfile = NULL;
	if (tr->sfiles)
		tr->sfiles->pinned = NULL;
}

void trans_reset(struct trans_ctx *tr)
{
	memset(tr->cpu_ctx, 0, sizeof(tr->cpu_ctx));
	memset(&tr->spare, 0, sizeof(tr->spare));
	memset(tr->recent, 0, sizeof(tr->recent));
	memset(&tr->cur, 0, sizeof(tr->cur));
	tr->cc = &tr->spare;
	tr->cur.v = &tr->spare.v;
	tr->cur.v->size = sizeof(*tr->cur.v);
	tr->cur.v->tgid = tr->cur.v->tid = tr->cur.v->cpu = -1;
	tr->cur.v->in_kernel = -1;
	tr->cur.last = *tr->cur.v;
	if (tr->sfiles)
		tr->sfiles->pinned = NULL;
}

int trans_init(struct trans_ctx *tr, struct sfile_table *sfiles, const struct ext_registry *reg,
	       struct op_stats *stats)
{
	uint32_t i;

	memset(tr, 0, sizeof(*tr));
	tr->sfiles = sfiles;
	tr->reg = reg;
	tr->stats = stats;
	tr->core[EVB_CTX_SWITCH] = code_ctx_switch;
	tr->core[EVB_CPU_SWITCH] = code_cpu_switch;
	tr->core[EVB_CPU_RESTORE] = code_cpu_restore;
	for (i = 0; i < EVB_CORE_CODES_END; i++)
		tr->core_nargs[i] = (int8_t)evb_core_nargs(i);
	tr->core[EVB_COOKIE_SWITCH] = code_cookie_switch;
	tr->core[EVB_KERNEL_ENTER] = code_kernel_enter;
	tr->core[EVB_USER_ENTER] = code_user_enter;
	tr->core[EVB_ANON_SWITCH] = code_anon_switch;
	tr->core[EVB_TRACE_BEGIN] = code_trace_begin;
	tr->core[EVB_TRACE_END] = code_trace_end;
	trans_reset(tr);
	return 0;
}

static struct op_sfile *trans_current_sfile(struct trans_ctx *tr)
{
	struct sfile_table *tab = tr->sfiles;
	struct trans_recent *r;
	struct sfile_key key;
	struct op_sfile *sf;
	uint32_t h;

	if (tr->cur.v->sfile)
		return tr->cur.v->sfile;
	if (tr->recent_gen != tab->gen) {
		/* a set was freed: any entry may dangle */
		memset(tr->recent, 0, sizeof(tr->recent));
		tr->recent_gen = tab->gen;
	}
	if (!tr->cur.v->cookie || tr->cur.v->in_kernel < 0)
		return NULL;
	sfile_make_key(tab, tr->cur.v, &key);
	h = sfile_key_hash(&key);
	r = &tr->recent[h & (TRANS_RECENT - 1)];
	if (r->sf && r->hash == h && sfile_key_eq(&r->key, &key)) {
		sfile_touch(tab, r->sf);
		tr->cur.v->sfile = r->sf;
		tab->pinned = r->sf;
		return r->sf;
	}
	sf = sfile_find_key(tab, tr->cur.v, &key, h);
	tr->cur.v->sfile = sf;
	tab->pinned = sf;
	if (sf && tr->recent_gen == tab->gen) {
		r->key = key;
		r->hash = h;
		r->sf = sf;
	}
	return sf;
}

/* An arc of a call chain: from the current frame to the previous one. */
static void trans_arc(struct trans_ctx *tr, uint32_t counter)
{
	const struct op_trans_view *to = &tr->cur.last;
	struct op_file_spec spec = {
		.size = sizeof(spec),
		.counter = counter,
		.is_cg = true,
		.cg_to_cookie = to->cookie,
		.cg_to_is_kernel = to->in_kernel,
		.cg_to_anon_start = to->anon_start,
		.cg_to_anon_end = to->anon_end,
	};
	struct op_sample_file *f;
	struct op_sfile *sf;

	if (!to->cookie)
		return;
	sf = trans_current_sfile(tr);
	if (!sf)
		return;
	f = sfile_open_spec(tr->sfiles, sf, &spec);
	if (f)
		sfile_file_add(f, (tr->cur.v->pc << 32) | (to->pc & 0xffffffffu), 1);
}

/*
 * HOT. Count @key in the file of core counter @counter of @sf when that
 * file is open (one odb update, inline); false: not done, ask sfile_log().
 */
static inline bool trans_count_open(struct trans_ctx *tr, struct op_sfile *sf, uint64_t counter,
				    uint64_t key)
{
	odb_t *db;

	if (counter >= tr->sfiles->cfg.nr_events)
		return false;
	db = &sf->files[counter];
	if (__builtin_expect(db->fd < 0, 0))
		return false;
	/* a failure (no space to grow, file changed under us) is sfile_log's to handle */
	return odb_update_hot(db, key, 1) == 0;
}

static void trans_sample_slow(struct trans_ctx *tr, uint64_t offset, uint64_t counter64)
{
	uint32_t counter = (uint32_t)counter64;
	struct op_sfile *sf;

	if (counter64 > UINT32_MAX) {
		tr->stats->v[STAT_LOST_BAD_COUNTER]++;
		return;
	}
	if (tr->cur.v->in_kernel < 0 || !tr->cur.v->cookie) {
		tr->stats->v[STAT_LOST_NO_CONTEXT]++;
		return;
	}
	tr->cur.v->pc = offset;
	tr->cur.v->counter = counter;
	if (tr->cur.tracing == TRACE_ON) {
		trans_arc(tr, counter);
		tr->cur.last = *tr->cur.v;
		return;
	}
	sf = trans_current_sfile(tr);
	if (!sf) {
		tr->stats->v[STAT_LOST_SAMPLEFILE]++;
		return;
	}
	/* the first sample after a context code, its file open: as trans_sample() */
	if (tr->cur.tracing == TRACE_OFF && trans_count_open(tr, sf, counter, offset))
		return;
	sfile_log(tr->sfiles, sf, counter, offset, 1);
	if (tr->cur.tracing == TRACE_START) {
		tr->cur.last = *tr->cur.v;
		tr->cur.tracing = TRACE_ON;
	}
}

/*
 * HOT. The common case inline: the set of the context is known (a context
 * code clears it), no call chain is being walked, a core counter whose file
 * is open: one odb update. Everything else takes trans_sample_slow().
 */
static inline void trans_sample(struct trans_ctx *tr, uint64_t offset, uint64_t counter64)
{
	struct op_trans_view *v = tr->cur.v;
	struct op_sfile *sf = v->sfile;

	if (__builtin_expect(sf && tr->cur.tracing == TRACE_OFF &&
			     trans_count_open(tr, sf, counter64, offset), 1)) {
		v->pc = offset;
		v->counter = (uint32_t)counter64;
		return;
	}
	trans_sample_slow(tr, offset, counter64);
}

int trans_buffer(void *priv, const uint64_t *w, size_t n)
{
	struct trans_ctx *tr = priv;
	size_t i = 0;

	while (i < n) {
		uint64_t code64, nargs64;
		const uint64_t *args;
		uint32_t code, nargs;
		int expect;

		if (w[i] != EVB_ESCAPE) {
			if (n - i < 2) {
				tr->stats->v[STAT_INCOMPLETE_CODE]++;
				break;
			}
			trans_sample(tr, w[i], w[i + 1]);
			i += 2;
			continue;
		}
		/* the most frequent code (two CPUs' samples interleave), inline */
		if (n - i >= 4 && w[i + 1] == EVB_CPU_RESTORE && w[i + 2] == 1 &&
		    w[i + 3] < EVB_MAX_CPU_CONTEXTS && tr->cpu_ctx[w[i + 3]].valid) {
			trans_restore(tr, &tr->cpu_ctx[w[i + 3]]);
			i += 4;
			continue;
		}
		if (n - i < 3) {
			tr->stats->v[STAT_INCOMPLETE_CODE]++; /* dangling escape */
			break;
		}
		code64 = w[i + 1];
		nargs64 = w[i + 2];
		if (nargs64 > n - i - 3) {
			tr->stats->v[STAT_INCOMPLETE_CODE]++;
			break;
		}
		code = code64 <= OP_ESCAPE_MAX ? (uint32_t)code64 : 0;
		nargs = (uint32_t)nargs64;
		args = &w[i + 3];
		i += 3 + (size_t)nargs;
		if (code && code < EVB_CORE_CODES_END && tr->core[code]) {
			expect = tr->core_nargs[code];
			if (expect < 0 || nargs != (uint32_t)expect) {
				tr->stats->v[STAT_INCOMPLETE_CODE]++;
				continue;
			}
			tr->core[code](tr, args);
		} else if (code >= OP_ESCAPE_FIRST_PLUGIN && tr->reg && tr->reg->escapes[code] &&
			   tr->reg->escapes[code]->desc.handler) {
			const struct ext_escape *e = tr->reg->escapes[code];

			if (nargs < e->desc.min_args || nargs > e->desc.max_args) {
				tr->stats->v[STAT_INCOMPLETE_CODE]++;
				continue;
			}
			/* the handler sees the context of the preceding sample */
			trans_current_sfile(tr);
			if (e->desc.handler(e->priv, tr->cur.v, args, nargs))
				tr->stats->v[STAT_INCOMPLETE_CODE]++;
		} else {
			tr->stats->v[STAT_UNKNOWN_CODE]++;
		}
	}
	return 0;
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

op_sample_file_t *trans_sample_file_open(void *trans, op_sfile_t *sf,
					 const struct op_trans_view *t,
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
