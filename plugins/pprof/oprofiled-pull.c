/*
 * oprofiled-pull.c - the pprof plugin's HTTP side, in a process of its own
 * (privilege separation, issue 20): started by the plugin through
 * plugins/common/np_child as an unprivileged user (nobody) with the
 * daemon's socket as fd 3 and the listening socket the daemon bound as
 * fd 4, it runs libmicrohttpd there, answers /debug/pprof/ and
 * /debug/pprof/symbol itself, refuses what is malformed, too large or from
 * a local user who may not pull, and forwards /debug/pprof/profile and
 * /metrics to the daemon, whose reply body comes back as a sealed memfd.
 * The daemon's process maps no HTTP parser and no TLS library; a flaw in
 * them reaches an unprivileged process that holds no sample file.
 * With --idle-ms (the plugin's helper_idle) it is started on demand, when
 * a connection waits on the listening socket, and exits by itself after
 * that long without a connection open (NP_CHILD_EXIT_IDLE); connections
 * that come meanwhile wait in the socket's backlog for the next one.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "np_child.h"
#include "oprofile_sdk.h"
#include "plugin_util.h"
#include "pull_proto.h"

/* a request (line and headers) larger than this is refused by libmicrohttpd */
#define PP_REQUEST_MEM (16 * 1024)
/* addresses pprof may send to /debug/pprof/symbol in one request */
#define PP_SYMBOL_BODY_MAX (1u << 20)
#define PP_MAX_UIDS 16
/* a client idle this long is dropped */
#define PP_IDLE_TIMEOUT_S 10
/* the stack of each connection thread: libmicrohttpd and a memfd reply need little */
#define PP_THREAD_STACK (256u * 1024)
/* beyond the seconds asked for: the daemon's dumps and the encoding */
#define PP_PROFILE_SLACK_S 60
#define PP_METRICS_WAIT_S 10
/* while a connection is open, how often the idle clock is looked at */
#define PP_IDLE_CHECK_MS 250
/*
 * After it stopped accepting: no connection for this long before it
 * exits (one accepted just as it stopped is seen by then, and served)
 */
#define PP_QUIESCE_SETTLE_MS 100

static struct {
	unsigned max_seconds, max_conn;
	uid_t daemon_uid;
	uid_t allow_uid[PP_MAX_UIDS];
	unsigned nr_allow_uid;
	unsigned short port; /* ours, from the listening socket */
	const char *listen;
	uint64_t idle_ms; /* 0: stay until the daemon stops */
} cfg;

