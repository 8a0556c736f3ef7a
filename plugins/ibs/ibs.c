/*
 * ibs.c - the "ibs" plugin: AMD Instruction-Based Sampling through the
 * ibs_fetch / ibs_op perf PMUs. Raw IBS records become this plugin's escape
 * codes in the event buffer; their handlers derive OProfile's IBS events
 * (virtual counters IBS_FETCH_*, IBS_OP_*) and log them through the core's
 * sample-file path, so opreport shows them like any event.
 * SPDX-License-Identifier: MIT
 *
 * Arguments (--ext-feature=ibs:ARGS), parts separated by '|':
 *   fetch:EV1,EV2,...:COUNT[:UM]   fetch events (ext:ibs_fetch), one count; UM ignored (0)
 *   op:EV1,EV2,...:COUNT[:UM]      op events (ext:ibs_op), one count, UM hex:
 *                                  bit 0 dispatched-op count mode, bit 1 memory-access log
 *   events:NAME:COUNT[:UM],...     opcontrol style: the tag of each event picks its half
 *   KEY=VALUE[,KEY=VALUE]          sysfs=DIR (default /sys), family=N (AMD family,
 *                                  default from cpuinfo), cpu_type=x86-64/family10
 *                                  (the events catalogue that lists the IBS events)
 * Config group plugins.ibs: fetch, op, events (strings as above), sysfs,
 * cpu_type (strings), family (int). Arguments win over the config.
 *
 * Sources are registered fetch first, then op: a --record of an IBS session
 * replays with the same --ext-feature=ibs:... selection. Escape records carry
 * the mapped pc (in_kernel, cookie, offset, anon range) and the registers
 * (fetch: ctl, linaddr, physaddr; op: ctl, rip, data, data2, data3, dc
 * linaddr, dc physaddr, branch target).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <linux/perf_event.h>

#include "ibs_decode.h"
#include "op_events.h"
#include "oprofile_sdk.h"
#include "../common/plugin_util.h"

#define IBS_DEFAULT_SYSFS "/sys"
#define IBS_DEFAULT_CATALOGUE "x86-64/family10"
#define IBS_MAX_PENDING 128
#define IBS_FETCH_ARGS 8 /* in_kernel cookie offset anon_start anon_end ctl lin phys */
#define IBS_OP_ARGS \
	13 /* in_kernel cookie offset anon_start anon_end ctl rip data data2 data3 dclin dcphys bta */
#define IBS_UM_DISPATCH 0x1
#define IBS_UM_MEMLOG 0x2

enum ibs_half_kind { IBS_HALF_BY_TAG = -1, IBS_FETCH = 0, IBS_OP = 1 };

static const char *const ibs_half_names[] = { "fetch", "op" };
static const char *const ibs_half_tags[] = { "ibs_fetch", "ibs_op" };
static const char *const ibs_half_pmus[] = { "ibs_fetch", "ibs_op" };

/* one event as given, validated once the catalogue is loaded */
struct ibs_pending {
	int half; /* enum ibs_half_kind */
	char name[96];
	char count[32];
	char um[32];    /* "" when not given */
	char where[64]; /* "--ext-feature=ibs:op" or "config plugins.ibs.op" */
};

struct ibs_half {
	bool on;
	uint64_t count;
	uint32_t um;
	const char *first; /* first event's name (for messages) */
	uint32_t pmu_type;
	bool has_cnt_ctl, has_rand_en;
	bool probed;
	uint32_t escape, source;
};

struct ibs_state {
	op_ext_t *ctx;
	const struct op_host *host;
	char sysfs[PATH_MAX];
	char catalogue[64];
	int64_t family;   /* -1 unknown */
	bool args_events; /* events came from the arguments: ignore config events */
	struct ibs_pending pending[IBS_MAX_PENDING];
	size_t nr_pending;
	struct ibs_half half[2];
	bool selected[IBS_NR_EVENTS];
	uint32_t counter[IBS_NR_EVENTS];
	char names[IBS_NR_EVENTS][64];
	unsigned sel_fetch[IBS_NR_EVENTS], nr_sel_fetch;
	unsigned sel_op[IBS_NR_EVENTS], nr_sel_op;
	FILE *memlog;
	char memlog_path[PATH_MAX];

	/* stats */
	uint64_t fetch_samples, fetch_incomplete;
	uint64_t op_samples, op_incomplete;
	uint64_t derived;
	uint64_t rip_invalid, unmapped, emit_errors, log_errors, memlog_lines;
	uint64_t memlog_errors; /* failed writes/flushes of the memory-access log */
	bool memlog_error_logged;
	uint64_t raw_status[4][2]; /* [ibs_raw_status][half] */
};

/* ------------------------------------------------------------------ */
/* small parsers                                                       */
/* ------------------------------------------------------------------ */

