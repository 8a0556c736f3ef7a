/*
 * test_ext_reg.c - every registration kind of the loader (core/ext_reg.c)
 * against every refusal reason, table-driven: the return value and the exact
 * message line. A plugin context is made in-process (no dlopen), in and out
 * of its ext_init.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ext_int.h"
#include "log.h"

static int h_escape(void *priv, const struct op_trans_view *t, const uint64_t *args, uint32_t nargs)
{
	(void)priv, (void)t, (void)args, (void)nargs;
	return 0;
}

static op_sample_file_t *h_get_file(void *priv, op_sfile_t *sf, void *sf_priv,
				    const struct op_trans_view *t, uint32_t counter, bool is_cg)
{
	(void)priv, (void)sf, (void)sf_priv, (void)t, (void)counter, (void)is_cg;
	return NULL;
}

static int h_on_sample(void *priv, const struct op_perf_sample *s, op_emit_t *w)
{
	(void)priv, (void)s, (void)w;
	return 0;
}

static int h_detect(void *priv, const struct op_cpuinfo *ci, char *why, size_t len)
{
	(void)priv, (void)ci, (void)why, (void)len;
	return 0;
}

static const char *h_cpu_type(void *priv, uint32_t *id)
{
	(void)priv, (void)id;
	return "x";
}

static int h_encode(void *priv, const struct op_event_req *ev, struct op_perf_attr *attr, char *err,
		    size_t len)
{
	(void)priv, (void)ev, (void)attr, (void)err, (void)len;
	return 0;
}

static int h_resolve(void *priv, uint64_t pc, struct op_kernel_image *out)
{
	(void)priv, (void)pc, (void)out;
	return -ENOENT;
}

static void h_print_stats(void *priv, const struct op_stats_sink *sink)
{
	(void)priv, (void)sink;
}

enum kind { K_ESCAPE, K_SFILE, K_MODEL, K_SOURCE, K_HOOK, K_KERNEL, K_COUNTER, K_STATS, K_UDATA };

union payload {
	uint32_t size;
	struct op_escape_desc esc;
	struct op_sfile_ops sfile;
	struct op_model_desc model;
	struct op_source_desc src;
	struct op_sample_hook_desc hook;
	struct op_kernel_ops kern;
	struct op_counter_desc ctr;
	struct op_stats_ops stats;
	struct op_user_data ud;
};

/* valid payloads of every kind; a case changes one thing by overriding a member */
#pragma GCC diagnostic ignored "-Woverride-init"
#define ESC(...)                                               \
	{                                                      \
		.esc = {.size = sizeof(struct op_escape_desc), \
			.name = "esc",                         \
			.handler = h_escape,                   \
			__VA_ARGS__ }                          \
	}
#define SFILE(...)                                           \
	{                                                    \
		.sfile = {                                   \
			.size = sizeof(struct op_sfile_ops), \
			.get_file = h_get_file,              \
			__VA_ARGS__                          \
		}                                            \
	}
#define MODEL(...)                                            \
	{                                                     \
		.model = {                                    \
			.size = sizeof(struct op_model_desc), \
			.name = "model",                      \
			.detect = h_detect,                   \
			.cpu_type = h_cpu_type,               \
			.encode = h_encode,                   \
			__VA_ARGS__                           \
		}                                             \
	}
#define SRC(...)                                                         \
	{                                                                \
		.src = {.size = sizeof(struct op_source_desc),           \
			.name = "src",                                   \
			.attr = { .size = sizeof(struct op_perf_attr) }, \
			.on_sample = h_on_sample,                        \
			__VA_ARGS__ }                                    \
	}
#define HOOK(...)                                                   \
	{                                                           \
		.hook = {                                           \
			.size = sizeof(struct op_sample_hook_desc), \
			.on_sample = h_on_sample,                   \
			__VA_ARGS__                                 \
		}                                                   \
	}
#define KERN(...)                                                                                  \
	{                                                                                          \
		.kern = {.size = sizeof(struct op_kernel_ops), .resolve = h_resolve, __VA_ARGS__ } \
	}
