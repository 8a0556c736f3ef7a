/* opcount.c - count events for a command, a process, a thread or the whole
 * system with libopcount (perf_event counting mode), like ocount and
 * perf stat: totals, per-thread/per-CPU breakdowns, intervals, CSV, JSON.
 * Output formats and their rules: tools/opcount.md.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "opcount.h"

#define OPC_DEFAULT_EVENTS "task-clock,context-switches,cpu-migrations,page-faults"

enum opc_format { OPC_TEXT, OPC_CSV, OPC_JSON, OPC_BRIEF };

struct opc {
	const char *events;
	pid_t pid, tid;
	bool system_wide;
	const char *cpu_list; /* --cpu-list as given (cpus[ncpus] parsed), or NULL */
	int *cpus;
	unsigned int ncpus;
	bool sep_thread, sep_cpu;
	long interval_ms;
	long max_intervals; /* --intervals: stop after so many, 0 = no limit */
	enum opc_format format;
	FILE *out;     /* where the rows go (see opc_open_output) */
	FILE *held_to; /* non-NULL: out is held in memory, written here at the end */
	char *held;
	size_t held_len;
	bool complete; /* the final counts were written */
	char **argv;   /* command, or NULL */
	int argc;

	struct oc_set *set;
	pid_t child;
	int exit_status;
	bool have_status;
	struct timespec t0;
	unsigned int nintervals;
	double last_t;         /* time of the last interval printed */
	struct oc_value *prev; /* [nslots + 1][nev]: last interval, row 0 = total */
};

static const char opc_brief_usage[] =
	"Usage: opcount [-e|--events LIST] [-p|--pid PID] [-t|--tid TID] [-a|--system-wide]\n"
	"        [-C|--cpu-list LIST] [--separate-thread] [--separate-cpu]\n"
	"        [-i|--time-interval MS] [--intervals N] [--csv|--json|--brief]\n"
	"        [-o|--output FILE|-] [-l|--list] [--version] [-?|--usage] [-h|--help]\n"
	"        [-- COMMAND [ARGS...]]\n";

static void opc_usage(FILE *f)
{
	fprintf(f,
		"usage: opcount [options] -- COMMAND [ARGS...]\n"
		"       opcount [options] --pid=PID | --tid=TID | --system-wide [-- COMMAND...]\n"
		"Count events with the kernel's perf_event counting mode.\n"
		"  -e, --events=LIST      comma-separated events (default " OPC_DEFAULT_EVENTS ")\n"
		"  -p, --pid=PID          count every thread of process PID (and what it starts)\n"
		"  -t, --tid=TID          count thread TID only\n"
		"  -a, --system-wide      count every CPU (needs root/CAP_PERFMON or paranoid <= 0)\n"
		"  -C, --cpu-list=LIST    count every task on the CPUs of LIST only (0,2,4-7):\n"
		"                         --system-wide on those CPUs\n"
		"      --separate-thread  one row per thread (with --pid/--tid)\n"
		"      --separate-cpu     one row per CPU\n"
		"  -i, --time-interval=MS print counts for each MS milliseconds\n"
		"      --intervals=N      with -i: stop after N intervals (a command is killed)\n"
		"      --csv              CSV output\n"
		"      --json             JSON output\n"
		"      --brief            OProfile ocount's brief format: EVENT,COUNT,PERCENT\n"
		"                         lines (TID/CPU first when separated)\n"
		"  -o, --output=FILE      write counts to FILE (default: stderr; - is stdout; CSV\n"
		"                         and JSON on stderr/stdout are written whole at the end)\n"
		"  -l, --list             list the built-in event names\n"
		"      --version          the package version\n"
		"  -?, --usage            the options in brief\n"
		"  -h, --help             this text\n"
		"Without a command, --pid/--tid/--system-wide count until the target exits or\n"
		"SIGINT/SIGTERM.  An event this machine cannot count (no PMU) is shown as\n"
		"<not supported> and the others are counted.  Exit status: the command's\n"
		"(128+N if killed by signal N, 127 if it could not be run); 1 for opcount's\n"
		"own errors (an unknown event name among them).\n");
}

