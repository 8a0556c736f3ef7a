/* opcount.c - counter sets on perf_event counting mode: event names to
 * perf_event_attr (built-in software list, then libpfm4), one fd per
 * (event, thread/cpu slot), baselines for reset/preserve, syscall and
 * control-page reads, fasync overflow signals.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "opcount.h"

#ifndef PERF_FLAG_FD_CLOEXEC
#define PERF_FLAG_FD_CLOEXEC (1UL << 3)
#endif

struct oc_event {
	char name[96]; /* as printed */
	char spec[96]; /* as given */
	struct perf_event_attr attr;
	bool hardware;     /* not a software event: ENOENT means "no PMU" */
	bool explicit_plm; /* ":u"/":k" given: never fall back */
	/* OC_SKIP_UNSUPPORTED kept it without counters: why the kernel refused */
	bool unsupported;
	char why[OC_ERRMSG_LEN];
	int ovf_fd;
	bool ovf_oneshot;
};

struct oc_counter {
	int fd;
	int twin_fd; /* inherit_thread twin (OC_CHILDREN), else -1 */
	uint64_t base[3];
	uint64_t twin_base[3];
	void *page; /* mmap'd control page or NULL */
	const char *why_slow;
};

struct oc_slot {
	pid_t pid; /* argument to perf_event_open: tid, 0 (self) or -1 */
	pid_t tid; /* reported tid (-1 for CPU targets) */
	int cpu;
};

struct oc_set {
	struct oc_target target;
	unsigned int flags;
	bool running;
	unsigned int nev;
	struct oc_event ev[OC_MAX_EVENTS];
	unsigned int nslots;
	struct oc_slot *slots;
	struct oc_counter *c[OC_MAX_EVENTS]; /* c[event][slot] */
	long pagesize;
};

/* ------------------------------------------------------------------ */
/* errors */

static const char *const oc_errtext[] = {
	[OC_E_UNKNOWN_EVENT - OC_E_BASE] = "unknown event name",
	[OC_E_UNSUPPORTED - OC_E_BASE] = "event not supported on this machine",
	[OC_E_NO_PERMISSION - OC_E_BASE] = "no permission to count (perf_event_paranoid / ptrace)",
	[OC_E_THREAD_GONE - OC_E_BASE] = "target thread or process has exited",
	[OC_E_NO_CHILDREN - OC_E_BASE] = "set was not opened with OC_CHILDREN",
	[OC_E_TOO_MANY - OC_E_BASE] = "too many events in one set",
	[OC_E_BAD_TARGET - OC_E_BASE] = "invalid target",
	[OC_E_NOT_SINGLE - OC_E_BASE] = "operation needs a set with one thread/cpu slot",
};

const char *oc_strerror(int code)
{
	if (code < 0)
		code = -code;
	if (code == 0)
		return "success";
	if (code > OC_E_BASE && code < OC_E_LAST)
		return oc_errtext[code - OC_E_BASE];
	return strerror(code);
}

static int oc_fail(struct oc_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int oc_fail(struct oc_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

static int oc_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = 99;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 99;
		fclose(f);
	}
	return v;
}

/* ------------------------------------------------------------------ */
/* event names */

struct oc_builtin {
	const char *name;
	const char *alias;
	uint32_t type;
	uint64_t config;
	const char *help;
};

