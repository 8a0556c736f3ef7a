/*
 * test_np_child.c - plugins/common/np_child: spawn the real helper program
 * np_child_helper (built next to this test, found through OP_HELPER_DIR as
 * a plugin finds its helper), check the process it runs in (as root: uid
 * nobody, no groups, NoNewPrivs, only fds 0-4, empty environment, cwd /),
 * round-trip messages with and without a memfd body, reject each kind of
 * malformed message without keeping a descriptor, see the child's exit and
 * death (status, backoff), time out on a peer that stops reading, and
 * refuse an untrusted helper directory and an unknown user; tell an idle
 * exit (no backoff, no restart) from a crash.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "np_child.h"
#include "np_child_test.h"

static char *const helper_argv[] = { "np_child_helper", NULL };
static struct np_msg msg;

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += de->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static void spawn(struct np_child *c, int extra)
{
	char why[512] = "";
	int rc;

	setenv("OP_HELPER_DIR", HELPER_DIR, 1);
	rc = np_child_init(c, "np_child_helper", NULL, extra, helper_argv, why, sizeof(why));
	if (rc)
		fail_msg("np_child_init: %s", why);
	rc = np_child_spawn(c, why, sizeof(why));
	if (rc)
		fail_msg("np_child_spawn: %s", why);
	rc = np_msg_recv(c->sock, &msg, 5000, why, sizeof(why));
	assert_int_equal(rc, 0);
	assert_int_equal(msg.h.type, NP_MSG_HELLO);
	assert_int_equal(msg.h.arg, NP_MSG_VERSION);
	assert_int_equal(msg.fd, -1);
}

static void test_process(void **state)
{
	struct np_child c;
	char why[256], want[64];
	int p[2];

	(void)state;
	assert_int_equal(pipe(p), 0);
	/* a descriptor of the parent the child must not see */
	int stray = open("/dev/null", O_RDONLY); /* not close-on-exec on purpose */

	assert_true(stray >= 0);
	spawn(&c, p[0]);
	assert_int_equal(np_msg_send(c.sock, NPT_INFO, 7, 0, NULL, 0, -1, 1000), 0);
	assert_int_equal(np_msg_recv(c.sock, &msg, 5000, why, sizeof(why)), 0);
	assert_int_equal(msg.h.type, NPT_INFO);
	assert_int_equal(msg.h.id, 7);
	print_message("helper: %s\n", msg.data);
	if (geteuid() == 0) {
		struct passwd *pw = getpwnam("nobody");

		assert_non_null(pw);
		snprintf(want, sizeof(want), "uid=%u gid=%u groups=0 ", (unsigned)pw->pw_uid,
			 (unsigned)pw->pw_gid);
	} else {
		snprintf(want, sizeof(want), "uid=%u ", (unsigned)getuid());
	}
	assert_true(strncmp(msg.data, want, strlen(want)) == 0);
	assert_non_null(strstr(msg.data, "nnp=1 cwd=/ env=0 fds=0,1,2,3,4,"));
	assert_true(strstr(msg.data, "fds=0,1,2,3,4,")[14] == 0);
	np_child_stop(&c, 2000);
	assert_int_equal(c.pid, 0);
	assert_true(WIFEXITED(c.last_status) && WEXITSTATUS(c.last_status) == 0);
	close(stray);
	close(p[0]);
	close(p[1]);
}

