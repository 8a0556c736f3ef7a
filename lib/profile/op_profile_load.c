/*
 * op_profile_load.c - a session into the profile model: the walk of the
 * sample files (never through a symbolic link), the call-graph stack table
 * (op_cg_format.h), the kallsyms snapshot's kernel start, the session's
 * times. SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_cg_read.h"
#include "op_ksyms.h"
#include "op_profile_int.h"
#include "op_session_layout.h"

/* ------------------------------------------------------------ stacks */

struct stk {
	struct op_profile *p;
	const char *path;
	const struct op_cgs_info *info;
	uint32_t *map; /* table image index + 1 -> mapping id (0: none) */
	bool *wanted;  /* by table image index + 1 */
	uint32_t nimg;
	uint32_t unknown;  /* mapping of frames mapped to no image */
	const char *split; /* the last stack's split key (stacks of a key share it), its id */
	uint32_t split_id;
	unsigned nbad;
	op_profile_want_image_fn want;
	void *want_arg;
};

static void stk_bad(void *arg, const char *why)
{
	struct stk *s = arg;

	if (!s->nbad++)
		op_profile_warnf(s->p,
				 "%s: %s; such entries are left out (the daemon may have been "
				 "writing it, or it is damaged)",
				 s->path, why);
}

static int stk_map(struct stk *s)
{
	if (s->map)
		return 0;
	s->nimg = s->info->nimages;
	s->map = calloc(s->nimg + 1, sizeof(*s->map));
	s->wanted = calloc(s->nimg + 1, sizeof(*s->wanted));
	if (!s->map || !s->wanted)
		return -ENOMEM;
	s->wanted[0] = !s->want;
	return 0;
}

static int stk_image(void *arg, uint32_t i, const struct op_image_name *n)
{
	struct stk *s = arg;

	if (stk_map(s))
		return -ENOMEM;
	s->map[i + 1] = op_profile_mapping(s->p, n, n->kind == OP_IMAGE_KERNEL, NULL);
	if (!s->map[i + 1])
		return -ENOMEM;
	s->wanted[i + 1] = !s->want || s->want(s->want_arg, n);
	return 0;
}

/*
 * one stack, its frames leaf first; kept when one of its images is wanted.
 * Its pid/tid/cpu labels (version 3's context) where the flat sample files
 * have them too, its cgroup from version 4's split key (the flat files'
 * {cgroup}/KEY): the labels of a stack sample are those of the flat
 * samples it is subtracted from (op_profile_finish).
 */
static int stk_take(void *arg, const struct op_cgs_stack *st)
{
	struct stk *s = arg;
	struct op_profile_priv *pv = s->p->priv;
	uint32_t locs[CGS_MAX_DEPTH];
	struct op_profile_labels lab = { -1, -1, -1, 0, 0 };
	const struct cgs_frame *fr = st->fr;
	uint32_t app = st->app, depth = st->depth;
	bool wanted;

	/* pprof has no mark for a truncated stack: the outer callers are just missing */
	if (stk_map(s))
		return -ENOMEM;
	/* no filter: every stack, also those whose image entries were bad */
	wanted = !s->want || (app <= s->nimg && s->wanted[app]);
	for (uint32_t j = 0; j < depth && !wanted; j++)
		wanted = fr[j].image <= s->nimg && s->wanted[fr[j].image];
	if (!wanted || !depth)
		return 0;
	if (app && app <= s->nimg)
		lab.comm = s->map[app];
	if (pv->flat_thread) {
		lab.pid = st->tgid;
		lab.tid = st->tid;
	}
	if (pv->flat_cpu)
		lab.cpu = st->cpu;
	/* version 4: the split's cgroup (only a --separate=cgroup session has one) */
	if (st->split && st->split != s->split) {
		if (op_profile_split_id(s->p, st->split, &s->split_id))
			return -ENOMEM;
		s->split = st->split;
	}
	if (st->split && !(lab.cgroup = s->split_id))
		return 0; /* a split whose flat files were not selected (cgroup:) */
	for (uint32_t j = 0; j < depth; j++) {
		uint32_t map = fr[j].image <= s->nimg ? s->map[fr[j].image] : 0;
		/* callers' keys are return addresses: the call is the instruction before */
		uint64_t key = j && fr[j].key ? fr[j].key - 1 : fr[j].key;

		if (!map) {
			if (!s->unknown) {
				struct op_image_name n = { .kind = OP_IMAGE_USER,
							   .path = OP_PROFILE_UNKNOWN_IMAGE };

				s->unknown = op_profile_mapping(s->p, &n, false, NULL);
			}
			map = s->unknown;
		}
		locs[j] = map ? op_profile_location(s->p, map, key) : 0;
		if (!locs[j])
			return -ENOMEM;
	}
	return op_profile_add(s->p, locs, depth, &lab, st->count, false);
}

