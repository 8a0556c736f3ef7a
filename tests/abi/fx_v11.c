/*
 * fx_v11.c - fixture plugin built the way a plugin of SDK 1.1 looks to a
 * 1.2 daemon: descriptor minor 1, the 1.1 service it may use
 * (set_user_data, checked with OP_HOST_HAS), nothing of 1.2. test_sdk12
 * loads it next to a 1.0 and a 1.2 plugin.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdlib.h>

#include "oprofile_sdk.h"

static int fx_v11_freed;

static void fx_v11_free(void *data)
{
	free(data);
	fx_v11_freed++;
}

static void fx_v11_stats(void *priv, const struct op_stats_sink *sink)
{
	if (sink->counter)
		sink->counter(sink, "fx_v11_state", *(int *)priv);
}

static int fx_v11_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct op_user_data ud = { .size = OP_USER_DATA_SIZE_V1_1, .free_func = fx_v11_free };
	struct op_stats_ops st = { .size = sizeof(st), .print_stats = fx_v11_stats };
	int *state;

	(void)args;
	if (!OP_HOST_HAS(host, set_user_data) || host->size < OP_HOST_SIZE_V1_1)
		return -ENOSYS;
	state = malloc(sizeof(*state));
	if (!state)
		return -ENOMEM;
	*state = 11;
	ud.data = state;
	if (host->set_user_data(ctx, &ud)) {
		free(state);
		return -EINVAL;
	}
	host->log(ctx, OP_LOG_INFO, "fx_v11 up: host SDK %u.%u", host->abi_major, host->abi_minor);
	return host->register_stats(ctx, &st, state);
}

/* the descriptor as a 1.1 build writes it: OP_EXT_DEFINE with minor 1 */
__attribute__((visibility("default"))) extern const struct op_ext_descriptor oprofile_ext_v1;
const struct op_ext_descriptor oprofile_ext_v1 = {
	.abi_major = 1,
	.abi_minor = 1,
	.size = OP_EXT_DESCRIPTOR_SIZE_V1_1,
	.name = "fx_v11",
	.version = "1.1",
	.summary = "SDK 1.1 fixture",
	.ext_init = fx_v11_init,
};
