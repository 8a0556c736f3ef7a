/*
 * test_jitplug.c - plugins/jit through the real loader and the real buffer
 * sync, on jitdump files and perf maps this test writes (what a JIT would
 * write; the live end-to-end tests are tests/integration/jit*.sh): code
 * attributed by time across a move, lines given before (perf's order) or
 * after (libopagent's) the code, images written into the session and read
 * back by nm and addr2line (libbfd), a perf map read while it lives and
 * used after it is deleted, and hostile files refused and counted.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_jit.h"
#include "op_jitelf.h"
#include "sync_host.h"

#define A0 0x70000000ull /* jit_big's first address */
#define A1 0x70000800ull /* where it moves */
#define AS 0x70000100ull /* jit_small */

struct fx {
	struct sync_host h;
	char dir[PATH_MAX], sess[PATH_MAX + 8];
};

static void sh(const char *fmt, ...)
{
	char cmd[4 * PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0)
		fail_msg("command failed: %s", cmd);
}

static struct fx *fx_new(void)
{
	const char *b = getenv("OP_BUILDDIR");
	struct fx *f = calloc(1, sizeof(*f));
	char pd[PATH_MAX + 16];

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "%s/tests/unit/jitplug-XXXXXX", b ? b : ".");
	assert_non_null(mkdtemp(f->dir));
	assert_int_equal(chmod(f->dir, 0755), 0);
	sh("mkdir -p '%s/plugins' '%s/s' && cp '%s/plugins/.libs/jit.so' '%s/plugins/' && "
	   "chmod 0644 '%s/plugins/jit.so'",
	   f->dir, f->dir, b ? b : ".", f->dir, f->dir);
	snprintf(f->sess, sizeof(f->sess), "%s/s", f->dir);
	snprintf(pd, sizeof(pd), "%s/plugins", f->dir);
	assert_int_equal(sync_host_init(&f->h, pd, f->sess, 65536), 0);
	if (ext_load(f->h.l, "jit", "", "test"))
		fail_msg("jit plugin did not load:\n%s", sync_host_log(&f->h));
	sync_host_start(&f->h);
	return f;
}

static void fx_free(struct fx *f)
{
	sync_host_fini(&f->h);
	if (!getenv("OP_KEEP_TMP"))
		sh("rm -rf '%s'", f->dir);
	free(f);
}

/* the (cookie, key) a sample landed at: the last pair after it in the buffer */
static void sample_at(struct fx *f, uint32_t pid, uint64_t t, uint64_t pc, uint64_t *cookie,
		      uint64_t *key)
{
	const uint64_t *out = f->h.out;
	size_t i;

	sync_host_sample(&f->h, pid, t, pc);
	evb_flush(&f->h.w);
	assert_true(f->h.n >= 2);
	*key = out[f->h.n - 2];
	*cookie = 0;
	/* the image: the last COOKIE_SWITCH/ANON_SWITCH code before the pair */
	for (i = f->h.n - 2; i-- > 2;)
		if (out[i - 2] == EVB_ESCAPE &&
		    (out[i - 1] == EVB_COOKIE_SWITCH || out[i - 1] == EVB_ANON_SWITCH)) {
			*cookie = out[i + 1];
			break;
		}
}

/* --- a jitdump writer, as perf's spec lays the bytes out --- */

struct dump {
	FILE *fp;
};

static void d_open(struct dump *d, const char *path, uint32_t pid)
{
	struct op_jitdump_header h = { .magic = OP_JITDUMP_MAGIC,
				       .version = 1,
				       .total_size = sizeof(h),
				       .elf_mach = 62,
				       .pid = pid,
				       .timestamp = 1 };

	d->fp = fopen(path, "wb");
	assert_non_null(d->fp);
	fwrite(&h, sizeof(h), 1, d->fp);
}

static void d_load(struct dump *d, uint64_t t, uint32_t pid, uint64_t addr, uint64_t size,
		   uint64_t idx, const char *name)
{
	struct op_jitdump_load l = { 0 };
	uint8_t code[256];

	assert_true(size <= sizeof(code));
	memset(code, 0x90, sizeof(code));
	l.p.id = OP_JIT_CODE_LOAD;
	l.p.total_size = (uint32_t)(sizeof(l) + strlen(name) + 1 + size);
	l.p.timestamp = t;
	l.pid = l.tid = pid;
	l.vma = l.code_addr = addr;
	l.code_size = size;
	l.code_index = idx;
	fwrite(&l, sizeof(l), 1, d->fp);
	fwrite(name, strlen(name) + 1, 1, d->fp);
	fwrite(code, size, 1, d->fp);
}

