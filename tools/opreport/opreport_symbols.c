/*
 * opreport_symbols.c - symbol tables of the inverted profile (each binary
 * loaded once, from libbfd, the kallsyms snapshot or a perf map, into the
 * container of opreport_symtab.c) and the attribution of every group's
 * samples to symbol rows.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_session_layout.h"
#include "opreport.h"

static bool exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

/* only regular files are opened: a FIFO or device at a sampled path would block or lie */
static bool regular(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* any symbol but the synthetic PLT ones, which even a stripped binary has */
static bool has_own_symbols(const struct rpt_symtab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		const char *at = strstr(t->v[i].name, "@plt");

		if (!at || at[4])
			return true;
	}
	return false;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/*
 * A sample of an ELF binary that no symbol covers gets a symbol of its own,
 * "IMAGE+0xOFFSET" (the key, a file offset), as perf shows unresolved
 * addresses; kept in @t's owned allocations.
 */
static const struct rpt_sym *addr_sym(struct rpt_symtab *t, const char *path, uint64_t key)
{
	struct rpt_sym *sym = calloc(1, sizeof(*sym));
	char name[PATH_MAX + 32];

	if (!sym)
		return NULL;
	if (!symtab_keep(t, sym)) {
		free(sym);
		return NULL;
	}
	snprintf(name, sizeof(name), "%s+0x%" PRIx64, base_name(path), key);
	sym->name = symtab_strdup(t, name);
	if (!sym->name)
		return NULL;
	sym->start = key;
	sym->end = key + 1;
	sym->vma = sym_key_vma(t, key);
	return sym;
}

/*
 * --vmlinux: the kernel image's symbols (and code, lines) from the file
 * instead of the kallsyms snapshot already in @img, when they agree with
 * it, at the same addresses or all moved by one slide (KASLR); else a
 * warning and the snapshot stays.
 */
static void load_vmlinux(struct rpt_profile *p, const struct rpt_opts *o, struct rpt_image *img)
{
	struct rpt_symtab vm = { 0 };
	char err[1024] = "";
	uint64_t slide = 0;
	int ret = 0;

	if (img->has_bid) {
		/*
		 * the running kernel's build ID (stats/buildids) refuses another build
		 * before its symbols are read; a file without one (an image linked by
		 * hand) is left to the symbols' agreement with the kallsyms snapshot
		 */
		struct op_elf_ids ids;
		char want[OP_BUILDID_HEX_MAX], have[OP_BUILDID_HEX_MAX];
		int fd = open(o->vmlinux, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

		if (fd >= 0 && !op_elf_ids_from_fd(fd, &ids) && ids.id_len &&
		    (ids.id_len != img->bid.id_len || memcmp(ids.id, img->bid.id, ids.id_len))) {
			snprintf(err, sizeof(err),
				 "its build ID is %s, the profiled kernel's was %s (stats/" OP_BUILDID_INDEX
				 ")",
				 op_buildid_hex(ids.id, ids.id_len, have, sizeof(have)),
				 op_buildid_hex(img->bid.id, img->bid.id_len, want, sizeof(want)));
			ret = -EINVAL;
		}
		if (fd >= 0)
			close(fd);
	}
	/*
	 * KASLR moved the running kernel by a slide from its link addresses: the
	 * image is loaded moved by the distance of their _text, and the check
	 * below still wants every other common symbol moved by the same slide.
	 */
	if (!ret)
		opbfd_kernel_slide(o->vmlinux, img->syms.vma_bias, &slide);
	if (!ret)
		ret = opbfd_load_kernel(&vm, o->vmlinux, img->syms.vma_bias, slide, o->demangle,
					o->debug_info, err, sizeof(err));
	if (!ret)
		ret = ksym_check_vmlinux(&img->syms, &vm, o->vmlinux, err, sizeof(err));
	if (ret == -EINVAL && slide && err[0]) {
		size_t len = strlen(err);

		snprintf(err + len, sizeof(err) - len,
			 " (its addresses moved by 0x%" PRIx64 ", the KASLR slide of _text)", slide);
	}
	if (ret) {
		symtab_free(&vm);
		if (!strlist_has(&p->warned, o->vmlinux)) {
			strlist_add(&p->warned, o->vmlinux);
			txt_warn("--vmlinux=%s does not match the profiled kernel: %s; the kernel's "
				 "symbols come from the session's kallsyms snapshot instead",
				 o->vmlinux, err[0] ? err : strerror(-ret));
			p->nwarnings++;
		}
		return;
	}
	symtab_free(&img->syms);
	img->syms = vm;
}

/*
 * A binary that is gone or another build than the one profiled: the debug
 * file with the recorded build ID stands for it (.build-id/ below the debug
 * directory, then debuginfod), else no symbols.
 */
static int load_by_build_id(struct rpt_profile *p, const struct rpt_opts *o, struct rpt_image *img,
			    char *err, size_t err_len)
{
	char hex[OP_BUILDID_HEX_MAX], *dpath = opbfd_debug_by_id(img->bid.id, img->bid.id_len);
	int ret;

	(void)p;
	if (!dpath) {
		op_buildid_hex(img->bid.id, img->bid.id_len, hex, sizeof(hex));
		if (img->bid_mismatch)
			err[0] = 0; /* get_image said it */
		else
			snprintf(err, err_len,
				 "binary %s not found, and no debug file with its build ID %s "
				 "(.build-id/ below the debug directory, $DEBUGINFOD_URLS)",
				 img->file, hex);
		return -ENOENT;
	}
	ret = opbfd_load_debug(&img->syms, dpath, &img->bid, o->demangle, o->debug_info, err,
			       err_len);
	free(dpath);
	return ret;
}

static void load_image(struct rpt_profile *p, const struct rpt_opts *o, struct rpt_image *img)
{
	char err[1024] = "";
	int ret = -ENOENT;
	char *kallsyms = NULL, *map = NULL;

	img->syms_loaded = true;
	if (img->is_kernel) {
		const char *name = strrchr(img->path, '/');
		const char *mod = NULL;

		name = name ? name + 1 : img->path;
		if (img->kind == OP_IMAGE_KERNEL && strcmp(name, "vmlinux") &&
		    strcmp(name, "no-vmlinux") && strcmp(name, "kallsyms"))
			mod = name;
		/*
		 * Kernel images given by path ({root}/boot/vmlinux, /proc/kallsyms)
		 * use the session's snapshot too: the keys are pc - _text either way.
		 */
		int fd = rs_open_session_file(p, OP_SESSION_KALLSYMS_PATH, O_RDONLY);

		if (asprintf(&kallsyms, "%s/" OP_SESSION_KALLSYMS_PATH, p->samples_dir) < 0) {
			kallsyms = NULL;
			if (fd >= 0)
				close(fd);
			goto out;
		}
		if (fd < 0)
			snprintf(err, sizeof(err),
				 "no kernel symbol snapshot: %s is missing or not a "
				 "regular file",
				 kallsyms);
		else
			ret = ksym_load_kernel(&img->syms, fd, kallsyms, mod,
					       mod ? rs_open_session_file(p, OP_SESSION_MODULES_PATH,
									  O_RDONLY) :
						     -1,
					       err, sizeof(err));
		/* modules keep the snapshot's symbols */
		if (!ret && !mod && o->vmlinux)
			load_vmlinux(p, o, img);
	} else if (img->kind == OP_IMAGE_ANON) {
		/* without a map, addresses are still shown as anon_start + key */
		img->syms.vma_bias = img->hdr.anon_start ? img->hdr.anon_start : img->start;
		/* JIT symbol maps (perf's convention); the directory can be moved for tests */
		const char *dir = getenv("OPREPORT_PERF_MAP_DIR");

		int fd;

		if (asprintf(&map, "%s/perf-%d.map", dir && *dir ? dir : "/tmp", img->tgid) < 0) {
			map = NULL;
			goto out;
		}
		fd = ksym_open_perfmap(map, err, sizeof(err));
		if (fd < 0) {
			/* anonymous memory without a JIT map has no symbols, quietly */
			img->no_syms = true;
			if (fd != -ENOENT && !strlist_has(&p->warned, map)) {
				strlist_add(&p->warned, map);
				txt_warn("perf map %s: %s: not used, the anonymous memory of tgid %d "
					 "is reported without its symbols",
					 map, err, img->tgid);
				p->nwarnings++;
			}
			ret = 0;
			goto out;
		}
		ret = ksym_load_perfmap(&img->syms, fd, map,
					img->hdr.anon_start ? img->hdr.anon_start : img->start, err,
					sizeof(err));
	} else if (img->path[0] != '/') {
		/* RPT_UNKNOWN_IMAGE: a refused name, already warned about */
		img->no_syms = true;
		goto out;
	} else if (img->has_bid && (img->bid_mismatch || !exists(img->file))) {
		ret = load_by_build_id(p, o, img, err, sizeof(err));
	} else if (!exists(img->file)) {
		snprintf(err, sizeof(err),
			 "binary %s not found (if it moved, give --image-path=DIR "
			 "or --root=DIR)",
			 img->file);
	} else if (!regular(img->file)) {
		snprintf(err, sizeof(err), "%s is not a regular file", img->file);
	} else {
		ret = opbfd_load(&img->syms, img->file, o->demangle, o->debug_info, err,
				 sizeof(err));
		if (!ret && !has_own_symbols(&img->syms) && !strlist_has(&p->warned, img->path)) {
			/* a stripped binary: its samples are shown per address (rsym_build) */
			strlist_add(&p->warned, img->path);
			txt_warn("no symbols for %s: no symbols (stripped?); its samples are reported "
				 "per address as %s+0xOFFSET (file offset)",
				 img->path, base_name(img->path));
			p->nwarnings++;
		}
	}
out:
	if (ret) {
		img->no_syms = true;
		if (ret != -ENOENT || err[0]) {
			txt_warn("no symbols for %s: %s; its samples are reported as \"(no symbols)\"",
				 img->path, err[0] ? err : strerror(-ret));
			p->nwarnings++;
		}
	}
	free(kallsyms);
	free(map);
}

void rsym_load_image(struct rpt_profile *p, const struct rpt_opts *o, struct rpt_image *img)
{
	if (!img->syms_loaded)
		load_image(p, o, img);
}

static int sample_cmp(const void *a, const void *b)
{
	const struct rpt_sample *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (int)x->cls - (int)y->cls;
}

/* Sort a group's samples by key and fold duplicate (key, class) records. */
static void fold_samples(struct rpt_group *g)
{
	size_t o = 0;

	if (g->n)
		qsort(g->s, g->n, sizeof(*g->s), sample_cmp);
	for (size_t i = 0; i < g->n; i++) {
		if (o && g->s[o - 1].key == g->s[i].key && g->s[o - 1].cls == g->s[i].cls) {
			g->s[o - 1].count += g->s[i].count;
			continue;
		}
		g->s[o++] = g->s[i];
	}
	g->n = o;
}

static bool sym_selected(const struct rpt_opts *o, const char *name)
{
	if (o->include_syms.n && !strlist_has(&o->include_syms, name))
		return false;
	return !strlist_has(&o->exclude_syms, name);
}

static struct rpt_symrow *new_row(struct rpt_rows *rows, const struct rpt_group *g,
				  const struct rpt_sym *sym)
{
	struct rpt_symrow *r;

	if (rows->n % 64 == 0) {
		struct rpt_symrow *nv = realloc(rows->v, (rows->n + 64) * sizeof(*nv));

		if (!nv)
			return NULL;
		rows->v = nv;
	}
	r = &rows->v[rows->n];
	memset(r, 0, sizeof(*r));
	r->g = g;
	r->sym = sym;
	r->count = calloc(rows->ncls, sizeof(uint64_t));
	if (!r->count)
		return NULL;
	rows->n++;
	return r;
}

static int row_detail(struct rpt_symrow *r, const struct rpt_sample *s)
{
	if (r->ndet % 64 == 0) {
		struct rpt_sample *nv = realloc(r->det, (r->ndet + 64) * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		r->det = nv;
	}
	r->det[r->ndet++] = *s;
	return 0;
}

int rsym_build(struct rpt_profile *p, const struct rpt_opts *o, struct rpt_rows *rows)
{
	rows->ncls = p->ncls;
	for (size_t gi = 0; gi < p->ngroups; gi++) {
		struct rpt_group *g = p->groups[gi];
		struct rpt_image *img = g->img;
		const struct rpt_sym *last = NULL;
		bool have_last = false;
		/* indexes, not pointers: rows->v moves when it grows */
		long row = -1, nosym = -1;

		fold_samples(g);
		if (!img->syms_loaded)
			load_image(p, o, img);
		for (size_t i = 0; i < g->n; i++) {
			const struct rpt_sample *s = &g->s[i];
			const struct rpt_sym *sym =
				img->no_syms ? NULL : sym_lookup(&img->syms, s->key);

			if (!sym && img->syms.src) {
				/* samples are sorted by key: one address row per key */
				if (have_last && last && last->start == s->key &&
				    last->end == s->key + 1)
					sym = last;
				else if (!(sym = addr_sym(&img->syms, img->path, s->key)))
					return -ENOMEM;
			}
			if (!have_last || sym != last) {
				/*
				 * Samples are sorted by key and a symbol covers one key
				 * range, so a symbol's samples are contiguous; only the
				 * symbol-less ones come back.
				 */
				have_last = true;
				last = sym;
				row = sym ? -1 : nosym;
				if (row < 0 && sym_selected(o, sym ? sym->name : "(no symbols)")) {
					if (!new_row(rows, g, sym))
						return -ENOMEM;
					row = (long)rows->n - 1;
					if (!sym)
						nosym = row;
				}
			}
			if (row < 0)
				continue;
			rows->v[row].count[s->cls] += s->count;
			if (o->details && row_detail(&rows->v[row], s))
				return -ENOMEM;
		}
	}
	return 0;
}

static const char *row_name(const struct rpt_symrow *r)
{
	return r->sym ? r->sym->name : "(no symbols)";
}

static uint64_t row_vma(const struct rpt_symrow *r)
{
	if (r->sym)
		return r->sym->vma;
	return r->ndet ? sym_key_vma(&r->g->img->syms, r->det[0].key) : 0;
}

/* the name an image or app is shown (and so sorted) under */
static const char *shown_name(const char *display, bool long_names)
{
	const char *b;

	if (!display)
		return "";
	if (long_names || strstr(display, " (tgid:"))
		return display;
	b = strrchr(display, '/');
	return b && b[1] ? b + 1 : display;
}

static int row_cmp(const void *a, const void *b, void *ctx)
{
	const struct rpt_opts *sort_opts = ctx;
	const struct rpt_symrow *x = a, *y = b;
	unsigned nkeys = sort_opts->nsort_keys ? sort_opts->nsort_keys : 1;
	int r = 0;

	for (unsigned k = 0; k < nkeys && !r; k++) {
		switch (sort_opts->nsort_keys ? sort_opts->sort_keys[k] : sort_opts->sort) {
		case SORT_SAMPLE:
			if (x->count[0] != y->count[0])
				r = x->count[0] > y->count[0] ? -1 : 1;
			break;
		case SORT_SYMBOL:
			r = strcmp(row_name(x), row_name(y));
			break;
		case SORT_IMAGE:
			r = strcmp(shown_name(x->g->img->display, sort_opts->long_filenames),
				   shown_name(y->g->img->display, sort_opts->long_filenames));
			break;
		case SORT_APP:
			r = strcmp(shown_name(x->g->app, sort_opts->long_filenames),
				   shown_name(y->g->app, sort_opts->long_filenames));
			break;
		case SORT_VMA:
			if (row_vma(x) != row_vma(y))
				r = row_vma(x) < row_vma(y) ? -1 : 1;
			break;
		}
	}
	if (sort_opts->reverse_sort)
		r = -r;
	if (r)
		return r;
	/* ties: by samples, then image, then name (stable output) */
	if (x->count[0] != y->count[0])
		return x->count[0] > y->count[0] ? -1 : 1;
	r = strcmp(x->g->img->display, y->g->img->display);
	if (r)
		return r;
	r = strcmp(x->g->app ? x->g->app : "", y->g->app ? y->g->app : "");
	if (r)
		return r;
	r = strcmp(row_name(x), row_name(y));
	if (r)
		return r;
	return row_vma(x) < row_vma(y) ? -1 : row_vma(x) > row_vma(y);
}

void rsym_sort(struct rpt_rows *rows, const struct rpt_opts *o)
{
	if (!rows->n)
		return;
	qsort_r(rows->v, rows->n, sizeof(*rows->v), row_cmp, (void *)o);
}

void rsym_free(struct rpt_rows *rows)
{
	for (size_t i = 0; i < rows->n; i++) {
		free(rows->v[i].count);
		free(rows->v[i].det);
	}
	free(rows->v);
	memset(rows, 0, sizeof(*rows));
}
