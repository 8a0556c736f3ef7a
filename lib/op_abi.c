/*
 * op_abi.c - the session `abi` file (parse, format, compare, this machine's)
 * and the conversion of a sample file between a described ABI and the
 * native layout. Everything read from a foreign file is bounds-checked.
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
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

#include "op_abi.h"

static const char *const abi_names[OP_ABI_NR_KEYS] = {
	[OP_ABI_SIZEOF_DOUBLE] = "sizeof_double",
	[OP_ABI_SIZEOF_U64] = "sizeof_u64",
	[OP_ABI_SIZEOF_U8] = "sizeof_u8",
	[OP_ABI_SIZEOF_U32] = "sizeof_u32",
	[OP_ABI_SIZEOF_INT] = "sizeof_int",
	[OP_ABI_SIZEOF_UNSIGNED_INT] = "sizeof_unsigned_int",
	[OP_ABI_SIZEOF_ODB_KEY_T] = "sizeof_odb_key_t",
	[OP_ABI_SIZEOF_ODB_INDEX_T] = "sizeof_odb_index_t",
	[OP_ABI_SIZEOF_ODB_VALUE_T] = "sizeof_odb_value_t",
	[OP_ABI_SIZEOF_ODB_NODE_NR_T] = "sizeof_odb_node_nr_t",
	[OP_ABI_SIZEOF_ODB_DESCR_T] = "sizeof_odb_descr_t",
	[OP_ABI_SIZEOF_ODB_NODE_T] = "sizeof_odb_node_t",
	[OP_ABI_SIZEOF_HEADER] = "sizeof_struct_opd_header",
	[OP_ABI_OFF_NODE_KEY] = "offsetof_node_key",
	[OP_ABI_OFF_NODE_VALUE] = "offsetof_node_value",
	[OP_ABI_OFF_NODE_NEXT] = "offsetof_node_next",
	[OP_ABI_OFF_DESCR_SIZE] = "offsetof_descr_size",
	[OP_ABI_OFF_DESCR_CURRENT_SIZE] = "offsetof_descr_current_size",
	[OP_ABI_OFF_HEADER_MAGIC] = "offsetof_header_magic",
	[OP_ABI_OFF_HEADER_VERSION] = "offsetof_header_version",
	[OP_ABI_OFF_HEADER_CPU_TYPE] = "offsetof_header_cpu_type",
	[OP_ABI_OFF_HEADER_CTR_EVENT] = "offsetof_header_ctr_event",
	[OP_ABI_OFF_HEADER_CTR_UM] = "offsetof_header_ctr_um",
	[OP_ABI_OFF_HEADER_CTR_COUNT] = "offsetof_header_ctr_count",
	[OP_ABI_OFF_HEADER_IS_KERNEL] = "offsetof_header_is_kernel",
	[OP_ABI_OFF_HEADER_CPU_SPEED] = "offsetof_header_cpu_speed",
	[OP_ABI_OFF_HEADER_MTIME] = "offsetof_header_mtime",
	[OP_ABI_OFF_HEADER_CG_TO_IS_KERNEL] = "offsetof_header_cg_to_is_kernel",
	[OP_ABI_OFF_HEADER_ANON_START] = "offsetof_header_anon_start",
	[OP_ABI_OFF_HEADER_CG_TO_ANON_START] = "offsetof_header_cg_to_anon_start",
	[OP_ABI_LITTLE_ENDIAN] = "little_endian",
};

const char *op_abi_key_name(enum op_abi_key key)
{
	return (unsigned)key < OP_ABI_NR_KEYS ? abi_names[key] : NULL;
}

void op_abi_native(struct op_abi *abi)
{
	const uint16_t one = 1;
	int32_t *v = abi->val;

	memset(abi, 0, sizeof(*abi));
	v[OP_ABI_SIZEOF_DOUBLE] = sizeof(double);
	v[OP_ABI_SIZEOF_U64] = sizeof(uint64_t);
	v[OP_ABI_SIZEOF_U8] = sizeof(uint8_t);
	v[OP_ABI_SIZEOF_U32] = sizeof(uint32_t);
	v[OP_ABI_SIZEOF_INT] = sizeof(int);
	v[OP_ABI_SIZEOF_UNSIGNED_INT] = sizeof(unsigned int);
	v[OP_ABI_SIZEOF_ODB_KEY_T] = sizeof(odb_key_t);
	v[OP_ABI_SIZEOF_ODB_INDEX_T] = sizeof(odb_index_t);
	v[OP_ABI_SIZEOF_ODB_VALUE_T] = sizeof(odb_value_t);
	v[OP_ABI_SIZEOF_ODB_NODE_NR_T] = sizeof(odb_index_t);
	v[OP_ABI_SIZEOF_ODB_DESCR_T] = sizeof(struct odb_descr);
	v[OP_ABI_SIZEOF_ODB_NODE_T] = sizeof(struct odb_node);
	v[OP_ABI_SIZEOF_HEADER] = sizeof(struct opd_header);
	v[OP_ABI_OFF_NODE_KEY] = offsetof(struct odb_node, key);
	v[OP_ABI_OFF_NODE_VALUE] = offsetof(struct odb_node, value);
	v[OP_ABI_OFF_NODE_NEXT] = offsetof(struct odb_node, next);
	v[OP_ABI_OFF_DESCR_SIZE] = offsetof(struct odb_descr, size);
	v[OP_ABI_OFF_DESCR_CURRENT_SIZE] = offsetof(struct odb_descr, current_size);
	v[OP_ABI_OFF_HEADER_MAGIC] = offsetof(struct opd_header, magic);
	v[OP_ABI_OFF_HEADER_VERSION] = offsetof(struct opd_header, version);
	v[OP_ABI_OFF_HEADER_CPU_TYPE] = offsetof(struct opd_header, cpu_type);
	v[OP_ABI_OFF_HEADER_CTR_EVENT] = offsetof(struct opd_header, ctr_event);
	v[OP_ABI_OFF_HEADER_CTR_UM] = offsetof(struct opd_header, ctr_um);
	v[OP_ABI_OFF_HEADER_CTR_COUNT] = offsetof(struct opd_header, ctr_count);
	v[OP_ABI_OFF_HEADER_IS_KERNEL] = offsetof(struct opd_header, is_kernel);
	v[OP_ABI_OFF_HEADER_CPU_SPEED] = offsetof(struct opd_header, cpu_speed);
	v[OP_ABI_OFF_HEADER_MTIME] = offsetof(struct opd_header, mtime);
	v[OP_ABI_OFF_HEADER_CG_TO_IS_KERNEL] = offsetof(struct opd_header, cg_to_is_kernel);
	v[OP_ABI_OFF_HEADER_ANON_START] = offsetof(struct opd_header, anon_start);
	v[OP_ABI_OFF_HEADER_CG_TO_ANON_START] = offsetof(struct opd_header, cg_to_anon_start);
	v[OP_ABI_LITTLE_ENDIAN] = *(const uint8_t *)&one == 1;
}

static bool abi_is_keychar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

static bool abi_is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* one line (@p .. @e, no '\n'); 0 or -EINVAL with the message */
static int abi_parse_line(struct op_abi *abi, const char *p, const char *e, const char *subject,
			  unsigned line, char *err, size_t err_len)
{
	const char *k, *ke;
	uint32_t v = 0;
	int i;

	while (p < e && abi_is_blank(*p))
		p++;
	while (e > p && abi_is_blank(e[-1]))
		e--;
	if (p == e)
		return 0;
	for (k = p; p < e && abi_is_keychar(*p); p++)
		;
	ke = p;
	if (ke == k || p == e || !abi_is_blank(*p)) {
		snprintf(err, err_len,
			 "%s:%u: expected \"KEY VALUE\" (KEY of letters, digits, '_'), "
			 "found \"%.*s\"",
			 subject, line, (int)(e - k > 60 ? 60 : e - k), k);
		return -EINVAL;
	}
	/* the line is trimmed: a value follows the blanks */
	while (abi_is_blank(*p))
		p++;
	for (; p < e; p++) {
		if (*p < '0' || *p > '9' || (v = v * 10 + (uint32_t)(*p - '0')) > OP_ABI_MAX_VALUE) {
			snprintf(err, err_len,
				 "%s:%u: %.*s: value must be a decimal number 0..%d, "
				 "found \"%.*s\"",
				 subject, line, (int)(ke - k > 60 ? 60 : ke - k), k,
				 OP_ABI_MAX_VALUE, (int)(e - ke > 40 ? 40 : e - ke), ke + 1);
			return -EINVAL;
		}
	}
	for (i = 0; i < OP_ABI_NR_KEYS; i++) {
		if (strlen(abi_names[i]) != (size_t)(ke - k) || memcmp(abi_names[i], k, ke - k))
			continue;
		if (abi->val[i] >= 0) {
			snprintf(err, err_len, "%s:%u: %s given twice (%d, then %u)", subject, line,
				 abi_names[i], abi->val[i], v);
			return -EINVAL;
		}
		abi->val[i] = (int32_t)v;
		return 0;
	}
	abi->nr_unknown++;
	return 0;
}

