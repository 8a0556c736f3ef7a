/*
 * fx_invalid.c - fixture plugin: offers the host malformed registrations and
 * checks each answer (-EINVAL, -EEXIST, -ENOSPC); its init fails with
 * -EPROTO if any answer is wrong. With args "fill" it then takes every free
 * plugin escape code and checks the next allocation fails with -ENOSPC.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "oprofile_sdk.h"
#include "fx_stubs.h"

static const char *fx_cpu_type(void *priv, uint32_t *id)
{
	(void)priv;
	*id = 0;
	return "x";
}

static int fx_wrong;

static void expect(op_ext_t *ctx, const struct op_host *host, const char *what, int got, int want)
{
	if (got != want) {
		host->log(ctx, OP_LOG_ERR, "%s: got %d, expected %d", what, got, want);
		fx_wrong++;
	}
}

static int fx_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct op_escape_desc esc = { .size = sizeof(esc), .name = "e", .handler = fx_escape };
	struct op_sfile_ops sf = { .size = sizeof(sf) };
	struct op_source_desc src = { .size = sizeof(src), .name = "s", .on_sample = fx_on_sample };
	struct op_sample_hook_desc hook = { .size = sizeof(hook) };
	struct op_model_desc model = { .size = sizeof(model), .name = "m", .detect = fx_detect,
				       .cpu_type = fx_cpu_type };
	struct op_kernel_ops kern = { .size = sizeof(kern) };
	struct op_counter_desc ctr = { .size = sizeof(ctr) };
	struct op_stats_ops st = { .size = sizeof(st) };
	uint32_t out = 0;
	char name[32];
	int i;

	fx_wrong = 0;
	expect(ctx, host, "escape NULL", host->register_escape(ctx, NULL, NULL, &out), -EINVAL);
	esc.handler = NULL;
	expect(ctx, host, "escape no handler", host->register_escape(ctx, &esc, NULL, &out), -EINVAL);
	esc.handler = fx_escape;
	esc.name = NULL;
	expect(ctx, host, "escape no name", host->register_escape(ctx, &esc, NULL, &out), -EINVAL);
	esc.name = "e";
	esc.min_args = 3;
	esc.max_args = 2;
	expect(ctx, host, "escape min>max", host->register_escape(ctx, &esc, NULL, &out), -EINVAL);
	esc.min_args = esc.max_args = 0;
	esc.code = 5;
	expect(ctx, host, "escape core code", host->register_escape(ctx, &esc, NULL, &out), -EINVAL);
	esc.code = 256;
	expect(ctx, host, "escape code 256", host->register_escape(ctx, &esc, NULL, &out), -EINVAL);
	esc.code = 0;
	esc.size = sizeof(uint32_t); /* nothing but the size: no handler */
	expect(ctx, host, "escape size 4", host->register_escape(ctx, &esc, NULL, &out), -EINVAL);
	expect(ctx, host, "source attr.size 0", host->register_source(ctx, &src, NULL, &out), -EINVAL);
	src.attr.size = sizeof(src.attr);
	src.on_sample = NULL;
	expect(ctx, host, "source no on_sample", host->register_source(ctx, &src, NULL, &out), -EINVAL);
	expect(ctx, host, "hook no on_sample", host->register_sample_hook(ctx, &hook, NULL), -EINVAL);
	expect(ctx, host, "model no encode", host->register_model(ctx, &model, NULL), -EINVAL);
	expect(ctx, host, "kernel no resolve", host->register_kernel(ctx, &kern, NULL), -EINVAL);
	expect(ctx, host, "counter no name", host->register_counter(ctx, &ctr, &out), -EINVAL);
	ctr.name = "A.B";
	expect(ctx, host, "counter A.B", host->register_counter(ctx, &ctr, &out), -EINVAL);
	ctr.name = "a/b";
	expect(ctx, host, "counter a/b", host->register_counter(ctx, &ctr, &out), -EINVAL);
	ctr.name = "a b";
	expect(ctx, host, "counter a b", host->register_counter(ctx, &ctr, &out), -EINVAL);
	expect(ctx, host, "stats no print_stats", host->register_stats(ctx, &st, NULL), -EINVAL);

	/* one set of sfile handlers per plugin; every callback is optional (SDK 1.1) */
	expect(ctx, host, "sfile without callbacks", host->register_sfile_handlers(ctx, &sf, NULL), 0);
	sf.get_file = fx_sf_get;
	expect(ctx, host, "sfile twice", host->register_sfile_handlers(ctx, &sf, NULL), -EEXIST);
	/* the same counter name twice within one plugin */
	ctr.name = "FX_ONCE";
	expect(ctx, host, "counter", host->register_counter(ctx, &ctr, &out), 0);
	expect(ctx, host, "counter twice", host->register_counter(ctx, &ctr, &out), -EEXIST);

	if (!strcmp(args, "fill")) {
		esc.size = sizeof(esc);
		for (i = OP_ESCAPE_FIRST_PLUGIN; i <= OP_ESCAPE_MAX; i++) {
			snprintf(name, sizeof(name), "fill-%d", i);
			esc.name = name;
			expect(ctx, host, "fill", host->register_escape(ctx, &esc, NULL, &out), 0);
			expect(ctx, host, "fill code", (int)out, i);
		}
		esc.name = "one-too-many";
		expect(ctx, host, "full", host->register_escape(ctx, &esc, NULL, &out), -ENOSPC);
	}
	return fx_wrong ? -EPROTO : 0;
}

OP_EXT_DECLARE("fx_invalid", "0.1", "fixture: malformed registrations", fx_init, NULL);
