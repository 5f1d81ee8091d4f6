# taskloom — see README.md. `make dev` runs everything; `make test` runs every test; `make help` lists
# every target (the `## …` comment after a target's name is its line in the help).
SHELL := /bin/bash
BIN := $(CURDIR)/.bin
GO ?= go
GOFLAGS_TEST ?= -race -count=1 -timeout 25m
FUZZTIME ?= 5000x
STATICCHECK_VERSION := v0.8.2

.PHONY: help dev dev-reset check test docs-test starter fuzz-short bench chaos screenshots lint staticcheck tools clean deploy-check cluster-tools cluster cluster-down cluster-reset

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z][a-z-]*:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

tools: $(BIN)/temporal $(BIN)/embedded-mongo $(BIN)/starter ## build what the tests need into ./.bin (Temporal CLI, embedded FerretDB, starter)

$(BIN)/temporal:
	./temporal-dev.sh --install-only

# The embedded FerretDB that tests start in its own process (no -race: it would run ~8x slower).
$(BIN)/embedded-mongo: FORCE
	@mkdir -p $(BIN)
	$(GO) build -o $@ ./internal/devstack/cmd/embedded-mongo

# The production CLI, which README's commands run as ./.bin/starter (go build is incremental).
starter: $(BIN)/starter ## build the production CLI into ./.bin/starter
$(BIN)/starter: FORCE
	@mkdir -p $(BIN)
	$(GO) build -o $@ ./starter

FORCE:

# The dev stack keeps its state in ./.data across restarts (DEV_DATA_DIR); dev-reset starts clean.
# The binary runs in the recipe's place (exec), so Ctrl-C reaches it once and it exits 0.
dev: $(BIN)/temporal $(BIN)/starter ## run everything on embedded defaults (state kept in ./.data)
	$(GO) build -o $(BIN)/dev ./starter/dev
	exec $(BIN)/dev

dev-reset: $(BIN)/temporal $(BIN)/starter ## make dev, starting from empty Temporal and MongoDB state
	$(GO) build -o $(BIN)/dev ./starter/dev
	exec $(BIN)/dev --reset

# The production shape on one machine (docs/deploy.md): a Temporal cluster built from
# go.temporal.io/server at the version the pinned CLI embeds (tools/temporal, its own module, so
# taskloom's go.mod keeps its own dependency versions), on PostgreSQL, with 2 APIs and 2 workers.
# The server's binaries are built once (about 5 minutes) and rebuilt when tools/temporal/go.mod
# changes; the SQL schemas its sql tool applies are copied out of the server module.
TEMPORAL_TOOLS := $(BIN)/temporal-server $(BIN)/temporal-sql-tool $(BIN)/temporal-ui-server $(BIN)/temporal-schema
CLUSTER := $(BIN)/cluster

cluster-tools: $(TEMPORAL_TOOLS) ## build the Temporal server, its sql tool and the Web UI server into ./.bin (once, ~5 min)

$(BIN)/temporal-server: tools/temporal/go.mod
	@mkdir -p $(BIN)
	cd tools/temporal && $(GO) build -o $@ go.temporal.io/server/cmd/server

$(BIN)/temporal-sql-tool: tools/temporal/go.mod
	@mkdir -p $(BIN)
	cd tools/temporal && $(GO) build -o $@ go.temporal.io/server/cmd/tools/sql

$(BIN)/temporal-ui-server: tools/temporal/go.mod
	@mkdir -p $(BIN)
	cd tools/temporal && $(GO) build -o $@ github.com/temporalio/ui-server/v2/cmd/server

$(BIN)/temporal-schema: tools/temporal/go.mod
	@mkdir -p $(BIN)
	cd tools/temporal && $(GO) mod download go.temporal.io/server
	rm -rf $@ && cp -r "$$(cd tools/temporal && $(GO) list -m -f '{{.Dir}}' go.temporal.io/server)/schema" $@
	chmod -R u+w $@ && touch $@

$(CLUSTER): FORCE
	@mkdir -p $(BIN)
	$(GO) build -o $@ ./starter/cluster

# The cluster runs detached and keeps its state in .data/cluster (CLUSTER_DIR) across restarts.
cluster: cluster-tools tools $(CLUSTER) ## the production shape on one machine: Temporal cluster on PostgreSQL, 2 APIs, 2 workers (docs/deploy.md)
	$(CLUSTER) up

cluster-down: $(CLUSTER) ## stop every process make cluster started (state stays in .data/cluster)
	$(CLUSTER) down

