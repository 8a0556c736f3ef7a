/*
 * stats.c - counter names, the log block and the operf-style stats/ files
 * (added to an --append'ed session's, written whole or not at all).
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_buildid.h"
#include "op_session_layout.h"
#include "stats.h"

static const struct {
	const char *name;
	const char *file;
} stats_names[STAT_NR] = {
	[STAT_SAMPLES] = { "Nr. samples received", NULL },
	[STAT_KERNEL_SAMPLES] = { "Nr. kernel samples", NULL },
	[STAT_USER_SAMPLES] = { "Nr. user samples", NULL },
	[STAT_SOURCE_SAMPLES] = { "Nr. plugin source samples", NULL },
	[STAT_LOST_KERNEL] = { "Nr. samples lost: no kernel image for the pc", OP_STATS_LOST_KERNEL },
	[STAT_LOST_NO_MAPPING] = { "Nr. samples lost: no mapping", OP_STATS_LOST_NO_MAPPING },
	[STAT_LOST_NO_APP_USER] = { "Nr. user samples lost: no app info", OP_STATS_LOST_NO_APP_USER },
	[STAT_LOST_NO_CONTEXT] = { "Nr. lost samples (no kernel/user)", NULL },
	[STAT_LOST_INVALID_DOMAIN] = { "Nr. samples lost: hypervisor/guest/unknown mode",
				       OP_STATS_LOST_INVALID_DOMAIN },
	[STAT_LOST_RECORDS] = { "Nr. records lost by the kernel (ring full), all kinds", NULL },
	[STAT_KLOST_SAMPLES] = { "Nr. samples lost by the kernel (ring full)",
				 OP_STATS_KLOST_SAMPLES },
	[STAT_KLOST_SIDEBAND] = { "Nr. mmap/comm/fork/exit records lost by the kernel",
				  OP_STATS_KLOST_SIDEBAND },
	[STAT_LOST_SAMPLEFILE] = { "Nr. samples lost: sample file open failure",
				   OP_STATS_LOST_SAMPLEFILE },
	[STAT_LOST_BAD_COUNTER] = { "Nr. samples lost: unknown counter", NULL },
	[STAT_LOST_PLUGIN_FILE] = { "Nr. samples lost: plugin file refused", NULL },
	[STAT_THROTTLE] = { "Nr. throttle records", NULL },
	[STAT_UNTHROTTLE] = { "Nr. unthrottle records", NULL },
	[STAT_UNKNOWN_CODE] = { "Nr. unknown codes", NULL },
	[STAT_INCOMPLETE_CODE] = { "Nr. incomplete/dangling codes", NULL },
	[STAT_EVB_TOO_LONG] = { "Nr. escape records too long for the event buffer", NULL },
	[STAT_INVALID_PC] = { "Nr. samples lost: invalid pc", NULL },
	[STAT_IMAGE_FILTERED] = { "Nr. samples skipped: image not in --image", NULL },
	[STAT_MMAP] = { "Nr. mmap records", NULL },
	[STAT_MMAP_IGNORED] = { "Nr. mmap records ignored (kernel/data)", NULL },
	[STAT_COMM] = { "Nr. comm records", NULL },
	[STAT_FORK] = { "Nr. fork records", NULL },
	[STAT_EXIT] = { "Nr. exit records", NULL },
	[STAT_KSYMBOL] = { "Nr. ksymbol records", NULL },
	[STAT_PROC_PROBES] = { "Nr. unknown processes read from /proc", NULL },
	[STAT_PROC_PROBE_FAILED] = { "Nr. unknown processes gone from /proc", NULL },
	[STAT_NO_MEMORY] = { "Nr. records dropped: out of memory", NULL },
	[STAT_HOOK_ERRORS] = { "Nr. sample hook/source errors", NULL },
	[STAT_SFILE_CREATED] = { "Nr. sample file sets created", NULL },
	[STAT_SFILE_OPENS] = { "Nr. sample files opened", NULL },
	[STAT_SFILE_EVICTIONS] = { "Nr. sample file sets evicted (LRU)", NULL },
	[STAT_EMFILE_RETRIES] = { "Nr. open retries after EMFILE/ENFILE", NULL },
	[STAT_ODB_SATURATED] = { "Nr. sample counts saturated", NULL },
	[STAT_BAD_PATH] = { "Nr. sample file names refused (unsafe path)", NULL },
	/* the causes of "sample file open failure" (a name refused is STAT_BAD_PATH) */
	[STAT_LOST_SF_OPEN] = { "Nr. sample file losses: open failed (reason in the log)", NULL },
	[STAT_LOST_SF_GROW] = { "Nr. sample file losses: could not grow (disk full, file size "
				"limit)",
				NULL },
	[STAT_LOST_SF_CHANGED] = { "Nr. sample file losses: changed by another process", NULL },
	[STAT_SFILE_HANDOVERS] = { "Nr. sample files handed over between sets of one name", NULL },
	[STAT_SFILE_ALIASES] = { "Nr. sample file set keys naming another set's files", NULL },
};

