/*
 * op_header.c - sample-file header helpers: init, validation and the
 * session `abi` file that describes the on-disk type layout.
 *
 * SPDX-License-Identifier: MIT
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "odb.h"
#include "op_header.h"

void op_header_init(struct opd_header *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, OPD_MAGIC, 4);
	h->version = OPD_VERSION;
}

int op_header_check(const struct opd_header *h, const char *subject, char *err, size_t err_len)
{
	if (memcmp(h->magic, OPD_MAGIC, 4)) {
		if (err)
			snprintf(err, err_len,
				 "%s: bad magic %02x %02x %02x %02x, expected 44 41 45 0a (\"DAE\\n\"): "
				 "not an OProfile sample file",
				 subject, h->magic[0], h->magic[1], h->magic[2], h->magic[3]);
		return -EINVAL;
	}
	if (h->version != OPD_VERSION) {
		if (err)
			snprintf(err, err_len,
				 "%s: sample file version 0x%x, expected 0x%x (OProfile 1.x)%s",
				 subject, h->version, OPD_VERSION,
				 h->version == 0x12 ?
					 ": written by OProfile 0.9.x, convert it first" :
					 "");
		return -EINVAL;
	}
	return 0;
}

static bool little_endian(void)
{
	const uint16_t one = 1;

	return *(const uint8_t *)&one == 1;
}

/* clang-format off */
#define SZ(name, type) { "sizeof_" name, sizeof(type) }
#define OFF(name, type, field) { "offsetof_" name, offsetof(type, field) }
/* clang-format on */

int op_write_abi(int dirfd, const char *name)
{
	const struct {
		const char *key;
		size_t val;
	} abi[] = {
		SZ("double", double),
		SZ("u64", uint64_t),
		SZ("u8", uint8_t),
		SZ("u32", uint32_t),
		SZ("int", int),
		SZ("unsigned_int", unsigned int),
		SZ("odb_key_t", odb_key_t),
		SZ("odb_index_t", odb_index_t),
		SZ("odb_value_t", odb_value_t),
		SZ("odb_node_nr_t", odb_index_t),
		SZ("odb_descr_t", struct odb_descr),
		SZ("odb_node_t", struct odb_node),
		SZ("struct_opd_header", struct opd_header),
		OFF("node_key", struct odb_node, key),
		OFF("node_value", struct odb_node, value),
		OFF("node_next", struct odb_node, next),
		OFF("descr_size", struct odb_descr, size),
		OFF("descr_current_size", struct odb_descr, current_size),
		OFF("header_magic", struct opd_header, magic),
		OFF("header_version", struct opd_header, version),
		OFF("header_cpu_type", struct opd_header, cpu_type),
		OFF("header_ctr_event", struct opd_header, ctr_event),
		OFF("header_ctr_um", struct opd_header, ctr_um),
		OFF("header_ctr_count", struct opd_header, ctr_count),
		OFF("header_is_kernel", struct opd_header, is_kernel),
		OFF("header_cpu_speed", struct opd_header, cpu_speed),
		OFF("header_mtime", struct opd_header, mtime),
		OFF("header_cg_to_is_kernel", struct opd_header, cg_to_is_kernel),
		OFF("header_anon_start", struct opd_header, anon_start),
		OFF("header_cg_to_anon_start", struct opd_header, cg_to_anon_start),
	};
	char tmp[256], buf[2048];
	size_t len = 0, i;
	struct stat st;
	int fd, rc = 0;

	for (i = 0; i < sizeof(abi) / sizeof(abi[0]); i++)
		len += snprintf(buf + len, sizeof(buf) - len, "%s %zu\n", abi[i].key, abi[i].val);
	len += snprintf(buf + len, sizeof(buf) - len, "little_endian %d\n", little_endian());

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= sizeof(tmp))
		return -ENAMETOOLONG;
	/*
	 * Not O_TRUNC: a file found there is truncated only once it is known to
	 * be a regular file with one link (and, as root, root's and not writable
	 * by group or other); O_NONBLOCK: a FIFO there is refused, not waited on.
	 */
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		rc = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_nlink != 1)
		rc = -EINVAL;
	else if (geteuid() == 0 && (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))))
		rc = -EPERM;
	else if (ftruncate(fd, 0))
		rc = -errno;
	if (rc) {
		close(fd);
		return rc;
	}
	for (i = 0; i < len;) {
		ssize_t w = write(fd, buf + i, len - i);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			break;
		}
		i += w;
	}
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && renameat(dirfd, tmp, dirfd, name))
		rc = -errno;
	if (rc)
		unlinkat(dirfd, tmp, 0);
	return rc;
}
