/*
 * jit_read.c - print a jitdump (perf's jit-PID.dump or libopagent's
 * PID.dump) or a perf map as text through lib/op_jit's readers: the tests'
 * view of a dump, and a debugging aid. One line per record:
 *   header pid=P elf_mach=M flags=F swapped=0|1
 *   load name=N addr=0x.. size=S index=I pid=P tid=T ts=NS
 *   move index=I old=0x.. new=0x.. size=S ts=NS
 *   debug addr=0x.. n=N, then "  line addr=0x.. lineno=L file=F" per entry
 *   unload addr=0x.. ts=NS
 *   close ts=NS
 *   map start=0x.. size=S name=N          (-m: a perf map)
 *   errors K=V ...                         (when any was counted)
 * Usage: jit_read [-m] FILE
 * Exit 0 when nothing was wrong, 1 when errors were counted, 2 when the
 * file could not be read.
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "op_jit.h"

static int on_rec(void *priv, const struct op_jit_rec *r)
{
	(void)priv;
	switch (r->kind) {
	case OP_JIT_LOAD:
		printf("load name=%s addr=0x%llx size=%llu index=%llu pid=%u tid=%u ts=%llu\n",
		       r->load.name, (unsigned long long)r->load.code_addr,
		       (unsigned long long)r->load.code_size, (unsigned long long)r->load.code_index,
		       r->load.pid, r->load.tid, (unsigned long long)r->timestamp);
		break;
	case OP_JIT_MOVE:
		printf("move index=%llu old=0x%llx new=0x%llx size=%llu ts=%llu\n",
		       (unsigned long long)r->move.code_index,
		       (unsigned long long)r->move.old_code_addr,
		       (unsigned long long)r->move.new_code_addr,
		       (unsigned long long)r->move.code_size, (unsigned long long)r->timestamp);
		break;
	case OP_JIT_DEBUG_INFO:
		printf("debug addr=0x%llx n=%zu\n", (unsigned long long)r->debug.code_addr,
		       r->debug.nr_entry);
		for (size_t i = 0; i < r->debug.nr_entry; i++)
			printf("  line addr=0x%llx lineno=%u file=%s\n",
			       (unsigned long long)r->debug.entries[i].addr,
			       r->debug.entries[i].lineno, r->debug.entries[i].filename);
		break;
	case OP_JIT_UNLOAD:
		printf("unload addr=0x%llx ts=%llu\n", (unsigned long long)r->unload.vma,
		       (unsigned long long)r->timestamp);
		break;
	case OP_JIT_CLOSE:
		printf("close ts=%llu\n", (unsigned long long)r->timestamp);
		break;
	default:
		break;
	}
	return 0;
}

static int on_map(void *priv, const struct op_perfmap_entry *e)
{
	(void)priv;
	printf("map start=0x%llx size=%llu name=%s\n", (unsigned long long)e->start,
	       (unsigned long long)e->size, e->name);
	return 0;
}

static int read_map(const char *path, struct op_jit_errors *errs)
{
	struct op_perfmap_reader *r = op_perfmap_reader_init(on_map, NULL);
	char buf[65536];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0 || !r) {
		fprintf(stderr, "jit_read: %s: %s\n", path, strerror(errno));
		return -1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		op_perfmap_reader_feed(r, buf, (size_t)n);
	close(fd);
	op_perfmap_reader_fini(r, true, errs);
	return n < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct op_jit_errors errs;
	struct op_jitdump_info info;
	char line[1024];
	int map = argc == 3 && !strcmp(argv[1], "-m");
	int ret;

	if (argc != 2 + map) {
		fprintf(stderr, "usage: jit_read [-m] FILE\n");
		return 2;
	}
	memset(&errs, 0, sizeof(errs));
	if (map) {
		if (read_map(argv[2], &errs))
			return 2;
	} else {
		ret = op_jitdump_read_file(argv[1], on_rec, NULL, &info, &errs);
		if (ret && ret != -EINVAL) {
			fprintf(stderr, "jit_read: %s: %s\n", argv[1], strerror(-ret));
			return 2;
		}
		if (info.version)
			printf("header pid=%u elf_mach=%u flags=%llu swapped=%d\n", info.pid,
			       info.elf_mach, (unsigned long long)info.flags, info.swapped);
	}
	if (op_jit_errors_total(&errs)) {
		op_jit_errors_format(&errs, line, sizeof(line));
		printf("errors %s\n", line);
		return 1;
	}
	return 0;
}