static bool ibs_parse_u64(const char *s, int base, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	v = strtoull(s, &end, base);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

static void ibs_copy(char *dst, size_t len, const char *src, size_t n)
{
	if (n >= len)
		n = len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int ibs_add_pending(struct ibs_state *st, int half, const char *name, size_t name_len,
			   const char *count, const char *um, const char *where)
{
	struct ibs_pending *p;

	if (st->nr_pending == IBS_MAX_PENDING) {
		st->host->log(st->ctx, OP_LOG_ERR, "%s: more than %d IBS events given", where,
			      IBS_MAX_PENDING);
		return -EINVAL;
	}
	if (!name_len || name_len >= sizeof(p->name)) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "%s: empty or too long event name in the list: expected "
			      "EV1,EV2,...:COUNT:UM",
			      where);
		return -EINVAL;
	}
	p = &st->pending[st->nr_pending++];
	memset(p, 0, sizeof(*p));
	p->half = half;
	ibs_copy(p->name, sizeof(p->name), name, name_len);
	ibs_copy(p->count, sizeof(p->count), count, strlen(count));
	ibs_copy(p->um, sizeof(p->um), um ? um : "", um ? strlen(um) : 0);
	ibs_copy(p->where, sizeof(p->where), where, strlen(where));
	return 0;
}

/* "EV1,EV2,...:COUNT[:UM]" of one half */
static int ibs_parse_half(struct ibs_state *st, int half, char *text, const char *where)
{
	char *colon = strchr(text, ':'), *count, *um, *p, *comma;
	int rc;

	if (!colon) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "%s:%s: no count: expected %s:EV1,EV2,...:COUNT:UM", where, text,
			      ibs_half_names[half]);
		return -EINVAL;
	}
	*colon = '\0';
	count = colon + 1;
	um = strchr(count, ':');
	if (um) {
		*um++ = '\0';
		if (strchr(um, ':')) {
			st->host->log(st->ctx, OP_LOG_ERR,
				      "%s: too many fields after the events ('%s:%s'): expected "
				      "%s:EV1,EV2,...:COUNT:UM",
				      where, count, um, ibs_half_names[half]);
			return -EINVAL;
		}
	}
	if (!*text) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "%s: no events before the count: expected "
			      "%s:EV1,EV2,...:COUNT:UM",
			      where, ibs_half_names[half]);
		return -EINVAL;
	}
	for (p = text; p; p = comma ? comma + 1 : NULL) {
		comma = strchr(p, ',');
		rc = ibs_add_pending(st, half, p, comma ? (size_t)(comma - p) : strlen(p), count,
				     um, where);
		if (rc)
			return rc;
	}
	return 0;
}

/* "NAME:COUNT[:UM],NAME:COUNT[:UM],..." (opcontrol's event list) */
static int ibs_parse_events(struct ibs_state *st, char *text, const char *where)
{
	char *item, *save = NULL;
	int rc;

	for (item = strtok_r(text, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *count = strchr(item, ':'), *um;

		if (!count) {
			st->host->log(st->ctx, OP_LOG_ERR,
				      "%s: event '%s' has no count: expected NAME:COUNT[:UM]",
				      where, item);
			return -EINVAL;
		}
		*count++ = '\0';
		um = strchr(count, ':');
		if (um)
			*um++ = '\0';
		rc = ibs_add_pending(st, IBS_HALF_BY_TAG, item, strlen(item), count, um, where);
		if (rc)
			return rc;
	}
	return 0;
}

static int ibs_set_family(struct ibs_state *st, const char *text, const char *where)
{
	uint64_t v;

	if (!ibs_parse_u64(text, 0, &v) || v < 0x10 || v > 0xff) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "%s: bad AMD family '%s': expected 0x10..0xff (e.g. 0x10, 0x15, 25)",
			      where, text);
		return -EINVAL;
	}
	st->family = (int64_t)v;
	return 0;
}

