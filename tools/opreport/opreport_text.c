/*
 * opreport_text.c - names in opreport's text output and messages: a byte a
 * terminal could act on is written as a C escape ("\n", "\x1b"), so that a
 * line of output is always one record, whatever a path or symbol holds.
 * Also the UTF-8 check the XML, JSON and SVG writers share and the XML
 * escaper, both lib/op_xml.c's (one rule set for ophelp and opreport).
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_xml.h"
#include "opreport.h"

size_t txt_utf8_len(const unsigned char *u, uint32_t *cp)
{
	return op_utf8_len(u, cp);
}

/*
 * Code points that act on a terminal or on how a line reads: C0, DEL, C1
 * (U+0080-U+009F; 0x9b is CSI to an 8-bit terminal), the Unicode line and
 * paragraph separators and the bidirectional overrides and isolates, which
 * can make one record look like another.
 */
static bool cp_hostile(uint32_t c)
{
	return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x2028 || c == 0x2029 ||
	       (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
}

/*
 * The escape of the character at @u into @esc (NUL-terminated, at most 12
 * bytes) or "" when it is printed as it is; *@n is the number of input bytes
 * it covers.
 */
static void esc_char(const unsigned char *u, char *esc, size_t *n)
{
	static const char hex[] = "0123456789abcdef";
	uint32_t c = 0;
	size_t len = txt_utf8_len(u, &c), o = 0;

	esc[0] = 0;
	if (len && !cp_hostile(c)) {
		*n = len;
		return;
	}
	if (len == 1 && (c == '\n' || c == '\t' || c == '\r')) {
		esc[0] = '\\';
		esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
		esc[2] = 0;
		*n = 1;
		return;
	}
	/* every byte of a hostile character, or one byte that is not UTF-8 */
	if (!len)
		len = 1;
	for (size_t i = 0; i < len; i++) {
		esc[o++] = '\\';
		esc[o++] = 'x';
		esc[o++] = hex[u[i] >> 4];
		esc[o++] = hex[u[i] & 0xf];
	}
	esc[o] = 0;
	*n = len;
}

size_t txt_escape(char *out, size_t len, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	bool full = !out || !len;
	size_t o = 0, w = 0;

	while (*u) {
		char esc[20];
		size_t n, el;

		esc_char(u, esc, &n);
		el = esc[0] ? strlen(esc) : n;
		/* when full, stop there: never half an escape or a character */
		if (!full && w + el < len) {
			memcpy(out + w, esc[0] ? esc : (const char *)u, el);
			w += el;
		} else {
			full = true;
		}
		o += el;
		u += n;
	}
	if (out && len)
		out[w] = 0;
	return o;
}

size_t txt_put(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = 0;

	while (*u) {
		const unsigned char *run = u;
		char esc[20];
		size_t n = 0;

		/* runs of plain characters in one write */
		for (;;) {
			esc_char(u, esc, &n);
			if (!*u || esc[0])
				break;
			u += n;
		}
		if (u > run)
			fwrite(run, 1, (size_t)(u - run), f);
		o += (size_t)(u - run);
		if (!*u)
			break;
		fputs(esc, f);
		o += strlen(esc);
		u += n;
	}
	return o;
}

char *txt_dup(const char *s)
{
	size_t n = txt_escape(NULL, 0, s);
	char *d = malloc(n + 1);

	if (d)
		txt_escape(d, n + 1, s);
	return d;
}

char *txt_join_args(const char *prog, int argc, char **argv)
{
	size_t len = strlen(prog) + 1, o;
	char *s;

	for (int i = 1; i < argc; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	o = strlen(prog);
	memcpy(s, prog, o);
	for (int i = 1; i < argc; i++) {
		size_t n = strlen(argv[i]);

		s[o++] = ' ';
		memcpy(s + o, argv[i], n);
		o += n;
	}
	s[o] = '\0';
	return s;
}

void txt_vmsg(FILE *f, const char *prefix, const char *fmt, va_list ap)
{
	char buf[2048], *big = NULL, *msg = buf;
	va_list aq;
	int n;

	va_copy(aq, ap);
	n = vsnprintf(buf, sizeof(buf), fmt, aq);
	va_end(aq);
	if (n >= (int)sizeof(buf)) {
		big = malloc((size_t)n + 1);
		if (big) {
			vsnprintf(big, (size_t)n + 1, fmt, ap);
			msg = big;
		}
	}
	fputs(prefix, f);
	txt_put(f, n < 0 ? fmt : msg);
	fputc('\n', f);
	free(big);
}

void txt_msg(const char *prefix, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	txt_vmsg(stderr, prefix, fmt, ap);
	va_end(ap);
}

/* one XML escaper for every tool: lib/op_xml.c's rules */
size_t txt_put_xml(FILE *f, const char *s)
{
	return op_xml_put(f, s);
}

size_t txt_put_json(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = 2;

	fputc('"', f);
	while (*u) {
		size_t n = *u < 0x80 ? 1 : txt_utf8_len(u, NULL);

		if (*u == '"' || *u == '\\') {
			fprintf(f, "\\%c", *u);
			o += 2;
		} else if (*u < 0x20) {
			fprintf(f, "\\u%04x", *u);
			o += 6;
		} else if (!n) {
			fputs("\\ufffd", f);
			o += 6;
		} else {
			fwrite(u, 1, n, f);
			o += n;
		}
		u += n ? n : 1;
	}
	fputc('"', f);
	return o;
}
