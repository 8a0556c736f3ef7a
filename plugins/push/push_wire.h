/*
 * push_wire.h - what the push plugin (in the daemon) and its helper
 * program oprofiled-push (libcurl, unprivileged) say to each other over
 * np_child's socket: message types and the layout of their inline
 * payloads. The daemon builds each request (URL, headers, credentials,
 * the body as a sealed memfd); the helper only performs it. Each side
 * treats what the other sends as untrusted input and checks every length.
 * Prefix pw_ / PW_.
 * SPDX-License-Identifier: MIT
 */
#ifndef OP_PLUGINS_PUSH_WIRE_H
#define OP_PLUGINS_PUSH_WIRE_H

#include <stdint.h>

#include "np_child.h"

/*
 * The helper's first message is np_child's NP_MSG_HELLO (arg
 * NP_MSG_VERSION), its payload "LIBCURL_VERSION\0TLS\0" (TLS empty when
 * libcurl has none). With ca_file set, the helper is started with
 * PW_ARG_CA and finds the CA file's contents as NP_CHILD_EXTRA_FD (a
 * sealed memfd the daemon filled: the helper, running as nobody, could
 * not open a root-only file itself).
 */
#define PW_ARG_CA "--ca-fd"

enum pw_type {
	/*
	 * daemon -> helper: perform one POST. Payload: struct pw_req, then
	 * pw_req.nr_strings NUL-terminated strings, each starting with its
	 * tag (enum pw_tag); the body is the message's fd (a sealed memfd),
	 * its size the body's length. Request id: echoed by the reply.
	 */
	PW_REQ = NP_MSG_USER + 1,
	/*
	 * helper -> daemon: the outcome of a PW_REQ (same id). The 64-bit
	 * argument is the HTTP status (0: no response); payload: struct
	 * pw_result then the error text (curl's, NUL-terminated, may be empty).
	 */
	PW_RESULT = NP_MSG_USER + 2,
};

enum pw_tag {
	PW_TAG_URL = 'U',    /* the whole URL (exactly one) */
	PW_TAG_HEADER = 'H', /* "Name: value" */
	PW_TAG_USER = 'u',   /* HTTP basic auth: user (with PW_TAG_PASS) */
	PW_TAG_PASS = 'p',   /* HTTP basic auth: password */
	/*
	 * The proxy (exactly one): a libcurl proxy URL, empty for none. Always
	 * sent: the helper sets CURLOPT_PROXY from it, "" included, so that
	 * libcurl never looks for one itself.
	 */
	PW_TAG_PROXY = 'P',
	PW_TAG_NOPROXY = 'N',    /* CURLOPT_NOPROXY's list (at most one) */
	PW_TAG_PROXY_USER = 'v', /* proxy basic auth: user (with PW_TAG_PROXY_PASS) */
	PW_TAG_PROXY_PASS = 'w', /* proxy basic auth: password */
};

struct pw_req {
	uint32_t timeout_s;         /* the whole transfer: 1..300 */
	uint32_t connect_timeout_s; /* 1..timeout_s */
	uint32_t nr_strings;        /* 1..PW_MAX_STRINGS */
	uint32_t reserved;          /* 0 */
};

struct pw_result {
	int32_t curl_code; /* CURLcode: 0 when the server answered */
	uint32_t reserved; /* 0 */
};

#define PW_MAX_STRINGS 16
/* a request's strings: the URL (a Pyroscope name of 32 labels, escaped), the auth headers, the proxy's */
#define PW_MAX_STRINGS_LEN (NP_MSG_INLINE_MAX - sizeof(struct pw_req))
/* the largest body the helper maps: a spool entry (spool_mb <= 4096), base64'd for Parca */
#define PW_MAX_BODY ((size_t)6 << 30)
/* the largest CA file (a system bundle is ~200 KiB) */
#define PW_MAX_CA (4u << 20)
#define PW_MAX_ERROR 256

#endif /* OP_PLUGINS_PUSH_WIRE_H */
