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

_Static_assert(sizeof(struct odb_descr) == 32, "odb_descr_t is 32 bytes");
_Static_assert(sizeof(struct odb_node) == 16, "odb_node_t is 16 bytes");

/* layout constants of the file format */
#define ODB_DESCR_OFFSET sizeof(struct opd_header)                         /* 72 */
#define ODB_NODE_OFFSET (ODB_DESCR_OFFSET + sizeof(struct odb_descr))      /* 104 */
#define ODB_BYTES_PER_NODE (sizeof(struct odb_node) + sizeof(odb_index_t)) /* 20 */
#define ODB_INITIAL_NODES 128u                                             /* file: 2664 bytes */
#define ODB_FILE_SIZE(nodes) (ODB_NODE_OFFSET + (uint64_t)(nodes)*ODB_BYTES_PER_NODE)

/* Bucket of @key in a table of @size (power of two) buckets: part of the format. */
static inline uint32_t odb_hash(odb_key_t key, uint32_t size)
{
	uint32_t t = (uint32_t)((key >> 32) ^ key);

	return (t ^ (t >> 8)) & (size - 1);
}

enum odb_mode { ODB_RDONLY, ODB_RDWR };

typedef struct odb {
	int fd;
	enum odb_mode mode;
	char *path;     /* as given to odb_open, for messages */
	void *base;     /* ODB_RDWR: the shared mapping; ODB_RDONLY: a private copy */
	size_t map_len; /* bytes at base: the file size */
	struct odb_descr *descr;
	struct odb_node *nodes; /* node array, node 0 unused */
	odb_index_t *hash;      /* bucket heads */
	/*
	 * The opener's own size and current_size. The file may be written by
	 * others (a shared mapping): a writer never reads these fields back
	 * from it, it keeps them here (set at open, insert and growth) and
	 * bounds every index it reads from the file by them. A reader's are
	 * the snapshot its copy holds.
	 */
	uint32_t size, cur;
	bool broken;        /* a writer found the file changed under it: no longer used */
	bool created;       /* ODB_RDWR: this open created the file (O_EXCL): the opener's own */
	uint64_t saturated; /* updates that hit UINT32_MAX (count kept at UINT32_MAX) */
} odb_t;

/*
 * Open @path relative to @dirfd (AT_FDCWD or a directory the caller trusts),
 * always with O_NOFOLLOW; a non-regular file is refused.
 *
 * ODB_RDWR creates the file (mode 0644) if needed, or an empty one, sized for
 * 128 nodes with an all-zero header (fill it through odb_header()). If disk
 * space cannot be reserved, a file created by this call is removed again and
 * -ENOSPC (or the write error, e.g. -EFBIG) is returned. An existing file
 * is validated like odb_check() except that an all-zero header (never filled)
 * is accepted.
 *
 * ODB_RDONLY reads the whole file into private memory (pread, not a mapping:
 * a file that another process truncates cannot fault the reader) and checks
 * in O(1) the header (magic, version) and the geometry (file size vs node
 * capacity, current_size), so odb_nodes() is safe afterwards. An empty file,
 * or one that shrank while it was read, gives -EIO. The file may be in use by
 * a running writer: the copy is a snapshot (db->size, db->cur); the reader
 * reads again if the file grew since fstat(), and waits (up to ~2 s) for a
 * growth in progress to finish. A writer is recognised by the OFD write lock
 * it holds on byte 0 (advisory) while the file is open.
 *
 * A writer that dies while doubling the table leaves a marker (descriptor
 * padding[0] = 1; 0 at rest, as in OProfile's files): readers then refuse the
 * file, and the next ODB_RDWR open repairs it to the state before the growth.
 * One that dies inside an insert, after linking the node and before raising
 * current_size (the commit), leaves a bucket head one past the used nodes
 * and padding[0] = 2 (set during each insert): readers refuse the file, the
 * next ODB_RDWR open unlinks that node (its count was never committed). The
 * same bytes without the marker are a corrupt file, refused.
 *
 * ODB_RDWR checks the whole file like odb_check() before the first update;
 * chains that are not in the order writers make them (each index smaller
 * than the one before, see odb_update()) are relinked. One writer at a
 * time: while a writer (in this process or another) has the file open,
 * ODB_RDWR gives -EBUSY and leaves the file alone.
 *
 * Returns 0 or -errno. On failure @err (if not NULL) holds a one-line message
 * "<path>: <defect>"; -EINVAL means the file is not a valid sample file.
 * @db is left closed (odb_close() on it is harmless).
 */
