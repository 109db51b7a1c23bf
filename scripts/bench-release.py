#!/usr/bin/env python3
"""The release build against the development build, in one run (issue #64):
for each binary, on a fresh store: its size, start-up to the first answered
`/healthz`, resident memory idle, the git manual's upload (every page, the
whole pipeline) and hybrid search p50 / p99 over HTTP, each query's
embedding included.

Usage: scripts/bench-release.py --binary dev=PATH --binary release=PATH
       [--corpus DIR] [--model-dir DIR] [--rounds N]
The binaries run in turn, each on its own store; searches cycle through
the git questions (docshelf_proc.GIT_QUERIES) `rounds` times. Standard
library only; prints a table.
"""
import argparse
import glob
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import docshelf_proc  # noqa: E402


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def search(base, query):
    body = json.dumps({"query": query, "library": "git"}).encode()
    req = urllib.request.Request(base + "/api/search", data=body,
                                 headers={"content-type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(req, timeout=60) as res:
        json.load(res)
    return (time.perf_counter() - started) * 1000


def measure(name, binary, corpus, model, rounds):
    store = tempfile.mkdtemp(prefix=f"docshelf-release-{name}-")
    started = time.monotonic()
    server, base = docshelf_proc.start(binary, store, model)
    # The server prints its address once it listens; it answers from then.
    with urllib.request.urlopen(base + "/healthz", timeout=30) as res:
        res.read()
    startup = time.monotonic() - started
    time.sleep(2)
    idle = rss_kib(server.pid)
    try:
        files = sorted(glob.glob(os.path.join(corpus, "**", "*.*"), recursive=True))
        t = time.monotonic()
        job = docshelf_proc.upload(base, "git", files, timeout=600)
        done = docshelf_proc.wait_job(base, job, 3600)
        upload_s = time.monotonic() - t
        if not done:
            print(f"{name}: the upload did not end done", file=sys.stderr)
        for q in docshelf_proc.GIT_QUERIES[:3]:
            search(base, q)  # warm-up
        times = [search(base, q) for _ in range(rounds) for q in docshelf_proc.GIT_QUERIES]
        times.sort()
        after = rss_kib(server.pid)
    finally:
        docshelf_proc.stop(server)
    return {
        "name": name,
        "size_mb": os.path.getsize(binary) / 1e6,
        "startup_s": startup,
        "rss_idle_mib": idle / 1024,
        "upload_s": upload_s,
        "files": len(files),
        "search_p50_ms": statistics.median(times),
        "search_p99_ms": times[min(len(times) - 1, int(len(times) * 0.99))],
        "searches": len(times),
        "rss_after_mib": after / 1024,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", action="append", required=True, help="NAME=PATH, in the order run")
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "data", "eval", "git-docs", "corpus"))
    ap.add_argument("--model-dir", default=os.environ.get(
        "DOCSHELF_MODEL_DIR", os.path.join(ROOT, "models", "all-MiniLM-L6-v2")))
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    rows = []
    for spec in args.binary:
        name, _, path = spec.partition("=")
        rows.append(measure(name, path, args.corpus, args.model_dir, args.rounds))
        print(json.dumps(rows[-1]), flush=True)
    print()
    print(f"{'build':10} {'size MB':>8} {'start s':>8} {'RSS idle MiB':>13} {'upload s':>9} "
          f"{'search p50 ms':>14} {'p99 ms':>8} {'RSS after MiB':>14}")
    for r in rows:
        print(f"{r['name']:10} {r['size_mb']:8.0f} {r['startup_s']:8.2f} {r['rss_idle_mib']:13.0f} "
              f"{r['upload_s']:9.1f} {r['search_p50_ms']:14.1f} {r['search_p99_ms']:8.1f} "
              f"{r['rss_after_mib']:14.0f}")
    print(f"({rows[0]['files']} files uploaded; {rows[0]['searches']} searches each)")


if __name__ == "__main__":
    main()
