/*
 * opannotate.c - command line of opannotate (OProfile 1.x's options) and
 * what its two outputs share: the count columns, the header comment, the
 * source files located through --base-dirs / --search-dirs and read once.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opannotate.h"

#define ANN_COUNT_WIDTH 6
#define ANN_PERCENT_WIDTH 7
/* a source file larger than this is not annotated (a generated monster, or not a text) */
#define ANN_MAX_SOURCE (256u << 20)

static void ann_usage(FILE *f)
{
	fputs("usage: opannotate [options] [profile specification]\n"
	      "  -s, --source               annotated source files, samples per line\n"
	      "  -a, --assembly             annotated disassembly, samples per instruction\n"
	      "                             (with --source: the source lines interleaved)\n"
	      "  -o, --output-dir=DIR       write one annotated file per source file below DIR\n"
	      "  -d, --search-dirs=DIRS     comma list of directories to look for sources in\n"
	      "  -b, --base-dirs=DIRS       comma list of path prefixes stripped from the\n"
	      "                             sources' names before --search-dirs\n"
	      "      --include-file=FILES   only these source files (comma list of globs)\n"
	      "      --exclude-file=FILES   leave out these source files (comma list of globs)\n"
	      "  -i, --include-symbols=L    only these symbols (comma list)\n"
	      "  -e, --exclude-symbols=L    leave out these symbols (comma list)\n"
	      "  -D, --demangle=MODE        none|smart|normal (default normal)\n"
	      "  -t, --threshold=N          leave out files (--source) or symbols (--assembly)\n"
	      "                             with less than N percent of the samples\n"
	      "  -x, --exclude-dependent    leave out libraries, modules and kernel of applications\n"
	      "  -m, --merge=LIST           lib,cpu,tid,tgid,unitmask,all\n"
	      "  -p, --image-path=DIRS      comma list of directories to look for binaries in\n"
	      "  -R, --root=DIR             look for every binary below DIR\n"
	      "      --vmlinux=FILE         the kernel's symbols, code and lines from the ELF\n"
	      "                             image FILE instead of the kallsyms snapshot\n"
	      "      --session-dir=DIR      session directory (default ./oprofile_data if\n"
	      "                             present, else /var/lib/oprofile)\n"
	      "  -v, --version              the package version\n"
	      "  -h, --help                 this help\n"
	      "  -?, --usage                a short usage line\n"
	      "profile specification: session:, session-exclude:, image:, image-exclude:,\n"
	      "lib-image:, event:, count:, unit-mask:, tid:, tgid:, cpu: (comma lists, globs),\n"
	      "or image names (as opreport).\n",
	      f);
}

static void ann_short_usage(FILE *f)
{
	fputs("usage: opannotate [-s|--source] [-a|--assembly] [-o DIR] [-d DIRS] [-b DIRS]\n"
	      "        [--include-file=FILES] [--exclude-file=FILES] [-i SYMS] [-e SYMS]\n"
	      "        [-D none|smart|normal] [-t PERCENT] [-x] [-m LIST] [-p DIRS] [-R DIR]\n"
	      "        [--vmlinux=FILE] [--session-dir=DIR] [-v] [-h] [-?]\n"
	      "        [profile specification]\n",
	      f);
}

/* ------------------------------------------------------------ columns */

static void ann_percent(char *buf, size_t len, uint64_t n, uint64_t d)
{
	double v = d ? 100.0 * (double)n / (double)d : 0.0;

	if (!n)
		snprintf(buf, len, "%*s", ANN_PERCENT_WIDTH, "0");
	else
		snprintf(buf, len, v >= 99.99995 ? "%*.3f" : "%*.4f", ANN_PERCENT_WIDTH, v);
}

void ann_columns(FILE *f, const struct ann *a, const uint64_t *count)
{
	char b[32];

	for (size_t c = 0; c < a->p.ncls; c++) {
		ann_percent(b, sizeof(b), count[c], a->p.total[c]);
		fprintf(f, "%*" PRIu64 " %s", ANN_COUNT_WIDTH, count[c], b);
	}
}

