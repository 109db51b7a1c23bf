#!/usr/bin/env python3
"""`make bench-hostile`: docshelf's memory under concurrent hostile uploads.

Starts `docshelf serve` (DOCSHELF_BIN, or the dev build) on a fresh store,
uploads a few pages of the git manual to search, then for N = 1, 4, 8
uploads N hostile archives at once and prints, per N:
  - the server's resident memory (VmRSS of /proc/<pid>/status, sampled every
    50 ms) before the uploads and at its peak while they are examined;
  - how the uploads were answered (202, or 503 busy / 413 refused at once)
    and how their files ended (the first words of each reason);
  - search latency over HTTP meanwhile (p50/p99 from two clients).

The archives (generated once into ~/.cache/docshelf/bench-hostile/):
  - nested.zip, about 23 MB: nested ZIPs of text at about 157:1 (under the
    200:1 ratio limit), 3.3 GiB in all, past the 1 GiB expansion limit only
    once most of it has been read;
  - bomb.zip, about 6.5 MB: ten 100 MiB text entries at the same ratio, so
    1000 MiB, just under the 1 GiB limit, and four times the 256 MiB of text
    one job may hold.
Uploads alternate between the two. Every loop is bounded in count and time;
traffic goes to 127.0.0.1 only. Standard library only. Figures are printed,
never asserted.

Usage: bench-hostile.py [--bin PATH] [--corpus DIR] [--ns 1,4,8] [--serve-arg=FLAG ...]
"""
import argparse
import concurrent.futures as cf
import json
import os
import random
import statistics
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
import zipfile

import docshelf_proc

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.expanduser("~/.cache/docshelf/bench-hostile")
MIB = 1024 * 1024


def text_block(period=4096, seed=7):
    """A block of random words; repeated, it deflates about 157:1."""
    rng = random.Random(seed)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
             for _ in range(2000)]
    out, size = [], 0
    while size < period:
        line = " ".join(rng.choice(words) for _ in range(12)) + "\n"
        out.append(line)
        size += len(line)
    return "".join(out).encode()