const char *stats_name(enum op_stat s)
{
	return s < STAT_NR ? stats_names[s].name : NULL;
}

const char *stats_file_name(enum op_stat s)
{
	return s < STAT_NR ? stats_names[s].file : NULL;
}

void stats_print(const struct op_stats *st, FILE *out)
{
	int i;

	fprintf(out, "\n-- OProfile-ng Statistics --\n");
	for (i = 0; i < STAT_NR; i++)
		fprintf(out, "%s: %" PRIu64 "\n", stats_names[i].name, st->v[i]);
	fflush(out);
}

static const char *const stats_files[STATS_F_NR] = {
	[STATS_F_TOTAL] = OP_STATS_TOTAL_SAMPLES,
	[STATS_F_LOST_KERNEL] = OP_STATS_LOST_KERNEL,
	[STATS_F_LOST_NO_MAPPING] = OP_STATS_LOST_NO_MAPPING,
	[STATS_F_LOST_NO_APP_USER] = OP_STATS_LOST_NO_APP_USER,
	[STATS_F_LOST_INVALID_DOMAIN] = OP_STATS_LOST_INVALID_DOMAIN,
	[STATS_F_LOST_SAMPLEFILE] = OP_STATS_LOST_SAMPLEFILE,
	[STATS_F_KLOST_SAMPLES] = OP_STATS_KLOST_SAMPLES,
	[STATS_F_KLOST_SIDEBAND] = OP_STATS_KLOST_SIDEBAND,
	[STATS_F_KLOST_RECORDS] = OP_STATS_KLOST_RECORDS,
};

const char *stats_file(enum stats_file f)
{
	return f < STATS_F_NR ? stats_files[f] : NULL;
}

uint64_t stats_file_value(const struct op_stats *st, enum stats_file f)
{
	const uint64_t *v = st->v;
	uint64_t known;

	switch (f) {
	case STATS_F_TOTAL:
		return v[STAT_SAMPLES] + v[STAT_SOURCE_SAMPLES];
	case STATS_F_LOST_KERNEL:
		return v[STAT_LOST_KERNEL];
	case STATS_F_LOST_NO_MAPPING:
		return v[STAT_LOST_NO_MAPPING];
	case STATS_F_LOST_NO_APP_USER:
		return v[STAT_LOST_NO_APP_USER];
	case STATS_F_LOST_INVALID_DOMAIN:
		return v[STAT_LOST_INVALID_DOMAIN];
	case STATS_F_LOST_SAMPLEFILE:
		return v[STAT_LOST_SAMPLEFILE];
	case STATS_F_KLOST_SAMPLES:
		return v[STAT_KLOST_SAMPLES];
	case STATS_F_KLOST_SIDEBAND:
		return v[STAT_KLOST_SIDEBAND];
	case STATS_F_KLOST_RECORDS:
		/* what the kernel did not tell apart */
		known = v[STAT_KLOST_SAMPLES] + v[STAT_KLOST_SIDEBAND];
		return v[STAT_LOST_RECORDS] > known ? v[STAT_LOST_RECORDS] - known : 0;
	default:
		return 0;
	}
}

/*
 * A file or directory found in stats/ (--append, a planted one) is used
 * only if it is what we would have made: a regular file with one link or a
 * directory, and as root, root's and not writable by group or other.
 */
static int stats_trusted(int fd, bool dir)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (dir ? !S_ISDIR(st.st_mode) : (!S_ISREG(st.st_mode) || st.st_nlink != 1))
		return -EINVAL;
	if (geteuid() == 0 && (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))))
		return -EPERM;
	return 0;
}

/* the count in stats/@name before this daemon wrote it; 0 if none or unusable */
static uint64_t stats_read_one(int dirfd, const char *name)
{
	char buf[32], *end;
	unsigned long long v;
	ssize_t n;
	int fd;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = stats_trusted(fd, false) ? -1 : read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf || buf[0] == '-' || (*end && strcmp(end, "\n")))
		return 0;
	return v;
}

#define STATS_TMP_PREFIX ".tmp."

/*
 * Write @v to stats/.tmp.@name, a new file (a leftover of a crash is
 * replaced): every error of write, fsync and close is returned, so a full
 * disk says ENOSPC and no old file is touched.
 */
static int stats_write_tmp(int dirfd, const char *name, uint64_t v)
{
	char tmp[64], buf[32];
	int fd, n, rc = 0;
	ssize_t w;

	snprintf(tmp, sizeof(tmp), STATS_TMP_PREFIX "%s", name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST && !unlinkat(dirfd, tmp, 0))
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", v);
	w = write(fd, buf, (size_t)n);
	if (w < 0)
		rc = -errno;
	else if (w != n)
		rc = -ENOSPC; /* a short write of a few bytes: the disk is full */
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (rc)
		unlinkat(dirfd, tmp, 0);
	return rc;
}

