/*
 * push_url.h - the push plugin's URL setting and query escaping, through
 * liburiparser: the daemon side links no libcurl (that lives in the helper
 * oprofiled-push), so the URL is parsed and checked here, at start, with a
 * message naming what is wrong, rather than refused by libcurl later.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PUSH_URL_H
#define OP_PUSH_URL_H

#include <stddef.h>

/*
 * http(s)://host[:port][/prefix] into *base (malloc'd; trailing slashes
 * dropped, as the plugin appends /ingest or /api/...): 0, -ENOMEM, or
 * -EINVAL with msg saying what is wrong (without the setting's name, which
 * the caller prefixes).
 */
int pu_url_parse(const char *val, char **base, char *msg, size_t msg_len);

/* RFC 3986 percent-encoding of all but the unreserved characters (malloc'd; NULL: no memory) */
char *pu_url_escape(const char *in);

#endif
