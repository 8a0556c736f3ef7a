/*
 * op_jitelf.c - the ELF writer of op_jitelf.h: ELF header, one PT_LOAD,
 * .text, .symtab/.strtab, DWARF 2 line table with its compile unit,
 * .shstrtab and the section headers, in that order in the file.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "op_jitelf.h"

/* a growing byte buffer: the sections after .text are built in memory */
struct jbuf {
	uint8_t *p;
	size_t len, cap;
	bool nomem;
};

static void jb_put(struct jbuf *b, const void *d, size_t n)
{
	if (b->nomem)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		uint8_t *np;

		while (cap < b->len + n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np) {
			b->nomem = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void jb_u8(struct jbuf *b, uint8_t v)
{
	jb_put(b, &v, 1);
}

static void jb_u16(struct jbuf *b, uint16_t v)
{
	jb_put(b, &v, 2);
}

static void jb_u32(struct jbuf *b, uint32_t v)
{
	jb_put(b, &v, 4);
}

static void jb_u64(struct jbuf *b, uint64_t v)
{
	jb_put(b, &v, 8);
}

static void jb_str(struct jbuf *b, const char *s)
{
	jb_put(b, s, strlen(s) + 1);
}

static void jb_uleb(struct jbuf *b, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;

		v >>= 7;
		jb_u8(b, c | (v ? 0x80 : 0));
	} while (v);
}

static void jb_sleb(struct jbuf *b, int64_t v)
{
	bool more = true;

	while (more) {
		uint8_t c = v & 0x7f;

		v >>= 7; /* arithmetic shift: gcc and clang on every target we build */
		more = !((v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40)));
		jb_u8(b, c | (more ? 0x80 : 0));
	}
}

static void jb_align(struct jbuf *b, size_t a)
{
	static const uint8_t zero[16];

	while (b->len % a)
		jb_put(b, zero, a - b->len % a < sizeof(zero) ? a - b->len % a : sizeof(zero));
}

static void jb_set_u32(struct jbuf *b, size_t at, uint32_t v)
{
	if (!b->nomem)
		memcpy(b->p + at, &v, 4);
}

__attribute__((format(printf, 4, 5))) static int jelf_fail(char *err, size_t len, int rc,
							   const char *fmt, ...)
{
	va_list ap;

	if (err && len) {
		va_start(ap, fmt);
		vsnprintf(err, len, fmt, ap);
		va_end(ap);
	}
	return rc;
}

static int jelf_check(const struct op_jitelf_image *img, size_t *nr_lines, char *err, size_t len)
{
	uint64_t end = 0;
	size_t i, k;

	*nr_lines = 0;
	if (img->text_size > OP_JITELF_MAX_TEXT)
		return jelf_fail(err, len, -EFBIG, ".text of %llu bytes is above %llu",
				 (unsigned long long)img->text_size,
				 (unsigned long long)OP_JITELF_MAX_TEXT);
	for (i = 0; i < img->nr_funcs; i++) {
		const struct op_jitelf_func *f = &img->funcs[i];

		if (!f->name || !*f->name)
			return jelf_fail(err, len, -EINVAL, "function %zu has no name", i);
		if (!f->size || f->off < end || f->off > img->text_size ||
		    f->size > img->text_size - f->off)
			return jelf_fail(err, len, -EINVAL,
					 "function %zu (%s) at %#llx+%#llx: outside .text (%#llx bytes), "
					 "unsorted or overlapping",
					 i, f->name, (unsigned long long)f->off,
					 (unsigned long long)f->size,
					 (unsigned long long)img->text_size);
		end = f->off + f->size;
		for (k = 0; k < f->nr_lines; k++) {
			if (f->lines[k].file >= img->nr_files || !img->files[f->lines[k].file])
				return jelf_fail(err, len, -EINVAL,
						 "function %s: line %zu names file %u of %zu",
						 f->name, k, f->lines[k].file, img->nr_files);
			if (f->lines[k].off >= f->size ||
			    (k && f->lines[k].off < f->lines[k - 1].off))
				return jelf_fail(err, len, -EINVAL,
						 "function %s: line %zu at offset %u is outside the "
						 "function or unsorted",
						 f->name, k, f->lines[k].off);
		}
		*nr_lines += f->nr_lines;
	}
	if (*nr_lines > OP_JITELF_MAX_LINES)
		return jelf_fail(err, len, -EFBIG, "%zu lines is above %u", *nr_lines,
				 OP_JITELF_MAX_LINES);
	return 0;
}

