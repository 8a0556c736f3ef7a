/*
 * op_mangle.c - sample-file names: build (op_mangle) and parse back
 * (op_parse_name), with the reversible component escaping described in
 * op_mangle.h. Not on the per-sample path (the sfile cache calls it once per
 * new sample file).
 *
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "op_hex.h"
#include "op_mangle.h"

#define COMP_MAX 255 /* NAME_MAX of the common Linux file systems */
#define CONT_MARK "%+"

static const char hexdig[] = "0123456789ABCDEF";

/* ---- escaping ------------------------------------------------------- */

static bool byte_always_escaped(unsigned char c)
{
	return c < 0x20 || c == 0x7f || c == '%' || c == '/';
}

static bool is_marker(const char *s, size_t n)
{
	/* issue 20: "{cgroup}" too, so that only the split's marker is ever unescaped */
	static const char *const m[] = { "{dep}", "{cg}", "{root}", "{kern}", OP_SPLIT_MARKER };

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (n == strlen(m[i]) && !memcmp(s, m[i], n))
			return true;
	return n >= 5 && !memcmp(s, "{anon", 5);
}

static bool first_byte_escaped(const char *s, size_t n)
{
	return (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.') || is_marker(s, n);
}

/*
 * Encode @n bytes into @out (capacity @cap) without splitting. @whole applies
 * the whole-component rules (first byte of hostile names, trailing '\',
 * empty component). Returns the encoded length, -EINVAL on NUL,
 * -ENAMETOOLONG when @cap is exceeded.
 */
static int encode_bytes(const char *s, size_t n, bool whole, char *out, size_t cap)
{
	size_t o = 0;
	bool esc_first = whole && first_byte_escaped(s, n);

	if (whole && n == 0) {
		if (cap < 1)
			return -ENAMETOOLONG;
		out[0] = '%';
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == 0)
			return -EINVAL;
		if (byte_always_escaped(c) || (i == 0 && esc_first) ||
		    (whole && i == n - 1 && c == '\\')) {
			if (o + 3 > cap)
				return -ENAMETOOLONG;
			out[o++] = '%';
			out[o++] = hexdig[c >> 4];
			out[o++] = hexdig[c & 15];
		} else {
			if (o + 1 > cap)
				return -ENAMETOOLONG;
			out[o++] = (char)c;
		}
	}
	return (int)o;
}

/*
 * Copy an encoded logical component @s (@n bytes) to @out, split into
 * chunks of at most COMP_MAX bytes joined by "/%+". Returns the length or
 * -ENAMETOOLONG.
 */
static int split_chunks(const char *s, size_t n, char *out, size_t cap)
{
	size_t o = 0, i = 0;
	bool first = true;

	while (i < n || first) {
		size_t room = first ? COMP_MAX : COMP_MAX - 2;
		size_t take = n - i;

		if (take > room) {
			take = room;
			/* never cut a %XX triple */
			if (s[i + take - 1] == '%')
				take -= 1;
			else if (s[i + take - 2] == '%')
				take -= 2;
		}
		if (!first) {
			if (o + 3 > cap)
				return -ENAMETOOLONG;
			memcpy(out + o, "/" CONT_MARK, 3);
			o += 3;
		}
		if (o + take > cap)
			return -ENAMETOOLONG;
		memcpy(out + o, s + i, take);
		o += take;
		i += take;
		first = false;
	}
	return (int)o;
}

int op_escape_component(const char *in, size_t in_len, char *out, size_t out_len)
{
	char tmp[3 * PATH_MAX];
	int n, m;

	if (!in || !out || out_len == 0)
		return -EINVAL;
	if (in_len >= PATH_MAX)
		return -ENAMETOOLONG;
	n = encode_bytes(in, in_len, true, tmp, sizeof(tmp));
	if (n < 0)
		return n;
	m = split_chunks(tmp, (size_t)n, out, out_len - 1);
	if (m < 0)
		return m;
	if (m >= PATH_MAX)
		return -ENAMETOOLONG;
	out[m] = '\0';
	return m;
}

