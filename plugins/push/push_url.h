/*
 * push_url.h - the push plugin's URL setting and query escaping, through
 * liburiparser: the daemon side links no libcurl (that lives in the helper
 * oprofiled-push), so the URL is parsed and checked here, at start, with a
 * message naming what is wrong, rather than refused by libcurl later.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PUSH_URL_H
#define OP_PUSH_URL_H

#include <stdbool.h>
#include <stddef.h>

/*
 * http(s)://host[:port][/prefix] into *base (malloc'd; trailing slashes
 * dropped, as the plugin appends /ingest or /api/...): 0, -ENOMEM, or
 * -EINVAL with msg saying what is wrong (without the setting's name, which
 * the caller prefixes).
 */
int pu_url_parse(const char *val, char **base, char *msg, size_t msg_len);

/*
 * A proxy (proxy= or the environment's https_proxy & co):
 * SCHEME://[USERINFO@]HOST[:PORT][/] with SCHEME one of libcurl's http,
 * https, socks4, socks4a, socks5, socks5h. *url: what libcurl gets
 * (trailing slash dropped); *shown: the same without userinfo, for every
 * message (both malloc'd). Userinfo only @from_env (root's environment,
 * as curl takes it); a setting's is refused, pointing at proxy_auth_file.
 * A message never shows userinfo. 0, -ENOMEM or -EINVAL with msg.
 */
int pu_proxy_parse(const char *val, bool from_env, char **url, char **shown, char *msg,
		   size_t msg_len);

/* @val without its userinfo (malloc'd; NULL: no memory) */
char *pu_url_shown(const char *val);

/* RFC 3986 percent-encoding of all but the unreserved characters (malloc'd; NULL: no memory) */
char *pu_url_escape(const char *in);

#endif
