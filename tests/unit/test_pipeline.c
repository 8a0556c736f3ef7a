/*
 * test_pipeline.c - the daemon's pipeline object without a kernel: records
 * in through the perf hooks it hands out, the stats block and the stats/
 * files (throttled/ included) out through dump, end_session and
 * new_session, into a session directory of a temporary dir.
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

#include "ext.h"
#include "log.h"
#include "perf.h"
#include "pipeline.h"
#include "record.h"
#include "session.h"
#include "sfile.h"

struct pfx {
	char dir[64];
	struct session sess;
	struct op_log log;
	char *text;
	size_t len;
	struct pipeline *p;
	struct perf_config pc;
	const char *names[2];
};

static struct pfx *pfx_new(void)
{
	struct pfx *f = calloc(1, sizeof(*f));
	struct sfile_config cfg = { 0 };
	char cur[96];

	assert_non_null(f);
	strcpy(f->dir, "/tmp/test-pipeline-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(cur, sizeof(cur), "%s/current", f->dir);
	assert_int_equal(mkdir(cur, 0755), 0);
	f->sess.dir = f->dir;
	f->sess.dirfd = f->sess.samples_fd = f->sess.lockfd = -1;
	f->sess.current_fd = open(cur, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(f->sess.current_fd >= 0);
	log_init(&f->log, open_memstream(&f->text, &f->len));
	assert_non_null(f->log.fp);
	assert_int_equal(pipeline_new(&f->p, &f->log, &f->sess, NULL), 0);
	cfg.current_dirfd = f->sess.current_fd;
	cfg.max_open_files = 8;
	strcpy(cfg.events[0].name, "TIMER");
	strcpy(cfg.events[1].name, "CPU_CLK");
	cfg.nr_events = 2;
	f->names[0] = "TIMER";
	f->names[1] = "CPU_CLK";
	pipeline_set_event_names(f->p, f->names, 2);
	assert_int_equal(pipeline_open_files(f->p, &cfg, NULL, NULL, false, 32), 0);
	/* opening twice is refused */
	assert_int_equal(pipeline_open_files(f->p, &cfg, NULL, NULL, false, 32), -EBUSY);
	pipeline_perf_config(f->p, &f->pc);
	assert_non_null(f->pc.deliver);
	assert_non_null(f->pc.round_end);
	return f;
}