static void d_move(struct dump *d, uint64_t t, uint32_t pid, uint64_t from, uint64_t to,
		   uint64_t size, uint64_t idx)
{
	struct op_jitdump_move m = { 0 };

	m.p.id = OP_JIT_CODE_MOVE;
	m.p.total_size = sizeof(m);
	m.p.timestamp = t;
	m.pid = m.tid = pid;
	m.vma = m.old_code_addr = from;
	m.new_code_addr = to;
	m.code_size = size;
	m.code_index = idx;
	fwrite(&m, sizeof(m), 1, d->fp);
}

static void d_debug(struct dump *d, uint64_t t, uint64_t code_addr, const char *file,
		    const uint64_t *addr, const uint32_t *line, size_t n)
{
	struct op_jitdump_debug_info di = { 0 };
	size_t i, size = sizeof(di);

	for (i = 0; i < n; i++)
		size += 16 + strlen(file) + 1;
	di.p.id = OP_JIT_CODE_DEBUG_INFO;
	di.p.total_size = (uint32_t)size;
	di.p.timestamp = t;
	di.code_addr = code_addr;
	di.nr_entry = n;
	fwrite(&di, sizeof(di), 1, d->fp);
	for (i = 0; i < n; i++) {
		uint32_t z = 0;

		fwrite(&addr[i], 8, 1, d->fp);
		fwrite(&line[i], 4, 1, d->fp);
		fwrite(&z, 4, 1, d->fp);
		fwrite(file, strlen(file) + 1, 1, d->fp);
	}
}

static void run(const char *cmd, char *out, size_t len)
{
	assert_int_equal(sync_host_popen(cmd, out, len), 0);
}

static void assert_has(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("expected \"%s\" in:\n%s", needle, hay);
}

static uint64_t stat_of(struct fx *f, const char *name)
{
	char *text = NULL, *p;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);
	char key[128];
	uint64_t v = UINT64_MAX;

	ext_print_stats(f->h.l, m);
	fclose(m);
	snprintf(key, sizeof(key), "\n%s: ", name);
	p = strstr(text, key);
	if (p)
		v = strtoull(p + strlen(key), NULL, 10);
	free(text);
	return v;
}

/*
 * perf's order (DEBUG_INFO before LOAD), a MOVE: samples before and after
 * the move land at one key of jit_big's image; the old address after the
 * move is anon again; the image names both functions and the lines.
 */
static void test_dump_move(void **state)
{
	struct fx *f = fx_new();
	uint32_t pid = (uint32_t)getpid();
	char dump[PATH_MAX + 64], img[PATH_MAX + 64], cmd[3 * PATH_MAX], out[4096];
	static const uint64_t big_addr[] = { A0, A0 + 0x10 };
	static const uint32_t big_line[] = { 10, 11 };
	static const uint64_t small_addr[] = { AS };
	static const uint32_t small_line[] = { 20 };
	uint64_t c1, k1, c2, k2, c3, k3, c4, k4, c5, k5;
	struct dump d;

	(void)state;
	snprintf(dump, sizeof(dump), "%s/jit-%u.dump", f->dir, pid);
	d_open(&d, dump, pid);
	d_debug(&d, 90, A0, "/src/big.js", big_addr, big_line, 2);
	d_load(&d, 100, pid, A0, 0x40, 1, "jit_big");
	d_load(&d, 110, pid, AS, 0x20, 2, "jit_small");
	d_move(&d, 200, pid, A0, A1, 0x40, 1);
	fclose(d.fp);
	/* lines after the code, as libopagent writes them */
	d.fp = fopen(dump, "ab");
	d_debug(&d, 120, AS, "/src/small.js", small_addr, small_line, 1);
	fclose(d.fp);

	sync_host_mmap(&f->h, pid, 50, 0x7f0000000000ull, 0x1000, dump);
	sync_host_mmap(&f->h, pid, 60, A0, 0x1000, "//anon");
	sample_at(f, pid, 150, A0 + 4, &c1, &k1);    /* before the move */
	sample_at(f, pid, 250, A1 + 4, &c2, &k2);    /* after, at the new place */
	sample_at(f, pid, 300, AS + 4, &c3, &k3);    /* jit_small */
	sample_at(f, pid, 260, A0 + 4, &c4, &k4);    /* the old place after the move */
	sample_at(f, pid, 160, A0 + 0x20, &c5, &k5); /* inside jit_big before the move */
	assert_int_equal(k1, OP_JITELF_TEXT_OFFSET + 4);
	assert_int_equal(k2, k1);
	assert_int_equal(c2, c1);
	assert_int_equal(k5, OP_JITELF_TEXT_OFFSET + 0x20);
	assert_int_equal(k3, OP_JITELF_TEXT_OFFSET + 0x40 + 4);
	assert_int_equal(c3, c1);
	assert_int_not_equal(c4, c1);
	assert_int_equal(k4, 4); /* anon: pc - region start */
	snprintf(img, sizeof(img), "%s/jit/%u.0.jo", f->sess, pid);
	assert_string_equal(cookie_path(&f->h.cookies, (op_cookie_t)c1), img);

	ext_session_event(f->h.l, OP_SESSION_DUMP, f->sess, NULL);
	snprintf(cmd, sizeof(cmd), "nm -n -S '%s'", img);
	run(cmd, out, sizeof(out));
	assert_has(out, "0000000000001000 0000000000000040 T jit_big\n");
	assert_has(out, "0000000000001040 0000000000000020 T jit_small\n");
	snprintf(cmd, sizeof(cmd), "addr2line -e '%s' 0x1000 0x1014 0x1044", img);
	run(cmd, out, sizeof(out));
	assert_string_equal(out, "/src/big.js:10\n/src/big.js:11\n/src/small.js:20\n");
	assert_int_equal(stat_of(f, "code_moves"), 1);
	assert_int_equal(stat_of(f, "samples_resolved"), 4);
	assert_int_equal(stat_of(f, "images_written"), 1);
	assert_int_equal(stat_of(f, "files_refused"), 0);
	fx_free(f);
}

