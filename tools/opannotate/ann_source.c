/*
 * ann_source.c - opannotate --source: every sample of an ELF image is
 * credited to its source line (the innermost one: an inlined function's own
 * line), each symbol's total is noted at its first line and each inlined
 * function's total at the line that calls it; the files are printed in
 * OProfile's layout, on stdout or in a tree below --output-dir.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opannotate.h"

/* a symbol's or an inlined function's total, noted at the end of a line */
struct src_note {
	unsigned line;
	char *name;
	bool inlined;
	uint64_t *count;
};

struct src_file {
	char *name;      /* as the line table names it */
	uint64_t *lines; /* (nlines + 1) * ncls counts, line 0 unused */
	unsigned nlines;
	uint64_t *total;
	struct src_note *notes;
	size_t nnotes;
};

struct src_files {
	struct src_file **v;
	size_t n;
	struct src_file **slot; /* open addressing on the name */
	size_t nslot;
	size_t ncls;
};

static uint64_t src_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int src_rehash(struct src_files *fs)
{
	size_t nslot = fs->nslot ? fs->nslot * 2 : 64;
	struct src_file **slot = calloc(nslot, sizeof(*slot));

	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < fs->n; i++) {
		size_t h = src_hash(fs->v[i]->name) & (nslot - 1);

		while (slot[h])
			h = (h + 1) & (nslot - 1);
		slot[h] = fs->v[i];
	}
	free(fs->slot);
	fs->slot = slot;
	fs->nslot = nslot;
	return 0;
}

static struct src_file *src_file_get(struct src_files *fs, const char *name)
{
	struct src_file *sf, **nv;
	size_t h;

