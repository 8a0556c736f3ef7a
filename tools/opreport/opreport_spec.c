/*
 * opreport_spec.c - the profile specification: "key:value[,value...]" words
 * parsed into one object, then matched against every sample file's parsed
 * name. Lists are OR-ed (fnmatch globs), different keys are AND-ed.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_cgroups.h"
#include "op_session_layout.h"
#include "opreport.h"

int strlist_add(struct strlist *l, const char *s)
{
	char **nv;

	if (strlist_has(l, s))
		return 0;
	nv = realloc(l->v, (l->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	l->v = nv;
	l->v[l->n] = strdup(s);
	if (!l->v[l->n])
		return -ENOMEM;
	l->n++;
	return 0;
}

int strlist_add_csv(struct strlist *l, const char *csv)
{
	char *dup = strdup(csv), *save = NULL, *tok;
	int ret = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		ret = strlist_add(l, tok);
		if (ret)
			break;
	}
	free(dup);
	return ret;
}

bool strlist_has(const struct strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], s))
			return true;
	return false;
}

void strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* Collapse "//", "/./" and "/../" of an absolute path in place. */
void spec_normalize_path(char *p)
{
	char *out = p, *in = p;

	while (*in) {
		if (in[0] == '/' && in[1] == '/') {
			in++;
			continue;
		}
		if (in[0] == '/' && in[1] == '.' && (in[2] == '/' || !in[2])) {
			in += 2;
			if (!*in && out == p)
				*out++ = '/';
			continue;
		}
		if (in[0] == '/' && in[1] == '.' && in[2] == '.' && (in[3] == '/' || !in[3])) {
			in += 3;
			while (out > p && *--out != '/')
				;
			if (!*in && out == p)
				*out++ = '/';
			continue;
		}
		*out++ = *in++;
	}
	*out = 0;
	if (!*p) {
		p[0] = '/';
		p[1] = 0;
	}
}

static int add_images(struct strlist *l, const char *csv, const char *cwd, char *err, size_t err_len)
{
	char *dup = strdup(csv), *save = NULL, *tok;
	int ret = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok && !ret; tok = strtok_r(NULL, ",", &save)) {
		char *abs;

		if (tok[0] == '/' || !strchr(tok, '/')) {
			/* absolute, or a bare name matched against basenames */
			abs = strdup(tok);
		} else if (asprintf(&abs, "%s/%s", cwd ? cwd : "", tok) < 0) {
			abs = NULL;
		}
		if (!abs) {
			ret = -ENOMEM;
			break;
		}
		if (abs[0] == '/')
			spec_normalize_path(abs);
		ret = strlist_add(l, abs);
		free(abs);
	}
	free(dup);
	if (ret == -ENOMEM)
		snprintf(err, err_len, "out of memory");
	return ret;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

static int check_numbers(const struct strlist *l, const char *key, bool allow_all, char *err,
			 size_t err_len)
{
	for (size_t i = 0; i < l->n; i++) {
		const char *v = l->v[i];

		if (all_digits(v) || (allow_all && !strcmp(v, "all")))
			continue;
		/* a glob over numbers is fine too */
		if (strpbrk(v, "*?[") && !strpbrk(v, "/"))
			continue;
		snprintf(err, err_len,
			 "bad profile specification \"%s:%s\": expected a decimal number%s or a glob",
			 key, v, allow_all ? ", \"all\"" : "");
		return -EINVAL;
	}
	return 0;
}

