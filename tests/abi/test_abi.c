/*
 * test_abi.c - pins the plugin ABI (sdk/oprofile_sdk.h, SDK v1.1 and what v1.0 froze, LP64): the
 * size and alignment of every struct that crosses the boundary, the offset
 * and size of every member, and the constants. A failure here means a
 * change broke already-built plugins: append members instead (and bump
 * OP_SDK_MINOR), or bump OP_SDK_MAJOR.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <string.h>

#include "oprofile_sdk.h"

struct abi_member {
	const char *name;
	size_t offset, size;
	size_t want_offset, want_size;
};

#define M(S, F, OFF, SZ) { #F, offsetof(struct S, F), sizeof(((struct S *)0)->F), OFF, SZ }

static void check_members(const char *s, const struct abi_member *m, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (m[i].offset != m[i].want_offset || m[i].size != m[i].want_size)
			fail_msg("struct %s member %s: offset %zu size %zu, pinned offset %zu size %zu", s,
				 m[i].name, m[i].offset, m[i].size, m[i].want_offset, m[i].want_size);
}

#define CHECK(S, SIZE, ALIGN, ...)                                                          \
	do {                                                                                \
		const struct abi_member m_[] = { __VA_ARGS__ };                             \
		assert_int_equal(sizeof(struct S), SIZE);                                   \
		assert_int_equal(_Alignof(struct S), ALIGN);                                \
		check_members(#S, m_, sizeof(m_) / sizeof(m_[0]));                          \
	} while (0)

static void test_op_ext_descriptor(void **state)
{
	(void)state;
	CHECK(op_ext_descriptor, 104, 8,
	      M(op_ext_descriptor, abi_major, 0, 4),
	      M(op_ext_descriptor, abi_minor, 4, 4),
	      M(op_ext_descriptor, size, 8, 4),
	      M(op_ext_descriptor, flags, 12, 4),
	      M(op_ext_descriptor, name, 16, 8),
	      M(op_ext_descriptor, version, 24, 8),
	      M(op_ext_descriptor, summary, 32, 8),
	      M(op_ext_descriptor, ext_init, 40, 8),
	      M(op_ext_descriptor, ext_deinit, 48, 8),
	      M(op_ext_descriptor, reserved, 56, 48));
}

static void test_op_perf_sample(void **state)
{
	(void)state;
	CHECK(op_perf_sample, 96, 8,
	      M(op_perf_sample, size, 0, 4),
	      M(op_perf_sample, misc, 4, 2),
	      M(op_perf_sample, cpumode, 6, 2),
	      M(op_perf_sample, id, 8, 8),
	      M(op_perf_sample, ip, 16, 8),
	      M(op_perf_sample, pid, 24, 4),
	      M(op_perf_sample, tid, 28, 4),
	      M(op_perf_sample, time, 32, 8),
	      M(op_perf_sample, cpu, 40, 4),
	      M(op_perf_sample, source, 44, 4),
	      M(op_perf_sample, period, 48, 8),
	      M(op_perf_sample, addr, 56, 8),
	      M(op_perf_sample, nr_callchain, 64, 8),
	      M(op_perf_sample, callchain, 72, 8),
	      M(op_perf_sample, raw_size, 80, 4),
	      M(op_perf_sample, raw, 88, 8));
}

static void test_op_pc_map(void **state)
{
	(void)state;
	CHECK(op_pc_map, 40, 8,
	      M(op_pc_map, size, 0, 4),
	      M(op_pc_map, in_kernel, 4, 4),
	      M(op_pc_map, cookie, 8, 4),
	      M(op_pc_map, offset, 16, 8),
	      M(op_pc_map, anon_start, 24, 8),
	      M(op_pc_map, anon_end, 32, 8));
}

static void test_op_trans_view(void **state)
{
	(void)state;
	CHECK(op_trans_view, 72, 8, /* issue 20: 1.3 appended split */
	      M(op_trans_view, size, 0, 4),
	      M(op_trans_view, tgid, 4, 4),
	      M(op_trans_view, tid, 8, 4),
	      M(op_trans_view, cpu, 12, 4),
	      M(op_trans_view, in_kernel, 16, 4),
	      M(op_trans_view, app_cookie, 20, 4),
	      M(op_trans_view, cookie, 24, 4),
	      M(op_trans_view, counter, 28, 4),
	      M(op_trans_view, pc, 32, 8),
	      M(op_trans_view, anon_start, 40, 8),
	      M(op_trans_view, anon_end, 48, 8),
	      M(op_trans_view, sfile, 56, 8),
	      M(op_trans_view, split, 64, 4));
}