static int ibs_parse_setting(struct ibs_state *st, char *part)
{
	char *item, *save = NULL;
	int rc;

	for (item = strtok_r(part, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *val = strchr(item, '=');

		if (!val) {
			st->host->log(st->ctx, OP_LOG_ERR,
				      "--ext-feature=ibs: unknown part '%s': expected fetch:EV,...:"
				      "COUNT:UM, op:EV,...:COUNT:UM, events:NAME:COUNT:UM,... or "
				      "sysfs=DIR, family=N, cpu_type=TYPE",
				      item);
			return -EINVAL;
		}
		*val++ = '\0';
		if (!strcmp(item, "sysfs")) {
			if (!*val || strlen(val) >= sizeof(st->sysfs)) {
				st->host->log(st->ctx, OP_LOG_ERR,
					      "--ext-feature=ibs:sysfs=: expected a directory");
				return -EINVAL;
			}
			snprintf(st->sysfs, sizeof(st->sysfs), "%s", val);
		} else if (!strcmp(item, "family")) {
			rc = ibs_set_family(st, val, "--ext-feature=ibs:family=");
			if (rc)
				return rc;
		} else if (!strcmp(item, "cpu_type")) {
			if (!*val || strlen(val) >= sizeof(st->catalogue)) {
				st->host->log(st->ctx, OP_LOG_ERR,
					      "--ext-feature=ibs:cpu_type=: expected an events/ "
					      "directory such as %s",
					      IBS_DEFAULT_CATALOGUE);
				return -EINVAL;
			}
			snprintf(st->catalogue, sizeof(st->catalogue), "%s", val);
		} else {
			st->host->log(st->ctx, OP_LOG_ERR,
				      "--ext-feature=ibs: unknown setting '%s=%s': expected sysfs=DIR, "
				      "family=N or cpu_type=TYPE",
				      item, val);
			return -EINVAL;
		}
	}
	return 0;
}

static int ibs_parse_args(struct ibs_state *st, const char *args)
{
	char *buf, *part, *next;
	int rc = 0;

	if (!args || !*args)
		return 0;
	buf = strdup(args);
	if (!buf)
		return -ENOMEM;
	for (part = buf; part && !rc; part = next) {
		next = strchr(part, '|');
		if (next)
			*next++ = '\0';
		if (!*part)
			continue;
		if (!strncmp(part, "fetch:", 6)) {
			st->args_events = true;
			rc = ibs_parse_half(st, IBS_FETCH, part + 6, "--ext-feature=ibs:fetch");
		} else if (!strncmp(part, "op:", 3)) {
			st->args_events = true;
			rc = ibs_parse_half(st, IBS_OP, part + 3, "--ext-feature=ibs:op");
		} else if (!strncmp(part, "events:", 7)) {
			st->args_events = true;
			rc = ibs_parse_events(st, part + 7, "--ext-feature=ibs:events");
		} else {
			rc = ibs_parse_setting(st, part);
		}
	}
	free(buf);
	return rc;
}

/* plugins.ibs.*: read before the arguments, which override */
static int ibs_read_config(struct ibs_state *st)
{
	static const struct {
		const char *key;
		int half;
	} evkeys[] = { { "fetch", IBS_FETCH }, { "op", IBS_OP }, { "events", IBS_HALF_BY_TAG } };
	const struct op_host *h = st->host;
	const char *s;
	bool found;
	int64_t fam;
	size_t i;
	int rc;

	rc = pu_config_string(h, st->ctx, "sysfs", &s, &found);
	if (rc)
		return rc;
	if (found) {
		if (!*s || strlen(s) >= sizeof(st->sysfs)) {
			h->log(st->ctx, OP_LOG_ERR,
			       "config plugins.ibs.sysfs: expected a directory");
			return -EINVAL;
		}
		snprintf(st->sysfs, sizeof(st->sysfs), "%s", s);
	}
	rc = pu_config_string(h, st->ctx, "cpu_type", &s, &found);
	if (rc)
		return rc;
	if (found)
		snprintf(st->catalogue, sizeof(st->catalogue), "%s", s);
	rc = pu_config_int64(h, st->ctx, "family", &fam, &found);
	if (rc)
		return rc;
	if (found) {
		char text[32];

		snprintf(text, sizeof(text), "%" PRId64, fam);
		rc = ibs_set_family(st, fam < 0 ? "-" : text, "config plugins.ibs.family");
		if (rc)
			return rc;
	}
	for (i = 0; i < sizeof(evkeys) / sizeof(evkeys[0]); i++) {
		char where[64], *copy;

		rc = pu_config_string(h, st->ctx, evkeys[i].key, &s, &found);
		if (rc)
			return rc;
		if (!found)
			continue;
		copy = strdup(s);
		if (!copy)
			return -ENOMEM;
		snprintf(where, sizeof(where), "config plugins.ibs.%s", evkeys[i].key);
		if (evkeys[i].half == IBS_HALF_BY_TAG)
			rc = ibs_parse_events(st, copy, where);
		else
			rc = ibs_parse_half(st, evkeys[i].half, copy, where);
		free(copy);
		if (rc)
			return rc;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* the machine: sysfs PMUs, cpu family                                 */
/* ------------------------------------------------------------------ */

static void ibs_cpu_vendor(struct ibs_state *st, char *vendor, size_t vlen, int64_t *family)
{
	const char *proc = st->host->proc_root ? st->host->proc_root(st->ctx) : NULL;
	char path[PATH_MAX], line[256];
	FILE *f;

	vendor[0] = '\0';
	*family = -1;
	snprintf(path, sizeof(path), "%s/cpuinfo", proc ? proc : "/proc");
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!c)
			continue;
		if (!strncmp(line, "vendor_id", 9) && !vendor[0]) {
			c++;
			c += strspn(c, " \t");
			c[strcspn(c, "\n")] = '\0';
			snprintf(vendor, vlen, "%s", c);
		} else if (!strncmp(line, "cpu family", 10) && *family < 0) {
			*family = strtol(c + 1, NULL, 10);
		}
		if (vendor[0] && *family >= 0)
			break;
	}
	fclose(f);
}

static bool ibs_exists(const char *path)
{
	struct stat sb;

	return stat(path, &sb) == 0;
}

/* find the PMU of @half: type, and which format bits exist */
static int ibs_probe_pmu(struct ibs_state *st, int half)
{
	const char *pmu = ibs_half_pmus[half];
	struct ibs_half *hf = &st->half[half];
	char dir[PATH_MAX + 64], path[PATH_MAX + 128], vendor[32], buf[64];
	int64_t fam;
	uint64_t type;
	FILE *f;
	size_t n;

	snprintf(dir, sizeof(dir), "%s/bus/event_source/devices/%s", st->sysfs, pmu);
	if (!ibs_exists(dir)) {
		char cpu[160] = "";

		ibs_cpu_vendor(st, vendor, sizeof(vendor), &fam);
		if (vendor[0] && strcmp(vendor, "AuthenticAMD"))
			snprintf(cpu, sizeof(cpu),
				 "; this CPU is %s family %" PRId64
				 ", IBS exists only on AMD family 10h and later",
				 vendor, fam);
		st->host->log(st->ctx, OP_LOG_ERR,
			      "AMD IBS is not available on this machine: %s does not exist (the "
			      "kernel registers the ibs_op/ibs_fetch PMUs only on AMD CPUs with IBS; "
			      "under a hypervisor the PMU is usually not virtualised - dmesg says "
			      "'PMU not available due to virtualization')%s",
			      dir, cpu);
		return -ENODEV;
	}
	snprintf(path, sizeof(path), "%s/type", dir);
	f = fopen(path, "re");
	if (!f) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "%s: cannot read the PMU type: %s - is %s really a perf PMU directory?",
			      path, strerror(errno), dir);
		return -ENODEV;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (!ibs_parse_u64(buf, 10, &type) || type > UINT32_MAX) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "%s: expected the PMU's perf type number (decimal), found '%s'", path,
			      buf);
		return -EINVAL;
	}
	hf->pmu_type = (uint32_t)type;
	hf->probed = true;
	snprintf(path, sizeof(path), "%s/format/cnt_ctl", dir);
	hf->has_cnt_ctl = ibs_exists(path);
	snprintf(path, sizeof(path), "%s/format/rand_en", dir);
	hf->has_rand_en = ibs_exists(path);
	snprintf(path, sizeof(path), "%s/caps/zen4_ibs_extensions", dir);
	st->host->log(st->ctx, OP_LOG_INFO, "%s: perf type %u%s%s%s", pmu, hf->pmu_type,
		      hf->has_cnt_ctl ? ", cnt_ctl" : "", hf->has_rand_en ? ", rand_en" : "",
		      ibs_exists(path) ? ", zen4 extensions" : "");
	return 0;
}

