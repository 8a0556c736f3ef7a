/*
 * np_child.c - the network plugins' helper processes: spawn (fork, drop,
 * exec by descriptor), reap and restart with backoff, and the messages
 * over their SOCK_SEQPACKET socket, every one checked as untrusted input
 * (the daemon must survive a hostile helper; a helper treats what the
 * daemon sends with the same care). See np_child.h.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "np_child.h"
#include "op_trust.h"

#ifndef OP_HELPERDIR
#define OP_HELPERDIR "/usr/local/libexec/oprofile-ng"
#endif

#define NP_BACKOFF_MIN_MS 250u
#define NP_BACKOFF_MAX_MS 16000u
#define NP_STABLE_MS 60000u

static uint64_t np_child_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ------------------------------------------------------------------ */
/* messages                                                            */
/* ------------------------------------------------------------------ */

/* poll @fd for @ev up to @timeout_ms (-1: forever); 0, -ETIMEDOUT, -EPIPE or -errno */
static int np_msg_wait(int fd, short ev, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = ev };
	uint64_t end = timeout_ms < 0 ? 0 : np_child_now_ms() + (uint64_t)timeout_ms;

	for (;;) {
		int left = -1, n;

		if (timeout_ms >= 0) {
			uint64_t now = np_child_now_ms();

			left = now >= end ? 0 : (int)(end - now);
		}
		n = poll(&p, 1, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ETIMEDOUT;
		if (p.revents & ev)
			return 0;
		/* POLLHUP without data to read, or POLLERR/POLLNVAL */
		return (p.revents & POLLNVAL) ? -EBADF : -EPIPE;
	}
}

int np_msg_send(int sock, uint16_t type, uint32_t id, uint64_t arg, const void *data, size_t len,
		int fd, int timeout_ms)
{
	struct np_msg_hdr h = {
		.magic = NP_MSG_MAGIC, .type = type, .id = id, .len = (uint32_t)len, .arg = arg
	};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct iovec iov[2] = { { &h, sizeof(h) }, { (void *)data, len } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = len ? 2 : 1 };
	int rc;

	if (len > NP_MSG_INLINE_MAX)
		return -EMSGSIZE;
	if (fd >= 0) {
		struct cmsghdr *c;

		h.flags |= NP_MSG_F_FD;
		memset(&cm, 0, sizeof(cm));
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	for (;;) {
		ssize_t n = sendmsg(sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n >= 0)
			return (size_t)n == sizeof(h) + len ? 0 : -EMSGSIZE;
		if (errno == EINTR)
			continue;
		if (errno == ECONNRESET || errno == ENOTCONN)
			return -EPIPE;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		rc = np_msg_wait(sock, POLLOUT, timeout_ms);
		if (rc)
			return rc;
	}
}

/* close every descriptor a control message carried */
static void np_msg_close_fds(struct msghdr *mh)
{
	struct cmsghdr *c;

	for (c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t i, n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			close(fd);
		}
	}
}

