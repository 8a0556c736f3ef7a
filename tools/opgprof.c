/*
 * opgprof.c - write the profile of one binary as a gmon.out for GNU gprof,
 * as OProfile's opgprof did: the gmon header, one histogram record (tag 0)
 * over the binary's sampled address range (one 16-bit bin per 2 bytes, or
 * per 8 when every sample is 4-byte aligned; profiling rate 1, so gprof's
 * "seconds" are samples), then one call-graph arc record (tag 1) per
 * caller -> callee arc inside the binary, from the session's {cg} files.
 * Addresses and counts are written in the binary's byte order and address
 * size (libbfd), as gprof reads them.
 *
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <bfd.h>
#include <errno.h>
#include <fnmatch.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "odb.h"
#include "opreport.h"

#define GP_TAG_HIST 0
#define GP_TAG_ARC 1

#define gp_error(...) txt_msg("opgprof error: ", __VA_ARGS__)
#define gp_warn(...) txt_msg("opgprof warning: ", __VA_ARGS__)

struct gp_pc {
	uint64_t vma, count;
	const struct rpt_sym *sym;
};

struct gp_arc {
	uint64_t from, to, count;
};

struct gp_out {
	FILE *f;
	bfd *abfd;
	unsigned addr_bytes;
};

static void gp_usage(FILE *f)
{
	fputs("usage: opgprof [options] [profile specification] IMAGE\n"
	      "Write the samples of the binary IMAGE (and its call-graph arcs, when the\n"
	      "session has them) as a gmon.out for `gprof IMAGE gmon.out`.\n"
	      "  -o, --output-filename=FILE  the output (default gmon.out)\n"
	      "  -t, --threshold=PERCENT     leave out symbols with less than PERCENT of the\n"
	      "                              samples\n"
	      "  -p, --image-path=DIRS       look for the binary by base name in DIRS\n"
	      "  -R, --root=DIR              read the binary below DIR\n"
	      "      --session-dir=DIR       the session (default ./oprofile_data, else\n"
	      "                              /var/lib/oprofile)\n"
	      "  -h, --help                  this help\n"
	      "  -?, --usage                 a short usage line\n"
	      "      --version               the package version\n"
	      "The profile specification is opreport's (session:, event:, tid:, archive:DIR\n"
	      "to read an oparchive directory, ...). See opgprof(1).\n",
	      f);
}

static bool gp_image_match(const struct rpt_spec *s, const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	for (size_t i = 0; i < s->image.n; i++) {
		const char *pat = s->image.v[i];

		if (!fnmatch(pat, path, 0) || (pat[0] != '/' && !fnmatch(pat, base, 0)))
			return true;
	}
	return false;
}

/* the one user binary the spec names, or NULL after an error */
static struct rpt_image *gp_pick_image(struct rpt_profile *p, const struct rpt_opts *o)
{
	struct rpt_image *img = NULL;

	for (size_t i = 0; i < p->nimgs; i++) {
		struct rpt_image *c = p->imgs[i];

		if (c->kind != OP_IMAGE_USER || c->path[0] != '/' ||
		    !gp_image_match(&o->spec, c->path))
			continue;
		if (img) {
			gp_error("the profile specification names several binaries with samples "
				 "(%s, %s): give one by its full path",
				 img->path, c->path);
			return NULL;
		}
		img = c;
	}
	if (!img)
		gp_error("no samples of %s in %s (the binary must match image: or the last word)",
			 o->spec.image.v[0], p->samples_dir);
	return img;
}

static int gp_put(struct gp_out *g, const void *buf, size_t n)
{
	return fwrite(buf, 1, n, g->f) == n ? 0 : -EIO;
}

static int gp_put_u8(struct gp_out *g, unsigned v)
{
	unsigned char b = (unsigned char)v;

	return gp_put(g, &b, 1);
}

static int gp_put_u32(struct gp_out *g, uint32_t v)
{
	unsigned char b[4];

	bfd_put_32(g->abfd, v, b);
	return gp_put(g, b, 4);
}

static int gp_put_addr(struct gp_out *g, uint64_t v)
{
	unsigned char b[8];

	if (g->addr_bytes == 8)
		bfd_put_64(g->abfd, v, b);
	else
		bfd_put_32(g->abfd, v, b);
	return gp_put(g, b, g->addr_bytes);
}

