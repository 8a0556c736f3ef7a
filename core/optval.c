/*
 * optval.c - the values of oprofiled's settings that the command line
 * (options.c) and the config file (config.c) both take: --separate and
 * --verbose lists, the session group, the image filter, plugin requests.
 * A leaf: it calls neither options.c nor config.c.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include "optval.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "op_mangle.h"
#include "options.h"

int optval_check_group(const char *name)
{
	struct group gr, *res = NULL;
	char buf[4096];
	int rc;

	if (!*name)
		return -ENOENT;
	rc = getgrnam_r(name, &gr, buf, sizeof(buf), &res);
	if (rc)
		return -rc;
	return res ? 0 : -ENOENT;
}

static const struct {
	const char *name;
	unsigned bits;
} optval_sep_names[] = {
	{ "none", OP_SEP_NONE },
	{ "lib", OP_SEP_LIB },
	{ "library", OP_SEP_LIB },
	/* as in OProfile: per-application kernel samples imply lib */
	{ "kernel", OP_SEP_KERNEL | OP_SEP_LIB },
	{ "thread", OP_SEP_THREAD },
	{ "cpu", OP_SEP_CPU },
	{ "all", OP_SEP_ALL },
	{ "cgroup", OP_SEP_CGROUP }, /* issue 20: needs the cgroup plugin */
}, optval_verbose_names[] = {
	{ "all", OP_VERBOSE_ALL },
	{ "sfile", OP_VERBOSE_SFILE },
	{ "arcs", OP_VERBOSE_ARCS },
	{ "samples", OP_VERBOSE_SAMPLES },
	{ "module", OP_VERBOSE_MODULE },
	{ "misc", OP_VERBOSE_MISC },
	{ "ext", OP_VERBOSE_EXT },
};

/* comma list of names from @tab (n entries) OR'ed into *out */
static int optval_parse_names(const char *what, const char *s, const void *tabp, size_t n,
			      const char *allowed, bool allow_empty, unsigned *out, char *err,
			      size_t err_len)
{
	const struct {
		const char *name;
		unsigned bits;
	} *tab = tabp;
	unsigned bits = 0;
	const char *p = s;

	if (!s || (!*s && !allow_empty)) {
		snprintf(err, err_len, "empty %s value - expected a comma list of %s", what,
			 allowed);
		return -EINVAL;
	}
	while (*p) {
		size_t len = strcspn(p, ","), i;

		for (i = 0; i < n; i++)
			if (strlen(tab[i].name) == len && !strncmp(tab[i].name, p, len))
				break;
		if (i == n) {
			snprintf(err, err_len, "unknown %s value \"%.*s\" - allowed: %s", what,
				 (int)len, p, allowed);
			return -EINVAL;
		}
		bits |= tab[i].bits;
		p += len;
		if (*p == ',') {
			p++;
			if (!*p) {
				snprintf(err, err_len, "trailing ',' in %s value \"%s\"", what, s);
				return -EINVAL;
			}
		}
	}
	*out = bits;
	return 0;
}

int optval_parse_separate(const char *s, unsigned *out, char *err, size_t err_len)
{
	return optval_parse_names("--separate", s, optval_sep_names,
				  sizeof(optval_sep_names) / sizeof(optval_sep_names[0]),
				  "none,lib,kernel,thread,cpu,all,cgroup", false, out, err, err_len);
}

int optval_parse_verbose(const char *s, unsigned *out, char *err, size_t err_len)
{
	return optval_parse_names("--verbose", s, optval_verbose_names,
				  sizeof(optval_verbose_names) / sizeof(optval_verbose_names[0]),
				  "all,sfile,arcs,samples,module,misc,ext", true, out, err, err_len);
}

void optval_free_strv(char **v)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

int optval_set_image(struct op_options *o, const char *s)
{
	size_t n = 1, i = 0;
	const char *p;
	char **v;

	for (p = s; *p; p++)
		n += *p == ',';
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (p = s;;) {
		size_t len = strcspn(p, ",");

		if (len) {
			v[i] = strndup(p, len);
			if (!v[i]) {
				optval_free_strv(v);
				return -ENOMEM;
			}
			i++;
		}
		if (!p[len])
			break;
		p += len + 1;
	}
	optval_free_strv(o->image_filter);
	o->image_filter = v;
	if (i == 0) { /* "" or ",": no filter */
		free(v);
		o->image_filter = NULL;
	}
	return 0;
}

void optval_free_feature(struct op_feature_req *f)
{
	free(f->name);
	free(f->args);
	free((char *)f->origin);
	memset(f, 0, sizeof(*f));
}

int optval_add_feature(struct op_options *o, const char *name, const char *args, const char *origin,
		       bool replace)
{
	struct op_feature_req nf = { 0 };
	size_t i;

	for (i = 0; i < o->nr_features; i++)
		if (!strcmp(o->features[i].name, name))
			break;
	if (i < o->nr_features && !replace)
		return -EEXIST;
	if (i == o->nr_features && o->nr_features == OP_MAX_FEATURES)
		return -ENOSPC;
	nf.name = strdup(name);
	nf.args = strdup(args ? args : "");
	nf.origin = strdup(origin);
	if (!nf.name || !nf.args || !nf.origin) {
		optval_free_feature(&nf);
		return -ENOMEM;
	}
	if (i < o->nr_features) {
		optval_free_feature(&o->features[i]);
	} else {
		o->nr_features++;
	}
	o->features[i] = nf;
	return 0;
}
