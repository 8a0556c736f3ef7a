/*
 * opreport_output.c - the report formats: OProfile-style text (image
 * summary with {dep} children, symbol list, per-address details), OProfile's
 * XML schema (-X) and our JSON schema (--json, see tools/opreport/opreport-json.md).
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_events.h"
#include "opreport.h"

/* ------------------------------------------------------------ helpers */

static double pct(uint64_t n, uint64_t d)
{
	return d ? 100.0 * (double)n / (double)d : 0.0;
}

static const char *pct_str(char *buf, size_t len, uint64_t n, uint64_t d)
{
	double v = pct(n, d);

	snprintf(buf, len, v >= 99.99995 ? "%.3f" : "%.4f", v);
	return buf;
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b && b[1] ? b + 1 : p;
}

const char *out_image_name(const struct rpt_image *img, bool long_names, char *buf, size_t len)
{
	if (img->kind == OP_IMAGE_ANON || long_names)
		snprintf(buf, len, "%s", img->display);
	else
		snprintf(buf, len, "%s", base_name(img->display));
	return buf;
}

static const char *app_name(const char *app, bool long_names)
{
	if (!app)
		return "";
	if (long_names || strstr(app, " (tgid:"))
		return app;
	return base_name(app);
}

/* print @s (escaped: names) and pad to @width, always leaving at least one space */
static void pad(FILE *f, const char *s, int width)
{
	size_t n = txt_put(f, s);

	do {
		fputc(' ', f);
	} while ((int)++n < width);
}

static const uint64_t *denominators(const struct rpt_profile *p, const struct rpt_opts *o)
{
	return o->global_percent ? p->global_total : p->total;
}

static bool above_threshold(const struct rpt_opts *o, const uint64_t *count, const uint64_t *den,
			    size_t ncls)
{
	if (o->threshold <= 0)
		return true;
	for (size_t c = 0; c < ncls; c++)
		if (pct(count[c], den[c]) >= o->threshold)
			return true;
	return false;
}

static bool is_timer(const struct rpt_profile *p)
{
	return p->cpu_type == OP_CPU_TIMER;
}

/* "Counted EV events (desc) with a unit mask of 0xUM (desc) count N", as OProfile */
static void print_counted(FILE *f, const struct rpt_class *k, const struct op_events *cat)
{
	const struct op_event *e = cat ? op_events_find(cat, k->event) : NULL;

	fprintf(f, "Counted %s events", k->event);
	if (e && e->desc)
		fprintf(f, " (%s)", e->desc);
	fprintf(f, " with a unit mask of 0x%02x", k->um);
	if (e && e->um) {
		const char *ud = "multiple flags";

		for (unsigned i = 0; i < e->um->nr; i++)
			if (e->um->entries[i].value == k->um)
				ud = e->um->entries[i].desc ? e->um->entries[i].desc : "";
		fprintf(f, " (%s)", ud);
	}
	fprintf(f, " count %" PRIu64 "\n", k->count);
}

void out_text_header(FILE *f, const struct rpt_profile *p)
{
	fprintf(f, "CPU: %s", is_timer(p) ? "CPU with timer interrupt" : rs_cpu_name(p->cpu_type));
	/* as OProfile: the speed only when the header knows it */
	if (p->cpu_speed > 0)
		fprintf(f, ", speed %g MHz (estimated)", p->cpu_speed);
	fputc('\n', f);
	if (is_timer(p)) {
		fprintf(f, "Profiling through timer interrupt\n");
	} else {
		/* descriptions from the events catalogue, when it has this CPU type */
		struct op_events cat;
		char err[512];
		bool have_cat = !op_events_load(&cat, NULL, rs_cpu_name(p->cpu_type), 0, 0, err,
						sizeof(err));

		for (size_t c = 0; c < p->ncls; c++) {
			bool seen = false;

			for (size_t d = 0; d < c; d++)
				if (!strcmp(p->cls[d].event, p->cls[c].event) &&
				    p->cls[d].count == p->cls[c].count &&
				    p->cls[d].um == p->cls[c].um)
					seen = true;
			if (!seen)
				print_counted(f, &p->cls[c], have_cat ? &cat : NULL);
		}
		if (have_cat)
			op_events_free(&cat);
	}
	if (p->ncls < 2)
		return;
	for (size_t c = 0; c < p->ncls; c++) {
		const struct rpt_class *k = &p->cls[c];

		if (k->cpu >= 0)
			fprintf(f, "Samples on CPU %d\n", k->cpu);
		else if (k->tid >= 0)
			fprintf(f, "Processes with a thread ID of %d\n", k->tid);
		else if (k->tgid >= 0)
			fprintf(f, "Processes with a thread group ID of %d\n", k->tgid);
	}
}

