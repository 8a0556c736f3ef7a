/*
 * top_source.c - where optop's samples come from: a private system-wide
 * oprofiled it starts into a temporary session (root only) and stops and
 * removes at exit, or the session of a running daemon, which it asks to
 * dump through the control socket (opctl.c, opcontrol's client) before
 * each refresh, or only reads when the daemon does not take its requests.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "frontend.h"
#include "op_session_layout.h"
#include "optop.h"

#define DAEMON_OUT "oprofiled.out" /* in the private directory: the daemon's stderr */
#define START_WAIT_S 15
#define STOP_WAIT_S 10

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) ? -1 : 0;
	return unlink(path) ? -1 : 0;
}

/* the daemon's start-up messages, when it failed */
static void print_daemon_out(const struct top_source *s)
{
	char path[PATH_MAX], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/" DAEMON_OUT, s->tmp_dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stderr);
	close(fd);
}

static void remove_tmp(struct top_source *s)
{
	if (!s->tmp_dir)
		return;
	/* FTW_PHYS: a link in there is removed, never followed */
	if (nftw(s->tmp_dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT))
		fprintf(stderr, "optop: cannot remove the private session %s: %s\n", s->tmp_dir,
			strerror(errno));
	free(s->tmp_dir);
	s->tmp_dir = NULL;
}

/*
 * In the build tree optop is tools/optop/optop (or libtool's
 * tools/optop/.libs/optop) and oprofiled core/oprofiled, which
 * fe_find_program's ../core of tools/operf does not reach.
 */
static int find_build_tree_daemon(char *path, size_t len)
{
	static const char *const layouts[][2] = {
		{ "/tools/optop", "/../../core/oprofiled" },
		{ "/tools/optop/.libs", "/../../../core/oprofiled" },
	};
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return -ENOENT;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return -ENOENT;
	*slash = 0;
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		size_t el = strlen(exe), ll = strlen(layouts[i][0]);

		if (el < ll || strcmp(exe + el - ll, layouts[i][0]))
			continue;
		if ((size_t)snprintf(path, len, "%s%s", exe, layouts[i][1]) < len &&
		    access(path, X_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

static void argv_free(struct fe_argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
}

static pid_t spawn_daemon(struct top_source *s, const struct top_daemon_opts *d)
{
	char opd[PATH_MAX], out[PATH_MAX];
	struct fe_argv a = { 0 };
	pid_t pid, parent;
	int fd;

	if (find_build_tree_daemon(opd, sizeof(opd)) &&
	    fe_find_program("optop", "oprofiled", opd, sizeof(opd)))
		return -ENOENT;
	fe_argv_add(&a, opd);
	fe_argv_addf(&a, "--session-dir=%s", s->session_dir);
	fe_argv_add(&a, "--system-wide");
	/* no config file: the private session is what the command line says */
	fe_argv_add(&a, "--config=");
	if (d->events)
		fe_argv_addf(&a, "--events=%s", d->events);
	if (d->separate)
		fe_argv_addf(&a, "--separate=%s", d->separate);
	if (a.oom) {
		argv_free(&a);
		return -ENOMEM;
	}
	snprintf(out, sizeof(out), "%s/" DAEMON_OUT, s->tmp_dir);
	fd = open(out, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		argv_free(&a);
		return -errno;
	}
	fflush(NULL);
	parent = getpid();
	pid = fork();
	if (pid == 0) {
		/*
		 * Its own session: the terminal's ^C reaches optop only, which
		 * stops the daemon itself and then removes the directory.
		 */
		setsid();
		/* optop killed (SIGKILL, a crash): no daemon left sampling the system for nobody */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() != parent)
			_exit(1);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		execv(opd, a.v);
		dprintf(fd, "optop: cannot run %s: %s\n", opd, strerror(errno));
		_exit(127);
	}
	close(fd);
	argv_free(&a);
	return pid < 0 ? -errno : pid;
}

int src_start_private(struct top_source *s, const struct top_daemon_opts *d)
{
	char tmpl[] = "/tmp/optop-XXXXXX";
	const char *tmp = getenv("TMPDIR");
	char path[PATH_MAX];
	double until;
	int status, fd;
	pid_t pid;

	if (geteuid() != 0) {
		fprintf(stderr,
			"optop: without --session-dir, optop profiles the whole system with a "
			"private oprofiled, which needs root - run it as root, or give "
			"--session-dir=DIR of a running oprofiled's session you may read\n");
		return -EPERM;
	}
	/* mkdtemp: 0700, root's, a fresh name (nothing an attacker prepared) */
	if (tmp && *tmp == '/' && strlen(tmp) + sizeof("/optop-XXXXXX") < sizeof(path))
		snprintf(path, sizeof(path), "%s/optop-XXXXXX", tmp);
	else
		snprintf(path, sizeof(path), "%s", tmpl);
	if (!mkdtemp(path)) {
		fprintf(stderr, "optop: cannot create a private session directory %s: %s\n", path,
			strerror(errno));
		return -errno;
	}
	s->tmp_dir = strdup(path);
	if (!s->tmp_dir) {
		rmdir(path);
		return -ENOMEM;
	}
	s->session_dir = s->tmp_dir;
	pid = spawn_daemon(s, d);
	if (pid < 0) {
		fprintf(stderr, "optop: cannot start oprofiled: %s\n", strerror((int)-pid));
		remove_tmp(s);
		return (int)pid;
	}
	s->daemon = pid;
	/* ready when its control socket answers (it opens it once profiling runs) */
	s->ctl = (struct opctl){ .prog = "optop", .dir = s->session_dir, .dirfd = -1 };
	until = top_now() + START_WAIT_S;
	while (top_now() < until && !top_quit) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			s->daemon = 0;
			fprintf(stderr, "optop: the private oprofiled failed to start (%s %d):\n",
				WIFEXITED(status) ? "exit status" : "signal",
				WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
			print_daemon_out(s);
			remove_tmp(s);
			return -EIO;
		}
		snprintf(path, sizeof(path), "%s/" OP_SESSION_CONTROL, s->session_dir);
		if (access(path, F_OK) == 0) {
			/* quietly: the messages of a half-started daemon are not news */
			int save = dup(STDERR_FILENO),
			    null = open("/dev/null", O_WRONLY | O_CLOEXEC);

			if (null >= 0)
				dup2(null, STDERR_FILENO);
			opctl_close(&s->ctl);
			fd = opctl_find(&s->ctl) ? -1 : opctl_connect(&s->ctl);
			if (save >= 0) {
				dup2(save, STDERR_FILENO);
				close(save);
			}
			if (null >= 0)
				close(null);
			if (fd >= 0) {
				close(fd);
				s->can_dump = true;
				return 0;
			}
		}
		sleep_ms(50);
	}
	fprintf(stderr, "optop: the private oprofiled did not get ready within %d s%s\n",
		START_WAIT_S, top_quit ? " (interrupted)" : ":");
	if (!top_quit)
		print_daemon_out(s);
	src_stop(s);
	return -ETIMEDOUT;
}

int src_watch(struct top_source *s, const char *dir)
{
	struct stat st;
	char samples[PATH_MAX];
	int rc;

	s->session_dir = dir;
	s->ctl = (struct opctl){ .prog = "optop", .dir = dir, .dirfd = -1 };
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "optop: --session-dir=%s: %s\n", dir,
			errno && !S_ISDIR(st.st_mode) ? strerror(errno) : "not a directory");
		return -ENOENT;
	}
	snprintf(samples, sizeof(samples), "%s/" OP_SESSION_CURRENT_PATH, dir);
	if (access(samples, R_OK | X_OK)) {
		int e = errno;

		fprintf(stderr, "optop: --session-dir=%s: cannot read %s: %s - %s\n", dir, samples,
			strerror(e),
			e == ENOENT ? "no oprofiled has written a session there (start one, e.g. "
				      "oprofiled --system-wide --daemonize --session-dir=DIR)" :
				      "run optop as the session's owner (or root)");
		return e == ENOENT ? -ENOENT : -EACCES;
	}
	rc = opctl_find(&s->ctl);
	if (rc == -ESRCH || rc == -ENOENT) {
		/* a live view of a session nobody writes would never change */
		fprintf(stderr,
			"optop: nothing to watch on %s - start oprofiled there (e.g. oprofiled "
			"--system-wide --daemonize --session-dir=%s), or read the finished "
			"session with opreport --session-dir=%s\n",
			dir, dir, dir);
		return -ESRCH;
	}
	if (rc == 0) {
		int fd = opctl_connect(&s->ctl);

		if (fd >= 0) {
			close(fd);
			s->can_dump = true;
			return 0;
		}
	}
	/* messages about why were printed by opctl; the view keeps a short one */
	snprintf(s->note, sizeof(s->note), "read-only: the daemon does not take our dump requests");
	fprintf(stderr, "optop: %s - showing what is on disk (the daemon's own flushes)\n", s->note);
	return 0;
}

