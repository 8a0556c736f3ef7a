/*
 * hot_check.c - reads the sample files oprofiled wrote for tests/data hot
 * (lib/odb + op_parse_name) and attributes the keys of the binary's own
 * files to its ELF symbols (<elf.h> symbol table, file offsets). Prints the
 * counts and checks: work_big / work_small = 3.0 +- 0.2 and >= 95 % of the
 * program's samples in the two functions.
 * Usage: hot_check [--min-share=PCT] [--min-samples=N] [--tol=T] SAMPLES_CURRENT_DIR BINARY
 * (defaults 95, 2000 and 0.2).
 * SPDX-License-Identifier: MIT
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odb.h"
#include "op_mangle.h"
#include "test_util.h"

struct func {
	const char *name;
	uint64_t start, end; /* file offsets */
	uint64_t samples;
};

static struct func funcs[2] = { { "work_small", 0, 0, 0 }, { "work_big", 0, 0, 0 } };
static char binary[PATH_MAX];
static uint64_t prog_total, bin_total, nr_files;
static struct op_parsed_name pn;

/* file offsets of work_small and work_big in @path's .symtab */
static int elf_funcs(const char *path)
{
	int k;

	for (k = 0; k < 2; k++)
		if (tu_elf_sym(path, funcs[k].name, TU_SYMTAB, true, &funcs[k].start,
			       &funcs[k].end))
			return -1;
	return 0;
}

static void one_file(int dfd, const char *name, const char *rel)
{
	const struct odb_node *n;
	char err[512];
	size_t cnt, i;
	odb_t db;
	uint64_t sum = 0;
	int k;

	if (op_parse_name(rel, &pn, err, sizeof(err)))
		return; /* stats/ and other files */
	if (odb_open(&db, dfd, name, ODB_RDONLY, err, sizeof(err))) {
		fprintf(stderr, "hot_check: %s\n", err);
		exit(1);
	}
	nr_files++;
	n = odb_nodes(&db, &cnt);
	for (i = 0; i < cnt; i++)
		sum += n[i].value;
	if (pn.app.kind == OP_IMAGE_USER && !strcmp(pn.app.path, binary)) {
		prog_total += sum;
		if (pn.image.kind == OP_IMAGE_USER && !strcmp(pn.image.path, binary)) {
			bin_total += sum;
			for (i = 0; i < cnt; i++)
				for (k = 0; k < 2; k++)
					if (n[i].key >= funcs[k].start && n[i].key < funcs[k].end)
						funcs[k].samples += n[i].value;
		}
	}
	printf("  %8llu  %s\n", (unsigned long long)sum, rel);
	odb_close(&db);
}

int main(int argc, char **argv)
{
	double ratio, frac, min_share = 95.0, tol = 0.2;
	unsigned long long min_samples = 2000;
	int fd, ok = 1;

	while (argc > 1 && !strncmp(argv[1], "--", 2)) {
		if (!strncmp(argv[1], "--tol=", 6))
			tol = atof(argv[1] + 6);
		else if (!strncmp(argv[1], "--min-share=", 12))
			min_share = atof(argv[1] + 12);
		else if (!strncmp(argv[1], "--min-samples=", 14))
			min_samples = strtoull(argv[1] + 14, NULL, 10);
		argv++;
		argc--;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: hot_check [--min-share=PCT] [--min-samples=N] [--tol=T] "
				"SAMPLES_CURRENT_DIR BINARY\n");
		return 2;
	}
	if (!realpath(argv[2], binary) || elf_funcs(binary)) {
		fprintf(stderr, "hot_check: %s: cannot find work_small and work_big\n", argv[2]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		perror(argv[1]);
		return 2;
	}
	printf("sample files below %s:\n", argv[1]);
	if (tu_walk(fd, "", one_file)) {
		perror("fdopendir");
		exit(1);
	}
	ratio = funcs[0].samples ? (double)funcs[1].samples / funcs[0].samples : 0;
	frac = prog_total ? (double)(funcs[0].samples + funcs[1].samples) / prog_total : 0;
	printf("files %llu, program samples %llu (in the binary %llu)\n",
	       (unsigned long long)nr_files, (unsigned long long)prog_total,
	       (unsigned long long)bin_total);
	printf("work_small [%#llx,%#llx) %llu, work_big [%#llx,%#llx) %llu\n",
	       (unsigned long long)funcs[0].start, (unsigned long long)funcs[0].end,
	       (unsigned long long)funcs[0].samples, (unsigned long long)funcs[1].start,
	       (unsigned long long)funcs[1].end, (unsigned long long)funcs[1].samples);
	printf("ratio big/small %.3f (expected 3.0 +- %.2f), in the two functions %.1f %% "
	       "(expected >= %.0f %%)\n", ratio, tol, 100 * frac, min_share);
	if (prog_total < min_samples) {
		printf("FAIL: fewer than %llu samples\n", min_samples);
		ok = 0;
	}
	if (ratio < 3.0 - tol || ratio > 3.0 + tol) {
		printf("FAIL: ratio\n");
		ok = 0;
	}
	if (100 * frac < min_share) {
		printf("FAIL: share of the two functions\n");
		ok = 0;
	}
	return ok ? 0 : 1;
}
