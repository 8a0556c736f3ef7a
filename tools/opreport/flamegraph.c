/*
 * flamegraph.c - merge stacks into a tree (children sorted by name, as
 * flamegraph.pl does) and lay it out as an SVG: root at the bottom, each
 * box as wide as its inclusive samples, coloured by kind (user, kernel,
 * process, other), hover titles with counts and percentages, and a script
 * of our own for click-to-zoom and search (flamegraph.pl's is CDDL).
 * SPDX-License-Identifier: MIT
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
	enum fg_kind kind;
	uint64_t count; /* inclusive */
	struct fg_node **kids;
	size_t nkids, capkids;
};

struct flamegraph {
	struct fg_node root;
	unsigned max_depth;
	char *note;
};

#define FG_ROW 16        /* pixels per frame */
#define FG_PAD_TOP 56    /* title, note, buttons */
#define FG_PAD_BOTTOM 24 /* details, matched share */
#define FG_MARGIN 10
#define FG_CHAR_PX 7.0 /* rough width of a 12 px glyph */
#define FG_MIN_PX 0.1  /* narrower boxes are left out */

/*
 * The script: WIDTH, MARGIN, CHAR_W and TOTAL are defined before it. Frames
 * are the <g> of #frames, each with data-s (samples before it in its row,
 * from the left) and data-n (its samples): zooming compares those integers,
 * never pixel positions. Indented with spaces: the SVG holds no control
 * character but the newline.
 */
