/*
 * op_ksyms.h - the /proc/kallsyms and /proc/modules formats, one reading of
 * them for the kernel plugin (which resolves kernel PCs and writes the
 * session's snapshot) and opreport (which names kernel functions from it).
 * Pure functions over one line: no I/O, no allocation.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_KSYMS_H
#define OP_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One kallsyms line: "addr type name[\t[module]]". Pointers point into the line. */
struct op_ksym_line {
	uint64_t addr;
	char type;
	const char *name;
	size_t name_len;
	const char *module; /* NULL when the symbol is the kernel's own */
	size_t module_len;
};

/* One /proc/modules line: "name size refcnt deps state address [taints]". */
struct op_kmod_line {
	const char *name;
	size_t name_len;
	uint64_t size;
	uint64_t addr;
	const char *state; /* "Live", "Loading", "Unloading" */
	size_t state_len;
};

/*
 * Parse one kallsyms line (trailing '\n' or "\r\n" allowed). Returns 0, or
 * -EINVAL if the line does not have the format: address of 1..16 hex
 * digits, one blank, one letter for the type, one blank, a name without
 * blanks (any length), optionally blanks and one "[module]" (a module name
 * without blanks, between the first '[' and the last ']'). The parse stops
 * at the first NUL: a line read with its length that holds a NUL before
 * its end is the caller's to refuse.
 */
int op_ksyms_parse_line(const char *line, struct op_ksym_line *out);

/* Parse one /proc/modules line. Returns 0 or -EINVAL. */
int op_kmods_parse_line(const char *line, struct op_kmod_line *out);

/*
 * A function, i.e. a symbol a report names code by: t/T (text) and w/W
 * (weak), as perf's kallsyms__is_function(). The kernel's own weak
 * functions show as 'W'; a module's weak functions as 'w' (the module
 * loader's elf_type() gives every weak non-object symbol 'w').
 */
static inline bool op_ksyms_is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/*
 * kallsyms groups some kernel text under bracketed names that are not
 * loadable modules: "[bpf]" (JITed programs), "[__builtin__ftrace]",
 * "[__builtin__kprobes]". Their code belongs to the kernel image.
 */
bool op_ksyms_is_pseudo_module(const char *name, size_t len);

/*
 * Whether @k's symbol lies in the key space of the image @module: NULL for
 * the kernel image (its own symbols and those of pseudo-modules: keys are
 * pc - the kernel's start for both), else the module of that name (keys
 * are pc - the module's start).
 */
bool op_ksyms_in_image(const struct op_ksym_line *k, const char *module);

/*
 * The kernel's own text as one pass over kallsyms sees it. Only text
 * symbols of the kernel (no module) at a non-zero address count: zero
 * addresses are what kptr_restrict shows to those who may not see them.
 */
struct op_ksyms_text {
	uint64_t text, stext, etext; /* _text, _stext, _etext */
	uint64_t lo, hi;             /* lowest and highest text symbol */
	bool has_text, has_stext, has_etext;
};

void op_ksyms_text_init(struct op_ksyms_text *t);

/* Count @k in @t if it is one of the kernel's own text symbols. */
void op_ksyms_text_add(struct op_ksyms_text *t, const struct op_ksym_line *k);

/*
 * The kernel image's start, the origin of its keys (pc - start) for the
 * daemon and the report alike: _text, else _stext, else the lowest text
 * symbol. false when @t saw no text symbol at all.
 */
bool op_ksyms_text_start(const struct op_ksyms_text *t, uint64_t *start);

#endif /* OP_KSYMS_H */
