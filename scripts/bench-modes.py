#!/usr/bin/env python3
"""Search latency over HTTP per mode, for one or more docshelf binaries.

    scripts/bench-modes.py --store DIR --library NAME --queries queries.jsonl \\
        before=/path/to/old/docshelf after=/path/to/new/docshelf [--rounds 2]

Each round starts each binary in turn on the same store, so two builds are
compared minutes apart on the same machine and its noise lands on both. A
server is searched only once it answers from its in-memory copy, after 20
warm-up searches; then every query runs once per mode (`keyword`, `dense`,
`hybrid`), one at a time over one keep-alive connection, k=10, filtered to
the library. Prints per mode the client's p50 / p99, the server's own
`took_ms` p50, the rest ("outside": HTTP, encoding, the client) and the
server process's CPU time per search (from /proc). Figures are printed,
never asserted.
"""
import argparse
import http.client
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docshelf_proc  # noqa: E402


def percentile(values, p):
    s = sorted(values)
    return s[round((len(s) - 1) * p)]


def cpu_ms(pid):
    """User + system CPU time of process `pid` so far, in ms."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binaries", nargs="+", help="LABEL=PATH of a docshelf binary")
    ap.add_argument("--store", required=True)
    ap.add_argument("--library", required=True)
    ap.add_argument("--queries", required=True, help="queries.jsonl (a `text` per line)")
    ap.add_argument("--model", default=os.path.join(root, "models", "all-MiniLM-L6-v2"))
    ap.add_argument("--modes", default="keyword,dense,hybrid")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    queries = [json.loads(line)["text"] for line in open(args.queries) if line.strip()]
    if any("=" not in spec for spec in args.binaries):
        ap.error("name each binary as LABEL=PATH")
    binaries = [spec.split("=", 1) for spec in args.binaries]
    print(f"{len(queries)} queries per mode, library {args.library}, {args.rounds} round(s)")
    print(f"{'round':>5} {'binary':<10} {'mode':<8} {'p50':>7} {'p99':>7} {'took p50':>9} "
          f"{'outside p50':>12} {'CPU/search':>11}")
    for r in range(args.rounds):
        for label, binary in binaries:
            server, base = docshelf_proc.start(binary, args.store, args.model)
            try:
                docshelf_proc.wait_in_memory(base, name=label)
                conn = http.client.HTTPConnection(base.split("//")[1])

                def search(query, mode):
                    body = json.dumps({"query": query, "k": 10, "library": args.library,
                                       "mode": mode})
                    start = time.perf_counter()
                    conn.request("POST", "/api/search", body,
                                 {"content-type": "application/json"})
                    res = conn.getresponse()
                    data = res.read()
                    elapsed = (time.perf_counter() - start) * 1e3
                    if res.status != 200:
                        raise SystemExit(f"{label} {mode}: HTTP {res.status}: {data[:200]!r}")
                    return elapsed, json.loads(data)["took_ms"]

                for q in queries[:20]:
                    search(q, "hybrid")
                for mode in args.modes.split(","):
                    before = cpu_ms(server.pid)
                    timed = [search(q, mode) for q in queries]
                    cpu = (cpu_ms(server.pid) - before) / len(timed)
                    client = [t for t, _ in timed]
                    took = [s for _, s in timed]
                    outside = [t - s for t, s in timed]
                    print(f"{r:>5} {label:<10} {mode:<8} {statistics.median(client):>7.2f} "
                          f"{percentile(client, 0.99):>7.2f} {statistics.median(took):>9.2f} "
                          f"{statistics.median(outside):>12.2f} {cpu:>11.2f}", flush=True)
            finally:
                docshelf_proc.stop(server)


if __name__ == "__main__":
    main()
