/*
 * rotate.c - moves samples/current aside (save, reset, timed rotation) and
 * keeps the number of rotate-* sessions bounded, pruning by a sequence
 * number in the name (never reused) rather than by the clock. Every path is relative to
 * the samples directory fd and never follows a symlink.
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

#include "op_ksyms_store.h"
#include "op_session_layout.h"
#include "rotate.h"
#include "session.h"

static const char *const rotate_snapshot_files[] = { OP_SESSION_KALLSYMS, OP_SESSION_MODULES };

bool rotate_name_ok(const char *name)
{
	size_t i, n = name ? strlen(name) : 0;

	if (n == 0 || n >= ROTATE_NAME_MAX || name[0] == '.' || name[0] == '-')
		return false;
	if (!strcmp(name, OP_SESSION_CURRENT) || !strcmp(name, OP_SESSION_PREVIOUS) ||
	    !strcmp(name, OP_SESSION_STATS))
		return false;
	for (i = 0; i < n; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return false;
	}
	return true;
}

static bool rotate_exists(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

int rotate_move_current(int samples_fd, const char *name, bool replace, char *err, size_t err_len)
{
	struct stat st;
	int rc;

	/* reset replaces samples/previous, which no save may name */
	if (!(replace && name && !strcmp(name, OP_SESSION_PREVIOUS)) && !rotate_name_ok(name)) {
		snprintf(err, err_len,
			 "session name \"%s\": expected 1..%d characters of "
			 "A-Z a-z 0-9 . _ - (not starting with . or -, not current/previous/stats)",
			 name ? name : "", ROTATE_NAME_MAX - 1);
		return -EINVAL;
	}
	if (fstatat(samples_fd, OP_SESSION_CURRENT, &st, AT_SYMLINK_NOFOLLOW) ||
	    !S_ISDIR(st.st_mode)) {
		snprintf(err, err_len, "samples/current: no such directory - nothing to set aside");
		return -ENOENT;
	}
	if (rotate_exists(samples_fd, name)) {
		if (!replace) {
			snprintf(err, err_len,
				 "samples/%s already exists - choose another name or "
				 "remove it",
				 name);
			return -EEXIST;
		}
		rc = session_rm_tree(samples_fd, name);
		if (rc) {
			snprintf(err, err_len, "samples/%s: cannot remove the old one: %s", name,
				 strerror(-rc));
			return rc;
		}
	}
	if (renameat(samples_fd, OP_SESSION_CURRENT, samples_fd, name)) {
		rc = -errno;
		snprintf(err, err_len, "cannot move samples/current to samples/%s: %s", name,
			 strerror(errno));
		return rc;
	}
	return 0;
}

static int rotate_open_dir(int dfd, const char *name, bool create)
{
	if (create && mkdirat(dfd, name, 0755) && errno != EEXIST)
		return -errno;
	dfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return dfd < 0 ? -errno : dfd;
}

static int rotate_copy(int from_dfd, int to_dfd, const char *name)
{
	char buf[65536];
	int in, out, rc = 0;
	ssize_t n;

	in = openat(from_dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return -errno;
	out = openat(to_dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0) {
		rc = -errno;
		close(in);
		return rc;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			rc = -EIO;
			break;
		}
	}
	if (n < 0)
		rc = -errno;
	close(in);
	if (close(out) && !rc)
		rc = -errno;
	if (rc)
		unlinkat(to_dfd, name, 0);
	return rc;
}

