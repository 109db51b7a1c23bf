#!/usr/bin/env bash
# Real files for index-core's extraction tests, from package registries,
# pinned; never committed. Prints the path of what was asked for (last line
# of stdout); fails loudly (non-zero, a message on stderr) when it cannot be
# had, so a test that needs it fails instead of passing without it.
#
# Usage: scripts/fetch-fixture.sh NAME [ARG]
#   create-docusaurus   the create-docusaurus 3.10.2 npm tarball: the
#                       Docusaurus site template, whose docs and blog pages
#                       are MDX (front matter, :::admonitions, heading ids,
#                       an `export`ed component used inline, code blocks).
#                       Checked by sha256; kept in $DIR.
#   word OUT.docx       writes a Word document with python-docx (pinned
#                       wheel, checked by sha256, in a venv under $DIR) from
#                       scripts/word-fixture.py: title, headings, lists,
#                       a table, code. Made fresh each time, at OUT.docx.
#
# DIR: $DOCSHELF_FIXTURES_DIR, default ~/.cache/docshelf/fixtures (the cache
# the server's integration tests use for their pinned files).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${DOCSHELF_FIXTURES_DIR:-$HOME/.cache/docshelf/fixtures}

die() {
  echo "fetch-fixture: $*" >&2
  exit 1
}

sha256_of() {
  sha256sum "$1" | cut -d' ' -f1
}

mkdir -p "$dir"
case "${1:-}" in
  create-docusaurus)
    version=3.10.2
    sha256=49c322e8e0a2763948d3390d8074ebb93542baf3d3f39db922dc1050459687c2
    archive=$dir/create-docusaurus-$version.tgz
    if [ -f "$archive" ] && [ "$(sha256_of "$archive")" = "$sha256" ]; then
      echo "$archive"
      exit 0
    fi
    command -v npm >/dev/null || die "npm is needed to fetch create-docusaurus $version (apt-get install npm)"
    work=$(mktemp -d "$dir/.create-docusaurus.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    npm pack --ignore-scripts --loglevel=error --pack-destination "$work" "create-docusaurus@$version" >/dev/null ||
      die "npm pack create-docusaurus@$version failed (is the npm registry reachable?)"
    got=$(sha256_of "$work/create-docusaurus-$version.tgz")
    [ "$got" = "$sha256" ] || die "create-docusaurus-$version.tgz has sha256 $got, not the pinned $sha256"
    mv "$work/create-docusaurus-$version.tgz" "$archive"
    echo "$archive"
    ;;
  word)
    out=${2:-}
    [ -n "$out" ] || die "usage: fetch-fixture.sh word OUT.docx"
    version=1.2.0
    wheel=python_docx-$version-py3-none-any.whl
    wheel_sha256=3fd478f3250fbbbfd3b94fe1e985955737c145627498896a8a6bf81f4baf66c7
    venv=$dir/python-docx-$version
    if ! [ -f "$venv/.docshelf-stamp" ] || ! "$venv/bin/python" -c 'import docx' 2>/dev/null; then
      command -v python3 >/dev/null || die "python3 is needed to make the Word fixture"
      work=$(mktemp -d "$dir/.python-docx.XXXXXX")
      trap 'rm -rf "$work"' EXIT
      python3 -m pip download --quiet --disable-pip-version-check --no-deps -d "$work/wheel" "python-docx==$version" ||
        die "pip download python-docx==$version failed (is PyPI reachable?)"
      got=$(sha256_of "$work/wheel/$wheel")
      [ "$got" = "$wheel_sha256" ] || die "$wheel has sha256 $got, not the pinned $wheel_sha256"
      [ -e "$venv" ] && die "$venv exists but cannot import docx; move it aside and run again"
      python3 -m venv "$work/venv" || die "python3 -m venv failed (apt-get install python3-venv)"
      # Its two dependencies by version, python-docx from the checked wheel.
      "$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
        "lxml==6.0.2" "typing_extensions==4.15.0" "$work/wheel/$wheel" ||
        die "installing python-docx $version failed (is PyPI reachable?)"
      # Only the venv's python is run, which works from wherever it lies.
      mv "$work/venv" "$venv"
      echo "python-docx==$version" >"$venv/.docshelf-stamp"
    fi
    "$venv/bin/python" "$here/word-fixture.py" "$out" || die "scripts/word-fixture.py failed"
    echo "$out"
    ;;
  *)
    sed -n 's/^# \{0,1\}//;/^Usage:/,/^$/p' "$0" >&2
    exit 2
    ;;
esac