static const char fg_script[] =
	"var frames = [], details, details_idle, unzoom_btn, search_btn, matched, searching = false;\n"
	"function init() {\n"
	"  var gs = document.getElementById(\"frames\").getElementsByTagName(\"g\");\n"
	"  details = document.getElementById(\"details\");\n"
	"  details_idle = details.textContent;\n"
	"  unzoom_btn = document.getElementById(\"unzoom\");\n"
	"  search_btn = document.getElementById(\"search\");\n"
	"  matched = document.getElementById(\"matched\");\n"
	"  for (var i = 0; i < gs.length; i++) {\n"
	"    var g = gs[i], r = g.getElementsByTagName(\"rect\")[0];\n"
	"    var title = g.getElementsByTagName(\"title\")[0].textContent;\n"
	"    g.fg = { r: r, t: g.getElementsByTagName(\"text\")[0], title: title,\n"
	"      name: title.replace(/ \\([0-9]+ samples?, [0-9.]+%\\)$/, \"\"),\n"
	"      s: +g.getAttribute(\"data-s\"), n: +g.getAttribute(\"data-n\"),\n"
	"      y: +r.getAttribute(\"y\"), fill: r.getAttribute(\"fill\"),\n"
	"      root: g.getAttribute(\"class\") == \"f r\" };\n"
	"    g.onclick = function () { zoom(this); };\n"
	"    g.onmouseover = function () { details.textContent = this.fg.title; };\n"
	"    g.onmouseout = function () { details.textContent = details_idle; };\n"
	"    frames.push(g);\n"
	"  }\n"
	"  unzoom_btn.onclick = unzoom;\n"
	"  search_btn.onclick = search_prompt;\n"
	"  window.addEventListener(\"keydown\", function (e) {\n"
	"    if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && e.keyCode === 70)) {\n"
	"      e.preventDefault();\n"
	"      search_prompt();\n"
	"    } else if (e.keyCode === 27) {\n"
	"      unzoom();\n"
	"      reset_search();\n"
	"    }\n"
	"  }, false);\n"
	"}\n"
	"function place(g, x, w) {\n"
	"  var f = g.fg, fit = Math.floor((w - 6) / CHAR_W), s = f.name;\n"
	"  g.style.display = \"\";\n"
	"  f.r.setAttribute(\"x\", x.toFixed(2));\n"
	"  f.r.setAttribute(\"width\", w.toFixed(2));\n"
	"  f.t.setAttribute(\"x\", (x + 3).toFixed(2));\n"
	"  if (w < 3 * CHAR_W)\n"
	"    s = \"\";\n"
	"  else if (s.length > fit)\n"
	"    s = fit > 2 ? s.substring(0, fit - 2) + \"..\" : \"\";\n"
	"  f.t.textContent = s;\n"
	"}\n"
	"/* the clicked frame spans the width; its callers too (faded); the rest hides */\n"
	"function zoom(z) {\n"
	"  var zs = z.fg.s, zn = z.fg.n, zy = z.fg.y, scale = (WIDTH - 2 * MARGIN) / zn;\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var g = frames[i], f = g.fg;\n"
	"    if (f.y > zy && f.s <= zs && f.s + f.n >= zs + zn) {\n"
	"      place(g, MARGIN, WIDTH - 2 * MARGIN);\n"
	"      g.setAttribute(\"opacity\", \"0.6\");\n"
	"    } else if (f.y <= zy && f.s >= zs && f.s + f.n <= zs + zn) {\n"
	"      place(g, MARGIN + (f.s - zs) * scale, f.n * scale);\n"
	"      g.removeAttribute(\"opacity\");\n"
	"    } else {\n"
	"      g.style.display = \"none\";\n"
	"    }\n"
	"  }\n"
	"  unzoom_btn.style.display = \"\";\n"
	"}\n"
	"function unzoom() {\n"
	"  var scale = (WIDTH - 2 * MARGIN) / TOTAL;\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    place(frames[i], MARGIN + frames[i].fg.s * scale, frames[i].fg.n * scale);\n"
	"    frames[i].removeAttribute(\"opacity\");\n"
	"  }\n"
	"  unzoom_btn.style.display = \"none\";\n"
	"}\n"
	"function search_prompt() {\n"
	"  if (searching) {\n"
	"    reset_search();\n"
	"    return;\n"
	"  }\n"
	"  var term = window.prompt(\"Search frames for (a regular expression):\", \"\");\n"
	"  if (term)\n"
	"    search(term);\n"
	"}\n"
	"/* highlight the frames whose name matches; their share, nested matches counted once */\n"
	"function search(term) {\n"
	"  var re, hits = [], sum = 0, end = 0;\n"
	"  try {\n"
	"    re = new RegExp(term);\n"
	"  } catch (e) {\n"
	"    window.alert(\"not a regular expression: \" + term);\n"
	"    return;\n"
	"  }\n"
	"  for (var i = 0; i < frames.length; i++) {\n"
	"    var f = frames[i].fg;\n"
	"    if (!f.root && re.test(f.name)) {\n"
	"      f.r.setAttribute(\"fill\", \"rgb(230,0,230)\");\n"
	"      hits.push(f);\n"
	"    } else {\n"
	"      f.r.setAttribute(\"fill\", f.fill);\n"
	"    }\n"
	"  }\n"
	"  hits.sort(function (a, b) { return a.s - b.s; });\n"
	"  for (var j = 0; j < hits.length; j++) {\n"
	"    var b = hits[j].s + hits[j].n;\n"
	"    if (b > end) {\n"
	"      sum += b - Math.max(hits[j].s, end);\n"
	"      end = b;\n"
	"    }\n"
	"  }\n"
	"  matched.textContent = \"Matched: \" + (TOTAL ? (100 * sum / TOTAL).toFixed(1) : \"0.0\") + \"%\";\n"
	"  search_btn.textContent = \"Reset Search\";\n"
	"  searching = true;\n"
	"}\n"
	"function reset_search() {\n"
	"  for (var i = 0; i < frames.length; i++)\n"
	"    frames[i].fg.r.setAttribute(\"fill\", frames[i].fg.fill);\n"
	"  matched.textContent = \"\";\n"
	"  search_btn.textContent = \"Search\";\n"
	"  searching = false;\n"
	"}\n";

