/*
 * netplug.c - helpers compiled into the pprof and push plugins: argument
 * splitting, signal-safe threads, the session hook and the waits on it
 * (see netplug.h).
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "netplug.h"
#include "plugin_util.h"

/* longer than any URL, label list and path a sane configuration holds */
#define NP_ARGS_MAX 4096

int np_parse_args(const struct op_host *h, op_ext_t *ctx, const char *plugin, const char *args,
		  int (*set)(void *priv, const char *key, const char *val, const char *where),
		  void *priv)
{
	char *buf, *tok, *save = NULL, where[NP_ARGS_MAX + 80];
	size_t len;
	int rc = 0;

	if (!args || !*args)
		return 0;
	len = strlen(args);
	if (len > NP_ARGS_MAX) {
		h->log(ctx, OP_LOG_ERR,
		       "--ext-feature=%s:...: arguments of %zu bytes, at most %d expected", plugin,
		       len, NP_ARGS_MAX);
		return -EINVAL;
	}
	buf = strdup(args);
	if (!buf)
		return -ENOMEM;
	for (tok = strtok_r(buf, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save)) {
		char *val = strchr(tok, '=');

		if (!val || val == tok) {
			h->log(ctx, OP_LOG_ERR,
			       "--ext-feature=%s:%s: expected KEY=VALUE, found \"%s\"", plugin,
			       args, tok);
			rc = -EINVAL;
			break;
		}
		*val++ = '\0';
		snprintf(where, sizeof(where), "--ext-feature=%s:%s=...", plugin, tok);
		rc = set(priv, tok, val, where);
	}
	free(buf);
	return rc;
}

int np_read_config(const struct op_host *h, op_ext_t *ctx, const char *plugin,
		   const char *const *strs, const char *const *ints, const char *const *bools,
		   int (*set)(void *priv, const char *key, const char *val, const char *where),
		   void *priv)
{
	char where[128], text[32];
	const char *val;
	int64_t v;
	bool b, found;
	int rc = 0;

	for (; strs && *strs && !rc; strs++) {
		rc = pu_config_string(h, ctx, *strs, &val, &found);
		snprintf(where, sizeof(where), "config plugins.%s.%s", plugin, *strs);
		if (!rc && found)
			rc = set(priv, *strs, val, where);
	}
	for (; ints && *ints && !rc; ints++) {
		rc = pu_config_int64(h, ctx, *ints, &v, &found);
		snprintf(where, sizeof(where), "config plugins.%s.%s", plugin, *ints);
		/* a negative number reaches @set as text it refuses, with the key named */
		snprintf(text, sizeof(text), "%" PRId64, v);
		if (!rc && found)
			rc = set(priv, *ints, text, where);
	}
	for (; bools && *bools && !rc; bools++) {
		rc = h->config_bool ? h->config_bool(ctx, *bools, &b) : -ENOSYS;
		snprintf(where, sizeof(where), "config plugins.%s.%s", plugin, *bools);
		if (!rc)
			rc = set(priv, *bools, b ? "yes" : "no", where);
		else if (rc == -ENOENT || rc == -ENOSYS)
			rc = 0;
	}
	return rc;
}

int np_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	pthread_attr_t attr;
	int rc;

	rc = pthread_attr_init(&attr);
	if (rc)
		return -rc;
	/* not the 8 MiB default: see NP_THREAD_STACK */
	pthread_attr_setstacksize(&attr, NP_THREAD_STACK);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(t, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return -rc;
}

static uint64_t np_clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t np_now_mono_ns(void)
{
	return np_clock_ns(CLOCK_MONOTONIC);
}

uint64_t np_now_wall_ns(void)
{
	return np_clock_ns(CLOCK_REALTIME);
}

/* ------------------------------------------------------------------ */
/* the session                                                         */
/* ------------------------------------------------------------------ */

