/*
 * opagent.c - libopagent: OProfile 1.x's agent API writing perf's jitdump
 * format (lib/op_jit.h), one complete record per pwrite() at a tracked
 * offset under a lock, so that concurrent JIT threads never interleave and
 * a killed process leaves a readable prefix.
 * SPDX-License-Identifier: MIT
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "op_jit.h"
#include "opagent.h"

#define OPAGENT_EXPORT __attribute__((visibility("default")))

/* the API level: OProfile 1's, first revision of this implementation */
#define OPAGENT_MAJOR 1
#define OPAGENT_MINOR 0

/* OProfile's place for the dumps; $OPROFILE_JITDUMP_DIR overrides */
#define OPAGENT_BASE "/tmp/.oprofile"
#define OPAGENT_DIR OPAGENT_BASE "/jitdump"

struct op_agent {
	pthread_mutex_t lock;
	int fd;
	uint64_t off;   /* end of the last complete record */
	uint64_t index; /* next LOAD's code_index */
	void *map;
	size_t map_len;
};

static void agent_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void agent_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("libopagent: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	/* the clock oprofiled's perf events use (use_clockid, CLOCK_MONOTONIC) */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* e_machine of this process's executable, as perf's agent: the code it JITs runs here */
static uint32_t elf_machine(void)
{
	unsigned char e[20];
	uint16_t m = 0;
	int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (pread(fd, e, sizeof(e), 0) == (ssize_t)sizeof(e) && !memcmp(e, "\177ELF", 4))
		memcpy(&m, e + 18, sizeof(m)); /* host byte order: it is our own binary */
	close(fd);
	return m;
}

/*
 * Make @path a directory when missing (mode 1777, the dump directory of
 * every user, like /tmp) and open it. A directory somebody else owns, or
 * that others may write without the sticky bit, could have our dump
 * replaced under us: refused.
 */
static int open_dir(const char *path, bool create)
{
	struct stat st;
	int fd;

	if (create && mkdir(path, 01777) == 0) {
		/* the umask cut the mode; the directory is new and ours */
		if (chmod(path, 01777))
			agent_warn("chmod 1777 %s: %s", path, strerror(errno));
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		agent_warn("cannot open the dump directory %s: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	if (fstat(fd, &st))
		goto out_bad;
	if (st.st_uid != 0 && st.st_uid != geteuid()) {
		agent_warn("dump directory %s is owned by uid %u, not by root or uid %u: not used",
			   path, (unsigned)st.st_uid, (unsigned)geteuid());
		errno = EPERM;
		goto out_bad;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		agent_warn("dump directory %s is writable by others without the sticky bit "
			   "(mode %04o): not used",
			   path, (unsigned)(st.st_mode & 07777));
		errno = EPERM;
		goto out_bad;
	}
	return fd;
out_bad:
	close(fd);
	return -1;
}

/* Write @len bytes at the agent's offset; on failure the partial record is cut off. */
static int put_record(struct op_agent *a, const void *buf, size_t len)
{
	const char *p = buf;
	size_t done = 0;
	int ret = 0;

	pthread_mutex_lock(&a->lock);
	while (done < len) {
		ssize_t n = pwrite(a->fd, p + done, len - done, (off_t)(a->off + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int e = n < 0 ? errno : EIO;

			/* a reader must never see half a record followed by a whole one */
			if (done && ftruncate(a->fd, (off_t)a->off))
				agent_warn("cannot cut a partial record: %s", strerror(errno));
			errno = e;
			ret = -1;
			break;
		}
		done += (size_t)n;
	}
	if (!ret)
		a->off += len;
	pthread_mutex_unlock(&a->lock);
	return ret;
}

static void rec_head(struct op_jitdump_rec_header *h, uint32_t id, size_t size)
{
	h->id = id;
	h->total_size = (uint32_t)size;
	h->timestamp = now_ns();
}

OPAGENT_EXPORT op_agent_t op_open_agent(void)
{
	const char *env = getenv("OPROFILE_JITDUMP_DIR");
	struct op_jitdump_header h;
	struct op_agent *a;
	char name[32];
	int dfd, e;
	long page = sysconf(_SC_PAGESIZE);

	if (env && *env) {
		dfd = open_dir(env, false);
	} else {
		int bfd = open_dir(OPAGENT_BASE, true);

		if (bfd < 0)
			return NULL;
		close(bfd);
		dfd = open_dir(OPAGENT_DIR, true);
	}
	if (dfd < 0)
		return NULL;
	a = calloc(1, sizeof(*a));
	if (!a) {
		close(dfd);
		errno = ENOMEM;
		return NULL;
	}
	snprintf(name, sizeof(name), "%d.dump", (int)getpid());
	a->fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (a->fd < 0 && errno == EEXIST) {
		/* a dead process's dump with our pid: ours to replace (the sticky
		 * bit lets nobody else's go) */
		if (unlinkat(dfd, name, 0) == 0)
			a->fd = openat(dfd, name,
				       O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	}
	e = errno;
	close(dfd);
	if (a->fd < 0) {
		agent_warn("cannot create %s/%s: %s", env && *env ? env : OPAGENT_DIR, name,
			   strerror(e));
		free(a);
		errno = e;
		return NULL;
	}
	pthread_mutex_init(&a->lock, NULL);
	memset(&h, 0, sizeof(h));
	h.magic = OP_JITDUMP_MAGIC;
	h.version = OP_JITDUMP_VERSION;
	h.total_size = sizeof(h);
	h.elf_mach = elf_machine();
	h.pid = (uint32_t)getpid();
	h.timestamp = now_ns();
	if (put_record(a, &h, sizeof(h)))
		goto out_fail;
	/*
	 * Map the dump executable once, as perf's jvmti agent does: the
	 * profiler's MMAP record then names the file of this process.
	 */
	a->map_len = page > 0 ? (size_t)page : 4096;
	a->map = mmap(NULL, a->map_len, PROT_READ | PROT_EXEC, MAP_PRIVATE, a->fd, 0);
	if (a->map == MAP_FAILED) {
		/* e.g. /tmp mounted noexec: the records are still written */
		agent_warn("cannot map the dump executable: %s (the profiler finds it by pid only)",
			   strerror(errno));
		a->map = NULL;
	}
	return a;
out_fail:
	e = errno;
	close(a->fd);
	pthread_mutex_destroy(&a->lock);
	free(a);
	errno = e;
	return NULL;
}

OPAGENT_EXPORT int op_close_agent(op_agent_t hdl)
{
	struct op_agent *a = hdl;
	struct op_jitdump_rec_header h;
	int ret, e = 0;

	if (!a) {
		errno = EINVAL;
		return -1;
	}
	rec_head(&h, OP_JIT_CODE_CLOSE, sizeof(h));
	ret = put_record(a, &h, sizeof(h));
	if (ret)
		e = errno;
	if (a->map)
		munmap(a->map, a->map_len);
	if (close(a->fd) && !ret) {
		e = errno;
		ret = -1;
	}
	pthread_mutex_destroy(&a->lock);
	free(a);
	if (ret)
		errno = e;
	return ret;
}

/* Copy the code from @vma of this process without faulting on a bad address. */
static void copy_own(void *dst, uint64_t vma, size_t len)
{
	struct iovec l = { .iov_base = dst, .iov_len = len };
	struct iovec r = { .iov_base = (void *)(uintptr_t)vma, .iov_len = len };

	if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != (ssize_t)len)
		memset(dst, 0, len); /* unreadable: the symbol keeps its size */
}

OPAGENT_EXPORT int op_write_native_code(op_agent_t hdl, const char *symbol_name, uint64_t vma,
					const void *code, const unsigned int code_size)
{
	struct op_agent *a = hdl;
	struct op_jitdump_load rec;
	size_t name_len, pad, size;
	uint8_t *buf;
	int ret;

	if (!a || !symbol_name) {
		errno = EINVAL;
		return -1;
	}
	name_len = strnlen(symbol_name, OP_JIT_NAME_MAX) + 1;
	/* NULs after the name align the code to 8 bytes in the file */
	pad = (8 - (sizeof(rec) + name_len) % 8) % 8;
	size = sizeof(rec) + name_len + pad + code_size;
	if (size > OP_JIT_MAX_RECORD_DEFAULT) {
		errno = EINVAL;
		return -1;
	}
	buf = calloc(1, size);
	if (!buf)
		return -1;
	memset(&rec, 0, sizeof(rec));
	rec_head(&rec.p, OP_JIT_CODE_LOAD, size);
	rec.pid = (uint32_t)getpid();
	rec.tid = (uint32_t)gettid();
	rec.vma = vma;
	rec.code_addr = vma;
	rec.code_size = code_size;
	pthread_mutex_lock(&a->lock);
	rec.code_index = a->index++;
	pthread_mutex_unlock(&a->lock);
	memcpy(buf, &rec, sizeof(rec));
	memcpy(buf + sizeof(rec), symbol_name, name_len - 1);
	if (code)
		memcpy(buf + size - code_size, code, code_size);
	else
		copy_own(buf + size - code_size, vma, code_size);
	ret = put_record(a, buf, size);
	free(buf);
	return ret;
}

OPAGENT_EXPORT int op_write_debug_line_info(op_agent_t hdl, const void *code, size_t nr_entry,
					    const struct debug_line_info *compile_map)
{
	struct op_agent *a = hdl;
	struct op_jitdump_debug_info rec;
	const char *prev = NULL;
	size_t size = sizeof(rec), o, i;
	uint8_t *buf;
	int ret;

	if (!a || (nr_entry && !compile_map)) {
		errno = EINVAL;
		return -1;
	}
	if (!nr_entry)
		return 0;
	/* an entry whose file is the previous one's is written as "\xff" (perf's form) */
	for (i = 0; i < nr_entry; i++) {
		const char *f = compile_map[i].filename ? compile_map[i].filename : "";

		if (prev && !strcmp(f, prev))
			size += OP_JITDUMP_DEBUG_ENTRY_FIXED + 2;
		else
			size += OP_JITDUMP_DEBUG_ENTRY_FIXED + strnlen(f, OP_JIT_NAME_MAX) + 1;
		prev = f;
		if (size > OP_JIT_MAX_RECORD_DEFAULT) {
			errno = EINVAL;
			return -1;
		}
	}
	buf = malloc(size);
	if (!buf)
		return -1;
	rec_head(&rec.p, OP_JIT_CODE_DEBUG_INFO, size);
	rec.code_addr = (uint64_t)(uintptr_t)code;
	rec.nr_entry = nr_entry;
	memcpy(buf, &rec, sizeof(rec));
	o = sizeof(rec);
	prev = NULL;
	for (i = 0; i < nr_entry; i++) {
		const char *f = compile_map[i].filename ? compile_map[i].filename : "";
		uint64_t addr = compile_map[i].vma;
		uint32_t line = compile_map[i].lineno, discrim = 0;
		size_t flen;

		memcpy(buf + o, &addr, 8);
		memcpy(buf + o + 8, &line, 4);
		memcpy(buf + o + 12, &discrim, 4);
		o += OP_JITDUMP_DEBUG_ENTRY_FIXED;
		if (prev && !strcmp(f, prev)) {
			memcpy(buf + o, "\xff", 2);
			o += 2;
		} else {
			flen = strnlen(f, OP_JIT_NAME_MAX);
			memcpy(buf + o, f, flen);
			buf[o + flen] = 0;
			o += flen + 1;
		}
		prev = f;
	}
	ret = put_record(a, buf, size);
	free(buf);
	return ret;
}

OPAGENT_EXPORT int op_unload_native_code(op_agent_t hdl, uint64_t vma)
{
	struct op_agent *a = hdl;
	struct op_jitdump_unload rec;

	if (!a) {
		errno = EINVAL;
		return -1;
	}
	memset(&rec, 0, sizeof(rec));
	rec_head(&rec.p, OP_JIT_CODE_UNLOAD, sizeof(rec));
	rec.pid = (uint32_t)getpid();
	rec.tid = (uint32_t)gettid();
	rec.vma = vma;
	return put_record(a, &rec, sizeof(rec));
}

OPAGENT_EXPORT int op_major_version(void)
{
	return OPAGENT_MAJOR;
}

OPAGENT_EXPORT int op_minor_version(void)
{
	return OPAGENT_MINOR;
}
