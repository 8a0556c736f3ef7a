/*
 * config.c - reads oprofiled.conf with libconfig 1.5 into struct op_options
 * (every known key, type-checked, errors with FILE:LINE, unknown keys warned
 * with their full path) and serves plugins' scoped plugins.<name> lookups.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "conf.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <libconfig.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ext.h"
#include "log.h"
#include "op_mangle.h"
#include "op_interval.h"
#include "options.h"
#include "optval.h"

enum conf_kind { K_STR, K_STRLIST, K_INT, K_BOOL, K_PLUGINS, K_DURATION };

struct conf_key {
	const char *name;
	enum conf_kind kind;
	int64_t min, max; /* K_INT */
};

/* every top-level key oprofiled understands; keep conf/oprofiled.conf in step */
static const struct conf_key conf_keys[] = {
	{ "session_dir", K_STR, 0, 0 },
	{ "session_group", K_STR, 0, 0 },
	{ "events", K_STRLIST, 0, 0 },
	{ "separate", K_STRLIST, 0, 0 },
	{ "plugin_dir", K_STR, 0, 0 },
	{ "vmlinux", K_STR, 0, 0 },
	{ "no_vmlinux", K_BOOL, 0, 0 },
	{ "image", K_STRLIST, 0, 0 },
	{ "verbose", K_STRLIST, 0, 0 },
	{ "append", K_BOOL, 0, 0 },
	{ "ring_pages", K_INT, 1, OP_MAX_RING_PAGES },
	{ "system_wide", K_BOOL, 0, 0 },
	{ "proc_root", K_STR, 0, 0 },
	{ "cpu_type", K_STR, 0, 0 },
	{ "stats_interval", K_INT, 0, 86400 * 365 },
	{ "sync_interval", K_INT, 0, 86400 * 365 },
	{ "log_file", K_STR, 0, 0 },
	{ "daemonize", K_BOOL, 0, 0 },
	{ "max_open_files", K_INT, 1, 1 << 20 },
	{ "plugins", K_PLUGINS, 0, 0 },
	{ "rotate_interval", K_DURATION, 0, 86400 * 366 },
	{ "rotate_keep", K_INT, 1, 100000 },
};

static const char *conf_type_name(int type)
{
	switch (type) {
	case CONFIG_TYPE_GROUP: return "a group";
	case CONFIG_TYPE_INT: return "an integer";
	case CONFIG_TYPE_INT64: return "a 64-bit integer";
	case CONFIG_TYPE_FLOAT: return "a float";
	case CONFIG_TYPE_STRING: return "a string";
	case CONFIG_TYPE_BOOL: return "a boolean";
	case CONFIG_TYPE_ARRAY: return "an array";
	case CONFIG_TYPE_LIST: return "a list";
	default: return "nothing";
	}
}