void ann_counts(FILE *f, const struct ann *a, const uint64_t *count)
{
	ann_columns(f, a, count);
	for (size_t c = 1; c < a->p.ncls; c++)
		fputs("  ", f);
	fputs(" :", f);
}

void ann_fill(FILE *f, const struct ann *a)
{
	size_t w = a->p.ncls * (ANN_COUNT_WIDTH + 1 + ANN_PERCENT_WIDTH);

	if (a->p.ncls > 1)
		w += 2 * (a->p.ncls - 1);
	fprintf(f, "%*s :", (int)w, "");
}

void ann_sym_note(FILE *f, const struct ann *a, const char *name, bool inlined,
		  const uint64_t *count)
{
	fputs(" /* ", f);
	txt_put(f, name);
	fputs(inlined ? " (inlined) total: " : " total: ", f);
	ann_columns(f, a, count);
	fputs(" */", f);
}

bool ann_above_threshold(const struct ann *a, const uint64_t *count)
{
	if (a->o.threshold <= 0)
		return true;
	for (size_t c = 0; c < a->p.ncls; c++)
		if (a->p.total[c] &&
		    100.0 * (double)count[c] / (double)a->p.total[c] >= a->o.threshold)
			return true;
	return false;
}

void ann_info(FILE *f, const struct ann *a)
{
	char *hdr = NULL, *line, *save = NULL;
	size_t hlen = 0;
	FILE *m;

	fputs("/* \n * Command line: ", f);
	txt_put(f, a->cmdline);
	fputs("\n * \n * Interpretation of command line:\n", f);
	if (!a->assembly) {
		fputs(" * Output annotated source file with samples\n", f);
		if (a->o.threshold > 0)
			fprintf(f, " * Output files where samples count reach %g%% of the samples\n",
				a->o.threshold);
		else
			fputs(" * Output all files\n", f);
	} else {
		fprintf(f, " * Output annotated assembly listing with samples%s\n",
			a->source ? " and source lines" : "");
	}
	fputs(" * \n", f);
	/* opreport's header lines, each made a comment line */
	m = open_memstream(&hdr, &hlen);
	if (m) {
		out_text_header(m, &a->p);
		fclose(m);
	}
	for (line = hdr ? strtok_r(hdr, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save))
		fprintf(f, " * %s\n", line);
	free(hdr);
	fputs(" */\n", f);
}

/* ------------------------------------------------------------ sources */

bool ann_file_selected(const struct ann *a, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < a->exclude_file.n; i++)
		if (!fnmatch(a->exclude_file.v[i], path, 0) ||
		    !fnmatch(a->exclude_file.v[i], base, 0))
			return false;
	if (!a->include_file.n)
		return true;
	for (size_t i = 0; i < a->include_file.n; i++)
		if (!fnmatch(a->include_file.v[i], path, 0) ||
		    !fnmatch(a->include_file.v[i], base, 0))
			return true;
	return false;
}

/* a readable regular file, its canonical name in *@out (malloc'd) */
static bool ann_readable(const char *path, char **out)
{
	struct stat st;
	char *r;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || access(path, R_OK))
		return false;
	r = realpath(path, NULL);
	*out = r ? r : strdup(path);
	return *out != NULL;
}

/*
 * As OProfile: an absolute name loses the first --base-dirs prefix it has,
 * then each --search-dirs directory is tried; else the name as it is.
 */
/*
 * "/a/b/../c/./d" -> "/a/c/d" in place, lexically (the line table of a
 * VPATH build names "BUILDDIR/../src/x.c", which a --base-dirs prefix
 * given as the real source directory must still match).
 */
static void ann_normalize(char *path)
{
	char *out = path, *in = path;

	while (*in) {
		char *end;
		size_t len;

		while (*in == '/')
			in++;
		end = strchrnul(in, '/');
		len = (size_t)(end - in);
		if (len == 1 && in[0] == '.') {
			/* nothing */
		} else if (len == 2 && in[0] == '.' && in[1] == '.') {
			while (out > path && *--out != '/')
				;
		} else if (len) {
			*out++ = '/';
			memmove(out, in, len);
			out += len;
		}
		in = end;
	}
	if (out == path)
		*out++ = '/';
	*out = 0;
}

