#!/usr/bin/env bash
# Tests deploy/nginx.conf for real: nginx, run as the current user from a
# temporary prefix, serves that site file over HTTPS (a throwaway
# self-signed certificate) in front of a real `docshelf serve` on loopback,
# and curl checks what an operator relies on:
#
#   - /healthz over HTTPS and HTTP/2, the certificate verified; plain HTTP
#     redirected to HTTPS;
#   - an upload of Markdown files larger than nginx's default 1 MiB body;
#   - a job's server-sent events arriving while the job still runs, over
#     HTTP/2 and HTTP/1.1 (with nginx's default proxy_buffering, those
#     over HTTP/1.1 arrive together when the job ends);
#   - MCP over streamable HTTP at /mcp, answered as an event stream;
#   - a search that finds the uploaded page;
#   - a browser's same-origin write (Origin with the port) let through, and
#     the session cookie marked Secure (X-Forwarded-Proto reaches docshelf).
#
# Only the site file's listen addresses, server name, upstream address and
# certificate paths are replaced (each replacement must match, so a change
# to the file's shape fails here rather than testing something else). The
# http {} block around it has what the site needs to run from a temporary
# directory, and Debian's `gzip on`.
#
# Usage: scripts/test-nginx.sh (make test-deploy). Needs nginx, openssl,
# curl and python3 (make setup installs them). Settings: DOCSHELF_BIN (the
# binary, default $CARGO_TARGET_DIR/debug/docshelf), DOCSHELF_MODEL_DIR
# (default models/all-MiniLM-L6-v2), DOCSHELF_NGINX_CONF (the site file to
# test, default deploy/nginx.conf).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
bin=${DOCSHELF_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/docshelf/target}/debug/docshelf}
model=${DOCSHELF_MODEL_DIR:-$root/models/all-MiniLM-L6-v2}
site_conf=${DOCSHELF_NGINX_CONF:-$root/deploy/nginx.conf}
name=docs.test
token=test-nginx-admin-token

for tool in nginx openssl curl python3; do
  command -v "$tool" >/dev/null || { echo "test-nginx: $tool is needed (make setup installs it)" >&2; exit 1; }
done
[ -x "$bin" ] || { echo "test-nginx: no docshelf binary at $bin (make build-server, or set DOCSHELF_BIN)" >&2; exit 1; }
[ -f "$model/model.safetensors" ] || { echo "test-nginx: no model in $model (scripts/fetch-model.sh)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/docshelf-nginx.XXXXXX")
server= proxy= stream=
cleanup() {
  local status=$?
  for pid in $stream $proxy $server; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  if [ "$status" -ne 0 ]; then
    echo "==> docshelf's log (last 30 lines):" >&2
    tail -30 "$work/docshelf.log" >&2 2>/dev/null || true
    echo "==> nginx's log:" >&2
    tail -30 "$work/nginx.log" >&2 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT INT TERM

say() { printf '==> %s\n' "$*"; }
fail() { printf 'test-nginx: FAILED: %s\n' "$*" >&2; exit 1; }
pass() { printf '    ok: %s\n' "$*"; }
# Polls a command until it succeeds, the deadline (seconds) passes, or the
# process it depends on ($3, a pid) dies.
wait_for() { # $1 seconds, $2 what, $3 pid, command…
  local limit=$1 deadline=$((SECONDS + $1)) what=$2 pid=$3
  shift 3
  until "$@" 2>/dev/null; do
    if ! kill -0 "$pid" 2>/dev/null; then
      "$@" && return 0 # it did, just before it exited
      fail "$what: the process it waits on exited"
    fi
    [ "$SECONDS" -lt "$deadline" ] || fail "$what: not within ${limit} s"
    sleep 0.1
  done
}

# Three free loopback ports, held open together so that they differ.
read -r backend_port tls_port plain_port < <(python3 -c '
import socket
held = [socket.socket() for _ in range(3)]
for s in held: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in held))')
base=https://$name:$tls_port
# curl reaches docs.test on loopback, verifying the certificate for that name.
tls=(--silent --show-error --cacert "$work/cert.pem" --resolve "$name:$tls_port:127.0.0.1")

say "a self-signed certificate for $name"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=$name" -addext "subjectAltName=DNS:$name" \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>"$work/openssl.log" || { cat "$work/openssl.log" >&2; exit 1; }

