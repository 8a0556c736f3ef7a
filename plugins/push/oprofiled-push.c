/*
 * oprofiled-push.c - the push plugin's helper program: performs the POSTs
 * the plugin (in the root daemon) builds, with libcurl, in a process of
 * its own that runs as an unprivileged user (np_child drops it to the
 * plugin's user=, default nobody, with no_new_privs) and never sees the
 * session directory. libcurl, its TLS library and everything they parse
 * of the store's answers stay out of the daemon: what a hostile or broken
 * store can reach is this process, which holds one profile at a time.
 *
 * fd 3 is the socket to the daemon (np_child's messages, push_wire.h).
 * It sends NP_MSG_HELLO once, then one PW_RESULT per PW_REQ, in order, and
 * exits when the daemon closes the socket (a transfer under way is
 * aborted then: the daemon's stop never waits for the store).
 * SPDX-License-Identifier: MIT
 */
#include "config.h"

#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "np_child.h"
#include "oprofile_sdk.h"
#include "push_wire.h"

#define PH_SOCK NP_CHILD_SOCK_FD
/* a daemon that does not read its socket for this long is not waited for */
#define PH_SEND_MS 10000
#define PH_USER_AGENT "oprofile-ng push/1.0"

struct ph_req {
	const char *url, *user, *pass;
	const char *proxy, *noproxy, *proxy_user, *proxy_pass; /* proxy "": none */
	const char *hdr[PW_MAX_STRINGS];
	unsigned nr_hdr;
	unsigned timeout_s, connect_timeout_s;
	const void *body;
	size_t body_len;
};

/* ca_file's contents: a sealed memfd at NP_CHILD_EXTRA_FD, which curl opens by its /proc name */
static bool ph_have_ca;
static char ph_ca_path[64];

/*
 * libcurl's global init initialises libssh2 (scp://, sftp://) and libssh2
 * OpenSSL's libcrypto whatever TLS library libcurl uses: 1.4 MB of RSS for
 * protocols never allowed here (CURLOPT_PROTOCOLS_STR is http,https).
 * libssh2_init(LIBSSH2_INIT_NO_CRYPTO) first makes libcurl's later call a
 * no-op; through the copy libcurl loaded (RTLD_NOLOAD), nothing to link.
 */
#define PH_LIBSSH2_INIT_NO_CRYPTO 0x0001
static void ph_no_ssh_crypto(void)
{
	void *h = dlopen("libssh2.so.1", RTLD_NOW | RTLD_NOLOAD);
	int (*ssh_init)(int);

	if (!h)
		return;
	*(void **)&ssh_init = dlsym(h, "libssh2_init");
	if (ssh_init)
		ssh_init(PH_LIBSSH2_INIT_NO_CRYPTO);
	dlclose(h);
}

/* printable ASCII (@space: ' ' too), nothing else: what reaches libcurl's options as text */
static bool ph_printable(const char *s, bool space)
{
	for (; *s; s++)
		if ((unsigned char)*s < (space ? 0x20 : 0x21) || (unsigned char)*s > 0x7e)
			return false;
	return true;
}

/*
 * A proxy as the daemon checked it (push_url.c): "" (none), or one of
 * libcurl's proxy schemes and printable ASCII. Checked again here: the
 * helper takes nothing on trust, and a scheme libcurl knows but the
 * daemon does not allow must not get through.
 */
static bool ph_proxy_ok(const char *p)
{
	static const char *const schemes[] = { "http://",    "https://",  "socks4://",
					       "socks4a://", "socks5://", "socks5h://" };
	unsigned i;

	if (!*p)
		return true;
	if (!ph_printable(p, false))
		return false;
	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (!strncasecmp(p, schemes[i], strlen(schemes[i])) && p[strlen(schemes[i])])
			return true;
	return false;
}

/* one string of a tag that may come at most once */
static bool ph_once(const char **dst, const char *val)
{
	if (*dst)
		return false;
	*dst = val;
	return true;
}