/* archive:DIR - an oparchive directory; one per specification */
static int spec_set_archive(struct rpt_spec *s, const char *dir, const char *cwd, char *err,
			    size_t err_len)
{
	struct stat st;
	char *abs;
	int se;

	if (dir[0] == '/')
		abs = strdup(dir);
	else if (asprintf(&abs, "%s/%s", cwd ? cwd : "", dir) < 0)
		abs = NULL;
	if (!abs) {
		snprintf(err, err_len, "out of memory");
		return -ENOMEM;
	}
	spec_normalize_path(abs);
	if (s->archive && strcmp(s->archive, abs)) {
		snprintf(err, err_len,
			 "bad profile specification \"archive:%s\": a second archive (archive:%s "
			 "was given before); one archive: at a time",
			 dir, s->archive);
		free(abs);
		return -EINVAL;
	}
	se = stat(abs, &st) ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (se) {
		snprintf(err, err_len, "bad profile specification \"archive:%s\": %s: %s", dir, abs,
			 strerror(se));
		free(abs);
		return -EINVAL;
	}
	free(s->archive);
	s->archive = abs;
	return 0;
}

int spec_add(struct rpt_spec *s, const char *word, const char *cwd, char *err, size_t err_len)
{
	static const struct {
		const char *key;
		size_t off;
		int kind; /* 0 plain, 1 image path, 2 number, 3 number or all */
	} keys[] = {
		{ "session", offsetof(struct rpt_spec, session), 0 },
		{ "session-exclude", offsetof(struct rpt_spec, session_exclude), 0 },
		{ "image", offsetof(struct rpt_spec, image), 1 },
		{ "image-exclude", offsetof(struct rpt_spec, image_exclude), 1 },
		{ "lib-image", offsetof(struct rpt_spec, lib_image), 1 },
		{ "event", offsetof(struct rpt_spec, event), 0 },
		{ "count", offsetof(struct rpt_spec, count), 2 },
		{ "unit-mask", offsetof(struct rpt_spec, unit_mask), 2 },
		{ "tid", offsetof(struct rpt_spec, tid), 3 },
		{ "tgid", offsetof(struct rpt_spec, tgid), 3 },
		{ "cpu", offsetof(struct rpt_spec, cpu), 3 },
		{ "cgroup", offsetof(struct rpt_spec, cgroup), 0 },
	};
	const char *colon = strchr(word, ':');
	const char *slash = strchr(word, '/');
	int ret;

	if (!*word) {
		snprintf(err, err_len, "bad profile specification: empty word");
		return -EINVAL;
	}
	if (colon && (!slash || colon < slash)) {
		size_t klen = (size_t)(colon - word);
		const char *val = colon + 1;

		if (klen == 7 && !strncmp(word, "archive", 7)) {
			if (!*val) {
				snprintf(err, err_len,
					 "bad profile specification \"%s\": no "
					 "directory after \"archive:\"",
					 word);
				return -EINVAL;
			}
			return spec_set_archive(s, val, cwd, err, err_len);
		}

		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
			struct strlist *l;

			if (strlen(keys[i].key) != klen || strncmp(word, keys[i].key, klen))
				continue;
			if (!*val) {
				snprintf(err, err_len,
					 "bad profile specification \"%s\": no value after \"%s:\"",
					 word, keys[i].key);
				return -EINVAL;
			}
			l = (struct strlist *)((char *)s + keys[i].off);
			if (keys[i].kind == 1)
				return add_images(l, val, cwd, err, err_len);
			ret = strlist_add_csv(l, val);
			if (ret) {
				snprintf(err, err_len, "out of memory");
				return ret;
			}
			if (keys[i].kind >= 2)
				return check_numbers(l, keys[i].key, keys[i].kind == 3, err,
						     err_len);
			return 0;
		}
		/* "lo:op" may simply be a file name with a colon */
		if (!access(word, F_OK))
			return add_images(&s->image, word, cwd, err, err_len);
		snprintf(err, err_len,
			 "bad profile specification \"%s\": unknown key \"%.*s\" (expected archive, "
			 "session, session-exclude, image, image-exclude, lib-image, event, count, "
			 "unit-mask, tid, tgid, cpu or cgroup)",
			 word, (int)klen, word);
		return -EINVAL;
	}
	/* a plain word is an image name */
	return add_images(&s->image, word, cwd, err, err_len);
}

