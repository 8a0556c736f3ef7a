/*
 * abi_gen.c - opimport.sh's generator: rewrites a native session (recorded
 * live) as if another machine had written it: every sample file below
 * samples/ in a foreign layout (lib/op_abi's encoder), the other files
 * copied, and an abi file describing that layout.
 *   abi_gen LAYOUT IN_SESSION OUT_SESSION
 * LAYOUT: be32  big-endian 32-bit (i386 alignment: u64 and double 4-aligned,
 *               a 64-byte header), as a 32-bit big-endian machine writes;
 *         wide  big-endian with 8-byte node counts and indexes, a 24-byte
 *               padded node and a 48-byte descriptor (every offset moves).
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
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odb.h"
#include "op_abi.h"
#include "op_mangle.h"

static struct op_abi gen_abi;
static const char *gen_in, *gen_out;
static size_t gen_in_len;
static unsigned gen_files, gen_copied;

static void gen_layout_be32(struct op_abi *a)
{
	int32_t *v = a->val;

	op_abi_native(a);
	v[OP_ABI_LITTLE_ENDIAN] = 0;
	/* i386: u64 and double are 4-aligned, so nothing pads after is_kernel */
	v[OP_ABI_OFF_HEADER_CPU_SPEED] = 28;
	v[OP_ABI_OFF_HEADER_MTIME] = 36;
	v[OP_ABI_OFF_HEADER_CG_TO_IS_KERNEL] = 44;
	v[OP_ABI_OFF_HEADER_ANON_START] = 48;
	v[OP_ABI_OFF_HEADER_CG_TO_ANON_START] = 56;
	v[OP_ABI_SIZEOF_HEADER] = 64;
}

static void gen_layout_wide(struct op_abi *a)
{
	int32_t *v = a->val;

	gen_layout_be32(a);
	v[OP_ABI_SIZEOF_ODB_NODE_NR_T] = 8;
	v[OP_ABI_SIZEOF_ODB_INDEX_T] = 8;
	v[OP_ABI_SIZEOF_ODB_DESCR_T] = 48;
	v[OP_ABI_OFF_DESCR_SIZE] = 8;
	v[OP_ABI_OFF_DESCR_CURRENT_SIZE] = 24;
	v[OP_ABI_SIZEOF_ODB_NODE_T] = 24;
	v[OP_ABI_OFF_NODE_VALUE] = 0;
	v[OP_ABI_OFF_NODE_KEY] = 8;
	v[OP_ABI_OFF_NODE_NEXT] = 16;
}

static int gen_write(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	int rc = 0;

	if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
		rc = -1;
	if (fd >= 0 && close(fd))
		rc = -1;
	if (rc)
		fprintf(stderr, "abi_gen: %s: cannot write: %s\n", path, strerror(errno));
	return rc;
}

static int gen_copy(const char *from, const char *to)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = fopen(from, "rb");
	long sz;
	int rc;

	if (!f || fseek(f, 0, SEEK_END) || (sz = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) ||
	    !(buf = malloc(sz + 1)) || (len = fread(buf, 1, sz, f)) != (size_t)sz) {
		fprintf(stderr, "abi_gen: %s: cannot read\n", from);
		if (f)
			fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	rc = gen_write(to, buf, len);
	free(buf);
	return rc;
}

/* one native sample file to the foreign layout */
static int gen_sample(const char *from, const char *to)
{
	struct op_abi_sample s = { 0 };
	const struct odb_node *nodes;
	char err[512];
	uint8_t *buf;
	odb_t db;
	long len;
	int rc;

	if (odb_open(&db, AT_FDCWD, from, ODB_RDONLY, err, sizeof(err))) {
		fprintf(stderr, "abi_gen: %s\n", err);
		return -1;
	}
	s.header = *odb_header(&db);
	s.size = db.size;
	nodes = odb_nodes(&db, &s.nr);
	s.nodes = (struct odb_node *)nodes;
	len = op_abi_encode(&gen_abi, &s, &buf);
	odb_close(&db);
	if (len < 0) {
		fprintf(stderr, "abi_gen: %s: cannot encode: %s\n", from, strerror((int)-len));
		return -1;
	}
	rc = gen_write(to, buf, (size_t)len);
	free(buf);
	return rc;
}

static int gen_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct op_parsed_name *pn;
	char to[PATH_MAX], err[256];
	const char *rel = path + gen_in_len;
	int rc;

	(void)st;
	(void)ftw;
	if ((size_t)snprintf(to, sizeof(to), "%s%s", gen_out, rel) >= sizeof(to))
		return -1;
	if (type == FTW_D)
		return mkdir(to, 0755) && errno != EEXIST ? -1 : 0;
	if (type != FTW_F)
		return 0;
	pn = malloc(sizeof(*pn));
	if (!pn)
		return -1;
	/* below samples/: a sample file by its name, as opimport decides */
	if (!strncmp(rel, "/samples/", 9) && !op_parse_name(rel + 9, pn, err, sizeof(err))) {
		rc = gen_sample(path, to);
		gen_files++;
	} else {
		rc = gen_copy(path, to);
		gen_copied++;
	}
	free(pn);
	return rc;
}

int main(int argc, char **argv)
{
	char buf[4096], path[PATH_MAX];
	int len;

	if (argc != 4) {
		fprintf(stderr, "usage: abi_gen be32|wide IN_SESSION OUT_SESSION\n");
		return 2;
	}
	if (!strcmp(argv[1], "be32")) {
		gen_layout_be32(&gen_abi);
	} else if (!strcmp(argv[1], "wide")) {
		gen_layout_wide(&gen_abi);
	} else {
		fprintf(stderr, "abi_gen: unknown layout '%s' (be32 or wide)\n", argv[1]);
		return 2;
	}
	gen_in = argv[2];
	gen_in_len = strlen(gen_in);
	gen_out = argv[3];
	if (mkdir(gen_out, 0755)) {
		fprintf(stderr, "abi_gen: %s: %s\n", gen_out, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/samples", gen_in);
	gen_in_len = strlen(gen_in);
	if (nftw(path, gen_one, 32, FTW_PHYS)) {
		fprintf(stderr, "abi_gen: walking %s failed\n", path);
		return 1;
	}
	len = op_abi_format(&gen_abi, buf, sizeof(buf));
	snprintf(path, sizeof(path), "%s/abi", gen_out);
	if (len < 0 || gen_write(path, buf, (size_t)len))
		return 1;
	printf("abi_gen: %u sample files in layout %s, %u files copied\n", gen_files, argv[1],
	       gen_copied);
	return gen_files ? 0 : 1;
}
