/*
 * op_profile.c - the profile model: mappings, locations and samples kept
 * unique through open-addressing hashes, flat samples reconciled with whole
 * stacks, the binaries' executable PT_LOAD, the delta of two profiles.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_buildid.h"
#include "op_profile.h"

_Static_assert(OP_PROFILE_BUILDID_MAX == OP_BUILDID_MAX, "build IDs of lib/op_buildid fit");
#include "op_profile_int.h"

/* ------------------------------------------------------------ hashes */

static uint64_t ph_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t ph_str(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return ph_mix(h, 0);
}

/* slot of the id equal to what @eq(@arg, id) says, or the empty slot to fill */
static uint32_t *ph_find(struct ph *t, uint64_t h, bool (*eq)(const void *arg, uint32_t id),
			 const void *arg)
{
	size_t mask = t->cap - 1, i = (size_t)h & mask;

	while (t->slot[i]) {
		if (eq(arg, t->slot[i]))
			return &t->slot[i];
		i = (i + 1) & mask;
	}
	return &t->slot[i];
}

/* room for @more more ids; @rehash(@arg, id) gives each id's hash again. 0 or -ENOMEM. */
static int ph_reserve_n(struct ph *t, size_t more, uint64_t (*rehash)(const void *arg, uint32_t id),
			const void *arg)
{
	uint32_t *old = t->slot;
	size_t ocap = t->cap, ncap = t->cap ? t->cap : 1024;

	while ((t->n + more) * 4 >= ncap * 3)
		ncap *= 2;
	if (ncap == t->cap)
		return 0;
	t->slot = calloc(ncap, sizeof(*t->slot));
	if (!t->slot) {
		t->slot = old;
		return -ENOMEM;
	}
	t->cap = ncap;
	for (size_t i = 0; i < ocap; i++) {
		size_t j;

		if (!old[i])
			continue;
		j = (size_t)rehash(arg, old[i]) & (ncap - 1);
		while (t->slot[j])
			j = (j + 1) & (ncap - 1);
		t->slot[j] = old[i];
	}
	free(old);
	return 0;
}

static int ph_reserve(struct ph *t, uint64_t (*rehash)(const void *arg, uint32_t id),
		      const void *arg)
{
	return ph_reserve_n(t, 1, rehash, arg);
}

static void *op_grow(void *v, size_t *cap, size_t need, size_t size)
{
	size_t ncap;
	void *nv;

	if (need <= *cap)
		return v;
	ncap = *cap ? *cap : 64;
	while (ncap < need)
		ncap *= 2;
	nv = realloc(v, ncap * size);
	if (nv)
		*cap = ncap;
	return nv;
}

#define OP_GROW(arr, cap, need)                                             \
	({                                                                  \
		void *nv_ = op_grow((arr), &(cap), (need), sizeof(*(arr))); \
		if (nv_)                                                    \
			(arr) = nv_;                                        \
		nv_ ? 0 : -ENOMEM;                                          \
	})

/* ------------------------------------------------------------ warnings */

void op_profile_warnf(struct op_profile *p, const char *fmt, ...)
{
	struct op_profile_priv *pv = p->priv;
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->nwarnings++;
	if (pv->warn)
		pv->warn(pv->warn_arg, msg);
	else
		fprintf(stderr, "op_profile: %s\n", msg);
}

void op_profile_set_warn(struct op_profile *p, op_profile_warn_fn fn, void *arg)
{
	struct op_profile_priv *pv = p->priv;

	pv->warn = fn;
	pv->warn_arg = arg;
}

/* ------------------------------------------------------------ model */

struct op_profile *op_profile_new(void)
{
	struct op_profile *p = calloc(1, sizeof(*p));

	if (p && !(p->priv = calloc(1, sizeof(struct op_profile_priv)))) {
		free(p);
		return NULL;
	}
	return p;
}

void op_profile_free(struct op_profile *p)
{
	struct op_profile_priv *pv;

	if (!p)
		return;
	pv = p->priv;
	for (size_t i = 0; i < p->nmaps; i++) {
		free(p->maps[i].path);
		free(p->maps[i].file);
	}
	for (size_t i = 0; i < p->nlocs; i++) {
		free(p->locs[i].func);
		free(p->locs[i].file);
	}
	for (size_t i = 0; i < p->nlabels; i++) {
		free(p->labels[i].key);
		free(p->labels[i].value);
	}
	free(p->labels);
	op_cgroup_index_free(&p->cgroups);
	op_cgroup_index_free(&p->splits); /* issue 20 */
	free(p->maps);
	free(p->locs);
	free(p->locpool);
	free(p->samples);
	if (pv) {
		free(pv->maps.slot);
		free(pv->locs.slot);
		free(pv->samples.slot);
		free(pv->flat);
		free(pv->root);
	}
	free(pv);
	free(p);
}

