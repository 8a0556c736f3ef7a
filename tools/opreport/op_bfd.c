/*
 * op_bfd.c - symbols of an ELF image through libbfd (GPL-3: opreport only):
 * static + dynamic + synthetic (PLT) symbols, or the separate debug file's,
 * placed in file-offset key space through their section; demangling,
 * source lines with their chain of inlined functions (DWARF of the image or
 * of its separate debug file: build-id, .gnu_debuglink or $DEBUGINFOD_URLS)
 * and the bytes of the code for a disassembler. A debug file alone stands
 * for a binary that is gone or was rebuilt since it was profiled, placed in
 * the sample files' offset key space by the executable segment the session
 * recorded (stats/buildids).
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <bfd.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef HAVE_DEBUGINFOD
#include <elfutils/debuginfod.h>
#endif

#include "op_buildid.h"
#include "op_demangle.h"
#include "opreport.h"

/* from libiberty's demangle.h, which binutils-dev does not ship */
#define OP_DMGL_PARAMS (1 << 0)
#define OP_DMGL_ANSI (1 << 1)

#define DEBUG_DIR "/usr/lib/debug"

/* where .build-id/ debug files are looked up: DEBUG_DIR, or an archive's */
static char *opbfd_debug_dir;

struct opbfd_sec {
	asection *sec;
	const char *name;
	uint64_t vma, size;
	uint64_t filepos; /* key of the section start: file offset, or vma - kernel start */
};

struct opbfd {
	bfd *abfd;
	asymbol **syms; /* static symbols (for find_nearest_line) */
	long nsyms;
	asymbol **dsyms;
	long ndsyms;
	asymbol *synth;
	long nsynth;
	bfd *dbg; /* separate debug file, when used */
	asymbol **dbgsyms;
	long ndbgsyms;
	bfd *lbfd; /* where the line tables are read: abfd, or dbg when abfd has none */
	asymbol **lsyms;
	struct opbfd_sec *secs;
	size_t nsecs;
	uint64_t slide; /* a kernel relocated at boot (KASLR): where it ran - where it is linked */
};

static const struct opbfd_sec *sec_by_vma(const struct opbfd *b, const char *name, uint64_t vma)
{
	for (size_t i = 0; i < b->nsecs; i++) {
		const struct opbfd_sec *s = &b->secs[i];

		if (vma >= s->vma && vma < s->vma + s->size && (!name || !strcmp(name, s->name)))
			return s;
	}
	return NULL;
}

static const struct opbfd_sec *sec_by_key(const struct opbfd *b, uint64_t key)
{
	for (size_t i = 0; i < b->nsecs; i++) {
		const struct opbfd_sec *s = &b->secs[i];

		if (key >= s->filepos && key < s->filepos + s->size)
			return s;
	}
	return NULL;
}

uint64_t opbfd_key_vma(const struct opbfd *b, uint64_t key)
{
	const struct opbfd_sec *s = b ? sec_by_key(b, key) : NULL;

	return s ? s->vma + b->slide + (key - s->filepos) : key;
}

static const struct rpt_symsrc_ops opbfd_src_ops;

/* the section of the line-table file (the image or its debug file) that holds @s */
static asection *opbfd_line_sec(const struct opbfd *b, const struct opbfd_sec *s)
{
	asection *ls;

	if (b->lbfd == b->abfd)
		return s->sec;
	ls = bfd_get_section_by_name(b->lbfd, s->name);
	return ls && bfd_section_vma(ls) == s->vma ? ls : NULL;
}

bool opbfd_key_func_line(struct opbfd *b, uint64_t key, const char **file, unsigned *line,
			 const char **func)
{
	const struct opbfd_sec *s = b ? sec_by_key(b, key) : NULL;
	asection *ls = s ? opbfd_line_sec(b, s) : NULL;
	const char *f = NULL, *fn = NULL;
	unsigned l = 0;

	if (!ls)
		return false;
	if (!bfd_find_nearest_line(b->lbfd, ls, b->lsyms, key - s->filepos, &f, &fn, &l) || !f || !l)
		return false;
	*file = f;
	*line = l;
	if (func)
		*func = fn;
	return true;
}

bool opbfd_key_line(struct opbfd *b, uint64_t key, const char **file, unsigned *line)
{
	return opbfd_key_func_line(b, key, file, line, NULL);
}

