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

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

int model_init(struct top_model *m, const char *session_dir, enum top_split split)
{
	m->session_dir = session_dir;
	m->split = split;
	m->o.demangle = DEMANGLE_SMART;
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

static int img_ht_grow(struct top_model *m)
{
	size_t cap = m->img_htcap ? m->img_htcap * 2 : 256;
	size_t *ht = calloc(cap, sizeof(*ht));

	if (!ht)
		return -ENOMEM;
	for (size_t i = 0; i < m->nimgs; i++) {
		size_t h = str_hash(m->imgs[i].id) & (cap - 1);

		while (ht[h])
			h = (h + 1) & (cap - 1);
		ht[h] = i + 1;
	}
	free(m->img_ht);
	m->img_ht = ht;
	m->img_htcap = cap;
	return 0;
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
		for (h = str_hash(id) & (m->img_htcap - 1); m->img_ht[h];
		     h = (h + 1) & (m->img_htcap - 1)) {
			if (!strcmp(m->imgs[m->img_ht[h] - 1].id, id)) {
				free(id);
				return (long)m->img_ht[h] - 1;
			}
		}
	}
	if ((m->nimgs + 1) * 2 > m->img_htcap && img_ht_grow(m))
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
	for (h = str_hash(id) & (m->img_htcap - 1); m->img_ht[h]; h = (h + 1) & (m->img_htcap - 1))
		;
	m->img_ht[h] = ++m->nimgs;
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

static int row_ht_grow(struct top_model *m)
{
	size_t cap = m->row_htcap ? m->row_htcap * 2 : 1024;
	uint32_t *ht = calloc(cap, sizeof(*ht));

	if (!ht)
		return -ENOMEM;
	for (size_t i = 0; i < m->nrows; i++) {
		const struct top_row *r = &m->rows[i];
		size_t h = row_hash(r->img, r->split, r->sym, r->addr) & (cap - 1);

		while (ht[h])
			h = (h + 1) & (cap - 1);
		ht[h] = (uint32_t)i + 1;
	}
	free(m->row_ht);
	m->row_ht = ht;
	m->row_htcap = cap;
	return 0;
}

static char *row_name(const struct top_image *ti, const struct rpt_sym *sym, uint64_t addr,
		      bool no_syms)
{
	char buf[512];

	if (sym)
		return txt_dup(sym->name);
	if (no_syms)
		return strdup("(no symbols)");
	/* as opreport names an address no symbol covers: IMAGE+0xOFFSET */
	snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, ti->display, addr);
	return strdup(buf);
}

