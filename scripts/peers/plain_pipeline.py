#!/usr/bin/env python3
"""The plain Python retrieval pipeline that docshelf's quality is compared
with: built the way typical seed RAG systems build theirs, with nothing tuned.

- every document of the corpus folder, recursively: .md/.markdown/.mdx/.txt
  read as text, .html/.htm reduced to text by BeautifulSoup's get_text("\\n");
- LangChain's recursive character splitter (1500 characters, 200 overlap,
  separators "\\n\\n", "\\n", " ", ""), reimplemented below line for line;
- dense: all-MiniLM-L6-v2 through sentence-transformers, normalised
  embeddings, cosine top 50 chunks;
- keyword: rank_bm25.BM25Okapi (its defaults) over lower-cased \\w+ tokens,
  top 50 chunks;
- hybrid: reciprocal rank fusion (k = 60) of those two lists of 50.

A document ranks where its best chunk does; the ranked documents are scored
with nDCG@10 (gain 2^rel - 1, discount log2(rank + 1)) and Recall@10, averaged
over the queries that have judgements: the definitions of
index-core/src/eval.rs and of `docshelf eval`.

    python plain_pipeline.py --corpus DIR --queries Q.jsonl --qrels R.jsonl \\
        --model MODEL_DIR [--json]

Needs the venv of scripts/peers-venv.sh. Progress and timings go to stderr;
stdout gets the table, or with --json one JSON object.
"""
import argparse
import json
import math
import os
import re
import sys
import time
from pathlib import Path

# The model is a local folder: never reach for a hub.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from bs4 import BeautifulSoup  # noqa: E402
from rank_bm25 import BM25Okapi  # noqa: E402
from sentence_transformers import SentenceTransformer  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

hf_logging.disable_progress_bar()

TEXT_EXTS = {".md", ".markdown", ".mdx", ".txt"}
HTML_EXTS = {".html", ".htm"}
CHUNK_SIZE = 1500
CHUNK_OVERLAP = 200
SEPARATORS = ["\n\n", "\n", " ", ""]
FETCH = 50  # chunks each leg returns
RRF_K = 60
K = 10  # documents scored
TOKEN = re.compile(r"\w+")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- documents

def read_documents(corpus):
    """(path relative to the corpus with / separators, text), sorted by path."""
    root = Path(corpus)
    docs = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        ext = path.suffix.lower()
        if ext in TEXT_EXTS:
            text = path.read_text(encoding="utf-8", errors="replace")
        elif ext in HTML_EXTS:
            text = BeautifulSoup(path.read_bytes(), "html.parser").get_text("\n")
        else:
            continue
        docs.append((path.relative_to(root).as_posix(), text))
    return docs


# ------------------------------------------- LangChain's recursive splitter
# RecursiveCharacterTextSplitter(chunk_size=1500, chunk_overlap=200) with its
# defaults: keep_separator=True (the separator starts the next piece),
# strip_whitespace=True, length_function=len, separators taken literally.

def _split_text_with_regex(text, separator):
    if separator:
        parts = re.split(f"({separator})", text)
        splits = [parts[i] + parts[i + 1] for i in range(1, len(parts), 2)]
        if len(parts) % 2 == 0:
            splits += parts[-1:]
        splits = [parts[0]] + splits
    else:
        splits = list(text)
    return [s for s in splits if s != ""]


def _join_docs(docs, separator):
    text = separator.join(docs).strip()
    return text if text != "" else None


def _merge_splits(splits, separator):
    separator_len = len(separator)
    docs, current, total = [], [], 0
    for d in splits:
        n = len(d)
        if total + n + (separator_len if current else 0) > CHUNK_SIZE:
            if current:
                doc = _join_docs(current, separator)
                if doc is not None:
                    docs.append(doc)
                while total > CHUNK_OVERLAP or (
                    total + n + (separator_len if current else 0) > CHUNK_SIZE and total > 0
                ):
                    total -= len(current[0]) + (separator_len if len(current) > 1 else 0)
                    current = current[1:]
        current.append(d)
        total += n + (separator_len if len(current) > 1 else 0)
    doc = _join_docs(current, separator)
    if doc is not None:
        docs.append(doc)
    return docs


def _split_text(text, separators):
    final = []
    separator = separators[-1]
    new_separators = []
    for i, s in enumerate(separators):
        if s == "":
            separator = s
            break
        if re.search(re.escape(s), text):
            separator = s
            new_separators = separators[i + 1:]
            break
    splits = _split_text_with_regex(text, re.escape(separator))
    good = []
    merge_separator = ""  # keep_separator: the pieces carry their separators
    for s in splits:
        if len(s) < CHUNK_SIZE:
            good.append(s)
        else:
            if good:
                final.extend(_merge_splits(good, merge_separator))
                good = []
            if not new_separators:
                final.append(s)
            else:
                final.extend(_split_text(s, new_separators))
    if good:
        final.extend(_merge_splits(good, merge_separator))
    return final


def split_text(text):
    return _split_text(text, SEPARATORS)


# ---------------------------------------------------------------- retrieval

