/* opcount_user.c - a program built against the INSTALLED <opcount.h> and
 * opcount.pc (installcheck): counts its own page faults with libopcount.
 * SPDX-License-Identifier: MIT
 */
#include <opcount.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void)
{
	struct oc_target self = { .kind = OC_TARGET_THREAD, .id = 0, .cpu = -1 };
	struct oc_set *set;
	struct oc_error err;
	struct oc_value v;
	long ps = sysconf(_SC_PAGESIZE), n = 1000;
	volatile char *p;

	if (oc_open(&set, &self, "page-faults", OC_START, &err)) {
		fprintf(stderr, "opcount_user: %s\n", err.msg);
		return 1;
	}
	p = mmap(NULL, n * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	madvise((void *)p, n * ps, MADV_NOHUGEPAGE);
	for (long i = 0; i < n; i++)
		p[i * ps] = 1;
	if (oc_read(set, OC_VIEW_ALL, &v) || v.count < (uint64_t)n) {
		fprintf(stderr, "opcount_user: expected >= %ld page faults, read %llu\n", n,
			(unsigned long long)v.count);
		return 1;
	}
	printf("opcount_user: %llu page faults for %ld pages\n", (unsigned long long)v.count, n);
	oc_close(set);
	return 0;
}
