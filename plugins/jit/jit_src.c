/*
 * jit_src.c - reading a process's jitdump and perf map: each file is
 * opened once through op_trust (no symbolic link anywhere on its path, a
 * regular file owned by the process's owner or root, writable by nobody
 * else, O_NONBLOCK), kept open while the process lives - so a map deleted
 * right after the exit is still read to its end - and read from where the
 * last read stopped, a bounded amount at a time, through lib/op_jit's
 * readers. Never per sample but on a rate-limited miss.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit.h"
#include "op_trust.h"

static const char *jit_src_what(const struct jit_src *s)
{
	return s->kind == JIT_SRC_DUMP ? "jitdump" : "perf map";
}

static void jit_src_log_errors(struct jit_proc *p, struct jit_src *s, const struct op_jit_errors *e,
			       const char *when)
{
	struct jit_state *st = p->st;
	char buf[512];
	uint64_t n = op_jit_errors_total(e);

	if (!n)
		return;
	op_jit_errors_add(&st->errs, e);
	st->v[JS_PARSE_ERRORS] += n;
	op_jit_errors_format(e, buf, sizeof(buf));
	st->host->log(st->ctx, OP_LOG_WARN, "%s %s of pid %u: %llu defect%s %s: %s", jit_src_what(s),
		      s->path, p->pid, (unsigned long long)n, n == 1 ? "" : "s", when, buf);
}

static int jit_dump_rec(void *priv, const struct op_jit_rec *r)
{
	struct jit_proc *p = priv;
	struct jit_state *st = p->st;
	uint64_t t;

	if (!p->arch_ts && p->dump.dr) {
		const struct op_jitdump_info *h = op_jitdump_reader_header(p->dump.dr);

		if (h && (h->flags & OP_JITDUMP_FLAGS_ARCH_TIMESTAMP)) {
			/* cycle counts cannot be compared with the perf clock: last state wins */
			p->arch_ts = true;
			st->v[JS_ARCH_TS]++;
			st->host->log(st->ctx, OP_LOG_WARN,
				      "jitdump %s of pid %u has cycle-counter timestamps: moved code "
				      "is attributed by its last place, not by time",
				      p->dump.path, p->pid);
		}
	}
	/* arch timestamps: every range from 0, a move or unload ends the old one at 0 */
	t = p->arch_ts ? 0 : r->timestamp;
	switch (r->kind) {
	case OP_JIT_LOAD:
		st->v[JS_LOADS]++;
		jit_proc_load(p, r->load.name, r->load.code_addr, r->load.code_size, r->load.code,
			      t, r->load.code_index);
		break;
	case OP_JIT_MOVE:
		st->v[JS_MOVES]++;
		jit_proc_move(p, r->move.code_index, r->move.new_code_addr, t);
		break;
	case OP_JIT_DEBUG_INFO:
		st->v[JS_DEBUG_INFOS]++;
		jit_proc_debug(p, r->debug.code_addr, r->debug.entries, r->debug.nr_entry);
		break;
	case OP_JIT_UNLOAD:
		st->v[JS_UNLOADS]++;
		jit_proc_unload(p, r->unload.vma, t);
		break;
	default:
		break;
	}
	return 0;
}

static int jit_map_line(void *priv, const struct op_perfmap_entry *e)
{
	struct jit_proc *p = priv;

	p->st->v[JS_MAP_LINES]++;
	/* a perf map has no time: the entry holds for the whole run, a later one wins */
	jit_proc_load(p, e->name, e->start, e->size, NULL, 0, UINT64_MAX);
	return 0;
}

