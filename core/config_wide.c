/*
 * config_wide.c - integers libconfig 1.5 cuts to 32 bits: the source files
 * read again, every integer literal libconfig kept otherwise recorded on
 * the root setting's hook, and conf_int(), which answers from it.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libconfig.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf_int.h"

/* ------------------------------------------------------------------ */
/* integers libconfig 1.5 cuts to 32 bits                              */
/* ------------------------------------------------------------------ */

/*
 * libconfig 1.5 reads an integer literal without an L suffix through an
 * int: 4294967297 becomes 1, 4294967356 becomes 60, 99999999999999999999
 * becomes -1, without a word. conf_load reads the source files again and
 * keeps, for every named integer setting whose literal says something else
 * than libconfig kept, the literal's value (a struct conf_wide, in the
 * table on the root setting's hook); conf_int() answers from it. Settings
 * are matched to their "key =" in document order by name and line
 * (libconfig's line of a setting is its key's). A newer libconfig that
 * reads such literals as 64-bit integers leaves the table empty.
 */
struct conf_wide {
	const config_setting_t *s;
	int64_t v;
	bool overflow; /* beyond 64 bits: v means nothing */
	char text[32]; /* the literal as written (cut) */
};

struct conf_wides {
	struct conf_wide *e;
	size_t n;
};

/* one "key =" or "key :" of a source file */
struct conf_assign {
	const char *key; /* into the file's text */
	size_t key_len;
	unsigned line;
	const char *lit; /* an integer literal without L suffix after it, or NULL */
	size_t lit_len;
};

struct conf_src {
	const char *name; /* as libconfig names it (config_setting_source_file) */
	char *text;
	struct conf_assign *a;
	size_t n, next; /* next: where the document-order match goes on */
	bool failed;    /* unreadable, or the lexer lost step: no corrections */
};

#define CONF_MAX_SRCS 16

struct conf_scan {
	const config_t *cfg;
	const char *path; /* the main file as given to config_read_file */
	struct conf_src src[CONF_MAX_SRCS];
	size_t nr_src;
	struct conf_wides *w;
};

static void conf_wides_free(void *hook)
{
	struct conf_wides *w = hook;

	if (w) {
		free(w->e);
		free(w);
	}
}

static char *conf_read_text(const char *path)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return NULL;
	/* libconfig read it already: only a regular file, and not absurdly large */
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > (64 << 20))
		goto out;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		goto out;
	while (len < (size_t)st.st_size && (n = read(fd, buf + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
out:
	close(fd);
	return buf;
}

static bool conf_name_start(char c)
{
	return isalpha((unsigned char)c) || c == '*';
}

static bool conf_name_char(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_' || c == '*';
}

/* past blanks and comments (#, //, slash-star), counting lines */
static const char *conf_skip(const char *p, unsigned *line)
{
	for (;;) {
		if (*p == '\n') {
			(*line)++;
			p++;
		} else if (isspace((unsigned char)*p)) {
			p++;
		} else if (*p == '#' || (p[0] == '/' && p[1] == '/')) {
			while (*p && *p != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			for (p += 2; *p && !(p[0] == '*' && p[1] == '/'); p++)
				if (*p == '\n')
					(*line)++;
			if (*p)
				p += 2;
		} else {
			return p;
		}
	}
}

/* [+-]DIGITS or 0xHEX, no L suffix (libconfig reads those as 64 bits) */
static bool conf_int32_literal(const char *s, size_t n)
{
	size_t i = 0, start;
	bool hex = false;

	if (n && (s[0] == '+' || s[0] == '-'))
		i++;
	if (n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		hex = true;
		i += 2;
	}
	for (start = i; i < n; i++)
		if (hex ? !isxdigit((unsigned char)s[i]) : !isdigit((unsigned char)s[i]))
			return false;
	return i > start;
}

/* the literal's value; false when it does not fit 64 bits */
static bool conf_literal_value(const char *s, size_t n, int64_t *v)
{
	char buf[80];
	bool neg = false, hex;
	unsigned long long u;
	size_t i = 0;

	if (n && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		i++;
	}
	hex = n - i > 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X');
	if (hex)
		i += 2;
	while (i + 1 < n && s[i] == '0')
		i++;
	if (n - i >= sizeof(buf))
		return false;
	memcpy(buf, s + i, n - i);
	buf[n - i] = '\0';
	errno = 0;
	u = strtoull(buf, NULL, hex ? 16 : 10);
	if (errno || u > (unsigned long long)INT64_MAX + neg)
		return false;
	*v = neg ? (int64_t)(0 - u) : (int64_t)u;
	return true;
}

static int conf_add_assign(struct conf_src *src, size_t *cap, const struct conf_assign *a)
{
	if (src->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct conf_assign *na = realloc(src->a, ncap * sizeof(*na));

		if (!na)
			return -ENOMEM;
		src->a = na;
		*cap = ncap;
	}
	src->a[src->n++] = *a;
	return 0;
}

/* every "key =" / "key :" of the text, in order, with the integer literal after it */
static int conf_lex(struct conf_src *src)
{
	const char *p = src->text;
	unsigned line = 1;
	size_t cap = 0;

	for (;;) {
		struct conf_assign a = { 0 };
		const char *v;

		p = conf_skip(p, &line);
		if (!*p)
			return 0;
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1])
					p++;
				if (*p == '\n')
					line++;
			}
			if (*p)
				p++;
			continue;
		}
		if (!conf_name_start(*p)) {
			p++;
			continue;
		}
		a.key = p;
		a.line = line;
		while (conf_name_char(*p))
			p++;
		a.key_len = (size_t)(p - a.key);
		p = conf_skip(p, &line);
		if (*p != '=' && *p != ':')
			continue; /* @include's "include", true, false */
		p = conf_skip(p + 1, &line);
		for (v = p; *p == '+' || *p == '-' || *p == '.' || isalnum((unsigned char)*p); p++)
			;
		if (conf_int32_literal(v, (size_t)(p - v))) {
			a.lit = v;
			a.lit_len = (size_t)(p - v);
		}
		if (conf_add_assign(src, &cap, &a))
			return -ENOMEM;
	}
}

