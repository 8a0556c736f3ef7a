/*
 * timer.c - the "timer" hardware model: samples on the kernel's cpu-clock
 * software event when no hardware PMU is usable (VMs, this machine). It
 * claims any CPU with the lowest priority, so a real PMU model always wins.
 * SPDX-License-Identifier: MIT
 *
 * What the core writes for this model (OProfile timer-mode compatible):
 *   sample-file header: cpu_type = 4 (OP_CPU_TIMER, "timer"), ctr_event = 0,
 *                       ctr_um = 0, ctr_count = the period in ns (the
 *                       event's count; default_event carries the effective
 *                       default, e.g. "TIMER:250000" for 4 kHz);
 *   file name:          TIMER.<period>.0.<tgid|all>.<tid|all>.<cpu|all>.
 * An event given without a count (count 0) samples at the configured rate;
 * its files then say count 0, as OProfile's own timer mode did.
 *
 * Arguments: --ext-feature=timer:freq=HZ or timer:period=NS (one of them),
 * or config plugins.timer.frequency / plugins.timer.period; arguments win.
 * Every way of giving the rate has the same limit, at most 10 kHz per CPU
 * (OP_TIMER_* in lib/op_events.h, which ophelp's TIMER event uses too).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oprofile_sdk.h"
#include "../common/plugin_util.h"
#include "../../lib/op_events.h" /* the OP_TIMER_* limits only: nothing is linked */

#define TIMER_CPU_TYPE_ID 4 /* OProfile's CPU_TIMER_INT */
#define TIMER_EVENT OP_TIMER_EVENT
#define TIMER_DEFAULT_HZ OP_TIMER_DEFAULT_HZ
/* freq= 1..10000 Hz; period= and event counts 100000..1000000000 ns: the same limit */
#define TIMER_MAX_HZ OP_TIMER_MAX_HZ
#define TIMER_MIN_PERIOD_NS OP_TIMER_MIN_PERIOD_NS
#define TIMER_MAX_PERIOD_NS OP_TIMER_MAX_PERIOD_NS
#define NSEC_PER_SEC UINT64_C(1000000000)
_Static_assert(NSEC_PER_SEC / TIMER_MAX_HZ == TIMER_MIN_PERIOD_NS,
	       "freq= and period= must have the same limit");

/* perf_event_attr values (linux/perf_event.h) */
#define TIMER_PERF_TYPE_SOFTWARE 1
#define TIMER_PERF_COUNT_SW_CPU_CLOCK 0

struct timer_state {
	op_ext_t *ctx;
	const struct op_host *host;
	uint64_t period_ns; /* default period */
	uint32_t freq_hz;   /* non-zero when the default was given as a frequency */
	char default_event[32];
	struct op_model_desc model;
	/* stats */
	uint64_t encoded;
	uint64_t last_period_ns; /* period of the last encoded event, 0 = none */
	bool last_freq;
};

static int timer_set_freq(struct timer_state *st, const char *text, uint64_t v, bool ok,
			  const char *where)
{
	if (!ok || v < 1 || v > TIMER_MAX_HZ) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "bad frequency '%s' in %s: expected 1..%u Hz (a decimal number); "
			      "for a finer period use period=NS",
			      text, where, TIMER_MAX_HZ);
		return -EINVAL;
	}
	st->freq_hz = (uint32_t)v;
	st->period_ns = NSEC_PER_SEC / v;
	return 0;
}

static int timer_set_period(struct timer_state *st, const char *text, uint64_t v, bool ok,
			    const char *where)
{
	if (!ok || v < TIMER_MIN_PERIOD_NS || v > TIMER_MAX_PERIOD_NS) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "bad period '%s' in %s: expected %" PRIu64 "..%" PRIu64
			      " ns (a decimal "
			      "number; at most %u Hz per CPU: without a hardware PMU each sample "
			      "costs the interrupted task ~20 us)",
			      text, where, TIMER_MIN_PERIOD_NS, TIMER_MAX_PERIOD_NS, TIMER_MAX_HZ);
		return -EINVAL;
	}
	st->freq_hz = 0;
	st->period_ns = v;
	return 0;
}