static int stats_write_one(int dirfd, const char *name, uint64_t v)
{
	char tmp[64];
	int rc = stats_write_tmp(dirfd, name, v);

	if (rc)
		return rc;
	snprintf(tmp, sizeof(tmp), STATS_TMP_PREFIX "%s", name);
	if (renameat(dirfd, tmp, dirfd, name)) {
		rc = -errno;
		unlinkat(dirfd, tmp, 0);
	}
	return rc;
}

static int stats_open_dir(int dirfd, const char *name)
{
	int fd, rc;

	if (mkdirat(dirfd, name, 0755) && errno != EEXIST)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = stats_trusted(fd, true);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

static uint64_t stats_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int stats_write_files(struct op_stats *st, int current_dirfd, const char *const *throttled)
{
	uint64_t v[STATS_F_NR];
	bool any = false, made[STATS_F_NR] = { false };
	char tmp[64];
	int i, dfd, rc = 0;

	dfd = -1;
	if (!st->base_read) {
		/* --append: the earlier run's counts, before they are replaced */
		dfd = openat(current_dirfd, OP_SESSION_STATS,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		for (i = 0; i < STATS_F_NR; i++)
			st->base[i] = dfd >= 0 && !stats_trusted(dfd, true) ?
					      stats_read_one(dfd, stats_files[i]) :
					      0;
		if (dfd >= 0)
			close(dfd);
		st->base_read = true;
	}
	for (i = 0; i < STATS_F_NR; i++) {
		v[i] = stats_add(st->base[i], stats_file_value(st, (enum stats_file)i));
		any |= v[i] != 0;
	}
	if (!any && !(throttled && throttled[0]))
		return 0;
	dfd = stats_open_dir(current_dirfd, OP_SESSION_STATS);
	if (dfd < 0)
		return dfd;
	/* all or nothing: every file to its temporary name, then the renames */
	for (i = 0; i < STATS_F_NR && !rc; i++) {
		if (!v[i] && i != STATS_F_TOTAL)
			continue;
		rc = stats_write_tmp(dfd, stats_files[i], v[i]);
		made[i] = !rc;
	}
	for (i = 0; i < STATS_F_NR; i++) {
		if (!made[i])
			continue;
		snprintf(tmp, sizeof(tmp), STATS_TMP_PREFIX "%s", stats_files[i]);
		if (!rc && renameat(dfd, tmp, dfd, stats_files[i]))
			rc = -errno;
		if (rc)
			unlinkat(dfd, tmp, 0);
	}
	if (!rc && throttled && throttled[0]) {
		int tfd = stats_open_dir(dfd, OP_SESSION_THROTTLED);

		if (tfd >= 0) {
			for (i = 0; throttled[i]; i++) {
				int r;

				if (strchr(throttled[i], '/') || throttled[i][0] == '.')
					continue;
				r = stats_write_one(tfd, throttled[i], 1);
				if (r && !rc)
					rc = r;
			}
			close(tfd);
		} else {
			rc = tfd;
		}
	}
	close(dfd);
	return rc;
}

/* the size an index may have (op_buildid_index_read_fd refuses larger) */
#define STATS_BUILDIDS_MAX (64u << 20)

int stats_read_buildids(int current_dirfd, char **old, size_t *old_len)
{
	struct stat st;
	size_t got = 0;
	ssize_t n;
	char *buf;
	int dfd, fd;

	*old = NULL;
	*old_len = 0;
	dfd = openat(current_dirfd, OP_SESSION_STATS,
		     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return 0;
	fd = stats_trusted(dfd, true) ?
		     -1 :
		     openat(dfd, OP_BUILDID_INDEX, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return 0;
	if (stats_trusted(fd, false) || fstat(fd, &st) || st.st_size > STATS_BUILDIDS_MAX / 2) {
		close(fd);
		return 0;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	/* whole lines only: a last line without its newline is dropped */
	while (got && buf[got - 1] != '\n')
		got--;
	if (!got) {
		free(buf);
		return 0;
	}
	*old = buf;
	*old_len = got;
	return 0;
}

static int stats_write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (w == 0)
			return -ENOSPC;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int stats_write_buildids(int current_dirfd, const char *old, size_t old_len, const char *text,
			 size_t len)
{
	static const char tmp[] = STATS_TMP_PREFIX OP_BUILDID_INDEX;
	int dfd, fd, rc;

	dfd = stats_open_dir(current_dirfd, OP_SESSION_STATS);
	if (dfd < 0)
		return dfd;
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 && errno == EEXIST && !unlinkat(dfd, tmp, 0))
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		rc = -errno;
		close(dfd);
		return rc;
	}
	rc = stats_write_all(fd, old ? old : "", old ? old_len : 0);
	if (!rc)
		rc = stats_write_all(fd, text, len);
	if (!rc && fsync(fd))
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && renameat(dfd, tmp, dfd, OP_BUILDID_INDEX))
		rc = -errno;
	if (rc)
		unlinkat(dfd, tmp, 0);
	close(dfd);
	return rc;
}