/* ------------------------------------------------------------------ */
/* validation against the events catalogue                             */
/* ------------------------------------------------------------------ */

static int ibs_validate_one(struct ibs_state *st, const struct op_events *cat,
			    const struct ibs_pending *p)
{
	const struct op_host *h = st->host;
	struct op_event_spec es;
	char spec[192], err[512];
	uint64_t count, um = 0, max;
	struct ibs_half *hf;
	int half = p->half, idx;

	if (!ibs_parse_u64(p->count, 10, &count)) {
		h->log(st->ctx, OP_LOG_ERR,
		       "%s: Invalid count (%s) for %s: expected a decimal number", p->where,
		       p->count, p->name);
		return -EINVAL;
	}
	if (p->um[0] && !ibs_parse_u64(p->um, 16, &um)) {
		h->log(st->ctx, OP_LOG_ERR,
		       "%s: Invalid unit mask (%s) for %s: expected a hex number (bit 0 dispatch "
		       "count mode, bit 1 memory-access log)",
		       p->where, p->um, p->name);
		return -EINVAL;
	}
	if (!op_events_find(cat, p->name)) {
		/* let the catalogue name close matches */
		snprintf(spec, sizeof(spec), "%s:%" PRIu64, p->name, count);
		if (op_parse_event_spec(cat, spec, &es, err, sizeof(err)))
			h->log(st->ctx, OP_LOG_ERR, "%s: %s", p->where, err);
		else
			h->log(st->ctx, OP_LOG_ERR, "%s: unknown IBS event %s", p->where, p->name);
		return -EINVAL;
	}
	es.ev = op_events_find(cat, p->name);
	if (!es.ev->ext || (strcmp(es.ev->ext, "ibs_fetch") && strcmp(es.ev->ext, "ibs_op"))) {
		h->log(st->ctx, OP_LOG_ERR,
		       "%s: %s is not an IBS event (%s:%u has no ext:ibs_fetch or ext:ibs_op tag): "
		       "count it with --events instead",
		       p->where, p->name, es.ev->file, es.ev->line);
		return -EINVAL;
	}
	if (half == IBS_HALF_BY_TAG)
		half = strcmp(es.ev->ext, "ibs_fetch") ? IBS_OP : IBS_FETCH;
	if (strcmp(es.ev->ext, ibs_half_tags[half])) {
		h->log(st->ctx, OP_LOG_ERR,
		       "%s: %s carries ext:%s, not ext:%s: list it under %s: instead", p->where,
		       p->name, es.ev->ext, ibs_half_tags[half],
		       ibs_half_names[half == IBS_FETCH ? IBS_OP : IBS_FETCH]);
		return -EINVAL;
	}
	/* the fetch unit mask is ignored (OProfile stores 0) */
	if (half == IBS_FETCH || !p->um[0])
		snprintf(spec, sizeof(spec), "%s:%" PRIu64, p->name, count);
	else
		snprintf(spec, sizeof(spec), "%s:%" PRIu64 ":%#" PRIx64, p->name, count, um);
	if (op_parse_event_spec(cat, spec, &es, err, sizeof(err))) {
		h->log(st->ctx, OP_LOG_ERR, "%s: %s", p->where, err);
		return -EINVAL;
	}
	um = half == IBS_FETCH ? 0 : es.um;
	max = half == IBS_FETCH ? IBS_MAX_FETCH_COUNT : ibs_max_op_count((uint32_t)st->family);
	if (count > max) {
		h->log(st->ctx, OP_LOG_ERR,
		       "%s: count %" PRIu64 " of %s is above the IBS %s limit %" PRIu64
		       " of family %#" PRIx64 ": give a count <= %" PRIu64,
		       p->where, count, p->name, ibs_half_names[half], max, st->family, max);
		return -EINVAL;
	}
	idx = ibs_event_index(es.ev->code);
	if (idx < 0 || (half == IBS_FETCH) != ibs_index_is_fetch((unsigned)idx)) {
		h->log(st->ctx, OP_LOG_ERR,
		       "%s: %s has event code %#x (%s:%u), not one of the IBS %s codes this plugin "
		       "derives",
		       p->where, p->name, es.ev->code, es.ev->file, es.ev->line,
		       ibs_half_names[half]);
		return -EINVAL;
	}
	hf = &st->half[half];
	if (hf->on && (hf->count != count || hf->um != um)) {
		h->log(st->ctx, OP_LOG_ERR,
		       "%s: All IBS %s events must have the same count and unit mask: %s has "
		       "%" PRIu64 ":%#x, %s has %" PRIu64 ":%#" PRIx64,
		       p->where, half == IBS_FETCH ? "Fetch" : "Op", hf->first, hf->count, hf->um,
		       p->name, count, um);
		return -EINVAL;
	}
	if (st->selected[idx]) {
		h->log(st->ctx, OP_LOG_ERR, "%s: %s is given twice", p->where, p->name);
		return -EINVAL;
	}
	if (!hf->on) {
		hf->on = true;
		hf->count = count;
		hf->um = (uint32_t)um;
		hf->first = es.ev->name;
	}
	st->selected[idx] = true;
	snprintf(st->names[idx], sizeof(st->names[idx]), "%s", es.ev->name);
	if (half == IBS_FETCH)
		st->sel_fetch[st->nr_sel_fetch++] = (unsigned)idx;
	else
		st->sel_op[st->nr_sel_op++] = (unsigned)idx;
	return 0;
}

