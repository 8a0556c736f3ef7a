/*
 * test_report_text.c - how opreport prints hostile names (issue 14, hole 7):
 * the text escapes (C0, DEL, C1, invalid UTF-8, line separators and bidi
 * overrides; valid UTF-8 kept), cutting without half an escape, one-line
 * messages, the strict UTF-8 check, and flame graphs that stay valid UTF-8
 * XML when frame names hold any bytes or are cut to fit a box.
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_xml.h"
#include "flamegraph.h"
#include "opreport.h"

static const struct {
	const char *in, *out;
} esc_cases[] = {
	{ "plain name_1.so", "plain name_1.so" },
	{ "", "" },
	{ "a\n99999 99.9999 sshd", "a\\n99999 99.9999 sshd" },
	{ "\t\r", "\\t\\r" },
	{ "\x1b[2J\x1b]0;title\x07", "\\x1b[2J\\x1b]0;title\\x07" },
	{ "\x01\x1f\x7f", "\\x01\\x1f\\x7f" },
	{ "back\\slash \\n", "back\\slash \\n" },          /* a backslash is not doubled */
	{ "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80" },
	{ "\xc2\x9b" "2J", "\\xc2\\x9b" "2J" },            /* U+009B, CSI */
	{ "\xc2\xa0", "\xc2\xa0" },                        /* U+00A0, first after C1 */
	{ "\x9b" "2J", "\\x9b" "2J" },                     /* a lone C1 byte */
	{ "\xff\xfe", "\\xff\\xfe" },
	{ "\xc0\xaf", "\\xc0\\xaf" },                      /* overlong '/' */
	{ "\xe0\x80\xaf", "\\xe0\\x80\\xaf" },             /* overlong, 3 bytes */
	{ "\xed\xa0\x80", "\\xed\\xa0\\x80" },             /* a surrogate */
	{ "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80" },    /* past U+10FFFF */
	{ "\xe2\x80\xae" "evil", "\\xe2\\x80\\xae" "evil" }, /* right-to-left override */
	{ "\xe2\x81\xa6", "\\xe2\\x81\\xa6" },             /* left-to-right isolate */
	{ "a\xe2\x80\xa8" "b", "a\\xe2\\x80\\xa8" "b" },   /* line separator */
	{ "end\xe2\x82", "end\\xe2\\x82" },                /* cut sequence */
	{ "\xe2\x82\n", "\\xe2\\x82\\n" },
};

static void test_escape_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(esc_cases) / sizeof(esc_cases[0]); i++) {
		char buf[128], *d;
		size_t n = txt_escape(buf, sizeof(buf), esc_cases[i].in);

		assert_string_equal(buf, esc_cases[i].out);
		assert_int_equal(n, strlen(esc_cases[i].out));
		assert_int_equal(txt_escape(NULL, 0, esc_cases[i].in), n);
		d = txt_dup(esc_cases[i].in);
		assert_non_null(d);
		assert_string_equal(d, esc_cases[i].out);
		free(d);
	}
}

static void test_escape_put(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(esc_cases) / sizeof(esc_cases[0]); i++) {
		char *mem = NULL;
		size_t len = 0, n;
		FILE *f = open_memstream(&mem, &len);

		assert_non_null(f);
		n = txt_put(f, esc_cases[i].in);
		fclose(f);
		assert_string_equal(mem, esc_cases[i].out);
		assert_int_equal(n, strlen(esc_cases[i].out));
		free(mem);
	}
}

/* a buffer that is too small holds whole escapes and characters only */
static void test_escape_cut(void **state)
{
	char buf[8];

	(void)state;
	assert_int_equal(txt_escape(buf, 6, "ab\ncd"), 6);
	assert_string_equal(buf, "ab\\nc");
	assert_int_equal(txt_escape(buf, 4, "ab\ncd"), 6);
	assert_string_equal(buf, "ab");
	assert_int_equal(txt_escape(buf, 5, "a\x1b" "b"), 6);
	assert_string_equal(buf, "a");
	assert_int_equal(txt_escape(buf, 3, "\xc3\xa9\xc3\xa9"), 4);
	assert_string_equal(buf, "\xc3\xa9");
	assert_int_equal(txt_escape(buf, 1, "abc"), 3);
	assert_string_equal(buf, "");
}

static void vmsg(FILE *f, const char *prefix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	txt_vmsg(f, prefix, fmt, ap);
	va_end(ap);
}

/* a message is one line whatever its arguments hold, also past the stack buffer */
static void test_message_one_line(void **state)
{
	char *mem = NULL, *big = malloc(5001);
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);

	(void)state;
	assert_non_null(f);
	assert_non_null(big);
	memset(big, 'x', 5000);
	big[4000] = '\n';
	big[5000] = 0;
	vmsg(f, "opreport warning: ", "skipping %s: %s", "/s/a\n99999 99.9999 sshd", "bad\x1b[2J");
	vmsg(f, "P: ", "%s|%d", big, 7);
	fclose(f);
	assert_memory_equal(mem,
			    "opreport warning: skipping /s/a\\n99999 99.9999 sshd: bad\\x1b[2J\n",
			    strlen("opreport warning: skipping /s/a\\n99999 99.9999 sshd: bad\\x1b[2J\n"));
	{
		char *second = strchr(mem, '\n') + 1;

		assert_int_equal(strlen(second), 3 + 5001 + 2 + 1);
		assert_memory_equal(second + 3 + 4000, "\\nx", 3);
		assert_string_equal(second + strlen(second) - 3, "|7\n");
	}
	free(mem);
	free(big);
}

