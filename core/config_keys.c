/*
 * config_keys.c - oprofiled.conf's schema: every top-level key with its
 * kind and range, the value checks (types, ranges, plugin entries), the
 * FILE:LINE "path" messages, and applying a checked value to struct
 * op_options. Reading the file is config.c; libconfig 1.5's 32-bit cut of
 * integers is config_wide.c.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <libconfig.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf_int.h"
#include "ext.h"
#include "log.h"
#include "op_events.h"
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
	{ "frequency", K_INT, 1, OP_EVENT_MAX_HZ },
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

const char *conf_type_name(int type)
{
	switch (type) {
	case CONFIG_TYPE_GROUP:
		return "a group";
	case CONFIG_TYPE_INT:
		return "an integer";
	case CONFIG_TYPE_INT64:
		return "a 64-bit integer";
	case CONFIG_TYPE_FLOAT:
		return "a float";
	case CONFIG_TYPE_STRING:
		return "a string";
	case CONFIG_TYPE_BOOL:
		return "a boolean";
	case CONFIG_TYPE_ARRAY:
		return "an array";
	case CONFIG_TYPE_LIST:
		return "a list";
	default:
		return "nothing";
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
void conf_where(const config_setting_t *s, const char *fallback, char *buf, size_t len)
{
	const char *f = config_setting_source_file(s);

	snprintf(buf, len, "%s:%u", f ? f : fallback, config_setting_source_line(s));
}

void conf_msg(struct conf_ctx *c, const config_setting_t *s, bool error, const char *fmt, ...)
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
	conf_msg(c, s, true, "expected %s, found %s - fix the value's type", what,
		 conf_type_name(t));
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
	if (config_setting_type(s) != CONFIG_TYPE_ARRAY &&
	    config_setting_type(s) != CONFIG_TYPE_LIST) {
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
		conf_msg(c, g, true,
			 "plugin name \"%.80s\" is not valid - expected " OPTVAL_PLUGIN_NAME_RULE,
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
				conf_msg(c, g, true,
					 "plugin entry without a string 'name' - add name = \"PLUGIN\";");
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
		conf_msg(c, s, true,
			 "expected a list ( { name = ...; }, ... ) or a group { NAME = { ... }; }, found %s",
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

void conf_apply(struct conf_ctx *c, const config_setting_t *s, const struct conf_key *k)
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
		if (!conf_expect(c, s, CONFIG_TYPE_INT, "an integer") ||
		    !conf_range(c, s, k, "", &v))
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
			conf_msg(c, s, true,
				 "empty directory name - give a directory, or remove "
				 "the line for the default");
			free(str);
		} else {
			conf_replace(&o->session_dir, str);
		}
	} else if (!strcmp(n, "session_group")) {
		int rc = str ? optval_check_group(str) : -ENOMEM;

		if (rc)
			conf_msg(c, s, true,
				 "\"%s\": %s - give an existing group, or remove the "
				 "line to keep a root daemon's session private",
				 str ? str : "", rc == -ENOENT ? "no such group" : strerror(-rc));
		if (rc)
			free(str);
		else
			conf_replace(&o->session_group, str);
	} else if (!strcmp(n, "events")) {
		char where[PATH_MAX + 32];

		conf_replace(&o->events_spec, str);
		/* the daemon validates events later: its messages name this line */
		conf_where(s, c->path, where, sizeof(where));
		free(o->events_origin);
		o->events_origin = strdup(where);
	} else if (!strcmp(n, "plugin_dir"))
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
	} else if (!strcmp(n, "frequency"))
		o->frequency = (unsigned)v;
	else if (!strcmp(n, "stats_interval"))
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

const char *conf_key_name(size_t i)
{
	return i < sizeof(conf_keys) / sizeof(conf_keys[0]) ? conf_keys[i].name : NULL;
}

const struct conf_key *conf_key_find(const char *name)
{
	size_t k;

	for (k = 0; k < sizeof(conf_keys) / sizeof(conf_keys[0]); k++)
		if (!strcmp(conf_keys[k].name, name))
			return &conf_keys[k];
	return NULL;
}