static void pfx_free(struct pfx *f)
{
	char cmd[128];

	pipeline_free_files(f->p);
	pipeline_free(f->p);
	fclose(f->log.fp);
	free(f->text);
	close(f->sess.current_fd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
}

/* the value in DIR/current/stats/NAME, -1 if there is no such file */
static long pfx_stat(struct pfx *f, const char *sub, const char *name)
{
	char path[256];
	long v = -1;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s/stats/%s", f->dir, sub, name);
	fp = fopen(path, "r");
	if (!fp)
		return -1;
	if (fscanf(fp, "%ld", &v) != 1)
		v = -2;
	fclose(fp);
	return v;
}

static void pfx_deliver(struct pfx *f, const struct op_record *r)
{
	assert_int_equal(f->pc.deliver(f->pc.arg, r), 0);
}

static void pfx_lost(struct pfx *f, uint64_t n)
{
	struct op_record r = { .type = OP_REC_LOST };

	r.lost.kind = OP_LOST_SAMPLES;
	r.lost.lost = n;
	pfx_deliver(f, &r);
}

static void pfx_throttle(struct pfx *f)
{
	struct op_record r = { .type = OP_REC_THROTTLE };

	r.throttle.id = 5; /* no perf session: the event cannot be told, all are named */
	pfx_deliver(f, &r);
}

/* dump: one statistics block, the counter files, throttled/ for a throttle */
static void test_dump(void **state)
{
	struct pfx *f = pfx_new();
	unsigned open, sets;

	(void)state;
	pipeline_dump(f->p, true);
	fflush(f->log.fp);
	assert_non_null(strstr(f->text, "-- OProfile-ng Statistics --"));
	assert_null(strstr(f->text, "the kernel dropped"));
	/* all counters 0: stats_write_files leaves stats/ alone */
	assert_int_equal(pfx_stat(f, "current", "total_samples"), -1);
	assert_int_equal(pfx_stat(f, "current", "throttled/TIMER"), -1);

	pfx_lost(f, 7);
	pfx_throttle(f);
	assert_int_equal(pipeline_stats(f->p)->v[STAT_LOST_RECORDS], 7);
	assert_int_equal(pipeline_stats(f->p)->v[STAT_THROTTLE], 1);
	pipeline_dump(f->p, true);
	fflush(f->log.fp);
	/* the advice names the ring size given to pipeline_open_files */
	assert_non_null(strstr(f->text, "oprofiled: the kernel dropped 7 records because a ring was "
				"full - raise --ring-pages (now 32)"));
	assert_int_equal(pfx_stat(f, "current", "throttled/TIMER"), 1);
	assert_int_equal(pfx_stat(f, "current", "throttled/CPU_CLK"), 1);
	assert_int_equal(pfx_stat(f, "current", "lost_samples_by_kernel"), 7);
	pipeline_file_counts(f->p, &open, &sets);
	assert_int_equal(open, 0);
	assert_int_equal(sets, 0);
	pfx_free(f);
}

/*
 * save/reset/rotate: end_session prints the block after @why and writes the
 * stats (throttled/ too) into the session set aside; new_session adds the
 * counters to @before and starts from zero, throttled events forgotten.
 */
static void test_sessions(void **state)
{
	struct pfx *f = pfx_new();
	struct op_stats before = { 0 };
	char old[96], kept[96];

	(void)state;
	pfx_lost(f, 3);
	pfx_throttle(f);
	assert_int_equal(pipeline_end_session(f->p, "control: saving as kept "), 0);
	fflush(f->log.fp);
	assert_non_null(strstr(f->text, "\ncontrol: saving as kept "));
	assert_int_equal(pfx_stat(f, "current", "throttled/TIMER"), 1);
	/* what control_set_aside does between the two: move current, make a new one */
	snprintf(old, sizeof(old), "%s/current", f->dir);
	snprintf(kept, sizeof(kept), "%s/kept", f->dir);
	assert_int_equal(rename(old, kept), 0);
	assert_int_equal(mkdir(old, 0755), 0);
	close(f->sess.current_fd);
	f->sess.current_fd = open(old, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(f->sess.current_fd >= 0);
	pipeline_new_session(f->p, &before);
	assert_int_equal(before.v[STAT_THROTTLE], 1);
	assert_int_equal(before.v[STAT_LOST_RECORDS], 3);
	assert_int_equal(pipeline_stats(f->p)->v[STAT_THROTTLE], 0);
	assert_int_equal(pipeline_stats(f->p)->v[STAT_LOST_RECORDS], 0);
	assert_int_equal(pfx_stat(f, "kept", "throttled/TIMER"), 1);
	assert_int_equal(pfx_stat(f, "kept", "lost_samples_by_kernel"), 3);
	pfx_lost(f, 2);
	pipeline_dump(f->p, true);
	assert_int_equal(pfx_stat(f, "current", "total_samples"), 0);
	assert_int_equal(pfx_stat(f, "current", "lost_samples_by_kernel"), 2);
	assert_int_equal(pfx_stat(f, "current", "throttled/TIMER"), -1);
	pfx_free(f);
}

/* no session (--check-config): nothing is written, nothing fails */
static void test_no_session(void **state)
{
	struct op_log log;
	struct pipeline *p;
	struct ext_core_services c = { 0 };

	(void)state;
	log_init(&log, NULL);
	assert_int_equal(pipeline_new(&p, &log, NULL, NULL), 0);
	pipeline_core_services(p, &c);
	assert_non_null(c.sync);
	assert_non_null(c.trans);
	assert_non_null(c.emit);
	assert_int_equal(pipeline_write_stats_files(p), 0);
	pipeline_dump(p, true);
	pipeline_close_files(p);
	pipeline_free_files(p);
	pipeline_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump),
		cmocka_unit_test(test_sessions),
		cmocka_unit_test(test_no_session),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
