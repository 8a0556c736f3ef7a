/*
 * proc_synth.c - walk /proc and write COMM / FORK / MMAP2 records for the
 * processes that already run, so that their samples can be attributed.
 * Whatever cannot be read (a maps file root may not read, a process that
 * exits meanwhile) is counted and skipped.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "proc_synth.h"

static uint8_t *psynth_put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return p + 4;
}

static uint8_t *psynth_put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
	return p + 8;
}

/* a NUL-terminated string padded to 8 bytes */
static uint8_t *psynth_putstr(uint8_t *p, const char *s, size_t n)
{
	size_t padded = (n + 1 + 7) & ~(size_t)7;

	memcpy(p, s, n);
	memset(p + n, 0, padded - n);
	return p + padded;
}

static uint8_t *psynth_put_trailer(const struct pdec *d, uint8_t *p, uint32_t pid, uint32_t tid,
				   uint64_t time, uint32_t cpu, uint64_t id)
{
	uint64_t t = d->trailer_type;

	if (t & PERF_SAMPLE_TID) {
		p = psynth_put32(p, pid);
		p = psynth_put32(p, tid);
	}
	if (t & PERF_SAMPLE_TIME)
		p = psynth_put64(p, time);
	if (t & PERF_SAMPLE_ID)
		p = psynth_put64(p, id);
	if (t & PERF_SAMPLE_STREAM_ID)
		p = psynth_put64(p, id);
	if (t & PERF_SAMPLE_CPU) {
		p = psynth_put32(p, cpu);
		p = psynth_put32(p, 0);
	}
	if (t & PERF_SAMPLE_IDENTIFIER)
		p = psynth_put64(p, id);
	return p;
}

static size_t psynth_finish(void *buf, uint8_t *end, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc };
	size_t size = (size_t)(end - (uint8_t *)buf);

	if (size > 65535 - 7)
		return 0;
	h.size = (uint16_t)size;
	memcpy(buf, &h, sizeof(h));
	return size;
}

size_t psynth_comm(const struct pdec *d, uint64_t id, void *buf, uint32_t pid, uint32_t tid,
		   const char *comm, uint64_t time, uint32_t cpu)
{
	uint8_t *p = (uint8_t *)buf + sizeof(struct perf_event_header);
	size_t n = strnlen(comm, 15);

	p = psynth_put32(p, pid);
	p = psynth_put32(p, tid);
	p = psynth_putstr(p, comm, n);
	p = psynth_put_trailer(d, p, pid, tid, time, cpu, id);
	return psynth_finish(buf, p, PERF_RECORD_COMM, 0);
}

size_t psynth_task(const struct pdec *d, uint64_t id, void *buf, uint32_t type, uint32_t pid,
		   uint32_t ppid, uint32_t tid, uint32_t ptid, uint64_t time, uint32_t cpu)
{
	uint8_t *p = (uint8_t *)buf + sizeof(struct perf_event_header);

	p = psynth_put32(p, pid);
	p = psynth_put32(p, ppid);
	p = psynth_put32(p, tid);
	p = psynth_put32(p, ptid);
	p = psynth_put64(p, time);
	p = psynth_put_trailer(d, p, pid, tid, time, cpu, id);
	return psynth_finish(buf, p, type, 0);
}

size_t psynth_mmap2(const struct pdec *d, uint64_t id, void *buf, uint32_t pid, uint32_t tid,
		    uint64_t start, uint64_t len, uint64_t pgoff, uint32_t maj, uint32_t min,
		    uint64_t ino, uint32_t prot, uint32_t flags, const char *filename,
		    uint64_t time, uint32_t cpu)
{
	uint8_t *p = (uint8_t *)buf + sizeof(struct perf_event_header);
	size_t n = strlen(filename);
	uint16_t misc = PERF_RECORD_MISC_USER;

	if (n > PSYNTH_MAX_RECORD - 256)
		return 0;
	if (!(prot & PROT_EXEC))
		misc |= PERF_RECORD_MISC_MMAP_DATA;
	p = psynth_put32(p, pid);
	p = psynth_put32(p, tid);
	p = psynth_put64(p, start);
	p = psynth_put64(p, len);
	p = psynth_put64(p, pgoff);
	p = psynth_put32(p, maj);
	p = psynth_put32(p, min);
	p = psynth_put64(p, ino);
	p = psynth_put64(p, 0); /* ino_generation */
	p = psynth_put32(p, prot);
	p = psynth_put32(p, flags);
	p = psynth_putstr(p, filename, n);
	p = psynth_put_trailer(d, p, pid, tid, time, cpu, id);
	return psynth_finish(buf, p, PERF_RECORD_MMAP2, misc);
}

static bool psynth_all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* first line of a small file, newline stripped; -errno */
static int psynth_read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int ret = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		ret = ferror(f) ? -EIO : -ENODATA;
	fclose(f);
	if (!ret)
		buf[strcspn(buf, "\n")] = 0;
	return ret;
}

