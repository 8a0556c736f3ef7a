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

/*
 * Name layout, relative to <session>/samples/current/:
 *
 *   <A>/{dep}/<B>[/{cg}/<C>]/EVENT.COUNT.UM.TGID.TID.CPU
 *
 * where A, B and C are image names:
 *   {root}/<abs path components>     user image, or a kernel image given by path
 *   {kern}/<name>                    kernel image whose name has no '/'
 *   {anon:<NAME>}/<tgid>.0x<start>.0x<end>   anon region, lowercase hex, end inclusive
 *
 * OProfile stores paths verbatim. We do too, except for components that would
 * be ambiguous for a parser or dangerous on disk; those are escaped:
 *
 *   - Escape character '%'. An escaped byte is "%XX" (two uppercase hex
 *     digits). '%' itself is always written "%25".
 *   - Always escaped: control bytes 0x01-0x1f and 0x7f, '%', '/' (only
 *     possible in anon names or direct op_escape_component() calls), and a
 *     trailing '\' of a component (OProfile's tokenizer reads "\/" as an
 *     escaped separator).
 *   - A component equal to ".", "..", "{dep}", "{cg}", "{root}", "{kern}", or
 *     starting with "{anon" has its FIRST byte escaped ("%2E.", "%7Bdep}").
 *   - The empty component (from "//" or a trailing '/') is written "%".
 *   - Components longer than 255 bytes after escaping (NAME_MAX) are split
 *     into chunks of at most 255 bytes; every chunk after the first starts
 *     with the continuation mark "%+", which an escaped component can never
 *     start with. Chunks never split a "%XX" triple. The parser joins them.
 *
 * Everything else (spaces, ':', braces inside names, UTF-8, leading '-',
 * '\' not at the end) is byte-identical to OProfile's verbatim form, so
 * OProfile's opreport reads our files for every path it could itself handle.
 * A name OProfile wrote that contains a literal "%" is decoded as an escape
 * by op_parse_name(); that is the one incompatibility (documented trade-off).
 *
 * Guarantee: for any input bytes, a name built by op_mangle() has no empty,
 * "." or ".." component, no component over 255 bytes, no control byte, does
 * not start with '/', and is shorter than PATH_MAX: it resolves below
 * samples/current/. Relative user paths and kernel names containing '/' that
 * are not absolute are rejected (-EINVAL).
 */

enum op_image_kind {
	OP_IMAGE_USER,   /* {root}/abs/path */
	OP_IMAGE_KERNEL, /* {kern}/name (name has no '/'), else {root}/path */
	OP_IMAGE_ANON,   /* {anon:NAME}/tgid.0xstart.0xend */
};

struct op_image_name {
	enum op_image_kind kind;
	const char *path;    /* absolute path, kernel name, or anon maps name
			     * (NULL or "" for anon means "anon") */
	int32_t tgid;        /* anon only */
	uint64_t start, end; /* anon only; end inclusive */
};

/* --separate flags */
enum op_separate {
	OP_SEP_NONE = 0,
	OP_SEP_LIB = 1u << 0,
	OP_SEP_KERNEL = 1u << 1, /* implies OP_SEP_LIB, as in OProfile */
	OP_SEP_THREAD = 1u << 2,
	OP_SEP_CPU = 1u << 3,
	OP_SEP_ALL = 0xf,
	/* --- issue 20: per-process split key --- */
	/* by the process's cgroup (the cgroup plugin's split key); not in "all" */
	OP_SEP_CGROUP = 1u << 4,
};

/* Longest event name (without NUL) that fits struct op_parsed_name.event. */
#define OP_EVENT_NAME_MAX 63

struct op_mangle_args {
	struct op_image_name app;   /* the application (A) */
	struct op_image_name image; /* the sampled image (B) */
	bool is_cg;
	struct op_image_name cg_to; /* callee image (C) when is_cg */
	const char *event;
	uint64_t count;
	uint32_t um;
	int32_t tgid, tid, cpu; /* -1 = "all" */
	unsigned separate;      /* enum op_separate */
	/* --- issue 20: per-process split key --- */
	const char *split; /* the process's split key (absolute path), or NULL */
};

