/*
 * sfile_open.c - a set's sample files: their names (mangled from the
 * image, app, context and counter), their directories created through a
 * safe walk below samples/current/ from the deepest directory kept open
 * (openat2, else one component at a time, never through a symlink), the
 * root daemon's ownership checks, the odb open, and sfile_log(), which
 * opens a file on its first sample.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(SYS_openat2) && __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#define SFILE_HAVE_OPENAT2 1
#endif

#include "op_mangle.h"
#include "session.h"
#include "sfile.h"
#include "sfile_int.h"

/* ------------------------------------------------------------------ */
/* Names and opening                                                   */
/* ------------------------------------------------------------------ */

static int sfile_image(const struct sfile_table *tab, op_cookie_t c, int32_t in_kernel,
		       int32_t tgid, uint64_t start, uint64_t end, struct op_image_name *out)
{
	const struct cookie_ent *e = cookie_get(tab->cookies, c);

	if (!e)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->path = e->path;
	if (e->kind == OP_IMAGE_ANON || start || end) {
		out->kind = OP_IMAGE_ANON;
		out->tgid = tgid < 0 ? 0 : tgid;
		out->start = start;
		out->end = end;
	} else if (in_kernel == 1 || e->kind == OP_IMAGE_KERNEL) {
		out->kind = OP_IMAGE_KERNEL;
	} else {
		out->kind = OP_IMAGE_USER;
	}
	return 0;
}

/* event name, code, um, count of @counter; false if unknown */
static bool sfile_counter_event(const struct sfile_table *tab, uint32_t counter, const char **name,
				uint32_t *event, uint32_t *um, uint64_t *count)
{
	if (counter < tab->cfg.nr_events) {
		const struct sfile_event *e = &tab->cfg.events[counter];

		*name = e->name;
		*event = e->event;
		*um = e->um;
		*count = e->count;
		return true;
	}
	if (counter >= EXT_COUNTER_BASE && tab->reg &&
	    counter - EXT_COUNTER_BASE < tab->reg->nr_counters) {
		const struct ext_counter *c = &tab->reg->counters[counter - EXT_COUNTER_BASE];

		*name = c->name ? c->name : c->desc.name;
		*event = c->desc.event;
		*um = c->desc.um;
		*count = c->desc.count;
		return true;
	}
	return false;
}

int sfile_name(const struct sfile_table *tab, const struct op_sfile *sf, uint32_t counter,
	       const struct op_file_spec *spec, char *buf, size_t len)
{
	return sfile_key_name(tab, &sf->key, sf->tgid_hint, counter, spec, buf, len);
}

int sfile_key_name(const struct sfile_table *tab, const struct sfile_key *k, int32_t tgid_hint,
		   uint32_t counter, const struct op_file_spec *spec, char *buf, size_t len)
{
	struct op_mangle_args a;
	uint32_t event, um;
	int rc;

	memset(&a, 0, sizeof(a));
	if (!sfile_counter_event(tab, counter, &a.event, &event, &um, &a.count))
		return -EINVAL;
	a.um = um;
	rc = sfile_image(tab, k->cookie, k->in_kernel, k->anon_tgid, k->anon_start, k->anon_end,
			 &a.image);
	if (rc)
		return rc;
	if (k->app) {
		rc = sfile_image(tab, k->app, 0, -1, 0, 0, &a.app);
		if (rc)
			return rc;
	} else {
		a.app = a.image;
	}
	if (spec && spec->is_cg) {
		a.is_cg = true;
		rc = sfile_image(tab, spec->cg_to_cookie, spec->cg_to_is_kernel, tgid_hint,
				 spec->cg_to_anon_start, spec->cg_to_anon_end, &a.cg_to);
		if (rc)
			return rc;
	}
	a.tgid = k->tgid;
	a.tid = k->tid;
	a.cpu = k->cpu;
	a.separate = tab->cfg.separate;
	if (k->split) { /* issue 20: <split>/{cgroup}/KEY.../ before the name */
		a.split = cookie_path(tab->cookies, k->split);
		if (!a.split)
			return -ENOENT;
	}
	return op_mangle(&a, buf, len);
}

