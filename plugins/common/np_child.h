/*
 * np_child.h - privilege separation of the network plugins: a plugin keeps
 * in the daemon what needs the session and runs its network-facing code
 * (HTTP parsing, TLS) in a helper program of its own, started here as an
 * unprivileged child that talks to the plugin over one SOCK_SEQPACKET
 * socket. Compiled into each plugin and each helper program (like
 * netplug.c). Prefix np_child_ (the process), np_msg_ (the messages),
 * np_memfd_ (bodies passed by descriptor).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PLUGINS_NP_CHILD_H
#define OP_PLUGINS_NP_CHILD_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ------------------------------------------------------------------ */
/* messages                                                            */
/* ------------------------------------------------------------------ */

/* the descriptors a helper finds: its end of the socket, and an optional extra one */
#define NP_CHILD_SOCK_FD 3
#define NP_CHILD_EXTRA_FD 4

#define NP_MSG_MAGIC 0x4f504e47u /* "OPNG" */
/* inline payload bound: larger bodies go by descriptor (np_memfd_new) */
#define NP_MSG_INLINE_MAX (16u * 1024)
/* the header's flags: a descriptor comes with the message */
#define NP_MSG_F_FD 1u

/*
 * One SOCK_SEQPACKET datagram: this header, then h.len payload bytes,
 * with one descriptor (SCM_RIGHTS) exactly when NP_MSG_F_FD is set.
 */
struct np_msg_hdr {
	uint32_t magic;
	uint16_t type;
	uint16_t flags;
	uint32_t id; /* request id: a reply carries its request's */
	uint32_t len;
	uint64_t arg;
};

/*
 * Types every helper may use; a plugin numbers its own from NP_MSG_USER.
 * HELLO: a helper's first message (arg: NP_MSG_VERSION). LOG: a line for
 * the daemon's log (arg: OP_LOG_* level, payload: text without newline).
 */
enum {
	NP_MSG_HELLO = 1,
	NP_MSG_LOG = 2,
	NP_MSG_USER = 0x100,
};
#define NP_MSG_VERSION 1

struct np_msg {
	struct np_msg_hdr h;
	int fd; /* the received descriptor (the receiver closes it), or -1 */
	/* the payload, NUL-terminated after h.len bytes */
	char data[NP_MSG_INLINE_MAX + 1];
};

/*
 * Send one message: @len <= NP_MSG_INLINE_MAX bytes of @data, @fd (-1:
 * none; the caller keeps it), waiting up to @timeout_ms for room (a peer
 * that does not read cannot block the sender). 0, -ETIMEDOUT, -EPIPE (the
 * peer is gone), -EMSGSIZE or -errno.
 */
int np_msg_send(int sock, uint16_t type, uint32_t id, uint64_t arg, const void *data, size_t len,
		int fd, int timeout_ms);

/*
 * Receive one message into @m within @timeout_ms (-1: wait), checked as
 * untrusted input: the datagram's length equals the header's and the
 * bound, the magic matches, a descriptor comes exactly when the header
 * says so, one at most (any other descriptors are closed). 0, -ETIMEDOUT,
 * -EPIPE (the peer closed its end), -EBADMSG with @why saying what was
 * wrong (m->fd is then -1: nothing is kept), or -errno. The type is the
 * caller's to check.
 */
int np_msg_recv(int sock, struct np_msg *m, int timeout_ms, char *why, size_t why_len);

