/*
 * fx_fail.c - fixture plugin: registers one of every kind (with the names
 * fx_all uses) and then fails its init; the loader must roll all of it back.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stddef.h>

#include "oprofile_sdk.h"
#include "fx_stubs.h"

static const char *fx_cpu_type(void *priv, uint32_t *id)
{
	(void)priv;
	*id = 0;
	return "fail";
}

static void fx_print_stats(void *priv, const struct op_stats_sink *sink)
{
	(void)priv;
	sink->text(sink, "fx_fail must never print");
}

static const struct op_host *fx_host;

/* the host frees the user data of a failed init: say so */
static void fx_free(void *data)
{
	fx_host->log(data, OP_LOG_INFO, "user data freed after the failed init");
}

static int fx_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct op_escape_desc esc = { .size = sizeof(esc), .code = 40, .name = "fx-all-esc",
				      .max_args = 2, .handler = fx_escape };
	struct op_escape_desc esc2 = { .size = sizeof(esc2), .name = "fx-fail-esc2",
				       .handler = fx_escape };
	struct op_sfile_ops sf = { .size = sizeof(sf), .get_file = fx_sf_get };
	struct op_source_desc src = { .size = sizeof(src), .name = "fx-fail-src",
				      .on_sample = fx_on_sample,
				      .attr = { .size = sizeof(struct op_perf_attr) } };
	struct op_sample_hook_desc hook = { .size = sizeof(hook), .on_sample = fx_on_sample };
	struct op_model_desc model = { .size = sizeof(model), .name = "fx-model",
				       .detect = fx_detect, .cpu_type = fx_cpu_type,
				       .encode = fx_encode };
	struct op_kernel_ops kern = { .size = sizeof(kern), .resolve = fx_resolve };
	struct op_counter_desc ctr = { .size = sizeof(ctr), .name = "FX_DERIVED" };
	struct op_stats_ops st = { .size = sizeof(st), .print_stats = fx_print_stats };
	uint32_t out;

	(void)args;
	fx_host = host;
	if (host->set_user_data(ctx, &(struct op_user_data){ .size = sizeof(struct op_user_data),
							     .data = ctx, .free_func = fx_free }) ||
	    host->register_escape(ctx, &esc, NULL, &out) ||
	    host->register_escape(ctx, &esc2, NULL, &out) ||
	    host->register_sfile_handlers(ctx, &sf, NULL) ||
	    host->register_source(ctx, &src, NULL, &out) ||
	    host->register_sample_hook(ctx, &hook, NULL) ||
	    host->register_model(ctx, &model, NULL) ||
	    host->register_kernel(ctx, &kern, NULL) ||
	    host->register_counter(ctx, &ctr, &out) ||
	    host->register_stats(ctx, &st, NULL))
		return -EPROTO; /* the test expects -EIO: every registration must succeed */
	/* a failed init may leave the state to the host */
	host->log(ctx, OP_LOG_ERR, "failing on purpose after 9 registrations");
	return -EIO;
}

OP_EXT_DECLARE("fx_fail", "0.1", "fixture: init fails after registering everything", fx_init,
	       NULL);
