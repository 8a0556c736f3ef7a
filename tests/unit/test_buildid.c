/*
 * test_buildid.c - lib/op_buildid: build IDs of real ELF files (this test's
 * own binary, fixtures linked with --build-id=sha1/md5/none, their
 * objcopy --only-keep-debug and strip copies) checked against binutils'
 * readelf; hostile headers and notes (bounded, no crash, the right error);
 * hand-made ELF32 and big-endian ELF64 files; a FIFO that must not block;
 * and the session index: format, parse back, bad lines, load from a
 * session directory.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_buildid.h"

static char tmpdir[256];

static void sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_int_equal(system(cmd), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/test_buildid.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) ? -1 : 0;
}

/* readelf's "Build ID: hex" of @path, "" when it shows none */
static void readelf_id(const char *path, char *hex, size_t len)
{
	char cmd[600], line[512];
	FILE *p;

	hex[0] = 0;
	snprintf(cmd, sizeof(cmd), "LC_ALL=C readelf -n '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *b = strstr(line, "Build ID: ");

		if (b && !hex[0]) {
			snprintf(hex, len, "%s", b + 10);
			hex[strcspn(hex, "\r\n ")] = 0;
		}
	}
	pclose(p);
}

/* op_buildid_from_fd of @path: its rc, the id as hex in @hex */
static int our_id(const char *path, char *hex, size_t len)
{
	uint8_t id[OP_BUILDID_MAX];
	size_t n = 99;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	assert_true(fd >= 0);
	rc = op_buildid_from_fd(fd, id, &n);
	close(fd);
	hex[0] = 0;
	if (!rc)
		op_buildid_hex(id, n, hex, len);
	else
		assert_int_equal(n, 0);
	return rc;
}

static void check_against_readelf(const char *path, size_t want_bytes)
{
	char ours[OP_BUILDID_HEX_MAX], theirs[OP_BUILDID_HEX_MAX];

	readelf_id(path, theirs, sizeof(theirs));
	assert_int_equal(strlen(theirs), 2 * want_bytes);
	assert_int_equal(our_id(path, ours, sizeof(ours)), 0);
	assert_string_equal(ours, theirs);
}

static void test_real_files(void **state)
{
	char ours[OP_BUILDID_HEX_MAX], theirs[OP_BUILDID_HEX_MAX], p[400];

	(void)state;
	check_against_readelf(FIX_DIR "/buildid_sha1", 20);
	check_against_readelf(FIX_DIR "/buildid_md5", 16);
	/* this test itself: the build's own link line */
	/* (resolved here: in readelf's process /proc/self/exe is readelf) */
	ssize_t n = readlink("/proc/self/exe", p, sizeof(p) - 1);

	assert_true(n > 0);
	p[n] = 0;
	readelf_id(p, theirs, sizeof(theirs));
	if (theirs[0]) {
		assert_int_equal(our_id(p, ours, sizeof(ours)), 0);
		assert_string_equal(ours, theirs);
	}
	/* no note at all */
	assert_int_equal(our_id(FIX_DIR "/buildid_none", ours, sizeof(ours)), -ENOENT);
	/* the debug file and the stripped binary carry the same ID */
	readelf_id(FIX_DIR "/buildid_sha1", theirs, sizeof(theirs));
	snprintf(p, sizeof(p), "%s/fix.debug", tmpdir);
	sh("objcopy --only-keep-debug '%s' '%s'", FIX_DIR "/buildid_sha1", p);
	assert_int_equal(our_id(p, ours, sizeof(ours)), 0);
	assert_string_equal(ours, theirs);
	snprintf(p, sizeof(p), "%s/fix.stripped", tmpdir);
	sh("strip -o '%s' '%s'", p, FIX_DIR "/buildid_sha1");
	assert_int_equal(our_id(p, ours, sizeof(ours)), 0);
	assert_string_equal(ours, theirs);
	/* a different link gives a different ID */
	readelf_id(FIX_DIR "/buildid_md5", ours, sizeof(ours));
	assert_string_not_equal(ours, theirs);
	/* not ELF */
	snprintf(p, sizeof(p), "%s/text", tmpdir);
	sh("echo 'not an ELF file' > '%s'", p);
	assert_int_equal(our_id(p, ours, sizeof(ours)), -EINVAL);
}

