/*
 * op_cgroups.c - the stats/cgroups index: /proc/PID/cgroup parsed, the
 * container and unit a path names, lines written and read (op_cgroups.h).
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_cgroups.h"
#include "op_session_layout.h"

#define CG_LOAD_MAX (64u << 20)

int op_cgroup_from_proc(const char *buf, size_t len, char *path, size_t path_len)
{
	const char *best = NULL, *end = buf + len, *p = buf;
	size_t best_len = 0;
	int best_rank = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *c1, *c2;
		int rank;

		/* ID:CONTROLLERS:PATH, the PATH absolute */
		c1 = memchr(p, ':', (size_t)(le - p));
		c2 = c1 ? memchr(c1 + 1, ':', (size_t)(le - c1 - 1)) : NULL;
		if (c1 && c2 && c2 + 1 < le && c2[1] == '/') {
			if (c1 == p + 1 && p[0] == '0' && c2 == c1 + 1)
				rank = 3; /* the v2 line "0::/..." */
			else if ((size_t)(c2 - c1 - 1) == 12 && !memcmp(c1 + 1, "name=systemd", 12))
				rank = 2;
			else
				rank = 1;
			/* a hybrid host's v2 line may say "/" while a v1 one names the cgroup */
			if (le - c2 > 2)
				rank += 10;
			if (rank > best_rank) {
				best_rank = rank;
				best = c2 + 1;
				best_len = (size_t)(le - best);
			}
		}
		p = le + 1;
	}
	if (!best || best_len > OP_CGROUP_PATH_MAX || best_len >= path_len ||
	    memchr(best, '\0', best_len))
		return -EINVAL;
	memcpy(path, best, best_len);
	path[best_len] = '\0';
	return 0;
}

static bool cg_hex64(const char *s, size_t n)
{
	size_t i;

	if (n != 64)
		return false;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* a container runtime's name for a container: [PREFIX-]ID[.scope] */
static bool cg_container_of(const char *c, size_t n, char *id)
{
	static const char *const prefixes[] = { "docker-", "cri-containerd-", "crio-",
						"libpod-", "containerd-",     "" };
	size_t i;

	if (n > 6 && !memcmp(c + n - 6, ".scope", 6))
		n -= 6;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pl = strlen(prefixes[i]);

		if (n > pl && !memcmp(c, prefixes[i], pl) && cg_hex64(c + pl, n - pl)) {
			memcpy(id, c + pl, 64);
			id[64] = '\0';
			return true;
		}
	}
	return false;
}

void op_cgroup_ids(const char *path, struct op_cgroup_entry *e)
{
	const char *end = path + strlen(path);

	e->container[0] = e->unit[0] = '\0';
	/* innermost first: a container scope below a pod below a slice */
	while (end > path) {
		const char *c = end;
		size_t n;

		while (c > path && c[-1] != '/')
			c--;
		n = (size_t)(end - c);
		if (n && !e->container[0])
			cg_container_of(c, n, e->container);
		if (n && !e->unit[0] && n <= OP_CGROUP_UNIT_MAX &&
		    ((n > 8 && !memcmp(c + n - 8, ".service", 8)) ||
		     (n > 6 && !memcmp(c + n - 6, ".scope", 6)))) {
			memcpy(e->unit, c, n);
			e->unit[n] = '\0';
		}
		end = c > path ? c - 1 : path;
	}
}

static bool cg_plain(unsigned char c)
{
	return isalnum(c) || strchr("/._:@=+,~-", c);
}

/* @s escaped into @out (or "-" when empty); the new position, NULL if no room */
static char *cg_put(char *out, const char *lim, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	if (!*s) {
		if (out + 1 >= lim)
			return NULL;
		*out++ = '-';
		return out;
	}
	/* a value that is just "-" must not read back as "none" */
	bool dash = !strcmp(s, "-");

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (out + 3 >= lim)
			return NULL;
		if (cg_plain(c) && !dash) {
			*out++ = (char)c;
		} else {
			*out++ = '%';
			*out++ = hex[c >> 4];
			*out++ = hex[c & 15];
		}
	}
	return out;
}

