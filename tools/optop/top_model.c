/*
 * top_model.c - optop's model: each refresh reads the session through
 * libopreport (rs_load: the live files opened read-only as opreport does),
 * but an image's symbols are loaded once for the whole run and each
 * sampled address is resolved once: a refresh costs a hash lookup per
 * (image, address) already seen, and symbol work only for new addresses.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opreport_callgraph.h"
#include "optop.h"

double top_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

int model_init(struct top_model *m, const char *session_dir, enum top_split split)
{
	m->session_dir = session_dir;
	m->split = split;
	/*
	 * Symbols are loaded with their names as the binary has them; a name
	 * is demangled when it becomes a row (row_name), not every name of
	 * every image: most are never sampled.
	 */
	m->o.demangle = DEMANGLE_NONE;
	m->o.sort = SORT_SAMPLE;
	m->o.session_dir = session_dir;
	/* one class per cpu or thread when split, else everything merged */
	m->o.merge = MERGE_ALL;
	if (split == TSPLIT_CPU)
		m->o.merge &= ~MERGE_CPU;
	else if (split == TSPLIT_THREAD)
		m->o.merge &= ~(MERGE_TID | MERGE_TGID);
	/* a system-wide session has a thread per class: no column limit here */
	m->o.max_classes = SIZE_MAX;
	return 0;
}

/* ------------------------------------------------------------- images */

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b && b[1] ? b + 1 : p;
}

/*
 * The index tables of images, rows and files: open addressing on a hash
 * of an entry, each slot its index + 1 (0: free). Grown to twice the
 * size (at least @min) and rebuilt from the @n entries, hashed by @hash.
 */
static int index_grow(uint32_t **ht, size_t *cap, size_t min, size_t n,
		      uint64_t (*hash)(const struct top_model *m, size_t i),
		      const struct top_model *m)
{
	size_t ncap = *cap ? *cap * 2 : min;
	uint32_t *nv = calloc(ncap, sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t h = hash(m, i) & (ncap - 1);

		while (nv[h])
			h = (h + 1) & (ncap - 1);
		nv[h] = (uint32_t)i + 1;
	}
	free(*ht);
	*ht = nv;
	*cap = ncap;
	return 0;
}

static uint64_t img_hash_at(const struct top_model *m, size_t i)
{
	return rpt_str_hash(m->imgs[i].id);
}

/*
 * The cached image of @img, its symbols loaded (through rsym_load_image,
 * as opreport loads them) the first time it is seen. -1 when out of memory.
 */
static long image_of(struct top_model *m, struct rpt_profile *p, struct rpt_image *img)
{
	char *id;
	size_t h;
	struct top_image *ti;

	if (asprintf(&id, "%d %d %" PRIx64 " %s", (int)img->kind, (int)img->tgid, img->start,
		     img->path) < 0)
		return -1;
	if (m->img_htcap) {
		for (h = rpt_str_hash(id) & (m->img_htcap - 1); m->img_ht[h];
		     h = (h + 1) & (m->img_htcap - 1)) {
			if (!strcmp(m->imgs[m->img_ht[h] - 1].id, id)) {
				free(id);
				return (long)m->img_ht[h] - 1;
			}
		}
	}
	if ((m->nimgs + 1) * 2 > m->img_htcap &&
	    index_grow(&m->img_ht, &m->img_htcap, 256, m->nimgs, img_hash_at, m))
		goto oom;
	if (m->nimgs == m->capimgs) {
		size_t cap = m->capimgs ? m->capimgs * 2 : 64;
		struct top_image *nv = realloc(m->imgs, cap * sizeof(*nv));

		if (!nv)
			goto oom;
		m->imgs = nv;
		m->capimgs = cap;
	}
	rsym_load_image(p, &m->o, img);
	ti = &m->imgs[m->nimgs];
	memset(ti, 0, sizeof(*ti));
	ti->id = id;
	ti->display = txt_dup(img->is_kernel ? img->display : base_name(img->display));
	if (!ti->display) {
		free(id);
		return -1;
	}
	ti->is_kernel = img->is_kernel;
	ti->no_syms = img->no_syms;
	/* the table moves to the cache: rs_free of this profile frees an empty one */
	ti->syms = img->syms;
	memset(&img->syms, 0, sizeof(img->syms));
	for (h = rpt_str_hash(id) & (m->img_htcap - 1); m->img_ht[h];
	     h = (h + 1) & (m->img_htcap - 1))
		;
	m->img_ht[h] = (uint32_t)++m->nimgs;
	return (long)m->nimgs - 1;
oom:
	free(id);
	return -1;
}

