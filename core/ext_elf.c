/*
 * ext_elf.c - reads the plugin descriptor's version, size and flags from the
 * file open at an fd, as ld.so finds symbols, so that an incompatible
 * plugin is refused before dlopen runs any of its code.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ext_int.h"

#define EXT_ELF_CLASS (__SIZEOF_POINTER__ == 8 ? ELFCLASS64 : ELFCLASS32)
#define EXT_ELF_DATA (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB)
#if defined(__x86_64__)
#define EXT_ELF_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define EXT_ELF_MACHINE EM_AARCH64
#elif defined(__i386__)
#define EXT_ELF_MACHINE EM_386
#endif

/* bounds of the ELF reader: far above what a linker writes for a plugin */
#define EXT_ELF_MAX_PHDRS 64
#define EXT_ELF_MAX_DYN 1024
#define EXT_ELF_MAX_CHAIN 65536

/* a plugin file read through its fd, as ld.so would map it */
struct ext_elf {
	int fd;
	uint64_t size;
	ElfW(Phdr) load[EXT_ELF_MAX_PHDRS]; /* PT_LOAD segments */
	size_t nr_load;
	uint64_t symtab, strtab, strsz, hash, gnu_hash; /* from PT_DYNAMIC; 0 = absent */
};

/* @n bytes at file offset @off; false when they are not all in the file */
static bool ext_elf_read(const struct ext_elf *e, uint64_t off, void *buf, size_t n)
{
	if (off > e->size || n > e->size - off)
		return false;
	return pread(e->fd, buf, n, (off_t)off) == (ssize_t)n;
}

/* @n bytes at virtual address @va, from the file part of one PT_LOAD segment */
static bool ext_elf_read_va(const struct ext_elf *e, uint64_t va, void *buf, size_t n)
{
	size_t i;

	for (i = 0; i < e->nr_load; i++) {
		const ElfW(Phdr) *ph = &e->load[i];

		if (va >= ph->p_vaddr && va - ph->p_vaddr <= ph->p_filesz &&
		    n <= ph->p_filesz - (va - ph->p_vaddr))
			return ext_elf_read(e, ph->p_offset + (va - ph->p_vaddr), buf, n);
	}
	return false;
}

/*
 * Is dynamic symbol @idx the descriptor? 1 with @sym filled, 0 if not, -1
 * if the tables lie outside the file.
 */
static int ext_elf_sym(const struct ext_elf *e, uint64_t idx, ElfW(Sym) * sym)
{
	char name[sizeof(OP_EXT_SYMBOL)];

	if (!ext_elf_read_va(e, e->symtab + idx * sizeof(*sym), sym, sizeof(*sym)))
		return -1;
	if (sym->st_shndx == SHN_UNDEF || sym->st_name >= e->strsz ||
	    e->strsz - sym->st_name < sizeof(name))
		return 0;
	if (!ext_elf_read_va(e, e->strtab + sym->st_name, name, sizeof(name)))
		return -1;
	return memcmp(name, OP_EXT_SYMBOL, sizeof(name)) == 0;
}

/* DT_GNU_HASH lookup (the default of GNU ld): as ld.so's, bounded */
static int ext_elf_gnu_lookup(const struct ext_elf *e, ElfW(Sym) * sym)
{
	const unsigned char *s = (const unsigned char *)OP_EXT_SYMBOL;
	uint32_t h = 5381, hdr[4], idx, c;
	uint64_t buckets, chain;
	unsigned n;
	int rc;

	while (*s)
		h = h * 33 + *s++;
	if (!ext_elf_read_va(e, e->gnu_hash, hdr, sizeof(hdr)))
		return -1;
	/* nbuckets, symoffset, bloom words, bloom shift */
	if (!hdr[0])
		return 0;
	buckets = e->gnu_hash + sizeof(hdr) + (uint64_t)hdr[2] * sizeof(ElfW(Addr));
	chain = buckets + (uint64_t)hdr[0] * 4;
	if (!ext_elf_read_va(e, buckets + (uint64_t)(h % hdr[0]) * 4, &idx, 4))
		return -1;
	if (idx < hdr[1])
		return 0;
	for (n = 0; n < EXT_ELF_MAX_CHAIN; n++, idx++) {
		if (!ext_elf_read_va(e, chain + (uint64_t)(idx - hdr[1]) * 4, &c, 4))
			return -1;
		if ((c | 1) == (h | 1)) {
			rc = ext_elf_sym(e, idx, sym);
			if (rc)
				return rc;
		}
		if (c & 1)
			return 0;
	}
	return -1;
}

