/*
 * sync.c - buffer sync: records in, event buffer out. Context codes are
 * written only when the context changes; a sample then costs one pair.
 * Nothing here allocates or makes a system call per sample.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "sync.h"

int sync_init(struct sync_ctx *s, struct cookie_table *cookies, struct op_emit *w,
	      const struct ext_registry *reg, struct op_stats *stats)
{
	memset(s, 0, sizeof(*s));
	s->cookies = cookies;
	s->w = w;
	s->reg = reg;
	s->stats = stats;
	s->c = &s->spare;
	s->task_gen = 1;
	return task_table_init(&s->tasks);
}

void sync_free(struct sync_ctx *s)
{
	task_table_free(&s->tasks);
}

void sync_reset_context(struct sync_ctx *s)
{
	s->have_cpu = false;
	memset(s->cpu_ctx, 0, sizeof(s->cpu_ctx));
	memset(&s->spare, 0, sizeof(s->spare));
	s->c = &s->spare;
}

void sync_round_end(struct sync_ctx *s)
{
	if (s->tasks.dead) {
		s->task_gen++; /* cached task pointers may be freed */
		task_reap(&s->tasks);
	}
}

/* ------------------------------------------------------------------ */
/* PC mapping                                                          */
/* ------------------------------------------------------------------ */

/* the sample path's helpers are inlined into it: one frame per sample */
#define SYNC_HOT static inline __attribute__((always_inline))

/* a kernel pc outside the cached image: ask the kernel plugin. 0 or -ENOENT */
static __attribute__((noinline)) int sync_kernel_resolve(struct sync_ctx *s, uint64_t pc)
{
	const struct ext_kernel *k;

	if (!s->reg || !s->reg->has_kernel || !s->reg->kernel.ops.resolve)
		return -ENOENT;
	k = &s->reg->kernel;
	memset(&s->kcache, 0, sizeof(s->kcache));
	s->kcache.size = sizeof(s->kcache);
	if (k->ops.resolve(k->priv, pc, &s->kcache) || !s->kcache.cookie || pc < s->kcache.start ||
	    pc >= s->kcache.end) {
		s->have_kcache = false;
		return -ENOENT;
	}
	s->have_kcache = true;
	return 0;
}

/* where a mapped pc's mapping lies: pc in [lo, lo + len) has key pc - delta */
struct sync_range {
	uint64_t lo, len, delta;
};

SYNC_HOT int sync_map_kernel(struct sync_ctx *s, uint64_t pc, struct op_pc_map *out,
			     struct sync_range *r)
{
	out->in_kernel = 1;
	if (__builtin_expect(!s->have_kcache || pc < s->kcache.start || pc >= s->kcache.end, 0) &&
	    sync_kernel_resolve(s, pc))
		return -ENOENT;
	out->cookie = s->kcache.cookie;
	out->offset = pc - s->kcache.start;
	r->lo = r->delta = s->kcache.start;
	r->len = s->kcache.end - s->kcache.start;
	return 0;
}

SYNC_HOT int sync_map_range(struct sync_ctx *s, struct task *t, uint16_t cpumode, uint64_t pc,
			    struct op_pc_map *out, struct sync_range *r)
{
	const struct task_map *m;

	memset(out, 0, sizeof(*out));
	out->size = sizeof(*out);
	out->in_kernel = -1;
	if (cpumode == OP_CPUMODE_KERNEL)
		return sync_map_kernel(s, pc, out, r);
	if (cpumode != OP_CPUMODE_USER)
		return -EINVAL;
	out->in_kernel = 0;
	if (!t)
		return -ESRCH;
	m = task_find_map(t, pc);
	if (!m)
		return -ENOENT;
	out->cookie = m->cookie;
	r->lo = m->start;
	r->len = m->end - m->start;
	if (m->anon) {
		out->offset = pc - m->start;
		out->anon_start = m->start;
		out->anon_end = m->end - 1;
		r->delta = m->start;
	} else {
		out->offset = pc - m->start + m->pgoff;
		r->delta = m->start - m->pgoff;
	}
	return 0;
}

static int sync_map(struct sync_ctx *s, struct task *t, uint16_t cpumode, uint64_t pc,
		    struct op_pc_map *out)
{
	struct sync_range r;

