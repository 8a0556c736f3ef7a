/*
 * corpus_runner.h - shared TAP regression runner for the fuzz targets when
 * they are built with gcc for make check (not in a -DOP_LIBFUZZER build).
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORPUS_RUNNER_H
#define OP_CORPUS_RUNNER_H

#include <stddef.h>
#include <stdint.h>

/*
 * Check one input @data/@size read from the corpus file @name. Returns NULL
 * when it passed, else what went wrong; may put a short note shown after
 * "ok" into @note (@note_len bytes, starts empty).
 */
typedef const char *corpus_one_fn(const char *name, const uint8_t *data, size_t size,
				  char *note, size_t note_len);

/*
 * Run @one over every file (sorted by name) of each directory or file given
 * in argv[1..], or of $OP_SRCDIR/tests/fuzz/corpus/@corpus_subdir when none
 * is given, printing TAP. Returns the exit status: 0 when all passed.
 */
int corpus_main(int argc, char **argv, const char *corpus_subdir, corpus_one_fn *one);

#endif /* OP_CORPUS_RUNNER_H */