int rotate_keep_snapshot(int samples_fd, const char *from)
{
	int from_dir, from_stats, cur, cur_stats, n = 0, rc = 0;
	size_t i;

	from_dir = rotate_open_dir(samples_fd, from, false);
	if (from_dir < 0)
		return from_dir;
	from_stats = rotate_open_dir(from_dir, OP_SESSION_STATS, false);
	close(from_dir);
	if (from_stats < 0)
		return from_stats == -ENOENT ? 0 : from_stats;
	cur = rotate_open_dir(samples_fd, OP_SESSION_CURRENT, true);
	if (cur < 0) {
		close(from_stats);
		return cur;
	}
	cur_stats = rotate_open_dir(cur, OP_SESSION_STATS, true);
	close(cur);
	if (cur_stats < 0) {
		close(from_stats);
		return cur_stats;
	}
	for (i = 0; i < sizeof(rotate_snapshot_files) / sizeof(rotate_snapshot_files[0]); i++) {
		const char *f = rotate_snapshot_files[i];
		struct stat st;

		if (fstatat(from_stats, f, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (linkat(from_stats, f, cur_stats, f, 0) == 0 || errno == EEXIST) {
			n++;
			continue;
		}
		rc = rotate_copy(from_stats, cur_stats, f);
		if (rc)
			break;
		n++;
	}
	close(from_stats);
	close(cur_stats);
	return rc ? rc : n;
}

/* rotate- + YYYYMMDDTHHMMSSZ + - : then the sequence number */
#define ROTATE_STAMP_LEN (sizeof(ROTATE_PREFIX) - 1 + 16 + 1)
#define ROTATE_SEQ_MIN_DIGITS 6
/* more digits is not a name of ours; 10^12 - 1 leaves no room for overflow */
#define ROTATE_SEQ_MAX_DIGITS 12

uint64_t rotate_seq(const char *name)
{
	static const char shape[] = "DDDDDDDDTDDDDDDZ-";
	const char *p;
	uint64_t v = 0;
	size_t i;

	if (strncmp(name, ROTATE_PREFIX, strlen(ROTATE_PREFIX)))
		return 0;
	p = name + strlen(ROTATE_PREFIX);
	for (i = 0; shape[i]; i++, p++) {
		if (shape[i] == 'D' ? (*p < '0' || *p > '9') : *p != shape[i])
			return 0;
	}
	for (i = 0; p[i]; i++) {
		if (p[i] < '0' || p[i] > '9' || i == ROTATE_SEQ_MAX_DIGITS)
			return 0;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	return i >= ROTATE_SEQ_MIN_DIGITS ? v : 0;
}

int rotate_stamp_name(int samples_fd, time_t t, uint64_t *seq, char *buf, size_t len)
{
	uint64_t next = *seq;
	struct tm tm;
	char **v;
	size_t n, i;
	int rc;

	/* four-digit years keep the stamp 16 characters long */
	if (!gmtime_r(&t, &tm) || tm.tm_year + 1900 > 9999 || tm.tm_year + 1900 < 1000)
		return -EINVAL;
	rc = rotate_list(samples_fd, &v, &n);
	if (rc)
		return rc;
	for (i = 0; i < n; i++)
		if (rotate_seq(v[i]) > next)
			next = rotate_seq(v[i]);
	rotate_free_list(v, n);
	if (len < ROTATE_STAMP_LEN + ROTATE_SEQ_MAX_DIGITS + 1)
		return -ENAMETOOLONG;
	strftime(buf, len, ROTATE_PREFIX "%Y%m%dT%H%M%SZ-", &tm);
	/* rotate_list saw directories only: step over any other kind of file */
	for (i = 0; i < 100; i++) {
		if (++next >= 1000000000000ull)
			return -EOVERFLOW;
		snprintf(buf + ROTATE_STAMP_LEN, len - ROTATE_STAMP_LEN, "%0*" PRIu64,
			 ROTATE_SEQ_MIN_DIGITS, next);
		if (!rotate_exists(samples_fd, buf)) {
			*seq = next;
			return 0;
		}
	}
	return -EEXIST;
}

/* oldest first: by sequence number, names without one before, by name */
static int rotate_cmp(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	uint64_t sx = rotate_seq(x), sy = rotate_seq(y);

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return strcmp(x, y);
}

void rotate_free_list(char **names, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int rotate_list(int samples_fd, char ***names, size_t *n)
{
	char **v = NULL;
	size_t cnt = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int fd;

	*names = NULL;
	*n = 0;
	fd = openat(samples_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (strncmp(de->d_name, ROTATE_PREFIX, strlen(ROTATE_PREFIX)) ||
		    fstatat(samples_fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(st.st_mode))
			continue;
		if (cnt == cap) {
			char **nv = realloc(v, (cap ? cap * 2 : 16) * sizeof(*v));

			if (!nv)
				goto out_nomem;
			v = nv;
			cap = cap ? cap * 2 : 16;
		}
		v[cnt] = strdup(de->d_name);
		if (!v[cnt])
			goto out_nomem;
		cnt++;
	}
	closedir(d);
	if (cnt)
		qsort(v, cnt, sizeof(*v), rotate_cmp);
	*names = v;
	*n = cnt;
	return 0;

out_nomem:
	closedir(d);
	rotate_free_list(v, cnt);
	return -ENOMEM;
}

int rotate_prune(int samples_fd, unsigned keep)
{
	char **v;
	size_t n, i;
	int rc, removed = 0;

	rc = rotate_list(samples_fd, &v, &n);
	if (rc)
		return rc;
	for (i = 0; i + keep < n; i++) {
		rc = session_rm_tree(samples_fd, v[i]);
		if (rc)
			break;
		removed++;
	}
	rotate_free_list(v, n);
	/* the kallsyms copies only the removed sessions linked go with them */
	if (removed)
		op_ksyms_store_prune(samples_fd);
	return rc ? rc : removed;
}