/* -------------------------------------------------------- image summary */

struct sum_ent {
	const char *name; /* display (app, or image when merged) */
	uint64_t *count;
	const struct rpt_group **g;
	size_t ng;
	bool has_deps;
};

static int ent_cmp(const void *a, const void *b, void *ctx)
{
	const struct sum_ent *x = a, *y = b;
	const struct rpt_opts *o = ctx;
	int r = 0;

	if (o->sort == SORT_IMAGE || o->sort == SORT_APP || o->sort == SORT_SYMBOL)
		r = strcmp(app_name(x->name, o->long_filenames),
			   app_name(y->name, o->long_filenames));
	else if (x->count[0] != y->count[0])
		r = x->count[0] > y->count[0] ? -1 : 1;
	if (o->reverse_sort)
		r = -r;
	return r ? r : strcmp(x->name, y->name);
}

static int grp_cmp(const void *a, const void *b, void *ctx)
{
	const struct rpt_group *x = *(const struct rpt_group *const *)a;
	const struct rpt_group *y = *(const struct rpt_group *const *)b;
	const struct rpt_opts *o = ctx;
	int r = 0;

	if (o->sort == SORT_IMAGE || o->sort == SORT_SYMBOL)
		r = strcmp(app_name(x->img->display, o->long_filenames),
			   app_name(y->img->display, o->long_filenames));
	else if (x->total[0] != y->total[0])
		r = x->total[0] > y->total[0] ? -1 : 1;
	if (o->reverse_sort)
		r = -r;
	return r ? r : strcmp(x->img->display, y->img->display);
}

static void free_ents(struct sum_ent *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].count);
		free(e[i].g);
	}
	free(e);
}

/* Group the profile's groups by application (or by image with --merge=lib). */
static int build_ents(const struct rpt_profile *p, const struct rpt_opts *o, struct sum_ent **out,
		      size_t *nout)
{
	struct sum_ent *e = calloc(p->ngroups ? p->ngroups : 1, sizeof(*e));
	size_t n = 0;

	if (!e)
		return -ENOMEM;
	for (size_t i = 0; i < p->ngroups; i++) {
		const struct rpt_group *g = p->groups[i];
		const char *name = g->app ? g->app : g->img->display;
		struct sum_ent *t = NULL;
		const struct rpt_group **ng;

		for (size_t j = 0; j < n; j++)
			if (!strcmp(e[j].name, name))
				t = &e[j];
		if (!t) {
			t = &e[n++];
			t->name = name;
			t->count = calloc(p->ncls, sizeof(uint64_t));
			if (!t->count)
				goto out_nomem;
		}
		ng = realloc(t->g, (t->ng + 1) * sizeof(*ng));
		if (!ng)
			goto out_nomem;
		t->g = ng;
		t->g[t->ng++] = g;
		for (size_t c = 0; c < p->ncls; c++)
			t->count[c] += g->total[c];
		if (g->app && strcmp(g->app, g->img->display))
			t->has_deps = true;
	}
	qsort_r(e, n, sizeof(*e), ent_cmp, (void *)o);
	for (size_t i = 0; i < n; i++)
		qsort_r(e[i].g, e[i].ng, sizeof(*e[i].g), grp_cmp, (void *)o);
	*out = e;
	*nout = n;
	return 0;
out_nomem:
	free_ents(e, n);
	return -ENOMEM;
}

