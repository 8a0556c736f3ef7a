/*
 * ann_asm.c - opannotate --assembly: each sampled symbol disassembled in
 * process with libopcodes (no objdump child), every instruction with the
 * samples of its addresses, the symbol's total on its first line; with
 * --source the source line (and the inlined function) of each run of
 * instructions is interleaved. Kernel and JIT images have no code here:
 * their symbols are shown with per-address counts.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <bfd.h>
#include <dis-asm.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "opannotate.h"

/* a symbol shorter than this (an address of a stripped image) still gets one instruction */
#define ASM_MIN_FETCH 16

/* the text of one instruction, as libopcodes prints it in pieces */
struct asm_text {
	char *buf;
	size_t len, cap;
};

struct asm_ctx {
	struct ann *a;
	const struct rpt_symtab *t;
	struct opbfd *b;
	struct asm_text text;
	bool nomem;
};

static int asm_vappend(struct asm_ctx *x, const char *fmt, va_list ap)
{
	struct asm_text *t = &x->text;
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		return n;
	if (t->len + (size_t)n + 1 > t->cap) {
		size_t cap = (t->len + (size_t)n + 1) * 2;
		char *nb = realloc(t->buf, cap);

		if (!nb) {
			x->nomem = true;
			return -1;
		}
		t->buf = nb;
		t->cap = cap;
	}
	vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
	t->len += (size_t)n;
	return n;
}

static int asm_printf(void *stream, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = asm_vappend(stream, fmt, ap);
	va_end(ap);
	return n;
}

/* binutils 2.39+: the styled callback; the style (register, immediate...) is not shown */
static int asm_styled_printf(void *stream, enum disassembler_style style, const char *fmt, ...)
{
	va_list ap;
	int n;

	(void)style;
	va_start(ap, fmt);
	n = asm_vappend(stream, fmt, ap);
	va_end(ap);
	return n;
}

/* a branch or call target: "401136 <work_hot+0x12>", as objdump */
static void asm_print_address(bfd_vma addr, struct disassemble_info *di)
{
	struct asm_ctx *x = di->stream;
	const struct rpt_sym *s = NULL;
	uint64_t key;

	asm_printf(x, "%" PRIx64, (uint64_t)addr);
	if (opbfd_vma_key(x->b, addr, &key))
		s = sym_lookup(x->t, key);
	if (s && key != s->start)
		asm_printf(x, " <%s+0x%" PRIx64 ">", s->name, key - s->start);
	else if (s)
		asm_printf(x, " <%s>", s->name);
}

/* the counts of the samples at keys below @end, from *@i on (det is sorted by key) */
static bool asm_take(const struct rpt_symrow *r, size_t *i, uint64_t end, uint64_t *cnt, size_t ncls)
{
	bool any = false;

	memset(cnt, 0, ncls * sizeof(*cnt));
	while (*i < r->ndet && r->det[*i].key < end) {
		cnt[r->det[*i].cls] += r->det[*i].count;
		any = true;
		(*i)++;
	}
	return any;
}

static void asm_line_start(FILE *f, const struct ann *a, bool any, const uint64_t *cnt)
{
	if (any)
		ann_counts(f, a, cnt);
	else
		ann_fill(f, a);
}

