/*
 * test_perf_decode.c - the sample path without a kernel: decoding hand-built
 * records of every type (good and malformed), the time-ordered merge across
 * fake rings, the bounded queue, record/replay round trips, corrupt replay
 * files and /proc synthesis from a fake proc tree.
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf.h"
#include "perf_decode.h"
#include "perf_queue.h"
#include "proc_synth.h"
#include "replay.h"
#include "fake_ring.h"

#define ST_BASE PDEC_BASE_SAMPLE_TYPE
#define ID_CORE 100
#define ID_SRC 200
#define ID_CG 300

/* ---------------- record builder (independent of proc_synth) ---------------- */

struct rb {
	uint8_t b[8192] __attribute__((aligned(8)));
	size_t n;
};

static void rb_start(struct rb *r)
{
	memset(r->b, 0, sizeof(r->b));
	r->n = 8;
}
static void rb32(struct rb *r, uint32_t v)
{
	memcpy(r->b + r->n, &v, 4);
	r->n += 4;
}
static void rb64(struct rb *r, uint64_t v)
{
	memcpy(r->b + r->n, &v, 8);
	r->n += 8;
}
static void rbstr(struct rb *r, const char *s)
{
	size_t l = strlen(s) + 1;

	memcpy(r->b + r->n, s, l);
	r->n += (l + 7) & ~(size_t)7;
}
/* trailer of the test layout: TID TIME CPU IDENTIFIER */
static void rb_trailer(struct rb *r, uint32_t pid, uint32_t tid, uint64_t time, uint32_t cpu,
		       uint64_t id)
{
	rb32(r, pid);
	rb32(r, tid);
	rb64(r, time);
	rb32(r, cpu);
	rb32(r, 0);
	rb64(r, id);
}
static size_t rb_end(struct rb *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = (uint16_t)r->n };

	memcpy(r->b, &h, sizeof(h));
	return r->n;
}

static size_t mk_sample(struct rb *r, uint64_t id, uint64_t ip, uint32_t pid, uint64_t time,
			uint32_t cpu)
{
	rb_start(r);
	rb64(r, id);
	rb64(r, ip);
	rb32(r, pid);
	rb32(r, pid + 1);
	rb64(r, time);
	rb32(r, cpu);
	rb32(r, 0);
	rb64(r, 100000); /* period */
	return rb_end(r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
}

static size_t mk_mmap2(struct rb *r, uint32_t pid, uint64_t start, const char *name,
		       uint64_t time, uint32_t cpu)
{
	rb_start(r);
	rb32(r, pid);
	rb32(r, pid);
	rb64(r, start);
	rb64(r, 0x1000);
	rb64(r, 0x2000);
	rb32(r, 8);
	rb32(r, 1);
	rb64(r, 4242);
	rb64(r, 0);
	rb32(r, PROT_READ | PROT_EXEC);
	rb32(r, MAP_PRIVATE);
	rbstr(r, name);
	rb_trailer(r, pid, pid, time, cpu, ID_CORE);
	return rb_end(r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
}

static size_t mk_comm(struct rb *r, uint32_t pid, const char *comm, bool exec, uint64_t time)
{
	rb_start(r);
	rb32(r, pid);
	rb32(r, pid);
	rbstr(r, comm);
	rb_trailer(r, pid, pid, time, 0, ID_CORE);
	return rb_end(r, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
}

static void setup_dec(struct pdec *d)
{
	struct pdec_event core = { .sample_type = ST_BASE, .read_format = PERF_FORMAT_ID,
				   .counter = 2, .source = 0 };
	struct pdec_event src = { .sample_type = ST_BASE | PERF_SAMPLE_RAW | PERF_SAMPLE_ADDR,
				  .read_format = PERF_FORMAT_ID, .counter = 0, .source = 1 };
	struct pdec_event cg = { .sample_type = ST_BASE | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_READ,
				 .read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST,
				 .counter = 1, .source = 0 };

	pdec_init(d);
	assert_int_equal(pdec_add_event(d, &core), 0);
	assert_int_equal(pdec_add_event(d, &src), 1);
	assert_int_equal(pdec_add_event(d, &cg), 2);
	assert_int_equal(pdec_add_id(d, ID_CORE, 0), 0);
	assert_int_equal(pdec_add_id(d, ID_SRC, 1), 0);
	assert_int_equal(pdec_add_id(d, ID_CG, 2), 0);
	assert_int_equal(d->trailer_size, 32);
}

/* ---------------- decoder ---------------- */

static void test_decode_sample(void **state)
{
	struct pdec d;
	struct rb r;
	struct op_record o;
	uint64_t t;

	(void)state;
	setup_dec(&d);
	mk_sample(&r, ID_CORE, 0x401234, 77, 5555, 1);
	assert_int_equal(pdec_classify(&d, r.b, &t), PDEC_OK);
	assert_int_equal(t, 5555);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_OK);
	assert_int_equal(o.type, OP_REC_SAMPLE);
	assert_int_equal(o.time, 5555);
	assert_int_equal(o.cpu, 1);
	assert_int_equal(o.counter, 2);
	assert_int_equal(o.sample.source, 0);
	assert_int_equal(o.sample.ip, 0x401234);
	assert_int_equal(o.sample.pid, 77);
	assert_int_equal(o.sample.tid, 78);
	assert_int_equal(o.sample.period, 100000);
	assert_int_equal(o.sample.cpumode, OP_CPUMODE_USER);
	assert_int_equal(o.sample.id, ID_CORE);
	assert_int_equal(o.sample.size, sizeof(o.sample));
	assert_int_equal(o.sample.nr_callchain, 0);
	assert_null(o.sample.raw);

	/* an id never opened */
	mk_sample(&r, 999, 1, 1, 1, 0);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_UNKNOWN_ID);
	/* too short for the fixed fields */
	mk_sample(&r, ID_CORE, 1, 1, 1, 0);
	((struct perf_event_header *)r.b)->size = 40;
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_BAD);
	((struct perf_event_header *)r.b)->size = 32;
	assert_int_equal(pdec_classify(&d, r.b, &t), PDEC_BAD);
	pdec_free(&d);
}

