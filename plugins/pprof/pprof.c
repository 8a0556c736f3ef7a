/*
 * pprof.c - the pprof pull plugin, the daemon's side: what needs the
 * session. GET /debug/pprof/profile?seconds=N (the delta of the current
 * session's counts over the next N seconds, as a gzip'd profile.proto) and
 * GET /metrics are served by the helper program oprofiled-pull, which runs
 * libmicrohttpd as an unprivileged user on the listening socket bound
 * here (plugins/common/np_child: privilege separation, issue 20) and asks
 * this plugin's thread for each profile and each /metrics text over a
 * socket; the bodies go back as sealed memfds. The daemon's process maps
 * no HTTP parser and no TLS library, and the sampling thread only ever
 * takes a dump. A helper that dies is restarted with backoff; one that
 * sends anything malformed is killed and restarted. With helper_idle (the
 * default) the helper runs only while there is network work: this thread
 * polls the listening socket while no helper runs, starts one when a
 * connection waits (it stays in the backlog until the helper accepts it),
 * and the helper exits by itself after helper_idle without a connection.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "metrics.h"
#include "netplug.h"
#include "np_child.h"
#include "op_interval.h"
#include "plugin_util.h"
#include "pull_proto.h"

#define PP_DEFAULT_MAX_SECONDS 300
/*
 * Connections, each a thread of the helper while it lasts; a client such
 * as pprof keeps one or two alive between its requests, and on loopback
 * every client has the same address, so the bound is per server, not per
 * address.
 */
#define PP_DEFAULT_MAX_CONN 16
/* allow_uid=UID;UID...: at most this many */
#define PP_MAX_UIDS 16
/*
 * Profiles built at once: each holds two reads of the session in memory
 * for its N seconds; more requests meanwhile are answered 503 at once.
 */
#define PP_MAX_ACTIVE 2
/*
 * GET /metrics: the daemon answers a status request between two drain
 * rounds (metrics.c); scrapes closer together than this share one answer,
 * so that scrapers, however many, cost the daemon's thread one a second
 */
#define PP_METRICS_CACHE_MS 1000
#define PP_METRICS_TIMEOUT_MS 3000
/* a helper that does not take a reply within this is not waited for */
#define PP_SEND_TIMEOUT_MS 2000
/* at stop: the helper exits when its socket closes; killed after this */
#define PP_STOP_GRACE_MS 1000
/* messages handled per wake-up before the thread looks at its wake pipe again */
#define PP_MSG_BATCH 64
/* the helper's log lines: at most this many per PP_LOG_WINDOW_MS, the rest counted */
#define PP_LOG_BURST 20
#define PP_LOG_WINDOW_MS 10000
/* helper_idle's default (seconds; 0: the helper stays from start to stop) */
#define PP_DEFAULT_IDLE_S 30

struct pp_state;

/* a profile being built (np_session_delta waits N seconds): a thread each */
struct pp_worker {
	struct pp_state *st;
	pthread_t t;
	bool used;
	atomic_bool done;
	uint32_t id;
	uint64_t gen;
	unsigned secs;
};

struct pp_state {
	op_ext_t *ctx;
	const struct op_host *host;
	struct np_session sess;

	/* settings */
	char listen_text[128];
	struct sockaddr_storage addr;
	socklen_t addr_len;
	bool allow_remote;
	unsigned max_seconds, max_conn;
	/* local users besides root and the daemon's own user who may pull */
	uid_t allow_uid[PP_MAX_UIDS];
	unsigned nr_allow_uid;
	char user[64];   /* whom the helper runs as when the daemon is root */
	unsigned idle_s; /* helper_idle: 0 resident, else on demand */

	int lfd; /* the listening socket, bound in ext_init (errors show at start) */

	/* the helper and the thread that talks to it */
	struct np_child child;
	char argbuf[7][200];
	char *argv[8];
	pthread_t thread;
	bool thread_on;
	atomic_bool quit;
	int wake[2];
	/*
	 * child.sock changes when the helper is replaced; workers reply
	 * under this lock, to the helper (generation) that asked
	 */
	pthread_mutex_t send_lock;
	uint64_t gen;
	bool served; /* "serving" logged */
	struct pp_worker workers[PP_MAX_ACTIVE];
	struct np_msg msg;
	uint64_t log_window_ms;
	unsigned log_lines;

