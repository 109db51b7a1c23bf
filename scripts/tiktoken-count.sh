#!/usr/bin/env bash
# Counts the tokens of standard input with OpenAI's own tokenizer library,
# tiktoken (PyPI), as an agent's client would: the check that docshelf's
# token budgets (Rust, tiktoken-rs) count what Python counts.
#
#   printf '%s' "$text" | scripts/tiktoken-count.sh [ENCODING]   # o200k_base
#
# tiktoken downloads its vocabularies from OpenAI at first use, which a
# machine without that host cannot; the vocabulary compiled into docshelf
# (tiktoken-rs's copy, the same file by its sha256, which tiktoken checks)
# is put where tiktoken's cache looks. The venv is
# $DOCSHELF_TIKTOKEN_VENV, default ~/.cache/docshelf/tiktoken-venv, made
# once for the pinned version.
set -euo pipefail

version=0.14.0
encoding=${1:-o200k_base}
venv=${DOCSHELF_TIKTOKEN_VENV:-$HOME/.cache/docshelf/tiktoken-venv}
stamp=$venv/.docshelf-stamp
if ! { [ -f "$stamp" ] && [ "$(cat "$stamp")" = "tiktoken==$version" ] && "$venv/bin/python" -c 'import tiktoken' 2>/dev/null; }; then
  echo "==> installing tiktoken $version (PyPI) into $venv" >&2
  # Made beside and moved into place whole, so that two runs at once (a
  # test and a benchmark) never see, or delete, each other's half-made one.
  mkdir -p "$(dirname "$venv")"
  fresh=$(mktemp -d "$venv.new.XXXXXX")
  python3 -m venv "$fresh"
  "$fresh/bin/pip" install --quiet --disable-pip-version-check --require-virtualenv "tiktoken==$version" >&2
  echo "tiktoken==$version" >"$fresh/.docshelf-stamp"
  rm -rf "$venv"
  mv "$fresh" "$venv" 2>/dev/null || rm -rf "$fresh"
fi

cache=$venv/cache
mkdir -p "$cache"
url=https://openaipublic.blob.core.windows.net/encodings/$encoding.tiktoken
key=$(printf '%s' "$url" | sha1sum | cut -d' ' -f1)
if [ ! -f "$cache/$key" ]; then
  # The tiktoken-rs the lockfile pins, as cargo unpacked it to build docshelf.
  registry=${CARGO_HOME:-$HOME/.cargo}/registry/src
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  pinned=$(grep -A1 '^name = "tiktoken-rs"$' "$here/../Cargo.lock" | sed -n 's/^version = "\(.*\)"$/\1/p')
  found=$(find "$registry" -path "*/tiktoken-rs-${pinned:-*}/assets/$encoding.tiktoken" 2>/dev/null | sort -V | tail -n1)
  [ -n "$found" ] || { echo "no $encoding.tiktoken under $registry (build docshelf first)" >&2; exit 1; }
  cp "$found" "$cache/$key"
fi
TIKTOKEN_CACHE_DIR=$cache exec "$venv/bin/python" -c '
import sys, tiktoken
enc = tiktoken.get_encoding(sys.argv[1])
print(len(enc.encode_ordinary(sys.stdin.buffer.read().decode("utf-8"))))
' "$encoding"
