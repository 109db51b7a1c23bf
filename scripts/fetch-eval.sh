#!/usr/bin/env bash
# Installs the documents of an evaluation set into DEST_DIR/corpus.
#
# The judgements (queries.jsonl, qrels.jsonl) live in the repository under
# eval/NAME; the documents they judge are documentation pages (Markdown,
# reStructuredText or MDX) that ship inside a published package, so they are
# fetched from its registry rather than committed. Each package is pinned by
# version and archive hash, and the extracted pages by a digest of the whole
# corpus, so a changed upload cannot slip in and a fetch that is already in
# place is skipped.
#
# Usage: scripts/fetch-eval.sh NAME [DEST_DIR]
#   NAME      npm-docs, hatch-docs, starlette-docs, flask-docs or ai-sdk-docs
#             (see eval/README.md)
#   DEST_DIR  default: ${DOCSHELF_EVAL_DIR:-~/.cache/docshelf/eval}/NAME
#
# DEST_DIR then has the shape of ../shared/data/eval/git-docs: corpus/ plus a
# copy of eval/NAME/{queries,qrels}.jsonl (refreshed on every run; the files
# under eval/ are the ones to edit). Evaluate with, from the repository root:
#   docshelf eval --set NAME=DEST_DIR
set -euo pipefail

usage() {
  sed -n 's/^# \{0,1\}//;/^Usage:/,/^$/p' "$0" | sed '/^$/d'
}

die() {
  echo "fetch-eval: $*" >&2
  exit 1
}

name=${1:-}
ext=.md # the pages' extension: only files under the prefix ending in it are kept
case "$name" in
  npm-docs)
    # The npm CLI's own manual: docs/content/{commands,configuring-npm,using-npm}.
    client=npm
    registry='the npm registry'
    package=npm
    version=12.2.0
    archive_sha256=6666b48816b39b86c3febac7b51a4ee4de6c5ca589c382ad8004b6b113f86677
    prefix=package/docs/content/
    pages=87
    corpus_sha256=f578a9aabaab4c144ea4371ac53238d60ea0595c2f2397bbb94837c7b738b0d9
    ;;
  hatch-docs)
    # Hatch's MkDocs site (Material theme): docs/**/*.md of the PyPI sdist.
    client=pip
    registry=PyPI
    package=hatch
    version=1.18.2
    archive_sha256=7f365f1a5b8f1a8162813daed9bf9fce83f15dc933fc99c6d04cbb942e64f4d0
    prefix=hatch-1.18.2/docs/
    pages=82
    corpus_sha256=df1051db165ea06b0dac0f7694ee9c9d5a545b2ba82f912a977fa46a45b7e1a5
    ;;
  starlette-docs)
    # Starlette's MkDocs site: docs/*.md of the PyPI sdist (API reference
    # pages with code, middleware, release notes).
    client=pip
    registry=PyPI
    package=starlette
    version=1.10.0
    archive_sha256=b8399098d4c1e3522734f7235dc79b1fc967f96cf139c81e0fa30479e0685f9b
    prefix=starlette-1.10.0/docs/
    pages=25
    corpus_sha256=addc301a48a3873bffde235d70cf6fd2950b14cfb57ccddb0cec7ddc633dbdaa
    ;;
  flask-docs)
    # Flask's Sphinx site: docs/**/*.rst of the PyPI sdist (guides, patterns,
    # deployment, tutorial, the autodoc API page).
    client=pip
    registry=PyPI
    package=flask
    version=3.1.3
    archive_sha256=0ef0e52b8a9cd932855379197dd8f94047b359ca0a78695144304cb45f87c9eb
    prefix=flask-3.1.3/docs/
    ext=.rst
    pages=76
    corpus_sha256=81b684230b59e8179017130042d9a591b945588ed848f12f1530a37cfc0babc6
    ;;
  ai-sdk-docs)
    # The AI SDK's own docs as shipped in the `ai` npm package: the "AI SDK
    # Core" section, docs/03-ai-sdk-core/*.mdx (front matter, JSX components).
    client=npm
    registry='the npm registry'
    package=ai
    version=7.0.173
    archive_sha256=9bb39977ac3471c0dfd2a541f3d03390eefd8a68140f07020d169d9d72667a2e
    prefix=package/docs/03-ai-sdk-core/
    ext=.mdx
    pages=35
    corpus_sha256=0a0d7302a4c2259d719aaae456e2d5a01c52d11624049a2be31329731dad6742
    ;;
  -h | --help)
    usage
    exit 0
    ;;
  "")
    usage >&2
    exit 2
    ;;
  *)
    echo "fetch-eval: unknown set '$name' (known: npm-docs, hatch-docs, starlette-docs, flask-docs, ai-sdk-docs)" >&2
    exit 2
    ;;
