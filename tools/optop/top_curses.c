/*
 * top_curses.c - optop's ncurses view: the header, the rows with a
 * selection, the keys (q z p s / k u, arrows and pages, enter, h), the
 * detail screen of a symbol (per-address counts, callers in a call-graph
 * session) and redraws on resize. Messages written to stderr while the
 * screen is up are held in a temporary file and shown after it is gone.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <curses.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "optop.h"

#define HELD_MAX_LINES 20

enum top_screen { SCR_ROWS, SCR_DETAIL, SCR_HELP };

struct cview {
	struct top_model *m;
	struct top_view *tv;
	struct top_source *s;
	const struct top_opts *o;
	enum top_screen scr;
	size_t sel, first; /* selected row and first row shown (indexes of tv->v) */
	long sel_row;      /* the selected model row, kept across refreshes; -1 none */
	long detail_row;
	char *callers; /* of the detail row, read once when it opens */
	size_t dscroll;
};

static const char *const help_text[] = {
	"optop keys",
	"",
	"  q            quit",
	"  z            cumulative counts / the last period's delta",
	"  p            pause / resume the refreshes",
	"  s            next sort key (samples, symbol, image)",
	"  /            filter: rows whose image or symbol contains the text (empty: none)",
	"  k            kernel symbols only (again: all)",
	"  u            user symbols only (again: all)",
	"  up, down     move the selection; PgUp, PgDn, Home, End",
	"  enter        the selected symbol: its sampled addresses, and its callers in a",
	"               call-graph session (enter, left or Esc: back)",
	"  h, ?         this help (any key: back)",
	"",
	"The header: the event and its rate, samples per second of the last period, the",
	"session's samples, the samples lost (and how many in the last period).",
	NULL,
};

static int rows_area(void)
{
	return LINES - 4; /* two header lines, the column titles, the status line */
}

static void put_line(int y, const char *text, bool reverse)
{
	if (reverse)
		attron(A_REVERSE);
	mvaddnstr(y, 0, text, COLS);
	if (reverse) {
		/* the bar fills the line */
		for (int x = (int)strlen(text); x < COLS; x++)
			mvaddch(y, x, ' ');
		attroff(A_REVERSE);
	}
}

static void draw_rows(struct cview *c)
{
	char l1[1536], l2[1536], line[1024];
	int h = rows_area();

	view_header(c->m, c->tv, c->s->note, l1, sizeof(l1), l2, sizeof(l2));
	put_line(0, l1, false);
	put_line(1, l2, false);
	snprintf(line, sizeof(line), "%10s %7s  %-24s %s", "samples", "%", "image", "symbol");
	put_line(2, line, true);
	if (c->sel >= c->tv->n)
		c->sel = c->tv->n ? c->tv->n - 1 : 0;
	if (c->sel < c->first)
		c->first = c->sel;
	if (h > 0 && c->sel >= c->first + (size_t)h)
		c->first = c->sel - (size_t)h + 1;
	for (int y = 0; y < h && c->first + (size_t)y < c->tv->n; y++) {
		size_t i = c->first + (size_t)y;

		top_format_row(c->m, c->tv, &c->m->rows[c->tv->v[i]], line, sizeof(line));
		put_line(3 + y, line, i == c->sel);
	}
	if (!c->tv->n)
		put_line(4,
			 c->m->refreshes < 2 ? "  (waiting for the first period)" :
					       "  (no samples in this view)",
			 false);
	snprintf(line, sizeof(line),
		 " %zu rows | h help | q quit | z %s | p %s | s sort | / filter", c->tv->n,
		 c->tv->cumulative ? "delta" : "cumulative", c->tv->paused ? "resume" : "pause");
	put_line(LINES - 1, line, true);
}

