/*
 * corpus_runner.c - shared TAP regression runner for the fuzz targets: walks
 * corpus directories in name order and feeds each file to the target's check
 * (see corpus_runner.h). Linked only into the gcc make-check builds.
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "corpus_runner.h"

#define CORPUS_MAX_FILES 4096

struct corpus_run {
	corpus_one_fn *one;
	int n_tests, n_failed;
};

static void corpus_file(struct corpus_run *r, const char *path, const char *base)
{
	static uint8_t buf[1 << 20] __attribute__((aligned(64)));
	char note[640] = "";
	const char *bad;
	FILE *f = fopen(path, "rb");
	size_t len;

	r->n_tests++;
	if (!f) {
		printf("not ok %d - %s: cannot open\n", r->n_tests, base);
		r->n_failed++;
		return;
	}
	len = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	bad = r->one(base, buf, len, note, sizeof(note));
	if (bad) {
		r->n_failed++;
		printf("not ok %d - %s: %s\n", r->n_tests, base, bad);
	} else if (note[0]) {
		printf("ok %d - %s: %s\n", r->n_tests, base, note);
	} else {
		printf("ok %d - %s\n", r->n_tests, base);
	}
}

static int corpus_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int corpus_dir(struct corpus_run *r, const char *dir)
{
	static char *names[CORPUS_MAX_FILES];
	char path[PATH_MAX];
	struct dirent *e;
	size_t n = 0, i;
	DIR *d = opendir(dir);

	if (!d) {
		printf("Bail out! %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d)) && n < CORPUS_MAX_FILES)
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), corpus_cmp);
	for (i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		corpus_file(r, path, names[i]);
		free(names[i]);
	}
	return 0;
}

int corpus_main(int argc, char **argv, const char *corpus_subdir, corpus_one_fn *one)
{
	struct corpus_run r = { .one = one };
	const char *src = getenv("OP_SRCDIR");
	char def[PATH_MAX];
	int i;

	if (argc < 2) {
		snprintf(def, sizeof(def), "%s/tests/fuzz/corpus/%s", src && *src ? src : ".",
			 corpus_subdir);
		if (corpus_dir(&r, def))
			return 1;
	}
	for (i = 1; i < argc; i++) {
		const char *slash = strrchr(argv[i], '/');
		struct stat st;

		if (stat(argv[i], &st)) {
			printf("Bail out! %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		if (!S_ISDIR(st.st_mode))
			corpus_file(&r, argv[i], slash ? slash + 1 : argv[i]);
		else if (corpus_dir(&r, argv[i]))
			return 1;
	}
	if (!r.n_tests) {
		printf("Bail out! no inputs\n");
		return 1;
	}
	printf("1..%d\n", r.n_tests);
	return r.n_failed ? 1 : 0;
}
