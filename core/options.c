/*
 * options.c - oprofiled's command line: built-in defaults, then the config
 * file (config.c), then the command line on top; validation of the result.
 * --check-config's printout of the effective configuration is options_print.c.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "op_events.h"
#include "op_interval.h"
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "ext.h"
#include "log.h"
#include "op_mangle.h"
#include "op_session_layout.h"
#include "oprofile_sdk.h"
#include "optval.h"

#ifndef OP_PLUGINDIR
#define OP_PLUGINDIR "/usr/local/lib/oprofile-ng/plugins"
#endif
#ifndef OP_SYSCONFIGFILE
#define OP_SYSCONFIGFILE "/usr/local/etc/oprofiled.conf"
#endif

#define OPT_PID_MAX 4194304u /* Linux PID_MAX_LIMIT */

enum {
	OPT_SESSION_DIR = 256,
	OPT_SEPARATE,
	OPT_EXT_FEATURE,
	OPT_CONFIG,
	OPT_PLUGIN_DIR,
	OPT_VMLINUX,
	OPT_NO_VMLINUX,
	OPT_IMAGE,
	OPT_VERBOSE,
	OPT_APPEND,
	OPT_RING_PAGES,
	OPT_RECORD,
	OPT_RECORD_OVERWRITE,
	OPT_REPLAY,
	OPT_PROC_ROOT,
	OPT_CPU_TYPE,
	OPT_LIST_PLUGINS,
	OPT_CHECK_CONFIG,
	OPT_DAEMONIZE,
	OPT_STATS_INTERVAL,
	OPT_SYNC_INTERVAL,
	OPT_LOG_FILE,
	OPT_MAX_OPEN_FILES,
	OPT_ROTATE,
	OPT_ROTATE_KEEP,
	OPT_FREQUENCY,
	OPT_SESSION_GROUP,
	OPT_VERSION,
	OPT_USAGE,
};

static const struct option opt_long[] = {
	{ "session-dir", required_argument, NULL, OPT_SESSION_DIR },
	{ "session-group", required_argument, NULL, OPT_SESSION_GROUP },
	{ "events", required_argument, NULL, 'e' },
	{ "frequency", required_argument, NULL, OPT_FREQUENCY },
	{ "separate", required_argument, NULL, OPT_SEPARATE },
	{ "ext-feature", required_argument, NULL, OPT_EXT_FEATURE },
	{ "config", required_argument, NULL, OPT_CONFIG },
	{ "plugin-dir", required_argument, NULL, OPT_PLUGIN_DIR },
	{ "vmlinux", required_argument, NULL, OPT_VMLINUX },
	{ "no-vmlinux", no_argument, NULL, OPT_NO_VMLINUX },
	{ "image", required_argument, NULL, OPT_IMAGE },
	{ "verbose", optional_argument, NULL, OPT_VERBOSE },
	{ "append", no_argument, NULL, OPT_APPEND },
	{ "ring-pages", required_argument, NULL, OPT_RING_PAGES },
	{ "pid", required_argument, NULL, 'p' },
	{ "system-wide", no_argument, NULL, 'a' },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "record-overwrite", no_argument, NULL, OPT_RECORD_OVERWRITE },
	{ "replay", required_argument, NULL, OPT_REPLAY },
	{ "proc-root", required_argument, NULL, OPT_PROC_ROOT },
	{ "cpu-type", required_argument, NULL, OPT_CPU_TYPE },
	{ "list-plugins", no_argument, NULL, OPT_LIST_PLUGINS },
	{ "check-config", no_argument, NULL, OPT_CHECK_CONFIG },
	{ "daemonize", no_argument, NULL, OPT_DAEMONIZE },
	{ "stats-interval", required_argument, NULL, OPT_STATS_INTERVAL },
	{ "sync-interval", required_argument, NULL, OPT_SYNC_INTERVAL },
	{ "log-file", required_argument, NULL, OPT_LOG_FILE },
	{ "max-open-files", required_argument, NULL, OPT_MAX_OPEN_FILES },
	{ "rotate", required_argument, NULL, OPT_ROTATE },
	{ "rotate-keep", required_argument, NULL, OPT_ROTATE_KEEP },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "usage", no_argument, NULL, OPT_USAGE },
	{ NULL, 0, NULL, 0 },
};

