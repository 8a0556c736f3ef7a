/*
 * op_jit.c - readers of perf's jitdump and perf-map formats (see op_jit.h):
 * framing of a stream fed in arbitrary pieces, every field bounded by the
 * record that holds it, names escaped, every defect counted.
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_jit.h"

/* a DEBUG_INFO record delivers at most this many entries and this many
 * bytes of (escaped) file names: the rest is counted, not allocated */
#define OP_JIT_DEBUG_MAX_ENTRIES 65536u
#define OP_JIT_DEBUG_MAX_NAMES (16u << 20)

/* ------------------------------------------------------------------ */
/* errors                                                             */
/* ------------------------------------------------------------------ */

#define OP_JIT_ERRORS_N (sizeof(struct op_jit_errors) / sizeof(uint64_t))

/* the field names, in struct order, for op_jit_errors_format */
static const char *const err_names[] = {
	"bad_magic",         "bad_version",    "bad_header_size", "record_size",    "record_short",
	"code_size",         "unknown_record", "after_close",     "debug_count",    "debug_entry",
	"name_unterminated", "name_escaped",   "name_truncated",  "name_empty",     "map_syntax",
	"map_overflow",      "map_long_line",  "map_nul",         "truncated_tail",
};
_Static_assert(sizeof(err_names) / sizeof(err_names[0]) == OP_JIT_ERRORS_N,
	       "one name per op_jit_errors field");

void op_jit_errors_add(struct op_jit_errors *to, const struct op_jit_errors *from)
{
	uint64_t *t = (uint64_t *)to;
	const uint64_t *f = (const uint64_t *)from;

	for (size_t i = 0; i < OP_JIT_ERRORS_N; i++)
		t[i] += f[i];
}

uint64_t op_jit_errors_total(const struct op_jit_errors *e)
{
	const uint64_t *f = (const uint64_t *)e;
	uint64_t n = 0;

	for (size_t i = 0; i < OP_JIT_ERRORS_N; i++)
		n += f[i];
	return n;
}

size_t op_jit_errors_format(const struct op_jit_errors *e, char *buf, size_t len)
{
	const uint64_t *f = (const uint64_t *)e;
	size_t o = 0;

	if (!len)
		return 0;
	buf[0] = '\0';
	for (size_t i = 0; i < OP_JIT_ERRORS_N; i++) {
		int w;

		if (!f[i])
			continue;
		w = snprintf(buf + o, len - o, "%s%s=%llu", o ? " " : "", err_names[i],
			     (unsigned long long)f[i]);
		if (w < 0 || (size_t)w >= len - o) {
			buf[o] = '\0';
			break;
		}
		o += (size_t)w;
	}
	return o;
}

/* ------------------------------------------------------------------ */
/* names                                                              */
/* ------------------------------------------------------------------ */

size_t op_jit_escape_name(const char *in, size_t len, char *out, size_t out_len,
			  struct op_jit_errors *err)
{
	static const char unnamed[] = "[unnamed]";
	size_t o = 0, i;
	bool escaped = false;

	for (i = 0; i < len && in[i]; i++) {
		unsigned char c = (unsigned char)in[i];
		bool esc = c < 0x20 || c == 0x7f || c == '\\';
		size_t need = esc ? 4 : 1;

		if (o + need >= out_len || o + need > OP_JIT_NAME_MAX) {
			if (err)
				err->name_truncated++;
			break;
		}
		if (esc) {
			snprintf(out + o, out_len - o, "\\x%02x", c);
			escaped = true;
		} else {
			out[o] = (char)c;
		}
		o += need;
	}
	if (escaped && err)
		err->name_escaped++;
	if (!o) {
		if (err)
			err->name_empty++;
		o = sizeof(unnamed) - 1 < out_len ? sizeof(unnamed) - 1 : out_len - 1;
		memcpy(out, unnamed, o);
	}
	out[o] = '\0';
	return o;
}