static void test_decode_sample_raw_addr(void **state)
{
	struct pdec d;
	struct rb r;
	struct op_record o;
	static const uint8_t payload[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };

	(void)state;
	setup_dec(&d);
	rb_start(&r);
	rb64(&r, ID_SRC);
	rb64(&r, 0xffffffff8204aea7ull);
	rb32(&r, 1);
	rb32(&r, 1);
	rb64(&r, 123);
	rb64(&r, 0xdead0000); /* ADDR comes after TIME */
	rb32(&r, 0);
	rb32(&r, 0);
	rb64(&r, 100000);
	rb32(&r, 12); /* raw size: 4 + 12 = 16, aligned */
	memcpy(r.b + r.n, payload, 12);
	r.n += 12;
	rb_end(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL | PERF_RECORD_MISC_EXACT_IP);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_OK);
	assert_int_equal(o.sample.source, 1);
	assert_int_equal(o.counter, 0);
	assert_int_equal(o.sample.addr, 0xdead0000);
	assert_int_equal(o.sample.cpumode, OP_CPUMODE_KERNEL);
	assert_true(o.sample.misc & PERF_RECORD_MISC_EXACT_IP);
	assert_int_equal(o.sample.raw_size, 12);
	assert_memory_equal(o.sample.raw, payload, 12);
	/* raw size larger than the record */
	memcpy(r.b + 64, &(uint32_t){ 400 }, 4);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_BAD);
	pdec_free(&d);
}

static void test_decode_sample_callchain_read(void **state)
{
	struct pdec d;
	struct rb r;
	struct op_record o;

	(void)state;
	setup_dec(&d);
	rb_start(&r);
	rb64(&r, ID_CG);
	rb64(&r, 0x400100);
	rb32(&r, 5);
	rb32(&r, 6);
	rb64(&r, 77);
	rb32(&r, 1);
	rb32(&r, 0);
	rb64(&r, 1000);
	rb64(&r, 42);  /* READ: value */
	rb64(&r, ID_CG); /* id */
	rb64(&r, 3);   /* lost */
	rb64(&r, 4);   /* callchain nr */
	rb64(&r, OP_CONTEXT_USER);
	rb64(&r, 0x400100);
	rb64(&r, 0x400200);
	rb64(&r, 0x400300);
	rb_end(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_OK);
	assert_int_equal(o.counter, 1);
	assert_int_equal(o.sample.nr_callchain, 4);
	assert_int_equal(o.sample.callchain[0], OP_CONTEXT_USER);
	assert_int_equal(o.sample.callchain[3], 0x400300);
	/* nr beyond the record */
	memcpy(r.b + 80, &(uint64_t){ 1ull << 60 }, 8);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_BAD);
	memcpy(r.b + 80, &(uint64_t){ 5 }, 8);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_BAD);
	pdec_free(&d);
}

static void test_decode_mmap(void **state)
{
	struct pdec d;
	struct rb r;
	struct op_record o;
	uint64_t t;

	(void)state;
	setup_dec(&d);
	mk_mmap2(&r, 55, 0x400000, "/usr/bin/spin", 9, 1);
	assert_int_equal(pdec_classify(&d, r.b, &t), PDEC_OK);
	assert_int_equal(t, 9);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_OK);
	assert_int_equal(o.type, OP_REC_MMAP);
	assert_int_equal(o.time, 9);
	assert_int_equal(o.cpu, 1);
	assert_int_equal(o.mmap.pid, 55);
	assert_int_equal(o.mmap.start, 0x400000);
	assert_int_equal(o.mmap.len, 0x1000);
	assert_int_equal(o.mmap.pgoff, 0x2000);
	assert_int_equal(o.mmap.prot, PROT_READ | PROT_EXEC);
	assert_int_equal(o.mmap.flags, MAP_PRIVATE);
	assert_true(o.mmap.exec);
	assert_int_equal(o.mmap.cpumode, OP_CPUMODE_USER);
	assert_string_equal(o.mmap.filename, "/usr/bin/spin");
	assert_int_equal(o.mmap.filename_len, strlen("/usr/bin/spin"));

	/* build-id variant: same offsets for prot/flags/filename */
	r.b[8 + 32] = 20;
	((struct perf_event_header *)r.b)->misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_OK);
	assert_string_equal(o.mmap.filename, "/usr/bin/spin");
	assert_true(o.mmap.exec);

	/* data mapping */
	mk_mmap2(&r, 55, 0x600000, "[heap]", 9, 1);
	memcpy(r.b + 8 + 56, &(uint32_t){ PROT_READ | PROT_WRITE }, 4);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_OK);
	assert_false(o.mmap.exec);

	/* filename without NUL before the trailer */
	mk_mmap2(&r, 55, 0x400000, "1234567", 9, 1); /* exactly 8 bytes with NUL */
	r.b[8 + 64 + 7] = 'x';
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_BAD);
	/* shorter than the fixed part */
	mk_mmap2(&r, 55, 0x400000, "a", 9, 1);
	((struct perf_event_header *)r.b)->size = 8 + 32 + 32;
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_BAD);
	/* shorter than the trailer */
	((struct perf_event_header *)r.b)->size = 24;
	assert_int_equal(pdec_classify(&d, r.b, &t), PDEC_BAD);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_BAD);

	/* old MMAP (type 1), kernel map */
	rb_start(&r);
	rb32(&r, UINT32_MAX);
	rb32(&r, 0);
	rb64(&r, 0xffffffff81000000ull);
	rb64(&r, 0x1000000);
	rb64(&r, 0);
	rbstr(&r, "[kernel.kallsyms]_text");
	rb_trailer(&r, 0, 0, 3, 0, ID_CORE);
	rb_end(&r, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_OK);
	assert_int_equal(o.type, OP_REC_MMAP);
	assert_int_equal(o.mmap.cpumode, OP_CPUMODE_KERNEL);
	assert_true(o.mmap.exec);
	assert_string_equal(o.mmap.filename, "[kernel.kallsyms]_text");
	pdec_free(&d);
}

