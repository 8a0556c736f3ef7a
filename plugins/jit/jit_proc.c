/*
 * jit_proc.c - the JIT model of one process: functions get a place in the
 * process's image once (their key never changes), address ranges say where
 * a function was and when (load .. move/unload), and the lookup resolves
 * (pc, sample time) against them, so that samples taken before and after
 * a move land in the same function. Processes are found by pid in an open
 * addressing table; nothing here allocates in the lookup.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jit.h"

/* ------------------------------------------------------------------ */
/* u64 -> u32 map                                                      */
/* ------------------------------------------------------------------ */

static uint32_t jmap_slot(uint64_t key, uint32_t cap)
{
	key *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(key >> 32) & (cap - 1);
}

static int jmap_put(struct jit_map *m, uint64_t key, uint32_t val)
{
	uint32_t i;

	if (key == UINT64_MAX)
		return -EINVAL;
	if ((m->nr + 1) * 2 > m->cap) {
		struct jit_map n = { .cap = m->cap ? m->cap * 2 : 64 };

		n.keys = calloc(n.cap, sizeof(*n.keys));
		n.vals = calloc(n.cap, sizeof(*n.vals));
		if (!n.keys || !n.vals) {
			free(n.keys);
			free(n.vals);
			return -ENOMEM;
		}
		for (i = 0; i < m->cap; i++)
			if (m->keys[i])
				jmap_put(&n, m->keys[i] - 1, m->vals[i]);
		free(m->keys);
		free(m->vals);
		*m = n;
	}
	for (i = jmap_slot(key, m->cap); m->keys[i] && m->keys[i] != key + 1;
	     i = (i + 1) & (m->cap - 1))
		;
	if (!m->keys[i])
		m->nr++;
	m->keys[i] = key + 1;
	m->vals[i] = val;
	return 0;
}

static bool jmap_get(const struct jit_map *m, uint64_t key, uint32_t *val)
{
	uint32_t i;

	if (!m->cap || key == UINT64_MAX)
		return false;
	for (i = jmap_slot(key, m->cap); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key + 1) {
			*val = m->vals[i];
			return true;
		}
	return false;
}

