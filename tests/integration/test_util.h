/*
 * test_util.h - helpers shared by the integration tests' checkers
 * (hot_check, sp_dump, tests/data/report/mkfixture): file offsets of ELF
 * symbols and sections, and a walk over the sample files of a session.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_TESTS_TEST_UTIL_H
#define OP_TESTS_TEST_UTIL_H

#include <stdbool.h>
#include <stdint.h>

#define TU_SYMTAB 1u /* .symtab */
#define TU_DYNSYM 2u /* .dynsym */

/*
 * File offsets [*start, *end) of the first symbol @name (only STT_FUNC ones
 * if @func_only) in the symbol tables @tables (TU_*) of the 64-bit ELF file
 * @path. Returns 0, -errno when the file cannot be read, -ENOEXEC when it is
 * not a 64-bit ELF file, -ENOENT when no such symbol is defined.
 */
int tu_elf_sym(const char *path, const char *name, unsigned tables, bool func_only,
	       uint64_t *start, uint64_t *end);

/* File offset of section @name of the 64-bit ELF @path; returns as tu_elf_sym. */
int tu_elf_section(const char *path, const char *name, uint64_t *off);

/*
 * Call @fn(dirfd, name, relpath) for every regular file below the directory
 * @dfd (relpath starts at @rel, "" at the top); links are not followed.
 * Takes @dfd over. Returns 0, or -errno of the first directory it could
 * not read (the walk goes on with the others).
 */
int tu_walk(int dfd, const char *rel, void (*fn)(int dfd, const char *name, const char *rel));

#endif /* OP_TESTS_TEST_UTIL_H */
