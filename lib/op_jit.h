/*
 * op_jit.h - the JIT code formats, one reading of them for the daemon's jit
 * plugin, the tools and the fuzzers, and one writing (libopagent): perf's
 * jitdump (jit-PID.dump, OProfile's PID.dump from libopagent) and perf maps
 * (/tmp/perf-PID.map). Bounded, hostile-input safe; every defect counted.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_JIT_H
#define OP_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------------ */
/* jitdump on disk (perf's tools/perf/Documentation/jitdump-specification.txt) */
/* ------------------------------------------------------------------ */

/*
 * The file is written in the writer's byte order; the magic tells which.
 * OP_JITDUMP_MAGIC read as a native u32 is a same-endian file,
 * OP_JITDUMP_MAGIC_SWAPPED an other-endian one (a dump copied from a
 * big-endian host): the reader byte-swaps every field of such a file.
 */
#define OP_JITDUMP_MAGIC 0x4A695444u         /* "JiTD" */
#define OP_JITDUMP_MAGIC_SWAPPED 0x4454694Au /* the same, other endian */
#define OP_JITDUMP_VERSION 1u
#define OP_JITDUMP_FLAGS_ARCH_TIMESTAMP (1ull << 0)

/* File header, 40 bytes; total_size may be larger (later fields skipped). */
struct op_jitdump_header {
	uint32_t magic;
	uint32_t version;
	uint32_t total_size;
	uint32_t elf_mach; /* e_machine of the code (EM_X86_64 ...) */
	uint32_t pad1;
	uint32_t pid;
	uint64_t timestamp;
	uint64_t flags;
};

/* Record ids. perf readers skip ids they do not know (with a warning). */
enum op_jitdump_id {
	OP_JIT_CODE_LOAD = 0,
	OP_JIT_CODE_MOVE = 1,
	OP_JIT_CODE_DEBUG_INFO = 2,
	OP_JIT_CODE_CLOSE = 3,
	OP_JIT_CODE_UNWINDING_INFO = 4,
	/*
	 * oprofile-ng extension, written by libopagent for
	 * op_unload_native_code(): struct op_jitdump_unload. The id is far
	 * from perf's (0..4, JIT_CODE_MAX 5) so that a future perf record
	 * never collides with it; perf itself skips it as unknown.
	 */
	OP_JIT_CODE_UNLOAD = 0x4f500001u, /* "OP" 1 */
};

/* Every record starts with this, 16 bytes; total_size includes it. */
struct op_jitdump_rec_header {
	uint32_t id;
	uint32_t total_size;
	uint64_t timestamp;
};

/* LOAD, 56 bytes, then name (NUL-terminated), then code_size code bytes
 * ending at total_size (a writer may pad the name with NULs to align). */
struct op_jitdump_load {
	struct op_jitdump_rec_header p;
	uint32_t pid, tid;
	uint64_t vma;
	uint64_t code_addr;
	uint64_t code_size;
	uint64_t code_index;
};

/* MOVE, 64 bytes */
struct op_jitdump_move {
	struct op_jitdump_rec_header p;
	uint32_t pid, tid;
	uint64_t vma;
	uint64_t old_code_addr;
	uint64_t new_code_addr;
	uint64_t code_size;
	uint64_t code_index;
};

/* DEBUG_INFO, 32 bytes, then nr_entry entries: {u64 addr; u32 lineno;
 * u32 discrim; char filename[] NUL-terminated}. A filename of the single
 * byte 0xff means "the previous entry's" (perf's jvmti agent writes so). */
struct op_jitdump_debug_info {
	struct op_jitdump_rec_header p;
	uint64_t code_addr;
	uint64_t nr_entry;
};

/* UNWINDING_INFO, 40 bytes then data: skipped by the reader (counted). */
struct op_jitdump_unwinding_info {
	struct op_jitdump_rec_header p;
	uint64_t unwinding_size;
	uint64_t eh_frame_hdr_size;
	uint64_t mapped_size;
};

/* UNLOAD (extension), 32 bytes: the code loaded at vma is gone from
 * timestamp on (op_unload_native_code). */
