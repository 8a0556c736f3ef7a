/*
 * operf.c - OProfile 1.x's operf command line on oprofiled: the options are
 * translated (tools/operf.md has the table) and oprofiled is exec'd in this
 * process, so it profiles the command, the process or the whole system,
 * stops on SIGINT like operf, and writes the session to ./oprofile_data
 * unless --session-dir says otherwise.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend.h"

#define OPERF_DEFAULT_SESSION_DIR "oprofile_data"

static const char operf_help_text[] =
	"Usage: operf [OPTIONS] [--system-wide | --pid PID | COMMAND [ARGS...]]\n"
	"Profile COMMAND, process PID or the whole system (until SIGINT) with oprofiled;\n"
	"the samples go to ./oprofile_data (opreport finds them there).\n"
	"  -p, --pid=PID              profile the running process PID until it ends or SIGINT\n"
	"  -s, --system-wide          profile every process until SIGINT\n"
	"  -e, --events=EV[,EV...]    NAME:count[:unitmask[:kernel[:user]]] (see ophelp;\n"
	"                             without a PMU: TIMER[:period_ns])\n"
	"  -g, --callgraph            record call graphs\n"
	"  -d, --session-dir=DIR      the session directory (default ./oprofile_data)\n"
	"  -a, --append               add to the samples of the session instead of replacing\n"
	"  -t, --separate-thread      samples per thread\n"
	"  -c, --separate-cpu         samples per CPU\n"
	"  -k, --vmlinux=FILE         the kernel image with symbols\n"
	"  -l, --lazy-conversion      accepted; samples are always converted as they come\n"
	"  -V, --verbose=LEVEL[,...]  debug, perf_events, misc, sfile, arcs or all\n"
	"  -v, --version              print the version\n"
	"  -u, -?, --usage            print the options in brief\n"
	"  -h, --help                 this text\n"
	"Exactly one of COMMAND, --pid and --system-wide is needed.\n";

static const char operf_brief_usage[] =
	"Usage: operf [-p|--pid PID] [-s|--system-wide] [-e|--events EV,...] [-g|--callgraph]\n"
	"        [-d|--session-dir DIR] [-a|--append] [-t|--separate-thread]\n"
	"        [-c|--separate-cpu] [-k|--vmlinux FILE] [-l|--lazy-conversion]\n"
	"        [-V|--verbose LEVEL] [-v|--version] [-u|-?|--usage] [-h|--help]\n"
	"        [COMMAND [ARGS...]]\n";

/* operf's --verbose levels and the oprofiled --verbose atoms they become */
static const struct {
	const char *operf, *oprofiled;
} operf_verbose_map[] = {
	{ "debug", "misc" },  { "perf_events", "samples" }, { "misc", "misc" },
	{ "sfile", "sfile" }, { "arcs", "arcs" },           { "all", "all" },
};

