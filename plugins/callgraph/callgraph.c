/*
 * callgraph.c - the "callgraph" plugin: asks the core for frame-pointer call
 * chains, turns each chain into caller -> callee arcs logged into OProfile
 * {cg} sample files, and aggregates whole stacks into the session's stack
 * table (lib/op_cg_format.h). The core holds no call-graph code for this path.
 * SPDX-License-Identifier: MIT
 *
 * Flow: buffer sync calls cg_on_sample for every sample of the core events;
 * it maps each frame of the chain (PERF_CONTEXT_* markers switch between
 * kernel and user) and emits one "callgraph-chain" escape record:
 *   arg0 = nr_frames | CG_REC_TRUNCATED
 *   per frame, leaf first: w0 = cookie | in_kernel << 32 | anon << 33
 *                                 | unmapped << 34,  w1 = key (or raw pc)
 *                          anon frames add anon_start, anon_end.
 * Trans calls cg_on_chain with the context of the leaf sample; arcs go to
 *   <app>/{dep}/<caller image>/{cg}/<callee image>/EVENT...  with
 *   key = (caller key << 32) | (callee key & 0xffffffff) (oprofile-format §3.3)
 * through the sfile handlers (get_file opens, close invalidates the cache).
 *
 * Whole stacks go to a tree of nodes in the session's stack table
 * (op_cg_format.h), appended through a shared mmap and found again through an
 * index in memory. The file starts at 1.5 MiB of nodes and doubles (by 64
 * MiB at most a step) when 3/4 full, ahead of time at the periodic sync,
 * else on the sample that needs the room, up to max_mb; then new stacks are
 * counted (stacks_overflow) and opreport shows their samples as [no stack].
 * The index doubles when 3/4 full (1/2 at a sync): the new one is zeroed
 * lazily by the kernel and the old one's slots move into it 8 per new node,
 * so no step costs more than a few milliseconds.
 *
 * Each stack's context (version 3): with context=thread, context=cpu or
 * context=thread+cpu, a node under the root holds the sample's tgid/tid
 * and/or cpu, so exports label stack samples with pid/tid/cpu as the flat
 * files are split. Give it the daemon's --separate: the SDK tells a plugin
 * nothing of the split, and readers keep only what the flat files also
 * record. Without it (the default) no context node is written.
 *
 * Each stack's split key (version 4): with the daemon's --separate=cgroup
 * the trans view carries the process's key (SDK 1.3 op_trans_view.split, an
 * interned string the core names with cookie_path); a split node under the
 * root names it, so exports label stack samples with the cgroup and opreport
 * selects stacks by cgroup: as the flat files are split. Each key's string
 * is written to the table once, on its first stack; a sample finds it again
 * through a small map by the key's cookie (no allocation, no syscall).
 *
 * Arguments: --ext-feature=callgraph[:depth=N][,max_mb=N][,context=WHAT];
 * config plugins.callgraph.depth / .max_mb / .context (arguments win).
 * stacks=N / frames=N
 * (.max_stacks / .max_frames) sized the fixed table of version 1: still
 * checked, then ignored with a warning.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mremap, fallocate */
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "op_cg_format.h"
#include "op_session_layout.h"
#include "oprofile_sdk.h"
#include "../common/plugin_util.h"

#define CG_DEFAULT_DEPTH 64u
#define CG_MAX_DEPTH 254u       /* the kernel's perf_event_max_stack is 127 by default */
#define CG_DEFAULT_MAX_MB 1024u /* the table file's budget, MiB */
#define CG_MAX_MB 16384u        /* index slots stay below 2^31 */
#define CG_FIRST_NODES 65536u   /* a new table's room for nodes (1.5 MiB) */
#define CG_IX_FIRST 131072u     /* a new table's index slots (power of two) */
#define CG_IX_MOVE 8u           /* old index slots moved per new node while the index grows */
#define CG_GROW_STEP ((64u << 20) / sizeof(struct cgs_node)) /* the file grows by at most 64 MiB */
#define CG_IMAGES_MAX 2048u
#define CG_STRINGS_SIZE (256u * 1024u)
#define CG_CACHE_SIZE 1024u /* arc-file cache slots (power of two) */
#define CG_SPLITS_MAX 4096u /* distinct split keys (cgroups) a table names */
#define CG_PERF_SAMPLE_CALLCHAIN (1u << 5)

#define CG_REC_TRUNCATED (UINT64_C(1) << 32)
#define CG_F_KERNEL (UINT64_C(1) << 32)
#define CG_F_ANON (UINT64_C(1) << 33)
#define CG_F_UNMAPPED (UINT64_C(1) << 34)

struct cg_frame {
	op_cookie_t cookie; /* 0: mapped to no image */
	int32_t in_kernel;
	uint64_t key;
	uint64_t anon_start, anon_end;
};

struct cg_cache_ent {
	uint64_t gen; /* valid while equal to cg_state.gen */
	int32_t tgid, tid, cpu;
	uint32_t split; /* the process's split key: a process that moves gets new files */
	op_cookie_t app;
	uint32_t counter;
	struct cg_frame from, to; /* key fields ignored */
	op_sample_file_t *f;
};

struct cg_img_ent {
	bool used;
	op_cookie_t cookie;
	uint32_t kind;
	int32_t tgid;
	uint64_t anon_start;
	uint32_t idx;
};

/* a split key of the table: its string in the strings area, the cookie it has in this run */
struct cg_split_ent {
	op_cookie_t cookie; /* 0: not seen in this run yet (a continued table's key) */
	uint32_t off, len;
};

struct cg_state {
	op_ext_t *ctx;
	const struct op_host *host;
	uint32_t depth;
	uint64_t budget;          /* bytes the stack table file may grow to */
	bool ctx_thread, ctx_cpu; /* context= : what each stack's context node holds */
	uint32_t code;

	/* trans side */
	uint64_t gen;
	struct cg_cache_ent cache[CG_CACHE_SIZE];
	struct op_file_spec pending; /* callee of the arc get_file opens */

	/* the stack table */
	bool stacks_tried;
	int fd;
	void *map;
	size_t map_len;
	struct cgs_header2 *hdr;
	struct cgs_image *imgs;
	char *strs;
	struct cgs_node *nodes;
	uint32_t *ix;     /* node index + 1 by (parent, image, key); in memory */
	uint32_t ix_mask; /* slots - 1 */
	uint32_t *ix_old; /* the index moving into ix while it grows, else NULL */
	uint32_t ix_old_mask;
	uint64_t ix_old_pos; /* its next slot to move */
	bool full_logged;    /* this table's "no room" is in the log */
	/*
	 * The table's counts as this writer keeps them: written to the header
	 * for readers, never read back from the shared mapping (whoever else
	 * writes the file cannot steer the writes).
	 */
	uint32_t nodes_used, nodes_max, images_used, strings_used, stacks_used;
	uint64_t nodes_off;
	struct cg_img_ent imgmap[2 * CG_IMAGES_MAX];
	/* split keys: entries, and their index + 1 by cookie (open addressing) */
	struct cg_split_ent splits[CG_SPLITS_MAX];
	uint32_t nsplits;
	uint16_t splitmap[2 * CG_SPLITS_MAX];
	bool split_full_logged;
	struct timespec last_sync;
	char path[4096]; /* of the open table */
	dev_t dev;
	ino_t ino;
	bool open_error_logged;
	bool recheck; /* sets were closed: the table may have moved */

