/*
 * mkfixture.c - builds opreport fixture sessions with the real odb writer
 * and op_mangle: a small line-oriented script on stdin names sample files
 * and samples; keys are computed from the fixture binaries' ELF symbol
 * tables (<elf.h>, independent of libbfd) as file offsets.
 *
 * SPDX-License-Identifier: MIT
 *
 * Script (fields separated by TABs, '#' comments):
 *   dir   SESSION_SUBDIR                 e.g. "current": files go to <root>/samples/<subdir>
 *   file  APP IMAGE EVENT COUNT UM TGID TID CPU [CPU_TYPE [IS_KERNEL [ANON_START]]]
 *         APP/IMAGE: "/abs/path", "{kern}NAME" or "{anon:NAME}TGID:0xSTART:0xEND";
 *         TGID/TID/CPU: number or "all"
 *   s     KEY COUNT [ELF]                KEY: 0xHEX, sym:NAME[+OFF], dsym:NAME[+OFF]
 *                                        (dynamic table), sec:NAME[+OFF]; resolved
 *                                        against the current file's IMAGE, or ELF
 *   raw   RELPATH TEXT                   write TEXT as a (bogus) file below the subdir
 *   text  RELPATH TEXT                   same, with the escapes below turned into bytes
 * In APP, IMAGE and the TEXT of "text", "\n", "\t", "\r", "\\" and "\xHH" are
 * turned into the bytes they name (hostile names for the report tests).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odb.h"
#include "op_header.h"
#include "op_hex.h"
#include "op_mangle.h"
#include "../../integration/test_util.h"

static int mkdirs(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(path, 0755) && errno != EEXIST) {
			fprintf(stderr, "mkfixture: mkdir %s: %s\n", path, strerror(errno));
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return 0;
}

/* file offset of symbol @name (or section @name when @want_sec) in ELF @path */
/* @table 0: offset of section @name; 1: of symbol @name in .symtab; 2: in .dynsym */
static int elf_key(const char *path, const char *name, int table, unsigned long long *out)
{
	uint64_t start, end;
	int rc;

	if (table == 0)
		rc = tu_elf_section(path, name, &start);
	else
		rc = tu_elf_sym(path, name, table == 1 ? TU_SYMTAB : TU_DYNSYM, false, &start,
				&end);
	if (!rc) {
		*out = start;
		return 0;
	}
	if (rc == -ENOEXEC)
		fprintf(stderr, "mkfixture: %s: not a 64-bit ELF file\n", path);
	else if (rc == -ENOENT)
		fprintf(stderr, "mkfixture: %s: no %s \"%s\"\n", path,
			table == 0 ? "section" : table == 1 ? "symbol" : "dynamic symbol", name);
	else
		fprintf(stderr, "mkfixture: %s: %s\n", path, strerror(-rc));
	return -1;
}

static int parse_image(char *s, struct op_image_name *n)
{
	memset(n, 0, sizeof(*n));
	if (!strncmp(s, "{kern}", 6)) {
		n->kind = OP_IMAGE_KERNEL;
		n->path = s + 6;
		return 0;
	}
	if (!strncmp(s, "{anon:", 6)) {
		char *close = strchr(s, '}');

		if (!close)
			return -1;
		*close = 0;
		n->kind = OP_IMAGE_ANON;
		n->path = s + 6;
		if (sscanf(close + 1, "%d:%lli:%lli", &n->tgid, (long long *)&n->start,
			   (long long *)&n->end) != 3)
			return -1;
		return 0;
	}
	n->kind = OP_IMAGE_USER;
	n->path = s;
	return 0;
}

static int32_t num_or_all(const char *s)
{
	return strcmp(s, "all") ? (int32_t)strtol(s, NULL, 0) : -1;
}

