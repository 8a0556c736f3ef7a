/*
 * test_timer.c - the timer plugin (plugins/timer/timer.c) through the mock
 * host: argument and config parsing, event encoding, model detection, stats.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "mock_host.h"

extern const struct op_ext_descriptor oprofile_ext_v1;

static struct mock_host *timer_up(const char *args)
{
	struct mock_host *mh = mock_host_new();

	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, args), 0);
	assert_int_equal(mh->nr_models, 1);
	return mh;
}

static int encode(struct mock_host *mh, const char *name, uint64_t count, uint32_t um,
		  bool kernel, bool user, struct op_perf_attr *attr, char *err, size_t len)
{
	struct op_event_req ev = {
		.size = sizeof(ev), .name = name, .um = um, .count = count,
		.kernel = kernel, .user = user,
	};

	err[0] = '\0';
	return mh->models[0].desc.encode(mh->models[0].priv, &ev, attr, err, len);
}

/* ------------------------------------------------------------------ */

struct args_case {
	const char *args;
	int rc;
	const char *default_event; /* when rc == 0 */
	const char *log;           /* expected substring (ERR when rc != 0, WARN otherwise) */
};

static const struct args_case args_cases[] = {
	{ "", 0, "TIMER:250000", NULL },
	{ "freq=1000", 0, "TIMER:1000000", NULL },
	{ "frequency=4000", 0, "TIMER:250000", NULL },
	{ "freq=1", 0, "TIMER:1000000000", NULL },
	{ "freq=10000", 0, "TIMER:100000", NULL },
	{ "freq=3", 0, "TIMER:333333333", NULL },
	{ "period=500000", 0, "TIMER:500000", NULL },
	{ "period=1000000000", 0, "TIMER:1000000000", NULL },
	{ "period=100000", 0, "TIMER:100000", NULL },
	/* one limit for every syntax: 10 kHz (freq=10000 = period=100000) */
	{ "period=99999", -EINVAL, NULL,
	  "bad period '99999' in --ext-feature=timer:period=99999: expected 100000..1000000000 ns" },
	{ "period=50000", -EINVAL, NULL, "at most 10000 Hz" },
	{ "period=10000", -EINVAL, NULL, "bad period '10000'" },
	{ "freq=abc", -EINVAL, NULL,
	  "bad frequency 'abc' in --ext-feature=timer:freq=abc: expected 1..10000 Hz" },
	{ "freq=0", -EINVAL, NULL, "bad frequency '0'" },
	{ "freq=10001", -EINVAL, NULL, "expected 1..10000 Hz" },
	{ "freq=-5", -EINVAL, NULL, "bad frequency '-5'" },
	{ "freq=", -EINVAL, NULL, "bad frequency ''" },
	{ "freq=1x", -EINVAL, NULL, "bad frequency '1x'" },
	{ "freq= 100", -EINVAL, NULL, "bad frequency ' 100'" },
	{ "freq=99999999999999999999999", -EINVAL, NULL, "bad frequency" },
	{ "period=9999", -EINVAL, NULL, "bad period '9999' in --ext-feature=timer:period=9999" },
	{ "period=1000000001", -EINVAL, NULL, "expected 100000..1000000000 ns" },
	{ "period=0x1000", -EINVAL, NULL, "bad period '0x1000'" },
	{ "bogus=1", -EINVAL, NULL, "unknown argument 'bogus'" },
	{ "freq", -EINVAL, NULL, "unknown argument 'freq'" },
	{ "freq=100,period=100000", -EINVAL, NULL, "already given" },
};

static void test_args_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(args_cases) / sizeof(args_cases[0]); i++) {
		const struct args_case *c = &args_cases[i];
		struct mock_host *mh = mock_host_new();
		int rc = mock_host_init(mh, &oprofile_ext_v1, c->args);

		if (rc != c->rc)
			fail_msg("args '%s': rc %d, expected %d", c->args, rc, c->rc);
		if (c->rc == 0) {
			assert_int_equal(mh->nr_models, 1);
			assert_int_equal(mh->nr_stats, 1);
			assert_string_equal(mh->models[0].desc.default_event, c->default_event);
			if (c->log)
				assert_true(mock_host_log_contains(mh, OP_LOG_WARN, c->log));
			else
				assert_int_equal(mock_host_log_count(mh, OP_LOG_WARN, NULL), 0);
			/* the state is the plugin's user data, freed by the host after deinit */
			assert_true(mh->has_ud);
			assert_ptr_equal(mh->ud.data, mh->models[0].priv);
			mock_host_deinit(mh);
			assert_int_equal(mh->nr_ud_freed, 1);
		} else {
			/* rolled back, the state freed by the host, and the reason logged */
			assert_int_equal(mh->nr_models, 0);
			assert_int_equal(mh->nr_stats, 0);
			assert_int_equal(mh->nr_ud_freed, 1);
			if (!mock_host_log_contains(mh, OP_LOG_ERR, c->log))
				fail_msg("args '%s': no error containing \"%s\" (got \"%s\")", c->args,
					 c->log, mh->nr_logs ? mh->logs[0].msg : "");
		}
		mock_host_free(mh);
	}
}

