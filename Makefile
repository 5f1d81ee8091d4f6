# taskloom — see README.md. `make dev` runs everything; `make test` runs every test.
SHELL := /bin/bash
BIN := $(CURDIR)/.bin
GO ?= go
GOFLAGS_TEST ?= -race -count=1 -timeout 25m
FUZZTIME ?= 5000x

.PHONY: dev test unit fuzz-short bench chaos lint tools clean

tools: $(BIN)/temporal $(BIN)/embedded-mongo

$(BIN)/temporal:
	./temporal-dev.sh --install-only

# The embedded FerretDB that tests start in its own process (no -race: it would run ~8x slower).
$(BIN)/embedded-mongo: FORCE
	@mkdir -p $(BIN)
	$(GO) build -o $@ ./internal/devstack/cmd/embedded-mongo

FORCE:

dev: $(BIN)/temporal
	$(GO) run ./starter dev

test: tools lint
	$(GO) test $(GOFLAGS_TEST) ./...
	$(MAKE) --no-print-directory fuzz-short

# Runs every Fuzz target briefly beyond its seed corpus (the corpus itself runs in `go test`).
fuzz-short:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz-short.sh

bench: tools
	@if [ -d bench ]; then $(GO) run ./bench; else echo "no benchmarks yet"; fi

chaos: tools
	$(GO) test -count=1 -timeout 30m -tags chaos ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf .data
