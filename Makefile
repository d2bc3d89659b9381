# idstream — make targets. README.md documents them; .ci/run calls `make deps` then `make test`.
GO        ?= go
BIN       := bin/idstream
DATA_DIR  ?= .data
PKGS      := ./...
# Tesseract is 10x faster single-threaded on 2 cores (PLATFORM.md).
export OMP_THREAD_LIMIT := 1

# Fuzz targets run by `make test` (package:target:budget), on top of their committed seed
# corpora (which plain `go test` already runs). Budgets are execution counts, about 5-8 s of
# fuzzing each on 2 cores: a duration budget (-fuzztime 8s) sometimes fails with a bare
# "context deadline exceeded" and no failing input under CPU contention, a race in Go's fuzz
# coordinator at the deadline (go.dev/issue/75804, fixed in Go 1.27); a count has no
# deadline. FUZZTIME (e.g. FUZZTIME=10m) replaces every budget for longer runs by hand.
FUZZTIME  ?=
FUZZ      := ./schemas:FuzzDecode:50000x ./internal/tlv:FuzzTLV:200000x \
             ./internal/mrtd:FuzzParseSOD:400x ./internal/mrtd:FuzzParseDG15:300000x \
             ./internal/mrz:FuzzParse:50000x ./internal/lds:FuzzParseDG1:300000x \
             ./internal/lds:FuzzParseDG2:10000x ./internal/lds:FuzzParseDG13:300000x \
             ./internal/lds:FuzzParseDG14:300000x ./internal/imagecheck:FuzzInspect:200000x \
             ./internal/imagemeta:FuzzRead:600000x ./internal/libjpeg:FuzzDecode:300000x

.PHONY: all deps deps-run build run test sdk sdk-check fuzz bench bench-e2e chaos eval lint clean

all: build

## deps: install missing Debian packages and Go modules, and build the test tools (the S3
## server and helm) (idempotent; sudo when not root)
deps:
	./deploy/deps.sh

## deps-run: what running needs, without the test tools
deps-run:
	IDSTREAM_SKIP_TEST_TOOLS=1 ./deploy/deps.sh

## build: the single binary bin/idstream
build:
	$(GO) build -o $(BIN) ./cmd/idstream

## run: the whole service in one process on an embedded broker, data under $(DATA_DIR)
run: deps-run build
	./$(BIN) dev --data-dir $(DATA_DIR)

## test: the full test suite (what CI runs): the web SDK's type check, unit tests and bundle
## freshness, every package's tests (the hosted capture page's among them, in headless
## Chromium), then each fuzz target briefly
test: sdk-check
	$(GO) test -count=1 -timeout 45m $(PKGS)
	$(MAKE) --no-print-directory fuzz

## sdk: build the web SDK (sdk/web: dist/ for npm, and the bundles the edge embeds under
## edge/pages/assets, which are committed)
sdk:
	cd sdk/web && { [ -d node_modules ] || npm ci --no-audit --no-fund; } && npm run build

## sdk-check: type-check the web SDK, run its unit tests, and fail if the embedded bundles are
## older than its sources
sdk-check:
	@[ -d sdk/web/node_modules ] || { echo "sdk/web/node_modules missing: run make deps (npm ci)"; exit 1; }
	cd sdk/web && npm run --silent check

## fuzz: run each fuzz target for its budget, or FUZZTIME (no panic, bounded allocation)
fuzz:
	@set -e; for t in $(FUZZ); do pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; budget=$${rest#*:}; \
	  [ -z "$(FUZZTIME)" ] || budget=$(FUZZTIME); \
	  echo "fuzz $$pkg $$name ($$budget)"; \
	  $(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $$budget $$pkg > /tmp/idstream-fuzz.log 2>&1 || { cat /tmp/idstream-fuzz.log; exit 1; }; \
	done; echo "fuzz: $(words $(FUZZ)) targets passed"

## bench: the benchmarks, with figures a reader can compare. Each vision processor's
## BenchmarkHandler (processors/{quality,ocr,liveness,facematch,chip}) reports p50-ms and
## p99-ms per call and cpu-ms/img (internal/benchmetrics); cmd/idstream's
## BenchmarkQualityGateAnswer the gate's answer time through edge + Kafka (1600×1200 JPEG).
bench:
	OMP_THREAD_LIMIT=1 $(GO) test -run '^$$' -bench . -benchtime 2s -timeout 30m ./stream/... ./processors/... ./schemas/... ./internal/... ./sinks/... ./consent/... ./cmd/...

## bench-e2e: whole verification sessions through `idstream dev` (started on its own data dir
## and ports, stopped after) by `idstream bench` from a separate process: sessions/s, gate and
## decision latencies, CPU per session by group, the compute limit; BENCH_FLOW,
## BENCH_SESSIONS, BENCH_LEVELS or BENCH_RATES (deploy/bench-e2e.sh). JSON and latency.png in
## .data/bench-e2e/report.
bench-e2e: build
	./deploy/bench-e2e.sh

## chaos: the production shape as separate processes (broker, edge, consent, every group and
## sink twice, ClickHouse, a webhook receiver) under SIGKILLs every 10-20 s, broker restarts,
## ClickHouse and receiver outages, for CHAOS_DURATION; then the invariants of exactly-once,
## each with its count (idstream chaos). Logs and report.json in $(DATA_DIR)/chaos.
CHAOS_DURATION ?= 10m
chaos: build
	./$(BIN) chaos --dir $(DATA_DIR)/chaos --corpus $(DATA_DIR)/chaos-corpus --duration $(CHAOS_DURATION)

## eval: build the evaluation corpus (internal/docgen's independent documents, the face
## corpus of models/faces) and print the held-out figures (idstream eval); report, JSON and
## PNG plots in $(EVAL_DIR)/report. EVAL_N documents per type and split.
EVAL_DIR  ?= $(DATA_DIR)/eval
EVAL_N    ?= 12
eval: build
	./$(BIN) eval --corpus $(EVAL_DIR)/corpus --build $(EVAL_N) --out $(EVAL_DIR)/report

## lint: go vet and gofmt
lint:
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin
