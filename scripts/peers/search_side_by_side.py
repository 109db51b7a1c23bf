#!/usr/bin/env python3
"""docshelf's search beside the stacks a user would otherwise pick, one run.

The same chunks (the bench corpus docshelf's `make bench-search ROWS=…`
grows and caches), the same 190 queries, k=10, filtered to one library,
query embedding included in every figure:

  docshelf          the `docshelf` binary serving the corpus; dense and hybrid
                    search over HTTP (so it also pays for HTTP and JSON, which
                    the peers, called in-process, do not), one server per
                    `--precisions` entry (`--embed-precision`; the stored
                    vectors are the same, only queries embed at it).
  chroma dense      Chroma (HNSW, cosine) + sentence-transformers.
  lancedb-py hybrid LanceDB's Python release (the engine docshelf embeds):
                    IVF-PQ with the same settings as docshelf, its own BM25
                    index, RRF; + sentence-transformers.

Queries run in rounds; within a round each system answers the same query in
turn, rotating who goes first, so machine noise lands on all of them alike.
Prints p50/p99 per system and docshelf's ratio against each peer. The peers'
stores are built in a temporary directory on every run (their build times
are printed too). Figures are printed, never asserted.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
import urllib.request
import warnings

# The benches' shared way to run docshelf lives one folder up.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import docshelf_proc  # noqa: E402

# LanceDB deprecates the create_index arguments used below; they still work.
warnings.filterwarnings("ignore", category=DeprecationWarning)


def percentile(values, p):
    s = sorted(values)
    return s[round((len(s) - 1) * p)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--store", required=True, help="docshelf's bench corpus store")
    ap.add_argument("--model", required=True, help="all-MiniLM-L6-v2 folder")
    ap.add_argument("--bin", required=True, help="the docshelf binary")
    ap.add_argument("--queries", required=True, help="queries.jsonl")
    ap.add_argument("--library", default="lib03")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--precisions", default="fp32",
                    help="comma list of docshelf's --embed-precision values, a server each")
    ap.add_argument("--baseline-bin",
                    help="another docshelf binary (an earlier commit's) served beside --bin "
                         "at each precision, its lines marked 'before'")
    args = ap.parse_args()

    import chromadb
    import lancedb
    import pyarrow as pa
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(os.cpu_count() or 1)
    queries = [json.loads(line)["text"] for line in open(args.queries) if line.strip()]
    model = SentenceTransformer(args.model, device="cpu")

    # The same rows docshelf serves, read from its own table.
    table = lancedb.connect(args.store).open_table("chunks_v2").to_arrow()
    table = table.select(["chunk_id", "library", "file_path", "text", "vector"])
    rows = table.num_rows
    print(f"corpus: {rows} chunks from {args.store}; {len(queries)} queries x {args.rounds} rounds; "
          f"filter library={args.library}; k=10")

    work = tempfile.mkdtemp(prefix="docshelf-peers-")
    # LanceDB-Python: the same index settings docshelf uses (IVF-PQ, about
    # sqrt(n) partitions, 48 sub-vectors, cosine; nprobes 20, refine 5).
    t = time.perf_counter()
    ldb = lancedb.connect(os.path.join(work, "lancedb"))
    ltbl = ldb.create_table("chunks", table)
    ltbl.create_scalar_index("library", index_type="BITMAP")
    ltbl.create_fts_index("text", use_tantivy=False)
    if rows >= 50_000:
        ltbl.create_index(metric="cosine", vector_column_name="vector",
                          num_partitions=max(1, min(4096, int(rows ** 0.5))), num_sub_vectors=48)
    print(f"lancedb-py: table and indexes built in {time.perf_counter() - t:.0f} s")

    # Chroma: HNSW over cosine, the library as metadata.
    t = time.perf_counter()
    client = chromadb.PersistentClient(path=os.path.join(work, "chroma"))
    col = client.create_collection("chunks", metadata={"hnsw:space": "cosine"})
    ids = table.column("chunk_id").to_pylist()
    libs = table.column("library").to_pylist()
    texts = table.column("text").to_pylist()
    vectors = table.column("vector").combine_chunks().flatten().to_numpy().reshape(rows, -1)
    step = 5000
    for i in range(0, rows, step):
        col.add(ids=ids[i:i + step], embeddings=vectors[i:i + step],
                metadatas=[{"library": lib} for lib in libs[i:i + step]],
                documents=texts[i:i + step])
    print(f"chroma: {rows} chunks added in {time.perf_counter() - t:.0f} s")
    del table, ids, libs, texts, vectors

    binaries = [("", args.bin)] + ([(" before", args.baseline_bin)] if args.baseline_bin else [])
    servers = []
    for precision in args.precisions.split(","):
        for mark, binary in binaries:
            server, base = docshelf_proc.start(binary, args.store, args.model,
                                               extra=("--embed-precision", precision), wait_s=300)
            servers.append((precision + mark, server, base))
            t = time.perf_counter()
            in_memory = docshelf_proc.wait_in_memory(base)
            print(f"docshelf {precision}{mark}: "
                  f"{'in-memory copy read' if in_memory else 'searching on disk'} "
                  f"{time.perf_counter() - t:.1f} s after start")
    where = f"library = '{args.library}'"

    def docshelf(base, mode):
        def search(q):
            body = json.dumps({"query": q, "library": args.library, "k": 10, "mode": mode}).encode()
            req = urllib.request.Request(base + "/api/search", data=body,
                                         headers={"content-type": "application/json"})
            with urllib.request.urlopen(req, timeout=60) as res:
                hits = json.loads(res.read())["results"]
            # One hit a page: a small corpus may have fewer than k pages
            # that pass the dense leg's floor.
            assert 0 < len(hits) <= 10, f"docshelf returned {len(hits)} hits"
        return search

    def chroma(q):
        v = model.encode(q, normalize_embeddings=True)
        res = col.query(query_embeddings=[v], n_results=10, where={"library": args.library})
        assert len(res["ids"][0]) == 10

    def lancedb_hybrid(q):
        v = model.encode(q, normalize_embeddings=True)
        hits = (ltbl.search(query_type="hybrid").vector(v).text(q)
                .where(where, prefilter=True).nprobes(20).refine_factor(5).limit(10).to_list())
        assert len(hits) == 10, f"lancedb-py returned {len(hits)} hits"

    systems = []
    for precision, _, base in servers:
        systems.append((f"docshelf {precision} dense (HTTP)", docshelf(base, "dense")))
        systems.append((f"docshelf {precision} hybrid (HTTP)", docshelf(base, "hybrid")))
    systems += [("chroma + s-t dense", chroma), ("lancedb-py + s-t hybrid", lancedb_hybrid)]
    try:
        for q in queries[:10]:  # warm up
            for _, run in systems:
                run(q)
        times = {name: [] for name, _ in systems}
        n = 0
        for _ in range(args.rounds):
            for q in queries:
                shift = n % len(systems)
                order = systems[shift:] + systems[:shift]
                n += 1
                for name, run in order:
                    t = time.perf_counter()
                    run(q)
                    times[name].append((time.perf_counter() - t) * 1e3)
    finally:
        for _, server, _ in servers:
            docshelf_proc.stop(server)

    chroma_p50 = statistics.median(times["chroma + s-t dense"])
    print(f"{'system (end to end, k=10, one library)':<40} {'p50 ms':>8} {'p99 ms':>8} {'chroma p50 / this':>18}")
    for name, _ in systems:
        p50 = statistics.median(times[name])
        print(f"{name:<40} {p50:>8.2f} {percentile(times[name], 0.99):>8.2f} {chroma_p50 / p50:>18.2f}")


if __name__ == "__main__":
    main()
