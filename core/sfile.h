/*
 * sfile.h - the sample-file hash: one set of sample files (op_sfile_t) per
 * context that --separate makes distinct, each with one odb per counter
 * opened on first use, plugin slots and plugin-opened files; LRU-bounded
 * open files. Files are created below samples/current/ only, through
 * directory fds, never following symlinks; a root daemon refuses (logs and
 * counts as lost) a file or directory there that another user owns or may
 * write.
 *
 * Plugin sfile handlers: the core calls create when a set is made, close
 * when it is evicted or closed (SIGHUP, exit) and sync with every msync;
 * get_file and dup are for the plugin's own use (it opens its files with
 * the sample_file_open service, which lands in sfile_open_spec).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_SFILE_H
#define OP_CORE_SFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cookie.h"
#include "ext.h"
#include "log.h"
#include "odb.h"
#include "options.h"
#include "stats.h"
#include "task.h"

/* A core event as it appears in file names and headers. */
struct sfile_event {
	char name[64];  /* "TIMER", "CPU_CLK_UNHALTED" */
	uint32_t event; /* header ctr_event */
	uint32_t um;    /* header ctr_um, name field */
	uint64_t count; /* header ctr_count, name field */
};

struct sfile_key {
	op_cookie_t app; /* 0 when the name's A part is the image itself */
	op_cookie_t cookie;
	int32_t tgid, tid, cpu; /* -1 when not separated */
	int32_t anon_tgid;      /* owner of an anon region, else -1 */
	int32_t in_kernel;
	/* issue 20: the process's split key with --separate=cgroup, else 0 (in what was padding) */
	op_cookie_t split;
	uint64_t anon_start, anon_end;
};

struct op_sample_file {
	odb_t db;
	struct op_file_spec spec;
	struct op_sfile *sf;
	struct sfile_table *tab;
	struct op_sample_file *next; /* in sf->pfiles */
	/* changed under the daemon: not written again; fd < 0 without it: handed
	 * over to another set of the same name, reopened on the next add */
	bool gave_up;
};

/*
 * Another key whose files have the names of set @to (a binary replaced
 * while a process runs the old one, a user image seen in kernel mode...):
 * it uses @to, so that each file has one writer. Freed with @to.
 */
struct sfile_alias {
	struct sfile_key key;
	uint32_t hash;
	struct op_sfile *to;
	struct sfile_alias *hnext;   /* in the table's alias buckets */
	struct sfile_alias *to_next; /* in to->aliases */
};

struct op_sfile {
	struct sfile_key key;
	uint32_t hash;
	struct op_sfile *hnext;
	/* the set's name (its file of one counter), in the table's name index */
	char *ident;
	uint32_t ident_hash;
	struct op_sfile *inext;
	struct sfile_alias *aliases;
	struct op_sfile *lru_prev, *lru_next;
	/* sets naming a thread or an anon region's process (sfile_close_exited's) */
	struct op_sfile *task_prev, *task_next;
	odb_t files[OP_MAX_EVENTS];      /* fd < 0: not open */
	odb_t *vfiles[EXT_MAX_COUNTERS]; /* virtual counters, allocated on first use */
	struct op_sample_file *pfiles;   /* plugin files and core arc files */
	void *slot[EXT_MAX_SFILE_SLOTS];
	unsigned nr_open;
	/* counters whose file could not be opened: not retried until the set is
	 * made again (eviction, SIGHUP), so a failing path costs no syscall per
	 * sample - but for want of resources (transient), after tab->retry_ms */
	uint32_t failed; /* core counters */
	uint64_t vfailed[EXT_MAX_COUNTERS / 64];
	/* of the failed ones, those given up as changed under the daemon (the loss's cause) */
	uint32_t changed;
	uint64_t vchanged[EXT_MAX_COUNTERS / 64];
	/* of the failed ones, those that failed for want of descriptors or memory
	 * (EMFILE, ENFILE, ENOMEM, EBUSY): tried again after tab->retry_ms */
	uint32_t transient;
	uint64_t vtransient[EXT_MAX_COUNTERS / 64];
	int32_t tgid_hint; /* a process of this set (names callee anon regions) */
	struct sfile_table *tab;
	uint32_t used_sync; /* tab->sync_gen when last looked up: sfile_sync_all */
};

struct sfile_config {
	int current_dirfd;       /* <session>/samples/current (not owned) */
	unsigned separate;       /* enum op_separate */
	unsigned max_open_files; /* >= 1 */
	uint32_t cpu_type;
	double cpu_speed;
	struct sfile_event events[OP_MAX_EVENTS];
	unsigned nr_events;
};

