/*
 * opexport.c - a session for the tools that look at fleet profiles: pprof
 * (gzip'd profile.proto through libopprofile), folded stacks (opreport's
 * own writer) and speedscope's JSON file format. Sample files are selected
 * by libopreport exactly as opreport selects them; symbols come from
 * libbfd and the session's kallsyms snapshot, as opreport's do.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "op_profile.h"
#include "op_session_layout.h"
#include "opreport.h"
#include "opreport_callgraph.h"

#define xerr(...) txt_msg("opexport error: ", __VA_ARGS__)
#define xwarn(...) txt_msg("opexport warning: ", __VA_ARGS__)

enum xfmt { XF_PPROF, XF_FOLDED, XF_SPEEDSCOPE };

struct xopts {
	enum xfmt fmt;
	const char *outfile;
	bool no_symbols;
	bool lines; /* -g: each location's source line (DWARF) */
	struct strlist labels;
};

static void usage(FILE *f)
{
	fputs("usage: opexport [options] [profile specification] --format=FORMAT [-o FILE]\n"
	      "  --format=pprof           gzip'd profile.proto: pprof, Pyroscope, Parca (default)\n"
	      "  --format=folded          one \"proc;a;b N\" line per stack (opreport\n"
	      "                           --callgraph-output=folded; flamegraph.pl)\n"
	      "  --format=speedscope      speedscope's JSON file format (a sampled profile)\n"
	      "  -o, --output-file=FILE   write to FILE (default: standard output)\n"
	      "  --session-dir=DIR        session directory (default ./oprofile_data if present,\n"
	      "                           else /var/lib/oprofile)\n"
	      "  --label=KEY=VALUE        a label on every sample (repeatable; pprof)\n"
	      "  --no-symbols             bare addresses and build IDs for user binaries: the\n"
	      "                           server symbolizes them (kernel and JIT frames are\n"
	      "                           still named from the session)\n"
	      "  -g, --debug-info         the source line of each location (DWARF; slower)\n"
	      "  -p, --image-path=DIRS    comma list of directories to look for binaries in\n"
	      "  -R, --root=DIR           look for every binary below DIR\n"
	      "  -D, --demangle=MODE      none|smart|normal (default normal)\n"
	      "      --version            the package version\n"
	      "  -h, -?, --help, --usage  this help\n"
	      "profile specification: as opreport's (session:, image:, event:, tid:, cpu:,\n"
	      "archive:DIR, ...).\n",
	      f);
}

/* ------------------------------------------------------------ loading */

static bool want_image(void *arg, const struct op_image_name *n)
{
	const struct rpt_opts *o = arg;
	const char *base;

	if (!o->spec.image.n)
		return true;
	if (!n->path)
		return false;
	base = strrchr(n->path, '/');
	base = base ? base + 1 : n->path;
	return strlist_has(&o->spec.image, n->path) || strlist_has(&o->spec.image, base);
}

static void warn_cb(void *arg, const char *msg)
{
	(void)arg;
	xwarn("%s", msg);
}

/*
 * The sample files are read on two threads: rs_load's walk hands each
 * selected file to load_file (a job: its path and name), a reader thread
 * reads and checks jobs ahead (odb_open, odb_check: the opens, reads and
 * page faults that are most of a load), and the main thread puts the files
 * read into the model in the walk's order as it goes, reading too while
 * more than XREAD_AHEAD jobs wait: the same model, warnings and output as
 * one reader. Each reader opens the files through a directory cache of its
 * own (rs_odb_open on a struct rpt_profile holding only what it uses).
 */
#define XREAD_AHEAD 256 /* files read and not yet in the model, at most */
#define XREAD_BATCH 32  /* files a sleeping reader is woken for */
#define XREAD_CLAIM 8   /* files the reader thread claims at a time (<= XREAD_BATCH) */

struct xjob {
	char *path;
	/* what the model takes of the file's parsed name (rs_load frees its own) */
	struct op_image_name image, app;
	char event[OP_EVENT_NAME_MAX + 1];
	uint64_t count;
	int32_t tgid, tid, cpu;
	char *split;
	/* read by a reader: 0 and db, or the error and its message */
	odb_t db;
	int rc;
	char *err;
	bool done;
	unsigned who; /* the reader that read it (0: the thread) */
};