/* the executable segment agrees with readelf -l's R E LOAD */
static void test_text_segment(void **state)
{
	struct op_elf_ids ids;
	char cmd[400], line[512];
	unsigned long long off = 0, vaddr = 0, filesz = 0;
	bool seen = false;
	FILE *p;
	int fd;

	(void)state;
	snprintf(cmd, sizeof(cmd), "LC_ALL=C readelf -lW '%s'", FIX_DIR "/buildid_sha1");
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char flg[8] = "";
		unsigned long long o, v, pa, fs, ms;

		if (!seen &&
		    sscanf(line, " LOAD %llx %llx %llx %llx %llx %7[RWE ]", &o, &v, &pa, &fs, &ms,
			   flg) == 6 &&
		    strchr(line, 'E') && strstr(line, " R E ")) {
			off = o, vaddr = v, filesz = fs;
			seen = true;
		}
	}
	pclose(p);
	assert_true(seen);
	fd = open(FIX_DIR "/buildid_sha1", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(op_elf_ids_from_fd(fd, &ids), 0);
	close(fd);
	assert_int_equal(ids.id_len, 20);
	assert_int_equal(ids.text_off, off);
	assert_int_equal(ids.text_vaddr, vaddr);
	assert_int_equal(ids.text_size, filesz);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *b;
	int fd = open(path, O_RDONLY);

	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	b = malloc((size_t)st.st_size);
	assert_non_null(b);
	assert_int_equal(read(fd, b, (size_t)st.st_size), st.st_size);
	close(fd);
	*len = (size_t)st.st_size;
	return b;
}

/* op_elf_ids_from_fd of @len bytes @b written to a file */
static int ids_of_bytes(const uint8_t *b, size_t len, struct op_elf_ids *ids)
{
	char p[300];
	int fd, rc;

	snprintf(p, sizeof(p), "%s/mutant", tmpdir);
	fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b, len), (ssize_t)len);
	rc = op_elf_ids_from_fd(fd, ids);
	close(fd);
	unlink(p);
	return rc;
}

/* the note of the fixture: offset of the build-id note header in the file */
static size_t find_note(const uint8_t *b, size_t len)
{
	for (size_t i = 0; i + 16 <= len; i += 4)
		if (!memcmp(b + i, "\x04\0\0\0\x14\0\0\0\x03\0\0\0GNU\0", 16))
			return i;
	fail_msg("no build-id note in the fixture");
	return 0;
}

