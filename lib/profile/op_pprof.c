/*
 * op_pprof.c - the profile model as profile.proto (github.com/google/pprof),
 * through the protobuf-c code generated at build time from the upstream
 * file, gzip'd with libdeflate. Every message lives in arrays sized up front;
 * strings go through one interning table (string 0 is "").
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libdeflate.h>

#include "op_profile_int.h"
#include "profile.pb-c.h"

typedef Perftools__Profiles__Profile PProfile;
typedef Perftools__Profiles__ValueType PValueType;
typedef Perftools__Profiles__Sample PSample;
typedef Perftools__Profiles__Label PLabel;
typedef Perftools__Profiles__Mapping PMapping;
typedef Perftools__Profiles__Location PLocation;
typedef Perftools__Profiles__Line PLine;
typedef Perftools__Profiles__Function PFunction;

struct strtab {
	char **v; /* borrowed or owned (own[i]) */
	bool *own;
	size_t n, cap;
	uint32_t *slot; /* index + 1 */
	size_t scap;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* the index of @s (copied when @copy), -1 on ENOMEM */
static int64_t str_intern(struct strtab *t, const char *s, bool copy)
{
	size_t i;

	if (!s || !*s)
		return 0;
	if ((t->n + 1) * 2 > t->scap) {
		size_t ncap = t->scap ? t->scap * 2 : 4096;
		uint32_t *ns = calloc(ncap, sizeof(*ns));

		if (!ns)
			return -1;
		for (size_t k = 1; k < t->n; k++) {
			size_t j = (size_t)str_hash(t->v[k]) & (ncap - 1);

			while (ns[j])
				j = (j + 1) & (ncap - 1);
			ns[j] = (uint32_t)k + 1;
		}
		free(t->slot);
		t->slot = ns;
		t->scap = ncap;
	}
	for (i = (size_t)str_hash(s) & (t->scap - 1); t->slot[i]; i = (i + 1) & (t->scap - 1))
		if (!strcmp(t->v[t->slot[i] - 1], s))
			return t->slot[i] - 1;
	if (t->n == t->cap) {
		size_t ncap = t->cap * 2;
		char **nv = realloc(t->v, ncap * sizeof(*nv));
		bool *no;

		if (!nv)
			return -1;
		t->v = nv;
		no = realloc(t->own, ncap * sizeof(*no));
		if (!no)
			return -1;
		t->own = no;
		t->cap = ncap;
	}
	t->v[t->n] = copy ? strdup(s) : (char *)s;
	if (!t->v[t->n])
		return -1;
	t->own[t->n] = copy;
	t->slot[i] = (uint32_t)t->n + 1;
	return (int64_t)t->n++;
}

static void strtab_free(struct strtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->own[i])
			free(t->v[i]);
	free(t->v);
	free(t->own);
	free(t->slot);
}

/* functions by (name, file) string indexes */
struct functab {
	PFunction *v;
	size_t n;
	uint32_t *slot;
	size_t scap;
};

static uint64_t fn_id(struct functab *t, int64_t name, int64_t file)
{
	uint64_t h =
		((uint64_t)name * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)file * 0xff51afd7ed558ccdull);
	size_t i;

	for (i = (size_t)(h ^ (h >> 29)) & (t->scap - 1); t->slot[i]; i = (i + 1) & (t->scap - 1)) {
		PFunction *f = &t->v[t->slot[i] - 1];

		if (f->name == name && f->filename == file)
			return f->id;
	}
	t->v[t->n] = (PFunction)PERFTOOLS__PROFILES__FUNCTION__INIT;
	t->v[t->n].id = t->n + 1;
	t->v[t->n].name = name;
	t->v[t->n].system_name = name;
	t->v[t->n].filename = file;
	t->slot[i] = (uint32_t)++t->n;
	return t->n;
}

