/*
 * ext.h - the plugin loader and the registry of everything plugins
 * registered (ext.c and its parts ext_log.c, ext_reg.c, ext_host.c,
 * ext_probe.c, ext_elf.c; see ext_int.h). The sample path, sync and trans
 * read the registry; only the loader knows about dlopen and descriptors.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_EXT_H
#define OP_CORE_EXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "oprofile_sdk.h"

struct op_log;
struct op_options;

struct ext_escape {
	struct op_escape_desc desc;
	void *priv;
	op_ext_t *owner;
};

struct ext_sfile_handlers {
	struct op_sfile_ops ops;
	void *priv;
	op_ext_t *owner;
	unsigned slot; /* index into an sfile's per-plugin private slots */
};

struct ext_source {
	struct op_source_desc desc;
	void *priv;
	op_ext_t *owner;
};

struct ext_hook {
	struct op_sample_hook_desc desc;
	void *priv;
	op_ext_t *owner;
};

struct ext_model {
	struct op_model_desc desc;
	void *priv;
	op_ext_t *owner;
};

struct ext_kernel {
	struct op_kernel_ops ops;
	void *priv;
	op_ext_t *owner;
};

struct ext_counter {
	struct op_counter_desc desc;
	char *name; /* owned copy */
	op_ext_t *owner;
};

struct ext_stats {
	struct op_stats_ops ops;
	void *priv;
	op_ext_t *owner;
};

/*
 * SDK 1.2: a task-record hook, a session hook or an anon resolver. The
 * three descriptions share one layout (size, name, callback: asserted in
 * ext_reg.c), so one entry type and one registration serve them.
 */
struct ext_hook_entry {
	union {
		struct op_proc_hook_desc proc;
		struct op_session_hook_desc session;
		struct op_anon_resolver_desc anon;
	};
	void *priv;
	op_ext_t *owner;
};

#define EXT_MAX_PROC_HOOKS 8
#define EXT_MAX_SESSION_HOOKS 8
#define EXT_MAX_ANON_RESOLVERS 4

#define EXT_MAX_SFILE_SLOTS 8
#define EXT_MAX_SOURCES 8
#define EXT_MAX_HOOKS 8
#define EXT_MAX_MODELS 16
#define EXT_MAX_COUNTERS 256
#define EXT_MAX_STATS 32

/*
 * Core services that buffer sync / trans / sfile implement and the loader
 * exposes to plugins through struct op_host. main.c fills this in before
 * loading plugins; any member may be NULL in tests (the host call then
 * returns -ENOSYS).
 */
struct ext_core_services {
	void *sync; /* passed back as first argument */
	void *trans;
	int (*map_pc)(void *sync, uint32_t pid, uint16_t cpumode, uint64_t pc,
		      struct op_pc_map *out);
	int (*emit)(op_emit_t *w, uint32_t code, const uint64_t *args, uint32_t nargs);
	int (*log_sample)(void *trans, const struct op_trans_view *t, uint32_t counter,
			  uint64_t key, uint32_t count);
	op_sample_file_t *(*sample_file_open)(void *trans, op_sfile_t *sf,
					      const struct op_trans_view *t,
					      const struct op_file_spec *spec);
	int (*sample_file_add)(op_sample_file_t *f, uint64_t key, uint32_t count);
	int (*sample_file_sync)(op_sample_file_t *f);
	void (*sample_file_close)(op_sample_file_t *f);
	const char *(*cookie_path)(void *sync, op_cookie_t cookie);
	op_cookie_t (*cookie_intern)(void *sync, const char *path, bool is_kernel);
	const char *session_dir;
	const char *proc_root;
	/* --- issue 20: per-process split key --- */
	int (*set_split_key)(void *sync, uint32_t pid, const char *key);
};

/*
 * The registry: filled by plugins' ext_init through the host table.
 * Registrations are accepted only inside ext_init. Payloads are copies made
 * with the size rule; their name members point to copies owned by the
 * registry. Entries stay in load order, and a failed init removes all of its
 * own, so indices (sfile slot, source number, counter number) are stable once
 * ext_load_all returned. Plugin escape codes are OP_ESCAPE_FIRST_PLUGIN..
 * OP_ESCAPE_MAX (the SDK's; the core's are 1..EVB_CORE_CODES_END-1, evbuf.h);
 * a source's number is its index in sources[]; a virtual counter's number is
 * EXT_COUNTER_BASE + its index in counters[].
 */
struct ext_registry {
	struct ext_escape *escapes[OP_ESCAPE_MAX + 1]; /* by code; NULL = unused */
	struct ext_sfile_handlers sfile[EXT_MAX_SFILE_SLOTS];
	size_t nr_sfile;
	struct ext_source sources[EXT_MAX_SOURCES];
	size_t nr_sources;
	struct ext_hook hooks[EXT_MAX_HOOKS];
	size_t nr_hooks;
	struct ext_model models[EXT_MAX_MODELS];
	size_t nr_models;
	struct ext_kernel kernel; /* at most one kernel resolver */
	bool has_kernel;
	struct ext_counter counters[EXT_MAX_COUNTERS]; /* virtual counters */
	size_t nr_counters;
	struct ext_stats stats[EXT_MAX_STATS];
	size_t nr_stats;
	uint32_t no_event_ok; /* some plugin set OP_EXT_F_NO_EVENT_OK */
	/* SDK 1.2 */
	struct ext_hook_entry proc_hooks[EXT_MAX_PROC_HOOKS];
	size_t nr_proc_hooks;
	struct ext_hook_entry session_hooks[EXT_MAX_SESSION_HOOKS];
	size_t nr_session_hooks;
	struct ext_hook_entry anon[EXT_MAX_ANON_RESOLVERS];
	size_t nr_anon;
	/* --- issue 20: per-process split key --- */
	op_ext_t *split_cgroup; /* the plugin providing --separate=cgroup (SDK 1.3), or NULL */
};

