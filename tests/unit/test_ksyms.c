/*
 * test_ksyms.c - lib/op_ksyms: the kallsyms and modules line parsers, by
 * table over the symbol types and the line shapes (malformed lines, long
 * names, module brackets), and the rules the kernel plugin and opreport
 * share: what a function is, which image a symbol's key is relative to,
 * where the kernel image starts.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_ksyms.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* kallsyms lines                                                      */
/* ------------------------------------------------------------------ */

static void test_parse_kallsyms_lines(void **state)
{
	static const struct {
		const char *line;
		int rc;
		uint64_t addr;
		char type;
		const char *name, *module;
	} cases[] = {
		{ "ffffffff81000000 T _text\n", 0, 0xffffffff81000000ull, 'T', "_text", NULL },
		{ "ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n", 0,
		  0xffffffffc0201000ull, 't', "ftrace_trampoline", "__builtin__ftrace" },
		{ "0000000000000000 W x [m]", 0, 0, 'W', "x", "m" },
		{ "ffffffffc0001000 w weak_fn\t[mod]\n", 0, 0xffffffffc0001000ull, 'w', "weak_fn",
		  "mod" },
		{ "1 a b", 0, 1, 'a', "b", NULL },
		{ "ffffffff81000000 T name\r\n", 0, 0xffffffff81000000ull, 'T', "name", NULL },
		{ "ffffffff81000000 T name \n", 0, 0xffffffff81000000ull, 'T', "name", NULL },
		{ "ffffffff81000000 T name\t[m]\t\n", 0, 0xffffffff81000000ull, 'T', "name", "m" },
		{ "ffffffff81000000 T name  \t [m]\r\n", 0, 0xffffffff81000000ull, 'T', "name", "m" },
		/* a name may hold any non-blank byte, brackets included */
		{ "ffffffff81000000 t a]b[c\n", 0, 0xffffffff81000000ull, 't', "a]b[c", NULL },
		{ "ffffffff81000000 t _ZN4core3fmt5write17h0123456789abcdefE\n", 0,
		  0xffffffff81000000ull, 't', "_ZN4core3fmt5write17h0123456789abcdefE", NULL },
		{ "FFFFFFFF81000000 T upper_hex\n", 0, 0xffffffff81000000ull, 'T', "upper_hex", NULL },
		/* empty and truncated lines */
		{ "", -EINVAL, 0, 0, NULL, NULL },
		{ "\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff81000000\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff81000000 T\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff81000000 T \n", -EINVAL, 0, 0, NULL, NULL },
		/* the separators are one blank each */
		{ "ffffffff81000000  T x\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff81000000\tT x\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff81000000 T  x\n", -EINVAL, 0, 0, NULL, NULL },
		{ " ffffffff81000000 T x\n", -EINVAL, 0, 0, NULL, NULL },
		/* the type is one letter */
		{ "ffffffff81000000 1 x\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff81000000 ? x\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff81000000 TT x\n", -EINVAL, 0, 0, NULL, NULL },
		/* the address: 1..16 hex digits */
		{ "1ffffffff81000000 T x\n", -EINVAL, 0, 0, NULL, NULL },
		{ "g T x\n", -EINVAL, 0, 0, NULL, NULL },
		{ "0x81000000 T x\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff8100zz00 T x\n", -EINVAL, 0, 0, NULL, NULL },
		/* after the name only one [module] */
		{ "ffffffff81000000 T x y\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff81000000 T x [m\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff81000000 T x m]\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff81000000 T x\tm\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff81000000 T x []\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff81000000 T x [m] z\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff81000000 T x [m a]\n", -EINVAL, 0, 0, NULL, NULL },
		{ "ffffffff81000000 T x [m] [n]\n", -EINVAL, 0, 0, NULL, NULL },
		/* a module name is what /proc/modules shows, brackets included */
		{ "ffffffff81000000 T x [m]]\n", 0, 0xffffffff81000000ull, 'T', "x", "m]" },
		{ "ffffffff81000000 T x [[m]\n", 0, 0xffffffff81000000ull, 'T', "x", "[m" },
		{ "ffffffff81000000 T x [m][n]\n", 0, 0xffffffff81000000ull, 'T', "x", "m][n" },
		{ "ffffffffc0000100 t evil\x1b]0;t\x07fn\t[mod\x1b[2J]\n", 0, 0xffffffffc0000100ull,
		  't', "evil\x1b]0;t\x07fn", "mod\x1b[2J" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct op_ksym_line k;
		int rc = op_ksyms_parse_line(cases[i].line, &k);

		if (rc != cases[i].rc)
			fail_msg("kallsyms line %zu \"%s\": rc %d, expected %d", i, cases[i].line, rc,
				 cases[i].rc);
		if (rc)
			continue;
		assert_int_equal(k.addr, cases[i].addr);
		assert_int_equal(k.type, cases[i].type);
		assert_int_equal(k.name_len, strlen(cases[i].name));
		assert_memory_equal(k.name, cases[i].name, k.name_len);
		if (cases[i].module) {
			assert_int_equal(k.module_len, strlen(cases[i].module));
			assert_memory_equal(k.module, cases[i].module, k.module_len);
		} else {
			assert_null(k.module);
		}
	}
}

/*
 * Every byte as the type: a letter parses, anything else does not; t, T,
 * w and W are functions (perf's kallsyms__is_function()), the rest (data,
 * bss, rodata, absolute, weak objects, undefined, debugging) are not.
 */
static void test_symbol_types(void **state)
{
	static const struct {
		char type;
		bool text;
	} letters[] = {
		{ 'T', true },  { 't', true },  { 'W', true },  { 'w', true },
		{ 'D', false }, { 'd', false }, { 'B', false }, { 'b', false },
		{ 'R', false }, { 'r', false }, { 'A', false }, { 'a', false },
		{ 'V', false }, { 'v', false }, { 'U', false }, { 'u', false },
		{ 'N', false }, { 'n', false }, { 'G', false }, { 'g', false },
		{ 'S', false }, { 's', false }, { 'C', false }, { 'c', false },
		{ 'i', false }, { 'I', false }, { 'p', false }, { 'P', false },
	};
	char line[64];
	size_t i;
	int c;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(letters); i++) {
		struct op_ksym_line k;

		snprintf(line, sizeof(line), "ffffffff81000000 %c sym\n", letters[i].type);
		assert_int_equal(op_ksyms_parse_line(line, &k), 0);
		assert_int_equal(k.type, letters[i].type);
		if (op_ksyms_is_text(k.type) != letters[i].text)
			fail_msg("type '%c': is_text %d, expected %d", letters[i].type,
				 op_ksyms_is_text(k.type), letters[i].text);
	}
	for (c = 1; c < 256; c++) {
		struct op_ksym_line k;
		bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');

		snprintf(line, sizeof(line), "ffffffff81000000 %c sym\n", c);
		if ((op_ksyms_parse_line(line, &k) == 0) != letter)
			fail_msg("type byte 0x%02x: parsed %s", c, letter ? "no" : "yes");
		if (op_ksyms_is_text((char)c) != (c == 't' || c == 'T' || c == 'w' || c == 'W'))
			fail_msg("type byte 0x%02x: is_text wrong", c);
	}
}

