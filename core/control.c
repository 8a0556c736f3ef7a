/*
 * control.c - service mode of oprofiled: the owner-only unix socket that
 * opcontrol talks to (one request line, a text reply; served one
 * non-blocking step at a time, never waiting on a client) and timed rotation.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "control.h"
#include "ext.h"
#include "log.h"
#include "op_interval.h"
#include "options.h"
#include "perf.h"
#include "pipeline.h"
#include "rotate.h"
#include "session.h"

/* counters that are samples the profile does not show */
static const enum op_stat control_lost[] = {
	STAT_LOST_KERNEL,     STAT_LOST_NO_MAPPING,     STAT_LOST_NO_APP_USER,
	STAT_LOST_NO_CONTEXT, STAT_LOST_INVALID_DOMAIN, STAT_KLOST_SAMPLES,
	STAT_LOST_SAMPLEFILE, STAT_LOST_BAD_COUNTER,    STAT_LOST_PLUGIN_FILE,
	STAT_INVALID_PC,      STAT_NO_MEMORY,
};

/* "oprofiled: ..." to the daemon's log */
#define control_log(c, ...) log_info((c)->log, __VA_ARGS__)

static uint64_t control_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* the socket                                                          */
/* ------------------------------------------------------------------ */

/* bind through /proc/self/fd: any session path length fits sun_path */
static void control_addr(int dirfd, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d/" CONTROL_SOCKET, dirfd);
}

/* epoll data of the listening socket; a client's is its slot index */
#define CONTROL_LISTEN_TAG CONTROL_MAX_CLIENTS

static int control_epoll(struct control *c, int op, int fd, uint32_t events, uint32_t tag)
{
	struct epoll_event ev = { .events = events, .data.u32 = tag };

	return epoll_ctl(c->epfd, op, fd, &ev) ? -errno : 0;
}

static void control_close_client(struct control *c, struct control_client *cl)
{
	close(cl->fd); /* leaves the epoll set with it */
	free(cl->reply);
	memset(cl, 0, sizeof(*cl));
	cl->fd = -1;
	c->nr_clients--;
}

/* a short line to a client we are about to close; whatever the socket takes */
static void control_say(int fd, const char *msg)
{
	send(fd, msg, strlen(msg), MSG_DONTWAIT | MSG_NOSIGNAL); /* it goes anyway */
}

/*
 * A client dropped or turned away: counted, and logged at most once per
 * CONTROL_NOTE_MS (a looping script must not fill the log).
 */
static void control_note(struct control *c, const char *what)
{
	uint64_t now = control_now_ms();

	if (now < c->next_note_ms) {
		c->notes_suppressed++;
		return;
	}
	control_log(c,
		    "control: %s (so far: %u dropped for being slow, %u turned away busy, %u "
		    "refused as not the owner; %u such events not logged since the last message, "
		    "at most one per %d s)",
		    what, c->nr_dropped, c->nr_busy, c->nr_refused, c->notes_suppressed,
		    CONTROL_NOTE_MS / 1000);
	c->next_note_ms = now + CONTROL_NOTE_MS;
	c->notes_suppressed = 0;
}