int np_session_init(struct np_session *s, const struct op_host *h, op_ext_t *ctx)
{
	pthread_condattr_t ca;
	int rc;

	memset(s, 0, sizeof(*s));
	s->host = h;
	s->ctx = ctx;
	pthread_mutex_init(&s->lock, NULL);
	/* waits are measured on the monotonic clock: a clock step is no timeout */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	rc = -pthread_cond_init(&s->cond, &ca);
	pthread_condattr_destroy(&ca);
	if (rc)
		pthread_mutex_destroy(&s->lock);
	return rc;
}

void *np_state_new(const struct op_host *h, op_ext_t *ctx, size_t size, size_t sess_off,
		   void (*free_func)(void *), int *rc)
{
	char *st = calloc(1, size);
	struct np_session *s = (struct np_session *)(void *)(st + sess_off);

	if (!st) {
		h->log(ctx, OP_LOG_ERR, "out of memory");
		*rc = -ENOMEM;
		return NULL;
	}
	*rc = np_session_init(s, h, ctx);
	if (*rc) {
		free(st);
		return NULL;
	}
	*rc = h->set_user_data(ctx, &(struct op_user_data){ .size = sizeof(struct op_user_data),
							    .data = st,
							    .free_func = free_func });
	if (*rc) {
		np_session_fini(s);
		free(st);
		return NULL;
	}
	return st;
}

void np_session_fini(struct np_session *s)
{
	pthread_cond_destroy(&s->cond);
	pthread_mutex_destroy(&s->lock);
}

static void np_set_dir(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

static int np_session_on_event(void *priv, const struct op_session_event *e)
{
	struct np_session *s = priv;
	int rc = 0;

	switch (e->kind) {
	case OP_SESSION_START:
		pthread_mutex_lock(&s->lock);
		np_set_dir(s->dir, sizeof(s->dir), e->dir);
		pthread_mutex_unlock(&s->lock);
		/* threads start now, in the process that samples (after any fork) */
		rc = s->start ? s->start(s->priv) : 0;
		pthread_mutex_lock(&s->lock);
		s->started = !rc;
		pthread_mutex_unlock(&s->lock);
		break;
	case OP_SESSION_DUMP:
		pthread_mutex_lock(&s->lock);
		s->dumps++;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		break;
	case OP_SESSION_ROTATED:
		pthread_mutex_lock(&s->lock);
		np_set_dir(s->dir, sizeof(s->dir), e->dir);
		np_set_dir(s->prev_dir, sizeof(s->prev_dir), e->prev_dir);
		s->prev_end_ns = e->end_ns;
		s->rotations++;
		/* a rotation also made the files current */
		s->dumps++;
		pthread_cond_broadcast(&s->cond);
		pthread_mutex_unlock(&s->lock);
		if (s->rotated && e->prev_dir)
			s->rotated(s->priv, e->prev_dir, e->end_ns);
		break;
	case OP_SESSION_STOP:
		/* the threads end before the daemon does */
		if (s->stop)
			s->stop(s->priv);
		break;
	default:
		break;
	}
	return rc;
}

int np_session_register(struct np_session *s, int (*start)(void *), void (*stop)(void *),
			const struct op_stats_ops *stats, void *priv)
{
	const struct op_session_hook_desc d = {
		.size = sizeof(d),
		.name = "session",
		.on_event = np_session_on_event,
	};

	int rc;

	s->start = start;
	s->stop = stop;
	s->priv = priv;
	if (!OP_HOST_HAS(s->host, register_session_hook)) {
		s->host->log(s->ctx, OP_LOG_ERR,
			     "this oprofiled has no session hook (SDK 1.2 needed): cannot run");
		return -ENOSYS;
	}
	rc = s->host->register_session_hook(s->ctx, &d, s);
	if (!rc)
		rc = s->host->register_stats(s->ctx, stats, priv);
	if (rc)
		s->host->log(s->ctx, OP_LOG_ERR, "registering with oprofiled failed: %s",
			     strerror(-rc));
	return rc;
}

void np_session_stop(struct np_session *s)
{
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->lock);
}

static void np_deadline(struct timespec *ts, uint64_t ms)
{
	uint64_t t = np_now_mono_ns() + ms * 1000000ull;

	ts->tv_sec = (time_t)(t / 1000000000ull);
	ts->tv_nsec = (long)(t % 1000000000ull);
}

