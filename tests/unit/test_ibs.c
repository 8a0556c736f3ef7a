/*
 * test_ibs.c - the ibs plugin on the mock host: argument/config validation
 * tables, count limits, PMU probing in a fake sysfs, every derivation rule
 * (meet and miss records from ibs_rules.h fed as raw PERF_SAMPLE_RAW bytes
 * through the source callback and the escape handler), family masks and the
 * perf-amd-ibs.txt test vector.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../integration/ibs_rules.h"
#include "mock_host.h"

extern const struct op_ext_descriptor oprofile_ext_v1;

#define APP_START 0x400000ull
#define PID 4242

static char fx_dir[256];     /* per-run scratch dir below the build dir */
static char fx_sysfs[300];   /* fake sysfs with ibs_fetch (type 10) and ibs_op (type 11) */
static char fx_sysfs_old[300]; /* ibs_op without format/cnt_ctl, ibs_fetch without rand_en */
static char fx_intel[300];   /* fake /proc with a GenuineIntel cpuinfo */
static char fx_amd[300];     /* fake /proc with AuthenticAMD family 21 */
static char fx_session[300];

static void fx_write(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void fx_mkdirs(const char *fmt, ...)
{
	char path[512], *p;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	for (p = path + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	mkdir(path, 0755);
}

static void fx_pmu(const char *root, const char *pmu, const char *type, const char *fmt_file)
{
	char path[600];

	fx_mkdirs("%s/bus/event_source/devices/%s/format", root, pmu);
	snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/type", root, pmu);
	fx_write(path, type);
	if (fmt_file) {
		snprintf(path, sizeof(path), "%s/bus/event_source/devices/%s/format/%s", root, pmu,
			 fmt_file);
		fx_write(path, "config:19\n");
	}
}

static int fx_setup(void **state)
{
	char path[600];

	(void)state;
	snprintf(fx_dir, sizeof(fx_dir), "test_ibs.tmp.%ld", (long)getpid());
	snprintf(fx_sysfs, sizeof(fx_sysfs), "%s/sys", fx_dir);
	snprintf(fx_sysfs_old, sizeof(fx_sysfs_old), "%s/sys-old", fx_dir);
	snprintf(fx_intel, sizeof(fx_intel), "%s/proc-intel", fx_dir);
	snprintf(fx_amd, sizeof(fx_amd), "%s/proc-amd", fx_dir);
	snprintf(fx_session, sizeof(fx_session), "%s/session", fx_dir);
	fx_pmu(fx_sysfs, "ibs_fetch", "10\n", "rand_en");
	fx_pmu(fx_sysfs, "ibs_op", "11\n", "cnt_ctl");
	fx_pmu(fx_sysfs_old, "ibs_fetch", "10\n", NULL);
	fx_pmu(fx_sysfs_old, "ibs_op", "11\n", NULL);
	fx_mkdirs("%s", fx_intel);
	fx_mkdirs("%s", fx_amd);
	fx_mkdirs("%s/samples", fx_session);
	snprintf(path, sizeof(path), "%s/cpuinfo", fx_intel);
	fx_write(path, "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n");
	snprintf(path, sizeof(path), "%s/cpuinfo", fx_amd);
	fx_write(path, "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 21\nmodel\t\t: 2\n");
	return 0;
}

static int fx_teardown(void **state)
{
	char cmd[400];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fx_dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* init with @args, then "|sysfs=<fake>" unless @args names one */
static struct mock_host *ibs_try(const char *args, const char *proc, int *rc)
{
	struct mock_host *mh = mock_host_new();
	char full[4096];

	mock_host_set_proc_root(mh, proc ? proc : fx_amd);
	if (strstr(args, "sysfs="))
		snprintf(full, sizeof(full), "%s", args);
	else
		snprintf(full, sizeof(full), "%s%ssysfs=%s", args, *args ? "|" : "", fx_sysfs);
	*rc = mock_host_init(mh, &oprofile_ext_v1, full);
	return mh;
}

static struct mock_host *ibs_up(const char *args)
{
	int rc;
	struct mock_host *mh = ibs_try(args, NULL, &rc);

	if (rc) {
		size_t i;

		for (i = 0; i < mh->nr_logs; i++)
			fprintf(stderr, "log: %s\n", mh->logs[i].msg);
	}
	assert_int_equal(rc, 0);
	return mh;
}

static const struct mock_reg_counter *ibs_counter(const struct mock_host *mh, const char *name)
{
	size_t i;

	for (i = 0; i < mh->nr_counters; i++)
		if (!strcmp(mh->counters[i].name, name))
			return &mh->counters[i];
	return NULL;
}

static const struct mock_reg_source *ibs_source(const struct mock_host *mh, const char *name)
{
	size_t i;

	for (i = 0; i < mh->nr_sources; i++)
		if (!strcmp(mh->sources[i].desc.name, name))
			return &mh->sources[i];
	return NULL;
}

static const struct mock_reg_escape *ibs_escape_code(const struct mock_host *mh, uint32_t code)
{
	size_t i;

	for (i = 0; i < mh->nr_escapes; i++)
		if (mh->escapes[i].code == code)
			return &mh->escapes[i];
	return NULL;
}

/*
 * The way a sample travels in oprofiled: the source's on_sample (buffer sync)
 * emits escape records; trans hands each to its handler with the context.
 */
static void ibs_feed_raw(struct mock_host *mh, bool fetch, const void *raw, uint32_t size,
			 uint64_t ip)
{
	const struct mock_reg_source *src = ibs_source(mh, fetch ? "ibs_fetch" : "ibs_op");
	struct op_perf_sample s = { .size = sizeof(s) };
	size_t first = mh->nr_emits, i;

	assert_non_null(src);
	s.misc = 0x4002;
	s.cpumode = OP_CPUMODE_USER;
	s.ip = ip;
	s.pid = s.tid = PID;
	s.cpu = 1;
	s.source = src->index;
	s.period = 100000;
	s.raw = raw;
	s.raw_size = size;
	assert_int_equal(src->desc.on_sample(src->priv, &s, mock_host_emitter(mh)), 0);
	for (i = first; i < mh->nr_emits; i++) {
		const struct mock_emit_rec *r = &mh->emits[i];
		const struct mock_reg_escape *e = ibs_escape_code(mh, r->code);
		struct op_trans_view v = { .size = sizeof(v) };

		assert_non_null(e);
		assert_true(r->nargs >= e->desc.min_args && r->nargs <= e->desc.max_args);
		v.tgid = v.tid = PID;
		v.cpu = 1;
		v.in_kernel = 0;
		v.app_cookie = 1;
		v.cookie = 1;
		assert_int_equal(e->desc.handler(e->priv, &v, r->args, r->nargs), 0);
	}
}

static void ibs_feed(struct mock_host *mh, bool fetch, const struct ibs_rec *rec, uint64_t pc)
{
	uint8_t raw[80];
	uint32_t size = ibs_rec_raw(rec, fetch, pc, raw);

	ibs_feed_raw(mh, fetch, raw, size, pc);
}

static void ibs_map_app(struct mock_host *mh)
{
	struct mock_mapping m = { 0 };

	m.start = APP_START;
	m.end = APP_START + 0x100000;
	m.cookie = mh->host.cookie_intern(mock_host_ctx(mh), "/usr/bin/app", false);
	m.in_kernel = 0;
	mock_host_add_mapping(mh, &m);
}

/* sum logged for @counter at @key */
static uint64_t ibs_logged(const struct mock_host *mh, uint32_t counter, uint64_t key)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i < mh->nr_logged; i++)
		if (mh->logged[i].counter == counter && mh->logged[i].key == key)
			sum += mh->logged[i].count;
	return sum;
}

static uint64_t ibs_stat(struct mock_host *mh, const char *name)
{
	uint64_t v = UINT64_MAX;

	mock_host_print_stats(mh);
	assert_true(mock_host_stat(mh, name, &v));
	return v;
}

/* ------------------------------------------------------------------ */
/* arguments                                                           */
/* ------------------------------------------------------------------ */

struct args_case {
	const char *args;
	int rc;
	unsigned counters;  /* when rc == 0 */
	const char *log;    /* substring of an ERR message when rc != 0 */
};

static const struct args_case args_cases[] = {
	{ "op:IBS_OP_ALL:100000:1|family=0x10", 0, 1, NULL },
	{ "fetch:IBS_FETCH_ALL,IBS_FETCH_KILLED:100000:0|op:IBS_OP_ALL,IBS_OP_LOAD:200000:3|family=0x15",
	  0, 4, NULL },
	{ "fetch:IBS_FETCH_ALL:100000|family=16", 0, 1, NULL },
	{ "op:IBS_OP_ALL:100000|family=16", 0, 1, NULL },
	{ "events:IBS_FETCH_ALL:50000:0,IBS_OP_ALL:100000:1,IBS_OP_STORE:100000:1|family=0x15",
	  0, 3, NULL },
	/* fetch UM is ignored (stored as 0), whatever was given */
	{ "fetch:IBS_FETCH_ALL:100000:5|family=0x10", 0, 1, NULL },
	/* op count limits: 20 bits on family 10h, 27 bits from 12h */
	{ "op:IBS_OP_ALL:1048575:0|family=0x10", 0, 1, NULL },
	{ "op:IBS_OP_ALL:1048576:0|family=0x10", -EINVAL, 0, "above the IBS op limit 1048575" },
	{ "op:IBS_OP_ALL:134217727:0|family=0x15", 0, 1, NULL },
	{ "op:IBS_OP_ALL:134217728:0|family=0x12", -EINVAL, 0, "above the IBS op limit 134217727" },
	{ "fetch:IBS_FETCH_ALL:1048575:0|family=0x15", 0, 1, NULL },
	{ "fetch:IBS_FETCH_ALL:1048576:0|family=0x15", -EINVAL, 0, "above the IBS fetch limit 1048575" },
	/* tags */
	{ "fetch:IBS_OP_ALL:100000:0|family=0x10", -EINVAL, 0,
	  "IBS_OP_ALL carries ext:ibs_op, not ext:ibs_fetch" },
	{ "op:IBS_FETCH_ALL:100000:0|family=0x10", -EINVAL, 0,
	  "IBS_FETCH_ALL carries ext:ibs_fetch, not ext:ibs_op" },
	{ "op:CPU_CLK_UNHALTED:100000:0|family=0x10", -EINVAL, 0,
	  "CPU_CLK_UNHALTED is not an IBS event" },
	{ "op:NO_SUCH_EVENT:100000:0|family=0x10", -EINVAL, 0, "NO_SUCH_EVENT" },
	/* shared count and unit mask */
	{ "events:IBS_OP_ALL:100000:1,IBS_OP_LOAD:200000:1|family=0x10", -EINVAL, 0,
	  "All IBS Op events must have the same count and unit mask" },
	{ "events:IBS_OP_ALL:100000:1,IBS_OP_LOAD:100000:3|family=0x10", -EINVAL, 0,
	  "All IBS Op events must have the same count" },
	{ "events:IBS_FETCH_ALL:100000,IBS_FETCH_KILLED:60000|family=0x10", -EINVAL, 0,
	  "All IBS Fetch events must have the same count" },
	{ "op:IBS_OP_ALL,IBS_OP_ALL:100000:1|family=0x10", -EINVAL, 0, "given twice" },
	/* numbers */
	{ "op:IBS_OP_ALL:abc:1|family=0x10", -EINVAL, 0, "Invalid count (abc)" },
	{ "op:IBS_OP_ALL:-5:1|family=0x10", -EINVAL, 0, "Invalid count (-5)" },
	{ "op:IBS_OP_ALL:100000:zz|family=0x10", -EINVAL, 0, "Invalid unit mask (zz)" },
	{ "op:IBS_OP_ALL:100000:4|family=0x10", -EINVAL, 0, "IBS_OP_ALL" },
	{ "op:IBS_OP_ALL:100|family=0x10", -EINVAL, 0, "IBS_OP_ALL" },
	/* syntax */
	{ "op:IBS_OP_ALL|family=0x10", -EINVAL, 0, "no count" },
	{ "op::100000:1|family=0x10", -EINVAL, 0, "no events before the count" },
	{ "op:IBS_OP_ALL:100000:1:7|family=0x10", -EINVAL, 0, "too many fields" },
	{ "op:IBS_OP_ALL,,IBS_OP_LOAD:100000:1|family=0x10", -EINVAL, 0, "empty or too long event name" },
	{ "events:IBS_OP_ALL|family=0x10", -EINVAL, 0, "has no count" },
	{ "op:IBS_OP_ALL:100000:1|bogus=1", -EINVAL, 0, "unknown setting 'bogus=1'" },
	{ "op:IBS_OP_ALL:100000:1|nonsense", -EINVAL, 0, "unknown part 'nonsense'" },
	{ "op:IBS_OP_ALL:100000:1|family=9", -EINVAL, 0, "bad AMD family '9'" },
	{ "family=0x10", -EINVAL, 0, "no IBS events selected" },
	{ "op:IBS_OP_ALL:100000:1|family=0x10|cpu_type=x86-64/nope", -ENOENT, 0,
	  "cannot load the events catalogue x86-64/nope" },
	/* the machine */
	{ "op:IBS_OP_ALL:100000:1|family=0x10|sysfs=/nonexistent-ibs", -ENODEV, 0,
	  "AMD IBS is not available on this machine: /nonexistent-ibs/bus/event_source/devices/ibs_op does not exist" },
	{ "fetch:IBS_FETCH_ALL:100000:1|family=0x10|sysfs=/nonexistent-ibs", -ENODEV, 0,
	  "/nonexistent-ibs/bus/event_source/devices/ibs_fetch does not exist" },
};

static void test_args_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(args_cases) / sizeof(args_cases[0]); i++) {
		const struct args_case *c = &args_cases[i];
		int rc;
		struct mock_host *mh = ibs_try(c->args, NULL, &rc);

		if (rc != c->rc || (c->rc == 0 && mh->nr_counters != c->counters) ||
		    (c->log && !mock_host_log_contains(mh, OP_LOG_ERR, c->log))) {
			size_t j;

			fprintf(stderr, "case %zu '%s': rc %d (want %d), %zu counters\n", i, c->args,
				rc, c->rc, mh->nr_counters);
			for (j = 0; j < mh->nr_logs; j++)
				fprintf(stderr, "  log: %s\n", mh->logs[j].msg);
		}
		assert_int_equal(rc, c->rc);
		if (c->rc == 0)
			assert_int_equal(mh->nr_counters, c->counters);
		else
			assert_int_equal(mh->nr_counters, 0); /* rolled back */
		if (c->log)
			assert_true(mock_host_log_contains(mh, OP_LOG_ERR, c->log));
		mock_host_free(mh);
	}
}

