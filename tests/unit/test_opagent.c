/*
 * test_opagent.c - libopagent against lib/op_jit's reader: what the API
 * calls write is read back field by field (names, code bytes, line tables,
 * unloads, close); the dump is mapped executable while open; concurrent
 * writers never interleave records; a writer killed mid-stream leaves a
 * readable prefix; the dump directory's owner and mode are checked; bad
 * handles and arguments fail with -1 and errno as OProfile documents.
 * SPDX-License-Identifier: MIT
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "op_jit.h"
#include "opagent.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/test_opagent.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	setenv("OPROFILE_JITDUMP_DIR", dir, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) ? -1 : 0;
}

static void dump_path(char *buf, size_t len, pid_t pid)
{
	snprintf(buf, len, "%s/%d.dump", dir, (int)pid);
}

struct rd {
	pid_t pid; /* the writer; 0: this process */
	int n[OP_JIT_NR_KINDS];
	char names[8][64];
	uint64_t addr[8], size[8], index[8], ts_last;
	uint8_t code[8][16];
	size_t nlines;
	char files[4][32];
	uint32_t linenos[4];
	uint64_t debug_addr, unload_addr;
	bool ts_backwards;
	int loads;
	uint64_t per_thread[8]; /* LOAD names "tK-N": N in order per thread */
	bool order_bad;
};

static int on_rec(void *priv, const struct op_jit_rec *r)
{
	struct rd *d = priv;

	d->n[r->kind]++;
	if (r->timestamp < d->ts_last)
		d->ts_backwards = true;
	d->ts_last = r->timestamp;
	switch (r->kind) {
	case OP_JIT_LOAD: {
		int i = d->loads++;
		unsigned t, k;

		assert_int_equal(r->load.pid, d->pid ? d->pid : getpid());
		if (sscanf(r->load.name, "t%u-%u", &t, &k) == 2 && t < 8) {
			if (k != d->per_thread[t])
				d->order_bad = true;
			d->per_thread[t]++;
			break;
		}
		if (i < 8) {
			snprintf(d->names[i], sizeof(d->names[i]), "%s", r->load.name);
			d->addr[i] = r->load.code_addr;
			d->size[i] = r->load.code_size;
			d->index[i] = r->load.code_index;
			memcpy(d->code[i], r->load.code,
			       r->load.code_size < 16 ? r->load.code_size : 16);
		}
		break;
	}
	case OP_JIT_DEBUG_INFO:
		d->debug_addr = r->debug.code_addr;
		d->nlines = r->debug.nr_entry;
		for (size_t i = 0; i < r->debug.nr_entry && i < 4; i++) {
			snprintf(d->files[i], sizeof(d->files[i]), "%s",
				 r->debug.entries[i].filename);
			d->linenos[i] = r->debug.entries[i].lineno;
		}
		break;
	case OP_JIT_UNLOAD:
		d->unload_addr = r->unload.vma;
		break;
	default:
		break;
	}
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* is @path mapped executable in this process? */
static bool mapped_exec(const char *path)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char perms[8];

		if (strstr(line, path) && sscanf(line, "%*s %7s", perms) == 1 && perms[2] == 'x')
			found = true;
	}
	fclose(f);
	return found;
}

