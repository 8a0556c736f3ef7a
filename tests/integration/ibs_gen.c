/*
 * ibs_gen.c - synthetic IBS sessions for ibs_replay.sh. "write" makes an
 * oprofiled --record/--replay stream (core/replay.h) holding COMM/MMAP2 for a
 * real binary and PERF_RECORD_SAMPLEs of the ibs_fetch / ibs_op sources with
 * raw MSR images (ibs_rules.h: one meeting and one missing record per rule,
 * each at its own file offset); "check" reads the resulting sample files and
 * asserts the exact count at every rule's two offsets, the totals, the
 * headers, the stats in oprofiled.log and the memory-access log.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "ibs_rules.h"
#include "odb.h"
#include "op_header.h"
#include "replay.h"

#define GEN_PID 4242
#define GEN_START 0x400000ull
#define GEN_LEN 0x100000ull
#define GEN_ID_CORE 1000
#define GEN_ID_FETCH 1001
#define GEN_ID_OP 1002
#define GEN_COUNT 100000
#define GEN_OP_UM 3       /* dispatch count + memory-access log */
#define GEN_RIPINV_OFF 0x8000
#define GEN_BASE_ST                                                                     \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD)

static uint8_t *gen_buf;
static size_t gen_len, gen_cap;
static uint64_t gen_time = 1;

static void *gen_put(const void *p, size_t n)
{
	void *at;

	if (gen_len + n > gen_cap) {
		gen_cap = (gen_len + n) * 2 + 4096;
		gen_buf = realloc(gen_buf, gen_cap);
		if (!gen_buf) {
			perror("realloc");
			exit(99);
		}
	}
	at = gen_buf + gen_len;
	if (p)
		memcpy(at, p, n);
	else
		memset(at, 0, n);
	gen_len += n;
	return at;
}

static void gen_u32(uint32_t v) { gen_put(&v, 4); }
static void gen_u64(uint64_t v) { gen_put(&v, 8); }

/* sample_id_all trailer of the base sample_type: pid/tid, time, cpu/res, identifier */
static void gen_trailer(uint64_t id)
{
	gen_u32(GEN_PID);
	gen_u32(GEN_PID);
	gen_u64(gen_time++);
	gen_u32(0);
	gen_u32(0);
	gen_u64(id);
}

static struct perf_event_header *gen_header(uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };

	return gen_put(&h, sizeof(h));
}

static void gen_finish(size_t start)
{
	struct perf_event_header *h = (struct perf_event_header *)(gen_buf + start);

	h->size = (uint16_t)(gen_len - start);
}

