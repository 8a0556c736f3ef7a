/*
 * pipeline.c - the sample path as one object: owns the cookie table, the
 * event buffer, sync, trans, the sample-file table and the counters, and
 * the statistics/dump/close verbs SIGUSR1, SIGHUP, the stop and opcontrol
 * share.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cookie.h"
#include "evbuf.h"
#include "ext.h"
#include "log.h"
#include "op_session_layout.h"
#include "perf.h"
#include "pipeline.h"
#include "session.h"
#include "sfile.h"
#include "stats.h"
#include "sync.h"
#include "trans.h"

#define PIPELINE_EVBUF_WORDS (64 * 1024)

struct pipeline {
	struct op_log *log;
	struct session *sess; /* NULL: no session (--check-config) */
	struct cookie_table cookies;
	struct op_stats stats;
	struct op_emit w;
	struct sync_ctx sync;
	struct sfile_table sfiles;
	struct trans_ctx trans;
	bool files_open; /* sfiles and trans are set up */
	struct perf_session *perf;
	struct ext_loader *loader;
	size_t ring_pages;
	const char *const *event_names; /* by counter, for stats/throttled/ */
	size_t nr_event_names;
	uint32_t throttled; /* bit per core event the kernel throttled */
	/* stats/buildids: an --append'ed session's earlier lines, read once */
	char *bid_old;
	size_t bid_old_len;
	bool bid_old_read;
};

/* a THROTTLE record (sync's hook): which event, stats/throttled/<event> names it */
static void pipeline_throttled(void *arg, uint64_t id)
{
	struct pipeline *p = arg;
	const struct pdec_event *e = p->perf ? pdec_lookup(perf_decoder(p->perf), id) : NULL;

	if (e && e->source == 0 && e->counter < 32)
		p->throttled |= 1u << e->counter;
	else
		p->throttled |= ~0u;
}

int pipeline_new(struct pipeline **pp, struct op_log *log, struct session *sess, char *const *filter)
{
	struct pipeline *p = calloc(1, sizeof(*p));
	int rc;

	*pp = NULL;
	if (!p)
		return -ENOMEM;
	p->log = log;
	p->sess = sess;
	rc = cookie_init(&p->cookies);
	if (rc)
		goto out_free;
	p->cookies.filter = filter;
	rc = evb_init(&p->w, PIPELINE_EVBUF_WORDS, trans_buffer, &p->trans);
	if (rc)
		goto out_cookies;
	rc = sync_init(&p->sync, &p->cookies, &p->w, NULL, &p->stats);
	if (rc)
		goto out_evb;
	sync_set_throttle_hook(&p->sync, pipeline_throttled, p);
	*pp = p;
	return 0;

out_evb:
	evb_free(&p->w);
out_cookies:
	cookie_free(&p->cookies);
out_free:
	free(p);
	return rc;
}

void pipeline_free_files(struct pipeline *p)
{
	if (!p || !p->files_open)
		return;
	trans_forget_sfile(&p->trans);
	sfile_free(&p->sfiles);
	p->files_open = false;
}

void pipeline_free(struct pipeline *p)
{
	if (!p)
		return;
	pipeline_free_files(p);
	sync_free(&p->sync);
	evb_free(&p->w);
	cookie_free(&p->cookies);
	free(p->bid_old);
	free(p);
}

void pipeline_core_services(struct pipeline *p, struct ext_core_services *c)
{
	c->sync = &p->sync;
	c->trans = &p->trans;
	c->map_pc = sync_map_pc;
	c->emit = sync_emit;
	c->log_sample = trans_log_sample;
	c->sample_file_open = trans_sample_file_open;
	c->sample_file_add = trans_sample_file_add;
	c->sample_file_sync = trans_sample_file_sync;
	c->sample_file_close = trans_sample_file_close;
	c->cookie_path = sync_cookie_path;
	c->cookie_intern = sync_cookie_intern;
	c->set_split_key = sync_set_split_key; /* issue 20 */
}

