/*
 * fuzz_names.c - fuzz target for lib/op_mangle and lib/op_events. The first
 * input byte picks the mode: 'P' path bytes -> op_mangle (the name must stay
 * below samples/current and parse back equal), 'N' bytes -> op_parse_name,
 * 'E' "unit_masks\n--\nevents" -> op_events_load + a few specs.
 * libFuzzer build (clang):
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DOP_LIBFUZZER -D_GNU_SOURCE \
 *     -Ilib lib/op_mangle.c lib/op_events.c tests/fuzz/fuzz_names.c -o fuzz_names
 * Otherwise a TAP regression runner over tests/fuzz/corpus/names
 * (make check; the corpus walk is in corpus_runner.c).
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corpus_runner.h"
#include "op_events.h"
#include "op_mangle.h"

static char tmpdir[256];
static const char *bad; /* what went wrong in the last input */

static void cleanup(void)
{
	char p[300];

	if (!tmpdir[0])
		return;
	snprintf(p, sizeof(p), "%s/f/m/events", tmpdir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/f/m/unit_masks", tmpdir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/f/m", tmpdir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/f", tmpdir);
	rmdir(p);
	rmdir(tmpdir);
	tmpdir[0] = '\0';
}

static int init_tmp(void)
{
	const char *t = getenv("TMPDIR");
	char p[300];

	if (tmpdir[0])
		return 0;
	snprintf(tmpdir, sizeof(tmpdir), "%s/fuzz_names.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmpdir)) {
		tmpdir[0] = '\0';
		return -errno;
	}
	snprintf(p, sizeof(p), "%s/f", tmpdir);
	mkdir(p, 0700);
	snprintf(p, sizeof(p), "%s/f/m", tmpdir);
	mkdir(p, 0700);
	atexit(cleanup);
	return 0;
}

static bool name_safe(const char *name)
{
	const char *p = name;

	if (strlen(name) >= PATH_MAX || name[0] == '/')
		return false;
	for (;;) {
		const char *sl = strchr(p, '/');
		size_t n = sl ? (size_t)(sl - p) : strlen(p);

		if (n == 0 || n > 255 || (n == 1 && p[0] == '.') || (n == 2 && !memcmp(p, "..", 2)))
			return false;
		for (size_t i = 0; i < n; i++)
			if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f)
				return false;
		if (!sl)
			return true;
		p = sl + 1;
	}
}

static void fuzz_path(const uint8_t *d, size_t n)
{
	static char path[PATH_MAX + 2], name[PATH_MAX];
	static struct op_parsed_name pn;
	char err[256];
	unsigned sep = n ? d[0] & 15 : 0;
	int kind = n > 1 ? d[1] % 3 : 0;
	struct op_mangle_args a = { .event = "E", .count = 1, .tgid = 1, .tid = 2, .cpu = 3 };

	if (n > 2) {
		d += 2;
		n -= 2;
	}
	if (n > PATH_MAX)
		n = PATH_MAX;
	path[0] = '/';
	for (size_t i = 0; i < n; i++)
		path[i + 1] = d[i] ? (char)d[i] : 'x';
	path[n + 1] = '\0';
	a.separate = sep;
	a.app = (struct op_image_name){ .kind = OP_IMAGE_USER, .path = path };
	if (kind == 0)
		a.image = a.app;
	else if (kind == 1)
		a.image = (struct op_image_name){ .kind = OP_IMAGE_KERNEL,
						  .path = strrchr(path, '/')[1] ? strrchr(path, '/') + 1 : "k" };
	else
		a.image = (struct op_image_name){ .kind = OP_IMAGE_ANON, .path = path + 1, .tgid = 5,
						  .start = 16, .end = 31 };
	if (op_mangle(&a, name, sizeof(name)) < 0)
		return;
	if (!name_safe(name)) {
		bad = "built name leaves samples/current";
		return;
	}
	if (op_parse_name(name, &pn, err, sizeof(err))) {
		bad = "built name does not parse";
		return;
	}
	if (strcmp(pn.image.path, kind == 2 && !path[1] ? "anon" : a.image.path))
		bad = "parsed image path differs";
}

static void fuzz_name(const uint8_t *d, size_t n)
{
	static char name[3 * 4096 + 8];
	static struct op_parsed_name pn;
	char err[256];

	if (n >= sizeof(name))
		n = sizeof(name) - 1;
	memcpy(name, d, n);
	name[n] = '\0';
	if (op_parse_name(name, &pn, err, sizeof(err)) && !err[0])
		bad = "parse error without a message";
}

static void write_part(const char *file, const uint8_t *d, size_t n)
{
	char p[300];
	FILE *f;

	snprintf(p, sizeof(p), "%s/f/m/%s", tmpdir, file);
	f = fopen(p, "w");
	if (!f)
		return;
	fwrite(d, 1, n, f);
	fclose(f);
}

static void fuzz_events(const uint8_t *d, size_t n)
{
	static const char *const specs[] = { "A:1", "A:100000:0x1", "B:10:x:0:1", "A:1,B:2,C:3:0x3" };
	const uint8_t *sep = memmem(d, n, "\n--\n", 4);
	struct op_events c;
	struct op_event_spec s[8];
	char err[512];
	size_t nr;

	if (init_tmp())
		return;
	if (sep) {
		write_part("unit_masks", d, (size_t)(sep - d));
		write_part("events", sep + 4, n - (size_t)(sep - d) - 4);
	} else {
		write_part("unit_masks", (const uint8_t *)"", 0);
		write_part("events", d, n);
	}
	if (op_events_load(&c, tmpdir, "f/m", 4, 0, err, sizeof(err))) {
		if (!err[0])
			bad = "load error without a message";
		return;
	}
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		op_parse_event_list(&c, specs[i], s, 8, &nr, err, sizeof(err));
	for (size_t i = 0; i < c.nr_events; i++) {
		char spec[128];

		snprintf(spec, sizeof(spec), "%s:%llu", c.events[i].name,
			 (unsigned long long)c.events[i].minimum);
		op_parse_event_spec(&c, spec, s, err, sizeof(err));
	}
	op_events_free(&c);
}

/* run one input; returns what went wrong or NULL */
static const char *run(const uint8_t *data, size_t size)
{
	bad = NULL;
	if (size == 0)
		return NULL;
	switch (data[0]) {
	case 'P':
		fuzz_path(data + 1, size - 1);
		break;
	case 'N':
		fuzz_name(data + 1, size - 1);
		break;
	case 'E':
		fuzz_events(data + 1, size - 1);
		break;
	default:
		break;
	}
	return bad;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (run(data, size)) {
		fprintf(stderr, "fuzz_names: %s\n", bad);
		abort();
	}
	return 0;
}

#ifndef OP_LIBFUZZER
static const char *run_one(const char *name, const uint8_t *data, size_t size, char *note,
			   size_t note_len)
{
	(void)name;
	(void)note;
	(void)note_len;
	return run(data, size);
}

int main(int argc, char **argv)
{
	return corpus_main(argc, argv, "names", run_one);
}
#endif /* !OP_LIBFUZZER */
