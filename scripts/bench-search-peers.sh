#!/usr/bin/env bash
# `make bench-peers [ROWS=N] [PRECISIONS=fp32,int8]`: docshelf's dense and
# hybrid search, a server per query-embedding precision, beside Chroma +
# sentence-transformers and LanceDB-Python, one run, on the bench corpus of N
# chunks (default 100,000; made and cached by the search bench on first use;
# ROWS=4983 is the git manual's chunks alone).
# The peers come from PyPI into the peers venv (scripts/peers-venv.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
rows=${1:-100000}
bin=${DOCSHELF_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/docshelf}
model=${DOCSHELF_MODEL_DIR:-models/all-MiniLM-L6-v2}

py=$(scripts/peers-venv.sh | tail -n1)
echo "==> the bench corpus ($rows chunks)"
store=$(DOCSHELF_BENCH_ROWS=$rows DOCSHELF_BENCH_PREPARE_ONLY=1 \
  cargo bench --locked --profile dev -p docshelf-server --bench search |
  tee /dev/stderr | sed -n 's/^corpus-dir: //p')
[ -n "$store" ] || { echo "bench-peers: the corpus was not made" >&2; exit 1; }
echo "==> side by side"
"$py" scripts/peers/search_side_by_side.py --store "$store" --model "$model" --bin "$bin" \
  --queries ../shared/data/eval/git-docs/queries.jsonl --precisions "${PRECISIONS:-fp32,bf16,int8}"
