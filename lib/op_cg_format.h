/*
 * op_cg_format.h - the on-disk format of the call-graph plugin's whole-stack
 * table (<session>/samples/current/callgraph/stacks, named in
 * op_session_layout.h), written by plugins/callgraph and read by opreport
 * (-c, --callgraph-output=folded, --flamegraph). Header only.
 * SPDX-License-Identifier: MIT
 *
 * Version 2 (written since issue 15) stores the stacks as a tree: one node
 * per (caller node, frame), so stacks that share their callers share those
 * nodes, and a new stack usually costs one 24-byte node (a system-wide run
 * measured 2.5 nodes per distinct stack against 12.6 frames in version 1).
 * The file is written through a shared mmap, so a crash of the daemon leaves
 * every completed update in the page cache (msync'd at each sync). Little
 * endian, naturally aligned, no pointers:
 *
 *   offset 0                     struct cgs_header2 (80 bytes)
 *   hdr.images_off               struct cgs_image[images_max]
 *   hdr.strings_off              strings_size bytes of image names (NUL-terminated)
 *   hdr.nodes_off                struct cgs_node[nodes_max], nodes_used of them written
 *
 * Nodes are only appended; the file grows (doubling nodes_max) up to the
 * plugin's budget (max_mb=) and is cut to what it uses when the daemon
 * closes it. A node's parent always comes before it. A root node
 * (parent 0) is a stack's context: image = application image index + 1
 * (0 = unknown), key = event counter | CGS_STACK_* flags << 32. A frame node
 * has image = image index + 1 (0 = mapped to no image) and the key in that
 * image, in the key space of the flat sample files (file offset, pc -
 * kernel image start, pc - anon start; the raw pc when unmapped). The frame
 * under a root is the outermost caller; count is the number of samples
 * whose stack ends (leaf) at that node, so a stack is a node with a count,
 * read leaf first by following parents up to the root.
 *
 * Write order makes a torn state harmless: an image name is written before
 * its entry, and the entry before images_used grows; a node is written
 * before nodes_used grows past it (a release store), and its count only
 * grows afterwards. A reader trusts nodes below min(nodes_used, nodes_max,
 * what the file size holds), a parent index below the node's own, and an
 * image index <= images_used. When the budget is spent, samples whose
 * stack needs a new node are counted in overflow_samples.
 *
 * Version 3 (written since issue 19) is version 2 plus a context level:
 * a root whose key has CGS_STACK_CONTEXT set has exactly one child level of
 * context nodes (image = CGS_CTX_IMAGE | (cpu + 1), key = (uint32_t)tgid |
 * (uint64_t)(uint32_t)tid << 32, count 0), and the stack's frames hang
 * under those. A field that was not recorded is -1 (cpu: image low bits 0);
 * the plugin records what its context= argument names, which is to be what
 * the daemon's --separate keeps apart in the flat sample files (thread:
 * tgid and tid, cpu: cpu; operf passes both), and readers use only what the
 * flat files split too. Without it no context node is written and the
 * table stays version 2 (older readers read it). Layout and header are
 * version 2's: a version 2 table continued (--append) with a context
 * becomes version 3 in place, its stacks kept.
 *
 * Version 4 (written since issue 20's --separate=cgroup) is version 3 plus
 * a split level: a root whose key has CGS_STACK_SPLIT set has exactly one
 * child level of split nodes (image = CGS_SPLIT_IMAGE, key = name_off |
 * (uint64_t)name_len << 32 of the process's split key, a cgroup path such
 * as "/system.slice/x.service", NUL-terminated in the strings area beside
 * the image names; count 0); a context node, if the root also has
 * CGS_STACK_CONTEXT, hangs under the split node, and the frames under that.
 * The plugin writes a split node only for processes the daemon keeps apart
 * by --separate=cgroup (the key is the one in the flat sample files' path
 * samples/current/{cgroup}/KEY/...), each key's string once per table; a
 * stack of a process without a key has a root without the flag. A table
 * becomes version 4 in place (the header's version written before the
 * first split node is published) only when such a stack is stored: tables
 * without a split keep version 2 or 3 for older readers. Layout and header
 * are version 2's.
 *
 * Version 1 (struct cgs_header, cgs_stack, cgs_frame below) held a fixed
 * hash table of stacks with their frames in a pool; opreport still reads it.
 */
#ifndef OP_CG_FORMAT_H
#define OP_CG_FORMAT_H

#include <stdint.h>

#define CGS_MAGIC "OPCGSTK" /* 8 bytes with the NUL */
#define CGS_VERSION4 4u     /* what the plugin writes when stacks have a split key */
#define CGS_VERSION 3u      /* what it writes when stacks have a context (no split) */
#define CGS_VERSION2 2u     /* what it writes without (and continues as version 3) */
#define CGS_VERSION1 1u     /* still read */
#define CGS_MAX_DEPTH 255u  /* frames of one stack a reader accepts */

enum cgs_image_kind { CGS_IMG_USER = 0, CGS_IMG_KERNEL = 1, CGS_IMG_ANON = 2 };

