/*
 * oprofile_sdk.h - the plugin ABI of oprofiled (SDK v1.2).
 *
 * The only header a plugin needs. A plugin is a shared object that exports
 * one const data symbol, OP_EXT_SYMBOL, of type struct op_ext_descriptor.
 * oprofiled checks the descriptor before it runs any plugin code, then calls
 * ext_init() with a host service table through which the plugin registers
 * everything it provides.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef OPROFILE_SDK_H
#define OPROFILE_SDK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * VERSIONING RULES
 *
 * - OP_SDK_MAJOR changes when anything already published changes meaning,
 *   size or position. A plugin loads only into an oprofiled of the same major.
 * - OP_SDK_MINOR grows when members are appended to a struct or new host
 *   services are appended to struct op_host. A plugin built for minor M loads
 *   into any oprofiled whose minor is >= M; an older plugin keeps loading into
 *   a newer daemon.
 * - Every struct that crosses the boundary starts with a uint32_t `size`
 *   that the writer sets to sizeof(its struct). The reader copies
 *   min(size, sizeof(own struct)) bytes into a zeroed struct of its own, so
 *   members a side does not know about read as zero.
 * - Before calling a host service that was added after v1.0, a plugin checks
 *   OP_HOST_HAS(host, member).
 * - Reserved members must be zero; oprofiled refuses a descriptor whose
 *   reserved slots are not, so that they can be given meaning later.
 * - Frozen sizes are pinned by tests/abi/ and listed below as
 *   OP_*_SIZE_V1_0 (what a v1.0 plugin passes), OP_*_SIZE_V1_1 and
 *   OP_*_SIZE_V1_2 (the structs new in 1.2, and op_host); on LP64
 *   targets the header checks them itself (_Static_assert).
 *
 * WHAT 1.1 ADDED (a 1.0 plugin keeps loading and working unchanged)
 *
 * - host->set_user_data(): one per-plugin state with a free function that
 *   the host calls after ext_deinit (or after a failed ext_init), so a
 *   plugin needs no context -> state table of its own.
 * - op_source_desc.attr_ptr: the perf attr by pointer (it has its own size),
 *   so that struct op_perf_attr can grow; the embedded attr is the 1.0 way.
 * - op_sfile_ops.get_file is optional (the host never called it).
 * - host->map_pc() writes at most out->size bytes.
 * - OP_EXT_DEFINE(), one declare macro with designated initializers.
 * - OP_ESCAPE_FIRST_PLUGIN / OP_ESCAPE_MAX name the plugin escape range.
 *
 * WHAT 1.2 ADDED (1.0 and 1.1 plugins keep loading and working unchanged)
 *
 * - host->register_proc_hook(): the task records buffer sync reads (COMM
 *   and EXEC, FORK, EXIT, MMAP, including the ones synthesized from /proc
 *   for processes that ran before the start), in record order, never per
 *   sample (struct op_proc_event).
 * - host->register_session_hook(): START, DUMP, ROTATED, STOP of the
 *   session, on the daemon's main thread (struct op_session_event).
 * - host->register_anon_resolver(): a sample whose pc lies in an anon
 *   (non-file) mapping may be claimed by a plugin, which names the image
 *   (a cookie) and the key (file offset) it lands at: JIT code converted
 *   into ELF images (plugins/jit). HOT.
 * - THREADS below: which host services a plugin's own thread may call.
 *
 * CALLING RULES
 *
 * - Actions return 0 or a negative errno value. Predicates return bool.
 * - Every registration is owned by the plugin context (op_ext_t). If
 *   ext_init() returns non-zero, every registration it made is rolled back
 *   and ext_deinit() is not called.
 * - The register_* services work only while ext_init() runs (-EPERM later).
 *   The host copies each payload struct (size rule above) and the strings its
 *   name members point to; other pointers (callbacks, default_event, priv)
 *   must stay valid until ext_deinit().
 * - The host table passed to ext_init() stays valid until ext_deinit(). Keep
 *   the pointer and call through it (host->emit(...)); do not cache its
 *   function pointers, the host binds some of them after loading plugins.
 * - oprofiled reads the descriptor's version, size and flags from the file
 *   and refuses a mismatch before dlopen; it finds the descriptor as ld.so
 *   finds symbols (program headers, dynamic segment, DT_GNU_HASH or DT_HASH),
 *   so a file without section headers is checked the same way. The rest
 *   (name, reserved slots, ext_init) is checked after dlopen, when ELF
 *   constructors have already run. So keep constructors empty: do
 *   everything in ext_init().
 * - A registration's name (escape, model, source, hook) is 1..OP_EXT_NAME_MAX
 *   characters; a counter's name also becomes part of sample file names and
 *   is 1..OP_EXT_NAME_MAX of [A-Za-z0-9_-]. A payload's size must be at
 *   least sizeof(uint32_t) and at most the host's sizeof of that struct.
 * - Two plugins registering the same escape-code name or number, the same
 *   hardware model name or the same counter name is an error (-EEXIST); the
 *   log names both plugins.
 * - Every callback runs on the daemon's main thread (see THREADS below).
 * - Callbacks marked HOT run once per sample. They must not allocate memory,
 *   make system calls or block. Host services marked HOT obey the same rule.
 *
 * --- issue 20: per-process split key ---
 * WHAT 1.3 ADDED (1.0 - 1.2 plugins keep loading and working unchanged)
 *
 * - host->register_split() and host->set_split_key(): a plugin provides a
 *   --separate word (cgroup) and, from its proc hook, each process's key;
 *   the host keeps the key with the process and puts it in the sample-file
 *   set's key and name while that separation is on.
 * - op_trans_view.split: the key's interned number in the trans context.
 *
 * THREADS (SDK 1.2)
 *
 * A plugin may start threads of its own; it joins them in ext_deinit. Start
 * them at the session hook's START event, not in ext_init: oprofiled
 * --daemonize forks after ext_init, and threads do not survive a fork.
 * Such a thread may call only these host services:
 *   log, vlog          (one line a call, whole; rate-limited as always)
 *   cookie_intern      (serialised with the daemon's own interning; the
 *                       returned cookie may then be handed to the main
 *                       thread, e.g. through the plugin's anon resolver)
 *   cookie_path        (for a cookie that exists: entries never move)
 *   session_dir, proc_root (constant strings while the plugin is loaded;
 *                       session_dir is the session's top directory, which
 *                       a rotation does not move)
 *   config_string, config_int64, config_bool (read-only after start-up)
 * Every other service (registrations, map_pc, emit, log_sample, the
 * sample_file_* calls, set_user_data) belongs to the daemon's thread and
 * to the callback it is documented for. Callbacks (hooks, handlers,
 * resolvers, print_stats) always run on the daemon's thread; a plugin that
 * shares state between them and its own thread locks it itself.
 */

