/*
 * ext.c - the plugin loader's API: loads plugins (ext_probe.c finds and
 * checks the file), runs ext_init with the host service table (ext_host.c),
 * keeps every registration (ext_reg.c) owned by its plugin, rolls a failed
 * init back completely (and unloads a plugin no longer needed the same way),
 * and answers lookups, stats and --list-plugins.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ext_int.h"
#include "options.h"

/* plugin names: see ext.h */
bool ext_name_valid(const char *name)
{
	size_t i;

	if (!name || !*name || strlen(name) > EXT_NAME_MAX)
		return false;
	for (i = 0; name[i]; i++) {
		char c = name[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '-'))
			return false;
	}
	return true;
}

struct ext_loader *ext_loader_new(const char *plugin_dir, void *config,
				  struct ext_core_services *core, struct op_log *log)
{
	struct ext_loader *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->plugin_dir = strdup(plugin_dir ? plugin_dir : "");
	if (!l->plugin_dir) {
		free(l);
		return NULL;
	}
	l->config = config;
	l->core = core;
	l->log = log;
	l->log_limit = 100;
	l->log_window_ms = 10000;
	ext_host_init(l);
	return l;
}

void ext_loader_set_core(struct ext_loader *l, struct ext_core_services *core)
{
	l->core = core;
	ext_host_bind(l);
}

void ext_loader_set_log_limit(struct ext_loader *l, unsigned max_messages, unsigned window_ms)
{
	size_t i;

	l->log_limit = max_messages;
	l->log_window_ms = window_ms;
	for (i = 0; i < l->nr_plugins; i++)
		log_limit_init(&l->plugins[i]->limit, max_messages, window_ms);
}

void ext_loader_set_verbose(struct ext_loader *l, bool verbose)
{
	l->verbose = verbose;
}

const struct op_host *ext_host(struct ext_loader *l)
{
	ext_host_bind(l);
	return &l->host;
}

const char *ext_name(const op_ext_t *ctx)
{
	return ctx ? ctx->name : "core";
}

size_t ext_nr_plugins(const struct ext_loader *l)
{
	return l->nr_plugins;
}

op_ext_t *ext_plugin(struct ext_loader *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->nr_plugins; i++)
		if (!strcmp(l->plugins[i]->name, name))
			return l->plugins[i];
	return NULL;
}

/* a plugin's own state goes last: after ext_deinit, or after a failed ext_init */
static void ext_free_user_data(op_ext_t *ctx)
{
	if (ctx->has_ud && ctx->ud.free_func)
		ctx->ud.free_func(ctx->ud.data);
	ctx->has_ud = false;
}

static void ext_ctx_free(op_ext_t *ctx)
{
	if (!ctx)
		return;
	free(ctx->name);
	free(ctx->path);
	free(ctx->origin);
	free(ctx);
}

/*
 * Take @ctx out again, whether its ext_init failed (never in l->plugins) or
 * it ran (ext_unload): ext_deinit if init succeeded, every registration,
 * its state, the object and the context. One path for both, so an unloaded
 * plugin leaves exactly what a refused one leaves: nothing.
 */
static void ext_unload_ctx(struct ext_loader *l, op_ext_t *ctx)
{
	if (ctx->initialized && ctx->desc.ext_deinit)
		ctx->desc.ext_deinit(ctx);
	if (ctx->initialized && (ctx->desc.flags & OP_EXT_F_NO_EVENT_OK))
		l->reg.no_event_ok--;
	ext_reg_unregister(&l->reg, ctx);
	ext_free_user_data(ctx);
	ext_probe_unload(ctx->handle, ctx->fd);
	ext_ctx_free(ctx);
}

