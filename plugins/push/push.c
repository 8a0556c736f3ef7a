/*
 * push.c - the push plugin: every interval (default: each rotation) the
 * delta of the session's counts goes as pprof to Pyroscope (POST /ingest)
 * or Parca (POST /api/profiles/writeraw), from a thread of its own and
 * through a bounded on-disk spool, so that a store that is slow, stuck or
 * down never delays sampling and loses nothing up to the spool's bound.
 * Credentials come from a file, never from the command line. The HTTP
 * itself (libcurl, TLS, the store's answers) runs in the helper program
 * oprofiled-push, unprivileged (np_child): this side builds each request
 * and checks each answer, and the daemon maps no libcurl or TLS library.
 * With helper_idle (the default) the helper runs only while there is
 * something to send: started for a spool entry that is due, stopped by
 * the sender thread after helper_idle without a request (whether or not
 * entries wait for a retry: a store that is down costs one start per
 * retry, at most one a minute at the backoff's longest).
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <nettle/base64.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "netplug.h"
#include "np_child.h"
#include "op_interval.h"
#include "op_trust.h"
#include "plugin_util.h"
#include "push_url.h"
#include "push_wire.h"
#include "spool.h"

#define PU_SPOOL_DIR "push-spool"
#define PU_DEFAULT_SERVICE "oprofiled"
#define PU_DEFAULT_SPOOL_MB 16
#define PU_DEFAULT_SPOOL_FILES 256
#define PU_DEFAULT_TIMEOUT_S 10
#define PU_MAX_LABELS 32
#define PU_LABEL_MAX 128
#define PU_BACKOFF_MIN_MS 1000
#define PU_BACKOFF_MAX_MS 60000
#define PU_AUTH_MAX 4096
/* the few rotations that may wait for the sender thread */
#define PU_ROTQ 8
/* the helper program and how long it gets for what */
#define PU_HELPER "oprofiled-push"
#define PU_HELLO_MS 5000     /* to start and say hello */
#define PU_SEND_MS 5000      /* to take a request (it reads at once unless stuck) */
#define PU_GRACE_S 5         /* beyond timeout= to answer: libcurl itself ends at timeout= */
#define PU_POLL_MS 200       /* while a request is under way: how soon a stop is seen */
#define PU_STOP_MS 1000      /* at stop, to exit once its socket closed */
#define PU_HELPER_LOGS 16    /* log lines it may send per hello or request */
#define PU_DEFAULT_IDLE_S 30 /* helper_idle (0: the helper stays from start to stop) */

enum pu_protocol { PU_PYROSCOPE, PU_PARCA };

struct pu_rotation {
	char dir[4096];
	uint64_t end_ns;
};

struct pu_cursor {
	struct np_snap *before; /* counts already sent (interval mode) */
	uint64_t before_ns;     /* when they were taken */
};

struct pu_state {
	op_ext_t *ctx;
	const struct op_host *host;
	struct np_session sess;

	/* settings */
	char *url; /* base: scheme://host[:port][/prefix] */
	enum pu_protocol proto;
	unsigned interval_s; /* 0: each rotation */
	char *service;
	unsigned nr_labels;
	char *label_key[PU_MAX_LABELS], *label_val[PU_MAX_LABELS];
	char *auth_file;
	char *ca_file; /* https: the CAs to trust instead of the system's */
	uint64_t spool_mb;
	unsigned spool_files, timeout_s;
	unsigned idle_s; /* helper_idle: 0 resident, else on demand */
	/*
	 * the proxy: proxy= or the daemon's environment, read once at start.
	 * proxy is what libcurl gets (an environment's may carry userinfo),
	 * proxy_shown the same without userinfo: the only form ever printed
	 */
	char *proxy, *proxy_shown;
	const char *proxy_from; /* "proxy=", or the environment variable's name */
	bool proxy_none;        /* proxy=none: none, and the environment is not read */
	char *noproxy;          /* CURLOPT_NOPROXY: noproxy= or no_proxy/NO_PROXY */
	bool noproxy_set;       /* noproxy= given: the environment's is not read */
	char *proxy_auth_file;

	/* from the auth file; never logged */
	char *org_id, *bearer, *basic_user, *basic_password;
	char *proxy_user, *proxy_password; /* from proxy_auth_file */

	/* the sender thread */
	pthread_t thread;
	bool running;
	struct spool spool;
	struct pu_rotation rotq[PU_ROTQ]; /* under sess.lock */
	unsigned rotq_n;
	uint64_t rotq_lost;
	/* what was pushed so far: the sender's, the daemon's thread's once it stopped */
	struct pu_cursor cur;

	/* counters (sender thread writes, print_stats reads) */
	atomic_uint_fast64_t sent, bytes, failed, retried, dropped, encoded, empty, spooled_files,
		spooled_bytes;
	char last_error[256]; /* under sess.lock */

	/* the helper program that runs libcurl (sender thread; at start the daemon's) */
	char *user; /* whom it runs as when the daemon is root (default nobody) */
	int ca_fd;  /* ca_file's contents, a sealed memfd (the helper's fd 4), or -1 */
	char *helper_argv[3];
	struct np_child child;
	bool child_inited, helper_seen_exit;
	uint32_t req_id;
	struct np_msg msg;
	char *pyro_name; /* Pyroscope's name{labels}, escaped for the query */
	atomic_uint_fast64_t helper_spawns, helper_lost, helper_restarts, helper_idle_exits;
	uint64_t helper_used_ns; /* on demand: the end of its last request (sender thread) */
	/* under sess.lock */
	char helper_curl[64], helper_tls[64], helper_last[64];
};

/* ------------------------------------------------------------------ */
/* settings                                                            */
/* ------------------------------------------------------------------ */

static int pu_err(struct pu_state *st, const char *where, const char *fmt, const char *val)
{
	char msg[512];

	snprintf(msg, sizeof(msg), fmt, val);
	st->host->log(st->ctx, OP_LOG_ERR, "%s: %s", where, msg);
	return -EINVAL;
}

