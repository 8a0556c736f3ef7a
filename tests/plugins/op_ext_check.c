/*
 * op_ext_check.c - loads plugin NAME from DIR with oprofiled's own loader
 * (no core behind it) and reports what it registered; exit 0 only if it was
 * accepted and initialised. Used to validate the SDK example built against
 * the installed header (installcheck) and the in-tree build (make check).
 *   op_ext_check DIR NAME [ARGS]
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>
#include <stdlib.h>

#include "ext.h"
#include "log.h"

int main(int argc, char **argv)
{
	struct ext_registry *r;
	struct ext_loader *l;
	struct op_log log;
	size_t i, nesc = 0;
	int rc;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: op_ext_check DIR NAME [ARGS]\n");
		return 2;
	}
	if (ext_list_plugins(argv[1], stdout))
		return 1;
	log_init(&log, stderr);
	l = ext_loader_new(argv[1], NULL, NULL, &log);
	if (!l)
		return 1;
	rc = ext_load(l, argv[2], argc == 4 ? argv[3] : "", "op_ext_check");
	if (rc) {
		ext_loader_free(l);
		return 1;
	}
	r = ext_registry(l);
	for (i = 0; i <= OP_ESCAPE_MAX; i++)
		nesc += r->escapes[i] != NULL;
	printf("loaded %s: %zu escape codes, %zu sfile handlers, %zu sources, %zu hooks, "
	       "%zu models, %d kernel resolver, %zu counters, %zu stats\n",
	       argv[2], nesc, r->nr_sfile, r->nr_sources, r->nr_hooks, r->nr_models,
	       r->has_kernel ? 1 : 0, r->nr_counters, r->nr_stats);
	ext_print_stats(l, stdout);
	ext_loader_free(l);
	return 0;
}