#define OP_SDK_MAJOR 1
#define OP_SDK_MINOR 3 /* issue 20: per-process split key */

/* Name of the exported descriptor symbol. */
#define OP_EXT_SYMBOL "oprofile_ext_v1"

typedef struct op_ext op_ext_t;                 /* a loaded plugin's context */
typedef struct op_sfile op_sfile_t;             /* one sample-file set (a context) */
typedef struct op_sample_file op_sample_file_t; /* one open sample file */
typedef struct op_emit op_emit_t;               /* event-buffer writer */
typedef uint32_t op_cookie_t;                   /* interned image path; 0 = none */

struct op_host;

/* ------------------------------------------------------------------ */
/* Descriptor                                                          */
/* ------------------------------------------------------------------ */

enum op_ext_flags {
	/* the plugin may be the only source of samples (no core event needed) */
	OP_EXT_F_NO_EVENT_OK = 1u << 0,
};

/*
 * What oprofiled checks before calling ext_init, refusing the plugin with a
 * message (expected, found, what to do) otherwise:
 *   - the file <plugin dir>/<name>.so is a regular file (or a symlink that
 *     stays inside the plugin dir), and neither it nor its directory is
 *     writable by group or others (nor owned by anyone but root when
 *     oprofiled runs as root);
 *   - when oprofiled runs as root, every directory above the plugin
 *     directory, up to /, is owned by root and writable by root alone (no
 *     group/other write; a root-owned sticky directory such as /tmp is
 *     passed through when the entry in it is root's);
 *   - the file is opened once, without following symlinks, every check is
 *     made on that open file, and that file is what gets loaded (dlopen of
 *     /proc/self/fd/N: /proc must be mounted);
 *   - abi_major == OP_SDK_MAJOR and abi_minor <= the daemon's OP_SDK_MINOR;
 *   - size >= OP_EXT_DESCRIPTOR_SIZE_V1_0 (and not beyond the symbol);
 *   - reserved[] all NULL, no unknown flags, ext_init set;
 *   - name equals the file stem, and no plugin of that name is loaded yet.
 * Unlike the payload structs, the descriptor starts with the version and
 * has its size third.
 */
struct op_ext_descriptor {
	uint32_t abi_major;  /* OP_SDK_MAJOR the plugin was built with */
	uint32_t abi_minor;  /* OP_SDK_MINOR the plugin was built with */
	uint32_t size;       /* sizeof(struct op_ext_descriptor) as built */
	uint32_t flags;      /* enum op_ext_flags */
	const char *name;    /* must equal the file stem: "ibs" for ibs.so */
	const char *version; /* the plugin's own version string */
	const char *summary; /* one line for --list-plugins */
	/*
	 * Called once after the descriptor was accepted. @args is the text after
	 * the first ':' of --ext-feature=NAME:ARGS (or plugins.NAME.args from the
	 * config file); "" when none was given, never NULL. Returns 0 or -errno;
	 * on failure the plugin should log why through host->log first.
	 */
	int (*ext_init)(op_ext_t *ctx, const struct op_host *host, const char *args);
	/*
	 * Optional. Called at shutdown after the last sync; not after a failed
	 * init. The plugin's user data (host->set_user_data) is freed after it.
	 */
	void (*ext_deinit)(op_ext_t *ctx);
	void *reserved[6]; /* must be NULL */
};

#define OP_EXT_DESCRIPTOR_SIZE_V1_0 104

/* Plugin names (and so file stems): 1..64 of [A-Za-z0-9_-]. */
#define OP_EXT_NAME_MAX 64

/*
 * Define the descriptor. Use once per plugin, at file scope, with the
 * members as designated initializers (version, size and the reserved slots
 * are filled in):
 *   OP_EXT_DEFINE(.name = "timer", .version = "1.0", .summary = "cpu-clock sampling",
 *                 .ext_init = timer_init);
 * Add .flags = OP_EXT_F_NO_EVENT_OK or .ext_deinit = ... as needed.
 */
/* clang-format off */
#define OP_EXT_DEFINE(...)                                                               \
	__attribute__((visibility("default"))) extern const struct op_ext_descriptor \
		oprofile_ext_v1;                                                      \
	const struct op_ext_descriptor oprofile_ext_v1 = {                            \
		.abi_major = OP_SDK_MAJOR,                                            \
		.abi_minor = OP_SDK_MINOR,                                            \
		.size = sizeof(struct op_ext_descriptor),                             \
		__VA_ARGS__                                                           \
	}

/* The 1.0 spellings, kept so that 1.0 sources still build: use OP_EXT_DEFINE. */
#define OP_EXT_DECLARE(NAME, VERSION, SUMMARY, INIT, DEINIT)                      \
	OP_EXT_DEFINE(.name = (NAME), .version = (VERSION), .summary = (SUMMARY),     \
		      .ext_init = (INIT), .ext_deinit = (DEINIT))
#define OP_EXT_DECLARE_FLAGS(NAME, VERSION, SUMMARY, INIT, DEINIT, FLAGS)          \
	OP_EXT_DEFINE(.name = (NAME), .version = (VERSION), .summary = (SUMMARY),     \
		      .ext_init = (INIT), .ext_deinit = (DEINIT), .flags = (FLAGS))
