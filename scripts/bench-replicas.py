#!/usr/bin/env python3
"""`make bench-replicas`: two docshelf servers on one store, local and S3.

For each backend (a local directory, then an S3 bucket on the real S3 test
server `scripts/s3-server/server.py`, started here; `--backends` picks),
starts two `docshelf serve` processes (DOCSHELF_BIN, or the dev build) on
one fresh store and prints:
  - how long after an upload to the first was accepted its made-up word is
    found by a keyword search on the writer and on the other server (N
    rounds): the time until a document is visible on another replica, which
    `--read-consistency-secs` bounds;
  - search latency on the other (warm) replica after `--pages` git pages were
    uploaded through the first: hybrid searches, p50/p99, the same queries on
    both backends, so the object store's cost is a ratio within one run.
  - with --throughput S (and nginx installed): searches per second from 16
    clients for S seconds through nginx in front of one replica, then of both.
    On a 2-core machine both replicas share the same two cores: the ratio
    shows whether anything serialises across replicas, not how they scale.
Figures are printed, never asserted. Traffic goes to 127.0.0.1 only; every
wait is bounded.

The S3 server is moto's in-memory S3 in Python, one request at a time: its
figures are an upper bound on what a real object store on the same network
costs per request, not a measurement of AWS S3.

Usage: bench-replicas.py [--rounds N] [--pages N] [--searches N] [--throughput S]
                         [--read-consistency-secs S] [--backends local,s3] [--bin PATH]
"""
import argparse
import concurrent.futures as cf
import json
import shutil
import os
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

import docshelf_proc
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUERIES = docshelf_proc.GIT_QUERIES
S3_ENV = {"AWS_ACCESS_KEY_ID": "docshelf", "AWS_SECRET_ACCESS_KEY": "docshelf-secret",
          "AWS_REGION": "us-east-1"}


