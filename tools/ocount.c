/*
 * ocount.c - OProfile 1.x's ocount command line on opcount: the options are
 * translated (tools/operf.md has the table) and opcount is exec'd in this
 * process. The counts go to stdout, as ocount's, unless --output-file.
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

static const char ocount_help_text[] =
	"Usage: ocount [OPTIONS] [--system-wide | --process-list PID | --thread-list TID |\n"
	"              --cpu-list CPUS | COMMAND [ARGS...]]\n"
	"Count events for COMMAND, a process, a thread, some CPUs or the whole system\n"
	"(until SIGINT) with opcount; the counts go to stdout.\n"
	"  -e, --events=EV[,EV...]    NAME[:unitmask[:kernel[:user]]]: opcount's names\n"
	"                             (opcount --list) or libpfm4's; unit masks by name\n"
	"  -s, --system-wide          count every CPU until SIGINT\n"
	"  -p, --process-list=PID     count process PID (one) and what it starts\n"
	"  -r, --thread-list=TID      count thread TID (one)\n"
	"  -C, --cpu-list=CPUS        count every task on CPUS (0,2,4-7) until SIGINT\n"
	"  -t, --separate-thread      counts per thread (with -p/-r)\n"
	"  -c, --separate-cpu         counts per CPU\n"
	"  -i, --time-interval=SEC[:N]  print the counts of each SEC seconds (0.01..86400);\n"
	"                             stop after N intervals (a COMMAND is killed)\n"
	"  -b, --brief-format         EVENT,COUNT,PERCENT lines (CPU or TID first with\n"
	"                             -c/-t), as ocount's\n"
	"  -f, --output-file=FILE     write the counts to FILE\n"
	"  -V, --verbose              show the opcount command line run\n"
	"  -v, --version              print the version\n"
	"  -u, -?, --usage            print the options in brief\n"
	"  -h, --help                 this text\n"
	"Not supported (an error says so): several PIDs or TIDs, unit mask values.\n";

static const char ocount_brief_usage[] =
	"Usage: ocount [-e|--events EV,...] [-s|--system-wide] [-p|--process-list PID]\n"
	"        [-r|--thread-list TID] [-C|--cpu-list CPUS] [-t|--separate-thread]\n"
	"        [-c|--separate-cpu] [-i|--time-interval SEC[:N]] [-b|--brief-format]\n"
	"        [-f|--output-file FILE] [-V|--verbose]\n"
	"        [-v|--version] [-u|-?|--usage] [-h|--help] [COMMAND [ARGS...]]\n";

/*
 * One ocount spec NAME[:um[:kernel[:user]]] (@len bytes of @spec) appended
 * to the list @out as opcount's NAME[:k|:u]; false after an error.
 */
