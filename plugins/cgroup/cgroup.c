/*
 * cgroup.c - the "cgroup" plugin: once per process (its exec, its fork, or
 * the record synthesized for a process that ran before the start) reads
 * /proc/PID/cgroup and /proc/PID/stat, derives the container ID and systemd
 * unit the cgroup path names, and appends a line to the session's index
 * stats/cgroups (format: lib/op_cgroups.h). The exports turn it into pprof
 * labels and opreport selects with cgroup:GLOB. Nothing per sample.
 *
 * issue 20: with an oprofiled of SDK 1.3 the plugin also provides
 * --separate=cgroup: each cgroup it reads is handed to the core as the
 * process's split key (host->set_split_key), which the core keeps with the
 * process (a fork inherits it) and puts in the sample-file names, so the
 * files themselves are split by cgroup and exact even for a reused pid.
 * SPDX-License-Identifier: MIT
 *
 * A forked child starts in its parent's cgroup: its line is derived from
 * its parent's without reading /proc, and its exec reads /proc/PID/cgroup
 * once (a container runtime moves the child before it execs).
 *
 * Arguments: --ext-feature=cgroup[:max_procs=N]; config
 * plugins.cgroup.max_procs. N (16..1048576, default 65536) bounds the
 * processes remembered at once (the live ones: an exit forgets one); past
 * it a process is still written to the index but not remembered, so a
 * rotation does not carry it into the next session's index (counted).
 *
 * Sessions: each session's index names the processes it saw. On a rotation
 * or save (SDK 1.2 session hook) the new samples/current/stats/cgroups
 * starts with every live process remembered, so a long-running process is
 * in every rotated session's index.
 *
 * Trust: /proc/PID files belong to the process's user, so they are not
 * checked by owner but by what they are: regular files on procfs
 * (fstatfs), read once, at most OP_CGROUP_PROC_MAX bytes, parsed strictly;
 * a --proc-root other than /proc (tests) must be root's (lib/op_trust).
 * The index is created below the session with O_NOFOLLOW and checked with
 * fstat before a byte is written. A pid reused between the record and the
 * read (its start time after the record's time) is skipped and counted.
 *
 * Cost per new process (issue 20, a host starting ~20 a second): a fork
 * costs no system call (its line is the parent's, buffered); an exec
 * costs openat/read/close of /proc/PID/cgroup (one openat if the process
 * is gone already). The index lines are buffered (CG_BUF_SIZE) and written
 * in one write() when the buffer fills, when the oldest line is
 * CG_FLUSH_NS old (checked at the next process event, by the event's
 * time: no clock read), and at every dump, statistics print (a rotation
 * prints them before it moves the session), rotation and stop: the index
 * on disk is complete whenever a consumer reads it (the exports, pull and
 * push take a dump first).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "oprofile_sdk.h"
#include "op_cgroups.h"
#include "op_session_layout.h"
#include "op_trust.h"
#include "../common/plugin_util.h"

#define CG_PROC_SUPER_MAGIC 0x9fa0 /* linux/magic.h PROC_SUPER_MAGIC */
#define CG_BUCKETS 4096
#define CG_DEFAULT_MAX_PROCS 65536
#define CG_MIN_MAX_PROCS 16
#define CG_MAX_MAX_PROCS (1u << 20)
#define CG_LINE_MAX (3 * (OP_CGROUP_PATH_MAX + OP_CGROUP_UNIT_MAX) + 2 * OP_CGROUP_ID_MAX + 64)
/* issue 20: every cgroup path the index holds is a valid split key */
_Static_assert(OP_CGROUP_PATH_MAX <= OP_SPLIT_KEY_MAX, "a cgroup path fits a split key");
/* a pid whose process started this long after the record is another process */
#define CG_REUSE_SLACK_NS UINT64_C(1000000000)
/* the index lines waiting for one write(): ~900 lines of a typical 71 bytes */
#define CG_BUF_SIZE 65536
/* a line waits at most this long (perf clock) once another process event comes */
#define CG_FLUSH_NS UINT64_C(10000000000)

struct cg_proc {
	struct cg_proc *next;
	uint32_t tgid;
	uint64_t start_ns;
	size_t len;
	char line[]; /* its index line, '\n' included */
};