bool opbfd_inliner(struct opbfd *b, const char **file, unsigned *line, const char **func)
{
	const char *f = NULL, *fn = NULL;
	unsigned l = 0;

	if (!b || !bfd_find_inliner_info(b->lbfd, &f, &fn, &l))
		return false;
	*file = f;
	*line = l;
	*func = fn;
	return true;
}

struct opbfd *opbfd_of(const struct rpt_symtab *t)
{
	return t->src_ops == &opbfd_src_ops ? t->src : NULL;
}

struct bfd *opbfd_bfd(const struct opbfd *b)
{
	return b->abfd;
}

bool opbfd_vma_key(const struct opbfd *b, uint64_t vma, uint64_t *key)
{
	const struct opbfd_sec *s = sec_by_vma(b, NULL, vma);

	if (!s)
		return false;
	*key = vma - s->vma + s->filepos;
	return true;
}

int opbfd_code(struct opbfd *b, uint64_t key, uint64_t len, unsigned char **buf, size_t *got,
	       uint64_t *vma)
{
	const struct opbfd_sec *s = sec_by_key(b, key);
	uint64_t off;

	*buf = NULL;
	*got = 0;
	/* a debug file's code sections are NOBITS: no bytes to show */
	if (!s || (bfd_section_flags(s->sec) & (SEC_CODE | SEC_HAS_CONTENTS)) !=
			  (SEC_CODE | SEC_HAS_CONTENTS))
		return -ENOENT;
	off = key - s->filepos;
	if (len > s->size - off)
		len = s->size - off;
	*buf = malloc(len ? len : 1);
	if (!*buf)
		return -ENOMEM;
	if (!bfd_get_section_contents(b->abfd, s->sec, *buf, (file_ptr)off, len)) {
		free(*buf);
		*buf = NULL;
		return -EIO;
	}
	*got = len;
	*vma = s->vma + b->slide + off;
	return 0;
}

char *opbfd_demangle(const char *name, enum rpt_demangle dm)
{
	char *d;

	/* only Itanium C++ (_Z) and Rust v0 (_R) names are mangled: skip the rest cheaply */
	if (dm == DEMANGLE_NONE || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	d = bfd_demangle(NULL, name, OP_DMGL_PARAMS | OP_DMGL_ANSI);
	if (d && dm == DEMANGLE_SMART) {
		char *smart = demangle_smart(d);

		if (smart) {
			free(d);
			d = smart;
		}
	}
	return d;
}

static int read_symtab(bfd *abfd, bool dynamic, asymbol ***out, long *n)
{
	long ub = dynamic ? bfd_get_dynamic_symtab_upper_bound(abfd) :
			    bfd_get_symtab_upper_bound(abfd);

	*out = NULL;
	*n = 0;
	if (ub <= 0) {
		/* no such table (e.g. no .dynsym): an empty list, NULL-terminated */
		*out = calloc(1, sizeof(asymbol *));
		return *out ? 0 : -ENOMEM;
	}
	*out = malloc((size_t)ub);
	if (!*out)
		return -ENOMEM;
	*n = dynamic ? bfd_canonicalize_dynamic_symtab(abfd, *out) :
		       bfd_canonicalize_symtab(abfd, *out);
	if (*n < 0)
		*n = 0;
	(*out)[*n] = NULL;
	return 0;
}

static bool usable(const asymbol *s)
{
	const char *name = bfd_asymbol_name(s);

	if (!name || !*name || !s->section)
		return false;
	if (s->flags & (BSF_SECTION_SYM | BSF_FILE | BSF_DEBUGGING | BSF_SECTION_SYM_USED))
		return false;
	if (bfd_is_und_section(s->section) || bfd_is_abs_section(s->section) ||
	    bfd_is_com_section(s->section))
		return false;
	/* assembler local labels */
	if (name[0] == '.' && name[1] == 'L')
		return false;
	return true;
}

struct cand {
	uint64_t key, vma;
	int prio;
	const char *name;
	uint64_t sec_end; /* key of the section end */
};

static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->prio != y->prio)
		return x->prio - y->prio;
	return strcmp(x->name, y->name);
}