	/* counters (written by the thread and the workers, read by print_stats) */
	atomic_uint_fast64_t counts[PP_COUNT_NR];
	atomic_uint_fast64_t profiles, bytes, errors, busy;
	atomic_uint_fast64_t metrics, metrics_errors;
	atomic_uint_fast64_t restarts, spawn_failures, bad_messages, log_dropped;
	atomic_uint_fast64_t spawns, idle_exits;
	atomic_int helper_pid, last_status;

	/* the last /metrics text and when it was made (monotonic ms); the thread's */
	char *metrics_text;
	size_t metrics_len;
	uint64_t metrics_ms;
};

/* ------------------------------------------------------------------ */
/* settings                                                            */
/* ------------------------------------------------------------------ */

/* "PORT", ":PORT", "ADDR:PORT" or "[ADDR6]:PORT"; without an address loopback */
static int pp_parse_listen(struct pp_state *st, const char *val, const char *where)
{
	char host[INET6_ADDRSTRLEN + 2] = "";
	const char *port = val, *colon;
	uint64_t p;

	if (val[0] == '[') {
		const char *end = strchr(val, ']');

		if (!end || end[1] != ':' || (size_t)(end - val - 1) >= sizeof(host))
			goto bad;
		memcpy(host, val + 1, (size_t)(end - val - 1));
		host[end - val - 1] = 0;
		port = end + 2;
	} else if ((colon = strrchr(val, ':'))) {
		if ((size_t)(colon - val) >= sizeof(host))
			goto bad;
		memcpy(host, val, (size_t)(colon - val));
		host[colon - val] = 0;
		port = colon + 1;
	}
	if (!pu_parse_dec_u64(port, &p) || p == 0 || p > 65535)
		goto bad;
	memset(&st->addr, 0, sizeof(st->addr));
	if (!host[0] || strchr(host, ':') == NULL) {
		struct sockaddr_in *in = (void *)&st->addr;

		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)p);
		if (!host[0])
			in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		else if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
			goto bad;
		st->addr_len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (void *)&st->addr;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)p);
		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			goto bad;
		st->addr_len = sizeof(*in6);
	}
	snprintf(st->listen_text, sizeof(st->listen_text), "%s", val);
	return 0;
bad:
	st->host->log(st->ctx, OP_LOG_ERR,
		      "%s: \"%s\" is not a listen address: expected PORT, IPV4:PORT or "
		      "[IPV6]:PORT (port 1..65535)",
		      where, val);
	return -EINVAL;
}

static int pp_parse_uint(struct pp_state *st, const char *val, const char *where, unsigned lo,
			 unsigned hi, unsigned *out)
{
	uint64_t v;

	if (!pu_parse_dec_u64(val, &v) || v < lo || v > hi) {
		st->host->log(st->ctx, OP_LOG_ERR, "%s: \"%s\": expected a number %u..%u", where,
			      val, lo, hi);
		return -EINVAL;
	}
	*out = (unsigned)v;
	return 0;
}

static int pp_parse_bool(struct pp_state *st, const char *val, const char *where, bool *out)
{
	if (!strcmp(val, "1") || !strcmp(val, "yes") || !strcmp(val, "true")) {
		*out = true;
		return 0;
	}
	if (!strcmp(val, "0") || !strcmp(val, "no") || !strcmp(val, "false")) {
		*out = false;
		return 0;
	}
	st->host->log(st->ctx, OP_LOG_ERR, "%s: \"%s\": expected yes or no", where, val);
	return -EINVAL;
}

/* UID;UID;... */
static int pp_parse_uids(struct pp_state *st, const char *val, const char *where)
{
	const char *p = val;
	char num[24];
	uint64_t v;

	st->nr_allow_uid = 0;
	while (*p) {
		size_t n = strcspn(p, ";");

		if (n == 0 || n >= sizeof(num) || st->nr_allow_uid == PP_MAX_UIDS)
			goto bad;
		memcpy(num, p, n);
		num[n] = 0;
		if (!pu_parse_dec_u64(num, &v) || v >= (uid_t)-1)
			goto bad;
		st->allow_uid[st->nr_allow_uid++] = (uid_t)v;
		p += n + (p[n] == ';');
	}
	return 0;
bad:
	st->host->log(st->ctx, OP_LOG_ERR, "%s: \"%s\": expected 1..%d numeric uids, UID;UID...",
		      where, val, PP_MAX_UIDS);
	return -EINVAL;
}