/* clang-format on */

/* ------------------------------------------------------------------ */
/* Data the host hands to plugins                                      */
/* ------------------------------------------------------------------ */

/* cpumode of a sample, as in perf_event_header.misc & 7 */
enum op_cpumode {
	OP_CPUMODE_UNKNOWN = 0,
	OP_CPUMODE_KERNEL = 1,
	OP_CPUMODE_USER = 2,
	OP_CPUMODE_HYPERVISOR = 3,
	OP_CPUMODE_GUEST_KERNEL = 4,
	OP_CPUMODE_GUEST_USER = 5,
};

/* perf's callchain context markers (PERF_CONTEXT_*) */
#define OP_CONTEXT_HV ((uint64_t)-32)
#define OP_CONTEXT_KERNEL ((uint64_t)-128)
#define OP_CONTEXT_USER ((uint64_t)-512)
#define OP_CONTEXT_GUEST ((uint64_t)-2048)
#define OP_CONTEXT_MAX ((uint64_t)-4095)

/*
 * A decoded PERF_RECORD_SAMPLE. Pointers stay valid only for the duration of
 * the callback they are passed to.
 */
struct op_perf_sample {
	uint32_t size;
	uint16_t misc;    /* perf_event_header.misc */
	uint16_t cpumode; /* enum op_cpumode */
	uint64_t id;      /* PERF_SAMPLE_IDENTIFIER */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint32_t source; /* index of the event source (see register_source) */
	uint64_t period;
	uint64_t addr; /* PERF_SAMPLE_ADDR if requested, else 0 */
	uint64_t nr_callchain;
	const uint64_t *callchain; /* nr_callchain entries, with OP_CONTEXT_* markers */
	uint32_t raw_size;
	const void *raw; /* PERF_SAMPLE_RAW payload (raw_size bytes), or NULL */
};

/* Where a PC lies once buffer sync has mapped it. */
struct op_pc_map {
	uint32_t size;
	int32_t in_kernel;   /* 1 kernel/module, 0 user, -1 unknown */
	op_cookie_t cookie;  /* image; 0 if no mapping covered the pc */
	uint64_t offset;     /* key: file offset, or pc - kernel image start */
	uint64_t anon_start; /* start of an anon region, else 0 */
	uint64_t anon_end;   /* inclusive end of an anon region, else 0 */
};

/*
 * The trans stage's current context, read-only for plugins. Valid only inside
 * the callback it is passed to.
 */
struct op_trans_view {
	uint32_t size;
	int32_t tgid, tid, cpu; /* -1 when unknown */
	int32_t in_kernel;      /* 1, 0, or -1 when unknown */
	op_cookie_t app_cookie; /* the application (first component of the name) */
	op_cookie_t cookie;     /* the image being sampled */
	uint32_t counter;       /* counter of the last sample pair */
	uint64_t pc;            /* last sample's key (offset in image) */
	uint64_t anon_start, anon_end;
	op_sfile_t *sfile; /* the current sample-file set, or NULL */
	/* --- issue 20: per-process split key --- */
	/*
	 * SDK 1.3: the split key of the sample's process (host->set_split_key)
	 * while --separate names its split, else 0. Copy the view with the size
	 * rule and the split goes along (log_sample lands in the same split).
	 * It is a cookie of the host's table: host->cookie_path names the key
	 * (the string given to set_split_key); equal keys, equal numbers.
	 */
	uint32_t split;
};

/* ------------------------------------------------------------------ */
/* Registration payloads                                               */
/* ------------------------------------------------------------------ */

/*
 * A sink the host gives to print_stats. Either callback may be NULL (a
 * consumer that wants only counters or only text): check before calling.
 * The sink and its strings are valid only during print_stats.
 */
struct op_stats_sink {
	uint32_t size;
	void *opaque; /* the host's; do not touch */
	/* one named counter: @name is [a-z0-9_], unique within the section */
	void (*counter)(const struct op_stats_sink *sink, const char *name, uint64_t value);
	/* one free-form line of the section (no trailing newline needed) */
	void (*text)(const struct op_stats_sink *sink, const char *line);
};

struct op_stats_ops {
	uint32_t size;
	/*
	 * Required. Called when the daemon prints statistics (periodically, on
	 * dump, at exit), never while another callback of the plugin runs.
	 */
	void (*print_stats)(void *priv, const struct op_stats_sink *sink);
};

/*
 * Escape codes: a plugin adds record kinds to the event buffer between buffer
 * sync and trans. Codes below OP_ESCAPE_FIRST_PLUGIN are the core's; a plugin
 * registers codes OP_ESCAPE_FIRST_PLUGIN..OP_ESCAPE_MAX (both included). It
 * emits them (host->emit) from a sample hook or a source callback; trans
 * calls the handler when it meets the code.
 */
#define OP_ESCAPE_FIRST_PLUGIN 32
#define OP_ESCAPE_MAX 255

struct op_escape_desc {
	uint32_t size;
	uint32_t code;    /* wanted code (OP_ESCAPE_FIRST_PLUGIN..OP_ESCAPE_MAX), 0: allocate one */
	const char *name; /* unique, e.g. "ibs-op-sample" */
	uint32_t min_args; /* the emitter writes at least this many u64 words */
	uint32_t max_args; /* and at most this many (a length word precedes them) */
	/*
	 * HOT. @t is the current context (the sample that preceded the code, if
	 * any). Return 0, or -EINVAL for a malformed record: trans then counts it
	 * as incomplete and moves on.
	 */
	int (*handler)(void *priv, const struct op_trans_view *t, const uint64_t *args,
		       uint32_t nargs);
};

/*
 * Per-sfile handlers: a plugin that owns sample files of its own (call-graph
 * arcs, derived events) attaches private state to every sample-file set.
 */
