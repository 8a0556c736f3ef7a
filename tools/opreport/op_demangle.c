/*
 * op_demangle.c - smart demangling for opreport (--demangle=smart): a small
 * parser of template argument lists that rewrites standard-library names,
 * innermost first, and leaves every name it does not recognise as it was.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "op_demangle.h"

#define DM_MAX_DEPTH 256

/* ------------------------------------------------------------ strings */

struct sb {
	char *p;
	size_t len, cap;
	bool oom;
};

static void sb_putn(struct sb *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;
		char *p;

		while (b->len + n + 1 > cap)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_puts(struct sb *b, const char *s)
{
	sb_putn(b, s, strlen(s));
}

static void sb_putc(struct sb *b, char c)
{
	sb_putn(b, &c, 1);
}

static const char *sb_str(const struct sb *b)
{
	return b->p ? b->p : "";
}

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '$';
}

static bool ends_with_gt(const char *s)
{
	size_t n = strlen(s);

	return n && s[n - 1] == '>';
}

/* NAME<ARGS> as the demangler writes it: ", " between, " >" after a '>' */
static void put_template(struct sb *out, const char *name, size_t nlen, char **args, size_t n)
{
	sb_putn(out, name, nlen);
	sb_putc(out, '<');
	for (size_t i = 0; i < n; i++) {
		if (i)
			sb_puts(out, ", ");
		sb_puts(out, args[i]);
	}
	if (n && ends_with_gt(args[n - 1]))
		sb_putc(out, ' ');
	sb_putc(out, '>');
}

/* ------------------------------------------------------------ rules */

enum dm_def {
	D_REQ,        /* no default */
	D_TRAITS,     /* std::char_traits<A0> */
	D_ALLOC,      /* std::allocator<A0> */
	D_ALLOC_PAIR, /* std::allocator<std::pair<A0 const, A1> > */
	D_LESS,       /* std::less<A0> */
	D_HASH,       /* std::hash<A0> */
	D_EQUAL,      /* std::equal_to<A0> */
	D_DEQUE,      /* std::deque<A0> */
};

#define DM_MAX_PARAMS 5

static const struct dm_rule {
	const char *name;
	unsigned char def[DM_MAX_PARAMS]; /* one per parameter, D_REQ-padded */
	unsigned char nparams;
	const char *alias; /* the typedef for <char> once defaults are gone */
} dm_rules[] = {
	{ "std::basic_string", { D_REQ, D_TRAITS, D_ALLOC }, 3, "string" },
	{ "std::basic_string_view", { D_REQ, D_TRAITS }, 2, "string_view" },
	{ "std::basic_istream", { D_REQ, D_TRAITS }, 2, "istream" },
	{ "std::basic_ostream", { D_REQ, D_TRAITS }, 2, "ostream" },
	{ "std::basic_iostream", { D_REQ, D_TRAITS }, 2, "iostream" },
	{ "std::basic_streambuf", { D_REQ, D_TRAITS }, 2, "streambuf" },
	{ "std::basic_ifstream", { D_REQ, D_TRAITS }, 2, "ifstream" },
	{ "std::basic_ofstream", { D_REQ, D_TRAITS }, 2, "ofstream" },
	{ "std::basic_fstream", { D_REQ, D_TRAITS }, 2, "fstream" },
	{ "std::basic_istringstream", { D_REQ, D_TRAITS, D_ALLOC }, 3, "istringstream" },
	{ "std::basic_ostringstream", { D_REQ, D_TRAITS, D_ALLOC }, 3, "ostringstream" },
	{ "std::basic_stringstream", { D_REQ, D_TRAITS, D_ALLOC }, 3, "stringstream" },
	{ "std::vector", { D_REQ, D_ALLOC }, 2, NULL },
	{ "std::list", { D_REQ, D_ALLOC }, 2, NULL },
	{ "std::forward_list", { D_REQ, D_ALLOC }, 2, NULL },
	{ "std::deque", { D_REQ, D_ALLOC }, 2, NULL },
	{ "std::stack", { D_REQ, D_DEQUE }, 2, NULL },
	{ "std::queue", { D_REQ, D_DEQUE }, 2, NULL },
	{ "std::set", { D_REQ, D_LESS, D_ALLOC }, 3, NULL },
	{ "std::multiset", { D_REQ, D_LESS, D_ALLOC }, 3, NULL },
	{ "std::map", { D_REQ, D_REQ, D_LESS, D_ALLOC_PAIR }, 4, NULL },
	{ "std::multimap", { D_REQ, D_REQ, D_LESS, D_ALLOC_PAIR }, 4, NULL },
	{ "std::unordered_set", { D_REQ, D_HASH, D_EQUAL, D_ALLOC }, 4, NULL },
	{ "std::unordered_multiset", { D_REQ, D_HASH, D_EQUAL, D_ALLOC }, 4, NULL },
	{ "std::unordered_map", { D_REQ, D_REQ, D_HASH, D_EQUAL, D_ALLOC_PAIR }, 5, NULL },
	{ "std::unordered_multimap", { D_REQ, D_REQ, D_HASH, D_EQUAL, D_ALLOC_PAIR }, 5, NULL },
};

