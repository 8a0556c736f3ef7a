/*
 * test_op_profile.c - libopprofile: ids and merging of the model, flat
 * samples reconciled with whole stacks, the delta of two profiles, the
 * pprof encoding read back with protobuf-c's own unpacker (and the gzip
 * wrapper with zlib), and op_profile_load on a session written with the
 * daemon's own writers (lib/odb, op_mangle, the build-id index): a corrupt
 * sample file and a hostile stack table are warnings, the rest is loaded;
 * the session's cgroup index as per-sample labels.
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
#include <zlib.h>

#include "odb.h"
#include "op_buildid.h"
#include "op_cg_format.h"
#include "op_cgroups.h"
#include "op_header.h"
#include "op_mangle.h"
#include "op_profile.h"
#include "op_session_layout.h"
#include "profile.pb-c.h"

static unsigned nwarn;
static char lastwarn[1024];

static void warn_count(void *arg, const char *msg)
{
	(void)arg;
	nwarn++;
	snprintf(lastwarn, sizeof(lastwarn), "%s", msg);
}

static const struct op_image_name img_a = { .kind = OP_IMAGE_USER, .path = "/usr/bin/a" };
static const struct op_image_name img_b = { .kind = OP_IMAGE_USER, .path = "/lib/libb.so" };

static void test_ids(void **state)
{
	struct op_profile *p = op_profile_new();
	struct op_image_name anon1 = {
		.kind = OP_IMAGE_ANON, .path = "anon", .tgid = 7, .start = 0x1000, .end = 0x1fff
	};
	struct op_image_name anon2 = anon1;
	uint32_t a, b, x, y, l1, l2;

	(void)state;
	assert_non_null(p);
	a = op_profile_mapping(p, &img_a, false, NULL);
	b = op_profile_mapping(p, &img_b, false, NULL);
	assert_int_equal(a, 1);
	assert_int_equal(b, 2);
	assert_int_equal(op_profile_mapping(p, &img_a, false, NULL), a);
	/* anon regions: one per (tgid, start) */
	x = op_profile_mapping(p, &anon1, false, NULL);
	anon2.tgid = 8;
	y = op_profile_mapping(p, &anon2, false, NULL);
	assert_int_equal(x, 3);
	assert_int_equal(y, 4);
	l1 = op_profile_location(p, a, 0x1234);
	l2 = op_profile_location(p, b, 0x1234);
	assert_int_equal(l1, 1);
	assert_int_equal(l2, 2);
	assert_int_equal(op_profile_location(p, a, 0x1234), l1);
	assert_int_equal(op_profile_location(p, 99, 0x1234), 0); /* no such mapping */
	/* 2,000 locations: the hash grows, ids stay dense */
	for (uint64_t k = 0; k < 2000; k++)
		assert_int_equal(op_profile_location(p, a, 0x10000 + k), 3 + k);
	assert_int_equal(p->nlocs, 2002);
	assert_int_equal(p->maps[a - 1].max_key, 0x10000 + 1999);
	assert_int_equal(op_profile_add_label(p, "host=x=y"), 0);
	assert_int_equal(op_profile_add_label(p, "=v"), -EINVAL);
	assert_int_equal(op_profile_add_label(p, "novalue"), -EINVAL);
	assert_string_equal(p->labels[0].key, "host");
	assert_string_equal(p->labels[0].value, "x=y");
	op_profile_free(p);
}

/* a profile with one stack main <- leaf (3 samples) and flat samples at leaf (5) and at main (2) */
static struct op_profile *stack_profile(void)
{
	struct op_profile *p = op_profile_new();
	struct op_profile_labels lab = { 10, 11, 0, 0, 0 };
	uint32_t a, leaf, main_, st[2];

	assert_non_null(p);
	a = op_profile_mapping(p, &img_a, false, NULL);
	leaf = op_profile_location(p, a, 0x1100);
	main_ = op_profile_location(p, a, 0x1010);
	st[0] = leaf;
	st[1] = main_;
	assert_int_equal(op_profile_add(p, st, 2, NULL, 3, false), 0);
	assert_int_equal(op_profile_add(p, &leaf, 1, &lab, 5, true), 0);
	assert_int_equal(op_profile_add(p, &main_, 1, &lab, 2, true), 0);
	assert_int_equal(op_profile_finish(p), 0);
	return p;
}

static const struct op_profile_sample *find_sample(const struct op_profile *p, uint32_t leaf,
						   uint32_t nlocs)
{
	for (size_t i = 0; i < p->nsamples; i++)
		if (p->samples[i].nlocs == nlocs && p->locpool[p->samples[i].loc_off] == leaf)
			return &p->samples[i];
	return NULL;
}

static void test_stacks_and_flat(void **state)
{
	struct op_profile *p = stack_profile();
	const struct op_profile_sample *s;

	(void)state;
	/* the stack's 3 samples are among the leaf's 5 flat ones: 2 stay flat */
	assert_int_equal(p->total, 3 + 2 + 2);
	assert_int_equal(p->nsamples, 3);
	s = find_sample(p, 1, 2);
	assert_non_null(s);
	assert_int_equal(s->count, 3);
	assert_int_equal(p->locpool[s->loc_off + 1], 2);
	s = find_sample(p, 1, 1);
	assert_non_null(s);
	assert_int_equal(s->count, 2);
	assert_int_equal(s->lab.pid, 10);
	assert_int_equal(s->lab.tid, 11);
	s = find_sample(p, 2, 1);
	assert_non_null(s);
	assert_int_equal(s->count, 2);
	op_profile_free(p);
}

/*
 * Flat samples without stacks: each sample file's own labels and image
 * (merged per location inside one run only), and files whose labels and
 * image repeat (merged across them); the same counts either way, and a
 * sample added after op_profile_finish still merges with its equal
 */
