/*
 * fx_fail.c - fixture plugin: registers one of every kind (with the names
 * fx_all uses) and then fails its init; the loader must roll all of it back.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stddef.h>

#include "oprofile_sdk.h"

static int fx_escape(void *priv, const struct op_trans_view *t, const uint64_t *args,
		     uint32_t nargs)
{
	(void)priv; (void)t; (void)args; (void)nargs;
	return 0;
}

static op_sample_file_t *fx_sf_get(void *priv, op_sfile_t *sf, void *sf_priv,
				   const struct op_trans_view *t, uint32_t counter, bool is_cg)
{
	(void)priv; (void)sf; (void)sf_priv; (void)t; (void)counter; (void)is_cg;
	return NULL;
}

static int fx_on_sample(void *priv, const struct op_perf_sample *s, op_emit_t *w)
{
	(void)priv; (void)s; (void)w;
	return 0;
}

static int fx_detect(void *priv, const struct op_cpuinfo *ci, char *why, size_t why_len)
{
	(void)priv; (void)ci; (void)why; (void)why_len;
	return 0;
}

static const char *fx_cpu_type(void *priv, uint32_t *id)
{
	(void)priv;
	*id = 0;
	return "fail";
}

static int fx_encode(void *priv, const struct op_event_req *ev, struct op_perf_attr *attr,
		     char *err, size_t err_len)
{
	(void)priv; (void)ev; (void)attr; (void)err; (void)err_len;
	return -EINVAL;
}

static int fx_resolve(void *priv, uint64_t pc, struct op_kernel_image *out)
{
	(void)priv; (void)pc; (void)out;
	return -ENOENT;
}

static void fx_print_stats(void *priv, const struct op_stats_sink *sink)
{
	(void)priv;
	sink->text(sink, "fx_fail must never print");
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
	if (host->register_escape(ctx, &esc, NULL, &out) ||
	    host->register_escape(ctx, &esc2, NULL, &out) ||
	    host->register_sfile_handlers(ctx, &sf, NULL) ||
	    host->register_source(ctx, &src, NULL, &out) ||
	    host->register_sample_hook(ctx, &hook, NULL) ||
	    host->register_model(ctx, &model, NULL) ||
	    host->register_kernel(ctx, &kern, NULL) ||
	    host->register_counter(ctx, &ctr, &out) ||
	    host->register_stats(ctx, &st, NULL))
		return -EPROTO; /* the test expects -EIO: every registration must succeed */
	host->log(ctx, OP_LOG_ERR, "failing on purpose after 9 registrations");
	return -EIO;
}

OP_EXT_DECLARE("fx_fail", "0.1", "fixture: init fails after registering everything", fx_init,
	       NULL);
