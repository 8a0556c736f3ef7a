/*
 * test_model_intel.c - the intel model plugin (plugins/intel/intel.c +
 * plugins/common/model_pfm.c) through the mock host: every catalogue event
 * encoded like libpfm4 encodes it (skylake cmask/inv/any unit masks too),
 * detection, counter placement and errors.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include "model_check.h"

/* i386/arch_perfmon is hand-written: the architectural events as libpfm4's skl names them */
static const struct mc_alias arch_aliases[] = {
	{ "CPU_CLK_UNHALTED", "CPU_CLK_THREAD_UNHALTED:THREAD_P" },
	{ "UNHALTED_REFERENCE_CYCLES", "CPU_CLK_THREAD_UNHALTED:REF_XCLK" },
	{ "INST_RETIRED", "INST_RETIRED:ANY_P" },
	{ "LLC_MISSES", "LONGEST_LAT_CACHE:MISS" },
	{ "LLC_REFS", "LONGEST_LAT_CACHE:REFERENCE" },
	{ "BR_INST_RETIRED", "BR_INST_RETIRED:ALL_BRANCHES" },
	{ "BR_MISS_PRED_RETIRED", "BR_MISP_RETIRED:ALL_BRANCHES" },
	{ NULL, NULL },
};

static void test_xcheck_skylake(void **state)
{
	struct mock_host *mh = mc_up();
	struct mc_totals t;

	(void)state;
	mc_xcheck_catalogue(mh, "i386/skylake", "skl", NULL, &t);
	print_message("i386/skylake vs skl: %u events, %u unit-mask values, %u with "
		      "edge/inv/any/cmask\n", t.events, t.with_um, t.with_mods);
	assert_true(t.events >= 10);
	assert_true(t.with_um >= 100);
	assert_true(t.with_mods >= 10);
	mock_host_free(mh);
}

static void test_xcheck_arch_perfmon(void **state)
{
	struct mock_host *mh = mc_up();
	struct mc_totals t;

	(void)state;
	mc_xcheck_catalogue(mh, "i386/arch_perfmon", "skl", arch_aliases, &t);
	assert_int_equal(t.events, 7);
	mock_host_free(mh);
}

struct lit {
	const char *type, *name;
	uint32_t um;
	bool kernel, user;
	uint64_t config;
};

static const struct lit lits[] = {
	{ "i386/arch_perfmon", "CPU_CLK_UNHALTED", 0, 1, 1, 0x3c },
	{ "i386/arch_perfmon", "LLC_MISSES", 0x41, 1, 1, 0x412e },
	{ "i386/skylake", "INST_RETIRED", 0, 1, 1, 0xc0 },
	{ "i386/skylake", "CPU_CLK_THREAD_UNHALTED", 0x01, 1, 1, 0x13c },
	/* first entry of value 0x01 is ANY (no modifiers); STALL_CYCLES shares the value */
	{ "i386/skylake", "UOPS_ISSUED", 0x01, 1, 0, 0x10e },
	{ "i386/skylake", "CYCLE_ACTIVITY", 0x01, 0, 1, 0x10001a3 },
	/* the perf ref-cycles pseudo encoding (event 0x00, umask 0x03) */
	{ "i386/skylake", "UNHALTED_REFERENCE_CYCLES", 0x03, 1, 1, 0x300 },
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
		if (mc_encode(m, lits[i].name, 100000, lits[i].um, lits[i].kernel, lits[i].user, &a,
			      err, sizeof(err)))
			fail_msg("%s %s: %s", lits[i].type, lits[i].name, err);
		if (a.config != lits[i].config)
			fail_msg("%s %s um %#x: config %#llx, expected %#llx", lits[i].type,
				 lits[i].name, lits[i].um, (unsigned long long)a.config,
				 (unsigned long long)lits[i].config);
		assert_int_equal(a.type, MP_PERF_TYPE_RAW);
		assert_int_equal(a.exclude_kernel, !lits[i].kernel);
		assert_int_equal(a.exclude_user, !lits[i].user);
	}
	mock_host_free(mh);
}

struct det {
	const char *vendor;
	uint32_t family, model;
	bool usable;
	const char *forced;
	const char *winner;
	const char *why;
};