int op_abi_parse(struct op_abi *abi, const char *text, size_t len, const char *subject, char *err,
		 size_t err_len)
{
	const char *p = text, *end = text + len;
	unsigned line = 1;
	int i, rc;

	for (i = 0; i < OP_ABI_NR_KEYS; i++)
		abi->val[i] = -1;
	abi->nr_unknown = 0;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;

		if (memchr(p, 0, (size_t)(e - p))) {
			snprintf(err, err_len, "%s:%u: NUL byte: not a text abi file", subject,
				 line);
			return -EINVAL;
		}
		rc = abi_parse_line(abi, p, e, subject, line, err, err_len);
		if (rc)
			return rc;
		p = nl ? nl + 1 : end;
		line++;
	}
	return 0;
}

int op_abi_read(struct op_abi *abi, int dirfd, const char *path, char *err, size_t err_len)
{
	char *buf;
	struct stat st;
	size_t got = 0;
	int fd, rc;

	fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, err_len, "%s: cannot open the abi file: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > OP_ABI_MAX_FILE) {
		snprintf(err, err_len, "%s: the abi file must be a regular file of at most %d bytes",
			 path, OP_ABI_MAX_FILE);
		close(fd);
		return -EINVAL;
	}
	buf = malloc(OP_ABI_MAX_FILE + 1);
	if (!buf) {
		close(fd);
		snprintf(err, err_len, "%s: out of memory", path);
		return -ENOMEM;
	}
	/* read to EOF (the size may change meanwhile): at most OP_ABI_MAX_FILE + 1 bytes */
	for (;;) {
		ssize_t r = read(fd, buf + got, OP_ABI_MAX_FILE + 1 - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = -errno;
			snprintf(err, err_len, "%s: cannot read the abi file: %s", path,
				 strerror(errno));
			goto out;
		}
		if (r == 0)
			break;
		got += (size_t)r;
		if (got > OP_ABI_MAX_FILE) {
			rc = -EINVAL;
			snprintf(err, err_len, "%s: the abi file is larger than %d bytes", path,
				 OP_ABI_MAX_FILE);
			goto out;
		}
	}
	rc = op_abi_parse(abi, buf, got, path, err, err_len);