/*
 * A request's strings: exactly nr NUL-terminated strings filling the
 * payload, each tagged; one URL, one proxy (maybe empty), basic auth user
 * and password together, proxy user and password together and only with
 * a proxy. Everything points into @p. false on anything else.
 */
static bool ph_parse_req(const void *payload, size_t len, struct ph_req *r)
{
	const struct pw_req *h = payload;
	const char *p, *end;
	unsigned i;

	memset(r, 0, sizeof(*r));
	if (len < sizeof(*h) || len > sizeof(*h) + PW_MAX_STRINGS_LEN)
		return false;
	if (h->nr_strings < 1 || h->nr_strings > PW_MAX_STRINGS || h->reserved || h->timeout_s < 1 ||
	    h->timeout_s > 300 || h->connect_timeout_s < 1 || h->connect_timeout_s > h->timeout_s)
		return false;
	r->timeout_s = h->timeout_s;
	r->connect_timeout_s = h->connect_timeout_s;
	p = (const char *)payload + sizeof(*h);
	end = (const char *)payload + len;
	for (i = 0; i < h->nr_strings; i++) {
		const char *nul = memchr(p, 0, (size_t)(end - p));
		bool ok = true;

		if (!nul || nul == p)
			return false;
		switch (*p) {
		case PW_TAG_URL:
			if (r->url)
				return false;
			r->url = p + 1;
			break;
		case PW_TAG_PROXY:
			ok = ph_proxy_ok(p + 1) && ph_once(&r->proxy, p + 1);
			break;
		case PW_TAG_NOPROXY:
			ok = ph_printable(p + 1, true) && ph_once(&r->noproxy, p + 1);
			break;
		case PW_TAG_PROXY_USER:
			ok = ph_printable(p + 1, true) && ph_once(&r->proxy_user, p + 1);
			break;
		case PW_TAG_PROXY_PASS:
			ok = ph_printable(p + 1, true) && ph_once(&r->proxy_pass, p + 1);
			break;
		case PW_TAG_HEADER:
			if (!strchr(p + 1, ':'))
				return false;
			r->hdr[r->nr_hdr++] = p + 1;
			break;
		case PW_TAG_USER:
			if (r->user)
				return false;
			r->user = p + 1;
			break;
		case PW_TAG_PASS:
			if (r->pass)
				return false;
			r->pass = p + 1;
			break;
		default:
			return false;
		}
		if (!ok)
			return false;
		p = nul + 1;
	}
	/* the strings fill the payload: nothing trails */
	return p == end && r->url && r->proxy && !r->user == !r->pass &&
	       !r->proxy_user == !r->proxy_pass && (!r->proxy_user || r->proxy[0]);
}

/*
 * curl_easy_perform, but through a multi handle whose wait also watches
 * the daemon's socket: a transfer under way stops at once when the daemon
 * hangs up (its stop) or sends anything, instead of at libcurl's next
 * progress call (up to a second later).
 */
static CURLcode ph_run(CURL *c)
{
	CURLcode cc = CURLE_OUT_OF_MEMORY;
	CURLM *mh = curl_multi_init();
	int running = 1, left;
	CURLMsg *msg;

	if (!mh)
		return cc;
	if (curl_multi_add_handle(mh, c) != CURLM_OK)
		goto out;
	for (;;) {
		struct curl_waitfd w = { .fd = PH_SOCK, .events = CURL_WAIT_POLLIN };

		if (curl_multi_perform(mh, &running) != CURLM_OK) {
			cc = CURLE_FAILED_INIT;
			break;
		}
		if (!running) {
			msg = curl_multi_info_read(mh, &left);
			cc = msg && msg->msg == CURLMSG_DONE ? msg->data.result : CURLE_FAILED_INIT;
			break;
		}
		if (curl_multi_poll(mh, &w, 1, 1000, NULL) != CURLM_OK) {
			cc = CURLE_FAILED_INIT;
			break;
		}
		if (w.revents) {
			cc = CURLE_ABORTED_BY_CALLBACK;
			break;
		}
	}
	curl_multi_remove_handle(mh, c);
out:
	curl_multi_cleanup(mh);
	return cc;
}