static const struct oc_builtin oc_builtins[] = {
	{ "task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK,
	  "CPU time of the counted tasks, ns" },
	{ "cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK,
	  "CPU clock (per-cpu hrtimer) while counted, ns" },
	{ "context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES,
	  "context switches" },
	{ "cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS,
	  "moves of a task to another CPU" },
	{ "page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS,
	  "page faults (minor + major)" },
	{ "minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN,
	  "page faults served without I/O" },
	{ "major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ,
	  "page faults that needed I/O" },
	{ "alignment-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS,
	  "alignment faults fixed up by the kernel" },
	{ "emulation-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS,
	  "instructions emulated by the kernel" },
	{ "cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES,
	  "CPU cycles (hardware PMU)" },
	{ "instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS,
	  "retired instructions (hardware PMU)" },
	{ "cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES,
	  "last-level cache references (hardware PMU)" },
	{ "cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,
	  "last-level cache misses (hardware PMU)" },
	{ "branches", "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	  "retired branches (hardware PMU)" },
	{ "branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES,
	  "mispredicted branches (hardware PMU)" },
	{ "bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES,
	  "bus cycles (hardware PMU)" },
	{ "ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES,
	  "reference cycles, not scaled by frequency (hardware PMU)" },
};

#define OC_NBUILTIN (sizeof(oc_builtins) / sizeof(oc_builtins[0]))

const char *const *oc_builtin_events(void)
{
	static const char *names[OC_NBUILTIN + 1];

	/* idempotent: every caller writes the same pointers */
	for (unsigned int i = 0; i < OC_NBUILTIN; i++)
		names[i] = oc_builtins[i].name;
	names[OC_NBUILTIN] = NULL;
	return names;
}

const char *oc_builtin_event_help(unsigned int i)
{
	return i < OC_NBUILTIN ? oc_builtins[i].help : NULL;
}

static const struct oc_builtin *oc_builtin_find(const char *name, size_t len)
{
	for (unsigned int i = 0; i < OC_NBUILTIN; i++) {
		const struct oc_builtin *b = &oc_builtins[i];

		if (strlen(b->name) == len && !strncmp(b->name, name, len))
			return b;
		if (b->alias && strlen(b->alias) == len && !strncmp(b->alias, name, len))
			return b;
	}
	return NULL;
}

static pthread_once_t oc_pfm_once = PTHREAD_ONCE_INIT;
static int oc_pfm_status = -1;

static void oc_pfm_init(void)
{
	oc_pfm_status = pfm_initialize();
}

/* Name -> attr (type/config/excludes); counting bits are set by the caller. */
static int oc_event_resolve(struct oc_event *ev, const char *spec, struct oc_error *err)
{
	const struct oc_builtin *b;
	const char *colon;
	size_t len = strlen(spec);
	bool u = false, k = false;

	memset(ev, 0, sizeof(*ev));
	ev->ovf_fd = -1;
	if (len == 0 || len >= sizeof(ev->spec))
		return oc_fail(err, -OC_E_UNKNOWN_EVENT,
			       "event '%s': expected a name of 1..%zu characters; "
			       "see opcount --list",
			       spec, sizeof(ev->spec) - 1);
	strcpy(ev->spec, spec);
	strcpy(ev->name, spec);
	ev->attr.size = sizeof(ev->attr);

	b = oc_builtin_find(spec, len);
	colon = strrchr(spec, ':');
	if (!b && colon && colon[1] && strspn(colon + 1, "uk") == strlen(colon + 1)) {
		b = oc_builtin_find(spec, (size_t)(colon - spec));
		if (b) {
			u = strchr(colon + 1, 'u') != NULL;
			k = strchr(colon + 1, 'k') != NULL;
			ev->explicit_plm = true;
		}
	}
	if (b) {
		ev->attr.type = b->type;
		ev->attr.config = b->config;
		ev->hardware = b->type != PERF_TYPE_SOFTWARE;
		if (ev->explicit_plm) {
			ev->attr.exclude_user = !u;
			ev->attr.exclude_kernel = !k;
			ev->attr.exclude_hv = !k;
		}
		return 0;
	}

	/* catalogue event: libpfm4 knows the hardware model (even when the
	 * kernel has no PMU driver for it, as on this VM) */
	pthread_once(&oc_pfm_once, oc_pfm_init);
	if (oc_pfm_status != PFM_SUCCESS)
		return oc_fail(err, -OC_E_UNKNOWN_EVENT,
			       "event '%s': not a built-in name and libpfm4 failed to "
			       "initialise (%s); use one of the names in opcount --list",
			       spec, pfm_strerror(oc_pfm_status));
	{
		struct perf_event_attr attr;
		pfm_perf_encode_arg_t arg;
		int ret;

		memset(&attr, 0, sizeof(attr));
		memset(&arg, 0, sizeof(arg));
		arg.attr = &attr;
		arg.size = sizeof(arg);
		ret = pfm_get_os_event_encoding(spec, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
		if (ret != PFM_SUCCESS)
			return oc_fail(err, -OC_E_UNKNOWN_EVENT,
				       "event '%s': unknown event (%s): expected a built-in "
				       "name (task-clock, context-switches, cpu-migrations, "
				       "page-faults, minor-faults, major-faults, ...) or a "
				       "libpfm4 catalogue name; see opcount --list",
				       spec, pfm_strerror(ret));
		attr.size = sizeof(attr); /* libpfm4 leaves it 0 */
		ev->attr = attr;
		ev->hardware = attr.type != PERF_TYPE_SOFTWARE;
		/* a privilege modifier in the libpfm string (":u", ":k=1") is
		 * explicit: never fall back; unit masks (":ANY") are not */
		for (const char *m = strchr(spec, ':'); m; m = strchr(m + 1, ':'))
			if ((m[1] == 'u' || m[1] == 'k') &&
			    (m[2] == '\0' || m[2] == ':' || m[2] == '='))
				ev->explicit_plm = true;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* targets and slots */

static int oc_online_cpus(int **cpus)
{
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	char buf[1024];
	int n = 0, cap = 0, *v = NULL;
	char *p, *save = NULL;

	if (!f || !fgets(buf, sizeof(buf), f)) {
		long nc = sysconf(_SC_NPROCESSORS_ONLN);

		if (f)
			fclose(f);
		snprintf(buf, sizeof(buf), "0-%ld", nc > 0 ? nc - 1 : 0);
	} else {
		fclose(f);
	}
	for (p = strtok_r(buf, ",\n", &save); p; p = strtok_r(NULL, ",\n", &save)) {
		int lo, hi;

		if (sscanf(p, "%d-%d", &lo, &hi) != 2) {
			if (sscanf(p, "%d", &lo) != 1)
				continue;
			hi = lo;
		}
		for (int c = lo; c <= hi && c < 65536; c++) {
			if (n == cap) {
				int *nv;

				cap = cap ? cap * 2 : 8;
				nv = realloc(v, cap * sizeof(*v));
				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
			}
			v[n++] = c;
		}
	}
	*cpus = v;
	return n;
}

static int oc_push_slot(struct oc_set *s, unsigned int *cap, pid_t pid, pid_t tid, int cpu)
{
	if (s->nslots == *cap) {
		struct oc_slot *n;

		*cap = *cap ? *cap * 2 : 8;
		n = realloc(s->slots, *cap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->slots = n;
	}
	s->slots[s->nslots++] = (struct oc_slot){ .pid = pid, .tid = tid, .cpu = cpu };
	return 0;
}

/* slots of a CPU target: @list (@nlist CPUs, each online, no repeats) or
 * t->cpu (-1: every online CPU of @cpus) */
static int oc_cpu_slots(struct oc_set *s, unsigned int *cap, const int *cpus, int ncpu,
			const int *list, unsigned int nlist, struct oc_error *err)
{
	const struct oc_target *t = &s->target;
	int ret;

	if (!list) {
		if (t->cpu < -1)
			return oc_fail(err, -OC_E_BAD_TARGET,
				       "cpu %d: expected -1 (all) or a CPU "
				       "number",
				       t->cpu);
		for (int i = 0; i < ncpu; i++) {
			if (t->cpu != -1 && cpus[i] != t->cpu)
				continue;
			ret = oc_push_slot(s, cap, -1, -1, cpus[i]);
			if (ret)
				return ret;
		}
		if (!s->nslots)
			return oc_fail(err, -OC_E_BAD_TARGET,
				       "cpu %d: not online (online CPUs: "
				       "0..%d)",
				       t->cpu, ncpu ? cpus[ncpu - 1] : 0);
		return 0;
	}
	if (!nlist)
		return oc_fail(err, -OC_E_BAD_TARGET, "an empty CPU list");
	for (unsigned int i = 0; i < nlist; i++) {
		bool online = false;

		for (int c = 0; c < ncpu && !online; c++)
			online = cpus[c] == list[i];
		if (!online)
			return oc_fail(err, -OC_E_BAD_TARGET,
				       "cpu %d (item %u of the CPU list): not "
				       "online (online CPUs: 0..%d)",
				       list[i], i + 1, ncpu ? cpus[ncpu - 1] : 0);
		for (unsigned int j = 0; j < i; j++)
			if (list[j] == list[i])
				return oc_fail(err, -OC_E_BAD_TARGET,
					       "cpu %d: given twice in the "
					       "CPU list",
					       list[i]);
		ret = oc_push_slot(s, cap, -1, -1, list[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static int oc_build_slots(struct oc_set *s, const int *list, unsigned int nlist,
			  struct oc_error *err)
{
	const struct oc_target *t = &s->target;
	unsigned int cap = 0;
	int *cpus = NULL, ncpu, ret = 0;
	pid_t *tids = NULL;
	int ntid = 0;

	ncpu = oc_online_cpus(&cpus);
	if (ncpu < 0)
		return oc_fail(err, ncpu, "listing online CPUs: %s", strerror(-ncpu));

	switch (t->kind) {
	case OC_TARGET_CPU:
		ret = oc_cpu_slots(s, &cap, cpus, ncpu, list, nlist, err);
		goto out;
	case OC_TARGET_THREAD:
		if (t->id < 0) {
			ret = oc_fail(err, -OC_E_BAD_TARGET,
				      "tid %d: expected 0 (self) or a thread id", (int)t->id);
			goto out;
		}
		tids = malloc(sizeof(*tids));
		if (!tids) {
			ret = -ENOMEM;
			goto out;
		}
		tids[ntid++] = t->id;
		break;
	case OC_TARGET_PROCESS: {
		pid_t pid = t->id ? t->id : getpid();
		char path[64];
		DIR *d;
		struct dirent *de;
		int tcap = 0;

		if (t->id < 0) {
			ret = oc_fail(err, -OC_E_BAD_TARGET,
				      "pid %d: expected 0 (self) or a process id", (int)t->id);
			goto out;
		}
		snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
		d = opendir(path);
		if (!d) {
			ret = errno == ENOENT ? -OC_E_THREAD_GONE : -errno;
			ret = oc_fail(err, ret, "pid %d: cannot list its threads (%s): %s", (int)pid,
				      path, errno == ENOENT ? "no such process" : strerror(errno));
			goto out;
		}
		while ((de = readdir(d))) {
			char *end;
			long v = strtol(de->d_name, &end, 10);

			if (*end || v <= 0)
				continue;
			if (ntid == tcap) {
				pid_t *n;

				tcap = tcap ? tcap * 2 : 16;
				n = realloc(tids, tcap * sizeof(*n));
				if (!n) {
					closedir(d);
					ret = -ENOMEM;
					goto out;
				}
				tids = n;
			}
			tids[ntid++] = (pid_t)v;
		}
		closedir(d);
		if (!ntid) {
			ret = oc_fail(err, -OC_E_THREAD_GONE, "pid %d: has no threads left",
				      (int)pid);
			goto out;
		}
		break;
	}
	default:
		ret = oc_fail(err, -OC_E_BAD_TARGET,
			      "target kind %d: expected thread, process or cpu", (int)t->kind);
		goto out;
	}

	for (int i = 0; i < ntid; i++) {
		pid_t tid = tids[i] ? tids[i] : (pid_t)syscall(SYS_gettid);

		if (s->flags & OC_PER_CPU) {
			for (int c = 0; c < ncpu; c++) {
				ret = oc_push_slot(s, &cap, tids[i], tid, cpus[c]);
				if (ret)
					goto out;
			}
		} else {
			ret = oc_push_slot(s, &cap, tids[i], tid, -1);
			if (ret)
				goto out;
		}
	}
out:
	free(tids);
	free(cpus);
	return ret;
}

/* ------------------------------------------------------------------ */
/* opening */

static int oc_sys_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

static void oc_counter_close(struct oc_counter *c, long pagesize)
{
	if (c->page)
		munmap(c->page, pagesize);
	if (c->fd >= 0)
		close(c->fd);
	if (c->twin_fd >= 0)
		close(c->twin_fd);
	c->page = NULL;
	c->fd = c->twin_fd = -1;
}

static void oc_counters_free(struct oc_set *s, struct oc_counter *c)
{
	if (!c)
		return;
	for (unsigned int i = 0; i < s->nslots; i++)
		oc_counter_close(&c[i], s->pagesize);
	free(c);
}

static int oc_open_errmsg(struct oc_set *s, struct oc_event *ev, const struct oc_slot *sl, int ret,
			  struct oc_error *err)
{
	char who[64];

	if (sl->pid == -1)
		snprintf(who, sizeof(who), "cpu %d", sl->cpu);
	else
		snprintf(who, sizeof(who), "thread %d", (int)sl->tid);

	switch (ret) {
	case -ENOENT:
	case -EOPNOTSUPP:
	case -ENODEV:
		if (ev->hardware)
			return oc_fail(err, -OC_E_UNSUPPORTED,
				       "event '%s' is not supported on this machine: no hardware "
				       "PMU (the kernel answered %s); use a software event such "
				       "as task-clock or page-faults",
				       ev->spec, strerror(-ret));
		return oc_fail(err, -OC_E_UNSUPPORTED, "event '%s' on %s: kernel refused it (%s)",
			       ev->spec, who, strerror(-ret));
	case -EACCES:
	case -EPERM:
		if (sl->pid == -1)
			return oc_fail(err, -OC_E_NO_PERMISSION,
				       "event '%s' on %s: no permission: counting a whole CPU needs "
				       "CAP_PERFMON (or root) or kernel.perf_event_paranoid <= 0; "
				       "it is %d here: run as root or `sysctl -w "
				       "kernel.perf_event_paranoid=0`",
				       ev->spec, who, oc_paranoid());
		if (oc_paranoid() >= 3)
			return oc_fail(err, -OC_E_NO_PERMISSION,
				       "event '%s' on %s: no permission: kernel.perf_event_paranoid "
				       "is %d, which forbids perf to unprivileged users: run as root, "
				       "grant CAP_PERFMON or `sysctl -w kernel.perf_event_paranoid=2`",
				       ev->spec, who, oc_paranoid());
		return oc_fail(err, -OC_E_NO_PERMISSION,
			       "event '%s' on %s: no permission: kernel.perf_event_paranoid is %d "
			       "(<= 2 lets a user count only tasks it may ptrace); counting this "
			       "task needs the same user id (and kernel.yama.ptrace_scope "
			       "allowing it), CAP_PERFMON or root",
			       ev->spec, who, oc_paranoid());
	case -ESRCH:
		return oc_fail(err, -OC_E_THREAD_GONE,
			       "event '%s': %s: no such thread (it has "
			       "exited or never existed)",
			       ev->spec, who);
	case -EMFILE:
	case -ENFILE:
		return oc_fail(err, ret,
			       "event '%s' on %s: out of file descriptors (%u slots x "
			       "%u events): raise `ulimit -n`",
			       ev->spec, who, s->nslots, s->nev);
	default:
		return oc_fail(err, ret, "event '%s' on %s: perf_event_open failed: %s", ev->spec,
			       who, strerror(-ret));
	}
}

static void oc_counter_map(struct oc_set *s, struct oc_counter *c, const struct oc_event *ev)
{
	void *p;

	c->page = NULL;
	if (s->nslots != 1) {
		c->why_slow = "set spans several threads/CPUs: the value is a sum of read()s";
		return;
	}
	if (ev->attr.inherit) {
		c->why_slow = "inherited counter: the kernel refuses to mmap inherited per-task "
			      "counters, so read() is the only way to get the children's sums";
		return;
	}
	if ((s->slots[0].pid != 0 && s->slots[0].tid != (pid_t)syscall(SYS_gettid)) ||
	    s->slots[0].cpu != -1) {
		/* rdpmc reads the counter of the CPU we run on: only valid when
		 * the counted thread is the reading thread */
		c->why_slow = "counter of another thread or bound to a CPU: the control page "
			      "is only usable for self-monitoring";
		return;
	}
	p = mmap(NULL, s->pagesize, PROT_READ, MAP_SHARED, c->fd, 0);
	if (p == MAP_FAILED) {
		c->why_slow = "mmap of the control page failed";
		return;
	}
	c->page = p;
	c->why_slow = "no hardware counter index in the control page (software event or "
		      "no rdpmc permission): its offset is only a snapshot taken when the "
		      "event is scheduled in or out, so read() is used";
}

/* Open one event on every slot into c[]; applies the user-only fallback. */
static int oc_open_event(struct oc_set *s, struct oc_event *ev, struct oc_counter *c,
			 struct oc_error *err)
{
	const struct oc_target *t = &s->target;
	bool task = t->kind != OC_TARGET_CPU;
	unsigned int opened = 0, bad = 0;
	int ret = 0;

	for (unsigned int i = 0; i < s->nslots; i++)
		c[i] = (struct oc_counter){ .fd = -1, .twin_fd = -1 };

	ev->attr.size = sizeof(ev->attr);
	ev->attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	ev->attr.disabled = 1;
	ev->attr.sample_period = 0;
	ev->attr.enable_on_exec = !!(s->flags & OC_ENABLE_ON_EXEC);
	ev->attr.inherit = task && (s->flags & (OC_INHERIT | OC_CHILDREN | OC_INHERIT_THREADS));
	ev->attr.inherit_thread =
		task && (s->flags & OC_INHERIT_THREADS) && !(s->flags & (OC_INHERIT | OC_CHILDREN));

retry:
	for (unsigned int i = 0; i < s->nslots; i++) {
		struct oc_slot *sl = &s->slots[i];

		bad = i;
		ret = oc_sys_open(&ev->attr, sl->pid, sl->cpu);
		if (ret == -ESRCH && t->kind == OC_TARGET_PROCESS) {
			/* a thread of the process exited while we listed them */
			continue;
		}
		if ((ret == -EACCES || ret == -EPERM) && !ev->explicit_plm &&
		    !ev->attr.exclude_kernel) {
			/* unprivileged with perf_event_paranoid >= 2: count user
			 * space only, as perf stat does, and say so in the name */
			for (unsigned int j = 0; j < i; j++)
				oc_counter_close(&c[j], s->pagesize);
			ev->attr.exclude_kernel = 1;
			ev->attr.exclude_hv = 1;
			if (strlen(ev->name) + 2 < sizeof(ev->name))
				strcat(ev->name, ":u");
			opened = 0;
			goto retry;
		}
		if (ret < 0)
			goto fail;
		c[i].fd = ret;
		opened++;
		if (s->flags & OC_CHILDREN && task) {
			struct perf_event_attr twin = ev->attr;

			twin.inherit = 1;
			twin.inherit_thread = 1;
			ret = oc_sys_open(&twin, sl->pid, sl->cpu);
			if (ret < 0)
				goto fail;
			c[i].twin_fd = ret;
		}
		oc_counter_map(s, &c[i], ev);
	}
	if (!opened) {
		ret = -ESRCH;
		bad = 0;
		goto fail;
	}
	return 0;
fail:
	ret = oc_open_errmsg(s, ev, &s->slots[bad], ret, err);
	for (unsigned int i = 0; i < s->nslots; i++)
		oc_counter_close(&c[i], s->pagesize);
	return ret;
}

static int oc_counter_ioctl(struct oc_counter *c, unsigned long req)
{
	int ret = 0;

	if (c->fd >= 0 && ioctl(c->fd, req, 0) < 0)
		ret = -errno;
	if (c->twin_fd >= 0 && ioctl(c->twin_fd, req, 0) < 0 && !ret)
		ret = -errno;
	return ret;
}

static int oc_parse_events(const char *events, char names[][96], unsigned int *n,
			   struct oc_error *err)
{
	const char *p = events;

	*n = 0;
	if (!events || !*events)
		return oc_fail(err, -OC_E_UNKNOWN_EVENT,
			       "event list is empty: expected comma-separated names such as "
			       "task-clock,page-faults");
	while (*p) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		while (len && (*p == ' ' || *p == '\t')) {
			p++;
			len--;
		}
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			len--;
		if (!len || len >= 96)
			return oc_fail(err, -OC_E_UNKNOWN_EVENT,
				       "event list '%s': expected comma-separated names of "
				       "1..95 characters, found an %s one",
				       events, len ? "over-long" : "empty");
		if (*n == OC_MAX_EVENTS)
			return oc_fail(err, -OC_E_TOO_MANY, "event list '%s': more than %d events",
				       events, OC_MAX_EVENTS);
		memcpy(names[*n], p, len);
		names[*n][len] = '\0';
		(*n)++;
		if (!e)
			break;
		p = e + 1;
		if (!*p)
			return oc_fail(err, -OC_E_UNKNOWN_EVENT,
				       "event list '%s': ends with a comma", events);
	}
	return 0;
}

static int oc_open_slots(struct oc_set **out, const struct oc_target *target, const int *cpus,
			 unsigned int ncpus, const char *events, unsigned int flags,
			 struct oc_error *err)
{
	struct oc_set *s;
	int ret;

	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
	if (!out || !target)
		return oc_fail(err, -EINVAL, "oc_open: NULL argument");
	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return oc_fail(err, -ENOMEM, "out of memory");
	s->target = *target;
	s->flags = flags;
	s->pagesize = sysconf(_SC_PAGESIZE);
	ret = oc_build_slots(s, cpus, ncpus, err);
	if (ret)
		goto fail;
	ret = oc_reconfigure(s, events, 0, err);
	if (ret)
		goto fail;
	if (flags & OC_START) {
		ret = oc_start(s);
		if (ret) {
			oc_fail(err, ret, "starting the counters: %s", strerror(-ret));
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	oc_close(s);
	return ret;
}

int oc_open(struct oc_set **out, const struct oc_target *target, const char *events,
	    unsigned int flags, struct oc_error *err)
{
	return oc_open_slots(out, target, NULL, 0, events, flags, err);
}

int oc_open_cpus(struct oc_set **out, const int *cpus, unsigned int ncpus, const char *events,
		 unsigned int flags, struct oc_error *err)
{
	const struct oc_target t = { .kind = OC_TARGET_CPU, .cpu = -1 };

	if (!cpus && ncpus) {
		if (err) {
			err->code = 0;
			err->msg[0] = '\0';
		}
		if (out)
			*out = NULL;
		return oc_fail(err, -EINVAL, "oc_open_cpus: NULL CPU list");
	}
	return oc_open_slots(out, &t, cpus ? cpus : &t.cpu, ncpus, events, flags, err);
}

void oc_close(struct oc_set *s)
{
	if (!s)
		return;
	for (unsigned int e = 0; e < s->nev; e++) {
		oc_overflow_disarm(s, e);
		oc_counters_free(s, s->c[e]);
	}
	free(s->slots);
	free(s);
}

int oc_reconfigure(struct oc_set *s, const char *events, unsigned int flags, struct oc_error *err)
{
	char names[OC_MAX_EVENTS][96];
	struct oc_event nev[OC_MAX_EVENTS];
	struct oc_counter *nc[OC_MAX_EVENTS] = { NULL };
	struct oc_error why;
	int from[OC_MAX_EVENTS];
	bool kept[OC_MAX_EVENTS] = { false };
	unsigned int n;
	int ret;

	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
	ret = oc_parse_events(events, names, &n, err);
	if (ret)
		return ret;

	/* resolve all names first: a bad name changes nothing */
	for (unsigned int i = 0; i < n; i++) {
		from[i] = -1;
		for (unsigned int o = 0; o < s->nev; o++) {
			if (!kept[o] && !strcmp(s->ev[o].spec, names[i])) {
				from[i] = (int)o;
				kept[o] = true;
				break;
			}
		}
		if (from[i] < 0) {
			ret = oc_event_resolve(&nev[i], names[i], err);
			if (ret)
				return ret;
		} else {
			nev[i] = s->ev[from[i]];
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		if (from[i] >= 0)
			continue;
		nc[i] = calloc(s->nslots, sizeof(*nc[i]));
		if (!nc[i]) {
			ret = oc_fail(err, -ENOMEM, "out of memory");
			goto fail;
		}
		ret = oc_open_event(s, &nev[i], nc[i], &why);
		if (ret == -OC_E_UNSUPPORTED && (s->flags & OC_SKIP_UNSUPPORTED)) {
			/* as perf stat: the event stays, counts nothing, says why
			 * (its counters are closed: fd -1 reads zero) */
			nev[i].unsupported = true;
			snprintf(nev[i].why, sizeof(nev[i].why), "%s", why.msg);
			continue;
		}
		if (ret) {
			oc_fail(err, ret, "%s", why.msg);
			free(nc[i]);
			nc[i] = NULL;
			goto fail;
		}
		if (s->running) {
			for (unsigned int j = 0; j < s->nslots; j++)
				oc_counter_ioctl(&nc[i][j], PERF_EVENT_IOC_ENABLE);
		}
	}
	/* commit: drop the events not kept, move the others */
	for (unsigned int o = 0; o < s->nev; o++) {
		if (!kept[o]) {
			oc_overflow_disarm(s, o);
			oc_counters_free(s, s->c[o]);
		}
	}
	for (unsigned int i = 0; i < n; i++) {
		if (from[i] >= 0)
			nc[i] = s->c[from[i]];
	}
	for (unsigned int i = 0; i < n; i++) {
		s->ev[i] = nev[i];
		s->c[i] = nc[i];
	}
	for (unsigned int i = n; i < OC_MAX_EVENTS; i++)
		s->c[i] = NULL;
	s->nev = n;
	if (!(flags & OC_PRESERVE) && n)
		oc_reset(s);
	return 0;
fail:
	for (unsigned int i = 0; i < n; i++) {
		if (from[i] < 0 && nc[i])
			oc_counters_free(s, nc[i]);
	}
	return ret;
}

static int oc_for_all(struct oc_set *s, unsigned long req)
{
	int ret = 0, r;

	for (unsigned int e = 0; e < s->nev; e++)
		for (unsigned int i = 0; i < s->nslots; i++) {
			r = oc_counter_ioctl(&s->c[e][i], req);
			if (r && !ret)
				ret = r;
		}
	return ret;
}

int oc_start(struct oc_set *s)
{
	int ret = oc_for_all(s, PERF_EVENT_IOC_ENABLE);

	if (!ret)
		s->running = true;
	return ret;
}

int oc_stop(struct oc_set *s)
{
	int ret = oc_for_all(s, PERF_EVENT_IOC_DISABLE);

	if (!ret)
		s->running = false;
	return ret;
}

/* ------------------------------------------------------------------ */
/* reading */

static int oc_read_fd(int fd, uint64_t v[3])
{
	ssize_t n;

	do {
		n = read(fd, v, 3 * sizeof(uint64_t));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n != 3 * sizeof(uint64_t))
		return -EIO;
	return 0;
}

static void oc_sub(uint64_t v[3], const uint64_t base[3])
{
	for (int i = 0; i < 3; i++)
		v[i] = v[i] >= base[i] ? v[i] - base[i] : 0;
}

int oc_reset(struct oc_set *s)
{
	for (unsigned int e = 0; e < s->nev; e++)
		for (unsigned int i = 0; i < s->nslots; i++) {
			struct oc_counter *c = &s->c[e][i];
			int ret;

			if (c->fd < 0)
				continue;
			ret = oc_read_fd(c->fd, c->base);
			if (ret)
				return ret;
			if (c->twin_fd >= 0) {
				ret = oc_read_fd(c->twin_fd, c->twin_base);
				if (ret)
					return ret;
			}
		}
	return 0;
}

void oc_value_scale(struct oc_value *v)
{
	if (v->enabled == 0) {
		v->percent = 100.0;
		v->scaled = v->count;
		return;
	}
	v->percent = 100.0 * (double)v->running / (double)v->enabled;
	if (v->running == 0)
		v->scaled = 0;
	else if (v->running >= v->enabled)
		v->scaled = v->count;
	else
		v->scaled =
			(uint64_t)((double)v->count * (double)v->enabled / (double)v->running + 0.5);
	if (v->percent > 100.0)
		v->percent = 100.0;
}

static int oc_read_counter(const struct oc_counter *c, enum oc_view view, uint64_t out[3])
{
	uint64_t own[3], all[3];
	int ret;

	if (c->fd < 0) {
		/* a thread of the process exited before we could open it */
		memset(out, 0, 3 * sizeof(uint64_t));
		return 0;
	}

	if (view == OC_VIEW_ALL || c->twin_fd < 0) {
		if (view != OC_VIEW_ALL && c->twin_fd < 0)
			return -OC_E_NO_CHILDREN;
		ret = oc_read_fd(c->fd, out);
		if (!ret)
			oc_sub(out, c->base);
		return ret;
	}
	/* own first: children = all - own never goes below the truth */
	ret = oc_read_fd(c->twin_fd, own);
	if (ret)
		return ret;
	oc_sub(own, c->twin_base);
	if (view == OC_VIEW_OWN) {
		memcpy(out, own, sizeof(own));
		return 0;
	}
	ret = oc_read_fd(c->fd, all);
	if (ret)
		return ret;
	oc_sub(all, c->base);
	out[0] = all[0] >= own[0] ? all[0] - own[0] : 0;
	out[1] = all[1];
	out[2] = all[2];
	return 0;
}

/* A task counter bound to one CPU (OC_PER_CPU) is enabled whenever the task
 * runs and running only while it runs on that CPU: running < enabled there
 * is placement, not multiplexing, and must not be scaled. */
static void oc_fix_placement(const struct oc_set *s, uint64_t v[3])
{
	if (s->target.kind != OC_TARGET_CPU && (s->flags & OC_PER_CPU))
		v[1] = v[2];
}

int oc_read_slot(struct oc_set *s, unsigned int slot, enum oc_view view, struct oc_value *vals)
{
	if (slot >= s->nslots)
		return -EINVAL;
	if (view != OC_VIEW_ALL && !(s->flags & OC_CHILDREN && s->target.kind != OC_TARGET_CPU))
		return -OC_E_NO_CHILDREN;
	for (unsigned int e = 0; e < s->nev; e++) {
		uint64_t v[3];
		int ret = oc_read_counter(&s->c[e][slot], view, v);

		if (ret)
			return ret;
		oc_fix_placement(s, v);
		vals[e] = (struct oc_value){ .count = v[0], .enabled = v[1], .running = v[2] };
		oc_value_scale(&vals[e]);
	}
	return 0;
}

int oc_read(struct oc_set *s, enum oc_view view, struct oc_value *vals)
{
	if (view != OC_VIEW_ALL && !(s->flags & OC_CHILDREN && s->target.kind != OC_TARGET_CPU))
		return -OC_E_NO_CHILDREN;
	for (unsigned int e = 0; e < s->nev; e++) {
		struct oc_value sum = { 0 };

		/* sum the slots; scale each slot by its own ratio first */
		for (unsigned int i = 0; i < s->nslots; i++) {
			uint64_t v[3];
			struct oc_value one;
			int ret = oc_read_counter(&s->c[e][i], view, v);

			if (ret)
				return ret;
			oc_fix_placement(s, v);
			one = (struct oc_value){ .count = v[0], .enabled = v[1], .running = v[2] };
			oc_value_scale(&one);
			sum.count += one.count;
			sum.scaled += one.scaled;
			sum.enabled += one.enabled;
			sum.running += one.running;
		}
		vals[e] = sum;
		if (sum.enabled)
			vals[e].percent = 100.0 * (double)sum.running / (double)sum.enabled;
		else
			vals[e].percent = 100.0;
		if (vals[e].percent > 100.0)
			vals[e].percent = 100.0;
	}
	return 0;
}

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t oc_rdpmc(uint32_t counter)
{
	uint32_t lo, hi;

	__asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return ((uint64_t)hi << 32) | lo;
}
#define OC_HAVE_RDPMC 1
#else
#define OC_HAVE_RDPMC 0
#endif

#define oc_barrier() __asm__ volatile("" ::: "memory")

/* seqlock read of the control page; false when it has no live count */
static bool oc_page_count(const volatile struct perf_event_mmap_page *pc, uint64_t *count)
{
#if OC_HAVE_RDPMC
	uint32_t seq, idx;
	uint16_t width;
	int64_t offset, pmc;

	do {
		seq = pc->lock;
		oc_barrier();
		idx = pc->index;
		offset = pc->offset;
		if (!pc->cap_user_rdpmc || !idx)
			return false;
		width = pc->pmc_width;
		pmc = (int64_t)oc_rdpmc(idx - 1);
		if (width && width < 64) {
			pmc = (int64_t)((uint64_t)pmc << (64 - width));
			pmc >>= 64 - width;
		}
		oc_barrier();
	} while (pc->lock != seq);
	*count = (uint64_t)(offset + pmc);
	return true;
#else
	(void)pc;
	(void)count;
	return false;
#endif
}

int oc_read_fast(struct oc_set *s, unsigned int event, uint64_t *count)
{
	struct oc_counter *c;
	uint64_t v[3];
	int ret;

	if (event >= s->nev)
		return -EINVAL;
	if (s->nslots != 1)
		return -OC_E_NOT_SINGLE;
	if (s->ev[event].unsupported)
		return -OC_E_UNSUPPORTED;
	c = &s->c[event][0];
	if (c->page && oc_page_count(c->page, count)) {
		*count = *count >= c->base[0] ? *count - c->base[0] : 0;
		return 0;
	}
	ret = oc_read_fd(c->fd, v);
	if (ret)
		return ret;
	*count = v[0] >= c->base[0] ? v[0] - c->base[0] : 0;
	return 0;
}

enum oc_fast_path oc_fast_path(const struct oc_set *s, unsigned int event, const char **reason)
{
	const struct oc_counter *c;
	const volatile struct perf_event_mmap_page *pc;

	if (reason)
		*reason = "no such event in the set";
	if (event >= s->nev)
		return OC_FAST_SYSCALL;
	if (s->nslots != 1) {
		if (reason)
			*reason = "set spans several threads/CPUs";
		return OC_FAST_SYSCALL;
	}
	if (s->ev[event].unsupported) {
		if (reason)
			*reason = "event not supported on this machine: nothing to read";
		return OC_FAST_SYSCALL;
	}
	c = &s->c[event][0];
	if (reason)
		*reason = c->why_slow;
	pc = c->page;
	if (pc && OC_HAVE_RDPMC && pc->cap_user_rdpmc && pc->index) {
		if (reason)
			*reason = "rdpmc on the hardware counter published in the control page";
		return OC_FAST_RDPMC;
	}
	return OC_FAST_SYSCALL;
}

/* ------------------------------------------------------------------ */
/* overflow signals */

int oc_overflow_arm(struct oc_set *s, unsigned int event, uint64_t period, int signo, bool oneshot,
		    struct oc_error *err)
{
	struct oc_event *ev;
	struct perf_event_attr attr;
	struct f_owner_ex owner;
	const struct oc_slot *sl;
	int fd, ret;

	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
	if (event >= s->nev)
		return oc_fail(err, -EINVAL, "overflow: event index %u, the set has %u", event,
			       s->nev);
	if (s->nslots != 1 || s->target.kind == OC_TARGET_CPU)
		return oc_fail(err, -OC_E_NOT_SINGLE,
			       "overflow: needs a set on one thread (found %u slots%s)", s->nslots,
			       s->target.kind == OC_TARGET_CPU ? ", cpu target" : "");
	if (period == 0)
		return oc_fail(err, -EINVAL, "overflow: period must be >= 1");
	if (signo <= 0 || signo >= NSIG)
		return oc_fail(err, -EINVAL, "overflow: signal %d out of range", signo);
	ev = &s->ev[event];
	if (ev->unsupported)
		return oc_fail(err, -OC_E_UNSUPPORTED, "overflow: %s", ev->why);
	oc_overflow_disarm(s, event);
	sl = &s->slots[0];
	attr = ev->attr;
	attr.read_format = 0;
	attr.inherit = 0;
	attr.inherit_thread = 0;
	attr.enable_on_exec = 0;
	attr.disabled = 1;
	attr.sample_period = period;
	attr.freq = 0;
	attr.sample_type = 0;
	attr.wakeup_events = 1;
	fd = oc_sys_open(&attr, sl->pid, sl->cpu);
	if (fd < 0)
		return oc_open_errmsg(s, ev, sl, fd, err);
	owner.type = F_OWNER_TID;
	owner.pid = sl->tid;
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC) < 0 ||
	    fcntl(fd, F_SETSIG, signo) < 0 || fcntl(fd, F_SETOWN_EX, &owner) < 0) {
		ret = -errno;
		close(fd);
		return oc_fail(err, ret, "overflow: setting up signal %d for thread %d: %s", signo,
			       (int)sl->tid, strerror(-ret));
	}
	ev->ovf_fd = fd;
	ev->ovf_oneshot = oneshot;
	ret = ioctl(fd, oneshot ? PERF_EVENT_IOC_REFRESH : PERF_EVENT_IOC_ENABLE, oneshot ? 1 : 0);
	if (ret < 0) {
		ret = -errno;
		oc_overflow_disarm(s, event);
		return oc_fail(err, ret, "overflow: enabling: %s", strerror(-ret));
	}
	return 0;
}

int oc_overflow_fd(const struct oc_set *s, unsigned int event)
{
	return event < s->nev ? s->ev[event].ovf_fd : -1;
}

int oc_overflow_resume(struct oc_set *s, unsigned int event)
{
	int fd = oc_overflow_fd(s, event);

	if (fd < 0)
		return -EINVAL;
	if (ioctl(fd, s->ev[event].ovf_oneshot ? PERF_EVENT_IOC_REFRESH : PERF_EVENT_IOC_ENABLE,
		  s->ev[event].ovf_oneshot ? 1 : 0) < 0)
		return -errno;
	return 0;
}

int oc_overflow_disarm(struct oc_set *s, unsigned int event)
{
	if (event >= s->nev || s->ev[event].ovf_fd < 0)
		return 0;
	ioctl(s->ev[event].ovf_fd, PERF_EVENT_IOC_DISABLE, 0);
	close(s->ev[event].ovf_fd);
	s->ev[event].ovf_fd = -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* accessors and formatting */

unsigned int oc_nevents(const struct oc_set *s)
{
	return s->nev;
}

const char *oc_event_name(const struct oc_set *s, unsigned int i)
{
	return i < s->nev ? s->ev[i].name : NULL;
}

bool oc_event_supported(const struct oc_set *s, unsigned int i, const char **why)
{
	bool ok = i < s->nev && !s->ev[i].unsupported;

	if (why)
		*why = i >= s->nev ? "no such event in the set" : s->ev[i].why;
	return ok;
}

unsigned int oc_nslots(const struct oc_set *s)
{
	return s->nslots;
}

pid_t oc_slot_tid(const struct oc_set *s, unsigned int slot)
{
	return slot < s->nslots ? s->slots[slot].tid : -1;
}

int oc_slot_cpu(const struct oc_set *s, unsigned int slot)
{
	return slot < s->nslots ? s->slots[slot].cpu : -1;
}

char *oc_format_count(uint64_t n, char *buf, size_t len)
{
	char tmp[32];
	int d = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)n);
	size_t o = 0;

	if (!len)
		return buf;
	for (int i = 0; i < d && o + 1 < len; i++) {
		if (i && (d - i) % 3 == 0) {
			buf[o++] = ',';
			if (o + 1 >= len)
				break;
		}
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}
