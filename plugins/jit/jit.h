/*
 * jit.h - what the files of plugins/jit share: the per-process model of JIT
 * code (functions placed in the process's image, address ranges with their
 * validity in time), the sources it is read from (jitdump, perf map) and
 * the plugin's state and counters. jit.c is the SDK glue, jit_proc.c the
 * model and its time-aware lookup, jit_src.c the trusted reading of the
 * files, jit_image.c the conversion into ELF images in the session.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PLUGINS_JIT_H
#define OP_PLUGINS_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "op_jit.h"
#include "op_jitelf.h"
#include "oprofile_sdk.h"

/* bounds: what one process may make the daemon hold or read */
#define JIT_MAX_TEXT (256ull << 20)    /* bytes of .text in one image */
#define JIT_MAX_FNS (1u << 20)         /* functions of one process */
#define JIT_MAX_LINES_FN 65536u        /* line entries of one function */
#define JIT_MAX_PENDING 4096u          /* DEBUG_INFO records waiting for their LOAD */
#define JIT_MAX_SOURCE (512ull << 20)  /* bytes read from one dump or map */
#define JIT_READ_BUDGET (8u << 20)     /* bytes read from one source per refresh */
#define JIT_WALK_MAX 64u               /* overlapping ranges a lookup looks at */
#define JIT_REFRESH_NS 10000000ull     /* a miss re-reads a process's files at most every 10 ms */
#define JIT_MAP_PROBE_NS 1000000000ull /* a missing perf map is looked for at most every 1 s */
#define JIT_NO_END UINT64_MAX

/* counters, in print_stats order (jit.c names them) */
enum jit_stat {
	JS_PROCS, /* processes with JIT state */
	JS_DUMPS, /* jitdump files opened */
	JS_MAPS,  /* perf maps opened */
	JS_BYTES, /* bytes read from both */
	JS_LOADS,
	JS_MOVES,
	JS_UNLOADS,
	JS_DEBUG_INFOS,
	JS_MAP_LINES,
	JS_FUNCTIONS,      /* functions placed in images */
	JS_RESOLVED,       /* samples claimed */
	JS_RESOLVED_MOVED, /* of which at an address code was moved to */
	JS_MISSES,         /* anon samples of a JIT process not claimed */
	JS_REFRESHES,      /* files re-read on a miss */
	JS_IMAGES,         /* images written */
	JS_IMAGE_ERRORS,   /* images that could not be written */
	JS_UNTRUSTED,      /* files refused: owner, mode, symbolic link, type */
	JS_OPEN_ERRORS,    /* files that could not be opened otherwise */
	JS_READ_ERRORS,
	JS_TOO_BIG,      /* a source past JIT_MAX_SOURCE, or an image past its bounds */
	JS_PARSE_ERRORS, /* op_jit_errors of every reader, summed */
	JS_BROKEN,       /* sources that could not be framed (reading stopped) */
	JS_ORPHAN_MOVES, /* MOVE/UNLOAD/DEBUG_INFO of code never loaded */
	JS_BAD_LINES,    /* debug entries outside their function */
	JS_ARCH_TS,      /* dumps with cycle-counter timestamps: attributed by last state */
	JS_WALK_LIMIT,   /* lookups that gave up after JIT_WALK_MAX overlaps */
	JS_NR
};

/* a function: its place in the image */
struct jit_fn {
	char *name;
	uint64_t off, size; /* in .text */
	uint8_t *code;      /* size bytes, or NULL */
	struct op_jitelf_line *lines;
	uint32_t nr_lines;
	uint32_t cur; /* the range it is at now (index in ranges) */
};

/* where a function was, and when: [start, end) valid from..to (perf time ns) */
struct jit_range {
	uint64_t start, end;
	uint64_t from, to;
	uint64_t key; /* the key of start: the lookup reads no jit_fn */
	uint32_t fn;
	bool moved; /* made by a MOVE (counted apart: JS_RESOLVED_MOVED) */
};

/* a DEBUG_INFO that came before its LOAD (perf's agents write it so) */
struct jit_pending {
	uint64_t code_addr;
	struct op_jitelf_line *lines; /* off is relative to code_addr */
	uint32_t nr_lines;
};

enum jit_src_kind { JIT_SRC_DUMP, JIT_SRC_MAP };

/* one file followed: opened once, kept open while the process lives */
struct jit_src {
	enum jit_src_kind kind;
	char *path;
	int fd; /* -1: not open */
	uint64_t off;
	bool failed; /* refused or broken: not read again */
	struct op_jitdump_reader *dr;
	struct op_perfmap_reader *mr;
};

