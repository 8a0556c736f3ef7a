/*
 * perf_open.c - opening the sample path: the plan (events of the model and
 * the plugins, their attrs), one descriptor per event, CPU and task with a
 * ring per CPU, the --pid threads, and the start-up /proc synthesis.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "ext.h"
#include "perf_int.h"
#include "proc_synth.h"

#define PERF_DEFAULT_RING_PAGES 128
#define PERF_MAX_CPUS 1024

struct open_plan {
	struct op_perf_attr attr[PDEC_MAX_EVENTS];
	uint64_t sample_type[PDEC_MAX_EVENTS];
	uint32_t max_stack;
	unsigned nr;
	int cpus[PERF_MAX_CPUS];
	int nr_cpus;
	size_t pages;
	size_t page_size;
	enum op_mode mode;
	int *cpu_ring; /* ring index per cpu slot, -1 before the first fd */
};

static int perf_open_online_cpus(int *cpus, int max)
{
	char buf[4096], *p = buf;
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int n = 0;

	if (f && fgets(buf, sizeof(buf), f)) {
		while (*p && *p != '\n') {
			char *e;
			long a = strtol(p, &e, 10), b = a;

			if (e == p)
				break;
			if (*e == '-')
				b = strtol(e + 1, &e, 10);
			for (; a <= b && n < max; a++)
				cpus[n++] = (int)a;
			p = *e == ',' ? e + 1 : e;
		}
	}
	if (f)
		fclose(f);
	if (n == 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		for (n = 0; n < c && n < max; n++)
			cpus[n] = n;
	}
	return n;
}

static void perf_open_fill_attr(struct perf_session *s, const struct open_plan *pl, unsigned e,
				struct perf_event_attr *a)
{
	const struct op_perf_attr *o = &pl->attr[e];

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = o->type;
	a->config = o->config;
	a->config1 = o->config1;
	a->config2 = o->config2;
	if (o->freq) {
		a->freq = 1;
		a->sample_freq = o->sample_period;
	} else {
		a->sample_period = o->sample_period;
	}
	a->exclude_user = o->exclude_user;
	a->exclude_kernel = o->exclude_kernel;
	a->exclude_hv = o->exclude_hv;
	a->precise_ip = o->precise_ip & 3;
	a->sample_type = pl->sample_type[e];
	a->read_format = PERF_FORMAT_ID | (s->fmt_lost ? PERF_FORMAT_LOST : 0);
	a->disabled = 1;
	a->inherit = pl->mode != OP_MODE_SYSTEM;
	a->enable_on_exec = pl->mode == OP_MODE_LAUNCH;
	a->sample_id_all = 1;
	if (s->clock_ok) {
		a->use_clockid = 1;
		a->clockid = CLOCK_MONOTONIC;
	}
	if ((a->sample_type & PERF_SAMPLE_CALLCHAIN) && pl->max_stack)
		a->sample_max_stack = (uint16_t)(pl->max_stack > 65535 ? 65535 : pl->max_stack);
}

/*
 * The side-band event: a software dummy that never samples and writes the
 * mmap/comm/fork/exit/ksymbol records into the cpu's ring, so that each
 * event's PERF_FORMAT_LOST count (kept per event by the kernel) tells
 * dropped samples from dropped side-band records. Same trailer layout,
 * read format, clock, inheritance and exclusions as the first event.
 */
