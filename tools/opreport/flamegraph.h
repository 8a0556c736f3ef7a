/*
 * flamegraph.h - a self-contained SVG flame graph from whole stacks
 * (root-first frame names with a sample count each). Every box carries a
 * <title> (name, samples, percentage) that browsers show on hover; an
 * embedded script zooms into a clicked box, resets, and searches names
 * (a regular expression: matches highlighted, their share shown).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_FLAMEGRAPH_H
#define OP_FLAMEGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct flamegraph;

/* What a frame is: its colour (and class "f u", "f k", "f p", "f o" in the SVG). */
enum fg_kind {
	FG_USER = 0, /* user code: red to red-orange */
	FG_KERNEL,   /* kernel code: orange to amber */
	FG_PROC,     /* the process (first frame under the root): blue-grey */
	FG_OTHER,    /* [unknown], [no stack], [truncated]: grey */
};

/* An empty graph (NULL on ENOMEM). */
struct flamegraph *fg_new(void);
/* Add @count samples of the stack @frames[0] (root) .. @frames[n-1] (leaf), all FG_USER. 0 or -ENOMEM. */
int fg_add(struct flamegraph *fg, const char *const *frames, size_t n, uint64_t count);
/* The same with a kind per frame (@kinds NULL: FG_USER). Same name and kind merge. */
int fg_add_kinds(struct flamegraph *fg, const char *const *frames, const enum fg_kind *kinds,
		 size_t n, uint64_t count);
/* A line under the title (what the graph leaves out, say); NULL or "" for none. 0 or -ENOMEM. */
int fg_set_note(struct flamegraph *fg, const char *note);
/* Samples added so far. */
uint64_t fg_total(const struct flamegraph *fg);
/* Write the SVG (@width pixels wide; 0 = 1200). 0 or -EIO. */
int fg_write_svg(const struct flamegraph *fg, FILE *f, const char *title, unsigned width);
void fg_free(struct flamegraph *fg);

#endif /* OP_FLAMEGRAPH_H */
