#!/usr/bin/env bash
# How much of a new version's docs is embedded again: consecutive releases
# of real projects' documentation (sdists from PyPI, their docs/ folders)
# uploaded in order into one store on a real `docshelf serve`; for each
# version, the chunks embedded by the model and those whose vector was
# reused (the same text, with its context, stored before), read from /metrics,
# and the upload's wall time. Last, the newest release again into a second
# library under other paths: a copy, which reuses by the embedded text's
# hash wherever it was stored.
#
#   scripts/bench-reuse.sh [package==version ...]   (default: three attrs releases)
#
# The binary: $DOCSHELF_BIN (default $CARGO_TARGET_DIR/debug/docshelf); the
# model: $DOCSHELF_MODEL_DIR (default models/all-MiniLM-L6-v2). Prints
# figures; asserts nothing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${DOCSHELF_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/docshelf/target}/debug/docshelf}
model=${DOCSHELF_MODEL_DIR:-$root/models/all-MiniLM-L6-v2}
releases=("$@")
[ ${#releases[@]} -gt 0 ] || releases=(attrs==23.2.0 attrs==24.2.0 attrs==24.3.0)

work=$(mktemp -d)
server=
cleanup() {
  [ -z "$server" ] || { kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; }
  rm -rf "$work"
}
trap cleanup EXIT

# Each release's sdist, from PyPI's simple index.
for release in "${releases[@]}"; do
  name=${release%%==*}; version=${release#*==}
  url=$(curl -fsS "https://pypi.org/simple/$name/" | grep -o "https://files.pythonhosted.org[^\"#]*/$name-$version.tar.gz" | head -1)
  [ -n "$url" ] || { echo "no sdist of $release on PyPI" >&2; exit 1; }
  mkdir -p "$work/$release"
  curl -fsS "$url" | tar xz -C "$work/$release"
done

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
"$bin" serve --addr "127.0.0.1:$port" --data "$work/data" --model-dir "$model" --device cpu 2>"$work/server.log" &
server=$!
until curl -fs "$base/healthz" >/dev/null; do
  kill -0 "$server" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
  sleep 0.2
done

vectors() {
  curl -fsS "$base/metrics" | awk '/^docshelf_upload_vectors_total/ {split($1, a, "\""); v[a[2]] = $2}
    END {printf "%d %d\n", v["model"], v["reused"]}'
}

printf '%-20s %6s %8s %8s %7s %8s\n' release files embedded reused share "wall s"
# upload LABEL LIBRARY VERSION DIR PREFIX: one release's docs as one job.
upload() {
  local label=$1 library=$2 version=$3 dir=$4 prefix=$5
  local form=(-F "library=$library" -F "version=$version") files=0
  while IFS= read -r f; do
    form+=(-F "file=@$f;filename=$prefix${f#*/docs/}")
    files=$((files + 1))
  done < <(find "$dir" -path '*/docs/*' \( -name '*.md' -o -name '*.mdx' -o -name '*.rst' -o -name '*.adoc' \
    -o -name '*.html' -o -name '*.txt' -o -name '*.ipynb' \) | sort)
  read -r m0 r0 < <(vectors)
  local start job wall m1 r1 embedded reused share
  start=$(date +%s.%N)
  job=$(curl -fsS "${form[@]}" "$base/api/upload" | python3 -c 'import json, sys; print(json.load(sys.stdin)["job_id"])')
  curl -fsS "$base/api/jobs/$job/events" >/dev/null
  wall=$(python3 -c "import time; print(f'{time.time() - $start:.1f}')")
  read -r m1 r1 < <(vectors)
  embedded=$((m1 - m0)); reused=$((r1 - r0))
  share=$(python3 -c "print(f'{100 * $reused / max(1, $embedded + $reused):.0f}%')")
  printf '%-20s %6d %8d %8d %7s %8s\n' "$label" "$files" "$embedded" "$reused" "$share" "$wall"
}
for release in "${releases[@]}"; do
  name=${release%%==*}; version=${release#*==}
  upload "$release" "$name" "$version" "$work/$release" ""
done
last=${releases[-1]}
upload "copy of ${last#*==}" "${last%%==*}-copy" "${last#*==}" "$work/$last" "copied/"
