/*
 * bench_sync.c - cost of the daemon's aggregation stages per sample:
 * buffer sync alone (event buffer discarded), then sync + trans + sfile +
 * odb into real sample files, on a synthetic stream (processes with a
 * binary and libraries, context switches every ~N samples, two CPUs,
 * kernel samples through a fake resolver). Run by hand:
 *   tests/bench/bench_sync [samples=5000000] [procs=64] [run=50]
 * (tests/bench/bench_sync.sh puts the numbers next to perf report's.)
 * SPDX-License-Identifier: MIT
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "session.h"
#include "sfile.h"
#include "sync.h"
#include "trans.h"

static op_cookie_t kcookie;

static int kresolve(void *priv, uint64_t pc, struct op_kernel_image *out)
{
	(void)priv;
	if (pc < 0xffffffff81000000ull || pc >= 0xffffffff83000000ull)
		return -1;
	out->cookie = kcookie;
	out->start = 0xffffffff81000000ull;
	out->end = 0xffffffff83000000ull;
	return 0;
}

static int discard(void *priv, const uint64_t *w, size_t n)
{
	(void)w;
	*(size_t *)priv += n;
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;

static uint64_t xr(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* the same stream for both runs */
static void feed(struct sync_ctx *s, unsigned long samples, unsigned procs, unsigned run)
{
	struct op_record r;
	char path[64];
	unsigned p, m;
	unsigned long i;

	for (p = 0; p < procs; p++) {
		memset(&r, 0, sizeof(r));
		r.type = OP_REC_COMM;
		r.comm.pid = r.comm.tid = 1000 + p;
		r.comm.exec = true;
		snprintf(path, sizeof(path), "app%u", p % 16);
		r.comm.comm = path;
		sync_record(s, &r);
		for (m = 0; m < 8; m++) {
			memset(&r, 0, sizeof(r));
			r.type = OP_REC_MMAP;
			r.mmap.pid = r.mmap.tid = 1000 + p;
			r.mmap.start = 0x400000ull + m * 0x1000000ull;
			r.mmap.len = 0x100000;
			r.mmap.cpumode = OP_CPUMODE_USER;
			r.mmap.exec = true;
			if (m == 0)
				snprintf(path, sizeof(path), "/usr/bin/app%u", p % 16);
			else
				snprintf(path, sizeof(path), "/usr/lib/lib%u.so", m);
			r.mmap.filename = path;
			sync_record(s, &r);
		}
	}
	memset(&r, 0, sizeof(r));
	r.type = OP_REC_SAMPLE;
	for (i = 0; i < samples; i++) {
		uint64_t x = xr();

		if (i % run == 0) {
			p = (unsigned)(x % procs);
			r.sample.pid = 1000 + p;
			r.sample.tid = 1000 + p;
			r.sample.cpu = (uint32_t)((x >> 8) & 1);
		}
		if ((x >> 16) % 10 == 0) {
			r.sample.cpumode = OP_CPUMODE_KERNEL;
			r.sample.ip = 0xffffffff81000000ull + ((x >> 20) % 4096) * 16;
		} else {
			r.sample.cpumode = OP_CPUMODE_USER;
			m = (x >> 20) % 10 < 6 ? 0 : 1 + (unsigned)((x >> 24) % 7);
			r.sample.ip = 0x400000ull + m * 0x1000000ull + ((x >> 32) % 512) * 16;
		}
		sync_record(s, &r);
	}
}

int main(int argc, char **argv)
{
	unsigned long samples = argc > 1 ? strtoul(argv[1], NULL, 0) : 5000000;
	unsigned procs = argc > 2 ? (unsigned)atoi(argv[2]) : 64;
	unsigned run = argc > 3 ? (unsigned)atoi(argv[3]) : 50;
	char root[] = "bench-sync-XXXXXX", cur[64];
	struct sfile_config cfg = { 0 };
	struct cookie_table cookies;
	struct ext_registry reg;
	struct sfile_table sft;
	struct op_log lg;
	struct trans_ctx tr;
	struct op_stats st;
	struct op_emit w;
	struct sync_ctx s;
	size_t words = 0;
	double t0, t1, t2;
	int fd;

	if (!procs || !run) {
		fprintf(stderr, "usage: bench_sync [samples] [procs>0] [run>0]\n");
		return 2;
	}
	memset(&reg, 0, sizeof(reg));
	memset(&st, 0, sizeof(st));
	reg.has_kernel = true;
	reg.kernel.ops.resolve = kresolve;

	/* 1. sync only */
	cookie_init(&cookies);
	kcookie = cookie_intern(&cookies, "vmlinux", 7, OP_IMAGE_KERNEL, false);
	evb_init(&w, 64 * 1024, discard, &words);
	sync_init(&s, &cookies, &w, &reg, &st);
	t0 = now();
	feed(&s, samples, procs, run);
	evb_flush(&w);
	t1 = now();
	sync_free(&s);
	evb_free(&w);
	cookie_free(&cookies);

	/* 2. sync + trans + sfile + odb */
	if (!mkdtemp(root))
		return 1;
	snprintf(cur, sizeof(cur), "%s/current", root);
	mkdir(cur, 0755);
	fd = open(cur, O_RDONLY | O_DIRECTORY);
	memset(&st, 0, sizeof(st));
	cookie_init(&cookies);
	kcookie = cookie_intern(&cookies, "vmlinux", 7, OP_IMAGE_KERNEL, false);
	cfg.current_dirfd = fd;
	cfg.separate = OP_SEP_LIB | OP_SEP_KERNEL;
	cfg.max_open_files = 512;
	cfg.cpu_type = 4;
	strcpy(cfg.events[0].name, "TIMER");
	cfg.nr_events = 1;
	log_init(&lg, stderr);
	sfile_init(&sft, &cfg, &cookies, &reg, &st, &lg);
	trans_init(&tr, &sft, &reg, &st);
	evb_init(&w, 64 * 1024, trans_buffer, &tr);
	sync_init(&s, &cookies, &w, &reg, &st);
	t2 = now();
	feed(&s, samples, procs, run);
	evb_flush(&w);
	sfile_sync_all(&sft);
	t2 = now() - t2;
	printf("samples %lu, procs %u, context switch every %u samples\n", samples, procs, run);
	printf("sync only:            %.1f ns/sample (%.2f event-buffer words/sample)\n",
	       (t1 - t0) * 1e9 / samples, (double)words / samples);
	printf("sync+trans+sfile+odb: %.1f ns/sample, %llu sample files, %llu lost\n",
	       t2 * 1e9 / samples, (unsigned long long)st.v[STAT_SFILE_OPENS],
	       (unsigned long long)(st.v[STAT_LOST_SAMPLEFILE] + st.v[STAT_LOST_NO_MAPPING]));
	trans_forget_sfile(&tr);
	sfile_free(&sft);
	sync_free(&s);
	evb_free(&w);
	cookie_free(&cookies);
	close(fd);
	session_rm_tree(AT_FDCWD, root);
	return 0;
}
