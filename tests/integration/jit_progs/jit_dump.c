/*
 * jit_dump.c - a runtime writing perf's jitdump itself, as V8 --perf-prof,
 * .NET and LLVM's perf listener do: DIR/jit-PID.dump mapped PROT_EXEC once
 * (the mapping names the file to the profiler), DEBUG_INFO then LOAD for
 * jit_big and jit_small (perf's order), a run, a JIT_CODE_MOVE of jit_big
 * to a new address (the code copied there, then run there), the rest of
 * the run, CLOSE. Samples before and after the move belong to one symbol.
 * Usage: jit_dump DIR MS
 * Lines: jit_big's loop instructions are lines 10.. of "jit_dump.fake",
 * jit_small's 20... Timestamps are CLOCK_MONOTONIC ns (flags 0).
 * Prints "jit_dump pid=P dump=PATH big=0xA small=0xB moved=0xC it_big=N it_small=M".
 * Exit 0, 1 on a failure, 2 on usage, 77 without an emitter.
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jit_code.h"
#include "op_jit.h"

static int fd = -1;

static void put(const void *p, size_t n)
{
	/* one write per record: a reader sees whole records or a cut tail */
	if (write(fd, p, n) != (ssize_t)n) {
		perror("jit_dump: write");
		exit(1);
	}
}

static void head(struct op_jitdump_rec_header *h, uint32_t id, size_t size)
{
	h->id = id;
	h->total_size = (uint32_t)size;
	h->timestamp = jit_now_ns();
}

static void load(const struct jit_fn *f, uint64_t index)
{
	uint8_t buf[256];
	struct op_jitdump_load r;
	size_t nl = strlen(f->name) + 1, size = sizeof(r) + nl + f->size;

	memset(&r, 0, sizeof(r));
	head(&r.p, OP_JIT_CODE_LOAD, size);
	r.pid = (uint32_t)getpid();
	r.tid = (uint32_t)gettid();
	r.vma = r.code_addr = (uint64_t)(uintptr_t)f->addr;
	r.code_size = f->size;
	r.code_index = index;
	memcpy(buf, &r, sizeof(r));
	memcpy(buf + sizeof(r), f->name, nl);
	memcpy(buf + sizeof(r) + nl, f->addr, f->size);
	put(buf, size);
}

static void debug(const struct jit_fn *f, uint32_t first_line)
{
	static const char file[] = "jit_dump.fake";
	uint8_t buf[512];
	struct op_jitdump_debug_info r;
	size_t o = sizeof(r);

	for (size_t i = 0; i < f->n_insn; i++) {
		uint32_t line = first_line + (uint32_t)i, discrim = 0;

		memcpy(buf + o, &f->insn[i], 8);
		memcpy(buf + o + 8, &line, 4);
		memcpy(buf + o + 12, &discrim, 4);
		memcpy(buf + o + 16, file, sizeof(file));
		o += 16 + sizeof(file);
	}
	head(&r.p, OP_JIT_CODE_DEBUG_INFO, o);
	r.code_addr = (uint64_t)(uintptr_t)f->addr;
	r.nr_entry = f->n_insn;
	memcpy(buf, &r, sizeof(r));
	put(buf, o);
}

int main(int argc, char **argv)
{
	struct op_jitdump_header h;
	struct op_jitdump_move mv;
	struct op_jitdump_rec_header cl;
	struct jit_fn big, small, moved;
	uint64_t it_big = 0, it_small = 0, t0, ms;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char path[PATH_MAX];
	uint8_t *mem;
	void *map;

	if (argc != 3) {
		fprintf(stderr, "usage: jit_dump DIR MS\n");
		return 2;
	}
	ms = jit_arg_ul("jit_dump", "MS", argv[2]);
	mem = jit_alloc(3 * pg);
	if (!mem)
		return 1;
	if (jit_emit(mem, "jit_big", &big) || jit_emit(mem + pg, "jit_small", &small))
		return 77;
	if (jit_seal(mem, 2 * pg))
		return 1;
	snprintf(path, sizeof(path), "%s/jit-%d.dump", argv[1], (int)getpid());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "jit_dump: %s: %s\n", path, strerror(errno));
		return 1;
	}
	memset(&h, 0, sizeof(h));
	h.magic = OP_JITDUMP_MAGIC;
	h.version = OP_JITDUMP_VERSION;
	h.total_size = sizeof(h);
	h.elf_mach = jit_elf_mach;
	h.pid = (uint32_t)getpid();
	h.timestamp = jit_now_ns();
	put(&h, sizeof(h));
	/* as perf's agents: the dump's own executable mapping tells the profiler */
	map = mmap(NULL, pg, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "jit_dump: mmap PROT_EXEC %s: %s\n", path, strerror(errno));
		return 1;
	}
	debug(&big, 10);
	load(&big, 1);
	debug(&small, 20);
	load(&small, 2);
	t0 = jit_now_ns();
	jit_run(&big, &small, t0 + ms * 500000, &it_big, &it_small);
	/* move jit_big: copy, make it executable, record, then run it there */
	if (jit_emit(mem + 2 * pg, "jit_big", &moved) || jit_seal(mem + 2 * pg, pg))
		return 1;
	memset(&mv, 0, sizeof(mv));
	head(&mv.p, OP_JIT_CODE_MOVE, sizeof(mv));
	mv.pid = (uint32_t)getpid();
	mv.tid = (uint32_t)gettid();
	mv.vma = mv.new_code_addr = (uint64_t)(uintptr_t)moved.addr;
	mv.old_code_addr = (uint64_t)(uintptr_t)big.addr;
	mv.code_size = moved.size;
	mv.code_index = 1;
	put(&mv, sizeof(mv));
	munmap(mem, pg);
	jit_run(&moved, &small, t0 + ms * 1000000, &it_big, &it_small);
	head(&cl, OP_JIT_CODE_CLOSE, sizeof(cl));
	put(&cl, sizeof(cl));
	munmap(map, pg);
	close(fd);
	printf("jit_dump pid=%d dump=%s big=%p small=%p moved=%p it_big=%llu it_small=%llu\n",
	       (int)getpid(), path, (void *)big.addr, (void *)small.addr, (void *)moved.addr,
	       (unsigned long long)it_big, (unsigned long long)it_small);
	return 0;
}
