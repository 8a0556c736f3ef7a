/*
 * op_header.h - struct opd_header, the 72-byte header of an OProfile 1.x
 * sample file (version 0x13), and the session `abi` file.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_HEADER_H
#define OP_HEADER_H

#include <stddef.h>
#include <stdint.h>

#define OPD_MAGIC "DAE\n"
#define OPD_VERSION 0x13

/* op_cpu enum values we use (the full table is OProfile's) */
#define OP_CPU_TIMER 4
#define OP_CPU_X86_64_GENERIC 69

struct opd_header {
	uint8_t magic[4];
	uint32_t version;
	uint32_t cpu_type;
	uint32_t ctr_event;
	uint32_t ctr_um;
	uint32_t ctr_count;
	uint32_t is_kernel;
	uint32_t pad0;
	double cpu_speed;
	uint64_t mtime;
	uint32_t cg_to_is_kernel;
	uint32_t pad1;
	uint64_t anon_start;
	uint64_t cg_to_anon_start;
};

_Static_assert(sizeof(struct opd_header) == 72, "opd_header must be 72 bytes");
_Static_assert(offsetof(struct opd_header, cpu_speed) == 32, "opd_header.cpu_speed at 32");
_Static_assert(offsetof(struct opd_header, mtime) == 40, "opd_header.mtime at 40");
_Static_assert(offsetof(struct opd_header, cg_to_is_kernel) == 48,
	       "opd_header.cg_to_is_kernel at 48");
_Static_assert(offsetof(struct opd_header, anon_start) == 56, "opd_header.anon_start at 56");
_Static_assert(offsetof(struct opd_header, cg_to_anon_start) == 64,
	       "opd_header.cg_to_anon_start at 64");

/* Fill the constant parts of a header (magic, version). */
void op_header_init(struct opd_header *h);
/*
 * Check magic and version. Returns 0, or -EINVAL with "<subject>: <defect>"
 * in @err (if not NULL).
 */
int op_header_check(const struct opd_header *h, const char *subject, char *err, size_t err_len);
/*
 * Write the text `abi` file @name relative to @dirfd (one "key value" per
 * line: type sizes, field offsets, little_endian), as OProfile's daemon and
 * operf do. Written to a temporary name and renamed, mode 0644, never through
 * a symlink. Returns 0 or -errno.
 */
int op_write_abi(int dirfd, const char *name);

#endif /* OP_HEADER_H */