struct map_probe {
	const struct op_profile *p;
	const struct op_image_name *n;
};

static const char *img_path(const struct op_image_name *n)
{
	return n->path ? n->path : "";
}

static uint64_t map_hash_n(const struct op_image_name *n)
{
	uint64_t h = ph_str(0xcbf29ce484222325ull, img_path(n));

	h = ph_mix(h, n->kind);
	if (n->kind == OP_IMAGE_ANON)
		h = ph_mix(ph_mix(h, (uint64_t)(uint32_t)n->tgid), n->start);
	return h;
}

static struct op_image_name map_name(const struct op_profile_mapping *m)
{
	return (struct op_image_name){ .kind = m->kind,
				       .path = m->path,
				       .tgid = m->tgid,
				       .start = m->anon_start,
				       .end = m->anon_end };
}

static uint64_t map_rehash(const void *arg, uint32_t id)
{
	const struct op_profile *p = arg;
	struct op_image_name n = map_name(&p->maps[id - 1]);

	return map_hash_n(&n);
}

static bool map_eq(const void *arg, uint32_t id)
{
	const struct map_probe *q = arg;
	const struct op_profile_mapping *m = &q->p->maps[id - 1];

	if (m->kind != q->n->kind || strcmp(m->path, img_path(q->n)))
		return false;
	return m->kind != OP_IMAGE_ANON || (m->tgid == q->n->tgid && m->anon_start == q->n->start);
}

uint32_t op_profile_mapping(struct op_profile *p, const struct op_image_name *n, bool is_kernel,
			    const char *file)
{
	struct op_profile_priv *pv = p->priv;
	struct map_probe q = { p, n };
	struct op_profile_mapping *m;
	uint32_t *slot;

	if (ph_reserve(&pv->maps, map_rehash, p) || OP_GROW(p->maps, p->capmaps, p->nmaps + 1))
		return 0;
	slot = ph_find(&pv->maps, map_hash_n(n), map_eq, &q);
	if (*slot)
		return *slot;
	m = &p->maps[p->nmaps];
	memset(m, 0, sizeof(*m));
	m->path = strdup(img_path(n));
	m->file = file && strcmp(file, img_path(n)) ? strdup(file) : NULL;
	if (!m->path || (file && strcmp(file, img_path(n)) && !m->file)) {
		free(m->path);
		free(m->file);
		return 0;
	}
	m->kind = n->kind;
	m->is_kernel = is_kernel || n->kind == OP_IMAGE_KERNEL;
	m->tgid = n->kind == OP_IMAGE_ANON ? n->tgid : -1;
	m->anon_start = n->start;
	m->anon_end = n->end;
	m->id = (uint32_t)++p->nmaps;
	*slot = m->id;
	pv->maps.n++;
	return m->id;
}

struct loc_probe {
	const struct op_profile *p;
	uint32_t map;
	uint64_t key;
};

static uint64_t loc_hash(uint32_t map, uint64_t key)
{
	return ph_mix(ph_mix(0x84222325cbf29ce4ull, map), key);
}

static uint64_t loc_rehash(const void *arg, uint32_t id)
{
	const struct op_profile *p = arg;

	return loc_hash(p->locs[id - 1].mapping, p->locs[id - 1].key);
}

static bool loc_eq(const void *arg, uint32_t id)
{
	const struct loc_probe *q = arg;
	const struct op_profile_loc *l = &q->p->locs[id - 1];

	return l->mapping == q->map && l->key == q->key;
}

uint32_t op_profile_location(struct op_profile *p, uint32_t map, uint64_t key)
{
	struct op_profile_priv *pv = p->priv;
	struct loc_probe q = { p, map, key };
	struct op_profile_loc *l;
	uint32_t *slot;

	if (!map || map > p->nmaps)
		return 0;
	if (ph_reserve(&pv->locs, loc_rehash, p) || OP_GROW(p->locs, p->caplocs, p->nlocs + 1))
		return 0;
	slot = ph_find(&pv->locs, loc_hash(map, key), loc_eq, &q);
	if (*slot)
		return *slot;
	l = &p->locs[p->nlocs];
	memset(l, 0, sizeof(*l));
	l->mapping = map;
	l->key = key;
	if (key > p->maps[map - 1].max_key)
		p->maps[map - 1].max_key = key;
	*slot = (uint32_t)++p->nlocs;
	pv->locs.n++;
	return *slot;
}

static const struct op_profile_labels no_labels = { -1, -1, -1, 0, 0 };