static int ibs_validate(struct ibs_state *st)
{
	struct op_events cat;
	char err[512] = "";
	size_t i;
	int rc;

	rc = op_events_load(&cat, NULL, st->catalogue, 0, 0, err, sizeof(err));
	if (rc) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "cannot load the events catalogue %s (%s): %s - it lists the IBS events; "
			      "check OPROFILE_EVENTS_DIR or give cpu_type=",
			      st->catalogue, op_events_root(), err[0] ? err : strerror(-rc));
		return rc;
	}
	for (i = 0; i < st->nr_pending && !rc; i++)
		rc = ibs_validate_one(st, &cat, &st->pending[i]);
	op_events_free(&cat);
	return rc;
}

/* ------------------------------------------------------------------ */
/* sample path: raw record -> escape record (buffer sync side)         */
/* ------------------------------------------------------------------ */

static uint16_t ibs_cpumode(uint64_t pc)
{
	/* x86-64: the upper canonical half is the kernel's */
	return pc >= 0xffff800000000000ull ? OP_CPUMODE_KERNEL : OP_CPUMODE_USER;
}

static bool ibs_map(struct ibs_state *st, const struct op_perf_sample *s, uint64_t pc, uint64_t *a)
{
	struct op_pc_map m = { .size = sizeof(m) };

	if (st->host->map_pc(st->ctx, s->pid, ibs_cpumode(pc), pc, &m) || !m.cookie ||
	    m.in_kernel < 0) {
		st->unmapped++;
		return false;
	}
	a[0] = (uint64_t)m.in_kernel;
	a[1] = m.cookie;
	a[2] = m.offset;
	a[3] = m.anon_start;
	a[4] = m.anon_end;
	return true;
}

static int ibs_fetch_on_sample(void *priv, const struct op_perf_sample *s, op_emit_t *w)
{
	struct ibs_state *st = priv;
	struct ibs_fetch_regs r;
	enum ibs_raw_status rs = ibs_parse_fetch(s->raw, s->raw_size, &r);
	uint64_t a[IBS_FETCH_ARGS];

	if (rs) {
		/* Val clear: not a sample (the kernel does not deliver those) */
		st->raw_status[rs][IBS_FETCH]++;
		if (rs != IBS_RAW_NOT_VALID)
			st->fetch_incomplete++;
		return 0;
	}
	if (!ibs_map(st, s, r.linaddr, a))
		return 0;
	a[5] = r.ctl;
	a[6] = r.linaddr;
	a[7] = r.physaddr;
	if (st->host->emit(w, st->half[IBS_FETCH].escape, a, IBS_FETCH_ARGS))
		st->emit_errors++;
	return 0;
}

static int ibs_op_on_sample(void *priv, const struct op_perf_sample *s, op_emit_t *w)
{
	struct ibs_state *st = priv;
	struct ibs_op_regs r;
	enum ibs_raw_status rs = ibs_parse_op(s->raw, s->raw_size, &r);
	uint64_t a[IBS_OP_ARGS];

	if (rs) {
		/* Val clear: not a sample (the kernel does not deliver those) */
		st->raw_status[rs][IBS_OP]++;
		if (rs != IBS_RAW_NOT_VALID)
			st->op_incomplete++;
		return 0;
	}
	ibs_mask_op((uint32_t)st->family, &r);
	if (ibs_op_rip_invalid(&r)) {
		st->rip_invalid++;
		return 0;
	}
	if (!ibs_map(st, s, r.rip, a))
		return 0;
	a[5] = r.ctl;
	a[6] = r.rip;
	a[7] = r.data;
	a[8] = r.data2;
	a[9] = r.data3;
	a[10] = r.dc_lin;
	a[11] = r.dc_phys;
	a[12] = r.br_target;
	if (st->host->emit(w, st->half[IBS_OP].escape, a, IBS_OP_ARGS))
		st->emit_errors++;
	return 0;
}

/* ------------------------------------------------------------------ */
/* trans side: escape record -> derived events                         */
/* ------------------------------------------------------------------ */

