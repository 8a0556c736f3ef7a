/*
 * op_events.c - load an events/ catalogue (events + unit_masks, with
 * include:, um:a,b merging and the load-time sanity checks), validate event
 * specs against it and place events on counters.
 *
 * SPDX-License-Identifier: MIT
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "op_events.h"

#ifndef OP_DATADIR
#define OP_DATADIR "/usr/local/share/oprofile-ng"
#endif

const char *op_events_root(void)
{
	const char *e = getenv("OPROFILE_EVENTS_DIR");

	return (e && *e) ? e : OP_DATADIR "/events";
}

/* ---- small helpers -------------------------------------------------- */

static int verr(char *err, size_t len, const char *fmt, va_list ap)
{
	if (err && len)
		vsnprintf(err, len, fmt, ap);
	return -EINVAL;
}

static int serr(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int serr(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* append to a message already in @err */
static void eappend(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void eappend(char *err, size_t len, const char *fmt, ...)
{
	size_t n;
	va_list ap;

	if (!err || !len)
		return;
	n = strlen(err);
	if (n + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(err + n, len - n, fmt, ap);
	va_end(ap);
}

/* unsigned number, base 0 (or 16 when @hex), whole string, no sign/space */
static bool parse_u64(const char *s, int base, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || !isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	x = strtoull(s, &end, base);
	if (errno || *end)
		return false;
	*v = x;
	return true;
}

static bool parse_hex(const char *s, uint64_t *v)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		if (!isxdigit((unsigned char)s[2]))
			return false;
		return parse_u64(s, 16, v);
	}
	if (!isxdigit((unsigned char)s[0]))
		return false;
	for (const char *p = s; *p; p++)
		if (!isxdigit((unsigned char)*p))
			return false;
	errno = 0;
	*v = strtoull(s, NULL, 16);
	return errno == 0;
}

/* ---- loader --------------------------------------------------------- */

struct loader {
	struct op_events *c;
	const char *root;
	unsigned filter_bits;
	char *err;
	size_t err_len;
	const char *stack[OP_EVENTS_MAX_INCLUDE_DEPTH];
	unsigned depth;
	struct op_unit_mask *cur; /* mask whose entries are being read */
	const char *file;         /* current file and line */
	unsigned line;
};

/* "FILE:LINE: [unit mask NAME: ]message" into l->err; always -EINVAL */
static int lerr_at(struct loader *l, const char *file, unsigned line, const char *mask,
		   const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));
static int lerr_at(struct loader *l, const char *file, unsigned line, const char *mask,
		   const char *fmt, va_list ap)
{
	int n;

	if (!l->err || !l->err_len)
		return -EINVAL;
	if (mask)
		n = snprintf(l->err, l->err_len, "%s:%u: unit mask %s: ", file, line, mask);
	else
		n = snprintf(l->err, l->err_len, "%s:%u: ", file, line);
	if (n < 0 || (size_t)n >= l->err_len)
		return -EINVAL;
	vsnprintf(l->err + n, l->err_len - (size_t)n, fmt, ap);
	return -EINVAL;
}

static int lerr(struct loader *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int lerr(struct loader *l, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lerr_at(l, l->file, l->line, NULL, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int mask_err(struct loader *l, const struct op_unit_mask *m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int mask_err(struct loader *l, const struct op_unit_mask *m, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	lerr_at(l, m->file, m->line, m->name, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static struct op_unit_mask *find_mask(const struct op_events *c, const char *name)
{
	for (size_t i = 0; i < c->nr_masks; i++)
		if (!strcmp(c->masks[i]->name, name))
			return c->masks[i];
	return NULL;
}

const struct op_event *op_events_find(const struct op_events *c, const char *name)
{
	if (!c || !name)
		return NULL;
	for (size_t i = 0; i < c->nr_events; i++)
		if (!strcmp(c->events[i].name, name))
			return &c->events[i];
	return NULL;
}

const struct op_um_entry *op_um_find_name(const struct op_unit_mask *um, const char *name)
{
	for (unsigned i = 0; um && i < um->nr; i++)
		if (um->entries[i].name && !strcmp(um->entries[i].name, name))
			return &um->entries[i];
	return NULL;
}

static int add_mask(struct op_events *c, struct op_unit_mask *m)
{
	if (c->nr_masks == c->cap_masks) {
		size_t cap = c->cap_masks ? 2 * c->cap_masks : 32;
		void *p = realloc(c->masks, cap * sizeof(*c->masks));

		if (!p)
			return -ENOMEM;
		c->masks = p;
		c->cap_masks = cap;
	}
	c->masks[c->nr_masks++] = m;
	return 0;
}

static void free_mask(struct op_unit_mask *m)
{
	if (!m)
		return;
	if (!m->merged && m->entries) {
		for (unsigned i = 0; i < m->nr; i++) {
			free(m->entries[i].name);
			free(m->entries[i].desc);
		}
		free(m->entries[m->nr].name); /* a default name not yet resolved */
	}
	free(m->entries);
	free(m->name);
	free(m);
}

void op_events_free(struct op_events *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr_events; i++) {
		free(c->events[i].name);
		free(c->events[i].ext);
		free(c->events[i].desc);
	}
	free(c->events);
	for (size_t i = 0; i < c->nr_masks; i++)
		free_mask(c->masks[i]);
	free(c->masks);
	for (size_t i = 0; i < c->nr_files; i++)
		free(c->files[i]);
	free(c->files);
	free(c->root);
	free(c->model);
	memset(c, 0, sizeof(*c));
}

int op_events_timer(struct op_events *c)
{
	struct op_unit_mask *m;
	struct op_event *e;

	if (!c)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->root = strdup("(built in)");
	c->model = strdup("timer");
	c->nr_counters = 1;
	m = calloc(1, sizeof(*m));
	if (!c->root || !c->model || !m)
		goto out_nomem;
	/* entries[nr] is the slot free_mask() checks for a pending default name */
	m->entries = calloc(2, sizeof(*m->entries));
	m->name = strdup("zero");
	if (!m->entries || !m->name || add_mask(c, m)) {
		free_mask(m);
		goto out_nomem;
	}
	m->type = OP_UM_MANDATORY;
	m->nr = 1;
	m->used = true;
	m->file = "(built in)";
	m->entries[0].desc = strdup("No unit mask");
	c->events = calloc(1, sizeof(*c->events));
	if (!m->entries[0].desc || !c->events)
		goto out_nomem;
	c->cap_events = 1;
	e = &c->events[c->nr_events++];
	e->name = strdup(OP_TIMER_EVENT);
	e->desc = strdup("cpu-clock software event (timer mode, no hardware PMU): the count is "
			 "the sampling period in ns, 100000 = 10 kHz per CPU");
	if (!e->name || !e->desc)
		goto out_nomem;
	e->counter_mask = 1;
	e->um = m;
	e->minimum = OP_TIMER_MIN_PERIOD_NS;
	e->maximum = OP_TIMER_MAX_PERIOD_NS;
	e->filter = -1;
	e->file = "(built in)";
	return 0;
out_nomem:
	op_events_free(c);
	return -ENOMEM;
}

/* "arch/model": no empty, "." or ".." component, no leading '/', sane bytes */
static bool model_ok(const char *m)
{
	const char *p = m;

	if (!*m || *m == '/')
		return false;
	for (const char *q = m; *q; q++)
		if (!isalnum((unsigned char)*q) && !strchr("/_+-.", *q))
			return false;
	for (;;) {
		const char *sl = strchr(p, '/');
		size_t n = sl ? (size_t)(sl - p) : strlen(p);

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (!sl)
			return true;
		p = sl + 1;
	}
}

static bool name_ok(const char *s, const char *extra_bad)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch <= 0x20 || ch >= 0x7f || strchr(extra_bad, ch))
			return false;
	}
	return true;
}

static int parse_file(struct loader *l, const char *model, bool masks, bool top);

/* Read the included model's file of the same kind. */
static int do_include(struct loader *l, const char *model, bool masks)
{
	if (!model_ok(model))
		return lerr(l,
			    "include:%s: expected an arch/model directory name (no '.', '..' or leading '/')",
			    model);
	return parse_file(l, model, masks, false);
}

/* Split "tag:value" tokens; returns number of tokens, description in *desc. */
struct tok {
	char *tag, *val;
};

static int tokenize(struct loader *l, char *p, struct tok *t, int max, char **desc)
{
	int n = 0;

	*desc = NULL;
	for (;;) {
		char *colon;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		if (*p == ':') {
			p++;
			while (*p == ' ' || *p == '\t')
				p++;
			*desc = p;
			break;
		}
		if (n == max)
			return lerr(l, "too many tags on one line (more than %d)", max);
		t[n].tag = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = '\0';
		colon = strchr(t[n].tag, ':');
		if (!colon)
			return lerr(l, "expected tag:value, found \"%s\"", t[n].tag);
		*colon = '\0';
		t[n].val = colon + 1;
		n++;
	}
	return n;
}

static int finish_mask(struct loader *l);

/* ---- unit_masks ----------------------------------------------------- */

static int um_header(struct loader *l, char *line)
{
	struct tok t[8];
	char *desc, *name = NULL, *type = NULL, *def = NULL;
	struct op_unit_mask *m, *old;
	int n, rc;

	n = tokenize(l, line, t, 8, &desc);
	if (n < 0)
		return n;
	if (n == 0 && !desc)
		return 0;
	if (desc)
		return lerr(l, "unexpected description \": %s\" on a unit-mask header line", desc);
	for (int i = 0; i < n; i++) {
		char **slot;

		if (!strcmp(t[i].tag, "include")) {
			if (n != 1)
				return lerr(l, "include: must be alone on its line");
			rc = finish_mask(l);
			if (rc)
				return rc;
			return do_include(l, t[i].val, true);
		}
		if (!strcmp(t[i].tag, "name"))
			slot = &name;
		else if (!strcmp(t[i].tag, "type"))
			slot = &type;
		else if (!strcmp(t[i].tag, "default"))
			slot = &def;
		else
			return lerr(l,
				    "unknown tag \"%s\" (expected name:, type:, default: or include:)",
				    t[i].tag);
		if (*slot)
			return lerr(l, "duplicate %s: tag", t[i].tag);
		if (!*t[i].val)
			return lerr(l, "empty value for %s:", t[i].tag);
		*slot = t[i].val;
	}
	if (!name)
		return lerr(l, "missing name: tag on a unit-mask header line");
	if (!type)
		return lerr(l, "unit mask %s: missing type: tag", name);
	if (!def)
		return lerr(l, "unit mask %s: missing default: tag", name);
	if (!name_ok(name, ",:"))
		return lerr(l, "bad unit mask name \"%s\" (no ',', ':', spaces or control bytes)",
			    name);
	rc = finish_mask(l);
	if (rc)
		return rc;
	old = find_mask(l->c, name);
	if (old)
		return lerr(l, "duplicate unit mask %s (first defined at %s:%u)", name, old->file,
			    old->line);

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->file = l->file;
	m->line = l->line;
	if (!strcmp(type, "mandatory")) {
		m->type = OP_UM_MANDATORY;
	} else if (!strcmp(type, "bitmask")) {
		m->type = OP_UM_BITMASK;
	} else if (!strcmp(type, "exclusive")) {
		m->type = OP_UM_EXCLUSIVE;
	} else {
		free(m);
		return lerr(l,
			    "unit mask %s: unknown type \"%s\" (expected mandatory, bitmask or exclusive)",
			    name, type);
	}
	m->name = strdup(name);
	if (isdigit((unsigned char)def[0])) {
		uint64_t v;

		if (!parse_u64(def, 0, &v) || v > UINT32_MAX) {
			free_mask(m);
			return lerr(l, "unit mask %s: bad number \"%s\" for default:", name, def);
		}
		m->default_value = (uint32_t)v;
	} else {
		/* a default given by value name is resolved in finish_mask(); until
		 * then the name waits in the sentinel slot past the last entry */
		m->entries = calloc(1, sizeof(*m->entries));
		if (m->entries)
			m->entries[0].name = strdup(def);
		if (!m->entries || !m->entries[0].name) {
			free_mask(m);
			return -ENOMEM;
		}
	}
	if (!m->name || add_mask(l->c, m)) {
		free_mask(m);
		return -ENOMEM;
	}
	l->cur = m;
	return 0;
}

/* Named default waiting for resolution: kept past the end of entries. */
static char *pending_default(struct op_unit_mask *m)
{
	return m->entries ? m->entries[m->nr].name : NULL;
}

static int parse_extra(struct loader *l, const char *mods, uint32_t *extra)
{
	char buf[128], *save = NULL, *tok;

	*extra = 0;
	if (!*mods) {
		*extra = OP_UM_EXTRA_NONE;
		return 0;
	}
	if (strlen(mods) >= sizeof(buf))
		return lerr(l, "extra: modifiers too long");
	strcpy(buf, mods);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "edge")) {
			*extra |= OP_UM_EXTRA_EDGE;
		} else if (!strcmp(tok, "inv")) {
			*extra |= OP_UM_EXTRA_INV;
		} else if (!strcmp(tok, "any")) {
			*extra |= OP_UM_EXTRA_ANY;
		} else if (!strcmp(tok, "pebs")) {
			*extra |= OP_UM_EXTRA_PEBS;
		} else if (!strncmp(tok, "cmask=", 6)) {
			uint64_t v;

			if (!parse_hex(tok + 6, &v) || v > 0xff)
				return lerr(l, "extra: cmask=%s: expected a hex value up to 0xff",
					    tok + 6);
			*extra |= (uint32_t)v << OP_UM_EXTRA_CMASK_SHIFT;
		} else {
			return lerr(l,
				    "unknown extra: modifier \"%s\" (expected edge, inv, any, pebs or cmask=N)",
				    tok);
		}
	}
	if (!*extra)
		*extra = OP_UM_EXTRA_NONE;
	return 0;
}

