/*
 * jit_opagent.c - a JIT runtime in miniature registered through libopagent:
 * emits jit_big and jit_small (a 3:1 split of the work) into executable
 * memory, writes them and their source lines (op_write_debug_line_info)
 * and runs them; with -r it unloads jit_big halfway and reloads it at a new
 * address (op_unload_native_code, op_write_native_code again).
 * Usage: jit_opagent [-r] [-s SOURCE] MS
 *   MS      run time in milliseconds
 *   -r      unload jit_big at MS/2 and run it from a new address after
 *   -s SRC  the source file name given in the line tables (jit_source.fake)
 * Lines: jit_big's loop instructions are lines 10, 11, 12(, 13) of SRC,
 * jit_small's 20, 21, 22(, 23). The dump goes where libopagent puts it
 * ($OPROFILE_JITDUMP_DIR/PID.dump, default /tmp/.oprofile/jitdump/PID.dump).
 * Prints one line: "jit_opagent pid=P big=0xA small=0xB [moved=0xC] it_big=N it_small=M".
 * Exit 0, 1 on a libopagent failure, 2 on usage, 77 without an emitter.
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jit_code.h"
#include "opagent.h"

static int announce(op_agent_t a, const struct jit_fn *f, const char *src, unsigned first_line)
{
	struct debug_line_info lines[4];

	if (op_write_native_code(a, f->name, (uint64_t)(uintptr_t)f->addr, f->addr,
				 (unsigned)f->size)) {
		fprintf(stderr, "jit_opagent: op_write_native_code %s: %s\n", f->name,
			strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < f->n_insn; i++) {
		lines[i].vma = (unsigned long)f->insn[i];
		lines[i].lineno = first_line + (unsigned)i;
		lines[i].filename = src;
	}
	if (op_write_debug_line_info(a, f->addr, f->n_insn, lines)) {
		fprintf(stderr, "jit_opagent: op_write_debug_line_info %s: %s\n", f->name,
			strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *src = "jit_source.fake";
	struct jit_fn big, small, moved;
	uint64_t it_big = 0, it_small = 0, t0, ms;
	bool reload = false;
	op_agent_t a;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uint8_t *mem;
	int c;

	while ((c = getopt(argc, argv, "rs:")) != -1) {
		switch (c) {
		case 'r':
			reload = true;
			break;
		case 's':
			src = optarg;
			break;
		default:
			fprintf(stderr, "usage: jit_opagent [-r] [-s SOURCE] MS\n");
			return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: jit_opagent [-r] [-s SOURCE] MS\n");
		return 2;
	}
	ms = jit_arg_ul("jit_opagent", "MS", argv[optind]);
	/* three pages: jit_big, jit_small, and where jit_big is reloaded */
	mem = jit_alloc(3 * pg);
	if (!mem)
		return 1;
	if (jit_emit(mem, "jit_big", &big) || jit_emit(mem + pg, "jit_small", &small))
		return 77;
	if (jit_seal(mem, 2 * pg))
		return 1;
	a = op_open_agent();
	if (!a) {
		fprintf(stderr, "jit_opagent: op_open_agent: %s\n", strerror(errno));
		return 1;
	}
	if (announce(a, &big, src, 10) || announce(a, &small, src, 20))
		return 1;
	t0 = jit_now_ns();
	if (!reload) {
		jit_run(&big, &small, t0 + ms * 1000000, &it_big, &it_small);
	} else {
		jit_run(&big, &small, t0 + ms * 500000, &it_big, &it_small);
		if (op_unload_native_code(a, (uint64_t)(uintptr_t)big.addr)) {
			fprintf(stderr, "jit_opagent: op_unload_native_code: %s\n", strerror(errno));
			return 1;
		}
		if (jit_emit(mem + 2 * pg, "jit_big", &moved) || jit_seal(mem + 2 * pg, pg))
			return 1;
		/* the old copy is gone as a real JIT frees it */
		munmap(mem, pg);
		if (announce(a, &moved, src, 10))
			return 1;
		jit_run(&moved, &small, t0 + ms * 1000000, &it_big, &it_small);
	}
	if (op_close_agent(a)) {
		fprintf(stderr, "jit_opagent: op_close_agent: %s\n", strerror(errno));
		return 1;
	}
	printf("jit_opagent pid=%d big=%p small=%p", (int)getpid(), (void *)big.addr,
	       (void *)small.addr);
	if (reload)
		printf(" moved=%p", (void *)moved.addr);
	printf(" it_big=%llu it_small=%llu\n", (unsigned long long)it_big,
	       (unsigned long long)it_small);
	return 0;
}
