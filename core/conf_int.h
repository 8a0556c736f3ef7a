/*
 * conf_int.h - what the config files share and nothing else uses: the
 * state of one conf_load (config.c), the key table and value checks
 * (config_keys.c), libconfig 1.5's cut integers (config_wide.c). Only
 * core/config*.c include this.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_CONF_INT_H
#define OP_CORE_CONF_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <libconfig.h>

struct op_options;
struct conf_result;
struct conf_key;

struct conf_ctx {
	config_t *cfg;
	struct op_options *o;
	struct conf_result *res;
	const char *path;
	FILE *err;
	int rc;
};

/* "an integer", "a string"... for libconfig type @type */
const char *conf_type_name(int type);
/* "FILE:LINE" of @s (@fallback when libconfig names no file) */
void conf_where(const config_setting_t *s, const char *fallback, char *buf, size_t len);
/* "oprofiled: FILE:LINE: [warning: ]"path": ..." to c->err; an error sets c->rc */
void conf_msg(struct conf_ctx *c, const config_setting_t *s, bool error, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* The top-level key @name, NULL when oprofiled does not know it. */
const struct conf_key *conf_key_find(const char *name);
/* Check top-level setting @s of key @k and apply it to c->o (or c->res). */
void conf_apply(struct conf_ctx *c, const config_setting_t *s, const struct conf_key *k);

/* fill the root setting's hook with the integers libconfig cut; 0 or -ENOMEM */
int conf_scan_wide(config_t *cfg, const char *path);
/*
 * The value of integer setting @s of @cfg: libconfig's, or its literal's
 * when libconfig cut it. -ERANGE when the literal does not fit 64 bits;
 * *text then points to it as written.
 */
int conf_int(const config_t *cfg, const config_setting_t *s, int64_t *v, const char **text);

#endif /* OP_CORE_CONF_INT_H */