def post_json(base, path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as res:
        return json.load(res)


def upload_page(base, name, text):
    boundary = uuid.uuid4().hex
    body = b"".join([
        f'--{boundary}\r\nContent-Disposition: form-data; name="library"\r\n\r\nreplicas\r\n'.encode(),
        f'--{boundary}\r\nContent-Disposition: form-data; name="version"\r\n\r\n1\r\n'.encode(),
        (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
         f'Content-Type: text/markdown\r\n\r\n').encode() + text.encode() + b"\r\n",
        f"--{boundary}--\r\n".encode(),
    ])
    req = urllib.request.Request(base + "/api/upload", data=body,
                                 headers={"content-type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(req, timeout=60) as res:
        return json.load(res)["job_id"]


def found(base, word):
    try:
        hits = post_json(base, "/api/search", {"query": word, "mode": "keyword", "library": "replicas"})
    except (urllib.error.URLError, TimeoutError, ConnectionError):
        return False
    return any(word in (h.get("text") or "") for h in hits.get("results", []))


def summary(seconds):
    if not seconds:
        return "n=0"
    return (f"p50 {statistics.median(seconds):6.2f} s  max {max(seconds):6.2f} s  "
            f"n={len(seconds)}")


def timed_search(base, query):
    started = time.perf_counter()
    try:
        post_json(base, "/api/search", {"query": query, "library": "bench"})
        ok = True
    except (urllib.error.URLError, TimeoutError, ConnectionError):
        ok = False
    return ok, (time.perf_counter() - started) * 1000


def ms_summary(ms):
    if not ms:
        return "n/a"
    ms = sorted(ms)
    p99 = ms[min(len(ms) - 1, int(len(ms) * 0.99))]
    return f"p50 {statistics.median(ms):7.1f} ms  p99 {p99:7.1f} ms  n={len(ms)}"


class S3Server:
    """The S3 test server, on a free port, with one bucket."""

    def __init__(self):
        python = subprocess.run([os.path.join(ROOT, "scripts", "fetch-s3-server.sh")],
                                check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        self.proc = subprocess.Popen(
            [python, os.path.join(ROOT, "scripts", "s3-server", "server.py"), "--port", "0",
             "--bucket", "bench"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline()
        if not line.startswith("listening on "):
            self.proc.kill()
            raise SystemExit(f"the S3 server did not start: {line!r}")
        self.endpoint = line.split()[-1]
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()

    def stop(self):
        self.proc.kill()
        self.proc.wait()


NGINX_CONF = """worker_processes 1;
pid nginx.pid;
error_log stderr error;
events {{ worker_connections 1024; }}
http {{
    access_log off;
    client_body_temp_path tmp; proxy_temp_path tmp; fastcgi_temp_path tmp;
    uwsgi_temp_path tmp; scgi_temp_path tmp;
    upstream docshelf {{ {servers} keepalive 32; }}
    server {{
        listen 127.0.0.1:{port};
        location / {{
            proxy_pass http://docshelf;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host $host;
        }}
    }}
}}
"""


def free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def through_nginx(bases, seconds, clients=16):
    """Searches/s, p50/p99 and errors from `clients` threads for `seconds`
    through nginx in front of `bases` (round robin)."""
    work = tempfile.mkdtemp(prefix="docshelf-nginx-")
    os.makedirs(os.path.join(work, "tmp"))
    port = free_port()
    servers = " ".join(f"server {b.removeprefix('http://')};" for b in bases)
    with open(os.path.join(work, "nginx.conf"), "w") as f:
        f.write(NGINX_CONF.format(servers=servers, port=port))
    nginx = subprocess.Popen(["nginx", "-p", work, "-c", "nginx.conf", "-g", "daemon off;"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    front = f"http://127.0.0.1:{port}"
    try:
        for _ in range(100):
            if timed_search(front, QUERIES[0])[0]:
                break
            time.sleep(0.1)
        deadline = time.perf_counter() + seconds

        def client(i):
            ms, errors, n = [], 0, i
            while time.perf_counter() < deadline:
                ok, t = timed_search(front, QUERIES[n % len(QUERIES)])
                n += 1
                if ok:
                    ms.append(t)
                else:
                    errors += 1
            return ms, errors

        started = time.perf_counter()
        with cf.ThreadPoolExecutor(clients) as pool:
            results = list(pool.map(client, range(clients)))
        elapsed = time.perf_counter() - started
        ms = [t for r in results for t in r[0]]
        errors = sum(r[1] for r in results)
        return len(ms) / elapsed, ms, errors
    finally:
        nginx.terminate()
        nginx.wait()
        shutil.rmtree(work, ignore_errors=True)


def run_backend(name, store, args, model, extra, files):
    writer, a = docshelf_proc.start(args.bin, store, model, extra)
    reader, b = docshelf_proc.start(args.bin, store, model, extra)
    try:
        on_writer, on_other = [], []
        for i in range(args.rounds):
            word = f"zq{uuid.uuid4().hex[:10]}"
            accepted = time.perf_counter()
            upload_page(a, f"page{i}.md", f"# Page {i}\n\nThe word {word} is here.\n")
            seen = {}
            deadline = accepted + 60
            while len(seen) < 2 and time.perf_counter() < deadline:
                for who, base in (("writer", a), ("other", b)):
                    if who not in seen and found(base, word):
                        seen[who] = time.perf_counter() - accepted
                time.sleep(0.05)
            on_writer += [seen["writer"]] if "writer" in seen else []
            on_other += [seen["other"]] if "other" in seen else []
        print(f"[{name}] visible on the writer   {summary(on_writer)}")
        print(f"[{name}] visible on the other    {summary(on_other)}")
        missing = args.rounds - len(on_other)
        if missing:
            print(f"[{name}] not visible on the other within 60 s: {missing}")

        started = time.perf_counter()
        job = docshelf_proc.upload(a, "bench", files)
        done = docshelf_proc.wait_job(a, job, 1800)
        print(f"[{name}] upload of {len(files)} pages through the writer: "
              f"{time.perf_counter() - started:.1f} s{'' if done else ' (not done in 30 min)'}")
        time.sleep(args.read_consistency_secs + 0.5)
        for q in QUERIES:  # warm the other replica's caches
            timed_search(b, q)
        ms, errors = [], 0
        for i in range(args.searches):
            ok, t = timed_search(b, QUERIES[i % len(QUERIES)])
            if ok:
                ms.append(t)
            else:
                errors += 1
        print(f"[{name}] hybrid search on the other replica, warm: {ms_summary(ms)}"
              f"{f'  errors {errors}' if errors else ''}")
        if args.throughput:
            for label, bases in (("one replica", [b]), ("two replicas", [a, b])):
                rate, tms, terr = through_nginx(bases, args.throughput)
                print(f"[{name}] 16 clients through nginx, {label}: {rate:6.1f} searches/s  "
                      f"{ms_summary(tms)}  errors {terr}")
        return statistics.median(ms) if ms else float("nan")
    finally:
        for server in (writer, reader):
            docshelf_proc.stop(server)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--pages", type=int, default=20)
    ap.add_argument("--searches", type=int, default=100)
    ap.add_argument("--throughput", type=float, default=0,
                    help="seconds of 16-client load through nginx, one replica then two (0: skip)")
    ap.add_argument("--read-consistency-secs", type=float, default=2.0)
    ap.add_argument("--backends", default="local,s3")
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "data", "eval", "git-docs", "corpus"))
    ap.add_argument("--bin", default=os.environ.get("DOCSHELF_BIN") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "docshelf"))
    args = ap.parse_args()
    model = os.environ.get("DOCSHELF_MODEL_DIR", os.path.join(ROOT, "models", "all-MiniLM-L6-v2"))
    extra = ["--read-consistency-secs", str(args.read_consistency_secs)]
    files = sorted(os.path.join(args.corpus, f) for f in os.listdir(args.corpus))[:args.pages]
    print(f"docshelf {args.bin}\ntwo servers on one store, --read-consistency-secs "
          f"{args.read_consistency_secs}, {args.rounds} rounds, {len(files)} pages, "
          f"{args.searches} searches")
    p50 = {}
    for backend in args.backends.split(","):
        if backend == "local":
            with tempfile.TemporaryDirectory(prefix="docshelf-replicas-") as store:
                p50[backend] = run_backend(backend, store, args, model, extra, files)
        elif backend == "s3":
            server = S3Server()
            saved = {k: os.environ.get(k) for k in S3_ENV}
            os.environ.update(S3_ENV)
            try:
                p50[backend] = run_backend(
                    backend, "s3://bench/replicas", args, model,
                    extra + ["--s3-endpoint", server.endpoint], files)
            finally:
                server.stop()
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
        else:
            raise SystemExit(f"unknown backend {backend!r} (local, s3)")
    if "local" in p50 and "s3" in p50:
        print(f"search p50 on S3 / local: {p50['s3'] / p50['local']:.2f}")


if __name__ == "__main__":
    main()