	return sync_map_range(s, t, cpumode, pc, out, &r);
}

static int sync_anon_resolve(const struct ext_registry *r, uint32_t pid, uint64_t pc, uint64_t time,
			     struct op_pc_map *out);

/*
 * A plugin's map_pc (call-graph frames): the pc's mapping, and for a pc in
 * anon code that an anon resolver claims at the time of the sample being
 * hooked (JIT code), that resolver's image and key, as the flat sample of
 * the same pc gets. Without it a JIT frame of a stack would be [anon]
 * while the flat profile names the function.
 */
int sync_map_pc(void *sync, uint32_t pid, uint16_t cpumode, uint64_t pc, struct op_pc_map *out)
{
	struct sync_ctx *s = sync;
	struct op_pc_map jm;
	int rc;

	rc = sync_map(s, task_find(&s->tasks, pid), cpumode, pc, out);
	if (!rc && (out->anon_start || out->anon_end) && s->hook_sample && s->reg &&
	    s->reg->nr_anon && sync_anon_resolve(s->reg, pid, pc, s->hook_sample->time, &jm))
		*out = jm;
	return rc;
}

const char *sync_cookie_path(void *sync, op_cookie_t c)
{
	struct sync_ctx *s = sync;

	return cookie_path(s->cookies, c);
}

op_cookie_t sync_cookie_intern(void *sync, const char *path, bool is_kernel)
{
	struct sync_ctx *s = sync;

	if (!path)
		return 0;
	/* a kernel image given by path (vmlinux, /proc/kallsyms) is named {root}/path */
	return cookie_intern(s->cookies, path, strlen(path),
			     is_kernel ? OP_IMAGE_KERNEL : OP_IMAGE_USER, false);
}

/* --- issue 20: per-process split key --- */
static void sync_pid_changed(struct sync_ctx *s, uint32_t pid);

void sync_set_split(struct sync_ctx *s, bool on)
{
	s->split_on = on;
}

int sync_set_split_key(void *sync, uint32_t pid, const char *key)
{
	struct sync_ctx *s = sync;
	op_cookie_t c = 0;
	struct task *t;
	size_t len, i;

	if (!s->split_on)
		return 0;
	if (key) {
		len = strnlen(key, OP_SPLIT_KEY_MAX + 1);
		if (!len || len > OP_SPLIT_KEY_MAX || key[0] != '/')
			return -EINVAL;
		for (i = 0; i < len; i++)
			if ((unsigned char)key[i] < 0x20 || key[i] == 0x7f)
				return -EINVAL;
		/* interned as an anon region's name is: a string, never opened or stat'ed */
		c = cookie_intern(s->cookies, key, len, OP_IMAGE_ANON, false);
		if (!c)
			return -ENOMEM;
	}
	t = task_find(&s->tasks, pid);
	if (!t)
		return -ESRCH;
	if (t->split != c) {
		t->split = c;
		sync_pid_changed(s, pid); /* no fast path keeps the old key */
	}
	return 0;
}

void sync_set_registry(struct sync_ctx *s, const struct ext_registry *reg)
{
	s->reg = reg;
}

void sync_set_proc_root(struct sync_ctx *s, const char *proc_root)
{
	s->proc_root = proc_root;
}

void sync_set_throttle_hook(struct sync_ctx *s, void (*fn)(void *arg, uint64_t id), void *arg)
{
	s->on_throttle = fn;
	s->on_throttle_arg = arg;
}

int sync_emit(op_emit_t *w, uint32_t code, const uint64_t *args, uint32_t nargs)
{
	if (!w || !evb_plugin_code(code) || (nargs && !args))
		return -EINVAL;
	return evb_code(w, code, args, nargs);
}

/* ------------------------------------------------------------------ */
/* Context codes                                                       */
/* ------------------------------------------------------------------ */

/*
 * A sample of another cpu than the last one: its context becomes current.
 * A cpu seen before gets EVB_CPU_RESTORE (trans goes back to the context it
 * set aside for it); a new one EVB_CPU_SWITCH, carrying the current context
 * over, as trans does.
 */