static void test_op_stats_sink(void **state)
{
	(void)state;
	CHECK(op_stats_sink, 32, 8,
	      M(op_stats_sink, size, 0, 4),
	      M(op_stats_sink, opaque, 8, 8),
	      M(op_stats_sink, counter, 16, 8),
	      M(op_stats_sink, text, 24, 8));
}

static void test_op_stats_ops(void **state)
{
	(void)state;
	CHECK(op_stats_ops, 16, 8,
	      M(op_stats_ops, size, 0, 4),
	      M(op_stats_ops, print_stats, 8, 8));
}

static void test_op_escape_desc(void **state)
{
	(void)state;
	CHECK(op_escape_desc, 32, 8,
	      M(op_escape_desc, size, 0, 4),
	      M(op_escape_desc, code, 4, 4),
	      M(op_escape_desc, name, 8, 8),
	      M(op_escape_desc, min_args, 16, 4),
	      M(op_escape_desc, max_args, 20, 4),
	      M(op_escape_desc, handler, 24, 8));
}

static void test_op_sfile_ops(void **state)
{
	(void)state;
	CHECK(op_sfile_ops, 48, 8,
	      M(op_sfile_ops, size, 0, 4),
	      M(op_sfile_ops, create, 8, 8),
	      M(op_sfile_ops, dup, 16, 8),
	      M(op_sfile_ops, close, 24, 8),
	      M(op_sfile_ops, sync, 32, 8),
	      M(op_sfile_ops, get_file, 40, 8));
}

static void test_op_file_spec(void **state)
{
	(void)state;
	CHECK(op_file_spec, 40, 8,
	      M(op_file_spec, size, 0, 4),
	      M(op_file_spec, counter, 4, 4),
	      M(op_file_spec, is_cg, 8, 1),
	      M(op_file_spec, cg_to_cookie, 12, 4),
	      M(op_file_spec, cg_to_is_kernel, 16, 4),
	      M(op_file_spec, cg_to_anon_start, 24, 8),
	      M(op_file_spec, cg_to_anon_end, 32, 8));
}

static void test_op_counter_desc(void **state)
{
	(void)state;
	CHECK(op_counter_desc, 32, 8,
	      M(op_counter_desc, size, 0, 4),
	      M(op_counter_desc, name, 8, 8),
	      M(op_counter_desc, event, 16, 4),
	      M(op_counter_desc, um, 20, 4),
	      M(op_counter_desc, count, 24, 8));
}

static void test_op_perf_attr(void **state)
{
	(void)state;
	CHECK(op_perf_attr, 56, 8,
	      M(op_perf_attr, size, 0, 4),
	      M(op_perf_attr, type, 4, 4),
	      M(op_perf_attr, config, 8, 8),
	      M(op_perf_attr, config1, 16, 8),
	      M(op_perf_attr, config2, 24, 8),
	      M(op_perf_attr, sample_period, 32, 8),
	      M(op_perf_attr, freq, 40, 1),
	      M(op_perf_attr, exclude_user, 41, 1),
	      M(op_perf_attr, exclude_kernel, 42, 1),
	      M(op_perf_attr, exclude_hv, 43, 1),
	      M(op_perf_attr, precise_ip, 44, 1),
	      M(op_perf_attr, sample_type_extra, 48, 8));
}