#define CTR(...)                                                                             \
	{                                                                                    \
		.ctr = {.size = sizeof(struct op_counter_desc), .name = "CTR", __VA_ARGS__ } \
	}
#define STATS(...)                                           \
	{                                                    \
		.stats = {                                   \
			.size = sizeof(struct op_stats_ops), \
			.print_stats = h_print_stats,        \
			__VA_ARGS__                          \
		}                                            \
	}

#define UDATA(...)                                                        \
	{                                                                 \
		.ud = {.size = sizeof(struct op_user_data), __VA_ARGS__ } \
	}

static const struct op_perf_attr attr0 = { .size = 0 };
static const struct op_perf_attr attr4 = { .size = 4 };

#define LONG65 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

struct reg_case {
	const char *what;
	enum kind kind;
	union payload p;
	bool null_payload; /* pass NULL instead of p */
	bool outside_init; /* call after ext_init returned */
	bool before;       /* another plugin registered p first */
	bool before_self;  /* the same plugin registered p first */
	unsigned fill;     /* another plugin registered this many others first */
	int rc;
	const char *msg; /* the whole line after "oprofiled: plugin "fx" (/p/fx.so): " */
};

static const struct reg_case cases[] = {
	/* every kind: outside ext_init, NULL description, size 0, size too big */
	{ "escape outside init", K_ESCAPE, ESC(), .outside_init = true, .rc = -EPERM,
	  .msg = "register_escape called outside ext_init - register everything from ext_init" },
	{ "escape NULL", K_ESCAPE, ESC(), .null_payload = true, .rc = -EINVAL,
	  .msg = "register_escape with a NULL description" },
	{ "escape size 0", K_ESCAPE, ESC(.size = 0), .rc = -EINVAL,
	  .msg = "register_escape: description size is 0, less than its size member - set "
		 ".size = sizeof(struct op_escape_desc)" },
	{ "escape size big", K_ESCAPE, ESC(.size = 4096), .rc = -EINVAL,
	  .msg = "register_escape: description size is 4096, but struct op_escape_desc of SDK 1.3 "
		 "has 32 bytes - set .size = sizeof(struct op_escape_desc)" },
	{ "sfile outside init", K_SFILE, SFILE(), .outside_init = true, .rc = -EPERM,
	  .msg = "register_sfile_handlers called outside ext_init - register everything from ext_init" },
	{ "sfile NULL", K_SFILE, SFILE(), .null_payload = true, .rc = -EINVAL,
	  .msg = "register_sfile_handlers with a NULL description" },
	{ "sfile size 2", K_SFILE, SFILE(.size = 2), .rc = -EINVAL,
	  .msg = "register_sfile_handlers: description size is 2, less than its size member - set "
		 ".size = sizeof(struct op_sfile_ops)" },
	{ "model NULL", K_MODEL, MODEL(), .null_payload = true, .rc = -EINVAL,
	  .msg = "register_model with a NULL description" },
	{ "model outside init", K_MODEL, MODEL(), .outside_init = true, .rc = -EPERM,
	  .msg = "register_model called outside ext_init - register everything from ext_init" },
	{ "model size big", K_MODEL, MODEL(.size = 1000), .rc = -EINVAL,
	  .msg = "register_model: description size is 1000, but struct op_model_desc of SDK 1.3 "
		 "has 56 bytes - set .size = sizeof(struct op_model_desc)" },
	{ "source NULL", K_SOURCE, SRC(), .null_payload = true, .rc = -EINVAL,
	  .msg = "register_source with a NULL description" },
	{ "source outside init", K_SOURCE, SRC(), .outside_init = true, .rc = -EPERM,
	  .msg = "register_source called outside ext_init - register everything from ext_init" },
	{ "hook NULL", K_HOOK, HOOK(), .null_payload = true, .rc = -EINVAL,
	  .msg = "register_sample_hook with a NULL description" },
	{ "hook size 0", K_HOOK, HOOK(.size = 0), .rc = -EINVAL,
	  .msg = "register_sample_hook: description size is 0, less than its size member - set "
		 ".size = sizeof(struct op_sample_hook_desc)" },
	{ "kernel NULL", K_KERNEL, KERN(), .null_payload = true, .rc = -EINVAL,
	  .msg = "register_kernel with a NULL description" },
	{ "kernel outside init", K_KERNEL, KERN(), .outside_init = true, .rc = -EPERM,
	  .msg = "register_kernel called outside ext_init - register everything from ext_init" },
	{ "counter NULL", K_COUNTER, CTR(), .null_payload = true, .rc = -EINVAL,
	  .msg = "register_counter with a NULL description" },
	{ "counter size big", K_COUNTER, CTR(.size = 33), .rc = -EINVAL,
	  .msg = "register_counter: description size is 33, but struct op_counter_desc of SDK 1.3 "
		 "has 32 bytes - set .size = sizeof(struct op_counter_desc)" },
	{ "stats NULL", K_STATS, STATS(), .null_payload = true, .rc = -EINVAL,
	  .msg = "register_stats with a NULL description" },
	{ "stats outside init", K_STATS, STATS(), .outside_init = true, .rc = -EPERM,
	  .msg = "register_stats called outside ext_init - register everything from ext_init" },
	{ "user data outside init", K_UDATA, UDATA(), .outside_init = true, .rc = -EPERM,
	  .msg = "set_user_data called outside ext_init - register everything from ext_init" },
	{ "user data NULL", K_UDATA, UDATA(), .null_payload = true, .rc = -EINVAL,
	  .msg = "set_user_data with a NULL description" },
	{ "user data size 0", K_UDATA, UDATA(.size = 0), .rc = -EINVAL,
	  .msg = "set_user_data: description size is 0, less than its size member - set "
		 ".size = sizeof(struct op_user_data)" },
	{ "user data size big", K_UDATA, UDATA(.size = 25), .rc = -EINVAL,
	  .msg = "set_user_data: description size is 25, but struct op_user_data of SDK 1.3 "
		 "has 24 bytes - set .size = sizeof(struct op_user_data)" },

	/* names: NULL, empty, too long, bad characters (counters: file names) */
	{ "escape name NULL", K_ESCAPE, ESC(.name = NULL), .rc = -EINVAL,
	  .msg = "register_escape: name is NULL (description size 32) - set it" },
	{ "escape name empty", K_ESCAPE, ESC(.name = ""), .rc = -EINVAL,
	  .msg = "register_escape: name is empty - expected 1..64 characters" },
	{ "escape name long", K_ESCAPE, ESC(.name = LONG65), .rc = -EINVAL,
	  .msg = "register_escape: name \"aaaaaaaaaaaaaaaa...\" is longer than 64 characters - "
		 "shorten it" },
	{ "model name NULL", K_MODEL, MODEL(.name = NULL), .rc = -EINVAL,
	  .msg = "register_model: name is NULL (description size 56) - set it" },
	{ "model name empty", K_MODEL, MODEL(.name = ""), .rc = -EINVAL,
	  .msg = "register_model: name is empty - expected 1..64 characters" },
	{ "model name long", K_MODEL, MODEL(.name = LONG65), .rc = -EINVAL,
	  .msg = "register_model: name \"aaaaaaaaaaaaaaaa...\" is longer than 64 characters - "
		 "shorten it" },
	{ "source name NULL", K_SOURCE, SRC(.name = NULL), .rc = -EINVAL,
	  .msg = "register_source: name is NULL (description size 88) - set it" },
	{ "source name long", K_SOURCE, SRC(.name = LONG65), .rc = -EINVAL,
	  .msg = "register_source: name \"aaaaaaaaaaaaaaaa...\" is longer than 64 characters - "
		 "shorten it" },
	{ "hook name empty", K_HOOK, HOOK(.name = ""), .rc = -EINVAL,
	  .msg = "register_sample_hook: name is empty - expected 1..64 characters" },
	{ "counter name NULL", K_COUNTER, CTR(.name = NULL), .rc = -EINVAL,
	  .msg = "register_counter: name is NULL (description size 32) - set it" },
	{ "counter name empty", K_COUNTER, CTR(.name = ""), .rc = -EINVAL,
	  .msg = "register_counter: name is empty - expected 1..64 of [A-Za-z0-9_-]" },
	{ "counter name long", K_COUNTER, CTR(.name = LONG65), .rc = -EINVAL,
	  .msg = "register_counter: name \"aaaaaaaaaaaaaaaa...\" is longer than 64 characters - "
		 "shorten it" },
	{ "counter name dot", K_COUNTER, CTR(.name = "A.B"), .rc = -EINVAL,
	  .msg = "register_counter: name \"A.B\" has '.' - expected 1..64 of [A-Za-z0-9_-]" },
	{ "counter name slash", K_COUNTER, CTR(.name = "a/b"), .rc = -EINVAL,
	  .msg = "register_counter: name \"a/b\" has '/' - expected 1..64 of [A-Za-z0-9_-]" },
	{ "counter name space", K_COUNTER, CTR(.name = "a b"), .rc = -EINVAL,
	  .msg = "register_counter: name has byte 0x20 at 1 - expected 1..64 of [A-Za-z0-9_-]" },
	{ "counter name newline", K_COUNTER, CTR(.name = "ab\n"), .rc = -EINVAL,
	  .msg = "register_counter: name has byte 0x0a at 2 - expected 1..64 of [A-Za-z0-9_-]" },

	/* missing handlers */
	{ "escape no handler", K_ESCAPE, ESC(.handler = NULL), .rc = -EINVAL,
	  .msg = "register_escape: handler is NULL (description size 32) - set it" },
	{ "escape size 4", K_ESCAPE, ESC(.size = 4), .rc = -EINVAL,
	  .msg = "register_escape: handler is NULL (description size 4) - set it" },
	{ "model no detect", K_MODEL, MODEL(.detect = NULL), .rc = -EINVAL,
	  .msg = "register_model: detect is NULL (description size 56) - set it" },
	{ "model no cpu_type", K_MODEL, MODEL(.cpu_type = NULL), .rc = -EINVAL,
	  .msg = "register_model: cpu_type is NULL (description size 56) - set it" },
	{ "model no encode", K_MODEL, MODEL(.encode = NULL), .rc = -EINVAL,
	  .msg = "register_model: encode is NULL (description size 56) - set it" },
	{ "source no on_sample", K_SOURCE, SRC(.on_sample = NULL), .rc = -EINVAL,
	  .msg = "register_source: on_sample is NULL (description size 88) - set it" },
	{ "hook no on_sample", K_HOOK, HOOK(.on_sample = NULL), .rc = -EINVAL,
	  .msg = "register_sample_hook: on_sample is NULL (description size 40) - set it" },
	{ "kernel no resolve", K_KERNEL, KERN(.resolve = NULL), .rc = -EINVAL,
	  .msg = "register_kernel: resolve is NULL (description size 16) - set it" },
	{ "stats no print_stats", K_STATS, STATS(.print_stats = NULL), .rc = -EINVAL,
	  .msg = "register_stats: print_stats is NULL (description size 16) - set it" },

	/* other malformed members */
	{ "escape min > max", K_ESCAPE, ESC(.min_args = 3, .max_args = 2), .rc = -EINVAL,
	  .msg = "register_escape \"esc\": min_args 3 > max_args 2" },
	{ "escape code core", K_ESCAPE, ESC(.code = 5), .rc = -EINVAL,
	  .msg = "register_escape \"esc\": code 5 is outside the plugin range 32..255 - use 0 to "
		 "have one allocated" },
	{ "escape code 256", K_ESCAPE, ESC(.code = 256), .rc = -EINVAL,
	  .msg = "register_escape \"esc\": code 256 is outside the plugin range 32..255 - use 0 to "
		 "have one allocated" },
	{ "source attr.size 0", K_SOURCE, SRC(.attr = { .size = 0 }), .rc = -EINVAL,
	  .msg = "register_source \"src\": attr.size is 0 - set attr.size = sizeof(struct "
		 "op_perf_attr)" },
	{ "source attr_ptr size 0", K_SOURCE, SRC(.attr_ptr = &attr0), .rc = -EINVAL,
	  .msg = "register_source \"src\": attr_ptr->size is 0 - set attr_ptr->size = "
		 "sizeof(struct op_perf_attr)" },
	{ "source attr_ptr size 4", K_SOURCE, SRC(.attr = { .size = 0 }, .attr_ptr = &attr4),
	  .rc = -EINVAL,
	  .msg = "register_source \"src\": attr_ptr->size is 4 - set "
		 "attr_ptr->size = sizeof(struct op_perf_attr)" },

	/* duplicates: another plugin holds the name, code or slot */
	{ "escape name twice", K_ESCAPE, ESC(), .before = true, .rc = -EEXIST,
	  .msg = "escape code name \"esc\" is already registered by plugin \"other\" (code 32) - "
		 "the two plugins cannot be used together" },
	{ "model name twice", K_MODEL, MODEL(), .before = true, .rc = -EEXIST,
	  .msg = "hardware model \"model\" is already registered by plugin \"other\" - load only "
		 "one of them" },
	{ "kernel twice", K_KERNEL, KERN(), .before = true, .rc = -EEXIST,
	  .msg = "a kernel image resolver is already registered by plugin \"other\" - load only "
		 "one kernel plugin" },
	{ "counter name twice", K_COUNTER, CTR(), .before = true, .rc = -EEXIST,
	  .msg = "counter \"CTR\" is already registered by plugin \"other\" - the two plugins "
		 "cannot be used together" },

	/* once per plugin */
	{ "sfile twice", K_SFILE, SFILE(), .before_self = true, .rc = -EEXIST,
	  .msg = "register_sfile_handlers called twice - register one set per plugin" },
	{ "user data twice", K_UDATA, UDATA(), .before_self = true, .rc = -EEXIST,
	  .msg = "set_user_data called twice - keep one state per plugin" },

	/* tables full */
	{ "escape full", K_ESCAPE, ESC(), .fill = OP_ESCAPE_MAX + 1 - OP_ESCAPE_FIRST_PLUGIN,
	  .rc = -ENOSPC, .msg = "register_escape \"esc\": all 224 plugin escape codes are in use" },
	{ "model full", K_MODEL, MODEL(), .fill = EXT_MAX_MODELS, .rc = -ENOSPC,
	  .msg = "register_model: more than 16 models" },
	{ "source full", K_SOURCE, SRC(), .fill = EXT_MAX_SOURCES, .rc = -ENOSPC,
	  .msg = "register_source \"src\": more than 8 plugin sources" },
	{ "hook full", K_HOOK, HOOK(), .fill = EXT_MAX_HOOKS, .rc = -ENOSPC,
	  .msg = "register_sample_hook: more than 8 hooks" },
	{ "counter full", K_COUNTER, CTR(), .fill = EXT_MAX_COUNTERS, .rc = -ENOSPC,
	  .msg = "register_counter \"CTR\": more than 256 virtual counters" },
	{ "stats full", K_STATS, STATS(), .fill = EXT_MAX_STATS, .rc = -ENOSPC,
	  .msg = "register_stats: more than 32" },
};

