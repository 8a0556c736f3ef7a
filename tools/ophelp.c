/*
 * ophelp.c - lists the events of a CPU type from the events/ catalogue
 * (OProfile's text format, parsed by lib/op_events; CPU type "timer" has the
 * built-in TIMER event), prints the detected CPU type, and validates event
 * specifications.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "op_cpu.h"
#include "op_events.h"

#define PMU_DIR "/sys/bus/event_source/devices/cpu"

static void usage(FILE *f)
{
	fputs("usage: ophelp [options] [EVENT...]\n"
	      "  -r, --get-cpu-type         print the CPU type and exit\n"
	      "      --cpu-type=NAME        list the events of NAME (e.g. x86-64/generic)\n"
	      "  -c, --check-events=SPEC    validate NAME:count[:um[:kernel[:user]]][,...]\n"
	      "  -d, --get-default-event    print the default event of the CPU type\n"
	      "  -u, --unit-mask=EVENT      print the default unit mask of EVENT\n"
	      "      --version              the package version\n"
	      "  -h, --help                 this help\n"
	      "With EVENT names, only those events are described.\n"
	      "The catalogue is read from $OPROFILE_EVENTS_DIR, else " OP_DATADIR "/events.\n",
	      f);
}

/*
 * The CPU type of this machine: a hardware PMU the kernel exposes decides
 * between the generic catalogues; without one, profiling is timer based.
 */
static const char *detect_cpu_type(void)
{
	struct stat st;
	FILE *f;
	char line[256];
	const char *type = "i386/arch_perfmon";

	if (stat(PMU_DIR, &st) || !S_ISDIR(st.st_mode))
		return "timer";
	f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return type;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "vendor_id", 9)) {
			if (strstr(line, "AuthenticAMD") || strstr(line, "HygonGenuine"))
				type = "x86-64/generic";
			break;
		}
	}
	fclose(f);
	return type;
}

static uint64_t timer_default_period(void)
{
	return UINT64_C(1000000000) / OP_TIMER_DEFAULT_HZ;
}

static void explain_timer(FILE *f)
{
	fprintf(f,
		"No hardware performance counters are available on this machine: the kernel\n"
		"exposes no \"cpu\" PMU (%s is missing;\n"
		"typical under a hypervisor that does not virtualise the PMU).\n"
		"oprofiled therefore uses timer mode: it samples on the kernel's cpu-clock\n"
		"software event and writes the samples under the event name TIMER (CPU type\n"
		"\"timer\"), which opreport reports as \"Profiling through timer interrupt\".\n"
		"TIMER is the one event, without unit mask; its count is the sampling period\n"
		"in ns: at most %u Hz per CPU (TIMER:%llu), by default TIMER:%llu (%u Hz).\n"
		"The timer plugin's freq=HZ and period=NS arguments have the same limit.\n"
		"Use --cpu-type=NAME (for example --cpu-type=x86-64/generic) to list the\n"
		"events of another CPU type.\n",
		PMU_DIR, OP_TIMER_MAX_HZ, (unsigned long long)OP_TIMER_MIN_PERIOD_NS,
		(unsigned long long)timer_default_period(), OP_TIMER_DEFAULT_HZ);
}

static void print_counters(FILE *f, const struct op_events *c, const struct op_event *e)
{
	unsigned nr = c->nr_counters;
	bool all = e->counters_cpuid || !nr ||
		   (nr < 32 && (e->counter_mask & ((1u << nr) - 1)) == ((1u << nr) - 1));

	if (e->ext) {
		fprintf(f, "(ext: %s)", e->ext);
		return;
	}
	if (all) {
		fputs("(counter: all)", f);
		return;
	}
	fputs("(counter: ", f);
	for (unsigned i = 0, first = 1; i < 32; i++) {
		if (!(e->counter_mask & (1u << i)))
			continue;
		fprintf(f, "%s%u", first ? "" : ", ", i);
		first = 0;
	}
	fputc(')', f);
}

static void print_unit_mask(FILE *f, const struct op_unit_mask *um)
{
	/* a mandatory mask with its single value 0 carries no choice */
	if (!um || (um->type == OP_UM_MANDATORY && um->nr == 1 && um->entries[0].value == 0))
		return;
	fprintf(f, "\tUnit masks (default 0x%x)\n\t----------\n", um->default_value);
	for (unsigned i = 0; i < um->nr; i++) {
		const struct op_um_entry *u = &um->entries[i];

		fprintf(f, "\t0x%02x:", u->value);
		if (u->name)
			fprintf(f, " (name=%s)", u->name);
		fprintf(f, " %s\n", u->desc ? u->desc : "");
	}
}

static void print_event(FILE *f, const struct op_events *c, const struct op_event *e)
{
	fprintf(f, "%s: ", e->name);
	print_counters(f, c, e);
	fprintf(f, "\n\t%s (min count: %llu", e->desc ? e->desc : "",
		(unsigned long long)e->minimum);
	if (e->maximum)
		fprintf(f, ", max count: %llu", (unsigned long long)e->maximum);
	fputs(")\n", f);
	print_unit_mask(f, e->um);
}