/* LEVEL[,LEVEL...] of -V as oprofiled's list in @out; false on an unknown level */
static bool operf_verbose(const char *levels, char *out, size_t len)
{
	const char *p = levels;

	out[0] = '\0';
	for (;;) {
		size_t n = strcspn(p, ",");
		const char *to = NULL;

		for (size_t i = 0; i < sizeof(operf_verbose_map) / sizeof(operf_verbose_map[0]); i++)
			if (strlen(operf_verbose_map[i].operf) == n &&
			    !strncmp(p, operf_verbose_map[i].operf, n))
				to = operf_verbose_map[i].oprofiled;
		if (!to) {
			fprintf(stderr,
				"operf: --verbose=%s: unknown level \"%.*s\" - expected debug, "
				"perf_events, misc, sfile, arcs or all\n",
				levels, (int)n, p);
			return false;
		}
		if (!strstr(out, to))
			snprintf(out + strlen(out), len - strlen(out), "%s%s", out[0] ? "," : "",
				 to);
		if (!p[n])
			return true;
		p += n + 1;
	}
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "system-wide", no_argument, NULL, 's' },
		{ "events", required_argument, NULL, 'e' },
		{ "callgraph", no_argument, NULL, 'g' },
		{ "session-dir", required_argument, NULL, 'd' },
		{ "append", no_argument, NULL, 'a' },
		{ "separate-thread", no_argument, NULL, 't' },
		{ "separate-cpu", no_argument, NULL, 'c' },
		{ "vmlinux", required_argument, NULL, 'k' },
		{ "lazy-conversion", no_argument, NULL, 'l' },
		{ "verbose", required_argument, NULL, 'V' },
		{ "version", no_argument, NULL, 'v' },
		{ "usage", no_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *pid = NULL, *events = NULL, *session_dir = OPERF_DEFAULT_SESSION_DIR;
	const char *vmlinux = NULL;
	bool system_wide = false, callgraph = false, append = false, sep_thread = false;
	bool sep_cpu = false, verbose = false;
	char verbose_list[128] = "", prog[PATH_MAX];
	struct fe_argv a = { 0 };
	int opt, targets;

	opterr = 0;
	/* '+': the first non-option starts the command, as operf's */
	while ((opt = getopt_long(argc, argv, "+:p:se:gd:atck:lV:vuh?", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			pid = optarg;
			break;
		case 's':
			system_wide = true;
			break;
		case 'e':
			events = optarg;
			break;
		case 'g':
			callgraph = true;
			break;
		case 'd':
			if (!*optarg) {
				fprintf(stderr, "operf: --session-dir: empty directory name\n");
				return 1;
			}
			session_dir = optarg;
			break;
		case 'a':
			append = true;
			break;
		case 't':
			sep_thread = true;
			break;
		case 'c':
			sep_cpu = true;
			break;
		case 'k':
			vmlinux = optarg;
			break;
		case 'l':
			/* oprofiled writes sample files as the records come: nothing to defer */
			break;
		case 'V':
			if (!operf_verbose(optarg, verbose_list, sizeof(verbose_list)))
				return 1;
			verbose = true;
			break;
		case 'v':
			printf("operf: oprofile-ng " PACKAGE_VERSION " (runs oprofiled)\n");
			return 0;
		case 'u':
			fputs(operf_brief_usage, stdout);
			return 0;
		case 'h':
			fputs(operf_help_text, stdout);
			return 0;
		case '?':
		case ':':
			return fe_getopt_trouble("operf", opt, argv, operf_brief_usage);
		}
	}
	targets = (optind < argc) + (pid != NULL) + system_wide;
	if (targets != 1) {
		fprintf(stderr,
			"operf: %s - give exactly one of COMMAND, --pid=PID and "
			"--system-wide (see operf --help)\n",
			targets ? "more than one target given" : "nothing to profile");
		return 1;
	}
	if (pid && (strspn(pid, "0123456789") != strlen(pid) || !*pid || atol(pid) <= 0)) {
		fprintf(stderr, "operf: --pid=%s: expected one process id (a positive number)\n",
			pid);
		return 1;
	}
	if (fe_find_program("operf", "oprofiled", prog, sizeof(prog)))
		return 1;

	fe_argv_add(&a, "oprofiled");
	/* always given: oprofiled's own default with --system-wide is /var/lib/oprofile */
	fe_argv_addf(&a, "--session-dir=%s", session_dir);
	if (events)
		fe_argv_addf(&a, "--events=%s", events);
	/* the stacks' context as the flat files are split (the plugin cannot see --separate) */
	if (callgraph && (sep_thread || sep_cpu))
		fe_argv_addf(&a, "--ext-feature=callgraph:context=%s",
			     sep_thread ? (sep_cpu ? "thread+cpu" : "thread") : "cpu");
	else if (callgraph)
		fe_argv_add(&a, "--ext-feature=callgraph");
	if (append)
		fe_argv_add(&a, "--append");
	if (sep_thread || sep_cpu)
		fe_argv_addf(&a, "--separate=lib,kernel%s%s", sep_thread ? ",thread" : "",
			     sep_cpu ? ",cpu" : "");
	if (vmlinux)
		fe_argv_addf(&a, "--vmlinux=%s", vmlinux);
	if (verbose)
		fe_argv_addf(&a, "--verbose=%s", verbose_list);
	if (pid)
		fe_argv_addf(&a, "--pid=%s", pid);
	if (system_wide)
		fe_argv_add(&a, "--system-wide");
	if (optind < argc) {
		fe_argv_add(&a, "--");
		for (int i = optind; i < argc; i++)
			fe_argv_add(&a, argv[i]);
	}
	return fe_exec("operf", prog, &a, verbose);
}