/* a "." or ".." component anywhere in @name (never in names we build) */
static bool sfile_has_dot_component(const char *name)
{
	const char *c = name;

	for (;;) {
		size_t n = strcspn(c, "/");

		if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
			return true;
		if (!c[n])
			return false;
		c += n + 1;
	}
}

/* ------------------------------------------------------------------ */
/* Directories kept open                                               */
/* ------------------------------------------------------------------ */

static void sfile_dir_drop(struct sfile_dir *d)
{
	if (!d || !d->path)
		return;
	close(d->fd);
	free(d->path);
	d->path = NULL;
}

void sfile_dirs_close(struct sfile_table *tab)
{
	size_t i;

	for (i = 0; i < SFILE_DIRS; i++)
		sfile_dir_drop(&tab->dirs[i]);
}

/* directories kept open now (an error path: descriptors to give back) */
static bool sfile_dirs_kept(const struct sfile_table *tab)
{
	size_t i;

	for (i = 0; i < SFILE_DIRS; i++)
		if (tab->dirs[i].path)
			return true;
	return false;
}

#define SFILE_FNV_BASIS 2166136261u /* FNV-1a: the hash of a prefix is a step of the name's */
#define SFILE_FNV_PRIME 16777619u

/* the kept directory @name[0, @len), NULL */
static struct sfile_dir *sfile_dir_find(struct sfile_table *tab, const char *name, size_t len,
					uint32_t hash)
{
	size_t i;

	for (i = 0; i < SFILE_DIRS; i++) {
		struct sfile_dir *d = &tab->dirs[i];

		if (d->path && d->hash == hash && d->len == len && !memcmp(d->path, name, len))
			return d;
	}
	return NULL;
}

/*
 * Keep @fd open as directory @name[0, @len): in a free slot, else in place
 * of the least recently used one used before @since (the walk in progress
 * never closes a directory it is walking from). NULL: not kept, the caller
 * closes @fd.
 */
static struct sfile_dir *sfile_dir_keep(struct sfile_table *tab, const char *name, size_t len,
					uint32_t hash, int fd, bool checked, uint32_t since)
{
	struct sfile_dir *d = NULL;
	size_t i;

	if (tab->fd_short) /* every descriptor goes to sample files */
		return NULL;
	for (i = 0; i < SFILE_DIRS; i++) {
		struct sfile_dir *c = &tab->dirs[i];

		if (!c->path) {
			d = c;
			break;
		}
		if ((int32_t)(c->used - since) < 0 && (!d || (int32_t)(c->used - d->used) < 0))
			d = c;
	}
	if (!d)
		return NULL;
	sfile_dir_drop(d);
	d->path = strndup(name, len);
	if (!d->path)
		return NULL;
	d->len = len;
	d->hash = hash;
	d->fd = fd;
	d->checked = checked;
	d->used = ++tab->dir_clock;
	return d;
}

/* Root: the directory of sample files @dfd is root's and no one else may write it. */
static int sfile_trusted_dir(int dfd, char *err, size_t len);

#ifdef SFILE_HAVE_OPENAT2
/*
 * Directory @path below @dfd in one system call when it exists: beneath
 * @dfd, never through a symlink (the kernel checks what the component walk
 * checks by hand). -errno otherwise.
 */
static int sfile_openat2_dir(struct sfile_table *tab, int dfd, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, dfd, path, &how, sizeof(how));

	if (fd < 0) {
		if (errno == ENOSYS || errno == EPERM)
			tab->no_openat2 = true; /* old kernel, or a seccomp filter */
		return -errno;
	}
	return (int)fd;
}
#endif

/*
 * One step of sfile_dir_open's walk: directory @nfd (@name[0, @len)) opened
 * below *@dfd. The previous one is closed unless kept (*@kept, or the
 * ancestor @anc the walk started at), @nfd kept if it can be.
 */