/* DT_HASH lookup (--hash-style=sysv), bounded by the chain's length */
static int ext_elf_sysv_lookup(const struct ext_elf *e, ElfW(Sym) * sym)
{
	const unsigned char *s = (const unsigned char *)OP_EXT_SYMBOL;
	uint32_t h = 0, g, hdr[2], idx;
	uint32_t n;
	int rc;

	while (*s) {
		h = (h << 4) + *s++;
		g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	/* nbucket, nchain */
	if (!ext_elf_read_va(e, e->hash, hdr, sizeof(hdr)))
		return -1;
	if (!hdr[0])
		return 0;
	if (!ext_elf_read_va(e, e->hash + sizeof(hdr) + (uint64_t)(h % hdr[0]) * 4, &idx, 4))
		return -1;
	for (n = 0; idx != STN_UNDEF; n++) {
		if (idx >= hdr[1] || n >= hdr[1])
			return -1;
		rc = ext_elf_sym(e, idx, sym);
		if (rc)
			return rc;
		if (!ext_elf_read_va(e, e->hash + sizeof(hdr) + ((uint64_t)hdr[0] + idx) * 4, &idx,
				     4))
			return -1;
	}
	return 0;
}

/* PT_LOAD segments and the dynamic section's symbol-table entries */
static int ext_elf_dynamic(struct ext_elf *e, const ElfW(Ehdr) * eh, char *why, size_t len)
{
	ElfW(Phdr) ph[EXT_ELF_MAX_PHDRS];
	const ElfW(Phdr) *dynamic = NULL;
	ElfW(Dyn) dyn;
	uint64_t i;

	if (eh->e_phentsize != sizeof(ph[0]) || !eh->e_phnum || eh->e_phnum > EXT_ELF_MAX_PHDRS ||
	    !ext_elf_read(e, eh->e_phoff, ph, eh->e_phnum * sizeof(ph[0]))) {
		snprintf(why, len,
			 "damaged ELF file: %u program headers of %u bytes at offset %llu "
			 "do not fit the file (%llu bytes) - rebuild or reinstall the plugin",
			 (unsigned)eh->e_phnum, (unsigned)eh->e_phentsize,
			 (unsigned long long)eh->e_phoff, (unsigned long long)e->size);
		return -ENOEXEC;
	}
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD)
			e->load[e->nr_load++] = ph[i];
		else if (ph[i].p_type == PT_DYNAMIC)
			dynamic = &ph[i];
	}
	if (!dynamic) {
		snprintf(why, len,
			 "no dynamic segment: not a shared object - rebuild the plugin with "
			 "-shared -fPIC");
		return -ENOEXEC;
	}
	for (i = 0; i < dynamic->p_filesz / sizeof(dyn) && i < EXT_ELF_MAX_DYN; i++) {
		if (!ext_elf_read(e, dynamic->p_offset + i * sizeof(dyn), &dyn, sizeof(dyn)))
			break;
		if (dyn.d_tag == DT_NULL)
			break;
		switch (dyn.d_tag) {
		case DT_SYMTAB:
			e->symtab = dyn.d_un.d_ptr;
			break;
		case DT_STRTAB:
			e->strtab = dyn.d_un.d_ptr;
			break;
		case DT_STRSZ:
			e->strsz = dyn.d_un.d_val;
			break;
		case DT_HASH:
			e->hash = dyn.d_un.d_ptr;
			break;
		case DT_GNU_HASH:
			e->gnu_hash = dyn.d_un.d_ptr;
			break;
		case DT_SYMENT:
			if (dyn.d_un.d_val != sizeof(ElfW(Sym))) {
				snprintf(why, len,
					 "damaged ELF file: dynamic symbols of %llu bytes, "
					 "expected %zu - rebuild the plugin",
					 (unsigned long long)dyn.d_un.d_val, sizeof(ElfW(Sym)));
				return -ENOEXEC;
			}
			break;
		}
	}
	return 0;
}

