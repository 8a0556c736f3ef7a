/*
 * jit.c - the "jit" plugin (SDK 1.2): JIT code of libopagent
 * (/tmp/.oprofile/jitdump/PID.dump), of perf's jitdump writers
 * (jit-PID.dump, V8, .NET, LLVM, Java agents) and of perf maps
 * (/tmp/perf-PID.map) attributed to ELF images kept in the session, so that
 * opreport -l/-g/-d, opannotate and oparchive treat it as any binary. The
 * proc hook finds the files (the MMAP of a dump, an anon executable
 * mapping), the anon resolver claims samples by (pid, pc, time), the
 * session hook converts at dump, rotation and stop, and an exit converts
 * that process. A process that wrote no records keeps today's anon samples.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jit.h"

static const char *const jit_stat_names[JS_NR] = {
	"processes",
	"dumps_opened",
	"maps_opened",
	"bytes_read",
	"code_loads",
	"code_moves",
	"code_unloads",
	"debug_infos",
	"map_lines",
	"functions",
	"samples_resolved",
	"samples_in_moved_code",
	"samples_missed",
	"refreshes",
	"images_written",
	"image_errors",
	"files_refused",
	"open_errors",
	"read_errors",
	"over_limits",
	"input_defects",
	"broken_sources",
	"orphan_records",
	"bad_line_entries",
	"arch_timestamp_dumps",
	"lookup_walk_limit",
};

/* "jit-PID.dump" (perf) or "PID.dump" (libopagent), PID the mapping process's */
static bool jit_is_dump(const char *path, uint32_t pid)
{
	const char *base = strrchr(path, '/');
	char want[32];

	base = base ? base + 1 : path;
	snprintf(want, sizeof(want), "%u.dump", pid);
	if (!strncmp(base, "jit-", 4))
		base += 4;
	return !strcmp(base, want);
}

/* an executable mapping without a file (as buffer sync tells them): where JIT code lives */
static bool jit_is_anon(const char *fn)
{
	if (!strcmp(fn, "//anon") || !strncmp(fn, "/anon_hugepage", 14))
		return true;
	return fn[0] != '/' && strcmp(fn, "[vdso]") && strcmp(fn, "[vsyscall]") &&
	       strcmp(fn, "[uprobes]");
}

static void jit_probe_map(struct jit_proc *p)
{
	char path[64];

	if (p->map.fd >= 0 || p->map.failed)
		return;
	snprintf(path, sizeof(path), "/tmp/perf-%u.map", p->pid);
	jit_src_open(p, &p->map, JIT_SRC_MAP, path);
}

/* the process ended: read its files to their end, write its image */
static void jit_exit(struct jit_proc *p)
{
	jit_probe_map(p);
	jit_src_refresh(p, true);
	jit_src_close(p, &p->dump, true);
	jit_src_close(p, &p->map, true);
	jit_image_write(p);
	p->exited = true;
}

static int jit_on_proc(void *priv, const struct op_proc_event *e)
{
	struct jit_state *st = priv;
	struct jit_proc *p;

	switch (e->kind) {
	case OP_PROC_MMAP:
		if (!e->filename)
			break;
		if (jit_is_dump(e->filename, e->pid)) {
			p = jit_proc_get(st, e->pid);
			if (!p)
				return -ENOMEM;
			jit_src_open(p, &p->dump, JIT_SRC_DUMP, e->filename);
			jit_src_refresh(p, false);
		} else if ((e->misc & OP_PROC_F_EXEC) && jit_is_anon(e->filename)) {
			p = jit_proc_get(st, e->pid);
			if (!p)
				return -ENOMEM;
			jit_probe_map(p);
			jit_src_refresh(p, false);
		}
		break;
	case OP_PROC_EXEC:
	case OP_PROC_FORK:
		/* a new program in this pid (exec, or a pid used again): the old one is done */
		if (e->kind == OP_PROC_FORK && e->pid == e->ppid)
			break;
		p = jit_proc_find(st, e->pid);
		if (p)
			jit_proc_drop(st, p);
		break;
	case OP_PROC_EXIT:
		p = e->pid == e->tid ? jit_proc_find(st, e->pid) : NULL;
		if (p && !p->exited)
			jit_exit(p);
		break;
	default:
		break;
	}
	return 0;
}

