/*
 * replay.c - writing and reading the --record stream. The writer batches
 * whole ring chunks into a large buffer (no syscall per record); the reader
 * maps the file and checks every length against the file size.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_trust.h"
#include "replay.h"

#define REPLAY_WBUF (1u << 20)

struct replay_writer {
	int fd;
	int error; /* first write error (-errno) */
	uint8_t *buf;
	size_t used;
	uint64_t bytes; /* total written or buffered */
};

static int replay_write_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int replay_writer_flush(struct replay_writer *w)
{
	int err;

	if (w->error)
		return w->error;
	err = replay_write_all(w->fd, w->buf, w->used);
	w->used = 0;
	if (err)
		w->error = err;
	return err;
}

static int replay_wput(struct replay_writer *w, const void *p, size_t n)
{
	if (w->error)
		return w->error;
	if (w->used + n > REPLAY_WBUF) {
		int err = replay_writer_flush(w);

		if (err)
			return err;
		if (n > REPLAY_WBUF) { /* big chunk: straight to the file */
			err = replay_write_all(w->fd, p, n);
			if (err)
				w->error = err;
			w->bytes += n;
			return err;
		}
	}
	memcpy(w->buf + w->used, p, n);
	w->used += n;
	w->bytes += n;
	return 0;
}

/*
 * Create @base in @dfd for writing: a new file (O_EXCL: nothing already at
 * the name is written through, a symlink least of all), or with
 * REPLAY_OVERWRITE an existing regular file replaced by a new one (unlinked
 * first: a hard link to it keeps its content). fd, or -errno with @err.
 */
static int replay_create_at(int dfd, const char *base, const char *path, unsigned flags, char *err,
			    size_t err_len)
{
	/* the created file is checked as every file oprofiled trusts (lib/op_trust) */
	const struct op_trust t = op_trust_for(geteuid(), geteuid());
	/* as root the stream holds every process's names and the kernel's addresses */
	mode_t mode = geteuid() == 0 ? 0600 : 0644;
	struct stat st;
	int fd;

	if ((flags & REPLAY_OVERWRITE) && !fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW)) {
		if (S_ISLNK(st.st_mode)) {
			snprintf(err, err_len,
				 "record file %s is a symbolic link - not followed, "
				 "not even with --record-overwrite: remove it or choose another name",
				 path);
			return -ELOOP;
		}
		if (!S_ISREG(st.st_mode)) {
			snprintf(err, err_len,
				 "record file %s exists and is not a regular file - "
				 "not replaced: choose another name",
				 path);
			return -EEXIST;
		}
		if (unlinkat(dfd, base, 0) && errno != ENOENT) {
			snprintf(err, err_len, "record file %s: cannot replace it: %s", path,
				 strerror(errno));
			return -errno;
		}
	}
	/* O_EXCL: nothing already at the name is written through (op_trust adds O_NOFOLLOW) */
	fd = op_trust_createat(&t, dfd, base, O_WRONLY | O_CREAT | O_EXCL, mode, S_IFREG,
			       "record file", path, &st, err, err_len);
	if (fd >= 0 || fd == -EPERM)
		return fd;
	if (fd != -EEXIST) {
		snprintf(err, err_len, "record file %s: cannot create: %s", path, strerror(-fd));
		return fd;
	}
	if (!fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
		snprintf(err, err_len,
			 "record file %s is a symbolic link - not followed: remove "
			 "it or choose another name",
			 path);
	else
		snprintf(err, err_len,
			 "record file %s exists - give --record-overwrite to replace "
			 "it, or choose another name",
			 path);
	return -EEXIST;
}

/*
 * As root, the directory @dir (@st) the record file is created in must be
 * trusted by op_trust's rule for root (root's, writable by root alone),
 * stricter than refusing only a directory every user can write: a user who
 * owns it or whose group may write it chooses what is at the name and can
 * swap the file under root just the same. 0, or -EPERM with @err.
 */