static int reg_call(const struct op_host *h, op_ext_t *ctx, enum kind k, const union payload *p)
{
	uint32_t out;

	switch (k) {
	case K_ESCAPE:
		return h->register_escape(ctx, p ? &p->esc : NULL, NULL, &out);
	case K_SFILE:
		return h->register_sfile_handlers(ctx, p ? &p->sfile : NULL, NULL);
	case K_MODEL:
		return h->register_model(ctx, p ? &p->model : NULL, NULL);
	case K_SOURCE:
		return h->register_source(ctx, p ? &p->src : NULL, NULL, &out);
	case K_HOOK:
		return h->register_sample_hook(ctx, p ? &p->hook : NULL, NULL);
	case K_KERNEL:
		return h->register_kernel(ctx, p ? &p->kern : NULL, NULL);
	case K_COUNTER:
		return h->register_counter(ctx, p ? &p->ctr : NULL, &out);
	case K_STATS:
		return h->register_stats(ctx, p ? &p->stats : NULL, NULL);
	case K_UDATA:
		return h->set_user_data(ctx, p ? &p->ud : NULL);
	}
	return -1;
}

/* @p with another name (for kinds whose names must be unique) */
static void reg_rename(union payload *p, enum kind k, const char *name)
{
	switch (k) {
	case K_ESCAPE:
		p->esc.name = name;
		break;
	case K_MODEL:
		p->model.name = name;
		break;
	case K_SOURCE:
		p->src.name = name;
		break;
	case K_HOOK:
		p->hook.name = name;
		break;
	case K_COUNTER:
		p->ctr.name = name;
		break;
	default:
		break;
	}
}

