/*
 * pprof.c - the pprof pull plugin: serves GET /debug/pprof/profile?seconds=N
 * (the delta of the current session's counts over the next N seconds, as a
 * gzip'd profile.proto) and an index at /debug/pprof/, through libmicrohttpd
 * on threads of its own, so that a slow or stuck client never delays the
 * daemon's thread (which only ever takes a dump).
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <inttypes.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "metrics.h"
#include "netplug.h"
#include "plugin_util.h"

#define PP_DEFAULT_SECONDS 30 /* what net/http/pprof serves without ?seconds */
#define PP_DEFAULT_MAX_SECONDS 300
#define PP_MAX_MAX_SECONDS 3600
/*
 * Connections, each a thread while it lasts; a client such as pprof keeps
 * one or two alive between its requests, and on loopback every client
 * has the same address, so the bound is per server, not per address.
 */
#define PP_DEFAULT_MAX_CONN 16
#define PP_MAX_MAX_CONN 64
/* a request (line and headers) larger than this is refused by libmicrohttpd */
#define PP_REQUEST_MEM (16 * 1024)
/* addresses pprof may send to /debug/pprof/symbol in one request */
#define PP_SYMBOL_BODY_MAX (1u << 20)
/* allow_uid=UID;UID...: at most this many */
#define PP_MAX_UIDS 16
/*
 * Profiles built at once: each holds two reads of the session in memory
 * for its N seconds; more requests meanwhile are answered 503 at once.
 */
#define PP_MAX_ACTIVE 2
/* a client idle this long is dropped */
#define PP_IDLE_TIMEOUT_S 10
/*
 * GET /metrics: the daemon answers a status request between two drain
 * rounds (metrics.c); scrapes closer together than this share one answer,
 * so that scrapers, however many, cost the daemon's thread one a second
 */
#define PP_METRICS_CACHE_MS 1000
#define PP_METRICS_TIMEOUT_MS 3000

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

	int lfd; /* the listening socket, bound in ext_init (errors show at start) */
	struct MHD_Daemon *mhd;

	/* counters (written by connection threads, read by print_stats) */
	atomic_uint_fast64_t requests, profiles, bytes, bad_requests, not_found, errors, refused,
		busy;
	atomic_uint active; /* profiles being built */
	atomic_uint_fast64_t metrics, metrics_errors;

	/* the last /metrics text and when it was made (monotonic ms) */
	pthread_mutex_t metrics_lock;
	char *metrics_text;
	size_t metrics_len;
	uint64_t metrics_ms;
};

/* ------------------------------------------------------------------ */
/* settings                                                            */
/* ------------------------------------------------------------------ */

static bool pp_is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	return false;
}

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
	st->host->log(st->ctx, OP_LOG_ERR,
		      "%s: unknown setting \"%s\": expected listen, allow_remote, allow_uid, "
		      "max_seconds or max_connections",
		      where, key);
	return -EINVAL;
}