void src_dump(struct top_source *s)
{
	FILE *null;

	if (!s->can_dump)
		return;
	null = fopen("/dev/null", "we");
	if (opctl_request(&s->ctl, "dump\n", null ? null : stderr) != 0) {
		/* the daemon went away or refused: go on with what is on disk */
		s->can_dump = false;
		snprintf(s->note, sizeof(s->note), "read-only: the daemon stopped answering");
	}
	if (null)
		fclose(null);
}

bool src_alive(struct top_source *s)
{
	int status;

	if (!s->daemon)
		return true;
	if (waitpid(s->daemon, &status, WNOHANG) != s->daemon)
		return true;
	s->daemon = 0;
	fprintf(stderr, "optop: the private oprofiled exited (%s %d); its messages:\n",
		WIFEXITED(status) ? "exit status" : "signal",
		WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	print_daemon_out(s);
	return false;
}

void src_stop(struct top_source *s)
{
	opctl_close(&s->ctl);
	if (s->daemon > 0) {
		double until = top_now() + STOP_WAIT_S;
		int status;

		kill(s->daemon, SIGTERM);
		while (waitpid(s->daemon, &status, WNOHANG) == 0) {
			if (top_now() > until) {
				fprintf(stderr,
					"optop: the private oprofiled (pid %d) still runs after "
					"%d s - killed\n",
					(int)s->daemon, STOP_WAIT_S);
				kill(s->daemon, SIGKILL);
				waitpid(s->daemon, &status, 0);
				break;
			}
			sleep_ms(20);
		}
		s->daemon = 0;
	}
	remove_tmp(s);
}
