/*
 * opimport.c - OProfile's opimport: converts sample files written with
 * another ABI (byte order, type sizes and alignment, described by the
 * session's `abi` file) to this machine's, one file (as OProfile's) or a
 * whole session directory. The conversion itself is lib/op_abi.
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "op_abi.h"
#include "op_header.h"
#include "op_mangle.h"
#include "op_session_layout.h"

/* largest input file read (a sample file of 2^25 nodes is 640 MiB natively) */
#define IMP_MAX_FILE (1ull << 30)
/* deepest directory nesting followed below samples/ */
#define IMP_MAX_DEPTH 256

struct imp {
	struct op_abi abi; /* the input's */
	bool force, verbose;
	unsigned converted, copied, skipped, failed;
	uint64_t nodes;
	struct op_parsed_name name; /* scratch for imp_is_sample() */
};

static void imp_usage(FILE *f)
{
	fputs("usage: opimport [options] INPUT\n"
	      "Convert sample files written with another ABI (byte order, type sizes) to this\n"
	      "machine's. INPUT is a session directory (holding abi and samples/): every\n"
	      "sample file below samples/ is converted to the same name below OUTPUT/samples/,\n"
	      "the other files are copied, OUTPUT/abi describes this machine. Or INPUT is one\n"
	      "sample file (OProfile's form), converted to the file OUTPUT.\n"
	      "  -a, --abi=FILE      the abi file INPUT was written with (default for a\n"
	      "                      session: INPUT/abi; required for one file)\n"
	      "  -o, --output=PATH   the output session directory or sample file (required)\n"
	      "  -f, --force         convert even if the abi is this machine's, and replace\n"
	      "                      files that exist in the output\n"
	      "  -V, --verbose       say what is done with each file\n"
	      "  -h, --help, -?, --usage   this help\n"
	      "  -v, --version       the package version\n",
	      f);
}

static void imp_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void imp_error(const char *fmt, ...)
{
	va_list ap;

	fputs("opimport: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* read the whole regular file @name (relative to @dfd, never through a symlink) */
static int imp_slurp(int dfd, const char *name, const char *show, uint8_t **buf, size_t *len)
{
	struct stat st;
	size_t got = 0;
	int fd, rc = 0;

	*buf = NULL;
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		imp_error("%s: cannot open: %s", show, strerror(errno));
		return rc;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		imp_error("%s: not a regular file", show);
		rc = -EINVAL;
		goto out;
	}
	if ((uint64_t)st.st_size > IMP_MAX_FILE) {
		imp_error("%s: %lld bytes, more than opimport reads (%llu)", show,
			  (long long)st.st_size, IMP_MAX_FILE);
		rc = -EFBIG;
		goto out;
	}
	*buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!*buf) {
		imp_error("%s: out of memory", show);
		rc = -ENOMEM;
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, *buf + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = r < 0 ? -errno : -EIO;
			imp_error("%s: %s", show, r < 0 ? strerror(errno) : "shrank while read");
			break;
		}
		got += (size_t)r;
	}
	*len = got;
out:
	if (rc) {
		free(*buf);
		*buf = NULL;
	}
	close(fd);
	return rc;
}

static int imp_convert(struct imp *im, int in_dfd, const char *in_name, int out_dfd,
		       const char *out_name, const char *show)
{
	struct op_abi_sample s;
	char err[1024];
	uint64_t sat = 0;
	uint8_t *buf;
	size_t len = 0;
	int rc;

	rc = imp_slurp(in_dfd, in_name, show, &buf, &len);
	if (rc)
		return rc;
	rc = op_abi_decode(&im->abi, buf, len, show, &s, err, sizeof(err));
	free(buf);
	if (rc) {
		imp_error("%s", err);
		return rc;
	}
	rc = op_abi_write_sample(&s, out_dfd, out_name, im->force ? 0 : OP_ABI_NOREPLACE, &sat, err,
				 sizeof(err));
	if (rc)
		imp_error("%s", err);
	else if (sat)
		imp_error("%s: warning: %llu counts of repeated keys saturated at %u", show,
			  (unsigned long long)sat, UINT32_MAX);
	if (!rc && im->verbose)
		printf("converted %s: %zu nodes\n", show, s.nr);
	if (!rc)
		im->nodes += s.nr;
	op_abi_sample_free(&s);
	return rc;
}

