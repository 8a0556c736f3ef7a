/*
 * task.c - the task table of buffer sync: fork copies the parent's maps,
 * exec drops them, mmap adds (replacing overlaps), exit frees after the
 * current round of records was synced.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "task.h"

static size_t task_hash(const struct task_table *tt, uint32_t tgid)
{
	return (tgid * 2654435761u) & (tt->nr_buckets - 1);
}

int task_table_init(struct task_table *tt)
{
	memset(tt, 0, sizeof(*tt));
	tt->nr_buckets = 1024;
	tt->buckets = calloc(tt->nr_buckets, sizeof(*tt->buckets));
	return tt->buckets ? 0 : -ENOMEM;
}

static void task_destroy(struct task *t)
{
	free(t->maps);
	free(t);
}

/* a reaped task: kept for reuse while there are few spares, else freed */
static void task_retire(struct task_table *tt, struct task *t)
{
	if (tt->nr_spare >= TASK_SPARE_MAX || t->cap_maps > 64) {
		task_destroy(t);
		return;
	}
	t->hnext = tt->spare;
	tt->spare = t;
	tt->nr_spare++;
}

/* a zeroed task, with a spare's map array when there is one */
static struct task *task_alloc(struct task_table *tt)
{
	struct task *t = tt->spare;
	struct task_map *maps;
	size_t cap;

	if (!t)
		return calloc(1, sizeof(*t));
	tt->spare = t->hnext;
	tt->nr_spare--;
	maps = t->maps;
	cap = t->cap_maps;
	memset(t, 0, sizeof(*t));
	t->maps = maps;
	t->cap_maps = cap;
	return t;
}

static void task_unhash(struct task_table *tt, struct task *t)
{
	struct task **pp = &tt->buckets[task_hash(tt, t->tgid)];

	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == t) {
			*pp = t->hnext;
			t->hnext = NULL;
			tt->nr_tasks--;
			return;
		}
	}
}

void task_table_free(struct task_table *tt)
{
	struct task *t, *n;
	size_t i;

	task_reap(tt);
	for (t = tt->spare; t; t = n) {
		n = t->hnext;
		task_destroy(t);
	}
	for (i = 0; tt->buckets && i < tt->nr_buckets; i++) {
		for (t = tt->buckets[i]; t; t = n) {
			n = t->hnext;
			task_destroy(t);
		}
	}
	free(tt->buckets);
	memset(tt, 0, sizeof(*tt));
}

struct task *task_find(struct task_table *tt, uint32_t tgid)
{
	struct task *t = tt->buckets[task_hash(tt, tgid)];

	for (; t; t = t->hnext)
		if (t->tgid == tgid)
			return t;
	return NULL;
}

static void task_rehash(struct task_table *tt)
{
	size_t n = tt->nr_buckets * 2, i;
	struct task **b = calloc(n, sizeof(*b));

	if (!b)
		return; /* keep the old table: longer chains, still correct */
	for (i = 0; i < tt->nr_buckets; i++) {
		struct task *t = tt->buckets[i], *next;

		for (; t; t = next) {
			size_t h = (t->tgid * 2654435761u) & (n - 1);

			next = t->hnext;
			t->hnext = b[h];
			b[h] = t;
		}
	}
	free(tt->buckets);
	tt->buckets = b;
	tt->nr_buckets = n;
}

static struct task *task_new(struct task_table *tt, uint32_t tgid)
{
	struct task *t = task_alloc(tt);
	size_t h;

	if (!t)
		return NULL;
	t->tgid = tgid;
	t->nr_threads = 1;
	if (tt->nr_tasks >= 2 * tt->nr_buckets)
		task_rehash(tt);
	h = task_hash(tt, tgid);
	t->hnext = tt->buckets[h];
	tt->buckets[h] = t;
	tt->nr_tasks++;
	return t;
}

struct task *task_get(struct task_table *tt, uint32_t tgid)
{
	struct task *t = task_find(tt, tgid);

	if (t && !t->dead)
		return t;
	if (t)
		task_unhash(tt, t); /* pid reused: the dead one stays on the dead list */
	return task_new(tt, tgid);
}

static int task_reserve(struct task *t, size_t n)
{
	struct task_map *m;
	size_t cap;

	if (t->nr_maps + n <= t->cap_maps)
		return 0;
	cap = t->cap_maps ? t->cap_maps * 2 : 16;
	while (cap < t->nr_maps + n)
		cap *= 2;
	m = realloc(t->maps, cap * sizeof(*m));
	if (!m)
		return -ENOMEM;
	t->maps = m;
	t->cap_maps = cap;
	return 0;
}

