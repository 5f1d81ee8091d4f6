#!/usr/bin/env bash
# Installs the pinned Temporal CLI into ./.bin (once) and runs the Temporal dev server with the
# Web UI and taskloom's custom search attributes.
#   ./temporal-dev.sh                 run the server (gRPC 7233, Web UI 8233, namespace default)
#   ./temporal-dev.sh --install-only  only build the CLI
#   TEMPORAL_DB=path ./temporal-dev.sh  keep state across restarts (SQLite file; make dev passes
#                                       .data/temporal.db, see README "The dev stack")
set -euo pipefail
cd "$(dirname "$0")"

TEMPORAL_CLI_VERSION=v1.5.1 # v1.6+ cannot be `go install`ed (replace directive in its go.mod)
BIN="$PWD/.bin/temporal"

if [ ! -x "$BIN" ]; then
  echo "temporal-dev: building Temporal CLI $TEMPORAL_CLI_VERSION into .bin/ (a few minutes, once)" >&2
  mkdir -p .bin
  GOBIN="$PWD/.bin" GOFLAGS=-buildvcs=false go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
fi
[ "${1:-}" = "--install-only" ] && exit 0

# The search attributes come from the one list in internal/searchattr/searchattr.go.
args=()
while read -r sa; do args+=(--search-attribute "$sa"); done < <(
  grep -oE '^\s*"[A-Za-z0-9]+=(Keyword|Text|Int|Double|Bool|Datetime|KeywordList)",' internal/searchattr/searchattr.go |
    tr -d ' \t",')
[ -n "${TEMPORAL_DB:-}" ] && args+=(--db-filename "$TEMPORAL_DB")

# Fairness: a task queue hands out its backlog in turn over the tasks' fairness keys (one per
# pipeline user) instead of first come, first served; the pinned server ignores the keys without
# it, and keeps fairness per partition (one here). Same list as
# internal/devstack.TemporalDynamicConfig. See README "Fair under load". The search-attribute
# cache is left on, as on any production server (the dev server's default turns it off); every
# attribute taskloom uses is registered above, before the server starts. Activities are handed to
# the worker that scheduled them (eager activity execution; the server's default is off).
exec "$BIN" server start-dev \
  --ip "${TEMPORAL_IP:-127.0.0.1}" --port "${TEMPORAL_PORT:-7233}" \
  --ui-port "${TEMPORAL_UI_PORT:-8233}" --namespace default \
  --dynamic-config-value matching.enableFairness=true \
  --dynamic-config-value matching.numTaskqueueReadPartitions=1 \
  --dynamic-config-value matching.numTaskqueueWritePartitions=1 \
  --dynamic-config-value system.forceSearchAttributesCacheRefreshOnRead=false \
  --dynamic-config-value system.enableActivityEagerExecution=true \
  --log-level "${TEMPORAL_LOG_LEVEL:-warn}" "${args[@]}"
