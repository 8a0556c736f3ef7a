/*
 * op_profile.h - a session as an in-memory profile (libopprofile): mappings
 * (the sampled images), locations (image + key), samples (location lists,
 * leaf first, with a count and pid/tid/cpu/comm labels), the event and its
 * period, the session's times; read from the sample files and the
 * call-graph stack table, diffed (the delta a pull or push plugin sends),
 * and encoded as gzip'd profile.proto (op_pprof_encode).
 * SPDX-License-Identifier: MIT
 *
 * No libbfd here: oprofiled's plugins link this library (so does
 * opexport). Symbol names are optional input: opexport fills them with
 * libbfd and the kallsyms snapshot (op_profile_name_loc); the daemon's
 * plugins export bare addresses plus build IDs, which fleet servers
 * symbolize. It keeps libopng (which the daemon links) free of protobuf-c
 * and libdeflate.
 *
 * No global state: a profile is used by one thread at a time, and several
 * profiles may be built on several threads at once (a plugin's own thread
 * reading samples/current while the daemon writes it: sample files are
 * read through private copies, the stack table with pread).
 */
#ifndef OP_PROFILE_H
#define OP_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "odb.h"
#include "op_cgroups.h"
#include "op_mangle.h"

#define OP_PROFILE_BUILDID_MAX 64 /* bytes of a build ID kept (OP_BUILDID_MAX) */
/* the image of stack frames that mapped to no image (its key is the raw pc) */
#define OP_PROFILE_UNKNOWN_IMAGE "[unknown]"

/* A sampled image. Ids run 1..N in the order images were first seen. */
struct op_profile_mapping {
	uint32_t id;
	enum op_image_kind kind;
	bool is_kernel;
	char *path; /* absolute path, kernel name, anon maps name */
	char *file; /* where the binary is read (a root prefix applied), NULL: path */
	int32_t tgid;
	uint64_t anon_start, anon_end; /* anon: [start, end] */
	/*
	 * The executable PT_LOAD: file offsets [text_off, text_off + text_size)
	 * at text_vaddr; from the session's build-id index, else the binary
	 */
	uint64_t text_off, text_vaddr, text_size;
	bool have_text;
	char build_id[2 * OP_PROFILE_BUILDID_MAX + 1]; /* lowercase hex, "" unknown */
	uint64_t max_key;                              /* highest key sampled */
	bool has_functions;                            /* set when a location of it was named */
	bool has_lines;
};

/* One address of one image. Ids run 1..N. */
struct op_profile_loc {
	uint32_t mapping; /* id */
	uint64_t key; /* in the image's key space (file offset, pc - kernel start, pc - anon start) */
	char *func;   /* NULL: not named */
	char *file;
	unsigned line;
};

/* A sample's labels: -1 (or 0 for comm) when --separate did not record it */
struct op_profile_labels {
	int32_t pid, tid, cpu;
	uint32_t comm; /* mapping id of the process's executable (its base name), 0: none */
	/* issue 20: 1 + index into op_profile.splits (the file's --separate=cgroup key), 0: none */
	uint32_t cgroup;
};

struct op_profile_sample {
	uint32_t loc_off; /* into op_profile.locpool: locations, leaf first */
	uint32_t nlocs;
	struct op_profile_labels lab;
	uint64_t count; /* samples */
};

struct op_profile_label_kv {
	char *key, *value;
};