int np_msg_recv(int sock, struct np_msg *m, int timeout_ms, char *why, size_t why_len)
{
	/* room for more descriptors than allowed: a flood of them is seen and closed */
	union {
		char buf[CMSG_SPACE(8 * sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct iovec iov[2] = { { &m->h, sizeof(m->h) }, { m->data, NP_MSG_INLINE_MAX } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2 };
	struct cmsghdr *c;
	unsigned nfd = 0;
	ssize_t n;
	int rc;

	m->fd = -1;
	why[0] = 0;
	for (;;) {
		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
		mh.msg_flags = 0;
		n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC | MSG_TRUNC);
		if (n >= 0)
			break;
		if (errno == EINTR)
			continue;
		if (errno == ECONNRESET)
			return -EPIPE;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		rc = np_msg_wait(sock, POLLIN, timeout_ms);
		if (rc)
			return rc;
	}
	if (n == 0 && !(mh.msg_controllen))
		return -EPIPE; /* the peer closed its end (SOCK_SEQPACKET: EOF) */
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
		    c->cmsg_len >= CMSG_LEN(0)) {
			nfd += (unsigned)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			if (nfd == 1)
				memcpy(&m->fd, CMSG_DATA(c), sizeof(int));
		} else {
			snprintf(why, why_len, "a control message of level %d type %d",
				 c->cmsg_level, c->cmsg_type);
		}
	}
	if (why[0])
		goto bad;
	if (mh.msg_flags & MSG_CTRUNC) {
		snprintf(why, why_len, "more descriptors than one message may carry");
		goto bad;
	}
	if ((size_t)n < sizeof(m->h)) {
		snprintf(why, why_len, "a message of %zd bytes, shorter than its header (%zu)", n,
			 sizeof(m->h));
		goto bad;
	}
	if (mh.msg_flags & MSG_TRUNC || (size_t)n > sizeof(m->h) + NP_MSG_INLINE_MAX) {
		snprintf(why, why_len, "a message of %zd bytes, more than the bound (%zu)", n,
			 sizeof(m->h) + NP_MSG_INLINE_MAX);
		goto bad;
	}
	if (m->h.magic != NP_MSG_MAGIC) {
		snprintf(why, why_len, "a message without the magic number (0x%08x)", m->h.magic);
		goto bad;
	}
	if ((size_t)m->h.len != (size_t)n - sizeof(m->h)) {
		snprintf(why, why_len, "a message of %zd bytes whose header says %u payload bytes",
			 n, m->h.len);
		goto bad;
	}
	if (m->h.flags & ~NP_MSG_F_FD) {
		snprintf(why, why_len, "unknown flags 0x%x", m->h.flags);
		goto bad;
	}
	if (nfd != ((m->h.flags & NP_MSG_F_FD) ? 1u : 0u)) {
		snprintf(why, why_len, "%u descriptors where the header announces %u", nfd,
			 (m->h.flags & NP_MSG_F_FD) ? 1u : 0u);
		goto bad;
	}
	m->data[m->h.len] = 0;
	return 0;
bad:
	np_msg_close_fds(&mh);
	m->fd = -1;
	return -EBADMSG;
}

void np_msg_log(int sock, int level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	np_msg_send(sock, NP_MSG_LOG, 0, (uint64_t)level, line, (size_t)n, -1, 1000);
}

/* ------------------------------------------------------------------ */
/* bodies by descriptor                                                */
/* ------------------------------------------------------------------ */

#define NP_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

int np_memfd_new(const char *name, const void *buf, size_t len)
{
	size_t off = 0;
	int fd, e;

	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	while (off < len) {
		ssize_t n = write(fd, (const char *)buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail;
		off += (size_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS, NP_SEALS))
		goto fail;
	return fd;
fail:
	e = errno ? errno : EIO;
	close(fd);
	return -e;
}

int np_memfd_check(int fd, size_t max, size_t *len, char *why, size_t why_len)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals < 0) {
		snprintf(why, why_len, "a body descriptor that is not a memfd (%s)",
			 strerror(errno));
		return -EBADMSG;
	}
	if ((seals & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)) !=
	    (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)) {
		snprintf(why, why_len, "a body memfd that is not sealed (seals 0x%x)", seals);
		return -EBADMSG;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < 0) {
		snprintf(why, why_len, "a body descriptor that is not a regular file");
		return -EBADMSG;
	}
	if ((uint64_t)st.st_size > max) {
		snprintf(why, why_len, "a body of %lld bytes, more than the bound (%zu)",
			 (long long)st.st_size, max);
		return -EBADMSG;
	}
	*len = (size_t)st.st_size;
	return 0;
}

int np_memfd_map(int fd, size_t max, const void **p, size_t *len, char *why, size_t why_len)
{
	void *m;
	int rc = np_memfd_check(fd, max, len, why, why_len);

	*p = NULL;
	if (rc || !*len)
		return rc;
	m = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED) {
		snprintf(why, why_len, "cannot map the body: %s", strerror(errno));
		return -errno;
	}
	*p = m;
	return 0;
}

/* ------------------------------------------------------------------ */
/* the child process                                                   */
/* ------------------------------------------------------------------ */

const char *np_child_helper_dir(void)
{
	const char *env = getenv("OP_HELPER_DIR");

	return env && *env ? env : OP_HELPERDIR;
}

/*
 * Whom the daemon believes (as its plugin loader does): root's files only
 * when root, root's and its own user's otherwise; never a file or
 * directory its group or others can write.
 */
static struct op_trust np_child_trust(void)
{
	struct op_trust t = op_trust_for(geteuid(), geteuid());

	t.forbid |= S_IWGRP | S_IWOTH;
	return t;
}