static void test_config(void **state)
{
	struct mock_host *mh;

	(void)state;
	/* config gives the default */
	mh = mock_host_new();
	mock_host_set_config_int64(mh, "frequency", 1000);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, ""), 0);
	assert_string_equal(mh->models[0].desc.default_event, "TIMER:1000000");
	mock_host_free(mh);

	mh = mock_host_new();
	mock_host_set_config_int64(mh, "period", 2000000);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, NULL), 0);
	assert_string_equal(mh->models[0].desc.default_event, "TIMER:2000000");
	mock_host_free(mh);

	/* arguments win over config */
	mh = mock_host_new();
	mock_host_set_config_int64(mh, "frequency", 1000);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, "freq=2000"), 0);
	assert_string_equal(mh->models[0].desc.default_event, "TIMER:500000");
	mock_host_free(mh);

	/* bad values, both keys, wrong type */
	mh = mock_host_new();
	mock_host_set_config_int64(mh, "frequency", 20000);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, ""), -EINVAL);
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR,
					   "bad frequency '20000' in config plugins.timer.frequency"));
	mock_host_free(mh);

	mh = mock_host_new();
	mock_host_set_config_int64(mh, "period", 50000);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, ""), -EINVAL);
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR,
					   "bad period '50000' in config plugins.timer.period"));
	mock_host_free(mh);

	mh = mock_host_new();
	mock_host_set_config_int64(mh, "period", -1);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, ""), -EINVAL);
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "bad period '-1'"));
	mock_host_free(mh);

	mh = mock_host_new();
	mock_host_set_config_int64(mh, "frequency", 1000);
	mock_host_set_config_int64(mh, "period", 1000000);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, ""), -EINVAL);
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "keep one of them"));
	mock_host_free(mh);

	mh = mock_host_new();
	mock_host_set_config_string(mh, "frequency", "fast");
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, ""), -EINVAL);
	assert_int_equal(mh->nr_models, 0);
	mock_host_free(mh);
}

struct encode_case {
	const char *args;
	const char *name;
	uint64_t count;
	uint32_t um;
	bool kernel, user;
	int rc;
	bool freq;
	uint64_t sample_period;
	const char *msg; /* err text (rc != 0) or warning (rc == 0), NULL = none */
};

static const struct encode_case encode_cases[] = {
	{ "", "TIMER", 0, 0, true, true, 0, true, 4000, NULL },
	{ "", "TIMER", 250000, 0, true, true, 0, true, 4000, NULL },
	{ "", "TIMER", 1000000, 0, true, true, 0, false, 1000000, NULL },
	{ "", "TIMER", 100000, 0, true, false, 0, false, 100000, NULL },
	{ "", "TIMER", 50000, 0, true, true, -EINVAL, false, 0,
	  "bad count 50000 in TIMER:50000: the count is the period in ns, expected 100000..1000000000" },
	{ "", "TIMER", 99999, 0, true, true, -EINVAL, false, 0, "at most 10000 Hz" },
	{ "", "TIMER", 10000, 0, true, true, -EINVAL, false, 0, "bad count 10000" },
	{ "freq=1000", "TIMER", 0, 0, true, true, 0, true, 1000, NULL },
	{ "freq=1000", "TIMER", 1000000, 0, true, true, 0, true, 1000, NULL },
	{ "freq=1000", "TIMER", 500000, 0, false, true, 0, false, 500000, NULL },
	{ "period=300000", "TIMER", 0, 0, true, true, 0, false, 300000, NULL },
	{ "", "TIMER", 5000, 0, true, true, -EINVAL, false, 0,
	  "bad count 5000 in TIMER:5000: the count is the period in ns" },
	{ "", "TIMER", 2000000000, 0, true, true, -EINVAL, false, 0, "expected 100000..1000000000" },
	{ "", "CPU_CLK_UNHALTED", 100000, 0, true, true, -EINVAL, false, 0,
	  "event 'CPU_CLK_UNHALTED' is not available" },
	{ "", "timer", 0, 0, true, true, -EINVAL, false, 0, "the only event is TIMER" },
	{ "", "TIMER", 0, 1, true, true, -EINVAL, false, 0, "no unit mask" },
	{ "", "TIMER", 0, 0, false, false, -EINVAL, false, 0, "neither kernel nor user" },
};

