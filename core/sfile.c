/*
 * sfile.c - sample-file sets: hash by context, recent sets, LRU of sets
 * with open files, eviction, the plugin sfile hooks (create, close, sync).
 * Naming and opening a set's files is sfile_open.c; the files a plugin
 * opens (sfile_open_spec) are sfile_file.c.
 * Allocation happens when a set or a file is created, never per sample.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sfile.h"
#include "sfile_int.h"

/* at most this many error lines a minute (error paths only) */
#define SFILE_MAX_ERRORS_LOGGED 20
#define SFILE_LOG_WINDOW_MS 60000

void sfile_logf(struct sfile_table *tab, const char *fmt, ...)
{
	va_list ap;

	if (!log_file(tab->log) || !log_limit_pass(&tab->limit, tab->log, LOG_PREFIX, log_now_ms()))
		return;
	va_start(ap, fmt);
	log_vput(log_file(tab->log), LOG_PREFIX, fmt, ap);
	va_end(ap);
	if (tab->limit.in_window == tab->limit.max)
		log_info(tab->log, "more sample file errors this minute are only counted");
}

void sfile_set_log(struct sfile_table *tab, struct op_log *log)
{
	tab->log = log;
}

void sfile_set_verbose(struct sfile_table *tab, bool verbose)
{
	tab->verbose = verbose;
}

/* ------------------------------------------------------------------ */
/* LRU                                                                 */
/* ------------------------------------------------------------------ */

static void sfile_lru_unlink(struct op_sfile *sf)
{
	if (!sf->lru_next)
		return;
	sf->lru_prev->lru_next = sf->lru_next;
	sf->lru_next->lru_prev = sf->lru_prev;
	sf->lru_prev = sf->lru_next = NULL;
}

static void sfile_lru_touch(struct sfile_table *tab, struct op_sfile *sf)
{
	sf->used_sync = tab->sync_gen;
	sfile_lru_unlink(sf);
	sf->lru_prev = tab->lru.lru_prev;
	sf->lru_next = &tab->lru;
	tab->lru.lru_prev->lru_next = sf;
	tab->lru.lru_prev = sf;
}

/* a cached set @sf was used again: keep it off the eviction end */
static inline void sfile_touch(struct sfile_table *tab, struct op_sfile *sf)
{
	if (tab->lru.lru_prev != sf)
		sfile_lru_touch(tab, sf);
	else
		sf->used_sync = tab->sync_gen;
}

/* ------------------------------------------------------------------ */
/* Table                                                               */
/* ------------------------------------------------------------------ */

int sfile_init(struct sfile_table *tab, const struct sfile_config *cfg, struct cookie_table *cookies,
	       const struct ext_registry *reg, struct op_stats *stats, struct op_log *log)
{
	memset(tab, 0, sizeof(*tab));
	tab->cfg = *cfg;
	if (tab->cfg.max_open_files < 1)
		tab->cfg.max_open_files = 1;
	if (tab->cfg.nr_events > OP_MAX_EVENTS)
		return -EINVAL;
	if (tab->cfg.separate & OP_SEP_KERNEL)
		tab->cfg.separate |= OP_SEP_LIB;
	tab->cookies = cookies;
	tab->reg = reg;
	tab->stats = stats;
	tab->log = log;
	log_limit_init(&tab->limit, SFILE_MAX_ERRORS_LOGGED, SFILE_LOG_WINDOW_MS);
	tab->strict = geteuid() == 0;
	tab->nr_buckets = 2048;
	tab->buckets = calloc(tab->nr_buckets, sizeof(*tab->buckets));
	tab->ibuckets = calloc(tab->nr_buckets, sizeof(*tab->ibuckets));
	tab->abuckets = calloc(tab->nr_buckets, sizeof(*tab->abuckets));
	if (!tab->buckets || !tab->ibuckets || !tab->abuckets) {
		sfile_free(tab);
		return -ENOMEM;
	}
	tab->lru.lru_next = tab->lru.lru_prev = &tab->lru;
	return 0;
}

void sfile_make_key(const struct sfile_table *tab, const struct op_trans_view *t,
		    struct sfile_key *key)
{
	unsigned sep = tab->cfg.separate;
	bool kernel = t->in_kernel == 1;
	bool anon = t->anon_start || t->anon_end;
	bool use_app = anon || (kernel && (sep & OP_SEP_KERNEL)) || (!kernel && (sep & OP_SEP_LIB));

