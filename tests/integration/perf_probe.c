/*
 * perf_probe.c - drives the sample path (core/perf.c) against the live
 * kernel for tests/integration/perf_layer.sh, and doubles as the workload
 * ("spin"). Prints "key=value" lines the script checks.
 * SPDX-License-Identifier: MIT
 *
 *   perf_probe spin CPU_SECONDS [THREADS]
 *   perf_probe launch [--freq HZ] [--record FILE] -- CMD ARGS...
 *   perf_probe pid    [--freq HZ] --seconds S PID
 *   perf_probe system [--freq HZ] --seconds S --watch PID
 *   perf_probe replay FILE --watch PID
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "ext.h"
#include "options.h"
#include "perf.h"

/* ---------------- workload ---------------- */

static double spin_seconds;

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static volatile uint64_t sink;

static void *spin_thread(void *arg)
{
	uint64_t x = (uint64_t)(uintptr_t)arg;

	while (thread_cpu() < spin_seconds) {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		sink = x;
	}
	return NULL;
}

static int spin(int argc, char **argv)
{
	int threads = argc > 3 ? atoi(argv[3]) : 1, i;
	pthread_t t[16];

	spin_seconds = argc > 2 ? atof(argv[2]) : 1.0;
	if (threads < 1 || threads > 16)
		threads = 1;
	for (i = 1; i < threads; i++)
		pthread_create(&t[i], NULL, spin_thread, (void *)(uintptr_t)i);
	spin_thread(NULL);
	for (i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
	if (getenv("SPIN_REPORT")) {
		struct timespec ts;

		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
		fprintf(stderr, "spin_cpu_us=%lld\n",
			(long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000);
	}
	return 0;
}

/* N children, one after the other, each exec'ing "spin 0.02" */
static int churn(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 20, i;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			execl("/proc/self/exe", argv[0], "spin", "0.02", (char *)NULL);
			_exit(127);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	return 0;
}

/* ---------------- record checking ---------------- */

#define MAX_MAPS 512

struct map {
	uint32_t pid;
	uint64_t start, end;
	bool is_binary;
};

struct probe {
	uint32_t watch;          /* pid of interest (0 until known) */
	char binary[PATH_MAX];   /* realpath of the watched program */
	struct map maps[MAX_MAPS];
	unsigned nr_maps;
	uint64_t n, hash;
	uint64_t samples, watch_samples, watch_user, unmapped_user, src_other;
	uint64_t binary_mmap_at, first_watch_sample_at; /* record index + 1 */
	uint64_t synth_binary_mmaps, comm_exec, exit_seen, lost, out_of_order, last_time;
	uint64_t lost_samples, lost_sideband; /* exact counts (perf_lost_checkpoint) */
	uint32_t tids[64];
	unsigned nr_tids;
	unsigned stall_ms;
	uint64_t chain_samples, chain_bad, core_counter_bad;
	uint64_t unknown_pid_user, introduced_late, exec_total;
	uint8_t known[(1u << 22) / 8]; /* pids seen in COMM/FORK/MMAP (pid_max <= 2^22) */
	uint8_t orphan[(1u << 22) / 8]; /* pids sampled before being known */       /* sleep once in the first sample: the rings overflow */
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

/*
 * A sample of a task never introduced is legitimate when the task existed
 * at enable time and exited before the /proc walk reached it (perf has the
 * same window). Introducing it AFTER one of its samples is a merge bug.
 */
static void know(struct probe *p, uint32_t pid)
{
	if (pid >= (1u << 22))
		return;
	p->known[pid / 8] |= (uint8_t)(1u << (pid % 8));
	if (p->orphan[pid / 8] & (1u << (pid % 8))) {
		p->introduced_late++;
		p->orphan[pid / 8] &= (uint8_t)~(1u << (pid % 8));
		fprintf(stderr, "perf_probe: task %u introduced after one of its samples\n", pid);
	}
}

static bool known(const struct probe *p, uint32_t pid)
{
	return pid < (1u << 22) && (p->known[pid / 8] & (1u << (pid % 8)));
}

static int deliver(void *arg, const struct op_record *r)
{
	struct probe *p = arg;
	uint64_t v[8] = { r->type, r->time, r->cpu, r->counter };
	unsigned i;

	p->n++;
	if (r->time < p->last_time)
		p->out_of_order++;
	else
		p->last_time = r->time;
	switch (r->type) {
	case OP_REC_SAMPLE: {
		const struct op_perf_sample *s = &r->sample;

		v[4] = s->ip;
		v[5] = ((uint64_t)s->pid << 32) | s->tid;
		v[6] = s->period;
		v[7] = s->source;
		p->samples++;
		if (s->nr_callchain) {
			/* the kernel starts a chain with a context marker */
			if (s->nr_callchain >= 2 && s->callchain[0] >= OP_CONTEXT_MAX)
				p->chain_samples++;
			else
				p->chain_bad++;
		}
		if (s->source == 0 && r->counter != 0)
			p->core_counter_bad++;
		/* a user sample of a task never introduced: merge order broken */
		if (s->cpumode == OP_CPUMODE_USER && s->pid && !known(p, s->pid) &&
		    s->pid < (1u << 22)) {
			p->unknown_pid_user++;
			p->orphan[s->pid / 8] |= (uint8_t)(1u << (s->pid % 8));
		}
		if (p->stall_ms) {
			struct timespec ts = { p->stall_ms / 1000, (long)(p->stall_ms % 1000) * 1000000 };

			p->stall_ms = 0;
			nanosleep(&ts, NULL);
		}
		if (s->source != 0)
			p->src_other++;
		if (!p->watch || s->pid != p->watch)
			break;
		p->watch_samples++;
		if (!p->first_watch_sample_at)
			p->first_watch_sample_at = p->n;
		for (i = 0; i < p->nr_tids && p->tids[i] != s->tid; i++)
			;
		if (i == p->nr_tids && i < 64)
			p->tids[p->nr_tids++] = s->tid;
		if (s->cpumode != OP_CPUMODE_USER)
			break;
		p->watch_user++;
		for (i = 0; i < p->nr_maps; i++)
			if (p->maps[i].pid == s->pid && s->ip >= p->maps[i].start &&
			    s->ip < p->maps[i].end)
				break;
		if (i == p->nr_maps)
			p->unmapped_user++;
		break;
	}
	case OP_REC_MMAP:
		v[4] = r->mmap.start;
		v[5] = r->mmap.len;
		v[6] = r->mmap.pgoff;
		v[7] = r->mmap.pid;
		p->hash = fnv(p->hash, r->mmap.filename, strlen(r->mmap.filename));
		know(p, r->mmap.pid);
		if (!p->watch || r->mmap.pid != p->watch || !r->mmap.exec)
			break;
		if (p->nr_maps < MAX_MAPS)
			p->maps[p->nr_maps++] = (struct map){ r->mmap.pid, r->mmap.start,
							      r->mmap.start + r->mmap.len,
							      !strcmp(r->mmap.filename, p->binary) };
		if (!strcmp(r->mmap.filename, p->binary)) {
			if (!p->binary_mmap_at)
				p->binary_mmap_at = p->n;
			if (r->time == 0)
				p->synth_binary_mmaps++;
		}
		break;
	case OP_REC_COMM:
		v[4] = ((uint64_t)r->comm.pid << 32) | r->comm.tid;
		v[5] = r->comm.exec;
		p->hash = fnv(p->hash, r->comm.comm, strlen(r->comm.comm));
		know(p, r->comm.pid);
		if (r->comm.exec)
			p->exec_total++;
		if (p->watch && r->comm.pid == p->watch && r->comm.exec) {
			p->comm_exec++;
			/* exec replaced the address space */
			for (i = 0; i < p->nr_maps;)
				if (p->maps[i].pid == p->watch)
					p->maps[i] = p->maps[--p->nr_maps];
				else
					i++;
		}
		break;
	case OP_REC_FORK:
	case OP_REC_EXIT:
		v[4] = ((uint64_t)r->task.pid << 32) | r->task.tid;
		v[5] = ((uint64_t)r->task.ppid << 32) | r->task.ptid;
		if (r->type == OP_REC_FORK)
			know(p, r->task.pid);
		if (r->type == OP_REC_EXIT && p->watch && r->task.pid == p->watch &&
		    r->task.tid == p->watch)
			p->exit_seen++;
		break;
	case OP_REC_LOST:
		v[4] = r->lost.lost;
		v[5] = r->lost.kind;
		if (r->lost.kind == OP_LOST_SAMPLES)
			p->lost_samples += r->lost.lost;
		else if (r->lost.kind == OP_LOST_SIDEBAND)
			p->lost_sideband += r->lost.lost;
		else
			p->lost += r->lost.lost;
		break;
	default:
		break;
	}
	p->hash = fnv(p->hash, v, sizeof(v));
	return 0;
}

static void report(const struct probe *p, struct perf_session *s)
{
	const struct perf_stats *st = perf_get_stats(s);

	printf("records=%" PRIu64 "\n", p->n);
	printf("hash=%016" PRIx64 "\n", p->hash);
	printf("samples=%" PRIu64 "\n", p->samples);
	printf("watch_pid=%u\n", p->watch);
	printf("watch_samples=%" PRIu64 "\n", p->watch_samples);
	printf("watch_user_samples=%" PRIu64 "\n", p->watch_user);
	printf("watch_tids=%u\n", p->nr_tids);
	printf("unmapped_user_samples=%" PRIu64 "\n", p->unmapped_user);
	printf("binary_mmap_seen=%d\n", p->binary_mmap_at != 0);
	printf("binary_mmap_before_first_sample=%d\n",
	       p->binary_mmap_at && p->binary_mmap_at < p->first_watch_sample_at);
	printf("synth_binary_mmaps=%" PRIu64 "\n", p->synth_binary_mmaps);
	printf("comm_exec=%" PRIu64 "\n", p->comm_exec);
	printf("exit_seen=%" PRIu64 "\n", p->exit_seen);
	printf("lost_in_records=%" PRIu64 "\n", p->lost);
	printf("lost_exact_samples=%" PRIu64 "\n", p->lost_samples);
	printf("lost_exact_sideband=%" PRIu64 "\n", p->lost_sideband);
	printf("out_of_order=%" PRIu64 "\n", p->out_of_order);
	printf("other_source_samples=%" PRIu64 "\n", p->src_other);
	printf("callchain_samples=%" PRIu64 "\n", p->chain_samples);
	printf("callchain_bad=%" PRIu64 "\n", p->chain_bad);
	printf("core_counter_bad=%" PRIu64 "\n", p->core_counter_bad);
	printf("unknown_pid_user_samples=%" PRIu64 "\n", p->unknown_pid_user);
	printf("introduced_after_sample=%" PRIu64 "\n", p->introduced_late);
	printf("exec_total=%" PRIu64 "\n", p->exec_total);
	perf_print_stats(s, stdout);
	(void)st;
	{
		struct rusage ru;

		getrusage(RUSAGE_SELF, &ru);
		printf("self_cpu_us=%lld\n",
		       (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
			       ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	}
}

static volatile sig_atomic_t stop;
static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct op_options o;
	struct op_perf_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1000,
		.freq = true,
	};
	struct perf_config pc = { .opts = &o, .events = &attr, .nr_events = 1, .deliver = deliver };
	static struct probe p;
	static struct ext_registry reg;
	struct perf_session *s;
	char err[1024];
	double seconds = 1.0;
	const char *mode, *ended_by = "?";
	int i, ret, ws = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: see the head of perf_probe.c\n");
		return 2;
	}
	mode = argv[1];
	if (!strcmp(mode, "spin"))
		return spin(argc, argv);
	if (!strcmp(mode, "churn"))
		return churn(argc, argv);
	memset(&o, 0, sizeof(o));
	o.proc_root = "/proc";
	o.ring_pages = 64;
	p.hash = 0xcbf29ce484222325ull;
	pc.arg = &p;
	if (!realpath("/proc/self/exe", p.binary))
		return 2;
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--freq") && i + 1 < argc)
			attr.sample_period = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--record") && i + 1 < argc)
			o.record_file = argv[++i];
		else if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--watch") && i + 1 < argc)
			p.watch = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--callchain")) {
			/* what the callgraph plugin's sample hook asks for */
			reg.hooks[reg.nr_hooks].desc.size = sizeof(reg.hooks[0].desc);
			reg.hooks[reg.nr_hooks].desc.name = "probe-cg";
			reg.hooks[reg.nr_hooks].desc.sample_type_extra = PERF_SAMPLE_CALLCHAIN;
			reg.hooks[reg.nr_hooks++].desc.max_stack = 64;
			pc.ext = &reg;
		} else if (!strcmp(argv[i], "--source")) {
			/* an extra event source, as a plugin would register it */
			struct op_perf_attr *a = &reg.sources[reg.nr_sources].desc.attr;

			reg.sources[reg.nr_sources].desc.size = sizeof(reg.sources[0].desc);
			reg.sources[reg.nr_sources++].desc.name = "probe-task-clock";
			a->size = sizeof(*a);
			a->type = PERF_TYPE_SOFTWARE;
			a->config = PERF_COUNT_SW_TASK_CLOCK;
			a->sample_period = 500;
			a->freq = true;
			a->sample_type_extra = PERF_SAMPLE_ADDR;
			pc.ext = &reg;
		} else if (!strcmp(argv[i], "--stall-ms") && i + 1 < argc)
			p.stall_ms = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pages") && i + 1 < argc)
			o.ring_pages = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--")) {
			o.command = &argv[i + 1];
			break;
		} else if (!strcmp(mode, "pid")) {
			o.pids[o.nr_pids++] = (uint32_t)atoi(argv[i]);
			p.watch = o.pids[0];
		} else if (!strcmp(mode, "replay")) {
			o.replay_file = argv[i];
		} else {
			fprintf(stderr, "perf_probe: unknown argument %s\n", argv[i]);
			return 2;
		}
	}
	if (!strcmp(mode, "launch"))
		o.mode = OP_MODE_LAUNCH;
	else if (!strcmp(mode, "pid"))
		o.mode = OP_MODE_PID;
	else if (!strcmp(mode, "system"))
		o.mode = OP_MODE_SYSTEM;
	else if (!strcmp(mode, "replay"))
		o.mode = OP_MODE_REPLAY;
	else
		return 2;

	ret = perf_open(&s, &pc, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "perf_probe: %s\n", err);
		/* the only reason to skip: the kernel forbids perf_event_open */
		return ret == -EACCES || ret == -EPERM || ret == -ENOSYS ? 77 : 1;
	}
	if (o.mode == OP_MODE_LAUNCH)
		p.watch = (uint32_t)perf_child_pid(s);
	signal(SIGALRM, on_alarm);
	if (o.mode == OP_MODE_PID || o.mode == OP_MODE_SYSTEM) {
		struct itimerval it = { .it_value = { (time_t)seconds,
						      (suseconds_t)((seconds - (time_t)seconds) * 1e6) } };

		setitimer(ITIMER_REAL, &it, NULL);
	}
	for (;;) {
		ret = perf_poll(s, 1000);
		if (ret < 0) {
			fprintf(stderr, "perf_probe: perf_poll: %s\n", strerror(-ret));
			return 1;
		}
		if (ret == PERF_POLL_CHILD_EXIT || ret == PERF_POLL_DONE || stop) {
			ended_by = ret == PERF_POLL_CHILD_EXIT ? "targets" :
				   ret == PERF_POLL_DONE ? "done" : "timer";
			break;
		}
	}
	ret = perf_stop(s);
	report(&p, s);
	printf("ended_by=%s\n", ended_by);
	if (perf_child_status(s, &ws))
		printf("child_status=%d\n", WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws));
	perf_close(s);
	return ret ? 1 : 0;
}
