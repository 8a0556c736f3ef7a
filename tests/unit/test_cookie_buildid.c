/*
 * test_cookie_buildid.c - the daemon's side of stats/buildids: what
 * cookie_intern reads of an image once (a real ELF fixture against
 * op_buildid_from_fd and stat; a FIFO and a symbolic link without blocking
 * or following; the kernel's and a module's notes below a sysfs root),
 * which images the index names (sampled ones in this session, never anon,
 * a new session starting empty), and stats/ writing and reading it back
 * (an --append'ed session's lines kept, a torn last line dropped).
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buildid_fixture.h"
#include "cookie.h"
#include "stats.h"

static op_cookie_t intern(struct cookie_table *t, const char *path, enum op_image_kind kind)
{
	op_cookie_t c = cookie_intern(t, path, strlen(path), kind, false);

	assert_true(c != 0);
	return c;
}

static void test_user_image(void **state)
{
	struct cookie_table t;
	const struct cookie_ent *e;
	uint8_t id[OP_BUILDID_MAX];
	size_t len;
	struct stat st;
	char fifo[300], link[300];
	int fd = open(FIX_DIR "/buildid_sha1", O_RDONLY);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(op_buildid_from_fd(fd, id, &len), 0);
	assert_int_equal(fstat(fd, &st), 0);
	close(fd);
	assert_int_equal(cookie_init(&t), 0);
	e = cookie_get(&t, intern(&t, FIX_DIR "/buildid_sha1", OP_IMAGE_USER));
	assert_int_equal(e->ids.id_len, len);
	assert_memory_equal(e->ids.id, id, len);
	assert_int_equal(e->size, (uint64_t)st.st_size);
	assert_int_equal(e->mtime, (uint64_t)st.st_mtime);
	assert_true(e->ids.text_size > 0);
	/* interned again: the same entry, not read again */
	assert_ptr_equal(cookie_get(&t, intern(&t, FIX_DIR "/buildid_sha1", OP_IMAGE_USER)), e);
	/* no build ID */
	e = cookie_get(&t, intern(&t, FIX_DIR "/buildid_none", OP_IMAGE_USER));
	assert_int_equal(e->ids.id_len, 0);
	assert_true(e->size > 0);
	/* a FIFO where a binary was: opened without blocking, nothing read */
	snprintf(fifo, sizeof(fifo), "%s/fifo", tmpdir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	e = cookie_get(&t, intern(&t, fifo, OP_IMAGE_USER));
	assert_int_equal(e->ids.id_len, 0);
	assert_int_equal(e->size, 0);
	/* a symbolic link: not followed for the build ID, its target's mtime as before */
	snprintf(link, sizeof(link), "%s/link", tmpdir);
	assert_int_equal(symlink(FIX_DIR "/buildid_sha1", link), 0);
	e = cookie_get(&t, intern(&t, link, OP_IMAGE_USER));
	assert_int_equal(e->ids.id_len, 0);
	assert_int_equal(e->mtime, (uint64_t)st.st_mtime);
	cookie_free(&t);
}

/* the kernel's notes (this machine's) and a module's, below a sysfs root made here */
static void test_kernel_images(void **state)
{
	struct cookie_table t;
	const struct cookie_ent *e;
	uint8_t id[OP_BUILDID_MAX];
	char root[300], cmd[1024];
	size_t len = kernel_notes_id(id);

	(void)state;
	if (!len)
		return;
	assert_int_equal(cookie_init(&t), 0);
	e = cookie_get(&t, intern(&t, "vmlinux", OP_IMAGE_KERNEL));
	assert_int_equal(e->ids.id_len, len);
	assert_memory_equal(e->ids.id, id, len);
	/* a module: /sys/module/NAME/notes/.note.gnu.build-id (none loaded here: a copy) */
	snprintf(root, sizeof(root), "%s/sysroot", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p '%s/sys/module/m1/notes' && cp /sys/kernel/notes "
		 "'%s/sys/module/m1/notes/.note.gnu.build-id'",
		 root, root);
	assert_int_equal(system(cmd), 0);
	t.sys_root = root;
	e = cookie_get(&t, intern(&t, "m1", OP_IMAGE_KERNEL));
	assert_int_equal(e->ids.id_len, len);
	/* names that are no module's are not looked up */
	e = cookie_get(&t, intern(&t, "[m2]", OP_IMAGE_KERNEL));
	assert_int_equal(e->ids.id_len, 0);
	e = cookie_get(&t, intern(&t, "..", OP_IMAGE_KERNEL));
	assert_int_equal(e->ids.id_len, 0);
	e = cookie_get(&t, intern(&t, "m3", OP_IMAGE_KERNEL));
	assert_int_equal(e->ids.id_len, 0);
	cookie_free(&t);
}

