/*
 * stats.c - counter names, the log block and the operf-style stats/ files.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stats.h"

static const struct {
	const char *name;
	const char *file;
} stats_names[STAT_NR] = {
	[STAT_SAMPLES] = { "Nr. samples received", NULL },
	[STAT_KERNEL_SAMPLES] = { "Nr. kernel samples", NULL },
	[STAT_USER_SAMPLES] = { "Nr. user samples", NULL },
	[STAT_SOURCE_SAMPLES] = { "Nr. plugin source samples", NULL },
	[STAT_LOST_KERNEL] = { "Nr. samples lost: no kernel image for the pc", "lost_kernel" },
	[STAT_LOST_NO_MAPPING] = { "Nr. samples lost: no mapping", "lost_no_mapping" },
	[STAT_LOST_NO_APP_USER] = { "Nr. user samples lost: no app info", "lost_no_app_for_user_sample" },
	[STAT_LOST_NO_CONTEXT] = { "Nr. lost samples (no kernel/user)", NULL },
	[STAT_LOST_INVALID_DOMAIN] = { "Nr. samples lost: hypervisor/guest/unknown mode", "lost_invalid_domain" },
	[STAT_LOST_RECORDS] = { "Nr. records lost by the kernel (ring full)", "lost_records_by_kernel" },
	[STAT_LOST_SAMPLEFILE] = { "Nr. samples lost: sample file open failure", "lost_samplefile" },
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

/*
 * A file or directory found in stats/ (--append, a planted one) is written
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

static int stats_write_one(int dirfd, const char *name, uint64_t v)
{
	char buf[32];
	int fd, n, rc;

	/* not O_TRUNC before the checks; O_NONBLOCK: a FIFO is refused, not waited on */
	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	rc = stats_trusted(fd, false);
	if (!rc && ftruncate(fd, 0))
		rc = -errno;
	n = snprintf(buf, sizeof(buf), "%" PRIu64 "\n", v);
	if (!rc && write(fd, buf, n) != n)
		rc = -EIO;
	close(fd);
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

int stats_write_files(const struct op_stats *st, int current_dirfd, const char *const *throttled)
{
	bool any = false;
	int i, dfd, rc = 0;

	for (i = 0; i < STAT_NR; i++)
		if (stats_names[i].file && st->v[i])
			any = true;
	if (!any && !(throttled && throttled[0]) && !st->v[STAT_SAMPLES])
		return 0;
	dfd = stats_open_dir(current_dirfd, "stats");
	if (dfd < 0)
		return dfd;
	for (i = 0; i < STAT_NR; i++) {
		if (!stats_names[i].file || !st->v[i])
			continue;
		if (stats_write_one(dfd, stats_names[i].file, st->v[i]))
			rc = -EIO;
	}
	if (stats_write_one(dfd, "total_samples", st->v[STAT_SAMPLES] + st->v[STAT_SOURCE_SAMPLES]))
		rc = -EIO;
	if (throttled && throttled[0]) {
		int tfd = stats_open_dir(dfd, "throttled");

		if (tfd >= 0) {
			for (i = 0; throttled[i]; i++) {
				if (strchr(throttled[i], '/') || throttled[i][0] == '.')
					continue;
				if (stats_write_one(tfd, throttled[i], 1))
					rc = -EIO;
			}
			close(tfd);
		} else {
			rc = tfd;
		}
	}
	close(dfd);
	return rc;
}
