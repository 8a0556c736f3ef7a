/*
 * op_trust.h - whom a file belongs to before it is believed: one rule for
 * the daemon's session directory, its plugin directory, the record and
 * replay files and opcontrol's session (sshd's StrictModes). A file is
 * trusted when root or the trusted owner owns it and nobody else can write
 * it; a path when that holds for the file and every directory above it,
 * walked from "/" one component at a time without following symbolic links
 * (a root-owned sticky directory such as /tmp may be writable by all: only
 * an entry's owner can rename it, and the next component is checked).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_TRUST_H
#define OP_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

struct op_trust {
	/* the owner trusted besides root; 0: root alone */
	uid_t owner;
	/* write bits only the owner may hold: S_IWGRP | S_IWOTH, or S_IWOTH
	 * when the group may write (a user's shared session) */
	mode_t forbid;
};

/* what a process of effective uid @euid believes: root only root's files,
 * writable by root alone; a user root's files and @owner's, not writable
 * by others. */
struct op_trust op_trust_for(uid_t euid, uid_t owner);

/* root, or the trusted owner (a peer's SO_PEERCRED uid, a file's st_uid) */
bool op_trust_uid(const struct op_trust *t, uid_t uid);

/*
 * Is the file of @st (described as "@what @path" in the message, as "@what"
 * alone when @path is NULL) owned by
 * root or t->owner and free of t->forbid? 0, or -EPERM with @why saying
 * which of the two failed ("lock file /s/lock is owned by uid 1000, not
 * root", "... is writable by group or others (mode 0775)").
 */
int op_trust_stat(const struct op_trust *t, const struct stat *st, const char *what,
		  const char *path, char *why, size_t why_len);

/*
 * Open @name below the directory @dfd (@path names it in messages) with
 * @flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK (a FIFO cannot hang the
 * caller), fstat it into @st, check that it is of type @type (S_IFREG,
 * S_IFDIR...; 0: any) and trusted. The fd, or -errno with @why: -ENOENT
 * when it does not exist, -ELOOP for a symbolic link, -EPERM when it is
 * not trusted (and only then), -EINVAL for another type. @st is filled
 * whenever the name could be opened: on -EPERM, -EINVAL and on -ELOOP
 * with O_PATH (which opens a link itself), it describes what was found.
 */
int op_trust_openat(const struct op_trust *t, int dfd, const char *name, int flags, mode_t type,
		    const char *what, const char *path, struct stat *st, char *why, size_t why_len);
/*
 * op_trust_openat() with O_CREAT allowed in @flags: a file it creates gets
 * @mode (less the umask) and is checked like any other (@path NULL: @what
 * alone names it, as in op_trust_stat).
 */
int op_trust_createat(const struct op_trust *t, int dfd, const char *name, int flags, mode_t mode,
		      mode_t type, const char *what, const char *path, struct stat *st, char *why,
		      size_t why_len);

/*
 * Open the absolute @path component by component from "/" without
 * following a symbolic link, check every directory above it (owned by root
 * or t->owner and free of t->forbid, or root-owned and sticky), then open
 * and check the last component as op_trust_openat does. What is checked is
 * what is opened: a directory renamed or replaced by a link after a check
 * cannot redirect the open. The fd, or -errno with @why naming the
 * component at fault.
 */
int op_trust_open_path(const struct op_trust *t, const char *path, int flags, mode_t type,
		       const char *what, struct stat *st, char *why, size_t why_len);

#endif /* OP_TRUST_H */
