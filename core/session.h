/*
 * session.h - the session directory: creation and checks, the lock file,
 * the abi file, samples/current rotation, the log file.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_SESSION_H
#define OP_CORE_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

struct session {
	char *dir; /* absolute, normalised, no symbolic link in it */
	int dirfd;
	int lockfd;
	int samples_fd; /* <dir>/samples */
	int current_fd; /* <dir>/samples/current */
	FILE *log;
	char *log_file; /* NULL: samples/oprofiled.log */
	bool created;   /* session_open created the directory itself */
	bool staged;    /* the old samples/current waits in SESSION_STAGED */
	bool strict;    /* euid 0: reuse only root-owned entries no one else may write */
	bool shared;    /* session_group: directories 02750, files 0640, group gid */
	gid_t gid;      /* session_group's gid (shared only) */
	bool umask_set; /* session_open set the umask; old_umask comes back at close */
	mode_t old_umask;
};

/* How to open a session (the daemon's options). */
struct session_conf {
	const char *dir;      /* --session-dir: absolute, or relative to the cwd */
	bool append;          /* --append: keep samples/current */
	const char *log_file; /* --log-file, NULL: samples/oprofiled.log */
	const char *group;    /* session_group: share with this group, NULL: none */
};

/*
 * Without --append the old samples/current is renamed to this name (below
 * samples/) and only becomes samples/previous in session_commit(), once
 * start-up succeeded: a failed start (bad plugin, bad event, ...) puts it
 * back as samples/current, so nothing recorded is lost.
 */
#define SESSION_STAGED "previous.staged"

/*
 * Open the session directory @c->dir, creating what is missing of it: the
 * path is normalised ("//", ".", "..", a trailing "/") and walked from "/"
 * one component at a time, never through a symbolic link (a link anywhere
 * in it is refused, the last component included), nor to "/" itself.
 * Refuse a non-directory or a directory we cannot write; take the lock
 * (another daemon: -EBUSY, nothing touched); write abi; put back a
 * samples/current an interrupted start left staged; unless @c->append stage
 * samples/current (see SESSION_STAGED); open the log. Files met on the way
 * (lock, log) must be regular files: a FIFO is refused, never waited on.
 *
 * As root (the DESIGN.md trust model): every directory above the session
 * must be root-owned and not writable by group or other (a sticky one such
 * as /tmp is accepted above a root-owned entry: no one else may rename or
 * replace that); the session directory and every entry of it that is reused
 * (lock, samples, samples/current, the staged current, the log) must be
 * root-owned and not writable by group or other, files with one link: else
 * -EPERM and a message naming the path and its owner. The umask becomes
 * 077 (027 with a group) until session_close, so that all the daemon
 * creates is private: directories 0700, files 0600. An existing session
 * (it holds samples/) of another mode is tightened to 0700 and the log says
 * so.
 *
 * @c->group (any user): the session is shared with that group instead:
 * the session directory, samples/ and samples/current get the group and
 * mode 02750 (new entries inherit the group; files are 0640).
 *
 * On error a message goes to @err and -errno is returned.
 */
int session_open_conf(struct session *s, const struct session_conf *c, char *err, size_t err_len);
/* session_open_conf() without a group */
int session_open(struct session *s, const char *dir, bool append, const char *log_file, char *err,
		 size_t err_len);
/*
 * Start-up succeeded: the staged old samples/current replaces
 * samples/previous. No-op with --append or when there was no current.
 */
int session_commit(struct session *s);
/* (Re)write our pid into the lock file (after daemonizing). */
int session_write_pid(struct session *s);
/*
 * SIGHUP: open samples/current again, creating it if it was removed (a
 * reset); the fd number stays the same. The checks of session_open apply
 * (a refused current is named in the log). 0 or -errno.
 */
int session_reopen_current(struct session *s);
/*
 * SIGHUP: reopen the log file (logrotate moved it), with session_open's
 * checks; on error the old log stays, with a line saying why. 0 or -errno.
 */
int session_reopen_log(struct session *s);
/*
 * May a root daemon reuse the file or directory @st (owner root, not
 * writable by group or other, a file with one link)? 0, or -EPERM with
 * "@subject is owned by uid N (name), not root" or "@subject is writable
 * by group or other (mode 0NNN)" or "@subject has N hard links" in @err.
 */
int session_trusted(const struct stat *st, const char *subject, char *err, size_t err_len);
/*
 * Remove the lock file and close everything; a rotation not committed is
 * rolled back (the new samples/current removed, the staged one put back).
 */
void session_close(struct session *s);
/*
 * A start-up failure before profiling began: close, and remove the session
 * directory if session_open created it (leave nothing behind).
 */
void session_discard(struct session *s);
struct op_cpuinfo;
/* vendor, family, model, stepping of the first CPU in <proc_root>/cpuinfo (zero if unknown) */
void session_cpuinfo(const char *proc_root, struct op_cpuinfo *ci);
/* "cpu MHz" of the first CPU in <proc_root>/cpuinfo, 0.0 if unknown. */
double session_cpu_speed(const char *proc_root);
/* Remove @name below @dirfd recursively, never following symlinks. */
int session_rm_tree(int dirfd, const char *name);

#endif /* OP_CORE_SESSION_H */