int pipeline_open_files(struct pipeline *p, const struct sfile_config *cfg,
			const struct ext_registry *reg, const char *proc_root, bool verbose,
			size_t ring_pages)
{
	int rc;

	if (p->files_open)
		return -EBUSY;
	sync_set_registry(&p->sync, reg);
	sync_set_proc_root(&p->sync, proc_root);
	sync_set_split(&p->sync, cfg->separate & OP_SEP_CGROUP); /* issue 20 */
	p->ring_pages = ring_pages;
	rc = sfile_init(&p->sfiles, cfg, &p->cookies, reg, &p->stats, p->log);
	if (rc)
		return rc;
	sfile_set_verbose(&p->sfiles, verbose);
	rc = trans_init(&p->trans, &p->sfiles, reg, &p->stats);
	if (rc) {
		sfile_free(&p->sfiles);
		return rc;
	}
	p->files_open = true;
	return 0;
}

/* perf's round_end in replay: what the live loop does after each round */
static void pipeline_round_end(void *arg)
{
	pipeline_drain(arg);
}

void pipeline_perf_config(struct pipeline *p, struct perf_config *pc)
{
	pc->deliver = sync_deliver;
	pc->arg = &p->sync;
	pc->round_end = pipeline_round_end;
	pc->round_arg = p;
}

void pipeline_set_perf(struct pipeline *p, struct perf_session *perf)
{
	p->perf = perf;
}

void pipeline_set_loader(struct pipeline *p, struct ext_loader *loader)
{
	p->loader = loader;
}

void pipeline_set_event_names(struct pipeline *p, const char *const *names, size_t n)
{
	p->event_names = names;
	p->nr_event_names = n;
}

void pipeline_drain(struct pipeline *p)
{
	evb_flush(&p->w);
	sync_round_end(&p->sync);
	/*
	 * every sample of the threads that exited in this round is in the
	 * files now (the EXIT record comes after them): their sets close
	 */
	if (p->sync.nr_exited && p->files_open) {
		trans_forget_sfile(&p->trans);
		sfile_close_exited(&p->sfiles, p->sync.exited, p->sync.nr_exited);
	}
	p->sync.nr_exited = 0;
}

void pipeline_sync_files(struct pipeline *p)
{
	if (!p->files_open)
		return;
	sfile_sync_all(&p->sfiles);
	/*
	 * the sample path looks its sets up again, which marks them used for
	 * the next sync (sfile_sync_all syncs only those)
	 */
	trans_forget_sfile(&p->trans);
}

void pipeline_print_stats(struct pipeline *p, const char *why)
{
	FILE *out = log_file(p->log);
	time_t t = time(NULL);

	if (!out)
		return;
	/* the kernel's lost counts up to now (else only a status, save or stop reads them) */
	if (p->perf)
		perf_lost_checkpoint(p->perf);
	p->stats.v[STAT_EVB_TOO_LONG] = p->w.too_long;
	log_raw(p->log, "\n%s%s", why ? why : "", ctime(&t));
	stats_print(&p->stats, out);
	if (p->stats.v[STAT_LOST_RECORDS])
		log_info(p->log,
			 "the kernel dropped %" PRIu64 " records because a ring was full - "
			 "raise --ring-pages (now %zu) or sample less often",
			 p->stats.v[STAT_LOST_RECORDS], p->ring_pages);
	if (p->perf)
		perf_print_stats(p->perf, out);
	if (p->loader)
		ext_print_stats(p->loader, out);
	fflush(out);
}

/*
 * stats/buildids: one line per image sampled in this session, written
 * whole with the other stats files at each dump (a reader, or a user who
 * removed stats/, finds it complete after any dump)
 */
static int pipeline_write_buildids(struct pipeline *p)
{
	char *text;
	long len;
	int rc;

	if (!p->bid_old_read) {
		rc = stats_read_buildids(p->sess->current_fd, &p->bid_old, &p->bid_old_len);
		if (rc)
			return rc;
		p->bid_old_read = true;
	}
	len = cookie_index_text(&p->cookies, &text);
	if (len <= 0)
		return (int)len;
	rc = stats_write_buildids(p->sess->current_fd, p->bid_old, p->bid_old_len, text,
				  (size_t)len);
	free(text);
	return rc;
}

