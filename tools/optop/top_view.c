/*
 * top_view.c - what both views show of the model: the rows that pass the
 * filters (image or symbol substring, kernel or user), sorted, the
 * period's delta or the cumulative count, and the header lines.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "op_events.h"
#include "optop.h"

uint64_t view_count(const struct top_view *tv, const struct top_row *r)
{
	return tv->cumulative ? r->now : r->delta;
}

const char *view_sort_name(enum top_sort s)
{
	static const char *const names[TSORT_NR] = { "samples", "symbol", "image" };

	return (unsigned)s < TSORT_NR ? names[s] : "?";
}

static const struct top_model *sort_m;
static const struct top_view *sort_tv;

static int row_cmp(const void *a, const void *b)
{
	const struct top_row *x = &sort_m->rows[*(const uint32_t *)a];
	const struct top_row *y = &sort_m->rows[*(const uint32_t *)b];
	uint64_t cx = view_count(sort_tv, x), cy = view_count(sort_tv, y);
	int r = 0;

	switch (sort_tv->sort) {
	case TSORT_SYMBOL:
		r = strcmp(x->name, y->name);
		break;
	case TSORT_IMAGE:
		r = strcmp(sort_m->imgs[x->img].display, sort_m->imgs[y->img].display);
		break;
	default:
		break;
	}
	if (r)
		return r;
	if (cx != cy)
		return cx > cy ? -1 : 1;
	r = strcmp(x->name, y->name);
	if (r)
		return r;
	return x->split < y->split ? -1 : x->split > y->split;
}

int view_build(struct top_view *tv, const struct top_model *m)
{
	tv->n = 0;
	tv->shown_total = 0;
	for (size_t i = 0; i < m->nrows; i++) {
		const struct top_row *r = &m->rows[i];
		const struct top_image *ti = &m->imgs[r->img];
		uint64_t c = view_count(tv, r);

		if (!c)
			continue;
		if ((tv->ring == TRING_KERNEL && !ti->is_kernel) ||
		    (tv->ring == TRING_USER && ti->is_kernel))
			continue;
		if (tv->filter[0] && !strstr(r->name, tv->filter) && !strstr(ti->display, tv->filter))
			continue;
		if (tv->n == tv->cap) {
			size_t cap = tv->cap ? tv->cap * 2 : 1024;
			uint32_t *nv = realloc(tv->v, cap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			tv->v = nv;
			tv->cap = cap;
		}
		tv->v[tv->n++] = (uint32_t)i;
		tv->shown_total += c;
	}
	sort_m = m;
	sort_tv = tv;
	if (tv->n)
		qsort(tv->v, tv->n, sizeof(*tv->v), row_cmp);
	return 0;
}

void view_free(struct top_view *tv)
{
	free(tv->v);
	tv->v = NULL;
	tv->n = tv->cap = 0;
}

void view_split_name(const struct top_model *m, const struct top_row *r, char *buf, size_t len)
{
	if (m->split == TSPLIT_NONE || r->split < 0)
		buf[0] = 0;
	else
		snprintf(buf, len, "%s %d", m->split == TSPLIT_CPU ? "cpu" : "tid", (int)r->split);
}

void view_header(const struct top_model *m, const struct top_view *tv, const char *note, char *l1,
		 size_t len1, char *l2, size_t len2)
{
	char rate[64] = "";
	double per_s = m->period_s > 0 ? (double)m->total_delta / m->period_s : 0;
	uint64_t lost_delta = m->lost >= m->lost_prev ? m->lost - m->lost_prev : m->lost;

	/* the timer's count is its period in ns */
	if (!strcmp(m->event, OP_TIMER_EVENT) && m->event_count)
		snprintf(rate, sizeof(rate), ", %.0f Hz", 1e9 / (double)m->event_count);
	else if (m->event_count)
		snprintf(rate, sizeof(rate), ", one sample every %" PRIu64 " events",
			 m->event_count);
	snprintf(l1, len1,
		 "optop - event %s:%" PRIu64 "%s%s | %.0f samples/s | %" PRIu64
		 " samples in the session, lost %" PRIu64 " (+%" PRIu64 ")",
		 m->event[0] ? m->event : "?", m->event_count, rate,
		 m->nevents > 1 ? " (first of several events)" : "", per_s, m->total_now, m->lost,
		 lost_delta);
	snprintf(l2, len2, "%s%s, sort: %s%s%s%s%s%s%s%s", tv->paused ? "PAUSED " : "",
		 tv->cumulative ? "cumulative" : "delta of the last period",
		 view_sort_name(tv->sort),
		 tv->ring == TRING_KERNEL ? ", kernel only" :
		 tv->ring == TRING_USER   ? ", user only" :
					    "",
		 tv->filter[0] ? ", filter: " : "", tv->filter,
		 m->split_missing ? ", (the session is not separated that way)" : "",
		 m->err[0] ? " | " : "", m->err[0] ? m->err : (note && note[0] ? " | " : ""),
		 m->err[0] ? "" : (note ? note : ""));
}