/*
 * Names of any length, with and without a module: the kernel's own limit
 * (KSYM_NAME_LEN, 512 since Rust) is not the parser's to enforce, and a
 * name is never cut short.
 */
static void test_long_names(void **state)
{
	static const size_t lens[] = { 1, 127, 255, 511, 512, 4095, 65536 };
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(lens); i++) {
		size_t n = lens[i], cap = n + 64;
		char *line = malloc(cap);
		struct op_ksym_line k;
		int mod;

		assert_non_null(line);
		for (mod = 0; mod < 2; mod++) {
			int off = snprintf(line, cap, "ffffffffc0001000 t ");

			memset(line + off, 'n', n);
			snprintf(line + off + n, cap - off - n, "%s\n", mod ? "\t[m]" : "");
			assert_int_equal(op_ksyms_parse_line(line, &k), 0);
			assert_int_equal(k.name_len, n);
			assert_ptr_equal(k.name, line + off);
			if (mod) {
				assert_int_equal(k.module_len, 1);
				assert_int_equal(k.module[0], 'm');
			} else {
				assert_null(k.module);
			}
		}
		/* a long module name too */
		{
			int off = snprintf(line, cap, "ffffffffc0001000 t f [");

			memset(line + off, 'm', n);
			snprintf(line + off + n, cap - off - n, "]\n");
			assert_int_equal(op_ksyms_parse_line(line, &k), 0);
			assert_int_equal(k.module_len, n);
			/* the same without its closing bracket */
			line[off + n] = '\n';
			line[off + n + 1] = '\0';
			assert_int_equal(op_ksyms_parse_line(line, &k), -EINVAL);
		}
		free(line);
	}
}