/* --------------------------------------------------------------- rows */

static uint64_t row_hash(uint32_t img, int32_t split, const void *sym, uint64_t addr)
{
	return mix((uint64_t)img * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)split << 17 ^
		   (uint64_t)(uintptr_t)sym ^ mix(addr));
}

static uint64_t row_hash_at(const struct top_model *m, size_t i)
{
	const struct top_row *r = &m->rows[i];

	return row_hash(r->img, r->split, r->sym, r->addr);
}

static char *row_name(const struct top_image *ti, const struct rpt_sym *sym, uint64_t addr,
		      bool no_syms)
{
	char buf[512];

	if (sym) {
		char *d = opbfd_demangle(sym->name, DEMANGLE_SMART), *n = txt_dup(d ? d : sym->name);

		free(d);
		return n;
	}
	if (no_syms)
		return strdup("(no symbols)");
	/* as opreport names an address no symbol covers: IMAGE+0xOFFSET */
	snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, ti->display, addr);
	return strdup(buf);
}

/* the row of (image, split, symbol or address); created when new. -1: out of memory */
static long row_of(struct top_model *m, uint32_t img, int32_t split, const struct rpt_sym *sym,
		   uint64_t key)
{
	const struct top_image *ti = &m->imgs[img];
	bool no_syms = !sym && (ti->no_syms || !ti->syms.src);
	/* an address row is per key; "(no symbols)" one per image */
	uint64_t addr = sym || no_syms ? 0 : key;
	size_t h;
	struct top_row *r;

	if ((m->nrows + 1) * 2 > m->row_htcap &&
	    index_grow(&m->row_ht, &m->row_htcap, 1024, m->nrows, row_hash_at, m))
		return -1;
	for (h = row_hash(img, split, sym, addr) & (m->row_htcap - 1); m->row_ht[h];
	     h = (h + 1) & (m->row_htcap - 1)) {
		r = &m->rows[m->row_ht[h] - 1];
		if (r->img == img && r->split == split && r->sym == sym && r->addr == addr &&
		    r->no_syms_row == no_syms)
			return (long)m->row_ht[h] - 1;
	}
	if (m->nrows == m->caprows) {
		size_t cap = m->caprows ? m->caprows * 2 : 1024;
		struct top_row *nv = realloc(m->rows, cap * sizeof(*nv));

		if (!nv)
			return -1;
		m->rows = nv;
		m->caprows = cap;
	}
	r = &m->rows[m->nrows];
	memset(r, 0, sizeof(*r));
	r->img = img;
	r->split = split;
	r->sym = sym;
	r->addr = addr;
	r->no_syms_row = no_syms;
	r->name = row_name(ti, sym, addr, no_syms);
	if (!r->name)
		return -1;
	m->row_ht[h] = (uint32_t)++m->nrows;
	return (long)m->nrows - 1;
}

/* ---------------------------------------------------------- addresses */

static uint64_t addr_hash(int32_t split, uint64_t key)
{
	return mix(key ^ (uint64_t)(uint32_t)split << 40);
}

