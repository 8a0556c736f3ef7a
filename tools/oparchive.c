/*
 * oparchive.c - copy what a later report needs into one directory, in
 * OProfile's archive layout: the selected sample files and the session's
 * extras (abi, oprofiled.log, stats/ with the kallsyms snapshot, the
 * call-graph stack table) at DIR/<absolute session path>/..., every binary
 * they name at DIR/<its absolute path>, and its separate debug file at
 * DIR/<its absolute path> and at DIR/<binary's directory>/.debug/<debuglink>
 * (where OProfile's tools look). `opreport archive:DIR` reports from it on
 * another machine.
 *
 * Nothing below DIR is reached through a symbolic link: directories are
 * made and opened one component at a time with O_NOFOLLOW, files created
 * O_NOFOLLOW. Copies keep the permission bits (not set-user/group-ID) and
 * the modification time (opreport compares it with the profiled one).
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_session_layout.h"
#include "opreport.h"

#define OA_MAX_DEPTH 64

struct oa_ctx {
	const char *outdir;
	int outfd;           /* the archive directory */
	bool list;           /* -l: print the files, copy nothing */
	const char *archive; /* the source is itself an archive (archive:) */
	struct strlist done; /* destinations already written */
	unsigned nerr, nwarn;
	size_t ncopied;
};

#define oa_error(...) txt_msg("oparchive error: ", __VA_ARGS__)
#define oa_warn(...) txt_msg("oparchive warning: ", __VA_ARGS__)

static void oa_usage(FILE *f)
{
	fputs("usage: oparchive -o DIR [options] [profile specification]\n"
	      "Copy the sample files the specification selects, the binaries they name with\n"
	      "their separate debug files, and the session's statistics into DIR, for\n"
	      "`opreport archive:DIR` (or opannotate, opgprof) on another machine.\n"
	      "  -o, --output-directory=DIR  the archive directory (made if missing)\n"
	      "  -l, --list-files            list the files that would be archived, copy nothing\n"
	      "  -x, --exclude-dependent     leave out libraries, kernel and anon samples\n"
	      "  -p, --image-path=DIRS       look for missing binaries by base name in DIRS\n"
	      "  -R, --root=DIR              read every binary below DIR (archived at its\n"
	      "                              original path)\n"
	      "      --session-dir=DIR       the session (default ./oprofile_data, else\n"
	      "                              /var/lib/oprofile)\n"
	      "  -h, --help                  this help\n"
	      "  -?, --usage                 a short usage line\n"
	      "      --version               the package version\n"
	      "The profile specification is opreport's (image:, session:, event:, tid:, ...,\n"
	      "archive:DIR to archive from an archive). See oparchive(1).\n",
	      f);
}

/*
 * The directory holding @rel (a path relative to the archive), made
 * component by component, none followed if it is a symbolic link. The fd
 * or -errno (-ELOOP for a link, -EINVAL for a bad path).
 */
static int oa_parent_dir(struct oa_ctx *c, const char *rel)
{
	char *path = strdup(rel), *comp, *slash;
	int dfd;

	if (!path)
		return -ENOMEM;
	dfd = fcntl(c->outfd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0)
		dfd = -errno;
	for (comp = path; dfd >= 0 && (slash = strchr(comp, '/')); comp = slash + 1) {
		int fd;

		*slash = 0;
		if (mkdirat(dfd, comp, 0755) && errno != EEXIST)
			fd = -errno;
		else if ((fd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) <
			 0)
			fd = -errno;
		close(dfd);
		dfd = fd;
	}
	free(path);
	return dfd;
}

static const char *oa_strerr(int e)
{
	return e == ELOOP || e == ENOTDIR ?
		       "a symbolic link or a non-directory on the way (not followed)" :
		       strerror(e);
}