struct cg_state {
	op_ext_t *ctx;
	const struct op_host *host;
	const char *proc_root;
	bool real_proc; /* proc_root is /proc: checked procfs once, not owners */
	int proc_fd;    /* proc_root, opened once: every /proc read is relative to it */
	uint64_t boot_minus_mono_ns;
	uint64_t ns_per_tick;
	unsigned max_procs;
	int fd; /* stats/cgroups of samples/current, -1: not open */
	bool open_failed;
	struct cg_proc *buckets[CG_BUCKETS];
	unsigned nr_procs;
	struct op_cgroup_entry ent; /* scratch: too large for the stack of a hook */
	char line[CG_LINE_MAX];
	/* index lines not yet written (for samples/current's index) */
	size_t buf_len;
	uint64_t buf_since; /* perf time of the first buffered line's event; 0: unknown */
	char buf[CG_BUF_SIZE];
	/* stats */
	uint64_t reads, inherited, written, carried, gone, reused, bad, unremembered, write_errors;
	uint64_t flushes; /* write() calls of buffered lines */
	/* --- issue 20: per-process split key --- */
	bool split; /* SDK 1.3: we provide --separate=cgroup */
	uint64_t split_errors;
};

static uint64_t cg_clock(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static struct cg_proc **cg_slot(struct cg_state *st, uint32_t tgid)
{
	struct cg_proc **pp = &st->buckets[(tgid * 2654435761u) >> 20 & (CG_BUCKETS - 1)];

	while (*pp && (*pp)->tgid != tgid)
		pp = &(*pp)->next;
	return pp;
}

static void cg_forget(struct cg_state *st, uint32_t tgid)
{
	struct cg_proc **pp = cg_slot(st, tgid), *p = *pp;

	if (!p)
		return;
	*pp = p->next;
	free(p);
	st->nr_procs--;
}

/* ------------------------------------------------------------------ */
/* the index file                                                      */
/* ------------------------------------------------------------------ */

/* open (creating) DIR/stats/cgroups for appending, checked; -errno */
static int cg_open_index(struct cg_state *st, const char *dir)
{
	struct op_trust t = op_trust_for(geteuid(), geteuid());
	int dfd, sfd, fd;
	struct stat sst;
	char why[256];

	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (mkdirat(dfd, OP_SESSION_STATS, 0755) && errno != EEXIST) {
		int e = errno;

		close(dfd);
		return -e;
	}
	sfd = op_trust_openat(&t, dfd, OP_SESSION_STATS, O_RDONLY | O_DIRECTORY, S_IFDIR,
			      "stats directory", dir, &sst, why, sizeof(why));
	close(dfd);
	if (sfd < 0) {
		st->host->log(st->ctx, OP_LOG_ERR, "%s", why);
		return sfd;
	}
	/* as readable as the stats directory: 0644, or 0600 in a root's private session */
	fd = op_trust_createat(&t, sfd, OP_SESSION_CGROUPS, O_WRONLY | O_CREAT | O_APPEND,
			       sst.st_mode & 0666, S_IFREG, "cgroup index", dir, &sst, why,
			       sizeof(why));
	close(sfd);
	if (fd < 0) {
		st->host->log(st->ctx, OP_LOG_ERR, "%s", why);
		return fd;
	}
	if (sst.st_size == 0 && write(fd, OP_CGROUPS_HEADER "\n", sizeof(OP_CGROUPS_HEADER)) !=
					(ssize_t)sizeof(OP_CGROUPS_HEADER)) {
		int e = errno ? errno : EIO;

		close(fd);
		return -e;
	}
	return fd;
}

static int cg_current(struct cg_state *st)
{
	const char *s;
	char dir[4096];
	int n;

	if (st->fd >= 0 || st->open_failed)
		return st->fd;
	s = st->host->session_dir ? st->host->session_dir(st->ctx) : NULL;
	if (!s || !*s)
		return -ENOENT;
	n = snprintf(dir, sizeof(dir), "%s/" OP_SESSION_CURRENT_PATH, s);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return -ENAMETOOLONG;
	st->fd = cg_open_index(st, dir);
	if (st->fd < 0) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "%s/stats/%s: cannot write the cgroup index: %s (no cgroup labels "
			      "in this session)",
			      dir, OP_SESSION_CGROUPS, strerror(-st->fd));
		st->open_failed = true;
	}
	return st->fd;
}