/* open and check the helper program; the fd or -errno with @why */
static int np_child_open(const struct np_child *c, char *why, size_t why_len)
{
	const struct op_trust t = np_child_trust();
	char path[PATH_MAX + 80], real[PATH_MAX], msg[512];
	struct stat st;
	int fd;

	if (c->dir[0] != '/' || !realpath(c->dir, real)) {
		snprintf(why, why_len,
			 "helper directory \"%s\": %s - set OP_HELPER_DIR to an absolute "
			 "directory or install the helpers",
			 c->dir, c->dir[0] != '/' ? "not an absolute path" : strerror(errno));
		return c->dir[0] != '/' ? -EINVAL : -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/%s", real, c->name);
	fd = op_trust_open_path(&t, path, O_RDONLY, S_IFREG, "helper program", &st, msg,
				sizeof(msg));
	if (fd < 0) {
		snprintf(why, why_len, "%s%s", msg,
			 fd == -EPERM ? (geteuid() == 0 ? " (a root oprofiled runs only helpers "
							  "that root owns and only root can write, "
							  "in such directories)" :
							  "") :
					"");
		return fd;
	}
	if (!(st.st_mode & S_IXUSR)) {
		close(fd);
		snprintf(why, why_len, "helper program %s is not executable (mode %04o)", path,
			 (unsigned)(st.st_mode & 07777));
		return -EACCES;
	}
	return fd;
}

int np_child_init(struct np_child *c, const char *name, const char *user, int extra_fd,
		  char *const *argv, char *why, size_t why_len)
{
	int fd;

	memset(c, 0, sizeof(*c));
	c->pidfd = -1;
	c->sock = -1;
	c->extra_fd = extra_fd;
	c->argv = argv;
	c->last_status = -1;
	c->backoff_ms = NP_BACKOFF_MIN_MS;
	if (!name || !*name || strchr(name, '/') || strlen(name) >= sizeof(c->name)) {
		snprintf(why, why_len, "invalid helper name \"%s\"", name ? name : "");
		return -EINVAL;
	}
	snprintf(c->name, sizeof(c->name), "%s", name);
	if (strlen(np_child_helper_dir()) >= sizeof(c->dir)) {
		snprintf(why, why_len, "helper directory too long");
		return -ENAMETOOLONG;
	}
	snprintf(c->dir, sizeof(c->dir), "%s", np_child_helper_dir());
	snprintf(c->user, sizeof(c->user), "%s", user && *user ? user : "nobody");
	if (geteuid() == 0) {
		struct passwd pw, *res = NULL;
		char buf[4096];
		int e = getpwnam_r(c->user, &pw, buf, sizeof(buf), &res);

		if (!res) {
			snprintf(why, why_len,
				 "user=%s: %s - the helper %s runs as this user when oprofiled "
				 "is root; name an existing unprivileged user",
				 c->user, e ? strerror(e) : "no such user", c->name);
			return -ENOENT;
		}
		if (pw.pw_uid == 0) {
			snprintf(why, why_len,
				 "user=%s is uid 0: the helper %s must run unprivileged - name "
				 "another user",
				 c->user, c->name);
			return -EPERM;
		}
		c->drop = true;
		c->uid = pw.pw_uid;
		c->gid = pw.pw_gid;
	} else {
		c->uid = geteuid();
		c->gid = getegid();
	}
	fd = np_child_open(c, why, why_len);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* the child, between fork and exec: async-signal-safe calls only */
static void np_child_exec(const struct np_child *c, int sock, int extra, int nullfd, int exefd,
			  pid_t parent)
{
	static char *const envp[] = { NULL };
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t none;
	int s, e, x, sig;

	/* out of the way of 0..4 first, so that no dup2 below overwrites another */
	s = fcntl(sock, F_DUPFD, 10);
	e = extra >= 0 ? fcntl(extra, F_DUPFD, 10) : -1;
	x = fcntl(exefd, F_DUPFD_CLOEXEC, 10);
	if (s < 0 || x < 0 || (extra >= 0 && e < 0))
		_exit(NP_CHILD_EXIT_SETUP);
	if (dup2(nullfd, 0) < 0 || dup2(nullfd, 1) < 0 || dup2(nullfd, 2) < 0 ||
	    dup2(s, NP_CHILD_SOCK_FD) < 0 || (e >= 0 && dup2(e, NP_CHILD_EXTRA_FD) < 0))
		_exit(NP_CHILD_EXIT_SETUP);
	/* the program's descriptor last, close-on-exec, above the rest */
	if (dup3(x, 5, O_CLOEXEC) < 0)
		_exit(NP_CHILD_EXIT_SETUP);
	if (e < 0)
		close(NP_CHILD_EXTRA_FD);
	if (syscall(SYS_close_range, 6u, ~0u, 0u))
		_exit(NP_CHILD_EXIT_SETUP);
	for (sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL); /* SIGKILL/SIGSTOP and the libc's own fail: fine */
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL))
		_exit(NP_CHILD_EXIT_SETUP);
	if (chdir("/"))
		_exit(NP_CHILD_EXIT_SETUP);
	if (c->drop) {
		/* raw syscalls: only this thread exists here, and libc's setxid is not for it */
		if (syscall(SYS_setgroups, 0, NULL) ||
		    syscall(SYS_setresgid, c->gid, c->gid, c->gid) ||
		    syscall(SYS_setresuid, c->uid, c->uid, c->uid))
			_exit(NP_CHILD_EXIT_DROP);
		if (syscall(SYS_setresuid, 0, 0, 0) == 0 || syscall(SYS_setresgid, 0, 0, 0) == 0 ||
		    getuid() != c->uid || geteuid() != c->uid || getegid() != c->gid)
			_exit(NP_CHILD_EXIT_DROP);
	}
	/* after the drop: a change of credentials clears the death signal */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0))
		_exit(NP_CHILD_EXIT_SETUP);
	if (getppid() != parent)
		_exit(NP_CHILD_EXIT_PARENT);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		_exit(NP_CHILD_EXIT_SETUP);
	syscall(SYS_execveat, 5, "", c->argv, envp, AT_EMPTY_PATH);
	_exit(NP_CHILD_EXIT_EXEC);
}

