/*
 * options.h - oprofiled's effective configuration: built-in defaults, then
 * the libconfig file, then the command line (options.c, config.c).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_OPTIONS_H
#define OP_CORE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define OP_MAX_FEATURES 16
#define OP_MAX_EVENTS 16
/*
 * Sample files kept open at once unless --max-open-files says otherwise: a
 * busy machine's working set (every live process's anon regions are files
 * of their own) exceeds a few hundred, and reopening costs ~10 us (syscalls,
 * validation) where a sample costs ~0.1 us; an open file costs a
 * descriptor and a small mapping.
 */
#define OP_DEFAULT_MAX_OPEN_FILES 2048
#define OP_MAX_PIDS 64
/* ring_pages / --ring-pages: a power of two up to this (perf_open refuses more) */
#define OP_MAX_RING_PAGES 65536

/* op_feature_req.origin of an --ext-feature */
#define OP_ORIGIN_CMDLINE "command line"

struct op_feature_req {
	char *name;         /* exact plugin name */
	char *args;         /* text after the first ':' ("" if none) */
	const char *origin; /* OP_ORIGIN_CMDLINE or "file:line" for messages */
};

enum op_mode { OP_MODE_LAUNCH, OP_MODE_PID, OP_MODE_SYSTEM, OP_MODE_REPLAY };

struct op_options {
	enum op_mode mode;
	char *session_dir;      /* --session-dir */
	char *session_group;    /* --session-group: share the session with it (NULL: private) */
	char *config_file;      /* --config (NULL: none/default) */
	char *plugin_dir;       /* --plugin-dir > config > $OP_PLUGIN_DIR > configure default */
	char *events_spec;      /* --events=NAME:count[:um[:k[:u]]],... (NULL: default) */
	unsigned frequency;     /* --frequency: the default event at N Hz per CPU (0: its count) */
	bool frequency_cmdline; /* given on the command line (else a file's, which -e drops) */
	unsigned separate;      /* enum op_separate (lib/op_mangle.h) */
	struct op_feature_req features[OP_MAX_FEATURES];
	size_t nr_features;
	char *vmlinux;       /* --vmlinux */
	bool no_vmlinux;     /* --no-vmlinux */
	char **image_filter; /* --image=a,b,c (NULL-terminated) */
	unsigned verbose;    /* bit set of OP_VERBOSE_* */
	bool append;         /* --append */
	size_t ring_pages;   /* data pages per ring (power of two) */
	uint32_t pids[OP_MAX_PIDS];
	size_t nr_pids;
	char **command;           /* launch mode: argv after "--" */
	char *record_file;        /* --record */
	bool record_overwrite;    /* --record-overwrite: replace an existing regular file */
	char *replay_file;        /* --replay */
	char *proc_root;          /* --proc-root (tests), default "/proc" */
	char *cpu_type;           /* --cpu-type override */
	unsigned stats_interval;  /* seconds between periodic stats (0: off) */
	unsigned sync_interval;   /* seconds between periodic msync */
	char *log_file;           /* default <session>/samples/oprofiled.log */
	bool list_plugins;        /* --list-plugins */
	bool check_config;        /* --check-config */
	bool daemonize;           /* --daemonize */
	unsigned max_open_files;  /* sfile LRU bound */
	unsigned rotate_interval; /* --rotate: seconds between saved sessions (0: off) */
	unsigned rotate_keep;     /* --rotate-keep: saved rotate-* sessions kept */
	char *events_origin;      /* "FILE:LINE" when the events came from the config file */
	void *config;             /* the parsed config_t (for plugins.<name> getters), or NULL */
};

enum {
	OP_VERBOSE_SFILE = 1u << 0,
	OP_VERBOSE_SAMPLES = 1u << 1,
	OP_VERBOSE_ARCS = 1u << 2,
	OP_VERBOSE_MODULE = 1u << 3,
	OP_VERBOSE_MISC = 1u << 4,
	OP_VERBOSE_EXT = 1u << 5,
	OP_VERBOSE_ALL = 0x3f,
};

/*
 * Parse argv (and the config file it names, or the default one if it
 * exists) into @o. On error prints "oprofiled: <where>: <what>" to stderr
 * and returns -EINVAL; returns 1 when the caller should exit 0 (--help).
 */
int options_parse(struct op_options *o, int argc, char **argv);
/* The same, with messages to @err (NULL: silent) instead of stderr. */
int options_parse_f(struct op_options *o, int argc, char **argv, FILE *err);
void options_free(struct op_options *o);
/* Print the effective configuration (for --check-config). */
void options_print(const struct op_options *o, FILE *out);
/*
 * The config file turns plugin @name off: "enabled = false" in its entry of
 * plugins, in the list form ( { name = "NAME"; enabled = false; } ) or the
 * group form { NAME = { enabled = false; }; }. For the plugins oprofiled
 * loads by itself (kernel, models, timer); a disabled entry is no feature.
 */
bool options_plugin_disabled(const struct op_options *o, const char *name);

#endif /* OP_CORE_OPTIONS_H */
