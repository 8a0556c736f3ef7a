/*
 * control.h - oprofiled as a service: the owner-only control socket
 * <session>/control that opcontrol talks to (status, dump, stop, reset,
 * save, rotate) and the --rotate timer. struct control is shared with
 * daemonize.c (RLIMIT_NOFILE, --daemonize). main.c calls these hooks.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_CONTROL_H
#define OP_CORE_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "op_session_layout.h"
#include "stats.h"

struct op_options;
struct op_log;
struct session;
struct pipeline;
struct perf_session;
struct ext_loader;

/* The file name of the control socket in the session directory. */
#define CONTROL_SOCKET OP_SESSION_CONTROL
/* The longest request line (command and argument). */
#define CONTROL_LINE_MAX 256
/* Connections served at once; more are answered "error: busy" and closed. */
#define CONTROL_MAX_CLIENTS 32
/* A client has this long to send its request line, then to take the reply. */
#define CONTROL_REQUEST_MS 2000
#define CONTROL_REPLY_MS 2000
/* At most one log line per this long about dropped or turned-away clients. */
#define CONTROL_NOTE_MS 10000

/*
 * One connection, non-blocking: reading its request line (reply NULL),
 * then writing the reply. Dropped at its deadline either way.
 */
struct control_client {
	bool used;
	int fd;
	uint64_t deadline_ms; /* CLOCK_MONOTONIC */
	size_t len;           /* request bytes so far */
	char line[CONTROL_LINE_MAX];
	char *reply; /* malloc'd once the request is done */
	size_t reply_len, reply_off;
};

/* The daemon's parts the control commands act on (owned by main.c). */
struct control_target {
	struct pipeline *pipe;
	struct perf_session *perf;
	struct ext_loader *loader;
};

/* All zero is "nothing set up": every hook is then a no-op. */
struct control {
	const struct op_options *opts;
	struct session *sess;
	struct op_log *log; /* main's; its stderr_is_log is set at daemonize_ready */
	struct control_target t;
	bool prepared, active, daemonized, stop;
	bool stderr_is_log; /* daemonized and running: stderr is the log */
	int listen_fd;      /* valid when active */
	int epfd;           /* the socket and its clients; perf_poll watches it */
	bool listen_paused; /* out of descriptors: accept again at the next tick */
	int ready_fd;       /* daemonize pipe to the waiting parent, valid when > 0 */
	time_t started;
	unsigned rotate_interval; /* seconds, 0: off */
	unsigned rotate_keep;
	uint64_t next_rotate_ms; /* CLOCK_MONOTONIC */
	uint64_t rotate_seq;     /* of the last rotate-* name given (rotate_stamp_name) */
	struct op_stats before;  /* counters of the sessions already set aside */
	unsigned nr_saves, nr_resets, nr_rotations, nr_refused, nr_requests;
	char last_rotation[64];
	struct control_client clients[CONTROL_MAX_CLIENTS];
	unsigned nr_clients;   /* slots in use */
	unsigned nr_dropped;   /* too slow: request or reply past its deadline */
	unsigned nr_busy;      /* turned away: CONTROL_MAX_CLIENTS were open */
	uint64_t next_note_ms; /* rate limit of the log lines about them */
	unsigned notes_suppressed;
};

/* Open the control socket and arm the --rotate timer. 0, or -errno (logged). */
int control_start(struct control *c, const struct control_target *t);
/*
 * perf_poll said a watched fd is readable: one step for one connection
 * (accept one, read what it sent, run a complete request, write what the
 * socket takes), never waiting on a client. While more is ready perf_poll
 * returns at once, so the rings are drained between every two steps.
 * true: a stop was requested.
 */
bool control_poll(struct control *c);
/* Every loop turn: clients past their deadline are dropped; timed rotation. */
void control_tick(struct control *c);
/* Close the clients, close and remove the socket. */
void control_stop(struct control *c);

/*
 * Set samples/current aside as samples/@name (save), samples/previous
 * (@name NULL: reset) or rotate-TIME (@rotate): close and sync the sample
 * files, write the stats files (incl. throttled/), move the directory, start a fresh current
 * with the kernel symbol snapshot, restart the session counters. The
 * session name used goes to @used. 0 or -errno with a message in @err.
 */
int control_set_aside(struct control *c, const char *name, bool rotate, char *used, size_t used_len,
		      char *err, size_t err_len);

#endif /* OP_CORE_CONTROL_H */
