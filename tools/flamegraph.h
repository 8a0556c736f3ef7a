/*
 * flamegraph.h - a self-contained SVG flame graph from whole stacks
 * (root-first frame names with a sample count each). No scripts: every box
 * carries a <title> (name, samples, percentage) that browsers show on hover.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_FLAMEGRAPH_H
#define OP_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct flamegraph;

/* An empty graph (NULL on ENOMEM). */
struct flamegraph *fg_new(void);
/* Add @count samples of the stack @frames[0] (root) .. @frames[n-1] (leaf). 0 or -ENOMEM. */
int fg_add(struct flamegraph *fg, const char *const *frames, size_t n, uint64_t count);
/* Samples added so far. */
uint64_t fg_total(const struct flamegraph *fg);
/* Write the SVG (@width pixels wide; 0 = 1200). 0 or -EIO. */
int fg_write_svg(const struct flamegraph *fg, FILE *f, const char *title, unsigned width);
void fg_free(struct flamegraph *fg);

#endif /* OP_FLAMEGRAPH_H */