/* The parse stops at a NUL: the caller, who knows the length, refuses such a line. */
static void test_nul_ends_the_parse(void **state)
{
	static const char line[] = "ffffffff81000000 T name\0junk [m] x\n";
	struct op_ksym_line k;

	(void)state;
	assert_int_equal(op_ksyms_parse_line(line, &k), 0);
	assert_int_equal(k.name_len, 4);
	assert_null(k.module);
	assert_non_null(memchr(line, '\0', sizeof(line) - 1));
}

/* ------------------------------------------------------------------ */
/* modules lines                                                       */
/* ------------------------------------------------------------------ */

static void test_parse_modules_lines(void **state)
{
	static const struct {
		const char *line;
		int rc;
		const char *name, *state;
		uint64_t size, addr;
	} cases[] = {
		{ "ext4 1036288 1 - Live 0xffffffffc0345000\n", 0, "ext4", "Live", 1036288,
		  0xffffffffc0345000ull },
		{ "modb 16384 2 moda, Live 0xffffffffc0100000 (OE)\n", 0, "modb", "Live", 16384,
		  0xffffffffc0100000ull },
		{ "x 1 0 - Loading 0x0000000000000000", 0, "x", "Loading", 1, 0 },
		{ "x 1 0 - Live 0X1000\n", 0, "x", "Live", 1, 0x1000 },
		{ "x  1\t0 - Unloading 0x1000 (P)\n", 0, "x", "Unloading", 1, 0x1000 },
		{ "x 1 0 - Live\n", -EINVAL, NULL, NULL, 0, 0 },
		{ "x abc 0 - Live 0x1000\n", -EINVAL, NULL, NULL, 0, 0 },
		{ "x 1 -1 - Live 0x1000\n", -EINVAL, NULL, NULL, 0, 0 },
		{ "x 1 0 - Live 1000\n", -EINVAL, NULL, NULL, 0, 0 },
		{ "x 1 0 - Live 0x\n", -EINVAL, NULL, NULL, 0, 0 },
		{ "x 1 0 - Live 0x10000000000000000\n", -EINVAL, NULL, NULL, 0, 0 },
		{ "x 1 0 - Live 0x1000g\n", -EINVAL, NULL, NULL, 0, 0 },
		{ "x 1 0 - Live 0x1000 junk\n", -EINVAL, NULL, NULL, 0, 0 },
		{ "x 99999999999999999999999 0 - Live 0x1000\n", -EINVAL, NULL, NULL, 0, 0 },
		{ "", -EINVAL, NULL, NULL, 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct op_kmod_line m;
		int rc = op_kmods_parse_line(cases[i].line, &m);

		if (rc != cases[i].rc)
			fail_msg("modules line %zu \"%s\": rc %d, expected %d", i, cases[i].line, rc,
				 cases[i].rc);
		if (rc)
			continue;
		assert_int_equal(m.name_len, strlen(cases[i].name));
		assert_memory_equal(m.name, cases[i].name, m.name_len);
		assert_int_equal(m.state_len, strlen(cases[i].state));
		assert_memory_equal(m.state, cases[i].state, m.state_len);
		assert_int_equal(m.size, cases[i].size);
		assert_int_equal(m.addr, cases[i].addr);
	}
}

/* ------------------------------------------------------------------ */
/* shared rules                                                        */
/* ------------------------------------------------------------------ */

static void test_pseudo_modules(void **state)
{
	static const struct {
		const char *name;
		bool pseudo;
	} cases[] = {
		{ "bpf", true },        { "__builtin__ftrace", true }, { "__builtin__kprobes", true },
		{ "bpfilter", false },  { "ext4", false },             { "__builtin__", false },
		{ "bp", false },        { "__builtin_", false },       { "", false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		if (op_ksyms_is_pseudo_module(cases[i].name, strlen(cases[i].name)) !=
		    cases[i].pseudo)
			fail_msg("\"%s\": pseudo-module %d expected", cases[i].name, cases[i].pseudo);
}

/* the key space a symbol belongs to: the kernel's (own + pseudo-modules) or one module's */
static void test_in_image(void **state)
{
	static const struct {
		const char *line;
		const char *image; /* NULL: the kernel */
		bool in;
	} cases[] = {
		{ "ffffffff81000000 T _text", NULL, true },
		{ "ffffffff81000000 T _text", "moda", false },
		{ "ffffffffc0001000 t f\t[moda]", NULL, false },
		{ "ffffffffc0001000 t f\t[moda]", "moda", true },
		{ "ffffffffc0001000 t f\t[moda]", "mod", false },
		{ "ffffffffc0001000 t f\t[moda]", "modab", false },
		{ "ffffffffc0300000 t bpf_prog_1_x\t[bpf]", NULL, true },
		{ "ffffffffc0300000 t bpf_prog_1_x\t[bpf]", "bpf", true },
		{ "ffffffffc0200000 t ftrace_trampoline\t[__builtin__ftrace]", NULL, true },
		{ "ffffffffc0200000 t f\t[bpfilter]", NULL, false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct op_ksym_line k;

		assert_int_equal(op_ksyms_parse_line(cases[i].line, &k), 0);
		if (op_ksyms_in_image(&k, cases[i].image) != cases[i].in)
			fail_msg("\"%s\" in image %s: expected %d", cases[i].line,
				 cases[i].image ? cases[i].image : "(kernel)", cases[i].in);
	}
}

/*
 * The kernel image's start: _text, else _stext, else the lowest of the
 * kernel's own text symbols at a non-zero address; modules, data and zero
 * addresses (kptr_restrict) do not count.
 */
static void test_text_start(void **state)
{
	static const struct {
		const char *lines[6];
		bool found;
		uint64_t start, hi;
		bool etext;
	} cases[] = {
		{ { "ffffffff81000100 T _stext", "ffffffff81000000 T _text",
		    "ffffffff81a00000 T _etext", "ffffffff81000040 T startup_64" },
		  true, 0xffffffff81000000ull, 0xffffffff81a00000ull, true },
		{ { "ffffffff81000100 T _stext", "ffffffff81000200 t early",
		    "ffffffff81234567 T last_function" },
		  true, 0xffffffff81000100ull, 0xffffffff81234567ull, false },
		{ { "ffffffff81000400 T second", "ffffffff81000300 t first",
		    "ffffffff80000000 D data_below", "ffffffffc0000000 t in_a_module\t[m]",
		    "ffffffffc0100000 t bpf_prog\t[bpf]" },
		  true, 0xffffffff81000300ull, 0xffffffff81000400ull, false },
		/* weak functions are text */
		{ { "ffffffff81000500 W weak_fn", "ffffffff81000600 T strong" },
		  true, 0xffffffff81000500ull, 0xffffffff81000600ull, false },
		/* _text of a type that is not text, or in a module: not the kernel's */
		{ { "ffffffff81000000 D _text", "ffffffff81000100 t f",
		    "ffffffffc0000000 T _text\t[m]" },
		  true, 0xffffffff81000100ull, 0xffffffff81000100ull, false },
		/* kptr_restrict: zero addresses only */
		{ { "0000000000000000 T _text", "0000000000000000 T f" }, false, 0, 0, false },
		{ { "ffffffffc0000000 t only_modules\t[m]", "ffffffff81c00000 D data" },
		  false, 0, 0, false },
		{ { NULL }, false, 0, 0, false },
	};
	size_t i, j;

	(void)state;
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct op_ksyms_text t;
		uint64_t start = 42;

		op_ksyms_text_init(&t);
		for (j = 0; j < ARRAY_SIZE(cases[i].lines) && cases[i].lines[j]; j++) {
			struct op_ksym_line k;

			assert_int_equal(op_ksyms_parse_line(cases[i].lines[j], &k), 0);
			op_ksyms_text_add(&t, &k);
		}
		if (op_ksyms_text_start(&t, &start) != cases[i].found)
			fail_msg("case %zu: found %d expected", i, cases[i].found);
		if (!cases[i].found) {
			assert_int_equal(start, 42);
			continue;
		}
		assert_int_equal(start, cases[i].start);
		assert_int_equal(t.hi, cases[i].hi);
		assert_int_equal(t.has_etext, cases[i].etext);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_kallsyms_lines),
		cmocka_unit_test(test_symbol_types),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_nul_ends_the_parse),
		cmocka_unit_test(test_parse_modules_lines),
		cmocka_unit_test(test_pseudo_modules),
		cmocka_unit_test(test_in_image),
		cmocka_unit_test(test_text_start),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