/* plugins.pprof.<key>: the keys of the arguments */
static int pp_read_config(struct pp_state *st)
{
	static const char *const strs[] = { "listen", "allow_uid", NULL };
	static const char *const ints[] = { "max_seconds", "max_connections", NULL };
	static const char *const bools[] = { "allow_remote", NULL };

	return np_read_config(st->host, st->ctx, "pprof", strs, ints, bools, pp_set, st);
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

static enum MHD_Result pp_reply(struct MHD_Connection *c, unsigned status, const char *type,
				void *body, size_t len, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result ret;

	if (!r) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
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

static enum MHD_Result pp_text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	return pp_reply(c, status, "text/plain; charset=utf-8", (void *)msg, strlen(msg),
			MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result pp_profile(struct pp_state *st, struct MHD_Connection *c)
{
	const char *s = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "seconds");
	uint64_t secs = PP_DEFAULT_SECONDS;
	char msg[160];
	void *buf = NULL;
	size_t len = 0;
	int rc;

	if (s && (!pu_parse_dec_u64(s, &secs) || secs == 0 || secs > st->max_seconds)) {
		atomic_fetch_add(&st->bad_requests, 1);
		snprintf(msg, sizeof(msg), "seconds: expected 1..%u\n", st->max_seconds);
		return pp_reply(c, MHD_HTTP_BAD_REQUEST, "text/plain; charset=utf-8", strdup(msg),
				strlen(msg), MHD_RESPMEM_MUST_FREE);
	}
	if (!s && secs > st->max_seconds)
		secs = st->max_seconds;
	if (atomic_fetch_add(&st->active, 1) >= PP_MAX_ACTIVE) {
		atomic_fetch_sub(&st->active, 1);
		atomic_fetch_add(&st->busy, 1);
		return pp_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
			       "busy: other profiles are being built, ask again later\n");
	}
	rc = np_session_delta(&st->sess, (unsigned)secs, &buf, &len, msg, sizeof(msg));
	atomic_fetch_sub(&st->active, 1);
	if (rc == -ECANCELED)
		return pp_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "oprofiled is stopping\n");
	if (rc) {
		atomic_fetch_add(&st->errors, 1);
		st->host->log(st->ctx, OP_LOG_WARN, "profile request: %s", msg);
		return pp_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot build the profile\n");
	}
	atomic_fetch_add(&st->profiles, 1);
	atomic_fetch_add(&st->bytes, len);
	return pp_reply(c, MHD_HTTP_OK, "application/octet-stream", buf, len, MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result pp_metrics(struct pp_state *st, struct MHD_Connection *c)
{
	const char *sdir = st->host->session_dir ? st->host->session_dir(st->ctx) : NULL;
	uint64_t now = np_now_mono_ns() / 1000000;
	char err[256], *text = NULL;
	size_t len = 0;
	int rc = 0;

	if (!sdir)
		return pp_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "no session directory\n");
	pthread_mutex_lock(&st->metrics_lock);
	if (!st->metrics_text || now - st->metrics_ms >= PP_METRICS_CACHE_MS) {
		rc = pm_scrape(sdir, PP_METRICS_TIMEOUT_MS, &text, &len, err, sizeof(err));
		if (!rc) {
			free(st->metrics_text);
			st->metrics_text = text;
			st->metrics_len = len;
			st->metrics_ms = np_now_mono_ns() / 1000000;
		}
	}
	if (!rc) {
		text = malloc(st->metrics_len ? st->metrics_len : 1);
		if (text) {
			memcpy(text, st->metrics_text, st->metrics_len);
			len = st->metrics_len;
		}
	}
	pthread_mutex_unlock(&st->metrics_lock);
	if (rc) {
		atomic_fetch_add(&st->metrics_errors, 1);
		st->host->log(st->ctx, OP_LOG_WARN, "/metrics: %s", err);
		return pp_text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "cannot read the statistics\n");
	}
	if (!text)
		return pp_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	atomic_fetch_add(&st->metrics, 1);
	return pp_reply(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text, len,
			MHD_RESPMEM_MUST_FREE);
}

/* what the first call of a request decided, kept in *con_cls */
static int pp_mark_get, pp_mark_symbol;

/*
 * The first call (headers read) decides: errors are answered at once,
 * without reading a body; a GET or the symbol POST waits for the end of
 * the request, whose body (if any) is read and dropped, never stored.
 */
static enum MHD_Result pp_first_call(struct pp_state *st, struct MHD_Connection *c, const char *url,
				     const char *method, void **con_cls)
{
	bool get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
	const char *cl;
	uint64_t n;

	atomic_fetch_add(&st->requests, 1);
	if (!strcmp(url, "/debug/pprof/symbol") && !strcmp(method, MHD_HTTP_METHOD_POST)) {
		cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (!cl || !pu_parse_dec_u64(cl, &n) || n > PP_SYMBOL_BODY_MAX) {
			atomic_fetch_add(&st->bad_requests, 1);
			return pp_text(c, cl ? MHD_HTTP_CONTENT_TOO_LARGE : MHD_HTTP_LENGTH_REQUIRED,
				       "a symbol request of at most 1 MiB with its length\n");
		}
		*con_cls = &pp_mark_symbol;
		return MHD_YES;
	}
	if (!get) {
		atomic_fetch_add(&st->bad_requests, 1);
		return pp_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET\n");
	}
	*con_cls = &pp_mark_get;
	return MHD_YES;
}

