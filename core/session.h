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

struct session {
	char *dir;        /* absolute path */
	int dirfd;
	int lockfd;
	int samples_fd;   /* <dir>/samples */
	int current_fd;   /* <dir>/samples/current */
	FILE *log;
	char *log_file;   /* NULL: samples/oprofiled.log */
	bool created;     /* session_open created the directory itself */
	bool staged;      /* the old samples/current waits in SESSION_STAGED */
};

/*
 * Without --append the old samples/current is renamed to this name (below
 * samples/) and only becomes samples/previous in session_commit(), once
 * start-up succeeded: a failed start (bad plugin, bad event, ...) puts it
 * back as samples/current, so nothing recorded is lost.
 */
#define SESSION_STAGED "previous.staged"

/*
 * Open (creating it 0755 if missing) the session directory @dir: refuse a
 * symlink, a non-directory or a directory we cannot write; take the lock
 * (another daemon: -EBUSY, nothing touched); write abi; put back a
 * samples/current an interrupted start left staged; unless @append stage
 * samples/current (see SESSION_STAGED); open the log. On error a message
 * goes to @err and -errno is returned.
 */
int session_open(struct session *s, const char *dir, bool append, const char *log_file,
		 char *err, size_t err_len);
/*
 * Start-up succeeded: the staged old samples/current replaces
 * samples/previous. No-op with --append or when there was no current.
 */
int session_commit(struct session *s);
/* (Re)write our pid into the lock file (after daemonizing). */
int session_write_pid(struct session *s);
/*
 * SIGHUP: open samples/current again, creating it if it was removed (a
 * reset); the fd number stays the same. 0 or -errno.
 */
int session_reopen_current(struct session *s);
/* SIGHUP: reopen the log file (logrotate moved it). */
int session_reopen_log(struct session *s);
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
