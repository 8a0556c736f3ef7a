/*
 * pull_hostile.c - a hostile stand-in for the helper oprofiled-pull, put
 * in OP_HELPER_DIR by pull_privsep.sh: each start (counted in
 * /dev/shm/op_pull_hostile.PORT, PORT that of the listening socket it
 * gets as fd 4, a file the test makes and gives to the helper's user)
 * sends the daemon another malformed message - a length its header
 * contradicts, an unknown type, a datagram beyond the bound, a descriptor
 * where none belongs, one the header does not announce, a profile request
 * out of range - and the start after those behaves for a while, then
 * floods the daemon with log lines, then waits for its socket to close.
 * The daemon must kill and restart it each time, with backoff, and keep
 * sampling at the same rate throughout.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "np_child.h"
#include "pull_proto.h"

#define IDLE_S 8
#define FLOOD_S 15

static void raw(const void *buf, size_t len, int fd)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.b;
		mh.msg_controllen = sizeof(cm.b);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	sendmsg(NP_CHILD_SOCK_FD, &mh, MSG_NOSIGNAL);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(void)
{
	static char big[NP_MSG_INLINE_MAX + 4096];
	static struct np_msg m;
	struct np_msg_hdr h = { .magic = NP_MSG_MAGIC };
	struct sockaddr_in sin;
	socklen_t sl = sizeof(sin);
	char path[64], why[256];
	unsigned n = 0;
	int fd;

	if (getsockname(NP_CHILD_EXTRA_FD, (struct sockaddr *)&sin, &sl))
		return 2;
	snprintf(path, sizeof(path), "/dev/shm/op_pull_hostile.%u", ntohs(sin.sin_port));
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || pread(fd, &n, sizeof(n), 0) < 0)
		return 2;
	n++;
	if (pwrite(fd, &n, sizeof(n), 0) != sizeof(n))
		return 2;
	close(fd);
	np_msg_send(NP_CHILD_SOCK_FD, NP_MSG_HELLO, 0, NP_MSG_VERSION, NULL, 0, -1, 1000);
	switch (n) {
	case 1: /* the header says 100 bytes, 10 follow */
		h.type = PP_MSG_COUNT;
		h.len = 100;
		memcpy(big, &h, sizeof(h));
		raw(big, sizeof(h) + 10, -1);
		break;
	case 2:
		h.type = 0x7777;
		raw(&h, sizeof(h), -1);
		break;
	case 3: /* beyond the inline bound */
		h.type = PP_MSG_COUNT;
		h.len = sizeof(big) - sizeof(h);
		memcpy(big, &h, sizeof(h));
		raw(big, sizeof(big), -1);
		break;
	case 4: /* well-formed, but a count carries no descriptor */
		np_msg_send(NP_CHILD_SOCK_FD, PP_MSG_COUNT, 0, PP_COUNT_REQUESTS, NULL, 0, 0, 1000);
		break;
	case 5: /* a descriptor the header does not announce */
		h.type = PP_MSG_COUNT;
		raw(&h, sizeof(h), 0);
		break;
	case 6: /* a profile of 10^9 seconds */
		np_msg_send(NP_CHILD_SOCK_FD, PP_MSG_PROFILE, 1, 1000000000, NULL, 0, -1, 1000);
		break;
	default: {
		double t0;
		unsigned lines = 0;

		sleep(IDLE_S);
		np_msg_log(NP_CHILD_SOCK_FD, 1, "flooding now");
		for (t0 = now(); now() - t0 < FLOOD_S;)
			if (np_msg_send(NP_CHILD_SOCK_FD, NP_MSG_LOG, 0, 1, "flood", 5, -1, 100) == 0)
				lines++;
		np_msg_log(NP_CHILD_SOCK_FD, 1, "flood over: %u lines", lines);
		break;
	}
	}
	/* what the daemon says next, until it closes the socket or kills this */
	while (np_msg_recv(NP_CHILD_SOCK_FD, &m, -1, why, sizeof(why)) != -EPIPE)
		if (m.fd >= 0)
			close(m.fd);
	return 0;
}
