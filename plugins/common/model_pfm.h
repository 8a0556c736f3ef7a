/*
 * model_pfm.h - shared code of the x86 hardware-model plugins (amd64, intel):
 * one registered model per cpu type, detection from cpuid vendor/family/model
 * plus libpfm4 PMU presence, events/ catalogue lookup, raw PERFEVTSEL
 * encoding and event -> counter placement. Compiled into each plugin (no
 * plugin depends on another); prefix mp_.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PLUGINS_MODEL_PFM_H
#define OP_PLUGINS_MODEL_PFM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "op_events.h"
#include "oprofile_sdk.h"

/* claim scores (timer: 1 as fallback, 1000 when forced to "timer") */
#define MP_SCORE_FORCED 900
#define MP_SCORE_SPECIFIC 100
#define MP_SCORE_GENERIC 50

#define MP_PERF_TYPE_RAW 4

/* One cpu type a plugin knows (static tables in amd64.c / intel.c). */
struct mp_type {
	const char *model_name; /* registered model name, e.g. "amd64-family10" */
	const char *cpu_type;   /* OProfile cpu type / events directory */
	uint32_t cpu_type_id;   /* OProfile enum value (lib/op_cpu.h) */
	/*
	 * libpfm4 PMU table(s) whose presence detect() requires, comma-separated
	 * (the first is the one the catalogue was generated from); NULL: none
	 */
	const char *pmu;
	unsigned nr_counters;      /* general-purpose counters */
	const char *default_event; /* NAME:count */
	bool amd;                  /* AMD layout: event select 11:8 -> config 35:32 */
	const char *vendor;        /* cpuid vendor string */
	int score;                 /* MP_SCORE_SPECIFIC or MP_SCORE_GENERIC */
	bool (*match)(uint32_t family, uint32_t model);
	const char *family_text; /* for messages: "AMD family 10h" */
};

struct mp_plugin;

/* Runtime state of one registered model. */
struct mp_model {
	struct mp_plugin *pl;
	const struct mp_type *t;
	struct op_model_desc desc;
	struct op_events cat;
	bool cat_loaded;
	/* events encoded since detect() last claimed the CPU: one event set */
	struct op_event_spec placed[OP_MAX_COUNTERS];
	size_t nr_placed;
	uint64_t encoded, refused;
};

struct mp_plugin {
	op_ext_t *ctx;
	const struct op_host *host;
	const char *name;
	struct mp_model *models;
	size_t nr_models;
};

/*
 * Register one model per entry of @types with @host (inside ext_init) plus a
 * stats section. Returns 0 or -errno (logged); on failure nothing is kept.
 */
int mp_plugin_init(struct mp_plugin *pl, op_ext_t *ctx, const struct op_host *host,
		   const char *name, const struct mp_type *types, size_t nr_types);
void mp_plugin_fini(struct mp_plugin *pl);

/*
 * A model plugin's whole ext_init: refuses arguments (naming --cpu-type=
 * @cpu_type_hint instead), then mp_plugin_init() on a state the host keeps
 * as the plugin's user data (freed with mp_plugin_fini; no ext_deinit).
 */
int mp_ext_init(op_ext_t *ctx, const struct op_host *host, const char *args, const char *name,
		const struct mp_type *types, size_t nr_types, const char *cpu_type_hint);

/* The model's detect() callback (exported for tests). */
int mp_detect(void *priv, const struct op_cpuinfo *ci, char *why, size_t why_len);

/* libpfm4 reports one of the PMUs of the comma-separated list @pmus present. */
bool mp_pfm_present(const char *pmus);

/*
 * The raw PERFEVTSEL config of event @code with unit mask @um and extra bits
 * @extra (OP_UM_EXTRA_*) in @t's layout. -EINVAL with a message when the
 * code or the extra bits do not fit the layout.
 */
int mp_raw_config(const struct mp_type *t, uint32_t code, uint32_t um, uint32_t extra,
		  uint64_t *config, char *err, size_t err_len);

/* Why no hardware PMU is usable here (probes perf_event_open itself). */
void mp_no_pmu_reason(char *why, size_t why_len);

#endif /* OP_PLUGINS_MODEL_PFM_H */
