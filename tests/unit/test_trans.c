/*
 * test_trans.c - trans over hand-made event buffers: every core code,
 * unknown and truncated codes, plugin codes from a fake registry, the
 * retired codes, the event-buffer reader; checks the exact contents of the resulting sample files.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>

#include "core_fixture.h"

#define E EVB_ESCAPE
#define N(a) (sizeof(a) / sizeof((a)[0]))

#define HOT_APP "{root}/bin/hot/{dep}/"
#define F_HOT HOT_APP "{root}/bin/hot/TIMER.0.0.all.all.all"
#define F_LIBC HOT_APP "{root}/lib/libc.so.6/TIMER.0.0.all.all.all"
#define F_LIBC_CLK HOT_APP "{root}/lib/libc.so.6/CPU_CLK_UNHALTED.100000.0.all.all.all"
#define F_KERN HOT_APP "{kern}/no-vmlinux/TIMER.0.0.all.all.all"
#define F_ANON HOT_APP "{anon:anon}/100.0x10000.0x10fff/TIMER.0.0.all.all.all"

static void test_core_codes(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB | OP_SEP_KERNEL, 64);
	op_cookie_t hot = cfx_ck(f, "/bin/hot", OP_IMAGE_USER);
	op_cookie_t libc = cfx_ck(f, "/lib/libc.so.6", OP_IMAGE_USER);
	op_cookie_t kern = cfx_ck(f, "no-vmlinux", OP_IMAGE_KERNEL);
	op_cookie_t anon = cfx_ck(f, "anon", OP_IMAGE_ANON);
	struct opd_header hd;
	uint32_t v;
	const uint64_t buf[] = {
		E, EVB_CPU_SWITCH, 1, 0,
		E, EVB_CTX_SWITCH, 3, 100, hot, 100,
		E, EVB_USER_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, hot,
		0x10, 0, 0x10, 0, 0x20, 0,
		E, EVB_COOKIE_SWITCH, 1, libc,
		0x30, 0, 0x30, 1,
		E, EVB_KERNEL_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, kern,
		0x100, 0,
		E, EVB_USER_ENTER, 0,
		E, EVB_ANON_SWITCH, 3, anon, 0x10000, 0x10fff,
		0x4, 0,
	};

	(void)state;
	trans_buffer(&f->tr, buf, N(buf));
	assert_int_equal(f->tr.v->tgid, 100);
	assert_int_equal(f->tr.v->cpu, 0);
	sfile_close_all(&f->sft);

	assert_int_equal(cfx_read(f, F_HOT, 0x10, &v, &hd), 2);
	assert_int_equal(v, 2);
	assert_memory_equal(hd.magic, OPD_MAGIC, 4);
	assert_int_equal(hd.version, OPD_VERSION);
	assert_int_equal(hd.cpu_type, OP_CPU_TIMER);
	assert_int_equal(hd.is_kernel, 0);
	assert_true(hd.cpu_speed == 2500.5);
	assert_int_equal(cfx_read(f, F_HOT, 0x20, &v, NULL), 2);
	assert_int_equal(v, 1);
	assert_int_equal(cfx_read(f, F_LIBC, 0x30, &v, NULL), 1);
	assert_int_equal(v, 1);
	assert_int_equal(cfx_read(f, F_LIBC_CLK, 0x30, &v, &hd), 1);
	assert_int_equal(v, 1);
	assert_int_equal(hd.ctr_event, 0x76);
	assert_int_equal(hd.ctr_count, 100000);
	assert_int_equal(cfx_read(f, F_KERN, 0x100, &v, &hd), 1);
	assert_int_equal(v, 1);
	assert_int_equal(hd.is_kernel, 1);
	assert_int_equal(cfx_read(f, F_ANON, 0x4, &v, &hd), 1);
	assert_int_equal(v, 1);
	assert_int_equal(hd.anon_start, 0x10000);
	assert_int_equal(f->st.v[STAT_UNKNOWN_CODE], 0);
	assert_int_equal(f->st.v[STAT_INCOMPLETE_CODE], 0);
	assert_int_equal(f->st.v[STAT_SFILE_OPENS], 5);
	cfx_free(f);
}

/* context survives buffer boundaries */
static void test_split_buffers(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB | OP_SEP_KERNEL, 64);
	op_cookie_t hot = cfx_ck(f, "/bin/hot", OP_IMAGE_USER);
	const uint64_t b1[] = { E, EVB_CTX_SWITCH, 3, 100, hot, 100, E, EVB_USER_ENTER, 0 };
	const uint64_t b2[] = { E, EVB_COOKIE_SWITCH, 1, hot, 0x10, 0 };
	const uint64_t b3[] = { 0x10, 0 };

	(void)state;
	trans_buffer(&f->tr, b1, N(b1));
	trans_buffer(&f->tr, b2, N(b2));
	trans_buffer(&f->tr, b3, N(b3));
	sfile_close_all(&f->sft);
	assert_int_equal(cfx_total(f, F_HOT), 2);
	cfx_free(f);
}

