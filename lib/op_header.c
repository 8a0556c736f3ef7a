/*
 * op_header.c - sample-file header helpers.
 * SPDX-License-Identifier: MIT
 */
#include <string.h>

#include "op_header.h"

void op_header_init(struct opd_header *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, OPD_MAGIC, 4);
	h->version = OPD_VERSION;
}
