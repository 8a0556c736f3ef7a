/*
 * opreport.h - the stages of opreport: profile specification (spec_),
 * sample-file collection and classes (rs_), symbol tables (sym_), output
 * formats (out_), names in text output and messages (txt_). Each stage
 * lives in its own opreport_*.c file.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef OPREPORT_H
#define OPREPORT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "odb.h"
#include "op_buildid.h"
#include "op_header.h"
#include "op_cgroups.h" /* issue 20: OP_CGROUP_PATH_MAX */
#include "op_mangle.h"

/* ------------------------------------------------------------------ text */

/*
 * Every name opreport prints as text (images, applications, symbols, source
 * files, sample-file paths in messages) goes through these: C0 control
 * bytes and DEL become "\n", "\t", "\r" or "\xHH"; so do each byte of the
 * C1 characters U+0080-U+009F, of U+2028/U+2029 and of the bidirectional
 * overrides and isolates (U+202A-U+202E, U+2066-U+2069), and every byte
 * that is not part of valid UTF-8. A backslash is printed as it is. Valid
 * UTF-8 otherwise passes unchanged, whatever the locale.
 */
/* Escape @s into @out (@len bytes, NUL-terminated, cut before an escape or
 * character that does not fit); returns the length of the whole escaped
 * string, as snprintf. @out may be NULL with @len 0 to measure. */
size_t txt_escape(char *out, size_t len, const char *s);
/* Write @s escaped to @f; returns the number of bytes written. */
size_t txt_put(FILE *f, const char *s);
/* malloc'd escaped copy of @s, NULL when out of memory */
char *txt_dup(const char *s);
/* malloc'd "PROG ARGV[1] ARGV[2] ..." (the command line a report shows: not
 * argv[0], which may be a libtool or install path); NULL when out of memory */
char *txt_join_args(const char *prog, int argc, char **argv);
/* "PREFIX" + the formatted message, escaped as a whole, + "\n" on stderr
 * (messages are one line: a newline in an argument is escaped too) */
