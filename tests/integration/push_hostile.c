/*
 * push_hostile.c - a hostile stand-in for the push helper, built as
 * tests/integration/push_hostile/oprofiled-push and put first in
 * OP_HELPER_DIR by push_hostile.sh: it says hello as the real one does,
 * then answers each request the way the request's service name (the
 * Pyroscope name=SERVICE{} in its URL) asks - malformed, mismatched,
 * flooding, silent or dead - so that the push plugin's side of the
 * protocol is tested against each: the daemon must log it, kill and
 * restart the helper, keep the profile spooled and never crash or hang.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "np_child.h"
#include "oprofile_sdk.h"
#include "push_wire.h"

#define SOCK NP_CHILD_SOCK_FD

static void raw(const void *buf, size_t len)
{
	send(SOCK, buf, len, MSG_NOSIGNAL);
}

static void answer(const char *mode, uint32_t id)
{
	struct pw_result res = { 0 };
	char out[sizeof(res) + PW_MAX_ERROR + 64];
	struct np_msg_hdr h = { .magic = NP_MSG_MAGIC, .type = PW_RESULT, .id = id };
	int p[2];
	unsigned i;

	memset(out, 0, sizeof(out));
	if (!strcmp(mode, "garbage")) {
		/* a datagram that is no message: wrong magic, lying length */
		h.magic = 0xdeadbeef;
		h.len = 1u << 30;
		raw(&h, sizeof(h));
	} else if (!strcmp(mode, "wrongid")) {
		np_msg_send(SOCK, PW_RESULT, id + 7, 200, &res, sizeof(res), -1, 1000);
	} else if (!strcmp(mode, "status")) {
		np_msg_send(SOCK, PW_RESULT, id, 123456, &res, sizeof(res), -1, 1000);
	} else if (!strcmp(mode, "short")) {
		np_msg_send(SOCK, PW_RESULT, id, 200, &res, 2, -1, 1000);
	} else if (!strcmp(mode, "fd")) {
		/* an answer carrying a descriptor the daemon never asked for */
		if (pipe(p))
			_exit(2);
		np_msg_send(SOCK, PW_RESULT, id, 200, &res, sizeof(res), p[0], 1000);
	} else if (!strcmp(mode, "text")) {
		/* an error text with terminal escapes and newlines, no NUL: cleaned, bounded */
		res.curl_code = 7;
		memcpy(out, &res, sizeof(res));
		memset(out + sizeof(res), '\033', PW_MAX_ERROR);
		memcpy(out + sizeof(res), "\033[2J\nevil\r", 10);
		np_msg_send(SOCK, PW_RESULT, id, 0, out, sizeof(res) + PW_MAX_ERROR, -1, 1000);
		return;
	} else if (!strcmp(mode, "flood")) {
		/* log lines without end: the daemon stops reading after a few */
		for (i = 0; i < 100000; i++)
			if (np_msg_send(SOCK, NP_MSG_LOG, 0, OP_LOG_ERR, "flood", 5, -1, 1000))
				break;
	} else if (!strcmp(mode, "silent")) {
		/* never answers, ignores the hang-up: the daemon must kill it */
		for (;;)
			pause();
	} else if (!strcmp(mode, "exit")) {
		_exit(3);
	}
	/* the modes that misbehaved once stay until killed */
	for (;;)
		pause();
}

int main(void)
{
	static struct np_msg m;
	char why[256], mode[64];
	const char *name, *end;

	if (np_child_check_fd(why, sizeof(why)))
		return 2;
	if (np_msg_send(SOCK, NP_MSG_HELLO, 0, NP_MSG_VERSION, "hostile\0\0", 10, -1, 1000))
		return 1;
	for (;;) {
		if (np_msg_recv(SOCK, &m, -1, why, sizeof(why)))
			return 0;
		if (m.fd >= 0)
			close(m.fd);
		if (m.h.type != PW_REQ)
			return 1;
		/* the URL is the request's first string: "U...name=MODE%7B..." */
		name = strstr(m.data + sizeof(struct pw_req), "name=");
		if (!name)
			return 1;
		name += 5;
		end = strstr(name, "%7B");
		snprintf(mode, sizeof(mode), "%.*s", end ? (int)(end - name) : 0, name);
		answer(mode, m.h.id);
	}
}
