#!/usr/bin/env python3
"""A Git server on loopback, for tests and measurements: Git's own
`git http-backend` (smart HTTP, protocol v2, partial fetches where a
repository allows them) behind Python's threaded HTTP server, as CGI.

    git-http-server.py ROOT [--private NAME=USER:PASSWORD ...] [--redirect NAME=URL ...]
                            [--hold NAME=PATH ...]

Serves the bare repositories under ROOT at http://127.0.0.1:PORT/NAME.
A repository named with --private answers 401 without that Basic
credential; a name given with --redirect answers 301 to URL (the rest of
the path appended); a fetch of objects from a name given with --hold waits
for as long as PATH exists (its refs are listed at once), so that a test
can keep a fetch running until it lets it go. The first line of output is
the port, once it listens.
"""

import argparse
import base64
import gzip
import http.server
import os
import shutil
import subprocess
import sys
import time

BACKEND = shutil.which("git-http-backend") or "/usr/lib/git-core/git-http-backend"


def read_chunked(stream):
    """A chunked request body, whole."""
    body = b""
    while True:
        size = int(stream.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            stream.readline()
            return body
        body += stream.read(size)
        stream.readline()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        self.serve()

    def do_POST(self):
        self.serve()

    def log_message(self, *args):
        pass

    def refuse(self, status, text, headers=()):
        body = text.encode()
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def serve(self):
        path, _, query = self.path.partition("?")
        repo, _, rest = path.lstrip("/").partition("/")
        target = self.server.redirects.get(repo)
        if target is not None:
            location = target.rstrip("/") + "/" + rest + ("?" + query if query else "")
            self.refuse(301, "moved\n", [("Location", location)])
            return
        secret = self.server.private.get(repo)
        if secret is not None:
            want = "Basic " + base64.b64encode(secret.encode()).decode()
            if self.headers.get("Authorization", "") != want:
                self.refuse(401, "authentication required\n", [("WWW-Authenticate", 'Basic realm="git"')])
                return
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            body = self.rfile.read(length)
        elif self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = read_chunked(self.rfile)
        else:
            body = b""
        hold = self.server.holds.get(repo)
        said = body
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            said = gzip.decompress(body)
        # Protocol v2 asks for objects with `command=fetch`, v0 with `want`.
        if hold is not None and (b"command=fetch" in said or b"want " in said):
            while os.path.exists(hold):
                time.sleep(0.05)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.server.root,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_PROJECT_ROOT": self.server.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "GATEWAY_INTERFACE": "CGI/1.1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
        }
        for header in ("Git-Protocol", "Content-Encoding"):
            if self.headers.get(header):
                env["HTTP_" + header.upper().replace("-", "_")] = self.headers[header]
        if secret is not None:
            env["REMOTE_USER"] = secret.split(":", 1)[0]
        out = subprocess.run([BACKEND], input=body, env=env, capture_output=True).stdout
        sep = b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n"
        head, _, payload = out.partition(sep)
        status, headers = 200, []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("root")
    parser.add_argument("--private", action="append", default=[], metavar="NAME=USER:PASSWORD")
    parser.add_argument("--redirect", action="append", default=[], metavar="NAME=URL")
    parser.add_argument("--hold", action="append", default=[], metavar="NAME=PATH")
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.root = os.path.abspath(args.root)
    server.private = dict(item.split("=", 1) for item in args.private)
    server.redirects = dict(item.split("=", 1) for item in args.redirect)
    server.holds = dict(item.split("=", 1) for item in args.hold)
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