void txt_msg(const char *prefix, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void txt_vmsg(FILE *f, const char *prefix, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
#define txt_warn(...) txt_msg("opreport warning: ", __VA_ARGS__)
#define txt_error(...) txt_msg("opreport error: ", __VA_ARGS__)
/*
 * Length of the valid UTF-8 sequence at @u (1-4) with its code point in
 * *@cp (may be NULL), or 0: not a lead byte, a missing continuation byte (or
 * the NUL), an overlong form, a surrogate, past U+10FFFF.
 */
size_t txt_utf8_len(const unsigned char *u, uint32_t *cp);

/* ------------------------------------------------------------------ spec */

struct strlist {
	char **v;
	size_t n;
};

int strlist_add(struct strlist *l, const char *s); /* dedups; 0 or -ENOMEM */
int strlist_add_csv(struct strlist *l, const char *csv);
bool strlist_has(const struct strlist *l, const char *s);
void strlist_free(struct strlist *l);

/* A profile specification: every list is OR-ed, different keys AND-ed. */
struct rpt_spec {
	struct strlist session, session_exclude;
	struct strlist image, image_exclude, lib_image;
	struct strlist event, count, unit_mask, tid, tgid, cpu;
	struct strlist cgroup; /* cgroup:GLOB - processes by the session's stats/cgroups */
	char *archive;         /* archive:DIR (absolute), NULL without */
};

/* the processes of one session that cgroup: selects (spec_cgroup_load) */
struct rpt_tgids {
	uint32_t *v; /* sorted */
	size_t n;
	bool have_index; /* the session has a stats/cgroups */
};

/*
 * Add one specification word ("image:/bin/ls,ls", "tid:12", or a plain image
 * name). Relative image paths are made absolute against @cwd. Returns 0 or
 * -EINVAL with a message in @err.
 */
int spec_add(struct rpt_spec *s, const char *word, const char *cwd, char *err, size_t err_len);
/* --merge=LIST (lib,cpu,tid,tgid,unitmask,all) or'ed into *@merge; 0, or
 * -EINVAL with a message in @err, -ENOMEM */
int spec_parse_merge(const char *arg, unsigned *merge, char *err, size_t err_len);
/* Does a sample file (by its parsed name) match everything but session:? */
bool spec_match(const struct rpt_spec *s, const struct op_parsed_name *pn);
/* The same without the image parts (for --global-percent). */
bool spec_match_noimage(const struct rpt_spec *s, const struct op_parsed_name *pn);
/* Is the session directory name selected? */
bool spec_match_session(const struct rpt_spec *s, const char *name);
/*
 * cgroup:GLOB,... against the index stats/cgroups of the session directory
 * @session_fd (lib/op_cgroups.h): the tgids whose cgroup path matches a
 * glob (fnmatch, '*' crosses '/'), or whose container ID or systemd unit
 * is a value (a container ID also by a prefix of 12 or more digits); of
 * several lines of one tgid (moved, then exec'd) the last decides.
 * 0 or -errno (-ENOMEM) with a message in @err.
 */
int spec_cgroup_load(const struct rpt_spec *s, int session_fd, struct rpt_tgids *out, char *err,
		     size_t err_len);
bool spec_cgroup_has(const struct rpt_tgids *t, int32_t tgid);
/*
 * issue 20: cgroup:GLOB,... against a sample file's split key (a session
 * profiled with --separate=cgroup: exact, no index or thread split needed).
 */
bool spec_cgroup_match_key(const struct rpt_spec *s, const char *key);
void spec_cgroup_free(struct rpt_tgids *t);
void spec_free(struct rpt_spec *s);
/* Collapse "//", "/./" and "/../" of the absolute path @p in place. */
void spec_normalize_path(char *p);

/* --------------------------------------------------------------- options */

enum rpt_merge {
	MERGE_LIB = 1u << 0,
	MERGE_CPU = 1u << 1,
	MERGE_TID = 1u << 2,
	MERGE_TGID = 1u << 3,
	MERGE_UNITMASK = 1u << 4,
	MERGE_CGROUP = 1u << 5, /* issue 20: the --separate=cgroup split */
	MERGE_ALL = 0x3f,
};

enum rpt_sort { SORT_SAMPLE, SORT_SYMBOL, SORT_IMAGE, SORT_VMA, SORT_APP };
enum rpt_demangle { DEMANGLE_NONE, DEMANGLE_SMART, DEMANGLE_NORMAL };
/* --demangle=MODE (none, smart, normal) into *@dm; 0 or -EINVAL (opreport_spec.c) */
int spec_parse_demangle(const char *arg, enum rpt_demangle *dm);
enum rpt_format { FMT_TEXT, FMT_XML, FMT_JSON };

struct rpt_opts {
	const char *session_dir;
	const char *cmdline; /* for the XML title */
	unsigned merge;      /* enum rpt_merge */
	bool symbols, details, debug_info, show_address, long_filenames;
	bool global_percent, accumulated, reverse_sort, exclude_dependent;
	double threshold;           /* percent, 0 = off */
	enum rpt_sort sort;         /* first sort key */
	enum rpt_sort sort_keys[5]; /* all keys given to --sort, in order */
	unsigned nsort_keys;
	enum rpt_demangle demangle;
	enum rpt_format format;
	struct strlist include_syms, exclude_syms;
	struct strlist image_path; /* -p: directories searched for binaries by base name */
	const char *root;          /* -R: prefix of every binary's path */
	const char *vmlinux;       /* --vmlinux: the kernel image's symbols and code, or NULL */
	size_t max_classes;        /* classes rs_load accepts; 0: 64 (the columns of a report) */
	struct rpt_spec spec;
};

/* ------------------------------------------------------------ symbols */

/* One symbol, in the key space of its image (file offset, pc - _text, pc - anon_start). */
struct rpt_sym {
	uint64_t start, end; /* [start, end) keys */
	uint64_t vma;        /* address of start as the user sees it */
	const char *name;    /* display name (demangled as asked) */
	const char *file;    /* source file or NULL */
	unsigned line;
};

struct opbfd;

/*
 * What a loader leaves open in a table to answer later questions about its
 * keys (op_bfd.c: the ELF image, for the vma through the containing section
 * and for source lines). The table calls it through these, so that the
 * container calls down into no loader; symtab_free closes it.
 */
struct rpt_symsrc_ops {
	uint64_t (*key_vma)(const void *src, uint64_t key);
	bool (*key_line)(void *src, uint64_t key, const char **file, unsigned *line);
	void (*close)(void *src);
};

/* opreport_symtab.c: the symbols of one image, sorted by key, and what they own */
struct rpt_symtab {
	struct rpt_sym *v;
	size_t n;
	void *src; /* kept open for line numbers and vma of details (ELF images) */
	const struct rpt_symsrc_ops *src_ops;
	uint64_t vma_bias; /* vma = key + bias for kernel / anon images */
	char **strs;       /* owned strings and allocations (symtab_keep) */
	size_t nstrs, capstrs;
};

/* Find the symbol holding @key, or NULL. */
const struct rpt_sym *sym_lookup(const struct rpt_symtab *t, uint64_t key);
/* vma of a key (through the containing section for ELF images). */
uint64_t sym_key_vma(const struct rpt_symtab *t, uint64_t key);
/* file:line of a key, false if unknown */
bool sym_key_line(const struct rpt_symtab *t, uint64_t key, const char **file, unsigned *line);
void symtab_free(struct rpt_symtab *t);
const char *symtab_strdup(struct rpt_symtab *t, const char *s);
/* Keep @mem (malloc'd) until symtab_free; @mem, or NULL (not kept) when out of memory. */
void *symtab_keep(struct rpt_symtab *t, void *mem);
/* Sort, drop duplicates, bound each symbol by the next (or @limit if non-zero). */
void symtab_finish(struct rpt_symtab *t);
/* Attach the loader's open @src, asked through @ops until symtab_free closes it. */
void symtab_set_src(struct rpt_symtab *t, void *src, const struct rpt_symsrc_ops *ops);

/*
 * opreport_ksyms.c: kallsyms snapshot and /tmp/perf-PID.map. 0 or -errno.
 * ksym_load_kernel reads the snapshot from @fd and the module list from
 * @modules_fd (-1: none); it closes both. @kallsyms names @fd in messages.
 */
int ksym_load_kernel(struct rpt_symtab *t, int fd, const char *kallsyms, const char *module,
		     int modules_fd, char *err, size_t err_len);
/*
 * Do the kernel image's symbols @vm (opbfd_load_kernel) agree with the
 * kallsyms snapshot's @ks (ksym_load_kernel, same key space)? Every name
 * both have must be at the same key in both (one of its keys, for a name
 * the kernel has several times), and they must have a name in common.
 * 0, or -EINVAL with the first disagreement in @why (@file names @vm).
 */
int ksym_check_vmlinux(const struct rpt_symtab *ks, const struct rpt_symtab *vm, const char *file,
		       char *why, size_t why_len);
/*
 * Open the JIT map @map as perf does, a little stricter: never through a
 * symbolic link (O_NOFOLLOW), a regular file (O_NONBLOCK: a FIFO does not
 * hang), owned by root or by the user running opreport (the session does
 * not record the uid of the profiled process); a root-owned map must not be
 * group or world writable. Returns the fd, -ENOENT (no map, no message), or
 * -ELOOP / -EINVAL / -EPERM / -errno with the reason in @err.
 */
int ksym_open_perfmap(const char *map, char *err, size_t err_len);
/* Symbols of the perf map read from @fd (closed), named @map in messages. */
int ksym_load_perfmap(struct rpt_symtab *t, int fd, const char *map, uint64_t anon_start, char *err,
		      size_t err_len);

/* op_bfd.c: libbfd. 0 or -errno with a message. */
int opbfd_load(struct rpt_symtab *t, const char *path, enum rpt_demangle dm, bool want_lines,
	       char *err, size_t err_len);
/*
 * --vmlinux: the kernel image @path loaded in the key space of the kernel's
 * samples (key = vma + @slide - @kstart, the session's kernel start), its
 * addresses (symbols, code) moved by @slide (KASLR: see opbfd_kernel_slide);
 * sections below @kstart are left out. 0 or -errno with a message.
 */
int opbfd_load_kernel(struct rpt_symtab *t, const char *path, uint64_t kstart, uint64_t slide,
		      enum rpt_demangle dm, bool want_lines, char *err, size_t err_len);
/*
 * How far the profiled kernel ran from where the image @path is linked
 * (KASLR's slide, modulo 2^64): the session's kernel start @kstart (its
 * _text, else _stext: op_ksyms_text_start) minus the image's _text, else
 * _stext. 0, or -ENOENT (@slide 0) when the image has neither; errors
 * reading @path are left to opbfd_load_kernel.
 */
int opbfd_kernel_slide(const char *path, uint64_t kstart, uint64_t *slide);
/*
 * Can @path be a kernel image: an ELF object whose .text holds code at a
 * kernel address (the upper half of its address space)? 0, or -EINVAL with
 * the reason in @err.
 */
int opbfd_check_vmlinux(const char *path, char *err, size_t err_len);
/*
 * The symbols and lines of the debug file @dpath standing for a binary that
 * is gone or another build now: its sections inside the binary's executable
 * segment @seg (stats/buildids) keyed by the file offsets they had in the
 * binary. 0, or -errno with a message (-EINVAL when @seg is unknown).
 */
int opbfd_load_debug(struct rpt_symtab *t, const char *dpath, const struct op_elf_ids *seg,
		     enum rpt_demangle dm, bool want_lines, char *err, size_t err_len);
/*
 * The separate debug file of build ID @id (@len bytes): DIR/.build-id/xx/
 * rest.debug below the debug directory (/usr/lib/debug, or an archive's),
 * then $DEBUGINFOD_URLS through libdebuginfod when the tools were built
 * with it; each checked to have that build ID. Malloc'd path, or NULL.
 */
char *opbfd_debug_by_id(const uint8_t *id, size_t len);
uint64_t opbfd_key_vma(const struct opbfd *b, uint64_t key);
bool opbfd_key_line(struct opbfd *b, uint64_t key, const char **file, unsigned *line);
void opbfd_close(struct opbfd *b);
/* demangle one name as asked; returns malloc'd string or NULL (use the original) */
char *opbfd_demangle(const char *name, enum rpt_demangle dm);
/*
 * file:line of @key and the function it is in (innermost: an inlined
 * function's own line), from the image's DWARF or its separate debug file's;
 * false when unknown. @func may be NULL. The strings live as long as @b.
 */
bool opbfd_key_func_line(struct opbfd *b, uint64_t key, const char **file, unsigned *line,
			 const char **func);
/*
 * After opbfd_key_func_line found an inlined function: the call site of the
 * level being left (file, line) and the function it is inlined into; call
 * again for the next level out. false at the outermost function.
 */
bool opbfd_inliner(struct opbfd *b, const char **file, unsigned *line, const char **func);
/* The image of an ELF symbol table (opbfd_load), NULL for kernel / perf-map tables */
struct opbfd *opbfd_of(const struct rpt_symtab *t);
/* its libbfd handle (architecture for a disassembler) */
struct bfd *opbfd_bfd(const struct opbfd *b);
/* the key of a vma in a loaded section, false if none holds it */
bool opbfd_vma_key(const struct opbfd *b, uint64_t vma, uint64_t *key);
/*
 * The code bytes at [@key, @key + @len) (cut at the end of its section):
 * malloc'd in *@buf, *@got bytes, the vma of @key in *@vma. 0, -ENOENT (not
 * in a code section), -EIO or -ENOMEM.
 */
int opbfd_code(struct opbfd *b, uint64_t key, uint64_t len, unsigned char **buf, size_t *got,
	       uint64_t *vma);

/* ------------------------------------------------------------ profile */

struct rpt_class {
	char label[96]; /* "TIMER:0", "CPU 1", "tid 1234" */
	char event[64];
	uint64_t count;
	uint32_t um;
	int32_t cpu, tid, tgid; /* -1 when the class does not split on it */
	/* issue 20: the split key ("unknown": a file without one), "" when not split on it */
	char cgroup[OP_CGROUP_PATH_MAX + 1];
};

/* One binary that was sampled (the inverted profile: opened once). */
struct rpt_image {
	enum op_image_kind kind;
	char *path; /* absolute path, kernel name or anon maps name */
	char *file; /* where the binary is read from (-R, -p applied) */
	int32_t tgid;
	uint64_t start, end; /* anon */
	char *display;       /* name as printed */
	struct opd_header hdr;
	bool is_kernel;
	bool syms_loaded, no_syms;
	struct rpt_symtab syms;
	/*
	 * stats/buildids: the profiled binary's build ID and executable
	 * segment (has_bid); the binary found on disk has another (bid_mismatch:
	 * not used for symbols, a debug file with the recorded ID is).
	 */
	bool has_bid, bid_mismatch;
	struct op_elf_ids bid;
};

/* A (sample key, class) -> count record of one group */
struct rpt_sample {
	uint64_t key;
	uint32_t cls;
	uint64_t count;
};

/*
 * The records one sample file gave its group: s[start, start + n), in the
 * file's node order (a node keeps its index for the file's life: a live
 * view compares a file's records with the last read's by position). @id
 * names the file: a hash of its path relative to the session directory.
 * Valid until rsym_build sorts and folds the records.
 */
struct rpt_seg {
	uint64_t id;
	size_t start, n;
};

/* Samples of one image, under one application unless --merge=lib */
struct rpt_group {
	struct rpt_image *img;
	char *app; /* application display path (NULL when merged) */
	char *app_display;
	struct rpt_sample *s;
	size_t n, cap;
	uint64_t *total;     /* per class */
	struct rpt_seg *seg; /* the file each run of s[] came from */
	size_t nseg, capseg;
};

/* A call-graph arc file found by the session walk */
struct rpt_cgfile {
	char *path; /* full path */
	size_t rel; /* offset of the part relative to its session directory */
};

struct rpt_profile {
	char *session_dir;
	char *samples_root; /* <session>/samples; set by rs_load */
	int samples_fd;     /* open on it (-1 before), never through a symbolic link */
	char *dcache;       /* the last directory opened below samples/ (rs_odb_open) */
	int dcache_fd;
	bool no_openat2;       /* openat2() refused: directories opened component by component */
	struct strlist warned; /* entries and perf maps already warned about */
	struct rpt_cgfile *cg_files;
	size_t ncg_files;
	char *samples_dir; /* <session>/samples/<first selected session> */
	char **session_names;
	size_t nsessions;
	struct rpt_class *cls;
	size_t ncls;
	int axis; /* the axis classes differ on, -1 if one class */
	struct rpt_image **imgs;
	size_t nimgs;
	struct rpt_group **groups;
	size_t ngroups;
	uint64_t *total;        /* per class over the selected files */
	uint64_t *global_total; /* per class over all images (for --global-percent) */
	uint32_t cpu_type;
	double cpu_speed;
	bool multiple_apps; /* show the app name column */
	unsigned nwarnings, nskipped;
	/* archive: (oparchive, opgprof) */
	bool keep_files;      /* set before rs_load: fill files */
	struct strlist files; /* the selected sample files (full paths), when keep_files */
	char *session_origin; /* the session directory on the profiled machine (absolute) */
	struct op_buildid_index *bids; /* stats/buildids of each session_names[i] (may be empty) */
	/*
	 * Set before rs_load: each selected sample file (full path, parsed name
	 * with refused image names replaced) goes to this instead of into
	 * groups; 0 or -errno, which stops rs_load. (opexport)
	 */
	int (*file_fn)(void *arg, struct rpt_profile *p, const char *path,
		       const struct op_parsed_name *pn);
	void *file_arg;
};

/* opreport_session.c */
/*
 * Samples of an image whose name oprofiled never writes are counted under
 * this image: a user image whose "path" is not absolute, so never opened.
 */
#define RPT_UNKNOWN_IMAGE "(unknown)"
/*
 * Why @n is not an image name oprofiled writes (a phrase for a warning), or
 * NULL when it is one: a user or kernel path with an empty, "." or ".."
 * component, or one of PATH_MAX bytes or more; a {kern} name "." or "..".
 * Paths from the kernel never have those, and such a path must not be
 * opened (it leaves the directory it names).
 */
const char *rs_image_refused(const struct op_image_name *n);
/*
 * Replace the refused image names of sample file @path (parsed into @pn) with
 * RPT_UNKNOWN_IMAGE, with a warning naming the file for each: its samples
 * still count, under an image that is never looked up on disk.
 */
void rs_refuse_names(const char *path, struct op_parsed_name *pn);
int rs_find_session(const char *opt_dir, char **out, char *err, size_t err_len);
/*
 * Walk the selected sessions below <session>/samples: no symbolic link is
 * followed below the session directory itself; links, FIFOs, sockets,
 * devices and directories nested deeper than any sample-file name are
 * skipped with a warning naming them (and counted in nskipped).
 */
int rs_load(struct rpt_profile *p, const struct rpt_opts *o, char *err, size_t err_len);
/*
 * Open @rel, relative to the first selected session directory
 * ("stats/kallsyms"), never through a symbolic link: a regular file, or a
 * directory with O_DIRECTORY in @flags; opened O_NONBLOCK (a FIFO is found
 * without hanging). Returns the fd, -ENOENT quietly, or another -errno after
 * a warning (once per entry) naming what was found there.
 */
int rs_open_session_file(struct rpt_profile *p, const char *rel, int flags);
/* Has the relative path @rel an empty, "." or ".." component? */
bool rs_path_has_dot(const char *rel);
/*
 * odb_open(ODB_RDONLY) of the sample file @path found by the walk, through
 * directories opened without following a symbolic link (one kept open for
 * the next file). 0 or -errno with a message in @err, as odb_open.
 */
int rs_odb_open(struct rpt_profile *p, odb_t *db, const char *path, char *err, size_t err_len);
void rs_warn_stats(struct rpt_profile *p);
/*
 * The profile's image @n, added without samples when only arcs or stacks
 * name it (its file found as a sampled image's is: --root, --image-path,
 * archive:). NULL on ENOMEM.
 */
struct rpt_image *rs_image_add(struct rpt_profile *p, const struct rpt_opts *o,
			       const struct op_image_name *n);
/*
 * The stats/ counters of the first selected session: samples received
 * (total_samples) and lost (not attributed, plus those the kernel dropped).
 * 0, or -EINVAL when a file was damaged (warned about; it counts 0).
 */
int rs_stats(struct rpt_profile *p, uint64_t *received, uint64_t *lost);
/* FNV-1a of the string @s: the hash of names in the report tools' tables */
uint64_t rpt_str_hash(const char *s);
void rs_free(struct rpt_profile *p);
const char *rs_cpu_name(uint32_t cpu_type);

/* opreport_symbols.c: resolve every group's samples to symbols */
struct rpt_symrow {
	const struct rpt_group *g;
	const struct rpt_sym *sym; /* NULL: "(no symbols)" */
	uint64_t *count;           /* per class */
	struct rpt_sample *det;    /* details: per key, sorted by key */
	size_t ndet;
};

struct rpt_rows {
	struct rpt_symrow *v;
	size_t n;
	size_t ncls;
};

int rsym_build(struct rpt_profile *p, const struct rpt_opts *o, struct rpt_rows *rows);
void rsym_sort(struct rpt_rows *rows, const struct rpt_opts *o);
void rsym_free(struct rpt_rows *rows);
/* Load @img's symbols once (libbfd, kallsyms snapshot or perf map); for opreport_callgraph.c */
void rsym_load_image(struct rpt_profile *p, const struct rpt_opts *o, struct rpt_image *img);

/* opreport_output.c */
int out_report(FILE *f, struct rpt_profile *p, const struct rpt_opts *o, struct rpt_rows *rows);
const char *out_image_name(const struct rpt_image *img, bool long_names, char *buf, size_t len);

/* ------------------------------------------------------ XML and JSON text */

/*
 * @s as XML character data or attribute text (without the quotes), by
 * lib/op_xml.c's op_xml_put: & < > " ' as entities; tab, newline and
 * carriage return as &#9; &#10; &#13; (an attribute keeps them); bytes that
 * are not UTF-8, other C0 controls, U+FFFE and U+FFFF (which XML cannot
 * carry) as &#xfffd;. Returns the bytes written.
 */
size_t txt_put_xml(FILE *f, const char *s);
/*
 * @s as a whole JSON string, quotes included: " and \ escaped, C0 controls
 * as \u00XX, bytes that are not UTF-8 as \ufffd. Returns the bytes written.
 */
size_t txt_put_json(FILE *f, const char *s);

/* ------------------------------------------ report heads (opreport_output.c) */

/* The text header: CPU, the counted events (or the timer), the class lines. */
void out_text_header(FILE *f, const struct rpt_profile *p);
/*
 * <?xml?>, <profile ...> (left open), <options/>, <setup> and <classes> of
 * @p; @base (or NULL) adds basesession="" to <options> (differential).
 */
void out_xml_head(FILE *f, const struct rpt_profile *p, const struct rpt_opts *o,
		  const struct rpt_profile *base);
/*
 * "{", then "schema" (@schema), "version" 1, "session", "cpu", "class_axis"
 * and "classes" of @p; the object is left open after the "classes" array.
 */
void out_json_head(FILE *f, const struct rpt_profile *p, const char *schema);

/* ------------------------------------------ differential (opreport_diff.c) */

/* what a profile-specification word of "[shared] { first } { second }" is */
enum rdiff_word { RDIFF_SHARED, RDIFF_FIRST, RDIFF_SECOND, RDIFF_BRACE };
/*
 * Sort the words @w[0..@n) into @side. "{" and "}" are braces only as whole
 * words. Returns 0 when there is no brace (an ordinary report), 1 for two
 * non-empty braced profiles, -EINVAL with a message naming the word or the
 * side in @err (nested, unbalanced, empty, one or three profiles).
 */
int rdiff_split(char *const *w, size_t n, enum rdiff_word *side, char *err, size_t err_len);
/*
 * The relative change of a share, in percent: 100 * (B% - A%) / A% with
 * A% = @ca / @ta and B% = @cb / @tb; +INFINITY when A% is 0 and B% is not,
 * 0 when both are 0.
 */
double rdiff_pct(uint64_t ca, uint64_t ta, uint64_t cb, uint64_t tb);

/* A row of a differential report: one key, what each side (0 first, 1 second) has of it */
struct rdiff_ent {
	char *image;                     /* key: base name of the image */
	char *app;                       /* key: base name of the application, "" if none */
	char *name;                      /* key: symbol name, "" for an image row */
	bool in[2];                      /* the side has the key */
	uint64_t *count[2];              /* per class, summed over the side's rows */
	const struct rpt_symrow *row[2]; /* its largest row (symbol rows), or NULL */
	const struct rpt_group *grp[2];  /* its group, or NULL */
};

struct rdiff {
	struct rdiff_ent *v;
	size_t n, cap;
	size_t ncls; /* set before adding */
};

/* Add the symbol rows / the images (groups) of one side. 0 or -ENOMEM. */
int rdiff_add_rows(struct rdiff *d, int side, const struct rpt_rows *rows);
int rdiff_add_images(struct rdiff *d, int side, const struct rpt_profile *p);
/* Merge the entries of equal key (image, app, name): counts summed per side. */
void rdiff_fold(struct rdiff *d);
/* --sort keys; "sample" is the second profile's samples, then the first's. */
void rdiff_sort(struct rdiff *d, const struct rpt_opts *o);
void rdiff_free(struct rdiff *d);
/*
 * The differential report of @pa/@ra (first) against @pb/@rb (second), in
 * @o->format; symbol rows with @o->symbols, else image rows. 0, or -errno
 * after a message on stderr (classes that differ, out of memory).
 */
int rdiff_report(FILE *f, struct rpt_profile *pa, const struct rpt_rows *ra, struct rpt_profile *pb,
		 const struct rpt_rows *rb, const struct rpt_opts *o);

/* ------------------------------------------------------------ archive */

/*
 * archive:DIR (oparchive's layout, as OProfile's): the session directory
 * at DIR/<its absolute path>, every binary at DIR/<its absolute path>, a
 * separate debug file at DIR/<its absolute path> (build-id under
 * DIR/usr/lib/debug) and at DIR/<binary's directory>/.debug/<debuglink>.
 * rs_load reads such a session when the spec holds archive:, looking
 * binaries up below DIR only and never through a symbolic link.
 *
 * Open @rel (absolute path of the profiled machine) below @root, no
 * component a symbolic link, none "." or ".." or empty: the fd (O_RDONLY |
 * @flags, O_NONBLOCK) or -errno (-ELOOP: a link, -EINVAL: a dot component).
 */
int rs_archive_open(const char *root, const char *rel, int flags);

/* op_bfd.c: the directory holding .build-id/ of separate debug files
 * ("/usr/lib/debug" unless an archive says DIR/usr/lib/debug); NULL resets */
int opbfd_set_debug_dir(const char *dir);
/*
 * The separate debug file libbfd finds for the binary @path (build-id, then
 * .gnu_debuglink, each verified), malloc'd, or NULL (none or unreadable);
 * its .gnu_debuglink name in *@link (malloc'd, NULL without) if @link.
 */
char *opbfd_debug_file(const char *path, char **link);

#endif /* OPREPORT_H */
