/*
 * session_dir.c - the session directory itself: what a root daemon trusts
 * (owner, mode, links of an entry; the advice its refusals give) and the
 * path, normalised and walked from "/" without following a symbolic link.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_trust.h"
#include "session.h"
#include "session_int.h"

int session_err(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
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
	size_t n = rc && err && len ? strlen(err) : 0;

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
	const struct op_trust t = op_trust_for(0, 0);
	char owner[128];
	int rc;

	/* op_trust's rule, the session's words (the owner's name), and one link more */
	rc = op_trust_stat(&t, st, subject, NULL, err, err_len);
	if (rc && !op_trust_uid(&t, st->st_uid)) {
		session_owner(st->st_uid, owner, sizeof(owner));
		return session_err(err, err_len, rc, "%s is owned by %s, not root", subject, owner);
	}
	if (rc)
		return session_err(err, err_len, rc, "%s is writable by group or other (mode %04o)",
				   subject, (unsigned)(st->st_mode & 07777));
	if (!S_ISDIR(st->st_mode) && st->st_nlink > 1)
		return session_err(err, err_len, -EPERM, "%s has %lu hard links", subject,
				   (unsigned long)st->st_nlink);
	return 0;
}

/*
 * @st is the session's entry named @subject: a directory (@want_dir) or a
 * regular file, and as root a trusted one. 0 or -errno with a message.
 */
int session_check_entry(const struct session *s, const struct stat *st, const char *subject,
			bool want_dir, char *err, size_t len)
{
	if (want_dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode))
		return session_err(err, len, want_dir ? -ENOTDIR : -EINVAL,
				   "%s is not a %s (%s): remove it", subject,
				   want_dir ? "directory" : "regular file",
				   session_type(st->st_mode));
	if (!s->strict) {
		/* a user's session: root's entries or the user's, not writable by others */
		const struct op_trust t = op_trust_for(geteuid(), geteuid());

		return op_trust_stat(&t, st, subject, NULL, err, len);
	}
	return session_advise(err, len, session_trusted(st, subject, err, len),
			      session_advice_entry);
}

int session_openat(const struct session *s, int dfd, const char *name, int flags, mode_t mode,
		   bool want_dir, const char *subject, char *err, size_t len)
{
	const struct op_trust t =
		s->strict ? op_trust_for(0, 0) : op_trust_for(geteuid(), geteuid());
	struct stat st;
	int fd, rc;

	fd = op_trust_createat(&t, dfd, name, flags, mode, want_dir ? S_IFDIR : S_IFREG, subject,
			       NULL, &st, err, len);
	if (fd == -EPERM || fd == -EINVAL) {
		/* what was found, in the session's words (with its advice) */
		rc = session_check_entry(s, &st, subject, want_dir, err, len);
		return rc ? rc : fd;
	}
	if (fd < 0)
		return session_open_error(s, dfd, name, subject, want_dir, -fd, err, len);
	/* op_trust's answer, and the session's stricter one: a file with one link */
	rc = session_check_entry(s, &st, subject, want_dir, err, len);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

/*
 * @name below @dfd could not be opened (errno @e): say why, naming what is
 * there instead of a directory or regular file (a symlink, a FIFO, ...).
 */
int session_open_error(const struct session *s, int dfd, const char *name, const char *subject,
		       bool want_dir, int e, char *err, size_t len)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
		return session_check_entry(s, &st, subject, want_dir, err, len);
	return session_err(err, len, -e, "%s: %s", subject, strerror(e));
}

/* "session directory DIR: REL" */
void session_subject(const struct session *s, const char *rel, char *buf, size_t len)
{
	snprintf(buf, len, "session directory %s: %s", s->dir, rel);
}

/*
 * Root or a session_group: @fd, an existing directory of the session (@rel,
 * "" for the session directory), gets the session's mode (0700, or 02750
 * and the group). A change is noted in @note for the log.
 */
int session_restrict(const struct session *s, int fd, const char *rel, char *note, size_t note_len,
		     char *err, size_t err_len)
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
			 s->shared ? ", group of session_group" :
				     " (a root oprofiled keeps its session private; "
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
char *session_normalise(const char *dir)
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
int session_walk(struct session *s, bool *created, char *err, size_t len)
{
	const char *p = s->dir, *comp, *next;
	char name[NAME_MAX + 1], where[PATH_MAX], parent[PATH_MAX], subject[PATH_MAX + 64];
	const struct op_trust root = op_trust_for(0, 0);
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
			rc = session_err(err, len, -ENAMETOOLONG, "session directory %s: %s", p,
					 strerror(ENAMETOOLONG));
			goto out_close;
		}
		memcpy(name, comp, n);
		name[n] = 0;
		snprintf(where, sizeof(where), "%.*s", (int)(comp + n - p), p);
		snprintf(parent, sizeof(parent), "%.*s", comp - p > 1 ? (int)(comp - p - 1) : 1, p);
		/* a parent: root's and sticky (/tmp), or trusted (op_trust's rule) */
		if (s->strict && (pst.st_uid != 0 || !(pst.st_mode & S_ISVTX)) &&
		    op_trust_stat(&root, &pst, "directory", parent, err, len)) {
			snprintf(subject, sizeof(subject), "session directory %s: %s", p, parent);
			if (pst.st_uid != 0)
				rc = session_advise(err, len,
						    session_trusted(&pst, subject, err, len),
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
						 "session directory %s: cannot create %s: %s", p,
						 where, strerror(errno));
				goto out_close;
			}
			nfd = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0) {
			int e = errno;

			if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
				rc = last ? session_err(err, len, -ELOOP,
							"session directory %s is a symbolic link: "
							"refusing it, give the real directory",
							p) :
					    session_err(err, len, -ELOOP,
							"session directory %s: %s is a symbolic link: "
							"refusing it, give a path without symbolic links",
							p, where);
			else if (e == ENOTDIR || e == ELOOP)
				rc = last ? session_err(err, len, -ENOTDIR,
							"session directory %s is not a directory",
							p) :
					    session_err(err, len, -ENOTDIR,
							"session directory %s: %s is not a directory",
							p, where);
			else
				rc = session_err(err, len, -e, "session directory %s: %s: %s", p,
						 where, strerror(e));
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