static void ph_perform(const struct ph_req *r, long *status, int *code, char *err, size_t err_len)
{
	struct curl_slist *hdr = NULL, *n;
	char errbuf[CURL_ERROR_SIZE] = "";
	CURLcode cc = CURLE_OUT_OF_MEMORY;
	unsigned i;
	CURL *c;

	*status = 0;
	c = curl_easy_init();
	if (!c)
		goto out;
	for (i = 0; i < r->nr_hdr; i++) {
		n = curl_slist_append(hdr, r->hdr[i]);
		if (!n)
			goto out;
		hdr = n;
	}
	/* "Expect: 100-continue" would cost a round trip per push */
	n = curl_slist_append(hdr, "Expect:");
	if (!n)
		goto out;
	hdr = n;
	if (r->user) {
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c, CURLOPT_USERNAME, r->user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, r->pass);
	}
	/*
	 * Always set, "" for none: libcurl would otherwise read http_proxy &
	 * co itself (the daemon read its own environment, once, at start; this
	 * process has none)
	 */
	curl_easy_setopt(c, CURLOPT_PROXY, r->proxy);
	if (r->noproxy)
		curl_easy_setopt(c, CURLOPT_NOPROXY, r->noproxy);
	if (r->proxy_user) {
		curl_easy_setopt(c, CURLOPT_PROXYAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c, CURLOPT_PROXYUSERNAME, r->proxy_user);
		curl_easy_setopt(c, CURLOPT_PROXYPASSWORD, r->proxy_pass);
	}
	/* an https proxy is verified as the store is: against ca_file, if given */
	if (ph_have_ca && !strncasecmp(r->proxy, "https://", 8))
		curl_easy_setopt(c, CURLOPT_PROXY_CAINFO, ph_ca_path);
	curl_easy_setopt(c, CURLOPT_URL, r->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	/* the store's certificate is always verified: against ca_file, if given */
	if (ph_have_ca)
		curl_easy_setopt(c, CURLOPT_CAINFO, ph_ca_path);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body_len ? r->body : "");
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
	curl_easy_setopt(c, CURLOPT_USERAGENT, PH_USER_AGENT);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)r->connect_timeout_s);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)r->timeout_s);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	cc = ph_run(c);
	if (cc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
out:
	*code = (int)cc;
	snprintf(err, err_len, "%s",
		 cc == CURLE_OK ? "" :
		 errbuf[0]      ? errbuf :
				  curl_easy_strerror(cc));
	curl_slist_free_all(hdr);
	if (c)
		curl_easy_cleanup(c);
}

/*
 * PW_ARG_CA: the CA file's contents, a memfd the daemon sealed. curl (its
 * TLS library) opens CAs by name: /proc/self/fd/4 reopens that memfd
 * (mode 0777, sealed against writes) for a helper that could not open
 * the root-only file itself.
 */
static int ph_take_ca(void)
{
	char why[256];
	size_t len;

	if (np_memfd_check(NP_CHILD_EXTRA_FD, PW_MAX_CA, &len, why, sizeof(why)) || !len) {
		np_msg_log(NP_CHILD_SOCK_FD, OP_LOG_ERR,
			   "oprofiled-push: the CA file's contents: %s", len ? why : "empty");
		return -EINVAL;
	}
	snprintf(ph_ca_path, sizeof(ph_ca_path), "/proc/self/fd/%d", NP_CHILD_EXTRA_FD);
	ph_have_ca = true;
	return 0;
}

static int ph_hello(void)
{
	const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
	char buf[256];
	int n;

	n = snprintf(buf, sizeof(buf), "%s%c%s", v->version, 0,
		     v->ssl_version ? v->ssl_version : "");
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -EINVAL;
	return np_msg_send(PH_SOCK, NP_MSG_HELLO, 0, NP_MSG_VERSION, buf, (size_t)n + 1, -1,
			   PH_SEND_MS);
}