static void test_malformed(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB | OP_SEP_KERNEL, 64);
	op_cookie_t hot = cfx_ck(f, "/bin/hot", OP_IMAGE_USER);
	uint32_t v;
	const uint64_t before_ctx[] = { 0x99, 0 };
	const uint64_t buf[] = {
		E, EVB_CTX_SWITCH, 3, 100, hot, 100,
		E, EVB_USER_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, hot,
		0x10, 0,
		E, 20, 2, 1, 2,                  /* unknown core-range code: skipped */
		0x20, 0,
		E, 200, 1, 9,                    /* plugin-range code nobody registered */
		E, 0x100000000ull, 0,            /* absurd code number */
		E, EVB_CPU_SWITCH, 2, 1, 2,      /* wrong length for a core code */
		E, EVB_KERNEL_ENTER, 1, 0,       /* same */
		0x30, 0,
		0x40, 99,                        /* unknown counter */
		0x50, 0x100000000ull,            /* counter out of range */
		E, EVB_COOKIE_SWITCH, 5, hot,    /* truncated at the end */
	};
	const uint64_t dangling1[] = { 0x60, 0, E };
	const uint64_t dangling2[] = { 0x60, 0, E, EVB_CPU_SWITCH };
	const uint64_t lone[] = { 0x70 };

	(void)state;
	trans_buffer(&f->tr, before_ctx, N(before_ctx));
	assert_int_equal(f->st.v[STAT_LOST_NO_CONTEXT], 1);
	trans_buffer(&f->tr, buf, N(buf));
	assert_int_equal(f->st.v[STAT_UNKNOWN_CODE], 3);
	assert_int_equal(f->st.v[STAT_INCOMPLETE_CODE], 3);
	assert_int_equal(f->st.v[STAT_LOST_BAD_COUNTER], 2);
	trans_buffer(&f->tr, dangling1, N(dangling1));
	trans_buffer(&f->tr, dangling2, N(dangling2));
	trans_buffer(&f->tr, lone, N(lone));
	assert_int_equal(f->st.v[STAT_INCOMPLETE_CODE], 6);
	trans_buffer(&f->tr, NULL, 0);
	sfile_close_all(&f->sft);
	assert_int_equal(cfx_read(f, F_HOT, 0x10, &v, NULL), 4);
	assert_int_equal(v, 1);
	assert_int_equal(cfx_read(f, F_HOT, 0x20, &v, NULL), 4);
	assert_int_equal(v, 1);
	assert_int_equal(cfx_read(f, F_HOT, 0x30, &v, NULL), 4);
	assert_int_equal(v, 1);
	assert_int_equal(cfx_read(f, F_HOT, 0x60, &v, NULL), 4);
	assert_int_equal(v, 2);
	assert_int_equal(cfx_read(f, F_HOT, 0x99, &v, NULL), 4);
	assert_int_equal(v, 0);
	cfx_free(f);
}

/* a plugin escape code with its handler logging into a virtual counter */
static struct cfx *plugin_fx;
static int plugin_calls;
static struct op_trans_view plugin_seen;

static int plugin_handler(void *priv, const struct op_trans_view *t, const uint64_t *args,
			  uint32_t nargs)
{
	assert_ptr_equal(priv, &plugin_calls);
	plugin_calls++;
	plugin_seen = *t;
	if (args[0] == 0xbad)
		return -EINVAL;
	assert_int_equal(trans_log_sample(&plugin_fx->tr, t, EXT_COUNTER_BASE, args[0],
					  nargs == 2 ? (uint32_t)args[1] : 1),
			 0);
	return 0;
}