struct op_jitdump_unload {
	struct op_jitdump_rec_header p;
	uint32_t pid, tid;
	uint64_t vma;
};

_Static_assert(sizeof(struct op_jitdump_header) == 40, "jitdump header is 40 bytes");
_Static_assert(sizeof(struct op_jitdump_load) == 56, "jitdump LOAD is 56 bytes");
_Static_assert(sizeof(struct op_jitdump_move) == 64, "jitdump MOVE is 64 bytes");
_Static_assert(sizeof(struct op_jitdump_debug_info) == 32, "jitdump DEBUG_INFO is 32 bytes");
_Static_assert(sizeof(struct op_jitdump_unload) == 32, "jitdump UNLOAD is 32 bytes");

/* a DEBUG_INFO entry's fixed part: addr, lineno, discrim */
#define OP_JITDUMP_DEBUG_ENTRY_FIXED 16u

/* ------------------------------------------------------------------ */
/* what a reader found wrong                                          */
/* ------------------------------------------------------------------ */

/*
 * Defects of the input, counted by the readers (jitdump and perf map share
 * the struct; each reader bumps the fields that apply to it). A caller may
 * sum several readers' counts into one (op_jit_errors_add) for its stats.
 * Fatal defects (the bad_* of the header, record_size) stop the reader:
 * nothing after that point of the stream can be framed.
 */
struct op_jit_errors {
	/* jitdump header (fatal) */
	uint64_t bad_magic;       /* neither byte order of "JiTD" */
	uint64_t bad_version;     /* version != 1 */
	uint64_t bad_header_size; /* total_size < 40 or > OP_JIT_MAX_HEADER */
	/* jitdump records */
	uint64_t record_size;    /* total_size < 16 or > the reader's max (fatal) */
	uint64_t record_short;   /* total_size below the kind's fixed part: skipped */
	uint64_t code_size;      /* LOAD code_size beyond the record: skipped */
	uint64_t unknown_record; /* an id the reader does not know: skipped */
	uint64_t after_close;    /* records after CLOSE (still delivered) */
	uint64_t debug_count;    /* DEBUG_INFO nr_entry larger than the record holds */
	uint64_t debug_entry;    /* an entry cut by the end of the record */
	/* names (jitdump and perf map) */
	uint64_t name_unterminated; /* no NUL before the end of its field */
	uint64_t name_escaped;      /* control bytes shown as \xNN */
	uint64_t name_truncated;    /* longer than OP_JIT_NAME_MAX: cut */
	uint64_t name_empty;        /* "" (named "[unnamed]" or the line refused) */
	/* perf map lines */
	uint64_t map_syntax;    /* not "START SIZE name" in hex */
	uint64_t map_overflow;  /* START + SIZE beyond 2^64 */
	uint64_t map_long_line; /* longer than OP_PERFMAP_LINE_MAX: skipped */
	uint64_t map_nul;       /* a NUL byte inside a line: refused */
	/* incomplete tail at fini (a writer killed mid-record, or still live) */
	uint64_t truncated_tail;
};

/* @to += @from, field by field */
void op_jit_errors_add(struct op_jit_errors *to, const struct op_jit_errors *from);
/* the sum of all fields */
uint64_t op_jit_errors_total(const struct op_jit_errors *e);
/*
 * Print the non-zero fields as "name=N name=N" into @buf (always
 * NUL-terminated); returns the length written. For a stats line or a
 * warning naming the file.
 */
size_t op_jit_errors_format(const struct op_jit_errors *e, char *buf, size_t len);

/* bounds: a name longer than this (after escaping) is cut */
#define OP_JIT_NAME_MAX 4096u
/* a header larger than this is refused */
#define OP_JIT_MAX_HEADER 4096u
/* default record size limit (init may lower or raise it) */
#define OP_JIT_MAX_RECORD_DEFAULT (64u << 20)

/* ------------------------------------------------------------------ */
/* jitdump reader                                                     */
/* ------------------------------------------------------------------ */

