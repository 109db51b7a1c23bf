#!/usr/bin/env python3
"""How alike the passages of one answer are, on real stores: the measure
behind the near-duplicate rule of token budgets (server/src/search/budget).

The store: the six eval sets (eval/README.md, one library each, version
"1"), plus an older release of three of them from the same registries as
version "0" (flask 3.0.3, hatch 1.14.0, npm 10.9.2: same pages, edited
between releases), so that a search of those libraries, which covers every
version, meets the same passage twice as it does on a store that keeps
releases.

Every query of every set is searched filtered to its set's library with
k=50 (what a budget of 5,000 tokens or more ranks; smaller budgets rank
fewer) and no budget, so each result keeps its best chunk's text. Every
pair of results of one answer is compared on their texts as words
(lower-cased, punctuation kept inside words, whitespace ignored):

  containment   |shingles(a) & shingles(b)| / min(|shingles(a)|, |shingles(b)|)
  jaccard       |shingles(a) & shingles(b)| / |shingles(a) | shingles(b)|

with 5-word shingles (texts under 5 words compared as one shingle). A pair
is put in one kind: same page in two versions, another page of the same
version, another page in another version.

Printed: per kind, how many pairs fall in each containment band; the
tokens (o200k_base, when tiktoken is importable; else words) the later
passage of a pair costs; per band a few pairs side by side (first 160
characters of each), so where "the same passage" ends can be read, not
guessed. --pairs OUT writes every pair at or above 0.3 as JSON lines.

Usage:
  scripts/bench-near-duplicates.py [--bin PATH] [--model-dir DIR] [--sets a,b,..]
                                   [--work DIR] [--reuse-store] [--k 50]
                                   [--pairs OUT] [--samples 4]
Standard library only (pip and npm fetch the older releases).
"""
import argparse
import collections
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import docshelf_proc  # noqa: E402
from eval_store import add_arguments, build_store, post, read_set, set_dir  # noqa: E402

# The older releases: set, client, package, version, folder in the archive,
# page extension. Pinned like scripts/fetch-eval.sh's.
OLDER = [
    ("flask-docs", "pip", "flask", "3.0.3", "flask-3.0.3/docs/", ".rst"),
    ("hatch-docs", "pip", "hatch", "1.14.0", "hatch-1.14.0/docs/", ".md"),
    ("npm-docs", "npm", "npm", "10.9.2", "package/docs/content/", ".md"),
]
SHINGLE = 5
BANDS = [1.0, 0.95, 0.9, 0.8, 0.7, 0.5, 0.3, 0.0]


def fetch_older(cache):
    """Each older release's pages, extracted under cache/NAME-VERSION/corpus."""
    out = {}
    for name, client, package, version, prefix, ext in OLDER:
        dest = os.path.join(cache, f"{package}-{version}")
        corpus = os.path.join(dest, "corpus")
        if not os.path.isdir(corpus):
            os.makedirs(dest, exist_ok=True)
            if client == "pip":
                subprocess.run([sys.executable, "-m", "pip", "download", f"{package}=={version}",
                                "--no-deps", "--no-binary", ":all:", "-d", dest, "-q"], check=True)
            else:
                subprocess.run(["npm", "pack", f"{package}@{version}", "--silent"], cwd=dest, check=True,
                               stdout=subprocess.DEVNULL)
            archive = next(p for p in glob.glob(os.path.join(dest, "*")) if p.endswith((".tar.gz", ".tgz")))
            tmp = corpus + ".partial"
            shutil.rmtree(tmp, ignore_errors=True)
            with tarfile.open(archive) as tar:
                for member in tar.getmembers():
                    if member.isfile() and member.name.startswith(prefix) and member.name.endswith(ext):
                        rel = member.name[len(prefix):]
                        if ".." in rel.split("/"):
                            continue
                        path = os.path.join(tmp, rel)
                        os.makedirs(os.path.dirname(path), exist_ok=True)
                        with tar.extractfile(member) as src, open(path, "wb") as dst:
                            shutil.copyfileobj(src, dst)
            os.rename(tmp, corpus)
        out[name] = (version, corpus)
    return out


def words(text):
    return text.lower().split()


def shingles(text):
    w = words(text)
    if len(w) < SHINGLE:
        return {" ".join(w)}
    return {" ".join(w[i:i + SHINGLE]) for i in range(len(w) - SHINGLE + 1)}


def band(value):
    for b in BANDS:
        if value >= b:
            return b
    return 0.0