/* Decode [s, e) (one logical component, maybe chunked). Returns length or -errno. */
static int decode_span(const char *s, const char *e, char *out, size_t cap)
{
	size_t o = 0;

	if (e - s == 1 && s[0] == '%') /* the empty component */
		goto done;
	while (s < e) {
		char c = *s;

		if (c == '/') {
			while (s < e && *s == '/')
				s++;
			if (e - s < 2 || s[0] != '%' || s[1] != '+')
				return -EINVAL;
			s += 2;
			continue;
		}
		if (c == '%') {
			int hi, lo;

			if (e - s < 3 || (hi = op_hexval(s[1])) < 0 || (lo = op_hexval(s[2])) < 0)
				return -EINVAL;
			c = (char)(hi << 4 | lo);
			if (c == 0)
				return -EINVAL;
			s += 3;
		} else {
			s++;
		}
		if (o + 1 >= cap)
			return -ENAMETOOLONG;
		out[o++] = c;
	}
done:
	if (cap == 0)
		return -ENAMETOOLONG;
	out[o] = '\0';
	return (int)o;
}

int op_unescape_component(const char *in, char *out, size_t out_len)
{
	if (!in || !out)
		return -EINVAL;
	return decode_span(in, in + strlen(in), out, out_len);
}

/* ---- building ------------------------------------------------------- */

struct nbuf {
	char *p;
	size_t len, cap; /* cap excludes the NUL */
	int err;
};