#define CGS_STACK_TRUNCATED 1u /* the chain was deeper than the configured depth */
#define CGS_STACK_CONTEXT 2u   /* version 3: the root's children are context nodes */
#define CGS_STACK_SPLIT 4u     /* version 4: the root's children are split nodes */

/* version 3: a context node's image: this bit | (cpu + 1), low bits 0: no cpu */
#define CGS_CTX_IMAGE 0x80000000u
/* version 4: a split node's image (key: the split key's name_off | name_len << 32) */
#define CGS_SPLIT_IMAGE 0x40000000u

struct cgs_image {
	uint32_t name_off;   /* into the strings area */
	uint32_t name_len;   /* without the NUL */
	uint32_t kind;       /* enum cgs_image_kind */
	int32_t tgid;        /* anon only, else -1 */
	uint64_t anon_start; /* anon only: [start, end] */
	uint64_t anon_end;
};

/* versions 2, 3 and 4 */
struct cgs_header2 {
	char magic[8];
	uint32_t version;     /* 2, 3 or 4 */
	uint32_t header_size; /* sizeof(struct cgs_header2) */
	uint32_t images_max, images_used;
	uint32_t strings_size, strings_used;
	uint32_t nodes_max; /* room in the file now (grows) */
	uint32_t nodes_used;
	uint64_t overflow_samples; /* samples whose stack found no room */
	uint64_t total_samples;    /* samples with a stack (stored or not) */
	uint32_t images_off, strings_off;
	uint32_t nodes_off;
	uint32_t stacks_used; /* nodes with a count: distinct stacks */
	uint64_t budget;      /* bytes the file may grow to (max_mb=) */
};

struct cgs_node {
	/* frame: key in its image; root: counter | flags << 32; context: tgid | tid << 32; split: name */
	uint64_t key;
	uint64_t count;  /* samples whose stack ends here */
	uint32_t parent; /* caller (or root) node index + 1; 0: this is a root */
	/* image index + 1; root: the application's; context: CGS_CTX_IMAGE | (cpu + 1); split */
	uint32_t image;
};

/* version 1 */
struct cgs_header {
	char magic[8];
	uint32_t version;
	uint32_t header_size; /* sizeof(struct cgs_header) */
	uint32_t images_max, images_used;
	uint32_t strings_size, strings_used;
	uint32_t stacks_max; /* power of two */
	uint32_t stacks_used;
	uint32_t frames_max, frames_used;
	uint64_t overflow_samples; /* samples whose stack found no room */
	uint64_t total_samples;    /* samples with a stack (stored or not) */
	uint32_t images_off, strings_off;
	/* stacks_off and frames_off follow from the sizes: see cgs_layout() */
};

struct cgs_stack {
	uint64_t id;        /* 0 = free slot; hash of counter, app and frames */
	uint64_t count;     /* samples */
	uint32_t frame_off; /* index of the leaf frame in the frame pool */
	uint16_t depth;     /* frames */
	uint16_t flags;     /* CGS_STACK_* */
	uint32_t counter;   /* event counter of the samples */
	uint32_t app;       /* application image index + 1, 0 = unknown */
};

struct cgs_frame {
	uint32_t image; /* image index + 1; 0 = mapped to no image */
	uint32_t reserved;
	uint64_t key;
};

_Static_assert(sizeof(struct cgs_header2) == 80, "cgs_header2 layout");
_Static_assert(sizeof(struct cgs_node) == 24, "cgs_node layout");
_Static_assert(sizeof(struct cgs_header) == 72, "cgs_header layout");
_Static_assert(sizeof(struct cgs_image) == 32, "cgs_image layout");
_Static_assert(sizeof(struct cgs_stack) == 32, "cgs_stack layout");
_Static_assert(sizeof(struct cgs_frame) == 16, "cgs_frame layout");

struct cgs_layout {
	uint64_t images_off, strings_off, stacks_off, frames_off, size;
};

/* Version 1: offsets of every area for the given capacities (8-byte aligned). */
static inline void cgs_layout(uint32_t images_max, uint32_t strings_size, uint32_t stacks_max,
			      uint32_t frames_max, struct cgs_layout *l)
{
	l->images_off = 4096;
	l->strings_off = l->images_off + (uint64_t)images_max * sizeof(struct cgs_image);
	l->stacks_off = (l->strings_off + strings_size + 4095) & ~(uint64_t)4095;
	l->frames_off = l->stacks_off + (uint64_t)stacks_max * sizeof(struct cgs_stack);
	l->size = l->frames_off + (uint64_t)frames_max * sizeof(struct cgs_frame);
}

struct cgs_layout2 {
	uint64_t images_off, strings_off, nodes_off;
};

/* Version 2: where the images, names and nodes start (nodes go on to the end). */
static inline void cgs_layout2(uint32_t images_max, uint32_t strings_size, struct cgs_layout2 *l)
{
	l->images_off = 4096;
	l->strings_off = l->images_off + (uint64_t)images_max * sizeof(struct cgs_image);
	l->nodes_off = (l->strings_off + strings_size + 4095) & ~(uint64_t)4095;
}

#endif /* OP_CG_FORMAT_H */