/* the arcs from @img to @img of the session's {cg} files */
static int gp_read_arcs(struct rpt_profile *p, const struct rpt_opts *o,
			const struct rpt_image *img, struct gp_arc **arcs, size_t *narcs)
{
	struct op_parsed_name *pn = malloc(sizeof(*pn));
	size_t cap = 0;
	int ret = 0;

	if (!pn)
		return -ENOMEM;
	for (size_t i = 0; i < p->ncg_files && !ret; i++) {
		const struct rpt_cgfile *cf = &p->cg_files[i];
		const struct odb_node *nodes;
		char err[512] = "";
		size_t n = 0;
		odb_t db;

		if (op_parse_name(cf->path + cf->rel, pn, NULL, 0) || !pn->is_cg)
			continue;
		rs_refuse_names(cf->path, pn);
		if (!spec_match(&o->spec, pn) || pn->image.kind != OP_IMAGE_USER ||
		    pn->cg_to.kind != OP_IMAGE_USER || !pn->image.path || !pn->cg_to.path ||
		    strcmp(pn->image.path, img->path) || strcmp(pn->cg_to.path, img->path))
			continue;
		if (rs_odb_open(p, &db, cf->path, err, sizeof(err)) ||
		    odb_check(&db, err, sizeof(err))) {
			gp_warn("skipping call-graph file %s: %s", cf->path, err);
			if (db.base || db.fd > 0)
				odb_close(&db);
			continue;
		}
		nodes = odb_nodes(&db, &n);
		for (size_t j = 0; j < n; j++) {
			if (!nodes[j].value)
				continue;
			if (*narcs == cap) {
				size_t ncap = cap ? 2 * cap : 256;
				struct gp_arc *nv = realloc(*arcs, ncap * sizeof(*nv));

				if (!nv) {
					ret = -ENOMEM;
					break;
				}
				*arcs = nv;
				cap = ncap;
			}
			(*arcs)[(*narcs)++] = (struct gp_arc){
				.from = sym_key_vma(&img->syms, nodes[j].key >> 32),
				.to = sym_key_vma(&img->syms, nodes[j].key & 0xffffffffu),
				.count = nodes[j].value,
			};
		}
		odb_close(&db);
	}
	free(pn);
	return ret;
}

/* the samples of @img (every group of it), with their symbols; 0 or -ENOMEM */
static int gp_collect(struct rpt_profile *p, const struct rpt_image *img, struct gp_pc **pcs,
		      size_t *npcs)
{
	size_t n = 0;

	for (size_t i = 0; i < p->ngroups; i++)
		if (p->groups[i]->img == img)
			n += p->groups[i]->n;
	*pcs = calloc(n ? n : 1, sizeof(**pcs));
	if (!*pcs)
		return -ENOMEM;
	for (size_t i = 0; i < p->ngroups; i++) {
		const struct rpt_group *g = p->groups[i];

		if (g->img != img)
			continue;
		for (size_t j = 0; j < g->n; j++)
			(*pcs)[(*npcs)++] = (struct gp_pc){
				.vma = sym_key_vma(&img->syms, g->s[j].key),
				.count = g->s[j].count,
				.sym = img->no_syms ? NULL : sym_lookup(&img->syms, g->s[j].key),
			};
	}
	return 0;
}

static int gp_sym_cmp(const void *a, const void *b)
{
	const struct gp_pc *x = a, *y = b;

	if (x->sym != y->sym)
		return (uintptr_t)x->sym < (uintptr_t)y->sym ? -1 : 1;
	return x->vma < y->vma ? -1 : x->vma > y->vma;
}

/* -t: drop the samples of symbols under @threshold percent of all */
static size_t gp_threshold(struct gp_pc *pcs, size_t n, double threshold)
{
	uint64_t total = 0;
	size_t out = 0;

	if (threshold <= 0 || !n)
		return n;
	for (size_t i = 0; i < n; i++)
		total += pcs[i].count;
	qsort(pcs, n, sizeof(*pcs), gp_sym_cmp);
	for (size_t i = 0, j; i < n; i = j) {
		uint64_t sum = 0;

		for (j = i; j < n && pcs[j].sym == pcs[i].sym; j++)
			sum += pcs[j].count;
		if ((double)sum * 100.0 < threshold * (double)total)
			continue;
		memmove(&pcs[out], &pcs[i], (j - i) * sizeof(*pcs));
		out += j - i;
	}
	return out;
}

