/*
 * op_buildid.c - the GNU build-id note of an ELF file and the session's
 * build-id index (format in op_buildid.h). Everything read is bounded: a
 * few header tables and note regions of at most 64 KiB each, 1 MiB in all,
 * whatever the file says about itself.
 * SPDX-License-Identifier: MIT
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_buildid.h"

#define ELF_TABLE_MAX (64 * 1024)  /* program or section header table */
#define ELF_NOTES_MAX (64 * 1024)  /* one note region */
#define ELF_READ_BUDGET (1u << 20) /* all reads of one file */
#define ELF_NOTE_REGIONS 64
#define INDEX_MAX_BYTES (64u << 20)

struct elf_rd {
	int fd;
	bool is64, swap;
	uint64_t fsize;
	size_t budget; /* bytes still allowed */
};

static uint16_t rd16(const struct elf_rd *r, const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, 2);
	return r->swap ? __builtin_bswap16(v) : v;
}

static uint32_t rd32(bool swap, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const struct elf_rd *r, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return r->swap ? __builtin_bswap64(v) : v;
}

/* a word: 8 bytes in ELF64, 4 in ELF32 */
static uint64_t rdw(const struct elf_rd *r, const uint8_t *p)
{
	return r->is64 ? rd64(r, p) : rd32(r->swap, p);
}

/*
 * Read exactly @len bytes at @off into a new buffer, within the file and
 * the budget. NULL with *@rc -EINVAL (out of the file or budget), -ENOMEM
 * or -errno.
 */
static uint8_t *elf_read(struct elf_rd *r, uint64_t off, size_t len, int *rc)
{
	uint8_t *buf;
	size_t got = 0;

	*rc = -EINVAL;
	if (!len || len > r->budget || off > r->fsize || len > r->fsize - off)
		return NULL;
	buf = malloc(len);
	if (!buf) {
		*rc = -ENOMEM;
		return NULL;
	}
	r->budget -= len;
	while (got < len) {
		ssize_t n = pread(r->fd, buf + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*rc = n < 0 ? -errno : -EINVAL; /* shrunk under us */
			free(buf);
			return NULL;
		}
		got += (size_t)n;
	}
	*rc = 0;
	return buf;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* the GNU build-id note in @len bytes of notes aligned to @align (4 or 8) */
static int notes_find(const uint8_t *buf, size_t len, uint64_t align, bool swap, uint8_t *id,
		      size_t *id_len)
{
	uint64_t off = 0;

	while (off + 12 <= len) {
		uint32_t namesz = rd32(swap, buf + off), descsz = rd32(swap, buf + off + 4);
		uint32_t type = rd32(swap, buf + off + 8);
		uint64_t name = off + 12, desc = name + align_up(namesz, align);

		if (desc > len || descsz > len - desc)
			return -EINVAL;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + name, "GNU", 4)) {
			if (!descsz || descsz > OP_BUILDID_MAX)
				return -EINVAL;
			memcpy(id, buf + desc, descsz);
			*id_len = descsz;
			return 0;
		}
		off = desc + align_up(descsz, align);
	}
	return -ENOENT;
}

int op_buildid_from_notes(const void *buf, size_t len, uint8_t *id, size_t *id_len)
{
	*id_len = 0;
	return notes_find(buf, len, 4, false, id, id_len);
}

/* the notes of [@off, @off + @size) aligned to @align */
static int elf_region(struct elf_rd *r, uint64_t off, uint64_t size, uint64_t align,
		      struct op_elf_ids *ids)
{
	uint8_t *buf;
	int rc;

	if (!size)
		return -ENOENT;
	if (size > ELF_NOTES_MAX)
		size = ELF_NOTES_MAX; /* the build ID comes first in every linker's layout */
	buf = elf_read(r, off, (size_t)size, &rc);
	if (!buf)
		return rc;
	rc = notes_find(buf, (size_t)size, align == 8 ? 8 : 4, r->swap, ids->id, &ids->id_len);
	free(buf);
	return rc;
}

