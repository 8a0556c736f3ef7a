/*
 * opcontrol.c - controls a running oprofiled: finds it through the lock file
 * of its session directory (pid, flock held while it runs), talks to it over
 * the owner-only socket <session>/control, or signals it (--hup) once the
 * socket's server proved to be the pid of the lock.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <libconfig.h>

#include "op_interval.h"
#include "op_session_layout.h"
#include "op_trust.h"

#ifndef OP_SYSCONFIGFILE
#define OP_SYSCONFIGFILE "/usr/local/etc/oprofiled.conf"
#endif
#define CTL_SOCKET OP_SESSION_CONTROL
#define CTL_DEFAULT_DIR OP_SESSION_DIR_SYSTEM

static const char ctl_usage[] =
	"Usage: opcontrol [--session-dir=DIR | --config=FILE] COMMAND\n"
	"\n"
	"Control the oprofiled running on a session directory: --session-dir, else the\n"
	"session_dir of --config=FILE (default " OP_SYSCONFIGFILE "), else " CTL_DEFAULT_DIR ".\n"
	"\n"
	"  --status            running since, samples, lost, open sample files, rotation,\n"
	"                      plugins and their statistics\n"
	"  --dump              flush every sample to the files now (as SIGUSR1)\n"
	"  --stop              stop profiling, flush and wait until the daemon has exited\n"
	"  --reset             set samples/current aside as samples/previous, start afresh\n"
	"  --save=NAME         move samples/current to samples/NAME, start afresh\n"
	"                      (opreport session:NAME reads it)\n"
	"  --rotate            save samples/current as samples/rotate-TIME now\n"
	"  --rotate=INTERVAL   rotate every INTERVAL (seconds, or 30s, 5m, 1h, 1d; 0: off)\n"
	"  --rotate-keep=K     keep at most K rotate-* sessions\n"
	"  --hup               send SIGHUP: close sample files, reopen the log\n"
	"  --pid               print the daemon's pid\n"
	"  --wait=SEC          with --stop: how long to wait (default 60)\n"
	"  --version           the package version\n"
	"  -?, --usage         the options in brief\n"
	"  -h, --help          this text\n"
	"\n"
	"As root, opcontrol believes only a session directory, lock and socket that root\n"
	"owns and only root can write, served by root; as a user, also the user's own.\n"
	"It signals (--hup) or prints (--pid) the lock's pid only when the control socket\n"
	"is served by that very process.\n"
	"\n"
	"Exit status: 0 done, 1 the daemon refused or failed, or what was found is not\n"
	"believed, 2 usage, 3 no daemon running.\n";

static const char ctl_brief_usage[] =
	"Usage: opcontrol [--session-dir=DIR | --config=FILE] [--status | --dump | --stop |\n"
	"        --reset | --save=NAME | --rotate[=INTERVAL] | --rotate-keep=K | --hup |\n"
	"        --pid] [--wait=SEC] [--version] [-?|--usage] [-h|--help]\n";

enum { CTL_EXIT_OK = 0, CTL_EXIT_FAIL = 1, CTL_EXIT_USAGE = 2, CTL_EXIT_NODAEMON = 3 };

struct ctl {
	const char *dir;
	int dirfd;
	uid_t owner;           /* of the session directory (root, or the user running opcontrol) */
	struct op_trust trust; /* whom opcontrol believes (op_trust.h), set by ctl_open_dir */
	long pid;              /* of the lock; ctl_connect checks the socket's server is that pid */
};

/* session_dir of config file @path into @buf: 1, 0 if it has none, -1 unreadable */
static int ctl_config_dir(const char *path, bool must, char *buf, size_t len)
{
	const char *dir;
	config_t cfg;
	int found = 0;

	if (access(path, R_OK)) {
		if (must)
			fprintf(stderr, "opcontrol: cannot read %s: %s\n", path, strerror(errno));
		return must ? -1 : 0;
	}
	config_init(&cfg);
	if (config_read_file(&cfg, path) != CONFIG_TRUE) {
		fprintf(stderr, "opcontrol: %s:%d: %s - fix the file or give --session-dir\n",
			config_error_file(&cfg) ? config_error_file(&cfg) : path,
			config_error_line(&cfg), config_error_text(&cfg));
		found = -1;
	} else if (config_lookup_string(&cfg, "session_dir", &dir) == CONFIG_TRUE) {
		snprintf(buf, len, "%s", dir);
		found = 1;
	}
	config_destroy(&cfg);
	return found;
}