say "nginx configuration from $site_conf"
python3 - "$site_conf" "$work/site.conf" <<PY
import sys
text = open(sys.argv[1]).read()
replacements = [
    ("server 127.0.0.1:8080;", "server 127.0.0.1:$backend_port;"),
    ("listen 443 ssl http2;", "listen 127.0.0.1:$tls_port ssl http2;"),
    ("listen [::]:443 ssl http2;", ""),
    ("listen 80;", "listen 127.0.0.1:$plain_port;"),
    ("listen [::]:80;", ""),
    ("server_name docs.example.com;", "server_name $name;"),
    ("/etc/ssl/docshelf/fullchain.pem", "$work/cert.pem"),
    ("/etc/ssl/docshelf/privkey.pem", "$work/key.pem"),
]
for old, new in replacements:
    if old not in text:
        sys.exit(f"test-nginx: {sys.argv[1]} no longer contains {old!r}; update this test with it")
    text = text.replace(old, new)
open(sys.argv[2], "w").write(text)
PY
mkdir -p "$work/tmp"
{
  # As root, nginx's workers would switch to nobody, who cannot read this
  # directory.
  [ "$(id -u)" -ne 0 ] || echo "user root;"
  cat <<EOF
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx.log info;
events { worker_connections 256; }
http {
    access_log $work/access.log;
    client_body_temp_path $work/tmp/body;
    proxy_temp_path $work/tmp/proxy;
    fastcgi_temp_path $work/tmp/fastcgi;
    uwsgi_temp_path $work/tmp/uwsgi;
    scgi_temp_path $work/tmp/scgi;
    # As Debian's /etc/nginx/nginx.conf has it.
    gzip on;
    include $work/site.conf;
}
EOF
} >"$work/nginx.conf"
# -e: nginx opens its compiled-in error log before reading the
# configuration, which an unprivileged user cannot write.
nginx -e stderr -p "$work" -c "$work/nginx.conf" -t 2>&1 | sed 's/^/    /'

say "docshelf serve on 127.0.0.1:$backend_port (store $work/data)"
"$bin" serve --addr "127.0.0.1:$backend_port" --data "$work/data" --model-dir "$model" \
  --site-dir "$root/dist" --token "$token" --allowed-hosts "$name" >"$work/docshelf.log" 2>&1 &
server=$!
wait_for 240 "docshelf's /healthz" "$server" curl -fsS -o /dev/null "http://127.0.0.1:$backend_port/healthz"

say "nginx on https://$name:$tls_port and http://$name:$plain_port"
nginx -e stderr -p "$work" -c "$work/nginx.conf" -g 'daemon off;' 2>>"$work/nginx.log" &
proxy=$!
wait_for 30 "nginx's HTTPS port" "$proxy" curl "${tls[@]}" -f -o /dev/null "$base/healthz"

say "checks"
out=$(curl "${tls[@]}" -f -w '\n%{http_version}' "$base/healthz")
[ "$out" = $'ok\n2' ] || fail "/healthz over HTTPS answered ${out//$'\n'/ | } (want ok over HTTP/2)"
pass "/healthz over HTTPS, HTTP/2, certificate verified"

redirect=$(curl -sS -o /dev/null -w '%{http_code} %{redirect_url}' --resolve "$name:$plain_port:127.0.0.1" "http://$name:$plain_port/healthz")
[ "$redirect" = "301 https://$name/healthz" ] || fail "plain HTTP answered '$redirect' (want a 301 to https://$name/healthz)"
pass "plain HTTP redirected to HTTPS"

# Three pages of random words and one with a sentence the search below
# finds: 1.5 MiB in all, more than nginx's default client_max_body_size of
# 1 MiB, and a few thousand chunks to embed, so that the job runs on well
# after its event streams open.
python3 - "$work/upload" <<'PY'
import os, random, sys
out = sys.argv[1]
os.makedirs(out)
rng = random.Random(64)
words = ("commit branch merge rebase tag remote fetch pull push stash config hook worktree bisect "
         "blame reflog index query vector shard replica cluster schema table column row").split()
for n in range(3):
    with open(os.path.join(out, f"guide-{n}.md"), "w") as f:
        f.write(f"# Guide {n}\n\n")
        section = 0
        while f.tell() < 512 * 1024:
            f.write(f"## Part {section}\n\n" + " ".join(rng.choice(words) for _ in range(120)) + ".\n\n")
            section += 1
with open(os.path.join(out, "lighthouse.md"), "w") as f:
    f.write("# Lighthouse maintenance\n\nThe keeper polishes the Fresnel lens every morning "
            "and winds the clockwork that turns the lamp.\n")