/* the section header table: the real phnum (PN_XNUM) and the SHT_NOTE sections */
static int elf_sections(struct elf_rd *r, const uint8_t *eh, uint32_t *phnum,
			struct op_elf_ids *ids, bool want_notes)
{
	uint64_t shoff = rdw(r, eh + (r->is64 ? 0x28 : 0x20));
	size_t shentsize = rd16(r, eh + (r->is64 ? 0x3a : 0x2e));
	size_t shnum = rd16(r, eh + (r->is64 ? 0x3c : 0x30));
	size_t need = r->is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr), i, regions = 0;
	uint8_t *tab;
	int rc;

	if (!shoff || shentsize < need)
		return -ENOENT;
	if (!shnum) {
		/* more than SHN_LORESERVE sections: the count is in section 0 */
		tab = elf_read(r, shoff, need, &rc);
		if (!tab)
			return rc;
		shnum = (size_t)rdw(r, tab + (r->is64 ? 0x20 : 0x14));
		free(tab);
	}
	if (*phnum == PN_XNUM) {
		tab = elf_read(r, shoff, need, &rc);
		if (!tab)
			return rc;
		*phnum = rd32(r->swap, tab + (r->is64 ? 0x2c : 0x1c)); /* sh_info */
		free(tab);
	}
	if (!want_notes)
		return -ENOENT;
	if (!shnum || shnum > ELF_TABLE_MAX / shentsize)
		return -EINVAL;
	tab = elf_read(r, shoff, shnum * shentsize, &rc);
	if (!tab)
		return rc;
	rc = -ENOENT;
	for (i = 0; i < shnum && regions < ELF_NOTE_REGIONS; i++) {
		const uint8_t *s = tab + i * shentsize;
		uint64_t off, size, align;

		if (rd32(r->swap, s + 4) != SHT_NOTE)
			continue;
		off = rdw(r, s + (r->is64 ? 0x18 : 0x10));
		size = rdw(r, s + (r->is64 ? 0x20 : 0x14));
		align = rdw(r, s + (r->is64 ? 0x30 : 0x20));
		regions++;
		rc = elf_region(r, off, size, align, ids);
		if (rc == 0 || rc == -ENOMEM)
			break;
	}
	free(tab);
	return rc;
}

