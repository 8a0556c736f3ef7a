/*
 * ext_int.h - what the files of the plugin loader share and nobody else
 * sees: the loader and plugin-context structs, and the calls between
 * ext.c (loader API), ext_log.c, ext_reg.c, ext_host.c, ext_probe.c and
 * ext_elf.c.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_EXT_INT_H
#define OP_CORE_EXT_INT_H

#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "ext.h"
#include "log.h"

#define EXT_MAX_PLUGINS 32
#define EXT_NAME_MAX OP_EXT_NAME_MAX

struct op_ext {
	struct ext_loader *loader;
	char *name;
	char *path;   /* the resolved file that was dlopen'd */
	char *origin; /* "command line", "FILE:LINE" */
	void *handle;
	int fd;                        /* the file handle was loaded through (ext_probe_unload) */
	struct op_ext_descriptor desc; /* min(size, sizeof) copy */
	bool in_init;
	bool initialized;
	struct log_limit limit; /* this plugin's messages (ext_log.c) */
	struct op_user_data ud; /* set_user_data (SDK 1.1), freed by ext_free_user_data */
	bool has_ud;
};

struct ext_loader {
	char *plugin_dir;
	void *config;
	struct ext_core_services *core;
	struct op_log *log; /* main's logger; NULL: stderr */
	bool verbose;
	unsigned log_limit; /* messages per plugin per window; 0 = no limit */
	unsigned log_window_ms;
	struct op_host host;
	struct ext_registry reg;
	struct op_ext *plugins[EXT_MAX_PLUGINS];
	size_t nr_plugins;
	uint64_t session_start_ns; /* wall clock of the last START or ROTATED (ext_hooks.c) */
};

/* --- ext_log.c: the loader's and plugins' messages --- */

/* "oprofiled: ..." to the log; @echo: a start-up error, to stderr too */
void ext_log_msg(const struct ext_loader *l, bool echo, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* a registration refused: "oprofiled: plugin "x" (path): ..." */
void ext_log_err(op_ext_t *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* op_host.log and op_host.vlog: "NAME: level: ...", rate-limited per plugin */
void ext_log_plugin(op_ext_t *ctx, enum op_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ext_log_plugin_vlog(op_ext_t *ctx, enum op_log_level level, const char *fmt, va_list ap);

/* --- ext_reg.c: registrations and scoped configuration --- */

/* the size rule: min(size, sizeof) of @src into zeroed @dst */
void ext_reg_copy(void *dst, size_t dst_size, const void *src);
int ext_reg_config_string(op_ext_t *ctx, const char *key, const char **out);
int ext_reg_config_int64(op_ext_t *ctx, const char *key, int64_t *out);
int ext_reg_config_bool(op_ext_t *ctx, const char *key, bool *out);
int ext_reg_stats(op_ext_t *ctx, const struct op_stats_ops *ops, void *priv);
int ext_reg_sfile_handlers(op_ext_t *ctx, const struct op_sfile_ops *ops, void *priv);
int ext_reg_escape(op_ext_t *ctx, const struct op_escape_desc *desc, void *priv, uint32_t *code_out);
int ext_reg_model(op_ext_t *ctx, const struct op_model_desc *desc, void *priv);
int ext_reg_source(op_ext_t *ctx, const struct op_source_desc *desc, void *priv,
		   uint32_t *source_out);
int ext_reg_sample_hook(op_ext_t *ctx, const struct op_sample_hook_desc *desc, void *priv);
int ext_reg_kernel(op_ext_t *ctx, const struct op_kernel_ops *ops, void *priv);
int ext_reg_counter(op_ext_t *ctx, const struct op_counter_desc *desc, uint32_t *counter_out);
int ext_reg_user_data(op_ext_t *ctx, const struct op_user_data *ud);
/* SDK 1.2 */
int ext_reg_proc_hook(op_ext_t *ctx, const struct op_proc_hook_desc *desc, void *priv);
int ext_reg_session_hook(op_ext_t *ctx, const struct op_session_hook_desc *desc, void *priv);
/* --- issue 20: per-process split key --- */
int ext_reg_split(op_ext_t *ctx, const char *name);
int ext_reg_anon_resolver(op_ext_t *ctx, const struct op_anon_resolver_desc *desc, void *priv);
/*
 * What @ctx registered that something may hold on to (an sfile slot, a
 * source or counter number, a hook, an escape code, the kernel resolver,
 * a split), as "a source" for a message; NULL when it registered nothing
 * but hardware models and stats sections.
 */
const char *ext_reg_held(const struct ext_registry *r, const op_ext_t *ctx);
/* remove every registration of @ctx, keeping the others in order */
void ext_reg_unregister(struct ext_registry *r, const op_ext_t *ctx);

/* --- ext_host.c: struct op_host --- */

/* fill l->host with every service (ext_host_bind included) */
void ext_host_init(struct ext_loader *l);
/* bind the services without a ctx argument to l->core's functions */
void ext_host_bind(struct ext_loader *l);

/* --- ext_probe.c: finding, checking and dlopening a plugin file --- */

struct ext_probe {
	char path[PATH_MAX]; /* <dir>/<name>.so as named */
	char real[PATH_MAX]; /* the file it resolves to */
	void *handle;
	int fd; /* the file, open while loaded (ext_probe_unload) */
	struct op_ext_descriptor desc;
};

/*
 * Find, check and dlopen plugin @name of @dir; fill @p. 0, or -errno with
 * @why saying what was expected, what was found and what to do.
 */
int ext_probe_plugin(const char *dir, const char *name, struct ext_probe *p, char *why, size_t len);
/* dlclose @handle and close @fd, unless ld.so still holds the object */
void ext_probe_unload(void *handle, int fd);
/* the descriptor head's version/size/flags rules; @symsize 0 = unknown */
int ext_probe_check_head(uint32_t major, uint32_t minor, uint32_t size, uint32_t flags,
			 size_t symsize, char *why, size_t len);

/* --- ext_elf.c: the descriptor head read from the file, before dlopen --- */

/* what the descriptor's plain-integer head says, read from the file */
struct ext_elf_head {
	uint32_t major, minor, size, flags;
	size_t symsize;
};

int ext_elf_peek(int fd, struct ext_elf_head *pk, char *why, size_t len);

#endif /* OP_CORE_EXT_INT_H */