int control_start(struct control *c, const struct control_target *t)
{
	struct sockaddr_un a;
	mode_t old;
	int fd, rc;

	if (!c->prepared)
		return -EINVAL;
	c->t = *t;
	c->rotate_interval = c->opts->rotate_interval;
	c->rotate_keep = c->opts->rotate_keep ? c->opts->rotate_keep : 1;
	if (c->rotate_interval)
		c->next_rotate_ms = control_now_ms() + (uint64_t)c->rotate_interval * 1000;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto out_err;
	control_addr(c->sess->dirfd, &a);
	/* we hold the session lock: a socket left here is a dead daemon's */
	unlinkat(c->sess->dirfd, CONTROL_SOCKET, 0);
	old = umask(0077);
	rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (rc || fchmodat(c->sess->dirfd, CONTROL_SOCKET, 0600, 0) || listen(fd, 16))
		goto out_close;
	/* the clients get their own epoll set: perf_poll wakes on it as one fd */
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (c->epfd < 0 || control_epoll(c, EPOLL_CTL_ADD, fd, EPOLLIN, CONTROL_LISTEN_TAG))
		goto out_unlink;
	rc = perf_watch_fd(t->perf, c->epfd);
	if (rc) {
		errno = -rc;
		goto out_unlink;
	}
	c->listen_fd = fd;
	c->active = true;
	return 0;

out_unlink:
	unlinkat(c->sess->dirfd, CONTROL_SOCKET, 0);
out_close:
	rc = errno;
	close(fd);
	if (c->epfd >= 0)
		close(c->epfd);
	c->epfd = -1;
	errno = rc;
out_err:
	rc = -errno;
	control_log(c,
		    "warning: %s/" CONTROL_SOCKET ": cannot open the control socket: %s - "
		    "opcontrol will not reach this daemon (signals still work)",
		    c->sess->dir, strerror(errno));
	return rc;
}

void control_stop(struct control *c)
{
	size_t i;

	if (!c->active)
		return;
	for (i = 0; i < CONTROL_MAX_CLIENTS; i++)
		if (c->clients[i].used)
			control_close_client(c, &c->clients[i]);
	close(c->epfd);
	c->epfd = -1;
	close(c->listen_fd);
	unlinkat(c->sess->dirfd, CONTROL_SOCKET, 0);
	c->listen_fd = -1;
	c->active = false;
	if (c->ready_fd > 0) {
		close(c->ready_fd);
		c->ready_fd = -1;
	}
}

/* ------------------------------------------------------------------ */
/* actions                                                             */
/* ------------------------------------------------------------------ */

int control_set_aside(struct control *c, const char *name, bool rotate, char *used, size_t used_len,
		      char *err, size_t err_len)
{
	char stamp[ROTATE_NAME_MAX], why[ROTATE_NAME_MAX + 64];
	const char *to = name ? name : "previous";
	int rc, rc2;

	err[0] = 0;
	if (rotate) {
		rc = rotate_stamp_name(c->sess->samples_fd, time(NULL), &c->rotate_seq, stamp,
				       sizeof(stamp));
		if (rc) {
			snprintf(err, err_len, "no free rotate-* name: %s", strerror(-rc));
			return rc;
		}
		to = stamp;
	} else if (name && !rotate_name_ok(name)) {
		snprintf(err, err_len,
			 "session name \"%s\": expected 1..%d characters of A-Z a-z "
			 "0-9 . _ - (not starting with . or -, not current/previous/stats)",
			 name, ROTATE_NAME_MAX - 1);
		return -EINVAL;
	}
	/*
	 * every sample on its way lands, no file stays open, and the stats
	 * (the kernel's lost counts up to here, throttled events) are written
	 * into the session being set aside, before it moves: plugins complete
	 * their part of it to report (the kernel plugin its symbol snapshot,
	 * still being written in the first ~50 ms after start-up, which
	 * rotate_keep_snapshot() then carries to the new current)
	 */
	snprintf(why, sizeof(why), "control: saving samples/current as samples/%s ", to);
	pipeline_end_session(c->t.pipe, why);
	rc = rotate_move_current(c->sess->samples_fd, to, !name && !rotate, err, err_len);
	/* a fresh (or, if the move failed, the same) current under the same fd */
	rc2 = session_reopen_current(c->sess);
	if (rc2) {
		control_log(c, "%s/samples/current: cannot reopen it: %s", c->sess->dir,
			    strerror(-rc2));
		if (!rc) {
			snprintf(err, err_len, "samples/current: cannot recreate it: %s",
				 strerror(-rc2));
			rc = rc2;
		}
	}
	if (rc) {
		control_log(c, "control: %s", err);
		return rc;
	}
	rc2 = rotate_keep_snapshot(c->sess->samples_fd, to);
	if (rc2 < 0)
		control_log(c,
			    "warning: the kernel symbol snapshot was not carried to the new "
			    "samples/current: %s",
			    strerror(-rc2));
	control_log(c, "control: samples/current saved as samples/%s", to);
	/* SDK 1.2: plugins hear which session was set aside and that a new one began */
	pipeline_session_event(c->t.pipe, OP_SESSION_ROTATED, to);
	/* the new session's counters start at zero; status adds the earlier ones */
	pipeline_new_session(c->t.pipe, &c->before);
	snprintf(used, used_len, "%s", to);
	return 0;
}

