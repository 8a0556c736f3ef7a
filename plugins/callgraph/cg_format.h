/*
 * cg_format.h - the on-disk format of the call-graph plugin's whole-stack
 * table (<session>/samples/current/callgraph/stacks), written by
 * plugins/callgraph and read by opreport (-c, --callgraph-output=folded,
 * --flamegraph). SPDX-License-Identifier: MIT
 *
 * One file, fixed size, created sparse and written through a shared mmap,
 * so a crash of the daemon leaves every completed update in the page cache
 * (msync'd at each sync). Little endian, naturally aligned, no pointers:
 *
 *   offset 0                     struct cgs_header (72 bytes)
 *   hdr.images_off               struct cgs_image[images_max]
 *   hdr.strings_off              strings_size bytes of image names (NUL-terminated)
 *   hdr.stacks_off               struct cgs_stack[stacks_max] (open addressing on id)
 *   hdr.frames_off               struct cgs_frame[frames_max]
 *
 * Write order makes a torn state harmless: an image name is written before
 * its entry, and the entry before images_used grows; a stack's frames and
 * fields are written before its id (a release store), and its count only
 * grows afterwards. So a reader trusts an image index < images_used and a
 * stack whose id is non-zero, after checking that frame_off + depth stays
 * within frames_max and each frame's image is 0 or <= images_used.
 *
 * A stack is one (event counter, application, frame list) triple; frames
 * are stored leaf first, each as (image index + 1, key in that image) with
 * the same key space as the flat sample files (file offset, pc - kernel
 * image start, pc - anon start). Image 0 means the frame mapped to no image
 * (its key is then the raw pc). When the table or the frame pool is full,
 * new stacks are counted in overflow_samples instead.
 */
#ifndef OP_CG_FORMAT_H
#define OP_CG_FORMAT_H

#include <stdint.h>

#define CGS_MAGIC "OPCGSTK"  /* 8 bytes with the NUL */
#define CGS_VERSION 1u
#define CGS_DIR "callgraph"  /* below samples/current */
#define CGS_FILE "stacks"

enum cgs_image_kind { CGS_IMG_USER = 0, CGS_IMG_KERNEL = 1, CGS_IMG_ANON = 2 };

struct cgs_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size;      /* sizeof(struct cgs_header) */
	uint32_t images_max, images_used;
	uint32_t strings_size, strings_used;
	uint32_t stacks_max;       /* power of two */
	uint32_t stacks_used;
	uint32_t frames_max, frames_used;
	uint64_t overflow_samples; /* samples whose stack found no room */
	uint64_t total_samples;    /* samples with a stack (stored or not) */
	uint32_t images_off, strings_off;
	/* stacks_off and frames_off follow from the sizes: see cgs_layout() */
};

struct cgs_image {
	uint32_t name_off;   /* into the strings area */
	uint32_t name_len;   /* without the NUL */
	uint32_t kind;       /* enum cgs_image_kind */
	int32_t tgid;        /* anon only, else -1 */
	uint64_t anon_start; /* anon only: [start, end] */
	uint64_t anon_end;
};

struct cgs_stack {
	uint64_t id;         /* 0 = free slot; hash of counter, app and frames */
	uint64_t count;      /* samples */
	uint32_t frame_off;  /* index of the leaf frame in the frame pool */
	uint16_t depth;      /* frames */
	uint16_t flags;      /* CGS_STACK_* */
	uint32_t counter;    /* event counter of the samples */
	uint32_t app;        /* application image index + 1, 0 = unknown */
};

#define CGS_STACK_TRUNCATED 1u /* the chain was deeper than the configured depth */

struct cgs_frame {
	uint32_t image;      /* image index + 1; 0 = mapped to no image */
	uint32_t reserved;
	uint64_t key;
};

_Static_assert(sizeof(struct cgs_header) == 72, "cgs_header layout");
_Static_assert(sizeof(struct cgs_image) == 32, "cgs_image layout");
_Static_assert(sizeof(struct cgs_stack) == 32, "cgs_stack layout");
_Static_assert(sizeof(struct cgs_frame) == 16, "cgs_frame layout");

struct cgs_layout {
	uint64_t images_off, strings_off, stacks_off, frames_off, size;
};

/* Offsets of every area for the given capacities (8-byte aligned). */
static inline void cgs_layout(uint32_t images_max, uint32_t strings_size, uint32_t stacks_max,
			      uint32_t frames_max, struct cgs_layout *l)
{
	l->images_off = 4096;
	l->strings_off = l->images_off + (uint64_t)images_max * sizeof(struct cgs_image);
	l->stacks_off = (l->strings_off + strings_size + 4095) & ~(uint64_t)4095;
	l->frames_off = l->stacks_off + (uint64_t)stacks_max * sizeof(struct cgs_stack);
	l->size = l->frames_off + (uint64_t)frames_max * sizeof(struct cgs_frame);
}

#endif /* OP_CG_FORMAT_H */
