/*
 * test_mangle.c - sample-file names: OProfile-compatible forms, escaping of
 * hostile components, the "never leaves samples/current" guarantee (hostile
 * corpus + random bytes), and the mangle -> parse round trip.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nftw */
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_mangle.h"

#define U(p) { .kind = OP_IMAGE_USER, .path = (p) }
#define K(p) { .kind = OP_IMAGE_KERNEL, .path = (p) }
#define A(n, t, s, e) { .kind = OP_IMAGE_ANON, .path = (n), .tgid = (t), .start = (s), .end = (e) }

/* Every component non-empty, not "." / "..", <= 255 bytes, no control byte. */
static void assert_safe(const char *name)
{
	const char *p = name;

	assert_true(strlen(name) < PATH_MAX);
	assert_true(name[0] != '/');
	for (;;) {
		const char *sl = strchr(p, '/');
		size_t n = sl ? (size_t)(sl - p) : strlen(p);

		if (n == 0 || n > 255 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			fail_msg("unsafe component in \"%s\" at offset %zu (len %zu)", name,
				 (size_t)(p - name), n);
		for (size_t i = 0; i < n; i++) {
			unsigned char c = (unsigned char)p[i];

			if (c < 0x20 || c == 0x7f)
				fail_msg("control byte 0x%02x in \"%s\"", c, name);
		}
		if (!sl)
			break;
		p = sl + 1;
	}
}

/* ---- OProfile-compatible forms ------------------------------------- */

struct form_case {
	struct op_mangle_args a;
	const char *want;
};

static const struct form_case forms[] = {
	{ { .app = U("/usr/bin/x"), .image = U("/lib/libc.so.6"), .event = "CPU_CLK_UNHALTED",
	    .count = 100000, .separate = OP_SEP_LIB },
	  "{root}/usr/bin/x/{dep}/{root}/lib/libc.so.6/CPU_CLK_UNHALTED.100000.0.all.all.all" },
	/* without --separate-lib, A = B */
	{ { .app = U("/usr/bin/x"), .image = U("/lib/libc.so.6"), .event = "CPU_CLK_UNHALTED",
	    .count = 100000 },
	  "{root}/lib/libc.so.6/{dep}/{root}/lib/libc.so.6/CPU_CLK_UNHALTED.100000.0.all.all.all" },
	/* verbatim: spaces, ':', braces inside names, UTF-8, '-', '\' inside */
	{ { .app = U("/t/sp ace.d/lo:op"), .image = U("/t/sp ace.d/lo:op"), .event = "CPU_CLK_UNHALTED",
	    .count = 100000, .separate = OP_SEP_LIB },
	  "{root}/t/sp ace.d/lo:op/{dep}/{root}/t/sp ace.d/lo:op/CPU_CLK_UNHALTED.100000.0.all.all.all" },
	{ { .image = U("/opt/a{b}c/-x/\xc3\xa9t\xc3\xa9/a\\b/{x}"), .event = "TIMER" },
	  "{root}/opt/a{b}c/-x/\xc3\xa9t\xc3\xa9/a\\b/{x}/{dep}/{root}/opt/a{b}c/-x/\xc3\xa9t\xc3\xa9/a\\b/{x}/TIMER.0.0.all.all.all" },
	/* kernel images */
	{ { .app = U("/usr/bin/x"), .image = K("no-vmlinux"), .event = "TIMER", .separate = OP_SEP_KERNEL },
	  "{root}/usr/bin/x/{dep}/{kern}/no-vmlinux/TIMER.0.0.all.all.all" },
	{ { .app = U("/usr/bin/x"), .image = K("ext4"), .event = "TIMER", .separate = OP_SEP_LIB },
	  "{kern}/ext4/{dep}/{kern}/ext4/TIMER.0.0.all.all.all" },
	{ { .app = U("/usr/bin/x"), .image = K("/proc/kallsyms"), .event = "TIMER",
	    .separate = OP_SEP_KERNEL },
	  "{root}/usr/bin/x/{dep}/{root}/proc/kallsyms/TIMER.0.0.all.all.all" },
	{ { .app = U("/usr/bin/x"), .image = K("/boot/vmlinux"), .event = "TIMER" },
	  "{root}/boot/vmlinux/{dep}/{root}/boot/vmlinux/TIMER.0.0.all.all.all" },
	/* --separate-kernel implies --separate-lib */
	{ { .app = U("/usr/bin/x"), .image = U("/lib/l.so"), .event = "TIMER", .separate = OP_SEP_KERNEL },
	  "{root}/usr/bin/x/{dep}/{root}/lib/l.so/TIMER.0.0.all.all.all" },
	/* anon: always the real app, lowercase hex, end inclusive */
	{ { .app = U("/usr/bin/java"), .image = A("", 7583, 0x7fa1b47d0000, 0x7fa1b47d0fff),
	    .event = "CPU_CLK_UNHALTED", .count = 100000 },
	  "{root}/usr/bin/java/{dep}/{anon:anon}/7583.0x7fa1b47d0000.0x7fa1b47d0fff/CPU_CLK_UNHALTED.100000.0.all.all.all" },
	{ { .app = U("/usr/bin/java"), .image = A("[heap]", 1, 0xABC000, 0xABCFFF), .event = "TIMER" },
	  "{root}/usr/bin/java/{dep}/{anon:[heap]}/1.0xabc000.0xabcfff/TIMER.0.0.all.all.all" },
	/* thread and cpu separation; unit mask in decimal */
	{ { .app = U("/t/loop"), .image = U("/t/loop"), .event = "CPU_CLK_UNHALTED", .count = 750000,
	    .tgid = 32347, .tid = 32347, .cpu = 0, .separate = OP_SEP_ALL },
	  "{root}/t/loop/{dep}/{root}/t/loop/CPU_CLK_UNHALTED.750000.0.32347.32347.0" },
	{ { .app = U("/t/loop"), .image = U("/t/loop"), .event = "EVENT", .count = 1234, .um = 0x2000,
	    .tgid = 34, .tid = 35, .cpu = 2, .separate = OP_SEP_THREAD | OP_SEP_CPU },
	  "{root}/t/loop/{dep}/{root}/t/loop/EVENT.1234.8192.34.35.2" },
	{ { .app = U("/t/loop"), .image = U("/t/loop"), .event = "E", .tgid = 34, .tid = 35, .cpu = 2,
	    .separate = OP_SEP_CPU },
	  "{root}/t/loop/{dep}/{root}/t/loop/E.0.0.all.all.2" },
	{ { .app = U("/t/loop"), .image = U("/t/loop"), .event = "E", .tgid = 34, .tid = 35, .cpu = 2,
	    .separate = OP_SEP_THREAD },
	  "{root}/t/loop/{dep}/{root}/t/loop/E.0.0.34.35.all" },
	/* call graph */
	{ { .app = U("/bin/a"), .image = U("/bin/a"), .is_cg = true, .cg_to = U("/lib/b.so"), .event = "E",
	    .count = 1, .separate = OP_SEP_LIB },
	  "{root}/bin/a/{dep}/{root}/bin/a/{cg}/{root}/lib/b.so/E.1.0.all.all.all" },
	{ { .app = U("/bin/a"), .image = K("no-vmlinux"), .is_cg = true, .cg_to = A("[stack]", 9, 0x10, 0x1f),
	    .event = "E", .separate = OP_SEP_KERNEL },
	  "{root}/bin/a/{dep}/{kern}/no-vmlinux/{cg}/{anon:[stack]}/9.0x10.0x1f/E.0.0.all.all.all" },
};

static void test_oprofile_forms(void **state)
{
	char buf[PATH_MAX];
	(void)state;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		int n = op_mangle(&forms[i].a, buf, sizeof(buf));

		if (n < 0)
			fail_msg("case %zu: op_mangle returned %d", i, n);
		assert_string_equal(buf, forms[i].want);
		assert_int_equal(n, (int)strlen(forms[i].want));
		assert_safe(buf);
	}
}

