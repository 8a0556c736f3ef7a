/*
 * session_int.h - what the files of the session share and nobody else
 * sees: the calls between session.c (open, close, the daemon's API),
 * session_dir.c (trust, the path walk) and session_entry.c (log, lock,
 * samples/ and samples/current).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_SESSION_INT_H
#define OP_CORE_SESSION_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

#include "session.h"

/* session_dir.c */

/* vsnprintf @fmt into @err (when @len) and return @rc */
int session_err(char *err, size_t len, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * @st is the session's entry named @subject: a directory (@want_dir) or a
 * regular file, and as root a trusted one. 0 or -errno with a message.
 */
int session_check_entry(const struct session *s, const struct stat *st, const char *subject,
			bool want_dir, char *err, size_t len);
/*
 * Open the session's entry @name below @dfd (@subject in messages) with
 * op_trust_createat (@flags, @mode; O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK
 * added), a directory (@want_dir) or a regular file, checked as
 * session_check_entry() does. The fd, or -errno with a message.
 */
int session_openat(const struct session *s, int dfd, const char *name, int flags, mode_t mode,
		   bool want_dir, const char *subject, char *err, size_t len);
/*
 * @name below @dfd could not be opened (errno @e): say why, naming what is
 * there instead of a directory or regular file (a symlink, a FIFO, ...).
 */
int session_open_error(const struct session *s, int dfd, const char *name, const char *subject,
		       bool want_dir, int e, char *err, size_t len);
/* "session directory DIR: REL" */
void session_subject(const struct session *s, const char *rel, char *buf, size_t len);
/*
 * Root or a session_group: @fd, an existing directory of the session (@rel,
 * "" for the session directory), gets the session's mode (0700, or 02750
 * and the group). A change is noted in @note for the log.
 */
int session_restrict(const struct session *s, int fd, const char *rel, char *note, size_t note_len,
		     char *err, size_t err_len);
/* @dir made absolute with "//", "." and ".." resolved by name (malloc'd) */
char *session_normalise(const char *dir);
/*
 * Open s->dir from "/" one component at a time, never through a symbolic
 * link, creating what is missing; as root every parent checked. The
 * session directory's fd, or -errno with a message.
 */
int session_walk(struct session *s, bool *created, char *err, size_t len);

/* session_entry.c */

/* open and check the log, making it s->log or swapping it in behind s->log */
int session_open_log(struct session *s, char *err, size_t len);
/* open, check and lock the lock file; our pid goes in it */
int session_lock(struct session *s, char *err, size_t err_len);
/* open (creating it) directory @rel of the session, @name below @dfd, and check it */
int session_open_subdir(const struct session *s, int dfd, const char *name, const char *rel,
			char *err, size_t len);
/* an existing entry @name of samples/ that is moved or reused: a trusted directory */
int session_check_moved(const struct session *s, const char *name, bool *exists, char *err,
			size_t len);
/* staged -> current again: the new current (no samples yet) is removed */
int session_unstage(int samples_fd);

#endif /* OP_CORE_SESSION_INT_H */
