/*
 * test_mock_host.c - the mock host itself (tests/unit/mock_host.c), so that
 * plugin tests built on it can trust what it records: registrations and
 * rollback, config getters, map_pc, emit, log_sample, sample files, cookies.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "mock_host.h"

static int dummy_handler(void *priv, const struct op_trans_view *t, const uint64_t *args,
			 uint32_t nargs)
{
	(void)priv;
	(void)t;
	(void)args;
	return (int)nargs;
}

static void dummy_stats(void *priv, const struct op_stats_sink *sink)
{
	sink->text(sink, "hello");
	sink->counter(sink, "answer", *(uint64_t *)priv);
}

static int dummy_detect(void *priv, const struct op_cpuinfo *ci, char *why, size_t len)
{
	(void)priv;
	(void)ci;
	(void)why;
	(void)len;
	return 1;
}

static int dummy_resolve(void *priv, uint64_t pc, struct op_kernel_image *out)
{
	(void)priv;
	(void)pc;
	(void)out;
	return -ENOENT;
}

static uint64_t g_answer = 42;

/* registers one of everything, then fails when args say so */
static int fixture_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct op_escape_desc e = { .size = sizeof(e), .name = "fx-esc", .min_args = 1,
				    .max_args = 4, .handler = dummy_handler };
	struct op_counter_desc c = { .size = sizeof(c), .name = "FX_EVENT", .event = 0xf100,
				     .count = 10 };
	struct op_stats_ops s = { .size = sizeof(s), .print_stats = dummy_stats };
	struct op_model_desc m = { .size = sizeof(m), .name = "fx-model", .detect = dummy_detect };
	struct op_kernel_ops k = { .size = sizeof(k), .resolve = dummy_resolve };
	uint32_t code = 0, counter = 0;

	host->log(ctx, OP_LOG_INFO, "init with '%s'", args);
	if (host->register_escape(ctx, &e, NULL, &code) || code != MOCK_ESCAPE_FIRST)
		return -EIO;
	if (host->register_counter(ctx, &c, &counter) || counter != MOCK_COUNTER_BASE)
		return -EIO;
	if (host->register_stats(ctx, &s, &g_answer) || host->register_model(ctx, &m, NULL) ||
	    host->register_kernel(ctx, &k, NULL))
		return -EIO;
	if (!strcmp(args, "fail")) {
		host->log(ctx, OP_LOG_ERR, "failing on purpose");
		return -EINVAL;
	}
	return 0;
}

static const struct op_ext_descriptor fixture = {
	.abi_major = OP_SDK_MAJOR,
	.abi_minor = OP_SDK_MINOR,
	.size = sizeof(struct op_ext_descriptor),
	.name = "fixture",
	.version = "0",
	.summary = "mock host self-test",
	.ext_init = fixture_init,
};

