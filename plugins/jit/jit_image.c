/*
 * jit_image.c - OProfile's opjitconv step inside the daemon: a process's JIT
 * functions become the ELF image <session>/jit/PID.GEN.jo (lib/op_jitelf),
 * a place a rotation does not move, so every rotated session still finds
 * its images and oparchive copies them like any binary. The name is
 * reserved (O_EXCL) when the first function arrives and its cookie
 * interned then; every later write goes to a temporary file renamed over
 * it, with the reserved mtime kept, so opreport never sees half an image
 * nor a "modified after profiling" one. Names are numbers only.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jit.h"
#include "op_trust.h"

/* <session>/jit, created and checked once; -errno when there is none */
static int jit_image_dir(struct jit_state *st)
{
	struct op_trust t = op_trust_for(geteuid(), geteuid());
	char why[512];
	struct stat sb;
	int sfd, fd;

	if (st->jit_dirfd >= 0)
		return st->jit_dirfd;
	if (st->jit_dirfd == -2)
		return -ENOENT;
	st->jit_dirfd = -2;
	if (!st->session_dir) {
		st->host->log(st->ctx, OP_LOG_INFO,
			      "no session directory: JIT code stays anon (no images)");
		return -ENOENT;
	}
	sfd = open(st->session_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0) {
		st->host->log(st->ctx, OP_LOG_ERR, "session directory %s: %s", st->session_dir,
			      strerror(errno));
		return -ENOENT;
	}
	if (mkdirat(sfd, "jit", 0750) && errno != EEXIST) {
		st->host->log(st->ctx, OP_LOG_ERR, "cannot create %s/jit: %s", st->session_dir,
			      strerror(errno));
		close(sfd);
		return -ENOENT;
	}
	fd = op_trust_openat(&t, sfd, "jit", O_RDONLY | O_DIRECTORY, S_IFDIR, "JIT image directory",
			     st->session_dir, &sb, why, sizeof(why));
	close(sfd);
	if (fd < 0) {
		st->host->log(st->ctx, OP_LOG_ERR, "%s - JIT code stays anon", why);
		return -ENOENT;
	}
	st->jit_dirfd = fd;
	return fd;
}

int jit_image_reserve(struct jit_proc *p)
{
	struct jit_state *st = p->st;
	char path[PATH_MAX];
	struct stat sb;
	int dfd = jit_image_dir(st), fd = -1;
	unsigned gen;

	if (dfd < 0)
		return dfd;
	/* a pid comes back (reuse, a restarted daemon): the next free generation */
	for (gen = 0; gen < 10000; gen++) {
		snprintf(p->name, sizeof(p->name), "%u.%u.jo", p->pid, gen);
		fd = openat(dfd, p->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0640);
		if (fd >= 0 || errno != EEXIST)
			break;
	}
	if (fd < 0 || fstat(fd, &sb)) {
		st->v[JS_IMAGE_ERRORS]++;
		st->host->log(st->ctx, OP_LOG_ERR, "pid %u: cannot create %s/jit/%s: %s", p->pid,
			      st->session_dir, p->name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	close(fd);
	p->gen = gen;
	p->mtime = sb.st_mtim;
	snprintf(path, sizeof(path), "%s/jit/%s", st->session_dir, p->name);
	p->cookie = st->host->cookie_intern(st->ctx, path, false);
	if (!p->cookie) {
		st->v[JS_IMAGE_ERRORS]++;
		return -ENOMEM;
	}
	return 0;
}

void jit_image_write(struct jit_proc *p)
{
	struct jit_state *st = p->st;
	struct op_jitelf_func *funcs;
	struct op_jitelf_image img;
	struct timespec times[2];
	char tmp[80], cu[32], err[256];
	int dfd = st->jit_dirfd, fd, rc;
	uint32_t i;

	if (!p->dirty || !p->cookie || dfd < 0)
		return;
	funcs = calloc(p->nr_fns ? p->nr_fns : 1, sizeof(*funcs));
	if (!funcs) {
		st->v[JS_IMAGE_ERRORS]++;
		return;
	}
	for (i = 0; i < p->nr_fns; i++) {
		funcs[i].name = p->fns[i].name;
		funcs[i].off = p->fns[i].off;
		funcs[i].size = p->fns[i].size;
		funcs[i].code = p->fns[i].code;
		funcs[i].lines = p->fns[i].lines;
		funcs[i].nr_lines = p->fns[i].nr_lines;
	}
	snprintf(cu, sizeof(cu), "jit-%u", p->pid);
	memset(&img, 0, sizeof(img));
	img.text_size = p->text_size;
	img.funcs = funcs;
	img.nr_funcs = p->nr_fns;
	img.files = (const char *const *)p->files;
	img.nr_files = p->nr_files;
	img.cu_name = cu;
	snprintf(tmp, sizeof(tmp), "%s.tmp", p->name);
	unlinkat(dfd, tmp, 0);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0640);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, sizeof(err), "%s", strerror(-rc));
		goto out_err;
	}
	rc = op_jitelf_write(fd, &img, err, sizeof(err));
	/* the mtime the sample files recorded when the name was reserved */
	times[0] = times[1] = p->mtime;
	if (!rc && futimens(fd, times)) {
		rc = -errno;
		snprintf(err, sizeof(err), "setting its time: %s", strerror(-rc));
	}
	if (close(fd) && !rc) {
		rc = -errno;
		snprintf(err, sizeof(err), "%s", strerror(-rc));
	}
	if (!rc && renameat(dfd, tmp, dfd, p->name)) {
		rc = -errno;
		snprintf(err, sizeof(err), "renaming it: %s", strerror(-rc));
	}
	if (rc)
		goto out_err;
	free(funcs);
	st->v[JS_IMAGES]++;
	p->dirty = false;
	return;

out_err:
	unlinkat(dfd, tmp, 0);
	free(funcs);
	st->v[JS_IMAGE_ERRORS]++;
	st->host->log(st->ctx, OP_LOG_ERR, "pid %u: writing %s/jit/%s: %s", p->pid, st->session_dir,
		      p->name, err);
}
