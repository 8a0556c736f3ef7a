/*
 * ksyms.h - line parsers for /proc/kallsyms and /proc/modules (ksyms.c).
 * Pure functions over one line: no I/O, no allocation, no host services,
 * so the formats can be tested (and fuzzed) on their own.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PLUGIN_KSYMS_H
#define OP_PLUGIN_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One kallsyms line: "addr type name[\t[module]]". Pointers point into the line. */
struct ksym_line {
	uint64_t addr;
	char type;
	const char *name;
	size_t name_len;
	const char *module;   /* NULL when the symbol is the kernel's own */
	size_t module_len;
};

/* One /proc/modules line: "name size refcnt deps state address [taints]". */
struct kmod_line {
	const char *name;
	size_t name_len;
	uint64_t size;
	uint64_t addr;
	const char *state;    /* "Live", "Loading", "Unloading" */
	size_t state_len;
};

/*
 * Parse one kallsyms line (trailing '\n' allowed). Returns 0, or -EINVAL if
 * the line does not have the format: address of 1..16 hex digits, one
 * letter for the type, a name without blanks, optionally one "[module]".
 */
int ksyms_parse_line(const char *line, struct ksym_line *out);

/* Parse one /proc/modules line. Returns 0 or -EINVAL. */
int kmods_parse_line(const char *line, struct kmod_line *out);

/* t, T and W: the symbols a report needs to name functions */
bool ksyms_is_text(char type);

/*
 * kallsyms groups some kernel text under bracketed names that are not
 * loadable modules: "[bpf]" (JITed programs), "[__builtin__ftrace]",
 * "[__builtin__kprobes]". Their code belongs to the kernel image.
 */
bool ksyms_is_pseudo_module(const char *name, size_t len);

#endif /* OP_PLUGIN_KSYMS_H */
