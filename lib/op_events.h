/*
 * op_events.h - the events/ catalogue (`events` + `unit_masks` per CPU type,
 * OProfile's text format), event specs NAME:count[:um[:kernel[:user]]]
 * validated against it, and placement of events on counters.
 * Format facts: notes/oprofile-format.md section 5.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_EVENTS_H
#define OP_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OP_UM_MAX_ENTRIES 64
#define OP_MAX_COUNTERS 32
#define OP_EVENTS_MAX_INCLUDE_DEPTH 16

/* extra: modifiers of a unit-mask entry, encoded as OProfile does */
#define OP_UM_EXTRA_EDGE (1u << 18)
#define OP_UM_EXTRA_PEBS (1u << 19)
#define OP_UM_EXTRA_ANY (1u << 21)
#define OP_UM_EXTRA_NONE (1u << 22) /* "extra:" present, no modifier bits */
#define OP_UM_EXTRA_INV (1u << 23)
#define OP_UM_EXTRA_CMASK_SHIFT 24

/*
 * The TIMER event of CPU type "timer" (cpu-clock sampling when no hardware
 * PMU is usable): its count is the sampling period in ns. One limit for every
 * way of giving the rate (TIMER:PERIOD, timer:freq=, timer:period=, config):
 * at most 10 kHz per CPU. Without a PMU each sample costs the interrupted
 * task ~20 us, and system-wide sampling at 100 kHz locked a 2-CPU machine up.
 * Shared by the timer plugin and ophelp (op_events_timer()).
 */
#define OP_TIMER_EVENT "TIMER"
#define OP_TIMER_MAX_HZ 10000u
#define OP_TIMER_MIN_PERIOD_NS UINT64_C(100000) /* 1e9 / OP_TIMER_MAX_HZ */
#define OP_TIMER_MAX_PERIOD_NS UINT64_C(1000000000)
#define OP_TIMER_DEFAULT_HZ 4000u /* perf record's default: TIMER:250000 */
/*
 * An event's count may be a frequency instead, "<N>Hz" (TIMER:99Hz,
 * CPU_CLK_UNHALTED:99Hz): the kernel then adjusts the period to give about
 * N samples a second per CPU (perf_event_attr.freq, perf record -F N).
 * 1..OP_EVENT_MAX_HZ for every event: the timer's limit, and on a hardware
 * PMU the kernel's perf_event_max_sample_rate is about this too.
 */
#define OP_EVENT_MAX_HZ OP_TIMER_MAX_HZ

enum op_um_type { OP_UM_MANDATORY, OP_UM_BITMASK, OP_UM_EXCLUSIVE };

struct op_um_entry {
	uint32_t value;
	uint32_t extra; /* OP_UM_EXTRA_* bits; 0 when the line had no extra: */
	char *name;     /* value name (after extra:), or NULL */
	char *desc;
};

struct op_unit_mask {
	char *name; /* "a,b" for a mask merged from um:a,b */
	enum op_um_type type;
	uint32_t default_value;
	unsigned nr;
	struct op_um_entry *entries; /* nr entries, at most OP_UM_MAX_ENTRIES */
	bool used;
	bool merged;      /* built from um:a,b; entries shared with the parts */
	const char *file; /* where the header line is */
	unsigned line;
};

struct op_event {
	char *name;
	uint32_t code;
	uint32_t counter_mask; /* allowed counters; all when counters: is absent or cpuid */
	bool counters_cpuid;
	char *ext; /* ext:<feature> (e.g. "ibs_op"): no counter needed; else NULL */
	const struct op_unit_mask *um;
	uint64_t minimum;
	uint64_t maximum; /* largest count, 0 = none (catalogue files set none) */
	int filter;       /* filter:<n>, -1 when absent */
	char *desc;
	const char *file;
	unsigned line;
};

struct op_events {
	char *root;           /* the events/ root used */
	char *model;          /* e.g. "x86-64/generic" */
	unsigned nr_counters; /* 0 = unknown; set by the caller or op_events_load() */
	struct op_event *events;
	size_t nr_events, cap_events;
	struct op_unit_mask **masks;
	size_t nr_masks, cap_masks;
	char **files; /* paths read, owned (events/masks point here) */
	size_t nr_files;
};