def counter():
    try:
        import tiktoken
        enc = tiktoken.get_encoding("o200k_base")
        return "o200k_base", lambda t: len(enc.encode_ordinary(t))
    except Exception:  # noqa: BLE001 - any failure: fall back to words
        return "words", lambda t: len(t.split())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_arguments(p)
    p.add_argument("--k", type=int, default=50)
    p.add_argument("--pairs", help="write every pair with containment >= 0.3 here (JSON lines)")
    p.add_argument("--samples", type=int, default=4, help="pairs shown per band and kind")
    args = p.parse_args()

    names = [s for s in args.sets.split(",") if s]
    dirs = {n: set_dir(n, args) for n in names}
    binary, model, work, store, _ = build_store(args, names, dirs, "bench-near-duplicates-")
    # The older releases are ingested once per store (a reused store that
    # has them is left as it is).
    marker = os.path.join(store, "..", "older-ingested")
    if not (args.reuse_store and os.path.exists(marker)):
        for name, (version, corpus) in fetch_older(os.path.join(work, "older")).items():
            if name not in names:
                continue
            print(f"==> ingest {name} {version} as version 0", file=sys.stderr, flush=True)
            # Exit 2: some file failed (flask 3.0.3's contributing.rst is an
            # include and holds no text); the others are stored.
            rc = subprocess.run([binary, "ingest", corpus, "--library", name, "--version", "0", "--data",
                                 store, "--model-dir", model, "--device", "cpu"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
            if rc not in (0, 2):
                raise SystemExit(f"ingest of {name} {version} failed ({rc})")
        open(marker, "w").close()

    unit, count = counter()
    server, base = docshelf_proc.start(binary, store, model)
    answers = []
    try:
        docshelf_proc.wait_in_memory(base)
        for n in names:
            for qid, text, _ in read_set(dirs[n]):
                body, _ = post(base + "/api/search", {"query": text, "library": n, "k": args.k})
                answers.append((n, qid, json.loads(body)["results"]))
    finally:
        docshelf_proc.stop(server)

    bands = collections.defaultdict(lambda: collections.Counter())
    cost = collections.defaultdict(lambda: collections.Counter())
    samples = collections.defaultdict(list)
    pairs_out = open(args.pairs, "w") if args.pairs else None
    total_pairs = collections.Counter()
    for n, qid, results in answers:
        sh = [shingles(r["text"]) for r in results]
        for j in range(len(results)):
            for i in range(j):
                a, b = results[i], results[j]
                same_version = a["version"] == b["version"]
                if same_version and a["file_path"] == b["file_path"]:
                    continue  # one page's chunks (with `duplicates`): not asked for here
                kind = ("same page, two versions" if a["file_path"] == b["file_path"]
                        else "other page, same version" if same_version else "other page, other version")
                inter = len(sh[i] & sh[j])
                containment = inter / max(1, min(len(sh[i]), len(sh[j])))
                jaccard = inter / max(1, len(sh[i] | sh[j]))
                bnd = band(containment)
                total_pairs[kind] += 1
                bands[kind][bnd] += 1
                cost[kind][bnd] += count(b["text"])
                if bnd >= 0.3 and len(samples[(kind, bnd)]) < args.samples:
                    samples[(kind, bnd)].append((n, qid, a, b, containment, jaccard))
                if pairs_out and containment >= 0.3:
                    pairs_out.write(json.dumps({"set": n, "query": qid, "kind": kind,
                                                "containment": round(containment, 4),
                                                "jaccard": round(jaccard, 4),
                                                "a": [a["library"], a["version"], a["file_path"], a["chunk_index"]],
                                                "b": [b["library"], b["version"], b["file_path"], b["chunk_index"]],
                                                "a_text": a["text"], "b_text": b["text"]}) + "\n")
    if pairs_out:
        pairs_out.close()

    print(f"### Pairs of one answer's results by containment of 5-word shingles "
          f"({len(answers)} answers, k={args.k})\n")
    kinds = ["same page, two versions", "other page, same version", "other page, other version"]
    head = "| containment ≥ | " + " | ".join(kinds) + " |"
    print(head)
    print("| ---: |" + " ---: |" * len(kinds))
    for b in BANDS:
        cells = [f"{bands[k][b]:,} ({cost[k][b] / max(1, len(answers)):.1f})" for k in kinds]
        print(f"| {b:.2f} | " + " | ".join(cells) + " |")
    print("| all | " + " | ".join(f"{total_pairs[k]:,}" for k in kinds) + " |")
    print(f"\nCell: pairs (the later passage's {unit} per answer). Bands are exclusive: 0.90 means 0.90 to 0.95.")

    print("\n### Samples\n")
    for k in kinds:
        for b in BANDS:
            for n, qid, a, b_, c, jac in samples.get((k, b), []):
                def head(r):
                    return re.sub(r"\s+", " ", r["text"])[:160]
                print(f"- [{k}, {b:.2f}] {n} q{qid}: containment {c:.3f}, jaccard {jac:.3f}\n"
                      f"  - {a['version']} {a['file_path']}#{a['chunk_index']}: {head(a)}\n"
                      f"  - {b_['version']} {b_['file_path']}#{b_['chunk_index']}: {head(b_)}")


if __name__ == "__main__":
    started = time.monotonic()
    main()
    print(f"\n(whole run: {time.monotonic() - started:.0f} s)", file=sys.stderr)
