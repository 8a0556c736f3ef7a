/*
 * session.c - session directory set-up and teardown. Every path below the
 * session directory is opened relative to its fd with O_NOFOLLOW.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_header.h"
#include "op_session_layout.h"
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

/* ------------------------------------------------------------------ */
/* What a root daemon trusts                                           */
/* ------------------------------------------------------------------ */

static const char session_advice_dir[] =
	"a root oprofiled trusts only root-owned session directories that group and other "
	"cannot write (chown root and chmod go-w, or choose another --session-dir)";
static const char session_advice_ancestor[] =
	"a root oprofiled trusts a session directory only below root-owned directories that "
	"group and other cannot write (a sticky one like /tmp above a root-owned entry "
	"excepted) - choose another --session-dir";
static const char session_advice_entry[] =
	"a root oprofiled reuses only root-owned entries of its session that group and other "
	"cannot write - remove it, or choose another --session-dir";

/* append ": @advice" to the message in @err */
static int session_advise(char *err, size_t len, int rc, const char *advice)
{
	size_t n = err && len ? strlen(err) : 0;

	if (n && n < len)
		snprintf(err + n, len - n, ": %s", advice);
	return rc;
}

/* "uid 1000 (tester)", or "uid 1000" when no user has it */
static void session_owner(uid_t uid, char *buf, size_t len)
{
	struct passwd pw, *res = NULL;
	char tmp[1024];

	if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
		snprintf(buf, len, "uid %u (%s)", (unsigned)uid, res->pw_name);
	else
		snprintf(buf, len, "uid %u", (unsigned)uid);
}

static const char *session_type(mode_t m)
{
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISLNK(m))
		return "a symbolic link";
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISREG(m))
		return "a regular file";
	return "a device";
}