static void test_decode_sideband(void **state)
{
	struct pdec d;
	struct rb r;
	struct op_record o;

	(void)state;
	setup_dec(&d);
	mk_comm(&r, 10, "spinner", true, 20);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_OK);
	assert_int_equal(o.type, OP_REC_COMM);
	assert_true(o.comm.exec);
	assert_int_equal(o.comm.pid, 10);
	assert_string_equal(o.comm.comm, "spinner");
	assert_int_equal(o.time, 20);

	for (int type = PERF_RECORD_EXIT; type <= PERF_RECORD_FORK; type += 3) {
		rb_start(&r);
		rb32(&r, 10);
		rb32(&r, 9);
		rb32(&r, 11);
		rb32(&r, 10);
		rb64(&r, 21);
		rb_trailer(&r, 10, 11, 21, 1, ID_CORE);
		rb_end(&r, (uint32_t)type, 0);
		assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_OK);
		assert_int_equal(o.type, type == PERF_RECORD_EXIT ? OP_REC_EXIT : OP_REC_FORK);
		assert_int_equal(o.task.pid, 10);
		assert_int_equal(o.task.ppid, 9);
		assert_int_equal(o.task.tid, 11);
		assert_int_equal(o.task.ptid, 10);
		assert_int_equal(o.time, 21);
		assert_int_equal(o.cpu, 1);
		/* body too short */
		((struct perf_event_header *)r.b)->size = 8 + 16 + 32;
		assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_BAD);
	}

	rb_start(&r);
	rb64(&r, ID_CORE);
	rb64(&r, 17);
	rb_trailer(&r, 0, 0, 30, 0, ID_CORE);
	rb_end(&r, PERF_RECORD_LOST, 0);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_OK);
	assert_int_equal(o.type, OP_REC_LOST);
	assert_int_equal(o.lost.lost, 17);
	assert_int_equal(o.lost.id, ID_CORE);
	assert_int_equal(o.lost.kind, OP_LOST_RECORDS); /* samples or side-band: not said */

	rb_start(&r);
	rb64(&r, 5);
	rb_trailer(&r, 0, 0, 31, 0, ID_SRC);
	rb_end(&r, PERF_RECORD_LOST_SAMPLES, 0);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_OK);
	assert_int_equal(o.type, OP_REC_LOST);
	assert_int_equal(o.lost.lost, 5);
	assert_int_equal(o.lost.id, ID_SRC);
	assert_int_equal(o.lost.kind, OP_LOST_SAMPLES);

	for (int type = PERF_RECORD_THROTTLE; type <= PERF_RECORD_UNTHROTTLE; type++) {
		rb_start(&r);
		rb64(&r, 40);
		rb64(&r, ID_CORE);
		rb64(&r, ID_CORE);
		rb_trailer(&r, 0, 0, 40, 1, ID_CORE);
		rb_end(&r, (uint32_t)type, 0);
		assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_OK);
		assert_int_equal(o.type, type == PERF_RECORD_THROTTLE ? OP_REC_THROTTLE :
									OP_REC_UNTHROTTLE);
		assert_int_equal(o.throttle.id, ID_CORE);
		assert_int_equal(o.time, 40);
	}

	rb_start(&r);
	rb64(&r, 0xffffffffc0201000ull);
	rb32(&r, 0x100);
	rb32(&r, 1 | (1u << 16)); /* type BPF, flags unregister */
	rbstr(&r, "bpf_prog_59f4a931744dcdc6_probe_prog");
	rb_trailer(&r, 0, 0, 50, 0, ID_CORE);
	rb_end(&r, PERF_RECORD_KSYMBOL, PERF_RECORD_MISC_KERNEL);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_OK);
	assert_int_equal(o.type, OP_REC_KSYMBOL);
	assert_int_equal(o.ksym.addr, 0xffffffffc0201000ull);
	assert_int_equal(o.ksym.len, 0x100);
	assert_int_equal(o.ksym.ktype, 1);
	assert_int_equal(o.ksym.flags, 1);
	assert_string_equal(o.ksym.name, "bpf_prog_59f4a931744dcdc6_probe_prog");

	/* known but unused (SWITCH) and unknown types */
	rb_start(&r);
	rb_trailer(&r, 0, 0, 60, 0, ID_CORE);
	rb_end(&r, PERF_RECORD_SWITCH, 0);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_SKIP);
	rb_end(&r, 99, 0);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_UNKNOWN_TYPE);
	rb_end(&r, 0, 0);
	assert_int_equal(pdec_decode(&d, r.b, &o), PDEC_UNKNOWN_TYPE);
	pdec_free(&d);
}

