/*
 * fx_all.c - fixture plugin for tests/unit/test_ext: registers one of every
 * kind the loader accepts, reads its scoped config, and exercises the core
 * services from its callbacks so the test can see them forwarded.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "oprofile_sdk.h"

static struct {
	op_ext_t *ctx;
	const struct op_host *host;
	char args[128];
	const char *str;
	int64_t num;
	bool flag;
	int rc_str, rc_num, rc_flag, rc_missing, rc_mismatch;
	uint32_t esc_code, esc2_code, source_nr, counter_nr;
	uint64_t calls;
	int sfile_marker;
} fx;

static int fx_escape(void *priv, const struct op_trans_view *t, const uint64_t *args,
		     uint32_t nargs)
{
	(void)priv;
	fx.calls++;
	if (nargs < 2)
		return -EINVAL;
	return fx.host->log_sample(fx.ctx, t, fx.counter_nr, args[0], (uint32_t)args[1]);
}

static int fx_sf_create(void *priv, op_sfile_t *sf, void **sf_priv)
{
	(void)priv;
	(void)sf;
	fx.calls++;
	*sf_priv = &fx.sfile_marker;
	return 0;
}

static int fx_sf_close(void *priv, op_sfile_t *sf, void *sf_priv)
{
	(void)priv;
	(void)sf;
	fx.calls++;
	return sf_priv == &fx.sfile_marker ? 0 : -EINVAL;
}

static op_sample_file_t *fx_sf_get(void *priv, op_sfile_t *sf, void *sf_priv,
				   const struct op_trans_view *t, uint32_t counter, bool is_cg)
{
	struct op_file_spec spec = { .size = sizeof(spec), .counter = counter, .is_cg = is_cg };
	op_sample_file_t *f;

	(void)priv;
	fx.calls++;
	if (sf_priv != &fx.sfile_marker)
		return NULL;
	f = fx.host->sample_file_open(fx.ctx, sf, t, &spec);
	if (f)
		fx.host->sample_file_add(f, 0x1234, 7);
	return f;
}

static int fx_on_source(void *priv, const struct op_perf_sample *s, op_emit_t *w)
{
	struct op_pc_map m = { .size = sizeof(m) };
	uint64_t args[2];
	int rc;

	(void)priv;
	fx.calls++;
	rc = fx.host->map_pc(fx.ctx, s->pid, s->cpumode, s->ip, &m);
	if (rc)
		return rc;
	args[0] = m.offset;
	args[1] = 1;
	return fx.host->emit(w, fx.esc_code, args, 2);
}

static int fx_on_hook(void *priv, const struct op_perf_sample *s, op_emit_t *w)
{
	uint64_t a = s->ip;

	(void)priv;
	fx.calls++;
	return fx.host->emit(w, fx.esc2_code, &a, 1);
}

static int fx_detect(void *priv, const struct op_cpuinfo *ci, char *why, size_t why_len)
{
	(void)priv;
	fx.calls++;
	if (!strcmp(ci->vendor, "FixtureVendor"))
		return 5;
	snprintf(why, why_len, "not a fixture cpu");
	return 0;
}

static const char *fx_cpu_type(void *priv, uint32_t *id)
{
	(void)priv;
	*id = 42;
	return "fixture/cpu";
}

static int fx_encode(void *priv, const struct op_event_req *ev, struct op_perf_attr *attr,
		     char *err, size_t err_len)
{
	(void)priv;
	if (ev->code == 0xdead) {
		snprintf(err, err_len, "event %s is dead", ev->name);
		return -EINVAL;
	}
	attr->type = 4;
	attr->config = ev->code | ((uint64_t)ev->um << 8);
	attr->sample_period = ev->count;
	return 0;
}

static int fx_resolve(void *priv, uint64_t pc, struct op_kernel_image *out)
{
	(void)priv;
	fx.calls++;
	if (pc < 0xffff0000ull || pc >= 0xffff1000ull)
		return -ENOENT;
	out->cookie = fx.host->cookie_intern(fx.ctx, "fxkern", true);
	out->start = 0xffff0000ull;
	out->end = 0xffff1000ull;
	return 0;
}

static void fx_print_stats(void *priv, const struct op_stats_sink *sink)
{
	struct op_counter_desc late = { .size = sizeof(late), .name = "LATE" };
	char line[256];

	(void)priv;
	sink->counter(sink, "calls", fx.calls);
	sink->counter(sink, "esc_code", fx.esc_code);
	sink->counter(sink, "esc2_code", fx.esc2_code);
	sink->counter(sink, "source_nr", fx.source_nr);
	sink->counter(sink, "counter_nr", fx.counter_nr);
	snprintf(line, sizeof(line), "args=%s", fx.args);
	sink->text(sink, line);
	snprintf(line, sizeof(line), "config rc %d %d %d missing %d mismatch %d", fx.rc_str,
		 fx.rc_num, fx.rc_flag, fx.rc_missing, fx.rc_mismatch);
	sink->text(sink, line);
	snprintf(line, sizeof(line), "str=%s num=%lld flag=%d", fx.str ? fx.str : "(none)",
		 (long long)fx.num, fx.flag);
	sink->text(sink, line);
	snprintf(line, sizeof(line), "late_register=%d",
		 fx.host->register_counter(fx.ctx, &late, NULL));
	sink->text(sink, line);
	snprintf(line, sizeof(line), "session_dir=%s proc_root=%s",
		 fx.host->session_dir(fx.ctx) ? fx.host->session_dir(fx.ctx) : "(null)",
		 fx.host->proc_root(fx.ctx) ? fx.host->proc_root(fx.ctx) : "(null)");
	sink->text(sink, line);
}

/* the user data's free function: after fx_deinit, with the state set in fx_init */
static void fx_free(void *data)
{
	if (data == &fx)
		fx.host->log(fx.ctx, OP_LOG_INFO, "user data freed after %llu calls",
			     (unsigned long long)fx.calls);
}