static void nb_put(struct nbuf *b, const char *s, size_t n)
{
	if (b->err)
		return;
	if (b->len + n >= PATH_MAX) {
		b->err = -ENAMETOOLONG;
		return;
	}
	if (b->len + n > b->cap) {
		b->err = -ENOBUFS;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void nb_str(struct nbuf *b, const char *s)
{
	nb_put(b, s, strlen(s));
}

static void nb_fmt(struct nbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void nb_fmt(struct nbuf *b, const char *fmt, ...)
{
	char tmp[128];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(tmp)) {
		if (!b->err)
			b->err = -EINVAL;
		return;
	}
	nb_put(b, tmp, (size_t)n);
}

/* Append one escaped component (+ optional prefix/suffix inside it). */
static void nb_component(struct nbuf *b, const char *pre, const char *s, size_t n, const char *suf,
			 bool whole)
{
	char enc[3 * PATH_MAX + 16], out[3 * PATH_MAX + 64];
	size_t pl = strlen(pre), sl = strlen(suf);
	int m, k;

	if (b->err)
		return;
	if (n >= PATH_MAX) {
		b->err = -ENAMETOOLONG;
		return;
	}
	memcpy(enc, pre, pl);
	m = encode_bytes(s, n, whole, enc + pl, sizeof(enc) - pl - sl);
	if (m < 0) {
		b->err = m;
		return;
	}
	memcpy(enc + pl + m, suf, sl);
	k = split_chunks(enc, pl + (size_t)m + sl, out, sizeof(out));
	if (k < 0) {
		b->err = k;
		return;
	}
	nb_put(b, out, (size_t)k);
}

static int nb_image(struct nbuf *b, const struct op_image_name *im)
{
	const char *p = im->path;

	switch (im->kind) {
	case OP_IMAGE_KERNEL:
		if (!p || !*p)
			return -EINVAL;
		if (!strchr(p, '/')) {
			nb_str(b, "{kern}/");
			nb_component(b, "", p, strlen(p), "", true);
			return 0;
		}
		/* a kernel image given by path */
		__attribute__((fallthrough));
	case OP_IMAGE_USER:
		if (!p || p[0] != '/')
			return -EINVAL;
		nb_str(b, "{root}");
		p++;
		for (;;) {
			const char *sl = strchr(p, '/');
			size_t n = sl ? (size_t)(sl - p) : strlen(p);

			nb_put(b, "/", 1);
			nb_component(b, "", p, n, "", true);
			if (!sl || b->err)
				break;
			p = sl + 1;
		}
		return 0;
	case OP_IMAGE_ANON:
		if (im->tgid < 0)
			return -EINVAL;
		if (!p || !*p)
			p = "anon";
		/* the whole "{anon:NAME}" is one component; NAME is escaped
		 * byte-wise only (its braces make it unambiguous) */
		nb_component(b, "{anon:", p, strlen(p), "}", false);
		nb_fmt(b, "/%" PRId32 ".0x%" PRIx64 ".0x%" PRIx64, im->tgid, im->start, im->end);
		return 0;
	}
	return -EINVAL;
}

static bool event_name_ok(const char *ev)
{
	size_t n;

	if (!ev)
		return false;
	n = strlen(ev);
	if (n == 0 || n > OP_EVENT_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)ev[i];

		if (c <= 0x20 || c >= 0x7f || c == '.' || c == '/')
			return false;
	}
	return true;
}

static void nb_id(struct nbuf *b, bool on, int32_t v)
{
	if (on && v >= 0)
		nb_fmt(b, ".%" PRId32, v);
	else
		nb_str(b, ".all");
}

/* --- issue 20: per-process split key --- */
/* "{cgroup}/" and the key's components, each escaped, each followed by '/' */
static int nb_split(struct nbuf *b, const char *key)
{
	const char *p = key;

	if (!key || key[0] != '/')
		return -EINVAL;
	nb_str(b, OP_SPLIT_MARKER "/");
	p++;
	while (*p) {
		const char *sl = strchr(p, '/');
		size_t n = sl ? (size_t)(sl - p) : strlen(p);

		nb_component(b, "", p, n, "", true);
		nb_put(b, "/", 1);
		if (!sl)
			break;
		p = sl + 1;
	}
	return 0;
}

int op_mangle(const struct op_mangle_args *a, char *buf, size_t len)
{
	struct nbuf b = { .p = buf, .cap = len ? len - 1 : 0 };
	const struct op_image_name *app;
	unsigned sep;
	bool use_app;
	int rc;

	if (!a || !buf)
		return -EINVAL;
	if (len == 0)
		return -ENOBUFS;
	if (!event_name_ok(a->event))
		return -EINVAL;
	sep = a->separate;
	if (sep & OP_SEP_KERNEL)
		sep |= OP_SEP_LIB;
	if (a->image.kind == OP_IMAGE_ANON)
		use_app = true;
	else if (a->image.kind == OP_IMAGE_KERNEL)
		use_app = sep & OP_SEP_KERNEL;
	else
		use_app = sep & OP_SEP_LIB;
	app = use_app ? &a->app : &a->image;

	if (a->split) {
		rc = nb_split(&b, a->split);
		if (rc)
			return rc;
	}
	rc = nb_image(&b, app);
	if (rc)
		return rc;
	nb_str(&b, "/{dep}/");
	rc = nb_image(&b, &a->image);
	if (rc)
		return rc;
	if (a->is_cg) {
		nb_str(&b, "/{cg}/");
		rc = nb_image(&b, &a->cg_to);
		if (rc)
			return rc;
	}
	nb_fmt(&b, "/%s.%" PRIu64 ".%" PRIu32, a->event, a->count, a->um);
	nb_id(&b, sep & OP_SEP_THREAD, a->tgid);
	nb_id(&b, sep & OP_SEP_THREAD, a->tid);
	nb_id(&b, sep & OP_SEP_CPU, a->cpu);
	if (b.err)
		return b.err;
	buf[b.len] = '\0';
	return (int)b.len;
}

/* ---- parsing -------------------------------------------------------- */

enum comp_type { C_PLAIN, C_DEP, C_CG, C_ROOT, C_KERN, C_ANON, C_BAD, C_END };

struct pctx {
	const char *p, *end; /* cursor over the directory part */
	char *st;            /* next free byte of out->storage */
	size_t left;
	char *err;
	size_t err_len;
};

static void quote(char *q, size_t qlen, const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 8 < qlen; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(q + o, qlen - o, "\\x%02x", c);
		else
			q[o++] = (char)c;
		if (i + 1 < n && o + 8 >= qlen) {
			memcpy(q + o, "...", 3);
			o += 3;
		}
	}
	q[o] = '\0';
}

