/*
 * cookie.c - path interning (hash of (kind, path) -> cookie). Called on
 * mmap records and by plugins (also from their threads: SDK 1.2), never
 * per sample.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cookie.h"

/* MMAP records intern the same few paths over and over: hash 8 bytes a step */
static uint32_t cookie_hash(const char *s, size_t len, enum op_image_kind kind)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)kind << 32) ^ len, w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	if (len) {
		w = 0;
		memcpy(&w, s, len);
		h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	}
	h ^= h >> 32;
	h *= 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32);
}

int cookie_init(struct cookie_table *t)
{
	memset(t, 0, sizeof(*t));
	t->nr_buckets = 1024;
	t->buckets = calloc(t->nr_buckets, sizeof(*t->buckets));
	t->chunks[0] = calloc(COOKIE_CHUNK, sizeof(struct cookie_ent));
	if (!t->buckets || !t->chunks[0]) {
		free(t->buckets);
		free(t->chunks[0]);
		memset(t, 0, sizeof(*t));
		return -ENOMEM;
	}
	pthread_mutex_init(&t->lock, NULL);
	t->nr = 1;
	return 0;
}

/* entry @c, which exists */
static struct cookie_ent *cookie_ent(const struct cookie_table *t, op_cookie_t c)
{
	return &t->chunks[c >> COOKIE_CHUNK_SHIFT][c & (COOKIE_CHUNK - 1)];
}

void cookie_free(struct cookie_table *t)
{
	uint32_t i;

	if (!t->buckets)
		return;
	for (i = 1; i < t->nr; i++)
		free(cookie_ent(t, i)->path);
	for (i = 0; i < COOKIE_MAX_CHUNKS && t->chunks[i]; i++)
		free(t->chunks[i]);
	free(t->buckets);
	pthread_mutex_destroy(&t->lock);
	memset(t, 0, sizeof(*t));
}

static int cookie_rehash(struct cookie_table *t)
{
	uint32_t n = t->nr_buckets * 2, i;
	op_cookie_t *b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (i = 1; i < t->nr; i++) {
		uint32_t h = cookie_ent(t, i)->hash & (n - 1);

		cookie_ent(t, i)->next = b[h];
		b[h] = i;
	}
	free(t->buckets);
	t->buckets = b;
	t->nr_buckets = n;
	return 0;
}

/* --image=A,B: an entry matches the whole path or its base name */
static bool cookie_matches(const struct cookie_table *t, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t i;

	if (!t->filter || !t->filter[0])
		return true;
	base = base ? base + 1 : path;
	for (i = 0; t->filter[i]; i++)
		if (!strcmp(t->filter[i], path) || !strcmp(t->filter[i], base))
			return true;
	return false;
}

static op_cookie_t cookie_intern_locked(struct cookie_table *t, const char *path, size_t len,
					enum op_image_kind kind, bool deleted)
{
	uint32_t h = cookie_hash(path, len, kind);
	struct cookie_ent *e;
	struct stat st;
	op_cookie_t c;

	for (c = t->buckets[h & (t->nr_buckets - 1)]; c; c = e->next) {
		e = cookie_ent(t, c);
		if (e->hash == h && e->kind == kind && e->len == len &&
		    !memcmp(e->path, path, len) && e->deleted == deleted)
			return c;
	}
	if (t->nr == COOKIE_MAX_CHUNKS * COOKIE_CHUNK)
		return 0;
	if (!t->chunks[t->nr >> COOKIE_CHUNK_SHIFT]) {
		t->chunks[t->nr >> COOKIE_CHUNK_SHIFT] = calloc(COOKIE_CHUNK, sizeof(*e));
		if (!t->chunks[t->nr >> COOKIE_CHUNK_SHIFT])
			return 0;
	}
	if (t->nr >= t->nr_buckets && cookie_rehash(t))
		return 0;
	c = t->nr;
	e = cookie_ent(t, c);
	memset(e, 0, sizeof(*e));
	e->path = strndup(path, len);
	if (!e->path)
		return 0;
	e->len = (uint32_t)strlen(e->path); /* == len unless @path holds a NUL */
	e->kind = kind;
	e->deleted = deleted;
	e->hash = h;
	/* user binaries and a vmlinux given by path; not /proc/kallsyms */
	if (kind != OP_IMAGE_ANON && !deleted && !t->no_stat && path[0] == '/' &&
	    strncmp(e->path, "/proc/", 6) && stat(e->path, &st) == 0)
		e->mtime = (uint64_t)st.st_mtime;
	e->wanted = cookie_matches(t, e->path);
	e->next = t->buckets[h & (t->nr_buckets - 1)];
	t->buckets[h & (t->nr_buckets - 1)] = c;
	/* the entry is complete before a reader without the lock can see it */
	__atomic_store_n(&t->nr, c + 1, __ATOMIC_RELEASE);
	return c;
}

op_cookie_t cookie_intern(struct cookie_table *t, const char *path, size_t len,
			  enum op_image_kind kind, bool deleted)
{
	op_cookie_t c;

	pthread_mutex_lock(&t->lock);
	c = cookie_intern_locked(t, path, len, kind, deleted);
	pthread_mutex_unlock(&t->lock);
	return c;
}

const struct cookie_ent *cookie_get(const struct cookie_table *t, op_cookie_t c)
{
	if (c == 0 || c >= __atomic_load_n(&t->nr, __ATOMIC_ACQUIRE))
		return NULL;
	return cookie_ent(t, c);
}

const char *cookie_path(const struct cookie_table *t, op_cookie_t c)
{
	const struct cookie_ent *e = cookie_get(t, c);

	return e ? e->path : NULL;
}
