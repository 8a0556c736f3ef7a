/* opcount.h - virtual per-process counters on the kernel's perf_event
 * counting mode: counter sets for a thread, a process or a CPU, inherited
 * by children, read by syscall or through the mmap'd control page, with
 * overflow signals for self-sampling.  Installed as <oprofile-ng/opcount.h>.
 * SPDX-License-Identifier: MIT
 */
#ifndef OPCOUNT_H
#define OPCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Error codes.  Every call returns 0 (or a count) on success and a negative
 * code on failure: either -errno from the kernel (-EACCES, -ESRCH, -EINVAL,
 * -ENOMEM, ...) or one of the library codes below (negated).  Nothing in the
 * library aborts or prints; oc_strerror() gives a short static text for any
 * code, and the oc_open()/oc_reconfigure() error buffer gets a full message
 * (subject, expected, found, what to do).
 */
enum oc_errcode {
	OC_E_BASE = 4096,
	OC_E_UNKNOWN_EVENT, /* the name is neither built-in nor known to libpfm4 */
	OC_E_UNSUPPORTED,   /* the name is known, the kernel has no PMU for it */
	OC_E_NO_PERMISSION, /* perf_event_paranoid / ptrace rules refuse */
	OC_E_THREAD_GONE,   /* the target thread or process has exited */
	OC_E_NO_CHILDREN,   /* children view asked of a set without OC_CHILDREN */
	OC_E_TOO_MANY,      /* more events than OC_MAX_EVENTS */
	OC_E_BAD_TARGET,    /* target kind/id/cpu not valid */
	OC_E_NOT_SINGLE,    /* the call needs a set with exactly one thread/cpu slot */
	OC_E_LAST
};

#define OC_MAX_EVENTS 32
#define OC_ERRMSG_LEN 512

/* Short static description of a code returned by this library. */
const char *oc_strerror(int code);

/* Detailed message holder filled by the calls that take one (may be NULL). */
struct oc_error {
	int code;
	char msg[OC_ERRMSG_LEN];
};

enum oc_target_kind {
	OC_TARGET_THREAD,  /* one thread: id = tid, 0 = the calling thread */
	OC_TARGET_PROCESS, /* all current threads of a process: id = pid, 0 = self */
	OC_TARGET_CPU,     /* everything on a CPU: cpu = N, or -1 for every online CPU */
};

struct oc_target {
	enum oc_target_kind kind;
	pid_t id;
	int cpu;
};

/* oc_open() flags */
enum {
	/* threads created by the target after opening count too (the kernel's
	 * inherit with inherit_thread: CLONE_THREAD children only) */
	OC_INHERIT_THREADS = 1u << 0,
	/* threads and forked processes count too; their counts are folded into
	 * the set by the kernel when they exit */
	OC_INHERIT = 1u << 1,
	/* OC_INHERIT and keep a twin set that inherits threads only, so that
	 * OC_VIEW_OWN and OC_VIEW_CHILDREN can be read apart (twice the fds) */
	OC_CHILDREN = 1u << 2,
	/* open disabled; the kernel starts counting at the target's next exec */
	OC_ENABLE_ON_EXEC = 1u << 3,
	/* for thread/process targets: one counter per online CPU, so counts can
	 * be read per CPU (oc_read_slot).  Such a counter runs only while the
	 * task is on its CPU, which the kernel reports as enabled-not-running;
	 * that is placement, not multiplexing, so these counts are never scaled
	 * and their enabled time is reported equal to running (time on that CPU) */
	OC_PER_CPU = 1u << 4,
	/* start counting right away (otherwise call oc_start) */
	OC_START = 1u << 5,
	/* an event the kernel refuses as not supported here (no PMU for a
	 * hardware event: OC_E_UNSUPPORTED) stays in the set without counters,
	 * as perf stat's "<not supported>": it reads 0 with enabled = running
	 * = 0, oc_event_supported() says false and why, oc_read_fast() and
	 * oc_overflow_arm() return -OC_E_UNSUPPORTED.  The other events count.
	 * An unknown name, a permission refusal, ... are still errors.  Applies
	 * to oc_reconfigure() too. */
	OC_SKIP_UNSUPPORTED = 1u << 6,
};

/* oc_reconfigure() flags */
enum {
	/* events present before and after keep their counts (perfctr's
	 * "preserve"); without it every count restarts at zero */
	OC_PRESERVE = 1u << 0,
};

/* What oc_read() sums. */
enum oc_view {
	OC_VIEW_ALL,      /* target + everything it inherited into (default) */
	OC_VIEW_OWN,      /* target and its threads, not forked children (OC_CHILDREN) */
	OC_VIEW_CHILDREN, /* forked descendants: exited ones as folded in by the
			   * kernel at their exit, live ones with their current
			   * counts (OC_CHILDREN); after the parent has waited for
			   * them this is exactly the exited children's sums */
};

struct oc_value {
	uint64_t count;   /* raw count since open/reset */
	uint64_t enabled; /* ns the event was enabled */
	uint64_t running; /* ns it was actually on a counter */
	uint64_t scaled;  /* count * enabled / running (== count when not multiplexed) */
	double percent;   /* 100 * running / enabled (100 when enabled == 0) */
};

struct oc_set;

