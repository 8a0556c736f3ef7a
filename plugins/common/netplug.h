/*
 * netplug.h - what the two network plugins (pprof pull, push) share,
 * compiled into each (a plugin never links another): KEY=VALUE argument
 * splitting, threads that never take the daemon's signals, the session
 * hook (SDK 1.2) their threads wait on, and the snapshot/delta/encode of
 * the session's counts. Their threads call only the host services SDK 1.2
 * allows a plugin thread (log, session_dir, config). Prefix np_.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PLUGINS_NETPLUG_H
#define OP_PLUGINS_NETPLUG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "oprofile_sdk.h"

/* ------------------------------------------------------------------ */
/* arguments                                                           */
/* ------------------------------------------------------------------ */

/*
 * Split @args ("k=v,k=v", as --ext-feature=NAME:ARGS gives them) and call
 * @set(priv, key, value, where) for each pair; @where names the pair for
 * messages ("--ext-feature=push:interval=x"). A token without '=' is an
 * error. Returns 0, the first non-zero @set result, or -EINVAL (logged).
 */
int np_parse_args(const struct op_host *h, op_ext_t *ctx, const char *plugin, const char *args,
		  int (*set)(void *priv, const char *key, const char *val, const char *where),
		  void *priv);

/*
 * The same settings from the config file, plugins.<plugin>.<key>: each of
 * @strs read as a string, @ints as an integer, @bools as a boolean ("yes"
 * or "no"), each passed to @set as the arguments are, @where naming the
 * key ("config plugins.push.url"). Each list ends with NULL (a list may be
 * NULL). Returns 0, the host's error for a type mismatch (logged with
 * file:line), or the first non-zero @set result.
 */
int np_read_config(const struct op_host *h, op_ext_t *ctx, const char *plugin,
		   const char *const *strs, const char *const *ints, const char *const *bools,
		   int (*set)(void *priv, const char *key, const char *val, const char *where),
		   void *priv);

/* ------------------------------------------------------------------ */
/* threads                                                             */
/* ------------------------------------------------------------------ */

/*
 * pthread_create with every signal blocked in the new thread: oprofiled
 * takes SIGTERM/SIGUSR1/... through a signalfd on its own thread, and a
 * thread that left them unblocked would be killed by their default action.
 */
int np_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);
/*
 * The stack of every network-plugin thread (np_thread_start and
 * libmicrohttpd's): what they run (a session walk 64 directories deep at
 * most, the encoder, libcurl with TLS) needs tens of KiB; 256 KiB leaves
 * room and bounds the address space a connection costs.
 */
#define NP_THREAD_STACK (256u * 1024)

/* ------------------------------------------------------------------ */
/* the session: hook, dumps, snapshots                                 */
/* ------------------------------------------------------------------ */

/* the counts of one samples directory at one time (C4's profile model) */
struct np_snap;

/*
 * Read the sample files below @dir (samples/current or a rotated session,
 * as opreport reads them: shared mmaps) into *out; 0 or -errno with @err.
 */
int np_snap_read(const char *dir, struct np_snap **out, char *err, size_t err_len);
void np_snap_free(struct np_snap *s);
/*
 * The gzip'd profile.proto of @now minus @before (@before NULL: all of
 * @now) over the wall-clock interval [@t0_ns, @t1_ns], addresses and build
 * IDs, no symbols (the fleet default). *buf is malloc'd. *hz (may be NULL)
 * receives the sampling rate in Hz (0 when unknown). With @skip_empty, a
 * difference without samples is not encoded: -ENODATA, *buf untouched.
 * 0 or -errno with @err.
 */
int np_snap_encode(const struct np_snap *now, const struct np_snap *before, uint64_t t0_ns,
		   uint64_t t1_ns, bool skip_empty, void **buf, size_t *len, uint64_t *hz,
		   char *err, size_t err_len);

/*
 * What a network plugin knows of the session, kept up to date by the SDK
 * 1.2 session hook on the daemon's thread and read by the plugin's
 * threads: where samples/current is, how many dumps and rotations there
 * were, whether the daemon stops.
 */
struct np_session {
	const struct op_host *host;
	op_ext_t *ctx;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started, stopping;
	uint64_t dumps, rotations;
	char dir[4096];       /* samples/current */
	char prev_dir[4096];  /* the last rotated session */
	uint64_t prev_end_ns; /* when it ended (wall clock) */
	/* the plugin's: threads start at START (after any fork), stop at STOP */
	int (*start)(void *priv);
	void (*stop)(void *priv);
	/* ROTATED, on the daemon's thread, after dir/prev_dir were updated */
	void (*rotated)(void *priv, const char *prev_dir, uint64_t end_ns);
	void *priv;
};

int np_session_init(struct np_session *s, const struct op_host *h, op_ext_t *ctx);
/*
 * A plugin's state: @size zeroed bytes holding a struct np_session at
 * @sess_off (initialised), kept as the plugin's user data and freed by
 * @free_func (which calls np_session_fini). NULL with *rc set on failure
 * (logged); the host frees nothing of it then.
 */
void *np_state_new(const struct op_host *h, op_ext_t *ctx, size_t size, size_t sess_off,
		   void (*free_func)(void *), int *rc);
void np_session_fini(struct np_session *s);
/* register the session hook and the stats section (in ext_init); -ENOSYS before SDK 1.2 */
int np_session_register(struct np_session *s, int (*start)(void *), void (*stop)(void *),
			const struct op_stats_ops *stats, void *priv);
/* wake every thread waiting in np_session_dump/np_session_wait: they return -ECANCELED */
void np_session_stop(struct np_session *s);
/*
 * From a plugin thread: ask the daemon for a dump (SIGUSR1, what opcontrol
 * --dump does, but without the statistics block in the log) and wait up to @timeout_ms for the DUMP event that says the
 * files are current. 0, -ETIMEDOUT or -ECANCELED (the daemon stops).
 */
int np_session_dump(struct np_session *s, unsigned timeout_ms);
/* sleep up to @ms unless the daemon stops (-ECANCELED) */
int np_session_wait(struct np_session *s, uint64_t ms);
/* samples/current's path, the rotation count, the last rotated session and its end */
void np_session_where(struct np_session *s, char *dir, size_t len, uint64_t *rotations, char *prev,
		      size_t prev_len, uint64_t *prev_end_ns);
/*
 * The pull request: dump, snapshot, wait @seconds, dump, snapshot, and the
 * difference encoded (np_snap_encode). A rotation during the wait ends
 * the interval at the rotation (the rotated session's final counts).
 */
int np_session_delta(struct np_session *s, unsigned seconds, void **buf, size_t *len, char *err,
		     size_t err_len);

/* monotonic and wall-clock time in ns */
uint64_t np_now_mono_ns(void);
uint64_t np_now_wall_ns(void);

#endif /* OP_PLUGINS_NETPLUG_H */