/*
 * The events/ root: $OPROFILE_EVENTS_DIR when set and non-empty, else
 * OP_DATADIR "/events" (OP_DATADIR is defined by the build).
 */
const char *op_events_root(void);

/*
 * Load <root>/<model>/{unit_masks,events} into @c (zeroed by this call).
 * @root NULL means op_events_root(). @nr_counters: counters the CPU has
 * (0 = unknown: "too many events" is then not checked). @filter_bits: events
 * with filter:<n> whose bit n is set are dropped.
 *
 * Returns 0; -ENOENT when the model has no catalogue; -EINVAL on a parse or
 * sanity error; -ENOMEM. On error @err holds "file:line: what" (or
 * "path: what") and @c is freed.
 */
int op_events_load(struct op_events *c, const char *root, const char *model, unsigned nr_counters,
		   unsigned filter_bits, char *err, size_t err_len);

void op_events_free(struct op_events *c);

/*
 * The catalogue of CPU type "timer", built in (no events/ directory): the one
 * event TIMER, count = period in ns between OP_TIMER_MIN_PERIOD_NS and
 * OP_TIMER_MAX_PERIOD_NS, no unit mask, one counter. Free with
 * op_events_free(). Returns 0 or -ENOMEM.
 */
int op_events_timer(struct op_events *c);

/* The event called @name, or NULL. */
const struct op_event *op_events_find(const struct op_events *c, const char *name);

/* A unit-mask entry of @um with this @name, or NULL. */
const struct op_um_entry *op_um_find_name(const struct op_unit_mask *um, const char *name);

/* One validated event of a spec. */
struct op_event_spec {
	const struct op_event *ev;
	/*
	 * The period; for a frequency (freq_hz != 0) the period it stands for:
	 * 1e9 / freq_hz ns for TIMER, else 0 (a hardware event's period then
	 * varies; its sample files say count 0, as OProfile's timer mode did)
	 */
	uint64_t count;
	uint32_t freq_hz;  /* the count was given as "<N>Hz": sample at N Hz, 0 = a period */
	uint32_t um;       /* unit-mask value (the default when not given) */
	uint32_t um_extra; /* extra bits of the chosen named/matching entry */
	bool kernel, user; /* default 1, 1 */
	int counter;       /* set by op_events_allocate(); -1 for ext: events */
};

/*
 * The count field "<N>Hz" (case-insensitive "hz", decimal N): true and *@hz
 * = N when @s has that form with N in 1..OP_EVENT_MAX_HZ; false with *@hz =
 * 0 when @s is not a frequency, false with *@hz = UINT32_MAX when it is one
 * out of range or not a number.
 */
bool op_parse_event_freq(const char *s, uint32_t *hz);

/*
 * Parse and validate one NAME:count[:um[:kernel[:user]]] against @c; count
 * may be "<N>Hz" (see op_parse_event_freq and struct op_event_spec). Numbers
 * are base 0 (0x.. hex, 0.. octal); a non-numeric um is a value name.
 * Returns 0 or -EINVAL with a message in @err: unknown event (with close
 * names), missing or bad count, count below the event's minimum, unit mask
 * not allowed (with the allowed values), kernel/user flag not 0 or 1, count
 * above the event's maximum (when it has one).
 */
int op_parse_event_spec(const struct op_events *c, const char *spec, struct op_event_spec *out,
			char *err, size_t err_len);

/*
 * Parse a comma-separated list of specs into @out (at most @max). A trailing
 * comma is allowed. Fails on an empty item, the same event and unit mask
 * given twice, and when more counter events are given than the CPU has
 * ("Too many events specified: CPU only has N counters."). Then places the
 * events on counters (op_events_allocate()). Returns 0 and sets @nr.
 */
int op_parse_event_list(const struct op_events *c, const char *list, struct op_event_spec *out,
			size_t max, size_t *nr, char *err, size_t err_len);

/*
 * Assign each counter event a distinct counter allowed by its counters: mask
 * (bipartite matching, so an event restricted to one counter is placed even
 * when listed after a flexible one). ext: events get counter -1.
 * @nr_counters 0 means OP_MAX_COUNTERS. Returns 0, or -EINVAL naming an
 * event that cannot be placed.
 */
int op_events_allocate(struct op_event_spec *specs, size_t n, unsigned nr_counters, char *err,
		       size_t err_len);

#endif /* OP_EVENTS_H */
