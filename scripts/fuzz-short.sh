#!/usr/bin/env bash
# Runs each Fuzz target of the module for $FUZZTIME beyond its seed corpus.
#
# Build once, then run: each package's coverage-instrumented test binary is built once
# (`go test -c -fuzz=.`), one package after another, and every target is run from that binary.
# `go test -fuzz` takes one target a run and rebuilds and relinks the binary for each, and two of
# them started at once on a cold build cache both compiled the same instrumented dependencies
# (FerretDB and its SQLite, the Temporal SDK): most of a cold `make test`'s fuzz time. One `go`
# command at a time compiles each dependency once, using both cores itself.
#
# The runs go $FUZZ_JOBS at a time: a short run is mostly starting the binary and replaying its
# corpus, which leaves a core idle. The default is an iteration count, not a duration: a short
# time-based run can end with a spurious "context deadline exceeded" from the fuzz coordinator on
# a loaded machine, and a count gives every target the same work however noisy the machine is.
# The first failure stops the rest and prints that target's output.
set -euo pipefail
cd "$(dirname "$0")/.."
export FUZZTIME=${FUZZTIME:-5000x}
FUZZ_JOBS=${FUZZ_JOBS:-2}
WORK=$(mktemp -d)
# go test keeps each package's generated corpus under the build cache; the runs share it.
FUZZ_CACHE="$(go env GOCACHE)/fuzz/$(go list -m)"
export WORK FUZZ_CACHE
trap 'rm -rf "$WORK"' EXIT

# binary PKG is where PKG's instrumented test binary is built.
binary() { echo "$WORK/${1//\//_}.test"; }
export -f binary

# fuzz_one PKG NAME runs one target unless one has failed already. A failure leaves a mark that
# the targets not yet started see, and exits 1: xargs then waits for the run still going beside it
# (exit status 255 would make xargs quit at once and leave that run behind) and exits non-zero.
# The binary runs in its package's folder, as go test runs it: the corpus is testdata/fuzz there.
fuzz_one() {
  [[ -e "$WORK/failed" ]] && return 0
  local log
  log="$(binary "$1").$2.log"
  echo "fuzz $1 $2 ($FUZZTIME)"
  (cd "$1" && "$(binary "$1")" -test.run='^$' -test.fuzz="^$2\$" -test.fuzztime="$FUZZTIME" \
    -test.fuzzcachedir="$FUZZ_CACHE/${1#./}" -test.timeout=10m -test.paniconexit0) >"$log" 2>&1 ||
    { touch "$WORK/failed"; cat "$log"; return 1; }
}
export -f fuzz_one

targets=$(git ls-files '*_test.go' | xargs grep -nE '^func Fuzz[A-Za-z0-9_]*\(' |
  sed -E 's#^(.*)/[^/]*:[0-9]+:func (Fuzz[A-Za-z0-9_]*).*#./\1 \2#' || true)
count=$(grep -c . <<<"$targets" || true)
for pkg in $(cut -d' ' -f1 <<<"$targets" | sort -u); do
  echo "build $pkg (fuzz)"
  go test -c -fuzz=. -o "$(binary "$pkg")" "$pkg"
done
xargs -r -P "$FUZZ_JOBS" -n 2 bash -c 'fuzz_one "$@"' _ <<<"$targets"
echo "fuzz-short: $count targets ran without a failure"
