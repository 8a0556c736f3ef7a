/*
 * np_child_helper.c - the helper program test_np_child spawns through
 * plugins/common/np_child.c: says hello, echoes messages (and bodies by
 * memfd), describes the process it runs in (uid, groups, NoNewPrivs,
 * descriptors, environment, cwd), exits on request, stops reading on
 * request, and sends the malformed messages a hostile helper would, so
 * that the daemon's side of np_msg_recv is tested against each.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "np_child.h"
#include "np_child_test.h"

extern char **environ;

/* one raw datagram: @hdr_len header bytes claimed, @fds descriptors attached */
static void raw_send(const void *buf, size_t len, const int *fds, int nfd)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct iovec iov = { (void *)buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (nfd) {
		struct cmsghdr *c;

		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = CMSG_SPACE((size_t)nfd * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN((size_t)nfd * sizeof(int));
		memcpy(CMSG_DATA(c), fds, (size_t)nfd * sizeof(int));
	}
	sendmsg(NP_CHILD_SOCK_FD, &mh, MSG_NOSIGNAL);
}

static void hostile(unsigned what)
{
	static char big[NP_MSG_INLINE_MAX + 4096];
	struct np_msg_hdr h = { .magic = NP_MSG_MAGIC, .type = NPT_ECHO };
	int fds[2], p[2];

	if (pipe(p))
		_exit(2);
	fds[0] = p[0];
	fds[1] = p[1];
	switch (what) {
	case NPT_BAD_LEN: /* the header says 100 bytes, 10 follow */
		h.len = 100;
		memcpy(big, &h, sizeof(h));
		raw_send(big, sizeof(h) + 10, NULL, 0);
		break;
	case NPT_BAD_MAGIC:
		h.magic = 0xdeadbeef;
		raw_send(&h, sizeof(h), NULL, 0);
		break;
	case NPT_HUGE: /* more than the inline bound */
		h.len = sizeof(big) - sizeof(h);
		memcpy(big, &h, sizeof(h));
		raw_send(big, sizeof(big), NULL, 0);
		break;
	case NPT_UNANNOUNCED_FD: /* a descriptor the header does not announce */
		raw_send(&h, sizeof(h), fds, 1);
		break;
	case NPT_TWO_FDS:
		h.flags = NP_MSG_F_FD;
		raw_send(&h, sizeof(h), fds, 2);
		break;
	case NPT_SHORT: /* less than a header */
		raw_send(&h, 8, NULL, 0);
		break;
	case NPT_MISSING_FD: /* announced, not sent */
		h.flags = NP_MSG_F_FD;
		raw_send(&h, sizeof(h), NULL, 0);
		break;
	case NPT_BAD_FLAGS:
		h.flags = 0x80;
		raw_send(&h, sizeof(h), NULL, 0);
		break;
	case NPT_UNSEALED: { /* a well-formed message whose body is not sealed */
		int m = memfd_create("unsealed", MFD_CLOEXEC);

		if (m < 0 || write(m, "x", 1) != 1)
			_exit(2);
		np_msg_send(NP_CHILD_SOCK_FD, NPT_ECHO, 0, 0, NULL, 0, m, 1000);
		close(m);
		break;
	}
	case NPT_STOP_READING:
		sleep(30);
		break;
	default:
		break;
	}
	close(p[0]);
	close(p[1]);
}

/* "uid=U gid=G groups=N nnp=X cwd=DIR env=N fds=0,1,2,3" */
static void describe(uint32_t id)
{
	char out[1024], cwd[256] = "?", line[256];
	int n, ngroups = getgroups(0, NULL), nnp = -1;
	size_t env = 0;
	FILE *f = fopen("/proc/self/status", "re");
	DIR *d;
	struct dirent *de;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "NoNewPrivs:", 11))
			nnp = atoi(line + 11);
	if (f)
		fclose(f);
	while (environ && environ[env])
		env++;
	if (!getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, "?");
	n = snprintf(out, sizeof(out),
		     "uid=%u gid=%u groups=%d nnp=%d cwd=%s env=%zu fds=", (unsigned)getuid(),
		     (unsigned)getgid(), ngroups, nnp, cwd, env);
	/* listed before opendir's own descriptor is counted */
	d = opendir("/proc/self/fd");
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.' || atoi(de->d_name) == dirfd(d))
			continue;
		n += snprintf(out + n, sizeof(out) - (size_t)n, "%s,", de->d_name);
	}
	if (d)
		closedir(d);
	np_msg_send(NP_CHILD_SOCK_FD, NPT_INFO, id, 0, out, strlen(out), -1, 1000);
}

int main(void)
{
	static struct np_msg m;
	char why[256];

	if (np_child_check_fd(why, sizeof(why))) {
		fprintf(stderr, "np_child_helper: %s\n", why);
		return 2;
	}
	np_msg_send(NP_CHILD_SOCK_FD, NP_MSG_HELLO, 0, NP_MSG_VERSION, NULL, 0, -1, 1000);
	for (;;) {
		int rc = np_msg_recv(NP_CHILD_SOCK_FD, &m, -1, why, sizeof(why));

		if (rc == -EPIPE)
			return 0;
		if (rc) {
			np_msg_log(NP_CHILD_SOCK_FD, 3, "bad message: %s", why);
			continue;
		}
		switch (m.h.type) {
		case NPT_ECHO:
			if (m.fd >= 0) {
				const void *p;
				size_t len;
				int out;

				if (np_memfd_map(m.fd, 1u << 24, &p, &len, why, sizeof(why))) {
					np_msg_log(NP_CHILD_SOCK_FD, 3, "%s", why);
					break;
				}
				out = np_memfd_new("echo", p, len);
				if (p)
					munmap((void *)p, len);
				np_msg_send(NP_CHILD_SOCK_FD, NPT_ECHO, m.h.id, m.h.arg, m.data,
					    m.h.len, out, 1000);
				close(out);
			} else {
				np_msg_send(NP_CHILD_SOCK_FD, NPT_ECHO, m.h.id, m.h.arg, m.data,
					    m.h.len, -1, 1000);
			}
			break;
		case NPT_INFO:
			describe(m.h.id);
			break;
		case NPT_EXIT:
			_exit((int)m.h.arg);
		case NPT_HOSTILE:
			hostile((unsigned)m.h.arg);
			break;
		default:
			np_msg_log(NP_CHILD_SOCK_FD, 3, "unknown type %u", m.h.type);
			break;
		}
		if (m.fd >= 0)
			close(m.fd);
	}
}