	/* scratch (no allocation per sample) */
	uint64_t rec[1 + 4 * (CG_MAX_DEPTH + 1)];
	struct cg_frame chain[CG_MAX_DEPTH + 1];
	struct cgs_frame sframes[CG_MAX_DEPTH + 1];

	/* statistics */
	uint64_t samples, samples_with_chain, frames_walked, truncated, unmapped;
	uint64_t emit_errors, bad_records, arcs, arcs_unmapped, arcs_lost, sets;
	uint64_t stacks_lost, table_grows, split_stacks;
};

/* ------------------------------------------------------------------ */
/* buffer sync side                                                    */
/* ------------------------------------------------------------------ */

static int cg_on_sample(void *priv, const struct op_perf_sample *s, op_emit_t *w)
{
	struct cg_state *st = priv;
	uint16_t mode = s->cpumode;
	uint32_t n = 0, nargs = 1;
	bool trunc = false;
	uint64_t i;
	int rc;

	st->samples++;
	if (!s->nr_callchain || !s->callchain)
		return 0;
	st->samples_with_chain++;
	for (i = 0; i < s->nr_callchain; i++) {
		uint64_t pc = s->callchain[i], w0;
		struct op_pc_map m;

		if (pc >= OP_CONTEXT_MAX) {
			if (pc == OP_CONTEXT_KERNEL)
				mode = OP_CPUMODE_KERNEL;
			else if (pc == OP_CONTEXT_USER)
				mode = OP_CPUMODE_USER;
			else /* hypervisor, guest: nothing here maps those */
				mode = OP_CPUMODE_UNKNOWN;
			continue;
		}
		if (n == st->depth) {
			trunc = true;
			break;
		}
		st->frames_walked++;
		memset(&m, 0, sizeof(m));
		m.size = sizeof(m);
		rc = mode == OP_CPUMODE_UNKNOWN ? -EINVAL :
						  st->host->map_pc(st->ctx, s->pid, mode, pc, &m);
		if (rc || !m.cookie || m.in_kernel < 0) {
			st->unmapped++;
			st->rec[nargs++] =
				CG_F_UNMAPPED | (mode == OP_CPUMODE_KERNEL ? CG_F_KERNEL : 0);
			st->rec[nargs++] = pc;
		} else {
			bool anon = m.anon_start || m.anon_end;

			w0 = m.cookie | (m.in_kernel ? CG_F_KERNEL : 0) | (anon ? CG_F_ANON : 0);
			st->rec[nargs++] = w0;
			st->rec[nargs++] = m.offset;
			if (anon) {
				st->rec[nargs++] = m.anon_start;
				st->rec[nargs++] = m.anon_end;
			}
		}
		n++;
	}
	if (trunc)
		st->truncated++;
	if (!n)
		return 0;
	st->rec[0] = n | (trunc ? CG_REC_TRUNCATED : 0);
	rc = st->host->emit(w, st->code, st->rec, nargs);
	if (rc) {
		st->emit_errors++;
		return 0; /* counted here; not a hook failure of the core's */
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* arcs (trans side)                                                   */
/* ------------------------------------------------------------------ */

static uint64_t cg_mix(uint64_t h, uint64_t v)
{
	/* every input bit reaches the low bits, which pick the slots */
	h ^= v + UINT64_C(0x9e3779b97f4a7c15) + (h << 6) + (h >> 2);
	h *= UINT64_C(0xff51afd7ed558ccd);
	return h ^ (h >> 31);
}

static bool cg_same_image(const struct cg_frame *a, const struct cg_frame *b)
{
	return a->cookie == b->cookie && (a->in_kernel == 1) == (b->in_kernel == 1) &&
	       a->anon_start == b->anon_start && a->anon_end == b->anon_end;
}

/* the view's split key (SDK 1.3), 0 from an older host's shorter view */
static uint32_t cg_view_split(const struct op_trans_view *t)
{
	return t->size >= offsetof(struct op_trans_view, split) + sizeof(t->split) ? t->split : 0;
}

static void cg_view_of(const struct op_trans_view *t, const struct cg_frame *fr,
		       struct op_trans_view *v)
{
	memset(v, 0, sizeof(*v));
	memcpy(v, t, t->size < sizeof(*v) ? t->size : sizeof(*v));
	v->size = sizeof(*v);
	v->cookie = fr->cookie;
	v->in_kernel = fr->in_kernel;
	v->anon_start = fr->anon_start;
	v->anon_end = fr->anon_end;
	v->pc = fr->key;
	v->sfile = NULL;
}

/*
 * get_file: the arc file of the set @t names (or @sf) whose callee image is
 * st->pending. Called by the plugin itself on an arc-cache miss.
 */
static op_sample_file_t *cg_get_file(void *priv, op_sfile_t *sf, void *sf_priv,
				     const struct op_trans_view *t, uint32_t counter, bool is_cg)
{
	struct cg_state *st = priv;
	struct op_file_spec spec = st->pending;

	(void)sf_priv;
	if (!is_cg)
		return NULL; /* the flat files are the core's */
	spec.counter = counter;
	return st->host->sample_file_open(st->ctx, sf, t, &spec);
}

static op_sample_file_t *cg_arc_file(struct cg_state *st, const struct op_trans_view *t,
				     const struct cg_frame *from, const struct cg_frame *to,
				     uint32_t counter)
{
	struct cg_cache_ent *e;
	struct op_trans_view v;
	uint64_t h = 0;

	h = cg_mix(h, from->cookie | (uint64_t)to->cookie << 32);
	h = cg_mix(h, from->anon_start ^ (to->anon_start << 1) ^ (uint64_t)counter << 48);
	h = cg_mix(h, (uint64_t)(uint32_t)t->tgid | (uint64_t)(uint32_t)t->tid << 32);
	h = cg_mix(h, (uint64_t)(uint32_t)t->cpu | (uint64_t)t->app_cookie << 32);
	e = &st->cache[h & (CG_CACHE_SIZE - 1)];
	if (e->f && e->gen == st->gen && e->tgid == t->tgid && e->tid == t->tid &&
	    e->cpu == t->cpu && e->split == cg_view_split(t) && e->app == t->app_cookie &&
	    e->counter == counter && cg_same_image(&e->from, from) && cg_same_image(&e->to, to))
		return e->f;
	cg_view_of(t, from, &v);
	memset(&st->pending, 0, sizeof(st->pending));
	st->pending.size = sizeof(st->pending);
	st->pending.is_cg = true;
	st->pending.cg_to_cookie = to->cookie;
	st->pending.cg_to_is_kernel = to->in_kernel;
	st->pending.cg_to_anon_start = to->anon_start;
	st->pending.cg_to_anon_end = to->anon_end;
	/* the leaf's own set when the caller is in the sampled image */
	e->f = cg_get_file(st,
			   t->sfile && from->cookie == t->cookie && from->in_kernel == t->in_kernel &&
					   from->anon_start == t->anon_start ?
				   t->sfile :
				   NULL,
			   NULL, &v, counter, true);
	/* opening may have closed other sets (and bumped gen) */
	e->gen = st->gen;
	e->tgid = t->tgid;
	e->tid = t->tid;
	e->cpu = t->cpu;
	e->split = cg_view_split(t);
	e->app = t->app_cookie;
	e->counter = counter;
	e->from = *from;
	e->to = *to;
	return e->f;
}

/* ------------------------------------------------------------------ */
/* the stack table                                                     */
/* ------------------------------------------------------------------ */

static void cg_table_point(struct cg_state *st, void *map, size_t len)
{
	struct cgs_layout2 l;

	cgs_layout2(CG_IMAGES_MAX, CG_STRINGS_SIZE, &l);
	st->map = map;
	st->map_len = len;
	st->hdr = map;
	st->imgs = (struct cgs_image *)((char *)map + l.images_off);
	st->strs = (char *)map + l.strings_off;
	st->nodes = (struct cgs_node *)((char *)map + l.nodes_off);
}

static void cg_stacks_close(struct cg_state *st)
{
	if (st->map) {
		uint64_t used = st->nodes_off + (uint64_t)st->nodes_used * sizeof(struct cgs_node);

		/* a table no longer written keeps only what it uses */
		if (used < st->map_len)
			st->hdr->nodes_max = st->nodes_max = st->nodes_used;
		msync(st->map, st->map_len, MS_SYNC);
		munmap(st->map, st->map_len);
		if (used < st->map_len && st->fd >= 0 && ftruncate(st->fd, (off_t)used))
			st->host->log(st->ctx, OP_LOG_WARN,
				      "%s: cannot cut the stack table to %" PRIu64
				      " bytes: %s (it stays %zu bytes; readers are not affected)",
				      st->path, used, strerror(errno), st->map_len);
	}
	if (st->fd >= 0)
		close(st->fd);
	free(st->ix);
	free(st->ix_old);
	st->ix = st->ix_old = NULL;
	st->map = NULL;
	st->hdr = NULL;
	st->fd = -1;
	/* image indexes and split keys belong to the table: a new one starts without any */
	memset(st->imgmap, 0, sizeof(st->imgmap));
	memset(st->splitmap, 0, sizeof(st->splitmap));
	st->nsplits = 0;
}

/*
 * A session reset (SIGHUP after samples/current was removed and made anew)
 * leaves the table unlinked: notice it, close it, and open a new one in the
 * new directory on the next stack. Also retries a failed open. Not per sample.
 */
static void cg_stacks_check(struct cg_state *st)
{
	struct stat sb;

	if (!st->map) {
		st->stacks_tried = false;
		return;
	}
	if (stat(st->path, &sb) || sb.st_ino != st->ino || sb.st_dev != st->dev) {
		st->host->log(st->ctx, OP_LOG_INFO,
			      "%s was removed (session reset?): starting a new stack table",
			      st->path);
		cg_stacks_close(st);
		st->stacks_tried = false;
	}
}

/*
 * a version 2, 3 or 4 table of this plugin's layout, its counts within the
 * @size bytes of the file (version 2 is version 3 without context nodes,
 * version 3 is version 4 without split nodes)
 */
static bool cg_header_fits(const struct cgs_header2 *h, uint64_t size)
{
	struct cgs_layout2 l;

	cgs_layout2(CG_IMAGES_MAX, CG_STRINGS_SIZE, &l);
	return !memcmp(h->magic, CGS_MAGIC, 8) &&
	       (h->version == CGS_VERSION4 || h->version == CGS_VERSION ||
		h->version == CGS_VERSION2) &&
	       h->header_size == sizeof(*h) && h->images_max == CG_IMAGES_MAX &&
	       h->strings_size == CG_STRINGS_SIZE && h->images_off == l.images_off &&
	       h->strings_off == l.strings_off && h->nodes_off == l.nodes_off &&
	       h->images_used <= h->images_max && h->strings_used <= h->strings_size &&
	       h->nodes_used <= h->nodes_max && h->stacks_used <= h->nodes_used &&
	       l.nodes_off + (uint64_t)h->nodes_max * sizeof(struct cgs_node) <= size;
}

/* Extend the file from @from to @to bytes with its blocks allocated. 0 or -errno. */
static int cg_file_extend(int fd, uint64_t from, uint64_t to)
{
	/*
	 * Blocks allocated now: a page of a shared mapping that finds no room on
	 * a full disk when first written kills the daemon with SIGBUS.
	 */
	if (!fallocate(fd, 0, (off_t)from, (off_t)(to - from)))
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS)
		return -errno;
	return ftruncate(fd, (off_t)to) ? -errno : 0;
}

static uint64_t cg_node_hash(uint32_t parent, uint32_t image, uint64_t key)
{
	return cg_mix(cg_mix(key, parent), image);
}

/* node index + 1 of (parent, image, key) in @ix, or 0 and in *slot the free slot for it */
static uint32_t cg_ix_probe(const struct cg_state *st, const uint32_t *ix, uint32_t mask,
			    uint32_t parent, uint32_t image, uint64_t key, uint32_t *slot)
{
	uint32_t s = (uint32_t)cg_node_hash(parent, image, key) & mask;

	for (;; s = (s + 1) & mask) {
		uint32_t i = ix[s];
		const struct cgs_node *n;

		if (!i) {
			*slot = s;
			return 0;
		}
		n = &st->nodes[i - 1];
		if (n->key == key && n->parent == parent && n->image == image)
			return i;
	}
}

/* node index + 1 of (parent, image, key) in either index, 0 if in none */
static uint32_t cg_ix_find(const struct cg_state *st, uint32_t parent, uint32_t image, uint64_t key)
{
	uint32_t slot, i = cg_ix_probe(st, st->ix, st->ix_mask, parent, image, key, &slot);

	if (!i && st->ix_old)
		i = cg_ix_probe(st, st->ix_old, st->ix_old_mask, parent, image, key, &slot);
	return i;
}

static void cg_ix_put(struct cg_state *st, uint32_t i)
{
	const struct cgs_node *n = &st->nodes[i - 1];
	uint32_t s = (uint32_t)cg_node_hash(n->parent, n->image, n->key) & st->ix_mask;

	while (st->ix[s])
		s = (s + 1) & st->ix_mask;
	st->ix[s] = i;
}

/* Move up to @slots slots of the old index into the new one; free it once empty. */
static void cg_ix_move(struct cg_state *st, uint64_t slots)
{
	uint64_t size = (uint64_t)st->ix_old_mask + 1, end = st->ix_old_pos + slots;

	if (!st->ix_old)
		return;
	if (end > size || end < slots)
		end = size;
	for (; st->ix_old_pos < end; st->ix_old_pos++)
		if (st->ix_old[st->ix_old_pos])
			cg_ix_put(st, st->ix_old[st->ix_old_pos]);
	if (st->ix_old_pos == size) {
		free(st->ix_old);
		st->ix_old = NULL;
	}
}

/*
 * Start doubling the index: the new one (zero pages until touched) takes new
 * nodes at once, the old one is still searched until its slots have moved
 * (cg_ix_move). 0 or -ENOMEM.
 */
static int cg_ix_grow(struct cg_state *st)
{
	uint64_t slots = 2 * ((uint64_t)st->ix_mask + 1);
	uint32_t *ix;

	cg_ix_move(st, UINT64_MAX); /* the last move, if any, ends first (not expected) */
	ix = calloc(slots, sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	st->ix_old = st->ix;
	st->ix_old_mask = st->ix_mask;
	st->ix_old_pos = 0;
	st->ix = ix;
	st->ix_mask = (uint32_t)(slots - 1);
	return 0;
}

/* A new index of @slots slots (a power of two, more than the nodes) over every node. */
static int cg_ix_build(struct cg_state *st, uint64_t slots)
{
	uint32_t *ix = calloc(slots, sizeof(*ix)), used = st->nodes_used;

	if (!ix)
		return -ENOMEM;
	free(st->ix);
	free(st->ix_old);
	st->ix_old = NULL;
	st->ix = ix;
	st->ix_mask = (uint32_t)(slots - 1);
	for (uint32_t i = 0; i < used; i++)
		cg_ix_put(st, i + 1);
	return 0;
}

/*
 * Room for @more nodes beyond those used: the file doubles (by CG_GROW_STEP
 * at most a step; more steps if asked) up to the budget and is mapped
 * again. 0, -ENOSPC past the budget, -errno.
 */
static int cg_table_grow(struct cg_state *st, uint64_t more)
{
	uint64_t cap = (st->budget - st->nodes_off) / sizeof(struct cgs_node);
	uint64_t want = (uint64_t)st->nodes_used + more, n = st->nodes_max ? st->nodes_max : 1;
	uint64_t len;
	void *m;
	int rc;

	if (want <= st->nodes_max)
		return 0;
	if (cap > UINT32_MAX / 2)
		cap = UINT32_MAX / 2;
	if (want > cap)
		return -ENOSPC;
	while (n < want)
		n += n < CG_GROW_STEP ? n : CG_GROW_STEP;
	if (n > cap)
		n = cap;
	len = st->nodes_off + n * sizeof(struct cgs_node);
	if (len > st->map_len) {
		rc = cg_file_extend(st->fd, st->map_len, len);
		if (rc)
			return rc;
		m = mremap(st->map, st->map_len, len, MREMAP_MAYMOVE);
		if (m == MAP_FAILED)
			return -errno; /* the file is longer than nodes_max says: harmless */
		cg_table_point(st, m, len);
	}
	st->hdr->nodes_max = st->nodes_max = (uint32_t)n;
	st->table_grows++;
	return 0;
}

/* "no room" once per table, with what it costs and what fixes it */
static void cg_table_full(struct cg_state *st, int rc)
{
	if (st->full_logged)
		return;
	st->full_logged = true;
	if (rc == -ENOSPC)
		st->host->log(st->ctx, OP_LOG_WARN,
			      "%s: the stack table reached its budget of %" PRIu64 " MiB (%u stacks, "
			      "%u nodes): samples with a new stack are counted as stacks_overflow and "
			      "opreport shows them as [no stack] - raise it with "
			      "--ext-feature=callgraph:max_mb=N (config plugins.callgraph.max_mb)",
			      st->path, st->budget >> 20, st->stacks_used, st->nodes_used);
	else
		st->host->log(st->ctx, OP_LOG_WARN,
			      "%s: the stack table cannot grow past %zu bytes: %s; samples with a "
			      "new stack are counted as stacks_overflow and shown by opreport as "
			      "[no stack] - check the session's file system",
			      st->path, st->map_len, strerror(-rc));
}

static void cg_imgmap_put(struct cg_state *st, op_cookie_t cookie, uint32_t kind, int32_t tgid,
			  uint64_t anon_start, uint32_t idx);

/* continuing a version 4 table: its split keys, found again by their strings */
static void cg_relearn_splits(struct cg_state *st)
{
	st->nsplits = 0;
	memset(st->splitmap, 0, sizeof(st->splitmap));
	for (uint32_t i = 0; i < st->nodes_used && st->nsplits < CG_SPLITS_MAX; i++) {
		const struct cgs_node *n = &st->nodes[i];
		uint32_t off = (uint32_t)n->key, len = (uint32_t)(n->key >> 32);

		/* only what a reader would take: right under a root, a whole name */
		if (n->image != CGS_SPLIT_IMAGE || !n->parent || n->parent - 1 >= i ||
		    st->nodes[n->parent - 1].parent || !len ||
		    (uint64_t)off + len >= CG_STRINGS_SIZE || st->strs[off + len])
			continue;
		st->splits[st->nsplits++] = (struct cg_split_ent){ .off = off, .len = len };
	}
}

/* continuing a table (--append): map its image names back to this run's cookies */
static void cg_relearn_images(struct cg_state *st)
{
	memset(st->imgmap, 0, sizeof(st->imgmap));
	for (uint32_t i = 0; i < st->images_used; i++) {
		const struct cgs_image *ci = &st->imgs[i];
		op_cookie_t c;

		if ((uint64_t)ci->name_off + ci->name_len >= CG_STRINGS_SIZE ||
		    st->strs[ci->name_off + ci->name_len])
			continue;
		c = st->host->cookie_intern(st->ctx, st->strs + ci->name_off,
					    ci->kind == CGS_IMG_KERNEL);
		if (c)
			cg_imgmap_put(st, c, ci->kind, ci->tgid, ci->anon_start, i);
	}
}

/* Open (or continue) <session>/samples/current/callgraph/stacks. Once. */
static void cg_stacks_open(struct cg_state *st)
{
	const char *sd = st->host->session_dir(st->ctx);
	uint64_t len, slots = CG_IX_FIRST;
	struct cgs_header2 hc;
	struct cgs_layout2 l;
	char path[4096];
	struct stat sb;
	bool fresh;
	void *m;
	int rc;

	st->stacks_tried = true;
	st->full_logged = false;
	st->split_full_logged = false;
	if (!sd) {
		st->host->log(st->ctx, OP_LOG_WARN,
			      "no session directory: whole stacks are not recorded (arcs still are)");
		return;
	}
	cgs_layout2(CG_IMAGES_MAX, CG_STRINGS_SIZE, &l);
	snprintf(path, sizeof(path), "%s/" OP_SESSION_CURRENT_PATH "/" OP_SESSION_CG_DIR, sd);
	if (mkdir(path, 0755) && errno != EEXIST)
		goto out_err;
	snprintf(path, sizeof(path), "%s/" OP_SESSION_CURRENT_PATH "/" OP_SESSION_CG_STACKS_PATH,
		 sd);
	st->fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (st->fd < 0 || fstat(st->fd, &sb) || !S_ISREG(sb.st_mode))
		goto out_err;
	memcpy(st->path, path, sizeof(st->path));
	st->dev = sb.st_dev;
	st->ino = sb.st_ino;
	fresh = (uint64_t)sb.st_size < l.nodes_off;
	if (!fresh) {
		len = (uint64_t)sb.st_size;
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, st->fd, 0);
		if (m == MAP_FAILED)
			goto out_err;
		cg_table_point(st, m, len);
		memcpy(&hc, st->hdr, sizeof(hc)); /* checked and used as one copy */
		if (!cg_header_fits(&hc, len)) {
			/* a version 1 table, another layout or a damaged file: start over */
			st->host->log(st->ctx, OP_LOG_INFO,
				      "%s is not a version %u, %u or %u stack table of this plugin: "
				      "starting a new one",
				      path, CGS_VERSION2, CGS_VERSION, CGS_VERSION4);
			munmap(m, len);
			st->map = NULL;
			fresh = true;
		}
	}
	if (fresh) {
		struct cgs_header2 *h;
		uint64_t n = (st->budget - l.nodes_off) / sizeof(struct cgs_node);

		if (n > CG_FIRST_NODES)
			n = CG_FIRST_NODES;
		len = l.nodes_off + n * sizeof(struct cgs_node);
		if (ftruncate(st->fd, 0))
			goto out_err;
		rc = cg_file_extend(st->fd, 0, len);
		if (rc) {
			errno = -rc;
			goto out_err;
		}
		m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, st->fd, 0);
		if (m == MAP_FAILED)
			goto out_err;
		cg_table_point(st, m, len);
		h = st->hdr;
		/* version 2 while no stack has a context: older readers still read it */
		h->version = st->ctx_thread || st->ctx_cpu ? CGS_VERSION : CGS_VERSION2;
		h->header_size = sizeof(*h);
		h->images_max = CG_IMAGES_MAX;
		h->strings_size = CG_STRINGS_SIZE;
		h->nodes_max = (uint32_t)n;
		h->images_off = (uint32_t)l.images_off;
		h->strings_off = (uint32_t)l.strings_off;
		h->nodes_off = (uint32_t)l.nodes_off;
		h->budget = st->budget;
		memcpy(h->magic, CGS_MAGIC, 8); /* last: the header is complete */
		st->nodes_used = st->images_used = st->strings_used = st->stacks_used = 0;
		st->nodes_max = (uint32_t)n;
	} else {
		/* checked against the file by cg_header_fits; from here on ours */
		st->nodes_used = hc.nodes_used;
		st->nodes_max = hc.nodes_max;
		st->images_used = hc.images_used;
		st->strings_used = hc.strings_used;
		st->stacks_used = hc.stacks_used;
		st->hdr->budget = st->budget;
		/* a version 2 table goes on as version 3 once stacks get a context */
		if ((st->ctx_thread || st->ctx_cpu) && st->hdr->version == CGS_VERSION2)
			st->hdr->version = CGS_VERSION;
		cg_relearn_images(st);
		cg_relearn_splits(st);
	}
	st->nodes_off = l.nodes_off;
	/* at most half full after a (re)build */
	while (slots < 2 * (uint64_t)st->nodes_used)
		slots *= 2;
	if (cg_ix_build(st, slots)) {
		errno = ENOMEM;
		goto out_err;
	}
	clock_gettime(CLOCK_MONOTONIC_COARSE, &st->last_sync);
	return;
out_err:
	if (!st->open_error_logged)
		st->host->log(st->ctx, OP_LOG_ERR,
			      "%s: cannot create the stack table: %s; whole stacks are not recorded "
			      "(arcs still are) until it can be (retried at each sync) - check the "
			      "session directory",
			      path, strerror(errno));
	st->open_error_logged = true;
	cg_stacks_close(st);
}