static void test_registrations_and_rollback(void **state)
{
	struct mock_host *mh = mock_host_new();
	struct op_escape_desc e = { .size = sizeof(e), .name = "fx-esc", .max_args = 1,
				    .handler = dummy_handler };
	struct op_counter_desc c = { .size = sizeof(c), .name = "BAD.NAME" };
	uint64_t v = 0;

	(void)state;
	/* a failing init rolls everything back */
	assert_int_equal(mock_host_init(mh, &fixture, "fail"), -EINVAL);
	assert_int_equal(mh->nr_escapes + mh->nr_counters + mh->nr_stats + mh->nr_models, 0);
	assert_false(mh->has_kernel);
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "failing on purpose"));
	assert_true(mock_host_log_contains(mh, -1, "init with 'fail'"));

	/* then a good one (codes and counters start over after the rollback) */
	assert_int_equal(mock_host_init(mh, &fixture, NULL), 0);
	assert_true(mock_host_log_contains(mh, OP_LOG_INFO, "init with ''"));
	assert_int_equal(mh->nr_escapes, 1);
	assert_non_null(mock_host_escape(mh, "fx-esc"));
	assert_int_equal(mock_host_escape(mh, "fx-esc")->code, MOCK_ESCAPE_FIRST);
	assert_int_equal(mh->counters[0].counter, MOCK_COUNTER_BASE);
	assert_true(mh->has_kernel);
	/* duplicates and bad payloads */
	assert_int_equal(mh->host.register_escape(mock_host_ctx(mh), &e, NULL, NULL), -EEXIST);
	assert_int_equal(mh->host.register_counter(mock_host_ctx(mh), &c, NULL), -EINVAL);
	assert_int_equal(mh->host.register_kernel(mock_host_ctx(mh), &(struct op_kernel_ops){
		.size = sizeof(struct op_kernel_ops), .resolve = dummy_resolve }, NULL), -EEXIST);
	assert_int_equal(mock_host_init(mh, &fixture, ""), -EBUSY);

	mock_host_print_stats(mh);
	assert_true(mock_host_stat(mh, "answer", &v));
	assert_int_equal(v, 42);
	assert_string_equal(mh->stat_text, "hello\n");
	assert_false(mock_host_stat(mh, "missing", NULL));
	mock_host_free(mh);

	/* descriptors the loader would refuse */
	mh = mock_host_new();
	{
		struct op_ext_descriptor d = fixture;

		d.abi_major = 2;
		assert_int_equal(mock_host_init(mh, &d, ""), -EPROTO);
		d = fixture;
		d.reserved[2] = &d;
		assert_int_equal(mock_host_init(mh, &d, ""), -EPROTO);
	}
	mock_host_free(mh);
}

static void test_config(void **state)
{
	struct mock_host *mh = mock_host_new();
	op_ext_t *ctx = mock_host_ctx(mh);
	const char *s = NULL;
	int64_t i = 0;
	bool b = false;

	(void)state;
	mh->desc = &fixture;
	mock_host_set_config_string(mh, "path", "/x");
	mock_host_set_config_int64(mh, "n", -7);
	mock_host_set_config_bool(mh, "on", true);
	assert_int_equal(mh->host.config_string(ctx, "path", &s), 0);
	assert_string_equal(s, "/x");
	assert_int_equal(mh->host.config_int64(ctx, "n", &i), 0);
	assert_int_equal(i, -7);
	assert_int_equal(mh->host.config_bool(ctx, "on", &b), 0);
	assert_true(b);
	assert_int_equal(mh->host.config_int64(ctx, "absent", &i), -ENOENT);
	assert_int_equal(mh->host.config_int64(ctx, "path", &i), -EINVAL);
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "plugins.fixture.path"));
	/* overwriting a key changes its type */
	mock_host_set_config_int64(mh, "path", 3);
	assert_int_equal(mh->host.config_int64(ctx, "path", &i), 0);
	assert_int_equal(i, 3);
	mock_host_free(mh);
}

