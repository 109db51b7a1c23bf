#!/usr/bin/env python3
"""docshelf beside LanceDB-Python on the very table docshelf serves, one run.

The anchor for the scale bench: at many libraries and rows, the stack a user
would otherwise pick is LanceDB's own Python release on the same table, so
this opens docshelf's `chunks_v2` in place, read-only, with the indexes
docshelf built (IVF-PQ on `vector` where the table has one, BM25 on
`search_text`, bitmaps on library and version), and never writes, re-indexes
or optimises it. k=10, query embedding included in every figure:

  docshelf           `docshelf serve` on the store, hybrid search over HTTP
                     (so it also pays for HTTP and JSON, which the peer,
                     called in-process, does not); it embeds server-side.
  lancedb-py hybrid  LanceDB's Python release: the table's IVF-PQ (cosine;
                     --nprobes, --refine-factor) and BM25 index, fused by its
                     default RRF; sentence-transformers embeds the query.
                     Should hybrid fail on this table, the output says so and
                     the peer's line is dense (vector) alone, labelled so.

Two scopes: one library (--library, a prefilter for the peer) and every
library (no filter; the first --every-queries queries). Queries run in
rounds; each system answers the same query in turn, rotating who goes first,
so machine noise lands on both alike. Prints p50/p99 per system and
docshelf's speed ratio (lancedb-py p50 / docshelf p50), the table's size,
and what docshelf held in memory (`/api/status` store.memory) at the end.
Figures are printed, never asserted.
"""
import argparse
import json
import math
import os
import re
import statistics
import sys
import time
import urllib.request

# The benches' shared way to run docshelf lives one folder up.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import docshelf_proc  # noqa: E402

# LanceDB warns on every query that selects columns without its scores
# (a future default); the log line would be timed with the query.
os.environ.setdefault("LANCEDB_LOG", "error")

COLUMNS = ["chunk_id", "library", "version", "file_path", "text"]


def percentile(values, p):
    s = sorted(values)
    return s[round((len(s) - 1) * p)]


def status(base):
    with urllib.request.urlopen(base + "/api/status", timeout=60) as res:
        return json.loads(res.read())