static uint64_t cg_img_hash(op_cookie_t cookie, uint32_t kind, int32_t tgid, uint64_t anon_start)
{
	return cg_mix(cg_mix(cookie, kind | (uint64_t)(uint32_t)tgid << 32), anon_start);
}

static void cg_imgmap_put(struct cg_state *st, op_cookie_t cookie, uint32_t kind, int32_t tgid,
			  uint64_t anon_start, uint32_t idx)
{
	uint64_t hv = cg_img_hash(cookie, kind, tgid, anon_start);

	for (uint32_t i = 0; i < 2 * CG_IMAGES_MAX; i++) {
		struct cg_img_ent *e = &st->imgmap[(uint32_t)(hv + i) & (2 * CG_IMAGES_MAX - 1)];

		if (e->used)
			continue;
		*e = (struct cg_img_ent){ .used = true,
					  .cookie = cookie,
					  .kind = kind,
					  .tgid = tgid,
					  .anon_start = anon_start,
					  .idx = idx };
		return;
	}
}

static uint32_t cg_image_kind(const struct cg_frame *f)
{
	if (f->anon_start || f->anon_end)
		return CGS_IMG_ANON;
	return f->in_kernel == 1 ? CGS_IMG_KERNEL : CGS_IMG_USER;
}

/* image index + 1 of @f in the table (adding it), 0 if it has none or no room */
static uint32_t cg_image_index(struct cg_state *st, const struct cg_frame *f, int32_t tgid)
{
	uint32_t kind = cg_image_kind(f), i, slot;
	struct cg_img_ent *e;
	const char *name;
	size_t len;
	uint64_t hv;

	if (!f->cookie)
		return 0;
	if (kind != CGS_IMG_ANON)
		tgid = -1;
	hv = cg_img_hash(f->cookie, kind, tgid, f->anon_start);
	for (i = 0; i < 2 * CG_IMAGES_MAX; i++) {
		slot = (uint32_t)(hv + i) & (2 * CG_IMAGES_MAX - 1);
		e = &st->imgmap[slot];
		if (!e->used)
			break;
		if (e->cookie == f->cookie && e->kind == kind && e->tgid == tgid &&
		    e->anon_start == f->anon_start)
			return e->idx + 1;
	}
	if (i == 2 * CG_IMAGES_MAX || st->images_used >= CG_IMAGES_MAX)
		return 0;
	name = st->host->cookie_path(st->ctx, f->cookie);
	if (!name)
		name = "?";
	len = strlen(name);
	if (len + 1 > CG_STRINGS_SIZE - st->strings_used)
		return 0;
	memcpy(st->strs + st->strings_used, name, len + 1);
	st->imgs[st->images_used] = (struct cgs_image){
		.name_off = st->strings_used,
		.name_len = (uint32_t)len,
		.kind = kind,
		.tgid = tgid,
		.anon_start = f->anon_start,
		.anon_end = f->anon_end,
	};
	st->strings_used += (uint32_t)len + 1;
	st->hdr->strings_used = st->strings_used;
	e->used = true;
	e->cookie = f->cookie;
	e->kind = kind;
	e->tgid = tgid;
	e->anon_start = f->anon_start;
	e->idx = st->images_used++;
	__atomic_store_n(&st->hdr->images_used, st->images_used, __ATOMIC_RELEASE);
	return e->idx + 1;
}

