/*
 * jit_corpus.h - what fuzz_jitdump and fuzz_jitmap demand of a corpus file
 * in the make-check runner: valid-* files give records and no counted
 * error, bad-* files at least one counted error.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_JIT_CORPUS_H
#define OP_JIT_CORPUS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "op_jit.h"

/* NULL when @name's prefix agrees with the outcome; the note says what was read */
static inline const char *jit_corpus_verdict(const char *name, uint64_t n, const char *unit,
					     const struct op_jit_errors *e, bool broken, char *note,
					     size_t note_len)
{
	uint64_t nerr = op_jit_errors_total(e);
	char errs[512];

	op_jit_errors_format(e, errs, sizeof(errs));
	snprintf(note, note_len, "%llu %s%s%s", (unsigned long long)n, unit, nerr ? ", " : "", errs);
	if (!strncmp(name, "valid-", 6) && (nerr || !n || broken))
		return "a valid-* input gave errors or nothing";
	if (!strncmp(name, "bad-", 4) && !nerr)
		return "a bad-* input gave no counted error";
	return NULL;
}

#endif /* OP_JIT_CORPUS_H */
