/*
 * cookie.h - path interning: every image path (user binary, kernel image,
 * anon region name) gets a small integer, the "cookie", once; samples then
 * carry cookies. 0 means "no image".
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_COOKIE_H
#define OP_CORE_COOKIE_H

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

struct cookie_table {
	struct cookie_ent *ents; /* ents[0] unused */
	uint32_t nr, cap;
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
 */
op_cookie_t cookie_intern(struct cookie_table *t, const char *path, size_t len,
			  enum op_image_kind kind, bool deleted);
const struct cookie_ent *cookie_get(const struct cookie_table *t, op_cookie_t c);
const char *cookie_path(const struct cookie_table *t, op_cookie_t c);

#endif /* OP_CORE_COOKIE_H */