static const char *base_name(const char *p)
{
	const char *b = strrchr(p, '/');

	return b ? b + 1 : p;
}

/* Does @pat (absolute glob or bare name glob) match the image path @path? */
static bool image_pat_match(const char *pat, const char *path)
{
	if (!path)
		return false;
	if (pat[0] == '/')
		return fnmatch(pat, path, 0) == 0;
	return fnmatch(pat, base_name(path), 0) == 0 || fnmatch(pat, path, 0) == 0;
}

static bool list_match_image(const struct strlist *l, const struct op_image_name *n)
{
	for (size_t i = 0; i < l->n; i++) {
		if (image_pat_match(l->v[i], n->path))
			return true;
		if (n->kind == OP_IMAGE_ANON && !fnmatch(l->v[i], "anon", 0))
			return true;
	}
	return false;
}

static bool list_match_str(const struct strlist *l, const char *v)
{
	if (!l->n)
		return true;
	for (size_t i = 0; i < l->n; i++)
		if (!fnmatch(l->v[i], v, 0))
			return true;
	return false;
}

static bool list_match_int(const struct strlist *l, long long v)
{
	char buf[32];

	if (!l->n)
		return true;
	if (v < 0)
		snprintf(buf, sizeof(buf), "all");
	else
		snprintf(buf, sizeof(buf), "%lld", v);
	return list_match_str(l, buf);
}

bool spec_match_noimage(const struct rpt_spec *s, const struct op_parsed_name *pn)
{
	return list_match_str(&s->event, pn->event) &&
	       list_match_int(&s->count, (long long)pn->count) &&
	       list_match_int(&s->unit_mask, pn->um) && list_match_int(&s->tid, pn->tid) &&
	       list_match_int(&s->tgid, pn->tgid) && list_match_int(&s->cpu, pn->cpu);
}

bool spec_match(const struct rpt_spec *s, const struct op_parsed_name *pn)
{
	bool is_lib = pn->app.path && pn->image.path &&
		      (pn->app.kind != pn->image.kind || strcmp(pn->app.path, pn->image.path));

	if (!spec_match_noimage(s, pn))
		return false;
	if (s->image.n && !list_match_image(&s->image, &pn->app) &&
	    !list_match_image(&s->image, &pn->image))
		return false;
	if (s->lib_image.n && !(is_lib && list_match_image(&s->lib_image, &pn->image)))
		return false;
	if (s->image_exclude.n && list_match_image(&s->image_exclude, &pn->image))
		return false;
	return true;
}

bool spec_match_session(const struct rpt_spec *s, const char *name)
{
	if (s->session.n) {
		if (!list_match_str(&s->session, name))
			return false;
	} else if (strcmp(name, OP_SESSION_CURRENT)) {
		return false;
	}
	for (size_t i = 0; i < s->session_exclude.n; i++)
		if (!fnmatch(s->session_exclude.v[i], name, 0))
			return false;
	return true;
}

void spec_free(struct rpt_spec *s)
{
	strlist_free(&s->session);
	strlist_free(&s->session_exclude);
	strlist_free(&s->image);
	strlist_free(&s->image_exclude);
	strlist_free(&s->lib_image);
	strlist_free(&s->event);
	strlist_free(&s->count);
	strlist_free(&s->unit_mask);
	strlist_free(&s->tid);
	strlist_free(&s->tgid);
	strlist_free(&s->cpu);
	strlist_free(&s->cgroup);
	free(s->archive);
	s->archive = NULL;
}

int spec_parse_demangle(const char *arg, enum rpt_demangle *dm)
{
	static const char *const names[] = { "none", "smart", "normal" };
	static const enum rpt_demangle modes[] = { DEMANGLE_NONE, DEMANGLE_SMART, DEMANGLE_NORMAL };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(arg, names[i])) {
			*dm = modes[i];
			return 0;
		}
	}
	return -EINVAL;
}