static int um_entry(struct loader *l, char *p)
{
	struct op_unit_mask *m = l->cur;
	struct op_um_entry e = { 0 };
	char *val, *name = NULL;
	uint64_t v;
	char *pend;
	int rc;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!*p)
		return 0; /* whitespace-only line */
	if (!m)
		return lerr(l, "unit-mask entry before any name: header line");
	val = p;
	while (*p && *p != ' ' && *p != '\t')
		p++;
	if (*p)
		*p++ = '\0';
	if (!parse_u64(val, 0, &v) || v > UINT32_MAX)
		return lerr(l, "unit mask %s: bad number \"%s\" for an entry value", m->name, val);
	e.value = (uint32_t)v;
	while (*p == ' ' || *p == '\t')
		p++;
	if (!strncmp(p, "extra:", 6)) {
		char *mods = p + 6;

		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = '\0';
		rc = parse_extra(l, mods, &e.extra);
		if (rc)
			return rc;
		while (*p == ' ' || *p == '\t')
			p++;
		name = p;
		while (*p && *p != ' ' && *p != '\t')
			p++;
		if (*p)
			*p++ = '\0';
		if (!*name)
			return lerr(l, "unit mask %s: extra: must be followed by a value name",
				    m->name);
		if (!name_ok(name, ":,"))
			return lerr(l, "unit mask %s: bad value name \"%s\"", m->name, name);
		while (*p == ' ' || *p == '\t')
			p++;
	}
	if (m->nr >= OP_UM_MAX_ENTRIES)
		return lerr(l, "unit mask %s: more than %d entries", m->name, OP_UM_MAX_ENTRIES);
	pend = pending_default(m);
	{
		/* room for nr + 1 entries plus the pending-default slot */
		void *q = realloc(m->entries, (m->nr + 2) * sizeof(*m->entries));

		if (!q)
			return -ENOMEM;
		m->entries = q;
	}
	e.name = name ? strdup(name) : NULL;
	e.desc = strdup(p);
	if ((name && !e.name) || !e.desc) {
		free(e.name);
		free(e.desc);
		return -ENOMEM;
	}
	m->entries[m->nr++] = e;
	memset(&m->entries[m->nr], 0, sizeof(m->entries[0]));
	m->entries[m->nr].name = pend;
	return 0;
}