/* a string that may hold a secret: cleared before it is freed */
static void pu_wipe(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

static int pu_strdup(char **dst, const char *val)
{
	char *s = strdup(val);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

/* checked here, at start (libcurl lives in the helper): a message naming the setting */
static int pu_set_url(struct pu_state *st, const char *val, const char *where)
{
	char msg[512], *base = NULL;
	int rc;

	rc = pu_url_parse(val, &base, msg, sizeof(msg));
	if (rc == -EINVAL)
		return pu_err(st, where, "%s", msg);
	if (rc)
		return rc;
	free(st->url);
	st->url = base;
	return 0;
}

/* proxy=URL or none (no userinfo: that goes in proxy_auth_file) */
static int pu_set_proxy(struct pu_state *st, const char *val, const char *where)
{
	char msg[512], *url = NULL, *shown = NULL;
	int rc;

	pu_wipe(st->proxy);
	free(st->proxy_shown);
	st->proxy = st->proxy_shown = NULL;
	st->proxy_none = !strcmp(val, "none");
	if (st->proxy_none)
		return 0;
	rc = pu_proxy_parse(val, false, &url, &shown, msg, sizeof(msg));
	if (rc == -EINVAL)
		return pu_err(st, where, "%s", msg);
	if (rc)
		return rc;
	st->proxy = url;
	st->proxy_shown = shown;
	st->proxy_from = "proxy=";
	return 0;
}

/*
 * CURLOPT_NOPROXY's list: host names, domains, addresses or CIDRs,
 * separated by commas (or spaces; ';' too, since a comma ends a key of
 * --ext-feature), or "*" alone (no proxy for any host). Only the
 * characters those are made of: the list reaches libcurl and the log.
 */
static bool pu_noproxy_ok(const char *v)
{
	const char *p;

	if (strlen(v) > 1024)
		return false;
	if (!strcmp(v, "*"))
		return true;
	for (p = v; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr("-._:/[],; ", *p)))
			return false;
	return true;
}

/* the list as libcurl takes it: ';' (the command line's separator) as ',' */
static int pu_noproxy_dup(char **dst, const char *val)
{
	char *p;
	int rc = pu_strdup(dst, val);

	for (p = rc ? NULL : *dst; p && *p; p++)
		if (*p == ';')
			*p = ',';
	return rc;
}

static int pu_set_noproxy(struct pu_state *st, const char *val, const char *where)
{
	if (!pu_noproxy_ok(val))
		return pu_err(st, where,
			      "\"%s\": expected host names, domains, addresses or CIDRs separated "
			      "by ';' or ',', or * (at most 1024 bytes)",
			      val);
	st->noproxy_set = true;
	return pu_noproxy_dup(&st->noproxy, val);
}

static bool pu_label_key_ok(const char *k)
{
	if (!*k || !(*k == '_' || (*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z')))
		return false;
	for (; *k; k++)
		if (!(*k == '_' || (*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
		      (*k >= '0' && *k <= '9')))
			return false;
	return true;
}

/* no byte that Pyroscope's name{k=v,...} syntax or our list syntax gives meaning to */
static bool pu_label_val_ok(const char *v)
{
	if (!*v)
		return false;
	for (; *v; v++)
		if ((unsigned char)*v < 0x20 || *v == 0x7f || strchr(",;{}=\"\\", *v))
			return false;
	return true;
}

static void pu_free_labels(struct pu_state *st)
{
	unsigned i;

	for (i = 0; i < st->nr_labels; i++) {
		free(st->label_key[i]);
		free(st->label_val[i]);
	}
	st->nr_labels = 0;
}

/* K=V;K=V */
static int pu_set_labels(struct pu_state *st, const char *val, const char *where)
{
	char *buf = strdup(val), *tok, *save = NULL;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	pu_free_labels(st);
	for (tok = strtok_r(buf, ";", &save); tok && !rc; tok = strtok_r(NULL, ";", &save)) {
		char *eq = strchr(tok, '=');
		unsigned i;

		if (!eq) {
			rc = pu_err(st, where, "label \"%s\": expected KEY=VALUE", tok);
			break;
		}
		*eq++ = 0;
		if (!pu_label_key_ok(tok) || strlen(tok) > PU_LABEL_MAX) {
			rc = pu_err(st, where,
				    "label name \"%s\": expected [A-Za-z_][A-Za-z0-9_]* (at most 128)",
				    tok);
			break;
		}
		if (!pu_label_val_ok(eq) || strlen(eq) > PU_LABEL_MAX) {
			rc = pu_err(st, where,
				    "label value \"%s\": expected 1..128 printable bytes without "
				    ", ; { } = \" or \\",
				    eq);
			break;
		}
		if (!strcmp(tok, "__name__") || !strcmp(tok, "service_name")) {
			rc = pu_err(st, where, "label \"%s\" is set by the plugin (service=NAME)",
				    tok);
			break;
		}
		for (i = 0; i < st->nr_labels; i++)
			if (!strcmp(st->label_key[i], tok))
				break;
		if (i < st->nr_labels) {
			rc = pu_err(st, where, "label \"%s\" given twice", tok);
			break;
		}
		if (st->nr_labels == PU_MAX_LABELS) {
			rc = pu_err(st, where, "more than %s labels", "32");
			break;
		}
		st->label_key[st->nr_labels] = strdup(tok);
		st->label_val[st->nr_labels] = strdup(eq);
		if (!st->label_key[st->nr_labels] || !st->label_val[st->nr_labels]) {
			free(st->label_key[st->nr_labels]);
			free(st->label_val[st->nr_labels]);
			rc = -ENOMEM;
			break;
		}
		st->nr_labels++;
	}
	free(buf);
	return rc;
}

static int pu_set_uint(struct pu_state *st, const char *val, const char *where, uint64_t lo,
		       uint64_t hi, uint64_t *out)
{
	char msg[160];
	uint64_t v;

	if (!pu_parse_dec_u64(val, &v) || v < lo || v > hi) {
		snprintf(msg, sizeof(msg), "\"%%s\": expected a number %" PRIu64 "..%" PRIu64, lo,
			 hi);
		return pu_err(st, where, msg, val);
	}
	*out = v;
	return 0;
}

static int pu_set(void *priv, const char *key, const char *val, const char *where)
{
	struct pu_state *st = priv;
	char err[256];
	uint64_t v;
	int rc;

	if (!strcmp(key, "url"))
		return pu_set_url(st, val, where);
	if (!strcmp(key, "protocol")) {
		if (!strcmp(val, "pyroscope"))
			st->proto = PU_PYROSCOPE;
		else if (!strcmp(val, "parca"))
			st->proto = PU_PARCA;
		else
			return pu_err(st, where, "\"%s\": expected pyroscope or parca", val);
		return 0;
	}
	if (!strcmp(key, "interval")) {
		if (!strcmp(val, "rotation")) {
			st->interval_s = 0;
			return 0;
		}
		if (op_parse_interval(val, &st->interval_s, err, sizeof(err)) || st->interval_s == 0)
			return pu_err(st, where,
				      "\"%s\": expected a time such as 15s, 5m or 1h, or rotation",
				      val);
		return 0;
	}
	if (!strcmp(key, "service")) {
		if (!pu_label_val_ok(val) || strlen(val) > PU_LABEL_MAX)
			return pu_err(st, where,
				      "\"%s\": expected 1..128 printable bytes without , ; { } = "
				      "\" or \\",
				      val);
		return pu_strdup(&st->service, val);
	}
	if (!strcmp(key, "labels"))
		return pu_set_labels(st, val, where);
	if (!strcmp(key, "auth_file")) {
		if (val[0] != '/')
			return pu_err(st, where, "\"%s\": expected an absolute path", val);
		return pu_strdup(&st->auth_file, val);
	}
	if (!strcmp(key, "proxy"))
		return pu_set_proxy(st, val, where);
	if (!strcmp(key, "noproxy"))
		return pu_set_noproxy(st, val, where);
	if (!strcmp(key, "proxy_auth_file")) {
		if (val[0] != '/')
			return pu_err(st, where, "\"%s\": expected an absolute path", val);
		return pu_strdup(&st->proxy_auth_file, val);
	}
	if (!strcmp(key, "ca_file")) {
		if (val[0] != '/')
			return pu_err(st, where, "\"%s\": expected an absolute path", val);
		return pu_strdup(&st->ca_file, val);
	}
	if (!strcmp(key, "user")) {
		if (!*val || strlen(val) >= sizeof(st->child.user))
			return pu_err(st, where, "\"%s\": expected a user name (at most 63 bytes)",
				      val);
		return pu_strdup(&st->user, val);
	}
	if (!strcmp(key, "spool_mb")) {
		rc = pu_set_uint(st, val, where, 1, 4096, &v);
		if (!rc)
			st->spool_mb = v;
		return rc;
	}
	if (!strcmp(key, "spool_files")) {
		rc = pu_set_uint(st, val, where, 1, 100000, &v);
		if (!rc)
			st->spool_files = (unsigned)v;
		return rc;
	}
	if (!strcmp(key, "helper_idle")) {
		if (op_parse_interval(val, &st->idle_s, err, sizeof(err)))
			return pu_err(st, where, "\"%s\": " NP_HELPER_IDLE_EXPECTED, val);
		return 0;
	}
	if (!strcmp(key, "timeout")) {
		rc = pu_set_uint(st, val, where, 1, 300, &v);
		if (!rc)
			st->timeout_s = (unsigned)v;
		return rc;
	}
	return pu_err(st, where,
		      "unknown setting \"%s\": expected url, protocol, interval, service, labels, "
		      "auth_file, ca_file, user, spool_mb, spool_files, timeout, helper_idle, "
		      "proxy, noproxy or proxy_auth_file",
		      key);
}

/* plugins.push.<key>: the keys of the arguments, strings or numbers */
static int pu_read_config(struct pu_state *st)
{
	static const char *const strs[] = { "url",     "protocol", "interval",
					    "service", "labels",   "auth_file",
					    "ca_file", "user",     "helper_idle",
					    "proxy",   "noproxy",  "proxy_auth_file",
					    NULL };
	static const char *const ints[] = { "spool_mb", "spool_files", "timeout", NULL };

	return np_read_config(st->host, st->ctx, "push", strs, ints, NULL, pu_set, st);
}

/*
 * A file of secrets (auth_file, proxy_auth_file) into @buf (PU_AUTH_MAX + 1
 * bytes, NUL-terminated): trusted like the config, readable by its owner
 * alone, at most PU_AUTH_MAX bytes. @key names the setting in messages.
 */
static int pu_read_secret(struct pu_state *st, const char *path, const char *key, const char *what,
			  char *buf)
{
	struct op_trust t = op_trust_for(geteuid(), geteuid());
	char why[512];
	struct stat sb;
	ssize_t n;
	int fd;

	fd = op_trust_open_path(&t, path, O_RDONLY, S_IFREG, what, &sb, why, sizeof(why));
	if (fd < 0) {
		st->host->log(st->ctx, OP_LOG_ERR, "%s: %s", key, why);
		return fd;
	}
	if (sb.st_mode & (S_IRGRP | S_IROTH)) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "%s %s is readable by group or others (mode %04o): chmod 600 it",
			      what, path, (unsigned)(sb.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	n = read(fd, buf, PU_AUTH_MAX + 1);
	close(fd);
	if (n < 0 || n > PU_AUTH_MAX) {
		explicit_bzero(buf, PU_AUTH_MAX + 1);
		st->host->log(st->ctx, OP_LOG_ERR, "%s %s: %s", what, path,
			      n < 0 ? strerror(errno) : "larger than 4096 bytes");
		return n < 0 ? -EIO : -EFBIG;
	}
	buf[n] = 0;
	return 0;
}

/*
 * The auth file: "key = value" lines, '#' comments; keys org_id
 * (X-Scope-OrgID), bearer_token, basic_user and basic_password. Trusted
 * like the config (root's when the daemon is root, nobody else may write
 * it) and readable by its owner alone. Values are never logged.
 */
static int pu_read_auth(struct pu_state *st)
{
	char buf[PU_AUTH_MAX + 1], *line, *save = NULL;
	const char *path = st->auth_file;
	unsigned lineno = 0;
	int rc;

	rc = pu_read_secret(st, path, "auth_file", "auth file", buf);
	if (rc)
		return rc;
	for (line = buf; line && !rc; line = save) {
		char *nl = strchr(line, '\n'), *eq, *k, *v, *e, **dst = NULL;

		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		lineno++;
		line[strcspn(line, "\r")] = 0;
		k = line + strspn(line, " \t");
		if (!*k || *k == '#')
			continue;
		eq = strchr(k, '=');
		if (!eq) {
			st->host->log(st->ctx, OP_LOG_ERR, "%s:%u: expected KEY = VALUE", path,
				      lineno);
			rc = -EINVAL;
			break;
		}
		for (e = eq; e > k && (e[-1] == ' ' || e[-1] == '\t'); e--)
			;
		*e = 0;
		v = eq + 1 + strspn(eq + 1, " \t");
		for (e = v + strlen(v); e > v && (e[-1] == ' ' || e[-1] == '\t'); e--)
			;
		*e = 0;
		if (!strcmp(k, "org_id"))
			dst = &st->org_id;
		else if (!strcmp(k, "bearer_token"))
			dst = &st->bearer;
		else if (!strcmp(k, "basic_user"))
			dst = &st->basic_user;
		else if (!strcmp(k, "basic_password"))
			dst = &st->basic_password;
		if (!dst) {
			st->host->log(st->ctx, OP_LOG_ERR,
				      "%s:%u: unknown key \"%.64s\": expected org_id, bearer_token, "
				      "basic_user or basic_password",
				      path, lineno, k);
			rc = -EINVAL;
		} else if (!*v || strpbrk(v, "\r\n")) {
			st->host->log(st->ctx, OP_LOG_ERR, "%s:%u: %s: empty value", path, lineno,
				      k);
			rc = -EINVAL;
		} else {
			rc = pu_strdup(dst, v);
		}
	}
	explicit_bzero(buf, sizeof(buf));
	if (!rc && st->bearer && (st->basic_user || st->basic_password)) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "auth file %s: bearer_token and basic_user/basic_password exclude "
			      "each other",
			      path);
		rc = -EINVAL;
	}
	if (!rc && !st->basic_user != !st->basic_password) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "auth file %s: basic_user and basic_password go together", path);
		rc = -EINVAL;
	}
	return rc;
}

/*
 * proxy_auth_file: "user:password" on one line ('#' comment lines and a
 * final newline allowed), read like the auth file; the password may hold
 * ':', the user may not. Never logged.
 */
static int pu_read_proxy_auth(struct pu_state *st)
{
	char buf[PU_AUTH_MAX + 1], *line, *save = NULL, *colon, *cred = NULL;
	const char *path = st->proxy_auth_file;
	unsigned lineno = 0, at = 0;
	int rc;

	rc = pu_read_secret(st, path, "proxy_auth_file", "proxy auth file", buf);
	if (rc)
		return rc;
	for (line = buf; line && !rc; line = save) {
		char *nl = strchr(line, '\n');

		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		lineno++;
		line[strcspn(line, "\r")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		if (cred) {
			st->host->log(st->ctx, OP_LOG_ERR,
				      "%s:%u: a second credentials line (the first is line %u): "
				      "expected one \"user:password\" line",
				      path, lineno, at);
			rc = -EINVAL;
			break;
		}
		cred = line;
		at = lineno;
	}
	if (!rc && !cred) {
		st->host->log(st->ctx, OP_LOG_ERR, "%s: no \"user:password\" line", path);
		rc = -EINVAL;
	}
	if (!rc) {
		colon = strchr(cred, ':');
		if (!colon || colon == cred || !colon[1]) {
			st->host->log(st->ctx, OP_LOG_ERR,
				      "%s:%u: expected \"user:password\" (both not empty)", path,
				      at);
			rc = -EINVAL;
		} else {
			*colon = 0;
			rc = pu_strdup(&st->proxy_user, cred);
			if (!rc)
				rc = pu_strdup(&st->proxy_password, colon + 1);
		}
	}
	explicit_bzero(buf, sizeof(buf));
	return rc;
}

/* an environment variable as curl reads it: unset and empty are the same */
static const char *pu_env(const char *name, const char **from)
{
	const char *v = getenv(name);

	if (!v || !*v)
		return NULL;
	*from = name;
	return v;
}

/*
 * No proxy= (nor proxy=none): the daemon's environment, read once here,
 * with curl's rules (the helper has no environment: it gets the result).
 * https_proxy or HTTPS_PROXY for an https store, http_proxy for an http
 * one (not HTTP_PROXY: curl ignores it, httpoxy, as a CGI's request can
 * set it), then all_proxy or ALL_PROXY; no_proxy or NO_PROXY unless
 * noproxy= was given. A value without a scheme is http://, as for curl.
 * Userinfo there is root's own and is taken, never shown.
 */
static int pu_proxy_env(struct pu_state *st)
{
	bool https = !strncasecmp(st->url, "https:", 6);
	const char *v = NULL, *from = NULL, *np;
	char msg[512], *val, *url = NULL, *shown = NULL;
	int rc;

	if (!st->noproxy_set) {
		np = pu_env("no_proxy", &from);
		if (!np)
			np = pu_env("NO_PROXY", &from);
		if (np) {
			if (!pu_noproxy_ok(np)) {
				st->host->log(st->ctx, OP_LOG_ERR,
					      "environment %s \"%s\": expected host names, domains, "
					      "addresses or CIDRs separated by ',', or *",
					      from, np);
				return -EINVAL;
			}
			rc = pu_noproxy_dup(&st->noproxy, np);
			if (rc)
				return rc;
		}
	}
	if (https) {
		v = pu_env("https_proxy", &from);
		if (!v)
			v = pu_env("HTTPS_PROXY", &from);
	} else {
		v = pu_env("http_proxy", &from);
	}
	if (!v)
		v = pu_env("all_proxy", &from);
	if (!v)
		v = pu_env("ALL_PROXY", &from);
	if (!v)
		return 0;
	if (asprintf(&val, "%s%s", strstr(v, "://") ? "" : "http://", v) < 0)
		return -ENOMEM;
	rc = pu_proxy_parse(val, true, &url, &shown, msg, sizeof(msg));
	pu_wipe(val);
	if (rc == -EINVAL) {
		st->host->log(st->ctx, OP_LOG_ERR, "environment %s: %s (or set proxy=URL or none)",
			      from, msg);
		return rc;
	}
	if (rc)
		return rc;
	st->proxy = url;
	st->proxy_shown = shown;
	st->proxy_from = from;
	return 0;
}

/*
 * ca_file names whom the plugin believes to be the store: trusted like the
 * configuration (root's when the daemon is root, nobody else may write
 * it), and there at start, not a failure at each push later. Read here,
 * once: the helper, running as nobody, gets its contents as a sealed
 * memfd (a root-only CA file stays root-only).
 */
static int pu_check_ca(struct pu_state *st)
{
	struct op_trust t = op_trust_for(geteuid(), geteuid());
	char why[512], *buf;
	struct stat sb;
	ssize_t n;
	int fd, rc = 0;

	fd = op_trust_open_path(&t, st->ca_file, O_RDONLY, S_IFREG, "CA file", &sb, why,
				sizeof(why));
	if (fd < 0) {
		st->host->log(st->ctx, OP_LOG_ERR, "ca_file: %s", why);
		return fd;
	}
	if (sb.st_size <= 0 || sb.st_size > PW_MAX_CA) {
		st->host->log(st->ctx, OP_LOG_ERR, "ca_file: %s: %s", st->ca_file,
			      sb.st_size <= 0 ? "empty" : "larger than 4 MiB");
		close(fd);
		return -EINVAL;
	}
	buf = malloc((size_t)sb.st_size);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	n = pread(fd, buf, (size_t)sb.st_size, 0);
	if (n != sb.st_size) {
		st->host->log(st->ctx, OP_LOG_ERR, "ca_file: %s: %s", st->ca_file,
			      n < 0 ? strerror(errno) : "changed while read");
		rc = -EIO;
	} else {
		st->ca_fd = np_memfd_new("oprofiled-push-ca", buf, (size_t)n);
		if (st->ca_fd < 0) {
			rc = st->ca_fd;
			st->ca_fd = -1;
			st->host->log(st->ctx, OP_LOG_ERR, "ca_file: a memfd for its contents: %s",
				      strerror(-rc));
		}
	}
	free(buf);
	close(fd);
	return rc;
}

/* ------------------------------------------------------------------ */
/* requests                                                            */
/* ------------------------------------------------------------------ */

static void pu_set_error(struct pu_state *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void pu_set_error(struct pu_state *st, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&st->sess.lock);
	va_start(ap, fmt);
	vsnprintf(st->last_error, sizeof(st->last_error), fmt, ap);
	va_end(ap);
	pthread_mutex_unlock(&st->sess.lock);
}

/* Pyroscope's name, SERVICE{k=v,k=v}, escaped for the query: the same for every push */
static int pu_pyroscope_name(struct pu_state *st)
{
	char name[PU_MAX_LABELS * (2 * PU_LABEL_MAX + 2) + PU_LABEL_MAX + 8];
	size_t off;
	unsigned i;

	off = (size_t)snprintf(name, sizeof(name), "%s{", st->service);
	for (i = 0; i < st->nr_labels; i++)
		off += (size_t)snprintf(name + off, sizeof(name) - off, "%s%s=%s", i ? "," : "",
					st->label_key[i], st->label_val[i]);
	snprintf(name + off, sizeof(name) - off, "}");
	free(st->pyro_name);
	st->pyro_name = pu_url_escape(name);
	return st->pyro_name ? 0 : -ENOMEM;
}

static char *pu_pyroscope_url(struct pu_state *st, const struct spool_entry *e)
{
	char *url;

	if (asprintf(&url,
		     "%s/ingest?name=%s&from=%" PRIu64 "&until=%" PRIu64
		     "&format=pprof&sampleRate=%" PRIu64 "&spyName=oprofile-ng",
		     st->url, st->pyro_name, e->from_s, e->until_s, e->hz) < 0)
		return NULL;
	return url;
}

/* Parca's WriteRawRequest as JSON: one series, the profile base64'd */
static char *pu_parca_body(struct pu_state *st, const void *buf, size_t len)
{
	json_t *labels, *root;
	char *b64;
	char *out = NULL;
	unsigned i;

	if (len > INT32_MAX / 2)
		return NULL;
	b64 = malloc(BASE64_ENCODE_RAW_LENGTH(len) + 1);
	if (!b64)
		return NULL;
	/*
	 * nettle's (a small library of its own, without GnuTLS): one line, no
	 * newlines, as JSON wants
	 */
	base64_encode_raw(b64, len, buf);
	b64[BASE64_ENCODE_RAW_LENGTH(len)] = 0;
	labels = json_array();
	json_array_append_new(labels,
			      json_pack("{s:s,s:s}", "name", "__name__", "value", "process_cpu"));
	json_array_append_new(labels,
			      json_pack("{s:s,s:s}", "name", "service_name", "value", st->service));
	for (i = 0; i < st->nr_labels; i++)
		json_array_append_new(labels, json_pack("{s:s,s:s}", "name", st->label_key[i],
							"value", st->label_val[i]));
	root = json_pack("{s:[{s:{s:o},s:[{s:s}]}],s:b}", "series", "labels", "labels", labels,
			 "samples", "rawProfile", b64, "normalized", 1);
	free(b64);
	if (root) {
		out = json_dumps(root, JSON_COMPACT);
		json_decref(root);
	}
	return out;
}

static bool pu_stopping(struct pu_state *st)
{
	bool stop;

	pthread_mutex_lock(&st->sess.lock);
	stop = st->sess.stopping;
	pthread_mutex_unlock(&st->sess.lock);
	return stop;
}

enum pu_result { PU_SENT, PU_RETRY, PU_REFUSED };

/*
 * What the helper says goes to the log and to the status: printable
 * ASCII only, whatever it sent.
 */
static void pu_clean_text(char *dst, size_t dst_len, const char *src, size_t src_len)
{
	size_t i;

	if (!dst_len)
		return;
	for (i = 0; i < src_len && i + 1 < dst_len && src[i]; i++)
		dst[i] = (src[i] >= 0x20 && src[i] < 0x7f) ? src[i] : '?';
	dst[i] = 0;
}

/* the helper broke the protocol, hung or died: it goes, a new one comes after the backoff */
static void pu_helper_lost(struct pu_state *st, const char *what)
{
	char status[64];

	atomic_fetch_add(&st->helper_lost, 1);
	np_child_kill(&st->child);
	np_child_status_text(st->child.last_status, status, sizeof(status));
	st->host->log(st->ctx, OP_LOG_WARN, "helper %s: %s (%s); restarting it", st->child.name,
		      what, status);
	pthread_mutex_lock(&st->sess.lock);
	snprintf(st->helper_last, sizeof(st->helper_last), "%s", status);
	pthread_mutex_unlock(&st->sess.lock);
	st->helper_seen_exit = true;
}

/* a NP_MSG_LOG line of the helper's, into the daemon's log */
static void pu_helper_log(struct pu_state *st, const struct np_msg *m)
{
	char line[256];

	pu_clean_text(line, sizeof(line), m->data, m->h.len);
	st->host->log(st->ctx, m->h.arg == OP_LOG_ERR ? OP_LOG_ERR : OP_LOG_WARN, "helper %s: %s",
		      st->child.name, line);
}

/*
 * A running helper that said hello, started now if there is none (and the
 * backoff allows): 0, or -errno with the last error set. On the daemon's
 * thread at start, on the sender's later.
 */
static int pu_helper_up(struct pu_state *st)
{
	struct np_child *c = &st->child;
	struct np_msg *m = &st->msg;
	char why[256], ver[64] = "", tls[64] = "";
	unsigned logs = 0;
	uint64_t wait;
	int rc;

	if (c->pid && !np_child_reaped(c))
		return 0;
	if (c->last_status != -1 && !st->helper_seen_exit) {
		/* it died between two requests (killed, or crashed) */
		np_child_status_text(c->last_status, why, sizeof(why));
		st->host->log(st->ctx, OP_LOG_WARN, "helper %s ended (%s); restarting it", c->name,
			      why);
		pthread_mutex_lock(&st->sess.lock);
		snprintf(st->helper_last, sizeof(st->helper_last), "%.63s", why);
		pthread_mutex_unlock(&st->sess.lock);
	}
	st->helper_seen_exit = true;
	wait = np_child_wait_ms(c);
	if (wait) {
		pu_set_error(st, "helper %s: restarting in %" PRIu64 " ms", c->name, wait);
		return -EAGAIN;
	}
	rc = np_child_spawn(c, why, sizeof(why));
	if (rc) {
		pu_set_error(st, "helper %s: %s", c->name, why);
		st->host->log(st->ctx, OP_LOG_ERR, "cannot start the helper %s: %s", c->name, why);
		return rc;
	}
	st->helper_seen_exit = false;
	atomic_store(&st->helper_spawns, c->spawns);
	atomic_store(&st->helper_restarts, c->restarts);
	/* its hello: the libcurl and TLS library it runs */
	for (;;) {
		rc = np_msg_recv(c->sock, m, PU_HELLO_MS, why, sizeof(why));
		if (!rc && m->fd >= 0) {
			close(m->fd);
			m->fd = -1;
			snprintf(why, sizeof(why), "a descriptor with its hello");
			rc = -EBADMSG;
		}
		if (!rc && m->h.type == NP_MSG_LOG && ++logs <= PU_HELPER_LOGS) {
			pu_helper_log(st, m);
			continue;
		}
		break;
	}
	if (!rc && (m->h.type != NP_MSG_HELLO || m->h.arg != NP_MSG_VERSION)) {
		snprintf(why, sizeof(why),
			 "message type %u, version %" PRIu64 " instead of its hello",
			 (unsigned)m->h.type, (uint64_t)m->h.arg);
		rc = -EBADMSG;
	}
	if (rc) {
		if (rc != -EBADMSG)
			snprintf(why, sizeof(why), "no hello: %s", strerror(-rc));
		pu_set_error(st, "helper %s: %s", c->name, why);
		pu_helper_lost(st, why);
		return rc;
	}
	/* "VERSION\0TLS\0" (m->data is NUL-terminated after len bytes) */
	pu_clean_text(ver, sizeof(ver), m->data, m->h.len);
	if (strlen(m->data) < m->h.len)
		pu_clean_text(tls, sizeof(tls), m->data + strlen(m->data) + 1,
			      m->h.len - strlen(m->data) - 1);
	pthread_mutex_lock(&st->sess.lock);
	snprintf(st->helper_curl, sizeof(st->helper_curl), "%s", ver);
	snprintf(st->helper_tls, sizeof(st->helper_tls), "%s", tls);
	pthread_mutex_unlock(&st->sess.lock);
	return 0;
}

/* a request's strings after its struct pw_req: the tag, the text, a NUL */
static bool pu_put(char *buf, size_t *off, uint32_t *nr, char tag, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static bool pu_put(char *buf, size_t *off, uint32_t *nr, char tag, const char *fmt, ...)
{
	size_t room = PW_MAX_STRINGS_LEN - *off;
	va_list ap;
	int n;

	if (room < 2 || *nr == PW_MAX_STRINGS)
		return false;
	buf[(*off)++] = tag;
	room--;
	va_start(ap, fmt);
	n = vsnprintf(buf + *off, room, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= room)
		return false;
	*off += (size_t)n + 1;
	(*nr)++;
	return true;
}

/*
 * The request: the URL, headers and credentials inline, the body as a
 * sealed memfd. Its length in *plen, 0 if it does not fit (too many or too
 * long labels: pu_init checked that it fits, this is the last guard).
 */
static size_t pu_request(struct pu_state *st, const char *url, char *payload)
{
	struct pw_req h = { .timeout_s = st->timeout_s,
			    .connect_timeout_s = st->timeout_s < 5 ? st->timeout_s : 5 };
	char *b = payload + sizeof(h);
	size_t off = 0;
	bool ok;

	ok = pu_put(b, &off, &h.nr_strings, PW_TAG_URL, "%s", url) &&
	     pu_put(b, &off, &h.nr_strings, PW_TAG_HEADER, "Content-Type: %s",
		    st->proto == PU_PYROSCOPE ? "application/octet-stream" : "application/json");
	if (ok && st->org_id)
		ok = pu_put(b, &off, &h.nr_strings, PW_TAG_HEADER, "X-Scope-OrgID: %s", st->org_id);
	if (ok && st->bearer)
		ok = pu_put(b, &off, &h.nr_strings, PW_TAG_HEADER, "Authorization: Bearer %s",
			    st->bearer);
	if (ok && st->basic_user)
		ok = pu_put(b, &off, &h.nr_strings, PW_TAG_USER, "%s", st->basic_user) &&
		     pu_put(b, &off, &h.nr_strings, PW_TAG_PASS, "%s", st->basic_password);
	/* always one, "" for none: the helper's libcurl never looks for one itself */
	if (ok)
		ok = pu_put(b, &off, &h.nr_strings, PW_TAG_PROXY, "%s", st->proxy ? st->proxy : "");
	if (ok && st->proxy && st->noproxy)
		ok = pu_put(b, &off, &h.nr_strings, PW_TAG_NOPROXY, "%s", st->noproxy);
	if (ok && st->proxy && st->proxy_user)
		ok = pu_put(b, &off, &h.nr_strings, PW_TAG_PROXY_USER, "%s", st->proxy_user) &&
		     pu_put(b, &off, &h.nr_strings, PW_TAG_PROXY_PASS, "%s", st->proxy_password);
	if (!ok)
		return 0;
	memcpy(payload, &h, sizeof(h));
	return sizeof(h) + off;
}

/* wait for the helper's answer to request @id; the daemon's stop ends the wait at once */
static enum pu_result pu_answer(struct pu_state *st, uint32_t id)
{
	uint64_t deadline = np_now_mono_ns() + (st->timeout_s + PU_GRACE_S) * 1000000000ull;
	struct np_msg *m = &st->msg;
	struct pw_result res;
	char why[256], text[PW_MAX_ERROR];
	unsigned logs = 0;
	long status;
	int rc;

	for (;;) {
		if (pu_stopping(st)) {
			/* np_child_stop hangs up: the helper aborts the transfer */
			pu_set_error(st, "%s: aborted: the daemon stops", st->url);
			return PU_RETRY;
		}
		rc = np_msg_recv(st->child.sock, m, PU_POLL_MS, why, sizeof(why));
		if (rc == -ETIMEDOUT) {
			if (np_now_mono_ns() < deadline)
				continue;
			snprintf(why, sizeof(why), "no answer within %u s",
				 st->timeout_s + PU_GRACE_S);
		} else if (rc == -EPIPE) {
			snprintf(why, sizeof(why), "it ended during a request");
		} else if (rc && rc != -EBADMSG) {
			snprintf(why, sizeof(why), "%s", strerror(-rc));
		} else if (!rc && m->fd >= 0) {
			close(m->fd);
			m->fd = -1;
			snprintf(why, sizeof(why), "a descriptor with its answer");
			rc = -EBADMSG;
		} else if (!rc && m->h.type == NP_MSG_LOG) {
			if (++logs <= PU_HELPER_LOGS) {
				pu_helper_log(st, m);
				continue;
			}
			snprintf(why, sizeof(why), "more than %u log lines in a request",
				 PU_HELPER_LOGS);
			rc = -EBADMSG;
		} else if (!rc && (m->h.type != PW_RESULT || m->h.id != id || m->h.len < sizeof(res) ||
				   m->h.len > sizeof(res) + PW_MAX_ERROR || m->h.arg > 999)) {
			snprintf(why, sizeof(why),
				 "a malformed answer (type %u, id %u for %u, %u bytes, status %" PRIu64
				 ")",
				 (unsigned)m->h.type, (unsigned)m->h.id, (unsigned)id,
				 (unsigned)m->h.len, (uint64_t)m->h.arg);
			rc = -EBADMSG;
		}
		/* an answer that came is taken even at the stop: no second send of it */
		if (rc)
			break;
		memcpy(&res, m->data, sizeof(res));
		pu_clean_text(text, sizeof(text), m->data + sizeof(res), m->h.len - sizeof(res));
		status = (long)m->h.arg;
		if (res.curl_code) {
			pu_set_error(st, "%s%s%s: %s", st->url, st->proxy ? " via proxy " : "",
				     st->proxy ? st->proxy_shown : "",
				     text[0] ? text : "transfer failed");
			return PU_RETRY;
		}
		if (status >= 200 && status < 300)
			return PU_SENT;
		/*
		 * the proxy's own refusal (a plain http store is asked through
		 * it, so its 407 is the answer): not the store's, the entry
		 * stays for when the proxy's credentials are right
		 */
		if (status == 407) {
			pu_set_error(st,
				     "%s: HTTP status 407 from proxy %s: proxy authentication "
				     "required (proxy_auth_file)",
				     st->url, st->proxy ? st->proxy_shown : "(none)");
			return PU_RETRY;
		}
		pu_set_error(st, "%s: HTTP status %ld", st->url, status);
		/* a request the store refuses as such fails again the same way */
		if (status >= 400 && status < 500 && status != 408 && status != 429)
			return PU_REFUSED;
		return PU_RETRY;
	}
	if (pu_stopping(st)) {
		pu_set_error(st, "%s: aborted: the daemon stops", st->url);
		return PU_RETRY;
	}
	pu_set_error(st, "helper %s: %s", st->child.name, why);
	pu_helper_lost(st, why);
	return PU_RETRY;
}

static enum pu_result pu_send(struct pu_state *st, const struct spool_entry *e, const void *buf,
			      size_t len)
{
	char payload[sizeof(struct pw_req) + PW_MAX_STRINGS_LEN];
	enum pu_result res = PU_RETRY;
	char *url = NULL, *body = NULL;
	size_t plen;
	int fd = -1, rc;

	if (pu_helper_up(st))
		return PU_RETRY;
	if (st->proto == PU_PYROSCOPE) {
		url = pu_pyroscope_url(st, e);
	} else {
		if (asprintf(&url, "%s/api/profiles/writeraw", st->url) < 0)
			url = NULL;
		body = pu_parca_body(st, buf, len);
	}
	if (!url || (st->proto == PU_PARCA && !body)) {
		pu_set_error(st, "out of memory building the request");
		goto out;
	}
	plen = pu_request(st, url, payload);
	if (!plen) {
		pu_set_error(st, "the request's URL and headers exceed %zu bytes",
			     (size_t)PW_MAX_STRINGS_LEN);
		goto out;
	}
	fd = np_memfd_new("oprofiled-push-body", body ? body : buf, body ? strlen(body) : len);
	if (fd < 0) {
		pu_set_error(st, "the request's body: %s", strerror(-fd));
		goto out;
	}
	rc = np_msg_send(st->child.sock, PW_REQ, ++st->req_id, 0, payload, plen, fd, PU_SEND_MS);
	explicit_bzero(payload, sizeof(payload));
	if (rc) {
		char why[128];

		snprintf(why, sizeof(why), "cannot hand it the request: %s", strerror(-rc));
		pu_set_error(st, "helper %s: %s", st->child.name, why);
		pu_helper_lost(st, why);
		goto out;
	}
	res = pu_answer(st, st->req_id);
	st->helper_used_ns = np_now_mono_ns();
out:
	if (fd >= 0)
		close(fd);
	free(url);
	free(body);
	return res;
}

/*
 * At start: the longest request this configuration makes (every number at
 * its widest) fits the helper's inline bound, or the labels are refused
 * now rather than at each push.
 */
static int pu_check_request(struct pu_state *st)
{
	static char payload[sizeof(struct pw_req) + PW_MAX_STRINGS_LEN];
	const struct spool_entry e = { .from_s = UINT64_MAX,
				       .until_s = UINT64_MAX,
				       .hz = UINT64_MAX };
	char *url = NULL;
	size_t plen;

	if (st->proto == PU_PYROSCOPE)
		url = pu_pyroscope_url(st, &e);
	else if (asprintf(&url, "%s/api/profiles/writeraw", st->url) < 0)
		url = NULL;
	if (!url)
		return -ENOMEM;
	plen = pu_request(st, url, payload);
	explicit_bzero(payload, sizeof(payload));
	free(url);
	if (!plen) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "the URL with service and labels, and the auth headers, exceed the "
			      "%zu bytes of a request: fewer or shorter labels",
			      (size_t)PW_MAX_STRINGS_LEN);
		return -E2BIG;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* the sender thread                                                   */
/* ------------------------------------------------------------------ */

static void pu_count_spool(struct pu_state *st)
{
	atomic_store(&st->spooled_files, st->spool.n);
	atomic_store(&st->spooled_bytes, st->spool.bytes);
	atomic_store(&st->dropped, st->spool.dropped);
}

/* encode now - before and queue it */
static void pu_enqueue(struct pu_state *st, const struct np_snap *now, const struct np_snap *before,
		       uint64_t t0_ns, uint64_t t1_ns)
{
	char err[512];
	void *buf = NULL;
	size_t len = 0;
	uint64_t hz = 0;
	int rc;

	/* an interval without samples costs the store nothing: it reads as zero */
	rc = np_snap_encode(now, before, t0_ns, t1_ns, true, &buf, &len, &hz, err, sizeof(err));
	if (rc == -ENODATA) {
		atomic_fetch_add(&st->empty, 1);
		return;
	}
	if (rc) {
		pu_set_error(st, "encoding: %s", err);
		st->host->log(st->ctx, OP_LOG_WARN, "cannot encode the profile: %s", err);
		return;
	}
	atomic_fetch_add(&st->encoded, 1);
	rc = spool_add(&st->spool, buf, len, t0_ns / 1000000000ull,
		       (t1_ns + 999999999ull) / 1000000000ull, hz, err, sizeof(err));
	free(buf);
	if (rc) {
		pu_set_error(st, "%s", err);
		st->host->log(st->ctx, OP_LOG_WARN, "%s", err);
	}
	pu_count_spool(st);
}

static void pu_handle_rotations(struct pu_state *st, struct pu_cursor *cur)
{
	struct pu_rotation r;
	struct np_snap *fin;
	char err[512];

	for (;;) {
		pthread_mutex_lock(&st->sess.lock);
		if (!st->rotq_n) {
			pthread_mutex_unlock(&st->sess.lock);
			return;
		}
		r = st->rotq[0];
		memmove(st->rotq, st->rotq + 1, --st->rotq_n * sizeof(st->rotq[0]));
		pthread_mutex_unlock(&st->sess.lock);
		/* the rotated session is whole: what was not sent of it goes now */
		if (np_snap_read(r.dir, &fin, err, sizeof(err))) {
			pu_set_error(st, "%s", err);
			st->host->log(st->ctx, OP_LOG_WARN, "rotated session: %s", err);
		} else {
			pu_enqueue(st, fin, cur->before, cur->before_ns, r.end_ns);
			np_snap_free(fin);
		}
		np_snap_free(cur->before);
		cur->before = NULL;
		cur->before_ns = r.end_ns;
	}
}

/* interval mode: the counts since the last push */
static void pu_tick(struct pu_state *st, struct pu_cursor *cur)
{
	char dir[4096], err[512];
	struct np_snap *now = NULL;
	uint64_t rot, t;

	if (np_session_dump(&st->sess, 2000) == -ECANCELED)
		return;
	np_session_where(&st->sess, dir, sizeof(dir), &rot, NULL, 0, NULL);
	t = np_now_wall_ns();
	if (np_snap_read(dir, &now, err, sizeof(err))) {
		pu_set_error(st, "%s", err);
		return;
	}
	pthread_mutex_lock(&st->sess.lock);
	/* a rotation under the read: its queue entry covers this, read again later */
	if (st->sess.rotations != rot || st->rotq_n) {
		pthread_mutex_unlock(&st->sess.lock);
		np_snap_free(now);
		return;
	}
	pthread_mutex_unlock(&st->sess.lock);
	pu_enqueue(st, now, cur->before, cur->before_ns, t);
	np_snap_free(cur->before);
	cur->before = now;
	cur->before_ns = t;
}

/* send what the spool holds, oldest first; returns the backoff to wait, 0 if empty */
static uint64_t pu_flush(struct pu_state *st, uint64_t *backoff_ms, bool *retrying)
{
	struct spool_entry e;
	char err[512];
	void *buf;
	size_t len;

	while (st->spool.n) {
		if (pu_stopping(st))
			return 0;
		if (spool_peek(&st->spool, &e, &buf, &len, err, sizeof(err))) {
			pu_set_error(st, "%s", err);
			spool_pop(&st->spool);
			st->spool.dropped++;
			pu_count_spool(st);
			continue;
		}
		if (*retrying)
			atomic_fetch_add(&st->retried, 1);
		switch (pu_send(st, &e, buf, len)) {
		case PU_SENT:
			atomic_fetch_add(&st->sent, 1);
			atomic_fetch_add(&st->bytes, len);
			spool_pop(&st->spool);
			*backoff_ms = 0;
			*retrying = false;
			break;
		case PU_REFUSED:
			atomic_fetch_add(&st->failed, 1);
			spool_pop(&st->spool);
			st->spool.dropped++;
			*retrying = false;
			break;
		case PU_RETRY:
			atomic_fetch_add(&st->failed, 1);
			free(buf);
			pu_count_spool(st);
			*backoff_ms = *backoff_ms ? *backoff_ms * 2 : PU_BACKOFF_MIN_MS;
			if (*backoff_ms > PU_BACKOFF_MAX_MS)
				*backoff_ms = PU_BACKOFF_MAX_MS;
			*retrying = true;
			return *backoff_ms;
		}
		free(buf);
		pu_count_spool(st);
	}
	return 0;
}

/* on demand: the monotonic time at which the running helper has been idle long enough */
static uint64_t pu_idle_end(const struct pu_state *st)
{
	if (!st->idle_s || !st->child.pid)
		return UINT64_MAX;
	return st->helper_used_ns + (uint64_t)st->idle_s * 1000000000ull;
}

/* on demand: stop a helper that had no request for helper_idle (it exits when its socket closes) */
static void pu_helper_idle(struct pu_state *st)
{
	if (np_now_mono_ns() < pu_idle_end(st))
		return;
	np_child_retire(&st->child, PU_STOP_MS);
	st->helper_seen_exit = true;
	atomic_store(&st->helper_idle_exits, st->child.idle_exits);
	if (!st->child.last_idle) {
		char status[64];

		np_child_status_text(st->child.last_status, status, sizeof(status));
		st->host->log(st->ctx, OP_LOG_WARN, "helper %s did not exit when idle: %s",
			      st->child.name, status);
	}
	pthread_mutex_lock(&st->sess.lock);
	np_child_status_text(st->child.last_status, st->helper_last, sizeof(st->helper_last));
	pthread_mutex_unlock(&st->sess.lock);
}

static void *pu_thread(void *arg)
{
	struct pu_state *st = arg;
	struct pu_cursor *cur = &st->cur;
	uint64_t next_tick, next_try = 0, backoff = 0, now;
	bool retrying = false;

	next_tick = np_now_mono_ns() + (uint64_t)st->interval_s * 1000000000ull;
	for (;;) {
		struct timespec dl;
		uint64_t wake;

		pthread_mutex_lock(&st->sess.lock);
		if (st->sess.stopping) {
			pthread_mutex_unlock(&st->sess.lock);
			break;
		}
		pthread_mutex_unlock(&st->sess.lock);
		pu_handle_rotations(st, cur);
		now = np_now_mono_ns();
		if (st->interval_s && now >= next_tick) {
			pu_tick(st, cur);
			next_tick = now + (uint64_t)st->interval_s * 1000000000ull;
		}
		now = np_now_mono_ns();
		if (now >= next_try) {
			uint64_t wait = pu_flush(st, &backoff, &retrying);

			next_try = np_now_mono_ns() + wait * 1000000ull;
		}
		pu_helper_idle(st);
		/* sleep until the next tick, retry or idle stop, or a rotation or the stop */
		wake = st->interval_s ? next_tick : UINT64_MAX;
		if (st->spool.n && next_try < wake)
			wake = next_try;
		if (pu_idle_end(st) < wake)
			wake = pu_idle_end(st);
		if (wake == UINT64_MAX)
			wake = np_now_mono_ns() + 3600ull * 1000000000ull;
		dl.tv_sec = (time_t)(wake / 1000000000ull);
		dl.tv_nsec = (long)(wake % 1000000000ull);
		pthread_mutex_lock(&st->sess.lock);
		if (!st->sess.stopping && !st->rotq_n)
			pthread_cond_timedwait(&st->sess.cond, &st->sess.lock, &dl);
		pthread_mutex_unlock(&st->sess.lock);
	}
	return NULL;
}

/* ------------------------------------------------------------------ */
/* daemon side                                                         */
/* ------------------------------------------------------------------ */

/* "via proxy URL (from VAR; not for LIST; with credentials)" or "no proxy": never userinfo */
static void pu_proxy_text(const struct pu_state *st, char *buf, size_t len)
{
	if (!st->proxy) {
		snprintf(buf, len, "no proxy%s", st->proxy_none ? " (proxy=none)" : "");
		return;
	}
	snprintf(buf, len, "via proxy %s (from %s%s%s%s)", st->proxy_shown, st->proxy_from,
		 st->noproxy ? "; not for " : "", st->noproxy ? st->noproxy : "",
		 st->proxy_user ? "; proxy_auth_file's credentials" : "");
}

static int pu_start(void *priv)
{
	struct pu_state *st = priv;
	const char *sdir = st->host->session_dir ? st->host->session_dir(st->ctx) : NULL;
	char err[640], via[1280], helper[256];
	bool https;
	int rc;

	if (!sdir) {
		st->host->log(st->ctx, OP_LOG_ERR, "no session directory: nothing to spool into");
		return -ENOENT;
	}
	rc = spool_open(&st->spool, sdir, PU_SPOOL_DIR, st->spool_mb << 20, st->spool_files, err,
			sizeof(err));
	if (rc) {
		st->host->log(st->ctx, OP_LOG_ERR, "%s", err);
		return rc;
	}
	pu_count_spool(st);
	/*
	 * Resident (helper_idle=0): the helper now, on the daemon's thread
	 * (it outlives every child: the death signal follows the forking
	 * thread), so that a helper that cannot start is an error at start,
	 * and its hello names the TLS library for the start line. Later
	 * restarts, and on demand every start, are the sender's (a thread
	 * that lives until the stop). On demand the program and the user
	 * were checked by np_child_init.
	 */
	rc = st->idle_s ? 0 : pu_helper_up(st);
	if (rc) {
		spool_close(&st->spool);
		return rc;
	}
	st->cur.before_ns = np_now_wall_ns();
	rc = np_thread_start(&st->thread, pu_thread, st);
	if (rc) {
		st->host->log(st->ctx, OP_LOG_ERR, "cannot start the sender thread: %s",
			      strerror(-rc));
		np_child_stop(&st->child, PU_STOP_MS);
		spool_close(&st->spool);
		return rc;
	}
	st->running = true;
	if (st->interval_s)
		snprintf(err, sizeof(err), "every %u s", st->interval_s);
	else
		snprintf(err, sizeof(err), "at each rotation");
	https = !strncasecmp(st->url, "https:", 6) && st->helper_tls[0];
	pu_proxy_text(st, via, sizeof(via));
	/* on demand no helper runs yet: no pid, no libcurl or TLS library known */
	if (st->idle_s)
		snprintf(helper, sizeof(helper), "helper %s on demand as %s, exits after %u s idle",
			 st->child.name, st->child.drop ? st->child.user : "the daemon's user",
			 st->idle_s);
	else
		snprintf(helper, sizeof(helper), "helper %s pid %d as %s (libcurl %s)",
			 st->child.name, (int)st->child.pid,
			 st->child.drop ? st->child.user : "the daemon's user", st->helper_curl);
	st->host->log(st->ctx, OP_LOG_INFO,
		      "pushing to %s (%s%s%s) %s, %s, spool %s/%s up to %" PRIu64
		      " MiB / %u files (%u waiting); %s",
		      st->url, st->proto == PU_PYROSCOPE ? "pyroscope" : "parca",
		      https ? ", TLS: " : "", https ? st->helper_tls : "", err, via, sdir,
		      PU_SPOOL_DIR, st->spool_mb, st->spool_files, st->spool.n, helper);
	return 0;
}

/*
 * STOP, on the daemon's thread, the files synced: what the last push left
 * out (queued rotations, then samples/current since the last push) goes
 * to the spool, for the next start to send.
 */
static void pu_final(struct pu_state *st)
{
	char dir[4096], err[512];
	struct np_snap *now;
	uint64_t t = np_now_wall_ns();

	pu_handle_rotations(st, &st->cur);
	np_session_where(&st->sess, dir, sizeof(dir), NULL, NULL, 0, NULL);
	if (!dir[0] || np_snap_read(dir, &now, err, sizeof(err)))
		return;
	pu_enqueue(st, now, st->cur.before, st->cur.before_ns, t);
	np_snap_free(now);
	st->host->log(st->ctx, OP_LOG_INFO,
		      "stopping: %u profiles wait in the spool for the next start", st->spool.n);
}

static void pu_stop(void *priv)
{
	struct pu_state *st = priv;

	np_session_stop(&st->sess);
	if (st->running) {
		/* a request in flight is not waited for (pu_answer sees the stop) */
		pthread_join(st->thread, NULL);
		st->running = false;
		/* the helper aborts its transfer when its socket closes */
		np_child_stop(&st->child, PU_STOP_MS);
		pu_final(st);
		spool_close(&st->spool);
	}
	np_snap_free(st->cur.before);
	st->cur.before = NULL;
}

/* on the daemon's thread: hand the finished session to the sender */
static void pu_rotated(void *priv, const char *prev_dir, uint64_t end_ns)
{
	struct pu_state *st = priv;

	pthread_mutex_lock(&st->sess.lock);
	if (st->rotq_n < PU_ROTQ) {
		snprintf(st->rotq[st->rotq_n].dir, sizeof(st->rotq[0].dir), "%s", prev_dir);
		st->rotq[st->rotq_n++].end_ns = end_ns;
	} else {
		st->rotq_lost++;
	}
	pthread_cond_broadcast(&st->sess.cond);
	pthread_mutex_unlock(&st->sess.lock);
}

static void pu_print_stats(void *priv, const struct op_stats_sink *sink)
{
	struct pu_state *st = priv;
	char line[1536], last[256], hlast[64], demand[96], via[1280];
	uint64_t lost, spawns = atomic_load(&st->helper_spawns);
	uint64_t restarts = atomic_load(&st->helper_restarts);
	uint64_t idle_exits = atomic_load(&st->helper_idle_exits);

	pthread_mutex_lock(&st->sess.lock);
	memcpy(last, st->last_error, sizeof(last));
	memcpy(hlast, st->helper_last, sizeof(hlast));
	lost = st->rotq_lost;
	pthread_mutex_unlock(&st->sess.lock);
	if (sink->counter) {
		sink->counter(sink, "sent", atomic_load(&st->sent));
		sink->counter(sink, "bytes", atomic_load(&st->bytes));
		sink->counter(sink, "failed", atomic_load(&st->failed));
		sink->counter(sink, "retried", atomic_load(&st->retried));
		sink->counter(sink, "dropped", atomic_load(&st->dropped));
		sink->counter(sink, "profiles", atomic_load(&st->encoded));
		sink->counter(sink, "empty", atomic_load(&st->empty));
		sink->counter(sink, "spooled", atomic_load(&st->spooled_files));
		sink->counter(sink, "spooled_bytes", atomic_load(&st->spooled_bytes));
		sink->counter(sink, "rotations_missed", lost);
		sink->counter(sink, "helper_restarts", restarts);
		sink->counter(sink, "helper_lost", atomic_load(&st->helper_lost));
		sink->counter(sink, "helper_spawns", spawns);
		sink->counter(sink, "helper_idle_exits", idle_exits);
	}
	if (sink->text) {
		np_child_demand_text(st->idle_s, spawns, idle_exits, demand, sizeof(demand));
		snprintf(line, sizeof(line),
			 "push to %s: sent %" PRIu64 " (%" PRIu64 " bytes), failed %" PRIu64
			 ", retried %" PRIu64 ", dropped %" PRIu64 ", spooled %" PRIu64 " (%" PRIu64
			 " bytes), last error: %s; helper %s: restarts %" PRIu64
			 ", lost in a request %" PRIu64 ", last exit: %s%s",
			 st->url, (uint64_t)atomic_load(&st->sent),
			 (uint64_t)atomic_load(&st->bytes), (uint64_t)atomic_load(&st->failed),
			 (uint64_t)atomic_load(&st->retried), (uint64_t)atomic_load(&st->dropped),
			 (uint64_t)atomic_load(&st->spooled_files),
			 (uint64_t)atomic_load(&st->spooled_bytes), last[0] ? last : "none",
			 PU_HELPER, restarts, (uint64_t)atomic_load(&st->helper_lost),
			 hlast[0] ? hlast : "none", demand);
		sink->text(sink, line);
		pu_proxy_text(st, via, sizeof(via));
		snprintf(line, sizeof(line), "proxy: %s", via);
		sink->text(sink, line);
	}
}

static const struct op_stats_ops pu_stats_ops = {
	.size = sizeof(struct op_stats_ops),
	.print_stats = pu_print_stats,
};

static void pu_free(void *data)
{
	struct pu_state *st = data;

	pu_stop(st);
	np_session_fini(&st->sess);
	pu_free_labels(st);
	free(st->url);
	free(st->service);
	free(st->auth_file);
	free(st->ca_file);
	pu_wipe(st->org_id);
	pu_wipe(st->bearer);
	pu_wipe(st->basic_user);
	pu_wipe(st->basic_password);
	pu_wipe(st->proxy_user);
	pu_wipe(st->proxy_password);
	pu_wipe(st->proxy);
	free(st->proxy_shown);
	free(st->noproxy);
	free(st->proxy_auth_file);
	free(st->user);
	free(st->pyro_name);
	if (st->ca_fd >= 0)
		close(st->ca_fd);
	free(st);
}

static int pu_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct pu_state *st;
	char why[512];
	int rc;

	st = np_state_new(host, ctx, sizeof(*st), offsetof(struct pu_state, sess), pu_free, &rc);
	if (!st)
		return rc;
	st->ctx = ctx;
	st->host = host;
	st->proto = PU_PYROSCOPE;
	st->spool_mb = PU_DEFAULT_SPOOL_MB;
	st->spool_files = PU_DEFAULT_SPOOL_FILES;
	st->timeout_s = PU_DEFAULT_TIMEOUT_S;
	st->idle_s = PU_DEFAULT_IDLE_S;
	st->ca_fd = -1;
	rc = pu_strdup(&st->service, PU_DEFAULT_SERVICE);
	if (!rc)
		rc = pu_read_config(st);
	if (!rc)
		rc = np_parse_args(host, ctx, "push", args, pu_set, st);
	if (rc)
		return rc;
	if (!st->url) {
		host->log(ctx, OP_LOG_ERR,
			  "no url: expected --ext-feature=push:url=http://HOST:PORT[,protocol="
			  "pyroscope|parca] (or plugins.push.url)");
		return -EINVAL;
	}
	if (st->auth_file) {
		rc = pu_read_auth(st);
		if (rc)
			return rc;
	}
	if (st->ca_file) {
		rc = pu_check_ca(st);
		if (rc)
			return rc;
	}
	if (!st->proxy && !st->proxy_none) {
		rc = pu_proxy_env(st);
		if (rc)
			return rc;
	}
	if (st->proxy_auth_file) {
		if (!st->proxy) {
			host->log(ctx, OP_LOG_ERR,
				  "proxy_auth_file %s but no proxy (%s): expected proxy=URL, or "
				  "https_proxy/http_proxy/all_proxy in the daemon's environment",
				  st->proxy_auth_file, st->proxy_none ? "proxy=none" : "none set");
			return -EINVAL;
		}
		rc = pu_read_proxy_auth(st);
		if (rc)
			return rc;
	}
	if (st->proto == PU_PYROSCOPE && pu_pyroscope_name(st))
		return -ENOMEM;
	rc = pu_check_request(st);
	if (rc)
		return rc;
	/* the helper: its user and program checked now, errors at start */
	st->helper_argv[0] = (char *)PU_HELPER;
	st->helper_argv[1] = st->ca_fd >= 0 ? (char *)PW_ARG_CA : NULL;
	rc = np_child_init(&st->child, PU_HELPER, st->user, st->ca_fd, st->helper_argv, why,
			   sizeof(why));
	if (rc) {
		host->log(ctx, OP_LOG_ERR, "%s", why);
		return rc;
	}
	st->child_inited = true;
	st->child.idle_ms = (uint64_t)st->idle_s * 1000;
	st->sess.rotated = pu_rotated;
	return np_session_register(&st->sess, pu_start, pu_stop, &pu_stats_ops, st);
}

OP_EXT_DEFINE(.name = "push", .version = "1.0",
	      .summary = "push: the delta as pprof to Pyroscope or Parca (libcurl), spooled "
			 "on disk while the store is down",
	      .ext_init = pu_init);