static void hex_buildid(const char *in, char *out, size_t len)
{
	size_t i = 0;

	for (; in[i] && i + 1 < len; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	out[i] = '\0';
}

/* the event's value type: cpu/nanoseconds for the timer, the event name/count otherwise */
static void event_type(const struct op_profile *p, char *name, size_t len, const char **unit)
{
	if (p->timer) {
		snprintf(name, len, "cpu");
		*unit = "nanoseconds";
		return;
	}
	snprintf(name, len, "%s", p->event[0] ? p->event : "events");
	*unit = "count";
}

/*
 * The gzip level. zlib level 5 with deflateTune 8/16/64/16 was the choice
 * until 2026-11-29; then libdeflate (whole-buffer: a stage is one call),
 * measured by tests/bench/bench_gzip.sh on the bare protobuf of two
 * exports of one session cut into 256 KiB stages, CPU of one thread,
 * against zlib 5 tuned: an 11.4 MB export (1.21 M samples, thread/cpu
 * labels): zlib 5 tuned 93 ms / 1,391,708 B; zlib 1 0.59x CPU / +17.5 %
 * bytes, zlib 4 0.87x / +8.9 %, zlib 6 2.0x / -1.5 %; libdeflate 1 0.27x
 * / +11.6 %, 4 0.54x / +7.9 %, 5 0.64x / -0.2 %, 6 0.97x / -2.1 %, 7
 * 1.8x / -2.4 %. The default split's 2.4 MB export: libdeflate 5 0.69x
 * CPU / -2.0 %, 1 0.26x / +5.7 %. Level 5: fewer bytes than before (the
 * perf.data ratio kept) for two thirds of the CPU; levels 1-4 parse
 * greedily (no lazy matching) and lose 2-12 %.
 */
#define PPROF_GZIP_LEVEL 5

/*
 * Where the packed profile goes: the bytes gather in a stage and go to
 * deflate a stage at a time, so the bare protobuf is never held whole.
 * Each stage is a whole gzip member of its own, written by libdeflate
 * (header, deflate, CRC-32 and length) in one call, put after the one
 * before. A gzip file is the members one after another (RFC 1952 2.2);
 * every reader of ours reads them all (Go's compress/gzip, which pprof,
 * Parca and Pyroscope use, by default; Python's gzip; zcat). A member
 * starts with no history: +0.19 % bytes at 256 KiB stages on a 2.2 MB
 * profile (zlib level 5), against one stream. Threaded, the stages are
 * deflated on PBOUT_WORKERS threads, each with a compressor of its own,
 * while the packer fills the next ones (deflate took 45 % of the
 * encoding: on one thread it was what the rest waited for); on one
 * thread, by the packer into the output as each stage fills.
 */
#define PBOUT_STAGE (256u * 1024u)
#define PBOUT_WORKERS 2
#define PBOUT_NSTAGE 4 /* stages in the ring: the packer's, the workers', one done */

struct pbstage {
	uint8_t *in;
	size_t in_len;
	uint8_t *out; /* its gzip member */
	size_t out_len, out_cap;
	enum { PB_FREE, PB_QUEUED, PB_WORKING, PB_DONE } state;
	uint64_t seq;
};

struct pbout {
	ProtobufCBuffer base;
	struct libdeflate_compressor *dc; /* one thread: the packer's */
	bool gz;
	int err;
	uint8_t *buf; /* the output */
	size_t len, cap;
	struct pbstage st[PBOUT_NSTAGE]; /* one thread: st[0] only */
	unsigned cur;                    /* the packer fills st[cur].in */
	size_t nstage;
	/* threaded */
	bool threaded, quit;
	unsigned nthr;
	pthread_t thr[PBOUT_WORKERS];
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t nsub, ncollected; /* stages handed to the workers, put in the output */
	int werr;                  /* a worker's */
	uint8_t *tmp;              /* pack_part's scratch */
	size_t tmpcap;
};

static int pbout_room(struct pbout *o, size_t more)
{
	size_t ncap = o->cap ? o->cap : 1u << 20;
	uint8_t *nb;

	while (ncap - o->len < more)
		ncap *= 2;
	if (ncap == o->cap)
		return 0;
	nb = realloc(o->buf, ncap);
	if (!nb)
		return -ENOMEM;
	o->buf = nb;
	o->cap = ncap;
	return 0;
}

/*
 * one thread: a stage's @len bytes at @in to the output, a gzip member
 * unless bare. An empty last stage adds no member; an empty profile still
 * gets one (a valid gzip file).
 */
static void pbout_put(struct pbout *o, const uint8_t *in, size_t len)
{
	size_t n;

	if (o->err || (!len && o->nsub))
		return;
	n = o->gz ? libdeflate_gzip_compress_bound(o->dc, len) : len;
	if (pbout_room(o, n)) {
		o->err = -ENOMEM;
		return;
	}
	if (o->gz)
		n = libdeflate_gzip_compress(o->dc, in, len, o->buf + o->len, o->cap - o->len);
	else
		memcpy(o->buf + o->len, in, len);
	if (!n && len) {
		o->err = -EIO; /* cannot be: the room is the bound */
		return;
	}
	o->len += n;
	o->nsub++;
}

/* a worker: stage @b into b->out, a gzip member, by @dc. 0, -ENOMEM, -EIO. */
static int pbstage_deflate(struct pbstage *b, struct libdeflate_compressor *dc)
{
	/* the bound of a whole stage: every stage's member fits what is allocated once */
	size_t bound = libdeflate_gzip_compress_bound(dc, PBOUT_STAGE);

	if (b->out_cap < bound) {
		uint8_t *nb = realloc(b->out, bound);

		if (!nb)
			return -ENOMEM;
		b->out = nb;
		b->out_cap = bound;
	}
	b->out_len = libdeflate_gzip_compress(dc, b->in, b->in_len, b->out, b->out_cap);
	return b->out_len ? 0 : -EIO;
}

/* a deflating thread: the oldest stage queued, one at a time, until the stream ends */
static void *pbout_worker(void *arg)
{
	struct pbout *o = arg;
	/* one per worker, allocated once: its tables are not per stage */
	struct libdeflate_compressor *dc = libdeflate_alloc_compressor(PPROF_GZIP_LEVEL);

	pthread_mutex_lock(&o->mu);
	if (!dc)
		o->werr = -ENOMEM;
	for (;;) {
		struct pbstage *b = NULL;
		int rc;

		for (unsigned i = 0; i < PBOUT_NSTAGE; i++)
			if (o->st[i].state == PB_QUEUED && (!b || o->st[i].seq < b->seq))
				b = &o->st[i];
		if (!b && o->quit)
			break;
		if (!b) {
			pthread_cond_wait(&o->cv, &o->mu);
			continue;
		}
		b->state = PB_WORKING;
		pthread_mutex_unlock(&o->mu);
		rc = dc ? pbstage_deflate(b, dc) : -ENOMEM;
		pthread_mutex_lock(&o->mu);
		if (rc && !o->werr)
			o->werr = rc;
		b->state = PB_DONE;
		pthread_cond_broadcast(&o->cv);
	}
	pthread_mutex_unlock(&o->mu);
	if (dc)
		libdeflate_free_compressor(dc);
	return NULL;
}

/* under o->mu: the stages done, in order, into the output */
static void pbout_collect(struct pbout *o)
{
	for (;;) {
		struct pbstage *b = NULL;

		for (unsigned i = 0; i < PBOUT_NSTAGE && !b; i++)
			if (o->st[i].state == PB_DONE && o->st[i].seq == o->ncollected)
				b = &o->st[i];
		if (!b)
			return;
		if (!o->err && pbout_room(o, b->out_len))
			o->err = -ENOMEM;
		if (!o->err) {
			memcpy(o->buf + o->len, b->out, b->out_len);
			o->len += b->out_len;
		}
		b->state = PB_FREE;
		o->ncollected++;
	}
}

/* the stage filled so far to deflate; the packer goes on in a free one */
static void pbout_flush(struct pbout *o, bool fin)
{
	struct pbstage *b = &o->st[o->cur];

	if (!o->threaded) {
		pbout_put(o, b->in, o->nstage);
		o->nstage = 0;
		return;
	}
	b->in_len = o->nstage;
	pthread_mutex_lock(&o->mu);
	/* an empty last stage adds no member (an empty profile still gets one) */
	if (o->nstage || !o->nsub) {
		b->seq = o->nsub++;
		b->state = PB_QUEUED;
		pthread_cond_broadcast(&o->cv);
		o->cur = (o->cur + 1) % PBOUT_NSTAGE;
	}
	/* the next stage free (collected); at the end, every stage */
	for (;;) {
		pbout_collect(o);
		if (fin ? o->ncollected == o->nsub : o->st[o->cur].state == PB_FREE)
			break;
		pthread_cond_wait(&o->cv, &o->mu);
	}
	pthread_mutex_unlock(&o->mu);
	o->nstage = 0;
}

/* threaded: the workers ended (after what was queued) */
static void pbout_stop(struct pbout *o)
{
	pthread_mutex_lock(&o->mu);
	o->quit = true;
	pthread_cond_broadcast(&o->cv);
	pthread_mutex_unlock(&o->mu);
	for (unsigned i = 0; i < o->nthr; i++)
		pthread_join(o->thr[i], NULL);
	o->nthr = 0;
	pthread_mutex_destroy(&o->mu);
	pthread_cond_destroy(&o->cv);
}

/* protobuf-c's output: into the stage, a stage deflated whenever one is full */
static void pbout_append(ProtobufCBuffer *base, size_t len, const uint8_t *data)
{
	struct pbout *o = (struct pbout *)base;

	while (len) {
		size_t n = PBOUT_STAGE - o->nstage < len ? PBOUT_STAGE - o->nstage : len;

		memcpy(o->st[o->cur].in + o->nstage, data, n);
		o->nstage += n;
		data += n;
		len -= n;
		if (o->nstage == PBOUT_STAGE)
			pbout_flush(o, false);
	}
}

/* @m packed whole (protobuf-c) into @o's stream, through @o's scratch buffer */
static void pack_part(const ProtobufCMessage *m, struct pbout *o)
{
	size_t n = protobuf_c_message_get_packed_size(m);

	if (o->err)
		return;
	if (n > o->tmpcap) {
		uint8_t *t = realloc(o->tmp, n);

		if (!t) {
			o->err = -ENOMEM;
			return;
		}
		o->tmp = t;
		o->tmpcap = n;
	}
	if (protobuf_c_message_pack(m, o->tmp) != n) {
		o->err = -EIO;
		return;
	}
	pbout_append(&o->base, n, o->tmp);
}

#define PACK_CHUNK 256u /* samples per packed piece */

/*
 * At most the bytes protobuf-c packs sample @s into as a field of a
 * Profile: every varint at its longest (10 bytes, a length 5), every
 * Label field present (key, str, num, num_unit)
 */
static size_t sample_bound(const PSample *s)
{
	return 6 + 6 + 10 * s->n_location_id + 6 + 10 * s->n_value + s->n_label * (6 + 4 * 11);
}

/*
 * A stream for a packed profile, gzip'd unless @bare, deflated on
 * PBOUT_WORKERS threads when @threaded (and they can be started). NULL on
 * ENOMEM (*@err says so).
 */
static struct pbout *pbout_open(bool bare, bool threaded, int *err)
{
	struct pbout *o = calloc(1, sizeof(*o));
	unsigned nst = threaded && !bare ? PBOUT_NSTAGE : 1;

	*err = -ENOMEM;
	if (!o)
		return NULL;
	o->base.append = pbout_append;
	o->gz = !bare;
	for (unsigned i = 0; i < nst; i++)
		if (!(o->st[i].in = malloc(PBOUT_STAGE)))
			goto fail;
	if (nst > 1) {
		pthread_mutex_init(&o->mu, NULL);
		pthread_cond_init(&o->cv, NULL);
		while (o->nthr < PBOUT_WORKERS &&
		       !pthread_create(&o->thr[o->nthr], NULL, pbout_worker, o))
			o->nthr++;
		o->threaded = o->nthr > 0;
		if (o->threaded)
			return o;
		/* no thread to be had: the stages deflated here */
		pthread_mutex_destroy(&o->mu);
		pthread_cond_destroy(&o->cv);
	}
	/* gzip members, as pprof and every fleet store expect */
	if (o->gz && !(o->dc = libdeflate_alloc_compressor(PPROF_GZIP_LEVEL)))
		goto fail;
	return o;
fail:
	for (unsigned i = 0; i < PBOUT_NSTAGE; i++)
		free(o->st[i].in);
	free(o->buf);
	free(o);
	return NULL;
}

/*
 * The end of @o's stream (freed): the bytes in *@buf (malloc'd), *@len of
 * them, unless @ret or the stream failed. 0, @ret, -ENOMEM, -EIO.
 */
static int pbout_close(struct pbout *o, int ret, uint8_t **buf, size_t *len)
{
	pbout_flush(o, true);
	if (o->threaded) {
		pbout_stop(o);
		if (!o->err)
			o->err = o->werr;
	} else if (o->dc) {
		libdeflate_free_compressor(o->dc);
	}
	if (!ret)
		ret = o->err;
	if (!ret && !o->len && pbout_room(o, 1)) /* an empty message: still a buffer */
		ret = -ENOMEM;
	if (ret) {
		free(o->buf);
	} else {
		*buf = o->buf;
		*len = o->len;
	}
	for (unsigned i = 0; i < PBOUT_NSTAGE; i++) {
		free(o->st[i].in);
		free(o->st[i].out);
	}
	free(o->tmp);
	free(o);
	return ret;
}

/*
 * The mapping id of the user program with the most samples at the leaf in
 * *@main (1 when there is none). 0 or -ENOMEM.
 */
static int main_mapping(const struct op_profile *p, uint32_t *main)
{
	uint64_t *leaf = calloc(p->nmaps + 1, sizeof(*leaf)), best = 0;

	if (!leaf)
		return -ENOMEM;
	*main = 1;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct op_profile_sample *s = &p->samples[i];

		leaf[p->locs[p->locpool[s->loc_off] - 1].mapping] += s->count;
	}
	for (uint32_t id = 1; id <= p->nmaps; id++) {
		const struct op_profile_mapping *m = &p->maps[id - 1];

		if (m->kind == OP_IMAGE_USER && !m->is_kernel && m->path[0] == '/' &&
		    leaf[id] > best) {
			best = leaf[id];
			*main = id;
		}
	}
	free(leaf);
	return 0;
}