/* ph_find's test when every id is known to differ: the empty slot */
static bool no_match(const void *arg, uint32_t id)
{
	(void)arg;
	(void)id;
	return false;
}

struct sample_probe {
	const struct op_profile *p;
	const uint32_t *locs;
	size_t n;
	const struct op_profile_labels *lab;
};

static uint64_t sample_hash(const uint32_t *locs, size_t n, const struct op_profile_labels *lab)
{
	uint64_t h = ph_mix(ph_mix(ph_mix(ph_mix(ph_mix(0x1234567, (uint32_t)lab->pid),
						 (uint32_t)lab->tid),
					  (uint32_t)lab->cpu),
				   lab->comm),
			    lab->cgroup);

	for (size_t i = 0; i < n; i++)
		h = ph_mix(h, locs[i]);
	return h;
}

static uint64_t sample_rehash(const void *arg, uint32_t id)
{
	const struct op_profile *p = arg;
	const struct op_profile_sample *s = &p->samples[id - 1];

	return sample_hash(p->locpool + s->loc_off, s->nlocs, &s->lab);
}

static bool labels_eq(const struct op_profile_labels *a, const struct op_profile_labels *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->cpu == b->cpu && a->comm == b->comm &&
	       a->cgroup == b->cgroup;
}

static bool sample_eq(const void *arg, uint32_t id)
{
	const struct sample_probe *q = arg;
	const struct op_profile_sample *s = &q->p->samples[id - 1];

	return s->nlocs == q->n && labels_eq(&s->lab, q->lab) &&
	       !memcmp(q->p->locpool + s->loc_off, q->locs, q->n * sizeof(*q->locs));
}

/*
 * The samples' hash indexes every sample again after flat_unique() added
 * samples without it. 0 or -ENOMEM.
 */
static int samples_indexed(struct op_profile *p)
{
	struct op_profile_priv *pv = p->priv;

	if (pv->samples.n == p->nsamples)
		return 0;
	free(pv->samples.slot);
	pv->samples = (struct ph){ 0 };
	if (ph_reserve_n(&pv->samples, p->nsamples, sample_rehash, p))
		return -ENOMEM;
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct op_profile_sample *s = &p->samples[i];

		*ph_find(&pv->samples, sample_hash(p->locpool + s->loc_off, s->nlocs, &s->lab),
			 no_match, NULL) = (uint32_t)i + 1;
	}
	pv->samples.n = p->nsamples;
	return 0;
}

static int add_sample(struct op_profile *p, const uint32_t *locs, size_t n,
		      const struct op_profile_labels *lab, uint64_t count)
{
	struct op_profile_priv *pv = p->priv;
	struct sample_probe q = { p, locs, n, lab };
	struct op_profile_sample *s;
	uint32_t *slot;

	if (samples_indexed(p) || ph_reserve(&pv->samples, sample_rehash, p) ||
	    OP_GROW(p->samples, p->capsamples, p->nsamples + 1) ||
	    OP_GROW(p->locpool, p->cappool, p->npool + n))
		return -ENOMEM;
	slot = ph_find(&pv->samples, sample_hash(locs, n, lab), sample_eq, &q);
	p->total += count;
	if (*slot) {
		p->samples[*slot - 1].count += count;
		return 0;
	}
	s = &p->samples[p->nsamples];
	s->loc_off = (uint32_t)p->npool;
	s->nlocs = (uint32_t)n;
	s->lab = *lab;
	s->count = count;
	memcpy(p->locpool + p->npool, locs, n * sizeof(*locs));
	p->npool += n;
	*slot = (uint32_t)++p->nsamples;
	pv->samples.n++;
	return 0;
}

int op_profile_add(struct op_profile *p, const uint32_t *locs, size_t n,
		   const struct op_profile_labels *lab, uint64_t count, bool flat)
{
	struct op_profile_priv *pv = p->priv;

	if (!lab)
		lab = &no_labels;
	if (!count || !n)
		return 0;
	if (flat && n == 1) {
		if (OP_GROW(pv->flat, pv->capflat, pv->nflat + 1))
			return -ENOMEM;
		pv->flat[pv->nflat++] = (struct op_profile_flat){ locs[0], *lab, count };
		return 0;
	}
	p->stack_samples += count;
	return add_sample(p, locs, n, lab, count);
}