/* End of a mask's entries: resolve a named default, run the checks. */
static int finish_mask(struct loader *l)
{
	struct op_unit_mask *m = l->cur;
	char *pend;
	uint32_t all = 0;
	bool found = false;

	if (!m)
		return 0;
	l->cur = NULL;
	pend = pending_default(m);
	if (pend) {
		const struct op_um_entry *e;

		m->entries[m->nr].name = NULL;
		e = op_um_find_name(m, pend);
		if (!e) {
			int rc = mask_err(l, m, "default:%s names no entry of this mask", pend);

			free(pend);
			return rc;
		}
		m->default_value = e->value;
		free(pend);
	}
	if (m->nr == 0)
		return mask_err(l, m,
				"has no entries (expected TAB-indented \"0xVALUE description\" lines)");
	for (unsigned i = 0; i < m->nr; i++) {
		all |= m->entries[i].value;
		if (m->entries[i].value == m->default_value)
			found = true;
	}
	switch (m->type) {
	case OP_UM_MANDATORY:
		if (m->nr != 1)
			return mask_err(l, m, "type mandatory must have exactly 1 entry, found %u",
					m->nr);
		if (m->entries[0].value != m->default_value)
			return mask_err(l, m,
					"default 0x%" PRIx32
					" differs from its only entry 0x%" PRIx32,
					m->default_value, m->entries[0].value);
		break;
	case OP_UM_BITMASK:
		if (m->default_value & ~all)
			return mask_err(l, m,
					"bitmask default 0x%" PRIx32 " has bits 0x%" PRIx32
					" that no entry sets",
					m->default_value, m->default_value & ~all);
		break;
	case OP_UM_EXCLUSIVE:
		if (!found)
			return mask_err(l, m,
					"exclusive default 0x%" PRIx32 " equals none of its entries",
					m->default_value);
		break;
	}
	return 0;
}