cluster-reset: cluster-tools tools $(CLUSTER) ## make cluster from empty state (drops its databases and .data/cluster first)
	$(CLUSTER) up --reset

# The contributor's fast loop: formatting, vet, staticcheck and every test that needs no
# integration stack (-short skips the tests that start the Temporal dev server or FerretDB).
check: lint staticcheck ## gofmt, vet, staticcheck and the unit tests (-short: no dev server, no FerretDB)
	$(GO) test -short -count=1 ./...

# `go test ./...` includes the docs test (tests/readme: every ```sh block of README.md and docs/
# against a fresh dev stack); docs-test runs it alone.
test: tools lint staticcheck ## what CI runs: lint, staticcheck, every test under -race (integration included), then fuzz-short
	$(GO) test $(GOFLAGS_TEST) ./...
	$(MAKE) --no-print-directory fuzz-short

docs-test: tools ## run every ```sh block of README.md and docs/ against a fresh dev stack
	$(GO) test -count=1 -timeout 25m -v -run TestDocsCommandsRun ./tests/readme/

# Runs every Fuzz target briefly beyond its seed corpus (the corpus itself runs in `go test`).
fuzz-short: ## run every fuzz target briefly beyond its corpus (FUZZTIME, FUZZ_JOBS)
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz-short.sh

bench: tools ## benchmarks, each row against a baseline measured in the same run (docs/benchmarks.md)
	$(GO) run ./bench

chaos: tools ## the slow fault suite (-tags chaos): dependencies and workers broken under load
	ECHO_CONCURRENCY_TASKS=10000 $(GO) test -count=1 -timeout 30m -tags chaos ./...

# 1280×900 screenshots of every UI page, made by the browser tests over real workflows, into
# .data/screenshots/ (not committed) for a reviewer who does not run a browser.
SCREENSHOTS := $(CURDIR)/.data/screenshots
screenshots: tools ## 1280×900 PNGs of every UI page into .data/screenshots/
	@mkdir -p $(SCREENSHOTS)
	CI=true TASKLOOM_UI_SCREENSHOTS=$(SCREENSHOTS) $(GO) test -count=1 -timeout 10m ./api/ui/ -run 'TestConsolePages$$|TestConsoleWebhookPageShowsRealDeliveries|TestTemporalWebUIShowsSummaries|TestServerTasksPullStateAndQueueOperations|TestPullManagementReleaseStatsAndHistory|TestAPIKeysCreateShowOnceAndDeactivate|TestTaskDetailReRunMoveDeleteAndFilters'
	@ls -1 $(SCREENSHOTS)

# Renders the Helm chart and parses deploy/compose.yaml and deploy/Dockerfile, and checks them
# against the code (prod variables, probe routes, ports, commands, no inlined secret). Its own
# module (deploy/check), so Helm's dependencies stay out of taskloom's go.mod; the first run builds
# them (about 7 minutes on this 2-core VM under load), later runs take seconds.
deploy-check: ## render the Helm chart and check deploy/ (chart, compose, Dockerfile) against the code
	cd deploy/check && $(GO) test -count=1 ./...

lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

# staticcheck is pinned and installed into ./.bin, so every machine runs the same checks.
staticcheck: $(BIN)/staticcheck ## staticcheck ./... (pinned, installed into ./.bin)
	$(BIN)/staticcheck ./...

$(BIN)/staticcheck:
	GOBIN=$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

clean: ## delete ./.data (the dev stack's state)
	rm -rf .data

# --- make test-cluster: tests/cluster (-tags cluster) against a fresh `make cluster` -------------
# The cluster runs on free ports with a PostgreSQL and a Redis of its own (the tests stop and
# restart them), its state in .data/cluster-test; it is stopped at the end whatever the tests did,
# and the target exits with the tests' status.
CLUSTER_TEST_DIR := $(CURDIR)/.data/cluster-test

.PHONY: test-cluster
test-cluster: cluster-tools tools $(CLUSTER) ## start a fresh cluster (own PostgreSQL and Redis), run tests/cluster against it, stop it
	@export CLUSTER_DIR=$(CLUSTER_TEST_DIR); status=0; \
	$(BIN)/cluster up --reset --own-postgres --own-redis || status=$$?; \
	if [ $$status -eq 0 ]; then $(GO) test -tags cluster -count=1 -timeout 12m ./tests/cluster/ || status=$$?; fi; \
	$(BIN)/cluster down; exit $$status
