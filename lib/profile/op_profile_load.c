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

#include "op_cg_format.h"
#include "op_ksyms.h"
#include "op_profile_int.h"
#include "op_session_layout.h"

/* ------------------------------------------------------------ stacks */

/*
 * The whole file in private memory with pread: the daemon may grow or cut
 * it meanwhile (a mapping would die of SIGBUS); what was read counts.
 */
static char *read_whole(int fd, size_t *got)
{
	struct stat st;
	size_t len, off = 0;
	char *buf;

	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > SIZE_MAX - 1)
		return NULL;
	len = (size_t)st.st_size;
	buf = malloc(len + 1);
	while (buf && off < len) {
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

struct stk {
	struct op_profile *p;
	const char *path;
	uint32_t *map; /* table image index + 1 -> mapping id (0: none) */
	bool *wanted;  /* by table image index + 1 */
	uint32_t nimg;
	uint32_t unknown; /* mapping of frames mapped to no image */
	unsigned nbad;
	op_profile_want_image_fn want;
};

static void stk_bad(struct stk *s, const char *why)
{
	if (!s->nbad++)
		op_profile_warnf(s->p,
				 "%s: %s; such entries are left out (the daemon may have been "
				 "writing it, or it is damaged)",
				 s->path, why);
}

static int stk_images(struct stk *s, const struct cgs_image *imgs, uint32_t nimg, const char *strs,
		      uint32_t strings_size, void *arg)
{
	s->map = calloc(nimg + 1, sizeof(*s->map));
	s->wanted = calloc(nimg + 1, sizeof(*s->wanted));
	if (!s->map || !s->wanted)
		return -ENOMEM;
	s->nimg = nimg;
	s->wanted[0] = !s->want;
	for (uint32_t i = 0; i < nimg; i++) {
		const struct cgs_image *ci = &imgs[i];
		struct op_image_name n = { 0 };

		if ((uint64_t)ci->name_off + ci->name_len >= strings_size ||
		    strs[ci->name_off + ci->name_len] || ci->kind > CGS_IMG_ANON) {
			stk_bad(s, "an image entry points outside its name area");
			continue;
		}
		n.kind = ci->kind == CGS_IMG_KERNEL ? OP_IMAGE_KERNEL :
			 ci->kind == CGS_IMG_ANON   ? OP_IMAGE_ANON :
						      OP_IMAGE_USER;
		n.path = strs + ci->name_off;
		n.tgid = ci->tgid;
		n.start = ci->anon_start;
		n.end = ci->anon_end;
		s->map[i + 1] = op_profile_mapping(s->p, &n, ci->kind == CGS_IMG_KERNEL, NULL);
		if (!s->map[i + 1])
			return -ENOMEM;
		s->wanted[i + 1] = !s->want || s->want(arg, &n);
	}
	return 0;
}

/* one stack, @depth frames leaf first; kept when one of its images is wanted */
static int stk_take(struct stk *s, uint32_t app, uint64_t count, const struct cgs_frame *fr,
		    uint32_t depth)
{
	uint32_t locs[CGS_MAX_DEPTH];
	struct op_profile_labels lab = { -1, -1, -1, 0 };
	bool wanted = app <= s->nimg && s->wanted[app];

	for (uint32_t j = 0; j < depth && !wanted; j++)
		wanted = fr[j].image <= s->nimg && s->wanted[fr[j].image];
	if (!wanted || !depth)
		return 0;
	if (app && app <= s->nimg)
		lab.comm = s->map[app];
	for (uint32_t j = 0; j < depth; j++) {
		uint32_t map = fr[j].image <= s->nimg ? s->map[fr[j].image] : 0;
		/* callers' keys are return addresses: the call is the instruction before */
		uint64_t key = j && fr[j].key ? fr[j].key - 1 : fr[j].key;

		if (!map) {
			if (!s->unknown) {
				struct op_image_name n = { .kind = OP_IMAGE_USER,
							   .path = "[unknown]" };

				s->unknown = op_profile_mapping(s->p, &n, false, NULL);
			}
			map = s->unknown;
		}
		locs[j] = map ? op_profile_location(s->p, map, key) : 0;
		if (!locs[j])
			return -ENOMEM;
	}
	return op_profile_add(s->p, locs, depth, &lab, count, false);
}

static int stk_v1(struct stk *s, const char *base, size_t size, void *arg)
{
	const struct cgs_header *h = (const void *)base;
	const struct cgs_stack *stacks;
	const struct cgs_frame *frames;
	struct cgs_layout l;
	uint32_t nimg;
	int ret;

	if (size < sizeof(*h) || h->header_size != sizeof(*h) || !h->stacks_max ||
	    (h->stacks_max & (h->stacks_max - 1))) {
		stk_bad(s, "not a version 1 stack table (bad sizes)");
		return 0;
	}
	cgs_layout(h->images_max, h->strings_size, h->stacks_max, h->frames_max, &l);
	if (l.size > size || h->images_off != l.images_off || h->strings_off != l.strings_off) {
		stk_bad(s, "its areas do not fit the file");
		return 0;
	}
	nimg = h->images_used <= h->images_max ? h->images_used : h->images_max;
	ret = stk_images(s, (const void *)(base + l.images_off), nimg, base + l.strings_off,
			 h->strings_size, arg);
	stacks = (const void *)(base + l.stacks_off);
	frames = (const void *)(base + l.frames_off);
	for (uint32_t i = 0; i < h->stacks_max && !ret; i++) {
		const struct cgs_stack *st = &stacks[i];

		if (!st->id || !st->count)
			continue;
		if (!st->depth || st->depth > CGS_MAX_DEPTH || st->frame_off > h->frames_max ||
		    st->depth > h->frames_max - st->frame_off || st->app > nimg) {
			stk_bad(s, "a stack's frames lie outside the frame pool");
			continue;
		}
		ret = stk_take(s, st->app, st->count, &frames[st->frame_off], st->depth);
	}
	return ret;
}

static int stk_v2(struct stk *s, const char *base, size_t size, void *arg)
{
	const struct cgs_header2 *h = (const void *)base;
	struct cgs_frame fr[CGS_MAX_DEPTH];
	const struct cgs_node *nodes;
	struct cgs_layout2 l;
	uint64_t nnodes;
	uint32_t nimg;
	int ret;

	if (size < sizeof(*h) || h->header_size != sizeof(*h)) {
		stk_bad(s, "not a version 2 stack table (bad header size)");
		return 0;
	}
	cgs_layout2(h->images_max, h->strings_size, &l);
	if (l.nodes_off > size || h->images_off != l.images_off ||
	    h->strings_off != l.strings_off || h->nodes_off != l.nodes_off) {
		stk_bad(s, "its areas do not fit the file");
		return 0;
	}
	nnodes = (size - l.nodes_off) / sizeof(*nodes);
	if (h->nodes_max < nnodes)
		nnodes = h->nodes_max;
	if (h->nodes_used < nnodes)
		nnodes = h->nodes_used;
	nimg = h->images_used <= h->images_max ? h->images_used : h->images_max;
	ret = stk_images(s, (const void *)(base + l.images_off), nimg, base + l.strings_off,
			 h->strings_size, arg);
	nodes = (const void *)(base + l.nodes_off);
	for (uint64_t i = 0; i < nnodes && !ret; i++) {
		uint64_t k = i;
		uint32_t depth = 0;

		if (!nodes[i].count || !nodes[i].parent)
			continue;
		/* parents come first: each step goes down, so the walk ends */
		while (nodes[k].parent && depth < CGS_MAX_DEPTH && nodes[k].parent - 1 < k) {
			fr[depth].image = nodes[k].image;
			fr[depth++].key = nodes[k].key;
			k = nodes[k].parent - 1;
		}
		if (nodes[k].parent || nodes[k].image > nimg) {
			stk_bad(s, "a stack's nodes do not lead back to a root");
			continue;
		}
		ret = stk_take(s, nodes[k].image, nodes[i].count, fr, depth);
	}
	return ret;
}

int op_profile_add_stacks(struct op_profile *p, int fd, const char *path, const char *root,
			  op_profile_want_image_fn want, void *arg)
{
	struct op_profile_priv *pv = p->priv;
	struct stk s = { .p = p, .path = path, .want = want };
	const struct cgs_header *h;
	size_t size = 0;
	char *base;
	int ret = 0;

	if (root && !pv->root && !(pv->root = strdup(root))) {
		close(fd);
		return -ENOMEM;
	}
	base = read_whole(fd, &size);
	close(fd);
	if (!base) {
		if (errno == ENOMEM)
			return -ENOMEM;
		stk_bad(&s, "cannot be read");
		return 0;
	}
	h = (const void *)base;
	if (size < 16 || memcmp(h->magic, CGS_MAGIC, 8))
		stk_bad(&s, "not a stack table (shorter than its header, or bad magic)");
	else if (h->version == CGS_VERSION)
		ret = stk_v2(&s, base, size, arg);
	else if (h->version == CGS_VERSION1)
		ret = stk_v1(&s, base, size, arg);
	else
		stk_bad(&s, "a stack table of an unknown version (a newer oprofiled?)");
	free(s.map);
	free(s.wanted);
	free(base);
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
		ret = op_profile_finish(p);
	if (ret == -ENOMEM && !err[0])
		snprintf(err, err_len, "out of memory");
	return ret;
}
