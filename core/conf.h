/*
 * conf.h - oprofiled.conf (libconfig) into struct op_options, and the
 * scoped plugins.<name>.<key> lookups the loader offers to plugins
 * (config.c). Only options.c and ext_reg.c include this.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_CONF_H
#define OP_CORE_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct op_options;

/* What the config file said that the command line may still override. */
struct conf_result {
	bool system_wide;  /* system_wide = true */
	unsigned warnings; /* unknown settings seen */
};

/*
 * Read @path (libconfig syntax, @include relative to the file's directory)
 * and apply every known setting to @o. Errors and warnings go to @err as
 * "oprofiled: FILE:LINE: ...". On success the parsed config_t is kept in
 * o->config (for the plugin getters) and 0 is returned; on error -EINVAL
 * (syntax, type mismatch, bad value) or -errno (cannot read the file).
 */
int conf_load(struct op_options *o, const char *path, struct conf_result *res, FILE *err);

/* The i-th top-level key oprofiled knows, NULL past the end (tests, docs). */
const char *conf_key_name(size_t i);

/* Free o->config (config_destroy + free). */
void conf_free(void *config);

/*
 * Scoped plugin lookups: the setting plugins.<plugin>.<key> in either form
 * ("plugins = ( { name = "x"; key = ...; } )" or "plugins = { x = { key = ...; }; }").
 * @key may be dotted for nested groups. Return 0, -ENOENT when absent
 * (or no config), -EINVAL on a type mismatch; the mismatch is described in
 * @why ("FILE:LINE: plugins.x.key: expected a string, found an integer").
 * Strings live as long as the config.
 */
int conf_plugin_string(void *config, const char *plugin, const char *key, const char **out,
		       char *why, size_t why_len);
int conf_plugin_int64(void *config, const char *plugin, const char *key, int64_t *out, char *why,
		      size_t why_len);
int conf_plugin_bool(void *config, const char *plugin, const char *key, bool *out, char *why,
		     size_t why_len);

#endif /* OP_CORE_CONF_H */