static void test_sync_side(void **state)
{
	struct mock_host *mh = mock_host_new();
	op_ext_t *ctx = mock_host_ctx(mh);
	op_cookie_t libc, again, kern;
	struct op_pc_map m;
	uint64_t args[40] = { 1, 2, 3 };

	(void)state;
	libc = mh->host.cookie_intern(ctx, "/usr/lib/libc.so.6", false);
	again = mh->host.cookie_intern(ctx, "/usr/lib/libc.so.6", false);
	kern = mh->host.cookie_intern(ctx, "vmlinux", true);
	assert_true(libc && libc == again && kern && kern != libc);
	assert_string_equal(mh->host.cookie_path(ctx, kern), "vmlinux");
	assert_null(mh->host.cookie_path(ctx, 999));
	assert_int_equal(mock_host_cookie_of(mh, "/usr/lib/libc.so.6"), libc);

	mock_host_add_mapping(mh, &(struct mock_mapping){ .pid = 100, .start = 0x7f0000001000,
							  .end = 0x7f0000002000, .pgoff = 0x3000,
							  .cookie = libc });
	mock_host_add_mapping(mh, &(struct mock_mapping){ .start = 0x10000, .end = 0x20000,
							  .anon = true });
	assert_int_equal(mh->host.map_pc(ctx, 100, OP_CPUMODE_USER, 0x7f0000001010, &m), 0);
	assert_int_equal(m.cookie, libc);
	assert_int_equal(m.offset, 0x3010);
	assert_int_equal(m.in_kernel, 0);
	assert_int_equal(mh->host.map_pc(ctx, 101, OP_CPUMODE_USER, 0x7f0000001010, &m), -ENOENT);
	assert_int_equal(mh->host.map_pc(ctx, 5, OP_CPUMODE_USER, 0x10010, &m), 0);
	assert_int_equal(m.anon_start, 0x10000);
	assert_int_equal(m.anon_end, 0x1ffff);
	assert_int_equal(mh->nr_map_pc, 3);

	assert_int_equal(mh->host.emit(mock_host_emitter(mh), 33, args, 3), 0);
	assert_int_equal(mh->host.emit(mock_host_emitter(mh), 34, args, 40), -ENOSPC);
	mh->emitter.max_args = 2;
	assert_int_equal(mh->host.emit(mock_host_emitter(mh), 35, args, 3), -ENOSPC);
	assert_int_equal(mh->nr_emits, 1);
	assert_int_equal(mh->emits[0].code, 33);
	assert_int_equal(mh->emits[0].nargs, 3);
	assert_int_equal(mh->emits[0].args[2], 3);
	mock_host_free(mh);
}

static void test_trans_side(void **state)
{
	struct mock_host *mh = mock_host_new();
	op_ext_t *ctx = mock_host_ctx(mh);
	struct op_trans_view t = { .size = sizeof(t), .tgid = 7, .tid = 8, .cpu = 1,
				   .cookie = 3 };
	struct op_file_spec spec = { .size = sizeof(spec), .counter = 64, .is_cg = true,
				     .cg_to_cookie = 4 };
	op_sample_file_t *f;

	(void)state;
	assert_int_equal(mh->host.log_sample(ctx, &t, 2, 0x1234, 5), 0);
	assert_int_equal(mh->nr_logged, 1);
	assert_int_equal(mh->logged[0].key, 0x1234);
	assert_int_equal(mh->logged[0].view.tgid, 7);

	f = mh->host.sample_file_open(ctx, NULL, &t, &spec);
	assert_non_null(f);
	assert_int_equal(f->spec.cg_to_cookie, 4);
	assert_int_equal(f->view.tid, 8);
	assert_int_equal(mh->host.sample_file_add(f, 10, 3), 0);
	assert_int_equal(mh->host.sample_file_add(f, 10, 4), 0);
	assert_int_equal(mh->host.sample_file_add(f, 11, UINT32_MAX), 0);
	assert_int_equal(mh->host.sample_file_add(f, 11, 9), 0); /* saturates */
	assert_int_equal(mock_file_count(f, 10), 7);
	assert_int_equal(mock_file_count(f, 11), UINT32_MAX);
	assert_int_equal(mock_file_count(f, 12), 0);
	assert_int_equal(mh->host.sample_file_sync(f), 0);
	assert_int_equal(f->syncs, 1);
	mh->host.sample_file_close(f);
	assert_true(f->closed);
	assert_int_equal(mh->host.sample_file_add(f, 10, 1), -EBADF);
	assert_int_equal(mh->nr_files, 1);
	assert_null(mh->host.sample_file_open(ctx, NULL, &t, NULL));

	/* session and proc root */
	assert_null(mh->host.session_dir(ctx));
	assert_string_equal(mh->host.proc_root(ctx), "/proc");
	mock_host_set_session_dir(mh, "/s");
	mock_host_set_proc_root(mh, "/p");
	assert_string_equal(mh->host.session_dir(ctx), "/s");
	assert_string_equal(mh->host.proc_root(ctx), "/p");
	assert_true(OP_HOST_HAS(&mh->host, proc_root));
	mock_host_free(mh);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_registrations_and_rollback),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_sync_side),
		cmocka_unit_test(test_trans_side),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