/* ---- events --------------------------------------------------------- */

/* Resolve um:a[,b...]; builds and caches a merged mask for lists. */
static int resolve_um(struct loader *l, const char *list, const struct op_unit_mask **out)
{
	struct op_unit_mask *parts[OP_UM_MAX_ENTRIES], *m;
	char buf[512], *save = NULL, *tok;
	unsigned np = 0, total = 0;

	if (strlen(list) >= sizeof(buf))
		return lerr(l, "um:%s: list too long", list);
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		m = find_mask(l->c, tok);
		if (!m || m->merged)
			return lerr(l, "unknown unit mask \"%s\" in um:%s", tok, list);
		if (np == OP_UM_MAX_ENTRIES)
			return lerr(l, "um:%s: too many masks", list);
		parts[np++] = m;
	}
	if (np == 0)
		return lerr(l, "empty value for um:");
	for (unsigned i = 0; i < np; i++)
		parts[i]->used = true;
	if (np == 1) {
		*out = parts[0];
		return 0;
	}
	m = find_mask(l->c, list);
	if (m) {
		*out = m;
		return 0;
	}
	for (unsigned i = 0; i < np; i++) {
		if (parts[i]->type == OP_UM_MANDATORY || parts[i]->type != parts[0]->type)
			return lerr(l,
				    "um:%s: only masks of one type, bitmask or exclusive, can be merged (%s is %s)",
				    list, parts[i]->name,
				    parts[i]->type == OP_UM_MANDATORY ? "mandatory" :
				    parts[i]->type == OP_UM_BITMASK   ? "bitmask" :
									"exclusive");
		total += parts[i]->nr;
	}
	if (total > OP_UM_MAX_ENTRIES)
		return lerr(l, "um:%s: merged mask has %u entries, more than %d", list, total,
			    OP_UM_MAX_ENTRIES);
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->entries = calloc(total + 1, sizeof(*m->entries));
	m->name = strdup(list);
	if (!m->entries || !m->name) {
		free_mask(m);
		return -ENOMEM;
	}
	m->merged = true;
	m->used = true;
	m->type = parts[0]->type;
	m->file = l->file;
	m->line = l->line;
	m->default_value = parts[0]->default_value;
	for (unsigned i = 0; i < np; i++) {
		memcpy(m->entries + m->nr, parts[i]->entries, parts[i]->nr * sizeof(*m->entries));
		m->nr += parts[i]->nr;
		if (m->type == OP_UM_BITMASK)
			m->default_value |= parts[i]->default_value;
	}
	if (add_mask(l->c, m)) {
		free_mask(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

static int ev_line(struct loader *l, char *line)
{
	enum { T_EVENT, T_COUNTERS, T_EXT, T_UM, T_MINIMUM, T_NAME, T_FILTER, T_N };
	static const char *const tags[T_N] = { "event",   "counters", "ext",   "um",
					       "minimum", "name",     "filter" };
	struct tok t[16];
	const char *v[T_N] = { 0 };
	char *desc;
	struct op_event e = { .filter = -1 };
	uint64_t code, x;
	const struct op_event *old;
	int n, rc;

	n = tokenize(l, line, t, 16, &desc);
	if (n < 0)
		return n;
	if (n == 0 && !desc)
		return 0;
	for (int i = 0; i < n; i++) {
		int k;

		if (!strcmp(t[i].tag, "include")) {
			if (n != 1 || desc)
				return lerr(l, "include: must be alone on its line");
			return do_include(l, t[i].val, false);
		}
		for (k = 0; k < T_N; k++)
			if (!strcmp(t[i].tag, tags[k]))
				break;
		if (k == T_N)
			return lerr(l,
				    "unknown tag \"%s\" (expected event:, counters:, ext:, um:, minimum:, name:, filter: or include:)",
				    t[i].tag);
		if (v[k])
			return lerr(l, "duplicate %s: tag", tags[k]);
		if (!*t[i].val)
			return lerr(l, "empty value for %s:", tags[k]);
		v[k] = t[i].val;
	}
	for (int k = 0; k < T_N; k++) {
		if (v[k] || k == T_COUNTERS || k == T_EXT || k == T_FILTER)
			continue;
		return lerr(l, "missing %s: tag%s%s", tags[k], v[T_NAME] ? " for event " : "",
			    v[T_NAME] ? v[T_NAME] : "");
	}
	if (!name_ok(v[T_NAME], "./"))
		return lerr(l,
			    "bad event name \"%s\": '.', '/', spaces and control bytes are not allowed",
			    v[T_NAME]);
	if (strlen(v[T_NAME]) > 63)
		return lerr(l, "event name %s is longer than 63 bytes", v[T_NAME]);
	if (!parse_hex(v[T_EVENT], &code))
		return lerr(l, "event %s: bad number \"%s\" for event: (expected hex)", v[T_NAME],
			    v[T_EVENT]);
	if (code > UINT32_MAX)
		return lerr(l, "event %s: event code (0x%" PRIx64 ") is too big to fit in 32 bits",
			    v[T_NAME], code);
	e.code = (uint32_t)code;
	if (!parse_u64(v[T_MINIMUM], 10, &e.minimum))
		return lerr(l, "event %s: bad number \"%s\" for minimum: (expected decimal)",
			    v[T_NAME], v[T_MINIMUM]);
	if (v[T_FILTER]) {
		if (!parse_u64(v[T_FILTER], 10, &x) || x > 31)
			return lerr(l, "event %s: bad number \"%s\" for filter: (expected 0..31)",
				    v[T_NAME], v[T_FILTER]);
		e.filter = (int)x;
	}
	if (v[T_COUNTERS] && v[T_EXT])
		return lerr(l, "event %s: counters: and ext: exclude each other", v[T_NAME]);
	e.counter_mask = UINT32_MAX;
	if (v[T_COUNTERS] && !strcmp(v[T_COUNTERS], "cpuid")) {
		e.counters_cpuid = true;
	} else if (v[T_COUNTERS]) {
		const char *p = v[T_COUNTERS];

		e.counter_mask = 0;
		for (;;) {
			char num[16];
			size_t len = strcspn(p, ",");

			if (len == 0 || len >= sizeof(num))
				return lerr(l,
					    "event %s: bad counters:%s (expected a list like 0,1,2,3 or cpuid)",
					    v[T_NAME], v[T_COUNTERS]);
			memcpy(num, p, len);
			num[len] = '\0';
			if (!parse_u64(num, 10, &x) || x >= OP_MAX_COUNTERS)
				return lerr(l,
					    "event %s: bad counter \"%s\" in counters: (expected 0..%d or cpuid)",
					    v[T_NAME], num, OP_MAX_COUNTERS - 1);
			e.counter_mask |= 1u << x;
			if (!p[len])
				break;
			p += len + 1;
		}
	}
	if (v[T_EXT] && !name_ok(v[T_EXT], ",:/."))
		return lerr(l, "event %s: bad ext: feature name \"%s\"", v[T_NAME], v[T_EXT]);
	rc = resolve_um(l, v[T_UM], &e.um);
	if (rc)
		return rc;
	if (e.filter >= 0 && (l->filter_bits & (1u << e.filter)))
		return 0; /* dropped on this architecture (its mask still counts as used) */
	old = op_events_find(l->c, v[T_NAME]);
	if (old)
		return lerr(l, "duplicate event name %s (first defined at %s:%u)", v[T_NAME],
			    old->file, old->line);

	if (l->c->nr_events == l->c->cap_events) {
		size_t cap = l->c->cap_events ? 2 * l->c->cap_events : 64;
		void *p = realloc(l->c->events, cap * sizeof(*l->c->events));

		if (!p)
			return -ENOMEM;
		l->c->events = p;
		l->c->cap_events = cap;
	}
	e.name = strdup(v[T_NAME]);
	e.ext = v[T_EXT] ? strdup(v[T_EXT]) : NULL;
	e.desc = strdup(desc ? desc : "");
	e.file = l->file;
	e.line = l->line;
	if (!e.name || !e.desc || (v[T_EXT] && !e.ext)) {
		free(e.name);
		free(e.ext);
		free(e.desc);
		return -ENOMEM;
	}
	l->c->events[l->c->nr_events++] = e;
	return 0;
}

/* ---- files ---------------------------------------------------------- */

static int parse_file(struct loader *l, const char *model, bool masks, bool top)
{
	const char *kind = masks ? "unit_masks" : "events";
	const char *saved_file = l->file;
	unsigned saved_line = l->line;
	char *path = NULL, *line = NULL;
	size_t cap = 0;
	ssize_t len;
	FILE *f;
	int rc = 0;

	for (unsigned i = 0; i < l->depth; i++)
		if (!strcmp(l->stack[i], model)) {
			rc = lerr(l, "include:%s: include cycle:", model);
			for (unsigned j = i; j < l->depth; j++)
				eappend(l->err, l->err_len, " %s ->", l->stack[j]);
			eappend(l->err, l->err_len, " %s", model);
			return rc;
		}
	if (l->depth == OP_EVENTS_MAX_INCLUDE_DEPTH)
		return lerr(l, "include:%s: includes nested deeper than %d", model,
			    OP_EVENTS_MAX_INCLUDE_DEPTH);
	{
		size_t plen = strlen(l->root) + strlen(model) + strlen(kind) + 3;

		path = malloc(plen);
		if (!path)
			return -ENOMEM;
		snprintf(path, plen, "%s/%s/%s", l->root, model, kind);
	}
	f = fopen(path, "re");
	if (!f) {
		int e = errno;

		if (top)
			rc = serr(l->err, l->err_len,
				  "%s: cannot open: %s (no %s catalogue for %s under %s; set OPROFILE_EVENTS_DIR?)",
				  path, strerror(e), kind, model, l->root);
		else
			rc = lerr(l, "include:%s: cannot open %s: %s", model, path, strerror(e));
		free(path);
		return top && e == ENOENT ? -ENOENT : rc;
	}
	{
		void *p = realloc(l->c->files, (l->c->nr_files + 1) * sizeof(*l->c->files));

		if (!p) {
			fclose(f);
			free(path);
			return -ENOMEM;
		}
		l->c->files = p;
		l->c->files[l->c->nr_files++] = path;
	}
	l->stack[l->depth++] = model;
	l->file = path;
	l->line = 0;
	while ((len = getline(&line, &cap, f)) >= 0) {
		l->line++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len > 0 && line[len - 1] == '\r')
			line[--len] = '\0';
		if ((size_t)len != strlen(line)) {
			rc = lerr(l, "NUL byte in line");
			break;
		}
		if (masks) {
			char *p = line;

			if (*p == '\t') {
				rc = um_entry(l, p);
			} else {
				while (*p == ' ')
					p++;
				if (*p == '#' || !*p)
					continue;
				rc = um_header(l, p);
			}
		} else {
			char *p = line;

			while (*p == ' ' || *p == '\t')
				p++;
			if (*p == '#' || !*p)
				continue;
			rc = ev_line(l, p);
		}
		if (rc)
			break;
	}
	if (!rc && masks)
		rc = finish_mask(l);
	free(line);
	fclose(f);
	l->depth--;
	if (!rc) {
		l->file = saved_file;
		l->line = saved_line;
	}
	return rc;
}

int op_events_load(struct op_events *c, const char *root, const char *model, unsigned nr_counters,
		   unsigned filter_bits, char *err, size_t err_len)
{
	struct loader l = { .c = c, .filter_bits = filter_bits, .err = err, .err_len = err_len };
	int rc;

	if (err && err_len)
		err[0] = '\0';
	if (!c || !model)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	if (!root)
		root = op_events_root();
	if (!model_ok(model))
		return serr(err, err_len,
			    "cpu type \"%s\": expected an arch/model name such as x86-64/generic",
			    model);
	c->root = strdup(root);
	c->model = strdup(model);
	if (!c->root || !c->model) {
		rc = -ENOMEM;
		goto out_free;
	}
	c->nr_counters = nr_counters;
	l.root = c->root;
	l.file = "(events)";
	rc = parse_file(&l, model, true, true);
	if (rc)
		goto out_free;
	rc = parse_file(&l, model, false, true);
	if (rc)
		goto out_free;
	for (size_t i = 0; i < c->nr_masks; i++)
		if (!c->masks[i]->used) {
			rc = mask_err(&l, c->masks[i], "not used by any event");
			goto out_free;
		}
	return 0;
out_free:
	if (rc == -ENOMEM)
		serr(err, err_len, "%s: out of memory", model);
	op_events_free(c);
	return rc;
}

/* ---- event specs ---------------------------------------------------- */

static unsigned edit_distance(const char *a, const char *b)
{
	unsigned row[65], prev, tmp;
	size_t la = strlen(a), lb = strlen(b);

	if (la > 64)
		la = 64;
	if (lb > 64)
		lb = 64;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned cost = toupper((unsigned char)a[i - 1]) !=
					toupper((unsigned char)b[j - 1]);
			unsigned best = prev + cost;

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[lb];
}

static bool contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	if (n < 3)
		return false;
	for (; *hay; hay++)
		if (!strncasecmp(hay, needle, n))
			return true;
	return false;
}

