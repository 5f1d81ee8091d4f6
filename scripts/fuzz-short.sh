#!/usr/bin/env bash
# Runs each Fuzz target of the module for $FUZZTIME beyond its seed corpus (go test -fuzz takes one
# target per run), $FUZZ_JOBS targets at a time: most of a short run is the go command linking and
# starting the target's binary and replaying its corpus, which leaves a core idle, so two runs
# overlap on the project's 2 cores. The default is an iteration count, not a duration: a short
# time-based run can end with a spurious "context deadline exceeded" from the fuzz coordinator on a
# loaded machine, and a count gives every target the same work however noisy the machine is.
# The first failure stops the rest and prints that target's output.
set -euo pipefail
cd "$(dirname "$0")/.."
export FUZZTIME=${FUZZTIME:-5000x}
FUZZ_JOBS=${FUZZ_JOBS:-2}
LOGS=$(mktemp -d)
export LOGS
trap 'rm -rf "$LOGS"' EXIT

# fuzz_one PKG NAME runs one target unless one has failed already. A failure leaves a mark that
# the targets not yet started see, and exits 1: xargs then waits for the run still going beside it
# (exit status 255 would make xargs quit at once and leave that run behind) and exits non-zero.
fuzz_one() {
  [[ -e "$LOGS/failed" ]] && return 0
  local log="$LOGS/${1//\//_}.$2.log"
  echo "fuzz $1 $2 ($FUZZTIME)"
  go test -run='^$' -fuzz="^$2\$" -fuzztime="$FUZZTIME" "$1" >"$log" 2>&1 || { touch "$LOGS/failed"; cat "$log"; return 1; }
}
export -f fuzz_one

targets=$(git ls-files '*_test.go' | xargs grep -nE '^func Fuzz[A-Za-z0-9_]*\(' |
  sed -E 's#^(.*)/[^/]*:[0-9]+:func (Fuzz[A-Za-z0-9_]*).*#./\1 \2#' || true)
count=$(grep -c . <<<"$targets" || true)
xargs -r -P "$FUZZ_JOBS" -n 2 bash -c 'fuzz_one "$@"' _ <<<"$targets"
echo "fuzz-short: $count targets ran without a failure"