/*
 * The DWARF numbers used (DWARF 2 standard, section 7): spelled here
 * rather than taken from elfutils' <dwarf.h>, which libopng need not
 * depend on for a dozen constants.
 */
enum {
	DW_TAG_compile_unit = 0x11,
	DW_CHILDREN_no = 0,
	DW_AT_name = 0x03,
	DW_AT_stmt_list = 0x10,
	DW_AT_low_pc = 0x11,
	DW_AT_high_pc = 0x12,
	DW_FORM_addr = 0x01,
	DW_FORM_data4 = 0x06,
	DW_FORM_string = 0x08,
	DW_LNS_copy = 1,
	DW_LNS_advance_pc = 2,
	DW_LNS_advance_line = 3,
	DW_LNS_set_file = 4,
	DW_LNE_end_sequence = 1,
	DW_LNE_set_address = 2,
};

/* DWARF 2 line program: one sequence per function that has lines */
#define DW_LINE_BASE (-5)
#define DW_LINE_RANGE 14
#define DW_OPCODE_BASE 13

static void jelf_line_table(struct jbuf *b, const struct op_jitelf_image *img)
{
	static const uint8_t std_len[DW_OPCODE_BASE - 1] = { 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	size_t start = b->len, hdr_at, i, k;

	jb_u32(b, 0); /* unit_length, set at the end */
	jb_u16(b, 2); /* version */
	hdr_at = b->len;
	jb_u32(b, 0); /* header_length, set below */
	jb_u8(b, 1);  /* minimum_instruction_length */
	jb_u8(b, 1);  /* default_is_stmt */
	jb_u8(b, (uint8_t)DW_LINE_BASE);
	jb_u8(b, DW_LINE_RANGE);
	jb_u8(b, DW_OPCODE_BASE);
	jb_put(b, std_len, sizeof(std_len));
	jb_u8(b, 0); /* no include directories */
	for (i = 0; i < img->nr_files; i++) {
		jb_str(b, img->files[i]);
		jb_uleb(b, 0); /* directory, mtime, length unknown */
		jb_uleb(b, 0);
		jb_uleb(b, 0);
	}
	jb_u8(b, 0);
	jb_set_u32(b, hdr_at, (uint32_t)(b->len - hdr_at - 4));
	for (i = 0; i < img->nr_funcs; i++) {
		const struct op_jitelf_func *f = &img->funcs[i];
		uint64_t addr = OP_JITELF_TEXT_OFFSET + f->off;
		uint32_t file = 1, off = 0; /* DWARF file numbers start at 1 */
		int64_t line = 1;

		if (!f->nr_lines)
			continue;
		jb_u8(b, 0); /* DW_LNE_set_address */
		jb_uleb(b, 9);
		jb_u8(b, DW_LNE_set_address);
		jb_u64(b, addr);
		for (k = 0; k < f->nr_lines; k++) {
			const struct op_jitelf_line *l = &f->lines[k];

			if (l->file + 1 != file) {
				file = l->file + 1;
				jb_u8(b, DW_LNS_set_file);
				jb_uleb(b, file);
			}
			if ((int64_t)l->line != line) {
				jb_u8(b, DW_LNS_advance_line);
				jb_sleb(b, (int64_t)l->line - line);
				line = l->line;
			}
			if (l->off != off) {
				jb_u8(b, DW_LNS_advance_pc);
				jb_uleb(b, l->off - off);
				off = l->off;
			}
			jb_u8(b, DW_LNS_copy);
		}
		jb_u8(b, DW_LNS_advance_pc);
		jb_uleb(b, f->size - off);
		jb_u8(b, 0); /* DW_LNE_end_sequence */
		jb_uleb(b, 1);
		jb_u8(b, DW_LNE_end_sequence);
	}
	jb_set_u32(b, start, (uint32_t)(b->len - start - 4));
}

/* the one compile unit: name, stmt_list 0, the whole .text as its range */
static void jelf_debug_info(struct jbuf *info, struct jbuf *abbrev,
			    const struct op_jitelf_image *img)
{
	size_t start = info->len;

	jb_uleb(abbrev, 1);
	jb_uleb(abbrev, DW_TAG_compile_unit);
	jb_u8(abbrev, DW_CHILDREN_no);
	jb_uleb(abbrev, DW_AT_name);
	jb_uleb(abbrev, DW_FORM_string);
	jb_uleb(abbrev, DW_AT_stmt_list);
	jb_uleb(abbrev, DW_FORM_data4);
	jb_uleb(abbrev, DW_AT_low_pc);
	jb_uleb(abbrev, DW_FORM_addr);
	jb_uleb(abbrev, DW_AT_high_pc);
	jb_uleb(abbrev, DW_FORM_addr);
	jb_u8(abbrev, 0);
	jb_u8(abbrev, 0);
	jb_u8(abbrev, 0);

	jb_u32(info, 0); /* unit_length */
	jb_u16(info, 2); /* version */
	jb_u32(info, 0); /* debug_abbrev_offset */
	jb_u8(info, 8);  /* address_size */
	jb_uleb(info, 1);
	jb_str(info, img->cu_name && *img->cu_name ? img->cu_name : "jit");
	jb_u32(info, 0);
	jb_u64(info, OP_JITELF_TEXT_OFFSET);
	jb_u64(info, OP_JITELF_TEXT_OFFSET + img->text_size);
	jb_set_u32(info, start, (uint32_t)(info->len - start - 4));
}

enum {
	SEC_NULL,
	SEC_TEXT,
	SEC_SYMTAB,
	SEC_STRTAB,
	SEC_ABBREV,
	SEC_INFO,
	SEC_LINE,
	SEC_SHSTR,
	SEC_NR
};

static int jelf_pwrite(int fd, const void *p, size_t n, uint64_t off)
{
	const uint8_t *c = p;

	while (n) {
		ssize_t w = pwrite(fd, c, n, (off_t)off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		c += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

int op_jitelf_write(int fd, const struct op_jitelf_image *img, char *err, size_t err_len)
{
	static const char *const names[SEC_NR] = { "",
						   ".text",
						   ".symtab",
						   ".strtab",
						   ".debug_abbrev",
						   ".debug_info",
						   ".debug_line",
						   ".shstrtab" };
	struct jbuf tail = { 0 }, strtab = { 0 }, symtab = { 0 }, abbrev = { 0 }, info = { 0 },
		    line = { 0 }, shstr = { 0 };
	const struct jbuf *parts[SEC_NR] = { NULL,    NULL,  &symtab, &strtab,
					     &abbrev, &info, &line,   &shstr };
	uint64_t off[SEC_NR] = { 0 }, size[SEC_NR] = { 0 }, name_at[SEC_NR] = { 0 }, shoff, tail_at;
	bool lines = false;
	Elf64_Shdr sh[SEC_NR];
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Sym sym;
	size_t nr_lines, i;
	int rc, nsec;

	rc = jelf_check(img, &nr_lines, err, err_len);
	if (rc)
		return rc;
	lines = nr_lines > 0;
	nsec = lines ? SEC_NR : SEC_ABBREV + 1; /* without lines: .shstrtab right after .strtab */

	/* .symtab: the null symbol, a section symbol, then one FUNC per function */
	jb_u8(&strtab, 0);
	memset(&sym, 0, sizeof(sym));
	jb_put(&symtab, &sym, sizeof(sym));
	sym.st_info = ELF64_ST_INFO(STB_LOCAL, STT_SECTION);
	sym.st_shndx = SEC_TEXT;
	sym.st_value = OP_JITELF_TEXT_OFFSET;
	jb_put(&symtab, &sym, sizeof(sym));
	for (i = 0; i < img->nr_funcs; i++) {
		memset(&sym, 0, sizeof(sym));
		sym.st_name = (uint32_t)strtab.len;
		jb_str(&strtab, img->funcs[i].name);
		sym.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		sym.st_shndx = SEC_TEXT;
		sym.st_value = OP_JITELF_TEXT_OFFSET + img->funcs[i].off;
		sym.st_size = img->funcs[i].size;
		jb_put(&symtab, &sym, sizeof(sym));
	}
	if (lines) {
		jelf_debug_info(&info, &abbrev, img);
		jelf_line_table(&line, img);
	}
	jb_u8(&shstr, 0);
	for (i = 1; i < SEC_NR; i++) {
		if (!lines && (i == SEC_ABBREV || i == SEC_INFO || i == SEC_LINE))
			continue;
		name_at[i] = shstr.len;
		jb_str(&shstr, names[i]);
	}
	if (strtab.nomem || symtab.nomem || abbrev.nomem || info.nomem || line.nomem || shstr.nomem) {
		rc = jelf_fail(err, err_len, -ENOMEM, "out of memory building the sections");
		goto out;
	}

	/* file layout: headers, .text at its fixed offset, then the rest */
	off[SEC_TEXT] = OP_JITELF_TEXT_OFFSET;
	size[SEC_TEXT] = img->text_size;
	tail_at = (OP_JITELF_TEXT_OFFSET + img->text_size + 7) & ~7ull;
	for (i = SEC_SYMTAB; i < SEC_NR; i++) {
		const struct jbuf *part = parts[i];

		if (!lines && (i == SEC_ABBREV || i == SEC_INFO || i == SEC_LINE))
			continue;
		off[i] = tail_at + tail.len;
		size[i] = part->len;
		jb_put(&tail, part->p, part->len);
	}
	jb_align(&tail, 8);
	shoff = tail_at + tail.len;

	memset(sh, 0, sizeof(sh));
	sh[SEC_TEXT] = (Elf64_Shdr){ .sh_name = (uint32_t)name_at[SEC_TEXT],
				     .sh_type = SHT_PROGBITS,
				     .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
				     .sh_addr = OP_JITELF_TEXT_OFFSET,
				     .sh_offset = off[SEC_TEXT],
				     .sh_size = size[SEC_TEXT],
				     .sh_addralign = 16 };
	sh[SEC_SYMTAB] = (Elf64_Shdr){ .sh_name = (uint32_t)name_at[SEC_SYMTAB],
				       .sh_type = SHT_SYMTAB,
				       .sh_offset = off[SEC_SYMTAB],
				       .sh_size = size[SEC_SYMTAB],
				       .sh_link = SEC_STRTAB,
				       .sh_info = 2, /* first global: after null and section */
				       .sh_addralign = 8,
				       .sh_entsize = sizeof(Elf64_Sym) };
	sh[SEC_STRTAB] = (Elf64_Shdr){ .sh_name = (uint32_t)name_at[SEC_STRTAB],
				       .sh_type = SHT_STRTAB,
				       .sh_offset = off[SEC_STRTAB],
				       .sh_size = size[SEC_STRTAB],
				       .sh_addralign = 1 };
	for (i = SEC_ABBREV; lines && i <= SEC_LINE; i++)
		sh[i] = (Elf64_Shdr){ .sh_name = (uint32_t)name_at[i],
				      .sh_type = SHT_PROGBITS,
				      .sh_offset = off[i],
				      .sh_size = size[i],
				      .sh_addralign = 1 };
	/* without lines the string table of section names takes slot SEC_ABBREV */
	sh[nsec - 1] = (Elf64_Shdr){ .sh_name = (uint32_t)name_at[SEC_SHSTR],
				     .sh_type = SHT_STRTAB,
				     .sh_offset = off[SEC_SHSTR],
				     .sh_size = size[SEC_SHSTR],
				     .sh_addralign = 1 };
	for (i = 0; i < (size_t)nsec; i++)
		jb_put(&tail, &sh[i], sizeof(sh[i]));
	if (tail.nomem) {
		rc = jelf_fail(err, err_len, -ENOMEM, "out of memory building the sections");
		goto out;
	}

	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_ident[EI_OSABI] = ELFOSABI_NONE;
	eh.e_type = ET_DYN;
	eh.e_machine = img->machine ? img->machine : EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_shoff = shoff;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(ph);
	eh.e_phnum = 1;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shnum = (Elf64_Half)nsec;
	eh.e_shstrndx = (Elf64_Half)(nsec - 1);
	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_offset = OP_JITELF_TEXT_OFFSET;
	ph.p_vaddr = ph.p_paddr = OP_JITELF_TEXT_OFFSET;
	ph.p_filesz = ph.p_memsz = img->text_size;
	ph.p_align = 0x1000;

	rc = jelf_pwrite(fd, &eh, sizeof(eh), 0);
	if (!rc)
		rc = jelf_pwrite(fd, &ph, sizeof(ph), sizeof(eh));
	for (i = 0; !rc && i < img->nr_funcs; i++)
		if (img->funcs[i].code)
			rc = jelf_pwrite(fd, img->funcs[i].code, img->funcs[i].size,
					 OP_JITELF_TEXT_OFFSET + img->funcs[i].off);
	if (!rc)
		rc = jelf_pwrite(fd, tail.p, tail.len, tail_at);
	if (rc)
		jelf_fail(err, err_len, rc, "writing the image: %s", strerror(-rc));
out:
	free(tail.p);
	free(strtab.p);
	free(symtab.p);
	free(abbrev.p);
	free(info.p);
	free(line.p);
	free(shstr.p);
	return rc;
}