/*
 * A perf map, read when the anon mapping appears, then deleted before the
 * process exits: the names stay. Code added to a live map after the first
 * read is found by the rate-limited re-read on a miss.
 */
static void test_perfmap(void **state)
{
	struct fx *f = fx_new();
	const uint32_t pid = 3999901;
	char map[64], img[PATH_MAX + 64], cmd[3 * PATH_MAX], out[4096];
	uint64_t c, k, c2, k2;
	FILE *fp;

	(void)state;
	snprintf(map, sizeof(map), "/tmp/perf-%u.map", pid);
	fp = fopen(map, "w");
	assert_non_null(fp);
	fprintf(fp, "%llx 40 map_fn_one\n", (unsigned long long)A0);
	fflush(fp);
	sync_host_mmap(&f->h, pid, 10, A0, 0x1000, "//anon");
	/* a line written after the first read, before its code runs */
	fprintf(fp, "%llx 20 map_fn_two\n", (unsigned long long)AS);
	fclose(fp);
	sample_at(f, pid, 20000000, A0 + 8, &c, &k);
	if (k != OP_JITELF_TEXT_OFFSET + 8)
		fail_msg("key %#llx maps %llu lines %llu fns %llu; log:\n%s", (unsigned long long)k,
			 (unsigned long long)stat_of(f, "maps_opened"),
			 (unsigned long long)stat_of(f, "map_lines"),
			 (unsigned long long)stat_of(f, "functions"), sync_host_log(&f->h));
	sample_at(f, pid, 40000000, AS + 8, &c2, &k2); /* a miss, re-read: found */
	assert_int_equal(c2, c);
	assert_int_equal(k2, OP_JITELF_TEXT_OFFSET + 0x40 + 8);
	unlink(map);
	sync_host_exit(&f->h, pid, 50000000);
	snprintf(img, sizeof(img), "%s/jit/%u.0.jo", f->sess, pid);
	snprintf(cmd, sizeof(cmd), "nm -n '%s'", img);
	run(cmd, out, sizeof(out));
	assert_string_equal(out, "0000000000001000 T map_fn_one\n0000000000001040 T map_fn_two\n");
	assert_int_equal(stat_of(f, "refreshes"), 1);
	/* the exited process is forgotten at the next dump; its image stays */
	ext_session_event(f->h.l, OP_SESSION_DUMP, f->sess, NULL);
	assert_int_equal(access(img, R_OK), 0);
	sample_at(f, pid, 60000000, A0 + 8, &c, &k);
	assert_int_equal(k, 8); /* the pid is unknown now: anon as before */
	fx_free(f);
}