static void test_flat_merge(void **state)
{
	const struct op_profile_labels t1 = { 1, 1, 0, 0, 0 }, t2 = { 2, 2, 0, 0, 0 };

	(void)state;
	for (int repeat = 0; repeat < 2; repeat++) {
		struct op_profile *p = op_profile_new();
		uint32_t ma, mb, a1, a2, b1;
		const struct op_profile_sample *s;

		assert_non_null(p);
		ma = op_profile_mapping(p, &img_a, false, NULL);
		mb = op_profile_mapping(p, &img_b, false, NULL);
		a1 = op_profile_location(p, ma, 0x10);
		a2 = op_profile_location(p, ma, 0x20);
		b1 = op_profile_location(p, mb, 0x10);
		/* a file of thread 1 in a (a1 twice: merged), one in b, one of thread 2 in a */
		assert_int_equal(op_profile_add(p, &a1, 1, &t1, 1, true), 0);
		assert_int_equal(op_profile_add(p, &a2, 1, &t1, 2, true), 0);
		assert_int_equal(op_profile_add(p, &a1, 1, &t1, 4, true), 0);
		assert_int_equal(op_profile_add(p, &b1, 1, &t1, 8, true), 0);
		assert_int_equal(op_profile_add(p, &a1, 1, &t2, 16, true), 0);
		/* repeat: thread 1 in a again after them (another session's file) */
		if (repeat)
			assert_int_equal(op_profile_add(p, &a2, 1, &t1, 32, true), 0);
		assert_int_equal(op_profile_finish(p), 0);
		assert_int_equal(p->total, 31 + (repeat ? 32 : 0));
		assert_int_equal(p->nsamples, 4);
		/* in the order first added */
		assert_int_equal(p->locpool[p->samples[0].loc_off], a1);
		assert_int_equal(p->samples[0].count, 5);
		assert_int_equal(p->samples[0].lab.pid, 1);
		assert_int_equal(p->locpool[p->samples[1].loc_off], a2);
		assert_int_equal(p->samples[1].count, 2 + (repeat ? 32 : 0));
		assert_int_equal(p->locpool[p->samples[2].loc_off], b1);
		assert_int_equal(p->samples[2].count, 8);
		assert_int_equal(p->locpool[p->samples[3].loc_off], a1);
		assert_int_equal(p->samples[3].count, 16);
		assert_int_equal(p->samples[3].lab.pid, 2);
		/* added after: merged with its equal (thread 2, a1), not a fifth */
		assert_int_equal(op_profile_add(p, &a1, 1, &t2, 64, false), 0);
		assert_int_equal(p->nsamples, 4);
		s = &p->samples[3];
		assert_int_equal(s->count, 80);
		op_profile_free(p);
	}
}

static void test_diff(void **state)
{
	struct op_profile *before = op_profile_new(), *now = op_profile_new(), *d;
	uint32_t m, l1, l2, l3;

	(void)state;
	/* before: l1 x4, l2 x10; now: l1 x9, l2 x3 (shrank: a reset), l3 x1 (new) */
	m = op_profile_mapping(before, &img_a, false, NULL);
	l1 = op_profile_location(before, m, 0x10);
	l2 = op_profile_location(before, m, 0x20);
	assert_int_equal(op_profile_add(before, &l1, 1, NULL, 4, false), 0);
	assert_int_equal(op_profile_add(before, &l2, 1, NULL, 10, false), 0);
	before->time_nanos = 1000;
	before->duration_nanos = 500;
	/* now knows its images in another order: matched by name, not id */
	op_profile_mapping(now, &img_b, false, NULL);
	m = op_profile_mapping(now, &img_a, false, NULL);
	l3 = op_profile_location(now, m, 0x30);
	l2 = op_profile_location(now, m, 0x20);
	l1 = op_profile_location(now, m, 0x10);
	assert_int_equal(op_profile_add(now, &l1, 1, NULL, 9, false), 0);
	assert_int_equal(op_profile_add(now, &l2, 1, NULL, 3, false), 0);
	assert_int_equal(op_profile_add(now, &l3, 1, NULL, 1, false), 0);
	snprintf(now->event, sizeof(now->event), "TIMER");
	now->period = 250000;
	now->timer = true;
	now->time_nanos = 1000;
	now->duration_nanos = 2000;
	d = op_profile_diff(now, before);
	assert_non_null(d);
	assert_string_equal(d->event, "TIMER");
	assert_int_equal(d->period, 250000);
	assert_int_equal(d->time_nanos, 1500);
	assert_int_equal(d->duration_nanos, 1500);
	assert_int_equal(d->total, 5 + 3 + 1);
	for (size_t i = 0; i < d->nsamples; i++) {
		const struct op_profile_loc *l = &d->locs[d->locpool[d->samples[i].loc_off] - 1];

		assert_string_equal(d->maps[l->mapping - 1].path, "/usr/bin/a");
		assert_int_equal(d->samples[i].count, l->key == 0x10 ? 5 : l->key == 0x20 ? 3 : 1);
	}
	op_profile_free(d);
	/* nothing new: an empty delta */
	d = op_profile_diff(before, before);
	assert_non_null(d);
	assert_int_equal(d->total, 0);
	op_profile_free(d);
	op_profile_free(before);
	op_profile_free(now);
}

static const char *pstr(const Perftools__Profiles__Profile *pp, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < pp->n_string_table);
	return pp->string_table[i];
}

/*
 * @gz (@gz_len bytes) is a gzip file (one member or several one after
 * another, each whole: RFC 1952 2.2) of exactly the @raw_len bytes at @raw
 */
static void assert_gunzips_to(const uint8_t *gz, size_t gz_len, const uint8_t *raw, size_t raw_len)
{
	uint8_t *back = malloc(raw_len + 1);
	z_stream z = { 0 };
	size_t out = 0;

	assert_true(gz_len > 18 && gz[0] == 0x1f && gz[1] == 0x8b);
	assert_non_null(back);
	assert_int_equal(inflateInit2(&z, 16 + 15), Z_OK);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)gz_len;
	z.next_out = back;
	z.avail_out = (uInt)raw_len + 1;
	do {
		/* each member ends with Z_STREAM_END; the next starts after a reset */
		assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
		out += z.total_out;
		assert_int_equal(inflateReset(&z), Z_OK);
	} while (z.avail_in);
	assert_int_equal(out, raw_len);
	inflateEnd(&z);
	assert_memory_equal(back, raw, raw_len);
	free(back);
}

