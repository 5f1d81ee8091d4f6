#!/usr/bin/env bash
# Runs each Fuzz target of the module for $FUZZTIME beyond its seed corpus, one at a time
# (go test -fuzz takes one target per run). The default is an iteration count, not a duration:
# a short time-based run can end with a spurious "context deadline exceeded" from the fuzz
# coordinator on a loaded machine, and a count gives every target the same work however noisy
# the machine is.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-5000x}
count=0
while IFS=: read -r file _ line; do
  name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' <<<"$line")
  pkg="./$(dirname "$file")"
  echo "fuzz $pkg $name ($FUZZTIME)"
  go test -run='^$' -fuzz="^${name}\$" -fuzztime="$FUZZTIME" "$pkg" >/tmp/fuzz-$$.log 2>&1 || { cat /tmp/fuzz-$$.log; exit 1; }
  count=$((count + 1))
done < <(git ls-files '*_test.go' | xargs grep -nE '^func Fuzz[A-Za-z0-9_]*\(' || true)
echo "fuzz-short: $count targets ran without a failure"
