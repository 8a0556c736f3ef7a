/*
 * model_pfm.c - shared code of the x86 hardware-model plugins: detection,
 * catalogue lookup, raw PERFEVTSEL encoding, counter placement.
 * Compiled into each model plugin; see model_pfm.h.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <linux/perf_event.h> /* before libpfm4's header (its own copy is skipped) */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <perfmon/pfmlib.h>

#include "model_pfm.h"
#include "plugin_util.h"

#define MP_CFG_EDGE (UINT64_C(1) << 18)
#define MP_CFG_ANY (UINT64_C(1) << 21)
#define MP_CFG_INV (UINT64_C(1) << 23)

/* ------------------------------------------------------------------ */
/* detection                                                           */
/* ------------------------------------------------------------------ */

/* @pmus: one libpfm4 PMU name or a comma-separated list (any of them) */
bool mp_pfm_present(const char *pmus)
{
	int p;

	if (!pmus || pfm_initialize() != PFM_SUCCESS)
		return false;
	pfm_for_all_pmus(p)
	{
		pfm_pmu_info_t pi;
		const char *s;
		size_t len;

		memset(&pi, 0, sizeof(pi));
		pi.size = sizeof(pi);
		if (pfm_get_pmu_info(p, &pi) != PFM_SUCCESS || !pi.name || !pi.is_present)
			continue;
		len = strlen(pi.name);
		for (s = pmus; s; s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL)
			if (!strncmp(s, pi.name, len) && (s[len] == ',' || !s[len]))
				return true;
	}
	return false;
}

void mp_no_pmu_reason(char *why, size_t why_len)
{
	struct perf_event_attr a;
	const char *name;
	int fd, e;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd >= 0) {
		close(fd);
		snprintf(why, why_len, "no hardware PMU: oprofiled reports the PMU as not usable");
		return;
	}
	e = errno;
	name = strerrorname_np(e);
	snprintf(why, why_len,
		 "no hardware PMU: perf_event_open(cycles) fails with %s (%s)%s (in a VM: "
		 "'PMU not available due to virtualization'); the timer model samples "
		 "cpu-clock instead",
		 name ? name : "?", strerror(e),
		 access("/sys/bus/event_source/devices/cpu", F_OK) ?
			 ", no \"cpu\" event source in sysfs" :
			 "");
}

/* "--cpu-type=x86-64/foo: not a cpu type of plugin amd64 (it has: ...)", when the arch matches */
static void mp_unknown_forced(const struct mp_model *m, const char *forced, char *why,
			      size_t why_len)
{
	const char *slash = strchr(m->t->cpu_type, '/');
	size_t arch = slash ? (size_t)(slash - m->t->cpu_type) + 1 : 0, i, off;

	if (!arch || strncmp(forced, m->t->cpu_type, arch))
		return;
	for (i = 0; i < m->pl->nr_models; i++)
		if (!strcmp(forced, m->pl->models[i].t->cpu_type))
			return; /* a sibling model claims it */
	off = (size_t)snprintf(why, why_len,
			       "--cpu-type=%s: not a cpu type of plugin %s (it has:", forced,
			       m->pl->name);
	for (i = 0; i < m->pl->nr_models && off < why_len; i++)
		off += (size_t)snprintf(why + off, why_len - off, " %s",
					m->pl->models[i].t->cpu_type);
	if (off < why_len)
		snprintf(why + off, why_len - off, ")");
}

int mp_detect(void *priv, const struct op_cpuinfo *ci, char *why, size_t why_len)
{
	struct mp_model *m = priv;
	const struct mp_type *t = m->t;

	if (why && why_len)
		why[0] = '\0';
	if (!ci)
		return 0;
	if (ci->forced_cpu_type) {
		if (strcmp(ci->forced_cpu_type, t->cpu_type)) {
			/* the generic model explains a type of its arch the plugin lacks */
			if (t->score == MP_SCORE_GENERIC && why && why_len)
				mp_unknown_forced(m, ci->forced_cpu_type, why, why_len);
			return 0;
		}
		m->nr_placed = 0;
		return MP_SCORE_FORCED;
	}
	if (strcmp(ci->vendor, t->vendor) || !t->match(ci->family, ci->model))
		return 0;
	if (!ci->pmu_usable) {
		if (why && why_len)
			mp_no_pmu_reason(why, why_len);
		return 0;
	}
	if (t->pmu && !mp_pfm_present(t->pmu)) {
		const char *force = getenv("LIBPFM_FORCE_PMU");

		/* LIBPFM_FORCE_PMU keeps only that table; a misspelt name keeps none */
		if (why && why_len)
			snprintf(why, why_len,
				 "%s (family 0x%x model 0x%x): libpfm4 does not detect its PMU "
				 "table %s on this CPU - a generic model may claim it; force "
				 "it with --cpu-type=%s%s%s%s",
				 t->family_text, ci->family, ci->model, t->pmu, t->cpu_type,
				 force ? " (LIBPFM_FORCE_PMU=" : "", force ? force : "",
				 force ? " is set: it activates that table only)" : "");
		return 0;
	}
	m->nr_placed = 0;
	return t->score;
}

