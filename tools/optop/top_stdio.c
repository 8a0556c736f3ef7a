/*
 * top_stdio.c - optop --stdio: the same rows as the curses view, printed
 * as a plain-text table after each refresh (for scripts, logs and
 * terminals without curses), as perf top --stdio does.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <inttypes.h>
#include <string.h>
#include <time.h>

#include "optop.h"

/* sleep until @until (monotonic seconds) or a quit signal */
static void wait_until(double until)
{
	double left;

	while (!top_quit && (left = until - top_now()) > 0) {
		struct timespec ts = { (time_t)left, (long)((left - (double)(time_t)left) * 1e9) };

		nanosleep(&ts, NULL);
	}
}

/* one row as both views print it: samples, %, image, [cpu/tid,] symbol */
int top_format_row(const struct top_model *m, const struct top_view *tv, const struct top_row *r,
		   char *buf, size_t len)
{
	uint64_t c = view_count(tv, r);
	char split[32];

	view_split_name(m, r, split, sizeof(split));
	return snprintf(buf, len, "%10" PRIu64 " %6.2f%%  %-24s %s%s%s", c,
			tv->shown_total ? 100.0 * (double)c / (double)tv->shown_total : 0.0,
			m->imgs[r->img].display, split, split[0] ? "  " : "", r->name);
}

int stdio_run(struct top_model *m, struct top_view *tv, struct top_source *s,
	      const struct top_opts *o)
{
	char l1[1536], l2[1536], line[1024];
	double next = top_now();
	unsigned it = 0;

	/* the first read is the baseline: a delta needs two */
	src_dump(s);
	model_refresh(m);
	while (!top_quit) {
		next += o->delay;
		wait_until(next);
		if (top_quit)
			break;
		if (!src_alive(s))
			return 1;
		src_dump(s);
		model_refresh(m);
		if (view_build(tv, m)) {
			fprintf(stderr, "optop: out of memory\n");
			return 1;
		}
		view_header(m, tv, s->note, l1, sizeof(l1), l2, sizeof(l2));
		printf("%s\n%s\n%10s %7s  %-24s %s\n", l1, l2, "samples", "%", "image", "symbol");
		for (size_t i = 0; i < tv->n && i < o->nrows; i++) {
			top_format_row(m, tv, &m->rows[tv->v[i]], line, sizeof(line));
			printf("%s\n", line);
		}
		printf("\n");
		fflush(stdout);
		if (o->iterations && ++it >= o->iterations)
			break;
	}
	return 0;
}
