/*
 * op_header.h - struct opd_header, the 72-byte header of an OProfile 1.x
 * sample file (version 0x13), and the session `abi` file.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_HEADER_H
#define OP_HEADER_H

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

/* Fill the constant parts of a header (magic, version). */
void op_header_init(struct opd_header *h);
/* Write <dir>/abi (text, key value per line). Returns 0 or -errno. */
int op_write_abi(int dirfd, const char *name);

#endif /* OP_HEADER_H */
