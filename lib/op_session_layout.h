/*
 * op_session_layout.h - the names of the files and folders of a session
 * directory, spelled once for the daemon and plugins that write them and
 * the tools (opreport, opcontrol) that read them. Header only.
 * SPDX-License-Identifier: MIT
 *
 *   <session>/                       --session-dir (defaults below)
 *     abi                            type sizes and offsets (op_write_abi)
 *     lock                           the daemon's pid, locked while it runs
 *     control                        the daemon's control socket (opcontrol)
 *     samples/
 *       oprofiled.log                log and periodic statistics
 *       current/                     the running session: sample files and
 *         stats/                     lost-sample counters, one file each
 *           total_samples, lost_*    (OP_STATS_* below)
 *           throttled/EVENT          events the kernel throttled
 *           kallsyms, modules        kernel symbol snapshot (kernel plugin)
 *           buildids                 build ID, size, mtime of each sampled image (op_buildid.h)
 *           cgroups                  cgroup of each process (cgroup plugin)
 *         callgraph/stacks           whole-stack table (op_cg_format.h)
 *       previous/                    set aside by a reset or a restart
 *       rotate-TIME-N/, NAME/        saved by a rotation or a save
 *       .kallsyms/HASH-SIZE          one copy of each distinct kallsyms
 *                                    snapshot; sessions' stats/kallsyms are
 *                                    hard links to it (op_ksyms_store.h)
 */
#ifndef OP_SESSION_LAYOUT_H
#define OP_SESSION_LAYOUT_H

/* default session directories: the system daemon's, a launched command's (in its cwd) */
#define OP_SESSION_DIR_SYSTEM "/var/lib/oprofile"
#define OP_SESSION_DIR_LAUNCH "oprofile_data"

/* in the session directory */
#define OP_SESSION_ABI "abi"
#define OP_SESSION_LOCK "lock"
#define OP_SESSION_CONTROL "control"
#define OP_SESSION_SAMPLES "samples"

/* in samples/ */
#define OP_SESSION_LOG "oprofiled.log"
#define OP_SESSION_CURRENT "current"
#define OP_SESSION_PREVIOUS "previous"
/* a dot name: no saved session can be called so (rotate_name_ok) */
#define OP_SESSION_KSYMS_STORE ".kallsyms"

/* in samples/<session>/ (current, previous or a saved one) */
#define OP_SESSION_STATS "stats"
#define OP_SESSION_CG_DIR "callgraph"

/* in stats/ */
#define OP_SESSION_THROTTLED "throttled"
#define OP_SESSION_KALLSYMS "kallsyms"
#define OP_SESSION_MODULES "modules"
#define OP_SESSION_BUILDIDS "buildids" /* issue 19: lib/op_buildid.h */
#define OP_SESSION_CGROUPS "cgroups"   /* the cgroup plugin's index (op_cgroups.h) */

/* in callgraph/ */
#define OP_SESSION_CG_STACKS "stacks"

/* relative to the session directory */
#define OP_SESSION_LOG_PATH OP_SESSION_SAMPLES "/" OP_SESSION_LOG
#define OP_SESSION_CURRENT_PATH OP_SESSION_SAMPLES "/" OP_SESSION_CURRENT

/* relative to samples/<session>/ */
#define OP_SESSION_KALLSYMS_PATH OP_SESSION_STATS "/" OP_SESSION_KALLSYMS
#define OP_SESSION_MODULES_PATH OP_SESSION_STATS "/" OP_SESSION_MODULES
#define OP_SESSION_CGROUPS_PATH OP_SESSION_STATS "/" OP_SESSION_CGROUPS
#define OP_SESSION_THROTTLED_PATH OP_SESSION_STATS "/" OP_SESSION_THROTTLED
#define OP_SESSION_CG_STACKS_PATH OP_SESSION_CG_DIR "/" OP_SESSION_CG_STACKS

/* the counter files in stats/ that opreport reads (decimal count, '\n') */
#define OP_STATS_TOTAL_SAMPLES "total_samples"
#define OP_STATS_LOST_KERNEL "lost_kernel"
#define OP_STATS_LOST_NO_MAPPING "lost_no_mapping"
#define OP_STATS_LOST_NO_APP_USER "lost_no_app_for_user_sample"
#define OP_STATS_LOST_INVALID_DOMAIN "lost_invalid_domain"
#define OP_STATS_LOST_SAMPLEFILE "lost_samplefile"
#define OP_STATS_KLOST_SAMPLES "lost_samples_by_kernel"
#define OP_STATS_KLOST_SIDEBAND "lost_sideband_by_kernel"
#define OP_STATS_KLOST_RECORDS "lost_records_by_kernel"

#endif /* OP_SESSION_LAYOUT_H */
