/*
 * oprofile_opagent.h - OProfile 1.x's <opagent.h> API as OProfile documents
 * it (its libopagent reference: types, the seven functions, their argument
 * types), kept here as the other side of the compatibility test: a program
 * built against this text must link and run against our libopagent
 * unchanged. Not our header (lib/opagent/opagent.h); do not "fix" it to
 * match ours. OProfile's header took uint64_t from the includer's
 * <stdint.h> (its own include was <sys/types.h>).
 * SPDX-License-Identifier: MIT
 */
#ifndef _LIB_OPAGENT_H
#define _LIB_OPAGENT_H

#include <sys/types.h>

#if defined(__cplusplus)
extern "C" {
#endif

struct debug_line_info {
	unsigned long vma;
	unsigned int lineno;
	char const *filename;
};

typedef void *op_agent_t;

op_agent_t op_open_agent(void);

int op_close_agent(op_agent_t hdl);

int op_write_native_code(op_agent_t hdl, char const *symbol_name, uint64_t vma, void const *code,
			 const unsigned int code_size);

int op_write_debug_line_info(op_agent_t hdl, void const *code, size_t nr_entry,
			     struct debug_line_info const *compile_map);

int op_unload_native_code(op_agent_t hdl, uint64_t vma);

int op_major_version(void);

int op_minor_version(void);

#if defined(__cplusplus)
}
#endif

#endif
