/*
 * pull_proto.h - what the pprof plugin (in the daemon) and its helper
 * oprofiled-pull (libmicrohttpd, unprivileged) say to each other over
 * plugins/common/np_child's socket, and the limits both enforce.
 * Helper to daemon: PROFILE (arg: seconds), METRICS, COUNT (arg: a
 * pp_count); the daemon answers each request with REPLY (same id, arg:
 * the HTTP status, the body as a sealed memfd for 200, else inline text).
 * Every message either way is checked as untrusted input.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PLUGINS_PPROF_PULL_PROTO_H
#define OP_PLUGINS_PPROF_PULL_PROTO_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <sys/socket.h>

#include "np_child.h"

#define PP_HELPER "oprofiled-pull"

enum {
	PP_MSG_PROFILE = NP_MSG_USER,
	PP_MSG_METRICS,
	PP_MSG_COUNT,
	PP_MSG_REPLY,
};

/* what the helper counts and reports with PP_MSG_COUNT (print_stats' names) */
enum pp_count {
	PP_COUNT_REQUESTS,
	PP_COUNT_BAD_REQUESTS,
	PP_COUNT_NOT_FOUND,
	PP_COUNT_REFUSED,
	PP_COUNT_NR
};

#define PP_MAX_MAX_SECONDS 3600
#define PP_MAX_MAX_CONN 64
/* a reply body: a profile of a busy host is a few MiB; /metrics a few KiB */
#define PP_BODY_MAX (256u << 20)

/* is @ss a loopback address (127/8, ::1)? */
static inline bool pp_is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)ss;

		return (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)ss;

		return IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	return false;
}

#endif /* OP_PLUGINS_PPROF_PULL_PROTO_H */