static int unknown_event(const struct op_events *c, const char *spec, const char *name, char *err,
			 size_t err_len)
{
	const struct op_event *best[3] = { 0 };
	unsigned bd[3] = { ~0u, ~0u, ~0u };
	unsigned limit = (unsigned)strlen(name) / 3;

	if (limit < 2)
		limit = 2;
	for (size_t i = 0; i < c->nr_events; i++) {
		unsigned d = edit_distance(name, c->events[i].name);

		if (d > limit && contains_ci(c->events[i].name, name))
			d = limit;
		if (d > limit)
			continue;
		for (int k = 0; k < 3; k++)
			if (d < bd[k]) {
				for (int m = 2; m > k; m--) {
					bd[m] = bd[m - 1];
					best[m] = best[m - 1];
				}
				bd[k] = d;
				best[k] = &c->events[i];
				break;
			}
	}
	serr(err, err_len, "event spec \"%s\": no event %s in the %s catalogue", spec, name,
	     c->model);
	if (best[0]) {
		int nb = best[2] ? 3 : best[1] ? 2 : 1;

		eappend(err, err_len, "; did you mean %s", best[0]->name);
		for (int k = 1; k < nb; k++)
			eappend(err, err_len, "%s%s", k == nb - 1 ? " or " : ", ", best[k]->name);
		eappend(err, err_len, "?");
	} else {
		eappend(err, err_len, " (ophelp lists the events)");
	}
	return -EINVAL;
}

