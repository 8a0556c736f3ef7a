/*
 * spool.c - the push plugin's bounded on-disk queue (see spool.h). Every
 * entry is written to a temporary name and renamed into place, so a crash
 * leaves either a whole entry or a temporary that the next start removes.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_trust.h"
#include "spool.h"

/* no profile of a host is this large; a bigger file is not one of ours */
#define SPOOL_ENTRY_MAX (256u << 20)
#define SPOOL_TMP ".tmp"

static void spool_name(const struct spool_entry *e, char *buf, size_t len)
{
	snprintf(buf, len, "%020" PRIu64 "-%" PRIu64 "-%" PRIu64 "-%" PRIu64 ".pprof.gz", e->seq,
		 e->from_s, e->until_s, e->hz);
}

static bool spool_parse_name(const char *name, struct spool_entry *e)
{
	char tail[16];

	if (sscanf(name, "%20" SCNu64 "-%" SCNu64 "-%" SCNu64 "-%" SCNu64 ".%15s", &e->seq,
		   &e->from_s, &e->until_s, &e->hz, tail) != 5)
		return false;
	return !strcmp(tail, "pprof.gz");
}

static int spool_cmp(const void *a, const void *b)
{
	const struct spool_entry *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int spool_push_entry(struct spool *sp, const struct spool_entry *e)
{
	if (sp->n == sp->cap) {
		unsigned cap = sp->cap ? sp->cap * 2 : 16;
		struct spool_entry *ne = realloc(sp->e, cap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		sp->e = ne;
		sp->cap = cap;
	}
	sp->e[sp->n++] = *e;
	sp->bytes += e->bytes;
	return 0;
}

void spool_pop(struct spool *sp)
{
	char name[128];

	if (!sp->n)
		return;
	spool_name(&sp->e[0], name, sizeof(name));
	unlinkat(sp->dfd, name, 0);
	sp->bytes -= sp->e[0].bytes;
	memmove(sp->e, sp->e + 1, (sp->n - 1) * sizeof(*sp->e));
	sp->n--;
}

/* make room for @len more bytes in one more file, oldest first */
static void spool_trim(struct spool *sp, uint64_t len, unsigned files)
{
	while (sp->n && (sp->n + files > sp->max_files || sp->bytes + len > sp->max_bytes)) {
		spool_pop(sp);
		sp->dropped++;
	}
}

/* what an earlier run left: whole entries are kept, temporaries removed */
static int spool_scan(struct spool *sp, char *err, size_t err_len)
{
	int fd = dup(sp->dfd);
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (fd < 0 || !(d = fdopendir(fd))) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		snprintf(err, err_len, "cannot list the spool: %s", strerror(-rc));
		return rc;
	}
	while (!rc && (de = readdir(d))) {
		struct spool_entry e = { 0 };
		struct stat st;

		if (de->d_name[0] == '.') {
			if (!strncmp(de->d_name, SPOOL_TMP, strlen(SPOOL_TMP)))
				unlinkat(sp->dfd, de->d_name, 0);
			continue;
		}
		/* only our own regular files count; anything else is left alone */
		if (!spool_parse_name(de->d_name, &e) ||
		    fstatat(sp->dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_size > SPOOL_ENTRY_MAX)
			continue;
		e.bytes = (uint64_t)st.st_size;
		rc = spool_push_entry(sp, &e);
		if (e.seq >= sp->next_seq)
			sp->next_seq = e.seq + 1;
	}
	closedir(d);
	if (rc) {
		snprintf(err, err_len, "out of memory");
		return rc;
	}
	if (sp->n) /* an empty spool has no array: qsort(NULL, 0) is undefined */
		qsort(sp->e, sp->n, sizeof(*sp->e), spool_cmp);
	spool_trim(sp, 0, 0);
	return 0;
}

int spool_open(struct spool *sp, const char *session_dir, const char *name, uint64_t max_bytes,
	       unsigned max_files, char *err, size_t err_len)
{
	struct op_trust t = op_trust_for(geteuid(), geteuid());
	char why[512];
	struct stat st;
	int sfd, rc;

	memset(sp, 0, sizeof(*sp));
	sp->dfd = -1;
	sp->max_bytes = max_bytes;
	sp->max_files = max_files;
	sp->next_seq = 1;
	/* the daemon checked and holds the session directory; the spool is below it */
	sfd = open(session_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0) {
		rc = -errno;
		snprintf(err, err_len, "%s: cannot open the session directory: %s", session_dir,
			 strerror(-rc));
		return rc;
	}
	if (mkdirat(sfd, name, 0700) && errno != EEXIST) {
		rc = -errno;
		snprintf(err, err_len, "%s/%s: cannot create the spool: %s", session_dir, name,
			 strerror(-rc));
		close(sfd);
		return rc;
	}
	rc = op_trust_openat(&t, sfd, name, O_RDONLY | O_DIRECTORY, S_IFDIR, "spool directory",
			     session_dir, &st, why, sizeof(why));
	close(sfd);
	if (rc < 0) {
		snprintf(err, err_len, "%s", why);
		return rc;
	}
	sp->dfd = rc;
	/* profiles are the host's business: nobody else reads the spool */
	if (st.st_mode & 077)
		fchmod(sp->dfd, 0700);
	rc = spool_scan(sp, err, err_len);
	if (rc)
		spool_close(sp);
	return rc;
}

void spool_close(struct spool *sp)
{
	if (sp->dfd >= 0)
		close(sp->dfd);
	sp->dfd = -1;
	free(sp->e);
	sp->e = NULL;
	sp->n = sp->cap = 0;
}

int spool_add(struct spool *sp, const void *buf, size_t len, uint64_t from_s, uint64_t until_s,
	      uint64_t hz, char *err, size_t err_len)
{
	struct spool_entry e = {
		.seq = sp->next_seq++, .from_s = from_s, .until_s = until_s, .hz = hz, .bytes = len
	};
	char name[128], tmp[160];
	const char *p = buf;
	size_t left = len;
	int fd, rc = 0;

	if (len > sp->max_bytes || len > SPOOL_ENTRY_MAX) {
		sp->dropped++;
		snprintf(err, err_len,
			 "a profile of %zu bytes is larger than the spool (%" PRIu64
			 " bytes): dropped",
			 len, sp->max_bytes);
		return -EFBIG;
	}
	spool_trim(sp, len, 1);
	spool_name(&e, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), SPOOL_TMP "%s", name);
	fd = openat(sp->dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	while (left) {
		ssize_t w = write(fd, p, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = w < 0 ? -errno : -EIO;
			break;
		}
		p += w;
		left -= (size_t)w;
	}
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && renameat(sp->dfd, tmp, sp->dfd, name))
		rc = -errno;
	if (rc) {
		unlinkat(sp->dfd, tmp, 0);
		goto out;
	}
	rc = spool_push_entry(sp, &e);
	if (rc)
		unlinkat(sp->dfd, name, 0);
out:
	if (rc)
		snprintf(err, err_len, "spool: cannot write %s: %s", name, strerror(-rc));
	return rc;
}

int spool_peek(struct spool *sp, struct spool_entry *ent, void **buf, size_t *len, char *err,
	       size_t err_len)
{
	char name[128];
	struct stat st;
	ssize_t r;
	void *b;
	int fd, rc;

	if (!sp->n)
		return -ENOENT;
	*ent = sp->e[0];
	spool_name(ent, name, sizeof(name));
	fd = openat(sp->dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		goto fail;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (uint64_t)st.st_size != ent->bytes) {
		close(fd);
		rc = -EINVAL;
		goto fail;
	}
	b = malloc(ent->bytes ? ent->bytes : 1);
	if (!b) {
		close(fd);
		rc = -ENOMEM;
		goto fail;
	}
	r = pread(fd, b, ent->bytes, 0);
	close(fd);
	if (r != (ssize_t)ent->bytes) {
		free(b);
		rc = -EIO;
		goto fail;
	}
	*buf = b;
	*len = ent->bytes;
	return 0;
fail:
	snprintf(err, err_len, "spool: cannot read %s: %s", name,
		 rc == -EINVAL ? "changed on disk" : strerror(-rc));
	return rc;
}