static void control_rotate(struct control *c, FILE *reply)
{
	char used[ROTATE_NAME_MAX], err[512];
	int rc, removed;

	/* make room first: never more than rotate_keep on disk, even for a moment */
	removed = rotate_prune(c->sess->samples_fd, c->rotate_keep - 1);
	if (removed < 0)
		control_log(c, "warning: cannot remove old rotate-* sessions: %s",
			    strerror(-removed));
	rc = control_set_aside(c, NULL, true, used, sizeof(used), err, sizeof(err));
	if (rc) {
		if (reply)
			fprintf(reply, "error: %s\n", err);
		return;
	}
	c->nr_rotations++;
	snprintf(c->last_rotation, sizeof(c->last_rotation), "%s", used);
	control_log(c,
		    "control: rotated samples/current to samples/%s (%d old removed, keeping "
		    "%u)",
		    used, removed > 0 ? removed : 0, c->rotate_keep);
	if (reply)
		fprintf(reply, "ok\nsaved samples/%s\nremoved %d old rotate-* session%s\n", used,
			removed > 0 ? removed : 0, removed == 1 ? "" : "s");
}

/* clients past their deadline are dropped: a hung or slow client costs nothing */
static void control_expire(struct control *c, uint64_t now)
{
	char what[128], say[80];
	size_t i;

	snprintf(say, sizeof(say), "error: no request line within %d s - closing\n",
		 CONTROL_REQUEST_MS / 1000);
	for (i = 0; i < CONTROL_MAX_CLIENTS; i++) {
		struct control_client *cl = &c->clients[i];

		if (!cl->used || now < cl->deadline_ms)
			continue;
		c->nr_dropped++;
		if (cl->reply)
			snprintf(what, sizeof(what),
				 "a client dropped: it took %zu of %zu reply bytes "
				 "in %d s",
				 cl->reply_off, cl->reply_len, CONTROL_REPLY_MS / 1000);
		else
			snprintf(what, sizeof(what),
				 "a client dropped: %zu bytes but no request line "
				 "in %d s",
				 cl->len, CONTROL_REQUEST_MS / 1000);
		control_note(c, what);
		if (!cl->reply)
			control_say(cl->fd, say);
		control_close_client(c, cl);
	}
}

void control_tick(struct control *c)
{
	uint64_t now;

	if (!c->active)
		return;
	if (c->nr_clients || c->listen_paused) {
		now = control_now_ms();
		if (c->nr_clients)
			control_expire(c, now);
		if (c->listen_paused &&
		    !control_epoll(c, EPOLL_CTL_ADD, c->listen_fd, EPOLLIN, CONTROL_LISTEN_TAG))
			c->listen_paused = false;
	}
	if (!c->rotate_interval)
		return;
	now = control_now_ms();
	if (now < c->next_rotate_ms)
		return;
	c->next_rotate_ms = now + (uint64_t)c->rotate_interval * 1000;
	control_rotate(c, NULL);
}

static unsigned control_count_fds(void)
{
	struct dirent *de;
	unsigned n = 0;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return 0;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n ? n - 1 : 0; /* not the one opendir holds */
}

static uint64_t control_lost_sum(const struct op_stats *st)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < sizeof(control_lost) / sizeof(control_lost[0]); i++)
		n += st->v[control_lost[i]];
	return n;
}