/*
 * The split node key (name_off | name_len << 32) of split key @cookie in
 * *@key: found by cookie, else (once per key and table) its string found
 * among a continued table's keys or written to the strings area. false
 * when it has no room or no name.
 */
static bool cg_split_key(struct cg_state *st, op_cookie_t cookie, uint64_t *key)
{
	const uint32_t mask = 2 * CG_SPLITS_MAX - 1;
	uint64_t hv = cg_mix(cookie, CG_SPLITS_MAX);
	struct cg_split_ent *e = NULL;
	uint32_t i, slot = 0, j;
	const char *name;
	size_t len;

	for (i = 0; i <= mask; i++) {
		uint16_t x;

		slot = (uint32_t)(hv + i) & mask;
		x = st->splitmap[slot];
		if (!x)
			break;
		if (st->splits[x - 1].cookie == cookie) {
			*key = st->splits[x - 1].off | (uint64_t)st->splits[x - 1].len << 32;
			return true;
		}
	}
	/* a new key of this run: not per sample */
	name = st->host->cookie_path(st->ctx, cookie);
	if (i > mask || !name || name[0] != '/')
		return false;
	len = strlen(name);
	for (j = 0; j < st->nsplits && !e; j++)
		if (!st->splits[j].cookie && st->splits[j].len == len &&
		    !memcmp(st->strs + st->splits[j].off, name, len))
			e = &st->splits[j];
	if (!e) {
		if (st->nsplits == CG_SPLITS_MAX || len + 1 > CG_STRINGS_SIZE - st->strings_used) {
			if (!st->split_full_logged)
				st->host->log(st->ctx, OP_LOG_WARN,
					      "%s: no room for split key %s in the stack table (%u keys, "
					      "%u of %u name bytes used): stacks of processes with a new "
					      "key are counted as stacks_overflow and opreport shows "
					      "them as [no stack]",
					      st->path, name, st->nsplits, st->strings_used,
					      CG_STRINGS_SIZE);
			st->split_full_logged = true;
			return false;
		}
		/* the name before any node names it */
		memcpy(st->strs + st->strings_used, name, len + 1);
		e = &st->splits[st->nsplits++];
		e->off = st->strings_used;
		e->len = (uint32_t)len;
		st->strings_used += (uint32_t)len + 1;
		st->hdr->strings_used = st->strings_used;
	}
	e->cookie = cookie;
	st->splitmap[slot] = (uint16_t)(e - st->splits + 1);
	*key = e->off | (uint64_t)e->len << 32;
	return true;
}