static void test_encode(void **state)
{
	struct op_profile *p = stack_profile();
	const struct op_pprof_opts raw_opts = { .no_gzip = true };
	Perftools__Profiles__Profile *pp;
	uint8_t *raw, *gz;
	size_t raw_len, gz_len;
	uint64_t total = 0;

	(void)state;
	snprintf(p->event, sizeof(p->event), "TIMER");
	p->period = 100000;
	p->timer = true;
	p->time_nanos = 123;
	p->duration_nanos = 456;
	/* the executable PT_LOAD: offset 0x1000 at vaddr 0x401000 */
	p->maps[0].text_off = 0x1000;
	p->maps[0].text_vaddr = 0x401000;
	p->maps[0].text_size = 0x2000;
	p->maps[0].have_text = true;
	snprintf(p->maps[0].build_id, sizeof(p->maps[0].build_id), "0123abcd");
	assert_int_equal(op_profile_name_loc(p, 1, "leaf", "a.c", 7), 0);
	assert_int_equal(op_profile_add_label(p, "host=h1"), 0);
	assert_int_equal(op_pprof_encode(p, &raw_opts, &raw, &raw_len), 0);
	pp = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	assert_non_null(pp);
	assert_string_equal(pp->string_table[0], "");
	assert_int_equal(pp->n_sample_type, 2);
	assert_string_equal(pstr(pp, pp->sample_type[0]->type), "samples");
	assert_string_equal(pstr(pp, pp->sample_type[0]->unit), "count");
	assert_string_equal(pstr(pp, pp->sample_type[1]->type), "cpu");
	assert_string_equal(pstr(pp, pp->sample_type[1]->unit), "nanoseconds");
	assert_string_equal(pstr(pp, pp->period_type->type), "cpu");
	assert_int_equal(pp->period, 100000);
	assert_int_equal(pp->time_nanos, 123);
	assert_int_equal(pp->duration_nanos, 456);
	assert_int_equal(pp->n_mapping, 1);
	assert_int_equal(pp->mapping[0]->id, 1);
	assert_int_equal(pp->mapping[0]->memory_start, 0x401000);
	assert_int_equal(pp->mapping[0]->memory_limit, 0x403000);
	assert_int_equal(pp->mapping[0]->file_offset, 0x1000);
	assert_string_equal(pstr(pp, pp->mapping[0]->filename), "/usr/bin/a");
	assert_string_equal(pstr(pp, pp->mapping[0]->build_id), "0123abcd");
	assert_true(pp->mapping[0]->has_functions);
	assert_int_equal(pp->n_location, 2);
	for (size_t i = 0; i < pp->n_location; i++) {
		const Perftools__Profiles__Location *l = pp->location[i];

		assert_int_equal(l->id, i + 1);
		assert_int_equal(l->mapping_id, 1);
		/* ids in address order: 0x1010 then 0x1100, at their vaddrs */
		assert_int_equal(l->address, i ? 0x401100 : 0x401010);
		if (l->address == 0x401100) {
			assert_int_equal(l->n_line, 1);
			assert_int_equal(l->line[0]->line, 7);
			assert_int_equal(l->line[0]->function_id, 1);
		} else {
			assert_int_equal(l->n_line, 0);
		}
	}
	assert_int_equal(pp->n_function, 1);
	assert_int_equal(pp->function[0]->id, 1);
	assert_string_equal(pstr(pp, pp->function[0]->name), "leaf");
	assert_string_equal(pstr(pp, pp->function[0]->filename), "a.c");
	assert_int_equal(pp->n_sample, 3);
	for (size_t i = 0; i < pp->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pp->sample[i];
		bool host = false;

		assert_int_equal(s->n_value, 2);
		assert_int_equal(s->value[1], s->value[0] * 100000);
		total += (uint64_t)s->value[0];
		for (size_t k = 0; k < s->n_label; k++) {
			const char *key = pstr(pp, s->label[k]->key),
				   *v = pstr(pp, s->label[k]->str);

			if (!strcmp(key, "host"))
				host = !strcmp(v, "h1");
			else if (!strcmp(key, "pid"))
				assert_string_equal(v, "10");
			else if (!strcmp(key, "tid"))
				assert_string_equal(v, "11");
			else if (!strcmp(key, "cpu"))
				assert_string_equal(v, "0");
			else
				fail_msg("unexpected label %s", key);
		}
		assert_true(host);
		/* the stack lists its leaf (0x1100, id 2) first */
		if (s->n_location_id == 2) {
			assert_int_equal(s->location_id[0], 2);
			assert_int_equal(s->location_id[1], 1);
		}
	}
	assert_int_equal(total, 7);
	perftools__profiles__profile__free_unpacked(pp, NULL);

	/* the default output is the same bytes in a gzip wrapper */
	assert_int_equal(op_pprof_encode(p, NULL, &gz, &gz_len), 0);
	assert_gunzips_to(gz, gz_len, raw, raw_len);
	free(gz);
	free(raw);
	op_profile_free(p);
}

/*
 * threaded: deflated on a second thread a stage at a time (a profile of
 * many stages), the same bytes as the bare protobuf once inflated; runs of
 * samples with the same labels share one label array, and every sample
 * still reads back with its own labels
 */
/* a timer profile (period 100 us) of one image @path, its mapping in *@map */
static struct op_profile *timer_profile(const char *path, uint32_t *map)
{
	struct op_image_name n = { .kind = OP_IMAGE_USER, .path = path };
	struct op_profile *p = op_profile_new();

