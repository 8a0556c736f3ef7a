/*
 * jit_code.h - what the JIT test programs share: a hot loop emitted as
 * machine code into executable memory (twice: jit_big and jit_small), run
 * for a while with a 3:1 split of the work, moved to a new address.
 * SPDX-License-Identifier: MIT
 */
#ifndef JIT_CODE_H
#define JIT_CODE_H

#include <stddef.h>
#include <stdint.h>

/* one JIT function: where it runs and how big it is */
struct jit_fn {
	const char *name;
	uint8_t *addr;
	size_t size;
	/* address of each instruction of the loop (for line tables), and its count */
	uint64_t insn[4];
	size_t n_insn;
};

/* a loop of n (>= 1) iterations */
typedef uint64_t jit_loop_fn(uint64_t n);

/*
 * Emit the loop at @at (in a writable mapping) and describe it in @f.
 * Returns 0, or -1 when this architecture has no emitter (the caller exits
 * 77 with the message printed).
 */
int jit_emit(uint8_t *at, const char *name, struct jit_fn *f);

/* the ELF e_machine of the emitted code (a jitdump header field) */
extern const uint32_t jit_elf_mach;

/* Map @len bytes RW; jit_seal() makes them RX (W^X, as real JITs do). NULL on failure. */
uint8_t *jit_alloc(size_t len);
int jit_seal(uint8_t *p, size_t len);

/*
 * Run @big and @small (3 : 1 of the iterations, so of the time) until
 * @until_ns (CLOCK_MONOTONIC). Adds the iterations done to *@it_big, *@it_small.
 */
void jit_run(const struct jit_fn *big, const struct jit_fn *small, uint64_t until_ns,
	     uint64_t *it_big, uint64_t *it_small);

uint64_t jit_now_ns(void);

/* parse a positive decimal argument, exit 2 with usage on a bad one */
unsigned long jit_arg_ul(const char *prog, const char *what, const char *s);

#endif /* JIT_CODE_H */