static void test_op_source_desc(void **state)
{
	(void)state;
	CHECK(op_source_desc, 88, 8,
	      M(op_source_desc, size, 0, 4),
	      M(op_source_desc, name, 8, 8),
	      M(op_source_desc, attr, 16, 56),
	      M(op_source_desc, on_sample, 72, 8),
	      /* 1.1 */
	      M(op_source_desc, attr_ptr, 80, 8));
}

static void test_op_sample_hook_desc(void **state)
{
	(void)state;
	CHECK(op_sample_hook_desc, 40, 8,
	      M(op_sample_hook_desc, size, 0, 4),
	      M(op_sample_hook_desc, name, 8, 8),
	      M(op_sample_hook_desc, sample_type_extra, 16, 8),
	      M(op_sample_hook_desc, max_stack, 24, 4),
	      M(op_sample_hook_desc, on_sample, 32, 8));
}

static void test_op_cpuinfo(void **state)
{
	(void)state;
	CHECK(op_cpuinfo, 48, 8,
	      M(op_cpuinfo, size, 0, 4),
	      M(op_cpuinfo, vendor, 4, 16),
	      M(op_cpuinfo, family, 20, 4),
	      M(op_cpuinfo, model, 24, 4),
	      M(op_cpuinfo, stepping, 28, 4),
	      M(op_cpuinfo, pmu_usable, 32, 1),
	      M(op_cpuinfo, forced_cpu_type, 40, 8));
}

static void test_op_event_req(void **state)
{
	(void)state;
	CHECK(op_event_req, 40, 8,
	      M(op_event_req, size, 0, 4),
	      M(op_event_req, name, 8, 8),
	      M(op_event_req, code, 16, 4),
	      M(op_event_req, um, 20, 4),
	      M(op_event_req, count, 24, 8),
	      M(op_event_req, kernel, 32, 1),
	      M(op_event_req, user, 33, 1),
	      M(op_event_req, counter_mask, 36, 4));
}

static void test_op_model_desc(void **state)
{
	(void)state;
	CHECK(op_model_desc, 56, 8,
	      M(op_model_desc, size, 0, 4),
	      M(op_model_desc, name, 8, 8),
	      M(op_model_desc, detect, 16, 8),
	      M(op_model_desc, cpu_type, 24, 8),
	      M(op_model_desc, nr_counters, 32, 4),
	      M(op_model_desc, default_event, 40, 8),
	      M(op_model_desc, encode, 48, 8));
}

static void test_op_kernel_image(void **state)
{
	(void)state;
	CHECK(op_kernel_image, 24, 8,
	      M(op_kernel_image, size, 0, 4),
	      M(op_kernel_image, cookie, 4, 4),
	      M(op_kernel_image, start, 8, 8),
	      M(op_kernel_image, end, 16, 8));
}

static void test_op_kernel_ops(void **state)
{
	(void)state;
	CHECK(op_kernel_ops, 16, 8,
	      M(op_kernel_ops, size, 0, 4),
	      M(op_kernel_ops, resolve, 8, 8));
}