static void jmap_free(struct jit_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ------------------------------------------------------------------ */
/* processes by pid                                                    */
/* ------------------------------------------------------------------ */

static uint32_t jit_pid_slot(uint32_t pid, uint32_t cap)
{
	return (pid * 2654435761u) & (cap - 1);
}

struct jit_proc *jit_proc_find(const struct jit_state *st, uint32_t pid)
{
	uint32_t i;

	if (!st->cap_procs)
		return NULL;
	for (i = jit_pid_slot(pid, st->cap_procs); st->procs[i]; i = (i + 1) & (st->cap_procs - 1))
		if (st->procs[i]->pid == pid)
			return st->procs[i];
	return NULL;
}

static int jit_proc_insert(struct jit_state *st, struct jit_proc *p)
{
	uint32_t i;

	if ((st->nr_procs + 1) * 2 > st->cap_procs) {
		uint32_t cap = st->cap_procs ? st->cap_procs * 2 : 256, k;
		struct jit_proc **n = calloc(cap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (k = 0; k < st->cap_procs; k++) {
			if (!st->procs[k])
				continue;
			for (i = jit_pid_slot(st->procs[k]->pid, cap); n[i]; i = (i + 1) & (cap - 1))
				;
			n[i] = st->procs[k];
		}
		free(st->procs);
		st->procs = n;
		st->cap_procs = cap;
	}
	for (i = jit_pid_slot(p->pid, st->cap_procs); st->procs[i];
	     i = (i + 1) & (st->cap_procs - 1))
		;
	st->procs[i] = p;
	st->nr_procs++;
	return 0;
}

/* linear probing: the entries after a removed one move back into its hole */
static void jit_proc_remove(struct jit_state *st, struct jit_proc *p)
{
	uint32_t cap = st->cap_procs, i, j, k;

	for (i = jit_pid_slot(p->pid, cap); st->procs[i] && st->procs[i] != p;
	     i = (i + 1) & (cap - 1))
		;
	if (!st->procs[i])
		return;
	st->procs[i] = NULL;
	st->nr_procs--;
	for (j = (i + 1) & (cap - 1); st->procs[j]; j = (j + 1) & (cap - 1)) {
		k = jit_pid_slot(st->procs[j]->pid, cap);
		/* move it back unless its home slot lies cyclically in (i, j] */
		bool home_between = i <= j ? (i < k && k <= j) : (i < k || k <= j);

		if (!home_between) {
			st->procs[i] = st->procs[j];
			st->procs[j] = NULL;
			i = j;
		}
	}
}

struct jit_proc *jit_proc_get(struct jit_state *st, uint32_t pid)
{
	struct jit_proc *p = jit_proc_find(st, pid);
	char path[64];
	struct stat sb;

	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->st = st;
	p->pid = pid;
	p->dump.fd = p->map.fd = -1;
	p->dump.kind = JIT_SRC_DUMP;
	p->map.kind = JIT_SRC_MAP;
	/* whose files the process may name: its owner's (and root's); unknown: root's */
	snprintf(path, sizeof(path), "%s/%u", st->proc_root ? st->proc_root : "/proc", pid);
	p->uid = stat(path, &sb) == 0 ? sb.st_uid : 0;
	if (jit_proc_insert(st, p)) {
		free(p);
		return NULL;
	}
	st->v[JS_PROCS]++;
	return p;
}

static void jit_proc_free(struct jit_proc *p)
{
	uint32_t i;

	for (i = 0; i < p->nr_fns; i++) {
		free(p->fns[i].name);
		free(p->fns[i].code);
		free(p->fns[i].lines);
	}
	for (i = 0; i < p->nr_files; i++)
		free(p->files[i]);
	for (i = 0; i < p->nr_pending; i++)
		free(p->pending[i].lines);
	free(p->pending);
	free(p->files);
	free(p->fns);
	free(p->ranges);
	free(p->sorted);
	jmap_free(&p->code_index);
	jmap_free(&p->start);
	free(p);
}

void jit_proc_drop(struct jit_state *st, struct jit_proc *p)
{
	if (!p->exited)
		jit_src_refresh(p, true);
	jit_image_write(p);
	jit_src_close(p, &p->dump, true);
	jit_src_close(p, &p->map, true);
	jit_proc_remove(st, p);
	jit_proc_free(p);
}

void jit_proc_free_all(struct jit_state *st)
{
	uint32_t i;

	for (i = 0; i < st->cap_procs; i++)
		if (st->procs[i]) {
			jit_src_close(st->procs[i], &st->procs[i]->dump, true);
			jit_src_close(st->procs[i], &st->procs[i]->map, true);
			jit_proc_free(st->procs[i]);
		}
	free(st->procs);
	st->procs = NULL;
	st->cap_procs = st->nr_procs = 0;
}

/* ------------------------------------------------------------------ */
/* functions and ranges                                                */
/* ------------------------------------------------------------------ */

static int jit_grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
	uint32_t n = *cap ? *cap : 16;
	void *np;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	np = realloc(*p, (size_t)n * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = n;
	return 0;
}

static int jit_add_range(struct jit_proc *p, uint64_t start, uint64_t size, uint64_t t, uint32_t fn)
{
	struct jit_range *r;
	int rc;

	rc = jit_grow((void **)&p->ranges, &p->cap_ranges, p->nr_ranges + 1, sizeof(*p->ranges));
	if (rc)
		return rc;
	r = &p->ranges[p->nr_ranges];
	r->start = start;
	r->end = start + size;
	r->from = t;
	r->to = JIT_NO_END;
	r->key = OP_JITELF_TEXT_OFFSET + p->fns[fn].off;
	r->fn = fn;
	r->moved = false;
	p->fns[fn].cur = p->nr_ranges;
	/* a later load at the same address is the one unload/debug info mean */
	jmap_put(&p->start, start, p->nr_ranges);
	p->nr_ranges++;
	return 0;
}

static void jit_attach_lines(struct jit_proc *p, struct jit_fn *f, struct op_jitelf_line *lines,
			     uint32_t n)
{
	uint32_t i, k;

	/* entries beyond the function are dropped: they would name other code */
	for (i = k = 0; i < n; i++) {
		if (lines[i].off >= f->size) {
			p->st->v[JS_BAD_LINES]++;
			continue;
		}
		lines[k++] = lines[i];
	}
	free(f->lines);
	f->lines = lines;
	f->nr_lines = k;
	p->dirty = true;
}

int jit_proc_load(struct jit_proc *p, const char *name, uint64_t start, uint64_t size,
		  const uint8_t *code, uint64_t t, uint64_t code_index)
{
	struct jit_fn *f;
	uint64_t off;
	uint32_t i;
	int rc;

	off = (p->text_size + 15) & ~15ull;
	if (!size || size > JIT_MAX_TEXT || off + size > JIT_MAX_TEXT || start + size < start ||
	    p->nr_fns >= JIT_MAX_FNS) {
		p->st->v[JS_TOO_BIG]++;
		return -EFBIG;
	}
	if (p->image_failed)
		return -EIO;
	if (!p->cookie && jit_image_reserve(p)) {
		p->image_failed = true;
		return -EIO;
	}
	rc = jit_grow((void **)&p->fns, &p->cap_fns, p->nr_fns + 1, sizeof(*p->fns));
	if (rc)
		return rc;
	f = &p->fns[p->nr_fns];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name && *name ? name : "[unnamed]");
	if (!f->name)
		return -ENOMEM;
	if (code) {
		f->code = malloc(size);
		if (f->code)
			memcpy(f->code, code, size);
	}
	f->off = off;
	f->size = size;
	p->nr_fns++;
	if (jit_add_range(p, start, size, t, p->nr_fns - 1)) {
		p->nr_fns--;
		free(f->name);
		free(f->code);
		return -ENOMEM;
	}
	p->text_size = off + size;
	if (code_index != UINT64_MAX)
		jmap_put(&p->code_index, code_index, p->nr_fns - 1);
	/* its DEBUG_INFO may have come first (perf's agents write it so) */
	for (i = 0; i < p->nr_pending; i++)
		if (p->pending[i].code_addr == start) {
			jit_attach_lines(p, f, p->pending[i].lines, p->pending[i].nr_lines);
			p->pending[i] = p->pending[--p->nr_pending];
			break;
		}
	p->st->v[JS_FUNCTIONS]++;
	p->dirty = true;
	return 0;
}

int jit_proc_move(struct jit_proc *p, uint64_t code_index, uint64_t to_addr, uint64_t t)
{
	struct jit_range *r;
	uint32_t fn;

	if (!jmap_get(&p->code_index, code_index, &fn)) {
		p->st->v[JS_ORPHAN_MOVES]++;
		return -ENOENT;
	}
	if (to_addr + p->fns[fn].size < to_addr) {
		p->st->v[JS_ORPHAN_MOVES]++;
		return -EINVAL;
	}
	r = &p->ranges[p->fns[fn].cur];
	if (r->to == JIT_NO_END)
		r->to = t > r->from ? t : r->from;
	p->hit_ok = false;
	if (jit_add_range(p, to_addr, p->fns[fn].size, t, fn))
		return -ENOMEM;
	p->ranges[p->nr_ranges - 1].moved = true;
	return 0;
}

int jit_proc_unload(struct jit_proc *p, uint64_t start, uint64_t t)
{
	struct jit_range *r;
	uint32_t idx;

	if (!jmap_get(&p->start, start, &idx) || p->ranges[idx].to != JIT_NO_END) {
		p->st->v[JS_ORPHAN_MOVES]++;
		return -ENOENT;
	}
	r = &p->ranges[idx];
	r->to = t > r->from ? t : r->from;
	p->hit_ok = false;
	return 0;
}

/* the index of source file @name in @p's list, added if new; UINT32_MAX on ENOMEM */
static uint32_t jit_file(struct jit_proc *p, const char *name)
{
	uint32_t i;
	char *d;

	/* entries of one function mostly name one file: look from the last one */
	for (i = p->nr_files; i-- > 0;)
		if (!strcmp(p->files[i], name))
			return i;
	if (jit_grow((void **)&p->files, &p->cap_files, p->nr_files + 1, sizeof(*p->files)))
		return UINT32_MAX;
	d = strdup(name);
	if (!d)
		return UINT32_MAX;
	p->files[p->nr_files] = d;
	return p->nr_files++;
}

static int jit_line_cmp(const void *a, const void *b)
{
	const struct op_jitelf_line *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

int jit_proc_debug(struct jit_proc *p, uint64_t code_addr, const struct op_jit_line *e, size_t n)
{
	struct op_jitelf_line *lines;
	struct jit_fn *f = NULL;
	uint32_t idx, k = 0;
	size_t i;

	if (!n)
		return 0;
	if (n > JIT_MAX_LINES_FN) {
		p->st->v[JS_TOO_BIG]++;
		n = JIT_MAX_LINES_FN;
	}
	lines = calloc(n, sizeof(*lines));
	if (!lines)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		uint32_t file;

		if (e[i].addr < code_addr || e[i].addr - code_addr > UINT32_MAX) {
			p->st->v[JS_BAD_LINES]++;
			continue;
		}
		file = jit_file(p, e[i].filename);
		if (file == UINT32_MAX)
			break;
		lines[k].off = (uint32_t)(e[i].addr - code_addr);
		lines[k].line = e[i].lineno;
		lines[k].file = file;
		k++;
	}
	qsort(lines, k, sizeof(*lines), jit_line_cmp);
	if (jmap_get(&p->start, code_addr, &idx))
		f = &p->fns[p->ranges[idx].fn];
	/* lines for code already loaded (libopagent writes them after the code) */
	if (f && !f->lines) {
		jit_attach_lines(p, f, lines, k);
		return 0;
	}
	/* else for the next LOAD at code_addr (perf's agents write them before) */
	if (p->nr_pending >= JIT_MAX_PENDING) {
		p->st->v[JS_ORPHAN_MOVES]++;
		free(lines);
		return -ENOSPC;
	}
	if (jit_grow((void **)&p->pending, &p->cap_pending, p->nr_pending + 1, sizeof(*p->pending))) {
		free(lines);
		return -ENOMEM;
	}
	p->pending[p->nr_pending].code_addr = code_addr;
	p->pending[p->nr_pending].lines = lines;
	p->pending[p->nr_pending].nr_lines = k;
	p->nr_pending++;
	return 0;
}

/* ------------------------------------------------------------------ */
/* the lookup                                                          */
/* ------------------------------------------------------------------ */

static int jit_sorted_cmp(const void *a, const void *b)
{
	const struct jit_sorted *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* the new ranges (appended since the last index) merged into the sorted ones */
void jit_proc_index(struct jit_proc *p)
{
	uint32_t n = p->nr_ranges, old = p->nr_sorted, i, a, b, k;
	struct jit_sorted *srt, *tail;

	p->hit_ok = false;
	if (n == old)
		return;
	srt = malloc((size_t)n * sizeof(*srt));
	tail = malloc((size_t)(n - old) * sizeof(*tail));
	if (!srt || !tail) {
		free(srt);
		free(tail);
		return; /* the old index stays: new code resolves after the next batch */
	}
	for (i = old; i < n; i++) {
		tail[i - old].start = p->ranges[i].start;
		tail[i - old].idx = i;
	}
	qsort(tail, n - old, sizeof(*tail), jit_sorted_cmp);
	/* merge from the back: the larger of the two heads goes last */
	a = old;
	b = n - old;
	k = n;
	while (a > 0 || b > 0) {
		if (b == 0 || (a > 0 && jit_sorted_cmp(&p->sorted[a - 1], &tail[b - 1]) > 0))
			srt[--k] = p->sorted[--a];
		else
			srt[--k] = tail[--b];
	}
	free(tail);
	for (i = 0; i < n; i++) {
		uint64_t e = p->ranges[srt[i].idx].end;

		srt[i].maxend = i && srt[i - 1].maxend > e ? srt[i - 1].maxend : e;
	}
	free(p->sorted);
	p->sorted = srt;
	p->nr_sorted = n;
}

bool jit_proc_lookup(struct jit_proc *p, uint64_t pc, uint64_t t, uint64_t *key)
{
	const struct jit_range *best = NULL;
	uint32_t lo = 0, hi = p->nr_sorted, i, steps = 0, besti = 0, covering = 0, bestpos = 0;

	if (p->hit_ok && pc >= p->hit_start && pc < p->hit_end && t >= p->hit_from && t < p->hit_to) {
		*key = p->hit_key + (pc - p->hit_start);
		p->st->v[JS_RESOLVED_MOVED] += p->hit_moved;
		return true;
	}
	/* the first range starting above pc; branch-free (pcs are random to the predictor) */
	if (hi) {
		const struct jit_sorted *base = p->sorted;
		uint32_t n = hi;

		while (n > 1) {
			uint32_t half = n / 2;

			base = base[half].start <= pc ? base + half : base;
			n -= half;
		}
		lo = (uint32_t)(base - p->sorted) + (base->start <= pc);
	}
	/* back through the ranges that may still cover pc; the newest valid one wins */
	for (i = lo; i-- > 0 && p->sorted[i].maxend > pc;) {
		const struct jit_range *r = &p->ranges[p->sorted[i].idx];

		if (++steps > JIT_WALK_MAX) {
			p->st->v[JS_WALK_LIMIT]++;
			break;
		}
		if (pc >= r->end)
			continue;
		covering++;
		if (t < r->from || t >= r->to)
			continue;
		if (!best || r->from > best->from ||
		    (r->from == best->from && p->sorted[i].idx > besti)) {
			best = r;
			besti = p->sorted[i].idx;
			bestpos = i;
		}
	}
	if (!best)
		return false;
	*key = best->key + (pc - best->start);
	p->st->v[JS_RESOLVED_MOVED] += best->moved;
	/* remember it when no other range overlaps any of its bytes */
	if (covering == 1 && (bestpos == 0 || p->sorted[bestpos - 1].maxend <= best->start) &&
	    (bestpos + 1 == p->nr_sorted || p->sorted[bestpos + 1].start >= best->end)) {
		p->hit_ok = true;
		p->hit_start = best->start;
		p->hit_end = best->end;
		p->hit_from = best->from;
		p->hit_to = best->to;
		p->hit_key = *key - (pc - best->start);
		p->hit_moved = best->moved;
	}
	return true;
}
