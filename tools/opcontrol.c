/*
 * opcontrol.c - controls a running oprofiled: finds it through the lock file
 * of its session directory (pid, flock held while it runs), talks to it over
 * the owner-only socket <session>/control, or signals it (--hup).
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
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <libconfig.h>

#ifndef OP_SYSCONFIGFILE
#define OP_SYSCONFIGFILE "/usr/local/etc/oprofiled.conf"
#endif
#define CTL_SOCKET "control"
#define CTL_DEFAULT_DIR "/var/lib/oprofile"

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
	"  -h, --help          this text\n"
	"\n"
	"Exit status: 0 done, 1 the daemon refused or failed, 2 usage, 3 no daemon running.\n";

enum { CTL_EXIT_OK = 0, CTL_EXIT_FAIL = 1, CTL_EXIT_USAGE = 2, CTL_EXIT_NODAEMON = 3 };

struct ctl {
	const char *dir;
	int dirfd;
	long pid;
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
 * The daemon holds an exclusive flock on <dir>/lock while it runs and has
 * written its pid there. 0 with c->pid, or -ESRCH when none runs.
 */
static int ctl_find(struct ctl *c)
{
	char buf[32];
	ssize_t n;
	int fd;

	c->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->dirfd < 0) {
		fprintf(stderr, "opcontrol: session directory %s: %s - give --session-dir=DIR\n",
			c->dir, strerror(errno));
		return -ENOENT;
	}
	fd = openat(c->dirfd, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		/* nobody holds it: a dead daemon's file */
		close(fd);
		return -ESRCH;
	}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	c->pid = strtol(buf, NULL, 10);
	if (c->pid <= 0 || (kill((pid_t)c->pid, 0) && errno == ESRCH))
		return -ESRCH;
	return 0;
}

static bool ctl_running(struct ctl *c)
{
	int fd = openat(c->dirfd, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	bool held;

	if (fd < 0)
		return false;
	held = flock(fd, LOCK_SH | LOCK_NB) != 0;
	close(fd);
	return held;
}

/* send one request line, copy the reply body to stdout; 0, 1 (refused) or -errno */
static int ctl_request(struct ctl *c, const char *req)
{
	struct sockaddr_un a;
	char buf[4096];
	size_t len = strlen(req), got = 0;
	bool first = true, failed = false;
	ssize_t n;
	int fd;

	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	/* through our fd of the session directory: any path length fits */
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/" CTL_SOCKET, c->dirfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int e = errno;

		fprintf(stderr, "opcontrol: %s/" CTL_SOCKET ": cannot connect to oprofiled (pid %ld): "
			"%s - is it an older oprofiled, or did its socket fail (see its log)?\n",
			c->dir, c->pid, strerror(e));
		close(fd);
		return -e;
	}
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
		fprintf(stderr, "opcontrol: oprofiled (pid %ld) closed the connection without a "
			"reply - see its log\n", c->pid);
		return 1;
	}
	return failed ? 1 : 0;
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
		{ NULL, 0, NULL, 0 },
	};
	struct ctl c = { .dir = NULL, .dirfd = -1 };
	const char *config = NULL;
	char cfg_dir[PATH_MAX];
	char req[512];
	unsigned wait_s = 60;
	int cmd = 0, opt, rc;
	const char *arg = NULL;

	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
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
		case 'h':
			fputs(ctl_usage, stdout);
			return CTL_EXIT_OK;
		case '?':
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
	if (rc) {
		fprintf(stderr, "opcontrol: no oprofiled is running on %s (no locked %s/lock)\n",
			c.dir, c.dir);
		return CTL_EXIT_NODAEMON;
	}
	switch (cmd) {
	case 'P':
		printf("%ld\n", c.pid);
		return CTL_EXIT_OK;
	case 'H':
		if (kill((pid_t)c.pid, SIGHUP)) {
			fprintf(stderr, "opcontrol: SIGHUP to %ld: %s\n", c.pid, strerror(errno));
			return CTL_EXIT_FAIL;
		}
		return CTL_EXIT_OK;
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
		if (arg && (!*arg || strchr(arg, '\n') || strlen(arg) > 200)) {
			fprintf(stderr, "opcontrol: --rotate=%s: not an interval\n", arg);
			return CTL_EXIT_USAGE;
		}
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
