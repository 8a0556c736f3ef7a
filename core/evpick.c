/*
 * evpick.c - the daemon's event choice: CPU identification, the
 * hardware-model plugins and the model whose detect() scores highest (the
 * timer plugin as fallback), the events catalogue of its cpu type, then
 * --events (or the model's default) parsed, checked and encoded into
 * perf_event attributes and sample-file event descriptions.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "evpick.h"
#include "ext.h"
#include "log.h"
#include "op_cpu.h"
#include "options.h"
#include "session.h"

static bool evpick_pmu_usable(void)
{
	struct perf_event_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.disabled = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void evpick_cpuinfo(const char *proc_root, const char *forced, struct op_cpuinfo *ci)
{
	session_cpuinfo(proc_root, ci);
	ci->forced_cpu_type = forced;
	ci->pmu_usable = evpick_pmu_usable();
}

/* the registered model with the highest detect() score, or NULL */
static const struct ext_model *evpick_pick_model(struct evpick *p, const struct op_cpuinfo *ci,
						 bool quiet)
{
	const struct ext_model *best = NULL;
	int best_score = 0;
	size_t i;

	for (i = 0; i < p->reg->nr_models; i++) {
		const struct ext_model *m = &p->reg->models[i];
		char why[512] = "";
		int score = m->desc.detect ? m->desc.detect(m->priv, ci, why, sizeof(why)) : 0;

		if (score > best_score) {
			best = m;
			best_score = score;
		} else if (score <= 0 && why[0] && !quiet) {
			log_info(p->log, "model %s declines this CPU: %s", m->desc.name, why);
			if (!p->model_why[0])
				snprintf(p->model_why, sizeof(p->model_why),
					 "model %s declines "
					 "this CPU: %s",
					 m->desc.name, why);
		}
	}
	return best;
}

/* user turned plugin @name off in the config file (plugins.NAME.enabled = false)? */
static bool evpick_plugin_disabled(const struct evpick *p, const char *name)
{
	return options_plugin_disabled(p->opts, name);
}

static const char *const evpick_models[] = { "amd64", "intel" };
#define EVPICK_NR_MODELS (sizeof(evpick_models) / sizeof(evpick_models[0]))

/*
 * Hardware-model plugins are probed on every start: each one present in the
 * plugin directory, not loaded already (--ext-feature, a plugins entry) and
 * not disabled (plugins.NAME.enabled = false) is loaded; its models'
 * detect() decide. A missing file is not an error. Returns the ones it
 * loaded, bit i for evpick_models[i] (evpick_unload_models).
 */
static unsigned evpick_load_models(struct evpick *p)
{
	char path[PATH_MAX];
	unsigned probed = 0;
	size_t i;

	for (i = 0; i < EVPICK_NR_MODELS; i++) {
		const char *name = evpick_models[i];

		if (ext_plugin(p->loader, name) || evpick_plugin_disabled(p, name))
			continue;
		snprintf(path, sizeof(path), "%s/%s.so", p->opts->plugin_dir, name);
		if (access(path, F_OK))
			continue;
		if (ext_load(p->loader, name, "", "default") == 0)
			probed |= 1u << i;
		else
			log_err(p->log,
				"warning: hardware-model plugin %s could not be loaded from %s "
				"(see the log)",
				name, p->opts->plugin_dir);
	}
	return probed;
}

/* the registered model named @name (registry-owned), or NULL */
static const struct ext_model *evpick_find_model(const struct evpick *p, const char *name)
{
	size_t i;

	for (i = 0; name && i < p->reg->nr_models; i++)
		if (!strcmp(p->reg->models[i].desc.name, name))
			return &p->reg->models[i];
	return NULL;
}

/*
 * The model plugins evpick loaded itself (@probed) only to ask their
 * detect(), and whose models lost, go again: they would keep libpfm4 mapped
 * for the daemon's life (2.1 MB RSS, half of it its relocated event tables)
 * for nothing. One the user asked for stays, as does the picked model's; so
 * does one that registered anything else (ext_unload refuses). The registry
 * closes up behind an unloaded plugin: the picked model is found again.
 */