struct op_sfile_ops {
	uint32_t size;
	/*
	 * Optional. A new sample-file set was created; set *sf_priv (may stay
	 * NULL). Return 0 or -errno: a failure is logged and the set is used
	 * anyway, with whatever *sf_priv holds (so leave it NULL on failure).
	 */
	int (*create)(void *priv, op_sfile_t *sf, void **sf_priv);
	/*
	 * Optional. @to is a copy of @from (same context, another image).
	 * Reserved: oprofiled v1.0 never calls it (sets are created, not copied).
	 */
	int (*dup)(void *priv, op_sfile_t *to, void **to_priv, const op_sfile_t *from,
		   void *from_priv);
	/*
	 * Optional. The set is evicted or the daemon stops: close every file it
	 * opened and free @sf_priv. The return value is ignored; log failures.
	 */
	int (*close)(void *priv, op_sfile_t *sf, void *sf_priv);
	/* Optional. Flush the set's files to disk (msync); return value ignored. */
	int (*sync)(void *priv, op_sfile_t *sf, void *sf_priv);
	/*
	 * Optional, and never called by oprofiled (1.0 required it, 1.1 does
	 * not): a plugin opens its files from its own escape handlers with
	 * host->sample_file_open. Reserved for a host that asks a plugin for
	 * the file of @counter in context @t (@is_cg: a call-graph file).
	 */
	op_sample_file_t *(*get_file)(void *priv, op_sfile_t *sf, void *sf_priv,
				      const struct op_trans_view *t, uint32_t counter, bool is_cg);
};

/* What sample_file_open creates. Naming and header are the host's business. */
struct op_file_spec {
	uint32_t size;
	uint32_t counter;         /* a core counter or one from register_counter */
	bool is_cg;               /* call-graph arc file */
	op_cookie_t cg_to_cookie; /* callee image of an arc file */
	int32_t cg_to_is_kernel;
	uint64_t cg_to_anon_start, cg_to_anon_end;
};

/* A virtual counter (derived event) that gets its own sample files. */
struct op_counter_desc {
	uint32_t size;
	const char *name; /* event name in file names, no '.' or '/' */
	uint32_t event;   /* header ctr_event, e.g. 0xf100 */
	uint32_t um;      /* header ctr_um and name field */
	uint64_t count;   /* header ctr_count and name field */
};

/* A perf event the host opens on every CPU on behalf of a plugin. */
struct op_perf_attr {
	uint32_t size;
	uint32_t type; /* perf_event_attr.type (may be a sysfs dynamic PMU) */
	uint64_t config, config1, config2;
	uint64_t sample_period; /* or frequency if freq is set */
	bool freq;
	bool exclude_user, exclude_kernel, exclude_hv;
	uint8_t precise_ip;
	uint64_t sample_type_extra; /* PERF_SAMPLE_* bits wanted on top of the core's */
};

struct op_source_desc {
	uint32_t size;
	const char *name; /* for messages and stats */
	/*
	 * The event (SDK 1.0 layout, frozen at OP_PERF_ATTR_SIZE_V1_0). Used
	 * when attr_ptr is NULL; attr.size is then required.
	 */
	struct op_perf_attr attr;
	/*
	 * HOT. One sample of this source. The plugin maps PCs with
	 * host->map_pc and writes its escape records with host->emit.
	 */
	int (*on_sample)(void *priv, const struct op_perf_sample *s, op_emit_t *w);
	/*
	 * SDK 1.1. The event by pointer, read with the size rule of its own
	 * size member, so that struct op_perf_attr can grow without moving
	 * this struct; when set, the embedded attr is ignored. The host copies
	 * it during register_source.
	 */
	const struct op_perf_attr *attr_ptr;
};

/* A hook run by buffer sync for every sample of the core events. */
struct op_sample_hook_desc {
	uint32_t size;
	const char *name;
	uint64_t sample_type_extra; /* PERF_SAMPLE_* bits to request (e.g. CALLCHAIN) */
	uint32_t max_stack;         /* sample_max_stack when CALLCHAIN is requested */
	/* HOT. Called after the sample pair was emitted. */
	int (*on_sample)(void *priv, const struct op_perf_sample *s, op_emit_t *w);
};

/* What a hardware model knows about the CPU it claims. */
struct op_cpuinfo {
	uint32_t size;
	char vendor[16]; /* "AuthenticAMD", "GenuineIntel", ... */
	uint32_t family, model, stepping;
	bool pmu_usable;             /* a hardware PMU is usable by perf_event_open */
	const char *forced_cpu_type; /* --cpu-type= value, or NULL */
};

/* One requested event, parsed from NAME:count:um:kernel:user. */
struct op_event_req {
	uint32_t size;
	const char *name;
	uint32_t code; /* from the events catalogue */
	uint32_t um;
	uint64_t count;
	bool kernel, user;
	uint32_t counter_mask; /* allowed counters (catalogue `counters:`), 0 = any */
};

struct op_model_desc {
	uint32_t size;
	const char *name; /* unique model plugin name */
	/*
	 * Return >0 to claim the CPU (higher wins), 0 to decline. When declining
	 * a CPU of its vendor, write the reason to @why.
	 */
	int (*detect)(void *priv, const struct op_cpuinfo *ci, char *why, size_t why_len);
	/*
	 * Called after detect() claimed the CPU. Returns the OProfile cpu type
	 * name ("x86-64/family10", also the events/ directory), a string that
	 * lives until ext_deinit, and writes its enum value (lib/op_cpu.h) to
	 * *cpu_type_id when that is not NULL.
	 */
	const char *(*cpu_type)(void *priv, uint32_t *cpu_type_id);
	uint32_t nr_counters;
	const char *default_event; /* e.g. "CPU_CLK_UNHALTED:100000" */
	/* fill @attr for @ev; on error write a message to @err and return -errno */
	int (*encode)(void *priv, const struct op_event_req *ev, struct op_perf_attr *attr,
		      char *err, size_t err_len);
};

