/*
 * opreport_ksyms.c - symbols that do not come from an ELF file: the
 * session's kallsyms snapshot (kernel image and modules, keys relative to
 * the image start) and /tmp/perf-PID.map for anonymous (JIT) regions.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_ksyms.h"
#include "opreport.h"

static int push(struct rpt_symtab *t, uint64_t addr, uint64_t size, const char *name)
{
	struct rpt_sym *nv;

	if (t->n % 256 == 0) {
		nv = realloc(t->v, (t->n + 256) * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		t->v = nv;
	}
	t->v[t->n] = (struct rpt_sym){ .start = addr, .end = size ? addr + size : 0, .vma = addr };
	t->v[t->n].name = symtab_strdup(t, name);
	if (!t->v[t->n].name)
		return -ENOMEM;
	t->n++;
	return 0;
}

/* Base address of @module in a /proc/modules-format file (@fd, consumed), 0 if unknown. */
static uint64_t module_base(int fd, const char *module)
{
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	size_t cap = 0, len = strlen(module);
	char *line = NULL;
	uint64_t base = 0;
	ssize_t n;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		struct op_kmod_line m;

		if (op_kmods_parse_line(line, &m) || memchr(line, '\0', (size_t)n))
			continue;
		if (m.name_len == len && !memcmp(m.name, module, len)) {
			base = m.addr;
			break;
		}
	}
	free(line);
	fclose(f);
	return base;
}

int ksym_load_kernel(struct rpt_symtab *t, int fd, const char *kallsyms, const char *module,
		     int modules_fd, char *err, size_t err_len)
{
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	uint64_t start = 0, lowest = UINT64_MAX;
	struct op_ksyms_text text;
	unsigned bad = 0, zero = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int ret = 0;

	if (!f) {
		ret = fd >= 0 ? -errno : -EBADF;
		if (fd >= 0)
			close(fd);
		if (modules_fd >= 0)
			close(modules_fd);
		snprintf(err, err_len, "kernel symbols: cannot read %s: %s", kallsyms,
			 strerror(-ret));
		return ret;
	}
	/* the daemon's reading (lib/op_ksyms.h): the same lines, functions and key origin */
	op_ksyms_text_init(&text);
	while ((n = getline(&line, &cap, f)) > 0) {
		struct op_ksym_line k;
		char *name;

		if (op_ksyms_parse_line(line, &k) || memchr(line, '\0', (size_t)n)) {
			bad++;
			continue;
		}
		if (!op_ksyms_is_text(k.type) || !op_ksyms_in_image(&k, module))
			continue;
		if (!module)
			op_ksyms_text_add(&text, &k);
		if (!k.addr) {
			zero++; /* hidden (kptr_restrict): nowhere to place it */
			continue;
		}
		if (k.addr < lowest)
			lowest = k.addr;
		name = line + (k.name - line);
		name[k.name_len] = '\0';
		ret = push(t, k.addr, 0, name);
		if (ret)
			break;
	}
	if (!ret && n < 0 && errno == ENOMEM && !feof(f))
		ret = -ENOMEM;
	free(line);
	fclose(f);
	if (ret || !module) {
		if (modules_fd >= 0)
			close(modules_fd);
		modules_fd = -1;
	}
	if (ret) {
		snprintf(err, err_len, "kernel symbols: out of memory");
		return ret;
	}
	if (bad)
		txt_warn("%s: %u malformed line(s) ignored (expected \"address type name [module]\")",
			 kallsyms, bad);
	if (!t->n && (zero || module)) {
		if (modules_fd >= 0)
			close(modules_fd);
		if (zero) {
			snprintf(err, err_len,
				 "%s: all addresses are zero (snapshot taken without "
				 "permission to read kernel addresses)",
				 kallsyms);
			return -EINVAL;
		}
		snprintf(err, err_len, "no symbols of module %s in the kernel symbol snapshot %s",
			 module, kallsyms);
		return -ENOENT;
	}
	if (module) {
		start = module_base(modules_fd, module);
		if (!start)
			start = lowest;
	} else if (!op_ksyms_text_start(&text, &start)) {
		start = lowest; /* pseudo-module symbols only */
	}
	/* keys are pc - image start */
	for (size_t i = 0; i < t->n; i++) {
		t->v[i].start -= start;
		t->v[i].end = 0;
	}
	t->vma_bias = start;
	symtab_finish(t);
	return 0;
}