static void test_op_host(void **state)
{
	(void)state;
	CHECK(op_host, 256, 8, /* issue 20: 1.3 appended the split services */
	      M(op_host, size, 0, 4),
	      M(op_host, abi_major, 4, 4),
	      M(op_host, abi_minor, 8, 4),
	      M(op_host, log, 16, 8),
	      M(op_host, vlog, 24, 8),
	      M(op_host, config_string, 32, 8),
	      M(op_host, config_int64, 40, 8),
	      M(op_host, config_bool, 48, 8),
	      M(op_host, register_stats, 56, 8),
	      M(op_host, register_sfile_handlers, 64, 8),
	      M(op_host, register_escape, 72, 8),
	      M(op_host, register_model, 80, 8),
	      M(op_host, register_source, 88, 8),
	      M(op_host, register_sample_hook, 96, 8),
	      M(op_host, register_kernel, 104, 8),
	      M(op_host, register_counter, 112, 8),
	      M(op_host, map_pc, 120, 8),
	      M(op_host, emit, 128, 8),
	      M(op_host, log_sample, 136, 8),
	      M(op_host, sample_file_open, 144, 8),
	      M(op_host, sample_file_add, 152, 8),
	      M(op_host, sample_file_sync, 160, 8),
	      M(op_host, sample_file_close, 168, 8),
	      M(op_host, cookie_path, 176, 8),
	      M(op_host, cookie_intern, 184, 8),
	      M(op_host, session_dir, 192, 8),
	      M(op_host, proc_root, 200, 8),
	      /* 1.1 */
	      M(op_host, set_user_data, 208, 8),
	      /* 1.2 */
	      M(op_host, register_proc_hook, 216, 8),
	      M(op_host, register_session_hook, 224, 8),
	      M(op_host, register_anon_resolver, 232, 8),
	      /* --- issue 20: per-process split key (1.3) --- */
	      M(op_host, register_split, 240, 8),
	      M(op_host, set_split_key, 248, 8));
}

/* SDK 1.2 */
static void test_op_proc_event(void **state)
{
	(void)state;
	CHECK(op_proc_event, 80, 8,
	      M(op_proc_event, size, 0, 4),
	      M(op_proc_event, kind, 4, 4),
	      M(op_proc_event, pid, 8, 4),
	      M(op_proc_event, tid, 12, 4),
	      M(op_proc_event, ppid, 16, 4),
	      M(op_proc_event, misc, 20, 4),
	      M(op_proc_event, prot, 24, 4),
	      M(op_proc_event, flags, 28, 4),
	      M(op_proc_event, time, 32, 8),
	      M(op_proc_event, comm, 40, 8),
	      M(op_proc_event, filename, 48, 8),
	      M(op_proc_event, start, 56, 8),
	      M(op_proc_event, len, 64, 8),
	      M(op_proc_event, pgoff, 72, 8));
}

static void test_op_proc_hook_desc(void **state)
{
	(void)state;
	CHECK(op_proc_hook_desc, 24, 8,
	      M(op_proc_hook_desc, size, 0, 4),
	      M(op_proc_hook_desc, name, 8, 8),
	      M(op_proc_hook_desc, on_event, 16, 8));
}

static void test_op_session_event(void **state)
{
	(void)state;
	CHECK(op_session_event, 40, 8,
	      M(op_session_event, size, 0, 4),
	      M(op_session_event, kind, 4, 4),
	      M(op_session_event, dir, 8, 8),
	      M(op_session_event, prev_dir, 16, 8),
	      M(op_session_event, start_ns, 24, 8),
	      M(op_session_event, end_ns, 32, 8));
}

static void test_op_session_hook_desc(void **state)
{
	(void)state;
	CHECK(op_session_hook_desc, 24, 8,
	      M(op_session_hook_desc, size, 0, 4),
	      M(op_session_hook_desc, name, 8, 8),
	      M(op_session_hook_desc, on_event, 16, 8));
}

static void test_op_anon_resolver_desc(void **state)
{
	(void)state;
	CHECK(op_anon_resolver_desc, 24, 8,
	      M(op_anon_resolver_desc, size, 0, 4),
	      M(op_anon_resolver_desc, name, 8, 8),
	      M(op_anon_resolver_desc, resolve, 16, 8));
}

static void test_op_user_data(void **state)
{
	(void)state;
	CHECK(op_user_data, 24, 8,
	      M(op_user_data, size, 0, 4),
	      M(op_user_data, data, 8, 8),
	      M(op_user_data, free_func, 16, 8));
}