static void test_hostile(void **state)
{
	struct op_elf_ids ids;
	size_t len, note;
	uint8_t *orig = slurp(FIX_DIR "/buildid_sha1", &len), *b = malloc(len);
	Elf64_Ehdr eh;

	(void)state;
	assert_non_null(b);
	memcpy(&eh, orig, sizeof(eh));
	note = find_note(orig, len);

	/* unchanged: found */
	assert_int_equal(ids_of_bytes(orig, len, &ids), 0);
	assert_int_equal(ids.id_len, 20);
	/* truncated headers */
	assert_int_equal(ids_of_bytes(orig, 10, &ids), -EINVAL);
	assert_int_equal(ids_of_bytes(orig, 63, &ids), -EINVAL);
	/* program headers past the end of the file */
	memcpy(b, orig, len);
	((Elf64_Ehdr *)b)->e_phoff = (uint64_t)len - 8;
	assert_int_equal(ids_of_bytes(b, len, &ids), -EINVAL);
	memcpy(b, orig, len);
	((Elf64_Ehdr *)b)->e_phoff = UINT64_MAX - 16;
	assert_int_equal(ids_of_bytes(b, len, &ids), -EINVAL);
	/* a huge table, and entries too small for a Phdr */
	memcpy(b, orig, len);
	((Elf64_Ehdr *)b)->e_phnum = 0xfff0;
	assert_int_equal(ids_of_bytes(b, len, &ids), -EINVAL);
	memcpy(b, orig, len);
	((Elf64_Ehdr *)b)->e_phentsize = 8;
	assert_int_equal(ids_of_bytes(b, len, &ids), -EINVAL);
	/* a bad class */
	memcpy(b, orig, len);
	b[EI_CLASS] = 7;
	assert_int_equal(ids_of_bytes(b, len, &ids), -EINVAL);
	/* a note name size that runs past everything: no ID, no crash */
	memcpy(b, orig, len);
	memcpy(b + note, "\xff\xff\xff\xff", 4);
	assert_int_equal(ids_of_bytes(b, len, &ids), 0);
	assert_int_equal(ids.id_len, 0);
	/* a descriptor longer than any build ID */
	memcpy(b, orig, len);
	b[note + 4] = OP_BUILDID_MAX + 1;
	assert_int_equal(ids_of_bytes(b, len, &ids), 0);
	assert_int_equal(ids.id_len, 0);
	/* an empty descriptor */
	memcpy(b, orig, len);
	b[note + 4] = 0;
	assert_int_equal(ids_of_bytes(b, len, &ids), 0);
	assert_int_equal(ids.id_len, 0);
	/* every PT_NOTE claiming 1 TiB: the section headers still find it */
	memcpy(b, orig, len);
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(b + eh.e_phoff + i * eh.e_phentsize);

		if (ph->p_type == PT_NOTE)
			ph->p_filesz = 1ull << 40;
	}
	assert_int_equal(ids_of_bytes(b, len, &ids), 0);
	assert_int_equal(ids.id_len, 20);
	/* ... and with the section headers gone too: none */
	((Elf64_Ehdr *)b)->e_shoff = 0;
	assert_int_equal(ids_of_bytes(b, len, &ids), 0);
	assert_int_equal(ids.id_len, 0);
	/* every byte of the headers and notes flipped in turn: never a crash */
	for (size_t i = 0; i < note + 48 && i < len; i++) {
		memcpy(b, orig, len);
		b[i] ^= 0xff;
		(void)ids_of_bytes(b, len, &ids);
		assert_true(ids.id_len <= OP_BUILDID_MAX);
	}
	free(b);
	free(orig);
}

/* a hand-made ELF: one PT_NOTE holding @desc, 32-bit or 64-bit, LSB or MSB */
static size_t make_elf(uint8_t *buf, bool is64, bool msb, const uint8_t *desc, uint32_t descsz)
{
	size_t ehsz = is64 ? 64 : 52, phsz = is64 ? 56 : 32, off = ehsz + phsz;
	uint8_t *n = buf + off;

#define PUT16(p, v)                                                    \
	(msb ? ((p)[0] = (uint8_t)((v) >> 8), (p)[1] = (uint8_t)(v)) : \
	       ((p)[0] = (uint8_t)(v), (p)[1] = (uint8_t)((v) >> 8)))
#define PUT32(p, v)                                                                    \
	do {                                                                           \
		for (int k_ = 0; k_ < 4; k_++)                                         \
			(p)[msb ? 3 - k_ : k_] = (uint8_t)((uint64_t)(v) >> (8 * k_)); \
	} while (0)
#define PUT64(p, v)                                                                    \
	do {                                                                           \
		for (int k_ = 0; k_ < 8; k_++)                                         \
			(p)[msb ? 7 - k_ : k_] = (uint8_t)((uint64_t)(v) >> (8 * k_)); \
	} while (0)
	memset(buf, 0, 512);
	memcpy(buf, ELFMAG, SELFMAG);
	buf[EI_CLASS] = is64 ? ELFCLASS64 : ELFCLASS32;
	buf[EI_DATA] = msb ? ELFDATA2MSB : ELFDATA2LSB;
	buf[EI_VERSION] = EV_CURRENT;
	if (is64) {
		PUT64(buf + 0x20, ehsz); /* e_phoff */
		PUT16(buf + 0x36, phsz); /* e_phentsize */
		PUT16(buf + 0x38, 1);    /* e_phnum */
		PUT32(buf + ehsz, PT_NOTE);
		PUT64(buf + ehsz + 8, off);
		PUT64(buf + ehsz + 32, 16 + ((descsz + 3) & ~3u));
		PUT64(buf + ehsz + 48, 4);
	} else {
		PUT32(buf + 0x1c, ehsz);
		PUT16(buf + 0x2a, phsz);
		PUT16(buf + 0x2c, 1);
		PUT32(buf + ehsz, PT_NOTE);
		PUT32(buf + ehsz + 4, off);
		PUT32(buf + ehsz + 16, 16 + ((descsz + 3) & ~3u));
		PUT32(buf + ehsz + 28, 4);
	}
	PUT32(n, 4);
	PUT32(n + 4, descsz);
	PUT32(n + 8, NT_GNU_BUILD_ID);
	memcpy(n + 12, "GNU", 4);
	memcpy(n + 16, desc, descsz);
	return off + 16 + ((descsz + 3) & ~3u);
}