static bool ocount_spec(const char *list, const char *spec, size_t len, char *out, size_t outlen)
{
	char buf[256], *field[4] = { NULL }, *p;
	size_t nf = 0;
	bool kernel = true, user = true, named_um;
	size_t used;

	if (!len || len >= sizeof(buf)) {
		fprintf(stderr, "ocount: --events=%s: an empty or too long event\n", list);
		return false;
	}
	memcpy(buf, spec, len);
	buf[len] = '\0';
	/* fields may be empty ("NAME::0:1"): split by hand */
	for (p = buf; p && nf < 4; nf++) {
		field[nf] = p;
		p = strchr(p, ':');
		if (p)
			*p++ = '\0';
	}
	if (p || !field[0][0]) {
		fprintf(stderr,
			"ocount: --events=%s: \"%.*s\" is not NAME[:unitmask[:kernel[:user]]]\n",
			list, (int)len, spec);
		return false;
	}
	/* a named mask is libpfm4's NAME:MASK to opcount; a value has no equivalent */
	if (nf > 1 && field[1][0] >= '0' && field[1][0] <= '9' && strtoul(field[1], NULL, 0)) {
		fprintf(stderr,
			"ocount: --events=%s: unit mask value %s of %s is not supported: "
			"opcount takes a built-in name (opcount --list) or a libpfm4 name "
			"with a named mask (NAME:MASK)\n",
			list, field[1], field[0]);
		return false;
	}
	named_um = nf > 1 && field[1][0] && (field[1][0] < '0' || field[1][0] > '9');
	for (size_t i = 2; i < nf; i++) {
		if (strcmp(field[i], "0") && strcmp(field[i], "1")) {
			fprintf(stderr,
				"ocount: --events=%s: the %s flag of %s is \"%s\", expected 0 or 1\n",
				list, i == 2 ? "kernel" : "user", field[0], field[i]);
			return false;
		}
		if (i == 2)
			kernel = field[i][0] == '1';
		else
			user = field[i][0] == '1';
	}
	if (!kernel && !user) {
		fprintf(stderr,
			"ocount: --events=%s: %s with kernel and user both 0 counts nothing\n",
			list, field[0]);
		return false;
	}
	used = strlen(out);
	if ((size_t)snprintf(out + used, outlen - used, "%s%s%s%s%s", used ? "," : "", field[0],
			     named_um ? ":" : "", named_um ? field[1] : "",
			     kernel && user ? "" :
			     kernel         ? ":k" :
					      ":u") >= outlen - used) {
		fprintf(stderr,
			"ocount: --events=%s: more than %zu characters of events - give "
			"fewer\n",
			list, outlen - 1);
		return false;
	}
	return true;
}

static bool ocount_events(const char *list, char *out, size_t outlen)
{
	const char *p = list;

	out[0] = '\0';
	for (;;) {
		size_t n = strcspn(p, ",");

		if (!ocount_spec(list, p, n, out, outlen))
			return false;
		if (!p[n])
			return true;
		p += n + 1;
	}
}