/*
 * Node index + 1 of (parent, image, key), appended when missing with room
 * for the @below nodes still to come under it; 0 when there is no room.
 */
static uint32_t cg_node_get(struct cg_state *st, uint32_t parent, uint32_t image, uint64_t key,
			    uint32_t below)
{
	uint32_t slot, i = cg_ix_find(st, parent, image, key), idx;
	struct cgs_node *n;
	int rc;

	if (i)
		return i;
	/* rare steps (the sync handler usually takes them first): the file, the index grow */
	if (st->nodes_used + (uint64_t)below + 1 > st->nodes_max) {
		rc = cg_table_grow(st, (uint64_t)below + 1);
		if (rc) {
			cg_table_full(st, rc);
			return 0;
		}
	}
	if ((uint64_t)(st->nodes_used + 1) * 4 > ((uint64_t)st->ix_mask + 1) * 3) {
		rc = cg_ix_grow(st);
		if (rc) {
			cg_table_full(st, rc);
			return 0;
		}
	}
	cg_ix_move(st, CG_IX_MOVE);
	cg_ix_probe(st, st->ix, st->ix_mask, parent, image, key, &slot);
	idx = st->nodes_used++;
	n = &st->nodes[idx];
	n->key = key;
	n->count = 0;
	n->parent = parent;
	n->image = image;
	st->hdr->nodes_max = st->nodes_max; /* published again: the header is only ever written */
	__atomic_store_n(&st->hdr->nodes_used, st->nodes_used, __ATOMIC_RELEASE);
	st->ix[slot] = idx + 1;
	return idx + 1;
}

