#!/usr/bin/env python3
"""Hand-judged question sets of one kind, over the six eval corpora: how
well search ranks the pages that answer them.

  comparisons  eval/comparisons: "X vs Y", "should I use X or Y for …"
               (84 questions, 14 per corpus)
  concepts     eval/concepts: what something is, why, how it works
               (84 questions, 14 per corpus)

Each set is graded (relevance 2/1) and was judged before any system output
was seen; git-docs and npm-docs tune, the other four are held out (each
set's README).

The store is made as scripts/bench-budget.py makes it (eval_store: one
library per set, version 1, ingested fresh unless --reuse-store). Each
question is searched over REST filtered to its set's library (hybrid,
k=10, defaults) and scored as `docshelf eval` scores: the results'
file_path list, duplicates dropped, each compared whole with the judged
files; nDCG@5 and nDCG@10 with gain 2^rel - 1;
Recall@10 (share of the judged pages in the first 10); "every judged page
in the first 5"; "a 2 first": the first result is a relevance-2 page.

Usage:
  scripts/bench-questions.py comparisons|concepts [--bin PATH] [--model-dir DIR]
                             [--sets a,b,..] [--work DIR] [--reuse-store]
                             [--per-query] [--results OUT]
Standard library only.
"""
import argparse
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import docshelf_proc  # noqa: E402
from eval_store import (HELD_OUT, add_arguments, build_store, judged_name,  # noqa: E402
                        post, read_graded, set_dir)

KINDS = ("comparisons", "concepts")


def relevance(path, judged):
    """The judged relevance of a result's stored path (0: not judged)."""
    return judged.get(judged_name(path), 0)


def ndcg(paths, judged, k):
    def gain(rel):
        return 2 ** rel - 1
    dcg = sum(gain(relevance(p, judged)) / math.log2(i + 2) for i, p in enumerate(paths[:k]))
    ideal = sorted(judged.values(), reverse=True)[:k]
    idcg = sum(gain(r) / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def score(base, name, questions):
    rows = []
    for qid, text, judged in questions:
        body, _ = post(base + "/api/search", {"query": text, "library": name, "k": 10})
        paths = []
        for r in json.loads(body)["results"]:
            if r["file_path"] not in paths:
                paths.append(r["file_path"])
        found = set(judged) & {judged_name(p) for p in paths[:10]}
        top5 = set(judged) & {judged_name(p) for p in paths[:5]}
        rows.append({"id": qid, "ndcg5": ndcg(paths, judged, 5), "ndcg10": ndcg(paths, judged, 10),
                     "recall10": len(found) / len(judged), "both5": len(top5) == len(judged),
                     "first2": bool(paths) and relevance(paths[0], judged) == 2,
                     "paths": paths[:5]})
    return rows


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("kind", choices=KINDS, help="which question set (a folder of eval/)")
    add_arguments(p)
    p.add_argument("--per-query", action="store_true", help="print each question's top 5")
    p.add_argument("--results", help="per-question scores and first 5 paths, JSON lines")
    args = p.parse_args()
    names = [s for s in args.sets.split(",") if s]
    dirs = {n: set_dir(n, args) for n in names}
    binary, model, _, store, _ = build_store(args, names, dirs, f"bench-{args.kind}-")
    questions = os.path.join(REPO, "eval", args.kind)

    server, base = docshelf_proc.start(binary, store, model)
    try:
        docshelf_proc.wait_in_memory(base)
        per = {n: score(base, n, read_graded(os.path.join(questions, n))) for n in names}
    finally:
        docshelf_proc.stop(server)

    for metric, title in (("ndcg5", "nDCG@5"), ("ndcg10", "nDCG@10"), ("recall10", "Recall@10"),
                          ("both5", "every judged page in the first 5"), ("first2", "a 2 first")):
        print(f"\n| {title} | " + " | ".join(n + ("*" if n in HELD_OUT else "") for n in names)
              + " | tuning | held-out |")
        print("| --- |" + " ---: |" * (len(names) + 2))
        cells = [f"{mean([r[metric] for r in per[n]]):.3f}" for n in names]
        tune = [r[metric] for n in names if n not in HELD_OUT for r in per[n]]
        held = [r[metric] for n in names if n in HELD_OUT for r in per[n]]
        split = [f"{mean(xs):.3f}" if xs else "–" for xs in (tune, held)]
        print("| docshelf | " + " | ".join(cells + split) + " |")
    if args.results:
        with open(args.results, "w") as f:
            for n in names:
                for r in per[n]:
                    f.write(json.dumps({"set": n, **r}) + "\n")
    if args.per_query:
        for n in names:
            for r in per[n]:
                print(f"- {n} {r['id']} nDCG@5 {r['ndcg5']:.2f}: {', '.join(r['paths'])}")


if __name__ == "__main__":
    main()