static void test_plugin_code(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB | OP_SEP_KERNEL, 64);
	op_cookie_t hot = cfx_ck(f, "/bin/hot", OP_IMAGE_USER);
	struct ext_escape esc = {
		.desc = { .size = sizeof(esc.desc), .code = 40, .name = "test-code",
			  .min_args = 1, .max_args = 2, .handler = plugin_handler },
		.priv = &plugin_calls,
	};
	struct opd_header hd;
	uint32_t v;
	const uint64_t buf[] = {
		E, EVB_CPU_SWITCH, 1, 1,
		E, EVB_CTX_SWITCH, 3, 100, hot, 100,
		E, EVB_USER_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, hot,
		0x10, 0,
		E, 40, 2, 0x55, 3,
		E, 40, 1, 0x56,
		E, 40, 3, 1, 2, 3,   /* too many args */
		E, 40, 0,            /* too few */
		E, 40, 1, 0xbad,     /* handler refuses */
		E, 41, 1, 0x57,      /* not registered */
	};

	(void)state;
	plugin_fx = f;
	f->reg.escapes[40] = &esc;
	f->reg.counters[0].desc = (struct op_counter_desc){
		.size = sizeof(struct op_counter_desc), .name = "IBS_OP_ALL", .event = 0xf100,
		.um = 0, .count = 1000 };
	f->reg.nr_counters = 1;
	trans_buffer(&f->tr, buf, N(buf));
	assert_int_equal(plugin_calls, 3);
	assert_int_equal(plugin_seen.tgid, 100);
	assert_int_equal(plugin_seen.cpu, 1);
	assert_int_equal(plugin_seen.cookie, hot);
	assert_int_equal(plugin_seen.pc, 0x10);
	assert_non_null(plugin_seen.sfile);
	assert_int_equal(f->st.v[STAT_INCOMPLETE_CODE], 3);
	assert_int_equal(f->st.v[STAT_UNKNOWN_CODE], 1);
	sfile_close_all(&f->sft);
	assert_int_equal(cfx_read(f, HOT_APP "{root}/bin/hot/IBS_OP_ALL.1000.0.all.all.all", 0x55,
				  &v, &hd),
			 2);
	assert_int_equal(v, 3);
	assert_int_equal(hd.ctr_event, 0xf100);
	assert_int_equal(hd.ctr_count, 1000);
	assert_int_equal(cfx_read(f, HOT_APP "{root}/bin/hot/IBS_OP_ALL.1000.0.all.all.all", 0x56,
				  &v, NULL),
			 2);
	assert_int_equal(v, 1);
	assert_int_equal(cfx_total(f, F_HOT), 1);
	cfx_free(f);
}

/*
 * The retired codes 8 and 9 (OProfile's TRACE_BEGIN/END: arcs of a call
 * chain) are unknown now: skipped and counted, the pairs after them are
 * plain samples of the current context, no arc file is made.
 */
static void test_retired_codes(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB | OP_SEP_KERNEL, 64);
	op_cookie_t hot = cfx_ck(f, "/bin/hot", OP_IMAGE_USER);
	op_cookie_t libc = cfx_ck(f, "/lib/libc.so.6", OP_IMAGE_USER);
	uint32_t v;
	const uint64_t buf[] = {
		E, EVB_CTX_SWITCH, 3, 100, hot, 100,
		E, EVB_USER_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, libc,
		E, 8, 0,
		0x30, 0,
		E, EVB_COOKIE_SWITCH, 1, hot,
		0x11d0, 0,
		0x1200, 0,
		E, 9, 0,
		0x1200, 0,
	};

	(void)state;
	assert_int_equal(evb_core_nargs(8), -1);
	assert_int_equal(evb_core_nargs(9), -1);
	assert_null(evb_code_name(8));
	trans_buffer(&f->tr, buf, N(buf));
	sfile_close_all(&f->sft);
	assert_int_equal(f->st.v[STAT_UNKNOWN_CODE], 2);
	assert_int_equal(f->st.v[STAT_INCOMPLETE_CODE], 0);
	assert_int_equal(cfx_total(f, F_LIBC), 1);
	assert_int_equal(cfx_total(f, F_HOT), 3);
	assert_int_equal(cfx_read(f, F_HOT, 0x1200, &v, NULL), 2);
	assert_int_equal(v, 2);
	assert_int_equal(cfx_read(f, HOT_APP "{root}/bin/hot/{cg}/{root}/lib/libc.so.6/TIMER.0.0.all.all.all",
				  (0x11d0ull << 32) | 0x30, &v, NULL),
			 -1);
	cfx_free(f);
}

