/*
 * test_util.c - ELF symbol/section offsets and a sample-file walk for the
 * integration tests' checkers (see test_util.h).
 * SPDX-License-Identifier: MIT
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

struct tu_elf {
	const unsigned char *base;
	size_t len;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
};

static int tu_elf_open(const char *path, struct tu_elf *e)
{
	struct stat st;
	void *m;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		rc = -errno;
		close(fd);
		return rc;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	rc = m == MAP_FAILED ? -errno : 0;
	close(fd);
	if (rc)
		return rc;
	e->base = m;
	e->len = (size_t)st.st_size;
	e->eh = m;
	if (e->len < sizeof(*e->eh) || memcmp(e->eh->e_ident, ELFMAG, SELFMAG) ||
	    e->eh->e_ident[EI_CLASS] != ELFCLASS64) {
		munmap(m, e->len);
		return -ENOEXEC;
	}
	e->sh = (const Elf64_Shdr *)(e->base + e->eh->e_shoff);
	return 0;
}

int tu_elf_sym(const char *path, const char *name, unsigned tables, bool func_only,
	       uint64_t *start, uint64_t *end)
{
	struct tu_elf e;
	int i, rc = tu_elf_open(path, &e);

	if (rc)
		return rc;
	rc = -ENOENT;
	for (i = 0; i < e.eh->e_shnum && rc; i++) {
		const Elf64_Shdr *sh = &e.sh[i];
		const Elf64_Sym *sym;
		const char *str;
		size_t n, j;

		if (!((sh->sh_type == SHT_SYMTAB && (tables & TU_SYMTAB)) ||
		      (sh->sh_type == SHT_DYNSYM && (tables & TU_DYNSYM))))
			continue;
		sym = (const Elf64_Sym *)(e.base + sh->sh_offset);
		str = (const char *)e.base + e.sh[sh->sh_link].sh_offset;
		n = sh->sh_size / sizeof(*sym);
		for (j = 0; j < n; j++) {
			const Elf64_Shdr *sec;

			if ((func_only && ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC) ||
			    !sym[j].st_shndx || sym[j].st_shndx >= e.eh->e_shnum ||
			    strcmp(str + sym[j].st_name, name))
				continue;
			sec = &e.sh[sym[j].st_shndx];
			*start = sym[j].st_value - sec->sh_addr + sec->sh_offset;
			*end = *start + sym[j].st_size;
			rc = 0;
			break;
		}
	}
	munmap((void *)e.base, e.len);
	return rc;
}

int tu_elf_section(const char *path, const char *name, uint64_t *off)
{
	struct tu_elf e;
	const char *shstr;
	int i, rc = tu_elf_open(path, &e);

	if (rc)
		return rc;
	rc = -ENOENT;
	shstr = (const char *)e.base + e.sh[e.eh->e_shstrndx].sh_offset;
	for (i = 0; i < e.eh->e_shnum; i++)
		if (!strcmp(shstr + e.sh[i].sh_name, name)) {
			*off = e.sh[i].sh_offset;
			rc = 0;
			break;
		}
	munmap((void *)e.base, e.len);
	return rc;
}

int tu_walk(int dfd, const char *rel, void (*fn)(int dfd, const char *name, const char *rel))
{
	struct dirent *de;
	DIR *d = fdopendir(dfd);
	int rc = 0, r;

	if (!d) {
		rc = -errno;
		close(dfd);
		return rc;
	}
	while ((de = readdir(d))) {
		char sub[PATH_MAX * 2];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s%s%s", rel, rel[0] ? "/" : "", de->d_name);
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISDIR(st.st_mode)) {
			int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);

			if (fd >= 0) {
				r = tu_walk(fd, sub, fn);
				if (r && !rc)
					rc = r;
			}
		} else if (S_ISREG(st.st_mode)) {
			fn(dirfd(d), de->d_name, sub);
		}
	}
	closedir(d);
	return rc;
}