int odb_open(odb_t *db, int dirfd, const char *path, enum odb_mode mode, char *err, size_t err_len);

/*
 * odb_open(ODB_RDWR) of a file the caller expects not to exist (its
 * directory was just made, or the caller looked): created with O_EXCL
 * first, without the lookup of an existing file and the fstat of the new,
 * empty one (issue 20: the files of each new process pair on a host that
 * starts hundreds a second); a file that exists after all is opened as
 * odb_open does. db->created tells which.
 */
int odb_create(odb_t *db, int dirfd, const char *path, char *err, size_t err_len);

/*
 * Full validation in O(nodes): header, geometry, every bucket head and next
 * index, chains free of cycles, every key chained from its own bucket and
 * every used node reachable. Returns 0, -EINVAL with a message naming the
 * file and the defect, or -ENOMEM. For an ODB_RDONLY reader, chain defects
 * that a running writer explains (it grew the table or inserted since the
 * snapshot, or is inserting now) are not reported: the nodes of the
 * snapshot remain valid to read. For ODB_RDWR, a descriptor that differs
 * from the writer's own size and current_size is a defect.
 */
int odb_check(const odb_t *db, char *err, size_t err_len);

/* The header at the start of the mapping (writable for ODB_RDWR). */
struct opd_header *odb_header(odb_t *db);

/*
 * Add @n to the count of @key, inserting it if new. HOT: no syscall and no
 * allocation except when the table doubles. A count never wraps: it stops at
 * UINT32_MAX and db->saturated is incremented. Returns 0, or -ENOSPC (or
 * another -errno) when growing failed; then the file and mapping are
 * unchanged and still valid, and the sample is not recorded. Growth past
 * RLIMIT_FSIZE raises SIGXFSZ: a daemon should ignore that signal (then it
 * gets -EFBIG here).
 *
 * The file is not trusted: writers link a new node at the head of its chain,
 * so along every chain each index is smaller than the one before, and the
 * first is below db->cur. An index that breaks this (out of range, a cycle)
 * means another process changed the file under the writer: -EIO, and the
 * writer stops using the file (db->broken; every later update gives -EIO,
 * the caller should count the sample lost and close the file; reopening it
 * checks it in full and names the defect). Nothing read from the file makes
 * the writer read or write outside its mapping.
 */
int odb_update(odb_t *db, odb_key_t key, odb_value_t n);

/*
 * odb_update() for the sample path, inline: a key already in the file is
 * counted here (no call into the library); anything else (a new key, a
 * count about to saturate, an index out of order) goes to odb_update().
 * One compare per index read bounds it (see odb_update()).
 */
static inline int odb_update_hot(odb_t *db, odb_key_t key, odb_value_t n)
{
	struct odb_node *nodes = db->nodes;
	odb_index_t i = db->hash[odb_hash(key, db->size)], bound = db->cur - 1;

	/* i in 1..bound: the end of the chain (0) and an index out of order fail alike */
	while (i - 1 < bound) {
		if (nodes[i].key == key) {
			odb_value_t v = nodes[i].value + n;

			if (__builtin_expect(v < n, 0))
				break;
			nodes[i].value = v;
			return 0;
		}
		bound = i - 1;
		i = nodes[i].next;
	}
	return odb_update(db, key, n);
}

/* Used nodes: returns &nodes[1] and sets *count to db->cur - 1 (0 once broken). */
const struct odb_node *odb_nodes(const odb_t *db, size_t *count);

/* msync(MS_ASYNC) of a writer's mapping (a reader has none). Returns 0 or -errno. */
int odb_sync(odb_t *db);

/*
 * Unmap (or free a reader's copy) and close; idempotent. Does not sync
 * (MAP_SHARED data is in the page cache).
 */
void odb_close(odb_t *db);

#endif /* OP_ODB_H */