static int push_row(struct top_image *ti, uint32_t row)
{
	if (ti->nrowv == ti->caprowv) {
		size_t cap = ti->caprowv ? ti->caprowv * 2 : 16;
		uint32_t *nv = realloc(ti->rowv, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		ti->rowv = nv;
		ti->caprowv = cap;
	}
	ti->rowv[ti->nrowv++] = row;
	return 0;
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

	if ((m->nrows + 1) * 2 > m->row_htcap && row_ht_grow(m))
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
	if (push_row(&m->imgs[img], (uint32_t)m->nrows)) {
		free(r->name);
		return -1;
	}
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

		if (!a->epoch)
			continue;
		for (h = addr_hash(a->split, a->key) & (cap - 1); nv[h].epoch;
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
	for (h = addr_hash(split, key) & (ti->addrcap - 1); ti->addrs[h].epoch;
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
	*a = (struct top_addr){ .key = key, .split = split, .row = (uint32_t)row };
	m->imgs[img].naddrs++;
	return a;
}

/* ------------------------------------------------------------ refresh */

static int32_t class_split(const struct top_model *m, const struct rpt_class *c);

/* The records of image @img's group into its addresses and rows. */
static int read_group(struct top_model *m, uint32_t img, const struct rpt_group *g,
		      const struct rpt_profile *p, const bool *counted)
{
	const uint32_t epoch = m->refreshes + 1;

	for (size_t i = 0; i < g->n; i++) {
		const struct rpt_sample *s = &g->s[i];
		struct top_addr *a;

		if (!counted[s->cls])
			continue;
		a = addr_of(m, img, class_split(m, &p->cls[s->cls]), s->key);
		if (!a)
			return -ENOMEM;
		if (a->epoch != epoch) {
			/* its first record in this refresh: the last refresh's count is done */
			a->prev = a->epoch ? a->now : 0;
			a->now = 0;
			a->epoch = epoch;
		}
		a->now += s->count;
		m->rows[a->row].now += s->count;
		m->imgs[img].total += s->count;
	}
	return 0;
}

/* the image's rows and total to 0 before its records are counted again */
static void zero_image(struct top_model *m, struct top_image *ti)
{
	for (size_t i = 0; i < ti->nrowv; i++)
		m->rows[ti->rowv[i]].now = 0;
	ti->total = 0;
}

/*
 * Image @img's group of this refresh. Unchanged since the last refresh
 * (the same records, the same classes): its rows keep their counts and
 * nothing is looked up - on a busy system most images ran nothing in
 * the last period.
 */
static int count_group(struct top_model *m, uint32_t img, const struct rpt_group *g,
		       const struct rpt_profile *p, const bool *counted, bool same_classes)
{
	const uint32_t epoch = m->refreshes + 1;
	struct top_image *ti = &m->imgs[img];
	int ret;

	if (ti->seen == epoch) {
		/* a second group of the image (not made with --merge=lib): added, not compared */
		ti->nlast = SIZE_MAX;
		return read_group(m, img, g, p, counted);
	}
	ti->seen = epoch;
	if (same_classes && ti->nlast == g->n &&
	    (!g->n || !memcmp(ti->last, g->s, g->n * sizeof(*g->s))))
		return 0;
	zero_image(m, ti);
	ti->proc = epoch;
	ret = read_group(m, img, g, p, counted);
	ti = &m->imgs[img];
	if (ret)
		return ret;
	if (ti->caplast < g->n) {
		struct rpt_sample *nv = realloc(ti->last, g->n * sizeof(*nv));

		if (!nv) {
			ti->nlast = SIZE_MAX;
			return 0; /* only the comparison is lost */
		}
		ti->last = nv;
		ti->caplast = g->n;
	}
	if (g->n)
		memcpy(ti->last, g->s, g->n * sizeof(*g->s));
	ti->nlast = g->n;
	return 0;
}

static int32_t class_split(const struct top_model *m, const struct rpt_class *c)
{
	if (m->split == TSPLIT_CPU)
		return c->cpu;
	if (m->split == TSPLIT_THREAD)
		return c->tid >= 0 ? c->tid : c->tgid;
	return -1;
}

int model_refresh(struct top_model *m)
{
	struct rpt_profile p = { .session_dir = strdup(m->session_dir) };
	double now = top_now();
	bool *counted = NULL, same_classes;
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
	/* classes split records by cpu or thread: compared records need the same ones */
	same_classes = m->split == TSPLIT_NONE && p.ncls == m->last_ncls;
	m->last_ncls = p.ncls;
	for (size_t gi = 0; gi < p.ngroups; gi++) {
		struct rpt_group *g = p.groups[gi];
		long img = image_of(m, &p, g->img);

		if (img < 0) {
			ret = -ENOMEM;
			goto out;
		}
		ret = count_group(m, (uint32_t)img, g, &p, counted, same_classes);
		if (ret)
			goto out;
	}
	/* images this refresh did not find (samples/current set aside): nothing now */
	m->total_now = 0;
	for (size_t i = 0; i < m->nimgs; i++) {
		struct top_image *ti = &m->imgs[i];

		if (ti->seen != m->refreshes + 1 && (ti->total || ti->nlast)) {
			zero_image(m, ti);
			ti->nlast = 0;
		}
		m->total_now += ti->total;
	}
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

		if (ret)
			r->now = r->prev;
		r->delta = r->now >= r->prev ? r->now - r->prev : r->now;
		r->prev = r->now;
	}
	if (ret)
		m->total_now = m->total_prev;
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
		free(m->imgs[i].rowv);
		free(m->imgs[i].last);
	}
	for (size_t i = 0; i < m->nrows; i++)
		free(m->rows[i].name);
	free(m->imgs);
	free(m->img_ht);
	free(m->rows);
	free(m->row_ht);
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
	const struct top_image *ti = &m->imgs[m->rows[row].img];
	/* addresses counted when the image was last counted; a delta only if that was now */
	const uint32_t epoch = ti->proc;
	const bool fresh = ti->proc == m->refreshes;
	struct top_addr_count *v = NULL;
	size_t k = 0;

	for (size_t i = 0; i < ti->addrcap; i++)
		k += ti->addrs[i].epoch && ti->addrs[i].row == row;
	if (k && !(v = malloc(k * sizeof(*v))))
		return -ENOMEM;
	k = 0;
	for (size_t i = 0; i < ti->addrcap; i++) {
		const struct top_addr *a = &ti->addrs[i];

		if (!a->epoch || a->row != row)
			continue;
		/* an address the last refresh did not read (a reset session) counts nothing now */
		v[k++] = (struct top_addr_count){ a->key, a->epoch == epoch ? a->now : 0,
						  a->epoch != epoch || !fresh ? 0 :
						  a->now >= a->prev           ? a->now - a->prev :
										a->now };
	}
	if (k)
		qsort(v, k, sizeof(*v), count_cmp);
	*out = v;
	*n = k;
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
	const struct top_row *r = &m->rows[row];
	char err[1024], *text = NULL, *out = NULL;
	size_t len = 0, olen = 0;
	FILE *f, *o;
	char *line, *save;

	if (!m->have_callgraph || !r->sym || !p.session_dir)
		goto out;
	if (rs_load(&p, &m->o, err, sizeof(err)))
		goto out;
	f = open_memstream(&text, &len);
	if (!f)
		goto out;
	cgr_report(f, &p, &m->o, &c);
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