static void test_not_available_names_cpu(void **state)
{
	int rc;
	struct mock_host *mh;

	(void)state;
	mh = ibs_try("op:IBS_OP_ALL:100000:1|sysfs=/nonexistent-ibs", fx_intel, &rc);
	assert_int_equal(rc, -ENODEV);
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "AMD IBS is not available on this machine"));
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "PMU not available due to virtualization"));
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "this CPU is GenuineIntel family 6"));
	assert_int_equal(mh->nr_sources + mh->nr_escapes + mh->nr_counters + mh->nr_stats, 0);
	mock_host_free(mh);

	/* a fake sysfs on an Intel CPU: the family must be given */
	mh = ibs_try("op:IBS_OP_ALL:100000:1", fx_intel, &rc);
	assert_int_equal(rc, -EINVAL);
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "give family=N"));
	mock_host_free(mh);
}

static void test_family_from_cpuinfo(void **state)
{
	int rc;
	struct mock_host *mh;

	(void)state;
	/* fx_amd says family 21 (15h): a 27-bit op count is accepted */
	mh = ibs_try("op:IBS_OP_ALL:2000000:0", fx_amd, &rc);
	assert_int_equal(rc, 0);
	assert_true(mock_host_log_contains(mh, OP_LOG_INFO, "family 0x15"));
	mock_host_free(mh);
}

