/*
 * opreport_diff.c - differential reports, "opreport -l [shared] { A } { B }"
 * as OProfile 1.x: the two profiles are loaded as usual, their symbols (or
 * images) matched by image base name, application and name - never by
 * address, so two builds of a program compare - and each row gets the
 * relative change of its share, "diff %", or +++ / --- when one side lacks it.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opreport.h"

static const char *const rdiff_side_name[2] = { "first", "second" };

int rdiff_split(char *const *w, size_t n, enum rdiff_word *side, char *err, size_t err_len)
{
	unsigned groups = 0;
	bool open = false;
	size_t start = 0;

	for (size_t i = 0; i < n; i++) {
		if (!strcmp(w[i], "{")) {
			if (open) {
				snprintf(err, err_len,
					 "differential profile: a '{' (word %zu) inside the %s profile's "
					 "braces: the form is [shared spec] { first } { second }",
					 i + 1, rdiff_side_name[groups - 1]);
				return -EINVAL;
			}
			if (++groups > 2) {
				snprintf(err, err_len,
					 "differential profile: a third '{' (word %zu): a differential "
					 "report compares two profiles, { first } { second }",
					 i + 1);
				return -EINVAL;
			}
			open = true;
			start = i;
			side[i] = RDIFF_BRACE;
		} else if (!strcmp(w[i], "}")) {
			if (!open) {
				snprintf(err, err_len,
					 "differential profile: '}' (word %zu) has no '{' before it",
					 i + 1);
				return -EINVAL;
			}
			if (i == start + 1) {
				snprintf(err, err_len,
					 "differential profile: the %s profile { } is empty: put its "
					 "session:, image:, ... words between the braces",
					 rdiff_side_name[groups - 1]);
				return -EINVAL;
			}
			open = false;
			side[i] = RDIFF_BRACE;
		} else {
			side[i] = !open ? RDIFF_SHARED : groups == 1 ? RDIFF_FIRST : RDIFF_SECOND;
		}
	}
	if (open) {
		snprintf(err, err_len, "differential profile: the %s profile's '{' has no '}'",
			 rdiff_side_name[groups - 1]);
		return -EINVAL;
	}
	if (groups == 1) {
		snprintf(err, err_len,
			 "differential profile: only one profile in braces; a differential report "
			 "needs two, { first } { second }");
		return -EINVAL;
	}
	return groups ? 1 : 0;
}

double rdiff_pct(uint64_t ca, uint64_t ta, uint64_t cb, uint64_t tb)
{
	double pa = ta ? (double)ca / (double)ta : 0.0, pb = tb ? (double)cb / (double)tb : 0.0;

	if (pa == 0.0)
		return pb == 0.0 ? 0.0 : INFINITY;
	return 100.0 * (pb - pa) / pa;
}

/* ------------------------------------------------------------ matching */

/* base name, without the " (tgid:N ...)" a per-process display carries */
static char *rdiff_key(const char *s)
{
	const char *b, *t;

	if (!s)
		return strdup("");
	t = strstr(s, " (tgid:");
	b = s + strlen(s);
	if (t)
		b = t;
	for (const char *q = s; q < b; q++)
		if (*q == '/' && q + 1 < b)
			s = q + 1;
	return strndup(s, (size_t)(b - s));
}

