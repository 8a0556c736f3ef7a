/*
 * test_events.c - events/ catalogue parser: the real catalogues, fixture
 * catalogues (IBS ext:, include:, extra:, mask types, um:a,b), every load
 * error (file:line: what), event-spec validation, counter placement, cpu
 * type table.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_cpu.h"
#include "op_events.h"

#ifndef TEST_SRCDIR
#define TEST_SRCDIR "."
#endif

static char fixtures[2048], real_root[2048];

static void init_paths(void)
{
	const char *src = getenv("OP_SRCDIR");

	if (!src || !*src)
		src = TEST_SRCDIR;
	snprintf(fixtures, sizeof(fixtures), "%s/tests/data/events", src);
	snprintf(real_root, sizeof(real_root), "%s/events", src);
}

#define assert_err_has(err, s)                                                        \
	do {                                                                          \
		if (!strstr((err), (s)))                                              \
			fail_msg("error \"%s\" lacks \"%s\"", (err), (s));           \
	} while (0)

/* ---- real catalogues ------------------------------------------------ */

static void test_real_generic(void **state)
{
	struct op_events c;
	char err[512];
	const struct op_event *e;
	(void)state;

	assert_int_equal(op_events_load(&c, real_root, "x86-64/generic", 4, 0, err, sizeof(err)), 0);
	assert_int_equal(c.nr_events, 16);
	e = op_events_find(&c, "CPU_CLK_UNHALTED");
	assert_non_null(e);
	assert_int_equal(e->code, 0x76);
	assert_int_equal(e->minimum, 50000);
	assert_int_equal(e->counter_mask, 0xf);
	assert_null(e->ext);
	assert_string_equal(e->um->name, "zero");
	assert_int_equal(e->um->type, OP_UM_MANDATORY);
	assert_string_equal(e->desc, "CPU Clocks not Halted");
	e = op_events_find(&c, "RETIRED_MMX_FP_INSTRUCTIONS");
	assert_non_null(e);
	assert_int_equal(e->code, 0xcb);
	assert_int_equal(e->um->type, OP_UM_BITMASK);
	assert_int_equal(e->um->default_value, 7);
	assert_int_equal(e->um->nr, 3);
	assert_string_equal(e->um->entries[2].name, "sse");
	assert_int_equal(e->um->entries[2].extra, OP_UM_EXTRA_NONE);
	assert_null(op_events_find(&c, "NOPE"));
	op_events_free(&c);
	assert_int_equal(c.nr_events, 0);
}

/* every catalogue shipped in events/ loads and passes the sanity checks */
static void test_real_all(void **state)
{
	static const char *const models[] = {
		"x86-64/generic", "x86-64/family10", "x86-64/family15h", "x86-64/family17h",
		"x86-64/family19h", "i386/skylake", "i386/arch_perfmon",
	};
	struct op_events c;
	char err[512];
	(void)state;

	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++) {
		char p[PATH_MAX];

		snprintf(p, sizeof(p), "%s/%s/events", real_root, models[i]);
		if (access(p, R_OK))
			continue; /* not shipped (yet) */
		if (op_events_load(&c, real_root, models[i], 0, 0, err, sizeof(err)))
			fail_msg("%s: %s", models[i], err);
		assert_true(c.nr_events > 0);
		assert_non_null(op_events_find(&c, models[i][0] == 'i' ? "CPU_CLK_UNHALTED" : "RETIRED_INSTRUCTIONS"));
		op_events_free(&c);
	}
}

static void test_root(void **state)
{
	char *old = getenv("OPROFILE_EVENTS_DIR") ? strdup(getenv("OPROFILE_EVENTS_DIR")) : NULL;
	(void)state;

	setenv("OPROFILE_EVENTS_DIR", "/some/where", 1);
	assert_string_equal(op_events_root(), "/some/where");
	setenv("OPROFILE_EVENTS_DIR", "", 1);
	assert_string_equal(op_events_root(), OP_DATADIR "/events");
	unsetenv("OPROFILE_EVENTS_DIR");
	assert_string_equal(op_events_root(), OP_DATADIR "/events");
	/* root NULL means op_events_root() */
	setenv("OPROFILE_EVENTS_DIR", real_root, 1);
	{
		struct op_events c;
		char err[256];

		assert_int_equal(op_events_load(&c, NULL, "x86-64/generic", 4, 0, err, sizeof(err)), 0);
		assert_string_equal(c.root, real_root);
		op_events_free(&c);
	}
	if (old)
		setenv("OPROFILE_EVENTS_DIR", old, 1);
	else
		unsetenv("OPROFILE_EVENTS_DIR");
	free(old);
}

