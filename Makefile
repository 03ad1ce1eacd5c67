# trajcompress — see README.md.
GO       ?= go
BIN      := bin/trajcompress
# Packages that start goroutines or are shared across them: tested with -race.
RACE_PKGS := ./pipeline/... ./cmd/... ./tokenize/... ./summary/...

.PHONY: all build demo test test-go test-node vet fmt-check fuzz bench clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/trajcompress

# Compress the bundled example and show what happened.
demo: build
	@rm -rf bin/demo && mkdir -p bin/demo
	./$(BIN) compress --input fixtures/demo/agent_runs.jsonl --output bin/demo/agent_runs_compressed.jsonl \
		--config fixtures/demo/trajectory_compression.yaml --outcomes bin/demo/outcomes.jsonl; \
		rc=$$?; test $$rc -eq 0 -o $$rc -eq 3 || exit $$rc
	@echo; echo "== bin/demo/agent_runs_compressed_metrics.json (outcomes section)"
	@sed -n '/"outcomes"/,/^  }/p' bin/demo/agent_runs_compressed_metrics.json

test: fmt-check vet test-go test-node

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

test-go:
	$(GO) test -race -short $(RACE_PKGS)
	$(GO) test ./...

# Reads our Parquet/Arrow output with readers nobody here wrote (npm
# hyparquet, apache-arrow); skipped with a message when node is absent.
test-node:
	@if [ -x format/testdata/node/verify.sh ]; then format/testdata/node/verify.sh; fi

fuzz:
	$(GO) test ./traj -run XXX -fuzz FuzzRoundTrip -fuzztime 30s
	$(GO) test ./snap -run XXX -fuzz FuzzCompute -fuzztime 30s

bench:
	@echo "see bench/README.md"

clean:
	rm -rf bin