static void summary_header(FILE *f, const struct rpt_profile *p, const char *indent)
{
	fputs(indent, f);
	for (size_t c = 0; c < p->ncls; c++) {
		const char *l = p->cls[c].label;

		if (strlen(l) > 17)
			fprintf(f, "%.14s...|", l);
		else
			fprintf(f, "%17s|", l);
	}
	fprintf(f, "\n%s", indent);
	for (size_t c = 0; c < p->ncls; c++)
		fputs("  samples|      %|", f);
	fprintf(f, "\n%s", indent);
	for (size_t c = 0; c < p->ncls; c++)
		fputs("------------------", f);
	fputc('\n', f);
}

static void summary_row(FILE *f, const char *indent, const uint64_t *count, const uint64_t *den,
			size_t ncls, const char *name)
{
	char b[32];

	fputs(indent, f);
	for (size_t c = 0; c < ncls; c++)
		fprintf(f, "%9" PRIu64 " %7s ", count[c], pct_str(b, sizeof(b), count[c], den[c]));
	txt_put(f, name);
	fputc('\n', f);
}

static int text_summary(FILE *f, const struct rpt_profile *p, const struct rpt_opts *o)
{
	const uint64_t *den = denominators(p, o);
	struct sum_ent *e;
	size_t n;
	char nb[4096];

	if (build_ents(p, o, &e, &n))
		return -ENOMEM;
	summary_header(f, p, "");
	for (size_t i = 0; i < n; i++) {
		if (!above_threshold(o, e[i].count, den, p->ncls))
			continue;
		if (e[i].g[0]->app)
			summary_row(f, "", e[i].count, den, p->ncls,
				    app_name(e[i].name, o->long_filenames));
		else
			summary_row(f, "", e[i].count, den, p->ncls,
				    out_image_name(e[i].g[0]->img, o->long_filenames, nb,
						   sizeof(nb)));
		if (!e[i].has_deps)
			continue;
		summary_header(f, p, "\t");
		for (size_t j = 0; j < e[i].ng; j++) {
			const struct rpt_group *g = e[i].g[j];
			const uint64_t *cden = o->global_percent ? den : e[i].count;

			if (!above_threshold(o, g->total, cden, p->ncls))
				continue;
			summary_row(f, "\t", g->total, cden, p->ncls,
				    out_image_name(g->img, o->long_filenames, nb, sizeof(nb)));
		}
	}
	free_ents(e, n);
	return 0;
}

/* ------------------------------------------------------------ symbols */

static bool row_visible(const struct rpt_profile *p, const struct rpt_opts *o,
			const struct rpt_symrow *r)
{
	return above_threshold(o, r->count, denominators(p, o), p->ncls);
}

static uint64_t row_vma(const struct rpt_symrow *r)
{
	if (r->sym)
		return r->sym->vma;
	return r->ndet ? sym_key_vma(&r->g->img->syms, r->det[0].key) : 0;
}

static const char *line_str(char *buf, size_t len, const char *file, unsigned line, bool long_names)
{
	if (!file)
		return "(no location information)";
	snprintf(buf, len, "%s:%u", long_names ? file : base_name(file), line);
	return buf;
}

/* a name column: OProfile's @min, or wider than its longest name, so the next column lines up */
static int col_width(int w, const char *s)
{
	size_t n = txt_escape(NULL, 0, s) + 1;

	return n > (size_t)w ? (int)n : w;
}

