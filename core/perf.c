/*
 * perf.c - the sample path: a session opens perf events per CPU (system-wide,
 * launched command, or attached pids: perf_open.c), reads the rings each
 * round and merges their records in time order (perf_deliver.c), records
 * and replays the raw stream (perf_replay.c). Here: the session, the
 * launched command and watched targets, the poll/stop loop, close.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "log.h"
#include "perf_int.h"

#define PERF_DEFAULT_DRAIN_MS 100
/*
 * The longest wait of an idle or nearly idle session. The kernel wakes the
 * poll when a ring is half full (wakeup_watermark), so a longer wait never
 * loses records; it only delays them. Idle, the daemon then wakes about
 * once a second instead of every drain interval (issue 20: a fleet daemon
 * with nothing to sample must cost nothing).
 */
#define PERF_IDLE_MAX_MS 1000
#define PERF_DEFAULT_SLACK_NS 10000000ll

/* epoll tags beyond ring indices */
#define TAG_PIDFD 0xfffff000u /* + index into pidfds[] */
#define TAG_WATCH 0xffffff02u

void perf_log(struct perf_session *s, const char *fmt, ...)
{
	FILE *f = s->cfg.log ? log_file(s->cfg.log) : stderr;
	va_list ap;

	va_start(ap, fmt);
	log_vput(f, LOG_PREFIX, fmt, ap);
	va_end(ap);
}

static uint64_t perf_mono_clock(void *arg)
{
	struct timespec ts;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------------ */
/* session basics                                                      */
/* ------------------------------------------------------------------ */

int perf_new(struct perf_session **out, const struct perf_config *cfg, char *err, size_t err_len)
{
	struct perf_session *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s || !(s->scratch = aligned_alloc(8, RING_MAX_RECORD))) {
		free(s);
		snprintf(err, err_len, "sample path: out of memory");
		return -ENOMEM;
	}
	s->cfg = *cfg;
	if (!s->cfg.clock) {
		s->cfg.clock = perf_mono_clock;
		s->cfg.clock_arg = NULL;
	}
	if (!s->cfg.drain_ms)
		s->cfg.drain_ms = PERF_DEFAULT_DRAIN_MS;
	s->wait_ms = s->cfg.drain_ms;
	s->slack = cfg->slack_ns > 0  ? (uint64_t)cfg->slack_ns :
		   cfg->slack_ns == 0 ? PERF_DEFAULT_SLACK_NS :
					0;
	s->clock_ok = true;
	s->epfd = -1;
	s->child_go = -1;
	pdec_init(&s->dec);
	*out = s;
	return 0;
}

int perf_add_event(struct perf_session *s, const struct pdec_event *e, const uint64_t *ids,
		   size_t nr_ids)
{
	int idx = pdec_add_event(&s->dec, e);
	size_t i;

	if (idx < 0)
		return idx;
	for (i = 0; i < nr_ids; i++) {
		int err = pdec_add_id(&s->dec, ids[i], (unsigned)idx);

		if (err)
			return err;
	}
	return idx;
}

