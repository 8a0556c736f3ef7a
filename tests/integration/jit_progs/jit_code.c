/*
 * jit_code.c - the JIT test programs' machine code (see jit_code.h): a
 * count-down loop emitted as bytes, one emitter per architecture.
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "jit_code.h"

#if defined(__x86_64__)
/* mov %rdi,%rax; 1: dec %rax; jnz 1b; ret */
static const uint8_t loop_code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };
static const uint8_t loop_insn[] = { 0, 3, 6, 8 };
const uint32_t jit_elf_mach = 62; /* EM_X86_64 */
#elif defined(__aarch64__)
/* 1: subs x0, x0, #1; b.ne 1b; ret */
static const uint8_t loop_code[] = { 0x00, 0x04, 0x00, 0xf1, 0xe1, 0xff,
				     0xff, 0x54, 0xc0, 0x03, 0x5f, 0xd6 };
static const uint8_t loop_insn[] = { 0, 4, 8 };
const uint32_t jit_elf_mach = 183; /* EM_AARCH64 */
#else
#define JIT_NO_EMITTER 1
const uint32_t jit_elf_mach = 0;
#endif

int jit_emit(uint8_t *at, const char *name, struct jit_fn *f)
{
#ifdef JIT_NO_EMITTER
	(void)at;
	(void)name;
	(void)f;
	fprintf(stderr, "jit test programs: no machine code emitter for this architecture\n");
	return -1;
#else
	memcpy(at, loop_code, sizeof(loop_code));
	f->name = name;
	f->addr = at;
	f->size = sizeof(loop_code);
	f->n_insn = sizeof(loop_insn);
	for (size_t i = 0; i < f->n_insn; i++)
		f->insn[i] = (uint64_t)(uintptr_t)at + loop_insn[i];
	return 0;
#endif
}

uint8_t *jit_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	return p;
}

int jit_seal(uint8_t *p, size_t len)
{
	__builtin___clear_cache((char *)p, (char *)p + len);
	if (mprotect(p, len, PROT_READ | PROT_EXEC)) {
		perror("mprotect PROT_EXEC");
		return -1;
	}
	return 0;
}

uint64_t jit_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void jit_run(const struct jit_fn *big, const struct jit_fn *small, uint64_t until_ns,
	     uint64_t *it_big, uint64_t *it_small)
{
	jit_loop_fn *b = (jit_loop_fn *)(uintptr_t)big->addr;
	jit_loop_fn *s = (jit_loop_fn *)(uintptr_t)small->addr;
	const uint64_t chunk = 100000;

	while (jit_now_ns() < until_ns) {
		b(3 * chunk);
		s(chunk);
		*it_big += 3 * chunk;
		*it_small += chunk;
	}
}

unsigned long jit_arg_ul(const char *prog, const char *what, const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || !v) {
		fprintf(stderr, "%s: %s must be a positive number, got \"%s\"\n", prog, what, s);
		exit(2);
	}
	return v;
}