static void test_missing_model(void **state)
{
	struct op_events c;
	char err[512];
	(void)state;

	assert_int_equal(op_events_load(&c, fixtures, "nope/none", 4, 0, err, sizeof(err)), -ENOENT);
	assert_err_has(err, "/nope/none/unit_masks: cannot open: No such file or directory (no unit_masks catalogue for nope/none under ");
	assert_err_has(err, "set OPROFILE_EVENTS_DIR?");
	assert_int_equal(op_events_load(&c, fixtures, "../etc", 4, 0, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "cpu type \"../etc\": expected an arch/model name such as x86-64/generic");
	assert_int_equal(op_events_load(&c, fixtures, "/abs", 4, 0, err, sizeof(err)), -EINVAL);
	assert_int_equal(op_events_load(&c, fixtures, "", 4, 0, err, sizeof(err)), -EINVAL);
}

/* ---- fixture catalogues --------------------------------------------- */

static void test_fixture_ibs(void **state)
{
	struct op_events c;
	struct op_event_spec s[8];
	size_t n;
	char err[512];
	const struct op_event *e;
	(void)state;

	assert_int_equal(op_events_load(&c, fixtures, "test/fam10ibs", 4, 0, err, sizeof(err)), 0);
	assert_int_equal(c.nr_events, 7);
	e = op_events_find(&c, "IBS_OP_ALL");
	assert_non_null(e);
	assert_string_equal(e->ext, "ibs_op");
	assert_int_equal(e->code, 0xf100);
	assert_int_equal(e->minimum, 50000);
	assert_string_equal(e->um->name, "ibs_op");
	assert_int_equal(e->um->type, OP_UM_BITMASK);
	assert_int_equal(e->um->default_value, 1);
	assert_int_equal(e->um->nr, 3);
	assert_int_equal(e->um->entries[0].value, 0);
	assert_int_equal(e->um->entries[2].value, 2);
	assert_string_equal(e->um->entries[2].desc, "Enable IBS op memory access log");
	assert_string_equal(op_events_find(&c, "IBS_FETCH_ALL")->ext, "ibs_fetch");

	/* op spec: um 2 is an entry, 3 a combination, 4 not allowed */
	assert_int_equal(op_parse_event_spec(&c, "IBS_OP_ALL:100000:0x2", s, err, sizeof(err)), 0);
	assert_int_equal(s[0].um, 2);
	assert_int_equal(op_parse_event_spec(&c, "IBS_OP_ALL:100000:3", s, err, sizeof(err)), 0);
	assert_int_equal(op_parse_event_spec(&c, "IBS_OP_ALL:100000:4", s, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "event spec \"IBS_OP_ALL:100000:4\": unit mask 0x4 is not allowed for IBS_OP_ALL; "
				 "allowed: any combination of 0x0, 0x1, 0x2");

	/* ext: events take no counter; a counter-0-only event listed after a
	 * flexible one still gets counter 0 (augmenting path) */
	assert_int_equal(op_parse_event_list(&c, "CPU_CLK_UNHALTED:3000,RETIRED_INSTRUCTIONS:3000,"
					     "IBS_OP_ALL:50000,DATA_CACHE_MISSES:500,IBS_FETCH_ALL:50000,"
					     "NB_ONLY_COUNTER0:500",
					     s, 8, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 6);
	assert_int_equal(s[2].counter, -1);
	assert_int_equal(s[4].counter, -1);
	assert_int_equal(s[5].counter, 0);
	{
		unsigned used = 0;

		for (size_t i = 0; i < n; i++)
			if (s[i].counter >= 0) {
				assert_false(used & (1u << s[i].counter));
				used |= 1u << s[i].counter;
			}
		assert_int_equal(used, 0xf);
	}
	/* 5 counter events on 4 counters, IBS does not count */
	assert_int_equal(op_parse_event_list(&c, "CPU_CLK_UNHALTED:3000,RETIRED_INSTRUCTIONS:3000,"
					     "DATA_CACHE_MISSES:500,DATA_CACHE_MISSES:500:2,NB_ONLY_COUNTER0:500,"
					     "IBS_OP_ALL:50000",
					     s, 8, &n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "Too many events specified: CPU only has 4 counters.");
	op_events_free(&c);
}

static void test_fixture_include(void **state)
{
	struct op_events c;
	struct op_event_spec s;
	char err[512];
	const struct op_event *e;
	(void)state;

	assert_int_equal(op_events_load(&c, fixtures, "test/includer", 4, 0, err, sizeof(err)), 0);
	assert_int_equal(c.nr_events, 4);
	e = op_events_find(&c, "INST_RETIRED");
	assert_non_null(e);
	assert_true(e->counters_cpuid);
	assert_int_equal(e->counter_mask, UINT32_MAX);
	assert_non_null(strstr(e->file, "test/base/events"));
	assert_int_equal(e->line, 3);
	assert_int_equal(op_events_find(&c, "LLC_MISSES")->filter, 1);
	e = op_events_find(&c, "UOPS_ISSUED");
	assert_non_null(e);
	/* exclusive default given by name */
	assert_int_equal(e->um->type, OP_UM_EXCLUSIVE);
	assert_int_equal(e->um->default_value, 1);
	/* an empty "extra:" only names the value */
	assert_int_equal(e->um->entries[0].extra, OP_UM_EXTRA_NONE);
	assert_string_equal(e->um->entries[0].name, "any");
	assert_int_equal(e->um->entries[1].extra, (1u << OP_UM_EXTRA_CMASK_SHIFT) | OP_UM_EXTRA_INV);
	assert_int_equal(op_parse_event_spec(&c, "UOPS_ISSUED:2000:stall_cycles", &s, err, sizeof(err)), 0);
	assert_int_equal(s.um, 1);
	assert_int_equal(s.um_extra, (1u << OP_UM_EXTRA_CMASK_SHIFT) | OP_UM_EXTRA_INV);
	/* numeric um matching two entries: the first one's extra */
	assert_int_equal(op_parse_event_spec(&c, "UOPS_ISSUED:2000", &s, err, sizeof(err)), 0);
	assert_int_equal(s.um_extra, OP_UM_EXTRA_NONE);
	op_events_free(&c);

	/* filter bit 1 drops LLC_MISSES (its mask still counts as used) */
	assert_int_equal(op_events_load(&c, fixtures, "test/includer", 4, 1u << 1, err, sizeof(err)), 0);
	assert_int_equal(c.nr_events, 3);
	assert_null(op_events_find(&c, "LLC_MISSES"));
	op_events_free(&c);

	/* no counters: tag: any counter */
	assert_int_equal(op_events_load(&c, fixtures, "test/nounits", 0, 0, err, sizeof(err)), 0);
	assert_int_equal(op_events_find(&c, "BUS_ACCESS_LD")->counter_mask, UINT32_MAX);
	op_events_free(&c);
}

static void test_fixture_modifiers(void **state)
{
	struct op_events c;
	struct op_event_spec s[8];
	size_t n;
	char err[512];
	const struct op_event *e;
	(void)state;

	assert_int_equal(op_events_load(&c, fixtures, "test/modifiers", 4, 0, err, sizeof(err)), 0);
	e = op_events_find(&c, "BR_INST_RETIRED");
	assert_non_null(e);
	assert_int_equal(e->um->nr, 6);
	assert_int_equal(e->um->default_value, 0);
	assert_int_equal(e->um->entries[0].extra, OP_UM_EXTRA_NONE);
	assert_int_equal(e->um->entries[1].extra, OP_UM_EXTRA_EDGE);
	assert_int_equal(e->um->entries[2].extra, OP_UM_EXTRA_INV);
	assert_int_equal(e->um->entries[3].extra, OP_UM_EXTRA_ANY);
	assert_int_equal(e->um->entries[4].extra, OP_UM_EXTRA_PEBS);
	assert_int_equal(e->um->entries[5].extra,
			 (3u << OP_UM_EXTRA_CMASK_SHIFT) | OP_UM_EXTRA_EDGE | OP_UM_EXTRA_INV);
	assert_string_equal(e->um->entries[5].name, "far_branch");
	assert_string_equal(e->um->entries[5].desc, "Far branches");
	assert_int_equal(e->counter_mask, 0x3);
	assert_non_null(op_um_find_name(e->um, "near_call"));
	assert_null(op_um_find_name(e->um, "Near"));

	/* um:mem_lo,mem_hi merges two bitmasks */
	e = op_events_find(&c, "MEM_UOPS");
	assert_string_equal(e->um->name, "mem_lo,mem_hi");
	assert_true(e->um->merged);
	assert_int_equal(e->um->type, OP_UM_BITMASK);
	assert_int_equal(e->um->nr, 4);
	assert_int_equal(e->um->default_value, 0x13);
	assert_int_equal(op_parse_event_spec(&c, "MEM_UOPS:100:0x21", s, err, sizeof(err)), 0);
	assert_int_equal(op_parse_event_spec(&c, "MEM_UOPS:100:split", s, err, sizeof(err)), 0);
	assert_int_equal(s[0].um, 0x20);
	assert_int_equal(op_parse_event_spec(&c, "MEM_UOPS:100:0x40", s, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "event spec \"MEM_UOPS:100:0x40\": unit mask 0x40 is not allowed for MEM_UOPS; "
				 "allowed: any combination of 0x1 (loads), 0x2 (stores), 0x10 (locked), 0x20 (split)");
	e = op_events_find(&c, "MERGED_EXCL");
	assert_int_equal(e->um->type, OP_UM_EXCLUSIVE);
	assert_int_equal(e->um->default_value, 1);
	assert_int_equal(op_parse_event_spec(&c, "MERGED_EXCL:100:3", s, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "event spec \"MERGED_EXCL:100:3\": unit mask 0x3 is not allowed for MERGED_EXCL; "
				 "allowed: 0x1, 0x2");
	/* exclusive: named values */
	assert_int_equal(op_parse_event_spec(&c, "BR_INST_RETIRED:400:far_branch", s, err, sizeof(err)), 0);
	assert_int_equal(s[0].um, 0x10);
	assert_int_equal(op_parse_event_spec(&c, "BR_INST_RETIRED:400:0x3", s, err, sizeof(err)), -EINVAL);
	assert_err_has(err, "allowed: 0x0 (all_branches), 0x1 (conditional), 0x2 (near_call), 0x4 (near_return), "
			    "0x8 (not_taken), 0x10 (far_branch)");

	/* placement: two events that only fit counter 3 */
	assert_int_equal(op_parse_event_list(&c, "MERGED_EXCL:100:1,MERGED_EXCL:100:2", s, 8, &n, err,
					     sizeof(err)), -EINVAL);
	assert_string_equal(err, "cannot place event MERGED_EXCL: it can only use counter(s) 3, already needed by "
				 "MERGED_EXCL; drop one of these events");
	/* placement needing a chain of moves: EXCL must have 3, MEM then 2, BR 0/1, CYCLES the rest */
	assert_int_equal(op_parse_event_list(&c, "CYCLES:1000,MEM_UOPS:100,BR_INST_RETIRED:400,MERGED_EXCL:100",
					     s, 8, &n, err, sizeof(err)), 0);
	assert_int_equal(s[3].counter, 3);
	assert_int_equal(s[1].counter, 2);
	assert_true(s[2].counter == 0 || s[2].counter == 1);
	assert_true(s[0].counter == 0 || s[0].counter == 1);
	assert_int_not_equal(s[0].counter, s[2].counter);
	/* the allocator on its own, fewer counters than an event needs */
	s[0].ev = op_events_find(&c, "MERGED_EXCL");
	assert_int_equal(op_events_allocate(s, 1, 2, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "event MERGED_EXCL can only use counters 3, but the CPU has 2 counters");
	op_events_free(&c);
}

struct broken_fixture {
	const char *model;
	int rc;
	const char *msg;
};

static const struct broken_fixture broken[] = {
	{ "broken/unused_mask", -EINVAL, "/broken/unused_mask/unit_masks:3: unit mask spare: not used by any event" },
	{ "broken/include_missing", -EINVAL,
	  "/broken/include_missing/events:2: include:test/nonexistent: cannot open " },
	{ "broken/code_too_big", -EINVAL,
	  "/broken/code_too_big/events:2: event HUGE: event code (0x100000000) is too big to fit in 32 bits" },
	{ "broken/bad_name", -EINVAL,
	  "/broken/bad_name/events:1: bad event name \"CPU.CLK\": '.', '/', spaces and control bytes are not allowed" },
	{ "test/cycle_a", -EINVAL,
	  "/test/cycle_b/events:2: include:test/cycle_a: include cycle: test/cycle_a -> test/cycle_b -> test/cycle_a" },
};

static void test_broken_fixtures(void **state)
{
	struct op_events c;
	char err[512];
	(void)state;

	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		int rc = op_events_load(&c, fixtures, broken[i].model, 4, 0, err, sizeof(err));

		if (rc != broken[i].rc)
			fail_msg("%s: rc %d, want %d (%s)", broken[i].model, rc, broken[i].rc, err);
		assert_err_has(err, broken[i].msg);
		assert_int_equal(c.nr_events, 0); /* freed on error */
	}
	assert_int_equal(op_events_load(&c, fixtures, "broken/include_missing", 4, 0, err, sizeof(err)), -EINVAL);
	assert_err_has(err, "/test/nonexistent/events: No such file or directory");
}

/* ---- every load error, table-driven (catalogues written to a temp dir) ---- */

struct load_case {
	const char *events;
	const char *masks;
	const char *msg; /* expected suffix after the root: "/t/m/<file>:<line>: what" */
};

#define ZERO "name:zero type:mandatory default:0x00\n\t0x00 No unit mask\n"
#define EV "event:0x76 counters:0 um:zero minimum:1 name:A : a\n"

static const struct load_case load_cases[] = {
	/* events tags */
	{ EV "event:0x77 event:0x78 um:zero minimum:1 name:B\n", ZERO, "/t/m/events:2: duplicate event: tag" },
	{ EV "event:0x77 um:zero um:zero minimum:1 name:B\n", ZERO, "/t/m/events:2: duplicate um: tag" },
	{ EV "event:0x77 um:zero minimum:1 name:B name:C\n", ZERO, "/t/m/events:2: duplicate name: tag" },
	{ EV "event:0x77 um:zero minimum:1 name:B colour:red\n", ZERO,
	  "/t/m/events:2: unknown tag \"colour\" (expected event:, counters:, ext:, um:, minimum:, name:, filter: or include:)" },
	{ "event:0x77 um:zero minimum:1 name:B bare\n", ZERO, "/t/m/events:1: expected tag:value, found \"bare\"" },
	{ "event: um:zero minimum:1 name:B\n", ZERO, "/t/m/events:1: empty value for event:" },
	{ "event:0xZZ um:zero minimum:1 name:B\n", ZERO,
	  "/t/m/events:1: event B: bad number \"0xZZ\" for event: (expected hex)" },
	{ "event:0x123456789 um:zero minimum:1 name:B\n", ZERO,
	  "/t/m/events:1: event B: event code (0x123456789) is too big to fit in 32 bits" },
	{ "event:0x1 um:zero minimum:1k name:B\n", ZERO,
	  "/t/m/events:1: event B: bad number \"1k\" for minimum: (expected decimal)" },
	{ "event:0x1 um:zero minimum:-1 name:B\n", ZERO, "/t/m/events:1: event B: bad number \"-1\" for minimum:" },
	{ "event:0x1 um:zero minimum:1 name:B filter:32\n", ZERO,
	  "/t/m/events:1: event B: bad number \"32\" for filter: (expected 0..31)" },
	{ "event:0x1 counters:0,32 um:zero minimum:1 name:B\n", ZERO,
	  "/t/m/events:1: event B: bad counter \"32\" in counters: (expected 0..31 or cpuid)" },
	{ "event:0x1 counters:0,,1 um:zero minimum:1 name:B\n", ZERO,
	  "/t/m/events:1: event B: bad counters:0,,1 (expected a list like 0,1,2,3 or cpuid)" },
	{ "event:0x1 counters:0 ext:ibs_op um:zero minimum:1 name:B\n", ZERO,
	  "/t/m/events:1: event B: counters: and ext: exclude each other" },
	{ "event:0x1 ext:ibs.op um:zero minimum:1 name:B\n", ZERO, "/t/m/events:1: event B: bad ext: feature name \"ibs.op\"" },
	{ "event:0x1 um:zero minimum:1 name:A.B\n", ZERO, "/t/m/events:1: bad event name \"A.B\"" },
	{ "event:0x1 um:zero minimum:1 name:A/B\n", ZERO, "/t/m/events:1: bad event name \"A/B\"" },
	{ "event:0x1 um:zero minimum:1 name:"
	  "A123456789012345678901234567890123456789012345678901234567890123\n",
	  ZERO, "is longer than 63 bytes" },
	{ "event:0x1 um:nope minimum:1 name:B\n", ZERO, "/t/m/events:1: unknown unit mask \"nope\" in um:nope" },
	{ "event:0x1 um:zero,nope minimum:1 name:B\n", ZERO, "/t/m/events:1: unknown unit mask \"nope\" in um:zero,nope" },
	{ "event:0x1 um:zero minimum:1\n", ZERO, "/t/m/events:1: missing name: tag" },
	{ "um:zero minimum:1 name:B\n", ZERO, "/t/m/events:1: missing event: tag for event B" },
	{ "event:0x1 minimum:1 name:B\n", ZERO, "/t/m/events:1: missing um: tag for event B" },
	{ "event:0x1 um:zero name:B\n", ZERO, "/t/m/events:1: missing minimum: tag for event B" },
	{ EV "# comment\n\nevent:0x2 um:zero minimum:1 name:A : again\n", ZERO,
	  "/t/m/events:4: duplicate event name A (first defined at " },
	{ EV "include:t/m extra:1\n", ZERO, "/t/m/events:2: include: must be alone on its line" },
	{ EV "include:../x\n", ZERO,
	  "/t/m/events:2: include:../x: expected an arch/model directory name (no '.', '..' or leading '/')" },
	{ EV "include:t/m\n", ZERO, "/t/m/events:2: include:t/m: include cycle: t/m -> t/m" },
	{ EV "include:t/none\n", ZERO, "/t/m/events:2: include:t/none: cannot open " },
	{ "event:0x1 um:zero minimum:1 name:B\0x\n", ZERO, "" }, /* NUL ends the C string: fine */
	/* unit_masks */
	{ EV, ZERO "name:zero type:bitmask default:0x1\n\t0x1 x\n",
	  "/t/m/unit_masks:3: duplicate unit mask zero (first defined at " },
	{ EV, ZERO "name:b type:bitmask type:bitmask default:0x1\n", "/t/m/unit_masks:3: duplicate type: tag" },
	{ EV, ZERO "name:b kind:bitmask default:0x1\n",
	  "/t/m/unit_masks:3: unknown tag \"kind\" (expected name:, type:, default: or include:)" },
	{ EV, ZERO "name:b type:sometimes default:0x1\n",
	  "/t/m/unit_masks:3: unit mask b: unknown type \"sometimes\" (expected mandatory, bitmask or exclusive)" },
	{ EV, ZERO "type:bitmask default:0x1\n", "/t/m/unit_masks:3: missing name: tag on a unit-mask header line" },
	{ EV, ZERO "name:b default:0x1\n", "/t/m/unit_masks:3: unit mask b: missing type: tag" },
	{ EV, ZERO "name:b type:bitmask\n", "/t/m/unit_masks:3: unit mask b: missing default: tag" },
	{ EV, ZERO "name:b type:bitmask default:0xq\n",
	  "/t/m/unit_masks:3: unit mask b: bad number \"0xq\" for default:" },
	{ EV, ZERO "name:a,b type:bitmask default:0x1\n", "/t/m/unit_masks:3: bad unit mask name \"a,b\"" },
	{ EV, ZERO "name:b type:bitmask default:0x1 : words\n",
	  "/t/m/unit_masks:3: unexpected description \": words\" on a unit-mask header line" },
	{ EV, "\t0x00 No unit mask\n" ZERO, "/t/m/unit_masks:1: unit-mask entry before any name: header line" },
	{ EV, ZERO "name:b type:bitmask default:0x1\n\tzz x\n",
	  "/t/m/unit_masks:4: unit mask b: bad number \"zz\" for an entry value" },
	{ EV, ZERO "name:b type:bitmask default:0x1\n\t0x1 extra:edge,bogus x\n",
	  "/t/m/unit_masks:4: unknown extra: modifier \"bogus\" (expected edge, inv, any, pebs or cmask=N)" },
	{ EV, ZERO "name:b type:bitmask default:0x1\n\t0x1 extra:cmask=100 x\n",
	  "/t/m/unit_masks:4: extra: cmask=100: expected a hex value up to 0xff" },
	{ EV, ZERO "name:b type:bitmask default:0x1\n\t0x1 extra:\n",
	  "/t/m/unit_masks:4: unit mask b: extra: must be followed by a value name" },
	{ EV "event:0x2 um:m minimum:1 name:B\n", ZERO "name:m type:mandatory default:0x1\n\t0x1 a\n\t0x2 b\n",
	  "/t/m/unit_masks:3: unit mask m: type mandatory must have exactly 1 entry, found 2" },
	{ EV "event:0x2 um:m minimum:1 name:B\n", ZERO "name:m type:mandatory default:0x1\n\t0x2 a\n",
	  "/t/m/unit_masks:3: unit mask m: default 0x1 differs from its only entry 0x2" },
	{ EV "event:0x2 um:m minimum:1 name:B\n", ZERO "name:m type:bitmask default:0x5\n\t0x1 a\n\t0x2 b\n",
	  "/t/m/unit_masks:3: unit mask m: bitmask default 0x5 has bits 0x4 that no entry sets" },
	{ EV "event:0x2 um:m minimum:1 name:B\n", ZERO "name:m type:exclusive default:0x3\n\t0x1 a\n\t0x2 b\n",
	  "/t/m/unit_masks:3: unit mask m: exclusive default 0x3 equals none of its entries" },
	{ EV "event:0x2 um:m minimum:1 name:B\n", ZERO "name:m type:exclusive default:third\n\t0x1 extra: first a\n",
	  "/t/m/unit_masks:3: unit mask m: default:third names no entry of this mask" },
	{ EV "event:0x2 um:m minimum:1 name:B\n", ZERO "name:m type:exclusive default:0x1\n",
	  "/t/m/unit_masks:3: unit mask m: has no entries" },
	{ EV, ZERO "name:spare type:bitmask default:0x1\n\t0x1 a\n",
	  "/t/m/unit_masks:3: unit mask spare: not used by any event" },
	{ EV "event:0x2 um:zero,b minimum:1 name:B\n", ZERO "name:b type:bitmask default:0x1\n\t0x1 a\n",
	  "/t/m/events:2: um:zero,b: only masks of one type, bitmask or exclusive, can be merged (zero is mandatory)" },
	{ EV "event:0x2 um:b,c minimum:1 name:B\n",
	  ZERO "name:b type:bitmask default:0x1\n\t0x1 a\nname:c type:exclusive default:0x1\n\t0x1 a\n",
	  "/t/m/events:2: um:b,c: only masks of one type, bitmask or exclusive, can be merged (c is exclusive)" },
	{ EV, ZERO "include:t/m\n", "/t/m/unit_masks:3: include:t/m: include cycle: t/m -> t/m" },
	{ EV, ZERO "include:t/m x:y\n", "/t/m/unit_masks:3: include: must be alone on its line" },
	{ EV, "garbage\n", "/t/m/unit_masks:1: expected tag:value, found \"garbage\"" },
};

static char tmproot[64];

static void write_file(const char *dir, const char *name, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup_tmp(void **state)
{
	char d[128];
	(void)state;

	strcpy(tmproot, "test_events.tmp.XXXXXX");
	if (!mkdtemp(tmproot))
		return -1;
	snprintf(d, sizeof(d), "%s/t", tmproot);
	mkdir(d, 0755);
	snprintf(d, sizeof(d), "%s/t/m", tmproot);
	return mkdir(d, 0755);
}

static int teardown_tmp(void **state)
{
	char p[PATH_MAX];
	(void)state;

	snprintf(p, sizeof(p), "%s/t/m/events", tmproot);
	unlink(p);
	snprintf(p, sizeof(p), "%s/t/m/unit_masks", tmproot);
	unlink(p);
	snprintf(p, sizeof(p), "%s/t/m", tmproot);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/t", tmproot);
	rmdir(p);
	rmdir(tmproot);
	return 0;
}

static void test_load_errors(void **state)
{
	char dir[128], err[512];
	struct op_events c;
	(void)state;

	snprintf(dir, sizeof(dir), "%s/t/m", tmproot);
	/* the base case loads */
	write_file(dir, "events", EV);
	write_file(dir, "unit_masks", ZERO);
	assert_int_equal(op_events_load(&c, tmproot, "t/m", 4, 0, err, sizeof(err)), 0);
	op_events_free(&c);

	for (size_t i = 0; i < sizeof(load_cases) / sizeof(load_cases[0]); i++) {
		const struct load_case *lc = &load_cases[i];
		char want[sizeof(tmproot) + 600];
		int rc;

		write_file(dir, "events", lc->events);
		write_file(dir, "unit_masks", lc->masks);
		rc = op_events_load(&c, tmproot, "t/m", 4, 0, err, sizeof(err));
		if (!*lc->msg) {
			if (rc)
				fail_msg("case %zu: unexpected error %s", i, err);
			op_events_free(&c);
			continue;
		}
		if (rc != -EINVAL)
			fail_msg("case %zu: rc %d, want -EINVAL (err \"%s\")", i, rc, err);
		if (lc->msg[0] == '/') {
			snprintf(want, sizeof(want), "%s%s", tmproot, lc->msg);
			if (strncmp(err, want, strlen(want)))
				fail_msg("case %zu: error\n  \"%s\"\nwant prefix\n  \"%s\"", i, err, want);
		} else {
			assert_err_has(err, lc->msg);
		}
	}
	/* a NUL byte inside a line */
	{
		char p[PATH_MAX];
		FILE *f;

		snprintf(p, sizeof(p), "%s/events", dir);
		f = fopen(p, "w");
		assert_non_null(f);
		fwrite(EV "x\0y\n", 1, sizeof(EV "x\0y\n") - 1, f);
		fclose(f);
		write_file(dir, "unit_masks", ZERO);
		assert_int_equal(op_events_load(&c, tmproot, "t/m", 4, 0, err, sizeof(err)), -EINVAL);
		assert_err_has(err, "/t/m/events:2: NUL byte in line");
	}
	/* 65 entries in one mask */
	{
		char big[65 * 16 + 200];
		size_t o = (size_t)sprintf(big, ZERO "name:b type:bitmask default:0x1\n");

		for (int k = 0; k < 65; k++)
			o += (size_t)sprintf(big + o, "\t0x%x e%d\n", 1u << (k % 32), k);
		write_file(dir, "events", EV "event:0x2 um:b minimum:1 name:B\n");
		write_file(dir, "unit_masks", big);
		assert_int_equal(op_events_load(&c, tmproot, "t/m", 4, 0, err, sizeof(err)), -EINVAL);
		assert_err_has(err, "/t/m/unit_masks:68: unit mask b: more than 64 entries");
		/* exactly 64 is fine */
		big[o - strlen("\t0x1 e64\n")] = '\0';
		write_file(dir, "unit_masks", big);
		assert_int_equal(op_events_load(&c, tmproot, "t/m", 4, 0, err, sizeof(err)), 0);
		assert_int_equal(op_events_find(&c, "B")->um->nr, 64);
		op_events_free(&c);
	}
	/* CRLF line ends are tolerated */
	write_file(dir, "events", "event:0x76 counters:0 um:zero minimum:1 name:A : a\r\n");
	write_file(dir, "unit_masks", "name:zero type:mandatory default:0x00\r\n\t0x00 No unit mask\r\n");
	assert_int_equal(op_events_load(&c, tmproot, "t/m", 4, 0, err, sizeof(err)), 0);
	assert_string_equal(op_events_find(&c, "A")->desc, "a");
	op_events_free(&c);
}

/* ---- event specs ----------------------------------------------------- */

struct spec_case {
	const char *spec;
	const char *msg; /* exact message */
};

static const struct spec_case spec_errors[] = {
	{ "CPU_CLK_UNHALTE:100000",
	  "event spec \"CPU_CLK_UNHALTE:100000\": no event CPU_CLK_UNHALTE in the x86-64/generic catalogue; "
	  "did you mean CPU_CLK_UNHALTED?" },
	{ "cpu_clk_unhalted:100000",
	  "event spec \"cpu_clk_unhalted:100000\": no event cpu_clk_unhalted in the x86-64/generic catalogue; "
	  "did you mean CPU_CLK_UNHALTED?" },
	{ "RETIRED_NEAR_RETURN:1000",
	  "event spec \"RETIRED_NEAR_RETURN:1000\": no event RETIRED_NEAR_RETURN in the x86-64/generic catalogue; "
	  "did you mean RETIRED_NEAR_RETURNS or RETIRED_NEAR_RETURNS_MISPREDICTED?" },
	{ "INTERRUPTS:10",
	  "event spec \"INTERRUPTS:10\": no event INTERRUPTS in the x86-64/generic catalogue; did you mean "
	  "INTERRUPTS_MASKED_CYCLES, INTERRUPTS_MASKED_CYCLES_WITH_INTERRUPT_PENDING or INTERRUPTS_TAKEN?" },
	{ "XYZZY:1",
	  "event spec \"XYZZY:1\": no event XYZZY in the x86-64/generic catalogue (ophelp lists the events)" },
	{ ":100", "event spec \":100\": empty event name (expected NAME:count[:unitmask[:kernel[:user]]])" },
	{ "CPU_CLK_UNHALTED",
	  "event spec \"CPU_CLK_UNHALTED\": missing count (expected CPU_CLK_UNHALTED:count, count at least 50000)" },
	{ "CPU_CLK_UNHALTED:",
	  "event spec \"CPU_CLK_UNHALTED:\": missing count (expected CPU_CLK_UNHALTED:count, count at least 50000)" },
	{ "CPU_CLK_UNHALTED:abc", "event spec \"CPU_CLK_UNHALTED:abc\": count \"abc\" is not a number (or a frequency, e.g. 99Hz)" },
	{ "CPU_CLK_UNHALTED:-5", "event spec \"CPU_CLK_UNHALTED:-5\": count \"-5\" is not a number (or a frequency, e.g. 99Hz)" },
	{ "CPU_CLK_UNHALTED:100",
	  "event spec \"CPU_CLK_UNHALTED:100\": count 100 is below the minimum 50000 for CPU_CLK_UNHALTED" },
	{ "CPU_CLK_UNHALTED:0x100000000",
	  "event spec \"CPU_CLK_UNHALTED:0x100000000\": count 4294967296 is too large (at most 4294967295)" },
	{ "CPU_CLK_UNHALTED:100000:1",
	  "event spec \"CPU_CLK_UNHALTED:100000:1\": unit mask 0x1 is not allowed for CPU_CLK_UNHALTED; allowed: 0x0" },
	{ "CPU_CLK_UNHALTED:100000:0xzz",
	  "event spec \"CPU_CLK_UNHALTED:100000:0xzz\": unit mask \"0xzz\" is not a number; allowed: 0x0" },
	{ "RETIRED_MMX_FP_INSTRUCTIONS:500:0x8",
	  "event spec \"RETIRED_MMX_FP_INSTRUCTIONS:500:0x8\": unit mask 0x8 is not allowed for "
	  "RETIRED_MMX_FP_INSTRUCTIONS; allowed: any combination of 0x1 (x87), 0x2 (mmx_3dnow), 0x4 (sse)" },
	{ "RETIRED_MMX_FP_INSTRUCTIONS:500:avx",
	  "event spec \"RETIRED_MMX_FP_INSTRUCTIONS:500:avx\": unit mask name \"avx\" is not allowed for "
	  "RETIRED_MMX_FP_INSTRUCTIONS; allowed: any combination of 0x1 (x87), 0x2 (mmx_3dnow), 0x4 (sse)" },
	{ "CPU_CLK_UNHALTED:100000:0:2", "event spec \"CPU_CLK_UNHALTED:100000:0:2\": kernel flag \"2\" must be 0 or 1" },
	{ "CPU_CLK_UNHALTED:100000:0:1:x", "event spec \"CPU_CLK_UNHALTED:100000:0:1:x\": user flag \"x\" must be 0 or 1" },
	{ "CPU_CLK_UNHALTED:100000:0:1:", "event spec \"CPU_CLK_UNHALTED:100000:0:1:\": user flag \"\" must be 0 or 1" },
	{ "CPU_CLK_UNHALTED:100000:0:0:0",
	  "event spec \"CPU_CLK_UNHALTED:100000:0:0:0\": kernel and user are both 0, the event would count nothing" },
	{ "CPU_CLK_UNHALTED:100000:0:1:1:9",
	  "event spec \"CPU_CLK_UNHALTED:100000:0:1:1:9\": too many ':' fields "
	  "(expected NAME:count[:unitmask[:kernel[:user]]])" },
};

static void test_specs(void **state)
{
	struct op_events c;
	struct op_event_spec s;
	char err[512];
	(void)state;

	assert_int_equal(op_events_load(&c, real_root, "x86-64/generic", 4, 0, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(spec_errors) / sizeof(spec_errors[0]); i++) {
		int rc = op_parse_event_spec(&c, spec_errors[i].spec, &s, err, sizeof(err));

		if (rc != -EINVAL)
			fail_msg("\"%s\": rc %d", spec_errors[i].spec, rc);
		if (strcmp(err, spec_errors[i].msg))
			fail_msg("\"%s\":\n  got  \"%s\"\n  want \"%s\"", spec_errors[i].spec, err,
				 spec_errors[i].msg);
	}
	assert_int_equal(op_parse_event_spec(&c, "CPU_CLK_UNHALTED:100000", &s, err, sizeof(err)), 0);
	assert_string_equal(s.ev->name, "CPU_CLK_UNHALTED");
	assert_true(s.count == 100000);
	assert_int_equal(s.um, 0);
	assert_true(s.kernel && s.user);
	assert_int_equal(s.counter, -1);
	assert_int_equal(op_parse_event_spec(&c, "RETIRED_MMX_FP_INSTRUCTIONS:500", &s, err, sizeof(err)), 0);
	assert_int_equal(s.um, 7); /* default */
	assert_int_equal(op_parse_event_spec(&c, "RETIRED_MMX_FP_INSTRUCTIONS:0x1f4:0x3", &s, err, sizeof(err)), 0);
	assert_true(s.count == 500);
	assert_int_equal(s.um, 3);
	assert_int_equal(op_parse_event_spec(&c, "RETIRED_MMX_FP_INSTRUCTIONS:500:sse:0:1", &s, err, sizeof(err)), 0);
	assert_int_equal(s.um, 4);
	assert_int_equal(s.um_extra, OP_UM_EXTRA_NONE);
	assert_false(s.kernel);
	assert_true(s.user);
	assert_int_equal(op_parse_event_spec(&c, "CPU_CLK_UNHALTED:100000::1:0", &s, err, sizeof(err)), 0);
	assert_int_equal(s.um, 0);
	assert_false(s.user);
	op_events_free(&c);
}

static void test_lists(void **state)
{
	struct op_events c;
	struct op_event_spec s[8];
	size_t n = 99;
	char err[512];
	(void)state;

	assert_int_equal(op_events_load(&c, real_root, "x86-64/generic", 4, 0, err, sizeof(err)), 0);
	assert_int_equal(op_parse_event_list(&c, "CPU_CLK_UNHALTED:100000,RETIRED_INSTRUCTIONS:60000,", s, 8, &n,
					     err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_int_not_equal(s[0].counter, s[1].counter);
	assert_in_range(s[0].counter, 0, 3);
	assert_in_range(s[1].counter, 0, 3);

	assert_int_equal(op_parse_event_list(&c, "", s, 8, &n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "empty event list (expected NAME:count[:um[:kernel[:user]]],...)");
	assert_int_equal(op_parse_event_list(&c, "CPU_CLK_UNHALTED:100000,,RETIRED_UOPS:500", s, 8, &n, err,
					     sizeof(err)), -EINVAL);
	assert_string_equal(err, "event list \"CPU_CLK_UNHALTED:100000,,RETIRED_UOPS:500\": empty item at offset 24");
	assert_int_equal(op_parse_event_list(&c, "CPU_CLK_UNHALTED:100000,CPU_CLK_UNHALTED:200000", s, 8, &n, err,
					     sizeof(err)), -EINVAL);
	assert_string_equal(err, "event list: CPU_CLK_UNHALTED with unit mask 0x0 is given twice");
	assert_int_equal(op_parse_event_list(&c, "RETIRED_MMX_FP_INSTRUCTIONS:500:1,RETIRED_MMX_FP_INSTRUCTIONS:500:2",
					     s, 8, &n, err, sizeof(err)), 0);
	assert_int_equal(op_parse_event_list(&c, "CPU_CLK_UNHALTED:100000,RETIRED_UOPS:500,RETIRED_BRANCH_INSTRUCTIONS:500,"
					     "RETIRED_NEAR_RETURNS:500,INTERRUPTS_TAKEN:10",
					     s, 8, &n, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "Too many events specified: CPU only has 4 counters.");
	assert_int_equal(op_parse_event_list(&c, "CPU_CLK_UNHALTED:100000,RETIRED_UOPS:500,RETIRED_BRANCH_INSTRUCTIONS:500",
					     s, 2, &n, err, sizeof(err)), -EINVAL);
	assert_err_has(err, "more than 2 events");
	/* an error inside an item is the item's error */
	assert_int_equal(op_parse_event_list(&c, "CPU_CLK_UNHALTED:100000,NOPE:1", s, 8, &n, err, sizeof(err)),
			 -EINVAL);
	assert_err_has(err, "event spec \"NOPE:1\": no event NOPE");
	op_events_free(&c);

	/* with the counter count unknown (0), the allocator uses up to 32 */
	assert_int_equal(op_events_load(&c, real_root, "x86-64/generic", 0, 0, err, sizeof(err)), 0);
	assert_int_equal(op_parse_event_list(&c, "CPU_CLK_UNHALTED:100000,RETIRED_UOPS:500,RETIRED_BRANCH_INSTRUCTIONS:500,"
					     "RETIRED_NEAR_RETURNS:500,INTERRUPTS_TAKEN:10",
					     s, 8, &n, err, sizeof(err)), -EINVAL);
	/* counters:0,1,2,3 in the catalogue still limit placement */
	assert_err_has(err, "cannot place event INTERRUPTS_TAKEN: it can only use counter(s) 0,1,2,3, already needed by");
	op_events_free(&c);
}

/* ---- the built-in timer catalogue ------------------------------------ */

/* the TIMER event of CPU type "timer": one limit, 10 kHz (the daemon's default
 * TIMER:250000 validates; TIMER:10000 = 100 kHz does not) */
static void test_timer(void **state)
{
	struct op_events c;
	struct op_event_spec s[4];
	size_t n = 0;
	char err[512];
	(void)state;

	assert_int_equal(op_events_timer(&c), 0);
	assert_string_equal(c.model, "timer");
	assert_int_equal(c.nr_events, 1);
	assert_int_equal(c.nr_counters, 1);
	assert_non_null(op_events_find(&c, "TIMER"));
	assert_true(c.events[0].minimum == 100000 && c.events[0].maximum == 1000000000);
	assert_true(OP_TIMER_MIN_PERIOD_NS * OP_TIMER_MAX_HZ == 1000000000);

	assert_int_equal(op_parse_event_list(&c, "TIMER:250000", s, 4, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_true(s[0].count == 250000);
	assert_int_equal(s[0].um, 0);
	assert_int_equal(s[0].counter, 0);
	assert_int_equal(op_parse_event_spec(&c, "TIMER:100000:0:0:1", s, err, sizeof(err)), 0);
	assert_false(s[0].kernel);
	assert_int_equal(op_parse_event_spec(&c, "TIMER:1000000000", s, err, sizeof(err)), 0);

	assert_int_equal(op_parse_event_spec(&c, "TIMER:99999", s, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "event spec \"TIMER:99999\": count 99999 is below the minimum 100000 for TIMER");
	assert_int_equal(op_parse_event_spec(&c, "TIMER:10000", s, err, sizeof(err)), -EINVAL);
	assert_int_equal(op_parse_event_spec(&c, "TIMER:1000000001", s, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "event spec \"TIMER:1000000001\": count 1000000001 is above the maximum "
				 "1000000000 for TIMER");
	assert_int_equal(op_parse_event_spec(&c, "TIMER:250000:1", s, err, sizeof(err)), -EINVAL);
	assert_err_has(err, "unit mask 0x1 is not allowed for TIMER");
	assert_int_equal(op_parse_event_spec(&c, "CPU_CLK_UNHALTED:100000", s, err, sizeof(err)), -EINVAL);
	assert_err_has(err, "no event CPU_CLK_UNHALTED");
	assert_int_equal(op_parse_event_list(&c, "TIMER:250000,TIMER:500000", s, 4, &n, err, sizeof(err)),
			 -EINVAL);
	op_events_free(&c);
}

/* ---- cpu types ------------------------------------------------------- */

static void test_cpu(void **state)
{
	(void)state;
	assert_string_equal(op_cpu_name(69), "x86-64/generic");
	assert_string_equal(op_cpu_name(4), "timer");
	assert_string_equal(op_cpu_name(35), "x86-64/family10");
	assert_string_equal(op_cpu_name(-1), "invalid cpu type");
	assert_string_equal(op_cpu_name(999), "invalid cpu type");
	assert_int_equal(op_cpu_from_name("x86-64/family15h"), 53);
	assert_int_equal(op_cpu_from_name("i386/skylake"), 80);
	assert_int_equal(op_cpu_from_name("i386/arch_perfmon"), 41);
	assert_int_equal(op_cpu_nr_counters(41), 0); /* from cpuid */
	assert_int_equal(op_cpu_from_name("nope"), -1);
	assert_int_equal(op_cpu_from_name(NULL), -1);
	assert_int_equal(op_cpu_nr_counters(69), 4);
	assert_int_equal(op_cpu_nr_counters(53), 6);
	assert_int_equal(op_cpu_nr_counters(4), 1);
	assert_int_equal(op_cpu_nr_counters(12345), 0);
	assert_true(op_cpu_has_events(69));
	assert_false(op_cpu_has_events(4));
	assert_false(op_cpu_has_events(1000));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_generic),
		cmocka_unit_test(test_real_all),
		cmocka_unit_test(test_root),
		cmocka_unit_test(test_missing_model),
		cmocka_unit_test(test_fixture_ibs),
		cmocka_unit_test(test_fixture_include),
		cmocka_unit_test(test_fixture_modifiers),
		cmocka_unit_test(test_broken_fixtures),
		cmocka_unit_test_setup_teardown(test_load_errors, setup_tmp, teardown_tmp),
		cmocka_unit_test(test_specs),
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_timer),
		cmocka_unit_test(test_cpu),
	};

	init_paths();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
