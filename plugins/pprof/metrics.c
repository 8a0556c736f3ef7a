/*
 * metrics.c - GET /metrics: what `opcontrol --status` says, in Prometheus'
 * text exposition format. The numbers come from the daemon's own thread
 * through its control socket (the "status" request opcontrol makes), so
 * that nothing here reads the core's counters while the sample path writes
 * them, and the sample path takes no lock for a scrape: the daemon answers
 * between two drain rounds, like any opcontrol. Plus this process' RSS,
 * virtual size and CPU time, which the plugin reads itself.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "metrics.h"
#include "op_session_layout.h"

/* a status reply is a few KiB; anything near this is not one */
#define PM_REPLY_MAX (256 * 1024)

/* ------------------------------------------------------------------ */
/* the control socket                                                  */
/* ------------------------------------------------------------------ */

static uint64_t pm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* wait for @ev on @fd until @deadline_ms; 0, -ETIMEDOUT or -errno */
static int pm_wait(int fd, short ev, uint64_t deadline_ms)
{
	struct pollfd p = { .fd = fd, .events = ev };
	uint64_t now = pm_now_ms();
	int n;

	if (now >= deadline_ms)
		return -ETIMEDOUT;
	n = poll(&p, 1, (int)(deadline_ms - now));
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	return n ? 0 : -ETIMEDOUT;
}

/* "status\n" to <session>/control; the reply's body (after "ok\n") in *out */
static int pm_status(const char *session_dir, unsigned timeout_ms, char **out, char *err,
		     size_t err_len)
{
	static const char req[] = "status\n";
	uint64_t deadline = pm_now_ms() + timeout_ms;
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	size_t off = 0, sent = 0, cap = 16384;
	int dfd, fd, rc = 0;
	char *buf = NULL;

	/* through the directory's fd: a session path of any length fits sun_path */
	dfd = open(session_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(err, err_len, "%s: %s", session_dir, strerror(errno));
		return -errno;
	}
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/" OP_SESSION_CONTROL, dfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		rc = -errno;
		snprintf(err, err_len, "%s/%s: %s", session_dir, OP_SESSION_CONTROL,
			 strerror(errno));
		goto out;
	}
	while (sent < sizeof(req) - 1) {
		ssize_t n = send(fd, req + sent, sizeof(req) - 1 - sent, MSG_NOSIGNAL);

		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			rc = -errno;
			goto io;
		}
		if (n > 0)
			sent += (size_t)n;
		else if ((rc = pm_wait(fd, POLLOUT, deadline)))
			goto io;
	}
	buf = malloc(cap + 1);
	if (!buf) {
		rc = -ENOMEM;
		goto io;
	}
	/* the daemon closes the connection after the reply */
	for (;;) {
		ssize_t n;

		if (off == cap) {
			char *nb = cap >= PM_REPLY_MAX ? NULL : realloc(buf, 2 * cap + 1);

			if (!nb) {
				rc = -EFBIG;
				goto io;
			}
			buf = nb;
			cap *= 2;
		}
		n = recv(fd, buf + off, cap - off, 0);
		if (n == 0)
			break;
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (errno != EAGAIN && errno != EINTR) {
			rc = -errno;
			goto io;
		}
		if ((rc = pm_wait(fd, POLLIN, deadline)))
			goto io;
	}
	buf[off] = 0;
	if (strncmp(buf, "ok\n", 3)) {
		snprintf(err, err_len, "the daemon refused the status request: %.200s", buf);
		rc = -EPROTO;
		goto out;
	}
	memmove(buf, buf + 3, off - 2);
	*out = buf;
	buf = NULL;
	goto out;
io:
	snprintf(err, err_len, "%s/%s: %s", session_dir, OP_SESSION_CONTROL, strerror(-rc));
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	close(dfd);
	return rc;
}

/* ------------------------------------------------------------------ */
/* the exposition text                                                 */
/* ------------------------------------------------------------------ */

