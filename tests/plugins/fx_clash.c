/*
 * fx_clash.c - fixture plugin: registers a counter of its own, then one thing
 * fx_all already holds, chosen by its args (escape-code, escape-name, model,
 * counter, kernel). The loader must refuse naming both plugins and roll the
 * first registration back.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <string.h>

#include "oprofile_sdk.h"
#include "fx_stubs.h"

static const char *fx_cpu_type(void *priv, uint32_t *id)
{
	(void)priv;
	*id = 0;
	return "clash";
}

static int fx_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct op_counter_desc first = { .size = sizeof(first), .name = "FX_CLASH_FIRST" };
	struct op_escape_desc esc = { .size = sizeof(esc), .handler = fx_escape };
	struct op_model_desc model = { .size = sizeof(model), .name = "fx-model",
				       .detect = fx_detect, .cpu_type = fx_cpu_type,
				       .encode = fx_encode };
	struct op_kernel_ops kern = { .size = sizeof(kern), .resolve = fx_resolve };
	struct op_counter_desc ctr = { .size = sizeof(ctr), .name = "FX_DERIVED" };
	uint32_t out;
	int rc;

	rc = host->register_counter(ctx, &first, &out);
	if (rc)
		return rc;
	if (!strcmp(args, "escape-code")) {
		esc.code = 40;
		esc.name = "fx-clash-esc";
		return host->register_escape(ctx, &esc, NULL, &out);
	}
	if (!strcmp(args, "escape-name")) {
		esc.name = "fx-all-esc";
		return host->register_escape(ctx, &esc, NULL, &out);
	}
	if (!strcmp(args, "model"))
		return host->register_model(ctx, &model, NULL);
	if (!strcmp(args, "counter"))
		return host->register_counter(ctx, &ctr, &out);
	if (!strcmp(args, "kernel"))
		return host->register_kernel(ctx, &kern, NULL);
	return 0;
}

OP_EXT_DECLARE("fx_clash", "0.1", "fixture: claims what fx_all holds", fx_init, NULL);
