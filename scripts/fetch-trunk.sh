#!/usr/bin/env bash
# Installs Trunk, which builds the dashboard's browser bundle (Trunk.toml),
# into the tools root, once per machine.
#
# Trunk is on crates.io only as source. 0.21.14 is the newest that builds with
# the stable toolchain here (0.22 needs a newer rustc); its lockfile is used
# (--locked). Without its default features it has no crates.io update check
# and no OpenSSL: rustls only. It is built in the dev profile (`--debug`):
# Trunk only orchestrates cargo, wasm-bindgen and wasm-opt, so its own speed
# does not matter, and an unoptimised build costs far less compile time
# (docs/benchmarks.md, "Build").
#
# Safe to run twice at once: scripts/build-beside.sh starts it at low priority
# beside the server build, and build-wasm.sh's caller runs it again; the
# second waits on a lock for the first and then finds Trunk installed.
set -euo pipefail

version=0.21.14
tools=${DOCSHELF_TOOLS:-$HOME/.local/share/docshelf/tools}
mkdir -p "$tools"

present() { [ "$("$tools/bin/trunk" --version 2>/dev/null | awk '{print $2}')" = "$version" ]; }

exec 9>"$tools/.trunk.lock"
flock 9
if present; then
  echo "==> trunk $version present"
  exit 0
fi
echo "==> installing trunk $version (one-time, several minutes)"
CARGO_TARGET_DIR="$HOME/.cache/docshelf/target-tools" \
  cargo install --quiet --locked --debug trunk --version "=$version" \
    --no-default-features --features rustls --root "$tools" --force
present || { echo "fetch-trunk: trunk $version did not install" >&2; exit 1; }
