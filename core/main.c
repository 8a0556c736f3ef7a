/*
 * main.c - oprofiled: options, session, plugins, event choice, then the
 * loop that moves records from the perf rings through buffer sync and trans
 * into sample files; signals, periodic sync and statistics, shutdown.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <libconfig.h>
#include <limits.h>
#include <linux/perf_event.h>
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
	struct op_log log;            /* the one logger: every stage writes through it */
	struct pipeline *pipe;        /* sync, trans, sample files, stats */
	struct ext_core_services core;
	struct ext_loader *loader;
	struct ext_registry *reg;
	struct perf_session *perf;
	const struct ext_model *model;
	uint32_t cpu_type;
	const char *cpu_type_name;
	struct op_events catalogue;   /* events/ of the cpu type (not for timer) */
	bool have_catalogue;
	struct op_perf_attr attrs[OP_MAX_EVENTS];
	struct sfile_event events[OP_MAX_EVENTS];
	const char *event_names[OP_MAX_EVENTS]; /* events[i].name: stats/throttled/ */
	size_t nr_events;
	char model_why[640];          /* first hardware model's reason to decline */
	int sigfd;
	pthread_t warm;               /* main_warm_start() */
	bool warm_started;
	struct control ctl;           /* service mode: control.c */
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* CPU, models, events                                                 */
/* ------------------------------------------------------------------ */

static bool main_pmu_usable(void)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void main_cpuinfo(const char *proc_root, const char *forced, struct op_cpuinfo *ci)
{
	session_cpuinfo(proc_root, ci);
	ci->forced_cpu_type = forced;
	ci->pmu_usable = main_pmu_usable();
}

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

/* the registered model with the highest detect() score, or NULL */
static const struct ext_model *main_pick_model(struct daemon *d, const struct op_cpuinfo *ci,
					       bool quiet)
{
	const struct ext_model *best = NULL;
	int best_score = 0;
	size_t i;

	for (i = 0; i < d->reg->nr_models; i++) {
		const struct ext_model *m = &d->reg->models[i];
		char why[512] = "";
		int score = m->desc.detect ? m->desc.detect(m->priv, ci, why, sizeof(why)) : 0;

		if (score > best_score) {
			best = m;
			best_score = score;
		} else if (score <= 0 && why[0] && !quiet) {
			log_info(&d->log, "model %s declines this CPU: %s", m->desc.name, why);
			if (!d->model_why[0])
				snprintf(d->model_why, sizeof(d->model_why), "model %s declines "
					 "this CPU: %s", m->desc.name, why);
		}
	}
	return best;
}

/* user turned plugin @name off in the config file (plugins.NAME.enabled = false)? */
static bool main_plugin_disabled(const struct daemon *d, const char *name)
{
	return options_plugin_disabled(&d->opts, name);
}

/*
 * Hardware-model plugins are probed on every start: each one present in the
 * plugin directory and not disabled (plugins.NAME.enabled = false) is
 * loaded; its models' detect() decide. A missing file is not an error.
 */
static void main_load_models(struct daemon *d)
{
	static const char *const models[] = { "amd64", "intel" };
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		if (ext_plugin(d->loader, models[i]) || main_plugin_disabled(d, models[i]))
			continue;
		snprintf(path, sizeof(path), "%s/%s.so", d->opts.plugin_dir, models[i]);
		if (access(path, F_OK))
			continue;
		if (ext_load(d->loader, models[i], "", "default"))
			log_err(&d->log, "warning: hardware-model plugin %s could not be loaded from %s "
			       "(see the log)", models[i], d->opts.plugin_dir);
	}
}

