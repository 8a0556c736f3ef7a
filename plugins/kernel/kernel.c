/*
 * kernel.c - the kernel plugin: tells buffer sync which kernel image (the
 * kernel or a module) covers a kernel PC, from /proc/kallsyms and
 * /proc/modules, and leaves a kernel symbol snapshot in the session so that
 * reports can name kernel functions after the machine moved on.
 * SPDX-License-Identifier: MIT
 *
 * Arguments (--ext-feature=kernel:ARGS, comma-separated):
 *   vmlinux=PATH   name the kernel image by this path instead of "vmlinux"
 *   proc=DIR       read kallsyms/modules under DIR instead of the host's
 *                  proc root (tests)
 * Config: plugins.kernel.vmlinux (string). Arguments win.
 *
 * Files written atomically, readable as their directory is (0644 in a 0755
 * session, 0600 in a root daemon's private one):
 *   <session>/samples/current/stats/modules   copy of /proc/modules (at init)
 *   <session>/samples/current/stats/kallsyms  text symbols, kallsyms format,
 *       a hard link to samples/.kallsyms/HASH-SIZE, the one copy of each
 *       distinct content (lib/op_ksyms_store.h): restarts and rotations of
 *       an unchanged kernel add no copy
 * The kallsyms pass (~40 ms here, nearly all the kernel formatting the
 * file) runs on a helper thread started at init, so it overlaps the rest of
 * the start-up and the profiled command; it is complete (joined) before the
 * first kernel address is resolved, the statistics are printed, or deinit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kernel.h"
#include "op_ksyms.h"
#include "op_ksyms_store.h"
#include "op_session_layout.h"
#include "../common/plugin_util.h"

#define KERNEL_PAGE UINT64_C(4096)
#define KERNEL_MAX_BAD_LOGGED 5
#define KERNEL_WBUF 65536
#define KERNEL_RBUF (1024 * 1024) /* kallsyms read block; a valid line is < 1 KiB */

/* ------------------------------------------------------------------ */
/* small helpers                                                       */
/* ------------------------------------------------------------------ */