struct task *task_fork(struct task_table *tt, uint32_t tgid, uint32_t ptgid)
{
	struct task *p = task_find(tt, ptgid);
	struct task *t;

	t = task_find(tt, tgid);
	if (t && !t->dead) {
		/* already known (synthesized from /proc, or a duplicate): restart it */
		t->nr_maps = 0;
		t->nr_threads = 1;
	} else {
		t = task_get(tt, tgid);
		if (!t)
			return NULL;
	}
	if (!p || p == t)
		return t;
	memcpy(t->comm, p->comm, sizeof(t->comm));
	t->app_cookie = p->app_cookie;
	t->app_matches_comm = p->app_matches_comm;
	t->split = p->split; /* a child starts in its parent's cgroup */
	if (p->nr_maps) {
		if (task_reserve(t, p->nr_maps))
			return t; /* no maps: its samples count as "no mapping" */
		memcpy(t->maps, p->maps, p->nr_maps * sizeof(*t->maps));
		t->nr_maps = p->nr_maps;
	}
	return t;
}

void task_exec(struct task *t)
{
	t->nr_maps = 0;
	t->probed = false; /* a new image: /proc may be read once more */
	t->app_cookie = 0;
	t->app_matches_comm = false;
}

int task_add_map(struct task *t, uint64_t start, uint64_t len, uint64_t pgoff, op_cookie_t cookie,
		 bool anon)
{
	uint64_t end = start + len;
	size_t i, j, lo;

	if (len == 0 || end < start)
		return -EINVAL;
	/* room for the new map and one split */
	if (task_reserve(t, 2))
		return -ENOMEM;
	/* first map whose end is above start */
	for (lo = 0; lo < t->nr_maps && t->maps[lo].end <= start; lo++)
		;
	i = lo;
	if (i < t->nr_maps && t->maps[i].start < start && t->maps[i].end > end) {
		/* the new map lies inside maps[i]: split it in two */
		struct task_map tail = t->maps[i];

		tail.pgoff += end - tail.start;
		tail.start = end;
		t->maps[i].end = start;
		memmove(&t->maps[i + 2], &t->maps[i + 1], (t->nr_maps - i - 1) * sizeof(*t->maps));
		t->maps[i + 1] = tail;
		t->nr_maps++;
		i++;
	} else {
		if (i < t->nr_maps && t->maps[i].start < start) {
			t->maps[i].end = start; /* trim the head part that stays */
			i++;
		}
		/* drop maps fully covered, trim one overlapping the end */
		for (j = i; j < t->nr_maps && t->maps[j].end <= end; j++)
			;
		if (j < t->nr_maps && t->maps[j].start < end) {
			t->maps[j].pgoff += end - t->maps[j].start;
			t->maps[j].start = end;
		}
		if (j > i) {
			memmove(&t->maps[i], &t->maps[j], (t->nr_maps - j) * sizeof(*t->maps));
			t->nr_maps -= j - i;
		}
	}
	memmove(&t->maps[i + 1], &t->maps[i], (t->nr_maps - i) * sizeof(*t->maps));
	t->maps[i] = (struct task_map){
		.start = start, .end = end, .pgoff = pgoff, .cookie = cookie, .anon = anon
	};
	t->nr_maps++;
	return 0;
}

const struct task_map *task_find_map(struct task *t, uint64_t pc)
{
	size_t lo = 0, hi = t->nr_maps;

	/* samples come in runs in one image: try the last hit first */
	if (t->last_map < hi && pc >= t->maps[t->last_map].start && pc < t->maps[t->last_map].end)
		return &t->maps[t->last_map];

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct task_map *m = &t->maps[mid];

		if (pc < m->start)
			hi = mid;
		else if (pc >= m->end)
			lo = mid + 1;
		else {
			t->last_map = mid;
			return m;
		}
	}
	return NULL;
}

void task_exit(struct task_table *tt, struct task *t)
{
	if (t->dead)
		return;
	t->dead = true;
	t->dnext = tt->dead;
	tt->dead = t;
}

void task_reap(struct task_table *tt)
{
	struct task *t = tt->dead, *n;

	for (; t; t = n) {
		n = t->dnext;
		if (task_find(tt, t->tgid) == t)
			task_unhash(tt, t);
		task_retire(tt, t);
	}
	tt->dead = NULL;
}
