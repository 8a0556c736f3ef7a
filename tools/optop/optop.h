/*
 * optop.h - optop's parts: the source of samples (top_source.c: a private
 * daemon or a running one's session, dumps through its control socket),
 * the model (top_model.c: the session read through libopreport, symbols
 * cached per image and per address, rows with their delta), and the two
 * views (top_stdio.c, top_curses.c).
 * SPDX-License-Identifier: MIT
 */
#ifndef OPTOP_H
#define OPTOP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "opctl.h"
#include "opreport.h"

/* ---------------------------------------------------------------- source */

struct top_source {
	const char *session_dir; /* watched (--session-dir) or the private one */
	char *tmp_dir;           /* the private session, removed at exit; NULL when watching */
	pid_t daemon;            /* the private daemon, 0 when watching */
	bool can_dump;           /* the control socket answers us: dump before each refresh */
	char note[256];          /* why the view is read-only, shown in the header */
	struct opctl ctl;
};

/* what the private daemon is started with */
struct top_daemon_opts {
	const char *events;   /* --events, NULL: the model's default */
	const char *separate; /* --separate, NULL: none */
};

/*
 * Start a private system-wide oprofiled into a new temporary session
 * directory (root only) and wait until its control socket answers. 0, or
 * -errno after a message (the directory is removed again).
 */
int src_start_private(struct top_source *s, const struct top_daemon_opts *d);
/*
 * Watch the session of a running daemon: dumps through its control socket
 * when it answers us; otherwise a read-only view of the files (said why
 * in s->note). -ENOENT / -EACCES after a message when there is nothing to
 * read at all.
 */
int src_watch(struct top_source *s, const char *dir);
/* Ask the daemon to flush its samples to the files (no-op when read-only). */
void src_dump(struct top_source *s);
/* Is the private daemon still alive? false with a message when it died. */
bool src_alive(struct top_source *s);
/* Stop the private daemon and remove its session; nothing when watching. */
void src_stop(struct top_source *s);

/* set by the signal handler: SIGINT, SIGTERM, SIGHUP end optop cleanly */
extern volatile sig_atomic_t top_quit;

/* ----------------------------------------------------------------- model */

enum top_sort { TSORT_SAMPLES, TSORT_SYMBOL, TSORT_IMAGE, TSORT_NR };
enum top_split { TSPLIT_NONE, TSPLIT_CPU, TSPLIT_THREAD };
enum top_ring { TRING_ALL, TRING_KERNEL, TRING_USER };

/* one sampled address of an image (per cpu or thread when split), resolved to its row once */
struct top_addr {
	uint64_t key;
	int32_t split;
	uint32_t row;
	bool used;
};

/* one record of a sample file as the last refresh read it */
struct top_rec {
	uint64_t key, count, prev; /* prev: the count before the last change */
	uint32_t row;
	uint32_t epoch; /* the refresh that changed it */
};

/* what the last refresh read of one sample file (rpt_seg), in node order */
struct top_seg {
	uint64_t id;
	uint32_t img;
	int32_t split;
	uint32_t seen; /* the last refresh that found the file */
	struct top_rec *rec;
	size_t n, cap;
};

/* an image, its symbols loaded once for the whole run */
struct top_image {
	char *id;      /* kind, tgid, start and path: the same binary in every refresh */
	char *display; /* short name shown */
	bool is_kernel;
	bool no_syms;
	struct rpt_symtab syms;
	/* its addresses, open addressing: new records of a file look up one small table */
	struct top_addr *addrs;
	size_t naddrs, addrcap;
};

/* a row: one symbol of one image (one per cpu or thread when split) */
struct top_row {
	uint32_t img;
	int32_t split;             /* cpu or tid, -1 when not split */
	const struct rpt_sym *sym; /* NULL: no symbol covers the address */
	uint64_t addr;             /* the key, for a symbol-less row of an image with symbols */
	bool no_syms_row;          /* "(no symbols)": the image has no symbols at all */
	uint64_t now, prev;        /* cumulative count at this refresh and the one before */
	uint64_t delta;            /* now - prev */
	char *name;                /* display name (escaped), made once */
};

