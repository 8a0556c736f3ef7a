/*
 * odb.c - OProfile 1.x compatible sample files: open/create, validate,
 * update (the daemon's hot path), grow without SIGBUS on a full disk.
 * Layout: header | descr | nodes[size] | bucket heads[size] (see odb.h).
 * A writer maps the file shared and trusts none of it (its own size and
 * current_size bound every index); a reader works on a private copy.
 *
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "odb.h"

/* largest capacity we accept: keeps 20 * size and index arithmetic in range */
#define ODB_MAX_NODES (1u << 31)

__attribute__((format(printf, 4, 5))) static int fail(int rc, char *err, size_t err_len,
						      const char *fmt, ...)
{
	va_list ap;

	if (err && err_len) {
		va_start(ap, fmt);
		vsnprintf(err, err_len, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/*
 * descr->padding[0] is ODB_GROWING while a writer doubles the table and 0
 * otherwise (as OProfile leaves it), so a file at rest stays byte-identical.
 * It tells readers that a size mismatch or broken chains are a growth in
 * progress, and tells the next writer that a previous one died mid-growth.
 */
#define ODB_GROWING 1
/*
 * ODB_INSERTING while a writer adds a node (from before it writes the node
 * to after it raises current_size): a writer that dies in between leaves
 * the node linked but not committed, and the marker tells the next writer
 * so (the same bytes without it are a corrupt file, refused).
 */
#define ODB_INSERTING 2

static bool growing(const odb_t *db)
{
	return __atomic_load_n(&db->descr->padding[0], __ATOMIC_ACQUIRE) == ODB_GROWING;
}

/* point descr/nodes/hash into the mapping for a table of @size nodes */
static void odb_set_pointers(odb_t *db, uint32_t size)
{
	char *b = db->base;

	db->descr = (struct odb_descr *)(b + ODB_DESCR_OFFSET);
	db->nodes = (struct odb_node *)(b + ODB_NODE_OFFSET);
	db->hash = (odb_index_t *)(b + ODB_NODE_OFFSET + (size_t)size * sizeof(struct odb_node));
}

static bool is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/*
 * O(1) checks that make every pointer derived from the descriptor lie inside
 * a mapping of @len bytes: afterwards nodes[0..size) and hash[0..size) are
 * addressable and current_size is in 1..size. The descriptor is read once,
 * into *@size and *@cur: a running writer may change it meanwhile.
 */
static int check_geometry(const void *base, uint64_t len, const char *path, char *err,
			  size_t err_len, uint32_t *size, uint32_t *cur)
{
	const struct odb_descr *dp = (const void *)((const char *)base + ODB_DESCR_OFFSET);
	struct odb_descr snap, *d = &snap;
	uint64_t nodes;

	if (len < ODB_NODE_OFFSET)
		return fail(-EINVAL, err, err_len,
			    "%s: file size %" PRIu64 " is smaller than the %zu-byte header and "
			    "descriptor: truncated",
			    path, len, (size_t)ODB_NODE_OFFSET);
	snap.current_size = __atomic_load_n(&dp->current_size, __ATOMIC_ACQUIRE);
	snap.size = __atomic_load_n(&dp->size, __ATOMIC_ACQUIRE);
	*size = snap.size;
	*cur = snap.current_size;
	if (!is_pow2(d->size) || d->size > ODB_MAX_NODES)
		return fail(-EINVAL, err, err_len,
			    "%s: node capacity %" PRIu32 " is not a power of two in 1..2^31", path,
			    d->size);
	if ((len - ODB_NODE_OFFSET) % ODB_BYTES_PER_NODE)
		return fail(-EINVAL, err, err_len,
			    "%s: file size %" PRIu64 " is not %zu + %zu*N bytes (%" PRIu64
			    " bytes too many): truncated or appended to",
			    path, len, (size_t)ODB_NODE_OFFSET, (size_t)ODB_BYTES_PER_NODE,
			    (len - ODB_NODE_OFFSET) % ODB_BYTES_PER_NODE);
	nodes = (len - ODB_NODE_OFFSET) / ODB_BYTES_PER_NODE;
	if (nodes != d->size)
		return fail(-EINVAL, err, err_len,
			    "%s: file size %" PRIu64 " holds %" PRIu64
			    " nodes but the descriptor says %" PRIu32 "%s",
			    path, len, nodes, d->size,
			    dp->padding[0] == ODB_GROWING && nodes == 2 * (uint64_t)d->size ?
				    ": a writer did not finish growing it (a writer reopening "
				    "it repairs it)" :
				    "");
	if (d->current_size < 1 || d->current_size > d->size)
		return fail(-EINVAL, err, err_len,
			    "%s: current_size %" PRIu32 " out of range 1..%" PRIu32, path,
			    d->current_size, d->size);
	return 0;
}

/*
 * O(nodes) hash checks: bucket heads and next indexes in 1..used, no cycles,
 * each key chained from its own bucket, every used node reachable. A bitmap of
 * visited nodes bounds the walk: no node is followed twice. *@descending
 * (if not NULL) tells whether every chain is in the order writers make
 * (each index below the one before), the order odb_update() relies on.
 */
static int check_chains(const odb_t *db, uint32_t size, uint32_t cur, uint32_t *bad_index,
			uint32_t *bad_bucket, bool *descending, char *err, size_t err_len)
{
	const odb_index_t *hash = (const odb_index_t *)((const char *)db->nodes +
							(size_t)size * sizeof(struct odb_node));
	const uint32_t used = cur - 1;
	uint64_t *seen;
	uint32_t b, i, reached = 0;
	bool desc = true;
	int rc = 0;

	seen = calloc(cur / 64 + 1, sizeof(*seen));
	if (!seen)
		return fail(-ENOMEM, err, err_len, "%s: no memory to check %" PRIu32 " nodes",
			    db->path, used);
	for (b = 0; b < size && !rc; b++) {
		uint32_t prev = 0;

		for (i = hash[b]; i; prev = i, i = db->nodes[i].next) {
			if (i >= cur) {
				*bad_index = i;
				*bad_bucket = b;
				if (prev)
					rc = fail(-EINVAL, err, err_len,
						  "%s: node %" PRIu32 " next index %" PRIu32
						  " out of range (used nodes %" PRIu32 ")",
						  db->path, prev, i, used);
				else
					rc = fail(-EINVAL, err, err_len,
						  "%s: bucket %" PRIu32 " head index %" PRIu32
						  " out of range (used nodes %" PRIu32 ")",
						  db->path, b, i, used);
				break;
			}
			/* a foreign node first: it may also have been seen from its own bucket */
			if (odb_hash(db->nodes[i].key, size) != b) {
				rc = fail(-EINVAL, err, err_len,
					  "%s: node %" PRIu32 " key 0x%" PRIx64
					  " belongs in bucket %" PRIu32
					  " but is chained from bucket %" PRIu32,
					  db->path, i, db->nodes[i].key,
					  odb_hash(db->nodes[i].key, size), b);
				break;
			}
			if (seen[i / 64] & (1ull << (i % 64))) {
				rc = fail(-EINVAL, err, err_len,
					  "%s: chain of bucket %" PRIu32 " reaches node %" PRIu32
					  " twice (cycle)",
					  db->path, b, i);
				break;
			}
			seen[i / 64] |= 1ull << (i % 64);
			reached++;
			if (prev && i >= prev)
				desc = false;
		}
	}
	if (descending)
		*descending = desc;
	if (!rc && reached != used) {
		for (i = 1; i < cur; i++)
			if (!(seen[i / 64] & (1ull << (i % 64))))
				break;
		rc = fail(-EINVAL, err, err_len,
			  "%s: node %" PRIu32 " is not linked from any bucket (%" PRIu32
			  " of %" PRIu32 " used nodes unreachable)",
			  db->path, i, used - reached, used);
	}
	free(seen);
	return rc;
}

/*
 * A writer holds an OFD write lock on byte 0 while it has the file open, so
 * readers can tell a file being written (wait, excuse moving chains) from a
 * file at rest (report at once), and a second writer is refused: two
 * writers each trust their own size and current_size, so each overwrites
 * the nodes the other added and links them from the wrong buckets (OFD
 * locks conflict between two opens in one process too). Advisory: a process
 * that writes without the lock is still caught by the bounds checks.
 * Returns 0, -EBUSY when another writer holds the lock, or 0 when the
 * filesystem has no locks (nothing to tell then).
 */
static int writer_lock(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };

	if (fcntl(fd, F_OFD_SETLK, &fl) && (errno == EAGAIN || errno == EACCES))
		return -EBUSY;
	return 0;
}

static bool writer_present(int fd)
{
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 1 };

	return !fcntl(fd, F_OFD_GETLK, &fl) && fl.l_type != F_UNLCK;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* the descriptor as the file holds it now (a reader's copy may be older) */
static bool live_descr(const odb_t *db, struct odb_descr *d)
{
	return pread(db->fd, d, sizeof(*d), (off_t)ODB_DESCR_OFFSET) == (ssize_t)sizeof(*d);
}

/* the file's descriptor moved away from @size/@cur (a growth, an insert) */
static bool descr_moved(const odb_t *db, uint32_t size, uint32_t cur)
{
	struct odb_descr d;

	return live_descr(db, &d) &&
	       (d.padding[0] == ODB_GROWING || d.size != size || d.current_size != cur);
}

/*
 * Did a writer change the file while a reader copied it (or is it growing
 * it)? The copy is read in order, so its bucket heads can be newer than its
 * descriptor and nodes; a descriptor that moved since explains any chain
 * defect. When the defect was the index of the node right after the used
 * ones, it may be an insert in flight: the writer links a node before it
 * commits it, and may sleep in between on a write fault. Then, while a
 * writer holds the file, wait up to 300 ms for the commit.
 */
static bool writer_active(const odb_t *db, uint32_t size, uint32_t cur, uint32_t bad)
{
	const bool in_flight = bad == cur && cur < size;
	const uint64_t end = mono_ms() + 300;

	if (descr_moved(db, size, cur))
		return true;
	if (!in_flight || !writer_present(db->fd))
		return false;
	while (mono_ms() < end) {
		nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		if (descr_moved(db, size, cur))
			return true;
	}
	return false;
}

int odb_check(const odb_t *db, char *err, size_t err_len)
{
	uint32_t size, cur, bad = 0, bucket = 0;
	int rc;

	if (!db->base)
		return fail(-EINVAL, err, err_len, "%s: not open", db->path ? db->path : "odb");
	rc = op_header_check(db->base, db->path, err, err_len);
	if (rc)
		return rc;
	if (db->mode == ODB_RDWR) {
		rc = check_geometry(db->base, db->map_len, db->path, err, err_len, &size, &cur);
		if (rc)
			return rc;
		if (size != db->size || cur != db->cur)
			return fail(-EINVAL, err, err_len,
				    "%s: descriptor says size %" PRIu32 ", current_size %" PRIu32
				    " but the writer has %" PRIu32 ", %" PRIu32
				    ": changed by another process",
				    db->path, size, cur, db->size, db->cur);
		return check_chains(db, size, cur, &bad, &bucket, NULL, err, err_len);
	}
	/*
	 * A reader checks its copy. Chains that a writer changed while the
	 * copy was read (insert, growth) may look broken: that is not
	 * corruption, and the copy's nodes stay valid to read.
	 */
	size = db->size;
	cur = db->cur;
	rc = check_chains(db, size, cur, &bad, &bucket, NULL, err, err_len);
	if (rc == -EINVAL && writer_active(db, size, cur, bad))
		rc = 0;
	else if (rc == -EINVAL && bad == cur && db->descr->padding[0] == ODB_INSERTING && err &&
		 strlen(err) + 1 < err_len)
		snprintf(err + strlen(err), err_len - strlen(err),
			 ": a writer died inside an insert (a writer reopening it repairs it)");
	return rc;
}

static bool header_is_zero(const struct opd_header *h)
{
	static const struct opd_header zero;

	return !memcmp(h, &zero, sizeof(zero));
}

/*
 * Reserve [from, to) on disk before anything maps or touches it, so a full
 * disk is an error return and not a SIGBUS later. Writing the zeros (rather
 * than posix_fallocate) makes the filesystem reserve the blocks (ext4/xfs
 * delayed allocation, tmpfs pages) and leaves the pages in the page cache:
 * the first touches through the mapping are then minor faults, which makes
 * inserts ~1.5-2x faster than with unwritten extents (tests/bench/bench_odb).
 * On failure the file is cut back to @from and stays as it was.
 */
static int reserve(int fd, uint64_t from, uint64_t to)
{
	static const char zeros[16384];
	uint64_t off = from;
	int rc = 0;

	while (off < to) {
		size_t len = to - off > sizeof(zeros) ? sizeof(zeros) : (size_t)(to - off);
		ssize_t w = pwrite(fd, zeros, len, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = w < 0 ? -errno : -ENOSPC;
			break;
		}
		off += (uint64_t)w;
	}
	if (rc && ftruncate(fd, (off_t)from)) {
		/* best effort: the size check rejects a half-grown file anyway */
	}
	return rc;
}

/* unmap a writer's file or free a reader's copy */
static void drop_view(odb_t *db)
{
	if (db->base && db->mode == ODB_RDONLY)
		free(db->base);
	else if (db->base && db->base != MAP_FAILED)
		munmap(db->base, db->map_len);
	db->base = NULL;
	db->descr = NULL;
}

void odb_close(odb_t *db)
{
	drop_view(db);
	if (db->fd >= 0)
		close(db->fd);
	free(db->path);
	memset(db, 0, sizeof(*db));
	db->fd = -1;
}

/* relink nodes 1..cur-1 in order at their bucket heads (OProfile's rebuild) */
static void rebuild_hash(odb_t *db, uint32_t size, uint32_t cur)
{
	uint32_t i;

	memset(db->hash, 0, (size_t)size * sizeof(odb_index_t));
	for (i = 1; i < cur; i++) {
		uint32_t b = odb_hash(db->nodes[i].key, size);

		db->nodes[i].next = db->hash[b];
		db->hash[b] = i;
	}
}

/*
 * A writer found the growth marker: the previous writer died while doubling
 * the table. Nodes 1..current_size-1 are intact and the old bucket area was
 * not touched yet; cut any added tail and relink the chains for the size the
 * descriptor states. Returns 0 or -errno; a file this does not fit is left
 * to the normal checks.
 */
static int repair_growth(odb_t *db)
{
	struct odb_descr *d = (struct odb_descr *)((char *)db->base + ODB_DESCR_OFFSET);
	uint32_t size = d->size, cur = d->current_size;
	uint64_t len = ODB_FILE_SIZE(size);
	void *nb;

	if (!is_pow2(size) || size > ODB_MAX_NODES || cur < 1 || cur > size || db->map_len < len ||
	    db->map_len > ODB_FILE_SIZE(2 * (uint64_t)size))
		return 0;
	if (db->map_len > len) {
		if (ftruncate(db->fd, (off_t)len))
			return -errno;
		nb = mremap(db->base, db->map_len, (size_t)len, 0);
		if (nb == MAP_FAILED)
			return -errno;
		db->base = nb;
		db->map_len = (size_t)len;
	}
	odb_set_pointers(db, size);
	rebuild_hash(db, size, cur);
	__atomic_store_n(&db->descr->padding[0], 0, __ATOMIC_RELEASE);
	return 0;
}

/*
 * A writer died inside an insert: node @cur (== current_size) is written and
 * linked at its bucket's head, but current_size was not raised (the commit,
 * done last). Nothing of it was recorded: unlink it. True if the file shows
 * exactly that (only the next writer may decide it: it holds the lock).
 */
static bool repair_insert(odb_t *db, uint32_t size, uint32_t cur)
{
	uint32_t b;

	if (db->descr->padding[0] != ODB_INSERTING || cur >= size)
		return false;
	b = odb_hash(db->nodes[cur].key, size);
	if (db->hash[b] != cur || db->nodes[cur].next >= cur)
		return false;
	db->hash[b] = db->nodes[cur].next;
	return true;
}

/* how long a reader waits for a writer to finish growing the file */
#define ODB_GROWTH_WAIT_MS 2000

/* a writer maps the whole file; on failure db->base stays NULL */
static int map_file(odb_t *db, size_t len, char *err, size_t err_len)
{
	db->map_len = len;
	db->base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, db->fd, 0);
	if (db->base == MAP_FAILED) {
		db->base = NULL;
		return fail(-errno, err, err_len, "%s: cannot map %zu bytes: %s", db->path, len,
			    strerror(errno));
	}
	db->descr = (struct odb_descr *)((char *)db->base + ODB_DESCR_OFFSET);
	return 0;
}

/*
 * A reader copies the first @len bytes of the file into private memory:
 * another process may truncate the file at any time, and a mapping would
 * then fault (SIGBUS) on the pages past the new end. The header and
 * descriptor come first, then the rest: nodes below the copied
 * current_size were committed before they were read. A file that ends
 * before @len gives -EIO. On failure db->base stays NULL.
 */
static int read_file(odb_t *db, size_t len, char *err, size_t err_len)
{
	const size_t first = len < ODB_NODE_OFFSET ? len : ODB_NODE_OFFSET;
	size_t done = 0;
	char *b = malloc(len ? len : 1);
	int rc;

	if (!b)
		return fail(-ENOMEM, err, err_len, "%s: no memory to read %zu bytes", db->path, len);
	while (done < len) {
		ssize_t r =
			pread(db->fd, b + done, (done < first ? first : len) - done, (off_t)done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = r < 0 ? fail(-errno, err, err_len, "%s: cannot read: %s", db->path,
					  strerror(errno)) :
				     fail(-EIO, err, err_len,
					  "%s: file shrank while being read (%zu bytes, %zu "
					  "expected): changed by another process",
					  db->path, done, len);
			free(b);
			return rc;
		}
		done += (size_t)r;
	}
	db->base = b;
	db->map_len = len;
	db->descr = (struct odb_descr *)(b + ODB_DESCR_OFFSET);
	return 0;
}

/*
 * A reader met a file that a writer may be changing (its copy of @len bytes
 * was short or inconsistent): wait for it (1 ms) and read it again, up to
 * ODB_GROWTH_WAIT_MS from the first wait. Only while a writer holds the file
 * or the file has grown since (a writer that grew it and exited). False:
 * neither, or the time is up; then the defect found is reported.
 */
static bool reader_wait(odb_t *db, size_t len, int *waited, uint64_t *deadline)
{
	struct stat st;

	if (!writer_present(db->fd) && (fstat(db->fd, &st) || (uint64_t)st.st_size <= len))
		return false;
	if (!(*waited)++)
		*deadline = mono_ms() + ODB_GROWTH_WAIT_MS;
	else if (mono_ms() >= *deadline)
		return false;
	drop_view(db);
	nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
	return true;
}

static int odb_open_as(odb_t *db, int dirfd, const char *path, enum odb_mode mode, bool expect_new,
		       char *err, size_t err_len)
{
	const bool rw = mode == ODB_RDWR;
	bool created = false, fresh = false;
	uint32_t size, cur;
	uint64_t deadline = 0;
	struct stat st;
	int rc, waited;

	memset(db, 0, sizeof(*db));
	db->fd = -1;
	db->mode = mode;
	db->path = strdup(path);
	if (!db->path)
		return fail(-ENOMEM, err, err_len, "%s: out of memory", path);

	/* O_NONBLOCK: never hang on a FIFO planted at the path; ignored for files */
	if (rw) {
		/* an existing file first (a writer reopens its files often), then create */
		if (!expect_new)
			db->fd = openat(dirfd, path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (expect_new || (db->fd < 0 && errno == ENOENT)) {
			db->fd = openat(dirfd, path,
					O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
			if (db->fd >= 0)
				created = true;
			else if (errno == EEXIST) /* created meanwhile by another writer */
				db->fd = openat(dirfd, path,
						O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		}
	} else {
		db->fd = openat(dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	}
	if (db->fd < 0) {
		rc = -errno;
		fail(rc, err, err_len, "%s: cannot open%s: %s", path, rw ? " for writing" : "",
		     rc == -ELOOP ? "is a symbolic link" : strerror(-rc));
		goto out_close;
	}
	if (rw) {
		rc = writer_lock(db->fd);
		if (rc) {
			fail(rc, err, err_len,
			     "%s: already open for writing elsewhere (its writer lock is held): a "
			     "second writer would corrupt its hash chains",
			     path);
			goto out_close;
		}
	}
	for (waited = 0;;) {
		if (created) {
			/* made by this open with O_EXCL: a regular file, empty */
			memset(&st, 0, sizeof(st));
			st.st_mode = S_IFREG;
		} else if (fstat(db->fd, &st)) {
			rc = fail(-errno, err, err_len, "%s: cannot stat: %s", path,
				  strerror(errno));
			goto out_close;
		}
		if (!S_ISREG(st.st_mode)) {
			rc = fail(-EINVAL, err, err_len, "%s: not a regular file", path);
			goto out_close;
		}
		if (st.st_size == 0) {
			if (!rw) {
				rc = fail(-EIO, err, err_len,
					  "%s: empty sample file (0 bytes): never written or truncated",
					  path);
				goto out_close;
			}
			rc = reserve(db->fd, 0, ODB_FILE_SIZE(ODB_INITIAL_NODES));
			if (rc) {
				fail(rc, err, err_len, "%s: cannot reserve %" PRIu64 " bytes: %s",
				     path, ODB_FILE_SIZE(ODB_INITIAL_NODES), strerror(-rc));
				goto out_unlink;
			}
			st.st_size = (off_t)ODB_FILE_SIZE(ODB_INITIAL_NODES);
			fresh = true;
		}
		if ((uint64_t)st.st_size > SIZE_MAX / 2) {
			rc = fail(-EFBIG, err, err_len, "%s: file too large (%jd bytes)", path,
				  (intmax_t)st.st_size);
			goto out_close;
		}
		if (rw) {
			rc = map_file(db, (size_t)st.st_size, err, err_len);
			if (rc)
				goto out_unlink;
		} else {
			rc = read_file(db, (size_t)st.st_size, err, err_len);
			if (rc == -EIO && reader_wait(db, (size_t)st.st_size, &waited, &deadline))
				continue;
			if (rc)
				goto out_close;
		}
		if (fresh) {
			/* the new file is all zeros: header left to the caller */
			db->descr->size = ODB_INITIAL_NODES;
			db->descr->current_size = 1;
			odb_set_pointers(db, ODB_INITIAL_NODES);
			db->size = ODB_INITIAL_NODES;
			db->cur = 1;
			db->created = created;
			return 0;
		}
		if (db->map_len < sizeof(struct opd_header)) {
			rc = check_geometry(db->base, db->map_len, path, err, err_len, &size, &cur);
			goto out_close;
		}
		if (!rw || !header_is_zero(db->base)) {
			rc = op_header_check(db->base, path, err, err_len);
			/* a writer that just created the file fills the header next */
			if (rc && !rw && header_is_zero(db->base) &&
			    reader_wait(db, db->map_len, &waited, &deadline))
				continue;
			if (rc)
				goto out_close;
		}
		if (rw && db->map_len >= ODB_NODE_OFFSET && growing(db)) {
			rc = repair_growth(db);
			if (rc) {
				fail(rc, err, err_len, "%s: cannot repair an unfinished growth: %s",
				     path, strerror(-rc));
				goto out_close;
			}
		}
		rc = check_geometry(db->base, db->map_len, path, err, err_len, &size, &cur);
		if (!rc)
			break;
		/*
		 * A reader may meet a writer that grew the file since fstat()
		 * (read it again) or is growing it now (wait for it).
		 */
		if (rw || db->map_len < ODB_NODE_OFFSET ||
		    !reader_wait(db, db->map_len, &waited, &deadline))
			goto out_close;
	}
	/* from here on, size and cur are the opener's own: never read back from the file */
	odb_set_pointers(db, size);
	db->size = size;
	db->cur = cur;
	if (rw) {
		uint32_t bad, bucket;
		bool descending;

		/* the writer walks chains: they must be sound before the first update */
		rc = check_chains(db, size, cur, &bad, &bucket, &descending, err, err_len);
		if (rc == -EINVAL && repair_insert(db, size, cur))
			rc = check_chains(db, size, cur, &bad, &bucket, &descending, err, err_len);
		if (rc)
			goto out_close;
		/* a dead writer's insert marker, its node committed or unlinked: at rest again */
		if (db->descr->padding[0] == ODB_INSERTING)
			__atomic_store_n(&db->descr->padding[0], 0, __ATOMIC_RELEASE);
		/* odb_update() needs the writers' order; files of other writers may differ */
		if (!descending) {
			__atomic_store_n(&db->descr->padding[0], ODB_GROWING, __ATOMIC_RELEASE);
			rebuild_hash(db, size, cur);
			__atomic_store_n(&db->descr->padding[0], 0, __ATOMIC_RELEASE);
		}
	}
	return 0;

out_unlink:
	if (created)
		unlinkat(dirfd, path, 0);
	else if (fresh && ftruncate(db->fd, 0)) {
		/* leave it empty, as it was; best effort */
	}
out_close:
	odb_close(db);
	return rc;
}

int odb_open(odb_t *db, int dirfd, const char *path, enum odb_mode mode, char *err, size_t err_len)
{
	return odb_open_as(db, dirfd, path, mode, false, err, err_len);
}

int odb_create(odb_t *db, int dirfd, const char *path, char *err, size_t err_len)
{
	return odb_open_as(db, dirfd, path, ODB_RDWR, true, err, err_len);
}

struct opd_header *odb_header(odb_t *db)
{
	return db->base;
}

const struct odb_node *odb_nodes(const odb_t *db, size_t *count)
{
	if (!db->descr) {
		*count = 0;
		return NULL;
	}
	/* the opener's own count: a reader's snapshot, a writer's committed nodes */
	*count = db->cur ? db->cur - 1 : 0;
	return db->nodes + 1;
}

int odb_sync(odb_t *db)
{
	if (!db->base)
		return -EBADF;
	if (db->mode == ODB_RDONLY)
		return 0; /* a private copy: nothing to write back */
	if (msync(db->base, db->map_len, MS_ASYNC))
		return -errno;
	return 0;
}

/*
 * Double the capacity: reserve the disk space first, then mremap, then
 * rebuild the bucket table in the new tail (zeros: the new table starts at
 * 16*2*size, beyond the old end at 20*size), then publish the new size. As in
 * OProfile, nodes 1..used are re-linked in order at their bucket heads; the
 * old bucket bytes stay as junk in node slots >= current_size, which readers
 * never look at. The growth marker brackets it all (see ODB_GROWING).
 */
static __attribute__((noinline)) int odb_grow(odb_t *db)
{
	const uint32_t old_size = db->size, cur = db->cur;
	uint32_t new_size;
	uint64_t new_len;
	void *nb;
	int rc;

	if (old_size >= ODB_MAX_NODES)
		return -EFBIG;
	new_size = old_size * 2;
	new_len = ODB_FILE_SIZE(new_size);
	if (new_len > SIZE_MAX / 2)
		return -EFBIG;
	__atomic_store_n(&db->descr->padding[0], ODB_GROWING, __ATOMIC_RELEASE);
	rc = reserve(db->fd, db->map_len, new_len);
	if (rc)
		goto out_unmark;
	nb = mremap(db->base, db->map_len, (size_t)new_len, MREMAP_MAYMOVE);
	if (nb == MAP_FAILED) {
		rc = -errno;
		if (ftruncate(db->fd, (off_t)db->map_len)) {
			/* as in reserve() */
		}
		goto out_unmark;
	}
	db->base = nb;
	db->map_len = (size_t)new_len;
	odb_set_pointers(db, new_size);
	rebuild_hash(db, new_size, cur);
	db->size = new_size;
	__atomic_store_n(&db->descr->size, new_size, __ATOMIC_RELEASE);
out_unmark:
	__atomic_store_n(&db->descr->padding[0], 0, __ATOMIC_RELEASE);
	return rc;
}

/* slow paths out of line, so the hit path needs no stack frame */
static __attribute__((noinline, cold)) int odb_saturate(odb_t *db, struct odb_node *node)
{
	node->value = UINT32_MAX;
	db->saturated++;
	return 0;
}

/*
 * The file was changed under the writer (an index out of order): stop using
 * it. cur = 1 stops every later walk at its first index; inserts check broken.
 */
static __attribute__((noinline, cold)) int odb_changed(odb_t *db)
{
	db->broken = true;
	db->cur = 1;
	return -EIO;
}

static __attribute__((noinline)) int odb_insert(odb_t *db, odb_key_t key, odb_value_t n)
{
	struct odb_node *node;
	uint32_t b, i = db->cur;
	int rc;

	if (__builtin_expect(db->broken, 0))
		return -EIO;
	if (__builtin_expect(i >= db->size, 0)) {
		rc = odb_grow(db);
		if (rc)
			return rc;
	}
	/* 1 <= i < size: node i and bucket b lie in the mapping, whatever the file says */
	b = odb_hash(key, db->size);
	node = &db->nodes[i];
	__atomic_store_n(&db->descr->padding[0], ODB_INSERTING, __ATOMIC_RELEASE);
	node->key = key;
	node->value = n;
	node->next = db->hash[b];
	db->hash[b] = i;
	db->cur = i + 1;
	/* commit: a concurrent reader sees the node only once it is complete */
	__atomic_store_n(&db->descr->current_size, i + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&db->descr->padding[0], 0, __ATOMIC_RELEASE);
	return 0;
}

int odb_update(odb_t *db, odb_key_t key, odb_value_t n)
{
	struct odb_node *nodes = db->nodes;
	uint32_t i = db->hash[odb_hash(key, db->size)], bound = db->cur - 1;

	/* each index below the one before (the first below cur): bounded, no cycle */
	while (i - 1 < bound) {
		if (nodes[i].key == key) {
			uint32_t v = nodes[i].value + n;

			if (__builtin_expect(v < n, 0))
				return odb_saturate(db, &nodes[i]);
			nodes[i].value = v;
			return 0;
		}
		bound = i - 1;
		i = nodes[i].next;
	}
	if (__builtin_expect(i != 0, 0))
		return odb_changed(db);
	return odb_insert(db, key, n);
}