static __attribute__((noinline)) void sync_switch_cpu(struct sync_ctx *s, uint32_t cpu)
{
	struct sync_cpu_ctx *prev = s->c, *c;
	uint32_t code = EVB_CPU_SWITCH;
	uint64_t a = cpu;

	c = cpu < EVB_MAX_CPU_CONTEXTS ? &s->cpu_ctx[cpu] : &s->spare;
	if (c->valid && c != &s->spare) {
		code = EVB_CPU_RESTORE;
	} else if (c != prev) {
		*c = *prev;
		c->valid = true;
		c->fast_gen = 0; /* prev's last mapping is not this cpu's */
	}
	evb_put_code(s->w, code, &a, 1);
	s->c = c;
	s->cpu = cpu;
	s->have_cpu = true;
}

/*
 * Back to known cpu @cpu (valid context, room for 4 words checked by the
 * caller): EVB_CPU_RESTORE, and its context becomes current.
 */
SYNC_HOT void sync_put_restore(struct sync_ctx *s, uint32_t cpu)
{
	uint64_t a = cpu;

	evb_store_code(s->w, EVB_CPU_RESTORE, &a, 1);
	s->c = &s->cpu_ctx[cpu];
	s->cpu = cpu;
}

SYNC_HOT void sync_emit_task(struct sync_ctx *s, uint32_t cpu, uint32_t tid, uint32_t tgid,
			     op_cookie_t app, op_cookie_t split)
{
	struct sync_cpu_ctx *c;
	uint64_t a[3];

	if (!s->have_cpu || s->cpu != cpu) {
		struct op_emit *w = s->w;

		/* samples of two CPUs interleave: going back to a known cpu, inline */
		if (__builtin_expect(s->have_cpu && cpu < EVB_MAX_CPU_CONTEXTS &&
					     s->cpu_ctx[cpu].valid && evb_room(w, 4),
				     1)) {
			sync_put_restore(s, cpu);
		} else {
			sync_switch_cpu(s, cpu);
		}
	}
	c = s->c;
	if (!c->have_ctx || c->tid != tid || c->tgid != tgid || c->app != app) {
		a[0] = tid;
		a[1] = app;
		a[2] = tgid;
		evb_put_code(s->w, EVB_CTX_SWITCH, a, 3);
		c->tid = tid;
		c->tgid = tgid;
		c->app = app;
		c->have_ctx = true;
	}
	/* issue 20: only with --separate=cgroup is a split ever non-zero */
	if (__builtin_expect(c->split != split, 0)) {
		a[0] = split;
		evb_put_code(s->w, EVB_SPLIT_SWITCH, a, 1);
		c->split = split;
	}
}

SYNC_HOT void sync_emit_image(struct sync_ctx *s, const struct op_pc_map *m)
{
	struct sync_cpu_ctx *c = s->c;
	uint64_t a[3];

	if (!c->have_mode || c->in_kernel != m->in_kernel) {
		evb_put_code(s->w, m->in_kernel ? EVB_KERNEL_ENTER : EVB_USER_ENTER, NULL, 0);
		c->in_kernel = m->in_kernel;
		c->have_mode = true;
	}
	if (c->have_image && c->cookie == m->cookie && c->anon_start == m->anon_start &&
	    c->anon_end == m->anon_end)
		return;
	if (m->anon_start || m->anon_end) {
		a[0] = m->cookie;
		a[1] = m->anon_start;
		a[2] = m->anon_end;
		evb_put_code(s->w, EVB_ANON_SWITCH, a, 3);
	} else {
		a[0] = m->cookie;
		evb_put_code(s->w, EVB_COOKIE_SWITCH, a, 1);
	}
	c->cookie = m->cookie;
	c->anon_start = m->anon_start;
	c->anon_end = m->anon_end;
	c->have_image = true;
}

/* ------------------------------------------------------------------ */
/* Records                                                             */
/* ------------------------------------------------------------------ */

static void sync_count_map_error(struct sync_ctx *s, int rc, uint16_t cpumode)
{
	if (rc == -EINVAL)
		s->stats->v[STAT_LOST_INVALID_DOMAIN]++;
	else if (cpumode == OP_CPUMODE_KERNEL)
		s->stats->v[STAT_LOST_KERNEL]++;
	else if (rc == -ESRCH)
		s->stats->v[STAT_LOST_NO_APP_USER]++;
	else
		s->stats->v[STAT_LOST_NO_MAPPING]++;
}

