/*
 * evbuf.h - the event buffer between buffer sync and trans: an array of u64
 * words holding sample pairs (offset, counter) and escape records
 * (EVB_ESCAPE, code, nargs, args[nargs]). Sync writes it, trans walks it.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_EVBUF_H
#define OP_CORE_EVBUF_H

#include <stddef.h>
#include <stdint.h>

#include "oprofile_sdk.h"

/*
 * Word layout:
 *   sample pair:   offset, counter          (offset != EVB_ESCAPE)
 *   escape record: EVB_ESCAPE, code, nargs, arg[0] .. arg[nargs-1]
 * Every escape record carries its length, core or plugin, so that a reader
 * can skip a code it does not know. An offset equal to EVB_ESCAPE is never
 * written (sync counts such a pc as invalid).
 */
#define EVB_ESCAPE (~(uint64_t)0)

/* Core escape codes (< OP_ESCAPE_FIRST_PLUGIN); numbers follow OProfile's. */
enum evb_code {
	EVB_CTX_SWITCH = 1,    /* tid, app_cookie, tgid */
	EVB_CPU_SWITCH = 2,    /* cpu */
	EVB_COOKIE_SWITCH = 3, /* cookie (image of the following samples) */
	EVB_KERNEL_ENTER = 4,  /* - : following samples are in the kernel */
	EVB_USER_ENTER = 5,    /* - : following samples are in user space */
	EVB_ANON_SWITCH = 6,   /* cookie, start, end (inclusive) of an anon region */
	EVB_TRACE_BEGIN = 8,   /* - : next pair is a leaf, then arcs (see trans.c) */
	EVB_TRACE_END = 9,     /* - : end of the arcs */
	/*
	 * cpu: like EVB_CPU_SWITCH, but the context becomes the one last used
	 * on that cpu (ours; not in OProfile). Both codes first set the current
	 * context aside for the cpu being left (cpu < EVB_MAX_CPU_CONTEXTS), so
	 * samples of two CPUs interleaved in time need no other code.
	 */
	EVB_CPU_RESTORE = 15,
	EVB_CORE_CODES_END = 16,
};

/* CPUs whose context is set aside on a cpu change (EVB_CPU_RESTORE) */
#define EVB_MAX_CPU_CONTEXTS 256

/* Argument counts of the core codes; -1 = not a core code. */
int evb_core_nargs(uint32_t code);
const char *evb_code_name(uint32_t code);

/*
 * The writer. When a record does not fit, flush() is called with the words
 * written so far (trans consumes them) and the buffer restarts empty.
 */
struct op_emit {
	uint64_t *buf;
	size_t len, cap;       /* in words */
	int (*flush)(void *priv, const uint64_t *words, size_t nwords);
	void *flush_priv;
	uint64_t too_long;     /* records refused: longer than the whole buffer */
	uint64_t flushes;
};

/* Buffer of @cap words (>= 64). Returns 0 or -ENOMEM. */
int evb_init(struct op_emit *w, size_t cap,
	     int (*flush)(void *priv, const uint64_t *words, size_t nwords), void *priv);
void evb_free(struct op_emit *w);
/* Hand what is buffered to flush() and start over. */
int evb_flush(struct op_emit *w);
/* HOT. Append a sample pair. */
int evb_pair(struct op_emit *w, uint64_t offset, uint64_t counter);
/* HOT. Append an escape record; -ENOSPC if it can never fit, -EINVAL for a bad code. */
int evb_code(struct op_emit *w, uint32_t code, const uint64_t *args, uint32_t nargs);

/* HOT, sync's own core codes (@code valid): inline when the record fits. */
static inline void evb_put_code(struct op_emit *w, uint32_t code, const uint64_t *args,
				uint32_t nargs)
{
	uint64_t *p;
	uint32_t i;

	if (w->len + 3 + nargs > w->cap) {
		evb_code(w, code, args, nargs);
		return;
	}
	p = w->buf + w->len;
	p[0] = EVB_ESCAPE;
	p[1] = code;
	p[2] = nargs;
	for (i = 0; i < nargs; i++)
		p[3 + i] = args[i];
	w->len += 3 + (size_t)nargs;
}

/* HOT. evb_pair(), inline when the pair fits. */
static inline void evb_put_pair(struct op_emit *w, uint64_t offset, uint64_t counter)
{
	if (offset == EVB_ESCAPE || w->len + 2 > w->cap) {
		evb_pair(w, offset, counter);
		return;
	}
	w->buf[w->len] = offset;
	w->buf[w->len + 1] = counter;
	w->len += 2;
}

#endif /* OP_CORE_EVBUF_H */