static void pm_metric(FILE *f, const char *name, const char *type, const char *help, uint64_t v)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s %" PRIu64 "\n", name, help, name, type, name, v);
}

/* a plugin's or counter's name as a metric name component: [a-z0-9_] */
static void pm_name(char *dst, size_t len, const char *src, size_t n)
{
	size_t i;

	for (i = 0; i < n && i + 1 < len; i++) {
		char c = src[i];

		dst[i] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ? c :
			 (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') :
						  '_';
	}
	dst[i] = 0;
}

/* "key: N" exactly (a plugin's counter); false for its free-form lines */
static bool pm_counter_line(const char *line, size_t *key_len, uint64_t *v)
{
	const char *colon = strchr(line, ':'), *p;
	char *end;

	if (!colon || colon == line || colon[1] != ' ' || colon[2] < '0' || colon[2] > '9')
		return false;
	for (p = line; p < colon; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	errno = 0;
	*v = strtoull(colon + 2, &end, 10);
	if (errno || *end)
		return false;
	*key_len = (size_t)(colon - line);
	return true;
}

static void pm_process(FILE *f)
{
	unsigned long long pages_vm = 0, pages_rss = 0;
	long page = sysconf(_SC_PAGESIZE);
	struct rusage ru;
	FILE *sm;

	sm = fopen("/proc/self/statm", "re");
	if (sm) {
		if (fscanf(sm, "%llu %llu", &pages_vm, &pages_rss) == 2) {
			pm_metric(f, "process_resident_memory_bytes", "gauge",
				  "Resident memory size of oprofiled in bytes.",
				  (uint64_t)pages_rss * (uint64_t)page);
			pm_metric(f, "process_virtual_memory_bytes", "gauge",
				  "Virtual memory size of oprofiled in bytes.",
				  (uint64_t)pages_vm * (uint64_t)page);
		}
		fclose(sm);
	}
	/*
	 * the heap's use, for the RSS budget: what is live and what malloc
	 * keeps free (one arena, oprofiled's main(): a walk of its free lists,
	 * which the sample path, never allocating, does not wait on)
	 */
	{
		struct mallinfo2 mi = mallinfo2();

		pm_metric(f, "oprofiled_malloc_in_use_bytes", "gauge",
			  "Bytes malloc'd from the heap and not freed (mallinfo2 uordblks).",
			  (uint64_t)mi.uordblks);
		pm_metric(f, "oprofiled_malloc_mmap_bytes", "gauge",
			  "Bytes of blocks malloc mapped on their own (mallinfo2 hblkhd).",
			  (uint64_t)mi.hblkhd);
		pm_metric(f, "oprofiled_malloc_free_bytes", "gauge",
			  "Bytes freed but kept by malloc (mallinfo2 fordblks).",
			  (uint64_t)mi.fordblks);
	}
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		fprintf(f,
			"# HELP process_cpu_seconds_total User and system CPU time of oprofiled "
			"in seconds.\n# TYPE process_cpu_seconds_total counter\n"
			"process_cpu_seconds_total %ld.%06ld\n",
			(long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
			       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1000000),
			(long)((ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) % 1000000));
}

/* one line of the daemon's part of the status */
static void pm_core_line(FILE *f, const char *l)
{
	unsigned long long a, b, c;
	long long secs;

	if (sscanf(l, "running since: %*s (%lld s)", &secs) == 1 && secs >= 0)
		pm_metric(f, "oprofiled_uptime_seconds", "gauge",
			  "Seconds since the daemon started profiling.", (uint64_t)secs);
	else if (sscanf(l, "samples: %llu (this session %llu)", &a, &b) == 2) {
		pm_metric(f, "oprofiled_samples_total", "counter",
			  "Samples received from the kernel since the daemon started (every "
			  "session).",
			  a);
		pm_metric(f, "oprofiled_session_samples", "gauge",
			  "Samples received in the current session (samples/current).", b);
	} else if (sscanf(l, "lost: %llu samples (this session %llu)", &a, &b) == 2)
		pm_metric(f, "oprofiled_lost_samples_total", "counter",
			  "Received samples the daemon could not attribute, since it started.", a);
	else if (sscanf(l,
			"kernel dropped: %llu samples, %llu mmap/comm/fork/exit records, %llu "
			"records of unknown kind",
			&a, &b, &c) == 3) {
		pm_metric(f, "oprofiled_kernel_dropped_samples_total", "counter",
			  "Samples the kernel dropped because a ring was full.", a);
		pm_metric(f, "oprofiled_kernel_dropped_sideband_total", "counter",
			  "mmap/comm/fork/exit records the kernel dropped.", b);
		pm_metric(f, "oprofiled_kernel_dropped_records_total", "counter",
			  "Records of unknown kind the kernel dropped.", c);
	} else if (sscanf(l, "open sample files: %llu (sets %llu, max_open_files %llu)", &a, &b,
			  &c) == 3) {
		pm_metric(f, "oprofiled_open_sample_files", "gauge", "Sample files open (mmap'd).",
			  a);
		pm_metric(f, "oprofiled_max_open_sample_files", "gauge",
			  "The bound on open sample files (max_open_files).", c);
	} else if (sscanf(l, "open file descriptors: %llu", &a) == 1)
		pm_metric(f, "process_open_fds", "gauge", "Open file descriptors of oprofiled.", a);
	else if (!strncmp(l, "rotation: ", 10) && strstr(l, "done ") &&
		 sscanf(strstr(l, "done "), "done %llu", &a) == 1)
		pm_metric(f, "oprofiled_rotations_total", "counter",
			  "Sessions set aside by rotation since the daemon started.", a);
	else if (sscanf(l, "saves: %llu, resets: %llu", &a, &b) == 2) {
		pm_metric(f, "oprofiled_saves_total", "counter", "opcontrol --save requests.", a);
		pm_metric(f, "oprofiled_resets_total", "counter", "opcontrol --reset requests.", b);
	}
}

static int pm_format(char *text, char **out, size_t *len)
{
	char plugin[80] = "", name[256], *line, *save = NULL;
	FILE *f = open_memstream(out, len);
	bool in_plugins = false;

	if (!f)
		return -ENOMEM;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t n, kl;
		uint64_t v;

		if (!strcmp(line, "plugins:")) {
			in_plugins = true;
		} else if (!in_plugins) {
			pm_core_line(f, line);
		} else if (!strncmp(line, "-- plugin ", 10) && (n = strlen(line)) > 13 &&
			   !strcmp(line + n - 3, " --")) {
			pm_name(plugin, sizeof(plugin), line + 10, n - 13);
		} else if (plugin[0] && pm_counter_line(line, &kl, &v)) {
			char key[128];

			pm_name(key, sizeof(key), line, kl);
			snprintf(name, sizeof(name), "oprofiled_plugin_%s_%s", plugin, key);
			fprintf(f,
				"# HELP %s Counter \"%s\" of the %s plugin (opcontrol --status).\n"
				"# TYPE %s untyped\n%s %" PRIu64 "\n",
				name, key, plugin, name, name, v);
		}
	}
	pm_process(f);
	if (fclose(f))
		return -ENOMEM;
	return 0;
}

int pm_scrape(const char *session_dir, unsigned timeout_ms, char **out, size_t *len, char *err,
	      size_t err_len)
{
	char *status = NULL;
	int rc;

	*out = NULL;
	*len = 0;
	rc = pm_status(session_dir, timeout_ms, &status, err, err_len);
	if (rc)
		return rc;
	rc = pm_format(status, out, len);
	free(status);
	if (rc)
		snprintf(err, err_len, "out of memory");
	return rc;
}
