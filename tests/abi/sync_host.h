/*
 * sync_host.h - the daemon's plugin side without the daemon, for the SDK 1.2
 * tests and the JIT benchmark: a real plugin loader whose core services are
 * a real buffer sync (cookies, task table, event buffer captured or
 * counted), records fed as perf delivers them, the log kept in memory.
 * Header only (static inline); return codes, no test framework.
 * SPDX-License-Identifier: MIT
 */
#ifndef TESTS_ABI_SYNC_HOST_H
#define TESTS_ABI_SYNC_HOST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cookie.h"
#include "evbuf.h"
#include "ext.h"
#include "log.h"
#include "sync.h"

struct sync_host {
	struct cookie_table cookies;
	struct op_emit w;
	struct sync_ctx s;
	struct op_stats st;
	struct ext_core_services core;
	struct ext_loader *l;
	struct op_log log;
	char *logtext; /* the log (open_memstream) */
	size_t loglen;
	uint64_t *out; /* captured event-buffer words (cap 0: only counted) */
	size_t n, cap;
};

static inline int sync_host_capture(void *priv, const uint64_t *words, size_t n)
{
	struct sync_host *h = priv;

	if (h->cap) {
		if (h->n + n > h->cap)
			return -1;
		memcpy(h->out + h->n, words, n * sizeof(*words));
	}
	h->n += n;
	return 0;
}

/*
 * Plugins from @plugin_dir, sessions in @session_dir (NULL: none), up to
 * @capture event-buffer words kept. 0 or -1.
 */
static inline int sync_host_init(struct sync_host *h, const char *plugin_dir,
				 const char *session_dir, size_t capture)
{
	memset(h, 0, sizeof(*h));
	if (capture && !(h->out = calloc(capture, sizeof(*h->out))))
		return -1;
	h->cap = capture;
	if (cookie_init(&h->cookies) || evb_init(&h->w, 4096, sync_host_capture, h) ||
	    sync_init(&h->s, &h->cookies, &h->w, NULL, &h->st))
		return -1;
	h->core.sync = &h->s;
	h->core.map_pc = sync_map_pc;
	h->core.emit = sync_emit;
	h->core.cookie_path = sync_cookie_path;
	h->core.cookie_intern = sync_cookie_intern;
	h->core.session_dir = session_dir;
	h->core.proc_root = "/proc";
	log_init(&h->log, open_memstream(&h->logtext, &h->loglen));
	if (!h->log.fp)
		return -1;
	h->l = ext_loader_new(plugin_dir, NULL, &h->core, &h->log);
	return h->l ? 0 : -1;
}

/* after loading plugins: buffer sync calls their hooks and resolvers */
static inline void sync_host_start(struct sync_host *h)
{
	sync_set_registry(&h->s, ext_registry(h->l));
}

static inline void sync_host_fini(struct sync_host *h)
{
	ext_loader_free(h->l);
	sync_free(&h->s);
	evb_free(&h->w);
	cookie_free(&h->cookies);
	if (h->log.fp)
		fclose(h->log.fp);
	free(h->logtext);
	free(h->out);
}

static inline const char *sync_host_log(struct sync_host *h)
{
	fflush(h->log.fp);
	return h->logtext ? h->logtext : "";
}

static inline void sync_host_mmap(struct sync_host *h, uint32_t pid, uint64_t t, uint64_t start,
				  uint64_t len, const char *fn)
{
	struct op_record r = { .type = OP_REC_MMAP, .time = t };

	r.mmap.pid = r.mmap.tid = pid;
	r.mmap.start = start;
	r.mmap.len = len;
	r.mmap.cpumode = OP_CPUMODE_USER;
	r.mmap.exec = true;
	r.mmap.filename = fn;
	sync_record(&h->s, &r);
}

static inline void sync_host_exit(struct sync_host *h, uint32_t pid, uint64_t t)
{
	struct op_record r = { .type = OP_REC_EXIT, .time = t };

	r.task.pid = r.task.tid = pid;
	r.task.ppid = 1;
	sync_record(&h->s, &r);
}

static inline void sync_host_sample(struct sync_host *h, uint32_t pid, uint64_t t, uint64_t pc)
{
	struct op_record r = { .type = OP_REC_SAMPLE, .time = t };

	r.sample.size = sizeof(r.sample);
	r.sample.pid = r.sample.tid = pid;
	r.sample.cpumode = OP_CPUMODE_USER;
	r.sample.ip = pc;
	r.sample.time = t;
	sync_record(&h->s, &r);
}

/* run @cmd, its standard output into @out (NUL-terminated); its exit status */
static inline int sync_host_popen(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	size_t n;

	if (!p)
		return -1;
	n = fread(out, 1, len - 1, p);
	out[n] = 0;
	return pclose(p);
}

#endif /* TESTS_ABI_SYNC_HOST_H */