/*
 * Trust (issue 14): opcontrol believes a session directory, its lock and its
 * control socket only when they belong to root or to the directory's owner,
 * and only root may own what root believes (sshd's StrictModes). A directory
 * anybody else can write could hold a forged lock (another process's pid)
 * or a forged socket. Root: the directory is root's and writable by root
 * only. A user: it is the user's or root's and not writable by others
 * (op_trust_for). The rule is lib/op_trust's; what to do about a refusal
 * is said here.
 */
static void ctl_refuse(const struct ctl *c, const struct stat *st, const char *why)
{
	if (!op_trust_uid(&c->trust, st->st_uid))
		fprintf(stderr, "opcontrol: %s - %s\n", why,
			geteuid() == 0 ?
				"root controls only root's sessions (run opcontrol as that user)" :
				"not believed");
	else
		fprintf(stderr,
			"opcontrol: %s - anybody could forge what it holds; make it "
			"writable by %s only\n",
			why, geteuid() == 0 ? "root" : "its owner");
}

/* 0, or -EPERM after saying why @path (described as @what) is not believed */
static int ctl_check_owner(const struct ctl *c, const char *what, const char *path,
			   const struct stat *st)
{
	char why[PATH_MAX + 256];
	int rc = op_trust_stat(&c->trust, st, what, path, why, sizeof(why));

	if (rc)
		ctl_refuse(c, st, why);
	return rc;
}

/* open and check the session directory: 0, -ENOENT or -EPERM (said why) */
static int ctl_open_dir(struct ctl *c)
{
	struct stat st;

	c->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->dirfd < 0) {
		fprintf(stderr, "opcontrol: session directory %s: %s - give --session-dir=DIR\n",
			c->dir, strerror(errno));
		return -ENOENT;
	}
	if (fstat(c->dirfd, &st)) {
		fprintf(stderr, "opcontrol: session directory %s: %s\n", c->dir, strerror(errno));
		return -ENOENT;
	}
	c->owner = st.st_uid;
	/* root: root alone; a user: root and the directory's owner */
	c->trust = op_trust_for(geteuid(), c->owner);
	return ctl_check_owner(c, "session directory", c->dir, &st);
}

/* "PID\n" of the lock file: the pid, or 0 */
static long ctl_parse_pid(const char *buf)
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
 * believed (said why). The pid is not verified yet: ctl_connect does that.
 */
static int ctl_find(struct ctl *c)
{
	char buf[32], path[PATH_MAX + 8], why[PATH_MAX + 256];
	struct stat st;
	ssize_t n;
	int fd, rc;

	rc = ctl_open_dir(c);
	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/" OP_SESSION_LOCK, c->dir);
	/* not followed if a link; O_NONBLOCK: whatever sits there, opening it does not hang */
	fd = op_trust_openat(&c->trust, c->dirfd, OP_SESSION_LOCK, O_RDONLY, S_IFREG, "lock file",
			     path, &st, why, sizeof(why));
	if (fd == -ENOENT) {
		fprintf(stderr, "opcontrol: no oprofiled is running on %s (no %s)\n", c->dir, path);
		return -ESRCH;
	}
	if (fd == -EPERM) {
		ctl_refuse(c, &st, why);
		return -EPERM;
	}
	if (fd < 0) {
		fprintf(stderr, "opcontrol: %s - not believed\n", why);
		return -EPERM;
	}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = 0;
	c->pid = ctl_parse_pid(buf);
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		/* nobody holds it: a dead daemon's file, or a forged one */
		close(fd);
		if (c->pid)
			fprintf(stderr,
				"opcontrol: no oprofiled is running on %s: %s names pid %ld "
				"but no process holds the lock - a stale or forged pid, not signalled\n",
				c->dir, path, c->pid);
		else
			fprintf(stderr,
				"opcontrol: no oprofiled is running on %s (%s is not locked)\n",
				c->dir, path);
		return -ESRCH;
	}
	close(fd);
	if (!c->pid) {
		fprintf(stderr,
			"opcontrol: %s is locked but holds no pid (\"%.*s\") - not "
			"believed\n",
			path, (int)strcspn(buf, "\n"), buf);
		return -EPERM;
	}
	return 0;
}

