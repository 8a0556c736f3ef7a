/*
 * op_xml.c - XML text escaping (op_xml.h).
 *
 * SPDX-License-Identifier: MIT
 */
#include <stdint.h>
#include <string.h>

#include "op_xml.h"

size_t op_utf8_len(const unsigned char *u, uint32_t *cp)
{
	size_t n;
	uint32_t c, min;

	if (u[0] < 0x80) {
		if (cp)
			*cp = u[0];
		return 1;
	}
	if ((u[0] & 0xe0) == 0xc0) {
		n = 2, c = u[0] & 0x1f, min = 0x80;
	} else if ((u[0] & 0xf0) == 0xe0) {
		n = 3, c = u[0] & 0x0f, min = 0x800;
	} else if ((u[0] & 0xf8) == 0xf0) {
		n = 4, c = u[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((u[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
			return 0;
		c = (c << 6) | (u[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	if (cp)
		*cp = c;
	return n;
}

size_t op_xml_put(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = 0;

	while (*u) {
		uint32_t c = 0;
		size_t n = op_utf8_len(u, &c);
		const char *ent = NULL;

		if (!n || c == 0xfffe || c == 0xffff ||
		    (c < 0x20 && c != '\t' && c != '\n' && c != '\r'))
			ent = "&#xfffd;";
		else if (c == '&')
			ent = "&amp;";
		else if (c == '<')
			ent = "&lt;";
		else if (c == '>')
			ent = "&gt;";
		else if (c == '"')
			ent = "&quot;";
		else if (c == '\'')
			ent = "&apos;";
		else if (c == '\t')
			ent = "&#9;";
		else if (c == '\n')
			ent = "&#10;";
		else if (c == '\r')
			ent = "&#13;";
		if (ent) {
			fputs(ent, f);
			o += strlen(ent);
		} else {
			fwrite(u, 1, n, f);
			o += n;
		}
		u += n ? n : 1;
	}
	return o;
}