out:
	free(buf);
	close(fd);
	return rc;
}

int op_abi_format(const struct op_abi *abi, char *buf, size_t len)
{
	size_t n = 0;
	int i, w;

	if (len)
		buf[0] = 0;
	for (i = 0; i < OP_ABI_NR_KEYS; i++) {
		if (abi->val[i] < 0)
			continue;
		w = snprintf(buf + n, len - n, "%s %d\n", abi_names[i], abi->val[i]);
		if (w < 0 || (size_t)w >= len - n)
			return -ENOBUFS;
		n += (size_t)w;
	}
	return (int)n;
}

bool op_abi_equal(const struct op_abi *a, const struct op_abi *b)
{
	return !memcmp(a->val, b->val, sizeof(a->val));
}

/* the conversion's fields: offset key, size key, the structure's size key */
struct abi_field {
	enum op_abi_key off, size, within;
};

/* clang-format off */
#define HDR(off, size) { OP_ABI_OFF_HEADER_##off, OP_ABI_SIZEOF_##size, OP_ABI_SIZEOF_HEADER }

/* clang-format on */
static const struct abi_field abi_fields[] = {
	HDR(VERSION, U32),
	HDR(CPU_TYPE, U32),
	HDR(CTR_EVENT, U32),
	HDR(CTR_UM, U32),
	HDR(CTR_COUNT, U32),
	HDR(IS_KERNEL, U32),
	HDR(CPU_SPEED, DOUBLE),
	HDR(MTIME, U64),
	HDR(CG_TO_IS_KERNEL, U32),
	HDR(ANON_START, U64),
	HDR(CG_TO_ANON_START, U64),
	{ OP_ABI_OFF_DESCR_SIZE, OP_ABI_SIZEOF_ODB_NODE_NR_T, OP_ABI_SIZEOF_ODB_DESCR_T },
	{ OP_ABI_OFF_DESCR_CURRENT_SIZE, OP_ABI_SIZEOF_ODB_NODE_NR_T, OP_ABI_SIZEOF_ODB_DESCR_T },
	{ OP_ABI_OFF_NODE_KEY, OP_ABI_SIZEOF_ODB_KEY_T, OP_ABI_SIZEOF_ODB_NODE_T },
	{ OP_ABI_OFF_NODE_VALUE, OP_ABI_SIZEOF_ODB_VALUE_T, OP_ABI_SIZEOF_ODB_NODE_T },
	{ OP_ABI_OFF_NODE_NEXT, OP_ABI_SIZEOF_ODB_INDEX_T, OP_ABI_SIZEOF_ODB_NODE_T },
};

