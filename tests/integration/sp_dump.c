/*
 * sp_dump.c - reads sample files for the sample-path integration tests:
 * lists every sample file below a session directory with its count after
 * full validation (odb_check), attributes one file's keys to an ELF symbol
 * (file offsets), or resolves a kernel file's keys through a kallsyms
 * snapshot (key = pc - _text).
 * Usage:
 *   sp_dump DIR                 "<count> <keys> <relpath>" per sample file,
 *                               then "TOTAL <files> <samples> <bad>"; exit 1 if bad
 *   sp_dump --sym=ELF:SYM FILE  "in <n> of <total>" (keys inside SYM's bytes)
 *   sp_dump --ksyms=KALLSYMS FILE
 *                               "<count> <function>" per key, then
 *                               "resolved <n> of <total>"
 * SPDX-License-Identifier: MIT
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odb.h"
#include "op_mangle.h"
#include "test_util.h"

static uint64_t nr_files, nr_samples, nr_bad;

static int open_db(int dfd, const char *name, odb_t *db)
{
	char err[512];

	if (odb_open(db, dfd, name, ODB_RDONLY, err, sizeof(err)) ||
	    odb_check(db, err, sizeof(err))) {
		printf("BAD %s\n", err);
		odb_close(db);
		return -1;
	}
	return 0;
}

static void one_file(int dfd, const char *name, const char *rel)
{
	struct op_parsed_name pn;
	const struct odb_node *n;
	char err[512];
	uint64_t sum = 0;
	size_t cnt, i;
	odb_t db;

	if (op_parse_name(rel, &pn, err, sizeof(err)))
		return; /* stats/ and other files */
	nr_files++;
	if (open_db(dfd, name, &db)) {
		nr_bad++;
		return;
	}
	n = odb_nodes(&db, &cnt);
	for (i = 0; i < cnt; i++)
		sum += n[i].value;
	nr_samples += sum;
	printf("%" PRIu64 " %zu %s\n", sum, cnt, rel);
	odb_close(&db);
}

struct ksym {
	uint64_t addr;
	char name[64];
};

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int ksyms_mode(const char *kallsyms, const char *file)
{
	struct ksym *k = NULL;
	size_t nr = 0, cap = 0, cnt, i;
	uint64_t text = 0, total = 0, resolved = 0;
	const struct odb_node *n;
	char line[512];
	FILE *f = fopen(kallsyms, "r");
	odb_t db;

	if (!f) {
		perror(kallsyms);
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char t, name[256];

		if (sscanf(line, "%llx %c %255s", &a, &t, name) != 3 || !a)
			continue;
		if (!strcmp(name, "_text"))
			text = a;
		if (nr == cap) {
			cap = cap ? cap * 2 : 4096;
			k = realloc(k, cap * sizeof(*k));
			if (!k)
				return 2;
		}
		k[nr].addr = a;
		snprintf(k[nr].name, sizeof(k[nr].name), "%.63s", name);
		nr++;
	}
	fclose(f);
	if (!text || !nr) {
		fprintf(stderr, "%s: no _text symbol\n", kallsyms);
		return 2;
	}
	qsort(k, nr, sizeof(*k), ksym_cmp);
	if (open_db(AT_FDCWD, file, &db))
		return 1;
	n = odb_nodes(&db, &cnt);
	for (i = 0; i < cnt; i++) {
		uint64_t pc = text + n[i].key;
		size_t lo = 0, hi = nr;

		total += n[i].value;
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;

			if (k[mid].addr <= pc)
				lo = mid;
			else
				hi = mid;
		}
		if (k[lo].addr > pc || pc - k[lo].addr > (1u << 16))
			continue;
		resolved += n[i].value;
		printf("%u %s\n", n[i].value, k[lo].name);
	}
	printf("resolved %" PRIu64 " of %" PRIu64 "\n", resolved, total);
	odb_close(&db);
	free(k);
	return 0;
}

int main(int argc, char **argv)
{
	int fd;

	if (argc == 3 && !strncmp(argv[1], "--sym=", 6)) {
		char *elf = argv[1] + 6, *sym = strrchr(elf, ':');
		uint64_t start, end, in = 0, total = 0;
		const struct odb_node *n;
		size_t cnt, i;
		odb_t db;

		if (!sym)
			return 2;
		*sym++ = 0;
		if (tu_elf_sym(elf, sym, TU_SYMTAB | TU_DYNSYM, true, &start, &end)) {
			fprintf(stderr, "%s: no function %s\n", elf, sym);
			return 2;
		}
		if (open_db(AT_FDCWD, argv[2], &db))
			return 1;
		n = odb_nodes(&db, &cnt);
		for (i = 0; i < cnt; i++) {
			total += n[i].value;
			if (n[i].key >= start && n[i].key < end)
				in += n[i].value;
		}
		printf("in %" PRIu64 " of %" PRIu64 " [%#" PRIx64 ",%#" PRIx64 ")\n", in, total,
		       start, end);
		odb_close(&db);
		return 0;
	}
	if (argc == 3 && !strncmp(argv[1], "--ksyms=", 8))
		return ksyms_mode(argv[1] + 8, argv[2]);
	if (argc != 2) {
		fprintf(stderr, "usage: sp_dump DIR | --sym=ELF:SYM FILE | --ksyms=KALLSYMS FILE\n");
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	tu_walk(fd, "", one_file);
	printf("TOTAL %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", nr_files, nr_samples, nr_bad);
	return nr_bad ? 1 : 0;
}
