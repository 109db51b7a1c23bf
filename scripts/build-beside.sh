#!/usr/bin/env bash
# Runs a build command while one-time tool builds run beside it at the
# lowest CPU priority, then waits for them.
#
# Usage: scripts/build-beside.sh "<job> [<job>…]" <build command…>
# Jobs: `trunk` (scripts/fetch-trunk.sh, which the dashboard bundle needs)
# and `llm` (scripts/fetch-llm.sh: llama-server, which Ask's tests need).
#
# Why: on a 2-core machine the Rust builds leave a core idle at times (the
# wasm32 dashboard build is mostly serial), so a one-time C++ or Rust tool
# build started beside them costs far less wall time than after them
# (docs/benchmarks.md, "Build"). `nice -n 19` keeps it off the cores the
# main build wants; it runs in this shell's session (not `setsid`), because
# with the kernel's autogroup scheduling a new session would get its own
# group and an equal CPU share, which would defeat the nice value.
# Each job's output goes to a log that is printed if it fails; if this script
# ends early (a failed build, Ctrl-C), the EXIT trap stops them. A job that is
# already done answers at once ("present").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jobs=$1
shift

pids=() logs=() names=()
cleanup() {
  for pid in "${pids[@]}"; do kill -- -"$pid" 2>/dev/null || true; done
  rm -f "${logs[@]}"
}
trap cleanup EXIT
set -m # each job gets its own process group, so a failure can stop all of it
for job in $jobs; do
  log=$(mktemp "${TMPDIR:-/tmp}/docshelf-$job.XXXXXX")
  nice -n 19 "$root/scripts/fetch-$job.sh" </dev/null >"$log" 2>&1 &
  pids+=("$!") logs+=("$log") names+=("$job")
done
set +m

"$@"

for i in "${!pids[@]}"; do
  echo "==> waiting for ${names[$i]}'s build (scripts/fetch-${names[$i]}.sh)"
  if ! wait "${pids[$i]}"; then
    cat "${logs[$i]}" >&2
    echo "build-beside: scripts/fetch-${names[$i]}.sh failed (log above)" >&2
    exit 1
  fi
  grep '^==>' "${logs[$i]}" || true
done