int op_cgroup_format(const struct op_cgroup_entry *e, char *buf, size_t len)
{
	const char *lim = buf + len;
	char *p;
	int n;

	n = snprintf(buf, len, "%" PRIu32 " %" PRIu64 " ", e->tgid, e->start_ns);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	p = cg_put(buf + n, lim, e->cgroup);
	if (p && p + 1 < lim)
		*p++ = ' ';
	p = p ? cg_put(p, lim, e->container) : NULL;
	if (p && p + 1 < lim)
		*p++ = ' ';
	p = p ? cg_put(p, lim, e->unit) : NULL;
	if (!p || p + 1 >= lim)
		return -ENOSPC;
	*p++ = '\n';
	*p = '\0';
	return (int)(p - buf);
}

/* one escaped field [s, e) into @out (max @max bytes + NUL); "-" is empty */
static int cg_get(const char *s, const char *e, char *out, size_t max)
{
	size_t n = 0;

	if (e - s == 1 && *s == '-') {
		out[0] = '\0';
		return 0;
	}
	while (s < e) {
		int c = (unsigned char)*s++;

		if (c == '%') {
			char hex[3] = { 0 };

			if (e - s < 2 || !isxdigit((unsigned char)s[0]) ||
			    !isxdigit((unsigned char)s[1]))
				return -EINVAL;
			memcpy(hex, s, 2);
			c = (int)strtol(hex, NULL, 16);
			s += 2;
			if (!c)
				return -EINVAL;
		} else if (!cg_plain((unsigned char)c)) {
			return -EINVAL;
		}
		if (n == max)
			return -EINVAL;
		out[n++] = (char)c;
	}
	out[n] = '\0';
	return 0;
}

int op_cgroup_parse_line(const char *line, size_t len, struct op_cgroup_entry *e)
{
	const char *end = line + len, *f[5], *fe[5], *p = line;
	unsigned long long v;
	char num[24], *ep;
	int i;

	for (i = 0; i < 5; i++) {
		const char *sp;

		if (p >= end)
			return -EINVAL;
		sp = memchr(p, ' ', (size_t)(end - p));
		f[i] = p;
		fe[i] = sp ? sp : end;
		if (fe[i] == f[i] || (i < 4 && !sp) || (i == 4 && sp))
			return -EINVAL;
		p = fe[i] + 1;
	}
	for (i = 0; i < 2; i++) {
		size_t n = (size_t)(fe[i] - f[i]);

		if (n >= sizeof(num) || !isdigit((unsigned char)f[i][0]))
			return -EINVAL;
		memcpy(num, f[i], n);
		num[n] = '\0';
		errno = 0;
		v = strtoull(num, &ep, 10);
		if (errno || *ep || (i == 0 && v > UINT32_MAX))
			return -EINVAL;
		if (i == 0)
			e->tgid = (uint32_t)v;
		else
			e->start_ns = v;
	}
	e->ambiguous = false; /* issue 20: the index's to decide */
	if (cg_get(f[2], fe[2], e->cgroup, OP_CGROUP_PATH_MAX) || e->cgroup[0] != '/' ||
	    cg_get(f[3], fe[3], e->container, OP_CGROUP_ID_MAX) ||
	    cg_get(f[4], fe[4], e->unit, OP_CGROUP_UNIT_MAX))
		return -EINVAL;
	return 0;
}