int op_profile_add_stacks(struct op_profile *p, int fd, const char *path, const char *root,
			  op_profile_want_image_fn want, void *arg)
{
	struct op_profile_priv *pv = p->priv;
	struct op_cgs_info info;
	struct stk s = { .p = p, .path = path, .info = &info, .want = want, .want_arg = arg };
	const struct op_cgs_visitor v = { stk_image, stk_take, stk_bad, &s };
	int ret;

	if (root && !pv->root && !(pv->root = strdup(root))) {
		close(fd);
		return -ENOMEM;
	}
	ret = op_cgs_read(fd, &v, &info);
	close(fd);
	free(s.map);
	free(s.wanted);
	return ret;
}

/* ------------------------------------------------------------ session */

void op_profile_kernel_start(struct op_profile *p, int fd)
{
	struct op_ksyms_text t;
	char line[4096];
	FILE *f = fdopen(fd, "r");

	if (!f) {
		close(fd);
		return;
	}
	op_ksyms_text_init(&t);
	while (fgets(line, sizeof(line), f)) {
		struct op_ksym_line k;

		line[strcspn(line, "\n")] = '\0';
		if (!op_ksyms_parse_line(line, &k))
			op_ksyms_text_add(&t, &k);
		/* _text is the start whatever follows (the third line of 122,000) */
		if (t.has_text)
			break;
	}
	fclose(f);
	if (!op_ksyms_text_start(&t, &p->kernel_start))
		p->kernel_start = 0;
}

static uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

void op_profile_session_times(struct op_profile *p, int dfd)
{
	struct statx sx;
	struct stat st;
	uint64_t start = 0, end = 0;

	if (!statx(dfd, "", AT_EMPTY_PATH, STATX_BTIME, &sx) && (sx.stx_mask & STATX_BTIME))
		start = (uint64_t)sx.stx_btime.tv_sec * 1000000000ull + sx.stx_btime.tv_nsec;
	if (!fstatat(dfd, OP_SESSION_STATS, &st, AT_SYMLINK_NOFOLLOW)) {
		end = ts_ns(&st.st_mtim);
		if (!start || ts_ns(&st.st_ctim) < start)
			start = start ? start : ts_ns(&st.st_ctim);
	}
	if (!fstatat(dfd, OP_SESSION_STATS "/" OP_STATS_TOTAL_SAMPLES, &st, AT_SYMLINK_NOFOLLOW) &&
	    ts_ns(&st.st_mtim) > end)
		end = ts_ns(&st.st_mtim);
	if (!end && !fstat(dfd, &st))
		end = ts_ns(&st.st_mtim);
	if (!start)
		start = end;
	if (!p->time_nanos || start < p->time_nanos)
		p->time_nanos = start;
	if (end > p->time_nanos && end - p->time_nanos > p->duration_nanos)
		p->duration_nanos = end - p->time_nanos;
}

/* ------------------------------------------------------------ the walk */

struct walk {
	struct op_profile *p;
	const struct op_profile_load_opts *o;
	char rel[4096];
	size_t nfiles;
	char *err;
	size_t err_len;
};

