/*
 * opreport.c - command line of opreport: options, then the pipeline
 * session -> matching sample files -> classes -> inverted profile ->
 * symbols -> sorted, formatted output.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opreport.h"
#include "opreport_callgraph.h"

static void usage(FILE *f)
{
	fputs("usage: opreport [options] [profile specification]\n"
	      "       opreport [options] [shared spec] { first spec } { second spec }\n"
	      "                (differential: diff % of each symbol's share, +++ new, --- gone)\n"
	      "  --session-dir=DIR        session directory (default ./oprofile_data if present,\n"
	      "                           else /var/lib/oprofile)\n"
	      "  -l, --symbols            list symbols\n"
	      "  -d, --details            per-address details for every symbol\n"
	      "  -g, --debug-info         source file and line of each symbol\n"
	      "  -w, --show-address       show the vma of each symbol\n"
	      "  -f, --long-filenames     full paths of images (default: base names)\n"
	      "  -%, --global-percent     percentages relative to the whole profile\n"
	      "  -a, --accumulated        accumulated samples and percentages\n"
	      "  -r, --reverse-sort       reverse the sort order\n"
	      "  -x, --exclude-dependent  leave out libraries, modules and kernel of applications\n"
	      "  -t, --threshold=N        leave out entries below N percent\n"
	      "  -s, --sort=KEYS          sample|symbol|image|vma|app-name\n"
	      "  -e, --exclude-symbols=L  comma-separated symbols to leave out\n"
	      "  -i, --include-symbols=L  only these symbols\n"
	      "  -D, --demangle=MODE      none|smart|normal (default normal)\n"
	      "  -m, --merge=LIST         lib,cpu,tid,tgid,unitmask,cgroup,all\n"
	      "  -X, --xml                XML output (OProfile's opreport schema)\n"
	      "      --json               JSON output (schema: tools/opreport/opreport-json.md)\n"
	      "  -p, --image-path=DIRS    comma list of directories to look for binaries in\n"
	      "  -R, --root=DIR           look for every binary below DIR\n"
	      "      --vmlinux=FILE       the kernel's symbols from the ELF image FILE\n"
	      "                           instead of the session's kallsyms snapshot\n"
	      "  -o, --output-file=FILE   write the report to FILE\n"
	      "  -c, --callgraph          call graph: callers, self/inclusive samples, callees\n"
	      "  --callgraph-output=folded  one \"main;a;b N\" line per stack (flamegraph.pl)\n"
	      "  --flamegraph=FILE.svg    write a flame graph of the whole stacks\n"
	      "      --version            the package version\n"
	      "  -h, -?, --help, --usage  this help\n"
	      "profile specification: session:, session-exclude:, image:, image-exclude:,\n"
	      "lib-image:, event:, count:, unit-mask:, tid:, tgid:, cpu: (comma lists, globs),\n"
	      "or image names.\n"
	      "Anonymous (JIT) regions are named from /tmp/perf-PID.map ($OPREPORT_PERF_MAP_DIR\n"
	      "instead of /tmp when set).\n",
	      f);
}

static int parse_sort(const char *arg, struct rpt_opts *o)
{
	static const char *const names[] = { "sample", "symbol", "image", "vma", "app-name" };
	char *dup = strdup(arg), *save = NULL, *tok;
	int ret = 0;

	if (!dup)
		return -ENOMEM;
	o->nsort_keys = 0;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int i;

		for (i = 0; i < 5 && strcmp(tok, names[i]); i++)
			;
		if (i == 5) {
			txt_error("--sort: unknown key \"%s\" (expected a comma list of sample, "
				  "symbol, image, vma, app-name)",
				  tok);
			ret = -EINVAL;
			break;
		}
		if (o->nsort_keys < 5)
			o->sort_keys[o->nsort_keys++] = (enum rpt_sort)i;
	}
	if (!ret && !o->nsort_keys) {
		fprintf(stderr, "opreport error: --sort: no key given\n");
		ret = -EINVAL;
	}
	if (!ret)
		o->sort = o->sort_keys[0];
	free(dup);
	return ret;
}

/* OProfile's limits of a differential report, and ours (no call graph, details, accumulation) */
static int check_diff_opts(const struct rpt_opts *o, const struct cgr_opts *cgo)
{
	const char *bad = cgo->blocks     ? "-c/--callgraph" :
			  cgo->folded     ? "--callgraph-output=folded" :
			  cgo->flamegraph ? "--flamegraph" :
			  o->details      ? "-d/--details" :
			  o->accumulated  ? "-a/--accumulated" :
					    NULL;

	if (!bad)
		return 0;
	txt_error("differential profiles ({ first } { second }) are incompatible with %s", bad);
	return -EINVAL;
}