/*
 * the per-sample labels, in this order in struct labtab; the last three
 * are the process's line of the session's cgroup index (lib/op_cgroups.h)
 */
#define NLABEL_KEYS 7
static const char *const label_keys[NLABEL_KEYS] = { "pid",         "tid",    "cpu",
						     "comm",        "cgroup", "container_id",
						     "systemd_unit" };

/* one Label message per (key, value), shared by every sample that has it */
struct labtab {
	int64_t key[NLABEL_KEYS]; /* string indexes of label_keys */
	struct {
		uint64_t k; /* key index << 32 | value, + 1 (0: empty) */
		PLabel *l;
	} * v;
	size_t n, cap;
};

/*
 * the label of key @k (label_keys) and value @v (a number; comm: mapping
 * id; cgroup, container_id, systemd_unit: index into p->cgroups.v, then
 * p->splits.v); NULL on ENOMEM
 */
static PLabel *label_get(struct labtab *t, struct strtab *st, const struct op_profile *p,
			 unsigned k, int32_t v)
{
	uint64_t want = ((uint64_t)k << 32 | (uint32_t)v) + 1;
	char num[16];
	size_t i;
	PLabel *l;

	if ((t->n + 1) * 2 > t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 1024;
		__typeof__(t->v) nv = calloc(ncap, sizeof(*nv));

		if (!nv)
			return NULL;
		for (size_t j = 0; j < t->cap; j++) {
			if (!t->v[j].k)
				continue;
			for (i = (size_t)(t->v[j].k * 0x9e3779b97f4a7c15ull >> 20) & (ncap - 1);
			     nv[i].k; i = (i + 1) & (ncap - 1))
				;
			nv[i] = t->v[j];
		}
		free(t->v);
		t->v = nv;
		t->cap = ncap;
	}
	for (i = (size_t)(want * 0x9e3779b97f4a7c15ull >> 20) & (t->cap - 1); t->v[i].k;
	     i = (i + 1) & (t->cap - 1))
		if (t->v[i].k == want)
			return t->v[i].l;
	l = malloc(sizeof(*l));
	if (!l)
		return NULL;
	*l = (PLabel)PERFTOOLS__PROFILES__LABEL__INIT;
	l->key = t->key[k];
	if (k == 3) {
		const char *path = p->maps[v - 1].path, *b = strrchr(path, '/');

		l->str = str_intern(st, b && b[1] ? b + 1 : path, false);
	} else if (k >= 4) {
		/* issue 20: split keys are numbered after the index's entries */
		const struct op_cgroup_entry *e = (size_t)v < p->cgroups.n ?
							  &p->cgroups.v[v] :
							  &p->splits.v[(size_t)v - p->cgroups.n];

		l->str = str_intern(st,
				    k == 4 ? e->cgroup :
				    k == 5 ? e->container :
					     e->unit,
				    false);
	} else {
		snprintf(num, sizeof(num), "%d", v);
		l->str = str_intern(st, num, true);
	}
	if (l->str < 0) {
		free(l);
		return NULL;
	}
	t->v[i].k = want;
	t->v[i].l = l;
	t->n++;
	return l;
}