enum op_jit_kind {
	OP_JIT_LOAD,
	OP_JIT_MOVE,
	OP_JIT_DEBUG_INFO,
	OP_JIT_CLOSE,
	OP_JIT_UNLOAD,
	OP_JIT_NR_KINDS,
};

/* one DEBUG_INFO entry: source line of the code from addr on */
struct op_jit_line {
	uint64_t addr;
	uint32_t lineno;
	uint32_t discrim;
	const char *filename; /* escaped, NUL-terminated; never NULL */
};

/*
 * One complete record, host byte order. Pointers are valid during the
 * callback only (they point into the reader's or the caller's buffer).
 */
struct op_jit_rec {
	enum op_jit_kind kind;
	uint64_t timestamp; /* the writer's clock: see op_jitdump_info.flags */
	uint64_t offset;    /* of the record in the stream (after the header) */
	union {
		struct { /* LOAD */
			uint32_t pid, tid;
			uint64_t vma, code_addr, code_size, code_index;
			const char *name;    /* escaped, NUL-terminated, never empty */
			const uint8_t *code; /* code_size bytes */
		} load;
		struct { /* MOVE */
			uint32_t pid, tid;
			uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
		} move;
		struct { /* DEBUG_INFO */
			uint64_t code_addr;
			size_t nr_entry; /* entries actually in the record */
			const struct op_jit_line *entries;
		} debug;
		struct { /* UNLOAD (libopagent's op_unload_native_code) */
			uint32_t pid, tid;
			uint64_t vma;
		} unload;
	};
};

/* the file header, host byte order, valid once op_jitdump_reader_header() says so */
struct op_jitdump_info {
	uint32_t version;
	uint32_t elf_mach;
	uint32_t pid;
	uint64_t timestamp;
	/* OP_JITDUMP_FLAGS_ARCH_TIMESTAMP: timestamps are the CPU's cycle
	 * counter (TSC), not CLOCK_MONOTONIC ns; the daemon samples with
	 * CLOCK_MONOTONIC and cannot compare them */
	uint64_t flags;
	bool swapped; /* written in the other byte order */
};

/*
 * Called once per complete record in stream order. Return 0 to go on, any
 * other value to stop: op_jitdump_reader_feed() then returns it, having
 * consumed the record.
 */
typedef int op_jit_rec_fn(void *priv, const struct op_jit_rec *rec);

struct op_jitdump_reader; /* opaque */

/*
 * A reader of one jitdump stream. @max_record bounds a record's size (0:
 * OP_JIT_MAX_RECORD_DEFAULT); bigger records are a fatal record_size
 * error. Returns NULL (errno ENOMEM) on allocation failure.
 */
struct op_jitdump_reader *op_jitdump_reader_init(op_jit_rec_fn *fn, void *priv, uint32_t max_record);

/*
 * Feed the next @len bytes of the stream (any split: the reader keeps an
 * incomplete record, up to max_record bytes, until the rest comes). Calls
 * fn for each complete record. Returns 0, fn's non-zero value, or -EINVAL
 * once the stream cannot be framed (bad header, bad record size: see
 * op_jitdump_reader_errors; every later call returns -EINVAL too), or
 * -ENOMEM. An incomplete tail is not an error: feed the rest later (a live
 * file read again from where the last read stopped).
 */
int op_jitdump_reader_feed(struct op_jitdump_reader *r, const void *buf, size_t len);

/* the header once it was read whole and valid, else NULL */
const struct op_jitdump_info *op_jitdump_reader_header(const struct op_jitdump_reader *r);

/*
 * Stream offset up to which everything was consumed (header and complete
 * records); bytes after it are held as an incomplete record.
 */
uint64_t op_jitdump_reader_offset(const struct op_jitdump_reader *r);

/* records delivered per kind, and skipped UNWINDING_INFO records */
uint64_t op_jitdump_reader_count(const struct op_jitdump_reader *r, enum op_jit_kind kind);
uint64_t op_jitdump_reader_skipped_unwinding(const struct op_jitdump_reader *r);

