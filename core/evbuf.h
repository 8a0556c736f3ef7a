/*
 * evbuf.h - the event buffer between buffer sync and trans: an array of u64
 * words holding sample pairs (offset, counter) and escape records
 * (EVB_ESCAPE, code, nargs, args[nargs]). Sync writes it, trans walks it.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_CORE_EVBUF_H
#define OP_CORE_EVBUF_H

#include <stdbool.h>
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

/*
 * Escape codes: 1 .. EVB_PLUGIN_CODE_FIRST-1 are the core's (below), the
 * rest up to EVB_CODE_MAX-1 are handed out to plugins at registration. Code
 * 0 is never written. The SDK numbers plugin codes the same way
 * (OP_ESCAPE_FIRST_PLUGIN .. OP_ESCAPE_MAX, the last one included;
 * evbuf.c asserts they agree).
 */
#define EVB_PLUGIN_CODE_FIRST 32u
#define EVB_CODE_MAX 256u

/* Core escape codes (< EVB_PLUGIN_CODE_FIRST); numbers follow OProfile's. */
enum evb_code {
	EVB_CTX_SWITCH = 1,    /* tid, app_cookie, tgid */
	EVB_CPU_SWITCH = 2,    /* cpu */
	EVB_COOKIE_SWITCH = 3, /* cookie (image of the following samples) */
	EVB_KERNEL_ENTER = 4,  /* - : following samples are in the kernel */
	EVB_USER_ENTER = 5,    /* - : following samples are in user space */
	EVB_ANON_SWITCH = 6,   /* cookie, start, end (inclusive) of an anon region */
	/*
	 * 7 (OProfile's DROP_MODULES), 8 and 9 (TRACE_BEGIN/TRACE_END, arcs of a
	 * call chain; call graphs are the callgraph plugin's now) and 10..14 are
	 * reserved: never reuse these numbers, a reader counts them as unknown.
	 */
	/*
	 * cpu: like EVB_CPU_SWITCH, but the context becomes the one last used
	 * on that cpu (ours; not in OProfile). Both codes first set the current
	 * context aside for the cpu being left (cpu < EVB_MAX_CPU_CONTEXTS), so
	 * samples of two CPUs interleaved in time need no other code.
	 */
	EVB_CPU_RESTORE = 15,
	/* --- issue 20: per-process split key --- */
	/* split: the current context's split key (--separate=cgroup; ours) */
	EVB_SPLIT_SWITCH = 16,
	EVB_CORE_CODES_END = 17,
};

/* a code that may be written: core or plugin */
static inline bool evb_code_ok(uint64_t code)
{
	return code && code < EVB_CODE_MAX;
}

/* in the core's range (not necessarily one the core knows: evb_core_nargs) */
static inline bool evb_core_code(uint64_t code)
{
	return code && code < EVB_CORE_CODES_END;
}

/* in the plugins' range */
static inline bool evb_plugin_code(uint64_t code)
{
	return code >= EVB_PLUGIN_CODE_FIRST && code < EVB_CODE_MAX;
}

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
	size_t len, cap; /* in words */
	int (*flush)(void *priv, const uint64_t *words, size_t nwords);
	void *flush_priv;
	uint64_t too_long; /* records refused: longer than the whole buffer */
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

/* HOT. @n more words fit without a flush. */
static inline bool evb_room(const struct op_emit *w, size_t n)
{
	return w->len + n <= w->cap;
}

/*
 * HOT. Store a sample pair; the caller checked evb_room(w, 2) and that
 * @offset is not EVB_ESCAPE.
 */
static inline void evb_store_pair(struct op_emit *w, uint64_t offset, uint64_t counter)
{
	uint64_t *p = w->buf + w->len;

	p[0] = offset;
	p[1] = counter;
	w->len += 2;
}

