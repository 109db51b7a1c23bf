#!/usr/bin/env python3
"""`make bench-load`: docshelf under load, over real HTTP on loopback.

Starts `docshelf serve` (DOCSHELF_BIN, or the dev build) on a fresh store,
uploads a few pages to search, and prints:
  - search latency with the server idle (p50/p99);
  - the time to upload a whole corpus with no searches (its text in upper
    case);
  - search latency while the same corpus is uploaded again (into another
    library, its text in lower case so that no vector is reused), and that
    upload's time: how far ingestion slows search, and search slows
    ingestion;
  - a burst of 200 concurrent searches: how many answered, how many were
    refused at once with 503 + Retry-After, and their latency;
  - sustained searches/s from 16 clients for a fixed time, with p99 and
    errors.
Every loop is bounded in count and time; traffic goes to 127.0.0.1 only.
Standard library only. Figures are printed, never asserted.

With --idle-only it stops after the idle figures; --serve-arg passes a flag
to `docshelf serve` (repeatable), to compare a setting's cost, e.g.
`--idle-only --serve-arg=--read-consistency-secs=0`.

Usage: bench-load.py [--corpus DIR] [--seconds N] [--bin PATH] [--idle-only] [--serve-arg=FLAG ...]
"""
import argparse
import concurrent.futures as cf
import json
import os
import re
import statistics
import tempfile
import threading
import time
import urllib.error
import urllib.request

import docshelf_proc
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUERIES = docshelf_proc.GIT_QUERIES


def request(base, path, body=None, timeout=120):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data,
                                 headers={"content-type": "application/json"} if data else {})
    started = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            res.read()
            status = res.status
    except urllib.error.HTTPError as err:
        err.read()
        status = err.code
    except (urllib.error.URLError, TimeoutError, ConnectionError):
        status = 0
    return status, (time.perf_counter() - started) * 1000


def search(base, i):
    return request(base, "/api/search", {"query": QUERIES[i % len(QUERIES)], "library": "bench"})


def thread_cpu(pid):
    """CPU seconds (user + system) each thread name of `pid` has used so far."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # the thread ended
        name = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        # Numbered pool threads count together (e.g. "rayon-3" -> "rayon-N").
        name = re.sub(r"\d+$", "N", name)
        out[name] = out.get(name, 0) + (int(fields[11]) + int(fields[12])) / tick
    return out


def p99_of(ms):
    ms = sorted(ms)
    return ms[min(len(ms) - 1, int(len(ms) * 0.99))] if ms else float("nan")


def summary(ms):
    if not ms:
        return "n/a"
    p99 = p99_of(ms)
    ms = sorted(ms)
    return f"p50 {statistics.median(ms):7.1f} ms  p99 {p99:7.1f} ms  max {ms[-1]:7.1f} ms  n={len(ms)}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "data", "eval", "git-docs", "corpus"))
    ap.add_argument("--seconds", type=int, default=30, help="length of the sustained run")
    ap.add_argument("--idle-only", action="store_true", help="stop after the idle search figures")
    ap.add_argument("--serve-arg", action="append", default=[], help="a flag for docshelf serve")
    ap.add_argument("--bin", default=os.environ.get("DOCSHELF_BIN") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "docshelf"))
    args = ap.parse_args()
    files = sorted(os.path.join(args.corpus, f) for f in os.listdir(args.corpus))
    model = os.environ.get("DOCSHELF_MODEL_DIR", os.path.join(ROOT, "models", "all-MiniLM-L6-v2"))

    with tempfile.TemporaryDirectory(prefix="docshelf-load-") as store:
        server, base = docshelf_proc.start(args.bin, store, model, args.serve_arg)
        try:
            print(f"docshelf {args.bin}\ncorpus {args.corpus} ({len(files)} files)")
            assert docshelf_proc.wait_job(base, docshelf_proc.upload(base, "bench", files[:20]), 600), "the first upload did not finish"
            for i in range(5):
                search(base, i)

            idle = [search(base, i)[1] for i in range(100)]
            print(f"idle search            {summary(idle)}")
            if args.idle_only:
                return

            # The same upload with no searches, first, to set the slowdown
            # against. It runs first so the searched upload meets the larger
            # store: if anything, that makes the slowdown look worse. Each
            # upload's text is cased its own way (upper, then lower): the
            # model is uncased, so the work is the same, but the embedded
            # inputs differ, so neither upload takes the other's vectors
            # (docshelf never embeds an input it already holds).
            started = time.perf_counter()
            alone_ok = docshelf_proc.wait_job(
                base, docshelf_proc.upload(base, "alone", files, transform=bytes.upper), 1800)
            alone_s = time.perf_counter() - started
            print(f"ingest of {len(files)} files, no searches  {alone_s:.1f} s"
                  f"{'' if alone_ok else ' (did not finish)'}")

            cpu_before = thread_cpu(server.pid)
            started = time.perf_counter()
            job = docshelf_proc.upload(base, "ingest", files, transform=bytes.lower)
            during, done = [], threading.Event()

            def searcher():
                i = 0
                while not done.is_set() and i < 10_000:
                    status, ms = search(base, i)
                    if status == 200:
                        during.append(ms)
                    i += 1
                    time.sleep(0.2)

            t = threading.Thread(target=searcher)
            t.start()
            finished = docshelf_proc.wait_job(base, job, 1800)
            ingest_s = time.perf_counter() - started
            done.set()
            t.join()
            print(f"search during ingest   {summary(during)}")
            print(f"ingest of {len(files)} files  {ingest_s:.1f} s{'' if finished else ' (did not finish)'}"
                  f"  ({ingest_s / alone_s:.2f}x the time with no searches;"
                  f" p99 during / p99 idle {p99_of(during) / p99_of(idle):.2f}x)")
            # Where the CPU went meanwhile (searches included), by thread
            # name: what competes with search while an upload runs.
            cpu_after = thread_cpu(server.pid)
            spent = {n: t - cpu_before.get(n, 0) for n, t in cpu_after.items()}
            total = sum(spent.values()) or 1
            print(f"  CPU by thread        {total:.0f} s in all: " + ", ".join(
                f"{n} {t:.0f} s ({100 * t / total:.0f}%)"
                for n, t in sorted(spent.items(), key=lambda kv: -kv[1]) if t >= 0.01 * total))

            with cf.ThreadPoolExecutor(max_workers=200) as pool:
                burst = list(pool.map(lambda i: search(base, i), range(200)))
            ok = [ms for s, ms in burst if s == 200]
            busy = [ms for s, ms in burst if s == 503]
            other = [s for s, _ in burst if s not in (200, 503)]
            print(f"burst of 200           answered {len(ok)}, refused 503 {len(busy)}, other {len(other)}")
            print(f"  answered             {summary(ok)}")
            print(f"  refused              {summary(busy)}")

            stop = time.monotonic() + args.seconds
            results, lock = [], threading.Lock()

            def client(c):
                i = c
                while time.monotonic() < stop:
                    r = search(base, i)
                    with lock:
                        results.append(r)
                    i += 16

            with cf.ThreadPoolExecutor(max_workers=16) as pool:
                list(pool.map(client, range(16)))
            good = [ms for s, ms in results if s == 200]
            errors = len(results) - len(good)
            print(f"16 clients, {args.seconds} s      {len(good) / args.seconds:.1f} searches/s, errors {errors}; {summary(good)}")
        finally:
            docshelf_proc.stop(server)


if __name__ == "__main__":
    main()