struct flamegraph *fg_new(void)
{
	struct flamegraph *fg = calloc(1, sizeof(*fg));

	if (fg && !(fg->root.name = strdup("all"))) {
		free(fg);
		return NULL;
	}
	if (fg)
		fg->root.kind = FG_OTHER;
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
	free(fg->note);
	free(fg);
}

uint64_t fg_total(const struct flamegraph *fg)
{
	return fg->root.count;
}

int fg_set_note(struct flamegraph *fg, const char *note)
{
	char *n = note && *note ? strdup(note) : NULL;

	if (note && *note && !n)
		return -ENOMEM;
	free(fg->note);
	fg->note = n;
	return 0;
}

static int fg_order(const struct fg_node *n, const char *name, enum fg_kind kind)
{
	int r = strcmp(n->name, name);

	return r ? r : (int)n->kind - (int)kind;
}

/* the child @name of kind @kind of @n, added in name order when missing */
static struct fg_node *fg_child(struct fg_node *n, const char *name, enum fg_kind kind)
{
	size_t lo = 0, hi = n->nkids;
	struct fg_node *c;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int r = fg_order(n->kids[mid], name, kind);

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
	c->kind = kind;
	memmove(&n->kids[lo + 1], &n->kids[lo], (n->nkids - lo) * sizeof(*n->kids));
	n->kids[lo] = c;
	n->nkids++;
	return c;
}

int fg_add_kinds(struct flamegraph *fg, const char *const *frames, const enum fg_kind *kinds,
		 size_t n, uint64_t count)
{
	struct fg_node *cur = &fg->root;

	cur->count += count;
	for (size_t i = 0; i < n; i++) {
		cur = fg_child(cur, frames[i] ? frames[i] : "[unknown]",
			       frames[i] ? (kinds ? kinds[i] : FG_USER) : FG_OTHER);
		if (!cur)
			return -ENOMEM;
		cur->count += count;
	}
	if (n > fg->max_depth)
		fg->max_depth = (unsigned)n;
	return 0;
}

