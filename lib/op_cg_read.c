/*
 * op_cg_read.c - the whole-stack table read and visited (op_cg_read.h):
 * versions 2 to 4's node tree walked from each counted node up to its root
 * (version 4's split node, under a root that says it has one, giving the
 * stack's split key; version 3's context node, under a root or split node
 * that says it has one, giving the stack's tgid, tid and cpu), version 1's
 * hash table of stacks with their frames in a pool.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_cg_read.h"

/*
 * The whole file in private memory with pread: another process may cut it
 * meanwhile (a mapping would die of SIGBUS); then what was read counts.
 * NULL with errno on failure.
 */
static char *cgs_read_whole(int fd, size_t *got)
{
	struct stat st;
	size_t len, off = 0;
	char *buf;

	if (fstat(fd, &st))
		return NULL;
	if (!S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size > SIZE_MAX - 1) {
		errno = EINVAL;
		return NULL;
	}
	len = (size_t)st.st_size;
	buf = malloc(len + 1);
	if (!buf)
		return NULL;
	while (off < len) {
		ssize_t r = pread(fd, buf + off, len - off, (off_t)off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		off += (size_t)r;
	}
	*got = off;
	return buf;
}

static int cgs_images(const struct op_cgs_visitor *v, const struct cgs_image *imgs, uint32_t nimg,
		      const char *strs, uint32_t strings_size)
{
	int ret = 0;

	for (uint32_t i = 0; i < nimg && !ret; i++) {
		const struct cgs_image *ci = &imgs[i];
		struct op_image_name n = { 0 };

		if ((uint64_t)ci->name_off + ci->name_len >= strings_size ||
		    strs[ci->name_off + ci->name_len] || ci->kind > CGS_IMG_ANON) {
			v->bad(v->arg, "an image entry points outside its name area");
			continue;
		}
		n.kind = ci->kind == CGS_IMG_KERNEL ? OP_IMAGE_KERNEL :
			 ci->kind == CGS_IMG_ANON   ? OP_IMAGE_ANON :
						      OP_IMAGE_USER;
		n.path = strs + ci->name_off;
		n.tgid = ci->tgid;
		n.start = ci->anon_start;
		n.end = ci->anon_end;
		ret = v->image(v->arg, i, &n);
	}
	return ret;
}

static int cgs_v1(const char *base, size_t size, const struct op_cgs_visitor *v,
		  struct op_cgs_info *info)
{
	const struct cgs_header *h = (const void *)base;
	const struct cgs_stack *stacks;
	const struct cgs_frame *frames;
	struct cgs_layout l;
	uint32_t nimg;
	int ret;

	if (size < sizeof(*h) || h->header_size != sizeof(*h) || !h->stacks_max ||
	    (h->stacks_max & (h->stacks_max - 1))) {
		v->bad(v->arg, "not a version 1 stack table (bad sizes)");
		return 0;
	}
	cgs_layout(h->images_max, h->strings_size, h->stacks_max, h->frames_max, &l);
	if (l.size > size || h->images_off != l.images_off || h->strings_off != l.strings_off) {
		v->bad(v->arg, "its areas do not fit the file");
		return 0;
	}
	nimg = h->images_used <= h->images_max ? h->images_used : h->images_max;
	info->valid = true;
	info->nimages = nimg;
	info->overflow_samples = h->overflow_samples;
	ret = cgs_images(v, (const void *)(base + l.images_off), nimg, base + l.strings_off,
			 h->strings_size);
	stacks = (const void *)(base + l.stacks_off);
	frames = (const void *)(base + l.frames_off);
	for (uint32_t i = 0; i < h->stacks_max && !ret; i++) {
		const struct cgs_stack *s = &stacks[i];

		if (!s->id || !s->count)
			continue;
		if (!s->depth || s->depth > CGS_MAX_DEPTH || s->frame_off > h->frames_max ||
		    s->depth > h->frames_max - s->frame_off || s->app > nimg) {
			v->bad(v->arg, "a stack's frames lie outside the frame pool");
			continue;
		}
		ret = v->stack(v->arg,
			       &(struct op_cgs_stack){ .app = s->app,
						       .truncated = s->flags & CGS_STACK_TRUNCATED,
						       .count = s->count,
						       .tgid = -1,
						       .tid = -1,
						       .cpu = -1,
						       .fr = &frames[s->frame_off],
						       .depth = s->depth });
	}
	return ret;
}

/*
 * version 4: the split key a split node names in the strings area (a
 * NUL-terminated absolute path), NULL when it names none
 */
static const char *cgs_split_key(uint64_t key, const char *strs, uint32_t strings_size)
{
	uint32_t off = (uint32_t)key, len = (uint32_t)(key >> 32);

	if (!len || (uint64_t)off + len >= strings_size || strs[off + len] || strs[off] != '/' ||
	    memchr(strs + off, '\0', len))
		return NULL;
	return strs + off;
}

/* versions 2, 3 and 4 (@version) */
static int cgs_v2(const char *base, size_t size, uint32_t version, const struct op_cgs_visitor *v,
		  struct op_cgs_info *info)
{
	const struct cgs_header2 *h = (const void *)base;
	/* the frames, a context node and a split node */
	struct cgs_frame fr[CGS_MAX_DEPTH + 2];
	const struct cgs_node *nodes;
	struct cgs_layout2 l;
	uint64_t nnodes;
	uint32_t nimg;
	int ret;

	if (size < sizeof(*h) || h->header_size != sizeof(*h)) {
		v->bad(v->arg, "not a version 2, 3 or 4 stack table (bad header size)");
		return 0;
	}
	cgs_layout2(h->images_max, h->strings_size, &l);
	if (l.nodes_off > size || h->images_off != l.images_off ||
	    h->strings_off != l.strings_off || h->nodes_off != l.nodes_off) {
		v->bad(v->arg, "its areas do not fit the file");
		return 0;
	}
	/* the nodes written and still in the file (a reader's copy may be shorter) */
	nnodes = (size - l.nodes_off) / sizeof(*nodes);
	if (h->nodes_max < nnodes)
		nnodes = h->nodes_max;
	if (h->nodes_used < nnodes)
		nnodes = h->nodes_used;
	nimg = h->images_used <= h->images_max ? h->images_used : h->images_max;
	info->valid = true;
	info->nimages = nimg;
	info->overflow_samples = h->overflow_samples;
	info->total_samples = h->total_samples;
	info->budget = h->budget;
	ret = cgs_images(v, (const void *)(base + l.images_off), nimg, base + l.strings_off,
			 h->strings_size);
	nodes = (const void *)(base + l.nodes_off);
	for (uint64_t i = 0; i < nnodes && !ret; i++) {
		struct op_cgs_stack st = { .tgid = -1, .tid = -1, .cpu = -1, .fr = fr };
		uint64_t k = i, rflags;
		uint32_t depth = 0;
		bool ctx_bad = false, split_bad = false;

		if (!nodes[i].count || !nodes[i].parent)
			continue;
		/* parents come first: each step goes down, so the walk ends */
		while (nodes[k].parent && depth < CGS_MAX_DEPTH + 2 && nodes[k].parent - 1 < k) {
			const struct cgs_node *up = &nodes[nodes[k].parent - 1];

			/* only version 3 and 4 have context nodes, under a root or a split node */
			if (nodes[k].image & CGS_CTX_IMAGE)
				ctx_bad |= version < CGS_VERSION ||
					   (up->parent && up->image != CGS_SPLIT_IMAGE);
			/* only version 4 has split nodes, and only right under a root */
			if (nodes[k].image == CGS_SPLIT_IMAGE)
				split_bad |= version < CGS_VERSION4 || up->parent;
			fr[depth].image = nodes[k].image;
			fr[depth].reserved = 0;
			fr[depth++].key = nodes[k].key;
			k = nodes[k].parent - 1;
		}
		rflags = nodes[k].key >> 32;
		if (nodes[k].parent || nodes[k].image > nimg) {
			v->bad(v->arg, "a stack's nodes do not lead back to a root");
			continue;
		}
		if (rflags & CGS_STACK_SPLIT) {
			const struct cgs_frame *c = depth ? &fr[depth - 1] : NULL;

			/* the split node, then at least one more */
			if (!c || c->image != CGS_SPLIT_IMAGE || depth < 2 || split_bad) {
				v->bad(v->arg, "a stack's split node is missing or misplaced");
				continue;
			}
			st.split = cgs_split_key(c->key, base + l.strings_off, h->strings_size);
			if (!st.split) {
				v->bad(v->arg, "a stack's split key lies outside the name area");
				continue;
			}
			depth--;
		} else if (split_bad || (depth && fr[depth - 1].image == CGS_SPLIT_IMAGE)) {
			v->bad(v->arg, "a split node under a root without one");
			continue;
		}
		if (rflags & CGS_STACK_CONTEXT) {
			const struct cgs_frame *c = depth ? &fr[depth - 1] : NULL;

			/* the context, then at least one frame */
			if (!c || !(c->image & CGS_CTX_IMAGE) || depth < 2 || ctx_bad) {
				v->bad(v->arg, "a stack's context node is missing or misplaced");
				continue;
			}
			st.tgid = (int32_t)(uint32_t)c->key;
			st.tid = (int32_t)(uint32_t)(c->key >> 32);
			st.cpu = (int32_t)(c->image & ~CGS_CTX_IMAGE) - 1;
			depth--;
		} else if (ctx_bad || (depth && (fr[depth - 1].image & CGS_CTX_IMAGE))) {
			v->bad(v->arg, "a context node under a root without one");
			continue;
		}
		if (depth > CGS_MAX_DEPTH) {
			v->bad(v->arg, "a stack is deeper than a reader accepts");
			continue;
		}
		st.app = nodes[k].image;
		st.truncated = rflags & CGS_STACK_TRUNCATED;
		st.count = nodes[i].count;
		st.depth = depth;
		ret = v->stack(v->arg, &st);
	}
	return ret;
}

int op_cgs_read(int fd, const struct op_cgs_visitor *v, struct op_cgs_info *info)
{
	struct op_cgs_info dummy;
	const struct cgs_header *h;
	size_t size = 0;
	char *base;
	int ret = 0;

	if (!info)
		info = &dummy;
	memset(info, 0, sizeof(*info));
	base = cgs_read_whole(fd, &size);
	if (!base) {
		if (errno == ENOMEM)
			return -ENOMEM;
		v->bad(v->arg, "cannot be read");
		return 0;
	}
	h = (const void *)base;
	if (size < 16 || memcmp(h->magic, CGS_MAGIC, 8)) {
		v->bad(v->arg, "not a stack table (shorter than its header, or bad magic)");
		goto out;
	}
	info->version = h->version;
	if (h->version == CGS_VERSION4 || h->version == CGS_VERSION || h->version == CGS_VERSION2)
		ret = cgs_v2(base, size, h->version, v, info);
	else if (h->version == CGS_VERSION1)
		ret = cgs_v1(base, size, v, info);
	else
		v->bad(v->arg, "a stack table of an unknown version (a newer oprofiled?)");
out:
	free(base);
	return ret;
}