/* ------------------------------------------------------------------ */
/* jitdump reader                                                     */
/* ------------------------------------------------------------------ */

struct op_jitdump_reader {
	op_jit_rec_fn *fn;
	void *priv;
	uint32_t max_record;
	bool have_header, broken, closed;
	struct op_jitdump_info info;
	uint64_t offset; /* consumed */
	uint8_t *hold;   /* an incomplete frame */
	size_t hold_len, hold_cap;
	char name[OP_JIT_NAME_MAX + 1];
	struct op_jit_line *lines; /* DEBUG_INFO entries */
	size_t lines_cap;
	char *names; /* their escaped file names */
	size_t names_cap;
	uint64_t count[OP_JIT_NR_KINDS];
	uint64_t skipped_unwinding;
	struct op_jit_errors err;
};

static uint32_t rd32(const struct op_jitdump_reader *r, const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return r->info.swapped ? __builtin_bswap32(v) : v;
}

static uint64_t rd64(const struct op_jitdump_reader *r, const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return r->info.swapped ? __builtin_bswap64(v) : v;
}

struct op_jitdump_reader *op_jitdump_reader_init(op_jit_rec_fn *fn, void *priv, uint32_t max_record)
{
	struct op_jitdump_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fn = fn;
	r->priv = priv;
	r->max_record = max_record ? max_record : OP_JIT_MAX_RECORD_DEFAULT;
	if (r->max_record < sizeof(struct op_jitdump_rec_header))
		r->max_record = sizeof(struct op_jitdump_rec_header);
	return r;
}

/*
 * The size of the frame (header or record) starting at @p: 1 with *size
 * set, 0 when fewer than *size bytes are there to tell, -EINVAL (counted,
 * the stream is broken) when the frame cannot be.
 */
static int frame_size(struct op_jitdump_reader *r, const uint8_t *p, size_t avail, size_t *size)
{
	uint32_t v;

	if (!r->have_header) {
		if (avail < 12) {
			*size = 12;
			return 0;
		}
		memcpy(&v, p, sizeof(v));
		if (v == OP_JITDUMP_MAGIC) {
			r->info.swapped = false;
		} else if (v == OP_JITDUMP_MAGIC_SWAPPED) {
			r->info.swapped = true;
		} else {
			r->err.bad_magic++;
			return -EINVAL;
		}
		if (rd32(r, p + 4) != OP_JITDUMP_VERSION) {
			r->err.bad_version++;
			return -EINVAL;
		}
		v = rd32(r, p + 8);
		if (v < sizeof(struct op_jitdump_header) || v > OP_JIT_MAX_HEADER) {
			r->err.bad_header_size++;
			return -EINVAL;
		}
		*size = v;
		return 1;
	}
	if (avail < 8) {
		*size = 8;
		return 0;
	}
	v = rd32(r, p + 4);
	if (v < sizeof(struct op_jitdump_rec_header) || v > r->max_record) {
		r->err.record_size++;
		return -EINVAL;
	}
	*size = v;
	return 1;
}

static void read_header(struct op_jitdump_reader *r, const uint8_t *p)
{
	r->info.version = rd32(r, p + 4);
	r->info.elf_mach = rd32(r, p + 12);
	r->info.pid = rd32(r, p + 20);
	r->info.timestamp = rd64(r, p + 24);
	r->info.flags = rd64(r, p + 32);
	r->have_header = true;
}

/* Room for @n more entries / @len more name bytes, within the bounds. */
static int grow(void **buf, size_t *cap, size_t want, size_t elem)
{
	size_t ncap = *cap ? *cap : 16;
	void *nb;

	if (want <= *cap)
		return 0;
	while (ncap < want)
		ncap *= 2;
	nb = realloc(*buf, ncap * elem);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = ncap;
	return 0;
}