esac

dest=${2:-${DOCSHELF_EVAL_DIR:-$HOME/.cache/docshelf/eval}/$name}
corpus="$dest/corpus"
judgements="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/eval/$name"
if [ ! -f "$judgements/queries.jsonl" ] || [ ! -f "$judgements/qrels.jsonl" ]; then
  die "$judgements/queries.jsonl or qrels.jsonl is missing"
fi

# Copies the set's queries and judgements next to the corpus (unless DEST_DIR
# is eval/NAME itself).
install_judgements() {
  [ "$dest" -ef "$judgements" ] || cp "$judgements/queries.jsonl" "$judgements/qrels.jsonl" "$dest/"
}

# The corpus digest: sha256 of `sha256sum` over every file, in byte order of
# their paths relative to the corpus folder. Any added, removed, renamed or
# changed file changes it.
corpus_digest() {
  (
    cd "$1"
    find . -type f -print0 | sed -z 's|^\./||' | LC_ALL=C sort -z |
      xargs -0 -r sha256sum | sha256sum | cut -d' ' -f1
  )
}

if [ -d "$corpus" ] && [ "$(corpus_digest "$corpus")" = "$corpus_sha256" ]; then
  install_judgements
  echo "==> $name: corpus present in $corpus ($pages pages)"
  exit 0
fi

command -v python3 >/dev/null || die "python3 is needed to unpack the archive"
command -v sha256sum >/dev/null || die "sha256sum (coreutils) is needed to check the archive"

echo "==> $name: fetching $package $version from $registry into $dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
case "$client" in
  npm)
    command -v npm >/dev/null || die "npm is needed to fetch $package $version (apt-get install npm)"
    npm pack --ignore-scripts --loglevel=error --pack-destination "$work" "$package@$version" >/dev/null ||
      die "npm pack $package@$version failed (is the npm registry reachable?)"
    ;;
  pip)
    python3 -m pip --version >/dev/null 2>&1 ||
      die "pip is needed to fetch $package $version (apt-get install python3-pip)"
    # An sdist, never a wheel: only the sdist carries the docs folder. pip
    # prepares its metadata in an isolated build environment, which pulls the
    # package's build requirements from PyPI too.
    python3 -m pip download --quiet --no-deps --no-binary=:all: -d "$work" "$package==$version" ||
      die "pip download $package==$version failed (is PyPI reachable?)"
    ;;
esac

shopt -s nullglob
archives=("$work"/*.tgz "$work"/*.tar.gz)
shopt -u nullglob
[ "${#archives[@]}" -eq 1 ] || die "expected one archive from $client, found ${#archives[@]}"
archive=${archives[0]}
echo "$archive_sha256  $archive" | sha256sum --check --quiet ||
  die "$(basename "$archive") does not match the pinned sha256 $archive_sha256"

# Unpack only the pages (files ending in $ext) under the docs prefix, keeping
# their paths below it; hidden folders (MkDocs hooks, snippets) are skipped.
# Files are written by hand rather than extracted, so no link, device or path
# outside the folder can come out of the archive.
partial="$dest/corpus.partial"
rm -rf "$partial"
mkdir -p "$partial"
python3 - "$archive" "$prefix" "$partial" "$ext" <<'PY'
import os
import sys
import tarfile

archive, prefix, out, ext = sys.argv[1:5]
count = 0
with tarfile.open(archive, "r:gz") as tar:
    for member in tar:
        if not member.isfile() or not member.name.startswith(prefix):
            continue
        rel = member.name[len(prefix):]
        parts = rel.split("/")
        if not rel.endswith(ext) or any(p in ("", ".", "..") or p.startswith(".") for p in parts):
            continue
        path = os.path.join(out, *parts)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with tar.extractfile(member) as src, open(path, "wb") as dst:
            dst.write(src.read())
        count += 1
if count == 0:
    sys.exit(f"no {ext} pages under {prefix} in {archive}")
PY
found=$(find "$partial" -type f | wc -l)
[ "$found" -eq "$pages" ] || die "extracted $found pages, expected $pages"
got=$(corpus_digest "$partial")
[ "$got" = "$corpus_sha256" ] || die "extracted corpus digest $got does not match the pinned $corpus_sha256"

# Swap the new corpus in whole: an interrupted fetch never leaves a
# half-written corpus behind (the next run starts over).
rm -rf "$corpus"
mv "$partial" "$corpus"
echo "$name: $package $version from $registry, sha256 $archive_sha256, $pages pages under $prefix" >"$dest/SOURCE"
install_judgements
echo "==> $name: $pages pages installed in $corpus"