static int fx_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct op_escape_desc esc = {
		.size = sizeof(esc), .code = 40, .name = "fx-all-esc",
		.min_args = 2, .max_args = 2, .handler = fx_escape,
	};
	struct op_escape_desc esc2 = {
		.size = sizeof(esc2), .code = 0, .name = "fx-all-esc2",
		.min_args = 1, .max_args = 1, .handler = fx_escape,
	};
	struct op_sfile_ops sf = {
		.size = sizeof(sf), .create = fx_sf_create, .close = fx_sf_close, .get_file = fx_sf_get,
	};
	/* SDK 1.1: the attr by pointer (the embedded one stays zero and is ignored) */
	static const struct op_perf_attr attr = {
		.size = sizeof(struct op_perf_attr), .type = 1, .config = 9,
		.sample_period = 1000, .exclude_kernel = true,
	};
	struct op_source_desc src = {
		.size = sizeof(src), .name = "fx-source", .on_sample = fx_on_source,
		.attr_ptr = &attr,
	};
	struct op_sample_hook_desc hook = {
		.size = sizeof(hook), .name = "fx-hook", .sample_type_extra = 1u << 5,
		.max_stack = 16, .on_sample = fx_on_hook,
	};
	struct op_model_desc model = {
		.size = sizeof(model), .name = "fx-model", .detect = fx_detect,
		.cpu_type = fx_cpu_type, .nr_counters = 4, .default_event = "FX_CYCLES:100000",
		.encode = fx_encode,
	};
	struct op_kernel_ops kern = { .size = sizeof(kern), .resolve = fx_resolve };
	struct op_counter_desc ctr = {
		.size = sizeof(ctr), .name = "FX_DERIVED", .event = 0xf100, .um = 3, .count = 1000,
	};
	struct op_stats_ops st = { .size = sizeof(st), .print_stats = fx_print_stats };
	int64_t dummy;
	int rc;

	memset(&fx, 0, sizeof(fx));
	fx.ctx = ctx;
	fx.host = host;
	if (host->abi_major != OP_SDK_MAJOR || host->size < OP_HOST_SIZE_V1_0 ||
	    !OP_HOST_HAS(host, proc_root))
		return -EPROTO;
	snprintf(fx.args, sizeof(fx.args), "%s", args);
	host->log(ctx, OP_LOG_INFO, "init args=\"%s\"", args);
	host->log(ctx, OP_LOG_DEBUG, "debug line");

	fx.rc_str = host->config_string(ctx, "str", &fx.str);
	fx.rc_num = host->config_int64(ctx, "num", &fx.num);
	fx.rc_flag = host->config_bool(ctx, "flag", &fx.flag);
	fx.rc_missing = host->config_int64(ctx, "no_such_key", &dummy);
	fx.rc_mismatch = host->config_int64(ctx, "str", &dummy);

	if ((rc = host->set_user_data(ctx, &(struct op_user_data){
			.size = sizeof(struct op_user_data), .data = &fx, .free_func = fx_free })) ||
	    (rc = host->register_escape(ctx, &esc, NULL, &fx.esc_code)) ||
	    (rc = host->register_escape(ctx, &esc2, NULL, &fx.esc2_code)) ||
	    (rc = host->register_sfile_handlers(ctx, &sf, &fx)) ||
	    (rc = host->register_source(ctx, &src, &fx, &fx.source_nr)) ||
	    (rc = host->register_sample_hook(ctx, &hook, &fx)) ||
	    (rc = host->register_model(ctx, &model, &fx)) ||
	    (rc = host->register_kernel(ctx, &kern, &fx)) ||
	    (rc = host->register_counter(ctx, &ctr, &fx.counter_nr)) ||
	    (rc = host->register_stats(ctx, &st, &fx)))
		return rc;
	return 0;
}

static void fx_deinit(op_ext_t *ctx)
{
	fx.host->log(ctx, OP_LOG_INFO, "deinit after %llu calls", (unsigned long long)fx.calls);
}

OP_EXT_DEFINE(.name = "fx_all", .version = "1.2.3",
	      .summary = "fixture: one registration of every kind", .ext_init = fx_init,
	      .ext_deinit = fx_deinit, .flags = OP_EXT_F_NO_EVENT_OK);
