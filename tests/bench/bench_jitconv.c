/*
 * bench_jitconv.c - what JIT support costs the daemon (issue 18), through the
 * real loader, buffer sync and plugins/jit: (1) conversion, ns per 1000 JIT
 * functions to read a jitdump of N functions (with code and 4 line entries
 * each) and write its ELF image; (2) ns per sample for 1 M samples in anon
 * regions: claimed by the plugin (JIT code of a process with a dump), and
 * the same samples without the plugin (today's anon attribution). Run by
 * hand from the build directory: tests/bench/bench_jitconv [FUNCS=100000]
 * [SAMPLES=1000000]. Compare with perf: tests/bench/README.md.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "op_jit.h"
#include "sync_host.h"

#define BASE 0x7f0000000000ull
#define FN_SIZE 64u

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* a host over @dir/s, the jit plugin loaded when @plugin; 0 or -1 */
static int bench_init(struct sync_host *h, const char *dir, bool plugin)
{
	const char *pd = getenv("OP_PLUGIN_DIR");
	static char sess[PATH_MAX];

	snprintf(sess, sizeof(sess), "%s/s", dir);
	if (sync_host_init(h, pd ? pd : "plugins/.libs", sess, 0))
		return -1;
	if (plugin && ext_load(h->l, "jit", "", "bench")) {
		fputs(sync_host_log(h), stderr);
		return -1;
	}
	sync_host_start(h);
	return 0;
}

/* a dump of @n functions, each FN_SIZE bytes of code and 4 lines, at BASE + i * FN_SIZE */
static int write_dump(const char *path, uint32_t pid, uint32_t n)
{
	struct op_jitdump_header h = { .magic = OP_JITDUMP_MAGIC,
				       .version = 1,
				       .total_size = sizeof(h),
				       .elf_mach = 62,
				       .pid = pid };
	FILE *f = fopen(path, "wb");
	uint8_t code[FN_SIZE];
	char name[32];
	uint32_t i, k;

	if (!f)
		return -1;
	memset(code, 0x90, sizeof(code));
	fwrite(&h, sizeof(h), 1, f);
	for (i = 0; i < n; i++) {
		struct op_jitdump_debug_info di = { 0 };
		struct op_jitdump_load l = { 0 };
		uint64_t a = BASE + (uint64_t)i * FN_SIZE;
		static const char file[] = "/src/bench.js";

		di.p.id = OP_JIT_CODE_DEBUG_INFO;
		di.p.total_size = (uint32_t)(sizeof(di) + 4 * (16 + sizeof(file)));
		di.p.timestamp = 1;
		di.code_addr = a;
		di.nr_entry = 4;
		fwrite(&di, sizeof(di), 1, f);
		for (k = 0; k < 4; k++) {
			uint64_t ea = a + k * 16;
			uint32_t line = 10 + k, z = 0;

			fwrite(&ea, 8, 1, f);
			fwrite(&line, 4, 1, f);
			fwrite(&z, 4, 1, f);
			fwrite(file, sizeof(file), 1, f);
		}
		snprintf(name, sizeof(name), "jit_fn_%u", i);
		l.p.id = OP_JIT_CODE_LOAD;
		l.p.total_size = (uint32_t)(sizeof(l) + strlen(name) + 1 + FN_SIZE);
		l.p.timestamp = 2;
		l.pid = l.tid = pid;
		l.vma = l.code_addr = a;
		l.code_size = FN_SIZE;
		l.code_index = i;
		fwrite(&l, sizeof(l), 1, f);
		fwrite(name, strlen(name) + 1, 1, f);
		fwrite(code, FN_SIZE, 1, f);
	}
	return fclose(f);
}

/*
 * ns per sample for @n samples of @pid over @funcs functions: uniformly
 * (the worst case: every sample in another function, cache misses), or
 * @skewed as profiles are (90 % in 1 % of the functions, in runs of 8
 * samples in one function)
 */