	assert_non_null(p);
	snprintf(p->event, sizeof(p->event), "TIMER");
	p->period = 100000;
	p->timer = true;
	*map = op_profile_mapping(p, &n, false, NULL);
	assert_true(*map > 0);
	return p;
}

/*
 * @p encoded bare, gzip'd on threads and gzip'd on the caller's thread
 * (the daemon plugins' way: a member per stage too): both gunzip to the
 * bare one; the bare one unpacked (the bytes in *@raw, to free)
 */
static Perftools__Profiles__Profile *encode_both(const struct op_profile *p, uint8_t **raw)
{
	const struct op_pprof_opts raw_opts = { .no_gzip = true }, thr = { .threaded = true };
	Perftools__Profiles__Profile *pp;
	size_t raw_len, gz_len;
	uint8_t *gz;

	assert_int_equal(op_pprof_encode(p, &raw_opts, raw, &raw_len), 0);
	assert_int_equal(op_pprof_encode(p, &thr, &gz, &gz_len), 0);
	assert_gunzips_to(gz, gz_len, *raw, raw_len);
	free(gz);
	assert_int_equal(op_pprof_encode(p, NULL, &gz, &gz_len), 0);
	assert_gunzips_to(gz, gz_len, *raw, raw_len);
	free(gz);
	pp = perftools__profiles__profile__unpack(NULL, raw_len, *raw);
	assert_non_null(pp);
	return pp;
}

static void test_encode_threaded(void **state)
{
	const struct op_pprof_opts raw_opts = { .no_gzip = true };
	Perftools__Profiles__Profile *pp;
	uint32_t map;
	struct op_profile *p = timer_profile("/usr/bin/big", &map);
	uint8_t *raw;
	size_t raw_len;

	(void)state;
	for (uint32_t i = 0; i < 120000; i++) {
		/* 3 samples per thread, 40,000 threads */
		struct op_profile_labels lab = { (int32_t)(i / 3), (int32_t)(i / 3),
						 (int32_t)(i / 3) & 1, map, 0 };
		uint32_t loc = op_profile_location(p, map, 0x1000 + (i % 5000) * 4);

		assert_true(loc > 0);
		assert_int_equal(op_profile_add(p, &loc, 1, &lab, 1 + i % 7, false), 0);
	}
	assert_int_equal(op_pprof_encode(p, &raw_opts, &raw, &raw_len), 0);
	assert_true(raw_len > 4 * 256 * 1024); /* several stages */
	free(raw);
	pp = encode_both(p, &raw);
	assert_int_equal(pp->n_sample, 120000);
	for (size_t i = 0; i < pp->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pp->sample[i];
		long pid = -1, tid = -2;

		for (size_t k = 0; k < s->n_label; k++) {
			const char *key = pp->string_table[s->label[k]->key];

			if (!strcmp(key, "pid"))
				pid = atol(pp->string_table[s->label[k]->str]);
			else if (!strcmp(key, "tid"))
				tid = atol(pp->string_table[s->label[k]->str]);
		}
		/* in the model's order: sample i is the i-th added */
		assert_int_equal(pid, (long)(i / 3));
		assert_int_equal(tid, pid);
		assert_int_equal(s->value[0], (int64_t)(1 + i % 7));
	}
	perftools__profiles__profile__free_unpacked(pp, NULL);
	free(raw);
	op_profile_free(p);
}

/*
 * Deep stacks: a piece of 256 samples may be bounded beyond a deflate
 * stage (packed through the scratch buffer then), the next one not; every
 * sample comes back whole, in order, threaded or not
 */
static void test_encode_deep(void **state)
{
	Perftools__Profiles__Profile *pp;
	uint32_t map, locs[200];
	struct op_profile *p = timer_profile("/usr/bin/deep", &map);
	uint8_t *raw;

	(void)state;
	for (uint32_t i = 0; i < 1000; i++) {
		/* 200 frames for the first 512 samples, then 1 to 3 */
		uint32_t depth = i < 512 ? 200 : 1 + i % 3;
		struct op_profile_labels lab = { (int32_t)(i / 10), (int32_t)(i / 10), 0, map, 0 };

		for (uint32_t d = 0; d < depth; d++) {
			locs[d] = op_profile_location(p, map, 0x1000 + (uint64_t)(i + d) * 4);
			assert_true(locs[d] > 0);
		}
		assert_int_equal(op_profile_add(p, locs, depth, &lab, 1 + i, false), 0);
	}
	pp = encode_both(p, &raw);
	assert_int_equal(pp->n_sample, 1000);
	for (size_t i = 0; i < pp->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pp->sample[i];
		const size_t depth = i < 512 ? 200 : 1 + i % 3;

		assert_int_equal(s->n_location_id, depth);
		assert_int_equal(s->value[0], (int64_t)(1 + i));
		assert_int_equal(s->n_label, 4); /* pid, tid, cpu, comm */
		for (size_t d = 0; d < depth; d++) {
			const Perftools__Profiles__Location *l = pp->location[s->location_id[d] - 1];

			assert_int_equal(l->id, s->location_id[d]);
			assert_int_equal(l->address, 0x1000 + (uint64_t)(i + d) * 4);
		}
	}
	perftools__profiles__profile__free_unpacked(pp, NULL);
	free(raw);
	op_profile_free(p);
}

/*
 * Location ids in (mapping, address) order whatever the order they were
 * added in, keys over the whole 64 bits (no binary at these paths: the
 * address is the key)
 */