static struct task *sync_probe(struct sync_ctx *s, uint32_t pid, struct task *t);

/* --image: keep a sample if its image or its application is listed */
static bool sync_wanted(const struct sync_ctx *s, const struct task *t, op_cookie_t image)
{
	const struct cookie_ent *e = cookie_get(s->cookies, image);

	if (e && e->wanted)
		return true;
	e = t ? cookie_get(s->cookies, t->app_cookie) : NULL;
	return e && e->wanted;
}

static void sync_source_sample(struct sync_ctx *s, const struct op_perf_sample *ps)
{
	uint32_t idx = ps->source - 1;
	const struct ext_source *src;
	struct op_pc_map m;
	struct task *t;

	s->stats->v[STAT_SOURCE_SAMPLES]++;
	if (!s->reg || idx >= s->reg->nr_sources) {
		s->stats->v[STAT_LOST_BAD_COUNTER]++;
		return;
	}
	src = &s->reg->sources[idx];
	t = task_find(&s->tasks, ps->pid);
	/* the plugin's records follow the context of the sample they come from */
	sync_emit_task(s, ps->cpu, ps->tid, ps->pid, t ? t->app_cookie : 0, t ? t->split : 0);
	if (sync_map(s, t, ps->cpumode, ps->ip, &m) == 0)
		sync_emit_image(s, &m);
	/* the cpu's context may not be its last core sample's any more */
	s->c->fast_gen = 0;
	s->hook_sample = ps;
	if (src->desc.on_sample && src->desc.on_sample(src->priv, ps, s->w))
		s->stats->v[STAT_HOOK_ERRORS]++;
	s->hook_sample = NULL;
}

static __attribute__((noinline)) void sync_run_hooks(struct sync_ctx *s,
						     const struct op_perf_sample *ps)
{
	size_t i;

	s->hook_sample = ps;
	for (i = 0; i < s->reg->nr_hooks; i++) {
		const struct ext_hook *h = &s->reg->hooks[i];

		if (h->desc.on_sample && h->desc.on_sample(h->priv, ps, s->w))
			s->stats->v[STAT_HOOK_ERRORS]++;
	}
	s->hook_sample = NULL;
}

/*
 * SDK 1.2: a task record (COMM, FORK, EXIT, MMAP) to the plugins' proc
 * hooks, after the core took it. Returns the number of hooks that failed.
 */
static __attribute__((noinline)) unsigned sync_proc_hooks(const struct ext_registry *r,
							  const struct op_record *rec)
{
	struct op_proc_event e;
	unsigned failed = 0;
	size_t i;

	memset(&e, 0, sizeof(e));
	e.size = sizeof(e);
	e.time = rec->time;
	switch (rec->type) {
	case OP_REC_COMM:
		e.kind = rec->comm.exec ? OP_PROC_EXEC : OP_PROC_COMM;
		e.pid = rec->comm.pid;
		e.tid = rec->comm.tid;
		e.comm = rec->comm.comm ? rec->comm.comm : "";
		break;
	case OP_REC_FORK:
	case OP_REC_EXIT:
		e.kind = rec->type == OP_REC_FORK ? OP_PROC_FORK : OP_PROC_EXIT;
		e.pid = rec->task.pid;
		e.tid = rec->task.tid;
		e.ppid = rec->task.ppid;
		break;
	case OP_REC_MMAP:
		if (rec->mmap.cpumode == OP_CPUMODE_KERNEL ||
		    rec->mmap.cpumode == OP_CPUMODE_GUEST_KERNEL)
			return 0;
		e.kind = OP_PROC_MMAP;
		e.pid = rec->mmap.pid;
		e.tid = rec->mmap.tid;
		e.misc = rec->mmap.exec ? OP_PROC_F_EXEC : 0;
		e.prot = rec->mmap.prot;
		e.flags = rec->mmap.flags;
		e.filename = rec->mmap.filename ? rec->mmap.filename : "";
		e.start = rec->mmap.start;
		e.len = rec->mmap.len;
		e.pgoff = rec->mmap.pgoff;
		break;
	default:
		return 0;
	}
	/* /proc synthesis writes its records with time 0 (proc_synth.h) */
	if (!rec->time)
		e.misc |= OP_PROC_F_SYNTH;
	for (i = 0; i < r->nr_proc_hooks; i++)
		if (r->proc_hooks[i].proc.on_event(r->proc_hooks[i].priv, &e))
			failed++;
	return failed;
}