int np_child_spawn(struct np_child *c, char *why, size_t why_len)
{
	int sv[2] = { -1, -1 }, nullfd = -1, exefd, rc;
	pid_t parent = getpid(), pid;

	if (c->pid) {
		snprintf(why, why_len, "helper %s is running already (pid %d)", c->name,
			 (int)c->pid);
		return -EBUSY;
	}
	exefd = np_child_open(c, why, why_len);
	if (exefd < 0) {
		rc = exefd;
		goto fail;
	}
	nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (nullfd < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		rc = -errno;
		snprintf(why, why_len, "helper %s: %s", c->name, strerror(errno));
		goto fail;
	}
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		snprintf(why, why_len, "helper %s: fork: %s", c->name, strerror(errno));
		goto fail;
	}
	if (pid == 0)
		np_child_exec(c, sv[1], c->extra_fd, nullfd, exefd, parent);
	close(sv[1]);
	close(nullfd);
	close(exefd);
	c->pid = pid;
	c->sock = sv[0];
	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	c->started_ms = np_child_now_ms();
	if (c->last_status != -1 && !c->last_idle)
		c->restarts++;
	c->spawns++;
	return 0;
fail:
	c->spawn_failures++;
	if (sv[0] >= 0) {
		close(sv[0]);
		close(sv[1]);
	}
	if (nullfd >= 0)
		close(nullfd);
	if (exefd >= 0)
		close(exefd);
	c->delay_ms = c->backoff_ms;
	c->next_ms = np_child_now_ms() + c->backoff_ms;
	if (c->backoff_ms < NP_BACKOFF_MAX_MS)
		c->backoff_ms *= 2;
	return rc;
}

/*
 * Did the child end idle? Its own NP_CHILD_EXIT_IDLE after living its
 * idle time at least, or a clean exit when np_child_retire stopped it.
 */
static bool np_child_idle_end(const struct np_child *c, int status, uint64_t lived_ms)
{
	if (status < 0 || !WIFEXITED(status))
		return false;
	if (c->retiring)
		return WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == NP_CHILD_EXIT_IDLE;
	return c->idle_ms && WEXITSTATUS(status) == NP_CHILD_EXIT_IDLE && lived_ms >= c->idle_ms;
}