static void ibs_view(struct op_trans_view *v, const struct op_trans_view *t, const uint64_t *a)
{
	memset(v, 0, sizeof(*v));
	memcpy(v, t, t->size < sizeof(*v) ? t->size : sizeof(*v));
	v->size = sizeof(*v);
	v->in_kernel = (int32_t)a[0];
	v->cookie = (op_cookie_t)a[1];
	v->pc = a[2];
	v->anon_start = a[3];
	v->anon_end = a[4];
	v->sfile = NULL;
}

static void ibs_log_derived(struct ibs_state *st, const struct op_trans_view *v,
			    const unsigned *sel, unsigned nr, const uint32_t *add)
{
	unsigned i;

	for (i = 0; i < nr; i++) {
		unsigned idx = sel[i];

		if (!add[idx])
			continue;
		if (st->host->log_sample(st->ctx, v, st->counter[idx], v->pc, add[idx]))
			st->log_errors++;
		else
			st->derived++;
	}
}

static int ibs_fetch_escape(void *priv, const struct op_trans_view *t, const uint64_t *args,
			    uint32_t nargs)
{
	struct ibs_state *st = priv;
	struct ibs_fetch_regs r = { 0 };
	uint32_t add[IBS_NR_EVENTS] = { 0 };
	struct op_trans_view v;

	if (nargs < IBS_FETCH_ARGS || !t) {
		st->fetch_incomplete++;
		return -EINVAL;
	}
	ibs_view(&v, t, args);
	r.ctl = args[5];
	r.linaddr = args[6];
	r.physaddr = args[7];
	st->fetch_samples++;
	ibs_derive_fetch(&r, add);
	ibs_log_derived(st, &v, st->sel_fetch, st->nr_sel_fetch, add);
	return 0;
}

static void ibs_memlog(struct ibs_state *st, const struct op_trans_view *v,
		       const struct ibs_op_regs *r)
{
	bool ld = r->data3 & IBS_LD;

	if (!st->memlog || !(r->data3 & (IBS_LD | IBS_ST)))
		return;
	/* OProfile's ibs_memaccess.log columns (stdio-buffered: no syscall per line) */
	if (fprintf(st->memlog, "%u,%u,%d,%d,%d,%#" PRIx64 ",%x:%x,%x:%x,%s,%u\n", v->app_cookie,
		    v->cookie, v->cpu, v->tgid, v->tid, r->rip, (uint32_t)(r->dc_phys >> 32),
		    (uint32_t)r->dc_phys, (uint32_t)(r->dc_lin >> 32), (uint32_t)r->dc_lin,
		    ld ? "LD" : "ST", IBS_DC_MISS_LAT(r->data3)) < 0)
		st->memlog_errors++;
	else
		st->memlog_lines++;
}

/* flush the memory-access log (not hot); a failure is counted and logged once */
static void ibs_memlog_flush(struct ibs_state *st)
{
	int e;

	if (!st->memlog)
		return;
	if (!fflush(st->memlog) && !ferror(st->memlog))
		return;
	e = errno;
	st->memlog_errors++;
	clearerr(st->memlog);
	if (st->memlog_error_logged)
		return;
	st->memlog_error_logged = true;
	st->host->log(st->ctx, OP_LOG_ERR,
		      "memory-access log %s: write failed: %s: lines are being lost (counted as "
		      "memaccess_write_errors); free space in the session directory",
		      st->memlog_path, strerror(e));
}

static int ibs_op_escape(void *priv, const struct op_trans_view *t, const uint64_t *args,
			 uint32_t nargs)
{
	struct ibs_state *st = priv;
	struct ibs_op_regs r = { 0 };
	uint32_t add[IBS_NR_EVENTS] = { 0 };
	struct op_trans_view v;

	if (nargs < IBS_OP_ARGS || !t) {
		st->op_incomplete++;
		return -EINVAL;
	}
	ibs_view(&v, t, args);
	r.ctl = args[5];
	r.rip = args[6];
	r.data = args[7];
	r.data2 = args[8];
	r.data3 = args[9];
	r.dc_lin = args[10];
	r.dc_phys = args[11];
	r.br_target = args[12];
	ibs_mask_op((uint32_t)st->family, &r);
	st->op_samples++;
	ibs_derive_op(&r, add);
	ibs_log_derived(st, &v, st->sel_op, st->nr_sel_op, add);
	ibs_memlog(st, &v, &r);
	return 0;
}

/* ------------------------------------------------------------------ */
/* stats                                                               */
/* ------------------------------------------------------------------ */

