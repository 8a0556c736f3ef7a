/*
 * metrics.h - GET /metrics of the pprof plugin: the daemon's statistics
 * in Prometheus' text exposition format (version 0.0.4). Prefix pm_.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PLUGINS_PPROF_METRICS_H
#define OP_PLUGINS_PPROF_METRICS_H

#include <stddef.h>

/*
 * The daemon's counters as `opcontrol --status` shows them, read through
 * the control socket of @session_dir (the daemon's own thread answers
 * between two drain rounds: the sample path takes no lock for it), turned
 * into Prometheus metrics, plus this process' RSS and CPU time. *out is
 * malloc'd text. 0 or -errno with @err.
 */
int pm_scrape(const char *session_dir, unsigned timeout_ms, char **out, size_t *len, char *err,
	      size_t err_len);

#endif /* OP_PLUGINS_PPROF_METRICS_H */
