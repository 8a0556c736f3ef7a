/*
 * opreport_symtab.c - the symbol-table container of opreport: the sorted
 * symbols of one image and the allocations they own, lookups by key. The
 * loaders (op_bfd.c, opreport_ksyms.c) fill it; it calls none of them.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "opreport.h"

void *symtab_keep(struct rpt_symtab *t, void *mem)
{
	if (t->nstrs == t->capstrs) {
		size_t ncap = t->capstrs ? t->capstrs * 2 : 256;
		char **nv = realloc(t->strs, ncap * sizeof(*nv));

		if (!nv)
			return NULL;
		t->strs = nv;
		t->capstrs = ncap;
	}
	t->strs[t->nstrs++] = mem;
	return mem;
}

const char *symtab_strdup(struct rpt_symtab *t, const char *s)
{
	char *d = strdup(s);

	if (d && !symtab_keep(t, d)) {
		free(d);
		return NULL;
	}
	return d;
}

void symtab_free(struct rpt_symtab *t)
{
	for (size_t i = 0; i < t->nstrs; i++)
		free(t->strs[i]);
	free(t->strs);
	free(t->v);
	if (t->src)
		t->src_ops->close(t->src);
	memset(t, 0, sizeof(*t));
}

static int symtab_cmp(const void *a, const void *b)
{
	const struct rpt_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return strcmp(x->name, y->name);
}

void symtab_finish(struct rpt_symtab *t)
{
	size_t o = 0;

	if (t->n) /* an empty table has no array: qsort's argument must not be NULL */
		qsort(t->v, t->n, sizeof(*t->v), symtab_cmp);
	for (size_t i = 0; i < t->n; i++) {
		if (o && t->v[o - 1].start == t->v[i].start)
			continue;
		t->v[o++] = t->v[i];
	}
	t->n = o;
	for (size_t i = 0; i < t->n; i++) {
		uint64_t next = i + 1 < t->n ? t->v[i + 1].start : t->v[i].start + 0x1000;

		if (!t->v[i].end || t->v[i].end > next)
			t->v[i].end = next;
	}
}

const struct rpt_sym *sym_lookup(const struct rpt_symtab *t, uint64_t key)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].start <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (key >= t->v[lo - 1].end)
		return NULL;
	return &t->v[lo - 1];
}

uint64_t sym_key_vma(const struct rpt_symtab *t, uint64_t key)
{
	if (t->src)
		return t->src_ops->key_vma(t->src, key);
	return key + t->vma_bias;
}

bool sym_key_line(const struct rpt_symtab *t, uint64_t key, const char **file, unsigned *line)
{
	return t->src && t->src_ops->key_line(t->src, key, file, line);
}

void symtab_set_src(struct rpt_symtab *t, void *src, const struct rpt_symsrc_ops *ops)
{
	t->src = src;
	t->src_ops = ops;
}