static void test_write_read_back(void **state)
{
	static const uint8_t code[] = { 0x55, 0x48, 0x89, 0xe5, 0xc3 };
	struct debug_line_info li[3] = {
		{ 0x1000, 10, "Foo.java" },
		{ 0x1002, 11, "Foo.java" },
		{ 0x1004, 12, "Bar.java" },
	};
	struct op_jitdump_info info;
	struct op_jit_errors e;
	struct rd d = { .loads = 0 };
	char path[128];
	uint64_t t0 = mono_ns(), t1;
	op_agent_t a;

	(void)state;
	assert_int_equal(op_major_version(), 1);
	assert_int_equal(op_minor_version(), 0);
	a = op_open_agent();
	assert_non_null(a);
	dump_path(path, sizeof(path), getpid());
	assert_true(mapped_exec(path));
	assert_int_equal(op_write_native_code(a, "Lfoo;bar()V", 0x1000, code, sizeof(code)), 0);
	assert_int_equal(op_write_debug_line_info(a, (void *)0x1000, 3, li), 0);
	/* NULL code: the bytes are read from vma (here: our own array) */
	assert_int_equal(op_write_native_code(a, "from_vma", (uint64_t)(uintptr_t)code, NULL,
					      sizeof(code)),
			 0);
	/* NULL code at an unreadable vma: zeros, not a crash */
	assert_int_equal(op_write_native_code(a, "unreadable", 8, NULL, 4), 0);
	/* a name with a newline is escaped by the reader */
	assert_int_equal(op_write_native_code(a, "two\nlines", 0x3000, code, 1), 0);
	assert_int_equal(op_unload_native_code(a, 0x1000), 0);
	assert_int_equal(op_close_agent(a), 0);
	t1 = mono_ns();
	assert_false(mapped_exec(path));

	assert_int_equal(op_jitdump_read_file(path, on_rec, &d, &info, &e), 0);
	assert_int_equal(info.pid, getpid());
	assert_int_equal(info.flags, 0);
	assert_false(info.swapped);
#if defined(__x86_64__)
	assert_int_equal(info.elf_mach, 62);
#endif
	/* CLOCK_MONOTONIC, the daemon's sample clock */
	assert_true(info.timestamp >= t0 && info.timestamp <= t1);
	assert_true(d.ts_last >= t0 && d.ts_last <= t1);
	assert_false(d.ts_backwards);
	assert_int_equal(d.n[OP_JIT_LOAD], 4);
	assert_int_equal(d.n[OP_JIT_DEBUG_INFO], 1);
	assert_int_equal(d.n[OP_JIT_UNLOAD], 1);
	assert_int_equal(d.n[OP_JIT_CLOSE], 1);
	assert_string_equal(d.names[0], "Lfoo;bar()V");
	assert_int_equal(d.addr[0], 0x1000);
	assert_int_equal(d.size[0], sizeof(code));
	assert_memory_equal(d.code[0], code, sizeof(code));
	assert_string_equal(d.names[1], "from_vma");
	assert_memory_equal(d.code[1], code, sizeof(code));
	assert_string_equal(d.names[2], "unreadable");
	assert_memory_equal(d.code[2], "\0\0\0\0", 4);
	assert_string_equal(d.names[3], "two\\x0alines");
	/* code_index counts the loads */
	assert_int_equal(d.index[0], 0);
	assert_int_equal(d.index[3], 3);
	assert_int_equal(d.debug_addr, 0x1000);
	assert_int_equal(d.nlines, 3);
	assert_string_equal(d.files[0], "Foo.java");
	assert_string_equal(d.files[1], "Foo.java"); /* written as perf's "\xff" repeat */
	assert_string_equal(d.files[2], "Bar.java");
	assert_int_equal(d.linenos[2], 12);
	assert_int_equal(d.unload_addr, 0x1000);
	/* escaping the newline is the only defect counted */
	assert_int_equal(op_jit_errors_total(&e), 1);
	assert_int_equal(e.name_escaped, 1);
	unlink(path);
}

