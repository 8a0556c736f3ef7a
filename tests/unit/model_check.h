/*
 * model_check.h - helpers shared by test_model_amd64.c and test_model_intel.c
 * (included once by each): drive a model plugin through the mock host and
 * compare its encodings with libpfm4's encoding of the same event.
 * libpfm4 runs with LIBPFM_ENCODE_INACTIVE=1 (set before its first init) so
 * every PMU table encodes by its qualified name; forced-PMU checks run in a
 * re-executed child (pfm_terminate + pfm_initialize is not a clean slate).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_TESTS_MODEL_CHECK_H
#define OP_TESTS_MODEL_CHECK_H

#include <linux/perf_event.h> /* before libpfm4's header */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfmon/pfmlib_perf_event.h>

#include "mock_host.h"
#include "model_pfm.h"
#include "op_events.h"

extern const struct op_ext_descriptor oprofile_ext_v1;

/* catalogue event name -> libpfm4 "EVENT[:UMASK]" when they differ */
struct mc_alias {
	const char *event;
	const char *pfm; /* replaces EVENT and the unit mask */
};

static struct mock_host *mc_up(void)
{
	struct mock_host *mh = mock_host_new();

	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, ""), 0);
	return mh;
}

static struct mock_reg_model *mc_model(struct mock_host *mh, const char *cpu_type)
{
	size_t i;

	for (i = 0; i < mh->nr_models; i++) {
		uint32_t id = 0;

		if (!strcmp(mh->models[i].desc.cpu_type(mh->models[i].priv, &id), cpu_type))
			return &mh->models[i];
	}
	fail_msg("no model registered for cpu type %s", cpu_type);
	return NULL;
}

static struct op_cpuinfo mc_ci(const char *vendor, uint32_t family, uint32_t model, bool usable,
			       const char *forced)
{
	struct op_cpuinfo ci;

	memset(&ci, 0, sizeof(ci));
	ci.size = sizeof(ci);
	snprintf(ci.vendor, sizeof(ci.vendor), "%s", vendor);
	ci.family = family;
	ci.model = model;
	ci.pmu_usable = usable;
	ci.forced_cpu_type = forced;
	return ci;
}

/* the model with the highest detect() score (NULL if none claims); @why of the first decline */
static struct mock_reg_model *mc_pick(struct mock_host *mh, const struct op_cpuinfo *ci,
				      int *score, char *why, size_t why_len)
{
	struct mock_reg_model *best = NULL;
	size_t i;

	*score = 0;
	if (why_len)
		why[0] = '\0';
	for (i = 0; i < mh->nr_models; i++) {
		char w[512] = "";
		int s = mh->models[i].desc.detect(mh->models[i].priv, ci, w, sizeof(w));

		if (s > *score) {
			*score = s;
			best = &mh->models[i];
		} else if (s <= 0 && w[0] && why_len && !why[0]) {
			snprintf(why, why_len, "%s", w);
		}
	}
	return best;
}

/* claim @m by forcing its cpu type: also starts a new event set */
static void mc_force(struct mock_reg_model *m)
{
	uint32_t id;
	const char *type = m->desc.cpu_type(m->priv, &id);
	struct op_cpuinfo ci = mc_ci("", 0, 0, false, type);
	char why[256];

	assert_int_equal(m->desc.detect(m->priv, &ci, why, sizeof(why)), MP_SCORE_FORCED);
}

static int mc_encode(struct mock_reg_model *m, const char *name, uint64_t count, uint32_t um,
		     bool kernel, bool user, struct op_perf_attr *attr, char *err, size_t len)
{
	struct op_event_req ev = {
		.size = sizeof(ev), .name = name, .um = um, .count = count,
		.kernel = kernel, .user = user,
	};

	err[0] = '\0';
	memset(attr, 0, sizeof(*attr));
	return m->desc.encode(m->priv, &ev, attr, err, len);
}

