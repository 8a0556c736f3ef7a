/*
 * push_url.c - the push plugin's URL setting and query escaping through
 * liburiparser (RFC 3986; depends on libc only, so the daemon still maps
 * no libcurl or TLS library). The library parses; this file only says
 * which of the URLs it parses the plugin can use, and why not.
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uriparser/Uri.h>

#include "push_url.h"

static int pu_url_err(char *msg, size_t msg_len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int pu_url_err(char *msg, size_t msg_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, msg_len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static size_t pu_range_len(const UriTextRangeA *r)
{
	return r->first ? (size_t)(r->afterLast - r->first) : 0;
}

/*
 * A registered name as libcurl and the resolver take it: letters, digits,
 * '-', '.', '_'. RFC 3986 also allows sub-delims and %XX there, which no
 * host name of a store needs and which would reach the helper's libcurl
 * (and the log) as they are.
 */
static bool pu_host_name_ok(const UriTextRangeA *r)
{
	const char *p;

	for (p = r->first; p < r->afterLast; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_'))
			return false;
	return true;
}

/*
 * No credentials in the URL (the command line shows in ps and in the
 * log), no query or fragment (the plugin adds its own query), a host, a
 * port 1..65535 if one is given.
 */
static int pu_url_check(const char *val, const UriUriA *u, char *msg, size_t msg_len)
{
	size_t slen = pu_range_len(&u->scheme), plen;
	unsigned long port = 0;
	const char *p;

	/* "host:4040" parses as scheme "host", "host" as a path: neither has an authority */
	if (!u->scheme.first || !u->hostText.first)
		return pu_url_err(msg, msg_len, "\"%s\" is not a URL: expected http://HOST:PORT",
				  val);
	if (!((slen == 4 && !strncasecmp(u->scheme.first, "http", 4)) ||
	      (slen == 5 && !strncasecmp(u->scheme.first, "https", 5))))
		return pu_url_err(msg, msg_len, "\"%s\": expected an http:// or https:// URL", val);
	/* not the URL itself: it carries the password */
	if (u->userInfo.first)
		return pu_url_err(msg, msg_len,
				  "\"URL\" carries credentials: put them in the auth file "
				  "(auth_file=PATH, keys basic_user/basic_password or bearer_token)");
	if (u->query.first)
		return pu_url_err(msg, msg_len,
				  "\"%s\": expected no query (the plugin adds its own)", val);
	if (u->fragment.first)
		return pu_url_err(msg, msg_len, "\"%s\": expected no fragment", val);
	if (!pu_range_len(&u->hostText))
		return pu_url_err(msg, msg_len, "\"%s\" is not a URL: expected http://HOST:PORT",
				  val);
	if (u->hostData.ipFuture.first ||
	    (!u->hostData.ip4 && !u->hostData.ip6 && !pu_host_name_ok(&u->hostText)))
		return pu_url_err(msg, msg_len,
				  "\"%s\" is not a URL: expected a host name or address", val);
	if (u->portText.first) {
		/* the library took only digits: their value, without overflow */
		plen = pu_range_len(&u->portText);
		for (p = u->portText.first; p < u->portText.afterLast && port <= 65535; p++)
			port = port * 10 + (unsigned long)(*p - '0');
		if (!plen || !port || port > 65535)
			return pu_url_err(msg, msg_len,
					  "\"%s\" is not a URL: expected a port 1..65535", val);
	}
	return 0;
}

/*
 * What a syntax error the library found means, for the message: it says
 * where; the character there and the part of the URL it is in say what
 * was expected (a port that is no number fails where the library, having
 * taken HOST:xyz for user:password, expected the '@').
 */
static int pu_url_syntax(const char *val, const char *err_pos, char *msg, size_t msg_len)
{
	const char *auth = strstr(val, "://");
	size_t at = err_pos ? (size_t)(err_pos - val) : strlen(val);
	unsigned char ch = (unsigned char)val[at];

	if (ch && (ch <= 0x20 || ch >= 0x7f))
		return pu_url_err(msg, msg_len,
				  "\"%s\" is not a URL: character %zu (0x%02x): expected printable "
				  "ASCII without spaces",
				  val, at + 1, ch);
	if (!auth)
		return pu_url_err(msg, msg_len, "\"%s\" is not a URL: expected http://HOST:PORT",
				  val);
	auth += 3;
	if (at >= (size_t)(auth - val) && at <= (size_t)(auth - val) + strcspn(auth, "/?#"))
		return pu_url_err(msg, msg_len,
				  "\"%s\" is not a URL: at character %zu: expected HOST[:PORT] "
				  "after \"//\" (a host name, an IPv4 address or [IPv6]; a port "
				  "1..65535)",
				  val, at + 1);
	return pu_url_err(msg, msg_len,
			  "\"%s\" is not a URL: '%c' at character %zu: expected "
			  "http(s)://HOST[:PORT][/PATH] in RFC 3986 characters",
			  val, ch ? ch : ' ', at + 1);
}

int pu_url_parse(const char *val, char **base, char *msg, size_t msg_len)
{
	const char *err_pos = NULL;
	UriUriA u;
	size_t n;
	int rc;

	rc = uriParseSingleUriA(&u, val, &err_pos);
	if (rc == URI_ERROR_MALLOC)
		return -ENOMEM;
	if (rc != URI_SUCCESS)
		return pu_url_syntax(val, err_pos, msg, msg_len);
	rc = pu_url_check(val, &u, msg, msg_len);
	uriFreeUriMembersA(&u);
	if (rc)
		return rc;
	*base = strdup(val);
	if (!*base)
		return -ENOMEM;
	/* the plugin appends /ingest or /api/...: no trailing slash */
	n = strlen(*base);
	while (n && (*base)[n - 1] == '/')
		(*base)[--n] = 0;
	return 0;
}

char *pu_url_escape(const char *in)
{
	size_t len = strlen(in);
	char *out;

	if (len > (SIZE_MAX - 1) / 3)
		return NULL;
	/* uriEscapeA writes at most 3 bytes per byte (breaks not normalised) and a NUL */
	out = malloc(3 * len + 1);
	if (out)
		uriEscapeA(in, out, URI_FALSE, URI_FALSE);
	return out;
}