/* the character types of the standard typedefs: prefix of the alias */
static const char *const dm_chars[][2] = {
	{ "char", "" },        { "wchar_t", "w" },    { "char8_t", "u8" },
	{ "char16_t", "u16" }, { "char32_t", "u32" },
};

/* is @arg the default for parameter kind @def given the arguments @args? */
static bool is_default(enum dm_def def, const char *arg, char **args, size_t n)
{
	struct sb b = { 0 };
	char *one[1];
	bool eq;

	switch (def) {
	case D_TRAITS:
		put_template(&b, "std::char_traits", 16, args, 1);
		break;
	case D_ALLOC:
		put_template(&b, "std::allocator", 14, args, 1);
		break;
	case D_LESS:
		put_template(&b, "std::less", 9, args, 1);
		break;
	case D_HASH:
		put_template(&b, "std::hash", 9, args, 1);
		break;
	case D_EQUAL:
		put_template(&b, "std::equal_to", 13, args, 1);
		break;
	case D_DEQUE:
		put_template(&b, "std::deque", 10, args, 1);
		break;
	case D_ALLOC_PAIR: {
		struct sb k = { 0 }, pair = { 0 };
		char *kv[2];

		if (n < 2)
			return false;
		sb_puts(&k, args[0]);
		sb_puts(&k, " const");
		if (k.oom) {
			free(k.p);
			return false;
		}
		kv[0] = k.p;
		kv[1] = args[1];
		put_template(&pair, "std::pair", 9, kv, 2);
		one[0] = (char *)sb_str(&pair);
		put_template(&b, "std::allocator", 14, one, 1);
		eq = !k.oom && !pair.oom;
		free(k.p);
		free(pair.p);
		if (!eq) {
			free(b.p);
			return false;
		}
		break;
	}
	default:
		return false;
	}
	eq = !b.oom && !strcmp(sb_str(&b), arg);
	free(b.p);
	return eq;
}

/*
 * Drop trailing default arguments of a known template; *alias is set when the
 * whole name becomes a typedef (std::string).
 */
static size_t apply_rules(const char *name, size_t nlen, char **args, size_t n, const char **alias,
			  const char **prefix)
{
	*alias = NULL;
	for (size_t r = 0; r < sizeof(dm_rules) / sizeof(dm_rules[0]); r++) {
		const struct dm_rule *ru = &dm_rules[r];

		if (strlen(ru->name) != nlen || memcmp(ru->name, name, nlen))
			continue;
		if (n > ru->nparams)
			return n;
		while (n > 1 && ru->def[n - 1] != D_REQ &&
		       is_default(ru->def[n - 1], args[n - 1], args, n))
			n--;
		if (ru->alias && n == 1) {
			for (size_t c = 0; c < sizeof(dm_chars) / sizeof(dm_chars[0]); c++)
				if (!strcmp(args[0], dm_chars[c][0])) {
					*alias = ru->alias;
					*prefix = dm_chars[c][1];
				}
		}
		return n;
	}
	return n;
}

/* ------------------------------------------------------------ parser */

struct dm {
	const char *s;
	size_t i;
	int depth;
	bool bad;
};

static char dm_text(struct dm *d, struct sb *out, const char *stops, bool in_paren);

static void strip(char *s)
{
	size_t n = strlen(s), a = 0;

	while (n && s[n - 1] == ' ')
		s[--n] = '\0';
	while (s[a] == ' ')
		a++;
	memmove(s, s + a, n - a + 1);
}

