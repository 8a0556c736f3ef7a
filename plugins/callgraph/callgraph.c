/*
 * callgraph.c - the "callgraph" plugin: asks the core for frame-pointer call
 * chains, turns each chain into caller -> callee arcs logged into OProfile
 * {cg} sample files, and aggregates whole stacks into the session's stack
 * table (cg_format.h). The core holds no call-graph code for this path.
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
 * Arguments: --ext-feature=callgraph[:depth=N][,stacks=N][,frames=N]; config
 * plugins.callgraph.depth / .max_stacks / .max_frames (arguments win).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cg_format.h"
#include "oprofile_sdk.h"
#include "../common/plugin_util.h"

#define CG_DEFAULT_DEPTH 64u
#define CG_MAX_DEPTH 254u       /* the kernel's perf_event_max_stack is 127 by default */
#define CG_DEFAULT_STACKS 16384u
#define CG_DEFAULT_FRAMES 262144u
#define CG_IMAGES_MAX 2048u
#define CG_STRINGS_SIZE (256u * 1024u)
#define CG_CACHE_SIZE 1024u     /* arc-file cache slots (power of two) */
#define CG_PERF_SAMPLE_CALLCHAIN (1u << 5)

#define CG_REC_TRUNCATED (UINT64_C(1) << 32)
#define CG_F_KERNEL (UINT64_C(1) << 32)
#define CG_F_ANON (UINT64_C(1) << 33)
#define CG_F_UNMAPPED (UINT64_C(1) << 34)

struct cg_frame {
	op_cookie_t cookie;  /* 0: mapped to no image */
	int32_t in_kernel;
	uint64_t key;
	uint64_t anon_start, anon_end;
};

struct cg_cache_ent {
	uint64_t gen;        /* valid while equal to cg_state.gen */
	int32_t tgid, tid, cpu;
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

struct cg_state {
	op_ext_t *ctx;
	const struct op_host *host;
	uint32_t depth, stacks_max, frames_max;
	uint32_t code;

	/* trans side */
	uint64_t gen;
	struct cg_cache_ent cache[CG_CACHE_SIZE];
	struct op_file_spec pending;   /* callee of the arc get_file opens */

	/* the stack table */
	bool stacks_tried;
	int fd;
	void *map;
	size_t map_len;
	struct cgs_header *hdr;
	struct cgs_image *imgs;
	char *strs;
	struct cgs_stack *stacks;
	struct cgs_frame *frames;
	struct cg_img_ent imgmap[2 * CG_IMAGES_MAX];
	struct timespec last_sync;
	char path[4096];             /* of the open table */
	dev_t dev;
	ino_t ino;
	bool open_error_logged;
	bool recheck;                /* sets were closed: the table may have moved */

	/* scratch (no allocation per sample) */
	uint64_t rec[1 + 4 * (CG_MAX_DEPTH + 1)];
	struct cg_frame chain[CG_MAX_DEPTH + 1];
	struct cgs_frame sframes[CG_MAX_DEPTH + 1];

	/* statistics */
	uint64_t samples, samples_with_chain, frames_walked, truncated, unmapped;
	uint64_t emit_errors, bad_records, arcs, arcs_unmapped, arcs_lost, sets;
	uint64_t stacks_lost;
};

/* ctx -> state, for ext_deinit (one instance per loaded plugin) */
static struct pu_instances cg_instances;

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
			st->rec[nargs++] = CG_F_UNMAPPED | (mode == OP_CPUMODE_KERNEL ? CG_F_KERNEL : 0);
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
	    e->cpu == t->cpu && e->app == t->app_cookie && e->counter == counter &&
	    cg_same_image(&e->from, from) && cg_same_image(&e->to, to))
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
	e->f = cg_get_file(st, t->sfile && from->cookie == t->cookie &&
					       from->in_kernel == t->in_kernel &&
					       from->anon_start == t->anon_start ?
				       t->sfile :
				       NULL,
			   NULL, &v, counter, true);
	/* opening may have closed other sets (and bumped gen) */
	e->gen = st->gen;
	e->tgid = t->tgid;
	e->tid = t->tid;
	e->cpu = t->cpu;
	e->app = t->app_cookie;
	e->counter = counter;
	e->from = *from;
	e->to = *to;
	return e->f;
}

