/*
 * test_model_amd64.c - the amd64 model plugin (plugins/amd64/amd64.c +
 * plugins/common/model_pfm.c) through the mock host: every catalogue event
 * encoded like libpfm4 encodes it, literal encodings, detection (cpuid
 * tables, forced types, libpfm4 PMU presence, the no-PMU decline), counter
 * placement and error messages.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "model_check.h"

/* ------------------------------------------------------------------ */
/* every catalogue against libpfm4                                      */
/* ------------------------------------------------------------------ */

static const struct mc_alias zen_aliases[] = {
	{ "CPU_CLK_UNHALTED", "CYCLES_NOT_IN_HALT" }, /* events/extras: OProfile's name */
	{ NULL, NULL },
};

/* x86-64/generic is hand-written: its events as family 10h's libpfm4 table names them */
static const struct mc_alias generic_aliases[] = {
	{ "CPU_CLK_UNHALTED", "CPU_CLK_UNHALTED" },
	{ "RETIRED_INSTRUCTIONS", "RETIRED_INSTRUCTIONS" },
	{ "RETIRED_UOPS", "RETIRED_UOPS" },
	{ "RETIRED_BRANCH_INSTRUCTIONS", "RETIRED_BRANCH_INSTRUCTIONS" },
	{ "RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS", "RETIRED_MISPREDICTED_BRANCH_INSTRUCTIONS" },
	{ "RETIRED_TAKEN_BRANCH_INSTRUCTIONS", "RETIRED_TAKEN_BRANCH_INSTRUCTIONS" },
	{ "RETIRED_TAKEN_BRANCH_INSTRUCTIONS_MISPREDICTED",
	  "RETIRED_TAKEN_BRANCH_INSTRUCTIONS_MISPREDICTED" },
	{ "RETIRED_FAR_CONTROL_TRANSFERS", "RETIRED_FAR_CONTROL_TRANSFERS" },
	{ "RETIRED_BRANCH_RESYNCS", "RETIRED_BRANCH_RESYNCS" },
	{ "RETIRED_NEAR_RETURNS", "RETIRED_NEAR_RETURNS" },
	{ "RETIRED_NEAR_RETURNS_MISPREDICTED", "RETIRED_NEAR_RETURNS_MISPREDICTED" },
	{ "RETIRED_INDIRECT_BRANCHES_MISPREDICTED", "RETIRED_INDIRECT_BRANCHES_MISPREDICTED" },
	{ "RETIRED_MMX_FP_INSTRUCTIONS",
	  "RETIRED_MMX_AND_FP_INSTRUCTIONS:X87:MMX_AND_3DNOW:PACKED_SSE_AND_SSE2" },
	{ "INTERRUPTS_MASKED_CYCLES", "INTERRUPTS_MASKED_CYCLES" },
	{ "INTERRUPTS_MASKED_CYCLES_WITH_INTERRUPT_PENDING",
	  "INTERRUPTS_MASKED_CYCLES_WITH_INTERRUPT_PENDING" },
	{ "INTERRUPTS_TAKEN", "INTERRUPTS_TAKEN" },
	{ NULL, NULL },
};

static void xcheck(const char *type, const char *pmu, const struct mc_alias *al,
		   unsigned min_um, unsigned min_ext)
{
	struct mock_host *mh = mc_up();
	struct mc_totals t;

	mc_xcheck_catalogue(mh, type, pmu, al, &t);
	print_message("%s vs %s: %u events, %u unit-mask values, %u extended selects\n", type,
		      pmu, t.events, t.with_um, t.extended);
	assert_true(t.events >= 10);
	assert_true(t.with_um >= min_um);
	assert_true(t.extended >= min_ext);
	mock_host_free(mh);
}

static void test_xcheck_family10(void **state)
{
	(void)state;
	xcheck("x86-64/family10", "amd64_fam10h_barcelona", NULL, 50, 1);
}

static void test_xcheck_family15h(void **state)
{
	(void)state;
	xcheck("x86-64/family15h", "amd64_fam15h_interlagos", NULL, 50, 1);
}

static void test_xcheck_family17h(void **state)
{
	(void)state;
	xcheck("x86-64/family17h", "amd64_fam17h_zen1", zen_aliases, 50, 0);
}

static void test_xcheck_family19h(void **state)
{
	(void)state;
	xcheck("x86-64/family19h", "amd64_fam19h_zen3", zen_aliases, 50, 1);
}