/*
 * Sets used recently, by key (direct-mapped on its hash): tasks come back,
 * a task's kernel and user samples alternate, and unless --separate asks
 * for it, new processes of an image use the set of the one before.
 */
#define SFILE_RECENT 128
/*
 * directory fds kept open by the sample-file table, keyed by path below
 * samples/current, the least recently used closed first: sample-file
 * directories and their ancestors, so a new (cgroup, binary) pair's files
 * are made from the deepest directory that is open (issue 20: churn)
 */
#define SFILE_DIRS 64
/* sfile_close_exited's table of exited threads (twice the most it takes) */
#define SFILE_EXIT_SLOTS 4096
struct sfile_recent {
	struct sfile_key key;
	uint32_t hash;
	struct op_sfile *sf; /* NULL: free slot */
};

struct sfile_table {
	struct sfile_config cfg;
	struct cookie_table *cookies;
	const struct ext_registry *reg; /* may be NULL */
	struct op_stats *stats;
	struct op_log *log;     /* may be NULL */
	struct log_limit limit; /* of error lines */
	bool verbose;
	struct op_sfile **buckets;
	uint32_t nr_buckets;
	uint32_t nr_sfiles;
	struct op_sfile **ibuckets;    /* sets by name (ident_hash), nr_buckets of them */
	struct sfile_alias **abuckets; /* aliases by key hash, nr_buckets of them */
	unsigned nr_open;              /* open sample files, all sets */
	struct op_sfile lru;           /* sentinel: lru.lru_next is the least recent */
	struct op_sfile *pinned;       /* the current set (sfile_pin): never evicted */
	uint64_t gen;                  /* bumped whenever a set is freed: sfile_epoch() */
	struct sfile_recent recent[SFILE_RECENT];
	uint64_t recent_gen; /* gen the recent entries are valid for */
	bool no_openat2;     /* openat2() refused (ENOSYS, EPERM): walk components */
	/* directories of sample files opened lately and their ancestors
	 * (sfile_open.c): each new process of an image makes its files in the
	 * same few directories, a new pair below the same few ancestors */
	struct sfile_dir {
		char *path; /* below samples/current, no trailing '/'; NULL: free slot */
		size_t len;
		uint32_t hash;
		uint32_t used; /* dir_clock at the last use: the smallest is closed first */
		bool checked;  /* root: made by us or fstat-checked as a sample-file directory */
		int fd;
	} dirs[SFILE_DIRS];
	uint32_t dir_clock;
	/* sets whose key names a thread or an anon region's process: the
	 * ones sfile_close_exited may close (a list: it passes over them only) */
	struct op_sfile *task_sets;
	uint32_t sync_gen; /* bumped by each sfile_sync_all */
	bool fd_short;     /* an EMFILE was seen: no directory is kept open any more */
	/* scratch of sfile_close_exited: exited threads by tid */
	struct task_exited exit_slots[SFILE_EXIT_SLOTS];
	uint64_t retry_ms; /* log_now_ms() after which transient open failures are retried */
	/* euid 0 (sfile_init): a sample file, and its directory, must be root-owned
	 * and not writable by group or other, the file with one link - one fstat
	 * each per open, never per sample */
	bool strict;
};

int sfile_init(struct sfile_table *tab, const struct sfile_config *cfg, struct cookie_table *cookies,
	       const struct ext_registry *reg, struct op_stats *stats, struct op_log *log);
/* Where messages go (a log reopen needs nothing: the op_log moves). */
void sfile_set_log(struct sfile_table *tab, struct op_log *log);
/* Log every file opened (--verbose=sfile). */
void sfile_set_verbose(struct sfile_table *tab, bool verbose);
/* Close every file (plugin close handlers first) and free everything. */
void sfile_free(struct sfile_table *tab);

/* The key of the set a sample in context @t belongs to. */
void sfile_make_key(const struct sfile_table *tab, const struct op_trans_view *t,
		    struct sfile_key *key);

/*
 * The epoch of the table: a set pointer a caller keeps stays valid while
 * the epoch it was obtained in lasts (a set freed, by eviction or
 * sfile_close_all, ends it).
 */
static inline uint64_t sfile_epoch(const struct sfile_table *tab)
{
	return tab->gen;
}

/* The set the caller uses now (NULL: none): eviction leaves it alone. */
static inline void sfile_pin(struct sfile_table *tab, struct op_sfile *sf)
{
	tab->pinned = sf;
}