static void test_encode_loc_order(void **state)
{
	const struct op_pprof_opts raw_opts = { .no_gzip = true };
	static const struct op_image_name imgs[3] = {
		{ .kind = OP_IMAGE_USER, .path = "/nonexistent/x" },
		{ .kind = OP_IMAGE_USER, .path = "/nonexistent/y" },
		{ .kind = OP_IMAGE_USER, .path = "/nonexistent/z" },
	};
	struct op_profile *p = op_profile_new();
	Perftools__Profiles__Profile *pp;
	uint64_t x = 88172645463325252ull;
	uint32_t maps[3];
	uint8_t *raw;
	size_t raw_len;

	(void)state;
	assert_non_null(p);
	for (int m = 0; m < 3; m++)
		maps[m] = op_profile_mapping(p, &imgs[m], false, NULL);
	for (int i = 0; i < 3000; i++) {
		uint32_t loc;

		/* xorshift: keys of every size, mappings interleaved */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		loc = op_profile_location(p, maps[i % 3], x >> (i % 64));
		assert_true(loc > 0);
		assert_int_equal(op_profile_add(p, &loc, 1, NULL, 1, false), 0);
	}
	assert_int_equal(op_pprof_encode(p, &raw_opts, &raw, &raw_len), 0);
	pp = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	assert_non_null(pp);
	assert_int_equal(pp->n_location, p->nlocs);
	for (size_t i = 1; i < pp->n_location; i++) {
		const Perftools__Profiles__Location *a = pp->location[i - 1], *b = pp->location[i];
		const char *ma = pp->string_table[pp->mapping[a->mapping_id - 1]->filename];
		const char *mb = pp->string_table[pp->mapping[b->mapping_id - 1]->filename];

		/* the model's mapping order is x, y, z; within one, addresses ascend */
		assert_true(strcmp(ma, mb) < 0 || (!strcmp(ma, mb) && a->address < b->address));
	}
	perftools__profiles__profile__free_unpacked(pp, NULL);
	free(raw);
	op_profile_free(p);
}

/* op_pprof_opts.name_fn: names the locations during the encoding; its failure ends it */
static int namer_ok(void *arg)
{
	struct op_profile *p = arg;

	return op_profile_name_loc(p, 1, "named_late", "late.c", 12);
}

static int namer_fails(void *arg)
{
	(void)arg;
	return -ENOMEM;
}

static void test_encode_namer(void **state)
{
	struct op_profile *p = stack_profile();
	struct op_pprof_opts o = { .no_gzip = true, .name_fn = namer_ok, .name_arg = p };
	Perftools__Profiles__Profile *pp;
	bool found = false;
	uint8_t *raw = NULL;
	size_t raw_len = 0;

	(void)state;
	assert_null(p->locs[0].func);
	assert_int_equal(op_pprof_encode(p, &o, &raw, &raw_len), 0);
	pp = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	assert_non_null(pp);
	/* the name given meanwhile is the function's, and its mapping has functions */
	for (size_t i = 0; i < pp->n_function; i++)
		found |= !strcmp(pp->string_table[pp->function[i]->name], "named_late") &&
			 !strcmp(pp->string_table[pp->function[i]->filename], "late.c");
	assert_true(found);
	assert_true(pp->mapping[0]->has_functions);
	assert_int_equal(pp->n_sample, p->nsamples);
	perftools__profiles__profile__free_unpacked(pp, NULL);
	free(raw);
	o.name_fn = namer_fails;
	o.threaded = true;
	o.no_gzip = false;
	raw = NULL;
	assert_int_equal(op_pprof_encode(p, &o, &raw, &raw_len), -ENOMEM);
	assert_null(raw);
	op_profile_free(p);
}

/* a hardware event: its own name with unit count, and the event's period */
static void test_encode_event(void **state)
{
	struct op_profile *p = stack_profile();
	const struct op_pprof_opts raw_opts = { .no_gzip = true };
	Perftools__Profiles__Profile *pp;
	uint8_t *raw;
	size_t raw_len;

	(void)state;
	snprintf(p->event, sizeof(p->event), "CPU_CLK_UNHALTED");
	p->period = 100003;
	p->timer = false;
	assert_int_equal(op_pprof_encode(p, &raw_opts, &raw, &raw_len), 0);
	pp = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	assert_non_null(pp);
	assert_string_equal(pstr(pp, pp->sample_type[1]->type), "CPU_CLK_UNHALTED");
	assert_string_equal(pstr(pp, pp->sample_type[1]->unit), "count");
	assert_string_equal(pstr(pp, pp->period_type->type), "CPU_CLK_UNHALTED");
	assert_int_equal(pp->period, 100003);
	/* no binary read: the mapping spans the keys, addresses are the keys */
	assert_int_equal(pp->mapping[0]->memory_start, 0);
	assert_int_equal(pp->mapping[0]->memory_limit, 0x1101);
	assert_false(pp->mapping[0]->has_functions);
	for (size_t i = 0; i < pp->n_sample; i++)
		assert_int_equal(pp->sample[i]->value[1], pp->sample[i]->value[0] * 100003);
	perftools__profiles__profile__free_unpacked(pp, NULL);
	free(raw);
	op_profile_free(p);
}

/* ------------------------------------------------------------ a session on disk */

static char sess[256];

static void mkdirs(const char *path)
{
	char tmp[4096 + 512];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *s = tmp + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		mkdir(tmp, 0755);
		*s = '/';
	}
}

/* a sample file of @image (in process @app, thread @tid, cpu @cpu) with @n keys */
/* a sample file of @app's process with split key @split (--separate=cgroup; NULL: none) */
static void write_split_file(const char *split, const char *image, const char *app, int tid,
			     int cpu, const uint64_t *keys, const uint32_t *counts, size_t n,
			     const char *event)
{
	struct op_mangle_args a = { 0 };
	char name[4096], full[4096 + 512], err[256];
	odb_t db;
	struct opd_header *h;

	a.app = (struct op_image_name){ .kind = OP_IMAGE_USER, .path = app };
	a.image = (struct op_image_name){ .kind = OP_IMAGE_USER, .path = image };
	a.event = event;
	a.count = 100000;
	a.tgid = tid;
	a.tid = tid;
	a.cpu = cpu;
	a.separate = OP_SEP_LIB | OP_SEP_KERNEL | OP_SEP_THREAD | OP_SEP_CPU;
	a.split = split;
	assert_true(op_mangle(&a, name, sizeof(name)) > 0);
	snprintf(full, sizeof(full), "%s/samples/current/%s", sess, name);
	mkdirs(full);
	memset(&db, 0, sizeof(db));
	assert_int_equal(odb_open(&db, AT_FDCWD, full, ODB_RDWR, err, sizeof(err)), 0);
	h = odb_header(&db);
	op_header_init(h);
	h->cpu_type = OP_CPU_TIMER;
	h->ctr_count = 100000;
	for (size_t i = 0; i < n; i++)
		assert_int_equal(odb_update(&db, keys[i], counts[i]), 0);
	odb_close(&db);
}