static enum MHD_Result pp_handler(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct pp_state *st = cls;

	(void)version;
	(void)upload;
	if (!*con_cls)
		return pp_first_call(st, c, url, method, con_cls);
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
	if (*con_cls == &pp_mark_symbol)
		return pp_text(c, MHD_HTTP_OK, "");
	if (!strcmp(url, "/debug/pprof/symbol"))
		return pp_text(c, MHD_HTTP_OK, "num_symbols: 0\n");
	if (!strcmp(url, "/debug/pprof/profile"))
		return pp_profile(st, c);
	if (!strcmp(url, "/metrics"))
		return pp_metrics(st, c);
	if (!strcmp(url, "/debug/pprof/") || !strcmp(url, "/debug/pprof"))
		return pp_reply(c, MHD_HTTP_OK, "text/html; charset=utf-8", (void *)pp_index,
				sizeof(pp_index) - 1, MHD_RESPMEM_PERSISTENT);
	atomic_fetch_add(&st->not_found, 1);
	return pp_text(c, MHD_HTTP_NOT_FOUND,
		       "not found: this server has /debug/pprof/, /debug/pprof/profile, "
		       "/debug/pprof/symbol and /metrics\n");
}

static void pp_mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct pp_state *st = cls;
	char line[320];

	vsnprintf(line, sizeof(line), fmt, ap);
	line[strcspn(line, "\n")] = 0;
	st->host->log(st->ctx, OP_LOG_WARN, "libmicrohttpd: %s", line);
}

/*
 * The owner of the client socket of a loopback connection: the line of
 * /proc/net/tcp (tcp6) whose local end is the client's address and port
 * and whose remote port is ours. 0 with *uid, or -ENOENT.
 */
static int pp_peer_uid(const struct pp_state *st, const struct sockaddr *peer, uid_t *uid)
{
	const bool v6 = peer->sa_family == AF_INET6;
	uint32_t want[4] = { 0 }, a[4];
	unsigned lport, rport, want_port, our_port, u;
	char line[512];
	FILE *f;
	int rc = -ENOENT;

	if (v6) {
		const struct sockaddr_in6 *in6 = (const void *)peer;

		memcpy(want, &in6->sin6_addr, sizeof(want));
		want_port = ntohs(in6->sin6_port);
		our_port = ntohs(((const struct sockaddr_in6 *)(const void *)&st->addr)->sin6_port);
	} else {
		const struct sockaddr_in *in = (const void *)peer;

		want[0] = in->sin_addr.s_addr;
		want_port = ntohs(in->sin_port);
		our_port = ntohs(((const struct sockaddr_in *)(const void *)&st->addr)->sin_port);
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
		if (!n || lport != want_port || rport != our_port)
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
static enum MHD_Result pp_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct pp_state *st = cls;
	struct sockaddr_storage ss = { 0 };
	uid_t uid = (uid_t)-1;
	unsigned i;

	memcpy(&ss, addr, len < sizeof(ss) ? len : sizeof(ss));
	if (!pp_is_loopback(&ss))
		return MHD_YES;
	if (pp_peer_uid(st, addr, &uid) == 0) {
		if (uid == 0 || uid == geteuid())
			return MHD_YES;
		for (i = 0; i < st->nr_allow_uid; i++)
			if (uid == st->allow_uid[i])
				return MHD_YES;
	}
	atomic_fetch_add(&st->refused, 1);
	return MHD_NO;
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

static int pp_start(void *priv)
{
	struct pp_state *st = priv;
	sigset_t all, old;
	int rc = 0;

	sigfillset(&all);
	/* libmicrohttpd's threads inherit this mask: the daemon's signals stay its own */
	pthread_sigmask(SIG_SETMASK, &all, &old);
	/*
	 * poll(), not libmicrohttpd's default select(): the daemon holds a
	 * descriptor per open sample file (max_open_files, 2048 by default),
	 * and select() refused every connection whose descriptor was >= 1024
	 * (FD_SETSIZE) - a pull reset on any busy host
	 */
	st->mhd = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
					   MHD_USE_POLL | MHD_USE_ERROR_LOG,
				   0, pp_accept, st, pp_handler, st, MHD_OPTION_EXTERNAL_LOGGER,
				   pp_mhd_log, st, MHD_OPTION_LISTEN_SOCKET, st->lfd,
				   MHD_OPTION_CONNECTION_LIMIT, st->max_conn,
				   MHD_OPTION_THREAD_STACK_SIZE, (size_t)NP_THREAD_STACK,
				   MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)PP_REQUEST_MEM,
				   MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PP_IDLE_TIMEOUT_S,
				   MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!st->mhd) {
		st->host->log(st->ctx, OP_LOG_ERR, "listen=%s: libmicrohttpd did not start",
			      st->listen_text);
		rc = -EIO;
	} else {
		st->lfd = -1; /* libmicrohttpd owns it now */
		st->host->log(st->ctx, OP_LOG_INFO,
			      "serving http://%s/debug/pprof/profile?seconds=N (N <= %u, %u "
			      "connections)",
			      st->listen_text, st->max_seconds, st->max_conn);
	}
	return rc;
}

