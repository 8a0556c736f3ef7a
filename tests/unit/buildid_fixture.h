/*
 * buildid_fixture.h - what test_buildid and test_cookie_buildid share: a
 * scratch directory per run and the running kernel's build ID from
 * /sys/kernel/notes.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_TEST_BUILDID_FIXTURE_H
#define OP_TEST_BUILDID_FIXTURE_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "op_buildid.h"

/* the scratch directory of the run ($TMPDIR or /tmp), made by fixture_setup */
static char tmpdir[256];

static int fixture_setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_buildid.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int fixture_teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) ? -1 : 0;
}

/*
 * The build ID in /sys/kernel/notes into @id: its length, 0 (with a note
 * printed) when the file cannot be read here; a notes file without a
 * build ID fails the test.
 */
static inline size_t kernel_notes_id(uint8_t *id)
{
	uint8_t buf[8192];
	size_t len = 0;
	ssize_t n;
	int fd = open("/sys/kernel/notes", O_RDONLY);

	if (fd < 0) {
		print_message("skip: /sys/kernel/notes: %s\n", strerror(errno));
		return 0;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_true(n > 0);
	assert_int_equal(op_buildid_from_notes(buf, (size_t)n, id, &len), 0);
	assert_true(len >= 8 && len <= OP_BUILDID_MAX);
	return len;
}

#endif /* OP_TEST_BUILDID_FIXTURE_H */