static void control_status(struct control *c, FILE *out)
{
	static const char *const modes[] = { "launch", "pid", "system-wide", "replay" };
	const struct op_stats *st = pipeline_stats(c->t.pipe), *bf = &c->before;
	uint64_t cur, all, lost;
	const struct perf_stats *ps = c->t.perf ? perf_get_stats(c->t.perf) : NULL;
	unsigned nr_open, nr_sets;
	char since[64];
	struct tm tm;
	char **names;
	size_t n, i;

	perf_lost_checkpoint(c->t.perf); /* exact kernel losses up to now */
	cur = st->v[STAT_SAMPLES] + st->v[STAT_SOURCE_SAMPLES];
	all = cur + bf->v[STAT_SAMPLES] + bf->v[STAT_SOURCE_SAMPLES];
	lost = control_lost_sum(st);
	gmtime_r(&c->started, &tm);
	strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(out, "ok\n");
	fprintf(out, "pid: %ld\n", (long)getpid());
	fprintf(out, "session: %s\n", c->sess->dir);
	fprintf(out, "running since: %s (%lld s)\n", since, (long long)(time(NULL) - c->started));
	fprintf(out, "mode: %s\n", (unsigned)c->opts->mode < 4 ? modes[c->opts->mode] : "?");
	fprintf(out, "config: %s\n", c->opts->config_file ? c->opts->config_file : "none");
	fprintf(out, "events: %s\n",
		c->opts->events_spec ? c->opts->events_spec : "the model's default");
	fprintf(out, "samples: %" PRIu64 " (this session %" PRIu64 ")\n", all, cur);
	fprintf(out, "lost: %" PRIu64 " samples (this session %" PRIu64 ")\n",
		lost + control_lost_sum(bf), lost);
	fprintf(out,
		"kernel dropped: %" PRIu64 " samples, %" PRIu64 " mmap/comm/fork/exit "
		"records, %" PRIu64 " records of unknown kind (this session %" PRIu64 ", %" PRIu64
		", %" PRIu64 ")\n",
		st->v[STAT_KLOST_SAMPLES] + bf->v[STAT_KLOST_SAMPLES],
		st->v[STAT_KLOST_SIDEBAND] + bf->v[STAT_KLOST_SIDEBAND],
		stats_file_value(st, STATS_F_KLOST_RECORDS) +
			stats_file_value(bf, STATS_F_KLOST_RECORDS),
		st->v[STAT_KLOST_SAMPLES], st->v[STAT_KLOST_SIDEBAND],
		stats_file_value(st, STATS_F_KLOST_RECORDS));
	if (ps)
		fprintf(out,
			"kernel LOST records: %" PRIu64 " (reporting %" PRIu64
			" records of any kind)\n",
			ps->lost_records, ps->lost);
	pipeline_file_counts(c->t.pipe, &nr_open, &nr_sets);
	fprintf(out, "open sample files: %u (sets %u, max_open_files %u)\n", nr_open, nr_sets,
		c->opts->max_open_files);
	fprintf(out, "open file descriptors: %u\n", control_count_fds());
	if (c->rotate_interval)
		fprintf(out, "rotation: every %u s, keep %u, next in %lld s, done %u%s%s\n",
			c->rotate_interval, c->rotate_keep,
			(long long)((int64_t)(c->next_rotate_ms - control_now_ms()) / 1000),
			c->nr_rotations, c->last_rotation[0] ? ", last " : "", c->last_rotation);
	else
		fprintf(out, "rotation: off (done %u)\n", c->nr_rotations);
	fprintf(out, "saves: %u, resets: %u\n", c->nr_saves, c->nr_resets);
	fprintf(out,
		"control connections: %u open (max %d); requests %u; dropped %u (slow: %d s "
		"for the request line, %d s to take the reply); turned away %u (busy); refused %u "
		"(not the owner)\n",
		c->nr_clients, CONTROL_MAX_CLIENTS, c->nr_requests, c->nr_dropped,
		CONTROL_REQUEST_MS / 1000, CONTROL_REPLY_MS / 1000, c->nr_busy, c->nr_refused);
	if (rotate_list(c->sess->samples_fd, &names, &n) == 0) {
		fprintf(out, "rotate sessions: %zu", n);
		for (i = 0; i < n; i++)
			fprintf(out, "%s%s", i ? " " : ": ", names[i]);
		fputc('\n', out);
		rotate_free_list(names, n);
	}
	fprintf(out, "plugins:\n");
	if (c->t.loader)
		ext_print_stats(c->t.loader, out);
}

