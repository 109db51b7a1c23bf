#!/usr/bin/env bash
# Creates (or reuses) the Python environment of the plain-Python peers that
# docshelf is compared with (scripts/peers/: sentence-transformers, rank_bm25,
# chromadb, lancedb; scripts/bench-onnx.py: onnx, onnxruntime), from PyPI, and
# prints its python on the last line:
#
#   py=$(scripts/peers-venv.sh | tail -n1)
#   "$py" scripts/peers/plain_pipeline.py --corpus ... --model ...
#
# Where: $DOCSHELF_PEERS_VENV, default ~/.cache/docshelf/peers-venv. Built with
# $DOCSHELF_PEERS_PYTHON (default python3; the lock was resolved on 3.11). A
# venv whose stamp matches the sha256 of scripts/peers/requirements.txt is
# reused as is; any other (an older lock, an interrupted install) is rebuilt
# from scratch. The install is `pip install --no-deps` of a complete lock,
# which keeps torch's unneeded CUDA extras out: requirements.txt says why.
# Progress goes to stderr; a fresh install downloads a few GB and takes
# minutes even on a fast link, and the venv needs about twice the download on
# disk (docs/benchmarks.md, "Build").
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
req=$here/peers/requirements.txt
venv=${DOCSHELF_PEERS_VENV:-$HOME/.cache/docshelf/peers-venv}
base_python=${DOCSHELF_PEERS_PYTHON:-python3}
want=$(sha256sum "$req" | cut -d' ' -f1)
stamp=$venv/.docshelf-peers-stamp

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$venv/bin/python" -c '' 2>/dev/null; then
  echo "==> peers venv up to date in $venv" >&2
  echo "$venv/bin/python"
  exit 0
fi

echo "==> creating the peers venv in $venv" >&2
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"$base_python" -m venv "$venv"
py=$venv/bin/python
"$py" -m pip install --quiet --disable-pip-version-check --no-deps --only-binary=:all: -r "$req" >&2

# The lock must be complete: the only dependencies allowed to be missing are
# the CUDA extras requirements.txt leaves out on purpose.
problems=$("$py" -m pip check 2>&1 |
  grep -vE '^torch [^ ]+ requires (triton|cuda-toolkit|cuda-bindings|nvidia-[a-z0-9-]+), which is not installed\.$' |
  grep -v '^No broken requirements found\.$' || true)
if [ -n "$problems" ]; then
  echo "peers-venv: the lock in $req is incomplete or inconsistent:" >&2
  echo "$problems" >&2
  exit 1
fi
"$py" - >&2 <<'PY'
import torch, sentence_transformers, rank_bm25, bs4, chromadb, lancedb, onnx, onnxruntime  # noqa: F401
import onnxruntime.quantization  # noqa: F401  (bench-onnx.py's int8 peer)
x = torch.nn.functional.normalize(torch.randn(4, 8), dim=1)
assert torch.allclose(x.norm(dim=1), torch.ones(4))
print(f"==> torch {torch.__version__} on CPU, sentence-transformers "
      f"{sentence_transformers.__version__}, chromadb {chromadb.__version__}, "
      f"onnx {onnx.__version__}, onnxruntime {onnxruntime.__version__}")
PY

echo "$want" > "$stamp"
echo "$py"