static void test_bad_pmu_type(void **state)
{
	char path[600];
	int rc;
	struct mock_host *mh;

	(void)state;
	fx_mkdirs("%s/sysbad/bus/event_source/devices/ibs_op", fx_dir);
	snprintf(path, sizeof(path), "%s/sysbad/bus/event_source/devices/ibs_op/type", fx_dir);
	fx_write(path, "eleven\n");
	snprintf(path, sizeof(path), "op:IBS_OP_ALL:100000:1|family=0x10|sysfs=%s/sysbad", fx_dir);
	mh = ibs_try(path, NULL, &rc);
	assert_int_equal(rc, -EINVAL);
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "expected the PMU's perf type number"));
	mock_host_free(mh);
}

static void test_config_group(void **state)
{
	struct mock_host *mh = mock_host_new();
	const struct mock_reg_counter *c;

	(void)state;
	mock_host_set_proc_root(mh, fx_amd);
	mock_host_set_config_string(mh, "sysfs", fx_sysfs);
	mock_host_set_config_int64(mh, "family", 0x10);
	mock_host_set_config_string(mh, "op", "IBS_OP_ALL,IBS_OP_LOAD:100000:1");
	mock_host_set_config_string(mh, "fetch", "IBS_FETCH_ALL:50000:0");
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, ""), 0);
	assert_int_equal(mh->nr_counters, 3);
	assert_int_equal(mh->nr_sources, 2);
	c = ibs_counter(mh, "IBS_FETCH_ALL");
	assert_non_null(c);
	assert_int_equal(c->desc.count, 50000);
	mock_host_free(mh);

	/* events in the arguments replace the config's; family still from the config */
	mh = mock_host_new();
	mock_host_set_proc_root(mh, fx_intel);
	mock_host_set_config_string(mh, "sysfs", fx_sysfs);
	mock_host_set_config_int64(mh, "family", 0x10);
	mock_host_set_config_string(mh, "op", "IBS_OP_ALL,IBS_OP_LOAD:100000:1");
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, "op:IBS_OP_STORE:70000:1"), 0);
	assert_int_equal(mh->nr_counters, 1);
	assert_non_null(ibs_counter(mh, "IBS_OP_STORE"));
	mock_host_free(mh);

	/* a bad config value names its key */
	mh = mock_host_new();
	mock_host_set_proc_root(mh, fx_amd);
	mock_host_set_config_string(mh, "op", "IBS_OP_ALL:lots:1");
	mock_host_set_config_string(mh, "sysfs", fx_sysfs);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, ""), -EINVAL);
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "config plugins.ibs.op: Invalid count (lots)"));
	mock_host_free(mh);
}