static void test_xcheck_generic(void **state)
{
	(void)state;
	xcheck("x86-64/generic", "amd64_fam10h_barcelona", generic_aliases, 0, 0);
}

/* ------------------------------------------------------------------ */
/* literal encodings (hardware facts, independent of libpfm4)           */
/* ------------------------------------------------------------------ */

struct lit {
	const char *type, *name;
	uint64_t count;
	uint32_t um;
	bool kernel, user;
	uint64_t config;
};

static const struct lit lits[] = {
	{ "x86-64/family10", "CPU_CLK_UNHALTED", 100000, 0, 1, 1, 0x76 },
	{ "x86-64/family10", "DISPATCHED_FPU", 10000, 0x3f, 1, 1, 0x3f00 },
	{ "x86-64/family10", "DISPATCHED_FPU", 10000, 0x05, 1, 0, 0x0500 },
	{ "x86-64/family15h", "RETIRED_INSTRUCTIONS", 100000, 0, 0, 1, 0xc0 },
	{ "x86-64/family17h", "RETIRED_INSTRUCTIONS", 100000, 0, 1, 1, 0xc0 },
	{ "x86-64/family17h", "CPU_CLK_UNHALTED", 100000, 0, 1, 1, 0x76 },
	{ "x86-64/family19h", "RETIRED_OPS", 100000, 0, 1, 1, 0xc1 },
	/* extended event select 0x1cf: bits 11:8 go to config 35:32 */
	{ "x86-64/family19h", "TAGGED_IBS_OPS", 100000, 0x02, 1, 1, 0x1000002cfull },
	{ "x86-64/family19h", "TAGGED_IBS_OPS", 100000, 0x01, 1, 1, 0x1000001cfull },
	{ "x86-64/generic", "RETIRED_MMX_FP_INSTRUCTIONS", 100000, 0x04, 1, 1, 0x4cb },
};

static void test_literal_encodings(void **state)
{
	struct mock_host *mh = mc_up();
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(lits) / sizeof(lits[0]); i++) {
		struct mock_reg_model *m = mc_model(mh, lits[i].type);
		struct op_perf_attr a;
		char err[512];

		mc_force(m);
		if (mc_encode(m, lits[i].name, lits[i].count, lits[i].um, lits[i].kernel, lits[i].user,
			      &a, err, sizeof(err)))
			fail_msg("%s %s: %s", lits[i].type, lits[i].name, err);
		assert_int_equal(a.size, sizeof(a));
		assert_int_equal(a.type, MP_PERF_TYPE_RAW);
		if (a.config != lits[i].config)
			fail_msg("%s %s um %#x: config %#llx, expected %#llx", lits[i].type,
				 lits[i].name, lits[i].um, (unsigned long long)a.config,
				 (unsigned long long)lits[i].config);
		assert_int_equal(a.sample_period, lits[i].count);
		assert_int_equal(a.exclude_kernel, !lits[i].kernel);
		assert_int_equal(a.exclude_user, !lits[i].user);
		assert_false(a.freq);
	}
	mock_host_print_stats(mh);
	{
		uint64_t v = 0;

		assert_true(mock_host_stat(mh, "events_encoded", &v));
		assert_int_equal(v, sizeof(lits) / sizeof(lits[0]));
	}
	mock_host_free(mh);
}

/* kernel-only / user-only agree with libpfm4's :k / :u */
static void test_privilege_vs_libpfm(void **state)
{
	struct mock_host *mh = mc_up();
	struct mock_reg_model *m = mc_model(mh, "x86-64/family19h");
	struct op_perf_attr a;
	struct perf_event_attr p;
	char err[512];

	(void)state;
	mc_force(m);
	assert_int_equal(mc_encode(m, "RETIRED_INSTRUCTIONS", 100000, 0, false, true, &a, err,
				   sizeof(err)), 0);
	assert_int_equal(mc_pfm("amd64_fam19h_zen3::RETIRED_INSTRUCTIONS", PFM_PLM3, &p), PFM_SUCCESS);
	mc_same("user only", &a, &p);
	mc_force(m);
	assert_int_equal(mc_encode(m, "RETIRED_INSTRUCTIONS", 100000, 0, true, false, &a, err,
				   sizeof(err)), 0);
	assert_int_equal(mc_pfm("amd64_fam19h_zen3::RETIRED_INSTRUCTIONS", PFM_PLM0, &p), PFM_SUCCESS);
	mc_same("kernel only", &a, &p);
	mock_host_free(mh);
}