static bool ctl_running(struct ctl *c)
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
static int ctl_connect(struct ctl *c)
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
		fprintf(stderr, "opcontrol: %s is not a socket (%s) - not followed, not believed\n",
			path, S_ISLNK(st.st_mode) ? "a symbolic link" : "another file type");
		return -EPERM;
	}
	if (fd == -EPERM) {
		ctl_refuse(c, &st, why);
		return -EPERM;
	}
	if (fd < 0) {
		fprintf(stderr,
			"opcontrol: %s: %s - cannot reach oprofiled (pid %ld): is it an "
			"older oprofiled, or did its socket fail (see its log)?\n",
			path, strerror(-fd), c->pid);
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
			"opcontrol: %s: cannot connect to oprofiled (pid %ld): %s - is it an "
			"older oprofiled, or did its socket fail (see its log)?\n",
			path, c->pid, strerror(e));
		close(fd);
		return -e;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl)) {
		e = errno;
		fprintf(stderr, "opcontrol: %s: SO_PEERCRED: %s\n", path, strerror(e));
		close(fd);
		return -e;
	}
	if (!op_trust_uid(&c->trust, cred.uid)) {
		fprintf(stderr,
			"opcontrol: %s is served by uid %u (pid %ld), not by root or the "
			"session's owner (uid %u) - not believed\n",
			path, (unsigned)cred.uid, (long)cred.pid, (unsigned)c->owner);
		close(fd);
		return -EPERM;
	}
	if ((long)cred.pid != c->pid) {
		fprintf(stderr,
			"opcontrol: %s is served by pid %ld, but %s/lock names pid %ld - "
			"not believed\n",
			path, (long)cred.pid, c->dir, c->pid);
		close(fd);
		return -EPERM;
	}
	return fd;
}

/* send one request line, copy the reply body to stdout; 0, 1 (refused) or -errno */
static int ctl_request(struct ctl *c, const char *req)
{
	char buf[4096];
	size_t len = strlen(req), got = 0;
	bool first = true, failed = false;
	ssize_t n;
	int fd;

	fd = ctl_connect(c);
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
				fprintf(stderr, "opcontrol: oprofiled (pid %ld): %s\n", c->pid,
					!strncmp(buf, "error: ", 7) ? buf + 7 : buf);
			}
			first = false;
			if (nl) {
				fputs(nl + 1, failed ? stderr : stdout);
			}
		} else {
			fputs(buf, failed ? stderr : stdout);
		}
		got = 0;
	}
	close(fd);
	if (first) {
		fprintf(stderr,
			"opcontrol: oprofiled (pid %ld) closed the connection without a "
			"reply - see its log\n",
			c->pid);
		return 1;
	}
	return failed ? 1 : 0;
}

/* the lock's pid, verified: the control socket's server is that process */
static int ctl_verify_pid(struct ctl *c)
{
	int fd = ctl_connect(c);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/*
 * SIGHUP to the verified daemon. The pidfd is taken before the check, so
 * the signal reaches the process that was checked even if the daemon exits
 * and its pid is reused in between (kill() where pidfds are missing).
 */
static int ctl_hup(struct ctl *c)
{
	int pidfd = -1, rc;

#ifdef SYS_pidfd_open
	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)c->pid, 0);
#endif
	rc = ctl_verify_pid(c);
	if (rc) {
		fprintf(stderr, "opcontrol: pid %ld of %s/lock not verified - not signalled\n",
			c->pid, c->dir);
		goto out;
	}
#ifdef SYS_pidfd_send_signal
	if (pidfd >= 0)
		rc = syscall(SYS_pidfd_send_signal, pidfd, SIGHUP, NULL, 0) ? -errno : 0;
	else
#endif
		rc = kill((pid_t)c->pid, SIGHUP) ? -errno : 0;
	if (rc)
		fprintf(stderr, "opcontrol: SIGHUP to %ld: %s\n", c->pid, strerror(-rc));
out:
	if (pidfd >= 0)
		close(pidfd);
	return rc;
}

/* the process is gone, or a zombie its parent has not reaped yet */
static bool ctl_exited(long pid)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	p = strrchr(buf, ')');
	return !p || (p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

static int ctl_wait_exit(struct ctl *c, unsigned secs)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	unsigned i;

	for (i = 0; i < secs * 20; i++) {
		if (!ctl_running(c) && ctl_exited(c->pid))
			return 0;
		nanosleep(&ts, NULL);
	}
	fprintf(stderr, "opcontrol: oprofiled (pid %ld) still runs after %u s - see its log\n",
		c->pid, secs);
	return 1;
}