static const char *mp_cpu_type(void *priv, uint32_t *id)
{
	struct mp_model *m = priv;

	if (id)
		*id = m->t->cpu_type_id;
	return m->t->cpu_type;
}

/* ------------------------------------------------------------------ */
/* encoding                                                            */
/* ------------------------------------------------------------------ */

int mp_raw_config(const struct mp_type *t, uint32_t code, uint32_t um, uint32_t extra,
		  uint64_t *config, char *err, size_t err_len)
{
	uint64_t c;

	if (code > (t->amd ? 0xfffu : 0xffu)) {
		snprintf(err, err_len,
			 "event code 0x%x does not fit the %s event select (at most 0x%x)", code,
			 t->amd ? "AMD 12-bit" : "Intel 8-bit", t->amd ? 0xfffu : 0xffu);
		return -EINVAL;
	}
	if (um > 0xff) {
		snprintf(err, err_len, "unit mask 0x%x does not fit 8 bits", um);
		return -EINVAL;
	}
	if (t->amd && (extra & OP_UM_EXTRA_ANY)) {
		snprintf(err, err_len, "the 'any' (AnyThread) modifier does not exist on AMD");
		return -EINVAL;
	}
	c = (uint64_t)(code & 0xff) | ((uint64_t)(code >> 8) << 32) | ((uint64_t)um << 8);
	if (extra & OP_UM_EXTRA_EDGE)
		c |= MP_CFG_EDGE;
	if (extra & OP_UM_EXTRA_ANY)
		c |= MP_CFG_ANY;
	if (extra & OP_UM_EXTRA_INV)
		c |= MP_CFG_INV;
	c |= (uint64_t)((extra >> OP_UM_EXTRA_CMASK_SHIFT) & 0xff) << 24;
	*config = c;
	return 0;
}

static int mp_load_catalogue(struct mp_model *m, char *err, size_t err_len)
{
	char e[512] = "";
	int rc;

	if (m->cat_loaded)
		return 0;
	rc = op_events_load(&m->cat, NULL, m->t->cpu_type, m->t->nr_counters, 0, e, sizeof(e));
	if (rc) {
		snprintf(err, err_len,
			 "events catalogue of cpu type %s (%s): %s - check "
			 "OPROFILE_EVENTS_DIR or the installation",
			 m->t->cpu_type, op_events_root(), e[0] ? e : strerror(-rc));
		return rc;
	}
	m->cat_loaded = true;
	return 0;
}

static int mp_encode(void *priv, const struct op_event_req *ev, struct op_perf_attr *attr,
		     char *err, size_t err_len)
{
	struct mp_model *m = priv;
	const struct mp_type *t = m->t;
	const struct op_event *ce;
	struct op_event_spec spec;
	char text[256], e[512];
	uint64_t config;
	size_t n, counter_events = 0, i;
	int rc;

	if (!ev || !ev->name || !attr) {
		snprintf(err, err_len, "no event to encode");
		return -EINVAL;
	}
	rc = mp_load_catalogue(m, err, err_len);
	if (rc)
		goto out_refused;
	ce = op_events_find(&m->cat, ev->name);
	if (!ce) {
		snprintf(err, err_len,
			 "%s is not an event of cpu type %s - see ophelp --cpu-type=%s", ev->name,
			 t->cpu_type, t->cpu_type);
		rc = -EINVAL;
		goto out_refused;
	}
	if (ce->ext) {
		snprintf(err, err_len,
			 "%s is an ext:%s event: it is sampled by the %s plugin "
			 "(--ext-feature=%s:...), not by a counter",
			 ce->name, ce->ext, strncmp(ce->ext, "ibs", 3) ? ce->ext : "ibs",
			 strncmp(ce->ext, "ibs", 3) ? ce->ext : "ibs");
		rc = -EINVAL;
		goto out_refused;
	}
	if (ev->code && ev->code != ce->code) {
		snprintf(err, err_len, "%s: event code 0x%x given, the %s catalogue says 0x%x",
			 ce->name, ev->code, t->cpu_type, ce->code);
		rc = -EINVAL;
		goto out_refused;
	}
	/* validate count / unit mask / flags the way ophelp does */
	snprintf(text, sizeof(text), "%s:%" PRIu64 ":0x%x:%d:%d", ce->name, ev->count, ev->um,
		 ev->kernel ? 1 : 0, ev->user ? 1 : 0);
	rc = op_parse_event_spec(&m->cat, text, &spec, e, sizeof(e));
	if (rc) {
		snprintf(err, err_len, "%s", e);
		goto out_refused;
	}
	rc = mp_raw_config(t, ce->code, spec.um, spec.um_extra, &config, e, sizeof(e));
	if (rc) {
		snprintf(err, err_len, "%s: %s", ce->name, e);
		goto out_refused;
	}
	/* place it with the events of this set on the counters its counters: mask allows */
	n = m->nr_placed;
	for (i = 0; i < n; i++)
		counter_events += m->placed[i].ev && !m->placed[i].ev->ext;
	if (counter_events + 1 > t->nr_counters || n == OP_MAX_COUNTERS) {
		snprintf(err, err_len, "Too many events specified: CPU only has %u counters.",
			 t->nr_counters);
		rc = -EINVAL;
		goto out_refused;
	}
	m->placed[n] = spec;
	rc = op_events_allocate(m->placed, n + 1, t->nr_counters, e, sizeof(e));
	if (rc) {
		snprintf(err, err_len, "%s (%u counters on %s)", e, t->nr_counters, t->cpu_type);
		goto out_refused;
	}
	m->nr_placed = n + 1;

	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = MP_PERF_TYPE_RAW;
	attr->config = config;
	attr->sample_period = ev->count;
	attr->exclude_kernel = !ev->kernel;
	attr->exclude_user = !ev->user;
	attr->exclude_hv = true;
	m->encoded++;
	return 0;

out_refused:
	m->refused++;
	return rc < 0 ? rc : -EINVAL;
}

