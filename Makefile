# taskloom — see README.md. `make dev` runs everything; `make test` runs every test.
SHELL := /bin/bash
BIN := $(CURDIR)/.bin
GO ?= go
GOFLAGS_TEST ?= -race -count=1 -timeout 25m
FUZZTIME ?= 5000x

.PHONY: dev dev-reset test docs-test starter fuzz-short bench chaos screenshots lint tools clean deploy-check

tools: $(BIN)/temporal $(BIN)/embedded-mongo $(BIN)/starter

$(BIN)/temporal:
	./temporal-dev.sh --install-only

# The embedded FerretDB that tests start in its own process (no -race: it would run ~8x slower).
$(BIN)/embedded-mongo: FORCE
	@mkdir -p $(BIN)
	$(GO) build -o $@ ./internal/devstack/cmd/embedded-mongo

# The production CLI, which README's commands run as ./.bin/starter (go build is incremental).
starter: $(BIN)/starter
$(BIN)/starter: FORCE
	@mkdir -p $(BIN)
	$(GO) build -o $@ ./starter

FORCE:

# The dev stack keeps its state in ./.data across restarts (DEV_DATA_DIR); dev-reset starts clean.
# The binary runs in the recipe's place (exec), so Ctrl-C reaches it once and it exits 0.
dev: $(BIN)/temporal $(BIN)/starter
	$(GO) build -o $(BIN)/dev ./starter/dev
	exec $(BIN)/dev

dev-reset: $(BIN)/temporal $(BIN)/starter
	$(GO) build -o $(BIN)/dev ./starter/dev
	exec $(BIN)/dev --reset

# `go test ./...` includes the README test (tests/readme: every ```sh block of README.md against a
# fresh dev stack); docs-test runs it alone.
test: tools lint
	$(GO) test $(GOFLAGS_TEST) ./...
	$(MAKE) --no-print-directory fuzz-short

docs-test: tools
	$(GO) test -count=1 -timeout 20m -v -run TestReadmeCommandsRun ./tests/readme/

# Runs every Fuzz target briefly beyond its seed corpus (the corpus itself runs in `go test`).
fuzz-short:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz-short.sh

bench: tools
	@if [ -d bench ]; then $(GO) run ./bench; else echo "no benchmarks yet"; fi

chaos: tools
	ECHO_CONCURRENCY_TASKS=10000 $(GO) test -count=1 -timeout 30m -tags chaos ./...

# 1280×900 screenshots of every UI page, made by the browser tests over real workflows, into
# .data/screenshots/ (not committed) for a reviewer who does not run a browser.
SCREENSHOTS := $(CURDIR)/.data/screenshots
screenshots: tools
	@mkdir -p $(SCREENSHOTS)
	CI=true TASKLOOM_UI_SCREENSHOTS=$(SCREENSHOTS) $(GO) test -count=1 -timeout 10m ./api/ui/ -run 'TestConsolePages$$|TestConsoleWebhookPageShowsRealDeliveries|TestTemporalWebUIShowsSummaries|TestServerTasksPullStateAndQueueOperations|TestPullManagementReleaseStatsAndHistory|TestAPIKeysCreateShowOnceAndDeactivate|TestTaskDetailReRunMoveDeleteAndFilters'
	@ls -1 $(SCREENSHOTS)

# Renders the Helm chart and parses deploy/compose.yaml and deploy/Dockerfile, and checks them
# against the code (prod variables, probe routes, ports, commands, no inlined secret). Its own
# module (deploy/check), so Helm's dependencies stay out of taskloom's go.mod; the first run builds
# them (about 7 minutes on this 2-core VM under load), later runs take seconds.
deploy-check:
	cd deploy/check && $(GO) test -count=1 ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf .data
