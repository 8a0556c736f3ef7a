/*
 * opreport_callgraph.h - opreport's call-graph outputs: -c/--callgraph
 * (OProfile-style blocks: callers, the symbol with self and inclusive
 * samples, callees), --callgraph-output=folded (one "a;b;c N" line per
 * stack) and --flamegraph=FILE.svg, from the {cg} arc files and the
 * callgraph plugin's stack table. SPDX-License-Identifier: MIT
 */
#ifndef OPREPORT_CALLGRAPH_H
#define OPREPORT_CALLGRAPH_H

#include <stdbool.h>
#include <stdio.h>

#include "opreport.h"

struct cgr_opts {
	bool blocks;            /* -c */
	bool folded;            /* --callgraph-output=folded */
	const char *flamegraph; /* --flamegraph=FILE */
};

/* --callgraph-output=WHAT ("folded" or "blocks"); 0 or -EINVAL with a message in @err. */
int cgr_set_output(struct cgr_opts *c, const char *what, char *err, size_t err_len);

/*
 * Write what @c asks for: the SVG file, then -c blocks and/or folded lines
 * to @out. Returns 1 when it wrote the report (the flat report is then
 * skipped), 0 when nothing was asked for @out (only an SVG, or nothing),
 * -errno with a message on stderr on failure.
 */
int cgr_report(FILE *out, struct rpt_profile *p, const struct rpt_opts *o, const struct cgr_opts *c);

#endif /* OPREPORT_CALLGRAPH_H */