static void draw_detail(struct cview *c)
{
	const struct top_row *r = &c->m->rows[c->detail_row];
	const struct top_image *ti = &c->m->imgs[r->img];
	char line[1024], split[32];
	struct top_addr_count *addrs = NULL;
	size_t n = 0;
	int y = 0, h;

	view_split_name(c->m, r, split, sizeof(split));
	snprintf(line, sizeof(line), "%s  (%s%s%s)", r->name, ti->display, split[0] ? ", " : "",
		 split);
	put_line(y++, line, true);
	snprintf(line, sizeof(line),
		 "samples: %" PRIu64 " in the session, %" PRIu64 " in the last period", r->now,
		 r->delta);
	put_line(y++, line, false);
	y++;
	if (c->callers) {
		put_line(y++, "callers (samples, % of the callers' arcs, image, symbol):", false);
		for (char *p = c->callers; *p && y < LINES / 2;) {
			char *nl = strchr(p, '\n');
			size_t l = nl ? (size_t)(nl - p) : strlen(p);

			snprintf(line, sizeof(line), "  %.*s", (int)l, p);
			put_line(y++, line, false);
			p += l + (nl ? 1 : 0);
		}
		y++;
	} else if (c->m->have_callgraph) {
		put_line(y++, "callers: none recorded for this symbol", false);
		y++;
	}
	put_line(y++, "   address             session     period", true);
	if (model_row_addrs(c->m, (uint32_t)c->detail_row, &addrs, &n) == 0) {
		h = LINES - 1 - y;
		if (c->dscroll + (size_t)(h > 0 ? h : 0) > n)
			c->dscroll = n > (size_t)h && h > 0 ? n - (size_t)h : 0;
		for (size_t i = c->dscroll; i < n && y < LINES - 1; i++) {
			const struct top_addr_count *a = &addrs[i];

			snprintf(line, sizeof(line), "   %#-18" PRIx64 " %10" PRIu64 " %10" PRIu64,
				 sym_key_vma(&ti->syms, a->key), a->now, a->delta);
			put_line(y++, line, false);
		}
		free(addrs);
	}
	put_line(LINES - 1, " enter / left / Esc: back | up, down: scroll | q quit", true);
}

static void draw(struct cview *c)
{
	erase();
	if (COLS < TOP_MIN_COLS || LINES < TOP_MIN_LINES) {
		char msg[128];

		snprintf(msg, sizeof(msg), "terminal too small: %dx%d, optop needs %dx%d", COLS,
			 LINES, TOP_MIN_COLS, TOP_MIN_LINES);
		mvaddnstr(0, 0, msg, COLS);
	} else if (c->scr == SCR_HELP) {
		for (int i = 0; help_text[i] && i < LINES; i++)
			put_line(i, help_text[i], i == 0);
	} else if (c->scr == SCR_DETAIL) {
		draw_detail(c);
	} else {
		draw_rows(c);
	}
	refresh();
}

/* rebuild the view, the selection following its row */
static void rebuild(struct cview *c)
{
	view_build(c->tv, c->m);
	if (c->sel_row >= 0) {
		for (size_t i = 0; i < c->tv->n; i++) {
			if (c->tv->v[i] == (uint32_t)c->sel_row) {
				c->sel = i;
				return;
			}
		}
	}
}

static void select_at(struct cview *c, long i)
{
	if (i < 0 || !c->tv->n)
		i = 0;
	if ((size_t)i >= c->tv->n)
		i = c->tv->n ? (long)c->tv->n - 1 : 0;
	c->sel = (size_t)i;
	c->sel_row = c->tv->n ? (long)c->tv->v[c->sel] : -1;
}

/* the / prompt on the status line; Esc keeps the old filter */
static void read_filter(struct cview *c)
{
	char buf[sizeof(c->tv->filter)] = "";
	size_t n = 0;
	int ch;

	timeout(-1);
	for (;;) {
		move(LINES - 1, 0);
		clrtoeol();
		attron(A_REVERSE);
		mvprintw(LINES - 1, 0,
			 "filter (image or symbol contains, enter: apply, Esc: "
			 "cancel): %s",
			 buf);
		attroff(A_REVERSE);
		refresh();
		ch = getch();
		if (ch == 27)
			return;
		if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
			break;
		if ((ch == KEY_BACKSPACE || ch == 127 || ch == 8) && n)
			buf[--n] = 0;
		else if (ch >= 32 && ch < 127 && n + 1 < sizeof(buf)) {
			buf[n++] = (char)ch;
			buf[n] = 0;
		} else if (ch == KEY_RESIZE)
			draw(c);
		if (top_quit)
			return;
	}
	snprintf(c->tv->filter, sizeof(c->tv->filter), "%s", buf);
	c->sel = c->first = 0;
	c->sel_row = -1;
	rebuild(c);
}

static void open_detail(struct cview *c)
{
	if (!c->tv->n)
		return;
	c->detail_row = (long)c->tv->v[c->sel];
	c->dscroll = 0;
	free(c->callers);
	c->callers = model_callers(c->m, (uint32_t)c->detail_row);
	if (c->callers && !c->callers[0]) {
		free(c->callers);
		c->callers = NULL;
	}
	c->scr = SCR_DETAIL;
}