static int pp_set(void *priv, const char *key, const char *val, const char *where)
{
	struct pp_state *st = priv;

	if (!strcmp(key, "listen"))
		return pp_parse_listen(st, val, where);
	if (!strcmp(key, "allow_remote"))
		return pp_parse_bool(st, val, where, &st->allow_remote);
	if (!strcmp(key, "allow_uid"))
		return pp_parse_uids(st, val, where);
	if (!strcmp(key, "max_seconds"))
		return pp_parse_uint(st, val, where, 1, PP_MAX_MAX_SECONDS, &st->max_seconds);
	if (!strcmp(key, "max_connections"))
		return pp_parse_uint(st, val, where, 1, PP_MAX_MAX_CONN, &st->max_conn);
	if (!strcmp(key, "helper_idle")) {
		char err[160];

		if (op_parse_interval(val, &st->idle_s, err, sizeof(err))) {
			st->host->log(st->ctx, OP_LOG_ERR, "%s: \"%s\": " NP_HELPER_IDLE_EXPECTED,
				      where, val);
			return -EINVAL;
		}
		return 0;
	}
	if (!strcmp(key, "user")) {
		if (!*val || strlen(val) >= sizeof(st->user)) {
			st->host->log(st->ctx, OP_LOG_ERR, "%s: \"%s\": expected a user name",
				      where, val);
			return -EINVAL;
		}
		snprintf(st->user, sizeof(st->user), "%s", val);
		return 0;
	}
	st->host->log(st->ctx, OP_LOG_ERR,
		      "%s: unknown setting \"%s\": expected listen, allow_remote, allow_uid, "
		      "max_seconds, max_connections, user or helper_idle",
		      where, key);
	return -EINVAL;
}

/* plugins.pprof.<key>: the keys of the arguments */
static int pp_read_config(struct pp_state *st)
{
	static const char *const strs[] = { "listen", "allow_uid", "user", "helper_idle", NULL };
	static const char *const ints[] = { "max_seconds", "max_connections", NULL };
	static const char *const bools[] = { "allow_remote", NULL };

	return np_read_config(st->host, st->ctx, "pprof", strs, ints, bools, pp_set, st);
}

/* bind in ext_init: a port in use stops the start with a message, not later */
static int pp_bind(struct pp_state *st)
{
	int one = 1, fd;

	fd = socket(st->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (st->addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&st->addr, st->addr_len) || listen(fd, 16)) {
		int e = errno;

		close(fd);
		errno = e;
		goto fail;
	}
	st->lfd = fd;
	return 0;
fail:
	st->host->log(st->ctx, OP_LOG_ERR, "listen=%s: cannot listen there: %s", st->listen_text,
		      strerror(errno));
	return -errno;
}

/* ------------------------------------------------------------------ */
/* answering the helper                                                */
/* ------------------------------------------------------------------ */

/*
 * Reply to request @id of helper generation @gen: @status with @body as a
 * sealed memfd (200) or @msg inline. A helper replaced meanwhile gets
 * nothing (its client saw it go); one that does not read is not waited
 * for beyond PP_SEND_TIMEOUT_MS.
 */
static void pp_reply(struct pp_state *st, uint64_t gen, uint32_t id, unsigned status,
		     const char *msg, const void *body, size_t len)
{
	int fd = -1;

	if (status == 200) {
		fd = np_memfd_new("oprofiled-pull-reply", body, len);
		if (fd < 0) {
			atomic_fetch_add(&st->errors, 1);
			st->host->log(st->ctx, OP_LOG_WARN, "reply body: %s", strerror(-fd));
			status = 500;
			msg = "cannot pass the body\n";
		}
	}
	pthread_mutex_lock(&st->send_lock);
	if (st->gen == gen && st->child.sock >= 0)
		np_msg_send(st->child.sock, PP_MSG_REPLY, id, status, msg, msg ? strlen(msg) : 0,
			    fd, PP_SEND_TIMEOUT_MS);
	pthread_mutex_unlock(&st->send_lock);
	if (fd >= 0)
		close(fd);
}