	memset(key, 0, sizeof(*key));
	key->app = use_app ? t->app_cookie : 0;
	if (key->app == t->cookie)
		key->app = 0;
	key->cookie = t->cookie;
	key->in_kernel = kernel;
	key->tgid = (sep & OP_SEP_THREAD) ? t->tgid : -1;
	key->tid = (sep & OP_SEP_THREAD) ? t->tid : -1;
	key->cpu = (sep & OP_SEP_CPU) ? t->cpu : -1;
	key->anon_tgid = anon ? t->tgid : -1;
	key->anon_start = t->anon_start;
	key->anon_end = t->anon_end;
	/* issue 20: a view older than SDK 1.3 has no split (its copy reads 0) */
	key->split = (sep & OP_SEP_CGROUP) && t->size > offsetof(struct op_trans_view, split) ?
			     t->split :
			     0;
}

static void sfile_close_files(struct sfile_table *tab, struct op_sfile *sf)
{
	const struct ext_registry *reg = tab->reg;
	struct op_sample_file *f, *n;
	size_t i;

	for (i = 0; reg && i < reg->nr_sfile; i++) {
		const struct ext_sfile_handlers *h = &reg->sfile[i];

		if (h->slot >= EXT_MAX_SFILE_SLOTS)
			continue;
		if (h->ops.close)
			h->ops.close(h->priv, sf, sf->slot[h->slot]);
		sf->slot[h->slot] = NULL;
	}
	for (i = 0; i < OP_MAX_EVENTS; i++) {
		if (sf->files[i].fd >= 0) {
			tab->stats->v[STAT_ODB_SATURATED] += sf->files[i].saturated;
			odb_close(&sf->files[i]);
			sf->files[i].fd = -1;
			tab->nr_open--;
			sf->nr_open--;
		}
	}
	for (i = 0; i < EXT_MAX_COUNTERS; i++) {
		if (sf->vfiles[i]) {
			tab->stats->v[STAT_ODB_SATURATED] += sf->vfiles[i]->saturated;
			odb_close(sf->vfiles[i]);
			free(sf->vfiles[i]);
			sf->vfiles[i] = NULL;
			tab->nr_open--;
			sf->nr_open--;
		}
	}
	/* files a plugin opened and did not close in its close handler */
	for (f = sf->pfiles; f; f = n) {
		n = f->next;
		if (f->db.fd >= 0) {
			tab->stats->v[STAT_ODB_SATURATED] += f->db.saturated;
			tab->nr_open--;
			sf->nr_open--;
		}
		odb_close(&f->db);
		free(f);
	}
	sf->pfiles = NULL;
}

/* the set's key names a thread (--separate=thread) or an anon region's process */
static bool sfile_names_task(const struct sfile_key *k)
{
	return k->tid > 0 || k->anon_tgid > 0;
}

static void sfile_destroy(struct sfile_table *tab, struct op_sfile *sf)
{
	const uint32_t mask = tab->nr_buckets - 1;
	struct op_sfile **pp = &tab->buckets[sf->hash & mask];
	struct sfile_alias *a, **ap;

	sfile_close_files(tab, sf);
	sfile_lru_unlink(sf);
	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == sf) {
			*pp = sf->hnext;
			break;
		}
	}
	for (pp = &tab->ibuckets[sf->ident_hash & mask]; sf->ident && *pp; pp = &(*pp)->inext) {
		if (*pp == sf) {
			*pp = sf->inext;
			break;
		}
	}
	free(sf->ident);
	while ((a = sf->aliases)) {
		sf->aliases = a->to_next;
		for (ap = &tab->abuckets[a->hash & mask]; *ap; ap = &(*ap)->hnext) {
			if (*ap == a) {
				*ap = a->hnext;
				break;
			}
		}
		free(a);
	}
	if (tab->pinned == sf)
		tab->pinned = NULL;
	if (sfile_names_task(&sf->key)) {
		if (sf->task_prev)
			sf->task_prev->task_next = sf->task_next;
		else
			tab->task_sets = sf->task_next;
		if (sf->task_next)
			sf->task_next->task_prev = sf->task_prev;
	}
	tab->nr_sfiles--;
	tab->gen++;
	free(sf);
}

/* Evict least recently used sets (never @keep or the pinned one) until fewer
 * than @target files are open. Returns the number of sets evicted. */
unsigned sfile_evict(struct sfile_table *tab, unsigned target, const struct op_sfile *keep)
{
	struct op_sfile *sf = tab->lru.lru_next, *n;
	unsigned nr = 0;

	for (; sf != &tab->lru && tab->nr_open >= target; sf = n) {
		n = sf->lru_next;
		if (sf == keep || sf == tab->pinned)
			continue;
		sfile_destroy(tab, sf);
		tab->stats->v[STAT_SFILE_EVICTIONS]++;
		nr++;
	}
	return nr;
}