/* A kernel image (the kernel or a module) covering a kernel PC. */
struct op_kernel_image {
	uint32_t size;
	op_cookie_t cookie;  /* interned name, e.g. of "no-vmlinux" or "ext4" */
	uint64_t start, end; /* [start, end) */
};

struct op_kernel_ops {
	uint32_t size;
	/* HOT (cached). Find the image covering @pc; -ENOENT if none. */
	int (*resolve)(void *priv, uint64_t pc, struct op_kernel_image *out);
};

/*
 * SDK 1.1. A plugin's own state (collectd's user_data_t): the host keeps
 * @data for the plugin and calls @free_func(@data) once, after ext_deinit,
 * or after the rollback of an ext_init that failed.
 */
struct op_user_data {
	uint32_t size;
	void *data;
	void (*free_func)(void *data); /* may be NULL */
};

/*
 * SDK 1.2. A task record, as buffer sync reads it (perf's COMM, FORK, EXIT,
 * MMAP/MMAP2). Strings and the struct are valid only during on_event.
 */
enum op_proc_event_kind {
	OP_PROC_COMM = 1, /* a thread's name changed (prctl, pthread_setname_np) */
	OP_PROC_EXEC = 2, /* COMM of an exec: the process's mappings were replaced */
	OP_PROC_FORK = 3, /* a process (pid != ppid) or a thread (pid == ppid) */
	OP_PROC_EXIT = 4, /* a thread exited; the process when tid == pid */
	OP_PROC_MMAP = 5, /* a user-space mapping (kernel ones are not passed) */
};

enum op_proc_event_flags {
	OP_PROC_F_EXEC = 1u << 0,  /* MMAP: an executable mapping */
	OP_PROC_F_SYNTH = 1u << 1, /* made from /proc at start (time is 0) */
};

struct op_proc_event {
	uint32_t size;
	uint32_t kind; /* enum op_proc_event_kind */
	uint32_t pid, tid;
	uint32_t ppid;              /* FORK, EXIT: the parent (its pid); else 0 */
	uint32_t misc;              /* enum op_proc_event_flags */
	uint32_t prot;              /* MMAP: PROT_* when the kernel gave it (MMAP2), else 0 */
	uint32_t flags;             /* MMAP: MAP_* when the kernel gave it (MMAP2), else 0 */
	uint64_t time;              /* perf clock (CLOCK_MONOTONIC) ns; 0 when synthesized */
	const char *comm;           /* COMM, EXEC: the new name (at most 15 bytes); else NULL */
	const char *filename;       /* MMAP: the mapped path, "//anon", "[anon:x]"...; else NULL */
	uint64_t start, len, pgoff; /* MMAP */
};

struct op_proc_hook_desc {
	uint32_t size;
	const char *name; /* for messages; NULL: the plugin's name */
	/*
	 * Required. One record, in record (time) order, from buffer sync after
	 * the core itself took it (so map_pc already knows a new mapping). Not
	 * per sample, but keep it short: samples wait behind it. Return 0 or
	 * -errno (counted as a hook error).
	 */
	int (*on_event)(void *priv, const struct op_proc_event *e);
};

/* SDK 1.2. A moment in the life of the session (struct op_session_event). */
enum op_session_event_kind {
	OP_SESSION_START = 1,   /* profiling starts; dir is samples/current */
	OP_SESSION_DUMP = 2,    /* a dump or sync made the sample files current */
	OP_SESSION_ROTATED = 3, /* prev_dir was set aside (rotate, save); dir is the new current */
	OP_SESSION_STOP = 4,    /* before exit, the files synced; dir is samples/current */
};

struct op_session_event {
	uint32_t size;
	uint32_t kind;        /* enum op_session_event_kind */
	const char *dir;      /* absolute: <session>/samples/current */
	const char *prev_dir; /* ROTATED: absolute dir of the finished session; else NULL */
	uint64_t start_ns; /* wall clock (CLOCK_REALTIME) ns when the session began (ROTATED: prev_dir's) */
	uint64_t end_ns; /* wall clock ns now (ROTATED: the end of prev_dir's session) */
};

struct op_session_hook_desc {
	uint32_t size;
	const char *name; /* for messages; NULL: the plugin's name */
	/* Required. On the daemon's main thread. Return 0 or -errno (logged). */
	int (*on_event)(void *priv, const struct op_session_event *e);
};

/*
 * SDK 1.2. Claims samples in anon mappings. For a sample of a user pc in a
 * mapping without a file (an anon region, [anon:name], a JIT's memory),
 * buffer sync asks each resolver in load order; the first that claims the
 * pc decides where the sample lands.
 */
struct op_anon_resolver_desc {
	uint32_t size;
	const char *name; /* for messages; NULL: the plugin's name */
	/*
	 * Required. HOT: no allocation, no system call, no lock that a plugin
	 * thread holds for long. @time is the sample's perf time (ns). Return 1
	 * with out->cookie (an image, from cookie_intern) and out->offset (the
	 * key: a file offset in that image) set to claim the pc; 0 to leave it
	 * to the core (an anon sample, as without the plugin). The host set
	 * out->size and zeroed the rest; it ignores the other members.
	 */
	int (*resolve)(void *priv, uint32_t pid, uint64_t pc, uint64_t time, struct op_pc_map *out);
};

/* ------------------------------------------------------------------ */
/* Host service table                                                  */
/* ------------------------------------------------------------------ */

enum op_log_level { OP_LOG_ERR = 0, OP_LOG_WARN = 1, OP_LOG_INFO = 2, OP_LOG_DEBUG = 3 };

struct op_host {
	uint32_t size; /* bytes of this table the host provides */
	uint32_t abi_major, abi_minor;

	/*
	 * --- logging, prefixed with the plugin name ---
	 * One line per call (a trailing newline is optional). OP_LOG_DEBUG shows
	 * only with --verbose=ext. Rate-limited per plugin (100 lines per 10 s by
	 * default; the excess is counted and reported), but still not for use
	 * per sample.
	 */
	void (*log)(op_ext_t *ctx, enum op_log_level level, const char *fmt, ...)
		__attribute__((format(printf, 3, 4)));
	/* The same with a va_list (for a plugin's own printf-like wrappers). */
	void (*vlog)(op_ext_t *ctx, enum op_log_level level, const char *fmt, va_list ap);