static uint64_t kernel_clock_monotonic(void *arg)
{
	struct timespec ts;

	(void)arg;
	if (clock_gettime(CLOCK_MONOTONIC_COARSE, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

void kernel_set_clock(struct kernel_state *st, uint64_t (*now_ns)(void *arg), void *arg)
{
	st->now_ns = now_ns ? now_ns : kernel_clock_monotonic;
	st->now_arg = arg;
}

static char *kernel_path(const struct kernel_state *st, const char *name)
{
	size_t len = strlen(st->proc_root) + strlen(name) + 2;
	char *p = malloc(len);

	if (p)
		snprintf(p, len, "%s/%s", st->proc_root, name);
	return p;
}

static void kernel_copy_name(char *dst, size_t dst_len, const char *src, size_t len)
{
	if (len >= dst_len)
		len = dst_len - 1;
	memcpy(dst, src, len);
	dst[len] = '\0';
}

/*
 * Log through the host, or, while the kallsyms pass runs on its helper
 * thread (st->deferring), keep the message for kernel_join() to log: the
 * host's services are not for other threads.
 */
static void kernel_log(struct kernel_state *st, enum op_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void kernel_log(struct kernel_state *st, enum op_log_level level, const char *fmt, ...)
{
	char text[KERNEL_MSG_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!st->deferring) {
		st->host->log(st->ctx, level, "%s", text);
		return;
	}
	if (st->nr_deferred == KERNEL_MAX_DEFERRED) {
		st->deferred_dropped++;
		return;
	}
	st->deferred[st->nr_deferred].level = level;
	memcpy(st->deferred[st->nr_deferred].text, text, sizeof(text));
	st->nr_deferred++;
}

static void kernel_join(struct kernel_state *st);

/* A buffered writer on an fd: errors stick in .err. */
struct kernel_wbuf {
	int fd;
	int err;
	size_t used;
	uint64_t hash, size; /* of everything written (op_ksyms_store) */
	char buf[KERNEL_WBUF];
};

static void kernel_wflush(struct kernel_wbuf *w)
{
	size_t off = 0;

	w->hash = op_ksyms_hash(w->hash, w->buf, w->used);
	w->size += w->used;
	while (!w->err && off < w->used) {
		ssize_t n = write(w->fd, w->buf + off, w->used - off);

		if (n < 0) {
			if (errno != EINTR)
				w->err = errno;
			continue;
		}
		off += (size_t)n;
	}
	w->used = 0;
}

/* write @len bytes from @s as they are (the buffer flushed first) */
static void kernel_wdirect(struct kernel_wbuf *w, const char *s, size_t len)
{
	kernel_wflush(w);
	w->hash = op_ksyms_hash(w->hash, s, len);
	w->size += len;
	while (!w->err && len) {
		ssize_t n = write(w->fd, s, len);

		if (n < 0) {
			if (errno != EINTR)
				w->err = errno;
			continue;
		}
		s += n;
		len -= (size_t)n;
	}
}

static void kernel_wput(struct kernel_wbuf *w, const char *s, size_t len)
{
	if (len >= sizeof(w->buf)) {
		kernel_wdirect(w, s, len);
		return;
	}
	while (len && !w->err) {
		size_t n = sizeof(w->buf) - w->used;

		if (n > len)
			n = len;
		memcpy(w->buf + w->used, s, n);
		w->used += n;
		s += n;
		len -= n;
		if (w->used == sizeof(w->buf))
			kernel_wflush(w);
	}
}

/* ------------------------------------------------------------------ */
/* session snapshot: <session>/samples/current/stats/NAME, atomically  */
/* ------------------------------------------------------------------ */

/*
 * open (creating as needed) <session>/samples/current/stats without
 * following links; *@samples_fd: <session>/samples (or -1)
 */
static int kernel_open_stats_dir(struct kernel_state *st, const char *session, int *samples_fd)
{
	static const char *const comps[] = { OP_SESSION_SAMPLES, OP_SESSION_CURRENT,
					     OP_SESSION_STATS };
	int fd, nfd;
	size_t i;

	fd = open(session, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno; /* the log call may change errno */

		st->host->log(st->ctx, OP_LOG_ERR,
			      "session directory %s: %s: no kernel symbol snapshot will be saved",
			      session, strerror(e));
		return -e;
	}
	for (i = 0; i < sizeof(comps) / sizeof(comps[0]); i++) {
		if (mkdirat(fd, comps[i], 0755) && errno != EEXIST) {
			int e = errno;

			st->host->log(st->ctx, OP_LOG_ERR, "cannot create %s/.../%s: %s", session,
				      comps[i], strerror(e));
			close(fd);
			return -e;
		}
		nfd = openat(fd, comps[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			int e = errno;

			st->host->log(st->ctx, OP_LOG_ERR,
				      "cannot open %s/.../%s: %s (a symlink is refused)", session,
				      comps[i], strerror(e));
			close(fd);
			return -e;
		}
		if (i == 0)
			*samples_fd = dup(nfd);
		close(fd);
		fd = nfd;
	}
	return fd;
}

struct kernel_out {
	int dirfd;
	int samples_fd; /* samples/ for the content store (kallsyms only), else -1 */
	const char *name;
	char tmp[64];
	struct kernel_wbuf *w;
};

static int kernel_out_begin(struct kernel_state *st, struct kernel_out *o, int dirfd,
			    const char *name)
{
	struct stat dst;
	int fd;

	o->dirfd = dirfd;
	o->samples_fd = -1;
	o->name = name;
	o->w = NULL;
	snprintf(o->tmp, sizeof(o->tmp), ".%s.%ld.tmp", name, (long)getpid());
	unlinkat(dirfd, o->tmp, 0);
	fd = openat(dirfd, o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		int e = errno;

		st->host->log(st->ctx, OP_LOG_ERR, "cannot create stats/%s: %s", o->tmp,
			      strerror(e));
		return -e;
	}
	/*
	 * As readable as its directory, whatever the umask: 0644 in a 0755
	 * session, 0600 in a root daemon's private one, 0640 in a session_group's
	 * (the real kernel addresses are no one else's business: kptr_restrict)
	 */
	if (fstat(dirfd, &dst) || fchmod(fd, dst.st_mode & 0666)) {
		int e = errno;

		close(fd);
		unlinkat(dirfd, o->tmp, 0);
		st->host->log(st->ctx, OP_LOG_ERR, "chmod stats/%s: %s", o->tmp, strerror(e));
		return -e;
	}
	o->w = calloc(1, sizeof(*o->w));
	if (!o->w) {
		close(fd);
		unlinkat(dirfd, o->tmp, 0);
		return -ENOMEM;
	}
	o->w->fd = fd;
	o->w->hash = OP_KSYMS_HASH_INIT;
	return 0;
}

/*
 * flush, rename over NAME (commit) or unlink the temporary (abort). No
 * fsync, like the sample files (the page cache writes them back): forcing
 * megabytes to disk while the profiled command starts cost it the disk's
 * interrupts and a journal commit on its CPU (+0.3 % of a 0.8 s command at
 * 1 kHz, in runs up to +3 %). The rename still shows readers a whole file.
 */
static int kernel_out_end(struct kernel_state *st, struct kernel_out *o, bool commit)
{
	int rc = 0;

	if (!o->w)
		return 0;
	kernel_wflush(o->w);
	if (close(o->w->fd) && !o->w->err)
		o->w->err = errno;
	if (o->w->err) {
		rc = -o->w->err;
		kernel_log(st, OP_LOG_ERR, "writing stats/%s: %s", o->name, strerror(o->w->err));
	}
	if (!rc && commit) {
		/* the symbols once per distinct kernel in the session directory */
		if (o->samples_fd >= 0)
			rc = op_ksyms_store_commit(o->samples_fd, o->dirfd, o->tmp, o->name,
						   o->w->hash, o->w->size);
		else if (renameat(o->dirfd, o->tmp, o->dirfd, o->name))
			rc = -errno;
		if (rc > 0)
			st->snapshot_shared = true;
		rc = rc > 0 ? 0 : rc;
		if (rc)
			kernel_log(st, OP_LOG_ERR, "renaming stats/%s to %s: %s", o->tmp, o->name,
				   strerror(-rc));
	}
	if (rc || !commit)
		unlinkat(o->dirfd, o->tmp, 0);
	free(o->w);
	o->w = NULL;
	return rc;
}

/* ------------------------------------------------------------------ */
/* kallsyms                                                            */
/* ------------------------------------------------------------------ */

/* end of the page holding @addr (exclusive), saturating */
static uint64_t kernel_page_end(uint64_t addr)
{
	if (addr > UINT64_MAX - KERNEL_PAGE)
		return UINT64_MAX;
	return (addr + KERNEL_PAGE) & ~(KERNEL_PAGE - 1);
}

static void kernel_add_pseudo(struct kernel_state *st, const struct op_ksym_line *k)
{
	struct kernel_pseudo *p;
	unsigned i;

	for (i = 0; i < st->nr_pseudo; i++) {
		p = &st->pseudo[i];
		if (strlen(p->name) == k->module_len && !memcmp(p->name, k->module, k->module_len))
			break;
	}
	if (i == st->nr_pseudo) {
		if (st->nr_pseudo == KERNEL_MAX_PSEUDO)
			return; /* more pseudo-module kinds than exist today: ignore */
		p = &st->pseudo[st->nr_pseudo++];
		kernel_copy_name(p->name, sizeof(p->name), k->module, k->module_len);
		p->start = k->addr;
		p->end = kernel_page_end(k->addr);
	}
	p = &st->pseudo[i];
	if (k->addr < p->start)
		p->start = k->addr;
	/* a symbol's size is not in kallsyms: cover up to the end of its page */
	if (kernel_page_end(k->addr) > p->end)
		p->end = kernel_page_end(k->addr);
}

static void kernel_read_kptr_restrict(struct kernel_state *st, char *out, size_t len)
{
	char *path = kernel_path(st, "sys/kernel/kptr_restrict");
	FILE *f = path ? fopen(path, "re") : NULL;

	snprintf(out, len, "?");
	if (f) {
		if (fgets(out, (int)len, f))
			out[strcspn(out, " \t\r\n")] = '\0';
		if (!*out)
			snprintf(out, len, "?");
		fclose(f);
	}
	free(path);
}

/* what one pass over kallsyms collects besides the snapshot */
struct kernel_kscan {
	struct op_ksyms_text text;
	uint64_t nonzero;
};

/*
 * One kallsyms line of @n bytes (its '\n' included, if any; line[n] is
 * readable and ends the parse). Returns true when it is a valid text symbol
 * line, i.e. belongs in the snapshot.
 */
static bool kernel_kallsyms_line(struct kernel_state *st, struct kernel_kscan *ks, const char *line,
				 size_t n, const char *path)
{
	struct op_ksym_line k;

	st->kallsyms_lines++;
	if (op_ksyms_parse_line(line, &k) || memchr(line, '\0', n)) {
		st->kallsyms_bad++;
		if (st->kallsyms_bad <= KERNEL_MAX_BAD_LOGGED)
			kernel_log(st, OP_LOG_WARN,
				   "%s:%" PRIu64 ": not a kallsyms line (expected "
				   "'ADDRESS TYPE NAME [MODULE]'): skipped",
				   path, st->kallsyms_lines);
		return false;
	}
	if (k.addr)
		ks->nonzero++;
	if (!op_ksyms_is_text(k.type))
		return false;
	st->text_symbols++;
	if (!k.addr)
		return true;
	if (k.module) {
		if (op_ksyms_is_pseudo_module(k.module, k.module_len))
			kernel_add_pseudo(st, &k);
		return true;
	}
	op_ksyms_text_add(&ks->text, &k);
	return true;
}

/*
 * Read <proc>/kallsyms: the kernel text range, pseudo-module islands, and
 * (if @snap) the text symbol lines into the session snapshot. The file is
 * read in large blocks (stdio would read /proc 1 KiB at a time) and runs of
 * consecutive snapshot lines are written straight from the block. A line
 * longer than the block (no valid line is) counts as one malformed line.
 */
static int kernel_load_kallsyms(struct kernel_state *st, struct kernel_out *snap)
{
	struct kernel_kscan ks = { .nonzero = 0 };
	char *path = kernel_path(st, "kallsyms");
	struct kernel_wbuf *w = snap ? snap->w : NULL;
	size_t fill = 0, cap = KERNEL_RBUF;
	bool eof = false, skipping = false;
	int read_err = 0, fd;
	char *buf;

	op_ksyms_text_init(&ks.text);
	if (!path)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kernel_log(st, OP_LOG_WARN,
			   "cannot read %s: %s: kernel samples will be attributed to one kernel "
			   "image from 0x%" PRIx64 " without symbols",
			   path, strerror(errno), KERNEL_HALF_START);
		free(path);
		st->no_addresses = true;
		return 0;
	}
	buf = malloc(cap + 1);
	if (!buf) {
		close(fd);
		free(path);
		return -ENOMEM;
	}
	while (!eof) {
		const char *p, *end, *run = NULL, *nl;
		size_t run_len = 0;

		while (fill < cap) {
			ssize_t r = read(fd, buf + fill, cap - fill);

			if (r < 0 && errno == EINTR)
				continue;
			if (r < 0)
				read_err = errno;
			if (r <= 0) {
				eof = true;
				break;
			}
			fill += (size_t)r;
		}
		buf[fill] = '\0'; /* ends the parse of a last line without '\n' */
		p = buf;
		end = buf + fill;
		if (skipping) { /* the tail of an over-long line */
			nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl) {
				fill = 0;
				continue;
			}
			p = nl + 1;
			skipping = false;
		}
		while (p < end) {
			size_t n;

			nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl && !eof)
				break;
			n = nl ? (size_t)(nl + 1 - p) : (size_t)(end - p);
			if (kernel_kallsyms_line(st, &ks, p, n, path) && w) {
				if (run_len && run + run_len != p) {
					kernel_wput(w, run, run_len);
					run_len = 0;
				}
				if (!run_len)
					run = p;
				run_len += n;
				if (!nl) { /* the last line, without its '\n' */
					kernel_wput(w, run, run_len);
					kernel_wput(w, "\n", 1);
					run_len = 0;
				}
			}
			p += n;
		}
		if (run_len)
			kernel_wput(w, run, run_len);
		if (p == buf && fill == cap) {
			/* no '\n' in a whole block: one malformed line, skip to its end */
			kernel_kallsyms_line(st, &ks, "", 1, path);
			skipping = true;
			fill = 0;
			continue;
		}
		fill = (size_t)(end - p);
		memmove(buf, p, fill);
	}
	free(buf);
	close(fd);
	if (read_err)
		kernel_log(st, OP_LOG_WARN, "reading %s: %s: using what was read", path,
			   strerror(read_err));
	if (st->kallsyms_bad > KERNEL_MAX_BAD_LOGGED)
		kernel_log(st, OP_LOG_WARN, "%s: %" PRIu64 " malformed lines skipped in all", path,
			   st->kallsyms_bad);

	if (st->kallsyms_lines == st->kallsyms_bad) {
		kernel_log(st, OP_LOG_WARN,
			   "%s has no valid symbol line: kernel samples will be attributed to "
			   "one kernel image from 0x%" PRIx64 " without symbols",
			   path, KERNEL_HALF_START);
		st->no_addresses = true;
		free(path);
		return 0;
	}
	if (!ks.nonzero) {
		char kr[16];

		kernel_read_kptr_restrict(st, kr, sizeof(kr));
		kernel_log(st, OP_LOG_WARN,
			   "%s shows zero addresses (kptr_restrict=%s, not root?): kernel "
			   "samples will be attributed to the kernel image without symbols",
			   path, kr);
		st->no_addresses = true;
		free(path);
		return 0;
	}
	if (op_ksyms_text_start(&ks.text, &st->kstart)) {
		/* no _etext: up to the page after the last kernel text symbol */
		st->kend = ks.text.has_etext && ks.text.etext > st->kstart ?
				   ks.text.etext :
				   kernel_page_end(ks.text.hi);
		if (st->kend <= st->kstart)
			st->kend = st->kstart + KERNEL_PAGE;
	} else {
		kernel_log(st, OP_LOG_WARN,
			   "%s has no kernel text symbol (_text, _stext): kernel samples will be "
			   "attributed to one kernel image from 0x%" PRIx64 " without symbols",
			   path, KERNEL_HALF_START);
		st->no_addresses = true;
	}
	free(path);
	return 0;
}

/* ------------------------------------------------------------------ */
/* modules                                                             */
/* ------------------------------------------------------------------ */

static int kernel_mod_cmp(const void *a, const void *b)
{
	const struct kernel_module *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * (Re-)read <proc>/modules into a fresh sorted array. Copies the raw file
 * into @snap when given. A missing file is no error (kernel without
 * modules). Not hot: runs at init and rate-limited on unknown addresses.
 */
static int kernel_load_modules(struct kernel_state *st, struct kernel_out *snap, bool quiet)
{
	struct kernel_module *mods = NULL;
	unsigned nr = 0, cap = 0, i, out;
	char *path = kernel_path(st, "modules");
	char *line = NULL;
	size_t lcap = 0;
	uint64_t lineno = 0;
	ssize_t n;
	FILE *f;

	if (!path)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f) {
		if (errno != ENOENT && !quiet)
			st->host->log(st->ctx, OP_LOG_WARN, "cannot read %s: %s", path,
				      strerror(errno));
		free(path);
		st->nr_mods = 0;
		return 0;
	}
	while ((n = getline(&line, &lcap, f)) > 0) {
		struct op_kmod_line m;

		lineno++;
		if (snap && snap->w)
			kernel_wput(snap->w, line, (size_t)n);
		if (op_kmods_parse_line(line, &m) || memchr(line, '\0', (size_t)n) || !m.size ||
		    m.addr > UINT64_MAX - m.size) {
			st->modules_bad++;
			if (!quiet && st->modules_bad <= KERNEL_MAX_BAD_LOGGED)
				st->host->log(st->ctx, OP_LOG_WARN,
					      "%s:%" PRIu64
					      ": not a modules line (expected 'NAME SIZE "
					      "REFCNT DEPS STATE 0xADDRESS'): skipped",
					      path, lineno);
			continue;
		}
		if (!m.addr)
			continue; /* hidden by kptr_restrict */
		if (nr == cap) {
			unsigned ncap = cap ? cap * 2 : 64;
			struct kernel_module *p = realloc(mods, ncap * sizeof(*mods));

			if (!p)
				break;
			mods = p;
			cap = ncap;
		}
		mods[nr].start = m.addr;
		mods[nr].end = m.addr + m.size;
		kernel_copy_name(mods[nr].name, sizeof(mods[nr].name), m.name, m.name_len);
		mods[nr].cookie = 0;
		nr++;
	}
	fclose(f);
	free(line);
	free(path);

	if (nr)
		qsort(mods, nr, sizeof(*mods), kernel_mod_cmp);
	/* drop overlaps: the binary search needs disjoint ranges */
	for (i = 0, out = 0; i < nr; i++) {
		if (out && mods[i].start < mods[out - 1].end) {
			st->modules_overlap++;
			continue;
		}
		mods[out] = mods[i];
		mods[out].cookie = st->host->cookie_intern(st->ctx, mods[out].name, true);
		out++;
	}
	free(st->mods);
	st->mods = mods;
	st->nr_mods = out;
	st->cap_mods = cap;
	return 0;
}

/* ------------------------------------------------------------------ */
/* resolve (HOT)                                                       */
/* ------------------------------------------------------------------ */

static const struct kernel_module *kernel_find_module(const struct kernel_state *st, uint64_t pc)
{
	unsigned lo = 0, hi = st->nr_mods;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		const struct kernel_module *m = &st->mods[mid];

		if (pc < m->start)
			hi = mid;
		else if (pc >= m->end)
			lo = mid + 1;
		else
			return m;
	}
	return NULL;
}

static void kernel_set_image(struct op_kernel_image *out, op_cookie_t cookie, uint64_t start,
			     uint64_t end)
{
	out->size = sizeof(*out);
	out->cookie = cookie;
	out->start = start;
	out->end = end;
}

/* lookup without side effects on stats; fills the cache on success */
static int kernel_lookup(struct kernel_state *st, uint64_t pc, struct op_kernel_image *out)
{
	const struct kernel_module *m;
	unsigned i;

	if (st->no_addresses) {
		if (pc < KERNEL_HALF_START || pc == UINT64_MAX)
			return -ENOENT;
		kernel_set_image(&st->cache.img, st->kernel_cookie, KERNEL_HALF_START, UINT64_MAX);
		st->cache.lo = KERNEL_HALF_START;
		st->cache.hi = UINT64_MAX;
		st->cache.is_module = false;
		goto found;
	}
	if (pc >= st->kstart && pc < st->kend) {
		kernel_set_image(&st->cache.img, st->kernel_cookie, st->kstart, st->kend);
		st->cache.lo = st->kstart;
		st->cache.hi = st->kend;
		st->cache.is_module = false;
		goto found;
	}
	m = kernel_find_module(st, pc);
	if (m) {
		kernel_set_image(&st->cache.img, m->cookie, m->start, m->end);
		st->cache.lo = m->start;
		st->cache.hi = m->end;
		st->cache.is_module = true;
		goto found;
	}
	for (i = 0; i < st->nr_pseudo; i++) {
		const struct kernel_pseudo *p = &st->pseudo[i];
		uint64_t end;

		if (pc < p->start || pc >= p->end || pc < st->kstart)
			continue;
		/*
		 * Pseudo-module code is kernel code: key = pc - _text, so the
		 * report finds its symbol in the snapshot. The range handed back
		 * must not cover a module (the caller caches [start, end)), so it
		 * stops below the first module above the kernel text; an island
		 * beyond a module gets its own image named after the pseudo-module.
		 */
		end = p->end;
		if (st->nr_mods && st->mods[0].start < end)
			end = st->mods[0].start;
		if (pc < end) {
			kernel_set_image(&st->cache.img, st->kernel_cookie, st->kstart, end);
			st->cache.lo = p->start > st->kend ? p->start : st->kend;
			st->cache.hi = end;
		} else {
			kernel_set_image(&st->cache.img,
					 st->host->cookie_intern(st->ctx, p->name, true), p->start,
					 p->end);
			st->cache.lo = p->start;
			st->cache.hi = p->end;
		}
		st->cache.is_module = false;
		goto found;
	}
	return -ENOENT;
found:
	*out = st->cache.img;
	return 0;
}

static int kernel_resolve(void *priv, uint64_t pc, struct op_kernel_image *out)
{
	struct kernel_state *st = priv;
	uint64_t now;
	int rc;

	if (__builtin_expect(st->ks_pending, 0))
		kernel_join(st);
	if (pc - st->cache.lo < st->cache.hi - st->cache.lo) {
		*out = st->cache.img;
		goto hit;
	}
	rc = kernel_lookup(st, pc, out);
	if (!rc)
		goto hit;
	/* an address nothing covers: maybe a module loaded since the last read */
	now = st->now_ns(st->now_arg);
	if (now - st->last_reread_ns >= KERNEL_REREAD_NS) {
		st->last_reread_ns = now;
		st->rereads++;
		st->cache.lo = st->cache.hi = 0;
		kernel_load_modules(st, NULL, true);
		rc = kernel_lookup(st, pc, out);
		if (!rc)
			goto hit;
	} else {
		st->rereads_skipped++;
	}
	st->unresolved++;
	return -ENOENT;
hit:
	if (st->cache.is_module)
		st->module_lookups++;
	else
		st->kernel_lookups++;
	return 0;
}

/* ------------------------------------------------------------------ */
/* stats, args, life cycle                                             */
/* ------------------------------------------------------------------ */

static void kernel_print_stats(void *priv, const struct op_stats_sink *sink)
{
	struct kernel_state *st = priv;
	char line[200];

	kernel_join(st);
	if (sink->text) {
		if (st->no_addresses)
			snprintf(line, sizeof(line),
				 "kernel image %s: no kallsyms addresses, one image from 0x%" PRIx64,
				 st->vmlinux ? st->vmlinux : "vmlinux", KERNEL_HALF_START);
		else
			snprintf(line, sizeof(line),
				 "kernel image %s: 0x%" PRIx64 "-0x%" PRIx64 ", %u modules",
				 st->vmlinux ? st->vmlinux : "vmlinux", st->kstart, st->kend,
				 st->nr_mods);
		sink->text(sink, line);
	}
	if (!sink->counter)
		return;
	sink->counter(sink, "kernel_lookups", st->kernel_lookups);
	sink->counter(sink, "module_lookups", st->module_lookups);
	sink->counter(sink, "unresolved", st->unresolved);
	sink->counter(sink, "modules_rereads", st->rereads);
	sink->counter(sink, "modules_rereads_skipped", st->rereads_skipped);
	sink->counter(sink, "modules", st->nr_mods);
	sink->counter(sink, "modules_bad_lines", st->modules_bad);
	sink->counter(sink, "modules_overlapping", st->modules_overlap);
	sink->counter(sink, "kallsyms_lines", st->kallsyms_lines);
	sink->counter(sink, "kallsyms_bad_lines", st->kallsyms_bad);
	sink->counter(sink, "kallsyms_text_symbols", st->text_symbols);
}

static const struct op_stats_ops kernel_stats_ops = {
	.size = sizeof(struct op_stats_ops),
	.print_stats = kernel_print_stats,
};

static const struct op_kernel_ops kernel_ops = {
	.size = sizeof(struct op_kernel_ops),
	.resolve = kernel_resolve,
};

static char *kernel_strdup(const char *s, size_t len)
{
	char *p = malloc(len + 1);

	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

static int kernel_parse_args(struct kernel_state *st, const char *args)
{
	const char *p = args;

	while (p && *p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		char **dst = NULL;

		if (eq && eq - p == 7 && !memcmp(p, "vmlinux", 7))
			dst = &st->vmlinux;
		else if (eq && eq - p == 4 && !memcmp(p, "proc", 4))
			dst = &st->proc_root;
		if (!dst || eq + 1 == p + len) {
			st->host->log(st->ctx, OP_LOG_ERR,
				      "bad argument '%.*s' in --ext-feature=kernel:%s: expected "
				      "vmlinux=PATH or proc=DIR",
				      (int)len, p, args);
			return -EINVAL;
		}
		free(*dst);
		*dst = kernel_strdup(eq + 1, (size_t)(p + len - eq - 1));
		if (!*dst)
			return -ENOMEM;
		p = end ? end + 1 : NULL;
	}
	return 0;
}

/*
 * Every live state, for the fork handler (pthread_atfork passes nothing);
 * changed on the daemon's thread only, at init and at free.
 */
static struct kernel_state *kernel_live;

/* the plugin's user data: the host calls it after ext_deinit or a failed init */
static void kernel_free(void *data)
{
	struct kernel_state *st = data, **pp;

	if (!st)
		return;
	for (pp = &kernel_live; *pp; pp = &(*pp)->next_live)
		if (*pp == st) {
			*pp = st->next_live;
			break;
		}
	kernel_join(st);
	free(st->mods);
	free(st->proc_root);
	free(st->vmlinux);
	free(st);
}

/* the INFO line that says what the kernel image is (after the kallsyms pass) */
static void kernel_log_image(struct kernel_state *st)
{
	if (st->no_addresses)
		kernel_log(st, OP_LOG_INFO, "kernel image %s: 0x%" PRIx64 " and up, no symbols",
			   st->vmlinux ? st->vmlinux : "vmlinux", KERNEL_HALF_START);
	else
		kernel_log(st, OP_LOG_INFO,
			   "kernel image %s: 0x%" PRIx64 "-0x%" PRIx64 ", %u modules, %" PRIu64
			   " text symbols%s",
			   st->vmlinux ? st->vmlinux : "vmlinux", st->kstart, st->kend, st->nr_mods,
			   st->text_symbols,
			   !st->snapshot_written ? "" :
			   st->snapshot_shared   ? " saved in the session (linked to the same "
						   "kernel's earlier copy)" :
						   " saved in the session");
}

/* read kallsyms, write and commit its snapshot (st->ks_out, if any) */
static void kernel_ks_pass(struct kernel_state *st)
{
	struct kernel_out *ks = st->ks_out;
	bool ks_open = ks && ks->w;
	int rc;

	rc = kernel_load_kallsyms(st, ks);
	if (rc) {
		/* out of memory: resolve without symbols rather than fail later */
		kernel_log(st, OP_LOG_ERR,
			   "reading kallsyms: %s: kernel samples will be attributed "
			   "to one kernel image from 0x%" PRIx64 " without symbols",
			   strerror(-rc), KERNEL_HALF_START);
		st->no_addresses = true;
	}
	if (ks)
		st->snapshot_written = !kernel_out_end(st, ks, !rc) && ks_open && !rc;
}

static void *kernel_ks_thread(void *arg)
{
	kernel_ks_pass(arg);
	return NULL;
}

/*
 * The pass ran (or runs) in the process that forked us: start over here,
 * into a temporary of our own. The owner's temporary is removed only if the
 * owner is gone (--daemonize: it exits at once, maybe before its thread
 * renamed the file); a live owner still renames it.
 */
static void kernel_ks_redo(struct kernel_state *st)
{
	struct kernel_out *ks = st->ks_out;
	char owner_tmp[sizeof(ks->tmp)] = "";

	st->deferring = false;
	st->nr_deferred = st->deferred_dropped = 0;
	st->kallsyms_lines = st->kallsyms_bad = st->text_symbols = 0;
	st->nr_pseudo = 0;
	st->no_addresses = false;
	st->kstart = st->kend = 0;
	st->snapshot_written = st->snapshot_shared = false;
	if (ks && ks->w) {
		/* the owner's file description is shared: only drop our reference */
		close(ks->w->fd);
		free(ks->w);
		ks->w = NULL;
		memcpy(owner_tmp, ks->tmp, sizeof(owner_tmp));
	}
	if (ks && st->ks_dirfd >= 0) {
		kernel_out_begin(st, ks, st->ks_dirfd, OP_SESSION_KALLSYMS);
		ks->samples_fd = st->ks_samples_fd;
	}
	kernel_ks_pass(st);
	if (owner_tmp[0] && kill(st->ks_owner, 0) && errno == ESRCH)
		unlinkat(st->ks_dirfd, owner_tmp, 0);
}

/* wait for the kallsyms pass, log what it said; no-op when there is none */
static void kernel_join(struct kernel_state *st)
{
	unsigned i;

	if (!st->ks_pending)
		return;
	st->ks_pending = false;
	if (st->ks_forked)
		kernel_ks_redo(st);
	else if (st->ks_threaded)
		pthread_join(st->ks_thread, NULL);
	st->ks_threaded = st->ks_forked = false;
	st->deferring = false;
	for (i = 0; i < st->nr_deferred; i++)
		st->host->log(st->ctx, (enum op_log_level)st->deferred[i].level, "%s",
			      st->deferred[i].text);
	if (st->deferred_dropped)
		st->host->log(st->ctx, OP_LOG_WARN, "kallsyms: %u more messages not shown",
			      st->deferred_dropped);
	st->nr_deferred = st->deferred_dropped = 0;
	if (st->ks_dirfd >= 0)
		close(st->ks_dirfd);
	st->ks_dirfd = -1;
	if (st->ks_samples_fd >= 0)
		close(st->ks_samples_fd);
	st->ks_samples_fd = -1;
	free(st->ks_out);
	st->ks_out = NULL;
	kernel_log_image(st);
}

void kernel_wait(struct kernel_state *st)
{
	kernel_join(st);
}

/*
 * In the child of a fork (--daemonize, the launched command) the helper
 * thread does not exist: the pass is redone there if it is ever joined.
 * The daemon forks from its main thread, which owns ks_pending.
 */
static void kernel_atfork_child(void)
{
	struct kernel_state *st;

	for (st = kernel_live; st; st = st->next_live)
		if (st->ks_pending)
			st->ks_forked = true;
}

static pthread_once_t kernel_atfork_once = PTHREAD_ONCE_INIT;

static void kernel_atfork_register(void)
{
	pthread_atfork(NULL, NULL, kernel_atfork_child);
}

/*
 * The modules copy now; the kallsyms pass on a helper thread (inline if
 * none can be started), joined at the first kernel address to resolve, the
 * statistics, or deinit. Returns 0 or -ENOMEM.
 */
static int kernel_snapshot_and_load(struct kernel_state *st)
{
	const char *session = st->host->session_dir ? st->host->session_dir(st->ctx) : NULL;
	struct kernel_out km = { .dirfd = -1 }, *ks;
	int dirfd = -1, rc;

	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	ks->dirfd = -1;
	st->ks_dirfd = -1;
	st->ks_samples_fd = -1;
	if (session && *session) {
		dirfd = kernel_open_stats_dir(st, session, &st->ks_samples_fd);
		if (dirfd >= 0) {
			kernel_out_begin(st, ks, dirfd, OP_SESSION_KALLSYMS);
			ks->samples_fd = st->ks_samples_fd;
			kernel_out_begin(st, &km, dirfd, OP_SESSION_MODULES);
		}
	} else {
		st->host->log(st->ctx, OP_LOG_INFO,
			      "no session directory: no kernel symbol snapshot");
	}
	rc = kernel_load_modules(st, &km, false);
	if (dirfd >= 0) {
		char *mpath = kernel_path(st, "modules");
		bool have_modules = mpath && !access(mpath, R_OK);

		free(mpath);
		/* no /proc/modules: no modules file (a stale one would mislead) */
		kernel_out_end(st, &km, !rc && have_modules);
		if (!have_modules)
			unlinkat(dirfd, OP_SESSION_MODULES, 0);
	}
	if (rc) {
		kernel_out_end(st, ks, false);
		free(ks);
		if (dirfd >= 0)
			close(dirfd);
		if (st->ks_samples_fd >= 0)
			close(st->ks_samples_fd);
		st->ks_samples_fd = -1;
		return rc;
	}
	st->ks_out = dirfd >= 0 ? ks : NULL;
	if (!st->ks_out)
		free(ks);
	st->ks_dirfd = dirfd;
	pthread_once(&kernel_atfork_once, kernel_atfork_register);
	st->deferring = true;
	st->ks_owner = getpid();
	st->ks_threaded = !pthread_create(&st->ks_thread, NULL, kernel_ks_thread, st);
	st->ks_pending = true;
	if (!st->ks_threaded) {
		st->deferring = false;
		kernel_ks_pass(st);
		kernel_join(st); /* logs and cleans up */
	}
	return 0;
}

static int kernel_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct kernel_state *st;
	const char *s = NULL;
	bool found;
	int rc;

	st = calloc(1, sizeof(*st));
	if (!st) {
		host->log(ctx, OP_LOG_ERR, "out of memory");
		return -ENOMEM;
	}
	rc = host->set_user_data(ctx, &(struct op_user_data){ .size = sizeof(struct op_user_data),
							      .data = st,
							      .free_func = kernel_free });
	if (rc) {
		free(st);
		return rc;
	}
	st->ks_dirfd = st->ks_samples_fd = -1;
	st->next_live = kernel_live;
	kernel_live = st;
	st->ctx = ctx;
	st->host = host;
	kernel_set_clock(st, NULL, NULL);

	rc = pu_config_string(host, ctx, "vmlinux", &s, &found);
	if (rc)
		return rc;
	if (found && s && *s) {
		st->vmlinux = kernel_strdup(s, strlen(s));
		if (!st->vmlinux) {
			rc = -ENOMEM;
			return rc;
		}
	}
	rc = kernel_parse_args(st, args);
	if (rc)
		return rc;
	if (!st->proc_root) {
		s = host->proc_root ? host->proc_root(ctx) : NULL;
		st->proc_root = kernel_strdup(s && *s ? s : "/proc", strlen(s && *s ? s : "/proc"));
		if (!st->proc_root) {
			rc = -ENOMEM;
			return rc;
		}
	}
	if (st->vmlinux && access(st->vmlinux, R_OK))
		host->log(ctx, OP_LOG_WARN,
			  "vmlinux %s: %s: the kernel image keeps this name, but reports will "
			  "need the file (or the kallsyms snapshot) for symbols",
			  st->vmlinux, strerror(errno));
	st->kernel_cookie = host->cookie_intern(ctx, st->vmlinux ? st->vmlinux : "vmlinux", true);
	if (!st->kernel_cookie) {
		host->log(ctx, OP_LOG_ERR, "cannot intern the kernel image name");
		rc = -ENOMEM;
		return rc;
	}

	rc = kernel_snapshot_and_load(st);
	if (rc)
		return rc;
	st->last_reread_ns = st->now_ns(st->now_arg);

	rc = host->register_kernel(ctx, &kernel_ops, st);
	if (rc) {
		host->log(ctx, OP_LOG_ERR, "registering the kernel resolver failed: %s (%s)",
			  strerror(-rc),
			  rc == -EEXIST ? "another plugin resolves kernel images" : "host refused");
		return rc;
	}
	rc = host->register_stats(ctx, &kernel_stats_ops, st);
	if (rc)
		return rc;
	return 0;
}

OP_EXT_DEFINE(.name = "kernel", .version = "1.0",
	      .summary = "kernel and module images from /proc/kallsyms and /proc/modules, symbol snapshot",
	      .ext_init = kernel_init);
