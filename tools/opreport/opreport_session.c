/*
 * opreport_session.c - find the session, walk its sample files, parse and
 * match their names against the profile specification, arrange them into
 * classes (columns) and into the inverted profile: one rpt_image per binary,
 * one rpt_group per (application, image).
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#if defined(SYS_openat2) && __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define RS_HAVE_OPENAT2 1
#endif

#include "odb.h"
#include "op_cpu.h"
#include "op_session_layout.h"
#include "opreport.h"

#define AX_EVENT 0
#define AX_CPU 1
#define AX_TID 2
#define AX_TGID 3
#define AX_CGROUP 4 /* issue 20: the --separate=cgroup split */
#define AX_NR 5

static const char *const axis_names[AX_NR] = { "event", "cpu", "tid", "tgid", "cgroup" };
static const char *const axis_merge[AX_NR] = { NULL, "cpu", "tid", "tgid", "cgroup" };

struct rs_file {
	char *path;      /* full path */
	const char *rel; /* relative to the session directory */
	struct op_parsed_name *pn;
	bool selected;  /* matches the whole spec */
	size_t session; /* its session: p->session_names[session] */
};

struct rs_walk {
	struct rs_file *v;
	size_t n, cap;
	size_t nfound; /* sample files found, before any filter */
	struct rpt_profile *p;
	const struct rpt_opts *o;
	int err;
	size_t session; /* the session being walked */
	/* cgroup: the selected processes of the session being walked */
	struct rpt_tgids cg;
	size_t cg_indexes; /* sessions with a stats/cgroups */
	size_t cg_split;   /* issue 20: files of a --separate=cgroup split (exact for cgroup:) */
	size_t cg_no_tgid; /* files without a process (not --separate=thread) */
};

static int rs_open_file_in(struct rpt_profile *p, size_t session, const char *rel, int flags);

/* deeper than any sample-file name oprofiled writes: not walked */
#define RS_MAX_DEPTH 256
#define RS_STR_(x) #x
#define RS_STR(x) RS_STR_(x)

static bool is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int rs_find_session(const char *opt_dir, char **out, char *err, size_t err_len)
{
	const char *d = opt_dir;

	(void)err;
	(void)err_len;
	/* rs_load checks it (below the archive with archive:) */
	if (!d)
		d = is_dir(OP_SESSION_DIR_LAUNCH) ? OP_SESSION_DIR_LAUNCH : OP_SESSION_DIR_SYSTEM;
	*out = strdup(d);
	return *out ? 0 : -ENOMEM;
}

static int rs_no_session(const char *d, char *err, size_t err_len)
{
	snprintf(err, err_len,
		 "no session directory: %s does not exist (profile something first, or give "
		 "--session-dir=DIR)",
		 d);
	return -ENOENT;
}

/* ------------------------------------------------------------ archive: */

int rs_archive_open(const char *root, const char *rel, int flags)
{
	int dfd, fd;
	char *dup, *comp, *slash;

	while (*rel == '/')
		rel++;
	for (const char *c = rel; *c; c += strcspn(c, "/") + (c[strcspn(c, "/")] ? 1 : 0)) {
		size_t n = strcspn(c, "/");

		if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return -EINVAL;
	}
	dfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (!*rel)
		return dfd;
#ifdef RS_HAVE_OPENAT2
	{
		struct open_how how = {
			.flags = (uint64_t)(O_RDONLY | O_NONBLOCK | O_CLOEXEC | flags),
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		long r = syscall(SYS_openat2, dfd, rel, &how, sizeof(how));

		if (r >= 0 || (errno != ENOSYS && errno != EPERM)) {
			fd = r >= 0 ? (int)r : -errno;
			close(dfd);
			return fd;
		}
	}
#endif
	dup = strdup(rel);
	if (!dup) {
		close(dfd);
		return -ENOMEM;
	}
	for (comp = dup;; comp = slash + 1) {
		slash = strchr(comp, '/');
		if (slash)
			*slash = 0;
		fd = openat(dfd, comp,
			    slash ? O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC :
				    O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | flags);
		if (fd < 0)
			fd = -errno;
		close(dfd);
		if (fd < 0 || !slash)
			break;
		dfd = fd;
	}
	free(dup);
	return fd;
}

/* does the directory @dfd hold a session: samples/ (a directory) and abi (a file)? */
static bool rs_archive_is_session(int dfd)
{
	struct stat st;

	return !fstatat(dfd, OP_SESSION_SAMPLES, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode) &&
	       !fstatat(dfd, OP_SESSION_ABI, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode);
}

#define RS_ARCHIVE_MAX_FOUND 8
#define RS_ARCHIVE_MAX_DEPTH 64

/* the session directories below @dfd (consumed), @rel its path in the archive */
static int rs_archive_find(int dfd, const char *rel, int depth, struct strlist *found)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int ret = 0;

	if (!d) {
		close(dfd);
		return 0;
	}
	if (rs_archive_is_session(dirfd(d))) {
		ret = strlist_add(found, *rel ? rel : "/");
		closedir(d);
		return ret;
	}
	while (!ret && depth < RS_ARCHIVE_MAX_DEPTH && found->n < RS_ARCHIVE_MAX_FOUND &&
	       (de = readdir(d))) {
		struct stat st;
		char *sub;
		int nfd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode))
			continue;
		nfd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0)
			continue;
		if (asprintf(&sub, "%s/%s", rel, de->d_name) < 0) {
			close(nfd);
			ret = -ENOMEM;
			break;
		}
		ret = rs_archive_find(nfd, sub, depth + 1, found);
		free(sub);
	}
	closedir(d);
	return ret;
}

/* @path made absolute against the working directory and normalized, malloc'd */
static char *rs_abs_path(const char *path)
{
	char cwd[PATH_MAX], *abs;

	if (path[0] == '/')
		abs = strdup(path);
	else if (!getcwd(cwd, sizeof(cwd)) || asprintf(&abs, "%s/%s", cwd, path) < 0)
		abs = NULL;
	if (abs)
		spec_normalize_path(abs);
	return abs;
}

/*
 * With archive:DIR, the session is DIR/<--session-dir made absolute>; without
 * --session-dir, DIR/<cwd>/oprofile_data or DIR/var/lib/oprofile, else the
 * one session directory the archive holds.
 */