static void test_decode_events_rules(void **state)
{
	struct pdec d;
	struct pdec_event e = { .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID };
	struct pdec_event ok = { .sample_type = ST_BASE };
	struct pdec_event other = { .sample_type = ST_BASE | PERF_SAMPLE_STREAM_ID };
	unsigned i;

	(void)state;
	pdec_init(&d);
	assert_int_equal(pdec_add_event(&d, &e), -EINVAL);
	assert_int_equal(pdec_add_event(&d, &ok), 0);
	assert_int_equal(pdec_add_event(&d, &other), -EINVAL); /* trailer differs */
	assert_int_equal(pdec_add_id(&d, 1, 5), -EINVAL);
	/* many ids: the table grows */
	for (i = 0; i < 5000; i++)
		assert_int_equal(pdec_add_id(&d, 1000 + i * 3, 0), 0);
	for (i = 0; i < 5000; i++)
		assert_non_null(pdec_lookup(&d, 1000 + i * 3));
	assert_null(pdec_lookup(&d, 1001));
	pdec_free(&d);
}

/* ---------------- merge through a session with fake rings ---------------- */

struct collect {
	unsigned n;
	uint64_t times[256];
	enum op_rec_type types[256];
	uint64_t hash;
	unsigned count;
	uint64_t last_time;
	bool ordered;
	unsigned bad_ip;   /* put_sample samples whose ip is not 0x400000 + time */
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		h = (h ^ *b++) * 0x100000001b3ull;
	return h;
}

static int collect_cb(void *arg, const struct op_record *r)
{
	struct collect *c = arg;
	uint64_t v[6] = { r->type, r->time, r->cpu, r->counter, 0, 0 };

	if (c->n < 256) {
		c->times[c->n] = r->time;
		c->types[c->n] = r->type;
		c->n++;
	}
	if (c->count && r->time < c->last_time)
		c->ordered = false;
	c->last_time = r->time;
	c->count++;
	switch (r->type) {
	case OP_REC_SAMPLE:
		if (r->sample.pid == 100 && r->sample.ip != 0x400000 + r->time)
			c->bad_ip++;
		v[4] = r->sample.ip;
		v[5] = ((uint64_t)r->sample.pid << 32) | r->sample.source;
		break;
	case OP_REC_MMAP:
		v[4] = r->mmap.start;
		c->hash = fnv(c->hash, r->mmap.filename, strlen(r->mmap.filename));
		break;
	case OP_REC_COMM:
		v[4] = r->comm.pid;
		c->hash = fnv(c->hash, r->comm.comm, strlen(r->comm.comm));
		break;
	default:
		break;
	}
	c->hash = fnv(c->hash, v, sizeof(v));
	return 0;
}

static uint64_t test_now;
static uint64_t test_clock(void *arg)
{
	(void)arg;
	return test_now;
}

static struct perf_session *fake_session(struct collect *c, size_t queue_bytes)
{
	struct perf_config cfg = {
		.deliver = collect_cb,
		.arg = c,
		.clock = test_clock,
		.slack_ns = -1,
		.queue_bytes = queue_bytes,
	};
	struct pdec_event core = { .sample_type = ST_BASE, .read_format = PERF_FORMAT_ID,
				   .counter = 0 };
	struct pdec_event src = { .sample_type = ST_BASE, .read_format = PERF_FORMAT_ID,
				  .source = 1 };
	uint64_t id = ID_CORE, id2 = ID_SRC;
	struct perf_session *s;
	char err[256];

	memset(c, 0, sizeof(*c));
	c->ordered = true;
	c->hash = 0xcbf29ce484222325ull;
	assert_int_equal(perf_new(&s, &cfg, err, sizeof(err)), 0);
	assert_int_equal(perf_add_event(s, &core, &id, 1), 0);
	assert_int_equal(perf_add_event(s, &src, &id2, 1), 1);
	return s;
}

static void put_sample(struct fake_ring *f, uint64_t id, uint64_t time, uint32_t cpu)
{
	struct rb r;
	size_t n = mk_sample(&r, id, 0x400000 + time, 100, time, cpu);

	assert_true(fake_write(f, r.b, n));
}

static void test_merge_three_rings(void **state)
{
	struct fake_ring f[3];
	struct collect c;
	struct perf_session *s = fake_session(&c, 0);
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		fake_ring_init(&f[i], 1);
		fake_ring_seek(&f[i], f[i].size - 40 * (uint64_t)(i + 1)); /* wrap soon */
		assert_int_equal(perf_attach_ring(s, f[i].mem, FAKE_PAGE, f[i].size), i);
	}
	/* ring i holds i+1, i+4, i+7, ... */
	for (i = 0; i < 30; i++)
		put_sample(&f[i % 3], i % 2 ? ID_SRC : ID_CORE, (uint64_t)i + 1, (uint32_t)(i % 3));
	for (i = 0; i < 3; i++)
		fake_publish(&f[i]);
	test_now = 1000;
	assert_int_equal(perf_round(s), 0);
	/* watermark = min of the rings' last times = 28: 29, 30 wait */
	assert_int_equal(c.count, 28);
	for (i = 0; i < 28; i++)
		assert_int_equal(c.times[i], (uint64_t)i + 1);
	/* next round: all rings empty, clock says 1000 -> the rest goes */
	assert_int_equal(perf_round(s), 0);
	assert_int_equal(c.count, 30);
	assert_true(c.ordered);
	assert_true(perf_get_stats(s)->wrapped > 0);
	assert_int_equal(perf_get_stats(s)->samples, 30);
	assert_int_equal(perf_stop(s), 0);
	perf_close(s);
	for (i = 0; i < 3; i++)
		fake_ring_free(&f[i]);
}

