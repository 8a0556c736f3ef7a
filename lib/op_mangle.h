/*
 * op_mangle.h - build and parse sample-file names
 * (<A>/{dep}/<B>[/{cg}/<C>]/EVENT.COUNT.UM.TGID.TID.CPU), with reversible
 * escaping of path components that are ambiguous or dangerous.
 * Format facts: notes/oprofile-format.md section 3.4.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_MANGLE_H
#define OP_MANGLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum op_image_kind {
	OP_IMAGE_USER,   /* {root}/abs/path */
	OP_IMAGE_KERNEL, /* {kern}/name (name has no '/'), else {root}/path */
	OP_IMAGE_ANON,   /* {anon:NAME}/tgid.0xstart.0xend */
};

struct op_image_name {
	enum op_image_kind kind;
	const char *path;   /* absolute path, kernel name, or anon maps name */
	int32_t tgid;       /* anon only */
	uint64_t start, end; /* anon only; end inclusive */
};

/* --separate flags */
enum op_separate {
	OP_SEP_NONE = 0,
	OP_SEP_LIB = 1u << 0,
	OP_SEP_KERNEL = 1u << 1,
	OP_SEP_THREAD = 1u << 2,
	OP_SEP_CPU = 1u << 3,
	OP_SEP_ALL = 0xf,
};

struct op_mangle_args {
	struct op_image_name app;    /* the application (A) */
	struct op_image_name image;  /* the sampled image (B) */
	bool is_cg;
	struct op_image_name cg_to;  /* callee image (C) when is_cg */
	const char *event;
	uint64_t count;
	uint32_t um;
	int32_t tgid, tid, cpu;      /* -1 = "all" */
	unsigned separate;           /* enum op_separate */
};

/*
 * Build the name relative to samples/current/ into @buf. Every component that
 * came from a process path is escaped so that the result never contains "..",
 * ".", empty components, control bytes or marker-like components, and stays
 * below the session directory. Returns length or -ENAMETOOLONG / -EINVAL.
 */
int op_mangle(const struct op_mangle_args *a, char *buf, size_t len);

/* A parsed sample-file name; strings point into @storage of the parser. */
struct op_parsed_name {
	struct op_image_name app, image, cg_to;
	bool is_cg;
	char event[64];
	uint64_t count;
	uint32_t um;
	int32_t tgid, tid, cpu; /* -1 = "all" */
	char storage[3 * 4096];
};

/* Parse a name relative to samples/current/ (or a session dir). 0 or -EINVAL + @err. */
int op_parse_name(const char *name, struct op_parsed_name *out, char *err, size_t err_len);

/* Escape / unescape one path component (reversible). Return length or -errno. */
int op_escape_component(const char *in, size_t in_len, char *out, size_t out_len);
int op_unescape_component(const char *in, char *out, size_t out_len);

#endif /* OP_MANGLE_H */