/* one id of -p/-r: opcount follows one process or thread */
static bool ocount_one_id(const char *opt, const char *what, const char *list)
{
	if (strchr(list, ',')) {
		fprintf(stderr,
			"ocount: %s=%s is not supported: opcount counts one %s - run one "
			"ocount per %s\n",
			opt, list, what, what);
		return false;
	}
	if (!*list || strspn(list, "0123456789") != strlen(list) || atol(list) <= 0) {
		fprintf(stderr, "ocount: %s=%s: expected a %s id (a positive number)\n", opt, list,
			what);
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "events", required_argument, NULL, 'e' },
		{ "system-wide", no_argument, NULL, 's' },
		{ "process-list", required_argument, NULL, 'p' },
		{ "thread-list", required_argument, NULL, 'r' },
		{ "cpu-list", required_argument, NULL, 'C' },
		{ "separate-thread", no_argument, NULL, 't' },
		{ "separate-cpu", no_argument, NULL, 'c' },
		{ "time-interval", required_argument, NULL, 'i' },
		{ "brief-format", no_argument, NULL, 'b' },
		{ "output-file", required_argument, NULL, 'f' },
		{ "verbose", no_argument, NULL, 'V' },
		{ "version", no_argument, NULL, 'v' },
		{ "usage", no_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *pid = NULL, *tid = NULL, *output = NULL, *cpu_list = NULL;
	bool system_wide = false, sep_thread = false, sep_cpu = false, verbose = false;
	bool brief = false;
	char events[1024] = "", prog[PATH_MAX], *end;
	long interval_ms = 0, nintervals = 0;
	struct fe_argv a = { 0 };
	double sec;
	int opt, targets;

	opterr = 0;
	/* '+': the first non-option starts the command, as ocount's */
	while ((opt = getopt_long(argc, argv, "+:e:sp:r:C:tci:bf:Vvuh?", longopts, NULL)) != -1) {
		switch (opt) {
		case 'e':
			if (!ocount_events(optarg, events, sizeof(events)))
				return 1;
			break;
		case 's':
			system_wide = true;
			break;
		case 'p':
			if (!ocount_one_id("--process-list", "process", optarg))
				return 1;
			pid = optarg;
			break;
		case 'r':
			if (!ocount_one_id("--thread-list", "thread", optarg))
				return 1;
			tid = optarg;
			break;
		case 'C':
			/* checked by opcount (numbers, ranges, online CPUs) */
			if (!*optarg) {
				fprintf(stderr, "ocount: --cpu-list: expected CPUS (0,2,4-7)\n");
				return 1;
			}
			cpu_list = optarg;
			break;
		case 't':
			sep_thread = true;
			break;
		case 'c':
			sep_cpu = true;
			break;
		case 'i':
			sec = strtod(optarg, &end);
			nintervals = 0;
			if (end != optarg && *end == ':') {
				char *n = end + 1;

				nintervals = strtol(n, &end, 10);
				if (end == n || nintervals < 1)
					end = n - 1; /* reported below */
			}
			if (end == optarg || *end || !(sec >= 0.01 && sec <= 86400)) {
				fprintf(stderr,
					"ocount: --time-interval=%s: expected SEC[:N], seconds "
					"between 0.01 and 86400 and a positive number of "
					"intervals\n",
					optarg);
				return 1;
			}
			interval_ms = (long)(sec * 1000 + 0.5);
			break;
		case 'b':
			brief = true;
			break;
		case 'f':
			output = optarg;
			break;
		case 'V':
			verbose = true;
			break;
		case 'v':
			printf("ocount: oprofile-ng " PACKAGE_VERSION " (runs opcount)\n");
			return 0;
		case 'u':
			fputs(ocount_brief_usage, stdout);
			return 0;
		case 'h':
			fputs(ocount_help_text, stdout);
			return 0;
		case '?':
		case ':':
			return fe_getopt_trouble("ocount", opt, argv, ocount_brief_usage);
		}
	}
	targets = (optind < argc) + (pid != NULL) + (tid != NULL) + system_wide + (cpu_list != NULL);
	if (targets != 1) {
		fprintf(stderr,
			"ocount: %s - give exactly one of COMMAND, --process-list, "
			"--thread-list, --cpu-list and --system-wide (see ocount --help)\n",
			targets ? "more than one target given" : "nothing to count");
		return 1;
	}
	if (sep_thread && !pid && !tid) {
		fprintf(stderr, "ocount: --separate-thread goes with --process-list or "
				"--thread-list (as ocount's)\n");
		return 1;
	}
	if (fe_find_program("ocount", "opcount", prog, sizeof(prog)))
		return 1;

	fe_argv_add(&a, "opcount");
	if (events[0])
		fe_argv_addf(&a, "--events=%s", events);
	if (pid)
		fe_argv_addf(&a, "--pid=%s", pid);
	if (tid)
		fe_argv_addf(&a, "--tid=%s", tid);
	if (system_wide)
		fe_argv_add(&a, "--system-wide");
	if (cpu_list)
		fe_argv_addf(&a, "--cpu-list=%s", cpu_list);
	if (sep_thread)
		fe_argv_add(&a, "--separate-thread");
	if (sep_cpu)
		fe_argv_add(&a, "--separate-cpu");
	if (interval_ms)
		fe_argv_addf(&a, "--time-interval=%ld", interval_ms);
	if (nintervals)
		fe_argv_addf(&a, "--intervals=%ld", nintervals);
	if (brief)
		fe_argv_add(&a, "--brief");
	/* ocount writes to stdout; opcount's default is stderr */
	fe_argv_addf(&a, "--output=%s", output ? output : "-");
	if (optind < argc) {
		fe_argv_add(&a, "--");
		for (int i = optind; i < argc; i++)
			fe_argv_add(&a, argv[i]);
	}
	return fe_exec("ocount", prog, &a, verbose);
}