struct xread {
	pthread_mutex_t mu;
	/*
	 * each side sleeps on its own and is woken only when it waits, in
	 * batches: a wake-up per file made a context switch per file
	 */
	pthread_cond_t cv_reader; /* jobs to read, room ahead, the walk ended */
	pthread_cond_t cv_main;   /* a job was read */
	bool reader_waits, main_waits;
	struct xjob **jobs;
	size_t njobs, cap;
	size_t next;   /* the next job to read */
	size_t taken;  /* jobs before it are in the model */
	bool closed;   /* the walk is over: no more jobs */
	bool stop;     /* an error: no more reads */
	bool threaded; /* a reader thread runs */
	pthread_t thr;
	struct rpt_profile *dirs[2]; /* each reader's directory cache (0: the thread's) */
	/*
	 * The files the thread read, put into the model: closed (their copies
	 * freed) by the thread, whose malloc arena they came from; freed by the
	 * main thread they kept the two waiting on the other's arena lock
	 */
	odb_t toclose[2 * XREAD_AHEAD];
	size_t ntoclose;
};

struct xload {
	struct op_profile *prof;
	struct rpt_opts *ro;
	struct xread rd;
	struct op_parsed_name *pn; /* xjob_take's */
	size_t nfiles;             /* read into the model */
};

static void xjob_free(struct xjob *j)
{
	if (!j)
		return;
	if (j->db.base || j->db.fd >= 0)
		odb_close(&j->db);
	free(j->path);
	free((char *)j->image.path);
	free((char *)j->app.path);
	free(j->split);
	free(j->err);
	free(j);
}

static struct rpt_profile *xdirs_new(const struct rpt_profile *rp)
{
	struct rpt_profile *d = calloc(1, sizeof(*d));

	if (d) {
		d->samples_root = rp->samples_root;
		d->samples_fd = rp->samples_fd;
		d->dcache_fd = -1;
	}
	return d;
}

static void xdirs_free(struct rpt_profile *d)
{
	if (!d)
		return;
	if (d->dcache_fd >= 0)
		close(d->dcache_fd);
	free(d->dcache);
	free(d);
}

/* read and check job @j through @dirs (rs_odb_open's directory cache) */
static void xjob_read(struct xjob *j, struct rpt_profile *dirs)
{
	char err[1024] = "";

	j->rc = dirs ? rs_odb_open(dirs, &j->db, j->path, err, sizeof(err)) : -ENOMEM;
	if (!j->rc)
		j->rc = odb_check(&j->db, err, sizeof(err));
	if (j->rc) {
		odb_close(&j->db);
		j->err = strdup(err[0] ? err : strerror(-j->rc));
	}
}

/*
 * Under rd->mu: up to @max next jobs to read claimed (the first at
 * rd->jobs[*@first]), none when there is none (yet) or the readers are
 * XREAD_AHEAD files ahead of the model. Their number.
 */
static size_t xread_claim(struct xread *rd, size_t max, size_t *first)
{
	size_t n = rd->njobs - rd->next, room = XREAD_AHEAD - (rd->next - rd->taken);

	if (rd->stop || rd->next - rd->taken >= XREAD_AHEAD)
		return 0;
	n = n < max ? n : max;
	n = n < room ? n : room;
	*first = rd->next;
	rd->next += n;
	return n;
}

/*
 * Read the @n jobs claimed from rd->jobs[@first] outside the lock, with
 * reader @who's directories; they are done. (rd->jobs moves only under
 * the lock: the jobs are taken out first.)
 */
static void xread_some(struct xread *rd, size_t first, size_t n, unsigned who,
		       const struct rpt_profile *rp)
{
	struct xjob *j[XREAD_BATCH];

	memcpy(j, rd->jobs + first, n * sizeof(*j));
	pthread_mutex_unlock(&rd->mu);
	if (!rd->dirs[who])
		rd->dirs[who] = xdirs_new(rp);
	for (size_t i = 0; i < n; i++) {
		xjob_read(j[i], rd->dirs[who]);
		j[i]->who = who;
	}
	pthread_mutex_lock(&rd->mu);
	for (size_t i = 0; i < n; i++)
		j[i]->done = true;
	if (rd->main_waits)
		pthread_cond_signal(&rd->cv_main);
}

struct xreader_arg {
	struct xread *rd;
	const struct rpt_profile *rp;
};