static void *pp_worker_main(void *arg)
{
	struct pp_worker *w = arg;
	struct pp_state *st = w->st;
	char msg[160];
	void *buf = NULL;
	size_t len = 0;
	int rc = np_session_delta(&st->sess, w->secs, &buf, &len, msg, sizeof(msg));

	if (rc == -ECANCELED) {
		pp_reply(st, w->gen, w->id, 503, "oprofiled is stopping\n", NULL, 0);
	} else if (rc) {
		atomic_fetch_add(&st->errors, 1);
		st->host->log(st->ctx, OP_LOG_WARN, "profile request: %s", msg);
		pp_reply(st, w->gen, w->id, 500, "cannot build the profile\n", NULL, 0);
	} else {
		atomic_fetch_add(&st->profiles, 1);
		atomic_fetch_add(&st->bytes, len);
		pp_reply(st, w->gen, w->id, 200, NULL, buf, len);
	}
	free(buf);
	atomic_store(&w->done, true);
	return NULL;
}

/* join the workers that finished; @all: wait for every one */
static void pp_join_workers(struct pp_state *st, bool all)
{
	unsigned i;

	for (i = 0; i < PP_MAX_ACTIVE; i++) {
		struct pp_worker *w = &st->workers[i];

		if (w->used && (all || atomic_load(&w->done))) {
			pthread_join(w->t, NULL);
			w->used = false;
		}
	}
}

static void pp_profile(struct pp_state *st, uint32_t id, unsigned secs)
{
	struct pp_worker *w = NULL;
	unsigned i;

	pp_join_workers(st, false);
	for (i = 0; i < PP_MAX_ACTIVE && !w; i++)
		if (!st->workers[i].used)
			w = &st->workers[i];
	if (!w) {
		atomic_fetch_add(&st->busy, 1);
		pp_reply(st, st->gen, id, 503,
			 "busy: other profiles are being built, ask again later\n", NULL, 0);
		return;
	}
	w->st = st;
	w->id = id;
	w->gen = st->gen;
	w->secs = secs;
	atomic_store(&w->done, false);
	if (np_thread_start(&w->t, pp_worker_main, w)) {
		atomic_fetch_add(&st->errors, 1);
		pp_reply(st, st->gen, id, 500, "cannot build the profile\n", NULL, 0);
		return;
	}
	w->used = true;
}

static void pp_metrics(struct pp_state *st, uint32_t id)
{
	const char *sdir = st->host->session_dir ? st->host->session_dir(st->ctx) : NULL;
	uint64_t now = np_now_mono_ns() / 1000000;
	char err[256], *text = NULL;
	size_t len = 0;
	int rc = 0;

	if (!sdir) {
		pp_reply(st, st->gen, id, 503, "no session directory\n", NULL, 0);
		return;
	}
	if (!st->metrics_text || now - st->metrics_ms >= PP_METRICS_CACHE_MS) {
		rc = pm_scrape(sdir, PP_METRICS_TIMEOUT_MS, &text, &len, err, sizeof(err));
		if (!rc) {
			free(st->metrics_text);
			st->metrics_text = text;
			st->metrics_len = len;
			st->metrics_ms = np_now_mono_ns() / 1000000;
		}
	}
	if (rc) {
		atomic_fetch_add(&st->metrics_errors, 1);
		st->host->log(st->ctx, OP_LOG_WARN, "/metrics: %s", err);
		pp_reply(st, st->gen, id, 503, "cannot read the statistics\n", NULL, 0);
		return;
	}
	atomic_fetch_add(&st->metrics, 1);
	pp_reply(st, st->gen, id, 200, NULL, st->metrics_text, st->metrics_len);
}