static void sfile_walk_to(struct sfile_table *tab, int *dfd, int nfd, bool *kept, int anc,
			  const char *name, size_t len, uint32_t hash, bool made, uint32_t since)
{
	if (!*kept && *dfd != tab->cfg.current_dirfd && *dfd != anc)
		close(*dfd);
	*dfd = nfd;
	*kept = sfile_dir_keep(tab, name, len, hash, nfd, made, since) != NULL;
}

/* the most directories a name below samples/current can have ("a/" each) */
#define SFILE_MAX_DEPTH (PATH_MAX / 2)

/*
 * The directory of sample file @name (relative to samples/current), open,
 * and its base name in *@base. *@kept: the fd is one of the directories
 * kept open (the caller must not close it); else the caller closes it
 * unless it is current_dirfd. *@fresh: this call made the directory (it is
 * empty: the file is new). -errno (-EINVAL for an empty, "." or ".."
 * component) with a message in @err for a directory that is not trusted.
 *
 * What is missing is made one component at a time through directory fds,
 * mkdirat then openat with O_NOFOLLOW: never outside samples/current, never
 * through a symlink; below a directory this walk made, everything is new,
 * so no lookup is tried first. The walk starts at the deepest directory of
 * the name that is kept open (a new process of a known pair: its
 * directory itself, no system call; a new pair: its cgroup's or its
 * binary's), not at samples/current (issue 20: a build host's process
 * churn made ~25 system calls per new pair's file walking from the root).
 * Each directory opened is kept (ancestors too: a pair's files share
 * most of their path), the least recently used closed when all are in use.
 * As root, a sample-file directory is fstat-checked once (sfile_trusted_dir)
 * unless this daemon made it: mkdirat as root, mode 0755, in the
 * root-private session is root's and written by no one else.
 */
static int sfile_dir_open(struct sfile_table *tab, char *name, char **base, bool *kept, bool *fresh,
			  char *err, size_t err_len)
{
	uint32_t hashes[SFILE_MAX_DEPTH];
	uint16_t ends[SFILE_MAX_DEPTH];
	const char *last = strrchr(name, '/');
	uint32_t h = SFILE_FNV_BASIS, since = tab->dir_clock + 1;
	struct sfile_dir *d = NULL;
	size_t i, dirlen, n = 0, k;
	bool made = false, made_last = false;
	int dfd, nfd, rc, anc = -1;

	*kept = *fresh = false;
	if (!name[0] || name[0] == '/' || strstr(name, "//") || sfile_has_dot_component(name) ||
	    (last && !last[1]))
		return -EINVAL;
	if (!last) {
		*base = name;
		return tab->cfg.current_dirfd;
	}
	/* the hash of every directory of the name, in one pass */
	dirlen = (size_t)(last - name);
	for (i = 0; i <= dirlen; i++) {
		if (i == dirlen || name[i] == '/') {
			if (n == SFILE_MAX_DEPTH)
				return -ENAMETOOLONG;
			hashes[n] = h;
			ends[n++] = (uint16_t)i;
		}
		h = (h ^ (unsigned char)name[i]) * SFILE_FNV_PRIME;
	}
	*base = name + dirlen + 1;
	/* the deepest one kept open */
	for (k = n; k > 0 && !d; k--)
		d = sfile_dir_find(tab, name, ends[k - 1], hashes[k - 1]);
	if (d) {
		d->used = ++tab->dir_clock; /* never closed by this walk */
		dfd = anc = d->fd;
		if (k + 1 == n) { /* the file's own directory */
			if (tab->strict && !d->checked) {
				rc = sfile_trusted_dir(dfd, err, err_len);
				if (rc)
					return rc;
				d->checked = true;
			}
			*kept = true;
			return dfd;
		}
		k++; /* the first directory to open */
	} else {
		dfd = tab->cfg.current_dirfd;
	}
#ifdef SFILE_HAVE_OPENAT2
	/* several components to go: all of them exist when the pair is known */
	if (n - k > 1 && !tab->no_openat2) {
		name[dirlen] = 0;
		nfd = sfile_openat2_dir(tab, dfd, name + (k ? ends[k - 1] + 1u : 0));
		name[dirlen] = '/';
		if (nfd >= 0) {
			k = n - 1;
			sfile_walk_to(tab, &dfd, nfd, kept, anc, name, ends[k], hashes[k], false,
				      since);
			k = n;
		}
	}
#endif
	for (; k < n; k++) {
		char *comp = name + (k ? ends[k - 1] + 1u : 0);

		name[ends[k]] = 0;
		made_last = false;
		nfd = made ? -1 : openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && (made || errno == ENOENT)) {
			if (!mkdirat(dfd, comp, 0755))
				made = made_last = true;
			else if (errno != EEXIST)
				goto out_errno;
			nfd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0)
			goto out_errno;
		name[ends[k]] = '/';
		sfile_walk_to(tab, &dfd, nfd, kept, anc, name, ends[k], hashes[k], made_last, since);
	}
	*fresh = made_last;
	d = *kept ? sfile_dir_find(tab, name, dirlen, hashes[n - 1]) : NULL;
	if (tab->strict && !made_last && !(d && d->checked)) {
		rc = sfile_trusted_dir(dfd, err, err_len);
		if (rc) {
			if (!*kept)
				close(dfd);
			*kept = false;
			return rc;
		}
		if (d)
			d->checked = true;
	}
	return dfd;