static void *xreader(void *arg)
{
	struct xreader_arg *a = arg;
	struct xread *rd = a->rd;

	pthread_mutex_lock(&rd->mu);
	for (;;) {
		/* a few at a time: fewer turns of the lock the main thread takes too */
		size_t first, n = xread_claim(rd, XREAD_CLAIM, &first);

		if (rd->ntoclose) {
			odb_t mine[2 * XREAD_AHEAD];
			size_t nc = rd->ntoclose;

			memcpy(mine, rd->toclose, nc * sizeof(*mine));
			rd->ntoclose = 0;
			pthread_mutex_unlock(&rd->mu);
			for (size_t i = 0; i < nc; i++)
				odb_close(&mine[i]);
			pthread_mutex_lock(&rd->mu);
		}
		if (n) {
			xread_some(rd, first, n, 0, a->rp);
		} else if (rd->stop || (rd->closed && rd->next >= rd->njobs)) {
			break;
		} else {
			rd->reader_waits = true;
			pthread_cond_wait(&rd->cv_reader, &rd->mu);
			rd->reader_waits = false;
		}
	}
	pthread_mutex_unlock(&rd->mu);
	return NULL;
}

static int xread_progress(struct xload *xl, struct rpt_profile *rp, bool all);

/* rs_load's reader of each selected sample file: a job for the readers */
static int load_file(void *arg, struct rpt_profile *rp, const char *path,
		     const struct op_parsed_name *pn)
{
	struct xread *rd = &((struct xload *)arg)->rd;
	struct xjob *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->db.fd = -1; /* not read */
	j->path = strdup(path);
	j->image = pn->image;
	j->app = pn->app;
	j->image.path = pn->image.path ? strdup(pn->image.path) : NULL;
	j->app.path = pn->app.path ? strdup(pn->app.path) : NULL;
	j->split = pn->split ? strdup(pn->split) : NULL;
	snprintf(j->event, sizeof(j->event), "%s", pn->event);
	j->count = pn->count;
	j->tgid = pn->tgid;
	j->tid = pn->tid;
	j->cpu = pn->cpu;
	if (!j->path || (pn->image.path && !j->image.path) || (pn->app.path && !j->app.path) ||
	    (pn->split && !j->split)) {
		xjob_free(j);
		return -ENOMEM;
	}
	pthread_mutex_lock(&rd->mu);
	if (rd->njobs == rd->cap) {
		size_t ncap = rd->cap ? 2 * rd->cap : 1024;
		struct xjob **nv = realloc(rd->jobs, ncap * sizeof(*nv));

		if (!nv) {
			pthread_mutex_unlock(&rd->mu);
			xjob_free(j);
			return -ENOMEM;
		}
		rd->jobs = nv;
		rd->cap = ncap;
	}
	rd->jobs[rd->njobs++] = j;
	/* a reader that waits for room ahead is not woken for jobs it may not read yet */
	if (rd->reader_waits && rd->njobs - rd->next >= XREAD_BATCH &&
	    rd->next - rd->taken < XREAD_AHEAD)
		pthread_cond_signal(&rd->cv_reader);
	pthread_mutex_unlock(&rd->mu);
	/* what is read goes into the model now: jobs do not pile up */
	return xread_progress(arg, rp, false);
}

/* job @j, read, into the model; a corrupt file is a warning */
static int xjob_take(struct xload *xl, struct rpt_profile *rp, struct xjob *j,
		     struct op_parsed_name *pn)
{
	struct rpt_image *img;
	char err[1024] = "";
	int ret;

	if (j->rc) {
		xwarn("skipping sample file %s: corrupt or unreadable (%s)", j->path,
		      j->err ? j->err : strerror(-j->rc));
		rp->nskipped++;
		return j->rc == -ENOMEM ? -ENOMEM : 0;
	}
	pn->image = j->image;
	pn->app = j->app;
	snprintf(pn->event, sizeof(pn->event), "%s", j->event);
	pn->count = j->count;
	pn->tgid = j->tgid;
	pn->tid = j->tid;
	pn->cpu = j->cpu;
	pn->split = j->split;
	/* the image as opreport finds its binary (--root, --image-path, archive:) */
	img = rs_image_add(rp, xl->ro, &pn->image);
	if (!img)
		ret = -ENOMEM;
	else
		ret = op_profile_add_odb(xl->prof, &j->db, pn, img->file, err, sizeof(err));
	if (ret == -EXDEV)
		xerr("%s", err);
	else if (!ret)
		xl->nfiles++;
	return ret;
}

/*
 * The jobs read so far into the model, in the walk's order; meanwhile jobs
 * read here too when more than XREAD_AHEAD wait to be read (the walk hands
 * them out faster than one thread reads). @all: until every job is in
 * (after the walk, waiting for the reader thread). 0, -ENOMEM, -EXDEV
 * (said).
 */
