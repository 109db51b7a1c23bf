#!/usr/bin/env bash
# Builds the dashboard's browser bundle (the `app` crate with `hydrate`) into
# the site directory the server serves (default: dist/).
#
# Why not rustup + Trunk: rustup cannot fetch the wasm32 standard library on
# the machines docshelf is built on, so the bundle is compiled with Debian's
# rustc-web toolchain and build-std (std sources from rust-web-src). The steps
# after cargo are the two Trunk would run: wasm-bindgen (pinned to the crate's
# exact version) and wasm-opt (npm binaryen; Debian's miscompiles this output).
# See ../shared/BUILD-NOTES.md and README.md ("Browser bundle").
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

site_dir=${DOCSHELF_SITE_DIR:-dist}
target_dir=${DOCSHELF_WASM_TARGET_DIR:-$HOME/.cache/docshelf/target-wasm}
tools=${DOCSHELF_TOOLS:-$HOME/.local/share/docshelf/tools}
profile=${DOCSHELF_WASM_PROFILE:-wasm-release}
name=docshelf

wasm_bindgen="$tools/bin/wasm-bindgen"
wasm_opt="$tools/node_modules/.bin/wasm-opt"
for tool in "$wasm_bindgen" "$wasm_opt" /usr/bin/rustc /usr/bin/cargo; do
  [ -x "$tool" ] || { echo "build-wasm: $tool is missing; run scripts/setup.sh" >&2; exit 1; }
done

echo "==> compiling the dashboard for wasm32 (Debian rustc-web, build-std, profile $profile)"
RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc RUSTC_BOOTSTRAP=1 \
  CARGO_UNSTABLE_BUILD_STD=std,panic_abort \
  RUSTFLAGS="${DOCSHELF_WASM_RUSTFLAGS:-}" \
  /usr/bin/cargo build --quiet -p app --lib --features hydrate \
    --target wasm32-unknown-unknown --profile "$profile" --target-dir "$target_dir"

wasm="$target_dir/wasm32-unknown-unknown/$profile/app.wasm"
pkg="$site_dir/pkg"
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT

echo "==> wasm-bindgen"
"$wasm_bindgen" --target web --no-typescript --out-dir "$staging" --out-name "$name" "$wasm"

echo "==> wasm-opt"
"$wasm_opt" -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
  --enable-sign-ext --enable-mutable-globals --enable-reference-types \
  "$staging/${name}_bg.wasm" -o "$staging/${name}_bg.opt.wasm"
mv "$staging/${name}_bg.opt.wasm" "$staging/${name}_bg.wasm"

cp style/main.css "$staging/$name.css"

# Swap the new bundle in whole, so a running server never serves half of one.
mkdir -p "$site_dir"
rm -rf "$pkg.new" && mkdir -p "$pkg.new"
cp "$staging"/* "$pkg.new/"
rm -rf "$pkg.old"; [ -d "$pkg" ] && mv "$pkg" "$pkg.old"
mv "$pkg.new" "$pkg" && rm -rf "$pkg.old"
cp -r public/. "$site_dir/"

echo "==> dashboard bundle in $pkg: $(du -h "$pkg/${name}_bg.wasm" | cut -f1) wasm"