static int gp_write(struct gp_out *g, const struct gp_pc *pcs, size_t n, const struct gp_arc *arcs,
		    size_t narcs)
{
	static const char dimen[15] = "samples";
	uint64_t low = UINT64_MAX, high = 0, mult = 8;
	uint16_t *hist = NULL;
	size_t nbins;
	bool capped = false;
	int ret = 0;

	for (size_t i = 0; i < n; i++) {
		if (pcs[i].vma < low)
			low = pcs[i].vma;
		if (pcs[i].vma > high)
			high = pcs[i].vma;
		if (pcs[i].vma % 4)
			mult = 2;
	}
	if (!n)
		low = high = 0;
	else
		high++; /* [low, high) */
	low = low / mult * mult;
	high = (high + mult - 1) / mult * mult;
	nbins = (size_t)((high - low) / mult);
	if (nbins > UINT32_MAX) {
		gp_error("the sampled range 0x%" PRIx64 "-0x%" PRIx64 " needs more histogram bins "
			 "than gmon.out holds",
			 low, high);
		return -EINVAL;
	}
	hist = calloc(nbins ? nbins : 1, sizeof(*hist));
	if (!hist)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t b = (size_t)((pcs[i].vma - low) / mult);
		uint64_t v = hist[b] + pcs[i].count;

		if (v > UINT16_MAX) {
			if (!capped)
				gp_warn("a histogram bin at 0x%" PRIx64
					" holds more than %u samples: "
					"capped (gmon.out bins are 16 bits)",
					pcs[i].vma, UINT16_MAX);
			capped = true;
			v = UINT16_MAX;
		}
		hist[b] = (uint16_t)v;
	}
	ret = gp_put(g, "gmon", 4) || gp_put_u32(g, 1) ||
	      gp_put(g, "\0\0\0\0\0\0\0\0\0\0\0\0", 12) || gp_put_u8(g, GP_TAG_HIST) ||
	      gp_put_addr(g, low) || gp_put_addr(g, high) || gp_put_u32(g, (uint32_t)nbins) ||
	      gp_put_u32(g, 1) || gp_put(g, dimen, 15) || gp_put_u8(g, '1');
	for (size_t i = 0; i < nbins && !ret; i++) {
		unsigned char b[2];

		bfd_put_16(g->abfd, hist[i], b);
		ret = gp_put(g, b, 2);
	}
	for (size_t i = 0; i < narcs && !ret; i++)
		ret = gp_put_u8(g, GP_TAG_ARC) || gp_put_addr(g, arcs[i].from) ||
		      gp_put_addr(g, arcs[i].to) ||
		      gp_put_u32(g,
				 arcs[i].count > UINT32_MAX ? UINT32_MAX : (uint32_t)arcs[i].count);
	free(hist);
	return ret ? -EIO : 0;
}

static bfd *gp_open_bfd(const char *path)
{
	bfd *abfd;

	bfd_init();
	abfd = bfd_openr(path, NULL);
	if (!abfd) {
		gp_error("cannot read the binary %s: %s", path, bfd_errmsg(bfd_get_error()));
		return NULL;
	}
	if (!bfd_check_format(abfd, bfd_object)) {
		gp_error("cannot read the binary %s: %s", path, bfd_errmsg(bfd_get_error()));
		bfd_close(abfd);
		return NULL;
	}
	return abfd;
}