/* --source with --assembly: the function (when it changes) and source line of @key */
static void asm_source_line(FILE *f, struct asm_ctx *x, uint64_t key, const char **last_file,
			    unsigned *last_line, const char **last_func)
{
	const char *file, *func = NULL, *cf, *cfn;
	unsigned line, cl;
	struct ann_text *t;

	if (!opbfd_key_func_line(x->b, key, &file, &line, &func))
		return;
	if (func && (!*last_func || strcmp(func, *last_func))) {
		char *dem = opbfd_demangle(func, x->a->o.demangle);

		ann_fill(f, x->a);
		txt_put(f, dem ? dem : func);
		fputs("():", f);
		free(dem);
		if (opbfd_inliner(x->b, &cf, &cl, &cfn)) {
			dem = cfn ? opbfd_demangle(cfn, x->a->o.demangle) : NULL;
			fputs(" inlined into ", f);
			txt_put(f, dem ? dem : cfn ? cfn : "?");
			fputs(" at ", f);
			txt_put(f, cf ? cf : "?");
			fprintf(f, ":%u", cl);
			free(dem);
		}
		fputc('\n', f);
		*last_func = func;
	}
	if (*last_file && *last_line == line && !strcmp(*last_file, file))
		return;
	*last_file = file;
	*last_line = line;
	t = ann_text_get(x->a, file);
	ann_fill(f, x->a);
	if (t && line <= t->nlines)
		fputs(t->data + t->line_off[line - 1], f);
	else
		fprintf(f, "%s:%u", file, line);
	fputc('\n', f);
}

/* the instructions of @r's symbol with their samples; false if its code is not readable */
static bool asm_disassemble(FILE *f, struct asm_ctx *x, disassembler_ftype dis,
			    struct disassemble_info *di, const struct rpt_symrow *r, uint64_t *cnt)
{
	const struct rpt_sym *s = r->sym;
	uint64_t size = s->end - s->start, vma0, pc;
	const char *last_file = NULL, *last_func = NULL;
	unsigned last_line = 0;
	unsigned char *code;
	size_t got, i = 0;

	if (opbfd_code(x->b, s->start, size < ASM_MIN_FETCH ? ASM_MIN_FETCH : size, &code, &got,
		       &vma0) ||
	    !got) {
		free(code);
		return false;
	}
	if (size > got)
		size = got;
	di->buffer = code;
	di->buffer_vma = vma0;
	di->buffer_length = got;
	for (pc = vma0; pc < vma0 + size;) {
		uint64_t key = s->start + (pc - vma0);
		int n;
		bool any;

		if (x->a->source)
			asm_source_line(f, x, key, &last_file, &last_line, &last_func);
		x->text.len = 0;
		if (x->text.buf)
			x->text.buf[0] = 0;
		n = dis(pc, di);
		if (n <= 0 || x->nomem) {
			x->text.len = 0;
			n = 1;
			asm_printf(x, ".byte 0x%02x", code[pc - vma0]);
		}
		any = asm_take(r, &i, key + (uint64_t)n, cnt, x->a->p.ncls);
		asm_line_start(f, x->a, any, cnt);
		fprintf(f, "%8" PRIx64 ":\t", pc);
		txt_put(f, x->text.buf ? x->text.buf : "");
		fputc('\n', f);
		pc += (uint64_t)n;
	}
	free(code);
	/* samples past the code that could be read (a symbol bounded past its section) */
	while (i < r->ndet) {
		uint64_t key = r->det[i].key;

		asm_take(r, &i, key + 1, cnt, x->a->p.ncls);
		ann_counts(f, x->a, cnt);
		fprintf(f, "%8" PRIx64 ":\t(no code)\n", sym_key_vma(x->t, key));
	}
	return true;
}

/* per-address counts of a symbol without code (kernel, JIT, unreadable) */
static void asm_addresses(FILE *f, const struct ann *a, const struct rpt_symrow *r, uint64_t *cnt)
{
	const struct rpt_symtab *t = &r->g->img->syms;
	size_t i = 0;

	while (i < r->ndet) {
		uint64_t key = r->det[i].key;

		asm_take(r, &i, key + 1, cnt, a->p.ncls);
		ann_counts(f, a, cnt);
		fprintf(f, "%16" PRIx64 ":\n", sym_key_vma(t, key));
	}
}