/* ------------------------------------------------------------------ */
/* registration                                                        */
/* ------------------------------------------------------------------ */

static void test_registration(void **state)
{
	struct mock_host *mh;
	const struct mock_reg_source *fs, *os;
	const struct mock_reg_counter *c;

	(void)state;
	mh = ibs_up("fetch:IBS_FETCH_ALL,IBS_FETCH_LATENCY:100008:0|op:IBS_OP_ALL,IBS_OP_NB_LOCAL_ONLY:"
		    "200000:3|family=0x15");
	assert_int_equal(mh->nr_counters, 4);
	assert_int_equal(mh->nr_escapes, 2);
	assert_int_equal(mh->nr_stats, 1);
	assert_non_null(mock_host_escape(mh, "ibs-fetch-sample"));
	assert_non_null(mock_host_escape(mh, "ibs-op-sample"));
	fs = ibs_source(mh, "ibs_fetch");
	os = ibs_source(mh, "ibs_op");
	assert_non_null(fs);
	assert_non_null(os);
	assert_int_equal(fs->desc.attr.type, 10);
	assert_int_equal(os->desc.attr.type, 11);
	/* periods are multiples of 16; fetch randomises, op um bit 0 = dispatch count */
	assert_int_equal(fs->desc.attr.sample_period, 100000);
	assert_int_equal(os->desc.attr.sample_period, 200000);
	assert_int_equal(fs->desc.attr.config, 1ull << 57);
	assert_int_equal(os->desc.attr.config, 1ull << 19);
	assert_int_equal(fs->desc.attr.sample_type_extra, 1u << 10); /* PERF_SAMPLE_RAW */
	assert_int_equal(os->desc.attr.sample_type_extra, 1u << 10);
	c = ibs_counter(mh, "IBS_FETCH_LATENCY");
	assert_non_null(c);
	assert_int_equal(c->desc.event, 0xf00e);
	assert_int_equal(c->desc.um, 0);
	assert_int_equal(c->desc.count, 100008);
	c = ibs_counter(mh, "IBS_OP_NB_LOCAL_ONLY");
	assert_non_null(c);
	assert_int_equal(c->desc.event, 0xf240);
	assert_int_equal(c->desc.um, 3);
	assert_int_equal(c->desc.count, 200000);
	mock_host_free(mh);

	/* a PMU without cnt_ctl: cycles, with a warning */
	{
		char args[512];

		snprintf(args, sizeof(args), "op:IBS_OP_ALL:100000:1|family=0x10|sysfs=%s",
			 fx_sysfs_old);
		mh = ibs_up(args);
		os = ibs_source(mh, "ibs_op");
		assert_int_equal(os->desc.attr.config, 0);
		assert_true(mock_host_log_contains(mh, OP_LOG_WARN, "no format/cnt_ctl"));
		mock_host_free(mh);
	}
}