/* a line the helper logs: printable ASCII only, rate-limited */
static void pp_helper_log(struct pp_state *st, const struct np_msg *m)
{
	uint64_t now = np_now_mono_ns() / 1000000;
	char line[512];
	size_t i;

	if (now - st->log_window_ms >= PP_LOG_WINDOW_MS) {
		if (st->log_lines > PP_LOG_BURST)
			st->host->log(st->ctx, OP_LOG_WARN, "helper %s: %u lines not logged",
				      PP_HELPER, st->log_lines - PP_LOG_BURST);
		st->log_window_ms = now;
		st->log_lines = 0;
	}
	if (++st->log_lines > PP_LOG_BURST) {
		atomic_fetch_add(&st->log_dropped, 1);
		return;
	}
	for (i = 0; i < m->h.len && i < sizeof(line) - 1; i++)
		line[i] = (m->data[i] >= 0x20 && m->data[i] < 0x7f) ? m->data[i] : '?';
	line[i] = 0;
	st->host->log(st->ctx, m->h.arg == OP_LOG_ERR ? OP_LOG_ERR : OP_LOG_WARN, "helper %s: %s",
		      PP_HELPER, line);
}

/*
 * One message from the helper, checked: 0, or -EBADMSG with @why (the
 * helper is then killed and restarted).
 */
static int pp_handle(struct pp_state *st, const struct np_msg *m, char *why, size_t why_len)
{
	const struct np_msg_hdr *h = &m->h;

	if (m->fd >= 0) {
		snprintf(why, why_len, "a descriptor with a message of type %u", h->type);
		return -EBADMSG;
	}
	switch (h->type) {
	case NP_MSG_HELLO:
		if (h->arg != NP_MSG_VERSION || h->len) {
			snprintf(why, why_len, "hello of version %" PRIu64 ", expected %d", h->arg,
				 NP_MSG_VERSION);
			return -EBADMSG;
		}
		if (!st->served) {
			st->served = true;
			st->host->log(st->ctx, OP_LOG_INFO,
				      "serving http://%s/debug/pprof/profile?seconds=N (N <= %u, %u "
				      "connections; helper %s pid %d as %s)",
				      st->listen_text, st->max_seconds, st->max_conn, PP_HELPER,
				      (int)st->child.pid,
				      st->child.drop ? st->child.user : "the daemon's user");
		} else if (st->child.last_status != -1 && !st->child.last_idle) {
			/* on demand, a helper after an idle exit is no restart: not logged */
			st->host->log(st->ctx, OP_LOG_INFO, "helper %s restarted (pid %d)",
				      PP_HELPER, (int)st->child.pid);
		}
		return 0;
	case NP_MSG_LOG:
		if (h->arg > OP_LOG_DEBUG) {
			snprintf(why, why_len, "a log line of level %" PRIu64, h->arg);
			return -EBADMSG;
		}
		pp_helper_log(st, m);
		return 0;
	case PP_MSG_COUNT:
		if (h->arg >= PP_COUNT_NR || h->len) {
			snprintf(why, why_len, "count of counter %" PRIu64, h->arg);
			return -EBADMSG;
		}
		atomic_fetch_add(&st->counts[h->arg], 1);
		return 0;
	case PP_MSG_PROFILE:
		if (h->arg == 0 || h->arg > st->max_seconds || h->len) {
			snprintf(why, why_len, "a profile request of %" PRIu64 " seconds (1..%u)",
				 h->arg, st->max_seconds);
			return -EBADMSG;
		}
		pp_profile(st, h->id, (unsigned)h->arg);
		return 0;
	case PP_MSG_METRICS:
		if (h->len || h->arg) {
			snprintf(why, why_len, "a metrics request with arguments");
			return -EBADMSG;
		}
		pp_metrics(st, h->id);
		return 0;
	default:
		snprintf(why, why_len, "a message of unknown type %u", h->type);
		return -EBADMSG;
	}
}