static const struct det dets[] = {
	/* this machine: GenuineIntel 6/0x8f (Sapphire Rapids), no PMU */
	{ "GenuineIntel", 6, 0x8f, false, NULL, NULL, "no hardware PMU" },
	{ "GenuineIntel", 6, 0x8f, true, NULL, "intel-arch_perfmon", NULL },
	/* Skylake without libpfm4 seeing skl: arch_perfmon, with the reason */
	{ "GenuineIntel", 6, 0x5e, true, NULL, "intel-arch_perfmon", "libpfm4 does not detect its PMU table skl" },
	{ "GenuineIntel", 0xf, 4, true, NULL, NULL, NULL },
	{ "AuthenticAMD", 0x19, 1, true, NULL, NULL, NULL },
	{ "AuthenticAMD", 0x19, 1, false, "i386/skylake", "intel-skylake", NULL },
	{ "", 0, 0, false, "i386/arch_perfmon", "intel-arch_perfmon", NULL },
	{ "GenuineIntel", 6, 0x5e, true, "x86-64/family10", NULL, NULL },
};

static void test_detect_table(void **state)
{
	struct mock_host *mh = mc_up();
	size_t i;

	(void)state;
	assert_int_equal(mh->nr_models, 2);
	for (i = 0; i < sizeof(dets) / sizeof(dets[0]); i++) {
		struct op_cpuinfo ci = mc_ci(dets[i].vendor, dets[i].family, dets[i].model,
					     dets[i].usable, dets[i].forced);
		char why[512];
		int score;
		struct mock_reg_model *best = mc_pick(mh, &ci, &score, why, sizeof(why));

		if (dets[i].winner ? !best || strcmp(best->desc.name, dets[i].winner) : best != NULL)
			fail_msg("case %zu: winner %s, expected %s", i, best ? best->desc.name : "none",
				 dets[i].winner ? dets[i].winner : "none");
		if (dets[i].why && !strstr(why, dets[i].why))
			fail_msg("case %zu: reason \"%s\" lacks \"%s\"", i, why, dets[i].why);
		if (!dets[i].why && !dets[i].winner && why[0])
			fail_msg("case %zu: unexpected reason \"%s\"", i, why);
	}
	mock_host_free(mh);
}

static void test_detect_forced_pmu(void **state)
{
	char out[128];

	(void)state;
	mc_forced_pick("skl", "GenuineIntel", 6, 0x5e, out, sizeof(out));
	assert_string_equal(out, "intel-skylake");
	mc_forced_pick("skl", "GenuineIntel", 6, 0x8f, out, sizeof(out));
	assert_string_equal(out, "intel-arch_perfmon");
	mc_forced_pick("skl", "AuthenticAMD", 0x19, 1, out, sizeof(out));
	assert_string_equal(out, "");
}

static void test_too_many_and_errors(void **state)
{
	struct mock_host *mh = mc_up();
	struct mock_reg_model *m = mc_model(mh, "i386/arch_perfmon");
	struct op_perf_attr a;
	char err[512];
	int i;

	(void)state;
	mc_force(m);
	for (i = 0; i < 4; i++)
		assert_int_equal(mc_encode(m, "INST_RETIRED", 100000 + (uint64_t)i, 0, 1, 1, &a, err,
					   sizeof(err)), 0);
	assert_int_equal(mc_encode(m, "CPU_CLK_UNHALTED", 100000, 0, 1, 1, &a, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "Too many events specified: CPU only has 4 counters.");
	mc_force(m);
	assert_int_equal(mc_encode(m, "LLC_MISSES", 100000, 0x4f, 1, 1, &a, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not allowed"));
	assert_int_equal(mc_encode(m, "CYCLE_ACTIVITY", 100000, 1, 1, 1, &a, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not an event of cpu type i386/arch_perfmon"));
	mock_host_free(mh);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_xcheck_skylake),
		cmocka_unit_test(test_xcheck_arch_perfmon),
		cmocka_unit_test(test_literal_encodings),
		cmocka_unit_test(test_detect_table),
		cmocka_unit_test(test_detect_forced_pmu),
		cmocka_unit_test(test_too_many_and_errors),
	};
	bool child;
	int rc = mc_main_setup(argc, argv, &child);

	if (child)
		return rc;
	return cmocka_run_group_tests_name("model_intel", tests, NULL, NULL);
}
