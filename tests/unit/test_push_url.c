/*
 * test_push_url.c - the push plugin's URL setting and query escaping
 * (plugins/push/push_url.c, liburiparser): a table of good URLs with the
 * base the plugin keeps (trailing slashes dropped, path prefix and scheme
 * as given) and of bad ones with the message each must get; the
 * percent-encoding of Pyroscope's name{labels} query value; the proxy
 * setting (its schemes, no path, userinfo only from the environment and
 * never in a message).
 * SPDX-License-Identifier: MIT
 */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "push_url.h"

struct good {
	const char *url, *base;
};

static const struct good goods[] = {
	{ "http://127.0.0.1:4040", "http://127.0.0.1:4040" },
	{ "http://127.0.0.1:4040/", "http://127.0.0.1:4040" },
	{ "http://127.0.0.1:4040///", "http://127.0.0.1:4040" },
	{ "https://pyroscope.example.com", "https://pyroscope.example.com" },
	{ "HTTPS://Store-1.example_x.org:443/", "HTTPS://Store-1.example_x.org:443" },
	{ "http://[::1]:4040", "http://[::1]:4040" },
	{ "http://[::1]/", "http://[::1]" },
	{ "http://[2001:db8::7]:7070/prefix", "http://[2001:db8::7]:7070/prefix" },
	{ "http://localhost:1", "http://localhost:1" },
	{ "http://localhost:65535", "http://localhost:65535" },
	{ "http://h:08080", "http://h:08080" },
	{ "http://store:4040/tenant/a/", "http://store:4040/tenant/a" },
	{ "http://store:4040/a%20b/", "http://store:4040/a%20b" },
};

struct bad {
	const char *url, *msg;
};

static const struct bad bads[] = {
	{ "127.0.0.1:4040", "\"127.0.0.1:4040\" is not a URL: expected http://HOST:PORT" },
	{ "localhost:4040", "\"localhost:4040\" is not a URL: expected http://HOST:PORT" },
	{ "localhost", "\"localhost\" is not a URL: expected http://HOST:PORT" },
	{ "", "\"\" is not a URL: expected http://HOST:PORT" },
	{ "http:h", "\"http:h\" is not a URL: expected http://HOST:PORT" },
	{ "ftp://h:21", "\"ftp://h:21\": expected an http:// or https:// URL" },
	{ "file:///etc/passwd", "\"file:///etc/passwd\": expected an http:// or https:// URL" },
	{ "httpx://h", "\"httpx://h\": expected an http:// or https:// URL" },
	{ "http://bob:secret@h:1", "\"URL\" carries credentials: put them in the auth file" },
	{ "http://user@h", "\"URL\" carries credentials: put them in the auth file" },
	{ "http://@h", "\"URL\" carries credentials: put them in the auth file" },
	{ "http://h:1/?q", "\"http://h:1/?q\": expected no query (the plugin adds its own)" },
	{ "http://h:1?", "\"http://h:1?\": expected no query (the plugin adds its own)" },
	{ "http://h:1/#f", "\"http://h:1/#f\": expected no fragment" },
	{ "http://h:0", "\"http://h:0\" is not a URL: expected a port 1..65535" },
	{ "http://h:65536", "\"http://h:65536\" is not a URL: expected a port 1..65535" },
	{ "http://h:99999999999999999999999",
	  "\"http://h:99999999999999999999999\" is not a URL: expected a port 1..65535" },
	{ "http://h:", "\"http://h:\" is not a URL: expected a port 1..65535" },
	{ "http://[::1]:", "\"http://[::1]:\" is not a URL: expected a port 1..65535" },
	{ "http://[::1]:0", "\"http://[::1]:0\" is not a URL: expected a port 1..65535" },
	{ "http://h:abc",
	  "\"http://h:abc\" is not a URL: at character 13: expected HOST[:PORT] after \"//\" (a host name, an IPv4 address or [IPv6]; a port 1..65535)" },
	{ "http://h:12ab/x",
	  "\"http://h:12ab/x\" is not a URL: at character 14: expected HOST[:PORT] after \"//\" (a host name, an IPv4 address or [IPv6]; a port 1..65535)" },
	{ "http://h:-1",
	  "is not a URL: at character 12: expected HOST[:PORT] after \"//\" (a host name, an IPv4 address or [IPv6]; a port 1..65535)" },
	{ "http://h st:1", "\"http://h st:1\" is not a URL: character 9 (0x20): expected "
			   "printable ASCII without spaces" },
	{ "http://h:1/a b", "is not a URL: character 13 (0x20): expected printable ASCII" },
	{ "http://h\t:1", "is not a URL: character 9 (0x09): expected printable ASCII" },
	{ "http://h\xc3\xa9:1", "is not a URL: character 9 (0xc3): expected printable ASCII" },
	{ "http://h:1/\xe2\x82\xac", "is not a URL: character 12 (0xe2): expected printable ASCII" },
	{ "http://h\\x:1",
	  "\"http://h\\x:1\" is not a URL: at character 9: expected HOST[:PORT] after \"//\" (a host name, an IPv4 address or [IPv6]; a port 1..65535)" },
	{ "http://[::1",
	  "\"http://[::1\" is not a URL: at character 12: expected HOST[:PORT] after \"//\" (a host name, an IPv4 address or [IPv6]; a port 1..65535)" },
	{ "http://[]:1",
	  "\"http://[]:1\" is not a URL: at character 9: expected HOST[:PORT] after \"//\" (a host name, an IPv4 address or [IPv6]; a port 1..65535)" },
	{ "http://[::1]x",
	  "\"http://[::1]x\" is not a URL: at character 13: expected HOST[:PORT] after \"//\" (a host name, an IPv4 address or [IPv6]; a port 1..65535)" },
	{ "http://[v1.x]:1", "\"http://[v1.x]:1\" is not a URL: expected a host name or address" },
	{ "http://a!b:1", "\"http://a!b:1\" is not a URL: expected a host name or address" },
	{ "http://h%41:1", "\"http://h%41:1\" is not a URL: expected a host name or address" },
	{ "http:///x", "\"http:///x\" is not a URL: expected http://HOST:PORT" },
	{ "http://:80", "\"http://:80\" is not a URL: expected http://HOST:PORT" },
	{ "http://h:1/\"",
	  "\"http://h:1/\"\" is not a URL: '\"' at character 12: expected http(s)://HOST[:PORT][/PATH] in RFC 3986 characters" },
	{ "http://h:1/a|b", "is not a URL: '|' at character 13" },
};