static int rs_archive_session(struct rpt_profile *p, const struct rpt_opts *o, char *err,
			      size_t err_len)
{
	const char *archive = o->spec.archive;
	struct strlist found = { 0 };
	char *cand[2] = { NULL, NULL }, *dbg = NULL;
	int ret = -ENOENT, fd;

	if (o->root) {
		snprintf(err, err_len,
			 "--root=%s and archive:%s do not go together: an archive "
			 "holds every binary at its original path",
			 o->root, archive);
		return -EINVAL;
	}
	cand[0] = rs_abs_path(o->session_dir ? o->session_dir : OP_SESSION_DIR_LAUNCH);
	cand[1] = o->session_dir ? NULL : strdup(OP_SESSION_DIR_SYSTEM);
	if (!cand[0] || (!o->session_dir && !cand[1])) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < 2 && cand[i]; i++) {
		fd = rs_archive_open(archive, cand[i], O_DIRECTORY);
		if (fd == -ELOOP) {
			snprintf(err, err_len,
				 "archive %s: %s%s: a symbolic link on the way (not "
				 "followed out of the archive)",
				 archive, archive, cand[i]);
			ret = -ELOOP;
			goto out;
		}
		if (fd >= 0) {
			bool ok = rs_archive_is_session(fd);

			close(fd);
			if (ok || o->session_dir) {
				ret = strlist_add(&found, cand[i]);
				goto found;
			}
		}
	}
	if (o->session_dir) {
		snprintf(err, err_len, "archive %s holds no session %s (no directory %s%s)",
			 archive, cand[0], archive, cand[0]);
		goto out;
	}
	fd = open(archive, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ret = fd < 0 ? -errno : rs_archive_find(fd, "", 0, &found);
	if (ret)
		goto out;
	if (found.n != 1) {
		size_t len;

		len = (size_t)snprintf(err, err_len,
				       found.n ? "archive %s holds several sessions "
						 "(give --session-dir=DIR, their original path):" :
						 "archive %s holds no session directory (a directory with %s/ "
						 "and %s: made by oparchive -o %s)",
				       archive, OP_SESSION_SAMPLES, OP_SESSION_ABI, archive);
		for (size_t i = 0; i < found.n && len < err_len; i++)
			len += (size_t)snprintf(err + len, err_len - len, " %s", found.v[i]);
		ret = -ENOENT;
		goto out;
	}
found:
	if (ret)
		goto out;
	free(p->session_dir);
	p->session_dir = NULL;
	free(p->session_origin);
	p->session_origin = strdup(found.v[0]);
	if (asprintf(&p->session_dir, "%s%s", archive, found.v[0]) < 0)
		p->session_dir = NULL;
	if (asprintf(&dbg, "%s/usr/lib/debug", archive) < 0)
		dbg = NULL;
	ret = !p->session_dir || !p->session_origin || !dbg || opbfd_set_debug_dir(dbg) ? -ENOMEM :
											  0;
out:
	if (ret == -ENOMEM)
		snprintf(err, err_len, "out of memory");
	free(dbg);
	free(cand[0]);
	free(cand[1]);
	strlist_free(&found);
	return ret;
}

const char *rs_image_refused(const struct op_image_name *n)
{
	const char *c;

	if (!n->path || n->kind == OP_IMAGE_ANON) /* an anon name is only shown */
		return NULL;
	if (n->kind == OP_IMAGE_KERNEL && !strchr(n->path, '/'))
		return !strcmp(n->path, ".") || !strcmp(n->path, "..") ? "is \".\" or \"..\"" : NULL;
	if (n->path[0] != '/')
		return "is not an absolute path";
	if (strlen(n->path) >= PATH_MAX)
		return "is PATH_MAX bytes long or longer";
	for (c = n->path + 1;; c += strcspn(c, "/") + 1) {
		size_t len = strcspn(c, "/");

		if (!len)
			return "has an empty component";
		if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return "has a \".\" or \"..\" component";
		if (!c[len])
			return NULL;
	}
}

void rs_refuse_names(const char *path, struct op_parsed_name *pn)
{
	static const char *const what[] = { "application", "image", "callee image" };
	struct op_image_name *im[] = { &pn->app, &pn->image, pn->is_cg ? &pn->cg_to : NULL };

	for (size_t i = 0; i < 3; i++) {
		const char *why = im[i] ? rs_image_refused(im[i]) : NULL;

		if (!why)
			continue;
		txt_warn("sample file %s: the %s name %s %s, which oprofiled never writes: its "
			 "samples are counted under %s and the path is not opened",
			 path, what[i], im[i]->path, why, RPT_UNKNOWN_IMAGE);
		*im[i] = (struct op_image_name){ .kind = OP_IMAGE_USER, .path = RPT_UNKNOWN_IMAGE };
	}
}

static void skip_file(struct rs_walk *w, const char *path, const char *why)
{
	txt_warn("skipping sample file %s: %s", path, why);
	w->p->nskipped++;
}

/* what an entry that is not a regular file (or directory) is, for a warning */
static const char *entry_kind(mode_t m)
{
	if (S_ISLNK(m))
		return "a symbolic link, not followed (oprofiled writes none below samples/)";
	if (S_ISFIFO(m))
		return "a FIFO, not a regular file";
	if (S_ISSOCK(m))
		return "a socket, not a regular file";
	if (S_ISCHR(m) || S_ISBLK(m))
		return "a device, not a regular file";
	if (S_ISDIR(m))
		return "a directory, not a regular file";
	return "not a regular file";
}

/* warning about an entry below samples/, once per entry */
static void skip_entry(struct rpt_profile *p, const char *path, const char *why)
{
	if (strlist_has(&p->warned, path))
		return;
	strlist_add(&p->warned, path);
	txt_warn("skipping %s: %s", path, why);
	p->nskipped++;
}

static int add_cg_file(struct rpt_profile *p, const char *path, size_t rel_off)
{
	struct rpt_cgfile *nv = realloc(p->cg_files, (p->ncg_files + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	p->cg_files = nv;
	nv[p->ncg_files].path = strdup(path);
	nv[p->ncg_files].rel = rel_off;
	if (!nv[p->ncg_files].path)
		return -ENOMEM;
	p->ncg_files++;
	return 0;
}

/* @t as ISO 8601 in UTC (2026-11-25T19:30:00Z), or the raw number if gmtime cannot */
static const char *rs_utc_time(int64_t t, char *buf, size_t len)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "%" PRId64, t);
	return buf;
}

static int add_file(struct rs_walk *w, const char *path, size_t rel_off)
{
	struct op_parsed_name *pn = malloc(sizeof(*pn));
	char err[512] = "";
	struct rs_file *f;

	if (!pn)
		return -ENOMEM;
	if (op_parse_name(path + rel_off, pn, err, sizeof(err))) {
		char why[640];

		snprintf(why, sizeof(why), "bad sample file name (%s)",
			 err[0] ? err : "expected <app>/{dep}/<image>/EVENT.COUNT.UM.TGID.TID.CPU");
		skip_file(w, path, why);
		free(pn);
		return 0;
	}
	if (pn->is_cg) {
		/* call-graph arc files are for a call-graph report, not this one */
		free(pn);
		return add_cg_file(w->p, path, rel_off);
	}
	w->nfound++;
	rs_refuse_names(path, pn);
	if (w->o->exclude_dependent &&
	    (pn->app.kind != pn->image.kind ||
	     strcmp(pn->app.path ? pn->app.path : "", pn->image.path ? pn->image.path : ""))) {
		free(pn);
		return 0;
	}
	if (!spec_match_noimage(&w->o->spec, pn)) {
		free(pn);
		return 0;
	}
	/* issue 20: a split file names its cgroup itself; others go by the index */
	if (w->o->spec.cgroup.n && pn->split) {
		w->cg_split++;
		if (!spec_cgroup_match_key(&w->o->spec, pn->split)) {
			free(pn);
			return 0;
		}
	} else if (w->o->spec.cgroup.n && !spec_cgroup_has(&w->cg, pn->tgid)) {
		w->cg_no_tgid += pn->tgid < 0;
		free(pn);
		return 0;
	}
	if (w->n == w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 64;
		struct rs_file *nv = realloc(w->v, ncap * sizeof(*nv));

		if (!nv) {
			free(pn);
			return -ENOMEM;
		}
		w->v = nv;
		w->cap = ncap;
	}
	f = &w->v[w->n++];
	f->path = strdup(path);
	f->rel = f->path ? f->path + rel_off : NULL;
	f->pn = pn;
	f->session = w->session;
	f->selected = spec_match(&w->o->spec, pn);
	return f->path ? 0 : -ENOMEM;
}

/*
 * Recursive walk of the directory @dfd (consumed), @dir its path for
 * messages; @rel_off: where the session-relative part of a path starts.
 * Entries are looked at with fstatat(AT_SYMLINK_NOFOLLOW) and directories
 * opened with O_NOFOLLOW relative to their parent: nothing is reached
 * through a symbolic link, whatever is renamed meanwhile.
 */
