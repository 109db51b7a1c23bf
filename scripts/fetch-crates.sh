#!/usr/bin/env bash
# Fetches, online, every crate that an offline step later builds from: the
# project's lockfile, and the standard library's own lockfile under Debian's
# rustc-web sources, which build-std compiles for the wasm32 bundle
# (dlmalloc, compiler_builtins, …). Trunk builds with `--offline`
# (Trunk.toml), so anything missing here fails that build, possibly 40
# minutes into a fresh `make test`. A no-op once cargo's cache holds them.
#
# scripts/check-offline-crates.sh runs this into an empty CARGO_HOME and
# resolves the offline build against it, so a crate this misses fails the
# tests even on a machine whose cache happens to hold it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The Debian toolchain builds the bundle; its cargo resolves both lockfiles.
export RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc
std_manifest="$(/usr/bin/rustc --print sysroot)/lib/rustlib/src/rust/library/Cargo.toml"
[ -f "$std_manifest" ] || { echo "fetch-crates: $std_manifest is missing; scripts/setup.sh installs rust-web-src" >&2; exit 1; }

/usr/bin/cargo fetch --locked --quiet --manifest-path "$root/Cargo.toml"
# The standard library's workspace uses unstable cargo features.
RUSTC_BOOTSTRAP=1 /usr/bin/cargo fetch --locked --quiet --manifest-path "$std_manifest"
