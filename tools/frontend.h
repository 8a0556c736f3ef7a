/*
 * frontend.h - what operf and ocount share: OProfile 1.x command lines are
 * translated into an argument vector for oprofiled or opcount, which is
 * then found (next to the front-end, in the build tree, in the install
 * directories) and exec'd, so the profiler's own process takes over.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef FRONTEND_H
#define FRONTEND_H

#include <stdbool.h>
#include <stddef.h>

/* A growing, NULL-terminated argument vector; oom is sticky. */
struct fe_argv {
	char **v;
	size_t n, cap;
	bool oom;
};

/* Append a copy of @s / of the formatted string. */
void fe_argv_add(struct fe_argv *a, const char *s);
void fe_argv_addf(struct fe_argv *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Find program @name for front-end @tool: the directory of the running
 * executable, its ../core (the build tree's layout for oprofiled), then the
 * configured sbindir and bindir. Writes the path to @path (@len bytes).
 * Returns 0, or -ENOENT after printing "TOOL: cannot find NAME (looked in
 * ...)" to stderr.
 */
int fe_find_program(const char *tool, const char *name, char *path, size_t len);

/*
 * Replace this process with @path and @a (a->v[0] is set to @path). With
 * @verbose the command line goes to stderr first. Returns 1 only when the
 * exec fails or @a ran out of memory, after printing why.
 */
int fe_exec(const char *tool, const char *path, struct fe_argv *a, bool verbose);

/*
 * The error for an OProfile option that has no equivalent here: "TOOL:
 * OPTION is not supported: WHY" on stderr; returns 1 (the exit status).
 */
int fe_unsupported(const char *tool, const char *option, const char *why);
/*
 * getopt_long() returned '?' or ':' for @argv (@optind as it left it):
 * "-?" prints @usage to stdout (0); an unknown option or a missing value is
 * an error naming it, with @usage on stderr for an unknown one (1).
 */
int fe_getopt_trouble(const char *tool, int c, char **argv, const char *usage);

#endif /* FRONTEND_H */
