#!/usr/bin/env python3
"""Scores the runs of scripts/bench-crawl-vs-git.sh: serves each run's store,
runs every query of the eval set through `POST /api/search` (k=10, the
defaults: hybrid, one result per page), maps each result to a page of the
docs folder and prints one Markdown table: side, wall seconds (and of them,
the seconds of the same ingest with nothing left to embed), pages stored,
chunks, nDCG@10 and Recall@10 over every query, and over the queries whose
judged page every side stored.

Page mapping (to the qrels' names, which are paths below docs/):
  git    the path in the repository less the docs folder: docs/x.md -> x.md
  crawl  the URL's path by MkDocs' directory URLs: / -> index.md,
         /x/ and /x/index.html -> x.md (or x/index.md), /x.html -> x.md
  files  the uploaded file's own path: x.md
A result that maps to no page of the docs folder counts as not relevant (and
is listed as junk when a stored page maps to nothing).

Usage: bench_crawl_vs_git.py --bin PATH --model DIR --eval DIR --docs DIR --runs RUNS.jsonl [--notes FILE]
Standard library only (plus docshelf_proc beside it).
"""
import argparse
import json
import math
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docshelf_proc  # noqa: E402

K = 10


def http_json(base, path, body=None, timeout=120):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data,
                                 headers={"content-type": "application/json"} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as res:
            return json.load(res)
    except urllib.error.HTTPError as err:
        raise SystemExit(f"{path}: {err.code} {err.read()[:500]!r}")


def page_of(kind, file_path, pages):
    """The docs-folder page (as the qrels name it) a stored path stands for, or None."""
    if kind == "crawl":
        path = urllib.parse.urlsplit(file_path).path.lstrip("/")
        if path.endswith("index.html"):
            path = path[: -len("index.html")]
        elif path.endswith(".html"):
            path = path[: -len(".html")]
        path = path.rstrip("/")
        candidates = [path + ".md", path + "/index.md"] if path else ["index.md"]
    elif kind == "git":
        candidates = [file_path.split("/", 1)[1] if file_path.startswith("docs/") else file_path]
    else:
        candidates = [file_path.lstrip("./")]
    for name in candidates:
        if name in pages:
            return name
    return None