static void write_file(const char *image, const char *app, int tid, int cpu, const uint64_t *keys,
		       const uint32_t *counts, size_t n, const char *event)
{
	write_split_file(NULL, image, app, tid, cpu, keys, counts, n, event);
}

static int sess_setup(void **state)
{
	(void)state;
	snprintf(sess, sizeof(sess), "/tmp/test_op_profile.XXXXXX");
	assert_non_null(mkdtemp(sess));
	return 0;
}

static int sess_teardown(void **state)
{
	char cmd[512];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sess);
	return system(cmd) ? -1 : 0;
}

static void write_text(const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/samples/current/%s", sess, rel);
	mkdirs(path);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/*
 * the session's stack table: @version, one image /usr/bin/a (the first of
 * @names, @nsize bytes with their NULs), @n @nodes
 */
static void write_table(uint32_t version, const char *names, uint32_t nsize,
			const struct cgs_node *nodes, uint32_t n)
{
	struct cgs_header2 h = { 0 };
	struct cgs_image img = { 0 };
	struct cgs_layout2 l;
	char path[512];
	FILE *f;

	memcpy(h.magic, CGS_MAGIC, 8);
	h.version = version;
	h.header_size = sizeof(h);
	h.images_max = h.images_used = 1;
	h.strings_size = h.strings_used = nsize;
	cgs_layout2(h.images_max, h.strings_size, &l);
	h.images_off = (uint32_t)l.images_off;
	h.strings_off = (uint32_t)l.strings_off;
	h.nodes_off = (uint32_t)l.nodes_off;
	h.nodes_max = h.nodes_used = n;
	img.name_len = (uint32_t)strlen(names);
	img.tgid = -1;
	snprintf(path, sizeof(path), "%s/samples/current/%s", sess, OP_SESSION_CG_STACKS_PATH);
	mkdirs(path);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite(&h, sizeof(h), 1, f);
	fseek(f, (long)l.images_off, SEEK_SET);
	fwrite(&img, sizeof(img), 1, f);
	fseek(f, (long)l.strings_off, SEEK_SET);
	fwrite(names, nsize, 1, f);
	fseek(f, (long)l.nodes_off, SEEK_SET);
	fwrite(nodes, sizeof(*nodes), n, f);
	assert_int_equal(fclose(f), 0);
}

/* a version 3 stack table: app a; a stack leaf 0x1100 <- caller 0x1011; a node whose parent is itself */
static void write_stacks(void)
{
	static const char names[] = "/usr/bin/a";
	struct cgs_node nodes[4] = { { 0 } };

	nodes[0] = (struct cgs_node){ .key = 0, .parent = 0, .image = 1 };      /* root */
	nodes[1] = (struct cgs_node){ .key = 0x1011, .parent = 1, .image = 1 }; /* caller */
	nodes[2] =
		(struct cgs_node){ .key = 0x1100, .count = 4, .parent = 2, .image = 1 }; /* leaf */
	nodes[3] =
		(struct cgs_node){ .key = 0x1200, .count = 9, .parent = 4, .image = 1 }; /* loop */
	write_table(CGS_VERSION, names, sizeof(names), nodes, 4);
}

static void test_load(void **state)
{
	static const uint64_t ka[] = { 0x1100, 0x1200 };
	static const uint32_t ca[] = { 6, 9 };
	static const uint64_t kb[] = { 0x500 };
	static const uint32_t cb[] = { 2 };
	struct op_profile *p = op_profile_new();
	struct op_buildid_ent e = { .path = "/usr/bin/a", .kind = OP_BUILDID_USER };
	char err[512], line[512], corrupt[4096], dir[512];
	size_t n = 0;

	(void)state;
	write_file("/usr/bin/a", "/usr/bin/a", 42, 1, ka, ca, 2, "TIMER");
	write_file("/lib/libb.so", "/usr/bin/a", 42, 0, kb, cb, 1, "TIMER");
	/* the stack's 4 samples at 0x1100 are among the flat 6 */
	write_stacks();
	/* the build-id index names /usr/bin/a: its ID and text segment, whatever is on disk */
	e.ids.id_len = 4;
	memcpy(e.ids.id, "\xde\xad\xbe\xef", 4);
	e.ids.text_off = 0x1000;
	e.ids.text_vaddr = 0x401000;
	e.ids.text_size = 0x800;
	n = op_buildid_format(line, sizeof(line), &e);
	assert_true(n > 0 && n < sizeof(line));
	snprintf(corrupt, sizeof(corrupt), "%s%s", op_buildid_index_header, line);
	write_text(OP_SESSION_STATS "/" OP_BUILDID_INDEX, corrupt);
	write_text(OP_SESSION_KALLSYMS_PATH, "ffffffff81000000 T _text\nffffffff81000100 T foo\n");
	/* a file with a sample-file name and garbage inside */
	snprintf(corrupt, sizeof(corrupt),
		 "{root}/usr/bin/c/{dep}/{root}/usr/bin/c/TIMER.100000.0.all.all.all");
	write_text(corrupt, "this is not a sample file, whatever its name says");

	op_profile_set_warn(p, warn_count, NULL);
	nwarn = 0;
	snprintf(dir, sizeof(dir), "%s/samples/current", sess);
	assert_int_equal(op_profile_load(p, dir, NULL, err, sizeof(err)), 0);
	/* the corrupt file and the looping stack node, each a warning */
	assert_int_equal(nwarn, 2);
	assert_string_equal(p->event, "TIMER");
	assert_int_equal(p->period, 100000);
	assert_true(p->timer);
	assert_int_equal(p->kernel_start, 0xffffffff81000000ull);
	assert_true(p->time_nanos > 0);
	assert_int_equal(p->total, 6 + 9 + 2);
	assert_int_equal(p->stack_samples, 4);
	for (size_t i = 0; i < p->nmaps; i++) {
		const struct op_profile_mapping *m = &p->maps[i];

		if (!strcmp(m->path, "/usr/bin/a")) {
			assert_string_equal(m->build_id, "deadbeef");
			assert_true(m->have_text);
			assert_int_equal(m->text_vaddr, 0x401000);
		} else {
			assert_string_equal(m->build_id, "");
		}
	}
	for (size_t i = 0; i < p->nsamples; i++) {
		const struct op_profile_sample *s = &p->samples[i];
		const struct op_profile_loc *l = &p->locs[p->locpool[s->loc_off] - 1];

		if (s->nlocs == 2) { /* the stack: leaf, then the call before the return address */
			assert_int_equal(l->key, 0x1100);
			assert_int_equal(p->locs[p->locpool[s->loc_off + 1] - 1].key, 0x1010);
			assert_int_equal(s->count, 4);
			assert_string_equal(p->maps[s->lab.comm - 1].path, "/usr/bin/a");
		} else if (l->key == 0x1100) {
			assert_int_equal(s->count, 2);
			assert_int_equal(s->lab.tid, 42);
			assert_int_equal(s->lab.cpu, 1);
		}
	}
	op_profile_free(p);

	/* a second event is refused, with a message naming both */
	write_file("/usr/bin/a", "/usr/bin/a", 42, 1, ka, ca, 2, "OTHER");
	p = op_profile_new();
	op_profile_set_warn(p, warn_count, NULL);
	assert_int_equal(op_profile_load(p, dir, NULL, err, sizeof(err)), -EXDEV);
	assert_non_null(strstr(err, "two events"));
	op_profile_free(p);

	/* no such session */
	p = op_profile_new();
	snprintf(dir, sizeof(dir), "%s/samples/none", sess);
	assert_int_equal(op_profile_load(p, dir, NULL, err, sizeof(err)), -ENOENT);
	op_profile_free(p);
}

/* a cgroup index line written with the daemon's writer, appended to @buf */
static void cg_line(char *buf, size_t len, uint32_t tgid, uint64_t start, const char *path)
{
	struct op_cgroup_entry e = { .tgid = tgid, .start_ns = start };
	size_t used = strlen(buf);

	snprintf(e.cgroup, sizeof(e.cgroup), "%s", path);
	op_cgroup_ids(path, &e);
	assert_true(op_cgroup_format(&e, buf + used, len - used) > 0);
}

/*
 * stats/cgroups becomes per-sample labels: the last line of a tgid wins
 * (moved, then exec'd), a docker scope names container and unit, a tgid
 * the index lacks gets none, a malformed line is a warning; the delta
 * keeps them
 */
/*
 * issue 19/20: a --separate=cgroup session's stacks (table version 4): each
 * stack sample gets its split key's cgroup (and container_id) label and
 * is taken off the flat samples of its own split only
 */
static void test_split_stacks(void **state)
{
	static const uint64_t k[] = { 0x1100 };
	static const uint32_t ca[] = { 5 }, cd[] = { 3 };
	static const char id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	/* "/usr/bin/a", "/A" at 11, the docker scope at 14 */
	char names[256], dock[160], dir[512], err[512];
	const struct op_pprof_opts raw_opts = { .no_gzip = true };
	struct op_profile *p = op_profile_new();
	Perftools__Profiles__Profile *pp;
	uint32_t nsize;
	size_t raw_len;
	uint8_t *raw;
	unsigned seen = 0;

	(void)state;
	snprintf(dock, sizeof(dock), "/system.slice/docker-%s.scope", id);
	memcpy(names, "/usr/bin/a\0/A", 14);
	strcpy(names + 14, dock);
	nsize = 14 + (uint32_t)strlen(dock) + 1;
	{
		const uint64_t split = (uint64_t)CGS_STACK_SPLIT << 32;
		const struct cgs_node nodes[] = {
			{ .key = split, .image = 1 },
			{ .key = 11 | (uint64_t)2 << 32, .parent = 1, .image = CGS_SPLIT_IMAGE },
			{ .key = 0x1011, .parent = 2, .image = 1 },
			{ .key = 0x1100, .count = 4, .parent = 3, .image = 1 },
			{ .key = 14 | (uint64_t)strlen(dock) << 32,
			  .parent = 1,
			  .image = CGS_SPLIT_IMAGE },
			{ .key = 0x1011, .parent = 5, .image = 1 },
			{ .key = 0x1100, .count = 2, .parent = 6, .image = 1 },
		};

		write_table(CGS_VERSION4, names, nsize, nodes, sizeof(nodes) / sizeof(nodes[0]));
	}
	/* the flat files of the two splits, no thread or cpu split: 5 and 3 samples at the leaf */
	write_split_file("/A", "/usr/bin/a", "/usr/bin/a", -1, -1, k, ca, 1, "TIMER");
	write_split_file(dock, "/usr/bin/a", "/usr/bin/a", -1, -1, k, cd, 1, "TIMER");
	op_profile_set_warn(p, warn_count, NULL);
	nwarn = 0;
	snprintf(dir, sizeof(dir), "%s/samples/current", sess);
	assert_int_equal(op_profile_load(p, dir, NULL, err, sizeof(err)), 0);
	assert_int_equal(nwarn, 0);
	assert_int_equal(p->total, 8);
	assert_int_equal(p->stack_samples, 6);
	assert_int_equal(p->splits.n, 2);
	assert_int_equal(op_pprof_encode(p, &raw_opts, &raw, &raw_len), 0);
	pp = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	assert_non_null(pp);
	/* two stacks, and what each split's flat samples hold beyond its stack: 1 and 1 */
	assert_int_equal(pp->n_sample, 4);
	for (size_t i = 0; i < pp->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pp->sample[i];
		const char *cg = NULL, *cont = NULL;

		for (size_t j = 0; j < s->n_label; j++) {
			const char *key = pstr(pp, s->label[j]->key),
				   *v = pstr(pp, s->label[j]->str);

			if (!strcmp(key, "cgroup"))
				cg = v;
			else if (!strcmp(key, "container_id"))
				cont = v;
		}
		assert_non_null(cg);
		if (s->n_location_id == 2) {
			seen++;
			assert_int_equal(s->value[0], strcmp(cg, "/A") ? 2 : 4);
		} else {
			assert_int_equal(s->n_location_id, 1);
			assert_int_equal(s->value[0], 1);
		}
		if (strcmp(cg, "/A")) {
			assert_string_equal(cg, dock);
			assert_non_null(cont);
			assert_string_equal(cont, id);
		} else {
			assert_null(cont);
		}
	}
	assert_int_equal(seen, 2);
	perftools__profiles__profile__free_unpacked(pp, NULL);
	free(raw);
	op_profile_free(p);
}

static void test_cgroup_labels(void **state)
{
	static const uint64_t ka[] = { 0x1100 };
	static const uint32_t ca[] = { 5 };
	static const char id[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	const struct op_pprof_opts raw_opts = { .no_gzip = true };
	struct op_profile *p = op_profile_new(), *none = op_profile_new(), *d;
	char idx[8192], path[512], dir[512], err[512];
	Perftools__Profiles__Profile *pp;
	size_t raw_len;
	uint8_t *raw;
	unsigned seen42 = 0, seen43 = 0;

	(void)state;
	write_file("/usr/bin/a", "/usr/bin/a", 42, 0, ka, ca, 1, "TIMER");
	write_file("/usr/bin/a", "/usr/bin/a", 43, 0, ka, ca, 1, "TIMER");
	write_file("/usr/bin/a", "/usr/bin/a", 44, 0, ka, ca, 1, "TIMER");
	snprintf(idx, sizeof(idx), "%s\n", OP_CGROUPS_HEADER);
	cg_line(idx, sizeof(idx), 42, 100, "/user.slice/old");
	cg_line(idx, sizeof(idx), 43, 200, "/system.slice/cron.service");
	snprintf(path, sizeof(path), "/system.slice/docker-%s.scope", id);
	cg_line(idx, sizeof(idx), 42, 100, path);
	strcat(idx, "not a line\n");
	write_text(OP_SESSION_CGROUPS_PATH, idx);

	op_profile_set_warn(p, warn_count, NULL);
	nwarn = 0;
	snprintf(dir, sizeof(dir), "%s/samples/current", sess);
	assert_int_equal(op_profile_load(p, dir, NULL, err, sizeof(err)), 0);
	assert_int_equal(nwarn, 1);
	assert_non_null(strstr(lastwarn, "malformed"));
	assert_int_equal(p->cgroups.n, 2);
	d = op_profile_diff(p, none);
	assert_non_null(d);
	assert_int_equal(op_pprof_encode(d, &raw_opts, &raw, &raw_len), 0);
	pp = perftools__profiles__profile__unpack(NULL, raw_len, raw);
	assert_non_null(pp);
	assert_int_equal(pp->n_sample, 3);
	for (size_t i = 0; i < pp->n_sample; i++) {
		const Perftools__Profiles__Sample *s = pp->sample[i];
		const char *pid = NULL, *cg = NULL, *cont = NULL, *unit = NULL;

		for (size_t k = 0; k < s->n_label; k++) {
			const char *key = pstr(pp, s->label[k]->key),
				   *v = pstr(pp, s->label[k]->str);

			if (!strcmp(key, "pid"))
				pid = v;
			else if (!strcmp(key, "cgroup"))
				cg = v;
			else if (!strcmp(key, "container_id"))
				cont = v;
			else if (!strcmp(key, "systemd_unit"))
				unit = v;
		}
		assert_non_null(pid);
		if (!strcmp(pid, "42")) {
			seen42++;
			assert_string_equal(cg, path);
			assert_string_equal(cont, id);
			assert_non_null(unit);
			assert_string_equal(unit, path + strlen("/system.slice/"));
		} else if (!strcmp(pid, "43")) {
			seen43++;
			assert_string_equal(cg, "/system.slice/cron.service");
			assert_null(cont);
			assert_string_equal(unit, "cron.service");
		} else {
			assert_string_equal(pid, "44");
			assert_null(cg);
			assert_null(cont);
			assert_null(unit);
		}
	}
	assert_int_equal(seen42, 1);
	assert_int_equal(seen43, 1);
	perftools__profiles__profile__free_unpacked(pp, NULL);
	free(raw);
	op_profile_free(d);
	op_profile_free(none);
	op_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ids),
		cmocka_unit_test(test_stacks_and_flat),
		cmocka_unit_test(test_flat_merge),
		cmocka_unit_test(test_diff),
		cmocka_unit_test(test_encode),
		cmocka_unit_test(test_encode_event),
		cmocka_unit_test(test_encode_threaded),
		cmocka_unit_test(test_encode_deep),
		cmocka_unit_test(test_encode_loc_order),
		cmocka_unit_test(test_encode_namer),
		cmocka_unit_test_setup_teardown(test_load, sess_setup, sess_teardown),
		cmocka_unit_test_setup_teardown(test_cgroup_labels, sess_setup, sess_teardown),
		cmocka_unit_test_setup_teardown(test_split_stacks, sess_setup, sess_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