static void gen_comm(void)
{
	size_t start = gen_len;
	char comm[16] = "true";

	gen_header(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	gen_u32(GEN_PID);
	gen_u32(GEN_PID);
	gen_put(comm, sizeof(comm));
	gen_trailer(GEN_ID_CORE);
	gen_finish(start);
}

static void gen_mmap(const char *path)
{
	size_t start = gen_len, n = strlen(path) + 1;

	gen_header(PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	gen_u32(GEN_PID);
	gen_u32(GEN_PID);
	gen_u64(GEN_START);
	gen_u64(GEN_LEN);
	gen_u64(0);          /* pgoff */
	gen_u32(8);          /* maj */
	gen_u32(1);          /* min */
	gen_u64(12345);      /* ino */
	gen_u64(0);          /* ino_generation */
	gen_u32(PROT_READ | PROT_EXEC);
	gen_u32(MAP_PRIVATE);
	gen_put(path, n);
	gen_put(NULL, ((n + 7) & ~(size_t)7) - n);
	gen_trailer(GEN_ID_CORE);
	gen_finish(start);
}

static void gen_sample(uint64_t id, uint64_t ip, const uint8_t *raw, uint32_t raw_size)
{
	size_t start = gen_len;

	gen_header(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_EXACT_IP);
	gen_u64(id);
	gen_u64(ip);
	gen_u32(GEN_PID);
	gen_u32(GEN_PID);
	gen_u64(gen_time++);
	gen_u32(1);          /* cpu */
	gen_u32(0);
	gen_u64(GEN_COUNT);
	gen_u32(raw_size);
	gen_put(raw, raw_size);
	gen_put(NULL, ((4 + raw_size + 7) & ~7u) - (4 + raw_size));
	gen_finish(start);
}

static uint64_t gen_off(size_t rule, bool miss)
{
	return 0x1000 + 0x20 * rule + (miss ? 0x10 : 0);
}

static void gen_rec(const struct ibs_rec *rec, bool fetch, uint64_t off)
{
	uint8_t raw[80];
	uint32_t n = ibs_rec_raw(rec, fetch, GEN_START + off, raw);

	gen_sample(fetch ? GEN_ID_FETCH : GEN_ID_OP, GEN_START + off, raw, n);
}

static int gen_chunk(FILE *f, uint32_t type, uint64_t a, uint64_t b, const void *p, size_t n)
{
	static const uint8_t zero[8];
	struct replay_chunk c = { .type = type, .len = n, .a = a, .b = b };
	size_t pad = (8 - (n & 7)) & 7;

	if (fwrite(&c, sizeof(c), 1, f) != 1 || (n && fwrite(p, 1, n, f) != n) ||
	    (pad && fwrite(zero, 1, pad, f) != pad))
		return -1;
	return 0;
}

static int gen_write(const char *out, const char *binary, unsigned repeat)
{
	struct replay_file_header h = { .version = REPLAY_VERSION, .header_size = sizeof(h) };
	struct replay_event_payload ev[3] = {
		{ .sample_type = GEN_BASE_ST, .counter = 0, .source = 0 },
		{ .sample_type = GEN_BASE_ST | PERF_SAMPLE_RAW, .counter = 0, .source = 1 },
		{ .sample_type = GEN_BASE_ST | PERF_SAMPLE_RAW, .counter = 0, .source = 2 },
	};
	uint64_t ids[6] = { GEN_ID_CORE, 0, GEN_ID_FETCH, 1, GEN_ID_OP, 2 };
	static const struct ibs_rec ripinv = { false, 0, R_RIPINV, 0, R_LD };
	static const struct ibs_rec plain = { false, 0, 0, 0, R_LD };
	uint8_t raw[80];
	size_t i;
	FILE *f;
	int rc = 0;

	memcpy(h.magic, REPLAY_MAGIC, 8);
	h.queue_bytes = 1u << 20;
	h.queue_entries = 4096;
	gen_comm();
	gen_mmap(binary);
	/* repeat > 1 only for timing runs (check expects 1) */
	while (repeat--)
		for (i = 0; i < IBS_NR_RULES; i++) {
			gen_rec(&ibs_rules[i].meet, ibs_rules[i].fetch, gen_off(i, false));
			gen_rec(&ibs_rules[i].miss, ibs_rules[i].fetch, gen_off(i, true));
		}
	/* dropped: RIP invalid (family 15h), outside every mapping, truncated raw */
	gen_rec(&ripinv, false, GEN_RIPINV_OFF);
	ibs_rec_raw(&plain, false, 0x7000000, raw);
	gen_sample(GEN_ID_OP, 0x7000000, raw, 4 + 8 * 8);
	gen_sample(GEN_ID_OP, GEN_START + 0x9000, raw, 4 + 8 * 5);

	f = fopen(out, "wb");
	if (!f) {
		perror(out);
		return 1;
	}
	rc |= fwrite(&h, sizeof(h), 1, f) != 1;
	for (i = 0; i < 3; i++)
		rc |= gen_chunk(f, REPLAY_EVENT, i, 0, &ev[i], sizeof(ev[i]));
	rc |= gen_chunk(f, REPLAY_IDS, 0, 0, ids, sizeof(ids));
	rc |= gen_chunk(f, REPLAY_DATA, 0, gen_len, gen_buf, gen_len);
	rc |= gen_chunk(f, REPLAY_ROUND, UINT64_MAX, 0, NULL, 0);
	rc |= gen_chunk(f, REPLAY_END, 0, 0, NULL, 0);
	rc |= fclose(f);
	if (rc) {
		fprintf(stderr, "%s: write error\n", out);
		return 1;
	}
	return 0;
}

/* the --ext-feature argument selecting every rule's event */
static int gen_args(void)
{
	size_t i;
	int n = 0;

	printf("fetch:");
	for (i = 0; i < IBS_NR_RULES; i++)
		if (ibs_rules[i].fetch)
			printf("%s%s", n++ ? "," : "", ibs_rules[i].name);
	printf(":%d:0|op:", GEN_COUNT);
	n = 0;
	for (i = 0; i < IBS_NR_RULES; i++)
		if (!ibs_rules[i].fetch)
			printf("%s%s", n++ ? "," : "", ibs_rules[i].name);
	printf(":%d:%d\n", GEN_COUNT, GEN_OP_UM);
	return 0;
}

/* ------------------------------------------------------------------ */
/* check                                                               */
/* ------------------------------------------------------------------ */

static int chk_failures;
static bool chk_seen[IBS_NR_RULES];
static unsigned chk_files;

#define CHK(cond, ...)                                          \
	do {                                                    \
		if (!(cond)) {                                  \
			fprintf(stderr, "FAIL: " __VA_ARGS__);  \
			fputc('\n', stderr);                    \
			chk_failures++;                         \
		}                                               \
	} while (0)

static uint64_t chk_value(const odb_t *db, uint64_t key)
{
	const struct odb_node *n;
	size_t count, i;
	uint64_t v = 0;

	n = odb_nodes(db, &count);
	for (i = 0; i < count; i++)
		if (n[i].key == key)
			v += n[i].value;
	return v;
}

static uint64_t chk_total(const odb_t *db)
{
	const struct odb_node *n;
	size_t count, i;
	uint64_t v = 0;

	n = odb_nodes(db, &count);
	for (i = 0; i < count; i++)
		v += n[i].value;
	return v;
}

static unsigned chk_valid(bool fetch, bool need_ldst)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < IBS_NR_RULES; i++) {
		const struct ibs_rule *r = &ibs_rules[i];

		if (r->fetch != fetch)
			continue;
		n += !r->meet.invalid && (!need_ldst || (r->meet.data3 & (R_LD | R_ST)));
		n += !r->miss.invalid && (!need_ldst || (r->miss.data3 & (R_LD | R_ST)));
	}
	return n;
}

