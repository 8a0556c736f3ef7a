/*
 * sfile_open.c - a set's sample files: their names (mangled from the
 * image, app, context and counter), their directories created through a
 * safe walk below samples/current/ (openat2, else one component at a time,
 * never through a symlink), the root daemon's ownership checks, the odb
 * open, and sfile_log(), which opens a file on its first sample.
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

/*
 * Walk @name's directories from samples/current, creating them, refusing
 * symlinks and "."/".." at every step; return a dirfd for the last directory
 * and the file's base name in *base.
 */
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

#ifdef SFILE_HAVE_OPENAT2
/*
 * The directory of @name in one system call, when it exists: beneath
 * samples/current, never through a symlink (the kernel checks what the
 * component walk below checks by hand). -errno otherwise.
 */
static int sfile_open_dir_fast(struct sfile_table *tab, char *name, char **base)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	char *last = strrchr(name, '/');
	long fd;

	if (tab->no_openat2 || !last || last == name || !last[1] || sfile_has_dot_component(name))
		return -EINVAL;
	*last = 0;
	fd = syscall(SYS_openat2, tab->cfg.current_dirfd, name, &how, sizeof(how));
	*last = '/';
	if (fd < 0) {
		if (errno == ENOSYS || errno == EPERM)
			tab->no_openat2 = true; /* old kernel, or a seccomp filter */
		return -errno;
	}
	*base = last + 1;
	return (int)fd;
}
#endif

/*
 * Open the directory of sample file @name (relative to samples/current),
 * creating what is missing, one component at a time through directory fds
 * with O_NOFOLLOW: never outside samples/current, never through a symlink.
 * Returns the fd (current_dirfd itself for a name without '/') and sets
 * *@base to the file name; -errno, -EINVAL for a "." or ".." component.
 */
static int sfile_mkdirs(struct sfile_table *tab, char *name, char **base)
{
	int dfd = tab->cfg.current_dirfd, nfd;
	char *comp = name, *slash;

#ifdef SFILE_HAVE_OPENAT2
	nfd = sfile_open_dir_fast(tab, name, base);
	if (nfd >= 0)
		return nfd;
#endif
	while ((slash = strchr(comp, '/'))) {
		*slash = 0;
		if (!*comp) {
			comp = slash + 1;
			continue;
		}
		if (!strcmp(comp, ".") || !strcmp(comp, "..")) {
			*slash = '/';
			goto out_bad;
		}
		nfd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT) {
			if (mkdirat(dfd, comp, 0755) && errno != EEXIST) {
				nfd = -errno;
				*slash = '/';
				goto out_err;
			}
			nfd = openat(dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		*slash = '/';
		if (nfd < 0) {
			nfd = -errno;
			goto out_err;
		}
		if (dfd != tab->cfg.current_dirfd)
			close(dfd);
		dfd = nfd;
		comp = slash + 1;
	}
	if (!*comp || !strcmp(comp, ".") || !strcmp(comp, ".."))
		goto out_bad;
	*base = comp;
	return dfd;

out_bad:
	nfd = -EINVAL;
out_err:
	if (dfd != tab->cfg.current_dirfd)
		close(dfd);
	return nfd;
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

static uint32_t sfile_dir_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	while (n--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

/* the slot of @name's directory (the part before its last '/'), NULL without one */
static struct sfile_dir *sfile_dir_slot(struct sfile_table *tab, const char *name, size_t *len,
					uint32_t *hash)
{
	const char *last = strrchr(name, '/');

	if (!last || last == name)
		return NULL;
	*len = (size_t)(last - name);
	*hash = sfile_dir_hash(name, *len);
	return &tab->dirs[*hash % SFILE_DIRS];
}

/*
 * The directory of sample file @name, open, with its base name in *base:
 * from the directories kept open when it is one of them (*kept set: the
 * caller must not close it), else walked and created (sfile_mkdirs) and, as
 * root, checked (@dir_ok), then kept in place of the slot's previous one.
 * A new process of an image makes its files in the directories the
 * previous one used: this saves the walk (openat2 of a long path), the
 * directory's fstat and its close per file (issue 20: process churn).
 */
static int sfile_dir_open(struct sfile_table *tab, char *name, char **base, bool *kept,
			  int (*dir_ok)(int dfd, char *err, size_t len), char *err, size_t err_len)
{
	size_t len = 0;
	uint32_t h = 0;
	struct sfile_dir *d = sfile_dir_slot(tab, name, &len, &h);
	int dfd, rc;

	*kept = false;
	if (d && d->path && d->hash == h && d->len == len && !memcmp(d->path, name, len)) {
		*base = name + len + 1;
		*kept = true;
		return d->fd;
	}
	dfd = sfile_mkdirs(tab, name, base);
	if (dfd < 0)
		return dfd;
	rc = tab->strict ? dir_ok(dfd, err, err_len) : 0;
	if (rc) {
		if (dfd != tab->cfg.current_dirfd)
			close(dfd);
		return rc;
	}
	/* short of descriptors (an EMFILE was seen): every one goes to sample files */
	if (!d || dfd == tab->cfg.current_dirfd || tab->fd_short)
		return dfd;
	sfile_dir_drop(d);
	d->path = strndup(name, len);
	if (!d->path)
		return dfd; /* not kept: the caller closes it */
	d->len = len;
	d->hash = h;
	d->fd = dfd;
	*kept = true;
	return dfd;
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
 * (it does not exist yet, or is a trusted one): no one else may write the
 * directory, so what fstatat sees is what odb_open opens.
 */
static int sfile_trusted_entry(int dfd, const char *base, char *err, size_t len)
{
	struct stat st;
	int rc;

	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
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
	bool kept = false, dir_retried = false;
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
		dfd = sfile_dir_open(tab, name, &base, &kept, sfile_trusted_dir, err, sizeof(err));
		if (dfd >= 0) {
			rc = tab->strict ? sfile_trusted_entry(dfd, base, err, sizeof(err)) : 0;
			if (!rc)
				rc = odb_open(db, dfd, base, ODB_RDWR, err, sizeof(err));
			if (!rc && tab->strict) {
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
		}
		if (handed) {
			handovers++;
			tab->stats->v[STAT_SFILE_HANDOVERS]++;
			continue;
		}
		/* out of descriptors, or of mappings (mmap: ENOMEM at vm.max_map_count) */
		if ((rc == -EMFILE || rc == -ENFILE || rc == -ENOMEM) && tries < 2 &&
		    tab->nr_open > 0) {
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