/*
 * Read the descriptor's version, size and flags from the plugin file open
 * at @fd, so that a plugin built for another SDK is refused before dlopen
 * runs any of its code (constructors). The descriptor is found as ld.so
 * finds symbols - program headers, dynamic segment, symbol hash table -
 * never through section headers, which a stripped file may lack and which
 * ld.so ignores. Those four members hold no pointers: the file bytes are what
 * the loaded object holds. Returns 0 with @pk filled, or a refusal with @why.
 */
int ext_elf_peek(int fd, struct ext_elf_head *pk, char *why, size_t len)
{
	struct ext_elf e = { .fd = fd };
	unsigned char head[4 * sizeof(uint32_t)];
	struct stat st = { 0 };
	ElfW(Ehdr) eh;
	ElfW(Sym) sym;
	int rc;

	if (fstat(fd, &st) || st.st_size < (off_t)sizeof(eh) ||
	    pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh)) {
		snprintf(why, len, "not an ELF shared object (%lld bytes) - rebuild the plugin",
			 (long long)st.st_size);
		return -ENOEXEC;
	}
	e.size = (uint64_t)st.st_size;
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != EXT_ELF_CLASS ||
	    eh.e_ident[EI_DATA] != EXT_ELF_DATA || eh.e_type != ET_DYN) {
		snprintf(why, len,
			 "not an ELF shared object for this system (%s) - rebuild the plugin "
			 "for this system with -shared -fPIC",
			 memcmp(eh.e_ident, ELFMAG, SELFMAG) ? "no ELF header" :
							       "other class, byte order or type");
		return -ENOEXEC;
	}
#ifdef EXT_ELF_MACHINE
	if (eh.e_machine != EXT_ELF_MACHINE) {
		snprintf(why, len,
			 "built for ELF machine %u, this system is %u - rebuild the plugin "
			 "for this system",
			 (unsigned)eh.e_machine, (unsigned)EXT_ELF_MACHINE);
		return -ENOEXEC;
	}
#endif
	rc = ext_elf_dynamic(&e, &eh, why, len);
	if (rc)
		return rc;
	rc = 0;
	if (e.symtab && e.strtab && e.strsz && e.gnu_hash)
		rc = ext_elf_gnu_lookup(&e, &sym);
	else if (e.symtab && e.strtab && e.strsz && e.hash)
		rc = ext_elf_sysv_lookup(&e, &sym);
	if (rc < 0) {
		snprintf(why, len,
			 "damaged ELF file: its dynamic symbol tables lie outside the file "
			 "(%llu bytes) - rebuild or reinstall the plugin",
			 (unsigned long long)e.size);
		return -ENOEXEC;
	}
	if (rc == 0) {
		snprintf(why, len,
			 "does not export the descriptor \"%s\" - not an oprofiled plugin, or "
			 "built without OP_EXT_DEFINE()",
			 OP_EXT_SYMBOL);
		return -ENOEXEC;
	}
	if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT && ELF64_ST_TYPE(sym.st_info) != STT_NOTYPE) {
		snprintf(why, len,
			 "descriptor \"%s\" is not a data symbol (ELF symbol type %u) - "
			 "declare it with OP_EXT_DEFINE()",
			 OP_EXT_SYMBOL, (unsigned)ELF64_ST_TYPE(sym.st_info));
		return -ENOEXEC;
	}
	if (!ext_elf_read_va(&e, sym.st_value, head, sizeof(head))) {
		snprintf(why, len,
			 "descriptor \"%s\" at 0x%llx is not initialised data of the file - "
			 "declare it with OP_EXT_DEFINE()",
			 OP_EXT_SYMBOL, (unsigned long long)sym.st_value);
		return -ENOEXEC;
	}
	memcpy(&pk->major, head + offsetof(struct op_ext_descriptor, abi_major), 4);
	memcpy(&pk->minor, head + offsetof(struct op_ext_descriptor, abi_minor), 4);
	memcpy(&pk->size, head + offsetof(struct op_ext_descriptor, size), 4);
	memcpy(&pk->flags, head + offsetof(struct op_ext_descriptor, flags), 4);
	pk->symsize = sym.st_size;
	return 0;
}