/* MMAP at t=5 on ring 1, SAMPLE at t=6 on ring 0 read earlier */
static void test_merge_mmap_before_sample(void **state)
{
	struct fake_ring f[2];
	struct collect c;
	struct perf_session *s = fake_session(&c, 0);
	struct rb r;
	size_t n;
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		fake_ring_init(&f[i], 1);
		perf_attach_ring(s, f[i].mem, FAKE_PAGE, f[i].size);
	}
	/* round 1: only the sample is visible; ring 1 is empty at clock 3 */
	put_sample(&f[0], ID_CORE, 6, 0);
	fake_publish(&f[0]);
	test_now = 3;
	perf_round(s);
	assert_int_equal(c.count, 0);
	/* round 2: the MMAP (written at t=5, visible late) shows up */
	n = mk_mmap2(&r, 100, 0x400000, "/bin/app", 5, 1);
	assert_true(fake_write(&f[1], r.b, n));
	fake_publish(&f[1]);
	test_now = 7;
	perf_round(s);
	/* ring 0 empty -> bound 7; ring 1 last 5 -> watermark 5 */
	assert_int_equal(c.count, 1);
	assert_int_equal(c.types[0], OP_REC_MMAP);
	perf_round(s);
	assert_int_equal(c.count, 2);
	assert_int_equal(c.types[1], OP_REC_SAMPLE);

	/* same times, both visible in one round, sample ring read first */
	put_sample(&f[0], ID_CORE, 16, 0);
	n = mk_mmap2(&r, 100, 0x500000, "/bin/lib", 15, 1);
	assert_true(fake_write(&f[1], r.b, n));
	fake_publish(&f[0]);
	fake_publish(&f[1]);
	test_now = 100;
	perf_round(s);
	perf_stop(s);
	assert_int_equal(c.count, 4);
	assert_int_equal(c.types[2], OP_REC_MMAP);
	assert_int_equal(c.types[3], OP_REC_SAMPLE);
	assert_true(c.ordered);
	perf_close(s);
	for (i = 0; i < 2; i++)
		fake_ring_free(&f[i]);
}

static void test_merge_synth_first_and_bad_records(void **state)
{
	struct fake_ring f;
	struct collect c;
	struct perf_session *s = fake_session(&c, 0);
	uint8_t buf[4096] __attribute__((aligned(8)));
	struct rb r;
	size_t n = 0;

	(void)state;
	fake_ring_init(&f, 1);
	perf_attach_ring(s, f.mem, FAKE_PAGE, f.size);
	put_sample(&f, ID_CORE, 50, 0);
	put_sample(&f, 12345, 51, 0); /* unknown id */
	mk_comm(&r, 7, "x", false, 52);
	r.b[r.n - 33] = 'y';          /* clobber the comm's NUL padding */
	memset(r.b + 16, 'z', 8);
	assert_true(fake_write(&f, r.b, r.n));
	rb_start(&r);
	rb_trailer(&r, 0, 0, 53, 0, ID_CORE);
	rb_end(&r, 77, 0);             /* unknown type */
	assert_true(fake_write(&f, r.b, r.n));
	rb_end(&r, PERF_RECORD_SWITCH_CPU_WIDE, 0);
	assert_true(fake_write(&f, r.b, r.n));
	put_sample(&f, ID_CORE, 54, 0);
	fake_publish(&f);
	/* synthesized records (time 0) queued after enable, before the first round */
	n += mk_comm(&r, 1, "init", false, 0);
	memcpy(buf, r.b, r.n);
	n = r.n;
	mk_mmap2(&r, 1, 0x1000, "/sbin/init", 0, 0);
	memcpy(buf + n, r.b, r.n);
	n += r.n;
	assert_int_equal(perf_add_synth(s, buf, n), 0);
	test_now = 1000;
	perf_round(s);
	perf_stop(s);
	assert_int_equal(c.count, 4);
	assert_int_equal(c.types[0], OP_REC_COMM);
	assert_int_equal(c.times[0], 0);
	assert_int_equal(c.types[1], OP_REC_MMAP);
	assert_int_equal(c.times[2], 50);
	assert_int_equal(c.times[3], 54);
	assert_int_equal(perf_get_stats(s)->unknown_ids, 1);
	assert_int_equal(perf_get_stats(s)->bad_records, 1);
	assert_int_equal(perf_get_stats(s)->unknown_types, 1);
	assert_int_equal(perf_get_stats(s)->skipped_types, 1);
	perf_close(s);

	/* a corrupt size in the ring: counted, ring resynced, later data fine */
	s = fake_session(&c, 0);
	fake_ring_free(&f);
	fake_ring_init(&f, 1);
	perf_attach_ring(s, f.mem, FAKE_PAGE, f.size);
	put_sample(&f, ID_CORE, 1, 0);
	rb_start(&r);
	r.n = 16;
	rb_end(&r, PERF_RECORD_SAMPLE, 0);
	((struct perf_event_header *)r.b)->size = 12; /* not a multiple of 8 */
	assert_true(fake_write(&f, r.b, 16));
	put_sample(&f, ID_CORE, 2, 0); /* lost with the resync */
	fake_publish(&f);
	perf_round(s);
	put_sample(&f, ID_CORE, 3, 0);
	fake_publish(&f);
	perf_round(s);
	perf_stop(s);
	assert_int_equal(c.count, 2);
	assert_int_equal(c.times[1], 3);
	assert_int_equal(perf_get_stats(s)->resyncs, 1);
	perf_close(s);
	fake_ring_free(&f);
}

static int pq_seen;
static uint64_t pq_last;
static void pq_cb(void *arg, const void *rec, uint64_t time)
{
	(void)arg;
	(void)rec;
	assert_true(time >= pq_last);
	pq_last = time;
	pq_seen++;
}

/*
 * Records held back by the watermark are queued by reference while the
 * round reads the rings; before the round releases a ring they must be
 * copied out of it: the producer overwrites those bytes right after.
 */