/* the helper is gone or to go: reap it (@kill: SIGKILL first), say why */
static void pp_helper_ended(struct pp_state *st, bool kill, const char *why)
{
	char status[64];
	pid_t pid = st->child.pid;

	pthread_mutex_lock(&st->send_lock);
	if (kill)
		np_child_kill(&st->child);
	else
		np_child_stop(&st->child, PP_STOP_GRACE_MS);
	st->gen++;
	pthread_mutex_unlock(&st->send_lock);
	atomic_store(&st->helper_pid, 0);
	atomic_store(&st->last_status, st->child.last_status);
	atomic_store(&st->idle_exits, st->child.idle_exits);
	np_child_status_text(st->child.last_status, status, sizeof(status));
	if (atomic_load(&st->quit))
		return;
	if (st->child.last_idle) {
		st->host->log(st->ctx, OP_LOG_DEBUG,
			      "helper %s (pid %d) idle for %u s: exited; the next connection "
			      "starts it again",
			      PP_HELPER, (int)pid, st->idle_s);
		return;
	}
	st->host->log(st->ctx, OP_LOG_WARN, "helper %s (pid %d) %s%s: %s - restarting in %u ms",
		      PP_HELPER, (int)pid, kill ? "killed: it sent " : "ended", kill ? why : "",
		      status, st->child.delay_ms);
}

/* sleep @ms unless woken (the plugin stops) */
static void pp_sleep(struct pp_state *st, uint64_t ms)
{
	struct pollfd p = { .fd = st->wake[0], .events = POLLIN };

	poll(&p, 1, ms > 60000 ? 60000 : (int)ms);
}

/*
 * On demand, no helper running: wait for a connection on the listening
 * socket (it stays in the backlog: the helper accepts it). True when one
 * waits, false when woken to stop. The socket is not polled while a
 * helper runs: the helper accepts, this thread sleeps on its socket.
 */
static bool pp_wait_connection(struct pp_state *st)
{
	struct pollfd p[2] = { { .fd = st->wake[0], .events = POLLIN },
			       { .fd = st->lfd, .events = POLLIN } };

	if (poll(p, 2, -1) < 0)
		return false;
	return !p[0].revents && (p[1].revents & POLLIN);
}

/*
 * The plugin's thread: starts the helper (it outlives it: the helper's
 * death signal follows this thread) at start, or on demand when a
 * connection waits, restarts it with backoff after a crash, and answers
 * its messages.
 */
static void *pp_thread_main(void *arg)
{
	struct pp_state *st = arg;
	char why[256];
	int rc;

	while (!atomic_load(&st->quit)) {
		struct pollfd p[2];
		unsigned n;

		if (!st->child.pid) {
			uint64_t w = np_child_wait_ms(&st->child);

			if (w) {
				pp_sleep(st, w);
				continue;
			}
			if (st->idle_s && !pp_wait_connection(st))
				continue;
			pthread_mutex_lock(&st->send_lock);
			rc = np_child_spawn(&st->child, why, sizeof(why));
			if (!rc)
				st->gen++;
			pthread_mutex_unlock(&st->send_lock);
			if (rc) {
				atomic_fetch_add(&st->spawn_failures, 1);
				st->host->log(st->ctx, OP_LOG_ERR, "helper: %s - retrying in %u ms",
					      why, st->child.delay_ms);
				continue;
			}
			atomic_store(&st->restarts, st->child.restarts);
			atomic_store(&st->spawns, st->child.spawns);
			atomic_store(&st->helper_pid, st->child.pid);
		}
		p[0] = (struct pollfd){ .fd = st->wake[0], .events = POLLIN };
		p[1] = (struct pollfd){ .fd = st->child.sock, .events = POLLIN };
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		for (n = 0; n < PP_MSG_BATCH && st->child.pid; n++) {
			rc = np_msg_recv(st->child.sock, &st->msg, 0, why, sizeof(why));
			if (rc == -ETIMEDOUT)
				break;
			if (rc == 0)
				rc = pp_handle(st, &st->msg, why, sizeof(why));
			if (rc == -EBADMSG) {
				atomic_fetch_add(&st->bad_messages, 1);
				pp_helper_ended(st, true, why);
			} else if (rc) {
				pp_helper_ended(st, false, "");
			}
		}
	}
	pthread_mutex_lock(&st->send_lock);
	np_child_stop(&st->child, PP_STOP_GRACE_MS);
	pthread_mutex_unlock(&st->send_lock);
	atomic_store(&st->helper_pid, 0);
	return NULL;
}