/* the source file libconfig names @name, read and lexed once; NULL if unusable */
static struct conf_src *conf_scan_src(struct conf_scan *sc, const char *name)
{
	const char *dir = config_get_include_dir(sc->cfg);
	struct conf_src *src;
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < sc->nr_src; i++)
		if (!strcmp(sc->src[i].name, name))
			return sc->src[i].failed ? NULL : &sc->src[i];
	if (sc->nr_src == CONF_MAX_SRCS)
		return NULL;
	src = &sc->src[sc->nr_src++];
	src->name = name;
	/* libconfig 1.5 opens every @include as INCLUDE_DIR/NAME */
	if (!strcmp(name, sc->path) || !dir)
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "%s/%s", dir, name);
	src->text = conf_read_text(path);
	if (!src->text || conf_lex(src))
		src->failed = true;
	return src->failed ? NULL : src;
}

/* the index of @s's "key =" in @src: the next one of its name and line */
static bool conf_scan_match(struct conf_src *src, const config_setting_t *s, size_t *out)
{
	const char *name = config_setting_name(s);
	unsigned line = config_setting_source_line(s);
	size_t len = strlen(name), i, k;

	/* from where the last match left off; then from the start (a second @include) */
	for (k = 0; k < src->n; k++) {
		i = (src->next + k) % src->n;
		if (src->a[i].line == line && src->a[i].key_len == len &&
		    !memcmp(src->a[i].key, name, len)) {
			*out = i;
			return true;
		}
	}
	return false;
}

static int conf_scan_setting(struct conf_scan *sc, const config_setting_t *s)
{
	const char *file = config_setting_source_file(s);
	struct conf_src *src;
	struct conf_wide *e;
	const struct conf_assign *a;
	int64_t v = 0;
	bool fits;
	size_t i;

	if (!config_setting_name(s) || !file)
		return 0;
	src = conf_scan_src(sc, file);
	if (!src)
		return 0;
	if (!conf_scan_match(src, s, &i)) {
		src->failed = true; /* out of step with libconfig: correct nothing more */
		return 0;
	}
	src->next = i + 1;
	a = &src->a[i];
	if (config_setting_type(s) != CONFIG_TYPE_INT || !a->lit)
		return 0;
	fits = conf_literal_value(a->lit, a->lit_len, &v);
	if (fits && v == config_setting_get_int64(s))
		return 0;
	e = realloc(sc->w->e, (sc->w->n + 1) * sizeof(*e));
	if (!e)
		return -ENOMEM;
	sc->w->e = e;
	e = &e[sc->w->n++];
	e->s = s;
	e->v = v;
	e->overflow = !fits;
	snprintf(e->text, sizeof(e->text), "%.*s%s", (int)(a->lit_len < 24 ? a->lit_len : 24),
		 a->lit, a->lit_len < 24 ? "" : "...");
	return 0;
}

/* every setting under @s, in document order */
static int conf_scan_tree(struct conf_scan *sc, const config_setting_t *s)
{
	int i, n, rc;

	rc = conf_scan_setting(sc, s);
	if (rc || !config_setting_is_aggregate(s))
		return rc;
	n = config_setting_length(s);
	for (i = 0; i < n && !rc; i++)
		rc = conf_scan_tree(sc, config_setting_get_elem(s, (unsigned)i));
	return rc;
}

/* fill the root setting's hook with the integers libconfig cut; 0 or -ENOMEM */
int conf_scan_wide(config_t *cfg, const char *path)
{
	struct conf_scan sc = { .cfg = cfg, .path = path };
	size_t i;
	int rc;

	sc.w = calloc(1, sizeof(*sc.w));
	if (!sc.w)
		return -ENOMEM;
	config_set_destructor(cfg, conf_wides_free);
	config_setting_set_hook(config_root_setting(cfg), sc.w);
	rc = conf_scan_tree(&sc, config_root_setting(cfg));
	for (i = 0; i < sc.nr_src; i++) {
		free(sc.src[i].text);
		free(sc.src[i].a);
	}
	return rc;
}

/*
 * The value of integer setting @s of @cfg: libconfig's, or its literal's
 * when libconfig cut it. -ERANGE when the literal does not fit 64 bits;
 * *text then points to it as written.
 */
int conf_int(const config_t *cfg, const config_setting_t *s, int64_t *v, const char **text)
{
	const struct conf_wides *w = config_setting_get_hook(config_root_setting(cfg));
	size_t i;

	for (i = 0; w && i < w->n; i++) {
		if (w->e[i].s != s)
			continue;
		*text = w->e[i].text;
		if (w->e[i].overflow)
			return -ERANGE;
		*v = w->e[i].v;
		return 0;
	}
	*text = NULL;
	*v = config_setting_get_int64(s);
	return 0;
}