/* Load both sides of "{ first } { second }" from @session_dir and print the report. */
static int diff_main(const struct rpt_opts *o, struct rpt_opts side_opts[2],
		     const char *session_dir, const char *outfile)
{
	static const char *const names[2] = { "first", "second" };
	struct rpt_profile p[2] = { { 0 }, { 0 } };
	struct rpt_rows rows[2] = { { 0 }, { 0 } };
	char err[2048] = "";
	FILE *out = stdout;
	int ret = 1;

	for (int s = 0; s < 2; s++) {
		p[s].session_dir = strdup(session_dir);
		if (!p[s].session_dir) {
			txt_error("out of memory");
			goto out;
		}
		if (rs_load(&p[s], &side_opts[s], err, sizeof(err))) {
			txt_error("the %s profile { }: %s", names[s],
				  err[0] ? err : "out of memory");
			goto out;
		}
		rs_warn_stats(&p[s]);
		if (o->symbols && rsym_build(&p[s], &side_opts[s], &rows[s])) {
			txt_error("out of memory");
			goto out;
		}
	}
	if (outfile) {
		out = fopen(outfile, "w");
		if (!out) {
			out = stdout;
			txt_error("-o %s: cannot open for writing: %s", outfile, strerror(errno));
			goto out;
		}
	}
	if (rdiff_report(out, &p[0], &rows[0], &p[1], &rows[1], o))
		goto out;
	if (fflush(out) || ferror(out)) {
		txt_error("writing the report failed: %s", strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (out != stdout && fclose(out) && !ret) {
		txt_error("writing %s failed: %s", outfile, strerror(errno));
		ret = 1;
	}
	for (int s = 0; s < 2; s++) {
		rsym_free(&rows[s]);
		rs_free(&p[s]);
	}
	return ret;
}

int main(int argc, char **argv)
{
	enum { OPT_SESSION = 256, OPT_JSON, OPT_CG_OUTPUT, OPT_FLAMEGRAPH, OPT_VMLINUX };
	static const struct option longopts[] = {
		{ "session-dir", required_argument, NULL, OPT_SESSION },
		{ "symbols", no_argument, NULL, 'l' },
		{ "details", no_argument, NULL, 'd' },
		{ "debug-info", no_argument, NULL, 'g' },
		{ "show-address", no_argument, NULL, 'w' },
		{ "long-filenames", no_argument, NULL, 'f' },
		{ "global-percent", no_argument, NULL, '%' },
		{ "accumulated", no_argument, NULL, 'a' },
		{ "reverse-sort", no_argument, NULL, 'r' },
		{ "exclude-dependent", no_argument, NULL, 'x' },
		{ "threshold", required_argument, NULL, 't' },
		{ "sort", required_argument, NULL, 's' },
		{ "exclude-symbols", required_argument, NULL, 'e' },
		{ "include-symbols", required_argument, NULL, 'i' },
		{ "demangle", required_argument, NULL, 'D' },
		{ "merge", required_argument, NULL, 'm' },
		{ "xml", no_argument, NULL, 'X' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "output-file", required_argument, NULL, 'o' },
		{ "image-path", required_argument, NULL, 'p' },
		{ "root", required_argument, NULL, 'R' },
		{ "vmlinux", required_argument, NULL, OPT_VMLINUX },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "usage", no_argument, NULL, 'h' },
		{ "callgraph", no_argument, NULL, 'c' },
		{ "callgraph-output", required_argument, NULL, OPT_CG_OUTPUT },
		{ "flamegraph", required_argument, NULL, OPT_FLAMEGRAPH },
		{ NULL, 0, NULL, 0 },
	};
	struct rpt_opts o = { .demangle = DEMANGLE_NORMAL, .sort = SORT_SAMPLE };
	struct rpt_profile p = { 0 };
	struct rpt_rows rows = { 0 };
	struct cgr_opts cgo = { 0 };
	int cgr, diff = 0;
	struct rpt_opts side_opts[2];
	enum rdiff_word *side = calloc((size_t)argc + 1, sizeof(*side));
	char err[2048] = "", cwd[PATH_MAX];
	const char *outfile = NULL;
	FILE *out = stdout;
	char *cmdline = txt_join_args("opreport", argc, argv);
	int c, ret = 1;

	o.cmdline = cmdline;
	if (!side) {
		txt_error("out of memory");
		goto out;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	while ((c = getopt_long(argc, argv, "ldgwf%arxt:s:e:i:D:m:Xo:p:R:hc?", longopts, NULL)) !=
	       -1) {
		char *end;

		switch (c) {
		case OPT_SESSION:
			o.session_dir = optarg;
			break;
		case 'l':
			o.symbols = true;
			break;
		case 'd':
			o.details = true;
			break;
		case 'g':
			o.debug_info = true;
			break;
		case 'w':
			o.show_address = true;
			break;
		case 'f':
			o.long_filenames = true;
			break;
		case '%':
			o.global_percent = true;
			break;
		case 'a':
			o.accumulated = true;
			break;
		case 'r':
			o.reverse_sort = true;
			break;
		case 'x':
			o.exclude_dependent = true;
			break;
		case 't':
			errno = 0;
			o.threshold = strtod(optarg, &end);
			if (errno || *end || end == optarg || o.threshold < 0 || o.threshold > 100) {
				txt_error("--threshold=%s: expected a percentage between 0 and 100",
					  optarg);
				goto out;
			}
			break;
		case 's':
			if (parse_sort(optarg, &o))
				goto out;
			break;
		case 'e':
			if (strlist_add_csv(&o.exclude_syms, optarg))
				goto out;
			break;
		case 'i':
			if (strlist_add_csv(&o.include_syms, optarg))
				goto out;
			break;
		case 'D':
			if (spec_parse_demangle(optarg, &o.demangle)) {
				txt_error("--demangle=%s: expected none, smart or normal", optarg);
				goto out;
			}
			break;
		case 'm':
			if (spec_parse_merge(optarg, &o.merge, err, sizeof(err))) {
				txt_error("%s", err[0] ? err : "out of memory");
				goto out;
			}
			break;
		case 'X':
			o.format = FMT_XML;
			break;
		case OPT_JSON:
			o.format = FMT_JSON;
			break;
		case 'o':
			outfile = optarg;
			break;
		case 'p':
			if (strlist_add_csv(&o.image_path, optarg))
				goto out;
			break;
		case 'R':
			o.root = optarg;
			break;
		case OPT_VMLINUX:
			if (opbfd_check_vmlinux(optarg, err, sizeof(err))) {
				txt_error("--vmlinux: %s", err);
				goto out;
			}
			o.vmlinux = optarg;
			break;
		case 'c':
			cgo.blocks = true;
			break;
		case OPT_CG_OUTPUT:
			if (cgr_set_output(&cgo, optarg, err, sizeof(err))) {
				txt_error("%s", err);
				goto out;
			}
			break;
		case OPT_FLAMEGRAPH:
			cgo.flamegraph = optarg;
			break;
		case 'V':
			printf("opreport " PACKAGE_VERSION "\n");
			ret = 0;
			goto out;
		case 'h':
			usage(stdout);
			ret = 0;
			goto out;
		default:
			/* -? (in the option string: glibc returns it without setting optopt) */
			if (!strcmp(argv[optind - 1], "-?")) {
				usage(stdout);
				ret = 0;
				goto out;
			}
			usage(stderr);
			goto out;
		}
	}
	/* -c has XML and JSON forms; folded stacks are a text format of their own */
	if (o.format != FMT_TEXT && cgo.folded) {
		txt_error("--callgraph-output=folded is a text format: drop %s, or use -c %s",
			  o.format == FMT_XML ? "-X" : "--json",
			  o.format == FMT_XML ? "-X" : "--json");
		goto out;
	}
	side_opts[0] = side_opts[1] = o;
	memset(&side_opts[0].spec, 0, sizeof(side_opts[0].spec));
	memset(&side_opts[1].spec, 0, sizeof(side_opts[1].spec));
	diff = rdiff_split(argv + optind, (size_t)(argc - optind), side, err, sizeof(err));
	if (diff < 0) {
		txt_error("%s", err);
		goto out;
	}
	if (diff && check_diff_opts(&o, &cgo))
		goto out;
	for (int i = optind; i < argc; i++) {
		/* the shared words go to both sides, each side's to its own */
		for (int s = 0; s < 2; s++) {
			struct rpt_spec *sp = diff ? &side_opts[s].spec : &o.spec;
			enum rdiff_word w = side[i - optind];

			if (w == RDIFF_BRACE ||
			    (diff && w != RDIFF_SHARED && w != (s ? RDIFF_SECOND : RDIFF_FIRST)))
				continue;
			if (spec_add(sp, argv[i], cwd, err, sizeof(err))) {
				txt_error("%s", err);
				goto out;
			}
			if (!diff)
				break;
		}
	}
	if (rs_find_session(o.session_dir, &p.session_dir, err, sizeof(err))) {
		txt_error("%s", err[0] ? err : "out of memory");
		goto out_free;
	}
	if (diff) {
		ret = diff_main(&o, side_opts, p.session_dir, outfile);
		goto out_free;
	}
	if (rs_load(&p, &o, err, sizeof(err))) {
		txt_error("%s", err[0] ? err : "out of memory");
		goto out_free;
	}
	rs_warn_stats(&p);
	if ((o.symbols || o.details) && rsym_build(&p, &o, &rows)) {
		fprintf(stderr, "opreport error: out of memory\n");
		goto out_free;
	}
	rsym_sort(&rows, &o);
	if (outfile) {
		FILE *f = fopen(outfile, "w");

		if (!f) {
			txt_error("-o %s: cannot open for writing: %s", outfile, strerror(errno));
			goto out_free;
		}
		out = f;
	}
	cgr = cgr_report(out, &p, &o, &cgo);
	if (cgr < 0)
		goto out_free;
	if (!cgr && out_report(out, &p, &o, &rows)) {
		fprintf(stderr, "opreport error: out of memory\n");
		goto out_free;
	}
	if (fflush(out) || ferror(out)) {
		fprintf(stderr, "opreport error: writing the report failed: %s\n", strerror(errno));
		goto out_free;
	}
	ret = 0;
out_free:
	if (out != stdout && fclose(out) && !ret) {
		txt_error("writing %s failed: %s", outfile, strerror(errno));
		ret = 1;
	}
	rsym_free(&rows);
	rs_free(&p);
out:
	if (diff > 0) {
		spec_free(&side_opts[0].spec);
		spec_free(&side_opts[1].spec);
	}
	free(side);
	spec_free(&o.spec);
	strlist_free(&o.include_syms);
	strlist_free(&o.exclude_syms);
	strlist_free(&o.image_path);
	free(cmdline);
	return ret;
}
