/*
 * op_demangle.h - opreport's smart demangling: standard-library names of a
 * demangled C++ symbol shortened as OProfile did (std::string, defaults of
 * containers' template arguments removed).
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_DEMANGLE_H
#define OP_DEMANGLE_H

/*
 * demangle_smart - shorten the demangled name @name.
 *
 * std::__cxx11:: and std::__1:: become std::; std::basic_string<char,
 * std::char_traits<char>, std::allocator<char> > becomes std::string (also
 * wstring, u8/u16/u32string, string_view and the char streams); the
 * allocator, comparator, hash and equality arguments of vector, list, deque,
 * forward_list, (multi)set, (multi)map, unordered_(multi)set/map (and the
 * deque of stack/queue) are dropped from the end while they are the defaults
 * for the element types. Template argument lists are parsed (balanced <>,
 * parentheses, brackets, braces; commas), innermost first; "> >" is written
 * only where the last argument ends with '>'.
 *
 * Returns a malloc'd string: the shortened name, or a copy of @name when it
 * cannot be parsed (unbalanced brackets, nesting deeper than 256). NULL only
 * when out of memory.
 */
char *demangle_smart(const char *name);

#endif
