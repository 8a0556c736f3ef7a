/*
 * test_catalogues.c - every events/ catalogue shipped in the source tree
 * parses with lib/op_events (sanity checks included), has a cpu type the
 * core knows, fits the x86 PERFEVTSEL layout the models encode, carries the
 * models' default event, and family10 carries the IBS ext: events.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "op_cpu.h"
#include "op_events.h"

#define ROOT TEST_SRCDIR "/events"

static const char *const required[] = {
	"x86-64/generic", "x86-64/family10", "x86-64/family15h", "x86-64/family17h",
	"x86-64/family19h", "i386/arch_perfmon", "i386/skylake",
};

/* <arch>/<model> directories holding an events file (events/extras/ is generator input) */
static size_t find_catalogues(char found[][64], size_t max)
{
	DIR *top = opendir(ROOT);
	struct dirent *a;
	size_t n = 0;

	assert_non_null(top);
	while ((a = readdir(top))) {
		char path[512];
		DIR *sub;
		struct dirent *m;

		if (a->d_name[0] == '.' || !strcmp(a->d_name, "extras"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", ROOT, a->d_name);
		sub = opendir(path);
		if (!sub)
			continue;
		while ((m = readdir(sub))) {
			char ev[1024];
			struct stat st;

			if (m->d_name[0] == '.')
				continue;
			snprintf(ev, sizeof(ev), "%s/%s/events", path, m->d_name);
			if (stat(ev, &st) || n == max)
				continue;
			snprintf(found[n++], 64, "%.30s/%.30s", a->d_name, m->d_name);
		}
		closedir(sub);
	}
	closedir(top);
	return n;
}

static void test_every_catalogue_parses(void **state)
{
	char found[64][64];
	size_t n = find_catalogues(found, 64), i, k;

	(void)state;
	for (k = 0; k < sizeof(required) / sizeof(required[0]); k++) {
		bool have = false;

		for (i = 0; i < n; i++)
			have |= !strcmp(found[i], required[k]);
		if (!have)
			fail_msg("catalogue %s is not shipped under %s", required[k], ROOT);
	}
	for (i = 0; i < n; i++) {
		struct op_events c;
		char err[512] = "";
		int type = op_cpu_from_name(found[i]);
		unsigned nr = type >= 0 ? op_cpu_nr_counters(type) : 0;
		bool amd = !strncmp(found[i], "x86-64/", 7);
		size_t e, j;
		int rc;

		if (type < 0)
			fail_msg("%s: no cpu type value in lib/op_cpu.c (the core would not load it)",
				 found[i]);
		assert_true(op_cpu_has_events(type));
		rc = op_events_load(&c, ROOT, found[i], nr, 0, err, sizeof(err));
		if (rc)
			fail_msg("%s does not parse: %s", found[i], err);
		print_message("%-20s type %3d, %2u counters: %zu events, %zu unit masks\n", found[i],
			      type, nr, c.nr_events, c.nr_masks);
		assert_true(c.nr_events >= 7);
		assert_non_null(op_events_find(&c, "CPU_CLK_UNHALTED"));
		for (e = 0; e < c.nr_events; e++) {
			const struct op_event *ev = &c.events[e];

			/* names are unique: a lookup must not depend on order */
			for (j = 0; j < e; j++)
				if (!strcmp(c.events[j].name, ev->name))
					fail_msg("%s: event %s listed twice (%s:%u)", found[i],
						 ev->name, ev->file, ev->line);
			assert_non_null(ev->um);
			if (ev->ext)
				continue;
			if (ev->code > (amd ? 0xfffu : 0xffu))
				fail_msg("%s: %s code 0x%x does not fit the event select", found[i],
					 ev->name, ev->code);
			assert_true(ev->counter_mask != 0);
			if (nr && (ev->counter_mask & ((1u << nr) - 1)) == 0)
				fail_msg("%s: %s allows none of the %u counters", found[i], ev->name,
					 nr);
			for (j = 0; j < ev->um->nr; j++)
				assert_true(ev->um->entries[j].value <= 0xff);
		}
		op_events_free(&c);
	}
}

/* family10 carries the IBS derived events of OProfile 0.9.9 as ext: events */
static void test_family10_ibs(void **state)
{
	struct op_events c;
	char err[512];
	size_t e, fetch = 0, op = 0;
	const struct op_event *all;

	(void)state;
	assert_int_equal(op_events_load(&c, ROOT, "x86-64/family10", 4, 0, err, sizeof(err)), 0);
	for (e = 0; e < c.nr_events; e++) {
		const struct op_event *ev = &c.events[e];

		if (!ev->ext)
			continue;
		if (!strcmp(ev->ext, "ibs_fetch")) {
			fetch++;
			assert_true(ev->code >= 0xf000 && ev->code < 0xf100);
		} else if (!strcmp(ev->ext, "ibs_op")) {
			op++;
			assert_true(ev->code >= 0xf100 && ev->code < 0xf300);
		} else {
			fail_msg("unexpected ext:%s on %s", ev->ext, ev->name);
		}
		assert_int_equal(ev->minimum, 50000);
	}
	assert_int_equal(fetch, 13);
	assert_true(op >= 40);
	all = op_events_find(&c, "IBS_OP_ALL");
	assert_non_null(all);
	assert_int_equal(all->code, 0xf100);
	assert_string_equal(all->um->name, "ibs_op");
	assert_int_equal(all->um->default_value, 0x01);
	assert_non_null(op_events_find(&c, "IBS_FETCH_ALL"));
	/* a spec with the op unit mask parses; counters: events are not IBS */
	{
		struct op_event_spec s;

		assert_int_equal(op_parse_event_spec(&c, "IBS_OP_ALL:100000:0x2", &s, err,
						     sizeof(err)), 0);
		assert_int_equal(s.um, 2);
	}
	assert_null(op_events_find(&c, "CPU_CLK_UNHALTED")->ext);
	op_events_free(&c);
}

/* the generated catalogues say where they came from and carry libpfm4's modifiers */
static void test_generated_headers(void **state)
{
	static const char *const gen[][2] = {
		{ "x86-64/family10", "amd64_fam10h_barcelona" },
		{ "x86-64/family15h", "amd64_fam15h_interlagos" },
		{ "x86-64/family17h", "amd64_fam17h_zen1" },
		{ "x86-64/family19h", "amd64_fam19h_zen3" },
		{ "i386/skylake", "skl" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(gen) / sizeof(gen[0]); i++) {
		char path[512], line[512], want[128];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s/events", ROOT, gen[i][0]);
		f = fopen(path, "r");
		assert_non_null(f);
		assert_non_null(fgets(line, sizeof(line), f));
		fclose(f);
		snprintf(want, sizeof(want), "from libpfm4 PMU %s ", gen[i][1]);
		if (!strstr(line, "generated by tools/gen-events.sh") || !strstr(line, want))
			fail_msg("%s: first line \"%s\" does not name the generator and PMU %s", path,
				 line, gen[i][1]);
	}
	/* skylake's cmask unit masks survived generation */
	{
		struct op_events c;
		char err[512];
		const struct op_event *ev;
		const struct op_um_entry *u;

		assert_int_equal(op_events_load(&c, ROOT, "i386/skylake", 0, 0, err, sizeof(err)), 0);
		ev = op_events_find(&c, "CYCLE_ACTIVITY");
		assert_non_null(ev);
		u = op_um_find_name(ev->um, "CYCLES_L2_MISS");
		assert_non_null(u);
		assert_int_equal(u->extra >> OP_UM_EXTRA_CMASK_SHIFT, 1);
		op_events_free(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_catalogue_parses),
		cmocka_unit_test(test_family10_ibs),
		cmocka_unit_test(test_generated_headers),
	};

	return cmocka_run_group_tests_name("catalogues", tests, NULL, NULL);
}