static double opc_now_s(const struct opc *o)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - o->t0.tv_sec) + (double)(t.tv_nsec - o->t0.tv_nsec) / 1e9;
}

static void opc_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void opc_csv_str(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static bool opc_any_scaled(const struct oc_value *v, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (v[i].running < v[i].enabled)
			return true;
	return false;
}

/* One block of rows: slot < 0 is the aggregate. */
static void opc_rows(struct opc *o, int slot, const struct oc_value *v, double t, bool interval,
		     bool *first_json)
{
	unsigned int n = oc_nevents(o->set);
	pid_t tid = slot >= 0 ? oc_slot_tid(o->set, slot) : -1;
	int cpu = slot >= 0 ? oc_slot_cpu(o->set, slot) : -1;
	bool show_tid = slot >= 0 && o->sep_thread;
	bool show_cpu = slot >= 0 && o->sep_cpu;

	for (unsigned int e = 0; e < n; e++) {
		const char *name = oc_event_name(o->set, e);
		bool counted = oc_event_supported(o->set, e, NULL);
		char num[40];

		switch (o->format) {
		case OPC_TEXT:
			if (interval)
				fprintf(o->out, "%10.3f ", t);
			else
				fputc('\t', o->out);
			if (slot >= 0) {
				if (o->sep_thread)
					fprintf(o->out, "%-8d ", (int)tid);
				if (o->sep_cpu)
					fprintf(o->out, "%-5d ", cpu);
			} else if (o->sep_thread || o->sep_cpu) {
				fprintf(o->out, "%-*s ",
					(o->sep_thread ? 9 : 0) + (o->sep_cpu ? 6 : 0) - 1, "total");
			}
			if (!counted)
				fprintf(o->out, "%-32s <not supported>\n", name);
			else
				fprintf(o->out, "%-32s %-24s %.2f\n", name,
					oc_format_count(v[e].scaled, num, sizeof(num)),
					v[e].percent);
			break;
		case OPC_CSV:
			fprintf(o->out, "%s,", interval ? "interval" : "total");
			if (interval)
				fprintf(o->out, "%.3f", t);
			fputc(',', o->out);
			if (show_tid)
				fprintf(o->out, "%d", (int)tid);
			fputc(',', o->out);
			if (show_cpu)
				fprintf(o->out, "%d", cpu);
			fputc(',', o->out);
			opc_csv_str(o->out, name);
			if (!counted)
				fputs(",<not supported>,,0,0,\n", o->out);
			else
				fprintf(o->out,
					",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.2f\n",
					v[e].count, v[e].scaled, v[e].enabled, v[e].running,
					v[e].percent);
			break;
		case OPC_BRIEF:
			/* ocount's -b: [TID,][CPU,]EVENT,COUNT,PERCENT; an event this
			 * machine cannot count has 0 and "Event not counted" (0 per slot) */
			if (show_tid)
				fprintf(o->out, "%d,", (int)tid);
			if (show_cpu)
				fprintf(o->out, "%d,", cpu);
			if (!counted)
				fprintf(o->out, "%s,0,%s\n", name,
					slot >= 0 ? "0" : "Event not counted");
			else
				fprintf(o->out, "%s,%" PRIu64 ",%.2f\n", name, v[e].scaled,
					v[e].percent);
			break;
		case OPC_JSON:
			fprintf(o->out, "%s\n    {", *first_json ? "" : ",");
			*first_json = false;
			if (interval)
				fprintf(o->out, "\"time_s\": %.3f, ", t);
			if (show_tid)
				fprintf(o->out, "\"tid\": %d, ", (int)tid);
			if (show_cpu)
				fprintf(o->out, "\"cpu\": %d, ", cpu);
			fputs("\"event\": ", o->out);
			opc_json_str(o->out, name);
			if (!counted)
				fputs(", \"supported\": false, \"count\": null, \"scaled_count\": null"
				      ", \"time_enabled_ns\": 0, \"time_running_ns\": 0"
				      ", \"percent_counted\": null}",
				      o->out);
			else
				fprintf(o->out,
					", \"supported\": true, \"count\": %" PRIu64
					", \"scaled_count\": %" PRIu64
					", \"time_enabled_ns\": %" PRIu64
					", \"time_running_ns\": %" PRIu64
					", \"percent_counted\": %.2f}",
					v[e].count, v[e].scaled, v[e].enabled, v[e].running,
					v[e].percent);
			break;
		}
	}
}

static void opc_delta(struct oc_value *d, const struct oc_value *cur, const struct oc_value *prev,
		      unsigned int n)
{
	for (unsigned int e = 0; e < n; e++) {
		d[e].count = cur[e].count - prev[e].count;
		d[e].enabled = cur[e].enabled - prev[e].enabled;
		d[e].running = cur[e].running - prev[e].running;
		oc_value_scale(&d[e]);
	}
}

static bool opc_separate(const struct opc *o)
{
	return o->sep_thread || o->sep_cpu;
}

/* the total rows: every format has them but the brief one when separated
 * (ocount's -b gives the per-thread or per-CPU rows alone) */
static bool opc_total_rows(const struct opc *o)
{
	return o->format != OPC_BRIEF || !opc_separate(o);
}

/* read totals (row 0) and, when separated, each slot (rows 1..) */
static int opc_read_all(struct opc *o, struct oc_value *rows)
{
	unsigned int n = oc_nevents(o->set);
	int ret = oc_read(o->set, OC_VIEW_ALL, rows);

	if (ret)
		return ret;
	if (opc_separate(o))
		for (unsigned int s = 0; s < oc_nslots(o->set); s++) {
			ret = oc_read_slot(o->set, s, OC_VIEW_ALL, rows + (size_t)(s + 1) * n);
			if (ret)
				return ret;
		}
	return 0;
}

/* One interval's rows: the counts since the last one, at time t. */
static int opc_interval(struct opc *o, double t)
{
	unsigned int n = oc_nevents(o->set), ns = oc_nslots(o->set);
	size_t rows = opc_separate(o) ? ns + 1 : 1;
	struct oc_value *cur = calloc(rows * n, sizeof(*cur));
	struct oc_value *d = calloc(n, sizeof(*d));
	bool first = o->nintervals == 0;
	int ret = -ENOMEM;

	if (!cur || !d)
		goto out;
	ret = opc_read_all(o, cur);
	if (ret)
		goto out;
	if (o->format == OPC_TEXT && o->nintervals == 0)
		fprintf(o->out,
			"#     time %s%sevent                            count                    %% time counted\n",
			o->sep_thread ? "tid      " : "", o->sep_cpu ? "cpu   " : "");
	if (o->format == OPC_BRIEF) {
		struct timespec now;

		/* ocount's: seconds since the epoch, to a tenth */
		clock_gettime(CLOCK_REALTIME, &now);
		fprintf(o->out, "\ntimestamp,%lld.%d\n", (long long)now.tv_sec,
			(int)(now.tv_nsec / 100000000));
	}
	if (opc_separate(o)) {
		for (unsigned int s = 0; s < ns; s++) {
			opc_delta(d, cur + (size_t)(s + 1) * n, o->prev + (size_t)(s + 1) * n, n);
			opc_rows(o, (int)s, d, t, true, &first);
		}
	}
	opc_delta(d, cur, o->prev, n);
	if (opc_total_rows(o))
		opc_rows(o, -1, d, t, true, &first);
	memcpy(o->prev, cur, rows * n * sizeof(*cur));
	o->nintervals++;
	o->last_t = t;
	fflush(o->out);
	ret = 0;
out:
	free(cur);
	free(d);
	return ret;
}

static void opc_describe_target(struct opc *o, char *buf, size_t len)
{
	if (o->argv) {
		size_t off = 0;

		buf[0] = '\0';
		for (int i = 0; i < o->argc && off + 1 < len; i++)
			off += snprintf(buf + off, len - off, "%s%s", i ? " " : "", o->argv[i]);
		if (o->cpu_list)
			snprintf(buf + strlen(buf), len - strlen(buf), " (CPUs %s)", o->cpu_list);
		else if (o->system_wide)
			snprintf(buf + strlen(buf), len - strlen(buf), " (system-wide)");
	} else if (o->cpu_list) {
		snprintf(buf, len, "CPUs %s", o->cpu_list);
	} else if (o->system_wide) {
		snprintf(buf, len, "all CPUs (system-wide)");
	} else if (o->pid > 0) {
		snprintf(buf, len, "pid %d", (int)o->pid);
	} else {
		snprintf(buf, len, "tid %d", (int)o->tid);
	}
}

static int opc_final(struct opc *o, double elapsed)
{
	unsigned int n = oc_nevents(o->set), ns = oc_nslots(o->set);
	size_t rows = opc_separate(o) ? ns + 1 : 1;
	struct oc_value *cur = calloc(rows * n, sizeof(*cur));
	char what[512];
	bool first = true;
	int ret;

	if (!cur)
		return -ENOMEM;
	ret = opc_read_all(o, cur);
	if (ret)
		goto out;
	opc_describe_target(o, what, sizeof(what));
	switch (o->format) {
	case OPC_TEXT:
		fprintf(o->out, "\nEvents were actively counted for %.0f nanoseconds (%.3f s).\n",
			elapsed * 1e9, elapsed);
		fprintf(o->out, "Event counts (%s) for %s:\n",
			opc_any_scaled(cur, (unsigned int)(rows * n)) ? "scaled" : "actual", what);
		fprintf(o->out, "\t%s%s%-32s %-24s %s\n", o->sep_thread ? "Thread   " : "",
			o->sep_cpu ? "CPU   " : "", "Event", "Count", "% time counted");
		if (opc_separate(o))
			for (unsigned int s = 0; s < ns; s++)
				opc_rows(o, (int)s, cur + (size_t)(s + 1) * n, 0, false, &first);
		opc_rows(o, -1, cur, 0, false, &first);
		for (unsigned int e = 0; e < n; e++) {
			const char *why;

			if (!oc_event_supported(o->set, e, &why))
				fprintf(o->out, "\n<not supported>: %s\n", why);
		}
		for (unsigned int e = 0; e < n; e++) {
			const char *nm = oc_event_name(o->set, e);
			size_t l = strlen(nm);

			if (l > 2 && !strcmp(nm + l - 2, ":u")) {
				fprintf(o->out,
					"\n:u = user space only (kernel.perf_event_paranoid "
					"forbids kernel counting to unprivileged users): events "
					"that happen in the kernel, such as context-switches, "
					"read 0\n");
				break;
			}
		}
		if (o->have_status && o->exit_status)
			fprintf(o->out, "\n%s exited with status %d\n", o->argv[0], o->exit_status);
		break;
	case OPC_CSV:
		if (opc_separate(o))
			for (unsigned int s = 0; s < ns; s++)
				opc_rows(o, (int)s, cur + (size_t)(s + 1) * n, 0, false, &first);
		opc_rows(o, -1, cur, 0, false, &first);
		break;
	case OPC_JSON:
		fputs("\n  ],\n  \"target\": ", o->out);
		opc_json_str(o->out, what);
		fprintf(o->out, ",\n  \"elapsed_ns\": %.0f,\n  \"scaled\": %s,\n", elapsed * 1e9,
			opc_any_scaled(cur, (unsigned int)(rows * n)) ? "true" : "false");
		if (o->have_status)
			fprintf(o->out, "  \"exit_status\": %d,\n", o->exit_status);
		fputs("  \"counts\": [", o->out);
		if (opc_separate(o))
			for (unsigned int s = 0; s < ns; s++)
				opc_rows(o, (int)s, cur + (size_t)(s + 1) * n, 0, false, &first);
		opc_rows(o, -1, cur, 0, false, &first);
		fputs("\n  ]\n}\n", o->out);
		break;
	case OPC_BRIEF:
		/* with -i the intervals are the output, as ocount's */
		if (o->interval_ms)
			break;
		fputc('\n', o->out);
		if (opc_separate(o))
			for (unsigned int s = 0; s < ns; s++)
				opc_rows(o, (int)s, cur + (size_t)(s + 1) * n, 0, false, &first);
		if (opc_total_rows(o))
			opc_rows(o, -1, cur, 0, false, &first);
		break;
	}
	fflush(o->out);
	o->complete = true;
out:
	free(cur);
	return ret;
}

/* Is the --pid/--tid target still there (not gone, not a zombie)? */
static bool opc_target_alive(pid_t id)
{
	char path[64], buf[512], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)id);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return true;
	return p[2] != 'Z' && p[2] != 'X';
}

