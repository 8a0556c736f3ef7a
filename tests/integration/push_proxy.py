#!/usr/bin/env python3
# push_proxy.py - the loopback forward proxy of tests/integration/push_proxy.sh:
# takes absolute-form requests (POST http://127.0.0.1:PORT/ingest?... HTTP/1.1),
# records each request line and its Proxy-Authorization header (one JSON
# line per request in LOG, written before the request is forwarded), sends
# the request on in origin form to the target (the test's push_receiver.py)
# without the proxy's own and hop-by-hop headers, and relays the answer.
# CONNECT 127.0.0.1:PORT (an https store) is logged the same way and
# tunnelled. With --status 407 it answers every request itself with 407
# Proxy Authentication Required. Loopback only: any other target gets 403.
# With --tls CERT KEY it is an https proxy (the client speaks TLS to it).
# Usage: push_proxy.py --log LOG --port-file FILE [--port N] [--status 407] [--tls CERT KEY]
# The port it listens on (127.0.0.1 only) is written to FILE once it listens.
# SPDX-License-Identifier: MIT
import argparse
import http.client
import http.server
import json
import os
import select
import socket
import threading
import urllib.parse

HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization",
       "proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--status", type=int, choices=(407,))
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    a = ap.parse_args()
    lock = threading.Lock()

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def reply(self, status, body, headers=()):
            self.send_response(status)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def record(self):
            with lock, open(a.log, "a") as f:
                f.write(json.dumps({"line": self.requestline,
                                    "proxy_auth": self.headers.get("Proxy-Authorization")})
                        + "\n")
            if a.status == 407:
                self.reply(407, b"proxy authentication required by the test\n",
                           [("Proxy-Authenticate", 'Basic realm="push_proxy"')])
                return False
            return True

        def do_CONNECT(self):
            if not self.record():
                return
            host, _, port = self.path.rpartition(":")
            if host != "127.0.0.1" or not port.isdigit():
                self.reply(403, b"not a CONNECT to 127.0.0.1\n")
                return
            try:
                up = socket.create_connection(("127.0.0.1", int(port)), timeout=10)
            except OSError as e:
                self.reply(502, ("bad gateway: %s\n" % e).encode())
                return
            self.send_response(200, "Connection established")
            self.end_headers()
            self.wfile.flush()
            self.close_connection = True
            # bytes both ways until either side closes (the client's TLS to the store)
            socks = [self.connection, up]
            try:
                while True:
                    r, _, _ = select.select(socks, [], [], 30)
                    if not r:
                        break
                    for s in r:
                        data = s.recv(65536)
                        if not data:
                            return
                        (up if s is self.connection else self.connection).sendall(data)
            except OSError:
                pass
            finally:
                up.close()

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(n) if n else b""
            if not self.record():
                return
            u = urllib.parse.urlsplit(self.path)
            if u.scheme != "http" or u.hostname != "127.0.0.1" or not u.port:
                self.reply(403, b"not an absolute-form request to 127.0.0.1\n")
                return
            hdr = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
            target = u.path + ("?" + u.query if u.query else "")
            try:
                c = http.client.HTTPConnection("127.0.0.1", u.port, timeout=10)
                c.request("POST", target, body=body, headers=hdr)
                r = c.getresponse()
                rbody = r.read()
                c.close()
            except OSError as e:
                self.reply(502, ("bad gateway: %s\n" % e).encode())
                return
            self.reply(r.status, rbody,
                       [(k, v) for k, v in r.getheaders()
                        if k.lower() not in HOP and k.lower() != "content-length"])

        def log_message(self, fmt, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), H)
    srv.daemon_threads = True
    if a.tls:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls[0], a.tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()
