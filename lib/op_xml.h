/*
 * op_xml.h - XML text escaping shared by the tools that write XML (ophelp -X;
 * opreport -X may call it too): in lib/ so that tools which do not link
 * libbfd (ophelp is MIT) have it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_XML_H
#define OP_XML_H

#include <stddef.h>
#include <stdio.h>

/*
 * Write @s as XML character data or attribute text (without the quotes):
 * & < > " ' as entities; tab, newline and carriage return as &#9; &#10;
 * &#13; (so an attribute keeps them instead of having them normalised to
 * spaces); bytes that are not UTF-8, other C0 controls and U+FFFE/U+FFFF
 * (which XML 1.0 cannot carry) as &#xfffd;. Returns the bytes written.
 */
size_t op_xml_put(FILE *f, const char *s);

#endif /* OP_XML_H */
