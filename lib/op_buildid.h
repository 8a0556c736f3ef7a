/*
 * op_buildid.h - GNU build IDs: the note of an ELF file read from an open fd
 * (program headers, else section headers; bounded reads, hostile input
 * safe), and the session's build-id index, stats/buildids, that the daemon
 * writes (one line per sampled image) and the tools read to tell the binary
 * that was profiled from the one found on disk. No libbfd.
 * SPDX-License-Identifier: MIT
 *
 * The index, <session>/stats/buildids (OProfile's tools ignore it), text:
 *
 *   # oprofile-ng build-id index 1: kind build-id size mtime text-offset text-vaddr text-size path
 *   user 62362205807d4e7364557f58d9f3f41c1144f638 16008 1764352000 0x1000 0x1000 0x13d /usr/bin/hot
 *   kernel 5b1c...e9 0 0 0 0 0 vmlinux
 *   user - 2048 1764352000 0 0 0 /opt/no build id/tool
 *
 * kind: "user" or "kernel" (a kernel image: vmlinux or a module's name);
 * build-id: lower-case hex of the note's bytes, "-" when the image has none
 * or could not be read; size, mtime: decimal st_size, st_mtime of the file
 * (0 for kernel images); text-*: hex, the first executable PT_LOAD's file
 * offset, virtual address and file size (0 0 0 when unknown): what a debug
 * file alone, whose segments no longer say it, needs to place its symbols
 * in the sample files' offset key space. path: the rest of the line, the
 * image as the sample-file names spell it, with "\\" for a backslash,
 * "\n" for a newline and "\xHH" for other control bytes. Lines starting
 * with '#' and empty lines are comments. A later line for a path replaces
 * an earlier one.
 */
#ifndef OP_BUILDID_H
#define OP_BUILDID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* GNU ld writes 8 (xxhash), 16 (md5, uuid) or 20 (sha1) bytes; longer is refused */
#define OP_BUILDID_MAX 64
/* hex + NUL */
#define OP_BUILDID_HEX_MAX (2 * OP_BUILDID_MAX + 1)

/* the index's name in stats/ (op_session_layout.h has stats/) */
#define OP_BUILDID_INDEX "buildids"

/* What the reader takes from an ELF file's headers. */
struct op_elf_ids {
	uint8_t id[OP_BUILDID_MAX];
	size_t id_len;       /* 0: no GNU build-id note */
	uint64_t text_off;   /* first executable PT_LOAD: p_offset */
	uint64_t text_vaddr; /* its p_vaddr */
	uint64_t text_size;  /* its p_filesz (0: no executable PT_LOAD) */
};

/*
 * Read the build ID and the executable segment of the ELF file open on @fd
 * (32/64-bit, either byte order; the fd's offset is not used). At most
 * about 1 MiB is read however large or hostile the file. 0 (with
 * ids->id_len 0 when there is no build-id note), -EINVAL when it is not an
 * ELF file or its headers are inconsistent, -errno of a read.
 */
int op_elf_ids_from_fd(int fd, struct op_elf_ids *ids);

/*
 * The build ID of the ELF file on @fd into @id (OP_BUILDID_MAX bytes),
 * its length in *@len. 0, -ENOENT when the file has no build-id note,
 * -EINVAL when not ELF, -errno.
 */
int op_buildid_from_fd(int fd, uint8_t *id, size_t *len);

/*
 * The build ID in a raw notes blob (/sys/kernel/notes, a module's
 * notes/.note.gnu.build-id: Elf_Nhdr, name, desc, each 4-aligned).
 * 0, -ENOENT when there is none, -EINVAL for a note that overruns @len.
 */
int op_buildid_from_notes(const void *buf, size_t len, uint8_t *id, size_t *id_len);

/* @id as lower-case hex in @out (2 * @len + 1 bytes at least, else cut); returns @out */
char *op_buildid_hex(const uint8_t *id, size_t len, char *out, size_t out_len);
/* parse 2..2*OP_BUILDID_MAX hex digits (whole string); 0 or -EINVAL */
int op_buildid_parse_hex(const char *hex, uint8_t *id, size_t *len);

/* ------------------------------------------------------------- the index */

enum op_buildid_kind { OP_BUILDID_USER, OP_BUILDID_KERNEL };

struct op_buildid_ent {
	char *path; /* unescaped */
	enum op_buildid_kind kind;
	struct op_elf_ids ids;
	uint64_t size, mtime;
};

struct op_buildid_index {
	struct op_buildid_ent *v; /* sorted by path, one entry per path */
	size_t n;
	size_t nbad;        /* lines that did not parse (skipped) */
	unsigned first_bad; /* line number of the first of them */
};

/*
 * One index line for @e (with its '\n') into @buf: the number of bytes it
 * needs, as snprintf (NUL not counted); cut when @len is too small.
 */
size_t op_buildid_format(char *buf, size_t len, const struct op_buildid_ent *e);
/* The comment line that opens the index (with its '\n'). */
extern const char op_buildid_index_header[];

/*
 * Load the index of the session @session_samples_dir (samples/current, a
 * rotated session or an archive's): @dir/stats/buildids, opened without
 * following a symbolic link, a regular file of at most 64 MiB. 0 (bad
 * lines skipped, counted in nbad/first_bad), -ENOENT when the session has
 * no index (older sessions), -ENOMEM, -EINVAL / -errno with the reason in
 * @err.
 */
int op_buildid_index_load(const char *session_samples_dir, struct op_buildid_index *idx, char *err,
			  size_t err_len);
/* The same from an open file (not closed); @name names it in @err. */
int op_buildid_index_read_fd(int fd, const char *name, struct op_buildid_index *idx, char *err,
			     size_t err_len);
/* Parse index text @buf (@len bytes, need not be NUL-terminated) into an empty @idx. */
int op_buildid_index_parse(const char *buf, size_t len, struct op_buildid_index *idx);
/* The entry of @path, or NULL. */
const struct op_buildid_ent *op_buildid_index_find(const struct op_buildid_index *idx,
						   const char *path);
void op_buildid_index_free(struct op_buildid_index *idx);

#endif /* OP_BUILDID_H */