/* the reader: pairs, records, out-of-range codes, cut records, the end */
static void test_evb_next(void **state)
{
	const uint64_t w[] = { 0x10, 3, E, EVB_CPU_SWITCH, 1, 7, E, 0x100000000ull, 0, E, 40, 2, 1 };
	struct evb_item it;
	size_t pos = 0;

	(void)state;
	assert_int_equal(evb_next(w, N(w), &pos, &it), EVB_PAIR);
	assert_int_equal(it.offset, 0x10);
	assert_int_equal(it.counter, 3);
	assert_int_equal(evb_next(w, N(w), &pos, &it), EVB_RECORD);
	assert_int_equal(it.code, EVB_CPU_SWITCH);
	assert_int_equal(it.nargs, 1);
	assert_int_equal(it.args[0], 7);
	assert_int_equal(evb_next(w, N(w), &pos, &it), EVB_RECORD);
	assert_int_equal(it.code, 0);
	assert_int_equal(it.nargs, 0);
	assert_int_equal(pos, 9);
	assert_int_equal(evb_next(w, N(w), &pos, &it), EVB_CUT);
	assert_int_equal(pos, 9);
	pos = N(w);
	assert_int_equal(evb_next(w, N(w), &pos, &it), EVB_END);
	pos = N(w) - 1;
	assert_int_equal(evb_next(w, N(w), &pos, &it), EVB_CUT); /* half a pair */
	pos = 0;
	assert_int_equal(evb_next(w, 3, &pos, &it), EVB_PAIR);
	assert_int_equal(evb_next(w, 3, &pos, &it), EVB_CUT);   /* dangling escape */
	assert_true(evb_core_code(EVB_CPU_RESTORE));
	assert_false(evb_core_code(EVB_PLUGIN_CODE_FIRST));
	assert_true(evb_plugin_code(EVB_PLUGIN_CODE_FIRST));
	assert_false(evb_plugin_code(EVB_CODE_MAX));
	assert_false(evb_code_ok(0));
}

static int soup_calls;

static int soup_handler(void *priv, const struct op_trans_view *t, const uint64_t *args,
			uint32_t nargs)
{
	(void)priv;
	soup_calls++;
	if (nargs && args[0] % 3 == 0)
		return -EINVAL;
	trans_log_sample(&plugin_fx->tr, t, EXT_COUNTER_BASE, nargs ? args[0] : 0, 1);
	return 0;
}

/* random word soup after a valid prelude: never a crash */
/*
 * Samples of two CPUs interleaved (what the merged rings give): each cpu
 * keeps its own context; EVB_CPU_RESTORE goes back to it, also after the
 * set it pointed at was evicted meanwhile (one open file at a time here),
 * and a restore of a cpu never seen acts as a plain switch.
 */
static void test_cpu_interleave(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_LIB | OP_SEP_KERNEL, 1);
	op_cookie_t hot = cfx_ck(f, "/bin/hot", OP_IMAGE_USER);
	op_cookie_t libc = cfx_ck(f, "/lib/libc.so.6", OP_IMAGE_USER);
	const uint64_t buf[] = {
		E, EVB_CPU_SWITCH, 1, 0,
		E, EVB_CTX_SWITCH, 3, 100, hot, 100,
		E, EVB_USER_ENTER, 0,
		E, EVB_COOKIE_SWITCH, 1, hot,
		0x10, 0,
		E, EVB_CPU_SWITCH, 1, 1,         /* carries cpu 0's context over... */
		0x11, 0,                         /* ...so this is hot's too */
		E, EVB_COOKIE_SWITCH, 1, libc,
		0x20, 0,
		E, EVB_CPU_RESTORE, 1, 0,        /* hot again: its set was evicted */
		0x10, 0,
		E, EVB_CPU_RESTORE, 1, 1,        /* libc again */
		0x20, 0, 0x20, 0,
		E, EVB_CPU_RESTORE, 1, 0,
		0x12, 0,
		E, EVB_CPU_RESTORE, 1, 7,        /* never seen: a switch, cpu 0's context */
		0x13, 0,
		E, EVB_CPU_RESTORE, 1, 1,
		0x21, 0,
	};
	uint32_t v;

	(void)state;
	trans_buffer(&f->tr, buf, N(buf));
	assert_int_equal(f->tr.v->cpu, 1);
	assert_int_equal(f->tr.v->cookie, libc);
	sfile_close_all(&f->sft);
	assert_int_equal(cfx_read(f, F_HOT, 0x10, &v, NULL), 4);
	assert_int_equal(v, 2);
	assert_int_equal(cfx_read(f, F_HOT, 0x11, &v, NULL), 4);
	assert_int_equal(v, 1);
	assert_int_equal(cfx_read(f, F_HOT, 0x12, &v, NULL), 4);
	assert_int_equal(v, 1);
	assert_int_equal(cfx_read(f, F_HOT, 0x13, &v, NULL), 4);
	assert_int_equal(v, 1);
	assert_int_equal(cfx_total(f, F_HOT), 5);
	assert_int_equal(cfx_read(f, F_LIBC, 0x20, &v, NULL), 2);
	assert_int_equal(v, 3);
	assert_int_equal(cfx_total(f, F_LIBC), 4);
	assert_true(f->st.v[STAT_SFILE_EVICTIONS] >= 4);
	assert_int_equal(f->st.v[STAT_INCOMPLETE_CODE], 0);
	assert_int_equal(f->st.v[STAT_LOST_SAMPLEFILE], 0);
	cfx_free(f);
}

