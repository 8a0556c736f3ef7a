/*
 * op_abi.h - the session `abi` file (OProfile's "key value" description of
 * the type sizes, field offsets and byte order a sample file was written
 * with) and the conversion of one sample file from such a foreign ABI to
 * this machine's layout (lib/odb.h), for opimport.
 * SPDX-License-Identifier: MIT
 *
 * OProfile facts (libabi/op_abi.c, libabi/opimport.cpp; notes/oprofile-format.md 3.2):
 * the file lists sizeof_* of the basic and odb types, offsetof_* of the
 * header, descriptor and node fields, and little_endian 0/1. A foreign file
 * is read field by field at the offsets and sizes it gives: the header, the
 * descriptor's size and current_size, then nodes 1 .. current_size-1 of the
 * node array (node 0 is unused); the hash table is not read, the nodes are
 * re-inserted in their order, so the native file chains them as a native
 * writer would have.
 */
#ifndef OP_ABI_H
#define OP_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "odb.h"
#include "op_header.h"

/* The keys OProfile 1.x writes, in its order, then little_endian. */
enum op_abi_key {
	OP_ABI_SIZEOF_DOUBLE,
	OP_ABI_SIZEOF_U64,
	OP_ABI_SIZEOF_U8,
	OP_ABI_SIZEOF_U32,
	OP_ABI_SIZEOF_INT,
	OP_ABI_SIZEOF_UNSIGNED_INT,
	OP_ABI_SIZEOF_ODB_KEY_T,
	OP_ABI_SIZEOF_ODB_INDEX_T,
	OP_ABI_SIZEOF_ODB_VALUE_T,
	OP_ABI_SIZEOF_ODB_NODE_NR_T,
	OP_ABI_SIZEOF_ODB_DESCR_T,
	OP_ABI_SIZEOF_ODB_NODE_T,
	OP_ABI_SIZEOF_HEADER,
	OP_ABI_OFF_NODE_KEY,
	OP_ABI_OFF_NODE_VALUE,
	OP_ABI_OFF_NODE_NEXT,
	OP_ABI_OFF_DESCR_SIZE,
	OP_ABI_OFF_DESCR_CURRENT_SIZE,
	OP_ABI_OFF_HEADER_MAGIC,
	OP_ABI_OFF_HEADER_VERSION,
	OP_ABI_OFF_HEADER_CPU_TYPE,
	OP_ABI_OFF_HEADER_CTR_EVENT,
	OP_ABI_OFF_HEADER_CTR_UM,
	OP_ABI_OFF_HEADER_CTR_COUNT,
	OP_ABI_OFF_HEADER_IS_KERNEL,
	OP_ABI_OFF_HEADER_CPU_SPEED,
	OP_ABI_OFF_HEADER_MTIME,
	OP_ABI_OFF_HEADER_CG_TO_IS_KERNEL,
	OP_ABI_OFF_HEADER_ANON_START,
	OP_ABI_OFF_HEADER_CG_TO_ANON_START,
	OP_ABI_LITTLE_ENDIAN,
	OP_ABI_NR_KEYS
};

/* Largest value a key may have (sizes and offsets of structures this small). */
#define OP_ABI_MAX_VALUE 65536
/* Largest abi file read. */
#define OP_ABI_MAX_FILE 65536

struct op_abi {
	int32_t val[OP_ABI_NR_KEYS]; /* -1: the key is absent */
	unsigned nr_unknown;         /* lines with other keys (older OProfiles' sizeof_time_t...) */
};

/* The key's name as the file spells it ("sizeof_u32"), NULL out of range. */
const char *op_abi_key_name(enum op_abi_key key);

/* This machine's ABI: the values op_write_abi() writes. */
void op_abi_native(struct op_abi *abi);