def wait_settled(base, wait_s=600):
    """Waits until docshelf answers and its start-up read into memory is
    over: the whole store held, or nothing more read for 5 s (a store
    larger than --resident-mib). Returns the status it ended on."""
    deadline, last, since = time.monotonic() + wait_s, None, time.monotonic()
    while time.monotonic() < deadline:
        try:
            s = status(base)
        except OSError:
            time.sleep(0.5)
            continue
        m = s["store"]["memory"]
        now = (m["loads"], m["held_bytes"])
        if s["store"].get("in_memory"):
            return s
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= 5:
            return s
        time.sleep(0.5)
    return status(base)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", required=True, help="docshelf's store directory")
    ap.add_argument("--model", required=True, help="all-MiniLM-L6-v2 folder")
    ap.add_argument("--bin", required=True, help="the docshelf binary")
    ap.add_argument("--queries", required=True, help="queries.jsonl")
    ap.add_argument("--library", default="lib03")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--resident-mib", type=int, help="docshelf's --resident-mib (default: its own)")
    ap.add_argument("--every-queries", type=int, default=50,
                    help="queries for the every-library scope")
    ap.add_argument("--nprobes", type=int, default=20)
    ap.add_argument("--refine-factor", type=int, default=5)
    args = ap.parse_args()

    import lancedb
    import pyarrow.compute as pc
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(os.cpu_count() or 1)
    queries = [json.loads(line)["text"] for line in open(args.queries) if line.strip()]
    model = SentenceTransformer(args.model, device="cpu")

    # The table docshelf serves, opened in place; only ever read.
    tbl = lancedb.connect(args.store).open_table("chunks_v2")
    rows = tbl.count_rows()
    libraries = set()
    for batch in tbl.search().select(["library"]).limit(None).to_batches():
        libraries.update(pc.unique(batch.column(0)).to_pylist())
    print(f"lancedb {lancedb.__version__}; corpus: {rows} chunks, {len(libraries)} libraries "
          f"in {args.store}; k=10; {args.rounds} round(s)")
    indexes = list(tbl.list_indices())
    print("indexes: " + ", ".join(f"{i.name} ({i.index_type} on {','.join(i.columns)})"
                                  for i in indexes))
    ivf = next((i.name for i in indexes if "vector" in i.columns), None)
    if ivf is None:
        print("no vector index: lancedb-py's dense leg is a flat (exact) scan")
    elif m := re.search(r"_p(\d+)$", ivf):
        p = int(m.group(1))
        print(f"lancedb-py probes {args.nprobes}, refine factor {args.refine_factor}; docshelf's "
              f"own rule for {p} partitions, when it searches on disk: probes "
              f"{max(20, math.ceil(p / 32))}, refine {max(5, math.ceil(p / 50))}")

    extra = ("--resident-mib", str(args.resident_mib)) if args.resident_mib is not None else ()
    server, base = docshelf_proc.start(args.bin, args.store, args.model, extra=extra, wait_s=300)
    try:
        t = time.perf_counter()
        s = wait_settled(base)
        print(f"docshelf: settled {time.perf_counter() - t:.1f} s after start "
              f"(whole store in memory: {s['store'].get('in_memory')}); "
              f"second stage: {json.dumps(s.get('reranker'))}")
        print("docshelf memory at start: " + json.dumps(s["store"]["memory"]))

        def docshelf(library):
            def search(q):
                req = {"query": q, "k": 10, "mode": "hybrid"}
                if library:
                    req["library"] = library
                r = urllib.request.Request(base + "/api/search", data=json.dumps(req).encode(),
                                           headers={"content-type": "application/json"})
                with urllib.request.urlopen(r, timeout=120) as res:
                    return len(json.loads(res.read())["results"])
            return search

        def lancedb_py(where, hybrid):
            def search(q):
                v = model.encode(q, normalize_embeddings=True)
                if hybrid:
                    query = (tbl.search(query_type="hybrid", vector_column_name="vector",
                                        fts_columns="search_text").vector(v).text(q))
                else:
                    query = tbl.search(v, query_type="vector", vector_column_name="vector")
                query = (query.distance_type("cosine").nprobes(args.nprobes)
                         .refine_factor(args.refine_factor).select(COLUMNS).limit(10))
                if where:
                    query = query.where(where, prefilter=True)
                return query.to_arrow().num_rows
            return search

        results = []
        scopes = [(f"library={args.library}", args.library, queries),
                  ("every library", None, queries[:args.every_queries])]
        for scope, library, qs in scopes:
            where = f"library = '{library}'" if library else None
            peer, label = lancedb_py(where, True), "lancedb-py + s-t hybrid"
            try:
                peer(qs[0])
            except Exception as err:  # noqa: BLE001 (any failure: say so, measure dense)
                print(f"lancedb-py hybrid failed on this table ({scope}): "
                      f"{type(err).__name__}: {err}; measuring its dense search alone")
                peer, label = lancedb_py(where, False), "lancedb-py + s-t DENSE ONLY"
            systems = [("docshelf hybrid (HTTP)", docshelf(library)), (label, peer)]
            for q in qs[:10]:  # warm up
                for _, run in systems:
                    run(q)
            times = {name: [] for name, _ in systems}
            hits = {name: 0 for name, _ in systems}
            n = 0
            for _ in range(args.rounds):
                for q in qs:
                    order = systems[n % 2:] + systems[:n % 2]
                    n += 1
                    for name, run in order:
                        t = time.perf_counter()
                        got = run(q)
                        times[name].append((time.perf_counter() - t) * 1e3)
                        hits[name] += got
            results.append((scope, len(qs), systems, times, hits, n))
        memory = status(base)["store"]["memory"]
    finally:
        docshelf_proc.stop(server)

    print(f"\n{'scope':<20} {'system (end to end, k=10)':<30} {'queries':>7} {'hits/q':>6} "
          f"{'p50 ms':>8} {'p99 ms':>8} {'lancedb p50 / this':>19}")
    for scope, nq, systems, times, hits, n in results:
        peer_p50 = statistics.median(times[systems[1][0]])
        for name, _ in systems:
            p50 = statistics.median(times[name])
            print(f"{scope:<20} {name:<30} {nq:>7} {hits[name] / n:>6.1f} {p50:>8.2f} "
                  f"{percentile(times[name], 0.99):>8.2f} {peer_p50 / p50:>19.2f}")
    print("\ndocshelf memory at the end: " + json.dumps(memory))


if __name__ == "__main__":
    main()
