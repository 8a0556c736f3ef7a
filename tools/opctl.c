/*
 * opctl.c - the client side of oprofiled's control socket, shared by
 * opcontrol and optop: find the daemon through the lock of its session
 * directory, check who serves the socket, send one request line.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "op_session_layout.h"
#include "opctl.h"

#define CTL_SOCKET OP_SESSION_CONTROL

/*
 * Trust (issue 14): opcontrol and optop believe a session directory, its lock and its
 * control socket only when they belong to root or to the directory's owner,
 * and only root may own what root believes (sshd's StrictModes). A directory
 * anybody else can write could hold a forged lock (another process's pid)
 * or a forged socket. Root: the directory is root's and writable by root
 * only. A user: it is the user's or root's and not writable by others
 * (op_trust_for). The rule is lib/op_trust's; what to do about a refusal
 * is said here.
 */
static void opctl_refuse(const struct opctl *c, const struct stat *st, const char *why)
{
	if (!op_trust_uid(&c->trust, st->st_uid))
		fprintf(stderr, "%s: %s - %s\n", c->prog, why,
			geteuid() == 0 ? "root controls only root's sessions (run it as that user)" :
					 "not believed");
	else
		fprintf(stderr,
			"%s: %s - anybody could forge what it holds; make it "
			"writable by %s only\n",
			c->prog, why, geteuid() == 0 ? "root" : "its owner");
}

/* 0, or -EPERM after saying why @path (described as @what) is not believed */
static int opctl_check_owner(const struct opctl *c, const char *what, const char *path,
			     const struct stat *st)
{
	char why[PATH_MAX + 256];
	int rc = op_trust_stat(&c->trust, st, what, path, why, sizeof(why));

	if (rc)
		opctl_refuse(c, st, why);
	return rc;
}

/* open and check the session directory: 0, -ENOENT or -EPERM (said why) */
static int opctl_open_dir(struct opctl *c)
{
	struct stat st;

	c->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->dirfd < 0) {
		fprintf(stderr, "%s: session directory %s: %s - give --session-dir=DIR\n", c->prog,
			c->dir, strerror(errno));
		return -ENOENT;
	}
	if (fstat(c->dirfd, &st)) {
		fprintf(stderr, "%s: session directory %s: %s\n", c->prog, c->dir, strerror(errno));
		return -ENOENT;
	}
	c->owner = st.st_uid;
	/* root: root alone; a user: root and the directory's owner */
	c->trust = op_trust_for(geteuid(), c->owner);
	return opctl_check_owner(c, "session directory", c->dir, &st);
}

/* "PID\n" of the lock file: the pid, or 0 */
static long opctl_parse_pid(const char *buf)
{
	char *end;
	long pid;

	errno = 0;
	pid = strtol(buf, &end, 10);
	if (errno || end == buf || pid <= 0 || pid > INT_MAX || (*end && *end != '\n'))
		return 0;
	return pid;
}

/*
 * The daemon holds an exclusive flock on <dir>/lock while it runs and has
 * written its pid there. 0 with c->pid; -ESRCH when none runs (said why when
 * the lock names a pid nobody holds it for); -EPERM when the lock is not
 * believed (said why). The pid is not verified yet: opctl_connect does that.
 */
int opctl_find(struct opctl *c)
{
	char buf[32], path[PATH_MAX + 8], why[PATH_MAX + 256];
	struct stat st;
	ssize_t n;
	int fd, rc;

	rc = opctl_open_dir(c);
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/" OP_SESSION_LOCK, c->dir);
	/* not followed if a link; O_NONBLOCK: whatever sits there, opening it does not hang */
	fd = op_trust_openat(&c->trust, c->dirfd, OP_SESSION_LOCK, O_RDONLY, S_IFREG, "lock file",
			     path, &st, why, sizeof(why));
	if (fd == -ENOENT) {
		fprintf(stderr, "%s: no oprofiled is running on %s (no %s)\n", c->prog, c->dir,
			path);
		return -ESRCH;
	}
	if (fd == -EPERM) {
		opctl_refuse(c, &st, why);
		return -EPERM;
	}
	if (fd < 0) {
		fprintf(stderr, "%s: %s - not believed\n", c->prog, why);
		return -EPERM;
	}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	c->pid = opctl_parse_pid(buf);
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		/* nobody holds it: a dead daemon's file, or a forged one */
		close(fd);
		if (c->pid)
			fprintf(stderr,
				"%s: no oprofiled is running on %s: %s names pid %ld "
				"but no process holds the lock - a stale or forged pid, not signalled\n",
				c->prog, c->dir, path, c->pid);
		else
			fprintf(stderr, "%s: no oprofiled is running on %s (%s is not locked)\n",
				c->prog, c->dir, path);
		return -ESRCH;
	}
	close(fd);
	if (!c->pid) {
		fprintf(stderr,
			"%s: %s is locked but holds no pid (\"%.*s\") - not "
			"believed\n",
			c->prog, path, (int)strcspn(buf, "\n"), buf);
		return -EPERM;
	}
	return 0;
}