int op_cgroups_load(int session_fd, int (*fn)(void *arg, const struct op_cgroup_entry *e),
		    void *arg, bool *found, size_t *bad)
{
	struct op_cgroup_entry *e;
	size_t nbad = 0, have = 0, cap = 65536;
	char *buf, *p, *nl;
	struct stat st;
	int fd, rc = 0;
	ssize_t n;
	size_t total = 0;

	if (found)
		*found = false;
	if (bad)
		*bad = 0;
	fd = openat(session_fd, OP_SESSION_CGROUPS_PATH,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (found)
		*found = true;
	buf = malloc(cap + 1);
	e = malloc(sizeof(*e));
	if (!buf || !e) {
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		n = have < cap ? read(fd, buf + have, cap - have) : 0;
		if (n < 0) {
			rc = -errno;
			break;
		}
		have += (size_t)n;
		total += (size_t)n;
		buf[have] = '\0';
		p = buf;
		while ((nl = memchr(p, '\n', have - (size_t)(p - buf)))) {
			if (*p != '#' && nl > p) {
				if (op_cgroup_parse_line(p, (size_t)(nl - p), e))
					nbad++;
				else if ((rc = fn(arg, e)))
					goto out;
			}
			p = nl + 1;
		}
		/* a line longer than the buffer is no line of ours */
		if (p == buf && have == cap) {
			nbad++;
			have = 0;
			continue;
		}
		memmove(buf, p, have - (size_t)(p - buf));
		have -= (size_t)(p - buf);
		if (n == 0 || total >= CG_LOAD_MAX) {
			if (have)
				nbad++; /* a last line without its newline: cut short */
			break;
		}
	}
out:
	if (bad)
		*bad = nbad;
	free(e);
	free(buf);
	close(fd);
	return rc;
}

struct cg_index_build {
	struct op_cgroup_index *x;
	size_t cap;
};

static int cg_index_one(void *arg, const struct op_cgroup_entry *e)
{
	struct cg_index_build *b = arg;

	if (b->x->n == b->cap) {
		size_t ncap = b->cap ? b->cap * 2 : 64;
		struct op_cgroup_entry *nv = realloc(b->x->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		b->x->v = nv;
		b->cap = ncap;
	}
	b->x->v[b->x->n++] = *e;
	return 0;
}

/* qsort_r order of line numbers: by tgid, then line */
static int cg_line_cmp(const void *a, const void *b, void *arg)
{
	const struct op_cgroup_entry *v = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;

	if (v[i].tgid != v[j].tgid)
		return v[i].tgid < v[j].tgid ? -1 : 1;
	return i < j ? -1 : i > j;
}

int op_cgroup_index_load(int session_fd, struct op_cgroup_index *x)
{
	struct cg_index_build b = { .x = x };
	struct op_cgroup_entry *out = NULL;
	size_t *ord = NULL, i, n = 0;
	int rc;

	memset(x, 0, sizeof(*x));
	rc = op_cgroups_load(session_fd, cg_index_one, &b, &x->found, &x->bad);
	if (!rc && x->n &&
	    (!(ord = malloc(x->n * sizeof(*ord))) || !(out = malloc(x->n * sizeof(*out)))))
		rc = -ENOMEM;
	if (rc) {
		free(ord);
		op_cgroup_index_free(x);
		return rc;
	}
	for (i = 0; i < x->n; i++)
		ord[i] = i;
	if (x->n)
		qsort_r(ord, x->n, sizeof(*ord), cg_line_cmp, x->v);
	/* a process moved then exec'd has a later line: the last one decides */
	for (i = 0; i < x->n; i++) {
		size_t first = i;

		while (i + 1 < x->n && x->v[ord[i + 1]].tgid == x->v[ord[i]].tgid)
			i++;
		out[n] = x->v[ord[i]];
		/* issue 20: a reused pid in another cgroup labels nothing */
		for (size_t j = first; j < i && !out[n].ambiguous; j++)
			out[n].ambiguous = op_cgroup_conflict(&x->v[ord[j]], &out[n]);
		x->reused += out[n].ambiguous;
		n++;
	}
	free(ord);
	free(x->v);
	x->v = out;
	x->n = n;
	return 0;
}

static int cg_tgid_cmp(const void *key, const void *elt)
{
	uint32_t k = *(const uint32_t *)key, t = ((const struct op_cgroup_entry *)elt)->tgid;

	return k < t ? -1 : k > t;
}

const struct op_cgroup_entry *op_cgroup_index_find(const struct op_cgroup_index *x, int32_t tgid)
{
	const struct op_cgroup_entry *e;
	uint32_t k = (uint32_t)tgid;

	if (tgid < 0 || !x->n)
		return NULL;
	e = bsearch(&k, x->v, x->n, sizeof(*x->v), cg_tgid_cmp);
	return e && !e->ambiguous ? e : NULL;
}

/* --- issue 20: reused pids --- */
bool op_cgroup_conflict(const struct op_cgroup_entry *a, const struct op_cgroup_entry *b)
{
	uint64_t d =
		a->start_ns > b->start_ns ? a->start_ns - b->start_ns : b->start_ns - a->start_ns;

	return d > OP_CGROUP_SAME_START_NS && strcmp(a->cgroup, b->cgroup) != 0;
}

int op_cgroup_index_copy(struct op_cgroup_index *dst, const struct op_cgroup_index *src)
{
	*dst = *src;
	dst->v = NULL;
	if (src->n && !(dst->v = malloc(src->n * sizeof(*dst->v)))) {
		dst->n = 0;
		return -ENOMEM;
	}
	if (src->n)
		memcpy(dst->v, src->v, src->n * sizeof(*dst->v));
	return 0;
}

void op_cgroup_index_free(struct op_cgroup_index *x)
{
	free(x->v);
	memset(x, 0, sizeof(*x));
}