static int xread_progress(struct xload *xl, struct rpt_profile *rp, bool all)
{
	struct xread *rd = &xl->rd;
	int ret = 0;

	pthread_mutex_lock(&rd->mu);
	while (!ret && rd->taken < rd->njobs) {
		struct xjob *j = rd->jobs[rd->taken];
		size_t first;

		if (!j->done) {
			/* not read yet: read one (maybe this one) meanwhile, else wait */
			if ((all || rd->njobs - rd->next > XREAD_AHEAD) &&
			    xread_claim(rd, 1, &first)) {
				xread_some(rd, first, 1, 1, rp);
			} else if (all) {
				rd->main_waits = true;
				pthread_cond_wait(&rd->cv_main, &rd->mu);
				rd->main_waits = false;
			} else {
				break;
			}
			continue;
		}
		rd->jobs[rd->taken++] = NULL;
		if (rd->reader_waits && rd->next - rd->taken <= XREAD_AHEAD - XREAD_BATCH)
			pthread_cond_signal(&rd->cv_reader);
		pthread_mutex_unlock(&rd->mu);
		ret = xjob_take(xl, rp, j, xl->pn);
		pthread_mutex_lock(&rd->mu);
		if (j->who == 0 && rd->threaded && rd->ntoclose < 2 * XREAD_AHEAD) {
			rd->toclose[rd->ntoclose++] = j->db;
			memset(&j->db, 0, sizeof(j->db));
			j->db.fd = -1;
		}
		pthread_mutex_unlock(&rd->mu);
		xjob_free(j);
		pthread_mutex_lock(&rd->mu);
	}
	pthread_mutex_unlock(&rd->mu);
	return ret;
}

/* after the walk: every job read and in the model. 0, -ENOMEM, -EXDEV (said). */
static int xread_drain(struct xload *xl, struct rpt_profile *rp)
{
	struct xread *rd = &xl->rd;

	pthread_mutex_lock(&rd->mu);
	rd->closed = true;
	pthread_cond_signal(&rd->cv_reader);
	pthread_mutex_unlock(&rd->mu);
	return xread_progress(xl, rp, true);
}

/* the readers' state; the thread started when one can be (else the main thread reads) */
static void xread_init(struct xload *xl, struct rpt_profile *rp, struct xreader_arg *a)
{
	struct xread *rd = &xl->rd;

	pthread_mutex_init(&rd->mu, NULL);
	pthread_cond_init(&rd->cv_reader, NULL);
	pthread_cond_init(&rd->cv_main, NULL);
	a->rd = rd;
	a->rp = rp;
	rd->threaded = !pthread_create(&rd->thr, NULL, xreader, a);
}

/* after xread_drain, or when rs_load failed: the thread ended, the jobs left freed */
static void xread_end(struct xread *rd)
{
	pthread_mutex_lock(&rd->mu);
	rd->closed = true;
	rd->stop = true;
	pthread_cond_signal(&rd->cv_reader);
	pthread_mutex_unlock(&rd->mu);
	if (rd->threaded)
		pthread_join(rd->thr, NULL);
	rd->threaded = false;
	for (size_t i = 0; i < rd->njobs; i++)
		xjob_free(rd->jobs[i]);
	for (size_t i = 0; i < rd->ntoclose; i++)
		odb_close(&rd->toclose[i]);
	free(rd->jobs);
	rd->jobs = NULL;
	xdirs_free(rd->dirs[0]);
	xdirs_free(rd->dirs[1]);
	pthread_mutex_destroy(&rd->mu);
	pthread_cond_destroy(&rd->cv_reader);
	pthread_cond_destroy(&rd->cv_main);
}

/*
 * After the sample files are in the model: the rest of the session. The
 * stack table and the kallsyms snapshot were opened (@stacks_fd,
 * @ksyms_fd, -1: none, consumed) before the symbol loader started: this
 * runs beside it and uses nothing of @rp that it changes.
 */
static int load(struct op_profile *prof, struct rpt_profile *rp, struct rpt_opts *ro, int stacks_fd,
		int ksyms_fd)
{
	int fd, ret = 0;

	/* whole stacks of the first session, as opreport -c reads them */
	if (stacks_fd >= 0) {
		char *path;

		if (asprintf(&path, "%s/%s", rp->samples_dir, OP_SESSION_CG_STACKS_PATH) < 0) {
			close(stacks_fd);
			if (ksyms_fd >= 0)
				close(ksyms_fd);
			return -ENOMEM;
		}
		ret = op_profile_add_stacks(prof, stacks_fd, path, ro->root, want_image, ro);
		free(path);
	}
	if (ksyms_fd >= 0 && ret)
		close(ksyms_fd);
	else if (ksyms_fd >= 0)
		op_profile_kernel_start(prof, ksyms_fd);
	/* every image is known now: the build IDs the daemon recorded, the times */
	for (size_t i = 0; i < rp->nsessions && !ret; i++) {
		char *sd;

		fd = openat(rp->samples_fd, rp->session_names[i],
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			op_profile_session_times(prof, fd);
			/* in session order: a later session's line of a tgid wins */
			ret = op_profile_apply_cgroups(prof, fd);
			close(fd);
		}
		if (ret)
			break;
		if (asprintf(&sd, "%s/%s", rp->samples_root, rp->session_names[i]) < 0)
			return -ENOMEM;
		ret = op_profile_apply_buildids(prof, sd);
		free(sd);
	}
	return ret ? ret : op_profile_finish(prof);
}