/* the connections open now and when the last one closed (monotonic ms) */
static atomic_uint open_conns;
static atomic_uint_fast64_t last_close_ms;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* requests waiting for the daemon's reply, one per connection at most */
struct pending {
	bool used, done;
	uint32_t id;
	unsigned status;
	int fd;
	char text[256];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct pending pend[PP_MAX_MAX_CONN];
static uint32_t next_id = 1;
static bool daemon_gone;

static void count(enum pp_count what)
{
	np_msg_send(NP_CHILD_SOCK_FD, PP_MSG_COUNT, 0, what, NULL, 0, -1, 1000);
}

static void hlog(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void hlog(int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	np_msg_log(NP_CHILD_SOCK_FD, level, "%s", line);
}

/* ------------------------------------------------------------------ */
/* asking the daemon                                                   */
/* ------------------------------------------------------------------ */

/*
 * Send request @type (arg @arg) and wait up to @wait_s for the reply:
 * the HTTP status, with *fd the body (200) or @text the message.
 */
static unsigned ask(uint16_t type, uint64_t arg, unsigned wait_s, int *fd, char *text,
		    size_t text_len)
{
	struct timespec end;
	struct pending *p = NULL;
	unsigned i, status;
	uint32_t id;
	int rc = 0;

	*fd = -1;
	pthread_mutex_lock(&lock);
	for (i = 0; i < PP_MAX_MAX_CONN && !p; i++)
		if (!pend[i].used)
			p = &pend[i];
	if (!p || daemon_gone) {
		pthread_mutex_unlock(&lock);
		snprintf(text, text_len, "%s\n", p ? "oprofiled is stopping" : "busy");
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	id = next_id++;
	*p = (struct pending){ .used = true, .id = id, .fd = -1 };
	pthread_mutex_unlock(&lock);
	if (np_msg_send(NP_CHILD_SOCK_FD, type, id, arg, NULL, 0, -1, 5000)) {
		pthread_mutex_lock(&lock);
		p->used = false;
		pthread_mutex_unlock(&lock);
		snprintf(text, text_len, "oprofiled does not answer\n");
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += wait_s;
	pthread_mutex_lock(&lock);
	while (!p->done && !daemon_gone && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&cond, &lock, &end);
	if (p->done) {
		status = p->status;
		*fd = p->fd;
		snprintf(text, text_len, "%s", p->text);
	} else {
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
		snprintf(text, text_len, "%s\n",
			 daemon_gone ? "oprofiled is stopping" : "oprofiled did not answer in time");
	}
	p->used = false;
	pthread_mutex_unlock(&lock);
	return status;
}

/*
 * On demand: how long to wait for the daemon before the idle clock is
 * looked at again (-1: never), and whether the idle time has passed with
 * no connection open. Requests in flight hold their connection open.
 */
static int idle_wait(bool *idle)
{
	uint64_t now, last;

	*idle = false;
	if (!cfg.idle_ms)
		return -1;
	if (atomic_load(&open_conns))
		return PP_IDLE_CHECK_MS;
	now = now_ms();
	last = atomic_load(&last_close_ms);
	if (now - last >= cfg.idle_ms) {
		*idle = true;
		return 0;
	}
	return (int)(last + cfg.idle_ms - now);
}

/*
 * The daemon's messages, on the main thread: replies go to the request
 * that waits for them (a late one, whose client went, is dropped). A
 * malformed message ends the helper: the daemon restarts it. On demand,
 * once idle, it stops accepting (the listening socket's backlog keeps
 * what comes next for the next helper), serves what it accepted still,
 * and returns NP_CHILD_EXIT_IDLE when none is left.
 */
static int serve_daemon(struct MHD_Daemon *mhd)
{
	static struct np_msg m;
	uint64_t quiet_since = 0;
	bool quiesced = false;
	char why[256];

	for (;;) {
		unsigned i;
		size_t len;
		bool idle;
		int wait = idle_wait(&idle), rc;

		if (idle && !quiesced) {
			/* libmicrohttpd polls the listening socket no more from here */
			if (MHD_quiesce_daemon(mhd) == MHD_INVALID_SOCKET) {
				hlog(OP_LOG_ERR, "libmicrohttpd cannot stop accepting");
				cfg.idle_ms = 0;
				continue;
			}
			quiesced = true;
			quiet_since = now_ms();
		}
		if (quiesced) {
			if (atomic_load(&open_conns))
				quiet_since = now_ms();
			else if (now_ms() - quiet_since >= PP_QUIESCE_SETTLE_MS)
				return NP_CHILD_EXIT_IDLE;
			wait = PP_QUIESCE_SETTLE_MS / 2;
		}
		rc = np_msg_recv(NP_CHILD_SOCK_FD, &m, wait, why, sizeof(why));
		if (rc == -ETIMEDOUT)
			continue;
		if (rc == -EPIPE)
			return 0;
		if (rc) {
			hlog(OP_LOG_ERR, "from the daemon: %s",
			     rc == -EBADMSG ? why : strerror(-rc));
			return 3;
		}
		if (m.h.type != PP_MSG_REPLY ||
		    (m.h.arg != MHD_HTTP_OK && m.h.arg != 400 && m.h.arg != 500 && m.h.arg != 503)) {
			hlog(OP_LOG_ERR, "from the daemon: a message of type %u, status %llu",
			     m.h.type, (unsigned long long)m.h.arg);
			return 3;
		}
		if ((m.h.arg == MHD_HTTP_OK) != (m.fd >= 0) ||
		    (m.fd >= 0 && np_memfd_check(m.fd, PP_BODY_MAX, &len, why, sizeof(why)))) {
			hlog(OP_LOG_ERR, "from the daemon: a reply %s",
			     m.fd >= 0 ? why : "without its body");
			return 3;
		}
		pthread_mutex_lock(&lock);
		for (i = 0; i < PP_MAX_MAX_CONN; i++) {
			struct pending *p = &pend[i];

			if (!p->used || p->done || p->id != m.h.id)
				continue;
			p->done = true;
			p->status = (unsigned)m.h.arg;
			p->fd = m.fd;
			/* a message for the client, cut to what a reply holds */
			memcpy(p->text, m.data, sizeof(p->text) - 1);
			p->text[m.h.len < sizeof(p->text) ? m.h.len : sizeof(p->text) - 1] = 0;
			m.fd = -1;
			pthread_cond_broadcast(&cond);
			break;
		}
		pthread_mutex_unlock(&lock);
		if (m.fd >= 0)
			close(m.fd);
	}
}

/* ------------------------------------------------------------------ */
/* HTTP                                                                */
/* ------------------------------------------------------------------ */

static const char pp_index[] = "<html><head><title>/debug/pprof/</title></head><body>\n"
			       "<p>oprofiled: system-wide CPU profile of the current session</p>\n"
			       "<table><tr><td><a href=\"profile?seconds=30\">profile</a></td>"
			       "<td>the samples of the next N seconds (?seconds=N), as a gzip'd "
			       "profile.proto with build IDs and addresses</td></tr>\n"
			       "<tr><td><a href=\"/metrics\">/metrics</a></td>"
			       "<td>the daemon's statistics (opcontrol --status) in Prometheus' "
			       "text format</td></tr></table>\n"
			       "</body></html>\n";

static enum MHD_Result finish(struct MHD_Connection *c, unsigned status, const char *type,
			      struct MHD_Response *r)
{
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	/* the daemon's data never belongs in a cache */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	/*
	 * One request per connection: a client that opens a connection per
	 * request and keeps each one idle (pprof's symbol lookups do, one per
	 * mapping) would otherwise hold a connection slot and its thread for
	 * the idle timeout each, and soon find the server full.
	 */
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	if (status == MHD_HTTP_OK && !strcmp(type, "application/octet-stream"))
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_DISPOSITION,
					"attachment; filename=\"profile\"");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return finish(c, status, "text/plain; charset=utf-8",
		      MHD_create_response_from_buffer(strlen(msg), (void *)msg,
						      MHD_RESPMEM_MUST_COPY));
}

/* the daemon's answer: a body by memfd (200) or a message */
static enum MHD_Result forward(struct MHD_Connection *c, uint16_t type, uint64_t arg,
			       unsigned wait_s, const char *ok_type)
{
	char msg[256];
	size_t len;
	int fd;
	unsigned status = ask(type, arg, wait_s, &fd, msg, sizeof(msg));

	if (status != MHD_HTTP_OK)
		return text(c, status, msg);
	/* checked when received; libmicrohttpd sends it from the fd and closes it */
	if (np_memfd_check(fd, PP_BODY_MAX, &len, msg, sizeof(msg))) {
		close(fd);
		return text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "bad reply\n");
	}
	return finish(c, MHD_HTTP_OK, ok_type, MHD_create_response_from_fd(len, fd));
}

static enum MHD_Result profile(struct MHD_Connection *c)
{
	const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
	uint64_t secs = 30; /* what net/http/pprof serves without ?seconds */
	char msg[160];

	if (s && (!pu_parse_dec_u64(s, &secs) || secs == 0 || secs > cfg.max_seconds)) {
		count(PP_COUNT_BAD_REQUESTS);
		snprintf(msg, sizeof(msg), "seconds: expected 1..%u\n", cfg.max_seconds);
		return text(c, MHD_HTTP_BAD_REQUEST, msg);
	}
	if (!s && secs > cfg.max_seconds)
		secs = cfg.max_seconds;
	return forward(c, PP_MSG_PROFILE, secs, (unsigned)secs + PP_PROFILE_SLACK_S,
		       "application/octet-stream");
}

/* what the first call of a request decided, kept in *con_cls */
static int mark_get, mark_symbol;

/*
 * The first call (headers read) decides: errors are answered at once,
 * without reading a body; a GET or the symbol POST waits for the end of
 * the request, whose body (if any) is read and dropped, never stored.
 */
static enum MHD_Result first_call(struct MHD_Connection *c, const char *url, const char *method,
				  void **con_cls)
{
	bool get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
	const char *cl;
	uint64_t n;

	count(PP_COUNT_REQUESTS);
	if (!strcmp(url, "/debug/pprof/symbol") && !strcmp(method, MHD_HTTP_METHOD_POST)) {
		cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (!cl || !pu_parse_dec_u64(cl, &n) || n > PP_SYMBOL_BODY_MAX) {
			count(PP_COUNT_BAD_REQUESTS);
			return text(c, cl ? MHD_HTTP_CONTENT_TOO_LARGE : MHD_HTTP_LENGTH_REQUIRED,
				    "a symbol request of at most 1 MiB with its length\n");
		}
		*con_cls = &mark_symbol;
		return MHD_YES;
	}
	if (!get) {
		count(PP_COUNT_BAD_REQUESTS);
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	}
	*con_cls = &mark_get;
	return MHD_YES;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url,
			       const char *method, const char *version, const char *upload,
			       size_t *upload_size, void **con_cls)
{
	(void)cls;
	(void)version;
	(void)upload;
	if (!*con_cls)
		return first_call(c, url, method, con_cls);
	if (*upload_size) {
		*upload_size = 0; /* read and dropped */
		return MHD_YES;
	}
	/*
	 * pprof asks here for the names of the addresses it could not name
	 * from local binaries; the daemon holds no symbols (the fleet default:
	 * the store symbolizes by build ID), so the answer names none, which
	 * pprof takes as "leave them as addresses".
	 */
	if (*con_cls == &mark_symbol)
		return text(c, MHD_HTTP_OK, "");
	if (!strcmp(url, "/debug/pprof/symbol"))
		return text(c, MHD_HTTP_OK, "num_symbols: 0\n");
	if (!strcmp(url, "/debug/pprof/profile"))
		return profile(c);
	if (!strcmp(url, "/metrics"))
		return forward(c, PP_MSG_METRICS, 0, PP_METRICS_WAIT_S,
			       "text/plain; version=0.0.4; charset=utf-8");
	if (!strcmp(url, "/debug/pprof/") || !strcmp(url, "/debug/pprof"))
		return finish(c, MHD_HTTP_OK, "text/html; charset=utf-8",
			      MHD_create_response_from_buffer(sizeof(pp_index) - 1, (void *)pp_index,
							      MHD_RESPMEM_PERSISTENT));
	count(PP_COUNT_NOT_FOUND);
	return text(c, MHD_HTTP_NOT_FOUND,
		    "not found: this server has /debug/pprof/, /debug/pprof/profile, "
		    "/debug/pprof/symbol and /metrics\n");
}

/* on demand: the idle clock runs while no connection is open */
static void conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			enum MHD_ConnectionNotificationCode code)
{
	(void)cls;
	(void)c;
	(void)socket_context;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		atomic_fetch_add(&open_conns, 1);
	} else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
		atomic_store(&last_close_ms, now_ms());
		atomic_fetch_sub(&open_conns, 1);
	}
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char line[320];

	(void)cls;
	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	hlog(OP_LOG_WARN, "libmicrohttpd: %s", line);
}