/* "plugins.[1].args" style path of @s */
static void conf_path(const config_setting_t *s, char *buf, size_t len)
{
	const config_setting_t *chain[32];
	size_t n = 0, used = 0;

	buf[0] = '\0';
	for (; s && !config_setting_is_root(s) && n < 32; s = config_setting_parent(s))
		chain[n++] = s;
	while (n-- > 0 && used < len) {
		const char *name = config_setting_name(chain[n]);
		int w;

		if (name)
			w = snprintf(buf + used, len - used, "%s%s", used ? "." : "", name);
		else
			w = snprintf(buf + used, len - used, "[%d]", config_setting_index(chain[n]));
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

/* "FILE:LINE" of @s */
static void conf_where(const config_setting_t *s, const char *fallback, char *buf, size_t len)
{
	const char *f = config_setting_source_file(s);

	snprintf(buf, len, "%s:%u", f ? f : fallback, config_setting_source_line(s));
}

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
	bool overflow;  /* beyond 64 bits: v means nothing */
	char text[32];  /* the literal as written (cut) */
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
	size_t n, next;   /* next: where the document-order match goes on */
	bool failed;      /* unreadable, or the lexer lost step: no corrections */
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
	while (len < (size_t)st.st_size &&
	       (n = read(fd, buf + len, (size_t)st.st_size - len)) > 0)
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
static int conf_scan_wide(config_t *cfg, const char *path)
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
static int conf_int(const config_t *cfg, const config_setting_t *s, int64_t *v, const char **text)
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

struct conf_ctx {
	config_t *cfg;
	struct op_options *o;
	struct conf_result *res;
	const char *path;
	FILE *err;
	int rc;
};

static void conf_msg(struct conf_ctx *c, const config_setting_t *s, bool error,
		     const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void conf_msg(struct conf_ctx *c, const config_setting_t *s, bool error,
		     const char *fmt, ...)
{
	char where[PATH_MAX + 32], path[256], prefix[PATH_MAX + 320];
	va_list ap;

	conf_where(s, c->path, where, sizeof(where));
	conf_path(s, path, sizeof(path));
	if (c->err) {
		snprintf(prefix, sizeof(prefix), LOG_PREFIX "%s: %s\"%s\": ", where,
			 error ? "" : "warning: ", path);
		va_start(ap, fmt);
		log_vput(c->err, prefix, fmt, ap);
		va_end(ap);
	}
	if (error)
		c->rc = -EINVAL;
}

static bool conf_expect(struct conf_ctx *c, const config_setting_t *s, int type, const char *what)
{
	int t = config_setting_type(s);

	if (t == type || (type == CONFIG_TYPE_INT && t == CONFIG_TYPE_INT64))
		return true;
	conf_msg(c, s, true, "expected %s, found %s - fix the value's type", what, conf_type_name(t));
	return false;
}

/* string, or array/list of strings joined with ',' into a new string */
static char *conf_strlist(struct conf_ctx *c, const config_setting_t *s)
{
	size_t len = 0;
	char *out;
	int i, n;

	if (config_setting_type(s) == CONFIG_TYPE_STRING)
		return strdup(config_setting_get_string(s));
	if (config_setting_type(s) != CONFIG_TYPE_ARRAY && config_setting_type(s) != CONFIG_TYPE_LIST) {
		conf_msg(c, s, true, "expected a string or an array of strings, found %s",
			 conf_type_name(config_setting_type(s)));
		return NULL;
	}
	n = config_setting_length(s);
	for (i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

		if (config_setting_type(e) != CONFIG_TYPE_STRING) {
			conf_msg(c, e, true, "expected a string, found %s",
				 conf_type_name(config_setting_type(e)));
			return NULL;
		}
		len += strlen(config_setting_get_string(e)) + 1;
	}
	out = calloc(1, len + 1);
	if (!out)
		return NULL;
	for (i = 0; i < n; i++) {
		if (i)
			strcat(out, ",");
		strcat(out, config_setting_get_string(config_setting_get_elem(s, (unsigned)i)));
	}
	return out;
}

static void conf_replace(char **dst, char *val)
{
	free(*dst);
	*dst = val;
}

static void conf_one_plugin(struct conf_ctx *c, const config_setting_t *g, const char *name)
{
	const char *args = "";
	int enabled = 1;
	char where[PATH_MAX + 32];
	int i, n, rc;

	n = config_setting_length(g);
	for (i = 0; i < n; i++) {
		const config_setting_t *m = config_setting_get_elem(g, (unsigned)i);
		const char *k = config_setting_name(m);

		if (!strcmp(k, "args")) {
			if (conf_expect(c, m, CONFIG_TYPE_STRING, "a string"))
				args = config_setting_get_string(m);
		} else if (!strcmp(k, "enabled")) {
			if (conf_expect(c, m, CONFIG_TYPE_BOOL, "a boolean"))
				enabled = config_setting_get_bool(m);
		}
		/* "name" and plugin-specific keys: read by the plugin itself */
	}
	if (!enabled)
		return;
	/* the loader refuses it at start: say so with this line */
	if (!ext_name_valid(name)) {
		conf_msg(c, g, true, "plugin name \"%.80s\" is not valid - expected " OPTVAL_PLUGIN_NAME_RULE,
			 name);
		return;
	}
	conf_where(g, c->path, where, sizeof(where));
	rc = optval_add_feature(c->o, name, args, where, false);
	if (rc == -EEXIST)
		conf_msg(c, g, true, "plugin \"%s\" is configured twice - keep one entry", name);
	else if (rc == -ENOSPC)
		conf_msg(c, g, true, "more than %d plugins - remove some", OP_MAX_FEATURES);
	else if (rc)
		conf_msg(c, g, true, "%s", strerror(-rc));
}

static void conf_plugins(struct conf_ctx *c, const config_setting_t *s)
{
	int i, n = config_setting_length(s);

	if (config_setting_type(s) == CONFIG_TYPE_LIST) {
		for (i = 0; i < n; i++) {
			const config_setting_t *g = config_setting_get_elem(s, (unsigned)i);
			const char *name = NULL;

			if (!conf_expect(c, g, CONFIG_TYPE_GROUP, "a group { name = \"...\"; ... }"))
				continue;
			if (!config_setting_lookup_string(g, "name", &name)) {
				conf_msg(c, g, true, "plugin entry without a string 'name' - add name = \"PLUGIN\";");
				continue;
			}
			conf_one_plugin(c, g, name);
		}
	} else if (config_setting_type(s) == CONFIG_TYPE_GROUP) {
		for (i = 0; i < n; i++) {
			const config_setting_t *g = config_setting_get_elem(s, (unsigned)i);

			if (!conf_expect(c, g, CONFIG_TYPE_GROUP, "a group of plugin settings"))
				continue;
			conf_one_plugin(c, g, config_setting_name(g));
		}
	} else {
		conf_msg(c, s, true, "expected a list ( { name = ...; }, ... ) or a group { NAME = { ... }; }, found %s",
			 conf_type_name(config_setting_type(s)));
	}
}

/* integer setting @s within @k's range: true with *v, else false after a message */
static bool conf_range(struct conf_ctx *c, const config_setting_t *s, const struct conf_key *k,
		       const char *unit, int64_t *v)
{
	const char *text;
	char found[40];

	if (conf_int(c->cfg, s, v, &text) == 0) {
		if (*v >= k->min && *v <= k->max)
			return true;
		snprintf(found, sizeof(found), "%lld", (long long)*v);
		text = found;
	}
	conf_msg(c, s, true, "%s is out of range, expected %lld..%lld%s", text, (long long)k->min,
		 (long long)k->max, unit);
	return false;
}

static void conf_apply(struct conf_ctx *c, const config_setting_t *s, const struct conf_key *k)
{
	struct op_options *o = c->o;
	const char *n = k->name;
	char err[256];
	char *str = NULL;
	int64_t v = 0;

	switch (k->kind) {
	case K_STR:
		if (!conf_expect(c, s, CONFIG_TYPE_STRING, "a string"))
			return;
		str = strdup(config_setting_get_string(s));
		break;
	case K_STRLIST:
		str = conf_strlist(c, s);
		if (!str)
			return;
		break;
	case K_INT:
		if (!conf_expect(c, s, CONFIG_TYPE_INT, "an integer") || !conf_range(c, s, k, "", &v))
			return;
		break;
	case K_BOOL:
		if (!conf_expect(c, s, CONFIG_TYPE_BOOL, "a boolean (true/false)"))
			return;
		v = config_setting_get_bool(s);
		break;
	case K_PLUGINS:
		conf_plugins(c, s);
		return;
	case K_DURATION: {
		unsigned secs;

		/* seconds as an integer, or a string with a unit ("5m", "1h") */
		if (config_setting_type(s) == CONFIG_TYPE_STRING) {
			if (op_parse_interval(config_setting_get_string(s), &secs, err,
						   sizeof(err))) {
				conf_msg(c, s, true, "%s", err);
				return;
			}
			v = secs;
			break;
		}
		if (!conf_expect(c, s, CONFIG_TYPE_INT, "seconds or a string like \"5m\"") ||
		    !conf_range(c, s, k, " seconds", &v))
			return;
		break;
	}
	}

	if (!strcmp(n, "session_dir")) {
		/* "" would make the cwd the session: "/" under systemd */
		if (str && !*str) {
			conf_msg(c, s, true, "empty directory name - give a directory, or remove "
					     "the line for the default");
			free(str);
		} else {
			conf_replace(&o->session_dir, str);
		}
	} else if (!strcmp(n, "session_group")) {
		int rc = str ? optval_check_group(str) : -ENOMEM;

		if (rc)
			conf_msg(c, s, true, "\"%s\": %s - give an existing group, or remove the "
					     "line to keep a root daemon's session private",
				 str ? str : "", rc == -ENOENT ? "no such group" : strerror(-rc));
		if (rc)
			free(str);
		else
			conf_replace(&o->session_group, str);
	}
	else if (!strcmp(n, "events")) {
		char where[PATH_MAX + 32];

		conf_replace(&o->events_spec, str);
		/* the daemon validates events later: its messages name this line */
		conf_where(s, c->path, where, sizeof(where));
		free(o->events_origin);
		o->events_origin = strdup(where);
	}
	else if (!strcmp(n, "plugin_dir"))
		conf_replace(&o->plugin_dir, str);
	else if (!strcmp(n, "vmlinux"))
		conf_replace(&o->vmlinux, str);
	else if (!strcmp(n, "proc_root"))
		conf_replace(&o->proc_root, str);
	else if (!strcmp(n, "cpu_type"))
		conf_replace(&o->cpu_type, str);
	else if (!strcmp(n, "log_file"))
		conf_replace(&o->log_file, str);
	else if (!strcmp(n, "separate")) {
		if (optval_parse_separate(str, &o->separate, err, sizeof(err)))
			conf_msg(c, s, true, "%s", err);
		free(str);
	} else if (!strcmp(n, "verbose")) {
		if (optval_parse_verbose(str, &o->verbose, err, sizeof(err)))
			conf_msg(c, s, true, "%s", err);
		free(str);
	} else if (!strcmp(n, "image")) {
		if (optval_set_image(o, str))
			conf_msg(c, s, true, "out of memory");
		free(str);
	} else if (!strcmp(n, "no_vmlinux"))
		o->no_vmlinux = v;
	else if (!strcmp(n, "append"))
		o->append = v;
	else if (!strcmp(n, "system_wide"))
		c->res->system_wide = v;
	else if (!strcmp(n, "daemonize"))
		o->daemonize = v;
	else if (!strcmp(n, "ring_pages")) {
		if (v & (v - 1))
			conf_msg(c, s, true, "%lld is not a power of two - use 1, 2, 4, ... pages",
				 (long long)v);
		else
			o->ring_pages = (size_t)v;
	} else if (!strcmp(n, "stats_interval"))
		o->stats_interval = (unsigned)v;
	else if (!strcmp(n, "sync_interval"))
		o->sync_interval = (unsigned)v;
	else if (!strcmp(n, "max_open_files"))
		o->max_open_files = (unsigned)v;
	else if (!strcmp(n, "rotate_interval"))
		o->rotate_interval = (unsigned)v;
	else if (!strcmp(n, "rotate_keep"))
		o->rotate_keep = (unsigned)v;
	else
		free(str);
}

int conf_load(struct op_options *o, const char *path, struct conf_result *res, FILE *err)
{
	struct conf_ctx c = { .o = o, .res = res, .path = path, .err = err };
	int rc;
	config_setting_t *root;
	char *dir, *slash;
	config_t *cfg;
	FILE *f;
	int i, n;

	f = fopen(path, "r");
	if (!f) {
		int e = errno;

		log_put(err, LOG_PREFIX, "cannot read config file %s: %s - check --config", path,
			strerror(e));
		return -e;
	}
	fclose(f);

	cfg = calloc(1, sizeof(*cfg));
	dir = strdup(path);
	if (!cfg || !dir) {
		free(cfg);
		free(dir);
		return -ENOMEM;
	}
	config_init(cfg);
	/* @include paths are relative to the main file's directory (see deps.md) */
	slash = strrchr(dir, '/');
	if (slash) {
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		config_set_include_dir(cfg, dir);
	}
	if (config_read_file(cfg, path) != CONFIG_TRUE) {
		log_put(err, LOG_PREFIX, "%s:%d: %s - %s",
			config_error_file(cfg) ? config_error_file(cfg) : path,
			config_error_line(cfg), config_error_text(cfg),
			strstr(config_error_text(cfg), "include")
				? "@include paths are relative to the including config file's directory"
				: "fix the config file syntax");
		config_destroy(cfg);
		free(cfg);
		free(dir);
		return -EINVAL;
	}
	free(dir); /* libconfig copied it */
	rc = conf_scan_wide(cfg, path);
	if (rc) {
		conf_free(cfg);
		return rc;
	}
	c.cfg = cfg;

	root = config_root_setting(cfg);
	n = config_setting_length(root);
	for (i = 0; i < n; i++) {
		config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
		const char *name = config_setting_name(s);
		size_t k;

		for (k = 0; k < sizeof(conf_keys) / sizeof(conf_keys[0]); k++)
			if (!strcmp(conf_keys[k].name, name))
				break;
		if (k == sizeof(conf_keys) / sizeof(conf_keys[0])) {
			conf_msg(&c, s, false, "unknown setting ignored - see conf/oprofiled.conf for the known ones");
			res->warnings++;
			continue;
		}
		conf_apply(&c, s, &conf_keys[k]);
	}
	if (c.rc) {
		config_destroy(cfg);
		free(cfg);
		return c.rc;
	}
	if (o->config)
		conf_free(o->config);
	o->config = cfg;
	return 0;
}

const char *conf_key_name(size_t i)
{
	return i < sizeof(conf_keys) / sizeof(conf_keys[0]) ? conf_keys[i].name : NULL;
}

void conf_free(void *config)
{
	if (!config)
		return;
	config_destroy(config);
	free(config);
}

/* the group holding plugins.<plugin>'s settings, in either form, or NULL */
static config_setting_t *conf_plugin_group(config_t *cfg, const char *plugin)
{
	config_setting_t *pl = config_lookup(cfg, "plugins");
	int i, n;

	if (!pl)
		return NULL;
	if (config_setting_type(pl) == CONFIG_TYPE_GROUP) {
		config_setting_t *g = config_setting_get_member(pl, plugin);

		return g && config_setting_type(g) == CONFIG_TYPE_GROUP ? g : NULL;
	}
	if (config_setting_type(pl) != CONFIG_TYPE_LIST)
		return NULL;
	n = config_setting_length(pl);
	for (i = 0; i < n; i++) {
		config_setting_t *g = config_setting_get_elem(pl, (unsigned)i);
		const char *name;

		if (config_setting_type(g) == CONFIG_TYPE_GROUP &&
		    config_setting_lookup_string(g, "name", &name) && !strcmp(name, plugin))
			return g;
	}
	return NULL;
}

static config_setting_t *conf_plugin_key(void *config, const char *plugin, const char *key)
{
	config_setting_t *g;

	if (!config || !plugin || !key || !*key)
		return NULL;
	g = conf_plugin_group(config, plugin);
	return g ? config_setting_lookup(g, key) : NULL;
}

static int conf_mismatch(const config_setting_t *s, const char *plugin, const char *key,
			 const char *expected, char *why, size_t why_len)
{
	const char *f = config_setting_source_file(s);

	if (why && why_len)
		snprintf(why, why_len, "%s:%u: plugins.%s.%s: expected %s, found %s",
			 f ? f : "config", config_setting_source_line(s), plugin, key, expected,
			 conf_type_name(config_setting_type(s)));
	return -EINVAL;
}

int conf_plugin_string(void *config, const char *plugin, const char *key, const char **out,
		       char *why, size_t why_len)
{
	config_setting_t *s = conf_plugin_key(config, plugin, key);

	if (!s)
		return -ENOENT;
	if (config_setting_type(s) != CONFIG_TYPE_STRING)
		return conf_mismatch(s, plugin, key, "a string", why, why_len);
	*out = config_setting_get_string(s);
	return 0;
}

int conf_plugin_int64(void *config, const char *plugin, const char *key, int64_t *out,
		      char *why, size_t why_len)
{
	config_setting_t *s = conf_plugin_key(config, plugin, key);
	const char *f, *text;
	int64_t v;

	if (!s)
		return -ENOENT;
	if (config_setting_type(s) != CONFIG_TYPE_INT && config_setting_type(s) != CONFIG_TYPE_INT64)
		return conf_mismatch(s, plugin, key, "an integer", why, why_len);
	if (conf_int(config, s, &v, &text)) {
		f = config_setting_source_file(s);
		if (why && why_len)
			snprintf(why, why_len, "%s:%u: plugins.%s.%s: %s does not fit a 64-bit integer "
				 "(%" PRId64 "..%" PRId64 ")", f ? f : "config",
				 config_setting_source_line(s), plugin, key, text, INT64_MIN, INT64_MAX);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int conf_plugin_bool(void *config, const char *plugin, const char *key, bool *out, char *why,
		     size_t why_len)
{
	config_setting_t *s = conf_plugin_key(config, plugin, key);

	if (!s)
		return -ENOENT;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return conf_mismatch(s, plugin, key, "a boolean", why, why_len);
	*out = config_setting_get_bool(s);
	return 0;
}
