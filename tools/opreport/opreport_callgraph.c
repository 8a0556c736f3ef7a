/*
 * opreport_callgraph.c - call graphs in opreport: symbols are nodes (image,
 * symbol from the existing symbol layer), {cg} arc files give caller ->
 * callee counts, the plugin's stack table (op_cg_format.h) gives inclusive
 * counts, folded stacks and the flame graph. SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flamegraph.h"
#include "odb.h"
#include "op_cg_read.h"
#include "op_session_layout.h"
#include "opreport_callgraph.h"

#define CGR_NONE ((size_t)-1)

struct cgr_node {
	struct rpt_image *img;     /* NULL: a frame that mapped to no image */
	const struct rpt_sym *sym; /* NULL: no symbol covers the key */
	uint64_t self, incl;
	size_t mark; /* last stack counted in incl (index + 1) */
};

struct cgr_arc {
	size_t from, to;
	uint64_t count;
};

struct cgr_stack {
	size_t *nodes; /* root first */
	size_t n;
	uint64_t count;
	struct rpt_image *app; /* the process's executable; NULL: unknown */
	bool truncated;        /* callers beyond the depth limit are missing */
	bool nostack;          /* flat samples no stack accounts for */
};

struct cgr {
	struct rpt_profile *p;
	const struct rpt_opts *o;
	struct cgr_node *nodes;
	size_t nnodes, capnodes;
	size_t *ht; /* node index + 1 by (img, sym) */
	size_t htcap;
	struct cgr_arc *arcs;
	size_t narcs, caparcs;
	struct cgr_stack *stacks;
	size_t nstacks, capstacks;
	uint64_t self_total, stack_total, stack_overflow, stack_truncated;
	uint64_t nostack_total; /* in [no stack] stacks (cgr_fill_nostack) */
	uint64_t budget;        /* of the table (version 2), bytes */
	uint64_t stack_samples; /* samples with a chain, stored or not (the table's count) */
	uint32_t version;       /* of the table */
	bool have_stacks;
	unsigned nbad;
	/* cgroup: on the stacks (version 4's split keys): the last key seen, and its answer */
	const char *split_last;
	bool split_last_ok;
	uint64_t split_none; /* samples of stacks with no split key, left out by cgroup: */
};