/* the buffered lines into the index (the open one: at a rotation still the old session's) */
static void cg_flush(struct cg_state *st)
{
	size_t off = 0, lines = 0;
	ssize_t n;

	if (!st->buf_len)
		return;
	for (n = 0; (size_t)n < st->buf_len; n++)
		lines += st->buf[n] == '\n';
	if (cg_current(st) >= 0) {
		st->flushes++;
		while (off < st->buf_len) {
			n = write(st->fd, st->buf + off, st->buf_len - off);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			off += (size_t)n;
		}
		if (off == st->buf_len)
			st->written += lines;
		else
			st->write_errors += lines;
	}
	st->buf_len = 0;
	st->buf_since = 0;
}

/* a line for samples/current's index, buffered; @now: its event's perf time (0: unknown) */
static void cg_write(struct cg_state *st, const char *line, size_t len, uint64_t now)
{
	if (st->buf_len + len > sizeof(st->buf))
		cg_flush(st);
	if (len > sizeof(st->buf)) { /* cannot be: CG_LINE_MAX is smaller */
		st->write_errors++;
		return;
	}
	if (!st->buf_len)
		st->buf_since = now;
	memcpy(st->buf + st->buf_len, line, len);
	st->buf_len += len;
	if (now && st->buf_since && now - st->buf_since >= CG_FLUSH_NS)
		cg_flush(st);
}

/* ------------------------------------------------------------------ */
/* /proc                                                               */
/* ------------------------------------------------------------------ */

/*
 * read <proc_root>/<pid>/<name> into @buf; bytes or -errno.
 *
 * On the real /proc the file is not checked per read (that was fstat and
 * fstatfs for every exec): cg_open_proc() checked once that st->proc_fd is
 * a procfs, and the lookup starts at that fd with O_NOFOLLOW, so the file
 * is procfs's unless something is mounted over /proc/PID/NAME in the
 * daemon's mount namespace, which only root can do (a process's own mount
 * namespace is not the daemon's). procfs's PID/NAME files are regular
 * files; O_NONBLOCK still keeps a FIFO from blocking us. Another root
 * (tests) is checked per file as before: root's, regular, not writable by
 * others.
 *
 * One read: /proc/PID/cgroup and stat are seq_files, whose read() fills
 * the buffer up to its size or the end of the file, as a regular file's
 * does; so a short read is the end (a read that fills the buffer reads on).
 */
