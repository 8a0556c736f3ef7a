/*
 * ophelp.c - lists the events of a CPU type from the events/ catalogue
 * (OProfile's text format, parsed by lib/op_events; CPU type "timer" has the
 * built-in TIMER event), as text or XML, prints the detected CPU type and
 * its default event, and validates event specifications. The options are
 * OProfile 1.x ophelp's, with its letters and output formats for -r, -d, -X.
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
#include "op_xml.h"

#define PMU_DIR "/sys/bus/event_source/devices/cpu"
/* OProfile's ophelp: with --callgraph, minimum counts are 15 times higher */
#define OPHELP_CALLGRAPH_SCALE 15

struct ophelp {
	const char *type; /* events/ directory name, or "timer" */
	bool timer;
	bool ignore_count; /* -i: specs are NAME[:um[:kernel[:user]]] (ocount's) */
	long callgraph;    /* --callgraph=DEPTH, 0 = none */
	struct op_events c;
};

static const char ophelp_usage_text[] =
	"Usage: ophelp [OPTIONS] [EVENT...]\n"
	"List the events of this machine's (or the given) CPU type; with EVENT names,\n"
	"describe only those.\n"
	"  -c, --cpu-type=TYPE         use CPU type TYPE (e.g. x86-64/generic, timer)\n"
	"  -r, --get-cpu-type          print the CPU type's name and exit\n"
	"  -d, --get-default-event     print the default event NAME:count:um:1:1\n"
	"  -e, --check-events [SPEC...]  check NAME:count[:um[:kernel[:user]]][,...]\n"
	"                              (given as arguments or --check-events=SPEC); exit\n"
	"                              status 1 with the reason when one is not valid\n"
	"  -i, --ignore-count          specs have no count: NAME[:um[:kernel[:user]]]\n"
	"      --callgraph=DEPTH       with -e: the events record call graphs (minimum\n"
	"                              counts 15 times higher, as OProfile's)\n"
	"  -u, --unit-mask [EVENT]     print the default unit mask of EVENT\n"
	"  -E, --extra-mask [SPEC]     print the extra bits of the unit mask of SPEC\n"
	"  -X, --xml                   list the events as XML (OProfile's ophelp.xsd)\n"
	"      --get-cpu-frequency     print the CPU frequency in MHz (/proc/cpuinfo)\n"
	"  -v, --version               print the version\n"
	"  -?, --usage                 print the options in brief\n"
	"  -h, --help                  this text\n"
	"TIMER[:period] is the event of timer mode (no hardware PMU): period in ns,\n"
	"at least 100000 (10 kHz). The catalogue is read from $OPROFILE_EVENTS_DIR,\n"
	"else " OP_DATADIR "/events.\n";

static const char ophelp_brief_usage[] =
	"Usage: ophelp [-c|--cpu-type=TYPE] [-r|--get-cpu-type] [-d|--get-default-event]\n"
	"        [-e|--check-events] [-i|--ignore-count] [--callgraph=DEPTH]\n"
	"        [-u|--unit-mask] [-E|--extra-mask] [-X|--xml] [--get-cpu-frequency]\n"
	"        [-v|--version] [-?|--usage] [-h|--help] [EVENT...]\n";

/* OProfile's names of the CPU types (op_cpu_type.c's "pretty" names): -r, -X */
static const struct {
	int cpu;
	const char *pretty;
} ophelp_pretty[] = {
	{ OP_CPU_PPRO, "Pentium Pro" },
	{ OP_CPU_ATHLON, "Athlon" },
	{ OP_CPU_TIMER_INT, "CPU with timer interrupt" },
	{ OP_CPU_HAMMER, "AMD64 processors" },
	{ OP_CPU_FAMILY10, "AMD64 family10" },
	{ OP_CPU_ARCH_PERFMON, "Intel Architectural Perfmon" },
	{ OP_CPU_FAMILY15H, "AMD64 family15h" },
	{ OP_CPU_SANDYBRIDGE, "Intel Sandy Bridge microarchitecture" },
	{ OP_CPU_HASWELL, "Intel Haswell microarchitecture" },
	{ OP_CPU_AMD64_GENERIC, "AMD64 generic" },
	{ OP_CPU_SKYLAKE, "Intel Skylake microarchitecture" },
	{ OP_CPU_ARMV8_THUNDERX2, "Cavium ThunderX2" },
	{ OP_CPU_FAMILY17H, "AMD64 family17h" },
	{ OP_CPU_FAMILY19H, "AMD64 family19h" },
};