int op_elf_ids_from_fd(int fd, struct op_elf_ids *ids)
{
	struct elf_rd r = { .fd = fd, .budget = ELF_READ_BUDGET };
	uint8_t *eh, *ph = NULL;
	uint32_t phnum;
	size_t phentsize, need, i, regions = 0;
	uint64_t phoff;
	struct stat st;
	int rc, found = -ENOENT;

	memset(ids, 0, sizeof(*ids));
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	r.fsize = (uint64_t)st.st_size;
	eh = elf_read(&r, 0, r.fsize < 64 ? (size_t)r.fsize : 64, &rc);
	if (!eh)
		return rc;
	rc = -EINVAL;
	if (r.fsize < EI_NIDENT || memcmp(eh, ELFMAG, SELFMAG) || eh[EI_VERSION] != EV_CURRENT ||
	    (eh[EI_CLASS] != ELFCLASS32 && eh[EI_CLASS] != ELFCLASS64) ||
	    (eh[EI_DATA] != ELFDATA2LSB && eh[EI_DATA] != ELFDATA2MSB))
		goto out;
	r.is64 = eh[EI_CLASS] == ELFCLASS64;
	r.swap = (eh[EI_DATA] == ELFDATA2LSB) != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
	if (r.fsize < (r.is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		goto out;
	phoff = rdw(&r, eh + (r.is64 ? 0x20 : 0x1c));
	phentsize = rd16(&r, eh + (r.is64 ? 0x36 : 0x2a));
	phnum = rd16(&r, eh + (r.is64 ? 0x38 : 0x2c));
	need = r.is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	if (phnum == PN_XNUM && elf_sections(&r, eh, &phnum, ids, false) == -ENOMEM) {
		rc = -ENOMEM;
		goto out;
	}
	if (phoff && phnum && phnum != PN_XNUM) {
		if (phentsize < need || phnum > ELF_TABLE_MAX / phentsize)
			goto out;
		ph = elf_read(&r, phoff, phnum * phentsize, &rc);
		if (!ph)
			goto out;
		for (i = 0; i < phnum; i++) {
			const uint8_t *p = ph + i * phentsize;
			uint32_t type = rd32(r.swap, p), flags;
			uint64_t off, vaddr, filesz, align;

			/* ELF64: type flags offset vaddr paddr filesz memsz align */
			/* ELF32: type offset vaddr paddr filesz memsz flags align */
			flags = rd32(r.swap, p + (r.is64 ? 4 : 24));
			off = rdw(&r, p + (r.is64 ? 8 : 4));
			vaddr = rdw(&r, p + (r.is64 ? 16 : 8));
			filesz = rdw(&r, p + (r.is64 ? 32 : 16));
			align = rdw(&r, p + (r.is64 ? 48 : 28));
			if (type == PT_LOAD && (flags & PF_X) && !ids->text_size && filesz) {
				ids->text_off = off;
				ids->text_vaddr = vaddr;
				ids->text_size = filesz;
			}
			if (type == PT_NOTE && found && regions < ELF_NOTE_REGIONS) {
				regions++;
				found = elf_region(&r, off, filesz, align, ids);
				if (found == -ENOMEM) {
					rc = found;
					goto out;
				}
			}
		}
	}
	/* no PT_NOTE with it (a relocatable object, a stripped-down debug file) */
	if (found)
		found = elf_sections(&r, eh, &phnum, ids, true);
	rc = found == -ENOMEM ? found : 0;
	if (found)
		ids->id_len = 0;
out:
	free(ph);
	free(eh);
	return rc;
}

int op_buildid_from_fd(int fd, uint8_t *id, size_t *len)
{
	struct op_elf_ids ids;
	int rc = op_elf_ids_from_fd(fd, &ids);

	*len = 0;
	if (rc)
		return rc;
	if (!ids.id_len)
		return -ENOENT;
	memcpy(id, ids.id, ids.id_len);
	*len = ids.id_len;
	return 0;
}

char *op_buildid_hex(const uint8_t *id, size_t len, char *out, size_t out_len)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (!out_len)
		return out;
	for (i = 0; i < len && 2 * i + 2 < out_len; i++) {
		out[2 * i] = digits[id[i] >> 4];
		out[2 * i + 1] = digits[id[i] & 15];
	}
	out[2 * i] = 0;
	return out;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int parse_hex_n(const char *hex, size_t n, uint8_t *id, size_t *len)
{
	size_t i;

	if (n < 2 || n % 2 || n > 2 * OP_BUILDID_MAX)
		return -EINVAL;
	for (i = 0; i < n; i += 2) {
		int hi = hexval(hex[i]), lo = hexval(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		id[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	*len = n / 2;
	return 0;
}

int op_buildid_parse_hex(const char *hex, uint8_t *id, size_t *len)
{
	return parse_hex_n(hex, strlen(hex), id, len);
}

/* ------------------------------------------------------------- the index */

const char op_buildid_index_header[] = "# oprofile-ng build-id index 1: kind build-id size mtime "
				       "text-offset text-vaddr text-size path\n";

static const char *const kind_names[] = {
	[OP_BUILDID_USER] = "user",
	[OP_BUILDID_KERNEL] = "kernel",
};

size_t op_buildid_format(char *buf, size_t len, const struct op_buildid_ent *e)
{
	char hex[OP_BUILDID_HEX_MAX];
	const unsigned char *p;
	size_t n;
	int k;

	if (e->ids.id_len && e->ids.id_len <= OP_BUILDID_MAX)
		op_buildid_hex(e->ids.id, e->ids.id_len, hex, sizeof(hex));
	else
		strcpy(hex, "-");
	k = snprintf(buf, len,
		     "%s %s %" PRIu64 " %" PRIu64 " 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64 " ",
		     kind_names[e->kind == OP_BUILDID_KERNEL], hex, e->size, e->mtime,
		     e->ids.text_off, e->ids.text_vaddr, e->ids.text_size);
	n = k < 0 ? 0 : (size_t)k;
	for (p = (const unsigned char *)e->path; *p; p++) {
		char esc[5];
		const char *s = esc;
		size_t m;

		if (*p == '\\')
			s = "\\\\";
		else if (*p == '\n')
			s = "\\n";
		else if (*p < 0x20 || *p == 0x7f)
			snprintf(esc, sizeof(esc), "\\x%02x", *p);
		else
			esc[0] = (char)*p, esc[1] = 0;
		m = strlen(s);
		if (n + m < len)
			memcpy(buf + n, s, m);
		n += m;
	}
	if (n + 1 < len)
		buf[n] = '\n';
	n++;
	if (len)
		buf[n < len ? n : len - 1] = 0;
	return n;
}

/* one token of [*p, end) up to the next ' ' (which is skipped) */
static bool next_field(const char **p, const char *end, const char **f, size_t *n)
{
	const char *s = memchr(*p, ' ', (size_t)(end - *p));

	if (!s || s == *p)
		return false;
	*f = *p;
	*n = (size_t)(s - *p);
	*p = s + 1;
	return true;
}

static bool parse_u64(const char *f, size_t n, bool hex, uint64_t *v)
{
	size_t i = 0;

	*v = 0;
	if (hex) {
		if (n < 3 || f[0] != '0' || f[1] != 'x')
			return false;
		i = 2;
	}
	if (i == n || n - i > (hex ? 16 : 20))
		return false;
	for (; i < n; i++) {
		int d = hex ? hexval(f[i]) : (f[i] >= '0' && f[i] <= '9' ? f[i] - '0' : -1);

		if (d < 0 || (!hex && *v > (UINT64_MAX - (uint64_t)d) / 10))
			return false;
		*v = *v * (hex ? 16 : 10) + (uint64_t)d;
	}
	return true;
}

/* the escaped path [p, end) unescaped into a new string, NULL when malformed */
static char *unescape(const char *p, const char *end)
{
	char *out = malloc((size_t)(end - p) + 1), *o = out;

	if (!out)
		return NULL;
	while (p < end) {
		if (*p != '\\') {
			*o++ = *p++;
			continue;
		}
		if (end - p >= 2 && (p[1] == '\\' || p[1] == 'n')) {
			*o++ = p[1] == 'n' ? '\n' : '\\';
			p += 2;
		} else if (end - p >= 4 && p[1] == 'x' && hexval(p[2]) >= 0 && hexval(p[3]) >= 0 &&
			   (hexval(p[2]) | hexval(p[3]))) {
			*o++ = (char)(hexval(p[2]) << 4 | hexval(p[3]));
			p += 4;
		} else {
			free(out);
			return NULL; /* a bad escape, or \x00 */
		}
	}
	*o = 0;
	if (o == out || memchr(out, 0, (size_t)(o - out))) {
		free(out);
		return NULL;
	}
	return out;
}

static int parse_line(const char *p, const char *end, struct op_buildid_ent *e)
{
	const char *f;
	size_t n;

	memset(e, 0, sizeof(*e));
	if (!next_field(&p, end, &f, &n))
		return -EINVAL;
	if (n == 4 && !memcmp(f, "user", 4))
		e->kind = OP_BUILDID_USER;
	else if (n == 6 && !memcmp(f, "kernel", 6))
		e->kind = OP_BUILDID_KERNEL;
	else
		return -EINVAL;
	if (!next_field(&p, end, &f, &n))
		return -EINVAL;
	if (!(n == 1 && f[0] == '-') && parse_hex_n(f, n, e->ids.id, &e->ids.id_len))
		return -EINVAL;
	if (!next_field(&p, end, &f, &n) || !parse_u64(f, n, false, &e->size) ||
	    !next_field(&p, end, &f, &n) || !parse_u64(f, n, false, &e->mtime) ||
	    !next_field(&p, end, &f, &n) || !parse_u64(f, n, true, &e->ids.text_off) ||
	    !next_field(&p, end, &f, &n) || !parse_u64(f, n, true, &e->ids.text_vaddr) ||
	    !next_field(&p, end, &f, &n) || !parse_u64(f, n, true, &e->ids.text_size))
		return -EINVAL;
	e->path = unescape(p, end);
	return e->path ? 0 : -EINVAL;
}

struct idx_sort {
	struct op_buildid_ent e;
	size_t seq;
};

static int idx_cmp(const void *a, const void *b)
{
	const struct idx_sort *x = a, *y = b;
	int c = strcmp(x->e.path, y->e.path);

	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int op_buildid_index_parse(const char *buf, size_t len, struct op_buildid_index *idx)
{
	const char *p = buf, *end = buf + len;
	struct idx_sort *v = NULL;
	size_t n = 0, cap = 0, i, out;
	unsigned line = 0;

	memset(idx, 0, sizeof(*idx));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
		struct op_buildid_ent e;

		line++;
		if (le > p && *p != '#') {
			if (memchr(p, 0, (size_t)(le - p)) || parse_line(p, le, &e)) {
				if (!idx->nbad++)
					idx->first_bad = line;
			} else {
				if (n == cap) {
					size_t nc = cap ? 2 * cap : 64;
					struct idx_sort *nv = realloc(v, nc * sizeof(*nv));

					if (!nv) {
						free(e.path);
						goto out_nomem;
					}
					v = nv;
					cap = nc;
				}
				v[n].e = e;
				v[n].seq = n;
				n++;
			}
		}
		p = le + 1;
	}
	if (n)
		qsort(v, n, sizeof(*v), idx_cmp);
	idx->v = calloc(n ? n : 1, sizeof(*idx->v));
	if (!idx->v)
		goto out_nomem;
	/* a later line of a path replaces an earlier one */
	for (i = 0, out = 0; i < n; i++) {
		if (i + 1 < n && !strcmp(v[i].e.path, v[i + 1].e.path)) {
			free(v[i].e.path);
			continue;
		}
		idx->v[out++] = v[i].e;
	}
	idx->n = out;
	free(v);
	return 0;

out_nomem:
	for (i = 0; i < n; i++)
		free(v[i].e.path);
	free(v);
	op_buildid_index_free(idx);
	return -ENOMEM;
}

int op_buildid_index_read_fd(int fd, const char *name, struct op_buildid_index *idx, char *err,
			     size_t err_len)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	int rc;

	memset(idx, 0, sizeof(*idx));
	if (fstat(fd, &st)) {
		rc = -errno;
		snprintf(err, err_len, "%s: %s", name, strerror(errno));
		return rc;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > INDEX_MAX_BYTES) {
		snprintf(err, err_len, "%s: %s", name,
			 S_ISREG(st.st_mode) ? "larger than 64 MiB: not a build-id index" :
					       "not a regular file");
		return -EINVAL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			snprintf(err, err_len, "%s: %s", name, strerror(errno));
			free(buf);
			return rc;
		}
		if (!n)
			break; /* shrunk: what was there */
		got += (size_t)n;
	}
	rc = op_buildid_index_parse(buf, got, idx);
	free(buf);
	return rc;
}

int op_buildid_index_load(const char *dir, struct op_buildid_index *idx, char *err, size_t err_len)
{
	char path[4096];
	int fd, rc;

	memset(idx, 0, sizeof(*idx));
	if ((size_t)snprintf(path, sizeof(path), "%s/stats/" OP_BUILDID_INDEX, dir) >= sizeof(path)) {
		snprintf(err, err_len, "%s: path too long", dir);
		return -ENAMETOOLONG;
	}
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		if (rc != -ENOENT)
			snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return rc;
	}
	rc = op_buildid_index_read_fd(fd, path, idx, err, err_len);
	close(fd);
	return rc;
}

const struct op_buildid_ent *op_buildid_index_find(const struct op_buildid_index *idx,
						   const char *path)
{
	size_t lo = 0, hi = idx->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(path, idx->v[mid].path);

		if (!c)
			return &idx->v[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

void op_buildid_index_free(struct op_buildid_index *idx)
{
	size_t i;

	for (i = 0; idx->v && i < idx->n; i++)
		free(idx->v[i].path);
	free(idx->v);
	memset(idx, 0, sizeof(*idx));
}
