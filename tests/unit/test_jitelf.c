/*
 * test_jitelf.c - lib/op_jitelf: images written for JIT code, read back by
 * the real consumers: binutils' readelf (headers), nm (symbols) and
 * addr2line (libbfd's DWARF line lookup, what opreport -g and opannotate
 * use); refusals of malformed input.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_jitelf.h"

static char tmpdir[PATH_MAX];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_jitelf-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

/* run @cmd, its stdout into @out (NUL-terminated) */
static void run(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	assert_non_null(p);
	n = fread(out, 1, len - 1, p);
	out[n] = 0;
	assert_int_equal(pclose(p), 0);
}

static int write_image(const struct op_jitelf_image *img, const char *name, char *path,
		       size_t len, char *err, size_t err_len)
{
	int fd, rc;

	assert_true(snprintf(path, len, "%.*s/%s", (int)(len - 64), tmpdir, name) < (int)len);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	assert_true(fd >= 0);
	rc = op_jitelf_write(fd, img, err, err_len);
	close(fd);
	return rc;
}

static const uint8_t code_big[64] = { 0x55, 0x48, 0x89, 0xe5, 0x90, 0x90, 0x5d, 0xc3 };

static void test_symbols_lines(void **state)
{
	static const struct op_jitelf_line lines_big[] = {
		{ 0, 10, 0 }, { 4, 11, 0 }, { 6, 42, 1 },
	};
	static const struct op_jitelf_line lines_small[] = { { 0, 7, 1 }, { 8, 3, 1 } };
	const char *files[] = { "/src/jit_big.js", "/src/other.js" };
	const struct op_jitelf_func funcs[] = {
		{ .name = "jit_big", .off = 0, .size = 64, .code = code_big, .lines = lines_big,
		  .nr_lines = 3 },
		{ .name = "jit_small", .off = 64, .size = 32, .lines = lines_small, .nr_lines = 2 },
		{ .name = "no_lines", .off = 128, .size = 16 },
	};
	const struct op_jitelf_image img = { .text_size = 144, .funcs = funcs, .nr_funcs = 3,
					     .files = files, .nr_files = 2, .cu_name = "jit-1" };
	char path[PATH_MAX], cmd[PATH_MAX + 128], out[8192], err[256];
	uint8_t buf[8];
	struct stat st;
	int fd;

	(void)state;
	assert_int_equal(write_image(&img, "a.jo", path, sizeof(path), err, sizeof(err)), 0);
	/* the code bytes are where the key says */
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, buf, 8, OP_JITELF_TEXT_OFFSET), 8);
	assert_memory_equal(buf, code_big, 8);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);

	snprintf(cmd, sizeof(cmd), "readelf -hS '%s'", path);
	run(cmd, out, sizeof(out));
	assert_non_null(strstr(out, "DYN (Shared object file)"));
	assert_non_null(strstr(out, ".debug_line"));

	snprintf(cmd, sizeof(cmd), "nm -n -S '%s'", path);
	run(cmd, out, sizeof(out));
	assert_non_null(strstr(out, "0000000000001000 0000000000000040 T jit_big\n"));
	assert_non_null(strstr(out, "0000000000001040 0000000000000020 T jit_small\n"));
	assert_non_null(strstr(out, "0000000000001080 0000000000000010 T no_lines\n"));

	/* libbfd finds the lines (addr2line is a libbfd program) */
	snprintf(cmd, sizeof(cmd), "addr2line -f -e '%s' 0x1000 0x1005 0x1007 0x1041 0x1049 0x1081",
		 path);
	run(cmd, out, sizeof(out));
	assert_string_equal(out, "jit_big\n/src/jit_big.js:10\n"
				 "jit_big\n/src/jit_big.js:11\n"
				 "jit_big\n/src/other.js:42\n"
				 "jit_small\n/src/other.js:7\n"
				 "jit_small\n/src/other.js:3\n"
				 "no_lines\n??:?\n");
}

/* no lines: no debug sections; code not given: a hole of zeros */
static void test_no_lines_no_code(void **state)
{
	const struct op_jitelf_func funcs[] = {
		{ .name = "perfmap_fn", .off = 0, .size = 4096 },
	};
	const struct op_jitelf_image img = { .text_size = 4096, .funcs = funcs, .nr_funcs = 1 };
	char path[PATH_MAX], cmd[PATH_MAX + 64], out[8192], err[256];
	uint8_t buf[16], zero[16] = { 0 };
	int fd;

	(void)state;
	assert_int_equal(write_image(&img, "b.jo", path, sizeof(path), err, sizeof(err)), 0);
	snprintf(cmd, sizeof(cmd), "readelf -SW '%s'", path);
	run(cmd, out, sizeof(out));
	assert_null(strstr(out, ".debug"));
	assert_non_null(strstr(out, ".symtab"));
	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	run(cmd, out, sizeof(out));
	assert_string_equal(out, "0000000000001000 T perfmap_fn\n");
	fd = open(path, O_RDONLY);
	assert_int_equal(pread(fd, buf, 16, OP_JITELF_TEXT_OFFSET + 100), 16);
	assert_memory_equal(buf, zero, 16);
	close(fd);
}

static void test_refusals(void **state)
{
	const char *files[] = { "f" };
	const struct op_jitelf_line bad_line[] = { { 0, 1, 3 } };
	const struct op_jitelf_line past_end[] = { { 40, 1, 0 } };
	const struct op_jitelf_func overlap[] = { { .name = "a", .off = 0, .size = 32 },
						  { .name = "b", .off = 16, .size = 32 } };
	const struct op_jitelf_func outside[] = { { .name = "a", .off = 0, .size = 64 } };
	const struct op_jitelf_func noname[] = { { .name = "", .off = 0, .size = 8 } };
	const struct op_jitelf_func badfile[] = {
		{ .name = "a", .off = 0, .size = 8, .lines = bad_line, .nr_lines = 1 }
	};
	const struct op_jitelf_func badoff[] = {
		{ .name = "a", .off = 0, .size = 8, .lines = past_end, .nr_lines = 1 }
	};
	struct {
		struct op_jitelf_image img;
		int rc;
		const char *msg;
	} cases[] = {
		{ { .text_size = 64, .funcs = overlap, .nr_funcs = 2 }, -EINVAL, "overlapping" },
		{ { .text_size = 32, .funcs = outside, .nr_funcs = 1 }, -EINVAL, "outside .text" },
		{ { .text_size = 8, .funcs = noname, .nr_funcs = 1 }, -EINVAL, "has no name" },
		{ { .text_size = 8, .funcs = badfile, .nr_funcs = 1, .files = files, .nr_files = 1 },
		  -EINVAL, "names file 3 of 1" },
		{ { .text_size = 8, .funcs = badoff, .nr_funcs = 1, .files = files, .nr_files = 1 },
		  -EINVAL, "outside the function" },
		{ { .text_size = OP_JITELF_MAX_TEXT + 1 }, -EFBIG, "is above" },
	};
	char path[PATH_MAX], err[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = 0;
		assert_int_equal(write_image(&cases[i].img, "bad.jo", path, sizeof(path), err,
					     sizeof(err)),
				 cases[i].rc);
		if (!strstr(err, cases[i].msg))
			fail_msg("case %zu: expected \"%s\" in \"%s\"", i, cases[i].msg, err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbols_lines),
		cmocka_unit_test(test_no_lines_no_code),
		cmocka_unit_test(test_refusals),
	};

	return cmocka_run_group_tests_name("jitelf", tests, setup, teardown);
}