/*
 * With --separate=thread every process has its own sets: on a host that
 * starts processes all the time the sets of those that exited would stay
 * open (mapped: the daemon's RSS) until the LRU pushes them out. The
 * exited threads go into a small open-addressed table by tid, then one pass
 * over the sets that name a task; called once a round, only when threads
 * exited.
 */
unsigned sfile_close_exited(struct sfile_table *tab, const struct task_exited *ex, size_t n)
{
	struct task_exited *slot = tab->exit_slots;
	struct op_sfile *sf, *next;
	unsigned closed = 0;
	size_t i;

	/* only sets that name a thread or an anon region's process can close:
	 * none with the fleet default split by cgroup but for anon regions
	 * ([vdso], JIT code); the others are not walked (issue 20: churn) */
	if (!n || !tab->buckets || !tab->task_sets)
		return 0;
	if (n > SFILE_EXIT_SLOTS / 2)
		n = SFILE_EXIT_SLOTS / 2;
	/* tid 0 (idle) never exits: 0 marks a free slot */
	memset(slot, 0, sizeof(tab->exit_slots));
	for (i = 0; i < n; i++) {
		uint32_t h = ((uint32_t)ex[i].tid * 2654435761u) >> 20;

		if (ex[i].tid <= 0)
			continue;
		while (slot[h % SFILE_EXIT_SLOTS].tid && slot[h % SFILE_EXIT_SLOTS].tid != ex[i].tid)
			h++;
		slot[h % SFILE_EXIT_SLOTS] = ex[i];
	}
	for (sf = tab->task_sets; sf; sf = next) {
		const struct sfile_key *k = &sf->key;
		int32_t tid = k->tid >= 0 ? k->tid : k->anon_tgid;
		uint32_t h = ((uint32_t)tid * 2654435761u) >> 20;

		next = sf->task_next;
		if (tid <= 0 || sf == tab->pinned)
			continue;
		while (slot[h % SFILE_EXIT_SLOTS].tid && slot[h % SFILE_EXIT_SLOTS].tid != tid)
			h++;
		if (slot[h % SFILE_EXIT_SLOTS].tid != tid)
			continue;
		/* the thread of a split set; else an anon set, whose process went */
		if (k->tid >= 0 ? slot[h % SFILE_EXIT_SLOTS].pid != k->tgid :
				  slot[h % SFILE_EXIT_SLOTS].pid != tid)
			continue;
		sfile_destroy(tab, sf);
		closed++;
	}
	return closed;
}

/* @db is open on the file @st describes */
static bool sfile_same_file(const odb_t *db, const struct stat *st)
{
	struct stat o;

	return db->fd >= 0 && !fstat(db->fd, &o) && o.st_dev == st->st_dev && o.st_ino == st->st_ino;
}

/* close @db of @sf (still counted open) without freeing it: @sf may open it again */
static void sfile_close_one(struct sfile_table *tab, struct op_sfile *sf, odb_t *db)
{
	tab->stats->v[STAT_ODB_SATURATED] += db->saturated;
	odb_close(db);
	tab->nr_open--;
	sf->nr_open--;
}

/*
 * Rare: only when an open found the file held. One fstat per open file of
 * the table; no set is freed, so set pointers stay valid (no new epoch).
 */
bool sfile_hand_over(struct sfile_table *tab, int dfd, const char *base)
{
	struct op_sample_file *f;
	struct op_sfile *sf;
	struct stat st;
	size_t i;

	if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW))
		return false;
	for (sf = tab->lru.lru_next; sf != &tab->lru; sf = sf->lru_next) {
		for (i = 0; i < OP_MAX_EVENTS; i++) {
			if (sfile_same_file(&sf->files[i], &st)) {
				sfile_close_one(tab, sf, &sf->files[i]);
				return true;
			}
		}
		for (i = 0; i < EXT_MAX_COUNTERS; i++) {
			if (sf->vfiles[i] && sfile_same_file(sf->vfiles[i], &st)) {
				sfile_close_one(tab, sf, sf->vfiles[i]);
				free(sf->vfiles[i]);
				sf->vfiles[i] = NULL;
				return true;
			}
		}
		for (f = sf->pfiles; f; f = f->next) {
			if (sfile_same_file(&f->db, &st)) {
				/* the plugin keeps its pointer: sfile_file_add reopens */
				sfile_close_one(tab, sf, &f->db);
				return true;
			}
		}
	}
	return false;
}