static int parse_debug(struct op_jitdump_reader *r, const uint8_t *p, size_t size,
		       struct op_jit_rec *rec)
{
	uint64_t nr = rd64(r, p + 24);
	size_t o = sizeof(struct op_jitdump_debug_info), n = 0, names_len = 0, prev = 0;
	bool have_prev = false;
	size_t max_fit = (size - o) / (OP_JITDUMP_DEBUG_ENTRY_FIXED + 1);

	rec->debug.code_addr = rd64(r, p + 16);
	if (nr > max_fit)
		r->err.debug_count++;
	/* the names are stored as offsets while the arena may move */
	while (n < nr && n < OP_JIT_DEBUG_MAX_ENTRIES) {
		struct op_jit_line *l;
		const uint8_t *fn;
		size_t flen, room;
		const uint8_t *nul;

		if (size - o < OP_JITDUMP_DEBUG_ENTRY_FIXED + 1) {
			if (size - o) /* a partial entry (a whole missing one is debug_count) */
				r->err.debug_entry++;
			break;
		}
		fn = p + o + OP_JITDUMP_DEBUG_ENTRY_FIXED;
		room = size - o - OP_JITDUMP_DEBUG_ENTRY_FIXED;
		nul = memchr(fn, 0, room);
		if (!nul) {
			r->err.debug_entry++;
			r->err.name_unterminated++;
			break;
		}
		flen = (size_t)(nul - fn);
		if (grow((void **)&r->lines, &r->lines_cap, n + 1, sizeof(*r->lines)))
			return -ENOMEM;
		l = &r->lines[n];
		l->addr = rd64(r, p + o);
		l->lineno = rd32(r, p + o + 8);
		l->discrim = rd32(r, p + o + 12);
		if (flen == 1 && fn[0] == 0xff && have_prev) {
			/* perf's "same file as the previous entry" */
			l->filename = (const char *)(uintptr_t)prev;
		} else {
			size_t w, need = names_len + OP_JIT_NAME_MAX + 1;

			if (need > OP_JIT_DEBUG_MAX_NAMES) {
				r->err.debug_entry++;
				break;
			}
			if (grow((void **)&r->names, &r->names_cap, need, 1))
				return -ENOMEM;
			w = op_jit_escape_name((const char *)fn, flen, r->names + names_len,
					       OP_JIT_NAME_MAX + 1, &r->err);
			prev = names_len;
			have_prev = true;
			l->filename = (const char *)(uintptr_t)prev;
			names_len += w + 1;
		}
		o += OP_JITDUMP_DEBUG_ENTRY_FIXED + flen + 1;
		n++;
	}
	if (n == OP_JIT_DEBUG_MAX_ENTRIES && nr > n)
		r->err.debug_count++;
	for (size_t i = 0; i < n; i++)
		r->lines[i].filename = r->names + (uintptr_t)r->lines[i].filename;
	rec->debug.nr_entry = n;
	rec->debug.entries = r->lines;
	return 0;
}