static int add_syms(const struct opbfd *b, asymbol **syms, long n, asymbol *arr, bool in_main,
		    int prio, struct cand **c, size_t *nc, size_t *cap)
{
	for (long i = 0; i < n; i++) {
		asymbol *s = syms ? syms[i] : &arr[i];
		const struct opbfd_sec *sec;
		uint64_t vma;
		int p = prio;

		if (!usable(s))
			continue;
		vma = bfd_asymbol_value(s);
		/* only accept a symbol from the section that holds it */
		sec = sec_by_vma(b, bfd_section_name(s->section), vma);
		if (!sec || (in_main && sec->sec != s->section))
			continue;
		if (!(s->flags & BSF_FUNCTION))
			p += 1;
		if (s->flags & BSF_WEAK)
			p += 2;
		if (!(s->flags & BSF_GLOBAL))
			p += 1;
		if (*nc == *cap) {
			size_t ncap = *cap ? *cap * 2 : 256;
			struct cand *nv = realloc(*c, ncap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			*c = nv;
			*cap = ncap;
		}
		(*c)[(*nc)++] = (struct cand){
			.key = vma - sec->vma + sec->filepos,
			.vma = vma + b->slide,
			.prio = p,
			.name = bfd_asymbol_name(s),
			.sec_end = sec->filepos + sec->size,
		};
	}
	return 0;
}

static void bfd_init_once(void)
{
	static bool done;

	if (!done) {
		bfd_init();
		done = true;
	}
}

/*
 * Opened here, O_NONBLOCK and checked on the fd, then given to libbfd: a
 * FIFO a user swaps in for a binary after the caller's stat() does not hang
 * opreport (libbfd closes the fd, also when it fails).
 */
static bfd *open_object(const char *path, char *err, size_t err_len)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	bfd *abfd;

	if (fd < 0) {
		snprintf(err, err_len, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, err_len, "%s: not a regular file", path);
		close(fd);
		return NULL;
	}
	abfd = bfd_fdopenr(path, NULL, fd);
	if (!abfd) {
		snprintf(err, err_len, "%s: %s", path, bfd_errmsg(bfd_get_error()));
		return NULL;
	}
	if (!bfd_check_format(abfd, bfd_object)) {
		snprintf(err, err_len, "%s: %s", path, bfd_errmsg(bfd_get_error()));
		bfd_close(abfd);
		return NULL;
	}
	return abfd;
}

int opbfd_set_debug_dir(const char *dir)
{
	char *d = dir ? strdup(dir) : NULL;

	if (dir && !d)
		return -ENOMEM;
	free(opbfd_debug_dir);
	opbfd_debug_dir = d;
	return 0;
}

#ifdef HAVE_DEBUGINFOD
static debuginfod_client *opbfd_dbgd;
static bool opbfd_dbgd_down; /* a server failed (not "not found"): not asked again this run */

static void opbfd_dbgd_end(void)
{
	debuginfod_end(opbfd_dbgd);
}
#endif

/*
 * The debug file of build ID @id from the servers of $DEBUGINFOD_URLS
 * (libdebuginfod: its cache, $DEBUGINFOD_TIMEOUT, $DEBUGINFOD_PROGRESS):
 * the malloc'd path of the cached copy, or NULL. A server that cannot be
 * reached or does not answer in time is said once; the rest of the run
 * does not wait for it again.
 */
static char *opbfd_debuginfod(const uint8_t *id, size_t len)
{
#ifdef HAVE_DEBUGINFOD
	const char *urls = getenv("DEBUGINFOD_URLS");
	char *path = NULL, hex[OP_BUILDID_HEX_MAX];
	int fd;

	if (!urls || !*urls || opbfd_dbgd_down || !len)
		return NULL;
	if (!opbfd_dbgd) {
		opbfd_dbgd = debuginfod_begin();
		if (!opbfd_dbgd) {
			opbfd_dbgd_down = true;
			return NULL;
		}
		atexit(opbfd_dbgd_end);
	}
	fd = debuginfod_find_debuginfo(opbfd_dbgd, id, (int)len, &path);
	if (fd >= 0) {
		close(fd);
		return path;
	}
	free(path);
	if (fd != -ENOENT) {
		opbfd_dbgd_down = true;
		txt_warn("debuginfod: no answer for build ID %s from DEBUGINFOD_URLS=%s: %s%s; "
			 "debuginfod is not asked again in this run",
			 op_buildid_hex(id, len, hex, sizeof(hex)), urls, strerror(-fd),
			 fd == -ETIME || fd == -ETIMEDOUT ? " (DEBUGINFOD_TIMEOUT sets the wait)" :
							    "");
	}
	return NULL;
#else
	(void)id;
	(void)len;
	return NULL;
#endif
}