/* ---- escaping of hostile components --------------------------------- */

struct esc_case {
	const char *in;
	size_t len;
	const char *want;
};

#define E(s, w) { s, sizeof(s) - 1, w }
static const struct esc_case escs[] = {
	E("usr", "usr"),
	E("sp ace.d", "sp ace.d"),
	E("lo:op", "lo:op"),
	E("a{b}c", "a{b}c"),
	E("-rf", "-rf"),
	E("a\\b", "a\\b"),
	E(".", "%2E"),
	E("..", "%2E."),
	E("...", "..."),
	E(".hidden", ".hidden"),
	E("", "%"),
	E("{dep}", "%7Bdep}"),
	E("{cg}", "%7Bcg}"),
	E("{root}", "%7Broot}"),
	E("{kern}", "%7Bkern}"),
	E("{anon", "%7Banon"),
	E("{anon:x}", "%7Banon:x}"),
	E("{anonymous", "%7Banonymous"),
	E("x{dep}", "x{dep}"),
	E("{dep}x", "{dep}x"),
	E("{DEP}", "{DEP}"),
	E("100%", "100%25"),
	E("%2E", "%252E"),
	E("%+x", "%25+x"),
	E("new\nline", "new%0Aline"),
	E("tab\there", "tab%09here"),
	E("del\x7f", "del%7F"),
	E("\x01", "%01"),
	E("a/b", "a%2Fb"),
	E("end\\", "end%5C"),
	E("\\", "%5C"),
};

static void test_escape_table(void **state)
{
	char out[PATH_MAX], back[PATH_MAX];
	(void)state;

	for (size_t i = 0; i < sizeof(escs) / sizeof(escs[0]); i++) {
		int n = op_escape_component(escs[i].in, escs[i].len, out, sizeof(out));

		assert_int_equal(n, (int)strlen(escs[i].want));
		assert_string_equal(out, escs[i].want);
		n = op_unescape_component(out, back, sizeof(back));
		assert_int_equal(n, (int)escs[i].len);
		assert_memory_equal(back, escs[i].in, escs[i].len);
	}
	/* NUL inside a component is refused */
	assert_int_equal(op_escape_component("a\0b", 3, out, sizeof(out)), -EINVAL);
	/* too small output */
	assert_int_equal(op_escape_component("abcdef", 6, out, 4), -ENAMETOOLONG);
}