/* NAME[:count[:um[:kernel[:user]]]] -> req; strings point into @buf */
static int main_parse_event(char *buf, struct op_event_req *req, char *err, size_t err_len)
{
	char *field[5] = { 0 }, *p = buf, *end;
	unsigned long long v;
	int n = 0, i;

	memset(req, 0, sizeof(*req));
	req->size = sizeof(*req);
	req->kernel = req->user = true;
	while (n < 5) {
		field[n++] = p;
		p = strchr(p, ':');
		if (!p)
			break;
		*p++ = 0;
	}
	if (p) {
		snprintf(err, err_len, "event \"%s\": too many ':' fields - expected "
			 "NAME[:count[:unitmask[:kernel[:user]]]]", buf);
		return -EINVAL;
	}
	if (!field[0][0]) {
		snprintf(err, err_len, "empty event name - expected NAME[:count[:unitmask[:kernel[:user]]]]");
		return -EINVAL;
	}
	req->name = field[0];
	for (i = 1; i < n; i++) {
		if (!field[i][0])
			continue;
		errno = 0;
		v = strtoull(field[i], &end, 0);
		if (errno || *end) {
			snprintf(err, err_len, "event %s: field %d \"%s\" is not a number", req->name,
				 i + 1, field[i]);
			return -EINVAL;
		}
		if (i == 1) {
			req->count = v;
		} else if (i == 2) {
			if (v > UINT32_MAX)
				goto out_range;
			req->um = (uint32_t)v;
		} else {
			if (v > 1) {
				snprintf(err, err_len, "event %s: the %s flag must be 0 or 1, found \"%s\"",
					 req->name, i == 3 ? "kernel" : "user", field[i]);
				return -EINVAL;
			}
			if (i == 3)
				req->kernel = v;
			else
				req->user = v;
		}
	}
	return 0;

out_range:
	snprintf(err, err_len, "event %s: unit mask \"%s\" does not fit 32 bits", req->name,
		 field[2]);
	return -EINVAL;
}

/* field @i (0: name, 3: kernel) of NAME[:count[:um[:kernel[:user]]]] is given, non-empty */
static bool main_event_field_given(const char *item, int i)
{
	const char *p = item;

	while (i-- > 0) {
		p = strchr(p, ':');
		if (!p)
			return false;
		p++;
	}
	return *p && *p != ':';
}

/*
 * A user the kernel will not give kernel samples (perf_event_paranoid 2 or
 * more, not root) profiling their own command or processes: as perf record
 * does, an event whose kernel field was not given samples user space only,
 * where asking for the kernel would make the start fail.
 */
static bool main_kernel_refused(const struct daemon *d)
{
	if (geteuid() == 0 || (d->opts.mode != OP_MODE_LAUNCH && d->opts.mode != OP_MODE_PID))
		return false;
	return perf_paranoid() >= 2;
}

static int main_choose_events(struct daemon *d)
{
	const struct ext_model *m = d->model;
	const char *spec = d->opts.events_spec ? d->opts.events_spec : m->desc.default_event;
	char *list, *item, *save = NULL;
	bool user_only_said = false;
	char err[512];
	int rc = 0;

	if (!spec || !*spec) {
		log_err(&d->log, "model %s has no default event: give --events=NAME:count", m->desc.name);
		return -EINVAL;
	}
	if (!m->desc.encode) {
		log_err(&d->log, "model %s cannot encode events (no encode callback)", m->desc.name);
		return -EINVAL;
	}
	list = strdup(spec);
	if (!list)
		return -ENOMEM;
	for (item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		struct op_event_req req;
		struct sfile_event *se;
		char item_copy[256];
		size_t i;

		if (d->nr_events == OP_MAX_EVENTS) {
			log_err(&d->log, "--events: more than %d events - give fewer", OP_MAX_EVENTS);
			rc = -EINVAL;
			break;
		}
		snprintf(item_copy, sizeof(item_copy), "%s", item);
		rc = main_parse_event(item, &req, err, sizeof(err));
		if (rc) {
			log_err(&d->log, "--events=%s: %s", spec, err);
			break;
		}
		if (strlen(req.name) > OP_EVENT_NAME_MAX || strpbrk(req.name, "./ ")) {
			log_err(&d->log, "--events: event name \"%s\" must be at most %d characters without "
			       "'.', '/' or spaces", req.name, OP_EVENT_NAME_MAX);
			rc = -EINVAL;
			break;
		}
		if (d->have_catalogue) {
			/* the catalogue validates name, count, unit mask and flags */
			struct op_event_spec spec;

			rc = op_parse_event_spec(&d->catalogue, item_copy, &spec, err, sizeof(err));
			if (rc) {
				log_err(&d->log, "--events: %s (cpu type %s; ophelp lists the events)", err,
					 d->cpu_type_name);
				break;
			}
			req.code = spec.ev->code;
			req.um = spec.um;
			req.count = spec.count;
			req.kernel = spec.kernel;
			req.user = spec.user;
			req.counter_mask = spec.ev->counter_mask;
		}
		if (req.kernel && !main_event_field_given(item_copy, 3) && main_kernel_refused(d)) {
			if (!user_only_said)
				log_err(&d->log, "note: perf_event_paranoid is 2 or more and oprofiled is not "
				       "root: sampling user space only (give NAME:count:um:1:1 to ask "
				       "for kernel samples too, as root or with CAP_PERFMON)");
			user_only_said = true;
			req.kernel = false;
		}
		for (i = 0; i < d->nr_events; i++) {
			if (!strcmp(d->events[i].name, req.name) && d->events[i].um == req.um) {
				log_err(&d->log, "--events: %s with unit mask %u is given twice - give it once",
				    req.name, req.um);
				rc = -EINVAL;
				goto out;
			}
		}
		err[0] = 0;
		rc = m->desc.encode(m->priv, &req, &d->attrs[d->nr_events], err, sizeof(err));
		if (rc) {
			/* a hardware event asked for while the fallback took over: say why */
			log_err(&d->log, "event %s cannot be used with model %s: %s%s%s", req.name, m->desc.name,
			    err[0] ? err : strerror(rc < 0 ? -rc : EINVAL),
			    d->model_why[0] ? "; hardware " : "", d->model_why);
			rc = rc < 0 ? rc : -EINVAL;
			break;
		}
		se = &d->events[d->nr_events];
		snprintf(se->name, sizeof(se->name), "%s", req.name);
		se->event = req.code;
		se->um = req.um;
		se->count = req.count;
		d->nr_events++;
	}
out:
	free(list);
	if (!rc && d->nr_events == 0 && !d->reg->no_event_ok) {
		log_err(&d->log, "--events=%s: no event given", spec);
		rc = -EINVAL;
	}
	return rc;
}

