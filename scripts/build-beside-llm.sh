#!/usr/bin/env bash
# Runs a build command while llama-server (scripts/fetch-llm.sh) builds beside
# it at the lowest CPU priority, then waits for both.
#
# Why: llama-server's one-time C++ build took 7.5 minutes of wall time on its
# own after the Rust builds, while on a 2-core machine those leave a core idle
# at times (the wasm32 dashboard build is mostly serial). In a measured fresh
# `make test` the two cores stayed busy through the wasm32 build with this, and
# 3.5 minutes of waiting for llama-server remained after it: about 4 minutes
# saved. `nice -n 19` keeps it off the cores the Rust build wants; it runs in
# this shell's session (not `setsid`), because with the kernel's autogroup
# scheduling a new session would get its own group and an equal CPU share,
# which would defeat the nice value.
# Its output goes to a log that is printed if it fails; if this script ends
# early (a failed build, Ctrl-C), the EXIT trap stops it.
# Usage: scripts/build-beside-llm.sh <build command...>
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

log=$(mktemp "${TMPDIR:-/tmp}/docshelf-llm.XXXXXX")
set -m # the job below gets its own process group, so a failure can stop all of it
nice -n 19 "$root/scripts/fetch-llm.sh" </dev/null >"$log" 2>&1 &
llm=$!
set +m
trap 'kill -- -"$llm" 2>/dev/null || true; rm -f "$log"' EXIT

"$@"

echo "==> waiting for llama-server's build (scripts/fetch-llm.sh)"
if ! wait "$llm"; then
  cat "$log" >&2
  echo "build-beside-llm: scripts/fetch-llm.sh failed (log above)" >&2
  exit 1
fi
grep '^==>' "$log" || true
