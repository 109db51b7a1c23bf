#!/usr/bin/env bash
# `make release`: the server built with the `dist` profile (optimised,
# stripped; Cargo.toml says why its levels), and a folder and tarball an
# operator copies to a server:
#
#   release/docshelf-VERSION-ARCH-linux/
#     bin/docshelf                      the server, CLI and MCP server
#     share/docshelf/site/              the dashboard bundle
#     share/docshelf/models/all-MiniLM-L6-v2/   the embedding model
#     deploy/                           systemd unit, nginx configuration, Containerfile
#     README.md                         how to run it (docs/operations.md has the rest)
#
# The dashboard bundle and the model come from `make build` and
# scripts/fetch-model.sh (both run first if missing).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
# Its own target directory: the dist profile shares no build with the dev
# one, and a release build then never waits on the dev build's lock.
target=${DOCSHELF_RELEASE_TARGET_DIR:-$HOME/.cache/docshelf/target-dist}
site=${DOCSHELF_SITE_DIR:-$root/dist}
model=${DOCSHELF_MODEL_DIR:-$root/models/all-MiniLM-L6-v2}

say() { printf '==> %s\n' "$*"; }
die() { printf 'release: %s\n' "$*" >&2; exit 1; }

cd "$root"
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
[ -n "$version" ] || die "no workspace version in Cargo.toml"
arch=$(uname -m)
name="docshelf-$version-$arch-linux"

[ -f "$site/pkg/app.js" ] || { say "building the dashboard bundle"; scripts/build-wasm.sh; }
[ -f "$model/model.safetensors" ] || { say "fetching the model"; scripts/fetch-model.sh; }

say "building the server (dist profile, $target/dist)"
started=$(date +%s)
CARGO_TARGET_DIR="$target" cargo build --locked --profile dist -p docshelf-server
say "built in $(( $(date +%s) - started )) s"

out="$root/release/$name"
rm -rf "$out"
install -d "$out/bin" "$out/share/docshelf/site" "$out/share/docshelf/models/all-MiniLM-L6-v2" "$out/deploy"
install -m 0755 "$target/dist/docshelf" "$out/bin/docshelf"
cp -R "$site/." "$out/share/docshelf/site/"
for f in model.safetensors tokenizer.json config.json; do
  install -m 0644 "$model/$f" "$out/share/docshelf/models/all-MiniLM-L6-v2/$f"
done
cp deploy/docshelf.service deploy/nginx.conf deploy/Containerfile "$out/deploy/"
cat >"$out/README.md" <<EOF
# docshelf $version

    bin/docshelf serve --data /var/lib/docshelf \\
      --model-dir share/docshelf/models/all-MiniLM-L6-v2 \\
      --site-dir share/docshelf/site

serves the dashboard, REST and MCP on 127.0.0.1:8080. \`bin/docshelf --help\` lists every
command; deploy/ holds a systemd unit and an nginx configuration (docs/operations.md in the
source explains both, backups and replicas).
EOF
# The binary must run: it answers --version without a store or a model.
"$out/bin/docshelf" --version >/dev/null || die "the release binary does not run"
tar -C "$root/release" -czf "$root/release/$name.tar.gz" "$name"
say "release/$name.tar.gz ($(du -h "$root/release/$name.tar.gz" | cut -f1)); binary $(du -h "$out/bin/docshelf" | cut -f1)"