out_errno:
	rc = -errno;
	name[ends[k]] = '/';
	if (!*kept && dfd != tab->cfg.current_dirfd && dfd != anc)
		close(dfd);
	*kept = false;
	return rc;
}

static const char sfile_advice[] =
	"a root oprofiled writes only root-owned sample files that group and other cannot "
	"write - remove it";

static void sfile_advise(int rc, char *err, size_t len)
{
	if (rc && strlen(err) + 2 < len)
		snprintf(err + strlen(err), len - strlen(err), ": %s", sfile_advice);
}

/* Root: the directory of sample files @dfd is root's and no one else may write it. */
static int sfile_trusted_dir(int dfd, char *err, size_t len)
{
	struct stat st;
	int rc;

	if (fstat(dfd, &st))
		return -errno;
	rc = session_trusted(&st, "its directory", err, len);
	sfile_advise(rc, err, len);
	return rc;
}

/*
 * Root: sample file @base below the trusted directory @dfd may be opened
 * (it does not exist yet, *@absent set, or is a trusted one): no one else
 * may write the directory, so what fstatat sees is what odb_open opens.
 */
static int sfile_trusted_entry(int dfd, const char *base, bool *absent, char *err, size_t len)
{
	struct stat st;
	int rc;

	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW)) {
		*absent = errno == ENOENT;
		return *absent ? 0 : -errno;
	}
	rc = session_trusted(&st, "it", err, len);
	sfile_advise(rc, err, len);
	return rc;
}

/* root: the file odb_open opened is a trusted one (checked on its fd) */
static int sfile_trusted_fd(int fd, char *err, size_t len)
{
	struct stat st;
	int rc;

	if (fstat(fd, &st))
		return -errno;
	rc = session_trusted(&st, "it", err, len);
	if (rc && strlen(err) + 2 < len)
		snprintf(err + strlen(err), len - strlen(err), ": %s", sfile_advice);
	return rc;
}

/*
 * A process path for a log line: control bytes as '?' (a path is any bytes
 * but a NUL: it must not forge a line of the log), and a long one cut in the
 * middle with "..." so that both ends show.
 */