static void text_symbols(FILE *f, const struct rpt_profile *p, const struct rpt_opts *o,
			 const struct rpt_rows *rows)
{
	const uint64_t *den = denominators(p, o);
	bool vma = o->show_address || o->details;
	uint64_t *cum = calloc(p->ncls, sizeof(uint64_t));
	bool multi_image = false;
	char b[64], lb[4096], nb[4096];
	/* 16 hex digits and a space; -d rows indent theirs by two */
	int vma_w = o->details ? 19 : 17, line_w = 28, img_w = 25, app_w = 25;

	/* as OProfile: the image name column only when the rows span several images */
	for (size_t i = 1; i < rows->n; i++)
		if (rows->v[i].g->img != rows->v[0].g->img)
			multi_image = true;
	if (!cum)
		return;
	for (size_t i = 0; i < rows->n; i++) {
		const struct rpt_symrow *r = &rows->v[i];

		if (!row_visible(p, o, r))
			continue;
		if (o->debug_info)
			line_w = col_width(line_w,
					   line_str(lb, sizeof(lb), r->sym ? r->sym->file : NULL,
						    r->sym ? r->sym->line : 0, o->long_filenames));
		if (multi_image)
			img_w = col_width(img_w, out_image_name(r->g->img, o->long_filenames, nb,
								sizeof(nb)));
		if (p->multiple_apps)
			app_w = col_width(app_w, app_name(r->g->app, o->long_filenames));
	}
	if (vma)
		pad(f, "vma", vma_w);
	for (size_t c = 0; c < p->ncls; c++) {
		pad(f, "samples", 9);
		if (o->accumulated)
			pad(f, "cum. samples", 14);
		pad(f, "%", 9);
		if (o->accumulated)
			pad(f, "cum. %", 11);
	}
	if (o->debug_info)
		pad(f, "linenr info", line_w);
	if (multi_image)
		pad(f, "image name", img_w);
	if (p->multiple_apps)
		pad(f, "app name", app_w);
	fputs("symbol name\n", f);

	for (size_t i = 0; i < rows->n; i++) {
		const struct rpt_symrow *r = &rows->v[i];

		if (!row_visible(p, o, r))
			continue;
		if (vma)
			fprintf(f, "%016" PRIx64 "%*s", row_vma(r), vma_w - 16, "");
		for (size_t c = 0; c < p->ncls; c++) {
			char num[32];

			cum[c] += r->count[c];
			snprintf(num, sizeof(num), "%" PRIu64, r->count[c]);
			pad(f, num, 9);
			if (o->accumulated) {
				snprintf(num, sizeof(num), "%" PRIu64, cum[c]);
				pad(f, num, 14);
			}
			pad(f, pct_str(b, sizeof(b), r->count[c], den[c]), 9);
			if (o->accumulated)
				pad(f, pct_str(b, sizeof(b), cum[c], den[c]), 11);
		}
		if (o->debug_info)
			pad(f,
			    line_str(lb, sizeof(lb), r->sym ? r->sym->file : NULL,
				     r->sym ? r->sym->line : 0, o->long_filenames),
			    line_w);
		if (multi_image)
			pad(f, out_image_name(r->g->img, o->long_filenames, nb, sizeof(nb)), img_w);
		if (p->multiple_apps)
			pad(f, app_name(r->g->app, o->long_filenames), app_w);
		txt_put(f, r->sym ? r->sym->name : "(no symbols)");
		fputc('\n', f);
		if (!o->details)
			continue;
		for (size_t d = 0; d < r->ndet;) {
			uint64_t key = r->det[d].key;
			uint64_t cnt[64] = { 0 };
			const char *file = NULL;
			unsigned line = 0;

			for (; d < r->ndet && r->det[d].key == key; d++)
				if (r->det[d].cls < 64)
					cnt[r->det[d].cls] += r->det[d].count;
			fprintf(f, "  %016" PRIx64 " ", sym_key_vma(&r->g->img->syms, key));
			for (size_t c = 0; c < p->ncls && c < 64; c++) {
				char num[32];

				snprintf(num, sizeof(num), "%" PRIu64, cnt[c]);
				pad(f, num, 9);
				pct_str(b, sizeof(b), cnt[c],
					o->global_percent ? den[c] : r->count[c]);
				if (c + 1 < p->ncls || o->debug_info)
					pad(f, b, 9);
				else
					fputs(b, f);
			}
			if (o->debug_info)
				txt_put(f, sym_key_line(&r->g->img->syms, key, &file, &line) ?
						   line_str(lb, sizeof(lb), file, line,
							    o->long_filenames) :
						   "(no location information)");
			fputc('\n', f);
		}
	}
	free(cum);
}

/* ---------------------------------------------------------------- XML */

static void xml_counts(FILE *f, const char *indent, const struct rpt_profile *p,
		       const uint64_t *count)
{
	for (size_t c = 0; c < p->ncls; c++) {
		if (!count[c] && p->ncls > 1)
			continue;
		if (p->ncls > 1)
			fprintf(f, "%s<count class=\"c%zu\">%" PRIu64 "</count>\n", indent, c,
				count[c]);
		else
			fprintf(f, "%s<count>%" PRIu64 "</count>\n", indent, count[c]);
	}
}