/* Is @path a regular file whose build ID is @id? */
static bool opbfd_has_build_id(const char *path, const uint8_t *id, size_t len)
{
	struct op_elf_ids ids;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), rc;

	if (fd < 0)
		return false;
	rc = op_elf_ids_from_fd(fd, &ids);
	close(fd);
	return !rc && ids.id_len == len && !memcmp(ids.id, id, len);
}

char *opbfd_debug_by_id(const uint8_t *id, size_t len)
{
	const char *dir = opbfd_debug_dir ? opbfd_debug_dir : DEBUG_DIR;
	char hex[OP_BUILDID_HEX_MAX], *path;

	if (len < 2 || len > OP_BUILDID_MAX)
		return NULL;
	op_buildid_hex(id, len, hex, sizeof(hex));
	/* GDB's layout: .build-id/ + the first byte + "/" + the rest + ".debug" */
	if (asprintf(&path, "%s/.build-id/%.2s/%s.debug", dir, hex, hex + 2) < 0)
		return NULL;
	if (opbfd_has_build_id(path, id, len))
		return path;
	free(path);
	path = opbfd_debuginfod(id, len);
	/* the server's answer is checked like a local file */
	if (path && !opbfd_has_build_id(path, id, len)) {
		txt_warn("debuginfod: %s does not have build ID %s: not used", path, hex);
		free(path);
		path = NULL;
	}
	return path;
}

