/*
 * odb.h - OProfile 1.x sample files: an mmap'd, growable hash of
 * key (u64) -> count (u32), preceded by a struct opd_header.
 * Format facts: notes/oprofile-format.md section 3.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_ODB_H
#define OP_ODB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "op_header.h"

typedef uint64_t odb_key_t;
typedef uint32_t odb_value_t;
typedef uint32_t odb_index_t;

struct odb_descr {
	uint32_t size;         /* node capacity, a power of two */
	uint32_t current_size; /* used nodes + 1 (node 0 unused) */
	int32_t padding[6];
};

struct odb_node {
	odb_key_t key;
	odb_value_t value;
	odb_index_t next;
};

enum odb_mode { ODB_RDONLY, ODB_RDWR };

typedef struct odb {
	int fd;
	enum odb_mode mode;
	char *path;              /* for messages */
	void *base;              /* mapping start (header) */
	size_t map_len;
	struct odb_descr *descr;
	struct odb_node *nodes;  /* node array, node 0 unused */
	odb_index_t *hash;       /* bucket heads */
	uint64_t saturated;      /* updates that hit UINT32_MAX */
} odb_t;

/*
 * Open (creating if needed, for ODB_RDWR) @path. A new file starts with an
 * all-zero header and 128 nodes. @dirfd lets the caller open relative to a
 * directory it trusts (AT_FDCWD otherwise); O_NOFOLLOW is always used.
 * Returns 0 or -errno; on a corrupt file -EINVAL and a message in @err.
 */
int odb_open(odb_t *db, int dirfd, const char *path, enum odb_mode mode, char *err,
	     size_t err_len);
/* Validate a file opened read-only: magic, version, sizes, indexes, chains. */
int odb_check(const odb_t *db, char *err, size_t err_len);
struct opd_header *odb_header(odb_t *db);
/* Add @n at @key (HOT: no syscall except when growing). Saturates at UINT32_MAX. */
int odb_update(odb_t *db, odb_key_t key, odb_value_t n);
/* Iterate used nodes: nodes[1 .. count] */
const struct odb_node *odb_nodes(const odb_t *db, size_t *count);
int odb_sync(odb_t *db);
void odb_close(odb_t *db);

#endif /* OP_ODB_H */