bool opctl_running(struct opctl *c)
{
	int fd = openat(c->dirfd, OP_SESSION_LOCK, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	bool held;

	if (fd < 0)
		return false;
	held = flock(fd, LOCK_SH | LOCK_NB) != 0;
	close(fd);
	return held;
}

/*
 * Connect to <dir>/control (a socket, not followed if a symlink) and check
 * its server: SO_PEERCRED names root or the directory's owner, and the pid
 * the lock names. The connected fd, or -errno after saying why.
 */
int opctl_connect(struct opctl *c)
{
	struct sockaddr_un a;
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	struct stat st;
	char path[PATH_MAX + 16], why[PATH_MAX + 256];
	int fd, e;

	snprintf(path, sizeof(path), "%s/" CTL_SOCKET, c->dir);
	/* O_PATH: the socket itself (or a link, not followed), checked through its fd */
	fd = op_trust_openat(&c->trust, c->dirfd, CTL_SOCKET, O_PATH, S_IFSOCK, "control socket",
			     path, &st, why, sizeof(why));
	if (fd == -EINVAL || fd == -ELOOP) {
		fprintf(stderr, "%s: %s is not a socket (%s) - not followed, not believed\n",
			c->prog, path,
			S_ISLNK(st.st_mode) ? "a symbolic link" : "another file type");
		return -EPERM;
	}
	if (fd == -EPERM) {
		opctl_refuse(c, &st, why);
		return -EPERM;
	}
	if (fd < 0) {
		fprintf(stderr,
			"%s: %s: %s - cannot reach oprofiled (pid %ld): is it an "
			"older oprofiled, or did its socket fail (see its log)?\n",
			c->prog, path, strerror(-fd), c->pid);
		return fd;
	}
	close(fd);
	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	/* through our fd of the session directory: any path length fits */
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/" CTL_SOCKET, c->dirfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		e = errno;
		fprintf(stderr,
			"%s: %s: cannot connect to oprofiled (pid %ld): %s - is it an "
			"older oprofiled, or did its socket fail (see its log)?\n",
			c->prog, path, c->pid, strerror(e));
		close(fd);
		return -e;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl)) {
		e = errno;
		fprintf(stderr, "%s: %s: SO_PEERCRED: %s\n", c->prog, path, strerror(e));
		close(fd);
		return -e;
	}
	if (!op_trust_uid(&c->trust, cred.uid)) {
		fprintf(stderr,
			"%s: %s is served by uid %u (pid %ld), not by root or the "
			"session's owner (uid %u) - not believed\n",
			c->prog, path, (unsigned)cred.uid, (long)cred.pid, (unsigned)c->owner);
		close(fd);
		return -EPERM;
	}
	if ((long)cred.pid != c->pid) {
		fprintf(stderr,
			"%s: %s is served by pid %ld, but %s/lock names pid %ld - "
			"not believed\n",
			c->prog, path, (long)cred.pid, c->dir, c->pid);
		close(fd);
		return -EPERM;
	}
	return fd;
}

int opctl_request(struct opctl *c, const char *req, FILE *out)
{
	char buf[4096];
	size_t len = strlen(req), got = 0;
	bool first = true, failed = false;
	ssize_t n;
	int fd;

	fd = opctl_connect(c);
	if (fd < 0)
		return fd;
	if (send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
		int e = errno;

		close(fd);
		return -e;
	}
	shutdown(fd, SHUT_WR);
	/* the first line is "ok" or "error: WHY"; the rest is the body */
	while ((n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0)) > 0 || (n < 0 && errno == EINTR)) {
		char *nl;

		if (n < 0)
			continue;
		got += (size_t)n;
		buf[got] = 0;
		if (first) {
			nl = strchr(buf, '\n');
			if (!nl && got < sizeof(buf) - 1)
				continue;
			if (nl)
				*nl = 0;
			if (strcmp(buf, "ok")) {
				failed = true;
				fprintf(stderr, "%s: oprofiled (pid %ld): %s\n", c->prog, c->pid,
					!strncmp(buf, "error: ", 7) ? buf + 7 : buf);
			}
			first = false;
			if (nl) {
				fputs(nl + 1, failed ? stderr : out);
			}
		} else {
			fputs(buf, failed ? stderr : out);
		}
		got = 0;
	}
	close(fd);
	if (first) {
		fprintf(stderr,
			"%s: oprofiled (pid %ld) closed the connection without a "
			"reply - see its log\n",
			c->prog, c->pid);
		return 1;
	}
	return failed ? 1 : 0;
}

void opctl_close(struct opctl *c)
{
	if (c->dirfd >= 0)
		close(c->dirfd);
	c->dirfd = -1;
}
