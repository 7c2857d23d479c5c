# arksave: `make demo` runs the demo, `make test` runs every check.
# Both install missing Debian packages first (scripts/deps.sh).

GO       ?= go
# A count, not a duration: with a duration, Go 1.26's fuzz coordinator can
# fail a run at its deadline with "context deadline exceeded" and no crasher
# (go.dev/issue/75804). 20,000 inputs take 2-3 s per target here.
FUZZTIME ?= 20000x
BENCH    ?= .
PKGS      = ./... ./demo/... ./bench/... ./arktools/... ./jetstream/...
# The modules beside the core one, each linted in its own directory.
MODULES   = demo jetstream bench arktools
# Linters at pinned versions, through go run (the module cache keeps them).
STATICCHECK = $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
GOCYCLO     = $(GO) run github.com/fzipp/gocyclo/cmd/gocyclo@v0.6.0

.PHONY: all deps demo test fmt vet lint core unit fuzz fuzz-long bench bench-compare bench-capacity clean

all: test

deps:
	@bash scripts/deps.sh

## demo: build and run the falling-sand demo: in a window, or headless without a display.
## ARGS go to the demo: make demo ARGS=-load continues the last world.
demo: deps
	@bash scripts/demo.sh $(ARGS)

## test: every check CI runs: formatting, vet, lint, the core module without cgo, race-enabled tests of every module, a short fuzz of every target.
test: deps fmt vet lint core unit fuzz

fmt:
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

## lint: staticcheck with no finding in every module, tests included; no non-test function over
## cyclomatic complexity 30; the core module's public surface within scripts/apicount.sh's bound.
lint:
	GOWORK=off $(STATICCHECK) ./...
	@for m in $(MODULES); do echo "cd $$m && $(STATICCHECK) ./..."; (cd $$m && $(STATICCHECK) ./...) || exit 1; done
	$(GOCYCLO) -over 30 -ignore '_test\.go$$' .
	@GO=$(GO) bash scripts/apicount.sh

## core: the library module on its own, as a game's CI builds it: no go.work, no cgo, no X11 headers;
## also for 32-bit x86 and for arm64 (the code without amd64 assembly).
core:
	GOWORK=off CGO_ENABLED=0 $(GO) vet ./...
	GOWORK=off CGO_ENABLED=0 GOARCH=386 $(GO) vet ./...
	GOWORK=off CGO_ENABLED=0 GOARCH=arm64 $(GO) vet ./...

unit:
	$(GO) test -race -timeout 20m $(PKGS)
	@# Under -race Ark's reflect.Type-to-pointer conversion trips checkptr on types made by
	@# reflect.StructOf, so the codec's property test (skipped there) runs once more without it.
	$(GO) test -run 'TestRandomTypesRoundTripOrAreRefused' ./archetype
	@# The codec without its link to Ark's batch creation (build tag arksave_nolinkname).
	$(GO) test -tags arksave_nolinkname ./archetype
	@# The codecs as a 32-bit program (other int size and alignment).
	@GO=$(GO) bash scripts/test386.sh
	@# scripts/deps.sh against fake apt-get and dpkg: it waits for the dpkg lock.
	@bash scripts/deps_test.sh

fuzz:
	@FUZZTIME=$(FUZZTIME) bash scripts/fuzz.sh

## fuzz-long: 600,000 inputs per target (about a minute each here).
fuzz-long:
	@FUZZTIME=600000x bash scripts/fuzz.sh

## bench: every benchmark of every module, with allocations.
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -timeout 60m $(PKGS)

## bench-compare: the headline benchmarks (commit latency, save stall, encode and decode against
## ark-serde, the demo's tick ratio, tile rendering) of REF and of the working tree, interleaved,
## as one benchstat table: make bench-compare REF=<commit> [ROUNDS=5] [ONLY=commit|load|...]
bench-compare:
	@REF='$(REF)' ROUNDS='$(ROUNDS)' ONLY='$(ONLY)' GO='$(GO)' bash scripts/bench-compare.sh

## bench-capacity: a chunk store of 10,000,000 chunks beside one of 1,000,000 (open, memory, reads,
## 5-chunk commits, with ratios); builds both (about 1 GB in the temp dir) first: a few minutes.
bench-capacity:
	$(GO) test -run '^$$' -bench 'Capacity' -benchtime 3x -timeout 60m ./chunkstore

clean:
	$(GO) clean -testcache
