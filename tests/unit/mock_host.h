/*
 * mock_host.h - a stand-in for oprofiled's struct op_host, so a real plugin
 * can be unit-tested without the daemon (the idea of collectd's plugin_mock.c).
 * Every service is implemented and records what the plugin did with it.
 * SPDX-License-Identifier: MIT
 *
 * Typical use (plugin source compiled into the test, or dlopen'd):
 *
 *	struct mock_host *mh = mock_host_new();
 *	mock_host_set_config_int64(mh, "frequency", 1000);   // plugins.<name>.frequency
 *	assert_int_equal(mock_host_init(mh, &oprofile_ext_v1, "freq=2000"), 0);
 *	assert_int_equal(mh->nr_models, 1);
 *	... call mh->models[0].desc.encode(mh->models[0].priv, ...) ...
 *	assert_true(mock_host_log_contains(mh, OP_LOG_WARN, "above 10000 Hz"));
 *	mock_host_print_stats(mh);
 *	assert_true(mock_host_stat(mh, "period_ns", &v));
 *	mock_host_free(mh);   // calls ext_deinit if init succeeded
 *
 * The mock is single-context: one mock_host hosts one plugin. All tables are
 * public so a test can inspect them directly; the helpers below cover the
 * common look-ups. Fixed capacities keep it simple: a service that would
 * overflow one returns -ENOSPC (and counts it in mh->overflows) rather than
 * growing, so a test notices.
 */
#ifndef OP_TESTS_MOCK_HOST_H
#define OP_TESTS_MOCK_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oprofile_sdk.h"

#define MOCK_MAX_LOGS 256
#define MOCK_LOG_LEN 512
#define MOCK_MAX_CONFIG 32
#define MOCK_MAX_REG 16 /* per registration kind */
#define MOCK_MAX_COOKIES 256
#define MOCK_MAX_MAPPINGS 64
#define MOCK_MAX_EMITS 1024
#define MOCK_MAX_EMIT_ARGS 32
#define MOCK_MAX_LOGGED 4096
#define MOCK_MAX_FILES 64
#define MOCK_MAX_FILE_KEYS 4096
#define MOCK_MAX_STATS 128

/* first escape code the mock allocates (like the core's OP_ESCAPE_FIRST_PLUGIN) */
#define MOCK_ESCAPE_FIRST 32
#define MOCK_ESCAPE_MAX 256
/* first virtual counter number the mock hands out (like EXT_COUNTER_BASE) */
#define MOCK_COUNTER_BASE 64

struct mock_log {
	enum op_log_level level;
	char msg[MOCK_LOG_LEN];
};

enum mock_config_type { MOCK_CFG_STRING, MOCK_CFG_INT64, MOCK_CFG_BOOL };

struct mock_config {
	char *key; /* relative to plugins.<name>. */
	enum mock_config_type type;
	char *s;
	int64_t i;
	bool b;
};

struct mock_reg_stats { struct op_stats_ops ops; void *priv; };
struct mock_reg_sfile { struct op_sfile_ops ops; void *priv; };
struct mock_reg_escape { struct op_escape_desc desc; char *name; void *priv; uint32_t code; };
struct mock_reg_model { struct op_model_desc desc; void *priv; };
struct mock_reg_source { struct op_source_desc desc; void *priv; uint32_t index; };
struct mock_reg_hook { struct op_sample_hook_desc desc; void *priv; };
struct mock_reg_counter { struct op_counter_desc desc; char *name; uint32_t counter; };

struct mock_cookie {
	char *path;
	bool is_kernel;
};

/* One mapping map_pc answers from: [start, end) of @pid (0 = every pid). */
struct mock_mapping {
	uint32_t pid;
	uint64_t start, end;
	uint64_t pgoff;     /* offset = pc - start + pgoff */
	op_cookie_t cookie;
	int32_t in_kernel;
	bool anon;          /* report anon_start/anon_end = start/end-1 */
};

/* One record emitted through host->emit. */
struct mock_emit_rec {
	uint32_t code;
	uint32_t nargs;
	uint64_t args[MOCK_MAX_EMIT_ARGS];
};

/* The op_emit_t the mock hands to on_sample callbacks (mock_host_emitter). */
struct op_emit {
	struct mock_host *mh;
	uint32_t max_args; /* emit returns -ENOSPC above this (default MOCK_MAX_EMIT_ARGS) */
};

/* One host->log_sample call. */
struct mock_logged {
	uint32_t counter;
	uint64_t key;
	uint32_t count;
	struct op_trans_view view; /* copy (sfile pointer kept as given) */
};

struct mock_file_key {
	uint64_t key;
	uint32_t count;
};

/* The op_sample_file_t sample_file_open returns. */
struct op_sample_file {
	struct mock_host *mh;
	op_sfile_t *sf;
	struct op_file_spec spec;
	struct op_trans_view view; /* context it was opened in */
	struct mock_file_key keys[MOCK_MAX_FILE_KEYS];
	size_t nr_keys;
	unsigned syncs;
	bool closed;
};

struct mock_stat {
	char name[96];
	uint64_t value;
};

/* The plugin context (op_ext_t) the mock hands to the plugin. */
struct op_ext {
	struct mock_host *mh;
};

struct mock_host {
	struct op_host host;  /* what the plugin sees */
	struct op_ext ctx;
	const struct op_ext_descriptor *desc;
	bool inited;
	bool in_init;         /* ext_init runs */
	struct op_user_data ud; /* set_user_data; freed after ext_deinit or a failed init */
	bool has_ud;
	unsigned nr_ud_freed; /* free_func calls so far */

