/*
 * sp_work.h - CPU-time spinning shared by the sample-path workloads.
 * SPDX-License-Identifier: MIT
 */
#ifndef SP_WORK_H
#define SP_WORK_H

#include <time.h>

static inline long long sp_cpu_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

#endif