int pipeline_write_stats_files(struct pipeline *p)
{
	const char *names[33] = { 0 };
	size_t i, n;
	int rc, rc2;

	if (!p->sess)
		return 0;
	for (i = 0, n = 0; i < p->nr_event_names && i < 32; i++)
		if (p->throttled & (1u << i))
			names[n++] = p->event_names[i];
	rc = stats_write_files(&p->stats, p->sess->current_fd, names);
	if ((rc == -EMFILE || rc == -ENFILE) && p->files_open) {
		/* sample files filled the descriptor limit: they give some back */
		sfile_yield_fds(&p->sfiles);
		rc = stats_write_files(&p->stats, p->sess->current_fd, names);
	}
	if (rc)
		log_err(p->log,
			"%s/samples/current/stats: cannot write the lost-sample counters: %s",
			p->sess->dir, strerror(-rc));
	rc2 = pipeline_write_buildids(p);
	if ((rc2 == -EMFILE || rc2 == -ENFILE) && p->files_open) {
		sfile_yield_fds(&p->sfiles);
		rc2 = pipeline_write_buildids(p);
	}
	if (rc2)
		log_err(p->log,
			"%s/samples/current/stats/" OP_BUILDID_INDEX
			": cannot write the build-id index: %s - opreport cannot tell a rebuilt "
			"binary by its build ID",
			p->sess->dir, strerror(-rc2));
	return rc ? rc : rc2;
}

void pipeline_session_event(struct pipeline *p, uint32_t kind, const char *prev)
{
	char dir[PATH_MAX], pdir[PATH_MAX];

	if (!p->loader || !p->sess || !p->sess->dir)
		return;
	snprintf(dir, sizeof(dir), "%s/" OP_SESSION_CURRENT_PATH, p->sess->dir);
	if (prev)
		snprintf(pdir, sizeof(pdir), "%s/" OP_SESSION_SAMPLES "/%s", p->sess->dir, prev);
	ext_session_event(p->loader, kind, dir, prev ? pdir : NULL);
}

void pipeline_dump(struct pipeline *p, bool print_stats)
{
	pipeline_drain(p);
	pipeline_sync_files(p);
	/* files first: the block in the log says the dump is complete */
	pipeline_write_stats_files(p);
	if (print_stats)
		pipeline_print_stats(p, NULL);
	/* SDK 1.2: plugins complete the session (the JIT plugin its images) */
	pipeline_session_event(p, OP_SESSION_DUMP, NULL);
}

void pipeline_close_files(struct pipeline *p)
{
	pipeline_drain(p);
	if (!p->files_open)
		return;
	trans_forget_sfile(&p->trans);
	sfile_close_all(&p->sfiles);
}

int pipeline_end_session(struct pipeline *p, const char *why)
{
	/* everything on its way to the files lands, then no file stays open */
	pipeline_drain(p);
	pipeline_sync_files(p);
	pipeline_close_files(p);
	/*
	 * the statistics of the session being set aside, before it moves:
	 * plugins complete their part of it to report (the kernel plugin its
	 * symbol snapshot)
	 */
	pipeline_print_stats(p, why);
	return pipeline_write_stats_files(p);
}

void pipeline_new_session(struct pipeline *p, struct op_stats *before)
{
	size_t i;

	for (i = 0; before && i < STAT_NR; i++)
		before->v[i] += p->stats.v[i];
	memset(&p->stats, 0, sizeof(p->stats));
	p->w.too_long = 0;
	p->throttled = 0;
	/* the new session's index names the images sampled in it */
	cookie_new_session(&p->cookies);
	free(p->bid_old);
	p->bid_old = NULL;
	p->bid_old_len = 0;
	p->bid_old_read = false;
}

const struct op_stats *pipeline_stats(const struct pipeline *p)
{
	return &p->stats;
}

void pipeline_file_counts(const struct pipeline *p, unsigned *open, unsigned *sets)
{
	*open = p->files_open ? p->sfiles.nr_open : 0;
	*sets = p->files_open ? p->sfiles.nr_sfiles : 0;
}
