/*
 * op_trust.c - ownership and write-permission checks of files and of every
 * directory above them, opened without following symbolic links (see
 * op_trust.h).
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "op_trust.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct op_trust op_trust_for(uid_t euid, uid_t owner)
{
	struct op_trust t;

	t.owner = euid == 0 ? 0 : owner;
	t.forbid = euid == 0 ? S_IWGRP | S_IWOTH : S_IWOTH;
	return t;
}

bool op_trust_uid(const struct op_trust *t, uid_t uid)
{
	return uid == 0 || uid == t->owner;
}

int op_trust_stat(const struct op_trust *t, const struct stat *st, const char *what,
		  const char *path, char *why, size_t why_len)
{
	const char *sep = path ? " " : "";

	if (!path)
		path = "";
	if (!op_trust_uid(t, st->st_uid)) {
		if (t->owner == 0)
			snprintf(why, why_len, "%s%s%s is owned by uid %u, not root", what, sep,
				 path, (unsigned)st->st_uid);
		else
			snprintf(why, why_len, "%s%s%s is owned by uid %u, neither uid %u nor root",
				 what, sep, path, (unsigned)st->st_uid, (unsigned)t->owner);
		return -EPERM;
	}
	if (st->st_mode & t->forbid) {
		snprintf(why, why_len, "%s%s%s is writable by %s (mode %04o)", what, sep, path,
			 (t->forbid & S_IWGRP) ? "group or others" : "others",
			 (unsigned)(st->st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

static const char *trust_type_name(mode_t type)
{
	switch (type & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFSOCK:
		return "a socket";
	case S_IFIFO:
		return "a FIFO";
	case S_IFLNK:
		return "a symbolic link";
	case S_IFCHR:
	case S_IFBLK:
		return "a device";
	default:
		return "of an unknown type";
	}
}

int op_trust_openat(const struct op_trust *t, int dfd, const char *name, int flags, mode_t type,
		    const char *what, const char *path, struct stat *st, char *why, size_t why_len)
{
	return op_trust_createat(t, dfd, name, flags & ~O_CREAT, 0, type, what, path, st, why,
				 why_len);
}

int op_trust_createat(const struct op_trust *t, int dfd, const char *name, int flags, mode_t mode,
		      mode_t type, const char *what, const char *path, struct stat *st, char *why,
		      size_t why_len)
{
	const char *sep = path ? " " : "";
	int fd, rc;

	if (!path)
		path = "";
	fd = openat(dfd, name, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, mode);
	if (fd < 0) {
		/* -EPERM means "not trusted" below: the kernel's own refusal is -EACCES */
		rc = errno == EPERM ? -EACCES : -errno;
		/* O_PATH | O_NOFOLLOW opens the link itself: say which it was */
		if (rc == -ELOOP || rc == -ENOTDIR) {
			struct stat lst;

			if (!fstatat(dfd, name, &lst, AT_SYMLINK_NOFOLLOW) && S_ISLNK(lst.st_mode)) {
				snprintf(why, why_len, "%s%s%s is a symbolic link - not followed",
					 what, sep, path);
				return -ELOOP;
			}
		}
		snprintf(why, why_len, "%s%s%s: %s", what, sep, path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, st)) {
		rc = -errno;
		snprintf(why, why_len, "%s%s%s: %s", what, sep, path, strerror(-rc));
		goto out_close;
	}
	if (type && (st->st_mode & S_IFMT) != (type & S_IFMT)) {
		rc = (st->st_mode & S_IFMT) == S_IFLNK ? -ELOOP : -EINVAL;
		snprintf(why, why_len, "%s%s%s is %s, not %s", what, sep, path,
			 trust_type_name(st->st_mode), trust_type_name(type));
		goto out_close;
	}
	rc = op_trust_stat(t, st, what, *sep ? path : NULL, why, why_len);
	if (rc)
		goto out_close;
	return fd;
out_close:
	close(fd);
	return rc;
}

/* "@what @path: " before the message in @why */
static void trust_prefix(char *why, size_t why_len, const char *what, const char *path)
{
	char tmp[PATH_MAX + 512];

	snprintf(tmp, sizeof(tmp), "%s %s: %s", what, path, why);
	snprintf(why, why_len, "%s", tmp);
}

int op_trust_open_path(const struct op_trust *t, const char *path, int flags, mode_t type,
		       const char *what, struct stat *st, char *why, size_t why_len)
{
	char dir[PATH_MAX], comp[NAME_MAX + 1];
	const char *at, *slash;
	int dfd, fd, rc;
	size_t n;

	if (!path || path[0] != '/') {
		snprintf(why, why_len, "%s %s: not an absolute path", what, path ? path : "(null)");
		return -EINVAL;
	}
	if (strlen(path) >= sizeof(dir)) {
		snprintf(why, why_len, "%s %.64s...: %s", what, path, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	/* O_PATH: a directory the caller may only search (0711) is walked as the kernel would */
	dfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		rc = -errno;
		snprintf(why, why_len, "%s %s: /: %s", what, path, strerror(-rc));
		return rc;
	}
	strcpy(dir, "/");
	for (at = path; *at == '/'; at++)
		;
	for (;;) {
		if (fstat(dfd, st)) {
			rc = -errno;
			snprintf(why, why_len, "%s %s: %s: %s", what, path, dir, strerror(-rc));
			goto out_dir;
		}
		/* a directory above: trusted, or root's and sticky (/tmp) */
		if (st->st_uid != 0 || !(st->st_mode & S_ISVTX)) {
			rc = op_trust_stat(t, st, "directory", dir, why, why_len);
			if (rc) {
				trust_prefix(why, why_len, what, path);
				goto out_dir;
			}
		}
		slash = strchr(at, '/');
		if (!slash)
			break;
		n = (size_t)(slash - at);
		if (n > NAME_MAX) {
			rc = -ENAMETOOLONG;
			snprintf(why, why_len, "%s %s: %s", what, path, strerror(-rc));
			goto out_dir;
		}
		memcpy(comp, at, n);
		comp[n] = '\0';
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
		fd = openat(dfd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			struct stat lst;

			rc = -errno;
			if (!fstatat(dfd, comp, &lst, AT_SYMLINK_NOFOLLOW) && S_ISLNK(lst.st_mode)) {
				rc = -ELOOP;
				snprintf(why, why_len, "%s %s: %s is a symbolic link - not followed",
					 what, path, dir);
			} else {
				snprintf(why, why_len, "%s %s: %s: %s", what, path, dir,
					 strerror(-rc));
			}
			goto out_dir;
		}
		close(dfd);
		dfd = fd;
		while (*++slash == '/')
			;
		at = slash;
	}
	if (!*at) {
		rc = -EISDIR;
		snprintf(why, why_len, "%s %s: ends with '/', no file name", what, path);
		goto out_dir;
	}
	fd = op_trust_openat(t, dfd, at, flags, type, what, path, st, why, why_len);
	close(dfd);
	return fd;
out_dir:
	close(dfd);
	return rc;
}