enum {
	ABI_F_VERSION,
	ABI_F_CPU_TYPE,
	ABI_F_CTR_EVENT,
	ABI_F_CTR_UM,
	ABI_F_CTR_COUNT,
	ABI_F_IS_KERNEL,
	ABI_F_CPU_SPEED,
	ABI_F_MTIME,
	ABI_F_CG_TO_IS_KERNEL,
	ABI_F_ANON_START,
	ABI_F_CG_TO_ANON_START,
	ABI_F_DESCR_SIZE,
	ABI_F_DESCR_CUR,
	ABI_F_NODE_KEY,
	ABI_F_NODE_VALUE,
	ABI_F_NODE_NEXT,
	ABI_F_NR
};
_Static_assert(sizeof(abi_fields) / sizeof(abi_fields[0]) == ABI_F_NR, "one row per field");

/* field @f (ABI_F_NR: the magic) of the table above: its structure, offset and size */
static enum op_abi_key abi_within(int f)
{
	return f == ABI_F_NR ? OP_ABI_SIZEOF_HEADER : abi_fields[f].within;
}

static enum op_abi_key abi_off(int f)
{
	return f == ABI_F_NR ? OP_ABI_OFF_HEADER_MAGIC : abi_fields[f].off;
}

static void abi_extent(const struct op_abi *abi, int f, int32_t *off, int32_t *size)
{
	*off = abi->val[abi_off(f)];
	*size = f == ABI_F_NR ? 4 : abi->val[abi_fields[f].size];
}

