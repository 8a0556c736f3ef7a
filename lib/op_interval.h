/*
 * op_interval.h - the rotation interval grammar, one parser for oprofiled's
 * option, config key and control request and for opcontrol's check.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_INTERVAL_H
#define OP_INTERVAL_H

#include <stddef.h>

/*
 * @s: seconds, or a number with an s, m, h or d suffix ("90", "30s", "5m",
 * "1h", "1d"), at most a year. Returns 0 with *secs set, or -EINVAL with a
 * message in @err (if not NULL) naming the value and the expected form.
 */
int op_parse_interval(const char *s, unsigned *secs, char *err, size_t err_len);

#endif /* OP_INTERVAL_H */
