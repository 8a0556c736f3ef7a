/*
 * buildid_fix.c - a small program linked three ways (--build-id=sha1, md5,
 * none) as test_buildid's real ELF fixtures.
 * SPDX-License-Identifier: MIT
 */
int main(int argc, char **argv)
{
	(void)argv;
	return argc > 5;
}
