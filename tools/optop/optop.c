/*
 * optop.c - optop: a live "what burns CPU now" view over oprofiled's
 * aggregated sample files. Options, the source (a private daemon or a
 * running one's session), signals, then the curses or the --stdio view.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "optop.h"

volatile sig_atomic_t top_quit;

static const char top_usage[] =
	"Usage: optop [OPTIONS]\n"
	"\n"
	"A live view of what the CPUs run, from oprofiled's sample files: samples, %,\n"
	"image and symbol of the hottest symbols, refreshed every -d seconds.\n"
	"Alone (root), optop starts a private system-wide oprofiled into a temporary\n"
	"session it removes at exit; --session-dir watches a running daemon's session.\n"
	"\n"
	"  --session-dir=DIR     watch the session of a running oprofiled (asked to dump\n"
	"                        before each refresh; read-only when it does not take our\n"
	"                        requests)\n"
	"  -e, --events=EV,...   events of the private daemon (oprofiled --events)\n"
	"  -d, --delay=SECONDS   refresh period (default 2, at least 0.1)\n"
	"  -z, --cumulative      counts since the session began, not the last period's\n"
	"  -s, --sort=KEY        samples (default), symbol or image\n"
	"  --separate=cpu|thread one row per cpu or thread (the private daemon separates\n"
	"                        its session so; a watched one must be)\n"
	"  --pid=TGID[,...]      only these processes (needs a session separated by thread)\n"
	"  --tid=TID[,...]       only these threads (same)\n"
	"  --cpu=N[,...]         only these CPUs (needs a session separated by cpu)\n"
	"  --image=NAME[,...]    only these images (paths or base names)\n"
	"  -k, --kernel          kernel symbols only\n"
	"  -u, --user            user symbols only\n"
	"  --filter=TEXT         rows whose image or symbol contains TEXT\n"
	"  --stdio               print a plain-text table each refresh instead of curses\n"
	"  -n, --iterations=N    --stdio: stop after N refreshes (default: until ^C)\n"
	"  --rows=N              --stdio: rows per refresh (default 20)\n"
	"  --version             the package version\n"
	"  -?, --usage           the options in brief\n"
	"  -h, --help            this text\n"
	"\n"
	"Keys: q quit, z cumulative/delta, p pause, s next sort key, / filter, k kernel\n"
	"only, u user only, arrows and PgUp/PgDn move, enter the selected symbol's\n"
	"addresses (and callers in a call-graph session), h help.\n"
	"\n"
	"Exit status: 0 done, 1 failure (no session, no daemon, not root, terminal too\n"
	"small), 2 usage.\n";

static const char top_brief_usage[] =
	"Usage: optop [--session-dir=DIR] [-e EV] [-d SECONDS] [-z] [-s KEY]\n"
	"        [--separate=cpu|thread] [--pid=TGID] [--tid=TID] [--cpu=N] [--image=NAME]\n"
	"        [-k|-u] [--filter=TEXT] [--stdio [-n N] [--rows=N]] [--version]\n"
	"        [-?|--usage] [-h|--help]\n";

static void on_signal(int sig)
{
	(void)sig;
	top_quit = 1;
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "optop: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " - see optop --help\n");
	return 2;
}

/* "NAME:" + each item of the comma list @csv into the spec */
static int spec_words(struct rpt_spec *spec, const char *key, const char *csv)
{
	char word[PATH_MAX + 16], err[512], cwd[PATH_MAX];

	if (!getcwd(cwd, sizeof(cwd)))
		snprintf(cwd, sizeof(cwd), "/");
	if (snprintf(word, sizeof(word), "%s:%s", key, csv) >= (int)sizeof(word)) {
		fprintf(stderr, "optop: --%s=%s: too long\n", key, csv);
		return 2;
	}
	if (spec_add(spec, word, cwd, err, sizeof(err))) {
		fprintf(stderr, "optop: --%s=%s: %s\n", key, csv, err);
		return 2;
	}
	return 0;
}

static bool numbers(const char *csv)
{
	if (!*csv)
		return false;
	for (; *csv; csv++)
		if ((*csv < '0' || *csv > '9') && *csv != ',')
			return false;
	return true;
}