_Static_assert(sizeof(struct op_ext_descriptor) == OP_EXT_DESCRIPTOR_SIZE_V1_0,
	       "descriptor v1.0 size");
_Static_assert(OP_EXT_DESCRIPTOR_SIZE_V1_0 == 104, "frozen");
_Static_assert(OP_HOST_SIZE_V1_0 == 208, "frozen");
_Static_assert(sizeof(struct op_host) >= OP_HOST_SIZE_V1_0, "host table only grows");

static void test_constants(void **state)
{
	(void)state;
	assert_int_equal(OP_SDK_MAJOR, 1);
	assert_int_equal(OP_SDK_MINOR, 3); /* issue 20 */
	assert_string_equal(OP_EXT_SYMBOL, "oprofile_ext_v1");
	assert_int_equal(OP_EXT_DESCRIPTOR_SIZE_V1_0, 104);
	assert_int_equal(OP_HOST_SIZE_V1_0, 208);
	assert_int_equal(OP_EXT_DESCRIPTOR_SIZE_V1_1, 104);
	assert_int_equal(OP_PERF_SAMPLE_SIZE_V1_0, 96);
	assert_int_equal(OP_PERF_SAMPLE_SIZE_V1_1, 96);
	assert_int_equal(OP_PC_MAP_SIZE_V1_0, 40);
	assert_int_equal(OP_PC_MAP_SIZE_V1_1, 40);
	assert_int_equal(OP_TRANS_VIEW_SIZE_V1_0, 64);
	assert_int_equal(OP_TRANS_VIEW_SIZE_V1_1, 64);
	assert_int_equal(OP_STATS_SINK_SIZE_V1_0, 32);
	assert_int_equal(OP_STATS_SINK_SIZE_V1_1, 32);
	assert_int_equal(OP_STATS_OPS_SIZE_V1_0, 16);
	assert_int_equal(OP_STATS_OPS_SIZE_V1_1, 16);
	assert_int_equal(OP_ESCAPE_DESC_SIZE_V1_0, 32);
	assert_int_equal(OP_ESCAPE_DESC_SIZE_V1_1, 32);
	assert_int_equal(OP_SFILE_OPS_SIZE_V1_0, 48);
	assert_int_equal(OP_SFILE_OPS_SIZE_V1_1, 48);
	assert_int_equal(OP_FILE_SPEC_SIZE_V1_0, 40);
	assert_int_equal(OP_FILE_SPEC_SIZE_V1_1, 40);
	assert_int_equal(OP_COUNTER_DESC_SIZE_V1_0, 32);
	assert_int_equal(OP_COUNTER_DESC_SIZE_V1_1, 32);
	assert_int_equal(OP_PERF_ATTR_SIZE_V1_0, 56);
	assert_int_equal(OP_PERF_ATTR_SIZE_V1_1, 56);
	assert_int_equal(OP_SOURCE_DESC_SIZE_V1_0, 80);
	assert_int_equal(OP_SOURCE_DESC_SIZE_V1_1, 88);
	assert_int_equal(OP_SAMPLE_HOOK_DESC_SIZE_V1_0, 40);
	assert_int_equal(OP_SAMPLE_HOOK_DESC_SIZE_V1_1, 40);
	assert_int_equal(OP_CPUINFO_SIZE_V1_0, 48);
	assert_int_equal(OP_CPUINFO_SIZE_V1_1, 48);
	assert_int_equal(OP_EVENT_REQ_SIZE_V1_0, 40);
	assert_int_equal(OP_EVENT_REQ_SIZE_V1_1, 40);
	assert_int_equal(OP_MODEL_DESC_SIZE_V1_0, 56);
	assert_int_equal(OP_MODEL_DESC_SIZE_V1_1, 56);
	assert_int_equal(OP_KERNEL_IMAGE_SIZE_V1_0, 24);
	assert_int_equal(OP_KERNEL_IMAGE_SIZE_V1_1, 24);
	assert_int_equal(OP_KERNEL_OPS_SIZE_V1_0, 16);
	assert_int_equal(OP_KERNEL_OPS_SIZE_V1_1, 16);
	assert_int_equal(OP_HOST_SIZE_V1_1, 216);
	assert_int_equal(OP_USER_DATA_SIZE_V1_1, 24);
	assert_int_equal(OP_HOST_SIZE_V1_2, 240);
	assert_int_equal(OP_PROC_EVENT_SIZE_V1_2, 80);
	assert_int_equal(OP_PROC_HOOK_DESC_SIZE_V1_2, 24);
	assert_int_equal(OP_SESSION_EVENT_SIZE_V1_2, 40);
	assert_int_equal(OP_SESSION_HOOK_DESC_SIZE_V1_2, 24);
	assert_int_equal(OP_ANON_RESOLVER_DESC_SIZE_V1_2, 24);
	/* --- issue 20: per-process split key --- */
	assert_int_equal(OP_TRANS_VIEW_SIZE_V1_3, 72);
	assert_int_equal(OP_HOST_SIZE_V1_3_SPLIT, 256);
	assert_int_equal(OP_SPLIT_KEY_MAX, 1024);
	assert_int_equal(OP_PROC_COMM, 1);
	assert_int_equal(OP_PROC_EXEC, 2);
	assert_int_equal(OP_PROC_FORK, 3);
	assert_int_equal(OP_PROC_EXIT, 4);
	assert_int_equal(OP_PROC_MMAP, 5);
	assert_int_equal(OP_PROC_F_EXEC, 1);
	assert_int_equal(OP_PROC_F_SYNTH, 2);
	assert_int_equal(OP_SESSION_START, 1);
	assert_int_equal(OP_SESSION_DUMP, 2);
	assert_int_equal(OP_SESSION_ROTATED, 3);
	assert_int_equal(OP_SESSION_STOP, 4);
	assert_int_equal(OP_ESCAPE_FIRST_PLUGIN, 32);
	assert_int_equal(OP_ESCAPE_MAX, 255);
	assert_int_equal(OP_EXT_NAME_MAX, 64);
	assert_int_equal(OP_EXT_F_NO_EVENT_OK, 1);
	assert_int_equal(sizeof(op_cookie_t), 4);
	assert_int_equal(OP_CPUMODE_UNKNOWN, 0);
	assert_int_equal(OP_CPUMODE_KERNEL, 1);
	assert_int_equal(OP_CPUMODE_USER, 2);
	assert_int_equal(OP_CPUMODE_HYPERVISOR, 3);
	assert_int_equal(OP_CPUMODE_GUEST_KERNEL, 4);
	assert_int_equal(OP_CPUMODE_GUEST_USER, 5);
	assert_int_equal(OP_CONTEXT_HV, (uint64_t)-32);
	assert_int_equal(OP_CONTEXT_KERNEL, (uint64_t)-128);
	assert_int_equal(OP_CONTEXT_USER, (uint64_t)-512);
	assert_int_equal(OP_CONTEXT_GUEST, (uint64_t)-2048);
	assert_int_equal(OP_CONTEXT_MAX, (uint64_t)-4095);
	assert_int_equal(OP_LOG_ERR, 0);
	assert_int_equal(OP_LOG_WARN, 1);
	assert_int_equal(OP_LOG_INFO, 2);
	assert_int_equal(OP_LOG_DEBUG, 3);
}