/*
 * '+': stop at the first non-option, which starts the command to launch;
 * ':': report a missing value as ':' (not as an unknown option)
 */
static const char opt_short[] = "+:he:p:a?";

static const char opt_usage[] =
	"Usage: oprofiled [OPTIONS] [--] [COMMAND [ARGS...]]\n"
	"       oprofiled [OPTIONS] --pid=PID[,PID...] | --system-wide\n"
	"\n"
	"Profile COMMAND, running processes, or the whole system, into OProfile sample files.\n"
	"\n"
	"  --session-dir=DIR        where samples go (default ./oprofile_data, or\n"
	"                           /var/lib/oprofile with --system-wide)\n"
	"  --session-group=GROUP    share the session with GROUP (directories 02750,\n"
	"                           files 0640); else a root daemon's is private (0700/0600)\n"
	"  -e, --events=EV,...      NAME:count[:unitmask[:kernel[:user]]] (default: the model's);\n"
	"                           count may be a frequency, e.g. TIMER:99Hz\n"
	"  --frequency=HZ           sample the model's default event at HZ per CPU (1..10000)\n"
	"  --separate=LIST          none,lib,kernel,thread,cpu,all,cgroup (comma list;\n"
	"                           cgroup needs --ext-feature=cgroup)\n"
	"  --ext-feature=NAME[:ARGS]  load plugin NAME with ARGS (repeatable)\n"
	"  --config=FILE            config file (default " OP_SYSCONFIGFILE " if present;\n"
	"                           --config= reads none)\n"
	"  --plugin-dir=DIR         plugin directory (default $OP_PLUGIN_DIR or " OP_PLUGINDIR ")\n"
	"  --vmlinux=FILE | --no-vmlinux   kernel image with symbols, or none\n"
	"  --image=A,B,...          only profile these images\n"
	"  --verbose[=LIST]         all,sfile,arcs,samples,module,misc,ext\n"
	"  --append                 add to existing samples instead of starting anew\n"
	"  --ring-pages=N           data pages per per-CPU ring (power of two, 1..65536)\n"
	"  -p, --pid=PID[,PID...]   profile running processes\n"
	"  -a, --system-wide        profile every process\n"
	"  --record=FILE            also write the raw ring records to FILE (a new file) in\n"
	"                           oprofiled's own format for --replay (not perf.data)\n"
	"  --record-overwrite       with --record: replace FILE if it is a regular file\n"
	"  --replay=FILE            process a recorded stream instead of the kernel's\n"
	"  --proc-root=DIR          read process information below DIR (tests)\n"
	"  --cpu-type=NAME          force the OProfile cpu type\n"
	"  --stats-interval=SEC     print statistics every SEC seconds (0: only at exit)\n"
	"  --sync-interval=SEC      flush sample files every SEC seconds\n"
	"  --max-open-files=N       bound on open sample files (default 2048)\n"
	"  --log-file=FILE          log (default SESSION/samples/oprofiled.log)\n"
	"  --daemonize              detach from the terminal (double fork, setsid)\n"
	"  --rotate=INTERVAL        save the samples as samples/rotate-TIME every INTERVAL\n"
	"                           (seconds, or 30s, 5m, 1h, 1d; 0: off) and start afresh\n"
	"  --rotate-keep=K          keep at most K rotate-* sessions (default 24)\n"
	"  --list-plugins           list the plugins of the plugin directory and exit\n"
	"  --check-config           check what a start checks (plugins and their args,\n"
	"                           events), print the effective configuration, exit\n"
	"  -h, --help               this text\n"
	"  -?, --usage              the options in brief\n"
	"  --version                print the version\n";