static int chk_file(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	char name[128], err[256];
	const struct ibs_rule *r = NULL;
	struct opd_header *h;
	unsigned long long count, um;
	size_t i, len;
	odb_t db;

	(void)sb;
	if (type != FTW_F || strncmp(base, "IBS_", 4))
		return 0;
	len = strcspn(base, ".");
	if (len >= sizeof(name))
		return 0;
	memcpy(name, base, len);
	name[len] = '\0';
	for (i = 0; i < IBS_NR_RULES; i++)
		if (!strcmp(ibs_rules[i].name, name))
			r = &ibs_rules[i];
	CHK(r, "%s: not an event of the rule table", path);
	if (!r)
		return 0;
	i = (size_t)(r - ibs_rules);
	CHK(!chk_seen[i], "%s: a second file for %s", path, name);
	chk_seen[i] = true;
	chk_files++;
	CHK(sscanf(base + len, ".%llu.%llu.all.all.all", &count, &um) == 2, "%s: name", path);
	CHK(count == GEN_COUNT && um == (r->fetch ? 0 : GEN_OP_UM), "%s: count/um in the name", path);
	if (odb_open(&db, AT_FDCWD, path, ODB_RDONLY, err, sizeof(err))) {
		CHK(0, "%s", err);
		return 0;
	}
	h = odb_header(&db);
	CHK(h->ctr_event == r->code, "%s: header ctr_event %#x, expected %#x", path, h->ctr_event,
	    r->code);
	CHK(h->ctr_count == GEN_COUNT, "%s: header ctr_count %u", path, h->ctr_count);
	CHK(h->ctr_um == (r->fetch ? 0u : (unsigned)GEN_OP_UM), "%s: header ctr_um %u", path,
	    h->ctr_um);
	CHK(chk_value(&db, gen_off(i, false)) == r->value,
	    "%s: the record meeting the rule: %" PRIu64 " at %#" PRIx64 ", expected %u", path,
	    chk_value(&db, gen_off(i, false)), gen_off(i, false), r->value);
	CHK(chk_value(&db, gen_off(i, true)) == 0,
	    "%s: the record missing the rule: %" PRIu64 " at %#" PRIx64 ", expected 0", path,
	    chk_value(&db, gen_off(i, true)), gen_off(i, true));
	CHK(chk_value(&db, GEN_RIPINV_OFF) == 0, "%s: the RIP-invalid record was counted", path);
	if (r->code == 0xf000)
		CHK(chk_total(&db) == chk_valid(true, false), "%s: total %" PRIu64 ", expected %u",
		    path, chk_total(&db), chk_valid(true, false));
	if (r->code == 0xf100)
		CHK(chk_total(&db) == chk_valid(false, false), "%s: total %" PRIu64 ", expected %u",
		    path, chk_total(&db), chk_valid(false, false));
	odb_close(&db);
	return 0;
}