static int perr(struct pctx *c, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(struct pctx *c, int rc, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!c->err || !c->err_len)
		return rc;
	n = snprintf(c->err, c->err_len, "sample file name: ");
	if (n < 0 || (size_t)n >= c->err_len)
		return rc;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->err_len - (size_t)n, fmt, ap);
	va_end(ap);
	return rc;
}

/* Next logical component [*s, *e) with its continuation chunks. */
static bool next_comp(struct pctx *c, const char **s, const char **e, bool *chunked)
{
	const char *q, *r;

	while (c->p < c->end && *c->p == '/')
		c->p++;
	if (c->p >= c->end)
		return false;
	*s = c->p;
	*chunked = false;
	q = memchr(c->p, '/', (size_t)(c->end - c->p));
	if (!q)
		q = c->end;
	for (;;) {
		r = q;
		while (r < c->end && *r == '/')
			r++;
		if (c->end - r >= 2 && r[0] == '%' && r[1] == '+') {
			q = memchr(r, '/', (size_t)(c->end - r));
			if (!q)
				q = c->end;
			*chunked = true;
			continue;
		}
		break;
	}
	*e = q;
	c->p = q;
	return true;
}

static enum comp_type comp_type(const char *s, const char *e, bool chunked)
{
	size_t n = (size_t)(e - s), first = n;
	const char *sl = memchr(s, '/', n);
	enum comp_type t = C_PLAIN;

	if (sl)
		first = (size_t)(sl - s);
	if (first == 5 && !memcmp(s, "{dep}", 5))
		t = C_DEP;
	else if (first == 4 && !memcmp(s, "{cg}", 4))
		t = C_CG;
	else if (first == 6 && !memcmp(s, "{root}", 6))
		t = C_ROOT;
	else if (first == 6 && !memcmp(s, "{kern}", 6))
		t = C_KERN;
	else if (first >= 5 && !memcmp(s, "{anon", 5))
		return C_ANON;
	if (t != C_PLAIN && chunked)
		return C_BAD;
	return t;
}

static enum comp_type peek_type(struct pctx *c)
{
	struct pctx t = *c;
	const char *s, *e;
	bool ch;

	if (!next_comp(&t, &s, &e, &ch))
		return C_END;
	return comp_type(s, e, ch);
}

/* Decode a span into storage; returns pointer to the NUL-terminated copy. */
static int store_decoded(struct pctx *c, const char *what, const char *s, const char *e, char **dst)
{
	char q[96];
	int n = decode_span(s, e, c->st, c->left);

	if (n == -ENAMETOOLONG)
		return perr(c, -ENAMETOOLONG, "%s: name too long", what);
	if (n < 0) {
		quote(q, sizeof(q), s, (size_t)(e - s));
		return perr(c, -EINVAL,
			    "%s: bad escape in component \"%s\": expected %%XX (two hex digits, not 00) or the continuation mark %%+",
			    what, q);
	}
	*dst = c->st;
	c->st += n + 1;
	c->left -= (size_t)n + 1;
	return n;
}