/* one key; false to quit */
static bool on_key(struct cview *c, int ch)
{
	int page = rows_area() > 1 ? rows_area() - 1 : 1;

	if (ch == 'q' || ch == 'Q')
		return false;
	if (c->scr == SCR_HELP) {
		if (ch != KEY_RESIZE)
			c->scr = SCR_ROWS;
		return true;
	}
	if (c->scr == SCR_DETAIL) {
		if (ch == '\n' || ch == '\r' || ch == KEY_ENTER || ch == KEY_LEFT || ch == 27)
			c->scr = SCR_ROWS;
		else if (ch == KEY_DOWN)
			c->dscroll++;
		else if (ch == KEY_UP && c->dscroll)
			c->dscroll--;
		return true;
	}
	switch (ch) {
	case 'z':
		c->tv->cumulative = !c->tv->cumulative;
		rebuild(c);
		break;
	case 'p':
		c->tv->paused = !c->tv->paused;
		break;
	case 's':
		c->tv->sort = (enum top_sort)((c->tv->sort + 1) % TSORT_NR);
		rebuild(c);
		break;
	case 'k':
		c->tv->ring = c->tv->ring == TRING_KERNEL ? TRING_ALL : TRING_KERNEL;
		rebuild(c);
		break;
	case 'u':
		c->tv->ring = c->tv->ring == TRING_USER ? TRING_ALL : TRING_USER;
		rebuild(c);
		break;
	case '/':
		read_filter(c);
		break;
	case 'h':
	case '?':
		c->scr = SCR_HELP;
		break;
	case KEY_UP:
		select_at(c, (long)c->sel - 1);
		break;
	case KEY_DOWN:
		select_at(c, (long)c->sel + 1);
		break;
	case KEY_PPAGE:
		select_at(c, (long)c->sel - page);
		break;
	case KEY_NPAGE:
		select_at(c, (long)c->sel + page);
		break;
	case KEY_HOME:
		select_at(c, 0);
		break;
	case KEY_END:
		select_at(c, (long)c->tv->n - 1);
		break;
	case '\n':
	case '\r':
	case KEY_ENTER:
		open_detail(c);
		break;
	default:
		break;
	}
	return true;
}

/* what went to stderr while the screen was up, to the real stderr */
static void flush_held(FILE *held, int real)
{
	char buf[4096];
	size_t n, nlines = 0, more = 0;

	fflush(stderr);
	dup2(real, STDERR_FILENO);
	close(real);
	if (!held)
		return;
	rewind(held);
	/* the first ones: a session of many stripped binaries warns about each */
	while (nlines < HELD_MAX_LINES && fgets(buf, sizeof(buf), held)) {
		fputs(buf, stderr);
		nlines += strchr(buf, '\n') != NULL;
	}
	while ((n = fread(buf, 1, sizeof(buf), held)) > 0)
		for (size_t i = 0; i < n; i++)
			more += buf[i] == '\n';
	if (more)
		fprintf(stderr, "optop: ... and %zu more messages\n", more);
	fclose(held);
}

int curses_run(struct top_model *m, struct top_view *tv, struct top_source *s,
	       const struct top_opts *o)
{
	struct cview c = { .m = m, .tv = tv, .s = s, .o = o, .sel_row = -1, .detail_row = -1 };
	FILE *held = tmpfile();
	int real = dup(STDERR_FILENO), rc = 0;
	double next;

	if (held)
		dup2(fileno(held), STDERR_FILENO);
	if (!initscr()) {
		flush_held(held, real);
		fprintf(stderr,
			"optop: cannot start curses on this terminal (TERM=%s) - use "
			"--stdio\n",
			getenv("TERM") ? getenv("TERM") : "");
		return 1;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	/* Esc alone: no wait for the rest of an escape sequence */
	set_escdelay(25);
	src_dump(s);
	model_refresh(m);
	rebuild(&c);
	next = top_now() + o->delay;
	draw(&c);
	while (!top_quit) {
		double left = next - top_now();
		int ch;

		timeout(left > 0 ? (int)(left * 1000) + 1 : 0);
		ch = getch();
		if (ch != ERR && !on_key(&c, ch))
			break;
		if (top_now() >= next) {
			next += o->delay;
			if (next < top_now())
				next = top_now() + o->delay;
			if (!tv->paused) {
				if (!src_alive(s)) {
					rc = 1;
					break;
				}
				src_dump(s);
				model_refresh(m);
				rebuild(&c);
			}
		}
		draw(&c);
	}
	endwin();
	free(c.callers);
	flush_held(held, real);
	return rc;
}