/* hostile files: refused or counted, never read through a link, never fatal */
static void test_hostile(void **state)
{
	struct fx *f = fx_new();
	char p[PATH_MAX + 64], q[PATH_MAX + 64];
	uint64_t c, k;
	struct dump d;
	int fd;

	(void)state;
	/* a link named like a dump, to a root-only file */
	snprintf(q, sizeof(q), "%s/secret", f->dir);
	fd = open(q, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/jit-3999902.dump", f->dir);
	assert_int_equal(symlink(q, p), 0);
	sync_host_mmap(&f->h, 3999902, 10, 0x1000, 0x1000, p);
	assert_has(sync_host_log(&f->h), "jitdump");
	assert_has(sync_host_log(&f->h), "refused");
	/* a dump owned by another user than the process's (root: pid unknown to /proc) */
	snprintf(p, sizeof(p), "%s/jit-3999903.dump", f->dir);
	d_open(&d, p, 3999903);
	d_load(&d, 100, 3999903, A0, 0x40, 1, "stolen");
	fclose(d.fp);
	assert_int_equal(chown(p, 65534, 65534), 0);
	sync_host_mmap(&f->h, 3999903, 10, 0x1000, 0x1000, p);
	sync_host_mmap(&f->h, 3999903, 11, A0, 0x1000, "//anon");
	sample_at(f, 3999903, 200, A0 + 4, &c, &k);
	assert_int_equal(k, 4); /* not claimed */
	assert_has(sync_host_log(&f->h), "owned by uid 65534");
	/* a truncated dump: what is complete is used, the cut tail counted at exit */
	snprintf(p, sizeof(p), "%s/jit-3999904.dump", f->dir);
	d_open(&d, p, 3999904);
	d_load(&d, 100, 3999904, A0, 0x40, 1, "whole_fn");
	d_load(&d, 110, 3999904, AS, 0x20, 2, "cut_fn");
	fclose(d.fp);
	assert_int_equal(truncate(p, 40 + 56 + 9 + 0x40 + 30), 0);
	sync_host_mmap(&f->h, 3999904, 10, 0x1000, 0x1000, p);
	sync_host_mmap(&f->h, 3999904, 11, A0, 0x1000, "//anon");
	sample_at(f, 3999904, 200, A0 + 4, &c, &k);
	assert_int_equal(k, OP_JITELF_TEXT_OFFSET + 4);
	sync_host_exit(&f->h, 3999904, 300);
	assert_has(sync_host_log(&f->h), "truncated_tail=1");
	/* garbage: not a jitdump */
	snprintf(p, sizeof(p), "%s/jit-3999905.dump", f->dir);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "this is not a jitdump file at all, only text........", 52), 52);
	close(fd);
	sync_host_mmap(&f->h, 3999905, 10, 0x1000, 0x1000, p);
	assert_has(sync_host_log(&f->h), "bad_magic=1");
	/* oversized: a record claiming 2 GiB (the dump cannot be framed past it) */
	snprintf(p, sizeof(p), "%s/jit-3999908.dump", f->dir);
	d_open(&d, p, 3999908);
	{
		struct op_jitdump_rec_header rh = { .id = OP_JIT_CODE_LOAD,
						    .total_size = 0x7fffffff };

		fwrite(&rh, sizeof(rh), 1, d.fp);
	}
	fclose(d.fp);
	sync_host_mmap(&f->h, 3999908, 10, 0x1000, 0x1000, p);
	assert_has(sync_host_log(&f->h), "record_size=1");
	/* oversized: a perf map function of 1 GiB, above what one image holds */
	{
		FILE *m = fopen("/tmp/perf-3999907.map", "w");

		assert_non_null(m);
		fprintf(m, "%llx 40000000 huge_fn\n", (unsigned long long)A0);
		fclose(m);
		sync_host_mmap(&f->h, 3999907, 10, A0, 0x1000, "//anon");
		unlink("/tmp/perf-3999907.map");
		sample_at(f, 3999907, 200, A0 + 4, &c, &k);
		assert_int_equal(k, 4); /* not claimed */
		assert_int_equal(stat_of(f, "over_limits"), 1);
	}
	/* a dump named for another pid than the mapping process is not its dump */
	snprintf(p, sizeof(p), "%s/jit-1.dump", f->dir);
	sync_host_mmap(&f->h, 3999906, 10, 0x1000, 0x1000, p);
	assert_int_equal(stat_of(f, "files_refused"), 2);
	assert_int_equal(stat_of(f, "broken_sources"), 2);
	assert_true(stat_of(f, "input_defects") >= 2);
	/* nothing was written outside the session */
	{
		char cmd[3 * PATH_MAX], out[4096];

		snprintf(cmd, sizeof(cmd),
			 "cd '%s' && find . -newer plugins/jit.so -type f ! -path './s/*' | sort",
			 f->dir);
		run(cmd, out, sizeof(out));
		assert_string_equal(out, "./jit-3999903.dump\n./jit-3999904.dump\n"
					 "./jit-3999905.dump\n./jit-3999908.dump\n./secret\n");
	}
	fx_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_move),
		cmocka_unit_test(test_perfmap),
		cmocka_unit_test(test_hostile),
	};

	if (geteuid() != 0) {
		/* the hostile cases chown a file to another user */
		printf("SKIP: test_jitplug needs root (it plays a second user's files)\n");
		return 77;
	}
	return cmocka_run_group_tests_name("jitplug", tests, NULL, NULL);
}