/* ------------------------------------------------------------------ */
/* derivation rules                                                    */
/* ------------------------------------------------------------------ */

static void test_every_rule(void **state)
{
	size_t i;

	(void)state;
	assert_int_equal(IBS_NR_RULES, 60); /* every IBS event of the catalogue */
	for (i = 0; i < IBS_NR_RULES; i++) {
		const struct ibs_rule *r = &ibs_rules[i];
		const struct mock_reg_counter *c;
		char args[256];
		struct mock_host *mh;
		uint64_t meet = APP_START + 0x1000, miss = APP_START + 0x2000;

		snprintf(args, sizeof(args), "%s:%s:100000:0|family=0x15", r->fetch ? "fetch" : "op",
			 r->name);
		mh = ibs_up(args);
		ibs_map_app(mh);
		c = ibs_counter(mh, r->name);
		assert_non_null(c);
		assert_int_equal(c->desc.event, r->code);
		ibs_feed(mh, r->fetch, &r->meet, meet);
		ibs_feed(mh, r->fetch, &r->miss, miss);
		if (ibs_logged(mh, c->counter, 0x1000) != r->value ||
		    ibs_logged(mh, c->counter, 0x2000) != 0)
			fprintf(stderr, "rule %s: meet %" PRIu64 " (want %u), miss %" PRIu64 "\n",
				r->name, ibs_logged(mh, c->counter, 0x1000), r->value,
				ibs_logged(mh, c->counter, 0x2000));
		assert_int_equal(ibs_logged(mh, c->counter, 0x1000), r->value);
		assert_int_equal(ibs_logged(mh, c->counter, 0x2000), 0);
		/* the sample is logged in its own context, keyed by the file offset */
		assert_int_equal(mh->logged[0].view.tgid, PID);
		assert_int_equal(mh->logged[0].view.in_kernel, 0);
		assert_int_equal(mh->logged[0].view.cookie,
				 mock_host_cookie_of(mh, "/usr/bin/app"));
		assert_int_equal(ibs_stat(mh, r->fetch ? "fetch_samples" : "op_samples"),
				 1 + !r->miss.invalid);
		mock_host_free(mh);
	}
}

/*
 * 0xf00c (1G fetch pages) is derived but no shipped catalogue lists it: a
 * catalogue of the test's own (cpu_type=) makes it selectable.
 */
static void test_fetch_1g_page(void **state)
{
	static const struct ibs_rec meet = { false, R_FV | R_FPHYV | R_FPG(2), 0, 0, 0 };
	static const struct ibs_rec miss = { false, R_FV | R_FPG(2), 0, 0, 0 };
	static const struct ibs_rec res = { false, R_FV | R_FPHYV | R_FPG(3), 0, 0, 0 };
	const char *old = getenv("OPROFILE_EVENTS_DIR");
	char *saved = old ? strdup(old) : NULL, path[600];
	const struct mock_reg_counter *c, *k4, *m2;
	struct mock_host *mh;

	(void)state;
	fx_mkdirs("%s/events/test/ibs1g", fx_dir);
	snprintf(path, sizeof(path), "%s/events/test/ibs1g/unit_masks", fx_dir);
	fx_write(path, "name:ibs_fetch type:mandatory default:0x00\n\t0x00 No unit mask\n");
	snprintf(path, sizeof(path), "%s/events/test/ibs1g/events", fx_dir);
	fx_write(path, "event:0xf00a ext:ibs_fetch um:ibs_fetch minimum:50000 name:IBS_FETCH_4K_PAGE : 4K\n"
		       "event:0xf00b ext:ibs_fetch um:ibs_fetch minimum:50000 name:IBS_FETCH_2M_PAGE : 2M\n"
		       "event:0xf00c ext:ibs_fetch um:ibs_fetch minimum:50000 name:IBS_FETCH_1G_PAGE : 1G\n");
	snprintf(path, sizeof(path), "%s/events", fx_dir);
	setenv("OPROFILE_EVENTS_DIR", path, 1);
	mh = ibs_up("fetch:IBS_FETCH_1G_PAGE,IBS_FETCH_4K_PAGE,IBS_FETCH_2M_PAGE:100000:0|"
		    "family=0x15,cpu_type=test/ibs1g");
	if (saved)
		setenv("OPROFILE_EVENTS_DIR", saved, 1);
	else
		unsetenv("OPROFILE_EVENTS_DIR");
	free(saved);
	ibs_map_app(mh);
	c = ibs_counter(mh, "IBS_FETCH_1G_PAGE");
	k4 = ibs_counter(mh, "IBS_FETCH_4K_PAGE");
	m2 = ibs_counter(mh, "IBS_FETCH_2M_PAGE");
	assert_non_null(c);
	assert_int_equal(c->desc.event, 0xf00c);
	ibs_feed(mh, true, &meet, APP_START + 0x1000);
	ibs_feed(mh, true, &miss, APP_START + 0x2000);
	ibs_feed(mh, true, &res, APP_START + 0x3000); /* page size 3: reserved, never counted */
	assert_int_equal(ibs_logged(mh, c->counter, 0x1000), 1);
	assert_int_equal(ibs_logged(mh, c->counter, 0x2000), 0);
	assert_int_equal(ibs_logged(mh, c->counter, 0x3000), 0);
	assert_int_equal(ibs_logged(mh, k4->counter, 0x3000), 0);
	assert_int_equal(ibs_logged(mh, m2->counter, 0x3000), 0);
	assert_int_equal(ibs_logged(mh, k4->counter, 0x1000) + ibs_logged(mh, m2->counter, 0x1000), 0);
	assert_int_equal(ibs_stat(mh, "fetch_samples"), 3);
	mock_host_free(mh);
}