static void test_leftover_survives_ring_reuse(void **state)
{
	struct fake_ring f[2];
	struct collect c;
	struct perf_session *s = fake_session(&c, 0);
	uint64_t t;
	int i;

	(void)state;
	for (i = 0; i < 2; i++) {
		fake_ring_init(&f[i], 1);
		assert_int_equal(perf_attach_ring(s, f[i].mem, FAKE_PAGE, f[i].size), i);
	}
	for (t = 1; t <= 60; t++)
		put_sample(&f[0], ID_CORE, t, 0);
	put_sample(&f[1], ID_CORE, 10, 1);
	fake_publish(&f[0]);
	fake_publish(&f[1]);
	test_now = 1000;
	assert_int_equal(perf_round(s), 0);
	/* watermark 10 (ring 1's last): 1..10 and ring 1's 10 go, 11..60 wait */
	assert_int_equal(c.count, 11);
	/* ring 0 was released: 70 more records only fit over the old ones */
	for (t = 100; t < 170; t++)
		put_sample(&f[0], ID_CORE, t, 0);
	fake_publish(&f[0]);
	assert_int_equal(perf_round(s), 0);
	assert_int_equal(perf_stop(s), 0);
	assert_int_equal(c.count, 11 + 50 + 70);
	for (i = 11; i < 61; i++)
		assert_int_equal(c.times[i], (uint64_t)i);
	assert_int_equal(c.times[61], 100);
	assert_true(c.ordered);
	assert_int_equal(c.bad_ip, 0);
	assert_int_equal(perf_get_stats(s)->queue_forced, 0);
	perf_close(s);
	for (i = 0; i < 2; i++)
		fake_ring_free(&f[i]);
}

/* more held-back ring bytes than the merge queue's arena: the oldest go early */
static void test_leftover_overflows_arena(void **state)
{
	struct fake_ring f[2];
	struct collect c;
	struct perf_session *s = fake_session(&c, 1 << 20); /* 32768 entries */
	const uint64_t n = 30000;                            /* 1.6 MiB of samples */
	uint64_t t;
	int i;

	(void)state;
	fake_ring_init(&f[0], 512);
	fake_ring_init(&f[1], 1);
	for (i = 0; i < 2; i++)
		assert_int_equal(perf_attach_ring(s, f[i].mem, FAKE_PAGE, f[i].size), i);
	put_sample(&f[1], ID_CORE, 1, 1);
	for (t = 2; t < n + 2; t++)
		put_sample(&f[0], ID_CORE, t, 0);
	fake_publish(&f[0]);
	fake_publish(&f[1]);
	test_now = n + 10;
	assert_int_equal(perf_round(s), 0);
	/* watermark 1, but only 1 MiB of the held-back records fits the arena */
	assert_true(c.count > 1);
	assert_true(c.count < n);
	assert_int_equal(perf_get_stats(s)->queue_forced, c.count - 1);
	/* overwrite the released ring, then drain everything */
	for (t = n + 2; t < n + 1002; t++)
		put_sample(&f[0], ID_CORE, t, 0);
	fake_publish(&f[0]);
	assert_int_equal(perf_round(s), 0);
	assert_int_equal(perf_stop(s), 0);
	assert_int_equal(c.count, n + 1001);
	assert_true(c.ordered);
	assert_int_equal(c.bad_ip, 0);
	perf_close(s);
	for (i = 0; i < 2; i++)
		fake_ring_free(&f[i]);
}

static void test_queue_bounded(void **state)
{
	struct pq q;
	uint8_t rec[64] __attribute__((aligned(8))) = { 0 };
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = 64 };
	int i;

	(void)state;
	memcpy(rec, &h, sizeof(h)); /* the queue knows a record's length from its header */
	assert_int_equal(pq_init(&q, 1000, 16), -EINVAL);
	assert_int_equal(pq_init(&q, 1 << 17, 16), 0);
	for (i = 0; i < 16; i++) {
		assert_true(pq_fits(&q, 64));
		pq_push(&q, rec, 64, (uint64_t)(100 - i));
	}
	assert_false(pq_fits(&q, 64)); /* entry slots exhausted */
	pq_seen = 0;
	pq_last = 0;
	assert_int_equal(pq_flush(&q, 90, SIZE_MAX, pq_cb, NULL), 6); /* 85..90 */
	assert_int_equal(pq_flush(&q, UINT64_MAX, 4, pq_cb, NULL), 4);
	assert_int_equal(q.nr, 6);
	assert_int_equal(q.used, 6 * 64);
	assert_true(pq_fits(&q, 64));
	assert_int_equal(pq_flush(&q, UINT64_MAX, SIZE_MAX, pq_cb, NULL), 6);
	assert_int_equal(pq_seen, 16);
	pq_free(&q);
}

/* more synthesized records than the queue holds: forced flushes, still ordered */
static void test_queue_overflow_session(void **state)
{
	struct collect c;
	struct perf_session *s = fake_session(&c, 1 << 20); /* 32768 entries */
	size_t per, n = 0, i, total = 40000;
	uint8_t *buf;
	struct rb r;

	(void)state;
	per = mk_comm(&r, 1, "x", false, 0);
	buf = malloc(per * total);
	for (i = 0; i < total; i++) {
		mk_comm(&r, (uint32_t)i, "x", false, 0);
		memcpy(buf + n, r.b, per);
		n += per;
	}
	assert_int_equal(perf_add_synth(s, buf, n), 0);
	perf_stop(s);
	assert_int_equal(c.count, total);
	assert_true(perf_get_stats(s)->queue_forced > 0);
	assert_true(c.ordered);
	free(buf);
	perf_close(s);
}

/* ---------------- record / replay ---------------- */

static char tmpdir[256];

static void build_path(char *out, size_t len, const char *name)
{
	snprintf(out, len, "%s/%s", tmpdir, name);
}