static int walk(struct rs_walk *w, int dfd, const char *dir, size_t rel_off, int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int ret = 0;

	if (!d) {
		txt_warn("cannot read directory %s: %s", dir, strerror(errno));
		close(dfd);
		return 0;
	}
	while (!ret && (de = readdir(d))) {
		struct stat st;
		char *p;
		int nfd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		/* stats/ holds counters, callgraph/ whole stacks: not sample files */
		if (depth == 0 && (!strcmp(de->d_name, OP_SESSION_STATS) ||
				   !strcmp(de->d_name, OP_SESSION_CG_DIR)))
			continue;
		if (asprintf(&p, "%s/%s", dir, de->d_name) < 0) {
			ret = -ENOMEM;
			break;
		}
		/*
		 * The type readdir gives saves a stat per entry (a live view walks
		 * the session every refresh); what is opened after is checked
		 * again on its fd (O_NOFOLLOW, odb_open's fstat).
		 */
		if (de->d_type == DT_REG || de->d_type == DT_DIR) {
			st.st_mode = de->d_type == DT_REG ? S_IFREG : S_IFDIR;
		} else if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			free(p);
			continue;
		}
		if (S_ISREG(st.st_mode)) {
			ret = add_file(w, p, rel_off);
		} else if (!S_ISDIR(st.st_mode)) {
			skip_entry(w->p, p, entry_kind(st.st_mode));
		} else if (depth + 1 > RS_MAX_DEPTH) {
			skip_entry(w->p, p,
				   "directories nested deeper than " RS_STR(
					   RS_MAX_DEPTH) " levels, deeper than any sample-file name: not walked");
		} else {
			nfd = openat(dirfd(d), de->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (nfd >= 0)
				ret = walk(w, nfd, p, rel_off, depth + 1);
			else if (errno == ELOOP || errno == ENOTDIR) /* swapped meanwhile */
				skip_entry(w->p, p, entry_kind(S_IFLNK));
			else
				txt_warn("cannot read directory %s: %s", p, strerror(errno));
		}
		free(p);
	}
	closedir(d);
	return ret;
}