/* ------------------------------------------------------------ symbols */

static int name_locations(struct op_profile *prof, struct rpt_profile *rp, struct rpt_opts *ro,
			  const struct xopts *x)
{
	struct rpt_image **imgs = calloc(prof->nmaps + 1, sizeof(*imgs));
	/* per image: lines found, lines missed (an image without DWARF stops being asked) */
	unsigned *hits = calloc(prof->nmaps + 1, sizeof(*hits));
	unsigned *misses = calloc(prof->nmaps + 1, sizeof(*misses));
	int ret = -ENOMEM;

	if (!imgs || !hits || !misses)
		goto out;
	for (size_t i = 0; i < prof->nlocs; i++) {
		const struct op_profile_loc *l = &prof->locs[i];
		const struct op_profile_mapping *m = &prof->maps[l->mapping - 1];
		struct rpt_image *img = imgs[l->mapping];
		const struct rpt_sym *sym;
		const char *file = NULL;
		unsigned line = 0;

		/* --no-symbols: user binaries go bare; kernel and JIT code only we can name */
		if (x->no_symbols && m->kind == OP_IMAGE_USER && !m->is_kernel)
			continue;
		if (!img) {
			struct op_image_name n = { .kind = m->kind,
						   .path = m->path,
						   .tgid = m->tgid,
						   .start = m->anon_start,
						   .end = m->anon_end };

			img = imgs[l->mapping] = rs_image_add(rp, ro, &n);
			if (!img)
				goto out;
			rsym_load_image(rp, ro, img);
		}
		sym = sym_lookup(&img->syms, l->key);
		/* a frame in no image: named as opreport -c and the folded stacks name it */
		if (!sym && !strcmp(m->path, OP_PROFILE_UNKNOWN_IMAGE) &&
		    op_profile_name_loc(prof, (uint32_t)i + 1, OP_PROFILE_UNKNOWN_IMAGE, NULL, 0))
			goto out;
		if (!sym)
			continue;
		/*
		 * -g: lines from DWARF; libbfd answers a binary without it by scanning
		 * every symbol, for each address: after 16 misses and no hit, not asked
		 * again. Else the symbol's own (-g in opreport's loading) or none.
		 */
		if (x->lines && (hits[l->mapping] || misses[l->mapping] < 16) &&
		    sym_key_line(&img->syms, l->key, &file, &line)) {
			hits[l->mapping]++;
		} else {
			misses[l->mapping]++;
			file = sym->file;
			line = sym->line;
		}
		if (op_profile_name_loc(prof, (uint32_t)i + 1, sym->name, file, line))
			goto out;
	}
	ret = 0;
out:
	free(imgs);
	free(hits);
	free(misses);
	return ret;
}

/*
 * The symbol tables (libbfd, the kallsyms snapshot: most of naming's time)
 * of the sampled images are loaded on a thread of their own from when the
 * sample files are in the model, beside the stacks, the build IDs and the
 * encoder's set-up; the names are looked up once it is done. Meanwhile
 * only this thread uses the struct rpt_profile.
 */
struct symloader {
	struct rpt_profile *rp;
	struct rpt_opts *ro;
	struct rpt_image **imgs;
	size_t n;
	bool running;
	pthread_t thr;
};

static void *symloader_run(void *arg)
{
	struct symloader *sl = arg;

	for (size_t i = 0; i < sl->n; i++)
		rsym_load_image(sl->rp, sl->ro, sl->imgs[i]);
	return NULL;
}

/* the images of @prof's mappings that name_locations will name, loading from now on */
static int symloader_start(struct symloader *sl, const struct op_profile *prof,
			   struct rpt_profile *rp, struct rpt_opts *ro, const struct xopts *x)
{
	sl->rp = rp;
	sl->ro = ro;
	sl->imgs = calloc(prof->nmaps + 1, sizeof(*sl->imgs));
	if (!sl->imgs)
		return -ENOMEM;
	for (size_t i = 0; i < prof->nmaps; i++) {
		const struct op_profile_mapping *m = &prof->maps[i];
		struct op_image_name n = { .kind = m->kind,
					   .path = m->path,
					   .tgid = m->tgid,
					   .start = m->anon_start,
					   .end = m->anon_end };

		if (x->no_symbols && m->kind == OP_IMAGE_USER && !m->is_kernel)
			continue;
		if (!(sl->imgs[sl->n++] = rs_image_add(rp, ro, &n)))
			return -ENOMEM;
	}
	/* no thread to be had: loaded by name_locations */
	sl->running = !pthread_create(&sl->thr, NULL, symloader_run, sl);
	return 0;
}