static int main_plugins(struct daemon *d)
{
	struct op_cpuinfo ci;
	const char *proc_root = d->opts.proc_root ? d->opts.proc_root : "/proc";
	uint32_t id = 0;
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
			log_err(&d->log, "%s: plugin \"%s\" could not be loaded (see its messages above) - "
				 "fix its args or settings, or remove the plugins entry", f->origin,
				 f->name);
		else
			log_err(&d->log, "--ext-feature=%s%s%s: plugin \"%s\" could not be loaded (see its "
				 "messages above) - fix or remove the option", f->name,
				 *f->args ? ":" : "", f->args, f->name);
		return rc;
	}
	if (!ext_plugin(d->loader, "kernel") && !main_plugin_disabled(d, "kernel")) {
		char args[PATH_MAX + 16] = "";

		if (d->opts.vmlinux && !d->opts.no_vmlinux)
			snprintf(args, sizeof(args), "vmlinux=%s", d->opts.vmlinux);
		if (ext_load(d->loader, "kernel", args, "default"))
			log_err(&d->log, "warning: the kernel plugin could not be loaded from %s: kernel "
			       "samples will be counted as lost", d->opts.plugin_dir);
	}
	main_load_models(d);
	d->reg = ext_registry(d->loader);
	main_cpuinfo(proc_root, d->opts.cpu_type, &ci);
	d->model = main_pick_model(d, &ci, true);
	if (!d->model && !ext_plugin(d->loader, "timer") && !main_plugin_disabled(d, "timer")) {
		if (ext_load(d->loader, "timer", "", "default") == 0)
			d->reg = ext_registry(d->loader);
	}
	d->model = main_pick_model(d, &ci, false);
	if (!d->model) {
		if (d->reg->no_event_ok && !d->opts.events_spec)
			return 0;
		log_err(&d->log, "no hardware model claims this CPU (%s family %u model %u, PMU %s) and the "
		       "timer plugin is not available in %s - install the plugins or set "
		       "--plugin-dir",
		    ci.vendor[0] ? ci.vendor : "unknown", ci.family, ci.model,
		    ci.pmu_usable ? "usable" : "not usable", d->opts.plugin_dir);
		return -ENOENT;
	}
	if (d->model->desc.cpu_type)
		d->cpu_type_name = d->model->desc.cpu_type(d->model->priv, &id);
	if (!d->cpu_type_name)
		d->cpu_type_name = "unknown";
	d->cpu_type = id;
	log_info(&d->log, "model %s, cpu type %s (%u)", d->model->desc.name, d->cpu_type_name, id);
	if (op_cpu_has_events((int)id)) {
		char err[512] = "";

		rc = op_events_load(&d->catalogue, NULL, d->cpu_type_name,
				    d->model->desc.nr_counters, 0, err, sizeof(err));
		if (rc) {
			log_err(&d->log, "events catalogue of cpu type %s: %s - check OPROFILE_EVENTS_DIR "
			       "or the installation", d->cpu_type_name, err[0] ? err : strerror(-rc));
			return rc;
		}
		d->have_catalogue = true;
	}
	rc = main_choose_events(d);
	if (rc && d->opts.events_origin)
		log_err(&d->log, "%s: events: \"%s\" cannot be used (see above) - fix the config file",
			 d->opts.events_origin, d->opts.events_spec);
	return rc;
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
			pipeline_dump(d->pipe);
			break;
		case SIGHUP:
			pipeline_close_files(d->pipe);
			rc = session_reopen_current(&d->sess);
			if (rc)
				log_err(&d->log, "%s/samples/current: cannot reopen it: %s", d->sess.dir,
					 strerror(-rc));
			/* every stage writes through d->log: this moves them all */
			if (session_reopen_log(&d->sess) == 0)
				log_set_file(&d->log, d->sess.log);
			control_after_hup(&d->ctl);
			log_info(&d->log, "SIGHUP: sample files closed, log reopened");
			break;
		default:
			break;
		}
	}
	return act;
}