static void cg_stack_add(struct cg_state *st, const struct op_trans_view *t,
			 const struct cg_frame *fr, uint32_t n, bool trunc, uint32_t counter)
{
	struct cg_frame app = { 0 };
	uint32_t app_idx, i, cur, below, split = cg_view_split(t);
	uint16_t flags = trunc ? CGS_STACK_TRUNCATED : 0;
	uint64_t skey = 0;
	struct cgs_node *leaf;

	if (st->recheck) {
		st->recheck = false;
		cg_stacks_check(st);
	}
	if (!st->stacks_tried)
		cg_stacks_open(st);
	if (!st->hdr)
		return;
	st->hdr->total_samples++;
	app.cookie = t->app_cookie ? t->app_cookie : 0;
	app.in_kernel = 0;
	app_idx = cg_image_index(st, &app, -1);
	for (i = 0; i < n; i++) {
		st->sframes[i].image = cg_image_index(st, &fr[i], t->tgid);
		st->sframes[i].key = fr[i].key;
	}
	/* from the stack's root (event, application), its split key and context, to the leaf */
	if (split) {
		if (!cg_split_key(st, split, &skey)) {
			st->hdr->overflow_samples++;
			st->stacks_lost++;
			return;
		}
		flags |= CGS_STACK_SPLIT;
		/* version 4 before its first split node is published */
		if (st->hdr->version != CGS_VERSION4)
			st->hdr->version = CGS_VERSION4;
		st->split_stacks++;
	}
	if (st->ctx_thread || st->ctx_cpu)
		flags |= CGS_STACK_CONTEXT;
	below = n + !!(flags & CGS_STACK_SPLIT) + !!(flags & CGS_STACK_CONTEXT);
	cur = cg_node_get(st, 0, app_idx, counter | (uint64_t)flags << 32, below);
	if (cur && (flags & CGS_STACK_SPLIT))
		cur = cg_node_get(st, cur, CGS_SPLIT_IMAGE, skey, --below);
	if (cur && (flags & CGS_STACK_CONTEXT)) {
		int32_t tgid = st->ctx_thread ? t->tgid : -1, tid = st->ctx_thread ? t->tid : -1;
		uint32_t cpu1 = st->ctx_cpu && t->cpu >= 0 ? (uint32_t)t->cpu + 1 : 0;

		cur = cg_node_get(st, cur, CGS_CTX_IMAGE | (cpu1 & ~CGS_CTX_IMAGE),
				  (uint32_t)tgid | (uint64_t)(uint32_t)tid << 32, n);
	}
	for (i = n; cur && i-- > 0;)
		cur = cg_node_get(st, cur, st->sframes[i].image, st->sframes[i].key, i);
	if (!cur) {
		st->hdr->overflow_samples++;
		st->stacks_lost++;
		return;
	}
	leaf = &st->nodes[cur - 1];
	if (!leaf->count)
		st->hdr->stacks_used = ++st->stacks_used;
	leaf->count++;
}

/* ------------------------------------------------------------------ */
/* the escape handler                                                  */
/* ------------------------------------------------------------------ */