	/* settings (mock_host_set_*) */
	char *session_dir;    /* NULL: session_dir() returns NULL */
	char *proc_root;      /* default "/proc" */
	bool echo_logs;       /* also print logs to stderr (env MOCK_HOST_VERBOSE=1) */
	/* if set, map_pc calls this instead of looking up the mapping table */
	int (*map_pc_fn)(struct mock_host *mh, uint32_t pid, uint16_t cpumode, uint64_t pc,
			 struct op_pc_map *out);

	struct mock_log logs[MOCK_MAX_LOGS];
	size_t nr_logs;          /* stored (<= MOCK_MAX_LOGS) */
	size_t nr_logs_total;    /* all calls, also the ones not stored */
	size_t nr_logs_by_level[4];

	struct mock_config config[MOCK_MAX_CONFIG];
	size_t nr_config;

	struct mock_reg_stats stats[MOCK_MAX_REG];
	size_t nr_stats;
	struct mock_reg_sfile sfile[MOCK_MAX_REG];
	size_t nr_sfile;
	struct mock_reg_escape escapes[MOCK_MAX_REG];
	size_t nr_escapes;
	struct mock_reg_model models[MOCK_MAX_REG];
	size_t nr_models;
	struct mock_reg_source sources[MOCK_MAX_REG];
	size_t nr_sources;
	struct mock_reg_hook hooks[MOCK_MAX_REG];
	size_t nr_hooks;
	struct op_kernel_ops kernel_ops;
	void *kernel_priv;
	bool has_kernel;
	struct mock_reg_counter counters[MOCK_MAX_REG];
	size_t nr_counters;

	struct mock_cookie cookies[MOCK_MAX_COOKIES]; /* cookie N is cookies[N-1] */
	size_t nr_cookies;

	struct mock_mapping mappings[MOCK_MAX_MAPPINGS];
	size_t nr_mappings;
	size_t nr_map_pc;        /* map_pc calls */

	struct op_emit emitter;
	struct mock_emit_rec emits[MOCK_MAX_EMITS];
	size_t nr_emits;

	struct mock_logged logged[MOCK_MAX_LOGGED];
	size_t nr_logged;

	struct op_sample_file *files[MOCK_MAX_FILES];
	size_t nr_files;
	size_t nr_file_adds;

	/* filled by mock_host_print_stats */
	struct mock_stat stat_values[MOCK_MAX_STATS];
	size_t nr_stat_values;
	char *stat_text;         /* text lines, '\n'-separated */

	size_t overflows;        /* a fixed table was full (see top comment) */
};

/* Allocate a mock host (never NULL: aborts the test on OOM). */
struct mock_host *mock_host_new(void);
/* ext_deinit (if init succeeded), close open sample files, free everything. */
void mock_host_free(struct mock_host *mh);

void mock_host_set_session_dir(struct mock_host *mh, const char *dir);
void mock_host_set_proc_root(struct mock_host *mh, const char *dir);
/* plugins.<name>.<key> values the config getters return */
void mock_host_set_config_string(struct mock_host *mh, const char *key, const char *val);
void mock_host_set_config_int64(struct mock_host *mh, const char *key, int64_t val);
void mock_host_set_config_bool(struct mock_host *mh, const char *key, bool val);
/* a mapping map_pc answers from */
void mock_host_add_mapping(struct mock_host *mh, const struct mock_mapping *m);

/* the plugin context to pass to services when calling them from a test */
op_ext_t *mock_host_ctx(struct mock_host *mh);
/* the op_emit_t to pass to on_sample callbacks */
op_emit_t *mock_host_emitter(struct mock_host *mh);

/*
 * Run @desc->ext_init with @args (NULL means ""). Checks the descriptor like
 * the loader would (major, size, reserved slots) and returns -EPROTO if it
 * is wrong. On init failure every registration is rolled back, as the core
 * does, and ext_deinit will not be called.
 */
int mock_host_init(struct mock_host *mh, const struct op_ext_descriptor *desc, const char *args);
/* ext_deinit now (idempotent). */
void mock_host_deinit(struct mock_host *mh);

/* Number of stored log lines at @level (or any level if @level < 0) containing @needle. */
size_t mock_host_log_count(const struct mock_host *mh, int level, const char *needle);
bool mock_host_log_contains(const struct mock_host *mh, int level, const char *needle);
/* Forget the recorded log lines (counters too). */
void mock_host_log_clear(struct mock_host *mh);

/* Call every registered print_stats; the results replace the previous ones. */
void mock_host_print_stats(struct mock_host *mh);
/* Value of a counter printed by the last mock_host_print_stats. */
bool mock_host_stat(const struct mock_host *mh, const char *name, uint64_t *value);

/* Path of cookie @c, or NULL. */
const char *mock_host_cookie_path(const struct mock_host *mh, op_cookie_t c);
/* Cookie of @path (0 if never interned). */
op_cookie_t mock_host_cookie_of(const struct mock_host *mh, const char *path);

/* Count stored at @key in @f (0 if none). */
uint32_t mock_file_count(const struct op_sample_file *f, uint64_t key);
/* Registered escape by name, or NULL. */
const struct mock_reg_escape *mock_host_escape(const struct mock_host *mh, const char *name);

#endif /* OP_TESTS_MOCK_HOST_H */