static int oa_write_all(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Copy @sfd (a regular file, stat @st) to the open @dfd; 0 or -errno. */
static int oa_copy_data(int sfd, const struct stat *st, int dfd)
{
	static char buf[1 << 16];
	struct timespec ts[2];

	if (ftruncate(dfd, 0))
		return -errno;
	for (;;) {
		ssize_t r = read(sfd, buf, sizeof(buf));
		int ret;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			break;
		ret = oa_write_all(dfd, buf, (size_t)r);
		if (ret)
			return ret;
	}
	ts[0] = st->st_atim;
	ts[1] = st->st_mtim;
	if (fchmod(dfd, st->st_mode & 0777) || futimens(dfd, ts))
		return -errno;
	return 0;
}

/*
 * Copy the file @src (opened O_NOFOLLOW when @nofollow: a session file) to
 * @rel below the archive. A missing source is a warning when @optional.
 */
static void oa_copy(struct oa_ctx *c, const char *src, const char *rel, bool nofollow, bool optional)
{
	struct stat st, dst;
	int sfd, pfd, dfd, ret;
	const char *base;

	if (strlist_has(&c->done, rel))
		return;
	if (strlist_add(&c->done, rel)) {
		oa_error("out of memory");
		c->nerr++;
		return;
	}
	sfd = open(src, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
	if (sfd < 0 || fstat(sfd, &st) || !S_ISREG(st.st_mode)) {
		ret = sfd < 0 ? errno : ENOENT;

		if (sfd >= 0) {
			oa_warn("not archiving %s: not a regular file", src);
			c->nwarn++;
		} else if (!optional || ret != ENOENT) {
			oa_warn("not archiving %s: %s", src,
				ret == ELOOP ? "a symbolic link (oprofiled writes none)" :
					       strerror(ret));
			c->nwarn++;
		}
		if (sfd >= 0)
			close(sfd);
		return;
	}
	if (c->list) {
		txt_put(stdout, src);
		putchar('\n');
		close(sfd);
		return;
	}
	if (rs_path_has_dot(rel)) {
		oa_warn("not archiving %s: its destination %s/%s has an empty, \".\" or \"..\" "
			"component",
			src, c->outdir, rel);
		c->nwarn++;
		close(sfd);
		return;
	}
	base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	pfd = oa_parent_dir(c, rel);
	if (pfd < 0) {
		oa_error("cannot make the directory of %s/%s: %s", c->outdir, rel, oa_strerr(-pfd));
		c->nerr++;
		close(sfd);
		return;
	}
	dfd = openat(pfd, base, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	ret = dfd < 0 ? -errno : 0;
	if (!ret && (fstat(dfd, &dst) || !S_ISREG(dst.st_mode)))
		ret = -EINVAL;
	else if (!ret && dst.st_dev == st.st_dev && dst.st_ino == st.st_ino)
		ret = -EEXIST;
	if (!ret)
		ret = oa_copy_data(sfd, &st, dfd);
	if (ret) {
		oa_error("cannot copy %s to %s/%s: %s", src, c->outdir, rel,
			 ret == -EINVAL ? "the destination is not a regular file" :
			 ret == -EEXIST ? "the destination is the file itself" :
					  oa_strerr(-ret));
		c->nerr++;
	}
	if (dfd >= 0 && close(dfd) && !ret) {
		oa_error("cannot write %s/%s: %s", c->outdir, rel, strerror(errno));
		c->nerr++;
		ret = -EIO;
	}
	if (!ret)
		c->ncopied++;
	close(pfd);
	close(sfd);
}

/* Copy the regular files of the directory @src (recursively, no link followed) to @rel. */
static int oa_copy_tree(struct oa_ctx *c, const char *src, const char *rel, int depth)
{
	struct dirent **ents = NULL;
	int n, ret = 0;

	n = scandir(src, &ents, NULL, alphasort);
	if (n < 0) {
		if (errno != ENOENT) {
			oa_warn("cannot read %s: %s", src, strerror(errno));
			c->nwarn++;
		}
		return 0;
	}
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		char *s = NULL, *d = NULL;
		struct stat st;

		if (!ret && strcmp(name, ".") && strcmp(name, "..")) {
			if (asprintf(&s, "%s/%s", src, name) < 0 ||
			    asprintf(&d, "%s/%s", rel, name) < 0)
				ret = -ENOMEM;
			else if (lstat(s, &st))
				;
			else if (S_ISREG(st.st_mode))
				oa_copy(c, s, d, true, false);
			else if (S_ISDIR(st.st_mode) && depth < OA_MAX_DEPTH)
				ret = oa_copy_tree(c, s, d, depth + 1);
			else if (!S_ISDIR(st.st_mode))
				oa_copy(c, s, d, true, false); /* says what it is */
		}
		free(s);
		free(d);
		free(ents[i]);
	}
	free(ents);
	return ret;
}

/* The destination of a source path in the archive: without the source archive's prefix */
static const char *oa_origin(const struct oa_ctx *c, const char *path)
{
	size_t n = c->archive ? strlen(c->archive) : 0;

	if (n && !strncmp(path, c->archive, n) && path[n] == '/')
		return path + n + 1;
	return path[0] == '/' ? path + 1 : path;
}

/*
 * Where a debug file goes in the archive: by its build ID below
 * usr/lib/debug/.build-id/ (where opreport archive: looks, whichever of
 * /usr/lib/debug, .gnu_debuglink or debuginfod's cache it came from), else
 * at its own path. Malloc'd, or NULL when out of memory.
 */
static char *oa_debug_dest(const struct oa_ctx *c, const char *dbg)
{
	uint8_t id[OP_BUILDID_MAX];
	char hex[OP_BUILDID_HEX_MAX], *dest = NULL;
	size_t len;
	int fd = open(dbg, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && !op_buildid_from_fd(fd, id, &len)) {
		op_buildid_hex(id, len, hex, sizeof(hex));
		if (asprintf(&dest, "usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2) < 0)
			dest = NULL;
	} else {
		dest = strdup(oa_origin(c, dbg));
	}
	if (fd >= 0)
		close(fd);
	return dest;
}

static void oa_binary(struct oa_ctx *c, const struct rpt_image *img)
{
	char *dbg, *link = NULL, *dest = NULL;
	struct stat st;

	if (img->kind != OP_IMAGE_USER || img->path[0] != '/' || img->no_syms)
		return; /* kernel (kallsyms snapshot), anon, refused names */
	if (img->has_bid && (img->bid_mismatch || stat(img->file, &st))) {
		/* gone or another build (opreport said which): the debug file of the one profiled */
		dbg = opbfd_debug_by_id(img->bid.id, img->bid.id_len);
		if (!dbg) {
			oa_warn("binary %s: %s, and no debug file with its build ID was found: not "
				"archived",
				img->file,
				img->bid_mismatch ? "another build than profiled" : "not found");
			c->nwarn++;
			return;
		}
		dest = oa_debug_dest(c, dbg);
		if (dest)
			oa_copy(c, dbg, dest, false, false);
		free(dest);
		free(dbg);
		return;
	}
	if (stat(img->file, &st)) {
		oa_warn("binary %s not found: not archived (if it moved, give --image-path=DIR "
			"or --root=DIR)",
			img->file);
		c->nwarn++;
		return;
	}
	oa_copy(c, img->file, img->path + 1, false, false);
	dbg = opbfd_debug_file(img->file, &link);
	if (!dbg)
		return;
	dest = oa_debug_dest(c, dbg);
	if (dest)
		oa_copy(c, dbg, dest, false, false);
	free(dest);
	dest = NULL;
	/* OProfile's place: next to the binary, in .debug/, by its debuglink name */
	if (link && !strchr(link, '/') && strcmp(link, ".") && strcmp(link, "..")) {
		const char *slash = strrchr(img->path, '/');

		if (asprintf(&dest, "%.*s/.debug/%s", (int)(slash - img->path - 1), img->path + 1,
			     link) >= 0)
			oa_copy(c, dbg, dest, false, false);
	}
	free(dest);
	free(link);
	free(dbg);
}

/* the session's sample files and extras, at DIR/<session origin>/... */
static int oa_session(struct oa_ctx *c, const struct rpt_profile *p)
{
	const char *origin = p->session_origin + (p->session_origin[0] == '/');
	size_t off = strlen(p->samples_root) + 1;
	char *s = NULL, *d = NULL;
	int ret = 0;

	for (size_t i = 0; i < p->files.n; i++) {
		if (asprintf(&d, "%s/" OP_SESSION_SAMPLES "/%s", origin, p->files.v[i] + off) < 0)
			return -ENOMEM;
		oa_copy(c, p->files.v[i], d, true, false);
		free(d);
	}
	for (size_t i = 0; i < p->ncg_files; i++) {
		if (asprintf(&d, "%s/" OP_SESSION_SAMPLES "/%s", origin,
			     p->cg_files[i].path + off) < 0)
			return -ENOMEM;
		oa_copy(c, p->cg_files[i].path, d, true, false);
		free(d);
	}
	for (size_t i = 0; i < p->nsessions && !ret; i++) {
		static const char *const dirs[] = { OP_SESSION_STATS, OP_SESSION_CG_DIR };

		for (size_t j = 0; j < 2 && !ret; j++) {
			if (asprintf(&s, "%s/%s/%s", p->samples_root, p->session_names[i],
				     dirs[j]) < 0 ||
			    asprintf(&d, "%s/" OP_SESSION_SAMPLES "/%s/%s", origin,
				     p->session_names[i], dirs[j]) < 0)
				ret = -ENOMEM;
			else
				ret = oa_copy_tree(c, s, d, 0);
			free(s);
			free(d);
			s = d = NULL;
		}
	}
	if (ret)
		return ret;
	if (asprintf(&s, "%s/" OP_SESSION_ABI, p->session_dir) < 0 ||
	    asprintf(&d, "%s/" OP_SESSION_ABI, origin) < 0)
		return -ENOMEM;
	oa_copy(c, s, d, true, true);
	free(s);
	free(d);
	if (asprintf(&s, "%s/" OP_SESSION_LOG_PATH, p->session_dir) < 0 ||
	    asprintf(&d, "%s/" OP_SESSION_LOG_PATH, origin) < 0)
		return -ENOMEM;
	oa_copy(c, s, d, true, true);
	free(s);
	free(d);
	return 0;
}

static int oa_open_outdir(struct oa_ctx *c)
{
	char *dup = strdup(c->outdir), *real;

	if (!dup)
		return -ENOMEM;
	/* mkdir -p: the path the user gave, as given */
	for (char *sl = strchr(dup + 1, '/');; sl = strchr(sl + 1, '/')) {
		if (sl)
			*sl = 0;
		if (mkdir(dup, 0755) && errno != EEXIST) {
			oa_error("-o %s: cannot make %s: %s", c->outdir, dup, strerror(errno));
			free(dup);
			return -1;
		}
		if (!sl)
			break;
		*sl = '/';
	}
	free(dup);
	real = realpath(c->outdir, NULL);
	if (real && !strcmp(real, "/")) {
		oa_error("-o %s: the archive cannot be the root directory (it would copy every "
			 "binary onto itself)",
			 c->outdir);
		free(real);
		return -1;
	}
	free(real);
	c->outfd = open(c->outdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->outfd < 0) {
		oa_error("-o %s: %s", c->outdir, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char *argv[])
{
	enum { OPT_SESSION = 256, OPT_VERSION, OPT_USAGE };
	static const struct option longopts[] = {
		{ "output-directory", required_argument, NULL, 'o' },
		{ "list-files", no_argument, NULL, 'l' },
		{ "exclude-dependent", no_argument, NULL, 'x' },
		{ "image-path", required_argument, NULL, 'p' },
		{ "root", required_argument, NULL, 'R' },
		{ "session-dir", required_argument, NULL, OPT_SESSION },
		{ "help", no_argument, NULL, 'h' },
		{ "usage", no_argument, NULL, OPT_USAGE },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	struct rpt_opts o = { .demangle = DEMANGLE_NONE, .merge = MERGE_ALL };
	struct rpt_profile p = { .keep_files = true };
	struct oa_ctx c = { .outfd = -1 };
	char err[2048] = "", cwd[PATH_MAX];
	int opt, ret = 1;

	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	while ((opt = getopt_long(argc, argv, "o:lxp:R:h?", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			c.outdir = optarg;
			break;
		case 'l':
			c.list = true;
			break;
		case 'x':
			o.exclude_dependent = true;
			break;
		case 'p':
			if (strlist_add_csv(&o.image_path, optarg)) {
				oa_error("out of memory");
				goto out;
			}
			break;
		case 'R':
			o.root = optarg;
			break;
		case OPT_SESSION:
			o.session_dir = optarg;
			break;
		case 'h':
			oa_usage(stdout);
			ret = 0;
			goto out;
		case OPT_USAGE:
usage:
			puts("usage: oparchive -o DIR [-l] [-x] [-p DIRS] [-R DIR] [--session-dir=DIR] "
			     "[profile specification]");
			ret = 0;
			goto out;
		case '?':
			if (!strcmp(argv[optind - 1], "-?"))
				goto usage;
			oa_usage(stderr);
			goto out;
		case OPT_VERSION:
			printf("oparchive " PACKAGE_VERSION "\n");
			ret = 0;
			goto out;
		default:
			oa_usage(stderr);
			goto out;
		}
	}
	if (!c.outdir && !c.list) {
		oa_error("no archive directory: give -o DIR (or -l to list the files)");
		goto out;
	}
	if (c.outdir && !*c.outdir) {
		oa_error("-o: an empty directory name");
		goto out;
	}
	for (int i = optind; i < argc; i++) {
		if (spec_add(&o.spec, argv[i], cwd, err, sizeof(err))) {
			oa_error("%s", err);
			goto out;
		}
	}
	c.archive = o.spec.archive;
	if (rs_find_session(o.session_dir, &p.session_dir, err, sizeof(err)) ||
	    rs_load(&p, &o, err, sizeof(err))) {
		oa_error("%s", err[0] ? err : "out of memory");
		goto out_free;
	}
	if (!c.list && oa_open_outdir(&c))
		goto out_free;
	for (size_t i = 0; i < p.nimgs; i++)
		oa_binary(&c, p.imgs[i]);
	if (oa_session(&c, &p)) {
		oa_error("out of memory");
		goto out_free;
	}
	if (!c.list)
		fprintf(stderr, "oparchive: %zu files copied to %s%s\n", c.ncopied, c.outdir,
			c.nwarn ? " (some were left out, see above)" : "");
	ret = c.nerr ? 1 : 0;
out_free:
	if (fflush(stdout) || ferror(stdout)) {
		oa_error("writing the list failed: %s", strerror(errno));
		ret = 1;
	}
	if (c.outfd >= 0)
		close(c.outfd);
	strlist_free(&c.done);
	rs_free(&p);
out:
	spec_free(&o.spec);
	strlist_free(&o.image_path);
	return ret;
}
