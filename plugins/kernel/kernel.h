/*
 * kernel.h - internal state of the kernel plugin (kernel.c), shared with its
 * unit test only. Not part of the SDK: the daemon sees the plugin through
 * its descriptor and the op_kernel_ops it registers.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PLUGIN_KERNEL_H
#define OP_PLUGIN_KERNEL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "oprofile_sdk.h"

/* without kallsyms addresses every kernel pc is one image from here up */
#define KERNEL_HALF_START UINT64_C(0xffffffff80000000)
#define KERNEL_MAX_PSEUDO 16
#define KERNEL_MOD_NAME 64

struct kernel_module {
	uint64_t start, end; /* [start, end) */
	op_cookie_t cookie;
	char name[KERNEL_MOD_NAME];
};

/* code under a kallsyms pseudo-module ("[bpf]"): attributed to the kernel */
struct kernel_pseudo {
	uint64_t start, end;
	char name[KERNEL_MOD_NAME];
};

struct kernel_cache {
	uint64_t lo, hi; /* [lo, hi) the cached answer covers; hi == lo: empty */
	struct op_kernel_image img;
	bool is_module;
};

/* a message of the kallsyms pass, logged when the pass is joined */
#define KERNEL_MAX_DEFERRED 16
#define KERNEL_MSG_LEN 320
struct kernel_msg {
	int level;
	char text[KERNEL_MSG_LEN];
};

struct kernel_state {
	op_ext_t *ctx;
	const struct op_host *host;
	char *proc_root;
	char *vmlinux; /* vmlinux=PATH / plugins.kernel.vmlinux, or NULL */

	/* the kernel image */
	op_cookie_t kernel_cookie;
	uint64_t kstart, kend;
	bool no_addresses; /* kallsyms showed only zero addresses */

	struct kernel_pseudo pseudo[KERNEL_MAX_PSEUDO];
	unsigned nr_pseudo;

	/* loaded modules, sorted by start, not overlapping */
	struct kernel_module *mods;
	unsigned nr_mods, cap_mods;

	struct kernel_cache cache;

	/* module re-read rate limit */
	uint64_t last_reread_ns;
	uint64_t (*now_ns)(void *arg);
	void *now_arg;

	/*
	 * stats. The core caches the last image it got, so resolve() runs on
	 * the core's cache misses: the lookups count those, not samples. Every
	 * unresolved pc does reach resolve(), so `unresolved` counts samples.
	 */
	/*
	 * The kallsyms pass (read, parse, snapshot: mostly the kernel's time to
	 * format /proc/kallsyms) runs on a helper thread from init until the
	 * first need: kernel_join(). Everything above that the pass fills
	 * (kstart, kend, no_addresses, pseudo, kallsyms counters,
	 * snapshot_written) is the thread's until then.
	 */
	pthread_t ks_thread;
	bool ks_pending;                /* main thread's: a pass to join (or to redo) */
	bool ks_threaded;               /* ks_thread runs it */
	bool ks_forked;                 /* set in a forked child: the thread stayed in the parent */
	struct kernel_state *next_live; /* the states a fork must see (kernel_atfork_child) */
	int ks_dirfd;                   /* stats directory of the snapshot, -1: none */
	int ks_samples_fd;              /* samples/, for the snapshot's content store */
	pid_t ks_owner;                 /* the process whose thread runs the pass */
	void *ks_out;                   /* struct kernel_out of the snapshot being written */
	bool deferring;                 /* kernel_log() keeps messages in deferred[] */
	struct kernel_msg deferred[KERNEL_MAX_DEFERRED];
	unsigned nr_deferred, deferred_dropped;

	uint64_t kernel_lookups, module_lookups, unresolved;
	uint64_t rereads, rereads_skipped;
	uint64_t kallsyms_lines, kallsyms_bad, text_symbols;
	uint64_t modules_bad, modules_overlap;
	bool snapshot_written;
	bool snapshot_shared; /* an earlier session's copy of the same content is used */
};

/* Re-read interval for /proc/modules on an unknown kernel address. */
#define KERNEL_REREAD_NS UINT64_C(1000000000)

/* Test hook: the clock the re-read rate limit uses (default CLOCK_MONOTONIC_COARSE:
 * a vDSO read, never a system call, plenty for a one-second limit). */
void kernel_set_clock(struct kernel_state *st, uint64_t (*now_ns)(void *arg), void *arg);

/* Test hook: wait for the kallsyms pass started at init (kernel_join()). */
void kernel_wait(struct kernel_state *st);

#endif /* OP_PLUGIN_KERNEL_H */