int spec_parse_merge(const char *arg, unsigned *merge, char *err, size_t err_len)
{
	static const struct {
		const char *name;
		unsigned bit;
	} m[] = {
		{ "lib", MERGE_LIB },       { "cpu", MERGE_CPU },           { "tid", MERGE_TID },
		{ "tgid", MERGE_TGID },     { "unitmask", MERGE_UNITMASK }, { "all", MERGE_ALL },
		{ "cgroup", MERGE_CGROUP }, /* issue 20 */
	};
	char *dup = strdup(arg), *save = NULL, *tok;
	int ret = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(m) / sizeof(m[0]) && strcmp(tok, m[i].name); i++)
			;
		if (i == sizeof(m) / sizeof(m[0])) {
			snprintf(err, err_len,
				 "--merge: unknown \"%s\" (expected a comma list of "
				 "lib, cpu, tid, tgid, unitmask, cgroup, all)",
				 tok);
			ret = -EINVAL;
			break;
		}
		*merge |= m[i].bit;
	}
	free(dup);
	return ret;
}

/* ------------------------------------------------------------------ */
/* cgroup: - processes by the session's cgroup index                   */
/* ------------------------------------------------------------------ */

static bool cg_entry_match(const struct rpt_spec *s, const struct op_cgroup_entry *e)
{
	for (size_t i = 0; i < s->cgroup.n; i++) {
		const char *v = s->cgroup.v[i];
		size_t n = strlen(v);

		if (!fnmatch(v, e->cgroup, 0) || (e->unit[0] && !strcmp(v, e->unit)) ||
		    (e->container[0] && n >= 12 && !strncmp(v, e->container, n)))
			return true;
	}
	return false;
}

/* issue 20: a split file's key, with the container and unit it names */
bool spec_cgroup_match_key(const struct rpt_spec *s, const char *key)
{
	static struct op_cgroup_entry e; /* large: not on the stack, reused per file */

	if (!key || strlen(key) >= sizeof(e.cgroup))
		return false;
	memset(&e, 0, sizeof(e));
	strcpy(e.cgroup, key);
	op_cgroup_ids(e.cgroup, &e);
	return cg_entry_match(s, &e);
}

static int cg_u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int spec_cgroup_load(const struct rpt_spec *s, int session_fd, struct rpt_tgids *out, char *err,
		     size_t err_len)
{
	struct op_cgroup_index x;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = op_cgroup_index_load(session_fd, &x);
	if (!rc && x.n && !(out->v = malloc(x.n * sizeof(*out->v))))
		rc = -ENOMEM;
	if (rc) {
		snprintf(err, err_len, "reading %s: %s", OP_SESSION_CGROUPS_PATH, strerror(-rc));
		op_cgroup_index_free(&x);
		spec_cgroup_free(out);
		return rc;
	}
	out->have_index = x.found;
	if (x.bad)
		fprintf(stderr, "opreport: warning: %zu malformed lines of %s skipped\n", x.bad,
			OP_SESSION_CGROUPS_PATH);
	if (x.reused)
		fprintf(stderr,
			"opreport: warning: %zu pids were reused in different cgroups in %s: "
			"cgroup: leaves them out (their files cannot say which process they hold); "
			"use --separate=cgroup\n",
			x.reused, OP_SESSION_CGROUPS_PATH);
	/* the index holds each tgid's deciding line, sorted by tgid; an ambiguous one none */
	for (size_t i = 0; i < x.n; i++)
		if (!x.v[i].ambiguous && cg_entry_match(s, &x.v[i]))
			out->v[out->n++] = x.v[i].tgid;
	op_cgroup_index_free(&x);
	return 0;
}

bool spec_cgroup_has(const struct rpt_tgids *t, int32_t tgid)
{
	uint32_t key = (uint32_t)tgid;

	if (tgid < 0 || !t->n)
		return false;
	return bsearch(&key, t->v, t->n, sizeof(*t->v), cg_u32_cmp) != NULL;
}

void spec_cgroup_free(struct rpt_tgids *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}