def text_of(size):
    block = text_block()
    return (block * (size // len(block) + 1))[:size]


def archives():
    """Generates the hostile archives once; returns their paths."""
    os.makedirs(CACHE, exist_ok=True)
    nested, bomb = os.path.join(CACHE, "nested.zip"), os.path.join(CACHE, "bomb.zip")
    if not os.path.exists(nested):
        entry = text_of(64 * MIB)
        inner = os.path.join(CACHE, "inner.zip")
        with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as z:
            for i in range(4):
                z.writestr(f"part-{i}.txt", entry)
        with open(inner, "rb") as f:
            inner_bytes = f.read()
        os.remove(inner)
        with zipfile.ZipFile(nested + ".tmp", "w", zipfile.ZIP_STORED) as z:
            for i in range(13):
                z.writestr(f"volume-{i:02}.zip", inner_bytes)
        os.replace(nested + ".tmp", nested)
    if not os.path.exists(bomb):
        entry = text_of(100 * MIB)
        with zipfile.ZipFile(bomb + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
            for i in range(10):
                z.writestr(f"chapter-{i}.txt", entry)
        os.replace(bomb + ".tmp", bomb)
    return [nested, bomb]


def rss_kib(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


class Sampler:
    """Samples the server's VmRSS every 50 ms; `peak()` since the last `reset()`."""

    def __init__(self, pid):
        self.pid, self.max, self.stop = pid, 0, threading.Event()
        self.lock = threading.Lock()
        threading.Thread(target=self.run, daemon=True).start()

    def run(self):
        while not self.stop.is_set():
            try:
                now = rss_kib(self.pid)
            except OSError:
                return
            with self.lock:
                self.max = max(self.max, now)
            time.sleep(0.05)

    def reset(self):
        with self.lock:
            self.max = rss_kib(self.pid)
            return self.max

    def peak(self):
        with self.lock:
            return self.max


def post_upload(base, library, path, timeout=300):
    """Uploads one file; returns (HTTP status, job id or None, Retry-After or None)."""
    boundary = uuid.uuid4().hex
    with open(path, "rb") as f:
        data = f.read()
    body = b"".join([
        f'--{boundary}\r\nContent-Disposition: form-data; name="library"\r\n\r\n{library}\r\n'.encode(),
        f'--{boundary}\r\nContent-Disposition: form-data; name="version"\r\n\r\n1\r\n'.encode(),
        (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{os.path.basename(path)}"'
         '\r\nContent-Type: application/zip\r\n\r\n').encode() + data + b"\r\n",
        f"--{boundary}--\r\n".encode(),
    ])
    req = urllib.request.Request(base + "/api/upload", data=body,
                                 headers={"content-type": f"multipart/form-data; boundary={boundary}"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            return res.status, json.load(res)["job_id"], None
    except urllib.error.HTTPError as err:
        err.read()
        return err.code, None, err.headers.get("retry-after")
    except (urllib.error.URLError, TimeoutError, ConnectionError):
        return 0, None, None


def job_outcome(base, job, limit_s):
    """Waits up to `limit_s` for `job`; the first words of each file's reason (or state)."""
    deadline = time.monotonic() + limit_s
    status = None
    while time.monotonic() < deadline:
        with urllib.request.urlopen(f"{base}/api/jobs/{job}", timeout=30) as res:
            status = json.load(res)
        if status["state"] == "done":
            break
        time.sleep(0.5)
    else:
        return ["(not done in time)"]
    out = []
    for f in status["files"]:
        out.append(" ".join(str(f.get("reason") or f.get("state")).split()[:9]))
    return out


def searcher(base, stop, latencies):
    i = 0
    while not stop.is_set():
        q = docshelf_proc.GIT_QUERIES[i % len(docshelf_proc.GIT_QUERIES)]
        started = time.perf_counter()
        req = urllib.request.Request(base + "/api/search",
                                     data=json.dumps({"query": q, "library": "git"}).encode(),
                                     headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as res:
                res.read()
                ok = res.status == 200
        except (urllib.error.URLError, TimeoutError, ConnectionError):
            ok = False
        latencies.append(((time.perf_counter() - started) * 1000, ok))
        i += 1


def pct(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.environ.get("DOCSHELF_BIN") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.expanduser("~/.cache/docshelf/target")),
        "debug", "docshelf"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "..", "shared", "data", "eval", "git-docs", "corpus"))
    ap.add_argument("--model", default=os.path.join(ROOT, "models", "all-MiniLM-L6-v2"))
    ap.add_argument("--ns", default="1,4,8")
    ap.add_argument("--pages", type=int, default=30, help="git pages uploaded to search")
    ap.add_argument("--job-limit-s", type=float, default=400)
    ap.add_argument("--serve-arg", action="append", default=[])
    args = ap.parse_args()

    paths = archives()
    print(f"binary: {args.bin}")
    for p in paths:
        print(f"archive: {os.path.basename(p)} {os.path.getsize(p) / 1e6:.1f} MB")
    pages = sorted(os.path.join(args.corpus, f) for f in os.listdir(args.corpus))[:args.pages]
    with tempfile.TemporaryDirectory() as store:
        server, base = docshelf_proc.start(args.bin, store, args.model, args.serve_arg)
        try:
            job = docshelf_proc.upload(base, "git", pages)
            docshelf_proc.wait_job(base, job, 600)
            sampler = Sampler(server.pid)
            idle = []
            stop = threading.Event()
            t = threading.Thread(target=searcher, args=(base, stop, idle))
            t.start()
            time.sleep(5)
            stop.set()
            t.join()
            idle_ms = [ms for ms, ok in idle if ok]
            print(f"\nidle: RSS {rss_kib(server.pid) / 1024:.0f} MiB, search p50 {pct(idle_ms, 50):.0f} ms "
                  f"p99 {pct(idle_ms, 99):.0f} ms ({len(idle_ms)} searches)\n")
            rows = []
            for n in [int(x) for x in args.ns.split(",")]:
                before = sampler.reset()
                latencies, stop = [], threading.Event()
                clients = [threading.Thread(target=searcher, args=(base, stop, latencies)) for _ in range(2)]
                for c in clients:
                    c.start()
                started = time.monotonic()
                with cf.ThreadPoolExecutor(n) as pool:
                    answers = list(pool.map(
                        lambda i: post_upload(base, f"hostile-{n}-{i}", paths[i % len(paths)]), range(n)))
                    outcomes = list(pool.map(
                        lambda a: job_outcome(base, a[1], args.job_limit_s) if a[1] else [], answers))
                elapsed = time.monotonic() - started
                stop.set()
                for c in clients:
                    c.join()
                peak = sampler.peak()
                ok_ms = [ms for ms, ok in latencies if ok]
                codes = {}
                for code, _, retry in answers:
                    key = f"{code}" + (f" (Retry-After {retry})" if retry else "")
                    codes[key] = codes.get(key, 0) + 1
                reasons = {}
                for files in outcomes:
                    for r in files:
                        reasons[r] = reasons.get(r, 0) + 1
                rows.append((n, before, peak, elapsed, ok_ms, len(latencies) - len(ok_ms), codes, reasons))
                print(f"N={n}: done in {elapsed:.0f} s; answers {codes}")
                for r, c in reasons.items():
                    print(f"    {c} x {r}")
            print(f"\nserver VmHWM (peak RSS of its life): {rss_kib(server.pid, 'VmHWM') / 1024:.0f} MiB\n")
            print("| N | RSS before (MiB) | peak RSS (MiB) | rise (MiB) | wall (s) | searches | failed | p50 (ms) | p99 (ms) |")
            print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
            for n, before, peak, elapsed, ok_ms, failed, _, _ in rows:
                print(f"| {n} | {before / 1024:.0f} | {peak / 1024:.0f} | {(peak - before) / 1024:.0f} | {elapsed:.0f} "
                      f"| {len(ok_ms)} | {failed} | {pct(ok_ms, 50):.0f} | {pct(ok_ms, 99):.0f} |")
        finally:
            docshelf_proc.stop(server)


if __name__ == "__main__":
    main()