/* a location to sort, its mapping and key beside it (not looked up per comparison) */
struct loc_sort {
	uint64_t key;
	uint32_t mapping, idx;
};

/* the byte @pass of @l's order: the key's 8 low to high, then the mapping's 4 */
static unsigned loc_digit(const struct loc_sort *l, unsigned pass)
{
	return pass < 8 ? (unsigned)(l->key >> (8 * pass)) & 0xff :
			  (l->mapping >> (8 * (pass - 8))) & 0xff;
}

/*
 * @v[0..@n) by mapping, then address: least significant byte first, each
 * pass stable, a pass whose byte is the same everywhere skipped (qsort of
 * 48,000 locations took 6 ms). @tmp holds @n too. 0 or -ENOMEM.
 */
static int sort_locs(struct loc_sort *v, size_t n)
{
	struct loc_sort *tmp = malloc((n + 1) * sizeof(*tmp)), *from = v, *to = tmp, *t;

	if (!tmp)
		return -ENOMEM;
	for (unsigned pass = 0; pass < 12; pass++) {
		size_t cnt[256] = { 0 }, sum = 0;
		bool one = false;

		for (size_t i = 0; i < n; i++)
			cnt[loc_digit(&from[i], pass)]++;
		for (unsigned d = 0; d < 256 && !one; d++)
			one = cnt[d] == n;
		if (one)
			continue;
		for (unsigned d = 0; d < 256; d++) {
			size_t c = cnt[d];

			cnt[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			to[cnt[loc_digit(&from[i], pass)]++] = from[i];
		t = from;
		from = to;
		to = t;
	}
	if (from != v)
		memcpy(v, from, n * sizeof(*v));
	free(tmp);
	return 0;
}

static bool labels_same(const struct op_profile_labels *a, const struct op_profile_labels *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->cpu == b->cpu && a->comm == b->comm &&
	       a->cgroup == b->cgroup;
}

/*
 * The labels of a sample with @lab into @out (room for NLABEL_KEYS +
 * p->nlabels), their number in *@n: pid, tid, cpu, comm, the cgroup
 * (issue 20: the file's --separate=cgroup key when it has one, exact, numbered
 * after the index's entries; else the process's index line, its pid label
 * being its tgid, none for a pid reused across cgroups), then the --label
 * pairs @glab.
 * 0 or -ENOMEM.
 */
static int sample_labels(struct labtab *lt, struct strtab *st, const struct op_profile *p,
			 const struct op_profile_labels *lab, PLabel *glab, PLabel **out, size_t *n)
{
	const struct op_cgroup_entry *cg = lab->cgroup ? &p->splits.v[lab->cgroup - 1] :
							 op_cgroup_index_find(&p->cgroups, lab->pid);
	const int32_t cgi = !cg         ? -1 :
			    lab->cgroup ? (int32_t)(p->cgroups.n + lab->cgroup - 1) :
					  (int32_t)(cg - p->cgroups.v);
	const int32_t nums[NLABEL_KEYS] = {
		lab->pid,
		lab->tid,
		lab->cpu,
		lab->comm ? (int32_t)lab->comm : -1,
		cgi,
		cg && cg->container[0] ? cgi : -1,
		cg && cg->unit[0] ? cgi : -1,
	};

	*n = 0;
	for (unsigned k = 0; k < NLABEL_KEYS; k++) {
		if (nums[k] < 0)
			continue;
		out[*n] = label_get(lt, st, p, k, nums[k]);
		if (!out[(*n)++])
			return -ENOMEM;
	}
	for (size_t k = 0; k < p->nlabels; k++)
		out[(*n)++] = &glab[k];
	return 0;
}

/* what pack_samples makes the model's samples into, PACK_CHUNK at a time */
struct spack {
	const struct op_profile *p;
	struct labtab *lt;
	struct strtab *st;
	PLabel *glab;           /* the --label pairs */
	const uint64_t *locids; /* p->locpool in the written ids */
	PLabel **labelp;        /* the label arrays of runs of samples with the same labels */
	size_t nlab;
	PSample v[PACK_CHUNK], *vp[PACK_CHUNK];
	int64_t values[2 * PACK_CHUNK];
};

/*
 * The model's samples into @o's stream, PACK_CHUNK to a Profile message
 * packed whole by protobuf-c. A message's fields may come in any order and
 * its repeated fields in any number of pieces, so the samples, then a
 * message of everything else, are the profile. (pack_to_buffer of the
 * whole, one call per field, took 40 % longer.) The Sample messages of a
 * piece are made just before it is packed: never all of them at once (24
 * MB for 300,000). A piece is packed straight into the stage when its
 * bound fits there: not sized first (packing sizes each sample again) nor
 * copied. 0 or -ENOMEM.
 */
static int pack_samples(struct spack *sp, struct pbout *o)
{
	const struct op_profile *p = sp->p;
	PSample *prev = NULL;

	for (size_t i = 0; i < p->nsamples && !o->err; i += PACK_CHUNK) {
		PProfile c = PERFTOOLS__PROFILES__PROFILE__INIT;
		size_t bound = 0;

		c.n_sample = p->nsamples - i < PACK_CHUNK ? p->nsamples - i : PACK_CHUNK;
		c.sample = sp->vp;
		for (size_t k = 0; k < c.n_sample; k++) {
			const struct op_profile_sample *s = &p->samples[i + k];
			PSample *ps = &sp->v[k];

			*ps = (PSample)PERFTOOLS__PROFILES__SAMPLE__INIT;
			ps->n_location_id = s->nlocs;
			ps->location_id = (uint64_t *)&sp->locids[s->loc_off];
			sp->values[2 * k] = (int64_t)s->count;
			sp->values[2 * k + 1] = (int64_t)(s->count * p->period);
			ps->n_value = 2;
			ps->value = &sp->values[2 * k];
			sp->vp[k] = ps;
			/*
			 * in the model's order: a sample file's samples (one thread,
			 * one image) side by side, sharing one label array
			 */
			if (prev && labels_same(&p->samples[i + k - 1].lab, &s->lab)) {
				ps->n_label = prev->n_label;
				ps->label = prev->label;
			} else {
				if (sample_labels(sp->lt, sp->st, p, &s->lab, sp->glab,
						  &sp->labelp[sp->nlab], &ps->n_label))
					return -ENOMEM;
				ps->label = ps->n_label ? &sp->labelp[sp->nlab] : NULL;
				sp->nlab += ps->n_label;
			}
			prev = ps;
			bound += sample_bound(ps);
		}
		if (bound > PBOUT_STAGE) {
			pack_part(&c.base, o);
		} else {
			if (o->nstage + bound > PBOUT_STAGE)
				pbout_flush(o, false);
			o->nstage += protobuf_c_message_pack(&c.base, o->st[o->cur].in + o->nstage);
		}
		/* the last one's labels stay where they are: the next piece may share them */
		prev = &sp->v[c.n_sample - 1];
	}
	return 0;
}

/* the locations named on a thread of their own (op_pprof_opts.name_fn) */
struct namer {
	int (*fn)(void *arg);
	void *arg;
	int ret;
	pthread_t thr;
};

static void *namer_run(void *arg)
{
	struct namer *n = arg;

	n->ret = n->fn(n->arg);
	return NULL;
}

int op_pprof_encode(const struct op_profile *p, const struct op_pprof_opts *o, uint8_t **buf,
		    size_t *len)
{
	PProfile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	PValueType vt[3], *vtp[2];
	struct strtab st = { 0 };
	struct functab ft = { 0 };
	PMapping *maps = NULL, **mapp = NULL;
	PLocation *locs = NULL, **locp = NULL;
	PLine *lines = NULL, **linep = NULL;
	PFunction **fnp = NULL;
	struct spack *sp = NULL;
	PLabel **labelp = NULL, *glab = NULL;
	struct labtab lt = { 0 };
	uint32_t *locorder = NULL, *newmap = NULL; /* [0]: the main one */
	struct loc_sort *ls;
	uint32_t *newid = NULL; /* location id -> the id it is written with */
	uint64_t *locids = NULL;
	size_t nlab_per = 0, nruns = 0;
	struct namer namer = { 0 };
	struct pbout *out = NULL;
	bool named = false;
	char evname[80];
	const char *unit;
	int ret = -ENOMEM;

	*buf = NULL;
	*len = 0;
	st.cap = 1024;
	st.v = malloc(st.cap * sizeof(*st.v));
	st.own = malloc(st.cap * sizeof(*st.own));
	if (!st.v || !st.own)
		goto out;
	st.v[0] = "";
	st.own[0] = false;
	st.n = 1;
	st.scap = 4096;
	st.slot = calloc(st.scap, sizeof(*st.slot));
	if (!st.slot)
		goto out;

	/* sample types: samples/count, then the event's own */
	event_type(p, evname, sizeof(evname), &unit);
	vt[0] = (PValueType)PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	vt[1] = vt[0];
	vt[2] = vt[0];
	vt[0].type = str_intern(&st, "samples", false);
	vt[0].unit = str_intern(&st, "count", false);
	vt[1].type = str_intern(&st, evname, true);
	vt[1].unit = str_intern(&st, unit, false);
	vt[2].type = vt[1].type;
	vt[2].unit = vt[1].unit;
	for (unsigned k = 0; k < NLABEL_KEYS; k++) {
		lt.key[k] = str_intern(&st, label_keys[k], false);
		if (lt.key[k] < 0)
			goto out;
	}
	if (vt[0].type < 0 || vt[0].unit < 0 || vt[1].type < 0 || vt[1].unit < 0)
		goto out;
	vtp[0] = &vt[0];
	vtp[1] = &vt[1];
	prof.n_sample_type = 2;
	prof.sample_type = vtp;
	prof.period_type = &vt[2];
	prof.period = (int64_t)p->period;
	prof.time_nanos = (int64_t)p->time_nanos;
	prof.duration_nanos = (int64_t)p->duration_nanos;

	/* mappings: ELF images by their executable PT_LOAD, the rest by their key range */
	maps = calloc(p->nmaps + 1, sizeof(*maps));
	mapp = calloc(p->nmaps + 1, sizeof(*mapp));
	newmap = calloc(p->nmaps + 1, sizeof(*newmap));
	if (!maps || !mapp || !newmap || main_mapping(p, &newmap[0]))
		goto out;
	/* pprof takes the first mapping for the profile's main binary: the busiest program */
	for (uint32_t i = 0, next = 2; i < p->nmaps; i++)
		newmap[i + 1] = i + 1 == newmap[0] ? 1 : next++;
	/* locations at ELF virtual addresses; a named one has one line */
	locs = calloc(p->nlocs + 1, sizeof(*locs));
	locp = calloc(p->nlocs + 1, sizeof(*locp));
	lines = calloc(p->nlocs + 1, sizeof(*lines));
	linep = calloc(p->nlocs + 1, sizeof(*linep));
	ft.v = calloc(p->nlocs + 1, sizeof(*ft.v));
	for (ft.scap = 16; ft.scap < 2 * (p->nlocs + 1); ft.scap *= 2)
		;
	ft.slot = calloc(ft.scap, sizeof(*ft.slot));
	if (!locs || !locp || !lines || !linep || !ft.v || !ft.slot)
		goto out;
	/*
	 * ids in (mapping, address) order: neighbouring ids hold neighbouring
	 * addresses and samples list them in order, which gzip finds again
	 */
	newid = calloc(p->nlocs + 1, sizeof(*newid));
	locorder = calloc(p->nlocs + 1, sizeof(*locorder));
	if (!newid || !locorder)
		goto out;
	ls = malloc((p->nlocs + 1) * sizeof(*ls));
	if (!ls)
		goto out;
	for (size_t i = 0; i < p->nlocs; i++)
		ls[i] = (struct loc_sort){ p->locs[i].key, p->locs[i].mapping, (uint32_t)i };
	if (sort_locs(ls, p->nlocs)) {
		free(ls);
		goto out;
	}
	for (size_t i = 0; i < p->nlocs; i++)
		locorder[i] = ls[i].idx;
	free(ls);
	for (size_t r = 0; r < p->nlocs; r++)
		newid[locorder[r] + 1] = (uint32_t)r + 1;
	/* samples: values samples and samples * period; labels per sample then --label pairs */
	nlab_per = NLABEL_KEYS + p->nlabels;
	sp = malloc(sizeof(*sp));
	locids = calloc(p->npool + 1, sizeof(*locids));
	glab = calloc(p->nlabels + 1, sizeof(*glab));
	if (!sp || !locids || !glab)
		goto out;
	for (size_t i = 0; i < p->nlabels; i++) {
		glab[i] = (PLabel)PERFTOOLS__PROFILES__LABEL__INIT;
		glab[i].key = str_intern(&st, p->labels[i].key, false);
		glab[i].str = str_intern(&st, p->labels[i].value, false);
		if (glab[i].key < 0 || glab[i].str < 0)
			goto out;
	}
	for (size_t i = 0; i < p->npool; i++)
		locids[i] = newid[p->locpool[i]];
	/*
	 * one label array per run of samples with the same labels. (Sorting
	 * the samples by labels and stack saved 1.5 % of the gzip'd size at a
	 * tenth of the export's time.)
	 */
	for (size_t i = 0; i < p->nsamples; i++)
		if (!i || !labels_same(&p->samples[i - 1].lab, &p->samples[i].lab))
			nruns++;
	labelp = calloc(nlab_per * nruns + 1, sizeof(*labelp));
	if (!labelp)
		goto out;
	sp->p = p;
	sp->lt = &lt;
	sp->st = &st;
	sp->glab = glab;
	sp->locids = locids;
	sp->labelp = labelp;
	sp->nlab = 0;

	/*
	 * The samples first: they need no names, so the locations are named
	 * (o->name_fn, libbfd in opexport) on a thread of their own meanwhile;
	 * then everything else, in a message of its own
	 */
	out = pbout_open(o && o->no_gzip, o && o->threaded, &ret);
	if (!out)
		goto out;
	if (o && o->name_fn) {
		namer.fn = o->name_fn;
		namer.arg = o->name_arg;
		/* no thread to be had: named here, before */
		named = !pthread_create(&namer.thr, NULL, namer_run, &namer);
		if (!named)
			namer_run(&namer);
	}
	ret = pack_samples(sp, out);
	if (named)
		pthread_join(namer.thr, NULL);
	if (!ret)
		ret = namer.ret;
	if (ret)
		goto out;
	ret = -ENOMEM;
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct op_profile_mapping *m = &p->maps[i];
		PMapping *pm = &maps[newmap[i + 1] - 1];
		char hex[sizeof(m->build_id)];

		*pm = (PMapping)PERFTOOLS__PROFILES__MAPPING__INIT;
		pm->id = newmap[i + 1];
		if (m->have_text) {
			pm->memory_start = m->text_vaddr;
			pm->memory_limit = m->text_vaddr + m->text_size;
			pm->file_offset = m->text_off;
		} else if (m->kind == OP_IMAGE_ANON) {
			pm->memory_start = m->anon_start;
			pm->memory_limit = m->anon_end + 1;
		} else {
			pm->memory_start = m->is_kernel ? p->kernel_start : 0;
			pm->memory_limit = pm->memory_start + m->max_key + 1;
		}
		pm->filename = str_intern(&st, m->path, false);
		hex_buildid(m->build_id, hex, sizeof(hex));
		pm->build_id = str_intern(&st, hex, true);
		pm->has_functions = m->has_functions;
		pm->has_filenames = m->has_lines;
		pm->has_line_numbers = m->has_lines;
		if (pm->filename < 0 || pm->build_id < 0)
			goto out;
		mapp[pm->id - 1] = pm;
	}
	prof.n_mapping = p->nmaps;
	prof.mapping = mapp;

	for (size_t r = 0; r < p->nlocs; r++) {
		const size_t i = r;
		const struct op_profile_loc *l = &p->locs[locorder[r]];
		PLocation *pl = &locs[i];

		*pl = (PLocation)PERFTOOLS__PROFILES__LOCATION__INIT;
		pl->id = i + 1;
		pl->mapping_id = newmap[l->mapping];
		pl->address = op_profile_loc_addr(p, l);
		if (l->func) {
			int64_t name = str_intern(&st, l->func, false);
			int64_t file = str_intern(&st, l->file, false);

			if (name < 0 || file < 0)
				goto out;
			lines[i] = (PLine)PERFTOOLS__PROFILES__LINE__INIT;
			lines[i].function_id = fn_id(&ft, name, file);
			lines[i].line = l->line;
			linep[i] = &lines[i];
			pl->n_line = 1;
			pl->line = &linep[i];
		}
		locp[i] = pl;
	}
	prof.n_location = p->nlocs;
	prof.location = locp;
	fnp = calloc(ft.n + 1, sizeof(*fnp));
	if (!fnp)
		goto out;
	for (size_t i = 0; i < ft.n; i++)
		fnp[i] = &ft.v[i];
	prof.n_function = ft.n;
	prof.function = fnp;

	prof.n_string_table = st.n;
	prof.string_table = st.v;
	pack_part(&prof.base, out);
	ret = 0;
out:
	if (out)
		ret = pbout_close(out, ret, buf, len);
	free(maps);
	free(mapp);
	free(locs);
	free(locp);
	free(lines);
	free(linep);
	free(ft.v);
	free(ft.slot);
	free(fnp);
	free(sp);
	free(locids);
	free(labelp);
	free(glab);
	free(locorder);
	free(newmap);
	free(newid);
	for (size_t i = 0; i < lt.cap; i++)
		free(lt.v[i].l);
	free(lt.v);
	strtab_free(&st);
	return ret;
}