static int cg_on_chain(void *priv, const struct op_trans_view *t, const uint64_t *args,
		       uint32_t nargs)
{
	struct cg_state *st = priv;
	uint32_t n, i, a = 1;
	bool trunc;

	if (!nargs) {
		st->bad_records++;
		return -EINVAL;
	}
	n = (uint32_t)args[0];
	trunc = args[0] & CG_REC_TRUNCATED;
	if (!n || n > st->depth || n > CG_MAX_DEPTH) {
		st->bad_records++;
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		struct cg_frame *f = &st->chain[i];
		uint64_t w0;

		if (nargs - a < 2) {
			st->bad_records++;
			return -EINVAL;
		}
		w0 = args[a++];
		memset(f, 0, sizeof(*f));
		f->in_kernel = (w0 & CG_F_KERNEL) ? 1 : 0;
		f->key = args[a++];
		if (!(w0 & CG_F_UNMAPPED))
			f->cookie = (op_cookie_t)w0;
		if (w0 & CG_F_ANON) {
			if (nargs - a < 2) {
				st->bad_records++;
				return -EINVAL;
			}
			f->anon_start = args[a++];
			f->anon_end = args[a++];
		}
	}
	if (a != nargs) {
		st->bad_records++;
		return -EINVAL;
	}
	for (i = 0; i + 1 < n; i++) {
		const struct cg_frame *to = &st->chain[i], *from = &st->chain[i + 1];
		op_sample_file_t *f;

		if (!to->cookie || !from->cookie) {
			st->arcs_unmapped++;
			continue;
		}
		f = cg_arc_file(st, t, from, to, t->counter);
		if (!f ||
		    st->host->sample_file_add(f, (from->key << 32) | (to->key & 0xffffffffu), 1)) {
			st->arcs_lost++;
			continue;
		}
		st->arcs++;
	}
	cg_stack_add(st, t, st->chain, n, trunc, t->counter);
	return 0;
}

/* ------------------------------------------------------------------ */
/* sfile handlers                                                      */
/* ------------------------------------------------------------------ */

static int cg_sf_create(void *priv, op_sfile_t *sf, void **sf_priv)
{
	struct cg_state *st = priv;

	(void)sf;
	*sf_priv = NULL; /* arc files hang off the set itself, found through the cache */
	st->sets++;
	return 0;
}

static int cg_sf_dup(void *priv, op_sfile_t *to, void **to_priv, const op_sfile_t *from,
		     void *from_priv)
{
	(void)priv;
	(void)to;
	(void)from;
	(void)from_priv;
	*to_priv = NULL;
	return 0;
}

static int cg_sf_close(void *priv, op_sfile_t *sf, void *sf_priv)
{
	struct cg_state *st = priv;

	(void)sf;
	(void)sf_priv;
	/* the set's files (some of them cached here) go away with it */
	st->gen++;
	/*
	 * A rotation or reset closes every set, then moves samples/current away:
	 * look at the table's path again before the next stack is stored.
	 */
	st->recheck = true;
	return 0;
}

static int cg_sf_sync(void *priv, op_sfile_t *sf, void *sf_priv)
{
	struct cg_state *st = priv;
	struct timespec now;

	(void)sf;
	(void)sf_priv;
	/* called once per set: flush the stack table once per sync round */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	if (now.tv_sec == st->last_sync.tv_sec &&
	    now.tv_nsec - st->last_sync.tv_nsec < 200 * 1000 * 1000)
		return 0;
	st->last_sync = now;
	cg_stacks_check(st);
	if (!st->map)
		return 0;
	/* room ahead of the samples: a file 3/4 full grows, an index half full doubles */
	if (st->nodes_used > st->nodes_max / 4 * 3)
		cg_table_grow(st, (uint64_t)st->nodes_max - st->nodes_used + 1);
	if (!st->ix_old && st->nodes_used > ((uint64_t)st->ix_mask + 1) / 2)
		cg_ix_grow(st);
	cg_ix_move(st, 1u << 18); /* a few milliseconds at most */
	return msync(st->map, st->map_len, MS_ASYNC) ? -errno : 0;
}

static const struct op_sfile_ops cg_sfile_ops = {
	.size = sizeof(struct op_sfile_ops),
	.create = cg_sf_create,
	.dup = cg_sf_dup,
	.close = cg_sf_close,
	.sync = cg_sf_sync,
	.get_file = cg_get_file,
};

/* ------------------------------------------------------------------ */
/* stats                                                               */
/* ------------------------------------------------------------------ */

static void cg_print_stats(void *priv, const struct op_stats_sink *sink)
{
	struct cg_state *st = priv;
	char line[128];

	snprintf(line, sizeof(line), "call chains up to %u frames (frame pointers)", st->depth);
	if (sink->text)
		sink->text(sink, line);
	sink->counter(sink, "samples", st->samples);
	sink->counter(sink, "samples_with_chain", st->samples_with_chain);
	sink->counter(sink, "frames_walked", st->frames_walked);
	sink->counter(sink, "chains_truncated", st->truncated);
	sink->counter(sink, "frames_unmapped", st->unmapped);
	sink->counter(sink, "arcs", st->arcs);
	sink->counter(sink, "arcs_unmapped", st->arcs_unmapped);
	sink->counter(sink, "arcs_lost", st->arcs_lost);
	sink->counter(sink, "emit_errors", st->emit_errors);
	sink->counter(sink, "bad_records", st->bad_records);
	sink->counter(sink, "stacks_distinct", st->hdr ? st->stacks_used : 0);
	sink->counter(sink, "stack_nodes", st->hdr ? st->nodes_used : 0);
	sink->counter(sink, "stack_table_bytes", st->hdr ? st->map_len : 0);
	sink->counter(sink, "stack_table_grows", st->table_grows);
	sink->counter(sink, "stacks_overflow", st->stacks_lost);
	sink->counter(sink, "stacks_split", st->split_stacks);
}

static const struct op_stats_ops cg_stats_ops = {
	.size = sizeof(struct op_stats_ops),
	.print_stats = cg_print_stats,
};

/* ------------------------------------------------------------------ */
/* init                                                                */
/* ------------------------------------------------------------------ */