static void live_run(const char *path, struct collect *c, struct perf_stats *st)
{
	struct fake_ring f[2];
	struct perf_session *s = fake_session(c, 0);
	struct rb r;
	char err[512];
	int i, round;
	size_t n;

	for (i = 0; i < 2; i++) {
		fake_ring_init(&f[i], 1);
		fake_ring_seek(&f[i], 5 * f[i].size - 24);
		perf_attach_ring(s, f[i].mem, FAKE_PAGE, f[i].size);
	}
	assert_int_equal(perf_record_to(s, path, 0, err, sizeof(err)), 0);
	n = mk_comm(&r, 1, "init", false, 0);
	assert_int_equal(perf_add_synth(s, r.b, n), 0);
	test_now = 0;
	for (round = 0; round < 50; round++) {
		for (i = 0; i < 40; i++) {
			uint64_t t = (uint64_t)round * 100 + (uint64_t)i * 2 + (uint64_t)(i & 1);

			if (i % 10 == 3) {
				n = mk_mmap2(&r, 100 + (uint32_t)round, 0x1000 * (uint64_t)i,
					     "/usr/lib/libfoo.so", t, (uint32_t)(i & 1));
				if (!fake_write(&f[i & 1], r.b, n))
					break;
			} else {
				n = mk_sample(&r, i % 3 ? ID_CORE : ID_SRC, 0x400000 + t,
					      100, t, (uint32_t)(i & 1));
				if (!fake_write(&f[i & 1], r.b, n))
					break;
			}
		}
		fake_publish(&f[0]);
		if (round % 3)
			fake_publish(&f[1]); /* ring 1 lags behind */
		test_now = (uint64_t)round * 100 + 50;
		perf_round(s);
	}
	fake_publish(&f[1]);
	assert_int_equal(perf_stop(s), 0);
	*st = *perf_get_stats(s);
	perf_close(s);
	for (i = 0; i < 2; i++)
		fake_ring_free(&f[i]);
}

static void test_record_replay_roundtrip(void **state)
{
	struct collect live, rep;
	struct perf_stats lst;
	struct perf_session *s;
	char path[512], err[512];
	struct perf_config cfg = { .deliver = collect_cb, .arg = &rep };

	(void)state;
	build_path(path, sizeof(path), "rt.oprec");
	live_run(path, &live, &lst);
	assert_true(live.count > 1000);
	assert_true(lst.wrapped > 0);
	memset(&rep, 0, sizeof(rep));
	rep.ordered = true;
	rep.hash = 0xcbf29ce484222325ull;
	assert_int_equal(perf_new(&s, &cfg, err, sizeof(err)), 0);
	assert_int_equal(perf_replay_file(s, path, err, sizeof(err)), 0);
	assert_int_equal(rep.count, live.count);
	assert_int_equal(rep.hash, live.hash);
	assert_int_equal(perf_get_stats(s)->samples, lst.samples);
	assert_int_equal(perf_get_stats(s)->mmaps, lst.mmaps);
	/* ring 1 published late on purpose: the same late records in both runs */
	assert_int_equal(perf_get_stats(s)->out_of_order, lst.out_of_order);
	assert_int_equal(rep.ordered, live.ordered);
	perf_close(s);
}

static int replay_bytes(const uint8_t *data, size_t len, char *err, size_t err_len,
			struct collect *c)
{
	char path[512];
	struct perf_config cfg = { .deliver = collect_cb, .arg = c };
	struct perf_session *s;
	FILE *f;
	int ret;

	build_path(path, sizeof(path), "corrupt.oprec");
	f = fopen(path, "w");
	assert_non_null(f);
	if (len)
		assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
	memset(c, 0, sizeof(*c));
	assert_int_equal(perf_new(&s, &cfg, err, err_len), 0);
	ret = perf_replay_file(s, path, err, err_len);
	perf_close(s);
	return ret;
}

static void test_replay_corrupt(void **state)
{
	struct collect live, c;
	struct perf_stats lst;
	char path[512], err[512];
	uint8_t *data, *copy;
	size_t size, cut;
	struct stat st;
	FILE *f;
	unsigned seed = 12345, i;

	(void)state;
	build_path(path, sizeof(path), "good.oprec");
	live_run(path, &live, &lst);
	assert_int_equal(stat(path, &st), 0);
	size = (size_t)st.st_size;
	data = malloc(size);
	copy = malloc(size);
	f = fopen(path, "r");
	assert_int_equal(fread(data, 1, size, f), size);
	fclose(f);

	/* the intact file replays */
	assert_int_equal(replay_bytes(data, size, err, sizeof(err), &c), 0);
	assert_int_equal(c.count, live.count);

	/* every truncation is an error naming an offset, never a crash */
	for (cut = 0; cut < size; cut += (cut < 256 ? 1 : cut < 8192 ? 7 : 997)) {
		int ret = replay_bytes(data, cut, err, sizeof(err), &c);

		assert_int_equal(ret, -EINVAL);
		assert_non_null(strstr(err, cut < 64 ? "offset 0" : "offset"));
	}
	/* header damage */
	memcpy(copy, data, size);
	copy[0] = 'X';
	assert_int_equal(replay_bytes(copy, size, err, sizeof(err), &c), -EINVAL);
	assert_non_null(strstr(err, "bad magic"));
	memcpy(copy, data, size);
	copy[8] = 9;
	assert_int_equal(replay_bytes(copy, size, err, sizeof(err), &c), -EINVAL);
	assert_non_null(strstr(err, "version"));
	/* first chunk: huge length, unknown type */
	memcpy(copy, data, size);
	memcpy(copy + 64 + 8, &(uint64_t){ 1ull << 40 }, 8);
	assert_int_equal(replay_bytes(copy, size, err, sizeof(err), &c), -EINVAL);
	assert_non_null(strstr(err, "offset 64"));
	memcpy(copy, data, size);
	memcpy(copy + 64, &(uint32_t){ 77 }, 4);
	assert_int_equal(replay_bytes(copy, size, err, sizeof(err), &c), -EINVAL);
	assert_non_null(strstr(err, "unknown chunk type"));
	/* random byte flips: any result, but no crash and bounded output */
	for (i = 0; i < 300; i++) {
		size_t k;

		memcpy(copy, data, size);
		for (k = 0; k < 8; k++) {
			seed = seed * 1103515245u + 12345u;
			copy[64 + (seed >> 8) % (size - 64)] ^= (uint8_t)(1u << (seed & 7));
		}
		replay_bytes(copy, size, err, sizeof(err), &c);
		assert_true(c.count <= 2 * live.count);
	}
	free(copy);
	free(data);
}