static int addr_grow(struct top_image *ti)
{
	size_t cap = ti->addrcap ? ti->addrcap * 2 : 64;
	struct top_addr *nv = calloc(cap, sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	for (size_t i = 0; i < ti->addrcap; i++) {
		const struct top_addr *a = &ti->addrs[i];
		size_t h;

		if (!a->used)
			continue;
		for (h = addr_hash(a->split, a->key) & (cap - 1); nv[h].used;
		     h = (h + 1) & (cap - 1))
			;
		nv[h] = *a;
	}
	free(ti->addrs);
	ti->addrs = nv;
	ti->addrcap = cap;
	return 0;
}

/* the address (split, key) of image @img, resolved to its row when new; NULL: out of memory */
static struct top_addr *addr_of(struct top_model *m, uint32_t img, int32_t split, uint64_t key)
{
	struct top_image *ti = &m->imgs[img];
	const struct rpt_sym *sym;
	struct top_addr *a;
	size_t h;
	long row;

	if ((ti->naddrs + 1) * 2 > ti->addrcap && addr_grow(ti))
		return NULL;
	for (h = addr_hash(split, key) & (ti->addrcap - 1); ti->addrs[h].used;
	     h = (h + 1) & (ti->addrcap - 1)) {
		a = &ti->addrs[h];
		if (a->key == key && a->split == split)
			return a;
	}
	/* new: resolved once, for every later refresh */
	sym = ti->no_syms ? NULL : sym_lookup(&ti->syms, key);
	row = row_of(m, img, split, sym, key);
	if (row < 0)
		return NULL;
	a = &m->imgs[img].addrs[h];
	*a = (struct top_addr){ .key = key, .split = split, .row = (uint32_t)row, .used = true };
	m->imgs[img].naddrs++;
	return a;
}

/* ------------------------------------------------------------ refresh */

static int32_t class_split(const struct top_model *m, const struct rpt_class *c)
{
	if (m->split == TSPLIT_CPU)
		return c->cpu;
	if (m->split == TSPLIT_THREAD)
		return c->tid >= 0 ? c->tid : c->tgid;
	return -1;
}

static uint64_t seg_hash_at(const struct top_model *m, size_t i)
{
	return mix(m->segs[i].id);
}

/* the cache of the sample file @id; created (empty) when new. NULL: out of memory */
static struct top_seg *seg_of(struct top_model *m, uint64_t id, uint32_t img, int32_t split)
{
	struct top_seg *sc;
	size_t h;

	if ((m->nsegs + 1) * 2 > m->seg_htcap &&
	    index_grow(&m->seg_ht, &m->seg_htcap, 1024, m->nsegs, seg_hash_at, m))
		return NULL;
	for (h = mix(id) & (m->seg_htcap - 1); m->seg_ht[h]; h = (h + 1) & (m->seg_htcap - 1)) {
		sc = &m->segs[m->seg_ht[h] - 1];
		if (sc->id == id && sc->img == img && sc->split == split)
			return sc;
	}
	if (m->nsegs == m->capsegs) {
		size_t cap = m->capsegs ? m->capsegs * 2 : 256;
		struct top_seg *nv = realloc(m->segs, cap * sizeof(*nv));

		if (!nv)
			return NULL;
		m->segs = nv;
		m->capsegs = cap;
	}
	sc = &m->segs[m->nsegs];
	*sc = (struct top_seg){ .id = id, .img = img, .split = split };
	m->seg_ht[h] = (uint32_t)++m->nsegs;
	return sc;
}

/* the records of @sc from @from on leave the rows (the file was replaced or went away) */
static void seg_drop(struct top_model *m, struct top_seg *sc, size_t from)
{
	for (size_t i = from; i < sc->n; i++)
		m->rows[sc->rec[i].row].now -= sc->rec[i].count;
	sc->n = from < sc->n ? from : sc->n;
}

/*
 * One sample file's records (@n from @s) against what the last refresh
 * read of it. The daemon only adds nodes to a file and a node keeps its
 * index, so a record is found at the position it had: a count that grew
 * adds its growth to its row, an equal one costs a comparison. Only the
 * file's new nodes are looked up (and resolved to a symbol when the
 * address is new). A file whose records do not line up (replaced: a
 * reset) is counted again from the first difference.
 */
static int seg_read(struct top_model *m, struct top_seg *sc, const struct rpt_sample *s, size_t n)
{
	const uint32_t epoch = m->refreshes + 1;
	size_t i;

	if (sc->cap < n) {
		size_t cap = n + n / 4 + 16;
		struct top_rec *nv = realloc(sc->rec, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		sc->rec = nv;
		sc->cap = cap;
	}
	for (i = 0; i < n && i < sc->n; i++) {
		struct top_rec *r = &sc->rec[i];

		if (r->key != s[i].key) {
			seg_drop(m, sc, i);
			break;
		}
		if (r->count != s[i].count) {
			/* unsigned: a count that went down takes its row down by as much */
			m->rows[r->row].now += s[i].count - r->count;
			r->prev = r->count;
			r->count = s[i].count;
			r->epoch = epoch;
		}
	}
	if (n < sc->n)
		seg_drop(m, sc, n);
	for (; i < n; i++) {
		struct top_addr *a = addr_of(m, sc->img, sc->split, s[i].key);

		if (!a)
			return -ENOMEM;
		sc->rec[i] = (struct top_rec){
			.key = s[i].key, .count = s[i].count, .row = a->row, .epoch = epoch
		};
		m->rows[a->row].now += s[i].count;
		sc->n = i + 1;
	}
	sc->seen = epoch;
	return 0;
}

int model_refresh(struct top_model *m)
{
	struct rpt_profile p = { .session_dir = strdup(m->session_dir) };
	double now = top_now();
	bool *counted = NULL;
	int ret;

	m->err[0] = 0;
	ret = p.session_dir ? rs_load(&p, &m->o, m->err, sizeof(m->err)) : -ENOMEM;
	if (ret) {
		/* nothing sampled yet is not an error for a live view */
		if (ret == -ENOENT && strstr(m->err, "holds no samples"))
			ret = 0;
		goto out;
	}
	counted = calloc(p.ncls ? p.ncls : 1, sizeof(*counted));
	if (!counted) {
		ret = -ENOMEM;
		goto out;
	}
	/* the first event's classes (one per cpu or thread when split) */
	m->nevents = 1;
	snprintf(m->event, sizeof(m->event), "%s", p.ncls ? p.cls[0].event : "");
	m->event_count = p.ncls ? p.cls[0].count : 0;
	m->split_missing = m->split != TSPLIT_NONE;
	for (size_t c = 0; c < p.ncls; c++) {
		if (strcmp(p.cls[c].event, p.cls[0].event) || p.cls[c].count != p.cls[0].count ||
		    p.cls[c].um != p.cls[0].um) {
			m->nevents++;
			continue;
		}
		counted[c] = true;
		if (class_split(m, &p.cls[c]) >= 0)
			m->split_missing = false;
	}
	for (size_t gi = 0; gi < p.ngroups; gi++) {
		struct rpt_group *g = p.groups[gi];
		long img = image_of(m, &p, g->img);

		if (img < 0) {
			ret = -ENOMEM;
			goto out;
		}
		for (size_t k = 0; k < g->nseg; k++) {
			const struct rpt_seg *sg = &g->seg[k];
			const struct rpt_sample *s = g->s + sg->start;
			struct top_seg *sc;

			/* a file's records are of one class */
			if (!sg->n || !counted[s->cls])
				continue;
			sc = seg_of(m, sg->id, (uint32_t)img, class_split(m, &p.cls[s->cls]));
			if (!sc || seg_read(m, sc, s, sg->n)) {
				ret = -ENOMEM;
				goto out;
			}
		}
	}
	/* files this refresh did not find (samples/current set aside): nothing now */
	for (size_t i = 0; i < m->nsegs; i++)
		if (m->segs[i].seen != m->refreshes + 1 && m->segs[i].n)
			seg_drop(m, &m->segs[i], 0);
	m->total_now = 0;
	for (size_t i = 0; i < m->nrows; i++)
		m->total_now += m->rows[i].now;
	m->have_callgraph = p.ncg_files > 0;
	m->lost_prev = m->lost;
	rs_stats(&p, &m->received, &m->lost);
out:
	m->nwarnings += p.nwarnings;
	/*
	 * The delta of each row; a count that went down (the daemon set
	 * samples/current aside: a reset, a rotation) starts again from 0.
	 */
	for (size_t i = 0; i < m->nrows; i++) {
		struct top_row *r = &m->rows[i];

		r->delta = r->now >= r->prev ? r->now - r->prev : r->now;
		r->prev = r->now;
	}
	m->total_delta = m->total_now >= m->total_prev ? m->total_now - m->total_prev : m->total_now;
	m->total_prev = m->total_now;
	m->period_s = m->refreshes ? now - m->last_time : 0;
	m->last_time = now;
	m->refreshes++;
	free(counted);
	rs_free(&p);
	return ret;
}

void model_free(struct top_model *m)
{
	for (size_t i = 0; i < m->nimgs; i++) {
		free(m->imgs[i].id);
		free(m->imgs[i].display);
		symtab_free(&m->imgs[i].syms);
		free(m->imgs[i].addrs);
	}
	for (size_t i = 0; i < m->nrows; i++)
		free(m->rows[i].name);
	free(m->imgs);
	free(m->img_ht);
	free(m->rows);
	free(m->row_ht);
	for (size_t i = 0; i < m->nsegs; i++)
		free(m->segs[i].rec);
	free(m->segs);
	free(m->seg_ht);
	spec_free(&m->o.spec);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------ details */

static int count_cmp(const void *a, const void *b)
{
	const struct top_addr_count *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

int model_row_addrs(const struct top_model *m, uint32_t row, struct top_addr_count **out, size_t *n)
{
	const uint32_t img = m->rows[row].img, epoch = m->refreshes;
	struct top_addr_count *v = NULL;
	size_t k = 0, o = 0;

	for (size_t si = 0; si < m->nsegs; si++) {
		const struct top_seg *sc = &m->segs[si];

		if (sc->img != img)
			continue;
		for (size_t i = 0; i < sc->n; i++)
			k += sc->rec[i].row == row;
	}
	if (k && !(v = malloc(k * sizeof(*v))))
		return -ENOMEM;
	k = 0;
	for (size_t si = 0; si < m->nsegs; si++) {
		const struct top_seg *sc = &m->segs[si];

		if (sc->img != img)
			continue;
		for (size_t i = 0; i < sc->n; i++) {
			const struct top_rec *r = &sc->rec[i];

			if (r->row == row)
				v[k++] = (struct top_addr_count){ r->key, r->count,
								  /* what the last refresh added */
								  r->epoch != epoch ?
									  0 :
								  r->count >= r->prev ?
									  r->count - r->prev :
									  r->count };
		}
	}
	if (k)
		qsort(v, k, sizeof(*v), count_cmp);
	/* one line per address: its records in several files summed */
	for (size_t i = 0; i < k; i++) {
		if (o && v[o - 1].key == v[i].key) {
			v[o - 1].now += v[i].now;
			v[o - 1].delta += v[i].delta;
		} else {
			v[o++] = v[i];
		}
	}
	*out = v;
	*n = o;
	return 0;
}

/*
 * opreport -c's block of the symbol: callers are the indented lines above
 * the one unindented line naming it. Read once when asked (a detail view),
 * not on each refresh.
 */
char *model_callers(struct top_model *m, uint32_t row)
{
	struct rpt_profile p = { .session_dir = strdup(m->session_dir) };
	struct cgr_opts c = { .blocks = true };
	/* names as the rows have them */
	struct rpt_opts ro = m->o;
	const struct top_row *r = &m->rows[row];
	char err[1024], *text = NULL, *out = NULL;
	size_t len = 0, olen = 0;
	FILE *f, *o;
	char *line, *save;

	if (!m->have_callgraph || !r->sym || !p.session_dir)
		goto out;
	ro.demangle = DEMANGLE_SMART;
	if (rs_load(&p, &ro, err, sizeof(err)))
		goto out;
	f = open_memstream(&text, &len);
	if (!f)
		goto out;
	cgr_report(f, &p, &ro, &c);
	fclose(f);
	o = open_memstream(&out, &olen);
	if (!o)
		goto out;
	{
		/* the callers of the current block, held until its symbol line shows */
		char *callers[64];
		size_t nc = 0;

		for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			size_t nl = strlen(line), sl = strlen(r->name);

			if (line[0] == '-') {
				nc = 0;
			} else if (line[0] == ' ' && line[1] == ' ') {
				if (nc < 64)
					callers[nc++] = line + 2;
			} else if (nl > sl && !strcmp(line + nl - sl, r->name) &&
				   line[nl - sl - 1] == ' ' &&
				   strstr(line, m->imgs[r->img].display)) {
				for (size_t i = 0; i < nc; i++)
					fprintf(o, "%s\n", callers[i]);
				break;
			}
		}
	}
	fclose(o);
out:
	free(text);
	rs_free(&p);
	return out;
}
