/*
 * op_cg_read.h - the one reader of the call-graph plugin's whole-stack table
 * (op_cg_format.h, versions 1 to 4) for opreport, optop and libopprofile: the file
 * read whole with pread (the daemon may grow or cut it meanwhile), then its
 * images and stacks handed to a visitor, every index bounded by what the
 * file holds. SPDX-License-Identifier: MIT
 */
#ifndef OP_CG_READ_H
#define OP_CG_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "op_cg_format.h"
#include "op_mangle.h"

/* one stack of the table */
struct op_cgs_stack {
	uint32_t app; /* application image index + 1, 0 = unknown, <= the number of images */
	bool truncated;
	uint64_t count; /* samples */
	/* version 3's context: what --separate recorded, -1 where nothing was */
	int32_t tgid, tid, cpu;
	/*
	 * version 4: the process's split key (--separate=cgroup: its cgroup
	 * path, as in the flat files' {cgroup}/KEY), NULL: none. Points into
	 * the table's copy (valid until op_cgs_read returns); stacks of one key
	 * share the pointer.
	 */
	const char *split;
	/*
	 * @depth frames leaf first: a frame's image index + 1 (0: mapped to no
	 * image; above the number of images: none either) and key as the table
	 * stores them
	 */
	const struct cgs_frame *fr;
	uint32_t depth;
};

struct op_cgs_visitor {
	/*
	 * Image @i (0-based; frames and stacks name it as @i + 1) of the table,
	 * each once before any stack; an entry that does not hold together goes
	 * to bad() instead and its frames then name no image. Nonzero stops.
	 */
	int (*image)(void *arg, uint32_t i, const struct op_image_name *n);
	/* One stack (@s and its frames valid during the call). Nonzero stops. */
	int (*stack)(void *arg, const struct op_cgs_stack *s);
	/* An entry or the whole table is left out: why (one phrase). */
	void (*bad)(void *arg, const char *why);
	void *arg;
};

struct op_cgs_info {
	bool valid;                /* the header and areas held together: stacks were read */
	uint32_t version;          /* of the table (0: not a table) */
	uint32_t nimages;          /* images of the table */
	uint64_t overflow_samples; /* samples whose stack found no room */
	uint64_t total_samples;    /* version 2: samples with a stack, stored or not */
	uint64_t budget;           /* version 2: bytes the table may grow to */
};

/*
 * Read the table from @fd (not closed) and visit it. 0 (a table that is
 * not one, or entries that are not, go to bad()), -ENOMEM, or the first
 * nonzero return of a visitor callback. @info (may be NULL) says what the
 * header held.
 */
int op_cgs_read(int fd, const struct op_cgs_visitor *v, struct op_cgs_info *info);

#endif /* OP_CG_READ_H */
