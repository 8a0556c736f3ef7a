/*
 * main.c - oprofiled: options, session, plugins, event choice (evpick.c),
 * then the loop that moves records from the perf rings through buffer sync
 * and trans into sample files; signals, periodic sync and statistics, shutdown.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <libconfig.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "control.h"
#include "daemonize.h"
#include "evpick.h"
#include "ext.h"
#include "log.h"
#include "op_cpu.h"
#include "op_events.h"
#include "op_session_layout.h"
#include "options.h"
#include "perf.h"
#include "pipeline.h"
#include "session.h"
#include "sfile.h"

struct daemon {
	struct op_options opts;
	struct session sess;
	struct op_log log;     /* the one logger: every stage writes through it */
	struct pipeline *pipe; /* sync, trans, sample files, stats */
	struct ext_core_services core;
	struct ext_loader *loader;
	struct perf_session *perf;
	struct evpick pick;                     /* model, cpu type, events: evpick.c */
	const char *event_names[OP_MAX_EVENTS]; /* pick.events[i].name: stats/throttled/ */
	int sigfd;
	pthread_t warm; /* main_warm_start() */
	bool warm_started;
	struct control ctl; /* service mode: control.c */
};

static uint64_t main_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* plugins, perf warm-up                                               */
/* ------------------------------------------------------------------ */

/*
 * The first per-task perf event after a quiet second makes the kernel turn
 * on its scheduler hooks (a static key: live code patching, 10-20 ms on this
 * VM, paid inside perf_event_open). A throw-away event on a helper thread
 * pays it while the plugins load (the kallsyms snapshot); the kernel keeps
 * the hooks on for about a second after the last such event closes, so the
 * real opens in perf_open() find them on. Best effort: failures are ignored.
 */