static void test_bad_arguments(void **state)
{
	struct debug_line_info li = { 0, 1, "x" };
	op_agent_t a;
	char path[128];

	(void)state;
	errno = 0;
	assert_int_equal(op_close_agent(NULL), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(op_write_native_code(NULL, "x", 1, "x", 1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(op_write_debug_line_info(NULL, "x", 1, &li), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(op_unload_native_code(NULL, 1), -1);
	assert_int_equal(errno, EINVAL);
	a = op_open_agent();
	assert_non_null(a);
	errno = 0;
	assert_int_equal(op_write_native_code(a, NULL, 1, "x", 1), -1);
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_int_equal(op_write_debug_line_info(a, "x", 1, NULL), -1);
	assert_int_equal(errno, EINVAL);
	/* more code than a record may hold */
	errno = 0;
	assert_int_equal(op_write_native_code(a, "huge", 1, "x", 0xffffffffu), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(op_write_debug_line_info(a, "x", 0, NULL), 0);
	assert_int_equal(op_close_agent(a), 0);
	dump_path(path, sizeof(path), getpid());
	unlink(path);
}

/* a stale dump of a dead process with our pid is replaced */
static void test_stale_dump_replaced(void **state)
{
	struct rd d = { .loads = 0 };
	struct op_jit_errors e;
	char path[128];
	op_agent_t a;
	FILE *f;

	(void)state;
	dump_path(path, sizeof(path), getpid());
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("not a dump", f);
	fclose(f);
	a = op_open_agent();
	assert_non_null(a);
	assert_int_equal(op_write_native_code(a, "fresh", 1, "x", 1), 0);
	assert_int_equal(op_close_agent(a), 0);
	assert_int_equal(op_jitdump_read_file(path, on_rec, &d, NULL, &e), 0);
	assert_int_equal(d.n[OP_JIT_LOAD], 1);
	assert_int_equal(op_jit_errors_total(&e), 0);
	unlink(path);
}

/* a directory others could swap our dump in is refused */
static void test_untrusted_dir(void **state)
{
	char sub[128];

	(void)state;
	snprintf(sub, sizeof(sub), "%s/open", dir);
	assert_int_equal(mkdir(sub, 0700), 0);
	assert_int_equal(chmod(sub, 0777), 0);
	setenv("OPROFILE_JITDUMP_DIR", sub, 1);
	errno = 0;
	assert_null(op_open_agent());
	assert_int_equal(errno, EPERM);
	/* sticky (like /tmp): accepted */
	assert_int_equal(chmod(sub, 01777), 0);
	{
		op_agent_t a = op_open_agent();
		char path[160];

		assert_non_null(a);
		assert_int_equal(op_close_agent(a), 0);
		snprintf(path, sizeof(path), "%s/%d.dump", sub, (int)getpid());
		assert_int_equal(unlink(path), 0);
	}
	if (geteuid() == 0) {
		/* owned by somebody else */
		assert_int_equal(chmod(sub, 0755), 0);
		assert_int_equal(chown(sub, 12345, 12345), 0);
		errno = 0;
		assert_null(op_open_agent());
		assert_int_equal(errno, EPERM);
	}
	/* a symbolic link is not followed */
	{
		char link[160];

		snprintf(link, sizeof(link), "%s/link", dir);
		assert_int_equal(symlink(dir, link), 0);
		setenv("OPROFILE_JITDUMP_DIR", link, 1);
		errno = 0;
		assert_null(op_open_agent());
		assert_int_not_equal(errno, 0);
	}
	setenv("OPROFILE_JITDUMP_DIR", dir, 1);
}

#define THREADS 4
#define PER_THREAD 2000

struct th {
	op_agent_t a;
	int id;
	bool forever; /* until killed */
};

static void *writer(void *arg)
{
	struct th *t = arg;
	uint8_t code[40];
	struct debug_line_info li[2] = { { 0, 1, "t.c" }, { 1, 2, "t.c" } };

	memset(code, 0xc3, sizeof(code));
	for (int k = 0; k < PER_THREAD || t->forever; k++) {
		char name[32];

		snprintf(name, sizeof(name), "t%d-%d", t->id, k);
		if (op_write_native_code(t->a, name, (uint64_t)k, code, (unsigned)(k % 40)))
			return (void *)1;
		if (op_write_debug_line_info(t->a, (void *)(uintptr_t)k, 2, li))
			return (void *)1;
	}
	return NULL;
}

/* JVM compiler threads write at once: every record whole, per-thread order kept */
static void test_threads(void **state)
{
	pthread_t tid[THREADS];
	struct th t[THREADS];
	struct rd d = { .loads = 0 };
	struct op_jit_errors e;
	char path[128];
	op_agent_t a = op_open_agent();

	(void)state;
	assert_non_null(a);
	for (int i = 0; i < THREADS; i++) {
		t[i].a = a;
		t[i].id = i;
		t[i].forever = false;
		assert_int_equal(pthread_create(&tid[i], NULL, writer, &t[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		void *rv;

		assert_int_equal(pthread_join(tid[i], &rv), 0);
		assert_null(rv);
	}
	assert_int_equal(op_close_agent(a), 0);
	dump_path(path, sizeof(path), getpid());
	assert_int_equal(op_jitdump_read_file(path, on_rec, &d, NULL, &e), 0);
	assert_int_equal(op_jit_errors_total(&e), 0);
	assert_int_equal(d.n[OP_JIT_LOAD], THREADS * PER_THREAD);
	assert_int_equal(d.n[OP_JIT_DEBUG_INFO], THREADS * PER_THREAD);
	for (int i = 0; i < THREADS; i++)
		assert_int_equal(d.per_thread[i], PER_THREAD);
	assert_false(d.order_bad);
	unlink(path);
}

/* SIGKILL while four threads write: what is on disk reads as whole records */
static void test_killed_writer(void **state)
{
	struct rd d = { .loads = 0 };
	struct op_jit_errors e;
	char path[128];
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		op_agent_t a = op_open_agent();
		pthread_t tid[THREADS];
		struct th t[THREADS];

		if (!a)
			_exit(3);
		for (int i = 0; i < THREADS; i++) {
			t[i].a = a;
			t[i].id = i;
			t[i].forever = true;
			pthread_create(&tid[i], NULL, writer, &t[i]);
		}
		for (;;)
			pause();
	}
	usleep(30000);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	dump_path(path, sizeof(path), pid);
	d.pid = pid;
	assert_int_equal(op_jitdump_read_file(path, on_rec, &d, NULL, &e), 0);
	/* a record cut by the kill may end the file; nothing else is wrong */
	assert_int_equal(op_jit_errors_total(&e), e.truncated_tail);
	assert_true(d.n[OP_JIT_LOAD] > 0);
	assert_false(d.order_bad);
	print_message("killed writer left %d LOAD, %d DEBUG_INFO records, truncated tail %llu\n",
		      d.n[OP_JIT_LOAD], d.n[OP_JIT_DEBUG_INFO],
		      (unsigned long long)e.truncated_tail);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_read_back),
		cmocka_unit_test(test_bad_arguments),
		cmocka_unit_test(test_stale_dump_replaced),
		cmocka_unit_test(test_untrusted_dir),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_killed_writer),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