/* One complete record of @size bytes at @p: deliver or skip it. */
static int process_record(struct op_jitdump_reader *r, const uint8_t *p, size_t size)
{
	struct op_jit_rec rec;
	uint32_t id = rd32(r, p);
	size_t fixed;
	int ret;

	memset(&rec, 0, sizeof(rec));
	rec.timestamp = rd64(r, p + 8);
	rec.offset = r->offset;
	switch (id) {
	case OP_JIT_CODE_LOAD:
		rec.kind = OP_JIT_LOAD;
		fixed = sizeof(struct op_jitdump_load);
		break;
	case OP_JIT_CODE_MOVE:
		rec.kind = OP_JIT_MOVE;
		fixed = sizeof(struct op_jitdump_move);
		break;
	case OP_JIT_CODE_DEBUG_INFO:
		rec.kind = OP_JIT_DEBUG_INFO;
		fixed = sizeof(struct op_jitdump_debug_info);
		break;
	case OP_JIT_CODE_CLOSE:
		rec.kind = OP_JIT_CLOSE;
		fixed = sizeof(struct op_jitdump_rec_header);
		break;
	case OP_JIT_CODE_UNLOAD:
		rec.kind = OP_JIT_UNLOAD;
		fixed = sizeof(struct op_jitdump_unload);
		break;
	case OP_JIT_CODE_UNWINDING_INFO:
		r->skipped_unwinding++;
		return 0;
	default:
		r->err.unknown_record++;
		return 0;
	}
	if (size < fixed) {
		r->err.record_short++;
		return 0;
	}
	if (r->closed)
		r->err.after_close++;
	switch (rec.kind) {
	case OP_JIT_LOAD: {
		uint64_t cs = rd64(r, p + 40);
		size_t area;
		const uint8_t *name = p + fixed;

		if (cs > size - fixed) {
			r->err.code_size++;
			return 0;
		}
		area = size - fixed - (size_t)cs;
		if (!memchr(name, 0, area))
			r->err.name_unterminated++;
		rec.load.pid = rd32(r, p + 16);
		rec.load.tid = rd32(r, p + 20);
		rec.load.vma = rd64(r, p + 24);
		rec.load.code_addr = rd64(r, p + 32);
		rec.load.code_size = cs;
		rec.load.code_index = rd64(r, p + 48);
		op_jit_escape_name((const char *)name, area, r->name, sizeof(r->name), &r->err);
		rec.load.name = r->name;
		rec.load.code = p + size - cs;
		break;
	}
	case OP_JIT_MOVE:
		rec.move.pid = rd32(r, p + 16);
		rec.move.tid = rd32(r, p + 20);
		rec.move.vma = rd64(r, p + 24);
		rec.move.old_code_addr = rd64(r, p + 32);
		rec.move.new_code_addr = rd64(r, p + 40);
		rec.move.code_size = rd64(r, p + 48);
		rec.move.code_index = rd64(r, p + 56);
		break;
	case OP_JIT_DEBUG_INFO:
		ret = parse_debug(r, p, size, &rec);
		if (ret)
			return ret;
		break;
	case OP_JIT_CLOSE:
		r->closed = true;
		break;
	case OP_JIT_UNLOAD:
		rec.unload.pid = rd32(r, p + 16);
		rec.unload.tid = rd32(r, p + 20);
		rec.unload.vma = rd64(r, p + 24);
		break;
	default:
		break;
	}
	r->count[rec.kind]++;
	return r->fn ? r->fn(r->priv, &rec) : 0;
}

/* A complete frame: the header or a record. Returns fn's value, -ENOMEM or 0. */
static int process_frame(struct op_jitdump_reader *r, const uint8_t *p, size_t size)
{
	int ret = 0;

	if (!r->have_header)
		read_header(r, p);
	else
		ret = process_record(r, p, size);
	if (ret == -ENOMEM) {
		r->broken = true; /* the frame is lost: nothing after it can be framed */
		return ret;
	}
	r->offset += size;
	return ret;
}

static int hold_append(struct op_jitdump_reader *r, const uint8_t *p, size_t n)
{
	if (grow((void **)&r->hold, &r->hold_cap, r->hold_len + n, 1))
		return -ENOMEM;
	memcpy(r->hold + r->hold_len, p, n);
	r->hold_len += n;
	return 0;
}