struct op_profile {
	char event[64];    /* "TIMER", "CPU_CLK_UNHALTED", ... ("" before the first file) */
	uint64_t period;   /* events per sample (nanoseconds for TIMER) */
	uint32_t cpu_type; /* of the sample-file header */
	bool timer;        /* the timer model: the value unit is nanoseconds of CPU */
	uint64_t time_nanos, duration_nanos; /* when the session started, how long it ran */
	uint64_t kernel_start;               /* the kernel image's origin of keys (0: unknown) */
	struct op_profile_mapping *maps;     /* maps[id - 1] */
	size_t nmaps, capmaps;
	struct op_profile_loc *locs; /* locs[id - 1] */
	size_t nlocs, caplocs;
	uint32_t *locpool; /* samples' location lists */
	size_t npool, cappool;
	struct op_profile_sample *samples;
	size_t nsamples, capsamples;
	struct op_profile_label_kv *labels; /* added to every sample (--label=K=V) */
	size_t nlabels;
	/*
	 * The session's cgroup index (stats/cgroups): samples whose pid label
	 * it names get cgroup, container_id and systemd_unit labels
	 */
	struct op_cgroup_index cgroups;
	/*
	 * issue 20: the cgroups of a --separate=cgroup session, one per split
	 * key seen in a file name (tgid unused): exact labels, the index is
	 * not asked for those samples
	 */
	struct op_cgroup_index splits;
	uint64_t total;         /* samples */
	uint64_t stack_samples; /* of them, in whole stacks */
	unsigned nwarnings;     /* files or entries skipped (each warned about) */
	/* private: hashes of maps, locs and samples; flat samples while stacks come in */
	void *priv;
};

/* Where warnings go (NULL: stderr, prefixed "op_profile: "). */
typedef void (*op_profile_warn_fn)(void *arg, const char *msg);

struct op_profile *op_profile_new(void);
void op_profile_free(struct op_profile *p);
void op_profile_set_warn(struct op_profile *p, op_profile_warn_fn fn, void *arg);

/*
 * The mapping of image @n (is_kernel from the sample file's header; @file
 * where its binary is read, NULL: its path): its id, or 0 on ENOMEM.
 */
uint32_t op_profile_mapping(struct op_profile *p, const struct op_image_name *n, bool is_kernel,
			    const char *file);
/* The location of @key in mapping @map: its id, or 0 on ENOMEM. */
uint32_t op_profile_location(struct op_profile *p, uint32_t map, uint64_t key);
/*
 * Add @count samples of the stack @locs[0] (leaf) .. @locs[n - 1] (root)
 * with labels @lab (NULL: none). Equal stacks with equal labels merge.
 * @flat: a sample of a flat sample file (one location); when the session
 * also has whole stacks, op_profile_finish keeps of it only what the stacks
 * do not account for. 0 or -ENOMEM.
 */
int op_profile_add(struct op_profile *p, const uint32_t *locs, size_t n,
		   const struct op_profile_labels *lab, uint64_t count, bool flat);
/* A --label=KEY=VALUE pair for every sample. 0, -EINVAL (no '=' or empty key), -ENOMEM. */
int op_profile_add_label(struct op_profile *p, const char *kv);
/* Name location @loc (function, source file or NULL, line or 0). 0 or -ENOMEM. */
int op_profile_name_loc(struct op_profile *p, uint32_t loc, const char *func, const char *file,
			unsigned line);

/*
 * The samples of the open sample file @db named @pn (relative to its
 * session), its binary at @file (NULL: the image's path): one location per
 * key, labels from the name. A second event is refused: -EXDEV with the
 * reason in @err (select one event). 0, -EXDEV, -ENOMEM.
 */
int op_profile_add_odb(struct op_profile *p, odb_t *db, const struct op_parsed_name *pn,
		       const char *file, char *err, size_t err_len);

/* Does the image of a stack frame belong to the export? (a profile specification) */
typedef bool (*op_profile_want_image_fn)(void *arg, const struct op_image_name *n);

/*
 * The whole stacks of the call-graph stack table read from @fd (closed;
 * op_cg_format.h, versions 1 to 4), named @path in warnings. A stack is
 * kept when @want (NULL: all) wants one of its images. Entries that do not
 * hold together are skipped with one warning. Binaries are read at
 * @root + path (@root NULL: ""). Called after the sample files were added:
 * a stack's context (version 3) becomes its pid/tid and cpu labels where
 * the flat files were split by thread and by cpu too; its split key
 * (version 4, --separate=cgroup) its cgroup label, and a stack of a split
 * none of the flat files added has is left out. 0 or -ENOMEM.
 */
int op_profile_add_stacks(struct op_profile *p, int fd, const char *path, const char *root,
			  op_profile_want_image_fn want, void *arg);

