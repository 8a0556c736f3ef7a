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

/* what a kind of URL setting accepts, and how its messages say so */
struct pu_kind {
	const char *const *schemes;
	const char *expect_scheme; /* "expected ..." when the scheme is not one of them */
	const char *form;          /* the syntax error's "expected ..." */
	const char *cred;          /* why userinfo is refused, or NULL: accepted */
	bool path;                 /* a path prefix is allowed */
};

static const char *const pu_store_schemes[] = { "http", "https", NULL };
static const struct pu_kind pu_store = {
	.schemes = pu_store_schemes,
	.expect_scheme = "expected an http:// or https:// URL",
	.form = "http(s)://HOST[:PORT][/PATH]",
	.cred = "\"URL\" carries credentials: put them in the auth file "
		"(auth_file=PATH, keys basic_user/basic_password or bearer_token)",
	.path = true,
};

/* libcurl's proxy schemes (CURLOPT_PROXY) */
static const char *const pu_proxy_schemes[] = { "http",   "https",   "socks4", "socks4a",
						"socks5", "socks5h", NULL };
static const struct pu_kind pu_proxy = {
	.schemes = pu_proxy_schemes,
	.expect_scheme = "expected an http, https, socks4, socks4a, socks5 or socks5h:// URL",
	.form = "SCHEME://HOST[:PORT]",
	.cred = "\"proxy\" carries credentials: put \"user:password\" in a file "
		"(proxy_auth_file=PATH), not in a setting that ps or a readable config shows",
	.path = false,
};
static const struct pu_kind pu_proxy_env = {
	.schemes = pu_proxy_schemes,
	.expect_scheme = pu_proxy.expect_scheme,
	.form = pu_proxy.form,
	.cred = NULL,
	.path = false,
};

static bool pu_scheme_ok(const struct pu_kind *k, const UriTextRangeA *r)
{
	size_t len = pu_range_len(r);
	const char *const *s;

	for (s = k->schemes; *s; s++)
		if (strlen(*s) == len && !strncasecmp(r->first, *s, len))
			return true;
	return false;
}

/*
 * No credentials in the URL unless the kind takes them (the command line
 * shows in ps and in the log), no query or fragment (the plugin adds its
 * own), a host, a port 1..65535 if one is given, a path only where the
 * kind has one. @val is the URL as messages show it (without userinfo).
 */
static int pu_url_check(const struct pu_kind *k, const char *val, const char *raw, const UriUriA *u,
			char *msg, size_t msg_len)
{
	unsigned long port = 0;
	const char *p;
	size_t plen;

	/* "host:4040" parses as scheme "host", "host" as a path: neither has an authority */
	if (!u->scheme.first || !u->hostText.first)
		return pu_url_err(msg, msg_len, "\"%s\" is not a URL: expected http://HOST:PORT",
				  val);
	if (!pu_scheme_ok(k, &u->scheme))
		return pu_url_err(msg, msg_len, "\"%s\": %s", val, k->expect_scheme);
	/* not the URL itself: it carries the password */
	if (u->userInfo.first && k->cred)
		return pu_url_err(msg, msg_len, "%s", k->cred);
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
	if (!k->path) {
		/* after the authority (which holds no '/'): nothing, or one '/' */
		p = strstr(raw, "://") + 3;
		p += strcspn(p, "/");
		if (*p && strcmp(p, "/"))
			return pu_url_err(msg, msg_len, "\"%s\": expected no path (%s)", val,
					  k->form);
	}
	return 0;
}

/*
 * What a syntax error the library found means, for the message: it says
 * where; the character there and the part of the URL it is in say what
 * was expected (a port that is no number fails where the library, having
 * taken HOST:xyz for user:password, expected the '@').
 */
static int pu_url_syntax(const struct pu_kind *k, const char *val, const char *err_pos, char *msg,
			 size_t msg_len)
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
			  "%s in RFC 3986 characters",
			  val, ch ? ch : ' ', at + 1, k->form);
}

/*
 * @val without what a userinfo could be (everything between "://" and the
 * last '@' before the path): how a URL that may carry a password is shown.
 * By the string, not the parse, so that a URL the library refuses is
 * shown without it too. NULL: no memory.
 */
char *pu_url_shown(const char *val)
{
	const char *auth = strstr(val, "://"), *at, *end;
	char *out;

	if (!auth)
		return strdup(val);
	auth += 3;
	end = auth + strcspn(auth, "/?#");
	at = memrchr(auth, '@', (size_t)(end - auth));
	if (!at)
		return strdup(val);
	out = malloc(strlen(val) + 1);
	if (out) {
		memcpy(out, val, (size_t)(auth - val));
		strcpy(out + (auth - val), at + 1);
	}
	return out;
}

static int pu_parse(const struct pu_kind *k, const char *val, char *msg, size_t msg_len)
{
	const char *err_pos = NULL;
	char *shown;
	UriUriA u;
	int rc;

	/* a message shows the URL as the log may: without credentials */
	shown = pu_url_shown(val);
	if (!shown)
		return -ENOMEM;
	rc = uriParseSingleUriA(&u, val, &err_pos);
	if (rc == URI_ERROR_MALLOC) {
		rc = -ENOMEM;
	} else if (rc != URI_SUCCESS) {
		/* an error position inside the userinfo would name its character: not shown */
		rc = strcmp(shown, val) ?
			     pu_url_err(msg, msg_len,
					"\"%s\" is not a URL: expected %s in RFC 3986 characters",
					shown, k->form) :
			     pu_url_syntax(k, val, err_pos, msg, msg_len);
	} else {
		rc = pu_url_check(k, shown, val, &u, msg, msg_len);
		uriFreeUriMembersA(&u);
	}
	free(shown);
	return rc;
}

/* a copy of @val without trailing slashes */
static int pu_trimmed(const char *val, char **out)
{
	size_t n;

	*out = strdup(val);
	if (!*out)
		return -ENOMEM;
	n = strlen(*out);
	while (n && (*out)[n - 1] == '/')
		(*out)[--n] = 0;
	return 0;
}

int pu_url_parse(const char *val, char **base, char *msg, size_t msg_len)
{
	int rc = pu_parse(&pu_store, val, msg, msg_len);

	/* the plugin appends /ingest or /api/...: no trailing slash */
	return rc ? rc : pu_trimmed(val, base);
}

int pu_proxy_parse(const char *val, bool from_env, char **url, char **shown, char *msg,
		   size_t msg_len)
{
	int rc = pu_parse(from_env ? &pu_proxy_env : &pu_proxy, val, msg, msg_len);

	*url = *shown = NULL;
	if (!rc)
		rc = pu_trimmed(val, url);
	if (!rc) {
		*shown = pu_url_shown(*url);
		if (!*shown)
			rc = -ENOMEM;
	}
	if (rc) {
		if (*url)
			explicit_bzero(*url, strlen(*url));
		free(*url);
		*url = NULL;
	}
	return rc;
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