static int walk_file(struct walk *w, int dfd, const char *name)
{
	struct op_parsed_name *pn = malloc(sizeof(*pn));
	char err[512] = "", *file = NULL;
	odb_t db;
	int ret;

	if (!pn)
		return -ENOMEM;
	if (op_parse_name(w->rel, pn, err, sizeof(err))) {
		op_profile_warnf(w->p, "skipping %s: not a sample-file name (%s)", w->rel, err);
		ret = 0;
		goto out;
	}
	ret = 0;
	if (pn->is_cg || (w->o && w->o->want && !w->o->want(w->o->arg, pn)))
		goto out;
	memset(&db, 0, sizeof(db));
	ret = odb_open(&db, dfd, name, ODB_RDONLY, err, sizeof(err));
	if (!ret)
		ret = odb_check(&db, err, sizeof(err));
	if (ret) {
		op_profile_warnf(w->p, "skipping sample file %s: corrupt or unreadable (%s)",
				 w->rel, err[0] ? err : strerror(-ret));
		odb_close(&db);
		ret = ret == -ENOMEM ? -ENOMEM : 0;
		goto out;
	}
	w->nfiles++;
	if (w->o && w->o->root && pn->image.kind == OP_IMAGE_USER && pn->image.path &&
	    asprintf(&file, "%s%s", w->o->root, pn->image.path) < 0) {
		odb_close(&db);
		ret = -ENOMEM;
		goto out;
	}
	ret = op_profile_add_odb(w->p, &db, pn, file, w->err, w->err_len);
	odb_close(&db);
out:
	free(file);
	free(pn);
	return ret;
}

static int walk_dir(struct walk *w, int dfd, size_t len, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int ret = 0;

	if (!d) {
		close(dfd);
		return errno == ENOMEM ? -ENOMEM : 0;
	}
	while (!ret && (de = readdir(d))) {
		size_t nl = strlen(de->d_name);
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* stats/ and callgraph/ are the session's own; {cg} holds arcs, not samples */
		if (!depth && (!strcmp(de->d_name, OP_SESSION_STATS) ||
			       !strcmp(de->d_name, OP_SESSION_CG_DIR)))
			continue;
		if (!strcmp(de->d_name, "{cg}"))
			continue;
		if (len + nl + 2 > sizeof(w->rel) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		w->rel[len] = len ? '/' : '\0';
		memcpy(w->rel + len + !!len, de->d_name, nl + 1);
		if (S_ISDIR(st.st_mode) && depth < 64) {
			int fd = openat(dirfd(d), de->d_name,
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (fd >= 0)
				ret = walk_dir(w, fd, len + !!len + nl, depth + 1);
		} else if (S_ISREG(st.st_mode)) {
			ret = walk_file(w, dirfd(d), de->d_name);
		} else {
			op_profile_warnf(w->p, "skipping %s: not a regular file or directory",
					 w->rel);
		}
		w->rel[len] = '\0';
	}
	closedir(d);
	return ret;
}

int op_profile_load(struct op_profile *p, const char *samples_dir,
		    const struct op_profile_load_opts *o, char *err, size_t err_len)
{
	struct op_profile_priv *pv = p->priv;
	struct walk w = { .p = p, .o = o, .err = err, .err_len = err_len };
	int dfd, fd, ret;

	err[0] = '\0';
	if (o && o->root && !pv->root && !(pv->root = strdup(o->root)))
		return -ENOMEM;
	dfd = open(samples_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		ret = -errno;
		snprintf(err, err_len, "%s: %s", samples_dir,
			 ret == -ELOOP ? "a symbolic link (not followed)" : strerror(-ret));
		return -ENOENT;
	}
	op_profile_session_times(p, dfd);
	ret = op_profile_apply_cgroups(p, dfd);
	if (ret) {
		close(dfd);
		return ret;
	}
	fd = openat(dfd, OP_SESSION_KALLSYMS_PATH, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0)
		op_profile_kernel_start(p, fd);
	if (!o || !o->no_stacks) {
		fd = openat(dfd, OP_SESSION_CG_STACKS_PATH,
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd >= 0) {
			char *path;

			if (asprintf(&path, "%s/%s", samples_dir, OP_SESSION_CG_STACKS_PATH) < 0) {
				close(fd);
				close(dfd);
				return -ENOMEM;
			}
			ret = op_profile_add_stacks(p, fd, path, o ? o->root : NULL, NULL, NULL);
			free(path);
			if (ret) {
				close(dfd);
				return ret;
			}
		}
	}
	fd = dup(dfd);
	ret = fd < 0 ? -errno : walk_dir(&w, fd, 0, 0);
	close(dfd);
	if (!ret && !w.nfiles) {
		snprintf(err, err_len, "%s holds no sample file%s", samples_dir,
			 o && o->want ? " that was asked for" : "");
		ret = -ENOENT;
	}
	if (!ret)
		ret = op_profile_apply_buildids(p, samples_dir);
	if (!ret)
		ret = op_profile_finish(p);
	if (ret == -ENOMEM && !err[0])
		snprintf(err, err_len, "out of memory");
	return ret;
}