/*
 * The owner of the client socket of a loopback connection: the line of
 * /proc/net/tcp (tcp6) whose local end is the client's address and port
 * and whose remote port is ours. 0 with *uid, or -ENOENT. Done here, not
 * in the daemon: /proc/net/tcp is world-readable, so the unprivileged
 * helper can refuse a connection before it reads a byte of it, without a
 * round trip; the rule's data (the daemon's uid, allow_uid) came as
 * arguments.
 */
static int peer_uid(const struct sockaddr *peer, uid_t *uid)
{
	const bool v6 = peer->sa_family == AF_INET6;
	uint32_t want[4] = { 0 }, a[4];
	unsigned lport, rport, want_port, u;
	char line[512];
	FILE *f;
	int rc = -ENOENT;

	if (v6) {
		const struct sockaddr_in6 *in6 = (const void *)peer;

		memcpy(want, &in6->sin6_addr, sizeof(want));
		want_port = ntohs(in6->sin6_port);
	} else {
		const struct sockaddr_in *in = (const void *)peer;

		want[0] = in->sin_addr.s_addr;
		want_port = ntohs(in->sin_port);
	}
	f = fopen(v6 ? "/proc/net/tcp6" : "/proc/net/tcp", "re");
	if (!f)
		return -errno;
	while (rc && fgets(line, sizeof(line), f)) {
		int n;

		/* the kernel prints each address word as the u32 it holds in memory */
		if (v6)
			n = sscanf(line,
				   " %*u: %8X%8X%8X%8X:%X %*32[0-9A-F]:%X %*X %*X:%*X %*X:%*X %*X %u",
				   &a[0], &a[1], &a[2], &a[3], &lport, &rport, &u) == 7;
		else
			n = sscanf(line, " %*u: %8X:%X %*8X:%X %*X %*X:%*X %*X:%*X %*X %u", &a[0],
				   &lport, &rport, &u) == 4;
		if (!n || lport != want_port || rport != cfg.port)
			continue;
		if (memcmp(a, want, v6 ? sizeof(want) : sizeof(want[0])))
			continue;
		*uid = (uid_t)u;
		rc = 0;
	}
	fclose(f);
	return rc;
}