int op_jitdump_reader_feed(struct op_jitdump_reader *r, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	size_t n = len;

	if (r->broken)
		return -EINVAL;
	for (;;) {
		const uint8_t *f = r->hold_len ? r->hold : p;
		size_t avail = r->hold_len ? r->hold_len : n;
		size_t fsz = 0;
		int known = frame_size(r, f, avail, &fsz);
		int ret;

		if (known < 0) {
			r->broken = true;
			return -EINVAL;
		}
		if (r->hold_len) {
			size_t take = fsz - r->hold_len < n ? fsz - r->hold_len : n;

			/* fsz > hold_len: a frame it held would have been processed */
			if (hold_append(r, p, take))
				return -ENOMEM;
			p += take;
			n -= take;
			if (r->hold_len < fsz)
				return 0;
			if (!known)
				continue;
			ret = process_frame(r, r->hold, fsz);
			r->hold_len = 0;
		} else {
			if (!n)
				return 0;
			if (!known || n < fsz)
				return hold_append(r, p, n);
			ret = process_frame(r, p, fsz);
			p += fsz;
			n -= fsz;
		}
		if (ret)
			return ret;
	}
}

const struct op_jitdump_info *op_jitdump_reader_header(const struct op_jitdump_reader *r)
{
	return r->have_header ? &r->info : NULL;
}

uint64_t op_jitdump_reader_offset(const struct op_jitdump_reader *r)
{
	return r->offset;
}

uint64_t op_jitdump_reader_count(const struct op_jitdump_reader *r, enum op_jit_kind kind)
{
	return kind < OP_JIT_NR_KINDS ? r->count[kind] : 0;
}

uint64_t op_jitdump_reader_skipped_unwinding(const struct op_jitdump_reader *r)
{
	return r->skipped_unwinding;
}

bool op_jitdump_reader_broken(const struct op_jitdump_reader *r)
{
	return r->broken;
}

const struct op_jit_errors *op_jitdump_reader_errors(const struct op_jitdump_reader *r)
{
	return &r->err;
}

void op_jitdump_reader_fini(struct op_jitdump_reader *r, struct op_jit_errors *errs_out)
{
	if (!r)
		return;
	if (errs_out) {
		*errs_out = r->err;
		if (r->hold_len && !r->broken)
			errs_out->truncated_tail++;
	}
	free(r->hold);
	free(r->lines);
	free(r->names);
	free(r);
}

int op_jitdump_read_file(const char *path, op_jit_rec_fn *fn, void *priv,
			 struct op_jitdump_info *info, struct op_jit_errors *errs)
{
	static const struct op_jitdump_info none;
	struct op_jitdump_reader *r;
	uint8_t buf[65536];
	struct stat st;
	int fd, ret = 0;

	if (info)
		*info = none;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		ret = -errno;
		goto out_close;
	}
	if (!S_ISREG(st.st_mode)) {
		ret = -EINVAL;
		goto out_close;
	}
	r = op_jitdump_reader_init(fn, priv, 0);
	if (!r) {
		ret = -ENOMEM;
		goto out_close;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (!n)
			break;
		ret = op_jitdump_reader_feed(r, buf, (size_t)n);
		if (ret)
			break;
	}
	if (info && op_jitdump_reader_header(r))
		*info = *op_jitdump_reader_header(r);
	op_jitdump_reader_fini(r, errs);
out_close:
	close(fd);
	return ret;
}

/* ------------------------------------------------------------------ */
/* perf map                                                           */
/* ------------------------------------------------------------------ */

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

