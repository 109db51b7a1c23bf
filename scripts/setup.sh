#!/usr/bin/env bash
# Installs everything docshelf needs to build, run and test, skipping what is
# already there. Safe to run again: a second run only checks.
#
# Tools that are not Debian packages go into one fixed root
# ($DOCSHELF_TOOLS, default ~/.local/share/docshelf/tools) so that a fresh
# clone on the same machine finds them and nothing is installed twice.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
tools=${DOCSHELF_TOOLS:-$HOME/.local/share/docshelf/tools}
mkdir -p "$tools"

say() { printf '==> %s\n' "$*"; }

# --- Debian packages -------------------------------------------------------
# rustc-web, cargo-web, rust-web-src, lld-22: the wasm32 build (rustup cannot
#   fetch the wasm32 standard library here; these carry it as source).
# protobuf-compiler: LanceDB's build. chromium: the end-to-end tests.
# mesa-vulkan-drivers: a software Vulkan adapter so the GPU code path runs anywhere.
# cmake: building llama.cpp's llama-server for Ask's tests (scripts/fetch-llm.sh).
# tesseract-ocr, tesseract-ocr-eng, poppler-utils: OCR of scanned PDF pages
#   (server/src/ingest/ocr/); img2pdf: the OCR tests' scans.
# git: Git repositories as sources (server/src/source/git/), and the
#   Git server the tests run (git http-backend, scripts/git-http-server.py).
# python3, python3-venv: that Git server, and the venvs of the S3 test
#   server, Schemathesis and the peers.
# nginx: deploy/nginx.conf's test in front of a real server (scripts/test-nginx.sh),
#   which runs its own nginx; where systemd runs, Debian also starts its nginx
#   service on port 80 (`systemctl disable --now nginx` stops it).
# curl, openssl: that nginx test's client and its throwaway certificate
#   (not on every bare Debian).
# haproxy: examples/replicas/haproxy.cfg's test, routing each library's
#   searches to one replica (server/tests/integration/routing.rs).
apt_packages=(rustc-web cargo-web rust-web-src lld-22 protobuf-compiler chromium mesa-vulkan-drivers cmake
  tesseract-ocr tesseract-ocr-eng poppler-utils img2pdf git python3 python3-venv nginx haproxy curl openssl)
missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done
if ((${#missing[@]})); then
  say "installing Debian packages: ${missing[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
else
  say "Debian packages present"
fi

command -v cargo >/dev/null || { echo "setup: cargo (rustup's stable toolchain) is required" >&2; exit 1; }

# --- wasm-bindgen-cli, the exact version of the wasm-bindgen crate ---------
wb_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
if [ "$("$tools/bin/wasm-bindgen" --version 2>/dev/null | awk '{print $2}')" = "$wb_version" ]; then
  say "wasm-bindgen-cli $wb_version present"
else
  say "installing wasm-bindgen-cli $wb_version (one-time, several minutes)"
  # Not --locked: its lockfile pins a crate version the registry no longer serves.
  CARGO_TARGET_DIR="$HOME/.cache/docshelf/target-tools" CARGO_PROFILE_RELEASE_DEBUG=0 \
    cargo install --quiet wasm-bindgen-cli --version "=$wb_version" --root "$tools" --force
fi

# --- npm tools: wasm-opt that does not miscompile, Playwright's driver ------
binaryen_version=132.0.0
if [ "$(node -p "require('$tools/node_modules/binaryen/package.json').version" 2>/dev/null)" = "$binaryen_version" ]; then
  say "binaryen $binaryen_version present"
else
  say "installing binaryen $binaryen_version (wasm-opt) from npm"
  npm install --prefix "$tools" --no-audit --no-fund --silent "binaryen@$binaryen_version"
fi

if [ -d e2e/node_modules/playwright-core ] && cmp -s e2e/package-lock.json e2e/node_modules/.package-lock.json.docshelf; then
  say "e2e dependencies present"
else
  say "installing e2e dependencies (npm ci)"
  npm ci --prefix e2e --no-audit --no-fund --silent
  cp e2e/package-lock.json e2e/node_modules/.package-lock.json.docshelf
fi

# --- the embedding model ---------------------------------------------------
scripts/fetch-model.sh "${DOCSHELF_MODEL_DIR:-models/all-MiniLM-L6-v2}"

# --- disk for the build ----------------------------------------------------
# LanceDB, burn and wgpu are large, and every test or bench binary links all
# of them (about 1 GB each): the target directory of a machine that builds,
# tests, lints and benches docshelf grows to about 40 GB. Say so up front
# rather than let the linker fail with "No space left on device".
target=${CARGO_TARGET_DIR:-$root/target}
mkdir -p "$target"
free_gb=$(df -Pk "$target" | awk 'NR==2 { print int($4 / 1048576) }')
if [ "$free_gb" -lt 20 ]; then
  say "warning: only ${free_gb} GB free for $target; builds and tests may need up to 40 GB"
  say "         (remove an old target directory, or set CARGO_TARGET_DIR to a larger disk)"
fi

say "set-up complete"