static void evpick_unload_models(struct evpick *p, unsigned probed)
{
	const char *owner = p->model ? ext_name(p->model->owner) : NULL;
	const char *picked = p->model ? p->model->desc.name : NULL;
	char why[128];
	size_t i;

	snprintf(why, sizeof(why), "only probed, model %s picked", picked ? picked : "(none)");
	for (i = 0; i < EVPICK_NR_MODELS; i++)
		if ((probed & (1u << i)) && !(owner && !strcmp(owner, evpick_models[i])))
			ext_unload(p->loader, evpick_models[i], why);
	p->reg = ext_registry(p->loader);
	p->model = evpick_find_model(p, picked);
}

/*
 * NAME[:count[:um[:kernel[:user]]]] -> req, count may be "<N>Hz" (*@freq_hz =
 * N, else 0); strings point into @buf
 */
static int evpick_parse_event(char *buf, struct op_event_req *req, uint32_t *freq_hz, char *err,
			      size_t err_len)
{
	char *field[5] = { 0 }, *p = buf, *end;
	unsigned long long v;
	int n = 0, i;

	memset(req, 0, sizeof(*req));
	req->size = sizeof(*req);
	req->kernel = req->user = true;
	*freq_hz = 0;
	while (n < 5) {
		field[n++] = p;
		p = strchr(p, ':');
		if (!p)
			break;
		*p++ = 0;
	}
	if (p) {
		snprintf(err, err_len,
			 "event \"%s\": too many ':' fields - expected "
			 "NAME[:count[:unitmask[:kernel[:user]]]]",
			 buf);
		return -EINVAL;
	}
	if (!field[0][0]) {
		snprintf(err, err_len,
			 "empty event name - expected NAME[:count[:unitmask[:kernel[:user]]]]");
		return -EINVAL;
	}
	req->name = field[0];
	for (i = 1; i < n; i++) {
		if (!field[i][0])
			continue;
		if (i == 1 && op_parse_event_freq(field[i], freq_hz)) {
			/* as op_parse_event_spec: TIMER's period in ns, else none */
			req->count =
				strcmp(req->name, OP_TIMER_EVENT) ? 0 : 1000000000ull / *freq_hz;
			continue;
		}
		if (i == 1 && *freq_hz) {
			snprintf(err, err_len, "event %s: frequency \"%s\" is not 1..%uHz",
				 req->name, field[i], OP_EVENT_MAX_HZ);
			return -EINVAL;
		}
		errno = 0;
		v = strtoull(field[i], &end, 0);
		if (errno || *end) {
			snprintf(err, err_len, "event %s: field %d \"%s\" is not a number",
				 req->name, i + 1, field[i]);
			return -EINVAL;
		}
		if (i == 1) {
			req->count = v;
		} else if (i == 2) {
			if (v > UINT32_MAX)
				goto out_range;
			req->um = (uint32_t)v;
		} else {
			if (v > 1) {
				snprintf(err, err_len,
					 "event %s: the %s flag must be 0 or 1, found \"%s\"",
					 req->name, i == 3 ? "kernel" : "user", field[i]);
				return -EINVAL;
			}
			if (i == 3)
				req->kernel = v;
			else
				req->user = v;
		}
	}
	return 0;

out_range:
	snprintf(err, err_len, "event %s: unit mask \"%s\" does not fit 32 bits", req->name,
		 field[2]);
	return -EINVAL;
}

/* the catalogue's smallest count of event @name, 0 if none */
static uint64_t spec_minimum(const struct op_events *c, const char *name)
{
	const struct op_event *ev = op_events_find(c, name);

	return ev ? ev->minimum : 0;
}

/* field @i (0: name, 3: kernel) of NAME[:count[:um[:kernel[:user]]]] is given, non-empty */
static bool evpick_event_field_given(const char *item, int i)
{
	const char *p = item;

	while (i-- > 0) {
		p = strchr(p, ':');
		if (!p)
			return false;
		p++;
	}
	return *p && *p != ':';
}

/*
 * A user the kernel will not give kernel samples (perf_event_paranoid 2 or
 * more, not root) profiling their own command or processes: as perf record
 * does, an event whose kernel field was not given samples user space only,
 * where asking for the kernel would make the start fail.
 */
static bool evpick_kernel_refused(const struct evpick *p)
{
	if (geteuid() == 0 || (p->opts->mode != OP_MODE_LAUNCH && p->opts->mode != OP_MODE_PID))
		return false;
	return perf_paranoid() >= 2;
}

/*
 * --frequency=HZ without --events: the model's default event, "NAME:count..."
 * with its count replaced by "<HZ>Hz", into @buf. A fleet config so sets
 * one rate whatever the model (TIMER here, CPU_CLK_UNHALTED on a PMU).
 */