static void *main_warm_thread(void *arg)
{
	struct perf_event_attr a;
	int fd;

	(void)arg;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* per-task modes only: system-wide events do not need the hooks */
static void main_warm_start(struct daemon *d)
{
	if (d->opts.mode != OP_MODE_LAUNCH && d->opts.mode != OP_MODE_PID)
		return;
	d->warm_started = !pthread_create(&d->warm, NULL, main_warm_thread, NULL);
}

/* before any fork (--daemonize, the launched command) and before exit */
static void main_warm_join(struct daemon *d)
{
	if (d->warm_started)
		pthread_join(d->warm, NULL);
	d->warm_started = false;
}

static int main_plugins(struct daemon *d)
{
	size_t i;
	int rc;

	d->loader = ext_loader_new(d->opts.plugin_dir, d->opts.config, &d->core, &d->log);
	if (!d->loader) {
		log_err(&d->log, "out of memory creating the plugin loader");
		return -ENOMEM;
	}
	ext_loader_set_verbose(d->loader, d->opts.verbose & OP_VERBOSE_EXT);
	for (i = 0; i < d->opts.nr_features; i++) {
		const struct op_feature_req *f = &d->opts.features[i];

		rc = ext_load(d->loader, f->name, f->args, f->origin);
		if (!rc)
			continue;
		/* the plugin's own message cannot tell an --ext-feature from a config line */
		if (strcmp(f->origin, OP_ORIGIN_CMDLINE))
			log_err(&d->log,
				"%s: plugin \"%s\" could not be loaded (see its messages above) - "
				"fix its args or settings, or remove the plugins entry",
				f->origin, f->name);
		else /* not the args: a URL with a password would be repeated here */
			log_err(&d->log,
				"--ext-feature=%s%s: plugin \"%s\" could not be loaded (see its "
				"messages above) - fix or remove the option",
				f->name, *f->args ? ":..." : "", f->name);
		return rc;
	}
	if (!ext_plugin(d->loader, "kernel") && !options_plugin_disabled(&d->opts, "kernel")) {
		char args[PATH_MAX + 16] = "";

		if (d->opts.vmlinux && !d->opts.no_vmlinux)
			snprintf(args, sizeof(args), "vmlinux=%s", d->opts.vmlinux);
		if (ext_load(d->loader, "kernel", args, "default"))
			log_err(&d->log,
				"warning: the kernel plugin could not be loaded from %s: kernel "
				"samples will be counted as lost",
				d->opts.plugin_dir);
	}
	/* issue 20: the cgroup of a process is the cgroup plugin's to know */
	if ((d->opts.separate & OP_SEP_CGROUP) && !ext_registry(d->loader)->split_cgroup) {
		log_err(&d->log,
			"--separate=cgroup needs the cgroup plugin, which is not loaded - add "
			"--ext-feature=cgroup (or a plugins.cgroup entry in the config file), or "
			"drop cgroup from --separate");
		return -EINVAL;
	}
	return evpick_choose(&d->pick, &d->opts, &d->log, d->loader);
}

/* ------------------------------------------------------------------ */
/* the loop                                                            */
/* ------------------------------------------------------------------ */

enum main_action { MAIN_CONTINUE, MAIN_STOP };

static enum main_action main_signals(struct daemon *d)
{
	struct signalfd_siginfo si;
	enum main_action act = MAIN_CONTINUE;
	int rc;

	while (read(d->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGTERM:
		case SIGINT:
			log_info(&d->log, "signal %u: stopping", si.ssi_signo);
			act = MAIN_STOP;
			break;
		case SIGUSR1:
			/*
			 * a signal the daemon sent itself comes from a plugin's
			 * thread (np_session_dump: a pull, a push interval): the
			 * files and stats/ as always, no statistics block in the
			 * log; opcontrol --dump and kill -USR1 still print it
			 */
			pipeline_dump(d->pipe, si.ssi_pid != (uint32_t)getpid());
			break;
		case SIGHUP:
			pipeline_close_files(d->pipe);
			rc = session_reopen_current(&d->sess);
			if (rc)
				log_err(&d->log, "%s/samples/current: cannot reopen it: %s",
					d->sess.dir, strerror(-rc));
			/* every stage writes through d->log: this moves them all */
			if (session_reopen_log(&d->sess) == 0)
				log_set_file(&d->log, d->sess.log);
			daemonize_after_hup(&d->ctl);
			log_info(&d->log, "SIGHUP: sample files closed, log reopened");
			break;
		default:
			break;
		}
	}
	return act;
}

/* the signals the main thread takes through its signalfd */
static void main_signal_set(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGTERM);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGUSR1);
	sigaddset(set, SIGHUP);
}

static int main_block_signals(struct daemon *d)
{
	sigset_t set;

	main_signal_set(&set);
	d->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return d->sigfd < 0 ? -errno : 0;
}