int fg_add(struct flamegraph *fg, const char *const *frames, size_t n, uint64_t count)
{
	return fg_add_kinds(fg, frames, NULL, n, count);
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
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
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

/*
 * Colours stable between runs (from the name), the hue from the kind, as
 * flamegraph.pl's perf/java palettes: user code red to red-orange (green
 * 40..100), kernel code orange to amber (green 150..205), processes
 * blue-grey, the root and placeholders grey.
 */
static void fg_color(const struct fg_node *n, unsigned *r, unsigned *g, unsigned *b)
{
	uint32_t h = 2166136261u;
	unsigned v1, v2, v3;

	for (const char *s = n->name; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	v1 = h % 256;
	v2 = (h >> 8) % 256;
	v3 = (h >> 16) % 256;
	switch (n->kind) {
	case FG_KERNEL:
		*r = 230 + v1 * 25 / 255;
		*g = 150 + v2 * 55 / 255;
		*b = v3 * 40 / 255;
		break;
	case FG_PROC:
		*r = 140 + v1 * 40 / 255;
		*g = 165 + v1 * 35 / 255;
		*b = 210 + v2 * 35 / 255;
		break;
	case FG_OTHER:
		*r = *g = *b = 180 + v1 * 30 / 255;
		break;
	default:
		*r = 200 + v1 * 55 / 255;
		*g = 40 + v2 * 60 / 255;
		*b = 20 + v3 * 45 / 255;
	}
}

static const char fg_class[] = {
	[FG_USER] = 'u', [FG_KERNEL] = 'k', [FG_PROC] = 'p', [FG_OTHER] = 'o'
};

/* @n and what it calls; @start: samples left of it in its row */
static void fg_draw(FILE *f, const struct fg_node *n, uint64_t start, unsigned depth, double scale,
		    uint64_t total, unsigned height)
{
	double w = (double)n->count * scale, x = FG_MARGIN + (double)start * scale;
	double y = height - FG_PAD_BOTTOM - (double)(depth + 1) * FG_ROW;
	unsigned r, g, b;

	if (w < FG_MIN_PX)
		return;
	fg_color(n, &r, &g, &b);
	fprintf(f, "<g class=\"f %c\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64 "\"><title>",
		depth ? fg_class[n->kind] : 'r', start, n->count);
	fg_escape(f, n->name, 4096);
	fprintf(f, " (%" PRIu64 " samples, %.2f%%)</title>", n->count,
		total ? 100.0 * (double)n->count / (double)total : 0.0);
	fprintf(f,
		"<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" rx=\"2\" "
		"fill=\"rgb(%u,%u,%u)\"/>",
		x, y, w, FG_ROW - 1, r, g, b);
	/* always a text element: zooming fills it in */
	fprintf(f, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FG_ROW - 4.5);
	if (w > 3 * FG_CHAR_PX) {
		size_t fit = (size_t)((w - 6) / FG_CHAR_PX), len = fg_chars(n->name);

		if (len <= fit) {
			fg_escape(f, n->name, len);
		} else if (fit > 2) {
			fg_escape(f, n->name, fit - 2);
			fputs("..", f);
		}
	}
	fputs("</text></g>\n", f);
	for (size_t i = 0; i < n->nkids; i++) {
		fg_draw(f, n->kids[i], start, depth + 1, scale, total, height);
		start += n->kids[i]->count;
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
		"xmlns=\"http://www.w3.org/2000/svg\" onload=\"init()\">\n"
		"<style>text { font-family: Verdana, sans-serif; font-size: 12px; fill: #000; }\n"
		".f { cursor: pointer; } .f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
		".button { cursor: pointer; fill: #226; } .button:hover { text-decoration: underline; }"
		"</style>\n"
		"<script type=\"text/ecmascript\"><![CDATA[\n"
		"var WIDTH = %u, MARGIN = %d, CHAR_W = %.1f, TOTAL = %" PRIu64 ";\n"
		"%s]]></script>\n"
		"<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"%u\" y=\"24\" text-anchor=\"middle\" style=\"font-size: 17px\">",
		width, height, width, height, width, FG_MARGIN, FG_CHAR_PX, fg->root.count,
		fg_script, width, height, width / 2);
	fg_escape(f, title ? title : "Flame Graph", 512);
	fputs("</text>\n", f);
	if (fg->note) {
		fprintf(f,
			"<text x=\"%u\" y=\"42\" text-anchor=\"middle\" "
			"style=\"font-size: 11px; fill: #a00\">",
			width / 2);
		fg_escape(f, fg->note, 1024);
		fputs("</text>\n", f);
	}
	fprintf(f,
		"<text id=\"unzoom\" class=\"button\" x=\"%d\" y=\"24\" style=\"display: none\">"
		"Reset Zoom</text>\n"
		"<text id=\"search\" class=\"button\" x=\"%u\" y=\"24\" text-anchor=\"end\">Search"
		"</text>\n"
		"<text id=\"matched\" x=\"%u\" y=\"%u\" text-anchor=\"end\"></text>\n"
		"<text id=\"details\" x=\"%d\" y=\"%u\" style=\"font-size: 11px; fill: #555\">"
		"%" PRIu64 " samples; hover a box for its count and share, click to zoom, "
		"Ctrl-F to search</text>\n"
		"<g id=\"frames\">\n",
		FG_MARGIN, width - FG_MARGIN, width - FG_MARGIN, height - 8, FG_MARGIN, height - 8,
		fg->root.count);
	if (fg->root.count)
		fg_draw(f, &fg->root, 0, 0, scale, fg->root.count, height);
	fputs("</g>\n</svg>\n", f);
	return ferror(f) ? -EIO : 0;
}