/*
 * libmicrohttpd asks before it takes a connection. A loopback client is
 * any local user: only root, the daemon's own user and allow_uid may pull
 * (a root session is private); remote clients were allowed by
 * allow_remote, which was the operator's explicit choice.
 */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct sockaddr_storage ss = { 0 };
	uid_t uid = (uid_t)-1;
	unsigned i;

	(void)cls;
	memcpy(&ss, addr, len < sizeof(ss) ? len : sizeof(ss));
	if (!pp_is_loopback(&ss))
		return MHD_YES;
	if (peer_uid(addr, &uid) == 0) {
		if (uid == 0 || uid == cfg.daemon_uid)
			return MHD_YES;
		for (i = 0; i < cfg.nr_allow_uid; i++)
			if (uid == cfg.allow_uid[i])
				return MHD_YES;
	}
	count(PP_COUNT_REFUSED);
	return MHD_NO;
}

/* ------------------------------------------------------------------ */
/* arguments                                                           */
/* ------------------------------------------------------------------ */

static int usage(FILE *f, int rc)
{
	fprintf(f,
		"usage: %s --listen=TEXT --max-seconds=N --max-connections=N --daemon-uid=UID "
		"[--allow-uid=UID;UID...] [--idle-ms=MS]\n"
		"The pprof plugin of oprofiled starts this helper, with its socket as fd 3 and "
		"the listening socket as fd 4; see oprofiled-pull(8).\n",
		PP_HELPER);
	return rc;
}