/* hash of a set's key (the table's buckets, trans' recent sets) */
static inline uint32_t sfile_key_hash(const struct sfile_key *k)
{
	uint64_t h = k->app * 0x9e3779b97f4a7c15ull;

	h ^= k->cookie + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
	h ^= ((uint64_t)(uint32_t)k->tgid << 32 | (uint32_t)k->tid) + (h << 6) + (h >> 2);
	h ^= ((uint64_t)(uint32_t)k->cpu << 32 | (uint32_t)k->anon_tgid) + (h << 6) + (h >> 2);
	h ^= k->anon_start + ((uint64_t)k->split << 32 | (uint32_t)k->in_kernel) + (h << 6) +
	     (h >> 2);
	h ^= k->anon_end + (h << 6) + (h >> 2);
	return (uint32_t)(h ^ (h >> 32));
}

/* the same set (padding aside) */
static inline bool sfile_key_eq(const struct sfile_key *a, const struct sfile_key *b)
{
	return a->app == b->app && a->cookie == b->cookie && a->tgid == b->tgid &&
	       a->tid == b->tid && a->cpu == b->cpu && a->anon_tgid == b->anon_tgid &&
	       a->in_kernel == b->in_kernel && a->anon_start == b->anon_start &&
	       a->anon_end == b->anon_end && a->split == b->split;
}

/* Find or create the set for @t (NULL: ENOMEM, or no image in @t). Marks it recent. */
struct op_sfile *sfile_find(struct sfile_table *tab, const struct op_trans_view *t);
/*
 * sfile_find() through the recent sets first (trans, after a context code):
 * a set used lately costs a hash and a compare. Does not pin.
 */
struct op_sfile *sfile_lookup(struct sfile_table *tab, const struct op_trans_view *t);
/* Add @count at @key in @sf's file of @counter (core or virtual), opening it. */
int sfile_log(struct sfile_table *tab, struct op_sfile *sf, uint32_t counter, uint64_t key,
	      uint32_t count);

/*
 * HOT. Count one sample at @key in the file of core counter @counter of @sf
 * when that file is open (one odb update, inline). false: not done, ask
 * sfile_add_sample() (the file is not open, or the update failed: no space
 * to grow, file changed under us).
 */
static inline bool sfile_count_open(const struct sfile_table *tab, struct op_sfile *sf,
				    uint64_t counter, uint64_t key)
{
	odb_t *db;

	if (counter >= tab->cfg.nr_events)
		return false;
	db = &sf->files[counter];
	if (__builtin_expect(db->fd < 0, 0))
		return false;
	return odb_update_hot(db, key, 1) == 0;
}

/* HOT. One sample at @key of @counter in @sf: sfile_count_open(), else sfile_log(). */
static inline int sfile_add_sample(struct sfile_table *tab, struct op_sfile *sf, uint32_t counter,
				   uint64_t key)
{
	if (sfile_count_open(tab, sf, counter, key))
		return 0;
	return sfile_log(tab, sf, counter, key, 1);
}
/* Open (or return the already open) file @spec of @sf; NULL + log on error. */
struct op_sample_file *sfile_open_spec(struct sfile_table *tab, struct op_sfile *sf,
				       const struct op_file_spec *spec);
int sfile_file_add(struct op_sample_file *f, uint64_t key, uint32_t count);
int sfile_file_sync(struct op_sample_file *f);
void sfile_file_close(struct op_sample_file *f);

/*
 * Another part of the daemon ran out of descriptors (EMFILE): close half of
 * the sample files (they reopen on their next sample) and keep fewer open
 * from now on, as after an EMFILE of a sample file's own open.
 */
void sfile_yield_fds(struct sfile_table *tab);
/*
 * msync the open files of every set looked up since the last call and call
 * plugins' sync handlers for them; the caller drops its cached set pointers
 * after it (trans_forget_sfile) so that the next samples look theirs up.
 */
void sfile_sync_all(struct sfile_table *tab);
/*
 * Close and forget the sets no sample can come to any more: those of the
 * threads @ex[0..n) (--separate=thread) and the anon-region sets of the
 * processes among them (pid == tid) whose mappings went with them. The
 * caller drops its cached set pointers first (trans_forget_sfile). Returns
 * the number of sets closed.
 */
unsigned sfile_close_exited(struct sfile_table *tab, const struct task_exited *ex, size_t n);
/* Close and forget every set (SIGHUP, exit). */
void sfile_close_all(struct sfile_table *tab);
/*
 * Build @sf's file name for @counter/@spec (relative to samples/current)
 * into @buf. Returns its length or -errno.
 */
int sfile_name(const struct sfile_table *tab, const struct op_sfile *sf, uint32_t counter,
	       const struct op_file_spec *spec, char *buf, size_t len);

#endif /* OP_CORE_SFILE_H */
