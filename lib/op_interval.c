/*
 * op_interval.c - the rotation interval grammar (op_interval.h).
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "op_interval.h"

int op_parse_interval(const char *s, unsigned *secs, char *err, size_t err_len)
{
	unsigned long long v, mult = 1;
	char *end;

	if (!s || *s < '0' || *s > '9')
		goto out_bad;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		goto out_bad;
	if (*end && end[1])
		goto out_bad;
	switch (*end) {
	case 0:
	case 's':
		mult = 1;
		break;
	case 'm':
		mult = 60;
		break;
	case 'h':
		mult = 3600;
		break;
	case 'd':
		mult = 86400;
		break;
	default:
		goto out_bad;
	}
	if (v > 86400ull * 366 / mult)
		goto out_bad;
	*secs = (unsigned)(v * mult);
	return 0;

out_bad:
	if (err && err_len)
		snprintf(err, err_len,
			 "interval \"%s\": expected seconds or a number with an s, m, h "
			 "or d suffix (30s, 5m, 1h, 1d), at most a year",
			 s ? s : "");
	return -EINVAL;
}
