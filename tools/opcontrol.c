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
#include "opctl.h"

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

/* the lock's pid, verified: the control socket's server is that process */
static int ctl_verify_pid(struct opctl *c)
{
	int fd = opctl_connect(c);

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
static int ctl_hup(struct opctl *c)
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

static int ctl_wait_exit(struct opctl *c, unsigned secs)
{
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	unsigned i;

	for (i = 0; i < secs * 20; i++) {
		if (!opctl_running(c) && ctl_exited(c->pid))
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
	struct opctl c = { .prog = "opcontrol", .dir = NULL, .dirfd = -1 };
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
	rc = opctl_find(&c);
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
	rc = opctl_request(&c, req, stdout);
	if (rc < 0)
		return CTL_EXIT_FAIL;
	if (rc)
		return CTL_EXIT_FAIL;
	if (cmd == 'S')
		return ctl_wait_exit(&c, wait_s) ? CTL_EXIT_FAIL : CTL_EXIT_OK;
	return CTL_EXIT_OK;
}
