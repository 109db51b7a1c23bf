#!/usr/bin/env bash
# Fuzzes the REST API against its own OpenAPI document: Schemathesis (from
# PyPI) generates requests for every operation in /api/openapi.json, valid
# and invalid, and sends them to a real `docshelf serve` on a loopback port
# with a temporary store. It fails on any 5xx, any response whose body does
# not match its declared schema, and any status the document does not
# declare for that operation. Why: the document is the API's contract for
# clients and agents; a probe found query parameters declared `in: path`
# and statuses answered that were never declared.
#
# Before fuzzing, one small document is uploaded so that reads answer with
# data (whose shape is then checked too), not only with 404s.
#
# The server has an admin token and --auth-reads, and the API is fuzzed
# twice: with the admin token (every route's whole answer), then with a
# read token for the fuzzed library (writes and token routes refused with
# 403, reads filtered). Wrong tokens are not limited here
# (--max-token-failures): the fuzzer sends many on purpose, to sign-in.
#
# Where Schemathesis lives: $DOCSHELF_FUZZ_VENV, default
# ~/.cache/docshelf/fuzz. A venv whose stamp names the pinned version is
# reused; any other is rebuilt. The binary: $DOCSHELF_BIN (default
# $CARGO_TARGET_DIR/debug/docshelf, built by `make build-server`); the
# model: $DOCSHELF_MODEL_DIR (default models/all-MiniLM-L6-v2).
# $DOCSHELF_FUZZ_EXAMPLES sets the generated requests per operation and
# phase (default 300: with the coverage phase's cases, each operation gets
# a few hundred requests; the run's time is in docs/benchmarks.md).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
version=4.32.5
venv=${DOCSHELF_FUZZ_VENV:-$HOME/.cache/docshelf/fuzz}
stamp=$venv/.docshelf-stamp
examples=${DOCSHELF_FUZZ_EXAMPLES:-300}
# The read token's run, smaller: it repeats the admin run's requests with
# fewer answers to check (its writes stop at the 403).
read_examples=${DOCSHELF_FUZZ_READ_EXAMPLES:-100}
admin=fuzz-admin-token
bin=${DOCSHELF_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/docshelf/target}/debug/docshelf}
model=${DOCSHELF_MODEL_DIR:-$root/models/all-MiniLM-L6-v2}

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "schemathesis==$version" ] && "$venv/bin/st" --version >/dev/null 2>&1; then
  echo "==> Schemathesis $version present in $venv" >&2
else
  echo "==> installing Schemathesis $version (PyPI) into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --require-virtualenv "schemathesis==$version" >&2
  "$venv/bin/st" --version >&2
  echo "schemathesis==$version" >"$stamp"
fi

[ -x "$bin" ] || { echo "no docshelf binary at $bin (run make build-server)" >&2; exit 1; }

work=$(mktemp -d)
server=
cleanup() {
  if [ -n "$server" ]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
echo "==> docshelf serve on $base (store $work/data, log $work/server.log)" >&2
"$bin" serve --addr "127.0.0.1:$port" --data "$work/data" --model-dir "$model" \
  --site-dir "$work/site" --token "$admin" --auth-reads --max-token-failures 1000000 \
  >"$work/server.log" 2>&1 &
server=$!

# Up to 2 minutes for the model to load; the process must stay alive.
for _ in $(seq 240); do
  if curl -fsS "$base/healthz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$server" 2>/dev/null; then
    cat "$work/server.log" >&2
    echo "docshelf serve exited before answering /healthz" >&2
    exit 1
  fi
  sleep 0.5
done
curl -fsS "$base/healthz" >/dev/null || { tail -50 "$work/server.log" >&2; echo "/healthz never answered" >&2; exit 1; }

# One document, so that reads have something to answer with.
printf '# Fuzzing\n\nThe fuzzer reads this page back.\n\n## Section\n\nMore words to search.\n' >"$work/page.md"
job=$(curl -fsS -H "Authorization: Bearer $admin" -F library=fuzzlib -F version=1.0 -F "file=@$work/page.md;filename=guide/page.md" "$base/api/upload" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["job_id"])')
for _ in $(seq 240); do
  state=$(curl -fsS -H "Authorization: Bearer $admin" "$base/api/jobs/$job" | python3 -c 'import json, sys; print(json.load(sys.stdin)["state"])')
  [ "$state" = done ] && break
  sleep 0.5
done

started=$(date +%s)
status=0
fuzz() { # $1 token, $2 examples, $3 report dir
  echo "==> Schemathesis ($3): $2 examples per operation and phase" >&2
  (
    cd "$work"
    "$venv/bin/st" --config-file "$here/fuzz-api.toml" run "$base/api/openapi.json" \
      --url "$base" \
      --header "Authorization: Bearer $1" \
      --checks not_a_server_error,status_code_conformance,response_schema_conformance \
      --max-examples "$2" \
      --workers 2 \
      --request-timeout 30 \
      --seed 35 \
      --suppress-health-check too_slow,filter_too_much \
      --report ndjson --report-dir "$work/report-$3"
  )
}
fuzz "$admin" "$examples" admin || status=$?
if [ "$status" -eq 0 ]; then
  # Made after the admin's run, which revokes the tokens it can list.
  reader=$(curl -fsS -H "Authorization: Bearer $admin" -H 'content-type: application/json' \
    -d '{"name":"fuzz-reader","grants":[{"role":"read","libraries":"fuzzlib"}]}' "$base/api/tokens" |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')
  fuzz "$reader" "$read_examples" reader || status=$?
fi
echo "==> Schemathesis took $(( $(date +%s) - started )) s" >&2
# Requests sent per operation, from the run's own report.
python3 - "$work"/report-*/*.ndjson <<'PY' >&2 || true
import collections, json, sys
sent = collections.Counter()
for line in (l for path in sys.argv[1:] for l in open(path)):
    event = json.loads(line)
    for name, body in event.items():
        if name != "ScenarioFinished":
            continue
        label = body.get("label") or body.get("recorder", {}).get("label")
        cases = body.get("recorder", {}).get("cases", {})
        if label:
            sent[label] += len(cases)
for label, n in sorted(sent.items()):
    print(f"    {n:5d}  {label}")
print(f"    {sum(sent.values()):5d}  requests in all")
PY
if [ "$status" -ne 0 ]; then
  echo "==> the server's log (last 40 lines):" >&2
  tail -40 "$work/server.log" >&2
  exit "$status"
fi