/* the keys the conversion needs (sizeof_u8, _int, _unsigned_int are informative) */
static bool abi_needed(enum op_abi_key k)
{
	return k != OP_ABI_SIZEOF_U8 && k != OP_ABI_SIZEOF_INT && k != OP_ABI_SIZEOF_UNSIGNED_INT;
}

int op_abi_check(const struct op_abi *abi, const char *subject, char *err, size_t err_len)
{
	const int32_t *v = abi->val;
	int i;

	for (i = 0; i < OP_ABI_NR_KEYS; i++) {
		if (abi_needed(i) && v[i] < 0) {
			snprintf(err, err_len, "%s: %s: missing (an OProfile abi file has it)",
				 subject, abi_names[i]);
			return -EINVAL;
		}
	}
	if (v[OP_ABI_LITTLE_ENDIAN] > 1) {
		snprintf(err, err_len, "%s: little_endian: must be 0 or 1, found %d", subject,
			 v[OP_ABI_LITTLE_ENDIAN]);
		return -EINVAL;
	}
	for (i = 0; i < ABI_F_NR; i++) {
		const struct abi_field *f = &abi_fields[i];
		int32_t sz = v[f->size];

		if (sz < 1 || sz > 8 || (f->size == OP_ABI_SIZEOF_DOUBLE && sz != 4 && sz != 8)) {
			snprintf(err, err_len,
				 "%s: %s: %d bytes is not a size this field can have "
				 "(%s)",
				 subject, abi_names[f->size], sz,
				 f->size == OP_ABI_SIZEOF_DOUBLE ? "4 or 8" : "1 to 8");
			return -EINVAL;
		}
		if (v[f->off] + sz > v[f->within]) {
			snprintf(err, err_len, "%s: %s: field at %d of %d bytes overruns %s %d",
				 subject, abi_names[f->off], v[f->off], sz, abi_names[f->within],
				 v[f->within]);
			return -EINVAL;
		}
	}
	if (v[OP_ABI_OFF_HEADER_MAGIC] + 4 > v[OP_ABI_SIZEOF_HEADER]) {
		snprintf(err, err_len,
			 "%s: offsetof_header_magic: 4 bytes at %d overrun "
			 "sizeof_struct_opd_header %d",
			 subject, v[OP_ABI_OFF_HEADER_MAGIC], v[OP_ABI_SIZEOF_HEADER]);
		return -EINVAL;
	}
	/* fields of one structure never share bytes (the magic is a header field too) */
	for (i = 0; i <= ABI_F_NR; i++) {
		int j;

		for (j = i + 1; j <= ABI_F_NR; j++) {
			int32_t oi, si, oj, sj;

			abi_extent(abi, i, &oi, &si);
			abi_extent(abi, j, &oj, &sj);
			if (abi_within(i) != abi_within(j) || oi + si <= oj || oj + sj <= oi)
				continue;
			snprintf(err, err_len, "%s: %s %d (%d bytes) and %s %d (%d bytes) overlap",
				 subject, abi_names[abi_off(i)], oi, si, abi_names[abi_off(j)], oj,
				 sj);
			return -EINVAL;
		}
	}
	return 0;
}

/* read @n (1..8) bytes at @p in the given byte order */
static uint64_t abi_get(const uint8_t *p, int n, bool le)
{
	uint64_t x = 0;
	int i;

	if (le)
		for (i = n - 1; i >= 0; i--)
			x = x << 8 | p[i];
	else
		for (i = 0; i < n; i++)
			x = x << 8 | p[i];
	return x;
}

static void abi_put(uint8_t *p, int n, bool le, uint64_t x)
{
	int i;

	for (i = 0; i < n; i++, x >>= 8)
		p[le ? i : n - 1 - i] = (uint8_t)x;
}

static bool abi_fits(uint64_t x, int n)
{
	return n >= 8 || x >> (8 * n) == 0;
}