/* OP_HOST_HAS: a member is there only if the host's size covers all of it */
static void test_host_has(void **state)
{
	struct op_host h;

	(void)state;
	memset(&h, 0, sizeof(h));
	h.size = OP_HOST_SIZE_V1_0;
	assert_true(OP_HOST_HAS(&h, proc_root));
	assert_true(OP_HOST_HAS(&h, log));
	h.size = offsetof(struct op_host, proc_root);
	assert_false(OP_HOST_HAS(&h, proc_root));
	assert_true(OP_HOST_HAS(&h, session_dir));
	h.size = offsetof(struct op_host, proc_root) + 4;
	assert_false(OP_HOST_HAS(&h, proc_root));
	/* a 1.0 host has no 1.1 services, a 1.1 host has them */
	h.size = OP_HOST_SIZE_V1_0;
	assert_false(OP_HOST_HAS(&h, set_user_data));
	h.size = OP_HOST_SIZE_V1_1;
	assert_true(OP_HOST_HAS(&h, set_user_data));
	/* a 1.1 host has no 1.2 services, a 1.2 host has them */
	assert_false(OP_HOST_HAS(&h, register_proc_hook));
	assert_false(OP_HOST_HAS(&h, register_anon_resolver));
	h.size = OP_HOST_SIZE_V1_2;
	assert_true(OP_HOST_HAS(&h, register_proc_hook));
	assert_true(OP_HOST_HAS(&h, register_session_hook));
	assert_true(OP_HOST_HAS(&h, register_anon_resolver));
}

