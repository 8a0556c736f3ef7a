/*
 * opagent_compat.c - a client of OProfile 1.x's agent API, compiled against
 * OProfile's header text (oprofile_opagent.h; <opagent.h> of an install when
 * built with -DOPAGENT_INSTALLED) and linked with our libopagent: every call
 * of the API with its documented return conventions (0 / -1 and errno,
 * NULL and errno), N functions written with line tables, half unloaded.
 * Usage: opagent_compat [N]   (N functions, default 10)
 * Exit 0 when every call behaved as documented, 1 otherwise.
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef OPAGENT_INSTALLED
#include <opagent.h>
#else
#include "oprofile_opagent.h"
#endif

static int failed;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "opagent_compat: %s (errno %d: %s)\n", what, errno, strerror(errno));
		failed = 1;
	}
}

int main(int argc, char **argv)
{
	static unsigned char code[64][32];
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10;
	op_agent_t a;

	if (n > 64)
		n = 64;
	check(op_major_version() == 1, "op_major_version() is not 1");
	check(op_minor_version() >= 0, "op_minor_version() is negative");
	a = op_open_agent();
	check(a != NULL, "op_open_agent() returned NULL");
	if (!a)
		return 1;
	for (unsigned long i = 0; i < n; i++) {
		struct debug_line_info li[2];
		char name[64];

		memset(code[i], 0x90, sizeof(code[i]));
		snprintf(name, sizeof(name), "Lcompat/Klass;method%lu(I)V", i);
		check(op_write_native_code(a, name, (uint64_t)(uintptr_t)code[i], code[i],
					   sizeof(code[i])) == 0,
		      "op_write_native_code failed");
		li[0].vma = (unsigned long)(uintptr_t)code[i];
		li[0].lineno = (unsigned)(100 + i);
		li[0].filename = "Klass.java";
		li[1].vma = (unsigned long)(uintptr_t)code[i] + 16;
		li[1].lineno = (unsigned)(101 + i);
		li[1].filename = "Klass.java";
		check(op_write_debug_line_info(a, code[i], 2, li) == 0,
		      "op_write_debug_line_info failed");
		/* documented: no entries writes nothing and succeeds */
		check(op_write_debug_line_info(a, code[i], 0, li) == 0,
		      "op_write_debug_line_info with 0 entries failed");
	}
	for (unsigned long i = 0; i < n; i += 2)
		check(op_unload_native_code(a, (uint64_t)(uintptr_t)code[i]) == 0,
		      "op_unload_native_code failed");
	/* documented: -1 with errno on a bad handle */
	errno = 0;
	check(op_write_native_code(NULL, "x", 0, code[0], 1) == -1 && errno == EINVAL,
	      "op_write_native_code(NULL handle) did not fail with EINVAL");
	errno = 0;
	check(op_unload_native_code(NULL, 0) == -1 && errno == EINVAL,
	      "op_unload_native_code(NULL handle) did not fail with EINVAL");
	check(op_close_agent(a) == 0, "op_close_agent failed");
	errno = 0;
	check(op_close_agent(NULL) == -1 && errno == EINVAL,
	      "op_close_agent(NULL) did not fail with EINVAL");
	if (!failed)
		printf("opagent_compat: API %d.%d, %lu functions written, %lu unloaded\n",
		       op_major_version(), op_minor_version(), n, (n + 1) / 2);
	return failed;
}
