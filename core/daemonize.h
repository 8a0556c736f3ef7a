/*
 * daemonize.h - oprofiled's start-up as a service: config-file plugins
 * checked, RLIMIT_NOFILE, --daemonize (double fork, readiness reported to
 * the starting process), stdout/stderr following the log. The state lives
 * in struct control (control.h); main.c calls these hooks.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_DAEMONIZE_H
#define OP_CORE_DAEMONIZE_H

#include <stddef.h>
#include <stdio.h>

struct control;
struct op_options;
struct op_log;
struct session;

/*
 * Before any plugin is loaded: every plugin the config file asks for exists
 * in the plugin directory; else "FILE:LINE: ..." to @err and -ENOENT.
 */
int daemonize_check_plugins(const struct op_options *o, FILE *err);

/*
 * After the sample files are set up, before the perf rings are opened:
 * raise RLIMIT_NOFILE to what the sample-file LRU and the rings need and,
 * with --daemonize (not in launch mode), detach. The starting process waits
 * until daemonize_ready() (exit 0) or until the daemon exits first (exit 1,
 * pointing at the log); it never returns. 0 or -errno in the daemon.
 */
int daemonize_prepare(struct control *c, const struct op_options *o, struct session *sess,
		      size_t nr_events, struct op_log *log);

/* Profiling runs: release the process that started a --daemonize'd daemon. */
void daemonize_ready(struct control *c);
/* After SIGHUP reopened the log: a daemon's stdout/stderr follow it. */
void daemonize_after_hup(struct control *c);

#endif /* OP_CORE_DAEMONIZE_H */