/* "\n", "\t", "\r", "\\" and "\xHH" in place; anything else is kept as is */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		int hi, lo;

		if (s[0] != '\\') {
			*o++ = *s;
		} else if (s[1] == 'n' || s[1] == 't' || s[1] == 'r' || s[1] == '\\') {
			*o++ = s[1] == 'n' ? '\n' : s[1] == 't' ? '\t' : s[1] == 'r' ? '\r' : '\\';
			s++;
		} else if (s[1] == 'x' && (hi = op_hexval(s[2])) >= 0 && (lo = op_hexval(s[3])) >= 0 &&
			   (hi || lo)) {
			*o++ = (char)(hi << 4 | lo);
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

int main(int argc, char **argv)
{
	char line[8192], sub[PATH_MAX] = "current", image[PATH_MAX] = "";
	odb_t db = { .fd = -1 };
	bool open_db = false;
	unsigned lineno = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: mkfixture SESSION_DIR < script\n");
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		char *f[16] = { 0 }, *save = NULL, *tok;
		int nf = 0;

		lineno++;
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		for (tok = strtok_r(line, "\t", &save); tok && nf < 16; tok = strtok_r(NULL, "\t", &save))
			f[nf++] = tok;
		if (!strcmp(f[0], "dir") && nf == 2) {
			snprintf(sub, sizeof(sub), "%s", f[1]);
		} else if (!strcmp(f[0], "file") && nf >= 9) {
			struct op_mangle_args a = { 0 };
			char name[PATH_MAX], full[PATH_MAX * 2 + 32], err[512];
			struct opd_header *h;
			struct stat st;

			if (open_db)
				odb_close(&db);
			open_db = false;
			unescape(f[1]);
			unescape(f[2]);
			if (parse_image(f[1], &a.app) || parse_image(f[2], &a.image)) {
				fprintf(stderr, "mkfixture:%u: bad image name\n", lineno);
				return 1;
			}
			snprintf(image, sizeof(image), "%s", a.image.path);
			a.event = f[3];
			a.count = strtoull(f[4], NULL, 0);
			a.um = (uint32_t)strtoul(f[5], NULL, 0);
			a.tgid = num_or_all(f[6]);
			a.tid = num_or_all(f[7]);
			a.cpu = num_or_all(f[8]);
			a.separate = OP_SEP_LIB | OP_SEP_KERNEL;
			if (a.tgid >= 0 || a.tid >= 0)
				a.separate |= OP_SEP_THREAD;
			if (a.cpu >= 0)
				a.separate |= OP_SEP_CPU;
			if (op_mangle(&a, name, sizeof(name)) < 0) {
				fprintf(stderr, "mkfixture:%u: op_mangle failed\n", lineno);
				return 1;
			}
			snprintf(full, sizeof(full), "%s/samples/%s/%s", argv[1], sub, name);
			if (mkdirs(full))
				return 1;
			if (odb_open(&db, AT_FDCWD, full, ODB_RDWR, err, sizeof(err))) {
				fprintf(stderr, "mkfixture:%u: %s\n", lineno, err);
				return 1;
			}
			open_db = true;
			h = odb_header(&db);
			op_header_init(h);
			h->cpu_type = nf > 9 ? (uint32_t)strtoul(f[9], NULL, 0) : OP_CPU_TIMER;
			h->is_kernel = nf > 10 ? (uint32_t)strtoul(f[10], NULL, 0) : 0;
			h->anon_start = nf > 11 ? strtoull(f[11], NULL, 0) : 0;
			h->ctr_count = (uint32_t)a.count;
			h->ctr_um = a.um;
			if (a.image.kind == OP_IMAGE_USER && !stat(a.image.path, &st))
				h->mtime = (uint64_t)st.st_mtime;
		} else if (!strcmp(f[0], "s") && (nf == 3 || nf == 4)) {
			unsigned long long key = 0, off = 0;
			char *plus, *spec = f[1];
			int table = -1;

			if (!open_db) {
				fprintf(stderr, "mkfixture:%u: sample before any file\n", lineno);
				return 1;
			}
			if (!strncmp(spec, "sym:", 4))
				table = 1, spec += 4;
			else if (!strncmp(spec, "dsym:", 5))
				table = 2, spec += 5;
			else if (!strncmp(spec, "sec:", 4))
				table = 0, spec += 4;
			if (table >= 0) {
				plus = strrchr(spec, '+');
				if (plus) {
					*plus = 0;
					off = strtoull(plus + 1, NULL, 0);
				}
				if (elf_key(nf == 4 ? f[3] : image, spec, table, &key))
					return 1;
				key += off;
			} else {
				key = strtoull(spec, NULL, 0);
			}
			if (odb_update(&db, key, (odb_value_t)strtoul(f[2], NULL, 0))) {
				fprintf(stderr, "mkfixture:%u: odb_update failed\n", lineno);
				return 1;
			}
		} else if ((!strcmp(f[0], "raw") || !strcmp(f[0], "text")) && nf >= 2) {
			char full[PATH_MAX * 2 + 32];
			FILE *o;

			snprintf(full, sizeof(full), "%s/samples/%s/%s", argv[1], sub, f[1]);
			if (mkdirs(full))
				return 1;
			o = fopen(full, "w");
			if (!o)
				return 1;
			if (nf > 2) {
				if (!strcmp(f[0], "text"))
					unescape(f[2]);
				fputs(f[2], o);
			}
			fclose(o);
		} else {
			fprintf(stderr, "mkfixture:%u: cannot parse line\n", lineno);
			return 1;
		}
	}
	if (open_db)
		odb_close(&db);
	return 0;
}