int perf_add_ring(struct perf_session *s, void *base, size_t map_len, int fd, size_t page_size,
		  size_t data_size)
{
	struct perf_ring *pr;
	int err;

	if (s->q_ready)
		return -EBUSY; /* the queue is sized from the rings */
	if (s->nr_rings == s->cap_rings) {
		size_t cap = s->cap_rings ? s->cap_rings * 2 : 8;
		struct perf_ring *n = realloc(s->rings, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->rings = n;
		s->cap_rings = cap;
	}
	pr = &s->rings[s->nr_rings];
	memset(pr, 0, sizeof(*pr));
	err = ring_attach(&pr->r, base, page_size, data_size);
	if (err)
		return err;
	pr->base = base;
	pr->map_len = map_len;
	pr->fd = fd;
	s->ring_bytes += data_size;
	s->st.rings++;
	return (int)s->nr_rings++;
}

int perf_attach_ring(struct perf_session *s, void *base, size_t page_size, size_t data_size)
{
	return perf_add_ring(s, base, 0, -1, page_size, data_size);
}

const struct pdec *perf_decoder(const struct perf_session *s)
{
	return &s->dec;
}

const struct perf_stats *perf_get_stats(const struct perf_session *s)
{
	return &s->st;
}

pid_t perf_child_pid(const struct perf_session *s)
{
	return s->child;
}

bool perf_child_status(const struct perf_session *s, int *wstatus)
{
	if (!s->child_exited)
		return false;
	if (wstatus)
		*wstatus = s->child_status;
	return true;
}

/* ------------------------------------------------------------------ */
/* the launched command and watched targets                            */
/* ------------------------------------------------------------------ */

int perf_launch_child(struct perf_session *s, char **argv, char *err, size_t err_len)
{
	int go[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC)) {
		snprintf(err, err_len, "launch: pipe: %s", strerror(errno));
		return -errno;
	}
	pid = fork();
	if (pid < 0) {
		int en = errno;

		close(go[0]);
		close(go[1]);
		snprintf(err, err_len, "launch %s: fork: %s", argv[0], strerror(en));
		return -en;
	}
	if (pid == 0) {
		sigset_t none;
		char c;

		/* the command starts with default signal handling, whatever ours is */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		close(go[1]);
		/* wait until the events are in place */
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[0], argv);
		fprintf(stderr, "oprofiled: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	s->child = pid;
	s->child_go = go[1];
	return 0;
}

int perf_epoll_add(struct perf_session *s, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/*
 * Wake up when process @pid exits (pidfd, kernel >= 5.3). Without pidfds the
 * launched command is still reaped by waitpid at every round; a --pid target
 * then simply stays until the daemon is stopped.
 */
void perf_watch_target(struct perf_session *s, pid_t pid)
{
	long pfd;

	if (s->nr_pidfds >= PERF_MAX_PIDFDS)
		return;
	pfd = syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0)
		return;
	if (perf_epoll_add(s, (int)pfd, TAG_PIDFD + s->nr_pidfds)) {
		close((int)pfd);
		return;
	}
	s->pidfds[s->nr_pidfds++] = (int)pfd;
	s->targets_alive++;
}

/* ------------------------------------------------------------------ */
/* main loop, stop, close                                              */
/* ------------------------------------------------------------------ */

int perf_watch_fd(struct perf_session *s, int fd)
{
	if (s->epfd < 0) {
		s->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (s->epfd < 0)
			return -errno;
	}
	return perf_epoll_add(s, fd, TAG_WATCH);
}

static void perf_reap_child(struct perf_session *s)
{
	int st;

	if (s->child > 0 && !s->child_exited && waitpid(s->child, &st, WNOHANG) == s->child) {
		s->child_exited = true;
		s->child_status = st;
	}
}

/*
 * The next wait, from what the round just read: a round that found under
 * 1/16 of the rings (e.g. 32 KiB of two 256 KiB rings; nothing when idle)
 * doubles it up to PERF_IDLE_MAX_MS, one that found more than 1/4 (the
 * rings half way to their wake-up watermark) halves it down to the drain
 * interval; in between it stays. Records held back by the merge watermark
 * wait for the next round, at most PERF_IDLE_MAX_MS later (a signal or
 * control request wakes the poll, whose round drains the rings first). At
 * fleet rates (99 Hz per CPU, call chains and the side-band of a busy
 * host's process churn: ~120 KB/s on 2 CPUs) the daemon so wakes about
 * once a second (issue 20: with 1/64 and 1/16, and 64 KiB rings, it woke
 * 6-7 times a second), while a busy 10 kHz session keeps draining every
 * interval; the kernel wakes the poll at half a ring whatever the wait, so
 * none is lost.
 */
static void perf_adapt_wait(struct perf_session *s, uint64_t got)
{
	unsigned lo = s->cfg.drain_ms, w = s->wait_ms;

	if (got < s->ring_bytes / 16) {
		w = w >= PERF_IDLE_MAX_MS / 2 ? PERF_IDLE_MAX_MS : w * 2;
	} else if (got > s->ring_bytes / 4) {
		w /= 2;
	}
	if (w < lo)
		w = lo;
	if (w > PERF_IDLE_MAX_MS && w > lo)
		w = lo > PERF_IDLE_MAX_MS ? lo : PERF_IDLE_MAX_MS;
	s->wait_ms = w;
}

int perf_poll(struct perf_session *s, int timeout_ms)
{
	struct epoll_event evs[32];
	int n, i, ret = PERF_POLL_OK, err;
	uint64_t bytes;

	if (s->replaying) {
		err = perf_replay_run(s);
		replay_reader_close(&s->rd);
		s->replaying = false;
		s->stopped = true;
		if (err) {
			perf_log(s, "%s", s->err);
			return err;
		}
		return PERF_POLL_DONE;
	}
	if (s->stopped)
		return -EINVAL;
	if (timeout_ms < 0 || (unsigned)timeout_ms > s->wait_ms)
		timeout_ms = (int)s->wait_ms;
	n = s->epfd >= 0 ? epoll_wait(s->epfd, evs, 32, timeout_ms) : 0;
	for (i = 0; i < n; i++) {
		uint64_t tag = evs[i].data.u64;

		if (tag == TAG_WATCH) {
			ret = PERF_POLL_FD;
		} else if (tag >= TAG_PIDFD && tag < TAG_PIDFD + s->nr_pidfds) {
			int *pfd = &s->pidfds[tag - TAG_PIDFD];

			/* the process exited: readable for ever, stop watching */
			if (*pfd >= 0) {
				epoll_ctl(s->epfd, EPOLL_CTL_DEL, *pfd, NULL);
				close(*pfd);
				*pfd = -1;
				s->targets_alive--;
			}
		} else if (tag < s->nr_rings && (evs[i].events & (EPOLLHUP | EPOLLERR))) {
			/* the task is gone: no more wakeups, stop polling it (no busy loop) */
			struct perf_ring *pr = &s->rings[tag];

			if (pr->in_epoll) {
				epoll_ctl(s->epfd, EPOLL_CTL_DEL, pr->fd, NULL);
				pr->in_epoll = false;
				s->st.hup++;
			}
		}
	}
	bytes = s->st.bytes;
	err = perf_round(s);
	if (err)
		return err;
	perf_adapt_wait(s, s->st.bytes - bytes);
	perf_reap_child(s);
	if (s->child_exited && ret == PERF_POLL_OK)
		ret = PERF_POLL_CHILD_EXIT;
	/* --pid: every attached process is gone */
	if (!s->child && s->nr_pidfds && !s->targets_alive && ret == PERF_POLL_OK)
		ret = PERF_POLL_CHILD_EXIT;
	return ret;
}

int perf_lost_checkpoint(struct perf_session *s)
{
	uint64_t d[LOST_PARTS] = { 0 };
	size_t i;

	if (!s || s->replaying || s->stopped || !s->fmt_lost)
		return 0;
	for (i = 0; i < s->nr_fds; i++) {
		struct perf_fd *f = &s->fds[i];
		uint64_t v[3]; /* value, id, lost */

		if (read(f->fd, v, sizeof(v)) != (ssize_t)sizeof(v) || v[2] <= f->lost_seen)
			continue;
		d[f->role == PERF_FD_SAMPLES  ? LOST_SAMPLES :
		  f->role == PERF_FD_SIDEBAND ? LOST_SIDEBAND :
						LOST_EITHER] += v[2] - f->lost_seen;
		f->lost_seen = v[2];
	}
	s->st.lost_kernel += d[LOST_SAMPLES] + d[LOST_SIDEBAND] + d[LOST_EITHER];
	perf_deliver_lost_parts(s, d);
	/* a = the running total (what older readers take), payload = the parts since the last */
	perf_replay_write_chunk(s, REPLAY_LOST, s->st.lost_kernel, 0, d, sizeof(d), NULL, 0);
	return 0;
}

int perf_stop(struct perf_session *s)
{
	size_t i;
	int err = 0;

	if (!s || s->stopped)
		return 0;
	for (i = 0; i < s->nr_fds; i++)
		ioctl(s->fds[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	if (s->q_ready) {
		err = perf_round(s);
		perf_deliver_flush_to(s, UINT64_MAX);
	}
	if (s->fmt_lost)
		perf_lost_checkpoint(s);
	else
		perf_replay_write_chunk(s, REPLAY_LOST, 0, 0, NULL, 0, NULL, 0);
	perf_replay_write_chunk(s, REPLAY_END, 0, 0, NULL, 0, NULL, 0);
	if (s->rec) {
		s->st.record_bytes = replay_writer_bytes(s->rec);
		if (replay_writer_close(s->rec)) {
			perf_log(s, "record file: final write failed");
			err = err ? err : -EIO;
		}
		s->rec = NULL;
	}
	perf_reap_child(s);
	s->stopped = true;
	return err;
}

void perf_close(struct perf_session *s)
{
	size_t i;

	if (!s)
		return;
	if (s->rec) {
		replay_writer_close(s->rec);
		s->rec = NULL;
	}
	if (s->replaying)
		replay_reader_close(&s->rd);
	for (i = 0; i < s->nr_fds; i++)
		close(s->fds[i].fd);
	for (i = 0; i < s->nr_rings; i++)
		if (s->rings[i].map_len)
			munmap(s->rings[i].base, s->rings[i].map_len);
	if (s->child_go >= 0)
		close(s->child_go); /* an unreleased command exits 127 */
	if (s->child > 0 && !s->child_exited) {
		int st;

		if (waitpid(s->child, &st, WNOHANG) == 0) {
			kill(s->child, SIGTERM);
			waitpid(s->child, &st, 0);
		}
	}
	for (i = 0; i < s->nr_pidfds; i++)
		if (s->pidfds[i] >= 0)
			close(s->pidfds[i]);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->q_ready)
		pq_free(&s->q);
	pdec_free(&s->dec);
	free(s->fds);
	free(s->rings);
	free(s->synth_buf);
	free(s->scratch);
	free(s);
}

void perf_print_stats(const struct perf_session *s, FILE *out)
{
	const struct perf_stats *t = &s->st;

	fprintf(out, "-- sample path --\n");
#define P(name) fprintf(out, "%s: %" PRIu64 "\n", #name, t->name)
	P(records);
	P(samples);
	P(mmaps);
	P(comms);
	P(forks);
	P(exits);
	P(ksymbols);
	P(lost_records);
	P(lost);
	P(lost_kernel);
	P(lost_kernel_samples);
	P(lost_kernel_sideband);
	P(throttle);
	P(unthrottle);
	P(bad_records);
	P(resyncs);
	P(wrapped);
	P(unknown_types);
	P(skipped_types);
	P(unknown_ids);
	P(queue_forced);
	P(out_of_order);
	P(deliver_errors);
	P(rounds);
	P(bytes);
	P(hup);
	P(fds);
	P(rings);
	P(skipped_threads);
	P(synth_procs);
	P(synth_threads);
	P(synth_maps);
	P(synth_unreadable);
	P(synth_skipped_maps);
	P(record_bytes);
	P(replay_cpu_ns);
#undef P
	if (t->replay_cpu_ns)
		fprintf(out,
			"replay: %" PRIu64 " samples in %.3f s of CPU = %.2f M samples/s "
			"(decode, merge, sync, trans, sample files; start-up and shutdown not included)\n",
			t->samples, t->replay_cpu_ns / 1e9,
			t->samples * 1e3 / (double)t->replay_cpu_ns);
}