/* config plugins.timer.frequency / period: the defaults under the arguments */
static int timer_read_config(struct timer_state *st)
{
	const struct op_host *h = st->host;
	int64_t freq = 0, period = 0;
	bool has_freq, has_period;
	char text[32];
	int rc;

	rc = pu_config_int64(h, st->ctx, "frequency", &freq, &has_freq);
	if (rc)
		return rc;
	rc = pu_config_int64(h, st->ctx, "period", &period, &has_period);
	if (rc)
		return rc;
	if (has_freq && has_period) {
		h->log(st->ctx, OP_LOG_ERR,
		       "config sets both plugins.timer.frequency and plugins.timer.period: "
		       "keep one of them");
		return -EINVAL;
	}
	if (has_freq) {
		snprintf(text, sizeof(text), "%" PRId64, freq);
		return timer_set_freq(st, text, (uint64_t)freq, freq > 0,
				      "config plugins.timer.frequency");
	}
	if (has_period) {
		snprintf(text, sizeof(text), "%" PRId64, period);
		return timer_set_period(st, text, (uint64_t)period, period > 0,
					"config plugins.timer.period");
	}
	return 0;
}

/* "freq=HZ" or "period=NS" (also "frequency="), comma-separated; "" = none */
static int timer_parse_args(struct timer_state *st, const char *args)
{
	const struct op_host *h = st->host;
	char buf[256], where[300];
	char *tok, *save = NULL;
	bool seen = false;
	int rc = 0;

	if (!args || !*args)
		return 0;
	if (strlen(args) >= sizeof(buf)) {
		h->log(st->ctx, OP_LOG_ERR,
		       "arguments too long in --ext-feature=timer:... (%zu bytes): expected "
		       "freq=HZ or period=NS",
		       strlen(args));
		return -EINVAL;
	}
	memcpy(buf, args, strlen(args) + 1);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *val = strchr(tok, '=');
		uint64_t v = 0;
		bool ok;

		snprintf(where, sizeof(where), "--ext-feature=timer:%s", tok);
		if (!val) {
			h->log(st->ctx, OP_LOG_ERR,
			       "unknown argument '%s' in %s: expected freq=HZ or period=NS", tok,
			       where);
			return -EINVAL;
		}
		*val++ = '\0';
		/* where still names the whole token: restore the '=' for it */
		snprintf(where, sizeof(where), "--ext-feature=timer:%s=%s", tok, val);
		if (seen) {
			h->log(st->ctx, OP_LOG_ERR,
			       "%s: the rate was already given; pass one of freq=HZ or period=NS",
			       where);
			return -EINVAL;
		}
		ok = pu_parse_dec_u64(val, &v);
		if (!strcmp(tok, "freq") || !strcmp(tok, "frequency"))
			rc = timer_set_freq(st, val, v, ok, where);
		else if (!strcmp(tok, "period"))
			rc = timer_set_period(st, val, v, ok, where);
		else {
			h->log(st->ctx, OP_LOG_ERR,
			       "unknown argument '%s' in %s: expected freq=HZ or period=NS", tok,
			       where);
			return -EINVAL;
		}
		if (rc)
			return rc;
		seen = true;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* the model                                                           */
/* ------------------------------------------------------------------ */

static int timer_detect(void *priv, const struct op_cpuinfo *ci, char *why, size_t why_len)
{
	(void)priv;
	if (ci && ci->forced_cpu_type) {
		if (!strcmp(ci->forced_cpu_type, "timer"))
			return 1000; /* explicitly asked for */
		if (why && why_len)
			snprintf(why, why_len, "cpu type forced to '%s', not 'timer'",
				 ci->forced_cpu_type);
		return 0;
	}
	/* any CPU, lowest priority: the fallback when no PMU model claims it */
	return 1;
}

static const char *timer_cpu_type(void *priv, uint32_t *cpu_type_id)
{
	(void)priv;
	if (cpu_type_id)
		*cpu_type_id = TIMER_CPU_TYPE_ID;
	return "timer";
}

static int timer_encode(void *priv, const struct op_event_req *ev, struct op_perf_attr *attr,
			char *err, size_t err_len)
{
	struct timer_state *st = priv;
	uint64_t period;
	bool freq = false;

	if (!ev || !attr) {
		snprintf(err, err_len, "timer: no event to encode");
		return -EINVAL;
	}
	if (!ev->name || strcmp(ev->name, TIMER_EVENT)) {
		snprintf(err, err_len,
			 "timer: event '%s' is not available: without a hardware PMU the only "
			 "event is TIMER[:period_ns] (cpu-clock); use --events=TIMER or TIMER:%" PRIu64,
			 ev->name ? ev->name : "(none)", st->period_ns);
		return -EINVAL;
	}
	if (ev->um) {
		snprintf(err, err_len, "timer: TIMER takes no unit mask: expected 0, found 0x%x",
			 ev->um);
		return -EINVAL;
	}
	if (!ev->kernel && !ev->user) {
		snprintf(err, err_len,
			 "timer: TIMER:%" PRIu64 " counts neither kernel nor user mode: set at "
			 "least one of the :kernel:user flags to 1",
			 ev->count);
		return -EINVAL;
	}
	if (!ev->count || ev->count == st->period_ns) {
		period = st->period_ns;
		freq = st->freq_hz != 0;
	} else {
		if (ev->count < TIMER_MIN_PERIOD_NS || ev->count > TIMER_MAX_PERIOD_NS) {
			snprintf(err, err_len,
				 "timer: bad count %" PRIu64 " in TIMER:%" PRIu64
				 ": the count is the period in ns, expected %" PRIu64 "..%" PRIu64 " "
				 "(at most %u Hz per CPU; %" PRIu64 " = %u Hz)",
				 ev->count, ev->count, TIMER_MIN_PERIOD_NS, TIMER_MAX_PERIOD_NS,
				 TIMER_MAX_HZ, NSEC_PER_SEC / TIMER_DEFAULT_HZ, TIMER_DEFAULT_HZ);
			return -EINVAL;
		}
		period = ev->count;
	}
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = TIMER_PERF_TYPE_SOFTWARE;
	attr->config = TIMER_PERF_COUNT_SW_CPU_CLOCK;
	/* the kernel turns a cpu-clock frequency into the same fixed hrtimer period */
	attr->freq = freq;
	attr->sample_period = freq ? st->freq_hz : period;
	attr->exclude_kernel = !ev->kernel;
	attr->exclude_user = !ev->user;
	st->encoded++;
	st->last_period_ns = period;
	st->last_freq = freq;
	return 0;
}

static void timer_print_stats(void *priv, const struct op_stats_sink *sink)
{
	struct timer_state *st = priv;
	uint64_t period = st->last_period_ns ? st->last_period_ns : st->period_ns;
	char line[160];

	snprintf(line, sizeof(line),
		 "cpu-clock sampling every %" PRIu64 " ns (%" PRIu64 " Hz per CPU)%s%s", period,
		 NSEC_PER_SEC / period, st->last_period_ns ? "" : ", default (no event encoded yet)",
		 st->last_period_ns && st->last_freq ? ", requested as a frequency" : "");
	if (sink->text)
		sink->text(sink, line);
	if (sink->counter) {
		sink->counter(sink, "period_ns", period);
		sink->counter(sink, "frequency_hz", NSEC_PER_SEC / period);
		sink->counter(sink, "events_encoded", st->encoded);
	}
}

static const struct op_stats_ops timer_stats_ops = {
	.size = sizeof(struct op_stats_ops),
	.print_stats = timer_print_stats,
};

static int timer_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct timer_state *st;
	int rc;

	st = calloc(1, sizeof(*st));
	if (!st) {
		host->log(ctx, OP_LOG_ERR, "out of memory");
		return -ENOMEM;
	}
	/* the host frees it after ext_deinit or a failed init */
	rc = host->set_user_data(ctx, &(struct op_user_data){ .size = sizeof(struct op_user_data),
							      .data = st,
							      .free_func = free });
	if (rc) {
		free(st);
		return rc;
	}
	st->ctx = ctx;
	st->host = host;
	st->period_ns = NSEC_PER_SEC / TIMER_DEFAULT_HZ;
	st->freq_hz = TIMER_DEFAULT_HZ;

	rc = timer_read_config(st);
	if (rc)
		return rc;
	rc = timer_parse_args(st, args);
	if (rc)
		return rc;

	snprintf(st->default_event, sizeof(st->default_event), TIMER_EVENT ":%" PRIu64,
		 st->period_ns);
	st->model.size = sizeof(st->model);
	st->model.name = "timer";
	st->model.detect = timer_detect;
	st->model.cpu_type = timer_cpu_type;
	st->model.nr_counters = 1;
	st->model.default_event = st->default_event;
	st->model.encode = timer_encode;

	rc = host->register_model(ctx, &st->model, st);
	if (rc) {
		host->log(ctx, OP_LOG_ERR, "registering the timer model failed: %s", strerror(-rc));
		return rc;
	}
	rc = host->register_stats(ctx, &timer_stats_ops, st);
	if (rc) {
		host->log(ctx, OP_LOG_ERR, "registering the stats section failed: %s",
			  strerror(-rc));
		return rc;
	}
	host->log(ctx, OP_LOG_INFO, "cpu-clock model ready: default %s (%" PRIu64 " Hz per CPU)",
		  st->default_event, NSEC_PER_SEC / st->period_ns);
	return 0;
}

OP_EXT_DEFINE(.name = "timer", .version = "1.0",
	      .summary = "cpu-clock sampling when no hardware PMU is usable (timer mode)",
	      .ext_init = timer_init);