/* symbols of group @g, as <symbol> elements (ids are row indexes) */
static void xml_group_syms(FILE *f, const char *indent, const struct rpt_profile *p,
			   const struct rpt_opts *o, const struct rpt_rows *rows,
			   const struct rpt_group *g, const size_t *detail_base)
{
	for (size_t i = 0; i < rows->n; i++) {
		const struct rpt_symrow *r = &rows->v[i];
		char ind2[32];

		if (r->g != g || !row_visible(p, o, r))
			continue;
		fprintf(f, "%s<symbol idref=\"%zu\"", indent, i);
		if (o->details && r->ndet)
			fprintf(f, " detaillo=\"%zu\" detailhi=\"%zu\"", detail_base[i],
				detail_base[i + 1] - 1);
		fputs(">\n", f);
		snprintf(ind2, sizeof(ind2), "%s ", indent);
		xml_counts(f, ind2, p, r->count);
		fprintf(f, "%s</symbol>\n", indent);
	}
}

static size_t distinct_keys(const struct rpt_symrow *r)
{
	size_t n = 0;

	for (size_t d = 0; d < r->ndet; d++)
		if (!d || r->det[d].key != r->det[d - 1].key)
			n++;
	return n;
}

void out_xml_head(FILE *f, const struct rpt_profile *p, const struct rpt_opts *o,
		  const struct rpt_profile *base)
{
	const char *cpu, *slash;

	/* as OProfile: "arch/model" splits into cputype and processor */
	cpu = rs_cpu_name(p->cpu_type);
	slash = strchr(cpu, '/');
	fprintf(f, "<?xml version=\"1.0\" ?>\n<profile schemaversion=\"3.1\" cputype=\"%.*s\"",
		slash ? (int)(slash - cpu) : (int)strlen(cpu), cpu);
	if (slash)
		fprintf(f, " processor=\"%s\"", slash + 1);
	if (p->axis == 1) {
		/* the number of CPUs (highest CPU number + 1), as OProfile */
		int maxcpu = 0;

		for (size_t c = 0; c < p->ncls; c++)
			if (p->cls[c].cpu > maxcpu)
				maxcpu = p->cls[c].cpu;
		fprintf(f, " separatedcpus=\"%d\"", maxcpu + 1);
	}
	fprintf(f, " mhz=\"%g\" title=\"", p->cpu_speed);
	txt_put_xml(f, o->cmdline ? o->cmdline : "opreport");
	fputs("\">\n", f);
	fputs(" <options session=\"", f);
	txt_put_xml(f, p->samples_dir);
	fputc('"', f);
	if (o->debug_info)
		fputs(" debuginfo=\"true\"", f);
	if (o->details)
		fputs(" details=\"true\"", f);
	if (o->exclude_dependent)
		fputs(" excludedependent=\"true\"", f);
	if (o->reverse_sort)
		fputs(" reversesort=\"true\"", f);
	if (base) {
		fputs(" basesession=\"", f);
		txt_put_xml(f, base->samples_dir);
		fputc('"', f);
	}
	fputs("/>\n <setup>\n", f);
	if (is_timer(p)) {
		fprintf(f, "  <timersetup rtcinterrupts=\"%" PRIu64 "\"/>\n", p->cls[0].count);
	} else {
		for (size_t c = 0; c < p->ncls; c++) {
			fprintf(f, "  <eventsetup id=\"%zu\" eventname=\"", c);
			txt_put_xml(f, p->cls[c].event);
			fprintf(f, "\" unitmask=\"%u\" setupcount=\"%" PRIu64 "\"/>\n",
				p->cls[c].um, p->cls[c].count);
		}
	}
	fputs(" </setup>\n", f);
	if (p->ncls > 1) {
		fputs(" <classes>\n", f);
		for (size_t c = 0; c < p->ncls; c++) {
			fprintf(f, "  <class name=\"c%zu\"", c);
			if (p->cls[c].cpu >= 0)
				fprintf(f, " cpu=\"%d\"", p->cls[c].cpu);
			if (p->cls[c].tid >= 0)
				fprintf(f, " tid=\"%d\"", p->cls[c].tid);
			if (p->cls[c].tgid >= 0)
				fprintf(f, " tgid=\"%d\"", p->cls[c].tgid);
			if (p->axis == 0)
				fprintf(f, " event=\"%zu\"", c);
			if (p->cls[c].um)
				fprintf(f, " mask=\"%u\"", p->cls[c].um);
			fputs("/>\n", f);
		}
		fputs(" </classes>\n", f);
	}
}