static int main_block_signals(struct daemon *d)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	d->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	return d->sigfd < 0 ? -errno : 0;
}

static int main_loop(struct daemon *d)
{
	uint64_t next_sync, next_stats;
	int rc = 0;

	next_sync = now_ms() + (uint64_t)d->opts.sync_interval * 1000;
	next_stats = now_ms() + (uint64_t)d->opts.stats_interval * 1000;
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
		now = now_ms();
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
		for (p = path && *path ? path : "/usr/local/bin:/usr/bin:/bin"; p; p = e ? e + 1 : NULL) {
			e = strchr(p, ':');
			snprintf(buf, sizeof(buf), "%.*s/%s", e ? (int)(e - p) : (int)strlen(p),
				 p, argv[0]);
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
	cfg.max_open_files = d->opts.max_open_files ? d->opts.max_open_files : OP_DEFAULT_MAX_OPEN_FILES;
	cfg.cpu_type = d->cpu_type;
	cfg.cpu_speed = session_cpu_speed(d->opts.proc_root);
	memcpy(cfg.events, d->events, sizeof(cfg.events));
	cfg.nr_events = (unsigned)d->nr_events;
	for (i = 0; i < d->nr_events; i++)
		d->event_names[i] = d->events[i].name;
	pipeline_set_event_names(d->pipe, d->event_names, d->nr_events);
	/* live modes: processes whose records were lost are read from /proc once */
	if (d->opts.mode != OP_MODE_REPLAY)
		proc_root = d->opts.proc_root ? d->opts.proc_root : "/proc";
	rc = pipeline_open_files(d->pipe, &cfg, d->reg, proc_root,
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
		if (strncmp(p, "oprofiled: ", 11) && memmem(p, nl ? (size_t)(nl - p) : strlen(p),
							   ": warning: ", 11))
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
	if (d->have_catalogue)
		op_events_free(&d->catalogue);
	d->have_catalogue = false;
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
	if (control_check_plugins(&d->opts, stderr)) {
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

	/* RLIMIT_NOFILE; --daemonize: double fork, the parent waits for control_ready */
	rc = control_prepare(&d->ctl, &d->opts, &d->sess, d->nr_events, &d->log);
	if (rc) {
		log_err(&d->log, "cannot daemonize: %s", strerror(-rc));
		goto out;
	}

	pc.opts = &d->opts;
	pc.events = d->attrs;
	pc.nr_events = d->nr_events;
	pc.ext = d->reg;
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
	log_info(&d->log, "profiling started (%zu event%s, session %s)", d->nr_events,
		 d->nr_events == 1 ? "" : "s", d->sess.dir);
	control_ready(&d->ctl);

	profiling = true;
	rc = main_loop(d);
	perf_stop(d->perf); /* delivers the kernel's exact lost counts since the last checkpoint */
	{
		time_t t = time(NULL);

		log_info(&d->log, "profiling stopped %s", ctime(&t));
	}
	pipeline_dump(d->pipe); /* what is left lands, the stats of the whole run */

out:
	status = main_exit_status(d, rc);
	pipeline_free_files(d->pipe); /* plugins' sample-file handlers still there */
	pipeline_set_perf(d->pipe, NULL);
	pipeline_set_loader(d->pipe, NULL);
	perf_close(d->perf);
	if (d->loader)
		ext_loader_free(d->loader);
	pipeline_free(d->pipe);
	if (d->have_catalogue)
		op_events_free(&d->catalogue);
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