static void list_allowed(const struct op_unit_mask *um, char *err, size_t err_len)
{
	eappend(err, err_len, "; allowed: %s",
		um->type == OP_UM_BITMASK ? "any combination of " : "");
	for (unsigned i = 0; i < um->nr; i++) {
		eappend(err, err_len, "%s0x%" PRIx32, i ? ", " : "", um->entries[i].value);
		if (um->entries[i].name)
			eappend(err, err_len, " (%s)", um->entries[i].name);
	}
}

static bool um_allowed(const struct op_unit_mask *um, uint32_t v, uint32_t *extra)
{
	uint32_t all = 0;

	*extra = 0;
	for (unsigned i = 0; i < um->nr; i++) {
		if (um->entries[i].value == v) {
			*extra = um->entries[i].extra;
			return true;
		}
		all |= um->entries[i].value;
	}
	return um->type == OP_UM_BITMASK && !(v & ~all);
}

static int flag(const char *spec, const char *what, const char *s, bool *out, char *err,
		size_t err_len)
{
	if (!strcmp(s, "0") || !strcmp(s, "1")) {
		*out = s[0] == '1';
		return 0;
	}
	return serr(err, err_len, "event spec \"%s\": %s flag \"%s\" must be 0 or 1", spec, what, s);
}

bool op_parse_event_freq(const char *s, uint32_t *hz)
{
	size_t n = s ? strlen(s) : 0;
	char num[24];
	uint64_t v;

	*hz = 0;
	if (n < 2 || strcasecmp(s + n - 2, "hz"))
		return false;
	*hz = UINT32_MAX;
	if (n - 2 >= sizeof(num))
		return false;
	memcpy(num, s, n - 2);
	num[n - 2] = '\0';
	if (!parse_u64(num, 10, &v) || v < 1 || v > OP_EVENT_MAX_HZ)
		return false;
	*hz = (uint32_t)v;
	return true;
}