static int psynth_emit(const struct psynth_ctx *c, const void *rec, size_t len)
{
	return len ? c->emit(c->arg, rec, len) : 0;
}

/*
 * One maps line: "start-end perms offset maj:min inode   path".
 * Emits an MMAP2 for executable mappings and [heap].
 */
static int psynth_map_line(const struct psynth_ctx *c, uint32_t pid, char *line, void *buf)
{
	unsigned long long start, end, off, ino;
	unsigned maj, min;
	char perms[8];
	int pos = 0;
	const char *path;
	uint32_t prot = 0, flags;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min,
		   &ino, &pos) < 7 ||
	    strlen(perms) < 4)
		return 0; /* not a mapping line: ignore */
	path = line + pos;
	if (!*path)
		path = "//anon";
	if (perms[0] == 'r')
		prot |= PROT_READ;
	if (perms[1] == 'w')
		prot |= PROT_WRITE;
	if (perms[2] == 'x')
		prot |= PROT_EXEC;
	flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	if (!(prot & PROT_EXEC) && strcmp(path, "[heap]"))
		return 0;
	if (!strncmp(path, "/memfd:", 7)) {
		c->stats->skipped_maps++;
		return 0;
	}
	c->stats->maps++;
	return psynth_emit(c, buf,
			   psynth_mmap2(c->dec, c->id, buf, pid, pid, start, end - start, off, maj,
					min, ino, prot, flags, path, 0, 0));
}

int psynth_pid(const struct psynth_ctx *c, uint32_t pid)
{
	char path[4096 + 64], comm[64];
	uint8_t buf[PSYNTH_MAX_RECORD] __attribute__((aligned(8)));
	struct dirent *de;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	DIR *dir;
	int ret = 0;

	snprintf(path, sizeof(path), "%s/%" PRIu32 "/comm", c->proc_root, pid);
	if (psynth_read_line(path, comm, sizeof(comm)) < 0) {
		snprintf(path, sizeof(path), "%s/%" PRIu32, c->proc_root, pid);
		if (access(path, F_OK))
			return -ESRCH;
		c->stats->unreadable++;
		snprintf(comm, sizeof(comm), ":%" PRIu32, pid);
	}
	c->stats->procs++;
	ret = psynth_emit(c, buf, psynth_comm(c->dec, c->id, buf, pid, pid, comm, 0, 0));
	if (ret)
		return ret;

	snprintf(path, sizeof(path), "%s/%" PRIu32 "/maps", c->proc_root, pid);
	f = fopen(path, "re");
	if (!f) {
		c->stats->unreadable++;
	} else {
		ssize_t n;

		errno = 0;
		while ((n = getline(&line, &cap, f)) > 0) {
			if (line[n - 1] == '\n')
				line[n - 1] = 0;
			ret = psynth_map_line(c, pid, line, buf);
			if (ret)
				break;
		}
		/* /proc/1/maps: open works, read fails with EACCES */
		if (ferror(f) && !ret)
			c->stats->unreadable++;
		fclose(f);
		free(line);
		if (ret)
			return ret;
	}

	/* the other threads: FORK from the main thread, then their COMM */
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/task", c->proc_root, pid);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((de = readdir(dir))) {
		char *endp;
		unsigned long tid;

		if (!psynth_all_digits(de->d_name))
			continue;
		tid = strtoul(de->d_name, &endp, 10);
		if (tid == pid || tid > UINT32_MAX)
			continue;
		c->stats->threads++;
		ret = psynth_emit(c, buf,
				  psynth_task(c->dec, c->id, buf, PERF_RECORD_FORK, pid, pid,
					      (uint32_t)tid, pid, 0, 0));
		if (ret)
			break;
		snprintf(path, sizeof(path), "%s/%" PRIu32 "/task/%lu/comm", c->proc_root, pid, tid);
		if (psynth_read_line(path, comm, sizeof(comm)) < 0)
			continue;
		ret = psynth_emit(c, buf,
				  psynth_comm(c->dec, c->id, buf, pid, (uint32_t)tid, comm, 0, 0));
		if (ret)
			break;
	}
	closedir(dir);
	return ret;
}

int psynth_all(const struct psynth_ctx *c)
{
	DIR *dir = opendir(c->proc_root);
	struct dirent *de;
	int ret = 0;

	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		unsigned long pid;

		if (!psynth_all_digits(de->d_name))
			continue;
		pid = strtoul(de->d_name, NULL, 10);
		if (pid == 0 || pid > UINT32_MAX)
			continue;
		ret = psynth_pid(c, (uint32_t)pid);
		if (ret == -ESRCH) {
			ret = 0; /* exited meanwhile */
			continue;
		}
		if (ret)
			break;
	}
	closedir(dir);
	return ret;
}