static int load(struct op_events *c, const char *type)
{
	char err[1024] = "";
	int cpu = op_cpu_from_name(type);
	int ret = op_events_load(c, NULL, type, cpu >= 0 ? op_cpu_nr_counters(cpu) : 0, 0, err,
				 sizeof(err));

	if (ret == -ENOENT)
		fprintf(stderr,
			"ophelp error: no events catalogue for CPU type \"%s\" under %s (%s); check "
			"the name or set OPROFILE_EVENTS_DIR\n",
			type, op_events_root(), err);
	else if (ret)
		fprintf(stderr, "ophelp error: %s\n", err);
	return ret;
}

int main(int argc, char **argv)
{
	enum { OPT_CPU_TYPE = 256 };
	static const struct option longopts[] = {
		{ "get-cpu-type", no_argument, NULL, 'r' },
		{ "cpu-type", required_argument, NULL, OPT_CPU_TYPE },
		{ "check-events", required_argument, NULL, 'c' },
		{ "get-default-event", no_argument, NULL, 'd' },
		{ "unit-mask", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *type = NULL, *check = NULL, *um_event = NULL;
	bool get_type = false, get_default = false, timer;
	struct op_events c;
	int opt, ret = 1;

	memset(&c, 0, sizeof(c));
	while ((opt = getopt_long(argc, argv, "rc:du:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'r':
			get_type = true;
			break;
		case OPT_CPU_TYPE:
			type = optarg;
			break;
		case 'c':
			check = optarg;
			break;
		case 'd':
			get_default = true;
			break;
		case 'u':
			um_event = optarg;
			break;
		case 'V':
			printf("ophelp " PACKAGE_VERSION "\n");
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 1;
		}
	}
	if (!type)
		type = detect_cpu_type();
	if (get_type) {
		printf("%s\n", type);
		return 0;
	}
	timer = !strcmp(type, "timer");
	if (timer) {
		/* no events/ directory: the timer plugin's one event, built in */
		if (op_events_timer(&c)) {
			fprintf(stderr, "ophelp error: out of memory\n");
			return 1;
		}
	} else if (load(&c, type)) {
		return 1;
	}
	if (check) {
		struct op_event_spec specs[OP_MAX_COUNTERS * 2];
		char err[1024] = "";
		size_t n = 0;

		if (op_parse_event_list(&c, check, specs, sizeof(specs) / sizeof(specs[0]), &n, err,
					sizeof(err))) {
			fprintf(stderr, "ophelp error: %s\n", err);
			goto out;
		}
		for (size_t i = 0; i < n; i++) {
			printf("%s:%llu:0x%x:%d:%d", specs[i].ev->name, (unsigned long long)specs[i].count,
			       specs[i].um, specs[i].kernel, specs[i].user);
			if (specs[i].counter >= 0)
				printf(" counter %d\n", specs[i].counter);
			else
				printf(" %s\n", specs[i].ev->ext ? specs[i].ev->ext : "");
		}
		ret = 0;
		goto out;
	}
	if (um_event) {
		const struct op_event *e = op_events_find(&c, um_event);

		if (!e) {
			fprintf(stderr, "ophelp error: no event %s for CPU type %s\n", um_event, type);
			goto out;
		}
		printf("0x%x\n", e->um ? e->um->default_value : 0);
		ret = 0;
		goto out;
	}
	if (get_default) {
		const struct op_event *e = op_events_find(&c, timer ? OP_TIMER_EVENT : "CPU_CLK_UNHALTED");
		uint64_t count;

		if (!e && c.nr_events)
			e = &c.events[0];
		if (!e) {
			fprintf(stderr, "ophelp error: CPU type %s has no events\n", type);
			goto out;
		}
		/* timer: what oprofiled uses without --events or plugin arguments */
		count = timer ? timer_default_period() : e->minimum > 100000 ? e->minimum : 100000;
		printf("%s:%llu:0x%x:1:1\n", e->name, (unsigned long long)count,
		       e->um ? e->um->default_value : 0);
		ret = 0;
		goto out;
	}
	if (optind < argc) {
		for (int i = optind; i < argc; i++) {
			const struct op_event *e = op_events_find(&c, argv[i]);

			if (!e) {
				fprintf(stderr, "ophelp error: no event %s for CPU type %s\n", argv[i],
					type);
				goto out;
			}
			print_event(stdout, &c, e);
		}
		ret = 0;
		goto out;
	}
	if (timer) {
		printf("oprofile: CPU type \"timer\" (timer interrupt mode)\n\n");
		explain_timer(stdout);
		putchar('\n');
	}
	printf("oprofile: available events for CPU type \"%s\"\n\n", type);
	printf("Events are given as NAME:count[:unitmask[:kernel[:user]]]; unit masks may\n"
	       "be given by value or, where the catalogue names them, by name.\n\n");
	for (size_t i = 0; i < c.nr_events; i++)
		print_event(stdout, &c, &c.events[i]);
	ret = 0;
out:
	op_events_free(&c);
	return ret;
}