static void test_roundtrip(void **state)
{
	struct np_child c;
	char why[256], body[100000];
	const void *p;
	size_t len, i;
	int fd, before;

	(void)state;
	spawn(&c, -1);
	before = count_fds();
	/* inline, the largest payload allowed */
	memset(body, 'a', NP_MSG_INLINE_MAX);
	assert_int_equal(np_msg_send(c.sock, NPT_ECHO, 1, 42, body, NP_MSG_INLINE_MAX, -1, 1000), 0);
	assert_int_equal(np_msg_recv(c.sock, &msg, 5000, why, sizeof(why)), 0);
	assert_int_equal(msg.h.id, 1);
	assert_int_equal(msg.h.arg, 42);
	assert_int_equal(msg.h.len, NP_MSG_INLINE_MAX);
	assert_memory_equal(msg.data, body, NP_MSG_INLINE_MAX);
	assert_int_equal(np_msg_send(c.sock, NPT_ECHO, 1, 0, body, NP_MSG_INLINE_MAX + 1, -1, 1000),
			 -EMSGSIZE);
	/* a body by sealed memfd, both ways */
	for (i = 0; i < sizeof(body); i++)
		body[i] = (char)(i * 7);
	fd = np_memfd_new("body", body, sizeof(body));
	assert_true(fd >= 0);
	assert_int_equal(np_msg_send(c.sock, NPT_ECHO, 2, UINT64_MAX, "hdr", 3, fd, 1000), 0);
	close(fd);
	assert_int_equal(np_msg_recv(c.sock, &msg, 5000, why, sizeof(why)), 0);
	assert_int_equal(msg.h.id, 2);
	assert_true(msg.h.arg == UINT64_MAX);
	assert_string_equal(msg.data, "hdr");
	assert_true(msg.fd >= 0);
	assert_int_equal(np_memfd_check(msg.fd, 1000, &len, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "more than the bound"));
	assert_int_equal(np_memfd_map(msg.fd, sizeof(body), &p, &len, why, sizeof(why)), 0);
	assert_int_equal(len, sizeof(body));
	assert_memory_equal(p, body, sizeof(body));
	munmap((void *)p, len);
	close(msg.fd);
	assert_int_equal(count_fds(), before);
	/* nothing pending: a timeout */
	assert_int_equal(np_msg_recv(c.sock, &msg, 100, why, sizeof(why)), -ETIMEDOUT);
	np_child_stop(&c, 2000);
}

static void test_hostile(void **state)
{
	static const struct {
		unsigned what;
		const char *why;
	} cases[] = {
		{ NPT_BAD_LEN, "whose header says 100 payload bytes" },
		{ NPT_BAD_MAGIC, "without the magic" },
		{ NPT_HUGE, "more than the bound" },
		{ NPT_UNANNOUNCED_FD, "1 descriptors where the header announces 0" },
		{ NPT_TWO_FDS, "2 descriptors where the header announces 1" },
		{ NPT_SHORT, "shorter than its header" },
		{ NPT_MISSING_FD, "0 descriptors where the header announces 1" },
		{ NPT_BAD_FLAGS, "unknown flags" },
	};
	struct np_child c;
	char why[256];
	size_t i, len;
	int before;

	(void)state;
	spawn(&c, -1);
	before = count_fds();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(np_msg_send(c.sock, NPT_HOSTILE, 0, cases[i].what, NULL, 0, -1,
					     1000),
				 0);
		assert_int_equal(np_msg_recv(c.sock, &msg, 5000, why, sizeof(why)), -EBADMSG);
		print_message("hostile %u: %s\n", cases[i].what, why);
		assert_non_null(strstr(why, cases[i].why));
		assert_int_equal(msg.fd, -1);
		assert_int_equal(count_fds(), before);
	}
	/* well-formed, but its body is not sealed: refused by np_memfd_check */
	assert_int_equal(np_msg_send(c.sock, NPT_HOSTILE, 0, NPT_UNSEALED, NULL, 0, -1, 1000), 0);
	assert_int_equal(np_msg_recv(c.sock, &msg, 5000, why, sizeof(why)), 0);
	assert_true(msg.fd >= 0);
	assert_int_equal(np_memfd_check(msg.fd, 1 << 20, &len, why, sizeof(why)), -EBADMSG);
	assert_non_null(strstr(why, "not sealed"));
	close(msg.fd);
	/* the helper checks what it receives too: a bad message is logged, not obeyed */
	{
		struct np_msg_hdr h = { .magic = 1, .type = NPT_EXIT };

		assert_int_equal(send(c.sock, &h, sizeof(h), 0), (ssize_t)sizeof(h));
		assert_int_equal(np_msg_recv(c.sock, &msg, 5000, why, sizeof(why)), 0);
		assert_int_equal(msg.h.type, NP_MSG_LOG);
		assert_non_null(strstr(msg.data, "without the magic"));
		assert_false(np_child_reaped(&c));
	}
	/* a peer that stops reading: sends time out, they never block */
	assert_int_equal(np_msg_send(c.sock, NPT_HOSTILE, 0, NPT_STOP_READING, NULL, 0, -1, 1000),
			 0);
	{
		static char big[NP_MSG_INLINE_MAX];
		int rc = 0, n;

		for (n = 0; n < 10000 && rc == 0; n++)
			rc = np_msg_send(c.sock, NPT_ECHO, 0, 0, big, sizeof(big), -1, 50);
		assert_int_equal(rc, -ETIMEDOUT);
		assert_true(n < 10000);
	}
	np_child_stop(&c, 100); /* asleep: killed after the grace time */
	assert_true(WIFSIGNALED(c.last_status) && WTERMSIG(c.last_status) == SIGKILL);
	assert_int_equal(count_fds(), before - 2); /* the socket and the pidfd closed */
}

