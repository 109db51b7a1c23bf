#!/usr/bin/env bash
# Real files for ingest-core's extraction tests, from package registries,
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
#   jinja2              the Jinja 3.1.6 sdist from PyPI: its Sphinx docs,
#                       reStructuredText (sections, code-block, roles,
#                       autodoc directives). Checked by sha256; kept in $DIR.
#   asciidoctor-revealjs  the @asciidoctor/reveal.js 5.2.0 npm tarball:
#                       its README is AsciiDoc (title, sections, document
#                       attributes and references to them). Checked by
#                       sha256; kept in $DIR.
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

# pinned FILE SHA256 FETCH...: prints $dir/FILE once its sha256 is SHA256,
# running FETCH (with $work as its folder, where it must leave FILE) when the
# cached copy is missing or not the pinned one.
pinned() {
  local file=$1 sha256=$2
  shift 2
  local archive=$dir/$file
  if [ -f "$archive" ] && [ "$(sha256_of "$archive")" = "$sha256" ]; then
    echo "$archive"
    return
  fi
  work=$(mktemp -d "$dir/.fetch.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  "$@" || die "fetching $file failed (is the registry reachable?)"
  local got
  got=$(sha256_of "$work/$file")
  [ "$got" = "$sha256" ] || die "$file has sha256 $got, not the pinned $sha256"
  mv "$work/$file" "$archive"
  echo "$archive"
}

fetch_url() {
  curl -fsS -o "$work/$2" "$1"
}

fetch_npm() {
  command -v npm >/dev/null || die "npm is needed to fetch $1 (apt-get install npm)"
  npm pack --ignore-scripts --loglevel=error --pack-destination "$work" "$1" >/dev/null
}

mkdir -p "$dir"
case "${1:-}" in
  jinja2)
    pinned jinja2-3.1.6.tar.gz 0137fb05990d35f1275a587e9aee6d56da821fc83491a0fb838183be43f66d6d \
      fetch_url https://files.pythonhosted.org/packages/df/bf/f7da0350254c0ed7c72f3e33cef02e048281fec7ecec5f032d4aac52226b/jinja2-3.1.6.tar.gz jinja2-3.1.6.tar.gz
    ;;
  asciidoctor-revealjs)
    pinned asciidoctor-reveal.js-5.2.0.tgz b683a496185400fab822d3abf16ce44189c417e7236e2ad25bbf8f7aeb5f9605 \
      fetch_npm @asciidoctor/reveal.js@5.2.0
    ;;
  create-docusaurus)
    pinned create-docusaurus-3.10.2.tgz 49c322e8e0a2763948d3390d8074ebb93542baf3d3f39db922dc1050459687c2 \
      fetch_npm create-docusaurus@3.10.2
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