static int arg_uint(const char *a, const char *key, uint64_t max, uint64_t *v)
{
	size_t n = strlen(key);

	if (strncmp(a, key, n) || a[n] != '=')
		return 0;
	if (!pu_parse_dec_u64(a + n + 1, v) || *v > max)
		return -1;
	return 1;
}

static int parse_args(int argc, char **argv, char *why, size_t why_len)
{
	uint64_t v;
	int i, r;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if ((r = arg_uint(a, "--max-seconds", PP_MAX_MAX_SECONDS, &v)) != 0) {
			cfg.max_seconds = (unsigned)v;
		} else if ((r = arg_uint(a, "--max-connections", PP_MAX_MAX_CONN, &v)) != 0) {
			cfg.max_conn = (unsigned)v;
		} else if ((r = arg_uint(a, "--daemon-uid", (uid_t)-2, &v)) != 0) {
			cfg.daemon_uid = (uid_t)v;
		} else if ((r = arg_uint(a, "--idle-ms", 86400ull * 366 * 1000, &v)) != 0) {
			cfg.idle_ms = v;
		} else if (!strncmp(a, "--listen=", 9)) {
			cfg.listen = a + 9;
			r = 1;
		} else if (!strncmp(a, "--allow-uid=", 12)) {
			const char *p = a + 12;
			char num[24];

			r = 1;
			while (*p && r > 0) {
				size_t n = strcspn(p, ";");

				if (n == 0 || n >= sizeof(num) || cfg.nr_allow_uid == PP_MAX_UIDS) {
					r = -1;
					break;
				}
				memcpy(num, p, n);
				num[n] = 0;
				if (!pu_parse_dec_u64(num, &v) || v >= (uid_t)-1)
					r = -1;
				else
					cfg.allow_uid[cfg.nr_allow_uid++] = (uid_t)v;
				p += n + (p[n] == ';');
			}
		} else {
			r = -1;
		}
		if (r < 0) {
			snprintf(why, why_len, "argument \"%s\" not understood", a);
			return -EINVAL;
		}
	}
	if (!cfg.max_seconds || !cfg.max_conn || !cfg.listen) {
		snprintf(why, why_len, "--listen, --max-seconds and --max-connections are needed");
		return -EINVAL;
	}
	return 0;
}

