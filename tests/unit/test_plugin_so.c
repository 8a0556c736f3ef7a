/*
 * test_plugin_so.c - dlopen the built timer.so and kernel.so from
 * $OP_PLUGIN_DIR, check their descriptors as the loader would, and run
 * each once through the mock host, and open the timer's encoded events with
 * the real perf_event_open (not a sanitizer test: it dlopens and uses perf).
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
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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
	assert_int_equal((*desc)->abi_minor, OP_SDK_MINOR);
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

/* the attr the timer encodes is one the kernel accepts: open it on this thread */
static void live_open(const struct op_perf_attr *a)
{
	struct perf_event_attr pa;
	struct timespec t0, t1;
	uint64_t count = 0;
	volatile uint64_t spin = 0;
	int fd;

	memset(&pa, 0, sizeof(pa));
	pa.size = sizeof(pa);
	pa.type = a->type;
	pa.config = a->config;
	pa.sample_period = a->sample_period; /* sample_freq shares the union */
	pa.freq = a->freq;
	pa.exclude_kernel = a->exclude_kernel;
	pa.exclude_user = a->exclude_user;
	pa.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	pa.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &pa, 0, -1, -1, 0);
	if (fd < 0 && (errno == EACCES || errno == EPERM || errno == ENOSYS)) {
		fprintf(stderr, "perf_event_open refused by the kernel (%s): skipping\n",
			strerror(errno));
		skip();
	}
	if (fd < 0)
		fail_msg("perf_event_open(type %u config %llu period/freq %llu freq %d): %s",
			 a->type, (unsigned long long)a->config,
			 (unsigned long long)a->sample_period, a->freq, strerror(errno));
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	/* spin for 20 ms of this thread's CPU time (wall time lies on a loaded VM) */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			spin += (uint64_t)i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	} while ((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 20000000L);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	assert_int_equal(read(fd, &count, sizeof(count)), sizeof(count));
	close(fd);
	/* cpu-clock counts nanoseconds while this thread runs: ~20 ms of CPU */
	assert_true(count > 10000000);
	assert_true(count < 200000000);
}

static void test_timer_so_live(void **state)
{
	const struct op_ext_descriptor *d;
	struct mock_host *mh = mock_host_new();
	void *h = open_plugin("timer", &d);
	struct op_event_req ev = { .size = sizeof(ev), .name = "TIMER", .kernel = true,
				   .user = true };
	struct op_perf_attr attr;
	char err[256] = "";

	(void)state;
	assert_int_equal(mock_host_init(mh, d, ""), 0);
	/* the default (4 kHz, as a frequency) */
	assert_int_equal(mh->models[0].desc.encode(mh->models[0].priv, &ev, &attr, err, sizeof(err)),
			 0);
	assert_true(attr.freq);
	live_open(&attr);
	/* an explicit period of 1 ms, user mode only */
	ev.count = 1000000;
	ev.kernel = false;
	assert_int_equal(mh->models[0].desc.encode(mh->models[0].priv, &ev, &attr, err, sizeof(err)),
			 0);
	assert_false(attr.freq);
	assert_true(attr.exclude_kernel);
	live_open(&attr);
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
		cmocka_unit_test(test_timer_so_live),
		cmocka_unit_test(test_kernel_so),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