/* at '<' after NAME (the tail of @out): the list, then NAME<...> rewritten */
static void dm_template(struct dm *d, struct sb *out)
{
	size_t ns = out->len, n = 0, cap = 0, keep;
	char **args = NULL;
	const char *alias = NULL, *prefix = "";
	struct sb name = { 0 };

	while (ns > 0 && (is_ident(out->p[ns - 1]) || out->p[ns - 1] == ':'))
		ns--;
	sb_putn(&name, out->p ? out->p + ns : "", out->len - ns);
	d->i++;
	if (++d->depth > DM_MAX_DEPTH) {
		d->bad = true;
		goto out;
	}
	for (;;) {
		struct sb a = { 0 };
		char e = dm_text(d, &a, ",>", false);

		if (n == cap) {
			char **p = realloc(args, (cap ? cap * 2 : 4) * sizeof(*args));

			if (!p) {
				free(a.p);
				d->bad = true;
				break;
			}
			args = p;
			cap = cap ? cap * 2 : 4;
		}
		if (a.oom || !(args[n] = a.p ? a.p : strdup(""))) {
			free(a.p);
			d->bad = true;
			break;
		}
		strip(args[n++]);
		if (d->bad)
			break;
		if (e != ',' && e != '>') {
			d->bad = true;
			break;
		}
		d->i++;
		if (e == '>')
			break;
	}
	d->depth--;
	if (d->bad || name.oom)
		goto out;
	keep = apply_rules(sb_str(&name), name.len, args, n, &alias, &prefix);
	out->len = ns;
	if (alias) {
		sb_puts(out, "std::");
		sb_puts(out, prefix);
		sb_puts(out, alias);
	} else {
		put_template(out, sb_str(&name), name.len, args, keep);
	}
out:
	for (size_t k = 0; k < n; k++)
		free(args[k]);
	free(args);
	free(name.p);
}

/*
 * Copy text to @out up to one of @stops (or the end), rewriting templates on
 * the way; returns the stop character, not consumed. A closing bracket that
 * does not belong here marks the input bad.
 */
static char dm_text(struct dm *d, struct sb *out, const char *stops, bool in_paren)
{
	bool after_op = false; /* "operator<< <T>": the next '<' opens a list */

	while (!d->bad && !out->oom) {
		char c = d->s[d->i];

		if (c == '\0' || strchr(stops, c))
			return c;
		if (c == '(' || c == '[' || c == '{') {
			char close = c == '(' ? ')' : c == '[' ? ']' : '}';
			char e, cl[2] = { close, '\0' };

			sb_putc(out, c);
			d->i++;
			if (++d->depth > DM_MAX_DEPTH) {
				d->bad = true;
				break;
			}
			e = dm_text(d, out, cl, true);
			d->depth--;
			if (e != close) {
				d->bad = true;
				break;
			}
			sb_putc(out, close);
			d->i++;
			after_op = false;
			continue;
		}
		if (c == ')' || c == ']' || c == '}') {
			d->bad = true;
			break;
		}
		if (c == '-' && d->s[d->i + 1] == '>') {
			sb_putn(out, d->s + d->i, 2);
			d->i += 2;
			continue;
		}
		if (c == '<' && (after_op || (out->len && is_ident(out->p[out->len - 1])))) {
			dm_template(d, out);
			after_op = false;
			continue;
		}
		if (c == '<' || c == '>') {
			/* a comparison inside parentheses; anywhere else unbalanced */
			if (!in_paren) {
				d->bad = true;
				break;
			}
			sb_putc(out, c);
			d->i++;
			continue;
		}
		if (is_ident(c)) {
			size_t st = d->i;
			bool op;

			while (is_ident(d->s[d->i]))
				d->i++;
			op = d->i - st == 8 && !memcmp(d->s + st, "operator", 8);
			sb_putn(out, d->s + st, d->i - st);
			after_op = false;
			if (op && d->s[d->i] == ',') {
				sb_putc(out, ',');
				d->i++;
			} else if (op && strchr("<>=!+-*/%&|^~", d->s[d->i]) && d->s[d->i]) {
				st = d->i;
				while (d->s[d->i] && strchr("<>=!+-*/%&|^~", d->s[d->i]))
					d->i++;
				sb_putn(out, d->s + st, d->i - st);
				after_op = d->s[d->i] == ' ' && d->s[d->i + 1] == '<';
				if (after_op) {
					sb_putc(out, ' ');
					d->i++;
				}
			}
			continue;
		}
		sb_putc(out, c);
		d->i++;
	}
	return '\0';
}

/* std::__cxx11:: (the C++11 ABI) and std::__1:: (libc++) are std:: to a reader */
static char *strip_abi_ns(const char *name)
{
	static const char *const ns[] = { "std::__cxx11::", "std::__1::" };
	char *s = strdup(name);

	if (!s)
		return NULL;
	for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
		size_t nl = strlen(ns[k]);
		char *p = s;

		while ((p = strstr(p, ns[k]))) {
			if (p > s && (is_ident(p[-1]) || p[-1] == ':')) {
				p += nl;
				continue;
			}
			memmove(p + 5, p + nl, strlen(p + nl) + 1);
			p += 5;
		}
	}
	return s;
}

char *demangle_smart(const char *name)
{
	struct dm d = { 0 };
	struct sb out = { 0 };
	char *s = strip_abi_ns(name);

	if (!s)
		return NULL;
	d.s = s;
	dm_text(&d, &out, "", false);
	if (d.bad || out.oom || d.s[d.i] != '\0') {
		free(out.p);
		free(s);
		return strdup(name);
	}
	free(s);
	return out.p ? out.p : strdup("");
}