/*
 * Open a counter set.  events: comma-separated names: task-clock, cpu-clock,
 * context-switches (cs), cpu-migrations (migrations), page-faults (faults),
 * minor-faults, major-faults, alignment-faults, emulation-faults; generic
 * hardware names (cycles, instructions, ...); any other name goes to libpfm4
 * (hardware catalogue).  A ":u" or ":k" suffix counts user or kernel only.
 * Without a suffix, a set refused for kernel counting (perf_event_paranoid
 * >= 2, unprivileged) is retried with user-only counting and the event's
 * name gets ":u" (as perf stat does).
 * Returns 0 and *out, or a negative code and err filled in.
 */
int oc_open(struct oc_set **out, const struct oc_target *target, const char *events,
	    unsigned int flags, struct oc_error *err);
/*
 * Open a set counting everything on the @ncpus CPUs of @cpus (a CPU target
 * over a list: one slot per listed CPU, in the list's order; OProfile's
 * ocount --cpu-list).  Every CPU must be online and listed once, else
 * -OC_E_BAD_TARGET with the CPU named in err.  Flags as oc_open().
 */
int oc_open_cpus(struct oc_set **out, const int *cpus, unsigned int ncpus, const char *events,
		 unsigned int flags, struct oc_error *err);
void oc_close(struct oc_set *set);

/* Replace the event list (same target and flags).  With OC_PRESERVE the
 * events kept keep their counts; new events start at zero; a running set
 * stays running. */
int oc_reconfigure(struct oc_set *set, const char *events, unsigned int flags, struct oc_error *err);

int oc_start(struct oc_set *set);
int oc_stop(struct oc_set *set);
/* Zero every count and the enabled/running times.  Done in the library (a
 * baseline per counter): the kernel's PERF_EVENT_IOC_RESET zeroes the count
 * (6.18 here: its live and exited children's too) but not the times, so the
 * scaling of the window after a reset would be wrong. */
int oc_reset(struct oc_set *set);

unsigned int oc_nevents(const struct oc_set *set);
/* Name as printed (with ":u" when the library had to fall back). */
const char *oc_event_name(const struct oc_set *set, unsigned int i);
/* Is event i counted?  False for an event kept by OC_SKIP_UNSUPPORTED (and
 * for an index out of range).  why (may be NULL) gets the kernel's refusal
 * as a full message, "" for a counted event; valid until the set changes. */
bool oc_event_supported(const struct oc_set *set, unsigned int i, const char **why);
/* Slots: (thread x cpu) counters the set sums over. */
unsigned int oc_nslots(const struct oc_set *set);
pid_t oc_slot_tid(const struct oc_set *set, unsigned int slot); /* -1 for CPU targets */
int oc_slot_cpu(const struct oc_set *set, unsigned int slot);   /* -1 for any CPU */

/* Read every event, summed over the slots: vals[oc_nevents()].  A slot whose
 * thread has exited still gives its final counts. */
int oc_read(struct oc_set *set, enum oc_view view, struct oc_value *vals);
/* Read one slot (a thread or CPU of the set). */
int oc_read_slot(struct oc_set *set, unsigned int slot, enum oc_view view, struct oc_value *vals);

/*
 * Fast read of one event of a single-slot set (OC_E_NOT_SINGLE otherwise).
 * Reads the mmap'd perf_event_mmap_page under its seqlock; when the kernel
 * publishes a hardware counter index and cap_user_rdpmc, the count is
 * offset + rdpmc(index - 1) without entering the kernel.  Otherwise the
 * user page cannot give a live count and the call falls back to read():
 * the page's offset field is only a snapshot refreshed when the event is
 * scheduled in or out, so for software events (and for inherited counters,
 * which the kernel refuses to mmap) this is the syscall path; so is a
 * counter of another thread (rdpmc reads the CPU the caller runs on, so the
 * user page serves self-monitoring only).  Either way
 * the result equals oc_read()'s count at the same instant.
 * Async-signal-safe.
 */
int oc_read_fast(struct oc_set *set, unsigned int event, uint64_t *count);

enum oc_fast_path {
	OC_FAST_RDPMC,   /* seqlock + rdpmc, no syscall */
	OC_FAST_SYSCALL, /* fallback to read() */
};
/* Which path oc_read_fast() takes for this event, and why (reason may be NULL). */
enum oc_fast_path oc_fast_path(const struct oc_set *set, unsigned int event, const char **reason);

/* Scaling helper (also used by oc_read): fills scaled and percent. */
void oc_value_scale(struct oc_value *v);

/*
 * Overflow notification for self-sampling: a separate sampling counter of
 * the same event on the set's single thread delivers signal signo (to that
 * thread, with si_fd = oc_overflow_fd()) every `period` events.  With
 * oneshot, the counter stops at each overflow until oc_overflow_resume() is
 * called (perfctr's resume; do it from the handler); otherwise it keeps
 * running.  The set's own counts are not disturbed.  Use a real-time signal
 * so that overflows close together are queued, not merged.  The signal goes
 * to the counted thread: arm it only on a thread that handles signo (the
 * default action of a real-time signal terminates the process).
 */
int oc_overflow_arm(struct oc_set *set, unsigned int event, uint64_t period, int signo,
		    bool oneshot, struct oc_error *err);
int oc_overflow_fd(const struct oc_set *set, unsigned int event); /* -1 if not armed */
/* Re-arm after an overflow (oneshot); async-signal-safe. */
int oc_overflow_resume(struct oc_set *set, unsigned int event);
int oc_overflow_disarm(struct oc_set *set, unsigned int event);

/* Built-in event names, NULL-terminated (for --list). */
const char *const *oc_builtin_events(void);
const char *oc_builtin_event_help(unsigned int i);

/* Format n with thousands separators ("1,234,567") into buf; returns buf. */
char *oc_format_count(uint64_t n, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* OPCOUNT_H */
