/*
 * test_plugin_so.c - dlopen the built timer.so and kernel.so from
 * $OP_PLUGIN_DIR, check their descriptors as the loader would, and run
 * each once through the mock host (not a sanitizer test: it dlopens).
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mock_host.h"

#ifndef TOP_SRCDIR
#define TOP_SRCDIR "."
#endif

static void *open_plugin(const char *stem, const struct op_ext_descriptor **desc)
{
	const char *dir = getenv("OP_PLUGIN_DIR");
	char path[PATH_MAX];
	void *h;
	size_t i;

	if (!dir || !*dir)
		dir = "plugins/.libs";
	snprintf(path, sizeof(path), "%s/%s.so", dir, stem);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		fail_msg("dlopen %s: %s", path, dlerror());
	*desc = dlsym(h, OP_EXT_SYMBOL);
	if (!*desc)
		fail_msg("%s: no symbol %s", path, OP_EXT_SYMBOL);
	assert_int_equal((*desc)->abi_major, 1);
	assert_int_equal((*desc)->abi_minor, 0);
	assert_true((*desc)->size >= OP_EXT_DESCRIPTOR_SIZE_V1_0);
	assert_non_null((*desc)->name);
	assert_string_equal((*desc)->name, stem); /* name = file stem */
	assert_non_null((*desc)->version);
	assert_non_null((*desc)->summary);
	assert_non_null((*desc)->ext_init);
	for (i = 0; i < 6; i++)
		assert_null((*desc)->reserved[i]);
	/* nothing else is exported: the descriptor is the whole interface */
	assert_null(dlsym(h, "timer_init"));
	assert_null(dlsym(h, "kernel_init"));
	assert_null(dlsym(h, "ksyms_parse_line"));
	return h;
}

static void test_timer_so(void **state)
{
	const struct op_ext_descriptor *d;
	struct mock_host *mh = mock_host_new();
	void *h = open_plugin("timer", &d);
	struct op_event_req ev = { .size = sizeof(ev), .name = "TIMER", .count = 0,
				   .kernel = true, .user = true };
	struct op_perf_attr attr;
	char err[256] = "";
	uint32_t id = 0;

	(void)state;
	assert_int_equal(mock_host_init(mh, d, "freq=1000"), 0);
	assert_int_equal(mh->nr_models, 1);
	assert_string_equal(mh->models[0].desc.cpu_type(mh->models[0].priv, &id), "timer");
	assert_int_equal(id, 4);
	assert_int_equal(mh->models[0].desc.encode(mh->models[0].priv, &ev, &attr, err, sizeof(err)),
			 0);
	assert_int_equal(attr.type, 1);
	assert_int_equal(attr.config, 0);
	assert_true(attr.freq);
	assert_int_equal(attr.sample_period, 1000);
	mock_host_free(mh);
	dlclose(h);
}

static void test_kernel_so(void **state)
{
	const struct op_ext_descriptor *d;
	struct mock_host *mh = mock_host_new();
	void *h = open_plugin("kernel", &d);
	const char *src = getenv("OP_SRCDIR");
	struct op_kernel_image img;
	char args[PATH_MAX + 16];

	(void)state;
	snprintf(args, sizeof(args), "proc=%s/tests/data/kernel/proc-a",
		 src && *src ? src : TOP_SRCDIR);
	assert_int_equal(mock_host_init(mh, d, args), 0);
	assert_true(mh->has_kernel);
	memset(&img, 0, sizeof(img));
	assert_int_equal(mh->kernel_ops.resolve(mh->kernel_priv, 0xffffffffc0100010ull, &img), 0);
	assert_string_equal(mock_host_cookie_path(mh, img.cookie), "modb");
	assert_int_equal(mh->kernel_ops.resolve(mh->kernel_priv, 0x1000, &img), -ENOENT);
	mock_host_free(mh);
	dlclose(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_timer_so),
		cmocka_unit_test(test_kernel_so),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