/* Virtual counters are numbered from here (core counters are 0..OP_MAX_EVENTS-1). */
#define EXT_COUNTER_BASE 64

struct ext_loader;

/*
 * Create the loader. @core may be filled in later (before samples flow).
 * @config is the parsed libconfig config_t or NULL. The loader's and the
 * plugins' messages go through @log (main's logger; NULL: stderr), so a
 * SIGHUP reopen of the log moves them with everyone else's. Refusals,
 * failed inits and plugins' errors during init also go to stderr when
 * @log->echo_errors is set and its file is another one: a start-up failure
 * may remove the session and its log.
 */
struct ext_loader *ext_loader_new(const char *plugin_dir, void *config,
				  struct ext_core_services *core, struct op_log *log);
/*
 * Load and initialise plugin @name with @args. Every refusal is logged with
 * plugin, path, expected vs found and what to do; returns -errno. The file
 * is opened once through directories checked on their fds (as root: all of
 * them up to / root's and writable by root alone), checked on its fd and
 * loaded through /proc/self/fd (-ENOENT without /proc).
 */
int ext_load(struct ext_loader *l, const char *name, const char *args, const char *origin);
/*
 * Unload plugin @name again, before samples flow (a hardware-model plugin
 * only probed, whose models were not picked): ext_deinit, its state, its
 * registrations and the object go, as for a failed ext_init, and it is no
 * longer listed (ext_nr_plugins, ext_print_stats). @why ends the logged
 * "unloaded: ..." line. Only a plugin that registered nothing but hardware
 * models and stats sections can go (registry indices stay stable): else
 * -EBUSY, logged with what it holds. -ENOENT if @name is not loaded.
 */
int ext_unload(struct ext_loader *l, const char *name, const char *why);
/* Load all requested features of @o, in order. Stops at the first failure. */
int ext_load_all(struct ext_loader *l, const struct op_options *o);
struct ext_registry *ext_registry(struct ext_loader *l);
/* print every plugin's stats sections ("-- plugin NAME --") to @out */
void ext_print_stats(struct ext_loader *l, FILE *out);
/* --list-plugins: name, version, SDK version, summary of every plugin in the dir */
int ext_list_plugins(const char *plugin_dir, FILE *out);
/* ext_deinit every plugin (reverse order), dlclose, free. */
void ext_loader_free(struct ext_loader *l);

/*
 * Services of struct op_host without a ctx argument (emit, sample_file_add,
 * sample_file_sync, sample_file_close) are bound to the core's functions when
 * a plugin is loaded, by ext_registry() and by ext_loader_set_core(): call one
 * of them after filling in struct ext_core_services, before samples flow.
 * Missing services answer -ENOSYS (NULL, 0, no-op for void).
 */
void ext_loader_set_core(struct ext_loader *l, struct ext_core_services *core);
/*
 * At most @max_messages log lines per plugin per @window_ms (default 100 per
 * 10 s), then a count of the dropped ones (struct log_limit); 0 disables the limit.
 */
void ext_loader_set_log_limit(struct ext_loader *l, unsigned max_messages, unsigned window_ms);
/*
 * log plugins' OP_LOG_DEBUG messages and "loaded" lines (--verbose=ext: a
 * category of its own, unlike op_log.verbose, which is any --verbose)
 */
void ext_loader_set_verbose(struct ext_loader *l, bool verbose);
/* the host table plugins get (tests, mock hosts) */
const struct op_host *ext_host(struct ext_loader *l);
/* a plugin's name for the core's messages ("core" for NULL) */
const char *ext_name(const op_ext_t *ctx);
size_t ext_nr_plugins(const struct ext_loader *l);
/* the loaded plugin @name, or NULL */
op_ext_t *ext_plugin(struct ext_loader *l, const char *name);
/*
 * Read the descriptor head of the plugin file @path without loading it (as
 * ld.so finds symbols: program headers, dynamic segment, symbol hash table)
 * and apply the version/size/flags rules: 0 (values filled) or -errno with
 * the reason in @why.
 */
int ext_descriptor_peek(const char *path, uint32_t *major, uint32_t *minor, uint32_t *size,
			uint32_t *flags, char *why, size_t why_len);
/* plugin names: 1..64 of [A-Za-z0-9_-] (no '/', '.', "..") */
bool ext_name_valid(const char *name);

/*
 * SDK 1.2 (ext_hooks.c; buffer sync calls the registry's proc hooks and
 * anon resolvers itself). Tell the session hooks of @l about @kind (enum op_session_event_kind):
 * @dir is samples/current's absolute path, @prev_dir the set-aside session
 * for OP_SESSION_ROTATED. The loader keeps the session's start time (START
 * and ROTATED begin one). A hook's failure is logged. No-op for l == NULL.
 */
void ext_session_event(struct ext_loader *l, uint32_t kind, const char *dir, const char *prev_dir);

#endif /* OP_CORE_EXT_H */