/* ------------------------------------------------------------------ */
/* detection                                                            */
/* ------------------------------------------------------------------ */

struct det {
	const char *vendor;
	uint32_t family, model;
	bool usable;
	const char *forced;
	const char *winner; /* model name, NULL = none claims */
	int score;
	const char *why;    /* substring of the first decline reason, or NULL = none given */
};

static const struct det dets[] = {
	/* no libpfm4 PMU present in this process: specific tables decline, generic claims */
	{ "AuthenticAMD", 0x10, 2, true, NULL, "amd64-generic", MP_SCORE_GENERIC,
	  "libpfm4 does not detect its PMU table amd64_fam10h_barcelona" },
	{ "AuthenticAMD", 0x19, 0x21, true, NULL, "amd64-generic", MP_SCORE_GENERIC,
	  "--cpu-type=x86-64/family19h" },
	{ "AuthenticAMD", 0x1a, 0x02, true, NULL, "amd64-generic", MP_SCORE_GENERIC, NULL },
	/* too old for any catalogue: nothing to say either */
	{ "AuthenticAMD", 0x0f, 0x41, true, NULL, NULL, 0, NULL },
	/* not AMD: silent */
	{ "GenuineIntel", 6, 0x8f, true, NULL, NULL, 0, NULL },
	{ "", 0, 0, false, NULL, NULL, 0, NULL },
	/* no usable PMU (this machine's case): decline with the reason */
	{ "AuthenticAMD", 0x1a, 0x02, false, NULL, NULL, 0, "no hardware PMU" },
	{ "AuthenticAMD", 0x17, 0x31, false, NULL, NULL, 0, "timer model" },
	/* forced: claimed without a PMU, whatever the CPU */
	{ "GenuineIntel", 6, 0x8f, false, "x86-64/family10", "amd64-family10", MP_SCORE_FORCED, NULL },
	{ "AuthenticAMD", 0x1a, 0, false, "x86-64/family15h", "amd64-family15h", MP_SCORE_FORCED, NULL },
	{ "", 0, 0, false, "x86-64/family17h", "amd64-family17h", MP_SCORE_FORCED, NULL },
	{ "", 0, 0, true, "x86-64/family19h", "amd64-family19h", MP_SCORE_FORCED, NULL },
	{ "", 0, 0, true, "x86-64/generic", "amd64-generic", MP_SCORE_FORCED, NULL },
	/* forced to an x86-64 type the plugin lacks: said by the generic model */
	{ "AuthenticAMD", 0x10, 0, true, "x86-64/family12h", NULL, 0,
	  "--cpu-type=x86-64/family12h: not a cpu type of plugin amd64 (it has: x86-64/family10" },
	/* forced to a type that is not ours: silent */
	{ "AuthenticAMD", 0x10, 0, true, "i386/skylake", NULL, 0, NULL },
	{ "AuthenticAMD", 0x10, 0, true, "timer", NULL, 0, NULL },
};

static void test_detect_table(void **state)
{
	struct mock_host *mh = mc_up();
	size_t i;

	(void)state;
	assert_int_equal(mh->nr_models, 5);
	for (i = 0; i < sizeof(dets) / sizeof(dets[0]); i++) {
		const struct det *d = &dets[i];
		struct op_cpuinfo ci = mc_ci(d->vendor, d->family, d->model, d->usable, d->forced);
		char why[512];
		int score;
		struct mock_reg_model *best = mc_pick(mh, &ci, &score, why, sizeof(why));

		if (d->winner) {
			if (!best || strcmp(best->desc.name, d->winner))
				fail_msg("case %zu (%s %#x/%#x forced %s): winner %s, expected %s", i,
					 d->vendor, d->family, d->model, d->forced ? d->forced : "-",
					 best ? best->desc.name : "none", d->winner);
			assert_int_equal(score, d->score);
		} else if (best) {
			fail_msg("case %zu: %s claims, expected none", i, best->desc.name);
		}
		if (d->why && !strstr(why, d->why))
			fail_msg("case %zu: reason \"%s\" lacks \"%s\"", i, why, d->why);
		if (!d->why && !d->winner && why[0])
			fail_msg("case %zu: unexpected reason \"%s\"", i, why);
	}
	mock_host_free(mh);
}