static int main_loop(struct daemon *d)
{
	uint64_t next_sync, next_stats;
	int rc = 0;

	next_sync = main_now_ms() + (uint64_t)d->opts.sync_interval * 1000;
	next_stats = main_now_ms() + (uint64_t)d->opts.stats_interval * 1000;
	for (;;) {
		int r = perf_poll(d->perf, 1000);
		uint64_t now;

		pipeline_drain(d->pipe);
		if (r < 0) {
			log_err(&d->log, "reading the perf rings failed: %s", strerror(-r));
			rc = r;
			break;
		}
		if (r == PERF_POLL_FD && (main_signals(d) == MAIN_STOP || control_poll(&d->ctl)))
			break;
		if (r == PERF_POLL_CHILD_EXIT || r == PERF_POLL_DONE)
			break;
		now = main_now_ms();
		if (d->opts.sync_interval && now >= next_sync) {
			pipeline_sync_files(d->pipe);
			next_sync = now + (uint64_t)d->opts.sync_interval * 1000;
		}
		if (d->opts.stats_interval && now >= next_stats) {
			pipeline_print_stats(d->pipe, NULL);
			next_stats = now + (uint64_t)d->opts.stats_interval * 1000;
		}
		control_tick(&d->ctl);
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* set-up                                                              */
/* ------------------------------------------------------------------ */

static int main_pipeline(struct daemon *d)
{
	struct ext_core_services *c = &d->core;
	int rc;

	rc = pipeline_new(&d->pipe, &d->log, d->opts.check_config ? NULL : &d->sess,
			  d->opts.image_filter);
	if (rc) {
		log_err(&d->log, "out of memory");
		return rc;
	}
	pipeline_core_services(d->pipe, c);
	c->session_dir = d->sess.dir;
	c->proc_root = d->opts.proc_root ? d->opts.proc_root : "/proc";
	return 0;
}

/*
 * Launch mode: the command must resolve (as execvp would) to an executable
 * file before the session is touched; 0 or -errno with a message.
 */
static int main_check_command(char **argv)
{
	const char *path, *p, *e;
	char buf[PATH_MAX];
	int rc = -ENOENT;

	if (!argv || !argv[0] || !*argv[0])
		return 0; /* perf_open explains a missing command */
	if (strchr(argv[0], '/')) {
		rc = access(argv[0], X_OK) ? -errno : 0;
	} else {
		path = getenv("PATH");
		for (p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; p;
		     p = e ? e + 1 : NULL) {
			e = strchr(p, ':');
			snprintf(buf, sizeof(buf), "%.*s/%s", e ? (int)(e - p) : (int)strlen(p), p,
				 argv[0]);
			if (!access(buf, X_OK)) {
				rc = 0;
				break;
			}
			if (errno == EACCES)
				rc = -EACCES;
		}
	}
	if (rc)
		fprintf(stderr,
			"oprofiled: cannot run %s: %s - check the command after \"--\" (nothing "
			"recorded was touched)\n",
			argv[0], strerror(-rc));
	return rc;
}

/* after the plugins are loaded: the registry and events are known */
static int main_sfiles(struct daemon *d)
{
	struct sfile_config cfg = { 0 };
	const char *proc_root = NULL;
	size_t i;
	int rc;

	cfg.current_dirfd = d->sess.current_fd;
	cfg.separate = d->opts.separate;
	cfg.max_open_files =
		d->opts.max_open_files ? d->opts.max_open_files : OP_DEFAULT_MAX_OPEN_FILES;
	cfg.cpu_type = d->pick.cpu_type;
	cfg.cpu_speed = session_cpu_speed(d->opts.proc_root);
	memcpy(cfg.events, d->pick.events, sizeof(cfg.events));
	cfg.nr_events = (unsigned)d->pick.nr_events;
	for (i = 0; i < d->pick.nr_events; i++)
		d->event_names[i] = d->pick.events[i].name;
	pipeline_set_event_names(d->pipe, d->event_names, d->pick.nr_events);
	/* live modes: processes whose records were lost are read from /proc once */
	if (d->opts.mode != OP_MODE_REPLAY)
		proc_root = d->opts.proc_root ? d->opts.proc_root : "/proc";
	rc = pipeline_open_files(d->pipe, &cfg, d->pick.reg, proc_root,
				 d->opts.verbose & OP_VERBOSE_SFILE, d->opts.ring_pages);
	if (rc)
		log_err(&d->log, "cannot set up the sample files: %s", strerror(-rc));
	return rc;
}

/* lines of the check's log that a start would only have logged: plugins' warnings */
static void main_check_warnings(const char *log)
{
	const char *p, *nl;

	for (p = log; p && *p; p = nl ? nl + 1 : NULL) {
		nl = strchr(p, '\n');
		/* "oprofiled: ..." lines reached stderr already */
		if (strncmp(p, "oprofiled: ", 11) &&
		    memmem(p, nl ? (size_t)(nl - p) : strlen(p), ": warning: ", 11))
			fprintf(stderr, "oprofiled: %.*s\n", nl ? (int)(nl - p) : (int)strlen(p), p);
	}
}

/*
 * --check-config: every check a start makes short of opening the session
 * and the perf events. The plugins are loaded and initialised (their args
 * and settings are checked by their own init, with no session directory,
 * as under a test host), the model is chosen and the events are parsed and
 * encoded for it, a command to launch must resolve. The log goes to memory:
 * errors reach stderr as at start, plugins' warnings are repeated there.
 */
static int main_check_config(struct daemon *d)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	log_init(&d->log, open_memstream(&text, &len));
	if (!d->log.fp)
		return -ENOMEM;
	d->log.echo_errors = true;
	rc = main_pipeline(d);
	if (!rc)
		rc = main_plugins(d);
	if (!rc && d->opts.mode == OP_MODE_LAUNCH && !d->opts.replay_file)
		rc = main_check_command(d->opts.command);
	if (d->loader)
		ext_loader_free(d->loader);
	d->loader = NULL;
	evpick_free(&d->pick);
	pipeline_free(d->pipe);
	d->pipe = NULL;
	fclose(d->log.fp);
	log_init(&d->log, NULL);
	main_check_warnings(text);
	free(text);
	return rc;
}

static int main_exit_status(struct daemon *d, int rc)
{
	int ws;

	if (rc)
		return 1;
	if (d->opts.mode == OP_MODE_LAUNCH && d->perf && perf_child_status(d->perf, &ws)) {
		if (WIFEXITED(ws))
			return WEXITSTATUS(ws);
		if (WIFSIGNALED(ws))
			return 128 + WTERMSIG(ws);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static struct daemon dd;
	struct daemon *d = &dd;
	struct perf_config pc = { 0 };
	char err[1024];
	const char *log_path;
	char def_log[PATH_MAX];
	bool profiling = false;
	int rc, status;

	d->sigfd = -1;
	/*
	 * The signals the signalfd takes are blocked before any thread exists
	 * (warm start, plugins' threads such as the kernel plugin's kallsyms
	 * pass), so that every thread inherits the mask: a SIGUSR1 (opcontrol
	 * --dump) or SIGTERM arriving during start-up stays pending for the
	 * signalfd instead of hitting a thread that left it unblocked, whose
	 * default action killed the daemon (SIGUSR1 seen right after start).
	 */
	{
		sigset_t set;

		main_signal_set(&set);
		if (sigprocmask(SIG_BLOCK, &set, NULL)) {
			perror("oprofiled: sigprocmask");
			return 1;
		}
	}
	/*
	 * One malloc arena and fixed thresholds, before any thread exists. The
	 * sample path never allocates, so the daemon's threads (plugins' HTTP
	 * and push threads, the kallsyms pass) gain nothing from arenas of
	 * their own, which kept what a pull or push freed (3.6-13 MB measured,
	 * tests/bench/rss_breakdown.sh). Fixed thresholds turn off glibc's
	 * dynamic ones, which after one large free kept up to 64 MB unreturned:
	 * blocks >= 128 KiB are mmap'd and unmapped on free, and a free top
	 * above 128 KiB goes back at once.
	 */
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	mallopt(M_TRIM_THRESHOLD, 128 * 1024);
	/* before the session's log exists, errors go to stderr */
	log_init(&d->log, stderr);
	d->log.echo_errors = true;
	rc = options_parse(&d->opts, argc, argv);
	if (rc)
		return rc > 0 ? 0 : 1;
	if (d->opts.list_plugins) {
		rc = ext_list_plugins(d->opts.plugin_dir, stdout);
		options_free(&d->opts);
		return rc ? 1 : 0;
	}
	if (daemonize_check_plugins(&d->opts, stderr)) {
		options_free(&d->opts);
		return 1;
	}
	if (d->opts.check_config) {
		rc = main_check_config(d);
		if (!rc)
			options_print(&d->opts, stdout);
		options_free(&d->opts);
		return rc ? 1 : 0;
	}

	/* the default log lives in samples/, opened relative to the session */
	log_path = d->opts.log_file;
	snprintf(def_log, sizeof(def_log), "%s/" OP_SESSION_LOG_PATH, d->opts.session_dir);
	if (log_path && !strcmp(log_path, def_log))
		log_path = NULL;
	if (!d->opts.replay_file && main_check_command(d->opts.command)) {
		options_free(&d->opts);
		return 127; /* as a shell says for a command it cannot run */
	}
	{
		const struct session_conf sc = { .dir = d->opts.session_dir,
						 .append = d->opts.append,
						 .log_file = log_path,
						 .group = d->opts.session_group };

		rc = session_open_conf(&d->sess, &sc, err, sizeof(err));
	}
	if (rc) {
		fprintf(stderr, "oprofiled: %s\n", err);
		options_free(&d->opts);
		return 1;
	}
	log_set_file(&d->log, d->sess.log);
	{
		time_t t = time(NULL);

		log_raw(&d->log, "oprofiled %s started %s", PACKAGE_VERSION, ctime(&t));
	}
	main_warm_start(d);
	rc = main_pipeline(d);
	if (!rc)
		rc = main_plugins(d);
	if (!rc)
		rc = main_sfiles(d);
	main_warm_join(d);
	if (rc)
		goto out;

	/* RLIMIT_NOFILE; --daemonize: double fork, the parent waits for daemonize_ready */
	rc = daemonize_prepare(&d->ctl, &d->opts, &d->sess, d->pick.nr_events, &d->log);
	if (rc) {
		log_err(&d->log, "cannot daemonize: %s", strerror(-rc));
		goto out;
	}

	pc.opts = &d->opts;
	pc.events = d->pick.attrs;
	pc.nr_events = d->pick.nr_events;
	pc.ext = d->pick.reg;
	/* records go straight to buffer sync: no hop per sample */
	pipeline_perf_config(d->pipe, &pc);
	pc.log = &d->log;
	err[0] = 0;
	rc = perf_open(&d->perf, &pc, err, sizeof(err));
	pipeline_set_perf(d->pipe, d->perf);
	pipeline_set_loader(d->pipe, d->loader);
	if (rc) {
		log_err(&d->log, "%s", err[0] ? err : strerror(-rc));
		goto out;
	}
	rc = main_block_signals(d);
	if (!rc)
		rc = perf_watch_fd(d->perf, d->sigfd);
	if (rc) {
		log_err(&d->log, "cannot watch signals: %s", strerror(-rc));
		goto out;
	}
	/* start-up succeeded: only now the old samples/current becomes previous */
	rc = session_commit(&d->sess);
	if (rc) {
		log_err(&d->log, "samples/%s: cannot make it samples/previous: %s", SESSION_STAGED,
			strerror(-rc));
		goto out;
	}
	{
		struct control_target ct = { d->pipe, d->perf, d->loader };

		control_start(&d->ctl, &ct); /* a failure is logged: signals still work */
	}
	log_info(&d->log, "profiling started (%zu event%s, session %s)", d->pick.nr_events,
		 d->pick.nr_events == 1 ? "" : "s", d->sess.dir);
	pipeline_session_event(d->pipe, OP_SESSION_START, NULL);
	daemonize_ready(&d->ctl);

	profiling = true;
	rc = main_loop(d);
	perf_stop(d->perf); /* delivers the kernel's exact lost counts since the last checkpoint */
	{
		time_t t = time(NULL);

		log_info(&d->log, "profiling stopped %s", ctime(&t));
	}
	pipeline_dump(d->pipe, true); /* what is left lands, the stats of the whole run */
	pipeline_session_event(d->pipe, OP_SESSION_STOP, NULL);

out:
	status = main_exit_status(d, rc);
	pipeline_free_files(d->pipe); /* plugins' sample-file handlers still there */
	pipeline_set_perf(d->pipe, NULL);
	pipeline_set_loader(d->pipe, NULL);
	perf_close(d->perf);
	if (d->loader)
		ext_loader_free(d->loader);
	pipeline_free(d->pipe);
	evpick_free(&d->pick);
	if (d->sigfd >= 0)
		close(d->sigfd);
	control_stop(&d->ctl);
	/* a start-up failure leaves no session behind (if this run created it) */
	if (rc && !profiling)
		session_discard(&d->sess);
	else
		session_close(&d->sess);
	options_free(&d->opts);
	return status;
}
