/*
 * opannotate.h - what the parts of opannotate share: the options and the
 * loaded profile (struct ann), the count/percent columns in OProfile's
 * layout, and the source files read once for both the annotated sources
 * (ann_source.c) and the interleaved disassembly (ann_asm.c).
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef OPANNOTATE_H
#define OPANNOTATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "opreport.h"

/* one source file as read from disk (or not found), split in lines */
struct ann_text {
	char *dwarf_name; /* as the line table names it */
	char *path;       /* where it was found (--base-dirs, --search-dirs applied) */
	char *data;
	size_t *line_off; /* start of line i + 1 in data */
	unsigned nlines;
	bool missing;
};

struct ann {
	struct rpt_profile p;
	struct rpt_opts o;
	struct rpt_rows rows;
	bool source, assembly;
	char *output_dir; /* absolute, ends without '/' */
	struct strlist search_dirs, base_dirs, include_file, exclude_file;
	char *cmdline;
	struct ann_text **texts; /* read source files, by dwarf_name */
	size_t ntexts;
	unsigned nwarnings;
};

/* "     N P.PPPP" per class (OProfile's columns) */
void ann_columns(FILE *f, const struct ann *a, const uint64_t *count);
/* the columns, then the separators and " :" that start an annotated line */
void ann_counts(FILE *f, const struct ann *a, const uint64_t *count);
/* the same width of blanks and " :" for a line without samples */
void ann_fill(FILE *f, const struct ann *a);
/* " /\* NAME total:      N P.PPPP *\/", "NAME (inlined) total:" for an inlined function */
void ann_sym_note(FILE *f, const struct ann *a, const char *name, bool inlined,
		  const uint64_t *count);
/* the comment block that opens (or, in --output-dir files, closes) the output */
void ann_info(FILE *f, const struct ann *a);
/* is @count at least --threshold percent of the profile in some class? */
bool ann_above_threshold(const struct ann *a, const uint64_t *count);
/* Source file @dwarf_name, located and read once; never NULL but when out of memory. */
struct ann_text *ann_text_get(struct ann *a, const char *dwarf_name);
/* does --include-file / --exclude-file keep the file at @path? */
bool ann_file_selected(const struct ann *a, const char *path);

#define ann_warn(a, ...)                                      \
	do {                                                  \
		txt_msg("opannotate warning: ", __VA_ARGS__); \
		(a)->nwarnings++;                             \
	} while (0)
#define ann_error(...) txt_msg("opannotate error: ", __VA_ARGS__)

/* ann_source.c: --source without --assembly. 0 or -errno (message given). */
int ann_source(FILE *f, struct ann *a);
/* ann_asm.c: --assembly, with the source interleaved when --source. 0 or -errno. */
int ann_asm(FILE *f, struct ann *a);

#endif /* OPANNOTATE_H */