/*
 * SDK 1.2, HOT: the first anon resolver that claims (@pid, @pc, @time)
 * fills @out with its image and key (in_kernel 0, no anon range): 1; else 0
 * (@out then says nothing: map the pc again).
 */
static __attribute__((noinline)) int sync_anon_resolve(const struct ext_registry *r, uint32_t pid,
						       uint64_t pc, uint64_t time,
						       struct op_pc_map *out)
{
	size_t i;

	for (i = 0; i < r->nr_anon; i++) {
		const struct ext_hook_entry *a = &r->anon[i];

		memset(out, 0, sizeof(*out));
		out->size = sizeof(*out);
		if (a->anon.resolve(a->priv, pid, pc, time, out) == 1 && out->cookie) {
			/* only the image and the key are the plugin's to say */
			out->size = sizeof(*out);
			out->in_kernel = 0;
			out->anon_start = out->anon_end = 0;
			return 1;
		}
	}
	return 0;
}

/*
 * HOT. A sample of the thread, mode and mapping of the last sample on its
 * cpu (most are): the context that sample wrote is still the cpu's, so the
 * sample is its pair (after EVB_CPU_RESTORE when another cpu came between).
 * False: take the full path.
 */
SYNC_HOT bool sync_sample_fast(struct sync_ctx *s, const struct op_perf_sample *ps, uint32_t counter)
{
	uint32_t cpu = ps->cpu;
	struct sync_cpu_ctx *c;
	struct op_emit *w = s->w;
	uint64_t off;

	if (cpu >= EVB_MAX_CPU_CONTEXTS)
		return false;
	c = &s->cpu_ctx[cpu];
	if (c->fast_gen != sync_gen(s, ps->pid) || c->fast_pid != ps->pid ||
	    c->fast_tid != ps->tid || c->fast_mode != ps->cpumode ||
	    ps->ip - c->fast_lo >= c->fast_len || !s->have_cpu || !evb_room(w, 6))
		return false;
	off = ps->ip - c->fast_delta;
	if (off == EVB_ESCAPE)
		return false;
	if (s->cpu != cpu)
		sync_put_restore(s, cpu);
	evb_store_pair(w, off, counter);
	s->stats->v[STAT_SAMPLES]++;
	s->stats->v[ps->cpumode == OP_CPUMODE_KERNEL ? STAT_KERNEL_SAMPLES : STAT_USER_SAMPLES]++;
	if (s->reg && s->reg->nr_hooks)
		sync_run_hooks(s, ps);
	return true;
}