static int ph_serve(void)
{
	static struct np_msg m;
	char why[256];
	int rc;

	for (;;) {
		unsigned char out[sizeof(struct pw_result) + PW_MAX_ERROR];
		struct pw_result res = { 0 };
		struct ph_req r;
		const void *body;
		size_t blen;
		long status;

		rc = np_msg_recv(PH_SOCK, &m, -1, why, sizeof(why));
		if (rc == -EPIPE)
			return 0; /* the daemon hung up: its stop */
		if (rc) {
			np_msg_log(PH_SOCK, OP_LOG_ERR, "oprofiled-push: bad message: %s",
				   rc == -EBADMSG ? why : strerror(-rc));
			return 1;
		}
		if (m.h.type != PW_REQ || m.fd < 0 || !ph_parse_req(m.data, m.h.len, &r)) {
			np_msg_log(PH_SOCK, OP_LOG_ERR,
				   "oprofiled-push: malformed request (type %u, %u bytes)",
				   (unsigned)m.h.type, (unsigned)m.h.len);
			if (m.fd >= 0)
				close(m.fd);
			return 1;
		}
		rc = np_memfd_map(m.fd, PW_MAX_BODY, &body, &blen, why, sizeof(why));
		close(m.fd);
		if (rc) {
			np_msg_log(PH_SOCK, OP_LOG_ERR, "oprofiled-push: the request's body: %s",
				   why);
			return 1;
		}
		r.body = body;
		r.body_len = blen;
		ph_perform(&r, &status, &res.curl_code, (char *)out + sizeof(res), PW_MAX_ERROR);
		if (body)
			munmap((void *)body, blen);
		memcpy(out, &res, sizeof(res));
		rc = np_msg_send(PH_SOCK, PW_RESULT, m.h.id, (uint64_t)status, out,
				 sizeof(res) + strlen((char *)out + sizeof(res)) + 1, -1,
				 PH_SEND_MS);
		if (rc)
			return rc == -EPIPE ? 0 : 1;
	}
}

static void ph_usage(FILE *f)
{
	fprintf(f, "Usage: oprofiled-push [--version] [-?|--usage]\n"
		   "The push plugin's helper: started by oprofiled (the push plugin), with its\n"
		   "socket as fd 3; not meant to be run by hand.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = { { "version", no_argument, NULL, 'v' },
					      { "usage", no_argument, NULL, 'u' },
					      { "help", no_argument, NULL, 'u' },
					      { "ca-fd", no_argument, NULL, 'c' },
					      { NULL, 0, NULL, 0 } };
	bool ca = false;
	char why[256];
	int c, rc;

	while ((c = getopt_long(argc, argv, "?", opts, NULL)) != -1) {
		switch (c) {
		case 'v':
			printf("oprofiled-push (oprofile-ng) %s, %s\n", PACKAGE_VERSION,
			       curl_version());
			return 0;
		case 'c':
			ca = true;
			break;
		case 'u':
			ph_usage(stdout);
			return 0;
		default: /* -? itself, or an option it does not know */
			if (!optopt && !strcmp(argv[optind - 1], "-?")) {
				ph_usage(stdout);
				return 0;
			}
			ph_usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		ph_usage(stderr);
		return 2;
	}
	if (np_child_check_fd(why, sizeof(why))) {
		fprintf(stderr, "oprofiled-push: %s\n", why);
		ph_usage(stderr);
		return 2;
	}
	if (ca && ph_take_ca())
		return 1;
	ph_no_ssh_crypto();
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		np_msg_log(PH_SOCK, OP_LOG_ERR, "oprofiled-push: libcurl did not initialise");
		return 1;
	}
	rc = ph_hello() ? 1 : ph_serve();
	curl_global_cleanup();
	return rc;
}
