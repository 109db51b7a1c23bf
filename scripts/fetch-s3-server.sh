#!/usr/bin/env bash
# Installs the S3-compatible server the object-store tests run against
# (scripts/s3-server/server.py: moto's S3 service from PyPI, one request at
# a time; its docstring says why) into a venv, and prints the venv's python
# on the last line.
#
# Where: $DOCSHELF_S3_SERVER_VENV, default ~/.cache/docshelf/s3-server. A venv
# whose stamp matches the sha256 of scripts/s3-server/requirements.txt is
# reused; any other is rebuilt. A fresh install downloads ~25 MB of wheels
# (27 packages, no compiling) and takes seconds (docs/benchmarks.md,
# "Object-store build cost").
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
req=$here/s3-server/requirements.txt
venv=${DOCSHELF_S3_SERVER_VENV:-$HOME/.cache/docshelf/s3-server}
want=$(sha256sum "$req" | cut -d' ' -f1)
stamp=$venv/.docshelf-stamp

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && "$venv/bin/python" -c 'import moto, flask' 2>/dev/null; then
  echo "==> S3 test server present in $venv" >&2
  echo "$venv/bin/python"
  exit 0
fi

echo "==> installing the S3 test server (moto from PyPI) into $venv" >&2
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --require-virtualenv -r "$req" >&2
"$venv/bin/python" -c 'import moto, flask, flask_cors' >&2
echo "$want" >"$stamp"
echo "$venv/bin/python"