static __attribute__((noinline)) void sync_sample(struct sync_ctx *s,
						  const struct op_perf_sample *ps, uint32_t counter)
{
	struct sync_last_task *last;
	struct sync_range range;
	struct op_pc_map m;
	struct task *t;
	int rc;

	if (ps->source != 0) {
		sync_source_sample(s, ps);
		return;
	}
	s->stats->v[STAT_SAMPLES]++;
	if (ps->cpumode == OP_CPUMODE_KERNEL)
		s->stats->v[STAT_KERNEL_SAMPLES]++;
	else if (ps->cpumode == OP_CPUMODE_USER)
		s->stats->v[STAT_USER_SAMPLES]++;
	/* samples come in runs of one process per cpu: the last task found there */
	last = &s->last[ps->cpu & (EVB_MAX_CPU_CONTEXTS - 1)];
	if (last->t && last->pid == ps->pid && last->gen == sync_gen(s, ps->pid))
		t = last->t;
	else
		t = task_find(&s->tasks, ps->pid);
	rc = sync_map_range(s, t, ps->cpumode, ps->ip, &m, &range);
	if ((rc == -ESRCH || rc == -ENOENT) && ps->cpumode == OP_CPUMODE_USER && (!t || !t->probed)) {
		t = sync_probe(s, ps->pid, t);
		rc = sync_map_range(s, t, ps->cpumode, ps->ip, &m, &range);
	}
	last->t = t;
	last->pid = ps->pid;
	last->gen = sync_gen(s, ps->pid);
	if (rc == -ENOENT && t && t->unknown)
		rc = -ESRCH;
	if (rc) {
		sync_count_map_error(s, rc, ps->cpumode);
		return;
	}
	/*
	 * An anon pc a plugin claims (JIT code, SDK 1.2) lands in that plugin's
	 * image; every such sample is asked anew (the key is not linear in the
	 * pc over the mapping), so no fast path for the mapping.
	 */
	if ((m.anon_start || m.anon_end) && s->reg && s->reg->nr_anon) {
		struct op_pc_map jm;

		range.len = 0;
		if (sync_anon_resolve(s->reg, ps->pid, ps->ip, ps->time, &jm))
			m = jm;
	}
	if (m.offset == EVB_ESCAPE) {
		s->stats->v[STAT_INVALID_PC]++;
		return;
	}
	if (s->cookies->filter && !sync_wanted(s, t, m.cookie)) {
		s->stats->v[STAT_IMAGE_FILTERED]++;
		return;
	}
	sync_emit_task(s, ps->cpu, ps->tid, ps->pid, t ? t->app_cookie : 0, t ? t->split : 0);
	sync_emit_image(s, &m);
	evb_put_pair(s->w, m.offset, counter);
	/* the next sample of this thread in this mapping can take the fast path */
	if (ps->cpu < EVB_MAX_CPU_CONTEXTS && s->c == &s->cpu_ctx[ps->cpu]) {
		struct sync_cpu_ctx *c = s->c;

		c->fast_gen = sync_gen(s, ps->pid);
		c->fast_pid = ps->pid;
		c->fast_tid = ps->tid;
		c->fast_mode = ps->cpumode;
		c->fast_lo = range.lo;
		c->fast_len = range.len;
		c->fast_delta = range.delta;
	}
	if (s->reg && s->reg->nr_hooks)
		sync_run_hooks(s, ps);
}

static bool sync_ends_with(const char *s, size_t len, const char *suffix, size_t slen)
{
	return len >= slen && !memcmp(s + len - slen, suffix, slen);
}

/* does the file name of @path start with the (possibly truncated) comm? */
static bool sync_name_matches_comm(const char *path, size_t len, const char *comm)
{
	const char *base = memrchr(path, '/', len);
	size_t clen = strnlen(comm, 16), blen;

	base = base ? base + 1 : path;
	blen = len - (size_t)(base - path);
	return clen && blen >= clen && !memcmp(base, comm, clen);
}

/* longest file name of a mapping that is interned (the kernel's PATH_MAX) */
#define SYNC_PATH_MAX 4096

/* add an executable mapping of @fn (@flen bytes) to @t (MMAP records and /proc probes) */
static void sync_add_map(struct sync_ctx *s, struct task *t, uint64_t start, uint64_t len,
			 uint64_t pgoff, const char *fn, size_t flen)
{
	enum op_image_kind kind = OP_IMAGE_USER;
	bool deleted = false, anon = false;
	op_cookie_t c;

	if (sync_ends_with(fn, flen, " (deleted)", 10)) {
		deleted = true;
		flen -= 10;
	}
	if (flen == 0 || (flen == 6 && !memcmp(fn, "//anon", 6)) ||
	    (flen >= 14 && !memcmp(fn, "/anon_hugepage", 14))) {
		fn = "anon";
		flen = 4;
		anon = true;
	} else if (fn[0] != '/') {
		anon = true; /* [heap], [stack], [vdso], [anon:name], jit names */
	}
	if (anon) {
		kind = OP_IMAGE_ANON;
		deleted = false;
	}
	c = cookie_intern(s->cookies, fn, flen, kind, deleted);
	if (!c || task_add_map(t, start, len, pgoff, c, anon)) {
		s->stats->v[STAT_NO_MEMORY]++;
		return;
	}
	/* the application: the first executable file after exec, or one named like comm */
	if (!anon && (!t->app_cookie || !t->app_matches_comm)) {
		bool match = sync_name_matches_comm(fn, flen, t->comm);

		if (!t->app_cookie || match) {
			t->app_cookie = c;
			t->app_matches_comm = match;
		}
	}
}