int np_session_dump(struct np_session *s, unsigned timeout_ms)
{
	struct timespec dl;
	uint64_t seen;
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	seen = s->dumps;
	pthread_mutex_unlock(&s->lock);
	/*
	 * the daemon takes SIGUSR1 on its signalfd: drain, sync, DUMP event;
	 * one it sent itself writes no statistics block to the log
	 */
	/*
	 * to the main thread (its tid is the pid), which blocks SIGUSR1 and
	 * reads it from the signalfd: sent to the process, the signal may go
	 * to any thread that does not block it - a thread started before the
	 * daemon blocked its signals (the kernel plugin's kallsyms pass at
	 * start) - whose default action ends the daemon
	 */
	if (syscall(SYS_tgkill, getpid(), getpid(), SIGUSR1))
		return -errno;
	np_deadline(&dl, timeout_ms);
	pthread_mutex_lock(&s->lock);
	while (!s->stopping && s->dumps == seen && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&s->cond, &s->lock, &dl);
	rc = s->stopping ? -ECANCELED : s->dumps != seen ? 0 : -ETIMEDOUT;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

int np_session_wait(struct np_session *s, uint64_t ms)
{
	struct timespec dl;
	int rc = 0;

	np_deadline(&dl, ms);
	pthread_mutex_lock(&s->lock);
	while (!s->stopping && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&s->cond, &s->lock, &dl);
	rc = s->stopping ? -ECANCELED : 0;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

void np_session_where(struct np_session *s, char *dir, size_t len, uint64_t *rotations, char *prev,
		      size_t prev_len, uint64_t *prev_end_ns)
{
	pthread_mutex_lock(&s->lock);
	np_set_dir(dir, len, s->dir);
	if (prev)
		np_set_dir(prev, prev_len, s->prev_dir);
	if (rotations)
		*rotations = s->rotations;
	if (prev_end_ns)
		*prev_end_ns = s->prev_end_ns;
	pthread_mutex_unlock(&s->lock);
}

/* a dump that times out still leaves files at most one drain round old */
#define NP_DUMP_TIMEOUT_MS 2000

int np_session_delta(struct np_session *s, unsigned seconds, void **buf, size_t *len, char *err,
		     size_t err_len)
{
	char dir[sizeof(s->dir)], prev[sizeof(s->prev_dir)];
	struct np_snap *before = NULL, *now = NULL;
	uint64_t rot0, rot1, t0, t1, t_rot;
	int rc;

	rc = np_session_dump(s, NP_DUMP_TIMEOUT_MS);
	if (rc == -ECANCELED)
		return rc;
	np_session_where(s, dir, sizeof(dir), &rot0, NULL, 0, NULL);
	t0 = np_now_wall_ns();
	rc = np_snap_read(dir, &before, err, err_len);
	if (rc)
		return rc;
	/* sampling goes on untouched: this thread only sleeps */
	rc = np_session_wait(s, (uint64_t)seconds * 1000);
	if (!rc)
		rc = np_session_dump(s, NP_DUMP_TIMEOUT_MS);
	if (rc == -ECANCELED)
		goto out;
	t1 = np_now_wall_ns();
	np_session_where(s, dir, sizeof(dir), &rot1, prev, sizeof(prev), &t_rot);
	if (rot1 != rot0)
		/* the profile ends with the rotated session */
		t1 = t_rot;
	if (rot1 == rot0 + 1) {
		/* the counts of before went on in the rotated session up to its end */
		rc = np_snap_read(prev, &now, err, err_len);
	} else if (rot1 != rot0) {
		/* several rotations in the window: only the last one is whole */
		rc = np_snap_read(prev, &now, err, err_len);
		np_snap_free(before);
		before = NULL;
	} else {
		rc = np_snap_read(dir, &now, err, err_len);
	}
	if (!rc)
		rc = np_snap_encode(now, before, t0, t1, false, buf, len, NULL, err, err_len);
out:
	np_snap_free(now);
	np_snap_free(before);
	return rc;
}