/* one request: "CMD[ ARG]\n" */
static void control_request(struct control *c, char *line, FILE *out)
{
	char *arg = strchr(line, ' ');
	char used[ROTATE_NAME_MAX], err[512];
	int rc;

	if (arg)
		*arg++ = 0;
	c->nr_requests++;
	if (!strcmp(line, "status") && !arg) {
		control_status(c, out);
	} else if (!strcmp(line, "dump") && !arg) {
		pipeline_dump(c->t.pipe, true); /* what SIGUSR1 does */
		fprintf(out, "ok\nsamples synced to %s/samples/current\n", c->sess->dir);
	} else if (!strcmp(line, "stop") && !arg) {
		control_log(c, "control: stop requested");
		c->stop = true;
		fprintf(out, "ok\nstopping\n");
	} else if ((!strcmp(line, "save") && arg) || (!strcmp(line, "reset") && !arg)) {
		rc = control_set_aside(c, arg, false, used, sizeof(used), err, sizeof(err));
		if (rc) {
			fprintf(out, "error: %s\n", err);
			return;
		}
		if (arg)
			c->nr_saves++;
		else
			c->nr_resets++;
		control_log(c, "control: samples/current set aside as samples/%s", used);
		fprintf(out, "ok\nsaved samples/%s\n", used);
	} else if (!strcmp(line, "rotate")) {
		unsigned secs;

		if (!arg) {
			control_rotate(c, out);
			return;
		}
		if (op_parse_interval(arg, &secs, err, sizeof(err))) {
			fprintf(out, "error: %s\n", err);
			return;
		}
		c->rotate_interval = secs;
		c->next_rotate_ms = control_now_ms() + (uint64_t)secs * 1000;
		if (!secs) {
			control_log(c, "control: rotation off");
			fprintf(out, "ok\nrotation off\n");
			return;
		}
		control_log(c, "control: rotation every %u s, keeping %u", secs, c->rotate_keep);
		fprintf(out, "ok\nrotation every %u s, keeping %u\n", secs, c->rotate_keep);
	} else if (!strcmp(line, "keep") && arg) {
		char *end;
		unsigned long k = strtoul(arg, &end, 10);

		if (*end || k < 1 || k > 100000) {
			fprintf(out, "error: keep \"%s\": expected 1..100000\n", arg);
			return;
		}
		c->rotate_keep = (unsigned)k;
		fprintf(out, "ok\nkeeping %u rotate-* sessions\n", c->rotate_keep);
	} else {
		fprintf(out,
			"error: unknown request \"%s%s%s\" - expected status, dump, stop, reset, "
			"save NAME, rotate [INTERVAL], keep K\n",
			line, arg ? " " : "", arg ? arg : "");
	}
}