/* field @f of the structure at @base */
static uint64_t abi_field_get(const struct op_abi *abi, const uint8_t *base, int f)
{
	return abi_get(base + abi->val[abi_fields[f].off], abi->val[abi_fields[f].size],
		       abi->val[OP_ABI_LITTLE_ENDIAN]);
}

static bool abi_field_put(const struct op_abi *abi, uint8_t *base, int f, uint64_t x)
{
	int n = abi->val[abi_fields[f].size];

	if (!abi_fits(x, n))
		return false;
	abi_put(base + abi->val[abi_fields[f].off], n, abi->val[OP_ABI_LITTLE_ENDIAN], x);
	return true;
}

void op_abi_sample_free(struct op_abi_sample *s)
{
	free(s->nodes);
	s->nodes = NULL;
	s->nr = 0;
}

/* the header's u32 fields, in abi_fields order from ABI_F_VERSION */
static uint32_t *abi_hdr_u32(struct opd_header *h, int f)
{
	switch (f) {
	case ABI_F_VERSION:
		return &h->version;
	case ABI_F_CPU_TYPE:
		return &h->cpu_type;
	case ABI_F_CTR_EVENT:
		return &h->ctr_event;
	case ABI_F_CTR_UM:
		return &h->ctr_um;
	case ABI_F_CTR_COUNT:
		return &h->ctr_count;
	case ABI_F_IS_KERNEL:
		return &h->is_kernel;
	case ABI_F_CG_TO_IS_KERNEL:
		return &h->cg_to_is_kernel;
	default:
		return NULL;
	}
}

static uint64_t *abi_hdr_u64(struct opd_header *h, int f)
{
	switch (f) {
	case ABI_F_MTIME:
		return &h->mtime;
	case ABI_F_ANON_START:
		return &h->anon_start;
	case ABI_F_CG_TO_ANON_START:
		return &h->cg_to_anon_start;
	default:
		return NULL;
	}
}

/* the file size @abi gives a table of @size nodes, 0 if it overflows */
static uint64_t abi_file_size(const struct op_abi *abi, uint64_t size)
{
	const int32_t *v = abi->val;

	return v[OP_ABI_SIZEOF_HEADER] + (uint64_t)v[OP_ABI_SIZEOF_ODB_DESCR_T] +
	       size * (uint64_t)(v[OP_ABI_SIZEOF_ODB_NODE_T] + v[OP_ABI_SIZEOF_ODB_INDEX_T]);
}

int op_abi_decode(const struct op_abi *abi, const void *buf, size_t len, const char *subject,
		  struct op_abi_sample *out, char *err, size_t err_len)
{
	const int32_t *v = abi->val;
	const uint8_t *b = buf, *descr, *node;
	struct opd_header *h = &out->header;
	uint64_t size, cur, x, want;
	size_t i;
	int f;

	memset(out, 0, sizeof(*out));
	if (op_abi_check(abi, subject, err, err_len))
		return -EINVAL;
	if (len < (uint64_t)v[OP_ABI_SIZEOF_HEADER] + v[OP_ABI_SIZEOF_ODB_DESCR_T]) {
		snprintf(err, err_len,
			 "%s: %zu bytes, shorter than the header and descriptor "
			 "(%d + %d bytes in this abi)",
			 subject, len, v[OP_ABI_SIZEOF_HEADER], v[OP_ABI_SIZEOF_ODB_DESCR_T]);
		return -EINVAL;
	}
	memcpy(h->magic, b + v[OP_ABI_OFF_HEADER_MAGIC], 4);
	for (f = ABI_F_VERSION; f <= ABI_F_CG_TO_ANON_START; f++) {
		x = abi_field_get(abi, b, f);
		if (abi_hdr_u32(h, f)) {
			if (x > UINT32_MAX) {
				snprintf(err, err_len,
					 "%s: header %s = 0x%llx does not fit 32 bits", subject,
					 abi_names[abi_fields[f].off] + 16, (unsigned long long)x);
				return -EINVAL;
			}
			*abi_hdr_u32(h, f) = (uint32_t)x;
		} else if (abi_hdr_u64(h, f)) {
			*abi_hdr_u64(h, f) = x;
		} else if (v[OP_ABI_SIZEOF_DOUBLE] == 8) {
			memcpy(&h->cpu_speed, &x, 8);
		} else {
			uint32_t u = (uint32_t)x;
			float fl;

			memcpy(&fl, &u, 4);
			h->cpu_speed = fl;
		}
	}
	if (op_header_check(h, subject, err, err_len))
		return -EINVAL;