static void test_refusals_table(void **state)
{
	struct op_ext fx = { .name = "fx", .path = "/p/fx.so", .fd = -1 };
	struct op_ext other = { .name = "other", .path = "/p/other.so", .fd = -1 };
	static char names[EXT_MAX_COUNTERS + 256][16];
	const struct op_host *h;
	struct ext_loader *l;
	struct op_log log;
	char *text = NULL, want[1024];
	size_t len = 0, i, n;
	unsigned wrong = 0;
	FILE *f;
	int rc;

	(void)state;
	f = open_memstream(&text, &len);
	assert_non_null(f);
	log_init(&log, f);
	l = ext_loader_new("/nonexistent", NULL, NULL, &log);
	assert_non_null(l);
	h = ext_host(l);
	fx.loader = other.loader = l;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		snprintf(names[i], sizeof(names[i]), "fill%zu", i);

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct reg_case *c = &cases[i];
		union payload p;

		other.in_init = true;
		if (c->before)
			assert_int_equal(reg_call(h, &other, c->kind, &c->p), 0);
		for (n = 0; n < c->fill; n++) {
			p = c->p;
			reg_rename(&p, c->kind, names[n]);
			if (reg_call(h, &other, c->kind, &p))
				fail_msg("%s: filling entry %zu was refused", c->what, n);
		}
		other.in_init = false;
		fx.in_init = true;
		if (c->before_self)
			assert_int_equal(reg_call(h, &fx, c->kind, &c->p), 0);

		fflush(f);
		fseeko(f, 0, SEEK_SET);
		fx.in_init = !c->outside_init;
		rc = reg_call(h, &fx, c->kind, c->null_payload ? NULL : &c->p);
		fx.in_init = false;
		fputc('\0', f);
		fflush(f);
		snprintf(want, sizeof(want), "oprofiled: plugin \"fx\" (/p/fx.so): %s\n", c->msg);
		if (rc != c->rc) {
			print_error("%s: returned %d, expected %d; log:\n%s", c->what, rc, c->rc,
				    text);
			wrong++;
		} else if (strcmp(text, want)) {
			print_error("%s: logged\n%sexpected\n%s", c->what, text, want);
			wrong++;
		}
		ext_reg_unregister(ext_registry(l), &fx);
		ext_reg_unregister(ext_registry(l), &other);
		fx.has_ud = other.has_ud = false;
	}
	ext_loader_free(l);
	fclose(f);
	free(text);
	assert_int_equal(wrong, 0);
}

/*
 * every case of the table refuses, and every kind has a NULL-description
 * case and, where it has a required member, a missing-member case
 */
static void test_table_covers_every_kind(void **state)
{
	unsigned seen[K_UDATA + 1] = { 0 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_true(cases[i].rc < 0);
		if (cases[i].null_payload)
			seen[cases[i].kind] |= 1;
		if (strstr(cases[i].msg, "is NULL (description size"))
			seen[cases[i].kind] |= 2;
	}
	seen[K_SFILE] |= 2; /* every sfile callback is optional */
	seen[K_UDATA] |= 2; /* data and free_func may be NULL */
	for (i = 0; i <= K_UDATA; i++)
		if (seen[i] != 3)
			fail_msg("registration kind %zu lacks a NULL-description or missing-member case",
				 i);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refusals_table),
		cmocka_unit_test(test_table_covers_every_kind),
	};

	return cmocka_run_group_tests_name("ext_reg", tests, NULL, NULL);
}