static int replay_check_dir(const char *path, const char *dir, const struct stat *st, char *err,
			    size_t err_len)
{
	const struct op_trust root = op_trust_for(0, 0);
	const char *advice = "as root, record into a directory only root can write";

	if (geteuid() != 0 || !op_trust_stat(&root, st, "directory", dir, err, err_len))
		return 0;
	/* op_trust decides; the record file's words (/tmp's case named as such) */
	if (st->st_mode & S_IWOTH)
		snprintf(err, err_len,
			 "record file %s: directory %s is writable by every user "
			 "(mode %04o, as /tmp) - %s",
			 path, dir, (unsigned)(st->st_mode & 07777), advice);
	else if (st->st_mode & root.forbid)
		snprintf(err, err_len,
			 "record file %s: directory %s is writable by its group "
			 "(mode %04o) - %s",
			 path, dir, (unsigned)(st->st_mode & 07777), advice);
	else
		snprintf(err, err_len,
			 "record file %s: directory %s is owned by uid %u, not root - "
			 "%s",
			 path, dir, (unsigned)st->st_uid, advice);
	return -EPERM;
}

int replay_writer_create(struct replay_writer **out, const char *path, unsigned flags,
			 uint64_t queue_bytes, uint64_t queue_entries, char *err, size_t err_len)
{
	struct replay_file_header h;
	struct replay_writer *w;
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *dir;
	struct stat st;
	int dfd, ret;

	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		snprintf(err, err_len, "record file %s: not a file name", path);
		return -EINVAL;
	}
	dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!dir) {
		snprintf(err, err_len, "record file %s: out of memory", path);
		return -ENOMEM;
	}
	/* the checks and the create go through one fd of the directory */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ret = -errno;
		snprintf(err, err_len, "record file %s: directory %s: %s", path, dir,
			 strerror(errno));
		goto out_dir;
	}
	/*
	 * a directory a user can write (/tmp): the user chooses what is at the
	 * name, and sticky or not, a file root creates there is the user's to
	 * trip over (planted names, swapped symlinks) - root records elsewhere
	 */
	if (fstat(dfd, &st)) {
		ret = -errno;
		snprintf(err, err_len, "record file %s: directory %s: %s", path, dir,
			 strerror(errno));
		goto out_dfd;
	}
	ret = replay_check_dir(path, dir, &st, err, err_len);
	if (ret)
		goto out_dfd;
	w = calloc(1, sizeof(*w));
	if (!w || !(w->buf = malloc(REPLAY_WBUF))) {
		free(w);
		ret = -ENOMEM;
		snprintf(err, err_len, "record file %s: out of memory", path);
		goto out_dfd;
	}
	w->fd = replay_create_at(dfd, base, path, flags, err, err_len);
	if (w->fd < 0) {
		ret = w->fd;
		free(w->buf);
		free(w);
		goto out_dfd;
	}
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, REPLAY_MAGIC, 8);
	h.version = REPLAY_VERSION;
	h.header_size = sizeof(h);
	h.queue_bytes = queue_bytes;
	h.queue_entries = queue_entries;
	replay_wput(w, &h, sizeof(h));
	*out = w;
	ret = 0;
out_dfd:
	close(dfd);
out_dir:
	free(dir);
	return ret;
}

int replay_writer_open(struct replay_writer **out, const char *path, uint64_t queue_bytes,
		       uint64_t queue_entries, char *err, size_t err_len)
{
	return replay_writer_create(out, path, 0, queue_bytes, queue_entries, err, err_len);
}

int replay_write(struct replay_writer *w, uint32_t type, uint64_t a, uint64_t b, const void *p1,
		 size_t n1, const void *p2, size_t n2)
{
	static const uint8_t zero[8];
	struct replay_chunk c = { .type = type, .len = n1 + n2, .a = a, .b = b };
	size_t pad = (8 - ((n1 + n2) & 7)) & 7;

	replay_wput(w, &c, sizeof(c));
	if (n1)
		replay_wput(w, p1, n1);
	if (n2)
		replay_wput(w, p2, n2);
	if (pad)
		replay_wput(w, zero, pad);
	return w->error;
}

uint64_t replay_writer_bytes(const struct replay_writer *w)
{
	return w->bytes;
}

int replay_writer_close(struct replay_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = replay_writer_flush(w);
	if (close(w->fd) && !err)
		err = -errno;
	free(w->buf);
	free(w);
	return err;
}

