/*
 * fx_old.c - fixture plugin written the way a plugin built against SDK 1.0
 * looks to a newer daemon: its own frozen copy of the v1.0 descriptor (104
 * bytes, minor 0) and payloads whose size covers fewer members than the
 * host's structs; the host must load it and read the missing members as 0.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stddef.h>

#include "oprofile_sdk.h"

/* the v1.0 descriptor, frozen (not the header's current struct) */
struct fx_descriptor_v1_0 {
	uint32_t abi_major, abi_minor, size, flags;
	const char *name, *version, *summary;
	int (*ext_init)(op_ext_t *ctx, const struct op_host *host, const char *args);
	void (*ext_deinit)(op_ext_t *ctx);
	void *reserved[6];
};
_Static_assert(sizeof(struct fx_descriptor_v1_0) == 104, "v1.0 descriptor is 104 bytes");

static int fx_escape(void *priv, const struct op_trans_view *t, const uint64_t *args,
		     uint32_t nargs)
{
	(void)priv; (void)t; (void)args; (void)nargs;
	return 0;
}

static int fx_on_sample(void *priv, const struct op_perf_sample *s, op_emit_t *w)
{
	(void)priv; (void)s; (void)w;
	return 0;
}

static int fx_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	/* count lies beyond the declared size: the host must not see 99 */
	struct op_counter_desc ctr = { .size = offsetof(struct op_counter_desc, count),
				       .name = "FX_OLD", .event = 0xf200, .um = 5, .count = 99 };
	struct op_escape_desc esc = { .size = sizeof(esc), .name = "fx-old-esc", .max_args = 1,
				      .handler = fx_escape };
	/* the 1.0 source: no attr_ptr, the attr embedded */
	struct op_source_desc src = { .size = OP_SOURCE_DESC_SIZE_V1_0, .name = "fx-old-src",
				      .on_sample = fx_on_sample,
				      .attr = { .size = OP_PERF_ATTR_SIZE_V1_0, .type = 1,
						.config = 3, .sample_period = 500 } };
	uint32_t out;
	int rc;

	(void)args;
	rc = host->register_counter(ctx, &ctr, &out);
	if (!rc)
		rc = host->register_source(ctx, &src, NULL, &out);
	if (rc)
		return rc;
	return host->register_escape(ctx, &esc, NULL, &out);
}

__attribute__((visibility("default"))) extern const struct fx_descriptor_v1_0 oprofile_ext_v1;
const struct fx_descriptor_v1_0 oprofile_ext_v1 = {
	.abi_major = 1,
	.abi_minor = 0,
	.size = 104,
	.name = "fx_old",
	.version = "1.0",
	.summary = "fixture: a v1.0 plugin with short payloads",
	.ext_init = fx_init,
};
