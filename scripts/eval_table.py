#!/usr/bin/env python3
"""Prints `make eval`'s table: docshelf's modes and the plain Python
pipeline's, nDCG@10 and Recall@10 per set side by side, then docshelf's
margin over the plain pipeline per mode.

Usage: eval_table.py DOCSHELF_JSON [SET=PLAIN_JSON ...]
(DOCSHELF_JSON is `docshelf eval --json`; each PLAIN_JSON is
`plain_pipeline.py --json` for one set.) Standard library only."""
import json
import sys


def main():
    reports = json.load(open(sys.argv[1], encoding="utf-8"))
    plain = {}
    for arg in sys.argv[2:]:
        name, path = arg.split("=", 1)
        plain[name] = {s["variant"]: s for s in json.load(open(path, encoding="utf-8"))["scores"]}
    sets = [r["set"] for r in reports]
    k = reports[0]["k"]
    for r in reports:
        queries = r["scores"][0]["queries"] if r["scores"] else 0
        print(f"{r['set']}: {r['documents']} documents, {r['chunks']} chunks, {queries} queries")
    head = f"{'':28}" + "".join(f" | {s:^19}" for s in sets)
    sub = f"{'':28}" + "".join(f" | {'nDCG@' + str(k):>9} {'R@' + str(k):>9}" for _ in sets)
    print(head)
    print(sub)

    def row(label, cells):
        print(f"{label:28}" + "".join(
            f" | {c['ndcg']:>9.4f} {c['recall']:>9.4f}" if c else f" | {'':>19}" for c in cells))

    variants = [s["variant"] for s in reports[0]["scores"]]
    for v in variants:
        row(f"docshelf {v}", [next((s for s in r["scores"] if s["variant"] == v), None) for r in reports])
    plain_variants = []
    for p in plain.values():
        plain_variants += [v for v in p if v not in plain_variants]
    for v in plain_variants:
        row(f"plain {v}", [plain.get(s, {}).get(v) for s in sets])
    if not plain:
        return
    print()
    print("docshelf minus plain, nDCG@%d (default settings):" % k)
    pairs = [("dense", "dense"), ("keyword", "keyword"), ("hybrid", "hybrid (rrf)")]
    for ours, theirs in pairs:
        cells = []
        for r in reports:
            a = next((s for s in r["scores"] if s["variant"] == ours), None)
            b = plain.get(r["set"], {}).get(theirs)
            cells.append(f"{a['ndcg'] - b['ndcg']:+.4f}" if a and b else "   n/a")
        print(f"  {ours:10} vs plain {theirs:14}" + "".join(f" | {r['set']} {c}" for r, c in zip(reports, cells)))


if __name__ == "__main__":
    main()