/* HOT. Store an escape record; the caller checked evb_room(w, 3 + nargs) and @code. */
static inline void evb_store_code(struct op_emit *w, uint32_t code, const uint64_t *args,
				  uint32_t nargs)
{
	uint64_t *p = w->buf + w->len;
	uint32_t i;

	p[0] = EVB_ESCAPE;
	p[1] = code;
	p[2] = nargs;
	for (i = 0; i < nargs; i++)
		p[3 + i] = args[i];
	w->len += 3 + (size_t)nargs;
}

/* HOT, sync's own core codes (@code valid): inline when the record fits. */
static inline void evb_put_code(struct op_emit *w, uint32_t code, const uint64_t *args,
				uint32_t nargs)
{
	if (!evb_room(w, 3 + (size_t)nargs)) {
		evb_code(w, code, args, nargs);
		return;
	}
	evb_store_code(w, code, args, nargs);
}

/* HOT. evb_pair(), inline when the pair fits. */
static inline void evb_put_pair(struct op_emit *w, uint64_t offset, uint64_t counter)
{
	if (offset == EVB_ESCAPE || !evb_room(w, 2)) {
		evb_pair(w, offset, counter);
		return;
	}
	evb_store_pair(w, offset, counter);
}

/*
 * The reader: what evb_next() found at the position it was given.
 *   EVB_END     no word left
 *   EVB_PAIR    a sample pair: offset, counter
 *   EVB_RECORD  an escape record: code (0 when out of range: no code at
 *               all, count it as unknown), nargs, args (inside the buffer)
 *   EVB_CUT     a pair or record cut by the end of the buffer (the rest of
 *               the buffer cannot be read)
 */
enum evb_kind { EVB_END, EVB_PAIR, EVB_RECORD, EVB_CUT };

struct evb_item {
	uint64_t offset, counter;
	uint32_t code, nargs;
	const uint64_t *args;
};

/* HOT. The item at *@pos of the @n words @w; *@pos moves past it. */
static inline enum evb_kind evb_next(const uint64_t *w, size_t n, size_t *pos, struct evb_item *it)
{
	size_t i = *pos;

	if (i >= n)
		return EVB_END;
	if (w[i] != EVB_ESCAPE) {
		if (n - i < 2)
			return EVB_CUT;
		it->offset = w[i];
		it->counter = w[i + 1];
		*pos = i + 2;
		return EVB_PAIR;
	}
	if (n - i < 3 || w[i + 2] > n - i - 3)
		return EVB_CUT;
	it->code = evb_code_ok(w[i + 1]) ? (uint32_t)w[i + 1] : 0;
	it->nargs = (uint32_t)w[i + 2];
	it->args = &w[i + 3];
	*pos = i + 3 + (size_t)it->nargs;
	return EVB_RECORD;
}

/*
 * HOT, the reader's fast paths (trans runs them before evb_next()): a sample
 * pair at *@pos into @offset/@counter, *@pos moved past it; false (nothing
 * moved) when the words at *@pos are not a whole pair.
 */
static inline bool evb_next_pair(const uint64_t *w, size_t n, size_t *pos, uint64_t *offset,
				 uint64_t *counter)
{
	size_t i = *pos;

	if (i + 2 > n || w[i] == EVB_ESCAPE)
		return false;
	*offset = w[i];
	*counter = w[i + 1];
	*pos = i + 2;
	return true;
}

/* Words of a whole EVB_CPU_RESTORE record (escape, code, nargs 1, cpu). */
#define EVB_CPU_RESTORE_WORDS 4

/* HOT. Whether an EVB_CPU_RESTORE record starts at @pos; its cpu in @cpu. */
static inline bool evb_cpu_restore_at(const uint64_t *w, size_t n, size_t pos, uint64_t *cpu)
{
	if (pos + EVB_CPU_RESTORE_WORDS > n || w[pos] != EVB_ESCAPE ||
	    w[pos + 1] != EVB_CPU_RESTORE || w[pos + 2] != 1)
		return false;
	*cpu = w[pos + 3];
	return true;
}

#endif /* OP_CORE_EVBUF_H */