static void ibs_print_stats(void *priv, const struct op_stats_sink *sink)
{
	struct ibs_state *st = priv;
	char line[160];

	if (sink->text) {
		snprintf(line, sizeof(line), "Nr. IBS Fetch samples     : %" PRIu64,
			 st->fetch_samples);
		sink->text(sink, line);
		snprintf(line, sizeof(line), "Nr. IBS Fetch incompletes : %" PRIu64,
			 st->fetch_incomplete);
		sink->text(sink, line);
		snprintf(line, sizeof(line), "Nr. IBS Op samples        : %" PRIu64, st->op_samples);
		sink->text(sink, line);
		snprintf(line, sizeof(line), "Nr. IBS Op incompletes    : %" PRIu64,
			 st->op_incomplete);
		sink->text(sink, line);
		snprintf(line, sizeof(line), "Nr. IBS derived events    : %" PRIu64, st->derived);
		sink->text(sink, line);
	}
	if (!sink->counter)
		return;
	sink->counter(sink, "fetch_samples", st->fetch_samples);
	sink->counter(sink, "fetch_incompletes", st->fetch_incomplete);
	sink->counter(sink, "op_samples", st->op_samples);
	sink->counter(sink, "op_incompletes", st->op_incomplete);
	sink->counter(sink, "derived_events", st->derived);
	sink->counter(sink, "rip_invalid", st->rip_invalid);
	sink->counter(sink, "unmapped", st->unmapped);
	sink->counter(sink, "not_valid",
		      st->raw_status[IBS_RAW_NOT_VALID][0] + st->raw_status[IBS_RAW_NOT_VALID][1]);
	sink->counter(sink, "short_raw",
		      st->raw_status[IBS_RAW_SHORT][0] + st->raw_status[IBS_RAW_SHORT][1] +
			      st->raw_status[IBS_RAW_BAD_SIZE][0] +
			      st->raw_status[IBS_RAW_BAD_SIZE][1]);
	sink->counter(sink, "emit_errors", st->emit_errors);
	sink->counter(sink, "log_errors", st->log_errors);
	ibs_memlog_flush(st);
	sink->counter(sink, "memaccess_lines", st->memlog_lines);
	sink->counter(sink, "memaccess_write_errors", st->memlog_errors);
}

static const struct op_stats_ops ibs_stats_ops = {
	.size = sizeof(struct op_stats_ops),
	.print_stats = ibs_print_stats,
};

/* ------------------------------------------------------------------ */
/* registration                                                        */
/* ------------------------------------------------------------------ */

static int ibs_register_half(struct ibs_state *st, int half)
{
	const struct op_host *h = st->host;
	struct ibs_half *hf = &st->half[half];
	struct op_escape_desc esc = { .size = sizeof(esc) };
	struct op_source_desc src = { .size = sizeof(src) };
	const unsigned *sel = half == IBS_FETCH ? st->sel_fetch : st->sel_op;
	unsigned nr = half == IBS_FETCH ? st->nr_sel_fetch : st->nr_sel_op, i;
	int rc;

	for (i = 0; i < nr; i++) {
		struct op_counter_desc c = { .size = sizeof(c) };

		c.name = st->names[sel[i]];
		c.event = ibs_event_code(sel[i]);
		c.um = hf->um;
		c.count = hf->count;
		rc = h->register_counter(st->ctx, &c, &st->counter[sel[i]]);
		if (rc) {
			h->log(st->ctx, OP_LOG_ERR, "registering counter %s failed: %s", c.name,
			       strerror(-rc));
			return rc;
		}
	}
	esc.name = half == IBS_FETCH ? "ibs-fetch-sample" : "ibs-op-sample";
	esc.min_args = esc.max_args = half == IBS_FETCH ? IBS_FETCH_ARGS : IBS_OP_ARGS;
	esc.handler = half == IBS_FETCH ? ibs_fetch_escape : ibs_op_escape;
	rc = h->register_escape(st->ctx, &esc, st, &hf->escape);
	if (rc) {
		h->log(st->ctx, OP_LOG_ERR, "registering escape code %s failed: %s", esc.name,
		       strerror(-rc));
		return rc;
	}
	src.name = ibs_half_pmus[half];
	src.attr.size = sizeof(src.attr);
	src.attr.type = hf->pmu_type;
	src.attr.sample_period = ibs_period(hf->count);
	src.attr.sample_type_extra = PERF_SAMPLE_RAW;
	if (half == IBS_FETCH && hf->has_rand_en)
		src.attr.config |= IBS_FETCH_RAND_EN;
	if (half == IBS_OP && (hf->um & IBS_UM_DISPATCH)) {
		if (hf->has_cnt_ctl)
			src.attr.config |= IBS_OP_CNT_CTL;
		else
			h->log(st->ctx, OP_LOG_WARN,
			       "op unit mask %#x asks for dispatched-op counting, but the ibs_op PMU "
			       "has no format/cnt_ctl (this CPU counts cycles only): counting cycles",
			       hf->um);
	}
	src.on_sample = half == IBS_FETCH ? ibs_fetch_on_sample : ibs_op_on_sample;
	rc = h->register_source(st->ctx, &src, st, &hf->source);
	if (rc) {
		h->log(st->ctx, OP_LOG_ERR, "registering the %s event source failed: %s", src.name,
		       strerror(-rc));
		return rc;
	}
	if (hf->count != src.attr.sample_period)
		h->log(st->ctx, OP_LOG_INFO,
		       "%s: count %" PRIu64 " sampled with period %" PRIu64
		       " (IBS periods are multiples of 16)",
		       src.name, hf->count, src.attr.sample_period);
	return 0;
}

static int ibs_open_memlog(struct ibs_state *st)
{
	const char *dir = st->host->session_dir ? st->host->session_dir(st->ctx) : NULL;

	if (!dir) {
		st->host->log(st->ctx, OP_LOG_WARN,
			      "op unit mask bit 1 asks for the memory-access log, but there is no "
			      "session directory: no log");
		return 0;
	}
	snprintf(st->memlog_path, sizeof(st->memlog_path), "%s/samples/ibs_memaccess.log", dir);
	st->memlog = fopen(st->memlog_path, "ae");
	if (!st->memlog) {
		int e = errno;

		st->host->log(st->ctx, OP_LOG_ERR, "memory-access log %s: cannot open: %s",
			      st->memlog_path, strerror(e));
		return -e;
	}
	return 0;
}