static int jit_on_session(void *priv, const struct op_session_event *e)
{
	struct jit_state *st = priv;
	uint32_t i;

	/* every image current; processes that exited are forgotten after their last write */
	for (i = 0; i < st->cap_procs; i++) {
		struct jit_proc *p = st->procs[i];

		if (!p)
			continue;
		/* conversion reads everything written so far, not one budget's worth */
		if (!p->exited)
			jit_src_refresh(p, true);
		jit_image_write(p);
	}
	for (i = 0; i < st->cap_procs;) {
		struct jit_proc *p = st->procs[i];

		/* removal moves entries back into slot i: look at it again */
		if (p && (p->exited || e->kind == OP_SESSION_STOP))
			jit_proc_drop(st, p);
		else
			i++;
	}
	return 0;
}

/* HOT: no allocation, no system call but a rate-limited re-read on a miss */
static int jit_resolve(void *priv, uint32_t pid, uint64_t pc, uint64_t time, struct op_pc_map *out)
{
	struct jit_state *st = priv;
	struct jit_proc *p = jit_proc_find(st, pid);
	uint64_t key;

	if (!p || p->image_failed)
		return 0;
	if (!jit_proc_lookup(p, pc, time, &key)) {
		/* code newer than the last read: the writer wrote it just before running it */
		if (p->exited || time - p->last_refresh < JIT_REFRESH_NS) {
			st->v[JS_MISSES]++;
			return 0;
		}
		p->last_refresh = time;
		st->v[JS_REFRESHES]++;
		if (time - p->last_map_probe >= JIT_MAP_PROBE_NS) {
			p->last_map_probe = time;
			jit_probe_map(p);
		}
		jit_src_refresh(p, false);
		if (!jit_proc_lookup(p, pc, time, &key)) {
			st->v[JS_MISSES]++;
			return 0;
		}
	}
	if (!p->cookie)
		return 0;
	out->cookie = p->cookie;
	out->offset = key;
	st->v[JS_RESOLVED]++;
	return 1;
}

static void jit_print_stats(void *priv, const struct op_stats_sink *sink)
{
	struct jit_state *st = priv;
	char buf[512];
	int i;

	if (sink->counter)
		for (i = 0; i < JS_NR; i++)
			sink->counter(sink, jit_stat_names[i], st->v[i]);
	if (sink->text && op_jit_errors_total(&st->errs)) {
		size_t n = (size_t)snprintf(buf, sizeof(buf), "input defects: ");

		op_jit_errors_format(&st->errs, buf + n, sizeof(buf) - n);
		sink->text(sink, buf);
	}
}

static void jit_free(void *data)
{
	struct jit_state *st = data;

	jit_proc_free_all(st);
	if (st->jit_dirfd >= 0)
		close(st->jit_dirfd);
	free(st);
}

static int jit_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct op_user_data ud = { .size = sizeof(ud), .free_func = jit_free };
	struct op_proc_hook_desc ph = { .size = sizeof(ph), .on_event = jit_on_proc };
	struct op_session_hook_desc sh = { .size = sizeof(sh), .on_event = jit_on_session };
	struct op_anon_resolver_desc ar = { .size = sizeof(ar), .resolve = jit_resolve };
	struct op_stats_ops so = { .size = sizeof(so), .print_stats = jit_print_stats };
	struct jit_state *st;
	int rc;

	if (!OP_HOST_HAS(host, register_anon_resolver)) {
		host->log(ctx, OP_LOG_ERR, "needs an oprofiled with SDK >= 1.2 (this one has %u.%u)",
			  host->abi_major, host->abi_minor);
		return -ENOSYS;
	}
	if (args && *args) {
		host->log(ctx, OP_LOG_ERR, "takes no arguments, got \"%s\" - use --ext-feature=jit",
			  args);
		return -EINVAL;
	}
	st = calloc(1, sizeof(*st));
	if (!st)
		return -ENOMEM;
	st->ctx = ctx;
	st->host = host;
	st->session_dir = host->session_dir(ctx);
	st->proc_root = host->proc_root(ctx);
	st->jit_dirfd = -1;
	ud.data = st;
	rc = host->set_user_data(ctx, &ud);
	if (rc) {
		free(st);
		return rc;
	}
	rc = host->register_proc_hook(ctx, &ph, st);
	if (!rc)
		rc = host->register_session_hook(ctx, &sh, st);
	if (!rc)
		rc = host->register_anon_resolver(ctx, &ar, st);
	if (!rc)
		rc = host->register_stats(ctx, &so, st);
	return rc;
}

OP_EXT_DEFINE(.name = "jit", .version = "1.0",
	      .summary = "JIT code (libopagent, jitdump, perf maps) as ELF images in the session",
	      .ext_init = jit_init);