static ssize_t cg_read_proc(struct cg_state *st, uint32_t pid, const char *name, char *buf,
			    size_t len)
{
	char path[64];
	struct stat sb;
	ssize_t n, got = 0;
	int fd;

	snprintf(path, sizeof(path), "%" PRIu32 "/%s", pid, name);
	fd = openat(st->proc_fd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!st->real_proc && (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_uid != 0 ||
			       (sb.st_mode & (S_IWGRP | S_IWOTH)))) {
		close(fd);
		return -EPERM;
	}
	while ((size_t)got < len - 1) {
		size_t want = len - 1 - (size_t)got;

		n = read(fd, buf + got, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += n;
		if ((size_t)n < want)
			break; /* the end: see above */
	}
	close(fd);
	buf[got] = '\0';
	return got;
}

/* st->proc_fd: the proc root opened once; the real /proc must be a procfs */
static int cg_open_proc(struct cg_state *st)
{
	struct statfs sfs;
	struct stat sb;

	st->proc_fd = open(st->proc_root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (st->proc_fd < 0) {
		int e = errno;

		st->host->log(st->ctx, OP_LOG_ERR, "%s: cannot open the proc root: %s",
			      st->proc_root, strerror(e));
		return -e;
	}
	if (st->real_proc ? fstatfs(st->proc_fd, &sfs) || sfs.f_type != CG_PROC_SUPER_MAGIC :
			    fstat(st->proc_fd, &sb) || sb.st_uid != 0 ||
				    (sb.st_mode & (S_IWGRP | S_IWOTH))) {
		st->host->log(st->ctx, OP_LOG_ERR, "%s: not %s: the cgroup plugin does not read it",
			      st->proc_root,
			      st->real_proc ? "a procfs" : "root's and written only by root");
		return -EPERM;
	}
	return 0;
}

/* field 22 of /proc/PID/stat (clock ticks after boot) in ns; -errno */
static int cg_start_ns(struct cg_state *st, uint32_t pid, uint64_t *ns)
{
	char buf[1024], *p, *end;
	unsigned long long v;
	ssize_t n = cg_read_proc(st, pid, "stat", buf, sizeof(buf));
	int field;

	if (n < 0)
		return (int)n;
	/* the command name may hold spaces and ')': field 3 starts after the last ')' */
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	p++;
	for (field = 3; field < 22; field++) {
		while (*p == ' ')
			p++;
		while (*p && *p != ' ')
			p++;
	}
	while (*p == ' ')
		p++;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || end == p || (*end != ' ' && *end != '\n' && *end))
		return -EINVAL;
	*ns = v * st->ns_per_tick;
	return 0;
}

/* ------------------------------------------------------------------ */
/* the hooks                                                           */
/* ------------------------------------------------------------------ */

/* st->line (@len bytes) as @tgid's: written and remembered unless the index has it */
static void cg_record(struct cg_state *st, uint32_t tgid, uint64_t start, size_t len, uint64_t now)
{
	struct cg_proc **pp = cg_slot(st, tgid), *p;

	if (*pp && (*pp)->start_ns == start && (*pp)->len == len &&
	    !memcmp((*pp)->line, st->line, len))
		return; /* an exec in the same cgroup: the index has it */
	cg_write(st, st->line, len, now);
	if (*pp)
		cg_forget(st, tgid);
	if (st->nr_procs >= st->max_procs) {
		st->unremembered++;
		return;
	}
	p = malloc(sizeof(*p) + len);
	if (!p) {
		st->unremembered++;
		return;
	}
	p->tgid = tgid;
	p->start_ns = start;
	p->len = len;
	memcpy(p->line, st->line, len);
	pp = cg_slot(st, tgid);
	p->next = NULL;
	*pp = p;
	st->nr_procs++;
}

/* read the process's cgroup (and, unless known, its start time) from /proc */
static void cg_learn(struct cg_state *st, const struct op_proc_event *e)
{
	struct op_cgroup_entry *ent = &st->ent;
	struct cg_proc *known = *cg_slot(st, e->pid);
	char buf[OP_CGROUP_PROC_MAX];
	uint64_t start = 0;
	ssize_t n;
	int len, rc;

	/* a rename (COMM, not an exec) of a process already known: nothing new */
	if (known && e->kind == OP_PROC_COMM)
		return;
	st->reads++;
	if (known && e->kind == OP_PROC_EXEC) {
		/* known since its fork: an exec keeps the process, and its start */
		start = known->start_ns;
	} else {
		rc = cg_start_ns(st, e->pid, &start);
		if (rc == -ENOENT || rc == -ESRCH) {
			st->gone++; /* exited before buffer sync got to its record */
			return;
		}
		if (rc) {
			st->bad++;
			return;
		}
		if (e->time && start > e->time + st->boot_minus_mono_ns + CG_REUSE_SLACK_NS) {
			st->reused++;
			return;
		}
	}
	n = cg_read_proc(st, e->pid, "cgroup", buf, sizeof(buf));
	if (n == -ENOENT || n == -ESRCH) {
		st->gone++;
		return;
	}
	memset(ent, 0, sizeof(*ent));
	if (n < 0 || op_cgroup_from_proc(buf, (size_t)n, ent->cgroup, sizeof(ent->cgroup))) {
		st->bad++;
		return;
	}
	ent->tgid = e->pid;
	ent->start_ns = start;
	/* issue 20: the core keeps it with the process (a fork inherits it there too) */
	if (st->split && st->host->set_split_key(st->ctx, e->pid, ent->cgroup))
		st->split_errors++;
	op_cgroup_ids(ent->cgroup, ent);
	len = op_cgroup_format(ent, st->line, sizeof(st->line));
	if (len < 0) {
		st->bad++;
		return;
	}
	cg_record(st, e->pid, start, (size_t)len, e->time);
}

/*
 * A new process starts in its parent's cgroup: when the parent is known the
 * child's line is the parent's, with the child's tgid and start (the fork's
 * time), and /proc is not read. A child moved before it execs (a container
 * runtime, systemd-run) is read again at its exec.
 */
static void cg_fork(struct cg_state *st, const struct op_proc_event *e)
{
	struct cg_proc *parent = *cg_slot(st, e->ppid);
	const char *fields;
	uint64_t start;
	int n;

	if (!parent || !e->time) {
		cg_learn(st, e);
		return;
	}
	/* the parent's line after "tgid start ": cgroup, container, unit */
	fields = memchr(parent->line, ' ', parent->len);
	fields = fields ? memchr(fields + 1, ' ', parent->len - (size_t)(fields + 1 - parent->line)) :
			  NULL;
	if (!fields) {
		cg_learn(st, e);
		return;
	}
	fields++;
	start = e->time + st->boot_minus_mono_ns;
	n = snprintf(st->line, sizeof(st->line), "%" PRIu32 " %" PRIu64 " %.*s", e->pid, start,
		     (int)(parent->len - (size_t)(fields - parent->line)), fields);
	if (n < 0 || (size_t)n >= sizeof(st->line)) {
		st->bad++;
		return;
	}
	st->inherited++;
	cg_record(st, e->pid, start, (size_t)n, e->time);
}

static int cg_on_proc(void *priv, const struct op_proc_event *e)
{
	struct cg_state *st = priv;

	/* processes only: a thread shares its process's cgroup (v2) */
	if (e->pid != e->tid)
		return 0;
	switch (e->kind) {
	case OP_PROC_EXEC:
	case OP_PROC_COMM:
		cg_learn(st, e);
		break;
	case OP_PROC_FORK:
		if (e->pid != e->ppid)
			cg_fork(st, e);
		break;
	case OP_PROC_EXIT:
		cg_forget(st, e->pid);
		break;
	default:
		break;
	}
	return 0;
}

static int cg_on_session(void *priv, const struct op_session_event *e)
{
	struct cg_state *st = priv;
	uint64_t written;
	size_t i;

	/*
	 * every line so far into the index of the session it belongs to: at a
	 * rotation the old one's (the open fd follows the moved file; not open
	 * yet, all lines were buffered: open it under its new name)
	 */
	if (e->kind == OP_SESSION_ROTATED && st->buf_len && st->fd < 0 && !st->open_failed &&
	    e->prev_dir) {
		st->fd = cg_open_index(st, e->prev_dir);
		st->open_failed = st->fd < 0;
	}
	cg_flush(st);
	if (e->kind == OP_SESSION_ROTATED || e->kind == OP_SESSION_STOP) {
		if (st->fd >= 0)
			close(st->fd);
		st->fd = -1;
		st->open_failed = false;
	}
	if (e->kind != OP_SESSION_ROTATED || !e->dir)
		return 0;
	/* the new session's index starts with every live process */
	written = st->written;
	st->fd = cg_open_index(st, e->dir);
	if (st->fd < 0) {
		st->open_failed = true;
		return st->fd;
	}
	for (i = 0; i < CG_BUCKETS; i++) {
		struct cg_proc *p;

		for (p = st->buckets[i]; p; p = p->next) {
			cg_write(st, p->line, p->len, 0);
			st->carried++;
		}
	}
	cg_flush(st);
	/* lines_written counts new processes' lines (the buffer held only carried ones) */
	st->written = written;
	return 0;
}

static void cg_print_stats(void *priv, const struct op_stats_sink *sink)
{
	struct cg_state *st = priv;
	char line[200];

	/*
	 * the daemon prints statistics at dumps and before a rotation moves
	 * samples/current: the index there is complete then
	 */
	cg_flush(st);
	snprintf(line, sizeof(line),
		 "%u processes remembered, %" PRIu64 " index lines written (+%" PRIu64
		 " carried into rotated sessions)",
		 st->nr_procs, st->written, st->carried);
	if (sink->text)
		sink->text(sink, line);
	if (!sink->counter)
		return;
	sink->counter(sink, "proc_reads", st->reads);
	sink->counter(sink, "inherited_at_fork", st->inherited);
	sink->counter(sink, "lines_written", st->written);
	sink->counter(sink, "lines_carried", st->carried);
	sink->counter(sink, "gone_before_read", st->gone);
	sink->counter(sink, "pid_reused", st->reused);
	sink->counter(sink, "unreadable", st->bad);
	sink->counter(sink, "not_remembered", st->unremembered);
	sink->counter(sink, "write_errors", st->write_errors);
	sink->counter(sink, "index_writes", st->flushes);
	sink->counter(sink, "split_key_errors", st->split_errors); /* issue 20 */
}

static const struct op_stats_ops cg_stats_ops = {
	.size = sizeof(struct op_stats_ops),
	.print_stats = cg_print_stats,
};

static void cg_free(void *data)
{
	struct cg_state *st = data;
	size_t i;

	if (!st)
		return;
	cg_flush(st); /* a plugin unloaded without STOP: nothing seen is lost */
	if (st->fd >= 0)
		close(st->fd);
	if (st->proc_fd >= 0)
		close(st->proc_fd);
	for (i = 0; i < CG_BUCKETS; i++) {
		while (st->buckets[i]) {
			struct cg_proc *p = st->buckets[i];

			st->buckets[i] = p->next;
			free(p);
		}
	}
	free(st);
}

static int cg_set_max(struct cg_state *st, uint64_t v, bool ok, const char *text, const char *where)
{
	if (!ok || v < CG_MIN_MAX_PROCS || v > CG_MAX_MAX_PROCS) {
		st->host->log(st->ctx, OP_LOG_ERR, "bad max_procs '%s' in %s: expected %u..%u",
			      text, where, CG_MIN_MAX_PROCS, CG_MAX_MAX_PROCS);
		return -EINVAL;
	}
	st->max_procs = (unsigned)v;
	return 0;
}

static int cg_parse(struct cg_state *st, const char *args)
{
	int64_t cfg = 0;
	bool has = false;
	char text[32];
	uint64_t v = 0;
	bool ok;
	int rc;

	rc = pu_config_int64(st->host, st->ctx, "max_procs", &cfg, &has);
	if (rc)
		return rc;
	if (has) {
		snprintf(text, sizeof(text), "%" PRId64, cfg);
		rc = cg_set_max(st, (uint64_t)cfg, cfg > 0, text, "config plugins.cgroup.max_procs");
		if (rc)
			return rc;
	}
	if (!args || !*args)
		return 0;
	if (strncmp(args, "max_procs=", 10)) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "unknown argument '%s' in --ext-feature=cgroup:%s: expected max_procs=N",
			      args, args);
		return -EINVAL;
	}
	ok = pu_parse_dec_u64(args + 10, &v);
	return cg_set_max(st, v, ok, args + 10, "--ext-feature=cgroup:max_procs=N");
}