int op_parse_event_spec(const struct op_events *c, const char *spec, struct op_event_spec *out,
			char *err, size_t err_len)
{
	char buf[256], *f[6];
	int nf = 0;
	const struct op_event *ev;
	uint64_t x;
	int rc;

	if (err && err_len)
		err[0] = '\0';
	if (!c || !spec || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	out->counter = -1;
	if (strlen(spec) >= sizeof(buf))
		return serr(err, err_len, "event spec \"%.40s...\": longer than %zu bytes", spec,
			    sizeof(buf) - 1);
	strcpy(buf, spec);
	f[nf++] = buf;
	for (char *p = buf; (p = strchr(p, ':'));) {
		*p++ = '\0';
		if (nf == 5)
			return serr(err, err_len,
				    "event spec \"%s\": too many ':' fields (expected NAME:count[:unitmask[:kernel[:user]]])",
				    spec);
		f[nf++] = p;
	}
	if (!*f[0])
		return serr(err, err_len,
			    "event spec \"%s\": empty event name (expected NAME:count[:unitmask[:kernel[:user]]])",
			    spec);
	ev = op_events_find(c, f[0]);
	if (!ev)
		return unknown_event(c, spec, f[0], err, err_len);
	out->ev = ev;
	if (nf < 2 || !*f[1])
		return serr(err, err_len,
			    "event spec \"%s\": missing count (expected %s:count, count at least %" PRIu64
			    ")",
			    spec, ev->name, ev->minimum);
	if (op_parse_event_freq(f[1], &out->freq_hz)) {
		/* the kernel picks the period: the catalogue's count limits do not apply */
		x = strcmp(ev->name, OP_TIMER_EVENT) ? 0 : UINT64_C(1000000000) / out->freq_hz;
		goto count_done;
	}
	if (out->freq_hz)
		return serr(err, err_len,
			    "event spec \"%s\": frequency \"%s\" is not 1..%uHz (a decimal "
			    "number of samples a second per CPU)",
			    spec, f[1], OP_EVENT_MAX_HZ);
	if (!parse_u64(f[1], 0, &x))
		return serr(err, err_len,
			    "event spec \"%s\": count \"%s\" is not a number (or a frequency, "
			    "e.g. 99Hz)",
			    spec, f[1]);
	if (x < ev->minimum)
		return serr(err, err_len,
			    "event spec \"%s\": count %" PRIu64 " is below the minimum %" PRIu64
			    " for %s",
			    spec, x, ev->minimum, ev->name);
	if (ev->maximum && x > ev->maximum)
		return serr(err, err_len,
			    "event spec \"%s\": count %" PRIu64 " is above the maximum %" PRIu64
			    " for %s",
			    spec, x, ev->maximum, ev->name);
	if (x > UINT32_MAX)
		return serr(err, err_len,
			    "event spec \"%s\": count %" PRIu64 " is too large (at most %" PRIu32
			    ")",
			    spec, x, UINT32_MAX);
count_done:
	out->count = x;
	out->um = ev->um->default_value;
	um_allowed(ev->um, out->um, &out->um_extra);
	if (nf >= 3 && *f[2]) {
		if (isdigit((unsigned char)f[2][0])) {
			if (!parse_u64(f[2], 0, &x) || x > UINT32_MAX) {
				serr(err, err_len,
				     "event spec \"%s\": unit mask \"%s\" is not a number", spec,
				     f[2]);
				list_allowed(ev->um, err, err_len);
				return -EINVAL;
			}
			if (!um_allowed(ev->um, (uint32_t)x, &out->um_extra)) {
				serr(err, err_len,
				     "event spec \"%s\": unit mask 0x%" PRIx64
				     " is not allowed for %s",
				     spec, x, ev->name);
				list_allowed(ev->um, err, err_len);
				return -EINVAL;
			}
			out->um = (uint32_t)x;
		} else {
			const struct op_um_entry *e = op_um_find_name(ev->um, f[2]);

			if (!e) {
				serr(err, err_len,
				     "event spec \"%s\": unit mask name \"%s\" is not allowed for %s",
				     spec, f[2], ev->name);
				list_allowed(ev->um, err, err_len);
				return -EINVAL;
			}
			out->um = e->value;
			out->um_extra = e->extra;
		}
	}
	out->kernel = out->user = true;
	if (nf >= 4 && (rc = flag(spec, "kernel", f[3], &out->kernel, err, err_len)))
		return rc;
	if (nf >= 5 && (rc = flag(spec, "user", f[4], &out->user, err, err_len)))
		return rc;
	if (!out->kernel && !out->user)
		return serr(err, err_len,
			    "event spec \"%s\": kernel and user are both 0, the event would count nothing",
			    spec);
	return 0;
}

static void counters_str(uint32_t mask, unsigned nr, char *s, size_t len)
{
	size_t o = 0;

	s[0] = '\0';
	for (unsigned k = 0; k < nr && o + 4 < len; k++)
		if (mask & (1u << k))
			o += (size_t)snprintf(s + o, len - o, "%s%u", o ? "," : "", k);
}

static bool place(struct op_event_spec *specs, const uint32_t *mask, size_t i, int *owner,
		  uint32_t *seen, unsigned nr)
{
	for (unsigned k = 0; k < nr; k++) {
		if (!(mask[i] & (1u << k)) || (*seen & (1u << k)))
			continue;
		*seen |= 1u << k;
		if (owner[k] < 0 || place(specs, mask, (size_t)owner[k], owner, seen, nr)) {
			owner[k] = (int)i;
			specs[i].counter = (int)k;
			return true;
		}
	}
	return false;
}

int op_events_allocate(struct op_event_spec *specs, size_t n, unsigned nr_counters, char *err,
		       size_t err_len)
{
	int owner[OP_MAX_COUNTERS];
	uint32_t mask[OP_MAX_COUNTERS], all;
	size_t idx[OP_MAX_COUNTERS], m = 0;
	char cs[128];

	if (nr_counters == 0 || nr_counters > OP_MAX_COUNTERS)
		nr_counters = OP_MAX_COUNTERS;
	all = nr_counters == 32 ? UINT32_MAX : (1u << nr_counters) - 1;
	for (unsigned k = 0; k < OP_MAX_COUNTERS; k++)
		owner[k] = -1;
	for (size_t i = 0; i < n; i++) {
		specs[i].counter = -1;
		if (!specs[i].ev || specs[i].ev->ext)
			continue;
		if (m == nr_counters)
			return serr(err, err_len,
				    "Too many events specified: CPU only has %u counters.",
				    nr_counters);
		idx[m] = i;
		mask[m] = specs[i].ev->counter_mask & all;
		if (!mask[m]) {
			counters_str(specs[i].ev->counter_mask, OP_MAX_COUNTERS, cs, sizeof(cs));
			return serr(err, err_len,
				    "event %s can only use counters %s, but the CPU has %u counters",
				    specs[i].ev->name, cs, nr_counters);
		}
		m++;
	}
	/* bipartite matching over the counter events (augmenting paths) */
	{
		struct op_event_spec *sub[OP_MAX_COUNTERS];
		struct op_event_spec tmp[OP_MAX_COUNTERS];

		for (size_t j = 0; j < m; j++) {
			sub[j] = &specs[idx[j]];
			tmp[j] = *sub[j];
		}
		for (size_t j = 0; j < m; j++) {
			uint32_t seen = 0;

			if (!place(tmp, mask, j, owner, &seen, nr_counters)) {
				counters_str(mask[j], nr_counters, cs, sizeof(cs));
				serr(err, err_len,
				     "cannot place event %s: it can only use counter(s) %s, already needed by",
				     tmp[j].ev->name, cs);
				for (unsigned k = 0; k < nr_counters; k++)
					if ((mask[j] & (1u << k)) && owner[k] >= 0)
						eappend(err, err_len, " %s", tmp[owner[k]].ev->name);
				eappend(err, err_len, "; drop one of these events");
				return -EINVAL;
			}
		}
		for (size_t j = 0; j < m; j++)
			sub[j]->counter = tmp[j].counter;
	}
	return 0;
}

int op_parse_event_list(const struct op_events *c, const char *list, struct op_event_spec *out,
			size_t max, size_t *nr, char *err, size_t err_len)
{
	const char *p = list;
	size_t n = 0, counter_events = 0;
	int rc;

	if (err && err_len)
		err[0] = '\0';
	if (!c || !list || !out || !nr)
		return -EINVAL;
	*nr = 0;
	if (!*list)
		return serr(err, err_len,
			    "empty event list (expected NAME:count[:um[:kernel[:user]]],...)");
	while (*p) {
		size_t len = strcspn(p, ",");
		char item[256];

		if (len == 0)
			return serr(err, err_len, "event list \"%s\": empty item at offset %zu",
				    list, (size_t)(p - list));
		if (len >= sizeof(item))
			return serr(err, err_len,
				    "event list: item at offset %zu is longer than %zu bytes",
				    (size_t)(p - list), sizeof(item) - 1);
		if (n == max)
			return serr(err, err_len, "event list \"%s\": more than %zu events", list,
				    max);
		memcpy(item, p, len);
		item[len] = '\0';
		rc = op_parse_event_spec(c, item, &out[n], err, err_len);
		if (rc)
			return rc;
		for (size_t i = 0; i < n; i++)
			if (out[i].ev == out[n].ev && out[i].um == out[n].um)
				return serr(err, err_len,
					    "event list: %s with unit mask 0x%" PRIx32
					    " is given twice",
					    out[n].ev->name, out[n].um);
		if (!out[n].ev->ext)
			counter_events++;
		n++;
		p += len;
		if (*p == ',')
			p++;
	}
	if (c->nr_counters && counter_events > c->nr_counters)
		return serr(err, err_len, "Too many events specified: CPU only has %u counters.",
			    c->nr_counters);
	rc = op_events_allocate(out, n, c->nr_counters, err, err_len);
	if (rc)
		return rc;
	*nr = n;
	return 0;
}