/* copy a file that is not a sample file, through a temporary name */
static int imp_copy(struct imp *im, int in_dfd, const char *name, int out_dfd, mode_t mode,
		    const char *show)
{
	char tmp[NAME_MAX + 16];
	uint8_t *buf;
	size_t len = 0, done = 0;
	int fd, rc;

	rc = imp_slurp(in_dfd, name, show, &buf, &len);
	if (rc)
		return rc;
	snprintf(tmp, sizeof(tmp), ".opimport-tmp.%d", (int)getpid());
	fd = openat(out_dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 0777);
	if (fd < 0) {
		rc = -errno;
		imp_error("%s: cannot create the copy: %s", show, strerror(errno));
		free(buf);
		return rc;
	}
	while (done < len && !rc) {
		ssize_t w = write(fd, buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			rc = -errno;
		else
			done += (size_t)w;
	}
	free(buf);
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc) {
		if (im->force)
			rc = renameat(out_dfd, tmp, out_dfd, name) ? -errno : 0;
		else
			rc = renameat2(out_dfd, tmp, out_dfd, name, RENAME_NOREPLACE) ? -errno : 0;
	}
	if (rc) {
		unlinkat(out_dfd, tmp, 0);
		imp_error("%s: cannot copy: %s", show,
			  rc == -EEXIST ? "exists in the output (--force replaces it)" :
					  strerror(-rc));
		return rc;
	}
	if (im->verbose)
		printf("copied %s\n", show);
	return 0;
}

/* a sample file: its name below samples/ parses as one (op_mangle.h) */
static bool imp_is_sample(struct imp *im, const char *rel)
{
	char err[256];

	return !op_parse_name(rel, &im->name, err, sizeof(err));
}

/* open (creating it if needed) the directory @name in @dfd */
static int imp_open_out_dir(int dfd, const char *name, const char *show)
{
	int fd;

	if (mkdirat(dfd, name, 0755) && errno != EEXIST) {
		imp_error("%s: cannot create the directory: %s", show, strerror(errno));
		return -1;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		imp_error("%s: cannot open the output directory: %s", show, strerror(errno));
	return fd;
}

/* convert or copy everything below @in_dfd into @out_dfd; @rel names it below samples/ */
static void imp_walk(struct imp *im, int in_dfd, int out_dfd, const char *rel, int depth)
{
	struct dirent *de;
	DIR *d;
	int fd = dup(in_dfd);

	if (fd < 0 || !(d = fdopendir(fd))) {
		imp_error("samples/%s: cannot read the directory: %s", rel, strerror(errno));
		if (fd >= 0)
			close(fd);
		im->failed++;
		return;
	}
	while ((errno = 0, de = readdir(d))) {
		char sub[PATH_MAX];
		char show[PATH_MAX + 16];
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s%s%s", rel, *rel ? "/" : "",
				     de->d_name) >= sizeof(sub)) {
			imp_error("samples/%s/%s: path too long", rel, de->d_name);
			im->failed++;
			continue;
		}
		snprintf(show, sizeof(show), OP_SESSION_SAMPLES "/%s", sub);
		if (fstatat(in_dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW)) {
			imp_error("%s: %s", show, strerror(errno));
			im->failed++;
		} else if (S_ISDIR(st.st_mode)) {
			int ci, co;

			if (depth >= IMP_MAX_DEPTH) {
				imp_error("%s: nested deeper than %d directories: not followed",
					  show, IMP_MAX_DEPTH);
				im->failed++;
				continue;
			}
			ci = openat(in_dfd, de->d_name,
				    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			co = ci < 0 ? -1 : imp_open_out_dir(out_dfd, de->d_name, show);
			if (ci < 0)
				imp_error("%s: cannot open: %s", show, strerror(errno));
			if (ci < 0 || co < 0)
				im->failed++;
			else
				imp_walk(im, ci, co, sub, depth + 1);
			if (ci >= 0)
				close(ci);
			if (co >= 0)
				close(co);
		} else if (!S_ISREG(st.st_mode)) {
			/* symlinks, FIFOs, sockets: nothing OProfile's tools read */
			imp_error("%s: not a regular file or directory: skipped", show);
			im->skipped++;
		} else if (imp_is_sample(im, sub)) {
			if (imp_convert(im, in_dfd, de->d_name, out_dfd, de->d_name, show))
				im->failed++;
			else
				im->converted++;
		} else {
			if (imp_copy(im, in_dfd, de->d_name, out_dfd, st.st_mode, show))
				im->failed++;
			else
				im->copied++;
		}
	}
	if (errno) {
		imp_error("samples/%s: cannot read the directory: %s", rel, strerror(errno));
		im->failed++;
	}
	closedir(d);
}

