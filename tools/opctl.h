/*
 * opctl.h - the client side of oprofiled's control socket
 * (<session>/control, owner-only), shared by opcontrol and optop.
 * SPDX-License-Identifier: MIT
 */
#ifndef OPCTL_H
#define OPCTL_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "op_trust.h"

struct opctl {
	const char *prog;      /* the tool, first word of every message */
	const char *dir;       /* the session directory */
	int dirfd;             /* -1 before opctl_find */
	uid_t owner;           /* of the session directory (root, or the user running the tool) */
	struct op_trust trust; /* whom the tool believes (op_trust.h), set by opctl_find */
	long pid; /* of the lock; opctl_connect checks the socket's server is that pid */
};

/*
 * Open and check the session directory, then find the daemon by its lock
 * (an exclusive flock held while it runs, its pid written in it). 0 with
 * c->pid (not verified yet: opctl_connect does that); -ENOENT: no such
 * directory; -ESRCH: no daemon runs; -EPERM: what was found is not
 * believed. Each failure has been said on stderr, prefixed by c->prog.
 */
int opctl_find(struct opctl *c);
/* Is the lock still held (the daemon still runs)? */
bool opctl_running(struct opctl *c);
/*
 * Connect to the control socket and check its server: SO_PEERCRED names
 * root or the directory's owner, and the pid of the lock. The connected fd,
 * or -errno after saying why.
 */
int opctl_connect(struct opctl *c);
/*
 * Send the request line @req ("dump\n"), copy the reply's body to @out
 * (a refusal's to stderr). 0, 1 (the daemon refused, said why) or -errno.
 */
int opctl_request(struct opctl *c, const char *req, FILE *out);
void opctl_close(struct opctl *c);

#endif /* OPCTL_H */
