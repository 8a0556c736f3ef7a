/*
 * options_print.c - --check-config's printout of the effective
 * configuration (struct op_options) in oprofiled.conf's own syntax.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "options.h"

/* a libconfig string literal */
static void opt_print_lit(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(out, "\\x%02x", (unsigned char)*s);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static void opt_print_str(FILE *out, const char *key, const char *s)
{
	fprintf(out, "%s = ", key);
	opt_print_lit(out, s);
	fputs(";\n", out);
}

/* @names[i] is the name of bit i */
static void opt_print_bits(FILE *out, const char *key, unsigned bits, const char *const *names,
			   size_t n, const char *none)
{
	bool first = true;
	size_t i;

	fprintf(out, "%s = \"", key);
	for (i = 0; i < n; i++) {
		if (!(bits & (1u << i)))
			continue;
		fprintf(out, "%s%s", first ? "" : ",", names[i]);
		first = false;
	}
	fprintf(out, "%s\";\n", first ? none : "");
}

void options_print(const struct op_options *o, FILE *out)
{
	static const char *const modes[] = { "launch", "pid", "system-wide", "replay" };
	/* bit order of enum op_separate and OP_VERBOSE_* */
	static const char *const sep_atoms[] = { "lib", "kernel", "thread", "cpu", "cgroup" };
	static const char *const verbose_atoms[] = { "sfile",  "samples", "arcs",
						     "module", "misc",    "ext" };
	size_t i;

	fprintf(out, "# oprofiled effective configuration (command line > %s > defaults)\n",
		o->config_file ? o->config_file : "no config file");
	fprintf(out, "# mode: %s\n", (unsigned)o->mode < 4 ? modes[o->mode] : "?");
	if (o->command) {
		fputs("# command:", out);
		for (i = 0; o->command[i]; i++)
			fprintf(out, " %s", o->command[i]);
		fputc('\n', out);
	}
	if (o->nr_pids) {
		fputs("# pids:", out);
		for (i = 0; i < o->nr_pids; i++)
			fprintf(out, "%s%u", i ? "," : " ", o->pids[i]);
		fputc('\n', out);
	}
	if (o->record_file)
		fprintf(out, "# record: %s%s\n", o->record_file,
			o->record_overwrite ? " (replacing an existing file)" : "");
	if (o->replay_file)
		fprintf(out, "# replay: %s\n", o->replay_file);
	opt_print_str(out, "session_dir", o->session_dir);
	if (o->session_group)
		opt_print_str(out, "session_group", o->session_group);
	if (o->events_spec)
		opt_print_str(out, "events", o->events_spec);
	else
		fputs("# events: the hardware model's default\n", out);
	if (o->frequency)
		fprintf(out, "frequency = %u;\n", o->frequency);
	opt_print_bits(out, "separate", o->separate, sep_atoms, 5, "none");
	opt_print_str(out, "plugin_dir", o->plugin_dir);
	if (o->vmlinux)
		opt_print_str(out, "vmlinux", o->vmlinux);
	fprintf(out, "no_vmlinux = %s;\n", o->no_vmlinux ? "true" : "false");
	if (o->image_filter) {
		fputs("image = [", out);
		for (i = 0; o->image_filter[i]; i++)
			fprintf(out, "%s\"%s\"", i ? ", " : " ", o->image_filter[i]);
		fputs(" ];\n", out);
	}
	opt_print_bits(out, "verbose", o->verbose, verbose_atoms, 6, "");
	fprintf(out, "append = %s;\n", o->append ? "true" : "false");
	fprintf(out, "ring_pages = %zu;\n", o->ring_pages);
	fprintf(out, "system_wide = %s;\n", o->mode == OP_MODE_SYSTEM ? "true" : "false");
	opt_print_str(out, "proc_root", o->proc_root);
	if (o->cpu_type)
		opt_print_str(out, "cpu_type", o->cpu_type);
	fprintf(out, "stats_interval = %u;\n", o->stats_interval);
	fprintf(out, "sync_interval = %u;\n", o->sync_interval);
	fprintf(out, "max_open_files = %u;\n", o->max_open_files);
	opt_print_str(out, "log_file", o->log_file);
	fprintf(out, "daemonize = %s;\n", o->daemonize ? "true" : "false");
	fprintf(out, "rotate_interval = %u;\n", o->rotate_interval);
	fprintf(out, "rotate_keep = %u;\n", o->rotate_keep);
	fputs("plugins = (", out);
	for (i = 0; i < o->nr_features; i++) {
		fprintf(out, "%s\n  # from %s\n  { name = ", i ? "," : "", o->features[i].origin);
		opt_print_lit(out, o->features[i].name);
		fputs("; args = ", out);
		opt_print_lit(out, o->features[i].args);
		fputs("; }", out);
	}
	fputs(o->nr_features ? "\n);\n" : " );\n", out);
}