/* the no-PMU reason names this machine's real perf_event_open failure */
static void test_no_pmu_reason_is_real(void **state)
{
	char why[256];

	(void)state;
	mp_no_pmu_reason(why, sizeof(why));
	assert_non_null(strstr(why, "no hardware PMU"));
	if (!access("/sys/bus/event_source/devices/cpu", F_OK))
		skip(); /* a machine with a PMU: the wording differs */
	assert_non_null(strstr(why, "perf_event_open(cycles) fails with E"));
	assert_non_null(strstr(why, "no \"cpu\" event source"));
}

/* LIBPFM_FORCE_PMU makes the table present: the specific model wins (fresh process each) */
static void test_detect_forced_pmu(void **state)
{
	static const struct {
		const char *force, *vendor;
		unsigned family, model;
		const char *winner;
	} c[] = {
		{ "amd64_fam10h_barcelona", "AuthenticAMD", 0x10, 2, "amd64-family10" },
		{ "amd64_fam15h_interlagos", "AuthenticAMD", 0x15, 1, "amd64-family15h" },
		{ "amd64_fam17h_zen1", "AuthenticAMD", 0x17, 1, "amd64-family17h" },
		{ "amd64_fam17h_zen2", "AuthenticAMD", 0x17, 0x31, "amd64-family17h" },
		{ "amd64_fam19h_zen3", "AuthenticAMD", 0x19, 0x21, "amd64-family19h" },
		{ "amd64_fam19h_zen4", "AuthenticAMD", 0x19, 0x61, "amd64-family19h" },
		/* the table of another family does not make family 10h present */
		{ "amd64_fam19h_zen3", "AuthenticAMD", 0x10, 2, "amd64-generic" },
		/* a misspelt name activates nothing (notes/deps.md: fails silently) */
		{ "amd_fam17h_zen1", "AuthenticAMD", 0x17, 1, "amd64-generic" },
	};
	char out[128];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		mc_forced_pick(c[i].force, c[i].vendor, c[i].family, c[i].model, out, sizeof(out));
		if (strcmp(out, c[i].winner))
			fail_msg("LIBPFM_FORCE_PMU=%s family %#x: winner \"%s\", expected %s",
				 c[i].force, c[i].family, out, c[i].winner);
	}
	/* the pitfall is named: the forced table is the only one, a misspelt name gives none */
	mc_forced_pick("amd_fam17h_zen1", "AuthenticAMD", 0x17, 1, out, sizeof(out));
	assert_non_null(strstr(mc_child_why, "LIBPFM_FORCE_PMU=amd_fam17h_zen1 is set"));
	mc_forced_pick("amd64_fam19h_zen3", "AuthenticAMD", 0x10, 2, out, sizeof(out));
	assert_non_null(strstr(mc_child_why, "amd64_fam10h_barcelona"));
	assert_non_null(strstr(mc_child_why, "activates that table only"));
}

/* ------------------------------------------------------------------ */
/* placement and errors                                                 */
/* ------------------------------------------------------------------ */

