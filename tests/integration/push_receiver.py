#!/usr/bin/env python3
# push_receiver.py - the loopback store of tests/integration/push*.sh: an
# HTTP server that keeps every request it gets (request line, headers,
# body) as numbered files in DIR and answers with STATUS; with --hang it
# accepts connections and never answers (a stuck store).
# With --tls CERT KEY it speaks HTTPS (the store of an https:// URL).
# Usage: push_receiver.py --dir DIR --port-file FILE [--port N] [--status N] [--hang]
#        [--tls CERT KEY]
# The port it listens on (127.0.0.1 only) is written to FILE once it listens.
# SPDX-License-Identifier: MIT
import argparse
import http.server
import json
import os
import socket
import sys
import threading
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--status", type=int, default=200)
    ap.add_argument("--hang", action="store_true")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)

    if a.hang:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", a.port))
        s.listen(64)
        write_port(a.port_file, s.getsockname()[1])
        held = []
        while True:
            c, _ = s.accept()
            # read what comes, never answer: the client must time out by itself
            held.append(c)
            with open(os.path.join(a.dir, "hung"), "a") as f:
                f.write("1\n")

    lock = threading.Lock()
    count = [0]

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(n) if n else b""
            with lock:
                count[0] += 1
                k = count[0]
            base = os.path.join(a.dir, "%04d" % k)
            with open(base + ".body.tmp", "wb") as f:
                f.write(body)
            with open(base + ".req.tmp", "w") as f:
                json.dump({"method": self.command, "path": self.path,
                           "version": self.request_version,
                           "headers": [[h, v] for h, v in self.headers.items()],
                           "time": time.time()}, f)
            os.rename(base + ".body.tmp", base + ".body")
            # the .req file last: a test that sees it sees the whole request
            os.rename(base + ".req.tmp", base + ".req")
            reply = b"" if a.status < 300 else b"refused by the test\n"
            self.send_response(a.status)
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, fmt, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), H)
    if a.tls:
        import ssl
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls[0], a.tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    write_port(a.port_file, srv.server_address[1])
    srv.serve_forever()


def write_port(path, port):
    with open(path + ".tmp", "w") as f:
        f.write("%d\n" % port)
    os.rename(path + ".tmp", path)


if __name__ == "__main__":
    sys.exit(main())
