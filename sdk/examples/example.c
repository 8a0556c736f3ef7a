/*
 * example.c - a minimal out-of-tree oprofiled plugin (SDK 1.2): counts the
 * samples of the core events by cpu mode through a sample hook and reports
 * them in its statistics section; its state is the plugin's user data, which
 * the host frees. Build: make (uses pkg-config oprofile-sdk), then copy
 * example.so into the plugin directory and run
 *   oprofiled --ext-feature=example:LABEL ...
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <oprofile_sdk.h>

struct example {
	op_ext_t *ctx;
	const struct op_host *host; /* valid until the user data is freed */
	char label[64];
	int64_t report_every; /* plugins.example.report_every, 0 = never */
	uint64_t samples, kernel, user, other;
};

/* HOT: no allocation, no system call */
static int example_on_sample(void *priv, const struct op_perf_sample *s, op_emit_t *w)
{
	struct example *e = priv;

	(void)w;
	e->samples++;
	if (s->cpumode == OP_CPUMODE_KERNEL)
		e->kernel++;
	else if (s->cpumode == OP_CPUMODE_USER)
		e->user++;
	else
		e->other++;
	return 0;
}

static void example_print_stats(void *priv, const struct op_stats_sink *sink)
{
	struct example *e = priv;
	char line[128];

	snprintf(line, sizeof(line), "label: %s", e->label);
	sink->text(sink, line);
	sink->counter(sink, "samples", e->samples);
	sink->counter(sink, "kernel", e->kernel);
	sink->counter(sink, "user", e->user);
	sink->counter(sink, "other", e->other);
}

/* the user data's free function: after ext_deinit, or after a failed init */
static void example_free(void *data)
{
	struct example *e = data;

	e->host->log(e->ctx, OP_LOG_INFO, "%llu samples seen", (unsigned long long)e->samples);
	free(e);
}

static int example_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct op_sample_hook_desc hook = {
		.size = sizeof(hook),
		.name = "example-count",
		.on_sample = example_on_sample,
	};
	struct op_stats_ops stats = {
		.size = sizeof(stats),
		.print_stats = example_print_stats,
	};
	struct op_user_data ud = { .size = sizeof(ud), .free_func = example_free };
	struct example *ex;
	int rc;

	ex = calloc(1, sizeof(*ex));
	if (!ex)
		return -ENOMEM;
	ex->ctx = ctx;
	ex->host = host;
	/* from here on the host owns it: freed even if this init fails below */
	ud.data = ex;
	rc = host->set_user_data(ctx, &ud);
	if (rc) {
		free(ex);
		return rc;
	}
	snprintf(ex->label, sizeof(ex->label), "%s", *args ? args : "unnamed");

	/* plugins.example.report_every from the config file, if any */
	rc = host->config_int64(ctx, "report_every", &ex->report_every);
	if (rc && rc != -ENOENT)
		return rc; /* the host already logged file:line */
	if (ex->report_every < 0) {
		host->log(ctx, OP_LOG_ERR, "report_every must be >= 0, found %lld",
			  (long long)ex->report_every);
		return -EINVAL;
	}

	rc = host->register_sample_hook(ctx, &hook, ex);
	if (rc)
		return rc;
	rc = host->register_stats(ctx, &stats, ex);
	if (rc)
		return rc; /* the host rolls the hook back */
	host->log(ctx, OP_LOG_INFO, "counting samples as \"%s\"", ex->label);
	return 0;
}

OP_EXT_DEFINE(.name = "example", .version = "1.0",
	      .summary = "example plugin: counts samples by cpu mode", .ext_init = example_init);