static int ksym_name_cmp(const void *a, const void *b)
{
	const struct rpt_sym *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

/* Does a symbol of @t (sorted by key) start at @key? */
static bool ksym_starts_at(const struct rpt_symtab *t, uint64_t key)
{
	const struct rpt_sym *s = sym_lookup(t, key);

	return s && s->start == key;
}

int ksym_check_vmlinux(const struct rpt_symtab *ks, const struct rpt_symtab *vm, const char *file,
		       char *why, size_t why_len)
{
	const struct rpt_sym **by_name = malloc((ks->n ? ks->n : 1) * sizeof(*by_name));
	size_t common = 0;
	int ret = 0;

	if (!by_name) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	for (size_t i = 0; i < ks->n; i++)
		by_name[i] = &ks->v[i];
	if (ks->n)
		qsort(by_name, ks->n, sizeof(*by_name), ksym_name_cmp);
	for (size_t i = 0; i < vm->n && !ret; i++) {
		const struct rpt_sym *v = &vm->v[i], *key = v, **hit;
		size_t lo, hi;
		bool same = false;

		hit = ks->n ? bsearch(&key, by_name, ks->n, sizeof(*by_name), ksym_name_cmp) : NULL;
		if (!hit)
			continue;
		common++;
		/* a name the kernel has several times: any of its places */
		for (lo = (size_t)(hit - by_name); lo && !strcmp(by_name[lo - 1]->name, v->name);
		     lo--)
			;
		for (hi = lo; hi < ks->n && !strcmp(by_name[hi]->name, v->name); hi++)
			same |= by_name[hi]->start == v->start;
		/*
		 * The snapshot keeps one name per address: where it has another
		 * symbol starting at the same key, this name may be its alias.
		 */
		if (same || ksym_starts_at(ks, v->start))
			continue;
		snprintf(why, why_len,
			 "%s is at 0x%" PRIx64 " in %s but at 0x%" PRIx64
			 " in the session's kallsyms snapshot",
			 v->name, v->start + vm->vma_bias, file, by_name[lo]->start + ks->vma_bias);
		ret = -EINVAL;
	}
	free(by_name);
	if (!ret && !common) {
		snprintf(why, why_len,
			 "none of the %zu symbols of %s is in the session's kallsyms snapshot",
			 vm->n, file);
		ret = -EINVAL;
	}
	return ret;
}

int ksym_open_perfmap(const char *map, char *err, size_t err_len)
{
	int fd = open(map, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), rc;
	uid_t me = geteuid();
	struct stat st;

	if (fd < 0) {
		rc = -errno;
		if (rc != -ENOENT)
			snprintf(err, err_len, "%s",
				 rc == -ELOOP ? "a symbolic link, not followed" : strerror(-rc));
		return rc;
	}
	if (fstat(fd, &st)) {
		rc = -errno;
		snprintf(err, err_len, "%s", strerror(-rc));
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = -EINVAL;
		snprintf(err, err_len, "%s",
			 S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file" : "not a regular file");
	} else if (st.st_uid && st.st_uid != me) {
		rc = -EPERM;
		snprintf(err, err_len,
			 "owned by uid %u, neither root nor the user running opreport (uid %u)",
			 (unsigned)st.st_uid, (unsigned)me);
	} else if (!st.st_uid && (st.st_mode & (S_IWGRP | S_IWOTH))) {
		rc = -EPERM;
		snprintf(err, err_len, "owned by root but group or world writable (mode %04o)",
			 (unsigned)(st.st_mode & 07777));
	} else {
		return fd;
	}
out_close:
	close(fd);
	return rc;
}

int ksym_load_perfmap(struct rpt_symtab *t, int fd, const char *map, uint64_t anon_start, char *err,
		      size_t err_len)
{
	FILE *f = fdopen(fd, "r");
	char line[4096];
	int ret = 0;

	if (!f) {
		ret = -errno;
		close(fd);
		snprintf(err, err_len, "%s: %s", map, strerror(-ret));
		return ret;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr, size;
		int off = 0;
		char *name;

		if (sscanf(line, "%llx %llx %n", &addr, &size, &off) < 2 || !off)
			continue;
		name = line + off;
		name[strcspn(name, "\n")] = 0;
		if (!*name || addr < anon_start)
			continue;
		ret = push(t, addr - anon_start, size, name);
		if (ret)
			break;
		t->v[t->n - 1].vma = addr;
	}
	fclose(f);
	if (ret) {
		snprintf(err, err_len, "%s: out of memory", map);
		return ret;
	}
	t->vma_bias = anon_start;
	symtab_finish(t);
	return 0;
}