static bool chk_log_has(const char *log, const char *fmt, unsigned v)
{
	char line[128];

	snprintf(line, sizeof(line), fmt, v);
	return strstr(log, line) != NULL;
}

static char *chk_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

static int gen_check(const char *session)
{
	char path[4096], *log, *p;
	unsigned lines = 0;
	size_t i;

	snprintf(path, sizeof(path), "%s/samples/current", session);
	if (nftw(path, chk_file, 16, FTW_PHYS)) {
		perror(path);
		return 1;
	}
	CHK(chk_files == IBS_NR_RULES, "%u IBS sample files, expected %zu", chk_files,
	    IBS_NR_RULES);
	for (i = 0; i < IBS_NR_RULES; i++)
		CHK(chk_seen[i], "no sample file for %s", ibs_rules[i].name);

	snprintf(path, sizeof(path), "%s/samples/oprofiled.log", session);
	log = chk_slurp(path, NULL);
	CHK(log, "%s: cannot read", path);
	if (log) {
		CHK(chk_log_has(log, "Nr. IBS Fetch samples     : %u\n", chk_valid(true, false)),
		    "log: fetch samples, expected %u", chk_valid(true, false));
		CHK(chk_log_has(log, "Nr. IBS Op samples        : %u\n", chk_valid(false, false)),
		    "log: op samples, expected %u", chk_valid(false, false));
		CHK(chk_log_has(log, "Nr. IBS Op incompletes    : %u\n", 1), "log: op incompletes");
		CHK(chk_log_has(log, "Nr. IBS Fetch incompletes : %u\n", 0),
		    "log: fetch incompletes");
		CHK(strstr(log, "rip_invalid: 1\n"), "log: rip_invalid 1");
		CHK(strstr(log, "unmapped: 1\n"), "log: unmapped 1");
		free(log);
	}
	snprintf(path, sizeof(path), "%s/samples/ibs_memaccess.log", session);
	log = chk_slurp(path, NULL);
	CHK(log, "%s: cannot read", path);
	for (p = log; p && *p; p++)
		lines += *p == '\n';
	CHK(lines == chk_valid(false, true), "memory-access log: %u lines, expected %u", lines,
	    chk_valid(false, true));
	free(log);
	if (chk_failures)
		fprintf(stderr, "%d check(s) failed\n", chk_failures);
	else
		printf("ibs_gen: %zu rules x (meet, miss) verified in %u sample files\n",
		       IBS_NR_RULES, chk_files);
	return chk_failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "write"))
		return gen_write(argv[2], argv[3], argc == 5 ? (unsigned)atoi(argv[4]) : 1);
	if (argc == 2 && !strcmp(argv[1], "args"))
		return gen_args();
	if (argc == 2 && !strcmp(argv[1], "totals")) {
		/* valid fetch records, valid op records, op records with LD or ST */
		printf("%u %u %u\n", chk_valid(true, false), chk_valid(false, false),
		       chk_valid(false, true));
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "check"))
		return gen_check(argv[2]);
	fprintf(stderr, "usage: ibs_gen write FILE BINARY [REPEAT] | args | totals | check SESSION_DIR\n");
	return 2;
}