static double run_samples(struct sync_host *b, uint32_t pid, uint32_t funcs, uint32_t n, bool skewed)
{
	struct op_record r = { .type = OP_REC_SAMPLE };
	uint64_t t0, x = 88172645463325252ull;
	uint32_t i;

	r.sample.size = sizeof(r.sample);
	r.sample.pid = r.sample.tid = pid;
	r.sample.cpumode = OP_CPUMODE_USER;
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		uint64_t fn;

		if (!skewed || i % 8 == 0) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		fn = x % funcs;
		if (skewed && (x >> 32) % 10)
			fn = x % (funcs / 100 ? funcs / 100 : 1);
		r.time = r.sample.time = 1000 + i;
		r.sample.ip = BASE + fn * FN_SIZE + (x >> 40) % FN_SIZE;
		sync_record(&b->s, &r);
	}
	evb_flush(&b->w);
	return (double)(now_ns() - t0) / n;
}

int main(int argc, char **argv)
{
	uint32_t funcs = argc > 1 ? (uint32_t)strtoul(argv[1], NULL, 10) : 100000;
	uint32_t samples = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) : 1000000;
	uint32_t pid = (uint32_t)getpid();
	char dir[] = "/tmp/bench_jitconv-XXXXXX", dump[PATH_MAX], cmd[PATH_MAX + 16];
	uint64_t t0, t_read, t_write;
	struct sync_host b;
	double claimed, anon, claimed_sk, anon_sk;
	struct stat sb;

	if (!funcs || !samples || !mkdtemp(dir)) {
		fprintf(stderr, "usage: bench_jitconv [FUNCS] [SAMPLES]\n");
		return 2;
	}
	snprintf(dump, sizeof(dump), "%s/s", dir);
	mkdir(dump, 0755);
	snprintf(dump, sizeof(dump), "%s/jit-%u.dump", dir, pid);
	if (write_dump(dump, pid, funcs))
		return 1;

	/* 1. conversion: read the dump (at its MMAP) and write the image (at a dump) */
	if (bench_init(&b, dir, true)) {
		fprintf(stderr, "bench_jitconv: the jit plugin did not load (OP_PLUGIN_DIR?)\n");
		return 1;
	}
	t0 = now_ns();
	sync_host_mmap(&b, pid, 1, 0x1000, 0x1000, dump);
	t_read = now_ns() - t0;
	sync_host_mmap(&b, pid, 1, BASE, (uint64_t)funcs * FN_SIZE, "//anon");
	t0 = now_ns();
	ext_session_event(b.l, OP_SESSION_DUMP, b.core.session_dir, NULL);
	t_write = now_ns() - t0;
	snprintf(cmd, sizeof(cmd), "%s/s/jit/%u.0.jo", dir, pid);
	if (stat(cmd, &sb)) {
		fprintf(stderr, "bench_jitconv: no image written\n");
		return 1;
	}
	printf("conversion of %u functions (%u B code, 4 lines each): read %.1f ms, image %.1f ms "
	       "(%lld bytes)\n",
	       funcs, FN_SIZE, t_read / 1e6, t_write / 1e6, (long long)sb.st_size);
	printf("RESULT conversion: %.0f us per 1000 functions (read %.0f + write %.0f)\n",
	       (t_read + t_write) / 1e3 / funcs * 1000, t_read / 1e3 / funcs * 1000,
	       t_write / 1e3 / funcs * 1000);

	/* 2. samples in the anon region: claimed by the plugin ... */
	run_samples(&b, pid, funcs, samples / 10, false); /* warm */
	claimed = run_samples(&b, pid, funcs, samples, false);
	claimed_sk = run_samples(&b, pid, funcs, samples, true);
	sync_host_fini(&b);
	/* ... and the same samples without it (anon) */
	if (bench_init(&b, dir, false))
		return 1;
	sync_host_mmap(&b, pid, 1, BASE, (uint64_t)funcs * FN_SIZE, "//anon");
	run_samples(&b, pid, funcs, samples / 10, false);
	anon = run_samples(&b, pid, funcs, samples, false);
	anon_sk = run_samples(&b, pid, funcs, samples, true);
	sync_host_fini(&b);
	printf("RESULT anon samples, uniform over %u functions: %.1f ns/sample claimed by "
	       "plugins/jit, %.1f as anon without it (%.2fx); %.0f ms per 1 M samples\n",
	       funcs, claimed, anon, claimed / anon, claimed);
	printf("RESULT anon samples, skewed (90 %% in 1 %%, runs of 8): %.1f ns/sample claimed, %.1f "
	       "as anon (%.2fx); %.0f ms per 1 M samples\n",
	       claimed_sk, anon_sk, claimed_sk / anon_sk, claimed_sk);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? 1 : 0;
}