/* strict decimal that fits 32 bits */
static bool cg_parse_u32(const char *s, uint32_t *out)
{
	uint64_t v;

	if (!pu_parse_dec_u64(s, &v) || v > UINT32_MAX)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* context=thread|cpu|thread+cpu|none (what --separate splits). 0 or -EINVAL (logged). */
static int cg_set_context(struct cg_state *st, const char *val, const char *where)
{
	static const struct {
		const char *name;
		bool thread, cpu;
	} ctx[] = { { "none", false, false },
		    { "thread", true, false },
		    { "cpu", false, true },
		    { "thread+cpu", true, true },
		    { "cpu+thread", true, true } };

	for (size_t i = 0; i < sizeof(ctx) / sizeof(ctx[0]); i++) {
		if (!strcmp(val, ctx[i].name)) {
			st->ctx_thread = ctx[i].thread;
			st->ctx_cpu = ctx[i].cpu;
			return 0;
		}
	}
	st->host->log(st->ctx, OP_LOG_ERR,
		      "bad context '%s' in %s: expected none, thread, cpu or thread+cpu (as the "
		      "daemon's --separate splits the sample files)",
		      val, where);
	return -EINVAL;
}

static int cg_set(struct cg_state *st, const char *key, uint64_t v, bool ok, const char *text,
		  const char *where)
{
	if (!strcmp(key, "context"))
		return cg_set_context(st, text, where);
	if (!strcmp(key, "depth")) {
		if (!ok || v < 1 || v > CG_MAX_DEPTH) {
			st->host->log(st->ctx, OP_LOG_ERR,
				      "bad depth '%s' in %s: expected 1..%u frames (the kernel's "
				      "kernel.perf_event_max_stack, 127 by default, also bounds it)",
				      text, where, CG_MAX_DEPTH);
			return -EINVAL;
		}
		st->depth = (uint32_t)v;
	} else if (!strcmp(key, "max_mb")) {
		if (!ok || v < 1 || v > CG_MAX_MB) {
			st->host->log(st->ctx, OP_LOG_ERR,
				      "bad stack table budget '%s' in %s: expected 1..%u MiB (the file "
				      "grows up to it; the default is %u)",
				      text, where, CG_MAX_MB, CG_DEFAULT_MAX_MB);
			return -EINVAL;
		}
		st->budget = v << 20;
	} else if (!strcmp(key, "stacks") || !strcmp(key, "max_stacks") || !strcmp(key, "frames") ||
		   !strcmp(key, "max_frames")) {
		bool stacks = strstr(key, "stacks");

		/* the sizes of the version 1 table: checked as they were, then ignored */
		if (!ok || (stacks && (v < 16 || v > (1u << 24) || (v & (v - 1)))) ||
		    (!stacks && (v < 256 || v > (1u << 26)))) {
			st->host->log(st->ctx, OP_LOG_ERR,
				      stacks ?
					      "bad stack table size '%s' in %s: expected a power of "
					      "two 16..16777216" :
					      "bad frame pool size '%s' in %s: expected 256..67108864",
				      text, where);
			return -EINVAL;
		}
		st->host->log(st->ctx, OP_LOG_WARN,
			      "%s is ignored: the stack table grows as needed up to max_mb (%" PRIu64
			      " MiB) - set max_mb=N instead",
			      where, st->budget >> 20);
	} else {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "unknown argument '%s' in %s: expected depth=N, max_mb=N or "
			      "context=thread|cpu|thread+cpu",
			      key, where);
		return -EINVAL;
	}
	return 0;
}

static int cg_read_config(struct cg_state *st)
{
	static const char *const keys[] = { "depth", "max_mb", "max_stacks", "max_frames" };
	char text[32], where[64];
	const char *ctx;
	bool found;
	int64_t v;
	size_t i;
	int rc;

	rc = pu_config_string(st->host, st->ctx, "context", &ctx, &found);
	if (!rc && found)
		rc = cg_set_context(st, ctx, "config plugins.callgraph.context");
	if (rc)
		return rc;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		rc = pu_config_int64(st->host, st->ctx, keys[i], &v, &found);
		if (rc)
			return rc;
		if (!found)
			continue;
		snprintf(text, sizeof(text), "%" PRId64, v);
		snprintf(where, sizeof(where), "config plugins.callgraph.%s", keys[i]);
		rc = cg_set(st, keys[i], (uint64_t)v, v > 0, text, where);
		if (rc)
			return rc;
	}
	return 0;
}

static int cg_parse_args(struct cg_state *st, const char *args)
{
	char buf[256], where[300], *tok, *save = NULL;
	int rc;

	if (!args || !*args)
		return 0;
	if (strlen(args) >= sizeof(buf)) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "arguments too long in --ext-feature=callgraph:... (%zu bytes, at "
			      "most %zu): expected depth=N,max_mb=N,context=WHAT",
			      strlen(args), sizeof(buf) - 1);
		return -EINVAL;
	}
	memcpy(buf, args, strlen(args) + 1);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *val = strchr(tok, '=');
		uint32_t v = 0;
		bool ok;

		if (!val) {
			snprintf(where, sizeof(where), "--ext-feature=callgraph:%s", tok);
			/* a bare number is the depth, as in callgraph:16 */
			ok = cg_parse_u32(tok, &v);
			rc = cg_set(st, ok ? "depth" : tok, v, ok, tok, where);
		} else {
			*val++ = '\0';
			snprintf(where, sizeof(where), "--ext-feature=callgraph:%s=%s", tok, val);
			ok = cg_parse_u32(val, &v);
			rc = cg_set(st, tok, v, ok, val, where);
		}
		if (rc)
			return rc;
	}
	return 0;
}

/* the plugin's user data: the host calls it after ext_deinit or a failed init */
static void cg_free(void *data)
{
	struct cg_state *st = data;

	cg_stacks_close(st);
	free(st);
}

static int cg_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct op_sample_hook_desc hook = { .size = sizeof(hook) };
	struct op_escape_desc esc = { .size = sizeof(esc) };
	struct cg_state *st;
	int rc;

	st = pu_state_new(host, ctx, sizeof(*st), cg_free);
	if (!st)
		return -ENOMEM;
	st->fd = -1;
	st->ctx = ctx;
	st->host = host;
	st->depth = CG_DEFAULT_DEPTH;
	st->budget = (uint64_t)CG_DEFAULT_MAX_MB << 20;
	rc = cg_read_config(st);
	if (!rc)
		rc = cg_parse_args(st, args);
	if (rc)
		return rc;

	esc.name = "callgraph-chain";
	esc.min_args = 3;
	esc.max_args = 1 + 4 * st->depth;
	esc.handler = cg_on_chain;
	rc = host->register_escape(ctx, &esc, st, &st->code);
	if (rc)
		goto out_reg;
	hook.name = "callgraph";
	hook.sample_type_extra = CG_PERF_SAMPLE_CALLCHAIN;
	/* one frame more than kept, so a deeper chain is known to be truncated */
	hook.max_stack = st->depth + 1;
	hook.on_sample = cg_on_sample;
	rc = host->register_sample_hook(ctx, &hook, st);
	if (rc)
		goto out_reg;
	rc = host->register_sfile_handlers(ctx, &cg_sfile_ops, st);
	if (rc)
		goto out_reg;
	rc = host->register_stats(ctx, &cg_stats_ops, st);
	if (rc)
		goto out_reg;
	host->log(ctx, OP_LOG_INFO,
		  "call graphs: chains up to %u frames, stack table up to %" PRIu64
		  " MiB per session, stack context: %s",
		  st->depth, st->budget >> 20,
		  st->ctx_thread ? (st->ctx_cpu ? "thread+cpu" : "thread") :
				   (st->ctx_cpu ? "cpu" : "none"));
	return 0;

out_reg:
	host->log(ctx, OP_LOG_ERR, "registering with oprofiled failed: %s", strerror(-rc));
	return rc;
}

OP_EXT_DEFINE(.name = "callgraph", .version = "1.0",
	      .summary = "call graphs: caller/callee arc files and whole stacks from frame-pointer chains",
	      .ext_init = cg_init);
