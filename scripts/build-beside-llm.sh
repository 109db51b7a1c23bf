#!/usr/bin/env bash
# Runs a build command while llama-server (scripts/fetch-llm.sh) builds beside
# it at the lowest CPU priority, then waits for both.
#
# Why: on a 2-core machine the Rust build leaves one core idle for long
# stretches (the `lance` crate's single-unit compile, then the wasm32 build's
# serial crates), and llama-server's one-time C++ build took about 7.5 minutes
# of wall time on its own after them. `nice -n 19` keeps it off the core the
# Rust build wants; it runs in this shell's session (not `setsid`), because
# with the kernel's autogroup scheduling a new session would get its own group
# and equal CPU share, which would defeat the nice value.
# Its output goes to a log that is printed if it fails.
# Usage: scripts/build-beside-llm.sh <build command...>
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

log=$(mktemp "${TMPDIR:-/tmp}/docshelf-llm.XXXXXX")
set -m # the job below gets its own process group, so a failure can stop all of it
nice -n 19 "$root/scripts/fetch-llm.sh" >"$log" 2>&1 &
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
