#!/usr/bin/env python3
"""`make bench-replicas`: two docshelf servers on one local store.

Starts two `docshelf serve` processes (DOCSHELF_BIN, or the dev build) on
one fresh store directory, uploads a small page to the first N times (each
with a made-up word of its own), and prints how long after the upload was
accepted the word is found by a keyword search on the writer itself and on
the other server: the time until a document is visible on another replica,
which `--read-consistency-secs` bounds. Figures are printed, never asserted.
Traffic goes to 127.0.0.1 only; every wait is bounded.

Usage: bench-replicas.py [--rounds N] [--read-consistency-secs S] [--bin PATH]
"""
import argparse
import json
import os
import statistics
import tempfile
import time
import urllib.error
import urllib.request

import docshelf_proc
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--read-consistency-secs", type=float, default=2.0)
    ap.add_argument("--bin", default=os.environ.get("DOCSHELF_BIN") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "debug", "docshelf"))
    args = ap.parse_args()
    model = os.environ.get("DOCSHELF_MODEL_DIR", os.path.join(ROOT, "models", "all-MiniLM-L6-v2"))
    extra = ["--read-consistency-secs", str(args.read_consistency_secs)]

    with tempfile.TemporaryDirectory(prefix="docshelf-replicas-") as store:
        writer, a = docshelf_proc.start(args.bin, store, model, extra)
        reader, b = docshelf_proc.start(args.bin, store, model, extra)
        try:
            print(f"docshelf {args.bin}\ntwo servers on one store, --read-consistency-secs "
                  f"{args.read_consistency_secs}")
            on_writer, on_other = [], []
            for i in range(args.rounds):
                word = f"zq{uuid.uuid4().hex[:10]}"
                accepted = time.perf_counter()
                upload_page(a, f"page{i}.md", f"# Page {i}\n\nThe word {word} is here.\n")
                seen = {}
                deadline = accepted + 60
                while len(seen) < 2 and time.perf_counter() < deadline:
                    for name, base in (("writer", a), ("other", b)):
                        if name not in seen and found(base, word):
                            seen[name] = time.perf_counter() - accepted
                    time.sleep(0.05)
                on_writer += [seen["writer"]] if "writer" in seen else []
                on_other += [seen["other"]] if "other" in seen else []
            print(f"visible on the writer   {summary(on_writer)}")
            print(f"visible on the other    {summary(on_other)}")
            missing = args.rounds - len(on_other)
            if missing:
                print(f"not visible on the other within 60 s: {missing}")
        finally:
            for server in (writer, reader):
                docshelf_proc.stop(server)


if __name__ == "__main__":
    main()
