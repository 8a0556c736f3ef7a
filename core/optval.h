/*
 * optval.h - values of oprofiled's settings that both the command line
 * (options.c) and the config file (config.c) parse (optval.c). A leaf below
 * both: it calls neither. Not for other modules: they use options.h.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_OPTVAL_H
#define OP_CORE_OPTVAL_H

#include <stdbool.h>
#include <stddef.h>

struct op_options;
struct op_feature_req;

/* what a plugin name may be (ext_name_valid), for messages */
#define OPTVAL_PLUGIN_NAME_RULE "1..64 of [A-Za-z0-9_-]"

/*
 * Parse a --separate value ("none", "lib,thread", ...) into @out (enum
 * op_separate of lib/op_mangle.h). 0, or -EINVAL with @out untouched and the
 * reason in @err ("unknown --separate value \"x\" - allowed: ...").
 */
int optval_parse_separate(const char *s, unsigned *out, char *err, size_t err_len);
/* The same for a --verbose value ("all", "sfile,arcs", ...; "" is none): OP_VERBOSE_*. */
int optval_parse_verbose(const char *s, unsigned *out, char *err, size_t err_len);
/* session_group @name names a group of this system: 0, -ENOENT or -errno. */
int optval_check_group(const char *name);
/* Replace o->image_filter by the comma list @s ("" or ",": no filter). 0 or -ENOMEM. */
int optval_set_image(struct op_options *o, const char *s);
/*
 * Append feature @name with @args from @origin. A feature of the same name
 * is replaced when @replace (the command line overrides the config file),
 * else -EEXIST. -ENOSPC when OP_MAX_FEATURES are in use; -ENOMEM.
 */
int optval_add_feature(struct op_options *o, const char *name, const char *args, const char *origin,
		       bool replace);
/* Free what optval_add_feature allocated in @f and zero it. */
void optval_free_feature(struct op_feature_req *f);
/* Free a NULL-terminated string vector (o->image_filter, o->command); NULL is fine. */
void optval_free_strv(char **v);

#endif /* OP_CORE_OPTVAL_H */