void sfile_close_all(struct sfile_table *tab)
{
	uint32_t i;

	for (i = 0; tab->buckets && i < tab->nr_buckets; i++)
		while (tab->buckets[i])
			sfile_destroy(tab, tab->buckets[i]);
	tab->pinned = NULL;
	/* samples/current may be set aside next (rotation): no fd into it stays */
	sfile_dirs_close(tab);
}

void sfile_free(struct sfile_table *tab)
{
	sfile_close_all(tab);
	free(tab->buckets);
	free(tab->ibuckets);
	free(tab->abuckets);
	tab->buckets = NULL;
	tab->ibuckets = NULL;
	tab->abuckets = NULL;
}

static struct op_sfile *sfile_find_key(struct sfile_table *tab, const struct op_trans_view *t,
				       const struct sfile_key *k, uint32_t h);

/*
 * The name of @k's file of one counter (the same counter for every set):
 * two keys with the same one name the same files. FNV-1a of it in *@ih.
 * False when it cannot be named (its opens fail and are counted anyway).
 */
static bool sfile_ident(const struct sfile_table *tab, const struct sfile_key *k, int32_t tgid,
			char *buf, size_t len, uint32_t *ih)
{
	uint32_t counter = EXT_COUNTER_BASE;
	uint64_t x = 0xcbf29ce484222325ull;
	const char *c;

	if (tab->cfg.nr_events)
		counter = 0;
	else if (!tab->reg || !tab->reg->nr_counters)
		return false;
	if (sfile_key_name(tab, k, tgid, counter, NULL, buf, len) <= 0)
		return false;
	for (c = buf; *c; c++)
		x = (x ^ (unsigned char)*c) * 0x100000001b3ull;
	*ih = (uint32_t)(x ^ (x >> 32));
	return true;
}

struct op_sfile *sfile_lookup(struct sfile_table *tab, const struct op_trans_view *t)
{
	struct sfile_recent *r;
	struct sfile_key key;
	struct op_sfile *sf;
	uint32_t h;

	if (tab->recent_gen != tab->gen) {
		/* a set was freed: any entry may dangle */
		memset(tab->recent, 0, sizeof(tab->recent));
		tab->recent_gen = tab->gen;
	}
	if (!t->cookie || t->in_kernel < 0)
		return NULL;
	sfile_make_key(tab, t, &key);
	h = sfile_key_hash(&key);
	r = &tab->recent[h & (SFILE_RECENT - 1)];
	if (r->sf && r->hash == h && sfile_key_eq(&r->key, &key)) {
		sfile_touch(tab, r->sf);
		return r->sf;
	}
	sf = sfile_find_key(tab, t, &key, h);
	/* finding it may have evicted another set: then the entries are stale */
	if (sf && tab->recent_gen == tab->gen) {
		r->key = key;
		r->hash = h;
		r->sf = sf;
	}
	return sf;
}

struct op_sfile *sfile_find(struct sfile_table *tab, const struct op_trans_view *t)
{
	struct sfile_key key;

	if (!t->cookie || t->in_kernel < 0)
		return NULL;
	sfile_make_key(tab, t, &key);
	return sfile_find_key(tab, t, &key, sfile_key_hash(&key));
}

/*
 * sfile_find() with the key made already (@t->cookie set, @t->in_kernel >= 0,
 * @h = sfile_key_hash(@k)); @t gives what a new set records besides its key.
 */