/* the loader done: the struct rpt_profile is the caller's again */
static void symloader_end(struct symloader *sl)
{
	if (sl->running)
		pthread_join(sl->thr, NULL);
	sl->running = false;
	free(sl->imgs);
	sl->imgs = NULL;
}

/* name_locations as op_pprof_opts.name_fn: on the encoder's thread of its own */
struct namer_args {
	struct op_profile *prof;
	struct rpt_profile *rp;
	struct rpt_opts *ro;
	const struct xopts *x;
	struct symloader *sl;
};

static int name_locations_cb(void *arg)
{
	struct namer_args *a = arg;

	symloader_end(a->sl);
	return name_locations(a->prof, a->rp, a->ro, a->x);
}

/* ------------------------------------------------------------ speedscope */

static const char *base_of(const char *path)
{
	const char *b = strrchr(path, '/');

	return b && b[1] ? b + 1 : path;
}

static void ss_frame_name(FILE *f, const struct op_profile *prof, const struct op_profile_loc *l)
{
	char buf[PATH_MAX + 64];

	if (l->func) {
		txt_put_json(f, l->func);
		return;
	}
	snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, base_of(prof->maps[l->mapping - 1].path),
		 l->key);
	txt_put_json(f, buf);
}

/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json):
 * shared frames, one "sampled" profile whose stacks list frame indexes root
 * first, with the samples (or nanoseconds, for the timer) as weights.
 */