PY
upload_bytes=$(cat "$work"/upload/*.md | wc -c)
[ "$upload_bytes" -gt $((1024 * 1024)) ] || fail "the upload is only $upload_bytes bytes"
files=()
for f in "$work"/upload/*.md; do files+=(-F "file=@$f"); done
upload=$(curl "${tls[@]}" -w '\n%{http_code}' -H "Authorization: Bearer $token" \
  -F library=nginx-test -F version=1 "${files[@]}" "$base/api/upload")
[ "${upload##*$'\n'}" = 202 ] || fail "the upload answered ${upload//$'\n'/ | } (want 202)"
job=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["job_id"])' "${upload%$'\n'*}")
pass "upload of $upload_bytes bytes through nginx: 202, job $job"

# The job's events, written to a file as they arrive (-N), read over
# HTTP/2 and over HTTP/1.1: with nginx's default proxy_buffering, HTTP/2
# still passes each event on at once, but HTTP/1.1 (browsers' EventSource
# on an HTTP/1.1 connection, most command-line clients) gets every event
# when the job ends. The client accepts gzip, as browsers do.
streams=()
for http in 2 1.1; do
  curl "${tls[@]}" --http"$http" -N --compressed -H "Authorization: Bearer $token" \
    "$base/api/jobs/$job/events" >"$work/events-$http.txt" &
  streams+=($!)
done
stream="${streams[*]}"
first_event() { grep -q '^event: ' "$work/events-$1.txt"; }
# docshelf sends the first event as a stream opens: a minute without it is
# nginx holding it back.
wait_for 60 "the first job event through nginx over HTTP/2" "${streams[0]}" first_event 2
wait_for 60 "the first job event through nginx over HTTP/1.1" "${streams[1]}" first_event 1.1
# Each stream's first event is the job's state when it opened. Held back,
# it would arrive only with the last one, once the job had ended.
state=$(curl -fsS -H "Authorization: Bearer $token" "http://127.0.0.1:$backend_port/api/jobs/$job" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["state"])')
case $state in
  done | cancelled | interrupted | failed)
    fail "the first events reached the client only after the job ended ($state): nginx buffered the stream" ;;
esac
for http in 2 1.1; do
  grep -q '^event: done' "$work/events-$http.txt" && fail "the HTTP/$http stream ended before its first event was read"
done
pass "job events arrive over HTTP/2 and HTTP/1.1 while the job runs (job $state at the first events)"

job_done() { grep -q '^event: done' "$work/events-$1.txt"; }
wait_for 900 "the job's done event over HTTP/2" "${streams[0]}" job_done 2
wait_for 60 "the job's done event over HTTP/1.1" "${streams[1]}" job_done 1.1
for pid in "${streams[@]}"; do wait "$pid" || true; done
stream=
for http in 2 1.1; do
  grep -A1 '^event: done' "$work/events-$http.txt" | grep -q '"state":"done"' ||
    fail "the job did not end done (HTTP/$http): $(grep -A1 '^event: done' "$work/events-$http.txt")"
done
pass "both streams ended with done, after $(grep -c '^event: ' "$work/events-2.txt") events"

# MCP's streamable HTTP answers a POST as an event stream.
headers=$(curl "${tls[@]}" -f -N -D - -o "$work/mcp.txt" \
  -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"test-nginx","version":"1"}}}' \
  "$base/mcp")
grep -qi '^content-type: text/event-stream' <<<"$headers" || fail "/mcp did not answer with an event stream: $headers"
grep -qi '^mcp-session-id: ' <<<"$headers" || fail "/mcp's session header did not come through nginx: $headers"
grep -q '"serverInfo"' "$work/mcp.txt" || fail "/mcp's initialize answered: $(cat "$work/mcp.txt")"
pass "MCP initialize over /mcp: event stream with a session id"

# A browser on this page sends its Origin, port included, and
# Sec-Fetch-Site; docshelf accepts the write only if the Host it receives
# names the same host and port.
search=$(curl "${tls[@]}" -w '\n%{http_code}' -H 'content-type: application/json' \
  -H "Origin: https://$name:$tls_port" -H 'Sec-Fetch-Site: same-origin' \
  -d '{"query": "who polishes the Fresnel lens?", "library": "nginx-test", "k": 3}' "$base/api/search")
[ "${search##*$'\n'}" = 200 ] || fail "a same-origin search answered ${search//$'\n'/ | }"
top=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["results"][0]["file_path"])' "${search%$'\n'*}")
[ "$top" = lighthouse.md ] || fail "the search's first result is $top (want lighthouse.md)"
pass "search through nginx, as a same-origin browser request: lighthouse.md first"

cookie=$(curl "${tls[@]}" -f -o /dev/null -D - -H 'content-type: application/json' \
  -H "Origin: https://$name:$tls_port" -H 'Sec-Fetch-Site: same-origin' \
  -d "{\"token\": \"$token\"}" "$base/api/session" | grep -i '^set-cookie:' || true)
grep -qi '; *secure' <<<"$cookie" || fail "the session cookie is not Secure: ${cookie:-no Set-Cookie}"
pass "dashboard sign-in over HTTPS sets a Secure session cookie"

say "nginx in front of docshelf: all checks passed"