int cgr_set_output(struct cgr_opts *c, const char *what, char *err, size_t err_len)
{
	if (!strcmp(what, "folded")) {
		c->folded = true;
	} else if (!strcmp(what, "blocks") || !strcmp(what, "callgraph")) {
		c->blocks = true;
	} else {
		snprintf(err, err_len,
			 "--callgraph-output=%s: unknown format (expected folded, the input of "
			 "flamegraph.pl and speedscope, or blocks, the same as -c)",
			 what);
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* nodes                                                               */
/* ------------------------------------------------------------------ */

static size_t cgr_hash(const void *img, const void *sym)
{
	uint64_t h = (uint64_t)(uintptr_t)img * UINT64_C(0x9e3779b97f4a7c15);

	h ^= (uint64_t)(uintptr_t)sym + (h << 6) + (h >> 2);
	return (size_t)(h * UINT64_C(0xff51afd7ed558ccd) >> 17);
}

static int cgr_grow_ht(struct cgr *g)
{
	size_t ncap = g->htcap ? 2 * g->htcap : 1024;
	size_t *nt = calloc(ncap, sizeof(*nt));

	if (!nt)
		return -ENOMEM;
	for (size_t i = 0; i < g->nnodes; i++) {
		size_t h = cgr_hash(g->nodes[i].img, g->nodes[i].sym);

		while (nt[h & (ncap - 1)])
			h++;
		nt[h & (ncap - 1)] = i + 1;
	}
	free(g->ht);
	g->ht = nt;
	g->htcap = ncap;
	return 0;
}

static size_t cgr_node(struct cgr *g, struct rpt_image *img, const struct rpt_sym *sym)
{
	size_t h;

	if (2 * (g->nnodes + 1) > g->htcap && cgr_grow_ht(g))
		return CGR_NONE;
	for (h = cgr_hash(img, sym);; h++) {
		size_t i = g->ht[h & (g->htcap - 1)];

		if (!i)
			break;
		if (g->nodes[i - 1].img == img && g->nodes[i - 1].sym == sym)
			return i - 1;
	}
	if (g->nnodes == g->capnodes) {
		size_t ncap = g->capnodes ? 2 * g->capnodes : 256;
		struct cgr_node *nv = realloc(g->nodes, ncap * sizeof(*nv));

		if (!nv)
			return CGR_NONE;
		g->nodes = nv;
		g->capnodes = ncap;
	}
	g->nodes[g->nnodes] = (struct cgr_node){ .img = img, .sym = sym };
	g->ht[h & (g->htcap - 1)] = g->nnodes + 1;
	return g->nnodes++;
}

/* the node of @key in @img (symbols loaded on first use) */
static size_t cgr_node_of(struct cgr *g, struct rpt_image *img, uint64_t key)
{
	const struct rpt_sym *sym = NULL;

	if (img) {
		rsym_load_image(g->p, g->o, img);
		if (!img->no_syms)
			sym = sym_lookup(&img->syms, key);
	}
	return cgr_node(g, img, sym);
}

/* The profile's image @n, added (without samples) when only arcs or stacks name it. */
static struct rpt_image *cgr_image(struct cgr *g, const struct op_image_name *n)
{
	return rs_image_add(g->p, g->o, n);
}

/* ------------------------------------------------------------------ */
/* flat samples -> self                                                */
/* ------------------------------------------------------------------ */

static int cgr_load_self(struct cgr *g)
{
	for (size_t i = 0; i < g->p->ngroups; i++) {
		struct rpt_group *gr = g->p->groups[i];

		for (size_t j = 0; j < gr->n; j++) {
			size_t k = cgr_node_of(g, gr->img, gr->s[j].key);

			if (k == CGR_NONE)
				return -ENOMEM;
			g->nodes[k].self += gr->s[j].count;
			g->self_total += gr->s[j].count;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* {cg} arc files                                                      */
/* ------------------------------------------------------------------ */

static int cgr_push_arc(struct cgr *g, size_t from, size_t to, uint64_t count)
{
	if (g->narcs == g->caparcs) {
		size_t ncap = g->caparcs ? 2 * g->caparcs : 1024;
		struct cgr_arc *nv = realloc(g->arcs, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		g->arcs = nv;
		g->caparcs = ncap;
	}
	g->arcs[g->narcs++] = (struct cgr_arc){ from, to, count };
	return 0;
}

static int cgr_read_arcs(struct cgr *g, const char *path, const struct op_parsed_name *pn)
{
	struct rpt_image *from_img, *to_img;
	const struct odb_node *nodes;
	char err[512] = "";
	size_t n = 0;
	odb_t db;
	int ret;

	memset(&db, 0, sizeof(db));
	ret = rs_odb_open(g->p, &db, path, err, sizeof(err));
	if (!ret)
		ret = odb_check(&db, err, sizeof(err));
	if (ret) {
		txt_warn("skipping call-graph file %s: %s", path, err[0] ? err : strerror(-ret));
		g->p->nskipped++;
		if (db.base || db.fd > 0)
			odb_close(&db);
		return 0;
	}
	from_img = cgr_image(g, &pn->image);
	to_img = cgr_image(g, &pn->cg_to);
	if (!from_img || !to_img) {
		odb_close(&db);
		return -ENOMEM;
	}
	nodes = odb_nodes(&db, &n);
	for (size_t i = 0; i < n && !ret; i++) {
		uint64_t from = nodes[i].key >> 32, to = nodes[i].key & 0xffffffffu;
		size_t a, b;

		if (!nodes[i].value)
			continue;
		/* from is a return address: the call is the byte before it */
		a = cgr_node_of(g, from_img, from ? from - 1 : 0);
		b = cgr_node_of(g, to_img, to);
		ret = a == CGR_NONE || b == CGR_NONE ? -ENOMEM :
						       cgr_push_arc(g, a, b, nodes[i].value);
	}
	odb_close(&db);
	return ret;
}

/* the arc files the session walk found (no symbolic link followed) */
static int cgr_read_all_arcs(struct cgr *g)
{
	struct op_parsed_name *pn = malloc(sizeof(*pn));
	int ret = 0;

	if (!pn)
		return -ENOMEM;
	for (size_t i = 0; i < g->p->ncg_files && !ret; i++) {
		const struct rpt_cgfile *cf = &g->p->cg_files[i];

		/* bad names were already reported by the walk */
		if (op_parse_name(cf->path + cf->rel, pn, NULL, 0) || !pn->is_cg)
			continue;
		rs_refuse_names(cf->path, pn);
		/* issue 20: a --separate=cgroup split's arc files name their cgroup */
		if (g->o->spec.cgroup.n && pn->split &&
		    !spec_cgroup_match_key(&g->o->spec, pn->split))
			continue;
		if (spec_match(&g->o->spec, pn))
			ret = cgr_read_arcs(g, cf->path, pn);
	}
	free(pn);
	return ret;
}

static int cgr_arc_cmp(const void *a, const void *b)
{
	const struct cgr_arc *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	return 0;
}

static void cgr_fold_arcs(struct cgr *g)
{
	size_t o = 0;

	if (!g->narcs)
		return; /* arcs is NULL: qsort must not see it */
	qsort(g->arcs, g->narcs, sizeof(*g->arcs), cgr_arc_cmp);
	for (size_t i = 0; i < g->narcs; i++) {
		if (o && g->arcs[o - 1].from == g->arcs[i].from &&
		    g->arcs[o - 1].to == g->arcs[i].to) {
			g->arcs[o - 1].count += g->arcs[i].count;
			continue;
		}
		g->arcs[o++] = g->arcs[i];
	}
	g->narcs = o;
}

/* ------------------------------------------------------------------ */
/* the stack table                                                     */
/* ------------------------------------------------------------------ */

static bool cgr_image_wanted(const struct cgr *g, const struct rpt_image *img)
{
	const char *base;

	if (!img)
		return false;
	base = strrchr(img->path, '/');
	base = base ? base + 1 : img->path;
	return strlist_has(&g->o->spec.image, img->path) || strlist_has(&g->o->spec.image, base);
}

static void cgr_bad_stack(struct cgr *g, const char *path, const char *why)
{
	if (!g->nbad++)
		txt_warn("%s: %s; such entries are left out (the daemon may have been writing it, "
			 "or it is damaged)",
			 path, why);
}

/* a new stack of @n nodes (filled by the caller, root first), or NULL on ENOMEM */
static struct cgr_stack *cgr_new_stack(struct cgr *g, size_t n)
{
	struct cgr_stack *cs;

	if (g->nstacks == g->capstacks) {
		size_t ncap = g->capstacks ? 2 * g->capstacks : 256;
		struct cgr_stack *nv = realloc(g->stacks, ncap * sizeof(*nv));

		if (!nv)
			return NULL;
		g->stacks = nv;
		g->capstacks = ncap;
	}
	cs = &g->stacks[g->nstacks];
	memset(cs, 0, sizeof(*cs));
	cs->nodes = calloc(n ? n : 1, sizeof(*cs->nodes));
	if (!cs->nodes)
		return NULL;
	cs->n = n;
	return cs;
}

/* the stack just filled in counts: totals, and each node's inclusive count once */
static void cgr_count_stack(struct cgr *g)
{
	struct cgr_stack *cs = &g->stacks[g->nstacks++];

	g->stack_total += cs->count;
	if (cs->truncated)
		g->stack_truncated += cs->count;
	for (size_t j = 0; j < cs->n; j++) {
		struct cgr_node *nd = &g->nodes[cs->nodes[j]];

		if (nd->mark != g->nstacks) {
			nd->mark = g->nstacks;
			nd->incl += cs->count;
		}
	}
}

/*
 * A stack read from the table: @depth frames leaf first (image index + 1 into
 * @map, key), @count samples of application @app. Left out when an image
 * filter names none of its images. 0 or -ENOMEM.
 */
static int cgr_take_stack(struct cgr *g, struct rpt_image **map, uint32_t nimg, uint32_t app,
			  bool truncated, uint64_t count, const struct cgs_frame *fr, uint32_t depth)
{
	bool wanted = !g->o->spec.image.n;
	struct cgr_stack *cs;

	if (!wanted && app)
		wanted = cgr_image_wanted(g, map[app]);
	for (uint32_t j = 0; j < depth && !wanted; j++)
		if (fr[j].image <= nimg)
			wanted = cgr_image_wanted(g, map[fr[j].image]);
	if (!wanted)
		return 0;
	cs = cgr_new_stack(g, depth);
	if (!cs)
		return -ENOMEM;
	cs->count = count;
	cs->truncated = truncated;
	cs->app = app <= nimg ? map[app] : NULL;
	/* kept root first; frames above the leaf are return addresses: the call is before */
	for (uint32_t j = 0; j < depth; j++) {
		struct rpt_image *img = fr[j].image <= nimg ? map[fr[j].image] : NULL;
		size_t k = cgr_node_of(g, img, j && fr[j].key ? fr[j].key - 1 : fr[j].key);

		if (k == CGR_NONE) {
			free(cs->nodes);
			return -ENOMEM;
		}
		cs->nodes[depth - 1 - j] = k;
	}
	cgr_count_stack(g);
	return 0;
}

/* reading the table (lib/op_cg_read.c): its images as the profile's, then its stacks */
struct cgr_read {
	struct cgr *g;
	const char *path;
	const struct op_cgs_info *info;
	struct rpt_image **map; /* by table image index + 1; map[0] = NULL: no image */
	uint32_t nimg;
};

static int cgr_read_map(struct cgr_read *r)
{
	if (r->map)
		return 0;
	r->nimg = r->info->nimages;
	r->map = calloc(r->nimg + 1, sizeof(*r->map));
	return r->map ? 0 : -ENOMEM;
}

static void cgr_read_bad(void *arg, const char *why)
{
	struct cgr_read *r = arg;

	cgr_bad_stack(r->g, r->path, why);
}

static int cgr_read_image(void *arg, uint32_t i, const struct op_image_name *in)
{
	struct cgr_read *r = arg;
	struct op_image_name n = *in;

	if (cgr_read_map(r))
		return -ENOMEM;
	if (rs_image_refused(&n)) {
		txt_warn("%s: image entry %u: the name %s %s, which oprofiled never writes: "
			 "its frames are counted under %s and the path is not opened",
			 r->path, i, n.path, rs_image_refused(&n), RPT_UNKNOWN_IMAGE);
		n = (struct op_image_name){ .kind = OP_IMAGE_USER, .path = RPT_UNKNOWN_IMAGE };
	}
	r->map[i + 1] = cgr_image(r->g, &n);
	return r->map[i + 1] ? 0 : -ENOMEM;
}

/*
 * cgroup: on a stack: its split key (version 4, a --separate=cgroup
 * session) as the flat files' {cgroup}/KEY; a stack without one is left out
 * (and counted), as its cgroup is not known
 */
static bool cgr_split_wanted(struct cgr *g, const char *split)
{
	if (!g->o->spec.cgroup.n)
		return true;
	if (!split)
		return false;
	/* the stacks of one key share its string */
	if (split != g->split_last) {
		g->split_last = split;
		g->split_last_ok = spec_cgroup_match_key(&g->o->spec, split);
	}
	return g->split_last_ok;
}

/* a stack; its context (version 3) is not shown: opreport -c sums every thread and CPU */
static int cgr_read_stack(void *arg, const struct op_cgs_stack *s)
{
	struct cgr_read *r = arg;

	if (cgr_read_map(r))
		return -ENOMEM;
	if (!cgr_split_wanted(r->g, s->split)) {
		r->g->split_none += s->split ? 0 : s->count;
		return 0;
	}
	return cgr_take_stack(r->g, r->map, r->nimg, s->app, s->truncated, s->count, s->fr,
			      s->depth);
}

static int cgr_load_stacks(struct cgr *g)
{
	struct cgr_read r = { .g = g };
	const struct op_cgs_visitor v = { cgr_read_image, cgr_read_stack, cgr_read_bad, &r };
	struct op_cgs_info info;
	char *path = NULL;
	int fd, ret;

	if (asprintf(&path, "%s/" OP_SESSION_CG_STACKS_PATH, g->p->samples_dir) < 0)
		return -ENOMEM;
	/* no symbolic link, FIFO nor device: a warning names what is refused */
	fd = rs_open_session_file(g->p, OP_SESSION_CG_STACKS_PATH, O_RDONLY);
	if (fd < 0) {
		free(path);
		return 0; /* no stacks recorded (or refused, with a warning): arcs only */
	}
	r.path = path;
	r.info = &info;
	ret = op_cgs_read(fd, &v, &info);
	close(fd);
	g->version = info.version;
	g->have_stacks = info.valid;
	g->stack_overflow = info.overflow_samples;
	g->stack_samples = info.total_samples;
	g->budget = info.budget;
	g->split_last = NULL; /* pointed into the table's copy */
	if (g->split_none)
		txt_warn("%s: cgroup: leaves out %" PRIu64 " samples of stacks that name no cgroup "
			 "(only a --separate=cgroup session's stacks do); their flat samples show "
			 "as [no stack]",
			 path, g->split_none);
	free(r.map);
	free(path);
	return ret;
}

/*
 * Samples the stacks do not account for: a symbol's flat (self) samples
 * beyond those of the stacks ending in it become a stack [no stack];SYMBOL,
 * so that no view shows inclusive < self (the table was full, or no chain
 * was recorded). Needs the flat samples (cgr_load_self).
 */
static int cgr_fill_nostack(struct cgr *g)
{
	size_t nn = g->nnodes;
	uint64_t *leaf = calloc(nn + 1, sizeof(*leaf));
	int ret = 0;

	if (!leaf)
		return -ENOMEM;
	for (size_t i = 0; i < g->nstacks; i++) {
		const struct cgr_stack *s = &g->stacks[i];

		if (s->n && s->nodes[s->n - 1] < nn)
			leaf[s->nodes[s->n - 1]] += s->count;
	}
	for (size_t k = 0; k < nn && !ret; k++) {
		struct cgr_stack *cs;

		if (g->nodes[k].self <= leaf[k])
			continue;
		cs = cgr_new_stack(g, 1);
		if (!cs) {
			ret = -ENOMEM;
			break;
		}
		cs->nodes[0] = k;
		cs->count = g->nodes[k].self - leaf[k];
		cs->nostack = true;
		g->nostack_total += cs->count;
		cgr_count_stack(g);
	}
	free(leaf);
	return ret;
}

/*
 * A budget (MiB) for a table that would have held every stack: the budget
 * scaled by all samples over those stored, a power of two, at least twice
 * the budget and at most the plugin's limit (16384).
 */
static uint64_t cgr_budget_hint(const struct cgr *g)
{
	uint64_t mb = g->budget >> 20 ? g->budget >> 20 : 1, hint = 2 * mb;
	double need = (double)mb * (double)g->stack_samples /
		      (double)(g->stack_samples > g->stack_overflow ?
				       g->stack_samples - g->stack_overflow :
				       1);

	while ((double)hint < need && hint < 16384)
		hint *= 2;
	return hint < 16384 ? hint : 16384;
}

/* "N of M samples have no stack ...: why, and what fixes it" into @buf ("" when none) */
static const char *cgr_nostack_note(const struct cgr *g, char *buf, size_t len)
{
	int n;

	buf[0] = '\0';
	if (!g->nostack_total)
		return buf;
	n = snprintf(buf, len,
		     "%" PRIu64 " of %" PRIu64 " samples have no stack (shown as [no stack];SYMBOL)",
		     g->nostack_total, g->self_total);
	if (n < 0 || (size_t)n >= len)
		return buf;
	if (g->stack_overflow && g->version == CGS_VERSION1)
		snprintf(buf + n, len - (size_t)n,
			 ": the fixed-size stack table of the oprofiled that wrote this session "
			 "was full for %" PRIu64 " samples - profile again: the table now grows up "
			 "to --ext-feature=callgraph:max_mb=N",
			 g->stack_overflow);
	else if (g->stack_overflow)
		snprintf(buf + n, len - (size_t)n,
			 ": the stack table was full for %" PRIu64 " samples - profile with "
			 "--ext-feature=callgraph:max_mb=%" PRIu64 " (this session had %" PRIu64
			 " MiB)",
			 g->stack_overflow, cgr_budget_hint(g), g->budget >> 20);
	else
		snprintf(buf + n, len - (size_t)n, ": no call chain was recorded for them");
	return buf;
}

/* ------------------------------------------------------------------ */
/* output                                                              */
/* ------------------------------------------------------------------ */

static const char *cgr_sym_name(const struct cgr_node *n, char *buf, size_t len)
{
	const char *base;

	if (n->sym)
		return n->sym->name;
	if (!n->img)
		return "[unknown]";
	base = strrchr(n->img->path, '/');
	base = base ? base + 1 : n->img->path;
	/* "[vdso]" already has its brackets */
	snprintf(buf, len, base[0] == '[' ? "%s" : "[%s]", base);
	return buf;
}

static const char *cgr_image_name(const struct cgr *g, const struct cgr_node *n, char *buf,
				  size_t len)
{
	if (!n->img)
		return "(unknown)";
	return out_image_name(n->img, g->o->long_filenames, buf, len);
}

static double cgr_pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/* "image name (25 wide) symbol name" of @n, escaped, then @suffix and the newline */
static void cgr_names_out(FILE *f, const struct cgr *g, const struct cgr_node *n, const char *suffix)
{
	char ib[4096], sb[4096];
	size_t w = txt_put(f, cgr_image_name(g, n, ib, sizeof(ib)));

	do {
		fputc(' ', f);
	} while (++w <= 25);
	txt_put(f, cgr_sym_name(n, sb, sizeof(sb)));
	fprintf(f, "%s\n", suffix);
}

static void cgr_line(FILE *f, const struct cgr *g, const struct cgr_node *n, const char *indent,
		     uint64_t count, double pct, const char *suffix)
{
	fprintf(f, "%s%-9" PRIu64 " %-9.4f ", indent, count, pct);
	cgr_names_out(f, g, n, suffix);
}

static const struct cgr *cgr_sort_ctx;

static int cgr_node_order(const void *a, const void *b)
{
	const struct cgr_node *x = &cgr_sort_ctx->nodes[*(const size_t *)a];
	const struct cgr_node *y = &cgr_sort_ctx->nodes[*(const size_t *)b];

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static int cgr_by_callee(const void *a, const void *b)
{
	const struct cgr_arc *x = &cgr_sort_ctx->arcs[*(const size_t *)a];
	const struct cgr_arc *y = &cgr_sort_ctx->arcs[*(const size_t *)b];

	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->from < y->from ? -1 : 1;
}

static int cgr_by_caller(const void *a, const void *b)
{
	const struct cgr_arc *x = &cgr_sort_ctx->arcs[*(const size_t *)a];
	const struct cgr_arc *y = &cgr_sort_ctx->arcs[*(const size_t *)b];

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->to < y->to ? -1 : 1;
}

/* the arcs into and out of each node, and the nodes to show in order */
struct cgr_index {
	size_t *order, nord;
	size_t *in, *out;             /* arc indexes by callee / by caller */
	size_t *in_start, *out_start; /* each node's run in in[] / out[] (nnodes + 1) */
};

static void cgr_index_free(struct cgr_index *x)
{
	free(x->order);
	free(x->in);
	free(x->out);
	free(x->in_start);
	free(x->out_start);
}

static int cgr_index_build(struct cgr *g, struct cgr_index *x)
{
	memset(x, 0, sizeof(*x));
	x->order = calloc(g->nnodes + 1, sizeof(*x->order));
	x->in = calloc(g->narcs + 1, sizeof(*x->in));
	x->out = calloc(g->narcs + 1, sizeof(*x->out));
	x->in_start = calloc(g->nnodes + 1, sizeof(size_t));
	x->out_start = calloc(g->nnodes + 1, sizeof(size_t));
	if (!x->order || !x->in || !x->out || !x->in_start || !x->out_start) {
		cgr_index_free(x);
		return -ENOMEM;
	}
	cgr_sort_ctx = g;
	for (size_t i = 0; i < g->narcs; i++)
		x->in[i] = x->out[i] = i;
	qsort(x->in, g->narcs, sizeof(*x->in), cgr_by_callee);
	qsort(x->out, g->narcs, sizeof(*x->out), cgr_by_caller);
	/* start of each node's run in in[] / out[] (node index + 1 = end marker) */
	for (size_t i = 0, j = 0, k = 0; i <= g->nnodes; i++) {
		while (j < g->narcs && g->arcs[x->in[j]].to < i)
			j++;
		while (k < g->narcs && g->arcs[x->out[k]].from < i)
			k++;
		x->in_start[i] = j;
		x->out_start[i] = k;
	}
	for (size_t i = 0; i < g->nnodes; i++) {
		const struct cgr_node *n = &g->nodes[i];
		double pself = cgr_pct(n->self, g->self_total),
		       pincl = cgr_pct(n->incl, g->stack_total);

		if (!n->self && !n->incl && x->in_start[i] == x->in_start[i + 1] &&
		    x->out_start[i] == x->out_start[i + 1])
			continue;
		if (g->o->threshold > 0 && pself < g->o->threshold && pincl < g->o->threshold)
			continue;
		x->order[x->nord++] = i;
	}
	qsort(x->order, x->nord, sizeof(*x->order), cgr_node_order);
	return 0;
}

static int cgr_blocks(FILE *f, struct cgr *g)
{
	static const char rule[] = "------------------------------------------------------------"
				   "--------------------------------------------";
	struct cgr_index x;
	size_t *order, *in, *out, *in_start, *out_start, nord;
	int ret = cgr_index_build(g, &x);

	if (ret)
		return ret;
	order = x.order;
	in = x.in;
	out = x.out;
	in_start = x.in_start;
	out_start = x.out_start;
	nord = x.nord;
	fprintf(f,
		"Call graph: callers of each symbol above it (indented), its callees below.\n"
		"self: samples in the symbol itself (%% of %" PRIu64 "); incl.: samples with the "
		"symbol on the stack (%% of %" PRIu64 " stacks).\n"
		"Caller and callee lines: arc samples, %% of the block's callers or callees.\n",
		g->self_total, g->stack_total);
	if (!g->have_stacks)
		fputs("(no whole stacks in this session: inclusive counts are not known)\n", f);
	if (g->nostack_total) {
		char note[512];

		fprintf(f, "(%s)\n", cgr_nostack_note(g, note, sizeof(note)));
	}
	if (g->stack_truncated)
		fprintf(f,
			"(%" PRIu64 " samples had their stack cut at the depth limit: their outer "
			"callers are not counted; profile with --ext-feature=callgraph:depth=N)\n",
			g->stack_truncated);
	fprintf(f,
		"\nself      %%         incl.     incl. %%   image name                symbol name\n");
	for (size_t r = 0; r < nord; r++) {
		size_t i = order[r];
		const struct cgr_node *n = &g->nodes[i];
		uint64_t tin = 0, tout = n->self;

		fprintf(f, "%s\n", rule);
		for (size_t j = in_start[i]; j < in_start[i + 1]; j++)
			tin += g->arcs[in[j]].count;
		for (size_t j = out_start[i]; j < out_start[i + 1]; j++)
			tout += g->arcs[out[j]].count;
		for (size_t j = in_start[i]; j < in_start[i + 1]; j++) {
			const struct cgr_arc *a = &g->arcs[in[j]];

			cgr_line(f, g, &g->nodes[a->from], "  ", a->count, cgr_pct(a->count, tin),
				 "");
		}
		if (g->have_stacks)
			fprintf(f, "%-9" PRIu64 " %-9.4f %-9" PRIu64 " %-9.4f ", n->self,
				cgr_pct(n->self, g->self_total), n->incl,
				cgr_pct(n->incl, g->stack_total));
		else /* inclusive counts need whole stacks */
			fprintf(f, "%-9" PRIu64 " %-9.4f %-9s %-9s ", n->self,
				cgr_pct(n->self, g->self_total), "-", "-");
		cgr_names_out(f, g, n, "");
		if (n->self && out_start[i] != out_start[i + 1])
			cgr_line(f, g, n, "  ", n->self, cgr_pct(n->self, tout), " [self]");
		for (size_t j = out_start[i]; j < out_start[i + 1]; j++) {
			const struct cgr_arc *a = &g->arcs[out[j]];

			cgr_line(f, g, &g->nodes[a->to], "  ", a->count, cgr_pct(a->count, tout),
				 "");
		}
	}
	if (nord)
		fprintf(f, "%s\n", rule);
	cgr_index_free(&x);
	return 0;
}

/* <symbol idref> of an arc's other end, in a <module> of its image (OProfile's callers/callees) */
static void cgr_xml_arcs(FILE *f, struct cgr *g, const char *what, const size_t *arcs, size_t lo,
			 size_t hi, bool callers, size_t self, bool *used)
{
	char ib[4096];

	if (lo == hi)
		return;
	fprintf(f, "   <%s>\n", what);
	for (size_t j = lo; j < hi; j++) {
		const struct cgr_arc *a = &g->arcs[arcs[j]];
		size_t k = callers ? a->from : a->to;

		used[k] = true;
		fputs("    <module name=\"", f);
		txt_put_xml(f, cgr_image_name(g, &g->nodes[k], ib, sizeof(ib)));
		fprintf(f,
			"\">\n     <symbol idref=\"%zu\"%s>\n      <count>%" PRIu64
			"</count>\n     </symbol>\n    </module>\n",
			k, k == self ? " self=\"true\"" : "", a->count);
	}
	fprintf(f, "   </%s>\n", what);
}

/* -c -X: OProfile's call-graph XML, <callers>/<callees> inside each <symbol> */
static int cgr_xml(FILE *f, struct cgr *g)
{
	struct cgr_index x;
	bool *used = calloc(g->nnodes + 1, sizeof(bool)),
	     *done = calloc(g->nnodes + 1, sizeof(bool));
	char ib[4096], sb[4096];
	int ret = used && done ? cgr_index_build(g, &x) : -ENOMEM;

	if (ret) {
		free(used);
		free(done);
		return ret;
	}
	out_xml_head(f, g->p, g->o, NULL);
	/* one <binary> per image, in the order of its first symbol */
	for (size_t r = 0; r < x.nord; r++) {
		const struct rpt_image *img = g->nodes[x.order[r]].img;
		uint64_t self = 0;

		if (done[x.order[r]])
			continue;
		for (size_t q = r; q < x.nord; q++)
			if (g->nodes[x.order[q]].img == img)
				self += g->nodes[x.order[q]].self;
		fputs(" <binary name=\"", f);
		txt_put_xml(f, cgr_image_name(g, &g->nodes[x.order[r]], ib, sizeof(ib)));
		fprintf(f, "\">\n  <count>%" PRIu64 "</count>\n", self);
		for (size_t q = r; q < x.nord; q++) {
			size_t i = x.order[q];
			const struct cgr_node *n = &g->nodes[i];

			if (n->img != img)
				continue;
			done[i] = used[i] = true;
			fprintf(f, "  <symbol idref=\"%zu\"", i);
			if (g->have_stacks)
				fprintf(f, " inclusive=\"%" PRIu64 "\"", n->incl);
			fprintf(f, ">\n   <count>%" PRIu64 "</count>\n", n->self);
			cgr_xml_arcs(f, g, "callers", x.in, x.in_start[i], x.in_start[i + 1], true,
				     i, used);
			cgr_xml_arcs(f, g, "callees", x.out, x.out_start[i], x.out_start[i + 1],
				     false, i, used);
			fputs("  </symbol>\n", f);
		}
		fputs(" </binary>\n", f);
	}
	fputs(" <symboltable>\n", f);
	for (size_t i = 0; i < g->nnodes; i++) {
		if (!used[i])
			continue;
		fprintf(f, "  <symboldata id=\"%zu\" name=\"", i);
		txt_put_xml(f, cgr_sym_name(&g->nodes[i], sb, sizeof(sb)));
		fputs("\"/>\n", f);
	}
	fputs(" </symboltable>\n</profile>\n", f);
	cgr_index_free(&x);
	free(used);
	free(done);
	return 0;
}

static void cgr_json_node(FILE *f, struct cgr *g, size_t k)
{
	char ib[4096], sb[4096];

	fprintf(f, "\"id\": %zu, \"name\": ", k);
	txt_put_json(f, cgr_sym_name(&g->nodes[k], sb, sizeof(sb)));
	fputs(", \"image\": ", f);
	txt_put_json(f, cgr_image_name(g, &g->nodes[k], ib, sizeof(ib)));
}

static void cgr_json_arcs(FILE *f, struct cgr *g, const char *what, const size_t *arcs, size_t lo,
			  size_t hi, bool callers)
{
	uint64_t tot = 0;

	for (size_t j = lo; j < hi; j++)
		tot += g->arcs[arcs[j]].count;
	fprintf(f, ",\n     \"%s\": [", what);
	for (size_t j = lo; j < hi; j++) {
		const struct cgr_arc *a = &g->arcs[arcs[j]];

		fprintf(f, "%s\n       {", j > lo ? "," : "");
		cgr_json_node(f, g, callers ? a->from : a->to);
		fprintf(f, ", \"samples\": %" PRIu64 ", \"percent\": %.4f}", a->count,
			cgr_pct(a->count, tot));
	}
	fputc(']', f);
}

/* -c --json: schema "oprofile-ng-callgraph" (tools/opreport/opreport-json.md) */
static int cgr_json(FILE *f, struct cgr *g)
{
	struct cgr_index x;
	int ret = cgr_index_build(g, &x);

	if (ret)
		return ret;
	out_json_head(f, g->p, "oprofile-ng-callgraph");
	fprintf(f,
		",\n  \"self_total\": %" PRIu64 ", \"stack_total\": %" PRIu64
		", \"whole_stacks\": %s,\n  \"nostack_samples\": %" PRIu64
		", \"truncated_samples\": %" PRIu64 ",\n  \"symbols\": [",
		g->self_total, g->stack_total, g->have_stacks ? "true" : "false", g->nostack_total,
		g->stack_truncated);
	for (size_t r = 0; r < x.nord; r++) {
		size_t i = x.order[r];
		const struct cgr_node *n = &g->nodes[i];

		fprintf(f, "%s\n    {", r ? "," : "");
		cgr_json_node(f, g, i);
		fprintf(f, ", \"self\": %" PRIu64 ", \"self_percent\": %.4f", n->self,
			cgr_pct(n->self, g->self_total));
		if (g->have_stacks)
			fprintf(f, ", \"inclusive\": %" PRIu64 ", \"inclusive_percent\": %.4f",
				n->incl, cgr_pct(n->incl, g->stack_total));
		else
			fputs(", \"inclusive\": null, \"inclusive_percent\": null", f);
		cgr_json_arcs(f, g, "callers", x.in, x.in_start[i], x.in_start[i + 1], true);
		cgr_json_arcs(f, g, "callees", x.out, x.out_start[i], x.out_start[i + 1], false);
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"skipped_files\": %u\n}\n", g->p->nskipped);
	cgr_index_free(&x);
	return 0;
}

struct cgr_line {
	char *text;
	uint64_t count;
};

static int cgr_line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct cgr_line *)a)->text, ((const struct cgr_line *)b)->text);
}

/* the process of a stack: its executable's base name */
static const char *cgr_proc_name(const struct rpt_image *app)
{
	const char *base;

	if (!app || !app->path[0])
		return "[unknown process]";
	base = strrchr(app->path, '/');
	return base && base[1] ? base + 1 : app->path;
}

/*
 * Root-first names of stack @s into @names (@s->n + 2 of them, buffers in
 * @bufs) and their kinds into @kinds (or not, when NULL): the process, or
 * [no stack] for flat samples no stack accounts for; [truncated] when its
 * outer callers are missing; the frames, a run of [unknown] (code without
 * frame pointers) as one.
 */
static size_t cgr_names(const struct cgr *g, const struct cgr_stack *s, const char **names,
			char (*bufs)[256], enum fg_kind *kinds)
{
	size_t k = 0;

	names[k] = s->nostack ? "[no stack]" : cgr_proc_name(s->app);
	if (kinds)
		kinds[k] = s->nostack ? FG_OTHER : FG_PROC;
	k++;
	if (s->truncated) {
		if (kinds)
			kinds[k] = FG_OTHER;
		names[k++] = "[truncated]";
	}
	for (size_t j = 0; j < s->n; j++) {
		const struct cgr_node *nd = &g->nodes[s->nodes[j]];

		if (!nd->img && j && !g->nodes[s->nodes[j - 1]].img)
			continue;
		names[k] = cgr_sym_name(nd, bufs[k], sizeof(bufs[k]));
		if (kinds)
			kinds[k] = !nd->img ? FG_OTHER :
				   nd->img->is_kernel || nd->img->kind == OP_IMAGE_KERNEL ?
					      FG_KERNEL :
					      FG_USER;
		k++;
	}
	return k;
}

static int cgr_folded(FILE *f, const struct cgr *g)
{
	struct cgr_line *lines = calloc(g->nstacks + 1, sizeof(*lines));
	size_t nl = 0, o = 0;
	int ret = 0;

	if (!lines)
		return -ENOMEM;
	for (size_t i = 0; i < g->nstacks; i++) {
		const struct cgr_stack *s = &g->stacks[i];
		const char **names = calloc(s->n + 2, sizeof(*names));
		char(*bufs)[256] = calloc(s->n + 2, sizeof(*bufs));
		size_t n, len = 1;
		char *t;

		if (!names || !bufs) {
			free(names);
			free(bufs);
			ret = -ENOMEM;
			break;
		}
		n = cgr_names(g, s, names, bufs, NULL);
		for (size_t j = 0; j < n; j++)
			len += strlen(names[j]) + 1;
		t = malloc(len);
		if (t) {
			char *e = t;

			for (size_t j = 0; j < n; j++) {
				size_t l = strlen(names[j]);

				if (j)
					*e++ = ';';
				memcpy(e, names[j], l);
				e += l;
			}
			*e = '\0';
			lines[nl].text = t;
			lines[nl++].count = s->count;
		}
		free(names);
		free(bufs);
		if (!t) {
			ret = -ENOMEM;
			break;
		}
	}
	if (nl)
		qsort(lines, nl, sizeof(*lines), cgr_line_cmp);
	for (size_t i = 0; i < nl; i++) {
		if (o && !strcmp(lines[o - 1].text, lines[i].text)) {
			lines[o - 1].count += lines[i].count;
			free(lines[i].text);
			continue;
		}
		lines[o++] = lines[i];
	}
	for (size_t i = 0; i < o; i++) {
		/* newlines separate stacks in this format: names are escaped */
		if (!ret) {
			txt_put(f, lines[i].text);
			fprintf(f, " %" PRIu64 "\n", lines[i].count);
		}
		free(lines[i].text);
	}
	free(lines);
	return ret;
}

static int cgr_svg(const struct cgr *g, const char *file)
{
	struct flamegraph *fg = fg_new();
	char title[512], note[512];
	FILE *f;
	int ret = 0;

	if (!fg)
		return -ENOMEM;
	for (size_t i = 0; i < g->nstacks && !ret; i++) {
		const struct cgr_stack *s = &g->stacks[i];
		const char **names = calloc(s->n + 2, sizeof(*names));
		char(*bufs)[256] = calloc(s->n + 2, sizeof(*bufs));
		enum fg_kind *kinds = calloc(s->n + 2, sizeof(*kinds));

		if (names && bufs && kinds)
			ret = fg_add_kinds(fg, names, kinds, cgr_names(g, s, names, bufs, kinds),
					   s->count);
		else
			ret = -ENOMEM;
		free(names);
		free(bufs);
		free(kinds);
	}
	if (!ret)
		ret = fg_set_note(fg, cgr_nostack_note(g, note, sizeof(note)));
	if (ret)
		goto out;
	f = fopen(file, "w");
	if (!f) {
		ret = -errno;
		txt_error("--flamegraph: cannot write %s: %s", file, strerror(-ret));
		goto out;
	}
	snprintf(title, sizeof(title), "Flame graph: %s", g->p->samples_dir);
	ret = fg_write_svg(fg, f, title, 1200);
	if (fclose(f) || ret) {
		txt_error("--flamegraph: writing %s failed", file);
		ret = -EIO;
		goto out;
	}
	txt_msg("opreport: ", "wrote the flame graph of %" PRIu64 " samples to %s", fg_total(fg),
		file);
	if (!g->have_stacks || !g->nstacks)
		txt_warn("no whole stacks in %s: profile with --ext-feature=callgraph for a flame "
			 "graph",
			 g->p->samples_dir);
out:
	fg_free(fg);
	return ret;
}

int cgr_report(FILE *out, struct rpt_profile *p, const struct rpt_opts *o, const struct cgr_opts *c)
{
	struct cgr g = { .p = p, .o = o };
	int ret;

	if (!c->blocks && !c->folded && !c->flamegraph)
		return 0;
	ret = cgr_load_stacks(&g);
	/* self counts: the -c blocks, and what the stacks miss for every view */
	if (!ret && (c->blocks || g.have_stacks))
		ret = cgr_load_self(&g);
	if (!ret && g.have_stacks)
		ret = cgr_fill_nostack(&g);
	if (!ret && g.nostack_total) {
		char note[512];

		txt_warn("%s", cgr_nostack_note(&g, note, sizeof(note)));
	}
	if (!ret && c->blocks) {
		ret = cgr_read_all_arcs(&g);
		if (!ret)
			cgr_fold_arcs(&g);
	}
	if (!ret && c->flamegraph)
		ret = cgr_svg(&g, c->flamegraph);
	if (!ret && c->blocks)
		ret = o->format == FMT_XML  ? cgr_xml(out, &g) :
		      o->format == FMT_JSON ? cgr_json(out, &g) :
					      cgr_blocks(out, &g);
	if (!ret && c->folded) {
		if (!g.have_stacks)
			txt_warn("no whole stacks in %s: profile with --ext-feature=callgraph for "
				 "folded stacks",
				 p->samples_dir);
		ret = cgr_folded(out, &g);
	}
	if (ret == -ENOMEM)
		txt_error("out of memory");
	for (size_t i = 0; i < g.nstacks; i++)
		free(g.stacks[i].nodes);
	free(g.stacks);
	free(g.nodes);
	free(g.ht);
	free(g.arcs);
	if (ret)
		return ret;
	return c->blocks || c->folded ? 1 : 0;
}