static void test_death(void **state)
{
	struct np_child c;
	char why[256], text[64];
	int i;

	(void)state;
	spawn(&c, -1);
	assert_int_equal(np_msg_send(c.sock, NPT_EXIT, 0, 7, NULL, 0, -1, 1000), 0);
	assert_int_equal(np_msg_recv(c.sock, &msg, 5000, why, sizeof(why)), -EPIPE);
	for (i = 0; i < 500 && !np_child_reaped(&c); i++)
		usleep(10000);
	assert_int_equal(c.pid, 0);
	assert_int_equal(c.sock, -1);
	assert_true(WIFEXITED(c.last_status) && WEXITSTATUS(c.last_status) == 7);
	np_child_status_text(c.last_status, text, sizeof(text));
	assert_string_equal(text, "exit 7");
	/* a restart waits for the backoff */
	assert_true(np_child_wait_ms(&c) > 0 && np_child_wait_ms(&c) <= 250);
	assert_int_equal(c.exits, 1);
	/* spawn again (the backoff is the caller's to respect), then kill it */
	assert_int_equal(np_child_spawn(&c, why, sizeof(why)), 0);
	assert_int_equal(c.spawns, 2);
	np_child_kill(&c);
	assert_true(WIFSIGNALED(c.last_status) && WTERMSIG(c.last_status) == SIGKILL);
	np_child_status_text(c.last_status, text, sizeof(text));
	assert_string_equal(text, "signal 9 (Killed)");
	/* the second death doubles the delay */
	assert_true(np_child_wait_ms(&c) > 250);
	assert_int_equal(c.exits, 2);
}

/* reap a child that is ending, within 5 s */
static void reap(struct np_child *c)
{
	int i;

	for (i = 0; i < 500 && !np_child_reaped(c); i++)
		usleep(10000);
	assert_int_equal(c->pid, 0);
}

/*
 * On-demand helpers: an idle exit is no crash (no backoff, the next spawn
 * no restart), but only from a child that lived its idle time; a retired
 * child counts as idle, a crash after idle exits backs off as before.
 */
static void test_idle(void **state)
{
	struct np_child c;
	char why[256], text[64];

	(void)state;
	spawn(&c, -1);
	c.idle_ms = 100;
	usleep(150 * 1000);
	assert_int_equal(np_msg_send(c.sock, NPT_EXIT, 0, NP_CHILD_EXIT_IDLE, NULL, 0, -1, 1000), 0);
	reap(&c);
	assert_true(c.last_idle);
	assert_int_equal(c.idle_exits, 1);
	assert_int_equal(c.exits, 1);
	assert_int_equal(np_child_wait_ms(&c), 0);
	np_child_status_text(c.last_status, text, sizeof(text));
	assert_string_equal(text, "exit 119 (idle)");
	/* the next spawn is no restart */
	assert_int_equal(np_child_spawn(&c, why, sizeof(why)), 0);
	assert_int_equal(c.spawns, 2);
	assert_int_equal(c.restarts, 0);
	/* "idle" at once, before its idle time: a crash, backed off */
	c.idle_ms = 60000;
	assert_int_equal(np_msg_send(c.sock, NPT_EXIT, 0, NP_CHILD_EXIT_IDLE, NULL, 0, -1, 1000), 0);
	reap(&c);
	assert_false(c.last_idle);
	assert_int_equal(c.idle_exits, 1);
	assert_true(np_child_wait_ms(&c) > 0 && np_child_wait_ms(&c) <= 250);
	/* after a crash the next spawn is a restart; a retired child ends idle */
	assert_int_equal(np_child_spawn(&c, why, sizeof(why)), 0);
	assert_int_equal(c.restarts, 1);
	assert_int_equal(np_msg_recv(c.sock, &msg, 5000, why, sizeof(why)), 0);
	np_child_retire(&c, 2000);
	assert_int_equal(c.pid, 0);
	assert_true(c.last_idle);
	assert_int_equal(c.idle_exits, 2);
	assert_int_equal(np_child_wait_ms(&c), 0);
	assert_true(WIFEXITED(c.last_status) && WEXITSTATUS(c.last_status) == 0);
	/* a plain exit 0 is no idle exit unless retired */
	assert_int_equal(np_child_spawn(&c, why, sizeof(why)), 0);
	assert_int_equal(c.restarts, 1);
	assert_int_equal(np_msg_send(c.sock, NPT_EXIT, 0, 0, NULL, 0, -1, 1000), 0);
	reap(&c);
	assert_false(c.last_idle);
	assert_true(np_child_wait_ms(&c) > 0);
	assert_int_equal(c.idle_exits, 2);
	assert_int_equal(c.exits, 4);
}