/* libpfm4's encoding of @str (user+kernel unless told); 0 or its error code */
static int mc_pfm(const char *str, int plm, struct perf_event_attr *attr)
{
	pfm_perf_encode_arg_t arg;
	int ret;

	assert_int_equal(pfm_initialize(), PFM_SUCCESS);
	memset(attr, 0, sizeof(*attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = attr;
	arg.size = sizeof(arg);
	ret = pfm_get_os_event_encoding(str, plm, PFM_OS_PERF_EVENT_EXT, &arg);
	/* libpfm4 leaves attr.size = 0 (notes/deps.md §3) */
	attr->size = sizeof(*attr);
	return ret;
}

/* our attr equals libpfm4's on everything the model sets */
static void mc_same(const char *what, const struct op_perf_attr *ours,
		    const struct perf_event_attr *pfm)
{
	if (ours->type != pfm->type || ours->config != pfm->config || ours->config1 != pfm->config1 ||
	    ours->exclude_kernel != (bool)pfm->exclude_kernel ||
	    ours->exclude_user != (bool)pfm->exclude_user)
		fail_msg("%s: ours type %u config %#llx config1 %#llx ek %d eu %d; libpfm4 type %u "
			 "config %#llx config1 %#llx ek %d eu %d", what, ours->type,
			 (unsigned long long)ours->config, (unsigned long long)ours->config1,
			 ours->exclude_kernel, ours->exclude_user, pfm->type,
			 (unsigned long long)pfm->config, (unsigned long long)pfm->config1,
			 (int)pfm->exclude_kernel, (int)pfm->exclude_user);
}

struct mc_totals {
	unsigned events, with_um, extended, with_mods;
};

/* one case: the model's encoding of (@e, @v) equals libpfm4's of @str */
static void mc_case(struct mock_reg_model *m, const char *cpu_type, const struct op_event *e,
		    uint32_t v, const char *str)
{
	struct op_perf_attr ours;
	struct perf_event_attr theirs;
	uint64_t count = e->minimum ? e->minimum : 100000;
	char err[512], what[700];
	int rc;

	snprintf(what, sizeof(what), "%s %s um 0x%x vs %s", cpu_type, e->name, v, str);
	mc_force(m);
	rc = mc_encode(m, e->name, count, v, true, true, &ours, err, sizeof(err));
	if (rc)
		fail_msg("%s: our encode failed: %s", what, err);
	rc = mc_pfm(str, PFM_PLM0 | PFM_PLM3, &theirs);
	if (rc != PFM_SUCCESS)
		fail_msg("%s: libpfm4 cannot encode it: %s", what, pfm_strerror(rc));
	mc_same(what, &ours, &theirs);
	assert_int_equal(ours.sample_period, count);
}

/*
 * Every counter event of @cpu_type's catalogue, with each of its unit-mask
 * values (the first entry of a value: the one a numeric unit mask selects),
 * encoded by the model and by libpfm4 as "<pmu>::<EVENT>[:<UMASK>]" must
 * agree. An aliased event is checked with its default unit mask only.
 */
static void mc_xcheck_catalogue(struct mock_host *mh, const char *cpu_type, const char *pmu,
				const struct mc_alias *aliases, struct mc_totals *tot)
{
	struct mock_reg_model *m = mc_model(mh, cpu_type);
	struct op_events cat;
	char err[512], str[512];
	size_t i;

	memset(tot, 0, sizeof(*tot));
	assert_int_equal(op_events_load(&cat, NULL, cpu_type, 0, 0, err, sizeof(err)), 0);
	for (i = 0; i < cat.nr_events; i++) {
		const struct op_event *e = &cat.events[i];
		const struct op_unit_mask *um = e->um;
		const char *alias = NULL;
		unsigned k, j;

		if (e->ext)
			continue;
		for (k = 0; aliases && aliases[k].event; k++)
			if (!strcmp(aliases[k].event, e->name))
				alias = aliases[k].pfm;
		tot->events++;
		tot->extended += e->code > 0xff;
		if (alias) {
			snprintf(str, sizeof(str), "%s::%s", pmu, alias);
			mc_case(m, cpu_type, e, um->default_value, str);
			continue;
		}
		for (k = 0; k < um->nr; k++) {
			const struct op_um_entry *ue = &um->entries[k];
			bool dup = false;

			for (j = 0; j < k; j++)
				dup |= um->entries[j].value == ue->value;
			if (dup)
				continue;
			if (ue->name && strcmp(ue->name, "DEFAULT"))
				snprintf(str, sizeof(str), "%s::%s:%s", pmu, e->name, ue->name);
			else if (um->type == OP_UM_MANDATORY)
				snprintf(str, sizeof(str), "%s::%s", pmu, e->name);
			else
				fail_msg("%s %s: unit mask 0x%x has no name to give libpfm4 "
					 "(add an alias)", cpu_type, e->name, ue->value);
			mc_case(m, cpu_type, e, ue->value, str);
			tot->with_um += um->type != OP_UM_MANDATORY;
			tot->with_mods += (ue->extra & ~OP_UM_EXTRA_NONE) != 0;
		}
	}
	op_events_free(&cat);
}

/*
 * Run "<self> --pfm-child <LIBPFM_FORCE_PMU> <vendor> <family> <model>" and
 * return the model name it prints as the winner ("" for none).
 */
static const char *mc_self;

/* LIBPFM_FORCE_PMU of the tests' own process: the name of no libpfm4 table */
#define MC_NO_PMU "no-such-pmu"

static char mc_child_why[512]; /* the child's first decline reason */

static void mc_forced_pick(const char *force, const char *vendor, unsigned family,
			   unsigned model, char *out, size_t out_len)
{
	char cmd[1024];
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' --pfm-child '%s' '%s' %u %u", mc_self, force, vendor,
		 family, model);
	p = popen(cmd, "r");
	assert_non_null(p);
	out[0] = '\0';
	mc_child_why[0] = '\0';
	if (!fgets(out, (int)out_len, p))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	if (!fgets(mc_child_why, sizeof(mc_child_why), p))
		mc_child_why[0] = '\0';
	assert_int_equal(pclose(p), 0);
}

/* the child side: a fresh process whose first pfm_initialize sees LIBPFM_FORCE_PMU */
static int mc_pfm_child(int argc, char **argv)
{
	struct mock_host *mh;
	struct mock_reg_model *best;
	struct op_cpuinfo ci;
	char why[512];
	int score;

	if (argc != 6)
		return 2;
	unsetenv("LIBPFM_ENCODE_INACTIVE");
	setenv("LIBPFM_FORCE_PMU", argv[2], 1);
	mh = mock_host_new();
	if (mock_host_init(mh, &oprofile_ext_v1, ""))
		return 3;
	ci = mc_ci(argv[3], (uint32_t)strtoul(argv[4], NULL, 0), (uint32_t)strtoul(argv[5], NULL, 0),
		   true, NULL);
	best = mc_pick(mh, &ci, &score, why, sizeof(why));
	printf("%s\n%s\n", best ? best->desc.name : "", why);
	mock_host_free(mh);
	return 0;
}

/* call first in main(): libpfm4 test mode, and the forced-PMU child */
static int mc_main_setup(int argc, char **argv, bool *is_child)
{
	static char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	self[n > 0 ? n : 0] = '\0';
	mc_self = n > 0 ? self : argv[0];
	*is_child = argc > 1 && !strcmp(argv[1], "--pfm-child");
	if (*is_child)
		return mc_pfm_child(argc, argv);
	setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
	/*
	 * no PMU table active, whatever CPU this runs on (libpfm4 activates a
	 * table of the host's CPU from CPUID, even without a usable PMU): a
	 * forced name that is no table keeps none
	 */
	setenv("LIBPFM_FORCE_PMU", MC_NO_PMU, 1);
	/* the source tree's catalogues unless the harness says otherwise */
	if (!getenv("OPROFILE_EVENTS_DIR") || !*getenv("OPROFILE_EVENTS_DIR"))
		setenv("OPROFILE_EVENTS_DIR", TEST_SRCDIR "/events", 1);
	setenv("MC_EVENTS_DIR", getenv("OPROFILE_EVENTS_DIR"), 1);
	return 0;
}

#endif /* OP_TESTS_MODEL_CHECK_H */