static int write_speedscope(FILE *f, const struct op_profile *prof, const char *name)
{
	uint32_t *of_loc = calloc(prof->nlocs + 1, sizeof(*of_loc));
	uint32_t nframes = 0;
	uint64_t total = 0;
	bool first = true;

	if (!of_loc)
		return -ENOMEM;
	fputs("{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
	      "\"exporter\":\"opexport " PACKAGE_VERSION "\",\"name\":",
	      f);
	txt_put_json(f, name);
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", f);
	for (size_t i = 0; i < prof->nsamples; i++) {
		const struct op_profile_sample *s = &prof->samples[i];

		for (uint32_t j = 0; j < s->nlocs; j++) {
			uint32_t id = prof->locpool[s->loc_off + j];
			const struct op_profile_loc *l = &prof->locs[id - 1];

			if (of_loc[id])
				continue;
			of_loc[id] = ++nframes;
			fputs(first ? "{\"name\":" : ",{\"name\":", f);
			first = false;
			ss_frame_name(f, prof, l);
			if (l->file) {
				fputs(",\"file\":", f);
				txt_put_json(f, l->file);
				if (l->line)
					fprintf(f, ",\"line\":%u", l->line);
			}
			fputc('}', f);
		}
		total += prof->timer ? s->count * prof->period : s->count;
	}
	fprintf(f, "]},\"profiles\":[{\"type\":\"sampled\",\"name\":");
	txt_put_json(f, name);
	fprintf(f, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[",
		prof->timer ? "nanoseconds" : "none", total);
	for (size_t i = 0; i < prof->nsamples; i++) {
		const struct op_profile_sample *s = &prof->samples[i];

		fputs(i ? ",[" : "[", f);
		/* our stacks are leaf first, speedscope's root first */
		for (uint32_t j = s->nlocs; j-- > 0;)
			fprintf(f, "%s%u", j + 1 == s->nlocs ? "" : ",",
				of_loc[prof->locpool[s->loc_off + j]] - 1);
		fputc(']', f);
	}
	fputs("],\"weights\":[", f);
	for (size_t i = 0; i < prof->nsamples; i++) {
		const struct op_profile_sample *s = &prof->samples[i];

		fprintf(f, "%s%" PRIu64, i ? "," : "",
			prof->timer ? s->count * prof->period : s->count);
	}
	fputs("]}]}\n", f);
	free(of_loc);
	return 0;
}

/* ------------------------------------------------------------ main */

static int write_out(const struct xopts *x, const void *buf, size_t len, FILE **out)
{
	FILE *f = stdout;

	if (x->outfile) {
		f = fopen(x->outfile, "w");
		if (!f) {
			xerr("-o %s: cannot open for writing: %s", x->outfile, strerror(errno));
			return -errno;
		}
	}
	*out = f;
	if (buf && len && fwrite(buf, 1, len, f) != len)
		return -EIO;
	return 0;
}

/* load the session (rs_load: opreport's selection) and write it as @x asks */
static int export(const struct xopts *x, struct rpt_profile *rp, struct rpt_opts *ro)
{
	struct op_profile *prof = NULL;
	struct xload xl = { .ro = ro };
	struct xreader_arg xa;
	struct symloader sl = { 0 };
	int stacks_fd, ksyms_fd;
	bool reading = false;
	char err[2048] = "";
	uint8_t *buf = NULL;
	size_t len = 0;
	FILE *out = NULL;
	int ret;

	if (x->fmt != XF_FOLDED) {
		prof = xl.prof = op_profile_new();
		if (!prof)
			return -ENOMEM;
		op_profile_set_warn(prof, warn_cb, NULL);
		for (size_t i = 0; i < x->labels.n; i++) {
			ret = op_profile_add_label(prof, x->labels.v[i]);
			if (ret)
				goto out;
		}
		/* the sample files are read once, by the readers, into the model */
		rp->file_fn = load_file;
		rp->file_arg = &xl;
		xl.pn = calloc(1, sizeof(*xl.pn));
		if (!xl.pn) {
			ret = -ENOMEM;
			goto out;
		}
		xread_init(&xl, rp, &xa);
		reading = true;
	}
	ret = rs_load(rp, ro, err, sizeof(err));
	if (ret) {
		if (ret != -EXDEV) /* said by xjob_take */
			xerr("%s", err[0] ? err : strerror(-ret));
		ret = -EINVAL; /* said */
		goto out;
	}
	if (reading) {
		ret = xread_drain(&xl, rp);
		xread_end(&xl.rd);
		reading = false;
		if (ret == -EXDEV) /* said */
			ret = -EINVAL;
		if (ret)
			goto out;
	}
	rs_warn_stats(rp);
	if (x->fmt == XF_FOLDED) {
		struct cgr_opts cgo = { .folded = true };

		ret = write_out(x, NULL, 0, &out);
		if (!ret)
			ret = cgr_report(out, rp, ro, &cgo) < 0 ? -EIO : 0;
		goto out;
	}
	if (!xl.nfiles) {
		xerr("no samples: every matching sample file in %s was skipped", rp->samples_dir);
		ret = -ENOENT;
		goto out;
	}
	/* what load() reads of the session through rp, opened before the loader starts */
	stacks_fd = rs_open_session_file(rp, OP_SESSION_CG_STACKS_PATH, O_RDONLY);
	ksyms_fd = rs_open_session_file(rp, OP_SESSION_KALLSYMS_PATH, O_RDONLY);
	ret = symloader_start(&sl, prof, rp, ro, x);
	if (ret) {
		if (stacks_fd >= 0)
			close(stacks_fd);
		if (ksyms_fd >= 0)
			close(ksyms_fd);
		goto out;
	}
	ret = load(prof, rp, ro, stacks_fd, ksyms_fd); /* consumes both */
	if (ret)
		goto out;
	if (x->fmt == XF_PPROF) {
		/*
		 * the symbols are looked up while the samples are packed (their
		 * tables loading since the model was read), and deflate runs
		 * beside the packing: on several cores they overlap
		 */
		struct namer_args na = { prof, rp, ro, x, &sl };
		const struct op_pprof_opts po = { .threaded = true,
						  .name_fn = name_locations_cb,
						  .name_arg = &na };

		ret = op_pprof_encode(prof, &po, &buf, &len);
		if (!ret)
			ret = write_out(x, buf, len, &out);
	} else {
		symloader_end(&sl);
		ret = name_locations(prof, rp, ro, x);
		if (ret)
			goto out;
		ret = write_out(x, NULL, 0, &out);
		if (!ret)
			ret = write_speedscope(out, prof, rp->samples_dir);
	}
out:
	symloader_end(&sl);
	if (reading)
		xread_end(&xl.rd);
	if (ret == -ENOMEM)
		xerr("out of memory");
	if (out && (fflush(out) || ferror(out)) && !ret) {
		xerr("writing %s failed: %s", x->outfile ? x->outfile : "the output",
		     strerror(errno));
		ret = -EIO;
	}
	if (out && out != stdout && fclose(out) && !ret)
		ret = -EIO;
	free(buf);
	free(xl.pn);
	op_profile_free(prof);
	return ret;
}

int main(int argc, char **argv)
{
	enum { OPT_SESSION = 256, OPT_FORMAT, OPT_LABEL, OPT_NO_SYMBOLS };
	static const struct option longopts[] = {
		{ "session-dir", required_argument, NULL, OPT_SESSION },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "output-file", required_argument, NULL, 'o' },
		{ "label", required_argument, NULL, OPT_LABEL },
		{ "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS },
		{ "debug-info", no_argument, NULL, 'g' },
		{ "image-path", required_argument, NULL, 'p' },
		{ "root", required_argument, NULL, 'R' },
		{ "demangle", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "usage", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	/* every file counts: labels come from the names, not from classes */
	struct rpt_opts o = { .demangle = DEMANGLE_NORMAL, .merge = MERGE_ALL, .symbols = true };
	struct rpt_profile p = { 0 };
	struct xopts x = { .fmt = XF_PPROF };
	char err[2048] = "", cwd[PATH_MAX];
	int c, ret = 1;

	/*
	 * two malloc arenas: the main thread's and the reader thread's (whose
	 * file copies on the main arena kept the two waiting on its lock: 0.8 s
	 * of CPU against 0.6 s, 23,000 files); the symbol loader takes the
	 * reader's when it has ended, deflate's threads hardly allocate. One per
	 * thread took the peak RSS of a 24,000-file export from 240 to 280 MB.
	 */
	mallopt(M_ARENA_MAX, 2);
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	while ((c = getopt_long(argc, argv, "o:gp:R:D:h?", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_SESSION:
			o.session_dir = optarg;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "pprof")) {
				x.fmt = XF_PPROF;
			} else if (!strcmp(optarg, "folded")) {
				x.fmt = XF_FOLDED;
			} else if (!strcmp(optarg, "speedscope")) {
				x.fmt = XF_SPEEDSCOPE;
			} else {
				xerr("--format=%s: expected pprof, folded or speedscope", optarg);
				goto out;
			}
			break;
		case 'o':
			x.outfile = optarg;
			break;
		case OPT_LABEL: {
			const char *eq = strchr(optarg, '=');

			if (!eq || eq == optarg) {
				xerr("--label=%s: expected KEY=VALUE with a non-empty KEY", optarg);
				goto out;
			}
			/* strlist_add drops duplicates: a repeated pair is one label */
			if (strlist_add(&x.labels, optarg)) {
				xerr("out of memory");
				goto out;
			}
			break;
		}
		case OPT_NO_SYMBOLS:
			x.no_symbols = true;
			break;
		case 'g':
			x.lines = true;
			o.debug_info = true; /* the symbols' own file and line too */
			break;
		case 'p':
			if (strlist_add_csv(&o.image_path, optarg))
				goto out;
			break;
		case 'R':
			o.root = optarg;
			break;
		case 'D':
			if (spec_parse_demangle(optarg, &o.demangle)) {
				xerr("--demangle=%s: expected none, smart or normal", optarg);
				goto out;
			}
			break;
		case 'V':
			printf("opexport " PACKAGE_VERSION "\n");
			ret = 0;
			goto out;
		case 'h':
			usage(stdout);
			ret = 0;
			goto out;
		default:
			if (!strcmp(argv[optind - 1], "-?")) {
				usage(stdout);
				ret = 0;
				goto out;
			}
			usage(stderr);
			goto out;
		}
	}
	/* options that a format has no place for are refused, not ignored */
	if (x.labels.n && x.fmt != XF_PPROF) {
		xerr("--label applies to --format=pprof only (labels of pprof samples)");
		goto out;
	}
	if ((x.no_symbols || x.lines) && x.fmt == XF_FOLDED) {
		xerr("%s does not apply to --format=folded (opreport's names of the stacks)",
		     x.no_symbols ? "--no-symbols" : "-g/--debug-info");
		goto out;
	}
	if (x.fmt == XF_PPROF && !x.outfile && isatty(STDOUT_FILENO)) {
		xerr("--format=pprof writes binary data: give -o FILE or redirect the output");
		goto out;
	}
	for (int i = optind; i < argc; i++) {
		if (spec_add(&o.spec, argv[i], cwd, err, sizeof(err))) {
			xerr("%s", err);
			goto out;
		}
	}
	if (rs_find_session(o.session_dir, &p.session_dir, err, sizeof(err))) {
		xerr("%s", err[0] ? err : "out of memory");
		goto out_free;
	}
	ret = export(&x, &p, &o) ? 1 : 0;
out_free:
	rs_free(&p);
out:
	spec_free(&o.spec);
	strlist_free(&o.image_path);
	strlist_free(&x.labels);
	return ret;
}
