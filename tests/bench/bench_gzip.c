/*
 * bench_gzip.c - the gzip stage of opexport --format=pprof (issue 19) on its
 * own: a bare profile.proto (FILE, e.g. `zcat export.pb.gz`) cut into
 * stages of STAGE bytes (lib/profile/op_pprof.c's PBOUT_STAGE: 256 KiB),
 * each stage a whole gzip member as the threaded encoder writes it, by
 * zlib at levels 1..6 (and level 5 with op_pprof.c's former deflateTune
 * 8/16/64/16) and by libdeflate at levels 1..9. Per compressor: the
 * median CPU time over RUNS passes (one thread: the sum of what the
 * encoder's workers spend), the bytes, both against zlib level 5 tuned.
 * Every pass's output is inflated back (zlib, all members) and compared
 * with the input: a compressor that loses a byte fails the bench.
 * Usage: bench_gzip FILE [RUNS=5] [STAGE=262144]   (run by hand: bench_gzip.sh)
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <libdeflate.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <zlib.h>

struct comp {
	const char *name;
	int lib; /* 0 zlib, 1 libdeflate */
	int level;
	int tune; /* zlib: deflateTune 8/16/64/16 */
};

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* @in (@n bytes) as gzip members of @stage bytes each into @out; the bytes or 0 */
static size_t run_zlib(const struct comp *c, const uint8_t *in, size_t n, size_t stage,
		       uint8_t *out, size_t cap)
{
	z_stream z = { 0 };
	size_t len = 0;

	if (deflateInit2(&z, c->level, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return 0;
	for (size_t off = 0; off < n; off += stage) {
		size_t m = n - off < stage ? n - off : stage;

		if (deflateReset(&z) != Z_OK || (c->tune && deflateTune(&z, 8, 16, 64, 16) != Z_OK))
			goto fail;
		z.next_in = (Bytef *)in + off;
		z.avail_in = (uInt)m;
		z.next_out = out + len;
		z.avail_out = (uInt)(cap - len);
		if (deflate(&z, Z_FINISH) != Z_STREAM_END)
			goto fail;
		len = cap - z.avail_out;
	}
	deflateEnd(&z);
	return len;
fail:
	deflateEnd(&z);
	return 0;
}

static size_t run_libdeflate(const struct comp *c, const uint8_t *in, size_t n, size_t stage,
			     uint8_t *out, size_t cap)
{
	struct libdeflate_compressor *d = libdeflate_alloc_compressor(c->level);
	size_t len = 0;

	if (!d)
		return 0;
	for (size_t off = 0; off < n; off += stage) {
		size_t m = n - off < stage ? n - off : stage;
		size_t k = libdeflate_gzip_compress(d, in + off, m, out + len, cap - len);

		if (!k) {
			len = 0;
			break;
		}
		len += k;
	}
	libdeflate_free_compressor(d);
	return len;
}

/* every member of @gz inflated back equals @in */
static int check(const uint8_t *gz, size_t glen, const uint8_t *in, size_t n, uint8_t *tmp)
{
	z_stream z = { 0 };
	size_t got = 0;
	int zr;

	if (inflateInit2(&z, 16 + 15) != Z_OK)
		return -1;
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)glen;
	for (;;) {
		z.next_out = tmp + got;
		z.avail_out = (uInt)(n + 1 - got);
		zr = inflate(&z, Z_NO_FLUSH);
		got = n + 1 - z.avail_out;
		if (zr == Z_STREAM_END && z.avail_in) {
			inflateReset(&z); /* the next member */
			continue;
		}
		if (zr != Z_OK)
			break;
		if (!z.avail_out || !z.avail_in)
			break;
	}
	inflateEnd(&z);
	return zr == Z_STREAM_END && got == n && !memcmp(tmp, in, n) ? 0 : -1;
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const struct comp comps[] = {
		{ "zlib 5 tuned 8/16/64/16", 0, 5, 1 },
		{ "zlib 1", 0, 1, 0 },
		{ "zlib 2", 0, 2, 0 },
		{ "zlib 3", 0, 3, 0 },
		{ "zlib 4", 0, 4, 0 },
		{ "zlib 5", 0, 5, 0 },
		{ "zlib 6", 0, 6, 0 },
		{ "libdeflate 1", 1, 1, 0 },
		{ "libdeflate 2", 1, 2, 0 },
		{ "libdeflate 3", 1, 3, 0 },
		{ "libdeflate 4", 1, 4, 0 },
		{ "libdeflate 5", 1, 5, 0 },
		{ "libdeflate 6", 1, 6, 0 },
		{ "libdeflate 7", 1, 7, 0 },
		{ "libdeflate 8", 1, 8, 0 },
		{ "libdeflate 9", 1, 9, 0 },
	};
	const size_t ncomp = sizeof(comps) / sizeof(comps[0]);
	int runs = argc > 2 ? atoi(argv[2]) : 5;
	size_t stage = argc > 3 ? strtoul(argv[3], NULL, 0) : 262144;
	double base_cpu = 0, base_len = 0, *t;
	uint8_t *in, *out, *tmp;
	size_t n, cap;
	struct stat sb;
	FILE *f;

	if (argc < 2 || runs < 1 || stage < 1024) {
		fprintf(stderr, "usage: bench_gzip FILE [RUNS=5] [STAGE=262144]\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f || fstat(fileno(f), &sb) || !S_ISREG(sb.st_mode) || !sb.st_size) {
		fprintf(stderr, "bench_gzip: %s: %s\n", argv[1],
			f ? "not a regular non-empty file" : strerror(errno));
		return 2;
	}
	n = (size_t)sb.st_size;
	/* a member per stage, each within its bound: room for all with slack */
	cap = n + n / 8 + (n / stage + 1) * 1024;
	in = malloc(n);
	out = malloc(cap);
	tmp = malloc(n + 1);
	t = calloc((size_t)runs, sizeof(*t));
	if (!in || !out || !tmp || !t || fread(in, 1, n, f) != n) {
		fprintf(stderr, "bench_gzip: %s: cannot read (or no memory)\n", argv[1]);
		return 2;
	}
	fclose(f);
	printf("bench_gzip: %zu bytes of protobuf, %zu stages of %zu bytes, %d runs\n", n,
	       (n + stage - 1) / stage, stage, runs);
	printf("%-26s %10s %12s %8s %8s %8s\n", "compressor", "cpu ms", "bytes", "cpu/base",
	       "size/base", "ratio");
	for (size_t i = 0; i < ncomp; i++) {
		const struct comp *c = &comps[i];
		size_t len = 0;

		for (int r = 0; r < runs; r++) {
			double t0 = cpu_now();

			len = c->lib ? run_libdeflate(c, in, n, stage, out, cap) :
				       run_zlib(c, in, n, stage, out, cap);
			t[r] = cpu_now() - t0;
			if (!len || check(out, len, in, n, tmp)) {
				fprintf(stderr, "bench_gzip: %s: the output does not inflate back\n",
					c->name);
				return 1;
			}
		}
		qsort(t, (size_t)runs, sizeof(*t), dcmp);
		if (!i) {
			base_cpu = t[runs / 2];
			base_len = (double)len;
		}
		printf("%-26s %10.2f %12zu %8.2f %8.3f %8.2f\n", c->name, t[runs / 2] * 1e3, len,
		       base_cpu > 0 ? t[runs / 2] / base_cpu : 0, len / base_len,
		       (double)n / (double)len);
		fflush(stdout);
	}
	free(in);
	free(out);
	free(tmp);
	free(t);
	return 0;
}