/* --rotate-keep: 1..100000, as the daemon's keep request */
static bool ctl_keep_ok(const char *s)
{
	unsigned long k;
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	k = strtoul(s, &end, 10);
	return !errno && !*end && k >= 1 && k <= 100000;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "session-dir", required_argument, NULL, 'd' },
		{ "config", required_argument, NULL, 'c' },
		{ "status", no_argument, NULL, 's' },
		{ "dump", no_argument, NULL, 'D' },
		{ "stop", no_argument, NULL, 'S' },
		{ "reset", no_argument, NULL, 'R' },
		{ "save", required_argument, NULL, 'v' },
		{ "rotate", optional_argument, NULL, 'r' },
		{ "rotate-keep", required_argument, NULL, 'k' },
		{ "hup", no_argument, NULL, 'H' },
		{ "pid", no_argument, NULL, 'P' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "usage", no_argument, NULL, 'U' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl c = { .dir = NULL, .dirfd = -1 };
	const char *config = NULL;
	char cfg_dir[PATH_MAX];
	char req[512];
	unsigned wait_s = 60, interval;
	int cmd = 0, opt, rc;
	const char *arg = NULL;

	while ((opt = getopt_long(argc, argv, "h?", lo, NULL)) != -1) {
		switch (opt) {
		case 'd':
			c.dir = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'w':
			wait_s = (unsigned)strtoul(optarg, NULL, 10);
			if (!wait_s)
				wait_s = 1;
			break;
		case 'V':
			printf("opcontrol " PACKAGE_VERSION "\n");
			return CTL_EXIT_OK;
		case 'h':
			fputs(ctl_usage, stdout);
			return CTL_EXIT_OK;
		case 'U':
			fputs(ctl_brief_usage, stdout);
			return CTL_EXIT_OK;
		case '?':
			/* -? is in the option string: glibc returns it without setting optopt */
			if (!strcmp(argv[optind - 1], "-?")) {
				fputs(ctl_brief_usage, stdout);
				return CTL_EXIT_OK;
			}
			fprintf(stderr, "opcontrol: see opcontrol --help\n");
			return CTL_EXIT_USAGE;
		default:
			if (cmd) {
				fprintf(stderr, "opcontrol: give one command at a time\n");
				return CTL_EXIT_USAGE;
			}
			cmd = opt;
			arg = optarg;
			break;
		}
	}
	if (optind < argc || !cmd) {
		fprintf(stderr, "opcontrol: %s - see opcontrol --help\n",
			optind < argc ? "unexpected argument" : "no command given");
		return CTL_EXIT_USAGE;
	}
	if (cmd == 'v' && (!*arg || strchr(arg, '\n') || strchr(arg, ' ') || strlen(arg) > 200)) {
		fprintf(stderr, "opcontrol: --save=%s: not a session name\n", arg);
		return CTL_EXIT_USAGE;
	}
	if (cmd == 'r' && arg && op_parse_interval(arg, &interval, NULL, 0)) {
		fprintf(stderr,
			"opcontrol: --rotate=%s: not an interval - expected seconds or a "
			"number with an s, m, h or d suffix (30s, 5m, 1h, 1d; 0: off), at most a "
			"year\n",
			arg);
		return CTL_EXIT_USAGE;
	}
	if (cmd == 'k' && !ctl_keep_ok(arg)) {
		fprintf(stderr, "opcontrol: --rotate-keep=%s: expected a count from 1 to 100000\n",
			arg);
		return CTL_EXIT_USAGE;
	}
	if (!c.dir) {
		rc = ctl_config_dir(config ? config : OP_SYSCONFIGFILE, config != NULL, cfg_dir,
				    sizeof(cfg_dir));
		if (rc < 0)
			return CTL_EXIT_USAGE;
		c.dir = rc ? cfg_dir : CTL_DEFAULT_DIR;
	}
	rc = ctl_find(&c);
	if (rc == -ENOENT)
		return CTL_EXIT_NODAEMON;
	if (rc == -EPERM)
		return CTL_EXIT_FAIL;
	if (rc)
		return CTL_EXIT_NODAEMON;
	switch (cmd) {
	case 'P':
		/* a pid others may signal: printed only once verified */
		if (ctl_verify_pid(&c))
			return CTL_EXIT_FAIL;
		printf("%ld\n", c.pid);
		return CTL_EXIT_OK;
	case 'H':
		return ctl_hup(&c) ? CTL_EXIT_FAIL : CTL_EXIT_OK;
	case 's':
		snprintf(req, sizeof(req), "status\n");
		break;
	case 'D':
		snprintf(req, sizeof(req), "dump\n");
		break;
	case 'S':
		snprintf(req, sizeof(req), "stop\n");
		break;
	case 'R':
		snprintf(req, sizeof(req), "reset\n");
		break;
	case 'v':
		snprintf(req, sizeof(req), "save %s\n", arg);
		break;
	case 'r':
		if (arg)
			snprintf(req, sizeof(req), "rotate %s\n", arg);
		else
			snprintf(req, sizeof(req), "rotate\n");
		break;
	case 'k':
		snprintf(req, sizeof(req), "keep %s\n", arg);
		break;
	default:
		return CTL_EXIT_USAGE;
	}
	rc = ctl_request(&c, req);
	if (rc < 0)
		return CTL_EXIT_FAIL;
	if (rc)
		return CTL_EXIT_FAIL;
	if (cmd == 'S')
		return ctl_wait_exit(&c, wait_s) ? CTL_EXIT_FAIL : CTL_EXIT_OK;
	return CTL_EXIT_OK;
}