static void test_refused(void **state)
{
	char dir[] = "/tmp/test_np_child.XXXXXX", path[256], why[512];
	struct np_child c;
	int rc;

	(void)state;
	setenv("OP_HELPER_DIR", HELPER_DIR, 1);
	rc = np_child_init(&c, "no_such_helper", NULL, -1, helper_argv, why, sizeof(why));
	assert_int_equal(rc, -ENOENT);
	print_message("missing: %s\n", why);
	rc = np_child_init(&c, "../np_child_helper", NULL, -1, helper_argv, why, sizeof(why));
	assert_int_equal(rc, -EINVAL);
	if (geteuid() == 0) {
		rc = np_child_init(&c, "np_child_helper", "no-such-user-np", -1, helper_argv, why,
				   sizeof(why));
		assert_int_equal(rc, -ENOENT);
		assert_non_null(strstr(why, "user=no-such-user-np"));
		rc = np_child_init(&c, "np_child_helper", "root", -1, helper_argv, why, sizeof(why));
		assert_int_equal(rc, -EPERM);
	}
	/* a helper directory its group may write */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "cp %s/np_child_helper %s/", HELPER_DIR, dir);
	assert_int_equal(system(path), 0);
	setenv("OP_HELPER_DIR", dir, 1);
	assert_int_equal(np_child_init(&c, "np_child_helper", NULL, -1, helper_argv, why,
				       sizeof(why)),
			 0);
	assert_int_equal(chmod(dir, 0770), 0);
	rc = np_child_init(&c, "np_child_helper", NULL, -1, helper_argv, why, sizeof(why));
	print_message("group-writable: %s\n", why);
	assert_int_equal(rc, -EPERM);
	assert_non_null(strstr(why, "is writable by group or others (mode 0770)"));
	assert_int_equal(chmod(dir, 0700), 0);
	if (geteuid() == 0) {
		/* a helper another user owns */
		snprintf(path, sizeof(path), "%s/np_child_helper", dir);
		assert_int_equal(chown(path, 4321, 0), 0);
		rc = np_child_init(&c, "np_child_helper", NULL, -1, helper_argv, why, sizeof(why));
		print_message("foreign owner: %s\n", why);
		assert_int_equal(rc, -EPERM);
		assert_non_null(strstr(why, "owned by uid 4321"));
	}
	snprintf(path, sizeof(path), "rm -rf %s", dir);
	assert_int_equal(system(path), 0);
	/* a relative directory */
	setenv("OP_HELPER_DIR", "relative/dir", 1);
	rc = np_child_init(&c, "np_child_helper", NULL, -1, helper_argv, why, sizeof(why));
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(why, "not an absolute path"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_process), cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_hostile), cmocka_unit_test(test_death),
		cmocka_unit_test(test_refused), cmocka_unit_test(test_idle),
	};

	/* a child's death must not kill the test through SIGPIPE */
	signal(SIGPIPE, SIG_IGN);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
