/*
 * daemonize.c - oprofiled's start-up as a service: the plugins the config
 * file names exist, RLIMIT_NOFILE raised for the sample files and rings,
 * double-fork daemonizing with a readiness pipe to the starting process,
 * and the daemon's stdout/stderr following its log.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "control.h"
#include "daemonize.h"
#include "log.h"
#include "options.h"
#include "session.h"
#include "sfile.h"

/* "oprofiled: ..." to the daemon's log */
#define daemonize_log(c, ...) log_info((c)->log, __VA_ARGS__)

/* ------------------------------------------------------------------ */
/* start-up checks, file-descriptor limit, daemonizing                 */
/* ------------------------------------------------------------------ */

int daemonize_check_plugins(const struct op_options *o, FILE *err)
{
	char path[PATH_MAX];
	int rc = 0;
	size_t i;

	for (i = 0; i < o->nr_features; i++) {
		const struct op_feature_req *f = &o->features[i];

		if (!f->origin || !strcmp(f->origin, "command line") || !o->plugin_dir)
			continue;
		snprintf(path, sizeof(path), "%s/%s.so", o->plugin_dir, f->name);
		if (access(path, F_OK) == 0)
			continue;
		log_put(err, LOG_PREFIX,
			"%s: plugins: unknown plugin \"%s\": no %s.so in %s - fix the "
			"name (oprofiled --list-plugins shows them) or set enabled = false",
			f->origin, f->name, f->name, o->plugin_dir);
		rc = -ENOENT;
	}
	return rc;
}

static long daemonize_nr_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n > 0 ? n : 1;
}

/* sample files (LRU bound) and their directories kept open + one ring per CPU
 * and event + plugins, logs, slack */
static void daemonize_raise_nofile(struct control *c, size_t nr_events)
{
	struct rlimit rl;
	rlim_t need, old;

	need = (rlim_t)c->opts->max_open_files + SFILE_DIRS +
	       (rlim_t)daemonize_nr_cpus() * (nr_events + 4) + 128;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	old = rl.rlim_cur;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur >= need)
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need) {
		struct rlimit up = { need, need };

		/* root may raise the hard limit too */
		if (setrlimit(RLIMIT_NOFILE, &up) == 0) {
			daemonize_log(c,
				      "RLIMIT_NOFILE raised from %llu (hard %llu) to %llu for %u "
				      "sample files",
				      (unsigned long long)old, (unsigned long long)rl.rlim_max,
				      (unsigned long long)need, c->opts->max_open_files);
			return;
		}
		rl.rlim_cur = rl.rlim_max;
	} else {
		rl.rlim_cur = need;
	}
	if (setrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur >= need) {
		daemonize_log(c, "RLIMIT_NOFILE raised from %llu to %llu for %u sample files",
			      (unsigned long long)old, (unsigned long long)rl.rlim_cur,
			      c->opts->max_open_files);
		return;
	}
	daemonize_log(c,
		      "warning: RLIMIT_NOFILE is %llu, %llu wanted for max_open_files = %u: "
		      "sample files will be closed and reopened more often - raise the limit "
		      "(LimitNOFILE= in the unit) or lower max_open_files",
		      (unsigned long long)rl.rlim_cur, (unsigned long long)need,
		      c->opts->max_open_files);
}

static void daemonize_stdio_to_log(struct control *c)
{
	FILE *log = log_file(c->log);
	int fd = log ? fileno(log) : -1;

	if (fd < 0)
		return;
	dup2(fd, STDOUT_FILENO);
	dup2(fd, STDERR_FILENO);
}

/*
 * The starting process: until it runs, the daemon's stderr is this pipe, so
 * start-up errors reach the terminal (or the journal) that started it; a
 * NUL byte means "profiling runs", end of file without it a failed start.
 */
static void __attribute__((noreturn)) daemonize_wait_ready(int rfd, pid_t child)
{
	char buf[4096], *nul;
	ssize_t n;

	waitpid(child, NULL, 0); /* the intermediate child exits at once */
	for (;;) {
		n = read(rfd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		nul = memchr(buf, 0, (size_t)n);
		if (fwrite(buf, 1, nul ? (size_t)(nul - buf) : (size_t)n, stderr))
			fflush(stderr);
		if (nul)
			_exit(0);
	}
	fprintf(stderr, "oprofiled: the daemon stopped before profiling began (see the messages "
			"above)\n");
	_exit(1);
}

static int daemonize_detach(struct control *c)
{
	const char *log_file = c->opts->log_file;
	int p[2], devnull;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid > 0) {
		/* never return: session_close would remove the daemon's lock file */
		close(p[1]);
		daemonize_wait_ready(p[0], pid);
	}
	close(p[0]);
	if (setsid() < 0)
		_exit(1);
	pid = fork();
	if (pid < 0)
		_exit(1);
	if (pid > 0)
		_exit(0); /* the daemon is no session leader: it never gets a terminal again */
	umask(022);
	/* relative paths the daemon still opens later keep their meaning */
	if ((!log_file || log_file[0] == '/') &&
	    (!c->opts->proc_root || c->opts->proc_root[0] == '/') && chdir("/"))
		daemonize_log(c, "warning: chdir /: %s", strerror(errno));
	devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		close(devnull);
	}
	daemonize_stdio_to_log(c);
	/* start-up errors still go to the starting process (daemonize_ready ends that) */
	dup2(p[1], STDERR_FILENO);
	signal(SIGPIPE, SIG_IGN); /* it may be gone: a write error, not death */
	c->daemonized = true;
	c->ready_fd = p[1];
	session_write_pid(c->sess);
	daemonize_log(c, "daemon pid %ld", (long)getpid());
	return 0;
}

int daemonize_prepare(struct control *c, const struct op_options *o, struct session *sess,
		      size_t nr_events, struct op_log *log)
{
	c->opts = o;
	c->sess = sess;
	c->log = log;
	c->started = time(NULL);
	c->ready_fd = -1;
	c->listen_fd = -1;
	c->epfd = -1;
	c->prepared = true;
	daemonize_raise_nofile(c, nr_events);
	if (o->daemonize && o->mode != OP_MODE_LAUNCH)
		return daemonize_detach(c);
	return 0;
}

void daemonize_ready(struct control *c)
{
	if (!c->prepared || c->ready_fd <= 0)
		return;
	fflush(stderr);
	if (write(c->ready_fd, "", 1) != 1)
		daemonize_log(c, "warning: cannot tell the starting process we run: %s",
			      strerror(errno));
	close(c->ready_fd);
	c->ready_fd = -1;
	daemonize_stdio_to_log(c); /* stderr leaves the pipe for the log */
	c->stderr_is_log = true;
	if (c->log)
		c->log->stderr_is_log = true; /* errors are not echoed to the log twice */
}

void daemonize_after_hup(struct control *c)
{
	if (c->prepared && c->stderr_is_log)
		daemonize_stdio_to_log(c);
}
