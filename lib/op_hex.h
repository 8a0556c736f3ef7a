/*
 * op_hex.h - one hex digit's value, for the parsers of libopng that read
 * hex by hand (sample-file name escapes, build IDs and their index).
 * Header only.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_HEX_H
#define OP_HEX_H

/* the value of hex digit @c (either case), -1 for anything else */
static inline int op_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

#endif /* OP_HEX_H */
