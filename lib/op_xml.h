/*
 * op_xml.h - XML text escaping shared by the tools that write XML (ophelp -X,
 * opreport -X through txt_put_xml) and the UTF-8 check behind it: in lib/ so
 * that tools which do not link libbfd (ophelp is MIT) have it.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_XML_H
#define OP_XML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Length of the well-formed UTF-8 sequence at @u (1..4) and its code point
 * in *@cp (when @cp is not NULL), or 0: overlong forms, UTF-16 surrogates,
 * values above U+10FFFF and truncated sequences are not UTF-8. @u is read up
 * to its NUL at most.
 */
size_t op_utf8_len(const unsigned char *u, uint32_t *cp);

/*
 * Write @s as XML character data or attribute text (without the quotes):
 * & < > " ' as entities; tab, newline and carriage return as &#9; &#10;
 * &#13; (so an attribute keeps them instead of having them normalised to
 * spaces); bytes that are not UTF-8, other C0 controls and U+FFFE/U+FFFF
 * (which XML 1.0 cannot carry) as &#xfffd;. Returns the bytes written.
 */
size_t op_xml_put(FILE *f, const char *s);

#endif /* OP_XML_H */
