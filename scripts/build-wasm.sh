#!/usr/bin/env bash
# Builds the dashboard's browser bundle (the `app` crate with `hydrate`) with
# Trunk (Trunk.toml, app/index.html) into the site directory the server serves
# (default: dist/), and swaps it in whole.
#
# Trunk runs with Debian's rustc-web toolchain first on PATH: rustup cannot
# fetch the wasm32 standard library on the machines docshelf is built on, so
# it is compiled from Debian's rust-web-src with build-std. The wasm-bindgen
# and wasm-opt Trunk finds are the pinned ones scripts/setup.sh installs
# (Debian's wasm-opt miscompiles this output). See ../shared/BUILD-NOTES.md.
#
# DOCSHELF_TRUNK_COMMAND=watch rebuilds on every change instead (`make dev`).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

site_dir=${DOCSHELF_SITE_DIR:-dist}
target_dir=${DOCSHELF_WASM_TARGET_DIR:-$HOME/.cache/docshelf/target-wasm}
tools=${DOCSHELF_TOOLS:-$HOME/.local/share/docshelf/tools}
command=${DOCSHELF_TRUNK_COMMAND:-build}
name=app

# Trunk itself: installed once per machine (started beside the server build
# by scripts/build-beside.sh; this waits for that, or installs it).
"$root/scripts/fetch-trunk.sh"

for tool in "$tools/bin/trunk" "$tools/bin/wasm-bindgen" "$tools/node_modules/.bin/wasm-opt" /usr/bin/rustc /usr/bin/cargo; do
  [ -x "$tool" ] || { echo "build-wasm: $tool is missing; run scripts/setup.sh" >&2; exit 1; }
done

# Trunk calls `cargo` (and `cargo metadata`) from PATH: Debian's, with the
# build-std settings; the pinned tools come before any other copy.
export PATH="$tools/bin:$tools/node_modules/.bin:/usr/bin:$PATH"
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1
export CARGO_UNSTABLE_BUILD_STD=std,panic_abort
export CARGO_TARGET_DIR="$target_dir"
export RUSTFLAGS="${DOCSHELF_WASM_RUSTFLAGS:-}"
# Trunk builds offline (Trunk.toml): have every crate it compiles, the
# standard library's included, in cargo's cache first (a no-op once it is).
"$root/scripts/fetch-crates.sh"

pkg="$site_dir/pkg"
if [ "$command" = watch ]; then
  # Straight into the served directory: a reload shows the new bundle.
  echo "==> trunk watch: rebuilding the dashboard into $pkg on every change"
  exec trunk watch --dist "$pkg" "$@"
fi

# Bundle builds take turns: two at once (two `make run`s, or one beside
# `make test`) share the wasm target directory, where Trunk keeps its
# wasm-bindgen output, and the site directory they swap into. The second
# waits, then finds cargo's work done. Each build also stages in a directory
# of its own, so a stale one left by a killed build is never reused.
mkdir -p "$target_dir" "$site_dir"
exec 8>"$target_dir/.docshelf-bundle.lock"
if ! flock --nonblock 8; then
  echo "==> waiting for another dashboard build (lock: $target_dir/.docshelf-bundle.lock)"
  flock 8
fi
staging=$(mktemp -d "$site_dir/.trunk.XXXXXX")
trap 'rm -rf "$staging"' EXIT
echo "==> trunk build: the dashboard for wasm32 (Debian rustc-web, build-std)"
trunk --quiet build --dist "$staging"

# Swap the new bundle in whole, so a running server never serves half of one.
# Trunk's index.html is only its entry: the server renders every page.
rm -f "$staging/index.html"
rm -rf "$pkg.new" && mv "$staging" "$pkg.new" && chmod 755 "$pkg.new"
rm -rf "$pkg.old"; [ -d "$pkg" ] && mv "$pkg" "$pkg.old"
mv "$pkg.new" "$pkg" && rm -rf "$pkg.old"
cp -r public/. "$site_dir/"

echo "==> dashboard bundle in $pkg: $(du -h "$pkg/${name}_bg.wasm" | cut -f1) wasm"