static int xml_report(FILE *f, const struct rpt_profile *p, const struct rpt_opts *o,
		      const struct rpt_rows *rows)
{
	bool syms = o->symbols || o->details;
	struct sum_ent *e;
	size_t n, *detail_base;
	char nb[4096];

	if (build_ents(p, o, &e, &n))
		return -ENOMEM;
	detail_base = calloc(rows->n + 1, sizeof(size_t));
	if (!detail_base) {
		free_ents(e, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rows->n; i++)
		detail_base[i + 1] =
			detail_base[i] +
			(row_visible(p, o, &rows->v[i]) ? distinct_keys(&rows->v[i]) : 0);

	out_xml_head(f, p, o, NULL);
	for (size_t i = 0; i < n; i++) {
		const struct rpt_group *self = NULL;

		if (!above_threshold(o, e[i].count, denominators(p, o), p->ncls))
			continue;
		fputs(" <binary name=\"", f);
		txt_put_xml(f, o->long_filenames || !e[i].g[0]->app ? e[i].name :
								      app_name(e[i].name, false));
		fputs("\">\n", f);
		xml_counts(f, "  ", p, e[i].count);
		for (size_t j = 0; j < e[i].ng; j++)
			if (!e[i].g[j]->app || !strcmp(e[i].g[j]->app, e[i].g[j]->img->display))
				self = e[i].g[j];
		if (syms && self)
			xml_group_syms(f, "  ", p, o, rows, self, detail_base);
		for (size_t j = 0; j < e[i].ng; j++) {
			const struct rpt_group *g = e[i].g[j];

			if (g == self)
				continue;
			fputs("  <module name=\"", f);
			txt_put_xml(f, out_image_name(g->img, o->long_filenames, nb, sizeof(nb)));
			fputs("\">\n", f);
			xml_counts(f, "   ", p, g->total);
			if (syms)
				xml_group_syms(f, "   ", p, o, rows, g, detail_base);
			fputs("  </module>\n", f);
		}
		fputs(" </binary>\n", f);
	}
	if (syms) {
		fputs(" <symboltable>\n", f);
		for (size_t i = 0; i < rows->n; i++) {
			const struct rpt_symrow *r = &rows->v[i];

			if (!row_visible(p, o, r))
				continue;
			fprintf(f, "  <symboldata id=\"%zu\" name=\"", i);
			txt_put_xml(f, r->sym ? r->sym->name : "(no symbols)");
			fputc('"', f);
			if (o->debug_info && r->sym && r->sym->file) {
				fputs(" file=\"", f);
				txt_put_xml(f, o->long_filenames ? r->sym->file :
								   base_name(r->sym->file));
				fprintf(f, "\" line=\"%u\"", r->sym->line);
			}
			if (o->details || o->show_address)
				fprintf(f, " startingaddr=\"0x%" PRIx64 "\"", row_vma(r));
			if (o->details && r->sym)
				fprintf(f, " codelength=\"%" PRIu64 "\"",
					r->sym->end - r->sym->start);
			fputs("/>\n", f);
		}
		fputs(" </symboltable>\n", f);
	}
	if (o->details) {
		fputs(" <detailtable>\n", f);
		for (size_t i = 0; i < rows->n; i++) {
			const struct rpt_symrow *r = &rows->v[i];
			size_t id = detail_base[i];

			if (!row_visible(p, o, r) || !r->ndet)
				continue;
			fprintf(f, "  <symboldetails id=\"%zu\">\n", i);
			for (size_t d = 0; d < r->ndet;) {
				uint64_t key = r->det[d].key;
				uint64_t cnt[64] = { 0 };
				const char *file;
				unsigned line;

				for (; d < r->ndet && r->det[d].key == key; d++)
					if (r->det[d].cls < 64)
						cnt[r->det[d].cls] += r->det[d].count;
				fprintf(f, "   <detaildata id=\"%zu\" vmaoffset=\"%" PRIx64 "\"",
					id++, sym_key_vma(&r->g->img->syms, key) - row_vma(r));
				if (o->debug_info &&
				    sym_key_line(&r->g->img->syms, key, &file, &line))
					fprintf(f, " line=\"%u\"", line);
				fputs(">\n", f);
				xml_counts(f, "    ", p, cnt);
				fputs("   </detaildata>\n", f);
			}
			fputs("  </symboldetails>\n", f);
		}
		fputs(" </detailtable>\n", f);
	}
	fputs("</profile>\n", f);
	free(detail_base);
	free_ents(e, n);
	return 0;
}

/* --------------------------------------------------------------- JSON */

static void json_counts(FILE *f, const char *key, const uint64_t *count, size_t ncls)
{
	fprintf(f, "\"%s\": [", key);
	for (size_t c = 0; c < ncls; c++)
		fprintf(f, "%s%" PRIu64, c ? ", " : "", count[c]);
	fputc(']', f);
}

static void json_pcts(FILE *f, const uint64_t *count, const uint64_t *den, size_t ncls)
{
	fputs("\"percent\": [", f);
	for (size_t c = 0; c < ncls; c++)
		fprintf(f, "%s%.4f", c ? ", " : "", pct(count[c], den[c]));
	fputc(']', f);
}

static void json_image(FILE *f, const struct rpt_image *img)
{
	static const char *const kinds[] = { "user", "kernel", "anon" };

	fputs("\"image\": ", f);
	txt_put_json(f, img->display);
	fputs(", \"image_path\": ", f);
	txt_put_json(f, img->path);
	fprintf(f, ", \"image_kind\": \"%s\"", img->is_kernel ? "kernel" : kinds[img->kind]);
}

void out_json_head(FILE *f, const struct rpt_profile *p, const char *schema)
{
	static const char *const axes[] = { "event", "cpu", "tid", "tgid" };

	fputs("{\n  \"schema\": ", f);
	txt_put_json(f, schema);
	fputs(",\n  \"version\": 1,\n  \"session\": ", f);
	txt_put_json(f, p->samples_dir);
	fputs(",\n  \"cpu\": {\"type\": ", f);
	txt_put_json(f, rs_cpu_name(p->cpu_type));
	fprintf(f, ", \"cpu_type\": %u, \"speed_mhz\": %g, \"timer\": %s},\n", p->cpu_type,
		p->cpu_speed, is_timer(p) ? "true" : "false");
	fprintf(f, "  \"class_axis\": %s%s%s,\n  \"classes\": [", p->axis >= 0 ? "\"" : "",
		p->axis >= 0 ? axes[p->axis] : "null", p->axis >= 0 ? "\"" : "");
	for (size_t c = 0; c < p->ncls; c++) {
		const struct rpt_class *k = &p->cls[c];

		fprintf(f, "%s\n    {\"id\": %zu, \"label\": ", c ? "," : "", c);
		txt_put_json(f, k->label);
		fputs(", \"event\": ", f);
		txt_put_json(f, k->event);
		fprintf(f, ", \"count\": %" PRIu64 ", \"unit_mask\": %u", k->count, k->um);
		if (k->cpu >= 0)
			fprintf(f, ", \"cpu\": %d", k->cpu);
		if (k->tid >= 0)
			fprintf(f, ", \"tid\": %d", k->tid);
		if (k->tgid >= 0)
			fprintf(f, ", \"tgid\": %d", k->tgid);
		fputc('}', f);
	}
	fputs("\n  ]", f);
}

static int json_report(FILE *f, const struct rpt_profile *p, const struct rpt_opts *o,
		       const struct rpt_rows *rows)
{
	const uint64_t *den = denominators(p, o);
	struct sum_ent *e;
	size_t n;
	bool first = true;

	if (build_ents(p, o, &e, &n))
		return -ENOMEM;
	out_json_head(f, p, "oprofile-ng-report");
	fputs(",\n  ", f);
	json_counts(f, "total", p->total, p->ncls);
	fputs(",\n  ", f);
	json_counts(f, "percent_base", den, p->ncls);
	fputs(",\n  \"applications\": [", f);
	for (size_t i = 0; i < n; i++) {
		if (!above_threshold(o, e[i].count, den, p->ncls))
			continue;
		fprintf(f, "%s\n    {\"name\": ", first ? "" : ",");
		first = false;
		txt_put_json(f, e[i].name);
		fputs(", ", f);
		json_counts(f, "samples", e[i].count, p->ncls);
		fputs(", ", f);
		json_pcts(f, e[i].count, den, p->ncls);
		fputs(",\n     \"images\": [", f);
		for (size_t j = 0; j < e[i].ng; j++) {
			const struct rpt_group *g = e[i].g[j];

			fprintf(f, "%s\n       {", j ? "," : "");
			json_image(f, g->img);
			fputs(", ", f);
			json_counts(f, "samples", g->total, p->ncls);
			fputs(", ", f);
			json_pcts(f, g->total, den, p->ncls);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputs("\n  ]", f);
	if (o->symbols || o->details) {
		first = true;
		fputs(",\n  \"symbols\": [", f);
		for (size_t i = 0; i < rows->n; i++) {
			const struct rpt_symrow *r = &rows->v[i];

			if (!row_visible(p, o, r))
				continue;
			fprintf(f, "%s\n    {\"name\": ", first ? "" : ",");
			first = false;
			if (r->sym)
				txt_put_json(f, r->sym->name);
			else
				fputs("null", f);
			fprintf(f, ", \"vma\": \"0x%" PRIx64 "\", ", row_vma(r));
			if (r->sym)
				fprintf(f, "\"size\": %" PRIu64 ", ", r->sym->end - r->sym->start);
			json_image(f, r->g->img);
			fputs(", \"app\": ", f);
			if (r->g->app)
				txt_put_json(f, r->g->app);
			else
				fputs("null", f);
			if (r->sym && r->sym->file) {
				fputs(", \"file\": ", f);
				txt_put_json(f, r->sym->file);
				fprintf(f, ", \"line\": %u", r->sym->line);
			}
			fputs(", ", f);
			json_counts(f, "samples", r->count, p->ncls);
			fputs(", ", f);
			json_pcts(f, r->count, den, p->ncls);
			if (o->details) {
				fputs(",\n     \"details\": [", f);
				for (size_t d = 0; d < r->ndet;) {
					uint64_t key = r->det[d].key;
					uint64_t cnt[64] = { 0 };
					const char *file;
					unsigned line;
					bool lead = d == 0;

					for (; d < r->ndet && r->det[d].key == key; d++)
						if (r->det[d].cls < 64)
							cnt[r->det[d].cls] += r->det[d].count;
					fprintf(f,
						"%s\n       {\"vma\": \"0x%" PRIx64
						"\", \"key\": \"0x%" PRIx64 "\", ",
						lead ? "" : ",", sym_key_vma(&r->g->img->syms, key),
						key);
					json_counts(f, "samples", cnt, p->ncls < 64 ? p->ncls : 64);
					if (o->debug_info &&
					    sym_key_line(&r->g->img->syms, key, &file, &line)) {
						fputs(", \"file\": ", f);
						txt_put_json(f, file);
						fprintf(f, ", \"line\": %u", line);
					}
					fputc('}', f);
				}
				fputc(']', f);
			}
			fputc('}', f);
		}
		fputs("\n  ]", f);
	}
	fprintf(f, ",\n  \"skipped_files\": %u\n}\n", p->nskipped);
	free_ents(e, n);
	return 0;
}

int out_report(FILE *f, struct rpt_profile *p, const struct rpt_opts *o, struct rpt_rows *rows)
{
	if (o->format == FMT_XML)
		return xml_report(f, p, o, rows);
	if (o->format == FMT_JSON)
		return json_report(f, p, o, rows);
	out_text_header(f, p);
	if (o->symbols || o->details) {
		text_symbols(f, p, o, rows);
		return 0;
	}
	return text_summary(f, p, o);
}