	/*
	 * --- scoped configuration: plugins.<name>.<key> only ---
	 * Return 0, -ENOENT when the key is absent, -EINVAL on a type mismatch
	 * (logged with file:line). Strings live until ext_deinit.
	 */
	int (*config_string)(op_ext_t *ctx, const char *key, const char **out);
	int (*config_int64)(op_ext_t *ctx, const char *key, int64_t *out);
	int (*config_bool)(op_ext_t *ctx, const char *key, bool *out);

	/*
	 * --- registrations (owned by ctx; only inside ext_init) ---
	 * Each returns 0, -EINVAL for a malformed payload (a required callback
	 * or name missing; logged), -EEXIST when another plugin already holds
	 * the code/name (logged naming both plugins), -ENOSPC when the host's
	 * table is full, -EPERM outside ext_init. @priv is passed back to the
	 * callbacks unchanged.
	 */
	/* A "-- plugin NAME --" stats section; print_stats required. Several allowed. */
	int (*register_stats)(op_ext_t *ctx, const struct op_stats_ops *ops, void *priv);
	/* Per-sfile private state; every callback optional, one set per plugin. */
	int (*register_sfile_handlers)(op_ext_t *ctx, const struct op_sfile_ops *ops, void *priv);
	/*
	 * An event-buffer escape code; name and handler required. desc->code is
	 * a wanted number in OP_ESCAPE_FIRST_PLUGIN..OP_ESCAPE_MAX, or 0 to have
	 * the lowest free one allocated. *code_out (may be NULL) receives it.
	 */
	int (*register_escape)(op_ext_t *ctx, const struct op_escape_desc *desc, void *priv,
			       uint32_t *code_out);
	/* A hardware model; name, detect, cpu_type and encode required; names unique. */
	int (*register_model)(op_ext_t *ctx, const struct op_model_desc *desc, void *priv);
	/*
	 * An extra perf event opened on every CPU; name, on_sample and the
	 * attr (attr_ptr, or the embedded attr with its size set) required.
	 * *source_out receives the number that op_perf_sample.source carries
	 * for its samples.
	 */
	int (*register_source)(op_ext_t *ctx, const struct op_source_desc *desc, void *priv,
			       uint32_t *source_out);
	/* A per-sample hook on the core events; on_sample required. */
	int (*register_sample_hook)(op_ext_t *ctx, const struct op_sample_hook_desc *desc,
				    void *priv);
	/* The kernel image resolver; resolve required; at most one in the daemon. */
	int (*register_kernel)(op_ext_t *ctx, const struct op_kernel_ops *ops, void *priv);
	/*
	 * A virtual counter; name required (no '.' or '/', unique across plugins).
	 * *counter_out receives its number for op_file_spec.counter / log_sample.
	 */
	int (*register_counter)(op_ext_t *ctx, const struct op_counter_desc *desc,
				uint32_t *counter_out);

	/*
	 * --- core services ---
	 * A service the running oprofiled does not provide (a test host, a
	 * replay) answers -ENOSYS, NULL or 0; sample_file_close is then a no-op.
	 */
	/* --- buffer sync side (inside on_sample callbacks) --- */
	/*
	 * HOT. Map @pc of task @pid (cpumode as in the sample) to image + offset.
	 * Set out->size = sizeof(*out) first: the host writes at most that many
	 * bytes (1.1; -EINVAL when it is below sizeof(uint32_t)). Returns 0 with
	 * *out filled (out->cookie 0 when no mapping covered the pc), or -errno
	 * (-ENOSYS outside buffer sync). Inside on_sample, a pc in anon code
	 * that an anon resolver claims at the hooked sample's time (JIT code)
	 * maps to that resolver's image and key, as a flat sample there does
	 * (oprofile-ng 0.1 with SDK 1.3; before, the anon range as for any).
	 */
	int (*map_pc)(op_ext_t *ctx, uint32_t pid, uint16_t cpumode, uint64_t pc,
		      struct op_pc_map *out);
	/*
	 * HOT. Append escape @code (one the plugin registered) with @nargs words
	 * to @w, the writer passed to the running on_sample callback (never keep
	 * it). Returns 0, -ENOSPC if the record is too long, -EINVAL for a code
	 * outside OP_ESCAPE_FIRST_PLUGIN..OP_ESCAPE_MAX or @args NULL with
	 * @nargs > 0. Keep @nargs within the
	 * code's min_args..max_args: emit does not check that, trans does.
	 */
	int (*emit)(op_emit_t *w, uint32_t code, const uint64_t *args, uint32_t nargs);

	/* --- trans side (inside escape handlers and sfile handlers) --- */
	/*
	 * HOT. Log @count at @key for @counter (a core counter or one from
	 * register_counter) in the context @t, through the core's sample-file
	 * path. Returns 0 or -errno (the sample is then dropped and counted).
	 */
	int (*log_sample)(op_ext_t *ctx, const struct op_trans_view *t, uint32_t counter,
			  uint64_t key, uint32_t count);
	/*
	 * Open the sample file @spec of set @sf (named by the host), from an
	 * sfile handler's get_file. Returns the file, owned by the plugin until
	 * it calls sample_file_close (from its close handler at the latest), or
	 * NULL after logging why.
	 */
	op_sample_file_t *(*sample_file_open)(op_ext_t *ctx, op_sfile_t *sf,
					      const struct op_trans_view *t,
					      const struct op_file_spec *spec);
	/* HOT. Add @count at @key; counts saturate, never wrap. 0 or -errno. */
	int (*sample_file_add)(op_sample_file_t *f, uint64_t key, uint32_t count);
	/* Flush @f to disk (from an sfile handler's sync). 0 or -errno. */
	int (*sample_file_sync)(op_sample_file_t *f);
	/* Close @f (from an sfile handler's close); @f is invalid afterwards. */
	void (*sample_file_close)(op_sample_file_t *f);