/* The kernel's origin of keys from the kallsyms snapshot read from @fd (closed). */
void op_profile_kernel_start(struct op_profile *p, int fd);
/*
 * The session's times from samples/<session> open at @dfd: the start is
 * when the directory was created (its birth time, else the oldest change
 * of what it holds), the end its last dump (stats/ last written).
 */
void op_profile_session_times(struct op_profile *p, int dfd);

/*
 * Build IDs and executable segments of the images from the build-id index
 * of the session @samples_dir (stats/buildids, lib/op_buildid.h): what was
 * profiled, whatever is on disk now. Images it already has one for are left
 * alone. 0 (no index: nothing done; a bad one: a warning) or -ENOMEM.
 */
int op_profile_apply_buildids(struct op_profile *p, const char *samples_dir);

/*
 * The cgroup index of the session open at @dfd (samples/<session>), if it
 * has one, into @p->cgroups (a later session's lines of a tgid win over an
 * earlier one's). 0 (no index: nothing done; malformed lines: a warning)
 * or -ENOMEM (another read error: a warning).
 */
int op_profile_apply_cgroups(struct op_profile *p, int dfd);

/*
 * After everything is added: flat samples minus what the stacks hold, each
 * image's build ID and executable PT_LOAD from its binary where
 * the index had none. 0 or -ENOMEM.
 */
int op_profile_finish(struct op_profile *p);

struct op_profile_load_opts {
	/* only the sample files whose name this wants (NULL: all) */
	bool (*want)(void *arg, const struct op_parsed_name *pn);
	void *arg;
	const char *root; /* prefix of every binary's path (NULL: none) */
	bool no_stacks;   /* leave the call-graph stack table out */
};

/*
 * Read the session @samples_dir (<session>/samples/current, or a rotated
 * one) into @p, finished: every sample file (never through a symbolic
 * link; a corrupt one is skipped with a warning), the stack table, the
 * kallsyms snapshot's kernel start, the session's times. 0, -ENOENT (no
 * such session, no sample file), -EXDEV (several events: choose with
 * @o->want), -ENOMEM; the reason in @err.
 */
int op_profile_load(struct op_profile *p, const char *samples_dir,
		    const struct op_profile_load_opts *o, char *err, size_t err_len);

/*
 * @now minus @before (the profile taken earlier of the same session): a
 * new profile of the samples added since, matched by image, key and
 * labels; samples that shrank (a reset or rotation in between) count whole.
 * NULL on ENOMEM.
 */
struct op_profile *op_profile_diff(const struct op_profile *now, const struct op_profile *before);

/* the ELF virtual address of location @loc (what pprof resolves) */
uint64_t op_profile_loc_addr(const struct op_profile *p, const struct op_profile_loc *loc);

struct op_pprof_opts {
	bool no_gzip; /* the bare protobuf (tests; pprof wants it gzip'd) */
	/*
	 * deflate on a second thread while protobuf-c packs (opexport: the two
	 * overlap on a multi-core machine); the daemon's plugins encode on one
	 */
	bool threaded;
	/*
	 * NULL, or what names the locations (op_profile_name_loc), called with
	 * @name_arg on a thread of its own while the samples are packed (they
	 * need no names); meanwhile it may change nothing of the profile but
	 * the locations' names and the mappings' has_functions/has_lines. Its
	 * nonzero return (-errno) ends the encoding with it.
	 */
	int (*name_fn)(void *name_arg);
	void *name_arg;
};

/*
 * @p as profile.proto, gzip'd: sample types samples/count and the event's
 * (cpu/nanoseconds for the timer, else EVENT/count), period, times,
 * mappings (the executable PT_LOAD's vaddr range and file offset, build
 * ID, file name), locations at ELF virtual addresses, functions and lines
 * where named, labels. Ids 1..N, string 0 empty. The bytes in *@buf
 * (malloc'd, *@len of them). 0, -ENOMEM, -EIO (protobuf-c or the compressor).
 */
int op_pprof_encode(const struct op_profile *p, const struct op_pprof_opts *o, uint8_t **buf,
		    size_t *len);

#endif /* OP_PROFILE_H */