int session_trusted(const struct stat *st, const char *subject, char *err, size_t err_len)
{
	char owner[128];

	if (st->st_uid != 0) {
		session_owner(st->st_uid, owner, sizeof(owner));
		return session_err(err, err_len, -EPERM, "%s is owned by %s, not root", subject,
				   owner);
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return session_err(err, err_len, -EPERM,
				   "%s is writable by group or other (mode %04o)", subject,
				   (unsigned)(st->st_mode & 07777));
	if (!S_ISDIR(st->st_mode) && st->st_nlink > 1)
		return session_err(err, err_len, -EPERM, "%s has %lu hard links", subject,
				   (unsigned long)st->st_nlink);
	return 0;
}

/*
 * @st is the session's entry named @subject: a directory (@want_dir) or a
 * regular file, and as root a trusted one. 0 or -errno with a message.
 */
static int session_check_entry(const struct session *s, const struct stat *st,
			       const char *subject, bool want_dir, char *err, size_t len)
{
	if (want_dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
		return session_err(err, len, want_dir ? -ENOTDIR : -EINVAL,
				   "%s is not a %s (%s): remove it", subject,
				   want_dir ? "directory" : "regular file", session_type(st->st_mode));
	if (!s->strict)
		return 0;
	return session_advise(err, len, session_trusted(st, subject, err, len),
			      session_advice_entry);
}

static int session_check_fd(const struct session *s, int fd, const char *subject, bool want_dir,
			    char *err, size_t len)
{
	struct stat st;

	if (fstat(fd, &st))
		return session_err(err, len, -errno, "%s: cannot stat: %s", subject,
				   strerror(errno));
	return session_check_entry(s, &st, subject, want_dir, err, len);
}

/*
 * @name below @dfd could not be opened (errno @e): say why, naming what is
 * there instead of a directory or regular file (a symlink, a FIFO, ...).
 */
static int session_open_error(const struct session *s, int dfd, const char *name,
			      const char *subject, bool want_dir, int e, char *err, size_t len)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
		return session_check_entry(s, &st, subject, want_dir, err, len);
	return session_err(err, len, -e, "%s: %s", subject, strerror(e));
}

/* "session directory DIR: REL" */
static void session_subject(const struct session *s, const char *rel, char *buf, size_t len)
{
	snprintf(buf, len, "session directory %s: %s", s->dir, rel);
}

/*
 * Root or a session_group: @fd, an existing directory of the session (@rel,
 * "" for the session directory), gets the session's mode (0700, or 02750
 * and the group). A change is noted in @note for the log.
 */
static int session_restrict(const struct session *s, int fd, const char *rel, char *note,
			    size_t note_len, char *err, size_t err_len)
{
	const mode_t want = s->shared ? 02750 : 0700;
	bool regroup;
	struct stat st;
	size_t n;

	if (!s->strict && !s->shared)
		return 0;
	if (fstat(fd, &st))
		return session_err(err, err_len, -errno, "session directory %s%s%s: %s", s->dir,
				   *rel ? ": " : "", rel, strerror(errno));
	regroup = s->shared && st.st_gid != s->gid;
	if (regroup && fchown(fd, (uid_t)-1, s->gid))
		return session_err(err, err_len, -errno,
				   "session directory %s%s%s: cannot give it to session_group "
				   "gid %u: %s",
				   s->dir, *rel ? ": " : "", rel, (unsigned)s->gid, strerror(errno));
	if (!regroup && (st.st_mode & 07777) == want)
		return 0;
	if (fchmod(fd, want))
		return session_err(err, err_len, -errno,
				   "session directory %s%s%s: cannot chmod %04o: %s", s->dir,
				   *rel ? ": " : "", rel, (unsigned)want, strerror(errno));
	n = note ? strlen(note) : 0;
	if (note && n < note_len)
		snprintf(note + n, note_len - n,
			 "oprofiled: session directory %s%s%s was mode %04o: now %04o%s\n", s->dir,
			 *rel ? ": " : "", rel, (unsigned)(st.st_mode & 07777), (unsigned)want,
			 s->shared ? ", group of session_group"
				   : " (a root oprofiled keeps its session private; "
				     "session_group shares it with a group)");
	return 0;
}

/* ------------------------------------------------------------------ */
/* The path                                                            */
/* ------------------------------------------------------------------ */

/*
 * @dir made absolute (from the cwd) with "//", "." and ".." resolved by
 * name: no symbolic link is followed later, so that names what is walked.
 */
static char *session_normalise(const char *dir)
{
	char cwd[PATH_MAX], *in, *out, *comp, *save = NULL;
	size_t n = 0;

	if (dir[0] == '/') {
		cwd[0] = 0;
	} else if (!getcwd(cwd, sizeof(cwd))) {
		return NULL;
	}
	if (asprintf(&in, "%s/%s", cwd, dir) < 0)
		return NULL;
	out = malloc(strlen(in) + 2);
	if (!out) {
		free(in);
		return NULL;
	}
	for (comp = strtok_r(in, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		if (!strcmp(comp, "."))
			continue;
		if (!strcmp(comp, "..")) {
			while (n && out[--n] != '/')
				;
			continue;
		}
		n += (size_t)sprintf(out + n, "/%s", comp);
	}
	if (!n)
		out[n++] = '/';
	out[n] = 0;
	free(in);
	return out;
}

/*
 * Open s->dir from "/" one component at a time, never through a symbolic
 * link, creating what is missing (0755 less the umask: 0700 as root). As
 * root each parent must be root-owned and not writable by group or other
 * unless sticky: the entry below it is then root's (checked on the next
 * step, or as the session directory), which no one else may move. Returns
 * the session directory's fd, or -errno with a message.
 */
static int session_walk(struct session *s, bool *created, char *err, size_t len)
{
	const char *p = s->dir, *comp, *next;
	char name[NAME_MAX + 1], where[PATH_MAX], parent[PATH_MAX], subject[PATH_MAX + 64];
	struct stat pst, st;
	int fd, nfd, rc;

	/* O_PATH: a parent the user may only search (0711) is walked as the kernel would */
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &pst)) {
		rc = session_err(err, len, -errno, "session directory %s: /: %s", p,
				 strerror(errno));
		goto out_close;
	}
	for (comp = p + 1; *comp; comp = next) {
		size_t n = strcspn(comp, "/");
		bool last = !comp[n];

		next = comp + n + !last;
		if (n > NAME_MAX) {
			rc = session_err(err, len, -ENAMETOOLONG, "session directory %s: %s",
					 p, strerror(ENAMETOOLONG));
			goto out_close;
		}
		memcpy(name, comp, n);
		name[n] = 0;
		snprintf(where, sizeof(where), "%.*s", (int)(comp + n - p), p);
		snprintf(parent, sizeof(parent), "%.*s", comp - p > 1 ? (int)(comp - p - 1) : 1, p);
		if (s->strict && (pst.st_uid != 0 || ((pst.st_mode & (S_IWGRP | S_IWOTH)) &&
						      !(pst.st_mode & S_ISVTX)))) {
			snprintf(subject, sizeof(subject), "session directory %s: %s", p, parent);
			if (pst.st_uid != 0)
				rc = session_advise(err, len, session_trusted(&pst, subject, err, len),
						    session_advice_ancestor);
			else /* root's, but others may write it and it is not sticky */
				rc = session_err(err, len, -EPERM,
						 "session directory %s: %s is writable by group or other "
						 "(mode %04o) and not sticky: %s",
						 p, parent, (unsigned)(pst.st_mode & 07777),
						 session_advice_ancestor);
			goto out_close;
		}
		nfd = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT) {
			if (mkdirat(fd, name, 0755) == 0) {
				*created = last;
			} else if (errno != EEXIST) {
				rc = session_err(err, len, -errno,
						 "session directory %s: cannot create %s: %s", p, where,
						 strerror(errno));
				goto out_close;
			}
			nfd = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			int e = errno;

			if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				rc = last ? session_err(err, len, -ELOOP,
							"session directory %s is a symbolic link: "
							"refusing it, give the real directory", p)
					  : session_err(err, len, -ELOOP,
							"session directory %s: %s is a symbolic link: "
							"refusing it, give a path without symbolic links",
							p, where);
			else if (e == ENOTDIR || e == ELOOP)
				rc = last ? session_err(err, len, -ENOTDIR,
							"session directory %s is not a directory", p)
					  : session_err(err, len, -ENOTDIR,
							"session directory %s: %s is not a directory",
							p, where);
			else
				rc = session_err(err, len, -e, "session directory %s: %s: %s", p, where,
						 strerror(e));
			goto out_close;
		}
		close(fd);
		fd = nfd;
		if (fstat(fd, &pst)) {
			rc = session_err(err, len, -errno, "session directory %s: %s: %s", p, where,
					 strerror(errno));
			goto out_close;
		}
	}
	if (s->strict) {
		snprintf(subject, sizeof(subject), "session directory %s", p);
		rc = session_trusted(&pst, subject, err, len);
		if (rc) {
			session_advise(err, len, rc, session_advice_dir);
			goto out_close;
		}
	}
	/* the directory itself, opened for real through the fd just checked */
	nfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (nfd < 0) {
		rc = session_err(err, len, -errno, "session directory %s: %s", p, strerror(errno));
		goto out_close;
	}
	close(fd);
	return nfd;