static void test_classes_and_byte_orders(void **state)
{
	static const uint8_t desc[8] = { 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04 };
	uint8_t buf[512];
	struct op_elf_ids ids;
	char hex[OP_BUILDID_HEX_MAX];

	(void)state;
	for (int c = 0; c < 4; c++) {
		size_t len = make_elf(buf, c & 1, c & 2, desc, sizeof(desc));

		assert_int_equal(ids_of_bytes(buf, len, &ids), 0);
		assert_int_equal(ids.id_len, 8);
		assert_string_equal(op_buildid_hex(ids.id, ids.id_len, hex, sizeof(hex)),
				    "deadbeef01020304");
	}
	/* raw notes as /sys/kernel/notes has them */
	{
		size_t len = make_elf(buf, true, false, desc, sizeof(desc));
		uint8_t id[OP_BUILDID_MAX];
		size_t n;

		assert_int_equal(op_buildid_from_notes(buf + 120, len - 120, id, &n), 0);
		assert_int_equal(n, 8);
		assert_int_equal(op_buildid_from_notes(buf + 120, 20, id, &n), -EINVAL);
		assert_int_equal(op_buildid_from_notes(buf + 120, 8, id, &n), -ENOENT);
	}
}

static void test_kernel_notes(void **state)
{
	uint8_t buf[4096], id[OP_BUILDID_MAX];
	char hex[OP_BUILDID_HEX_MAX];
	ssize_t n;
	size_t len;
	int fd = open("/sys/kernel/notes", O_RDONLY);

	(void)state;
	if (fd < 0) {
		print_message("skip: /sys/kernel/notes: %s\n", strerror(errno));
		return;
	}
	n = read(fd, buf, sizeof(buf));
	close(fd);
	assert_true(n > 0);
	assert_int_equal(op_buildid_from_notes(buf, (size_t)n, id, &len), 0);
	assert_true(len >= 8 && len <= OP_BUILDID_MAX);
	op_buildid_hex(id, len, hex, sizeof(hex));
	assert_int_equal(strlen(hex), 2 * len);
}