/* the counts of one address of a row (details) */
struct top_addr_count {
	uint64_t key, now, delta;
};

struct top_model {
	/* settings */
	const char *session_dir;
	enum top_split split;
	struct rpt_opts o; /* o.spec: --pid, --tid, --cpu, --image of the command line */
	/* the caches */
	struct top_image *imgs;
	size_t nimgs, capimgs;
	uint32_t *img_ht; /* image ids: index + 1, 0 free */
	size_t img_htcap;
	struct top_row *rows;
	size_t nrows, caprows;
	struct top_seg *segs; /* every sample file read, by rpt_seg id */
	size_t nsegs, capsegs;
	uint32_t *seg_ht; /* index + 1 */
	size_t seg_htcap;
	uint32_t *row_ht; /* index + 1 */
	size_t row_htcap;
	/* this refresh */
	uint64_t total_now, total_prev, total_delta;
	uint64_t received, lost, lost_prev;
	double period_s; /* seconds between the last two refreshes */
	double last_time;
	unsigned refreshes;
	char event[64];
	uint64_t event_count;
	unsigned nevents;   /* events in the session (only the first is shown) */
	bool split_missing; /* a split was asked but the session is not separated that way */
	bool have_callgraph;
	char err[1024]; /* why the last refresh read nothing, "" when it did */
	unsigned nwarnings;
};

int model_init(struct top_model *m, const char *session_dir, enum top_split split);
/* Read the session again: rows' counts now, delta since the last refresh. */
int model_refresh(struct top_model *m);
void model_free(struct top_model *m);

/* what a view shows: rows picked, filtered and sorted */
struct top_view {
	bool cumulative;
	bool paused;
	enum top_sort sort;
	enum top_ring ring;
	char filter[128]; /* substring of the image or the symbol */
	uint32_t *v;      /* indexes of m->rows */
	size_t n, cap;
	uint64_t shown_total; /* of the counts shown: the percent base */
};

int view_build(struct top_view *tv, const struct top_model *m);
uint64_t view_count(const struct top_view *tv, const struct top_row *r);
void view_free(struct top_view *tv);
const char *view_sort_name(enum top_sort s);
/* the header lines of both views into @buf: event, rate, samples/s, lost */
void view_header(const struct top_model *m, const struct top_view *tv, const char *note, char *l1,
		 size_t len1, char *l2, size_t len2);
/* "cpu 3" / "tid 1234" / "" of a row */
void view_split_name(const struct top_model *m, const struct top_row *r, char *buf, size_t len);

/* per-address counts of row @row, sorted by key: malloc'd in *@out, *@n entries */
int model_row_addrs(const struct top_model *m, uint32_t row, struct top_addr_count **out, size_t *n);
/*
 * The callers of row @row from the session's call-graph arcs (opreport -c's
 * block of the symbol): malloc'd text, one caller a line, or NULL when the
 * session has none.
 */
char *model_callers(struct top_model *m, uint32_t row);

/* ----------------------------------------------------------------- views */

/* one row as both views print it (samples, %, image, [cpu/tid,] symbol); snprintf's return */
int top_format_row(const struct top_model *m, const struct top_view *tv, const struct top_row *r,
		   char *buf, size_t len);

struct top_opts {
	double delay;        /* -d seconds */
	unsigned iterations; /* --stdio: refreshes, 0: until interrupted */
	unsigned nrows;      /* --stdio: rows a refresh prints */
};

int stdio_run(struct top_model *m, struct top_view *tv, struct top_source *s,
	      const struct top_opts *o);
int curses_run(struct top_model *m, struct top_view *tv, struct top_source *s,
	       const struct top_opts *o);
/* smallest terminal the curses view draws in */
#define TOP_MIN_COLS 60
#define TOP_MIN_LINES 10

double top_now(void);

#endif /* OPTOP_H */
