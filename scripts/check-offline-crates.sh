#!/usr/bin/env bash
# Proves that scripts/fetch-crates.sh fetches everything the offline dashboard
# build needs, independently of what this machine's cargo cache already holds:
# it fetches into an empty, temporary CARGO_HOME, then asks cargo, offline and
# against that home only, for the bundle's whole unit graph (the project's
# crates and build-std's), which needs every package's sources but compiles
# nothing. Costs seconds of download and no build.
#
# The bug this guards against hid for weeks: machines whose cache had once
# held the standard library's crates built fine, and only a bare machine
# failed, 40 minutes into `make test`.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

home=$(mktemp -d "${TMPDIR:-/tmp}/docshelf-cargo-home.XXXXXX")
trap 'rm -rf "$home"' EXIT

CARGO_HOME="$home" "$root/scripts/fetch-crates.sh"

# The same toolchain, flags and package selection as Trunk's build
# (scripts/build-wasm.sh, app/index.html), resolved only.
if ! CARGO_HOME="$home" RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 \
  CARGO_UNSTABLE_BUILD_STD=std,panic_abort \
  /usr/bin/cargo build --offline --locked --unit-graph -Z unstable-options \
    --manifest-path "$root/Cargo.toml" -p app --no-default-features --features hydrate \
    --profile wasm-release --target wasm32-unknown-unknown \
    --target-dir "$home/target" >/dev/null; then
  echo "check-offline-crates: the offline dashboard build needs a crate scripts/fetch-crates.sh does not fetch (above)" >&2
  exit 1
fi
echo "==> every crate of the offline dashboard build is fetched by scripts/fetch-crates.sh"
