/*
 * session.c - session directory set-up and teardown. Every path below the
 * session directory is opened relative to its fd with O_NOFOLLOW.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_header.h"
#include "oprofile_sdk.h"
#include "session.h"

static int session_err(char *err, size_t len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int session_err(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int session_mkdir_p(const char *dir)
{
	char path[PATH_MAX];
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != 0)
			continue;
		path[i] = 0;
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		if (i < n)
			path[i] = '/';
	}
	return 0;
}

int session_rm_tree(int dfd, const char *name)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int fd, rc = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dfd, name, 0) ? -errno : 0;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (session_rm_tree(dirfd(d), de->d_name))
			rc = -EIO;
	}
	closedir(d);
	if (unlinkat(dfd, name, AT_REMOVEDIR) && !rc)
		rc = -errno;
	return rc;
}

static int session_open_log(struct session *s)
{
	int fd;
	FILE *f;

	if (s->log_file)
		fd = open(s->log_file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	else
		fd = openat(s->samples_fd, "oprofiled.log",
			    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -errno;
	if (s->log) {
		/* keep the FILE (plugins and the loader hold it): swap its fd */
		fflush(s->log);
		if (dup2(fd, fileno(s->log)) < 0) {
			int e = errno;

			close(fd);
			return -e;
		}
		close(fd);
		return 0;
	}
	f = fdopen(fd, "a");
	if (!f) {
		close(fd);
		return -errno;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	s->log = f;
	return 0;
}

int session_reopen_log(struct session *s)
{
	return session_open_log(s);
}

int session_write_pid(struct session *s)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());

	if (s->lockfd < 0)
		return -EBADF;
	if (ftruncate(s->lockfd, 0) || pwrite(s->lockfd, buf, n, 0) != n)
		return -errno;
	return 0;
}