	descr = b + v[OP_ABI_SIZEOF_HEADER];
	size = abi_field_get(abi, descr, ABI_F_DESCR_SIZE);
	cur = abi_field_get(abi, descr, ABI_F_DESCR_CUR);
	if (size == 0 || size > UINT32_MAX || cur == 0 || cur > size) {
		snprintf(err, err_len,
			 "%s: descriptor size %llu, current_size %llu: expected "
			 "1 <= current_size <= size < 2^32",
			 subject, (unsigned long long)size, (unsigned long long)cur);
		return -EINVAL;
	}
	want = abi_file_size(abi, size);
	if (want != len) {
		snprintf(err, err_len,
			 "%s: %zu bytes, but a table of %llu nodes is %llu bytes in "
			 "this abi (truncated, or not written with this abi)",
			 subject, len, (unsigned long long)size, (unsigned long long)want);
		return -EINVAL;
	}
	out->size = (uint32_t)size;
	out->nr = (size_t)(cur - 1);
	out->nodes = calloc(out->nr ? out->nr : 1, sizeof(*out->nodes));
	if (!out->nodes) {
		snprintf(err, err_len, "%s: out of memory for %zu nodes", subject, out->nr);
		out->nr = 0;
		return -ENOMEM;
	}
	/* node 0 is unused: nodes 1 .. cur-1 */
	node = descr + v[OP_ABI_SIZEOF_ODB_DESCR_T] + v[OP_ABI_SIZEOF_ODB_NODE_T];
	for (i = 0; i < out->nr; i++, node += v[OP_ABI_SIZEOF_ODB_NODE_T]) {
		out->nodes[i].key = abi_field_get(abi, node, ABI_F_NODE_KEY);
		x = abi_field_get(abi, node, ABI_F_NODE_VALUE);
		if (x > UINT32_MAX) {
			snprintf(err, err_len,
				 "%s: node %zu: count %llu does not fit odb_value_t "
				 "(32 bits)",
				 subject, i + 1, (unsigned long long)x);
			op_abi_sample_free(out);
			return -EINVAL;
		}
		out->nodes[i].value = (odb_value_t)x;
	}
	return 0;
}

