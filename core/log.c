/* The daemon's one logger: see log.h. */
#include <string.h>
#include <time.h>

#include "log.h"

void log_init(struct op_log *log, FILE *fp)
{
	memset(log, 0, sizeof(*log));
	log->fp = fp;
}

void log_set_file(struct op_log *log, FILE *fp)
{
	log->fp = fp;
}

FILE *log_file(const struct op_log *log)
{
	return log ? log->fp : NULL;
}

void log_vput(FILE *fp, const char *prefix, const char *fmt, va_list ap)
{
	char buf[2048];
	size_t len;

	if (!fp)
		return;
	vsnprintf(buf, sizeof(buf), fmt ? fmt : "(null)", ap);
	len = strlen(buf);
	while (len && buf[len - 1] == '\n')
		buf[--len] = '\0';
	fprintf(fp, "%s%s\n", prefix ? prefix : "", buf);
	fflush(fp);
}

void log_put(FILE *fp, const char *prefix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vput(fp, prefix, fmt, ap);
	va_end(ap);
}

void log_info(struct op_log *log, const char *fmt, ...)
{
	va_list ap;

	if (!log)
		return;
	va_start(ap, fmt);
	log_vput(log->fp, LOG_PREFIX, fmt, ap);
	va_end(ap);
}

void log_verr(struct op_log *log, const char *prefix, const char *fmt, va_list ap)
{
	va_list again;
	FILE *fp = log ? log->fp : stderr;

	if (log && log->echo_errors && !log->stderr_is_log && fp && fp != stderr) {
		va_copy(again, ap);
		log_vput(stderr, prefix, fmt, again);
		va_end(again);
	}
	log_vput(fp, prefix, fmt, ap);
}

void log_err(struct op_log *log, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_verr(log, LOG_PREFIX, fmt, ap);
	va_end(ap);
}

void log_debug(struct op_log *log, const char *fmt, ...)
{
	va_list ap;

	if (!log || !log->verbose)
		return;
	va_start(ap, fmt);
	log_vput(log->fp, LOG_PREFIX, fmt, ap);
	va_end(ap);
}

void log_raw(struct op_log *log, const char *fmt, ...)
{
	va_list ap;

	if (!log || !log->fp)
		return;
	va_start(ap, fmt);
	vfprintf(log->fp, fmt, ap);
	va_end(ap);
	fflush(log->fp);
}

void log_limit_init(struct log_limit *lim, unsigned max, unsigned window_ms)
{
	memset(lim, 0, sizeof(*lim));
	lim->max = max;
	lim->window_ms = window_ms;
}

bool log_limit_pass(struct log_limit *lim, struct op_log *log, const char *prefix, uint64_t now_ms)
{
	if (!lim->max)
		return true;
	if (now_ms - lim->start_ms >= lim->window_ms) {
		if (lim->suppressed && log)
			log_put(log->fp, prefix, "%llu messages suppressed (more than %u in %u ms)",
				(unsigned long long)lim->suppressed, lim->max, lim->window_ms);
		lim->start_ms = now_ms;
		lim->in_window = 0;
		lim->suppressed = 0;
	}
	if (lim->in_window >= lim->max) {
		lim->suppressed++;
		return false;
	}
	lim->in_window++;
	return true;
}

uint64_t log_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}
