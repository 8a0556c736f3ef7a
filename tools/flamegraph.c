/*
 * flamegraph.c - merge stacks into a tree (children sorted by name, as
 * flamegraph.pl does) and lay it out as an SVG: root at the bottom, each
 * box as wide as its inclusive samples, hover titles with counts and
 * percentages. SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph.h"
#include "opreport.h"

struct fg_node {
	char *name;
	uint64_t count;           /* inclusive */
	struct fg_node **kids;
	size_t nkids, capkids;
};

struct flamegraph {
	struct fg_node root;
	unsigned max_depth;
};

#define FG_ROW 16        /* pixels per frame */
#define FG_PAD_TOP 40
#define FG_PAD_BOTTOM 24
#define FG_MARGIN 10
#define FG_CHAR_PX 7.0   /* rough width of a 12 px glyph */
#define FG_MIN_PX 0.1    /* narrower boxes are left out */

struct flamegraph *fg_new(void)
{
	struct flamegraph *fg = calloc(1, sizeof(*fg));

	if (fg && !(fg->root.name = strdup("all"))) {
		free(fg);
		return NULL;
	}
	return fg;
}

static void fg_node_free(struct fg_node *n)
{
	for (size_t i = 0; i < n->nkids; i++) {
		fg_node_free(n->kids[i]);
		free(n->kids[i]);
	}
	free(n->kids);
	free(n->name);
}

void fg_free(struct flamegraph *fg)
{
	if (!fg)
		return;
	fg_node_free(&fg->root);
	free(fg);
}

uint64_t fg_total(const struct flamegraph *fg)
{
	return fg->root.count;
}

/* the child @name of @n, added in name order when missing */
static struct fg_node *fg_child(struct fg_node *n, const char *name)
{
	size_t lo = 0, hi = n->nkids;
	struct fg_node *c;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = strcmp(n->kids[mid]->name, name);

		if (!r)
			return n->kids[mid];
		if (r < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (n->nkids == n->capkids) {
		size_t ncap = n->capkids ? 2 * n->capkids : 4;
		struct fg_node **nv = realloc(n->kids, ncap * sizeof(*nv));

		if (!nv)
			return NULL;
		n->kids = nv;
		n->capkids = ncap;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->name = strdup(name))) {
		free(c);
		return NULL;
	}
	memmove(&n->kids[lo + 1], &n->kids[lo], (n->nkids - lo) * sizeof(*n->kids));
	n->kids[lo] = c;
	n->nkids++;
	return c;
}

int fg_add(struct flamegraph *fg, const char *const *frames, size_t n, uint64_t count)
{
	struct fg_node *cur = &fg->root;

	cur->count += count;
	for (size_t i = 0; i < n; i++) {
		cur = fg_child(cur, frames[i] ? frames[i] : "[unknown]");
		if (!cur)
			return -ENOMEM;
		cur->count += count;
	}
	if (n > fg->max_depth)
		fg->max_depth = (unsigned)n;
	return 0;
}

/*
 * @s as XML text, at most @max characters: control characters become '?',
 * bytes that are not UTF-8 (and U+FFFE/U+FFFF) U+FFFD, so that the SVG stays
 * valid UTF-8 XML whatever a frame's name holds; never half a character.
 */
static void fg_escape(FILE *f, const char *s, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0; *u && i < max; i++) {
		uint32_t c = 0;
		size_t n = txt_utf8_len(u, &c);

		if (!n || c == 0xfffe || c == 0xffff) {
			fputs("\xef\xbf\xbd", f);
			u += n ? n : 1;
			continue;
		}
		switch (c) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fputc('?', f);
			else
				fwrite(u, 1, n, f);
		}
		u += n;
	}
}

/* characters in @s as fg_escape counts them */
static size_t fg_chars(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = 0;

	while (*u) {
		size_t l = txt_utf8_len(u, NULL);

		u += l ? l : 1;
		n++;
	}
	return n;
}

/* warm colours from the name, stable between runs */
static void fg_color(const char *name, unsigned *r, unsigned *g, unsigned *b)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	*r = 205 + (h % 50);
	*g = 80 + ((h >> 8) % 150);
	*b = 30 + ((h >> 16) % 50);
}

static void fg_draw(FILE *f, const struct fg_node *n, double x, unsigned depth, double scale,
		    uint64_t total, unsigned height)
{
	double w = (double)n->count * scale, cx = x;
	double y = height - FG_PAD_BOTTOM - (double)(depth + 1) * FG_ROW;
	unsigned r, g, b;

	if (w < FG_MIN_PX)
		return;
	fg_color(n->name, &r, &g, &b);
	fputs("<g><title>", f);
	fg_escape(f, n->name, 4096);
	fprintf(f, " (%" PRIu64 " samples, %.2f%%)</title>", n->count,
		total ? 100.0 * (double)n->count / (double)total : 0.0);
	fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" rx=\"2\" "
		   "fill=\"rgb(%u,%u,%u)\"/>",
		x, y, w, FG_ROW - 1, r, g, b);
	if (w > 3 * FG_CHAR_PX) {
		size_t fit = (size_t)((w - 6) / FG_CHAR_PX), len = fg_chars(n->name);

		fprintf(f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FG_ROW - 4.5);
		if (len <= fit) {
			fg_escape(f, n->name, len);
		} else if (fit > 2) {
			fg_escape(f, n->name, fit - 2);
			fputs("..", f);
		}
		fputs("</text>", f);
	}
	fputs("</g>\n", f);
	for (size_t i = 0; i < n->nkids; i++) {
		fg_draw(f, n->kids[i], cx, depth + 1, scale, total, height);
		cx += (double)n->kids[i]->count * scale;
	}
}

int fg_write_svg(const struct flamegraph *fg, FILE *f, const char *title, unsigned width)
{
	unsigned height;
	double scale;

	if (!width)
		width = 1200;
	height = FG_PAD_TOP + FG_PAD_BOTTOM + (fg->max_depth + 1) * FG_ROW;
	scale = fg->root.count ? (double)(width - 2 * FG_MARGIN) / (double)fg->root.count : 0;
	fprintf(f,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }"
		" rect:hover { stroke: #000; stroke-width: 0.5; }</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"%u\" y=\"24\" text-anchor=\"middle\" style=\"font-size: 17px\">",
		width, height, width, height, width, height, width / 2);
	fg_escape(f, title ? title : "Flame Graph", 512);
	fprintf(f, "</text>\n<text x=\"%d\" y=\"%u\" style=\"font-size: 11px; fill: #555\">"
		   "%" PRIu64 " samples; hover a box for its count and share</text>\n",
		FG_MARGIN, height - 8, fg->root.count);
	if (fg->root.count)
		fg_draw(f, &fg->root, FG_MARGIN, 0, scale, fg->root.count, height);
	fputs("</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