static void sync_mmap(struct sync_ctx *s, const struct op_record *r)
{
	const char *fn;
	struct task *t;
	size_t flen;

	s->stats->v[STAT_MMAP]++;
	if (r->mmap.cpumode == OP_CPUMODE_KERNEL || r->mmap.cpumode == OP_CPUMODE_GUEST_KERNEL ||
	    !r->mmap.exec || r->mmap.len == 0) {
		s->stats->v[STAT_MMAP_IGNORED]++;
		return;
	}
	t = task_get(&s->tasks, r->mmap.pid);
	if (!t) {
		s->stats->v[STAT_NO_MEMORY]++;
		return;
	}
	t->unknown = false;
	fn = r->mmap.filename ? r->mmap.filename : "";
	flen = r->mmap.filename_len ? r->mmap.filename_len : strnlen(fn, SYNC_PATH_MAX);
	sync_add_map(s, t, r->mmap.start, r->mmap.len, r->mmap.pgoff, fn,
		     flen < SYNC_PATH_MAX ? flen : SYNC_PATH_MAX);
}

/*
 * A user sample of a process we know nothing (or no mapping) about: its
 * records were lost or predate us. Read /proc/<pid>/{comm,maps} once per
 * process; the result, even a failure, is remembered in the task.
 */
static struct task *sync_probe(struct sync_ctx *s, uint32_t pid, struct task *t)
{
	char path[PATH_MAX], line[PATH_MAX + 128];
	FILE *f;

	if (!s->proc_root || (t && t->probed) || pid == 0)
		return t;
	if (!t) {
		t = task_get(&s->tasks, pid);
		if (!t)
			return NULL;
		t->unknown = true;
	}
	t->probed = true;
	s->task_gen++;
	s->stats->v[STAT_PROC_PROBES]++;
	if (!t->comm[0]) {
		snprintf(path, sizeof(path), "%s/%u/comm", s->proc_root, pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(t->comm, sizeof(t->comm), f))
				t->comm[strcspn(t->comm, "\n")] = 0;
			fclose(f);
		}
	}
	snprintf(path, sizeof(path), "%s/%u/maps", s->proc_root, pid);
	f = fopen(path, "re");
	if (!f) {
		s->stats->v[STAT_PROC_PROBE_FAILED]++;
		return t;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8];
		int n = 0;
		char *fn;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &n) < 4 ||
		    !n || end <= start)
			continue;
		if (strlen(perms) < 3 || perms[2] != 'x')
			continue;
		fn = line + n;
		fn[strcspn(fn, "\n")] = 0;
		sync_add_map(s, t, start, end - start, off, fn, strnlen(fn, SYNC_PATH_MAX));
	}
	fclose(f);
	if (t->nr_maps)
		t->unknown = false;
	return t;
}

static void sync_comm(struct sync_ctx *s, const struct op_record *r)
{
	struct task *t;

	s->stats->v[STAT_COMM]++;
	t = task_get(&s->tasks, r->comm.pid);
	if (!t) {
		s->stats->v[STAT_NO_MEMORY]++;
		return;
	}
	t->unknown = false;
	if (r->comm.exec)
		task_exec(t);
	if (r->comm.exec || r->comm.pid == r->comm.tid || !t->comm[0]) {
		const char *c = r->comm.comm ? r->comm.comm : "";

		strncpy(t->comm, c, sizeof(t->comm) - 1);
		t->comm[sizeof(t->comm) - 1] = 0;
	}
}

static __attribute__((noinline)) int sync_other(struct sync_ctx *s, const struct op_record *r);
static void sync_task_record(struct sync_ctx *s, const struct op_record *r);

/* a record of @pid may change its task, its maps or its app: its cached mappings go */
static void sync_pid_changed(struct sync_ctx *s, uint32_t pid)
{
	s->pid_gen[pid & (SYNC_PID_GENS - 1)]++;
}

static void sync_add(uint64_t *v, uint64_t n)
{
	*v = *v > UINT64_MAX - n ? UINT64_MAX : *v + n;
}