static int cg_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct op_proc_hook_desc ph = { .size = sizeof(ph), .on_event = cg_on_proc };
	struct op_session_hook_desc sh = { .size = sizeof(sh), .on_event = cg_on_session };
	struct cg_state *st;
	long tck;
	int rc;

	if (!OP_HOST_HAS(host, register_proc_hook) || !OP_HOST_HAS(host, register_session_hook)) {
		host->log(ctx, OP_LOG_ERR,
			  "this oprofiled provides SDK %u.%u: the cgroup plugin needs 1.2 (process "
			  "and session hooks) - update oprofiled",
			  host->abi_major, host->abi_minor);
		return -ENOTSUP;
	}
	st = pu_state_new(host, ctx, sizeof(*st), cg_free);
	if (!st)
		return -ENOMEM;
	st->fd = -1;
	st->proc_fd = -1;
	st->ctx = ctx;
	st->host = host;
	st->max_procs = CG_DEFAULT_MAX_PROCS;
	st->proc_root = host->proc_root ? host->proc_root(ctx) : NULL;
	if (!st->proc_root || !*st->proc_root)
		st->proc_root = "/proc";
	st->real_proc = !strcmp(st->proc_root, "/proc");
	tck = sysconf(_SC_CLK_TCK);
	st->ns_per_tick = tck > 0 ? UINT64_C(1000000000) / (uint64_t)tck : UINT64_C(10000000);
	/* /proc's start times count from boot (suspend included), perf's clock does not */
	st->boot_minus_mono_ns = cg_clock(CLOCK_BOOTTIME) - cg_clock(CLOCK_MONOTONIC);
	rc = cg_parse(st, args);
	if (!rc)
		rc = cg_open_proc(st);
	if (rc)
		return rc;
	rc = host->register_proc_hook(ctx, &ph, st);
	if (!rc)
		rc = host->register_session_hook(ctx, &sh, st);
	/* issue 20: --separate=cgroup (an older oprofiled refuses that word itself) */
	if (!rc && OP_HOST_HAS(host, set_split_key)) {
		rc = host->register_split(ctx, "cgroup");
		st->split = !rc;
	}
	if (!rc)
		rc = host->register_stats(ctx, &cg_stats_ops, st);
	if (rc) {
		host->log(ctx, OP_LOG_ERR, "registering the hooks failed: %s", strerror(-rc));
		return rc;
	}
	return 0;
}

OP_EXT_DEFINE(.name = "cgroup", .version = "1.0",
	      .summary = "cgroup path, container ID and systemd unit of each process "
			 "(stats/cgroups), once per process",
	      .ext_init = cg_init);