/* fd 4: a listening TCP socket; our port for the peer-uid lookup */
static int check_listen_fd(char *why, size_t why_len)
{
	struct sockaddr_storage ss;
	socklen_t l = sizeof(ss);
	int acc = 0;
	socklen_t al = sizeof(acc);

	if (getsockopt(NP_CHILD_EXTRA_FD, SOL_SOCKET, SO_ACCEPTCONN, &acc, &al) || !acc ||
	    getsockname(NP_CHILD_EXTRA_FD, (struct sockaddr *)&ss, &l) ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)) {
		snprintf(why, why_len, "descriptor %d is not a listening TCP socket",
			 NP_CHILD_EXTRA_FD);
		return -EBADF;
	}
	cfg.port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port :
						   ((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

int main(int argc, char **argv)
{
	struct MHD_Daemon *mhd;
	char why[256];
	int rc;

	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("%s (oprofile-ng) %s\n", PP_HELPER, PACKAGE_VERSION);
		return 0;
	}
	if (argc == 2 &&
	    (!strcmp(argv[1], "--usage") || !strcmp(argv[1], "-?") || !strcmp(argv[1], "--help")))
		return usage(stdout, 0);
	if (np_child_check_fd(why, sizeof(why))) {
		fprintf(stderr, "%s: %s\n", PP_HELPER, why);
		return usage(stderr, 2);
	}
	/* a client that goes while its reply is sent must not end the helper */
	signal(SIGPIPE, SIG_IGN);
	if (parse_args(argc, argv, why, sizeof(why)) || check_listen_fd(why, sizeof(why))) {
		hlog(OP_LOG_ERR, "%s", why);
		return 2;
	}
	/*
	 * poll(), not libmicrohttpd's default select(), which refuses a
	 * connection whose descriptor is >= FD_SETSIZE
	 */
	/* the idle clock starts now: a helper started for a connection serves it first */
	atomic_store(&last_close_ms, now_ms());
	/*
	 * MHD_USE_ITC: MHD_quiesce_daemon (on demand) wakes the polling
	 * thread through it, so that no connection is accepted after it
	 */
	mhd = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
				       MHD_USE_POLL | MHD_USE_ERROR_LOG | MHD_USE_ITC,
			       0, accept_policy, NULL, handler, NULL, MHD_OPTION_EXTERNAL_LOGGER,
			       mhd_log, NULL, MHD_OPTION_NOTIFY_CONNECTION, conn_notify, NULL,
			       MHD_OPTION_LISTEN_SOCKET, NP_CHILD_EXTRA_FD,
			       MHD_OPTION_CONNECTION_LIMIT, cfg.max_conn,
			       MHD_OPTION_THREAD_STACK_SIZE, (size_t)PP_THREAD_STACK,
			       MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)PP_REQUEST_MEM,
			       MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PP_IDLE_TIMEOUT_S,
			       MHD_OPTION_END);
	if (!mhd) {
		hlog(OP_LOG_ERR, "listen=%s: libmicrohttpd did not start", cfg.listen);
		return 2;
	}
	np_msg_send(NP_CHILD_SOCK_FD, NP_MSG_HELLO, 0, NP_MSG_VERSION, NULL, 0, -1, 1000);
	rc = serve_daemon(mhd);
	if (rc == NP_CHILD_EXIT_IDLE) {
		/* nothing open, nothing accepted: the next connection starts the next helper */
		MHD_stop_daemon(mhd);
		_exit(rc);
	}
	/*
	 * The daemon closed its end (it stops) or spoke nonsense: waiting
	 * requests answer 503 and get a moment to be sent; the daemon kills
	 * what remains after its grace time.
	 */
	pthread_mutex_lock(&lock);
	daemon_gone = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	usleep(200 * 1000);
	_exit(rc);
}