/* ------------------------------------------------------------------ */
/* plugin glue                                                         */
/* ------------------------------------------------------------------ */

static void mp_print_stats(void *priv, const struct op_stats_sink *sink)
{
	struct mp_plugin *pl = priv;
	uint64_t enc = 0, ref = 0;
	size_t i;

	for (i = 0; i < pl->nr_models; i++) {
		enc += pl->models[i].encoded;
		ref += pl->models[i].refused;
		if (sink->text && (pl->models[i].encoded || pl->models[i].refused)) {
			char line[160];

			snprintf(line, sizeof(line),
				 "%s (%s): %" PRIu64 " events encoded, %" PRIu64 " refused",
				 pl->models[i].desc.name, pl->models[i].t->cpu_type,
				 pl->models[i].encoded, pl->models[i].refused);
			sink->text(sink, line);
		}
	}
	if (sink->counter) {
		sink->counter(sink, "events_encoded", enc);
		sink->counter(sink, "events_refused", ref);
	}
}

static const struct op_stats_ops mp_stats_ops = {
	.size = sizeof(struct op_stats_ops),
	.print_stats = mp_print_stats,
};

int mp_plugin_init(struct mp_plugin *pl, op_ext_t *ctx, const struct op_host *host,
		   const char *name, const struct mp_type *types, size_t nr_types)
{
	size_t i;
	int rc;

	memset(pl, 0, sizeof(*pl));
	pl->ctx = ctx;
	pl->host = host;
	pl->name = name;
	pl->models = calloc(nr_types, sizeof(*pl->models));
	if (!pl->models) {
		host->log(ctx, OP_LOG_ERR, "out of memory");
		return -ENOMEM;
	}
	pl->nr_models = nr_types;
	for (i = 0; i < nr_types; i++) {
		struct mp_model *m = &pl->models[i];

		m->pl = pl;
		m->t = &types[i];
		m->desc.size = sizeof(m->desc);
		m->desc.name = types[i].model_name;
		m->desc.detect = mp_detect;
		m->desc.cpu_type = mp_cpu_type;
		m->desc.nr_counters = types[i].nr_counters;
		m->desc.default_event = types[i].default_event;
		m->desc.encode = mp_encode;
		rc = host->register_model(ctx, &m->desc, m);
		if (rc) {
			host->log(ctx, OP_LOG_ERR, "registering model %s (%s) failed: %s",
				  types[i].model_name, types[i].cpu_type, strerror(-rc));
			goto out_free;
		}
	}
	rc = host->register_stats(ctx, &mp_stats_ops, pl);
	if (rc) {
		host->log(ctx, OP_LOG_ERR, "registering the stats section failed: %s",
			  strerror(-rc));
		goto out_free;
	}
	return 0;

out_free:
	mp_plugin_fini(pl);
	return rc;
}

void mp_plugin_fini(struct mp_plugin *pl)
{
	size_t i;

	for (i = 0; pl->models && i < pl->nr_models; i++)
		if (pl->models[i].cat_loaded)
			op_events_free(&pl->models[i].cat);
	free(pl->models);
	pl->models = NULL;
	pl->nr_models = 0;
}

/* the plugin's user data: the host calls it after ext_deinit or a failed init */
static void mp_free(void *data)
{
	struct mp_plugin *pl = data;

	mp_plugin_fini(pl);
	free(pl);
}

int mp_ext_init(op_ext_t *ctx, const struct op_host *host, const char *args, const char *name,
		const struct mp_type *types, size_t nr_types, const char *cpu_type_hint)
{
	struct mp_plugin *pl;
	int rc;

	if (args && *args) {
		host->log(ctx, OP_LOG_ERR,
			  "unexpected arguments '%s': the %s plugin takes "
			  "none (force a cpu type with --cpu-type=%s)",
			  args, name, cpu_type_hint);
		return -EINVAL;
	}
	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	rc = host->set_user_data(ctx, &(struct op_user_data){ .size = sizeof(struct op_user_data),
							      .data = pl,
							      .free_func = mp_free });
	if (rc) {
		free(pl);
		return rc;
	}
	return mp_plugin_init(pl, ctx, host, name, types, nr_types);
}
