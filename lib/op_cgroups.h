/*
 * op_cgroups.h - the per-session cgroup index, stats/cgroups: which cgroup
 * (and container, systemd unit) each process of the session ran in, as the
 * cgroup plugin read it once per process from /proc/PID/cgroup. The export
 * code turns it into pprof labels and opreport selects with cgroup:GLOB.
 * SPDX-License-Identifier: MIT
 *
 * The file, text, one process per line after a header line:
 *
 *   # oprofile-ng cgroups 1: tgid start cgroup container unit
 *   1234 5120000000 /system.slice/docker-0123...cdef.scope 0123...cdef docker-0123...cdef.scope
 *
 *   tgid       the process ID (decimal)
 *   start      its start time, ns after boot (/proc/PID/stat field 22,
 *              or the fork's time for a child learnt from its parent's
 *              line: the same within a clock tick), which tells a reused
 *              tgid apart
 *   cgroup     the cgroup v2 path (the v1 name=systemd or first hierarchy
 *              when the v2 line is absent or the root "/", as on hybrid
 *              hosts), "/" the root
 *   container  the container ID the path names (docker-ID.scope,
 *              cri-containerd-ID.scope, crio-ID.scope, libpod-ID.scope,
 *              /docker/ID, a kubepods .../ID: 64 hex digits), else "-"
 *   unit       the innermost systemd unit of the path (NAME.service or
 *              NAME.scope), else "-"
 *
 * Fields are separated by one space; a byte of cgroup or unit outside
 * [A-Za-z0-9/._:@=+,~-] is written %XX (hex), so a field never holds a
 * space or a newline. A process whose cgroup changed (moved, then exec'd)
 * has a later line; the last line of a tgid and start wins. Lines a reader
 * does not understand are counted and skipped, never fatal.
 */
#ifndef OP_CGROUPS_H
#define OP_CGROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OP_CGROUPS_HEADER "# oprofile-ng cgroups 1: tgid start cgroup container unit"
#define OP_CGROUP_PATH_MAX 1024 /* decoded; longer paths are cut at a component */
#define OP_CGROUP_ID_MAX 64
#define OP_CGROUP_UNIT_MAX 256
/* what is read of /proc/PID/cgroup: a v1 host with many hierarchies fits */
#define OP_CGROUP_PROC_MAX 8192

struct op_cgroup_entry {
	uint32_t tgid;
	uint64_t start_ns;
	char cgroup[OP_CGROUP_PATH_MAX + 1];
	char container[OP_CGROUP_ID_MAX + 1]; /* "" = none */
	char unit[OP_CGROUP_UNIT_MAX + 1];    /* "" = none */
	/* --- issue 20: reused pids --- */
	bool ambiguous; /* index only: the tgid was two processes in two cgroups */
};

/*
 * --- issue 20: reused pids ---
 * Lines of one tgid whose start times differ by more than this are two
 * processes (a reused pid). Less is one process: /proc's start time counts
 * clock ticks (10 ms), a fork's is the record's ns, and a process learnt
 * twice (forgotten past max_procs, then exec'd) may carry either.
 */
#define OP_CGROUP_SAME_START_NS UINT64_C(20000000)

/*
 * The cgroup path of /proc/PID/cgroup's text @buf (@len bytes, not
 * necessarily terminated): the v2 line "0::PATH", else the v1 line of
 * name=systemd, else the first; a path other than "/" before "/" (on a
 * hybrid v1/v2 host the v2 line may be the root while v1 names the
 * container). -EINVAL when no line has the form
 * ID:CONTROLLERS:/PATH (or PATH is longer than OP_CGROUP_PATH_MAX).
 */
int op_cgroup_from_proc(const char *buf, size_t len, char *path, size_t path_len);

/* The container ID and systemd unit named by cgroup @path into @e ("" if none). */
void op_cgroup_ids(const char *path, struct op_cgroup_entry *e);

/*
 * @e as one line of stats/cgroups (with its '\n') into @buf. The length,
 * or -ENOSPC when @len is too small (3 x the fields + 64 always suffices).
 */
int op_cgroup_format(const struct op_cgroup_entry *e, char *buf, size_t len);

/* One line (without its '\n') back into @e; 0 or -EINVAL. */
int op_cgroup_parse_line(const char *line, size_t len, struct op_cgroup_entry *e);

/*
 * Read stats/cgroups below @session_fd, the directory of one session
 * (samples/current, samples/rotate-...; no link followed, at most 64 MiB
 * read) and call @fn for every
 * valid line, in file order; *@bad (may be NULL) counts the lines skipped.
 * 0 (also when there is no such file: *@found false), -errno, or what @fn
 * returned when it was non-zero.
 */
int op_cgroups_load(int session_fd, int (*fn)(void *arg, const struct op_cgroup_entry *e),
		    void *arg, bool *found, size_t *bad);

/*
 * The index by process: for each tgid the last line of the file (a process
 * moved then exec'd has a later line, which decides). Shared by opreport's
 * cgroup: spec word and the export labels.
 *
 * issue 20: sample files without the --separate=cgroup split carry no start
 * time, so a tgid that was two processes (start times apart, see
 * OP_CGROUP_SAME_START_NS) in two different cgroups cannot say which of
 * them a sample was: its entry is marked ambiguous, op_cgroup_index_find()
 * does not return it, and @reused counts such tgids (the callers warn:
 * use --separate=cgroup, whose file names carry the cgroup itself). A pid
 * reused within one cgroup is not ambiguous: the label is true either way.
 */
struct op_cgroup_index {
	struct op_cgroup_entry *v; /* sorted by tgid, one per tgid */
	size_t n;
	bool found;    /* the session has a stats/cgroups */
	size_t bad;    /* lines skipped */
	size_t reused; /* issue 20: entries marked ambiguous */
};

/* Load it from @session_fd (as op_cgroups_load). 0, -errno; @x empty on error. */
int op_cgroup_index_load(int session_fd, struct op_cgroup_index *x);
/* The entry of @tgid, NULL: none, ambiguous (issue 20) or @tgid < 0. */
const struct op_cgroup_entry *op_cgroup_index_find(const struct op_cgroup_index *x, int32_t tgid);
/*
 * issue 20: do @a and @b, lines of one tgid, tell of two processes in two
 * different cgroups (the tgid then labels nothing)?
 */
bool op_cgroup_conflict(const struct op_cgroup_entry *a, const struct op_cgroup_entry *b);
/* A copy of @src into @dst; 0 or -ENOMEM. */
int op_cgroup_index_copy(struct op_cgroup_index *dst, const struct op_cgroup_index *src);
void op_cgroup_index_free(struct op_cgroup_index *x);

#endif /* OP_CGROUPS_H */