int main(int argc, char **argv)
{
	enum {
		O_SESSION = 256,
		O_SEPARATE,
		O_PID,
		O_TID,
		O_CPU,
		O_IMAGE,
		O_FILTER,
		O_STDIO,
		O_ROWS,
		O_VERSION,
		O_USAGE
	};
	static const struct option lo[] = {
		{ "session-dir", required_argument, NULL, O_SESSION },
		{ "events", required_argument, NULL, 'e' },
		{ "delay", required_argument, NULL, 'd' },
		{ "cumulative", no_argument, NULL, 'z' },
		{ "sort", required_argument, NULL, 's' },
		{ "separate", required_argument, NULL, O_SEPARATE },
		{ "pid", required_argument, NULL, O_PID },
		{ "tid", required_argument, NULL, O_TID },
		{ "cpu", required_argument, NULL, O_CPU },
		{ "image", required_argument, NULL, O_IMAGE },
		{ "kernel", no_argument, NULL, 'k' },
		{ "user", no_argument, NULL, 'u' },
		{ "filter", required_argument, NULL, O_FILTER },
		{ "stdio", no_argument, NULL, O_STDIO },
		{ "iterations", required_argument, NULL, 'n' },
		{ "rows", required_argument, NULL, O_ROWS },
		{ "version", no_argument, NULL, O_VERSION },
		{ "usage", no_argument, NULL, O_USAGE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct top_opts o = { .delay = 2.0, .nrows = 20 };
	struct top_daemon_opts dopts = { 0 };
	struct top_source src = { .daemon = 0 };
	struct top_model m = { 0 };
	struct top_view tv = { .sort = TSORT_SAMPLES };
	const char *session = NULL;
	enum top_split split = TSPLIT_NONE;
	bool use_stdio = false, by_thread = false, by_cpu = false;
	struct sigaction sa;
	char *end;
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "e:d:zs:kun:h?", lo, NULL)) != -1) {
		switch (opt) {
		case O_SESSION:
			session = optarg;
			break;
		case 'e':
			dopts.events = optarg;
			break;
		case 'd':
			errno = 0;
			o.delay = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o.delay >= 0.1 && o.delay <= 3600))
				return usage_error("-d %s: expected seconds from 0.1 to 3600",
						   optarg);
			break;
		case 'z':
			tv.cumulative = true;
			break;
		case 's':
			if (!strcmp(optarg, "samples"))
				tv.sort = TSORT_SAMPLES;
			else if (!strcmp(optarg, "symbol"))
				tv.sort = TSORT_SYMBOL;
			else if (!strcmp(optarg, "image"))
				tv.sort = TSORT_IMAGE;
			else
				return usage_error("--sort=%s: expected samples, symbol or image",
						   optarg);
			break;
		case O_SEPARATE:
			if (!strcmp(optarg, "cpu"))
				split = TSPLIT_CPU;
			else if (!strcmp(optarg, "thread"))
				split = TSPLIT_THREAD;
			else
				return usage_error("--separate=%s: expected cpu or thread", optarg);
			break;
		case O_PID:
		case O_TID:
		case O_CPU:
			if (!numbers(optarg))
				return usage_error(opt == O_CPU ? "--cpu=%s: expected numbers" :
								  "--pid/--tid=%s: expected numbers",
						   optarg);
			if (spec_words(&m.o.spec,
				       opt == O_PID ? "tgid" :
				       opt == O_TID ? "tid" :
						      "cpu",
				       optarg))
				return 2;
			if (opt == O_CPU)
				by_cpu = true;
			else
				by_thread = true;
			break;
		case O_IMAGE:
			if (spec_words(&m.o.spec, "image", optarg))
				return 2;
			break;
		case 'k':
			tv.ring = TRING_KERNEL;
			break;
		case 'u':
			tv.ring = TRING_USER;
			break;
		case O_FILTER:
			snprintf(tv.filter, sizeof(tv.filter), "%s", optarg);
			break;
		case O_STDIO:
			use_stdio = true;
			break;
		case 'n':
			errno = 0;
			o.iterations = (unsigned)strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || !o.iterations)
				return usage_error("-n %s: expected a count of refreshes", optarg);
			break;
		case O_ROWS:
			errno = 0;
			o.nrows = (unsigned)strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || !o.nrows)
				return usage_error("--rows=%s: expected a count of rows", optarg);
			break;
		case O_VERSION:
			printf("optop " PACKAGE_VERSION "\n");
			return 0;
		case O_USAGE:
			fputs(top_brief_usage, stdout);
			return 0;
		case 'h':
			fputs(top_usage, stdout);
			return 0;
		default:
			/* -? is in the option string: glibc returns it without setting optopt */
			if (opt == '?' && !strcmp(argv[optind - 1], "-?")) {
				fputs(top_brief_usage, stdout);
				return 0;
			}
			fprintf(stderr, "optop: see optop --help\n");
			return 2;
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument %s", argv[optind]);
	if (!use_stdio) {
		struct winsize ws;

		if (!isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO)) {
			fprintf(stderr, "optop: the curses view needs a terminal - use --stdio "
					"for a plain-text table\n");
			return 1;
		}
		if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row &&
		    (ws.ws_col < TOP_MIN_COLS || ws.ws_row < TOP_MIN_LINES)) {
			fprintf(stderr,
				"optop: the terminal is too small: %ux%u, optop needs at least "
				"%dx%d (columns x lines) - enlarge it or use --stdio\n",
				ws.ws_col, ws.ws_row, TOP_MIN_COLS, TOP_MIN_LINES);
			return 1;
		}
	}
	/* what the private daemon must separate for the rows and filters asked */
	if (split == TSPLIT_THREAD || by_thread)
		dopts.separate = split == TSPLIT_CPU || by_cpu ? "thread,cpu" : "thread";
	else if (split == TSPLIT_CPU || by_cpu)
		dopts.separate = "cpu";

	/*
	 * Each refresh reads every sample file into buffers of up to a few
	 * MB and frees them: from the heap and kept (not fresh mmaps that
	 * fault in and clear their pages every time).
	 */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (session) {
		if (dopts.events) {
			fprintf(stderr, "optop: --events chooses the private daemon's events; a "
					"watched session has its daemon's - drop --events\n");
			return 2;
		}
		rc = src_watch(&src, session);
	} else {
		rc = src_start_private(&src, &dopts);
	}
	if (rc) {
		spec_free(&m.o.spec);
		return 1;
	}
	model_init(&m, src.session_dir, split);
	rc = use_stdio ? stdio_run(&m, &tv, &src, &o) : curses_run(&m, &tv, &src, &o);
	view_free(&tv);
	model_free(&m);
	src_stop(&src);
	return rc;
}
