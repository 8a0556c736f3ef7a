/*
 * The daemon's one logger.
 *
 * Every stage of oprofiled (options and config parsing, the loader and its
 * plugins, the ring reader, sync, the sample files, service mode) writes its
 * messages through one struct op_log that main owns.  A stage keeps a pointer
 * to it, never a FILE *, so a SIGHUP that reopens the session log moves every
 * stage's messages at once.
 *
 * Lines look as they always did: "oprofiled: message\n" for the core,
 * "NAME: level: message\n" for a plugin.  Every line is flushed: the log is
 * read by people tailing it and by tests while the daemon runs.
 *
 * None of this is on the sample path: a stage logs on error paths, at
 * start-up and at stop, and a stage that may log per event (a plugin, the
 * sample files) passes through a struct log_limit first.
 */
#ifndef OPNG_CORE_LOG_H
#define OPNG_CORE_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define LOG_PREFIX "oprofiled: "

struct op_log {
	FILE *fp;           /* the session log, stderr before one exists, NULL: nowhere */
	bool echo_errors;   /* errors also to stderr while fp is another file (start-up) */
	bool stderr_is_log; /* daemonized: stderr was pointed at the log, do not echo */
	bool verbose;       /* debug lines are written (--verbose) */
};

/* A log writing to @fp (may be NULL) with no echo and no debug lines. */
void log_init(struct op_log *log, FILE *fp);

/* Send every later line to @fp (a SIGHUP reopen; NULL: nowhere). */
void log_set_file(struct op_log *log, FILE *fp);

/* Where lines go now, for multi-line dumps (stats); NULL if nowhere. */
FILE *log_file(const struct op_log *log);

/*
 * The one formatter: @prefix (may be NULL), the message without its trailing
 * newlines, one newline, fflush.  For callers that write to a stream of
 * their own choosing (option and config errors go to the caller's @err).
 */
void log_vput(FILE *fp, const char *prefix, const char *fmt, va_list ap);
void log_put(FILE *fp, const char *prefix, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* "oprofiled: msg" to the log. */
void log_info(struct op_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * "oprofiled: msg" to the log and, unless stderr is the log or echo is off,
 * to stderr as well: why a start failed must reach the terminal.
 */
void log_err(struct op_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_verr(struct op_log *log, const char *prefix, const char *fmt, va_list ap);

/* "oprofiled: msg" only with verbose set. */
void log_debug(struct op_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Text as given, no prefix and no newline added (stats blocks, time stamps). */
void log_raw(struct op_log *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * At most @max lines per @window_ms.  log_limit_pass() says whether one more
 * line may be written now; when a new window opens after lines were
 * suppressed it first writes "PREFIXN messages suppressed (...)" to @log.
 * max == 0: no limit.
 */
struct log_limit {
	unsigned max;
	unsigned window_ms;
	uint64_t start_ms;
	unsigned in_window;
	uint64_t suppressed;
};

void log_limit_init(struct log_limit *lim, unsigned max, unsigned window_ms);
bool log_limit_pass(struct log_limit *lim, struct op_log *log, const char *prefix, uint64_t now_ms);

/* CLOCK_MONOTONIC_COARSE in ms: a vDSO read, no system call. */
uint64_t log_now_ms(void);

#endif