def ndcg_recall(ranked, rel, k=K):
    dcg = sum(rel.get(name, 0) / math.log2(i + 2) for i, name in enumerate(ranked[:k]))
    ideal = sorted(rel.values(), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    positives = [n for n, r in rel.items() if r > 0]
    found = len(set(ranked[:k]) & set(positives))
    return (dcg / idcg if idcg else 0.0), (found / len(positives) if positives else 0.0)


def score_run(args, run, queries, pages):
    server, base = docshelf_proc.start(args.bin, run["store"], args.model)
    try:
        docshelf_proc.wait_in_memory(base)
        q = urllib.parse.quote
        libs = {lib["name"]: lib for lib in http_json(base, "/api/libraries")}
        lib = libs.get(run["library"])
        if lib is None:
            raise SystemExit(f"{run['side']}: library {run['library']} not in the store ({sorted(libs)})")
        docs = http_json(base, f"/api/libraries/{q(run['library'])}/documents?version={q(run['version'])}")
        stored = {}
        for d in docs:
            stored[d["file_path"]] = page_of(run["kind"], d["file_path"], pages)
        ranked_by_query = {}
        for query in queries:
            res = http_json(base, "/api/search", {"query": query["text"], "library": run["library"],
                                                  "version": run["version"], "k": K})
            ranked = []
            for r in res["results"]:
                name = page_of(run["kind"], r["file_path"], pages) or ("?" + r["file_path"])
                if name not in ranked:
                    ranked.append(name)
            ranked_by_query[query["id"]] = ranked
    finally:
        docshelf_proc.stop(server)
    return {"documents": lib["documents"], "chunks": lib["chunks"], "stored": stored, "ranked": ranked_by_query}


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--eval", required=True, help="folder with queries.jsonl and qrels.jsonl")
    ap.add_argument("--docs", required=True, help="the docs folder the qrels' file names are relative to")
    ap.add_argument("--runs", required=True)
    ap.add_argument("--notes")
    args = ap.parse_args()

    queries = [json.loads(l) for l in open(os.path.join(args.eval, "queries.jsonl")) if l.strip()]
    qrels = {}
    for l in open(os.path.join(args.eval, "qrels.jsonl")):
        if l.strip():
            j = json.loads(l)
            qrels.setdefault(j["query_id"], {})[j["file"]] = j["relevance"]
    pages = set()
    for dirpath, dirnames, filenames in os.walk(args.docs):
        dirnames[:] = [d for d in dirnames if not d.startswith((".", "_"))]
        for f in filenames:
            if f.endswith(".md"):
                pages.add(os.path.relpath(os.path.join(dirpath, f), args.docs))
    runs = [json.loads(l) for l in open(args.runs) if l.strip()]

    for run in runs:
        print(f"bench-crawl-vs-git: scoring {run['side']}", file=sys.stderr, flush=True)
        run.update(score_run(args, run, queries, pages))
        run["held"] = {p for p in run["stored"].values() if p}

    held_by_all = set.intersection(*(r["held"] for r in runs))
    common = [q for q in queries if set(qrels.get(q["id"], {})) <= held_by_all]

    def side_label(run):
        if run["kind"] == "crawl":
            return f"crawl ({run['rate']} req/s)"
        if run["kind"] == "files":
            return "files (docs/*.md uploaded; reference)"
        return "git (tag 1.10.0)"

    print(f"## Crawl vs Git fetch: Starlette 1.10.0 docs ({len(pages)} Markdown pages in docs/, "
          f"{len(queries)} queries)\n")
    print(f"| side | wall seconds | of which not embedding | pages stored | chunks | nDCG@10 | Recall@10 "
          f"| nDCG@10 ({len(common)} q) | Recall@10 ({len(common)} q) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for run in runs:
        per = {q["id"]: ndcg_recall(run["ranked"][q["id"]], qrels.get(q["id"], {})) for q in queries}
        run["per"] = per
        all_n, all_r = mean([per[q["id"]][0] for q in queries]), mean([per[q["id"]][1] for q in queries])
        c_n, c_r = mean([per[q["id"]][0] for q in common]), mean([per[q["id"]][1] for q in common])
        again = f"{run['again_s']:.1f}" if "again_s" in run else "-"
        print(f"| {side_label(run)} | {run['wall_s']:.1f} | {again} | {run['documents']} | {run['chunks']} "
              f"| {all_n:.3f} | {all_r:.3f} | {c_n:.3f} | {c_r:.3f} |")
    print(f"\nWall seconds: the whole `docshelf ingest` into a fresh store (model load, fetch, extraction, "
          f"embedding, publish). Of which not embedding: the same ingest again into a copy of that store, "
          f"where every chunk's vector is found by its content hash. ({len(common)} q): the queries whose "
          f"judged page every side stored.")

    print("\nPages:")
    for run in runs:
        missing = sorted(pages - run["held"])
        junk = sorted(p for p, name in run["stored"].items() if name is None)
        print(f"- {run['side']}: {len(run['held'])} of {len(pages)} docs pages"
              + (f"; not stored: {', '.join(missing)}" if missing else "")
              + (f"; stored pages that map to no docs page: {', '.join(junk)}" if junk else ""))
        for line in run.get("summary", []):
            print(f"  - `{line}`")

    by_side = {r["side"]: r for r in runs}
    if "git" in by_side and "crawl" in by_side:
        g, c = by_side["git"]["per"], by_side["crawl"]["per"]
        better_c = [q for q in g if c[q][0] > g[q][0] + 1e-9]
        better_g = [q for q in g if g[q][0] > c[q][0] + 1e-9]
        print(f"\nPer query (nDCG@10): crawl better on {len(better_c)}, git better on {len(better_g)}, "
              f"equal on {len(g) - len(better_c) - len(better_g)}.")
        for label, ids in (("crawl better", better_c), ("git better", better_g)):
            if ids:
                print(f"- {label}: " + ", ".join(
                    f"{q} ({'/'.join(qrels[q])}: git {g[q][0]:.2f}, crawl {c[q][0]:.2f})" for q in ids))

    if args.notes and os.path.exists(args.notes):
        print("\nNotes:")
        for line in open(args.notes):
            print(f"- {line.rstrip()}")
        print(f"- binary: {args.bin}")


if __name__ == "__main__":
    main()
