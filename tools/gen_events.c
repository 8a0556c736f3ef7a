/*
 * gen_events.c - write an OProfile events/ catalogue (events + unit_masks)
 * for one libpfm4 PMU model. Event codes and unit masks are hardware facts:
 * every event (and every unit mask of it) is encoded by libpfm4 itself and
 * the raw config is split back into event select, unit mask and modifier
 * bits, so the catalogue says exactly what libpfm4 would program.
 * tools/gen-events.sh runs this for every catalogue we ship and appends the
 * hand-kept extras from events/extras/.
 *
 * SPDX-License-Identifier: MIT
 *
 * Raw config layout (x86 PERFEVTSEL, AMD and Intel alike):
 *   7:0 event select, 15:8 unit mask, 18 edge, 21 any (Intel), 23 inv,
 *   31:24 cmask, 35:32 AMD extended event select (catalogue code bits 11:8).
 * Skipped, with a count on stderr: events that need config1 (off-core
 * response), unit masks whose encoding changes the event select or sets
 * bits outside that layout, and unit masks libpfm4 refuses to encode alone.
 */
#include <linux/perf_event.h> /* first: libpfm4 then skips its own copy */

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfmon/pfmlib_perf_event.h>

#define MAX_UMASKS 64
#define CFG_KNOWN                                                                        \
	(UINT64_C(0xff) | UINT64_C(0xff00) | (UINT64_C(1) << 18) | (UINT64_C(1) << 21) | \
	 (UINT64_C(1) << 23) | UINT64_C(0xff000000) | UINT64_C(0xf00000000))

struct umask {
	uint32_t value;
	bool edge, inv, any;
	unsigned cmask;
	bool dfl;
	char name[64];
	char desc[256];
};

struct stats {
	int events, skipped_events, skipped_um;
};

static void sanitize_name(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < len; i++) {
		unsigned char c = (unsigned char)in[i];
		out[i] = (isalnum(c) || c == '_') ? (char)toupper(c) : '_';
	}
	out[i] = '\0';
}

/* one line of description text: no control characters */
static void sanitize_desc(const char *in, char *out, size_t len)
{
	size_t i, j = 0;

	for (i = 0; in && in[i] && j + 1 < len; i++) {
		unsigned char c = (unsigned char)in[i];
		out[j++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
	}
	out[j] = '\0';
	if (!j)
		snprintf(out, len, "(no description)");
}

static int find_pmu(const char *name, pfm_pmu_info_t *out)
{
	int p;

	pfm_for_all_pmus(p)
	{
		pfm_pmu_info_t pi;

		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm_get_pmu_info(p, &pi) != PFM_SUCCESS || !pi.name)
			continue;
		if (!strcmp(pi.name, name)) {
			*out = pi;
			return 0;
		}
	}
	return -ENOENT;
}

static void counters_list(int n, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < n && off + 4 < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%d", i ? "," : "", i);
}

/* libpfm4's raw config of "pmu::event[:umask]" (user+kernel), or -1 */
static int encode(const char *pmu, const char *ev, const char *um, uint64_t *config)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	char str[512];
	int ret;

	snprintf(str, sizeof(str), "%s::%s%s%s", pmu, ev, um ? ":" : "", um ? um : "");
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	ret = pfm_get_os_event_encoding(str, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret != PFM_SUCCESS || attr.type != PERF_TYPE_RAW || attr.config1 || attr.config2)
		return -1;
	if (attr.config & ~CFG_KNOWN)
		return -1;
	*config = attr.config;
	return 0;
}

static uint32_t cfg_event(uint64_t cfg)
{
	return (uint32_t)((cfg & 0xff) | ((cfg >> 24) & 0xf00));
}

static void cfg_umask(uint64_t cfg, struct umask *u)
{
	u->value = (uint32_t)((cfg >> 8) & 0xff);
	u->edge = cfg & (UINT64_C(1) << 18);
	u->any = cfg & (UINT64_C(1) << 21);
	u->inv = cfg & (UINT64_C(1) << 23);
	u->cmask = (unsigned)((cfg >> 24) & 0xff);
}