static int pp_start(void *priv)
{
	struct pp_state *st = priv;
	int rc;

	if (pipe2(st->wake, O_CLOEXEC | O_NONBLOCK)) {
		st->wake[0] = st->wake[1] = -1;
		rc = -errno;
		st->host->log(st->ctx, OP_LOG_ERR, "pipe: %s", strerror(errno));
		return rc;
	}
	rc = np_thread_start(&st->thread, pp_thread_main, st);
	if (rc) {
		st->host->log(st->ctx, OP_LOG_ERR, "cannot start the thread: %s", strerror(-rc));
		return rc;
	}
	st->thread_on = true;
	if (st->idle_s) {
		/* no helper until the first connection: said now, as a resident one says at its hello */
		st->served = true;
		st->host->log(st->ctx, OP_LOG_INFO,
			      "serving http://%s/debug/pprof/profile?seconds=N (N <= %u, %u "
			      "connections; helper %s on demand as %s, exits after %u s idle)",
			      st->listen_text, st->max_seconds, st->max_conn, PP_HELPER,
			      st->child.drop ? st->child.user : "the daemon's user", st->idle_s);
	}
	return 0;
}

static void pp_stop(void *priv)
{
	struct pp_state *st = priv;

	/* waiting requests see the stop and answer 503 at once */
	np_session_stop(&st->sess);
	if (st->thread_on) {
		atomic_store(&st->quit, true);
		if (write(st->wake[1], "", 1) < 0) {
			/* the pipe is non-blocking and holds a byte already */
		}
		pthread_join(st->thread, NULL);
		st->thread_on = false;
	}
	pp_join_workers(st, true);
}

/* ------------------------------------------------------------------ */
/* daemon side                                                         */
/* ------------------------------------------------------------------ */

static void pp_print_stats(void *priv, const struct op_stats_sink *sink)
{
	static const char *const names[PP_COUNT_NR] = { "requests", "bad_requests", "not_found",
							"refused" };
	struct pp_state *st = priv;
	char line[448], status[64], demand[96];
	unsigned i;

	if (sink->counter) {
		for (i = 0; i < PP_COUNT_NR; i++)
			sink->counter(sink, names[i], atomic_load(&st->counts[i]));
		sink->counter(sink, "profiles", atomic_load(&st->profiles));
		sink->counter(sink, "bytes", atomic_load(&st->bytes));
		sink->counter(sink, "errors", atomic_load(&st->errors));
		sink->counter(sink, "busy", atomic_load(&st->busy));
		sink->counter(sink, "metrics", atomic_load(&st->metrics));
		sink->counter(sink, "metrics_errors", atomic_load(&st->metrics_errors));
		sink->counter(sink, "helper_restarts", atomic_load(&st->restarts));
		sink->counter(sink, "helper_spawns", atomic_load(&st->spawns));
		sink->counter(sink, "helper_idle_exits", atomic_load(&st->idle_exits));
		sink->counter(sink, "helper_spawn_failures", atomic_load(&st->spawn_failures));
		sink->counter(sink, "helper_bad_messages", atomic_load(&st->bad_messages));
		sink->counter(sink, "helper_log_dropped", atomic_load(&st->log_dropped));
	}
	if (sink->text) {
		int pid = atomic_load(&st->helper_pid);

		np_child_status_text(atomic_load(&st->last_status), status, sizeof(status));
		np_child_demand_text(st->idle_s, atomic_load(&st->spawns),
				     atomic_load(&st->idle_exits), demand, sizeof(demand));
		snprintf(line, sizeof(line),
			 "pull: http://%s/debug/pprof/ (%s), %" PRIu64 " profiles served; helper %s "
			 "pid %d, %" PRIu64 " restarts, last exit: %s%s",
			 st->listen_text,
			 pid                         ? "serving" :
			 st->idle_s && st->thread_on ? "listening, helper on demand" :
						       "not serving",
			 (uint64_t)atomic_load(&st->profiles), PP_HELPER, pid,
			 (uint64_t)atomic_load(&st->restarts), status, demand);
		sink->text(sink, line);
	}
}

static const struct op_stats_ops pp_stats_ops = {
	.size = sizeof(struct op_stats_ops),
	.print_stats = pp_print_stats,
};