int replay_reader_open(struct replay_reader *r, const char *path, char *err, size_t err_len)
{
	const struct op_trust t = op_trust_for(geteuid(), geteuid());
	struct stat st;
	int fd;

	memset(r, 0, sizeof(*r));
	snprintf(r->path, sizeof(r->path), "%s", path);
	/*
	 * op_trust's rule: a file root or the reader owns and others cannot
	 * write (they could truncate it under the mapping, or change it between
	 * the checks below and the reading), not through a symbolic link, and a
	 * FIFO does not hang the open
	 */
	fd = op_trust_openat(&t, AT_FDCWD, path, O_RDONLY, S_IFREG, "replay file", path, &st, err,
			     err_len);
	if (fd == -EINVAL) {
		snprintf(err, err_len, "replay file %s: not a regular file", path);
		return fd;
	}
	if (fd == -EPERM) {
		size_t n = strnlen(err, err_len);

		if (n + 1 < err_len)
			snprintf(err + n, err_len - n, " - %s",
				 geteuid() == 0 ?
					 "as root, replay a file root owns and only root can write" :
					 "replay a file you or root own that others cannot write");
		return fd;
	}
	if (fd == -ELOOP)
		return fd;
	if (fd < 0) {
		snprintf(err, err_len, "replay file %s: cannot open: %s", path, strerror(-fd));
		return fd;
	}
	if ((size_t)st.st_size < sizeof(r->hdr)) {
		snprintf(err, err_len,
			 "replay file %s: offset 0: truncated header (%lld bytes, expected at least %zu) - not a complete --record file",
			 path, (long long)st.st_size, sizeof(r->hdr));
		close(fd);
		return -EINVAL;
	}
	r->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		snprintf(err, err_len, "replay file %s: mmap: %s", path, strerror(errno));
		return -EIO;
	}
	r->size = (size_t)st.st_size;
	memcpy(&r->hdr, r->map, sizeof(r->hdr));
	if (memcmp(r->hdr.magic, REPLAY_MAGIC, 8)) {
		snprintf(err, err_len,
			 "replay file %s: offset 0: bad magic (expected \"%s\") - not an oprofiled --record file",
			 path, REPLAY_MAGIC);
		goto bad;
	}
	if (r->hdr.version != REPLAY_VERSION) {
		snprintf(err, err_len,
			 "replay file %s: offset 8: version %u, this oprofiled reads version %u - record it again",
			 path, r->hdr.version, REPLAY_VERSION);
		goto bad;
	}
	if (r->hdr.header_size < sizeof(r->hdr) || r->hdr.header_size > r->size ||
	    (r->hdr.header_size & 7)) {
		snprintf(err, err_len, "replay file %s: offset 12: header size %u is impossible",
			 path, r->hdr.header_size);
		goto bad;
	}
	r->off = r->hdr.header_size;
	return 0;
bad:
	replay_reader_close(r);
	return -EINVAL;
}

int replay_next(struct replay_reader *r, struct replay_chunk *c, const uint8_t **payload, char *err,
		size_t err_len)
{
	size_t padded;

	if (r->size - r->off < sizeof(*c)) {
		snprintf(err, err_len,
			 "replay file %s: offset %zu: truncated (no REPLAY_END chunk; %zu trailing bytes) - the recording was cut short",
			 r->path, r->off, r->size - r->off);
		return -EINVAL;
	}
	memcpy(c, r->map + r->off, sizeof(*c));
	if (c->type < REPLAY_EVENT || c->type > REPLAY_END) {
		snprintf(err, err_len, "replay file %s: offset %zu: unknown chunk type %u", r->path,
			 r->off, c->type);
		return -EINVAL;
	}
	if (c->len > REPLAY_MAX_PAYLOAD) {
		snprintf(err, err_len,
			 "replay file %s: offset %zu: chunk length %llu exceeds the limit %llu",
			 r->path, r->off, (unsigned long long)c->len,
			 (unsigned long long)REPLAY_MAX_PAYLOAD);
		return -EINVAL;
	}
	padded = ((size_t)c->len + 7) & ~(size_t)7;
	if (r->size - r->off - sizeof(*c) < padded) {
		snprintf(err, err_len,
			 "replay file %s: offset %zu: chunk of %llu bytes runs past the end of the file (%zu bytes)",
			 r->path, r->off, (unsigned long long)c->len, r->size);
		return -EINVAL;
	}
	*payload = r->map + r->off + sizeof(*c);
	r->off += sizeof(*c) + padded;
	if (c->type == REPLAY_END)
		return 0;
	return 1;
}

void replay_reader_close(struct replay_reader *r)
{
	if (r->map)
		munmap((void *)r->map, r->size);
	r->map = NULL;
}