	if (fs->nslot) {
		for (h = src_hash(name) & (fs->nslot - 1); fs->slot[h];
		     h = (h + 1) & (fs->nslot - 1))
			if (!strcmp(fs->slot[h]->name, name))
				return fs->slot[h];
	}
	if ((fs->n + 1) * 2 > fs->nslot && src_rehash(fs))
		return NULL;
	nv = realloc(fs->v, (fs->n + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	fs->v = nv;
	sf = calloc(1, sizeof(*sf));
	if (!sf)
		return NULL;
	sf->name = strdup(name);
	sf->total = calloc(fs->ncls, sizeof(uint64_t));
	if (!sf->name || !sf->total) {
		free(sf->name);
		free(sf->total);
		free(sf);
		return NULL;
	}
	fs->v[fs->n++] = sf;
	for (h = src_hash(name) & (fs->nslot - 1); fs->slot[h]; h = (h + 1) & (fs->nslot - 1))
		;
	fs->slot[h] = sf;
	return sf;
}

static int src_add_line(struct src_files *fs, struct src_file *sf, unsigned line, uint32_t cls,
			uint64_t count)
{
	if (line > sf->nlines) {
		unsigned n = line + 64;
		uint64_t *nv = realloc(sf->lines, ((size_t)n + 1) * fs->ncls * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		memset(nv + ((size_t)sf->nlines + (sf->lines ? 1 : 0)) * fs->ncls, 0,
		       ((size_t)n + 1 - sf->nlines - (sf->lines ? 1 : 0)) * fs->ncls * sizeof(*nv));
		sf->lines = nv;
		sf->nlines = n;
	}
	sf->lines[(size_t)line * fs->ncls + cls] += count;
	sf->total[cls] += count;
	return 0;
}

static struct src_note *src_note_get(struct src_files *fs, struct src_file *sf, unsigned line,
				     const char *name, bool inlined)
{
	struct src_note *nv;

	for (size_t i = 0; i < sf->nnotes; i++)
		if (sf->notes[i].line == line && sf->notes[i].inlined == inlined &&
		    !strcmp(sf->notes[i].name, name))
			return &sf->notes[i];
	nv = realloc(sf->notes, (sf->nnotes + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	sf->notes = nv;
	nv = &sf->notes[sf->nnotes];
	nv->line = line;
	nv->inlined = inlined;
	nv->name = strdup(name);
	nv->count = calloc(fs->ncls, sizeof(uint64_t));
	if (!nv->name || !nv->count) {
		free(nv->name);
		free(nv->count);
		return NULL;
	}
	sf->nnotes++;
	return nv;
}

static void src_files_free(struct src_files *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		struct src_file *sf = fs->v[i];

		for (size_t j = 0; j < sf->nnotes; j++) {
			free(sf->notes[j].name);
			free(sf->notes[j].count);
		}
		free(sf->notes);
		free(sf->lines);
		free(sf->total);
		free(sf->name);
		free(sf);
	}
	free(fs->v);
	free(fs->slot);
}

/* the line of the outermost function at @key (past the inlined ones it may start with) */
static bool src_outer_line(struct opbfd *b, uint64_t key, const char **file, unsigned *line)
{
	const char *cf, *cfn;
	unsigned cl;

	if (!opbfd_key_func_line(b, key, file, line, NULL))
		return false;
	while (opbfd_inliner(b, &cf, &cl, &cfn)) {
		*file = cf;
		*line = cl;
	}
	return true;
}

/* Credit the samples of one symbol row to lines, its total and inlined calls to notes. */
static int src_collect_row(struct src_files *fs, const struct rpt_symrow *r)
{
	struct opbfd *b = opbfd_of(&r->g->img->syms);
	struct src_file *sf = NULL;
	struct src_note *inl = NULL;
	const char *file, *func;
	uint64_t last_key = 0;
	unsigned line = 0;
	bool have_last = false, found = false;

	if (!b || !r->sym)
		return 0;
	if (src_outer_line(b, r->sym->start, &file, &line)) {
		struct src_note *n;

		sf = src_file_get(fs, file);
		if (!sf || !(n = src_note_get(fs, sf, line, r->sym->name, false)))
			return -ENOMEM;
		for (size_t c = 0; c < fs->ncls; c++)
			n->count[c] += r->count[c];
	}
	for (size_t i = 0; i < r->ndet; i++) {
		const struct rpt_sample *s = &r->det[i];

		if (!have_last || s->key != last_key) {
			const char *cf, *cfn;
			unsigned cl;

			have_last = true;
			last_key = s->key;
			inl = NULL;
			found = opbfd_key_func_line(b, s->key, &file, &line, &func);
			if (!found)
				continue;
			sf = src_file_get(fs, file);
			if (!sf)
				return -ENOMEM;
			/* an inlined function: its total goes to the line calling it */
			if (func && opbfd_inliner(b, &cf, &cl, &cfn)) {
				struct src_file *cs = src_file_get(fs, cf);
				char *dem = opbfd_demangle(func, DEMANGLE_NORMAL);

				inl = cs ? src_note_get(fs, cs, cl, dem ? dem : func, true) : NULL;
				free(dem);
				if (!inl)
					return -ENOMEM;
			}
		}
		if (!found)
			continue;
		if (src_add_line(fs, sf, line, s->cls, s->count))
			return -ENOMEM;
		if (inl)
			inl->count[s->cls] += s->count;
	}
	return 0;
}

static int src_file_cmp(const void *x, const void *y)
{
	const struct src_file *a = *(struct src_file *const *)x, *b = *(struct src_file *const *)y;

	if (a->total[0] != b->total[0])
		return a->total[0] > b->total[0] ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void src_file_info(FILE *f, const struct ann *a, const struct src_file *sf)
{
	fputs("/* \n * Total samples for file : \"", f);
	txt_put(f, sf->name);
	fputs("\"\n * \n * ", f);
	ann_columns(f, a, sf->total);
	fputs("\n */\n\n", f);
}

static bool src_line_has(const struct ann *a, const struct src_file *sf, unsigned line)
{
	if (line > sf->nlines)
		return false;
	for (size_t c = 0; c < a->p.ncls; c++)
		if (sf->lines[(size_t)line * a->p.ncls + c])
			return true;
	return false;
}

static bool src_line_noted(const struct src_file *sf, unsigned line)
{
	for (size_t i = 0; i < sf->nnotes; i++)
		if (sf->notes[i].line == line)
			return true;
	return false;
}

static void src_print_line(FILE *f, const struct ann *a, const struct src_file *sf,
			   const struct ann_text *t, unsigned line)
{
	if (src_line_has(a, sf, line))
		ann_counts(f, a, &sf->lines[(size_t)line * a->p.ncls]);
	else
		ann_fill(f, a);
	if (line <= t->nlines)
		fputs(t->data + t->line_off[line - 1], f);
	else if (t->missing)
		fprintf(f, "<line %u>", line);
	else
		fprintf(f, "<line %u, past the end of the file>", line);
	/* the symbols first, then what is inlined there */
	for (int inl = 0; inl < 2; inl++) {
		for (size_t i = 0; i < sf->nnotes; i++) {
			const struct src_note *n = &sf->notes[i];

			if (n->line != line || n->inlined != inl)
				continue;
			ann_sym_note(f, a, n->name, n->inlined, n->count);
		}
	}
	fputc('\n', f);
}

static void src_print_file(FILE *f, const struct ann *a, const struct src_file *sf,
			   const struct ann_text *t, bool header)
{
	unsigned last = t->nlines;

	if (header)
		src_file_info(f, a, sf);
	if (header)
		fputc('\n', f); /* OProfile's line of the samples credited to line zero */
	for (unsigned l = 1; l <= sf->nlines; l++)
		if (l > last && (src_line_has(a, sf, l) || src_line_noted(sf, l)))
			last = l;
	for (size_t i = 0; i < sf->nnotes; i++)
		if (sf->notes[i].line > last)
			last = sf->notes[i].line;
	for (unsigned l = 1; l <= last; l++) {
		if (t->missing && !src_line_has(a, sf, l) && !src_line_noted(sf, l))
			continue;
		src_print_line(f, a, sf, t, l);
	}
	if (!header) {
		src_file_info(f, a, sf);
		fputc('\n', f);
	}
}

/* mkdir -p of the directories of @path (inside the output dir, already checked) */
static int src_mkdirs(char *path, size_t from)
{
	for (char *s = path + from + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(path, 0777) && errno != EEXIST) {
			int e = -errno;

			*s = '/';
			return e;
		}
		*s = '/';
	}
	return 0;
}

/* OProfile's layout: DIR + the absolute path of the source, never leaving DIR */
static int src_write_file(struct ann *a, const struct src_file *sf, const struct ann_text *t)
{
	struct stat st_src, st_out;
	char *out = NULL;
	FILE *f;
	int fd, ret = 0;

	if (strstr(t->path, "/../") || strstr(t->path, "/./") || !strncmp(t->path, "../", 3) ||
	    !strcmp(t->path, "..") ||
	    (strlen(t->path) >= 3 && !strcmp(t->path + strlen(t->path) - 3, "/..")) ||
	    (asprintf(&out, "%s%s%s", a->output_dir, t->path[0] == '/' ? "" : "/", t->path) < 0)) {
		if (out)
			free(out);
		else
			ann_warn(a,
				 "source file %s: not written below --output-dir (a name with "
				 "\"..\" or \".\" would leave it)",
				 t->path);
		return 0;
	}
	ret = src_mkdirs(out, strlen(a->output_dir));
	if (ret) {
		ann_error("--output-dir: cannot create the directories of %s: %s", out,
			  strerror(-ret));
		free(out);
		return ret;
	}
	if (!stat(t->path, &st_src) && !stat(out, &st_out) && st_src.st_dev == st_out.st_dev &&
	    st_src.st_ino == st_out.st_ino) {
		ann_warn(a, "%s: input and output files are the same file, not written", out);
		free(out);
		return 0;
	}
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		ret = -errno;
		ann_error("--output-dir: cannot write %s: %s", out, strerror(errno));
		if (fd >= 0)
			close(fd);
		free(out);
		return ret;
	}
	src_print_file(f, a, sf, t, false);
	ann_info(f, a);
	if (fclose(f)) {
		ret = -errno;
		ann_error("--output-dir: writing %s failed: %s", out, strerror(errno));
	}
	free(out);
	return ret;
}

int ann_source(FILE *f, struct ann *a)
{
	struct src_files fs = { .ncls = a->p.ncls };
	bool any_lines = false;
	int ret = 0;

	for (size_t i = 0; i < a->rows.n && !ret; i++)
		ret = src_collect_row(&fs, &a->rows.v[i]);
	if (ret) {
		ann_error("out of memory");
		goto out;
	}
	for (size_t i = 0; i < a->rows.n; i++) {
		const struct rpt_symrow *r = &a->rows.v[i];

		if (r->sym && opbfd_of(&r->g->img->syms))
			any_lines = true;
	}
	if (!fs.n) {
		ann_error("no debug information available for any binary selected%s (build with "
			  "-g, or install the debug files) and --assembly not requested",
			  any_lines ? "" : " (no sampled ELF image)");
		ret = -ENOENT;
		goto out;
	}
	if (fs.n > 1)
		qsort(fs.v, fs.n, sizeof(*fs.v), src_file_cmp);
	if (!a->output_dir)
		ann_info(f, a);
	for (size_t i = 0; i < fs.n && !ret; i++) {
		const struct src_file *sf = fs.v[i];
		struct ann_text *t;

		if (!ann_above_threshold(a, sf->total))
			continue;
		t = ann_text_get(a, sf->name);
		if (!t) {
			ann_error("out of memory");
			ret = -ENOMEM;
			break;
		}
		if (!ann_file_selected(a, t->path))
			continue;
		if (a->output_dir)
			ret = src_write_file(a, sf, t);
		else
			src_print_file(f, a, sf, t, true);
	}
out:
	src_files_free(&fs);
	return ret;
}
