/*
 * options_int.h - helpers options.c shares with config.c (not for other
 * modules: they use options.h).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_OPTIONS_INT_H
#define OP_CORE_OPTIONS_INT_H

#include <stdbool.h>
#include <stddef.h>

struct op_options;

/* what a plugin name may be (ext_name_valid), for messages */
#define OPT_PLUGIN_NAME_RULE "1..64 of [A-Za-z0-9_-]"

/* Parse a --verbose value ("all", "sfile,arcs", ...) into @out (OP_VERBOSE_*). */
int options_parse_verbose(const char *s, unsigned *out, char *err, size_t err_len);
/* Replace o->image_filter by the comma list @s. 0 or -ENOMEM. */
int options_set_image(struct op_options *o, const char *s);
/*
 * Append feature @name with @args from @origin. A feature of the same name
 * is replaced when @replace (the command line overrides the config file),
 * else -EEXIST. -ENOSPC when OP_MAX_FEATURES are in use.
 */
int options_add_feature(struct op_options *o, const char *name, const char *args,
			const char *origin, bool replace);
/* session_group @name names a group of this system: 0, -ENOENT or -errno. */
int options_check_group(const char *name);

#endif /* OP_CORE_OPTIONS_INT_H */