/* ------------------------------------------------------------------ */
/* the stack table                                                     */
/* ------------------------------------------------------------------ */

static void cg_stacks_close(struct cg_state *st)
{
	if (st->map) {
		msync(st->map, st->map_len, MS_SYNC);
		munmap(st->map, st->map_len);
	}
	if (st->fd >= 0)
		close(st->fd);
	st->map = NULL;
	st->hdr = NULL;
	st->fd = -1;
	/* image indexes belong to the table: a new one starts without any */
	memset(st->imgmap, 0, sizeof(st->imgmap));
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
			      "%s was removed (session reset?): starting a new stack table", st->path);
		cg_stacks_close(st);
		st->stacks_tried = false;
	}
}

static bool cg_header_fits(const struct cgs_header *h, const struct cg_state *st)
{
	return !memcmp(h->magic, CGS_MAGIC, 8) && h->version == CGS_VERSION &&
	       h->header_size == sizeof(*h) && h->images_max == CG_IMAGES_MAX &&
	       h->strings_size == CG_STRINGS_SIZE && h->stacks_max == st->stacks_max &&
	       h->frames_max == st->frames_max && h->images_used <= h->images_max &&
	       h->strings_used <= h->strings_size && h->frames_used <= h->frames_max &&
	       h->stacks_used <= h->stacks_max;
}

static void cg_imgmap_put(struct cg_state *st, op_cookie_t cookie, uint32_t kind, int32_t tgid,
			  uint64_t anon_start, uint32_t idx);

