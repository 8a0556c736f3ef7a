/*
 * core_fixture.h - shared set-up for the trans and sfile unit tests: a
 * scratch samples/current directory below the build directory, a cookie
 * table, an sfile table with one TIMER event, a trans context, and readers
 * of the resulting sample files.
 * SPDX-License-Identifier: MIT
 */
#ifndef TESTS_CORE_FIXTURE_H
#define TESTS_CORE_FIXTURE_H

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odb.h"
#include "op_header.h"
#include "session.h"
#include "sfile.h"
#include "trans.h"

struct cfx {
	char root[PATH_MAX];    /* scratch directory */
	char current[PATH_MAX]; /* root/samples/current */
	int current_fd;
	struct cookie_table cookies;
	struct op_stats st;
	struct ext_registry reg;
	struct sfile_table sft;
	struct trans_ctx tr;
};

static inline struct cfx *cfx_new(unsigned separate, unsigned max_open)
{
	struct cfx *f = calloc(1, sizeof(*f));
	struct sfile_config cfg = { 0 };
	int fd;

	assert_non_null(f);
	snprintf(f->root, sizeof(f->root), "tmp-core-XXXXXX");
	assert_non_null(mkdtemp(f->root));
	strcpy(f->current, f->root);
	strcat(f->current, "/samples");
	assert_int_equal(mkdir(f->current, 0755), 0);
	strcat(f->current, "/current");
	assert_int_equal(mkdir(f->current, 0755), 0);
	fd = open(f->current, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	f->current_fd = fd;
	assert_int_equal(cookie_init(&f->cookies), 0);
	f->cookies.no_stat = true;
	cfg.current_dirfd = fd;
	cfg.separate = separate;
	cfg.max_open_files = max_open;
	cfg.cpu_type = OP_CPU_TIMER;
	cfg.cpu_speed = 2500.5;
	strcpy(cfg.events[0].name, "TIMER");
	cfg.events[1].event = 0x76;
	cfg.events[1].count = 100000;
	strcpy(cfg.events[1].name, "CPU_CLK_UNHALTED");
	cfg.nr_events = 2;
	assert_int_equal(sfile_init(&f->sft, &cfg, &f->cookies, &f->reg, &f->st, NULL), 0);
	assert_int_equal(trans_init(&f->tr, &f->sft, &f->reg, &f->st), 0);
	return f;
}

static inline void cfx_free(struct cfx *f)
{
	sfile_free(&f->sft);
	cookie_free(&f->cookies);
	close(f->current_fd);
	session_rm_tree(AT_FDCWD, f->root);
	free(f);
}

static inline op_cookie_t cfx_ck(struct cfx *f, const char *path, enum op_image_kind kind)
{
	return cookie_intern(&f->cookies, path, strlen(path), kind, false);
}

/*
 * Read sample file @rel (relative to samples/current): returns the number of
 * keys, stores the count of @key in *val (0 if absent) and the header in *hd.
 * -1 if the file does not exist.
 */
static inline long cfx_read(struct cfx *f, const char *rel, uint64_t key, uint32_t *val,
			    struct opd_header *hd)
{
	const struct odb_node *n;
	char err[256];
	size_t cnt, i;
	odb_t db;

	if (val)
		*val = 0;
	if (odb_open(&db, f->current_fd, rel, ODB_RDONLY, err, sizeof(err)))
		return -1;
	n = odb_nodes(&db, &cnt);
	for (i = 0; i < cnt; i++)
		if (val && n[i].key == key)
			*val = n[i].value;
	if (hd)
		*hd = *odb_header(&db);
	odb_close(&db);
	return (long)cnt;
}

/* sum of all counts in @rel, -1 if missing */
static inline long cfx_total(struct cfx *f, const char *rel)
{
	const struct odb_node *n;
	size_t cnt, i;
	long sum = 0;
	odb_t db;

	if (odb_open(&db, f->current_fd, rel, ODB_RDONLY, NULL, 0))
		return -1;
	n = odb_nodes(&db, &cnt);
	for (i = 0; i < cnt; i++)
		sum += n[i].value;
	odb_close(&db);
	return sum;
}

#endif /* TESTS_CORE_FIXTURE_H */