static const char *ophelp_pretty_name(const char *type)
{
	int cpu = op_cpu_from_name(type);

	for (size_t i = 0; i < sizeof(ophelp_pretty) / sizeof(ophelp_pretty[0]); i++)
		if (ophelp_pretty[i].cpu == cpu)
			return ophelp_pretty[i].pretty;
	return type;
}

/*
 * The CPU type of this machine: a hardware PMU the kernel exposes decides
 * between the generic catalogues; without one, profiling is timer based.
 */
static const char *ophelp_detect_cpu_type(void)
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

static uint64_t ophelp_timer_default_period(void)
{
	return UINT64_C(1000000000) / OP_TIMER_DEFAULT_HZ;
}

static void ophelp_explain_timer(FILE *f)
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
		(unsigned long long)ophelp_timer_default_period(), OP_TIMER_DEFAULT_HZ);
}

static bool ophelp_all_counters(const struct op_events *c, const struct op_event *e)
{
	unsigned nr = c->nr_counters;

	return e->counters_cpuid || !nr ||
	       (nr < 32 && (e->counter_mask & ((1u << nr) - 1)) == ((1u << nr) - 1));
}

static void ophelp_print_counters(FILE *f, const struct op_events *c, const struct op_event *e)
{
	if (e->ext) {
		fprintf(f, "(ext: %s)", e->ext);
		return;
	}
	if (ophelp_all_counters(c, e)) {
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

/* a mandatory mask with its single value 0 carries no choice (OProfile's "zero") */
static bool ophelp_um_shown(const struct op_unit_mask *um)
{
	return um && !(um->type == OP_UM_MANDATORY && um->nr == 1 && um->entries[0].value == 0);
}

static void ophelp_print_unit_mask(FILE *f, const struct op_unit_mask *um)
{
	if (!ophelp_um_shown(um))
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

static void ophelp_print_event(FILE *f, const struct op_events *c, const struct op_event *e)
{
	fprintf(f, "%s: ", e->name);
	ophelp_print_counters(f, c, e);
	fprintf(f, "\n\t%s (min count: %llu", e->desc ? e->desc : "",
		(unsigned long long)e->minimum);
	if (e->maximum)
		fprintf(f, ", max count: %llu", (unsigned long long)e->maximum);
	fputs(")\n", f);
	ophelp_print_unit_mask(f, e->um);
}

static void ophelp_xml_attr(FILE *f, const char *name, const char *value)
{
	fprintf(f, " %s=\"", name);
	op_xml_put(f, value ? value : "");
	fputc('"', f);
}

/*
 * -X: OProfile's layout (doc/ophelp.xsd, schema 2.0): one element per line,
 * an event's unit masks nested in it. OProfile writes "<tag " and then
 * " attr=..." for each attribute, so every start tag has two spaces before
 * its first attribute; kept, so its output and ours compare equal.
 */
static void ophelp_xml(FILE *f, const struct ophelp *h, const char *title, const char *doc)
{
	static const char *const um_type[] = {
		[OP_UM_MANDATORY] = "mandatory",
		[OP_UM_BITMASK] = "bitmask",
		[OP_UM_EXCLUSIVE] = "exclusive",
	};

	fputs("<help_events  schemaversion=\"2.0\">\n<header ", f);
	ophelp_xml_attr(f, "title", title);
	ophelp_xml_attr(f, "doc", doc);
	fputs("/>\n", f);
	for (size_t i = 0; i < h->c.nr_events; i++) {
		const struct op_event *e = &h->c.events[i];
		bool nested = ophelp_um_shown(e->um);
		uint32_t mask = e->counter_mask;

		/* all counters of a type with an unknown number: the ones it can have */
		if (ophelp_all_counters(&h->c, e) && h->c.nr_counters && h->c.nr_counters < 32)
			mask = (1u << h->c.nr_counters) - 1;
		fputs("<event ", f);
		ophelp_xml_attr(f, "event_name", e->name);
		ophelp_xml_attr(f, "desc", e->desc);
		fprintf(f, " counter_mask=\"%u\"", e->ext ? 0 : mask);
		if (e->ext)
			ophelp_xml_attr(f, "ext", e->ext);
		fprintf(f, " min_count=\"%llu\"", (unsigned long long)e->minimum);
		if (!nested) {
			fputs("/>\n", f);
			continue;
		}
		fprintf(f, ">\n<unit_masks  default=\"%u\"", e->um->default_value);
		ophelp_xml_attr(f, "category", um_type[e->um->type]);
		fputs(">\n", f);
		for (unsigned j = 0; j < e->um->nr; j++) {
			const struct op_um_entry *u = &e->um->entries[j];

			fputs("<unit_mask ", f);
			if (u->name)
				ophelp_xml_attr(f, "name", u->name);
			fprintf(f, " mask=\"%u\"", u->value);
			ophelp_xml_attr(f, "desc", u->desc);
			fputs("/>\n", f);
		}
		fputs("</unit_masks>\n</event>\n", f);
	}
	fputs("</help_events>\n", f);
}

static int ophelp_load(struct ophelp *h)
{
	char err[1024] = "";
	int cpu = op_cpu_from_name(h->type);
	int ret;

	if (h->timer) {
		/* no events/ directory: the timer plugin's one event, built in */
		ret = op_events_timer(&h->c);
		if (ret)
			fprintf(stderr, "ophelp error: out of memory\n");
		return ret;
	}
	ret = op_events_load(&h->c, NULL, h->type, cpu >= 0 ? op_cpu_nr_counters(cpu) : 0, 0, err,
			     sizeof(err));
	if (ret == -ENOENT)
		fprintf(stderr,
			"ophelp error: no events catalogue for CPU type \"%s\" under %s (%s); check "
			"the name or set OPROFILE_EVENTS_DIR\n",
			h->type, op_events_root(), err);
	else if (ret)
		fprintf(stderr, "ophelp error: %s\n", err);
	return ret;
}

/*
 * One spec of the list as op_parse_event_spec() takes it: a count is put
 * in where the spec has none - TIMER alone (the daemon's default period)
 * and, with -i, every spec (the event's minimum; ocount's specs have none).
 * Returns a malloc'd string or NULL (out of memory).
 */
static char *ophelp_complete_spec(const struct ophelp *h, const char *spec, size_t len)
{
	size_t name_len = strcspn(spec, ":");
	const struct op_event *e;
	char name[256];
	char *out;
	int n;

	if (name_len > len)
		name_len = len;
	if (name_len >= sizeof(name) || (!h->ignore_count && name_len < len))
		return strndup(spec, len);
	memcpy(name, spec, name_len);
	name[name_len] = '\0';
	e = op_events_find(&h->c, name);
	if (!e)
		return strndup(spec, len);
	if (name_len == len && h->timer && !strcmp(e->name, OP_TIMER_EVENT))
		n = asprintf(&out, "%s:%llu", name,
			     (unsigned long long)ophelp_timer_default_period());
	else if (h->ignore_count)
		n = asprintf(&out, "%s:%llu%.*s", name,
			     (unsigned long long)(e->minimum ? e->minimum : 1),
			     (int)(len - name_len), spec + name_len);
	else
		return strndup(spec, len);
	return n < 0 ? NULL : out;
}

/* the specs of all @args (each a comma list) as one list, completed */
static char *ophelp_join_specs(const struct ophelp *h, char **args, int nargs)
{
	size_t cap = 64, len = 0;
	char *list = calloc(1, cap);

	for (int i = 0; list && i < nargs; i++) {
		const char *p = args[i];

		for (;;) {
			size_t n = strcspn(p, ",");
			char *one = ophelp_complete_spec(h, p, n), *grown;
			size_t olen = one ? strlen(one) : 0;

			if (one && len + olen + 2 > cap) {
				cap = 2 * (len + olen + 2);
				grown = realloc(list, cap);
				if (!grown) {
					free(one);
					one = NULL;
				} else {
					list = grown;
				}
			}
			if (!one) {
				free(list);
				return NULL;
			}
			if (len)
				list[len++] = ',';
			memcpy(list + len, one, olen + 1);
			len += olen;
			free(one);
			if (!p[n])
				break;
			p += n + 1;
		}
	}
	return list;
}

static int ophelp_check(struct ophelp *h, char **args, int nargs, bool extra_only)
{
	struct op_event_spec specs[OP_MAX_COUNTERS * 2];
	char err[1024] = "";
	size_t n = 0;
	char *list;
	int ret = 1;

	if (!nargs) {
		fprintf(stderr, "ophelp error: %s: no events given - ophelp %s NAME:count[,...]\n",
			extra_only ? "--extra-mask" : "--check-events", extra_only ? "-E" : "-e");
		return 1;
	}
	list = ophelp_join_specs(h, args, nargs);
	if (!list) {
		fprintf(stderr, "ophelp error: out of memory\n");
		return 1;
	}
	if (op_parse_event_list(&h->c, list, specs, sizeof(specs) / sizeof(specs[0]), &n, err,
				sizeof(err))) {
		fprintf(stderr, "ophelp error: %s\n", err);
		goto out;
	}
	if (extra_only) {
		if (n != 1) {
			fprintf(stderr,
				"ophelp error: --extra-mask: %zu events given, one expected\n", n);
			goto out;
		}
		printf("%u\n", specs[0].um_extra);
		ret = 0;
		goto out;
	}
	for (size_t i = 0; h->callgraph && i < n; i++) {
		const struct op_event *e = specs[i].ev;
		uint64_t min = e->minimum * OPHELP_CALLGRAPH_SCALE;

		if (e->ext) {
			fprintf(stderr,
				"ophelp error: --callgraph=%ld: event %s is sampled by the %s plugin, "
				"which records no call graphs - drop it or --callgraph\n",
				h->callgraph, e->name, e->ext);
			goto out;
		}
		/*
		 * OProfile's rule for counter events; TIMER's 10 kHz limit already
		 * bounds the unwinding cost (the daemon samples call graphs at its
		 * default TIMER:250000)
		 */
		if (!h->timer && !h->ignore_count && specs[i].count < min) {
			fprintf(stderr,
				"ophelp error: --callgraph=%ld: count %llu for event %s is below the "
				"minimum %llu with call graphs (%u times its minimum %llu)\n",
				h->callgraph, (unsigned long long)specs[i].count, e->name,
				(unsigned long long)min, OPHELP_CALLGRAPH_SCALE,
				(unsigned long long)e->minimum);
			goto out;
		}
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
out:
	free(list);
	return ret;
}

/* -u EVENT (or EVENT:...): the default unit mask, in decimal as OProfile's */
static int ophelp_unit_mask(const struct ophelp *h, char **args, int nargs)
{
	const struct op_event *e;
	char name[256];

	if (nargs != 1) {
		fprintf(stderr, "ophelp error: --unit-mask: %s - ophelp -u EVENT\n",
			nargs ? "more than one event given" : "no event given");
		return 1;
	}
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(args[0], ":"), args[0]);
	e = op_events_find(&h->c, name);
	if (!e) {
		fprintf(stderr, "ophelp error: --unit-mask: no event %s for CPU type %s\n", name,
			h->type);
		return 1;
	}
	printf("%u\n", e->um ? e->um->default_value : 0);
	return 0;
}

/* -d: OProfile's "NAME:count:um:1:1", unit mask in decimal */
static int ophelp_default_event(const struct ophelp *h)
{
	const struct op_event *e =
		op_events_find(&h->c, h->timer ? OP_TIMER_EVENT : "CPU_CLK_UNHALTED");
	uint64_t count;

	if (!e && h->c.nr_events)
		e = &h->c.events[0];
	if (!e) {
		fprintf(stderr, "ophelp error: CPU type %s has no events\n", h->type);
		return 1;
	}
	/* timer: what oprofiled uses without --events or plugin arguments */
	count = h->timer            ? ophelp_timer_default_period() :
		e->minimum > 100000 ? e->minimum :
				      100000;
	printf("%s:%llu:%u:1:1\n", e->name, (unsigned long long)count,
	       e->um ? e->um->default_value : 0);
	return 0;
}

/* --get-cpu-frequency: the first "cpu MHz" of /proc/cpuinfo */
static int ophelp_cpu_frequency(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];
	double mhz;

	if (!f) {
		fprintf(stderr, "ophelp error: /proc/cpuinfo: %s\n", strerror(errno));
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "cpu MHz", 7) &&
		    sscanf(strchr(line, ':') ? strchr(line, ':') + 1 : "", "%lf", &mhz) == 1) {
			fclose(f);
			printf("%g\n", mhz);
			return 0;
		}
	}
	fclose(f);
	fprintf(stderr, "ophelp error: /proc/cpuinfo has no \"cpu MHz\" line: the frequency is "
			"not known on this machine\n");
	return 1;
}