/* the plugin's user data: the host calls it after ext_deinit or a failed init */
static void ibs_free(void *data)
{
	struct ibs_state *st = data;

	if (!st)
		return;
	if (st->memlog) {
		ibs_memlog_flush(st);
		fclose(st->memlog);
	}
	free(st);
}

/*
 * Probe the PMUs the given events need before anything else, so that a
 * machine without IBS gets that message first. Events of the events: list
 * are placed by their name here; by their tag once validated.
 */
static int ibs_probe_wanted(struct ibs_state *st)
{
	int half, rc;

	for (half = IBS_FETCH; half <= IBS_OP; half++) {
		const char *prefix = half == IBS_FETCH ? "IBS_FETCH" : "IBS_OP";
		bool used = false;
		size_t i;

		for (i = 0; i < st->nr_pending; i++)
			used |= st->pending[i].half == half ||
				(st->pending[i].half == IBS_HALF_BY_TAG &&
				 !strncmp(st->pending[i].name, prefix, strlen(prefix)));
		if (!used)
			continue;
		rc = ibs_probe_pmu(st, half);
		if (rc)
			return rc;
	}
	return 0;
}

/* the AMD family (masks, count limits): given, or from cpuinfo */
static int ibs_find_family(struct ibs_state *st)
{
	char vendor[32];
	int64_t fam;

	if (st->family >= 0)
		return 0;
	ibs_cpu_vendor(st, vendor, sizeof(vendor), &fam);
	if (strcmp(vendor, "AuthenticAMD") || fam < 0x10) {
		st->host->log(st->ctx, OP_LOG_ERR,
			      "cannot tell the AMD family for the IBS masks and limits (cpuinfo says "
			      "%s family %" PRId64 "): give family=N",
			      vendor[0] ? vendor : "?", fam);
		return -EINVAL;
	}
	st->family = fam;
	return 0;
}

static int ibs_init(op_ext_t *ctx, const struct op_host *host, const char *args)
{
	struct ibs_state *st;
	int rc, half;

	st = calloc(1, sizeof(*st));
	if (!st) {
		host->log(ctx, OP_LOG_ERR, "out of memory");
		return -ENOMEM;
	}
	rc = host->set_user_data(ctx, &(struct op_user_data){ .size = sizeof(struct op_user_data),
							      .data = st,
							      .free_func = ibs_free });
	if (rc) {
		free(st);
		return rc;
	}
	st->ctx = ctx;
	st->host = host;
	st->family = -1;
	snprintf(st->sysfs, sizeof(st->sysfs), "%s", IBS_DEFAULT_SYSFS);
	snprintf(st->catalogue, sizeof(st->catalogue), "%s", IBS_DEFAULT_CATALOGUE);

	rc = ibs_read_config(st);
	if (!rc) {
		size_t from_config = st->nr_pending;

		rc = ibs_parse_args(st, args);
		/* events in the arguments replace the config's; settings just override */
		if (!rc && st->args_events && from_config) {
			memmove(st->pending, st->pending + from_config,
				(st->nr_pending - from_config) * sizeof(st->pending[0]));
			st->nr_pending -= from_config;
		}
	}
	if (rc)
		return rc;
	if (!st->nr_pending) {
		host->log(ctx, OP_LOG_ERR,
			  "no IBS events selected: give --ext-feature=ibs:fetch:EV1,...:COUNT:UM"
			  "|op:EV1,...:COUNT:UM (or plugins.ibs.fetch / plugins.ibs.op)");
		rc = -EINVAL;
		return rc;
	}
	rc = ibs_probe_wanted(st);
	if (!rc)
		rc = ibs_find_family(st);
	if (rc)
		return rc;
	rc = ibs_validate(st);
	if (rc)
		return rc;
	for (half = IBS_FETCH; half <= IBS_OP; half++) {
		if (!st->half[half].on)
			continue;
		if (!st->half[half].probed) {
			/* selected by tag only: the PMU was not probed above */
			rc = ibs_probe_pmu(st, half);
			if (rc)
				return rc;
		}
		rc = ibs_register_half(st, half);
		if (rc)
			return rc;
	}
	if (st->half[IBS_OP].on && (st->half[IBS_OP].um & IBS_UM_MEMLOG)) {
		rc = ibs_open_memlog(st);
		if (rc)
			return rc;
	}
	rc = host->register_stats(ctx, &ibs_stats_ops, st);
	if (rc) {
		host->log(ctx, OP_LOG_ERR, "registering the stats section failed: %s",
			  strerror(-rc));
		return rc;
	}
	host->log(ctx, OP_LOG_INFO,
		  "IBS ready (family %#" PRIx64 "): %u fetch event(s) every %" PRIu64
		  ", %u op event(s) every %" PRIu64 " (um %#x)%s%s",
		  st->family, st->nr_sel_fetch, st->half[IBS_FETCH].count, st->nr_sel_op,
		  st->half[IBS_OP].count, st->half[IBS_OP].um,
		  st->memlog ? ", memory-access log " : "", st->memlog ? st->memlog_path : "");
	return 0;
}

OP_EXT_DEFINE(.name = "ibs", .version = "1.0",
	      .summary = "AMD Instruction-Based Sampling: ibs_fetch/ibs_op samples -> derived IBS events",
	      .ext_init = ibs_init, .flags = OP_EXT_F_NO_EVENT_OK);