/* whether the stream is broken (a fatal error was counted) */
bool op_jitdump_reader_broken(const struct op_jitdump_reader *r);

const struct op_jit_errors *op_jitdump_reader_errors(const struct op_jitdump_reader *r);

/*
 * Free the reader. An incomplete record still held counts as
 * truncated_tail in @errs_out when given (the reader's errors are copied
 * there first). NULL is ignored.
 */
void op_jitdump_reader_fini(struct op_jitdump_reader *r, struct op_jit_errors *errs_out);

/*
 * Read the whole jitdump file @path (O_NOFOLLOW; a regular file) with a new
 * reader: a convenience for tools and tests. Returns 0 or -errno (the open
 * or read failure, -EINVAL when the stream is broken, fn's value); @errs
 * (optional) gets the reader's counts including a truncated tail.
 */
int op_jitdump_read_file(const char *path, op_jit_rec_fn *fn, void *priv,
			 struct op_jitdump_info *info, struct op_jit_errors *errs);

/* ------------------------------------------------------------------ */
/* perf map                                                           */
/* ------------------------------------------------------------------ */

/* longest line accepted (name included) */
#define OP_PERFMAP_LINE_MAX 8192u

/* one "START SIZE name" line (hex, optional 0x; the name is the rest of the
 * line, blanks included, trailing "\r" dropped) */
struct op_perfmap_entry {
	uint64_t start;
	uint64_t size;
	const char *name; /* escaped, NUL-terminated, not empty */
	uint64_t lineno;  /* 1-based line of the map */
};

/*
 * Parse one line of @len bytes (no '\n'; a trailing '\r' is dropped) into
 * @out, the name escaped into @name_buf (@name_len bytes). Returns 0, or
 * -EINVAL with the matching @err counter bumped (the caller skips the
 * line). @err may be NULL. Blank lines give -ENODATA and count nothing.
 */
int op_perfmap_parse_line(const char *line, size_t len, struct op_perfmap_entry *out,
			  char *name_buf, size_t name_len, struct op_jit_errors *err);

typedef int op_perfmap_fn(void *priv, const struct op_perfmap_entry *e);

struct op_perfmap_reader; /* opaque */

struct op_perfmap_reader *op_perfmap_reader_init(op_perfmap_fn *fn, void *priv);
/*
 * Feed the next @len bytes of the map; fn is called once per good complete
 * line (bad ones are counted and skipped). Returns 0, fn's non-zero value,
 * or -ENOMEM. An unterminated last line is held until more comes (a live
 * map) or until fini, which parses it (a map whose writer died mid-line
 * counts it bad if it does not parse).
 */
int op_perfmap_reader_feed(struct op_perfmap_reader *r, const void *buf, size_t len);
/* bytes consumed: everything up to the last complete line */
uint64_t op_perfmap_reader_offset(const struct op_perfmap_reader *r);
/* good lines delivered */
uint64_t op_perfmap_reader_count(const struct op_perfmap_reader *r);
const struct op_jit_errors *op_perfmap_reader_errors(const struct op_perfmap_reader *r);
/*
 * Parse a held last line (when @flush: the writer is gone), copy the
 * errors into @errs_out (optional) and free. Returns fn's value or 0.
 */
int op_perfmap_reader_fini(struct op_perfmap_reader *r, bool flush, struct op_jit_errors *errs_out);

/* ------------------------------------------------------------------ */
/* names                                                              */
/* ------------------------------------------------------------------ */

/*
 * Copy @len bytes of @in into @out (@out_len > 0 bytes, always
 * NUL-terminated), stopping at the first NUL, with control bytes (0x01-0x1f,
 * 0x7f) and '\\' written as "\xNN" so that a name never breaks a line or a
 * terminal. Bumps err->name_escaped / name_truncated / name_empty (err may
 * be NULL); an empty name becomes "[unnamed]". Returns the length written.
 */
size_t op_jit_escape_name(const char *in, size_t len, char *out, size_t out_len,
			  struct op_jit_errors *err);

#endif /* OP_JIT_H */
