/*
 * main.c - oprofiled entry point (placeholder until the sample path lands).
 * SPDX-License-Identifier: MIT
 */
#include <stdio.h>

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "oprofiled: not implemented yet\n");
	return 1;
}