void jit_src_open(struct jit_proc *p, struct jit_src *s, enum jit_src_kind kind, const char *path)
{
	struct jit_state *st = p->st;
	struct op_trust t = { .owner = p->uid, .forbid = S_IWGRP | S_IWOTH };
	char why[512];
	struct stat sb;
	int fd;

	if (s->path && !strcmp(s->path, path) && (s->fd >= 0 || s->failed))
		return;
	if (s->path && strcmp(s->path, path))
		jit_src_close(p, s, true); /* a new dump of the same process: the old one ends */
	if (!s->path) {
		s->path = strdup(path);
		if (!s->path)
			return;
	}
	s->kind = kind;
	fd = op_trust_open_path(&t, path, O_RDONLY, S_IFREG, jit_src_what(s), &sb, why, sizeof(why));
	if (fd < 0) {
		if (fd == -ENOENT && kind == JIT_SRC_MAP)
			return; /* not written yet: looked for again later */
		s->failed = true;
		if (fd == -EPERM || fd == -ELOOP || fd == -EINVAL) {
			st->v[JS_UNTRUSTED]++;
			st->host->log(st->ctx, OP_LOG_WARN,
				      "pid %u (uid %u): %s %s refused, not read: %s", p->pid,
				      (unsigned)p->uid, jit_src_what(s), path, why);
		} else {
			st->v[JS_OPEN_ERRORS]++;
			st->host->log(st->ctx, OP_LOG_WARN, "pid %u: %s %s: %s", p->pid,
				      jit_src_what(s), path, why);
		}
		return;
	}
	s->fd = fd;
	s->off = 0;
	if (kind == JIT_SRC_DUMP) {
		s->dr = op_jitdump_reader_init(jit_dump_rec, p, 0);
		st->v[JS_DUMPS]++;
	} else {
		s->mr = op_perfmap_reader_init(jit_map_line, p);
		st->v[JS_MAPS]++;
	}
	if (!s->dr && !s->mr) {
		close(fd);
		s->fd = -1;
		s->failed = true;
	}
}

/* read what @s gained since the last time, at most JIT_READ_BUDGET bytes (all when @all) */
static void jit_src_read(struct jit_proc *p, struct jit_src *s, bool all)
{
	static uint8_t buf[65536]; /* the daemon's thread only */
	struct jit_state *st = p->st;
	uint64_t budget = all ? JIT_MAX_SOURCE : JIT_READ_BUDGET;
	ssize_t n;
	int rc;

	while (s->fd >= 0 && !s->failed && budget) {
		if (s->off >= JIT_MAX_SOURCE) {
			st->v[JS_TOO_BIG]++;
			st->host->log(st->ctx, OP_LOG_WARN,
				      "pid %u: %s %s is larger than %llu bytes: the rest is not read",
				      p->pid, jit_src_what(s), s->path,
				      (unsigned long long)JIT_MAX_SOURCE);
			s->failed = true;
			break;
		}
		n = pread(s->fd, buf, sizeof(buf), (off_t)s->off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			st->v[JS_READ_ERRORS]++;
			st->host->log(st->ctx, OP_LOG_WARN, "pid %u: reading %s %s: %s", p->pid,
				      jit_src_what(s), s->path, strerror(errno));
			s->failed = true;
			break;
		}
		if (n == 0)
			break;
		s->off += (uint64_t)n;
		st->v[JS_BYTES] += (uint64_t)n;
		budget = budget > (uint64_t)n ? budget - (uint64_t)n : 0;
		rc = s->dr ? op_jitdump_reader_feed(s->dr, buf, (size_t)n) :
			     op_perfmap_reader_feed(s->mr, buf, (size_t)n);
		if (rc == -EINVAL && s->dr) {
			st->v[JS_BROKEN]++;
			jit_src_log_errors(p, s, op_jitdump_reader_errors(s->dr),
					   "(cannot be read further)");
			s->failed = true;
			op_jitdump_reader_fini(s->dr, NULL);
			s->dr = NULL;
		}
	}
}

void jit_src_refresh(struct jit_proc *p, bool all)
{
	jit_src_read(p, &p->dump, all);
	jit_src_read(p, &p->map, all);
	jit_proc_index(p);
}

void jit_src_close(struct jit_proc *p, struct jit_src *s, bool final)
{
	struct op_jit_errors e;

	if (s->dr) {
		memset(&e, 0, sizeof(e));
		op_jitdump_reader_fini(s->dr, &e);
		jit_src_log_errors(p, s, &e, final ? "at its end" : "");
		s->dr = NULL;
	}
	if (s->mr) {
		memset(&e, 0, sizeof(e));
		op_perfmap_reader_fini(s->mr, final, &e);
		jit_src_log_errors(p, s, &e, final ? "at its end" : "");
		s->mr = NULL;
		jit_proc_index(p); /* a last line without its newline */
	}
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->path);
	s->path = NULL;
	s->failed = false;
}
