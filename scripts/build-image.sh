#!/usr/bin/env bash
# Builds docshelf's OCI image (deploy/Containerfile) with podman, then
# smoke-tests it: start it with a named volume, upload, search, remove the
# container, start a new one on the same volume, and find the document
# again. Why a new container rather than a restart: the store must live in
# the volume, not in the container's own layer.
#
# The base comes from Debian's packages, not a registry (none may be
# reachable, as on the machines docshelf is built on): debootstrap makes a
# minimal Debian 12 with the packages docshelf runs, brought up to date
# from bookworm-updates and bookworm-security, and podman imports it as
# localhost/docshelf-base:bookworm. It is made once and reused; set
# DOCSHELF_REBUILD_BASE=1 to make it again (for Debian's security updates).
#
# Usage: scripts/build-image.sh [--no-test]      (as root: debootstrap needs it)
# Settings:
#   DOCSHELF_BIN        the binary to put in the image (default
#                       $CARGO_TARGET_DIR/debug/docshelf; a release build when there is one)
#   DOCSHELF_MODEL_DIR  the model (default models/all-MiniLM-L6-v2)
#   DOCSHELF_SITE_DIR   the dashboard bundle (default dist, made by make build)
#   DOCSHELF_IMAGE      the image's name (default localhost/docshelf:latest)
#   DOCSHELF_DEBIAN_MIRROR  default http://deb.debian.org/debian
#   DOCSHELF_PODMAN_ARGS    extra podman options for build and run, e.g.
#                       "--runtime runc --ulimit nofile=20000:20000 --ulimit nproc=16384:16384"
#                       where the container runtime may not raise resource limits
#                       (a sandbox without CAP_SYS_RESOURCE; docs/operations.md)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
bin=${DOCSHELF_BIN:-${CARGO_TARGET_DIR:-$HOME/.cache/docshelf/target}/debug/docshelf}
model=${DOCSHELF_MODEL_DIR:-$root/models/all-MiniLM-L6-v2}
site=${DOCSHELF_SITE_DIR:-$root/dist}
image=${DOCSHELF_IMAGE:-localhost/docshelf:latest}
base=localhost/docshelf-base:bookworm
mirror=${DOCSHELF_DEBIAN_MIRROR:-http://deb.debian.org/debian}
# Word-split on purpose: a list of options.
read -r -a podman_args <<<"${DOCSHELF_PODMAN_ARGS:-}"
smoke=1
[ "${1:-}" = --no-test ] && smoke=0

say() { printf '==> %s\n' "$*"; }
die() { printf 'build-image: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "run as root (sudo scripts/build-image.sh): debootstrap and the image import need it"
command -v podman >/dev/null || die "podman is needed (apt-get install podman)"
[ -x "$bin" ] || die "no docshelf binary at $bin (make build-server, or set DOCSHELF_BIN)"
for f in model.safetensors tokenizer.json config.json; do
  [ -f "$model/$f" ] || die "no $f in $model (scripts/fetch-model.sh)"
done
[ -f "$site/pkg/app.js" ] || die "no dashboard bundle in $site (make build)"

work=$(mktemp -d "${TMPDIR:-/var/tmp}/docshelf-image.XXXXXX")
container= volume=
cleanup() {
  local status=$?
  if [ -n "$container" ]; then
    [ "$status" -eq 0 ] || { echo "==> the container's log (last 30 lines):" >&2; podman logs --tail 30 "$container" >&2 || true; }
    podman rm -f "$container" >/dev/null 2>&1 || true
  fi
  [ -z "$volume" ] || podman volume rm -f "$volume" >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT INT TERM

# --- the base: Debian 12 from its packages ---------------------------------
if [ "${DOCSHELF_REBUILD_BASE:-0}" != 1 ] && podman image exists "$base"; then
  say "base image $base present (DOCSHELF_REBUILD_BASE=1 makes it again)"
else
  command -v debootstrap >/dev/null || die "debootstrap is needed (apt-get install debootstrap)"
  say "debootstrap: Debian 12 (minbase) from $mirror"
  rootfs=$work/rootfs
  debootstrap --variant=minbase \
    --include=ca-certificates,curl,git,poppler-utils,tesseract-ocr,tesseract-ocr-eng \
    bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -20 "$work/debootstrap.log" >&2; die "debootstrap failed (log above)"; }
  # debootstrap writes the release suite only; updates and security fixes
  # come from these.
  rm -f "$rootfs/etc/apt/sources.list"
  security=${mirror%/debian}/debian-security
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  say "updating it from bookworm-updates and bookworm-security"
  cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
  chroot "$rootfs" apt-get update -q >"$work/upgrade.log" 2>&1 &&
    DEBIAN_FRONTEND=noninteractive chroot "$rootfs" apt-get upgrade -y -q >>"$work/upgrade.log" 2>&1 ||
    { tail -20 "$work/upgrade.log" >&2; die "apt-get upgrade in the base failed (log above)"; }
  chroot "$rootfs" apt-get clean
  # Caches and logs the image does not need; resolv.conf is the runtime's.
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/log/*.log \
    "$rootfs"/var/cache/debconf/*-old "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*
  : >"$rootfs/etc/resolv.conf"
  say "importing it as $base"
  tar -C "$rootfs" --numeric-owner -c . | podman import --change 'CMD ["/bin/bash"]' - "$base" >/dev/null
  rm -rf "$rootfs"
fi

# --- the image ---------------------------------------------------------------
say "staging the build context: $bin, the model, the dashboard"
ctx=$work/context
mkdir -p "$ctx/model"
cp "$root/deploy/Containerfile" "$ctx/"
# A hard link when the binary is on the same file system (it is large).
ln "$bin" "$ctx/docshelf" 2>/dev/null || cp "$bin" "$ctx/docshelf"
cp "$model/model.safetensors" "$model/tokenizer.json" "$model/config.json" "$ctx/model/"
cp -r "$site" "$ctx/site"

say "building $image"
started=$SECONDS
podman build "${podman_args[@]}" --format docker --build-arg "BASE=$base" -t "$image" -f "$ctx/Containerfile" "$ctx"
say "built $image in $((SECONDS - started)) s: $(podman image inspect --format '{{.Size}}' "$image" | awk '{ printf "%.0f MB", $1 / 1e6 }')"

[ "$smoke" -eq 1 ] || exit 0

# --- the smoke test -----------------------------------------------------------
say "smoke test"
token=smoke-test-admin-token
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port
volume=docshelf-smoke-$$
podman volume create "$volume" >/dev/null
start() {
  container=$(podman run "${podman_args[@]}" -d -p "127.0.0.1:$port:8080" -v "$volume:/var/lib/docshelf" \
    -e DOCSHELF_TOKEN="$token" "$image")
  local deadline=$((SECONDS + 240))
  until curl -fsS -o /dev/null "$url/healthz" 2>/dev/null; do
    [ "$(podman inspect --format '{{.State.Running}}' "$container")" = true ] || die "the container stopped before answering /healthz"
    [ "$SECONDS" -lt "$deadline" ] || die "/healthz did not answer within 240 s"
    sleep 0.2
  done
}
found() { # the uploaded page is the search's first result
  curl -fsS "$url/api/search" -H 'content-type: application/json' \
    -d '{"query": "who polishes the Fresnel lens?", "library": "smoke", "k": 3}' |
    python3 -c 'import json, sys; r = json.load(sys.stdin)["results"]; sys.exit(not r or r[0]["file_path"] != "lighthouse.md")'
}

start
say "started $container; /healthz answers on $url"
uid=$(podman exec "$container" id -u)
[ "$uid" = 10001 ] || die "docshelf runs as uid $uid in the container (want 10001)"
say "docshelf runs as uid $uid"
podman healthcheck run "$container" || die "the image's HEALTHCHECK failed"
say "the image's health check passes"

printf '# Lighthouse maintenance\n\nThe keeper polishes the Fresnel lens every morning and winds the clockwork that turns the lamp.\n' >"$work/lighthouse.md"
printf '# Harbour\n\nBoats moor at the quay when the tide is high.\n' >"$work/harbour.md"
job=$(curl -fsS -H "Authorization: Bearer $token" -F library=smoke -F version=1 \
  -F "file=@$work/lighthouse.md" -F "file=@$work/harbour.md" "$url/api/upload" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["job_id"])')
# The job's event stream ends with its done event.
curl -fsS -N -H "Authorization: Bearer $token" "$url/api/jobs/$job/events" | grep -A1 '^event: done' | grep -q '"state":"done"' ||
  die "the upload's job did not end done: $(curl -fsS -H "Authorization: Bearer $token" "$url/api/jobs/$job")"
found || die "the uploaded page was not found"
say "uploaded two pages; the search finds lighthouse.md"

# The CLI in the running container, on the same store: a token it makes is
# known to the server within --read-consistency-secs.
reader=$(podman exec "$container" docshelf token create smoke-reader --grant 'read:*' --json |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["token"])')
deadline=$((SECONDS + 30))
until curl -fsS -o /dev/null -H "Authorization: Bearer $reader" "$url/api/libraries" 2>/dev/null; do
  [ "$SECONDS" -lt "$deadline" ] || die "the server did not accept the token the CLI made in the container"
  sleep 0.2
done
say "podman exec … docshelf token create: the server accepts the new token"

podman stop "$container" >/dev/null
podman rm "$container" >/dev/null
container=
say "container stopped and removed; a new one on volume $volume"
start
found || die "after a new container on the same volume, the page is gone"
say "the new container finds lighthouse.md: the store lives in the volume"
say "image $image: smoke test passed"
