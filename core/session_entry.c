/*
 * session_entry.c - the entries of the session: the log file, the lock file,
 * samples/ and samples/current, opened below the session directory's fd
 * with O_NOFOLLOW and checked; the staging of the old samples/current.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_session_layout.h"
#include "session.h"
#include "session_int.h"

/* ------------------------------------------------------------------ */
/* Entries of the session                                              */
/* ------------------------------------------------------------------ */

/*
 * Open the log (O_NONBLOCK: a FIFO planted there is refused, not waited
 * on), check it, and make it s->log or swap it in behind s->log.
 */
int session_open_log(struct session *s, char *err, size_t len)
{
	/* op_trust adds O_NOFOLLOW, O_CLOEXEC and O_NONBLOCK */
	const int flags = O_WRONLY | O_APPEND | O_CREAT;
	char subject[PATH_MAX + 64];
	int fd, dfd, rc;
	const char *name;
	FILE *f;

	if (s->log_file) {
		snprintf(subject, sizeof(subject), "log file %s", s->log_file);
		dfd = AT_FDCWD;
		name = s->log_file;
	} else {
		session_subject(s, OP_SESSION_LOG_PATH, subject, sizeof(subject));
		dfd = s->samples_fd;
		name = OP_SESSION_LOG;
	}
	fd = session_openat(s, dfd, name, flags, 0644, false, subject, err, len);
	if (fd < 0)
		return fd;
	rc = 0;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK))
		rc = session_err(err, len, -errno, "%s: %s", subject, strerror(errno));
	if (rc) {
		close(fd);
		return rc;
	}
	if (s->log) {
		/* keep the FILE (plugins and the loader hold it): swap its fd */
		fflush(s->log);
		if (dup2(fd, fileno(s->log)) < 0) {
			rc = session_err(err, len, -errno, "%s: %s", subject, strerror(errno));
			close(fd);
			return rc;
		}
		close(fd);
		return 0;
	}
	f = fdopen(fd, "a");
	if (!f) {
		rc = session_err(err, len, -errno, "%s: %s", subject, strerror(errno));
		close(fd);
		return rc;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	s->log = f;
	return 0;
}

int session_reopen_log(struct session *s)
{
	char err[PATH_MAX + 512];
	int rc = session_open_log(s, err, sizeof(err));

	if (rc && s->log)
		fprintf(s->log, "oprofiled: SIGHUP: %s - the log stays where it was\n", err);
	return rc;
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

int session_lock(struct session *s, char *err, size_t err_len)
{
	char buf[32], subject[PATH_MAX + 64];
	ssize_t n;
	int fd;

	session_subject(s, OP_SESSION_LOCK, subject, sizeof(subject));
	fd = session_openat(s, s->dirfd, OP_SESSION_LOCK, O_RDWR | O_CREAT, 0644, false, subject,
			    err, err_len);
	if (fd < 0)
		return fd;
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

/* open (creating it) directory @rel of the session, @name below @dfd, and check it */
int session_open_subdir(const struct session *s, int dfd, const char *name, const char *rel,
			char *err, size_t len)
{
	char subject[PATH_MAX + 64];

	session_subject(s, rel, subject, sizeof(subject));
	if (mkdirat(dfd, name, 0755) && errno != EEXIST)
		return session_err(err, len, -errno, "%s: cannot create it: %s", subject,
				   strerror(errno));
	return session_openat(s, dfd, name, O_RDONLY | O_DIRECTORY, 0, true, subject, err, len);
}

/* an existing entry @name of samples/ that is moved or reused: a trusted directory */
int session_check_moved(const struct session *s, const char *name, bool *exists, char *err,
			size_t len)
{
	char rel[64], subject[PATH_MAX + 64];
	struct stat st;

	*exists = false;
	if (fstatat(s->samples_fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 :
					 session_err(err, len, -errno, "%s/samples/%s: %s", s->dir,
						     name, strerror(errno));
	*exists = true;
	snprintf(rel, sizeof(rel), OP_SESSION_SAMPLES "/%s", name);
	session_subject(s, rel, subject, sizeof(subject));
	return session_check_entry(s, &st, subject, true, err, len);
}

/* staged -> current again: the new current (no samples yet) is removed */
int session_unstage(int samples_fd)
{
	int rc = session_rm_tree(samples_fd, OP_SESSION_CURRENT);

	if (rc)
		return rc;
	if (renameat(samples_fd, SESSION_STAGED, samples_fd, OP_SESSION_CURRENT))
		return -errno;
	return 0;
}

int session_commit(struct session *s)
{
	int rc;

	if (!s->staged)
		return 0;
	rc = session_rm_tree(s->samples_fd, OP_SESSION_PREVIOUS);
	if (rc)
		return rc;
	if (renameat(s->samples_fd, SESSION_STAGED, s->samples_fd, OP_SESSION_PREVIOUS))
		return -errno;
	s->staged = false;
	return 0;
}

/* an existing directory with no entry, or one that holds samples/: a session's own */
