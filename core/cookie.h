/*
 * cookie.h - path interning: every image path (user binary, kernel image,
 * anon region name) gets a small integer, the "cookie", once; samples then
 * carry cookies. 0 means "no image".
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_COOKIE_H
#define OP_CORE_COOKIE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "oprofile_sdk.h"
#include "op_mangle.h"

struct cookie_ent {
	char *path;   /* user: absolute path; kernel: name; anon: maps name */
	uint32_t len; /* strlen(path) */
	enum op_image_kind kind;
	bool deleted;   /* mapped file was deleted: mtime unknown */
	uint64_t mtime; /* st_mtime at interning; 0 for kernel/anon/unknown */
	bool wanted;    /* matches the --image filter (always true without one) */
	uint32_t hash;
	op_cookie_t next; /* hash chain */
};

/*
 * Entries live in chunks that never move (cookie 0 unused), so that a
 * plugin thread may intern (SDK 1.2: under @lock, as the daemon's own
 * interning) while the daemon's thread reads entries it knows without a
 * lock: @nr is published after the entry is complete.
 */
#define COOKIE_CHUNK_SHIFT 10
#define COOKIE_CHUNK (1u << COOKIE_CHUNK_SHIFT)
#define COOKIE_MAX_CHUNKS 4096 /* 4 M images */

struct cookie_table {
	struct cookie_ent *chunks[COOKIE_MAX_CHUNKS];
	uint32_t nr;          /* entries in use, cookie 0 included; read with acquire */
	pthread_mutex_t lock; /* interning: the hash chains, new entries */
	op_cookie_t *buckets;
	uint32_t nr_buckets; /* power of two */
	bool no_stat;        /* tests: do not stat binaries */
	char *const *filter; /* --image: full paths or base names (NULL-terminated), or NULL */
};

int cookie_init(struct cookie_table *t);
void cookie_free(struct cookie_table *t);
/*
 * Intern @path (length @len, need not be NUL-terminated) of @kind. A user
 * path is stat()ed once, at creation. Returns the cookie, or 0 on ENOMEM.
 * Thread-safe against itself and against cookie_get of existing cookies.
 */
op_cookie_t cookie_intern(struct cookie_table *t, const char *path, size_t len,
			  enum op_image_kind kind, bool deleted);
const struct cookie_ent *cookie_get(const struct cookie_table *t, op_cookie_t c);
const char *cookie_path(const struct cookie_table *t, op_cookie_t c);

#endif /* OP_CORE_COOKIE_H */
