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