/* a FIFO and a character device: refused at once, never read */
static void test_not_regular(void **state)
{
	struct op_elf_ids ids;
	char p[300];
	int fd;

	(void)state;
	snprintf(p, sizeof(p), "%s/fifo", tmpdir);
	assert_int_equal(mkfifo(p, 0600), 0);
	fd = open(p, O_RDONLY | O_NONBLOCK);
	assert_true(fd >= 0);
	assert_int_equal(op_elf_ids_from_fd(fd, &ids), -EINVAL);
	close(fd);
	fd = open("/dev/zero", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(op_elf_ids_from_fd(fd, &ids), -EINVAL);
	close(fd);
}

static void test_hex(void **state)
{
	uint8_t id[OP_BUILDID_MAX];
	size_t n;
	char hex[8];

	(void)state;
	assert_int_equal(op_buildid_parse_hex("00aBff", id, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(id[1], 0xab);
	assert_string_equal(op_buildid_hex(id, n, hex, sizeof(hex)), "00abff");
	/* cut, still terminated */
	assert_string_equal(op_buildid_hex(id, n, hex, 5), "00ab");
	assert_int_equal(op_buildid_parse_hex("abc", id, &n), -EINVAL);
	assert_int_equal(op_buildid_parse_hex("", id, &n), -EINVAL);
	assert_int_equal(op_buildid_parse_hex("zz", id, &n), -EINVAL);
}

/* ------------------------------------------------------------- the index */

static void test_index_roundtrip(void **state)
{
	static const char *const paths[] = {
		"/usr/bin/hot",     "/opt/with space/x",  "/tmp/new\nline",
		"/tmp/back\\slash", "/tmp/tab\there\x01", "/tmp/\xc3\xa9t\xc3\xa9",
		"vmlinux",
	};
	struct op_buildid_ent e[7];
	struct op_buildid_index idx;
	char text[4096];
	size_t len = 0, i;

	(void)state;
	len = strlen(op_buildid_index_header);
	memcpy(text, op_buildid_index_header, len);
	for (i = 0; i < 7; i++) {
		memset(&e[i], 0, sizeof(e[i]));
		e[i].path = (char *)paths[i];
		e[i].kind = i == 6 ? OP_BUILDID_KERNEL : OP_BUILDID_USER;
		e[i].ids.id_len = i == 1 ? 0 : 20;
		memset(e[i].ids.id, (int)(0x11 * i), 20);
		e[i].size = 1000 + i;
		e[i].mtime = 1764352000 + i;
		e[i].ids.text_off = 0x1000;
		e[i].ids.text_vaddr = 0x401000 + i;
		e[i].ids.text_size = 0x13d;
		len += op_buildid_format(text + len, sizeof(text) - len, &e[i]);
		assert_true(len < sizeof(text));
	}
	/* one line per entry: no newline of a path leaks */
	{
		size_t lines = 0;

		for (i = 0; i < len; i++)
			lines += text[i] == '\n';
		assert_int_equal(lines, 8);
	}
	assert_int_equal(op_buildid_index_parse(text, len, &idx), 0);
	assert_int_equal(idx.n, 7);
	assert_int_equal(idx.nbad, 0);
	for (i = 0; i < 7; i++) {
		const struct op_buildid_ent *f = op_buildid_index_find(&idx, paths[i]);

		assert_non_null(f);
		assert_string_equal(f->path, paths[i]);
		assert_int_equal(f->kind, e[i].kind);
		assert_int_equal(f->ids.id_len, e[i].ids.id_len);
		assert_memory_equal(f->ids.id, e[i].ids.id, f->ids.id_len);
		assert_int_equal(f->size, e[i].size);
		assert_int_equal(f->mtime, e[i].mtime);
		assert_int_equal(f->ids.text_vaddr, e[i].ids.text_vaddr);
		assert_int_equal(f->ids.text_size, e[i].ids.text_size);
	}
	assert_null(op_buildid_index_find(&idx, "/usr/bin/cold"));
	op_buildid_index_free(&idx);
	/* a short buffer: the length it needs, the text cut and terminated */
	len = op_buildid_format(NULL, 0, &e[0]);
	assert_int_equal(op_buildid_format(text, 10, &e[0]), len);
	assert_int_equal(strlen(text), 9);
}

static void test_index_bad_lines(void **state)
{
	static const char text[] = "# comment\n"
				   "\n"
				   "user 0011 1 2 0x0 0x0 0x0 /ok\n"
				   "user 0011 1 2 0x0 0x0 0x0 /ok\n" /* duplicate: later wins */
				   "bogus 0011 1 2 0x0 0x0 0x0 /bad-kind\n"
				   "user 001 1 2 0x0 0x0 0x0 /odd-hex\n"
				   "user 0011 -1 2 0x0 0x0 0x0 /neg\n"
				   "user 0011 99999999999999999999 2 0x0 0x0 0x0 /overflow\n"
				   "user 0011 1 2 10 0x0 0x0 /no-0x\n"
				   "user 0011 1 2 0x0 0x0 0x0 \n"
				   "user 0011 1 2 0x0 0x0 0x0 /bad\\qescape\n"
				   "user 0011 1 2 0x0 0x0 0x0 /nul\\x00\n"
				   "user  0011 1 2 0x0 0x0 0x0 /two-blanks\n"
				   "user 0011 1 2 0x0 0x0\n"
				   "user - 7 8 0x0 0x0 0x0 /no-id\n"
				   "user 0022 1 3 0x0 0x0 0x0 /ok\n";
	struct op_buildid_index idx;
	const struct op_buildid_ent *e;

	(void)state;
	assert_int_equal(op_buildid_index_parse(text, sizeof(text) - 1, &idx), 0);
	assert_int_equal(idx.n, 2);
	assert_int_equal(idx.nbad, 10);
	assert_int_equal(idx.first_bad, 5);
	e = op_buildid_index_find(&idx, "/ok");
	assert_non_null(e);
	assert_int_equal(e->ids.id[0], 0x00);
	assert_int_equal(e->ids.id[1], 0x22);
	assert_int_equal(e->mtime, 3);
	e = op_buildid_index_find(&idx, "/no-id");
	assert_non_null(e);
	assert_int_equal(e->ids.id_len, 0);
	assert_int_equal(e->size, 7);
	op_buildid_index_free(&idx);
	/* a NUL inside a line */
	assert_int_equal(op_buildid_index_parse("user - 1 2 0x0 0x0 0x0 /a\0b\n", 28, &idx), 0);
	assert_int_equal(idx.n, 0);
	assert_int_equal(idx.nbad, 1);
	op_buildid_index_free(&idx);
}

static void test_index_load(void **state)
{
	struct op_buildid_index idx;
	char p[400], err[256] = "";

	(void)state;
	snprintf(p, sizeof(p), "%s/sess", tmpdir);
	assert_int_equal(op_buildid_index_load(p, &idx, err, sizeof(err)), -ENOENT);
	sh("mkdir -p '%s/stats' && printf 'user ab 1 2 0x0 0x0 0x0 /x\\n' > '%s/stats/buildids'", p,
	   p);
	assert_int_equal(op_buildid_index_load(p, &idx, err, sizeof(err)), 0);
	assert_int_equal(idx.n, 1);
	assert_non_null(op_buildid_index_find(&idx, "/x"));
	op_buildid_index_free(&idx);
	/* a symbolic link is not followed */
	sh("mv '%s/stats/buildids' '%s/real' && ln -s '%s/real' '%s/stats/buildids'", p, p, p, p);
	assert_int_equal(op_buildid_index_load(p, &idx, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "stats/buildids"));
	/* a FIFO does not block */
	sh("rm '%s/stats/buildids' && mkfifo '%s/stats/buildids'", p, p);
	assert_int_equal(op_buildid_index_load(p, &idx, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a regular file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_files),
		cmocka_unit_test(test_text_segment),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_classes_and_byte_orders),
		cmocka_unit_test(test_kernel_notes),
		cmocka_unit_test(test_not_regular),
		cmocka_unit_test(test_hex),
		cmocka_unit_test(test_index_roundtrip),
		cmocka_unit_test(test_index_bad_lines),
		cmocka_unit_test(test_index_load),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