/*
 * Parse an abi file's text (@len bytes, need not be NUL-terminated): lines
 * "KEY VALUE" (blanks around and between, blank lines allowed), KEY of
 * [A-Za-z0-9_], VALUE decimal 0..OP_ABI_MAX_VALUE. Keys this library does not
 * know are counted (nr_unknown) and otherwise ignored, as OProfile keeps
 * them without using them. Returns 0, or -EINVAL with
 * "<subject>:<line>: <defect>" in @err (a bad line, a repeated key, a NUL
 * byte). Absent keys are not an error here: see op_abi_check().
 */
int op_abi_parse(struct op_abi *abi, const char *text, size_t len, const char *subject, char *err,
		 size_t err_len);

/*
 * Read and parse the abi file @path relative to @dirfd (AT_FDCWD allowed),
 * a regular file of at most OP_ABI_MAX_FILE bytes. Returns 0 or -errno with
 * a message naming @path in @err.
 */
int op_abi_read(struct op_abi *abi, int dirfd, const char *path, char *err, size_t err_len);

/*
 * Format @abi as an abi file (the present keys in enum order, then nothing
 * for the absent ones) into @buf. Returns the length, or -ENOBUFS.
 */
int op_abi_format(const struct op_abi *abi, char *buf, size_t len);

/* Same keys present with the same values (unknown keys are not compared). */
bool op_abi_equal(const struct op_abi *a, const struct op_abi *b);

/*
 * Can a sample file be read with @abi? Every key the conversion uses is
 * present; basic sizes are 1..8 bytes (double 4 or 8), every field lies
 * inside its structure, the magic's 4 bytes inside the header, little_endian
 * is 0 or 1. Returns 0, or -EINVAL with "<subject>: <key>: <defect>" in @err.
 */
int op_abi_check(const struct op_abi *abi, const char *subject, char *err, size_t err_len);

/* One sample file in native form: its header and its used nodes, in file order. */
struct op_abi_sample {
	struct opd_header header;
	uint32_t size;          /* the foreign descriptor's node capacity */
	size_t nr;              /* used nodes (current_size - 1) */
	struct odb_node *nodes; /* nr nodes (next is 0), malloc'd */
};

/*
 * Decode the sample file @buf/@len written with @abi (op_abi_check() must
 * have passed). Every read is bounds-checked: the file must be exactly
 * sizeof_struct_opd_header + sizeof_odb_descr_t + size * (sizeof_odb_node_t
 * + sizeof_odb_index_t) bytes, with 1 <= current_size <= size; a field value
 * too wide for the native field (a u32 field over 2^32-1, a count over
 * UINT32_MAX) is refused; magic and version must be OProfile 1.x's. Returns
 * 0, -ENOMEM, or -EINVAL with "<subject>: <defect>" in @err; @out is then
 * empty (op_abi_sample_free() on it is harmless).
 */
int op_abi_decode(const struct op_abi *abi, const void *buf, size_t len, const char *subject,
		  struct op_abi_sample *out, char *err, size_t err_len);

/*
 * The inverse, for tests and generators: encode @s as a file in @abi's
 * layout (hash table and chains rebuilt for s->size buckets, which must be a
 * power of two > s->nr). Returns the length written to a malloc'd *@buf, or
 * -EINVAL (a value does not fit its foreign field, or the layout is not
 * checked) / -ENOMEM.
 */
long op_abi_encode(const struct op_abi *abi, const struct op_abi_sample *s, uint8_t **buf);

void op_abi_sample_free(struct op_abi_sample *s);

/* op_abi_write_sample() flags */
#define OP_ABI_NOREPLACE 1u /* fail with -EEXIST when @path exists */

/*
 * Write @s as a native sample file @path relative to @dirfd: through lib/odb
 * into a temporary name beside it, renamed over @path (or, with
 * OP_ABI_NOREPLACE, only if @path does not exist) once complete, so @path is
 * never seen half written. Equal keys are summed (saturating at UINT32_MAX,
 * counted in *@saturated if not NULL). Returns 0 or -errno with a message
 * naming @path in @err.
 */
int op_abi_write_sample(const struct op_abi_sample *s, int dirfd, const char *path, unsigned flags,
			uint64_t *saturated, char *err, size_t err_len);

#endif /* OP_ABI_H */
