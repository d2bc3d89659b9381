# idstream — make targets. README.md documents them; .ci/run calls `make deps` then `make test`.
GO        ?= go
BIN       := bin/idstream
DATA_DIR  ?= .data
PKGS      := ./...
# Tesseract is 10x faster single-threaded on 2 cores (PLATFORM.md).
export OMP_THREAD_LIMIT := 1

.PHONY: all deps build run test bench lint clean

all: build

## deps: install missing Debian packages and Go modules (idempotent; sudo when not root)
deps:
	./deploy/deps.sh

## build: the single binary bin/idstream
build:
	$(GO) build -o $(BIN) ./cmd/idstream

## run: the whole service in one process on an embedded broker, data under $(DATA_DIR)
run: deps build
	./$(BIN) dev --data-dir $(DATA_DIR)

## test: the full test suite (what CI runs)
test:
	$(GO) test -count=1 -timeout 45m $(PKGS)

## bench: the benchmarks, with figures a reader can compare
bench:
	$(GO) test -run '^$$' -bench . -benchtime 2s -timeout 30m ./processors/... ./schemas/... ./internal/... ./cmd/...

## lint: go vet and gofmt
lint:
	$(GO) vet $(PKGS)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

clean:
	rm -rf bin
