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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_header.h"
#include "op_session_layout.h"
#include "oprofile_sdk.h"
#include "session.h"
#include "session_int.h"

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

int session_open_conf(struct session *s, const struct session_conf *c, char *err, size_t err_len)
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
		rc = session_err(err, err_len, -EINVAL,
				 "session directory %s is \"/\": refusing "
				 "the root directory, choose another --session-dir",
				 c->dir);
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
	s->samples_fd = session_open_subdir(s, s->dirfd, OP_SESSION_SAMPLES, OP_SESSION_SAMPLES,
					    err, err_len);
	if (s->samples_fd < 0) {
		rc = s->samples_fd;
		goto out_fail;
	}
	rc = session_restrict(s, s->samples_fd, OP_SESSION_SAMPLES, note, sizeof(note), err,
			      err_len);
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

int session_open(struct session *s, const char *dir, bool append, const char *log_file, char *err,
		 size_t err_len)
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