static int rdiff_push(struct rdiff *d, int side, const char *image, const char *app,
		      const char *name, const uint64_t *count, const struct rpt_symrow *row,
		      const struct rpt_group *g)
{
	struct rdiff_ent *e;

	if (d->n == d->cap) {
		size_t ncap = d->cap ? 2 * d->cap : 64;
		struct rdiff_ent *nv = realloc(d->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		d->v = nv;
		d->cap = ncap;
	}
	e = &d->v[d->n];
	memset(e, 0, sizeof(*e));
	e->image = rdiff_key(image);
	e->app = rdiff_key(app);
	e->name = strdup(name ? name : "");
	e->count[0] = calloc(d->ncls, sizeof(uint64_t));
	e->count[1] = calloc(d->ncls, sizeof(uint64_t));
	d->n++; /* counted now: rdiff_free frees what was allocated */
	if (!e->image || !e->app || !e->name || !e->count[0] || !e->count[1])
		return -ENOMEM;
	memcpy(e->count[side], count, d->ncls * sizeof(uint64_t));
	e->in[side] = true;
	e->row[side] = row;
	e->grp[side] = g;
	return 0;
}

int rdiff_add_rows(struct rdiff *d, int side, const struct rpt_rows *rows)
{
	for (size_t i = 0; i < rows->n; i++) {
		const struct rpt_symrow *r = &rows->v[i];
		int ret = rdiff_push(d, side, r->g->img->path, r->g->app,
				     r->sym ? r->sym->name : "(no symbols)", r->count, r, r->g);

		if (ret)
			return ret;
	}
	return 0;
}

int rdiff_add_images(struct rdiff *d, int side, const struct rpt_profile *p)
{
	for (size_t i = 0; i < p->ngroups; i++) {
		const struct rpt_group *g = p->groups[i];
		int ret = rdiff_push(d, side, g->img->path, NULL, NULL, g->total, NULL, g);

		if (ret)
			return ret;
	}
	return 0;
}

static int rdiff_key_cmp(const struct rdiff_ent *x, const struct rdiff_ent *y)
{
	int r = strcmp(x->image, y->image);

	if (!r)
		r = strcmp(x->app, y->app);
	if (!r)
		r = strcmp(x->name, y->name);
	return r;
}

static int rdiff_qkey(const void *a, const void *b)
{
	return rdiff_key_cmp(a, b);
}

static void rdiff_ent_free(struct rdiff_ent *e)
{
	free(e->image);
	free(e->app);
	free(e->name);
	free(e->count[0]);
	free(e->count[1]);
}

/* samples of a row in the first class: the larger row of a side shows the entry */
static uint64_t rdiff_first(const uint64_t *c)
{
	return c ? c[0] : 0;
}

void rdiff_fold(struct rdiff *d)
{
	size_t o = 0;

	if (!d->n)
		return;
	qsort(d->v, d->n, sizeof(*d->v), rdiff_qkey);
	for (size_t i = 0; i < d->n; i++) {
		struct rdiff_ent *t = o ? &d->v[o - 1] : NULL, *e = &d->v[i];

		if (!t || rdiff_key_cmp(t, e)) {
			d->v[o++] = *e;
			continue;
		}
		for (int s = 0; s < 2; s++) {
			if (!e->in[s])
				continue;
			/* its vma, file and image path come from the larger row of the side */
			if (!t->in[s] ||
			    (e->row[s] && t->row[s] &&
			     rdiff_first(e->row[s]->count) > rdiff_first(t->row[s]->count))) {
				t->row[s] = e->row[s];
				t->grp[s] = e->grp[s];
			}
			t->in[s] = true;
			for (size_t c = 0; c < d->ncls; c++)
				t->count[s][c] += e->count[s][c];
		}
		rdiff_ent_free(e);
	}
	d->n = o;
}

void rdiff_free(struct rdiff *d)
{
	for (size_t i = 0; i < d->n; i++)
		rdiff_ent_free(&d->v[i]);
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* ------------------------------------------------------------ sorting */

static const struct rpt_symrow *rdiff_shown_row(const struct rdiff_ent *e)
{
	return e->row[1] ? e->row[1] : e->row[0];
}

static uint64_t rdiff_vma(const struct rdiff_ent *e)
{
	const struct rpt_symrow *r = rdiff_shown_row(e);

	if (!r)
		return 0;
	if (r->sym)
		return r->sym->vma;
	return r->ndet ? sym_key_vma(&r->g->img->syms, r->det[0].key) : 0;
}

static int rdiff_cmp(const void *a, const void *b, void *ctx)
{
	const struct rdiff_ent *x = a, *y = b;
	const struct rpt_opts *o = ctx;
	unsigned nkeys = o->nsort_keys ? o->nsort_keys : 1;
	int r = 0;

	for (unsigned k = 0; k < nkeys && !r; k++) {
		switch (o->nsort_keys ? o->sort_keys[k] : o->sort) {
		case SORT_SAMPLE:
			/* the second profile's share first, as OProfile; gone rows by the first's */
			if (x->count[1][0] != y->count[1][0])
				r = x->count[1][0] > y->count[1][0] ? -1 : 1;
			else if (x->count[0][0] != y->count[0][0])
				r = x->count[0][0] > y->count[0][0] ? -1 : 1;
			break;
		case SORT_SYMBOL:
			r = strcmp(x->name, y->name);
			break;
		case SORT_IMAGE:
			r = strcmp(x->image, y->image);
			break;
		case SORT_APP:
			r = strcmp(x->app, y->app);
			break;
		case SORT_VMA:
			if (rdiff_vma(x) != rdiff_vma(y))
				r = rdiff_vma(x) < rdiff_vma(y) ? -1 : 1;
			break;
		}
	}
	if (o->reverse_sort)
		r = -r;
	return r ? r : rdiff_key_cmp(x, y);
}

void rdiff_sort(struct rdiff *d, const struct rpt_opts *o)
{
	if (d->n)
		qsort_r(d->v, d->n, sizeof(*d->v), rdiff_cmp, (void *)o);
}

/* ------------------------------------------------------------ output */

struct rdiff_out {
	FILE *f;
	const struct rdiff *d;
	const struct rpt_profile *p[2];
	const uint64_t *den[2];
	const struct rpt_opts *o;
	bool symbols;
};

static double rdiff_share(uint64_t n, uint64_t d)
{
	return d ? 100.0 * (double)n / (double)d : 0.0;
}

static bool rdiff_visible(const struct rdiff_out *x, const struct rdiff_ent *e)
{
	if (x->o->threshold <= 0)
		return true;
	for (int s = 0; s < 2; s++)
		for (size_t c = 0; c < x->d->ncls; c++)
			if (e->in[s] && rdiff_share(e->count[s][c], x->den[s][c]) >= x->o->threshold)
				return true;
	return false;
}

static double rdiff_ent_pct(const struct rdiff_out *x, const struct rdiff_ent *e, size_t c)
{
	if (!e->in[0])
		return INFINITY;
	if (!e->in[1])
		return -INFINITY;
	return rdiff_pct(e->count[0][c], x->den[0][c], e->count[1][c], x->den[1][c]);
}

/* "+12.3456", "+++" (only in the second profile), "---" (only in the first) */
static const char *rdiff_pct_str(char *buf, size_t len, double v)
{
	if (isinf(v))
		return v > 0 ? "+++" : "---";
	snprintf(buf, len, "%+.4f", v);
	return buf;
}

static const char *rdiff_image_name(const struct rdiff_out *x, const struct rdiff_ent *e, char *buf,
				    size_t len)
{
	const struct rpt_group *g = e->grp[1] ? e->grp[1] : e->grp[0];

	return out_image_name(g->img, x->o->long_filenames, buf, len);
}

static const char *rdiff_app_name(const struct rdiff_out *x, const struct rdiff_ent *e)
{
	const struct rpt_group *g = e->grp[1] ? e->grp[1] : e->grp[0];
	const char *b;

	if (!g->app)
		return "";
	if (x->o->long_filenames || strstr(g->app, " (tgid:"))
		return g->app;
	b = strrchr(g->app, '/');
	return b && b[1] ? b + 1 : g->app;
}

static void rdiff_pad(FILE *f, const char *s, int width)
{
	size_t n = txt_put(f, s);

	do {
		fputc(' ', f);
	} while ((int)++n < width);
}

static int rdiff_width(int w, const char *s)
{
	size_t n = txt_escape(NULL, 0, s) + 1;

	return n > (size_t)w ? (int)n : w;
}

static void rdiff_text(const struct rdiff_out *x)
{
	const struct rdiff *d = x->d;
	const struct rpt_opts *o = x->o;
	FILE *f = x->f;
	bool multi_image = false, apps = x->p[0]->multiple_apps || x->p[1]->multiple_apps;
	int img_w = 25, app_w = 25, line_w = 28;
	char nb[4096], b[64], lb[4096];

	apps = apps && x->symbols;
	for (size_t i = 1; i < d->n; i++)
		if (strcmp(d->v[i].image, d->v[0].image))
			multi_image = true;
	for (size_t i = 0; i < d->n; i++) {
		const struct rdiff_ent *e = &d->v[i];

		if (!rdiff_visible(x, e))
			continue;
		img_w = rdiff_width(img_w, rdiff_image_name(x, e, nb, sizeof(nb)));
		if (apps)
			app_w = rdiff_width(app_w, rdiff_app_name(x, e));
	}
	out_text_header(f, x->p[1]);
	if (x->symbols && o->show_address)
		rdiff_pad(f, "vma", 17);
	for (size_t c = 0; c < d->ncls; c++) {
		rdiff_pad(f, "samples", 9);
		rdiff_pad(f, "%", 9);
		rdiff_pad(f, "diff %", 10);
	}
	if (x->symbols && o->debug_info)
		rdiff_pad(f, "linenr info", line_w);
	if (!x->symbols) {
		fputs("image name\n", f);
	} else {
		if (multi_image)
			rdiff_pad(f, "image name", img_w);
		if (apps)
			rdiff_pad(f, "app name", app_w);
		fputs("symbol name\n", f);
	}
	for (size_t i = 0; i < d->n; i++) {
		const struct rdiff_ent *e = &d->v[i];
		const struct rpt_symrow *r = rdiff_shown_row(e);
		int s = e->in[1] ? 1 : 0;

		if (!rdiff_visible(x, e))
			continue;
		if (x->symbols && o->show_address)
			fprintf(f, "%016" PRIx64 " ", rdiff_vma(e));
		for (size_t c = 0; c < d->ncls; c++) {
			char num[32];

			/* as OProfile: a row gone from the second profile shows its first samples */
			snprintf(num, sizeof(num), "%" PRIu64, e->count[s][c]);
			rdiff_pad(f, num, 9);
			if (s)
				snprintf(b, sizeof(b), "%.4f",
					 rdiff_share(e->count[1][c], x->den[1][c]));
			rdiff_pad(f, s ? b : "---", 9);
			rdiff_pad(f, rdiff_pct_str(b, sizeof(b), rdiff_ent_pct(x, e, c)), 10);
		}
		if (x->symbols && o->debug_info) {
			const char *file = r && r->sym ? r->sym->file : NULL;
			const char *base = file ? strrchr(file, '/') : NULL;

			if (file)
				snprintf(lb, sizeof(lb), "%s:%u",
					 o->long_filenames || !base ? file : base + 1, r->sym->line);
			rdiff_pad(f, file ? lb : "(no location information)", line_w);
		}
		if (!x->symbols) {
			txt_put(f, rdiff_image_name(x, e, nb, sizeof(nb)));
		} else {
			if (multi_image)
				rdiff_pad(f, rdiff_image_name(x, e, nb, sizeof(nb)), img_w);
			if (apps)
				rdiff_pad(f, rdiff_app_name(x, e), app_w);
			txt_put(f, e->name);
		}
		fputc('\n', f);
	}
}

/* <count> (second profile), <basecount> (first), <diff> per class (class="cN" with several) */
static void rdiff_xml_counts(const struct rdiff_out *x, const char *indent, const uint64_t *ca,
			     const uint64_t *cb, bool in_a, bool in_b)
{
	size_t ncls = x->d->ncls;
	FILE *f = x->f;
	char b[64];

	for (size_t c = 0; c < ncls; c++) {
		char cls[32] = "";
		double v = !in_a ? INFINITY :
			   !in_b ? -INFINITY :
				   rdiff_pct(ca[c], x->den[0][c], cb[c], x->den[1][c]);

		if (ncls > 1)
			snprintf(cls, sizeof(cls), " class=\"c%zu\"", c);
		fprintf(f, "%s<count%s>%" PRIu64 "</count>\n", indent, cls, cb[c]);
		fprintf(f, "%s<basecount%s>%" PRIu64 "</basecount>\n", indent, cls, ca[c]);
		fprintf(f, "%s<diff%s>%s</diff>\n", indent, cls, rdiff_pct_str(b, sizeof(b), v));
	}
}

static int rdiff_xml(const struct rdiff_out *x)
{
	const struct rdiff *d = x->d;
	FILE *f = x->f;
	uint64_t *sum[2];
	bool *done = calloc(d->n + 1, sizeof(bool));
	char nb[4096];

	sum[0] = calloc(d->ncls, sizeof(uint64_t));
	sum[1] = calloc(d->ncls, sizeof(uint64_t));
	if (!done || !sum[0] || !sum[1]) {
		free(done);
		free(sum[0]);
		free(sum[1]);
		return -ENOMEM;
	}
	out_xml_head(f, x->p[1], x->o, x->p[0]);
	/* one <binary> per image, in the order of its first row */
	for (size_t i = 0; i < d->n; i++) {
		bool in[2] = { false, false };

		if (done[i] || !rdiff_visible(x, &d->v[i]))
			continue;
		memset(sum[0], 0, d->ncls * sizeof(uint64_t));
		memset(sum[1], 0, d->ncls * sizeof(uint64_t));
		for (size_t j = i; j < d->n; j++) {
			const struct rdiff_ent *e = &d->v[j];

			if (strcmp(e->image, d->v[i].image) || !rdiff_visible(x, e))
				continue;
			for (int s = 0; s < 2; s++) {
				in[s] |= e->in[s];
				for (size_t c = 0; c < d->ncls; c++)
					sum[s][c] += e->count[s][c];
			}
		}
		fputs(" <binary name=\"", f);
		txt_put_xml(f, rdiff_image_name(x, &d->v[i], nb, sizeof(nb)));
		fputs("\">\n", f);
		rdiff_xml_counts(x, "  ", sum[0], sum[1], in[0], in[1]);
		for (size_t j = i; j < d->n; j++) {
			const struct rdiff_ent *e = &d->v[j];

			if (strcmp(e->image, d->v[i].image) || !rdiff_visible(x, e))
				continue;
			done[j] = true;
			if (!x->symbols)
				continue;
			fprintf(f, "  <symbol idref=\"%zu\">\n", j);
			rdiff_xml_counts(x, "   ", e->count[0], e->count[1], e->in[0], e->in[1]);
			fputs("  </symbol>\n", f);
		}
		fputs(" </binary>\n", f);
	}
	if (x->symbols) {
		fputs(" <symboltable>\n", f);
		for (size_t i = 0; i < d->n; i++) {
			const struct rdiff_ent *e = &d->v[i];
			const struct rpt_symrow *r = rdiff_shown_row(e);

			if (!rdiff_visible(x, e))
				continue;
			fprintf(f, "  <symboldata id=\"%zu\" name=\"", i);
			txt_put_xml(f, e->name);
			fputc('"', f);
			if (x->o->debug_info && r && r->sym && r->sym->file) {
				fputs(" file=\"", f);
				txt_put_xml(f, r->sym->file);
				fprintf(f, "\" line=\"%u\"", r->sym->line);
			}
			if (x->o->show_address)
				fprintf(f, " startingaddr=\"0x%" PRIx64 "\"", rdiff_vma(e));
			fputs("/>\n", f);
		}
		fputs(" </symboltable>\n", f);
	}
	fputs("</profile>\n", f);
	free(done);
	free(sum[0]);
	free(sum[1]);
	return 0;
}

static void rdiff_json_counts(FILE *f, const char *key, const uint64_t *v, size_t n)
{
	fprintf(f, "\"%s\": [", key);
	for (size_t c = 0; c < n; c++)
		fprintf(f, "%s%" PRIu64, c ? ", " : "", v[c]);
	fputc(']', f);
}

static void rdiff_json_pcts(FILE *f, const char *key, const uint64_t *v, const uint64_t *den,
			    size_t n)
{
	fprintf(f, "\"%s\": [", key);
	for (size_t c = 0; c < n; c++)
		fprintf(f, "%s%.4f", c ? ", " : "", rdiff_share(v[c], den[c]));
	fputc(']', f);
}

static int rdiff_json(const struct rdiff_out *x)
{
	static const char *const kinds[] = { "user", "kernel", "anon" };
	const struct rdiff *d = x->d;
	FILE *f = x->f;
	bool first = true;

	out_json_head(f, x->p[1], "oprofile-ng-diff");
	fputs(",\n  \"base_session\": ", f);
	txt_put_json(f, x->p[0]->samples_dir);
	fputs(",\n  ", f);
	rdiff_json_counts(f, "total", x->p[1]->total, d->ncls);
	fputs(", ", f);
	rdiff_json_counts(f, "base_total", x->p[0]->total, d->ncls);
	fputs(",\n  ", f);
	rdiff_json_counts(f, "percent_base", x->den[1], d->ncls);
	fputs(", ", f);
	rdiff_json_counts(f, "base_percent_base", x->den[0], d->ncls);
	fprintf(f, ",\n  \"%s\": [", x->symbols ? "symbols" : "images");
	for (size_t i = 0; i < d->n; i++) {
		const struct rdiff_ent *e = &d->v[i];
		const struct rpt_group *g = e->grp[1] ? e->grp[1] : e->grp[0];
		const struct rpt_symrow *r = rdiff_shown_row(e);

		if (!rdiff_visible(x, e))
			continue;
		fprintf(f, "%s\n    {", first ? "" : ",");
		first = false;
		if (x->symbols) {
			fputs("\"name\": ", f);
			if (r && r->sym)
				txt_put_json(f, r->sym->name);
			else
				fputs("null", f);
			fprintf(f, ", \"vma\": \"0x%" PRIx64 "\", ", rdiff_vma(e));
		}
		fputs("\"image\": ", f);
		txt_put_json(f, g->img->display);
		fputs(", \"image_path\": ", f);
		txt_put_json(f, g->img->path);
		fprintf(f, ", \"image_kind\": \"%s\"",
			g->img->is_kernel ? "kernel" : kinds[g->img->kind]);
		if (x->symbols) {
			fputs(", \"app\": ", f);
			if (g->app)
				txt_put_json(f, g->app);
			else
				fputs("null", f);
			if (r && r->sym && r->sym->file) {
				fputs(", \"file\": ", f);
				txt_put_json(f, r->sym->file);
				fprintf(f, ", \"line\": %u", r->sym->line);
			}
		}
		fprintf(f, ",\n     \"status\": \"%s\", ",
			!e->in[0] ? "new" :
			!e->in[1] ? "gone" :
				    "both");
		rdiff_json_counts(f, "samples", e->count[1], d->ncls);
		fputs(", ", f);
		rdiff_json_pcts(f, "percent", e->count[1], x->den[1], d->ncls);
		fputs(", ", f);
		rdiff_json_counts(f, "base_samples", e->count[0], d->ncls);
		fputs(", ", f);
		rdiff_json_pcts(f, "base_percent", e->count[0], x->den[0], d->ncls);
		fputs(", \"diff_percent\": [", f);
		for (size_t c = 0; c < d->ncls; c++) {
			double v = rdiff_ent_pct(x, e, c);

			if (isinf(v))
				fprintf(f, "%snull", c ? ", " : "");
			else
				fprintf(f, "%s%.4f", c ? ", " : "", v);
		}
		fputs("]}", f);
	}
	fprintf(f, "\n  ],\n  \"skipped_files\": %u\n}\n", x->p[0]->nskipped + x->p[1]->nskipped);
	return 0;
}

/* The columns of both profiles must mean the same thing. */
static int rdiff_check_classes(const struct rpt_profile *a, const struct rpt_profile *b)
{
	bool same = a->ncls == b->ncls;

	for (size_t c = 0; same && c < a->ncls; c++)
		same = !strcmp(a->cls[c].label, b->cls[c].label) &&
		       !strcmp(a->cls[c].event, b->cls[c].event) &&
		       a->cls[c].count == b->cls[c].count && a->cls[c].um == b->cls[c].um;
	if (same)
		return 0;
	txt_error("differential profile: the two profiles have different classes (the first "
		  "%zu: %s%s, the second %zu: %s%s): choose the same event: in both, or --merge= "
		  "the axis they differ on",
		  a->ncls, a->ncls ? a->cls[0].label : "", a->ncls > 1 ? ", ..." : "", b->ncls,
		  b->ncls ? b->cls[0].label : "", b->ncls > 1 ? ", ..." : "");
	return -EINVAL;
}

int rdiff_report(FILE *f, struct rpt_profile *pa, const struct rpt_rows *ra, struct rpt_profile *pb,
		 const struct rpt_rows *rb, const struct rpt_opts *o)
{
	struct rdiff d = { .ncls = pb->ncls };
	struct rdiff_out x = {
		.f = f,
		.d = &d,
		.p = { pa, pb },
		.o = o,
		.symbols = o->symbols,
	};
	int ret;

	ret = rdiff_check_classes(pa, pb);
	if (ret)
		return ret;
	x.den[0] = o->global_percent ? pa->global_total : pa->total;
	x.den[1] = o->global_percent ? pb->global_total : pb->total;
	if (o->symbols)
		ret = rdiff_add_rows(&d, 0, ra) ?: rdiff_add_rows(&d, 1, rb);
	else
		ret = rdiff_add_images(&d, 0, pa) ?: rdiff_add_images(&d, 1, pb);
	if (!ret) {
		rdiff_fold(&d);
		rdiff_sort(&d, o);
		if (o->format == FMT_XML)
			ret = rdiff_xml(&x);
		else if (o->format == FMT_JSON)
			ret = rdiff_json(&x);
		else
			rdiff_text(&x);
	}
	if (ret == -ENOMEM)
		txt_error("out of memory");
	rdiff_free(&d);
	return ret;
}