int op_profile_add_label(struct op_profile *p, const char *kv)
{
	const char *eq = strchr(kv, '=');
	struct op_profile_label_kv *nv, *l;

	if (!eq || eq == kv)
		return -EINVAL;
	nv = realloc(p->labels, (p->nlabels + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	p->labels = nv;
	l = &nv[p->nlabels];
	l->key = strndup(kv, (size_t)(eq - kv));
	l->value = strdup(eq + 1);
	if (!l->key || !l->value) {
		free(l->key);
		free(l->value);
		return -ENOMEM;
	}
	p->nlabels++;
	return 0;
}

int op_profile_name_loc(struct op_profile *p, uint32_t loc, const char *func, const char *file,
			unsigned line)
{
	struct op_profile_loc *l;
	struct op_profile_mapping *m;

	if (!loc || loc > p->nlocs)
		return -EINVAL;
	l = &p->locs[loc - 1];
	m = &p->maps[l->mapping - 1];
	free(l->func);
	free(l->file);
	l->func = func ? strdup(func) : NULL;
	l->file = file ? strdup(file) : NULL;
	l->line = line;
	if ((func && !l->func) || (file && !l->file))
		return -ENOMEM;
	if (func)
		m->has_functions = true;
	if (file && line)
		m->has_lines = true;
	return 0;
}

/* ------------------------------------------------------------ sample files */

/* issue 20: 1 + the index of split key @key in @p->splits (added if new), 0: ENOMEM */
static uint32_t split_id(struct op_profile *p, const char *key)
{
	struct op_cgroup_index *x = &p->splits;
	struct op_cgroup_entry *nv;

	for (size_t i = 0; i < x->n; i++)
		if (!strcmp(x->v[i].cgroup, key))
			return (uint32_t)i + 1;
	if (strlen(key) >= sizeof(nv->cgroup) || !(nv = realloc(x->v, (x->n + 1) * sizeof(*nv))))
		return 0;
	x->v = nv;
	nv += x->n;
	memset(nv, 0, sizeof(*nv));
	strcpy(nv->cgroup, key);
	op_cgroup_ids(nv->cgroup, nv);
	x->found = true;
	return (uint32_t)++x->n;
}

/*
 * issue 20: a stack's split key (op_profile_load): its id as split_id's;
 * once flat files of a split were added, only a key one of them has (a
 * stack of a split the export did not select gives 0 in *@id)
 */
int op_profile_split_id(struct op_profile *p, const char *key, uint32_t *id)
{
	struct op_profile_priv *pv = p->priv;

	*id = 0;
	if (pv->flat_split) {
		for (size_t i = 0; i < p->splits.n; i++)
			if (!strcmp(p->splits.v[i].cgroup, key))
				*id = (uint32_t)i + 1;
		return 0;
	}
	*id = split_id(p, key);
	return *id ? 0 : -ENOMEM;
}

int op_profile_add_odb(struct op_profile *p, odb_t *db, const struct op_parsed_name *pn,
		       const char *file, char *err, size_t err_len)
{
	const struct opd_header *h = odb_header(db);
	struct op_profile_priv *pv = p->priv;
	struct op_profile_labels lab = { pn->tgid, pn->tid, pn->cpu, 0, 0 };
	const struct odb_node *nodes;
	uint32_t map;
	size_t n = 0;

	if (!p->event[0]) {
		snprintf(p->event, sizeof(p->event), "%s", pn->event);
		p->period = pn->count;
		p->cpu_type = h->cpu_type;
		p->timer = h->cpu_type == OP_CPU_TIMER || !strcmp(pn->event, "TIMER");
	} else if (strcmp(p->event, pn->event) || p->period != pn->count) {
		snprintf(err, err_len,
			 "the session holds samples of two events, %s:%llu and %s:%llu: export one "
			 "(event:NAME count:N)",
			 p->event, (unsigned long long)p->period, pn->event,
			 (unsigned long long)pn->count);
		return -EXDEV;
	}
	map = op_profile_mapping(p, &pn->image, h->is_kernel, file);
	if (!map)
		return -ENOMEM;
	if (pn->split && !(lab.cgroup = split_id(p, pn->split))) /* issue 20 */
		return -ENOMEM;
	/* the process: its executable, when --separate kept it apart from the image */
	if (pn->app.path && pn->app.kind == OP_IMAGE_USER &&
	    (pn->tgid >= 0 || strcmp(img_path(&pn->app), img_path(&pn->image)))) {
		lab.comm = op_profile_mapping(p, &pn->app, false, NULL);
		if (!lab.comm)
			return -ENOMEM;
	}
	pv->flat_thread |= pn->tgid >= 0 || pn->tid >= 0;
	pv->flat_cpu |= pn->cpu >= 0;
	pv->flat_split |= pn->split != NULL;
	nodes = odb_nodes(db, &n);
	for (size_t i = 0; i < n; i++) {
		uint32_t loc;

		if (!nodes[i].value)
			continue;
		loc = op_profile_location(p, map, nodes[i].key);
		if (!loc || op_profile_add(p, &loc, 1, &lab, nodes[i].value, true))
			return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------ finishing */

static void set_ids(struct op_profile_mapping *m, const struct op_elf_ids *ids)
{
	if (ids->id_len)
		op_buildid_hex(ids->id, ids->id_len, m->build_id, sizeof(m->build_id));
	if (ids->text_size) {
		m->text_off = ids->text_off;
		m->text_vaddr = ids->text_vaddr;
		m->text_size = ids->text_size;
		m->have_text = true;
	}
}

/* the build ID and executable PT_LOAD of the binary itself (lib/op_buildid's reader) */
static void read_binary(struct op_profile_mapping *m, const char *root)
{
	const char *file = m->file ? m->file : m->path;
	struct op_elf_ids ids;
	char *path = NULL;
	struct stat st;
	int fd;

	if (m->kind != OP_IMAGE_USER || m->is_kernel || file[0] != '/')
		return;
	if (root && root[0] && !m->file) {
		if (asprintf(&path, "%s%s", root, file) < 0)
			return;
		file = path;
	}
	fd = open(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && !op_elf_ids_from_fd(fd, &ids))
		set_ids(m, &ids);
	close(fd);
}

/* what the session's build-id index says of each image not known yet */
int op_profile_apply_buildids(struct op_profile *p, const char *samples_dir)
{
	struct op_buildid_index idx = { 0 };
	char err[512] = "";
	int ret = op_buildid_index_load(samples_dir, &idx, err, sizeof(err));

	if (ret == -ENOENT)
		return 0; /* a session older than the index: the binaries say it */
	if (ret == -ENOMEM)
		return ret;
	if (ret) {
		op_profile_warnf(p, "%s", err);
		return 0;
	}
	for (size_t i = 0; i < p->nmaps; i++) {
		struct op_profile_mapping *m = &p->maps[i];
		const struct op_buildid_ent *e;

		if (m->build_id[0] || m->kind == OP_IMAGE_ANON)
			continue;
		e = op_buildid_index_find(&idx, m->path);
		if (e && (e->kind == OP_BUILDID_KERNEL) == m->is_kernel)
			set_ids(m, &e->ids);
	}
	op_buildid_index_free(&idx);
	return 0;
}

uint64_t op_profile_loc_addr(const struct op_profile *p, const struct op_profile_loc *loc)
{
	const struct op_profile_mapping *m = &p->maps[loc->mapping - 1];

	if (m->kind == OP_IMAGE_ANON)
		return loc->key + m->anon_start;
	if (m->is_kernel)
		return loc->key + p->kernel_start;
	if (m->have_text)
		return loc->key - m->text_off + m->text_vaddr;
	return loc->key;
}

/* the stack samples ending at a location with given labels, while flat ones are matched */
struct leaf_ent {
	uint32_t loc; /* 0: empty */
	int32_t pid, tid, cpu;
	uint32_t cgroup; /* a --separate=cgroup split's stacks come off its own flat samples */
	uint64_t count;
};

struct leaf_tab {
	struct leaf_ent *v;
	size_t mask;
};

static struct leaf_ent *leaf_find(struct leaf_tab *t, uint32_t loc,
				  const struct op_profile_labels *l)
{
	uint64_t h = ph_mix(ph_mix(ph_mix(ph_mix(ph_mix(0x5bd1e995, loc), (uint32_t)l->pid),
					  (uint32_t)l->tid),
				   (uint32_t)l->cpu),
			    l->cgroup);
	size_t i = (size_t)h & t->mask;

	while (t->v[i].loc && !(t->v[i].loc == loc && t->v[i].pid == l->pid && t->v[i].tid == l->tid &&
				t->v[i].cpu == l->cpu && t->v[i].cgroup == l->cgroup))
		i = (i + 1) & t->mask;
	return &t->v[i];
}

static bool has_context(const struct op_profile_labels *l)
{
	return l->pid >= 0 || l->tid >= 0 || l->cpu >= 0 || l->cgroup;
}

/* @take of *@have, at most: what is taken off @c */
static uint64_t take_from(uint64_t *have, uint64_t c)
{
	uint64_t t = c < *have ? c : *have;

	*have -= t;
	return c - t;
}

/* what a sample file's flat samples share: their labels and image */
struct flat_run {
	struct op_profile_labels lab;
	uint32_t map;
};

static uint64_t run_hash(const struct flat_run *r)
{
	return ph_mix(sample_hash(NULL, 0, &r->lab), r->map);
}

struct run_probe {
	const struct flat_run *runs, *r;
};

static bool run_eq(const void *arg, uint32_t id)
{
	const struct run_probe *q = arg;

	return q->runs[id - 1].map == q->r->map && labels_eq(&q->runs[id - 1].lab, &q->r->lab);
}

static uint64_t run_rehash(const void *arg, uint32_t id)
{
	return run_hash(&((const struct flat_run *)arg)[id - 1]);
}

/* is @r new in *@runs (through the hash @t)? added if so. 1, 0, -ENOMEM. */
static int run_new(struct ph *t, struct flat_run **runs, size_t *n, size_t *cap,
		   const struct flat_run *r)
{
	struct run_probe q;
	uint32_t *slot;

	if (ph_reserve(t, run_rehash, *runs) || OP_GROW(*runs, *cap, *n + 1))
		return -ENOMEM;
	q = (struct run_probe){ *runs, r };
	slot = ph_find(t, run_hash(r), run_eq, &q);
	if (*slot)
		return 0;
	(*runs)[(*n)++] = *r;
	*slot = (uint32_t)*n;
	t->n++;
	return 1;
}

/* does flat sample @i start a run (labels or image other than the one before)? */
static bool run_starts(const struct op_profile *p, size_t i)
{
	const struct op_profile_flat *f = ((struct op_profile_priv *)p->priv)->flat;

	return !i || !labels_eq(&f[i - 1].lab, &f[i].lab) ||
	       p->locs[f[i - 1].loc - 1].mapping != p->locs[f[i].loc - 1].mapping;
}

/*
 * The flat samples when nothing else was added (no stacks) and each run of
 * them with equal labels and image (a sample file's, or several files' one
 * after the other) has labels and image no other run has, as sample files
 * do (one per thread, cpu, image...): then only samples of one run can
 * merge (the same location twice), found through a stamp per location,
 * and the rest is appended. (The samples' hash took 25 ms of 300,000 flat
 * samples; it is made again only if a sample is added later.) 1: done, 0:
 * not so (the caller merges them), -ENOMEM.
 */
static int flat_unique(struct op_profile *p)
{
	struct op_profile_priv *pv = p->priv;
	struct flat_run *runs = NULL;
	size_t nruns = 0, capruns = 0;
	struct ph rt = { 0 };                /* the runs' numbers */
	uint32_t *stamp = NULL, *idx = NULL; /* by location: the run that has it, its sample */
	int ret = 1;

	for (size_t i = 0; i < pv->nflat && ret > 0; i++) {
		const struct op_profile_flat *f = &pv->flat[i];

		if (run_starts(p, i))
			ret = run_new(&rt, &runs, &nruns, &capruns,
				      &(struct flat_run){ f->lab, p->locs[f->loc - 1].mapping });
	}
	free(runs);
	free(rt.slot);
	if (ret <= 0)
		return ret;
	stamp = calloc(p->nlocs + 1, sizeof(*stamp));
	idx = malloc((p->nlocs + 1) * sizeof(*idx));
	if (!stamp || !idx || OP_GROW(p->samples, p->capsamples, p->nsamples + pv->nflat) ||
	    OP_GROW(p->locpool, p->cappool, p->npool + pv->nflat)) {
		free(stamp);
		free(idx);
		return -ENOMEM;
	}
	nruns = 0;
	for (size_t i = 0; i < pv->nflat; i++) {
		const struct op_profile_flat *f = &pv->flat[i];

		nruns += run_starts(p, i);
		p->total += f->count;
		if (stamp[f->loc] == nruns) {
			p->samples[idx[f->loc]].count += f->count;
			continue;
		}
		stamp[f->loc] = (uint32_t)nruns;
		idx[f->loc] = (uint32_t)p->nsamples;
		p->samples[p->nsamples++] = (struct op_profile_sample){
			.loc_off = (uint32_t)p->npool, .nlocs = 1, .lab = f->lab, .count = f->count
		};
		p->locpool[p->npool++] = f->loc;
	}
	free(stamp);
	free(idx);
	return 1;
}

int op_profile_finish(struct op_profile *p)
{
	struct op_profile_priv *pv = p->priv;
	struct leaf_tab ctx = { 0 };
	uint64_t *leaf = NULL;
	int ret = 0;

	for (size_t i = 0; i < p->nmaps; i++)
		if (!p->maps[i].build_id[0] && !p->maps[i].have_text)
			read_binary(&p->maps[i], pv->root);
	/*
	 * What the stacks end in is in the flat files too: keep only the rest.
	 * A stack with a context (pid/tid/cpu labels, the cgroup of a
	 * --separate=cgroup split) is taken off the flat samples with the same
	 * labels, so each thread and cgroup keeps its own count; one
	 * without is taken off whichever flat samples of its leaf come first.
	 */
	if (p->stack_samples) {
		size_t cap = 16;

		while (cap < 2 * p->nsamples + 2)
			cap *= 2;
		leaf = calloc(p->nlocs + 1, sizeof(*leaf));
		ctx.v = calloc(cap, sizeof(*ctx.v));
		ctx.mask = cap - 1;
		if (!leaf || !ctx.v) {
			free(leaf);
			free(ctx.v);
			return -ENOMEM;
		}
		for (size_t i = 0; i < p->nsamples; i++) {
			const struct op_profile_sample *s = &p->samples[i];
			uint32_t loc = p->locpool[s->loc_off];
			struct leaf_ent *e;

			if (!has_context(&s->lab)) {
				leaf[loc] += s->count;
				continue;
			}
			e = leaf_find(&ctx, loc, &s->lab);
			if (!e->loc)
				*e = (struct leaf_ent){ loc,        s->lab.pid,    s->lab.tid,
							s->lab.cpu, s->lab.cgroup, 0 };
			e->count += s->count;
		}
	}
	if (!p->nsamples && (ret = flat_unique(p))) {
		ret = ret < 0 ? ret : 0;
		goto out;
	}
	/* the flat samples' room at once, not a doubling at a time */
	if (samples_indexed(p) || ph_reserve_n(&pv->samples, pv->nflat, sample_rehash, p) ||
	    OP_GROW(p->samples, p->capsamples, p->nsamples + pv->nflat) ||
	    OP_GROW(p->locpool, p->cappool, p->npool + pv->nflat))
		ret = -ENOMEM;
	for (size_t i = 0; i < pv->nflat && !ret; i++) {
		struct op_profile_flat *f = &pv->flat[i];
		uint64_t c = f->count;

		if (leaf) {
			struct leaf_ent *e = leaf_find(&ctx, f->loc, &f->lab);

			if (e->loc)
				c = take_from(&e->count, c);
			c = take_from(&leaf[f->loc], c);
		}
		if (c)
			ret = add_sample(p, &f->loc, 1, &f->lab, c);
	}
out:
	free(leaf);
	free(ctx.v);
	free(pv->flat);
	pv->flat = NULL;
	pv->nflat = pv->capflat = 0;
	return ret;
}

/* ------------------------------------------------------------ diff */

/* the location of @src's location @id in @dst (added when missing); 0 on ENOMEM */
static uint32_t copy_loc(struct op_profile *dst, const struct op_profile *src, uint32_t id)
{
	const struct op_profile_loc *l = &src->locs[id - 1];
	const struct op_profile_mapping *m = &src->maps[l->mapping - 1];
	struct op_image_name n = map_name(m);
	uint32_t map = op_profile_mapping(dst, &n, m->is_kernel, m->file), loc;

	if (!map)
		return 0;
	if (!dst->maps[map - 1].have_text && m->have_text) {
		dst->maps[map - 1].text_off = m->text_off;
		dst->maps[map - 1].text_vaddr = m->text_vaddr;
		dst->maps[map - 1].text_size = m->text_size;
		dst->maps[map - 1].have_text = true;
	}
	if (!dst->maps[map - 1].build_id[0])
		memcpy(dst->maps[map - 1].build_id, m->build_id, sizeof(m->build_id));
	loc = op_profile_location(dst, map, l->key);
	if (loc && l->func && !dst->locs[loc - 1].func &&
	    op_profile_name_loc(dst, loc, l->func, l->file, l->line))
		return 0;
	return loc;
}

/* @s of @src in @dst's ids: its locations into @out (@s->nlocs), labels into @lab */
static int copy_sample(struct op_profile *dst, const struct op_profile *src,
		       const struct op_profile_sample *s, uint32_t *out,
		       struct op_profile_labels *lab)
{
	for (uint32_t j = 0; j < s->nlocs; j++)
		if (!(out[j] = copy_loc(dst, src, src->locpool[s->loc_off + j])))
			return -ENOMEM;
	*lab = s->lab;
	if (s->lab.cgroup && /* issue 20: the key, in @dst's table */
	    !(lab->cgroup = split_id(dst, src->splits.v[s->lab.cgroup - 1].cgroup)))
		return -ENOMEM;
	if (s->lab.comm) {
		struct op_image_name n = map_name(&src->maps[s->lab.comm - 1]);

		lab->comm = op_profile_mapping(dst, &n, false, NULL);
		if (!lab->comm)
			return -ENOMEM;
	}
	return 0;
}

int op_profile_apply_cgroups(struct op_profile *p, int dfd)
{
	struct op_cgroup_index x, *c = &p->cgroups;
	struct op_cgroup_entry *v;
	size_t i = 0, j = 0, n = 0;
	int rc = op_cgroup_index_load(dfd, &x);

	if (rc) {
		if (rc != -ENOMEM)
			op_profile_warnf(p, "%s: %s (no cgroup labels)", OP_SESSION_CGROUPS_PATH,
					 strerror(-rc));
		return rc == -ENOMEM ? rc : 0;
	}
	if (x.bad)
		op_profile_warnf(p, "%s: %zu malformed lines skipped", OP_SESSION_CGROUPS_PATH,
				 x.bad);
	if (x.reused) /* issue 20 */
		op_profile_warnf(p,
				 "%s: %zu pids were reused in different cgroups: their samples get "
				 "no cgroup label unless split by cgroup; use --separate=cgroup",
				 OP_SESSION_CGROUPS_PATH, x.reused);
	if (!c->n) {
		op_cgroup_index_free(c);
		*c = x;
		return 0;
	}
	/* both sorted by tgid: merge, the later session's line winning */
	v = malloc((c->n + x.n) * sizeof(*v));
	if (!v) {
		op_cgroup_index_free(&x);
		return -ENOMEM;
	}
	while (i < c->n || j < x.n) {
		if (j == x.n || (i < c->n && c->v[i].tgid < x.v[j].tgid)) {
			v[n++] = c->v[i++];
		} else {
			bool amb = false;

			/* issue 20: one tgid, two processes in two cgroups, two sessions */
			if (i < c->n && c->v[i].tgid == x.v[j].tgid)
				amb = c->v[i].ambiguous || op_cgroup_conflict(&c->v[i++], &x.v[j]);
			v[n] = x.v[j++];
			v[n].ambiguous |= amb;
			n++;
		}
	}
	free(c->v);
	c->v = v;
	c->n = n;
	c->found = true;
	op_cgroup_index_free(&x);
	return 0;
}

struct op_profile *op_profile_diff(const struct op_profile *now, const struct op_profile *before)
{
	struct op_profile *d = op_profile_new(), *b = op_profile_new();
	uint32_t *buf = NULL;
	size_t cap = 0;
	int ret = d && b ? 0 : -ENOMEM;

	/* @before's samples in @d's ids (a scratch profile @b holds them, same ids as @d) */
	if (!ret) {
		memcpy(d->event, now->event, sizeof(d->event));
		d->period = now->period;
		d->cpu_type = now->cpu_type;
		d->timer = now->timer;
		d->kernel_start = now->kernel_start;
		d->time_nanos = before->time_nanos + before->duration_nanos;
		d->duration_nanos = now->time_nanos + now->duration_nanos > d->time_nanos ?
					    now->time_nanos + now->duration_nanos - d->time_nanos :
					    0;
	}
	if (!ret)
		ret = op_cgroup_index_copy(&d->cgroups, &now->cgroups);
	for (size_t i = 0; i < now->nlabels && !ret; i++) {
		char *kv;

		if (asprintf(&kv, "%s=%s", now->labels[i].key, now->labels[i].value) < 0)
			ret = -ENOMEM;
		else
			ret = op_profile_add_label(d, kv);
		free(kv);
	}
	/* the earlier counts, keyed in @d's location ids, kept in @b */
	for (size_t i = 0; i < before->nsamples && !ret; i++) {
		const struct op_profile_sample *s = &before->samples[i];
		struct op_profile_labels lab;

		if (OP_GROW(buf, cap, s->nlocs) || copy_sample(d, before, s, buf, &lab))
			ret = -ENOMEM;
		else
			ret = add_sample(b, buf, s->nlocs, &lab, s->count);
	}
	for (size_t i = 0; i < now->nsamples && !ret; i++) {
		const struct op_profile_sample *s = &now->samples[i];
		struct op_profile_priv *bv = b->priv;
		struct op_profile_labels lab;
		struct sample_probe q;
		uint64_t c = s->count;

		if (OP_GROW(buf, cap, s->nlocs) || copy_sample(d, now, s, buf, &lab)) {
			ret = -ENOMEM;
			break;
		}
		q = (struct sample_probe){ b, buf, s->nlocs, &lab };
		if (bv->samples.cap) {
			uint32_t *slot = ph_find(&bv->samples, sample_hash(buf, s->nlocs, &lab),
						 sample_eq, &q);

			if (*slot && b->samples[*slot - 1].count <= c)
				c -= b->samples[*slot - 1].count;
		}
		if (c)
			ret = op_profile_add(d, buf, s->nlocs, &lab, c, false);
	}
	free(buf);
	op_profile_free(b);
	if (ret) {
		op_profile_free(d);
		return NULL;
	}
	return d;
}