static void test_utf8_len(void **state)
{
	uint32_t cp = 0;

	(void)state;
	assert_int_equal(txt_utf8_len((const unsigned char *)"A", &cp), 1);
	assert_int_equal(cp, 'A');
	assert_int_equal(txt_utf8_len((const unsigned char *)"\xc3\xa9", &cp), 2);
	assert_int_equal(cp, 0xe9);
	assert_int_equal(txt_utf8_len((const unsigned char *)"\xef\xbf\xbd", &cp), 3);
	assert_int_equal(cp, 0xfffd);
	assert_int_equal(txt_utf8_len((const unsigned char *)"\xf4\x8f\xbf\xbf", &cp), 4);
	assert_int_equal(cp, 0x10ffff);
	assert_int_equal(txt_utf8_len((const unsigned char *)"\x80", NULL), 0);
	assert_int_equal(txt_utf8_len((const unsigned char *)"\xc1\xbf", NULL), 0);
	assert_int_equal(txt_utf8_len((const unsigned char *)"\xed\xbf\xbf", NULL), 0);
	assert_int_equal(txt_utf8_len((const unsigned char *)"\xf8\x88\x80\x80\x80", NULL), 0);
	assert_int_equal(txt_utf8_len((const unsigned char *)"\xc3", NULL), 0);
}

/* @s through txt_put_xml (or op_xml_put) into a new string */
static char *xml_of(const char *s, bool lib)
{
	char *mem = NULL;
	size_t len = 0, n;
	FILE *f = open_memstream(&mem, &len);

	assert_non_null(f);
	n = lib ? op_xml_put(f, s) : txt_put_xml(f, s);
	fclose(f);
	assert_int_equal(n, len);
	return mem;
}

/* opreport's XML escaping is op_xml_put's (ophelp's): one rule set */
static void test_xml_escape(void **state)
{
	static const struct {
		const char *in, *out;
	} t[] = {
		{ "a<b>&\"c'd", "a&lt;b&gt;&amp;&quot;c&apos;d" },
		/* attribute whitespace kept as references, not normalised to spaces */
		{ "t\tn\nr\r", "t&#9;n&#10;r&#13;" },
		/* C0 controls, DEL-free ESC, bytes that are not UTF-8, U+FFFE */
		{ "e\x1b[2J\x01", "e&#xfffd;[2J&#xfffd;" },
		{ "bad\xff\xc3(\xed\xa0\x80", "bad&#xfffd;&#xfffd;(&#xfffd;&#xfffd;&#xfffd;" },
		{ "x\xef\xbf\xbe", "x&#xfffd;" },
		/* UTF-8 and C1 characters XML 1.0 allows stay as they are */
		{ "caf\xc3\xa9 \xc2\x9b \xf0\x9f\x98\x80", "caf\xc3\xa9 \xc2\x9b \xf0\x9f\x98\x80" },
		{ "", "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *r = xml_of(t[i].in, false), *l = xml_of(t[i].in, true);

		assert_string_equal(r, t[i].out);
		assert_string_equal(r, l);
		free(r);
		free(l);
	}
}

/* every byte of @s is valid UTF-8 with no C0 control but '\n' */
static void assert_xml_text(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	while (*u) {
		uint32_t c = 0;
		size_t n = txt_utf8_len(u, &c);

		if (!n || (c < 0x20 && c != '\n') || c == 0xfffe || c == 0xffff)
			fail_msg("byte 0x%02x at offset %zu is not XML text", *u,
				 (size_t)(u - (const unsigned char *)s));
		u += n;
	}
}

static void test_flamegraph_names(void **state)
{
	char long_name[2 * 200 + 1];
	const char *stack1[] = { "main\x1b[2J", "caf\xc3\xa9", "bad\xff\xfe", "a<b>&\"c" };
	const char *stack2[] = { "main\x1b[2J", long_name, "x\xef\xbf\xbe" };
	struct flamegraph *fg = fg_new();
	char *mem = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&mem, &len);

	(void)state;
	assert_non_null(fg);
	assert_non_null(f);
	/* 200 two-byte characters: wider than any box, so cut */
	for (int i = 0; i < 200; i++)
		memcpy(long_name + 2 * i, "\xc3\xa9", 2);
	long_name[400] = 0;
	assert_int_equal(fg_add(fg, stack1, 4, 10), 0);
	assert_int_equal(fg_add(fg, stack2, 3, 90), 0);
	assert_int_equal(fg_write_svg(fg, f, "title\n\x9b", 1200), 0);
	fclose(f);
	assert_xml_text(mem);
	assert_non_null(strstr(mem, "a&lt;b&gt;&amp;&quot;c"));
	assert_non_null(strstr(mem, "caf\xc3\xa9"));
	assert_non_null(strstr(mem, "bad\xef\xbf\xbd\xef\xbf\xbd"));
	assert_non_null(strstr(mem, "\xc3\xa9\xc3\xa9.."));
	free(mem);
	fg_free(fg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape_table),
		cmocka_unit_test(test_escape_put),
		cmocka_unit_test(test_escape_cut),
		cmocka_unit_test(test_message_one_line),
		cmocka_unit_test(test_utf8_len),
		cmocka_unit_test(test_xml_escape),
		cmocka_unit_test(test_flamegraph_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