static void perf_open_fill_sideband_attr(struct perf_session *s, const struct open_plan *pl,
					 struct perf_event_attr *a)
{
	perf_open_fill_attr(s, pl, 0, a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	a->config1 = 0;
	a->config2 = 0;
	a->freq = 0;
	a->sample_period = 0;
	a->precise_ip = 0;
}

static int perf_open_syscall(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int perf_open_add_fd(struct perf_session *s, int fd, int ring, enum perf_fd_role role)
{
	if (s->nr_fds == s->cap_fds) {
		size_t cap = s->cap_fds ? s->cap_fds * 2 : 64;
		struct perf_fd *n = realloc(s->fds, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->fds = n;
		s->cap_fds = cap;
	}
	s->fds[s->nr_fds].fd = fd;
	s->fds[s->nr_fds].ring = ring;
	s->fds[s->nr_fds].role = role;
	s->fds[s->nr_fds].lost_seen = 0;
	s->nr_fds++;
	s->st.fds++;
	return 0;
}

int perf_paranoid(void)
{
	char v[32];
	int level = PERF_PARANOID_UNKNOWN;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");

	if (f) {
		if (fgets(v, sizeof(v), f))
			level = atoi(v);
		fclose(f);
	}
	return level;
}

static const char *perf_open_paranoid_hint(char *buf, size_t len)
{
	char v[32] = "?";
	int level = perf_paranoid();

	if (level != PERF_PARANOID_UNKNOWN)
		snprintf(v, sizeof(v), "%d", level);
	snprintf(buf, len,
		 "perf_event_paranoid is %s; run oprofiled as root (CAP_PERFMON), lower /proc/sys/kernel/perf_event_paranoid, or (paranoid 2) profile one command in user mode only (EVENT:count:um:0:1)",
		 v);
	return buf;
}

/* Open every event on every cpu for task @pid (-1: all tasks). */
static int perf_open_target(struct perf_session *s, struct open_plan *pl, pid_t pid,
			    bool may_vanish, char *err, size_t err_len)
{
	int c;
	unsigned k;

	for (c = 0; c < pl->nr_cpus; c++) {
		/* k 0 is the side-band dummy (if used), opened first: it owns the ring */
		for (k = s->sb_event ? 0 : 1; k <= pl->nr; k++) {
			struct perf_event_attr a;
			bool owner = pl->cpu_ring[c] < 0, sb = k == 0;
			unsigned e = sb ? 0 : k - 1;
			int fd, ring, ret;
			uint64_t id;

			if (sb)
				perf_open_fill_sideband_attr(s, pl, &a);
			else
				perf_open_fill_attr(s, pl, e, &a);
			/* one side-band event per (task, cpu) */
			if (sb || (e == 0 && !s->sb_event)) {
				a.mmap = 1;
				a.mmap2 = 1;
				a.comm = 1;
				a.comm_exec = 1;
				a.task = 1;
				a.ksymbol = 1;
			}
			if (owner) {
				a.watermark = 1;
				a.wakeup_watermark = (uint32_t)(pl->pages * pl->page_size / 2);
			}
			fd = perf_open_syscall(&a, pid, pl->cpus[c]);
			if (fd < 0 && errno == EINVAL && (s->fmt_lost || s->clock_ok) &&
			    s->nr_fds == 0) {
				/*
				 * Only the very first open probes the kernel: < 6.0 has
				 * no PERF_FORMAT_LOST, very old ones no clockid. A
				 * downgrade is kept only if it makes the open work.
				 */
				struct perf_event_attr b = a;

				b.read_format &= ~(uint64_t)PERF_FORMAT_LOST;
				fd = perf_open_syscall(&b, pid, pl->cpus[c]);
				if (fd >= 0) {
					s->fmt_lost = false;
					perf_log(s,
						 "perf_event_open: PERF_FORMAT_LOST refused (kernel < 6.0?): lost counts come from LOST records only");
				} else if (errno == EINVAL) {
					b.use_clockid = 0;
					b.clockid = 0;
					fd = perf_open_syscall(&b, pid, pl->cpus[c]);
					if (fd >= 0) {
						s->fmt_lost = false;
						s->clock_ok = false;
						perf_log(s,
							 "perf_event_open: PERF_FORMAT_LOST and clockid refused (old kernel): merge watermark uses ring times only");
					} else {
						errno = EINVAL;
					}
				}
				if (fd >= 0)
					a = b;
			}
			if (fd < 0 && sb && s->nr_fds == 0 &&
			    (errno == EINVAL || errno == ENOENT || errno == EOPNOTSUPP)) {
				/* no dummy event (old kernel): the first event carries side-band */
				perf_log(s,
					 "perf_event_open: no dummy software event (%s): side-band records come with the samples, their losses cannot be told apart",
					 strerror(errno));
				s->sb_event = false;
				continue;
			}
			if (fd < 0) {
				char hint[300], who[32];
				int en = errno;

				if (en == ESRCH && may_vanish)
					return -ESRCH;
				if (pid < 0)
					snprintf(who, sizeof(who), "all tasks");
				else
					snprintf(who, sizeof(who), "pid %d", (int)pid);
				snprintf(err, err_len,
					 "perf_event_open(type %u config %#llx, %s, cpu %d) failed: %s%s%s",
					 a.type, (unsigned long long)a.config, who, pl->cpus[c],
					 strerror(en), en == EACCES || en == EPERM ? " - " : "",
					 en == EACCES || en == EPERM ?
						 perf_open_paranoid_hint(hint, sizeof(hint)) :
					 en == ESRCH ?
						 " - the process does not exist (any more)" :
					 en == ENOENT || en == EOPNOTSUPP ?
						 " - this kernel/CPU does not offer the event" :
					 en == EMFILE ?
						 " - one descriptor per event, CPU and thread: raise the open-files limit (ulimit -n)" :
					 en == EINVAL && a.freq ?
						 " - is the frequency above /proc/sys/kernel/perf_event_max_sample_rate? (the kernel lowers it when sampling interrupts take long)" :
						 "");
				return -en;
			}
			if (owner) {
				size_t len = (1 + pl->pages) * pl->page_size;
				void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

				if (m == MAP_FAILED) {
					int en = errno;

					snprintf(err, err_len,
						 "mmap of a %zu-page perf ring on cpu %d failed: %s - lower --ring-pages or raise /proc/sys/kernel/perf_event_mlock_kb",
						 pl->pages, pl->cpus[c], strerror(en));
					close(fd);
					return -en;
				}
				ring = perf_add_ring(s, m, len, fd, pl->page_size,
						     pl->pages * pl->page_size);
				if (ring < 0) {
					munmap(m, len);
					close(fd);
					snprintf(err, err_len, "perf ring on cpu %d: %s",
						 pl->cpus[c], strerror(-ring));
					return ring;
				}
				pl->cpu_ring[c] = ring;
			} else {
				ring = pl->cpu_ring[c];
				if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, s->rings[ring].fd)) {
					int en = errno;

					snprintf(err, err_len,
						 "PERF_EVENT_IOC_SET_OUTPUT on cpu %d failed: %s",
						 pl->cpus[c], strerror(en));
					close(fd);
					return -en;
				}
			}
			ret = perf_open_add_fd(s, fd, ring,
					       sb                     ? PERF_FD_SIDEBAND :
					       e == 0 && !s->sb_event ? PERF_FD_BOTH :
									PERF_FD_SAMPLES);
			if (ret) {
				close(fd);
				return ret;
			}
			if (sb) /* never samples: its id maps to no event kind */
				continue;
			if (ioctl(fd, PERF_EVENT_IOC_ID, &id)) {
				int en = errno;

				snprintf(err, err_len, "PERF_EVENT_IOC_ID failed: %s", strerror(en));
				return -en;
			}
			ret = pdec_add_id(&s->dec, id, e);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* --pid opens events x CPUs x threads descriptors: allow the hard limit */
static void perf_open_raise_nofile(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int perf_open_pid(struct perf_session *s, struct open_plan *pl, uint32_t pid,
			 const char *proc_root, char *err, size_t err_len)
{
	char path[512];
	struct dirent *de;
	DIR *dir;
	int ret = 0, opened = 0;

	snprintf(path, sizeof(path), "%s/%" PRIu32 "/task", proc_root, pid);
	dir = opendir(path);
	if (!dir) {
		ret = -errno;
		snprintf(err, err_len, "--pid %" PRIu32 ": cannot list %s: %s - is the pid right?",
			 pid, path, strerror(errno));
		return ret == -ENOENT ? -ESRCH : ret;
	}
	while ((de = readdir(dir))) {
		char *end;
		unsigned long tid = strtoul(de->d_name, &end, 10);

		if (*end || end == de->d_name || tid == 0)
			continue;
		ret = perf_open_target(s, pl, (pid_t)tid, tid != pid, err, err_len);
		if (ret == -ESRCH) { /* thread exited meanwhile */
			s->st.skipped_threads++;
			ret = 0;
			continue;
		}
		if (ret)
			break;
		opened++;
	}
	closedir(dir);
	if (!ret && !opened) {
		snprintf(err, err_len, "--pid %" PRIu32 ": no thread could be attached (it exited)",
			 pid);
		ret = -ESRCH;
	}
	return ret;
}

static int perf_open_synth_emit(void *arg, const void *rec, size_t len)
{
	struct perf_session *s = arg;

	if (s->synth_len + len > s->synth_cap) {
		size_t cap = s->synth_cap ? s->synth_cap * 2 : 65536;
		uint8_t *n;

		while (cap < s->synth_len + len)
			cap *= 2;
		n = realloc(s->synth_buf, cap);
		if (!n)
			return -ENOMEM;
		s->synth_buf = n;
		s->synth_cap = cap;
	}
	memcpy(s->synth_buf + s->synth_len, rec, len);
	s->synth_len += len;
	return 0;
}

static int perf_open_synthesize(struct perf_session *s, const struct op_options *o)
{
	struct psynth_stats ps = { 0 };
	struct psynth_ctx c = {
		.proc_root = o->proc_root ? o->proc_root : "/proc",
		.dec = &s->dec,
		.id = s->dec.nr_ids ? s->dec.ids[0].id : 0,
		.emit = perf_open_synth_emit,
		.arg = s,
		.stats = &ps,
	};
	size_t i;
	int ret = 0;

	for (i = 0; i < s->dec.ids_cap; i++)
		if (s->dec.ids[i].ev != UINT32_MAX) {
			c.id = s->dec.ids[i].id;
			break;
		}
	if (o->mode == OP_MODE_SYSTEM) {
		ret = psynth_all(&c);
	} else {
		for (i = 0; i < o->nr_pids && !ret; i++) {
			ret = psynth_pid(&c, o->pids[i]);
			if (ret == -ESRCH)
				ret = 0;
		}
	}
	s->st.synth_procs += ps.procs;
	s->st.synth_threads += ps.threads;
	s->st.synth_maps += ps.maps;
	s->st.synth_unreadable += ps.unreadable;
	s->st.synth_skipped_maps += ps.skipped_maps;
	if (ret)
		perf_log(s, "start-up synthesis of %s failed part-way: %s", c.proc_root,
			 strerror(-ret));
	if (s->synth_len)
		ret = perf_add_synth(s, s->synth_buf, s->synth_len);
	free(s->synth_buf);
	s->synth_buf = NULL;
	s->synth_len = s->synth_cap = 0;
	return ret;
}

static int perf_open_build_plan(struct perf_session *s, struct open_plan *pl, char *err,
				size_t err_len)
{
	const struct ext_registry *x = s->cfg.ext;
	uint64_t hooks_extra = 0;
	const uint64_t allowed = ~(uint64_t)(PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID);
	size_t i;

	if (x) {
		for (i = 0; i < x->nr_hooks; i++) {
			hooks_extra |= x->hooks[i].desc.sample_type_extra;
			if (x->hooks[i].desc.max_stack > pl->max_stack)
				pl->max_stack = x->hooks[i].desc.max_stack;
		}
	}
	if (pl->max_stack) {
		/* the kernel refuses (EOVERFLOW) a depth above its sysctl */
		FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "re");
		unsigned lim = 0;

		if (f) {
			if (fscanf(f, "%u", &lim) == 1 && lim && pl->max_stack > lim) {
				perf_log(s,
					 "call-chain depth %u lowered to kernel.perf_event_max_stack = %u",
					 pl->max_stack, lim);
				pl->max_stack = lim;
			}
			fclose(f);
		}
	}
	if (s->cfg.nr_events + (x ? x->nr_sources : 0) > PDEC_MAX_EVENTS) {
		snprintf(err, err_len, "too many events (%zu core + %zu plugin sources, at most %d)",
			 s->cfg.nr_events, x ? x->nr_sources : 0, PDEC_MAX_EVENTS);
		return -E2BIG;
	}
	for (i = 0; i < s->cfg.nr_events; i++) {
		struct pdec_event e = {
			.sample_type = (PDEC_BASE_SAMPLE_TYPE | s->cfg.events[i].sample_type_extra |
					hooks_extra) &
				       allowed,
			.counter = (uint32_t)i,
			.source = 0,
		};

		pl->attr[pl->nr] = s->cfg.events[i];
		pl->sample_type[pl->nr++] = e.sample_type;
	}
	for (i = 0; x && i < x->nr_sources; i++) {
		pl->attr[pl->nr] = x->sources[i].desc.attr;
		pl->sample_type[pl->nr++] =
			(PDEC_BASE_SAMPLE_TYPE | x->sources[i].desc.attr.sample_type_extra) &
			allowed;
	}
	if (!pl->nr) {
		snprintf(err, err_len,
			 "sample path: no event to open (no core event and no plugin source)");
		return -EINVAL;
	}
	return 0;
}

static int perf_open_register_events(struct perf_session *s, const struct open_plan *pl)
{
	unsigned i;

	for (i = 0; i < pl->nr; i++) {
		struct pdec_event e = {
			.sample_type = pl->sample_type[i],
			.read_format = PERF_FORMAT_ID | (s->fmt_lost ? PERF_FORMAT_LOST : 0),
			.counter = i < s->cfg.nr_events ? i : 0,
			.source = i < s->cfg.nr_events ? 0 : (uint32_t)(i - s->cfg.nr_events + 1),
		};
		int ret = pdec_add_event(&s->dec, &e);

		if (ret < 0)
			return ret;
	}
	return 0;
}

int perf_open(struct perf_session **out, const struct perf_config *cfg, char *err, size_t err_len)
{
	const struct op_options *o = cfg->opts;
	struct perf_session *s;
	struct open_plan *pl = NULL;
	const char *proc_root;
	size_t i;
	int ret;

	*out = NULL;
	if (!o) {
		snprintf(err, err_len, "sample path: no options given");
		return -EINVAL;
	}
	ret = perf_new(&s, cfg, err, err_len);
	if (ret)
		return ret;
	if (o->mode == OP_MODE_REPLAY) {
		ret = perf_replay_open(s, o->replay_file ? o->replay_file : "", err, err_len);
		if (ret)
			goto out_free;
		*out = s;
		return 0;
	}
	proc_root = o->proc_root ? o->proc_root : "/proc";
	s->fmt_lost = true;
	s->sb_event = true;
	pl = calloc(1, sizeof(*pl));
	if (!pl) {
		ret = -ENOMEM;
		goto out_free;
	}
	pl->mode = o->mode;
	pl->page_size = (size_t)sysconf(_SC_PAGESIZE);
	pl->pages = o->ring_pages ? o->ring_pages : PERF_DEFAULT_RING_PAGES;
	if ((pl->pages & (pl->pages - 1)) || pl->pages > 65536) {
		snprintf(err, err_len, "ring pages: %zu is not a power of two between 1 and 65536",
			 pl->pages);
		ret = -EINVAL;
		goto out_free;
	}
	ret = perf_open_build_plan(s, pl, err, err_len);
	if (ret)
		goto out_free;
	pl->nr_cpus = perf_open_online_cpus(pl->cpus, PERF_MAX_CPUS);

	pl->cpu_ring = malloc(sizeof(int) * (size_t)pl->nr_cpus);
	if (!pl->cpu_ring) {
		ret = -ENOMEM;
		goto out_free;
	}
	for (i = 0; i < (size_t)pl->nr_cpus; i++)
		pl->cpu_ring[i] = -1;
	/* event kinds first (their index is the value PERF_EVENT_IOC_ID maps to) */
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		ret = -errno;
		snprintf(err, err_len, "epoll_create1: %s", strerror(errno));
		goto out_free;
	}
	/*
	 * The read_format of the event kinds depends on whether the kernel takes
	 * PERF_FORMAT_LOST, known only after the first open: register the
	 * kinds with the optimistic value and fix it after opening.
	 */
	ret = perf_open_register_events(s, pl);
	if (ret) {
		snprintf(err, err_len, "sample path: inconsistent event sample types");
		goto out_free;
	}
	switch (o->mode) {
	case OP_MODE_LAUNCH:
		if (!o->command || !o->command[0]) {
			snprintf(err, err_len,
				 "launch mode: no command given (oprofiled [options] -- command args)");
			ret = -EINVAL;
			goto out_free;
		}
		ret = perf_launch_child(s, o->command, err, err_len);
		if (!ret)
			ret = perf_open_target(s, pl, s->child, false, err, err_len);
		break;
	case OP_MODE_PID:
		if (!o->nr_pids) {
			snprintf(err, err_len, "--pid mode: no pid given");
			ret = -EINVAL;
			goto out_free;
		}
		perf_open_raise_nofile();
		for (i = 0; i < o->nr_pids && !ret; i++)
			ret = perf_open_pid(s, pl, o->pids[i], proc_root, err, err_len);
		break;
	case OP_MODE_SYSTEM:
		ret = perf_open_target(s, pl, -1, false, err, err_len);
		break;
	default:
		snprintf(err, err_len, "sample path: unknown mode %d", (int)o->mode);
		ret = -EINVAL;
	}
	if (ret)
		goto out_free;
	for (i = 0; i < s->dec.nr_events; i++)
		s->dec.events[i].read_format = PERF_FORMAT_ID | (s->fmt_lost ? PERF_FORMAT_LOST : 0);
	for (i = 0; i < s->nr_rings; i++) {
		ret = perf_epoll_add(s, s->rings[i].fd, i);
		if (ret) {
			snprintf(err, err_len, "epoll_ctl: %s", strerror(-ret));
			goto out_free;
		}
		s->rings[i].in_epoll = true;
	}
	ret = perf_deliver_queue_ready(s);
	if (ret) {
		snprintf(err, err_len, "sample path: merge queue of %zu bytes: %s", s->q_bytes,
			 strerror(-ret));
		goto out_free;
	}
	if (o->record_file) {
		ret = perf_record_to(s, o->record_file, o->record_overwrite ? REPLAY_OVERWRITE : 0,
				     err, err_len);
		if (ret)
			goto out_free;
	}
	if (o->mode == OP_MODE_LAUNCH) {
		/* enable_on_exec: the events start when the command execs */
		if (write(s->child_go, "g", 1) != 1) {
			ret = -errno;
			snprintf(err, err_len, "launch: cannot release the command: %s",
				 strerror(errno));
			goto out_free;
		}
		close(s->child_go);
		s->child_go = -1;
		perf_watch_target(s, s->child);
	} else {
		/* enable first, then synthesize: nothing mapped in between is lost */
		for (i = 0; i < s->nr_fds; i++) {
			if (ioctl(s->fds[i].fd, PERF_EVENT_IOC_ENABLE, 0)) {
				ret = -errno;
				snprintf(err, err_len, "PERF_EVENT_IOC_ENABLE: %s", strerror(errno));
				goto out_free;
			}
		}
		for (i = 0; o->mode == OP_MODE_PID && i < o->nr_pids; i++)
			perf_watch_target(s, (pid_t)o->pids[i]);
		ret = perf_open_synthesize(s, o);
		if (ret) {
			snprintf(err, err_len, "start-up synthesis: %s", strerror(-ret));
			goto out_free;
		}
	}
	free(pl->cpu_ring);
	free(pl);
	*out = s;
	return 0;
out_free:
	if (pl)
		free(pl->cpu_ring);
	free(pl);
	perf_close(s);
	return ret;
}