	/* --- misc --- */
	/* Path of an interned image (valid until ext_deinit), or NULL if unknown. */
	const char *(*cookie_path)(op_ext_t *ctx, op_cookie_t cookie);
	/*
	 * Intern a path (kernel images: a name without '/', @is_kernel true).
	 * Returns its cookie, the same one for the same path; 0 on failure.
	 */
	op_cookie_t (*cookie_intern)(op_ext_t *ctx, const char *path, bool is_kernel);
	/* The session directory (absolute), or NULL when there is none (tests). */
	const char *(*session_dir)(op_ext_t *ctx);
	/* The proc root ("/proc" unless overridden for tests), or NULL. */
	const char *(*proc_root)(op_ext_t *ctx);

	/* --- SDK 1.1 (check with OP_HOST_HAS) --- */
	/*
	 * Keep @ud->data as the plugin's state, freed with @ud->free_func after
	 * ext_deinit or after a failed ext_init (so an init may fail at any
	 * point without freeing it). Only inside ext_init, once. Returns 0,
	 * -EPERM outside ext_init, -EEXIST the second time, -EINVAL for a
	 * malformed @ud (logged).
	 */
	int (*set_user_data)(op_ext_t *ctx, const struct op_user_data *ud);

	/* --- SDK 1.2 (check with OP_HOST_HAS); registrations, only inside ext_init --- */
	/* A task-record hook; on_event required. Several per plugin allowed. */
	int (*register_proc_hook)(op_ext_t *ctx, const struct op_proc_hook_desc *desc, void *priv);
	/* A session hook; on_event required. Several per plugin allowed. */
	int (*register_session_hook)(op_ext_t *ctx, const struct op_session_hook_desc *desc,
				     void *priv);
	/* An anon-pc resolver; resolve required. Asked in load order. */
	int (*register_anon_resolver)(op_ext_t *ctx, const struct op_anon_resolver_desc *desc,
				      void *priv);

	/* --- issue 20: per-process split key --- */
	/*
	 * SDK 1.3 (check with OP_HOST_HAS). A plugin that knows a per-process
	 * context (plugins/cgroup: the cgroup) provides the --separate word
	 * @name ("cgroup", the only one oprofiled knows): with that separation
	 * on, samples of processes with different keys go to different sample
	 * files (<session>/samples/current/{cgroup}/KEY.../{root}/..., see
	 * lib/op_mangle.h). Only inside ext_init; one plugin per name
	 * (-EEXIST naming both), -EINVAL for a name oprofiled does not know.
	 */
	int (*register_split)(op_ext_t *ctx, const char *name);
	/*
	 * From a proc hook only (daemon thread): process @pid's key from now
	 * on - an absolute '/'-separated path of 1..OP_SPLIT_KEY_MAX bytes
	 * without control bytes ("/" the root), or NULL: none (its samples go
	 * to the unsplit files). The host keeps it with the process (a fork
	 * inherits it) and interns the string once; a sample costs nothing more
	 * than the thread split's key compare. 0 also when the separation is
	 * off (nothing kept), -EPERM without register_split, -EINVAL for a bad
	 * key, -ENOMEM.
	 */
	int (*set_split_key)(op_ext_t *ctx, uint32_t pid, const char *key);
};

/* --- issue 20: per-process split key --- */
#define OP_SPLIT_KEY_MAX 1024 /* bytes of a split key (a cgroup path) */

/* ------------------------------------------------------------------ */
/* Frozen sizes (LP64), pinned by tests/abi                            */
/* ------------------------------------------------------------------ */

#define OP_EXT_DESCRIPTOR_SIZE_V1_1 104
#define OP_PERF_SAMPLE_SIZE_V1_0 96
#define OP_PERF_SAMPLE_SIZE_V1_1 96
#define OP_PC_MAP_SIZE_V1_0 40
#define OP_PC_MAP_SIZE_V1_1 40
#define OP_TRANS_VIEW_SIZE_V1_0 64
#define OP_TRANS_VIEW_SIZE_V1_1 64
#define OP_STATS_SINK_SIZE_V1_0 32
#define OP_STATS_SINK_SIZE_V1_1 32
#define OP_STATS_OPS_SIZE_V1_0 16
#define OP_STATS_OPS_SIZE_V1_1 16
#define OP_ESCAPE_DESC_SIZE_V1_0 32
#define OP_ESCAPE_DESC_SIZE_V1_1 32
#define OP_SFILE_OPS_SIZE_V1_0 48
#define OP_SFILE_OPS_SIZE_V1_1 48
#define OP_FILE_SPEC_SIZE_V1_0 40
#define OP_FILE_SPEC_SIZE_V1_1 40
#define OP_COUNTER_DESC_SIZE_V1_0 32
#define OP_COUNTER_DESC_SIZE_V1_1 32
#define OP_PERF_ATTR_SIZE_V1_0 56
#define OP_PERF_ATTR_SIZE_V1_1 56
#define OP_SOURCE_DESC_SIZE_V1_0 80
#define OP_SOURCE_DESC_SIZE_V1_1 88 /* + attr_ptr */
#define OP_SAMPLE_HOOK_DESC_SIZE_V1_0 40
#define OP_SAMPLE_HOOK_DESC_SIZE_V1_1 40
#define OP_CPUINFO_SIZE_V1_0 48
#define OP_CPUINFO_SIZE_V1_1 48
#define OP_EVENT_REQ_SIZE_V1_0 40
#define OP_EVENT_REQ_SIZE_V1_1 40
#define OP_MODEL_DESC_SIZE_V1_0 56
#define OP_MODEL_DESC_SIZE_V1_1 56
#define OP_KERNEL_IMAGE_SIZE_V1_0 24
#define OP_KERNEL_IMAGE_SIZE_V1_1 24
#define OP_KERNEL_OPS_SIZE_V1_0 16
#define OP_KERNEL_OPS_SIZE_V1_1 16
#define OP_USER_DATA_SIZE_V1_1 24 /* new in 1.1 */
#define OP_HOST_SIZE_V1_0 208
#define OP_HOST_SIZE_V1_1 216              /* + set_user_data */
#define OP_PROC_EVENT_SIZE_V1_2 80         /* new in 1.2 */
#define OP_PROC_HOOK_DESC_SIZE_V1_2 24     /* new in 1.2 */
#define OP_SESSION_EVENT_SIZE_V1_2 40      /* new in 1.2 */
#define OP_SESSION_HOOK_DESC_SIZE_V1_2 24  /* new in 1.2 */
#define OP_ANON_RESOLVER_DESC_SIZE_V1_2 24 /* new in 1.2 */
#define OP_HOST_SIZE_V1_2 240              /* + register_proc_hook, _session_hook, _anon_resolver */
/* --- issue 20: per-process split key --- */
#define OP_TRANS_VIEW_SIZE_V1_3 72  /* + split */
#define OP_HOST_SIZE_V1_3_SPLIT 256 /* + register_split, set_split_key */

