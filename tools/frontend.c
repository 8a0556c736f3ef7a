/*
 * frontend.c - argument vectors, program lookup and exec for the OProfile
 * 1.x front-ends operf and ocount (frontend.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frontend.h"

void fe_argv_add(struct fe_argv *a, const char *s)
{
	char *copy;

	if (a->oom)
		return;
	if (a->n + 2 > a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		char **v = realloc(a->v, cap * sizeof(*v));

		if (!v) {
			a->oom = true;
			return;
		}
		a->v = v;
		a->cap = cap;
	}
	copy = strdup(s);
	if (!copy) {
		a->oom = true;
		return;
	}
	a->v[a->n++] = copy;
	a->v[a->n] = NULL;
}

void fe_argv_addf(struct fe_argv *a, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		a->oom = true;
		return;
	}
	fe_argv_add(a, s);
	free(s);
}

int fe_find_program(const char *tool, const char *name, char *path, size_t len)
{
	char exe[PATH_MAX], dirs[4][PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t nr = 0;

	if (n > 0) {
		char *slash;

		exe[n] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(dirs[nr++], sizeof(dirs[0]), "%s", exe);
			/* the build tree: tools/operf, core/oprofiled */
			snprintf(dirs[nr++], sizeof(dirs[0]), "%s/../core", exe);
		}
	}
	snprintf(dirs[nr++], sizeof(dirs[0]), "%s", OP_SBINDIR);
	snprintf(dirs[nr++], sizeof(dirs[0]), "%s", OP_BINDIR);
	for (size_t i = 0; i < nr; i++) {
		if ((size_t)snprintf(path, len, "%s/%s", dirs[i], name) < len &&
		    access(path, X_OK) == 0)
			return 0;
	}
	fprintf(stderr, "%s: cannot find %s (looked in", tool, name);
	for (size_t i = 0; i < nr; i++)
		fprintf(stderr, "%s %s", i ? "," : "", dirs[i]);
	fprintf(stderr, ") - install oprofile-ng's %s next to %s\n", name, tool);
	return -ENOENT;
}

int fe_exec(const char *tool, const char *path, struct fe_argv *a, bool verbose)
{
	if (a->oom || !a->n) {
		fprintf(stderr, "%s: out of memory\n", tool);
		return 1;
	}
	free(a->v[0]);
	a->v[0] = strdup(path);
	if (!a->v[0]) {
		fprintf(stderr, "%s: out of memory\n", tool);
		return 1;
	}
	if (verbose) {
		fprintf(stderr, "%s: running", tool);
		for (size_t i = 0; i < a->n; i++)
			fprintf(stderr, " %s", a->v[i]);
		fputc('\n', stderr);
	}
	fflush(NULL);
	execv(path, a->v);
	fprintf(stderr, "%s: cannot run %s: %s\n", tool, path, strerror(errno));
	return 1;
}

int fe_unsupported(const char *tool, const char *option, const char *why)
{
	fprintf(stderr, "%s: %s is not supported: %s\n", tool, option, why);
	return 1;
}

int fe_getopt_trouble(const char *tool, int c, char **argv, const char *usage)
{
	if (c == ':') {
		fprintf(stderr, "%s: option %s needs a value\n", tool, argv[optind - 1]);
		return 1;
	}
	/* -? is in the option string: glibc then leaves optopt alone */
	if (optopt == '?' || !strcmp(argv[optind - 1], "-?")) {
		fputs(usage, stdout);
		return 0;
	}
	if (optopt)
		fprintf(stderr, "%s: unknown option -%c\n", tool, optopt);
	else
		fprintf(stderr, "%s: unknown option %s\n", tool, argv[optind - 1]);
	fputs(usage, stderr);
	return 1;
}