static const char opt_brief_usage[] =
	"Usage: oprofiled [--session-dir=DIR] [--session-group=GROUP] [-e|--events=EV,...]\n"
	"        [--frequency=HZ]\n"
	"        [--separate=LIST] [--ext-feature=NAME[:ARGS]] [--config=FILE]\n"
	"        [--plugin-dir=DIR] [--vmlinux=FILE|--no-vmlinux] [--image=A,B,...]\n"
	"        [--verbose[=LIST]] [--append] [--ring-pages=N] [-p|--pid=PID[,PID...]]\n"
	"        [-a|--system-wide] [--record=FILE] [--record-overwrite] [--replay=FILE]\n"
	"        [--proc-root=DIR] [--cpu-type=NAME] [--stats-interval=SEC]\n"
	"        [--sync-interval=SEC] [--max-open-files=N] [--log-file=FILE] [--daemonize]\n"
	"        [--rotate=INTERVAL] [--rotate-keep=K] [--list-plugins] [--check-config]\n"
	"        [-h|--help] [-?|--usage] [--version] [--] [COMMAND [ARGS...]]\n";

static void opt_err(FILE *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void opt_err(FILE *err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vput(err, LOG_PREFIX, fmt, ap); /* the caller's stream, as the daemon's log writes */
	va_end(ap);
}

static int opt_strdup(char **dst, const char *s)
{
	char *d = strdup(s);

	if (!d)
		return -ENOMEM;
	free(*dst);
	*dst = d;
	return 0;
}

/* strict decimal: digits only, no sign, no overflow, within [min, max] */
static int opt_parse_uint(const char *s, unsigned long long min, unsigned long long max,
			  unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static int opt_parse_pids(struct op_options *o, const char *s, FILE *err)
{
	size_t nr_before = o->nr_pids;
	const char *p = s;

	for (;;) {
		size_t len = strcspn(p, ",");
		char buf[32];
		unsigned long long v;

		if (len == 0 || len >= sizeof(buf) ||
		    (memcpy(buf, p, len), buf[len] = '\0', opt_parse_uint(buf, 1, OPT_PID_MAX, &v))) {
			opt_err(err,
				"--pid=%s: \"%.*s\" is not a process id - expected numbers 1..%u separated by ','",
				s, (int)len, p, OPT_PID_MAX);
			o->nr_pids = nr_before;
			return -EINVAL;
		}
		if (o->nr_pids == OP_MAX_PIDS) {
			opt_err(err,
				"--pid: more than %d processes - profile fewer or use --system-wide",
				OP_MAX_PIDS);
			o->nr_pids = nr_before;
			return -EINVAL;
		}
		o->pids[o->nr_pids++] = (uint32_t)v;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static int opt_uint_arg(const char *opt, const char *arg, unsigned long long min,
			unsigned long long max, unsigned long long *out, FILE *err)
{
	if (opt_parse_uint(arg, min, max, out)) {
		opt_err(err, "--%s=%s: expected a whole number %llu..%llu", opt, arg, min, max);
		return -EINVAL;
	}
	return 0;
}

static void opt_defaults(struct op_options *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = OP_MODE_LAUNCH;
	/* operf's behaviour: libraries and kernel attributed per application */
	o->separate = OP_SEP_LIB | OP_SEP_KERNEL;
	o->ring_pages = 128;
	o->stats_interval = 0;
	o->sync_interval = 10;
	o->max_open_files = OP_DEFAULT_MAX_OPEN_FILES;
	o->rotate_interval = 0;
	o->rotate_keep = 24;
}

/* resolve a relative session dir against the cwd (plugins get it absolute) */
static int opt_absolute(char **path)
{
	char cwd[PATH_MAX], *abs;
	const char *p = *path;

	if (p[0] == '/')
		return 0;
	if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	if (p[0] == '.' && p[1] == '/')
		p += 2;
	if (asprintf(&abs, "%s/%s", cwd, p) < 0)
		return -ENOMEM;
	free(*path);
	*path = abs;
	return 0;
}

/* one pass over argv; the first only looks at --config/--help/--version */
static int opt_pass(struct op_options *o, int argc, char **argv, bool first, const char **config,
		    bool *config_given, bool *system_wide, FILE *err)
{
	unsigned long long v;
	char ebuf[256];
	int c, rc = 0;

	optind = 0; /* GNU: full reinitialisation, so the second pass works */
	opterr = 0;
	while ((c = getopt_long(argc, argv, opt_short, opt_long, NULL)) != -1) {
		const char *arg = optarg;

		if (first) {
			if (c == OPT_CONFIG) {
				*config = arg;
				*config_given = true;
			} else if (c == 'h') {
				fputs(opt_usage, stdout);
				return 1;
			} else if (c == OPT_USAGE || (c == '?' && !strcmp(argv[optind - 1], "-?"))) {
				/* -? is in opt_short: glibc returns it without setting optopt */
				fputs(opt_brief_usage, stdout);
				return 1;
			} else if (c == OPT_VERSION) {
				printf("oprofiled (oprofile-ng) %s, plugin SDK %d.%d\n",
#ifdef PACKAGE_VERSION
				       PACKAGE_VERSION,
#else
				       "?",
#endif
				       OP_SDK_MAJOR, OP_SDK_MINOR);
				return 1;
			}
			continue;
		}
		switch (c) {
		case OPT_SESSION_DIR:
			if (!*arg) {
				opt_err(err, "--session-dir: empty directory name");
				return -EINVAL;
			}
			rc = opt_strdup(&o->session_dir, arg);
			break;
		case OPT_SESSION_GROUP:
			rc = optval_check_group(arg);
			if (rc) {
				opt_err(err, "--session-group=%s: %s - give an existing group", arg,
					rc == -ENOENT ? "no such group" : strerror(-rc));
				return -EINVAL;
			}
			rc = opt_strdup(&o->session_group, arg);
			break;
		case 'e':
			/* the command line wins: its events replace a config file's rate */
			if (!o->frequency_cmdline)
				o->frequency = 0;
			rc = opt_strdup(&o->events_spec, arg);
			free(o->events_origin);
			o->events_origin = NULL;
			break;
		case OPT_SEPARATE:
			if (optval_parse_separate(arg, &o->separate, ebuf, sizeof(ebuf))) {
				opt_err(err, "%s", ebuf);
				return -EINVAL;
			}
			break;
		case OPT_EXT_FEATURE: {
			const char *colon = strchr(arg, ':');
			char *name = strndup(arg, colon ? (size_t)(colon - arg) : strlen(arg));
			size_t i;

			if (!name)
				return -ENOMEM;
			if (!*name) {
				opt_err(err, "--ext-feature=%s: empty plugin name - use NAME[:ARGS]",
					arg);
				free(name);
				return -EINVAL;
			}
			/* the loader refuses it at start: --check-config says so too */
			if (!ext_name_valid(name)) {
				opt_err(err,
					"--ext-feature=%s: plugin name \"%.80s\" is not valid - "
					"expected " OPTVAL_PLUGIN_NAME_RULE,
					arg, name);
				free(name);
				return -EINVAL;
			}
			for (i = 0; i < o->nr_features; i++)
				if (!strcmp(o->features[i].name, name) &&
				    !strcmp(o->features[i].origin, OP_ORIGIN_CMDLINE)) {
					opt_err(err,
						"--ext-feature=%s given twice - give each plugin once",
						name);
					free(name);
					return -EINVAL;
				}
			rc = optval_add_feature(o, name, colon ? colon + 1 : "", OP_ORIGIN_CMDLINE,
						true);
			if (rc == -ENOSPC)
				opt_err(err, "--ext-feature=%s: more than %d plugins", name,
					OP_MAX_FEATURES);
			free(name);
			break;
		}
		case OPT_CONFIG:
			break;
		case OPT_PLUGIN_DIR:
			rc = opt_strdup(&o->plugin_dir, arg);
			break;
		case OPT_VMLINUX:
			rc = opt_strdup(&o->vmlinux, arg);
			break;
		case OPT_NO_VMLINUX:
			o->no_vmlinux = true;
			break;
		case OPT_IMAGE:
			rc = optval_set_image(o, arg);
			break;
		case OPT_VERBOSE:
			if (!arg) {
				o->verbose = OP_VERBOSE_ALL;
			} else if (optval_parse_verbose(arg, &o->verbose, ebuf, sizeof(ebuf))) {
				opt_err(err, "%s", ebuf);
				return -EINVAL;
			}
			break;
		case OPT_APPEND:
			o->append = true;
			break;
		case OPT_RING_PAGES:
			if (opt_uint_arg("ring-pages", arg, 1, OP_MAX_RING_PAGES, &v, err))
				return -EINVAL;
			if (v & (v - 1)) {
				opt_err(err,
					"--ring-pages=%s: not a power of two - use 1, 2, 4, ... pages",
					arg);
				return -EINVAL;
			}
			o->ring_pages = (size_t)v;
			break;
		case 'p':
			rc = opt_parse_pids(o, arg, err);
			break;
		case 'a':
			*system_wide = true;
			break;
		case OPT_RECORD:
			rc = opt_strdup(&o->record_file, arg);
			break;
		case OPT_RECORD_OVERWRITE:
			o->record_overwrite = true;
			break;
		case OPT_REPLAY:
			rc = opt_strdup(&o->replay_file, arg);
			break;
		case OPT_PROC_ROOT:
			rc = opt_strdup(&o->proc_root, arg);
			break;
		case OPT_CPU_TYPE:
			rc = opt_strdup(&o->cpu_type, arg);
			break;
		case OPT_LIST_PLUGINS:
			o->list_plugins = true;
			break;
		case OPT_CHECK_CONFIG:
			o->check_config = true;
			break;
		case OPT_DAEMONIZE:
			o->daemonize = true;
			break;
		case OPT_FREQUENCY:
			if (opt_uint_arg("frequency", arg, 1, OP_EVENT_MAX_HZ, &v, err))
				return -EINVAL;
			o->frequency = (unsigned)v;
			o->frequency_cmdline = true;
			break;
		case OPT_STATS_INTERVAL:
			if (opt_uint_arg("stats-interval", arg, 0, 86400u * 365, &v, err))
				return -EINVAL;
			o->stats_interval = (unsigned)v;
			break;
		case OPT_SYNC_INTERVAL:
			if (opt_uint_arg("sync-interval", arg, 0, 86400u * 365, &v, err))
				return -EINVAL;
			o->sync_interval = (unsigned)v;
			break;
		case OPT_MAX_OPEN_FILES:
			if (opt_uint_arg("max-open-files", arg, 1, 1u << 20, &v, err))
				return -EINVAL;
			o->max_open_files = (unsigned)v;
			break;
		case OPT_LOG_FILE:
			rc = opt_strdup(&o->log_file, arg);
			break;
		case OPT_ROTATE: {
			unsigned secs;

			if (op_parse_interval(arg, &secs, ebuf, sizeof(ebuf))) {
				opt_err(err, "--rotate=%s: %s", arg, ebuf);
				return -EINVAL;
			}
			o->rotate_interval = secs;
			break;
		}
		case OPT_ROTATE_KEEP:
			if (opt_uint_arg("rotate-keep", arg, 1, 100000, &v, err))
				return -EINVAL;
			o->rotate_keep = (unsigned)v;
			break;
		case 'h':
		case OPT_VERSION:
			break;
		case ':':
			opt_err(err, "option %s needs a value - see oprofiled --help",
				argv[optind - 1]);
			return -EINVAL;
		default:
			if (optopt && optopt < 256)
				opt_err(err, "unknown option -%c - see oprofiled --help", optopt);
			else
				opt_err(err, "unknown option %s - see oprofiled --help",
					argv[optind - 1]);
			return -EINVAL;
		}
		if (rc)
			return rc;
	}
	return 0;
}

static int opt_finish(struct op_options *o, int argc, char **argv, int cmd_start, bool system_wide,
		      bool cfg_system_wide, FILE *err)
{
	const char *env;
	int nmodes, i;
	bool has_cmd = cmd_start < argc;

	if (has_cmd) {
		o->command = calloc((size_t)(argc - cmd_start) + 1, sizeof(char *));
		if (!o->command)
			return -ENOMEM;
		for (i = cmd_start; i < argc; i++)
			if (!(o->command[i - cmd_start] = strdup(argv[i])))
				return -ENOMEM;
	}

	nmodes = has_cmd + (o->nr_pids > 0) + system_wide + (o->replay_file != NULL);
	if (nmodes > 1) {
		opt_err(err, "choose one of: a command after '--', --pid, --system-wide, --replay");
		return -EINVAL;
	}
	if (has_cmd)
		o->mode = OP_MODE_LAUNCH;
	else if (o->nr_pids)
		o->mode = OP_MODE_PID;
	else if (system_wide)
		o->mode = OP_MODE_SYSTEM;
	else if (o->replay_file)
		o->mode = OP_MODE_REPLAY;
	else if (cfg_system_wide)
		o->mode = OP_MODE_SYSTEM;
	else if (!o->list_plugins && !o->check_config) {
		opt_err(err,
			"nothing to profile: give a command (oprofiled [OPTIONS] -- COMMAND [ARGS]), "
			"--pid=PID or --system-wide");
		return -EINVAL;
	}
	if (o->vmlinux && o->no_vmlinux) {
		opt_err(err, "--vmlinux and --no-vmlinux together - choose one");
		return -EINVAL;
	}
	if (o->record_file && o->replay_file) {
		opt_err(err, "--record and --replay together - choose one");
		return -EINVAL;
	}
	if (o->record_overwrite && !o->record_file) {
		opt_err(err, "--record-overwrite without --record - give --record=FILE too");
		return -EINVAL;
	}

	if (!o->plugin_dir) {
		env = getenv("OP_PLUGIN_DIR");
		if (opt_strdup(&o->plugin_dir, env && *env ? env : OP_PLUGINDIR))
			return -ENOMEM;
	}
	if (!o->session_dir &&
	    opt_strdup(&o->session_dir,
		       o->mode == OP_MODE_SYSTEM ? OP_SESSION_DIR_SYSTEM : OP_SESSION_DIR_LAUNCH))
		return -ENOMEM;
	if (opt_absolute(&o->session_dir))
		return -ENOMEM;
	if (!o->proc_root && opt_strdup(&o->proc_root, "/proc"))
		return -ENOMEM;
	if (!o->log_file && asprintf(&o->log_file, "%s/" OP_SESSION_LOG_PATH, o->session_dir) < 0) {
		o->log_file = NULL;
		return -ENOMEM;
	}
	return 0;
}

int options_parse_f(struct op_options *o, int argc, char **argv, FILE *err)
{
	const char *config = NULL;
	bool config_given = false, system_wide = false;
	struct conf_result res = { 0 };
	int rc;

	opt_defaults(o);
	rc = opt_pass(o, argc, argv, true, &config, &config_given, &system_wide, err);
	if (rc)
		return rc;
	if (!config_given && access(OP_SYSCONFIGFILE, R_OK) == 0)
		config = OP_SYSCONFIGFILE;
	if (config && *config) {
		if (opt_strdup(&o->config_file, config))
			return -ENOMEM;
		rc = conf_load(o, config, &res, err);
		if (rc)
			return -EINVAL;
	}
	rc = opt_pass(o, argc, argv, false, &config, &config_given, &system_wide, err);
	if (rc == -ENOMEM)
		opt_err(err, "out of memory");
	if (rc)
		return -EINVAL;
	rc = opt_finish(o, argc, argv, optind, system_wide, res.system_wide, err);
	if (rc == -ENOMEM)
		opt_err(err, "out of memory");
	return rc ? -EINVAL : 0;
}

int options_parse(struct op_options *o, int argc, char **argv)
{
	return options_parse_f(o, argc, argv, stderr);
}

void options_free(struct op_options *o)
{
	size_t i;

	if (!o)
		return;
	free(o->session_dir);
	free(o->session_group);
	free(o->config_file);
	free(o->plugin_dir);
	free(o->events_spec);
	for (i = 0; i < o->nr_features; i++)
		optval_free_feature(&o->features[i]);
	free(o->vmlinux);
	optval_free_strv(o->image_filter);
	optval_free_strv(o->command);
	free(o->record_file);
	free(o->replay_file);
	free(o->proc_root);
	free(o->cpu_type);
	free(o->log_file);
	free(o->events_origin);
	conf_free(o->config);
	memset(o, 0, sizeof(*o));
}

bool options_plugin_disabled(const struct op_options *o, const char *name)
{
	bool enabled;

	/* config.c checked the type at load: a non-boolean "enabled" never gets here */
	return conf_plugin_bool(o->config, name, "enabled", &enabled, NULL, 0) == 0 && !enabled;
}