/* family masks: the same record counts differently per family */
static void test_family_masks(void **state)
{
	static const struct ibs_rec ripinv = { false, 0, R_RIPINV, 0, 0 };
	static const struct ibs_rec remote = { false, 0, 0, R_SRC(3) | R_DST, R_NB };
	static const struct ibs_rec ldbnk = { false, 0, 0, 0, R_LD | R_LDBNK };
	static const struct ibs_rec l1g = { false, 0, 0, 0, R_LD | R_LINV | R_L1H1G };
	const char *ev = "op:IBS_OP_ALL,IBS_OP_NB_LOCAL_ONLY,IBS_OP_NB_REMOTE_ONLY,"
			 "IBS_OP_BANK_CONF_LOAD,IBS_OP_L1_DTLB_1G,IBS_OP_L1_DTLB_4K:100000:0";
	static const struct {
		const char *family;
		uint64_t all, local, remote, bank, g1, k4, ripinv;
	} cases[] = {
		/* RipInvalid is not implemented on 10h: forced to 0, sample kept */
		{ "0x10", 4, 0, 1, 1, 1, 0, 0 },
		/* 12h: no DstProc -> the remote record reads as local */
		{ "0x12", 3, 1, 0, 1, 1, 0, 1 },
		/* 14h: also no LdBnk / L1 1G hit bits */
		{ "0x14", 3, 1, 0, 0, 0, 1, 1 },
		{ "0x15", 3, 0, 1, 1, 1, 0, 1 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char args[512];
		struct mock_host *mh;
		uint64_t pc = APP_START + 0x3000;

		snprintf(args, sizeof(args), "%s|family=%s", ev, cases[i].family);
		mh = ibs_up(args);
		ibs_map_app(mh);
		ibs_feed(mh, false, &ripinv, pc);
		ibs_feed(mh, false, &remote, pc);
		ibs_feed(mh, false, &ldbnk, pc);
		ibs_feed(mh, false, &l1g, pc);
#define CNT(name) ibs_logged(mh, ibs_counter(mh, name)->counter, 0x3000)
		assert_int_equal(CNT("IBS_OP_ALL"), cases[i].all);
		assert_int_equal(CNT("IBS_OP_NB_LOCAL_ONLY"), cases[i].local);
		assert_int_equal(CNT("IBS_OP_NB_REMOTE_ONLY"), cases[i].remote);
		assert_int_equal(CNT("IBS_OP_BANK_CONF_LOAD"), cases[i].bank);
		assert_int_equal(CNT("IBS_OP_L1_DTLB_1G"), cases[i].g1);
		assert_int_equal(CNT("IBS_OP_L1_DTLB_4K"), cases[i].k4);
#undef CNT
		assert_int_equal(ibs_stat(mh, "rip_invalid"), cases[i].ripinv);
		mock_host_free(mh);
	}
}

/* ------------------------------------------------------------------ */
/* the perf-amd-ibs.txt test vector (notes/perf-facts.md 6.4)          */
/* ------------------------------------------------------------------ */

static const char ibs_vector_hex[] =
	"0900000001407800a7ae0482ffffffff01000000010000007b000000000000000000000000000000"
	"a08601000000000044000000ff0900006a180600c3020000a7ae0482ffffffff0100550200010000"
	"13000000000000009200963100000000208939a5080011ff208939a5080000000000000000000000";

static void test_vector(void **state)
{
	uint8_t rec[120];
	uint32_t raw_size;
	uint64_t ip, ctl;
	struct mock_host *mh;
	struct mock_mapping m = { 0 };
	const struct mock_emit_rec *e;
	size_t i;

	(void)state;
	assert_int_equal(strlen(ibs_vector_hex), 240);
	for (i = 0; i < 120; i++) {
		unsigned v;

		assert_int_equal(sscanf(ibs_vector_hex + 2 * i, "%2x", &v), 1);
		rec[i] = (uint8_t)v;
	}
	/* header: type 9 (SAMPLE), misc 0x4001, size 120 */
	assert_int_equal(rec[0], 9);
	assert_int_equal(rec[6] | rec[7] << 8, 120);
	memcpy(&ip, rec + 8, 8);
	assert_int_equal(ip, 0xffffffff8204aea7ull);
	/* IP|TID|TIME|CPU|PERIOD, then RAW: u32 size at 48 */
	memcpy(&raw_size, rec + 48, 4);
	assert_int_equal(raw_size, 68);

	mh = ibs_up("op:IBS_OP_ALL,IBS_OP_TAG_TO_RETIRE,IBS_OP_COMP_TO_RET,IBS_OP_BRANCH_RETIRED,"
		    "IBS_OP_STORE,IBS_OP_LOAD,IBS_OP_L1_DTLB_2M,IBS_OP_L1_DTLB_4K,"
		    "IBS_OP_DATA_CACHE_MISS,IBS_OP_DC_LOAD_LAT,IBS_OP_NB_REMOTE_DRAM,"
		    "IBS_OP_ALL_LOAD_STORE,IBS_OP_L1_DTLB_HITS:100000:0|family=0x19");
	m.start = 0xffffffff81000000ull;
	m.end = 0xffffffff83000000ull;
	m.cookie = mh->host.cookie_intern(mock_host_ctx(mh), "vmlinux", true);
	m.in_kernel = 1;
	mock_host_add_mapping(mh, &m);
	ibs_feed_raw(mh, false, rec + 52, raw_size, ip);
	assert_int_equal(mh->nr_emits, 1);
	e = &mh->emits[0];
	assert_int_equal(e->nargs, 13);
	assert_int_equal(e->args[0], 1);                       /* in kernel */
	assert_int_equal(e->args[2], 0x104aea7);               /* offset in the image */
	ctl = e->args[5];
	assert_int_equal(ctl, 0x000002c30006186aull);
	assert_int_equal((((ctl >> 20) & 0x7f) << 16 | (ctl & 0xffff)) << 4, 100000); /* MaxCnt */
	assert_int_equal((ctl >> 32) & 0x7ffffff, 707);       /* OpCurCnt */
	assert_int_equal(e->args[6], 0xffffffff8204aea7ull);  /* IbsOpRip */
	assert_int_equal(e->args[7], 0x0000010002550001ull);  /* OpData */
	assert_int_equal(e->args[8], 0x13);                    /* OpData2: RmtNode, DataSrc 3 */
	assert_int_equal(e->args[9], 0x31960092ull);           /* OpData3 */
	assert_int_equal(e->args[10], 0xff110008a5398920ull);  /* DcLinAd */
	assert_int_equal(e->args[11], 0x00000008a5398920ull);  /* DcPhysAd */
	assert_int_equal(e->args[12], 0);                      /* BrTarget (caps bit 5) */
#define CNT(name) ibs_logged(mh, ibs_counter(mh, name)->counter, 0x104aea7)
	assert_int_equal(CNT("IBS_OP_ALL"), 1);
	assert_int_equal(CNT("IBS_OP_TAG_TO_RETIRE"), 597);
	assert_int_equal(CNT("IBS_OP_COMP_TO_RET"), 1);
	assert_int_equal(CNT("IBS_OP_BRANCH_RETIRED"), 0);
	assert_int_equal(CNT("IBS_OP_ALL_LOAD_STORE"), 1);
	assert_int_equal(CNT("IBS_OP_STORE"), 1);
	assert_int_equal(CNT("IBS_OP_LOAD"), 0);
	assert_int_equal(CNT("IBS_OP_L1_DTLB_HITS"), 1);
	assert_int_equal(CNT("IBS_OP_L1_DTLB_2M"), 1);
	assert_int_equal(CNT("IBS_OP_L1_DTLB_4K"), 0);
	assert_int_equal(CNT("IBS_OP_DATA_CACHE_MISS"), 1);
	assert_int_equal(CNT("IBS_OP_DC_LOAD_LAT"), 0);  /* a store */
	assert_int_equal(CNT("IBS_OP_NB_REMOTE_DRAM"), 0); /* NB events need a load */
#undef CNT
	assert_int_equal(mh->logged[0].view.in_kernel, 1);
	assert_int_equal(ibs_stat(mh, "derived_events"), 8);
	mock_host_free(mh);
}

/* ------------------------------------------------------------------ */
/* malformed input, stats, memory-access log                           */
/* ------------------------------------------------------------------ */

static void test_bad_records(void **state)
{
	static const struct ibs_rec ok = { false, 0, 0, 0, R_LD };
	uint8_t raw[80];
	uint32_t size;
	struct mock_host *mh;

	(void)state;
	mh = ibs_up("fetch:IBS_FETCH_ALL:100000:0|op:IBS_OP_ALL:100000:0|family=0x15");
	ibs_map_app(mh);
	size = ibs_rec_raw(&ok, false, APP_START + 0x10, raw);
	ibs_feed_raw(mh, false, NULL, 0, APP_START);                 /* no raw data */
	ibs_feed_raw(mh, false, raw, 4 + 8 * 6, APP_START);          /* 6 of 7 registers */
	ibs_feed_raw(mh, false, raw, size - 3, APP_START);           /* not 4 + 8n */
	ibs_feed_raw(mh, true, raw, 4 + 8 * 2, APP_START);           /* fetch: 2 of 3 */
	assert_int_equal(mh->nr_emits, 0);
	assert_int_equal(ibs_stat(mh, "op_incompletes"), 3);
	assert_int_equal(ibs_stat(mh, "fetch_incompletes"), 1);
	assert_int_equal(ibs_stat(mh, "short_raw"), 4);
	/* a pc outside every mapping: counted, not logged */
	ibs_feed(mh, false, &ok, 0x7000000);
	assert_int_equal(mh->nr_emits, 0);
	assert_int_equal(ibs_stat(mh, "unmapped"), 1);
	/* a short escape record (as a corrupt buffer would hold) is refused */
	{
		const struct mock_reg_escape *e = mock_host_escape(mh, "ibs-op-sample");
		struct op_trans_view v = { .size = sizeof(v) };
		uint64_t args[4] = { 0 };

		assert_int_equal(e->desc.handler(e->priv, &v, args, 4), -EINVAL);
		assert_int_equal(ibs_stat(mh, "op_incompletes"), 4);
	}
	/* and the good one still goes through */
	ibs_feed_raw(mh, false, raw, size, APP_START + 0x10);
	assert_int_equal(ibs_stat(mh, "op_samples"), 1);
	mock_host_print_stats(mh);
	assert_non_null(strstr(mh->stat_text, "Nr. IBS Op samples        : 1"));
	assert_non_null(strstr(mh->stat_text, "Nr. IBS Op incompletes    : 4"));
	assert_non_null(strstr(mh->stat_text, "Nr. IBS Fetch incompletes : 1"));
	assert_non_null(strstr(mh->stat_text, "Nr. IBS derived events    : 1"));
	mock_host_free(mh);
}

static void test_memaccess_log(void **state)
{
	static const struct ibs_rec ld = { false, 0, 0, 0, R_LD | R_DCMISS | R_LAT(0x40) };
	static const struct ibs_rec st = { false, 0, 0, 0, R_ST };
	static const struct ibs_rec br = { false, 0, R_BRRET, 0, 0 };
	char path[600], line[256];
	struct mock_host *mh = mock_host_new();
	FILE *f;
	int n = 0;

	(void)state;
	mock_host_set_proc_root(mh, fx_amd);
	mock_host_set_session_dir(mh, fx_session);
	snprintf(path, sizeof(path), "op:IBS_OP_ALL:100000:3|family=0x15|sysfs=%s", fx_sysfs);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, path), 0);
	ibs_map_app(mh);
	ibs_feed(mh, false, &ld, APP_START + 0x100);
	ibs_feed(mh, false, &st, APP_START + 0x200);
	ibs_feed(mh, false, &br, APP_START + 0x300);
	assert_int_equal(ibs_stat(mh, "memaccess_lines"), 2);
	mock_host_free(mh);

	snprintf(path, sizeof(path), "%s/samples/ibs_memaccess.log", fx_session);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		if (n == 0)
			assert_string_equal(line, "1,1,1,4242,4242,0x400100,0:abcde000,7fff:12340100,LD,64\n");
		else
			assert_string_equal(line, "1,1,1,4242,4242,0x400200,0:abcde000,7fff:12340200,ST,0\n");
		n++;
	}
	fclose(f);
	assert_int_equal(n, 2);

	/* without um bit 1 there is no log */
	unlink(path);
	mh = mock_host_new();
	mock_host_set_proc_root(mh, fx_amd);
	mock_host_set_session_dir(mh, fx_session);
	snprintf(path, sizeof(path), "op:IBS_OP_ALL:100000:1|family=0x15|sysfs=%s", fx_sysfs);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, path), 0);
	ibs_map_app(mh);
	ibs_feed(mh, false, &ld, APP_START + 0x100);
	assert_int_equal(ibs_stat(mh, "memaccess_lines"), 0);
	mock_host_free(mh);
	snprintf(path, sizeof(path), "%s/samples/ibs_memaccess.log", fx_session);
	assert_int_not_equal(access(path, F_OK), 0);
}