int ext_unload(struct ext_loader *l, const char *name, const char *why)
{
	const char *busy;
	op_ext_t *ctx;
	size_t i;

	ctx = name ? ext_plugin(l, name) : NULL;
	if (!ctx)
		return -ENOENT;
	busy = ext_reg_held(&l->reg, ctx);
	if (busy) {
		ext_log_msg(l, false, "plugin \"%s\" stays loaded: it registered %s, in use", name,
			    busy);
		return -EBUSY;
	}
	for (i = 0; l->plugins[i] != ctx; i++)
		;
	memmove(&l->plugins[i], &l->plugins[i + 1], (l->nr_plugins - i - 1) * sizeof(ctx));
	l->plugins[--l->nr_plugins] = NULL;
	ext_log_msg(l, false, "plugin \"%s\" (%s) unloaded: %s", name, ctx->path,
		    why ? why : "not needed");
	ext_unload_ctx(l, ctx);
	return 0;
}

int ext_load(struct ext_loader *l, const char *name, const char *args, const char *origin)
{
	struct ext_probe p;
	char why[PATH_MAX + 512];
	op_ext_t *ctx, *old;
	int rc;

	if (!origin)
		origin = "caller";
	old = name ? ext_plugin(l, name) : NULL;
	if (old) {
		ext_log_msg(l, true,
			    "plugin \"%s\" (%s): requested again by %s, already loaded by %s - give it once",
			    name, old->path, origin, old->origin);
		return -EEXIST;
	}
	if (l->nr_plugins == EXT_MAX_PLUGINS) {
		ext_log_msg(l, true,
			    "plugin \"%s\": more than %d plugins requested (%s) - load fewer", name,
			    EXT_MAX_PLUGINS, origin);
		return -ENOSPC;
	}
	rc = ext_probe_plugin(l->plugin_dir, name, &p, why, sizeof(why));
	if (rc) {
		ext_log_msg(l, true, "plugin \"%s\" (%s): %s [requested by %s]", name ? name : "",
			    p.path, why, origin);
		return rc;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		goto out_nomem;
	ctx->loader = l;
	log_limit_init(&ctx->limit, l->log_limit, l->log_window_ms);
	ctx->name = strdup(name);
	ctx->path = strdup(p.real);
	ctx->origin = strdup(origin);
	if (!ctx->name || !ctx->path || !ctx->origin)
		goto out_nomem;
	ctx->handle = p.handle;
	ctx->fd = p.fd;
	ctx->desc = p.desc;

	ext_host_bind(l);
	ctx->in_init = true;
	rc = ctx->desc.ext_init(ctx, &l->host, args ? args : "");
	ctx->in_init = false;
	if (rc) {
		ext_log_msg(l, true,
			    "plugin \"%s\" (%s): ext_init failed with %d (%s) - see the plugin's messages "
			    "above; everything it registered was rolled back",
			    name, ctx->path, rc, rc < 0 ? strerror(-rc) : "not a -errno value");
		ext_unload_ctx(l, ctx);
		return rc < 0 ? rc : -EINVAL;
	}
	ctx->initialized = true;
	if (ctx->desc.flags & OP_EXT_F_NO_EVENT_OK)
		l->reg.no_event_ok++;
	l->plugins[l->nr_plugins++] = ctx;
	if (l->verbose)
		ext_log_msg(l, false, "plugin \"%s\" %s (SDK %u.%u) loaded from %s", name,
			    ctx->desc.version, ctx->desc.abi_major, ctx->desc.abi_minor, ctx->path);
	return 0;

out_nomem:
	ext_log_msg(l, true, "plugin \"%s\": out of memory", name);
	ext_ctx_free(ctx);
	ext_probe_unload(p.handle, p.fd);
	return -ENOMEM;
}

int ext_load_all(struct ext_loader *l, const struct op_options *o)
{
	size_t i;
	int rc;

	for (i = 0; i < o->nr_features; i++) {
		rc = ext_load(l, o->features[i].name, o->features[i].args, o->features[i].origin);
		if (rc)
			return rc;
	}
	return 0;
}

struct ext_registry *ext_registry(struct ext_loader *l)
{
	ext_host_bind(l);
	return &l->reg;
}

struct ext_stats_out {
	FILE *out;
};

static void ext_sink_counter(const struct op_stats_sink *sink, const char *name, uint64_t value)
{
	const struct ext_stats_out *s = sink->opaque;

	fprintf(s->out, "%s: %" PRIu64 "\n", name ? name : "?", value);
}

static void ext_sink_text(const struct op_stats_sink *sink, const char *line)
{
	const struct ext_stats_out *s = sink->opaque;

	fprintf(s->out, "%s\n", line ? line : "");
}

void ext_print_stats(struct ext_loader *l, FILE *out)
{
	struct ext_stats_out so = { .out = out };
	struct op_stats_sink sink = {
		.size = sizeof(sink),
		.opaque = &so,
		.counter = ext_sink_counter,
		.text = ext_sink_text,
	};
	size_t i, k;

	for (i = 0; i < l->nr_plugins; i++) {
		fprintf(out, "-- plugin %s --\n", l->plugins[i]->name);
		for (k = 0; k < l->reg.nr_stats; k++)
			if (l->reg.stats[k].owner == l->plugins[i])
				l->reg.stats[k].ops.print_stats(l->reg.stats[k].priv, &sink);
	}
	fflush(out);
}

static int ext_cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ext_list_plugins(const char *plugin_dir, FILE *out)
{
	char **names = NULL, why[PATH_MAX + 512];
	size_t n = 0, cap = 0, i;
	struct ext_probe p;
	struct dirent *de;
	DIR *d;

	d = opendir(plugin_dir ? plugin_dir : "");
	if (!d) {
		int e = errno;

		fprintf(out,
			"oprofiled: cannot list plugin directory \"%s\": %s - set --plugin-dir, "
			"plugin_dir in the config file or OP_PLUGIN_DIR\n",
			plugin_dir ? plugin_dir : "", strerror(e));
		return -e;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (de->d_name[0] == '.' || len < 4 || strcmp(de->d_name + len - 3, ".so"))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 16) * sizeof(*names));

			if (!nn)
				break;
			names = nn;
		}
		names[n] = strndup(de->d_name, len - 3);
		if (names[n])
			n++;
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), ext_cmp_str);
	fprintf(out, "plugins in %s (oprofiled SDK %d.%d):\n", plugin_dir, OP_SDK_MAJOR,
		OP_SDK_MINOR);
	if (!n)
		fprintf(out, "  (none)\n");
	for (i = 0; i < n; i++) {
		if (ext_probe_plugin(plugin_dir, names[i], &p, why, sizeof(why)) == 0) {
			fprintf(out, "  %-12s %-8s SDK %u.%u  %s\n", names[i], p.desc.version,
				p.desc.abi_major, p.desc.abi_minor, p.desc.summary);
			ext_probe_unload(p.handle, p.fd);
		} else {
			fprintf(out, "  %-12s REFUSED: %s\n", names[i], why);
		}
		free(names[i]);
	}
	free(names);
	fflush(out);
	return 0;
}

void ext_loader_free(struct ext_loader *l)
{
	size_t i;

	if (!l)
		return;
	for (i = l->nr_plugins; i-- > 0;)
		if (l->plugins[i]->initialized && l->plugins[i]->desc.ext_deinit)
			l->plugins[i]->desc.ext_deinit(l->plugins[i]);
	for (i = l->nr_plugins; i-- > 0;)
		ext_free_user_data(l->plugins[i]);
	for (i = l->nr_plugins; i-- > 0;)
		ext_reg_unregister(&l->reg, l->plugins[i]);
	for (i = l->nr_plugins; i-- > 0;) {
		ext_probe_unload(l->plugins[i]->handle, l->plugins[i]->fd);
		ext_ctx_free(l->plugins[i]);
	}
	free(l->plugin_dir);
	free(l);
}
