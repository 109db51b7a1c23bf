#!/usr/bin/env python3
"""A real S3-compatible server on loopback for docshelf's object-store tests.

moto's S3 service (from PyPI; installed by scripts/fetch-s3-server.sh) behind
werkzeug's HTTP server, in its own process: docshelf reaches it over HTTP with
signed requests, exactly as it reaches AWS S3, MinIO or R2. It keeps objects
in memory, so each test starts on an empty store.

It serves one request at a time, on purpose. The tests check what happens
when two replicas write at once, and that rests on conditional writes
(If-None-Match: * to create, If-Match: <etag> to replace) being atomic, as
they are on AWS S3 and MinIO. moto checks the condition and then stores the
object as two steps, and so does s3s-fs (read in their sources: s3s-fs
0.14.1 and 0.17.0 check that the file exists, then write a temporary file
and rename it), so two concurrent requests could both pass. One request at
a time makes each conditional write whole. Each request is a fraction of a
millisecond here; Lance's parallel reads only queue.

Usage: server.py [--port N] [--bucket NAME ...]
Prints "listening on http://127.0.0.1:PORT" once it accepts connections.
"""

import argparse
import os
import sys

os.environ.setdefault("AWS_ACCESS_KEY_ID", "docshelf")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "docshelf-secret")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")

from moto.moto_server.werkzeug_app import create_backend_app  # noqa: E402
from werkzeug.serving import make_server  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0: a free port")
    parser.add_argument(
        "--bucket", action="append", default=[], help="a bucket to create at start"
    )
    args = parser.parse_args()

    app = create_backend_app("s3")
    server = make_server(args.host, args.port, app, threaded=False, processes=1)
    base = f"http://{args.host}:{server.server_port}"
    if args.bucket:
        client = app.test_client()
        for bucket in args.bucket:
            response = client.put(f"/{bucket}", headers={"Host": f"{args.host}:{server.server_port}"})
            if response.status_code >= 300:
                sys.exit(f"s3-server: cannot create bucket {bucket}: {response.status_code}")
    print(f"listening on {base}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