out_close:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Entries of the session                                              */
/* ------------------------------------------------------------------ */

/*
 * Open the log (O_NONBLOCK: a FIFO planted there is refused, not waited
 * on), check it, and make it s->log or swap it in behind s->log.
 */
static int session_open_log(struct session *s, char *err, size_t len)
{
	const int flags = O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
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
	fd = openat(dfd, name, flags, 0644);
	if (fd < 0)
		return session_open_error(s, dfd, name, subject, false, errno, err, len);
	rc = session_check_fd(s, fd, subject, false, err, len);
	if (!rc && fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK))
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

static int session_lock(struct session *s, char *err, size_t err_len)
{
	char buf[32], subject[PATH_MAX + 64];
	ssize_t n;
	int fd, rc;

	session_subject(s, OP_SESSION_LOCK, subject, sizeof(subject));
	fd = openat(s->dirfd, OP_SESSION_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0)
		return session_open_error(s, s->dirfd, OP_SESSION_LOCK, subject, false, errno, err, err_len);
	rc = session_check_fd(s, fd, subject, false, err, err_len);
	if (rc) {
		close(fd);
		return rc;
	}
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
static int session_open_subdir(const struct session *s, int dfd, const char *name,
			       const char *rel, char *err, size_t len)
{
	char subject[PATH_MAX + 64];
	int fd, rc;

	session_subject(s, rel, subject, sizeof(subject));
	if (mkdirat(dfd, name, 0755) && errno != EEXIST)
		return session_err(err, len, -errno, "%s: cannot create it: %s", subject,
				   strerror(errno));
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return session_open_error(s, dfd, name, subject, true, errno, err, len);
	rc = session_check_fd(s, fd, subject, true, err, len);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

/* an existing entry @name of samples/ that is moved or reused: a trusted directory */
static int session_check_moved(const struct session *s, const char *name, bool *exists,
			       char *err, size_t len)
{
	char rel[64], subject[PATH_MAX + 64];
	struct stat st;

	*exists = false;
	if (fstatat(s->samples_fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : session_err(err, len, -errno, "%s/samples/%s: %s",
							 s->dir, name, strerror(errno));
	*exists = true;
	snprintf(rel, sizeof(rel), OP_SESSION_SAMPLES "/%s", name);
	session_subject(s, rel, subject, sizeof(subject));
	return session_check_entry(s, &st, subject, true, err, len);
}

/* staged -> current again: the new current (no samples yet) is removed */
static int session_unstage(int samples_fd)
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
static bool session_is_own(int dirfd)
{
	struct dirent *de;
	struct stat st;
	bool empty = true;
	DIR *d;
	int fd;

	if (fstatat(dirfd, OP_SESSION_SAMPLES, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return true;
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return false;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	while (empty && (de = readdir(d)))
		empty = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..");
	closedir(d);
	return empty;
}

static int session_group_gid(const char *group, gid_t *gid)
{
	struct group gr, *res = NULL;
	char buf[4096];
	int rc = getgrnam_r(group, &gr, buf, sizeof(buf), &res);

	if (rc)
		return -rc;
	if (!res)
		return -ENOENT;
	*gid = res->gr_gid;
	return 0;
}

int session_open_conf(struct session *s, const struct session_conf *c, char *err,
		      size_t err_len)
{
	char note[2048] = "";
	bool created = false, exists;
	int rc, fd;

	memset(s, 0, sizeof(*s));
	s->dirfd = s->lockfd = s->samples_fd = s->current_fd = -1;
	if (!c->dir || !*c->dir)
		return session_err(err, err_len, -EINVAL, "empty --session-dir");
	if (c->group) {
		rc = session_group_gid(c->group, &s->gid);
		if (rc)
			return session_err(err, err_len, rc, "session_group \"%s\": %s", c->group,
					   rc == -ENOENT ? "no such group" : strerror(-rc));
		s->shared = true;
	}
	s->strict = geteuid() == 0;
	s->dir = session_normalise(c->dir);
	if (c->log_file)
		s->log_file = strdup(c->log_file);
	if (!s->dir || (c->log_file && !s->log_file)) {
		rc = session_err(err, err_len, -ENOMEM, "session directory %s: %s", c->dir,
				 strerror(ENOMEM));
		goto out_fail;
	}
	if (!strcmp(s->dir, "/")) {
		rc = session_err(err, err_len, -EINVAL, "session directory %s is \"/\": refusing "
				 "the root directory, choose another --session-dir", c->dir);
		goto out_fail;
	}
	/* what the daemon creates from here on is private (or the group's) */
	if (s->strict || s->shared) {
		s->old_umask = umask(s->shared ? 027 : 077);
		s->umask_set = true;
	}
	s->dirfd = session_walk(s, &created, err, err_len);
	if (s->dirfd < 0) {
		rc = s->dirfd;
		goto out_fail;
	}
	if (access(s->dir, W_OK | X_OK)) {
		rc = session_err(err, err_len, -EACCES,
				 "session directory %s is not writable: fix its permissions or "
				 "choose another --session-dir",
				 s->dir);
		goto out_fail;
	}
	/* never chmod a directory that holds other things than a session */
	if (created || session_is_own(s->dirfd)) {
		rc = session_restrict(s, s->dirfd, "", created ? NULL : note, sizeof(note), err,
				      err_len);
		if (rc)
			goto out_fail;
	}
	rc = session_lock(s, err, err_len);
	if (rc)
		goto out_fail;
	rc = op_write_abi(s->dirfd, OP_SESSION_ABI);
	if (rc) {
		session_err(err, err_len, rc, "%s/abi: cannot write: %s", s->dir, strerror(-rc));
		goto out_fail;
	}
	s->samples_fd = session_open_subdir(s, s->dirfd, OP_SESSION_SAMPLES, OP_SESSION_SAMPLES, err,
					    err_len);
	if (s->samples_fd < 0) {
		rc = s->samples_fd;
		goto out_fail;
	}
	rc = session_restrict(s, s->samples_fd, OP_SESSION_SAMPLES, note, sizeof(note), err, err_len);
	if (rc)
		goto out_fail;
	/* an earlier start was killed before session_commit: its current holds no sample */
	rc = session_check_moved(s, SESSION_STAGED, &exists, err, err_len);
	if (rc)
		goto out_fail;
	if (exists) {
		rc = session_unstage(s->samples_fd);
		if (rc) {
			session_err(err, err_len, rc,
				    "%s/samples/%s (left by an interrupted start): cannot put it "
				    "back as current: %s; move it by hand",
				    s->dir, SESSION_STAGED, strerror(-rc));
			goto out_fail;
		}
	}
	rc = session_check_moved(s, OP_SESSION_CURRENT, &exists, err, err_len);
	if (rc)
		goto out_fail;
	if (!c->append && exists) {
		if (renameat(s->samples_fd, OP_SESSION_CURRENT, s->samples_fd, SESSION_STAGED)) {
			rc = session_err(err, err_len, -errno,
					 "%s/samples: cannot move current aside: %s", s->dir,
					 strerror(errno));
			goto out_fail;
		}
		s->staged = true;
	}
	fd = session_open_subdir(s, s->samples_fd, OP_SESSION_CURRENT, OP_SESSION_CURRENT_PATH, err,
				 err_len);
	if (fd < 0) {
		rc = fd;
		goto out_fail;
	}
	s->current_fd = fd;
	rc = session_restrict(s, s->current_fd, OP_SESSION_CURRENT_PATH, note, sizeof(note), err,
			      err_len);
	if (rc)
		goto out_fail;
	rc = session_open_log(s, err, err_len);
	if (rc)
		goto out_fail;
	if (note[0])
		fputs(note, s->log);
	s->created = created;
	return 0;

out_fail:
	session_close(s);
	return rc;
}

int session_open(struct session *s, const char *dir, bool append, const char *log_file,
		 char *err, size_t err_len)
{
	const struct session_conf c = { .dir = dir, .append = append, .log_file = log_file };

	return session_open_conf(s, &c, err, err_len);
}

int session_reopen_current(struct session *s)
{
	char err[PATH_MAX + 512];
	int fd = session_open_subdir(s, s->samples_fd, OP_SESSION_CURRENT, OP_SESSION_CURRENT_PATH,
				     err, sizeof(err));

	if (fd < 0) {
		if (s->log)
			fprintf(s->log, "oprofiled: SIGHUP: %s\n", err);
		return fd;
	}
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
	bool umask_set = s->umask_set;
	mode_t old_umask = s->old_umask;

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
		unlinkat(s->dirfd, OP_SESSION_LOCK, 0);
		close(s->lockfd);
	}
	if (s->dirfd >= 0)
		close(s->dirfd);
	free(s->dir);
	free(s->log_file);
	memset(s, 0, sizeof(*s));
	s->dirfd = s->lockfd = s->samples_fd = s->current_fd = -1;
	if (umask_set)
		umask(old_umask);
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