/* "edge,inv,cmask=1" (empty when no modifier) */
static void mods(const struct umask *u, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	if (u->edge)
		off += (size_t)snprintf(buf + off, len - off, "%sedge", off ? "," : "");
	if (u->inv)
		off += (size_t)snprintf(buf + off, len - off, "%sinv", off ? "," : "");
	if (u->any)
		off += (size_t)snprintf(buf + off, len - off, "%sany", off ? "," : "");
	if (u->cmask)
		snprintf(buf + off, len - off, "%scmask=%x", off ? "," : "", u->cmask);
}

static void one_event(FILE *ev, FILE *um, const pfm_pmu_info_t *pi, int idx, bool exclusive,
		      const char *counters, struct stats *st)
{
	pfm_event_info_t ei;
	struct umask ums[MAX_UMASKS];
	int a, n = 0, nattr_um = 0, i;
	char name[128], desc[512], umname[160], m[64];
	uint64_t cfg;
	uint32_t code = 0, dfl = 0;
	bool have_code = false, have_dfl = false;

	memset(&ei, 0, sizeof(ei));
	ei.size = sizeof(ei);
	if (pfm_get_event_info(idx, PFM_OS_NONE, &ei) != PFM_SUCCESS || !ei.name)
		return;
	for (a = 0; a < ei.nattrs; a++) {
		pfm_event_attr_info_t ai;

		memset(&ai, 0, sizeof(ai));
		ai.size = sizeof(ai);
		if (pfm_get_event_attr_info(ei.idx, a, PFM_OS_NONE, &ai) != PFM_SUCCESS)
			continue;
		if (ai.type != PFM_ATTR_UMASK)
			continue;
		nattr_um++;
		if (n == MAX_UMASKS || encode(pi->name, ei.name, ai.name, &cfg)) {
			st->skipped_um++;
			continue;
		}
		if (have_code && cfg_event(cfg) != code) {
			st->skipped_um++; /* the unit mask overrides the event select */
			continue;
		}
		code = cfg_event(cfg);
		have_code = true;
		memset(&ums[n], 0, sizeof(ums[n]));
		cfg_umask(cfg, &ums[n]);
		ums[n].dfl = ai.is_dfl;
		sanitize_name(ai.name, ums[n].name, sizeof(ums[n].name));
		sanitize_desc(ai.desc, ums[n].desc, sizeof(ums[n].desc));
		n++;
	}
	if (!nattr_um) {
		/* no unit masks: the bare event; a non-zero umask byte becomes mandatory */
		if (encode(pi->name, ei.name, NULL, &cfg)) {
			st->skipped_events++;
			return;
		}
		code = cfg_event(cfg);
		memset(&ums[0], 0, sizeof(ums[0]));
		cfg_umask(cfg, &ums[0]);
		if (ums[0].value || ums[0].edge || ums[0].inv || ums[0].any || ums[0].cmask) {
			snprintf(ums[0].name, sizeof(ums[0].name), "DEFAULT");
			sanitize_desc(ei.desc, ums[0].desc, sizeof(ums[0].desc));
			ums[0].dfl = true;
			n = 1;
		}
	} else if (!n) {
		st->skipped_events++;
		return;
	}
	sanitize_name(ei.name, name, sizeof(name));
	sanitize_desc(ei.desc, desc, sizeof(desc));
	if (n == 0) {
		snprintf(umname, sizeof(umname), "zero");
	} else {
		for (i = 0; i < n; i++) {
			if (!ums[i].dfl)
				continue;
			if (exclusive && have_dfl)
				continue; /* the first default wins */
			dfl = exclusive ? ums[i].value : (dfl | ums[i].value);
			have_dfl = true;
		}
		if (!have_dfl)
			dfl = ums[0].value;
		snprintf(umname, sizeof(umname), "%s", name);
		for (i = 0; umname[i]; i++)
			umname[i] = (char)tolower((unsigned char)umname[i]);
		fprintf(um, "name:%s type:%s default:0x%02x\n", umname,
			n == 1 && !nattr_um ? "mandatory" :
			exclusive           ? "exclusive" :
					      "bitmask",
			dfl);
		for (i = 0; i < n; i++) {
			mods(&ums[i], m, sizeof(m));
			fprintf(um, "\t0x%02x extra:%s %s %s\n", ums[i].value, m, ums[i].name,
				ums[i].desc);
		}
	}
	fprintf(ev, "event:0x%03x counters:%s um:%s minimum:500 name:%s : %s\n", code, counters,
		umname, name, desc);
	st->events++;
}