/* ---------------- /proc synthesis from a fake tree ---------------- */

static void write_file(const char *dir, const char *name, const char *text)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

struct synth_out {
	struct pdec *d;
	unsigned comm, fork, mmap;
	char names[16][128];
	bool exec[16];
};

static int synth_cb(void *arg, const void *rec, size_t len)
{
	struct synth_out *o = arg;
	struct op_record r;

	assert_int_equal(((const struct perf_event_header *)rec)->size, len);
	assert_int_equal(pdec_decode(o->d, rec, &r), PDEC_OK);
	assert_int_equal(r.time, 0);
	switch (r.type) {
	case OP_REC_COMM:
		o->comm++;
		break;
	case OP_REC_FORK:
		o->fork++;
		assert_int_equal(r.task.pid, 123);
		assert_int_equal(r.task.tid, 124);
		break;
	case OP_REC_MMAP:
		assert_true(o->mmap < 16);
		snprintf(o->names[o->mmap], 128, "%s", r.mmap.filename);
		o->exec[o->mmap] = r.mmap.exec;
		o->mmap++;
		break;
	default:
		fail();
	}
	return 0;
}

static void test_proc_synth(void **state)
{
	char root[300], dir[400];
	struct pdec d;
	struct psynth_stats st = { 0 };
	struct synth_out out = { .d = &d };
	struct psynth_ctx c = { .proc_root = root, .dec = &d, .id = ID_CORE, .emit = synth_cb,
				.arg = &out, .stats = &st };

	(void)state;
	setup_dec(&d);
	snprintf(root, sizeof(root), "%s/proc", tmpdir);
	mkdir(root, 0755);
	snprintf(dir, sizeof(dir), "%s/123", root);
	mkdir(dir, 0755);
	write_file(dir, "comm", "spinner\n");
	write_file(dir, "maps",
		   "00400000-00401000 r--p 00000000 08:01 1234   /usr/bin/spinner\n"
		   "00401000-00402000 r-xp 00001000 08:01 1234   /usr/bin/spinner\n"
		   "00600000-00621000 rw-p 00000000 00:00 0      [heap]\n"
		   "7f0000000000-7f0000001000 r-xp 00000000 00:00 0 \n"
		   "7f0000100000-7f0000101000 r-xp 00000000 00:01 77   /memfd:jit (deleted)\n"
		   "7f0000200000-7f0000201000 r-xp 00000000 08:01 99   /tmp/old.so (deleted)\n"
		   "7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0      [vdso]\n"
		   "garbage line\n");
	snprintf(dir, sizeof(dir), "%s/123/task", root);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/123/task/123", root);
	mkdir(dir, 0755);
	snprintf(dir, sizeof(dir), "%s/123/task/124", root);
	mkdir(dir, 0755);
	write_file(dir, "comm", "worker\n");
	/* a process whose maps cannot be read */
	snprintf(dir, sizeof(dir), "%s/1", root);
	mkdir(dir, 0755);
	write_file(dir, "comm", "init\n");
	/* not a pid */
	snprintf(dir, sizeof(dir), "%s/self", root);
	mkdir(dir, 0755);

	assert_int_equal(psynth_all(&c), 0);
	assert_int_equal(st.procs, 2);
	assert_int_equal(st.threads, 1);
	assert_int_equal(st.unreadable, 1);
	assert_int_equal(st.skipped_maps, 1);
	assert_int_equal(out.comm, 3);
	assert_int_equal(out.fork, 1);
	assert_int_equal(out.mmap, 5);
	assert_int_equal(st.maps, 5);
	assert_string_equal(out.names[0], "/usr/bin/spinner");
	assert_true(out.exec[0]);
	assert_string_equal(out.names[1], "[heap]");
	assert_false(out.exec[1]);
	assert_string_equal(out.names[2], "//anon");
	assert_string_equal(out.names[3], "/tmp/old.so (deleted)");
	assert_string_equal(out.names[4], "[vdso]");
	assert_int_equal(psynth_pid(&c, 999), -ESRCH);
	pdec_free(&d);
}

static int setup_tmp(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_perf_decode.XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_sample),
		cmocka_unit_test(test_decode_sample_raw_addr),
		cmocka_unit_test(test_decode_sample_callchain_read),
		cmocka_unit_test(test_decode_mmap),
		cmocka_unit_test(test_decode_sideband),
		cmocka_unit_test(test_decode_events_rules),
		cmocka_unit_test(test_merge_three_rings),
		cmocka_unit_test(test_merge_mmap_before_sample),
		cmocka_unit_test(test_merge_synth_first_and_bad_records),
		cmocka_unit_test(test_leftover_survives_ring_reuse),
		cmocka_unit_test(test_leftover_overflows_arena),
		cmocka_unit_test(test_queue_bounded),
		cmocka_unit_test(test_queue_overflow_session),
		cmocka_unit_test(test_record_replay_roundtrip),
		cmocka_unit_test(test_replay_corrupt),
		cmocka_unit_test(test_proc_synth),
	};

	return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
