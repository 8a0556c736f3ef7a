/*
 * config.c - reads oprofiled.conf with libconfig 1.5 into struct op_options
 * (every known key, type-checked, errors with FILE:LINE, unknown keys warned
 * with their full path: the keys and their checks are config_keys.c) and
 * serves plugins' scoped plugins.<name> lookups.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "conf.h"

#include <errno.h>
#include <inttypes.h>
#include <libconfig.h>
#include <stdlib.h>
#include <string.h>

#include "conf_int.h"
#include "log.h"
#include "options.h"

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
			strstr(config_error_text(cfg), "include") ?
				"@include paths are relative to the including config file's directory" :
				"fix the config file syntax");
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
		const struct conf_key *k = conf_key_find(config_setting_name(s));

		if (!k) {
			conf_msg(&c, s, false,
				 "unknown setting ignored - see conf/oprofiled.conf for the known ones");
			res->warnings++;
			continue;
		}
		conf_apply(&c, s, k);
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

int conf_plugin_int64(void *config, const char *plugin, const char *key, int64_t *out, char *why,
		      size_t why_len)
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
			snprintf(why, why_len,
				 "%s:%u: plugins.%s.%s: %s does not fit a 64-bit integer "
				 "(%" PRId64 "..%" PRId64 ")",
				 f ? f : "config", config_setting_source_line(s), plugin, key, text,
				 INT64_MIN, INT64_MAX);
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