static void test_too_many_events(void **state)
{
	struct mock_host *mh = mc_up();
	struct mock_reg_model *m = mc_model(mh, "x86-64/family10");
	static const char *const evs[] = { "CPU_CLK_UNHALTED", "RETIRED_INSTRUCTIONS",
					   "DATA_CACHE_ACCESSES", "DATA_CACHE_MISSES",
					   "RETIRED_UOPS" };
	struct op_perf_attr a;
	char err[512];
	size_t i;

	(void)state;
	mc_force(m);
	for (i = 0; i < 4; i++)
		assert_int_equal(mc_encode(m, evs[i], 100000, 0, 1, 1, &a, err, sizeof(err)), 0);
	assert_int_equal(mc_encode(m, evs[4], 100000, 0, 1, 1, &a, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "Too many events specified: CPU only has 4 counters.");
	/* a new detect starts a new set */
	mc_force(m);
	assert_int_equal(mc_encode(m, evs[4], 100000, 0, 1, 1, &a, err, sizeof(err)), 0);
	/* family 15h has 6 */
	m = mc_model(mh, "x86-64/family15h");
	mc_force(m);
	for (i = 0; i < 5; i++)
		assert_int_equal(mc_encode(m, i < 3 ? "RETIRED_INSTRUCTIONS" : "CPU_CLK_UNHALTED",
					   100000 + i, 0, 1, 1, &a, err, sizeof(err)), 0);
	assert_int_equal(mc_encode(m, "RETIRED_UOPS", 100000, 0, 1, 1, &a, err, sizeof(err)), 0);
	assert_int_equal(mc_encode(m, "RETIRED_UOPS", 200000, 0, 1, 1, &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "CPU only has 6 counters"));
	mock_host_free(mh);
}

/* counters: masks are honoured: a fixture catalogue with restricted events */
static void test_counter_masks(void **state)
{
	const char *dir = "test_model_amd64.events";
	char path[512], err[512];
	struct mock_host *mh;
	struct mock_reg_model *m;
	struct op_perf_attr a;
	FILE *f;

	(void)state;
	snprintf(path, sizeof(path), "mkdir -p %s/x86-64/family10", dir);
	assert_int_equal(system(path), 0);
	snprintf(path, sizeof(path), "%s/x86-64/family10/unit_masks", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("name:zero type:mandatory default:0x00\n\t0x00 No unit mask\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/x86-64/family10/events", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("event:0x76 counters:0,1,2,3 um:zero minimum:500 name:ANY_CTR : any\n"
	      "event:0xc0 counters:0 um:zero minimum:500 name:ONLY0 : counter 0 only\n"
	      "event:0xc1 counters:0 um:zero minimum:500 name:ALSO0 : counter 0 only too\n"
	      "event:0xc2 counters:1 um:zero minimum:500 name:ONLY1 : counter 1 only\n", f);
	fclose(f);
	setenv("OPROFILE_EVENTS_DIR", dir, 1);
	mh = mc_up();
	m = mc_model(mh, "x86-64/family10");
	mc_force(m);
	/* ANY_CTR first must not block ONLY0 (placement, not first fit) */
	assert_int_equal(mc_encode(m, "ANY_CTR", 1000, 0, 1, 1, &a, err, sizeof(err)), 0);
	assert_int_equal(mc_encode(m, "ONLY0", 1000, 0, 1, 1, &a, err, sizeof(err)), 0);
	assert_int_equal(a.config, 0xc0);
	assert_int_equal(mc_encode(m, "ONLY1", 1000, 0, 1, 1, &a, err, sizeof(err)), 0);
	/* two events that both need counter 0 */
	assert_int_equal(mc_encode(m, "ALSO0", 1000, 0, 1, 1, &a, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "ALSO0"));
	assert_non_null(strstr(err, "4 counters on x86-64/family10"));
	mock_host_free(mh);
	setenv("OPROFILE_EVENTS_DIR", getenv("MC_EVENTS_DIR"), 1);
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
}

struct bad {
	const char *type, *name;
	uint64_t count;
	uint32_t um;
	bool kernel, user;
	const char *msg;
};

static const struct bad bads[] = {
	{ "x86-64/family10", "NO_SUCH_EVENT", 100000, 0, 1, 1, "not an event of cpu type x86-64/family10" },
	{ "x86-64/family10", "IBS_OP_ALL", 100000, 1, 1, 1, "ext:ibs_op event" },
	{ "x86-64/family10", "IBS_FETCH_ALL", 100000, 0, 1, 1, "--ext-feature=ibs" },
	{ "x86-64/family10", "CPU_CLK_UNHALTED", 10, 0, 1, 1, "below the minimum 3000" },
	{ "x86-64/family10", "DISPATCHED_FPU", 100000, 0x40, 1, 1, "not allowed" },
	{ "x86-64/family19h", "TAGGED_IBS_OPS", 100000, 0x80, 1, 1, "not allowed" },
	{ "x86-64/generic", "CPU_CLK_UNHALTED", 100000, 0, 0, 0, "count nothing" },
	{ "x86-64/generic", "CPU_CLK_UNHALTED", 0, 0, 1, 1, "below the minimum" },
	{ "x86-64/generic", "INST_RETIRED", 100000, 0, 1, 1, "see ophelp --cpu-type=x86-64/generic" },
};

static void test_encode_errors(void **state)
{
	struct mock_host *mh = mc_up();
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		struct mock_reg_model *m = mc_model(mh, bads[i].type);
		struct op_perf_attr a;
		char err[512];

		mc_force(m);
		assert_int_equal(mc_encode(m, bads[i].name, bads[i].count, bads[i].um, bads[i].kernel,
					   bads[i].user, &a, err, sizeof(err)), -EINVAL);
		if (!strstr(err, bads[i].msg))
			fail_msg("%s %s: message \"%s\" lacks \"%s\"", bads[i].type, bads[i].name, err,
				 bads[i].msg);
	}
	mock_host_print_stats(mh);
	{
		uint64_t v = 0;

		assert_true(mock_host_stat(mh, "events_refused", &v));
		assert_int_equal(v, sizeof(bads) / sizeof(bads[0]));
	}
	mock_host_free(mh);
}

static void test_raw_config_layout(void **state)
{
	static const struct mp_type amd = { .amd = true }, intel = { .amd = false };
	uint64_t c;
	char err[256];

	(void)state;
	assert_int_equal(mp_raw_config(&amd, 0x1cf, 0x02, 0, &c, err, sizeof(err)), 0);
	assert_int_equal(c, 0x1000002cfull);
	assert_int_equal(mp_raw_config(&amd, 0xfff, 0xff, OP_UM_EXTRA_EDGE | OP_UM_EXTRA_INV |
					   (0x7fu << OP_UM_EXTRA_CMASK_SHIFT), &c, err, sizeof(err)), 0);
	assert_int_equal(c, 0xf7f84ffffull);
	/* EXTRA_NONE (bit 22) names a value: it must not become the enable bit */
	assert_int_equal(mp_raw_config(&amd, 0x76, 0, OP_UM_EXTRA_NONE, &c, err, sizeof(err)), 0);
	assert_int_equal(c, 0x76);
	assert_int_equal(mp_raw_config(&amd, 0x1000, 0, 0, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "0x1000"));
	assert_int_equal(mp_raw_config(&amd, 0x76, 0, OP_UM_EXTRA_ANY, &c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "AMD"));
	assert_int_equal(mp_raw_config(&intel, 0x1cf, 0, 0, &c, err, sizeof(err)), -EINVAL);
	assert_int_equal(mp_raw_config(&intel, 0x3c, 0x01, OP_UM_EXTRA_ANY, &c, err, sizeof(err)), 0);
	assert_int_equal(c, 0x20013c);
}

static void test_args_and_registration(void **state)
{
	struct mock_host *mh = mock_host_new();
	size_t i;

	(void)state;
	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, "bogus"), -EINVAL);
	assert_true(mock_host_log_contains(mh, OP_LOG_ERR, "takes none"));
	assert_int_equal(mh->nr_models, 0); /* rolled back */
	mock_host_free(mh);
	mh = mc_up();
	for (i = 0; i < mh->nr_models; i++) {
		uint32_t id = 0;
		const char *t = mh->models[i].desc.cpu_type(mh->models[i].priv, &id);

		assert_non_null(mh->models[i].desc.default_event);
		assert_non_null(strstr(mh->models[i].desc.default_event, "CPU_CLK_UNHALTED:"));
		if (!strcmp(t, "x86-64/family10"))
			assert_int_equal(id, 35);
		else if (!strcmp(t, "x86-64/family15h"))
			assert_int_equal(id, 53);
		else if (!strcmp(t, "x86-64/generic"))
			assert_int_equal(id, 69);
		else if (!strcmp(t, "x86-64/family17h"))
			assert_int_equal(id, 89);
		else if (!strcmp(t, "x86-64/family19h"))
			assert_int_equal(id, 90);
		else
			fail_msg("unexpected cpu type %s", t);
	}
	/* the default event of every model encodes */
	for (i = 0; i < mh->nr_models; i++) {
		struct op_perf_attr a;
		char err[512];

		mc_force(&mh->models[i]);
		assert_int_equal(mc_encode(&mh->models[i], "CPU_CLK_UNHALTED", 100000, 0, 1, 1, &a, err,
					   sizeof(err)), 0);
		assert_int_equal(a.config, 0x76);
	}
	mock_host_free(mh);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xcheck_family10),
		cmocka_unit_test(test_xcheck_family15h),
		cmocka_unit_test(test_xcheck_family17h),
		cmocka_unit_test(test_xcheck_family19h),
		cmocka_unit_test(test_xcheck_generic),
		cmocka_unit_test(test_literal_encodings),
		cmocka_unit_test(test_privilege_vs_libpfm),
		cmocka_unit_test(test_detect_table),
		cmocka_unit_test(test_no_pmu_reason_is_real),
		cmocka_unit_test(test_detect_forced_pmu),
		cmocka_unit_test(test_too_many_events),
		cmocka_unit_test(test_counter_masks),
		cmocka_unit_test(test_encode_errors),
		cmocka_unit_test(test_raw_config_layout),
		cmocka_unit_test(test_args_and_registration),
	};
	bool child;
	int rc = mc_main_setup(argc, argv, &child);

	if (child)
		return rc;
	return cmocka_run_group_tests_name("model_amd64", tests, NULL, NULL);
}