static void pp_free(void *data)
{
	struct pp_state *st = data;

	pp_stop(st);
	if (st->child.pid) {
		pthread_mutex_lock(&st->send_lock);
		np_child_stop(&st->child, PP_STOP_GRACE_MS);
		pthread_mutex_unlock(&st->send_lock);
	}
	if (st->lfd >= 0)
		close(st->lfd);
	if (st->wake[0] >= 0) {
		close(st->wake[0]);
		close(st->wake[1]);
	}
	np_session_fini(&st->sess);
	pthread_mutex_destroy(&st->send_lock);
	free(st->metrics_text);
	free(st);
}

/* the helper's arguments: what it needs to decide a request alone */
static void pp_helper_args(struct pp_state *st)
{
	unsigned i, n = 0;
	size_t off;

	snprintf(st->argbuf[n++], sizeof(st->argbuf[0]), "%s", PP_HELPER);
	snprintf(st->argbuf[n++], sizeof(st->argbuf[0]), "--listen=%s", st->listen_text);
	snprintf(st->argbuf[n++], sizeof(st->argbuf[0]), "--max-seconds=%u", st->max_seconds);
	snprintf(st->argbuf[n++], sizeof(st->argbuf[0]), "--max-connections=%u", st->max_conn);
	snprintf(st->argbuf[n++], sizeof(st->argbuf[0]), "--daemon-uid=%u", (unsigned)geteuid());
	if (st->idle_s)
		snprintf(st->argbuf[n++], sizeof(st->argbuf[0]), "--idle-ms=%llu",
			 (unsigned long long)st->idle_s * 1000);
	if (st->nr_allow_uid) {
		off = (size_t)snprintf(st->argbuf[n], sizeof(st->argbuf[0]), "--allow-uid=");
		for (i = 0; i < st->nr_allow_uid; i++)
			off += (size_t)snprintf(st->argbuf[n] + off, sizeof(st->argbuf[0]) - off,
						"%s%u", i ? ";" : "", (unsigned)st->allow_uid[i]);
		n++;
	}
	for (i = 0; i < n; i++)
		st->argv[i] = st->argbuf[i];
	st->argv[n] = NULL;
}

static int pp_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct pp_state *st;
	char why[768];
	int rc;

	st = np_state_new(host, ctx, sizeof(*st), offsetof(struct pp_state, sess), pp_free, &rc);
	if (!st)
		return rc;
	st->lfd = -1;
	st->wake[0] = st->wake[1] = -1;
	st->child.pidfd = st->child.sock = -1;
	atomic_store(&st->last_status, -1);
	pthread_mutex_init(&st->send_lock, NULL);
	st->ctx = ctx;
	st->host = host;
	st->max_seconds = PP_DEFAULT_MAX_SECONDS;
	st->max_conn = PP_DEFAULT_MAX_CONN;
	st->idle_s = PP_DEFAULT_IDLE_S;
	rc = pp_parse_listen(st, "127.0.0.1:6060", "default");
	if (!rc)
		rc = pp_read_config(st);
	if (!rc)
		rc = np_parse_args(host, ctx, "pprof", args, pp_set, st);
	if (rc)
		return rc;
	if (!pp_is_loopback(&st->addr) && !st->allow_remote) {
		host->log(ctx, OP_LOG_ERR,
			  "listen=%s is not a loopback address: the profiles would be open to "
			  "the network - add allow_remote=yes (or plugins.pprof.allow_remote = "
			  "true) to mean it",
			  st->listen_text);
		return -EPERM;
	}
	rc = pp_bind(st);
	if (rc)
		return rc;
	pp_helper_args(st);
	/* the user and the program are checked now: errors show at start */
	rc = np_child_init(&st->child, PP_HELPER, st->user, st->lfd, st->argv, why, sizeof(why));
	if (rc) {
		host->log(ctx, OP_LOG_ERR, "%s", why);
		return rc;
	}
	st->child.idle_ms = (uint64_t)st->idle_s * 1000;
	return np_session_register(&st->sess, pp_start, pp_stop, &pp_stats_ops, st);
}

OP_EXT_DEFINE(.name = "pprof", .version = "1.1",
	      .summary = "pull: GET /debug/pprof/profile?seconds=N serves the delta as pprof "
			 "(libmicrohttpd in the unprivileged helper oprofiled-pull)",
	      .ext_init = pp_init);