int main(int argc, char *argv[])
{
	enum { OPT_SESSION = 256, OPT_VERSION, OPT_USAGE };
	static const struct option longopts[] = {
		{ "output-filename", required_argument, NULL, 'o' },
		{ "threshold", required_argument, NULL, 't' },
		{ "image-path", required_argument, NULL, 'p' },
		{ "root", required_argument, NULL, 'R' },
		{ "session-dir", required_argument, NULL, OPT_SESSION },
		{ "help", no_argument, NULL, 'h' },
		{ "usage", no_argument, NULL, OPT_USAGE },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	struct rpt_opts o = { .demangle = DEMANGLE_NONE, .merge = MERGE_ALL };
	struct rpt_profile p = { 0 };
	struct gp_out g = { 0 };
	struct gp_pc *pcs = NULL;
	struct gp_arc *arcs = NULL;
	size_t npcs = 0, narcs = 0;
	const char *outfile = "gmon.out";
	char err[2048] = "", cwd[PATH_MAX], *end;
	struct rpt_image *img;
	int opt, ret = 1;

	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = 0;
	while ((opt = getopt_long(argc, argv, "o:t:p:R:h?", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			outfile = optarg;
			break;
		case 't':
			errno = 0;
			o.threshold = strtod(optarg, &end);
			if (errno || *end || end == optarg ||
			    !(o.threshold >= 0 && o.threshold <= 100)) {
				gp_error("--threshold=%s: expected a percentage between 0 and 100",
					 optarg);
				goto out;
			}
			break;
		case 'p':
			if (strlist_add_csv(&o.image_path, optarg)) {
				gp_error("out of memory");
				goto out;
			}
			break;
		case 'R':
			o.root = optarg;
			break;
		case OPT_SESSION:
			o.session_dir = optarg;
			break;
		case 'h':
			gp_usage(stdout);
			ret = 0;
			goto out;
		case OPT_USAGE:
usage:
			puts("usage: opgprof [-o FILE] [-t PERCENT] [-p DIRS] [-R DIR] "
			     "[--session-dir=DIR] [profile specification] IMAGE");
			ret = 0;
			goto out;
		case OPT_VERSION:
			printf("opgprof " PACKAGE_VERSION "\n");
			ret = 0;
			goto out;
		case '?':
			if (!strcmp(argv[optind - 1], "-?"))
				goto usage;
			/* fall through */
		default:
			gp_usage(stderr);
			goto out;
		}
	}
	for (int i = optind; i < argc; i++) {
		if (spec_add(&o.spec, argv[i], cwd, err, sizeof(err))) {
			gp_error("%s", err);
			goto out;
		}
	}
	if (!o.spec.image.n) {
		gp_error("no binary: give the one to profile, as the last word or image:PATH");
		goto out;
	}
	if (!*outfile) {
		gp_error("-o: an empty file name");
		goto out;
	}
	if (rs_find_session(o.session_dir, &p.session_dir, err, sizeof(err)) ||
	    rs_load(&p, &o, err, sizeof(err))) {
		gp_error("%s", err[0] ? err : "out of memory");
		goto out_free;
	}
	if (p.ncls > 1) {
		gp_error("the profile specification selects %zu classes (%s, %s, ...): gmon.out holds "
			 "one; select one with event:, or a session: of one event",
			 p.ncls, p.cls[0].label, p.cls[1].label);
		goto out_free;
	}
	img = gp_pick_image(&p, &o);
	if (!img)
		goto out_free;
	rsym_load_image(&p, &o, img);
	if (img->no_syms) {
		gp_error("cannot read the symbols of %s (see above): gprof needs the binary",
			 img->file);
		goto out_free;
	}
	g.abfd = gp_open_bfd(img->file);
	if (!g.abfd)
		goto out_free;
	g.addr_bytes = bfd_arch_bits_per_address(g.abfd) > 32 ? 8 : 4;
	if (gp_collect(&p, img, &pcs, &npcs) || gp_read_arcs(&p, &o, img, &arcs, &narcs)) {
		gp_error("out of memory");
		goto out_free;
	}
	npcs = gp_threshold(pcs, npcs, o.threshold);
	g.f = fopen(outfile, "wb");
	if (!g.f) {
		gp_error("-o %s: cannot open for writing: %s", outfile, strerror(errno));
		goto out_free;
	}
	ret = gp_write(&g, pcs, npcs, arcs, narcs);
	if (fclose(g.f) && !ret)
		ret = -EIO;
	if (ret) {
		if (ret == -EIO)
			gp_error("writing %s failed: %s", outfile, strerror(errno));
		else if (ret == -ENOMEM)
			gp_error("out of memory");
		ret = 1;
	}
out_free:
	if (g.abfd)
		bfd_close(g.abfd);
	free(pcs);
	free(arcs);
	rs_free(&p);
out:
	spec_free(&o.spec);
	strlist_free(&o.image_path);
	return ret;
}
