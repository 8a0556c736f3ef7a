/*
 * bare_sampler.c - the machine's floor for sampling one command: cpu-clock
 * on every CPU for the command (inherited, enabled at exec, the same sample
 * records oprofiled asks for), rings big enough never to fill, and nobody
 * reading them while the command runs (no wakeups, no reader CPU). What the
 * command loses under it is the kernel's own per-sample cost.
 * Usage: bare_sampler [-c PERIOD_NS] [-m RING_PAGES] [-p] -- COMMAND [ARGS]
 * -p: the records perf record -c asks for instead (IP TID TIME, the
 * kernel's own clock), to tell a cost of the record layout from the rest.
 * At the end, on stderr: samples written, records lost (must be 0, else
 * raise -m), ring bytes. Exit status: the command's.
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BS_MAX_CPUS 256

struct bs_cpu {
	int fd;
	void *base;
	size_t len;
};

static int bs_usage(const char *me)
{
	fprintf(stderr, "usage: %s [-c PERIOD_NS (default 1000000)] [-m RING_PAGES "
		"(power of two, default 1024)] [-p (perf record's records)] -- COMMAND [ARGS]\n",
		me);
	return 2;
}

static int bs_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* count SAMPLE records in a ring nobody read (so nothing wrapped if no loss) */
static uint64_t bs_count(const struct bs_cpu *c, size_t data_size, uint64_t *bytes)
{
	const struct perf_event_mmap_page *pg = c->base;
	const uint8_t *data = (const uint8_t *)c->base + pg->data_offset;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE), off = 0, n = 0;

	*bytes = head;
	if (head > data_size)
		return 0; /* wrapped: cannot happen without loss, the caller reports it */
	while (off + sizeof(struct perf_event_header) <= head) {
		const struct perf_event_header *h = (const void *)(data + off);

		if (h->size < sizeof(*h))
			break;
		if (h->type == PERF_RECORD_SAMPLE)
			n++;
		off += h->size;
	}
	return n;
}

int main(int argc, char **argv)
{
	struct bs_cpu cpus[BS_MAX_CPUS];
	unsigned long long period = 1000000, pages = 1024;
	long page = sysconf(_SC_PAGESIZE), ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t samples = 0, lost = 0, bytes = 0;
	int go[2], opt, status = 0, n = 0, i;
	bool perf_layout = false;
	pid_t pid;
	char c = 'g';

	while ((opt = getopt(argc, argv, "+c:m:p")) != -1) {
		char *end = "";

		errno = 0;
		if (opt == 'p')
			perf_layout = true;
		else if (opt == 'c')
			period = strtoull(optarg, &end, 0);
		else if (opt == 'm')
			pages = strtoull(optarg, &end, 0);
		else
			return bs_usage(argv[0]);
		if (errno || *end || !period || !pages || (pages & (pages - 1)))
			return bs_usage(argv[0]);
	}
	if (optind >= argc)
		return bs_usage(argv[0]);
	if (ncpu < 1 || ncpu > BS_MAX_CPUS) {
		fprintf(stderr, "bare_sampler: %ld online CPUs: expected 1..%d\n", ncpu, BS_MAX_CPUS);
		return 2;
	}
	if (pipe2(go, O_CLOEXEC)) {
		perror("bare_sampler: pipe");
		return 2;
	}
	pid = fork();
	if (pid < 0) {
		perror("bare_sampler: fork");
		return 2;
	}
	if (pid == 0) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "bare_sampler: cannot run %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	for (n = 0; n < ncpu; n++) {
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = PERF_TYPE_SOFTWARE;
		a.config = PERF_COUNT_SW_CPU_CLOCK;
		a.sample_period = period;
		/* the records oprofiled's rings carry (PDEC_BASE_SAMPLE_TYPE) */
		a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
				PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
		a.read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
		a.disabled = 1;
		a.inherit = 1;
		a.enable_on_exec = 1;
		a.sample_id_all = 1;
		a.use_clockid = 1;
		a.clockid = CLOCK_MONOTONIC;
		if (perf_layout) {
			a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
			a.use_clockid = 0;
			a.clockid = 0;
		}
		/* one wakeup per full ring at most, and the ring never fills */
		a.watermark = 1;
		a.wakeup_watermark = (uint32_t)(pages * (unsigned long long)page);
		cpus[n].fd = bs_open(&a, pid, n);
		if (cpus[n].fd < 0) {
			fprintf(stderr, "bare_sampler: perf_event_open(cpu-clock, pid %d, cpu %d): %s\n",
				(int)pid, n, strerror(errno));
			goto out_kill;
		}
		cpus[n].len = (size_t)(pages + 1) * (size_t)page;
		cpus[n].base = mmap(NULL, cpus[n].len, PROT_READ | PROT_WRITE, MAP_SHARED,
				    cpus[n].fd, 0);
		if (cpus[n].base == MAP_FAILED) {
			fprintf(stderr, "bare_sampler: mmap of %llu ring pages: %s - lower -m or raise "
				"/proc/sys/kernel/perf_event_mlock_kb\n", pages, strerror(errno));
			close(cpus[n].fd);
			goto out_kill;
		}
	}
	if (write(go[1], &c, 1) != 1) {
		perror("bare_sampler: releasing the command");
		goto out_kill;
	}
	close(go[1]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	for (i = 0; i < n; i++) {
		uint64_t v[3] = { 0 }, b;

		ioctl(cpus[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		if (read(cpus[i].fd, v, sizeof(v)) == (ssize_t)sizeof(v))
			lost += v[2];
		samples += bs_count(&cpus[i], (size_t)pages * (size_t)page, &b);
		bytes += b;
		munmap(cpus[i].base, cpus[i].len);
		close(cpus[i].fd);
	}
	fprintf(stderr, "bare_sampler: %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64
		" ring bytes%s\n", samples, lost, bytes,
		lost ? " - the floor is too low: raise -m" : "");
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;

out_kill:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	for (i = 0; i < n; i++) {
		munmap(cpus[i].base, cpus[i].len);
		close(cpus[i].fd);
	}
	return 2;
}