static void test_unescape_errors(void **state)
{
	static const char *const bad[] = { "%", "%2", "%zz", "a%4", "%00", "a/b", "a/%2E", "%G0" };
	char out[64];
	(void)state;

	/* a lone "%" is the empty component, not an error */
	assert_int_equal(op_unescape_component("%", out, sizeof(out)), 0);
	assert_string_equal(out, "");
	for (size_t i = 1; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (op_unescape_component(bad[i], out, sizeof(out)) != -EINVAL)
			fail_msg("\"%s\" should be a bad escape", bad[i]);
	assert_int_equal(op_unescape_component("abcdef", out, 4), -ENAMETOOLONG);
	/* lowercase hex is accepted */
	assert_int_equal(op_unescape_component("%2e%7b", out, sizeof(out)), 2);
	assert_string_equal(out, ".{");
}

static void test_long_components(void **state)
{
	char in[1200], out[PATH_MAX], back[PATH_MAX];
	(void)state;

	/* 300 plain bytes -> 255 + "/%+" + 45 */
	memset(in, 'a', 300);
	assert_int_equal(op_escape_component(in, 300, out, sizeof(out)), 255 + 3 + 45);
	assert_memory_equal(out + 255, "/%+", 3);
	assert_int_equal(op_unescape_component(out, back, sizeof(back)), 300);
	assert_memory_equal(back, in, 300);

	/* 255 bytes are not split */
	assert_int_equal(op_escape_component(in, 255, out, sizeof(out)), 255);
	assert_null(strchr(out, '/'));

	/* escapes are never cut: 'a' then 120 newlines = 1 + 360 bytes encoded */
	for (int shift = 0; shift < 3; shift++) {
		size_t n = 0;

		for (int i = 0; i < shift; i++)
			in[n++] = 'a';
		for (int i = 0; i < 400; i++)
			in[n++] = '\n';
		int m = op_escape_component(in, n, out, sizeof(out));

		assert_true(m > 0);
		assert_safe(out);
		/* every chunk after the first starts with the continuation mark */
		for (char *p = strchr(out, '/'); p; p = strchr(p + 1, '/'))
			assert_memory_equal(p + 1, "%+", 2);
		assert_int_equal(op_unescape_component(out, back, sizeof(back)), (int)n);
		assert_memory_equal(back, in, n);
	}

	/* a 257-byte component ending in ".." : the last chunk is "%+.." not ".." */
	memset(in, 'b', 255);
	in[255] = '.';
	in[256] = '.';
	assert_int_equal(op_escape_component(in, 257, out, sizeof(out)), 255 + 3 + 2);
	assert_string_equal(out + 255, "/%+..");
}

/* ---- errors --------------------------------------------------------- */

static void test_mangle_errors(void **state)
{
	static char longpath[PATH_MAX + 10];
	char buf[PATH_MAX];
	struct op_mangle_args a = { .app = U("/bin/a"), .image = U("/bin/a"), .event = "E" };
	(void)state;

	assert_true(op_mangle(&a, buf, sizeof(buf)) > 0);

	a.image.path = "bin/a"; /* relative */
	assert_int_equal(op_mangle(&a, buf, sizeof(buf)), -EINVAL);
	a.image.path = "";
	assert_int_equal(op_mangle(&a, buf, sizeof(buf)), -EINVAL);
	a.image.path = NULL;
	assert_int_equal(op_mangle(&a, buf, sizeof(buf)), -EINVAL);
	a.image = (struct op_image_name)K("mod/x"); /* kernel name with '/', not absolute */
	assert_int_equal(op_mangle(&a, buf, sizeof(buf)), -EINVAL);
	a.image = (struct op_image_name)K("");
	assert_int_equal(op_mangle(&a, buf, sizeof(buf)), -EINVAL);
	a.image = (struct op_image_name)A("x", -1, 0, 1);
	assert_int_equal(op_mangle(&a, buf, sizeof(buf)), -EINVAL);
	/* separate-lib with a relative app */
	a.image = (struct op_image_name)U("/lib/x");
	a.app = (struct op_image_name)U("rel");
	a.separate = OP_SEP_LIB;
	assert_int_equal(op_mangle(&a, buf, sizeof(buf)), -EINVAL);
	a.app = (struct op_image_name)U("/bin/a");

	static const char *const bad_events[] = {
		NULL, "", "A.B", "A/B", "A B", "A\nB",
		"E123456789012345678901234567890123456789012345678901234567890123",
	};
	for (size_t i = 0; i < sizeof(bad_events) / sizeof(bad_events[0]); i++) {
		a.event = bad_events[i];
		assert_int_equal(op_mangle(&a, buf, sizeof(buf)), -EINVAL);
	}
	a.event = "E12345678901234567890123456789012345678901234567890123456789012"; /* 63 */
	assert_true(op_mangle(&a, buf, sizeof(buf)) > 0);
	a.event = "E";
	a.separate = OP_SEP_NONE;

	/* whole name too long */
	longpath[0] = '/';
	for (size_t i = 1; i < PATH_MAX + 5; i++)
		longpath[i] = (i % 100) ? 'x' : '/';
	a.image.path = longpath;
	assert_int_equal(op_mangle(&a, buf, sizeof(buf)), -ENAMETOOLONG);
	longpath[PATH_MAX / 2] = '\0';
	assert_int_equal(op_mangle(&a, buf, sizeof(buf)), -ENAMETOOLONG); /* A and B */
	longpath[PATH_MAX / 3] = '\0';
	assert_true(op_mangle(&a, buf, sizeof(buf)) > 0);
	/* escaping triples the size: 1500 newlines do not fit */
	memset(longpath + 1, '\n', 1500);
	longpath[1501] = '\0';
	assert_int_equal(op_mangle(&a, buf, sizeof(buf)), -ENAMETOOLONG);
	/* small buffer */
	a.image.path = "/lib/x";
	assert_int_equal(op_mangle(&a, buf, 10), -ENOBUFS);
	assert_int_equal(op_mangle(&a, buf, 0), -ENOBUFS);
}

/* ---- round trip ----------------------------------------------------- */

static const char *const hostile[] = {
	"/usr/bin/x",
	"/t/sp ace.d/lo:op",
	"/opt/a{b}c/d",
	"/x/{dep}/y",
	"/{root}/{kern}/{cg}/{anon:x}/{anon",
	"/a/../../../etc/passwd",
	"/./.",
	"/..",
	"/a/./b",
	"/a//b",
	"/",
	"//",
	"/trailing/",
	"/new\nline/x",
	"/ctl\x01\x02\x1f\x7f",
	"/\xc3\xa9t\xc3\xa9/\xe2\x82\xac/\xf0\x9f\x98\x80",
	"/back\\slash\\/x\\",
	"/100%/%2E%2E/%+/%",
	"/-rf/--help",
	"/tab\there/cr\r",
	"/{dep}",
	"/a/{cg}",
	"/\xff\xfe/\x80",
	"/EVENT.1.2.3.4.5",
	NULL, /* filled with a 300-byte component */
	NULL, /* filled with 200 newlines (600 bytes escaped) */
};

static char long1[400], long2[400];

static void init_long(void)
{
	long1[0] = '/';
	memset(long1 + 1, 'L', 300);
	memcpy(long1 + 250, "..%{dep}\\", 9);
	long2[0] = '/';
	memset(long2 + 1, '\n', 200);
}

static const char *hostile_at(size_t i)
{
	size_t n = sizeof(hostile) / sizeof(hostile[0]);

	if (i < n - 2)
		return hostile[i];
	return i == n - 2 ? long1 : long2;
}

static void expect_image(const struct op_image_name *want, const struct op_image_name *got)
{
	enum op_image_kind k = want->kind;
	const char *p = want->path;

	if (k == OP_IMAGE_KERNEL && strchr(p, '/'))
		k = OP_IMAGE_USER; /* kernel by path parses as {root} */
	if (k == OP_IMAGE_ANON && (!p || !*p))
		p = "anon";
	assert_int_equal(got->kind, k);
	assert_non_null(got->path);
	assert_string_equal(got->path, p);
	if (k == OP_IMAGE_ANON) {
		assert_int_equal(got->tgid, want->tgid);
		assert_true(got->start == want->start);
		assert_true(got->end == want->end);
	}
}

/* mangle, check safety, parse, check equality; returns op_mangle's rc */
static int round_trip(const struct op_mangle_args *a, struct op_parsed_name *pn)
{
	static char buf[PATH_MAX];
	char err[256];
	int n = op_mangle(a, buf, sizeof(buf));
	unsigned sep = a->separate;
	bool use_app;
	int rc;

	if (n < 0)
		return n;
	assert_safe(buf);
	rc = op_parse_name(buf, pn, err, sizeof(err));
	if (rc)
		fail_msg("parse of \"%s\" failed: %s", buf, err);
	if (sep & OP_SEP_KERNEL)
		sep |= OP_SEP_LIB;
	if (a->image.kind == OP_IMAGE_ANON)
		use_app = true;
	else if (a->image.kind == OP_IMAGE_KERNEL)
		use_app = sep & OP_SEP_KERNEL;
	else
		use_app = sep & OP_SEP_LIB;
	expect_image(use_app ? &a->app : &a->image, &pn->app);
	expect_image(&a->image, &pn->image);
	assert_int_equal(pn->is_cg, a->is_cg);
	if (a->is_cg)
		expect_image(&a->cg_to, &pn->cg_to);
	assert_string_equal(pn->event, a->event);
	assert_true(pn->count == a->count);
	assert_int_equal(pn->um, a->um);
	assert_int_equal(pn->tgid, (sep & OP_SEP_THREAD) ? a->tgid : -1);
	assert_int_equal(pn->tid, (sep & OP_SEP_THREAD) ? a->tid : -1);
	assert_int_equal(pn->cpu, (sep & OP_SEP_CPU) ? a->cpu : -1);
	/* the prefix of a session directory is skipped */
	{
		static char full[PATH_MAX + 64];
		static struct op_parsed_name pn2;

		snprintf(full, sizeof(full), "/var/lib/oprofile/samples/current/%s", buf);
		assert_int_equal(op_parse_name(full, &pn2, err, sizeof(err)), 0);
		assert_string_equal(pn2.image.path, pn->image.path);
	}
	return n;
}

static void test_round_trip_corpus(void **state)
{
	static struct op_parsed_name pn;
	size_t nh = sizeof(hostile) / sizeof(hostile[0]);
	unsigned done = 0;
	(void)state;

	init_long();
	for (size_t i = 0; i < nh; i++) {
		const char *p = hostile_at(i);
		const char *q = hostile_at((i + 3) % nh);
		const char *kname = strrchr(p, '/') + 1; /* kernel name without '/' */
		const char *aname = p + 1;               /* anon name (may hold '/') */
		struct op_image_name images[] = {
			U(p), K(kname[0] ? kname : "k"), K(p), A(aname, 42, 0x1000, 0x1fff), A("", 7, 0, 0),
		};

		for (size_t k = 0; k < sizeof(images) / sizeof(images[0]); k++) {
			for (unsigned sep = 0; sep < 16; sep++) {
				for (int cg = 0; cg < 2; cg++) {
					struct op_mangle_args a = {
						.app = U(q), .image = images[k], .is_cg = cg,
						.cg_to = images[(k + 1) % 5], .event = "CPU_CLK_UNHALTED",
						.count = 100000 + i, .um = (uint32_t)(sep * 0x101u),
						.tgid = 100 + (int)i, .tid = 200 + (int)k, .cpu = (int)sep,
						.separate = sep,
					};
					int rc = round_trip(&a, &pn);

					if (rc < 0)
						fail_msg("mangle of hostile[%zu] kind %zu sep %u: %d", i, k, sep, rc);
					done++;
				}
			}
		}
	}
	assert_int_equal(done, nh * 5 * 16 * 2);
}

/* random byte paths: never unsafe, always parse back equal */
static void test_fuzz(void **state)
{
	static const char alphabet[] = "/./..{}%+\\:-anonrootkerndepcg \n\x01\x7f\xff\xc3";
	static struct op_parsed_name pn;
	char p1[1200], p2[300], an[100];
	unsigned seed = 12345, ok = 0, toolong = 0;
	(void)state;

	for (int iter = 0; iter < 20000; iter++) {
		size_t n1 = (size_t)(rand_r(&seed) % (iter % 10 == 0 ? 1100 : 80));
		size_t n2 = (size_t)(rand_r(&seed) % 250);
		size_t na = (size_t)(rand_r(&seed) % 90);
		bool bytes = rand_r(&seed) & 1;

		p1[0] = '/';
		for (size_t i = 1; i <= n1; i++) {
			int r = rand_r(&seed);

			p1[i] = bytes ? (char)(1 + r % 255) : alphabet[r % (sizeof(alphabet) - 1)];
		}
		p1[n1 + 1] = '\0';
		p2[0] = '/';
		for (size_t i = 1; i <= n2; i++)
			p2[i] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		p2[n2 + 1] = '\0';
		for (size_t i = 0; i < na; i++)
			an[i] = (char)(1 + rand_r(&seed) % 255);
		an[na] = '\0';

		struct op_image_name im[4] = { U(p1), K(p1), A(an, rand_r(&seed) & 0xffff, 0, UINT64_MAX), U(p2) };
		const char *kn = strrchr(p2, '/') + 1;

		if (*kn)
			im[1] = (struct op_image_name)K(kn);
		int r = rand_r(&seed);
		struct op_mangle_args a = {
			.app = U(p2), .image = im[r % 4], .is_cg = (r >> 3) & 1, .cg_to = im[(r >> 4) % 4],
			.event = "E", .count = (uint64_t)r * 977, .um = (uint32_t)r, .tgid = r & 0x7fff,
			.tid = (r >> 2) & 0x7fff, .cpu = (r >> 5) & 63, .separate = (unsigned)(r >> 8) & 15,
		};
		int rc = round_trip(&a, &pn);

		if (rc == -ENAMETOOLONG)
			toolong++;
		else if (rc < 0)
			fail_msg("iteration %d: op_mangle returned %d", iter, rc);
		else
			ok++;
	}
	/* the loop exercised both outcomes */
	assert_true(ok > 15000);
	assert_true(toolong > 0);
}

/* ---- on disk: create the files, walk them back as opreport would -------- */

static char disk_root[64];
static unsigned disk_found, disk_bad;

/* mkdir -p the directories of @name below @base, create the file */
static int create_below(int base, const char *name)
{
	char comp[256];
	int dir = dup(base), fd;
	const char *p = name;

	for (;;) {
		const char *sl = strchr(p, '/');
		size_t n = sl ? (size_t)(sl - p) : strlen(p);

		assert_true(n > 0 && n < sizeof(comp));
		memcpy(comp, p, n);
		comp[n] = '\0';
		if (!sl) {
			fd = openat(dir, comp, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0644);
			close(dir);
			return fd < 0 ? -errno : close(fd);
		}
		if (mkdirat(dir, comp, 0755) && errno != EEXIST) {
			close(dir);
			return -errno;
		}
		fd = openat(dir, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(dir);
		if (fd < 0)
			return -errno;
		dir = fd;
		p = sl + 1;
	}
}

static int walk_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	static struct op_parsed_name pn;
	char err[256];

	(void)st;
	(void)ftw;
	if (type != FTW_F)
		return 0;
	disk_found++;
	/* relative to samples/current: skip "<disk_root>/" */
	if (op_parse_name(path + strlen(disk_root) + 1, &pn, err, sizeof(err))) {
		fprintf(stderr, "walk: %s: %s\n", path, err);
		disk_bad++;
	}
	return 0;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void test_on_disk(void **state)
{
	static char buf[PATH_MAX], real_base[PATH_MAX], real_file[PATH_MAX + 64];
	size_t nh = sizeof(hostile) / sizeof(hostile[0]);
	unsigned created = 0;
	int base;
	(void)state;

	init_long();
	strcpy(disk_root, "test_mangle.disk.XXXXXX"); /* under the build dir */
	assert_non_null(mkdtemp(disk_root));
	base = open(disk_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(base >= 0);
	assert_non_null(realpath(disk_root, real_base));
	for (size_t i = 0; i < nh; i++) {
		const char *p = hostile_at(i);
		struct op_image_name images[] = { U(p), K(strrchr(p, '/')[1] ? strrchr(p, '/') + 1 : "k"),
						  A(p + 1, 9, 0x1000, 0x1fff) };

		for (size_t k = 0; k < 3; k++) {
			struct op_mangle_args a = { .app = U(hostile_at((i + 1) % nh)), .image = images[k],
						    .is_cg = k == 1, .cg_to = U(p), .event = "E", .count = i,
						    .separate = OP_SEP_LIB | OP_SEP_KERNEL };
			char *rp;

			assert_true(op_mangle(&a, buf, sizeof(buf)) > 0);
			if (create_below(base, buf))
				fail_msg("cannot create \"%s\": %s", buf, strerror(errno));
			created++;
			/* the created file resolves below the base directory */
			snprintf(real_file, sizeof(real_file), "%s/%s", disk_root, buf);
			rp = realpath(real_file, NULL);
			assert_non_null(rp);
			if (strncmp(rp, real_base, strlen(real_base)) || rp[strlen(real_base)] != '/')
				fail_msg("\"%s\" resolved to %s, outside %s", buf, rp, real_base);
			free(rp);
		}
	}
	close(base);
	/* walk the tree as a report tool would: every file is found and parses */
	disk_found = disk_bad = 0;
	assert_int_equal(nftw(disk_root, walk_one, 16, FTW_PHYS), 0);
	assert_int_equal(disk_bad, 0);
	assert_int_equal(disk_found, created);
	assert_int_equal(nftw(disk_root, rm_one, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* ---- parser --------------------------------------------------------- */

static void test_parse_oprofile_strings(void **state)
{
	static struct op_parsed_name pn;
	char err[256];
	(void)state;

	/* the string form OProfile builds ("{root}/" + "/usr/bin/x") */
	assert_int_equal(op_parse_name("{root}//usr/bin/x/{dep}/{root}//lib/libc.so.6/TIMER.0.0.all.all.all",
				       &pn, err, sizeof(err)), 0);
	assert_string_equal(pn.app.path, "/usr/bin/x");
	assert_string_equal(pn.image.path, "/lib/libc.so.6");
	assert_string_equal(pn.event, "TIMER");
	assert_int_equal(pn.tgid, -1);

	assert_int_equal(op_parse_name("/s/samples/current/{root}/usr/bin/java/{dep}/{anon:anon}/"
				       "7583.0x7fa1b47d0000.0x7fa1b47d0fff/CPU_CLK_UNHALTED.100000.0.7583.7584.1",
				       &pn, err, sizeof(err)), 0);
	assert_int_equal(pn.image.kind, OP_IMAGE_ANON);
	assert_string_equal(pn.image.path, "anon");
	assert_int_equal(pn.image.tgid, 7583);
	assert_true(pn.image.start == 0x7fa1b47d0000ull);
	assert_true(pn.image.end == 0x7fa1b47d0fffull);
	assert_int_equal(pn.tgid, 7583);
	assert_int_equal(pn.tid, 7584);
	assert_int_equal(pn.cpu, 1);
	assert_true(pn.count == 100000);

	assert_int_equal(op_parse_name("{kern}/ext4/{dep}/{kern}/ext4/{cg}/{root}/bin/x/E.18446744073709551615.4294967295.all.all.all",
				       &pn, err, sizeof(err)), 0);
	assert_int_equal(pn.app.kind, OP_IMAGE_KERNEL);
	assert_string_equal(pn.app.path, "ext4");
	assert_true(pn.is_cg);
	assert_string_equal(pn.cg_to.path, "/bin/x");
	assert_true(pn.count == UINT64_MAX);
	assert_int_equal(pn.um, UINT32_MAX);
}

struct perr_case {
	const char *name;
	const char *msg; /* expected substring of the error */
};

static const struct perr_case perrs[] = {
	{ "TIMER.0.0.all.all.all", "found no '/'" },
	{ "a/b/TIMER.0.0.all.all.all", "no {root}, {kern} or {anon:NAME} component before the event part" },
	{ "{root}/x/{dep}/{root}/x/TIMER.0.0.all.all",
	  "event part \"TIMER.0.0.all.all\": expected 6 '.'-separated fields EVENT.COUNT.UM.TGID.TID.CPU, found 5" },
	{ "{root}/x/{dep}/{root}/x/TIMER.0.0.all.all.all.x", "found 7" },
	{ "{root}/x/{dep}/{root}/x/.0.0.all.all.all", "field 1 (event name) is empty" },
	{ "{root}/x/{dep}/{root}/x/E..0.all.all.all", "field 2 (count) is empty" },
	{ "{root}/x/{dep}/{root}/x/E.12a.0.all.all.all", "field 2 (count): expected a decimal number, found \"12a\"" },
	{ "{root}/x/{dep}/{root}/x/E.18446744073709551616.0.all.all.all", "field 2 (count): expected a decimal number" },
	{ "{root}/x/{dep}/{root}/x/E.1.0x10.all.all.all",
	  "field 3 (unit mask): expected a decimal number below 2^32, found \"0x10\"" },
	{ "{root}/x/{dep}/{root}/x/E.1.4294967296.all.all.all", "field 3 (unit mask)" },
	{ "{root}/x/{dep}/{root}/x/E.1.0.-1.all.all",
	  "field 4 (tgid): expected a decimal number or \"all\", found \"-1\"" },
	{ "{root}/x/{dep}/{root}/x/E.1.0.1.ALL.all", "field 5 (tid): expected a decimal number or \"all\", found \"ALL\"" },
	{ "{root}/x/{dep}/{root}/x/E.1.0.1.2.2147483648", "field 6 (cpu)" },
	{ "{root}/x/{dep}/{root}/x/E\x01.1.0.1.2.3", "field 1 (event name): unexpected byte 0x01" },
	{ "{root}/x/{root}/x/E.1.0.all.all.all", "expected {dep} after the application, found {root}" },
	{ "{root}/x/E.1.0.all.all.all", "expected {dep} after the application, found end of the directory part" },
	{ "{root}/{dep}/{root}/x/E.1.0.all.all.all",
	  "application: {root} must be followed by the path components, found {dep}" },
	{ "{kern}/{dep}/{root}/x/E.1.0.all.all.all",
	  "application: {kern} must be followed by a kernel image name, found {dep}" },
	{ "{kern}/a/b/{dep}/{root}/x/E.1.0.all.all.all",
	  "expected {dep} after the application, found a path component" },
	{ "{root}/x/{dep}/E.1.0.all.all.all",
	  "image: expected {root}, {kern} or {anon:NAME}, found end of name" },
	{ "{root}/x/{dep}/plain/E.1.0.all.all.all", "image: expected {root}, {kern} or {anon:NAME}, found \"plain\"" },
	{ "{root}/x/{dep}/{root}/y/{dep}/E.1.0.all.all.all",
	  "expected {cg} or the event part after the image, found {dep}" },
	{ "{root}/x/{dep}/{root}/y/{cg}/{root}/z/{cg}/E.1.0.all.all.all",
	  "expected the event part after the callee image, found {cg}" },
	{ "{root}/x/{dep}/{root}/y/{cg}/E.1.0.all.all.all", "callee image: expected {root}, {kern} or {anon:NAME}, found end of name" },
	{ "{root}/x/{dep}/{anonx}/1.0x1.0x2/E.1.0.all.all.all", "image: expected {anon:NAME}, found \"{anonx}\"" },
	{ "{root}/x/{dep}/{anon:a}/E.1.0.all.all.all",
	  "image: {anon:a} must be followed by TGID.0xSTART.0xEND, found end of the directory part" },
	{ "{root}/x/{dep}/{anon:a}/1.0x1/E.1.0.all.all.all",
	  "image: anon range: expected TGID.0xSTART.0xEND, found \"1.0x1\"" },
	{ "{root}/x/{dep}/{anon:a}/1.1.0x2/E.1.0.all.all.all", "anon range: expected TGID.0xSTART.0xEND, found \"1.1.0x2\"" },
	{ "{root}/x/{dep}/{anon:a}/1.0x1.0xg/E.1.0.all.all.all", "anon range" },
	{ "{root}/x/{dep}/{anon:a}/1.0x1.0x12345678901234567/E.1.0.all.all.all", "anon range" },
	{ "{root}/x/{dep}/{anon:a}/-1.0x1.0x2/E.1.0.all.all.all", "anon range" },
	{ "{root}/x%zz/{dep}/{root}/x/E.1.0.all.all.all",
	  "application: bad escape in component \"x%zz\": expected %XX (two hex digits, not 00)" },
	{ "{root}/x/{dep}/{root}/a%00/E.1.0.all.all.all", "image: bad escape in component \"a%00\"" },
	{ "{root}/x/{dep}/{root}/y/{cg}/{kern}/a%2Fb/E.1.0.all.all.all",
	  "callee image: {kern} name must be non-empty without '/', found \"a/b\"" },
	{ "{root}/x/{dep}/{kern}/%/E.1.0.all.all.all", "image: {kern} name must be non-empty without '/', found \"\"" },
	{ "{root}/a%2F..%2Fb/{dep}/{root}/x/E.1.0.all.all.all",
	  "application: path component \"a%2F..%2Fb\" decodes to a '/'" },
	{ "{root}/x/{dep}/%+x/{root}/x/E.1.0.all.all.all",
	  "expected {dep} after the application, found a marker split by a continuation chunk" },
};

static void test_parse_errors(void **state)
{
	static struct op_parsed_name pn;
	char err[300];
	(void)state;

	for (size_t i = 0; i < sizeof(perrs) / sizeof(perrs[0]); i++) {
		int rc = op_parse_name(perrs[i].name, &pn, err, sizeof(err));

		if (rc != -EINVAL)
			fail_msg("case %zu \"%s\": rc %d (%s)", i, perrs[i].name, rc, err);
		if (strncmp(err, "sample file name: ", 18) || !strstr(err, perrs[i].msg))
			fail_msg("case %zu \"%s\": error \"%s\" lacks \"%s\"", i, perrs[i].name, err,
				 perrs[i].msg);
	}
	/* a small error buffer is still NUL-terminated */
	assert_int_equal(op_parse_name("x", &pn, err, 8), -EINVAL);
	assert_int_equal(strlen(err), 7);
	/* no error buffer at all */
	assert_int_equal(op_parse_name("x", &pn, NULL, 0), -EINVAL);
	/* control bytes are shown escaped in messages */
	assert_int_equal(op_parse_name("{root}/x/{dep}/bad\ncomp/E.1.0.all.all.all", &pn, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "\"bad\\x0acomp\""));
	assert_null(strchr(err, '\n'));
}

/* --- issue 20: per-process split key --- */
/* {cgroup}/KEY.../ before the name: built, parsed back, hostile keys kept below it */
static void test_split(void **state)
{
	static const char *const keys[] = {
		"/system.slice/foo.service", "/", "/{root}/{cgroup}/../x y/%/.", "/a\\/{dep}/{anon:x}",
	};
	static char buf[PATH_MAX], full[PATH_MAX + 64];
	static struct op_parsed_name pn;
	struct op_mangle_args a = {
		.app = U("/usr/bin/x"),
		.image = U("/usr/lib/{cgroup}/libc.so"),
		.event = "E",
		.count = 1,
		.tgid = 7,
		.tid = 8,
		.cpu = -1,
		.separate = OP_SEP_LIB | OP_SEP_THREAD | OP_SEP_CGROUP,
	};
	char err[256];

	(void)state;
	a.split = keys[0];
	assert_true(op_mangle(&a, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "{cgroup}/system.slice/foo.service/{root}/usr/bin/x/{dep}/{root}/"
				 "usr/lib/%7Bcgroup}/libc.so/E.1.0.7.8.all");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		a.split = keys[i];
		assert_true(op_mangle(&a, buf, sizeof(buf)) > 0);
		assert_safe(buf);
		assert_true(!strncmp(buf, "{cgroup}/", 9));
		assert_int_equal(op_parse_name(buf, &pn, err, sizeof(err)), 0);
		assert_non_null(pn.split);
		assert_string_equal(pn.split, keys[i]);
		assert_string_equal(pn.app.path, "/usr/bin/x");
		assert_string_equal(pn.image.path, "/usr/lib/{cgroup}/libc.so");
		assert_int_equal(pn.tgid, 7);
		/* below a session directory, even one with a {cgroup} of its own */
		snprintf(full, sizeof(full), "/srv/{cgroup}/samples/current/%s", buf);
		assert_int_equal(op_parse_name(full, &pn, err, sizeof(err)), 0);
		assert_string_equal(pn.split, keys[i]);
	}
	/* the root cgroup: the marker alone */
	a.split = "/";
	assert_true(op_mangle(&a, buf, sizeof(buf)) > 0);
	assert_true(!strncmp(buf, "{cgroup}/{root}/usr/bin/x/", 26));
	/* no key: the plain name, no split parsed */
	a.split = NULL;
	assert_true(op_mangle(&a, buf, sizeof(buf)) > 0);
	assert_true(!strncmp(buf, "{root}/", 7));
	assert_int_equal(op_parse_name(buf, &pn, err, sizeof(err)), 0);
	assert_null(pn.split);
	/* a relative key is refused */
	a.split = "system.slice";
	assert_int_equal(op_mangle(&a, buf, sizeof(buf)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_oprofile_forms),
		cmocka_unit_test(test_escape_table),
		cmocka_unit_test(test_unescape_errors),
		cmocka_unit_test(test_long_components),
		cmocka_unit_test(test_mangle_errors),
		cmocka_unit_test(test_round_trip_corpus),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_on_disk),
		cmocka_unit_test(test_parse_oprofile_strings),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_split), /* issue 20 */
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