long op_abi_encode(const struct op_abi *abi, const struct op_abi_sample *s, uint8_t **buf)
{
	const int32_t *v = abi->val;
	const struct opd_header *hc = &s->header;
	struct opd_header h = *hc;
	uint8_t *b, *descr, *nodes, *hash;
	char err[256];
	uint64_t len, x;
	size_t i;
	int f;

	*buf = NULL;
	if (op_abi_check(abi, "abi", err, sizeof(err)) || !s->size || (s->size & (s->size - 1)) ||
	    s->nr >= s->size)
		return -EINVAL;
	len = abi_file_size(abi, s->size);
	if (len > SIZE_MAX / 2)
		return -ENOMEM;
	b = calloc(1, len);
	if (!b)
		return -ENOMEM;
	memcpy(b + v[OP_ABI_OFF_HEADER_MAGIC], h.magic, 4);
	for (f = ABI_F_VERSION; f <= ABI_F_CG_TO_ANON_START; f++) {
		if (abi_hdr_u32(&h, f)) {
			x = *abi_hdr_u32(&h, f);
		} else if (abi_hdr_u64(&h, f)) {
			x = *abi_hdr_u64(&h, f);
		} else if (v[OP_ABI_SIZEOF_DOUBLE] == 8) {
			memcpy(&x, &h.cpu_speed, 8);
		} else {
			float fl = (float)h.cpu_speed;
			uint32_t u;

			memcpy(&u, &fl, 4);
			x = u;
		}
		if (!abi_field_put(abi, b, f, x))
			goto bad;
	}
	descr = b + v[OP_ABI_SIZEOF_HEADER];
	nodes = descr + v[OP_ABI_SIZEOF_ODB_DESCR_T];
	hash = nodes + (size_t)s->size * v[OP_ABI_SIZEOF_ODB_NODE_T];
	if (!abi_field_put(abi, descr, ABI_F_DESCR_SIZE, s->size) ||
	    !abi_field_put(abi, descr, ABI_F_DESCR_CUR, s->nr + 1))
		goto bad;
	for (i = 0; i < s->nr; i++) {
		uint8_t *n = nodes + (i + 1) * v[OP_ABI_SIZEOF_ODB_NODE_T];
		uint8_t *head = hash + (size_t)odb_hash(s->nodes[i].key, s->size) *
					       v[OP_ABI_SIZEOF_ODB_INDEX_T];
		int isz = v[OP_ABI_SIZEOF_ODB_INDEX_T];
		bool le = v[OP_ABI_LITTLE_ENDIAN];

		/* linked at the head of its bucket, as odb inserts */
		if (!abi_field_put(abi, n, ABI_F_NODE_KEY, s->nodes[i].key) ||
		    !abi_field_put(abi, n, ABI_F_NODE_VALUE, s->nodes[i].value) ||
		    !abi_field_put(abi, n, ABI_F_NODE_NEXT, abi_get(head, isz, le)) ||
		    !abi_fits(i + 1, isz))
			goto bad;
		abi_put(head, isz, le, i + 1);
	}
	*buf = b;
	return (long)len;
bad:
	free(b);
	return -EINVAL;
}

int op_abi_write_sample(const struct op_abi_sample *s, int dirfd, const char *path, unsigned flags,
			uint64_t *saturated, char *err, size_t err_len)
{
	char tmp[4096];
	odb_t db;
	size_t i;
	int rc;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.opimport-tmp", path) >= sizeof(tmp)) {
		snprintf(err, err_len, "%.200s...: path too long", path);
		return -ENAMETOOLONG;
	}
	/* a leftover of an interrupted run: odb_open would take its contents */
	if (unlinkat(dirfd, tmp, 0) && errno != ENOENT) {
		rc = -errno;
		snprintf(err, err_len, "%s: cannot remove the stale temporary file: %s", tmp,
			 strerror(errno));
		return rc;
	}
	rc = odb_open(&db, dirfd, tmp, ODB_RDWR, err, err_len);
	if (rc)
		return rc;
	*odb_header(&db) = s->header;
	for (i = 0; i < s->nr && !rc; i++)
		rc = odb_update(&db, s->nodes[i].key, s->nodes[i].value);
	if (saturated)
		*saturated = db.saturated;
	if (!rc)
		rc = odb_sync(&db);
	odb_close(&db);
	if (rc) {
		snprintf(err, err_len, "%s: cannot write the converted samples: %s", tmp,
			 strerror(-rc));
		goto out_unlink;
	}
	if (flags & OP_ABI_NOREPLACE)
		rc = renameat2(dirfd, tmp, dirfd, path, RENAME_NOREPLACE) ? -errno : 0;
	else
		rc = renameat(dirfd, tmp, dirfd, path) ? -errno : 0;
	if (rc) {
		snprintf(err, err_len, "%s: %s", path,
			 rc == -EEXIST ? "exists (--force replaces it)" : strerror(-rc));
		goto out_unlink;
	}
	return 0;
out_unlink:
	unlinkat(dirfd, tmp, 0);
	return rc;
}
