/*
 * opagent.h - libopagent: how a JIT runtime (a JVM agent, a query compiler)
 * tells the profiler about the code it generates. OProfile 1.x's API and
 * ABI, unchanged: an agent built against OProfile's header links and runs
 * against this library. The records go to a perf jitdump file (see
 * lib/opagent/README.md) that oprofiled turns into ELF images in the session.
 * SPDX-License-Identifier: MIT
 */
#ifndef _LIB_OPAGENT_H
#define _LIB_OPAGENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#if defined(__cplusplus)
extern "C" {
#endif

/* The source line of the code from vma on (one per instruction at most). */
struct debug_line_info {
	unsigned long vma;
	unsigned int lineno;
	/* any form: absolute, relative or a runtime's own name ("Foo.java") */
	const char *filename;
};

/* an open agent; opaque */
typedef void *op_agent_t;

/*
 * Open the dump of this process: $OPROFILE_JITDUMP_DIR/PID.dump, default
 * /tmp/.oprofile/jitdump/PID.dump (created, mode 1777 like /tmp, when
 * missing), and map it executable once so that the profiler sees which
 * file belongs to the process. Call before anything else.
 * Returns the handle, or NULL with errno set.
 */
op_agent_t op_open_agent(void);

/*
 * Write the closing record, unmap and close the dump, free @hdl (which must
 * not be used again). Returns 0, or -1 with errno set.
 */
int op_close_agent(op_agent_t hdl);

/*
 * Code was generated: @code_size bytes of it run at @vma under the name
 * @symbol_name (make it unique: class, method, signature). @code points to
 * a copy of the bytes (usually @vma itself), or NULL: the bytes are then
 * read from @vma. Returns 0, or -1 with errno set.
 */
int op_write_native_code(op_agent_t hdl, const char *symbol_name, uint64_t vma, const void *code,
			 const unsigned int code_size);

/*
 * Source lines of the code written at @code before: @nr_entry entries of
 * @compile_map, in any order, with holes allowed. nr_entry 0 writes nothing.
 * Returns 0, or -1 with errno set.
 */
int op_write_debug_line_info(op_agent_t hdl, const void *code, size_t nr_entry,
			     const struct debug_line_info *compile_map);

/*
 * The code written at @vma is gone (freed or recompiled): samples at @vma
 * from now on are not its. Returns 0, or -1 with errno set.
 */
int op_unload_native_code(op_agent_t hdl, uint64_t vma);

/* the version of the agent API this library implements (1.x: OProfile 1's) */
int op_major_version(void);
int op_minor_version(void);

#if defined(__cplusplus)
}
#endif

#endif /* _LIB_OPAGENT_H */