static int evpick_default_at(const struct evpick *p, const char *def, char *buf, size_t len)
{
	size_t name = strcspn(def, ":");
	const char *rest = def[name] ? strchr(def + name + 1, ':') : NULL;
	int n;

	n = snprintf(buf, len, "%.*s:%uHz%s", (int)name, def, p->opts->frequency, rest ? rest : "");
	if (n < 0 || (size_t)n >= len) {
		log_err(p->log, "model %s: default event \"%s\" is too long", p->model->desc.name,
			def);
		return -EINVAL;
	}
	return 0;
}

static int evpick_choose_events(struct evpick *p)
{
	const struct ext_model *m = p->model;
	const char *spec = p->opts->events_spec ? p->opts->events_spec : m->desc.default_event;
	char *list, *item, *save = NULL;
	bool user_only_said = false;
	char err[512], at_freq[256];
	int rc = 0;

	if (!spec || !*spec) {
		log_err(p->log, "model %s has no default event: give --events=NAME:count",
			m->desc.name);
		return -EINVAL;
	}
	if (p->opts->frequency && p->opts->events_spec) {
		log_err(p->log,
			"--frequency=%u and --events=%s both given: give the rate in the event "
			"(NAME:%uHz) or drop --events",
			p->opts->frequency, p->opts->events_spec, p->opts->frequency);
		return -EINVAL;
	}
	if (p->opts->frequency) {
		rc = evpick_default_at(p, spec, at_freq, sizeof(at_freq));
		if (rc)
			return rc;
		spec = at_freq;
		log_info(p->log, "default event at --frequency=%u: %s", p->opts->frequency, spec);
	}
	if (!m->desc.encode) {
		log_err(p->log, "model %s cannot encode events (no encode callback)", m->desc.name);
		return -EINVAL;
	}
	list = strdup(spec);
	if (!list)
		return -ENOMEM;
	for (item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		struct op_event_req req;
		struct op_perf_attr *attr = &p->attrs[p->nr_events];
		struct sfile_event *se;
		char item_copy[256];
		uint32_t freq_hz;
		uint64_t count;
		size_t i;

		if (p->nr_events == OP_MAX_EVENTS) {
			log_err(p->log, "--events: more than %d events - give fewer", OP_MAX_EVENTS);
			rc = -EINVAL;
			break;
		}
		snprintf(item_copy, sizeof(item_copy), "%s", item);
		rc = evpick_parse_event(item, &req, &freq_hz, err, sizeof(err));
		if (rc) {
			log_err(p->log, "--events=%s: %s", spec, err);
			break;
		}
		if (strlen(req.name) > OP_EVENT_NAME_MAX || strpbrk(req.name, "./ ")) {
			log_err(p->log,
				"--events: event name \"%s\" must be at most %d characters without "
				"'.', '/' or spaces",
				req.name, OP_EVENT_NAME_MAX);
			rc = -EINVAL;
			break;
		}
		if (p->have_catalogue) {
			/* the catalogue validates name, count, unit mask and flags */
			struct op_event_spec spec;

			rc = op_parse_event_spec(&p->catalogue, item_copy, &spec, err, sizeof(err));
			if (rc) {
				log_err(p->log,
					"--events: %s (cpu type %s; ophelp lists the events)", err,
					p->cpu_type_name);
				break;
			}
			req.code = spec.ev->code;
			req.um = spec.um;
			req.count = spec.count;
			freq_hz = spec.freq_hz;
			req.kernel = spec.kernel;
			req.user = spec.user;
			req.counter_mask = spec.ev->counter_mask;
		}
		if (req.kernel && !evpick_event_field_given(item_copy, 3) &&
		    evpick_kernel_refused(p)) {
			if (!user_only_said)
				log_err(p->log,
					"note: perf_event_paranoid is 2 or more and oprofiled is not "
					"root: sampling user space only (give NAME:count:um:1:1 to ask "
					"for kernel samples too, as root or with CAP_PERFMON)");
			user_only_said = true;
			req.kernel = false;
		}
		for (i = 0; i < p->nr_events; i++) {
			if (!strcmp(p->events[i].name, req.name) && p->events[i].um == req.um) {
				log_err(p->log,
					"--events: %s with unit mask %u is given twice - give it once",
					req.name, req.um);
				rc = -EINVAL;
				goto out;
			}
		}
		err[0] = 0;
		/*
		 * A frequency: the model encodes the event as for a period (its
		 * smallest valid one when the frequency stands for none), then the
		 * kernel is asked for freq_hz samples a second instead. So every
		 * model, the timer's and the libpfm4 ones, honours "<N>Hz" alike.
		 */
		count = req.count;
		if (freq_hz && !req.count)
			req.count = p->have_catalogue && spec_minimum(&p->catalogue, req.name) ?
					    spec_minimum(&p->catalogue, req.name) :
					    1;
		rc = m->desc.encode(m->priv, &req, attr, err, sizeof(err));
		req.count = count;
		if (!rc && freq_hz) {
			attr->freq = true;
			attr->sample_period = freq_hz;
		}
		if (rc) {
			/* a hardware event asked for while the fallback took over: say why */
			log_err(p->log, "event %s cannot be used with model %s: %s%s%s", req.name,
				m->desc.name, err[0] ? err : strerror(rc < 0 ? -rc : EINVAL),
				p->model_why[0] ? "; hardware " : "", p->model_why);
			rc = rc < 0 ? rc : -EINVAL;
			break;
		}
		se = &p->events[p->nr_events];
		snprintf(se->name, sizeof(se->name), "%s", req.name);
		se->event = req.code;
		se->um = req.um;
		se->count = req.count;
		p->nr_events++;
	}
out:
	free(list);
	if (!rc && p->nr_events == 0 && !p->reg->no_event_ok) {
		log_err(p->log, "--events=%s: no event given", spec);
		rc = -EINVAL;
	}
	return rc;
}