/* build-id under the debug directory, .gnu_debuglink, then debuginfod */
static char *opbfd_find_debug(bfd *abfd)
{
	const char *dir = opbfd_debug_dir ? opbfd_debug_dir : DEBUG_DIR;
	char *dpath = bfd_follow_build_id_debuglink(abfd, dir);
	uint8_t id[OP_BUILDID_MAX];
	size_t len;
	int fd;

	if (!dpath)
		dpath = bfd_follow_gnu_debuglink(abfd, dir);
	if (dpath)
		return dpath;
	fd = open(bfd_get_filename(abfd), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (!op_buildid_from_fd(fd, id, &len))
		dpath = opbfd_debug_by_id(id, len);
	close(fd);
	return dpath;
}

char *opbfd_debug_file(const char *path, char **link)
{
	char err[256], *dpath;
	unsigned long crc;
	bfd *abfd;

	if (link)
		*link = NULL;
	bfd_init_once();
	abfd = open_object(path, err, sizeof(err));
	if (!abfd)
		return NULL;
	dpath = opbfd_find_debug(abfd);
	if (dpath && link)
		*link = bfd_get_debug_link_info(abfd, &crc);
	bfd_close(abfd);
	return dpath;
}

static bool has_dwarf(bfd *abfd)
{
	asection *s = bfd_get_section_by_name(abfd, ".debug_info");

	return s && bfd_section_size(s) && (bfd_section_flags(s) & SEC_HAS_CONTENTS);
}

/*
 * The separate debug file of a stripped image (build-id under
 * /usr/lib/debug/.build-id, or .gnu_debuglink next to the image, in its
 * .debug/ or below /usr/lib/debug): its symbols when the image has none,
 * its line tables when the image has no DWARF.
 */
static void open_debug_file(struct opbfd *b)
{
	char *dpath = opbfd_find_debug(b->abfd);
	char err[256];
	long n;

	if (!dpath)
		return;
	b->dbg = open_object(dpath, err, sizeof(err));
	free(dpath);
	if (!b->dbg)
		return;
	if (read_symtab(b->dbg, false, &b->dbgsyms, &n)) {
		bfd_close(b->dbg);
		b->dbg = NULL;
		return;
	}
	b->ndbgsyms = n;
	if (has_dwarf(b->dbg)) {
		b->lbfd = b->dbg;
		b->lsyms = b->dbgsyms;
	}
}

/* the table asks the open image through these (struct rpt_symsrc_ops) */
static uint64_t opbfd_src_key_vma(const void *src, uint64_t key)
{
	return opbfd_key_vma(src, key);
}

static bool opbfd_src_key_line(void *src, uint64_t key, const char **file, unsigned *line)
{
	return opbfd_key_line(src, key, file, line);
}

static void opbfd_src_close(void *src)
{
	opbfd_close(src);
}

static const struct rpt_symsrc_ops opbfd_src_ops = {
	.key_vma = opbfd_src_key_vma,
	.key_line = opbfd_src_key_line,
	.close = opbfd_src_close,
};

/* Is @vma in the upper half of @abfd's address space, where Linux places its own text? */
static bool opbfd_kernel_addr(bfd *abfd, uint64_t vma)
{
	return bfd_get_arch_size(abfd) == 32 ? vma >= 0x80000000u && vma <= 0xffffffffu : vma >> 63;
}

int opbfd_check_vmlinux(const char *path, char *err, size_t err_len)
{
	asection *text;
	bfd *abfd;

	bfd_init_once();
	abfd = open_object(path, err, err_len);
	if (!abfd)
		return -EINVAL;
	text = bfd_get_section_by_name(abfd, ".text");
	if (bfd_get_flavour(abfd) != bfd_target_elf_flavour)
		snprintf(err, err_len, "%s: not an ELF file (%s)", path, bfd_get_target(abfd));
	else if (!text || !(bfd_section_flags(text) & SEC_CODE) || !bfd_section_size(text))
		snprintf(err, err_len, "%s: no .text section of code", path);
	else if (!opbfd_kernel_addr(abfd, bfd_section_vma(text)))
		snprintf(err, err_len,
			 "%s: .text is at 0x%llx, not at a kernel address (upper half): not a "
			 "kernel image",
			 path, (unsigned long long)bfd_section_vma(text));
	else
		err = NULL;
	bfd_close(abfd);
	return err ? -EINVAL : 0;
}

/*
 * @kernel: the keys are vma + @slide - @kstart (the kernel's samples) and
 * sections below @kstart are left out; @seg (a debug file standing for its binary):
 * only the sections of the executable segment @seg, keyed by the file
 * offsets the binary had there; else they are file offsets.
 */
static int opbfd_load_at(struct rpt_symtab *t, const char *path, bool kernel, uint64_t kstart,
			 uint64_t slide, const struct op_elf_ids *seg, enum rpt_demangle dm,
			 bool want_lines, char *err, size_t err_len)
{
	struct opbfd *b = calloc(1, sizeof(*b));
	struct cand *c = NULL;
	size_t nc = 0, cap = 0;
	long nd = 0;
	int ret = -ENOMEM;
	asection *sec;

	if (!b)
		return -ENOMEM;
	bfd_init_once();
	b->abfd = open_object(path, err, err_len);
	if (!b->abfd) {
		free(b);
		return -ENOENT;
	}
	b->slide = slide;
	for (sec = b->abfd->sections; sec; sec = sec->next) {
		flagword f = bfd_section_flags(sec);
		struct opbfd_sec *ns;

		uint64_t vma = bfd_section_vma(sec), size = bfd_section_size(sec), key;

		if (seg) {
			/* a debug file's code sections are NOBITS: where they were is in @seg */
			if (!(f & SEC_ALLOC) || !size || vma < seg->text_vaddr ||
			    vma - seg->text_vaddr >= seg->text_size ||
			    size > seg->text_size - (vma - seg->text_vaddr))
				continue;
			key = vma - seg->text_vaddr + seg->text_off;
		} else if ((f & (SEC_LOAD | SEC_HAS_CONTENTS)) != (SEC_LOAD | SEC_HAS_CONTENTS) ||
			   !size) {
			continue;
		} else if (kernel) {
			/* a vmlinux's per-cpu sections are linked at 0: no kernel pc is there */
			if (vma + slide < kstart)
				continue;
			key = vma + slide - kstart;
		} else {
			key = (uint64_t)sec->filepos;
		}
		ns = realloc(b->secs, (b->nsecs + 1) * sizeof(*ns));
		if (!ns)
			goto out_err;
		b->secs = ns;
		b->secs[b->nsecs++] = (struct opbfd_sec){
			.sec = sec,
			.name = bfd_section_name(sec),
			.vma = vma,
			.size = size,
			.filepos = key,
		};
	}
	if (read_symtab(b->abfd, false, &b->syms, &b->nsyms) ||
	    read_symtab(b->abfd, true, &b->dsyms, &nd))
		goto out_err;
	b->ndsyms = nd;
	b->nsynth = bfd_get_synthetic_symtab(b->abfd, b->nsyms, b->syms, nd, b->dsyms, &b->synth);
	if (b->nsynth < 0)
		b->nsynth = 0;

	if (add_syms(b, b->syms, b->nsyms, NULL, true, 0, &c, &nc, &cap) ||
	    add_syms(b, b->dsyms, nd, NULL, true, 10, &c, &nc, &cap) ||
	    add_syms(b, NULL, b->nsynth, b->synth, true, 20, &c, &nc, &cap))
		goto out_err;
	b->lbfd = b->abfd;
	b->lsyms = b->syms;
	if (!seg && (b->nsyms == 0 || (want_lines && !has_dwarf(b->abfd)))) {
		/* stripped: the separate debug file may have the full table and the lines */
		open_debug_file(b);
		if (b->nsyms == 0 && b->dbg &&
		    add_syms(b, b->dbgsyms, b->ndbgsyms, NULL, false, 0, &c, &nc, &cap))
			goto out_err;
	}

	if (nc) /* c is NULL without any symbol: qsort's argument must not be */
		qsort(c, nc, sizeof(*c), cand_cmp);
	for (size_t i = 0; i < nc; i++) {
		struct rpt_sym *ns;
		char *dem;
		uint64_t end = c[i].sec_end;

		if (i && c[i].key == c[i - 1].key)
			continue; /* the best-priority name at this address is kept */
		for (size_t j = i + 1; j < nc; j++) {
			if (c[j].key != c[i].key) {
				if (c[j].key < end)
					end = c[j].key;
				break;
			}
		}
		if (t->n % 256 == 0) {
			ns = realloc(t->v, (t->n + 256) * sizeof(*ns));
			if (!ns)
				goto out_err;
			t->v = ns;
		}
		dem = opbfd_demangle(c[i].name, dm);
		t->v[t->n] = (struct rpt_sym){
			.start = c[i].key,
			.end = end,
			.vma = c[i].vma,
			.name = symtab_strdup(t, dem ? dem : c[i].name),
		};
		free(dem);
		if (!t->v[t->n].name)
			goto out_err;
		if (want_lines) {
			const char *f;
			unsigned l;

			if (opbfd_key_line(b, c[i].key, &f, &l)) {
				t->v[t->n].file = symtab_strdup(t, f);
				t->v[t->n].line = l;
			}
		}
		t->n++;
	}
	free(c);
	symtab_set_src(t, b, &opbfd_src_ops);
	return 0;

out_err:
	free(c);
	opbfd_close(b);
	snprintf(err, err_len, "%s: out of memory reading symbols", path);
	return ret;
}

int opbfd_load(struct rpt_symtab *t, const char *path, enum rpt_demangle dm, bool want_lines,
	       char *err, size_t err_len)
{
	return opbfd_load_at(t, path, false, 0, 0, NULL, dm, want_lines, err, err_len);
}

int opbfd_load_debug(struct rpt_symtab *t, const char *dpath, const struct op_elf_ids *seg,
		     enum rpt_demangle dm, bool want_lines, char *err, size_t err_len)
{
	if (!seg->text_size) {
		snprintf(err, err_len,
			 "%s: the session does not say where the binary's code was (no executable "
			 "segment in stats/buildids)",
			 dpath);
		return -EINVAL;
	}
	return opbfd_load_at(t, dpath, false, 0, 0, seg, dm, want_lines, err, err_len);
}

int opbfd_kernel_slide(const char *path, uint64_t kstart, uint64_t *slide)
{
	char err[256];
	asymbol **syms = NULL;
	long n = 0;
	bfd *abfd;
	int ret = -ENOENT;

	*slide = 0;
	bfd_init_once();
	abfd = open_object(path, err, sizeof(err));
	if (!abfd)
		return -ENOENT;
	if (read_symtab(abfd, false, &syms, &n))
		goto out;
	/* the same anchor as op_ksyms_text_start: _text, else _stext */
	for (int pass = 0; pass < 2 && ret; pass++)
		for (long i = 0; i < n && ret; i++) {
			if (strcmp(bfd_asymbol_name(syms[i]), pass ? "_stext" : "_text"))
				continue;
			*slide = kstart - (uint64_t)bfd_asymbol_value(syms[i]);
			ret = 0;
		}
out:
	free(syms);
	bfd_close(abfd);
	return ret;
}

int opbfd_load_kernel(struct rpt_symtab *t, const char *path, uint64_t kstart, uint64_t slide,
		      enum rpt_demangle dm, bool want_lines, char *err, size_t err_len)
{
	int ret = opbfd_load_at(t, path, true, kstart, slide, NULL, dm, want_lines, err, err_len);

	if (!ret)
		t->vma_bias = kstart;
	return ret;
}

void opbfd_close(struct opbfd *b)
{
	if (!b)
		return;
	free(b->syms);
	free(b->dsyms);
	free(b->synth);
	free(b->dbgsyms);
	free(b->secs);
	if (b->dbg)
		bfd_close(b->dbg);
	if (b->abfd)
		bfd_close(b->abfd);
	free(b);
}