static int abi_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	(void)ctx;
	(void)host;
	(void)args;
	return 0;
}

OP_EXT_DEFINE(.name = "abi", .version = "9.9", .summary = "abi test", .ext_init = abi_init,
	      .flags = OP_EXT_F_NO_EVENT_OK);

/* what OP_EXT_DEFINE writes */
static void test_declare(void **state)
{
	(void)state;
	assert_int_equal(oprofile_ext_v1.abi_major, OP_SDK_MAJOR);
	assert_int_equal(oprofile_ext_v1.abi_minor, OP_SDK_MINOR);
	assert_int_equal(oprofile_ext_v1.size, OP_EXT_DESCRIPTOR_SIZE_V1_0);
	assert_int_equal(oprofile_ext_v1.flags, OP_EXT_F_NO_EVENT_OK);
	assert_string_equal(oprofile_ext_v1.name, "abi");
	assert_ptr_equal(oprofile_ext_v1.ext_init, abi_init);
	assert_null(oprofile_ext_v1.ext_deinit);
	for (size_t i = 0; i < 6; i++)
		assert_null(oprofile_ext_v1.reserved[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_op_ext_descriptor),
		cmocka_unit_test(test_op_perf_sample),
		cmocka_unit_test(test_op_pc_map),
		cmocka_unit_test(test_op_trans_view),
		cmocka_unit_test(test_op_stats_sink),
		cmocka_unit_test(test_op_stats_ops),
		cmocka_unit_test(test_op_escape_desc),
		cmocka_unit_test(test_op_sfile_ops),
		cmocka_unit_test(test_op_file_spec),
		cmocka_unit_test(test_op_counter_desc),
		cmocka_unit_test(test_op_perf_attr),
		cmocka_unit_test(test_op_source_desc),
		cmocka_unit_test(test_op_sample_hook_desc),
		cmocka_unit_test(test_op_cpuinfo),
		cmocka_unit_test(test_op_event_req),
		cmocka_unit_test(test_op_model_desc),
		cmocka_unit_test(test_op_kernel_image),
		cmocka_unit_test(test_op_kernel_ops),
		cmocka_unit_test(test_op_host),
		cmocka_unit_test(test_op_user_data),
		cmocka_unit_test(test_op_proc_event),
		cmocka_unit_test(test_op_proc_hook_desc),
		cmocka_unit_test(test_op_session_event),
		cmocka_unit_test(test_op_session_hook_desc),
		cmocka_unit_test(test_op_anon_resolver_desc),
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_host_has),
		cmocka_unit_test(test_declare),
	};

#if !defined(__x86_64__) || !defined(__LP64__)
	/* the numbers are x86-64's; other ABIs need their own table */
	return 77;
#endif
	return cmocka_run_group_tests_name("abi", tests, NULL, NULL);
}