int evpick_choose(struct evpick *p, const struct op_options *o, struct op_log *log,
		  struct ext_loader *loader)
{
	struct op_cpuinfo ci;
	const char *proc_root = o->proc_root ? o->proc_root : "/proc";
	unsigned probed;
	uint32_t id = 0;
	int rc;

	p->opts = o;
	p->log = log;
	p->loader = loader;
	probed = evpick_load_models(p);
	p->reg = ext_registry(p->loader);
	evpick_cpuinfo(proc_root, p->opts->cpu_type, &ci);
	p->model = evpick_pick_model(p, &ci, true);
	if (!p->model && !ext_plugin(p->loader, "timer") && !evpick_plugin_disabled(p, "timer")) {
		if (ext_load(p->loader, "timer", "", "default") == 0)
			p->reg = ext_registry(p->loader);
	}
	p->model = evpick_pick_model(p, &ci, false);
	evpick_unload_models(p, probed);
	if (!p->model) {
		if (p->reg->no_event_ok && !p->opts->events_spec)
			return 0;
		log_err(p->log,
			"no hardware model claims this CPU (%s family %u model %u, PMU %s) and the "
			"timer plugin is not available in %s - install the plugins or set "
			"--plugin-dir",
			ci.vendor[0] ? ci.vendor : "unknown", ci.family, ci.model,
			ci.pmu_usable ? "usable" : "not usable", p->opts->plugin_dir);
		return -ENOENT;
	}
	if (p->model->desc.cpu_type)
		p->cpu_type_name = p->model->desc.cpu_type(p->model->priv, &id);
	if (!p->cpu_type_name)
		p->cpu_type_name = "unknown";
	p->cpu_type = id;
	log_info(p->log, "model %s, cpu type %s (%u)", p->model->desc.name, p->cpu_type_name, id);
	if (op_cpu_has_events((int)id)) {
		char err[512] = "";

		rc = op_events_load(&p->catalogue, NULL, p->cpu_type_name,
				    p->model->desc.nr_counters, 0, err, sizeof(err));
		if (rc) {
			log_err(p->log,
				"events catalogue of cpu type %s: %s - check OPROFILE_EVENTS_DIR "
				"or the installation",
				p->cpu_type_name, err[0] ? err : strerror(-rc));
			return rc;
		}
		p->have_catalogue = true;
	}
	rc = evpick_choose_events(p);
	if (rc && p->opts->events_origin)
		log_err(p->log,
			"%s: events: \"%s\" cannot be used (see above) - fix the config file",
			p->opts->events_origin, p->opts->events_spec);
	return rc;
}

/* the catalogue is the only thing evpick_choose allocates */
void evpick_free(struct evpick *p)
{
	if (p->have_catalogue)
		op_events_free(&p->catalogue);
	p->have_catalogue = false;
}