#ifdef __LP64__
#ifdef __cplusplus
#define OP_SDK_ASSERT(COND, MSG) static_assert(COND, MSG)
#else
#define OP_SDK_ASSERT(COND, MSG) _Static_assert(COND, MSG)
#endif
#define OP_SDK_FROZEN(S, SIZE) OP_SDK_ASSERT(sizeof(struct S) == (SIZE), #S " is frozen at " #SIZE)
OP_SDK_FROZEN(op_ext_descriptor, OP_EXT_DESCRIPTOR_SIZE_V1_1);
OP_SDK_FROZEN(op_perf_sample, OP_PERF_SAMPLE_SIZE_V1_1);
OP_SDK_FROZEN(op_pc_map, OP_PC_MAP_SIZE_V1_1);
OP_SDK_FROZEN(op_trans_view, OP_TRANS_VIEW_SIZE_V1_3); /* issue 20: + split */
OP_SDK_FROZEN(op_stats_sink, OP_STATS_SINK_SIZE_V1_1);
OP_SDK_FROZEN(op_stats_ops, OP_STATS_OPS_SIZE_V1_1);
OP_SDK_FROZEN(op_escape_desc, OP_ESCAPE_DESC_SIZE_V1_1);
OP_SDK_FROZEN(op_sfile_ops, OP_SFILE_OPS_SIZE_V1_1);
OP_SDK_FROZEN(op_file_spec, OP_FILE_SPEC_SIZE_V1_1);
OP_SDK_FROZEN(op_counter_desc, OP_COUNTER_DESC_SIZE_V1_1);
OP_SDK_FROZEN(op_perf_attr, OP_PERF_ATTR_SIZE_V1_1);
OP_SDK_FROZEN(op_source_desc, OP_SOURCE_DESC_SIZE_V1_1);
OP_SDK_FROZEN(op_sample_hook_desc, OP_SAMPLE_HOOK_DESC_SIZE_V1_1);
OP_SDK_FROZEN(op_cpuinfo, OP_CPUINFO_SIZE_V1_1);
OP_SDK_FROZEN(op_event_req, OP_EVENT_REQ_SIZE_V1_1);
OP_SDK_FROZEN(op_model_desc, OP_MODEL_DESC_SIZE_V1_1);
OP_SDK_FROZEN(op_kernel_image, OP_KERNEL_IMAGE_SIZE_V1_1);
OP_SDK_FROZEN(op_kernel_ops, OP_KERNEL_OPS_SIZE_V1_1);
OP_SDK_FROZEN(op_user_data, OP_USER_DATA_SIZE_V1_1);
OP_SDK_FROZEN(op_proc_event, OP_PROC_EVENT_SIZE_V1_2);
OP_SDK_FROZEN(op_proc_hook_desc, OP_PROC_HOOK_DESC_SIZE_V1_2);
OP_SDK_FROZEN(op_session_event, OP_SESSION_EVENT_SIZE_V1_2);
OP_SDK_FROZEN(op_session_hook_desc, OP_SESSION_HOOK_DESC_SIZE_V1_2);
OP_SDK_FROZEN(op_anon_resolver_desc, OP_ANON_RESOLVER_DESC_SIZE_V1_2);
/* --- issue 20: per-process split key --- */
OP_SDK_ASSERT(offsetof(struct op_trans_view, split) == 64, "op_trans_view 1.3 appends split");
OP_SDK_ASSERT(offsetof(struct op_host, register_split) == OP_HOST_SIZE_V1_2,
	      "op_host 1.3 appends register_split");
OP_SDK_ASSERT(offsetof(struct op_host, set_split_key) + sizeof(void *) == OP_HOST_SIZE_V1_3_SPLIT,
	      "op_host 1.3 appends set_split_key");
OP_SDK_FROZEN(op_host, OP_HOST_SIZE_V1_3_SPLIT);
/* what 1.1 appended starts where the 1.0 struct ended */
OP_SDK_ASSERT(offsetof(struct op_source_desc, attr_ptr) == OP_SOURCE_DESC_SIZE_V1_0,
	      "op_source_desc 1.1 appends attr_ptr");
OP_SDK_ASSERT(offsetof(struct op_host, set_user_data) == OP_HOST_SIZE_V1_0,
	      "op_host 1.1 appends set_user_data");
OP_SDK_ASSERT(offsetof(struct op_host, register_proc_hook) == OP_HOST_SIZE_V1_1,
	      "op_host 1.2 appends register_proc_hook");
#undef OP_SDK_FROZEN
#undef OP_SDK_ASSERT
#endif /* __LP64__ */

/* True if the host table provides @member (for services added after v1.0). */
#define OP_HOST_HAS(host, member) \
	((host)->size >= offsetof(struct op_host, member) + sizeof((host)->member))

#ifdef __cplusplus
}
#endif

#endif /* OPROFILE_SDK_H */