/* continuing a table (--append): map its image names back to this run's cookies */
static void cg_relearn_images(struct cg_state *st)
{
	const struct cgs_header *h = st->hdr;

	memset(st->imgmap, 0, sizeof(st->imgmap));
	for (uint32_t i = 0; i < h->images_used; i++) {
		const struct cgs_image *ci = &st->imgs[i];
		op_cookie_t c;

		if ((uint64_t)ci->name_off + ci->name_len >= h->strings_size ||
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
	struct cgs_layout l;
	char path[4096];
	struct stat sb;
	bool fresh;

	st->stacks_tried = true;
	if (!sd) {
		st->host->log(st->ctx, OP_LOG_WARN,
			      "no session directory: whole stacks are not recorded (arcs still are)");
		return;
	}
	cgs_layout(CG_IMAGES_MAX, CG_STRINGS_SIZE, st->stacks_max, st->frames_max, &l);
	snprintf(path, sizeof(path), "%s/samples/current/" CGS_DIR, sd);
	if (mkdir(path, 0755) && errno != EEXIST)
		goto out_err;
	snprintf(path, sizeof(path), "%s/samples/current/" CGS_DIR "/" CGS_FILE, sd);
	st->fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (st->fd < 0 || fstat(st->fd, &sb) || !S_ISREG(sb.st_mode))
		goto out_err;
	memcpy(st->path, path, sizeof(st->path));
	st->dev = sb.st_dev;
	st->ino = sb.st_ino;
	fresh = (uint64_t)sb.st_size != l.size;
	if (fresh && (ftruncate(st->fd, 0) || ftruncate(st->fd, (off_t)l.size)))
		goto out_err;
	st->map_len = l.size;
	st->map = mmap(NULL, st->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, st->fd, 0);
	if (st->map == MAP_FAILED) {
		st->map = NULL;
		goto out_err;
	}
	st->hdr = st->map;
	if (!fresh && !cg_header_fits(st->hdr, st)) {
		/* another layout or a damaged file: start over */
		memset(st->map, 0, l.stacks_off);
		memset((char *)st->map + l.stacks_off, 0, l.size - l.stacks_off);
		fresh = true;
	}
	st->imgs = (struct cgs_image *)((char *)st->map + l.images_off);
	st->strs = (char *)st->map + l.strings_off;
	st->stacks = (struct cgs_stack *)((char *)st->map + l.stacks_off);
	st->frames = (struct cgs_frame *)((char *)st->map + l.frames_off);
	if (fresh) {
		struct cgs_header *h = st->hdr;

		h->version = CGS_VERSION;
		h->header_size = sizeof(*h);
		h->images_max = CG_IMAGES_MAX;
		h->strings_size = CG_STRINGS_SIZE;
		h->stacks_max = st->stacks_max;
		h->frames_max = st->frames_max;
		h->images_off = (uint32_t)l.images_off;
		h->strings_off = (uint32_t)l.strings_off;
		memcpy(h->magic, CGS_MAGIC, 8); /* last: the header is complete */
	} else {
		cg_relearn_images(st);
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
		*e = (struct cg_img_ent){ .used = true, .cookie = cookie, .kind = kind,
					  .tgid = tgid, .anon_start = anon_start, .idx = idx };
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
	struct cgs_header *h = st->hdr;
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
	if (i == 2 * CG_IMAGES_MAX || h->images_used >= h->images_max)
		return 0;
	name = st->host->cookie_path(st->ctx, f->cookie);
	if (!name)
		name = "?";
	len = strlen(name);
	if (len + 1 > h->strings_size - h->strings_used)
		return 0;
	memcpy(st->strs + h->strings_used, name, len + 1);
	st->imgs[h->images_used] = (struct cgs_image){
		.name_off = h->strings_used,
		.name_len = (uint32_t)len,
		.kind = kind,
		.tgid = tgid,
		.anon_start = f->anon_start,
		.anon_end = f->anon_end,
	};
	h->strings_used += (uint32_t)len + 1;
	e->used = true;
	e->cookie = f->cookie;
	e->kind = kind;
	e->tgid = tgid;
	e->anon_start = f->anon_start;
	e->idx = h->images_used;
	__atomic_store_n(&h->images_used, h->images_used + 1, __ATOMIC_RELEASE);
	return e->idx + 1;
}

static void cg_stack_add(struct cg_state *st, const struct op_trans_view *t,
			 const struct cg_frame *fr, uint32_t n, bool trunc, uint32_t counter)
{
	struct cgs_header *h;
	struct cg_frame app = { 0 };
	uint32_t app_idx, i, slot;
	uint16_t flags = trunc ? CGS_STACK_TRUNCATED : 0;
	uint64_t id;

	if (st->recheck) {
		st->recheck = false;
		cg_stacks_check(st);
	}
	if (!st->stacks_tried)
		cg_stacks_open(st);
	h = st->hdr;
	if (!h)
		return;
	h->total_samples++;
	app.cookie = t->app_cookie ? t->app_cookie : 0;
	app.in_kernel = 0;
	app_idx = cg_image_index(st, &app, -1);
	id = cg_mix(cg_mix(counter, app_idx), (uint64_t)n << 16 | flags);
	for (i = 0; i < n; i++) {
		st->sframes[i].image = cg_image_index(st, &fr[i], t->tgid);
		st->sframes[i].reserved = 0;
		st->sframes[i].key = fr[i].key;
		id = cg_mix(id, st->sframes[i].key ^ (uint64_t)st->sframes[i].image << 40);
	}
	if (!id)
		id = 1;
	for (i = 0; i < h->stacks_max; i++) {
		struct cgs_stack *s;

		slot = (uint32_t)(id + i) & (h->stacks_max - 1);
		s = &st->stacks[slot];
		if (!s->id)
			break;
		if (s->id == id && s->counter == counter && s->app == app_idx && s->depth == n &&
		    s->flags == flags && s->frame_off <= h->frames_max - n &&
		    !memcmp(&st->frames[s->frame_off], st->sframes, n * sizeof(st->sframes[0]))) {
			s->count++;
			return;
		}
	}
	/* a new stack: keep the table at most 3/4 full so probes stay short */
	if (i == h->stacks_max || h->stacks_used >= h->stacks_max / 4 * 3 ||
	    n > h->frames_max - h->frames_used) {
		h->overflow_samples++;
		st->stacks_lost++;
		return;
	}
	{
		struct cgs_stack *s = &st->stacks[slot];

		memcpy(&st->frames[h->frames_used], st->sframes, n * sizeof(st->sframes[0]));
		s->count = 1;
		s->frame_off = h->frames_used;
		s->depth = (uint16_t)n;
		s->flags = flags;
		s->counter = counter;
		s->app = app_idx;
		__atomic_store_n(&s->id, id, __ATOMIC_RELEASE);
		h->frames_used += n;
		h->stacks_used++;
	}
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
		if (!f || st->host->sample_file_add(f, (from->key << 32) | (to->key & 0xffffffffu), 1)) {
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
	sink->counter(sink, "stacks_distinct", st->hdr ? st->hdr->stacks_used : 0);
	sink->counter(sink, "stacks_overflow", st->stacks_lost);
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

static int cg_set(struct cg_state *st, const char *key, uint64_t v, bool ok, const char *text,
		  const char *where)
{
	if (!strcmp(key, "depth")) {
		if (!ok || v < 1 || v > CG_MAX_DEPTH) {
			st->host->log(st->ctx, OP_LOG_ERR,
				      "bad depth '%s' in %s: expected 1..%u frames (the kernel's "
				      "kernel.perf_event_max_stack, 127 by default, also bounds it)",
				      text, where, CG_MAX_DEPTH);
			return -EINVAL;
		}
		st->depth = (uint32_t)v;
	} else if (!strcmp(key, "stacks") || !strcmp(key, "max_stacks")) {
		if (!ok || v < 16 || v > (1u << 24) || (v & (v - 1))) {
			st->host->log(st->ctx, OP_LOG_ERR,
				      "bad stack table size '%s' in %s: expected a power of two "
				      "16..16777216",
				      text, where);
			return -EINVAL;
		}
		st->stacks_max = (uint32_t)v;
	} else if (!strcmp(key, "frames") || !strcmp(key, "max_frames")) {
		if (!ok || v < 256 || v > (1u << 26)) {
			st->host->log(st->ctx, OP_LOG_ERR,
				      "bad frame pool size '%s' in %s: expected 256..67108864",
				      text, where);
			return -EINVAL;
		}
		st->frames_max = (uint32_t)v;
	} else {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "unknown argument '%s' in %s: expected depth=N, stacks=N or frames=N",
			      key, where);
		return -EINVAL;
	}
	return 0;
}

static int cg_read_config(struct cg_state *st)
{
	static const char *const keys[] = { "depth", "max_stacks", "max_frames" };
	char text[32], where[64];
	bool found;
	int64_t v;
	size_t i;
	int rc;

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
			      "most %zu): expected depth=N,stacks=N,frames=N",
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

static int cg_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct op_sample_hook_desc hook = { .size = sizeof(hook) };
	struct op_escape_desc esc = { .size = sizeof(esc) };
	struct cg_state *st;
	int rc;

	st = calloc(1, sizeof(*st));
	if (!st) {
		host->log(ctx, OP_LOG_ERR, "out of memory");
		return -ENOMEM;
	}
	st->ctx = ctx;
	st->host = host;
	st->fd = -1;
	st->depth = CG_DEFAULT_DEPTH;
	st->stacks_max = CG_DEFAULT_STACKS;
	st->frames_max = CG_DEFAULT_FRAMES;
	rc = cg_read_config(st);
	if (!rc)
		rc = cg_parse_args(st, args);
	if (rc)
		goto out_free;

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
	rc = pu_instance_add(&cg_instances, ctx, st);
	if (rc) {
		host->log(ctx, OP_LOG_ERR, "too many callgraph plugin instances");
		goto out_free;
	}
	host->log(ctx, OP_LOG_INFO,
		  "call graphs: chains up to %u frames, %u stacks / %u frames kept per session",
		  st->depth, st->stacks_max, st->frames_max);
	return 0;

out_reg:
	host->log(ctx, OP_LOG_ERR, "registering with oprofiled failed: %s", strerror(-rc));
out_free:
	free(st);
	return rc;
}

static void cg_deinit(op_ext_t *ctx)
{
	struct cg_state *st = pu_instance_take(&cg_instances, ctx);

	if (!st)
		return;
	cg_stacks_close(st);
	free(st);
}

OP_EXT_DECLARE("callgraph", "1.0",
	       "call graphs: caller/callee arc files and whole stacks from frame-pointer chains",
	       cg_init, cg_deinit);