static void test_good(void **state)
{
	char msg[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(goods) / sizeof(goods[0]); i++) {
		char *base = NULL;
		int rc;

		msg[0] = 0;
		rc = pu_url_parse(goods[i].url, &base, msg, sizeof(msg));
		if (rc)
			fail_msg("%s: refused (%d): %s", goods[i].url, rc, msg);
		assert_non_null(base);
		if (strcmp(base, goods[i].base))
			fail_msg("%s: kept \"%s\", expected \"%s\"", goods[i].url, base,
				 goods[i].base);
		free(base);
	}
}

static void test_bad(void **state)
{
	char msg[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		char *base = NULL;
		int rc;

		msg[0] = 0;
		rc = pu_url_parse(bads[i].url, &base, msg, sizeof(msg));
		if (rc != -EINVAL)
			fail_msg("%s: not refused (%d)", bads[i].url, rc);
		assert_null(base);
		if (!strstr(msg, bads[i].msg))
			fail_msg("%s: message \"%s\", expected \"%s\"", bads[i].url, msg,
				 bads[i].msg);
	}
}

/* the password in a URL never reaches the message (it goes to the log) */
static void test_credentials_not_shown(void **state)
{
	char msg[512], *base = NULL;

	(void)state;
	assert_int_equal(pu_url_parse("https://bob:s3cret-pw@store:443/x", &base, msg, sizeof(msg)),
			 -EINVAL);
	assert_null(strstr(msg, "s3cret-pw"));
	assert_null(strstr(msg, "bob"));
	assert_non_null(strstr(msg, "auth_file=PATH"));
}

/* a second setting replaces the first: the caller frees; here each result is its own */
static void test_base_is_a_copy(void **state)
{
	char url[] = "http://h:1/p/", msg[64], *base = NULL;

	(void)state;
	assert_int_equal(pu_url_parse(url, &base, msg, sizeof(msg)), 0);
	url[7] = 'X';
	assert_string_equal(base, "http://h:1/p");
	free(base);
}