/*
 * --- issue 20: per-process split key ---
 * With a split key (--separate=cgroup: the process's cgroup path) the name
 * gets a prefix directory per key component:
 *
 *   {cgroup}/<key components, escaped as above>/<A>/{dep}/<B>/EVENT...
 *
 * e.g. {cgroup}/system.slice/foo.service/{root}/usr/bin/x/{dep}/{root}/...
 * and {cgroup}/{root}/... for the root cgroup "/". The marker itself is
 * escaped in every other component ("%7Bcgroup}"), so the last {cgroup}
 * before the first image marker is the split's.
 *
 * Why this shape: OProfile 1.x's opreport lists samples/current
 * recursively and skips every file whose path below it does not start
 * with "/{root}/" or "/{kern}/" (libpp/profile_spec.cpp valid_candidate),
 * so its tools skip the split cleanly instead of aborting on a name they
 * cannot parse; and each {cgroup}/KEY directory is itself a samples
 * directory it reads: `opreport session:current/{cgroup}/system.slice/...`
 * (its parse_filename drops everything before {root}/{kern}). Files of
 * processes without a key (not learnt by the plugin) keep the plain name.
 */
#define OP_SPLIT_MARKER "{cgroup}"

/*
 * Build the name relative to samples/current/ into @buf (NUL-terminated).
 *
 * A is @app when the image is anon, or a kernel image with OP_SEP_KERNEL, or
 * a user image with OP_SEP_LIB (or OP_SEP_KERNEL); otherwise A = B and @app
 * is not looked at. TGID/TID are printed only with OP_SEP_THREAD, CPU only
 * with OP_SEP_CPU (negative values print "all"); otherwise "all".
 *
 * Returns the length, or
 *   -EINVAL       relative user path, kernel name with '/' that is not
 *                 absolute, NULL path, negative anon tgid, event name empty,
 *                 longer than OP_EVENT_NAME_MAX, or holding '.', '/', space
 *                 or a control byte;
 *   -ENAMETOOLONG the name would be PATH_MAX bytes or longer;
 *   -ENOBUFS      it would not fit @len bytes (use a PATH_MAX buffer).
 */
int op_mangle(const struct op_mangle_args *a, char *buf, size_t len);

/*
 * A parsed sample-file name; strings point into @storage. {root} images parse
 * as OP_IMAGE_USER (a kernel image given by path is known only from the
 * header's is_kernel). anon images with the name "anon" keep that name.
 */
struct op_parsed_name {
	struct op_image_name app, image, cg_to;
	bool is_cg;
	char event[OP_EVENT_NAME_MAX + 1];
	uint64_t count;
	uint32_t um;
	int32_t tgid, tid, cpu; /* -1 = "all" */
	const char *split;      /* issue 20: the split key ("/" the root), NULL: none */
	char storage[4 * 4096];
};

/*
 * Parse a name relative to samples/current/ (a leading session path is
 * skipped up to the first {root}, {kern} or {anon:...} component; empty
 * components from "//" are ignored, so OProfile's "{root}//usr/bin/x" string
 * form parses too). Returns 0, or -EINVAL / -ENAMETOOLONG with a message in
 * @err naming the field, what was expected and what was found.
 */
int op_parse_name(const char *name, struct op_parsed_name *out, char *err, size_t err_len);

/*
 * Escape one path component (@in_len bytes, no NUL) with the rules above.
 * The result may contain '/' only between continuation chunks ("/%+").
 * Returns the length written to @out (NUL-terminated), -EINVAL for a NUL
 * byte in @in, -ENAMETOOLONG if it does not fit @out_len or PATH_MAX.
 */
int op_escape_component(const char *in, size_t in_len, char *out, size_t out_len);

/*
 * Reverse op_escape_component(): @in is one escaped component, possibly with
 * continuation chunks ("a.../%+b..."). Returns the decoded length (@out is
 * NUL-terminated), -EINVAL for a bad escape ("%" not followed by two hex
 * digits, "%00", a '/' not followed by "%+"), -ENAMETOOLONG if @out is small.
 */
int op_unescape_component(const char *in, char *out, size_t out_len);

#endif /* OP_MANGLE_H */