static bool parse_dec(const char *s, size_t n, uint64_t max, uint64_t *v)
{
	uint64_t x = 0;

	if (n == 0 || n > 20)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned d;

		if (s[i] < '0' || s[i] > '9')
			return false;
		d = (unsigned)(s[i] - '0');
		if (x > (max - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

static bool parse_hex0x(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;

	if (n < 3 || n > 18 || s[0] != '0' || s[1] != 'x')
		return false;
	for (size_t i = 2; i < n; i++) {
		int h = op_hexval(s[i]);

		if (h < 0)
			return false;
		x = x << 4 | (unsigned)h;
	}
	*v = x;
	return true;
}

static const char *type_name(enum comp_type t)
{
	switch (t) {
	case C_DEP:
		return "{dep}";
	case C_CG:
		return "{cg}";
	case C_ROOT:
		return "{root}";
	case C_KERN:
		return "{kern}";
	case C_ANON:
		return "{anon:...}";
	case C_BAD:
		return "a marker split by a continuation chunk";
	case C_PLAIN:
		return "a path component";
	default:
		return "end of the directory part";
	}
}

static int parse_image(struct pctx *c, const char *what, struct op_image_name *im)
{
	const char *s, *e;
	bool ch;
	char q[96];
	int n;

	memset(im, 0, sizeof(*im));
	if (!next_comp(c, &s, &e, &ch))
		return perr(c, -EINVAL,
			    "%s: expected {root}, {kern} or {anon:NAME}, found end of name", what);
	switch (comp_type(s, e, ch)) {
	case C_ROOT: {
		char *start = c->st, *dummy;
		int parts = 0;

		im->kind = OP_IMAGE_USER;
		while (peek_type(c) == C_PLAIN) {
			next_comp(c, &s, &e, &ch);
			if (c->left < 2)
				return perr(c, -ENAMETOOLONG, "%s: path too long", what);
			/* overwrite the previous NUL with '/' to join */
			if (parts)
				c->st--, c->left++;
			*c->st++ = '/';
			c->left--;
			n = store_decoded(c, what, s, e, &dummy);
			if (n < 0)
				return n;
			if (memchr(dummy, '/', (size_t)n)) {
				char q[96];

				quote(q, sizeof(q), s, (size_t)(e - s));
				return perr(c, -EINVAL,
					    "%s: path component \"%s\" decodes to a '/'", what, q);
			}
			parts++;
		}
		if (!parts)
			return perr(c, -EINVAL,
				    "%s: {root} must be followed by the path components, found %s",
				    what, type_name(peek_type(c)));
		im->path = start;
		return 0;
	}
	case C_KERN: {
		char *name;

		im->kind = OP_IMAGE_KERNEL;
		if (peek_type(c) != C_PLAIN)
			return perr(c, -EINVAL,
				    "%s: {kern} must be followed by a kernel image name, found %s",
				    what, type_name(peek_type(c)));
		next_comp(c, &s, &e, &ch);
		n = store_decoded(c, what, s, e, &name);
		if (n < 0)
			return n;
		if (n == 0 || strchr(name, '/'))
			return perr(c, -EINVAL,
				    "%s: {kern} name must be non-empty without '/', found \"%s\"",
				    what, name);
		im->path = name;
		return 0;
	}
	case C_ANON: {
		char *name;
		const char *dot1, *dot2;
		uint64_t tgid;

		im->kind = OP_IMAGE_ANON;
		if (e - s < 7 || memcmp(s, "{anon:", 6) || e[-1] != '}') {
			quote(q, sizeof(q), s, (size_t)(e - s));
			return perr(c, -EINVAL, "%s: expected {anon:NAME}, found \"%s\"", what, q);
		}
		n = store_decoded(c, what, s + 6, e - 1, &name);
		if (n < 0)
			return n;
		im->path = name;
		if (peek_type(c) != C_PLAIN)
			return perr(c, -EINVAL,
				    "%s: {anon:%s} must be followed by TGID.0xSTART.0xEND, found %s",
				    what, name, type_name(peek_type(c)));
		next_comp(c, &s, &e, &ch);
		quote(q, sizeof(q), s, (size_t)(e - s));
		dot1 = memchr(s, '.', (size_t)(e - s));
		dot2 = dot1 ? memchr(dot1 + 1, '.', (size_t)(e - dot1 - 1)) : NULL;
		if (ch || !dot2 || !parse_dec(s, (size_t)(dot1 - s), INT32_MAX, &tgid) ||
		    !parse_hex0x(dot1 + 1, (size_t)(dot2 - dot1 - 1), &im->start) ||
		    !parse_hex0x(dot2 + 1, (size_t)(e - dot2 - 1), &im->end))
			return perr(c, -EINVAL,
				    "%s: anon range: expected TGID.0xSTART.0xEND, found \"%s\"",
				    what, q);
		im->tgid = (int32_t)tgid;
		return 0;
	}
	default:
		quote(q, sizeof(q), s, (size_t)(e - s));
		return perr(c, -EINVAL, "%s: expected {root}, {kern} or {anon:NAME}, found \"%s\"",
			    what, q);
	}
}

static int parse_id(struct pctx *c, const char *field, const char *s, size_t n, int32_t *v)
{
	uint64_t x;
	char q[96];

	if (n == 3 && !memcmp(s, "all", 3)) {
		*v = -1;
		return 0;
	}
	if (!parse_dec(s, n, INT32_MAX, &x)) {
		quote(q, sizeof(q), s, n);
		return perr(c, -EINVAL,
			    "event part: field %s: expected a decimal number or \"all\", found \"%s\"",
			    field, q);
	}
	*v = (int32_t)x;
	return 0;
}

static int parse_event_part(struct pctx *c, const char *s, struct op_parsed_name *out)
{
	static const char *const fname[6] = { "1 (event name)", "2 (count)", "3 (unit mask)",
					      "4 (tgid)",       "5 (tid)",   "6 (cpu)" };
	const char *f[7];
	size_t fl[6];
	int nf = 0;
	const char *p = s;
	uint64_t x;
	char q[96];
	int rc;

	quote(q, sizeof(q), s, strlen(s));
	f[0] = s;
	for (;;) {
		const char *d = strchr(p, '.');

		if (nf < 6) {
			fl[nf] = d ? (size_t)(d - p) : strlen(p);
			f[nf] = p;
		}
		nf++;
		if (!d)
			break;
		p = d + 1;
	}
	if (nf != 6)
		return perr(c, -EINVAL,
			    "event part \"%s\": expected 6 '.'-separated fields EVENT.COUNT.UM.TGID.TID.CPU, found %d",
			    q, nf);
	for (int i = 0; i < 6; i++)
		if (fl[i] == 0)
			return perr(c, -EINVAL, "event part \"%s\": field %s is empty", q, fname[i]);
	if (fl[0] > OP_EVENT_NAME_MAX)
		return perr(c, -EINVAL, "event part \"%s\": field %s: longer than %d bytes", q,
			    fname[0], OP_EVENT_NAME_MAX);
	for (size_t i = 0; i < fl[0]; i++) {
		unsigned char ch = (unsigned char)f[0][i];

		if (ch <= 0x20 || ch >= 0x7f)
			return perr(c, -EINVAL,
				    "event part \"%s\": field %s: unexpected byte 0x%02x", q,
				    fname[0], ch);
	}
	memcpy(out->event, f[0], fl[0]);
	out->event[fl[0]] = '\0';
	if (!parse_dec(f[1], fl[1], UINT64_MAX, &out->count))
		return perr(c, -EINVAL,
			    "event part \"%s\": field %s: expected a decimal number, found \"%.*s\"",
			    q, fname[1], (int)fl[1], f[1]);
	if (!parse_dec(f[2], fl[2], UINT32_MAX, &x))
		return perr(c, -EINVAL,
			    "event part \"%s\": field %s: expected a decimal number below 2^32, found \"%.*s\"",
			    q, fname[2], (int)fl[2], f[2]);
	out->um = (uint32_t)x;
	rc = parse_id(c, fname[3], f[3], fl[3], &out->tgid);
	if (!rc)
		rc = parse_id(c, fname[4], f[4], fl[4], &out->tid);
	if (!rc)
		rc = parse_id(c, fname[5], f[5], fl[5], &out->cpu);
	return rc;
}

/* --- issue 20: per-process split key --- */
/* the components [@from, @to) after {cgroup}, decoded and joined as "/a/b" ("/": none) */
static int parse_split(struct pctx *c, const char *from, const char *to, struct op_parsed_name *out)
{
	struct pctx k = *c;
	char *start = c->st, *dummy, q[96];
	const char *s, *e;
	int n, parts = 0;
	bool ch;

	k.p = from;
	k.end = to;
	while (next_comp(&k, &s, &e, &ch)) {
		if (c->left < 2)
			return perr(c, -ENAMETOOLONG, "split key: too long");
		/* overwrite the previous NUL with '/' to join */
		if (parts)
			c->st--, c->left++;
		*c->st++ = '/';
		c->left--;
		n = store_decoded(c, "split key", s, e, &dummy);
		if (n < 0)
			return n;
		if (memchr(dummy, '/', (size_t)n)) {
			quote(q, sizeof(q), s, (size_t)(e - s));
			return perr(c, -EINVAL, "split key: component \"%s\" decodes to a '/'", q);
		}
		parts++;
	}
	if (!parts) { /* the root */
		if (c->left < 2)
			return perr(c, -ENAMETOOLONG, "split key: too long");
		memcpy(c->st, "/", 2);
		c->st += 2;
		c->left -= 2;
	}
	out->split = start;
	return 0;
}

int op_parse_name(const char *name, struct op_parsed_name *out, char *err, size_t err_len)
{
	struct pctx c = { .err = err, .err_len = err_len };
	const char *last, *s, *e, *split = NULL;
	enum comp_type t;
	bool ch;
	int rc;

	if (err && err_len)
		err[0] = '\0';
	if (!name || !out)
		return perr(&c, -EINVAL, "no name given");
	memset(out, 0, offsetof(struct op_parsed_name, storage));
	out->tgid = out->tid = out->cpu = -1;
	c.st = out->storage;
	c.left = sizeof(out->storage);
	if (strlen(name) >= sizeof(out->storage))
		return perr(&c, -ENAMETOOLONG, "longer than %zu bytes", sizeof(out->storage) - 1);
	last = strrchr(name, '/');
	if (!last)
		return perr(&c, -EINVAL,
			    "expected A/{dep}/B/EVENT.COUNT.UM.TGID.TID.CPU, found no '/'");
	c.p = name;
	c.end = last;

	/*
	 * skip a session prefix up to the first image marker; the components
	 * after the last {cgroup} in it are the split key (issue 20: the
	 * marker is escaped everywhere else, so the last one is ours)
	 */
	for (;;) {
		struct pctx t0 = c;

		if (!next_comp(&t0, &s, &e, &ch))
			return perr(&c, -EINVAL,
				    "no {root}, {kern} or {anon:NAME} component before the event part");
		t = comp_type(s, e, ch);
		if (t == C_ROOT || t == C_KERN || t == C_ANON)
			break;
		if (!ch && (size_t)(e - s) == strlen(OP_SPLIT_MARKER) &&
		    !memcmp(s, OP_SPLIT_MARKER, (size_t)(e - s)))
			split = e;
		c = t0;
	}
	if (split) {
		rc = parse_split(&c, split, c.p, out);
		if (rc)
			return rc;
	}
	rc = parse_image(&c, "application", &out->app);
	if (rc)
		return rc;
	t = peek_type(&c);
	if (t != C_DEP)
		return perr(&c, -EINVAL, "expected {dep} after the application, found %s",
			    type_name(t));
	next_comp(&c, &s, &e, &ch);
	rc = parse_image(&c, "image", &out->image);
	if (rc)
		return rc;
	t = peek_type(&c);
	if (t == C_CG) {
		next_comp(&c, &s, &e, &ch);
		out->is_cg = true;
		rc = parse_image(&c, "callee image", &out->cg_to);
		if (rc)
			return rc;
		t = peek_type(&c);
	}
	if (t != C_END)
		return perr(&c, -EINVAL, "expected %sthe event part after the %s, found %s",
			    out->is_cg ? "" : "{cg} or ", out->is_cg ? "callee image" : "image",
			    type_name(t));
	return parse_event_part(&c, last + 1, out);
}
