/*
 * ext_log.c - the plugin loader's messages ("oprofiled: ...") and plugins'
 * ("NAME: level: ...", rate-limited per plugin), written through main's
 * struct op_log.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ext_int.h"

/* main's log, or one on stderr for a loader made without one (tools, tests) */
static struct op_log *ext_log_of(const struct ext_loader *l)
{
	static struct op_log to_stderr;

	if (l && l->log)
		return l->log;
	log_init(&to_stderr, stderr);
	return &to_stderr;
}

static FILE *ext_log_file(const struct ext_loader *l)
{
	return log_file(ext_log_of(l));
}

/*
 * Start-up errors (refusals, failed inits, conflicts) also go to stderr when
 * the log is a file (op_log.echo_errors): the daemon may stop before anyone
 * reads that log, and a session that failed to start is removed together
 * with its log.
 */
static bool ext_log_echo(const struct ext_loader *l, FILE *f)
{
	return l && l->log && l->log->echo_errors && !l->log->stderr_is_log && f && f != stderr;
}

static void ext_log_put(const struct ext_loader *l, bool echo, const char *prefix, const char *fmt,
			va_list ap)
{
	FILE *f = ext_log_file(l);
	va_list again;

	if (echo && ext_log_echo(l, f)) {
		va_copy(again, ap);
		log_vput(stderr, prefix, fmt, again);
		va_end(again);
	}
	log_vput(f, prefix, fmt, ap);
}

void ext_log_msg(const struct ext_loader *l, bool echo, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ext_log_put(l, echo, LOG_PREFIX, fmt, ap);
	va_end(ap);
}

static const char *const ext_log_level_names[] = { "error: ", "warning: ", "", "debug: " };

void ext_log_plugin_vlog(op_ext_t *ctx, enum op_log_level level, const char *fmt, va_list ap)
{
	struct ext_loader *l = ctx ? ctx->loader : NULL;
	FILE *f = ext_log_file(l);
	char prefix[EXT_NAME_MAX + 16], buf[1024];

	if (level == OP_LOG_DEBUG && !(l && l->verbose))
		return;
	if ((unsigned)level > OP_LOG_DEBUG)
		level = OP_LOG_DEBUG;
	/*
	 * A plugin that logs per sample must not flood the log: at most
	 * log_limit messages per window, then one line saying how many were
	 * dropped ("NAME: warning: N messages suppressed ...").
	 */
	if (ctx) {
		/* SDK 1.2: plugin threads log too; the limiter's state is shared */
		static pthread_mutex_t limit_lock = PTHREAD_MUTEX_INITIALIZER;
		bool pass;

		snprintf(prefix, sizeof(prefix), "%s: %s", ctx->name,
			 ext_log_level_names[OP_LOG_WARN]);
		pthread_mutex_lock(&limit_lock);
		pass = log_limit_pass(&ctx->limit, ext_log_of(l), prefix, log_now_ms());
		pthread_mutex_unlock(&limit_lock);
		if (!pass)
			return;
	}
	vsnprintf(buf, sizeof(buf), fmt ? fmt : "(null)", ap);
	snprintf(prefix, sizeof(prefix), "%s: %s", ctx ? ctx->name : "?",
		 ext_log_level_names[level]);
	log_put(f, prefix, "%s", buf);
	/* why a plugin refuses to start must reach the terminal, not only the log (see ext_log_put) */
	if (level == OP_LOG_ERR && ctx && ctx->in_init && ext_log_echo(l, f))
		log_put(stderr, LOG_PREFIX, "%s%s", prefix, buf);
}

void ext_log_plugin(op_ext_t *ctx, enum op_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ext_log_plugin_vlog(ctx, level, fmt, ap);
	va_end(ap);
}

void ext_log_err(op_ext_t *ctx, const char *fmt, ...)
{
	char prefix[PATH_MAX + 128];
	va_list ap;

	snprintf(prefix, sizeof(prefix), LOG_PREFIX "plugin \"%s\" (%s): ", ctx->name, ctx->path);
	va_start(ap, fmt);
	ext_log_put(ctx->loader, true, prefix, fmt, ap);
	va_end(ap);
}