static char *ann_locate(const struct ann *a, const char *dwarf_name)
{
	char *name = strdup(dwarf_name);
	const char *rel;
	char *found = NULL;

	if (!name)
		return NULL;
	if (name[0] == '/')
		ann_normalize(name);
	rel = name;
	if (name[0] == '/') {
		for (size_t i = 0; i < a->base_dirs.n; i++) {
			char *b = realpath(a->base_dirs.v[i], NULL);
			size_t bl;

			if (!b)
				continue;
			bl = strlen(b);

			while (bl > 1 && b[bl - 1] == '/')
				bl--;
			if (!strncmp(name, b, bl) && (name[bl] == '/' || !name[bl])) {
				rel = name + bl;
				free(b);
				break;
			}
			free(b);
		}
	}
	for (size_t i = 0; i < a->search_dirs.n && !found; i++) {
		char *cand;

		if (asprintf(&cand, "%s/%s", a->search_dirs.v[i], rel) < 0) {
			free(name);
			return NULL;
		}
		ann_readable(cand, &found);
		free(cand);
	}
	/* not relocated: the name as the line table has it (relative: to the cwd) */
	if (!found && !ann_readable(dwarf_name, &found)) {
		found = name;
		name = NULL;
	}
	free(name);
	return found;
}

static int ann_read_text(struct ann_text *t)
{
	int fd = open(t->path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	size_t len = 0, n = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > ANN_MAX_SOURCE) {
		close(fd);
		return -EINVAL;
	}
	t->data = malloc((size_t)st.st_size + 1);
	if (!t->data) {
		close(fd);
		return -ENOMEM;
	}
	while (len < (size_t)st.st_size) {
		ssize_t r = read(fd, t->data + len, (size_t)st.st_size - len);

		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	t->data[len] = 0;
	for (size_t i = 0; i < len; i++)
		n += t->data[i] == '\n';
	if (len && t->data[len - 1] != '\n')
		n++;
	t->line_off = malloc((n + 1) * sizeof(*t->line_off));
	if (!t->line_off)
		return -ENOMEM;
	t->nlines = 0;
	for (size_t i = 0; i < len && t->nlines < n; t->nlines++) {
		t->line_off[t->nlines] = i;
		while (i < len && t->data[i] != '\n')
			i++;
		t->data[i++] = 0; /* the NUL past a last line without '\n' is data[len] */
	}
	return 0;
}

struct ann_text *ann_text_get(struct ann *a, const char *dwarf_name)
{
	struct ann_text *t, **nv;
	int ret;

	for (size_t i = 0; i < a->ntexts; i++)
		if (!strcmp(a->texts[i]->dwarf_name, dwarf_name))
			return a->texts[i];
	nv = realloc(a->texts, (a->ntexts + 1) * sizeof(*nv));
	if (!nv)
		return NULL;
	a->texts = nv;
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->dwarf_name = strdup(dwarf_name);
	t->path = ann_locate(a, dwarf_name);
	if (!t->dwarf_name || !t->path) {
		free(t->dwarf_name);
		free(t->path);
		free(t);
		return NULL;
	}
	a->texts[a->ntexts++] = t;
	ret = ann_read_text(t);
	if (ret) {
		t->missing = true;
		t->nlines = 0;
		if (ret != -ENOMEM && ann_file_selected(a, t->path))
			ann_warn(a,
				 "source file %s: cannot read it (%s); its lines are shown "
				 "without their text",
				 t->path,
				 ret == -EINVAL ? "not a regular file of at most 256 MiB" :
						  strerror(-ret));
	}
	return t;
}

static void ann_free(struct ann *a)
{
	for (size_t i = 0; i < a->ntexts; i++) {
		free(a->texts[i]->dwarf_name);
		free(a->texts[i]->path);
		free(a->texts[i]->data);
		free(a->texts[i]->line_off);
		free(a->texts[i]);
	}
	free(a->texts);
	rsym_free(&a->rows);
	rs_free(&a->p);
	spec_free(&a->o.spec);
	strlist_free(&a->o.include_syms);
	strlist_free(&a->o.exclude_syms);
	strlist_free(&a->o.image_path);
	strlist_free(&a->search_dirs);
	strlist_free(&a->base_dirs);
	strlist_free(&a->include_file);
	strlist_free(&a->exclude_file);
	free(a->output_dir);
	free(a->cmdline);
}

/* ------------------------------------------------------------ options */

/* --output-dir: created if needed, made absolute; "/" is refused (as OProfile) */
static int ann_set_output_dir(struct ann *a, const char *dir)
{
	char *copy = strdup(dir);

	if (!copy)
		return -ENOMEM;
	for (char *s = copy + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(copy, 0777) && errno != EEXIST) {
			ann_error("--output-dir=%s: cannot create %s: %s", dir, copy,
				  strerror(errno));
			free(copy);
			return -errno;
		}
		*s = '/';
	}
	if (mkdir(copy, 0777) && errno != EEXIST) {
		ann_error("--output-dir=%s: cannot create it: %s", dir, strerror(errno));
		free(copy);
		return -EINVAL;
	}
	free(copy);
	a->output_dir = realpath(dir, NULL);
	if (!a->output_dir) {
		ann_error("--output-dir=%s: %s", dir, strerror(errno));
		return -EINVAL;
	}
	if (!strcmp(a->output_dir, "/")) {
		ann_error("--output-dir=%s: the output would overwrite the source files", dir);
		return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_SESSION = 256, OPT_INCLUDE_FILE, OPT_EXCLUDE_FILE, OPT_USAGE, OPT_VMLINUX };
	static const struct option longopts[] = {
		{ "source", no_argument, NULL, 's' },
		{ "assembly", no_argument, NULL, 'a' },
		{ "output-dir", required_argument, NULL, 'o' },
		{ "search-dirs", required_argument, NULL, 'd' },
		{ "base-dirs", required_argument, NULL, 'b' },
		{ "include-file", required_argument, NULL, OPT_INCLUDE_FILE },
		{ "exclude-file", required_argument, NULL, OPT_EXCLUDE_FILE },
		{ "include-symbols", required_argument, NULL, 'i' },
		{ "exclude-symbols", required_argument, NULL, 'e' },
		{ "demangle", required_argument, NULL, 'D' },
		{ "threshold", required_argument, NULL, 't' },
		{ "exclude-dependent", no_argument, NULL, 'x' },
		{ "merge", required_argument, NULL, 'm' },
		{ "image-path", required_argument, NULL, 'p' },
		{ "root", required_argument, NULL, 'R' },
		{ "vmlinux", required_argument, NULL, OPT_VMLINUX },
		{ "session-dir", required_argument, NULL, OPT_SESSION },
		{ "version", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "usage", no_argument, NULL, OPT_USAGE },
		{ NULL, 0, NULL, 0 },
	};
	struct ann a = { .o = { .demangle = DEMANGLE_NORMAL, .sort = SORT_SAMPLE } };
	const char *output_dir = NULL;
	char err[2048] = "", cwd[PATH_MAX];
	int c, ret = 1;

	a.cmdline = txt_join_args("opannotate", argc, argv);
	a.o.cmdline = a.cmdline;
	if (!a.cmdline) {
		fprintf(stderr, "opannotate error: out of memory\n");
		return 1;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":sao:d:b:i:e:D:t:xm:p:R:vh?", longopts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 's':
			a.source = true;
			break;
		case 'a':
			a.assembly = true;
			break;
		case 'o':
			output_dir = optarg;
			break;
		case 'd':
			if (strlist_add_csv(&a.search_dirs, optarg))
				goto out;
			break;
		case 'b':
			if (strlist_add_csv(&a.base_dirs, optarg))
				goto out;
			break;
		case OPT_INCLUDE_FILE:
			if (strlist_add_csv(&a.include_file, optarg))
				goto out;
			break;
		case OPT_EXCLUDE_FILE:
			if (strlist_add_csv(&a.exclude_file, optarg))
				goto out;
			break;
		case 'i':
			if (strlist_add_csv(&a.o.include_syms, optarg))
				goto out;
			break;
		case 'e':
			if (strlist_add_csv(&a.o.exclude_syms, optarg))
				goto out;
			break;
		case 'D':
			if (spec_parse_demangle(optarg, &a.o.demangle)) {
				ann_error("--demangle=%s: expected none, smart or normal", optarg);
				goto out;
			}
			break;
		case 't':
			errno = 0;
			a.o.threshold = strtod(optarg, &end);
			if (errno || *end || end == optarg || a.o.threshold < 0 ||
			    a.o.threshold > 100) {
				ann_error("--threshold=%s: expected a percentage between 0 and 100",
					  optarg);
				goto out;
			}
			break;
		case 'x':
			a.o.exclude_dependent = true;
			break;
		case 'm':
			if (spec_parse_merge(optarg, &a.o.merge, err, sizeof(err))) {
				ann_error("%s", err[0] ? err : "out of memory");
				goto out;
			}
			break;
		case 'p':
			if (strlist_add_csv(&a.o.image_path, optarg))
				goto out;
			break;
		case 'R':
			a.o.root = optarg;
			break;
		case OPT_VMLINUX:
			if (opbfd_check_vmlinux(optarg, err, sizeof(err))) {
				ann_error("--vmlinux: %s", err);
				goto out;
			}
			a.o.vmlinux = optarg;
			break;
		case OPT_SESSION:
			a.o.session_dir = optarg;
			break;
		case 'v':
			printf("opannotate " PACKAGE_VERSION "\n");
			ret = 0;
			goto out;
		case 'h':
			ann_usage(stdout);
			ret = 0;
			goto out;
		case '?':
			if (optopt && optopt != '?') {
				ann_error("unknown option %s", argv[optind - 1]);
				ann_short_usage(stderr);
				goto out;
			}
			if (!optopt && argv[optind - 1][1] == '-') {
				ann_error("unknown option %s", argv[optind - 1]);
				ann_short_usage(stderr);
				goto out;
			}
			/* -? */
			__attribute__((fallthrough));
		case OPT_USAGE:
			ann_short_usage(stdout);
			ret = 0;
			goto out;
		case ':':
			ann_error("option %s needs an argument", argv[optind - 1]);
			goto out;
		default:
			ann_short_usage(stderr);
			goto out;
		}
	}
	if (!a.source && !a.assembly) {
		ann_error("give --source (-s), --assembly (-a) or both");
		goto out;
	}
	if (output_dir && a.assembly) {
		ann_error("--output-dir=%s is meaningless with --assembly (it writes annotated "
			  "source files)",
			  output_dir);
		goto out;
	}
	if (a.base_dirs.n && !a.search_dirs.n) {
		ann_error("--base-dirs is useless unless --search-dirs says where the sources are");
		goto out;
	}
	for (int i = optind; i < argc; i++) {
		if (spec_add(&a.o.spec, argv[i], cwd, err, sizeof(err))) {
			ann_error("%s", err);
			goto out;
		}
	}
	if (output_dir && ann_set_output_dir(&a, output_dir))
		goto out;
	/* per-address samples and source lines of every symbol */
	a.o.symbols = a.o.details = a.o.debug_info = true;
	if (rs_find_session(a.o.session_dir, &a.p.session_dir, err, sizeof(err)) ||
	    rs_load(&a.p, &a.o, err, sizeof(err))) {
		ann_error("%s", err[0] ? err : "out of memory");
		goto out;
	}
	rs_warn_stats(&a.p);
	if (rsym_build(&a.p, &a.o, &a.rows)) {
		ann_error("out of memory");
		goto out;
	}
	rsym_sort(&a.rows, &a.o);
	if ((a.assembly ? ann_asm(stdout, &a) : ann_source(stdout, &a)))
		goto out;
	if (fflush(stdout) || ferror(stdout)) {
		ann_error("writing the output failed: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	ann_free(&a);
	return ret;
}