static void test_escape(void **state)
{
	static const struct {
		const char *in, *out;
	} t[] = {
		/* what push.sh's labels give: Pyroscope's name{k=v,k=v} */
		{ "svc-a{env=test,team=perf}", "svc-a%7Benv%3Dtest%2Cteam%3Dperf%7D" },
		{ "oprofiled{}", "oprofiled%7B%7D" },
		/* RFC 3986's unreserved characters stay */
		{ "AZaz09-._~", "AZaz09-._~" },
		/* space as %20, never '+'; breaks kept as they are */
		{ "a b+c", "a%20b%2Bc" },
		{ "l1\r\nl2", "l1%0D%0Al2" },
		{ "/?#[]@!$&'()*;:%\"", "%2F%3F%23%5B%5D%40%21%24%26%27%28%29%2A%3B%3A%25%22" },
		/* UTF-8 byte by byte, upper-case hex */
		{ "caf\xc3\xa9", "caf%C3%A9" },
		{ "\x7f\x01", "%7F%01" },
		{ "", "" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char *out = pu_url_escape(t[i].in);

		assert_non_null(out);
		assert_string_equal(out, t[i].out);
		free(out);
	}
}

static const struct proxy_good {
	const char *val;
	bool env;
	const char *url, *shown;
} proxy_goods[] = {
	{ "http://127.0.0.1:3128", false, "http://127.0.0.1:3128", "http://127.0.0.1:3128" },
	{ "http://proxy.corp:3128/", false, "http://proxy.corp:3128", "http://proxy.corp:3128" },
	{ "https://[::1]:8443", false, "https://[::1]:8443", "https://[::1]:8443" },
	{ "socks4://s:1080", false, "socks4://s:1080", "socks4://s:1080" },
	{ "socks4a://s", false, "socks4a://s", "socks4a://s" },
	{ "SOCKS5://s:1080", false, "SOCKS5://s:1080", "SOCKS5://s:1080" },
	{ "socks5h://s:1080", false, "socks5h://s:1080", "socks5h://s:1080" },
	/* the environment's userinfo goes to libcurl, never to a message */
	{ "http://bob:s3cret@p:3128/", true, "http://bob:s3cret@p:3128", "http://p:3128" },
	{ "http://bob@p:3128", true, "http://bob@p:3128", "http://p:3128" },
};

static const struct bad proxy_bads[] = {
	{ "ftp://x",
	  "\"ftp://x\": expected an http, https, socks4, socks4a, socks5 or socks5h:// URL" },
	{ "socks6://x:1", "expected an http, https, socks4, socks4a, socks5 or socks5h:// URL" },
	{ "http://u:p@h:1", "\"proxy\" carries credentials: put \"user:password\" in a file "
			    "(proxy_auth_file=PATH)" },
	{ "http://h:1/path", "\"http://h:1/path\": expected no path (SCHEME://HOST[:PORT])" },
	{ "http://h:1//", "\"http://h:1//\": expected no path" },
	{ "http://h:1?x", "expected no query" },
	{ "http://h:0", "\"http://h:0\" is not a URL: expected a port 1..65535" },
	{ "h:3128", "\"h:3128\" is not a URL: expected http://HOST:PORT" },
	{ "http://h:1/|", "'|' at character 12: expected SCHEME://HOST[:PORT] in RFC 3986" },
};

static void test_proxy(void **state)
{
	char msg[512], *url, *shown;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(proxy_goods) / sizeof(proxy_goods[0]); i++) {
		const struct proxy_good *g = &proxy_goods[i];

		msg[0] = 0;
		if (pu_proxy_parse(g->val, g->env, &url, &shown, msg, sizeof(msg)))
			fail_msg("%s: refused: %s", g->val, msg);
		if (strcmp(url, g->url) || strcmp(shown, g->shown))
			fail_msg("%s: \"%s\" shown \"%s\", expected \"%s\" shown \"%s\"", g->val,
				 url, shown, g->url, g->shown);
		free(url);
		free(shown);
	}
	for (i = 0; i < sizeof(proxy_bads) / sizeof(proxy_bads[0]); i++) {
		msg[0] = 0;
		if (pu_proxy_parse(proxy_bads[i].url, false, &url, &shown, msg, sizeof(msg)) !=
		    -EINVAL)
			fail_msg("%s: not refused", proxy_bads[i].url);
		assert_null(url);
		assert_null(shown);
		if (!strstr(msg, proxy_bads[i].msg))
			fail_msg("%s: message \"%s\", expected \"%s\"", proxy_bads[i].url, msg,
				 proxy_bads[i].msg);
	}
}

/* a bad URL from the environment, with a password in it: refused, the password not shown */
static void test_proxy_env_secret(void **state)
{
	static const char *const bad[] = { "http://bob:s3cret@h:abc", "http://bob:s3cret@h:1/x",
					   "ftp://bob:s3cret@h:1",    "http://bob:s3cret@h:1?q",
					   "http://bob:s3cret@h:0",   "http://bob:s3cret@h|x:1" };
	char msg[512], *url, *shown;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		msg[0] = 0;
		assert_int_equal(pu_proxy_parse(bad[i], true, &url, &shown, msg, sizeof(msg)),
				 -EINVAL);
		if (!msg[0] || strstr(msg, "s3cret") || strstr(msg, "bob"))
			fail_msg("%s: message \"%s\"", bad[i], msg);
	}
	shown = pu_url_shown("socks5://a@b:c@d:1/e@f");
	assert_string_equal(shown, "socks5://d:1/e@f");
	free(shown);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_credentials_not_shown),
		cmocka_unit_test(test_base_is_a_copy),
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_proxy),
		cmocka_unit_test(test_proxy_env_secret),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