/*
 * STAT_LOST_RECORDS counts every record the kernel dropped; the parts it
 * told apart also go to their own counter (stats.h, stats/ files)
 */
static void sync_count_lost(struct op_stats *st, const struct op_record *r)
{
	switch (r->lost.kind) {
	case OP_LOST_SAMPLES:
		sync_add(&st->v[STAT_KLOST_SAMPLES], r->lost.lost);
		break;
	case OP_LOST_SIDEBAND:
		sync_add(&st->v[STAT_KLOST_SIDEBAND], r->lost.lost);
		break;
	case OP_LOST_NOTICE:
		return;
	default:
		break;
	}
	sync_add(&st->v[STAT_LOST_RECORDS], r->lost.lost);
}

int sync_record(struct sync_ctx *s, const struct op_record *r)
{
	/* most samples: a small frame, the rest out of line */
	if (__builtin_expect(r->type == OP_REC_SAMPLE, 1)) {
		if (__builtin_expect(r->sample.source == 0, 1) &&
		    sync_sample_fast(s, &r->sample, r->counter))
			return 0;
		sync_sample(s, &r->sample, r->counter);
		return 0;
	}
	return sync_other(s, r);
}

static int sync_other(struct sync_ctx *s, const struct op_record *r)
{
	/* the core takes the record first, so map_pc already knows a new mapping */
	sync_task_record(s, r);
	if (s->reg && s->reg->nr_proc_hooks &&
	    (r->type == OP_REC_MMAP || r->type == OP_REC_COMM || r->type == OP_REC_FORK ||
	     r->type == OP_REC_EXIT))
		s->stats->v[STAT_HOOK_ERRORS] += sync_proc_hooks(s->reg, r);
	return 0;
}

/* what the core itself does with a record other than a sample */
static void sync_task_record(struct sync_ctx *s, const struct op_record *r)
{
	struct task *t;

	switch (r->type) {
	case OP_REC_SAMPLE: /* sync_record's */
		break;
	case OP_REC_MMAP:
		sync_pid_changed(s, r->mmap.pid);
		sync_mmap(s, r);
		break;
	case OP_REC_COMM:
		sync_pid_changed(s, r->comm.pid);
		sync_comm(s, r);
		break;
	case OP_REC_FORK:
		sync_pid_changed(s, r->task.pid);
		s->stats->v[STAT_FORK]++;
		if (r->task.pid == r->task.ppid) {
			t = task_get(&s->tasks, r->task.pid); /* a new thread */
			if (t && r->task.tid != r->task.pid)
				t->nr_threads++;
		} else {
			t = task_fork(&s->tasks, r->task.pid, r->task.ppid);
		}
		if (t)
			t->unknown = false;
		else
			s->stats->v[STAT_NO_MEMORY]++;
		break;
	case OP_REC_EXIT:
		sync_pid_changed(s, r->task.pid);
		s->stats->v[STAT_EXIT]++;
		if (s->nr_exited < SYNC_MAX_EXITED) {
			s->exited[s->nr_exited].pid = (int32_t)r->task.pid;
			s->exited[s->nr_exited].tid = (int32_t)r->task.tid;
			s->nr_exited++;
		}
		/* per thread: the process goes when its last known thread does */
		t = task_find(&s->tasks, r->task.pid);
		if (t && !t->dead) {
			if (t->nr_threads)
				t->nr_threads--;
			if (!t->nr_threads)
				task_exit(&s->tasks, t);
		}
		break;
	case OP_REC_LOST:
		sync_count_lost(s->stats, r);
		break;
	case OP_REC_THROTTLE:
		s->stats->v[STAT_THROTTLE]++;
		if (s->on_throttle)
			s->on_throttle(s->on_throttle_arg, r->throttle.id);
		break;
	case OP_REC_UNTHROTTLE:
		s->stats->v[STAT_UNTHROTTLE]++;
		break;
	case OP_REC_KSYMBOL:
		s->task_gen++; /* kernel mappings of every task */
		s->stats->v[STAT_KSYMBOL]++;
		s->have_kcache = false;
		break;
	default:
		s->task_gen++; /* of unknown effect: forget every cached mapping */
		break;
	}
}

int sync_deliver(void *sync, const struct op_record *r)
{
	return sync_record(sync, r);
}
