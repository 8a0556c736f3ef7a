/*
 * op_ksyms.c - line parsers for /proc/kallsyms and /proc/modules and the
 * rules both readers of kallsyms share. Strict: a line that does not have
 * the documented shape is rejected whole, so the caller can count it
 * instead of guessing. SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <string.h>

#include "op_ksyms.h"

/*
 * Character classes, by table: the daemon parses every line of
 * /proc/kallsyms (120 k+) at start-up, so a line costs a few instructions
 * per byte, not a chain of comparisons.
 */
#define KSYMS_END 1   /* '\0', '\n', '\r' */
#define KSYMS_BLANK 2 /* ' ', '\t' */

static const unsigned char ksyms_class[256] = {
	['\0'] = KSYMS_END,  ['\n'] = KSYMS_END,   ['\r'] = KSYMS_END,
	[' '] = KSYMS_BLANK, ['\t'] = KSYMS_BLANK,
};

/* hex digit value + 1, 0 for anything else */
static const unsigned char ksyms_hex1[256] = {
	['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,
	['6'] = 7,  ['7'] = 8,  ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12,
	['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
	['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

static bool ksyms_blank(char c)
{
	return ksyms_class[(unsigned char)c] == KSYMS_BLANK;
}

static bool ksyms_end(char c)
{
	return ksyms_class[(unsigned char)c] == KSYMS_END;
}

/* 1..16 hex digits; *p advanced past them */
static bool ksyms_hex(const char **p, uint64_t *out)
{
	const unsigned char *s = (const unsigned char *)*p;
	uint64_t v = 0;
	unsigned d;
	int n = 0;

	while ((d = ksyms_hex1[*s])) {
		if (++n > 16)
			return false;
		v = (v << 4) | (d - 1);
		s++;
	}
	if (!n)
		return false;
	*p = (const char *)s;
	*out = v;
	return true;
}

/* a run of non-blank, non-end characters; returns its length */
static size_t ksyms_word(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = 0;

	while (!ksyms_class[u[n]])
		n++;
	return n;
}

static const char *ksyms_skip_blanks(const char *s)
{
	while (ksyms_blank(*s))
		s++;
	return s;
}

int op_ksyms_parse_line(const char *line, struct op_ksym_line *out)
{
	const char *p = line;
	size_t n;

	memset(out, 0, sizeof(*out));
	if (!ksyms_hex(&p, &out->addr) || *p != ' ')
		return -EINVAL;
	p++;
	if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')) || p[1] != ' ')
		return -EINVAL;
	out->type = *p;
	p += 2;
	n = ksyms_word(p);
	if (!n)
		return -EINVAL;
	out->name = p;
	out->name_len = n;
	p = ksyms_skip_blanks(p + n);
	if (ksyms_end(*p))
		return 0;
	/*
	 * "[module]": the kernel prints "\t[%s]" with the module's name, which
	 * /proc/modules shows as it is, brackets included
	 */
	n = ksyms_word(p);
	if (n < 3 || p[0] != '[' || p[n - 1] != ']')
		return -EINVAL;
	out->module = p + 1;
	out->module_len = n - 2;
	p = ksyms_skip_blanks(p + n);
	return ksyms_end(*p) ? 0 : -EINVAL;
}

static bool kmods_dec(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (!n)
		return false;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

int op_kmods_parse_line(const char *line, struct op_kmod_line *out)
{
	const char *f[6];
	size_t len[6], i;
	const char *p = line, *q;
	uint64_t dummy;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < 6; i++) {
		p = ksyms_skip_blanks(p);
		len[i] = ksyms_word(p);
		if (!len[i])
			return -EINVAL;
		f[i] = p;
		p += len[i];
	}
	/* what follows may only be taint flags such as "(OE)" */
	p = ksyms_skip_blanks(p);
	if (!ksyms_end(*p) && *p != '(')
		return -EINVAL;
	if (!kmods_dec(f[1], len[1], &out->size) || !kmods_dec(f[2], len[2], &dummy))
		return -EINVAL;
	if (len[5] < 3 || f[5][0] != '0' || (f[5][1] != 'x' && f[5][1] != 'X'))
		return -EINVAL;
	q = f[5] + 2;
	if (!ksyms_hex(&q, &out->addr) || q != f[5] + len[5])
		return -EINVAL;
	out->name = f[0];
	out->name_len = len[0];
	out->state = f[4];
	out->state_len = len[4];
	return 0;
}

bool op_ksyms_is_pseudo_module(const char *name, size_t len)
{
	static const char builtin[] = "__builtin__";

	if (len == 3 && !memcmp(name, "bpf", 3))
		return true;
	return len > sizeof(builtin) - 1 && !memcmp(name, builtin, sizeof(builtin) - 1);
}

bool op_ksyms_in_image(const struct op_ksym_line *k, const char *module)
{
	if (!module)
		return !k->module || op_ksyms_is_pseudo_module(k->module, k->module_len);
	return k->module && k->module_len == strlen(module) &&
	       !memcmp(k->module, module, k->module_len);
}

void op_ksyms_text_init(struct op_ksyms_text *t)
{
	memset(t, 0, sizeof(*t));
	t->lo = UINT64_MAX;
}

void op_ksyms_text_add(struct op_ksyms_text *t, const struct op_ksym_line *k)
{
	if (!k->addr || k->module || !op_ksyms_is_text(k->type))
		return;
	if (k->name[0] == '_') {
		if (k->name_len == 5 && !memcmp(k->name, "_text", 5)) {
			t->text = k->addr;
			t->has_text = true;
		} else if (k->name_len == 6 && !memcmp(k->name, "_stext", 6)) {
			t->stext = k->addr;
			t->has_stext = true;
		} else if (k->name_len == 6 && !memcmp(k->name, "_etext", 6)) {
			t->etext = k->addr;
			t->has_etext = true;
		}
	}
	if (k->addr < t->lo)
		t->lo = k->addr;
	if (k->addr > t->hi)
		t->hi = k->addr;
}

bool op_ksyms_text_start(const struct op_ksyms_text *t, uint64_t *start)
{
	if (t->has_text)
		*start = t->text;
	else if (t->has_stext)
		*start = t->stext;
	else if (t->lo != UINT64_MAX)
		*start = t->lo;
	else
		return false;
	return true;
}