/* a log that cannot be written: counted and reported once, samples go on */
static void test_memaccess_log_write_error(void **state)
{
	static const struct ibs_rec ld = { false, 0, 0, 0, R_LD | R_DCMISS | R_LAT(0x40) };
	char path[600], args[600];
	struct mock_host *mh;

	(void)state;
	if (access("/dev/full", W_OK))
		skip();
	snprintf(path, sizeof(path), "%s/samples/ibs_memaccess.log", fx_session);
	unlink(path);
	assert_int_equal(symlink("/dev/full", path), 0);
	mh = mock_host_new();
	mock_host_set_proc_root(mh, fx_amd);
	mock_host_set_session_dir(mh, fx_session);
	snprintf(args, sizeof(args), "op:IBS_OP_ALL:100000:3|family=0x15|sysfs=%s", fx_sysfs);
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, args), 0);
	ibs_map_app(mh);
	ibs_feed(mh, false, &ld, APP_START + 0x100);
	ibs_feed(mh, false, &ld, APP_START + 0x140);
	assert_int_equal(ibs_stat(mh, "op_samples"), 2);
	/* ibs_stat printed the stats, which flushes the log into /dev/full */
	assert_true(ibs_stat(mh, "memaccess_write_errors") >= 1);
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "ibs_memaccess.log: write failed"));
	assert_int_equal(mock_host_log_count(mh, OP_LOG_ERR, "write failed"), 1);
	mock_host_free(mh);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args_table),
		cmocka_unit_test(test_not_available_names_cpu),
		cmocka_unit_test(test_family_from_cpuinfo),
		cmocka_unit_test(test_bad_pmu_type),
		cmocka_unit_test(test_config_group),
		cmocka_unit_test(test_registration),
		cmocka_unit_test(test_every_rule),
		cmocka_unit_test(test_fetch_1g_page),
		cmocka_unit_test(test_family_masks),
		cmocka_unit_test(test_vector),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_memaccess_log),
		cmocka_unit_test(test_memaccess_log_write_error),
	};

	return cmocka_run_group_tests(tests, fx_setup, fx_teardown);
}
