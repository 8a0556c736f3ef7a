/*
 * evpick.h - the daemon's event choice: the model that claims this CPU and
 * the events it samples, as perf_event attributes and sample-file events.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_EVPICK_H
#define OP_CORE_EVPICK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "op_events.h"
#include "perf.h"
#include "sfile.h"

struct op_options;
struct op_log;
struct ext_loader;
struct ext_registry;
struct ext_model;

struct evpick {
	const struct op_options *opts;
	struct op_log *log;
	struct ext_loader *loader;
	struct ext_registry *reg; /* the loader's, after the model plugins */
	const struct ext_model *model;
	uint32_t cpu_type;
	const char *cpu_type_name;
	struct op_events catalogue; /* events/ of the cpu type (not for timer) */
	bool have_catalogue;
	struct op_perf_attr attrs[OP_MAX_EVENTS];
	struct sfile_event events[OP_MAX_EVENTS];
	size_t nr_events;
	char model_why[640]; /* first hardware model's reason to decline */
};

/*
 * After the plugins the user asked for are loaded into @loader: load the
 * hardware-model plugins (the timer plugin if none claims the CPU), pick
 * the model with the highest detect() score, load the events catalogue of
 * its cpu type, then parse, check and encode --events (or the model's
 * default event) into @p. @p starts all zero. 0 or -errno (logged to @log).
 */
int evpick_choose(struct evpick *p, const struct op_options *o, struct op_log *log,
		  struct ext_loader *loader);
/* Free the events catalogue; @p's other results stay. */
void evpick_free(struct evpick *p);

#endif /* OP_CORE_EVPICK_H */