static void test_random_buffers(void **state)
{
	struct cfx *f = cfx_new(OP_SEP_ALL, 8);
	struct ext_escape esc = {
		.desc = { .size = sizeof(esc.desc), .code = 33, .name = "soup",
			  .min_args = 0, .max_args = 4, .handler = soup_handler },
		.priv = NULL,
	};
	uint64_t buf[64], r = 777;
	op_cookie_t c[4];
	int n, i;

	(void)state;
	plugin_fx = f;
	f->reg.escapes[33] = &esc;
	f->reg.counters[0].desc = (struct op_counter_desc){
		.size = sizeof(struct op_counter_desc), .name = "VIRT", .count = 1 };
	f->reg.nr_counters = 1;
	c[0] = cfx_ck(f, "/bin/a", OP_IMAGE_USER);
	c[1] = cfx_ck(f, "/lib/b.so", OP_IMAGE_USER);
	c[2] = cfx_ck(f, "vmlinux", OP_IMAGE_KERNEL);
	c[3] = cfx_ck(f, "anon", OP_IMAGE_ANON);
	for (n = 0; n < 3000; n++) {
		int len = 8 + (int)(r % 56);

		i = 0;
		if (n % 2) {
			buf[i++] = EVB_ESCAPE;
			buf[i++] = r % 3 ? EVB_USER_ENTER : EVB_KERNEL_ENTER;
			buf[i++] = 0;
			buf[i++] = EVB_ESCAPE;
			buf[i++] = EVB_COOKIE_SWITCH;
			buf[i++] = 1;
			buf[i++] = c[(r >> 3) % 3];
			buf[i++] = r >> 40;
			buf[i++] = 0;
			buf[i++] = EVB_ESCAPE;
			buf[i++] = 33;
			buf[i++] = 1;
			buf[i++] = r >> 30;
		}
		for (; i < len; i++) {
			r ^= r << 13;
			r ^= r >> 7;
			r ^= r << 17;
			switch (r % 8) {
			case 0:
			case 1:
				buf[i] = EVB_ESCAPE;
				break;
			case 2:
				buf[i] = (r >> 8) % 40;   /* a code or a length */
				break;
			case 3:
				buf[i] = c[(r >> 8) % 4];
				break;
			case 4:
				buf[i] = (r >> 8) % 3;    /* counters, lengths */
				break;
			default:
				buf[i] = r >> 20;         /* offsets, garbage */
				break;
			}
		}
		trans_buffer(&f->tr, buf, (size_t)len);
	}
	trans_forget_sfile(&f->tr);
	sfile_close_all(&f->sft);
	assert_true(f->st.v[STAT_UNKNOWN_CODE] > 0);
	assert_true(f->st.v[STAT_INCOMPLETE_CODE] > 0);
	assert_true(f->st.v[STAT_SFILE_OPENS] > 0);
	assert_true(soup_calls > 0);
	cfx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_core_codes),
		cmocka_unit_test(test_split_buffers),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_plugin_code),
		cmocka_unit_test(test_retired_codes),
		cmocka_unit_test(test_evb_next),
		cmocka_unit_test(test_cpu_interleave),
		cmocka_unit_test(test_random_buffers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