/* a u64 -> u32 hash (code_index -> fn, start -> range) */
struct jit_map {
	uint64_t *keys;
	uint32_t *vals;
	uint32_t cap, nr; /* cap a power of two; keys[i] = 0 free, stored as key + 1 */
};

struct jit_state;

struct jit_proc {
	struct jit_state *st;
	uint32_t pid;
	uid_t uid; /* files must be its (or root's) */
	bool exited;
	bool arch_ts;
	bool dirty;        /* changed since its image was written */
	bool image_failed; /* no image (no session, a write error): never claims */
	struct jit_src dump, map;
	uint64_t last_refresh, last_map_probe; /* sample times */
	/* the image */
	op_cookie_t cookie;
	unsigned gen;
	char name[64]; /* "PID.GEN.jo" in the session's jit/ */
	struct timespec mtime;
	struct jit_fn *fns;
	uint32_t nr_fns, cap_fns;
	uint64_t text_size;
	/*
	 * ranges, appended; sorted: by start for the lookup, in one array (the
	 * binary search touches nothing else), with the prefix max of the ends
	 */
	struct jit_range *ranges;
	uint32_t nr_ranges, cap_ranges;
	struct jit_sorted {
		uint64_t start, maxend;
		uint32_t idx; /* in ranges */
	} * sorted;
	uint32_t nr_sorted;
	/*
	 * the last range found, when nothing else overlaps it: samples come in
	 * runs in one function. Valid while hit_ok (any change clears it).
	 */
	bool hit_ok;
	uint64_t hit_start, hit_end, hit_from, hit_to, hit_key;
	bool hit_moved;
	struct jit_map code_index, start;
	/* source file names of the lines */
	char **files;
	uint32_t nr_files, cap_files;
	struct jit_pending *pending;
	uint32_t nr_pending, cap_pending;
};

struct jit_state {
	op_ext_t *ctx;
	const struct op_host *host;
	const char *session_dir;
	const char *proc_root;
	int jit_dirfd;           /* <session>/jit, -1 until needed, -2 unusable */
	struct jit_proc **procs; /* open addressing by pid */
	uint32_t cap_procs, nr_procs;
	uint64_t v[JS_NR];
	struct op_jit_errors errs;
};

/* --- jit_proc.c: the model --- */
struct jit_proc *jit_proc_find(const struct jit_state *st, uint32_t pid);
struct jit_proc *jit_proc_get(struct jit_state *st, uint32_t pid);
/* finish @p (last read, image written) and forget it */
void jit_proc_drop(struct jit_state *st, struct jit_proc *p);
void jit_proc_free_all(struct jit_state *st);
/* a new function (name, size, code or NULL) valid at [start, start+size) from @t */
int jit_proc_load(struct jit_proc *p, const char *name, uint64_t start, uint64_t size,
		  const uint8_t *code, uint64_t t, uint64_t code_index);
int jit_proc_move(struct jit_proc *p, uint64_t code_index, uint64_t to_addr, uint64_t t);
int jit_proc_unload(struct jit_proc *p, uint64_t start, uint64_t t);
int jit_proc_debug(struct jit_proc *p, uint64_t code_addr, const struct op_jit_line *e, size_t n);
/* sort the ranges for the lookup after a batch of changes */
void jit_proc_index(struct jit_proc *p);
/*
 * HOT: the function at @pc at time @t; its key (file offset in the image)
 * in *key (counted in JS_RESOLVED_MOVED when @pc is where it was moved to)
 */
bool jit_proc_lookup(struct jit_proc *p, uint64_t pc, uint64_t t, uint64_t *key);

/* --- jit_src.c: the files --- */
/* follow @path as @p's jitdump or perf map (opened now, trusted or refused) */
void jit_src_open(struct jit_proc *p, struct jit_src *s, enum jit_src_kind kind, const char *path);
/*
 * Read what was added since the last read: at most JIT_READ_BUDGET bytes a
 * source, or (@all: a conversion, an exit) everything up to JIT_MAX_SOURCE;
 * then jit_proc_index. The sources stay open.
 */
void jit_src_refresh(struct jit_proc *p, bool all);
void jit_src_close(struct jit_proc *p, struct jit_src *s, bool final);

/* --- jit_image.c: conversion --- */
/* reserve @p's image name and cookie (first function): 0 or -errno */
int jit_image_reserve(struct jit_proc *p);
/* write @p's image if it changed */
void jit_image_write(struct jit_proc *p);

#endif /* OP_PLUGINS_JIT_H */