static void sfile_show_path(const char *path, char *out, size_t len)
{
	size_t n = strlen(path), i, o = 0, head = n, tail = 0;

	if (n >= len) {
		head = (len - 4) / 2;
		tail = len - 4 - head;
	}
	for (i = 0; i < n && o + 1 < len; i++) {
		unsigned char c = (unsigned char)path[i];

		if (i == head && tail) {
			memcpy(out + o, "...", 3);
			o += 3;
			i = n - tail;
			c = (unsigned char)path[i];
		}
		out[o++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	out[o] = 0;
}

/* descriptors left to the rest of the daemon when sample files fill the limit */
#define SFILE_FD_RESERVE 8

/*
 * The process ran out of descriptors with tab->nr_open sample files open:
 * its limit is lower than --max-open-files assumed (cut under the daemon,
 * or taken by others). Keep fewer files open from now on, so that the rest
 * of the daemon (statistics files at a dump, /proc, the control socket)
 * still finds descriptors, and sample files do not hit the limit again.
 */
static void sfile_fit_fd_limit(struct sfile_table *tab)
{
	unsigned max = tab->nr_open > SFILE_FD_RESERVE ? tab->nr_open - SFILE_FD_RESERVE : 1;

	tab->fd_short = true;
	sfile_dirs_close(tab);
	if (max >= tab->cfg.max_open_files)
		return;
	log_info(tab->log,
		 "out of file descriptors with %u sample files open: keeping at most %u open "
		 "(--max-open-files %u; raise RLIMIT_NOFILE to keep more)",
		 tab->nr_open, max, tab->cfg.max_open_files);
	tab->cfg.max_open_files = max;
}

void sfile_yield_fds(struct sfile_table *tab)
{
	if (!tab->nr_open)
		return;
	sfile_fit_fd_limit(tab);
	sfile_evict(tab, tab->nr_open / 2, NULL);
}

int sfile_open_odb(struct sfile_table *tab, struct op_sfile *sf, odb_t *db, uint32_t counter,
		   const struct op_file_spec *spec)
{
	char name[PATH_MAX], err[256];
	struct opd_header *hd;
	const struct cookie_ent *ce;
	const char *evname;
	uint32_t event, um;
	uint64_t count;
	char *base = NULL;
	bool kept = false, fresh = false, dir_retried = false;
	int rc, dfd, tries, handovers;

	err[0] = 0;
	rc = sfile_name(tab, sf, counter, spec, name, sizeof(name));
	if (rc < 0) {
		const struct cookie_ent *img = cookie_get(tab->cookies, sf->key.cookie);
		char shown[200];

		tab->stats->v[STAT_BAD_PATH]++;
		sfile_show_path(img ? img->path : "?", shown, sizeof(shown));
		sfile_logf(tab, "cannot name the sample file of %s (counter %u): %s%s", shown,
			   counter, strerror(-rc),
			   rc == -ENAMETOOLONG ? " - the binary's path is too long once mangled into "
						 "a sample-file name (PATH_MAX): its samples are "
						 "counted as lost (stats/lost_samplefile)" :
						 "");
		return rc;
	}
	if (tab->nr_open >= tab->cfg.max_open_files)
		sfile_evict(tab, tab->cfg.max_open_files, sf);
	for (tries = 0, handovers = 0;;) {
		bool handed = false;

		err[0] = 0;
		dfd = sfile_dir_open(tab, name, &base, &kept, &fresh, err, sizeof(err));
		if (dfd >= 0) {
			/* a file known to be missing is created at once (O_EXCL) */
			bool absent = fresh;

			rc = tab->strict && !fresh ?
				     sfile_trusted_entry(dfd, base, &absent, err, sizeof(err)) :
				     0;
			if (!rc)
				rc = absent ? odb_create(db, dfd, base, err, sizeof(err)) :
					      odb_open(db, dfd, base, ODB_RDWR, err, sizeof(err));
			/* one this open created (O_EXCL, as root, in a trusted
			 * directory) is root's, 0644, one link: nothing to check */
			if (!rc && tab->strict && !db->created) {
				rc = sfile_trusted_fd(db->fd, err, sizeof(err));
				if (rc)
					odb_close(db);
			}
			/* another key of ours names this file: hand it over, never two writers */
			if (rc == -EBUSY && handovers < 2)
				handed = sfile_hand_over(tab, dfd, base);
			if (rc && !handed && kept) {
				/* a kept directory removed or replaced since: walk anew, once */
				sfile_dirs_close(tab);
				if (rc == -ENOENT && !dir_retried) {
					dir_retried = true;
					continue;
				}
			} else if (!kept && dfd != tab->cfg.current_dirfd) {
				close(dfd);
			}
		} else {
			rc = dfd;
			/* a kept ancestor removed since (its tree deleted): walk from the root, once */
			if (rc == -ENOENT && !dir_retried && sfile_dirs_kept(tab)) {
				sfile_dirs_close(tab);
				dir_retried = true;
				continue;
			}
		}
		if (handed) {
			handovers++;
			tab->stats->v[STAT_SFILE_HANDOVERS]++;
			continue;
		}
		/* out of descriptors, or of mappings (mmap: ENOMEM at vm.max_map_count) */
		if ((rc == -EMFILE || rc == -ENFILE || rc == -ENOMEM) && tries < 2 &&
		    (tab->nr_open > 0 || sfile_dirs_kept(tab))) {
			if (rc == -EMFILE && tries == 0)
				sfile_fit_fd_limit(tab);
			tries++;
			tab->stats->v[STAT_EMFILE_RETRIES]++;
			sfile_dirs_close(tab);
			sfile_evict(tab, tab->nr_open / 2, sf);
			continue;
		}
		break;
	}
	if (rc) {
		if (rc == -EINVAL && dfd < 0)
			tab->stats->v[STAT_BAD_PATH]++;
		sfile_logf(tab, "cannot open sample file %s: %s%s%s", name, strerror(-rc),
			   err[0] ? " - " : "", err[0] ? err : "");
		return rc;
	}
	tab->nr_open++;
	sf->nr_open++;
	tab->stats->v[STAT_SFILE_OPENS]++;
	/* the image has samples in this session: stats/buildids names it */
	cookie_mark_sampled(tab->cookies, sf->key.cookie);
	if (spec && spec->is_cg)
		cookie_mark_sampled(tab->cookies, spec->cg_to_cookie);
	if (tab->verbose)
		log_info(tab->log, "opened %s", name);
	hd = odb_header(db);
	if (memcmp(hd->magic, OPD_MAGIC, 4)) {
		sfile_counter_event(tab, counter, &evname, &event, &um, &count);
		op_header_init(hd);
		hd->cpu_type = tab->cfg.cpu_type;
		hd->ctr_event = event;
		hd->ctr_um = um;
		hd->ctr_count = (uint32_t)count;
		hd->is_kernel = sf->key.in_kernel == 1;
		hd->cpu_speed = tab->cfg.cpu_speed;
		ce = cookie_get(tab->cookies, sf->key.cookie);
		hd->mtime = ce ? ce->mtime : 0;
		hd->anon_start = sf->key.anon_start;
		if (spec && spec->is_cg) {
			hd->cg_to_is_kernel = spec->cg_to_is_kernel == 1;
			hd->cg_to_anon_start = spec->cg_to_anon_start;
		}
	}
	return 0;
}

/*
 * A sample file changed under the writer (odb found an index out of order in
 * its own mapping: another process wrote to it): say so once, close it and
 * count its later samples as lost until the set is opened anew (SIGHUP,
 * eviction), when the full check at open refuses or repairs the file.
 */
static void sfile_give_up(struct sfile_table *tab, struct op_sfile *sf, odb_t *db, uint32_t counter)
{
	char name[PATH_MAX];

	if (sfile_name(tab, sf, counter, NULL, name, sizeof(name)) <= 0)
		snprintf(name, sizeof(name), "%s", db->path ? db->path : "?");
	sfile_logf(tab,
		   "sample file %s changed by another process under the daemon (bad index in "
		   "its hash chains): no longer written, its samples counted as lost",
		   name);
	tab->stats->v[STAT_ODB_SATURATED] += db->saturated;
	odb_close(db);
	db->fd = -1;
	tab->nr_open--;
	sf->nr_open--;
	if (counter < OP_MAX_EVENTS) {
		sf->failed |= 1u << counter;
		sf->changed |= 1u << counter;
	} else {
		uint32_t idx = counter - EXT_COUNTER_BASE;

		sf->vfiles[idx] = NULL;
		sf->vfailed[idx / 64] |= 1ull << (idx % 64);
		sf->vchanged[idx / 64] |= 1ull << (idx % 64);
		free(db);
	}
}

/* how long a set's file that could not be opened for want of resources waits */
#define SFILE_RETRY_MS 100

/* an open failed for want of descriptors or memory: worth trying again soon */
static bool sfile_transient(struct sfile_table *tab, int rc)
{
	if (rc != -EMFILE && rc != -ENFILE && rc != -ENOMEM && rc != -EBUSY)
		return false;
	tab->retry_ms = log_now_ms() + SFILE_RETRY_MS;
	return true;
}

/*
 * A file of a set failed to open before: true if it failed for want of
 * resources and the wait is over (then it is tried again: no syscall per
 * sample meanwhile, one clock read); false: its sample is lost.
 */
static bool sfile_retry(const struct sfile_table *tab, bool transient)
{
	return transient && log_now_ms() >= tab->retry_ms;
}

int sfile_log(struct sfile_table *tab, struct op_sfile *sf, uint32_t counter, uint64_t key,
	      uint32_t count)
{
	odb_t *db;
	int rc;

	if (counter < OP_MAX_EVENTS && counter < tab->cfg.nr_events) {
		db = &sf->files[counter];
		const uint32_t bit = 1u << counter;

		if (db->fd < 0) {
			if ((sf->failed & bit) && !sfile_retry(tab, sf->transient & bit)) {
				sfile_lost(tab, sf->changed & bit ? STAT_LOST_SF_CHANGED :
								    STAT_LOST_SF_OPEN);
				return -EIO;
			}
			sf->failed &= ~bit;
			sf->transient &= ~bit;
			rc = sfile_open_odb(tab, sf, db, counter, NULL);
			if (rc) {
				db->fd = -1;
				sf->failed |= bit;
				if (sfile_transient(tab, rc))
					sf->transient |= bit;
				sfile_lost(tab, STAT_LOST_SF_OPEN);
				return rc;
			}
		}
	} else if (counter >= EXT_COUNTER_BASE && tab->reg &&
		   counter - EXT_COUNTER_BASE < tab->reg->nr_counters) {
		uint32_t idx = counter - EXT_COUNTER_BASE;
		uint64_t bit = 1ull << (idx % 64);

		db = sf->vfiles[idx];
		if (!db) {
			if ((sf->vfailed[idx / 64] & bit) &&
			    !sfile_retry(tab, sf->vtransient[idx / 64] & bit)) {
				sfile_lost(tab, sf->vchanged[idx / 64] & bit ? STAT_LOST_SF_CHANGED :
									       STAT_LOST_SF_OPEN);
				return -EIO;
			}
			sf->vfailed[idx / 64] &= ~bit;
			sf->vtransient[idx / 64] &= ~bit;
			db = calloc(1, sizeof(*db));
			if (!db) {
				tab->stats->v[STAT_NO_MEMORY]++;
				return -ENOMEM;
			}
			rc = sfile_open_odb(tab, sf, db, counter, NULL);
			if (rc) {
				free(db);
				sf->vfailed[idx / 64] |= bit;
				if (sfile_transient(tab, rc))
					sf->vtransient[idx / 64] |= bit;
				sfile_lost(tab, STAT_LOST_SF_OPEN);
				return rc;
			}
			sf->vfiles[idx] = db;
		}
	} else {
		tab->stats->v[STAT_LOST_BAD_COUNTER]++;
		return -EINVAL;
	}
	rc = odb_update(db, key, count);
	if (rc) {
		/* a file changed under us, or no room to grow (the file stays as it was) */
		sfile_lost(tab, db->broken ? STAT_LOST_SF_CHANGED : STAT_LOST_SF_GROW);
		if (db->broken)
			sfile_give_up(tab, sf, db, counter);
	}
	return rc;
}