static struct op_sfile *sfile_find_key(struct sfile_table *tab, const struct op_trans_view *t,
				       const struct sfile_key *k, uint32_t h)
{
	const struct ext_registry *reg = tab->reg;
	const struct sfile_key key = *k;
	struct op_sfile *sf;
	size_t i;

	struct sfile_alias *a;
	char ident[PATH_MAX];
	uint32_t ih = 0;
	bool named;

	for (sf = tab->buckets[h & (tab->nr_buckets - 1)]; sf; sf = sf->hnext) {
		if (sf->hash == h && sfile_key_eq(&sf->key, &key)) {
			sfile_lru_touch(tab, sf);
			return sf;
		}
	}
	for (a = tab->abuckets[h & (tab->nr_buckets - 1)]; a; a = a->hnext) {
		if (a->hash == h && sfile_key_eq(&a->key, &key)) {
			sfile_lru_touch(tab, a->to);
			return a->to;
		}
	}
	/* a new key: if a set already has its names, the key becomes an alias of it */
	named = sfile_ident(tab, &key, t->tgid, ident, sizeof(ident), &ih);
	for (sf = named ? tab->ibuckets[ih & (tab->nr_buckets - 1)] : NULL; sf; sf = sf->inext) {
		if (sf->ident_hash != ih || strcmp(sf->ident, ident))
			continue;
		a = calloc(1, sizeof(*a));
		if (!a) {
			tab->stats->v[STAT_NO_MEMORY]++;
			return NULL;
		}
		a->key = key;
		a->hash = h;
		a->to = sf;
		a->hnext = tab->abuckets[h & (tab->nr_buckets - 1)];
		tab->abuckets[h & (tab->nr_buckets - 1)] = a;
		a->to_next = sf->aliases;
		sf->aliases = a;
		tab->stats->v[STAT_SFILE_ALIASES]++;
		sfile_lru_touch(tab, sf);
		return sf;
	}
	/* bound the memory of sets that are not in use any more */
	if (tab->nr_sfiles >= 4 * tab->cfg.max_open_files + 64) {
		struct op_sfile *old = tab->lru.lru_next;

		if (old != &tab->lru && old == tab->pinned)
			old = old->lru_next;
		if (old != &tab->lru) {
			sfile_destroy(tab, old);
			tab->stats->v[STAT_SFILE_EVICTIONS]++;
		}
	}
	sf = calloc(1, sizeof(*sf));
	if (!sf) {
		tab->stats->v[STAT_NO_MEMORY]++;
		return NULL;
	}
	sf->key = key;
	sf->hash = h;
	sf->tab = tab;
	sf->tgid_hint = t->tgid;
	if (named && (sf->ident = strdup(ident))) {
		sf->ident_hash = ih;
		sf->inext = tab->ibuckets[ih & (tab->nr_buckets - 1)];
		tab->ibuckets[ih & (tab->nr_buckets - 1)] = sf;
	}
	for (i = 0; i < OP_MAX_EVENTS; i++)
		sf->files[i].fd = -1;
	sf->hnext = tab->buckets[h & (tab->nr_buckets - 1)];
	tab->buckets[h & (tab->nr_buckets - 1)] = sf;
	tab->nr_sfiles++;
	if (sfile_names_task(&key)) {
		sf->task_next = tab->task_sets;
		if (tab->task_sets)
			tab->task_sets->task_prev = sf;
		tab->task_sets = sf;
	}
	tab->stats->v[STAT_SFILE_CREATED]++;
	sfile_lru_touch(tab, sf);
	for (i = 0; reg && i < reg->nr_sfile; i++) {
		const struct ext_sfile_handlers *hd = &reg->sfile[i];

		if (hd->slot >= EXT_MAX_SFILE_SLOTS)
			continue;
		if (hd->ops.create) {
			int rc = hd->ops.create(hd->priv, sf, &sf->slot[hd->slot]);

			if (rc)
				sfile_logf(tab,
					   "sample-file create handler %zu (plugin slot %u) "
					   "failed (%s); the set is used with the state it left",
					   i, hd->slot, strerror(rc < 0 ? -rc : rc));
		}
	}
	return sf;
}

/*
 * Only the sets looked up since the last sync can have new samples (the
 * caller makes the sample path look its sets up again after each sync:
 * trans_forget_sfile), and every look-up moves its set to the recent end of
 * the LRU list: they are the run at that end stamped with this sync's
 * generation. A fleet host keeps thousands of sets open, most of them of
 * processes long gone: one msync each every sync_interval was most of the
 * periodic work (issue 20). The sets' own files need no call at all: their
 * pages are the page cache's (MAP_SHARED), which a crash of the daemon does
 * not lose and the kernel writes back by itself; msync(MS_ASYNC), all that
 * was done here, has been a no-op since Linux 2.6.19 - a syscall per file
 * per sync for nothing. What is left is the plugins' sync handlers.
 */
void sfile_sync_all(struct sfile_table *tab)
{
	const struct ext_registry *reg = tab->reg;
	struct op_sfile *sf;
	size_t i;

	for (sf = tab->lru.lru_prev; sf != &tab->lru && sf->used_sync == tab->sync_gen;
	     sf = sf->lru_prev) {
		for (i = 0; reg && i < reg->nr_sfile; i++) {
			const struct ext_sfile_handlers *h = &reg->sfile[i];

			if (h->slot < EXT_MAX_SFILE_SLOTS && h->ops.sync)
				h->ops.sync(h->priv, sf, sf->slot[h->slot]);
		}
	}
	tab->sync_gen++;
}