bool rs_path_has_dot(const char *rel)
{
	for (const char *c = rel;; c += strcspn(c, "/") + 1) {
		size_t n = strcspn(c, "/");

		if (!n || (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return true;
		if (!c[n])
			return false;
	}
}

/*
 * The directory @rel (relative to samples/) opened never through a symbolic
 * link nor above samples/: openat2() with RESOLVE_BENEATH and
 * RESOLVE_NO_SYMLINKS in one call, else one component at a time with
 * O_NOFOLLOW. -errno (-ELOOP for a link, -EINVAL for a "." component).
 */
static int open_beneath(struct rpt_profile *p, char *rel)
{
	int dfd = p->samples_fd;
	char *comp = rel, *slash;

	if (rs_path_has_dot(rel))
		return -EINVAL;
#ifdef RS_HAVE_OPENAT2
	if (!p->no_openat2) {
		struct open_how how = {
			.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		long fd = syscall(SYS_openat2, p->samples_fd, rel, &how, sizeof(how));

		if (fd >= 0)
			return (int)fd;
		if (errno != ENOSYS && errno != EPERM)
			return -errno;
		p->no_openat2 = true; /* old kernel, or a seccomp filter */
	}
#endif
	for (;;) {
		int nfd;

		slash = strchr(comp, '/');
		if (slash)
			*slash = 0;
		nfd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (slash)
			*slash = '/';
		if (nfd < 0)
			nfd = -errno;
		if (dfd != p->samples_fd)
			close(dfd);
		if (nfd < 0 || !slash)
			return nfd;
		dfd = nfd;
		comp = slash + 1;
	}
}

/* The directory @rel (@len bytes) below samples/, kept open for the next call: do not close */
static int open_dir(struct rpt_profile *p, const char *rel, size_t len)
{
	char *d;
	int fd;

	if (p->dcache && strlen(p->dcache) == len && !memcmp(p->dcache, rel, len))
		return p->dcache_fd;
	d = strndup(rel, len);
	if (!d)
		return -ENOMEM;
	fd = open_beneath(p, d);
	if (fd < 0) {
		free(d);
		return fd;
	}
	if (p->dcache_fd >= 0)
		close(p->dcache_fd);
	free(p->dcache);
	p->dcache = d;
	p->dcache_fd = fd;
	return fd;
}

static const char *dir_error(int rc)
{
	return rc == -ELOOP || rc == -ENOTDIR ?
		       "a directory on its path is a symbolic link (not followed) or not a "
		       "directory" :
		       strerror(-rc);
}

int rs_odb_open(struct rpt_profile *p, odb_t *db, const char *path, char *err, size_t err_len)
{
	size_t off = strlen(p->samples_root) + 1;
	const char *rel = path + off, *base = strrchr(path, '/');
	int dfd;

	memset(db, 0, sizeof(*db));
	db->fd = -1;
	if (strncmp(path, p->samples_root, off - 1) || path[off - 1] != '/' || base < rel) {
		snprintf(err, err_len, "not below %s", p->samples_root);
		return -EINVAL;
	}
	dfd = open_dir(p, rel, (size_t)(base - rel));
	if (dfd < 0) {
		snprintf(err, err_len, "%s", dir_error(dfd));
		return dfd;
	}
	return odb_open(db, dfd, base + 1, ODB_RDONLY, err, err_len);
}

int rs_open_session_file(struct rpt_profile *p, const char *rel, int flags)
{
	return rs_open_file_in(p, 0, rel, flags);
}

static int rs_open_file_in(struct rpt_profile *p, size_t session, const char *rel, int flags)
{
	const bool want_dir = flags & O_DIRECTORY;
	char *full = NULL, *path = NULL;
	const char *base;
	struct stat st;
	int dfd, fd;

	if (asprintf(&full, "%s/%s", p->session_names[session], rel) < 0 ||
	    asprintf(&path, "%s/%s/%s", p->samples_root, p->session_names[session], rel) < 0) {
		free(full);
		return -ENOMEM;
	}
	base = strrchr(full, '/');
	dfd = open_dir(p, full, (size_t)(base - full));
	if (dfd < 0) {
		fd = dfd;
		if (fd != -ENOENT)
			skip_entry(p, path, dir_error(fd));
		goto out;
	}
	fd = openat(dfd, base + 1, flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		if (fd == -ELOOP)
			skip_entry(p, path, entry_kind(S_IFLNK));
		else if (fd == -ENOTDIR && !fstatat(dfd, base + 1, &st, AT_SYMLINK_NOFOLLOW))
			skip_entry(p, path, entry_kind(st.st_mode));
		else if (fd != -ENOENT)
			skip_entry(p, path, strerror(-fd));
		goto out;
	}
	if (fstat(fd, &st)) {
		skip_entry(p, path, strerror(errno));
		close(fd);
		fd = -EIO;
	} else if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) {
		skip_entry(p, path, entry_kind(st.st_mode));
		close(fd);
		fd = -EINVAL;
	}
out:
	free(full);
	free(path);
	return fd;
}

static int32_t axis_value(const struct op_parsed_name *pn, int ax)
{
	switch (ax) {
	case AX_CPU:
		return pn->cpu;
	case AX_TID:
		return pn->tid;
	case AX_TGID:
		return pn->tgid;
	}
	return -1;
}

static bool axis_merged(unsigned merge, int ax)
{
	switch (ax) {
	case AX_CPU:
		return merge & MERGE_CPU;
	case AX_TID:
		return merge & MERGE_TID;
	case AX_TGID:
		return merge & MERGE_TGID;
	case AX_CGROUP:
		return merge & MERGE_CGROUP;
	}
	return false;
}

/* issue 20: a file's split key as a class names it */
static const char *axis_cgroup(const struct op_parsed_name *pn)
{
	return pn->split ? pn->split : "unknown";
}

/* @a and @b differ along axis @ax (not the event) */
static bool axis_differs(const struct op_parsed_name *a, const struct op_parsed_name *b, int ax)
{
	if (ax == AX_CGROUP)
		return strcmp(axis_cgroup(a), axis_cgroup(b)) != 0;
	return axis_value(a, ax) != axis_value(b, ax);
}

/* Class of a file along axis @ax; adds it when new. Returns the index or -ENOMEM. */
static int class_of(struct rpt_profile *p, const struct op_parsed_name *pn, int ax, unsigned merge)
{
	struct rpt_class c = { .cpu = -1, .tid = -1, .tgid = -1 };
	struct rpt_class *nv;

	snprintf(c.event, sizeof(c.event), "%s", pn->event);
	c.count = pn->count;
	c.um = (merge & MERGE_UNITMASK) ? 0 : pn->um;
	if (ax == AX_CPU)
		c.cpu = pn->cpu;
	else if (ax == AX_TID)
		c.tid = pn->tid;
	else if (ax == AX_TGID)
		c.tgid = pn->tgid;
	else if (ax == AX_CGROUP)
		snprintf(c.cgroup, sizeof(c.cgroup), "%s", axis_cgroup(pn));
	for (size_t i = 0; i < p->ncls; i++) {
		struct rpt_class *o = &p->cls[i];

		if (ax == AX_EVENT &&
		    (strcmp(o->event, c.event) || o->count != c.count || o->um != c.um))
			continue;
		if (ax != AX_EVENT && (o->cpu != c.cpu || o->tid != c.tid || o->tgid != c.tgid ||
				       strcmp(o->cgroup, c.cgroup)))
			continue;
		return (int)i;
	}
	if (ax == AX_CPU)
		snprintf(c.label, sizeof(c.label), c.cpu < 0 ? "cpu:all" : "cpu:%d", c.cpu);
	else if (ax == AX_TID)
		snprintf(c.label, sizeof(c.label), c.tid < 0 ? "tid:all" : "tid:%d", c.tid);
	else if (ax == AX_TGID)
		snprintf(c.label, sizeof(c.label), c.tgid < 0 ? "tgid:all" : "tgid:%d", c.tgid);
	else if (ax == AX_CGROUP) { /* a long path keeps its tail, which names it best */
		size_t n = strlen(c.cgroup), room = sizeof(c.label) - sizeof("cgroup:");

		snprintf(c.label, sizeof(c.label), "cgroup:%.*s", (int)room,
			 n > room ? c.cgroup + n - room : c.cgroup);
	} else if (c.um)
		snprintf(c.label, sizeof(c.label), "%s:%" PRIu64 ":0x%x", c.event, c.count, c.um);
	else
		snprintf(c.label, sizeof(c.label), "%s:%" PRIu64, c.event, c.count);
	nv = realloc(p->cls, (p->ncls + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	p->cls = nv;
	p->cls[p->ncls] = c;
	return (int)p->ncls++;
}

static int class_cmp(const void *a, const void *b)
{
	const struct rpt_class *x = a, *y = b;
	int r = strcmp(x->event, y->event);

	if (r)
		return r;
	if (x->count != y->count)
		return x->count < y->count ? -1 : 1;
	if (x->um != y->um)
		return x->um < y->um ? -1 : 1;
	if (x->cpu != y->cpu)
		return x->cpu - y->cpu;
	if (x->tid != y->tid)
		return x->tid - y->tid;
	if (x->tgid != y->tgid)
		return x->tgid - y->tgid;
	return strcmp(x->cgroup, y->cgroup);
}

/* Pick the axis the selected files differ on; error when more than one. */
static int pick_axis(struct rpt_profile *p, struct rs_walk *w, unsigned merge, char *err,
		     size_t err_len)
{
	bool differs[AX_NR] = { false };
	int ndiff = 0, axis = -1;
	const struct rs_file *first = NULL;

	for (size_t i = 0; i < w->n; i++) {
		const struct rs_file *f = &w->v[i];

		if (!f->selected)
			continue;
		if (!first) {
			first = f;
			continue;
		}
		if (strcmp(f->pn->event, first->pn->event) || f->pn->count != first->pn->count ||
		    (!(merge & MERGE_UNITMASK) && f->pn->um != first->pn->um))
			differs[AX_EVENT] = true;
		for (int ax = AX_CPU; ax < AX_NR; ax++)
			if (!axis_merged(merge, ax) && axis_differs(f->pn, first->pn, ax))
				differs[ax] = true;
	}
	for (int ax = 0; ax < AX_NR; ax++) {
		if (differs[ax]) {
			ndiff++;
			if (axis < 0)
				axis = ax;
		}
	}
	if (ndiff > 1) {
		char list[128] = "", hint[64] = "";

		for (int ax = 0; ax < AX_NR; ax++) {
			if (!differs[ax])
				continue;
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 list[0] ? " and " : "", axis_names[ax]);
			if (axis_merge[ax])
				snprintf(hint + strlen(hint), sizeof(hint) - strlen(hint), "%s%s",
					 hint[0] ? "," : "", axis_merge[ax]);
		}
		snprintf(err, err_len,
			 "the selected sample files differ in more than one way (%s), so they do not "
			 "fit in one set of columns: merge them with --merge=%s, or select fewer files "
			 "with a profile specification (e.g. cpu:0 or event:NAME)",
			 list, hint[0] ? hint : "all");
		return -EINVAL;
	}
	p->axis = axis;
	return 0;
}

static char *image_display(const struct op_image_name *n)
{
	char *s = NULL;

	if (n->kind == OP_IMAGE_ANON) {
		if (asprintf(&s, "%s (tgid:%d range:0x%" PRIx64 "-0x%" PRIx64 ")",
			     n->path && n->path[0] ? n->path : "anon", n->tgid, n->start, n->end) < 0)
			return NULL;
		return s;
	}
	return strdup(n->path ? n->path : "?");
}

static bool same_image(const struct rpt_image *img, const struct op_image_name *n)
{
	if (img->kind != n->kind || strcmp(img->path, n->path ? n->path : ""))
		return false;
	if (n->kind == OP_IMAGE_ANON)
		return img->tgid == n->tgid && img->start == n->start && img->end == n->end;
	return true;
}

/*
 * Where to read a user binary from: --root prefix (the archive with
 * archive:), then --image-path by base name (below the archive with archive:).
 */
static char *resolve_file(const struct rpt_opts *o, const char *path)
{
	const char *base = strrchr(path, '/');
	const char *root = o->spec.archive ? o->spec.archive : o->root;
	struct stat st;
	char *f = NULL;

	if (path[0] != '/') /* RPT_UNKNOWN_IMAGE, a kernel or anon name: not a file */
		return strdup(path);
	if (root && asprintf(&f, "%s%s", root, path) < 0)
		return NULL;
	if (!f)
		f = strdup(path);
	if (!f || !stat(f, &st) || !o->image_path.n)
		return f;
	base = base ? base + 1 : path;
	for (size_t i = 0; i < o->image_path.n; i++) {
		char *c;

		if (asprintf(&c, "%s%s/%s", o->spec.archive ? o->spec.archive : "",
			     o->image_path.v[i], base) < 0)
			break;
		if (!stat(c, &st)) {
			free(f);
			return c;
		}
		free(c);
	}
	return f;
}

/*
 * A binary of an archive is read only when no component of its path below
 * the archive is a symbolic link: else it has no symbols, with a warning.
 */
static void rs_archive_check_image(struct rpt_profile *p, const struct rpt_opts *o,
				   struct rpt_image *img)
{
	size_t alen = strlen(o->spec.archive);
	int fd;

	if (img->path[0] != '/' || strncmp(img->file, o->spec.archive, alen))
		return;
	fd = rs_archive_open(o->spec.archive, img->file + alen, 0);
	if (fd >= 0) {
		close(fd);
		return;
	}
	if (fd != -ELOOP && fd != -EINVAL)
		return; /* missing: said when its symbols are loaded */
	txt_warn("not reading %s: %s (not followed out of the archive %s); its samples are "
		 "reported as \"(no symbols)\"",
		 img->file,
		 fd == -ELOOP ? "a symbolic link on its path" : "a \".\" or \"..\" component",
		 o->spec.archive);
	p->nwarnings++;
	img->syms_loaded = img->no_syms = true;
}

/*
 * stats/buildids of every selected session (an older session has none: an
 * empty index). Bad lines are skipped with one warning per session.
 */
static int rs_load_buildids(struct rpt_profile *p)
{
	char err[512] = "", rel[sizeof(OP_SESSION_STATS "/" OP_BUILDID_INDEX)];
	int ret = 0;

	p->bids = calloc(p->nsessions, sizeof(*p->bids));
	if (!p->bids)
		return -ENOMEM;
	snprintf(rel, sizeof(rel), "%s", OP_SESSION_STATS "/" OP_BUILDID_INDEX);
	for (size_t i = 0; i < p->nsessions && ret != -ENOMEM; i++) {
		int fd = rs_open_file_in(p, i, rel, 0);

		if (fd < 0)
			continue; /* none, or said by rs_open_file_in */
		ret = op_buildid_index_read_fd(fd, rel, &p->bids[i], err, sizeof(err));
		close(fd);
		if (ret && ret != -ENOMEM) {
			txt_warn("%s/%s/%s: %s: build IDs are not checked for this session",
				 p->samples_root, p->session_names[i], rel, err);
			p->nwarnings++;
		} else if (p->bids[i].nbad) {
			txt_warn("%s/%s/%s: %zu lines that are not build-id index lines skipped "
				 "(the first at line %u)",
				 p->samples_root, p->session_names[i], rel, p->bids[i].nbad,
				 p->bids[i].first_bad);
			p->nwarnings++;
		}
	}
	return ret == -ENOMEM ? ret : 0;
}

/*
 * The binary on disk against the one profiled, by build ID (the index of
 * session @session, or of any selected session for SIZE_MAX): another
 * build (or no build ID where there was one) is not used for symbols; one
 * warning names it. Returns true when the index settled it (the mtime is
 * then not looked at), false when it has nothing on the image.
 */
static bool rs_check_build_id(struct rpt_profile *p, struct rpt_image *img, size_t session)
{
	const struct op_buildid_ent *e;
	struct op_elf_ids disk;
	char want[OP_BUILDID_HEX_MAX], have[OP_BUILDID_HEX_MAX];
	int fd, rc;

	if (!p->bids)
		return false;
	if (session < p->nsessions) {
		e = op_buildid_index_find(&p->bids[session], img->path);
	} else {
		/* SIZE_MAX: the first selected session whose index has it */
		e = NULL;
		for (size_t i = 0; i < p->nsessions && !e; i++)
			e = op_buildid_index_find(&p->bids[i], img->path);
	}
	if (!e || !e->ids.id_len)
		return false;
	if (img->is_kernel || e->kind != OP_BUILDID_USER) {
		/* the running kernel's: --vmlinux is checked against it (opreport_symbols.c) */
		if (img->is_kernel && e->kind == OP_BUILDID_KERNEL) {
			img->has_bid = true;
			img->bid = e->ids;
		}
		return false;
	}
	img->has_bid = true;
	img->bid = e->ids;
	fd = open(img->file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return true; /* gone: a debug file by build ID may stand for it */
	rc = op_elf_ids_from_fd(fd, &disk);
	close(fd);
	if (!rc && disk.id_len == e->ids.id_len && !memcmp(disk.id, e->ids.id, disk.id_len))
		return true;
	img->bid_mismatch = true;
	op_buildid_hex(e->ids.id, e->ids.id_len, want, sizeof(want));
	if (rc || !disk.id_len)
		snprintf(have, sizeof(have), "%s", rc ? "unreadable" : "none");
	else
		op_buildid_hex(disk.id, disk.id_len, have, sizeof(have));
	txt_warn("the binary %s is not the one profiled: build ID %s, the profiled binary's was "
		 "%s (stats/" OP_BUILDID_INDEX "); it is not used for symbols: a debug file with "
		 "build ID %s is, when found (.build-id/ below the debug directory, "
		 "$DEBUGINFOD_URLS), else its samples are reported as \"(no symbols)\"",
		 img->file, have, want, want);
	p->nwarnings++;
	return true;
}

/* image @n of the profile, added when new; @h: its sample file's header (NULL: none, a stack's) */
static struct rpt_image *get_image(struct rpt_profile *p, const struct rpt_opts *o,
				   const struct op_image_name *n, const struct opd_header *h,
				   size_t session)
{
	struct rpt_image *img, **nv;

	for (size_t i = 0; i < p->nimgs; i++)
		if (same_image(p->imgs[i], n))
			return p->imgs[i];
	img = calloc(1, sizeof(*img));
	nv = realloc(p->imgs, (p->nimgs + 1) * sizeof(*nv));
	if (!img || !nv) {
		free(img);
		return NULL;
	}
	p->imgs = nv;
	img->kind = n->kind;
	img->path = strdup(n->path ? n->path : "");
	img->tgid = n->tgid;
	img->start = n->start;
	img->end = n->end;
	img->display = image_display(n);
	img->file = resolve_file(o, img->path);
	if (h)
		img->hdr = *h;
	else
		img->hdr.anon_start = n->kind == OP_IMAGE_ANON ? n->start : 0;
	img->is_kernel = (h && h->is_kernel) || n->kind == OP_IMAGE_KERNEL;
	if (!img->path || !img->display || !img->file) {
		free(img->file);
		free(img->path);
		free(img->display);
		free(img);
		return NULL;
	}
	p->imgs[p->nimgs++] = img;
	if (o->spec.archive)
		rs_archive_check_image(p, o, img);
	/* a binary changed since it was profiled gives wrong symbols: by build ID, else mtime */
	if (n->kind != OP_IMAGE_ANON && !img->no_syms && rs_check_build_id(p, img, session))
		return img;
	if (n->kind == OP_IMAGE_USER && h && h->mtime && !img->is_kernel && img->path[0] == '/') {
		struct stat st;

		if (!img->no_syms && stat(img->file, &st) == 0 && (uint64_t)st.st_mtime != h->mtime) {
			char then[32], now[32];

			txt_warn("the binary %s was modified after it was profiled (profiled %s, "
				 "binary modified %s): its symbols may not match the samples",
				 img->file, rs_utc_time((int64_t)h->mtime, then, sizeof(then)),
				 rs_utc_time((int64_t)st.st_mtime, now, sizeof(now)));
			p->nwarnings++;
		}
	}
	return img;
}

static struct rpt_group *get_group(struct rpt_profile *p, struct rpt_image *img,
				   const struct op_image_name *app, bool merge_lib)
{
	struct rpt_group *g, **nv;
	char *app_disp = NULL;

	if (!merge_lib) {
		app_disp = image_display(app);
		if (!app_disp)
			return NULL;
	}
	for (size_t i = 0; i < p->ngroups; i++) {
		g = p->groups[i];
		if (g->img == img && (merge_lib || !strcmp(g->app, app_disp))) {
			free(app_disp);
			return g;
		}
	}
	g = calloc(1, sizeof(*g));
	nv = realloc(p->groups, (p->ngroups + 1) * sizeof(*nv));
	if (!g || !nv) {
		free(g);
		free(app_disp);
		return NULL;
	}
	p->groups = nv;
	g->img = img;
	g->app = app_disp;
	g->total = calloc(p->ncls, sizeof(uint64_t));
	if (!g->total) {
		free(g);
		free(app_disp);
		return NULL;
	}
	p->groups[p->ngroups++] = g;
	return g;
}

uint64_t rpt_str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/* a new run of @g's records, from the file @rel (relative to the session directory) */
static int group_seg(struct rpt_group *g, const char *rel)
{
	if (g->nseg == g->capseg) {
		size_t ncap = g->capseg ? g->capseg * 2 : 4;
		struct rpt_seg *nv = realloc(g->seg, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		g->seg = nv;
		g->capseg = ncap;
	}
	g->seg[g->nseg++] = (struct rpt_seg){ .id = rpt_str_hash(rel), .start = g->n, .n = 0 };
	return 0;
}

static int group_push(struct rpt_group *g, uint64_t key, uint32_t cls, uint64_t count)
{
	if (g->n == g->cap) {
		size_t ncap = g->cap ? g->cap * 2 : 256;
		struct rpt_sample *nv = realloc(g->s, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		g->s = nv;
		g->cap = ncap;
	}
	g->s[g->n++] = (struct rpt_sample){ .key = key, .cls = cls, .count = count };
	g->total[cls] += count;
	return 0;
}

static int read_file(struct rpt_profile *p, const struct rpt_opts *o, struct rs_file *f, int cls,
		     bool *have_hdr)
{
	char err[512] = "";
	odb_t db;
	const struct odb_node *nodes;
	struct opd_header h;
	struct rpt_image *img = NULL;
	struct rpt_group *g = NULL;
	size_t n = 0;
	int ret;

	memset(&db, 0, sizeof(db));
	ret = rs_odb_open(p, &db, f->path, err, sizeof(err));
	if (!ret)
		ret = odb_check(&db, err, sizeof(err));
	if (ret) {
		char why[700];

		if (!err[0])
			snprintf(err, sizeof(err), "%s", strerror(-ret));
		snprintf(why, sizeof(why), "corrupt or unreadable sample file (%s)", err);
		txt_warn("skipping sample file %s: %s", f->path, why);
		p->nskipped++;
		if (db.base || db.fd > 0)
			odb_close(&db);
		return 0;
	}
	h = *odb_header(&db);
	if (!*have_hdr) {
		p->cpu_type = h.cpu_type;
		/* a corrupt header may hold NaN or infinity: the outputs need a number */
		p->cpu_speed = isfinite(h.cpu_speed) && h.cpu_speed >= 0 ? h.cpu_speed : 0;
		*have_hdr = true;
	}
	if (f->selected) {
		img = get_image(p, o, &f->pn->image, &h, f->session);
		g = img ? get_group(p, img, &f->pn->app, o->merge & MERGE_LIB) : NULL;
		if (!g) {
			odb_close(&db);
			return -ENOMEM;
		}
	}
	if (g && group_seg(g, f->rel)) {
		odb_close(&db);
		return -ENOMEM;
	}
	nodes = odb_nodes(&db, &n);
	for (size_t i = 0; i < n; i++) {
		if (!nodes[i].value)
			continue;
		p->global_total[cls] += nodes[i].value;
		if (!g)
			continue;
		p->total[cls] += nodes[i].value;
		if (group_push(g, nodes[i].key, (uint32_t)cls, nodes[i].value)) {
			odb_close(&db);
			return -ENOMEM;
		}
		g->seg[g->nseg - 1].n++;
	}
	odb_close(&db);
	return 0;
}

struct rpt_image *rs_image_add(struct rpt_profile *p, const struct rpt_opts *o,
			       const struct op_image_name *n)
{
	/* named by arcs, stacks or opexport's files: any session's index may know it */
	return get_image(p, o, n, NULL, SIZE_MAX);
}

static int add_session_dir(struct rpt_profile *p, const char *name)
{
	char **nv = realloc(p->session_names, (p->nsessions + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	p->session_names = nv;
	p->session_names[p->nsessions] = strdup(name);
	if (!p->session_names[p->nsessions])
		return -ENOMEM;
	p->nsessions++;
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Open <session>/samples (the session directory as named, but no symbolic
 * link below it) and list the session directories the spec selects.
 */
static int open_samples(struct rpt_profile *p, const struct rpt_opts *o, char *err, size_t err_len)
{
	struct dirent *de;
	DIR *d;
	int sfd, dfd, ret = 0;

	sfd = open(p->session_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd >= 0) {
		p->samples_fd = openat(sfd, OP_SESSION_SAMPLES,
				       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		ret = p->samples_fd < 0 ? -errno : 0;
		close(sfd);
	} else {
		ret = -errno;
	}
	if (ret) {
		snprintf(err, err_len, "no samples in session %s: %s: %s", p->session_dir,
			 p->samples_root,
			 ret == -ELOOP ? "a symbolic link (not followed)" : strerror(-ret));
		return -ENOENT;
	}
	dfd = dup(p->samples_fd);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		ret = -errno;
		if (dfd >= 0)
			close(dfd);
		snprintf(err, err_len, "no samples in session %s: %s: %s", p->session_dir,
			 p->samples_root, strerror(-ret));
		return -ENOENT;
	}
	while (!ret && (de = readdir(d))) {
		struct stat st;
		char *sd;

		if (de->d_name[0] == '.' || !spec_match_session(&o->spec, de->d_name) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISDIR(st.st_mode)) {
			ret = add_session_dir(p, de->d_name);
		} else if (S_ISLNK(st.st_mode)) {
			if (asprintf(&sd, "%s/%s", p->samples_root, de->d_name) < 0) {
				ret = -ENOMEM;
				break;
			}
			skip_entry(p, sd, entry_kind(st.st_mode));
			free(sd);
		}
	}
	closedir(d);
	return ret;
}

int rs_load(struct rpt_profile *p, const struct rpt_opts *o, char *err, size_t err_len)
{
	struct rs_walk w = { .o = o, .p = p };
	bool have_hdr = false;
	size_t nsel = 0;
	int ret = 0;

	p->axis = -1;
	p->samples_fd = p->dcache_fd = -1;
	if (o->spec.archive)
		ret = rs_archive_session(p, o, err, err_len);
	else if (!is_dir(p->session_dir))
		ret = rs_no_session(p->session_dir, err, err_len);
	else if (!(p->session_origin = realpath(p->session_dir, NULL)) &&
		 !(p->session_origin = rs_abs_path(p->session_dir)))
		ret = -ENOMEM;
	if (ret)
		return ret;
	if (asprintf(&p->samples_root, "%s/" OP_SESSION_SAMPLES, p->session_dir) < 0) {
		p->samples_root = NULL;
		return -ENOMEM;
	}
	ret = open_samples(p, o, err, err_len);
	if (ret)
		goto out;
	if (!p->nsessions) {
		snprintf(err, err_len, "no samples: %s has no %s session directory%s",
			 p->samples_root, o->spec.session.n ? "matching" : "\"current\"",
			 o->spec.session.n ? " (check the session: specification)" :
					     " (profile something first)");
		ret = -ENOENT;
		goto out;
	}
	qsort(p->session_names, p->nsessions, sizeof(char *), name_cmp);
	ret = rs_load_buildids(p);
	if (ret)
		goto out;
	if (asprintf(&p->samples_dir, "%s/%s", p->samples_root, p->session_names[0]) < 0) {
		p->samples_dir = NULL;
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p->nsessions && !ret; i++) {
		char *sd;
		int fd;

		if (asprintf(&sd, "%s/%s", p->samples_root, p->session_names[i]) < 0) {
			ret = -ENOMEM;
			break;
		}
		fd = openat(p->samples_fd, p->session_names[i],
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		w.session = i;
		if (fd >= 0 && o->spec.cgroup.n) {
			ret = spec_cgroup_load(&o->spec, fd, &w.cg, err, err_len);
			w.cg_indexes += w.cg.have_index;
		}
		if (fd >= 0 && ret)
			close(fd);
		else if (fd >= 0)
			ret = walk(&w, fd, sd, strlen(sd) + 1, 0);
		else /* replaced since it was listed */
			skip_entry(p, sd,
				   errno == ELOOP || errno == ENOTDIR ? entry_kind(S_IFLNK) :
									strerror(errno));
		spec_cgroup_free(&w.cg);
		free(sd);
	}
	if (ret)
		goto out;
	for (size_t i = 0; i < w.n; i++)
		nsel += w.v[i].selected;
	if (!w.nfound) {
		/* as perf report on an empty perf.data: an error, not a filter miss */
		if (p->nsessions == 1)
			snprintf(err, err_len, "session %s holds no samples%s", p->samples_dir,
				 p->nskipped ? " (some files were skipped, see above)" :
					       " (profile something first)");
		else
			snprintf(err, err_len, "the %zu selected sessions in %s hold no samples%s",
				 p->nsessions, p->samples_root,
				 p->nskipped ? " (some files were skipped, see above)" : "");
		ret = -ENOENT;
		goto out;
	}
	if (!nsel && o->spec.cgroup.n && !w.cg_split && (!w.cg_indexes || w.cg_no_tgid)) {
		snprintf(err, err_len, "cgroup:%s selects nothing in %s: %s", o->spec.cgroup.v[0],
			 p->samples_root,
			 !w.cg_indexes ? "no selected session has a stats/" OP_SESSION_CGROUPS
					 " index (profile with --ext-feature=cgroup)" :
					 "its sample files are not per process (profile with "
					 "--separate=cgroup, or --separate=thread and the index)");
		ret = -ENOENT;
		goto out;
	}
	if (!nsel) {
		snprintf(err, err_len, "no sample files in %s match the profile specification%s",
			 p->samples_dir, p->nskipped ? " (some files were skipped, see above)" : "");
		ret = -ENOENT;
		goto out;
	}
	ret = pick_axis(p, &w, o->merge, err, err_len);
	if (ret)
		goto out;
	for (size_t i = 0; i < w.n && p->keep_files; i++) {
		char **nv;

		if (!w.v[i].selected)
			continue;
		nv = realloc(p->files.v, (p->files.n + 1) * sizeof(*nv));
		if (!nv) {
			ret = -ENOMEM;
			goto out;
		}
		p->files.v = nv;
		nv[p->files.n] = strdup(w.v[i].path);
		if (!nv[p->files.n]) {
			ret = -ENOMEM;
			goto out;
		}
		p->files.n++;
	}
	/* classes in a stable order */
	for (size_t i = 0; i < w.n; i++) {
		if (w.v[i].selected && class_of(p, w.v[i].pn, p->axis, o->merge) < 0) {
			ret = -ENOMEM;
			goto out;
		}
	}
	if (p->ncls > (o->max_classes ? o->max_classes : 64)) {
		snprintf(err, err_len,
			 "the selected sample files make %zu columns (one per %s); at most %zu fit: "
			 "use --merge=%s or a profile specification to select fewer",
			 p->ncls, axis_names[p->axis], o->max_classes ? o->max_classes : 64,
			 axis_merge[p->axis] ? axis_merge[p->axis] : "all");
		ret = -EINVAL;
		goto out;
	}
	qsort(p->cls, p->ncls, sizeof(*p->cls), class_cmp);
	p->total = calloc(p->ncls, sizeof(uint64_t));
	p->global_total = calloc(p->ncls, sizeof(uint64_t));
	if (!p->total || !p->global_total) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < w.n && !ret; i++) {
		struct rs_file *f = &w.v[i];
		size_t before = p->ncls;
		int cls;

		if (p->file_fn) {
			/* a reader of its own (opexport): each selected file, read there once */
			if (f->selected)
				ret = p->file_fn(p->file_arg, p, f->path, f->pn);
			continue;
		}
		if (!f->selected && !o->global_percent)
			continue;
		cls = class_of(p, f->pn, p->axis, o->merge);

		if (cls < 0) {
			ret = -ENOMEM;
			break;
		}
		if (p->ncls != before) {
			/* an unselected file of another class: only counts nowhere */
			p->ncls = before;
			continue;
		}
		ret = read_file(p, o, f, cls, &have_hdr);
	}
	if (!ret && p->ngroups == 0 && !p->file_fn) {
		snprintf(err, err_len, "no samples: every matching sample file in %s was skipped",
			 p->samples_dir);
		ret = -ENOENT;
	}
	if (!ret && !(o->merge & MERGE_LIB)) {
		for (size_t i = 1; i < p->ngroups; i++)
			if (strcmp(p->groups[i]->app, p->groups[0]->app))
				p->multiple_apps = true;
	}
out:
	for (size_t i = 0; i < w.n; i++) {
		free(w.v[i].path);
		free(w.v[i].pn);
	}
	free(w.v);
	return ret;
}

/* does the directory @rel below the session hold an entry? */
static bool dir_has_entries(struct rpt_profile *p, const char *rel)
{
	int fd = rs_open_session_file(p, rel, O_RDONLY | O_DIRECTORY);
	struct dirent *de;
	bool any = false;
	DIR *d;

	if (fd < 0)
		return false;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return false;
	}
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			any = true;
	closedir(d);
	return any;
}

/*
 * The counter files of stats/ (core/stats.h writes them, one decimal count
 * and a newline each) and what they count.
 */
enum rs_stat_kind {
	RS_TOTAL,        /* samples received */
	RS_UNATTRIBUTED, /* received, not attributed: part of RS_TOTAL */
	RS_KSAMPLES,     /* samples the kernel dropped: not received */
	RS_KSIDEBAND,    /* mmap/comm/fork/exit records the kernel dropped */
	RS_KRECORDS,     /* records the kernel dropped, kind unknown */
	RS_NKINDS
};

static const struct {
	const char *name;
	enum rs_stat_kind kind;
} rs_stat_files[] = {
	{ OP_STATS_TOTAL_SAMPLES, RS_TOTAL },
	{ OP_STATS_LOST_KERNEL, RS_UNATTRIBUTED },
	{ OP_STATS_LOST_NO_MAPPING, RS_UNATTRIBUTED },
	{ OP_STATS_LOST_NO_APP_USER, RS_UNATTRIBUTED },
	{ OP_STATS_LOST_INVALID_DOMAIN, RS_UNATTRIBUTED },
	{ OP_STATS_LOST_SAMPLEFILE, RS_UNATTRIBUTED },
	{ OP_STATS_KLOST_SAMPLES, RS_KSAMPLES },
	{ OP_STATS_KLOST_SIDEBAND, RS_KSIDEBAND },
	{ OP_STATS_KLOST_RECORDS, RS_KRECORDS },
};

/*
 * No count can be larger: 2^52 is 100 kHz on 1024 CPUs for well over a
 * year. Below it, the sums of a few counts cannot overflow.
 */
#define RS_STAT_MAX (1ull << 52)

/*
 * The count in stats/@name of the first selected session into *@v: 0 if
 * there is none (a missing file is 0); -1 with a warning naming the file
 * if it is empty, unreadable or damaged (rs_open_session_file names the
 * files it refuses).
 */
static int read_stat_file(struct rpt_profile *p, const char *name, uint64_t *v)
{
	char rel[64], buf[40], *end;
	unsigned long long n;
	ssize_t len;
	int fd;

	*v = 0;
	snprintf(rel, sizeof(rel), OP_SESSION_STATS "/%s", name);
	fd = rs_open_session_file(p, rel, O_RDONLY);
	if (fd == -ENOENT)
		return 0;
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	if (len < 0) {
		txt_warn("%s/%s: cannot read it: %s - the lost-sample figures are unknown",
			 p->samples_dir, rel, strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	buf[len] = 0;
	if (len == 0) {
		txt_warn("%s/%s is empty: the daemon could not write it (a full disk?) - the "
			 "lost-sample figures are unknown",
			 p->samples_dir, rel);
		return -1;
	}
	buf[strcspn(buf, "\n")] = 0;
	errno = 0;
	n = strtoull(buf, &end, 10);
	if (buf[0] < '0' || buf[0] > '9' || *end || len > (ssize_t)strlen(buf) + 1) {
		txt_warn("%s/%s: damaged stats file: expected a decimal count, found \"%.32s\"%s - "
			 "its figures are not used",
			 p->samples_dir, rel, buf,
			 len > (ssize_t)strlen(buf) + 1 || strlen(buf) > 32 ? "..." : "");
		return -1;
	}
	if (errno || n > RS_STAT_MAX) {
		txt_warn("%s/%s: damaged stats file: %s is more than any profile holds (at most "
			 "2^52) - its figures are not used",
			 p->samples_dir, rel, buf);
		return -1;
	}
	*v = n;
	return 0;
}

/* "N dropped by the kernel, M received but not attributed" (the parts that are not 0) */
static void lost_parts(char *buf, size_t len, uint64_t kernel, uint64_t unattributed)
{
	int n = 0;

	buf[0] = 0;
	if (kernel)
		n = snprintf(buf, len, "%" PRIu64 " dropped by the kernel (a ring was full)",
			     kernel);
	if (unattributed && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n,
			 "%s%" PRIu64 " received but not attributed to "
			 "any binary",
			 n ? ", " : "", unattributed);
}

/* the stats/ counts summed by kind; bad[kind] when a file of it is damaged */
static void stat_sums(struct rpt_profile *p, uint64_t *sum, bool *bad)
{
	uint64_t v;

	for (size_t i = 0; i < sizeof(rs_stat_files) / sizeof(rs_stat_files[0]); i++) {
		if (read_stat_file(p, rs_stat_files[i].name, &v))
			bad[rs_stat_files[i].kind] = true;
		else
			sum[rs_stat_files[i].kind] += v;
	}
}

int rs_stats(struct rpt_profile *p, uint64_t *received, uint64_t *lost)
{
	uint64_t sum[RS_NKINDS] = { 0 };
	bool bad[RS_NKINDS] = { false };

	stat_sums(p, sum, bad);
	*received = sum[RS_TOTAL];
	*lost = sum[RS_UNATTRIBUTED] + sum[RS_KSAMPLES];
	return bad[RS_TOTAL] || bad[RS_UNATTRIBUTED] || bad[RS_KSAMPLES] ? -EINVAL : 0;
}

void rs_warn_stats(struct rpt_profile *p)
{
	uint64_t sum[RS_NKINDS] = { 0 };
	bool bad[RS_NKINDS] = { false }, said = false;
	char parts[160];

	stat_sums(p, sum, bad);
	if (!bad[RS_TOTAL] && !bad[RS_UNATTRIBUTED] && sum[RS_UNATTRIBUTED] > sum[RS_TOTAL]) {
		txt_warn("%s/stats: damaged: %" PRIu64 " received samples not attributed (lost_*), "
			 "more than the %" PRIu64 " received (total_samples) - the figures are not "
			 "used",
			 p->samples_dir, sum[RS_UNATTRIBUTED], sum[RS_TOTAL]);
		bad[RS_TOTAL] = bad[RS_UNATTRIBUTED] = true;
	}
	/* samples: the received ones (total_samples) plus those the kernel dropped */
	if (!bad[RS_TOTAL] && !bad[RS_UNATTRIBUTED] && !bad[RS_KSAMPLES]) {
		uint64_t lost = sum[RS_UNATTRIBUTED] + sum[RS_KSAMPLES];
		uint64_t all = sum[RS_TOTAL] + sum[RS_KSAMPLES];

		/* more than 0.01 % lost */
		if (lost && lost * 10000 > all) {
			lost_parts(parts, sizeof(parts), sum[RS_KSAMPLES], sum[RS_UNATTRIBUTED]);
			txt_msg("",
				"WARNING: Lost samples detected! %" PRIu64 " of %" PRIu64
				" samples were lost (more than 0.01 %%): %s.",
				lost, all, parts);
			said = true;
		}
	}
	if (!bad[RS_KSIDEBAND] && sum[RS_KSIDEBAND]) {
		txt_msg("",
			"WARNING: the kernel dropped %" PRIu64 " mmap/comm/fork/exit records (a "
			"ring was full): samples of the processes concerned may be counted under the "
			"wrong binary or lost.",
			sum[RS_KSIDEBAND]);
		said = true;
	}
	if (!bad[RS_KRECORDS] && sum[RS_KRECORDS]) {
		txt_msg("",
			"WARNING: the kernel dropped %" PRIu64 " records of unknown kind (samples "
			"or mmap/comm/fork/exit records; a ring was full): up to %" PRIu64
			" more samples may be missing.",
			sum[RS_KRECORDS], sum[RS_KRECORDS]);
		said = true;
	}
	if (said)
		txt_msg("",
			"See %s/" OP_SESSION_LOG_PATH " and %s/" OP_SESSION_STATS " for details.",
			p->session_dir, p->samples_dir);
	if (dir_has_entries(p, OP_SESSION_THROTTLED_PATH)) {
		fputs("WARNING! Some of the events were throttled: the kernel lowered their sample "
		      "rate\nbecause the initial rate caused too many interrupts. Use a lower "
		      "sampling frequency\n",
		      stderr);
		txt_msg("",
			"(a larger count). The throttled events are listed in %s/" OP_SESSION_THROTTLED_PATH
			".",
			p->samples_dir);
	}
}

void rs_free(struct rpt_profile *p)
{
	for (size_t i = 0; i < p->ngroups; i++) {
		free(p->groups[i]->s);
		free(p->groups[i]->seg);
		free(p->groups[i]->total);
		free(p->groups[i]->app);
		free(p->groups[i]);
	}
	free(p->groups);
	for (size_t i = 0; i < p->nimgs; i++) {
		symtab_free(&p->imgs[i]->syms);
		free(p->imgs[i]->path);
		free(p->imgs[i]->file);
		free(p->imgs[i]->display);
		free(p->imgs[i]);
	}
	free(p->imgs);
	for (size_t i = 0; i < p->nsessions; i++) {
		free(p->session_names[i]);
		if (p->bids)
			op_buildid_index_free(&p->bids[i]);
	}
	free(p->session_names);
	free(p->bids);
	free(p->cls);
	free(p->total);
	free(p->global_total);
	free(p->samples_dir);
	free(p->session_dir);
	if (p->samples_root) { /* rs_load ran: the fds are set */
		if (p->samples_fd >= 0)
			close(p->samples_fd);
		if (p->dcache_fd >= 0)
			close(p->dcache_fd);
	}
	free(p->samples_root);
	free(p->dcache);
	strlist_free(&p->warned);
	for (size_t i = 0; i < p->ncg_files; i++)
		free(p->cg_files[i].path);
	free(p->cg_files);
	strlist_free(&p->files);
	free(p->session_origin);
}

const char *rs_cpu_name(uint32_t cpu_type)
{
	return op_cpu_name((int)cpu_type);
}