def top(scores, n):
    """Indices of the n highest scores, ties in chunk order."""
    order = np.argsort(-scores, kind="stable")
    return [int(i) for i in order[:n]]


def rrf(*lists):
    fused = {}
    for ranked in lists:
        for rank, idx in enumerate(ranked, start=1):
            fused[idx] = fused.get(idx, 0.0) + 1.0 / (RRF_K + rank)
    # Stable sort: equal scores keep the order they were first seen in.
    return sorted(fused, key=lambda idx: -fused[idx])


def tokens(text):
    return TOKEN.findall(text.lower())


# ----------------------------------------------------------------- measures
# As index-core/src/eval.rs: ranked ids deduplicated in first-seen order.

def dedup(ranked):
    seen, out = set(), []
    for r in ranked:
        if r not in seen:
            seen.add(r)
            out.append(r)
    return out


def ndcg_at(ranked, qrels, k):
    def gain(rel):
        return 2.0 ** rel - 1.0

    def discount(i):  # i is 0-based: log2(rank + 1) with rank = i + 1
        return math.log2(i + 2.0)

    dcg = sum(gain(qrels.get(d, 0)) / discount(i) for i, d in enumerate(dedup(ranked)[:k]))
    ideal = sorted((r for r in qrels.values() if r > 0), reverse=True)[:k]
    idcg = sum(gain(r) / discount(i) for i, r in enumerate(ideal))
    return 0.0 if idcg == 0.0 else dcg / idcg


def recall_at(ranked, qrels, k):
    relevant = sum(1 for r in qrels.values() if r > 0)
    if relevant == 0:
        return 0.0
    return sum(1 for d in dedup(ranked)[:k] if qrels.get(d, 0) > 0) / relevant


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# --------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--queries", required=True)
    ap.add_argument("--qrels", required=True)
    ap.add_argument("--model", required=True, help="a sentence-transformers model folder")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    args = ap.parse_args()

    torch.set_num_threads(2)
    torch.manual_seed(0)
    started = time.perf_counter()

    t = time.perf_counter()
    docs = read_documents(args.corpus)
    chunk_text, chunk_doc = [], []
    for path, text in docs:
        for c in split_text(text):
            chunk_text.append(c)
            chunk_doc.append(path)
    n_docs = len({d for d in chunk_doc})
    log(f"read {len(docs)} documents into {len(chunk_text)} chunks "
        f"in {time.perf_counter() - t:.1f} s")
    if not chunk_text:
        sys.exit(f"no text found under {args.corpus}")

    t = time.perf_counter()
    model = SentenceTransformer(args.model, device="cpu")
    emb = model.encode(chunk_text, batch_size=32, normalize_embeddings=True,
                       convert_to_numpy=True, show_progress_bar=False)
    log(f"embedded {len(chunk_text)} chunks in {time.perf_counter() - t:.1f} s")

    t = time.perf_counter()
    bm25 = BM25Okapi([tokens(c) for c in chunk_text])
    log(f"built BM25 in {time.perf_counter() - t:.1f} s")

    queries = read_jsonl(args.queries)
    qrels = {}
    for j in read_jsonl(args.qrels):
        qrels.setdefault(j["query_id"], {})[j["file"]] = int(j["relevance"])
    judged = [q for q in queries if q["id"] in qrels]
    if not judged:
        sys.exit(f"no query has judgements in {args.qrels}")

    t = time.perf_counter()
    q_emb = model.encode([q["text"] for q in judged], batch_size=32, normalize_embeddings=True,
                         convert_to_numpy=True, show_progress_bar=False)
    variants = {"dense": [], "keyword": [], "hybrid (rrf)": []}
    for q, qe in zip(judged, q_emb):
        dense = top(emb @ qe, FETCH)
        keyword = top(np.asarray(bm25.get_scores(tokens(q["text"]))), FETCH)
        for name, ranked in (("dense", dense), ("keyword", keyword),
                             ("hybrid (rrf)", rrf(dense, keyword))):
            docs_ranked = [chunk_doc[i] for i in ranked]
            rels = qrels[q["id"]]
            variants[name].append((ndcg_at(docs_ranked, rels, K), recall_at(docs_ranked, rels, K)))
    log(f"ran {len(judged)} queries in {time.perf_counter() - t:.1f} s; "
        f"{time.perf_counter() - started:.1f} s in all")

    scores = [
        {
            "variant": name,
            "ndcg": sum(n for n, _ in rows) / len(rows),
            "recall": sum(r for _, r in rows) / len(rows),
            "queries": len(rows),
        }
        for name, rows in variants.items()
    ]
    if args.json:
        print(json.dumps({"pipeline": "plain-python", "documents": n_docs,
                          "chunks": len(chunk_text), "scores": scores}))
    else:
        print(f"plain-python: {n_docs} documents, {len(chunk_text)} chunks, "
              f"{len(judged)} queries")
        print(f"{'mode':<14} {'nDCG@' + str(K):>8} {'Recall@' + str(K):>9}")
        for s in scores:
            print(f"{s['variant']:<14} {s['ndcg']:>8.4f} {s['recall']:>9.4f}")


if __name__ == "__main__":
    main()
