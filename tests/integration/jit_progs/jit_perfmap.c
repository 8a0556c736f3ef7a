/*
 * jit_perfmap.c - a runtime that only writes a perf map, as Node
 * --perf-basic-prof and .NET DOTNET_PerfMapEnabled=3 do: DIR/perf-PID.map
 * (default /tmp) with one "START SIZE name" line per JIT function, then
 * jit_big and jit_small run with a 3:1 split of the work. The map is left
 * behind (the test deletes it right after the exit).
 * Usage: jit_perfmap [-d DIR] MS
 * Prints "jit_perfmap pid=P map=PATH big=0xA small=0xB it_big=N it_small=M".
 * Exit 0, 1 on a failure, 2 on usage, 77 without an emitter.
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jit_code.h"

int main(int argc, char **argv)
{
	const char *dir = "/tmp";
	struct jit_fn big, small;
	uint64_t it_big = 0, it_small = 0, ms;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	char path[PATH_MAX];
	uint8_t *mem;
	FILE *f;
	int c;

	while ((c = getopt(argc, argv, "d:")) != -1) {
		if (c != 'd') {
			fprintf(stderr, "usage: jit_perfmap [-d DIR] MS\n");
			return 2;
		}
		dir = optarg;
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "usage: jit_perfmap [-d DIR] MS\n");
		return 2;
	}
	ms = jit_arg_ul("jit_perfmap", "MS", argv[optind]);
	mem = jit_alloc(2 * pg);
	if (!mem)
		return 1;
	if (jit_emit(mem, "jit_big", &big) || jit_emit(mem + pg, "jit_small", &small))
		return 77;
	if (jit_seal(mem, 2 * pg))
		return 1;
	snprintf(path, sizeof(path), "%s/perf-%d.map", dir, (int)getpid());
	f = fopen(path, "we");
	if (!f) {
		fprintf(stderr, "jit_perfmap: %s: %s\n", path, strerror(errno));
		return 1;
	}
	/* perf's format: hex start, hex size, the name to the end of the line */
	fprintf(f, "%llx %zx %s\n", (unsigned long long)(uintptr_t)big.addr, big.size, big.name);
	fprintf(f, "%llx %zx %s\n", (unsigned long long)(uintptr_t)small.addr, small.size,
		small.name);
	if (fclose(f)) {
		fprintf(stderr, "jit_perfmap: %s: %s\n", path, strerror(errno));
		return 1;
	}
	jit_run(&big, &small, jit_now_ns() + ms * 1000000, &it_big, &it_small);
	printf("jit_perfmap pid=%d map=%s big=%p small=%p it_big=%llu it_small=%llu\n",
	       (int)getpid(), path, (void *)big.addr, (void *)small.addr,
	       (unsigned long long)it_big, (unsigned long long)it_small);
	return 0;
}