/* 1..16 hex digits, optional 0x; advances *i. */
static bool parse_hex(const char *s, size_t len, size_t *i, uint64_t *out)
{
	size_t k = *i, digits = 0;
	uint64_t v = 0;

	if (k + 1 < len && s[k] == '0' && (s[k + 1] == 'x' || s[k + 1] == 'X'))
		k += 2;
	for (; k < len; k++, digits++) {
		char c = s[k];
		unsigned d;

		if (c >= '0' && c <= '9')
			d = (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			d = (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			d = (unsigned)(c - 'A' + 10);
		else
			break;
		if (digits == 16)
			return false;
		v = v << 4 | d;
	}
	if (!digits)
		return false;
	*i = k;
	*out = v;
	return true;
}

int op_perfmap_parse_line(const char *line, size_t len, struct op_perfmap_entry *out,
			  char *name_buf, size_t name_len, struct op_jit_errors *err)
{
	struct op_jit_errors none;
	size_t i = 0, b;

	if (!err) {
		memset(&none, 0, sizeof(none));
		err = &none;
	}
	if (len && line[len - 1] == '\r')
		len--;
	while (i < len && blank(line[i]))
		i++;
	if (i == len)
		return -ENODATA;
	if (memchr(line, 0, len)) {
		err->map_nul++;
		return -EINVAL;
	}
	if (!parse_hex(line, len, &i, &out->start))
		goto syntax;
	b = i;
	while (i < len && blank(line[i]))
		i++;
	if (i == b || !parse_hex(line, len, &i, &out->size))
		goto syntax;
	b = i;
	while (i < len && blank(line[i]))
		i++;
	if (i == b)
		goto syntax;
	if (i == len) {
		err->name_empty++;
		return -EINVAL;
	}
	if (out->size > UINT64_MAX - out->start) {
		err->map_overflow++;
		return -EINVAL;
	}
	op_jit_escape_name(line + i, len - i, name_buf, name_len, err);
	out->name = name_buf;
	return 0;
syntax:
	err->map_syntax++;
	return -EINVAL;
}

struct op_perfmap_reader {
	op_perfmap_fn *fn;
	void *priv;
	char line[OP_PERFMAP_LINE_MAX];
	size_t line_len;
	bool skipping; /* inside a line longer than the max */
	uint64_t fed, offset, lineno, count;
	char name[OP_JIT_NAME_MAX + 1];
	struct op_jit_errors err;
};

struct op_perfmap_reader *op_perfmap_reader_init(op_perfmap_fn *fn, void *priv)
{
	struct op_perfmap_reader *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->fn = fn;
	r->priv = priv;
	return r;
}

static int perfmap_line(struct op_perfmap_reader *r, const char *s, size_t len)
{
	struct op_perfmap_entry e;

	r->lineno++;
	if (op_perfmap_parse_line(s, len, &e, r->name, sizeof(r->name), &r->err))
		return 0;
	e.lineno = r->lineno;
	r->count++;
	return r->fn ? r->fn(r->priv, &e) : 0;
}

int op_perfmap_reader_feed(struct op_perfmap_reader *r, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		const char *nl = memchr(p, '\n', len);
		size_t seg = nl ? (size_t)(nl - p) : len;
		int ret = 0;

		if (r->skipping) {
			/* the rest of an overlong line */
		} else if (r->line_len + seg > sizeof(r->line)) {
			r->err.map_long_line++;
			r->lineno++;
			r->line_len = 0;
			r->skipping = true;
		} else if (nl && !r->line_len) {
			ret = perfmap_line(r, p, seg);
		} else {
			memcpy(r->line + r->line_len, p, seg);
			r->line_len += seg;
			if (nl) {
				ret = perfmap_line(r, r->line, r->line_len);
				r->line_len = 0;
			}
		}
		if (nl) {
			r->skipping = false;
			seg++;
			r->offset = r->fed + seg;
		}
		r->fed += seg;
		p += seg;
		len -= seg;
		if (ret)
			return ret;
	}
	return 0;
}

uint64_t op_perfmap_reader_offset(const struct op_perfmap_reader *r)
{
	return r->offset;
}

uint64_t op_perfmap_reader_count(const struct op_perfmap_reader *r)
{
	return r->count;
}

const struct op_jit_errors *op_perfmap_reader_errors(const struct op_perfmap_reader *r)
{
	return &r->err;
}

int op_perfmap_reader_fini(struct op_perfmap_reader *r, bool flush, struct op_jit_errors *errs_out)
{
	int ret = 0;

	if (!r)
		return 0;
	if (flush && r->line_len && !r->skipping)
		ret = perfmap_line(r, r->line, r->line_len);
	else if (r->line_len)
		r->err.truncated_tail++;
	if (errs_out)
		*errs_out = r->err;
	free(r);
	return ret;
}