/* write what the socket takes; the whole reply sent: done with the client */
static void control_write(struct control *c, struct control_client *cl)
{
	while (cl->reply_off < cl->reply_len) {
		ssize_t n = send(cl->fd, cl->reply + cl->reply_off, cl->reply_len - cl->reply_off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return; /* EPOLLOUT brings us back, or the deadline drops it */
		if (n <= 0)
			break; /* the client went away */
		cl->reply_off += (size_t)n;
	}
	control_close_client(c, cl);
}

/* the request line is complete (or can never be): run it, start the reply */
static void control_run(struct control *c, struct control_client *cl)
{
	static const char bad[] = "error: expected one request line ending in a newline\n";
	char *nl = memchr(cl->line, '\n', cl->len);
	FILE *out;

	if (!nl) {
		cl->reply = strdup(bad);
		cl->reply_len = cl->reply ? sizeof(bad) - 1 : 0;
	} else {
		*nl = 0;
		cl->line[strcspn(cl->line, "\r")] = 0;
		out = open_memstream(&cl->reply, &cl->reply_len);
		if (out) {
			control_request(c, cl->line, out);
			if (fclose(out)) {
				free(cl->reply);
				cl->reply = NULL;
			}
		}
	}
	if (!cl->reply) {
		control_log(c, "control: no memory for a reply: client closed");
		control_close_client(c, cl);
		return;
	}
	cl->deadline_ms = control_now_ms() + CONTROL_REPLY_MS;
	if (control_epoll(c, EPOLL_CTL_MOD, cl->fd, EPOLLOUT, (uint32_t)(cl - c->clients))) {
		control_close_client(c, cl);
		return;
	}
	/* at once: a stop ends the loop before another turn */
	control_write(c, cl);
}

/* the client is readable: take what it sent, never waiting for more */
static void control_read(struct control *c, struct control_client *cl)
{
	ssize_t n;

	do
		n = recv(cl->fd, cl->line + cl->len, sizeof(cl->line) - 1 - cl->len, MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
		return;
	if (n < 0) {
		control_close_client(c, cl);
		return;
	}
	cl->len += (size_t)n;
	cl->line[cl->len] = 0;
	/* more may come: not at end of file, no newline yet, room left */
	if (n > 0 && !memchr(cl->line, '\n', cl->len) && cl->len < sizeof(cl->line) - 1)
		return;
	control_run(c, cl);
}

static void control_accept(struct control *c)
{
	struct ucred cred = { 0, (uid_t)-1, (gid_t)-1 };
	socklen_t cl_len = sizeof(cred);
	struct control_client *cl;
	char what[128];
	size_t i;
	int fd;

	fd = accept4(c->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
			/* it stays readable: stop watching it until the next tick */
			control_epoll(c, EPOLL_CTL_DEL, c->listen_fd, 0, 0);
			c->listen_paused = true;
			snprintf(what, sizeof(what), "cannot accept a client: %s", strerror(errno));
			control_note(c, what);
		}
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl_len) ||
	    (cred.uid != geteuid() && cred.uid != 0)) {
		c->nr_refused++;
		snprintf(what, sizeof(what), "request from uid %ld refused (not the owner)",
			 (long)cred.uid);
		control_note(c, what);
		control_say(fd, "error: permission denied - only the daemon's owner or root may "
				"control it\n");
		close(fd);
		return;
	}
	if (c->nr_clients == CONTROL_MAX_CLIENTS) {
		c->nr_busy++;
		snprintf(what, sizeof(what), "a client turned away: %d connections are open",
			 CONTROL_MAX_CLIENTS);
		control_note(c, what);
		control_say(fd, "error: busy - too many control connections are open, try again\n");
		close(fd);
		return;
	}
	for (i = 0; c->clients[i].used; i++)
		;
	cl = &c->clients[i];
	if (control_epoll(c, EPOLL_CTL_ADD, fd, EPOLLIN, (uint32_t)i)) {
		close(fd);
		return;
	}
	cl->used = true;
	cl->fd = fd;
	cl->deadline_ms = control_now_ms() + CONTROL_REQUEST_MS;
	c->nr_clients++;
}

bool control_poll(struct control *c)
{
	struct epoll_event ev;
	struct control_client *cl;

	if (!c->active || epoll_wait(c->epfd, &ev, 1, 0) != 1)
		return c->stop;
	if (ev.data.u32 == CONTROL_LISTEN_TAG) {
		control_accept(c);
		return c->stop;
	}
	cl = &c->clients[ev.data.u32];
	if (!cl->used)
		return c->stop;
	if (cl->reply)
		control_write(c, cl);
	else
		control_read(c, cl);
	return c->stop;
}
