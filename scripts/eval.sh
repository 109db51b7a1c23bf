#!/usr/bin/env bash
# `make eval`: retrieval quality on every evaluation set, in one table, with
# the plain Python pipeline beside it on the same sets.
#
# Sets (eval/README.md): git-docs (../shared, tuning), npm-docs (tuning) and
# hatch-docs, starlette-docs, flask-docs (reStructuredText) and ai-sdk-docs
# (MDX) (held out: reported, never tuned on). Each is uploaded through the
# real pipeline as a library of its own into one store: a temporary one, or
# DOCSHELF_EVAL_STORE, which is kept and reused on the next run.
#
# The plain pipeline (scripts/peers/plain_pipeline.py: 1500/200 character
# chunks, sentence-transformers MiniLM, rank_bm25, RRF, a page ranked by its
# best chunk) runs in the peers' venv (scripts/peers-venv.sh, PyPI only,
# several GB on first use). PLAIN=0 skips it.
#
# Extra arguments go to `docshelf eval` (e.g. --lead-prior 0.3,2 to tune).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bin=${DOCSHELF_BIN:-${CARGO_TARGET_DIR:-$root/target}/debug/docshelf}
model=${DOCSHELF_MODEL_DIR:-models/all-MiniLM-L6-v2}
cache=${DOCSHELF_EVAL_DIR:-$HOME/.cache/docshelf/eval}
shared=$root/../shared/data/eval
[ -x "$bin" ] || { echo "eval: $bin is missing; run make build-server" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name and set folder (queries.jsonl, qrels.jsonl, corpus/) of each set.
names=(git-docs)
dirs=("$shared/git-docs")
for name in npm-docs hatch-docs starlette-docs flask-docs ai-sdk-docs; do
  scripts/fetch-eval.sh "$name" "$cache/$name"
  names+=("$name")
  dirs+=("$cache/$name")
done

args=()
for i in "${!names[@]}"; do
  args+=(--set "${names[$i]}=${dirs[$i]}")
done
store=()
[ -n "${DOCSHELF_EVAL_STORE:-}" ] && store=(--store "$DOCSHELF_EVAL_STORE")

echo "==> docshelf on ${names[*]}"
"$bin" eval "${args[@]}" "${store[@]}" --model-dir "$model" --json "$@" >"$work/docshelf.json"

# The plain pipeline reads only .md/.markdown/.mdx/.txt and HTML pages, so a
# set of reStructuredText pages (flask-docs) is handed to it as plain text: a
# view of its corpus with each X.rst linked as X.rst.txt, and its judgements
# rewritten to match. Prints the folder the pipeline should read.
plain_view() {
  local name=$1 dir=$2
  if [ -z "$(find "$dir/corpus" -name '*.rst' -print -quit)" ]; then
    echo "$dir"
    return
  fi
  local view="$work/plain-view-$name"
  mkdir -p "$view/corpus"
  (
    cd "$dir/corpus"
    find . -type f -print0 | while IFS= read -r -d '' f; do
      f=${f#./}
      mkdir -p "$view/corpus/$(dirname "$f")"
      case "$f" in
        *.rst) ln -s "$PWD/$f" "$view/corpus/$f.txt" ;;
        *) ln -s "$PWD/$f" "$view/corpus/$f" ;;
      esac
    done
  )
  cp "$dir/queries.jsonl" "$view/"
  sed 's/\.rst"/.rst.txt"/' "$dir/qrels.jsonl" >"$view/qrels.jsonl"
  echo "$view"
}

peers=()
if [ "${PLAIN:-1}" != 0 ]; then
  python=$(scripts/peers-venv.sh | tail -n 1)
  for i in "${!names[@]}"; do
    echo "==> plain Python pipeline on ${names[$i]}"
    plain=$(plain_view "${names[$i]}" "${dirs[$i]}")
    HF_HUB_OFFLINE=1 "$python" scripts/peers/plain_pipeline.py --corpus "$plain/corpus" \
      --queries "$plain/queries.jsonl" --qrels "$plain/qrels.jsonl" \
      --model "$model" --json >"$work/plain-${names[$i]}.json"
    peers+=("${names[$i]}=$work/plain-${names[$i]}.json")
  done
fi

python3 scripts/eval_table.py "$work/docshelf.json" "${peers[@]}"