/* printf to NP_MSG_LOG (what a helper logs through the daemon); best effort */
void np_msg_log(int sock, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ------------------------------------------------------------------ */
/* bodies by descriptor                                                */
/* ------------------------------------------------------------------ */

/*
 * A sealed memfd holding @len bytes of @buf (no write, grow or shrink
 * once sealed: the receiver can map it without fearing a SIGBUS or a
 * change under its feet). The fd (close-on-exec) or -errno.
 */
int np_memfd_new(const char *name, const void *buf, size_t len);

/*
 * Check a received body descriptor: a memfd sealed as np_memfd_new seals
 * it, at most @max bytes. 0 with *len, or -EBADMSG with @why.
 */
int np_memfd_check(int fd, size_t max, size_t *len, char *why, size_t why_len);

/*
 * np_memfd_check, then map it read-only: *p (munmap(*p, *len) when done;
 * NULL when empty). 0 or -errno with @why.
 */
int np_memfd_map(int fd, size_t max, const void **p, size_t *len, char *why, size_t why_len);

/* ------------------------------------------------------------------ */
/* the child process                                                   */
/* ------------------------------------------------------------------ */

/* exit codes of a child that failed before its exec: what failed */
enum {
	NP_CHILD_EXIT_SETUP = 120,  /* descriptors, signals, chdir */
	NP_CHILD_EXIT_DROP = 121,   /* setgroups/setgid/setuid, or the uid came back */
	NP_CHILD_EXIT_PARENT = 122, /* the daemon died before the child was set up */
	NP_CHILD_EXIT_EXEC = 123,   /* execveat */
};

/*
 * A helper that ends because it had no work for its idle time (the
 * plugins' helper_idle key) exits with this: not a crash, so no backoff
 * and not a restart. Believed only from a child that lived at least
 * idle_ms (one that "idles out" at once is treated as crashing: a broken
 * or hostile helper cannot make the daemon respawn it in a loop).
 */
#define NP_CHILD_EXIT_IDLE 119

struct np_child {
	/* settings (np_child_init) */
	char name[64];      /* the helper program's file name */
	char dir[PATH_MAX]; /* where it is (OP_HELPER_DIR or the installed one) */
	char user[64];      /* whom it runs as when the daemon is root */
	bool drop;          /* root daemon: switch to uid/gid */
	uid_t uid;
	gid_t gid;
	int extra_fd;      /* given to the child as NP_CHILD_EXTRA_FD, or -1 */
	char *const *argv; /* argv[0] and the helper's arguments (the caller's) */
	/*
	 * on-demand helpers (0: resident): how long one must have lived for its
	 * NP_CHILD_EXIT_IDLE to count as an idle exit (the caller sets it)
	 */
	uint64_t idle_ms;

	/* the running child */
	pid_t pid; /* 0: none */
	int pidfd; /* readable when it exited (pidfd_open), or -1 */
	int sock;  /* the daemon's end of the socket, or -1 */
	uint64_t started_ms;

	/* restarts with backoff (np_child_reaped) */
	uint64_t next_ms; /* no spawn before this (monotonic ms) */
	unsigned backoff_ms;

	/*
	 * counted for print_stats: restarts are the spawns that follow a
	 * child that did not end idle (a crash, a kill); idle_exits the
	 * children that ended idle (NP_CHILD_EXIT_IDLE, or np_child_retire)
	 */
	uint64_t spawns, exits, spawn_failures, restarts, idle_exits;
	int last_status;   /* waitpid status of the last child that ended, -1: none */
	bool last_idle;    /* that child ended idle */
	bool retiring;     /* np_child_retire is stopping it */
	unsigned delay_ms; /* the backoff applied after the last one ended (for messages) */
};

/*
 * Where helpers are: $OP_HELPER_DIR when set and not empty (tests run
 * from the build tree), else the installed directory (pkglibexecdir).
 */
const char *np_child_helper_dir(void);

/*
 * Prepare @c for the helper program @name (in np_child_helper_dir()),
 * run as @user (NULL: "nobody") when the daemon is root, with @extra_fd
 * (-1: none) and @argv (kept by reference: it must outlive @c). Checks now
 * what a spawn would refuse, so that errors show at start: the user
 * exists, the program is trusted (lib/op_trust: a root daemon runs only a
 * root-owned program that group and others cannot write, in directories of
 * the same kind). 0, or -errno with @why. Takes no ownership of @extra_fd.
 */
int np_child_init(struct np_child *c, const char *name, const char *user, int extra_fd,
		  char *const *argv, char *why, size_t why_len);

/*
 * Start the helper: a socketpair, fork, and in the child: the socket as
 * fd 3, the extra fd as 4, /dev/null as 0-2, every other descriptor closed,
 * signals reset and unblocked, an empty environment, cwd "/", groups,
 * gid and uid dropped (root daemon; checked that uid 0 cannot come back),
 * PR_SET_PDEATHSIG(SIGKILL) (after the drop, which would clear it),
 * PR_SET_NO_NEW_PRIVS, then the program opened and checked again here is
 * executed by descriptor. Call it from a thread that outlives the child
 * (the death signal follows the forking thread). 0 with c->pid, c->sock,
 * c->pidfd set, or -errno with @why (counted in spawn_failures).
 */
int np_child_spawn(struct np_child *c, char *why, size_t why_len);

/*
 * Has the child exited? Reaps it (waitpid on its own pid only, never
 * another child of the daemon) without waiting: true when it is gone
 * (c->pid 0, the socket closed, last_status set, the next spawn delayed by
 * the backoff: 250 ms doubling up to 16 s, back to 250 ms after a child
 * that lived 60 s). An idle exit (NP_CHILD_EXIT_IDLE after at least
 * idle_ms) sets last_idle instead: no delay, the backoff back to 250 ms.
 */
bool np_child_reaped(struct np_child *c);

/*
 * Stop a child that has had no work for its idle time: np_child_stop, and
 * a clean exit (status 0 or NP_CHILD_EXIT_IDLE) within @grace_ms counts as
 * an idle exit (no backoff, the next spawn not a restart); one that had
 * to be killed counts as any other end.
 */
void np_child_retire(struct np_child *c, unsigned grace_ms);

/* SIGKILL the child (a hostile or stuck one) and reap it */
void np_child_kill(struct np_child *c);

/*
 * Stop: close the socket (a helper exits when its daemon end closes), wait
 * up to @grace_ms for it to exit, then SIGKILL; reaped either way.
 */
void np_child_stop(struct np_child *c, unsigned grace_ms);

/* ms until the next spawn is allowed (0: now) */
uint64_t np_child_wait_ms(const struct np_child *c);

/* "exit 3", "signal 9 (Killed)", "none" */
void np_child_status_text(int status, char *buf, size_t len);

/* what a bad helper_idle value is told (the plugins' key for on-demand helpers) */
#define NP_HELPER_IDLE_EXPECTED "expected a time such as 30s or 5m (0: the helper stays resident)"

/*
 * "; on demand (helper_idle 30 s): 4 spawns, 3 idle exits" for a plugin's
 * status line, "" when @idle_s is 0 (a resident helper)
 */
void np_child_demand_text(unsigned idle_s, uint64_t spawns, uint64_t idle_exits, char *buf,
			  size_t len);

/* a helper's side: fail unless fd 3 is a SOCK_SEQPACKET socket (run by hand?) */
int np_child_check_fd(char *why, size_t why_len);

#endif /* OP_PLUGINS_NP_CHILD_H */
