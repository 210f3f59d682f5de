# usermemory: build, lint and test. `make test` is the command CI runs.
SHELL := /usr/bin/env bash
GO ?= go

.PHONY: test lint unit run build bench

## test: every check and every test, with moto_server started for them.
test: lint
	./scripts/with-moto.sh $(GO) test -race -count=1 ./...

## lint: gofmt, go vet, staticcheck and (once the template exists) cfn-lint.
lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	@if [ -f template.yaml ]; then \
	  command -v cfn-lint >/dev/null || { echo "error: cfn-lint missing: python3 -m pip install cfn-lint"; exit 1; }; \
	  cfn-lint template.yaml; fi

## unit: the tests without the race detector, quick.
unit:
	./scripts/with-moto.sh $(GO) test -count=1 ./...

## bench: the benchmarks of BENCHMARKS.md.
bench:
	./scripts/with-moto.sh $(GO) test -run '^$$' -bench . -benchmem ./memory/... ./dynamorepo/...

# ---- Lambda builds (functions/, template.yaml) --------------------------
# sam build runs `make build-<LogicalId>` in CodeUri (the repository root)
# with ARTIFACTS_DIR set; every function is a static linux/arm64 binary
# named bootstrap for the provided.al2023 runtime. `make build` makes them
# all into bin/<folder>/bootstrap the same way. LAMBDA_GOARCH=amd64 builds
# for the local runtime emulator instead.
LAMBDA_GOARCH ?= arm64
LAMBDA_BUILD = GOOS=linux GOARCH=$(LAMBDA_GOARCH) CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath -ldflags "-s -w"
LAMBDA_FUNCTIONS = getfacts putfact deletefact clearfacts eraseuser extractor

.PHONY: build-GetFactsFunction build-PutFactFunction build-DeleteFactFunction build-ClearFactsFunction build-EraseUserFunction build-ExtractorFunction

build-GetFactsFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/getfacts
build-PutFactFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/putfact
build-DeleteFactFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/deletefact
build-ClearFactsFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/clearfacts
build-EraseUserFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/eraseuser
build-ExtractorFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/extractor

## build: every function's bootstrap, as sam build makes it, into bin/<function>/bootstrap.
build:
	@for f in $(LAMBDA_FUNCTIONS); do \
	  echo "build bin/$$f/bootstrap ($(LAMBDA_GOARCH))"; \
	  $(LAMBDA_BUILD) -o bin/$$f/bootstrap ./functions/$$f || exit 1; \
	done
# ---- end of Lambda builds -----------------------------------------------