static int session_lock(struct session *s, char *err, size_t err_len)
{
	char buf[32];
	ssize_t n;
	int fd;

	fd = openat(s->dirfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return session_err(err, err_len, -errno, "%s/lock: cannot open the lock file: %s",
				   s->dir, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		int e = errno;

		n = pread(fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = 0;
		buf[strcspn(buf, "\n")] = 0;
		close(fd);
		if (e == EWOULDBLOCK)
			return session_err(err, err_len, -EBUSY,
					   "another oprofiled (pid %s) is using %s: stop it or "
					   "choose another --session-dir",
					   buf[0] ? buf : "?", s->dir);
		return session_err(err, err_len, -e, "%s/lock: cannot lock: %s", s->dir,
				   strerror(e));
	}
	s->lockfd = fd;
	n = session_write_pid(s);
	if (n) {
		s->lockfd = -1;
		close(fd);
		return session_err(err, err_len, (int)n, "%s/lock: cannot write: %s", s->dir,
				   strerror((int)-n));
	}
	return 0;
}

static int session_open_subdir(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0755) && errno != EEXIST)
		return -errno;
	return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* staged -> current again: the new current (no samples yet) is removed */
static int session_unstage(int samples_fd)
{
	int rc = session_rm_tree(samples_fd, "current");

	if (rc)
		return rc;
	if (renameat(samples_fd, SESSION_STAGED, samples_fd, "current"))
		return -errno;
	return 0;
}

int session_commit(struct session *s)
{
	int rc;

	if (!s->staged)
		return 0;
	rc = session_rm_tree(s->samples_fd, "previous");
	if (rc)
		return rc;
	if (renameat(s->samples_fd, SESSION_STAGED, s->samples_fd, "previous"))
		return -errno;
	s->staged = false;
	return 0;
}

int session_open(struct session *s, const char *dir, bool append, const char *log_file,
		 char *err, size_t err_len)
{
	char real[PATH_MAX];
	struct stat st;
	bool created = false;
	int rc;

	memset(s, 0, sizeof(*s));
	s->dirfd = s->lockfd = s->samples_fd = s->current_fd = -1;
	if (!dir || !*dir)
		return session_err(err, err_len, -EINVAL, "empty --session-dir");
	if (lstat(dir, &st) && errno == ENOENT) {
		rc = session_mkdir_p(dir);
		if (rc)
			return session_err(err, err_len, rc,
					   "session directory %s: cannot create it: %s", dir,
					   strerror(-rc));
		created = true;
	}
	if (lstat(dir, &st))
		return session_err(err, err_len, -errno, "session directory %s: %s", dir,
				   strerror(errno));
	if (S_ISLNK(st.st_mode))
		return session_err(err, err_len, -ELOOP,
				   "session directory %s is a symbolic link: refusing it, give "
				   "the real directory",
				   dir);
	if (!S_ISDIR(st.st_mode))
		return session_err(err, err_len, -ENOTDIR,
				   "session directory %s is not a directory", dir);
	if (access(dir, W_OK | X_OK))
		return session_err(err, err_len, -EACCES,
				   "session directory %s is not writable: fix its permissions or "
				   "choose another --session-dir",
				   dir);
	if (!realpath(dir, real))
		return session_err(err, err_len, -errno, "session directory %s: %s", dir,
				   strerror(errno));
	s->dir = strdup(real);
	if (log_file)
		s->log_file = strdup(log_file);
	if (!s->dir || (log_file && !s->log_file)) {
		rc = session_err(err, err_len, -ENOMEM, "out of memory");
		goto out_fail;
	}
	s->dirfd = open(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dirfd < 0) {
		rc = session_err(err, err_len, -errno, "session directory %s: %s", real,
				 strerror(errno));
		goto out_fail;
	}
	rc = session_lock(s, err, err_len);
	if (rc)
		goto out_fail;
	rc = op_write_abi(s->dirfd, "abi");
	if (rc) {
		session_err(err, err_len, rc, "%s/abi: cannot write: %s", real, strerror(-rc));
		goto out_fail;
	}
	s->samples_fd = session_open_subdir(s->dirfd, "samples");
	if (s->samples_fd < 0) {
		rc = session_err(err, err_len, s->samples_fd, "%s/samples: %s (is it a symlink?)",
				 real, strerror(-s->samples_fd));
		goto out_fail;
	}
	/* an earlier start was killed before session_commit: its current holds no sample */
	if (fstatat(s->samples_fd, SESSION_STAGED, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		rc = session_unstage(s->samples_fd);
		if (rc) {
			session_err(err, err_len, rc,
				    "%s/samples/%s (left by an interrupted start): cannot put it "
				    "back as current: %s; move it by hand",
				    real, SESSION_STAGED, strerror(-rc));
			goto out_fail;
		}
	}
	if (!append && fstatat(s->samples_fd, "current", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (renameat(s->samples_fd, "current", s->samples_fd, SESSION_STAGED)) {
			rc = session_err(err, err_len, -errno,
					 "%s/samples: cannot move current aside: %s", real,
					 strerror(errno));
			goto out_fail;
		}
		s->staged = true;
	}
	s->current_fd = session_open_subdir(s->samples_fd, "current");
	if (s->current_fd < 0) {
		rc = session_err(err, err_len, s->current_fd,
				 "%s/samples/current: %s (is it a symlink?)", real,
				 strerror(-s->current_fd));
		goto out_fail;
	}
	rc = session_open_log(s);
	if (rc) {
		session_err(err, err_len, rc, "log file %s: %s",
			    s->log_file ? s->log_file : "samples/oprofiled.log", strerror(-rc));
		goto out_fail;
	}
	s->created = created;
	return 0;

out_fail:
	session_close(s);
	return rc;
}

int session_reopen_current(struct session *s)
{
	int fd = session_open_subdir(s->samples_fd, "current");

	if (fd < 0)
		return fd;
	if (s->current_fd < 0) {
		s->current_fd = fd;
		return 0;
	}
	if (dup3(fd, s->current_fd, O_CLOEXEC) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	return 0;
}

void session_close(struct session *s)
{
	if (s->log && s->log != stderr)
		fclose(s->log);
	s->log = NULL;
	if (s->current_fd >= 0)
		close(s->current_fd);
	if (s->staged && s->samples_fd >= 0)
		session_unstage(s->samples_fd); /* failed start: the old current comes back */
	if (s->samples_fd >= 0)
		close(s->samples_fd);
	if (s->lockfd >= 0) {
		unlinkat(s->dirfd, "lock", 0);
		close(s->lockfd);
	}
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->dir);
	free(s->log_file);
	memset(s, 0, sizeof(*s));
	s->dirfd = s->lockfd = s->samples_fd = s->current_fd = -1;
}

void session_discard(struct session *s)
{
	char *dir = s->created && s->dir ? strdup(s->dir) : NULL;

	session_close(s);
	if (dir) {
		char *slash = strrchr(dir, '/');
		int pfd;

		/* the directory is ours: remove it below its parent, never following links */
		if (slash && slash[1]) {
			*slash = '\0';
			pfd = open(dir[0] ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (pfd >= 0) {
				session_rm_tree(pfd, slash + 1);
				close(pfd);
			}
		}
		free(dir);
	}
}

void session_cpuinfo(const char *proc_root, struct op_cpuinfo *ci)
{
	char path[PATH_MAX], line[256];
	FILE *f;

	memset(ci, 0, sizeof(*ci));
	ci->size = sizeof(*ci);
	snprintf(path, sizeof(path), "%s/cpuinfo", proc_root ? proc_root : "/proc");
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');
		size_t klen;

		if (line[0] == '\n')
			break; /* first CPU only */
		if (!c)
			continue;
		/* the key is what precedes ':' without its trailing blanks */
		for (klen = (size_t)(c - line);
		     klen && (line[klen - 1] == ' ' || line[klen - 1] == '\t');)
			klen--;
		if (klen == 9 && !strncmp(line, "vendor_id", 9))
			sscanf(c + 1, " %15s", ci->vendor);
		else if (klen == 10 && !strncmp(line, "cpu family", 10))
			ci->family = (uint32_t)strtoul(c + 1, NULL, 10);
		else if (klen == 5 && !strncmp(line, "model", 5))
			ci->model = (uint32_t)strtoul(c + 1, NULL, 10);
		else if (klen == 8 && !strncmp(line, "stepping", 8))
			ci->stepping = (uint32_t)strtoul(c + 1, NULL, 10);
	}
	fclose(f);
}

double session_cpu_speed(const char *proc_root)
{
	char path[PATH_MAX], line[256];
	double mhz = 0.0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpuinfo", proc_root ? proc_root : "/proc");
	f = fopen(path, "re");
	if (!f)
		return 0.0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "cpu MHz", 7)) {
			const char *c = strchr(line, ':');

			if (c)
				mhz = strtod(c + 1, NULL);
			break;
		}
	}
	fclose(f);
	return mhz;
}