static void pp_stop(void *priv)
{
	struct pp_state *st = priv;

	/* waiting requests see the stop and answer 503 at once */
	np_session_stop(&st->sess);
	if (st->mhd) {
		MHD_stop_daemon(st->mhd);
		st->mhd = NULL;
	}
}

/* ------------------------------------------------------------------ */
/* daemon side                                                         */
/* ------------------------------------------------------------------ */

static void pp_print_stats(void *priv, const struct op_stats_sink *sink)
{
	struct pp_state *st = priv;
	char line[256];

	if (sink->counter) {
		sink->counter(sink, "requests", atomic_load(&st->requests));
		sink->counter(sink, "profiles", atomic_load(&st->profiles));
		sink->counter(sink, "bytes", atomic_load(&st->bytes));
		sink->counter(sink, "bad_requests", atomic_load(&st->bad_requests));
		sink->counter(sink, "not_found", atomic_load(&st->not_found));
		sink->counter(sink, "errors", atomic_load(&st->errors));
		sink->counter(sink, "refused", atomic_load(&st->refused));
		sink->counter(sink, "busy", atomic_load(&st->busy));
		sink->counter(sink, "metrics", atomic_load(&st->metrics));
		sink->counter(sink, "metrics_errors", atomic_load(&st->metrics_errors));
	}
	if (sink->text) {
		snprintf(line, sizeof(line),
			 "pull: http://%s/debug/pprof/ (%s), %" PRIu64 " profiles served",
			 st->listen_text, st->mhd ? "serving" : "not serving",
			 (uint64_t)atomic_load(&st->profiles));
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
	if (st->lfd >= 0)
		close(st->lfd);
	np_session_fini(&st->sess);
	pthread_mutex_destroy(&st->metrics_lock);
	free(st->metrics_text);
	free(st);
}

static int pp_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct pp_state *st;
	int rc;

	st = np_state_new(host, ctx, sizeof(*st), offsetof(struct pp_state, sess), pp_free, &rc);
	if (!st)
		return rc;
	st->lfd = -1;
	pthread_mutex_init(&st->metrics_lock, NULL);
	st->ctx = ctx;
	st->host = host;
	st->max_seconds = PP_DEFAULT_MAX_SECONDS;
	st->max_conn = PP_DEFAULT_MAX_CONN;
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
	return np_session_register(&st->sess, pp_start, pp_stop, &pp_stats_ops, st);
}

OP_EXT_DEFINE(.name = "pprof", .version = "1.0",
	      .summary = "pull: GET /debug/pprof/profile?seconds=N serves the delta as pprof "
			 "(libmicrohttpd)",
	      .ext_init = pp_init);