static void asm_image_header(FILE *f, const struct ann *a, const struct rpt_image *img,
			     struct opbfd *b)
{
	ann_fill(f, a);
	fputs("\n", f);
	ann_fill(f, a);
	txt_put(f, img->display);
	if (b)
		fprintf(f, ":     file format %s\n", bfd_get_target(opbfd_bfd(b)));
	else if (img->is_kernel)
		fputs(":     no code (kernel image: symbols from the session's kallsyms "
		      "snapshot, per-address samples)\n",
		      f);
	else if (img->kind == OP_IMAGE_ANON)
		fputs(":     no code (anonymous memory: per-address samples)\n", f);
	else
		fputs(":     no code (binary not readable: per-address samples)\n", f);
	ann_fill(f, a);
	fputs("\n", f);
}

static int asm_image(FILE *f, struct ann *a, const struct rpt_image *img, uint64_t *cnt)
{
	struct asm_ctx x = { .a = a, .t = &img->syms, .b = opbfd_of(&img->syms) };
	struct disassemble_info di;
	disassembler_ftype dis = NULL;
	bool header = false;

	if (x.b) {
		bfd *abfd = opbfd_bfd(x.b);

		init_disassemble_info(&di, &x, asm_printf, asm_styled_printf);
		di.arch = bfd_get_arch(abfd);
		di.mach = bfd_get_mach(abfd);
		di.endian = bfd_big_endian(abfd) ? BFD_ENDIAN_BIG : BFD_ENDIAN_LITTLE;
		di.print_address_func = asm_print_address;
		disassemble_init_for_target(&di);
		dis = disassembler(di.arch, bfd_big_endian(abfd), di.mach, abfd);
		if (!dis)
			ann_warn(a,
				 "%s: libopcodes has no disassembler for its architecture; "
				 "per-address samples only",
				 img->display);
	}
	for (size_t ri = 0; ri < a->rows.n; ri++) {
		const struct rpt_symrow *r = &a->rows.v[ri];
		const char *name = r->sym ? r->sym->name : "(no symbols)";
		uint64_t vma;

		if (r->g->img != img || !ann_above_threshold(a, r->count))
			continue;
		if (!header) {
			asm_image_header(f, a, img, dis ? x.b : NULL);
			header = true;
		}
		vma = r->sym ? r->sym->vma : r->ndet ? sym_key_vma(&img->syms, r->det[0].key) : 0;
		fprintf(f, "%016" PRIx64 " <", vma);
		txt_put(f, name);
		fputs(">:", f);
		ann_sym_note(f, a, name, false, r->count);
		fputc('\n', f);
		if (!(dis && r->sym && asm_disassemble(f, &x, dis, &di, r, cnt)))
			asm_addresses(f, a, r, cnt);
	}
	if (x.b)
		disassemble_free_target(&di);
	free(x.text.buf);
	if (x.nomem) {
		ann_error("out of memory");
		return -ENOMEM;
	}
	return 0;
}

int ann_asm(FILE *f, struct ann *a)
{
	const struct rpt_image **order = calloc(a->rows.n + 1, sizeof(*order));
	uint64_t *cnt = calloc(a->p.ncls ? a->p.ncls : 1, sizeof(*cnt));
	size_t norder = 0;
	int ret = 0;

	if (!order || !cnt) {
		ann_error("out of memory");
		ret = -ENOMEM;
		goto out;
	}
	/* images in the order of their hottest symbol, each image's symbols by samples */
	for (size_t i = 0; i < a->rows.n; i++) {
		const struct rpt_image *img = a->rows.v[i].g->img;
		size_t j;

		if (!ann_above_threshold(a, a->rows.v[i].count))
			continue;
		for (j = 0; j < norder && order[j] != img; j++)
			;
		if (j == norder)
			order[norder++] = img;
	}
	if (!norder) {
		ann_error("the selected images hold none of the selected symbols%s",
			  a->o.threshold > 0 ? " above --threshold" : "");
		ret = -ENOENT;
		goto out;
	}
	ann_info(f, a);
	for (size_t j = 0; j < norder && !ret; j++)
		ret = asm_image(f, a, order[j], cnt);
out:
	free(order);
	free(cnt);
	return ret;
}