static int imp_session(struct imp *im, const char *input, const char *output)
{
	int in_dfd = -1, in_samples = -1, out_dfd = -1, out_samples = -1, rc = 1;
	struct stat st;

	in_dfd = open(input, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (in_dfd < 0) {
		imp_error("%s: cannot open: %s", input, strerror(errno));
		return 1;
	}
	in_samples =
		openat(in_dfd, OP_SESSION_SAMPLES, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (in_samples < 0) {
		imp_error("%s: not a session directory (no %s/ in it: %s)", input,
			  OP_SESSION_SAMPLES, strerror(errno));
		goto out;
	}
	if (mkdir(output, 0755) && errno != EEXIST) {
		imp_error("%s: cannot create the output directory: %s", output, strerror(errno));
		goto out;
	}
	out_dfd = open(output, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (out_dfd < 0) {
		imp_error("%s: cannot open the output directory: %s", output, strerror(errno));
		goto out;
	}
	if (fstat(in_dfd, &st) == 0) {
		struct stat ost;

		if (fstat(out_dfd, &ost) == 0 && ost.st_dev == st.st_dev && ost.st_ino == st.st_ino) {
			imp_error("%s: the output is the input session", output);
			goto out;
		}
	}
	if (!im->force && (!fstatat(out_dfd, OP_SESSION_ABI, &st, AT_SYMLINK_NOFOLLOW) ||
			   !fstatat(out_dfd, OP_SESSION_SAMPLES, &st, AT_SYMLINK_NOFOLLOW))) {
		imp_error("%s: holds a session already (%s or %s/): --force converts into it, "
			  "replacing the files of the same names",
			  output, OP_SESSION_ABI, OP_SESSION_SAMPLES);
		goto out;
	}
	out_samples = imp_open_out_dir(out_dfd, OP_SESSION_SAMPLES, OP_SESSION_SAMPLES);
	if (out_samples < 0)
		goto out;
	imp_walk(im, in_samples, out_samples, "", 0);
	/* the output is native: its abi file says so */
	rc = op_write_abi(out_dfd, OP_SESSION_ABI);
	if (rc) {
		imp_error("%s/%s: cannot write: %s", output, OP_SESSION_ABI, strerror(-rc));
		im->failed++;
	}
	if (im->verbose)
		printf("%u sample files converted (%llu nodes), %u files copied, %u skipped, "
		       "%u failed\n",
		       im->converted, (unsigned long long)im->nodes, im->copied, im->skipped,
		       im->failed);
	if (im->failed)
		imp_error("%u files of %s could not be converted or copied (see above); the "
			  "others are in %s",
			  im->failed, input, output);
	rc = im->failed ? 1 : 0;
out:
	if (out_samples >= 0)
		close(out_samples);
	if (out_dfd >= 0)
		close(out_dfd);
	if (in_samples >= 0)
		close(in_samples);
	close(in_dfd);
	return rc;
}

static const char *imp_abi_summary(const struct op_abi *a, char *buf, size_t len)
{
	snprintf(buf, len, "%s endian, header %d bytes, descriptor %d, node %d (key %d, count %d)",
		 a->val[OP_ABI_LITTLE_ENDIAN] ? "little" : "big", a->val[OP_ABI_SIZEOF_HEADER],
		 a->val[OP_ABI_SIZEOF_ODB_DESCR_T], a->val[OP_ABI_SIZEOF_ODB_NODE_T],
		 a->val[OP_ABI_SIZEOF_ODB_KEY_T], a->val[OP_ABI_SIZEOF_ODB_VALUE_T]);
	return buf;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "abi", required_argument, NULL, 'a' }, { "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },     { "verbose", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },      { "usage", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'v' },   { NULL, 0, NULL, 0 },
	};
	const char *abi_path = NULL, *output = NULL, *input;
	char abi_buf[PATH_MAX], err[1024], sum[160];
	struct op_abi native;
	struct imp *im;
	struct stat st;
	int c, rc = 1;

	im = calloc(1, sizeof(*im));
	if (!im) {
		imp_error("out of memory");
		return 1;
	}
	for (optopt = 0; (c = getopt_long(argc, argv, "a:o:fVhv?", longopts, NULL)) != -1;
	     optopt = 0) {
		switch (c) {
		case 'a':
			abi_path = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'f':
			im->force = true;
			break;
		case 'V':
			im->verbose = true;
			break;
		case 'v':
			printf("opimport " PACKAGE_VERSION "\n");
			rc = 0;
			goto out;
		case 'h':
			imp_usage(stdout);
			rc = 0;
			goto out;
		case '?':
			/* "-?" itself (getopt returns '?' for unknown options too) */
			if (!optopt && argv[optind - 1][0] == '-' && argv[optind - 1][1] != '-') {
				imp_usage(stdout);
				rc = 0;
				goto out;
			}
			/* fall through */
		default:
			imp_usage(stderr);
			goto out;
		}
	}
	if (optind != argc - 1) {
		imp_error("%s: give exactly one INPUT (a session directory or a sample file)",
			  optind == argc ? "no input" : "more than one input");
		imp_usage(stderr);
		goto out;
	}
	input = argv[optind];
	if (!output) {
		imp_error("--output (-o) is required: the output session directory or file");
		goto out;
	}
	if (stat(input, &st)) {
		imp_error("%s: %s", input, strerror(errno));
		goto out;
	}
	if (!abi_path && S_ISDIR(st.st_mode)) {
		snprintf(abi_buf, sizeof(abi_buf), "%s/%s", input, OP_SESSION_ABI);
		abi_path = abi_buf;
	}
	if (!abi_path) {
		imp_error("--abi (-a) is required to convert one sample file: the abi file of "
			  "the session it comes from");
		goto out;
	}
	if (op_abi_read(&im->abi, AT_FDCWD, abi_path, err, sizeof(err)) ||
	    op_abi_check(&im->abi, abi_path, err, sizeof(err))) {
		imp_error("%s", err);
		goto out;
	}
	op_abi_native(&native);
	if (im->verbose) {
		printf("input abi (%s): %s\n", abi_path,
		       imp_abi_summary(&im->abi, sum, sizeof(sum)));
		printf("native abi: %s\n", imp_abi_summary(&native, sum, sizeof(sum)));
	}
	if (!im->force && op_abi_equal(&im->abi, &native)) {
		imp_error("%s: the input abi is this machine's: no conversion needed (--force "
			  "converts anyway)",
			  abi_path);
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		rc = imp_session(im, input, output);
	} else if (strlen(input) > 3 && !strcmp(input + strlen(input) - 3, ".jo")) {
		/* as OProfile: JIT dumps are not sample files, nothing to convert */
		if (im->verbose)
			printf("%s: a JIT dump (.jo), not converted\n", input);
		rc = 0;
	} else {
		rc = imp_convert(im, AT_FDCWD, input, AT_FDCWD, output, input) ? 1 : 0;
	}
out:
	free(im);
	return rc;
}