static void test_encode_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(encode_cases) / sizeof(encode_cases[0]); i++) {
		const struct encode_case *c = &encode_cases[i];
		struct mock_host *mh = timer_up(c->args);
		struct op_perf_attr attr;
		char err[512];
		int rc;

		mock_host_log_clear(mh);
		memset(&attr, 0xa5, sizeof(attr));
		rc = encode(mh, c->name, c->count, c->um, c->kernel, c->user, &attr, err,
			    sizeof(err));
		if (rc != c->rc)
			fail_msg("case %zu (%s:%llu): rc %d expected %d (%s)", i, c->name,
				 (unsigned long long)c->count, rc, c->rc, err);
		if (rc) {
			if (!strstr(err, c->msg))
				fail_msg("case %zu: error \"%s\" lacks \"%s\"", i, err, c->msg);
			assert_true(strncmp(err, "timer: ", 7) == 0);
		} else {
			assert_int_equal(attr.size, sizeof(attr));
			assert_int_equal(attr.type, 1);   /* PERF_TYPE_SOFTWARE */
			assert_int_equal(attr.config, 0); /* PERF_COUNT_SW_CPU_CLOCK */
			assert_int_equal(attr.config1, 0);
			assert_int_equal(attr.freq, c->freq);
			assert_int_equal(attr.sample_period, c->sample_period);
			assert_int_equal(attr.exclude_kernel, !c->kernel);
			assert_int_equal(attr.exclude_user, !c->user);
			assert_int_equal(attr.precise_ip, 0);
			assert_int_equal(attr.sample_type_extra, 0);
			if (c->msg)
				assert_true(mock_host_log_contains(mh, OP_LOG_WARN, c->msg));
			else
				assert_int_equal(mock_host_log_count(mh, OP_LOG_WARN, NULL), 0);
		}
		mock_host_free(mh);
	}
}

static void test_model(void **state)
{
	struct mock_host *mh = timer_up("");
	const struct op_model_desc *m = &mh->models[0].desc;
	void *priv = mh->models[0].priv;
	struct op_cpuinfo ci = { .size = sizeof(ci), .vendor = "GenuineIntel", .family = 6 };
	char why[128] = "";
	uint32_t id = 0;
	int intel, amd;

	(void)state;
	assert_string_equal(m->name, "timer");
	assert_int_equal(m->nr_counters, 1);
	assert_string_equal(m->cpu_type(priv, &id), "timer");
	assert_int_equal(id, 4);

	/* claims any CPU at the lowest priority, PMU or not */
	intel = m->detect(priv, &ci, why, sizeof(why));
	assert_int_equal(intel, 1);
	ci.pmu_usable = true;
	memcpy(ci.vendor, "AuthenticAMD", 13);
	ci.family = 0x19;
	amd = m->detect(priv, &ci, why, sizeof(why));
	assert_int_equal(amd, 1);
	memset(&ci, 0, sizeof(ci));
	ci.size = sizeof(ci);
	assert_int_equal(m->detect(priv, &ci, why, sizeof(why)), 1);

	/* --cpu-type=timer wins over any model; another forced type declines */
	ci.forced_cpu_type = "timer";
	assert_true(m->detect(priv, &ci, why, sizeof(why)) > 100);
	ci.forced_cpu_type = "x86-64/zen3";
	assert_int_equal(m->detect(priv, &ci, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "x86-64/zen3"));
	mock_host_free(mh);
}

static void test_stats(void **state)
{
	struct mock_host *mh = timer_up("freq=2000");
	struct op_perf_attr attr;
	uint64_t v = 0;
	char err[256];

	(void)state;
	mock_host_print_stats(mh);
	assert_true(mock_host_stat(mh, "period_ns", &v));
	assert_int_equal(v, 500000);
	assert_true(mock_host_stat(mh, "frequency_hz", &v));
	assert_int_equal(v, 2000);
	assert_true(mock_host_stat(mh, "events_encoded", &v));
	assert_int_equal(v, 0);
	assert_non_null(strstr(mh->stat_text, "every 500000 ns (2000 Hz per CPU)"));

	/* the rate in effect follows the encoded event */
	assert_int_equal(encode(mh, "TIMER", 1000000, 0, true, true, &attr, err, sizeof(err)), 0);
	mock_host_print_stats(mh);
	assert_true(mock_host_stat(mh, "period_ns", &v));
	assert_int_equal(v, 1000000);
	assert_true(mock_host_stat(mh, "frequency_hz", &v));
	assert_int_equal(v, 1000);
	assert_true(mock_host_stat(mh, "events_encoded", &v));
	assert_int_equal(v, 1);
	assert_null(strstr(mh->stat_text, "default"));
	mock_host_free(mh);
}

static void test_descriptor(void **state)
{
	size_t i;

	(void)state;
	assert_int_equal(oprofile_ext_v1.abi_major, 1);
	assert_int_equal(oprofile_ext_v1.abi_minor, OP_SDK_MINOR);
	assert_int_equal(oprofile_ext_v1.size, OP_EXT_DESCRIPTOR_SIZE_V1_0);
	assert_string_equal(oprofile_ext_v1.name, "timer");
	assert_non_null(oprofile_ext_v1.summary);
	assert_null(oprofile_ext_v1.ext_deinit); /* its state is freed as user data */
	for (i = 0; i < 6; i++)
		assert_null(oprofile_ext_v1.reserved[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args_table),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_encode_table),
		cmocka_unit_test(test_model),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_descriptor),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