int main(int argc, char **argv)
{
	const char *pmu_name, *dir, *model_dir;
	bool exclusive;
	pfm_pmu_info_t pi;
	char path[4096], counters[128];
	FILE *ev = NULL, *um = NULL;
	bool bad;
	struct stats st = { 0 };
	int idx, ret;

	if (argc != 5) {
		fprintf(stderr,
			"usage: %s PMU OUTDIR MODEL_DIR bitmask|exclusive\n"
			"  e.g. %s amd64_fam10h_barcelona events/x86-64/family10 x86-64/family10 bitmask\n",
			argv[0], argv[0]);
		return 2;
	}
	pmu_name = argv[1];
	dir = argv[2];
	model_dir = argv[3];
	exclusive = !strcmp(argv[4], "exclusive");

	/* inactive PMU tables are what we want: this machine has no PMU */
	setenv("LIBPFM_ENCODE_INACTIVE", "1", 1);
	ret = pfm_initialize();
	if (ret != PFM_SUCCESS) {
		fprintf(stderr, "gen_events: pfm_initialize: %s\n", pfm_strerror(ret));
		return 1;
	}
	if (find_pmu(pmu_name, &pi)) {
		fprintf(stderr, "gen_events: libpfm4 has no PMU model named '%s'\n", pmu_name);
		return 1;
	}
	/* generic counters only: fixed counters are the kernel's business */
	counters_list(pi.num_cntrs > 0 ? pi.num_cntrs : 4, counters, sizeof(counters));

	snprintf(path, sizeof(path), "%s/events", dir);
	ev = fopen(path, "w");
	snprintf(path, sizeof(path), "%s/unit_masks", dir);
	um = fopen(path, "w");
	if (!ev || !um) {
		fprintf(stderr, "gen_events: cannot write %s/{events,unit_masks}: %s\n", dir,
			strerror(errno));
		return 1;
	}
	fprintf(ev,
		"# %s events, generated by tools/gen-events.sh from libpfm4 PMU %s (%s).\n"
		"# Do not edit: hand-kept additions live in events/extras/.\n",
		model_dir, pi.name, pi.desc ? pi.desc : "");
	fprintf(um,
		"# %s unit masks, generated by tools/gen-events.sh from libpfm4 PMU %s.\n"
		"# Do not edit: hand-kept additions live in events/extras/.\n"
		"name:zero type:mandatory default:0x00\n\t0x00 No unit mask\n",
		model_dir, pi.name);

	for (idx = pi.first_event; idx != -1; idx = pfm_get_event_next(idx))
		one_event(ev, um, &pi, idx, exclusive, counters, &st);
	bad = ferror(ev) != 0;
	bad |= fclose(ev) != 0;
	bad |= ferror(um) != 0;
	bad |= fclose(um) != 0;
	if (bad) {
		fprintf(stderr,
			"gen_events: writing %s/{events,unit_masks} failed: %s: the "
			"catalogue is incomplete, fix the cause and run gen-events.sh again\n",
			dir, strerror(errno));
		return 1;
	}
	fprintf(stderr,
		"gen_events: %s: %d events (%d skipped: need config1 or not encodable), "
		"%d unit masks skipped (change the event select or not encodable alone)\n",
		pmu_name, st.events, st.skipped_events, st.skipped_um);
	return st.events ? 0 : 1;
}