/* the child is gone (@status from waitpid): forget it and delay the next one */
static void np_child_gone(struct np_child *c, int status)
{
	uint64_t now = np_child_now_ms();

	if (c->sock >= 0)
		close(c->sock);
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->sock = c->pidfd = -1;
	c->pid = 0;
	c->exits++;
	c->last_status = status;
	c->last_idle = np_child_idle_end(c, status, now - c->started_ms);
	c->retiring = false;
	if (c->last_idle) {
		/* it served and had nothing left to do: the next one may come at once */
		c->idle_exits++;
		c->backoff_ms = NP_BACKOFF_MIN_MS;
		c->delay_ms = 0;
		c->next_ms = now;
		return;
	}
	if (now - c->started_ms >= NP_STABLE_MS)
		c->backoff_ms = NP_BACKOFF_MIN_MS;
	c->delay_ms = c->backoff_ms;
	c->next_ms = now + c->backoff_ms;
	if (c->backoff_ms < NP_BACKOFF_MAX_MS)
		c->backoff_ms *= 2;
}

bool np_child_reaped(struct np_child *c)
{
	int status;
	pid_t r;

	if (!c->pid)
		return true;
	do
		r = waitpid(c->pid, &status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return false;
	/* r < 0 (ECHILD: someone else reaped it): gone all the same */
	np_child_gone(c, r == c->pid ? status : -1);
	return true;
}

void np_child_kill(struct np_child *c)
{
	int status;
	pid_t r;

	if (!c->pid)
		return;
	if (c->pidfd < 0 || syscall(SYS_pidfd_send_signal, c->pidfd, SIGKILL, NULL, 0))
		kill(c->pid, SIGKILL);
	do
		r = waitpid(c->pid, &status, 0);
	while (r < 0 && errno == EINTR);
	np_child_gone(c, r == c->pid ? status : -1);
}

void np_child_stop(struct np_child *c, unsigned grace_ms)
{
	uint64_t end = np_child_now_ms() + grace_ms;

	if (!c->pid)
		return;
	if (c->sock >= 0) {
		close(c->sock);
		c->sock = -1;
	}
	while (!np_child_reaped(c)) {
		uint64_t now = np_child_now_ms();

		if (now >= end) {
			np_child_kill(c);
			break;
		}
		if (c->pidfd >= 0) {
			struct pollfd p = { .fd = c->pidfd, .events = POLLIN };

			poll(&p, 1, (int)(end - now));
		} else {
			usleep(10000);
		}
	}
}

void np_child_retire(struct np_child *c, unsigned grace_ms)
{
	if (!c->pid)
		return;
	c->retiring = true;
	np_child_stop(c, grace_ms);
	c->retiring = false;
}

uint64_t np_child_wait_ms(const struct np_child *c)
{
	uint64_t now = np_child_now_ms();

	return c->next_ms > now ? c->next_ms - now : 0;
}

void np_child_demand_text(unsigned idle_s, uint64_t spawns, uint64_t idle_exits, char *buf,
			  size_t len)
{
	if (!idle_s) {
		snprintf(buf, len, "%s", "");
		return;
	}
	snprintf(buf, len,
		 "; on demand (helper_idle %u s): %" PRIu64 " spawns, %" PRIu64 " idle exits",
		 idle_s, spawns, idle_exits);
}

void np_child_status_text(int status, char *buf, size_t len)
{
	if (status < 0)
		snprintf(buf, len, "none");
	else if (WIFEXITED(status))
		snprintf(buf, len, "exit %d%s", WEXITSTATUS(status),
			 WEXITSTATUS(status) == NP_CHILD_EXIT_SETUP ? " (setup failed)" :
			 WEXITSTATUS(status) == NP_CHILD_EXIT_DROP ? " (dropping privileges failed)" :
			 WEXITSTATUS(status) == NP_CHILD_EXIT_PARENT ? " (daemon gone)" :
			 WEXITSTATUS(status) == NP_CHILD_EXIT_EXEC   ? " (exec failed)" :
			 WEXITSTATUS(status) == NP_CHILD_EXIT_IDLE   ? " (idle)" :
								       "");
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "status 0x%x", (unsigned)status);
}

int np_child_check_fd(char *why, size_t why_len)
{
	int type = 0;
	socklen_t l = sizeof(type);

	if (getsockopt(NP_CHILD_SOCK_FD, SOL_SOCKET, SO_TYPE, &type, &l) || type != SOCK_SEQPACKET) {
		snprintf(why, why_len,
			 "descriptor %d is not the daemon's socket: this helper is started by "
			 "oprofiled's plugin, not by hand",
			 NP_CHILD_SOCK_FD);
		return -EBADF;
	}
	return 0;
}
