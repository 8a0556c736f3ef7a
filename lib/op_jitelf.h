/*
 * op_jitelf.h - JIT code as an ELF image (OProfile's opjitconv step): one
 * file per process and code generation with .text (the code bytes, zeros
 * where a perf map gave no code), one FUNC symbol per JIT function and,
 * when lines were given, a DWARF 2 .debug_line with the minimal
 * .debug_info/.debug_abbrev libbfd needs to find them. Written with
 * <elf.h> alone: the daemon's plugins may link it (no libbfd).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_JITELF_H
#define OP_JITELF_H

#include <stddef.h>
#include <stdint.h>

/*
 * .text starts at this file offset and at this virtual address, so a
 * function at text offset T has key (file offset, what sample files hold)
 * and address OP_JITELF_TEXT_OFFSET + T: a key is fixed as soon as the
 * function has its place, before the image is (re)written.
 */
#define OP_JITELF_TEXT_OFFSET 0x1000u
/* bounds the writer refuses beyond (-EFBIG): .text and the line table */
#define OP_JITELF_MAX_TEXT (1ull << 30)
#define OP_JITELF_MAX_LINES (16u << 20)

/* a source line of the code from @off (bytes into its function) on */
struct op_jitelf_line {
	uint32_t off;
	uint32_t line;
	uint32_t file; /* index into op_jitelf_image.files */
};

struct op_jitelf_func {
	const char *name;                   /* symbol name, NUL-terminated, not empty */
	uint64_t off;                       /* in .text; functions sorted by off, not overlapping */
	uint64_t size;                      /* > 0 */
	const uint8_t *code;                /* size bytes, or NULL: zeros */
	const struct op_jitelf_line *lines; /* sorted by off, or NULL */
	size_t nr_lines;
};

struct op_jitelf_image {
	uint16_t machine;   /* e_machine (EM_X86_64 ...); 0: the host's */
	uint64_t text_size; /* >= every func's off + size */
	const struct op_jitelf_func *funcs;
	size_t nr_funcs;
	const char *const *files; /* source file names of the lines */
	size_t nr_files;
	const char *cu_name; /* DW_AT_name of the one compile unit, e.g. "jit-1234" */
};

/*
 * Write @img into @fd (an empty regular file, written from offset 0; code
 * that was not given is left as a hole). 0, or -errno with @err saying
 * what was wrong (-EINVAL: a function outside .text, unsorted or
 * overlapping, an empty name, a line of an unknown file; -EFBIG: beyond
 * the bounds above; an I/O error of the write).
 */
int op_jitelf_write(int fd, const struct op_jitelf_image *img, char *err, size_t err_len);

#endif /* OP_JITELF_H */
