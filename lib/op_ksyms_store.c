/*
 * op_ksyms_store.c - one copy of each distinct kallsyms snapshot below
 * samples/.kallsyms, hard-linked into the sessions (op_ksyms_store.h).
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_ksyms_store.h"
#include "op_session_layout.h"
#include "op_trust.h"

/*
 * the store directory below @samples_fd, created when @create with the
 * mode and group of samples/ (0700 in a root's private session, 02750 and
 * the group in a session_group's); -errno if none or not ours
 */
static int ksst_open(int samples_fd, bool create)
{
	struct op_trust t = op_trust_for(geteuid(), geteuid());
	struct stat st, sst;
	char why[256];
	bool made = false;
	int fd;

	if (create) {
		if (fstat(samples_fd, &sst))
			return -errno;
		if (!mkdirat(samples_fd, OP_SESSION_KSYMS_STORE, 0700))
			made = true;
		else if (errno != EEXIST)
			return -errno;
	}
	fd = op_trust_openat(&t, samples_fd, OP_SESSION_KSYMS_STORE, O_RDONLY | O_DIRECTORY,
			     S_IFDIR, "kallsyms store", NULL, &st, why, sizeof(why));
	if (fd >= 0 && made &&
	    ((st.st_gid != sst.st_gid && fchown(fd, (uid_t)-1, sst.st_gid)) ||
	     fchmod(fd, sst.st_mode & 07777))) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

/* the same bytes in both (regular, trusted, @size long) files? */
static bool ksst_same(int a, int b, uint64_t size)
{
	char x[65536], y[65536];
	uint64_t off = 0;

	while (off < size) {
		size_t want = size - off < sizeof(x) ? (size_t)(size - off) : sizeof(x);
		ssize_t n = pread(a, x, want, (off_t)off), m;

		if (n <= 0)
			return false;
		m = pread(b, y, (size_t)n, (off_t)off);
		if (m != n || memcmp(x, y, (size_t)n))
			return false;
		off += (uint64_t)n;
	}
	/* nothing past @size either */
	return pread(a, x, 1, (off_t)size) == 0 && pread(b, y, 1, (off_t)size) == 0;
}

/* stats/@name := the store's @key: link beside, rename over (atomic for readers) */
static int ksst_use(int store, const char *key, int stats_fd, const char *tmp, const char *name)
{
	char lnk[80];

	snprintf(lnk, sizeof(lnk), ".%s.%ld.lnk", name, (long)getpid());
	unlinkat(stats_fd, lnk, 0);
	if (linkat(store, key, stats_fd, lnk, 0))
		return -errno;
	if (renameat(stats_fd, lnk, stats_fd, name)) {
		int e = errno;

		unlinkat(stats_fd, lnk, 0);
		return -e;
	}
	/*
	 * when stats/@name already was this copy (a forked daemon and its
	 * parent both committing), rename() did nothing and left @lnk
	 */
	unlinkat(stats_fd, lnk, 0);
	unlinkat(stats_fd, tmp, 0);
	return 1;
}

int op_ksyms_store_commit(int samples_fd, int stats_fd, const char *tmp, const char *name,
			  uint64_t hash, uint64_t size)
{
	struct op_trust t = op_trust_for(geteuid(), geteuid());
	struct stat st, tst;
	char key[64], why[256];
	int store, fd, tfd, rc = 0;

	op_ksyms_store_prune(samples_fd);
	snprintf(key, sizeof(key), "%016" PRIx64 "-%" PRIu64, hash, size);
	store = ksst_open(samples_fd, true);
	if (store < 0)
		goto out_plain;
	fd = op_trust_openat(&t, store, key, O_RDONLY, S_IFREG, "kallsyms copy", NULL, &st, why,
			     sizeof(why));
	if (fd >= 0) {
		tfd = openat(stats_fd, tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (tfd >= 0 && !fstat(tfd, &tst) && (uint64_t)st.st_size == size &&
		    st.st_mode == tst.st_mode && ksst_same(fd, tfd, size))
			rc = ksst_use(store, key, stats_fd, tmp, name);
		if (tfd >= 0)
			close(tfd);
		close(fd);
		if (rc == 1) {
			close(store);
			return 1;
		}
		/* another mode (a session group's), a clash or a race: keep our own */
	} else if (fd == -ENOENT) {
		/* the first of its content: the store keeps a link (EEXIST: a race, fine) */
		linkat(stats_fd, tmp, store, key, 0);
	}
	close(store);
out_plain:
	if (renameat(stats_fd, tmp, stats_fd, name))
		return -errno;
	return 0;
}

int op_ksyms_store_prune(int samples_fd)
{
	struct dirent *de;
	int store, n = 0;
	DIR *d;

	store = ksst_open(samples_fd, false);
	if (store < 0)
		return store == -ENOENT ? 0 : store;
	d = fdopendir(store);
	if (!d) {
		int e = errno;

		close(store);
		return -e;
	}
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		/* a link count of 1: only the store's own name is left */
		if (!fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISREG(st.st_mode) && st.st_nlink == 1 && !unlinkat(dirfd(d), de->d_name, 0))
			n++;
	}
	closedir(d);
	return n;
}