static void test_index_text(void **state)
{
	struct cookie_table t;
	struct op_buildid_index idx;
	op_cookie_t a, b, anon, del;
	char *text;
	long len;

	(void)state;
	assert_int_equal(cookie_init(&t), 0);
	a = intern(&t, FIX_DIR "/buildid_sha1", OP_IMAGE_USER);
	b = intern(&t, FIX_DIR "/buildid_md5", OP_IMAGE_USER);
	anon = intern(&t, "[heap]", OP_IMAGE_ANON);
	intern(&t, FIX_DIR "/buildid_none", OP_IMAGE_USER); /* mapped, never sampled */
	/* a deleted mapping of the same path: nothing known, not listed */
	del = cookie_intern(&t, FIX_DIR "/buildid_sha1", strlen(FIX_DIR "/buildid_sha1"),
			    OP_IMAGE_USER, true);
	assert_true(del != a);
	assert_int_equal(cookie_get(&t, del)->ids.id_len, 0);
	assert_int_equal(cookie_index_text(&t, &text), 0);
	assert_null(text);
	cookie_mark_sampled(&t, a);
	cookie_mark_sampled(&t, anon);
	cookie_mark_sampled(&t, b);
	cookie_mark_sampled(&t, del);
	cookie_mark_sampled(&t, a);
	len = cookie_index_text(&t, &text);
	assert_true(len > 0);
	assert_int_equal(strlen(text), (size_t)len);
	assert_int_equal(strncmp(text, op_buildid_index_header, strlen(op_buildid_index_header)), 0);
	assert_int_equal(op_buildid_index_parse(text, (size_t)len, &idx), 0);
	free(text);
	assert_int_equal(idx.n, 2);
	assert_int_equal(idx.nbad, 0);
	assert_int_equal(op_buildid_index_find(&idx, FIX_DIR "/buildid_sha1")->ids.id_len, 20);
	assert_int_equal(op_buildid_index_find(&idx, FIX_DIR "/buildid_md5")->ids.id_len, 16);
	assert_null(op_buildid_index_find(&idx, FIX_DIR "/buildid_none"));
	op_buildid_index_free(&idx);
	/* a rotation: the next session names what it samples, nothing else */
	cookie_new_session(&t);
	assert_int_equal(cookie_index_text(&t, &text), 0);
	cookie_mark_sampled(&t, b);
	len = cookie_index_text(&t, &text);
	assert_int_equal(op_buildid_index_parse(text, (size_t)len, &idx), 0);
	free(text);
	assert_int_equal(idx.n, 1);
	assert_non_null(op_buildid_index_find(&idx, FIX_DIR "/buildid_md5"));
	op_buildid_index_free(&idx);
	cookie_free(&t);
}

static void test_stats_files(void **state)
{
	static const char old[] =
		"# an earlier run\nuser - 1 2 0x0 0x0 0x0 /old\nuser - 3 4 0x0 0x0 0x0 /torn";
	static const char now[] = "user - 5 6 0x0 0x0 0x0 /new\n";
	struct op_buildid_index idx;
	char dir[300], err[256], p[400], *o;
	size_t olen;
	int dfd, fd;

	(void)state;
	snprintf(dir, sizeof(dir), "%s/cur", tmpdir);
	assert_int_equal(mkdir(dir, 0755), 0);
	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	/* nothing there yet */
	assert_int_equal(stats_read_buildids(dfd, &o, &olen), 0);
	assert_null(o);
	/* an --append'ed session's index: its whole lines are kept */
	assert_int_equal(mkdir(strcat(strcpy(p, dir), "/stats"), 0755), 0);
	strcat(p, "/buildids");
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, old, sizeof(old) - 1), (ssize_t)sizeof(old) - 1);
	close(fd);
	assert_int_equal(stats_read_buildids(dfd, &o, &olen), 0);
	assert_non_null(o);
	assert_int_equal(olen, strchr(strchr(old, '\n') + 1, '\n') + 1 - old);
	assert_int_equal(stats_write_buildids(dfd, o, olen, now, sizeof(now) - 1), 0);
	free(o);
	assert_int_equal(op_buildid_index_load(dir, &idx, err, sizeof(err)), 0);
	assert_int_equal(idx.n, 2);
	assert_non_null(op_buildid_index_find(&idx, "/old"));
	assert_non_null(op_buildid_index_find(&idx, "/new"));
	assert_null(op_buildid_index_find(&idx, "/torn"));
	op_buildid_index_free(&idx);
	/* no temporary file left behind */
	assert_int_equal(access(strcat(strcpy(p, dir), "/stats/.tmp.buildids"), F_OK), -1);
	close(dfd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_user_image),
		cmocka_unit_test(test_kernel_images),
		cmocka_unit_test(test_index_text),
		cmocka_unit_test(test_stats_files),
	};

	return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