static int opc_status_code(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

/* Fork the command stopped on a pipe; it execs when released. */
static int opc_spawn(struct opc *o, int *go_fd, int *err_fd)
{
	int go[2], er[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(er, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char c;
		sigset_t none;
		int e;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(go[1]);
		close(er[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(o->argv[0], o->argv);
		e = errno;
		if (write(er[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(e == ENOENT ? 127 : 126);
	}
	close(go[0]);
	close(er[1]);
	*go_fd = go[1];
	*err_fd = er[0];
	o->child = pid;
	return 0;
}

static int opc_run(struct opc *o)
{
	struct oc_target t = { 0 };
	struct oc_error err;
	unsigned int flags = 0;
	int go = -1, errfd = -1, ret, rc = 1;
	sigset_t mask;
	double next, elapsed;
	struct timespec t_end;

	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);

	if (o->argv) {
		ret = opc_spawn(o, &go, &errfd);
		if (ret) {
			fprintf(stderr, "opcount: cannot start '%s': %s\n", o->argv[0],
				strerror(-ret));
			return 1;
		}
	}
	if (o->cpu_list) {
		flags = OC_START;
	} else if (o->system_wide) {
		t.kind = OC_TARGET_CPU;
		t.cpu = -1;
		flags = OC_START;
	} else if (o->argv) {
		t.kind = OC_TARGET_THREAD;
		t.id = o->child;
		flags = OC_INHERIT | OC_ENABLE_ON_EXEC;
	} else if (o->pid > 0) {
		t.kind = OC_TARGET_PROCESS;
		t.id = o->pid;
		flags = OC_INHERIT | OC_START;
	} else {
		t.kind = OC_TARGET_THREAD;
		t.id = o->tid;
		flags = OC_START;
	}
	if (o->sep_cpu && !o->system_wide)
		flags |= OC_PER_CPU;
	if (o->cpu_list)
		ret = oc_open_cpus(&o->set, o->cpus, o->ncpus, o->events,
				   flags | OC_SKIP_UNSUPPORTED, &err);
	else
		ret = oc_open(&o->set, &t, o->events, flags | OC_SKIP_UNSUPPORTED, &err);
	if (ret) {
		fprintf(stderr, "opcount: %s%s%s%s\n", o->cpu_list ? "--cpu-list=" : "",
			o->cpu_list ? o->cpu_list : "", o->cpu_list ? ": " : "",
			err.msg[0] ? err.msg : oc_strerror(ret));
		if (o->argv) {
			close(go); /* the child exits 127 without exec */
			waitpid(o->child, NULL, 0);
		}
		return 1;
	}
	o->prev = calloc((size_t)(oc_nslots(o->set) + 1) * oc_nevents(o->set), sizeof(*o->prev));
	if (!o->prev) {
		fprintf(stderr, "opcount: out of memory\n");
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &o->t0);
	if (o->argv) {
		int e = 0;
		ssize_t n;

		if (write(go, "g", 1) != 1) {
			fprintf(stderr, "opcount: cannot release the command: %s\n",
				strerror(errno));
			goto out;
		}
		close(go);
		go = -1;
		n = read(errfd, &e, sizeof(e));
		if (n == sizeof(e)) {
			int st;

			fprintf(stderr, "opcount: cannot run '%s': %s\n", o->argv[0], strerror(e));
			waitpid(o->child, &st, 0);
			rc = opc_status_code(st);
			goto out;
		}
	}
	if (o->format == OPC_JSON)
		fputs("{\n  \"opcount_version\": 1,\n  \"intervals\": [", o->out);

	next = o->interval_ms > 0 ? o->interval_ms / 1000.0 : 1e30;
	for (;;) {
		double now = opc_now_s(o), wait_s = next - now;
		struct timespec ts;
		siginfo_t si;
		int sig;

		if (wait_s > 0.2 && !o->argv)
			wait_s = 0.2; /* poll the target's liveness */
		if (wait_s > 1.0)
			wait_s = 1.0;
		if (wait_s < 0)
			wait_s = 0;
		ts.tv_sec = (time_t)wait_s;
		ts.tv_nsec = (long)((wait_s - (double)ts.tv_sec) * 1e9);
		sig = sigtimedwait(&mask, &si, &ts);
		if (sig == SIGCHLD && o->argv) {
			int st;
			pid_t w = waitpid(o->child, &st, WNOHANG);

			if (w == o->child) {
				o->exit_status = opc_status_code(st);
				o->have_status = true;
				break;
			}
		} else if ((sig == SIGINT || sig == SIGTERM) && !o->argv) {
			break;
		}
		/* with a command, SIGINT reaches it too; we wait for its exit */
		if (!o->argv && !o->system_wide && !opc_target_alive(o->pid > 0 ? o->pid : o->tid))
			break;
		if (opc_now_s(o) >= next) {
			ret = opc_interval(o, opc_now_s(o));
			if (ret) {
				fprintf(stderr, "opcount: reading counters: %s\n", oc_strerror(ret));
				goto out;
			}
			next += o->interval_ms / 1000.0;
			if (o->max_intervals && o->nintervals >= (unsigned long)o->max_intervals)
				break;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t_end);
	elapsed = (double)(t_end.tv_sec - o->t0.tv_sec) +
		  (double)(t_end.tv_nsec - o->t0.tv_nsec) / 1e9;
	oc_stop(o->set);
	if (o->argv && !o->have_status) {
		/* --intervals ended counting before the command: ocount kills it */
		kill(o->child, SIGKILL);
		waitpid(o->child, NULL, 0);
	}
	if (o->interval_ms > 0 && elapsed > o->last_t &&
	    !(o->max_intervals && o->nintervals >= (unsigned long)o->max_intervals)) {
		/* the last, partial interval (as perf stat -I): the intervals
		 * then add up to the totals */
		ret = opc_interval(o, elapsed);
		if (ret) {
			fprintf(stderr, "opcount: reading counters: %s\n", oc_strerror(ret));
			goto out;
		}
	}
	ret = opc_final(o, elapsed);
	if (ret) {
		fprintf(stderr, "opcount: reading counters: %s\n", oc_strerror(ret));
		goto out;
	}
	rc = o->have_status ? o->exit_status : 0;
out:
	if (go >= 0)
		close(go);
	if (errfd >= 0)
		close(errfd);
	oc_close(o->set);
	free(o->prev);
	return rc;
}

static int opc_list(void)
{
	const char *const *names = oc_builtin_events();

	printf("Built-in events (software events always work; hardware ones need a PMU):\n");
	for (unsigned int i = 0; names[i]; i++)
		printf("  %-20s %s\n", names[i], oc_builtin_event_help(i));
	printf("Other names are looked up in libpfm4's catalogue (e.g. INST_RETIRED:ANY);\n"
	       "append :u or :k to a built-in name to count user or kernel only.\n");
	return 0;
}

/*
 * Where the rows go.  stderr is shared with the command (and, with 2>&1, its
 * stdout): a CSV or JSON document there is held in memory and written whole
 * when counting ends, as perf stat -j does; text rows go through a private
 * buffered stream flushed once per block, so a row is never split by the
 * command's output.  With -o FILE everything is written as counting goes.
 */
static int opc_open_output(struct opc *o, const char *outpath)
{
	int fd, to = STDERR_FILENO;

	/* "-": stdout, written as stderr is (ocount's counts go to stdout) */
	if (outpath && !strcmp(outpath, "-")) {
		outpath = NULL;
		to = STDOUT_FILENO;
	}
	if (outpath) {
		o->out = fopen(outpath, "w");
		if (!o->out) {
			fprintf(stderr, "opcount: --output=%s: %s\n", outpath, strerror(errno));
			return -1;
		}
		return 0;
	}
	if (o->format != OPC_TEXT) {
		o->out = open_memstream(&o->held, &o->held_len);
		o->held_to = to == STDOUT_FILENO ? stdout : stderr;
	} else {
		fd = fcntl(to, F_DUPFD_CLOEXEC, 0);
		o->out = fd >= 0 ? fdopen(fd, "w") : NULL;
		if (!o->out && fd >= 0)
			close(fd);
	}
	if (!o->out) {
		fprintf(stderr, "opcount: cannot set up the output on %s: %s\n",
			to == STDOUT_FILENO ? "stdout" : "stderr", strerror(errno));
		return -1;
	}
	return 0;
}

/* Write a held document (only a complete one: after an error the message
 * says what happened) and close the stream; -1 when the output failed. */
static int opc_close_output(struct opc *o, const char *outpath)
{
	int ret = 0;

	if (fclose(o->out) != 0)
		ret = -1;
	if (o->held_to) {
		if (!ret && o->complete &&
		    (fwrite(o->held, 1, o->held_len, o->held_to) != o->held_len ||
		     fflush(o->held_to) != 0))
			ret = -1;
		free(o->held);
	}
	if (ret)
		fprintf(stderr, "opcount: %s%s: %s\n", outpath ? "--output=" : "writing the counts",
			outpath ? outpath : "", strerror(errno));
	return ret;
}

static bool opc_parse_long(const char *s, long min, long max, long *v)
{
	char *end;

	errno = 0;
	*v = strtol(s, &end, 10);
	return s[0] && !*end && !errno && *v >= min && *v <= max;
}

/*
 * --cpu-list=LIST: CPU numbers and ranges ("0,2,4-7") into a new array; the
 * library checks that each is online and given once.  -1 after a message.
 */
static int opc_parse_cpu_list(const char *arg, int **out, unsigned int *n)
{
	unsigned int cap = 0, cnt = 0, item = 0;
	const char *p = arg;
	int *v = NULL;

	for (;;) {
		long lo, hi;
		char *end;

		item++;
		errno = 0;
		lo = strtol(p, &end, 10);
		hi = lo;
		if (end != p && *end == '-' && end[1] >= '0' && end[1] <= '9')
			hi = strtol(end + 1, &end, 10);
		if (end == p || (*end && *end != ',') || errno || lo < 0 || hi < lo || hi > 65535 ||
		    *p < '0' || *p > '9') {
			fprintf(stderr,
				"opcount: --cpu-list=%s: item %u is not a CPU number or a "
				"range N-M (0..65535)\n",
				arg, item);
			free(v);
			return -1;
		}
		for (long c = lo; c <= hi; c++) {
			if (cnt == cap) {
				int *nv;

				cap = cap ? cap * 2 : 8;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					fprintf(stderr, "opcount: --cpu-list=%s: out of memory\n",
						arg);
					free(v);
					return -1;
				}
				v = nv;
			}
			v[cnt++] = (int)c;
		}
		if (!*end)
			break;
		p = end + 1;
	}
	*out = v;
	*n = cnt;
	return 0;
}

int main(int argc, char **argv)
{
	enum {
		OPT_SEP_THREAD = 256,
		OPT_SEP_CPU,
		OPT_CSV,
		OPT_JSON,
		OPT_USAGE,
		OPT_BRIEF,
		OPT_INTERVALS
	};
	static const struct option opts[] = {
		{ "events", required_argument, NULL, 'e' },
		{ "pid", required_argument, NULL, 'p' },
		{ "tid", required_argument, NULL, 't' },
		{ "system-wide", no_argument, NULL, 'a' },
		{ "cpu-list", required_argument, NULL, 'C' },
		{ "separate-thread", no_argument, NULL, OPT_SEP_THREAD },
		{ "separate-cpu", no_argument, NULL, OPT_SEP_CPU },
		{ "time-interval", required_argument, NULL, 'i' },
		{ "csv", no_argument, NULL, OPT_CSV },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "brief", no_argument, NULL, OPT_BRIEF },
		{ "intervals", required_argument, NULL, OPT_INTERVALS },
		{ "output", required_argument, NULL, 'o' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "usage", no_argument, NULL, OPT_USAGE },
		{ NULL, 0, NULL, 0 },
	};
	struct opc o = { .events = OPC_DEFAULT_EVENTS, .out = stderr };
	const char *outpath = NULL;
	sigset_t mask;
	int c, rc;
	long v;

	/*
	 * The signals that end counting are blocked (and taken in opc_run)
	 * before anything slow (libpfm4, opening events): a SIGINT during
	 * start-up stays pending and stops the count then. Not blocked, it
	 * would be lost where the shell left it ignored (a background job of
	 * a script) and the count would never end.
	 */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);

	while ((c = getopt_long(argc, argv, "+e:p:t:aC:i:o:lh?", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
			o.events = optarg;
			break;
		case 'p':
		case 't':
			if (!opc_parse_long(optarg, 1, 0x7fffffff, &v)) {
				fprintf(stderr, "opcount: --%s=%s: expected a positive %s id\n",
					c == 'p' ? "pid" : "tid", optarg,
					c == 'p' ? "process" : "thread");
				return 1;
			}
			if (c == 'p')
				o.pid = (pid_t)v;
			else
				o.tid = (pid_t)v;
			break;
		case 'a':
			o.system_wide = true;
			break;
		case 'C':
			free(o.cpus);
			if (opc_parse_cpu_list(optarg, &o.cpus, &o.ncpus))
				return 1;
			o.cpu_list = optarg;
			o.system_wide = true;
			break;
		case OPT_SEP_THREAD:
			o.sep_thread = true;
			break;
		case OPT_SEP_CPU:
			o.sep_cpu = true;
			break;
		case 'i':
			if (!opc_parse_long(optarg, 10, 86400000, &v)) {
				fprintf(stderr,
					"opcount: --time-interval=%s: expected milliseconds "
					"between 10 and 86400000\n",
					optarg);
				return 1;
			}
			o.interval_ms = v;
			break;
		case OPT_CSV:
			o.format = OPC_CSV;
			break;
		case OPT_JSON:
			o.format = OPC_JSON;
			break;
		case OPT_BRIEF:
			o.format = OPC_BRIEF;
			break;
		case OPT_INTERVALS:
			if (!opc_parse_long(optarg, 1, 0x7fffffff, &v)) {
				fprintf(stderr,
					"opcount: --intervals=%s: expected a positive number "
					"of intervals\n",
					optarg);
				return 1;
			}
			o.max_intervals = v;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'l':
			return opc_list();
		case 'V':
			printf("opcount " PACKAGE_VERSION "\n");
			return 0;
		case 'h':
			opc_usage(stdout);
			return 0;
		case OPT_USAGE:
			fputs(opc_brief_usage, stdout);
			return 0;
		default:
			/* -? (getopt's answer for unknown options too) */
			if (optopt == '?' || !strcmp(argv[optind - 1], "-?")) {
				fputs(opc_brief_usage, stdout);
				return 0;
			}
			opc_usage(stderr);
			return 1;
		}
	}
	if (optind < argc) {
		o.argv = argv + optind;
		o.argc = argc - optind;
	}
	if ((o.pid > 0) + (o.tid > 0) + (o.argv && !o.system_wide) + o.system_wide != 1 ||
	    ((o.pid > 0 || o.tid > 0) && o.argv)) {
		fprintf(stderr, "opcount: expected exactly one target: -- COMMAND, --pid=PID, "
				"--tid=TID or --system-wide (optionally with a COMMAND); "
				"see opcount --help\n");
		return 1;
	}
	if (o.max_intervals && !o.interval_ms) {
		fprintf(stderr, "opcount: --intervals=%ld needs --time-interval\n", o.max_intervals);
		return 1;
	}
	if (o.sep_thread && !(o.pid > 0 || o.tid > 0)) {
		fprintf(stderr,
			"opcount: --separate-thread needs --pid or --tid (the threads of a "
			"launched command are folded into it by the kernel's inheritance)\n");
		return 1;
	}
	if (o.pid > 0 && kill(o.pid, 0) < 0 && errno == ESRCH) {
		fprintf(stderr, "opcount: --pid=%d: no such process\n", (int)o.pid);
		return 1;
	}
	if (opc_open_output(&o, outpath))
		return 1;
	if (o.format == OPC_CSV)
		fputs("kind,time_s,tid,cpu,event,count,scaled_count,time_enabled_ns,"
		      "time_running_ns,percent_counted\n",
		      o.out);
	rc = opc_run(&o);
	free(o.cpus);
	if (opc_close_output(&o, outpath))
		return rc ? rc : 1;
	return rc;
}
