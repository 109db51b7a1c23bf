#!/usr/bin/env bash
# Three docshelf replicas on one S3-compatible store, behind nginx, on this
# machine: http://127.0.0.1:8080. Ctrl-C stops everything.
#
#   examples/replicas/run.sh
#
# Without DOCSHELF_S3_ENDPOINT it starts the test S3 server on port 9000
# (scripts/s3-server/server.py: in memory, gone when it stops) with a bucket
# named docshelf. For a real store set DOCSHELF_S3_ENDPOINT (MinIO, R2, Ceph;
# leave it unset and set DOCSHELF_S3_BUCKET for AWS S3, with AWS_REGION),
# AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, and run each replica on a
# machine of its own with the same --data. Needs nginx (apt-get install
# nginx) and a built docshelf (make build).
#
# `ROUTE=library examples/replicas/run.sh` puts HAProxy (haproxy.cfg) in
# front instead, routing each library's searches to one replica, so that
# each holds its share of the libraries in memory (docs/operations.md).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${DOCSHELF_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/docshelf/target}/debug/docshelf}
model=${DOCSHELF_MODEL_DIR:-$root/models/all-MiniLM-L6-v2}
bucket=${DOCSHELF_S3_BUCKET:-docshelf}
route=${ROUTE:-client}
if [ "$route" = library ]; then
  command -v haproxy >/dev/null || { echo "run.sh: haproxy is needed (apt-get install haproxy)" >&2; exit 1; }
else
  command -v nginx >/dev/null || { echo "run.sh: nginx is needed (apt-get install nginx)" >&2; exit 1; }
fi
[ -x "$bin" ] || { echo "run.sh: no docshelf at $bin (make build)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/docshelf-replicas.XXXXXX")
mkdir -p "$work/tmp"
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT INT TERM

if [ -z "${DOCSHELF_S3_ENDPOINT:-}" ] && [ -z "${DOCSHELF_S3_BUCKET:-}" ]; then
  python=$("$root/scripts/fetch-s3-server.sh" | tail -n1)
  "$python" "$root/scripts/s3-server/server.py" --port 9000 --bucket "$bucket" >"$work/s3.log" 2>&1 &
  export DOCSHELF_S3_ENDPOINT=http://127.0.0.1:9000
  export AWS_ACCESS_KEY_ID=docshelf AWS_SECRET_ACCESS_KEY=docshelf-secret
  for _ in $(seq 50); do grep -q listening "$work/s3.log" && break; sleep 0.2; done
  echo "==> test S3 server on $DOCSHELF_S3_ENDPOINT (in memory)"
fi

for port in 8081 8082 8083; do
  "$bin" serve --addr "127.0.0.1:$port" --data "s3://$bucket/shared" --model-dir "$model" \
    >"$work/replica-$port.log" 2>&1 &
  echo "==> replica on 127.0.0.1:$port (log $work/replica-$port.log)"
done
if [ "$route" = library ]; then
  (cd "$work" && haproxy -db -f "$here/haproxy.cfg") &
  echo "==> HAProxy on http://127.0.0.1:8080, routing by library"
else
  nginx -p "$work" -c "$here/nginx.conf" -g 'daemon off;' &
  echo "==> nginx on http://127.0.0.1:8080"
fi
wait