static int ophelp_list(const struct ophelp *h, bool xml)
{
	char title[512];
	const char *doc =
		h->timer ?
			"" :
			"Events are given as NAME:count[:unitmask[:kernel[:user]]]; unit masks may\n"
			"be given by value or, where the catalogue names them, by name.\n";

	if (xml) {
		snprintf(title, sizeof(title), "oprofile: available events for CPU type \"%s\"",
			 ophelp_pretty_name(h->type));
		ophelp_xml(stdout, h, title, doc);
		return 0;
	}
	if (h->timer) {
		printf("oprofile: CPU type \"timer\" (timer interrupt mode)\n\n");
		ophelp_explain_timer(stdout);
		putchar('\n');
	}
	printf("oprofile: available events for CPU type \"%s\"\n\n", h->type);
	if (!h->timer)
		printf("%s\n", doc);
	for (size_t i = 0; i < h->c.nr_events; i++)
		ophelp_print_event(stdout, &h->c, &h->c.events[i]);
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_CALLGRAPH = 256, OPT_CPU_FREQ, OPT_USAGE };
	static const struct option longopts[] = {
		{ "cpu-type", required_argument, NULL, 'c' },
		{ "get-cpu-type", no_argument, NULL, 'r' },
		{ "get-default-event", no_argument, NULL, 'd' },
		{ "check-events", optional_argument, NULL, 'e' },
		{ "ignore-count", no_argument, NULL, 'i' },
		{ "callgraph", required_argument, NULL, OPT_CALLGRAPH },
		{ "unit-mask", optional_argument, NULL, 'u' },
		{ "extra-mask", optional_argument, NULL, 'E' },
		{ "xml", no_argument, NULL, 'X' },
		{ "get-cpu-frequency", no_argument, NULL, OPT_CPU_FREQ },
		{ "version", no_argument, NULL, 'v' },
		{ "usage", no_argument, NULL, OPT_USAGE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ophelp h = { 0 };
	bool get_type = false, get_default = false, check = false, um = false, extra = false;
	bool xml = false;
	char **args, *end;
	int opt, nargs = 0, ret = 1;

	/* the events: values of -e/-u/-E=SPEC, then the arguments */
	args = calloc((size_t)argc + 1, sizeof(*args));
	if (!args) {
		fprintf(stderr, "ophelp error: out of memory\n");
		return 1;
	}

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":c:rde::iu::E::Xvh?", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c':
			h.type = optarg;
			break;
		case 'r':
			get_type = true;
			break;
		case 'd':
			get_default = true;
			break;
		case 'e':
		case 'u':
		case 'E':
			/* OProfile's -e/-u/-E take the events as arguments; =SPEC also works */
			if (optarg)
				args[nargs++] = optarg;
			check |= opt == 'e';
			um |= opt == 'u';
			extra |= opt == 'E';
			break;
		case 'i':
			h.ignore_count = true;
			break;
		case OPT_CALLGRAPH:
			errno = 0;
			h.callgraph = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || h.callgraph < 0 || h.callgraph > 1024) {
				fprintf(stderr,
					"ophelp error: --callgraph=%s: expected a depth 0..1024\n",
					optarg);
				return 1;
			}
			break;
		case 'X':
			xml = true;
			break;
		case OPT_CPU_FREQ:
			return ophelp_cpu_frequency();
		case 'v':
			printf("ophelp: oprofile-ng " PACKAGE_VERSION "\n");
			return 0;
		case OPT_USAGE:
			fputs(ophelp_brief_usage, stdout);
			return 0;
		case 'h':
			fputs(ophelp_usage_text, stdout);
			return 0;
		case '?':
			/* -? is in the option string: glibc then leaves optopt alone */
			if (optopt == '?' || !strcmp(argv[optind - 1], "-?")) {
				fputs(ophelp_brief_usage, stdout);
				return 0;
			}
			if (!optopt) {
				fprintf(stderr, "ophelp error: unknown option %s\n",
					argv[optind - 1]);
			} else {
				fprintf(stderr, "ophelp error: unknown option -%c\n", optopt);
			}
			fputs(ophelp_brief_usage, stderr);
			return 1;
		case ':':
			fprintf(stderr, "ophelp error: option %s needs a value\n", argv[optind - 1]);
			fputs(ophelp_brief_usage, stderr);
			return 1;
		}
	}
	while (optind < argc)
		args[nargs++] = argv[optind++];
	if (check + um + extra > 1) {
		fprintf(stderr, "ophelp error: --check-events, --unit-mask and --extra-mask exclude "
				"each other - give one\n");
		return 1;
	}
	if (h.callgraph && !check) {
		fprintf(stderr,
			"ophelp error: --callgraph=%ld checks events: give it with "
			"--check-events\n",
			h.callgraph);
		return 1;
	}
	if (!h.type)
		h.type = ophelp_detect_cpu_type();
	h.timer = !strcmp(h.type, "timer");
	if (get_type) {
		printf("%s\n", ophelp_pretty_name(h.type));
		return 0;
	}
	if (ophelp_load(&h))
		return 1;
	if (check || extra)
		ret = ophelp_check(&h, args, nargs, extra);
	else if (um)
		ret = ophelp_unit_mask(&h, args, nargs);
	else if (get_default)
		ret = ophelp_default_event(&h);
	else if (nargs && !xml) {
		ret = 0;
		for (int i = 0; i < nargs && !ret; i++) {
			const struct op_event *e = op_events_find(&h.c, args[i]);

			if (!e) {
				fprintf(stderr, "ophelp error: no event %s for CPU type %s\n",
					args[i], h.type);
				ret = 1;
			} else {
				ophelp_print_event(stdout, &h.c, e);
			}
		}
	} else if (nargs) {
		fprintf(stderr,
			"ophelp error: --xml lists every event; no EVENT arguments with it\n");
	} else {
		ret = ophelp_list(&h, xml);
	}
	op_events_free(&h.c);
	free(args);
	return ret;
}
